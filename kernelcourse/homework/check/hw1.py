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


def q1(student_psd_witness, *, seed=None):
    """Check ``psd_witness(K, tol=1e-10)``: None for PSD matrices, a verifiable unit vector c
    with cᵀKc < 0 otherwise, and a ValueError for a matrix that cannot be a Gram matrix."""
    rng = fresh_rng(seed)
    c = SelfCheck("hw1.q1", student_psd_witness)

    def is_none(K, what):
        got = c.fn(K)
        assert got is None, f"returned a witness for {what}, which is PSD"

    def witness(K, what):
        got = c.fn(K)
        assert got is not None, f"returned None for {what}, which is not PSD"
        got = np.asarray(got, dtype=float)
        assert got.shape == (len(K),), f"the witness has shape {got.shape}, not ({len(K)},)"
        assert abs(np.linalg.norm(got) - 1) < 1e-8, "the witness is not a unit vector"
        assert got @ K @ got < -1e-10 * max(1.0, np.abs(K).max()), (
            f"cᵀKc is not negative for {what}: c certifies nothing"
        )

    @c.test("returns None for an RBF Gram matrix", "every eigenvalue of an RBF Gram matrix is > 0.")
    def _():
        is_none(RBF(gamma=0.5)(rng.normal(size=(20, 3))), "an RBF Gram matrix")

    @c.test(
        "returns None for a rank-deficient Gram matrix ZZᵀ",
        "its zero eigenvalues come out as tiny numbers of either sign: compare with a "
        "tolerance relative to the size of K, not with 0.",
    )
    def _():
        Z = rng.normal(size=(15, 3)) * 10
        is_none(Z @ Z.T, "ZZᵀ with rank 3")

    @c.test(
        "returns a unit c with cᵀKc < 0 for a matrix with a negative eigenvalue",
        "the minimum of cᵀKc over unit vectors is reached at a particular vector: which one?",
    )
    def _():
        lam = rng.uniform(1, 2, size=8)
        lam[rng.integers(8)] = -0.05
        witness(_with_eigenvalues(rng, lam), "a matrix with eigenvalue -0.05")
        witness(np.array([[0.0, 1.0], [1.0, 0.0]]), "[[0, 1], [1, 0]]")

    @c.test(
        "raises ValueError for a non-symmetric or non-square matrix",
        "a Gram matrix is square and symmetric, K_ij = K(x_i, x_j) = K_ji: test that first.",
    )
    def _():
        K = _with_eigenvalues(rng, rng.uniform(1, 2, size=6))
        K[0, 1] += 1.0
        for bad, what in ((K, "a non-symmetric matrix"), (np.ones((2, 3)), "a 2 × 3 matrix")):
            try:
                c.fn(bad)
            except ValueError:
                continue
            raise AssertionError(f"no ValueError for {what}")

    c.finish()


def q2(student_poly2_features, *, seed=None):
    """Check ``poly2_features(X)``: ``Φ Φᵀ`` must equal the Gram matrix of (xᵀy + 1)²."""
    rng = fresh_rng(seed)
    c = SelfCheck("hw1.q2", student_poly2_features)

    for d in (1, 3):

        @c.test(
            f"Φ Φᵀ equals the Gram matrix of (xᵀy + 1)² for d = {d}",
            "expand (xᵀy + 1)² and read off one feature per term, its coefficient shared "
            "between φ(x) and φ(y).",
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
        "each output row holds all D₁·D₂ products of one entry of φ₁(x) with one entry of φ₂(x).",
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
