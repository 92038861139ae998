"""Input checks shared by every module: each error names the argument and the fix."""

from __future__ import annotations

import functools
import math
import numbers
import os
import re
import sys
import warnings
from decimal import Decimal

import numpy as np
import scipy.sparse

__all__ = [
    "check_weights",
    "sample_weight_array",
    "as_float_matrix",
    "as_real_array",
    "check_positive",
    "check_nonnegative",
    "check_same_features",
    "finite_gram",
    "all_finite",
    "as_float_vector",
    "check_bool",
    "check_count",
    "count_constraint",
    "real_constraint",
    "check_fit_input",
    "check_labels",
    "kernel_params_of",
    "check_memory",
    "validate_data",
    "check_cosine_arguments",
    "refuse_complex_features",
    "naming",
    "label_repr",
    "check_class_totals",
    "one_vs_rest_targets",
    "finite_values",
    "checked_score",
    "RegressorScoreMixin",
    "r2_at_any_scale",
    "ClassifierScoreMixin",
    "find_stack_level",
    "check_namespace",
]

# Libraries whose frames stand between the user's line and a warning of the package:
# scikit-learn's wrappers (fit_transform, Pipeline, set_output, _fit_context, clone), numpy's
# and scipy's callbacks, dask's and joblib's schedulers.
_LIBRARIES = ("sklearn", "numpy", "scipy", "dask", "distributed", "joblib")
_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _library_prefixes():
    """The folders of this package and of the imported libraries of ``_LIBRARIES``, each
    ending with the path separator (so that numpy's folder is not a prefix of another)."""
    prefixes = [_PACKAGE_DIR]
    for name in _LIBRARIES:
        module = sys.modules.get(name)  # a library not imported has no frame on the stack
        path = getattr(module, "__file__", None)
        if path:
            prefixes.append(os.path.dirname(os.path.abspath(path)) + os.sep)
    return tuple(prefixes)


def _is_internal_frame(frame):
    """A frame of the import machinery, which ``warnings.warn`` skips without counting it."""
    filename = frame.f_code.co_filename
    return "importlib" in filename and "_bootstrap" in filename


def find_stack_level():
    """The ``stacklevel`` for a ``warnings.warn`` in the function that calls this one, so
    that the warning names the user's line: the first frame, going up the stack from that
    function, that lies outside this package and outside the libraries that call into it
    (scikit-learn, numpy, scipy, dask, distributed, joblib).

    A fixed ``stacklevel`` is right for one way of calling only: ``transform`` called
    directly, through scikit-learn's ``fit_transform``, in a ``Pipeline`` or from an
    estimator of the package that transforms inside ``fit`` sits at four different depths,
    and the warning named a line of scikit-learn or of the package in all but one.
    Filtering warnings with ``warnings.catch_warnings`` around the inner calls instead is
    not thread-safe. This is what Python 3.12's ``warnings.warn(...,
    skip_file_prefixes=...)`` does with these folders (pandas' ``find_stack_level`` the
    same for pandas): frames of the import machinery are skipped without being counted, as
    ``warnings.warn`` skips them, and where every frame up to the top of the stack is inside
    (a warning on a worker thread), the top frame is named.
    """
    prefixes = _library_prefixes()
    frame = sys._getframe(1)  # the function that calls warnings.warn: level 1
    level = 1
    try:
        while frame.f_code.co_filename.startswith(prefixes):
            outer = frame.f_back
            while outer is not None and _is_internal_frame(outer):
                outer = outer.f_back
            if outer is None:
                break
            frame, level = outer, level + 1
    finally:
        del frame  # (no reference cycle through the frames)
    return level


def as_float_matrix(X, name="X", *, allow_float32=True):
    """Return ``X`` as a finite 2-D float array (float32 kept when allowed).

    Raises
    ------
    ValueError
        If ``X`` is not 2-D, is empty, or holds NaN or infinity.
    TypeError
        If ``X`` is not numeric.
    """
    _not_ragged(X, name)
    if scipy.sparse.issparse(X):  # np.asarray made it a 0-d object array: "dtype object"
        raise TypeError(f"{name} is a sparse matrix; this needs a dense array ({name}.toarray()).")
    arr = np.asarray(X)
    if arr.dtype == object or not (
        np.issubdtype(arr.dtype, np.number) or np.issubdtype(arr.dtype, np.bool_)
    ):
        raise TypeError(f"{name} must be a numeric array, got dtype {arr.dtype}.")
    if np.iscomplexobj(arr):
        raise TypeError(f"{name} must be real-valued, got complex dtype {arr.dtype}.")
    if arr.ndim != 2:
        # (the hint for one feature alone sent one sample of d features to shape (d, 1))
        hint = (
            f"; reshape 1-D data with {name}.reshape(-1, 1) if it is one feature, or "
            f"{name}.reshape(1, -1) if it is one sample"
            if arr.ndim == 1
            else ""
        )
        raise ValueError(
            f"{name} must be a 2-D array of shape (n_samples, n_features), got shape "
            f"{arr.shape}{hint}."
        )
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(
            f"{name} is empty (shape {arr.shape}); it needs at least one row and column."
        )
    dtype = np.float32 if (allow_float32 and arr.dtype == np.float32) else np.float64
    with np.errstate(over="ignore"):  # a long double beyond float64: refused below, by name
        arr = np.asarray(arr, dtype=dtype)
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} contains NaN or infinity; remove or impute those entries first.")
    return arr


def as_real_array(A, name, what="matrix"):
    """``A`` (a numpy array or a nested list) as a numpy float array, without a pass over
    it: float dtypes are kept, integers and bools become float64, and anything else (text,
    objects, complex numbers) gets a TypeError naming ``name``. Shape and finiteness are
    the caller's to check (an M × M Gram matrix is too large for an elementwise test)."""
    _not_ragged(A, name)
    arr = np.asarray(A)
    if arr.dtype.kind in "biu":
        return arr.astype(np.float64)
    if arr.dtype.kind != "f":
        raise TypeError(f"{name} must be a real {what}, got dtype {arr.dtype}.")
    return arr


def _as_float(value, name):
    """``float(value)`` for a real number, refusing (by name) a type that is not one and an
    integer beyond the float range (``float(10**400)`` raises OverflowError). A 0-d numeric
    array (``np.array(1.0)``, what ``np.asarray`` makes of a number) counts as its number."""
    if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iuf":
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {value!r}.")
    try:
        return float(value)
    except OverflowError:
        raise ValueError(
            f"{name} must be a finite number, got an integer beyond the float range (about "
            "1.8e308)."
        ) from None


def check_positive(value, name):
    """Return ``value`` as a float after checking it is a finite number > 0."""
    value = _as_float(value, name)
    if not np.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}.")
    return value


def check_nonnegative(value, name):
    """Return ``value`` as a float after checking it is a finite number >= 0."""
    value = _as_float(value, name)
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


# what every array namespace these functions call offers: the array-API standard's names
_NAMESPACE_NAMES = ("asarray", "finfo", "max", "abs")


def check_namespace(xp, name="xp"):
    """``xp`` as an array namespace, numpy for None; a TypeError naming ``name`` for
    anything else (the string "numpy", or ``numpy.linalg``, failed deep inside with an
    AttributeError that named neither)."""
    if xp is None:
        return np
    if not all(hasattr(xp, attribute) for attribute in _NAMESPACE_NAMES):
        raise TypeError(
            f"{name} must be an array namespace (a module such as numpy, or "
            f"array_api_compat.array_namespace(X)) or None, got {xp!r}."
        )
    return xp


def check_symmetric(A, name, xp=np, *, block=1024):
    """Raise a ValueError naming ``name`` where the square matrix A (of namespace ``xp``) is
    not symmetric beyond round-off, compared in blocks of rows (no n × n temporary). A
    factorization that reads one triangle (Cholesky, eigh) silently factored the symmetric
    matrix of that triangle instead. The tolerance, 1e-4 of the largest entry whatever A's
    dtype, admits a Gram matrix computed in float32 (by a general product, which rounds
    A_ij and A_ji differently) and stored in float64."""
    rtol = 1e-4
    diff = scale = 0.0
    n = A.shape[0]
    for start in range(0, n, block):
        stop = min(start + block, n)  # (array-api-strict refuses a slice past the end)
        rows = A[start:stop, :]
        diff = max(diff, float(xp.max(xp.abs(rows - A[:, start:stop].T))))
        scale = max(scale, float(xp.max(xp.abs(rows))))
    if diff > rtol * scale:
        raise ValueError(
            f"{name} is not symmetric: |{name}_ij − {name}_ji| reaches {diff:.3g} (largest "
            f"entry {scale:.3g}); it must be symmetric positive semidefinite (pass "
            f"({name} + {name}.T) / 2 if that is what you meant)."
        )


def all_finite(A, xp=np):
    """Whether every entry of the float array A (of namespace ``xp``) is finite. One sum,
    cheaper than a boolean mask of A's size, is finite unless some entry is NaN or infinite
    (or the sum overflows); only then is the mask formed to tell which. numpy sums in
    float64; another library in A's dtype (a device may have no float64)."""
    with np.errstate(over="ignore", invalid="ignore"):
        total = A.sum(dtype=np.float64) if xp is np else xp.sum(A)
    return bool(xp.isfinite(total)) or bool(xp.all(xp.isfinite(A)))


def finite_gram(kernel, X, Y=None, *, name="X", block=1024):
    """``kernel(X, Y)``, raising a ValueError that names the kernel if any entry is NaN or
    infinite (numpy's overflow warnings are silenced: the error says what went wrong).

    Inputs of magnitude beyond about 1e154 overflow a squared distance, and a kernel such as
    exp(Linear()) overflows far sooner; the solvers behind a Gram matrix must not see that.
    """
    checked = getattr(kernel, "_checked_gram", None)
    if checked is not None and isinstance(X, np.ndarray) and X.ndim == 2:
        # a kernel object checks its own block; the error then names these inputs
        X = as_float_matrix(X, name)
        if Y is not None:
            Y = as_float_matrix(Y, "Y")
            check_same_features(X, Y, name, "Y")
            if X.dtype != Y.dtype:
                X, Y = X.astype(np.float64), Y.astype(np.float64)
        return checked(X, Y, name, "Y")
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


def as_float_vector(y, name="y", n=None):
    """Return ``y`` as a finite 1-D float64 array (of length ``n`` when given).

    Raises
    ------
    TypeError
        If ``y`` is not numeric (e.g. strings).
    ValueError
        If ``y`` is not 1-D (a column vector is accepted), has the wrong length, or holds
        NaN or infinity.
    """
    _not_ragged(y, name)
    arr = np.asarray(y)
    if arr.dtype == object:
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError) as err:
            raise TypeError(f"{name} must be numeric, got non-numeric entries ({err}).") from None
        except OverflowError:  # Python's "int too large to convert to float" named nothing
            raise ValueError(
                f"{name} has an integer beyond the float range (about 1.8e308)."
            ) from None
    if not (np.issubdtype(arr.dtype, np.number) or np.issubdtype(arr.dtype, np.bool_)):
        raise TypeError(f"{name} must be numeric, got dtype {arr.dtype}.")
    if np.iscomplexobj(arr):
        raise TypeError(f"{name} must be real-valued, got complex dtype {arr.dtype}.")
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array, got shape {arr.shape}.")
    if n is not None and len(arr) != n:
        raise ValueError(f"{name} has {len(arr)} entries but the data have {n} rows.")
    with np.errstate(over="ignore"):  # a long double beyond float64: refused below, by name
        arr = arr.astype(np.float64)
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} contains NaN or infinity; remove or impute those entries.")
    return arr


def cast_to(X, dtype, name="X", *, xp=None, advice=None, underflow=True):
    """``X`` in ``dtype``, with a ValueError naming ``name`` where its entries do not fit
    (1e150 in float32 would silently become infinity). With ``xp``, X is an array of that
    library (PyTorch, array-api-strict) and ``dtype`` one of its dtypes. ``advice`` ends the
    overflow message (by default: use float64 or rescale). ``underflow=False`` lets entries
    below the dtype's normal range through, for callers whose result does not feel them (a
    cosine's argument ωᵀx + b); by default they are refused too."""
    with np.errstate(over="ignore"):  # the error below names the argument
        if xp is not None:
            out = xp.astype(X, dtype, copy=False)
            dtype_name = str(dtype).rsplit(".", 1)[-1]
        else:
            out = X.astype(dtype, copy=False)
            dtype_name = np.dtype(dtype).name
    if out is X or math.prod(X.shape) == 0:  # (a tensor's .size is a method)
        return out
    # One pass over X for both checks (a second would be a second pass over a dask array):
    # rounding is monotone, so some entry becomes infinity exactly when the largest
    # magnitude does, and a NaN makes that maximum NaN.
    big = float(np.abs(X).max()) if xp is None else float(xp.max(xp.abs(X)))
    with np.errstate(over="ignore"):
        fits = bool(np.isfinite(np.float64(big).astype(dtype_name)))
    if not fits:
        advice = f"use dtype=float64 or rescale {name}." if advice is None else advice
        raise ValueError(
            f"{name} has entries of magnitude {big:.3g}, beyond the range "
            f"of dtype={dtype_name}; {advice}"
        )
    tiny = float(np.finfo(dtype_name).tiny)
    if underflow and 0.0 < big < tiny:
        # every entry would be subnormal or 0: y of 1e-300 became 0, and so did the fit
        raise ValueError(
            f"{name} has entries of magnitude at most {big:.3g}, below the normal range "
            f"of dtype={dtype_name} (they would round to 0 or keep a few bits); use "
            f"dtype=float64 or rescale {name}."
        )
    return out


def cast_for_kernel(X, dtype, shift_invariant, name="X", *, xp=None):
    """``X`` in ``dtype`` for a kernel's blocks, by :func:`cast_to`; float64 data going to
    float32 for a shift-invariant kernel are centred in float64 first (data 1e6 from the
    origin would keep 3 of their digits in float32, and the kernel does not change). Returns
    the array and whether it was centred: then predict must use the float64 points. With
    ``xp``, as for :func:`cast_to`."""
    if xp is None:
        centred = X.dtype == np.float64 and np.dtype(dtype) == np.float32 and shift_invariant
        # np.asarray computes a lazy (dask) mean once, not in every pass over X
        mean = np.asarray(X.mean(axis=0)) if centred else None
    else:
        centred = X.dtype == xp.float64 and dtype == xp.float32 and shift_invariant
        mean = xp.mean(X, axis=0) if centred else None
    return cast_to(X - mean if centred else X, dtype, name, xp=xp), centred


def entry_variance(X):
    """The variance of all the entries of ``X`` (numpy, sparse, an array-API tensor or a dask
    array), as scikit-learn's ``gamma="scale"`` takes it, as a pair ``(v, m)``: the variance
    is v·m², with m = max |X_ij| (1 for an X of zeros), so that it neither overflows nor
    underflows at any scale of X. Both are Python floats."""
    if scipy.sparse.issparse(X):
        m = float(abs(X).max()) if X.nnz else 0.0
        m = m if m > 0 else 1.0
        A = X / m
        mean = float(A.mean())
        return max(float(A.multiply(A).mean()) - mean * mean, 0.0), m
    if isinstance(X, np.ndarray):
        xp, X = np, X.astype(np.float64, copy=False)
    else:
        import array_api_compat

        # (a dask array is computed here, in two passes over its chunks)
        xp = array_api_compat.array_namespace(X)
    m = float(xp.max(xp.abs(X))) if X.shape[0] * X.shape[1] else 0.0
    m = m if m > 0 else 1.0
    return float(xp.var(X / m)), m


def check_bool(value, name):
    """Return ``value`` as a bool after checking it is True or False (numpy's too): a string
    such as "False" is truthy, so a flag given as text was read as True, silently."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {value!r}.")
    return bool(value)


def check_count(value, name, minimum=1):
    """Return ``value`` as an int after checking it is an integer >= ``minimum`` (no bools)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {value!r}.")
    if value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}.")
    return int(value)


@functools.cache
def _count_interval():
    # scikit-learn is imported on first use: kernels, rkhs and strings import this module
    # without it
    from sklearn.utils._param_validation import Interval

    class CountInterval(Interval):
        """``Interval(Integral, minimum, None, closed="left")`` without the bools, which
        ``numbers.Integral`` counts as integers (max_iter=True would be one iteration)."""

        def is_satisfied_by(self, val):
            return not isinstance(val, (bool, np.bool_)) and super().is_satisfied_by(val)

        def __str__(self):
            return super().__str__().replace("an int", "an int (not a bool)", 1)

    return CountInterval


def count_constraint(minimum=1):
    """The ``_parameter_constraints`` entry of a count (an estimator's ``max_iter``,
    ``block_size``, ``n_components``): an integer >= ``minimum`` and not a bool, as
    :func:`check_count` asks of a function's argument. scikit-learn's error names the
    parameter.

    Examples
    --------
    >>> from kernelcourse._validation import count_constraint
    >>> c = count_constraint()
    >>> c.is_satisfied_by(3), c.is_satisfied_by(True), c.is_satisfied_by(0)
    (True, False, False)
    >>> print(c)
    an int (not a bool) in the range [1, inf)
    """
    return _count_interval()(numbers.Integral, minimum, None, closed="left")


@functools.cache
def _real_interval():
    from sklearn.utils._param_validation import Interval

    class RealInterval(Interval):
        """``Interval(Real, ...)`` without the integers beyond the float range, which
        ``numbers.Real`` counts as real numbers and the interval's comparisons admit
        (lam=10**400 then failed in ``float()`` with "int too large to convert to float"),
        and without the bools, which it counts too (C=True fitted with C = 1, where the
        functions refuse True by name)."""

        def is_satisfied_by(self, val):
            if isinstance(val, (bool, np.bool_)):
                return False
            if isinstance(val, numbers.Integral):
                try:
                    float(val)
                except OverflowError:
                    return False
            return super().is_satisfied_by(val)

        def __str__(self):
            return super().__str__().replace("a float", "a float (not a bool)", 1)

    return RealInterval


def real_constraint(left, right=None, *, closed):
    """The ``_parameter_constraints`` entry of a real hyper-parameter (λ, C, γ, ``tol``):
    scikit-learn's ``Interval(Real, left, right, closed=closed)``, refusing besides an
    integer beyond the float range, whose conversion to float fails; scikit-learn's error
    names the parameter.

    Examples
    --------
    >>> from kernelcourse._validation import real_constraint
    >>> c = real_constraint(0, closed="left")
    >>> c.is_satisfied_by(2), c.is_satisfied_by(1e300), c.is_satisfied_by(10**400)
    (True, True, False)
    >>> c.is_satisfied_by(True)
    False
    """
    return _real_interval()(numbers.Real, left, right, closed=closed)


def gamma_constraint(*, per_feature=False):
    """The ``_parameter_constraints`` entry of ``gamma``: a number > 0, "scale" or None
    (:func:`kernelcourse.kernels.resolve_gamma` says what they mean), and with
    ``per_feature`` also an array of one γ_k per feature."""
    from sklearn.utils._param_validation import StrOptions

    per = ["array-like"] if per_feature else []
    return [real_constraint(0, None, closed="neither"), StrOptions({"scale"}), *per, None]


def _not_ragged(value, name):
    if isinstance(value, list | tuple):
        try:
            np.asarray(value)
        except ValueError as err:
            if "inhomogeneous" in str(err) or "sequence" in str(err):
                raise ValueError(
                    f"{name} is ragged: its rows have different lengths; every row needs the "
                    "same number of entries."
                ) from None
            raise


def _not_complex(value, name):
    """Refuse complex data by name: a numpy array or list (scikit-learn's error printed all
    of it), or an array of another library (PyTorch, array-api-strict).

    scikit-learn finds complex data by ``dtype.kind``, which only numpy dtypes have: a complex
    PyTorch tensor lost its imaginary part in the cast to float, silently.
    """
    import array_api_compat

    if isinstance(value, np.ndarray | list | tuple):
        # scikit-learn's own error prints the whole array after its message
        if np.iscomplexobj(value):
            raise ValueError(
                f"{name}: Complex data not supported (dtype {np.asarray(value).dtype}); pass "
                "the real part (or the real and imaginary parts as separate columns)."
            )
        return
    if not array_api_compat.is_array_api_obj(value):
        return
    xp = array_api_compat.array_namespace(value)
    if xp.isdtype(value.dtype, "complex floating"):
        raise ValueError(
            f"{name}: Complex data not supported (dtype {value.dtype}); pass the real part "
            "(or the real and imaginary parts as separate columns)."
        )


def refuse_complex_features(Z, name="features"):
    """Raise a TypeError naming ``name`` when the feature matrix Z (dense or sparse) is
    complex, as ``RandomFourierFeatures(map="complex")`` makes it: a cast to float drops the
    imaginary part with numpy's ComplexWarning only, and the real parts alone are not
    features of the kernel. Returns Z."""
    if np.iscomplexobj(Z):  # (reads Z.dtype: a sparse matrix too)
        raise TypeError(
            f"{name} must return real features, got dtype {Z.dtype}; a float model would drop "
            "their imaginary part. Use RandomFourierFeatures(map='cos') or map='cossin'."
        )
    return Z


def _is_number(value):
    try:
        float(value)
    except (TypeError, ValueError):
        return False
    except OverflowError:  # an integer beyond the float range is a number
        pass
    return True


def check_fit_input(X, y=None, *, regression=False):
    """Checks run before scikit-learn's ``validate_data``, so that its errors name the
    argument: a ragged list names X (or y), and a regressor's non-numeric y names y."""
    _not_ragged(X, "X")
    if y is None:
        return
    _not_ragged(y, "y")
    if regression:
        arr = np.asarray(y)
        if arr.dtype.kind in "USO":
            try:
                arr.astype(np.float64)
            except (TypeError, ValueError):
                # the first entry that is not a number ([1, 'a'] named the 1)
                first = next((v for v in arr.ravel() if not _is_number(v)), None)
                if isinstance(first, np.generic):  # 'a', not np.str_('a')
                    first = first.item()
                raise ValueError(
                    f"y must be numeric for a regressor, got non-numeric values such as "
                    f"{first!r}; use a classifier for labels."
                ) from None
            # None becomes NaN in the cast, past scikit-learn's check of an object y (which
            # looks for NaN only): the fits then blamed an overflow, b or the kernel
            if arr.dtype.kind == "O" and any(v is None for v in arr.ravel()):
                raise ValueError(
                    "y contains None; a regressor needs a number for every target (remove or "
                    "impute those entries)."
                )


def check_labels(y, *, ravel=False, name="y"):
    """scikit-learn's ``check_classification_targets`` on a classifier's y, after its
    ``column_or_1d`` when ``ravel``, with ``y:`` in front of their errors ("Unknown label
    type: continuous", "Found array with dim 3" do not say which argument). Returns y.
    ``name`` is the argument's name, for labels given otherwise (``classes``)."""
    from sklearn.utils.multiclass import check_classification_targets
    from sklearn.utils.validation import column_or_1d

    try:
        if ravel:
            y = column_or_1d(y, warn=True)
        # (a NaN label was cast to an integer, with numpy's warning, before the error that
        # names it)
        with np.errstate(invalid="ignore"):
            check_classification_targets(y)
    except (ValueError, TypeError) as err:
        # scikit-learn's messages speak of y ("Input y contains NaN"), and of "discrete
        # classes": another argument is named in front of them
        if _names(str(err), "y") if name == "y" else str(err).startswith(name):
            raise
        raise type(err)(f"{name}: {err}") from err
    return y


def kernel_params_of(kernel_params):
    """An estimator's ``kernel_params`` as a dict for ``resolve_kernel``, refusing the keys
    the estimator passes itself (Python's "got multiple values for keyword argument
    'gamma'" before)."""
    try:
        params = dict(kernel_params or {})
    except (TypeError, ValueError):  # dict("abc"): "dictionary update sequence element #0 ..."
        raise TypeError(
            f"kernel_params must be a dict of the kernel's parameters, got {kernel_params!r}."
        ) from None
    clash = sorted({"gamma", "n_features"} & set(params))
    if clash:
        raise ValueError(
            f"kernel_params must not hold {clash}: gamma is the estimator's own parameter "
            "(set gamma=...), and n_features comes from X."
        )
    return params


def sample_weight_array(sample_weight, X):
    """``sample_weight`` as a finite non-negative float64 vector of X's length (None: all
    ones), read as scikit-learn's ``_check_sample_weight`` reads it (a scalar is broadcast),
    with every error naming ``sample_weight``. :func:`check_weights` adds the checks on the
    sum; an SVM, whose weights only scale its box bounds, needs this alone."""
    from sklearn.utils.validation import _check_sample_weight

    from ._array_api import _foreign, to_numpy

    if sample_weight is not None and _foreign(sample_weight):
        # weights live on the host; a tensor may require grad
        sample_weight = to_numpy(sample_weight)
    try:
        sw = _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)
    except (ValueError, TypeError, OverflowError) as err:
        # complex entries, a string scalar and an integer beyond the float range raised
        # numpy's and Python's errors, which name nothing
        kind = ValueError if isinstance(err, OverflowError) else type(err)
        raise kind(f"sample_weight: {err}") from err
    if not np.isfinite(sw).all():  # a scalar is broadcast unchecked: NaN "summed to zero"
        raise ValueError("sample_weight contains NaN or infinity; every weight must be finite.")
    return sw


def check_weights(sample_weight, X):
    """Non-negative finite sample weights with a positive sum (errors name ``sample_weight``),
    or None for all ones."""
    if sample_weight is None:
        return None
    sw = sample_weight_array(sample_weight, X)
    with np.errstate(over="ignore"):  # an overflow is refused below, by name
        total = sw.sum()
    if not total > 0:
        raise ValueError("sample_weight sums to zero; at least one sample needs weight > 0.")
    if not np.isfinite(total):
        # weights of 1e307 each: every weighted sum (means, XᵀSX, the FALKON n_eff) would
        # overflow too, with numpy's bare overflow warning
        raise ValueError(
            f"sample_weight sums to more than the float range (largest weight "
            f"{float(sw.max()):.3g}); divide the weights by a common factor (and, for the "
            "ridge estimators, lam by the same factor: the fit is then unchanged)."
        )
    return sw


def physical_memory():
    """Bytes of physical memory, or None where the platform does not say."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, OSError, ValueError):
        return None


def check_memory(nbytes, what, fix):
    """Raise a MemoryError before starting work that needs ``nbytes`` when that is more than
    the machine's physical memory: ``what`` says what needs it, ``fix`` which parameter to
    lower. (Starting anyway would swap for hours or be killed, and say nothing useful.)"""
    total = physical_memory()
    if total is not None and nbytes > total:
        # in decimal: a count such as n_components=10**400 makes nbytes an integer whose
        # division by 2**30 overflowed a float (OverflowError instead of this message)
        need = Decimal(int(nbytes)) / 2**30
        raise MemoryError(
            f"{what} needs about {need:.3g} GiB, more than this machine's "
            f"{total / 2**30:.1f} GiB of memory; {fix}."
        )


def _names(msg, name):
    return re.search(rf"(?<![\w]){re.escape(name)}(?![\w])", msg) is not None


def naming(name, method, A):
    """``method(A)``, a method that checks its array argument as ``X`` (a ``transform``, an
    ``eigenfunctions``), with ``name`` for X in its errors: the second array of an estimate
    K(X, Y) goes through the method that checks X, and its NaN, its empty shape or its
    wrong feature count were reported as X's ("Input X contains NaN" for a bad Y)."""
    try:
        return method(A)
    except (ValueError, TypeError) as err:
        msg = re.sub(r"(?<![\w.])X(?!\w)", name, str(err))
        if msg == str(err):
            raise
        try:
            renamed = type(err)(msg)
        except Exception:  # an error class that takes other arguments: left as it was
            raise err from None
        raise renamed from err


def label_repr(value):
    """A class label as the user wrote it, for messages: numpy 2 writes ``np.int64(1)`` for
    ``repr`` of a numpy scalar, so the label is turned into its Python value first."""
    return repr(value.item() if isinstance(value, np.generic) else value)


def check_class_totals(codes, weights, classes, what="sample_weight"):
    """Raise a ValueError naming ``what`` where the per-sample ``weights`` (None: all ones)
    leave a class with zero total weight; ``codes`` index ``classes`` (the encoded y). A
    class whose every sample weighs 0 is a class never seen in training: an SVM has no
    bound for it, and a ridge classifier regressed its code on the other classes alone and
    never predicted it, silently."""
    if weights is None:
        return
    totals = np.bincount(codes, weights=weights, minlength=len(classes))
    if np.any(totals <= 0):
        empty = ", ".join(label_repr(classes[c]) for c in np.flatnonzero(totals <= 0))
        raise ValueError(
            f"{what} leave{'' if ' and ' in what else 's'} class(es) [{empty}] with zero total "
            "weight; every class needs a sample with positive weight (drop the class instead)."
        )


def one_vs_rest_targets(y):
    """The targets of one-vs-rest regression on a classifier's labels ``y`` (checked by
    :func:`check_labels`), from one encoding of y: ``(classes, Y, codes)`` with the sorted
    ``classes``, the ±1 codes ``Y`` in float64 (shape (n, 1) for two classes, +1 meaning
    ``classes[1]``, as scikit-learn's ``RidgeClassifier``; else (n, n_classes)) and the
    index in ``classes`` of each label, read off Y. Fewer than two classes raise a
    ValueError naming y."""
    from sklearn.preprocessing import LabelBinarizer

    binarizer = LabelBinarizer(pos_label=1, neg_label=-1)
    Y = binarizer.fit_transform(y).astype(np.float64)
    classes = binarizer.classes_
    if len(classes) < 2:
        raise ValueError(
            # the label as written (numpy 2 wrote np.int64(0) for a numpy scalar's repr)
            f"y has only one class ({classes.tolist()[0]!r}); classification needs at least two."
        )
    # each row of Y holds one +1 (a second np.unique of y sorted the labels again)
    codes = (Y[:, 0] > 0).astype(np.intp) if Y.shape[1] == 1 else np.argmax(Y, axis=1)
    return classes, Y, codes


def finite_values(compute, X, what="predictions"):
    """``compute()``, the values of a model on X (predictions, decision values), with numpy's
    overflow warnings silenced, raising a ValueError that names X where one of them is
    infinite or NaN: a product such as X @ coef_ on rows near the largest float overflowed
    with numpy's bare warning, and a class was then read off NaN."""
    with np.errstate(over="ignore", invalid="ignore"):
        F = compute()
    if not all_finite(F):
        top = float(abs(X).max()) if math.prod(X.shape) else 0.0  # (dense or sparse X)
        raise ValueError(
            f"the {what} on X (largest |entry| {top:.3g}) overflow floating point: X is "
            "too large in magnitude for this model; rescale it."
        )
    return F


def check_vector_kernel(kernel):
    """Refuse a kernel object that does not compare numeric vectors (a string kernel), by
    name, with the way to use it; anything else passes. Read from the kernel's ``domain``."""
    domain = getattr(kernel, "domain", "vectors")
    if domain != "vectors":
        # a string kernel on numeric X failed inside it ("'numpy.ndarray' object has no
        # attribute 'encode'"), and on string X in the conversion to float, naming X
        raise ValueError(
            f"kernel {kernel!r} compares {domain}, not numeric vectors; pass its Gram matrix "
            "instead (kernelcourse.strings.string_gram, with KernelSVC(kernel='precomputed'))."
        )


def validate_data(estimator, X="no_validation", y="no_validation", **check_params):
    """scikit-learn's ``validate_data`` whose every error names the argument at fault.

    Its own messages often say what is wrong but not where ("could not convert string to
    float", "Complex data not supported", "Found array with dim 3", numpy's "inhomogeneous
    shape"); the same error comes back with ``X:`` or ``y:`` in front (same type, so callers
    and scikit-learn's estimator checks match it as before).
    """
    from sklearn.utils.validation import check_array
    from sklearn.utils.validation import validate_data as _sk_validate_data

    has_x = not (isinstance(X, str) and X == "no_validation") and X is not None
    has_y = not (y is None or (isinstance(y, str) and y == "no_validation"))
    if has_x:
        # before X is read as numbers: strings for a string kernel would be refused as X
        check_vector_kernel(getattr(estimator, "kernel", None))
        _not_ragged(X, "X")
        _not_complex(X, "X")
    if has_y:
        _not_ragged(y, "y")
        _not_complex(y, "y")
    try:
        # (its finiteness check sums X first: rows near the largest float overflowed that
        # sum, with numpy's warning, before the entries were found finite)
        with np.errstate(over="ignore", invalid="ignore"):
            return _sk_validate_data(estimator, X, y, **check_params)
    except (ValueError, TypeError) as err:
        msg = str(err)
        if X is None:  # read as the number NaN: "y: Expected 2D array, got scalar array"
            raise type(err)(
                "X is None; pass the data X, an array of shape (n_samples, n_features)."
            ) from err
        if _names(msg, "X") or _names(msg, "y") or "sample_weight" in msg:
            raise
        if "inconsistent numbers of samples" in msg:
            raise type(err)(f"X and y: {msg}") from err
        name = "X" if has_x else "y"
        if has_x and has_y:
            # which one? X alone, checked as the estimator would
            keys = ("accept_sparse", "dtype", "ensure_2d", "allow_nd", "ensure_all_finite")
            try:
                check_array(X, **{k: v for k, v in check_params.items() if k in keys})
            except (ValueError, TypeError):
                name = "X"
            else:
                name = "y"
        raise type(err)(f"{name}: {msg}") from err


def check_cosine_arguments(t, xp=None, *, warn=True):
    """Raise where the cosine's arguments ``t`` (numpy), or features computed from them
    with ``xp`` (cos(±inf) is NaN), are not finite; warn where numpy arguments are so large
    that their phase is lost, or with ``warn=False`` leave that to the caller. Returns the
    largest magnitude of numpy arguments (None with ``xp``)."""
    # numpy: one pass, the largest magnitude (NaN or infinite when any entry is)
    big = (float(np.abs(t).max()) if t.size else 0.0) if xp is None else None
    if not (math.isfinite(big) if xp is None else all_finite(t, xp)):
        raise ValueError(
            "the cosine's arguments ωᵀx + b overflow to infinity or NaN: X is too large for "
            "the frequencies Ω (W); rescale X (for example standardize it) or lower γ."
        )
    if xp is None and warn:
        warn_if_phase_lost(big, t.dtype)
    return big


def warn_if_phase_lost(big, dtype, *, advice="lower γ", note=None):
    """Warn where the cosine's arguments reach ``big`` (their largest magnitude, in a float
    ``dtype``): neighbouring floats there are more than π apart, so the phase, and with it
    every cosine and sine (cos(t − π/2) is cos t there), is rounding noise. One warning for
    every path that takes such cosines, at the user's line (:func:`find_stack_level`);
    ``advice`` is what to lower besides rescaling X. ``note``, a sentence, says where the
    warning comes from when no line of the user's can (a dask worker's thread)."""
    name = str(dtype).rsplit(".", 1)[-1]  # numpy's float32 and a library's "torch.float32"
    if math.isfinite(big) and big * float(np.finfo(name).eps) > math.pi:
        warnings.warn(
            f"the cosine's arguments ωᵀx + b reach {big:.3g}, where {name} cannot "
            "resolve their phase: the features are rounding noise. Rescale X (for example "
            f"standardize it) or {advice}." + (f" {note}" if note else ""),
            RuntimeWarning,
            stacklevel=find_stack_level(),
        )


def no_phase_warning(big, *, note=None):
    """The lost-phase ``warn`` of a map that takes no cosine (or warns for itself)."""


def transform_unwarned(features, X):
    """``features.transform(X)`` with the lost-phase warning of the package's cosine maps
    left to the caller: ``(Z, big, warn)``, ``warn(big)`` warning where the largest cosine
    argument ``big`` loses the phase. For a map of the package (the class that defines its
    ``transform`` defines ``_transform_unwarned`` too: a subclass's own transform is
    called); any other map is transformed as it is, warns for itself, and gives 0.0."""
    for klass in type(features).__mro__:
        if "transform" in vars(klass):
            if "_transform_unwarned" in vars(klass):
                return features._transform_unwarned(X)
            break
    return features.transform(X), 0.0, no_phase_warning


class LostPhase:
    """The transforms of one call that maps X block by block, warned about once for a lost
    phase, with the largest argument of all blocks, where each block warned on its own (a
    fit of four blocks warned four times). Without ``warnings.catch_warnings``, which is
    not thread-safe."""

    def __init__(self):
        self.big, self._warn = 0.0, no_phase_warning

    def transform(self, features, X):
        Z, big, warn = transform_unwarned(features, X)
        if big >= self.big:
            self.big, self._warn = big, warn
        return Z

    def warn(self, note=None):
        """Warn (at the user's line) if a block lost the phase; once."""
        warn, self._warn = self._warn, no_phase_warning
        warn(self.big, note=note)


def _length(a):
    """The number of rows of ``a`` as an int, or None where it has none that is known yet (a
    dask array of unknown chunks); a scalar or another non-collection raises a TypeError."""
    from sklearn.utils.validation import _num_samples

    shape = getattr(a, "shape", None)
    if shape is not None and len(shape) and not isinstance(shape[0], numbers.Integral):
        return None  # (dask writes nan for a length it has not computed)
    return _num_samples(a)


def checked_score(estimator, X, y, sample_weight, metric):
    """``metric(y, estimator.predict(X), sample_weight=...)``, as scikit-learn's
    ``RegressorMixin.score`` and ``ClassifierMixin.score`` compute it, with every error
    naming its argument: ``X`` as ``predict`` names it, ``y`` (missing, ragged, complex, not
    numeric for a regressor, of another length than X) and ``sample_weight`` as ``fit``
    checks them (:func:`check_weights`). scikit-learn's own messages ("Found input variables
    with inconsistent numbers of samples: [5, 30]", "Input contains NaN") named neither.

    The weights, checked on the host, reach ``metric`` as a float64 numpy array, or as given
    when they are an array of another library (PyTorch, array-api-strict), for a metric that
    computes in that library."""
    from sklearn.base import is_regressor

    from ._array_api import _foreign

    if y is None:
        raise ValueError(
            f"y is None: {type(estimator).__name__}.score compares the predictions for X with "
            "the true targets y; pass y."
        )
    _not_ragged(y, "y")
    _not_complex(y, "y")
    if not _foreign(y):
        if is_regressor(estimator):
            check_fit_input(None, y, regression=True)  # a label such as 'a' for a regressor
        values = np.asarray(y)
        if values.dtype.kind == "f" and not all_finite(values):
            # (a classifier's metric cast the NaN to an integer, with numpy's warning)
            raise ValueError("y contains NaN or infinity; remove or impute those entries.")
    y_pred = estimator.predict(X)
    try:
        n_y = _length(y)
    except TypeError as err:  # a number: "Singleton array array(3.0) cannot be considered ..."
        raise TypeError(f"y: {err}") from err
    n = _length(y_pred)
    if n is not None and n_y is not None and n_y != n:
        raise ValueError(f"y has {n_y} entries but X has {n} rows; score needs one per row.")
    if sample_weight is not None:
        if n is None:  # a length not yet computed (dask): the weights say it
            n = _length(sample_weight)
        sw = check_weights(sample_weight, np.empty((n, 0)))
        sample_weight = sample_weight if _foreign(sample_weight) else sw
    try:
        return metric(y, y_pred, sample_weight=sample_weight)
    except (ValueError, TypeError) as err:
        # what is left is y's ("Input contains NaN", "y_true and y_pred have different
        # number of output (3!=1)", "Mix of label input types (string and number)")
        if _names(str(err), "y"):
            raise
        raise type(err)(f"y: {err}") from err


def r2_at_any_scale(y, y_pred, sample_weight=None):
    """scikit-learn's ``r2_score(y, y_pred, sample_weight=...)`` for targets and predictions
    of any magnitude.

    R² = 1 − Σ sᵢ(yᵢ − ŷᵢ)² / Σ sᵢ(yᵢ − ȳ)² does not change when y and ŷ are scaled
    together, but its sums of squares overflow from magnitudes of about 1e154 on: a model
    fitted on targets near 1e300 scored NaN, with numpy's overflow warnings. Such y and ŷ
    are scaled down by a power of two (exact) first; at smaller magnitudes the result is
    ``r2_score``'s, unchanged. Where R² itself is below the float range (predictions that
    miss y by more than about 1e154 times its spread), -inf is returned with a
    RuntimeWarning that says so."""
    from sklearn.metrics import r2_score

    from ._array_api import _foreign

    def unchanged():
        return r2_score(y, y_pred, sample_weight=sample_weight)

    if _foreign(y) or not isinstance(y_pred, np.ndarray) or y_pred.dtype.kind != "f":
        return unchanged()
    try:
        Y = np.asarray(y, dtype=np.float64)
    except (TypeError, ValueError):  # r2_score names what is wrong
        return unchanged()
    big = max(float(np.abs(Y).max(initial=0.0)), float(np.abs(y_pred).max(initial=0.0)))
    total = len(y_pred) if sample_weight is None else float(np.sum(sample_weight))
    limit = math.sqrt(np.finfo(np.float64).max / max(total, 1.0)) / 4
    if not (math.isfinite(big) and big > limit):
        return unchanged()
    factor = math.ldexp(1.0, math.frexp(limit)[1] - math.frexp(big)[1] - 1)
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        score = r2_score(Y * factor, y_pred * factor, sample_weight=sample_weight)
    if score == -math.inf:
        warnings.warn(
            "R² is below the float range (about -1.8e308): the predictions miss y by more "
            "than about 1e154 times the spread of y (X far outside the training data?); "
            "score returns -inf.",
            RuntimeWarning,
            stacklevel=find_stack_level(),
        )
    return score


class RegressorScoreMixin:
    """``score`` of a regressor (R²) through :func:`checked_score`: listed before
    scikit-learn's ``RegressorMixin``, whose ``score`` it replaces with the same result."""

    def score(self, X, y, sample_weight=None):
        """The coefficient of determination R² of ``self.predict(X)`` against ``y``.

        .. math:: R^2 = 1 - \\frac{\\sum_i s_i (y_i - \\hat y_i)^2}
                  {\\sum_i s_i (y_i - \\bar y_s)^2},

        scikit-learn's ``r2_score`` (averaged uniformly over the targets of a 2-D y): 1 for
        a perfect fit, 0 for a constant predicting the weighted mean :math:`\\bar y_s`, and
        negative for worse; at any magnitude of y (:func:`r2_at_any_scale`).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
            The true targets.
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative weights :math:`s_i` with a positive sum (None: all ones).

        Returns
        -------
        score : float
        """
        return checked_score(self, X, y, sample_weight, r2_at_any_scale)


class ClassifierScoreMixin:
    """``score`` of a classifier (accuracy) through :func:`checked_score`: listed before
    scikit-learn's ``ClassifierMixin``, whose ``score`` it replaces with the same result."""

    def score(self, X, y, sample_weight=None):
        """The accuracy of ``self.predict(X)`` against the labels ``y``: the (weighted)
        fraction of samples whose predicted class is their label, scikit-learn's
        ``accuracy_score``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            The true labels.
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative weights with a positive sum (None: all ones).

        Returns
        -------
        score : float
        """
        from sklearn.metrics import accuracy_score

        return checked_score(self, X, y, sample_weight, accuracy_score)
