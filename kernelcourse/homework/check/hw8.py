"""Self-checks for homework 8: an unpenalised offset, the power function and P-greedy (lecture 003).

The checks test optimality conditions and properties every correct answer has: the residual of a
fit with an offset, the interpolation conditions of the power function, the error bound it
gives and how it scales with the kernel, the monotone maxima of a greedy run, and how many kernel
entries it evaluates. None stores
an expected value or computes the power function itself.
"""

from __future__ import annotations

import numpy as np

from ...kernels import RBF
from ._core import SelfCheck, as_numbers, close, fresh_rng, handed

__all__ = ["q1", "q2", "q3", "CountingKernel"]

# What else would answer these questions in one call.
SOLVERS = ("sklearn.kernel_ridge", "sklearn.linear_model", "sklearn.gaussian_process")
# The kernel a question hands to the student's function may run (with its input validation).
KERNELS = ("kernelcourse.kernels", "kernelcourse._validation")


class CountingKernel:
    """A kernel that counts the entries it evaluates: ``k(A, B)`` and ``k.diag(A)``.

    ``evaluated`` is the number of kernel values computed so far (|A|·|B| for a block, |A| for a
    diagonal), the cost that P-greedy is asked to keep near N·m.
    """

    def __init__(self, kernel):
        self.kernel = kernel
        self.evaluated = 0

    @handed
    def __call__(self, A, B):
        A, B = np.atleast_2d(A), np.atleast_2d(B)
        self.evaluated += len(A) * len(B)
        return self.kernel(A, B)

    @handed
    def diag(self, A):
        A = np.atleast_2d(A)
        self.evaluated += len(A)
        return self.kernel.diag(A)


def _fit_problem(rng, n):
    X = rng.uniform(-2, 2, size=(n, 2))
    y = np.sin(X[:, 0]) + X[:, 1] + float(rng.uniform(-5, 5))
    return RBF(gamma=float(rng.uniform(0.3, 2)))(X), y


def q1(student_krr_with_offset, *, seed=None):
    """Check ``krr_with_offset(K, y, lam) -> (alpha, b)`` through its optimality conditions."""
    rng = fresh_rng(seed)
    c = SelfCheck("hw8.q1", student_krr_with_offset, forbid=SOLVERS)
    hint = (
        "differentiate the objective in α and in b: one condition ties the residual to α, "
        "the other says something about the sum of α."
    )
    for n in (12, 40):

        @c.test(f"the optimality conditions hold for n = {n}", hint)
        def _(n=n):
            K, y = _fit_problem(rng, n)
            lam = float(rng.uniform(0.05, 1))
            alpha, b = c.fn(K, y, lam)
            alpha = np.asarray(alpha, dtype=float)
            assert alpha.shape == (n,), f"alpha has shape {alpha.shape}, expected ({n},)"
            assert np.ndim(b) == 0, "b must be one number"
            scale = np.abs(y).max()
            residual = y - K @ alpha - float(b)
            close(residual / scale, lam * alpha / scale, atol=1e-8, what="the residual")
            close(alpha.sum() / scale, 0.0, atol=1e-8, what="a linear combination of α")

    @c.test(
        "adding a constant to y moves b by that constant and leaves α unchanged",
        "the offset is not penalised, so a constant shift of the targets is absorbed by b.",
    )
    def _():
        K, y = _fit_problem(rng, 15)
        shift = float(rng.uniform(1, 10))
        a1, b1 = c.fn(K, y, 0.3)
        a2, b2 = c.fn(K, y + shift, 0.3)
        close(a2, a1, rtol=1e-7, atol=1e-8, what="α after the shift")
        close(float(b2) - float(b1), shift, rtol=1e-8, what="the change of b")

    c.finish()


def _worst_errors(kernel, centers, X, rng, n_functions=20):
    """max over random f ∈ H of |f(x) − s_f(x)| / ‖f‖ at each row of X (a lower bound on P).

    s_f interpolates f on the centres; f = Σ β_l K(z_l, ·) with random centres z_l.
    """
    worst = np.zeros(len(X))
    Kc = kernel(centers, centers)
    for _ in range(n_functions):
        Z = rng.uniform(-2, 2, size=(5, X.shape[1]))
        beta = rng.normal(size=5)
        coef = np.linalg.solve(Kc, kernel(centers, Z) @ beta)
        error = kernel(X, Z) @ beta - kernel(X, centers) @ coef
        worst = np.maximum(worst, np.abs(error) / np.sqrt(beta @ kernel(Z, Z) @ beta))
    return worst


def q2(student_power_function, *, seed=None):
    """Check ``power_function(kernel, centers, points)``: zero at the centres, bounded,
    monotone."""
    rng = fresh_rng(seed)
    c = SelfCheck("hw8.q2", student_power_function, forbid=SOLVERS, allow=KERNELS)
    kernel = RBF(gamma=float(rng.uniform(0.5, 2)))
    centers = rng.uniform(-1, 1, size=(8, 2))
    X = rng.uniform(-1.5, 1.5, size=(50, 2))

    def power(centers, points):
        P = as_numbers(c.fn(kernel, centers, points), "P")
        assert P.shape == (len(points),), f"got shape {P.shape} for {len(points)} points"
        return P

    @c.test(
        "vanishes at the centres and lies between 0 and √K(x, x) elsewhere",
        "P(x) is the H-norm of K(x, ·) minus its interpolant on the centres; an interpolant "
        "is exact at the centres.",
    )
    def _():
        at_centers = power(centers, centers)
        close(at_centers, np.zeros(8), atol=1e-5, what="P at the centres")
        P = power(centers, X)
        assert np.all(P >= 0) and np.all(P <= np.sqrt(kernel.diag(X)) + 1e-12), (
            "P(x) leaves [0, √K(x, x)]"
        )

    @c.test(
        "bounds the interpolation error: |f(x) − s_f(x)| ≤ P(x) ‖f‖ for random f in H",
        "P(x) is the worst case of |f(x) − s_f(x)| over ‖f‖ ≤ 1: write f(x) − s_f(x) as an "
        "inner product with one element of H.",
    )
    def _():
        P = power(centers, X)
        worst = _worst_errors(kernel, centers, X, rng)
        assert np.all(worst <= P + 1e-7), "some f has a larger interpolation error than P ‖f‖"

    @c.test(
        "never grows when a centre is added",
        "more centres, a larger space to interpolate in, a smaller error.",
    )
    def _():
        small = power(centers[:4], X)
        large = power(centers, X)
        assert np.all(large <= small + 1e-7), "P with 8 centres exceeds P with 4 of them"

    @c.test(
        "multiplying the kernel by c multiplies P by √c (K(x, x) = c, not 1)",
        "‖g‖ in the RKHS of cK is ‖g‖_H / √c, and K(x, x) comes from kernel.diag, which "
        "is 1 for the RBF kernel alone.",
    )
    def _():
        scale = float(rng.uniform(2, 6))
        P = power(centers, X)
        got = as_numbers(c.fn(scale * kernel, centers, X), "P for c·K")
        close(got, np.sqrt(scale) * P, rtol=1e-6, atol=1e-7, what="P for c·K")

    c.finish()


def q3(student_p_greedy, *, seed=None):
    """Check ``p_greedy(kernel, candidates, m) -> (indices, p_max)``.

    The choices must be distinct, ``p_max`` must start at max √K(x, x), never grow, bound the
    interpolation error of random f ∈ H on the centres chosen so far and stay below the
    distance of K(x, ·) to the span of any one of them (equal to it after the first centre),
    and the run must evaluate at most N·(m + 2) kernel entries.
    """
    rng = fresh_rng(seed)
    c = SelfCheck("hw8.q3", student_p_greedy, forbid=SOLVERS, allow=KERNELS)
    N, m = 200, 12
    # K(x, x) = c, not 1: a P² that starts from 1 instead of kernel.diag fails
    base = float(rng.uniform(2, 5)) * RBF(gamma=float(rng.uniform(1, 4)))
    candidates = rng.uniform(-1, 1, size=(N, 2))

    @c.test(
        "distinct choices; p_max starts at max √K(x, x), never grows, bounds every error",
        "step k picks the candidate where the power function of the centres chosen before it "
        "is largest, with P_0(x)² = K(x, x); p_max[k] is that largest value.",
    )
    def _():
        indices, p_max = c.fn(CountingKernel(base), candidates, m)
        indices = as_numbers(indices, "indices")
        p_max = as_numbers(p_max, "p_max")
        assert indices.shape == (m,) and p_max.shape == (m,), (
            f"got shapes {indices.shape} and {p_max.shape}, expected ({m},) each"
        )
        # whole numbers in range: a NaN or a fraction would reach numpy's indexing below
        assert np.all(indices == np.round(indices)) and np.all((indices >= 0) & (indices < N)), (
            f"indices holds a value that is not a row number 0, …, {N - 1} of candidates"
        )
        indices = indices.astype(int)
        assert len(set(indices.tolist())) == m, "a candidate was chosen twice"
        close(p_max[0], np.sqrt(base.diag(candidates)).max(), what="p_max[0]")
        assert np.all(np.diff(p_max) <= 1e-9), "the largest power function grew"
        for k in (1, m // 2, m - 1):
            worst = _worst_errors(base, candidates[indices[:k]], candidates, rng, 5)
            assert worst.max() <= p_max[k] + 1e-7, f"p_max[{k}] is below some interpolation error"
            # P for k centres is at most the distance of K(x, ·) to the span of one of them
            kxc = base(candidates, candidates[indices[:k]])
            one = base.diag(candidates)[:, None] - kxc**2 / base.diag(candidates[indices[:k]])
            above = np.sqrt(np.maximum(one.min(axis=1), 0.0)).max()
            assert p_max[k] <= above + 1e-7, f"p_max[{k}] exceeds the largest power function"
            assert worst[indices[:k]].max() <= 1e-6, "the chosen centres are not interpolated"

    @c.test(
        "after one centre z, p_max[1] is the largest distance of K(x, ·) to the span of K(z, ·)",
        "p_max[k] is the largest value of the power function P itself, not of P².",
    )
    def _():
        # candidates close together, so that P after one centre stays well below √K(x, x)
        near = rng.uniform(-0.25, 0.25, size=(60, 2))
        indices, p_max = c.fn(CountingKernel(base), near, 3)
        indices, p_max = as_numbers(indices, "indices"), as_numbers(p_max, "p_max")
        assert indices.shape == (3,) and p_max.shape == (3,), (
            f"got shapes {indices.shape} and {p_max.shape}, expected (3,) each"
        )
        first = int(indices[0])
        assert first == indices[0] and 0 <= first < 60, "indices[0] is not a row of candidates"
        z = near[first : first + 1]
        distance = base.diag(near) - base(near, z)[:, 0] ** 2 / base.diag(z)[0]
        close(p_max[1], np.sqrt(np.maximum(distance, 0.0)).max(), rtol=1e-6, what="p_max[1]")

    @c.test(
        f"evaluates at most N·(m + 2) kernel entries (N = {N}, m = {m})",
        "do not refactor from scratch at each step: one new kernel column per chosen point "
        "is enough to update P² for every candidate (a Newton basis, or a pivoted Cholesky).",
    )
    def _():
        kernel = CountingKernel(base)
        c.fn(kernel, candidates, m)
        budget = N * (m + 2)
        assert kernel.evaluated <= budget, (
            f"{kernel.evaluated} kernel entries evaluated, budget {budget}"
        )

    c.finish()
