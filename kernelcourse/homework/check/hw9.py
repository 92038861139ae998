"""Self-checks for homework 9: random stumps as kitchen sinks and a box-constrained fit.

A stump ψ(x; k, t) = sign(x_k − t) picks a coordinate k uniformly and a threshold t uniformly on
[low, high]. The checks test the distribution of (k, t), that the features are the stumps of the
returned parameters, and the optimality (KKT) conditions, the stopping rule and the one-sweep
property of the box-constrained least squares fit by coordinate descent. None stores an expected
value.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from ._core import SelfCheck, as_numbers, close, fresh_rng
from ._work import WorkCounter, counted_call

__all__ = ["q1", "q2", "kkt_violation", "WorkCounter"]

# Library routines that would solve the box-constrained problem in one call.
SOLVERS = ("scipy.optimize", "sklearn")


def kkt_violation(Z, y, beta, C):
    """max_j |clip(β_j − g_j, −C/q, C/q) − β_j|, g = Zᵀ(Zβ − y)/n: zero exactly at the optimum."""
    n, q = Z.shape
    g = Z.T @ (Z @ beta - y) / n
    bound = C / q
    return float(np.max(np.abs(np.clip(beta - g, -bound, bound) - beta)))


def _coordinates(coords, q, d):
    """The coordinate of each stump as ints, or an AssertionError saying what is wrong with it
    (a NaN or a fraction would otherwise reach numpy's indexing as a bare IndexError)."""
    coords = as_numbers(coords, "coords")
    assert coords.shape == (q,), f"coords has shape {coords.shape}, expected ({q},)"
    assert np.all(np.isfinite(coords)) and np.all(coords == np.round(coords)), (
        "coords holds a value that is not a whole number: one column index per stump"
    )
    assert np.all((coords >= 0) & (coords < d)), f"a coordinate outside 0, …, {d - 1}"
    return coords.astype(int)


def _triple(out):
    assert isinstance(out, tuple | list) and len(out) == 3, (
        "return the triple (Z, coords, thresholds)"
    )
    return out


def q1(student_stump_features, *, seed=None):
    """Check ``stump_features(X, q, low, high, rng) -> (Z, coords, thresholds)``."""
    rng = fresh_rng(seed)
    c = SelfCheck("hw9.q1", student_stump_features)

    @c.test(
        "Z holds the stumps of the returned coordinates and thresholds, scaled by 1/√q",
        "feature j compares one coordinate of x with one threshold; the scaling makes "
        "z(x)ᵀz(x) = 1.",
    )
    def _():
        X = rng.uniform(-1, 1, size=(30, 4))
        Z, coords, thresholds = _triple(c.fn(X, 50, -1.0, 1.0, rng))
        Z, thresholds = as_numbers(Z, "Z"), as_numbers(thresholds, "thresholds")
        assert Z.shape == (30, 50), f"Z has shape {Z.shape}, expected (30, 50)"
        assert thresholds.shape == (50,), "one (k, t) per feature"
        signs = np.where(X[:, _coordinates(coords, 50, 4)] >= thresholds, 1.0, -1.0)
        close(Z, signs / np.sqrt(50), atol=1e-12, what="Z")

    @c.test(
        "coordinates are uniform on {0, …, d − 1} and thresholds uniform on [low, high]",
        "each feature draws its own coordinate and threshold, independently.",
    )
    def _():
        d, low, high = 5, float(rng.uniform(-3, 0)), float(rng.uniform(1, 3))
        _, coords, thresholds = _triple(c.fn(np.zeros((2, d)), 20_000, low, high, rng))
        counts = np.bincount(_coordinates(coords, 20_000, d), minlength=d)
        thresholds = as_numbers(thresholds, "thresholds")
        p_coords = stats.chisquare(counts).pvalue
        p_thresh = stats.kstest(thresholds, stats.uniform(low, high - low).cdf).pvalue
        assert p_coords > 1e-6, f"the coordinates are not uniform (χ² test p = {p_coords:.2g})"
        assert p_thresh > 1e-6, f"the thresholds are not uniform (KS test p = {p_thresh:.2g})"

    @c.test(
        "draws from the generator it is given",
        "draw from the rng argument, not from np.random or a new generator.",
    )
    def _():
        X = rng.normal(size=(4, 3))
        a = _triple(c.fn(X, 7, -1.0, 1.0, np.random.default_rng(5)))
        b = _triple(c.fn(X, 7, -1.0, 1.0, np.random.default_rng(5)))
        close(a[2], b[2], rtol=0, atol=0, what="the thresholds from equal seeds")

    c.finish()


#: The problem on which q2 counts the work of a sweep (n rows, q orthogonal columns, which one
#: sweep solves), and what a sweep of O(nq) stays within there: entries of arrays through
#: numpy, and lines of Python, per nq (the solution: about 13 entries and 0.02 lines; a sweep
#: in plain Python lists about 8 lines; recomputing Zβ for every coefficient, about q + 10
#: entries).
COST_N, COST_Q = 150, 150
ENTRIES_PER_NQ = 40


def q2(student_box_least_squares, *, seed=None):
    """Check ``box_least_squares(Z, y, C, tol) -> (beta, n_sweeps)`` by its KKT conditions,
    its stopping rule and a property of coordinate descent."""
    rng = fresh_rng(seed)
    c = SelfCheck("hw9.q2", student_box_least_squares, forbid=SOLVERS)
    hint = (
        "a sweep moves each β_j in turn to the minimiser of the objective over that "
        "coefficient alone, clipped to the box, and keeps the residual Zβ − y up to date; "
        "stop when ε(β) ≤ tol after a sweep."
    )
    for C in (0.5, 50.0):

        @c.test(f"the returned β satisfies the KKT conditions (C = {C})", hint)
        def _(C=C):
            n, q = 120, 30
            Z = np.where(rng.normal(size=(n, q)) > 0, 1.0, -1.0) / np.sqrt(q)
            y = np.sign(rng.normal(size=n)) + 0.1 * rng.normal(size=n)
            beta, n_sweeps = c.fn(Z, y, C, 1e-9)
            beta = np.asarray(beta, dtype=float)
            assert beta.shape == (q,), f"beta has shape {beta.shape}, expected ({q},)"
            assert np.all(np.abs(beta) <= C / q * (1 + 1e-12)), "β leaves the box"
            assert int(n_sweeps) >= 1, "n_sweeps must count the sweeps"
            v = kkt_violation(Z, y, beta, C)
            assert v <= 1e-7, f"KKT violation {v:.2g} above 1e-7"

    @c.test(
        "stops by the optimality measure: with tol = 1e-3 it meets that tol in fewer "
        "sweeps than with tol = 1e-9 (C = 50)",
        "test ε(β) after every sweep and return as soon as it is at most tol; a fixed number "
        "of sweeps, like the fixed number of steps of chapter 7's box_erm, ignores tol.",
    )
    def _():
        n, q, C = 120, 30, 50.0
        Z = np.where(rng.normal(size=(n, q)) > 0, 1.0, -1.0) / np.sqrt(q)
        y = np.sign(rng.normal(size=n)) + 0.1 * rng.normal(size=n)
        _, tight = c.fn(Z, y, C, 1e-9)
        loose_beta, loose = c.fn(Z, y, C, 1e-3)
        loose_beta = as_numbers(loose_beta, "beta")
        assert loose_beta.shape == (q,), f"beta has shape {loose_beta.shape}, expected ({q},)"
        v = kkt_violation(Z, y, loose_beta, C)
        assert v <= 1e-3, f"with tol = 1e-3 the returned β has ε(β) = {v:.2g}, above tol"
        assert int(loose) < int(tight), (
            f"{int(loose)} sweeps with tol = 1e-3 and {int(tight)} with tol = 1e-9: "
            "the loose tolerance should stop sooner"
        )

    @c.test(
        "one sweep solves a problem whose columns are orthogonal, of lengths 1 to 5",
        "with orthogonal columns the objective is a sum of problems in one coefficient "
        "each, and one exact minimisation per coefficient solves them all; a gradient step "
        "of length 1/L barely moves the coefficients of the short columns.",
    )
    def _():
        n, q = 50, 10
        Z = np.linalg.qr(rng.normal(size=(n, q)))[0] * np.geomspace(1.0, 5.0, q)
        Z = Z[:, rng.permutation(q)]
        y = rng.normal(size=n)
        C = float(rng.uniform(1.0, 10.0))
        beta, n_sweeps = c.fn(Z, y, C, 1e-10)
        beta = as_numbers(beta, "beta")
        assert beta.shape == (q,), f"beta has shape {beta.shape}, expected ({q},)"
        v = kkt_violation(Z, y, beta, C)
        assert v <= 1e-7, f"KKT violation {v:.2g} above 1e-7"
        assert int(n_sweeps) == 1, f"{int(n_sweeps)} sweeps, where one solves the problem"

    @c.test(
        f"costs O(nq) a sweep: one sweep on {COST_N} × {COST_Q} orthogonal columns, with its "
        f"optimality measure, in at most {ENTRIES_PER_NQ} nq entries of arrays through numpy "
        f"and {ENTRIES_PER_NQ} nq lines of Python (counted, not timed)",
        "after moving β_j by δ, update the residual r = Zβ − y by δ z_j, O(n); recomputing Zβ, "
        "the residual or the gradient Zᵀr for every coefficient costs O(nq) each, O(nq²) a "
        "sweep.",
    )
    def _():
        n, q = COST_N, COST_Q
        Z = np.linalg.qr(rng.normal(size=(n, q)))[0] * np.geomspace(1.0, 5.0, q)
        Z = Z[:, rng.permutation(q)]
        y = rng.normal(size=n)
        C = float(rng.uniform(1.0, 10.0))
        budget = ENTRIES_PER_NQ * n * q
        counter = WorkCounter(n, max_steps=budget)
        counted_call(
            c,
            counter.wrap(Z, y, C, 1e-10),
            counter,
            f"your function ran more than {budget:,} lines of Python for one sweep over "
            f"{q} coefficients of {n} rows (stopped there): a loop over the rows for every "
            "coefficient inside the sweep is O(nq²)",
        )
        entries = counter.entries / (n * q)
        assert entries <= ENTRIES_PER_NQ, (
            f"numpy went through {entries:,.0f} nq entries of arrays for one sweep over {q} "
            f"coefficients of {n} rows: recomputing Zβ or the residual for every coefficient "
            "costs nq each, O(nq²) a sweep (and forming ZᵀZ costs nq²)"
        )

    c.finish()
