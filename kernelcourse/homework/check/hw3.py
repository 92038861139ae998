"""Self-checks for homework 3: quasi-Monte Carlo random Fourier features (lectures 000, 001).

Avron et al. (2016); :doc:`chapter 5 </book/05_bochner_random_fourier_features>`. The checks
test properties every correct answer has: the stratification of a Halton sequence along each
coordinate and each pair of coordinates, uniform points after randomisation, a feature map for
the triangle kernel whose Gram matrix depends on differences only and converges to the kernel,
and an error below plain Monte Carlo's at the same number of features. None stores a point
set, a frequency or a feature value, and none evaluates the distribution function that
question 2 inverts: the Monte Carlo baseline draws its frequencies by rejection from the density.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from ._core import SelfCheck, as_numbers, close, fresh_rng

__all__ = ["q1", "q2"]

# What else would answer these questions in one call.
QMC_ROUTINES = (
    "scipy.stats._qmc",
    "scipy.stats._qmc_cy",
    "scipy.stats.qmc",
    "sklearn.kernel_approximation",
)
#: Question 2 also refuses scipy.stats, whose distributions can build a quantile function
#: from a density (rv_continuous.ppf, scipy.stats.sampling).
SAMPLERS = (*QMC_ROUTINES, "scipy.stats")
PRIMES = (2, 3, 5, 7, 11)


def _cells(u, base, k):
    """Index of the interval of length base**-k that holds each entry of ``u``."""
    return np.floor(np.asarray(u) * base**k).astype(int)


def _largest_power(base, n):
    k = 0
    while base ** (k + 1) <= n:
        k += 1
    return k


def q1(student_scrambled_halton, *, seed=None):
    """Check ``scrambled_halton(n, d, rng)``: an (n, d) array of randomised Halton points."""
    rng = fresh_rng(seed)
    c = SelfCheck("hw3.q1", student_scrambled_halton, forbid=QMC_ROUTINES)

    @c.test(
        "returns n points of shape (n, d) strictly inside the unit cube",
        "one row per point, one column per coordinate; a randomised point is never exactly 0 "
        "or 1 (the inverse CDF of question 2 is infinite there).",
    )
    def _():
        U = as_numbers(c.fn(10, 3, np.random.default_rng(int(rng.integers(2**31)))), "the points")
        assert U.shape == (10, 3), f"got shape {U.shape}"
        assert np.all(np.isfinite(U)), "the points contain NaN or infinity"
        assert np.all((U > 0) & (U < 1)), "some coordinate lies outside (0, 1)"

    @c.test(
        "draws from the generator it is given (same seed, same points; other seed, others)",
        "draw every random number from the rng argument, not from np.random or a new generator.",
    )
    def _():
        s = int(rng.integers(2**31))
        a = c.fn(20, 2, np.random.default_rng(s))
        b = c.fn(20, 2, np.random.default_rng(s))
        other = c.fn(20, 2, np.random.default_rng(s + 1))
        close(a, b, what="the points from equal seeds")
        other = as_numbers(other, "the points")
        assert other.shape == np.shape(a), f"got shape {other.shape} for another seed"
        assert not np.allclose(a, other), "different seeds gave the same points"

    n, stratified_seed, cache = 250, int(rng.integers(2**31)), []

    def points():
        """The 250 points both stratification tests read, computed once."""
        if not cache:
            U = as_numbers(c.fn(n, 5, np.random.default_rng(stratified_seed)), "the points")
            assert U.shape == (n, 5), f"got shape {U.shape} for n = {n}, d = 5"
            # NaN would fall in no interval (and warn when cast to a cell index)
            assert np.all((U >= 0) & (U < 1)), "some coordinate is NaN or outside [0, 1)"
            cache.append(U)
        return cache[0]

    @c.test(
        "along coordinate j the first b^k points fill every interval of length b^-k once "
        "(b = 2, 3, 5, 7, 11)",
        "the radical inverse of i in base b mirrors the base-b digits of i about the radix "
        "point, so for i < b^k the first k digits run through every k-digit fraction once; a "
        "scramble that permutes digit values, the same permutation for every point, keeps this.",
    )
    def _():
        U = points()
        for j, base in enumerate(PRIMES):
            k = _largest_power(base, n)
            cells = _cells(U[: base**k, j], base, k)
            assert len(np.unique(cells)) == base**k, (
                f"coordinate {j}: some interval of length {base}^-{k} holds two of the first "
                f"{base**k} points"
            )

    @c.test(
        "pairs of coordinates: the first b1^k1 · b2^k2 points fill every box once",
        "coordinate j uses the j-th prime as its base (2, 3, 5, 7, …), and distinct primes make "
        "the leading digits of two coordinates run through all pairs (the Chinese remainder "
        "theorem); permute digit values, since a shift modulo 1 carries into them and breaks this.",
    )
    def _():
        U = points()
        for (j1, k1), (j2, k2) in [((0, 3), (1, 2)), ((1, 2), (2, 2)), ((2, 1), (4, 1))]:
            b1, b2 = PRIMES[j1], PRIMES[j2]
            m = b1**k1 * b2**k2
            boxes = _cells(U[:m, j1], b1, k1) * b2**k2 + _cells(U[:m, j2], b2, k2)
            assert len(np.unique(boxes)) == m, (
                f"coordinates {j1} and {j2}: some box of the {b1}^{k1} × {b2}^{k2} grid holds "
                f"two of the first {m} points"
            )

    @c.test(
        "each point is uniform on the cube over the draws of rng (60 generators)",
        "a fixed point (the unscrambled sequence starts at 0) is not uniform: draw the digit "
        "permutations from rng, and randomise enough digits that the points fill (0, 1) and "
        "not a coarse grid.",
    )
    def _():
        base = int(rng.integers(2**31))
        draws = []
        for s in range(60):
            U = as_numbers(c.fn(3, 2, np.random.default_rng(base + s)), "the points")
            assert U.shape == (3, 2), f"got shape {U.shape} for n = 3, d = 2"
            draws.append(U[[0, 2]])
        draws = np.array(draws)
        for i, j in [(0, 0), (0, 1), (1, 0)]:
            p = stats.kstest(draws[:, i, j], "uniform").pvalue
            assert p > 1e-6, (
                f"point {2 * i}, coordinate {j}: Kolmogorov–Smirnov test against U(0, 1) "
                f"gives p = {p:.2g}"
            )
            # 60 uniform values are distinct; on a grid of M values about 1800/M pairs collide
            distinct = len(np.unique(draws[:, i, j]))
            assert distinct >= 55, (
                f"point {2 * i}, coordinate {j}: only {distinct} different values in 60 draws, "
                "so the points lie on a coarse grid"
            )

    c.finish()


def triangle_kernel(X, gamma):
    """The Gram matrix of ∏_j max(0, 1 − γ|x_j − y_j|)."""
    return np.prod(np.maximum(0.0, 1.0 - gamma * np.abs(X[:, None, :] - X[None, :, :])), axis=2)


def _fejer_iid(shape, rng):
    """Independent draws of density (1 − cos t) / (π t²), by rejection from Cauchy(0, 2),
    whose density times 2 lies above it everywhere."""
    size, out = int(np.prod(shape)), np.empty(0)
    while out.size < size:
        t = 2.0 * rng.standard_cauchy(2 * size)
        # p(t) / (2 q(t)) = (1 − cos t)(1 + t²/4) / t², written with 1 − cos t = 2 sin²(t/2)
        half = t / 2
        accept = rng.random(t.size) < np.sinc(half / np.pi) ** 2 * (1 + half**2) / 2
        out = np.concatenate([out, t[accept]])
    return out[:size].reshape(shape)


def _mc_features(X, D, gamma, rng):
    """Plain Monte Carlo cos/sin features, the baseline of the comparison."""
    T = X @ (gamma * _fejer_iid((D, X.shape[1]), rng)).T
    return np.hstack([np.cos(T), np.sin(T)]) / np.sqrt(D)


def mean_relative_error(features, X, D, gamma, rng, repeats=12):
    """Mean of ‖K − ΨΨᵀ‖_F / ‖K‖_F over ``repeats`` draws of ``features(X, D, gamma, rng)``."""
    K = triangle_kernel(X, gamma)
    errors = []
    for _ in range(repeats):
        Z = as_numbers(
            features(X, D, gamma, np.random.default_rng(rng.integers(2**31))), "the features"
        )
        assert Z.shape == (len(X), 2 * D), f"got shape {Z.shape} for n = {len(X)}, D = {D}"
        errors.append(np.linalg.norm(K - Z @ Z.T) / np.linalg.norm(K))
    return float(np.mean(errors))


def q2(student_qmc_features, *, seed=None):
    """Check ``qmc_triangle_features(X, D, gamma, rng)``: (n, 2D) cos/sin features."""
    rng = fresh_rng(seed)
    c = SelfCheck("hw3.q2", student_qmc_features, forbid=SAMPLERS)

    def features(X, D, gamma, seed):
        Z = as_numbers(c.fn(X, D, gamma, np.random.default_rng(seed)), "the features")
        assert Z.shape == (len(X), 2 * D), (
            f"got shape {Z.shape} for n = {len(X)}, D = {D}, expected (n, 2D)"
        )
        return Z

    @c.test(
        "returns shape (n, 2D) with ψ(x)ᵀψ(x) = 1 for every x",
        "one cosine and one sine per frequency, cos² + sin² = 1, and a factor 1/√D makes D "
        "such pairs sum to 1.",
    )
    def _():
        X = rng.normal(size=(7, 3))
        Z = features(X, 16, 0.7, int(rng.integers(2**31)))
        close(np.sum(Z**2, axis=1), np.ones(7), rtol=0, atol=1e-9, what="ψ(x)ᵀψ(x)")

    @c.test(
        "draws from the generator it is given (same seed, same features; other seed, others)",
        "pass rng on to the point set of question 1; draw nothing from np.random.",
    )
    def _():
        X = rng.normal(size=(4, 2))
        s = int(rng.integers(2**31))
        a, b = features(X, 8, 1.0, s), features(X, 8, 1.0, s)
        close(a, b, what="the features from equal seeds")
        assert not np.allclose(a, features(X, 8, 1.0, s + 1)), (
            "different seeds gave the same features"
        )

    @c.test(
        "ψ(x)ᵀψ(y) depends on x − y only (shifting every x leaves ΨΨᵀ unchanged)",
        "take the cosine and the sine of ωᵀx itself, with no random phase: "
        "cos a cos b + sin a sin b = cos(a − b).",
    )
    def _():
        X, shift = rng.normal(size=(6, 3)), rng.normal(size=3)
        s = int(rng.integers(2**31))
        Z, Zs = features(X, 32, 0.5, s), features(X + shift, 32, 0.5, s)
        close(Zs @ Zs.T, Z @ Z.T, rtol=0, atol=1e-8, what="ΨΨᵀ after a shift")

    @c.test(
        "ψ(x)ᵀψ(y) approaches the triangle kernel ∏ max(0, 1 − γ|x_j − y_j|) at D = 4096, "
        "at a small and a large γ",
        "per coordinate, ω = γt with t = F⁻¹(u), F the distribution function of the density "
        "(1 − cos t)/(πt²): integrate it (by parts; the sine integral appears) and solve "
        "F(t) = u with a bracketing root finder.",
    )
    def _():
        X = rng.uniform(-1.5, 1.5, size=(8, 2))
        # one γ below 1/2 and one above 1, so that a law with the scale 1/γ in place of γ
        # cannot pass where the two coincide
        for gamma in (float(rng.uniform(0.3, 0.45)), float(rng.uniform(1.2, 1.8))):
            Z = features(X, 4096, gamma, int(rng.integers(2**31)))
            # Monte Carlo would be off by about 0.03 here; QMC by less
            close(
                Z @ Z.T, triangle_kernel(X, gamma), rtol=0, atol=0.05, what=f"γ = {gamma:.2f}: ΨΨᵀ"
            )

    @c.test(
        "beats Monte Carlo: at D = 256 in 2-D the mean error over 12 draws is below 0.8 "
        "times that of i.i.d. frequencies",
        "the frequencies must come from the scrambled Halton points of question 1 through the "
        "inverse CDF, coordinate by coordinate; independent draws are plain Monte Carlo.",
    )
    def _():
        X = rng.normal(size=(50, 2))
        gamma = float(rng.uniform(0.3, 1.0))
        ours = mean_relative_error(c.fn, X, 256, gamma, rng)
        mc = mean_relative_error(_mc_features, X, 256, gamma, rng)
        assert ours < 0.8 * mc, (
            f"the mean relative error is {ours / mc:.2f} times the Monte Carlo error"
        )

    c.finish()
