"""Homework: release of starters, solutions and starters in step, and the self-checks."""

import ast
import contextlib
import copy
import io
import json
import pathlib
import re

import numpy as np
import pytest

from kernelcourse.homework import _reference as ref
from kernelcourse.homework import check
from kernelcourse.homework.__main__ import main as cli_main
from kernelcourse.homework.release import (
    CODE_STUB,
    RAISES_TAG,
    TEXT_STUB,
    region_lines,
    release,
    release_notebook,
)

ROOT = pathlib.Path(__file__).resolve().parents[1]
SOLUTION_DIR = ROOT / "book" / "homework" / "solutions"
STARTER_DIR = ROOT / "book" / "homework"
SOLUTIONS = sorted(SOLUTION_DIR.glob("*.ipynb"))
CHECK_CALL = re.compile(r"check\.(hw\d)\.(q\d)\((\w+)\)")


def _load(path):
    nb = json.loads(pathlib.Path(path).read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        cell["source"] = "".join(cell["source"])
    return nb


def _ids(paths):
    return [p.stem for p in paths]


# -- release on small synthetic notebooks -----------------------------------------------------
def _cell(kind, source, nbgrader=None, **meta):
    cell = {"cell_type": kind, "metadata": dict(meta), "source": source}
    if kind == "code":
        cell.update(outputs=[{"output_type": "stream", "name": "stdout", "text": "x"}])
        cell["execution_count"] = 3
    if nbgrader is not None:
        cell["metadata"]["nbgrader"] = {
            "grade": False,
            "solution": False,
            "locked": False,
            "schema_version": 3,
            **nbgrader,
        }
    return cell


def _nb(*cells):
    return {"cells": list(cells), "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


SOLUTION_CELL = _cell(
    "code",
    "def f(x):\n    y = 2 * x\n    ### BEGIN SOLUTION\n    return y + 1\n    ### END SOLUTION",
    {"solution": True, "grade_id": "f"},
)
TEST_CELL = _cell(
    "code",
    "assert f(1) == 3\n### BEGIN HIDDEN TESTS\nassert f(2) == 5\n### END HIDDEN TESTS",
    {"grade": True, "locked": True, "grade_id": "f-tests", "points": 2},
)


def test_release_replaces_solution_region_with_indented_stub():
    out = release_notebook(_nb(SOLUTION_CELL))
    stub = "\n".join("    " + line for line in CODE_STUB.split("\n"))
    assert out["cells"][0]["source"] == "def f(x):\n    y = 2 * x\n" + stub
    assert "return y + 1" not in out["cells"][0]["source"]


def test_release_removes_hidden_tests_and_keeps_visible_ones():
    out = release_notebook(_nb(SOLUTION_CELL, TEST_CELL))
    assert out["cells"][1]["source"] == "assert f(1) == 3"


def test_release_clears_outputs_and_keeps_nbgrader_metadata():
    nb = _nb(SOLUTION_CELL, TEST_CELL)
    out = release_notebook(nb)
    for old, new in zip(nb["cells"], out["cells"], strict=True):
        assert new["outputs"] == [] and new["execution_count"] is None
        assert new["metadata"]["nbgrader"] == old["metadata"]["nbgrader"]
    assert nb["cells"][0]["outputs"], "the input notebook must not be modified"


def test_release_replaces_markdown_answers():
    whole = _cell(
        "markdown",
        "The answer is 42.",
        {"solution": True, "grade": True, "grade_id": "w", "points": 1},
    )
    region = _cell(
        "markdown",
        "Keep this.\n### BEGIN SOLUTION\nsecret\n### END SOLUTION",
        {"solution": True, "grade": True, "grade_id": "w2", "points": 1},
    )
    out = release_notebook(_nb(whole, region))
    assert out["cells"][0]["source"] == TEXT_STUB
    assert out["cells"][1]["source"] == "Keep this.\n" + TEXT_STUB


def test_release_tags_exactly_the_cells_that_reach_a_stub():
    helper = _cell("code", "def g(x):\n    return f(x) * 2\n\ndef h(x):\n    return x")
    uses_helper = _cell("code", "print(g(3))")
    unrelated = _cell("code", "print(h(3))")
    top_level = _cell(
        "code", "### BEGIN SOLUTION\nz = 1\n### END SOLUTION", {"solution": True, "grade_id": "z"}
    )
    out = release_notebook(_nb(SOLUTION_CELL, TEST_CELL, helper, uses_helper, unrelated, top_level))
    tagged = [RAISES_TAG in c["metadata"].get("tags", []) for c in out["cells"]]
    assert tagged == [False, True, False, True, False, True]


def test_release_rejects_a_layout_that_would_raise_name_error():
    compute = _cell("code", "value = f(1)")
    later = _cell("code", "print(value)")
    with pytest.raises(ValueError, match="cell 2 reads 'value'.*cell 1"):
        release_notebook(_nb(SOLUTION_CELL, compute, later))
    reassigned = _cell("code", "value = 0\nprint(value)")
    release_notebook(_nb(SOLUTION_CELL, compute, reassigned))  # defined again: fine


@pytest.mark.parametrize(
    "nb, message",
    [
        (_nb(_cell("code", "### BEGIN SOLUTION\nx = 1\n### END SOLUTION")), "not a solution"),
        (_nb(_cell("code", "### BEGIN HIDDEN TESTS\n### END HIDDEN TESTS")), "not a graded"),
        (
            _nb(_cell("code", "### BEGIN SOLUTION\nx = 1", {"solution": True, "grade_id": "a"})),
            "without a matching",
        ),
        (
            _nb(
                _cell("code", "x = 1", {"solution": True, "grade_id": "a"}),
                _cell("code", "y = 1", {"solution": True, "grade_id": "a"}),
            ),
            "used twice",
        ),
        (_nb(_cell("code", "x = 1", {"grade": True, "grade_id": "a"})), "points"),
        (_nb(_cell("markdown", "x", {"solution": True, "grade_id": "a"})), "grade and solution"),
        (_nb(_cell("code", "x = 1", {"solution": True, "grade_id": ""})), "empty"),
    ],
)
def test_release_rejects_inconsistent_notebooks(nb, message):
    with pytest.raises(ValueError, match=message):
        release_notebook(nb)


def test_release_is_idempotent_and_check_mode_writes_nothing(tmp_path):
    source, dest = tmp_path / "solutions", tmp_path / "starters"
    source.mkdir()
    for path in SOLUTIONS[:2]:
        (source / path.name).write_bytes(path.read_bytes())
    assert len(release(source, dest, check=True)) == 2
    assert not dest.exists()
    written = release(source, dest)
    first = {p.name: p.read_bytes() for p in written}
    assert release(source, dest) == []
    assert {p.name: p.read_bytes() for p in dest.glob("*.ipynb")} == first
    assert cli_main(["release", "--source", str(source), "--dest", str(dest), "--check"]) == 0
    (dest / SOLUTIONS[0].name).write_text("{}")
    assert cli_main(["release", "--source", str(source), "--dest", str(dest), "--check"]) == 1


# -- the repository's assignments -------------------------------------------------------------
def test_there_are_five_assignments_with_starters():
    assert len(SOLUTIONS) >= 5
    for path in SOLUTIONS:
        assert (STARTER_DIR / path.name).exists(), f"no starter for {path.name}; run make homework"


def test_every_starter_equals_a_fresh_release():
    stale = release(SOLUTION_DIR, STARTER_DIR, check=True)
    assert stale == [], f"starters out of date (run make homework): {[p.name for p in stale]}"


@pytest.mark.parametrize("path", SOLUTIONS, ids=_ids(SOLUTIONS))
def test_starter_holds_no_solution_or_hidden_test_text(path):
    solution = _load(path)
    starter_text = (STARTER_DIR / path.name).read_text(encoding="utf-8")
    assert "BEGIN SOLUTION" not in starter_text and "HIDDEN TESTS" not in starter_text
    starter = _load(STARTER_DIR / path.name)
    public = "\n".join(c["source"] for c in starter["cells"])
    outside = "\n".join(
        line
        for c in solution["cells"]
        if not c["metadata"].get("nbgrader", {}).get("solution")
        and not c["metadata"].get("nbgrader", {}).get("grade")
        for line in c["source"].splitlines()
    )
    secret = [
        line.strip()
        for c in solution["cells"]
        for line in region_lines(c["source"])
        if len(line.strip()) > 12 and line.strip() not in outside
    ]
    answers = [
        c["source"]
        for c in solution["cells"]
        if c["cell_type"] == "markdown" and c["metadata"].get("nbgrader", {}).get("solution")
    ]
    assert secret, "a solution notebook without solution regions"
    for line in secret:
        assert line not in public, f"solution text leaked into the starter: {line!r}"
    for answer in answers:
        assert answer[:60] not in public


@pytest.mark.parametrize("path", SOLUTIONS, ids=_ids(SOLUTIONS))
def test_starter_has_no_outputs_and_graded_cells_are_tagged(path):
    starter = _load(STARTER_DIR / path.name)
    solution = _load(path)
    assert [c.get("id") for c in starter["cells"]] == [c.get("id") for c in solution["cells"]]
    for cell in starter["cells"]:
        if cell["cell_type"] != "code":
            continue
        assert cell["outputs"] == [] and cell["execution_count"] is None
        meta = cell["metadata"].get("nbgrader", {})
        if meta.get("grade"):
            assert RAISES_TAG in cell["metadata"].get("tags", []), (
                f"test cell {meta['grade_id']} calls a stub but is not tagged"
            )


def _run_cells(nb):
    """Execute the code cells in one namespace; return {cell index: exception or None}."""
    namespace = {"__name__": "__homework__"}
    outcome = {}
    for index, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "code":
            continue
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                exec(compile(cell["source"], f"cell {index}", "exec"), namespace)
        except Exception as err:  # recorded here, checked by the caller
            outcome[index] = err
        else:
            outcome[index] = None
    return outcome


@pytest.mark.parametrize("path", SOLUTIONS, ids=_ids(SOLUTIONS))
def test_starter_fails_only_at_its_stubs(path):
    """Run top to bottom, a starter raises NotImplementedError in its tagged cells and nowhere
    else (nbval over the book checks the same in a kernel, without the exception type)."""
    starter = _load(STARTER_DIR / path.name)
    outcome = _run_cells(starter)
    for index, err in outcome.items():
        tagged = RAISES_TAG in starter["cells"][index]["metadata"].get("tags", [])
        if tagged:
            assert isinstance(err, NotImplementedError), f"cell {index}: expected the stub, {err!r}"
        else:
            assert err is None, f"untagged cell {index} raised {err!r}"
    assert any(outcome.values())


# -- self-checks -------------------------------------------------------------------------------
def _solution_functions(path):
    """The functions the solution notebook defines in its solution cells (plus its imports)."""
    nb = _load(path)
    namespace = {}
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        tree = ast.parse(cell["source"])
        keep = [
            s for s in tree.body if isinstance(s, ast.Import | ast.ImportFrom | ast.FunctionDef)
        ]
        exec(compile(ast.Module(body=keep, type_ignores=[]), str(path), "exec"), namespace)
    return namespace


def _check_calls():
    calls = []
    for path in SOLUTIONS:
        for cell in _load(path)["cells"]:
            calls.extend((path, *m) for m in CHECK_CALL.findall(cell["source"]))
    return calls


CALLS = _check_calls()


def test_every_self_check_is_used_by_an_assignment():
    used = {(hw, q) for _, hw, q, _ in CALLS}
    defined = {
        (hw, q) for hw in check.__all__ for q in getattr(check, hw).__all__ if q.startswith("q")
    }
    assert used == defined


@pytest.mark.parametrize("path, hw, q, name", CALLS, ids=[f"{hw}.{q}" for _, hw, q, _ in CALLS])
@pytest.mark.parametrize("seed", [0, None])
def test_self_check_passes_on_the_solution(path, hw, q, name, seed, capsys):
    fn = _solution_functions(path)[name]
    assert getattr(getattr(check, hw), q)(fn, seed=seed) is None
    out = capsys.readouterr().out
    assert "[FAIL]" not in out and out.count("[pass]") >= 1
    assert "passed" in out.splitlines()[-1]


def _wrong_smo(K, y, C):
    alpha = np.zeros(len(y))
    for i, j in [(0, 1), (2, 3)]:
        alpha = ref.smo_step(alpha, K, y, C, i, j)
    return alpha


def _unclipped_step(alpha, K, y, C, i, j):
    alpha = np.array(alpha, dtype=float)
    g = 1.0 - y * (K @ (alpha * y))
    t = (y[i] * g[i] - y[j] * g[j]) / (K[i, i] + K[j, j] - 2 * K[i, j])
    alpha[i] += y[i] * t
    alpha[j] -= y[j] * t
    return alpha


def _poly2_without_sqrt2(X):
    n, d = X.shape
    i, j = np.triu_indices(d, k=1)
    return np.hstack([X**2, X[:, i] * X[:, j], X, np.ones((n, 1))])


WRONG = {
    ("hw1", "q1"): (lambda K: bool(np.linalg.eigvalsh(K)[0] >= -1e-10), "symmetric"),
    ("hw1", "q2"): (_poly2_without_sqrt2, "√2"),
    ("hw1", "q3"): (lambda F1, F2: np.kron(F1, F2), "outer product"),
    ("hw2", "q1"): (lambda P, y, lam: np.linalg.solve(P.T @ P, P.T @ y), "ΦᵀΦ + λI"),
    ("hw2", "q2"): (lambda P, y, lam: np.linalg.solve(P @ P.T + lam * np.eye(len(P)), y), "Φᵀα"),
    ("hw2", "q4"): (lambda K, y, lam, Kt: Kt @ np.linalg.solve(K + np.eye(len(K)), y), "α ="),
    ("hw3", "q2"): (lambda d, D, g, rng: rng.standard_cauchy(size=(D, d)), "scale γ"),
    ("hw3", "q3"): (lambda X, O, b: np.cos(X @ O.T + b), "√(2/D)"),
    ("hw3", "q4"): (lambda a, delta: int(8 * np.log(2 / delta) / a**2), "math.ceil"),
    ("hw4", "q1"): (lambda a, K, y: float(a.sum() - (a * y) @ K @ (a * y)), "the ½"),
    ("hw4", "q2"): (_unclipped_step, "clip t"),
    ("hw4", "q3"): (_wrong_smo, "most violating pair"),
    ("hw4", "q4"): (lambda a, K, y, C: float(np.mean(y - K @ (a * y))), "free support"),
    ("hw5", "q1"): (
        lambda Knm, Kmm, r: ref.nystroem_features(Knm, Kmm, len(Kmm))[:, -r:],
        "last r",
    ),
    ("hw5", "q2"): (
        lambda X, D, g, rng: (
            np.sqrt(2 / D)
            * np.cos(
                X @ rng.normal(scale=np.sqrt(g), size=(X.shape[1], D)) + rng.uniform(0, 6.28, D)
            )
        ),
        "2 * gamma",
    ),
    ("hw5", "q3"): (lambda K, Z: float(np.linalg.norm(K - Z @ Z.T) / np.linalg.norm(K)), "'fro'"),
}


def test_every_self_check_has_a_wrong_answer_test():
    assert set(WRONG) == {(hw, q) for _, hw, q, _ in CALLS}


@pytest.mark.parametrize("key", sorted(WRONG), ids=[f"{hw}.{q}" for hw, q in sorted(WRONG)])
def test_self_check_fails_helpfully_on_a_wrong_answer(key, capsys):
    hw, q = key
    fn, hint = WRONG[key]
    with pytest.raises(AssertionError, match=rf"{hw}\.{q}: \d+ of \d+ checks failed"):
        getattr(getattr(check, hw), q)(fn, seed=0)
    out = capsys.readouterr().out
    assert "[FAIL]" in out and "hint:" in out
    assert hint in out, f"expected the hint to mention {hint!r}:\n{out}"


def test_self_check_passes_stubs_through_and_wants_a_function():
    def stub(*args):
        raise NotImplementedError()

    with pytest.raises(NotImplementedError):
        check.hw1.q1(stub)
    with pytest.raises(TypeError, match="pass the function itself"):
        check.hw1.q1(np.eye(2))


def test_self_check_reports_crashes_as_failures(capsys):
    def crashes(K, tol=1e-10):
        raise ValueError("boom")

    with pytest.raises(AssertionError):
        check.hw1.q1(crashes, seed=0)
    assert "raised ValueError: boom" in capsys.readouterr().out


# -- reference implementations -----------------------------------------------------------------
def test_reference_smo_step_is_the_best_point_on_its_line():
    rng = np.random.default_rng(0)
    X, y, K = check.hw4.toy_problem(rng, n=10)
    C = 0.8
    alpha = check.hw4._feasible_alpha(rng, y, C)
    for i, j in [(0, 1), (2, 5), (3, 4)]:
        new = ref.smo_step(alpha, K, y, C, i, j)
        best = -np.inf
        for t in np.linspace(-C, C, 4001):  # brute force over the feasible segment
            cand = alpha.copy()
            cand[i] += y[i] * t
            cand[j] -= y[j] * t
            if cand.min() >= 0 and cand.max() <= C:
                best = max(best, ref.svm_dual_objective(cand, K, y))
        assert ref.svm_dual_objective(new, K, y) >= best - 1e-9


def test_reference_svm_solution_satisfies_kkt():
    rng = np.random.default_rng(1)
    X, y, K = check.hw4.toy_problem(rng, n=30)
    alpha, b = ref.svm_dual_solution(K, y, 1.0)
    from sklearn.svm import SVC

    libsvm = SVC(C=1.0, kernel="precomputed", tol=1e-8).fit(K, y)
    alpha_libsvm = np.zeros(30)
    alpha_libsvm[libsvm.support_] = np.abs(libsvm.dual_coef_[0])
    np.testing.assert_allclose(
        ref.svm_dual_objective(alpha, K, y), ref.svm_dual_objective(alpha_libsvm, K, y), rtol=1e-7
    )
    margin = y * (K @ (alpha * y) + b)
    assert np.all(margin[alpha < 1e-8] >= 1 - 1e-4)
    assert np.all(margin[alpha > 1 - 1e-8] <= 1 + 1e-4)
    assert abs(ref.svm_intercept(alpha, K, y, 1.0) - b) < 1e-4
    with pytest.raises(ValueError, match="free support vector"):
        ref.svm_intercept(np.zeros(30), K, y, 1.0)


def test_reference_ridge_forms_and_nystroem():
    rng = np.random.default_rng(2)
    Phi, y = rng.normal(size=(7, 11)), rng.normal(size=7)
    np.testing.assert_allclose(ref.ridge_primal(Phi, y, 0.4), ref.ridge_dual(Phi, y, 0.4))
    np.testing.assert_allclose(
        ref.kernel_ridge_predict(Phi @ Phi.T, y, 0.4, Phi[:3] @ Phi.T),
        Phi[:3] @ ref.ridge_primal(Phi, y, 0.4),
    )
    K_mm = Phi[:5] @ Phi[:5].T
    Z = ref.nystroem_features(Phi @ Phi[:5].T, K_mm, 5)
    np.testing.assert_allclose(Z[:5] @ Z[:5].T, K_mm, atol=1e-10)
    assert ref.relative_spectral_error(K_mm, Z[:5]) < 1e-12


def test_release_notebook_does_not_touch_its_input():
    nb = _load(SOLUTIONS[0])
    before = copy.deepcopy(nb)
    release_notebook(nb)
    assert nb == before
