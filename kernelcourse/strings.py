r"""Kernels on strings: the k-spectrum and weighted-degree kernels, with sparse feature maps.

A kernel machine only ever touches its inputs through
:math:`K(x, x')`, so the inputs need not be vectors: DNA, proteins and text are strings over a
finite alphabet :math:`\mathcal A`. A string kernel is built exactly like the kernels of
:doc:`chapter 10 </book/10_kernels_beyond_rd>`, as an inner product of explicit features
:math:`K(x, y) = \phi(x)^T\phi(y)`:

* **k-spectrum** (Leslie, Eskin & Noble 2002): :math:`\phi_u(x)` = number of times the k-mer
  :math:`u \in \mathcal A^k` occurs in x, so :math:`K(x, y) = \sum_u \phi_u(x)\phi_u(y)` counts
  pairs of shared k-mers. :math:`|\mathcal A|^k` coordinates, of which at most
  ``len(x) - k + 1`` are non-zero: the map is a sparse matrix.
* **weighted degree** (Rätsch & Sonnenburg 2004): for strings of one length N,
  :math:`K(x, y) = \sum_{d=1}^{L} \eta_d \sum_{l=1}^{N-d+1}
  \mathbb 1[x_{l:l+d} = y_{l:l+d}]`, :math:`\eta_d = 2(L-d+1)/(L(L+1))`: matches of d-mers at the
  *same* position. Its feature map is one indicator per (degree, position, d-mer), scaled by
  :math:`\sqrt{\eta_d}`.

The kernels are :class:`~kernelcourse.kernels.Kernel` objects whose inputs are sequences of
strings; ``+``, ``*``, ``c * k``, :func:`string_exp` and :func:`normalize` (the weighting rule with
:math:`f(x) = K(x, x)^{-1/2}`) give new string kernels. Gram matrices plug into any kernel machine
that accepts a precomputed kernel, e.g. ``sklearn.svm.SVC(kernel="precomputed")``.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from scipy import sparse

from ._validation import check_count, check_memory, check_nonnegative
from .kernels import Exponential, Kernel, Product, Scaled, Sum, _copy_upper_to_lower

__all__ = [
    "StringKernel",
    "SpectrumKernel",
    "WeightedDegreeKernel",
    "Normalized",
    "normalize",
    "string_exp",
    "string_gram",
    "planted_motif_sequences",
    "DNA",
    "PROTEIN",
]

DNA = "ACGT"
PROTEIN = "ACDEFGHIKLMNPQRSTVWY"
_UNKNOWN = ("error", "skip")


def _check_strings(X, name):
    """A list of non-empty ``str``; a single string is refused (it is not a list of sequences)."""
    if isinstance(X, str | bytes):
        raise TypeError(
            f"{name} must be a sequence of strings, got a single string; wrap it as [{name}]."
        )
    try:
        seqs = list(X)
    except TypeError:
        raise TypeError(f"{name} must be a sequence of strings, got {type(X).__name__}.") from None
    if not seqs:
        raise ValueError(f"{name} is empty; it needs at least one string.")
    for i, s in enumerate(seqs):
        if isinstance(s, np.str_):
            s = str(s)
        if not isinstance(s, str):
            raise TypeError(f"{name}[{i}] must be a str, got {type(s).__name__} ({s!r}).")
        if len(s) == 0:
            raise ValueError(f"{name}[{i}] is the empty string; every sequence needs a character.")
    return [str(s) for s in seqs]


def _check_k(k, name="k"):
    if isinstance(k, bool) or not isinstance(k, numbers.Integral):
        raise TypeError(f"{name} must be an integer >= 1, got {k!r}.")
    if k < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {k}.")
    return int(k)


def _check_alphabet(alphabet):
    if not isinstance(alphabet, str) or len(alphabet) == 0:
        raise TypeError(f"alphabet must be a non-empty str of distinct symbols, got {alphabet!r}.")
    if len(set(alphabet)) != len(alphabet):
        dup = sorted({c for c in alphabet if alphabet.count(c) > 1})
        raise ValueError(f"alphabet has repeated symbols {dup}; each symbol must appear once.")
    return alphabet


def _finite(K, kernel, what):
    # exp(K) of a long sequence's k-mer counts (K(x, x) in the thousands) overflows: say so
    # rather than return infinity
    if not np.isfinite(K).all():
        raise ValueError(
            f"the {what} of the string kernel {kernel!r} on X overflows floating point (NaN "
            "or infinity): normalise the inner kernel (normalize(k)) or scale it down before "
            "exp."
        )
    return K


def _sparse_gram(FX, FY=None):
    """FX FYᵀ (FY = FX when None) as a dense float64 array, on the columns some row uses:
    the product would otherwise index all of them (|A|^k = 10¹² k-mers for k = 20 on DNA,
    10¹³ weighted-degree features) and run out of memory."""
    used = np.unique(FX.indices if FY is None else np.concatenate([FX.indices, FY.indices]))

    def compact(F):
        return sparse.csr_matrix(
            (F.data, np.searchsorted(used, F.indices), F.indptr), shape=(F.shape[0], len(used))
        )

    FX = compact(FX)
    FY = FX if FY is None else compact(FY)
    return np.asarray((FX @ FY.T).toarray(), dtype=np.float64)


class StringKernel(Kernel):
    """Base class of kernels on strings: ``k(X, Y=None)`` takes sequences of ``str``.

    Subclasses implement ``_gram``, ``_diag`` and ``_features`` (a ``scipy.sparse`` CSR matrix)
    on validated lists of strings. The construction rules of
    :doc:`chapter 1 </book/01_kernels_and_feature_maps>` return string kernels.
    """

    def __call__(self, X, Y=None):
        X = _check_strings(X, "X")
        with np.errstate(over="ignore", invalid="ignore"):
            K = self._gram(X, None if Y is None else _check_strings(Y, "Y"))
        return _finite(K, self, "Gram matrix")

    def diag(self, X):
        with np.errstate(over="ignore", invalid="ignore"):
            return _finite(self._diag(_check_strings(X, "X")), self, "diagonal")

    def feature_map(self, X):
        """Explicit features φ(X) as a sparse CSR matrix with φ(x)ᵀφ(y) = K(x, y)."""
        return self._features(_check_strings(X, "X"))

    domain = "strings"

    # construction rules: the same algebra, applied to string inputs
    def __add__(self, other):
        other = self._check_operand(other, "+")  # a string kernel or a number
        if isinstance(other, StringKernel):
            return StringSum(self, other)
        return StringSum(self, _StringConstant(other))

    __radd__ = __add__

    def __mul__(self, other):
        other = self._check_operand(other, "*")  # a string kernel or a number
        if isinstance(other, StringKernel):
            return StringProduct(self, other)
        return StringScaled(other, self)

    __rmul__ = __mul__


class _Encoder:
    """Map characters to codes 0..|A|-1; unknown characters raise or become -1 ("skip")."""

    def __init__(self, alphabet, unknown):
        self.alphabet = _check_alphabet(alphabet)
        # (an array compared with the names raised numpy's "truth value ... is ambiguous")
        if not isinstance(unknown, str) or unknown not in _UNKNOWN:
            raise ValueError(f"unknown must be one of {_UNKNOWN}, got {unknown!r}.")
        self.unknown = unknown
        self.table = np.full(0x110000 if max(map(ord, alphabet)) > 255 else 256, -1, np.int64)
        self.table[[ord(c) for c in alphabet]] = np.arange(len(alphabet))

    def __call__(self, s, i):
        # "surrogatepass": a lone surrogate is a character outside the alphabet, not an error
        raw = s.encode("utf-32-le", "surrogatepass")
        codes = np.frombuffer(raw, dtype=np.uint32).astype(np.int64)
        codes = np.where(
            codes < len(self.table), self.table[np.minimum(codes, len(self.table) - 1)], -1
        )
        if self.unknown == "error" and (codes < 0).any():
            bad = sorted({c for c in s if c not in self.alphabet})
            raise ValueError(
                f"sequence {i} contains characters {bad} outside the alphabet "
                f"{self.alphabet!r}; pass unknown='skip' to drop the k-mers that contain them."
            )
        return codes


class SpectrumKernel(StringKernel):
    r"""k-spectrum kernel :math:`K(x, y) = \sum_{u \in \mathcal A^k} \phi_u(x)\phi_u(y)`.

    :math:`\phi_u(x)` counts the occurrences of the k-mer u in x (Leslie et al. 2002).

    Parameters
    ----------
    k : int >= 1, default=3
        Length of the substrings compared.
    alphabet : str, default="ACGT"
        The symbols 𝒜; the feature space has :math:`|\mathcal A|^k` coordinates.
    unknown : {"error", "skip"}, default="error"
        What a character outside the alphabet does: raise a ValueError, or drop the k-mers
        containing it.

    References
    ----------
    C. Leslie, E. Eskin, W. S. Noble. The spectrum kernel: a string kernel for SVM protein
    classification. Pacific Symposium on Biocomputing, 2002.

    Examples
    --------
    >>> from kernelcourse.strings import SpectrumKernel
    >>> k = SpectrumKernel(k=2)
    >>> print(k(["ACGT", "ACGA"], ["ACGT"]).ravel())  # shared 2-mers: AC, CG, GT
    [3. 2.]
    """

    def __init__(self, k=3, alphabet=DNA, unknown="error"):
        self.k = _check_k(k)
        self._encoder = _Encoder(alphabet, unknown)
        self.alphabet, self.unknown = alphabet, unknown
        # k capped at 62, where any alphabet of two or more symbols has passed 2^62 already:
        # 4 ** (2**62) is never formed (k = 2**62 hung)
        if len(alphabet) ** min(self.k, 62) >= 2**62:
            raise ValueError(
                f"|alphabet|^k = {len(alphabet)}^{self.k} k-mers do not fit 64-bit indices; "
                "use a smaller k."
            )
        self._powers = len(alphabet) ** np.arange(self.k - 1, -1, -1, dtype=np.int64)

    def _params(self):
        return {"k": self.k, "alphabet": self.alphabet, "unknown": self.unknown}

    def feature_dim(self, n_features=None):
        r"""The number of possible k-mers, :math:`|\mathcal A|^k`."""
        return len(self.alphabet) ** self.k

    def _kmer_indices(self, s, i):
        codes = self._encoder(s, i)
        if len(codes) < self.k:
            return np.empty(0, dtype=np.int64)
        windows = sliding_window_view(codes, self.k)
        keep = (windows >= 0).all(axis=1)
        return windows[keep] @ self._powers

    def _features(self, X):
        cols = [self._kmer_indices(s, i) for i, s in enumerate(X)]
        rows = np.repeat(np.arange(len(X)), [len(c) for c in cols])
        data = np.ones(len(rows))
        F = sparse.csr_matrix(
            (data, (rows, np.concatenate(cols) if cols else [])),
            shape=(len(X), self.feature_dim()),
        )
        F.sum_duplicates()  # repeated k-mers add up to their counts
        return F

    def _gram(self, X, Y):
        FX = self._features(X)
        return _sparse_gram(FX, None if Y is None else self._features(Y))

    def _diag(self, X):
        F = self._features(X)
        return np.asarray(F.multiply(F).sum(axis=1)).ravel()

    def kmers(self, indices):
        r"""The k-mer strings of feature indices (inverse of the base-:math:`|\mathcal A|` code).

        Raises
        ------
        TypeError
            If an index is not an integer (1.5 is not read as 1).
        ValueError
            If an index is outside 0..feature_dim() − 1.
        """
        A = len(self.alphabet)
        out = []
        for idx in np.atleast_1d(indices):
            if isinstance(idx, (bool, np.bool_)) or not isinstance(idx, numbers.Integral):
                raise TypeError(f"indices must be integers, got {idx!r}.")
            idx = int(idx)
            if not 0 <= idx < self.feature_dim():
                raise ValueError(f"index {idx} is outside 0..{self.feature_dim() - 1}.")
            digits = [(idx // A**p) % A for p in range(self.k - 1, -1, -1)]
            out.append("".join(self.alphabet[d] for d in digits))
        return out


class WeightedDegreeKernel(StringKernel):
    r"""Weighted-degree kernel on strings of equal length N.

    :math:`K(x, y) = \sum_{d=1}^{L} \eta_d \sum_{l=1}^{N-d+1} \mathbb 1[x_{l:l+d} = y_{l:l+d}]`
    with :math:`\eta_d = 2(L - d + 1) / (L(L+1))`. Unlike the spectrum kernel it is
    position-aware: a motif counts only where both strings have it at the same place.

    Parameters
    ----------
    degree : int >= 1, default=3
        The largest substring length L.
    alphabet : str, default="ACGT"
    unknown : {"error", "skip"}, default="error"
        "skip" drops the d-mers that contain a character outside the alphabet.

    Attributes
    ----------
    eta : ndarray of shape (L,)
        The weights :math:`\eta_1, \dots, \eta_L`, which sum to 1.

    References
    ----------
    G. Rätsch, S. Sonnenburg. Accurate splice site detection for Caenorhabditis elegans. In
    Kernel Methods in Computational Biology, MIT Press, 2004.

    Examples
    --------
    >>> from kernelcourse.strings import WeightedDegreeKernel
    >>> k = WeightedDegreeKernel(degree=2)
    >>> print(k(["ACGT", "ACGA"], ["ACGT"]).ravel())
    [3.66666667 2.66666667]
    """

    def __init__(self, degree=3, alphabet=DNA, unknown="error"):
        self.degree = _check_k(degree, "degree")
        self._encoder = _Encoder(alphabet, unknown)
        self.alphabet, self.unknown = alphabet, unknown
        L = self.degree
        # η holds L floats, built by numpy: a Python loop took seconds at degree 10**7 and
        # never ended at 2**62
        check_memory(8 * L, f"WeightedDegreeKernel's weights η for degree={L}", "lower degree")
        self.eta = 2.0 * (L - np.arange(L)) / float(L * (L + 1))

    def _params(self):
        return {"degree": self.degree, "alphabet": self.alphabet, "unknown": self.unknown}

    def feature_dim(self, length):
        r"""The dimension :math:`\sum_d (N - d + 1)\,|\mathcal A|^d` for strings of length N.

        Raises
        ------
        TypeError, ValueError
            If ``length`` is not an integer >= 0.
        """
        length = check_count(length, "length", minimum=0)
        A = len(self.alphabet)
        # terms with d > N are 0: stop there, not at the degree (4**d for d up to 10**6 took
        # minutes of big-integer arithmetic on strings of length 4)
        return sum((length - d + 1) * A**d for d in range(1, min(self.degree, length) + 1))

    def _codes(self, X, other=None):
        length = len(X[0]) if other is None else other
        for i, s in enumerate(X):
            if len(s) != length:
                raise ValueError(
                    f"the weighted-degree kernel compares strings position by position, so all "
                    f"must have one length; sequence {i} has length {len(s)}, expected {length}."
                )
        return np.stack([self._encoder(s, i) for i, s in enumerate(X)]), length

    def _features_of(self, X, length):
        codes, _ = self._codes(X, length)
        n, A = len(X), len(self.alphabet)
        if self.feature_dim(length) >= 2**62:  # k-mer indices are int64
            raise ValueError(
                f"degree={self.degree} on strings of length {length} over an alphabet of {A} "
                f"letters gives {self.feature_dim(length):.3g} features, beyond the int64 "
                "k-mer indices; use a smaller degree."
            )
        blocks = []
        for d in range(1, self.degree + 1):
            if length - d + 1 <= 0:
                break
            powers = A ** np.arange(d - 1, -1, -1, dtype=np.int64)
            windows = sliding_window_view(codes, d, axis=1)  # (n, N - d + 1, d)
            idx = windows @ powers
            valid = (windows >= 0).all(axis=2)
            positions = np.arange(length - d + 1) * A**d
            rows, cols = np.nonzero(valid)
            data = np.full(len(rows), math.sqrt(self.eta[d - 1]))
            blocks.append(
                sparse.csr_matrix(
                    (data, (rows, positions[cols] + idx[rows, cols])),
                    shape=(n, (length - d + 1) * A**d),
                )
            )
        return sparse.hstack(blocks, format="csr")

    def _features(self, X):
        return self._features_of(X, len(X[0]))

    def _gram(self, X, Y):
        length = len(X[0])
        FX = self._features_of(X, length)
        return _sparse_gram(FX, None if Y is None else self._features_of(Y, length))

    def _diag(self, X):
        F = self._features(X)
        return np.asarray(F.multiply(F).sum(axis=1)).ravel()


# -- construction rules on string kernels ---------------------------------------------------------
class _StringConstant(StringKernel):
    def __init__(self, c):
        # as Constant does: an integer beyond the float range (10**400) gets an error that
        # names c, not numpy's isfinite's complaint about its input type
        self.c = check_nonnegative(c, "c")

    def _params(self):
        return {"c": self.c}

    def _gram(self, X, Y):
        return np.full((len(X), len(X if Y is None else Y)), self.c)

    def _diag(self, X):
        return np.full(len(X), self.c)

    def feature_dim(self, n_features=None):
        return 1

    def _features(self, X):
        return sparse.csr_matrix(np.full((len(X), 1), math.sqrt(self.c)))


class StringScaled(StringKernel, Scaled):
    """c · K₁ on strings; feature map √c φ₁."""


class StringSum(StringKernel, Sum):
    """K₁ + K₂ on strings; feature map [φ₁, φ₂] (sparse)."""

    def _features(self, X):
        return sparse.hstack([self.k1._features(X), self.k2._features(X)], format="csr")


class StringProduct(StringKernel, Product):
    """K₁ · K₂ on strings; feature map φ₁ ⊗ φ₂, row by row (sparse)."""

    def _features(self, X):
        F1, F2 = self.k1._features(X).tocsr(), self.k2._features(X).tocsr()
        D2 = F2.shape[1]
        if F1.shape[1] * D2 >= 2**62:
            raise ValueError(
                f"the product's feature map has {F1.shape[1]} × {D2} = {F1.shape[1] * D2:.3g} "
                "coordinates, beyond the int64 k-mer indices; use smaller k (its Gram "
                "matrix, kernel(X), needs no feature map)."
            )
        rows, cols, vals = [], [], []
        for i in range(len(X)):
            a, b = F1[i], F2[i]
            # int64: scipy's int32 indices times D2 wrapped to negative columns from 2³¹ on
            c = (a.indices.astype(np.int64)[:, None] * D2 + b.indices[None, :]).ravel()
            v = (a.data[:, None] * b.data[None, :]).ravel()
            rows.append(np.full(len(c), i))
            cols.append(c)
            vals.append(v)
        return sparse.csr_matrix(
            (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
            shape=(len(X), F1.shape[1] * D2),
        )


class StringExponential(StringKernel, Exponential):
    """exp(K₁) on strings (infinite-dimensional features)."""


def string_exp(k):
    """exp(K) for a string kernel K (the exponential rule of chapter 1)."""
    if not isinstance(k, StringKernel):
        raise TypeError(f"k must be a StringKernel, got {type(k).__name__}.")
    return StringExponential(k)


class Normalized(StringKernel):
    r""":math:`K(x, y) / \sqrt{K(x, x) K(y, y)}`: the weighting rule with
    :math:`f(x) = K(x, x)^{-1/2}`, so that long sequences do not dominate (every
    :math:`K(x, x) = 1`).

    Examples
    --------
    >>> from kernelcourse.strings import SpectrumKernel, normalize
    >>> k = normalize(SpectrumKernel(k=2))
    >>> print(k(["ACGT", "ACGTACGT"]).round(3))
    [[1.    0.961]
     [0.961 1.   ]]
    """

    def __init__(self, k1):
        if not isinstance(k1, StringKernel):
            raise TypeError(f"k1 must be a StringKernel, got {type(k1).__name__}.")
        self.k1 = k1

    def _params(self):
        return {"k1": self.k1}

    def __repr__(self):
        return f"normalize({self.k1!r})"

    def _weights(self, X):
        d = self.k1._diag(X)
        if (d <= 0).any():
            i = int(np.flatnonzero(d <= 0)[0])
            raise ValueError(
                f"sequence {i} has K(x, x) = 0 (e.g. shorter than k), so it cannot be "
                "normalised; drop it or use a smaller k."
            )
        return 1.0 / np.sqrt(d)

    def _gram(self, X, Y):
        wx = self._weights(X)
        wy = wx if Y is None else self._weights(Y)
        K = self.k1._gram(X, Y) * wx[:, None] * wy[None, :]
        if Y is None:
            # (K_ij w_i) w_j and (K_ji w_j) w_i round differently, and K_ii w_i w_i to 1 ± ε:
            # the Gram matrix is exactly symmetric with the unit diagonal that _diag reports
            _copy_upper_to_lower(K)
            np.fill_diagonal(K, 1.0)
        return K

    def _diag(self, X):
        self._weights(X)
        return np.ones(len(X))

    def feature_dim(self, n_features=None):
        return self.k1.feature_dim(n_features)

    def _features(self, X):
        return sparse.csr_matrix(self.k1._features(X).multiply(self._weights(X)[:, None]))


def normalize(k):
    """The normalised kernel K(x, y)/√(K(x, x)K(y, y)) of a string kernel."""
    return Normalized(k)


def string_gram(kernel, X, Y=None):
    """Gram matrix of a string kernel, ready for ``SVC(kernel="precomputed")`` (train: Y=None;
    test rows against training columns: ``string_gram(k, X_test, X_train)``).

    Examples
    --------
    >>> from kernelcourse.strings import SpectrumKernel, string_gram
    >>> print(string_gram(SpectrumKernel(k=1), ["AAC", "CG"]))
    [[5. 1.]
     [1. 2.]]
    """
    if not isinstance(kernel, StringKernel):
        raise TypeError(f"kernel must be a StringKernel, got {type(kernel).__name__}.")
    return kernel(X, Y)


# -- synthetic sequences --------------------------------------------------------------------------
def planted_motif_sequences(
    n_per_class,
    *,
    length=60,
    motifs=("ACGTTGCA", "TTGACCGA"),
    n_copies=1,
    mutation_rate=0.1,
    alphabet=DNA,
    random_state=None,
):
    """Two families of random sequences; family c carries ``motifs[c]`` at random places.

    Background letters are uniform on the alphabet. Each planted copy has every letter replaced
    by a random one with probability ``mutation_rate``, so the families overlap a little.

    Parameters
    ----------
    n_per_class : int
        Sequences per family.
    length : int
        Letters per sequence.
    motifs : pair of str
        The motif of family 0 and of family 1, each at most ``length`` letters.
    n_copies : int
        Copies planted in each sequence, at most ``length``.
    mutation_rate : float in [0, 1]
        Probability that a planted letter is replaced by a random one.
    alphabet : str
        The symbols, each once.
    random_state : None, int or numpy.random.Generator
        Seed of the draws.

    Returns
    -------
    sequences : list of str, length 2 · n_per_class
    labels : ndarray of int in {0, 1}

    Raises
    ------
    TypeError, ValueError
        If an argument is of the wrong type or out of range (the error names it, including
        a ``random_state`` that ``numpy.random.default_rng`` refuses).
    MemoryError
        If the 2 · n_per_class sequences would not fit in the machine's memory.

    Examples
    --------
    >>> from kernelcourse.strings import planted_motif_sequences
    >>> X, y = planted_motif_sequences(3, length=20, random_state=0)
    >>> print(len(X), len(X[0]), y.tolist())
    6 20 [0, 0, 1, 0, 1, 1]
    """
    n_per_class = check_count(n_per_class, "n_per_class")
    length = check_count(length, "length")
    n_copies = check_count(n_copies, "n_copies", minimum=0)
    if n_copies > length:
        # every copy overwrites at least one letter: more copies than letters only overwrite
        # one another, and the loop over 2 · n_per_class · n_copies copies would run for hours
        raise ValueError(
            f"n_copies must be at most length={length} (more copies than a sequence has "
            f"letters only overwrite one another), got {n_copies}."
        )
    if (
        isinstance(mutation_rate, bool)
        or not isinstance(mutation_rate, numbers.Real)
        or not 0 <= mutation_rate <= 1
    ):
        raise ValueError(f"mutation_rate must be a probability in [0, 1], got {mutation_rate!r}.")
    if (
        isinstance(motifs, str)
        or not isinstance(motifs, list | tuple)
        or not all(isinstance(m, str) for m in motifs)
    ):
        raise TypeError(f"motifs must be a pair of strings, got {motifs!r}.")
    # a Python str of `length` letters and its share of the lists: about length + 100 bytes
    check_memory(
        2 * n_per_class * (length + 100),
        f"planted_motif_sequences with n_per_class={n_per_class} sequences of length={length}",
        "lower n_per_class or length",
    )
    try:
        rng = np.random.default_rng(random_state)
    except (TypeError, ValueError) as err:
        raise type(err)(f"random_state: {err}") from None
    alphabet = _check_alphabet(alphabet)
    if len(motifs) != 2:
        raise ValueError(f"motifs must hold two strings (one per family), got {len(motifs)}.")
    for m in motifs:
        if not m or any(c not in alphabet for c in m) or len(m) > length:
            raise ValueError(f"motif {m!r} must be non-empty, use the alphabet, and fit length.")
    letters = np.array(list(alphabet))
    seqs, labels = [], []
    for c, motif in enumerate(motifs):
        for _ in range(n_per_class):
            s = letters[rng.integers(len(alphabet), size=length)]
            for _ in range(n_copies):
                copy = np.array(list(motif))
                flip = rng.random(len(motif)) < mutation_rate
                copy[flip] = letters[rng.integers(len(alphabet), size=int(flip.sum()))]
                start = rng.integers(length - len(motif) + 1)
                s[start : start + len(motif)] = copy
            seqs.append("".join(s))
            labels.append(c)
    order = rng.permutation(len(seqs))
    return [seqs[i] for i in order], np.asarray(labels)[order]
