"""Self-checks for homework 1: PSD Gram matrices and the construction rules.

Schölkopf & Smola (2002); :doc:`chapter 1 </book/01_kernels_and_feature_maps>`.

Question 1 asks for a certificate of indefiniteness from a Cholesky factorisation stopped at its
first negative pivot: a :class:`SpectralGuard` fails a function that computes eigenvalues or
singular values instead, the way the package guard of :mod:`._core` fails a function that calls
``kernelcourse``. Question 2 asks for the ANOVA kernel of degree r by a recursion over the
coordinates: its cost is counted in lines of Python and bytes held (the ``WorkCounter`` of
:mod:`._work`), never timed, so that a function listing the subsets fails quickly.
"""

from __future__ import annotations

import itertools
import math
import tracemalloc

import numpy as np

from ...kernels import RBF
from . import _core
from ._core import SelfCheck, _matches, as_numbers, close, fresh_rng
from ._work import WorkCounter, counted_call

__all__ = ["q1", "q2", "q3", "SpectralGuard", "FactorisationCheck"]

# Routines of numpy.linalg, scipy.linalg and scipy.sparse.linalg that compute eigenvalues or
# singular values (matrix_rank, cond, pinv and the matrix 2-norm reach svd and are caught there).
SPECTRAL = frozenset(
    (
        "eig eigh eigvals eigvalsh eig_banded eigvals_banded eigh_tridiagonal "
        "eigvalsh_tridiagonal svd svdvals schur qz ordqz eigs eigsh lobpcg svds"
    ).split()
)
LINALG = ("numpy.linalg", "scipy.linalg", "scipy.sparse.linalg")


class SpectralGuard(_core.ProfileHook):
    """Record every call into a routine of :data:`SPECTRAL` while a block runs (a profile hook,
    nested inside the package guard). ``calls`` holds ``"numpy.linalg.eigh"``-style names."""

    def __init__(self):
        self.calls = []

    def _event(self, frame, event, arg):
        if event != "call" or frame.f_code.co_name not in SPECTRAL:
            return
        module = frame.f_globals.get("__name__", "") or ""
        if _matches(module, LINALG):
            public = next(p for p in reversed(LINALG) if _matches(module, (p,)))
            self.calls.append(f"{public}.{frame.f_code.co_name}")


class FactorisationCheck(SelfCheck):
    """A self-check whose function may not compute eigenvalues or singular values;
    ``reason`` says what the question asks for instead."""

    def __init__(self, label, student_fn, *, reason, **guards):
        super().__init__(label, student_fn, **guards)
        self.reason = reason

    def extra_guard(self):
        return SpectralGuard(), self.reason


def _with_eigenvalues(rng, lam):
    """A symmetric matrix with the given eigenvalues and random eigenvectors."""
    Q, _ = np.linalg.qr(rng.normal(size=(len(lam), len(lam))))
    return (Q * lam) @ Q.T


def q1(student_psd_witness, *, seed=None):
    """Check ``psd_witness(K, tol=1e-10)``: None for PSD matrices, a verifiable unit vector c
    with cᵀKc < −tol·max(1, max|K_ij|) otherwise, a ValueError for a matrix that cannot be a
    Gram matrix, and no eigenvalue or singular value computed on the way."""
    rng = fresh_rng(seed)
    c = FactorisationCheck(
        "hw1.q1",
        student_psd_witness,
        reason="this question asks for a certificate read off a Cholesky factorisation stopped "
        "at its first negative pivot, without eigenvalues or singular values",
    )

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
            f"cᵀKc is not below −tol·max(1, max|K_ij|) for {what}: c certifies nothing"
        )

    @c.test(
        "returns None for an RBF Gram matrix",
        "every pivot of the Cholesky factorisation of a positive definite matrix is > 0.",
    )
    def _():
        is_none(RBF(gamma=0.5)(rng.normal(size=(20, 3))), "an RBF Gram matrix")

    @c.test(
        "returns None for a rank-deficient Gram matrix ZZᵀ and for the zero matrix",
        "after rank(K) pivots the Schur complement is round-off, of either sign: a pivot "
        "within tol·max(1, max|K_ij|) of 0 counts as zero, and so does the rest of its column.",
    )
    def _():
        Z = rng.normal(size=(15, 3)) * 10
        is_none(Z @ Z.T, "ZZᵀ with rank 3")
        is_none(np.zeros((4, 4)), "the zero matrix")

    @c.test(
        "returns a unit c with cᵀKc < 0 for matrices with a negative eigenvalue",
        "stop at the first Schur-complement diagonal entry s_q < −tol·scale; the vector that "
        "is 1 at q and −L_J⁻ᵀℓ_q on the pivots J taken so far has cᵀKc = s_q (one triangular "
        "solve).",
    )
    def _():
        lam = rng.uniform(1, 2, size=8)
        lam[rng.integers(8)] = -0.05
        witness(_with_eigenvalues(rng, lam), "a matrix with eigenvalue -0.05")
        B, v = rng.normal(size=(12, 12)), rng.normal(size=12)
        K = B @ B.T
        K -= 1.5 * (v @ K @ v) / (v @ v) * np.outer(v, v) / (v @ v)
        assert v @ K @ v < 0  # v is a known negative direction
        witness(K, "BBᵀ − s vvᵀ with vᵀKv < 0")

    @c.test(
        "finds a witness when the diagonal is zero but K is not: [[0, 1], [1, 0]] and others",
        "a zero pivot may be skipped only when the rest of its Schur-complement row is zero "
        "too; otherwise two coordinates give a negative 2 × 2 block.",
    )
    def _():
        witness(np.array([[0.0, 1.0], [1.0, 0.0]]), "[[0, 1], [1, 0]]")
        G = rng.normal(size=(5, 5))
        K = np.zeros((7, 7))
        K[:5, :5] = G @ G.T
        K[5, 6] = K[6, 5] = float(rng.uniform(0.5, 2))
        p = rng.permutation(7)
        witness(K[np.ix_(p, p)], "a matrix with two zero diagonal entries and a nonzero K_ij")

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


def _all_subsets_gram(X, Y):
    """∏_j (1 + x_j y_j), the kernel evaluated directly in O(d) per pair."""
    return np.prod(1.0 + X[:, None, :] * Y[None, :, :], axis=2)


def _subset_gram(X, Y, r):
    """K_r from its features listed one by one: ∏_{j∈S} x_j for each subset S of size r."""
    subsets = [list(S) for S in itertools.combinations(range(X.shape[1]), r)]

    def features(Z):
        return np.array([[np.prod(z[S]) for S in subsets] for z in Z]).reshape(len(Z), -1)

    return features(X) @ features(Y).T


#: numpy's polynomial routines multiply ∏(t + z_j) out in one call (np.poly, numpy.polynomial).
POLYNOMIAL_ROUTINES = ("numpy.lib._polynomial_impl", "numpy.lib.polynomial", "numpy.polynomial")
#: The cost test: d = 20, r = 10 (184 756 subsets) on 3 × 4 points.
COST_D, COST_R, MAX_LINES, MAX_BYTES = 20, 10, 20_000, 2**20


def q2(student_anova_gram, *, seed=None):
    """Check ``anova_gram(X, Y, r)``: the n × m Gram matrix of the ANOVA kernel of degree r,
    K_r(x, y) = Σ_{|S| = r} ∏_{j∈S} x_j y_j, at O(r d) per pair without listing the subsets."""
    rng = fresh_rng(seed)
    c = SelfCheck("hw1.q2", student_anova_gram, forbid=POLYNOMIAL_ROUTINES)

    def gram(X, Y, r):
        got = as_numbers(c.fn(X, Y, r), what=f"anova_gram(X, Y, {r})")
        assert got.shape == (len(X), len(Y)), (
            f"for {len(X)} and {len(Y)} points got shape {got.shape}, not ({len(X)}, {len(Y)})"
        )
        return got

    @c.test(
        "shape (n, m); K_0 = 1, K_1 = xᵀy, and K_r = 0 for r > d",
        "K_r is the coefficient of tʳ in ∏_j (1 + t x_j y_j): start from the coefficients "
        "(1, 0, …, 0) of the empty product and keep those of t⁰, …, tʳ.",
    )
    def _():
        d = int(rng.integers(2, 7))
        X, Y = rng.normal(size=(4, d)), rng.normal(size=(3, d))
        close(gram(X, Y, 0), np.ones((4, 3)), what="K_0")
        close(gram(X, Y, 1), X @ Y.T, what="K_1")
        close(gram(X, Y, d + 1), np.zeros((4, 3)), what=f"K_r for r = d + 1 = {d + 1}")

    @c.test(
        "equals the sum over the subsets S of size r of ∏_{j∈S} x_j y_j, for d ≤ 7 and every r",
        "each coordinate enters a subset at most once: multiplying in 1 + t z_j adds z_j times "
        "the coefficient of t^(k−1) from before this factor to that of t^k.",
    )
    def _():
        for d in (3, 5, 7):
            X, Y = rng.normal(size=(4, d)), rng.normal(size=(5, d))
            for r in range(2, d + 1):
                close(gram(X, Y, r), _subset_gram(X, Y, r), what=f"K_r for d = {d}, r = {r}")

    @c.test(
        "the degrees add up: Σ_r K_r = ∏_j (1 + x_j y_j) for d = 12",
        "set t = 1 in the product whose coefficients your recursion computes.",
    )
    def _():
        X, Y = rng.normal(size=(3, 12)) / 2, rng.normal(size=(4, 12)) / 2
        total = sum(gram(X, Y, r) for r in range(13))
        close(total, _all_subsets_gram(X, Y), what="Σ_r K_r")

    @c.test(
        "raises ValueError for r < 0",
        "no subset has a negative size: test r before computing anything.",
    )
    def _():
        X = rng.normal(size=(2, 3))
        try:
            c.fn(X, X, -1)
        except ValueError:
            return
        raise AssertionError("no ValueError for r = -1")

    @c.test(
        f"cost: d = {COST_D}, r = {COST_R} ({math.comb(COST_D, COST_R):,} subsets) on 3 × 4 "
        f"points in under {MAX_LINES:,} lines of Python and {MAX_BYTES // 2**20} MB",
        "the recursion goes through the coordinates once and keeps r + 1 coefficients per "
        "pair, O(r d) work; listing the subsets costs C(d, r) per pair.",
    )
    def _():
        X, Y = rng.normal(size=(3, COST_D)), rng.normal(size=(4, COST_D))
        counter = WorkCounter(1, max_steps=MAX_LINES)
        counted_call(
            c,
            (X, Y, COST_R),
            counter,
            f"your function ran more than {MAX_LINES:,} lines of Python (stopped there)",
        )
        assert counter.peak_bytes <= MAX_BYTES, (
            f"your function held {counter.peak_bytes / 2**20:.1f} MB at once on 3 × 4 points"
        )

    c.finish()


def _sketch_error(Z, F1, F2):
    """|ZZᵀ − K₁ ∘ K₂| in units of its standard error: one feature z(x)z(y) has variance at
    most 9‖φ₁(x)‖²‖φ₁(y)‖²‖φ₂(x)‖²‖φ₂(y)‖² for independent signs (E(rᵀa)²(rᵀb)² ≤ 3‖a‖²‖b‖²)."""
    n1, n2 = np.linalg.norm(F1, axis=1), np.linalg.norm(F2, axis=1)
    se = 3.0 * np.outer(n1, n1) * np.outer(n2, n2) / np.sqrt(Z.shape[1])
    return np.max(np.abs(Z @ Z.T - (F1 @ F1.T) * (F2 @ F2.T)) / se)


def q3(student_sketch, *, seed=None):
    """Check ``sketch_product_features(F1, F2, D, rng)``: D random features whose Gram matrix
    estimates K₁ ∘ K₂ without bias, at a cost linear in D₁ + D₂ (Kar & Karnick 2012)."""
    rng = fresh_rng(seed)
    c = SelfCheck("hw1.q3", student_sketch)

    def features(F1, F2, D, draw_seed):
        Z = np.asarray(c.fn(F1, F2, D, np.random.default_rng(draw_seed)), dtype=float)
        assert Z.shape == (len(F1), D), f"got shape {Z.shape}, expected ({len(F1)}, {D})"
        assert np.all(np.isfinite(Z)), "the features contain NaN or infinity"
        return Z

    @c.test(
        "shape (n, D); the generator passed in decides the draw",
        "draw every random sign from rng, the generator given as an argument.",
    )
    def _():
        F1, F2 = rng.normal(size=(5, 3)), rng.normal(size=(5, 4))
        one, again = features(F1, F2, 7, 11), features(F1, F2, 7, 11)
        assert np.array_equal(one, again), "the same generator seed gave different features"
        other = features(F1, F2, 7, 12)
        assert not np.array_equal(one, other), "another seed gave the same features"

    @c.test(
        "every point gets the same random signs (a row depends only on its own input row)",
        "draw the signs once, for the feature coordinates, and apply them to every row.",
    )
    def _():
        F1, F2 = rng.normal(size=(6, 2)), rng.normal(size=(6, 3))
        full = features(F1, F2, 9, 5)
        close(full[2:3], features(F1[2:3], F2[2:3], 9, 5), what="row 2")

    @c.test(
        "exact when each kernel has one feature: ZZᵀ = K₁ ∘ K₂ (a sign squared is 1)",
        "z(x) = (rᵀφ₁(x))(sᵀφ₂(x))/√D with one product per feature; check the scaling 1/√D.",
    )
    def _():
        F1, F2 = rng.normal(size=(5, 1)), rng.normal(size=(5, 1))
        Z = features(F1, F2, 30, 3)
        close(Z @ Z.T, (F1 @ F1.T) * (F2 @ F2.T), what="ZZᵀ")

    @c.test(
        "unbiased: over 10⁵ features ZZᵀ is within 6 standard errors of K₁ ∘ K₂",
        "the signs r for φ₁ and s for φ₂ must be independent of each other, each sign ±1 "
        "with probability ½, so that E[rrᵀ] = I and the expectation factorises.",
    )
    def _():
        F1, F2 = rng.normal(size=(4, 3)), rng.normal(size=(4, 3))
        Z = features(F1, F2, 100_000, int(rng.integers(1 << 30)))
        err = _sketch_error(Z, F1, F2)
        assert err <= 6.0, f"ZZᵀ is {err:.3g} standard errors from K₁ ∘ K₂"

    @c.test(
        "memory: no array with D₁·D₂ columns is formed (D₁ = D₂ = 300)",
        "multiply Φ₁ and Φ₂ by the sign matrices separately and combine the two n × D results.",
    )
    def _():
        F1, F2 = rng.normal(size=(40, 300)), rng.normal(size=(40, 300))
        tracemalloc.start()
        try:
            features(F1, F2, 20, 0)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        # the tensor features alone would take 40 · 90 000 · 8 bytes = 29 MB
        assert peak < 4 * 2**20, f"the function allocated {peak / 2**20:.1f} MB at its peak"

    c.finish()
