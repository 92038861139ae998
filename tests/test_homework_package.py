"""A wheel of the package gives a student nothing that passes a graded check in their place.

The wheel holds neither a solution line nor a hidden-test line of any assignment (the grading
lives in the instructor's notebooks only). The wheel is built from a copy of the sources,
installed into a temporary folder, and
tests/homework_stand_ins.py runs there in a fresh interpreter (the checkout is not on its path):
for every graded stub, the best stand-ins from the installed package must fail their check, and
the stand-ins that compute the right answer must pass once the guard is switched off, so it is
the guard (the check of what the function calls), not a wrong answer, that fails them.
"""

import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import zipfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
SOLUTIONS = sorted((ROOT / "book" / "homework" / "solutions").glob("*.ipynb"))
CHECK_CALL = re.compile(r"check\.(hw\d+)\.(q\d)\(")
REGION = re.compile(r"### BEGIN (SOLUTION|HIDDEN TESTS)\n(.*?)### END \1", re.S)


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    shutil.copytree(
        ROOT / "kernelcourse", src / "kernelcourse", ignore=shutil.ignore_patterns("__pycache__")
    )
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run(
        [*pip, "wheel", "--no-deps", "-w", str(tmp / "dist"), str(src)],
        check=True,
        timeout=300,
    )
    (wheel,) = (tmp / "dist").glob("kernelcourse-*.whl")
    site = tmp / "site"
    subprocess.run(
        [*pip, "install", "--no-deps", "--no-index", "--target", str(site), str(wheel)],
        check=True,
        timeout=300,
    )
    return wheel, site


def test_wheel_holds_no_solution(installed):
    wheel, _ = installed
    names = zipfile.ZipFile(wheel).namelist()
    assert any(n.startswith("kernelcourse/homework/check/") for n in names)
    assert not [n for n in names if n.endswith(".ipynb")]
    assert not [n for n in names if re.search(r"_?reference|solution", n.split("/")[-1])]


def _normalise(line):
    """A code line without its comment and with runs of whitespace collapsed."""
    return " ".join(line.split("#", 1)[0].split())


def _secret_lines(path):
    """Lines only the instructor's notebook holds: solution and hidden-test regions."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    starter = ROOT / "book" / "homework" / path.name
    public = {
        _normalise(line)
        for cell in json.loads(starter.read_text(encoding="utf-8"))["cells"]
        for line in "".join(cell["source"]).splitlines()
    }
    secret = []
    for cell in cells:
        if cell["cell_type"] != "code":
            continue
        for _, body in REGION.findall("".join(cell["source"])):
            lines = [_normalise(line) for line in body.splitlines()]
            secret.append([line for line in lines if line and line not in public])
    return secret


def test_wheel_holds_no_solution_or_hidden_test_line(installed):
    """Every line of 40 characters or more, and every pair of consecutive lines, of a solution
    or hidden-test region is searched for in the installed package's files."""
    _, site = installed
    files = [p for p in (site / "kernelcourse").rglob("*") if p.is_file()]
    assert files
    text = "\n".join(
        _normalise(line)
        for p in files
        if p.suffix in (".py", ".txt", ".json", ".md", ".cfg", ".toml", "")
        for line in p.read_text(encoding="utf-8", errors="replace").splitlines()
    )
    searched = 0
    for path in SOLUTIONS:
        for lines in _secret_lines(path):
            probes = [line for line in lines if len(line) >= 40]
            probes += [
                f"{a}\n{b}" for a, b in zip(lines, lines[1:], strict=False) if len(a + b) >= 30
            ]
            for probe in probes:
                searched += 1
                assert probe not in text, f"{path.name}: the wheel holds {probe!r}"
    assert searched > 100


def test_no_installed_function_passes_a_graded_check(installed, tmp_path):
    _, site = installed
    env = {**os.environ, "PYTHONPATH": str(site), "OMP_NUM_THREADS": "2"}
    run = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "homework_stand_ins.py")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    report = json.loads(run.stdout)
    assert pathlib.Path(report["package"]).is_relative_to(site)
    graded = {
        ".".join(m)
        for path in SOLUTIONS
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]
        if cell["metadata"].get("nbgrader", {}).get("grade")
        for m in CHECK_CALL.findall("".join(cell["source"]))
    }
    assert {r["check"] for r in report["results"]} == graded
    for r in report["results"]:
        where = f"{r['check']} with {r['stand_in']}"
        assert not r["passed_with_guard"], f"{where} passed its check"
        assert r["guard_named_it"], f"{where} failed, but not because it called the package"
        if "passed_without_guard" in r:
            assert r["passed_without_guard"], f"{where} is not a correct answer:\n{r['output']}"


def test_no_check_says_what_the_grading_does():
    """What a student reads from a self-check (its messages, hints and docstrings) never
    describes the hidden tests: the grading lives in the instructor's notebooks only."""
    import ast

    said = []
    for path in sorted((ROOT / "kernelcourse" / "homework" / "check").glob("hw*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                text = node.value.lower()
                if "grader" in text or "hidden test" in text or "grading" in text:
                    said.append(f"{path.name}: {node.value[:80]!r}")
    assert said == []
