r"""Random binning features (Rahimi & Recht 2007) for the Laplacian kernel, as sparse one-hot maps.

Cut each coordinate axis into bins of a random width δ with a random offset u ∈ [0, δ). Two
numbers x, y at distance Δ land in the same bin with probability :math:`\max(0, 1 - \Delta /
\delta)`. Averaging this "hat" over a density p(δ) gives a kernel

.. math:: k(\Delta) = \int_0^\infty p(\delta) \max(0, 1 - \Delta/\delta) \, d\delta ,

and :math:`p(\delta) = \delta\, \ddot k(\delta)` recovers any k that is convex on [0, ∞) and
vanishes at infinity. For :math:`k(\Delta) = e^{-\gamma\Delta}`, :math:`p(\delta) = \gamma^2
\delta e^{-\gamma\delta}`, a Gamma(2, 1/γ) density. A grid in :math:`\mathbb R^d` takes one
independent (δ, u) per axis; then :math:`P[x, y \text{ share a cell}] = \prod_{k} e^{-\gamma
|x_k - y_k|} = e^{-\gamma\|x - y\|_1}`, the Laplacian kernel. The indicator of the cell a point
falls in is a one-hot vector, and averaging P independent grids,

.. math:: z(x) = \tfrac{1}{\sqrt P}\,[\,z_1(x); \dots; z_P(x)\,], \qquad
          \mathbb E[z(x)^T z(y)] = e^{-\gamma \|x - y\|_1}.

Nothing requires the same γ on every axis: with :math:`\delta_k \sim \mathrm{Gamma}(2,
1/\gamma_k)` the product is :math:`e^{-\sum_k \gamma_k |x_k - y_k|}`, a Laplacian kernel with a
bandwidth per feature (automatic relevance determination, ARD, when the γ_k are chosen from
data). It is the same kernel as one γ on the rescaled inputs :math:`(\gamma_k x_k / \gamma)_k`.

Yang et al. (2012) name the method as the memorizing counterpart of random Fourier features: its
basis functions are indicator functions of cells instead of smooth waves.
"""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp
from numba import njit, prange
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted

from .._validation import (
    as_float_vector,
    check_count,
    check_memory,
    check_positive,
    gamma_constraint,
    validate_data,
)
from ..kernels import resolve_gamma

__all__ = ["RandomBinningFeatures", "BinCodes"]

# grids hashed at once: bounds the (grids, n) uint64 temporary
_GRIDS_PER_PASS = 16

# The cell coordinates become int64: from 2^62 on the cast would wrap (or be undefined).
_CELL_LIMIT = 2.0**62


@njit(parallel=True, cache=True)
def _hash_cells(X, shifts, pitches, coefs, out, worst):
    r"""``out[p, i]`` ← the 64-bit hash :math:`\sum_k c_k \lfloor (x_{ik} - u_{pk}) /
    \delta_{pk} \rfloor` (mod 2⁶⁴) of the cell of row i in grid p.

    Compiled, so that the (n, d) cell coordinates of a grid are never stored; the arithmetic
    is the same IEEE division and floor as numpy's, so the cells do not depend on the path.
    ``worst[i]`` ← the largest |cell coordinate| of row i (inf for a non-finite one), so that
    the caller can refuse an index the int64 cast would wrap.
    """
    n, d = X.shape
    for i in prange(n):
        w = 0.0
        for p in range(shifts.shape[0]):
            h = np.uint64(0)
            for k in range(d):
                c = np.floor((X[i, k] - shifts[p, k]) / pitches[p, k])
                a = abs(c)
                if not a < _CELL_LIMIT:
                    # out of int64's safe range (or NaN): flag it, hash nothing undefined
                    w = max(w, a) if a == a else np.inf
                    continue
                w = max(w, a)
                h += np.uint64(np.int64(c)) * coefs[k]
            out[p, i] = h
        worst[i] = w


class RandomBinningFeatures(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    r"""Random binning features for the Laplacian kernel :math:`e^{-\gamma\|x - y\|_1}`.

    Each of P grids draws, per input dimension k, a pitch :math:`\delta_k \sim
    \mathrm{Gamma}(2, 1/\gamma)` (the density :math:`\delta\,\ddot k(\delta)` of the kernel) and
    a shift :math:`u_k \sim U[0, \delta_k)`; a point x falls into the cell
    :math:`(\lfloor (x_k - u_k)/\delta_k \rfloor)_k`. The feature vector is the one-hot code of
    the cells, scaled by :math:`1/\sqrt P`, so that :math:`\mathbb E[z(x)^T z(y)] = K(x, y)`
    (Rahimi & Recht 2007, algorithm 2; :doc:`chapter 9 </book/09_nystroem_vs_rff>`).

    Only cells that hold a training point get a column; at ``transform`` time a point in an
    unseen cell gets no entry for that grid (the cell's weight would never be learned anyway).

    Parameters
    ----------
    gamma : float > 0, "scale", array-like of shape (n_features,) or None, default=None
        γ of the Laplacian kernel; None means 1 / n_features and "scale" 1 / (n_features ·
        Var X), the variance of all the entries of X (as scikit-learn's ``RBFSampler``). An
        array gives each feature its own γ_k, the kernel
        :math:`e^{-\sum_k \gamma_k |x_k - y_k|}`.
    n_grids : int >= 1, default=50
        Number P of independent grids; the error of :math:`z^T z` falls like :math:`1/\sqrt P`.
    random_state : int, RandomState instance or None, default=None

    Attributes
    ----------
    gamma_ : float or ndarray of shape (n_features,)
        The γ used (an array when ``gamma`` is one).
    pitches_ : ndarray of shape (P, n_features)
        Cell widths δ.
    shifts_ : ndarray of shape (P, n_features)
        Offsets u.
    n_bins_ : ndarray of shape (P,)
        Number of occupied cells of each grid; the output has ``n_bins_.sum()`` columns.
    n_features_in_ : int

    See Also
    --------
    kernelcourse.features.RandomFourierFeatures
        Dense random features of the same kernels.
    kernelcourse.ridge.sparse_ridge_cg
        Ridge on these sparse features.

    Notes
    -----
    Cells are identified by a 64-bit hash of their integer coordinates (a random linear hash,
    so two different cells of one grid collide with probability about :math:`2^{-64}` per
    pair). Each output row holds at most P non-zeros, whatever the number of columns.

    References
    ----------
    A. Rahimi and B. Recht, "Random features for large-scale kernel machines", NIPS 2007.
    T. Yang, Y.-F. Li, M. Mahdavi, R. Jin and Z.-H. Zhou, "Nyström method vs random Fourier
    features: a theoretical and empirical comparison", NIPS 2012.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelcourse.features import RandomBinningFeatures
    >>> X = np.random.default_rng(0).uniform(size=(100, 2))
    >>> rb = RandomBinningFeatures(gamma=1.0, n_grids=50, random_state=0).fit(X)
    >>> Z = rb.transform(X)
    >>> print(Z.shape[0], Z.format, np.allclose(Z.multiply(Z).sum(axis=1), 1.0))
    100 csr True
    """

    _parameter_constraints: dict = {
        "gamma": gamma_constraint(per_feature=True),
        "n_grids": [Interval(numbers.Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(self, *, gamma=None, n_grids=50, random_state=None):
        self.gamma = gamma
        self.n_grids = n_grids
        self.random_state = random_state

    def _cell_hashes(self, X):
        """Yield, grid by grid, the 64-bit hashes of the integer cell coordinates of the rows
        of X (wrap-around arithmetic in uint64 is the intended modular hash). Grids are hashed
        a few at a time, so the temporary stays small."""
        X = np.ascontiguousarray(X)
        worst = np.empty(len(X), dtype=np.float64)
        for lo in range(0, self._n_grids, _GRIDS_PER_PASS):
            hi = min(lo + _GRIDS_PER_PASS, self._n_grids)
            out = np.empty((hi - lo, len(X)), dtype=np.uint64)
            _hash_cells(X, self.shifts_[lo:hi], self.pitches_[lo:hi], self._hash_coefs, out, worst)
            if len(X) and not worst.max() < _CELL_LIMIT:
                raise ValueError(
                    f"random binning: a cell index |x − u|/δ reaches {worst.max():.3g}, "
                    f"beyond the 2^62 an int64 holds (γ up to {np.max(self.gamma_):.3g} "
                    "makes the pitches δ ~ 1/γ tiny against |x| up to "
                    f"{np.abs(X).max():.3g}); lower gamma or rescale X."
                )
            yield from out

    def fit(self, X, y=None):
        """Draw the P grids and record the cells the training points occupy.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        self

        Raises
        ------
        MemoryError
            If the P grids and the cells of the training points would not fit in the
            machine's memory (about P·(32 d + 12 n) bytes); lower ``n_grids``.
        """
        self._fit(X)
        return self

    def _fit(self, X):
        self._validate_params()
        X, dtype = self._as_float64(validate_data(self, X, dtype=[np.float64, np.float32]))
        rng = check_random_state(self.random_state)
        d = X.shape[1]
        gamma = resolve_gamma(self.gamma, d, X)
        if np.ndim(gamma) == 0:
            self.gamma_ = check_positive(gamma, "gamma")  # "array-like" also lets {} through
        else:
            gamma = np.asarray(gamma)
            # np.array(["1", "2"], dtype=float) parses strings, and booleans become 0 and 1:
            # refuse them as the kernels do (a scalar True is refused too)
            if gamma.dtype.kind not in "iuf":
                raise TypeError(
                    f"gamma must be a real number or a 1-D array of them, got dtype {gamma.dtype}."
                )
            gamma = gamma.astype(np.float64)
            if gamma.shape != (d,):
                raise ValueError(
                    f"gamma must be a number or have one entry per feature ({d}), got shape "
                    f"{gamma.shape}."
                )
            if not np.all(np.isfinite(gamma) & (gamma > 0)):
                raise ValueError(f"every entry of gamma must be finite and > 0, got {gamma}.")
            self.gamma_ = gamma
        # a Python int: np.int8(3) overflowed in the memory estimate and made float16 features
        P, n = check_count(self.n_grids, "n_grids"), len(X)
        self._n_grids = P
        # per grid: δ, u and their temporaries (4 × 8d bytes), the codes and occupied cells
        # of the n points (at most 4n + 8n bytes), and one small array object for its cells
        check_memory(
            P * (32 * d + 12 * n + 128),
            f"random binning with n_grids={P} on {n} samples of {d} features",
            "lower n_grids",
        )
        with np.errstate(over="ignore"):
            self.pitches_ = rng.gamma(shape=2.0, scale=1.0 / gamma, size=(P, d))
        # A γ below ~1e-308 makes 1/γ, or a draw of scale 1/γ, overflow to inf; the shifts
        # u = U·δ and the cells ⌊(x − u)/δ⌋ would then be NaN. Such a pitch dwarfs any finite
        # |x|, so the largest float stands in for it: every point shares one cell, the limit
        # of the kernel e^{-γ|Δ|} → 1.
        np.minimum(self.pitches_, np.finfo(np.float64).max, out=self.pitches_)
        self.shifts_ = rng.uniform(size=(P, d)) * self.pitches_
        self._hash_coefs = rng.randint(0, 2**63, size=d, dtype=np.uint64) * np.uint64(2) + 1
        self._cells = []
        # filled in place: a list of rows stacked afterwards would hold the codes twice
        codes = np.empty((P, len(X)), dtype=np.int32)
        for p, h in enumerate(self._cell_hashes(X)):
            cells, codes[p] = np.unique(h, return_inverse=True)
            self._cells.append(cells)
        self.n_bins_ = np.array([len(c) for c in self._cells])
        self._offsets = np.concatenate([[0], np.cumsum(self.n_bins_)])
        self._n_features_out = int(self._offsets[-1])
        return X, codes, dtype

    def fit_transform(self, X, y=None):
        """Fit and return the training points' features (reusing the fitted cell codes)."""
        X, codes, dtype = self._fit(X)
        return self._assemble(len(X), codes, dtype)

    def transform(self, X):
        """Sparse one-hot features, a CSR matrix of shape (n_samples, ``n_bins_.sum()``), in
        float32 for float32 X and in float64 otherwise."""
        X, dtype = self._validated(X)
        return self._assemble(len(X), self._codes(X), dtype)

    def fit_transform_codes(self, X):
        """Fit, and return the training points' features as :class:`BinCodes`."""
        X, codes, _ = self._fit(X)
        return BinCodes(codes, self._offsets, self._n_grids)

    def transform_codes(self, X):
        """The features of :meth:`transform` as :class:`BinCodes`: the cell index of each row
        in each grid, 4 bytes per non-zero instead of CSR's 12 (and no transpose needed)."""
        X, _ = self._validated(X)
        return BinCodes(self._codes(X), self._offsets, self._n_grids)

    def _validated(self, X):
        check_is_fitted(self)
        return self._as_float64(validate_data(self, X, dtype=[np.float64, np.float32], reset=False))

    @staticmethod
    def _as_float64(X):
        """X in float64, in which the cells are computed (a float32 coordinate is exact in
        it), and the dtype of the features: float32 for float32 X, as scikit-learn's
        transformers keep it, float64 otherwise."""
        return X.astype(np.float64, copy=False), X.dtype

    def _codes(self, X):
        codes = np.empty((self._n_grids, len(X)), dtype=np.int32)
        for p, (cells, h) in enumerate(zip(self._cells, self._cell_hashes(X), strict=True)):
            pos = np.minimum(np.searchsorted(cells, h), len(cells) - 1)
            codes[p] = np.where(cells[pos] == h, pos, -1)
        return codes

    def _assemble(self, n, codes, dtype):
        P = self._n_grids
        cols = codes.T  # (n, P); -1 marks an unseen cell
        seen = cols >= 0
        cols = cols + self._offsets[:-1][None, :]
        indptr = np.concatenate([[0], np.cumsum(seen.sum(axis=1))])
        indices = cols[seen]  # row-major, so already grouped by row and sorted within it
        data = np.full(len(indices), 1.0 / np.sqrt(P), dtype=dtype)
        return sp.csr_matrix((data, indices, indptr), shape=(n, self._n_features_out))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags


@njit(parallel=True, cache=True)
def _codes_matvec(codes, offsets, V, scale, out):
    """out ← scale · Σ_p V[offset_p + code_p(i)] for every row i: Z V without storing Z."""
    P, n = codes.shape
    for p in range(P):
        off = offsets[p]
        for i in prange(n):
            c = codes[p, i]
            if c >= 0:
                for j in range(V.shape[1]):
                    out[i, j] += V[off + c, j]
    for i in prange(n):
        for j in range(out.shape[1]):
            out[i, j] *= scale


@njit(parallel=True, cache=True)
def _codes_rmatvec(codes, offsets, R, scale, out):
    """out[offset_p + c] ← scale · Σ_{i in cell c of grid p} R[i]: Zᵀ R, one grid per thread
    (the grids own disjoint slices of out, so no two threads write the same entry)."""
    P, n = codes.shape
    for p in prange(P):
        off = offsets[p]
        for i in range(n):
            c = codes[p, i]
            if c >= 0:
                for j in range(R.shape[1]):
                    out[off + c, j] += scale * R[i, j]


class BinCodes:
    r"""Random binning features stored as cell indices: the one-hot matrix
    :math:`\mathbf Z = P^{-1/2}[\mathbf Z_1, \dots, \mathbf Z_P]` held as a (P, n) int32 array
    of the cell of each point in each grid (-1 for a cell unseen in training).

    It multiplies like the sparse matrix it stands for (``Z @ V``, ``Z.T @ R`` through
    :meth:`rmatvec`), with compiled loops that use both cores, and is what
    :func:`kernelcourse.ridge.sparse_ridge_cg` iterates on for binning features.

    Parameters
    ----------
    codes : array of integers of shape (P, n)
        Cell of point i in grid p, from 0 to (number of cells of grid p) - 1, or -1; stored
        as int32.
    offsets : array of integers of shape (P + 1,)
        First column of each grid's block: non-decreasing from ``offsets[0] >= 0``.
    n_grids : int
        P (the scale is :math:`1/\sqrt P`).

    Raises
    ------
    TypeError
        If ``codes`` or ``offsets`` are not integers, or ``n_grids`` is not an integer.
    ValueError
        If the shapes do not agree, or a code lies outside its grid's block (the compiled
        products index memory with the codes, unchecked).
    """

    def __init__(self, codes, offsets, n_grids):
        codes, offsets = np.asarray(codes), np.asarray(offsets)
        for name, arr in (("codes", codes), ("offsets", offsets)):
            if arr.dtype.kind not in "iu":
                raise TypeError(f"{name} must be an array of integers, got dtype {arr.dtype}.")
        if codes.ndim != 2:
            raise ValueError(f"codes must have shape (P, n), got shape {codes.shape}.")
        P = codes.shape[0]
        if offsets.shape != (P + 1,):
            raise ValueError(
                f"offsets must have shape ({P + 1},), one more than the grids in codes, got "
                f"shape {offsets.shape}."
            )
        n_grids = check_count(n_grids, "n_grids")
        if n_grids != P:
            raise ValueError(f"n_grids must be P = {P}, the rows of codes, got {n_grids}.")
        int64 = np.iinfo(np.int64)
        if offsets.min() < 0 or offsets.max() > int64.max:
            raise ValueError(f"offsets must lie in [0, {int64.max}].")
        offsets = offsets.astype(np.int64)
        n_cells = np.diff(offsets)
        if (n_cells < 0).any():
            raise ValueError("offsets must be non-decreasing: each grid's block follows the last.")
        # The compiled products read and write V[offsets[p] + code]: a code beyond its grid's
        # block would touch memory outside the arrays (a crash or a silently wrong product).
        if codes.size and ((codes.min(axis=1) < -1).any() or (codes.max(axis=1) >= n_cells).any()):
            raise ValueError(
                "codes must lie in [-1, offsets[p + 1] - offsets[p]) in every grid p (-1 for a "
                "cell unseen in training)."
            )
        if codes.size and codes.max() > np.iinfo(np.int32).max:
            raise ValueError("codes must fit in int32 (at most 2**31 - 1 cells per grid).")
        self.codes = np.ascontiguousarray(codes, dtype=np.int32)
        self.offsets = offsets
        self.scale = 1.0 / np.sqrt(n_grids)
        self.shape = (self.codes.shape[1], int(self.offsets[-1]))

    def _as_2d(self, V, rows, name):
        V = np.asarray(V)
        if V.dtype.kind not in "biuf":
            raise TypeError(f"{name} must be a real numeric array, got dtype {V.dtype}.")
        if V.ndim not in (1, 2) or V.shape[0] != rows:
            raise ValueError(
                f"{name} must have {rows} rows: shape ({rows},) or ({rows}, k), not {V.shape}."
            )
        V = V.astype(np.float64, copy=False)
        # (rows, 1) for a vector: reshape(rows, -1) cannot infer the width when rows is 0
        # (Z without columns, every cell unseen, or without rows)
        return np.ascontiguousarray(V.reshape(rows, 1) if V.ndim == 1 else V), V.ndim == 1

    def __matmul__(self, V):
        """Z V."""
        V2, vector = self._as_2d(V, self.shape[1], "V")
        out = np.zeros((self.shape[0], V2.shape[1]))
        _codes_matvec(self.codes, self.offsets, V2, self.scale, out)
        return out[:, 0] if vector else out

    def rmatvec(self, R, out=None):
        """Zᵀ R; with ``out`` (a C-contiguous float64 array of shape (D, k)), out + Zᵀ R,
        accumulated in place (so that Zᵀr + λv needs no second (D, k) array)."""
        R2, vector = self._as_2d(R, self.shape[0], "R")
        if out is None:
            out = np.zeros((self.shape[1], R2.shape[1]))
        elif (
            out.shape != (self.shape[1], R2.shape[1])
            or out.dtype != np.float64
            or not out.flags.c_contiguous
        ):
            raise ValueError(
                f"out must be a C-contiguous float64 array of shape {(self.shape[1], R2.shape[1])}"
                f", got {out.dtype} {out.shape}."
            )
        _codes_rmatvec(self.codes, self.offsets, R2, self.scale, out)
        return out[:, 0] if vector and out.ndim == 2 else out

    def column_sq_norms(self, weights=None):
        r"""diag(ZᵀZ) = (cell counts) / P: the exact block diagonal of ZᵀZ; with row weights
        s, diag(ZᵀSZ) = (summed weights per cell) / P."""
        out = np.zeros(self.shape[1])
        if weights is not None:
            weights = as_float_vector(weights, "weights", self.shape[0])
        for p, codes in enumerate(self.codes):
            mask = codes >= 0
            w = None if weights is None else weights[mask]
            lo, hi = self.offsets[p], self.offsets[p + 1]
            out[lo:hi] = np.bincount(codes[mask], weights=w, minlength=hi - lo) * self.scale**2
        return out

    def tocsr(self):
        """The same features as a CSR matrix."""
        P, n = self.codes.shape
        rows = np.repeat(np.arange(n)[None, :], P, axis=0)
        seen = self.codes >= 0
        cols = (self.codes + self.offsets[:-1, None])[seen]
        data = np.full(len(cols), self.scale)
        return sp.csr_matrix((data, (rows[seen], cols)), shape=self.shape)
