r"""The estimators on other devices: their computations for any array-API library.

With ``sklearn.set_config(array_api_dispatch=True)``,
:class:`~kernelcourse.features.RandomFourierFeatures`, :class:`~kernelcourse.features.Nystroem`,
:class:`~kernelcourse.ridge.KernelRidge` and :class:`~kernelcourse.scale.NystroemKRR` /
:class:`~kernelcourse.scale.NystroemKRRClassifier` hand PyTorch (CPU or CUDA), CuPy or
array-api-strict inputs to the functions here, which compute with the input's own library on
its own device and return arrays of that library on that device. numpy inputs never come here:
the estimators keep their numpy code, with its compiled cosine and threaded blocks.

The formulas are those of the numpy path, written once with the standard's operations; the few that
the
standard lacks (Cholesky with a jitter, triangular solves, free device memory) come from the
shim :mod:`kernelcourse._array_api`. Random draws (Ω, b, centres, landmarks) are made on the
host with the estimator's ``random_state`` exactly as on the numpy path, so both paths give the
same model up to round-off.

Precision follows FALKON (Meanti et al. 2020): kernel blocks in the input's dtype (float32 is
the fast choice on a GPU); K_MM, the preconditioner, the products with the blocks, the
conjugate-gradient vectors and the coefficients in float64 where the device supports it.
"""

from __future__ import annotations

import math
import warnings

import array_api_compat
import numpy as np

from . import _array_api as aa
from . import solvers
from ._validation import (
    all_finite,
    as_float_matrix,
    cast_to,
    check_cosine_arguments,
    check_count,
    check_namespace,
    check_nonnegative,
    check_symmetric,
    find_stack_level,
    warn_if_phase_lost,
)
from .kernels import (
    RBF,
    Cosine,
    Kernel,
    Laplacian,
    Linear,
    Matern,
    Polynomial,
    Product,
    Scaled,
    Sum,
    _overflow_error,
    _power_of_two_scale,
    _refine_near_pairs,
)

__all__ = ["gram_block", "nystroem_krr_fit", "nystroem_map"]


# -- kernel blocks ---------------------------------------------------------------------------------
def _sq_norms(X, xp):
    return xp.sum(X * X, axis=1)


def _centred(X, Z, xp):
    """X and Z moved by Z's mean and divided by a common power of two s where their squares
    could overflow, as :func:`kernelcourse.kernels.centre_and_scale` does on numpy: then
    ‖x − y‖ = s ‖x̃ − ỹ‖. Returns X̃, Z̃ and s (1.0 when no scaling)."""
    # ‖x − y‖ is shift-invariant; centring on Z's mean keeps ‖x‖² + ‖y‖² − 2xᵀy from
    # cancelling on data far from the origin
    c = xp.mean(Z, axis=0)
    X, Z = X - c, Z - c
    big = max(float(xp.max(xp.abs(X))), float(xp.max(xp.abs(Z))))
    s = _power_of_two_scale(big, np.float32 if X.dtype == xp.float32 else np.float64)
    if s == 1.0:
        return X, Z, 1.0
    return X / s, Z / s, s  # a power of two: the division is exact


def _squared_distances(X, Y, xp, *, curvature=None):
    """‖x̃ − ỹ‖² of the rows :func:`_centred` returns, and its s.

    Near pairs are recomputed from their differences where the expansion's round-off there,
    a few ε(‖x‖² + ‖y‖²), may move the kernel by more than √ε: always when ``curvature`` is
    None (a kernel of ‖x − y‖ itself, as Matérn 1/2: the square root makes that error
    √ε‖x‖, 0.1 for rows of norm 1e7), else for a kernel 1 − curvature·‖x − y‖² near 0 only
    when curvature times it exceeds √ε (the pass costs almost half a block's time on a GPU).
    """
    X, Y, s = _centred(X, Y, xp)
    hx, hy = _sq_norms(X, xp), _sq_norms(Y, xp)
    D = X @ Y.T
    D *= -2.0
    D += hx[:, None]
    D += hy[None, :]
    D = xp.clip(D, min=0.0)
    eps = float(xp.finfo(D.dtype).eps)
    limit = 64 * eps * (float(xp.max(hx)) + float(xp.max(hy)))
    if curvature is None or curvature * s * s * limit > math.sqrt(eps):
        D = _refine_near_pairs(D, X, Y, 1.0, limit, xp)
    return D, s


def gram_block(kernel, X, Y=None, *, xp=None):
    r"""The Gram block :math:`[K(x_i, y_j)]` with the array library of X, in X's dtype.

    The same kernels as :mod:`kernelcourse.kernels` (RBF, Laplacian, Matérn, polynomial,
    linear, cosine, and their sums, products and positive multiples), on the device of X.

    Integer and boolean inputs are computed in floating point (float64 where the device has
    it), as the numpy kernels do.

    Raises
    ------
    TypeError
        For a kernel without an array-API form (``exp(K)``, weighted kernels), or inputs
        that are not real numbers.
    ValueError
        If X or Y is not 2-D, is empty, they have different numbers of features, either
        holds NaN or infinity (which would fill the block with NaN), or the block overflows
        (a polynomial or linear kernel of large inputs), as on the numpy path.

    See Also
    --------
    kernelcourse.kernels.RBF
        The numpy form of the kernels (any kernel object, on numpy arrays).
    nystroem_krr_fit
        The FALKON fit built on these blocks.

    Examples
    --------
    >>> import array_api_strict as xp
    >>> import numpy as np
    >>> from kernelcourse.devices import gram_block
    >>> from kernelcourse.kernels import RBF
    >>> X = xp.asarray([[0.0, 0.0], [1.0, 0.0], [0.0, 2.0]])
    >>> K = gram_block(RBF(gamma=0.5), X, xp=xp)
    >>> print(K.shape, K.dtype)
    (3, 3) array_api_strict.float64
    >>> print(np.round(np.asarray(K), 3))
    [[1.    0.607 0.135]
     [0.607 1.    0.082]
     [0.135 0.082 1.   ]]
    """
    if xp is None:  # X's own library, whether or not array_api_dispatch is on
        xp = array_api_compat.array_namespace(X) if aa._foreign(X) else np
    xp = check_namespace(xp, "xp")
    checked = []
    for name, A in (("X", X), ("Y", Y)):
        if A is not None:
            A = _check_block_input(A, name, xp)
        checked.append(A)
    X, Y = checked
    if Y is not None and X.shape[1] != Y.shape[1]:
        raise ValueError(f"Y has {Y.shape[1]} features but X has {X.shape[1]}.")
    if Y is not None and X.dtype != Y.dtype:
        # both in the wider dtype, as the numpy kernels: float32 X against float64 Y failed
        # in a Laplacian's in-place sum, and the RBF's float32 centring of one of them left
        # float32 round-off in a float64 block, depending on the order of the arguments
        dtype = xp.result_type(X.dtype, Y.dtype)
        X, Y = xp.astype(X, dtype), xp.astype(Y, dtype)
    with np.errstate(over="ignore", invalid="ignore"):  # the error below says what happened
        K = _gram_block(kernel, X, Y, xp)
    # as the numpy kernels: a polynomial kernel of 1e150 came back as a block of infinity
    return _refuse_overflow(K, kernel, X, Y, xp)


def _check_block_input(A, name, xp):
    """``A`` as a finite, non-empty 2-D real floating array of ``xp`` for :func:`gram_block`:
    integers and booleans in the device's widest float, as the numpy kernels take them (a
    linear kernel of booleans came back boolean, an RBF of integers failed in ``mean``)."""
    if xp is not np and not aa._foreign(A):
        # a numpy array or a list beside X of another library failed inside xp.isdtype
        # ("'dtype' must be a dtype") or in A.shape, naming nothing
        raise TypeError(
            f"{name} is a {type(A).__module__}.{type(A).__name__}, not an array of "
            f"{xp.__name__}, the library of the block; pass X and Y of one library "
            f"({xp.__name__}.asarray({name}) on the device of the other)."
        )
    shape = np.shape(A) if xp is np else tuple(A.shape)
    if len(shape) != 2:
        raise ValueError(f"{name} must be 2-D (n_samples, n_features), got shape {shape}.")
    if xp is np:  # the numpy kernels' own checks and messages (lists too)
        return as_float_matrix(A, name)
    if not xp.isdtype(A.dtype, ("real floating", "integral", "bool")):
        raise TypeError(f"{name} must hold real numbers, got dtype {A.dtype}.")
    if not xp.isdtype(A.dtype, "real floating"):
        A = xp.astype(A, aa.max_float(xp, aa.device_of(A)))
    if A.shape[0] == 0 or A.shape[1] == 0:  # the numpy kernels' message, not a failed max
        raise ValueError(f"{name} is empty (shape {shape}); it needs at least one row and column.")
    if not all_finite(A, xp):
        raise ValueError(f"{name} contains NaN or infinity; remove or impute those entries first.")
    return A


def _gram_block(kernel, X, Y, xp):
    """:func:`gram_block` on checked input."""
    Z = X if Y is None else Y
    if isinstance(kernel, RBF):
        gamma = kernel.gamma
        if np.ndim(gamma) != 0:  # one γ_k per feature: γ = 1 on the inputs scaled by √γ_k
            if X.shape[1] != len(gamma):
                raise ValueError(
                    f"gamma has {len(gamma)} entries (one per feature) but X has "
                    f"{X.shape[1]} features."
                )
            root = aa.from_numpy(np.sqrt(gamma), xp, aa.device_of(X), X.dtype)
            X, Z, gamma = X * root[None, :], Z * root[None, :], 1.0
        # −γ‖x − y‖² = 2γ xᵀy − γ‖x‖² − γ‖y‖² on centred rows, clipped at 0 against round-off
        X, Z, s = _centred(X, Z, xp)
        # −γ s² ‖x̃ − ỹ‖²: γ s² is formed in float64, since in float32 γ alone can be out of
        # range where the product is not (data at 1e-20 with γ = 1/(d·variance) = 1e39).
        # Only beyond the range (K is then 0 off duplicates) is E multiplied by s afterwards,
        # twice, so that 0 stays 0; the exponent of the other entries is then −inf.
        g, after = gamma * s * s, 1.0
        if not g <= float(xp.finfo(X.dtype).max):
            g, after = gamma, s
        E = X @ Z.T
        E *= 2.0 * g
        hx, hz = g * _sq_norms(X, xp), g * _sq_norms(Z, xp)
        E -= hx[:, None]
        E -= hz[None, :]
        top = float(xp.max(hx)) + float(xp.max(hz))
        eps = float(xp.finfo(E.dtype).eps)
        if eps * top * after * after > math.sqrt(eps):
            # the expansion's error in the exponent, a few ε·γ(‖x‖² + ‖y‖²), is then beyond
            # √ε (γ = 1e15 on data of spread 10, where K is I, gave a diagonal of 1e-28).
            # Below it the pass is not worth its cost on a GPU (half a block's time), unlike
            # on numpy, which refines from an error of ~50ε.
            E = _refine_near_pairs(E, X, Z, -g, 64 * eps * top, xp)
        if after != 1.0:
            with np.errstate(over="ignore"):
                E *= after
                E *= after
        return aa.exp_nonpositive(E, xp)
    if isinstance(kernel, Laplacian):
        # ℓ₁ distances one feature at a time: two n × m arrays instead of an n × m × d one
        D = xp.zeros((X.shape[0], Z.shape[0]), dtype=X.dtype, device=aa.device_of(X))
        for k in range(X.shape[1]):
            D += xp.abs(X[:, k : k + 1] - Z[:, k][None, :])
        return xp.exp(-kernel.gamma * D)
    if isinstance(kernel, Matern):
        # near 0, K = 1 − (3/2) r² (ν = 3/2) or 1 − (5/6) r² (ν = 5/2), r = ‖x − y‖/ℓ
        curvature = {0.5: None, 1.5: 1.5, 2.5: 5.0 / 6.0}[kernel.nu]
        if curvature is not None:  # (ℓ² may underflow; the quotient then is inf)
            curvature = curvature / kernel.length_scale / kernel.length_scale
        D, scale = _squared_distances(X, Z, xp, curvature=curvature)
        with np.errstate(over="ignore"):
            r = xp.sqrt(D) / kernel.length_scale * scale
        if kernel.nu == 0.5:
            return xp.exp(-r)
        # beyond 1e4 the entry is 0 in any float; unclipped, poly · exp(−s) is inf · 0 = NaN
        s = xp.clip(math.sqrt(3.0 if kernel.nu == 1.5 else 5.0) * r, max=1e4)
        poly = 1.0 + s if kernel.nu == 1.5 else 1.0 + s + s * s / 3.0
        return poly * xp.exp(-s)
    if isinstance(kernel, Polynomial):
        return (kernel.gamma * (X @ Z.T) + kernel.coef0) ** kernel.degree
    if isinstance(kernel, Linear):
        if kernel.A is None:
            return X @ Z.T
        A = aa.from_numpy(kernel.A, xp, aa.device_of(X), X.dtype)
        return (X @ A) @ Z.T
    if isinstance(kernel, Cosine):

        def normalize(A):
            # each row divided by its largest entry first: ‖x‖² beyond 1e154 overflowed, and
            # the row became 0
            big = xp.max(xp.abs(A), axis=1)
            A = A / xp.where(big == 0, 1.0, big)[:, None]
            norms = xp.sqrt(_sq_norms(A, xp))
            return A / xp.where(norms == 0, 1.0, norms)[:, None]

        return normalize(X) @ normalize(Z).T
    if isinstance(kernel, Scaled):
        return kernel.c * _gram_block(kernel.k1, X, Y, xp)
    if isinstance(kernel, Sum):
        return _gram_block(kernel.k1, X, Y, xp) + _gram_block(kernel.k2, X, Y, xp)
    if isinstance(kernel, Product):
        return _gram_block(kernel.k1, X, Y, xp) * _gram_block(kernel.k2, X, Y, xp)
    if isinstance(kernel, Kernel):
        raise TypeError(
            f"kernel {kernel!r} has no array-API form; use it with numpy inputs, or an RBF, "
            "Laplacian, Matérn, polynomial, linear or cosine kernel (or sums, products and "
            "multiples of them) on other devices."
        )
    raise TypeError(f"kernel must be a kernelcourse.kernels.Kernel, got {type(kernel).__name__}.")


def _finite_gram(kernel, X, xp, name):
    """K(X, X) by :func:`_gram_block`, with the numpy path's ValueError naming the kernel
    where it overflows (a polynomial or linear kernel of large inputs): a block of NaN or
    infinity failed later, in an eigensolver or a factorization that named nothing."""
    with np.errstate(over="ignore", invalid="ignore"):  # the error below says what happened
        K = _gram_block(kernel, X, None, xp)
    return _refuse_overflow(K, kernel, X, None, xp, name)


def _refuse_overflow(out, kernel, X, Y, xp, name="X", y_name="Y"):
    """``out`` (K(X, Y) or a product with it), or the numpy path's ValueError naming the
    kernel and its inputs where ``out`` holds NaN or infinity: finite inputs give that only
    through overflow, and predictions of NaN came back silently."""
    if not all_finite(out, xp):
        Y = None if Y is None else aa.to_numpy(Y)
        raise _overflow_error(kernel, "Gram matrix", aa.to_numpy(X), Y, name, y_name)
    return out


# -- random Fourier features -----------------------------------------------------------------------
def fourier_transform(est, X, xp):
    r""":meth:`RandomFourierFeatures.transform` on X of any array library:
    :math:`\text{scale}\cdot\cos(X\Omega^T + b)` in the compute dtype (xp's cosine)."""
    device = aa.device_of(X)
    if est.dtype is None:
        dtype = X.dtype if X.dtype == xp.float32 else xp.float64
    else:
        dtype = aa.requested_float(xp, device, est.dtype)
    X = est._in_compute_dtype(X, dtype, xp)  # the numpy path's cast and its error
    W = est._frequencies_in(dtype, xp)  # and the numpy path's error

    def features(offset, scale, check=False):
        Z = X @ W
        Z += xp.astype(offset, dtype)[None, :]
        if check:
            _warn_lost_phase(Z, xp)
        Z = xp.cos(Z)
        Z *= xp.astype(scale, dtype)[None, :]
        return Z

    # the numpy path's scale and its error for dtype: √(2c/D) as √(2/D)·√c, since 2c
    # overflowed for c near the largest float (NaN features); computed on the host (D numbers)
    scale = est._feature_scale(np.float32 if dtype == xp.float32 else np.float64)
    scale = aa.from_numpy(scale, xp, device)
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is refused below
        if est.map == "complex":
            # (the sine's arguments are the cosine's plus π/2: one check covers both)
            re = features(est.offset_, scale, check=True)
            im = features(est.offset_ + math.pi / 2, scale)
            ctype = xp.complex64 if dtype == xp.float32 else xp.complex128
            i = xp.asarray(1j, dtype=ctype, device=device)
            out = xp.astype(re, ctype) + i * xp.astype(im, ctype)
        else:
            out = features(est.offset_, scale, check=True)
    check_cosine_arguments(out, xp)  # as on the numpy path: NaN features came back silently
    return out


def _warn_lost_phase(t, xp):
    """The numpy path's RuntimeWarning (:func:`~kernelcourse._validation.warn_if_phase_lost`)
    where the cosine's arguments ``t`` are so large that neighbouring floats are more than π
    apart: the features are then rounding noise, and the device path said nothing. Infinite
    arguments are left to the error that follows."""
    if math.prod(t.shape) == 0:
        return
    warn_if_phase_lost(float(xp.max(xp.abs(t))), t.dtype)


# -- Nyström features ------------------------------------------------------------------------------
def rank_deficiency_message(m, info):
    """The warning for a numerically rank-deficient K̂, shared by the numpy and device paths;
    ``info`` is what :func:`nystroem_map` returns."""
    return (
        f"K̂ ({m}×{m}, the kernel matrix of the landmarks) is numerically "
        f"rank-deficient: condition number λ_max/|λ_min| = {info['cond']:.3g}; "
        f"{m - info['n_keep']} eigenvalues <= {info['tol']:.3g} (m·ε·λ_max) were "
        f"dropped and the pseudo-inverse has rank {info['n_keep']}. Duplicate landmarks "
        "or a fast-decaying spectrum cause this; fewer components would lose nothing."
    )


def nystroem_map(K_hat, rank, eps, xp):
    r"""The Nyström map of the landmarks' kernel matrix K̂ (m × m, symmetric, in the dtype to
    compute in), on numpy or any array library: ``(eigenvalues, A, info)`` with the kept
    eigenvalues in decreasing order, the r × m map A with :math:`A^T A = \hat K_r^+` and the
    diagnostics of the discarded part. Shared by the numpy and device paths of
    :class:`~kernelcourse.features.Nystroem`, so that both give the same features.

    K̂ is eigen-decomposed; eigenvalues at or below :math:`m\,\varepsilon\,\lambda_{\max}`
    (numpy's rule for pseudo-inverses) are dropped, and with ``rank`` only the largest
    ``rank`` are kept: :math:`\hat D_r^{-1/2}\hat V_r^T` is a map of the pseudo-inverse.
    Any map QM with Q an orthogonal r × r matrix gives the same :math:`\tilde K`, and A is
    the one whose last r columns are lower triangular with a positive diagonal (from the QR
    factorization of that map with its columns reversed, :math:`MJ = QR`:
    :math:`A = J R J`). It does not depend on the eigenvectors' signs or on the basis chosen
    within a repeated eigenvalue. When K̂ has full rank, A is :math:`L^{-1}` with
    :math:`\hat K = LL^T` (the lower triangular factor of :math:`\hat K^{-1} = A^TA` with a
    positive diagonal is unique), so that the features of the landmarks are L itself, the
    coordinates of their feature vectors after Gram–Schmidt in the landmarks' order, and a
    block of features costs a triangular product, half the operations of a general one.

    K̂ must be a finite non-empty square matrix, symmetric to round-off, ``rank`` None or an
    integer >= 1 and ``eps`` a finite number >= 0; otherwise a ValueError or TypeError names
    the argument. ``xp`` None means numpy.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelcourse.devices import nystroem_map
    >>> from kernelcourse.kernels import RBF
    >>> K_hat = RBF(gamma=0.5)(np.random.default_rng(0).normal(size=(5, 2)))
    >>> evals, A, info = nystroem_map(K_hat, None, np.finfo(float).eps, np)
    >>> L = np.linalg.cholesky(K_hat)
    >>> print(np.all(np.triu(A, 1) == 0), np.allclose(A @ L, np.eye(5)))
    True True
    """
    return _nystroem_map(K_hat, rank, eps, check_namespace(xp, "xp"), symmetric=None)


def _nystroem_map(K_hat, rank, eps, xp, *, symmetric):
    """:func:`nystroem_map`; ``symmetric=None`` checks that K̂ is symmetric beyond round-off
    (its symmetric part was factored silently: [[1, 0.9], [0, 1]] as [[1, 0.45], [0.45,
    1]]), True skips that check for the kernel matrix the estimators compute."""
    if not hasattr(K_hat, "shape"):  # a nested list
        K_hat = as_float_matrix(K_hat, "K_hat")
    shape = tuple(K_hat.shape)
    if len(shape) != 2 or shape[0] != shape[1] or shape[0] == 0:
        raise ValueError(f"K_hat must be a non-empty square matrix, got shape {shape}.")
    # NaN or infinity: numpy's eigh failed with LinAlgError, other libraries returned NaN
    if isinstance(K_hat, np.ndarray):
        K_hat = as_float_matrix(K_hat, "K_hat")  # numeric, real and finite
    elif not all_finite(K_hat, xp):
        raise ValueError(
            "K_hat contains NaN or infinity; the landmarks' kernel matrix must be finite."
        )
    if rank is not None:
        rank = check_count(rank, "rank")
    eps = check_nonnegative(eps, "eps")
    if symmetric is None:
        check_symmetric(K_hat, "K_hat", xp)
    m = shape[0]
    K_hat = 0.5 * (K_hat + K_hat.T)  # the symmetric matrix the kernel promises
    evals, evecs = xp.linalg.eigh(K_hat)
    evals, evecs = xp.flip(evals), xp.flip(evecs, axis=1)
    lam_max = max(float(evals[0]), 0.0)
    # λ < 0 is round-off of a PSD matrix, so it is dropped as well (its square root is NaN).
    tol = m * eps * lam_max
    n_keep = int(xp.sum(xp.astype(evals > tol, xp.int64)))
    r = n_keep if rank is None else min(rank, n_keep)
    lam_min = float(evals[-1])
    cond = lam_max / abs(lam_min) if lam_min != 0 else math.inf
    evals_r = evals[:r]
    M = (evecs[:, :r] / xp.sqrt(evals_r)[None, :]).T
    if isinstance(M, np.ndarray):
        R = np.linalg.qr(M[:, ::-1], mode="r")  # R alone: a third of the cost of Q and R
    else:
        R = xp.linalg.qr(xp.flip(M, axis=1))[1]
    signs = xp.sign(xp.linalg.diagonal(R))
    R = R * xp.where(signs == 0, 1.0, signs)[:, None]
    A = xp.flip(R, axis=(0, 1))
    return evals_r, A, {"n_keep": n_keep, "tol": tol, "cond": cond, "m": m}


def host_copy(X, *, whole):
    """A host numpy copy of X, or of its first row only (``whole=False``) for fits whose work
    is drawing random numbers and which need only the number of features."""
    return aa.to_numpy(X if whole else X[:1, :])


def to_device(values, xp, device):
    """The numpy arrays among ``values`` (a dict of fitted attributes) as arrays of ``xp`` on
    ``device``, floating ones in float64 where the device supports it; a new dict."""
    dtype = aa.max_float(xp, device)
    out = {}
    for name, value in values.items():
        if isinstance(value, np.ndarray):
            value = aa.from_numpy(value, xp, device, dtype if value.dtype.kind == "f" else None)
        out[name] = value
    return out


def nystroem_fit(est, X, xp, rng, kernel, warning):
    """:meth:`Nystroem.fit` with uniform landmarks on X of any array library: the landmarks
    are drawn on the host as on the numpy path, K̂ is formed and eigen-decomposed on X's
    device. ``warning`` is the class of the rank-deficiency warning. Returns the fitted
    attributes as a dict (``est`` is only read)."""
    n = X.shape[0]
    m = est.n_components
    if m > n:
        warnings.warn(
            f"n_components={m} is larger than the number of samples N={n}; using m = N "
            "(the exact kernel, at the full O(N³) cost).",
            UserWarning,
            stacklevel=find_stack_level(),
        )
        m = n
    device = aa.device_of(X)
    indices = rng.permutation(n)[:m]
    basis = xp.take(X, aa.from_numpy(indices, xp, device), axis=0)
    pdtype = aa.max_float(xp, device)
    eps = float(xp.finfo(X.dtype).eps)
    K_hat = xp.astype(_finite_gram(kernel, basis, xp, "X"), pdtype)
    evals, normalization, info = _nystroem_map(K_hat, est.rank, eps, xp, symmetric=True)
    if info["n_keep"] < m:
        warnings.warn(rank_deficiency_message(m, info), warning, stacklevel=find_stack_level())
    return {
        "kernel_": kernel,
        "components_": basis,
        "component_indices_": aa.from_numpy(indices, xp, device),
        "eigenvalues_": evals,
        "normalization_": xp.astype(normalization, X.dtype),
        "rank_": evals.shape[0],
        "_n_features_out": evals.shape[0],
    }


def nystroem_transform(est, X, xp):
    r""":meth:`Nystroem.transform`: :math:`K_b A^T` (A the map of :func:`nystroem_map`), a
    block of rows at a time so that the N × m kernel block is never whole."""
    device = aa.device_of(X)
    C = xp.astype(est.components_, X.dtype)
    W_T = xp.astype(est.normalization_, X.dtype).T
    m, r = C.shape[0], W_T.shape[1]
    itemsize = 4 if X.dtype == xp.float32 else 8
    # the block, its exponential and distance temporaries: about three m-wide rows
    rows = aa.block_rows(
        3 * m * itemsize,
        None,
        xp=xp,
        device=device,
        resident=X.shape[0] * r * itemsize,
        default_mb=8,
        what="K_b",
    )
    rows = max(rows, 64)
    out = xp.empty((X.shape[0], r), dtype=X.dtype, device=device)
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is refused below
        for start in range(0, X.shape[0], rows):
            stop = min(start + rows, X.shape[0])
            out[start:stop, :] = _gram_block(est.kernel_, X[start:stop, :], C, xp) @ W_T
    return _refuse_overflow(out, est.kernel_, X, C, xp, y_name="the landmarks")


# -- dual kernel ridge regression ------------------------------------------------------------------
def kernel_ridge_fit(kernel, X, Y, lam, xp, *, root=None):
    r""":math:`\alpha = (\mathbf K + \lambda \mathbf I)^{-1} y` by Cholesky on X's device.

    The n × n Gram matrix must fit in the device's free memory; if it does not, a ValueError
    says so before it is formed. When K + λI is not numerically positive definite the fit
    warns with its extreme eigenvalues and uses the pseudo-inverse (the least-squares
    solution), as the numpy path does.

    With ``root`` = :math:`S^{1/2}`, the square roots of the sample weights on X's device in
    K's dtype, and ``Y`` already :math:`S^{1/2} y`, it solves the numpy path's weighted system
    :math:`\alpha = S^{1/2}(S^{1/2} K S^{1/2} + \lambda I)^{-1} S^{1/2} y`, scaling K in
    place.
    """
    n = X.shape[0]
    device = aa.device_of(X)
    itemsize = 4 if X.dtype == xp.float32 else 8
    free = aa.free_memory(xp, device)
    if free is not None and 2 * n * n * itemsize > free:
        raise ValueError(
            f"the {n} × {n} Gram matrix and its factor ({2 * n * n * itemsize / 2**30:.1f} GB) "
            f"do not fit in the {free / 2**30:.1f} GB free on {device}; use dtype='float32', "
            "fewer samples, or NystroemKRR."
        )
    K = _finite_gram(kernel, X, xp, "X")
    if root is not None:
        K *= root[:, None]
        K *= root[None, :]
    K = aa.add_to_diagonal(K, lam, xp)
    from scipy.linalg import LinAlgWarning

    L = aa._cholesky_lower(K, xp)
    if L is not None:
        alpha = aa.solve_triangular(
            L, aa.solve_triangular(L, Y, xp, upper=False), xp, upper=False, transpose=True
        )
        _warn_if_inaccurate(L, K, alpha, Y, xp)
        return _unweight(alpha, root)
    evals = xp.linalg.eigvalsh(xp.astype(K, aa.max_float(xp, device)))
    top, low = float(xp.max(xp.abs(evals))), float(evals[0])
    cond = math.inf if low <= 0 else top / low
    warnings.warn(
        f"K + λI is not numerically positive definite (smallest eigenvalue {low:.3g}, largest "
        f"{top:.3g}, condition number {cond:.3g}); Cholesky failed, so the least-squares "
        "solution is used. Increase lam or check the kernel.",
        LinAlgWarning,
        stacklevel=find_stack_level(),
    )
    return _unweight(xp.linalg.pinv(K) @ Y, root)


def _unweight(alpha, root):
    """S^½ α: the coefficients of the weighted system back on the training points."""
    if root is None:
        return alpha
    return alpha * (root if alpha.ndim == 1 else root[:, None])


def _warn_if_inaccurate(L, A, x, b, xp):
    r"""The numpy path's LinAlgWarning (``ridge._warn_if_inaccurate``) for the Cholesky solve
    :math:`Ax = b` with :math:`A = LL^T` = K + λI: a condition number beyond 1/ε by the
    pivots, or a relative residual :math:`\max_j \|Ax_j - b_j\| / \|b_j\|` above 1e-6
    (float64) or 1e-3 (float32). The residual costs one n × n product, against the n³/3 of
    the factorization."""
    from scipy.linalg import LinAlgWarning

    eps = float(xp.finfo(L.dtype).eps)
    limit = 1e-6 if L.dtype == xp.float64 else 1e-3
    pivots = xp.abs(xp.linalg.diagonal(L))
    low = float(xp.min(pivots))
    cond_low = (float(xp.max(pivots)) / low) ** 2 if low > 0 else math.inf
    # both in units of b's largest entry in each column, as the numpy path's norms: y of
    # 1e200 overflowed ‖b‖², and the residual inf/inf = NaN warned of an accurate solve
    top = xp.max(xp.abs(b), axis=0)
    unit = xp.where(top > 0, top, 1.0)
    bn = xp.linalg.vector_norm(b / unit, axis=0)
    rn = xp.linalg.vector_norm((A @ x - b) / unit, axis=0)
    residual = float(xp.max(rn / xp.where(bn > 0, bn, 1.0)))
    if cond_low * eps > 1 or not residual <= limit:
        warnings.warn(
            f"K + λI is ill-conditioned: condition number >= {cond_low:.3g} (from the "
            f"Cholesky pivots) and relative residual ‖(K + λI)x − b‖/‖b‖ = {residual:.3g}; "
            "the solution may be inaccurate. Increase lam (or, for collinear columns, remove "
            "them).",
            LinAlgWarning,
            stacklevel=find_stack_level(),
        )


def kernel_ridge_predict(kernel, X, X_fit, alpha, xp):
    r""":math:`\hat f(x) = \sum_i \alpha_i K(x_i, x)` in float64 where the device supports it."""
    pdtype = aa.max_float(xp, aa.device_of(X))
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is refused below
        out = _gram_block(kernel, xp.astype(X, pdtype), xp.astype(X_fit, pdtype), xp) @ (
            xp.astype(alpha, pdtype)
        )
    return _refuse_overflow(out, kernel, X, X_fit, xp, y_name="the training points")


# -- FALKON ----------------------------------------------------------------------------------------
def _falkon_memory(M, itemsize, pitem):
    """Bytes set aside for the preconditioner: at its peak it holds three M × M matrices in
    its dtype (K_MM, which T Tᵀ then overwrites, T and A), and one more of the blocks' dtype
    is left for what the allocator still caches of the blocks that formed the right-hand
    side before it."""
    return M * M * (itemsize + 3 * pitem)


def nystroem_krr_fit(
    kernel,
    X,
    Y,
    xp,
    center_indices,
    *,
    lam,
    dtype,
    sample_weight=None,
    block_size=None,
    precompute=False,
    preconditioner="falkon",
    max_iter=20,
    tol=1e-7,
    callback=None,
    progress=None,
):
    r"""The data part of :meth:`kernelcourse.scale.NystroemKRR.fit` on X of any array library.

    Centres, y mean, and FALKON (:func:`kernelcourse.solvers.falkon_solve`) with
    :math:`K_{nM}` blocks computed and consumed on X's device.

    Y is an (n, k) array of the preconditioner dtype on X's device; ``center_indices`` are
    rows of X (distinct, chosen on the host as on the numpy path). ``sample_weight`` (a
    positive numpy vector, or None) gives the weighted system
    :math:`(K_{nM}^T S K_{nM} + \lambda (\textstyle\sum s) K_{MM})\alpha = K_{nM}^T S
    (y - \bar y_s)` of the numpy path. ``progress`` (a ``kernelcourse._progress.Progress``
    or None) is asked for a line between blocks.

    Returns
    -------
    dict
        ``centers``, ``y_mean``, ``alpha`` (arrays on X's device) and ``result`` (the
        ``FalkonResult`` of :func:`~kernelcourse.solvers.falkon_solve`); the estimator keeps
        what it needs.

    See Also
    --------
    kernelcourse.scale.NystroemKRR
        The estimator that calls it for non-numpy inputs.
    kernelcourse.solvers.falkon_solve
        The preconditioned solve it runs.

    References
    ----------
    A. Rudi, L. Carratino, L. Rosasco. FALKON: An Optimal Large Scale Kernel Method. NeurIPS 2017.
    G. Meanti, L. Carratino, L. Rosasco, A. Rudi. Kernel methods through the roof: handling
    billions of points efficiently. NeurIPS 2020. The algorithm:
    :doc:`chapter 11 </book/11_scaling_up>`.

    Examples
    --------
    >>> import array_api_strict as xp
    >>> import numpy as np
    >>> from kernelcourse.devices import nystroem_krr_fit
    >>> from kernelcourse.kernels import RBF
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-3, 3, size=(200, 1))
    >>> Y = np.sin(X)
    >>> out = nystroem_krr_fit(RBF(gamma=1.0), xp.asarray(X), xp.asarray(Y), xp,
    ...                        np.arange(0, 200, 5), lam=1e-3, dtype="float64")
    >>> print(out["result"].cg.status, out["alpha"].shape, type(out["alpha"]).__name__)
    converged (40, 1) Array
    """
    device = aa.device_of(X)
    pdtype = aa.max_float(xp, device)
    dtype = aa.requested_float(xp, device, dtype)
    X = cast_to(X, dtype, "X", xp=xp)
    n = X.shape[0]
    M = len(center_indices)
    itemsize = 4 if dtype == xp.float32 else 8
    pitem = 4 if pdtype == xp.float32 else 8
    centers = xp.take(X, aa.from_numpy(center_indices, xp, device), axis=0)
    if sample_weight is None:
        sw = None
        n_eff = n
        y_mean = xp.mean(Y, axis=0)
        Yc = Y - y_mean[None, :]
    else:
        sw = aa.from_numpy(np.asarray(sample_weight, dtype=np.float64), xp, device, pdtype)
        n_eff = float(np.sum(sample_weight))
        y_mean = xp.sum(sw[:, None] * Y, axis=0) / n_eff
        Yc = (Y - y_mean[None, :]) * sw[:, None]
    # precompute keeps the factor R and, while it is updated, [R; K_b] and its Q
    resident = _falkon_memory(M, itemsize, pitem) + (3 * M * M * pitem if precompute else 0)
    # a block of K_nM, its distance temporaries and its copy in the products' dtype (and its
    # rows in [R; K_b] and Q)
    row_bytes = M * (2 * itemsize + (pitem if pitem != itemsize else 0))
    row_bytes += 2 * M * pitem if precompute else 0
    rows = aa.block_rows(
        row_bytes, block_size, xp=xp, device=device, resident=resident, what="K_nM"
    )

    def blocks():
        for start in range(0, n, rows):
            if progress and progress.due():  # a pass over a large X can itself take minutes
                progress.report(f"pass over the data: {start} of {n} rows")
            stop = min(start + rows, n)
            Kb = _gram_block(kernel, X[start:stop, :], centers, xp)
            yield start, stop, Kb if Kb.dtype == pdtype else xp.astype(Kb, pdtype)

    def products(V):  # K_nMᵀ S K_nM V
        # float32 blocks, products in the preconditioner's dtype: V rounded to float32 would
        # put an error of ε₃₂‖K‖‖V‖ into every product, which 1/λ magnifies (as on the host)
        out = xp.zeros(V.shape, dtype=pdtype, device=device)
        for start, stop, Kp in blocks():
            KV = Kp @ V
            if sw is not None:
                KV = KV * sw[start:stop, None]
            out += Kp.T @ KV
        return out

    rhs = xp.zeros((M, Y.shape[1]), dtype=pdtype, device=device)
    factor = None  # R with RᵀR = K_nMᵀ S K_nM, when precompute (solvers.gram_factor_update)
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is refused below
        for start, stop, Kp in blocks():
            rhs += Kp.T @ Yc[start:stop, :]
            if precompute:
                Kw = Kp if sw is None else Kp * xp.sqrt(sw[start:stop, None])
                factor = solvers.gram_factor_update(factor, Kw, xp=xp)
    if not all_finite(rhs, xp):  # as on the host: CG on NaN would say nothing useful
        raise ValueError(
            f"the kernel {kernel!r} gives NaN or infinity between X and the centres "
            "(X too large in magnitude for this kernel?); rescale X."
        )
    eps = float(xp.finfo(dtype).eps)
    # K_MM in the preconditioner's dtype (M² entries against the blocks' nM), jittered by
    # M·ε·max K_ii with ε of the blocks' dtype, as on the host (scale.NystroemKRR)
    precond = solvers.FalkonPreconditioner(
        _finite_gram(kernel, xp.astype(centers, pdtype), xp, "the centres"),
        lam,
        n_eff,
        xp=xp,
        kind=preconditioner,
        eps=eps,
    )
    result = solvers.falkon_solve(
        precond,
        products,
        rhs,
        lam,
        n_eff,
        xp=xp,
        max_iter=max_iter,
        tol=tol,
        callback=callback,
        gram_factor=factor,
        eps=eps,
    )
    return {"centers": centers, "y_mean": y_mean, "alpha": result.alpha, "result": result}


def nystroem_krr_decision(est, X, xp):
    r""":math:`f(x) = \sum_j \alpha_j K(x, \tilde x_j) + \bar y`, a block of rows at a time, in
    the coefficients' dtype; the blocks in the wider of X's and the centres' dtypes."""
    device = aa.device_of(X)
    # float64 X is not rounded to float32 centres' dtype: rows of 1e150 became infinity (an
    # error of overflow where the numpy path predicts ȳ), and rows far from the origin lost
    # their digits
    dtype = xp.result_type(X.dtype, est.centers_.dtype)
    X = xp.astype(X, dtype)
    centers = xp.astype(est.centers_, dtype)
    alpha = est.dual_coef_
    M = est.centers_.shape[0]
    itemsize = 4 if dtype == xp.float32 else 8
    rows = aa.block_rows(M * (2 * itemsize + 8), est.block_size, xp=xp, device=device, what="K_nM")
    out = xp.empty((X.shape[0], alpha.shape[1]), dtype=alpha.dtype, device=device)
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is refused below
        for start in range(0, X.shape[0], rows):
            stop = min(start + rows, X.shape[0])
            Kb = _gram_block(est.kernel_, X[start:stop, :], centers, xp)
            out[start:stop, :] = xp.astype(Kb, alpha.dtype) @ alpha + est.y_mean_[None, :]
    return _refuse_overflow(out, est.kernel_, X, centers, xp, y_name="the centres")
