"""Self-checks for homework 6: random binning for another kernel, and hashed cells (lecture 004).

Random binning (Rahimi & Recht 2007; :doc:`chapter 9 </book/09_nystroem_vs_rff>`,
:doc:`chapter 11 </book/11_scaling_up>`) puts two points in the same cell of a random grid of
width δ with probability max(0, 1 − Δ/δ). The checks test properties every correct answer has:
that the widths make this co-occupancy the kernel the question names and are drawn by inverting
their distribution function (a monotone function of the uniforms the generator gives, which
with the right law is the inverse of F and nothing else), that a point's features
depend on the point alone, that points in one cell share a bucket and that distinct cells share
one as often as a random hash makes them. None stores a width, a density or a feature value.
:class:`kernelcourse.features.RandomBinningFeatures` is there to compare with, not to call.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ._core import SelfCheck, as_numbers, close, fresh_rng

__all__ = ["q1", "q2"]

# What else would answer these questions in one call: a sampler built from a density, and
# scikit-learn's feature hashing.
SAMPLERS = ("scipy.stats", "sklearn")
HASHERS = ("sklearn",)


def _kernel(gamma, delta):
    return (1.0 + gamma * np.asarray(delta)) ** -2


def q1(student_rational_widths, *, seed=None):
    """Check ``rational_widths(size, gamma, rng)``: cell widths for k(Δ) = (1 + γΔ)^(−2)."""
    rng = fresh_rng(seed)
    c = SelfCheck("hw6.q1", student_rational_widths, forbid=SAMPLERS)

    @c.test(
        "returns positive, finite widths of the shape asked for",
        "size is passed on as numpy's generators take it: an int or a tuple such as (P, d).",
    )
    def _():
        for size in (7, (5, 3)):
            W = as_numbers(c.fn(size, 1.5, np.random.default_rng(int(rng.integers(2**31)))), "W")
            assert W.shape == np.empty(size).shape, f"size {size} gave shape {W.shape}"
            assert np.all(np.isfinite(W)), "the widths contain NaN or infinity"
            assert np.all(W > 0), "a width is zero or negative"

    @c.test(
        "draws from the generator it is given (same seed, same widths; other seed, others)",
        "draw every random number from the rng argument, not from np.random or a new generator.",
    )
    def _():
        a = c.fn(50, 1.0, np.random.default_rng(3))
        b = c.fn(50, 1.0, np.random.default_rng(3))
        other = c.fn(50, 1.0, np.random.default_rng(4))
        close(a, b, rtol=0, atol=0, what="widths from equal seeds")
        other = as_numbers(other, "widths")
        assert other.shape == np.shape(a), f"got shape {other.shape} for another seed"
        assert not np.allclose(a, other), "different seeds gave the same widths"

    @c.test(
        "inverts F: the widths are a monotone function of the uniforms that rng.random(size) "
        "draws from the generator given",
        "draw one uniform per width with rng.random(size) (rng.uniform(size=size) gives the "
        "same numbers) and return the root of F(δ) = U for each (or of 1 − F(δ) = U): another "
        "way to draw the same law (another generator method, or more than one uniform per "
        "width) fails this test.",
    )
    def _():
        for size in (2000, (40, 25)):
            h = int(rng.integers(2**31))
            gamma = float(rng.uniform(0.3, 3.0))
            W = as_numbers(c.fn(size, gamma, np.random.default_rng(h)), "W")
            U = np.random.default_rng(h).random(size)
            assert W.shape == U.shape, f"size {size} gave shape {W.shape}"
            assert np.all(np.isfinite(W)), "the widths contain NaN or infinity"
            # in the order of the uniforms, the widths rise (or fall) throughout, up to the
            # round-off of a numerical root
            steps = np.diff(W.ravel()[np.argsort(U.ravel())])
            slack = 1e-6 * (1.0 + np.abs(W.ravel()).max())
            rising, falling = np.all(steps >= -slack), np.all(steps <= slack)
            assert rising or falling, (
                "your widths are not a monotone function of the uniforms that "
                f"rng.random({size!r}) draws from the generator you are given: "
                f"{np.mean(steps < -slack):.0%} of the steps between neighbouring "
                "uniforms go down"
            )

    hint = (
        "two points at distance Δ share a cell of width δ with probability max(0, 1 − Δ/δ); "
        "averaged over the widths this must give k(Δ). Which density p(δ) does that, for a "
        "convex k? Integrate it to its distribution function and solve F(δ) = U for a uniform "
        "U (a substitution turns F into a polynomial)."
    )
    for which, gamma in (("small", rng.uniform(0.2, 0.8)), ("large", rng.uniform(1.5, 5.0))):

        @c.test(
            f"the co-occupancy E max(0, 1 − Δ/δ) is (1 + γΔ)^(−2) at four distances, {which} γ",
            hint,
        )
        def _(gamma=float(gamma)):
            W = as_numbers(c.fn(200_000, gamma, rng), "W").ravel()
            assert W.shape == (200_000,), f"asked for 200000 widths, got {W.shape[0]}"
            for t in (0.1, 0.5, 1.0, 3.0):
                delta = t / gamma
                got = float(np.mean(np.maximum(0.0, 1.0 - delta / W)))
                # a mean of 200 000 values in [0, 1]: its standard error is below 0.0012
                assert abs(got - _kernel(gamma, delta)) < 0.01, (
                    f"at γΔ = {t} the co-occupancy of your widths is off by "
                    f"{abs(got - _kernel(gamma, delta)):.3f}"
                )

    c.finish()


def _cells(X, widths, shifts):
    """(n, P, d) integer cell coordinates of every point in every grid."""
    return np.floor((X[:, None, :] - shifts[None]) / widths[None]).astype(np.int64)


def _columns(Z, n, P, B, what="Z"):
    """The one column per row and grid of a hashed feature matrix, as an (n, P) array."""
    Z = sp.csr_matrix(Z) if sp.issparse(Z) else sp.csr_matrix(np.asarray(Z, dtype=float))
    assert Z.shape == (n, P * B), f"{what} has shape {Z.shape}, expected ({n}, {P * B})"
    Z.eliminate_zeros()
    Z.sort_indices()
    counts = np.diff(Z.indptr)
    assert np.all(counts == P), f"{what}: a row has {counts[counts != P][0]} non-zeros, not P"
    close(Z.data, np.full(n * P, 1 / np.sqrt(P)), what=f"the non-zero entries of {what}")
    cols = Z.indices.reshape(n, P)
    blocks = cols // B
    assert np.all(blocks == np.arange(P)), f"{what}: a row has no column, or two, in some grid"
    return cols


def _grids(rng, P, d, scale):
    widths = rng.gamma(2.0, scale, size=(P, d))
    return widths, rng.uniform(size=(P, d)) * widths


def q2(student_hashed_binning, *, seed=None):
    """Check ``hashed_binning_features(X, widths, shifts, n_buckets, seed)`` → (n, P·B)."""
    rng = fresh_rng(seed)
    c = SelfCheck("hw6.q2", student_hashed_binning, forbid=HASHERS)
    layout = (
        "P blocks of B columns, one block a grid: a row has 1/√P in one column of every block, "
        "the bucket of the point's cell in that grid."
    )

    @c.test("returns an (n, P·B) matrix with one entry 1/√P in every block of B columns", layout)
    def _():
        X = rng.normal(size=(40, 3))
        widths, shifts = _grids(rng, 9, 3, 1.0)
        _columns(c.fn(X, widths, shifts, 7, 0), 40, 9, 7)

    @c.test(
        "a point's row depends on the point alone: rows of a subset or a permutation of X are "
        "the same rows",
        "the bucket is a fixed function of the cell's integer coordinates (and the seed), "
        "computed without numbering the cells that happen to be occupied by X.",
    )
    def _():
        X = rng.normal(size=(50, 4))
        widths, shifts = _grids(rng, 6, 4, 0.5)
        h = int(rng.integers(2**31))
        full = _columns(c.fn(X, widths, shifts, 16, h), 50, 6, 16)
        perm = rng.permutation(50)
        close(
            _columns(c.fn(X[perm], widths, shifts, 16, h), 50, 6, 16),
            full[perm],
            rtol=0,
            atol=0,
            what="the columns of the permuted points",
        )
        close(
            _columns(c.fn(X[7:12], widths, shifts, 16, h), 5, 6, 16),
            full[7:12],
            rtol=0,
            atol=0,
            what="the columns of five of the points",
        )

    @c.test(
        "points in the same cell of a grid get the same column",
        "in grid p the cell of x is the vector of integers ⌊(x − u_p)/δ_p⌋; hash that "
        "vector, not x itself.",
    )
    def _():
        X = rng.integers(0, 3, size=(60, 3)) + rng.uniform(0.0, 0.2, size=(60, 3))
        widths, shifts = _grids(rng, 20, 3, 1.5)
        cols = _columns(c.fn(X, widths, shifts, 5, 1), 60, 20, 5)
        cells = _cells(X, widths, shifts)
        same = (cells[:, None] == cells[None]).all(axis=3)  # (n, n, P)
        shared = cols[:, None] == cols[None]
        assert np.all(shared[same]), "two points in one cell got different columns"

    for B in (2, 5):

        @c.test(
            f"distinct cells share a bucket with probability about 1/B (B = {B})",
            "a good hash sends two different cells, neighbours included, to independent "
            "uniform buckets: mix all the coordinates with random multipliers (and the grid), "
            "reduce modulo a large prime, then modulo B.",
        )
        def _(B=B):
            X = rng.uniform(0.0, 4.0, size=(60, 3))
            # 100 grids: the rate averages over them, far inside the limit for a good hash
            widths, shifts = _grids(rng, 100, 3, 0.7)
            cols = _columns(c.fn(X, widths, shifts, B, int(rng.integers(2**31))), 60, 100, B)
            cells = _cells(X, widths, shifts)
            i, j = np.triu_indices(60, k=1)
            distinct = ~(cells[i] == cells[j]).all(axis=2)  # (pairs, P)
            rate = float(np.mean((cols[i] == cols[j])[distinct]))
            assert abs(rate * B - 1.0) < 0.2, (
                f"distinct cells share a bucket at {rate:.3f} times B = {rate * B:.2f}"
            )

    @c.test(
        "one given pair of neighbouring cells shares a bucket in about 1/B of 400 grids (B = 4)",
        "every pair of distinct cells, not only pairs on average, must collide with "
        "probability 1/B: a hash that sees the coordinates only through one fixed combination "
        "(their sum, say) sends some neighbours to one bucket in every grid. Draw random "
        "multipliers for every coordinate, in every grid.",
    )
    def _():
        P, B = 400, 4
        a, b = rng.choice(3, size=2, replace=False)
        step = np.zeros(3)
        step[a], step[b] = 1.0, -1.0  # cells one apart along a and along b, in every grid
        x = rng.uniform(0.0, 4.0, size=(1, 3))
        X = np.vstack([x, x + step])
        widths, shifts = np.ones((P, 3)), rng.uniform(size=(P, 3))
        cols = _columns(c.fn(X, widths, shifts, B, int(rng.integers(2**31))), 2, P, B)
        cells = _cells(X, widths, shifts)
        apart = (cells[1] - cells[0] == step).all(axis=1)  # all grids, up to round-off
        rate = float(np.mean((cols[0] == cols[1])[apart]))
        # a binomial share of about 400 grids: rate · B has standard deviation below 0.09
        assert abs(rate * B - 1.0) < 0.5, (
            f"two neighbouring cells share a bucket in a share {rate:.2f} of the grids "
            f"(rate · B = {rate * B:.2f})"
        )

    c.finish()
