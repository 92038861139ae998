"""Homework: nbgrader releases, starters in step with solutions, and the self-checks."""

import ast
import contextlib
import io
import json
import keyword
import pathlib
import re
import subprocess
import sys
import textwrap
import tokenize

import numpy as np
import pytest

from kernelcourse.book.homework_release import (
    CODE_STUB,
    RAISES_TAG,
    TEXT_STUB,
    release,
    tag_raising_cells,
)
from kernelcourse.homework import check
from kernelcourse.homework.check._core import Fingerprint, PackageGuard

ROOT = pathlib.Path(__file__).resolve().parents[1]
SOLUTION_DIR = ROOT / "book" / "homework" / "solutions"
STARTER_DIR = ROOT / "book" / "homework"
SOLUTIONS = sorted(SOLUTION_DIR.glob("*.ipynb"))
CHECK_CALL = re.compile(r"check\.(hw\d+)\.(q\d)\((\w+)\)")
MARKERS = (
    "### BEGIN SOLUTION",
    "### END SOLUTION",
    "### BEGIN HIDDEN TESTS",
    "### END HIDDEN TESTS",
)


def _load(path):
    nb = json.loads(pathlib.Path(path).read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        cell["source"] = "".join(cell["source"])
    return nb


def _ids(paths):
    return [p.stem for p in paths]


def _nbgrader(cell):
    return cell["metadata"].get("nbgrader", {})


# -- tagging the cells that reach a stub (what nbgrader does not do) ---------------------------
def _cell(kind, source, **nbgrader):
    cell = {"cell_type": kind, "metadata": {}, "source": source}
    if nbgrader:
        cell["metadata"]["nbgrader"] = {"schema_version": 3, **nbgrader}
    return cell


def _nb(*cells):
    return {"cells": list(cells), "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


STUB_CELL = _cell("code", "def f(x):\n    y = 2 * x\n    " + CODE_STUB.replace("\n", "\n    "))


def test_tagging_marks_exactly_the_cells_that_reach_a_stub():
    test = _cell("code", "assert f(1) == 3")
    helper = _cell("code", "def g(x):\n    return f(x) * 2\n\ndef h(x):\n    return x")
    uses_helper = _cell("code", "print(g(3))")
    unrelated = _cell("code", "print(h(3))")
    top_level = _cell("code", CODE_STUB)
    written = _cell("markdown", TEXT_STUB)
    nb = _nb(STUB_CELL, test, helper, uses_helper, unrelated, top_level, written)
    tag_raising_cells(nb)
    tagged = [RAISES_TAG in c["metadata"].get("tags", []) for c in nb["cells"]]
    assert tagged == [False, True, False, True, False, True, False]


def test_tagging_rejects_a_layout_that_would_raise_name_error():
    compute = _cell("code", "value = f(1)")
    later = _cell("code", "print(value)")
    with pytest.raises(ValueError, match="cell 2 reads 'value'.*cell 1"):
        tag_raising_cells(_nb(STUB_CELL, compute, later))
    reassigned = _cell("code", "value = 0\nprint(value)")
    tag_raising_cells(_nb(STUB_CELL, compute, reassigned))  # defined again: fine


def test_release_without_nbgrader_prints_one_line_naming_the_extra(tmp_path):
    code = (
        "import sys; sys.modules['nbgrader'] = None; sys.modules['nbgrader.apps'] = None\n"
        "from kernelcourse.book.homework_release import main\n"
        f"sys.exit(main(['--dest', {str(tmp_path)!r}]))"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 2
    assert "Traceback" not in run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "instructor" in lines[0], run.stderr
    assert not list(tmp_path.iterdir())


# -- the repository's assignments, released by nbgrader ----------------------------------------
def test_there_are_ten_assignments_with_starters():
    assert len(SOLUTIONS) == 10
    for path in SOLUTIONS:
        assert (STARTER_DIR / path.name).exists(), f"no starter for {path.name}; run make homework"


def test_every_starter_equals_a_fresh_nbgrader_release(capsys):
    pytest.importorskip("nbgrader")
    stale = release(SOLUTION_DIR, STARTER_DIR, check=True)
    assert stale == [], f"starters out of date (run make homework): {[p.name for p in stale]}"


@pytest.mark.parametrize("path", SOLUTIONS, ids=_ids(SOLUTIONS))
def test_starter_carries_nbgrader_checksums_and_lock_flags(path):
    utils = pytest.importorskip("nbgrader.utils")
    nbformat = pytest.importorskip("nbformat")
    starter = nbformat.read(STARTER_DIR / path.name, as_version=4)
    solution_ids = [
        _nbgrader(c)["grade_id"] for c in _load(path)["cells"] if _nbgrader(c).get("grade_id")
    ]
    ids = []
    for cell in starter.cells:
        meta = cell.metadata.get("nbgrader")
        if not meta:
            continue
        ids.append(meta["grade_id"])
        assert meta["checksum"] == utils.compute_checksum(cell), meta["grade_id"]
        assert cell.metadata["deletable"] is False
        if meta["grade"] and not meta["solution"]:  # test cells: read-only too
            assert cell.metadata["editable"] is False and meta["locked"]
        if meta["solution"]:  # an untouched answer scores 0 in validate and autograde
            score, _ = utils.determine_grade(cell) if meta["grade"] else (0, 0)
            assert score == 0
    assert ids == solution_ids


@pytest.mark.parametrize("path", SOLUTIONS, ids=_ids(SOLUTIONS))
def test_starter_holds_no_solution_or_hidden_test_text(path):
    solution = _load(path)
    starter_text = (STARTER_DIR / path.name).read_text(encoding="utf-8")
    assert "BEGIN SOLUTION" not in starter_text and "HIDDEN TESTS" not in starter_text
    public = "\n".join(c["source"] for c in _load(STARTER_DIR / path.name)["cells"])
    outside = {
        line.strip()
        for c in solution["cells"]
        if not _nbgrader(c).get("solution") and not _nbgrader(c).get("grade")
        for line in c["source"].splitlines()
    }
    secret = []
    for c in solution["cells"]:
        inside = False
        for line in c["source"].splitlines():
            if line.strip() in MARKERS:
                inside = line.strip().startswith("### BEGIN")
            elif inside and len(line.strip()) > 12 and line.strip() not in outside:
                secret.append(line.strip())
    assert secret, "a solution notebook without solution regions"
    for line in secret:
        assert line not in public, f"solution text leaked into the starter: {line!r}"
    for c in solution["cells"]:
        if c["cell_type"] == "markdown" and _nbgrader(c).get("solution"):
            assert c["source"][:60] not in public


@pytest.mark.parametrize("path", SOLUTIONS, ids=_ids(SOLUTIONS))
def test_starter_has_no_outputs_and_graded_code_cells_are_tagged(path):
    starter = _load(STARTER_DIR / path.name)
    solution = _load(path)
    assert [c.get("id") for c in starter["cells"]] == [c.get("id") for c in solution["cells"]]
    for cell in starter["cells"]:
        if cell["cell_type"] != "code":
            continue
        assert cell["outputs"] == [] and cell["execution_count"] is None
        if _nbgrader(cell).get("grade"):
            assert RAISES_TAG in cell["metadata"].get("tags", []), (
                f"test cell {_nbgrader(cell)['grade_id']} calls a stub but is not tagged"
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


NO_DATA = [
    p
    for p in SOLUTIONS
    if p.name.split("_")[0] in ("hw1", "hw2", "hw3", "hw4", "hw5", "hw8", "hw9", "hw10")
]
NO_DATA += [p for p in SOLUTIONS if p.name.startswith("hw6_")]  # synthetic data only


@pytest.mark.parametrize("path", NO_DATA, ids=_ids(NO_DATA))
def test_starter_fails_only_at_its_stubs(path):
    """Run top to bottom, a starter raises NotImplementedError in its tagged cells and nowhere
    else (strict nbval over book/homework checks every starter the same way in a kernel)."""
    starter = _load(STARTER_DIR / path.name)
    outcome = _run_cells(starter)
    for index, err in outcome.items():
        if RAISES_TAG in starter["cells"][index]["metadata"].get("tags", []):
            assert isinstance(err, NotImplementedError), f"cell {index}: expected the stub, {err!r}"
        else:
            assert err is None, f"untagged cell {index} raised {err!r}"
    assert any(outcome.values())


# -- no answers in the package --------------------------------------------------------------------
def test_the_package_ships_no_reference_solutions():
    homework = ROOT / "kernelcourse" / "homework"
    assert not (homework / "_reference.py").exists()
    names = {p.stem for p in homework.rglob("*.py")}
    assert not names & {"_reference", "reference", "solutions"}


def test_guard_records_calls_into_the_package_and_restores_the_profiler():
    from kernelcourse import kernels

    before = sys.getprofile()
    with PackageGuard() as guard:
        np.linalg.norm(np.ones(3))
    assert guard.calls == []
    with PackageGuard() as guard:
        kernels.RBF(gamma=1.0)(np.zeros((2, 1)))
    assert guard.calls and guard.calls[0].startswith("kernelcourse.kernels.")
    assert sys.getprofile() is before
    with PackageGuard(allow=("kernelcourse.kernels",)) as guard:
        kernels.RBF(gamma=1.0)(np.zeros((2, 1)))
    assert not [c for c in guard.calls if c.startswith("kernelcourse.kernels")]


def test_guard_records_the_checks_own_helpers_but_not_their_callbacks():
    # A check's helpers may compute what a question asks (hw4's violating pairs): a student's
    # function may not call them. The callbacks a check hands over, and what they call, run.
    from kernelcourse.homework.check import hw7, hw8
    from kernelcourse.kernels import RBF

    X = np.arange(6.0).reshape(3, 2)
    with PackageGuard() as guard:
        fold_of = hw7.row_folds(3)
    assert guard.calls == ["kernelcourse.homework.check.hw7.row_folds"]
    counting = hw8.CountingKernel(RBF(1.0))
    with PackageGuard() as guard:
        fold_of(X), counting(X, X), counting.diag(X)
    assert guard.calls == [] and counting.evaluated == 12


def test_profile_hooks_nest_chain_and_restore_both_profilers():
    """The guard and hw2's factorisation counter share one hook: nested, both see every
    event, and the profile functions of this thread and of new threads come back as they
    were (the guard used to leave new threads with none)."""
    import threading

    from kernelcourse import kernels
    from kernelcourse.homework.check.hw2 import FactorisationCounter

    seen = []

    def outer(frame, event, arg):
        seen.append(event)

    sys.setprofile(outer)
    threading.setprofile(outer)
    try:
        counter = FactorisationCounter(side=5)
        with PackageGuard() as guard, counter:
            kernels.RBF(gamma=1.0)(np.zeros((2, 1)))
            np.linalg.cholesky(np.eye(8))
        assert sys.getprofile() is outer and threading.getprofile() is outer
    finally:
        sys.setprofile(None)
        threading.setprofile(None)
    assert guard.calls and guard.calls[0].startswith("kernelcourse.kernels.")
    assert counter.factorisations == [("cholesky", (8, 8))]
    assert "call" in seen


def test_self_check_fails_a_function_that_calls_the_package(capsys):
    from kernelcourse import kernels

    with pytest.raises(AssertionError, match="hw1.q1: 5 of 5 checks failed"):
        check.hw1.q1(lambda K, tol=1e-10: None if kernels.is_psd(K) else K[0], seed=0)
    assert "your function calls kernelcourse.kernels.is_psd" in capsys.readouterr().out


def _eigh_witness(K, tol=1e-10):
    """Chapter 1's certificate: the eigenvector of the most negative eigenvalue."""
    K = np.asarray(K, dtype=float)
    if K.ndim != 2 or K.shape[0] != K.shape[1] or np.abs(K - K.T).max() > 1e-8:
        raise ValueError("K must be square and symmetric")
    lam, U = np.linalg.eigh(K)
    return None if lam[0] >= -tol * max(1.0, np.abs(K).max()) else U[:, 0]


def _scipy_eigvalsh_witness(K, tol=1e-10):
    import scipy.linalg

    lam = scipy.linalg.eigvalsh(K)
    return None if lam[0] >= -tol * max(1.0, np.abs(K).max()) else np.ones(len(K))


@pytest.mark.parametrize(
    "fn, name",
    [(_eigh_witness, "numpy.linalg.eigh"), (_scipy_eigvalsh_witness, "scipy.linalg.eigvalsh")],
)
def test_hw1_q1_fails_a_certificate_from_an_eigendecomposition(fn, name, capsys):
    """Question 1 asks for the certificate of a stopped Cholesky factorisation: a function that
    computes eigenvalues fails every test that reaches the call (input validation may come
    first), with a message that names the routine."""
    with pytest.raises(AssertionError, match=r"hw1\.q1: [45] of 5 checks failed"):
        check.hw1.q1(fn, seed=0)
    out = capsys.readouterr().out
    assert out.count(f"your function calls {name}") >= 4
    assert "Cholesky factorisation stopped at its first negative pivot" in out


def test_hw1_q1_eigendecomposition_passes_without_the_spectral_guard(monkeypatch, capsys):
    """It is the call, not the answer, that fails chapter 1's certificate."""
    monkeypatch.setattr(check.hw1.SpectralGuard, "_event", lambda self, *event: None)
    assert check.hw1.q1(_eigh_witness, seed=0) is None
    assert "all 5 checks passed" in capsys.readouterr().out


def test_fingerprint_accepts_round_off_and_rejects_real_differences():
    a = np.random.default_rng(0).normal(size=(6, 5))
    fp = Fingerprint.of(a)
    assert all(len(f"{v:.4g}") < 12 for v in fp.values)
    fp.check(a * (1 + 1e-12))
    with pytest.raises(AssertionError, match="differs from the expected values"):
        fp.check(a * 1.01)
    with pytest.raises(AssertionError, match="shape"):
        fp.check(a.T)


# -- self-checks against the solutions ----------------------------------------------------------
def _solution_functions(path):
    """The functions the solution notebook defines (plus its imports)."""
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
SEEDED = [
    pytest.param(path, hw, q, name, seed, id=f"{hw}.{q}-seed{seed}")
    for path, hw, q, name in CALLS
    for seed in (0, None)
]


def test_every_self_check_is_used_by_an_assignment():
    used = {(hw, q) for _, hw, q, _ in CALLS}
    defined = {
        (hw, q) for hw in check.__all__ for q in getattr(check, hw).__all__ if q.startswith("q")
    }
    assert used == defined


@pytest.mark.parametrize("path, hw, q, name, seed", SEEDED)
def test_self_check_passes_on_the_solution(path, hw, q, name, seed, capsys):
    fn = _solution_functions(path)[name]
    assert getattr(getattr(check, hw), q)(fn, seed=seed) is None
    out = capsys.readouterr().out
    assert "[FAIL]" not in out and out.count("[pass]") >= 1
    assert "passed" in out.splitlines()[-1]


def _training_residuals(K, y, lams):
    """The residuals of the fit on all points, and their mean square, for every λ."""
    mu, U = np.linalg.eigh(K)
    E = np.array([U @ (lam / (mu + lam) * (U.T @ y)) for lam in lams])
    return E, np.mean(E**2, axis=1)


def _fold_diagonal_only(K, y, lams, folds):
    """Leave-one-out residuals in place of each fold's: the diagonal of H_FF, not the block."""
    n = len(y)
    E = np.empty((len(lams), n))
    for j, lam in enumerate(lams):
        A = np.linalg.inv(K + lam * np.eye(n))
        E[j] = (A @ y) / np.diag(A)
    return E


def _wrong_smo(K, y, C, tol=1e-5):
    alpha = np.zeros(len(y))
    for i, j in [(0, 1), (2, 3)]:  # two steps, not until the KKT conditions hold
        alpha = np.clip(_unclipped_step(alpha, K, y, C, i, j), 0, C)
    return alpha, 2


def _unclipped_step(alpha, K, y, C, i, j):
    alpha = np.array(alpha, dtype=float)
    g = 1.0 - y * (K @ (alpha * y))
    t = (y[i] * g[i] - y[j] * g[j]) / (K[i, i] + K[j, j] - 2 * K[i, j])
    alpha[i] += y[i] * t
    alpha[j] -= y[j] * t
    return alpha


def _anova_updated_upwards(X, Y, r):
    """hw1 q2's recursion with k running upwards in place: z_j multiplies the coefficient of
    t^(k-1) already updated for coordinate j, which sums over multisets (h_r, not e_r)."""
    if r < 0:
        raise ValueError("r must be non-negative")
    E = np.zeros((r + 1, len(X), len(Y)))
    E[0] = 1.0
    for j in range(X.shape[1]):
        for k in range(1, r + 1):
            E[k] += np.outer(X[:, j], Y[:, j]) * E[k - 1]
    return E[r]


def _diagonal_witness(K, tol=1e-10):
    """A negative diagonal entry as the only certificate: no factorisation, no Schur complement."""
    K = np.asarray(K, dtype=float)
    if K.ndim != 2 or K.shape[0] != K.shape[1] or np.abs(K - K.T).max() > 1e-8:
        raise ValueError("K must be square and symmetric")
    q = int(np.argmin(K.diagonal()))
    return np.eye(len(K))[q] if K[q, q] < -tol * max(1.0, np.abs(K).max()) else None


def _nystroem_preconditioner_dense(kernel, X, landmarks, lam):
    """The right operator, through an n x n matrix instead of the Woodbury identity."""
    C = kernel(X, X[landmarks])
    K_tilde = C @ np.linalg.pinv(C[landmarks], rcond=1e-10, hermitian=True) @ C.T
    P = K_tilde + lam * np.eye(len(X))
    return lambda v: np.linalg.solve(P, v)


def _pcg_ritz_without_beta(matvec, b, precondition, tol, max_iter):
    """A correct PCG whose Lanczos diagonal drops the beta / alpha terms."""
    x, r = np.zeros(len(b)), np.array(b, dtype=float)
    z = precondition(r)
    p, rz, steps = z.copy(), r @ z, []
    while np.linalg.norm(r) > tol * np.linalg.norm(b) and len(steps) < max_iter:
        Ap = matvec(p)
        steps.append(rz / (p @ Ap))
        x, r = x + steps[-1] * p, r - steps[-1] * Ap
        z = precondition(r)
        rz_new = r @ z
        p, rz = z + rz_new / rz * p, rz_new
    return x, 1 / np.array(steps)


def _laplacian_widths(size, gamma, rng):
    """The Gamma(2, 1/γ) widths of chapter 9: the co-occupancy is exp(−γΔ), not the kernel asked."""
    return rng.gamma(2.0, 1.0 / gamma, size=size)


def _first_coordinate_buckets(X, widths, shifts, n_buckets, seed=0):
    """Cells that share their first coordinate always share a bucket: not a hash of the cell."""
    import scipy.sparse as sp

    n, P = len(X), len(widths)
    first = np.floor((X[:, None, 0] - shifts[:, 0]) / widths[:, 0]).astype(np.int64)
    cols = (first % n_buckets + n_buckets * np.arange(P)).ravel()
    data = np.full(n * P, P**-0.5)
    return sp.csr_matrix((data, cols, np.arange(0, n * P + 1, P)), shape=(n, P * n_buckets))


def _merge_into(stats, f, Z, y):
    """Merge the rows (Z, y) into fold f of the six centred statistics, in place."""
    n, zbar, ybar, S, t, q = stats
    m_z, m_y = Z.mean(axis=0), y.mean()
    d_z, d_y = m_z - zbar[f], m_y - ybar[f]
    total = n[f] + len(y)
    weight = n[f] * len(y) / total
    S[f] += (Z - m_z).T @ (Z - m_z) + weight * np.outer(d_z, d_z)
    t[f] += (Z - m_z).T @ (y - m_y) + weight * d_y * d_z
    q[f] += (y - m_y) @ (y - m_y) + weight * d_y**2
    zbar[f] += d_z * len(y) / total
    ybar[f] += d_y * len(y) / total
    n[f] = total


def _empty_statistics(k, D):
    return tuple(np.zeros(shape) for shape in ((k,), (k, D), (k,), (k, D, D), (k, D), (k,)))


def _folds_by_chunk(chunks, psi, fold_of, k):
    """The right merge, but each chunk goes whole to one fold (chunk number mod k)."""
    stats = None
    for index, (X_block, y_block) in enumerate(chunks):
        Z = psi(X_block)
        stats = stats or _empty_statistics(k, Z.shape[1])
        _merge_into(stats, index % k, Z, y_block)
    return stats


def _fold_statistics_from_raw_sums(chunks, psi, fold_of, k):
    """Raw sums Z_f^T Z_f, Z_f^T y_f, y_f^T y_f, centred at the end: right in exact
    arithmetic, but the subtraction loses the digits an offset shares."""
    raw = None
    for X_block, y_block in chunks:
        Z, labels = psi(X_block), fold_of(X_block)
        if raw is None:
            D = Z.shape[1]
            raw = [np.zeros(shape) for shape in ((k, D, D), (k, D), (k,), (k, D), (k,), (k,))]
        for f in range(k):
            Zf, yf = Z[labels == f], y_block[labels == f]
            for a, v in zip(
                raw, (Zf.T @ Zf, Zf.T @ yf, yf @ yf, Zf.sum(0), yf.sum(), len(yf)), strict=True
            ):
                a[f] += v
    G, c, s, zsum, ysum, n = raw
    zbar, ybar = zsum / n[:, None], ysum / n
    S = G - n[:, None, None] * zbar[:, :, None] * zbar[:, None, :]
    return n, zbar, ybar, S, c - n[:, None] * zbar * ybar[:, None], s - n * ybar**2


def _training_statistics(n, zbar, ybar, S, t, f):
    """The merged statistics of every fold but f."""
    rest = np.arange(len(n)) != f
    n_r = n[rest]
    m_z, m_y = n_r @ zbar[rest] / n_r.sum(), n_r @ ybar[rest] / n_r.sum()
    d_z, d_y = zbar[rest] - m_z, ybar[rest] - m_y
    S_t = S[rest].sum(0) + d_z.T @ (n_r[:, None] * d_z)
    return n_r.sum(), m_z, m_y, S_t, t[rest].sum(0) + d_z.T @ (n_r * d_y)


def _held_out(n, zbar, ybar, S, t, q, f, w, b):
    return q[f] - 2 * t[f] @ w + w @ S[f] @ w + n[f] * (ybar[f] - b - zbar[f] @ w) ** 2


def _cv_penalty_on_all_rows(n, zbar, ybar, S, t, q, lams):
    """Every fold penalised by lambda times all n rows instead of its training rows."""
    k, D = zbar.shape
    errors, W, B = np.zeros(len(lams)), np.zeros((len(lams), k, D)), np.zeros((len(lams), k))
    for f in range(k):
        _, m_z, m_y, S_t, t_t = _training_statistics(n, zbar, ybar, S, t, f)
        for j, lam in enumerate(lams):
            w = np.linalg.solve(S_t + lam * n.sum() * np.eye(D), t_t)
            W[j, f], B[j, f] = w, m_y - m_z @ w
            errors[j] += _held_out(n, zbar, ybar, S, t, q, f, w, B[j, f])
    return errors / n.sum(), W, B


def _cv_folds_summed_not_merged(n, zbar, ybar, S, t, q, lams):
    """The training S and t as plain sums of the folds' own: the spread of the folds' means
    about the training mean is left out."""
    k, D = zbar.shape
    errors, W, B = np.zeros(len(lams)), np.zeros((len(lams), k, D)), np.zeros((len(lams), k))
    for f in range(k):
        n_t, m_z, m_y, _, _ = _training_statistics(n, zbar, ybar, S, t, f)
        rest = np.arange(k) != f
        for j, lam in enumerate(lams):
            w = np.linalg.solve(S[rest].sum(0) + lam * n_t * np.eye(D), t[rest].sum(0))
            W[j, f], B[j, f] = w, m_y - m_z @ w
            errors[j] += _held_out(n, zbar, ybar, S, t, q, f, w, B[j, f])
    return errors / n.sum(), W, B


def _plain_sgd_epochs(read, psi, lam, step_size, n_epochs, w0):
    """Two passes per epoch, but plain SGD steps: no snapshot, no full gradient."""
    w = np.array(w0, dtype=float)
    for _ in range(2 * n_epochs):
        for X_block, y_block in read():
            for z, target in zip(psi(X_block), y_block, strict=True):
                w -= step_size * ((z @ w - target) * z + lam * w)
    return w


def _iid_fourier_features(X, D, gamma, rng):
    """Independent frequencies: the right law and the right map, but plain Monte Carlo. The
    law (1 − cos t)/(πt²) is drawn by rejection from Cauchy(0, 2)."""
    t = np.empty(0)
    while t.size < D * X.shape[1]:
        s = 2.0 * rng.standard_cauchy(4 * D * X.shape[1])
        keep = rng.random(s.size) < np.sinc(s / (2 * np.pi)) ** 2 * (1 + s**2 / 4) / 2
        t = np.concatenate([t, s[keep]])
    Omega = gamma * t[: D * X.shape[1]].reshape(D, X.shape[1])
    return np.hstack([np.cos(X @ Omega.T), np.sin(X @ Omega.T)]) / np.sqrt(D)


def _offset_by_mean(K, y, lam):
    """Centre y and fit without offset: the residual condition holds, Σα = 0 does not."""
    b = float(np.mean(y))
    return np.linalg.solve(K + lam * np.eye(len(y)), y - b), b


def _p_greedy_from_scratch(kernel, candidates, m):
    """The right choices, but the power function recomputed at every step: O(N m²) entries."""
    chosen, p_max = [], []
    for k in range(m):
        if k == 0:
            p2 = kernel.diag(candidates)
        else:
            centers = candidates[chosen]
            B = kernel(centers, candidates)
            p2 = kernel.diag(candidates) - np.sum(
                B * np.linalg.solve(kernel(centers, centers), B), 0
            )
        p2 = np.array(p2, dtype=float)
        p2[chosen] = -1.0
        chosen.append(int(np.argmax(p2)))
        p_max.append(np.sqrt(max(p2[chosen[-1]], 0.0)))
    return np.array(chosen), np.array(p_max)


def _stumps_unscaled(X, q, low, high, rng):
    coords = rng.integers(0, X.shape[1], size=q)
    thresholds = rng.uniform(low, high, size=q)
    return np.where(X[:, coords] >= thresholds, 1.0, -1.0), coords, thresholds


def _clipped_least_squares(Z, y, C, tol):
    """Clip the unconstrained solution to the box: feasible, but not the constrained optimum."""
    bound = C / Z.shape[1]
    return np.clip(np.linalg.lstsq(Z, y, rcond=None)[0], -bound, bound), 1


def _walk_kernel_without_labels(A1, labels1, A2, labels2, lam):
    Ax = np.kron(A1, A2)
    one = np.ones(len(Ax))
    rho = np.abs(np.linalg.eigvalsh(Ax)).max()
    if lam * rho >= 1:
        raise ValueError("lam too large")
    return float(one @ np.linalg.solve(np.eye(len(Ax)) - lam * Ax, one))


def _walk_kernel_without_mask(A1, labels1, A2, labels2, lam, tol):
    """The fixed point iterated without the label mask: walks through unequal labels count."""
    X = np.ones((len(A1), len(A2)))
    for it in range(1, 10_000):
        X_new = 1.0 + lam * (A1 @ X @ A2.T)
        if np.max(np.abs(X_new - X)) <= tol:
            return float(X_new.sum()), it
        X = X_new
    return float(X.sum()), it


def _gap_at_zero_bias(alpha, K, y, C):
    """hw4 q1 with b = 0 instead of the b that makes the gap smallest."""
    beta = alpha * y
    dual = float(alpha.sum() - 0.5 * beta @ K @ beta)
    primal = 0.5 * beta @ K @ beta + C * np.maximum(0.0, 1.0 - y * (K @ beta)).sum()
    return dual, float(primal - dual), 0.0


def _shared_signs(F1, F2, D, rng):
    """hw1 q3 with one sign matrix for both factors: E[(rᵀa)(rᵀb)(rᵀc)(rᵀe)] has extra terms."""
    R = rng.choice([-1.0, 1.0], size=(max(F1.shape[1], F2.shape[1]), D))
    return (F1 @ R[: F1.shape[1]]) * (F2 @ R[: F2.shape[1]]) / np.sqrt(D)


WRONG = {
    ("hw1", "q1"): (_diagonal_witness, "Schur-complement diagonal entry"),
    ("hw1", "q2"): (_anova_updated_upwards, "at most once"),
    ("hw1", "q3"): (_shared_signs, "independent of each other"),
    ("hw2", "q1"): (_training_residuals, "not r_i itself"),
    ("hw2", "q2"): (_fold_diagonal_only, "not its diagonal"),
    ("hw3", "q1"): (lambda n, d, rng: rng.random((n, d)), "radical inverse"),
    ("hw3", "q2"): (_iid_fourier_features, "Halton"),
    ("hw4", "q1"): (_gap_at_zero_bias, "kink by kink"),
    ("hw4", "q2"): (_unclipped_step, "clip t"),
    ("hw4", "q3"): (lambda a, K, y, C: float(np.mean(y - K @ (a * y))), "free support"),
    ("hw4", "q4"): (_wrong_smo, "within tol"),
    ("hw5", "q1"): (_nystroem_preconditioner_dense, "Woodbury"),
    ("hw5", "q2"): (_pcg_ritz_without_beta, "Lanczos tridiagonal"),
    ("hw6", "q1"): (_laplacian_widths, "for a convex k"),
    ("hw6", "q2"): (_first_coordinate_buckets, "all the coordinates"),
    ("hw7", "q1"): (_folds_by_chunk, "not on its chunk"),
    ("hw7", "q2"): (_cv_penalty_on_all_rows, "counts the training rows"),
    ("hw7", "q3"): (_plain_sgd_epochs, "noise floor"),
    ("hw8", "q1"): (_offset_by_mean, "sum of α"),
    ("hw8", "q2"): (lambda kernel, centers, X: np.sqrt(kernel.diag(X)), "exact at the centres"),
    ("hw8", "q3"): (_p_greedy_from_scratch, "one new kernel column"),
    ("hw9", "q1"): (_stumps_unscaled, "the scaling"),
    ("hw9", "q2"): (_clipped_least_squares, "clipped to the box"),
    ("hw10", "q1"): (_walk_kernel_without_labels, "length 0"),
    ("hw10", "q2"): (_walk_kernel_without_mask, "label mask"),
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


def _box_fixed_steps(Z, y, C, tol):
    """Projected gradient for a fixed number of steps, as chapter 7's box_erm: tol is ignored."""
    n, q = Z.shape
    step, alpha = n / np.linalg.norm(Z, 2) ** 2, np.zeros(q)
    for _ in range(20_000):
        alpha = np.clip(alpha - step * Z.T @ (Z @ alpha - y) / n, -C / q, C / q)
    return alpha, 20_000


def test_hw9_q2_fails_a_solver_that_ignores_tol(capsys):
    with pytest.raises(AssertionError, match=r"hw9\.q2: 3 of 5 checks failed"):
        check.hw9.q2(_box_fixed_steps, seed=0)
    out = capsys.readouterr().out
    assert "the loose tolerance should stop sooner" in out and "box_erm" in out
    assert "20000 sweeps, where one solves the problem" in out
    assert "nq entries of arrays for one sweep" in out


def _box_erm_stopped(Z, y, C, tol, max_sweeps=100_000):
    """Chapter 7's box_erm (FISTA, step 1/L) for the squared loss, stopped by ε(β) ≤ tol: the
    right minimiser and the right stop, but not coordinate descent."""
    n, q = Z.shape
    step, c = n / np.linalg.norm(Z, 2) ** 2, C / q
    alpha = point = np.zeros(q)
    for k in range(1, max_sweeps + 1):
        new = np.clip(point - step * Z.T @ (Z @ point - y) / n, -c, c)
        point, alpha = new + (k - 1) / (k + 2) * (new - alpha), new
        if np.max(np.abs(np.clip(alpha - Z.T @ (Z @ alpha - y) / n, -c, c) - alpha)) <= tol:
            return alpha, k
    return alpha, max_sweeps


@pytest.mark.parametrize("seed", range(3))
def test_hw9_q2_fails_chapter_7s_projected_gradient_with_the_new_stop(seed, capsys):
    """Projected gradient needs many steps of 2nq where one sweep solves the problem: it
    fails the one-sweep test and the cost of a sweep."""
    with pytest.raises(AssertionError, match=r"hw9\.q2: 2 of 5 checks failed"):
        check.hw9.q2(_box_erm_stopped, seed=seed)
    out = capsys.readouterr().out
    assert "sweeps, where one solves the problem" in out and "one exact minimisation" in out
    assert "nq entries of arrays for one sweep" in out


def _box_recomputing_the_residual(Z, y, C, tol=1e-8, max_sweeps=10_000):
    """Coordinate descent with the right steps, order and stop, but the residual Zβ − y
    recomputed for every coefficient: O(nq) a coefficient, O(nq²) a sweep."""
    Z = np.asarray(Z, dtype=float)
    n, q = Z.shape
    c = C / q
    alpha = np.zeros(q)
    for sweep in range(1, max_sweeps + 1):
        for j in range(q):
            zz = Z[:, j] @ Z[:, j]
            if zz > 0:
                r = Z @ alpha - y
                alpha[j] = min(max(alpha[j] - Z[:, j] @ r / zz, -c), c)
        g = Z.T @ (Z @ alpha - y) / n
        if np.max(np.abs(np.clip(alpha - g, -c, c) - alpha)) <= tol:
            return alpha, sweep
    return alpha, max_sweeps


def _box_recomputing_the_gradient_by_dot(Z, y, C, tol=1e-8, max_sweeps=10_000):
    """The same sweep through np.dot on a copy of Z: the j-th gradient entry from a fresh
    residual for every coefficient."""
    Z = np.array(Z, dtype=float)
    n, q = Z.shape
    c = C / q
    alpha = np.zeros(q)
    for sweep in range(1, max_sweeps + 1):
        for j in range(q):
            zj = Z[:, j]
            zz = np.dot(zj, zj)
            if zz > 0:
                g_j = np.dot(zj, np.dot(Z, alpha) - y)
                alpha[j] = np.clip(alpha[j] - g_j / zz, -c, c)
        g = np.dot(Z.T, np.dot(Z, alpha) - y) / n
        if np.max(np.abs(np.clip(alpha - g, -c, c) - alpha)) <= tol:
            return alpha, sweep
    return alpha, max_sweeps


@pytest.mark.parametrize(
    "fn", [_box_recomputing_the_residual, _box_recomputing_the_gradient_by_dot]
)
@pytest.mark.parametrize("seed", [0, 1, None])
def test_hw9_q2_fails_a_sweep_that_recomputes_the_residual(fn, seed, capsys):
    """The right coefficients, sweeps and stop, in O(nq²) a sweep: only the cost fails. The
    products run no Python frame; the counter follows the arrays it hands over."""
    with pytest.raises(AssertionError, match=r"hw9\.q2: 1 of 5 checks failed"):
        check.hw9.q2(fn, seed=seed)
    out = capsys.readouterr().out
    assert "[FAIL] costs O(nq) a sweep" in out and "recomputing Zβ or the residual" in out


def _box_by_columns(Z, y, C, tol=1e-8, max_sweeps=10_000):
    """Coordinate descent on the columns of Z as they are, a new residual array per step."""
    n, q = Z.shape
    c = C / q
    alpha, r = np.zeros(q), -y.copy()
    for sweep in range(1, max_sweeps + 1):
        for j in range(q):
            zz = Z[:, j] @ Z[:, j]
            if zz == 0:
                continue
            new = np.clip(alpha[j] - Z[:, j] @ r / zz, -c, c)
            r = r + (new - alpha[j]) * Z[:, j]
            alpha[j] = new
        eps = np.abs(np.clip(alpha - Z.T @ r / n, -c, c) - alpha).max()
        if eps <= tol:
            return alpha, sweep
    return alpha, max_sweeps


def _box_with_scalar_loops(Z, y, C, tol=1e-8, max_sweeps=10_000):
    """Coordinate descent with the residual updated entry by entry in a Python loop, and
    the column norms recomputed in every sweep."""
    Z = np.asarray(Z, dtype=float)
    n, q = Z.shape
    c = C / q
    alpha = np.zeros(q)
    r = [-float(t) for t in y]
    for sweep in range(1, max_sweeps + 1):
        for j in range(q):
            z = Z[:, j]
            zz = float(np.sum(z * z))
            if zz == 0:
                continue
            new = min(max(alpha[j] - float(np.dot(z, r)) / zz, -c), c)
            delta = new - alpha[j]
            if delta:
                zl = z.tolist()
                for i in range(n):
                    r[i] += delta * zl[i]
            alpha[j] = new
        g = Z.T @ np.array(r) / n
        if np.max(np.abs(np.clip(alpha - g, -c, c) - alpha)) <= tol:
            return alpha, sweep
    return alpha, max_sweeps


@pytest.mark.parametrize("fn", [_box_by_columns, _box_with_scalar_loops])
def test_hw9_q2_passes_other_ways_of_writing_coordinate_descent(fn, capsys):
    for seed in (0, 1, None):
        assert check.hw9.q2(fn, seed=seed) is None
    assert "[FAIL]" not in capsys.readouterr().out


def _cv_mean_of_fold_errors(n, zbar, ybar, S, t, q, lams):
    """The mean of the k per-fold mean squared errors instead of the sum over all rows / n."""
    k, D = zbar.shape
    errors, W, B = np.zeros(len(lams)), np.zeros((len(lams), k, D)), np.zeros((len(lams), k))
    for f in range(k):
        n_t, m_z, m_y, S_t, t_t = _training_statistics(n, zbar, ybar, S, t, f)
        for j, lam in enumerate(lams):
            w = np.linalg.solve(S_t + lam * n_t * np.eye(D), t_t)
            W[j, f], B[j, f] = w, m_y - m_z @ w
            errors[j] += _held_out(n, zbar, ybar, S, t, q, f, w, B[j, f]) / n[f] / k
    return errors, W, B


@pytest.mark.parametrize("seed", range(4))
def test_hw7_q2_fails_the_mean_of_per_fold_errors(seed, capsys):
    with pytest.raises(AssertionError, match=r"hw7\.q2: 1 of 3 checks failed"):
        check.hw7.q2(_cv_mean_of_fold_errors, seed=seed)
    assert "divide the sum over the folds by the number of rows" in capsys.readouterr().out


def _libsvm_pair_step(alpha, K, y, C, i, j):
    """LIBSVM's rule for a_ij <= 0, a tiny positive curvature: a step to the end of the segment
    that the slope points to, which is not always the better end."""
    beta = np.array(alpha, dtype=float) * y
    lo = max(-C * (y[i] < 0) - beta[i], beta[j] - C * (y[j] > 0))
    hi = min(C * (y[i] > 0) - beta[i], beta[j] + C * (y[j] < 0))
    slope = (y[i] - K[i] @ beta) - (y[j] - K[j] @ beta)
    t = min(max(slope / max(K[i, i] + K[j, j] - 2 * K[i, j], 1e-12), lo), hi)
    beta[i] += t
    beta[j] -= t
    return np.clip(beta * y, 0.0, C)


@pytest.mark.parametrize("seed", range(4))
def test_hw4_q2_fails_a_step_that_follows_the_slope_for_negative_curvature(seed, capsys):
    with pytest.raises(AssertionError, match=r"hw4\.q2: 1 of 5 checks failed"):
        check.hw4.q2(_libsvm_pair_step, seed=seed)
    assert "against the slope" in capsys.readouterr().out


def _bounds_and_gradient(alpha, K, y, C):
    beta = alpha * y
    v = y - K @ beta
    return v, beta < np.where(y > 0, C, 0.0), beta > np.where(y > 0, 0.0, -C)


def _shrinkable_by_partner_search(alpha, K, y, C):
    """The right mask, from a search for a violating partner of each variable at a bound: one
    vector operation per variable, O(n²) (the check's own brute force, copied)."""
    v, up, low = _bounds_and_gradient(alpha, K, y, C)
    out = np.zeros(len(y), bool)
    for t in np.flatnonzero(~(up & low)):
        partners = v[up] > v[t] if low[t] else v[low] < v[t]
        out[t] = not partners.any()
    return out


def _shrinkable_by_pair_table(alpha, K, y, C):
    """The right mask, from the n × n table of violating pairs."""
    v, up, low = _bounds_and_gradient(alpha, K, y, C)
    pairs = up[:, None] & low[None, :] & (v[:, None] > v[None, :])
    return ~(up & low) & ~(pairs.any(axis=0) | pairs.any(axis=1))


def _shrinkable_by_double_loop(alpha, K, y, C):
    """The right mask, from a loop over the partners inside a loop over the variables."""
    v, up, low = _bounds_and_gradient(alpha, K, y, C)
    n = len(y)
    out = np.zeros(n, bool)
    for t in range(n):
        if up[t] and low[t]:
            continue
        out[t] = True
        for s in range(n):
            if (low[t] and up[s] and v[s] > v[t]) or (up[t] and low[s] and v[t] > v[s]):
                out[t] = False
                break
    return out


def _shrinkable_via_k_times_beta(alpha, K, y, C):
    """The right rule, but v from the n × n product K * beta summed, not from K @ beta."""
    beta = alpha * y
    v = y - (K * beta).sum(axis=1)
    up, low = beta < np.where(y > 0, C, 0.0), beta > np.where(y > 0, 0.0, -C)
    return (~up & (v > v[up].max())) | (~low & (v < v[low].min()))


def _shrinkable_by_max_recomputed(alpha, K, y, C):
    """The right mask, recomputing m(β) or M(β) for every variable at a bound: two masked
    copies of v made once, then a reduction over all n entries per variable, which allocates
    nothing and runs a few lines of Python."""
    beta = alpha * y
    v = y - K @ beta
    up, low = beta < np.where(y > 0, C, 0.0), beta > np.where(y > 0, 0.0, -C)
    v_up, v_low = np.where(up, v, -np.inf), np.where(low, v, np.inf)
    out = np.zeros(len(y), dtype=bool)
    for t in range(len(y)):
        if not up[t]:
            out[t] = v[t] > v_up.max()
        elif not low[t]:
            out[t] = v[t] < v_low.min()
    return out


def _shrinkable_by_ufunc_reduce(alpha, K, y, C):
    """The right mask, with m(β) or M(β) recomputed for every variable at a bound by a ufunc
    method, which runs no Python frame and allocates nothing."""
    beta = alpha * y
    v = y - K @ beta
    up, low = beta < np.where(y > 0, C, 0.0), beta > np.where(y > 0, 0.0, -C)
    v_up, v_low = np.where(up, v, -np.inf), np.where(low, v, np.inf)
    out = np.zeros(len(y), dtype=bool)
    for t in range(len(y)):
        if not up[t]:
            out[t] = v[t] > np.maximum.reduce(v_up)
        elif not low[t]:
            out[t] = v[t] < np.minimum.reduce(v_low)
    return out


def _shrinkable_by_reduce_on_new_arrays(alpha, K, y, C):
    """The same loop on arrays made by np.asarray and np.full and filled through masks."""
    alpha, y = np.asarray(alpha, dtype=float), np.asarray(y, dtype=float)
    beta = alpha * y
    v = y - np.dot(K, beta)
    up, low = beta < np.where(y > 0, C, 0.0), beta > np.where(y > 0, 0.0, -C)
    v_up, v_low = np.full(len(y), -np.inf), np.full(len(y), np.inf)
    v_up[up], v_low[low] = v[up], v[low]
    out = np.zeros(len(y), dtype=bool)
    for t in range(len(y)):
        if not up[t]:
            out[t] = np.greater(v[t], np.maximum.reduce(v_up))
        elif not low[t]:
            out[t] = np.less(v[t], np.minimum.reduce(v_low))
    return out


@pytest.mark.parametrize(
    "fn, message",
    [
        (_shrinkable_by_partner_search, "a vector operation inside a loop over the variables"),
        (_shrinkable_by_pair_table, "bytes per variable at once"),
        (_shrinkable_by_double_loop, "a loop over the partners inside a loop over the variables"),
        (_shrinkable_via_k_times_beta, "bytes per variable at once"),
        (_shrinkable_by_max_recomputed, "vector entries per variable"),
        (_shrinkable_by_ufunc_reduce, "vector entries per variable"),
        (_shrinkable_by_reduce_on_new_arrays, "vector entries per variable"),
    ],
    ids=[
        "partner-search",
        "pair-table",
        "double-loop",
        "K-times-beta",
        "max-per-variable",
        "ufunc-reduce-per-variable",
        "ufunc-reduce-on-new-arrays",
    ],
)
def test_hw4_q3_fails_a_right_mask_found_in_quadratic_work(fn, message, capsys):
    """Question 3 asks for a rule that costs O(n) once v is known. The check counts the work
    (Python steps, vector operations, memory held at once) instead of timing it: each of these
    right answers fails that test alone, whatever the seed."""
    for seed in (0, 1, None):
        with pytest.raises(AssertionError, match=r"hw4\.q3: 1 of 4 checks failed"):
            check.hw4.q3(fn, seed=seed)
        out = capsys.readouterr().out
        assert "[FAIL] costs O(n) once v is known" in out and message in out


def _shrinkable_by_python_loop(alpha, K, y, C):
    """The O(n) rule written as two plain loops over the variables."""
    alpha = np.asarray(alpha, dtype=float)
    v = y - K @ (alpha * y)
    n = len(y)
    grows = [alpha[t] < C if y[t] > 0 else alpha[t] > 0 for t in range(n)]
    falls = [alpha[t] > 0 if y[t] > 0 else alpha[t] < C for t in range(n)]
    m = max(v[t] for t in range(n) if grows[t])
    M = min(v[t] for t in range(n) if falls[t])
    return np.array([(not grows[t] and v[t] > m) or (not falls[t] and v[t] < M) for t in range(n)])


def _shrinkable_by_sorting(alpha, K, y, C):
    """The rule with m and M read off sorted copies: O(n log n), vectorised."""
    beta = alpha * y
    v = y - np.dot(K, beta)
    up, low = beta < np.where(y > 0, C, 0.0), beta > np.where(y > 0, 0.0, -C)
    return (~up & (v > np.sort(v[up])[-1])) | (~low & (v < np.sort(v[low])[0]))


def _shrinkable_with_v_row_by_row(alpha, K, y, C):
    """The O(n) rule, with v computed one row of K at a time (the part of the work the
    question sets aside, in another form)."""
    beta = alpha * y
    v = np.array([y[t] - K[t] @ beta for t in range(len(y))])
    up, low = beta < np.where(y > 0, C, 0.0), beta > np.where(y > 0, 0.0, -C)
    return (~up & (v > v[up].max())) | (~low & (v < v[low].min()))


def _shrinkable_by_python_lists(alpha, K, y, C):
    """The O(n) rule in plain Python on lists."""
    v = (y - K @ (alpha * y)).tolist()
    a, labels = list(alpha), list(y)
    grows = [a_t < C if y_t > 0 else a_t > 0 for a_t, y_t in zip(a, labels, strict=True)]
    falls = [a_t > 0 if y_t > 0 else a_t < C for a_t, y_t in zip(a, labels, strict=True)]
    m = max(v_t for v_t, g in zip(v, grows, strict=True) if g)
    M = min(v_t for v_t, f in zip(v, falls, strict=True) if f)
    rows = zip(v, grows, falls, strict=True)
    return np.array([(not g and v_t > m) or (not f and v_t < M) for v_t, g, f in rows])


@pytest.mark.parametrize(
    "fn",
    [
        _shrinkable_by_python_loop,
        _shrinkable_by_sorting,
        _shrinkable_with_v_row_by_row,
        _shrinkable_by_python_lists,
    ],
)
def test_hw4_q3_passes_other_ways_of_writing_the_rule(fn, capsys):
    for seed in (0, 1, None):
        assert check.hw4.q3(fn, seed=seed) is None
    assert "[FAIL]" not in capsys.readouterr().out


def test_work_counter_counts_without_a_clock_and_restores_the_tracer():
    import tracemalloc

    def rule(v):
        return (v > v.max()) | (v < v.min())

    def quadratic(v):
        return [bool((v > x).any()) for x in v]

    def before(frame, event, arg):
        return None

    v = np.random.default_rng(0).normal(size=500)
    sys.settrace(before)
    try:
        with check.hw4.WorkCounter(500) as linear:
            rule(v)
        assert sys.gettrace() is before
        with check.hw4.WorkCounter(500) as loop:
            quadratic(v)
        with pytest.raises(check.hw4.WorkCounter.Exceeded):
            with check.hw4.WorkCounter(500, max_steps=100):
                quadratic(v)
        assert sys.gettrace() is before
    finally:
        sys.settrace(None)
    assert not tracemalloc.is_tracing()
    assert linear.steps <= 20 and linear.vector_ops <= 5 and linear.peak_bytes < 10 * 500
    assert linear.elements <= 4 * 500
    assert loop.vector_ops >= 500 and loop.steps >= 500
    with check.hw4.WorkCounter(500) as table:
        np.subtract.outer(v, v)
    assert table.peak_bytes >= 8 * 500**2


def test_work_counter_counts_the_entries_of_a_reduction_that_allocates_nothing():
    """A maximum over n entries recomputed n times, by np.max with a mask or by the max
    method of a vector made once: a few lines of Python and no allocation of n bytes per
    variable at n = 4,000, but n² entries through numpy's functions."""
    n = 4000
    v = np.random.default_rng(1).normal(size=n)
    mask, w = v > 0, np.where(v > 0, v, -np.inf)
    with check.hw4.WorkCounter(n) as once:
        (v > np.max(v, where=mask, initial=-np.inf)) | (v < w.max())
    with check.hw4.WorkCounter(n) as masked:
        [x > np.max(v, where=mask, initial=-np.inf) for x in v]
    with check.hw4.WorkCounter(n) as method:
        [x > w.max() for x in v]
    assert once.elements <= 8 * n
    for counted in (masked, method):
        assert counted.vector_ops <= 60 and counted.steps <= 100 * n
        assert counted.elements >= n * n


def test_work_counter_follows_the_arrays_it_hands_over_through_compiled_code():
    """Ufunc methods, operators, compiled functions and methods run no Python frame: the
    arrays that wrap() hands over count the entries of each, and so do the arrays computed
    from them or made by numpy's constructors inside the block; products count their
    multiply-adds. Outside the block nothing is counted and the constructors are numpy's."""
    n = 400
    rng = np.random.default_rng(2)
    v, Z = rng.normal(size=n), rng.normal(size=(n, 50))
    constructors = (np.asarray, np.array, np.zeros, np.full)
    loops = {
        "ufunc method": lambda w, Z: [np.maximum.reduce(w) for _ in range(n)],
        "ufunc call": lambda w, Z: [np.greater(w, 0.0, out=np.empty(n, bool)) for _ in range(n)],
        "operator": lambda w, Z: [w @ w for _ in range(n)],
        "np.dot": lambda w, Z: [np.dot(w, w) for _ in range(n)],
        "compiled method": lambda w, Z: [w.argmax() for _ in range(n)],
        "builtin max": lambda w, Z: [max(w) for _ in range(n)],
        "new array": lambda w, Z: (lambda u: [np.maximum.reduce(u) for _ in range(n)])(
            np.full(n, -np.inf)
        ),
        "plain copy": lambda w, Z: (lambda u: [u.max() for _ in range(n)])(np.array(w)),
    }
    for name, loop in loops.items():
        counter = check.hw4.WorkCounter(n)
        args = counter.wrap(v, Z)
        with counter:
            loop(*args)
        assert counter.elements >= n * n, name
        assert counter.entries >= n * n, name
    counter = check.hw9.WorkCounter(n)
    w, M = counter.wrap(v, Z)
    with counter:
        once = (w > w.max()) | (w < w.min())
        product = M.T @ w
    assert counter.elements <= 8 * n and n * 50 <= counter.entries <= 20 * n * 50
    assert isinstance(once, np.ndarray) and type(np.asarray(product)) is np.ndarray
    assert np.array_equal(np.asarray(product), Z.T @ v)
    assert (np.asarray, np.array, np.zeros, np.full) == constructors
    before = counter.entries
    M.T @ w  # outside the block
    assert counter.entries == before
    with check.hw4.WorkCounter(n, exempt=(Z,)) as exempt:  # wrapped inside the block
        w, M = exempt.wrap(v, Z)
        [M @ (w[:50] + 1.0) for _ in range(n)]
    assert exempt.entries == 100 * n  # w[:50] + 1.0 counts; the products with Z do not


def _hidden_tests(path, grade_id):
    """The hidden tests of graded cell ``grade_id`` in the solution notebook, compiled."""
    cell = next(c for c in _load(path)["cells"] if _nbgrader(c).get("grade_id") == grade_id)
    hidden = cell["source"].split("### BEGIN HIDDEN TESTS")[1].split("### END HIDDEN TESTS")[0]
    return compile(hidden, grade_id, "exec")


@pytest.mark.parametrize(
    "notebook, grade_id, name, fn",
    [
        ("hw4_smo", "q3-tests", "shrinkable", _shrinkable_by_ufunc_reduce),
        ("hw4_smo", "q3-tests", "shrinkable", _shrinkable_by_reduce_on_new_arrays),
        ("hw9_random_stumps", "q2-tests", "box_least_squares", _box_recomputing_the_residual),
        (
            "hw9_random_stumps",
            "q2-tests",
            "box_least_squares",
            _box_recomputing_the_gradient_by_dot,
        ),
    ],
    ids=["hw4-ufunc-reduce", "hw4-new-arrays", "hw9-residual", "hw9-dot"],
)
def test_hidden_tests_fail_answers_right_in_value_but_not_in_cost(notebook, grade_id, name, fn):
    """The hidden tests alone (not only the self-check before them) fail an answer whose
    results are right but whose cost is a power of n too high."""
    path = SOLUTION_DIR / f"{notebook}.ipynb"
    namespace = _solution_functions(path)
    hidden = _hidden_tests(path, grade_id)
    with contextlib.redirect_stdout(io.StringIO()):
        exec(hidden, dict(namespace))  # the solution passes
        namespace[name] = fn
        with pytest.raises(AssertionError):
            exec(hidden, namespace)


def _widths_from_the_beta_law(size, gamma, rng):
    """hw6 q1 by the law of v = 1 / (1 + γδ), Beta(2, 2), drawn with rng.beta: the right
    widths in law, but not by inverting F as the question asks."""
    return (1.0 / rng.beta(2.0, 2.0, size=size) - 1.0) / gamma


@pytest.mark.parametrize("seed", [0, 1, None])
def test_hw6_q1_fails_widths_of_the_right_law_not_drawn_by_inverting_f(seed, capsys):
    with pytest.raises(AssertionError, match=r"hw6\.q1: 1 of 5 checks failed"):
        check.hw6.q1(_widths_from_the_beta_law, seed=seed)
    out = capsys.readouterr().out
    assert "[FAIL] inverts F" in out and "not a monotone function of the uniforms" in out


def test_hw6_q1_passes_the_inverse_of_f_at_one_minus_u_and_a_numerical_root(capsys):
    def falling(size, gamma, rng):  # F(δ) = 1 − U: the solution's map, mirrored
        v = 0.5 - np.sin(np.arcsin(2.0 * rng.random(size) - 1.0) / 3.0)
        return (1.0 / v - 1.0) / gamma

    def bisection(size, gamma, rng):  # F(δ) = U, i.e. 3v² − 2v³ = 1 − U, by bisection in v
        target = 1.0 - rng.random(size)
        lo, hi = np.zeros_like(target), np.ones_like(target)
        for _ in range(60):
            mid = (lo + hi) / 2
            below = 3 * mid**2 - 2 * mid**3 < target
            lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
        return (2 / (lo + hi) - 1.0) / gamma

    for fn in (falling, bisection):
        assert check.hw6.q1(fn, seed=0) is None
    assert "[FAIL]" not in capsys.readouterr().out


def _hw3_solution(name):
    return _solution_functions(next(p for p in SOLUTIONS if p.name.startswith("hw3_")))[name]


def test_hw3_q2_fails_chapter_5s_gaussian_quantile(capsys):
    """Chapter 5's qmc_frequencies copied: scrambled Halton points through the Gaussian
    quantile, so the features estimate the RBF kernel, not the triangle kernel."""
    from scipy import special

    halton = _hw3_solution("scrambled_halton")

    def chapter_5(X, D, gamma, rng):
        T = X @ (np.sqrt(2 * gamma) * special.ndtri(halton(D, X.shape[1], rng))).T
        return np.hstack([np.cos(T), np.sin(T)]) / np.sqrt(D)

    for seed in range(3):
        with pytest.raises(AssertionError, match=r"hw3\.q2: [12] of 5 checks failed"):
            check.hw3.q2(chapter_5, seed=seed)
        assert "[FAIL] ψ(x)ᵀψ(y) approaches the triangle kernel" in capsys.readouterr().out


def test_hw3_q2_fails_gamma_as_a_length_scale(capsys):
    """The right quantile and points, but ω = t/γ: right at γ = 1 only."""
    halton, quantile = _hw3_solution("scrambled_halton"), _hw3_solution("fejer_quantile")

    def gamma_as_a_length_scale(X, D, gamma, rng):
        T = X @ (quantile(halton(D, X.shape[1], rng)) / gamma).T
        return np.hstack([np.cos(T), np.sin(T)]) / np.sqrt(D)

    for seed in range(3):
        with pytest.raises(AssertionError, match=r"hw3\.q2: [12] of 5 checks failed"):
            check.hw3.q2(gamma_as_a_length_scale, seed=seed)
        assert "[FAIL] ψ(x)ᵀψ(y) approaches the triangle kernel" in capsys.readouterr().out


def _walk_kernel_raising_by_the_bound(A1, labels1, A2, labels2, lam):
    """Right kernel, but the ValueError by ρ(A1)ρ(A2), an upper bound on ρ(A×)."""
    rho = np.abs(np.linalg.eigvalsh(A1)).max() * np.abs(np.linalg.eigvalsh(A2)).max()
    if lam * rho >= 1:
        raise ValueError("lam is too large")
    match = (np.asarray(labels1)[:, None] == np.asarray(labels2)[None, :]).ravel()
    Ax = np.kron(A1, A2)[np.ix_(match, match)]
    one = np.ones(len(Ax))
    return float(one @ np.linalg.solve(np.eye(len(Ax)) - lam * Ax, one))


def test_hw10_q1_fails_a_value_error_from_the_bound_on_the_spectral_radius(capsys):
    with pytest.raises(AssertionError, match=r"hw10\.q1: 1 of 6 checks failed"):
        check.hw10.q1(_walk_kernel_raising_by_the_bound, seed=0)
    assert "compare λ with the spectral radius of A× itself" in capsys.readouterr().out


def _coordinate_sum_buckets(X, widths, shifts, n_buckets, seed=0):
    """A bucket from the sum of the cell's coordinates plus a random offset per grid: right on
    average over pairs of cells, but cells (c₁ + 1, c₂ − 1) and (c₁, c₂) always collide."""
    import scipy.sparse as sp

    n, P = len(X), len(widths)
    cells = np.floor((X[:, None, :] - shifts) / widths).astype(np.int64)
    offset = np.random.default_rng(seed).integers(0, n_buckets, size=P)
    cols = ((cells.sum(axis=2) + offset) % n_buckets + n_buckets * np.arange(P)).ravel()
    data = np.full(n * P, P**-0.5)
    return sp.csr_matrix((data, cols, np.arange(0, n * P + 1, P)), shape=(n, P * n_buckets))


@pytest.mark.parametrize("seed", range(3))
def test_hw6_q2_fails_a_hash_of_the_coordinate_sum(seed, capsys):
    with pytest.raises(AssertionError, match=r"hw6\.q2: 1 of 6 checks failed"):
        check.hw6.q2(_coordinate_sum_buckets, seed=seed)
    assert "one given pair of neighbouring cells" in capsys.readouterr().out


def _fold_statistics_keeping_every_row(chunks, psi, fold_of, k):
    """The right statistics, from the features of all rows gathered first: memory grows with
    n."""
    Zs, ys, fs = [], [], []
    for X_block, y_block in chunks:
        Zs.append(psi(X_block))
        ys.append(y_block)
        fs.append(fold_of(X_block))
    Z, y, folds = np.vstack(Zs), np.concatenate(ys), np.concatenate(fs)
    stats = _empty_statistics(k, Z.shape[1])
    for f in range(k):
        if np.any(folds == f):
            _merge_into(stats, f, Z[folds == f], y[folds == f])
    return stats


def test_hw7_q1_fails_a_function_that_keeps_every_row(capsys):
    with pytest.raises(AssertionError, match=r"hw7\.q1: 1 of 5 checks failed"):
        check.hw7.q1(_fold_statistics_keeping_every_row, seed=0)
    assert "for a stream of 40,000 rows" in capsys.readouterr().out


@pytest.mark.parametrize("seed", range(3))
def test_hw7_q1_fails_raw_sums_centred_at_the_end(seed, capsys):
    """Chapter 11's raw sums, centred afterwards, are right in exact arithmetic and lose the
    digits a large offset shares: only the test with the offset fails."""
    with pytest.raises(AssertionError, match=r"hw7\.q1: 1 of 5 checks failed"):
        check.hw7.q1(_fold_statistics_from_raw_sums, seed=seed)
    out = capsys.readouterr().out
    assert "[FAIL] keeps its digits" in out and "merge those statistics" in out


@pytest.mark.parametrize("seed", range(3))
def test_hw7_q2_fails_folds_summed_instead_of_merged(seed, capsys):
    with pytest.raises(AssertionError, match=r"hw7\.q2: \d of 3 checks failed"):
        check.hw7.q2(_cv_folds_summed_not_merged, seed=seed)
    assert "the spread of the folds' means" in capsys.readouterr().out


def _halton_on_a_coarse_grid(n, d, rng):
    """Scrambled Halton points with three digits beyond those the first n points need: each
    point takes one of a few dozen values, not a uniform one."""
    U = np.empty((n, d))
    for j, base in enumerate([2, 3, 5, 7, 11, 13][:d]):
        digits = int(np.ceil(np.log(max(n, 2)) / np.log(base))) + 3
        perms = np.argsort(rng.random((digits, base)), axis=1)
        rest, weight = np.arange(n), 1.0 / base
        U[:, j] = 0.0
        for k in range(digits):
            U[:, j] += perms[k][rest % base] * weight
            rest //= base
            weight /= base
    return np.clip(U, np.finfo(float).tiny, 1 - np.finfo(float).epsneg)


def test_hw3_q1_fails_points_on_a_coarse_grid(capsys):
    with pytest.raises(AssertionError, match=r"hw3\.q1: 1 of 5 checks failed"):
        check.hw3.q1(_halton_on_a_coarse_grid, seed=0)
    assert "the points lie on a coarse grid" in capsys.readouterr().out


def _power_function_with_unit_diagonal(kernel, centers, points):
    """P² = 1 − k_xᵀK_X⁻¹k_x: right for the RBF kernel alone, where K(x, x) = 1."""
    B = kernel(centers, points)
    return np.sqrt(np.maximum(1.0 - np.sum(B * np.linalg.solve(kernel(centers, centers), B), 0), 0))


@pytest.mark.parametrize("seed", range(3))
def test_hw8_q2_fails_a_power_function_that_takes_k_x_x_as_1(seed, capsys):
    with pytest.raises(AssertionError, match=r"hw8\.q2: 1 of 4 checks failed"):
        check.hw8.q2(_power_function_with_unit_diagonal, seed=seed)
    assert "kernel.diag" in capsys.readouterr().out


def test_hw8_q3_fails_p_max_reported_as_p_squared(capsys):
    path = next(p for p in SOLUTIONS if p.name.startswith("hw8_"))
    p_greedy = _solution_functions(path)["p_greedy"]

    def squared(kernel, candidates, m):
        indices, p_max = p_greedy(kernel, candidates, m)
        return indices, np.asarray(p_max) ** 2

    for seed in range(3):
        # the first test fails it too where K(x, x) = c is not 1, so that p_max[0]² ≠ p_max[0]
        with pytest.raises(AssertionError, match=r"hw8\.q3: [12] of 3 checks failed"):
            check.hw8.q3(squared, seed=seed)
        assert "not of P²" in capsys.readouterr().out


def _smo_never_unshrinking(K, y, C, tol=1e-5, shrink=True, every=10, max_steps=100_000):
    """SMO with shrinking that stops once the active variables satisfy the KKT conditions,
    never checking the variables set aside."""
    n = len(y)
    lower, upper = np.where(y > 0, 0.0, -C), np.where(y > 0, C, 0.0)
    beta, v, active = np.zeros(n), np.array(y, dtype=float), np.arange(n)
    n_kernel = steps = 0
    while steps < max_steps:
        va, grow = v[active], beta[active] < upper[active]
        drop = beta[active] > lower[active]
        p, q = np.argmax(np.where(grow, va, -np.inf)), np.argmin(np.where(drop, va, np.inf))
        if va[p] - va[q] <= tol:
            break
        if shrink and steps % every == 0:
            out = (~grow & (va > va[p])) | (~drop & (va < va[q]))
            p, q = p - np.sum(out[:p]), q - np.sum(out[:q])
            active = active[~out]
        i, j = active[p], active[q]
        row_i, row_j = K[i, active], K[j, active]
        n_kernel, steps = n_kernel + 2 * len(active), steps + 1
        curv = max(row_i[p] + row_j[q] - 2.0 * row_i[q], 1e-12)
        tau = min((v[i] - v[j]) / curv, upper[i] - beta[i], beta[j] - lower[j])
        beta[i], beta[j] = min(beta[i] + tau, upper[i]), max(beta[j] - tau, lower[j])
        v[active] -= tau * (row_i - row_j)
    return beta * y, n_kernel, steps


def test_hw4_q4_fails_smo_that_never_unshrinks_and_a_count_of_whole_rows(capsys):
    for seed in range(3):  # the new test fails it; the two of the default every may too
        with pytest.raises(AssertionError, match=r"hw4\.q4: \d of 4 checks failed"):
            check.hw4.q4(_smo_never_unshrinking, seed=seed)
        assert "with every = 1 and C = " in capsys.readouterr().out

    path = next(p for p in SOLUTIONS if p.name.startswith("hw4_"))
    smo = _solution_functions(path)["smo_shrinking"]

    def whole_rows(K, y, C, tol=1e-5, shrink=True, every=10):
        alpha, _, n_steps = smo(K, y, C, tol, shrink=shrink, every=every)
        return alpha, 2 * len(y) * n_steps, n_steps

    with pytest.raises(AssertionError, match=r"hw4\.q4: 1 of 4 checks failed"):
        check.hw4.q4(whole_rows, seed=0)
    assert "of 2n kernel values per step with shrinking" in capsys.readouterr().out


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


# -- grading: messages, hidden tests, reruns ----------------------------------------------------
@pytest.mark.parametrize("key", sorted(WRONG), ids=[f"{hw}.{q}" for hw, q in sorted(WRONG)])
def test_self_check_messages_show_no_expected_value(key, capsys):
    """A failed self-check says which property failed; it never prints a value to copy."""
    hw, q = key
    fn, _ = WRONG[key]
    with pytest.raises(AssertionError):
        getattr(getattr(check, hw), q)(fn, seed=0)
    out = capsys.readouterr().out
    # shapes may be named ("expected (5, 12)"); numbers, arrays and formulas may not
    assert not re.search(r"expected:?\s*[-+\d\[]", out), out
    assert not re.search(r"(?i)the right answer|should be\s*[-+\d\[]", out), out


def _graded_cells(nb):
    return [c for c in nb["cells"] if _nbgrader(c).get("grade") and c["cell_type"] == "code"]


@pytest.mark.parametrize("path", SOLUTIONS, ids=_ids(SOLUTIONS))
def test_every_graded_cell_has_hidden_tests_that_the_starter_lacks(path):
    solution = _load(path)
    starter = _load(STARTER_DIR / path.name)
    for cell in _graded_cells(solution):
        gid = _nbgrader(cell)["grade_id"]
        assert "### BEGIN HIDDEN TESTS" in cell["source"], f"{gid} has no hidden tests"
        hidden = cell["source"].split("### BEGIN HIDDEN TESTS")[1].split("### END HIDDEN TESTS")[0]
        assert len([ln for ln in hidden.splitlines() if ln.strip()]) >= 1, gid
    for cell in _graded_cells(starter):
        assert "HIDDEN" not in cell["source"]


@pytest.mark.parametrize("path", SOLUTIONS, ids=_ids(SOLUTIONS))
def test_graded_cells_pass_200_reruns_on_the_solution(path):
    """Each graded cell, hidden tests included, draws fresh random inputs on every run; against
    the solution it passes every one of 200 runs (a fair grade does not depend on luck)."""
    nb = _load(path)
    namespace = {"__name__": "__homework__"}
    with contextlib.redirect_stdout(io.StringIO()):
        for cell in nb["cells"]:
            if cell["cell_type"] == "code":
                exec(compile(cell["source"], str(path), "exec"), namespace)
        for cell in _graded_cells(nb):
            code = compile(cell["source"], _nbgrader(cell)["grade_id"], "exec")
            for run in range(200):
                try:
                    exec(code, namespace)
                except Exception as err:
                    raise AssertionError(
                        f"{_nbgrader(cell)['grade_id']} failed on run {run}: {err!r}"
                    ) from err


def test_every_assignment_is_in_the_table_of_contents_and_the_guides():
    toc = (ROOT / "_toc.yml").read_text(encoding="utf-8")
    index = (STARTER_DIR / "index.md").read_text(encoding="utf-8")
    guide = (ROOT / "book" / "instructors.md").read_text(encoding="utf-8")
    for path in SOLUTIONS:
        assert f"book/homework/{path.stem}\n" in toc, path.stem
        assert f"({path.name})" in index, path.stem
        assert f"`{path.stem}`" in guide, path.stem


def test_the_guide_states_each_assignments_points_as_its_notebook_grades_them():
    # the instructors' table said 10 + 4 for hw4 after a graded cell had grown to 11 points
    guide = (ROOT / "book" / "instructors.md").read_text(encoding="utf-8")
    for path in SOLUTIONS:
        found = re.search(rf"\| `{path.stem}` \| [^|]+ \| (\d+) \+ (\d+) \|", guide)
        assert found, f"{path.stem}: no 'auto + written' points in the instructors' table"
        points = {"code": 0, "markdown": 0}
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            grading = cell["metadata"].get("nbgrader", {})
            if grading.get("grade"):
                points[cell["cell_type"]] += grading["points"]
        assert (int(found[1]), int(found[2])) == (points["code"], points["markdown"]), path.stem


# -- graded answers are not in the chapters -------------------------------------------------------
CHAPTERS = sorted((ROOT / "book").glob("[0-9][0-9]_*.ipynb"))
FENCE = re.compile(r"```(?:python|\{code-cell\}[^\n]*|\{code-block\}[^\n]*)?\n(.*?)```", re.S)
WINDOW = 3  # consecutive statements that make a copy


def _normalised_lines(source):
    """Code as a list of lines of tokens: every name becomes ID (attributes such as
    ``np.linalg.solve`` keep theirs), strings STR, comments and whitespace are dropped."""
    lines, current, previous = [], [], None
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return []
    for tok in tokens:
        if tok.type in (tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT):
            continue
        if tok.type in (tokenize.NEWLINE, tokenize.NL, tokenize.ENDMARKER):
            if current:
                lines.append(" ".join(current))
            current, previous = [], None
            continue
        if tok.type == tokenize.STRING:
            word = "STR"
        elif tok.type == tokenize.NAME and not keyword.iskeyword(tok.string) and previous != ".":
            word = "ID"
        else:
            word = tok.string
        current.append(word)
        previous = tok.string
    return lines


def _chapter_code():
    """Every chapter's code cells and the code in its markdown (exercise solutions included)."""
    blocks = []
    for path in CHAPTERS:
        for cell in _load(path)["cells"]:
            if cell["cell_type"] == "code":
                blocks.append(cell["source"])
            else:
                blocks.extend(FENCE.findall(cell["source"]))
    return "\n" + "\n\n".join("\n".join(_normalised_lines(b)) for b in blocks) + "\n"


def _copied(solution_source, chapter_text):
    lines = _normalised_lines(textwrap.dedent(solution_source))
    windows = ["\n".join(lines[i : i + WINDOW]) for i in range(len(lines) - WINDOW + 1)]
    if len(lines) < WINDOW:
        windows = ["\n".join(lines)] if lines else []
    return [w for w in windows if f"\n{w}\n" in chapter_text]


@pytest.fixture(scope="module")
def chapter_text():
    return _chapter_code()


def _renamed(source):
    """The same code with every variable renamed (attributes kept) and a comment added."""
    out, previous = [], None
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        text = tok.string
        if tok.type == tokenize.NAME and not keyword.iskeyword(text) and previous != ".":
            text = f"{text}_renamed"
        out.append((tok.type, text))
        previous = tok.string
    return "# copied\n" + tokenize.untokenize(out)


def test_the_copy_detector_finds_chapter_code_under_other_names(chapter_text):
    """The detector sees a chapter's code again after renaming and reformatting, and does not
    see code that is merely similar."""
    source = next(
        cell["source"]
        for cell in _load(CHAPTERS[0])["cells"]
        if cell["cell_type"] == "code" and len(_normalised_lines(cell["source"])) >= 6
    )
    assert _copied(_renamed(source), chapter_text)
    assert not _copied("x = np.zeros(3)\ny = np.fft.fft(x)\nz = np.fft.ifft(y)\n", chapter_text)


@pytest.mark.parametrize("path", SOLUTIONS, ids=_ids(SOLUTIONS))
def test_graded_code_is_not_in_a_chapter(path, chapter_text):
    """No three consecutive statements of a graded solution appear in a chapter or in its
    exercise solutions, after renaming every variable and dropping whitespace and comments."""
    for cell in _load(path)["cells"]:
        for body in re.findall(r"### BEGIN SOLUTION\n(.*?)### END SOLUTION", cell["source"], re.S):
            copies = _copied(body, chapter_text)
            assert not copies, f"{_nbgrader(cell)['grade_id']} repeats a chapter: {copies[0]!r}"
