"""Extreme and unusual inputs to the kernel objects and the string kernels, checked against
direct formulas and scikit-learn: huge and tiny γ and ℓ, float32, rows far apart, kernels
built from kernels on other inputs, and exact symmetry of Gram matrices."""

import collections
import warnings

import numpy as np
import pytest
from scipy.spatial.distance import cdist
from sklearn.gaussian_process.kernels import Matern as SkMatern
from sklearn.metrics.pairwise import laplacian_kernel, rbf_kernel
from test_strings import naive_wd  # the weighted-degree definition, written once

from kernelcourse import kernels as kn
from kernelcourse import strings as ks


def _points(n, d=3, seed=0):
    return np.random.default_rng(seed).normal(size=(n, d))


def _no_warnings(f, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return f(*args)


# -- RBF with a γ so large that K is the identity ------------------------------------------------
@pytest.mark.parametrize(
    ("dtype", "gamma", "scale"),
    [
        (np.float64, 1e300, 1e4),  # γ‖x‖² = 1e308: beyond the float range
        (np.float64, 1e300, 1e7),
        (np.float32, 1e39, 1.0),  # γ itself is beyond float32's range
        (np.float32, 1e30, 1e4),
    ],
)
@pytest.mark.parametrize("with_y", [False, True])
def test_rbf_huge_gamma_is_identity_not_overflow(dtype, gamma, scale, with_y):
    X = (_points(6, seed=1) * scale).astype(dtype)
    Y = (_points(4, seed=2) * scale).astype(dtype) if with_y else None
    K = _no_warnings(kn.RBF(gamma), X, Y)
    Z = X if Y is None else Y
    with np.errstate(over="ignore"):  # −γ‖x − y‖² = −inf: K = 0
        expected = np.exp(-gamma * cdist(X.astype(float), Z.astype(float), "sqeuclidean"))
    assert K.dtype == dtype
    np.testing.assert_array_equal(K, expected.astype(dtype))


@pytest.mark.parametrize(
    ("dtype", "gamma", "scale"), [(np.float64, 1e300, 1e4), (np.float32, 1e39, 1.0)]
)
def test_rbf_rows_against_huge_gamma_match_the_call(dtype, gamma, scale):
    # the SVM's kernel rows (precomputed against its active points) take the same path
    X = (_points(5, seed=3) * scale).astype(dtype)
    Y = (_points(4, seed=4) * scale).astype(dtype)
    k = kn.RBF(gamma)
    out = np.empty((5, 4), dtype)
    rows = k._against(Y)(X, out)
    np.testing.assert_array_equal(rows, k(X, Y))


def test_rbf_per_feature_gamma_beyond_float32_matches_float64():
    X = _points(5, 2, seed=5)
    k = kn.RBF([1e300, 1.0])
    K32 = _no_warnings(k, X.astype(np.float32))
    assert K32.dtype == np.float32
    np.testing.assert_array_equal(K32, k(X.astype(np.float32).astype(float)).astype(np.float32))
    np.testing.assert_array_equal(K32, np.eye(5, dtype=np.float32))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_rbf_per_feature_gamma_where_the_scaled_inputs_overflow(dtype):
    # √γ_1 x_1 = 1e350 (1e160 in float32): K is exp(−Σ_k γ_k (x_k − y_k)²) all the same, and
    # rows equal in the huge feature differ through the small one
    big = 1e200 if dtype == np.float64 else 1e20
    X = np.array([[big, 1.0], [-big, 2.0], [big, 1.0], [big, 2.0]], dtype=dtype)
    k = kn.RBF([1e300, 1.0])
    want = np.array(
        [[1, 0, 1, np.exp(-1)], [0, 1, 0, 0], [1, 0, 1, np.exp(-1)], [np.exp(-1), 0, np.exp(-1), 1]]
    )
    K = _no_warnings(k, X)
    assert K.dtype == dtype
    np.testing.assert_allclose(K, want, rtol=1e-6)
    np.testing.assert_allclose(_no_warnings(k, X, X[:2]), want[:, :2], rtol=1e-6)
    # a tiny γ_k brings a difference beyond the range back: γ_2 (2e150)² = 4
    Z = np.array([[1e308, 1e150], [1e308, -1e150]])
    np.testing.assert_allclose(kn.RBF([1e300, 1e-300])(Z)[0, 1], np.exp(-4.0), rtol=1e-12)


@pytest.mark.parametrize("gamma", [1e-300, 1e-10, 0.5, 1e10])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_rbf_and_laplacian_match_sklearn_across_gamma(gamma, dtype):
    X, Y = _points(8, seed=6).astype(dtype), _points(5, seed=7).astype(dtype)
    X64, Y64 = X.astype(float), Y.astype(float)
    atol = 1e-6 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(kn.RBF(gamma)(X, Y), rbf_kernel(X64, Y64, gamma=gamma), atol=atol)
    np.testing.assert_allclose(
        kn.Laplacian(gamma)(X, Y), laplacian_kernel(X64, Y64, gamma=gamma), atol=atol
    )
    for k in (kn.RBF(gamma), kn.Laplacian(gamma)):
        K = k(X)
        np.testing.assert_array_equal(K, K.T)
        assert kn.is_psd(K.astype(float), tol=1e-6)


@pytest.mark.parametrize("gamma", [1e39, 1e40])
def test_polynomial_float32_gamma_beyond_float32_range(gamma):
    # γ is inf in float32, yet γ xᵀy = O(1) for x near 1e-20: the kernel, not an overflow error
    X = np.array([[1e-20, 2e-20], [3e-20, -1e-20], [0.0, 0.0]], dtype=np.float32)
    k = kn.Polynomial(degree=2, gamma=gamma, coef0=1.0)
    want = k(X.astype(np.float64))
    K = _no_warnings(k, X)
    assert K.dtype == np.float32
    np.testing.assert_allclose(K, want, rtol=1e-6)
    np.testing.assert_allclose(_no_warnings(k.diag, X), np.diag(want), rtol=1e-6)
    np.testing.assert_allclose(_no_warnings(k, X, X[:2]), want[:, :2], rtol=1e-6)
    # the same for a construction rule: a scale beyond float32's range
    scaled = gamma * kn.Linear()
    np.testing.assert_allclose(_no_warnings(scaled, X), scaled(X.astype(np.float64)), rtol=1e-6)


# -- Laplacian and Matérn in float32 -------------------------------------------------------------
def test_laplacian_float32_gamma_beyond_float32_range():
    X = _points(5, seed=8).astype(np.float32)
    K = _no_warnings(kn.Laplacian(1e39), X)
    np.testing.assert_array_equal(K, np.eye(5, dtype=np.float32))


def test_laplacian_float32_distance_beyond_float32_range():
    # ‖x − y‖₁ = 4e38 is inf in float32, but γ = 1e-39 brings the exponent back to −0.4
    X = np.array([[2e38], [-2e38]], dtype=np.float32)
    K = _no_warnings(kn.Laplacian(1e-39), X)
    d = 2 * float(np.float32(2e38))
    np.testing.assert_allclose(K[0, 1], np.exp(-1e-39 * d), rtol=1e-6)
    assert K.dtype == np.float32


def test_laplacian_rows_whose_distance_overflows_float64():
    # ‖x − y‖₁ = 2e308 + 1 is beyond the float range; γ = 1e-308 makes the exponent −2
    X = np.array([[1e308, 0.0], [-1e308, 1.0], [5e307, 2.0]])
    K = _no_warnings(kn.Laplacian(1e-308), X)
    expected = np.exp(-np.array([[0.0, 2.0, 0.5], [2.0, 0.0, 1.5], [0.5, 1.5, 0.0]]))
    np.testing.assert_allclose(K, expected, rtol=1e-12)
    np.testing.assert_array_equal(K, K.T)
    np.testing.assert_array_equal(kn.Laplacian(1e-308)(X, X[:2]), K[:, :2])
    np.testing.assert_array_equal(kn.Laplacian(1.0)(X), np.eye(3))  # far apart: K = I


@pytest.mark.parametrize("nu", [0.5, 1.5, 2.5])
def test_matern_rows_whose_distance_overflows_float64(nu):
    X = np.array([[1e308], [-1e308]])
    K = _no_warnings(kn.Matern(nu=nu, length_scale=1e308), X)
    expected = SkMatern(nu=nu, length_scale=1.0)(np.array([[0.0], [2.0]]))
    np.testing.assert_allclose(K, expected, rtol=1e-12)


@pytest.mark.parametrize("nu", [0.5, 1.5, 2.5])
def test_matern_float32_tiny_length_scale(nu):
    X = _points(5, seed=9).astype(np.float32)
    K = _no_warnings(kn.Matern(nu=nu, length_scale=1e-300), X)
    assert K.dtype == np.float32
    np.testing.assert_array_equal(K, np.eye(5, dtype=np.float32))


@pytest.mark.parametrize("nu", [0.5, 1.5, 2.5])
def test_matern_float32_rows_far_apart_with_huge_length_scale(nu):
    # the distance 6e38 overflows float32 before ℓ = 3e38 brings it back to r = 2
    X = np.array([[3e38], [-3e38]], dtype=np.float32)
    ls = float(X[0, 0])
    K = _no_warnings(kn.Matern(nu=nu, length_scale=ls), X)
    expected = SkMatern(nu=nu, length_scale=1.0)(np.array([[0.0], [2.0]]))
    np.testing.assert_allclose(K, expected, rtol=1e-6)


@pytest.mark.parametrize("nu", [0.5, 1.5, 2.5])
@pytest.mark.parametrize("length_scale", [1e-5, 1.0, 1e5])
def test_matern_matches_sklearn_float32_and_float64(nu, length_scale):
    X, Y = _points(7, seed=10), _points(3, seed=11)
    ref = SkMatern(nu=nu, length_scale=length_scale)(X, Y)
    k = kn.Matern(nu=nu, length_scale=length_scale)
    np.testing.assert_allclose(k(X, Y), ref, atol=1e-12)
    K32 = k(X.astype(np.float32), Y.astype(np.float32))
    assert K32.dtype == np.float32
    np.testing.assert_allclose(K32, ref, atol=1e-6)


# -- construction rules only combine kernels on the same inputs -----------------------------------
@pytest.mark.parametrize(
    "build",
    [
        lambda s: kn.exp(s),
        lambda s: kn.weighted(s, lambda X: np.ones(len(X))),
        lambda s: kn.Sum(kn.RBF(), s),
        lambda s: kn.Product(s, kn.Linear()),
        lambda s: kn.Scaled(2.0, s),
    ],
)
def test_vector_rules_refuse_a_string_kernel_by_name(build):
    with pytest.raises(TypeError, match=r"k[12] compares strings.*string_exp"):
        build(ks.SpectrumKernel(k=2))


def test_string_rules_still_build_string_kernels():
    s = ks.SpectrumKernel(k=2)
    X = ["ACGT", "ACGA"]
    for k in (ks.string_exp(s), 2.0 * s, s + 1, s * s, ks.normalize(s)):
        assert isinstance(k, ks.StringKernel)
        assert k(X).shape == (2, 2)


# -- dtypes of diagonals, exact symmetry ----------------------------------------------------------
def test_linear_with_matrix_diag_keeps_float32():
    X = _points(4, seed=12).astype(np.float32)
    k = kn.Linear(A=np.diag([1.0, 2.0, 0.5]))
    assert k(X).dtype == np.float32
    assert k.diag(X).dtype == np.float32
    np.testing.assert_allclose(k.diag(X), np.diag(k(X)), rtol=1e-6)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_weighted_gram_is_exactly_symmetric(dtype):
    X = _points(30, seed=13).astype(dtype)
    k = kn.weighted(kn.RBF(0.3), lambda Z: 1.0 + Z[:, 0] ** 2)
    K = k(X)
    np.testing.assert_array_equal(K, K.T)
    w = 1.0 + X.astype(float)[:, 0] ** 2
    ref = w[:, None] * rbf_kernel(X.astype(float), gamma=0.3) * w[None, :]
    np.testing.assert_allclose(K, ref, rtol=1e-5 if dtype == np.float32 else 1e-12)


def test_normalized_string_gram_is_exactly_symmetric_with_unit_diagonal():
    X, _ = ks.planted_motif_sequences(30, length=37, random_state=0)
    X = [x[: 10 + i] for i, x in enumerate(X)]
    for inner in (ks.SpectrumKernel(k=3), ks.SpectrumKernel(k=2) * ks.SpectrumKernel(k=1) + 1):
        K = ks.normalize(inner)(X)
        np.testing.assert_array_equal(K, K.T)
        np.testing.assert_array_equal(np.diag(K), 1.0)
        d = inner.diag(X)
        np.testing.assert_allclose(K, inner(X) / np.sqrt(np.outer(d, d)), rtol=1e-14)


def test_is_psd_asymmetry_beyond_float_range_is_false_without_warning():
    K = np.array([[1e308, -1e308], [1e308, 1e308]])
    assert _no_warnings(kn.is_psd, K) is False
    assert _no_warnings(kn.is_psd, np.array([[1e308, 1e308], [1e308, 1e308]])) is True


# -- string kernels against direct formulas -------------------------------------------------------
def _spectrum(x, y, k, alphabet):
    def counts(s):
        return collections.Counter(
            s[i : i + k] for i in range(len(s) - k + 1) if all(c in alphabet for c in s[i : i + k])
        )

    a, b = counts(x), counts(y)
    return sum(a[u] * b[u] for u in a)


@pytest.mark.parametrize("alphabet", ["ACGT", "ab", "αβγ😀", "\x01\x02", "x"])
@pytest.mark.parametrize("k", [1, 2, 3, 7])
def test_string_kernels_match_direct_formulas(alphabet, k):
    rng = np.random.default_rng(k)
    letters = list(alphabet)
    X = ["".join(rng.choice(letters, size=rng.integers(1, 12))) for _ in range(6)]
    Y = ["".join(rng.choice(letters + ["?"], size=rng.integers(1, 12))) for _ in range(3)]
    s = ks.SpectrumKernel(k=k, alphabet=alphabet, unknown="skip")
    ref = np.array([[_spectrum(x, y, k, alphabet) for y in Y] for x in X])
    np.testing.assert_array_equal(s(X, Y), ref)
    np.testing.assert_array_equal((s.feature_map(X) @ s.feature_map(Y).T).toarray(), ref)
    np.testing.assert_array_equal(s.diag(X), [_spectrum(x, x, k, alphabet) for x in X])
    combo = s * ks.SpectrumKernel(k=1, alphabet=alphabet, unknown="skip") + 0.5
    F = combo.feature_map(X)
    np.testing.assert_allclose((F @ F.T).toarray(), combo(X), rtol=1e-12)

    Xw = ["".join(rng.choice(letters, size=9)) for _ in range(5)]
    w = ks.WeightedDegreeKernel(degree=k, alphabet=alphabet)
    ref_w = np.array([[naive_wd(x, y, k) for y in Xw] for x in Xw])
    np.testing.assert_allclose(w(Xw), ref_w, rtol=1e-12)
    np.testing.assert_allclose(w.diag(Xw), np.diag(ref_w), rtol=1e-12)
    Fw = w.feature_map(Xw)
    np.testing.assert_allclose((Fw @ Fw.T).toarray(), ref_w, rtol=1e-12)


def test_string_inputs_of_other_container_types():
    s = ks.SpectrumKernel(k=2)
    expected = s(["ACGT", "AC"])
    np.testing.assert_array_equal(s(np.array(["ACGT", "AC"])), expected)
    np.testing.assert_array_equal(s(iter(["ACGT", "AC"])), expected)
    np.testing.assert_array_equal(s(["A", "AC"]), [[0.0, 0.0], [0.0, 1.0]])  # k > len: no k-mer
    with pytest.raises(TypeError, match=r"X\[0\] must be a str, got bytes"):
        s([b"ACGT"])
    with pytest.raises(TypeError, match=r"X\[1\] must be a str"):
        s(["ACGT", 5])
    with pytest.raises(ValueError, match=r"k must be an integer >= 1"):
        ks.SpectrumKernel(k=0)
    with pytest.raises(TypeError, match=r"k must be an integer"):
        ks.SpectrumKernel(k=True)


def test_is_psd_near_the_float_range():
    # λ_max = 2.2e308 overflows; λ_min = −1.7e308 must still fail the test
    K = np.array([[1.5e308, 1.5e308], [1.5e308, -1e308]])
    assert _no_warnings(kn.is_psd, K) is False
    assert kn.is_psd(K / 1e300) is False
    Z = np.random.default_rng(14).normal(size=(6, 2)) * 1e153
    assert _no_warnings(kn.is_psd, Z @ Z.T) is True  # rank 2, entries up to ~1e307


@pytest.mark.parametrize(
    "c", [10**400, float("inf"), float("nan"), -1.0], ids=["10**400", "inf", "nan", "-1"]
)
def test_string_kernel_plus_bad_constant_names_c(c):
    with pytest.raises(ValueError, match="c must be a finite number"):
        ks.SpectrumKernel(k=2) + c


@pytest.mark.parametrize(
    ("build", "name"),
    [
        (lambda: kn.RBF(gamma=0), "gamma"),
        (lambda: kn.RBF(gamma=True), "gamma"),
        (lambda: kn.RBF(gamma=np.nan), "gamma"),
        (lambda: kn.RBF(gamma=[1.0, -1.0]), "gamma"),
        (lambda: kn.Laplacian(gamma="1"), "gamma"),
        (lambda: kn.Polynomial(degree=0), "degree"),
        (lambda: kn.Polynomial(degree=2.0), "degree"),
        (lambda: kn.Polynomial(coef0=-1), "coef0"),
        (lambda: kn.Polynomial(gamma=np.inf), "gamma"),
        (lambda: kn.Matern(nu=1.0), "nu"),
        (lambda: kn.Matern(nu=True), "nu"),
        (lambda: kn.Matern(length_scale=0.0), "length_scale"),
        (lambda: kn.Constant(-1.0), "c"),
        (lambda: kn.is_psd(np.eye(2), tol=-1.0), "tol"),
        (lambda: ks.WeightedDegreeKernel(degree=0), "degree"),
        (lambda: ks.SpectrumKernel(alphabet="AA"), "alphabet"),
        (lambda: ks.SpectrumKernel(unknown="drop"), "unknown"),
    ],
)
def test_bad_parameters_are_refused_by_name(build, name):
    with pytest.raises((TypeError, ValueError), match=rf"\b{name}\b"):
        build()
