r"""The estimators on other devices: their computations for any array-API library.

With ``sklearn.set_config(array_api_dispatch=True)``, :class:`~kernelcourse.features.
RandomFourierFeatures`, :class:`~kernelcourse.features.Nystroem`,
:class:`~kernelcourse.ridge.KernelRidge` and :class:`~kernelcourse.scale.NystroemKRR` /
:class:`~kernelcourse.scale.NystroemKRRClassifier` hand PyTorch (CPU or CUDA), CuPy or
array-api-strict inputs to the functions here, which compute with the input's own library on
its own device and return arrays of that library on that device. numpy inputs never come here:
the estimators keep their numpy code, with its compiled cosine and threaded blocks.

The formulas are the lectures', written once with the standard's operations; the few that the
standard lacks (Cholesky with a jitter, triangular solves, free device memory) come from the
shim :mod:`kernelcourse._array_api`. Random draws (Ω, b, centres, landmarks) are made on the
host with the estimator's ``random_state`` exactly as on the numpy path, so both paths give the
same model up to round-off.

Precision follows FALKON (Meanti et al. 2020): kernel blocks in the input's dtype (float32 is
the fast choice on a GPU), the preconditioner, the conjugate-gradient vectors and the
coefficients in float64 where the device supports it.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from . import _array_api as aa
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
)

__all__ = ["gram_block", "conjugate_gradient", "falkon_solve"]


# -- kernel blocks ---------------------------------------------------------------------------------
def _sq_norms(X, xp):
    return xp.sum(X * X, axis=1)


def _centred(X, Z, xp):
    # ‖x − y‖ is shift-invariant; centring on Z's mean keeps ‖x‖² + ‖y‖² − 2xᵀy from
    # cancelling on data far from the origin (kernels.centre_and_scale, on numpy).
    c = xp.mean(Z, axis=0)
    return X - c, Z - c


def _squared_distances(X, Y, xp):
    X, Y = _centred(X, Y, xp)
    D = X @ Y.T
    D *= -2.0
    D += _sq_norms(X, xp)[:, None]
    D += _sq_norms(Y, xp)[None, :]
    return xp.clip(D, min=0.0)


def gram_block(kernel, X, Y=None, *, xp=None):
    r"""The Gram block :math:`[K(x_i, y_j)]` with the array library of X, in X's dtype.

    The same kernels as :mod:`kernelcourse.kernels` (RBF, Laplacian, Matérn, polynomial,
    linear, cosine, and their sums, products and positive multiples), on the device of X.

    Raises
    ------
    TypeError
        For a kernel without an array-API form (``exp(K)``, weighted kernels).
    """
    xp = xp or aa.namespace_of(X) or np
    Z = X if Y is None else Y
    if isinstance(kernel, RBF):
        # −γ‖x − y‖² = 2γ xᵀy − γ‖x‖² − γ‖y‖² on centred rows, clipped at 0 against round-off
        X, Z = _centred(X, Z, xp)
        E = X @ Z.T
        E *= 2.0 * kernel.gamma
        E -= kernel.gamma * _sq_norms(X, xp)[:, None]
        E -= kernel.gamma * _sq_norms(Z, xp)[None, :]
        return aa.exp_nonpositive(E, xp)
    if isinstance(kernel, Laplacian):
        # ℓ₁ distances one feature at a time: two n × m arrays instead of an n × m × d one
        D = xp.zeros((X.shape[0], Z.shape[0]), dtype=X.dtype, device=aa.device_of(X))
        for k in range(X.shape[1]):
            D += xp.abs(X[:, k : k + 1] - Z[:, k][None, :])
        return xp.exp(-kernel.gamma * D)
    if isinstance(kernel, Matern):
        r = xp.sqrt(_squared_distances(X, Z, xp)) / kernel.length_scale
        if kernel.nu == 0.5:
            return xp.exp(-r)
        s = math.sqrt(3.0 if kernel.nu == 1.5 else 5.0) * r
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
            norms = xp.sqrt(_sq_norms(A, xp))
            return A / xp.where(norms == 0, 1.0, norms)[:, None]

        return normalize(X) @ normalize(Z).T
    if isinstance(kernel, Scaled):
        return kernel.c * gram_block(kernel.k1, X, Y, xp=xp)
    if isinstance(kernel, Sum):
        return gram_block(kernel.k1, X, Y, xp=xp) + gram_block(kernel.k2, X, Y, xp=xp)
    if isinstance(kernel, Product):
        return gram_block(kernel.k1, X, Y, xp=xp) * gram_block(kernel.k2, X, Y, xp=xp)
    if isinstance(kernel, Kernel):
        raise TypeError(
            f"kernel {kernel!r} has no array-API form; use it with numpy inputs, or an RBF, "
            "Laplacian, Matérn, polynomial, linear or cosine kernel (or sums, products and "
            "multiples of them) on other devices."
        )
    raise TypeError(f"kernel must be a kernelcourse.kernels.Kernel, got {type(kernel).__name__}.")


def _xp_float(xp, name_or_dtype):
    return aa.float_dtype(xp, np.dtype(name_or_dtype).name)


# -- random Fourier features -----------------------------------------------------------------------
def move_fitted(est, names, xp, device, dtype):
    """Replace the numpy attributes ``names`` of ``est`` by arrays of ``xp`` on ``device``."""
    for name in names:
        value = getattr(est, name)
        if isinstance(value, np.ndarray):
            kind = value.dtype.kind
            setattr(est, name, aa.from_numpy(value, xp, device, dtype if kind == "f" else None))


def fourier_transform(est, X, xp):
    r""":meth:`RandomFourierFeatures.transform` on X of any array library:
    :math:`\text{scale}\cdot\cos(X\Omega^T + b)` in the compute dtype (xp's cosine)."""
    device = aa.device_of(X)
    if est.dtype is None:
        dtype = X.dtype if X.dtype == xp.float32 else xp.float64
    else:
        dtype = _xp_float(xp, est.dtype)
    X = xp.astype(X, dtype)
    W = xp.astype(est.omega_, dtype).T
    D = est.n_components

    def features(offset, scale):
        Z = X @ W
        Z += xp.astype(offset, dtype)[None, :]
        Z = xp.cos(Z)
        Z *= xp.astype(scale, dtype)[None, :]
        return Z

    weights = est.weights_
    if est.map == "complex":
        scale = math.sqrt(est._mass / D) * weights
        re, im = features(est.offset_, scale), features(est.offset_ + math.pi / 2, scale)
        ctype = xp.complex64 if dtype == xp.float32 else xp.complex128
        i = xp.asarray(1j, dtype=ctype, device=device)
        return xp.astype(re, ctype) + i * xp.astype(im, ctype)
    return features(est.offset_, math.sqrt(2.0 * est._mass / D) * weights)


# -- Nyström features ------------------------------------------------------------------------------
def rank_deficiency_message(m, info):
    """The warning for a numerically rank-deficient K̂, shared by the numpy and device paths;
    ``info`` is what ``_pinv_sqrt`` returns."""
    return (
        f"K̂ ({m}×{m}, the kernel matrix of the landmarks) is numerically "
        f"rank-deficient: condition number λ_max/|λ_min| = {info['cond']:.3g}; "
        f"{m - info['n_keep']} eigenvalues <= {info['tol']:.3g} (m·ε·λ_max) were "
        f"dropped and the pseudo-inverse has rank {info['n_keep']}. Duplicate landmarks "
        "or a fast-decaying spectrum cause this; fewer components would lose nothing."
    )


def _pinv_sqrt(K_hat, rank, eps, xp):
    """Array-API twin of :func:`kernelcourse.features.nystroem._pinv_sqrt`: eigen-decompose K̂
    (in float64 where supported) and return the kept eigenvalues, D_r^{-1/2} V_rᵀ and the
    diagnostics."""
    m = K_hat.shape[0]
    K_hat = 0.5 * (K_hat + K_hat.T)
    evals, evecs = xp.linalg.eigh(K_hat)
    evals, evecs = xp.flip(evals), xp.flip(evecs, axis=1)
    lam_max = max(float(evals[0]), 0.0)
    tol = m * eps * lam_max
    n_keep = int(xp.sum(xp.astype(evals > tol, xp.int64)))
    r = n_keep if rank is None else min(rank, n_keep)
    lam_min = float(evals[-1])
    cond = lam_max / abs(lam_min) if lam_min != 0 else math.inf
    evals_r, evecs_r = evals[:r], evecs[:, :r]
    # each eigenvector's largest entry positive, as on the numpy path
    idx = xp.argmax(xp.abs(evecs_r), axis=0)
    signs = xp.sign(xp.take_along_axis(evecs_r, idx[None, :], axis=0))
    signs = xp.where(signs == 0, 1.0, signs)
    evecs_r = evecs_r * signs
    normalization = (evecs_r / xp.sqrt(evals_r)[None, :]).T
    return evals_r, normalization, {"n_keep": n_keep, "tol": tol, "cond": cond, "m": m}


def fit_on_host(est, X, xp, names, *, whole):
    """Fit ``est`` with its numpy code on a host copy of X, then move the fitted arrays
    ``names`` to X's library and device (float ones in float64 where supported).

    For fits whose work is drawing random numbers (Ω and b need only the number of features:
    ``whole=False`` copies one row) or that are cheap next to moving X (leverage scores).
    """
    from sklearn.utils.validation import validate_data

    X = validate_data(est, X, dtype=[xp.float64, xp.float32])
    device = aa.device_of(X)
    type(est).fit(est, aa.to_numpy(X if whole else X[:1, :]))
    move_fitted(est, names, xp, device, aa.max_float(xp, device))
    return est


def nystroem_fit(est, X, xp, rng, kernel, warning):
    """:meth:`Nystroem.fit` with uniform landmarks on X of any array library: the landmarks
    are drawn on the host as on the numpy path, K̂ is formed and eigen-decomposed on X's
    device. ``warning`` is the class of the rank-deficiency warning."""
    n = X.shape[0]
    m = est.n_components
    if m > n:
        warnings.warn(
            f"n_components={m} is larger than the number of samples N={n}; using m = N "
            "(the exact kernel, at the full O(N³) cost).",
            UserWarning,
            stacklevel=3,
        )
        m = n
    device = aa.device_of(X)
    indices = rng.permutation(n)[:m]
    basis = xp.take(X, aa.from_numpy(indices, xp, device), axis=0)
    pdtype = aa.max_float(xp, device)
    eps = float(xp.finfo(X.dtype).eps)
    K_hat = xp.astype(gram_block(kernel, basis, xp=xp), pdtype)
    evals, normalization, info = _pinv_sqrt(K_hat, est.rank, eps, xp)
    if info["n_keep"] < m:
        warnings.warn(rank_deficiency_message(m, info), warning, stacklevel=3)
    est.kernel_ = kernel
    est.components_ = basis
    est.component_indices_ = aa.from_numpy(indices, xp, device)
    est.eigenvalues_ = evals
    est.normalization_ = xp.astype(normalization, X.dtype)
    est.rank_ = evals.shape[0]
    est._n_features_out = est.rank_
    return est


def nystroem_transform(est, X, xp):
    r""":meth:`Nystroem.transform`: :math:`K_b \hat V_r \hat D_r^{-1/2}`, a block of rows at a
    time so that the N × m kernel block is never whole."""
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
    for start in range(0, X.shape[0], rows):
        stop = min(start + rows, X.shape[0])
        out[start:stop, :] = gram_block(est.kernel_, X[start:stop, :], C, xp=xp) @ W_T
    return out


# -- dual kernel ridge regression ------------------------------------------------------------------
def kernel_ridge_fit(kernel, X, Y, lam, xp):
    r""":math:`\alpha = (\mathbf K + \lambda \mathbf I)^{-1} y` by Cholesky on X's device.

    The n × n Gram matrix must fit in the device's free memory; if it does not, a ValueError
    says so before it is formed. When K + λI is not numerically positive definite the fit
    warns with its extreme eigenvalues and uses the pseudo-inverse (the least-squares
    solution), as the numpy path does.
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
    K = aa.add_to_diagonal(gram_block(kernel, X, xp=xp), lam, xp)
    from scipy.linalg import LinAlgWarning

    L = aa._cholesky_lower(K, xp)
    if L is not None:
        return aa.solve_triangular(
            L, aa.solve_triangular(L, Y, xp, upper=False), xp, upper=False, transpose=True
        )
    evals = xp.linalg.eigvalsh(xp.astype(K, aa.max_float(xp, device)))
    top, low = float(xp.max(xp.abs(evals))), float(evals[0])
    cond = math.inf if low <= 0 else top / low
    warnings.warn(
        f"K + λI is not numerically positive definite (smallest eigenvalue {low:.3g}, largest "
        f"{top:.3g}, condition number {cond:.3g}); Cholesky failed, so the least-squares "
        "solution is used. Increase lam or check the kernel.",
        LinAlgWarning,
        stacklevel=3,
    )
    return xp.linalg.pinv(K) @ Y


def kernel_ridge_predict(kernel, X, X_fit, alpha, xp):
    r""":math:`\hat f(x) = \sum_i \alpha_i K(x_i, x)` in float64 where the device supports it."""
    pdtype = aa.max_float(xp, aa.device_of(X))
    return gram_block(kernel, xp.astype(X, pdtype), xp.astype(X_fit, pdtype), xp=xp) @ (
        xp.astype(alpha, pdtype)
    )


# -- FALKON ----------------------------------------------------------------------------------------
def conjugate_gradient(matvec, B, xp, *, maxiter=20, tol=1e-7, callback=None):
    r"""Array-API twin of :func:`kernelcourse.scale.conjugate_gradient` for an (M, k) right-hand
    side B: one CG recursion per column, one ``matvec`` per iteration for all of them.

    Returns the solution and the list of relative residuals
    :math:`\max_j \|b_j - H x_j\| / \|b_j\|` (``history[0] = 1``).
    """
    X = xp.zeros_like(B)
    R = B
    P = R
    bnorm = xp.sqrt(xp.sum(B * B, axis=0))
    bnorm = xp.where(bnorm == 0, 1.0, bnorm)
    rs = xp.sum(R * R, axis=0)
    history = [float(xp.max(xp.sqrt(rs) / bnorm))]
    for it in range(1, maxiter + 1):
        if history[-1] <= tol:
            break
        HP = matvec(P)
        pHp = xp.sum(P * HP, axis=0)
        # a column that has converged exactly has p = 0; keep it where it is
        step = xp.where(pHp > 0, rs / xp.where(pHp > 0, pHp, 1.0), 0.0)
        X = X + step[None, :] * P
        R = R - step[None, :] * HP
        rs_new = xp.sum(R * R, axis=0)
        beta = xp.where(rs > 0, rs_new / xp.where(rs > 0, rs, 1.0), 0.0)
        P = R + beta[None, :] * P
        rs = rs_new
        history.append(float(xp.max(xp.sqrt(rs) / bnorm)))
        if callback is not None:
            callback(it, X, history[-1])
    return X, history


def falkon_solve(
    make_KMM,
    products,
    rhs,
    n,
    lam,
    xp,
    *,
    preconditioner="falkon",
    maxiter=20,
    tol=1e-7,
    callback=None,
    gram=None,
):
    r"""FALKON: solve :math:`(K_{nM}^T K_{nM} + \lambda n K_{MM})\alpha = K_{nM}^T y` by
    preconditioned conjugate gradient (Rudi, Carratino & Rosasco 2017, Alg. 1).

    :math:`T = \operatorname{chol}(K_{MM})`, :math:`A = \operatorname{chol}(TT^T/M + \lambda I)`,
    :math:`B = T^{-1}A^{-1}/\sqrt n`; CG runs on :math:`B^T H B \beta = B^T K_{nM}^T y` and
    :math:`\alpha = B\beta`. The product :math:`\lambda n K_{MM} v` is taken as
    :math:`\lambda n T^T(Tv)`, so K_MM itself need not be kept (its memory is reused).

    Parameters
    ----------
    make_KMM : callable
        ``make_KMM()`` returns :math:`K_{MM}` in the preconditioner dtype (float64 where
        supported). It is called here so that no caller holds the M × M array: with the
        FALKON preconditioner its memory is released once T is computed.
    products : callable
        ``products(V)`` = :math:`K_{nM}^T(K_{nM} V)`, one pass over the data; it receives and
        returns (M, k) arrays of KMM's dtype. Unused when ``gram`` is given.
    rhs : array (M, k)
        :math:`K_{nM}^T (y - \bar y)`.
    n : float
        The number of points, or the sum of the sample weights for a weighted fit.
    lam : float
    gram : array (M, M) or None
        :math:`K_{nM}^T K_{nM}` when it was accumulated in one pass (``precompute=True``).

    Returns
    -------
    alpha : array (M, k)
    history : list of float
    """
    KMM = make_KMM()
    M = KMM.shape[0]
    sqrt_n = math.sqrt(n)
    if preconditioner == "falkon":
        T, _ = aa.cholesky_upper(KMM, xp, "K_MM")
        del KMM
        TTt = T @ T.T
        TTt /= M
        A, _ = aa.cholesky_upper(aa.add_to_diagonal(TTt, lam, xp), xp, "T T^T / M + λI")
        del TTt

        def apply_B(U):  # B U = T⁻¹ A⁻¹ U / √n
            return aa.solve_triangular(T, aa.solve_triangular(A, U, xp), xp) / sqrt_n

        def apply_Bt(U):  # Bᵀ U = A⁻ᵀ T⁻ᵀ U / √n
            inner = aa.solve_triangular(T, U, xp, transpose=True)
            return aa.solve_triangular(A, inner, xp, transpose=True) / sqrt_n

        def apply_KMM(V):
            return T.T @ (T @ V)
    else:

        def apply_B(U):
            return U / sqrt_n

        apply_Bt = apply_B

        def apply_KMM(V):
            return KMM @ V

    if gram is not None:
        H = gram + (lam * n) * apply_KMM(xp.eye(M, dtype=gram.dtype, device=aa.device_of(gram)))
        BHB = apply_Bt(H @ apply_B(xp.eye(M, dtype=H.dtype, device=aa.device_of(H))))
        BHB = 0.5 * (BHB + BHB.T)

        def matvec(U):
            return BHB @ U
    else:

        def matvec(U):
            V = apply_B(U)
            return apply_Bt(products(V) + (lam * n) * apply_KMM(V))

    coef_cb = None
    if callback is not None:

        def coef_cb(it, beta, res):  # report the coefficients α = B β, not β
            callback(it, apply_B(beta), res)

    beta, history = conjugate_gradient(
        matvec, apply_Bt(rhs), xp, maxiter=maxiter, tol=tol, callback=coef_cb
    )
    return apply_B(beta), history


def _falkon_memory(M, itemsize, pitem):
    """Bytes the preconditioner holds at its peak: K_MM in the block dtype, then T, TTᵀ and
    A in the preconditioner dtype."""
    return M * M * (itemsize + 3 * pitem)


def nystroem_krr_fit(est, X, Y, xp, center_indices, callback, *, sample_weight=None, progress=None):
    r"""The data part of :meth:`NystroemKRR.fit` on X of any array library: centres, y mean,
    and FALKON with :math:`K_{nM}` blocks computed and consumed on X's device.

    Y is an (n, k) array of the preconditioner dtype on X's device; ``center_indices`` are
    rows of X (distinct, chosen on the host as on the numpy path). ``sample_weight`` (a
    positive numpy vector, or None) gives the weighted system
    :math:`(K_{nM}^T S K_{nM} + \lambda (	extstyle\sum s) K_{MM})lpha = K_{nM}^T S
    (y - ar y_s)` of the numpy path. ``progress`` (a :class:`kernelcourse._progress.Progress`
    or None) is asked for a line between blocks. Sets the fitted attributes ``centers_``,
    ``center_indices_``, ``y_mean_``, ``dual_coef_``, ``history_``, ``n_iter_`` of ``est``.
    """
    device = aa.device_of(X)
    pdtype = aa.max_float(xp, device)
    dtype = _xp_float(xp, est.dtype)
    if dtype == xp.float64 and pdtype == xp.float32:
        dtype = xp.float32  # the device has no float64
    X = xp.astype(X, dtype)
    n = X.shape[0]
    M = len(center_indices)
    itemsize = 4 if dtype == xp.float32 else 8
    pitem = 4 if pdtype == xp.float32 else 8
    centers = xp.take(X, aa.from_numpy(center_indices, xp, device), axis=0)
    if sample_weight is None:
        sw = sw_block = None
        n_eff = n
        y_mean = xp.mean(Y, axis=0)
        Yc = Y - y_mean[None, :]
    else:
        sw = aa.from_numpy(np.asarray(sample_weight, dtype=np.float64), xp, device, pdtype)
        sw_block = xp.astype(sw, dtype)
        n_eff = float(np.sum(sample_weight))
        y_mean = xp.sum(sw[:, None] * Y, axis=0) / n_eff
        Yc = (Y - y_mean[None, :]) * sw[:, None]
    lam = float(est.lam)
    resident = _falkon_memory(M, itemsize, pitem) + (M * M * pitem if est.precompute else 0)
    # a block of K_nM, its distance temporaries and (precompute) its float64 copy
    row_bytes = M * (2 * itemsize + (pitem if est.precompute else 0))
    rows = aa.block_rows(
        row_bytes, est.block_memory, xp=xp, device=device, resident=resident, what="K_nM"
    )

    def blocks():
        for start in range(0, n, rows):
            if progress and progress.due():  # a pass over a large X can itself take minutes
                progress.report(f"pass over the data: {start} of {n} rows")
            stop = min(start + rows, n)
            yield start, stop, gram_block(est.kernel_, X[start:stop, :], centers, xp=xp)

    def products(V):  # K_nMᵀ S K_nM V
        out = xp.zeros(V.shape, dtype=pdtype, device=device)
        Vb = xp.astype(V, dtype)
        for start, stop, Kb in blocks():
            KV = Kb @ Vb
            if sw_block is not None:
                KV = KV * sw_block[start:stop, None]
            out += xp.astype(Kb.T @ KV, pdtype)
        return out

    rhs = xp.zeros((M, Y.shape[1]), dtype=pdtype, device=device)
    gram = xp.zeros((M, M), dtype=pdtype, device=device) if est.precompute else None
    for start, stop, Kb in blocks():
        rhs += xp.astype(Kb.T @ xp.astype(Yc[start:stop, :], dtype), pdtype)
        if gram is not None:
            Kp = xp.astype(Kb, pdtype)
            if sw is None:
                gram += Kp.T @ Kp
            else:
                gram += Kp.T @ (Kp * sw[start:stop, None])
    alpha, history = falkon_solve(
        lambda: xp.astype(gram_block(est.kernel_, centers, xp=xp), pdtype),
        products,
        rhs,
        n_eff,
        lam,
        xp,
        preconditioner=est.preconditioner,
        maxiter=est.maxiter,
        tol=est.tol,
        callback=callback,
        gram=gram,
    )
    est.center_indices_ = aa.from_numpy(center_indices, xp, device)
    est.centers_ = centers
    est.y_mean_ = y_mean
    est.dual_coef_ = alpha
    est.history_ = aa.from_numpy(np.asarray(history), xp, device, pdtype)
    est.n_iter_ = len(history) - 1
    est.n_centers_ = M


def nystroem_krr_decision(est, X, xp):
    r""":math:`f(x) = \sum_j \alpha_j K(x, \tilde x_j) + \bar y`, a block of rows at a time, in
    the coefficients' dtype."""
    device = aa.device_of(X)
    dtype = est.centers_.dtype
    X = xp.astype(X, dtype)
    alpha = est.dual_coef_
    M = est.centers_.shape[0]
    itemsize = 4 if dtype == xp.float32 else 8
    rows = aa.block_rows(
        M * (2 * itemsize + 8), est.block_memory, xp=xp, device=device, what="K_nM"
    )
    out = xp.empty((X.shape[0], alpha.shape[1]), dtype=alpha.dtype, device=device)
    for start in range(0, X.shape[0], rows):
        stop = min(start + rows, X.shape[0])
        Kb = gram_block(est.kernel_, X[start:stop, :], est.centers_, xp=xp)
        out[start:stop, :] = xp.astype(Kb, alpha.dtype) @ alpha + est.y_mean_[None, :]
    return out
