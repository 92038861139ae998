"""Self-checks for homework 1: PSD Gram matrices and the construction rules.

Schölkopf & Smola (2002); :doc:`chapter 1 </book/01_kernels_and_feature_maps>`.
"""

from __future__ import annotations

import numpy as np

from ...kernels import RBF
from ._core import SelfCheck, close, fresh_rng

__all__ = ["q1", "q2", "q3"]


def _with_eigenvalues(rng, lam):
    """A symmetric matrix with the given eigenvalues and random eigenvectors."""
    Q, _ = np.linalg.qr(rng.normal(size=(len(lam), len(lam))))
    return (Q * lam) @ Q.T


def q1(student_is_psd, *, seed=None):
    """Check ``is_psd(K, tol=1e-10) -> bool`` on matrices whose answer is known by construction."""
    rng = fresh_rng(seed)
    c = SelfCheck("hw1.q1", student_is_psd)

    def answer(K, want, what):
        got = c.fn(K)
        assert isinstance(got, bool | np.bool_), f"returned {type(got).__name__}, not a bool"
        assert bool(got) == want, f"returned {bool(got)} for {what}; the right answer is {want}"

    @c.test("accepts an RBF Gram matrix", "every eigenvalue of an RBF Gram matrix is > 0.")
    def _():
        answer(RBF(0.5)(rng.normal(size=(20, 3))), True, "an RBF Gram matrix")

    @c.test(
        "accepts a rank-deficient Gram matrix ZZᵀ",
        "its zero eigenvalues come out of eigvalsh as tiny negatives like -1e-16: compare the "
        "smallest eigenvalue with -tol * max(1, largest eigenvalue), not with 0.",
    )
    def _():
        Z = rng.normal(size=(15, 3)) * 10
        answer(Z @ Z.T, True, "ZZᵀ with rank 3")

    @c.test(
        "rejects a symmetric matrix with a negative eigenvalue",
        "look at the smallest eigenvalue (np.linalg.eigvalsh sorts them ascending).",
    )
    def _():
        lam = rng.uniform(1, 2, size=8)
        lam[rng.integers(8)] = -0.05
        answer(_with_eigenvalues(rng, lam), False, "a matrix with eigenvalue -0.05")

    @c.test(
        "rejects a non-symmetric matrix",
        "a Gram matrix is symmetric, K_ij = K(x_i, x_j) = K_ji; test symmetry first "
        "(eigvalsh only reads one triangle and would not notice).",
    )
    def _():
        K = _with_eigenvalues(rng, rng.uniform(1, 2, size=6))
        K[0, 1] += 1.0
        answer(K, False, "a non-symmetric matrix")

    c.finish()


def q2(student_poly2_features, *, seed=None):
    """Check ``poly2_features(X)``: ``Φ Φᵀ`` must equal the Gram matrix of (xᵀy + 1)²."""
    rng = fresh_rng(seed)
    c = SelfCheck("hw1.q2", student_poly2_features)

    for d in (1, 3):

        @c.test(
            f"Φ Φᵀ equals the Gram matrix of (xᵀy + 1)² for d = {d}",
            "expand (xᵀy + 1)² = Σ_i Σ_j x_i x_j y_i y_j + 2 Σ_i x_i y_i + 1: the features are "
            "x_i x_j (or √2 x_i x_j for i < j), √2 x_i and 1.",
        )
        def _(d=d):
            X = rng.normal(size=(7, d))
            Phi = np.asarray(c.fn(X))
            assert Phi.ndim == 2 and Phi.shape[0] == 7, (
                f"expected one row per sample, shape (7, D); got {Phi.shape}"
            )
            close(Phi @ Phi.T, (X @ X.T + 1.0) ** 2, what="Φ Φᵀ")

    @c.test(
        "the dimension D is finite and at most (d + 1)²",
        "the monomials of degree ≤ 2 in d variables suffice (even (d + 1)(d + 2)/2 of them).",
    )
    def _():
        Phi = np.asarray(c.fn(rng.normal(size=(4, 5))))
        assert Phi.shape[1] <= 36, f"D = {Phi.shape[1]} for d = 5"

    c.finish()


def q3(student_product_features, *, seed=None):
    """Check ``product_features(F1, F2)``: rows φ₁(x) ⊗ φ₂(x), Gram matrix K₁ ∘ K₂."""
    rng = fresh_rng(seed)
    c = SelfCheck("hw1.q3", student_product_features)

    @c.test(
        "shape (n, D₁·D₂)",
        "the tensor product of a D₁- and a D₂-vector has D₁·D₂ entries φ₁(x)_a φ₂(x)_b.",
    )
    def _():
        F = np.asarray(c.fn(rng.normal(size=(5, 3)), rng.normal(size=(5, 4))))
        assert F.shape == (5, 12), f"got shape {F.shape}, expected (5, 12)"

    @c.test(
        "its Gram matrix is the entrywise product K₁ ∘ K₂",
        "(φ₁(x) ⊗ φ₂(x))ᵀ(φ₁(y) ⊗ φ₂(y)) = (φ₁(x)ᵀφ₁(y)) (φ₂(x)ᵀφ₂(y)); take the outer "
        "product of each row pair, e.g. F1[:, :, None] * F2[:, None, :], then flatten it.",
    )
    def _():
        F1, F2 = rng.normal(size=(9, 3)), rng.normal(size=(9, 4))
        F = np.asarray(c.fn(F1, F2))
        close(F @ F.T, (F1 @ F1.T) * (F2 @ F2.T), what="the Gram matrix of the product features")

    @c.test(
        "works row by row (the rows of the output depend only on the same rows of the input)",
        "compute the tensor product separately for every sample, not for the whole matrices.",
    )
    def _():
        F1, F2 = rng.normal(size=(6, 2)), rng.normal(size=(6, 3))
        full = np.asarray(c.fn(F1, F2))
        one = np.asarray(c.fn(F1[2:3], F2[2:3]))
        close(full[2:3], one, what="row 2")

    c.finish()
