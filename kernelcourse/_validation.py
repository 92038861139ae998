"""Input checks shared by every module: each error names the argument and the fix."""

from __future__ import annotations

import numbers

import numpy as np

__all__ = [
    "as_float_matrix",
    "check_positive",
    "check_nonnegative",
    "check_same_features",
    "finite_gram",
]


def as_float_matrix(X, name="X", *, allow_float32=True):
    """Return ``X`` as a finite 2-D float array (float32 kept when allowed).

    Raises
    ------
    ValueError
        If ``X`` is not 2-D, is empty, or holds NaN or infinity.
    TypeError
        If ``X`` is not numeric.
    """
    arr = np.asarray(X)
    if arr.dtype == object or not (
        np.issubdtype(arr.dtype, np.number) or np.issubdtype(arr.dtype, np.bool_)
    ):
        raise TypeError(f"{name} must be a numeric array, got dtype {arr.dtype}.")
    if np.iscomplexobj(arr):
        raise TypeError(f"{name} must be real-valued, got complex dtype {arr.dtype}.")
    if arr.ndim != 2:
        raise ValueError(
            f"{name} must be a 2-D array of shape (n_samples, n_features), got shape "
            f"{arr.shape}; reshape 1-D data with {name}.reshape(-1, 1)."
        )
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(
            f"{name} is empty (shape {arr.shape}); it needs at least one row and column."
        )
    dtype = np.float32 if (allow_float32 and arr.dtype == np.float32) else np.float64
    arr = np.asarray(arr, dtype=dtype)
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} contains NaN or infinity; remove or impute those entries first.")
    return arr


def check_positive(value, name):
    """Return ``value`` as a float after checking it is a finite number > 0."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {value!r}.")
    value = float(value)
    if not np.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}.")
    return value


def check_nonnegative(value, name):
    """Return ``value`` as a float after checking it is a finite number >= 0."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {value!r}.")
    value = float(value)
    if not np.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}.")
    return value


def check_same_features(X, Y, x_name="X", y_name="Y"):
    """Raise if ``X`` and ``Y`` have different numbers of columns."""
    if X.shape[1] != Y.shape[1]:
        raise ValueError(
            f"{y_name} has {Y.shape[1]} features but {x_name} has {X.shape[1]}; "
            "both must describe points of the same space."
        )


def finite_gram(kernel, X, Y=None, *, name="X", block=1024):
    """``kernel(X, Y)``, raising a ValueError that names the kernel if any entry is NaN or
    infinite (numpy's overflow warnings are silenced: the error says what went wrong).

    Inputs of magnitude beyond about 1e154 overflow a squared distance, and a kernel such as
    exp(Linear()) overflows far sooner; the solvers behind a Gram matrix must not see that.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        K = kernel(X) if Y is None else kernel(X, Y)
    for start in range(0, K.shape[0], block):
        finite = np.isfinite(K[start : start + block]).all(axis=1)
        if not finite.all():
            raise ValueError(
                f"the Gram matrix of the kernel {kernel!r} on {name} contains NaN or infinity "
                f"(first in row {start + int(np.argmin(finite))}): the inputs are too large "
                "in magnitude for this kernel. Rescale them "
                "(e.g. StandardScaler) or choose a kernel that stays finite."
            )
    return K
