"""Self-checks for homework 7: choosing λ and training by SVRG out of core, one chunk at a time
(:doc:`chapter 3 </book/03_kernel_trick_six_ways>`, :doc:`chapter 11 </book/11_scaling_up>`).

The rows arrive as a stream of ``(X_block, y_block)`` chunks that can be read once per pass;
ψ maps a chunk to its features. The checks hand the student's functions one-shot streams and a
feature map that records how many rows it maps, and test what every correct answer has: one
pass (or two per epoch), per-fold centred statistics equal to their two-pass definition, also
when the features and targets share an offset that wipes out the digits of raw sums, results
that do not depend on how the stream is cut into chunks, the optimality conditions of every
fold's weights and intercept, held-out errors that are the mean squared errors of that model,
and a stationary point at the minimiser. None stores an expected value or fits a fold itself.
:class:`kernelcourse.scale.StreamingFeatureRidge` is there to compare with, not to call.
"""

from __future__ import annotations

import zlib

import numpy as np

from ._core import SelfCheck, as_numbers, close, fresh_rng, handed, peak_bytes

__all__ = ["q1", "q2", "q3", "chunks", "row_folds"]

# What else would fit a ridge model in one call.
SOLVERS = ("sklearn.linear_model", "sklearn.kernel_ridge", "sklearn.model_selection")


@handed
def chunks(X, y, size):
    """A one-shot stream of (X_block, y_block) pairs of ``size`` rows (the last may be shorter)."""
    for start in range(0, len(X), size):
        yield X[start : start + size], y[start : start + size]


def row_folds(k):
    """``fold_of(X_block)``: the fold of each row in 0, …, k − 1, from a hash of its values.

    A row lands in the same fold on every pass, however the stream is cut into chunks.
    """

    @handed
    def fold_of(X_block):
        X_block = np.ascontiguousarray(X_block, dtype=float)
        return np.array([zlib.crc32(row.tobytes()) % k for row in X_block], dtype=int)

    return fold_of


class _Features:
    """ψ(X) = offset + √(2/D) cos(XΩᵀ + b), rows scaled to unit norm before the offset;
    records the rows of each call."""

    def __init__(self, d, D, seed, offset=0.0):
        rng = np.random.default_rng(seed)
        self.Omega = rng.normal(size=(D, d))
        self.b = rng.uniform(0, 2 * np.pi, size=D)
        self.D = D
        self.offset = offset
        self.calls = []

    @handed
    def __call__(self, X):
        X = np.asarray(X, dtype=float)
        self.calls.append(len(X))
        Z = np.cos(X @ self.Omega.T + self.b)
        return self.offset + Z / np.linalg.norm(Z, axis=1, keepdims=True)


class _Reader:
    """``read()`` starts a new pass over the rows; counts the passes."""

    def __init__(self, X, y, size):
        self.X, self.y, self.size = X, y, size
        self.passes = 0
        self.streams = []

    @handed
    def __call__(self):
        self.passes += 1
        stream = chunks(self.X, self.y, self.size)
        self.streams.append(stream)
        return stream


def _stream_problem(rng, n=200, d=3):
    X = rng.normal(size=(n, d))
    y = np.sin(X[:, 0]) + 0.5 * X[:, 1] * X[:, 2] + 0.1 * rng.normal(size=n)
    return X, y


def _one_pass(X, y, psi, call, size):
    """Run ``call(stream)``; assert one pass and ψ applied once to each chunk, nothing larger."""
    psi.calls.clear()
    stream = chunks(X, y, size)
    out = call(stream)
    assert next(stream, None) is None, "the stream was not read to the end"
    assert sum(psi.calls) == len(X), (
        f"ψ was applied to {sum(psi.calls)} rows in all for {len(X)} rows in the stream: map "
        "each chunk exactly once"
    )
    assert max(psi.calls) <= size, f"ψ got {max(psi.calls)} rows at once; chunks hold {size}"
    return out


NAMES = ("n", "zbar", "ybar", "S", "t", "q")


def _statistics(out, k, D):
    if not isinstance(out, tuple | list) or len(out) != 6:
        raise AssertionError("return the six statistics (n, zbar, ybar, S, t, q) as a tuple")
    stats = tuple(as_numbers(a, name) for name, a in zip(NAMES, out, strict=True))
    shapes = ((k,), (k, D), (k,), (k, D, D), (k, D), (k,))
    for name, a, shape in zip(NAMES, stats, shapes, strict=True):
        assert a.shape == shape, f"{name} has shape {a.shape}, expected {shape}"
    return stats


def _centred(Z, y, folds, k):
    """The six statistics of each fold by two passes over its rows (the definition)."""
    D = Z.shape[1]
    n, zbar, ybar = np.zeros(k), np.zeros((k, D)), np.zeros(k)
    S, t, q = np.zeros((k, D, D)), np.zeros((k, D)), np.zeros(k)
    for f in range(k):
        Zf, yf = Z[folds == f], y[folds == f]
        n[f] = len(yf)
        if len(yf):
            zbar[f], ybar[f] = Zf.mean(axis=0), yf.mean()
            Zc, yc = Zf - zbar[f], yf - ybar[f]
            S[f], t[f], q[f] = Zc.T @ Zc, Zc.T @ yc, yc @ yc
    return n, zbar, ybar, S, t, q


def _compare(got, want, rtol, what):
    """Each statistic within rtol of its own size (a fold's S relative to the largest S)."""
    for name, a, b in zip(NAMES, got, want, strict=True):
        scale = max(float(np.abs(b).max(initial=0.0)), 1e-300)
        close(a / scale, b / scale, rtol=0, atol=rtol, what=f"{name}{what}")


def q1(student_fold_statistics, *, seed=None):
    """Check ``fold_statistics(chunks, psi, fold_of, k) -> (n, zbar, ybar, S, t, q)``."""
    rng = fresh_rng(seed)
    c = SelfCheck("hw7.q1", student_fold_statistics, forbid=SOLVERS)
    hint = (
        "fold_of gives one fold per row: entry f of each statistic comes from the rows of "
        "fold f, S_f and t_f centred on fold f's own means z̄_f and ȳ_f, not on a chunk's."
    )

    @c.test("reads the stream once and maps each chunk once", hint)
    def _():
        X, y = _stream_problem(rng)
        psi = _Features(3, 12, seed=int(rng.integers(1000)))
        _one_pass(X, y, psi, lambda s: c.fn(s, psi, row_folds(4), 4), 30)

    @c.test("fold f's statistics are those of the rows that fold_of puts in fold f", hint)
    def _():
        k = int(rng.integers(3, 6))
        X, y = _stream_problem(rng)
        psi = _Features(3, 10, seed=int(rng.integers(1000)))
        fold_of = row_folds(k)
        got = _statistics(c.fn(chunks(X, y, 32), psi, fold_of, k), k, 10)
        _compare(got, _centred(psi(X), y, fold_of(X), k), 1e-9, "")

    @c.test(
        "keeps its digits when the features and targets share a large offset (10⁷)",
        "ZᵀZ and n z̄z̄ᵀ agree in their leading digits, so their difference keeps few of them: "
        "centre each chunk's rows of a fold on their own means, then merge those statistics "
        "with the fold's by the update for the union of two sets of rows.",
    )
    def _():
        k, offset = 3, 1e7
        X, y = _stream_problem(rng, n=300)
        psi = _Features(3, 6, seed=int(rng.integers(1000)), offset=offset)
        fold_of = row_folds(k)
        got = _statistics(c.fn(chunks(X, y + offset, 25), psi, fold_of, k), k, 6)
        _compare(got, _centred(psi(X), y + offset, fold_of(X), k), 1e-6, " at offset 1e7")

    @c.test(
        "the result does not depend on how the stream is cut into chunks",
        "a row's fold depends on the row, not on its chunk or its position in the stream.",
    )
    def _():
        X, y = _stream_problem(rng)
        psi = _Features(3, 8, seed=int(rng.integers(1000)))
        outs = [
            _statistics(c.fn(chunks(X, y, size), psi, row_folds(5), 5), 5, 8)
            for size in (1, 17, 200)
        ]
        for out in outs[1:]:
            _compare(out, outs[0], 1e-9, " for two ways of chunking")

    @c.test(
        "keeps nothing of the stream's size between chunks (40,000 rows in chunks of 500)",
        "merge each chunk's contribution into the six statistics and let the chunk go: a list "
        "of the chunks' features grows with the number of rows, the statistics do not.",
    )
    def _():
        n, D = 40_000, 8
        X, y = rng.normal(size=(n, 3)), rng.normal(size=n)
        psi = _Features(3, D, seed=int(rng.integers(1000)))
        out, peak = peak_bytes(lambda: c.fn(chunks(X, y, 500), psi, row_folds(3), 3))
        _statistics(out, 3, D)
        # the features of all rows alone take 40,000 · 8 · 8 bytes = 2.4 MiB
        assert peak < 2**20, (
            f"the function held {peak / 2**20:.1f} MiB at once for a stream of {n:,} rows"
        )

    c.finish()


def _fold_problem(rng, k, D=10, n=150):
    X, y = _stream_problem(rng, n=n)
    psi = _Features(3, D, seed=int(rng.integers(1000)))
    Z = psi(X)
    # unequal folds (the last about twice the others): with equal ones the mean of the
    # per-fold mean squared errors would equal the mean over all rows and pass for it
    folds = rng.permutation(np.minimum(np.arange(n) % (k + 1), k - 1))
    return Z, y, folds, _centred(Z, y, folds, k)


def _path(c, stats, lams, k, D):
    out = c.fn(*stats, lams)
    if not isinstance(out, tuple | list) or len(out) != 3:
        raise AssertionError("return (errors, W, b) as a tuple")
    errors, W, b = (as_numbers(a, name) for a, name in zip(out, ("errors", "W", "b"), strict=True))
    assert errors.shape == (len(lams),), f"errors has shape {errors.shape}"
    assert W.shape == (len(lams), k, D), f"W has shape {W.shape}, expected {(len(lams), k, D)}"
    assert b.shape == (len(lams), k), f"b has shape {b.shape}, expected {(len(lams), k)}"
    return errors, W, b


def q2(student_cv_path, *, seed=None):
    """Check ``cv_path(n, zbar, ybar, S, t, q, lams) -> (errors, W, b)`` on the rows."""
    rng = fresh_rng(seed)
    c = SelfCheck("hw7.q2", student_cv_path, forbid=SOLVERS)
    k = int(rng.integers(3, 6))
    Z, y, folds, stats = _fold_problem(rng, k)
    lams = np.sort(10.0 ** rng.uniform(-4, 0, size=4))

    @c.test(
        "W[j, f] and b[j, f] minimise the ridge objective on the rows outside fold f",
        "the training rows of fold f are the other folds: merge their statistics, the "
        "spread of the folds' means about the training mean included, and n₋f counts the "
        "training rows, not all rows; the intercept is not penalised.",
    )
    def _():
        _, W, b = _path(c, stats, lams, k, Z.shape[1])
        for f in range(k):
            Zt, yt = Z[folds != f], y[folds != f]
            scale = np.linalg.norm((Zt - Zt.mean(axis=0)).T @ yt) + np.abs(yt).sum()
            for j, lam in enumerate(lams):
                r = Zt @ W[j, f] + b[j, f] - yt
                grad = np.append(Zt.T @ r + lam * len(yt) * W[j, f], r.sum())
                close(
                    grad / scale,
                    np.zeros(Z.shape[1] + 1),
                    atol=1e-8,
                    what=f"the gradient of fold {f}'s training objective in (w, b)",
                )

    @c.test(
        "errors[j] is the mean over all rows of the held-out squared errors of W[j], b[j]",
        "write y_i − b − z_iᵀw as a deviation from fold f's means plus a constant and "
        "expand the square: only fold f's six statistics remain; divide the sum over the "
        "folds by the number of rows.",
    )
    def _():
        errors, W, b = _path(c, stats, lams, k, Z.shape[1])
        for j in range(len(lams)):
            held_out = sum(
                np.sum((y[folds == f] - Z[folds == f] @ W[j, f] - b[j, f]) ** 2) for f in range(k)
            )
            close(errors[j], held_out / len(y), rtol=1e-7, what=f"errors[{j}]")

    @c.test(
        "renumbering the folds permutes W and b and leaves the errors unchanged",
        "each fold is treated the same way, whatever its number.",
    )
    def _():
        errors, W, b = _path(c, stats, lams, k, Z.shape[1])
        perm = rng.permutation(k)
        errors2, W2, b2 = _path(c, tuple(a[perm] for a in stats), lams, k, Z.shape[1])
        close(errors2, errors, rtol=1e-8, what="the errors after renumbering")
        close(W2, W[:, perm], rtol=1e-7, atol=1e-10, what="W after renumbering")
        close(b2, b[:, perm], rtol=1e-7, atol=1e-10, what="b after renumbering")

    c.finish()


def _ridge_objective_gradient(Z, y, lam, w):
    return Z.T @ (Z @ w - y) / len(y) + lam * w


def q3(student_svrg_ridge, *, seed=None):
    """Check ``svrg_ridge(read, psi, lam, step_size, n_epochs, w0)``: passes, fixed point, rate."""
    rng = fresh_rng(seed)
    c = SelfCheck("hw7.q3", student_svrg_ridge, forbid=SOLVERS)
    hint = (
        "an epoch is one pass for the full gradient μ at the snapshot w̃, then one pass of steps "
        "along ∇f_i(w) − ∇f_i(w̃) + μ, row by row in stream order; then w̃ ← w."
    )
    X, y = _stream_problem(rng)
    psi = _Features(3, 12, seed=int(rng.integers(1000)))
    Z = psi(X)
    lam = float(rng.uniform(0.05, 0.2))
    w_star = np.linalg.solve(Z.T @ Z / len(y) + lam * np.eye(12), Z.T @ y / len(y))

    def svrg(read, step_size, n_epochs, w0):
        w = as_numbers(c.fn(read, psi, lam, step_size, n_epochs, w0), "w")
        assert w.shape == (12,), f"w has shape {w.shape}, expected (12,) like w0"
        return w

    @c.test("reads the stream twice per epoch and maps each chunk once per pass", hint)
    def _():
        epochs = int(rng.integers(1, 4))
        read = _Reader(X, y, 40)
        psi.calls.clear()
        c.fn(read, psi, lam, 0.2, epochs, np.zeros(12))
        assert read.passes == 2 * epochs, (
            f"{read.passes} passes for {epochs} epoch(s): each epoch needs one pass for the "
            "full gradient and one for the steps"
        )
        assert all(next(s, None) is None for s in read.streams), "a pass stopped early"
        assert sum(psi.calls) == 2 * epochs * len(y), "ψ mapped a row more than once in a pass"
        assert max(psi.calls) <= 40, "ψ got more rows at once than a chunk holds"

    @c.test(
        "started at the minimiser it stays there, and the input w0 is left unchanged",
        "at the snapshot's own minimiser every corrected step vanishes: "
        "the two per-row gradients cancel and μ is zero.",
    )
    def _():
        w0 = w_star.copy()
        w = svrg(_Reader(X, y, 50), 0.3, 2, w0)
        close(w0, w_star, rtol=0, atol=0, what="the input w0 after the call")
        close(w, w_star, rtol=1e-8, atol=1e-10, what="w after two epochs from the minimiser")

    @c.test(
        "converges linearly: 15 epochs shrink the gradient of the objective ten-thousandfold",
        "plain SGD with a constant step stalls at a noise floor; the control variate "
        "∇f_i(w̃) − μ removes the noise as w̃ approaches the minimiser. "
        + "The objective is (1/2n)Σ(z_iᵀw − y_i)² + (λ/2)‖w‖².",
    )
    def _():
        w0 = rng.normal(size=12)
        w = svrg(_Reader(X, y, 25), 0.1, 15, w0)
        g0 = np.linalg.norm(_ridge_objective_gradient(Z, y, lam, w0))
        g = np.linalg.norm(_ridge_objective_gradient(Z, y, lam, w))
        assert g <= 1e-4 * g0, f"the gradient shrank only by a factor {g0 / g:.3g}"

    @c.test(
        "the result does not depend on how the stream is cut into chunks",
        "the steps visit the rows in stream order, one at a time, whatever the chunk sizes.",
    )
    def _():
        w0 = rng.normal(size=12)
        ws = [svrg(_Reader(X, y, size), 0.2, 2, w0) for size in (1, 30, 200)]
        for w in ws[1:]:
            close(w, ws[0], rtol=1e-8, atol=1e-10, what="w for two ways of chunking")

    c.finish()
