"""The backend shim: the few operations the estimators need beyond the array API standard.

scikit-learn's convention decides where the work runs: with
``sklearn.set_config(array_api_dispatch=True)`` (and ``SCIPY_ARRAY_API=1`` in the environment
before scipy is imported, which scikit-learn requires), an input from another array library
(PyTorch, CuPy, array-api-strict) is computed with that library on the device where it lives,
and the results come back in the same library on the same device. numpy inputs never come here:
:func:`namespace_of` returns None for them, and the estimators keep their numpy code.

Everything that the standard does not define, or defines in a way that costs memory the
estimators cannot spare, is in this one module, with a generic fallback for any compliant
library:

* :func:`solve_triangular` — triangular solves (the standard has only a general ``solve``);
* :func:`add_to_diagonal` — A + cI without a second n × n array where the library allows it,
  and :func:`exp_nonpositive` — the RBF block's clip-and-exponentiate pass in place;
* :func:`free_memory` and :func:`block_rows` — the device's free memory and the block size that
  fits in it;
* :func:`max_float` — float64 where the device supports it (not on Apple's MPS), else float32,
  and :func:`requested_float` — a user's ``dtype`` on the device, with a warning where float64
  is asked of a device that has none;
* :func:`to_numpy`, :func:`from_numpy` — moving the small host-side results (random draws,
  centre indices) to and from the device.
"""

from __future__ import annotations

import warnings

import array_api_compat
import numpy as np
from sklearn import get_config

__all__ = [
    "namespace_of",
    "device_of",
    "max_float",
    "float_dtype",
    "requested_float",
    "to_numpy",
    "from_numpy",
    "move",
    "free_memory",
    "block_rows",
    "add_to_diagonal",
    "matmul_into",
    "upper_gram_into",
    "exp_nonpositive",
    "solve_triangular",
    "synchronize",
]

_MB = 2**20


def _foreign(a):
    """An array of a library other than numpy (lists, DataFrames and numpy arrays are not)."""
    return (
        a is not None
        and not isinstance(a, np.ndarray)
        and array_api_compat.is_array_api_obj(a)
        and not array_api_compat.is_numpy_array(a)
    )


def namespace_of(X, *, fitted=None, called=None):
    """The array namespace to compute ``X`` with, or None for the numpy path.

    None whenever scikit-learn's ``array_api_dispatch`` is off or ``X`` is not an array of
    another library, so numpy inputs pay one configuration lookup and nothing else.

    Parameters
    ----------
    X : array-like
    fitted : array or None
        A fitted attribute of the estimator; a ValueError explains the fix when ``X`` and the
        fitted model live in different libraries or on different devices.
    called : (estimator, str) or None
        The estimator and the public method the user called, for that error, which opens
        as scikit-learn's ``check_same_namespace`` does: "Inputs passed to Name.method()
        must use the same namespace and the same device as those passed to fit()" (its
        checks and its search estimators match that).
    """
    dispatch = get_config()["array_api_dispatch"]
    x_foreign, f_foreign = _foreign(X), _foreign(fitted)
    if not (x_foreign or f_foreign):
        return None
    if not dispatch:
        if f_foreign:
            raise ValueError(
                f"{_same_namespace_prefix(called)} The estimator was fitted on {_library(fitted)} "
                "arrays; call it with sklearn.set_config(array_api_dispatch=True) and inputs "
                "of that library."
            )
        return None
    if fitted is not None and (
        x_foreign != f_foreign or (x_foreign and _where(X) != _where(fitted))
    ):
        raise ValueError(
            f"{_same_namespace_prefix(called)} X is a {_library(X)} array on {_device_name(X)} but "
            f"the estimator was fitted on {_library(fitted)} arrays on "
            f"{_device_name(fitted)}; pass X in the library and on the device used for fit "
            "(or refit)."
        )
    if not x_foreign:
        return None
    return array_api_compat.array_namespace(X)


def _same_namespace_prefix(called):
    """The opening of scikit-learn's namespace-mismatch error for ``called`` (see
    :func:`namespace_of`)."""
    where = "the estimator" if called is None else f"{type(called[0]).__name__}.{called[1]}()"
    return (
        f"Inputs passed to {where} must use the same namespace and the same device as those "
        "passed to fit()."
    )


def _library(a):
    if not _foreign(a):
        return "numpy"
    return array_api_compat.array_namespace(a).__name__.removeprefix("array_api_compat.")


def _device_name(a):
    return str(array_api_compat.device(a)) if _foreign(a) else "cpu"


def _where(a):
    return _library(a), _device_name(a)


def device_of(X):
    """The device on which ``X`` lives."""
    return array_api_compat.device(X)


def max_float(xp, device):
    """float64 where the device supports it (FALKON's preconditioner precision), else
    float32."""
    info = xp.__array_namespace_info__()
    if "float64" in info.dtypes(device=device, kind="real floating"):
        if not (array_api_compat.is_torch_namespace(xp) and str(device).startswith("mps")):
            return xp.float64
    return xp.float32


def float_dtype(xp, name):
    """The namespace's dtype called ``name`` ("float32" or "float64")."""
    return getattr(xp, np.dtype(name).name)


def requested_float(xp, device, dtype):
    """The namespace's float dtype for an estimator's ``dtype`` parameter on ``device``.

    float64 asked of a device without it (Apple's MPS) gives float32 and a UserWarning that
    says so, at the user's line: the library's own error would come later, from deep inside
    the fit.
    """
    from ._validation import find_stack_level

    want = float_dtype(xp, dtype)
    if want == xp.float64 and max_float(xp, device) == xp.float32:
        warnings.warn(
            f"dtype=float64 was asked for, but the device {device} has no float64: the "
            "computation runs in float32 (about 7 significant digits instead of 16). Pass "
            "dtype=numpy.float32 to choose this explicitly.",
            UserWarning,
            stacklevel=find_stack_level(),
        )
        return xp.float32
    return want


def to_numpy(a):
    """A host numpy copy of a small array (indices, labels, diagnostics)."""
    if isinstance(a, np.ndarray):
        return a
    if array_api_compat.is_torch_array(a):
        return a.detach().cpu().numpy()
    if array_api_compat.is_cupy_array(a):
        return a.get()
    xp = array_api_compat.array_namespace(a)
    if array_api_compat.is_array_api_strict_namespace(xp):
        a = xp.asarray(a, device=xp.Device("CPU_DEVICE"))
    return np.from_dlpack(a)


def from_numpy(a, xp, device, dtype=None):
    """``a`` (a host array) as an array of ``xp`` on ``device``."""
    out = xp.asarray(np.ascontiguousarray(a), device=device)
    return out if dtype is None else xp.astype(out, dtype)


def move(a, xp, device):
    """``a`` (y, sample labels: any array or array-like) as an array of ``xp`` on ``device``;
    everything follows X, as in scikit-learn."""
    if _foreign(a) and _where(a) == (xp.__name__.removeprefix("array_api_compat."), str(device)):
        return a
    return from_numpy(to_numpy(a) if _foreign(a) else np.asarray(a), xp, device)


def synchronize(xp, device):
    """Wait for the device's queued work (for timings)."""
    if array_api_compat.is_torch_namespace(xp) and str(device).startswith("cuda"):
        import torch

        torch.cuda.synchronize(device)
    elif array_api_compat.is_cupy_namespace(xp):
        import cupy

        cupy.cuda.Device().synchronize()


def free_memory(xp, device):
    """Bytes free on an accelerator (None on the host, where the OS decides).

    PyTorch keeps freed blocks in its caching allocator; they count as free here.
    """
    if array_api_compat.is_torch_namespace(xp) and str(device).startswith("cuda"):
        import torch

        free, _ = torch.cuda.mem_get_info(device)
        cached = torch.cuda.memory_reserved(device) - torch.cuda.memory_allocated(device)
        return int(free + cached)
    if array_api_compat.is_cupy_namespace(xp):
        import cupy

        free, _ = cupy.cuda.Device().mem_info
        pool = cupy.get_default_memory_pool()
        return int(free + pool.free_bytes())
    return None


def block_rows(row_bytes, block_size, *, xp, device, resident=0, default_mb=256, what="X"):
    """Rows per block: ``block_size`` when given, else as many rows of ``row_bytes`` bytes as
    fit the default budget.

    The default budget is ``default_mb`` MB on the host and half the device's free memory
    (after ``resident`` bytes that the caller is about to allocate) on an accelerator. A
    ``block_size`` whose rows exceed what the device has free raises a ValueError naming
    ``block_size`` before any work starts, instead of an out-of-memory error in the middle of
    a fit.
    """
    free = free_memory(xp, device)
    available = None if free is None else free - resident
    if available is not None and available <= row_bytes:
        raise ValueError(
            f"the device {device} has {free / _MB:.0f} MB free, not enough for the "
            f"{resident / _MB:.0f} MB of resident arrays plus one row ({row_bytes / _MB:.2f} MB) "
            f"of a block of {what}; no block_size fits. Reduce n_components (M) or free "
            "device memory."
        )
    if block_size is None:
        budget = default_mb * _MB if available is None else available // 2
        return max(1, int(budget // row_bytes))
    if available is not None and block_size * row_bytes > available:
        raise ValueError(
            f"block_size={block_size} rows of {what} ({block_size * row_bytes / _MB:.0f} MB) "
            f"do not fit: the device {device} has {available / _MB:.0f} MB free after "
            f"{resident / _MB:.0f} MB of resident arrays. Lower block_size (or leave it None "
            "to size blocks from the free memory)."
        )
    return int(block_size)


def exp_nonpositive(E, xp):
    """``exp(min(E, 0))``, in E's memory for PyTorch and CuPy (the RBF block's last pass: on a
    GPU the kernel blocks are memory-bound, so each saved n × M pass counts)."""
    if array_api_compat.is_torch_namespace(xp):
        return E.clamp_(max=0.0).exp_()
    if array_api_compat.is_cupy_namespace(xp):
        import cupy

        cupy.minimum(E, 0.0, out=E)
        return cupy.exp(E, out=E)
    return xp.exp(xp.clip(E, max=0.0))


def add_to_diagonal(A, value, xp):
    """``A + value·I``: in place for PyTorch, CuPy and numpy (no second n × n array), a new
    array otherwise."""
    if array_api_compat.is_torch_namespace(xp):
        A.diagonal().add_(value)
        return A
    if array_api_compat.is_cupy_namespace(xp) or array_api_compat.is_numpy_namespace(xp):
        idx = xp.arange(A.shape[0])
        A[idx, idx] += value
        return A
    n = A.shape[0]
    return A + value * xp.eye(n, dtype=A.dtype, device=device_of(A))


def matmul_into(A, B, out, xp):
    """``A @ B`` written into ``out`` where the library allows it (PyTorch, CuPy, numpy), so
    that an M × M product reuses the memory of a matrix the caller is done with; a new array
    otherwise, and also when ``out`` does not fit: another shape or dtype, read-only, or
    sharing memory with A or B."""
    fits = B.dtype == A.dtype and _can_take(out, (A.shape[0], B.shape[1]), A.dtype, A, B)
    if fits and array_api_compat.is_torch_namespace(xp):
        import torch

        try:
            return torch.matmul(A, B, out=out)
        except RuntimeError:  # an ``out`` this build refuses (layout, device): a new array
            return A @ B
    if fits and (array_api_compat.is_cupy_namespace(xp) or array_api_compat.is_numpy_namespace(xp)):
        return xp.matmul(A, B, out=out)
    return A @ B


def upper_gram_into(T, out, xp, *, block=2048):
    r""":math:`TT^T` for an upper-triangular T, written into ``out`` as :func:`matmul_into`
    writes, by blocks that skip T's zero half.

    Block (I, J) of the product, I ≥ J, sums over the columns from the start of block I only:
    before it, row block I of T is zero. That is about :math:`M^3/3` flops against
    :math:`2M^3` for the full product, the saving of LAPACK's ``lauum``, in plain matrix
    products that any array library runs on its device; the upper blocks are the lower ones
    transposed. With M ≤ ``block`` it is one full product.
    """
    M = T.shape[0]
    if M <= block:
        return matmul_into(T, T.T, out, xp)
    if not _can_take(out, (M, M), T.dtype, T):
        out = xp.empty((M, M), dtype=T.dtype, device=device_of(T))
    for i in range(0, M, block):
        i1 = min(i + block, M)
        for j in range(0, i1, block):
            j1 = min(j + block, M)
            G = T[i:i1, i:] @ T[j:j1, i:].T
            out[i:i1, j:j1] = G
            if j != i:
                out[j:j1, i:i1] = G.T
    return out


def _can_take(out, shape, dtype, *inputs):
    """Whether ``out`` can be written with a result of ``shape`` and ``dtype`` computed from
    ``inputs``: of that shape and dtype, not read-only, and sharing no memory with them."""
    return (
        getattr(out, "shape", None) == shape
        and out.dtype == dtype
        and getattr(getattr(out, "flags", None), "writeable", True)
        and not any(_may_share(out, A) for A in inputs)
    )


def _may_share(a, b):
    """Whether arrays a and b may overlap in memory (a cheap test of their bounds)."""
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return np.may_share_memory(a, b)
    if array_api_compat.is_torch_array(a) and array_api_compat.is_torch_array(b):
        base_a, base_b = a.untyped_storage(), b.untyped_storage()
        return base_a.data_ptr() == base_b.data_ptr()
    if array_api_compat.is_cupy_array(a) and array_api_compat.is_cupy_array(b):
        import cupy

        return cupy.may_share_memory(a, b)
    return True


def _cholesky_lower(A, xp):
    """Lower Cholesky factor, or None when A is not numerically positive definite."""
    if array_api_compat.is_torch_namespace(xp):
        import torch

        L, info = torch.linalg.cholesky_ex(A)
        return L if int(info) == 0 else None
    try:
        L = xp.linalg.cholesky(A)
    except Exception as err:  # each library has its own LinAlgError
        if "LinAlgError" in type(err).__name__ or "positive" in str(err).lower():
            return None
        raise
    # some libraries (CuPy) return NaN instead of raising
    return L if bool(xp.all(xp.isfinite(xp.linalg.diagonal(L)))) else None


def solve_triangular(T, B, xp, *, upper=True, transpose=False):
    """Solve ``T X = B`` (``Tᵀ X = B`` with ``transpose=True``) for triangular T.

    PyTorch and CuPy call their triangular solvers (O(M²) per column, and for PyTorch no copy
    of a transposed T); array-api-strict and other libraries fall back to the standard's
    general ``linalg.solve``.
    """
    if B.ndim == 1:
        return solve_triangular(T, B[:, None], xp, upper=upper, transpose=transpose)[:, 0]
    if array_api_compat.is_torch_namespace(xp):
        import torch

        A = T.mT if transpose else T
        return torch.linalg.solve_triangular(A, B, upper=upper != transpose)
    if array_api_compat.is_numpy_namespace(xp):  # the host side of a dask fit
        from scipy.linalg import solve_triangular as scipy_solve_triangular

        return scipy_solve_triangular(T, B, lower=not upper, trans="T" if transpose else "N")
    if array_api_compat.is_cupy_namespace(xp):
        from cupyx.scipy.linalg import solve_triangular as cupy_solve_triangular

        return cupy_solve_triangular(T, B, lower=not upper, trans="T" if transpose else "N")
    A = T.T if transpose else T
    return xp.linalg.solve(A, B)
