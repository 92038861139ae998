"""A student outside the repository: one downloaded chapter, one ``pip install``, Jupyter.

The book's intro tells students to install the package with its ``notebooks`` extra and to
download a chapter from its page. These tests do exactly that with a wheel built from this
checkout, in a fresh virtual environment that shares nothing with the project's: the chapter
must run top to bottom in an empty folder, and a chapter that needs data must stop within
seconds with the loaders' message when there is neither data nor network.

The virtual environment is built once per session (about a minute, from the pip cache once
warm); it needs the package registry, as ``make test`` itself does.
"""

import json
import os
import pathlib
import shutil
import subprocess
import sys
import time

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
BOOK = ROOT / "book"


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
