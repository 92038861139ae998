"""A student outside the repository: one downloaded chapter, one ``pip install``, Jupyter.

The book's intro tells students to install the package with its ``notebooks`` extra and to
download a chapter from its page. These tests do exactly that with a wheel built from this
checkout, in a fresh virtual environment that shares nothing with the project's: the chapter
must run top to bottom in an empty folder, and a chapter that needs data must stop within
seconds with the loaders' message when there is neither data nor network.

The virtual environment is built once per session (about a minute, from the pip cache once
warm); it needs the package registry, as ``make test`` itself does.  Without a virtual
environment, every chapter's imports (read from its code cells) are checked against what the
install line of the intro provides, so a chapter can never need a package the students lack.
"""

import ast
import importlib.metadata
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import time
import tomllib

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = pathlib.Path(__file__).resolve().parents[1]
BOOK = ROOT / "book"
# What a student runs: the chapters and the homework starters they download.
STUDENT_NOTEBOOKS = [
    *sorted(BOOK.glob("[0-9][0-9]_*.ipynb")),
    *sorted(BOOK.glob("homework/hw*.ipynb")),
]


# ------------------------------------------------------------------ imports against the install


def documented_extras():
    """The extras of the install line the intro gives students: pip install "kernelcourse[X]"."""
    intro = (BOOK / "intro.md").read_text(encoding="utf-8")
    found = re.findall(r'pip install "kernelcourse\[([\w,-]+)\]"', intro)
    assert found, "book/intro.md gives no `pip install \"kernelcourse[...]\"` line"
    return {canonicalize_name(e) for e in found[0].split(",")}


def notebook_imports(path):
    """Top-level names of the modules a notebook's code cells import."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    names = set()
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"])
        # IPython magics and shell escapes are not Python
        source = "\n".join("" if line.lstrip().startswith(("%", "!")) else line
                           for line in source.splitlines())  # fmt: skip
        for node in ast.walk(ast.parse(source, filename=str(path))):
            if isinstance(node, ast.Import):
                names |= {alias.name.partition(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names.add(node.module.partition(".")[0])
    return names


def installed_closure(requirements, extras=()):
    """Canonical names of the distributions that ``requirements`` (strings, with the
    ``extras`` active for markers) install, followed through the installed packages'
    own requirements."""
    seen, todo = set(), [(Requirement(r), set(extras)) for r in requirements]
    while todo:
        req, active = todo.pop()
        env = [{"extra": e} for e in active] or [{"extra": ""}]
        if req.marker is not None and not any(req.marker.evaluate(e) for e in env):
            continue
        name = canonicalize_name(req.name)
        key = (name, frozenset(req.extras))
        if key in seen:
            continue
        seen.add(key)
        try:
            nested = importlib.metadata.requires(req.name) or []
        except importlib.metadata.PackageNotFoundError:
            continue  # not installed here: its own requirements cannot be followed
        todo += [(Requirement(r), set(req.extras)) for r in nested]
    return {name for name, _ in seen}


def missing_modules(modules, provided, distributions):
    """Modules that are neither in the standard library nor this package and whose
    distribution (``distributions``: module -> distribution names) is not ``provided``."""
    missing = {}
    for module in sorted(modules):
        if module in sys.stdlib_module_names or module in ("kernelcourse", "__future__"):
            continue
        names = {canonicalize_name(d) for d in distributions.get(module, [])}
        if not names & provided:
            missing[module] = sorted(names) or ["(no installed distribution provides it)"]
    return missing


def test_every_chapter_imports_only_what_the_documented_install_provides():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = documented_extras()
    requirements = list(project["dependencies"])
    for extra in extras:
        requirements += project["optional-dependencies"][extra]
    provided = installed_closure(requirements)
    distributions = importlib.metadata.packages_distributions()
    assert STUDENT_NOTEBOOKS
    missing = {
        path.relative_to(ROOT).as_posix(): gap
        for path in STUDENT_NOTEBOOKS
        if (gap := missing_modules(notebook_imports(path), provided, distributions))
    }
    assert missing == {}, (
        f'`pip install "kernelcourse[{",".join(sorted(extras))}]"` does not provide: {missing}'
    )


def test_the_import_check_sees_a_package_the_install_lacks(tmp_path):
    nb = {
        "cells": [
            {"cell_type": "markdown", "source": ["import nothing_here"], "metadata": {}},
            {"cell_type": "code", "source": ["%matplotlib inline\n", "import os, numpy as np\n",
             "from array_api_strict import asarray\n", "from . import x\n"],
             "metadata": {}, "outputs": [], "execution_count": None},
        ],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5,
    }  # fmt: skip
    path = tmp_path / "chapter.ipynb"
    path.write_text(json.dumps(nb))
    modules = notebook_imports(path)
    assert modules == {"os", "numpy", "array_api_strict"}
    dists = {"numpy": ["numpy"], "array_api_strict": ["array_api_strict"]}
    assert missing_modules(modules, {"numpy"}, dists) == {"array_api_strict": ["array-api-strict"]}
    assert missing_modules(modules, {"numpy", "array-api-strict"}, dists) == {}
    # markers: an extra's requirement counts only when that extra is asked for
    assert "pytest" not in installed_closure(['pytest>=9; extra == "dev"'])
    assert "pytest" in installed_closure(['pytest>=9; extra == "dev"'], extras=["dev"])


# ------------------------------------------------------------------ a fresh environment


def _clean_env(**extra):
    """The environment a student's shell would have: nothing of this checkout's."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PYTHON", "VIRTUAL_ENV", "KERNELCOURSE", "MPLBACKEND", "JUPYTER"))
    }
    env.update(extra)
    return env


def _run(cmd, **kwargs):
    proc = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    if proc.returncode != 0:
        raise AssertionError(
            f"{' '.join(map(str, cmd))} failed ({proc.returncode}):\n"
            f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
        )
    return proc


@pytest.fixture(scope="session")
def student_venv(tmp_path_factory):
    """A fresh virtual environment with ``kernelcourse[notebooks]`` installed from a wheel."""
    base = tmp_path_factory.mktemp("student")
    dist = base / "dist"
    # Build from a copy holding only what git tracks, as a fresh clone would.
    src = base / "src"
    files = _run(["git", "ls-files", "-z"], cwd=ROOT).stdout.split("\0")
    for name in filter(None, files):
        target = src / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if (ROOT / name).is_file():
            shutil.copy2(ROOT / name, target)
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(src)],
         env=_clean_env(), timeout=600)
    (wheel,) = dist.glob("kernelcourse-*.whl")
    venv = base / "venv"
    _run([sys.executable, "-m", "venv", str(venv)], timeout=300)
    py = venv / "bin" / "python"
    _run([str(py), "-m", "pip", "install", "-q", f"{wheel}[notebooks]"],
         env=_clean_env(), timeout=900)
    return py


def test_wheel_has_no_book_tooling_and_ships_its_results(student_venv):
    probe = (
        "import importlib.util as u, kernelcourse.datasets as d;"
        "print(u.find_spec('sphinx') is None, u.find_spec('jupyter_book') is None,"
        " sorted(d.load_benchmark('scale_covertype')))"
    )
    out = _run([str(student_venv), "-c", probe], env=_clean_env(), cwd="/").stdout
    assert out.startswith("True True ") and "'runs'" in out


def _execute(py, chapter, folder, timeout, **env):
    shutil.copy2(BOOK / chapter, folder / chapter)
    start = time.perf_counter()
    script = (
        "import sys, nbformat; from nbclient import NotebookClient;"
        "from nbclient.exceptions import CellExecutionError;"
        f"nb = nbformat.read({chapter!r}, as_version=4);"
        f"c = NotebookClient(nb, timeout={timeout}, kernel_name='python3',"
        " resources={'metadata': {'path': '.'}});"
        "\ntry:\n    c.execute()\nexcept CellExecutionError as e:\n"
        "    print('CELL ERROR:', str(e)[-2000:]); sys.exit(3)\n"
    )
    proc = subprocess.run(
        [str(py), "-c", script], cwd=folder, capture_output=True, text=True,
        env=_clean_env(**env), timeout=timeout + 120,
    )
    return proc, time.perf_counter() - start


def test_downloaded_chapter_runs_in_an_empty_folder(student_venv, tmp_path):
    proc, _ = _execute(student_venv, "01_kernels_and_feature_maps.ipynb", tmp_path, 600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["01_kernels_and_feature_maps.ipynb"]


def test_scaling_chapter_runs_from_the_wheel(student_venv, tmp_path):
    """Chapter 11 needs the most of the install: array-api-strict arrays, a local Dask cluster
    and the full Covertype data set (from ``KERNELCOURSE_DATA`` where the test run has it, as
    a student's own copy; otherwise the loaders download it once)."""
    chapter = sorted(BOOK.glob("11_*.ipynb"))[0].name
    data = {k: os.environ[k] for k in ("KERNELCOURSE_DATA",) if k in os.environ}
    proc, _ = _execute(student_venv, chapter, tmp_path, 900, OMP_NUM_THREADS="1", **data)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]


def _first_data_chapter():
    for path in sorted(BOOK.glob("[0-9][0-9]_*.ipynb")):
        nb = json.loads(path.read_text(encoding="utf-8"))
        code = "".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
        if "load_adult" in code or "load_covertype" in code or "load_mnist" in code:
            return path.name
    pytest.fail("no chapter loads a data set")


def test_chapter_without_data_or_network_stops_quickly_with_the_loaders_message(
    student_venv, tmp_path
):
    empty = tmp_path / "no-data"
    empty.mkdir()
    chapter = _first_data_chapter()
    # No data: an empty KERNELCOURSE_DATA and cache. No network: every request goes to a
    # proxy on a closed loopback port, so it fails at once, as offline.
    proc, seconds = _execute(
        student_venv, chapter, tmp_path, 300,
        KERNELCOURSE_DATA=str(empty), XDG_CACHE_HOME=str(empty),
        http_proxy="http://127.0.0.1:9", https_proxy="http://127.0.0.1:9",
        HTTP_PROXY="http://127.0.0.1:9", HTTPS_PROXY="http://127.0.0.1:9",
    )
    assert proc.returncode == 3, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "DataUnavailableError" in proc.stdout and "KERNELCOURSE_DATA" in proc.stdout
    assert seconds < 120, f"{chapter} took {seconds:.0f} s to report missing data"
