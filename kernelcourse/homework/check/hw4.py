"""Self-checks for homework 4: the SVM dual and SMO (Platt 1998; Fan, Chen & Lin
2005; :doc:`chapter 8 </book/08_svm_dual_and_primal>`).

The checks test optimality, not agreement with a solver: the SMO step must be the best feasible
point on its line, the solver's α must satisfy the KKT conditions, and the intercept must put
the free support vectors on the margin. LIBSVM (scikit-learn's ``SVC``) only provides the
optimal α that the intercept check starts from; it may not be called from the student's code.
"""

from __future__ import annotations

import numpy as np
from sklearn.svm import SVC

from ...kernels import RBF
from ._core import SelfCheck, close, fresh_rng

__all__ = ["q1", "q2", "q3", "q4", "toy_problem"]

# What else would answer these questions in one call.
SVM_SOLVERS = ("sklearn.svm",)


def toy_problem(rng, n=40, gamma=1.0):
    """Two overlapping Gaussian blobs in 2-D, labels ±1, and their RBF Gram matrix."""
    y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    X = rng.normal(size=(n, 2)) + 0.9 * y[:, None]
    return X, y, RBF(gamma=gamma)(X)


def _feasible_alpha(rng, y, C):
    """A random α with 0 ≤ α ≤ C and yᵀα = 0."""
    alpha = rng.uniform(0, C, size=len(y))
    pos, neg = y > 0, y < 0
    s_pos, s_neg = alpha[pos].sum(), alpha[neg].sum()
    if s_pos > s_neg:
        alpha[pos] *= s_neg / s_pos
    else:
        alpha[neg] *= s_pos / s_neg
    return alpha


def _line_values(alpha, K, y, i, j, ts):
    """The dual objective at α + t (y_i e_i − y_j e_j) for each t, from its expansion in t."""
    v = alpha * y
    g = 1.0 - y * (K @ v)
    slope = y[i] * g[i] - y[j] * g[j]
    curvature = K[i, i] + K[j, j] - 2.0 * K[i, j]
    return slope * ts - 0.5 * curvature * ts**2


def _kkt_gap(alpha, K, y, C):
    """max over I_up of y_t g_t minus min over I_low (≤ 0 up to tol at the optimum)."""
    yg = y * (1.0 - y * (K @ (alpha * y)))
    eps = 1e-9 * C
    up = ((y > 0) & (alpha < C - eps)) | ((y < 0) & (alpha > eps))
    low = ((y < 0) & (alpha < C - eps)) | ((y > 0) & (alpha > eps))
    return float(yg[up].max() - yg[low].min())


def q1(student_dual_objective, *, seed=None):
    """Check ``dual_objective(alpha, K, y)`` = 1ᵀα − ½ αᵀ(yyᵀ ∘ K)α.

    For a linear kernel K = XXᵀ the quadratic term is ‖Σ_i α_i y_i x_i‖², the squared norm of the
    primal weight vector: the check compares with that, and with the objective's scaling in α.
    """
    rng = fresh_rng(seed)
    c = SelfCheck("hw4.q1", student_dual_objective, forbid=SVM_SOLVERS)

    @c.test(
        "equals 1ᵀα − ½‖w‖² with w = Σ_i α_i y_i x_i for a linear kernel",
        "G_ij = y_i y_j K_ij; with v = α * y the quadratic term is vᵀ K v; the ½ matters.",
    )
    def _():
        for _ in range(3):
            X = rng.normal(size=(12, 3))
            y = np.where(rng.uniform(size=12) < 0.5, 1.0, -1.0)
            alpha = rng.uniform(0, 2, size=12)
            w = X.T @ (alpha * y)
            got = float(c.fn(alpha, X @ X.T, y))
            close(got, alpha.sum() - 0.5 * w @ w, what="the dual objective")

    @c.test(
        "is 0 at α = 0 and 1ᵀα − ½ αᵀGα scales as t·1ᵀα − t²·½αᵀGα",
        "both terms vanish when every α_i is 0; the first is linear, the second quadratic.",
    )
    def _():
        X, y, K = toy_problem(rng, n=6)
        close(float(c.fn(np.zeros(6), K, y)), 0.0, what="the objective at 0")
        alpha = rng.uniform(0, 1, size=6)
        f1, f2, f3 = (float(c.fn(t * alpha, K, y)) for t in (1.0, 2.0, 3.0))
        # a quadratic through 0 with linear coefficient 1ᵀα: f(t) = s t − q t² / 2
        s = alpha.sum()
        q = 2 * (s - f1)
        close([f2, f3], [2 * s - 2 * q, 3 * s - 4.5 * q], what="the objective at 2α and 3α")

    c.finish()


def q2(student_smo_step, *, seed=None):
    """Check ``smo_step(alpha, K, y, C, i, j)``: exact maximisation over the pair (i, j)."""
    rng = fresh_rng(seed)
    c = SelfCheck("hw4.q2", student_smo_step, forbid=SVM_SOLVERS)
    hint = (
        "move α_i by y_i t and α_j by −y_j t; the best t is (y_i g_i − y_j g_j) / η with "
        "g = 1 − Gα and η = K_ii + K_jj − 2K_ij; then clip t so both stay in [0, C]."
    )
    X, y, K = toy_problem(rng, n=20)
    C = 1.0
    cases = []
    for _ in range(12):
        i, j = rng.choice(20, size=2, replace=False)
        cases.append((_feasible_alpha(rng, y, C), int(i), int(j)))

    @c.test("does not modify its input α", "work on a copy: alpha = alpha.copy().")
    def _():
        alpha, i, j = cases[0]
        before = alpha.copy()
        c.fn(alpha, K, y, C, i, j)
        close(alpha, before, rtol=0, atol=0, what="the input α after the call")

    @c.test(
        "changes only α_i and α_j, keeps yᵀα and the box 0 ≤ α ≤ C",
        "the step must move along the line y_i α_i + y_j α_j = constant; clip t so that both "
        "α_i and α_j stay in [0, C].",
    )
    def _():
        for alpha, i, j in cases:
            new = np.asarray(c.fn(alpha, K, y, C, i, j), dtype=float)
            others = np.ones(20, bool)
            others[[i, j]] = False
            close(new[others], alpha[others], what="the α_k with k ∉ {i, j}")
            close(float(y @ new), float(y @ alpha), atol=1e-9, what="yᵀα")
            assert new.min() >= -1e-12 and new.max() <= C + 1e-12, "α left the box [0, C]"

    @c.test("reaches the best feasible point on the line (clipped to the box)", hint)
    def _():
        for alpha, i, j in cases:
            new = np.asarray(c.fn(alpha, K, y, C, i, j), dtype=float)
            t_new = (new[i] - alpha[i]) * y[i]
            # every feasible t: α_i + y_i t and α_j − y_j t in [0, C]
            ts = np.linspace(-C, C, 4001)
            ok = (
                (alpha[i] + y[i] * ts >= 0)
                & (alpha[i] + y[i] * ts <= C)
                & (alpha[j] - y[j] * ts >= 0)
                & (alpha[j] - y[j] * ts <= C)
            )
            best = _line_values(alpha, K, y, i, j, ts[ok]).max()
            got = _line_values(alpha, K, y, i, j, np.array([t_new]))[0]
            assert got >= best - 1e-9, (
                f"pair ({i}, {j}): your step gains {got:.6g} in the objective, but a feasible "
                "step gains more"
            )

    c.finish()


def q3(student_smo, *, seed=None):
    """Check ``smo(K, y, C) -> (alpha, n_iter)``: a feasible dual optimum (KKT gap below 1e-3)
    and a step count (the graders compare it with the maximal violating pair)."""
    rng = fresh_rng(seed)
    c = SelfCheck("hw4.q3", student_smo, forbid=SVM_SOLVERS)
    for C in (0.5, 10.0):

        @c.test(
            f"returns a feasible α satisfying the KKT conditions for C = {C}",
            "stop only when the largest y_t g_t over I_up and the smallest over I_low are "
            "within tol, keep α in the box and yᵀα = 0 at every step, and keep g equal to "
            "1 − Gα after each update.",
        )
        def _(C=C):
            X, y, K = toy_problem(rng, n=40)
            alpha, _ = c.fn(K, y, C)
            alpha = np.asarray(alpha, dtype=float)
            assert alpha.shape == (40,), f"α has shape {alpha.shape}, expected (40,)"
            assert alpha.min() >= -1e-9 and alpha.max() <= C + 1e-9, "α left the box [0, C]"
            assert abs(y @ alpha) < 1e-6 * C * 40, "yᵀα is not 0"
            gap = _kkt_gap(alpha, K, y, C)
            assert gap < 1e-3, f"the KKT gap max_(I_up) y_t g_t − min_(I_low) y_t g_t is {gap:.3g}"

    @c.test(
        "reports the number of steps it took",
        "count one step per pair you update; the graders compare the count with the "
        "maximal-violating-pair rule of chapter 8 on the same problems.",
    )
    def _():
        X, y, K = toy_problem(rng, n=30)
        _, n_iter = c.fn(K, y, 1.0, 1e-5)
        assert int(n_iter) >= 1 and int(n_iter) == n_iter, "n_iter is not a positive count"

    c.finish()


def q4(student_intercept, *, seed=None):
    """Check ``intercept(alpha, K, y, C)`` puts the free support vectors on the margin."""
    rng = fresh_rng(seed)
    c = SelfCheck("hw4.q4", student_intercept, forbid=SVM_SOLVERS)

    @c.test(
        "at the optimal α, y_i f(x_i) = 1 on the free support vectors",
        "for 0 < α_i < C the KKT conditions give y_i f(x_i) = 1, so b = y_i − Σ_j α_j y_j K_ij; "
        "average it over those i for stability.",
    )
    def _():
        X, y, K = toy_problem(rng, n=40)
        svc = SVC(C=1.0, kernel="precomputed", tol=1e-10).fit(K, y)
        alpha = np.zeros(40)
        alpha[svc.support_] = np.abs(svc.dual_coef_[0])
        b = float(c.fn(alpha, K, y, 1.0))
        free = (alpha > 1e-6) & (alpha < 1.0 - 1e-6)
        margins = y[free] * (K[free] @ (alpha * y) + b)
        close(margins, np.ones(free.sum()), rtol=0, atol=1e-4, what="y_i f(x_i) on free SVs")

    @c.test(
        "averages over the free support vectors only (α_i = 0 and α_i = C are left out)",
        "the residuals y_i − f(x_i) of the free support vectors must average to 0; points "
        "with α_i at a bound do not count.",
    )
    def _():
        X, y, K = toy_problem(rng, n=20)
        alpha = np.concatenate([np.zeros(6), np.ones(6), rng.uniform(0.2, 0.8, size=8)])
        b = float(c.fn(alpha, K, y, 1.0))
        free = slice(12, 20)
        residual = y[free] - (K[free] @ (alpha * y) + b)
        close(residual.mean(), 0.0, atol=1e-9, what="the mean residual over free SVs")

    c.finish()
