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

Lecture 004 names the method as the memorizing counterpart of random Fourier features: its basis
functions are indicator functions of cells instead of smooth waves.
"""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted, validate_data

__all__ = ["RandomBinningFeatures"]


class RandomBinningFeatures(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    r"""Random binning features for the Laplacian kernel :math:`e^{-\gamma\|x - y\|_1}`.

    Each of P grids draws, per input dimension k, a pitch :math:`\delta_k \sim
    \mathrm{Gamma}(2, 1/\gamma)` (the density :math:`\delta\,\ddot k(\delta)` of the kernel) and
    a shift :math:`u_k \sim U[0, \delta_k)`; a point x falls into the cell
    :math:`(\lfloor (x_k - u_k)/\delta_k \rfloor)_k`. The feature vector is the one-hot code of
    the cells, scaled by :math:`1/\sqrt P`, so that :math:`\mathbb E[z(x)^T z(y)] = K(x, y)`
    (Rahimi & Recht 2007, algorithm 2; lecture 004).

    Only cells that hold a training point get a column; at ``transform`` time a point in an
    unseen cell gets no entry for that grid (the cell's weight would never be learned anyway).

    Parameters
    ----------
    gamma : float > 0 or None, default=None
        γ of the Laplacian kernel; None means 1 / n_features.
    n_grids : int >= 1, default=50
        Number P of independent grids; the error of :math:`z^T z` falls like :math:`1/\sqrt P`.
    random_state : int, RandomState instance or None, default=None

    Attributes
    ----------
    pitches_ : ndarray of shape (P, n_features)
        Cell widths δ.
    shifts_ : ndarray of shape (P, n_features)
        Offsets u.
    n_bins_ : ndarray of shape (P,)
        Number of occupied cells of each grid; the output has ``n_bins_.sum()`` columns.
    n_features_in_ : int

    Notes
    -----
    Cells are identified by a 64-bit hash of their integer coordinates (a random linear hash,
    so two different cells of one grid collide with probability about :math:`2^{-64}` per
    pair). Each output row holds at most P non-zeros, whatever the number of columns.

    References
    ----------
    A. Rahimi and B. Recht, "Random features for large-scale kernel machines", NIPS 2007.
    Lecture 004, "Nyström method vs random Fourier features".
    """

    _parameter_constraints: dict = {
        "gamma": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "n_grids": [Interval(numbers.Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(self, *, gamma=None, n_grids=50, random_state=None):
        self.gamma = gamma
        self.n_grids = n_grids
        self.random_state = random_state

    def _cell_hashes(self, X, p):
        """64-bit hash of the integer cell coordinates of each row of X in grid p."""
        with np.errstate(over="ignore"):
            cells = np.floor((X - self.shifts_[p]) / self.pitches_[p])
        # The cell coordinates become int64: beyond 2^62 the cast would wrap silently.
        if not (np.abs(cells) < 2.0**62).all():
            raise ValueError(
                f"random binning: a cell index |x − u|/δ reaches {np.abs(cells).max():.3g}, "
                "beyond the 2^62 an int64 holds (γ = "
                f"{self.gamma_:.3g} makes the pitches δ ~ 1/γ tiny against |x| up to "
                f"{np.abs(X).max():.3g}); lower gamma or rescale X."
            )
        cells = cells.astype(np.int64)
        # wrap-around arithmetic in uint64 is the intended modular hash
        return (cells.view(np.uint64) * self._hash_coefs).sum(axis=1, dtype=np.uint64)

    def fit(self, X, y=None):
        """Draw the P grids and record the cells the training points occupy.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        self
        """
        self._fit(X)
        return self

    def _fit(self, X):
        self._validate_params()
        X = validate_data(self, X, dtype=np.float64)
        rng = check_random_state(self.random_state)
        d = X.shape[1]
        gamma = self.gamma if self.gamma is not None else 1.0 / d
        self.gamma_ = float(gamma)
        P = self.n_grids
        self.pitches_ = rng.gamma(shape=2.0, scale=1.0 / gamma, size=(P, d))
        self.shifts_ = rng.uniform(size=(P, d)) * self.pitches_
        self._hash_coefs = rng.randint(0, 2**63, size=d, dtype=np.uint64) * np.uint64(2) + 1
        self._cells = []
        codes = []
        for p in range(P):
            cells, inverse = np.unique(self._cell_hashes(X, p), return_inverse=True)
            self._cells.append(cells)
            codes.append(inverse)
        self.n_bins_ = np.array([len(c) for c in self._cells])
        self._offsets = np.concatenate([[0], np.cumsum(self.n_bins_)])
        self._n_features_out = int(self._offsets[-1])
        return X, codes

    def fit_transform(self, X, y=None):
        """Fit and return the training points' features (reusing the fitted cell codes)."""
        X, codes = self._fit(X)
        return self._assemble(len(X), codes)

    def transform(self, X):
        """Sparse one-hot features, a CSR matrix of shape (n_samples, n_bins_.sum())."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        codes = []
        for p, cells in enumerate(self._cells):
            h = self._cell_hashes(X, p)
            pos = np.minimum(np.searchsorted(cells, h), len(cells) - 1)
            codes.append(np.where(cells[pos] == h, pos, -1))
        return self._assemble(len(X), codes)

    def _assemble(self, n, codes):
        P = self.n_grids
        cols = np.stack(codes, axis=1)  # (n, P); -1 marks an unseen cell
        seen = cols >= 0
        cols = cols + self._offsets[:-1][None, :]
        indptr = np.concatenate([[0], np.cumsum(seen.sum(axis=1))])
        indices = cols[seen]  # row-major, so already grouped by row and sorted within it
        data = np.full(len(indices), 1.0 / np.sqrt(P))
        return sp.csr_matrix((data, indices, indptr), shape=(n, self._n_features_out))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64"]
        return tags
