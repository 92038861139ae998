"""Self-checks for homework 4: the SVM dual and SMO (lecture 003; KernelSVC as the reference)."""

from __future__ import annotations

import numpy as np

from ...kernels import RBF
from .. import _reference as ref
from ._core import SelfCheck, close, fresh_rng

__all__ = ["q1", "q2", "q3", "q4", "toy_problem"]


def toy_problem(rng, n=40, gamma=1.0):
    """Two overlapping Gaussian blobs in 2-D, labels ±1, and their RBF Gram matrix."""
    y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    X = rng.normal(size=(n, 2)) + 0.9 * y[:, None]
    return X, y, RBF(gamma)(X)


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


def q1(student_dual_objective, *, seed=None):
    """Check ``dual_objective(alpha, K, y)`` = 1ᵀα − ½ αᵀ(yyᵀ ∘ K)α."""
    rng = fresh_rng(seed)
    c = SelfCheck("hw4.q1", student_dual_objective)

    @c.test(
        "matches 1ᵀα − ½ Σ_ij α_i α_j y_i y_j K_ij on random α",
        "G_ij = y_i y_j K_ij; with v = α * y the quadratic term is vᵀ K v; the ½ matters.",
    )
    def _():
        for _ in range(3):
            X, y, K = toy_problem(rng, n=12)
            alpha = rng.uniform(0, 2, size=12)
            got = float(student_dual_objective(alpha, K, y))
            close(got, ref.svm_dual_objective(alpha, K, y), what="the dual objective")

    @c.test("is 0 at α = 0", "both terms vanish when every α_i is 0.")
    def _():
        X, y, K = toy_problem(rng, n=6)
        close(float(student_dual_objective(np.zeros(6), K, y)), 0.0, what="the objective at 0")

    c.finish()


def q2(student_smo_step, *, seed=None):
    """Check ``smo_step(alpha, K, y, C, i, j)``: exact maximisation over the pair (i, j)."""
    rng = fresh_rng(seed)
    c = SelfCheck("hw4.q2", student_smo_step)
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
        student_smo_step(alpha, K, y, C, i, j)
        close(alpha, before, rtol=0, atol=0, what="the input α after the call")

    @c.test(
        "changes only α_i and α_j, keeps yᵀα and the box 0 ≤ α ≤ C",
        "the step must move along the line y_i α_i + y_j α_j = constant.",
    )
    def _():
        for alpha, i, j in cases:
            new = np.asarray(student_smo_step(alpha, K, y, C, i, j), dtype=float)
            others = np.ones(20, bool)
            others[[i, j]] = False
            close(new[others], alpha[others], what="the α_k with k ∉ {i, j}")
            close(float(y @ new), float(y @ alpha), atol=1e-9, what="yᵀα")
            assert new.min() >= -1e-12 and new.max() <= C + 1e-12, "α left the box [0, C]"

    @c.test("reaches the exact optimum over the pair (clipped to the box)", hint)
    def _():
        for alpha, i, j in cases:
            got = student_smo_step(alpha, K, y, C, i, j)
            close(got, ref.smo_step(alpha, K, y, C, i, j), atol=1e-8, what=f"α after ({i}, {j})")

    c.finish()


def q3(student_smo, *, seed=None):
    """Check ``smo(K, y, C)`` returns the dual optimum α (compared with KernelSVC)."""
    rng = fresh_rng(seed)
    c = SelfCheck("hw4.q3", student_smo)
    for C in (0.5, 10.0):

        @c.test(
            f"reaches the optimal dual objective for C = {C} (to 1e-3 relative)",
            "pick the most violating pair each iteration (largest y_i g_i over I_up, smallest "
            "over I_low), stop when their gap is below tol, and update with your smo_step.",
        )
        def _(C=C):
            X, y, K = toy_problem(rng, n=40)
            alpha = np.asarray(student_smo(K, y, C), dtype=float)
            assert alpha.shape == (40,), f"expected α of shape (40,), got {alpha.shape}"
            assert alpha.min() >= -1e-9 and alpha.max() <= C + 1e-9, "α left the box [0, C]"
            assert abs(y @ alpha) < 1e-6 * C * 40, f"yᵀα = {y @ alpha:.3g}, should be 0"
            want = ref.svm_dual_objective(ref.svm_dual_solution(K, y, C)[0], K, y)
            got = ref.svm_dual_objective(alpha, K, y)
            close(got, want, rtol=1e-3, atol=0, what="the dual objective at your α")

    c.finish()


def q4(student_intercept, *, seed=None):
    """Check ``intercept(alpha, K, y, C)`` against KernelSVC's b at its optimal α."""
    rng = fresh_rng(seed)
    c = SelfCheck("hw4.q4", student_intercept)

    @c.test(
        "recovers b from the free support vectors",
        "for 0 < α_i < C the KKT conditions give y_i f(x_i) = 1, so b = y_i − Σ_j α_j y_j K_ij; "
        "average it over those i for stability.",
    )
    def _():
        X, y, K = toy_problem(rng, n=40)
        alpha, b = ref.svm_dual_solution(K, y, 1.0)
        close(float(student_intercept(alpha, K, y, 1.0)), b, rtol=0, atol=1e-4, what="b")

    c.finish()
