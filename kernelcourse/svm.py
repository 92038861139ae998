r"""Support vector machines: the kernel dual solved by SMO, and the primal on explicit features.

Kernel SVM (Cortes & Vapnik 1995; :doc:`chapter 8 </book/08_svm_dual_and_primal>`). With labels
:math:`y_i \in \{-1, +1\}`, Gram matrix :math:`\mathbf K_{ij} = K(x_i, x_j)` and
:math:`G = [y_i y_j K(x_i, x_j)]`, the
soft-margin dual is

.. math::

    \max_\alpha\; \mathbf 1^T\alpha - \tfrac12 \alpha^T G \alpha
    \quad\text{s.t.}\quad 0 \le \alpha_i \le C,\quad \textstyle\sum_i y_i \alpha_i = 0,

and, by the representer theorem, the classifier is
:math:`f(x) = \sum_i \alpha_i y_i K(x_i, x) + b`. Only the support vectors (α_i > 0) enter the
sum, which is why the solution is sparse (the representer theorem:
:doc:`chapter 2 </book/02_building_an_rkhs>`).

:class:`KernelSVC` solves the dual with sequential minimal optimisation: each step moves two
coordinates along the equality constraint, the pair being chosen by the second-order rule of
Fan, Chen & Lin (2005), as LIBSVM does. :doc:`chapter 8 </book/08_svm_dual_and_primal>` writes
SMO from scratch with the maximal violating pair (the same step, stopping rule and bias); the
package chooses the partner by its second-order gain and extends the method as the fast
solvers do (ThunderSVM, oneDAL): SMO runs in cache on working sets of a few hundred variables
whose kernel rows come from one blocked product, with LIBSVM's kernel-row cache and shrinking
(:func:`smo_solve`). :class:`PrimalSVC` solves
:math:`\min_{w,b} \tfrac12\|w\|^2 + C\sum_i \ell(y_i(w^T z_i + b))` on explicit features
:math:`z_i`; after a random Fourier feature map it is the random-features SVM of Rahimi &
Recht (2007) (:doc:`chapter 7 </book/07_random_kitchen_sinks>`,
:doc:`chapter 8 </book/08_svm_dual_and_primal>`).
"""

from __future__ import annotations

import math
import warnings
from collections import OrderedDict
from functools import partial
from numbers import Real

import numpy as np
from numba import njit
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.class_weight import compute_class_weight
from sklearn.utils.validation import check_is_fitted

from ._progress import Progress
from ._validation import (
    ClassifierScoreMixin,
    as_float_vector,
    check_bool,
    check_class_totals,
    check_count,
    check_fit_input,
    check_labels,
    check_positive,
    count_constraint,
    find_stack_level,
    finite_gram,
    finite_values,
    gamma_constraint,
    kernel_params_of,
    real_constraint,
    sample_weight_array,
    validate_data,
)
from ._validation import label_repr as _label
from .kernels import (
    KERNEL_NAMES,
    Kernel,
    Linear,
    _gram_rows,
    _power_of_two_scale,
    resolve_kernel,
)
from .solvers import _scaled_colnorm, block_cg

__all__ = ["KernelSVC", "PrimalSVC", "smo_solve", "SMOResult"]

# Curvature floor for non-PSD or repeated points, as LIBSVM's TAU.
_TAU = 1e-12
# Working-set size q: a few hundred rows make the kernel product efficient, and the q × q
# subproblem (2 MB at q = 512) still fits in cache.
_WORKING_SET = 512
# A subproblem is solved until its gap falls to this fraction of its initial gap (ThunderSVM's
# rule), or after _LOCAL_STEPS · q steps.
_LOCAL_GAP_FRACTION = 0.1
_LOCAL_STEPS = 10
# KernelSVC computes the whole Gram matrix up to this n (when it fits in cache_size): the
# product is cheap there. Beyond it, rows on demand compute less of it, in float32 when
# the tolerance allows.
_FULL_GRAM_MAX = 2048


# -- the SMO solver --------------------------------------------------------------------------------
class SMOResult:
    """What :func:`smo_solve` returns.

    Attributes
    ----------
    beta : ndarray of shape (n,)
        Signed dual coefficients :math:`\\beta_i = y_i \\alpha_i`.
    intercept : float
        The bias b.
    n_iter : int
        Number of SMO steps taken.
    kkt_gap : float
        Final maximal KKT violation :math:`m(\\alpha) - M(\\alpha)`.
    converged : bool
        Whether ``kkt_gap <= tol`` was reached.
    dual_objective : float
        :math:`\\mathbf 1^T\\alpha - \\frac12\\alpha^T G \\alpha`.
    """

    def __init__(self, beta, intercept, n_iter, kkt_gap, converged, dual_objective):
        self.beta = beta
        self.intercept = intercept
        self.n_iter = n_iter
        self.kkt_gap = kkt_gap
        self.converged = converged
        self.dual_objective = dual_objective


class _FullGram:
    """Rows of a Gram matrix held whole (no shrinking: its rows cost nothing to read)."""

    shrinks = False

    def __init__(self, K):
        self.K = K
        self.diag = np.ascontiguousarray(np.diag(K))

    def block(self, idx):
        return self.K[np.ix_(idx, idx)]

    def prepare(self, q, C, tol):
        pass

    def set_active(self, act):
        pass

    def rows(self, ids):
        """(matrix, row numbers): the rows of variables ``ids`` over the active columns."""
        return self.K, ids

    def worth_shrinking(self, n_act):
        return False

    def whole(self):
        return self.K

    def products(self, beta, cols):
        """(K β)[cols]."""
        return (self.K @ beta)[cols]  # K is symmetric: one streaming pass, no gathered copy


class _RowCache:
    """Kernel rows computed on demand, the missing rows of a working set in one blocked
    product, and kept in a least-recently-used cache of ``size_mb`` (at least the rows of one
    working set). Rows span the active columns only: shrinking compacts the cached rows in
    place, and the cache then holds more of them.

    Rows are computed and stored in float32 when the round-off this puts into the gradient,
    :math:`\\epsilon_{rms} \\max_i C_i \\sqrt n` (a sum of n independent errors of the kernel
    values, measured on a sample), is below tol / 10; otherwise in float64.
    """

    shrinks = True
    # Kernel rows are computed in blocks of at most this many entries (64 MB in float64).
    block_entries = 1 << 23

    def __init__(self, kernel, X, size_mb):
        self.kernel, self.X = kernel, X
        with np.errstate(over="ignore", invalid="ignore"):
            self.diag = np.asarray(kernel.diag(X), dtype=np.float64)
        if not np.isfinite(self.diag).all():
            raise ValueError(
                f"the Gram matrix of the kernel {kernel!r} on X has NaN or infinity on its "
                "diagonal: the inputs are too large in magnitude for this kernel; rescale them."
            )
        self.size_mb = size_mb

    def prepare(self, q, C, tol):
        """Choose the row dtype for box bounds ``C`` and ``tol``; allocate the cache."""
        n = len(self.X)
        self.dtype = np.dtype(np.float64)
        c_max = float(np.max(C)) if len(C) else 0.0
        if np.isfinite(c_max) and n > 1000:
            X32 = self.X.astype(np.float32)
            A, B = self.X[:64], self.X[: min(n, 4096)]
            with np.errstate(over="ignore", invalid="ignore"):
                err = np.asarray(self.kernel(A.astype(np.float32), B.astype(np.float32)), float)
                err -= np.asarray(self.kernel(A, B), dtype=np.float64)
            rms = float(np.sqrt(np.mean(err * err))) if np.isfinite(err).all() else np.inf
            if rms * c_max * math.sqrt(n) <= 0.1 * tol:
                self.dtype, self.X = np.dtype(np.float32), X32
        cap = max(q + 2, int(self.size_mb * 2**20 // (self.dtype.itemsize * n)))
        self.buffer = np.empty(min(cap, n) * n, dtype=self.dtype)  # touched as rows arrive
        # rows are computed into one block reused throughout: a fresh one of this size would
        # cost its page faults again on every call (as much as the product on some hosts)
        self.scratch = np.empty(max(n, min(self.block_entries, cap * n)), dtype=self.dtype)
        self.act = None
        self.set_active(np.arange(n))

    def set_active(self, act):
        n_act = len(act)
        cap = min(len(self.buffer) // n_act, n_act)
        slots = OrderedDict()
        if self.act is not None and n_act < len(self.act):
            # Shrinking: the cached rows of variables still active keep their active columns,
            # moved down the buffer in slot order (a row never lands on one not yet moved).
            old = self.store
            old_pos = np.full(len(self.X), -1)
            old_pos[self.act] = np.arange(len(self.act))
            cols = old_pos[act]
            new_pos = np.full(len(self.X), -1)
            new_pos[act] = np.arange(n_act)
            kept = [(s, g) for g, s in self.slots.items() if new_pos[g] >= 0]
            order = sorted(range(len(kept)), key=lambda k: kept[k][0])[:cap]
            new_slot = {}
            for k, r in enumerate(order):
                s, g = kept[r]
                row = old[s, cols]
                self.buffer[k * n_act : (k + 1) * n_act] = row
                new_slot[g] = k
            for _s, g in kept:  # the LRU order of the rows kept
                if g in new_slot:
                    slots[g] = new_slot[g]
        self.act, self.slots = act, slots
        self.store = self.buffer[: cap * n_act].reshape(cap, n_act)
        self.free = list(range(cap - 1, len(slots) - 1, -1))
        self.Xa = self.X if n_act == len(self.X) else self.X[act]
        # the work on the active points done once, where the kernel can
        kernel = self.kernel
        rows = kernel._against if isinstance(kernel, Kernel) else partial(_gram_rows, kernel)
        self.block = rows(self.Xa)

    def rows(self, ids):
        glob = self.act[ids]
        if len(ids) > len(self.store):  # a request must fit, or a row it hits is evicted
            raise RuntimeError(f"{len(ids)} rows requested from a cache of {len(self.store)}.")
        slot = np.empty(len(ids), dtype=np.intp)
        missing = []
        for k, g in enumerate(glob.tolist()):
            s = self.slots.get(g)
            if s is None:
                missing.append(k)
            else:
                self.slots.move_to_end(g)
                slot[k] = s
        if missing:
            # the rows just requested are the most recent: evicting the oldest spares them
            for k in missing:
                s = self.free.pop() if self.free else self.slots.popitem(last=False)[1]
                self.slots[int(glob[k])] = s
                slot[k] = s
            missing = np.asarray(missing)
            n_act = self.store.shape[1]
            step = max(1, len(self.scratch) // n_act)
            for start in range(0, len(missing), step):
                part = missing[start : start + step]
                out = self.scratch[: len(part) * n_act].reshape(len(part), n_act)
                self.store[slot[part]] = self.block(self.Xa[ids[part]], out)
        return self.store, slot

    def worth_shrinking(self, n_act):
        """Whether the cache holds less than half of the active rows. Only then are rows
        computed again and again, and shorter rows pay for shrinking's copies and for the
        gradient it rebuilds at the end; measured on Covertype, shrinking slows the solve
        where the cache holds most rows."""
        return 2 * (len(self.buffer) // n_act) < n_act

    def whole(self):
        store, slot = self.rows(np.arange(len(self.act)))
        return np.asarray(store[slot], dtype=np.float64)

    def products(self, beta, cols):
        """(K β)[cols], a block of the nonzero β at a time."""
        sv = np.flatnonzero(beta)
        out = np.zeros(len(cols))
        Xc = self.X[cols]
        step = max(1, self.block_entries // max(1, len(cols)))
        for start in range(0, len(sv), step):
            part = sv[start : start + step]
            out += beta[part] @ np.asarray(finite_gram(self.kernel, self.X[part], Xc), float)
        return out


def _check_user_gram(K, name="gram"):
    """A Gram matrix passed by hand: real, finite, symmetric (to round-off) and with no
    negative diagonal entry (which no positive semidefinite matrix has), or an error naming
    ``name``; the estimators build theirs and skip this O(n²) check."""
    if np.iscomplexobj(K) or not (np.issubdtype(K.dtype, np.number) or K.dtype == bool):
        raise TypeError(f"{name} must be a real numeric matrix, got dtype {K.dtype}.")
    if K.dtype.kind in "biu":  # K - K.T below: numpy has no boolean subtraction
        K = K.astype(np.float64)
    if not np.isfinite(K).all():
        raise ValueError(f"{name} contains NaN or infinity.")
    scale = float(np.abs(K).max()) if K.size else 0.0
    if np.abs(K - K.T).max(initial=0.0) > 1e-10 * max(scale, 1e-300):
        raise ValueError(
            f"{name} is not symmetric: K_ij != K_ji beyond round-off; a Gram matrix "
            "K_ij = K(x_i, x_j) is symmetric (pass (K + K.T) / 2 if that is what you meant)."
        )
    if np.diagonal(K).min(initial=0.0) < -1e-10 * max(scale, 1e-300):
        raise ValueError(
            f"{name} has a negative diagonal entry K_ii = K(x_i, x_i), so it is not positive "
            "semidefinite and is not a Gram matrix of a kernel."
        )


@njit(cache=True, nogil=True)
def _smo_steps(Q, d, v, beta, U, L, tol, fraction, max_steps, hard, it0):
    """SMO on one (sub)problem, in place: ``beta`` and ``v = y − Qβ`` (restricted to it).

    Each step takes i = argmax over I_up of v and j by the second-order gain among I_low,
    as :func:`smo_solve` describes, and moves the pair by the clipped Newton step. Stops when
    the gap m − M is at most max(tol, fraction · initial gap), or after ``max_steps`` steps.
    With ``hard`` (some C = ∞), every 1000 steps (counted from ``it0``) it checks whether β
    has grown past 1e12: the dual is then unbounded.

    Returns
    -------
    steps : int
    gap : float
        m − M at the last check.
    diverged : bool
    """
    q = v.shape[0]
    steps = 0
    eps = tol
    while True:
        i = -1
        m = -np.inf
        M = np.inf
        for t in range(q):
            vt = v[t]
            if beta[t] < U[t] and vt > m:
                m = vt
                i = t
            if beta[t] > L[t] and vt < M:
                M = vt
        gap = m - M
        if steps == 0:
            eps = max(tol, fraction * gap)
        if not gap > eps or steps >= max_steps:
            return steps, gap, False
        # j: the largest second-order gain (v_i − v_t)² / a_it over t in I_low, v_t < v_i
        di = d[i]
        j = -1
        best = -1.0
        aj = 1.0
        for t in range(q):
            if beta[t] > L[t] and v[t] < m:
                a = Q[i, t] * -2.0 + d[t] + di
                if a < _TAU:
                    a = _TAU
                diff = m - v[t]
                s = diff * diff / a
                if s > best:
                    best = s
                    j = t
                    aj = a
        lam = (m - v[j]) / aj
        room_i = U[i] - beta[i]
        room_j = beta[j] - L[j]
        if lam >= room_i:
            lam = room_i
        if lam >= room_j:
            lam = room_j
        beta[i] = U[i] if lam == room_i else beta[i] + lam
        beta[j] = L[j] if lam == room_j else beta[j] - lam
        for t in range(q):
            v[t] -= (Q[i, t] - Q[j, t]) * lam
        steps += 1
        if hard and (it0 + steps) % 1000 == 0:
            for t in range(q):
                if abs(beta[t]) > 1e12:
                    return steps, gap, True


@njit(cache=True, nogil=True)
def _subtract_rows(v, rows, slots, coef):
    """v −= Σ_k coef_k rows[slots_k]: a column block at a time, so that v stays in cache."""
    n = v.shape[0]
    for start in range(0, n, 4096):
        stop = min(n, start + 4096)
        for k in range(len(slots)):
            c = coef[k]
            r = rows[slots[k]]
            for t in range(start, stop):
                v[t] -= c * r[t]


def smo_solve(
    gram, y, C, *, tol=1e-3, max_iter=None, shrinking=True, verbose=None, working_set_size=None
):
    r"""Solve the SVM dual by SMO on blocked working sets, with second-order pair selection.

    Works with the signed coefficients :math:`\beta = y \odot \alpha`, so the dual reads
    :math:`\max_\beta\; y^T\beta - \frac12 \beta^T \mathbf K \beta` with
    :math:`\sum_i \beta_i = 0` and :math:`L_i \le \beta_i \le U_i` (box [0, C_i] for
    y_i = +1, [−C_i, 0] for y_i = −1). With :math:`v = y - \mathbf K\beta` (which is
    :math:`-y \odot \nabla` of LIBSVM's minimisation form), the index sets
    :math:`I_{up} = \{t: \beta_t < U_t\}`, :math:`I_{low} = \{t: \beta_t > L_t\}` and
    :math:`m = \max_{I_{up}} v`, :math:`M = \min_{I_{low}} v`, the KKT conditions hold up to
    ``tol`` when :math:`m - M \le` ``tol`` (LIBSVM's stopping rule).

    An SMO step takes :math:`i = \arg\max_{I_{up}} v_t` and
    :math:`j = \arg\max_{t \in I_{low},\, v_t < v_i} (v_i - v_t)^2 / a_{it}` with
    :math:`a_{it} = K_{ii} + K_{tt} - 2K_{it}` (Fan, Chen & Lin 2005), then moves
    :math:`\beta_i \mathrel{+}= \lambda`, :math:`\beta_j \mathrel{-}= \lambda` by the clipped
    Newton step :math:`\lambda = (v_i - v_j)/a_{ij}`. That is the whole solver while the
    problem has at most q = ``working_set_size`` variables (compiled; the Gram matrix is the
    subproblem). A larger problem is solved as ThunderSVM and oneDAL do (Wen et al. 2018):

    1. *working set*: q variables, half of them new violators (the largest :math:`v_t` in
       :math:`I_{up}` with :math:`v_t > M`, the first-order rule, and the largest
       second-order gains :math:`(m - v_t)^2/a_{it}` in :math:`I_{low}` with the maximal
       violator i, plus the extreme pair itself, so the subproblem always violates the KKT
       conditions), the other half kept from the previous working set, whose rows are
       cached and whose repeated choice damps zig-zagging between sets;
    2. their kernel rows in one blocked product (rows not in the LRU cache);
    3. SMO as above on the q × q block, until the subproblem's own gap falls to a tenth of
       its initial value (or tol): solving it exactly is wasted, the next set changes it;
    4. :math:`v \mathrel{-}= \mathbf K_{:,W}\,\Delta\beta_W`, one pass over the q rows.

    The work per SMO step is O(q) in cache instead of O(n) over two kernel rows, and the
    kernel rows are computed by matrix products, a block at a time. With ``shrinking``,
    variables at a bound whose :math:`v_t` points out of the box (LIBSVM's rule: at
    :math:`U_t` with :math:`v_t > m`, or at :math:`L_t` with :math:`v_t < M`) are dropped once
    they are many; at convergence the gradient of the dropped ones is rebuilt and the KKT
    conditions are checked on the whole problem again. The rebuild is LIBSVM's
    ``reconstruct_gradient`` without its running ``G_bar``: :math:`v_t` was exact when t was
    dropped, so only the :math:`\beta_j` that moved since then enter
    (:math:`v_t \mathrel{-}= \sum_j K_{tj}\,\Delta\beta_j`). A support vector bound at C then
    and now, most of them on noisy data, costs nothing, as in ``G_bar``, and no kernel row
    over the dropped columns (which the cache does not hold) is needed while solving. LIBSVM
    also unshrinks once at a gap of 10 tol; here that would drop every cached row (rows span
    the active columns), while the final rebuild is cheap. Shrinking pays only where rows
    would be computed again and again, so it runs only while the row cache holds less than
    half of the active rows.

    Parameters
    ----------
    gram : array of shape (n, n), _FullGram or _RowCache
        The Gram matrix :math:`\mathbf K` (finite), or the estimator's access to it: held
        whole, or rows computed on demand and cached.
    y : ndarray of shape (n,)
        Labels in {−1, +1} (float).
    C : float or ndarray of shape (n,)
        Per-sample box bound :math:`C_i >= 0` (``np.inf`` allowed: hard margin).
    tol : float
        KKT tolerance on :math:`m - M`.
    max_iter : int or None
        Limit on SMO steps (over all subproblems); None means :func:`_default_max_iter`
        (proportional to n, as LIBSVM's 100 n, with a floor of 10⁵ steps).
    shrinking : bool
        Use the shrinking heuristic (with rows on demand, while the cache holds less than
        half of the active rows).
    verbose : None, bool or int >= 0, default=None
        Progress lines (steps, KKT gap m − M, elapsed time), checked every 64 steps or every
        working set: by default only once the solve has run for 30 s, then every 30 s, on
        standard error; 0 never; 1 at most every second, 2 every check, on standard output
        (:mod:`kernelcourse._progress`).
    working_set_size : int or None
        q; None means 512.

    Returns
    -------
    SMOResult

    See Also
    --------
    KernelSVC
        The estimator built on it.
    SMOResult
        What it returns.

    References
    ----------
    Fan, Chen & Lin, "Working set selection using second order information for training
    support vector machines", JMLR 6 (2005). Joachims, "Making large-scale SVM learning
    practical" (1999) for shrinking. Wen, Shi, Li, He & Chen, "ThunderSVM: a fast SVM
    library on GPUs and CPUs", JMLR 19 (2018).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelcourse.kernels import RBF
    >>> from kernelcourse.svm import smo_solve
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 2))
    >>> y = np.where(X[:, 0] ** 2 + X[:, 1] ** 2 > 1.4, 1.0, -1.0)
    >>> result = smo_solve(RBF(gamma=1.0)(X), y, 1.0)
    >>> print(result.converged, round(result.dual_objective, 1))
    True 53.0
    """
    if isinstance(gram, np.ndarray):
        if gram.ndim != 2 or gram.shape[0] != gram.shape[1]:
            raise ValueError(f"gram must be a square Gram matrix, got shape {gram.shape}.")
        _check_user_gram(gram)
        gram = _FullGram(np.asarray(gram, dtype=np.float64))
    if not isinstance(gram, _FullGram | _RowCache):
        raise TypeError(
            f"gram must be a square array or the solver's row access, got {type(gram).__name__}."
        )
    n = len(gram.diag)
    y = as_float_vector(y, "y", n)
    if not np.isin(y, (-1.0, 1.0)).all():
        raise ValueError("y must hold labels -1 and +1 only (encode the two classes first).")
    if np.asarray(C).dtype.kind not in "iuf":  # text, None or bools are no bounds
        raise TypeError(f"C must be a real number or array of them, got {C!r}.")
    C = np.broadcast_to(np.asarray(C, dtype=np.float64), (n,)) if np.ndim(C) == 0 else C
    C = np.asarray(C, dtype=np.float64)
    if C.shape != (n,) or np.isnan(C).any() or (C < 0).any():
        raise ValueError(f"C must be a number or ({n},) array of bounds >= 0 (inf allowed).")
    tol = check_positive(tol, "tol")  # a float: the compiled loops failed to type 10**20
    if max_iter is not None:
        max_iter = check_count(max_iter, "max_iter")
    shrinking = check_bool(shrinking, "shrinking")
    q = (
        _WORKING_SET
        if working_set_size is None
        else check_count(working_set_size, "working_set_size")
    )
    q = max(q, 2)
    if isinstance(gram, _FullGram) and not np.isfinite(gram.K).all():
        raise ValueError("gram contains NaN or infinity.")
    top = float(np.max(gram.diag)) if n else 0.0
    if top > np.finfo(np.float64).max / 2:
        # the curvatures K_ii + K_tt − 2K_it overflow to ±∞ and the steps to NaN: SMO then
        # only runs out of max_iter
        raise ValueError(
            f"gram's largest diagonal entry is {top:.3g}: SMO's curvatures "
            "K_ii + K_jj − 2K_ij overflow floating point. Scale gram by c and C by 1/c (the "
            "coefficients then scale by 1/c), or rescale the inputs of the kernel."
        )
    if 0 < top < 1e4 * _TAU:
        # every curvature a_ij is then near the absolute floor τ, which takes over the steps
        warnings.warn(
            f"gram's largest diagonal entry is {top:.3g}, near SMO's curvature floor "
            f"τ = {_TAU:g}: the solution is unreliable. Scale gram by c and C by 1/c "
            "(the coefficients then scale by 1/c).",
            RuntimeWarning,
            stacklevel=find_stack_level(),
        )
    if max_iter is None:
        max_iter = _default_max_iter(n)
    progress = verbose if isinstance(verbose, Progress) else Progress("smo_solve", verbose)
    report = bool(progress)
    U = np.where(y > 0, C, 0.0)
    L = np.where(y > 0, 0.0, -C)
    beta = np.zeros(n)
    v = y.copy()
    diag = gram.diag
    hard = bool(np.isinf(C).any())
    use_shrink = shrinking and gram.shrinks
    gram.prepare(q, C, tol)
    diverged = False
    inf = np.inf

    def activate(act):
        gram.set_active(act)
        return act, beta[act], v[act], U[act], L[act], diag[act]

    def rebuild():
        # The gradient of the shrunk variables, LIBSVM's reconstruct_gradient done against a
        # snapshot: v_t was exact when t was dropped, and since then only the β_j that moved
        # change it. Variables bound at the same end then and now (most support vectors)
        # cost nothing, as with LIBSVM's G_bar, and none needs a full-length kernel row.
        beta[act], v[act] = ba, va
        for out, b0 in snapshots:
            v[out] -= gram.products(beta - b0, out)
        snapshots.clear()

    act, ba, va, Ua, La, da = activate(np.arange(n))
    snapshots = []  # (variables dropped by one shrinking, β when they were dropped)
    pos = np.arange(n)  # position of each variable among the active ones (−1: shrunk)
    prev = np.empty(0, dtype=np.intp)  # the previous working set (global indices)
    Q = None
    it = rounds = 0
    gap = inf
    converged = False
    while True:
        na = len(act)
        if na <= q:
            # The whole (active) problem is one subproblem: plain SMO, compiled.
            if Q is None:
                Q = np.ascontiguousarray(gram.whole())
            budget = max_iter - it
            steps, gap, div = _smo_steps(
                Q, da, va, ba, Ua, La, tol, 0.0, min(64, budget) if report else budget, hard, it
            )
            it += steps
        else:
            up, low = ba < Ua, ba > La
            vu = np.where(up, va, -inf)
            vl = np.where(low, va, inf)
            i = int(vu.argmax())
            j0 = int(vl.argmin())
            m, M = float(vu[i]), float(vl[j0])
            gap = m - M
            div = False
            if use_shrink and gap > tol and rounds % 8 == 7 and gram.worth_shrinking(na):
                # LIBSVM's be_shrunk rule: at a bound, with v_t further out of the box than
                # the extreme of the other side, t is in no violating pair at present.
                stuck = (~up & (va > m)) | (~low & (va < M))
                if int(stuck.sum()) >= max(na // 4, q // 2):
                    beta[act], v[act] = ba, va
                    snapshots.append((act[stuck], beta.copy()))
                    act, ba, va, Ua, La, da = activate(act[~stuck])
                    pos = np.full(n, -1)
                    pos[act] = np.arange(len(act))
                    prev = prev[pos[prev] >= 0]
                    Q = None
                    rounds += 1
                    continue
            if gap > tol and it < max_iter:
                ws = _working_set(
                    gram, i, j0, m, M, vu, vl, da, q, pos[prev] if len(prev) else prev
                )
                rows, slot = gram.rows(ws)
                bw, vw = ba[ws], va[ws]
                b0 = bw.copy()
                steps, _, div = _smo_steps(
                    rows[np.ix_(slot, ws)].astype(np.float64),
                    da[ws],
                    vw,
                    bw,
                    Ua[ws],
                    La[ws],
                    tol,
                    _LOCAL_GAP_FRACTION,
                    min(_LOCAL_STEPS * q, max_iter - it),
                    hard,
                    it,
                )
                it += steps
                delta = bw - b0
                moved = np.flatnonzero(delta)
                ba[ws] = bw
                _subtract_rows(va, rows, slot[moved], delta[moved])
                prev = act[ws]
                rounds += 1
        if div:
            diverged = True
            break
        if not gap > tol:
            if na < n:
                # Unshrink: rebuild v of the dropped variables, check the KKT conditions again.
                rebuild()
                act, ba, va, Ua, La, da = activate(np.arange(n))
                pos, prev, Q, use_shrink = np.arange(n), act[:0], None, False
                continue
            converged = True
            break
        if it >= max_iter:
            break
        if report and progress.due():
            progress.report(
                f"SMO step {it}: KKT gap m − M = {gap:.3e} (tol {tol:g}), "
                f"{na} of {n} variables active"
            )
    rebuild()  # stopped early while shrunk: the gradient of the dropped ones is stale
    if isinstance(gram, _FullGram):
        v = y - gram.K @ beta  # one streaming pass: the exact gradient at the end
    f = y - v
    up, low = beta < U, beta > L
    free = up & low
    if free.any():
        b = float(np.mean(v[free]))
    else:
        # any b in [max over I_up of v, min over I_low of v] meets the KKT conditions: its
        # midpoint, or its finite end when one set is empty (one class, or every C_i = 0)
        hi = float(v[up].max()) if up.any() else -np.inf
        lo = float(v[low].min()) if low.any() else np.inf
        if np.isfinite(hi) and np.isfinite(lo):
            b = 0.5 * (hi + lo)
        else:
            b = hi if np.isfinite(hi) else lo if np.isfinite(lo) else 0.0
    obj = float(y @ beta - 0.5 * beta @ f)
    if not isinstance(verbose, Progress):
        progress.finish(f"SMO stopped after {it} steps: KKT gap m − M = {gap:.3e} (tol {tol:g})")
    if diverged:
        obj = np.inf
    return SMOResult(beta, b, it, float(gap), converged, obj)


def _working_set(gram, i, j0, m, M, vu, vl, da, q, prev):
    """The next working set (active positions): new violators by the first-order rule on
    I_up and the second-order gain on I_low, the extreme pair (i, j0), then members of the
    previous working set ``prev`` up to q."""
    n_new = q if len(prev) == 0 else q // 2
    half = max(1, (n_new - 2) // 2)  # room for the pair (i, j0): at most q in all
    up = np.flatnonzero(vu > M)
    if len(up) > half:
        up = up[np.argpartition(vu[up], len(up) - half)[len(up) - half :]]
    low = np.flatnonzero(vl < m)
    if len(low) > half:
        rows, slot = gram.rows(np.array([i]))
        a = da[low] + da[i] - 2.0 * rows[slot[0], low]
        gain = (m - vl[low]) ** 2 / np.maximum(a, _TAU)
        low = low[np.argpartition(gain, len(gain) - half)[len(gain) - half :]]
    ws = np.union1d(np.union1d(up, low), [i, j0])
    if len(ws) < q and len(prev):
        keep = prev[(prev >= 0) & ~np.isin(prev, ws)]
        ws = np.union1d(ws, keep[: q - len(ws)])
    return ws.astype(np.intp)


def _default_max_iter(n):
    """SMO's default step limit: 100 n (LIBSVM's rule, without its 10⁷ floor, which at
    O(n) numpy per step can run for minutes), and at least 10⁵."""
    return max(10**5, 100 * n)


def _gram_matrix(kernel, X):
    """The full Gram matrix K(X, X) in float64 (the kernel object builds it with one product);
    NaN or infinity raises, naming the kernel."""
    return np.asarray(finite_gram(kernel, X), dtype=np.float64)


def _ovr_shaped(votes, confidences):
    """(n, n_classes) decision values from one-vs-one votes: the vote count plus the summed
    confidences squashed into (−1/3, 1/3), so the argmax is the vote winner with ties broken
    by confidence (the same construction as scikit-learn's SVC)."""
    scaled = confidences / (3 * (np.abs(confidences) + 1))
    return votes + scaled


def _box_weights(est, sample_weight, X, y_enc, *, liblinear=False):
    """Per-sample weights s_i · w_{y_i} (sample and class weights, both scaling C), checked
    so that every class keeps a positive total weight, as LIBSVM requires. Sets
    ``class_weight_``; "balanced" counts the samples as LIBSVM does, or weighs them by
    s_i as LIBLINEAR does (``liblinear=True``). Returns the box weights and the checked s_i
    alone (for one-vs-rest problems that weigh only their positive class)."""
    s_i = sample_weight_array(sample_weight, X)
    sw = s_i
    classes = est.classes_
    if isinstance(est.class_weight, dict):
        unknown = set(est.class_weight) - set(classes.tolist())
        if unknown:
            raise ValueError(
                f"class_weight names labels {sorted(unknown, key=str)} that are not in y "
                f"(classes {classes.tolist()})."
            )
        for label, value in est.class_weight.items():
            if isinstance(value, bool | np.bool_):  # True was fitted as the weight 1
                raise TypeError(
                    f"class_weight[{_label(label)}] is {value!r}, a bool; class weights are "
                    "real numbers >= 0 (1.0 leaves a class as it is)."
                )
        bad = {k: v for k, v in est.class_weight.items() if not isinstance(v, Real)}
        if bad:  # scikit-learn's float() error ("could not convert string") names no argument
            raise TypeError(f"class_weight must map labels to real numbers, got {bad!r}.")
        for label, value in est.class_weight.items():
            try:
                float(value)
            except OverflowError:  # Python's "int too large to convert to float"
                raise ValueError(
                    f"class_weight[{_label(label)}] is an integer beyond the float range "
                    "(about 1.8e308); class weights must be finite and >= 0."
                ) from None
    est.class_weight_ = compute_class_weight(
        est.class_weight,
        classes=classes,
        y=classes[y_enc],
        sample_weight=sw if liblinear and sample_weight is not None else None,
    ).astype(np.float64)
    if not np.all(np.isfinite(est.class_weight_)) or np.any(est.class_weight_ < 0):
        raise ValueError(f"class_weight must be finite and >= 0, got {est.class_weight!r}.")
    with np.errstate(over="ignore"):
        sw = sw * est.class_weight_[y_enc]
    if not np.isfinite(sw).all():  # infinite box bounds would mean a hard margin
        raise ValueError(
            "sample_weight times class_weight overflows floating point (largest "
            f"sample_weight {float(s_i.max()):.3g}, largest class weight "
            f"{float(est.class_weight_.max()):.3g}); lower them (only their ratios and their "
            "product with C matter)."
        )
    check_class_totals(y_enc, sw, classes, "sample_weight and class_weight")
    return sw, s_i


# -- KernelSVC ------------------------------------------------------------------------------------
class KernelSVC(ClassifierScoreMixin, ClassifierMixin, BaseEstimator):
    r"""Kernel support vector classifier: the soft-margin dual solved by SMO.

    Solves :math:`\max_\alpha \mathbf 1^T\alpha - \frac12\alpha^T G\alpha` subject to
    :math:`0 \le \alpha_i \le C` and :math:`\sum_i y_i\alpha_i = 0`, with
    :math:`G_{ij} = y_i y_j K(x_i, x_j)` (:doc:`chapter 8 </book/08_svm_dual_and_primal>`), by SMO
    with the
    second-order pair selection of Fan, Chen & Lin (2005) and LIBSVM's KKT stopping rule,
    extended for large n to working sets of 512 variables solved in cache, their kernel
    rows computed in one blocked product (see :func:`smo_solve`). The decision function is
    the representer form :math:`f(x) = \sum_{i \in SV} \alpha_i y_i K(x_i, x) + b`, with b
    averaged over the free support vectors (0 < α_i < C). ``C=np.inf`` is the hard-margin SVM.

    More than two classes are handled one-vs-one, as LIBSVM: one binary SVM per pair of
    classes, prediction by votes.

    Parameters
    ----------
    kernel : str, Kernel or "precomputed", default="rbf"
        A name from :data:`kernelcourse.kernels.KERNEL_NAMES`, a
        :class:`kernelcourse.kernels.Kernel` object, or "precomputed" (then ``X`` in ``fit``
        is the Gram matrix K(X, X) and in ``predict`` the block K(X_test, X_train); useful
        for kernels on strings).
    gamma : float > 0, "scale" or None, default=None
        γ of the "rbf", "laplacian" and "polynomial" kernels; None means 1 / n_features and
        "scale" 1 / (n_features · Var X), the variance of all the entries of X, as ``SVC``.
    C : float > 0, default=1.0
        Box bound C of the dual (penalty on margin violations); ``np.inf`` for hard margin,
        which needs classes separable by the kernel (otherwise the dual is unbounded: SMO
        stops at ``max_iter`` with a warning, or with an error once α exceeds 1e12).
    tol : float > 0, default=1e-3
        KKT tolerance: stop when the maximal violating pair has gap m(α) − M(α) ≤ tol.
    max_iter : int or None, default=None
        Limit on SMO steps (per binary problem); None means 100 n (at least 10⁵), LIBSVM's
        rule without its floor of 10⁷. Stopping there warns
        (:class:`~sklearn.exceptions.ConvergenceWarning`) with the KKT gap reached.
    cache_size : float > 0, default=1024
        Memory in MB for kernel values. Up to n = 2048, if the whole n × n float64 Gram
        matrix fits, it is computed once with one matrix product; otherwise kernel rows are
        computed on demand, a working set's missing rows in one product, and kept in a
        least-recently-used cache of this size (at least one working set's rows). The rows
        are float32 when the round-off this adds to the gradient is below tol / 10 (as it
        is for the RBF kernel on standardised data), else float64.
    shrinking : bool, default=True
        Drop variables stuck at a bound from the problem while they stay there (LIBSVM's
        heuristic), checking them again before stopping. It runs where it pays: with rows
        on demand, once the cache holds less than half of the active rows.
    kernel_params : dict or None, default=None
        Further parameters of a named kernel (``degree``, ``coef0``, ``nu``, ...).
    class_weight : dict, "balanced" or None, default=None
        Weight :math:`w_c` of each class: sample i gets box bound
        :math:`C \cdot s_i \cdot w_{y_i}`, as scikit-learn's ``SVC``. "balanced" uses
        :math:`w_c = n / (n_{\text{classes}} \cdot n_c)`, for imbalanced data such as Adult
        (3:1).
    verbose : None, bool or int >= 0, default=None
        Progress of SMO (steps, KKT gap m − M, elapsed time). None: silent unless the fit
        runs longer than 30 s, then a line every 30 s on standard error (so a long fit never
        looks like a hang, while short ones print nothing); 0: never; 1: a line at most every
        second, on standard output; 2: every 64 steps or working set
        (:mod:`kernelcourse._progress`).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    class_weight_ : ndarray of shape (n_classes,)
        The weight of each class (ones when ``class_weight=None``).
    kernel_ : Kernel or "precomputed"
        The kernel used.
    support_ : ndarray of shape (n_SV,)
        Indices of the support vectors (α_i > 0 in at least one binary problem).
    support_vectors_ : ndarray of shape (n_SV, n_features)
        The support vectors; shape (n_SV, 0) for "precomputed" (see Notes).
    n_support_ : ndarray of shape (n_classes,)
        Number of support vectors per class.
    dual_coef_ : ndarray of shape (n_pairs, n_SV)
        :math:`y_i\alpha_i` of each support vector in each binary problem (zero where a support
        vector does not belong to the pair); n_pairs = 1 for two classes. In pair (a, b),
        :math:`y_i = +1` for class b (the later one in ``classes_``).
    intercept_ : ndarray of shape (n_pairs,)
        The bias b of each binary problem.
    coef_ : ndarray of shape (n_pairs, n_features)
        Only for the linear kernel :math:`x^T A y`, as in scikit-learn's ``SVC``: the primal
        weights :math:`w = A\sum_i y_i\alpha_i x_i` of each binary problem, so that
        :math:`f(x) = w^T x + b` (positive for the later class of the pair). Any other kernel
        has no ``coef_``: :math:`w` lives in its feature space.
    dual_objective_ : float or ndarray of shape (n_pairs,)
        :math:`\mathbf 1^T\alpha - \frac12\alpha^T G\alpha` at the solution.
    kkt_gap_ : ndarray of shape (n_pairs,)
        Final maximal KKT violation m(α) − M(α).
    n_iter_ : ndarray of shape (n_pairs,)
        SMO steps per binary problem.
    n_features_in_ : int

    See Also
    --------
    smo_solve
        The solver, on a precomputed Gram matrix.
    PrimalSVC
        The primal on explicit (random) features, linear in n.
    kernelcourse.scale.NystroemKRRClassifier
        Squared loss instead of the hinge, on M Nyström centres.

    Notes
    -----
    Deliberate differences from scikit-learn's ``SVC``:

    * default γ: ``gamma=None`` means 1 / n_features (the lectures' choice, and scikit-learn's
      ``KernelRidge`` and ``Nystroem``), where ``SVC`` defaults to ``gamma="scale"``,
      1 / (n_features · X.var()); pass ``gamma="scale"`` to match it.
    * ``kernel="polynomial"`` is :math:`(\gamma x^Ty + c_0)^p` with degree p = 2 and
      :math:`c_0 = 1` by default (``kernel_params``), where ``SVC`` uses degree 3 and
      coef0 = 0; the lectures' examples are quadratic, and :math:`c_0 \ge 0` keeps the
      kernel positive semidefinite.
    * the default step limit is 100 n (LIBSVM's rule without its 10⁷ floor), with a warning.
    * no probability estimates: there is no ``probability`` parameter and no
      ``predict_proba`` (``SVC`` fits Platt's sigmoid by an internal cross-validation);
      ``sklearn.calibration.CalibratedClassifierCV(KernelSVC())`` gives them from
      :meth:`decision_function`.
    * with ``kernel="precomputed"``, ``support_vectors_`` has one empty row per support vector,
      shape (n_SV, 0), where ``SVC`` gives (0, 0): its length is the number of support
      vectors, ``n_support_.sum()``, whatever the kernel.

    References
    ----------
    Fan, Chen & Lin, "Working set selection using second order information for training
    support vector machines", JMLR 6 (2005). Chang & Lin, "LIBSVM", ACM TIST (2011).
    Wen, Shi, Li, He & Chen, "ThunderSVM: a fast SVM library on GPUs and CPUs", JMLR 19
    (2018). Platt, "Fast training of support vector machines using sequential minimal
    optimization" (1998). Keerthi, Shevade, Bhattacharyya & Murthy, "Improvements to Platt's
    SMO algorithm for SVM classifier design", Neural Computation 13 (2001). Joachims, "Making
    large-scale SVM learning practical" (1999). The dual, SMO and the sparsity of α:
    :doc:`chapter 8 </book/08_svm_dual_and_primal>`.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelcourse.svm import KernelSVC
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 2))
    >>> y = (X[:, 0] ** 2 + X[:, 1] ** 2 > 1.4).astype(int)
    >>> svc = KernelSVC(gamma=1.0, C=1.0).fit(X, y)
    >>> print(round(svc.score(X, y), 2))
    0.99
    """

    _parameter_constraints = {
        "kernel": [StrOptions(set(KERNEL_NAMES) | {"poly", "gaussian", "precomputed"}), Kernel],
        "gamma": gamma_constraint(),
        "C": [real_constraint(0, None, closed="right")],
        "tol": [real_constraint(0, None, closed="neither")],
        "max_iter": [count_constraint(), None],
        "cache_size": [real_constraint(0, None, closed="neither")],
        "shrinking": ["boolean"],
        "kernel_params": [dict, None],
        "class_weight": [dict, StrOptions({"balanced"}), None],
        "verbose": ["verbose", None],
    }

    def __init__(
        self,
        kernel="rbf",
        *,
        gamma=None,
        C=1.0,
        tol=1e-3,
        max_iter=None,
        cache_size=1024,
        shrinking=True,
        kernel_params=None,
        class_weight=None,
        verbose=None,
    ):
        self.kernel = kernel
        self.gamma = gamma
        self.C = C
        self.tol = tol
        self.max_iter = max_iter
        self.cache_size = cache_size
        self.shrinking = shrinking
        self.kernel_params = kernel_params
        self.class_weight = class_weight
        self.verbose = verbose

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.kernel == "precomputed"
        return tags

    def _precomputed(self):
        return isinstance(self.kernel, str) and self.kernel == "precomputed"

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit one SVM per pair of classes.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or (n_samples, n_samples) Gram
            matrix when ``kernel="precomputed"``.
        y : array-like of shape (n_samples,)
            Class labels (any two or more distinct values: strings, {0, 1}, {−1, 1}, ...).
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative weights; sample i gets box bound C·sample_weight[i] (as LIBSVM).

        Returns
        -------
        self
        """
        check_fit_input(X, y)
        X, y = validate_data(self, X, y, dtype=np.float64, order="C")
        check_labels(y)
        n = X.shape[0]
        if self._precomputed() and X.shape[0] != X.shape[1]:
            raise ValueError(
                f"with kernel='precomputed', X must be the square Gram matrix K(X, X), got "
                f"shape {X.shape}."
            )
        self.classes_, y_enc = np.unique(y, return_inverse=True)
        if len(self.classes_) < 2:
            raise ValueError(
                f"y has only one class ({_label(self.classes_[0])}); an SVM needs at least two."
            )
        sw, _ = _box_weights(self, sample_weight, X, y_enc)
        if self._precomputed():
            if self.gamma is not None or self.kernel_params:
                # as for a kernel object: the Gram matrix passed in already holds them
                raise ValueError(
                    "gamma and kernel_params do not apply to kernel='precomputed' (X is the "
                    "Gram matrix itself); leave them as None."
                )
            self.kernel_ = "precomputed"
            _check_user_gram(X, "X (the precomputed Gram matrix)")
            gram_all = _FullGram(X)
        else:
            params = kernel_params_of(self.kernel_params)
            self.kernel_ = resolve_kernel(
                self.kernel, gamma=self.gamma, n_features=X.shape[1], X=X, **params
            )
            # in float: an integer cache_size of a small dtype (np.int8) overflows times 2**20
            cache_bytes = float(self.cache_size) * 2**20
            if n <= _FULL_GRAM_MAX and 8.0 * n * n <= cache_bytes:
                gram_all = _FullGram(_gram_matrix(self.kernel_, X))
            else:
                gram_all = None
        C = float(self.C)
        # box bounds C·s_i·w_{y_i}, without ∞·0 = NaN for a zero weight under C = ∞
        with np.errstate(over="ignore"):
            box = np.multiply(C, sw, out=np.zeros(n), where=sw > 0)
        if not np.isfinite(box).all() and np.isfinite(C):
            # an overflow would silently turn the soft margin into the hard one
            raise ValueError(
                f"C={self.C!r} times sample_weight and class_weight overflows floating point "
                f"(largest weight {float(sw.max()):.3g}); lower C or the weights (only their "
                "product C·s_i·w_c enters the problem)."
            )
        k = len(self.classes_)
        pairs = [(a, b) for a in range(k) for b in range(a + 1, k)]
        betas, intercepts, objs, gaps, iters = [], [], [], [], []
        progress = Progress("KernelSVC.fit", self.verbose)
        for a, b in pairs:
            if k > 2:
                progress.task = f"KernelSVC.fit, classes {self.classes_[a]} vs {self.classes_[b]}"
            if k == 2:
                idx = np.arange(n)
            else:
                idx = np.flatnonzero((y_enc == a) | (y_enc == b))
            yy = np.where(y_enc[idx] == b, 1.0, -1.0)
            if gram_all is None:
                gram = _RowCache(self.kernel_, X[idx], float(self.cache_size))
            elif k == 2:
                gram = gram_all
            else:
                gram = _FullGram(gram_all.block(idx))
            res = smo_solve(
                gram,
                yy,
                box[idx],
                tol=self.tol,
                max_iter=self.max_iter,
                shrinking=self.shrinking,
                verbose=progress,
            )
            if np.isinf(C) and not np.isfinite(res.dual_objective):
                raise ValueError(
                    f"C=inf (hard margin) but classes {_label(self.classes_[a])} and "
                    f"{_label(self.classes_[b])} are not separable with this kernel: the dual "
                    "objective grows without bound. Use a finite C."
                )
            if not res.converged:
                warnings.warn(
                    f"SMO stopped after max_iter={res.n_iter} steps (the default is 100·n, at "
                    f"least 1e5) with KKT gap "
                    f"m(α) − M(α) = {res.kkt_gap:.3g} > tol = {self.tol:g} (classes "
                    f"{_label(self.classes_[a])} vs {_label(self.classes_[b])}); raise max_iter "
                    "or tol"
                    + (
                        "; with C=inf this usually means the classes are not separable by "
                        "the kernel, so the dual is unbounded: use a finite C."
                        if np.isinf(C)
                        else "."
                    ),
                    ConvergenceWarning,
                    stacklevel=find_stack_level(),
                )
            full = np.zeros(n)
            full[idx] = res.beta
            betas.append(full)
            intercepts.append(res.intercept)
            objs.append(res.dual_objective)
            gaps.append(res.kkt_gap)
            iters.append(res.n_iter)
        progress.task = "KernelSVC.fit"
        progress.finish(
            f"done: {sum(iters)} SMO steps over {len(pairs)} binary problem(s), largest KKT "
            f"gap {max(gaps):.3e} (tol {self.tol:g})"
        )
        B = np.vstack(betas)
        self.support_ = np.flatnonzero(np.any(B != 0, axis=0))
        self.dual_coef_ = B[:, self.support_]
        # with a precomputed kernel there are no input vectors to keep: one empty row per
        # support vector, so support_vectors_ still counts them as n_support_ does
        self.support_vectors_ = (
            X[self.support_] if not self._precomputed() else np.empty((len(self.support_), 0))
        )
        self.n_support_ = np.bincount(y_enc[self.support_], minlength=k).astype(np.int32)
        self.intercept_ = np.asarray(intercepts)
        self.dual_objective_ = objs[0] if k == 2 else np.asarray(objs)
        self.kkt_gap_ = np.asarray(gaps)
        self.n_iter_ = np.asarray(iters, dtype=np.int64)
        self._pairs = pairs
        return self

    def _pair_decisions(self, X):
        """(n, n_pairs) values f(x) = Σ y_i α_i K(x_i, x) + b of the binary problems."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        if self._precomputed():
            Ks = X[:, self.support_]
        elif len(self.support_) == 0:
            Ks = np.zeros((len(X), 0))
        else:
            Ks = np.asarray(self.kernel_(X, self.support_vectors_), dtype=np.float64)
        # (a precomputed Gram matrix of entries near the largest float overflows here)
        return finite_values(lambda: Ks @ self.dual_coef_.T + self.intercept_, X, "decision values")

    @property
    def coef_(self):
        """The primal weights of each binary problem (linear kernel only); see Attributes."""
        check_is_fitted(self)
        if not isinstance(self.kernel_, Linear):
            # an AttributeError, so that hasattr(svc, "coef_") says whether there is one
            raise AttributeError("coef_ is only available when using a linear kernel.")
        W = self.dual_coef_ @ self.support_vectors_
        return W if self.kernel_.A is None else W @ self.kernel_.A

    def decision_function(self, X):
        r"""Signed distance to the margin, :math:`f(x) = \sum_i \alpha_i y_i K(x_i, x) + b`.

        Returns shape (n_samples,) for two classes (positive means ``classes_[1]``) and
        (n_samples, n_classes) otherwise: one-vs-one votes plus squashed confidences, whose
        argmax is the prediction.
        """
        F = self._pair_decisions(X)
        if len(self.classes_) == 2:
            return F[:, 0]
        return self._votes(F)

    def _votes(self, F):
        k = len(self.classes_)
        votes = np.zeros((len(F), k))
        conf = np.zeros((len(F), k))
        for p, (a, b) in enumerate(self._pairs):
            wins_b = F[:, p] >= 0  # a tie goes to the later class, as in LIBSVM
            votes[:, b] += wins_b
            votes[:, a] += ~wins_b
            conf[:, b] += F[:, p]
            conf[:, a] -= F[:, p]
        return _ovr_shaped(votes, conf)

    def predict(self, X):
        """Class labels: sign of f(x) for two classes, one-vs-one votes otherwise.

        f(x) = 0 exactly counts for the later class (``classes_[1]`` of two), as in LIBSVM
        and :class:`sklearn.svm.SVC`, so that the two agree on data as degenerate as
        repeated points with both labels.
        """
        F = self.decision_function(X)
        if F.ndim == 1:
            return self.classes_[(F >= 0).astype(int)]
        return self.classes_[np.argmax(F, axis=1)]


# -- PrimalSVC -------------------------------------------------------------------------------------
class PrimalSVC(ClassifierScoreMixin, ClassifierMixin, BaseEstimator):
    r"""Linear SVM in the primal, on explicit (e.g. random Fourier) features.

    Minimises :math:`\frac12\|\tilde w\|^2 + C\sum_i s_i\,\ell(y_i \tilde w^T \tilde z_i)` with
    :math:`\ell(m) = \max(0, 1-m)` ("hinge") or :math:`\max(0, 1-m)^2` ("squared_hinge"),
    where :math:`\tilde z_i = [z_i; c]` appends the constant c = ``intercept_scaling``, so
    the bias :math:`b = c\,\tilde w_{D+1}` is penalised as in LIBLINEAR (Hsieh et al. 2008;
    :doc:`chapter 8 </book/08_svm_dual_and_primal>`), by :math:`b^2/(2c^2)`: like any other
    coefficient at c = 1, the default, and less the larger c. Composed after
    :class:`kernelcourse.features.RandomFourierFeatures` this is the algorithm of Rahimi & Recht
    (2007):
    sample Ω and b, map :math:`\tilde\phi(x) = \sqrt{2/D}\cos(\Omega x + b)`, solve the primal.

    Solvers: "squared_hinge" is smooth, solved by Newton's method with conjugate-gradient
    steps on the generalised Hessian :math:`I + 2C\,Z_A^T S_A Z_A` over the margin violators A
    and an exact line search on the piecewise-quadratic objective (Keerthi & DeCoste 2005).
    "hinge" is solved by dual coordinate descent (Hsieh et al. 2008) on
    :math:`0 \le \alpha_i \le C s_i`, keeping :math:`\tilde w = \sum_i \alpha_i y_i \tilde z_i`;
    its epochs run compiled by numba (the first fit in a fresh cache compiles them, ~2 s).
    More than two classes: one-vs-rest.

    Parameters
    ----------
    C : float > 0, default=1.0
        Penalty C on the losses.
    loss : {"hinge", "squared_hinge"}, default="squared_hinge"
    fit_intercept : bool, default=True
    intercept_scaling : float > 0, default=1.0
        The constant c appended to each feature vector.
    tol : float > 0, default=1e-4
        Newton: stop when ‖∇‖ ≤ tol·‖∇ at 0‖. Coordinate descent: stop when the projected
        gradients of an epoch spread by ≤ tol (LIBLINEAR's rule).
    max_iter : int, default=1000
        Newton steps or coordinate-descent epochs.
    random_state : int, RandomState or None
        Order of the coordinates in dual coordinate descent.
    class_weight : dict, "balanced" or None, default=None
        Weight :math:`w_c` of each class, multiplying C for its samples (with the sample
        weights), as scikit-learn's ``LinearSVC``: with more than two classes, in the
        one-vs-rest problem of class c only the samples of c are weighted (the rest keep C),
        as LIBLINEAR does. "balanced" uses :math:`w_c = n / (n_{\text{classes}} \cdot n_c)`
        with n and :math:`n_c` sums of the sample weights.
    verbose : None, bool or int >= 0, default=None
        Progress (Newton step or epoch, the quantity that converges, elapsed time). None:
        silent unless the fit runs longer than 30 s, then a line every 30 s on standard
        error; 0: never; 1: a line at most every second, 2: every step or epoch, on standard
        output (:mod:`kernelcourse._progress`).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    class_weight_ : ndarray of shape (n_classes,)
        The weight of each class.
    coef_ : ndarray of shape (1, D) or (n_classes, D)
        w (one row per one-vs-rest problem; one row for two classes).
    intercept_ : ndarray of shape (1,) or (n_classes,)
        b.
    objective_ : ndarray
        Primal objective per binary problem at the solution.
    n_iter_ : int
        Largest number of iterations over the binary problems.
    n_features_in_ : int

    See Also
    --------
    KernelSVC
        The same classifier in the kernel dual, exact.
    kernelcourse.features.RandomFourierFeatures
        The feature map that makes it a kernel SVM.

    References
    ----------
    Rahimi & Recht, "Random features for large-scale kernel machines", NIPS (2007).
    Hsieh, Chang, Lin, Keerthi & Sundararajan, "A dual coordinate descent method for
    large-scale linear SVM", ICML (2008). Keerthi & DeCoste, "A modified finite Newton method
    for fast solution of large scale linear SVMs", JMLR 6 (2005). Random features against
    the kernel dual: :doc:`chapter 7 </book/07_random_kitchen_sinks>` and
    :doc:`chapter 8 </book/08_svm_dual_and_primal>`.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.pipeline import make_pipeline
    >>> from kernelcourse.features import RandomFourierFeatures
    >>> from kernelcourse.svm import PrimalSVC
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 2))
    >>> y = (X[:, 0] ** 2 + X[:, 1] ** 2 > 1.4).astype(int)
    >>> model = make_pipeline(RandomFourierFeatures(gamma=1.0, n_components=200, random_state=0),
    ...                       PrimalSVC(C=1.0, random_state=0)).fit(X, y)
    >>> print(round(model.score(X, y), 2))
    0.99
    """

    _parameter_constraints = {
        "C": [real_constraint(0, None, closed="neither")],
        "loss": [StrOptions({"hinge", "squared_hinge"})],
        "fit_intercept": ["boolean"],
        "intercept_scaling": [real_constraint(0, None, closed="neither")],
        "tol": [real_constraint(0, None, closed="neither")],
        "max_iter": [count_constraint()],
        "random_state": ["random_state"],
        "class_weight": [dict, StrOptions({"balanced"}), None],
        "verbose": ["verbose", None],
    }

    def __init__(
        self,
        C=1.0,
        *,
        loss="squared_hinge",
        fit_intercept=True,
        intercept_scaling=1.0,
        tol=1e-4,
        max_iter=1000,
        random_state=None,
        class_weight=None,
        verbose=None,
    ):
        self.C = C
        self.loss = loss
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state
        self.class_weight = class_weight
        self.verbose = verbose

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit w and b.

        Parameters
        ----------
        X : array-like of shape (n_samples, D)
            Explicit features z_i.
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative weights s_i on the losses.

        Returns
        -------
        self
        """
        check_fit_input(X, y)
        X, y = validate_data(self, X, y, dtype=np.float64, order="C")
        check_labels(y)
        self.classes_, y_enc = np.unique(y, return_inverse=True)
        if len(self.classes_) < 2:
            raise ValueError(
                f"y has only one class ({_label(self.classes_[0])}); an SVM needs at least two."
            )
        sw, s_only = _box_weights(self, sample_weight, X, y_enc, liblinear=True)
        bias = float(self.intercept_scaling) if self.fit_intercept else None
        with np.errstate(over="ignore"):  # an overflow is refused, by name, just below
            # the largest weights of any problem: with k > 2 the rest keep s_i alone
            c_top = self.C * np.maximum(sw, s_only)
        _check_primal_scale(X, c_top, bias)
        k = len(self.classes_)
        # with k > 2, LIBLINEAR's one-vs-rest weighs only the positive class of each problem:
        # the rest keep C times their sample weights s_only
        if self.fit_intercept and self.loss == "hinge":
            # the compiled coordinate descent reads rows of [z_i; c]; Newton's method below
            # handles the constant column implicitly, so a large Z is never copied
            Z = np.hstack([X, np.full((len(X), 1), bias)])
        else:
            Z = X
        rng = check_random_state(self.random_state)
        problems = [1] if k == 2 else range(k)
        W, objs, iters = [], [], []
        progress = Progress("PrimalSVC.fit", self.verbose)
        for c in problems:
            if k > 2:
                progress.task = f"PrimalSVC.fit, class {self.classes_[c]} vs rest"
                sw = s_only * np.where(y_enc == c, self.class_weight_[c], 1.0)
            yy = np.where(y_enc == c, 1.0, -1.0)
            if self.loss == "squared_hinge":
                w, it, ok = _newton_squared_hinge(
                    X, yy, self.C * sw, self.tol, self.max_iter, bias=bias, progress=progress
                )
            else:
                w, it, ok = _dcd_hinge(Z, yy, self.C * sw, self.tol, self.max_iter, rng, progress)
            if not ok:
                warnings.warn(
                    f"PrimalSVC ({self.loss}) did not reach tol={self.tol:g} in "
                    f"max_iter={self.max_iter} iterations; raise max_iter.",
                    ConvergenceWarning,
                    stacklevel=find_stack_level(),
                )
            W.append(w)
            # Z already holds the constant column when it is not X
            objs.append(
                _primal_objective(Z, yy, self.C * sw, w, self.loss, bias if Z is X else None)
            )
            iters.append(it)
        progress.task = "PrimalSVC.fit"
        progress.finish(f"done: {sum(iters)} iterations over {len(W)} problem(s)")
        W = np.vstack(W)
        if self.fit_intercept:
            self.coef_ = W[:, :-1].copy()
            self.intercept_ = W[:, -1] * float(self.intercept_scaling)
        else:
            self.coef_ = W
            self.intercept_ = np.zeros(len(W))
        self.objective_ = np.asarray(objs)
        self.n_iter_ = int(max(iters))
        return self

    def decision_function(self, X):
        r""":math:`w^T z + b`; shape (n,) for two classes, (n, n_classes) otherwise."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        F = finite_values(lambda: X @ self.coef_.T + self.intercept_, X, "decision values")
        return F[:, 0] if F.shape[1] == 1 else F

    def predict(self, X):
        F = self.decision_function(X)
        if F.ndim == 1:
            return self.classes_[(F > 0).astype(int)]
        return self.classes_[np.argmax(F, axis=1)]


def _check_primal_scale(X, c, bias):
    """Refuse a problem whose sums overflow: the solvers add up n terms c_i‖z_i‖² (the
    Hessian, the gradient, the dual's curvatures), and one of them at infinity stops them at
    the start with w = 0, which would look like a fit."""
    with np.errstate(over="ignore", invalid="ignore"):
        sq = np.einsum("ij,ij->i", X, X) + (0.0 if bias is None else bias * bias)
        top_sq = float(sq.max(initial=0.0))
        top = float(np.max(c * sq, initial=0.0)) * len(X)
    if bias is not None and not np.isfinite(bias * bias):
        raise ValueError(
            f"intercept_scaling={bias!r} is too large: its square, the constant feature's "
            "share of every ‖x‖², overflows floating point; lower intercept_scaling."
        )
    if not np.isfinite(top_sq):
        raise ValueError(
            f"X is too large in magnitude (largest |entry| {float(np.abs(X).max()):.3g}): "
            "the squared norms of its rows overflow floating point; rescale X (for example "
            "standardize it)."
        )
    if not top < np.finfo(np.float64).max / 16:  # room for the factor 2 and the sums
        raise ValueError(
            f"C times the squared norms of the rows of X, summed over the {len(X)} rows, "
            f"overflows floating point (largest C·sample_weight {float(np.max(c)):.3g}, "
            f"largest ‖x‖² {top_sq:.3g}); lower C or rescale X."
        )


def _aug_matvec(X, w, bias):
    """[X, c·1] w: the product with the features plus the constant column c = ``bias``
    (None: no constant column)."""
    return X @ w if bias is None else X @ w[:-1] + bias * w[-1]


def _aug_rmatvec(X, u, bias):
    """[X, c·1]ᵀ u."""
    return X.T @ u if bias is None else np.append(X.T @ u, bias * u.sum())


def _primal_objective(Z, y, c, w, loss, bias=None):
    xi = np.maximum(0.0, 1.0 - y * _aug_matvec(Z, w, bias))
    if loss == "squared_hinge":
        xi = xi * xi
    return float(0.5 * w @ w + c @ xi)


# Newton's active rows are copied up to this size, or up to half of Z (whichever is more)
_GATHER_BYTES = 2**27


def _newton_squared_hinge(Z, y, c, tol, max_iter, *, bias=None, progress=None):
    """Finite Newton method for ½‖w‖² + Σ c_i max(0, 1 − y_i z_iᵀw)² (Keerthi & DeCoste 2005).

    Each step solves (I + 2 Z_Aᵀ diag(c_A) Z_A) d = −∇ over the active set
    A = {i: y_i z_iᵀw < 1} by conjugate gradients (a few Hessian-vector products, each two
    passes over Z_A), then takes the exact minimiser along d. Memory traffic over Z is what
    costs, so Z_A is gathered once per step; only when A holds more than half the rows and
    the copy would exceed ``_GATHER_BYTES`` do the products run over all of Z with zero
    weights outside A instead (a little slower), so that a large Z is never copied whole.
    With ``bias = c`` the rows are [z_i; c] without forming them.
    """
    n = Z.shape[0]
    D = Z.shape[1] + (bias is not None)
    w = np.zeros(D)
    m = np.zeros(n)  # margins y_i z_iᵀ w
    g0 = None
    for it in range(1, max_iter + 1):
        r = np.maximum(1.0 - m, 0.0)
        grad = w - 2.0 * _aug_rmatvec(Z, c * y * r, bias)
        gnorm = float(_scaled_colnorm(grad[:, None])[0])  # ‖∇‖² may overflow, ‖∇‖ not
        if g0 is None:
            g0 = max(gnorm, 1e-300)
        if gnorm <= tol * g0:
            return w, it - 1, True
        if progress and progress.due():
            progress.report(f"Newton step {it}: ‖∇‖/‖∇₀‖ = {gnorm / g0:.3e} (tol {tol:g})")
        act = r > 0
        n_act = np.count_nonzero(act)
        if 2 * n_act <= n or n_act * Z.shape[1] * Z.itemsize <= _GATHER_BYTES:
            Za, ca = Z[act], 2.0 * c[act]
        else:
            Za, ca = Z, np.where(act, 2.0 * c, 0.0)
        d = _cg(
            lambda p, Za=Za, ca=ca: p + _aug_rmatvec(Za, ca * _aug_matvec(Za, p, bias), bias),
            -grad,
            rtol=min(0.1, math.sqrt(gnorm / g0)),
            maxiter=max(50, D),
        )
        s = y * _aug_matvec(Z, d, bias)
        t = _line_search_squared_hinge(w, d, m, s, c)
        w += t * d
        m += t * s
    return w, max_iter, False


def _cg(matvec, b, *, rtol, maxiter):
    """The inexact Newton direction: conjugate gradients on the Hessian, stopped at ``rtol``."""
    result = block_cg(lambda P: matvec(P[:, 0])[:, None], b[:, None], max_iter=maxiter, tol=rtol)
    return result.x[:, 0]


def _line_search_squared_hinge(w, d, m, s, c):
    """Exact minimiser t of the piecewise quadratic φ(t) = ½‖w + t d‖² + Σ c max(0, 1−m−ts)²,
    found by one-dimensional Newton steps, each exact on the current piece.

    The search runs along d/u for a power of two u (exact) where d is so small or large
    that d·d would underflow or overflow (C near 1e-300 gives d of that order: d·d was 0,
    and w never moved); then t is in units of d/u and returned in units of d."""
    u = _power_of_two_scale(float(np.max(np.abs(d), initial=0.0)), np.float64)
    if u != 1.0:
        d, s = d / u, s / u
    wd, dd = float(w @ d), float(d @ d)
    t = 0.0
    for _ in range(100):
        r = 1.0 - m - t * s
        act = r > 0
        cs = c[act] * s[act]
        grad = wd + t * dd - 2.0 * (cs @ r[act])
        hess = dd + 2.0 * (cs @ s[act])
        if hess <= 0:
            break
        t_new = t - grad / hess
        if abs(t_new - t) <= 1e-12 * max(u, abs(t)):  # |Δt| ≤ 1e-12·max(1, |t|) along d
            t = t_new
            break
        t = t_new
    return t / u


def _dcd_hinge(Z, y, c, tol, max_iter, rng, progress=None):
    """Dual coordinate descent for the hinge loss: max Σα − ½‖Σ α_i y_i z_i‖², 0 ≤ α ≤ c,
    with LIBLINEAR's shrinking of coordinates stuck at a bound and its stopping rule
    (spread of projected gradients over the active coordinates ≤ tol, on all of them).

    Each epoch visits the active coordinates in a fresh random order and runs in
    :func:`_dcd_hinge_epoch`; this loop keeps the order, the shrinking thresholds and the
    stopping rule."""
    n, D = Z.shape
    w = np.zeros(D)
    alpha = np.zeros(n)
    Zy = np.ascontiguousarray(Z * y[:, None])  # rows y_i z_i, so that g_i = (y_i z_i)ᵀw − 1
    qd = np.einsum("ij,ij->i", Zy, Zy)
    c = np.ascontiguousarray(c, dtype=np.float64)
    movable = np.flatnonzero((qd > 0.0) & (c > 0.0))  # the others never leave α_i = 0
    active = movable
    pg_max_old, pg_min_old = math.inf, -math.inf
    for epoch in range(1, max_iter + 1):
        order = active[rng.permutation(len(active))]
        pg_max, pg_min, active = _dcd_hinge_epoch(
            Zy, qd, c, w, alpha, order, pg_max_old, pg_min_old
        )
        if pg_max - pg_min <= tol:
            if len(active) == len(movable):
                return w, epoch, True
            # Converged on the active set: check everything again before stopping.
            active = movable
            pg_max_old, pg_min_old = math.inf, -math.inf
            continue
        if progress and progress.due():
            progress.report(
                f"epoch {epoch}: projected-gradient spread {pg_max - pg_min:.3e} "
                f"(tol {tol:g}), {len(active)} of {n} coordinates active"
            )
        pg_max_old = pg_max if pg_max > 0 else math.inf
        pg_min_old = pg_min if pg_min < 0 else -math.inf
    return w, max_iter, False


@njit(cache=True)
def _dcd_hinge_epoch(Zy, qd, c, w, alpha, order, pg_max_old, pg_min_old):
    """One epoch of dual coordinate descent (Hsieh et al. 2008, LIBLINEAR's shrinking).

    For each i in ``order``: the dual gradient is g = (y_i z_i)ᵀw − 1; a coordinate at a
    bound whose gradient points further out than last epoch's extremes (g > pg_max_old at
    α_i = 0, g < pg_min_old at α_i = c_i) is shrunk, i.e. skipped and dropped; otherwise the
    projected gradient pg is recorded and α_i takes the clipped Newton step
    min(max(α_i − g/Q_ii, 0), c_i), with w += Δα_i y_i z_i. ``w`` and ``alpha`` are updated
    in place.

    Returns
    -------
    pg_max, pg_min : float
        Extremes of the projected gradients over the coordinates kept.
    kept : ndarray of int
        The coordinates not shrunk, in the order visited.
    """
    kept = np.empty(len(order), dtype=np.int64)
    n_kept = 0
    pg_max, pg_min = -np.inf, np.inf
    for i in order:
        zi = Zy[i]
        g = np.dot(zi, w) - 1.0
        a = alpha[i]
        if a == 0.0:
            if g > pg_max_old:
                continue
            pg = min(g, 0.0)
        elif a == c[i]:
            if g < pg_min_old:
                continue
            pg = max(g, 0.0)
        else:
            pg = g
        kept[n_kept] = i
        n_kept += 1
        pg_max = max(pg_max, pg)
        pg_min = min(pg_min, pg)
        if abs(pg) > 1e-12:
            a_new = min(max(a - g / qd[i], 0.0), c[i])
            alpha[i] = a_new
            step = a_new - a
            for k in range(len(w)):
                w[k] += step * zi[k]
    return pg_max, pg_min, kept[:n_kept]
