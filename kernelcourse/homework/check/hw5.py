"""Self-checks for homework 5: full kernel ridge regression by conjugate gradients, preconditioned
with a Nyström approximation (Williams & Seeger 2001; :doc:`chapter 9
</book/09_nystroem_vs_rff>`), and the Ritz values that CG computes on the way.

The checks test what every correct answer has: the preconditioner inverts K̃ + λI for the
pseudo-inverse form of K̃ (also when a landmark repeats), evaluates only the n·m kernel values
it needs, never allocates an n × n array and computes no eigenvalues (it factors K_mm by
Cholesky with pivoting); the solver meets its residual, stops at the first
iterate that does, uses one product per iteration, and its Ritz values lie inside the spectrum of
the preconditioned matrix and reach its ends. None stores an expected value.
"""

from __future__ import annotations

import numpy as np

from ...kernels import RBF
from ._core import SelfCheck, as_numbers, close, fresh_rng, handed, peak_bytes
from .hw1 import FactorisationCheck
from .hw8 import CountingKernel

__all__ = ["q1", "q2", "CountingKernel"]

# What else would answer these questions in one call (scipy's iterative solvers: cg, minres, ...;
# its LinearOperator and eigensolvers stay allowed).
SOLVERS = (
    "sklearn.kernel_approximation",
    "sklearn.kernel_ridge",
    "sklearn.gaussian_process",
    "scipy.sparse.linalg._isolve",
)
# The kernel a question hands to the student's function may run (with its input validation).
KERNELS = ("kernelcourse.kernels", "kernelcourse._validation")


def _guarded(c, fn):
    """``fn`` (returned by the student's function) called under the same guard as ``c.fn``."""
    # checked here, not when called: a None would otherwise fail as the student's own TypeError
    assert callable(fn), (
        f"your function returned {'None' if fn is None else type(fn).__name__}, not a function "
        "v -> (K̃ + λI)⁻¹ v"
    )

    def call(*args):
        return as_numbers(c.guarded_call(fn, args, {}), "(K̃ + λI)⁻¹ v")

    return call


def _nystroem_gram(K, landmarks):
    """K̃ = K_nm K_mm⁺ K_mn, with the pseudo-inverse taken on the numerical range of K_mm."""
    C = K[:, landmarks]
    return C @ np.linalg.pinv(C[landmarks], rcond=1e-10, hermitian=True) @ C.T


def _problem(rng, n, d=3):
    X = rng.uniform(-2, 2, size=(n, d))
    return X, RBF(gamma=float(rng.uniform(0.3, 1.0)))


def q1(student_nystroem_preconditioner, *, seed=None):
    """Check ``nystroem_preconditioner(kernel, X, landmarks, lam)``: a function v ↦ (K̃ + λI)⁻¹v."""
    rng = fresh_rng(seed)
    c = FactorisationCheck(
        "hw5.q1",
        student_nystroem_preconditioner,
        reason="this question asks for K_mm's Cholesky factorisation with pivoting, without "
        "eigenvalues or singular values",
        forbid=SOLVERS,
        allow=KERNELS,
    )

    def operator(kernel, X, landmarks, lam):
        apply = c.fn(CountingKernel(kernel), X, landmarks, lam)
        assert callable(apply), "the function must return a function v -> (K̃ + λI)⁻¹ v"
        return _guarded(c, apply)

    def compare(apply, K, landmarks, lam, what):
        n = len(K)
        P = _nystroem_gram(K, landmarks) + lam * np.eye(n)
        V = rng.normal(size=(n, 3))
        got = np.column_stack([apply(v) for v in V.T])
        assert got.shape == (n, 3), f"(K̃ + λI)⁻¹ v has shape {got[:, 0].shape}, expected ({n},)"
        # λ (K̃ + λI)⁻¹ has norm at most 1: compare on that scale
        close(lam * got, lam * np.linalg.solve(P, V), rtol=0, atol=1e-7, what=what)

    @c.test(
        "returns v ↦ (K̃ + λI)⁻¹ v with K̃ = K_nm K_mm⁺ K_mn, for several λ",
        "K̃ = Z Zᵀ with Z = K_nJ L_J⁻ᵀ from the pivoted Cholesky factor of K_mm; then "
        "(Z Zᵀ + λI)⁻¹ is the Woodbury identity of chapter 4, with one r × r matrix to factor.",
    )
    def _():
        X, kernel = _problem(rng, 60)
        landmarks = rng.choice(60, size=12, replace=False)
        K = kernel(X)
        for lam in (1e-3, 0.1, 2.0):
            apply = operator(kernel, X, landmarks, lam)
            compare(apply, K, landmarks, lam, f"λ (K̃ + λI)⁻¹ v at λ = {lam}")

    @c.test(
        "a repeated landmark (a singular K_mm) gives the same operator as without the repeat",
        "a repeated landmark leaves a zero pivot: stop pivoting when the largest remaining "
        "pivot is below 10⁻¹⁰ of K_mm's largest diagonal entry instead of dividing by "
        "round-off.",
    )
    def _():
        X, kernel = _problem(rng, 50)
        landmarks = rng.choice(50, size=10, replace=False)
        repeated = np.r_[landmarks, landmarks[:3]]
        rng.shuffle(repeated)
        apply = operator(kernel, X, repeated, 0.01)
        compare(apply, kernel(X), landmarks, 0.01, "(K̃ + λI)⁻¹ v with repeated landmarks")

    n, m = 3000, 30

    @c.test(
        f"evaluates at most n·m + m² kernel values, allocates no n × n array (n = {n}, m = {m})",
        "only K_nm is needed (K_mm is part of it); apply (K̃ + λI)⁻¹ through the Woodbury "
        "identity with n × r and r × r arrays, never with an n × n one.",
    )
    def _():
        X, kernel = _problem(rng, n)
        landmarks = rng.choice(n, size=m, replace=False)
        counter = CountingKernel(kernel)
        v = rng.normal(size=n)

        def build_and_apply_twice():
            apply = _guarded(c, c.fn(counter, X, landmarks, 0.1))
            return apply(apply(v))

        out, peak = peak_bytes(build_and_apply_twice)
        assert out.shape == (n,), f"(K̃ + λI)⁻¹ v has shape {out.shape}, expected ({n},)"
        budget = n * m + m * m
        assert counter.evaluated <= budget, (
            f"{counter.evaluated} kernel values evaluated, budget {budget}"
        )
        assert peak < n * n * 8 / 4, (
            f"building and applying the preconditioner allocated {peak / 2**20:.0f} MiB at "
            f"once, as much as an n × n array (n = {n})"
        )

    c.finish()


def _spd(rng, n, low, high):
    """A random symmetric positive definite matrix with eigenvalues spread from low to high."""
    Q, _ = np.linalg.qr(rng.normal(size=(n, n)))
    eig = np.geomspace(low, high, n) * rng.uniform(0.9, 1.1, size=n)
    return (Q * eig) @ Q.T


class _Counted:
    """``A @ v``, counting the calls."""

    def __init__(self, A):
        self.A, self.calls = A, 0

    @handed
    def __call__(self, v):
        self.calls += 1
        return self.A @ np.asarray(v, dtype=float)


def q2(student_pcg_ritz, *, seed=None):
    """Check ``pcg_ritz(matvec, b, precondition, tol, max_iter) -> (x, ritz)``."""
    rng = fresh_rng(seed)
    c = SelfCheck("hw5.q2", student_pcg_ritz, forbid=SOLVERS)

    def run(A, b, d, tol, max_iter=1000):
        matvec = _Counted(A)
        x, ritz = c.fn(matvec, b, handed(lambda r: np.asarray(r, dtype=float) / d), tol, max_iter)
        x, ritz = np.asarray(x, dtype=float), np.asarray(ritz, dtype=float)
        assert x.shape == b.shape, f"x has shape {x.shape}, expected {b.shape}"
        assert ritz.ndim == 1, f"ritz has shape {ritz.shape}, expected one value per iteration"
        return x, ritz, matvec.calls

    def relres(A, x, b):
        return np.linalg.norm(b - A @ x) / np.linalg.norm(b)

    hint_solve = (
        "PCG keeps r = b − A x up to date from the product A p it already has; stop when "
        "‖r‖ ≤ tol ‖b‖, and let the preconditioner act on r to give the next direction."
    )

    @c.test(
        "solves A x = b to the relative residual tol, with and without a preconditioner",
        hint_solve,
    )
    def _():
        n = 60
        A = _spd(rng, n, 1.0, 1e3)
        b = rng.normal(size=n)
        for d in (np.ones(n), np.diag(A).copy()):
            x, _, _ = run(A, b, d, 1e-8)
            assert relres(A, x, b) <= 1.5e-8, "the relative residual ‖b − A x‖ / ‖b‖ > tol"

    @c.test(
        "stops at the first iterate that meets tol, one product with A per iteration, "
        "one Ritz value per iteration",
        hint_solve,
    )
    def _():
        n = 50
        A = _spd(rng, n, 1.0, 1e2)
        b = rng.normal(size=n)
        d = np.ones(n)
        x, ritz, calls = run(A, b, d, 1e-6)
        k = len(ritz)
        assert k >= 1, "no Ritz values returned"
        assert calls <= k + 1, f"{calls} products with A for {k} iterations"
        x_before, _, _ = run(A, b, d, 1e-6, max_iter=k - 1) if k > 1 else (np.zeros(n), 0, 0)
        assert relres(A, x_before, b) > 0.99e-6, (
            "one iteration fewer already meets tol: the loop runs an iteration too many"
        )

    hint_ritz = (
        "the Lanczos tridiagonal matrix T_k is k × k: it is built from the k step lengths "
        "α_j and only the k − 1 ratios β_j between them (not the last one). Test it on a "
        "diagonal A with distinct entries, M = I, tol = 0 and max_iter = n: its eigenvalues "
        "must then be A's diagonal entries."
    )

    @c.test(
        "the Ritz values lie in [λ_min, λ_max] of M⁻¹A and reach both ends when CG converges",
        hint_ritz,
    )
    def _():
        n = 40
        A = _spd(rng, n, 1.0, 1e3)
        for d in (np.ones(n), rng.uniform(0.5, 2.0, size=n)):
            # eigenvalues of M⁻¹A = those of M^{-1/2} A M^{-1/2}
            s = 1 / np.sqrt(d)
            eig, V = np.linalg.eigh(s[:, None] * A * s[None, :])
            # b with a share of every eigenvector of M^{-1/2} A M^{-1/2} (after M^{-1/2}):
            # CG never resolves an eigenvalue that b leaves out, and a normal draw left
            # λ_min's at 4e-7 of ‖b‖, so that the smallest Ritz value rightly stayed at λ₂.
            weights = rng.choice([-1.0, 1.0], size=n) * rng.uniform(0.5, 1.5, size=n)
            b = (V @ weights) / s
            _, ritz, _ = run(A, b, d, 1e-10)
            assert np.all(ritz >= eig[0] * (1 - 1e-8)) and np.all(ritz <= eig[-1] * (1 + 1e-8)), (
                "a Ritz value lies outside the spectrum of M⁻¹A"
            )
            close(ritz.max(), eig[-1], rtol=1e-6, what="the largest Ritz value")
            close(ritz.min(), eig[0], rtol=1e-3, what="the smallest Ritz value")

    @c.test(
        "with the exact inverse as preconditioner: one iteration and the Ritz value 1",
        "with M = A the preconditioned residual z = M⁻¹ r is the error itself; the step length "
        "must use rᵀz, not rᵀr.",
    )
    def _():
        n = 30
        A = _spd(rng, n, 1.0, 1e2)
        b = rng.normal(size=n)
        A_inv = np.linalg.inv(A)
        matvec = _Counted(A)
        x, ritz = c.fn(matvec, b, handed(lambda r: A_inv @ np.asarray(r, dtype=float)), 1e-8, 50)
        ritz = np.asarray(ritz, dtype=float)
        assert len(ritz) == 1, f"{len(ritz)} iterations"
        close(ritz, np.ones(1), rtol=1e-8, what="the Ritz value")
        assert relres(A, np.asarray(x, dtype=float), b) <= 1e-8, "the residual exceeds tol"

    c.finish()
