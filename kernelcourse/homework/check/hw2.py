"""Self-checks for homework 2: ridge, kernel ridge and the push-through identity (lecture 001)."""

from __future__ import annotations

import numpy as np

from ...kernels import RBF, Polynomial
from .. import _reference as ref
from ._core import SelfCheck, close, fresh_rng

__all__ = ["q1", "q2", "q4"]


def _problem(rng, n, D):
    Phi = rng.normal(size=(n, D))
    y = Phi @ rng.normal(size=D) + 0.1 * rng.normal(size=n)
    return Phi, y


def q1(student_ridge_primal, *, seed=None):
    """Check ``ridge_primal(Phi, y, lam)`` = (λI_D + ΦᵀΦ)⁻¹Φᵀy."""
    rng = fresh_rng(seed)
    c = SelfCheck("hw2.q1", student_ridge_primal)
    for n, D in ((30, 5), (6, 12)):

        @c.test(
            f"matches the ridge solution for n = {n}, D = {D}",
            "solve the D×D system (ΦᵀΦ + λI) w = Φᵀy with np.linalg.solve (no explicit "
            "inverse); the identity is D×D, not n×n.",
        )
        def _(n=n, D=D):
            Phi, y = _problem(rng, n, D)
            lam = float(rng.uniform(0.1, 2))
            close(student_ridge_primal(Phi, y, lam), ref.ridge_primal(Phi, y, lam), what="w")

    @c.test(
        "the gradient of the MAP objective vanishes at w",
        "setting ∇_w [‖y − Φw‖² + λ‖w‖²] = 0 gives ΦᵀΦw + λw = Φᵀy.",
    )
    def _():
        Phi, y = _problem(rng, 20, 4)
        w = np.asarray(student_ridge_primal(Phi, y, 0.7))
        close(Phi.T @ (Phi @ w - y) + 0.7 * w, np.zeros(4), atol=1e-8, what="the gradient")

    c.finish()


def q2(student_ridge_dual, *, seed=None):
    """Check ``ridge_dual(Phi, y, lam)`` = Φᵀ(λI_n + ΦΦᵀ)⁻¹y equals the primal solution."""
    rng = fresh_rng(seed)
    c = SelfCheck("hw2.q2", student_ridge_dual)
    for n, D in ((8, 40), (25, 3)):

        @c.test(
            f"equals the primal ridge solution for n = {n}, D = {D} (push-through)",
            "solve the n×n system (ΦΦᵀ + λI) α = y, then return w = Φᵀα.",
        )
        def _(n=n, D=D):
            Phi, y = _problem(rng, n, D)
            lam = float(rng.uniform(0.1, 2))
            close(student_ridge_dual(Phi, y, lam), ref.ridge_primal(Phi, y, lam), what="w")

    @c.test(
        "w lies in the span of the training features (w = Φᵀα)",
        "the dual form writes w as a combination Σ α_i φ(x_i) of the rows of Φ.",
    )
    def _():
        Phi, y = _problem(rng, 4, 10)
        w = np.asarray(student_ridge_dual(Phi, y, 0.5))
        alpha, *_ = np.linalg.lstsq(Phi.T, w, rcond=None)
        close(Phi.T @ alpha, w, what="the projection of w on span{φ(x_i)}")

    c.finish()


def q4(student_kernel_ridge_predict, *, seed=None):
    """Check ``kernel_ridge_predict(K, y, lam, K_test)`` = K_test (K + λI)⁻¹ y."""
    rng = fresh_rng(seed)
    c = SelfCheck("hw2.q4", student_kernel_ridge_predict)

    @c.test(
        "matches kernel ridge regression with an RBF kernel",
        "α = (K + λI)⁻¹y uses the training Gram matrix; predictions are K_test α, where K_test "
        "has one row per test point and one column per training point.",
    )
    def _():
        X, Xt = rng.uniform(-2, 2, size=(30, 2)), rng.uniform(-2, 2, size=(7, 2))
        y = np.sin(X[:, 0]) + X[:, 1]
        k = RBF(0.8)
        got = student_kernel_ridge_predict(k(X), y, 0.1, k(Xt, X))
        close(got, ref.kernel_ridge_predict(k(X), y, 0.1, k(Xt, X)), what="the predictions")

    @c.test(
        "agrees with primal ridge on explicit polynomial features",
        "with K = ΦΦᵀ and K_test = Φ_test Φᵀ, kernel ridge predicts Φ_test w for the primal w.",
    )
    def _():
        X, Xt = rng.normal(size=(12, 2)), rng.normal(size=(5, 2))
        k = Polynomial(degree=2, coef0=1.0)
        Phi, Phi_t = k.feature_map(X), k.feature_map(Xt)
        y = rng.normal(size=12)
        got = student_kernel_ridge_predict(k(X), y, 0.3, k(Xt, X))
        close(got, Phi_t @ ref.ridge_primal(Phi, y, 0.3), what="the predictions")

    c.finish()
