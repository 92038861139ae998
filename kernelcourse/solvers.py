r"""The solver core: one conjugate gradient, one FALKON preconditioner, one jittered Cholesky.

Every iterative solve in the package runs here: Nyström kernel ridge regression by FALKON on
numpy, on other array libraries (:mod:`kernelcourse.devices`) and on Dask
(:mod:`kernelcourse.distributed`), streaming and sparse feature ridge
(:mod:`kernelcourse.scale`, :mod:`kernelcourse.ridge`), and the Newton steps of
:class:`~kernelcourse.svm.PrimalSVC`. The functions take the array namespace ``xp`` and the
operator as a callable, so this module knows nothing of devices, clusters or estimators; the
callers pass ``xp=None`` for numpy.

* :func:`block_cg` — preconditioned conjugate gradients (Hestenes & Stiefel 1952; Saad 2003,
  algorithm 9.1) for several right-hand sides at once: each column has its own step sizes and
  all share one call of the operator per iteration, which is what counts when one product is
  a pass over the data. A search direction with :math:`p^T H p` at round-off level (a
  numerically singular H, float32 products) ends the recursion of that column: the best
  iterate so far is kept and the result says so (``status="breakdown"``), as scipy's ``cg``
  and FALKON do. Only a clearly negative :math:`p^T H p` raises, since H is then indefinite
  and CG does not apply.
* :class:`FalkonPreconditioner` — :math:`B = T^{-1}A^{-1}/\sqrt n` with
  :math:`T = \operatorname{chol}(K_{MM})`, :math:`A = \operatorname{chol}(TT^T/M + \lambda I)`
  (Rudi, Carratino & Rosasco 2017, algorithm 1), built once and applied;
  :func:`falkon_solve` runs CG on :math:`B^T H B\beta = B^T K_{nM}^T y` and measures the true
  residual at the end.
* :func:`cholesky_jitter` — an upper Cholesky factor with the smallest diagonal jitter that
  succeeds; :class:`NotPositiveDefiniteError` when none does.

References
----------
M. R. Hestenes, E. Stiefel. Methods of conjugate gradients for solving linear systems. J. Res.
NBS 49 (1952). Y. Saad. Iterative Methods for Sparse Linear Systems, 2nd ed. (2003), ch. 9.
A. Rudi, L. Carratino, L. Rosasco. FALKON: An Optimal Large Scale Kernel Method. NeurIPS 2017.
G. Meanti, L. Carratino, L. Rosasco, A. Rudi. Kernel methods through the roof. NeurIPS 2020.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import numpy as np
from scipy import linalg
from sklearn.exceptions import ConvergenceWarning

from . import _array_api as aa
from ._validation import (
    all_finite,
    as_real_array,
    check_count,
    check_namespace,
    check_nonnegative,
    check_positive,
    check_symmetric,
    find_stack_level,
)

__all__ = [
    "NotPositiveDefiniteError",
    "CGResult",
    "block_cg",
    "conjugate_gradient",
    "cholesky_jitter",
    "FalkonPreconditioner",
    "falkon_solve",
    "gram_factor_update",
    "warn_unconverged",
]


class NotPositiveDefiniteError(np.linalg.LinAlgError):
    """A matrix or operator that must be symmetric positive definite is not, beyond round-off.

    A subclass of :class:`numpy.linalg.LinAlgError` (itself a ValueError)."""


@dataclass
class CGResult:
    """What :func:`block_cg` returns.

    Attributes
    ----------
    x : array of shape (n, k)
        The best iterate of each column (smallest recursion residual seen).
    history : list of float
        :math:`\\max_j \\|b_j - H x_j\\| / \\|b_j\\|` after each iteration (1 at x = 0), as the
        recursion computes it.
    n_iter : int
    status : {"converged", "max_iter", "breakdown"}
        "breakdown": some column stopped because :math:`p^T H p` fell to round-off level
        before reaching ``tol``.
    residual : float
        The relative residual of the returned x (the best iterates).
    """

    x: object
    history: list = field(default_factory=list)
    n_iter: int = 0
    status: str = "converged"
    residual: float = 1.0


def _xp(xp):
    return check_namespace(xp, "xp")


def _check_eps(eps):
    """ε, a relative precision, as a float in (0, 1), or None. ε = 1e300 passed
    ``check_positive`` and made the first jitter ε M max Aᵢᵢ infinite: a factor of NaN."""
    if eps is None:
        return None
    eps = check_positive(eps, "eps")
    if eps >= 1:
        raise ValueError(
            f"eps must be a relative precision below 1 (float64: 2.2e-16, float32: 1.2e-7), "
            f"got {eps!r}."
        )
    return eps


def _colnorm(A, xp):
    return xp.sqrt(_coldot(A, A, xp))


def _scaled_colnorm(A):
    """‖A[:, j]‖ for each column of a numpy A, each column scaled by its largest entry
    first, so that entries of 1e155 and beyond, whose squares overflow, keep finite norms."""
    A = np.asarray(A, dtype=np.float64)
    top = np.abs(A).max(axis=0, initial=0.0)
    safe = np.where(top > 0, top, 1.0)
    return top * np.sqrt(np.square(A / safe).sum(axis=0))


def _coldot(A, B, xp):
    """Column-wise dot products, without an (n, k) temporary for numpy."""
    if xp is np:
        return np.einsum("ij,ij->j", A, B)
    return xp.sum(A * B, axis=0)


def _first_negative(quantity, bar, xp):
    """The first column whose ``quantity`` is below ``-bar`` (clearly negative, beyond
    round-off), or None."""
    bad = quantity < -bar
    return int(xp.argmax(xp.astype(bad, xp.int64))) if bool(xp.any(bad)) else None


def _check_preconditioned(R, Zr, rz, eps, it, xp):
    r"""Raise when :math:`r^T M^{-1} r` is clearly negative: M is then not positive definite,
    the step sizes change sign, and CG would run to ``max_iter`` on a wrong recursion (a
    symmetric positive definite M gives :math:`r^T M^{-1} r > 0` for every r ≠ 0). Round-off
    in the product is about :math:`\varepsilon\|r\|\|M^{-1}r\|`, far below the bar."""
    bar = math.sqrt(eps) * xp.sqrt(_coldot(R, R, xp)) * xp.sqrt(_coldot(Zr, Zr, xp))
    j = _first_negative(rz, bar, xp)
    if j is not None:
        raise NotPositiveDefiniteError(
            f"the preconditioner is not positive definite: rᵀM⁻¹r = {float(rz[j]):.3g} < 0 "
            f"for the residual at iteration {it}; conjugate gradients need a symmetric "
            "positive definite preconditioner."
        )


def _check_callables(matvec, callback, preconditioner):
    if not callable(matvec):
        raise TypeError(f"matvec must be a callable returning H @ V, got {matvec!r}.")
    for name, value in (("callback", callback), ("preconditioner", preconditioner)):
        if value is not None and not callable(value):
            raise TypeError(f"{name} must be None or callable, got {value!r}.")


def block_cg(
    matvec, B, *, xp=None, preconditioner=None, max_iter=20, tol=1e-7, callback=None, eps=None
):
    r"""Preconditioned conjugate gradients for :math:`H X = B`, B of shape (n, k).

    The arguments are checked, cheaply; a missed ``tol`` is reported in the result, never by
    a warning (see :func:`conjugate_gradient` for one): the callers own their messages.

    Parameters
    ----------
    matvec : callable
        ``matvec(P)`` returns H P for an (n, k) array P of ``xp``.
    B : array of shape (n, k)
    xp : array namespace or None (numpy)
    preconditioner : callable or None
        ``preconditioner(R)`` returns :math:`M^{-1} R` for a symmetric positive definite M. Its
        result is used before the next call, so it may write every result into one buffer.
    max_iter, tol : int >= 0, float >= 0
        Stop after ``max_iter`` iterations, or once every column's relative residual
        :math:`\|b_j - H x_j\| / \|b_j\|` is at most ``tol``.
    callback : callable or None
        ``callback(iteration, X, relative_residual)`` after every iteration.
    eps : float in (0, 1) or None
        The relative precision of ``matvec`` (float32 products: 1.2e-7); None means the
        machine epsilon of B. With :math:`\|H\|` estimated from below by the largest
        :math:`\|Hp\|/\|p\|` seen, a column whose :math:`p^T H p \le 10\sqrt n\,\varepsilon
        \|H\|\|p\|^2` stops there (breakdown at round-off level), and :math:`p^T H p <
        -\sqrt\varepsilon\,\|H\|\|p\|^2` raises :class:`NotPositiveDefiniteError`.

    Returns
    -------
    CGResult

    Raises
    ------
    TypeError, ValueError
        If an argument is of the wrong type or out of range, or B is not finite (the error
        names the argument), or ``matvec`` or ``preconditioner`` returns an array of another
        shape than its input's.
    NotPositiveDefiniteError
        If a search direction shows negative curvature beyond round-off.

    See Also
    --------
    conjugate_gradient
        The same recursion on numpy input of shape (n,) or (n, k), with a warning when
        ``tol`` is missed.
    falkon_solve
        CG on the FALKON-preconditioned Nyström system.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelcourse.solvers import block_cg
    >>> H = np.array([[4.0, 1.0], [1.0, 3.0]])
    >>> B = np.array([[1.0, 0.0], [2.0, 1.0]])  # two right-hand sides, one product each step
    >>> result = block_cg(lambda P: H @ P, B, tol=1e-10)
    >>> print(result.status, result.n_iter)
    converged 2
    >>> print(result.x.round(4))
    [[ 0.0909 -0.0909]
     [ 0.6364  0.3636]]
    """
    xp = _xp(xp)
    _check_callables(matvec, callback, preconditioner)
    max_iter = check_count(max_iter, "max_iter", minimum=0)
    tol = check_nonnegative(tol, "tol")
    eps = _check_eps(eps)
    if xp is np and (not isinstance(B, np.ndarray) or B.dtype.kind != "f"):
        raise TypeError(
            f"B must be a floating-point ndarray, got {type(B).__name__} of dtype "
            f"{getattr(B, 'dtype', None)}; convert it with numpy.asarray(B, dtype=float)."
        )
    if getattr(B, "ndim", None) != 2 or 0 in B.shape:
        raise ValueError(
            f"B must be a non-empty 2-d array of shape (n, k), one column per right-hand "
            f"side, got {type(B).__name__} of shape {getattr(B, 'shape', None)}."
        )
    if not all_finite(B, xp):
        raise ValueError("B contains NaN or infinity.")
    # numpy updates the iterates in place: with many right-hand sides of a long operator
    # (binning features, D ≈ 10⁷ rows), fresh temporaries each step cost more than H P
    inplace = xp is np
    eps = float(xp.finfo(B.dtype).eps) if eps is None else float(eps)
    # Each column of B is divided by its largest entry: H X = B is linear in B, and with B of
    # order 1e-150 or 1e150 the products pᵀHp would underflow to 0 or overflow (a solution of
    # 0 or NaN); the relative residuals and the stopping rule do not change.
    unit = xp.max(xp.abs(B), axis=0)
    unit = xp.where(unit > 0, unit, 1.0)
    R = B / unit  # a new array: the residual, updated in place
    X = xp.zeros_like(B)
    Zr = R if preconditioner is None else _same_shape(preconditioner(R), R, "preconditioner")
    P = Zr.copy() if inplace else Zr
    bnorm = _colnorm(R, xp)
    bnorm = xp.where(bnorm == 0, 1.0, bnorm)
    rz = _coldot(R, Zr, xp)
    if preconditioner is not None:
        _check_preconditioned(R, Zr, rz, eps, 0, xp)
    res = xp.sqrt(_coldot(R, R, xp)) / bnorm
    best_X = xp.zeros_like(B) if inplace else X
    best_res = res
    tmp = xp.empty_like(B) if inplace else None
    frozen = xp.zeros_like(res, dtype=xp.bool)  # on B's device
    history = [float(xp.max(res))]
    norm_H = 0.0
    roundoff = 10 * eps * math.sqrt(B.shape[0])
    status = "max_iter"
    it = 0
    while it < max_iter:
        if history[-1] <= tol:
            status = "converged"
            break
        it += 1
        HP = _same_shape(matvec(P), P, "matvec")
        pHp = _coldot(P, HP, xp)
        pp = _coldot(P, P, xp)
        # ‖H‖ from below (the largest ‖Hp‖/‖p‖ seen): round-off in pᵀHp is about ε‖H‖‖p‖²
        hp = xp.sqrt(_coldot(HP, HP, xp))
        if not bool(xp.all(xp.isfinite(hp))):  # ‖Hp‖² beyond float range (H of order 1e160)
            top = xp.max(xp.abs(HP), axis=0)
            top = xp.where(top > 0, top, 1.0)
            hp = top * xp.sqrt(_coldot(HP / top, HP / top, xp))
        ratio = hp / xp.sqrt(xp.where(pp > 0, pp, 1.0))
        norm_H = max(norm_H, float(xp.max(ratio)))
        scale = norm_H * pp
        j = _first_negative(pHp, math.sqrt(eps) * scale, xp)
        if j is not None:
            raise NotPositiveDefiniteError(
                f"the operator is not positive definite: pᵀHp = {float(pHp[j]):.3g} < 0 for a "
                f"search direction at iteration {it} (‖H‖‖p‖² ≥ {float(scale[j]):.3g}); "
                "conjugate gradients need a symmetric positive definite H."
            )
        # no curvature left above round-off: this column's recursion ends here
        frozen = frozen | (pHp <= roundoff * scale)
        live = ~frozen
        step = xp.where(live, rz / xp.where(live, pHp, 1.0), 0.0)
        if inplace:
            X += np.multiply(P, step, out=tmp)
            R -= np.multiply(HP, step, out=tmp)
        else:
            X = X + step[None, :] * P
            R = R - step[None, :] * HP
        del HP
        Zr = R if preconditioner is None else _same_shape(preconditioner(R), R, "preconditioner")
        rz_new = _coldot(R, Zr, xp)
        if preconditioner is not None:
            _check_preconditioned(R, Zr, rz_new, eps, it, xp)
        beta = xp.where(live & (rz > 0), rz_new / xp.where(rz > 0, rz, 1.0), 0.0)
        if inplace:
            P *= beta
            P += Zr
            if not live.all():
                P[:, ~live] = 0.0
        else:
            P = xp.where(live[None, :], Zr + beta[None, :] * P, 0.0)
        rz = rz_new
        res = xp.sqrt(_coldot(R, R, xp)) / bnorm
        better = res < best_res
        if inplace:
            np.copyto(best_X, X, where=better[None, :])
        else:
            best_X = xp.where(better[None, :], X, best_X)
        best_res = xp.where(better, res, best_res)
        history.append(float(xp.max(res)))
        if callback is not None:
            callback(it, X * unit, history[-1])
        if bool(xp.all(frozen | (res <= tol))):
            status = "converged" if bool(xp.all(res <= tol)) else "breakdown"
            break
    else:
        if history[-1] <= tol:
            status = "converged"
    if inplace:
        best_X *= unit
    else:
        best_X = best_X * unit
    return CGResult(best_X, history, it, status, float(xp.max(best_res)))


def _same_shape(out, like, name):
    """``out``, what the callable ``name`` of :func:`block_cg` returned for ``like``, after
    checking that it is an array of like's shape: no pass over it. A result of another
    shape (a vector for an (n, 1) input, or fewer rows) failed in numpy's einsum, whose
    error ("operands could not be broadcast together with remapped shapes") named nothing."""
    shape = getattr(out, "shape", None)
    if shape is None or tuple(shape) != tuple(like.shape):
        got = type(out).__name__ if shape is None else f"shape {tuple(shape)}"
        raise ValueError(
            f"{name} returned {got} for an input of shape {tuple(like.shape)}; it must return "
            "an array of the same shape."
        )
    return out


def conjugate_gradient(matvec, b, *, max_iter=20, tol=1e-7, callback=None, preconditioner=None):
    r"""Solve :math:`H x = b` for symmetric positive definite H given only ``matvec(v) = H v``.

    :func:`~kernelcourse.solvers.block_cg` on numpy input, checked, with a
    :class:`~sklearn.exceptions.ConvergenceWarning` naming the residual when ``tol`` is not
    reached (after ``max_iter`` iterations, or at a breakdown at round-off level, where the
    best iterate is returned).

    Parameters
    ----------
    matvec : callable
        ``matvec(V)`` returns H V for an (n, k) array V (k columns at once).
    b : array-like of shape (n,) or (n, k)
        Each column runs its own CG recursion; all share one call of ``matvec`` per iteration.
    max_iter : int >= 1, default=20
    tol : float >= 0, default=1e-7
        Stop once the relative residual :math:`\|b - Hx\| / \|b\|` of every column is below.
    callback : callable or None
        Called as ``callback(iteration, x, relative_residual)`` after every step.
    preconditioner : callable or None
        ``preconditioner(R)`` returns :math:`M^{-1} R` for an (n, k) array R.

    Returns
    -------
    x : ndarray, shape of ``b``
    history : ndarray
        Relative residual :math:`\max_j \|b_j - H x_j\| / \|b_j\|` after each iteration
        (``history[0] = 1`` is the starting point x = 0).

    Raises
    ------
    TypeError, ValueError
        If an argument is of the wrong type or out of range (the error names it), or if
        ``matvec`` or ``preconditioner`` returns anything but real numbers of its input's
        shape, or NaN or infinity.
    NotPositiveDefiniteError
        If a search direction shows H is clearly not positive definite.

    See Also
    --------
    kernelcourse.solvers.block_cg
        The unchecked recursion, on any array library.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelcourse.solvers import conjugate_gradient
    >>> H = np.array([[4.0, 1.0], [1.0, 3.0]])
    >>> x, history = conjugate_gradient(lambda v: H @ v, np.array([1.0, 2.0]), tol=1e-10)
    >>> print(x.round(4), len(history) - 1)
    [0.0909 0.6364] 2
    """
    _check_callables(matvec, callback, preconditioner)
    max_iter = check_count(max_iter, "max_iter")
    tol = check_nonnegative(tol, "tol")
    b_arr = np.asarray(b)
    if b_arr.dtype == object or not np.issubdtype(b_arr.dtype, np.number):
        raise TypeError(f"b must be a numeric array, got dtype {b_arr.dtype}.")
    if np.iscomplexobj(b_arr):
        raise TypeError(f"b must be real-valued, got dtype {b_arr.dtype}.")
    if b_arr.ndim not in (1, 2) or b_arr.size == 0:
        raise ValueError(f"b must be a non-empty array of shape (n,) or (n, k), got {b_arr.shape}.")
    if not np.isfinite(b_arr).all():
        raise ValueError("b contains NaN or infinity.")
    vector = b_arr.ndim == 1
    B = np.asarray(b_arr, dtype=np.float64).reshape(len(b_arr), -1)

    gain = 0.0  # the largest max|HV| / max|V| seen: H's order of magnitude

    def checked(V):
        nonlocal gain
        if not np.isfinite(V).all():
            # the preconditioner's results are checked, so the recursion itself overflowed:
            # b is scaled to 1, and pᵀHp of order ‖H‖ makes a step rᵀz / pᵀHp of 1/‖H‖,
            # beyond the float range for H of order 5e-309 and below
            raise ValueError(
                f"conjugate gradients overflowed: matvec returns values of order {gain:.0e} "
                "times its input's, so a step rᵀz / pᵀHp (of order 1 / that, with b scaled "
                "to 1) left the float range. Rescale H: multiply matvec by a constant c "
                "that brings it near 1, and the solution by c."
            )
        arg = V[:, 0] if vector else V
        HV = _operator_output(matvec(arg), arg.shape, "matvec", "H @ V").reshape(V.shape)
        if not np.isfinite(HV).all():
            raise ValueError("matvec returned NaN or infinity.")
        top = float(np.abs(V).max())
        if top > 0:
            gain = max(gain, float(np.abs(HV).max()) / top)
        return HV

    cb = None
    if callback is not None:

        def cb(it, X, res):  # a copy: block_cg updates its iterate in place
            callback(it, (X[:, 0] if vector else X).copy(), res)

    prec = None
    if preconditioner is not None:

        def prec(R):
            arg = R[:, 0] if vector else R
            Z = _operator_output(preconditioner(arg), arg.shape, "preconditioner", "M⁻¹ R")
            if not np.isfinite(Z).all():
                raise ValueError("preconditioner returned NaN or infinity; M⁻¹R must be finite.")
            return Z.reshape(R.shape)

    # an overflowing step is reported by checked() with its cause, not by numpy's warnings
    with np.errstate(over="ignore", invalid="ignore"):
        result = block_cg(
            checked, B, preconditioner=prec, max_iter=int(max_iter), tol=float(tol), callback=cb
        )
    warn_unconverged("conjugate_gradient", result, tol)
    x = result.x[:, 0] if vector else result.x
    return x, np.asarray(result.history)


def _operator_output(value, shape, name, what):
    """What the callable ``name`` returned (``what``, for an input of ``shape``) as a float64
    array of that shape: a TypeError or ValueError naming ``name`` where it is not real
    numbers of that size (numpy would drop an imaginary part with a ComplexWarning, convert
    text, or fail in a reshape that names nothing). Costs no pass over the array."""
    out = np.asarray(value)
    if out.dtype.kind not in "biuf":
        raise TypeError(
            f"{name} returned dtype {out.dtype}; it must return {what} as real numbers."
        )
    if out.shape != shape and out.size == math.prod(shape):
        out = out.reshape(shape)
    if out.shape != shape:
        raise ValueError(
            f"{name} returned shape {out.shape} for an input of shape {shape}; it must "
            f"return {what} of the same shape."
        )
    return out.astype(np.float64, copy=False)


def warn_unconverged(name, result, tol, *, measured=None, floor=0.0, quantity="relative residual"):
    """The :class:`~sklearn.exceptions.ConvergenceWarning` of a CG solve that missed ``tol``,
    at the user's line (the first one outside kernelcourse and the libraries that call it).

    ``measured`` is the residual recomputed with one more product (FALKON), which round-off
    can carry away from the recursion's; beyond 100× the recursion's and ``floor`` (the
    product's own precision) CG has drifted, and the warning says so. ``quantity`` names the
    residual in the message.
    """
    claimed = result.residual
    if measured is not None and measured > max(100 * max(claimed, tol), floor):
        message = (
            f"{name}: conjugate gradients drifted: the {quantity} is {measured:.3g} "
            f"although the CG recursion reported {claimed:.3g}; round-off took over (the "
            "system is nearly singular). Raise lam, use fewer centres or float64."
        )
    elif result.status == "breakdown" and claimed > tol:
        message = (
            f"{name}: conjugate gradients stopped at iteration {result.n_iter}, where a search "
            "direction had no curvature left above round-off (pᵀHp ≈ 0: the system is "
            f"numerically singular); the best iterate has {quantity} {claimed:.2e} > "
            f"tol={tol:g}. Raise lam (or use float64) for a tighter solution."
        )
    elif result.status == "max_iter" and claimed > tol:
        message = (
            f"{name} did not reach tol={tol:g} in max_iter={result.n_iter} conjugate-gradient "
            f"iterations: {quantity} {claimed:.2e} > tol={tol:g}; raise max_iter (or "
            "tol)."
        )
    else:
        return
    warnings.warn(message, ConvergenceWarning, stacklevel=find_stack_level())


# -- Cholesky with jitter --------------------------------------------------------------------------
def _cholesky_lower(A, xp):
    if xp is np:
        try:
            return linalg.cholesky(A, lower=True, check_finite=False)
        except linalg.LinAlgError:
            return None
    return aa._cholesky_lower(A, xp)


def cholesky_jitter(A, *, xp=None, name="A", eps=None, max_tries=12):
    r"""Upper factor T with :math:`T^T T = A + sI` for the smallest shift
    :math:`s = \varepsilon M \max_i A_{ii} \cdot 100^k` (k < ``max_tries``, and s at most
    :math:`\max_i A_{ii}` after the first) that succeeds, and s.

    The shift follows A's scale (1 sets it when no diagonal entry is positive), so a PSD
    matrix of order 1e-150 is not swamped by it. ``eps`` defaults to the machine epsilon of
    A's dtype; pass that of the precision A was computed in (float32 kernel blocks). A may be
    modified in place.

    Parameters
    ----------
    A : array of shape (M, M)
        Symmetric; a numpy array of integers (or a nested list) is taken as float64.
    xp : array namespace or None (numpy)
    name : str, default="A"
        What the error messages call A.
    eps : float in (0, 1) or None, default=None
        ε, the relative precision A was computed in.
    max_tries : int >= 1, default=12
        Number of shifts tried, each 100 times the previous.

    Returns
    -------
    T : array of shape (M, M)
        Upper triangular, :math:`T^T T = A + sI`.
    shift : float
        s.

    Raises
    ------
    TypeError
        If A does not hold real numbers (the error names ``name``), or ``max_tries`` is not an
        integer.
    ValueError
        If A is not a square matrix or not symmetric beyond round-off (named by ``name``;
        the factorization reads one triangle), ``eps`` is not a number in (0, 1) or
        ``max_tries`` < 1.
    NotPositiveDefiniteError
        When no shift up to :math:`100^{\text{max\_tries}-1}` times the first, nor up to
        :math:`\max_i A_{ii}`, works: a PSD matrix needs a jitter of the order of its rounding
        only, so A is then indefinite beyond round-off. The message names ``name``.

    See Also
    --------
    FalkonPreconditioner
        Factors :math:`K_{MM}` and :math:`TT^T/M + \lambda I` with it.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelcourse.solvers import cholesky_jitter
    >>> A = np.ones((3, 3))  # rank one: no Cholesky factor without a shift
    >>> T, shift = cholesky_jitter(A.copy())
    >>> print(shift > 0, np.allclose(T.T @ T, A + shift * np.eye(3)))
    True True
    """
    return _cholesky_jitter(A, xp=xp, name=name, eps=eps, max_tries=max_tries, symmetric=None)


def _cholesky_jitter(A, *, xp=None, name="A", eps=None, max_tries=12, symmetric=None):
    """:func:`cholesky_jitter`; ``symmetric=None`` checks that A is symmetric to round-off
    (the factorization reads one triangle: [[2, 1], [0, 2]] was factored as 2·I), True
    skips that O(M²) check for a matrix symmetric by construction (the preconditioner's)."""
    xp = _xp(xp)
    if xp is np:
        A = as_real_array(A, name)
        if not A.flags.writeable:  # the shifts go onto A's diagonal in place
            A = A.copy()
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"{name} must be a square matrix, got shape {tuple(A.shape)}.")
    max_tries = check_count(max_tries, "max_tries")
    M = A.shape[0]
    eps = _check_eps(eps)
    eps = float(xp.finfo(A.dtype).eps) if eps is None else eps
    # a sum first: the elementwise test is an M × M temporary (2.5 GB at M = 50 000)
    if not all_finite(A, xp):
        raise NotPositiveDefiniteError(f"{name} holds NaN or infinity.")
    if symmetric is None:
        check_symmetric(A, name, xp)
    # relative to A's own scale: an absolute floor of 1 would swamp a PSD matrix of 1e-150
    # (a matrix with no positive diagonal entry is not PSD; 1 then sets the scale)
    top = float(xp.max(xp.linalg.diagonal(A))) if M else 0.0
    shift = eps * M * (top if top > 0 else 1.0)
    if shift == 0.0:  # A of subnormal scale (1e-320): the product underflowed, and 100ᵏ·0 = 0
        shift = float(np.nextafter(0.0, 1.0))
    # The rounding of a PSD matrix computed to precision ε moves its eigenvalues by about
    # εM max Aᵢᵢ, the first shift. A shift beyond max Aᵢᵢ, which bounds every entry of a PSD
    # matrix, is no jitter: A is indefinite beyond round-off (an indefinite kernel), and the
    # factor of A + sI (−I became 6.7·I) silently stood in for A.
    limit = max(top, shift)
    added = 0.0
    for _ in range(max_tries):
        if shift > limit:
            break
        B = aa.add_to_diagonal(A, shift - added, xp)
        added = shift
        L = _cholesky_lower(B, xp)
        if L is not None:
            return L.T, shift
        if B is not A:  # a copy: A is still unshifted
            added = 0.0
        shift *= 100
    raise NotPositiveDefiniteError(
        f"{name} is not positive definite even after adding {shift / 100:.1e}·I (its largest "
        f"diagonal entry is {top:.3g}); is the kernel positive semidefinite?"
    )


# -- FALKON ----------------------------------------------------------------------------------------
class FalkonPreconditioner:
    r"""The FALKON preconditioner :math:`B = T^{-1}A^{-1}/\sqrt n` (Rudi et al. 2017, alg. 1).

    :math:`T^TT = K_{MM}` and :math:`A^TA = TT^T/M + \lambda I`, both by
    :func:`cholesky_jitter`, so that :math:`B^T(K_{nM}^TK_{nM} + \lambda nK_{MM})B` is close to
    the identity when M is of order 1/λ (up to log factors). ``kind=None`` is the identity
    scaled by :math:`1/\sqrt n` (plain CG on the normal equations, for comparison).

    Parameters
    ----------
    KMM : array of shape (M, M)
        In the preconditioner's dtype (float64 where supported); its memory is reused. A
        numpy array of integers (or a nested list) is taken as float64.
    lam : float
    n : float
        The number of points (or the sum of the sample weights).
    xp : array namespace or None (numpy)
    kind : {"falkon", None}
    eps : float in (0, 1) or None
        The precision of the kernel blocks (float32: 1.2e-7), which sets the first jitter of
        T; K_MM itself is best given in float64.

    Attributes
    ----------
    shift : float
        The jitter s in :math:`T^TT = K_{MM} + sI`. Where ``eps`` is coarser than K_MM's
        own precision, :meth:`kmm` takes the excess off again: the system keeps the
        regulariser :math:`\lambda n(K_{MM} + s'I)` with the jitter
        :math:`s' = s\,\varepsilon_{K_{MM}}/\varepsilon` of K_MM's own precision.

    See Also
    --------
    falkon_solve
        Conjugate gradients on the system it preconditions.
    kernelcourse.scale.NystroemKRR
        The estimator that builds it.

    References
    ----------
    A. Rudi, L. Carratino, L. Rosasco. FALKON: An Optimal Large Scale Kernel Method. NeurIPS 2017.
    :doc:`chapter 11 </book/11_scaling_up>`.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelcourse.kernels import RBF
    >>> from kernelcourse.solvers import FalkonPreconditioner
    >>> C = np.random.default_rng(0).uniform(-3, 3, size=(40, 1))  # M = 40 centres
    >>> B = FalkonPreconditioner(RBF(gamma=1.0)(C, C), lam=1e-3, n=200)
    >>> print(B.M, B.apply(np.eye(40)).shape)
    40 (40, 40)
    """

    def __init__(self, KMM, lam, n, *, xp=None, kind="falkon", eps=None):
        # a negative λ or n ≤ 0 gave a preconditioner of NaN or infinity, and a misspelt
        # kind was the identity
        lam = check_nonnegative(lam, "lam")
        n = check_positive(n, "n")
        eps = _check_eps(eps)
        if kind not in ("falkon", None):
            raise ValueError(f"kind must be 'falkon' or None, got {kind!r}.")
        self.xp = _xp(xp)
        if self.xp is np:  # integers (and lists) as float64: finfo and the factors need a float
            KMM = as_real_array(KMM, "K_MM")
        if len(KMM.shape) != 2 or KMM.shape[0] != KMM.shape[1]:
            raise ValueError(f"K_MM must be a square matrix, got shape {tuple(KMM.shape)}.")
        self.M = KMM.shape[0]
        self.sqrt_n = math.sqrt(n)
        self.kind = kind
        self.shift = self._excess = 0.0
        if kind == "falkon":
            own = float(self.xp.finfo(KMM.dtype).eps)
            self.T, self.shift = _cholesky_jitter(
                KMM, xp=self.xp, name="K_MM", eps=eps, symmetric=True
            )
            # T's jitter is sized to the blocks' precision; the regulariser keeps only the
            # jitter of K_MM's own precision (the same multiple of its ε), which a float64
            # K_MM needs to be positive definite but which is far below any λ
            self._excess = self.shift * (1.0 - own / (own if eps is None else float(eps)))
            # T Tᵀ overwrites K_MM, which the caller's frame keeps alive until this returns:
            # the peak is three M × M matrices (K_MM, T, A), not four; T's zero half is
            # skipped, M³/3 flops instead of 2M³ (with M = 50 000, the largest step of the set-up)
            TTt = aa.upper_gram_into(self.T, KMM, self.xp)
            del KMM
            TTt /= self.M
            TTt = aa.add_to_diagonal(TTt, lam, self.xp)
            self.A, _ = _cholesky_jitter(TTt, xp=self.xp, name="T Tᵀ/M + λI", symmetric=True)
            self._KMM = None
        else:
            self.T = self.A = None
            self._KMM = KMM

    def apply(self, U):
        """B U = T⁻¹ A⁻¹ U / √n."""
        if self.T is None:
            return U / self.sqrt_n
        xp = self.xp
        return aa.solve_triangular(self.T, aa.solve_triangular(self.A, U, xp), xp) / self.sqrt_n

    def apply_t(self, U):
        """Bᵀ U = A⁻ᵀ T⁻ᵀ U / √n."""
        if self.T is None:
            return U / self.sqrt_n
        xp = self.xp
        inner = aa.solve_triangular(self.T, U, xp, transpose=True)
        return aa.solve_triangular(self.A, inner, xp, transpose=True) / self.sqrt_n

    def kmm(self, V):
        """K_MM V, as TᵀT V less the excess jitter once K_MM itself is gone: a jitter sized
        to float32 blocks belongs to the preconditioner, not to the regulariser λnK_MM."""
        if self.T is None:
            return self._KMM @ V
        KV = self.T.T @ (self.T @ V)
        return KV - self._excess * V if self._excess > 0 else KV


def _qr_rows(M):
    """Rows of K per Householder QR in :func:`gram_factor_update`. One QR of a tall block
    works through its column panels in main memory: 9–10 GFLOP/s for 80,000 × 400 on one
    core, against 30 in chunks of a few thousand rows, which stay in cache. Each chunk also
    carries the M × M factor of the rows before it, so chunks are kept well above M."""
    return max(4096, 16 * M)


def _r_factor(R, K):
    """The upper-triangular (trapezoidal, for fewer rows than columns) factor of [R; K] (R
    None: of K), by LAPACK's blocked Householder QR with the compact WY form (``geqrt``),
    whose updates are matrix products: a third faster than ``geqrf`` at these shapes."""
    top = 0 if R is None else R.shape[0]
    m, M = top + K.shape[0], K.shape[1]
    if m == 0 or M == 0:
        return linalg.qr(K, mode="r", check_finite=False)[0]
    # [R; K] stacked once, in LAPACK's column order, into an array of our own for LAPACK to
    # overwrite (K is the caller's)
    A = np.empty((m, M), dtype=K.dtype if R is None else np.result_type(R, K), order="F")
    if R is not None:
        A[:top] = R
    A[top:] = K
    (geqrt,) = linalg.get_lapack_funcs(("geqrt",), (A,))
    # panels of 32 columns, or 128 from M = 800 on: 20–40 % faster there, on one or two cores
    factored, _, info = geqrt(min(32 if M < 800 else 128, m, M), A, overwrite_a=True)
    if info != 0:  # only an illegal argument sets it, never the data
        raise RuntimeError(f"LAPACK geqrt failed with info={info}.")
    return np.triu(factored[: min(m, M)])


def gram_factor_update(R, K, *, xp=None):
    r"""The triangular factor of :math:`[R; K]`: the upper R' (M × M) with
    :math:`R'^TR' = R^TR + K^TK`, by a QR factorisation of the stacked rows.

    Summed over row blocks :math:`K_b` of :math:`K_{nM}` (R = None at the start), this is the
    factor :math:`R^TR = K_{nM}^TK_{nM}` of a tall-skinny QR, for ``falkon_solve(gram_factor=)``.
    Unlike the sum of :math:`K_b^TK_b`, it carries the rounding of :math:`K_{nM}` once, not
    squared: the Gram matrix loses the digits below :math:`\varepsilon\lVert K_{nM}\rVert^2`,
    which the preconditioner then amplifies (see :func:`falkon_solve`).

    Parameters
    ----------
    R : array (M, M) or None
    K : array (b, M)
        The next block of rows (times the square roots of their sample weights).
    xp : array namespace or None (numpy)

    Returns
    -------
    array (M, M)

    Raises
    ------
    TypeError
        If R or K (numpy arrays or nested lists) do not hold real numbers.
    ValueError
        If the shapes do not match or K holds NaN or infinity.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelcourse.solvers import gram_factor_update
    >>> K = np.random.default_rng(0).normal(size=(100, 5))
    >>> R = None
    >>> for start in range(0, 100, 30):
    ...     R = gram_factor_update(R, K[start : start + 30])
    >>> print(np.allclose(R.T @ R, K.T @ K))
    True
    """
    xp = _xp(xp)
    if xp is np:  # lists and integers as float64; text refused by name
        K = as_real_array(K, "K")
        R = None if R is None else as_real_array(R, "R")
    if len(K.shape) != 2 or (R is not None and tuple(R.shape) != (K.shape[1], K.shape[1])):
        shape_r = None if R is None else tuple(R.shape)
        raise ValueError(
            f"K must be a block of rows (b, M) and R None or (M, M), got K of shape "
            f"{tuple(K.shape)} and R of shape {shape_r}."
        )
    if not all_finite(K, xp):  # a QR of NaN is NaN throughout, and stays so in every update
        raise ValueError("K contains NaN or infinity.")
    M = K.shape[1]
    if xp is np:
        # A few thousand rows at a time (see _qr_rows): the carried R joins each chunk.
        step = _qr_rows(M)
        for start in range(0, max(K.shape[0], 1), step):
            chunk = K[start : start + step]
            # (a factor with fewer than M rows, from fewer rows so far, stacks the same way)
            R = Rn = _r_factor(R, chunk)
    else:
        A = K if R is None else xp.concat([R, K], axis=0)
        Rn = xp.linalg.qr(A)[1]
    if Rn.shape[0] < M:  # fewer rows than columns so far: pad with zero rows
        pad = xp.zeros((M - Rn.shape[0], M), dtype=Rn.dtype, device=aa.device_of(Rn))
        Rn = xp.concat([Rn, pad], axis=0)
    return Rn[:M, :]


def _preconditioned_gram(B, factor, lam, n, xp):
    r""":math:`B^T(R^TR + \lambda n K_{MM})B`, the preconditioned FALKON matrix for
    :math:`R^TR = K_{nM}^TSK_{nM}`, as a sum of two Gram matrices, so that it is positive
    semidefinite in floating point too: :math:`B^TR^TRB = PP^T` with :math:`P = B^TR^T`, and,
    since :math:`TB = A^{-1}/\sqrt n` for FALKON's B, :math:`B^T\lambda nT^TTB = \lambda n
    QQ^T` with :math:`Q = B^TT^T`. The excess jitter that :meth:`FalkonPreconditioner.kmm`
    takes off is taken off here too."""
    M = factor.shape[1]
    P = B.apply_t(factor.T)
    if B.T is None:  # plain CG (kind=None): B = I/√n, no factor of K_MM to lean on
        eye = xp.eye(M, dtype=factor.dtype, device=aa.device_of(factor))
        reg = B.apply_t(B.kmm(B.apply(eye)))
        reg = 0.5 * (reg + reg.T)
    else:
        Q = B.apply_t(B.T.T)
        reg = Q @ Q.T
        if B._excess > 0:
            Z = B.apply(xp.eye(M, dtype=factor.dtype, device=aa.device_of(factor)))
            reg = reg - B._excess * (Z.T @ Z)
    return P @ P.T + (lam * n) * reg


def _gram_to_factor(gram, xp):
    """An upper factor R with RᵀR = G for a symmetric positive semidefinite G, from its
    eigenvalues clipped at 0 (the negative ones are G's rounding)."""
    w, V = xp.linalg.eigh(0.5 * (gram + gram.T))
    w = xp.where(w > 0, w, xp.zeros_like(w))
    return xp.sqrt(w)[:, None] * V.T


@dataclass
class FalkonResult:
    """What :func:`falkon_solve` returns: the coefficients α = Bβ, the CG result for β, and the
    relative residual of the preconditioned system measured with one more product."""

    alpha: object
    cg: CGResult
    residual: float


def _check_falkon_arguments(
    B, products, rhs, lam, n, xp, max_iter, tol, callback, gram, factor, eps
):
    """falkon_solve's arguments checked by name (each failed deep in numpy or scipy, or, for
    n < 0, went on); returns rhs, gram and gram_factor, as float arrays for numpy."""
    if not isinstance(B, FalkonPreconditioner):
        raise TypeError(f"preconditioner must be a FalkonPreconditioner, got {B!r}.")
    lam = check_nonnegative(lam, "lam")
    n = check_positive(n, "n")
    if not math.isfinite(lam * n):
        # the regulariser λn K_MM: scipy's "array must not contain infs or NaNs" named nothing
        raise ValueError(
            f"lam * n = {lam:g} * {n:g} overflows floating point (the regulariser λn K_MM of "
            "the FALKON system); lower lam."
        )
    check_count(max_iter, "max_iter")
    check_nonnegative(tol, "tol")
    _check_eps(eps)  # a negative ε failed in CG's √ε with "math domain error"
    if callback is not None and not callable(callback):
        raise TypeError(f"callback must be None or callable, got {callback!r}.")
    if gram is None and factor is None and not callable(products):
        raise TypeError(
            "products must be a callable returning K_nMᵀ S K_nM V (or pass gram or "
            f"gram_factor), got {products!r}."
        )
    M = B.M
    out = []
    for name, A in (("rhs", rhs), ("gram", gram), ("gram_factor", factor)):
        if A is not None:
            if xp is np:
                A = as_real_array(A, name, "array")
            square = name != "rhs"
            # no column at all: CG's largest residual of none failed in a numpy reduction
            bad = len(A.shape) != 2 or A.shape[0] != M
            if bad or (A.shape[1] != M if square else A.shape[1] == 0):
                shape = f"(M, M) = ({M}, {M})" if square else f"(M, k) = ({M}, k), k >= 1"
                raise ValueError(
                    f"{name} must be an array of shape {shape}, got shape {tuple(A.shape)}."
                )
            if not all_finite(A, xp):
                raise ValueError(f"{name} contains NaN or infinity.")
        out.append(A)
    return out


def falkon_solve(
    preconditioner,
    products,
    rhs,
    lam,
    n,
    *,
    xp=None,
    max_iter=20,
    tol=1e-7,
    callback=None,
    gram=None,
    gram_factor=None,
    eps=None,
):
    r"""Solve :math:`(K_{nM}^T K_{nM} + \lambda n K_{MM})\alpha = K_{nM}^T y` by CG on the
    FALKON-preconditioned system :math:`B^T H B \beta = B^T K_{nM}^T y`, :math:`\alpha = B\beta`.

    Parameters
    ----------
    preconditioner : FalkonPreconditioner
    products : callable
        ``products(V)`` = :math:`K_{nM}^T S (K_{nM} V)` for (M, k) arrays V, one pass over the
        data (S the sample weights). Unused when ``gram`` is given.
    rhs : array (M, k)
        :math:`K_{nM}^T S (y - \bar y)`.
    lam, n : float
    gram_factor : array (M, M) or None
        An R with :math:`R^TR = K_{nM}^T S K_{nM}`, accumulated in one pass by
        :func:`gram_factor_update`; CG then touches no data.
    gram : array (M, M) or None
        :math:`K_{nM}^T S K_{nM}` itself, in place of ``gram_factor``. Less accurate: its
        rounding, :math:`\varepsilon\lVert K_{nM}\rVert^2`, is magnified by B where
        :math:`K_{MM}` is nearly singular, while the factor carries
        :math:`\varepsilon\lVert K_{nM}\rVert` only.
    eps : float in (0, 1) or None
        The precision of ``products`` (that of the kernel blocks).
    callback : callable or None
        ``callback(iteration, alpha, relative_residual)``, with the coefficients α = Bβ. A
        callback with the attribute ``needs_coefficients = False`` (a progress line, such as
        :class:`~kernelcourse.scale.ProgressPrinter`) gets ``alpha=None``: forming α costs
        two triangular solves an iteration.

    Returns
    -------
    FalkonResult

    Raises
    ------
    TypeError, ValueError
        If an argument is of the wrong type, shape or range, or ``rhs``, ``gram`` or
        ``gram_factor`` holds NaN or infinity (the error names it). With numpy, nested lists
        and integer arrays are taken as float64.

    See Also
    --------
    FalkonPreconditioner
        The preconditioner B.
    block_cg
        The conjugate gradients it runs.
    kernelcourse.scale.NystroemKRR
        The estimator around it.

    References
    ----------
    A. Rudi, L. Carratino, L. Rosasco. FALKON: An Optimal Large Scale Kernel Method. NeurIPS 2017.
    G. Meanti, L. Carratino, L. Rosasco, A. Rudi. Kernel methods through the roof: handling
    billions of points efficiently. NeurIPS 2020. The algorithm:
    :doc:`chapter 11 </book/11_scaling_up>`.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelcourse.kernels import RBF
    >>> from kernelcourse.solvers import FalkonPreconditioner, falkon_solve
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-3, 3, size=(200, 1))
    >>> y = np.sin(X[:, 0])
    >>> k, C, lam, n = RBF(gamma=1.0), X[::5], 1e-3, 200  # M = 40 centres
    >>> KnM = k(X, C)
    >>> B = FalkonPreconditioner(k(C, C), lam, n)
    >>> res = falkon_solve(B, lambda V: KnM.T @ (KnM @ V), KnM.T @ (y - y.mean())[:, None],
    ...                    lam, n)
    >>> print(res.cg.status, res.residual < 1e-6)
    converged True
    >>> f = k(np.array([[0.0], [1.5]]), C) @ res.alpha[:, 0] + y.mean()
    >>> print(f.round(2))
    [0.   0.99]
    """
    xp = _xp(xp)
    B = preconditioner
    rhs, gram, gram_factor = _check_falkon_arguments(
        B, products, rhs, lam, n, xp, max_iter, tol, callback, gram, gram_factor, eps
    )
    lam, n = float(lam), float(n)
    if gram is not None and gram_factor is None:
        gram_factor = _gram_to_factor(gram, xp)
    if gram_factor is not None:
        BHB = _preconditioned_gram(B, gram_factor, lam, n, xp)

        def matvec(U):
            return BHB @ U
    else:

        def matvec(U):
            V = B.apply(U)
            return B.apply_t(products(V) + (lam * n) * B.kmm(V))

    # α is linear in rhs: a huge rhs (1e300) is solved for in units of each column's largest
    # entry, since Bᵀ rhs, the iterates or the products H Bβ overflowed (CG scaled b by NaN,
    # and numpy's "must not contain infs or NaNs" named nothing). A tiny one is left as it
    # is: its α need not be tiny (a kernel of order 1e-300), and in units of 1 it overflowed.
    unit = xp.max(xp.abs(rhs), axis=0)
    top = float(xp.max(unit))
    if top < 1e150:
        unit = None
    else:
        unit = xp.where(unit > 0, unit, 1.0)
        rhs = rhs / unit
    b = B.apply_t(rhs)

    coef_cb = None
    if callback is not None and not getattr(callback, "needs_coefficients", True):

        def coef_cb(it, beta, res):
            callback(it, None, res)

    elif callback is not None:

        def coef_cb(it, beta, res):  # report the coefficients α = B β, not β
            alpha = B.apply(beta)
            if unit is not None:  # in the units of rhs (inf beyond the float range)
                with np.errstate(over="ignore"):
                    alpha = alpha * unit
            callback(it, alpha, res)

    try:
        result = block_cg(matvec, b, xp=xp, max_iter=max_iter, tol=tol, callback=coef_cb, eps=eps)
    except NotPositiveDefiniteError as err:
        # the operator is positive definite in exact arithmetic (products of the form
        # K_nMᵀ S K_nM V): only round-off makes it indefinite, and the error says why
        raise NotPositiveDefiniteError(
            f"{err} FALKON's system Bᵀ(K_nMᵀK_nM + λnK_MM)B is positive definite in exact "
            f"arithmetic; round-off made it indefinite, so it is singular to working "
            f"precision: lam={lam:g} is too small for these centres (nearly dependent ones, "
            "or kernel values far above lam). Raise lam or use fewer centres."
        ) from err
    # the recursion's residual can drift from the truth (a nearly singular K_MM); one more
    # product measures it
    true = b - matvec(result.x)
    # in units of b's largest entry: the squares of targets from about 1e154 on overflow, and
    # inf / inf made the measured residual NaN
    b_top = xp.max(xp.abs(b), axis=0)
    b_top = xp.where(b_top > 0, b_top, 1.0)
    bnorm = _colnorm(b / b_top, xp)
    measured = float(xp.max(_colnorm(true / b_top, xp) / xp.where(bnorm > 0, bnorm, 1.0)))
    alpha = B.apply(result.x)
    if unit is not None:
        with np.errstate(over="ignore", invalid="ignore"):
            alpha = alpha * unit
        if not all_finite(alpha, xp):
            raise ValueError(
                "the coefficients α overflow: rhs is too large in magnitude for this system "
                f"(largest |entry| {top:.3g}); rescale it (or raise lam)."
            )
    return FalkonResult(alpha, result, measured)
