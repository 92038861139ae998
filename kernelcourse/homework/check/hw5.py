"""Self-checks for homework 5: Nyström against random Fourier features (lectures 000, 004)."""

from __future__ import annotations

import numpy as np

from ...kernels import RBF
from .. import _reference as ref
from ._core import SelfCheck, close, fresh_rng

__all__ = ["q1", "q2", "q3"]


def q1(student_nystroem_features, *, seed=None):
    """Check ``nystroem_features(K_nm, K_mm, r)`` = K_nm V̂_r D̂_r^{-1/2}."""
    rng = fresh_rng(seed)
    c = SelfCheck("hw5.q1", student_nystroem_features)
    X = rng.normal(size=(60, 3))
    idx = rng.choice(60, size=15, replace=False)
    k = RBF(0.3)
    K_nm, K_mm = k(X, X[idx]), k(X[idx])

    @c.test("returns n rows and r columns", "z(x) has one coordinate per kept eigenpair.")
    def _():
        Z = np.asarray(student_nystroem_features(K_nm, K_mm, 6))
        assert Z.shape == (60, 6), f"got shape {Z.shape}, expected (60, 6)"

    @c.test(
        "with r = m, Z Zᵀ equals K_nm K̂⁺ K_mn",
        "z(x) = D̂^{-1/2} V̂ᵀ k_m(x): scale the eigenvectors by 1/√eigenvalue.",
    )
    def _():
        Z = np.asarray(student_nystroem_features(K_nm, K_mm, 15))
        want = K_nm @ np.linalg.pinv(K_mm, hermitian=True) @ K_nm.T
        close(Z @ Z.T, want, rtol=1e-5, atol=1e-6, what="Z Zᵀ")

    @c.test(
        "with r < m, keeps the r largest eigenpairs",
        "np.linalg.eigh returns eigenvalues in ascending order: take the last r.",
    )
    def _():
        Z = np.asarray(student_nystroem_features(K_nm, K_mm, 5))
        W = ref.nystroem_features(K_nm, K_mm, 5)
        close(Z @ Z.T, W @ W.T, rtol=1e-6, atol=1e-8, what="Z Zᵀ")

    c.finish()


def q2(student_rbf_rff, *, seed=None):
    """Check ``rbf_rff(X, D, gamma, rng)``: ψ(x) = √(2/D) cos(Ωx + b), ω ~ N(0, 2γI)."""
    rng = fresh_rng(seed)
    c = SelfCheck("hw5.q2", student_rbf_rff)
    X = rng.normal(size=(8, 4)) * 0.5

    @c.test("returns shape (n, D) with entries in [−√(2/D), √(2/D)]", "ψ is √(2/D) cos(·).")
    def _():
        Z = np.asarray(student_rbf_rff(X, 50, 0.5, np.random.default_rng(1)))
        assert Z.shape == (8, 50), f"got shape {Z.shape}"
        assert np.abs(Z).max() <= np.sqrt(2 / 50) + 1e-12, "entries exceed √(2/D)"

    @c.test(
        "ψ(X)ψ(X)ᵀ approximates the RBF kernel exp(−γ‖x − y‖²) for large D",
        "ω ~ N(0, 2γ I) means rng.normal(scale=np.sqrt(2 * gamma), size=(D, d)); b ~ U[0, 2π).",
    )
    def _():
        gamma = float(rng.uniform(0.2, 1.0))
        Z = np.asarray(student_rbf_rff(X, 20000, gamma, rng))
        close(Z @ Z.T, RBF(gamma)(X), rtol=0, atol=0.06, what="ψ(X)ψ(X)ᵀ")

    @c.test(
        "draws from the generator it is given",
        "use the rng argument for Ω and b so that results are reproducible.",
    )
    def _():
        a = student_rbf_rff(X, 30, 0.5, np.random.default_rng(7))
        b = student_rbf_rff(X, 30, 0.5, np.random.default_rng(7))
        close(a, b, rtol=0, atol=0, what="features from equal seeds")

    c.finish()


def q3(student_relative_error, *, seed=None):
    """Check ``relative_error(K, Z)`` = ‖K − ZZᵀ‖₂ / ‖K‖₂."""
    rng = fresh_rng(seed)
    c = SelfCheck("hw5.q3", student_relative_error)

    @c.test(
        "matches the relative spectral-norm error",
        "the spectral norm is the largest singular value: np.linalg.norm(A, 2) (not 'fro').",
    )
    def _():
        for _ in range(3):
            X = rng.normal(size=(30, 3))
            K = RBF(0.5)(X)
            Z = rng.normal(size=(30, 4)) * 0.3
            close(
                float(student_relative_error(K, Z)),
                ref.relative_spectral_error(K, Z),
                what="the relative error",
            )

    @c.test("is 0 for an exact factorisation K = ZZᵀ", "‖K − ZZᵀ‖ vanishes when K = ZZᵀ.")
    def _():
        Z = rng.normal(size=(10, 10))
        close(float(student_relative_error(Z @ Z.T, Z)), 0.0, atol=1e-10, what="the error")

    c.finish()
