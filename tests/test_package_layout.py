"""The library stays apart from the book: light to import, usable without the book's tools."""

import importlib
import importlib.util
import pathlib
import pkgutil
import subprocess
import sys

import kernelcourse

LIBRARY = [
    "kernelcourse.bounds",
    "kernelcourse.datasets",
    "kernelcourse.devices",
    "kernelcourse.distributed",
    "kernelcourse.features",
    "kernelcourse.kernels",
    "kernelcourse.ridge",
    "kernelcourse.rkhs",
    "kernelcourse.scale",
    "kernelcourse.sgd",
    "kernelcourse.spectral",
    "kernelcourse.strings",
    "kernelcourse.svm",
    "kernelcourse.homework",
]
BOOK_ONLY = ("matplotlib", "pandas", "nbformat", "nbclient", "IPython")


def _run(code):
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_import_kernelcourse_imports_no_submodule():
    out = _run(
        "import sys, kernelcourse\n"
        "print(sorted(m for m in sys.modules if m.startswith('kernelcourse.')))"
    )
    assert out.strip() == "[]"


def test_top_level_lists_every_public_module():
    found = {
        name
        for _, name, _ in pkgutil.iter_modules(kernelcourse.__path__)
        if not name.startswith("_") and name not in ("book", "homework", "benchmark_results")
    }
    assert found == set(kernelcourse.__all__)
    for name in kernelcourse.__all__:
        assert f"``{name}``" in kernelcourse.__doc__
    assert "``book``" in kernelcourse.__doc__ and "``homework``" in kernelcourse.__doc__


def test_library_imports_without_the_book_tools():
    """Every library module imports, and imports none of the book's tools, when they are absent.

    A finder that refuses matplotlib, pandas, nbformat, nbclient and IPython stands in for an
    environment without them (scikit-learn itself treats pandas as optional). One process
    imports them all: any module that needed a refused package would fail to import.
    """
    code = f"""
import sys
BLOCKED = {BOOK_ONLY!r}
class Refuse:
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
sys.meta_path.insert(0, Refuse())
try:
    import matplotlib
except ModuleNotFoundError:
    print("refused")
import importlib
for module in {LIBRARY!r}:
    importlib.import_module(module)
print(sorted({{m.split('.')[0] for m in sys.modules}} & set(BLOCKED)))
print(sorted(m for m in sys.modules if m.startswith('kernelcourse.book')))
"""
    assert _run(code).split() == ["refused", "[]", "[]"]


def test_estimators_fit_without_the_book_tools():
    code = """
import sys
class Refuse:
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in ('matplotlib', 'pandas', 'nbformat', 'IPython'):
            raise ModuleNotFoundError(name, name=name)
sys.meta_path.insert(0, Refuse())
import numpy as np
from kernelcourse.features import RandomFourierFeatures
from kernelcourse.ridge import FeatureRidge, KernelRidge
rng = np.random.default_rng(0)
X = rng.normal(size=(40, 3)); y = np.sin(X[:, 0])
KernelRidge(gamma=0.5, lam=0.1).fit(X, y).predict(X)
rff = RandomFourierFeatures(gamma=0.5, n_components=20, random_state=0)
FeatureRidge(rff, lam=0.1).fit(X, y).predict(X)
print("ok")
"""
    assert _run(code).strip() == "ok"


def test_book_machinery_lives_in_its_subpackage():
    package = pathlib.Path(kernelcourse.__file__).parent
    for name in ("plotting", "report", "notebooks"):
        assert importlib.util.find_spec(f"kernelcourse.book.{name}") is not None
        assert not (package / f"{name}.py").exists()


def test_api_reference_has_a_page_for_every_module():
    """book/api/NAME.md renders kernelcourse.NAME from its __all__, and the toc lists it."""
    root = pathlib.Path(__file__).resolve().parents[1]
    toc = (root / "_toc.yml").read_text()
    for name in kernelcourse.__all__:
        page = root / "book" / "api" / f"{name}.md"
        assert page.is_file(), f"no API reference page for kernelcourse.{name}"
        assert f"```{{api-module}} kernelcourse.{name}\n```" in page.read_text()
        assert f"file: book/api/{name}\n" in toc
        module = importlib.import_module(f"kernelcourse.{name}")
        assert module.__all__, f"kernelcourse.{name} has no __all__"
