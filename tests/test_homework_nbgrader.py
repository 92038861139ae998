"""nbgrader end to end on a temporary course: validate the starters, and the full round trip
generate_assignment → release_assignment → fetch → submit → collect → autograde for every
assignment, so that a change that breaks one assignment's grading fails here.

Each round trip executes its notebook three times (a correct, an untouched and a partly wrong
submission), four for the assignments that also grade an answer right in value but too costly
(:data:`SLOW_ANSWER`): 15 to 30 s per assignment on two cores, three to four minutes for all
ten."""

import json
import os
import pathlib
import shutil
import sys
import time

import pytest

nbgrader = pytest.importorskip("nbgrader")

from nbgrader.api import Gradebook  # noqa: E402
from nbgrader.auth import Authenticator  # noqa: E402
from nbgrader.coursedir import CourseDirectory  # noqa: E402
from nbgrader.exchange.default import ExchangeFetchAssignment, ExchangeSubmit  # noqa: E402
from nbgrader.validator import Validator  # noqa: E402
from traitlets.config import Config  # noqa: E402

from kernelcourse.book.homework_release import COURSE_ID, _nbgrader_api, generate_assignment  # noqa: E402
from kernelcourse.datasets import DATA_ENV, SOURCES, _search_dirs  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
SOLUTIONS = ROOT / "book" / "homework" / "solutions"
STARTERS = ROOT / "book" / "homework"
# For every assignment, a deliberately wrong answer to one question (the solution cell's
# replacement, a mistake a student could make; most are those of tests/test_homework.py's WRONG)
# and the points that question loses. No other graded cell calls the function replaced (hw3's
# question 2 calls question 1's scrambled_halton, so its wrong answer is question 2's), so the
# loss does not cascade: the submission loses exactly that question's points.
WRONG_ANSWER = {
    # the recursion's update run upwards in place: a coordinate enters a product more than
    # once, and the loop sums over multisets of size r, not subsets
    "hw1_psd_kernels": (
        "q2-anova",
        "def anova_gram(X, Y, r):\n"
        "    X, Y = np.asarray(X, dtype=float), np.asarray(Y, dtype=float)\n"
        "    if r < 0:\n"
        "        raise ValueError('r must be non-negative')\n"
        "    E = np.zeros((r + 1, len(X), len(Y)))\n"
        "    E[0] = 1.0\n"
        "    for j in range(X.shape[1]):\n"
        "        for k in range(1, r + 1):\n"
        "            E[k] += np.outer(X[:, j], Y[:, j]) * E[k - 1]\n"
        "    return E[r]",
        2.0,
    ),
    # the leave-one-out shortcut applied fold by fold: the diagonal of H_FF, not the block
    "hw2_kernel_ridge": (
        "q2-kfold",
        "def kfold_residuals(K, y, lams, folds):\n"
        "    n = len(y)\n"
        "    E = np.empty((len(lams), n))\n"
        "    for j, lam in enumerate(lams):\n"
        "        A = np.linalg.inv(K + lam * np.eye(n))\n"
        "        E[j] = (A @ y) / np.diag(A)\n"
        "    return E",
        3.0,
    ),
    # chapter 5's qmc_frequencies copied: Halton points through the Gaussian quantile, the
    # RBF kernel's law, where the triangle kernel's law needs its own quantile by a root finder
    "hw3_random_fourier": (
        "q2-features",
        "def fejer_quantile(u):\n"
        "    return special.ndtri(u)\n"
        "\n"
        "\n"
        "def qmc_triangle_features(X, D, gamma, rng):\n"
        "    X = np.asarray(X, dtype=float)\n"
        "    U = scrambled_halton(D, X.shape[1], rng)\n"
        "    phases = X @ (np.sqrt(2 * gamma) * special.ndtri(U)).T\n"
        "    return np.hstack([np.cos(phases), np.sin(phases)]) / np.sqrt(D)",
        3.0,
    ),
    # a forgotten constraint: the unconstrained step, then each alpha clipped to [0, C] on its
    # own, which breaks y^T alpha = 0 (and divides by a curvature that may be <= 0)
    "hw4_smo": (
        "q2-step",
        "def smo_step(alpha, K, y, C, i, j):\n"
        "    alpha = np.array(alpha, dtype=float)\n"
        "    g = 1.0 - y * (K @ (alpha * y))\n"
        "    t = (y[i] * g[i] - y[j] * g[j]) / (K[i, i] + K[j, j] - 2 * K[i, j])\n"
        "    alpha[i] += y[i] * t\n"
        "    alpha[j] -= y[j] * t\n"
        "    return np.clip(alpha, 0.0, C)",
        2.0,
    ),
    # a wrong formula: the Lanczos diagonal without its beta / alpha terms (x is still right)
    "hw5_nystroem_preconditioned_cg": (
        "q2-pcg",
        "def pcg_ritz(matvec, b, precondition, tol, max_iter):\n"
        "    x, r = np.zeros(len(b)), np.array(b, dtype=float)\n"
        "    z = precondition(r)\n"
        "    p, rz, steps = z.copy(), r @ z, []\n"
        "    while np.linalg.norm(r) > tol * np.linalg.norm(b) and len(steps) < max_iter:\n"
        "        Ap = matvec(p)\n"
        "        steps.append(rz / (p @ Ap))\n"
        "        x, r = x + steps[-1] * p, r - steps[-1] * Ap\n"
        "        z = precondition(r)\n"
        "        rz_new = r @ z\n"
        "        p, rz = z + rz_new / rz * p, rz_new\n"
        "    return x, 1 / np.array(steps)",
        4.0,
    ),
    # the wrong distribution: chapter 9's Gamma(2, 1/gamma) widths, whose co-occupancy is the
    # Laplacian exp(-gamma Delta), not the (1 + gamma Delta)^-2 asked
    "hw6_random_binning": (
        "q1-widths",
        "def rational_widths(size, gamma, rng):\n    return rng.gamma(2.0, 1.0 / gamma, size=size)",
        3.0,
    ),
    # every fold penalised by lambda times all n rows, the held-out fold's included
    "hw7_out_of_core_sgd": (
        "q2-cv-path",
        "def cv_path(n, zbar, ybar, S, t, q, lams):\n"
        "    k, D = zbar.shape\n"
        "    errors, W = np.zeros(len(lams)), np.zeros((len(lams), k, D))\n"
        "    b = np.zeros((len(lams), k))\n"
        "    for f in range(k):\n"
        "        r = np.arange(k) != f\n"
        "        m_z, m_y = n[r] @ zbar[r] / n[r].sum(), n[r] @ ybar[r] / n[r].sum()\n"
        "        d_z, d_y = zbar[r] - m_z, ybar[r] - m_y\n"
        "        S_t = S[r].sum(0) + d_z.T @ (n[r][:, None] * d_z)\n"
        "        t_t = t[r].sum(0) + d_z.T @ (n[r] * d_y)\n"
        "        for j, lam in enumerate(lams):\n"
        "            w = np.linalg.solve(S_t + lam * n.sum() * np.eye(D), t_t)\n"
        "            W[j, f], b[j, f] = w, m_y - m_z @ w\n"
        "            e = ybar[f] - b[j, f] - zbar[f] @ w\n"
        "            errors[j] += q[f] - 2 * t[f] @ w + w @ S[f] @ w + n[f] * e**2\n"
        "    return errors / n.sum(), W, b",
        3.0,
    ),
    # centring y is not the unpenalised offset: the residual condition holds, sum(alpha) = 0
    # does not
    "hw8_rkhs_offset_and_power_function": (
        "q1-offset",
        "def krr_with_offset(K, y, lam):\n"
        "    b = float(np.mean(y))\n"
        "    return np.linalg.solve(K + lam * np.eye(len(y)), y - b), b",
        3.0,
    ),
    # chapter 7's box_erm copied with the new stop: the right minimiser and the right stop,
    # but projected gradient (FISTA), not coordinate descent
    "hw9_random_stumps": (
        "q2-box",
        "def box_least_squares(Z, y, C, tol=1e-8, max_sweeps=10_000):\n"
        "    n, q = Z.shape\n"
        "    step, c = n / np.linalg.norm(Z, 2) ** 2, C / q\n"
        "    alpha = point = np.zeros(q)\n"
        "    for k in range(1, 100 * max_sweeps + 1):\n"
        "        new = np.clip(point - step * Z.T @ (Z @ point - y) / n, -c, c)\n"
        "        point, alpha = new + (k - 1) / (k + 2) * (new - alpha), new\n"
        "        g = Z.T @ (Z @ alpha - y) / n\n"
        "        if np.max(np.abs(np.clip(alpha - g, -c, c) - alpha)) <= tol:\n"
        "            return alpha, k\n"
        "    return alpha, 100 * max_sweeps",
        3.0,
    ),
    # off by one: the series summed from walks of length 1, the length-0 walks (the matching
    # vertex pairs) left out
    "hw10_graph_walk_kernel": (
        "q1-direct",
        "def walk_kernel(A1, labels1, A2, labels2, lam):\n"
        "    match = (np.asarray(labels1)[:, None] == np.asarray(labels2)[None, :]).ravel()\n"
        "    Ax = np.kron(A1, A2)[np.ix_(match, match)]\n"
        "    if lam * np.abs(np.linalg.eigvalsh(Ax)).max() >= 1:\n"
        "        raise ValueError('lam too large')\n"
        "    one = np.ones(len(Ax))\n"
        "    return float(one @ np.linalg.solve(np.eye(len(Ax)) - lam * Ax, one)) - len(Ax)",
        3.0,
    ),
}
# Answers whose values are right but whose cost is a power of n too high, which the graded
# cells count (never time): they lose that question's points too.
SLOW_ANSWER = {
    # m(beta) and M(beta) recomputed for every variable at a bound by a ufunc method, which
    # runs no Python frame and allocates nothing: O(n^2) where the question asks for O(n)
    "hw4_smo": (
        "q3-shrinkable",
        "def shrinkable(alpha, K, y, C):\n"
        "    beta = alpha * y\n"
        "    v = y - K @ beta\n"
        "    up = beta < np.where(y > 0, C, 0.0)\n"
        "    low = beta > np.where(y > 0, 0.0, -C)\n"
        "    v_up, v_low = np.where(up, v, -np.inf), np.where(low, v, np.inf)\n"
        "    out = np.zeros(len(y), dtype=bool)\n"
        "    for t in range(len(y)):\n"
        "        if not up[t]:\n"
        "            out[t] = v[t] > np.maximum.reduce(v_up)\n"
        "        elif not low[t]:\n"
        "            out[t] = v[t] < np.minimum.reduce(v_low)\n"
        "    return out",
        2.0,
    ),
    # coordinate descent with the residual Z alpha - y recomputed for every coefficient:
    # O(nq^2) a sweep where the question asks for O(nq)
    "hw9_random_stumps": (
        "q2-box",
        "def box_least_squares(Z, y, C, tol=1e-8, max_sweeps=10_000):\n"
        "    Z = np.asarray(Z, dtype=float)\n"
        "    n, q = Z.shape\n"
        "    c = C / q\n"
        "    alpha = np.zeros(q)\n"
        "    for sweep in range(1, max_sweeps + 1):\n"
        "        for j in range(q):\n"
        "            zz = Z[:, j] @ Z[:, j]\n"
        "            if zz > 0:\n"
        "                r = Z @ alpha - y\n"
        "                alpha[j] = min(max(alpha[j] - Z[:, j] @ r / zz, -c), c)\n"
        "        g = Z.T @ (Z @ alpha - y) / n\n"
        "        if np.max(np.abs(np.clip(alpha - g, -c, c) - alpha)) <= tol:\n"
        "            return alpha, sweep\n"
        "    return alpha, max_sweeps",
        3.0,
    ),
}
ROUND_TRIPS = sorted(WRONG_ANSWER, key=lambda name: int(name.split("_")[0][2:]))
STUDENTS = ("correct", "empty", "one-wrong")
# The files an assignment's kernels read through kernelcourse.datasets, by the loader it calls.
LOADER_FILES = {
    "load_adult": ("adult.data", "adult.test"),
    "load_covertype": ("covtype",),
    "load_mnist": ("mnist",),
}


def _missing_data(assignment):
    """The data files the assignment loads that are neither in $KERNELCOURSE_DATA nor in the
    cache: its kernels (which inherit this process's environment) would download them."""
    text = (SOLUTIONS / f"{assignment}.ipynb").read_text(encoding="utf-8")
    folders = _search_dirs(None)  # where the loaders look, in their order
    return [
        SOURCES[key].filename
        for loader, keys in LOADER_FILES.items()
        if f"{loader}(" in text
        for key in keys
        if not any((folder / SOURCES[key].filename).is_file() for folder in folders)
    ]


@pytest.fixture
def kernel_env(monkeypatch):
    """Kernels started by nbgrader import this checkout, and its gradebook finds ``alembic``.

    The kernels inherit the rest of this process's environment, ``KERNELCOURSE_DATA`` (the
    folder the data loaders read) included."""
    monkeypatch.setenv(
        "PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    )
    monkeypatch.setenv(
        "PATH", os.pathsep.join([str(pathlib.Path(sys.executable).parent), os.environ["PATH"]])
    )


def _graded(nb):
    return [c for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("grade")]


@pytest.mark.parametrize("name", ["hw1_psd_kernels", "hw3_random_fourier"])
def test_nbgrader_validate_flags_every_unanswered_cell(name, tmp_path, kernel_env):
    """`nbgrader validate` on an untouched starter fails every graded cell, written ones too."""
    shutil.copyfile(STARTERS / f"{name}.ipynb", tmp_path / f"{name}.ipynb")
    start = time.perf_counter()
    results = Validator().validate(str(tmp_path / f"{name}.ipynb"))
    print(f"nbgrader validate {name}: {time.perf_counter() - start:.1f} s")
    assert "changed" not in results and "type_changed" not in results
    nb = json.loads((STARTERS / f"{name}.ipynb").read_text(encoding="utf-8"))
    graded = {"".join(c["source"]).strip() for c in _graded(nb)}
    failed = {cell["source"] for cell in results.get("failed", [])}
    assert failed == graded
    assert any(c["cell_type"] == "markdown" for c in _graded(nb))


def _fill_in(starter_path, solution_path, out_path, replace=None):
    """The starter with every solution cell answered as in the solution notebook, except the
    cells named in ``replace`` (grade id -> source), answered with that source instead."""
    starter = json.loads(starter_path.read_text(encoding="utf-8"))
    solution = json.loads(solution_path.read_text(encoding="utf-8"))
    answers = {
        c["metadata"]["nbgrader"]["grade_id"]: "".join(c["source"])
        for c in solution["cells"]
        if c["metadata"].get("nbgrader", {}).get("solution")
    }
    answers.update(replace or {})
    for cell in starter["cells"]:
        meta = cell["metadata"].get("nbgrader", {})
        if meta.get("solution"):
            lines = answers[meta["grade_id"]].splitlines()
            cell["source"] = "\n".join(
                line
                for line in lines
                if line.strip() not in ("### BEGIN SOLUTION", "### END SOLUTION")
            )
    out_path.write_text(json.dumps(starter, indent=1), encoding="utf-8")


def _student(config, student_id, home, assignment):
    coursedir = CourseDirectory(config=config)
    coursedir.student_id = student_id
    coursedir.assignment_id = assignment
    student_config = Config(config)
    student_config.Exchange.assignment_dir = str(home)
    return coursedir, student_config


@pytest.mark.parametrize("assignment", ROUND_TRIPS)
def test_nbgrader_round_trip_scores_correct_empty_and_partly_wrong_submissions(
    assignment, tmp_path, kernel_env
):
    """generate → release → fetch → submit → collect → autograde: the solution scores full
    marks, the untouched starter zero, one wrong answer loses exactly that question's points.
    The points come from the hidden tests, which only the instructor's notebook holds."""
    missing = _missing_data(assignment)
    if missing:
        pytest.skip(f"{', '.join(missing)} not in ${DATA_ENV} or the cache; no download in tests")
    course, exchange = tmp_path / "course", tmp_path / "exchange"
    exchange.mkdir()
    solution = SOLUTIONS / f"{assignment}.ipynb"
    timings = {}
    start = time.perf_counter()
    released = generate_assignment(solution, course, exchange=exchange, database=True)
    timings["generate_assignment"] = time.perf_counter() - start
    assert "HIDDEN TESTS" not in released.read_text(encoding="utf-8")
    api = _nbgrader_api(course, exchange)
    assert api.release_assignment(assignment)["success"]

    config = Config()
    config.CourseDirectory.root = str(course)
    config.CourseDirectory.course_id = COURSE_ID
    config.Exchange.root = str(exchange)
    config.Exchange.cache = str(tmp_path / "cache")
    grade_id, wrong_source, lost = WRONG_ANSWER[assignment]
    students = STUDENTS + (("one-slow",) if assignment in SLOW_ANSWER else ())
    start = time.perf_counter()
    for student in students:
        home = tmp_path / "students" / student
        home.mkdir(parents=True)
        coursedir, student_config = _student(config, student, home, assignment)
        auth = Authenticator(config=student_config)
        ExchangeFetchAssignment(
            coursedir=coursedir, authenticator=auth, config=student_config
        ).start()
        fetched = home / assignment / f"{assignment}.ipynb"
        assert "HIDDEN TESTS" not in fetched.read_text(encoding="utf-8")
        if student == "correct":
            _fill_in(fetched, solution, fetched)
        elif student == "one-wrong":
            _fill_in(fetched, solution, fetched, replace={grade_id: wrong_source})
        elif student == "one-slow":
            slow_id, slow_source, _ = SLOW_ANSWER[assignment]
            _fill_in(fetched, solution, fetched, replace={slow_id: slow_source})
        ExchangeSubmit(coursedir=coursedir, authenticator=auth, config=student_config).start()
    timings["fetch + submit"] = time.perf_counter() - start

    assert api.collect(assignment)["success"]
    for student in students:
        start = time.perf_counter()
        result = api.autograde(assignment, student)
        assert result["success"], result.get("log")
        timings[f"autograde {student}"] = time.perf_counter() - start

    # every cell of the correct submission ran, the ungraded ones (data loading) too
    graded = course / "autograded" / "correct" / assignment / f"{assignment}.ipynb"
    errors = [
        f"{output['ename']}: {output['evalue']}"
        for cell in json.loads(graded.read_text(encoding="utf-8"))["cells"]
        for output in cell.get("outputs", [])
        if output["output_type"] == "error"
    ]
    assert not errors, errors
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", COURSE_ID) as gb:
        correct = gb.find_submission(assignment, "correct")
        empty = gb.find_submission(assignment, "empty")
        wrong = gb.find_submission(assignment, "one-wrong")
        max_code = correct.max_code_score
        assert max_code > lost > 0
        assert correct.code_score == pytest.approx(max_code)
        assert empty.code_score == pytest.approx(0.0)
        assert wrong.code_score == pytest.approx(max_code - lost)
        if assignment in SLOW_ANSWER:
            slow = gb.find_submission(assignment, "one-slow")
            assert slow.code_score == pytest.approx(max_code - SLOW_ANSWER[assignment][2])
        # written answers wait for a person; left unanswered they are scored 0 at once
        assert correct.needs_manual_grade and correct.written_score == pytest.approx(0.0)
        assert empty.written_score == pytest.approx(0.0)
    print(
        f"nbgrader round trip {assignment}:",
        ", ".join(f"{k} {v:.1f} s" for k, v in timings.items()),
    )
