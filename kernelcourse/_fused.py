r"""FALKON's product :math:`K_{nM}^T S (K_{nM} V)` for the Gaussian kernel in one pass, on a CPU.

Forming :math:`K_{nM}` block by block through memory is what limits FALKON on a CPU (chapter
11): the distance product has inner dimension d (54 on Covertype), where a GEMM is far from its
peak, and each block is written, exponentiated, read twice and thrown away. Here every thread
takes a contiguous share of the rows and, for a small tile of them, computes the distances by
one GEMM into a buffer that stays in cache, exponentiates it with a polynomial exp that the
compiler vectorizes (no vector exp without SVML), and consumes the tile at once: :math:`u = K_t
V` and :math:`K_t^T (S u)` into the thread's own M × k sum. Nothing of size n × M is ever
written. Tiles are float32 (the exponent is clipped at 0 and −87, where exp underflows in
float32); V, the products with it and the sums are float64.

FALKON's right-hand side :math:`K_{nM}^T Y` takes the same pass with the rows of Y in place of
:math:`K_t V`, so that the system and its right-hand side are made of the same rounded kernel
entries: with entries rounded two ways, the difference reached the solution magnified by
:math:`1/\lambda`.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import njit, prange

from ._threads import single_blas_thread

__all__ = ["rbf_normal_products", "rbf_transpose_product"]

# Cephes expf: exp(r) on |r| <= ln2/2 to float32 precision
_P = tuple(
    np.float32(c)
    for c in (1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1)
)


# Not cached: the tile GEMM (np.dot) calls BLAS through a pointer that numba cannot store
# in its cache, and asking for a cache only warns about that on every first call.
@njit(parallel=True, fastmath=True)
def _products(X, Ct, xsq, gc, gamma, Vt, Y, sw, tile, p0, p1, p2, p3, p4):
    # with rows in Y (n × k), the tile's rows are multiplied by Y's instead of by K_t V:
    # K_nMᵀ Y, the right-hand side, in the same pass over the same kernel entries
    n = X.shape[0]
    M = Ct.shape[1]
    k = Vt.shape[0]
    given = Y.shape[0] > 0
    T = numba.get_num_threads()
    parts = np.zeros((T, k, M))
    chunk = (n + T - 1) // T
    g = np.float32(gamma)
    g2 = np.float32(2.0 * gamma)
    log2e = np.float32(1.4426950408889634)
    ln2_hi = np.float32(0.693359375)
    ln2_lo = np.float32(-2.12194440e-4)
    for t in prange(T):
        start = t * chunk
        stop = min(n, start + chunk)
        acc = parts[t]
        row = np.empty(M, dtype=np.float32)
        mexp = np.empty(M, dtype=np.int32)
        u = np.empty(k)
        for s in range(start, stop, tile):
            e = min(stop, s + tile)
            G = np.dot(X[s:e], Ct)  # the tile's inner products, into cache
            for i in range(e - s):
                a = g * xsq[s + i]
                # exponent −γ‖x − c‖², clipped to [−87, 0]; exp(v) = 2^m p(r), r = v − m ln 2
                for j in range(M):
                    v = min(g2 * G[i, j] - a - gc[j], np.float32(0.0))
                    v = max(v, np.float32(-87.0))
                    m = np.floor(v * log2e + np.float32(0.5))
                    r = v - m * ln2_hi - m * ln2_lo
                    q = p0 * r + p1
                    q = q * r + p2
                    q = q * r + p3
                    q = q * r + p4
                    q = q * r + np.float32(0.5)
                    row[j] = q * r * r + r + np.float32(1.0)
                    mexp[j] = (np.int32(m) + np.int32(127)) << np.int32(23)
                scale = mexp.view(np.float32)
                for j in range(M):
                    row[j] *= scale[j]
                # u = (K_t V) S in float64: rounding V to float32 would cost the solve
                # more accuracy than the float32 kernel entries themselves
                w = 1.0 if sw.shape[0] == 0 else sw[s + i]
                for c in range(k):
                    if given:
                        u[c] = Y[s + i, c] * w
                    else:
                        total = 0.0
                        for j in range(M):
                            total += row[j] * Vt[c, j]
                        u[c] = total * w
                for c in range(k):
                    uc = u[c]
                    for j in range(M):
                        acc[c, j] += row[j] * uc
    out = np.zeros((k, M))
    for t in range(T):
        out += parts[t]
    return out


def _prepared(X, centers, gamma):
    X = np.ascontiguousarray(X, dtype=np.float32)
    C = np.ascontiguousarray(centers, dtype=np.float32)
    xsq = np.einsum("ij,ij->i", X, X, dtype=np.float64).astype(np.float32)
    csq = np.einsum("ij,ij->i", C, C, dtype=np.float64).astype(np.float32)
    gc = (np.float32(gamma) * csq).astype(np.float32)
    return X, np.ascontiguousarray(C.T), xsq, gc


def _run(X, centers, gamma, Vt, Y, sw, tile):
    X, Ct, xsq, gc = _prepared(X, centers, gamma)
    sw = np.empty(0) if sw is None else np.ascontiguousarray(sw, dtype=np.float64)
    # the tile GEMMs run inside the compiled threads: BLAS must not start threads of its own
    with single_blas_thread():
        out = _products(X, Ct, xsq, gc, float(gamma), Vt, Y, sw, int(tile), *_P)
    return out.T


def rbf_normal_products(X, centers, gamma, V, sw=None, *, tile=64):
    r""":math:`K_{nM}^T S (K_{nM} V)` for :math:`K(x, y) = e^{-\gamma\|x - y\|^2}`, one pass.

    Parameters
    ----------
    X : ndarray of shape (n, d), float32, C-contiguous
        For a γ per feature, pass X and the centres already scaled by √γ_k and γ = 1.
    centers : ndarray of shape (M, d), float32
    gamma : float
    V : ndarray of shape (M, k)
    sw : ndarray of shape (n,) or None
        Sample weights (the diagonal of S).
    tile : int
        Rows per tile: the tile's M float32 entries per row stay in cache.

    Returns
    -------
    ndarray of shape (M, k), float64
    """
    Vt = np.ascontiguousarray(np.asarray(V).T, dtype=np.float64)
    return _run(X, centers, gamma, Vt, np.empty((0, 0)), sw, tile)


def rbf_transpose_product(X, centers, gamma, Y, *, tile=64):
    r""":math:`K_{nM}^T Y` for the same kernel, one pass with the same tiles and the same
    kernel entries as :func:`rbf_normal_products` (FALKON's right-hand side: the system and
    its right-hand side then come from one matrix).

    Parameters
    ----------
    X, centers, gamma, tile
        As for :func:`rbf_normal_products`.
    Y : ndarray of shape (n, k)

    Returns
    -------
    ndarray of shape (M, k), float64
    """
    Y = np.ascontiguousarray(Y, dtype=np.float64)
    return _run(X, centers, gamma, np.empty((Y.shape[1], 0)), Y, None, tile)
