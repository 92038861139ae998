r"""Beyond one machine: random-feature ridge and FALKON on ``dask.array`` inputs.

Both estimators need the data only through sums over rows, so each chunk of rows is processed
where it lives (on a ``dask.distributed`` worker) and only small results travel:

* :class:`DaskFeatureRidge` — ridge on an approximate feature map ψ (strategy ⑤ of
  :doc:`chapter 3 </book/03_kernel_trick_six_ways>`, the model of
  :class:`~kernelcourse.scale.StreamingFeatureRidge`). Each chunk
  contributes :math:`[Z\;1]^T[Z\;1\;Y]` with :math:`Z = \psi(X_{\text{chunk}})`, a
  (D + 1) × (D + 1 + k) matrix; a tree reduction adds them, and the D × D solve runs on the
  client.
* :class:`DaskNystroemKRR` — Nyström KRR by FALKON (the model of
  :class:`~kernelcourse.scale.NystroemKRR`). Every conjugate-gradient iteration needs
  :math:`K_{nM}^T(K_{nM}v)`: each chunk computes its block of :math:`K_{nM}` against the M
  centres, multiplies, and returns an M × k matrix; those are summed. The preconditioner
  (M × M) is built and applied on the client, with the same code as the array-API path
  (:func:`kernelcourse.solvers.falkon_solve`).

Results equal the in-memory estimators' up to round-off. Persist the data on the cluster
(``X = X.persist()``) before fitting, so that the ~20 passes of FALKON read it from the
workers' memory instead of recomputing it. dask is an optional dependency
(``pip install "kernelcourse[dask]"``), imported when these estimators are used.
"""

from __future__ import annotations

import copy
import math
import sys

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, MultiOutputMixin, RegressorMixin, clone
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import HasMethods
from sklearn.utils.validation import check_is_fitted

from ._validation import (
    RegressorScoreMixin,
    cast_for_kernel,
    check_count,
    check_positive,
    find_stack_level,
    refuse_complex_features,
    transform_unwarned,
)
from .features import RandomFourierFeatures
from .kernels import resolve_kernel
from .ridge import _refuse_no_features, solve_regularized_psd
from .scale import NystroemKRR, ProgressPrinter, _is_fitted, _unshifted_sums
from .solvers import FalkonPreconditioner, falkon_solve, gram_factor_update, warn_unconverged

__all__ = ["DaskFeatureRidge", "DaskNystroemKRR"]


def _dask_array():
    try:
        import dask.array as da
    except ImportError as err:  # pragma: no cover - exercised only without the extra
        raise ImportError(
            'kernelcourse.distributed needs dask: pip install "kernelcourse[dask]"'
        ) from err
    return da


def _user_line():
    """'file:line' of the user's call that reached the package's function calling this
    one (the frame a warning there names, :func:`find_stack_level`)."""
    frame = sys._getframe(find_stack_level() - 1)
    try:
        return f"{frame.f_code.co_filename}:{frame.f_lineno}"
    finally:
        del frame


def _dask():
    import dask

    return dask


def _check_rows(X, y=None, *, fit=None):
    """X as a 2-D dask array chunked along rows only (one chunk of columns); y as a 2-D
    dask array with the same row chunks, and whether y was 1-D. ``fit``, the estimator
    whose fit this is, needs a y."""
    da = _dask_array()
    if not isinstance(X, da.Array):
        raise TypeError(f"X must be a dask.array.Array, got {type(X).__name__}.")
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D (n_samples, n_features), got shape {X.shape}.")
    if any(np.isnan(c) for c in X.chunks[0]):
        raise ValueError("X has unknown chunk sizes; call X.compute_chunk_sizes() first.")
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"X is empty (shape {X.shape}); it needs at least one row and column.")
    if X.dtype.kind == "c":  # the cast to float dropped the imaginary part, with a warning
        raise ValueError(f"X: Complex data not supported (dtype {X.dtype}).")
    X = X.rechunk({1: -1})
    if 0 in X.chunks[0]:
        # empty row chunks (common after X[mask].compute_chunk_sizes()) reached the feature
        # map and the kernel, which refused them: "X is empty", of an X with rows
        X = X.rechunk({0: tuple(c for c in X.chunks[0] if c)})
    if y is None:
        if fit is not None:  # (an AttributeError of None came from inside the fit)
            raise ValueError(
                f"y is None: {type(fit).__name__}.fit needs the targets y, one per row of X; "
                "pass y."
            )
        return X, None, None
    if not isinstance(y, da.Array):
        y = np.asarray(y)
        if y.dtype == object:  # dask cannot chunk objects ("auto rechunking" error)
            try:
                y = y.astype(np.float64)
            except (TypeError, ValueError):
                raise TypeError("y must be a real numeric array, got dtype object.") from None
    y = da.asarray(y)
    if y.dtype.kind not in "biuf":  # else numpy's conversion error, when the graph runs
        raise TypeError(f"y must be a real numeric array, got dtype {y.dtype}.")
    if y.ndim not in (1, 2) or y.shape[0] != X.shape[0]:
        raise ValueError(f"y must have shape ({X.shape[0]},) or ({X.shape[0]}, k), got {y.shape}.")
    single = y.ndim == 1
    Y = (y[:, None] if single else y).astype(np.float64).rechunk((X.chunks[0], -1))
    return X, Y, single


def _per_chunk(func, X, Y, shape):
    """``func(x_chunk, y_chunk)`` for each row chunk, each of ``shape``, stacked along a new
    first axis of a dask array (one entry a chunk)."""
    da = _dask_array()
    a, b = shape
    return da.blockwise(
        lambda x, y: func(x, y)[None],
        "iab",
        X,
        "ij",
        Y,
        "ik",
        new_axes={"a": a, "b": b},
        adjust_chunks={"i": 1},
        concatenate=True,
        dtype=np.float64,
        meta=np.empty((0, 0, 0)),
    )


def _per_chunk_sum(func, X, Y, shape):
    """Σ over row chunks of ``func(x_chunk, y_chunk)``, each of ``shape``, by a tree
    reduction on the cluster; returned as a numpy array."""
    return _per_chunk(func, X, Y, shape).sum(axis=0).compute()


def _per_chunk_factor(func, X, Y, M):
    """The upper R (M × M) with RᵀR = Σ over row chunks of KᵀK, K = ``func(x_chunk,
    y_chunk)``: each chunk's factor (:func:`~kernelcourse.solvers.gram_factor_update`),
    then pairs of factors stacked and factored again, a tree of QR factorisations on the
    cluster (a tall-skinny QR). Returned as a numpy array."""
    from dask import delayed

    def chunk_factor(x, y):
        return gram_factor_update(None, func(x, y))

    stacked = _per_chunk(chunk_factor, X, Y, (M, M))
    parts = [delayed(lambda r: r[0])(p) for p in stacked.to_delayed().ravel()]
    pair = delayed(gram_factor_update)
    while len(parts) > 1:
        parts = [
            pair(*parts[i : i + 2]) if i + 1 < len(parts) else parts[i]
            for i in range(0, len(parts), 2)
        ]
    return np.asarray(parts[0].compute())


def _dense_features(features, xb):
    """ψ(x) of a chunk as a dense float64 array, the largest argument of its cosines and
    ``warn``, which warns for such a largest argument (:meth:`RandomFourierFeatures.
    _transform_unwarned <kernelcourse.features.RandomFourierFeatures>`); another map
    warns for itself, and gives 0.0. The chunks are mapped on dask's worker threads,
    where a warning names no line of the user's (concurrent/futures/thread.py) and came
    once per chunk: a fit gathers the largest argument of all chunks and warns once.

    A sparse map (random binning) made ``np.asarray`` a 0-d object array, and the fit
    failed with an IndexError. Complex features (``map="complex"``) are refused: the cast
    dropped their imaginary part."""
    Z, big, warn = transform_unwarned(features, xb)
    Z = Z.toarray() if sp.issparse(Z) else np.asarray(Z)
    refuse_complex_features(Z, "features")
    return Z.astype(np.float64, copy=False), big, warn


class DaskFeatureRidge(RegressorScoreMixin, MultiOutputMixin, RegressorMixin, BaseEstimator):
    r"""Ridge regression on an approximate feature map, fitted on a ``dask.array``.

    The model of :class:`~kernelcourse.ridge.FeatureRidge` and
    :class:`~kernelcourse.scale.StreamingFeatureRidge`,

    .. math:: (Z^T Z + \lambda I)\, w = Z^T y

    (penalty λ‖w‖² on the sum of squared errors; with ``fit_intercept=True``, Z and y are
    centred and the intercept is not penalized),

    from the per-chunk sums :math:`Z^TZ`, :math:`Z^Ty`, :math:`\sum z`, :math:`\sum y`
    (module docstring); a fit on chunks of b rows equals ``StreamingFeatureRidge`` with
    ``block_size=b`` on the same rows.

    Parameters
    ----------
    features : transformer or None
        The feature map ψ: a fitted transformer is used as it is, an unfitted one is cloned
        and fitted on the first chunk of rows; None means
        ``RandomFourierFeatures(n_components=100)``.
    lam : float > 0, default=1.0
        The ridge λ on the sum of squared errors (penalty λ‖w‖²).
    fit_intercept : bool, default=False
        Fit an unpenalized intercept.
    random_state : int, RandomState or None
        Seed for the default feature map.

    Attributes
    ----------
    features_ : transformer
    coef_ : ndarray of shape (D,) or (n_targets, D)
    intercept_ : float or ndarray of shape (n_targets,)
    n_samples_seen_ : int
    n_features_in_ : int

    See Also
    --------
    kernelcourse.ridge.FeatureRidge
        The same model on an in-memory array.
    kernelcourse.scale.StreamingFeatureRidge
        The same model, streamed block by block on one machine.
    DaskNystroemKRR
        Nyström kernel ridge regression by FALKON on a ``dask.array``.

    References
    ----------
    A. Rahimi and B. Recht, "Random features for large-scale kernel machines", NIPS 2007.
    Strategy ⑤ (approximate features on the fly): :doc:`chapter 3 </book/03_kernel_trick_six_ways>`
    and :doc:`chapter 11 </book/11_scaling_up>`.

    Examples
    --------
    >>> import dask.array as da
    >>> import numpy as np
    >>> from kernelcourse.distributed import DaskFeatureRidge
    >>> from kernelcourse.features import RandomFourierFeatures
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-3, 3, size=(500, 1))
    >>> y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=500)
    >>> Xd, yd = da.from_array(X, chunks=(100, 1)), da.from_array(y, chunks=100)
    >>> rff = RandomFourierFeatures(gamma=1.0, n_components=100, random_state=0)
    >>> model = DaskFeatureRidge(rff, lam=1e-3, fit_intercept=True).fit(Xd, yd)
    >>> print(model.n_samples_seen_)
    500
    >>> print(model.predict(Xd[:3]).compute().round(1), np.sin(X[:3, 0]).round(1))
    [ 0.7 -1.  -0.4] [ 0.7 -1.  -0.4]
    """

    _parameter_constraints = {
        "features": [None, HasMethods(["fit", "transform"])],
        "lam": "no_validation",  # check_positive in fit, with its own messages
        "fit_intercept": ["boolean"],
        "random_state": ["random_state"],
    }

    def __init__(self, features=None, *, lam=1.0, fit_intercept=False, random_state=None):
        self.features = features
        self.lam = lam
        self.fit_intercept = fit_intercept
        self.random_state = random_state

    def fit(self, X, y):
        """Accumulate the sufficient statistics over the chunks of X and solve for w.

        Warns
        -----
        RuntimeWarning
            Once a fit, at the caller's line, if the cosines of a feature map of the package
            (:class:`~kernelcourse.features.RandomFourierFeatures`, the cosine basis of
            :class:`~kernelcourse.features.RandomKitchenSinks`) reach arguments whose phase
            the dtype cannot resolve, in any chunk; the largest of all chunks is named.
        """
        # fit_intercept="no" (or None, or NaN) was taken for its truth value, unchecked
        self._validate_params()
        # a numpy scalar is a number too, and True is not one
        lam = check_positive(self.lam, "lam")
        X, Y, single = _check_rows(X, y, fit=self)
        first = X.blocks[0].compute()
        if self.features is None:
            self.features_ = RandomFourierFeatures(random_state=self.random_state).fit(first)
        elif _is_fitted(self.features):
            self.features_ = copy.deepcopy(self.features)
        else:
            self.features_ = clone(self.features).fit(first)
        features = self.features_
        # the first row, a row of the chunks too: its lost phase (if any) is warned once,
        # with the chunks' (it warned a second time, before them)
        probe, _, warn = _dense_features(features, first[:1])
        _refuse_no_features(probe, features)
        D = probe.shape[1]
        k = Y.shape[1]
        # With an intercept the sums are taken about the first row, as StreamingFeatureRidge
        # takes them: centred at the end, raw sums lost 2 log₁₀(|mean| / spread) digits.
        shift = self.fit_intercept
        a = probe[0] if shift else np.zeros(D)
        s = np.asarray(Y[:1].compute(), dtype=np.float64)[0] if shift else np.zeros(k)

        def stats(xb, yb):
            Z, big, _ = _dense_features(features, xb)
            Z = Z - a
            yb = yb - s
            Za = np.hstack([Z, np.ones((len(Z), 1))])
            out = np.zeros((D + 2, D + 1 + k))
            # an infinite y (or sums that overflow) is refused below, by name; numpy's
            # "invalid value encountered in matmul" came first and named nothing
            with np.errstate(over="ignore", invalid="ignore"):
                out[: D + 1] = Za.T @ np.hstack([Za, yb])
            out[D + 1, 0] = big  # the chunk's largest cosine argument, for one warning
            return out

        parts = _per_chunk(stats, X, Y, (D + 2, D + 1 + k))
        S, big = _dask().compute(parts[:, : D + 1].sum(axis=0), parts[:, D + 1, 0].max())
        # once for the fit, from this thread: the user's line
        warn(float(big))
        # NaN in y (or sums that overflow) reached the solver as "array must not contain infs"
        if not np.isfinite(S[:, : D + 1]).all():
            raise ValueError("the features of X have NaN or infinity, or sums that overflow.")
        if not np.isfinite(S[:, D + 1 :]).all():
            raise ValueError("y contains NaN or infinity, or values whose sums overflow.")
        n = S[D, D]
        sums = (S[:D, :D], S[:D, D + 1 :], S[:D, D], S[D, D + 1 :], n)
        ZtZ, c, zbar, ybar = _unshifted_sums(*sums, a, s, self.fit_intercept)
        G = ZtZ - n * np.outer(zbar, zbar)
        # as in StreamingFeatureRidge: a numerically singular Z_cᵀZ_c + λI (more features
        # than rows, tiny λ) warns and gets the least-squares solution
        W = solve_regularized_psd(G, c, lam, name="Z_cᵀZ_c")
        b = (s + ybar) - (a + zbar) @ W
        self.n_samples_seen_ = int(round(n))
        self.n_features_in_ = X.shape[1]
        self._single_output = single
        if single:
            self.coef_, self.intercept_ = W[:, 0], float(b[0])
        else:
            self.coef_, self.intercept_ = W.T, b
        return self

    def predict(self, X):
        """w·ψ(x) + b for every row, as a lazy dask array with X's row chunks.

        Warns
        -----
        RuntimeWarning
            When the result is computed, for each chunk whose cosines lose their phase (as
            in :meth:`fit`). The chunks are mapped where dask computes them, on a worker's
            thread or process, not at any line of the caller's, so the message names the
            line that called ``predict``. Nothing is checked before: that would compute X.
        """
        check_is_fitted(self, "coef_")
        X, _, _ = _check_rows(X)
        features, coef, intercept = self.features_, self.coef_, self.intercept_
        # predict is lazy: a chunk's lost phase can only warn when dask maps the chunk, on
        # a worker's thread, where the warning names no line of the user's (it named
        # concurrent/futures/thread.py); its message names the line that called predict.
        # Checking X here instead would compute it, which a lazy predict must not.
        note = f"This was a chunk of DaskFeatureRidge.predict called at {_user_line()}."

        def block(xb):
            Z, big, warn = _dense_features(features, xb)
            warn(big, note=note)
            return Z @ coef.T + intercept

        if self._single_output:
            return X.map_blocks(block, drop_axis=1, dtype=np.float64)
        return X.map_blocks(block, chunks=(X.chunks[0], (coef.shape[0],)), dtype=np.float64)


class DaskNystroemKRR(NystroemKRR):
    r"""Nyström kernel ridge regression by FALKON, fitted on a ``dask.array``.

    The model and parameters of :class:`~kernelcourse.scale.NystroemKRR` (centres drawn with
    the same ``random_state``, so both choose the same rows); each CG iteration is one pass
    over the chunks, each returning :math:`K_{b M}^T (K_{bM} v)` (module docstring). With
    ``precompute=True`` one pass returns the factor R of :math:`K_{nM}^TK_{nM} = R^TR`
    instead (a tall-skinny QR over the chunks) and CG touches no data. ``block_size`` does
    not apply: a chunk is a block.

    Attributes
    ----------
    As :class:`~kernelcourse.scale.NystroemKRR`, as numpy arrays.

    See Also
    --------
    kernelcourse.scale.NystroemKRR
        The same model on an in-memory array.
    DaskFeatureRidge
        Ridge on random features on a ``dask.array``.

    References
    ----------
    A. Rudi, L. Carratino, L. Rosasco. FALKON: An Optimal Large Scale Kernel Method. NeurIPS 2017.
    G. Meanti, L. Carratino, L. Rosasco, A. Rudi. Kernel methods through the roof: handling
    billions of points efficiently. NeurIPS 2020. The algorithm:
    :doc:`chapter 11 </book/11_scaling_up>`.

    Examples
    --------
    >>> import dask.array as da
    >>> import numpy as np
    >>> from dask.distributed import Client, LocalCluster
    >>> from kernelcourse.distributed import DaskNystroemKRR
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-3, 3, size=(500, 1))
    >>> y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=500)
    >>> cluster = LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
    ...                        dashboard_address=None)
    >>> client = Client(cluster)
    >>> Xd = da.from_array(X, chunks=(100, 1)).persist()
    >>> yd = da.from_array(y, chunks=100).persist()
    >>> krr = DaskNystroemKRR(gamma=1.0, lam=1e-4, n_components=50, random_state=0).fit(Xd, yd)
    >>> print(np.asarray(krr.predict(Xd[:3])).round(1), np.sin(X[:3, 0]).round(1))
    [ 0.7 -1.  -0.4] [ 0.7 -1.  -0.4]
    >>> client.close(); cluster.close()
    """

    def fit(self, X, y):
        """Draw the centres, then run FALKON with the products computed on the cluster."""
        self._validate_params()
        X, Y, single = _check_rows(X, y, fit=self)
        if X.dtype != np.float32:  # as validate_data gives NystroemKRR
            X = X.astype(np.float64)
        n, d = X.shape
        kernel = resolve_kernel(self.kernel, gamma=self.gamma, n_features=d, X=X)
        # as NystroemKRR: float64 data going to float32 for a shift-invariant kernel are
        # centred first (data far from the origin keep their digits), and entries beyond the
        # dtype's range are refused by name
        X_in = X
        X, centred = cast_for_kernel(X, self.dtype, kernel.shift_invariant)
        self._single_output = single
        self.n_features_in_ = d
        M = check_count(self.n_components, "n_components")  # True reached rng.choice
        if M > n:
            import warnings

            warnings.warn(
                f"n_components={M} > n_samples={n}; using all {n} points as centres.",
                UserWarning,
                stacklevel=find_stack_level(),
            )
            M = n
        rng = check_random_state(self.random_state)
        # NystroemKRR's draw, repeated rows replaced (only the candidate rows are computed):
        # the same centres as in memory, and no repeated centre to make K_MM singular
        idx = self._choose_centers(X, M, rng, lambda i: np.asarray(X[i].compute()))
        M = len(idx)
        centers = np.asarray(X[idx].compute())
        y_mean = Y.mean(axis=0).compute()
        if not np.isfinite(y_mean).all():  # else NaN reached the solver's finiteness check
            raise ValueError("y contains NaN or infinity, or values whose sum overflows.")
        k = Y.shape[1]

        def knm_t(V):
            def part(xb, yb):
                Kb = kernel(xb, centers)
                return Kb.T @ (Kb @ V.astype(Kb.dtype, copy=False))

            return _per_chunk_sum(part, X, Y, (M, V.shape[1]))

        def rhs_part(xb, yb):
            Kb = kernel(xb, centers)
            return Kb.T @ (yb - y_mean).astype(Kb.dtype, copy=False)

        rhs = _per_chunk_sum(rhs_part, X, Y, (M, k))
        factor = None
        if self.precompute:

            def rows(xb, yb):
                return np.asarray(kernel(xb, centers), dtype=np.float64)

            factor = _per_chunk_factor(rows, X, Y, M)
        callback = self.callback
        if callback is None and self.verbose:
            callback = ProgressPrinter()
        lam = float(self.lam)
        eps = float(np.finfo(np.dtype(self.dtype)).eps)
        precond = FalkonPreconditioner(
            np.asarray(kernel(centers), dtype=np.float64),
            lam,
            n,
            kind=self.preconditioner,
            eps=eps,
        )
        result = falkon_solve(
            precond,
            knm_t,
            rhs,
            lam,
            n,
            max_iter=int(self.max_iter),
            tol=float(self.tol),
            callback=callback,
            gram_factor=factor,
            eps=eps,
        )
        self.kernel_ = kernel
        self.center_indices_ = idx
        # uncentred, in float64 for predict
        self.centers_ = np.asarray(X_in[idx].compute()) if centred else centers
        self.y_mean_ = y_mean
        self.dual_coef_ = result.alpha
        self.history_ = np.asarray(result.cg.history)
        self.n_iter_ = result.cg.n_iter
        self.residual_ = result.residual
        self.n_components_ = M
        floor = 10 * math.sqrt(eps)
        warn_unconverged(
            type(self).__name__,
            result.cg,
            self.tol,
            measured=result.residual,
            floor=floor,
            quantity="relative residual of the preconditioned system",
        )
        return self

    def predict(self, X):
        r""":math:`f(x) = \sum_j \alpha_j K(x, \tilde x_j) + \bar y`, a lazy dask array."""
        check_is_fitted(self, "dual_coef_")
        X, _, _ = _check_rows(X)
        if X.shape[1] != self.n_features_in_:  # else the kernel named the centres "Y"
            raise ValueError(
                f"X has {X.shape[1]} features, but {type(self).__name__} was fitted on "
                f"{self.n_features_in_}."
            )
        kernel, centers, alpha, y_mean = self.kernel_, self.centers_, self.dual_coef_, self.y_mean_
        # in float64 whatever ``dtype``, as NystroemKRR: a point's prediction does not depend
        # on the rows that share its chunk
        X, centers = X.astype(np.float64), centers.astype(np.float64, copy=False)

        def block(xb):
            return kernel(xb, centers) @ alpha + y_mean

        if self._single_output:
            return X.map_blocks(lambda xb: block(xb)[:, 0], drop_axis=1, dtype=np.float64)
        return X.map_blocks(block, chunks=(X.chunks[0], (alpha.shape[1],)), dtype=np.float64)
