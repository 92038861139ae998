"""Self-checks for homework 3: Bochner's theorem and random Fourier features.

Rahimi & Recht (2007); :doc:`chapter 5 </book/05_bochner_random_fourier_features>`.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from ...kernels import Laplacian
from ._core import Fingerprint, SelfCheck, close, fresh_rng

__all__ = ["q2", "q3", "q4"]

# ψ(X) for the fixed inputs of q3 (X: 6 × 3, Ω: 40 × 3, b: 40), summarised.
RFF_FINGERPRINT = Fingerprint((6, 40), [1.417, -1.928, -0.1362])


def q2(student_laplacian_frequencies, *, seed=None):
    """Check ``laplacian_frequencies(d, D, gamma, rng)``: Ω of shape (D, d), iid Cauchy(0, γ)."""
    rng = fresh_rng(seed)
    c = SelfCheck("hw3.q2", student_laplacian_frequencies)
    hint_scale = (
        "the 1-D spectral density of exp(-γ|δ|) is γ / (π (γ² + ω²)): which distribution "
        "has this density, and what is its scale? One independent draw per entry."
    )

    @c.test("returns an array of shape (D, d)", "one row ω_k per feature, one column per input.")
    def _():
        Omega = np.asarray(c.fn(3, 11, 1.0, np.random.default_rng(0)))
        assert Omega.shape == (11, 3), f"got shape {Omega.shape}"

    @c.test(
        "draws from the generator it is given (same seed, same Ω; other seed, other Ω)",
        "draw from the rng argument, not from np.random or a new generator.",
    )
    def _():
        s = int(rng.integers(2**31))
        a = c.fn(2, 5, 1.0, np.random.default_rng(s))
        b = c.fn(2, 5, 1.0, np.random.default_rng(s))
        other = c.fn(2, 5, 1.0, np.random.default_rng(s + 1))
        close(a, b, what="Ω from equal seeds")
        assert not np.allclose(a, other), "different seeds gave the same Ω"

    gamma = float(rng.uniform(0.5, 3))

    @c.test("the entries follow the Cauchy distribution with scale γ", hint_scale)
    def _():
        Omega = np.asarray(c.fn(2, 20000, gamma, rng))
        p = stats.kstest(Omega.ravel(), stats.cauchy(scale=gamma).cdf).pvalue
        assert p > 1e-6, f"Kolmogorov–Smirnov test against Cauchy(0, γ={gamma:.3g}): p = {p:.2g}"

    @c.test(
        "E[cos(ωᵀδ)] reproduces the Laplacian kernel exp(-γ‖δ‖₁) (Bochner)",
        "the coordinates of ω must be independent: the kernel is a product over coordinates.",
    )
    def _():
        Omega = np.asarray(c.fn(3, 20000, gamma, rng))
        deltas = rng.normal(size=(4, 3)) / gamma
        est = np.cos(deltas @ Omega.T).mean(axis=1)
        want = np.exp(-gamma * np.abs(deltas).sum(axis=1))
        # each estimate is a mean of 20000 terms in [-1, 1]: its standard deviation is < 0.0071
        close(est, want, rtol=0, atol=0.05, what="the Monte Carlo estimate of K(δ)")

    c.finish()


def q3(student_rff_features, *, seed=None):
    """Check ``rff_features(X, Omega, b)`` = √(2/D) cos(XΩᵀ + b)."""
    rng = fresh_rng(seed)
    c = SelfCheck("hw3.q3", student_rff_features)

    @c.test(
        "matches ψ(x) = √(2/D) cos(Ωx + b) on a fixed input",
        "with X of shape (n, d) and Ω of shape (D, d), the phases are X @ Omega.T + b, shape "
        "(n, D); do not forget the factor √(2/D).",
    )
    def _():
        fixed = np.random.default_rng(3)
        X, Omega = fixed.normal(size=(6, 3)), fixed.standard_cauchy(size=(40, 3))
        b = fixed.uniform(0, 2 * np.pi, size=40)
        RFF_FINGERPRINT.check(c.fn(X, Omega, b), what="ψ(X)")

    @c.test(
        "feature k depends only on ω_k and b_k (reordering Ω and b reorders the columns)",
        "compute one column per frequency: cos of (row of X) · ω_k + b_k, times the same "
        "constant for every column.",
    )
    def _():
        X, Omega = rng.normal(size=(5, 2)), rng.normal(size=(12, 2))
        b = rng.uniform(0, 2 * np.pi, size=12)
        perm = rng.permutation(12)
        close(c.fn(X, Omega[perm], b[perm]), np.asarray(c.fn(X, Omega, b))[:, perm], what="ψ")

    @c.test(
        "ψ(x)ᵀψ(y) approximates the Laplacian kernel for large D",
        "check the scaling: ψ(x)ᵀψ(x) should be close to 1 = K(x, x).",
    )
    def _():
        X = rng.normal(size=(5, 2))
        gamma = 0.7
        Omega = gamma * rng.standard_cauchy(size=(20000, 2))
        b = rng.uniform(0, 2 * np.pi, size=20000)
        Z = np.asarray(c.fn(X, Omega, b))
        close(Z @ Z.T, Laplacian(gamma=gamma)(X), rtol=0, atol=0.06, what="ψ(X)ψ(X)ᵀ")

    c.finish()


def q4(student_hoeffding_D, *, seed=None):
    """Check ``hoeffding_D(a, delta)``: the smallest D with 2 exp(−D a²/8) ≤ δ."""
    rng = fresh_rng(seed)
    c = SelfCheck("hw3.q4", student_hoeffding_D)
    hint = (
        "solve 2 exp(−D a²/8) ≤ δ for D: D ≥ 8 ln(2/δ) / a², then round up with math.ceil and "
        "return an int."
    )
    cases = [(0.1, 0.05), (0.5, 0.01)] + [
        (float(rng.uniform(0.01, 1)), float(rng.uniform(1e-6, 0.5))) for _ in range(3)
    ]

    @c.test("returns an integer", "D counts random features.")
    def _():
        D = c.fn(0.1, 0.05)
        assert isinstance(D, int | np.integer), f"returned {type(D).__name__}"

    @c.test("the bound holds at D and fails at D − 1, on fixed and random (a, δ)", hint)
    def _():
        for a, delta in cases:
            D = int(c.fn(a, delta))
            # a margin of 1e-9 relative keeps round-off in exp from deciding
            assert 2 * math.exp(-D * a * a / 8) <= delta * (1 + 1e-9), (
                f"a = {a:.4g}, δ = {delta:.4g}: the bound is above δ at D = {D}"
            )
            assert 2 * math.exp(-(D - 1) * a * a / 8) > delta * (1 - 1e-9), (
                f"a = {a:.4g}, δ = {delta:.4g}: D = {D} is not the smallest"
            )

    c.finish()
