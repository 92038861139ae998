"""Self-checks for homework 7: training out of core, one chunk of rows at a time
(:doc:`chapter 11 </book/11_scaling_up>`).

Strategy ⑤ of :doc:`chapter 3 </book/03_kernel_trick_six_ways>` computes the approximate features
ψ(x) on the fly; when the data do
not fit in memory they arrive as a stream of chunks read from disk, each seen once per pass.
Two trainers fit that pattern: SGD on w, which keeps only w (D numbers), and ridge regression
from the sufficient statistics ZᵀZ and Zᵀy (D² numbers), which gives the exact ridge solution
in one pass. The checks feed the student's functions one-shot generators of chunks and a
feature map that counts its rows, and test invariances (the result may not depend on how the
stream is cut into chunks), optimality, and stored values for a fixed input.
:mod:`kernelcourse.sgd` and :class:`kernelcourse.scale.StreamingFeatureRidge` are there to
compare with, not to call.
"""

from __future__ import annotations

import numpy as np

from ._core import Fingerprint, SelfCheck, close, fresh_rng

__all__ = ["q1", "q2", "chunks"]

SOLVERS = ("sklearn",)

# w after one pass of SGD over the fixed stream of q1, summarised.
SGD_FINGERPRINT = Fingerprint((16,), [-1.829, -0.5255, -1.547])


def chunks(X, y, size):
    """A one-shot stream of (X_block, y_block) pairs of ``size`` rows (the last may be shorter)."""
    for start in range(0, len(X), size):
        yield X[start : start + size], y[start : start + size]


class _Features:
    """ψ(X) = √(2/D) cos(XΩᵀ + b) with fixed Ω and b; records the rows of each call."""

    def __init__(self, d, D, seed, unit=False):
        rng = np.random.default_rng(seed)
        self.Omega = rng.normal(size=(D, d))
        self.b = rng.uniform(0, 2 * np.pi, size=D)
        self.D = D
        self.unit = unit
        self.calls = []

    def __call__(self, X):
        X = np.asarray(X, dtype=float)
        self.calls.append(len(X))
        Z = np.sqrt(2.0 / self.D) * np.cos(X @ self.Omega.T + self.b)
        return Z / np.linalg.norm(Z, axis=1, keepdims=True) if self.unit else Z


def _stream_problem(rng, n=200, d=3):
    X = rng.normal(size=(n, d))
    y = np.sin(X[:, 0]) + 0.5 * X[:, 1] * X[:, 2] + 0.1 * rng.normal(size=n)
    return X, y


def _one_shot_checks(c, X, y, psi, call, size):
    """Run ``call(stream, psi)``; assert one pass and ψ applied to at most one chunk at a time."""
    psi.calls.clear()
    stream = chunks(X, y, size)
    out = call(stream, psi)
    assert next(stream, None) is None, "the stream was not read to the end"
    assert sum(psi.calls) == len(X), (
        f"ψ was applied to {sum(psi.calls)} rows in all for {len(X)} rows in the stream: map "
        "each chunk exactly once"
    )
    assert max(psi.calls) <= size, f"ψ got {max(psi.calls)} rows at once; chunks hold {size}"
    return out


def q1(student_sgd_stream, *, seed=None):
    """Check ``sgd_stream(stream, psi, w, step_size)``: one SGD pass over a stream of chunks."""
    rng = fresh_rng(seed)
    c = SelfCheck("hw7.q1", student_sgd_stream, forbid=SOLVERS)
    hint = (
        "for each chunk compute Z = psi(X_block) once, then for each row i in order: "
        "w ← w − step_size · (wᵀz_i − y_i) · z_i (the gradient of ½(wᵀz − y)²)."
    )

    @c.test("one SGD step with step 1 on a unit-norm ψ(x) fits that example exactly", hint)
    def _():
        X, y = _stream_problem(rng, n=1)
        psi = _Features(3, 10, seed=1, unit=True)
        w0 = rng.normal(size=10)
        w = np.asarray(c.fn(chunks(X, y, 1), psi, w0, 1.0), dtype=float)
        close(float(w @ psi(X)[0]), float(y[0]), what="w₁ᵀψ(x₁) after the step")

    @c.test(
        "reads the stream once, maps each chunk once, and leaves the input w unchanged",
        "loop `for X_block, y_block in stream:` exactly once; work on a copy of w.",
    )
    def _():
        X, y = _stream_problem(rng)
        psi = _Features(3, 16, seed=2)
        w0 = np.zeros(16)
        _one_shot_checks(c, X, y, psi, lambda s, f: c.fn(s, f, w0, 0.1), 32)
        close(w0, np.zeros(16), rtol=0, atol=0, what="the input w after the call")

    @c.test(
        "the result does not depend on how the stream is cut into chunks",
        "SGD visits the rows in stream order, one at a time, whatever the chunk boundaries.",
    )
    def _():
        X, y = _stream_problem(rng)
        psi = _Features(3, 16, seed=3)
        ws = [c.fn(chunks(X, y, size), psi, np.zeros(16), 0.2) for size in (1, 7, 200)]
        close(ws[1], ws[0], rtol=1e-9, atol=1e-12, what="w with chunks of 7 against 1")
        close(ws[2], ws[0], rtol=1e-9, atol=1e-12, what="w with one chunk against 1")

    @c.test("matches the expected w after one pass over a fixed stream", hint)
    def _():
        X, y = _stream_problem(np.random.default_rng(7))
        psi = _Features(3, 16, seed=8)
        SGD_FINGERPRINT.check(c.fn(chunks(X, y, 25), psi, np.zeros(16), 0.3), what="w")

    c.finish()


def q2(student_ridge_stream, *, seed=None):
    """Check ``ridge_stream(stream, psi, lam)``: the ridge solution from one pass of ZᵀZ, Zᵀy."""
    rng = fresh_rng(seed)
    c = SelfCheck("hw7.q2", student_ridge_stream, forbid=SOLVERS)
    hint = (
        "add Z.T @ Z and Z.T @ y of each chunk to running sums and count the rows n; after the "
        "last chunk solve (ZᵀZ + λ n I) w = Zᵀy."
    )

    @c.test("solves (ZᵀZ + λnI) w = Zᵀy over all rows (the gradient vanishes)", hint)
    def _():
        X, y = _stream_problem(rng)
        psi = _Features(3, 24, seed=4)
        lam = 1e-3
        w = np.asarray(c.fn(chunks(X, y, 50), psi, lam), dtype=float)
        Z = psi(X)
        assert w.shape == (24,), f"w has shape {w.shape}, expected (24,)"
        grad = Z.T @ (Z @ w - y) + lam * len(X) * w
        close(grad / np.linalg.norm(Z.T @ y), np.zeros(24), atol=1e-8, what="the gradient")

    @c.test(
        "reads the stream once and maps each chunk once",
        "keep only the D × D and D-sized sums between chunks, never the rows or their features.",
    )
    def _():
        X, y = _stream_problem(rng)
        _one_shot_checks(c, X, y, _Features(3, 24, seed=5), lambda s, f: c.fn(s, f, 1e-3), 40)

    @c.test(
        "the result does not depend on how the stream is cut into chunks",
        "sums of ZᵀZ over chunks equal ZᵀZ of all rows; n counts rows, not chunks.",
    )
    def _():
        X, y = _stream_problem(rng)
        psi = _Features(3, 24, seed=6)
        ws = [c.fn(chunks(X, y, size), psi, 1e-2) for size in (13, 200)]
        close(ws[0], ws[1], rtol=1e-7, atol=1e-10, what="w with chunks of 13 against one chunk")

    c.finish()
