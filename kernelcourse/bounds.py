"""Bounds from the lectures, as functions to compare against experiments."""

from __future__ import annotations

import numpy as np

from ._validation import as_float_matrix, check_nonnegative

__all__ = ["rademacher_bound"]


def rademacher_bound(K, c):
    r"""Rademacher complexity bound :math:`c\sqrt{\operatorname{tr}(\mathbf K)}/n` (lecture 002).

    For the kernel machines :math:`\{x \mapsto \sum_i \alpha_i K(x, x_i) : \|\beta\|_{\mathcal H}
    \le c\}` the empirical Rademacher complexity on n points with Gram matrix K is at most this.

    Parameters
    ----------
    K : array of shape (n, n)
        Gram matrix on the sample.
    c : float >= 0
        Bound on the RKHS norm :math:`\|\beta\|_{\mathcal H} = \sqrt{\alpha^T K \alpha}`.
    """
    K = as_float_matrix(K, "K", allow_float32=False)
    if K.shape[0] != K.shape[1]:
        raise ValueError(f"K must be a square Gram matrix, got shape {K.shape}.")
    c = check_nonnegative(c, "c")
    trace = float(np.trace(K))
    if trace < 0:
        raise ValueError(f"K has negative trace {trace:.3g}; it is not a Gram matrix.")
    return c * np.sqrt(trace) / K.shape[0]
