"""Self-checks for homework 5: Nyström against random Fourier features (Williams &
Seeger 2001; Rahimi & Recht 2007; :doc:`chapter 9 </book/09_nystroem_vs_rff>`).

The Nyström check uses the Eckart–Young theorem instead of a second implementation: on the
landmarks themselves, Z Zᵀ must be the best rank-r approximation of K̂, whose spectral error is
the (r+1)-th eigenvalue. The error check uses matrices whose answer is known by construction
and the invariances of the spectral norm.
"""

from __future__ import annotations

import numpy as np

from ...kernels import RBF
from ._core import SelfCheck, close, fresh_rng

__all__ = ["q1", "q2", "q3"]

# What else would answer these questions in one call.
APPROXIMATIONS = ("sklearn.kernel_approximation",)


def q1(student_nystroem_features, *, seed=None):
    """Check ``nystroem_features(K_nm, K_mm, r)`` = K_nm V̂_r D̂_r^{-1/2}."""
    rng = fresh_rng(seed)
    c = SelfCheck("hw5.q1", student_nystroem_features, forbid=APPROXIMATIONS)
    X = rng.normal(size=(60, 3))
    idx = rng.choice(60, size=15, replace=False)
    k = RBF(gamma=0.3)
    K_nm, K_mm = k(X, X[idx]), k(X[idx])

    @c.test("returns n rows and r columns", "z(x) has one coordinate per kept eigenpair.")
    def _():
        Z = np.asarray(c.fn(K_nm, K_mm, 6))
        assert Z.shape == (60, 6), f"got shape {Z.shape}, expected (60, 6)"

    @c.test(
        "with r = m, Z Zᵀ equals K_nm K̂⁺ K_mn",
        "z(x) = D̂^{-1/2} V̂ᵀ k_m(x): scale the eigenvectors by 1/√eigenvalue.",
    )
    def _():
        Z = np.asarray(c.fn(K_nm, K_mm, 15))
        want = K_nm @ np.linalg.pinv(K_mm, hermitian=True) @ K_nm.T
        close(Z @ Z.T, want, rtol=1e-5, atol=1e-6, what="Z Zᵀ")

    @c.test(
        "with r < m, Z Zᵀ on the landmarks is the best rank-r approximation of K̂",
        "keep the r largest eigenpairs; check the order in which your eigensolver returns them.",
    )
    def _():
        lam = np.linalg.eigvalsh(K_mm)[::-1]
        for r in (3, 5):
            Z = np.asarray(c.fn(K_mm, K_mm, r))
            assert Z.shape == (15, r), f"got shape {Z.shape}, expected (15, {r})"
            E = K_mm - Z @ Z.T
            close(np.trace(Z @ Z.T), lam[:r].sum(), rtol=1e-6, what="trace of Z Zᵀ")
            close(np.linalg.norm(E, 2), lam[r], rtol=1e-5, atol=1e-9, what="‖K̂ − Z Zᵀ‖₂")

    c.finish()


def q2(student_rbf_rff, *, seed=None):
    """Check ``rbf_rff(X, D, gamma, rng)``: ψ(x) = √(2/D) cos(Ωx + b), ω ~ N(0, 2γI)."""
    rng = fresh_rng(seed)
    c = SelfCheck("hw5.q2", student_rbf_rff, forbid=APPROXIMATIONS)
    X = rng.normal(size=(8, 4)) * 0.5

    @c.test("returns shape (n, D) with entries in [−√(2/D), √(2/D)]", "ψ is √(2/D) cos(·).")
    def _():
        Z = np.asarray(c.fn(X, 50, 0.5, np.random.default_rng(1)))
        assert Z.shape == (8, 50), f"got shape {Z.shape}"
        assert np.abs(Z).max() <= np.sqrt(2 / 50) + 1e-12, "entries exceed √(2/D)"

    @c.test(
        "ψ(X)ψ(X)ᵀ approximates the RBF kernel exp(−γ‖x − y‖²) for large D",
        "the spectral measure of exp(−γ‖δ‖²) is Gaussian: what is its covariance? b is "
        "uniform on a period.",
    )
    def _():
        gamma = float(rng.uniform(0.2, 1.0))
        Z = np.asarray(c.fn(X, 20000, gamma, rng))
        sq = ((X[:, None, :] - X[None, :, :]) ** 2).sum(axis=2)
        close(Z @ Z.T, np.exp(-gamma * sq), rtol=0, atol=0.06, what="ψ(X)ψ(X)ᵀ")

    @c.test(
        "draws from the generator it is given",
        "use the rng argument for Ω and b so that results are reproducible.",
    )
    def _():
        a = c.fn(X, 30, 0.5, np.random.default_rng(7))
        b = c.fn(X, 30, 0.5, np.random.default_rng(7))
        close(a, b, rtol=0, atol=0, what="features from equal seeds")

    c.finish()


def q3(student_relative_error, *, seed=None):
    """Check ``relative_error(K, Z)`` = ‖K − ZZᵀ‖₂ / ‖K‖₂ on cases known by construction."""
    rng = fresh_rng(seed)
    c = SelfCheck("hw5.q3", student_relative_error)
    hint = "the spectral norm is the largest singular value, not the Frobenius norm."

    @c.test("equals λ_(r+1) / λ_1 when Z keeps the top r eigenpairs of K", hint)
    def _():
        Q, _ = np.linalg.qr(rng.normal(size=(30, 30)))
        lam = np.sort(rng.uniform(0.1, 5.0, size=30))[::-1]
        K = (Q * lam) @ Q.T
        for r in (2, 7):
            Z = Q[:, :r] * np.sqrt(lam[:r])
            close(float(c.fn(K, Z)), lam[r] / lam[0], what=f"the relative error for r = {r}")

    @c.test(
        "is unchanged by rotations K → QKQᵀ, Z → QZ and by scaling K → cK, Z → √c Z",
        hint,
    )
    def _():
        X = rng.normal(size=(30, 3))
        K = RBF(gamma=0.5)(X)
        Z = rng.normal(size=(30, 4)) * 0.3
        Q, _ = np.linalg.qr(rng.normal(size=(30, 30)))
        base = float(c.fn(K, Z))
        close(float(c.fn(Q @ K @ Q.T, Q @ Z)), base, what="the error after a rotation")
        close(float(c.fn(4.0 * K, 2.0 * Z)), base, what="the error after scaling by 4")

    @c.test("is 0 for an exact factorisation K = ZZᵀ", "‖K − ZZᵀ‖ vanishes when K = ZZᵀ.")
    def _():
        Z = rng.normal(size=(10, 10))
        close(float(c.fn(Z @ Z.T, Z)), 0.0, atol=1e-10, what="the error")

    c.finish()
