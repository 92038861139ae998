"""The package's doctests compare numbers by the rule the notebooks use: to printed precision.

``make doctest`` runs ``pytest --doctest-modules kernelcourse -p tests.doctest_plugin``. These
tests run doctests whose printed numbers are off by up to one unit of the last digit or more,
and check that they pass or fail as :func:`outputs_match` says.
"""

import os
import pathlib
import subprocess
import sys

import pytest

from kernelcourse.book.notebooks import outputs_match

ROOT = pathlib.Path(__file__).resolve().parents[1]

# (stored, computed): the doctest expects ``stored`` and the code prints ``computed``.
CASES = [
    ("0.84", "0.84"),
    ("0.84", "0.85"),
    ("0.84", "0.86"),
    ("0.1718", "0.1719"),
    ("0.1718", "0.1720"),
    ("3.0", "3.1"),
    ("3.0", "2.8"),
    ("-0.02", "-0.03"),
    ("-0.02", "0.01"),
    ("7.4e-23", "7.5e-23"),
    ("7.4e-23", "7.6e-23"),
    ("[1.    0.607]", "[1.    0.608]"),
    ("(300, 60) True", "(300, 61) True"),
    ("shape (300, 60)", "shape  (300, 60)"),
    ("RBF(gamma=0.25)", "RBF(gamma=0.5)"),
]


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory):
    folder = tmp_path_factory.mktemp("doctest_rule")
    body = []
    for i, (stored, computed) in enumerate(CASES):
        body.append(
            f'def case_{i}():\n    """\n    >>> print("{computed}")\n    {stored}\n    """\n'
        )
    (folder / "cases.py").write_text("\n\n".join(body))
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "--doctest-modules", str(folder / "cases.py"),
         "-c", str(ROOT / "pyproject.toml"), "--rootdir", str(folder), "-p", "no:cacheprovider",
         "-p", "no:xdist", "-p", "tests.doctest_plugin", "-rA", "-q"],
        capture_output=True, text=True, cwd=folder,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), *sys.path])},
    )  # fmt: skip
    out = {}
    for line in result.stdout.splitlines():
        for word in ("PASSED", "FAILED"):
            if line.startswith(word) and "case_" in line:
                out[int(line.rsplit("case_", 1)[1].split()[0])] = word == "PASSED"
    assert len(out) == len(CASES), result.stdout + result.stderr
    return out


@pytest.mark.parametrize("i", range(len(CASES)))
def test_doctest_agrees_with_the_notebook_rule(verdicts, i):
    stored, computed = CASES[i]
    assert verdicts[i] == outputs_match(stored, computed), (stored, computed)


def test_the_rule_is_not_vacuous(verdicts):
    assert any(verdicts.values()) and not all(verdicts.values())
