import math

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from sklearn.metrics.pairwise import (
    cosine_similarity,
    laplacian_kernel,
    polynomial_kernel,
    rbf_kernel,
)

from kernelcourse import kernels as kn

RNG = np.random.default_rng(0)


def _points(n=12, d=3, seed=0):
    return np.random.default_rng(seed).normal(size=(n, d))


# -- base kernels against closed forms and scikit-learn -------------------------------------------
def test_rbf_matches_sklearn_and_range():
    X, Y = _points(20, 4, 1), _points(7, 4, 2)
    k = kn.RBF(gamma=0.3)
    np.testing.assert_allclose(k(X, Y), rbf_kernel(X, Y, gamma=0.3), rtol=1e-12, atol=1e-14)
    K = k(X)
    assert np.all(K > 0) and np.all(K <= 1)
    np.testing.assert_array_equal(np.diag(K), 1.0)
    np.testing.assert_array_equal(K, K.T)


def test_laplacian_matches_sklearn():
    X, Y = _points(15, 3, 3), _points(5, 3, 4)
    k = kn.Laplacian(gamma=0.7)
    np.testing.assert_allclose(k(X, Y), laplacian_kernel(X, Y, gamma=0.7), rtol=1e-12)
    np.testing.assert_allclose(k(X), laplacian_kernel(X, gamma=0.7), rtol=1e-12)


@pytest.mark.parametrize("nu", [0.5, 1.5, 2.5])
def test_matern_matches_sklearn_gp_kernel(nu):
    from sklearn.gaussian_process.kernels import Matern as SkMatern

    X, Y = _points(10, 2, 5), _points(6, 2, 6)
    k = kn.Matern(nu=nu, length_scale=1.7)
    ref = SkMatern(length_scale=1.7, nu=nu)(X, Y)
    np.testing.assert_allclose(k(X, Y), ref, rtol=1e-10, atol=1e-14)


def test_polynomial_and_cosine_match_sklearn():
    X, Y = _points(9, 3, 7), _points(4, 3, 8)
    k = kn.Polynomial(degree=3, gamma=0.5, coef0=2.0)
    np.testing.assert_allclose(
        k(X, Y), polynomial_kernel(X, Y, degree=3, gamma=0.5, coef0=2.0), rtol=1e-12
    )
    np.testing.assert_allclose(kn.Cosine()(X, Y), cosine_similarity(X, Y), rtol=1e-12)


def test_linear_with_matrix():
    X, Y = _points(8, 3, 9), _points(5, 3, 10)
    B = RNG.normal(size=(3, 3))
    A = B @ B.T
    np.testing.assert_allclose(kn.Linear(A)(X, Y), X @ A @ Y.T, rtol=1e-12)
    np.testing.assert_allclose(kn.Linear()(X, Y), X @ Y.T, rtol=1e-12)


def test_diag_matches_gram_diagonal():
    X = _points(10, 3, 11)
    ks = [
        kn.RBF(0.5),
        kn.Laplacian(0.2),
        kn.Matern(2.5, 0.8),
        kn.Polynomial(2, 0.3, 1.0),
        kn.Linear(),
        kn.Cosine(),
        kn.Constant(2.0),
        2.0 * kn.RBF(0.1) + kn.Linear(),
        kn.exp(kn.Linear() * 0.1),
        kn.weighted(kn.Polynomial(2), lambda Z: np.cos(Z[:, 0])),
    ]
    for k in ks:
        np.testing.assert_allclose(k.diag(X), np.diag(k(X)), rtol=1e-12, err_msg=repr(k))


def test_float32_is_kept():
    X = _points(5, 2).astype(np.float32)
    assert kn.RBF(1.0)(X).dtype == np.float32
    assert kn.RBF(1.0)(X, X.astype(np.float64)).dtype == np.float64


# -- feature maps: the construction-rules table of lecture 000 ------------------------------------
def _finite_kernels(d):
    B = np.random.default_rng(d).normal(size=(d, d))
    return [
        kn.Linear(),
        kn.Linear(B @ B.T),
        kn.Polynomial(degree=2, gamma=0.5, coef0=1.0),
        kn.Polynomial(degree=3, gamma=1.0, coef0=0.0),
        kn.Cosine(),
        kn.Constant(0.5),
        3.0 * kn.Linear(),
        kn.Linear() + kn.Polynomial(2),
        kn.Linear() * kn.Polynomial(2, coef0=0.5),
        kn.weighted(kn.Linear(), lambda Z: np.exp(-np.sum(Z**2, axis=1))),
        (kn.Linear() + 1.0) * kn.Cosine(),
    ]


@pytest.mark.parametrize("idx", range(11))
def test_feature_map_reproduces_kernel(idx):
    X = _points(9, 3, 12)
    k = _finite_kernels(3)[idx]
    Phi = k.feature_map(X)
    assert Phi.shape == (9, k.feature_dim(3))
    np.testing.assert_allclose(Phi @ Phi.T, k(X), rtol=1e-10, atol=1e-10, err_msg=repr(k))


def test_feature_dimensions_follow_the_table():
    d = 4
    k1, k2 = kn.Linear(), kn.Polynomial(degree=2, coef0=1.0)
    D1, D2 = k1.feature_dim(d), k2.feature_dim(d)
    assert D2 == math.comb(d + 2, 2)
    assert (k1 + k2).feature_dim(d) == D1 + D2
    assert (k1 * k2).feature_dim(d) == D1 * D2
    assert (2.5 * k1).feature_dim(d) == D1
    assert kn.weighted(k1, np.linalg.norm).feature_dim(d) == D1
    assert kn.exp(k1).feature_dim(d) == math.inf
    assert kn.RBF(1.0).feature_dim(d) == math.inf


@pytest.mark.parametrize(
    "k",
    [kn.RBF(1.0), kn.Laplacian(1.0), kn.Matern(1.5), kn.exp(kn.Linear()), kn.Linear() + kn.RBF()],
)
def test_infinite_feature_map_raises(k):
    with pytest.raises(ValueError, match="infinite-dimensional"):
        k.feature_map(_points(3, 2))
    assert not k.has_finite_features


# -- property tests -------------------------------------------------------------------------------
finite_floats = st.floats(-3, 3, allow_nan=False, allow_infinity=False, width=64)
point_sets = st.integers(1, 3).flatmap(
    lambda d: arrays(np.float64, st.tuples(st.integers(2, 12), st.just(d)), elements=finite_floats)
)
base_kernels = st.sampled_from(
    [
        kn.RBF(0.5),
        kn.RBF(3.0),
        kn.Laplacian(0.8),
        kn.Matern(0.5),
        kn.Matern(1.5, 2.0),
        kn.Matern(2.5, 0.5),
        kn.Polynomial(2, 0.5, 1.0),
        kn.Linear(),
        kn.Cosine(),
    ]
)


@st.composite
def composed_kernels(draw, depth=2):
    k = draw(base_kernels)
    for _ in range(draw(st.integers(0, depth))):
        rule = draw(st.sampled_from(["scale", "sum", "product", "exp", "weight"]))
        if rule == "scale":
            k = draw(st.floats(0.1, 5.0)) * k
        elif rule == "sum":
            k = k + draw(base_kernels)
        elif rule == "product":
            k = k * draw(base_kernels)
        elif rule == "exp":
            k = kn.exp(0.2 * k)
        else:
            k = kn.weighted(k, lambda Z: 1.0 / (1.0 + np.sum(Z**2, axis=1)))
    return k


def _representable(k, X):
    """Whether K(x, x) is within the float range for every row (nested exp of a polynomial
    need not be: exp(0.2 exp(0.2 · 100)) at x = (3, 3)). By Cauchy–Schwarz,
    |K(x, y)| ≤ √(K(x, x) K(y, y)): then the whole Gram matrix is representable too. A
    diagonal beyond the range is refused by name, which other tests check."""
    try:
        k.diag(X)
    except ValueError as err:
        assert "overflows" in str(err)
        return False
    return True


@given(k=composed_kernels(), X=point_sets)
def test_every_rule_keeps_symmetry_and_psd(k, X):
    assume(_representable(k, X))
    K = k(X)
    np.testing.assert_allclose(K, K.T, rtol=1e-12, atol=1e-12)
    eig = np.linalg.eigvalsh(K)
    assert eig[0] >= -1e-8 * max(1.0, eig[-1]), repr(k)
    assert kn.is_psd(K, tol=1e-8)


@given(k=composed_kernels(), X=point_sets)
def test_block_evaluation_agrees_with_full_gram(k, X):
    assume(_representable(k, X))
    # K(X, Y) for a split of the rows is the corresponding block of K(X)
    m = len(X) // 2
    np.testing.assert_allclose(k(X[:m], X[m:]), k(X)[:m, m:], rtol=1e-10, atol=1e-12)


@given(X=point_sets, data=st.data())
def test_feature_map_identity_property(X, data):
    d = X.shape[1]
    k = data.draw(st.sampled_from(_finite_kernels(d)))
    Phi = k.feature_map(X)
    np.testing.assert_allclose(Phi @ Phi.T, k(X), rtol=1e-9, atol=1e-9)


@given(X=point_sets, gamma=st.floats(0.01, 10))
def test_rbf_range(X, gamma):
    K = kn.RBF(gamma)(X)
    assert np.all(K >= 0) and np.all(K <= 1)
    np.testing.assert_array_equal(np.diag(K), 1.0)


# -- is_psd ---------------------------------------------------------------------------------------
def test_is_psd():
    assert kn.is_psd(kn.gram(kn.RBF(1.0), _points(30, 2)))
    assert not kn.is_psd(np.array([[1.0, 2.0], [2.0, 1.0]]))  # eigenvalues 3 and -1
    assert not kn.is_psd(np.array([[1.0, 0.5], [0.0, 1.0]]))  # not symmetric


@pytest.mark.parametrize("scale", [1e-300, 1e-160, 1e-12, 1.0, 1e12, 1e300])
def test_is_psd_does_not_depend_on_the_scale(scale):
    # An absolute floor would call a small indefinite matrix PSD (1e-12 · [[1, 2], [2, 1]]).
    Z = np.random.default_rng(0).normal(size=(20, 3))
    assert kn.is_psd(scale * (Z @ Z.T))
    assert not kn.is_psd(scale * np.array([[1.0, 2.0], [2.0, 1.0]]))
    assert not kn.is_psd(-scale * np.eye(2))
    assert kn.is_psd(scale * np.zeros((2, 2)))
    with pytest.raises(ValueError, match="square"):
        kn.is_psd(np.ones((2, 3)))


# -- bad input ------------------------------------------------------------------------------------
@pytest.mark.parametrize("gamma", [0, -1.0, np.nan, np.inf])
@pytest.mark.parametrize("cls", [kn.RBF, kn.Laplacian])
def test_bad_gamma(cls, gamma):
    with pytest.raises(ValueError, match="gamma"):
        cls(gamma)


def test_bad_parameters():
    with pytest.raises(ValueError, match="nu must be one of"):
        kn.Matern(nu=2.0)
    with pytest.raises(ValueError, match="length_scale"):
        kn.Matern(nu=1.5, length_scale=0)
    with pytest.raises(ValueError, match="degree"):
        kn.Polynomial(degree=0)
    with pytest.raises(ValueError, match="coef0"):
        kn.Polynomial(degree=2, coef0=-1)
    with pytest.raises(ValueError, match="c must be"):
        -1.0 * kn.RBF()
    with pytest.raises(TypeError, match="gamma must be a real number"):
        kn.RBF("big")
    with pytest.raises(TypeError, match="f must be a callable"):
        kn.weighted(kn.RBF(), 3.0)
    with pytest.raises(TypeError, match="k1 must be a kernelcourse"):
        kn.exp(np.ones((2, 2)))


def test_linear_A_checks():
    with pytest.raises(ValueError, match="positive semidefinite"):
        kn.Linear(np.array([[1.0, 0.0], [0.0, -1.0]]))
    with pytest.raises(ValueError, match="symmetric"):
        kn.Linear(np.array([[1.0, 1.0], [0.0, 1.0]]))
    with pytest.raises(ValueError, match="square"):
        kn.Linear(np.ones((2, 3)))
    with pytest.raises(ValueError, match="features but A"):
        kn.Linear(np.eye(2))(np.ones((3, 3)))


def test_bad_inputs_name_the_argument():
    k = kn.RBF(1.0)
    X = _points(4, 2)
    bad = X.copy()
    bad[1, 1] = np.nan
    with pytest.raises(ValueError, match="X contains NaN"):
        k(bad)
    with pytest.raises(ValueError, match="Y contains NaN"):
        k(X, np.array([[np.inf, 0.0]]))
    with pytest.raises(ValueError, match="Y has 3 features but X has 2"):
        k(X, np.ones((2, 3)))
    with pytest.raises(ValueError, match="X must be a 2-D array"):
        k(np.ones(3))
    with pytest.raises(TypeError, match="numeric"):
        k(np.array([["a", "b"]]))
    with pytest.raises(ValueError, match="f must return one weight per row"):
        kn.weighted(k, lambda Z: np.ones(2))(X)


def test_resolve_kernel():
    assert kn.resolve_kernel("rbf", n_features=4) == kn.RBF(0.25)
    assert kn.resolve_kernel("rbf", gamma=2.0) == kn.RBF(2.0)
    assert kn.resolve_kernel("poly", gamma=1.0, degree=3) == kn.Polynomial(3, 1.0)
    assert kn.resolve_kernel("matern", nu=2.5) == kn.Matern(2.5)
    k = kn.RBF() + kn.Linear()
    assert kn.resolve_kernel(k) is k
    with pytest.raises(ValueError, match="kernel must be a Kernel or one of"):
        kn.resolve_kernel("gauss-ish")
    with pytest.raises(ValueError, match="gamma does not apply"):
        kn.resolve_kernel("linear", gamma=1.0)
    with pytest.raises(ValueError, match="set on the kernel object"):
        kn.resolve_kernel(kn.RBF(), gamma=1.0)
    with pytest.raises(ValueError, match="bad kernel parameters"):
        kn.resolve_kernel("rbf", gamma=1.0, nu=1.5)


def test_repr_and_equality():
    k = 2.0 * kn.RBF(0.5) + kn.Linear()
    assert repr(k) == "(2.0 * RBF(gamma=0.5) + Linear())"
    assert repr(kn.Linear(np.eye(3))) == "Linear(A=<3×3 PSD matrix>)"
    assert kn.RBF(0.5) == kn.RBF(0.5) and kn.RBF(0.5) != kn.RBF(0.6)
    assert kn.Linear(np.eye(2)) == kn.Linear(np.eye(2))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("gamma", [0.05, 1e6, [0.1, 2.0, 0.5]])
def test_rbf_rows_against_fixed_points_match_the_call(dtype, gamma):
    # the solver's path: Y's share of the work done once, near pairs exact per entry
    rng = np.random.default_rng(3)
    Y = (rng.normal(size=(700, 3)) * [1.0, 50.0, 1.0] + 1e3).astype(dtype)
    Y[5] = Y[17]  # a duplicate: K = 1 exactly, not 1 − round-off
    k = kn.RBF(gamma)
    against = k._against(Y)

    def rows(X):
        return against(X, np.empty((len(X), len(Y)), dtype=X.dtype))

    for X in (Y[:40], Y[[17, 5, 3]], (Y[:9] + 0.25).astype(dtype)):
        K = rows(X)
        ref = k(X.astype(np.float64), Y.astype(np.float64))
        assert K.dtype == dtype and K.shape == ref.shape
        # float32 rows far apart carry the expansion's round-off, as the call's do
        err_call = np.abs(k(X, Y) - ref).max()
        assert np.abs(K - ref).max() <= max(200 * np.finfo(dtype).eps, 1.01 * err_call)
    K = rows(Y[[5, 17]])
    assert K[0, 5] == K[0, 17] == K[1, 5] == 1.0


@pytest.mark.parametrize("scale", [1e10, 1e20, 1e30])
@pytest.mark.parametrize("gamma", ["spread", 1.0])
def test_float32_rbf_far_beyond_its_squares_range_is_the_float64_kernel(scale, gamma):
    # float32 squares overflow beyond 1.8e19: such rows are scaled by a power of two before
    # squaring, as float64 rows beyond 2**250 are (they raised "overflows"); and γ s² is
    # taken in float64, where γ = 1/(d·variance) alone underflows float32 (K was 1 everywhere)
    X = scale * np.random.default_rng(0).normal(size=(30, 2))
    k = kn.RBF(1.0 / (2 * scale**2) if gamma == "spread" else gamma)
    X32 = X.astype(np.float32)
    expected = k(X32.astype(np.float64))
    np.testing.assert_allclose(k(X32), expected, atol=1e-6)
    np.testing.assert_allclose(k(X32[:5], X32), expected[:5], atol=1e-6)
    rows = k._against(X32)(X32[:5], np.empty((5, 30), dtype=np.float32))
    np.testing.assert_allclose(rows, expected[:5], atol=1e-6)
    if gamma == "spread":
        assert expected.min() < 0.5  # the kernel is not trivially 1


def test_ard_rbf_diagonal_checks_the_number_of_features():
    # the Gram matrix refused X with 3 features for 2 γ's, and the diagonal returned ones
    k = kn.RBF(gamma=[1.0, 2.0])
    with pytest.raises(ValueError, match="gamma has 2 entries .* X has 3 features"):
        k.diag(np.ones((4, 3)))
    np.testing.assert_array_equal(k.diag(np.ones((4, 2))), np.ones(4))


def test_counts_and_zero_d_parameters():
    # feature_dim(True) was 3 for the quadratic kernel (True taken as one feature); a 0-d
    # array γ, what np.asarray makes of a number, was "not a real number", and through an
    # estimator "bad kernel parameters [] for 'rbf'"
    from kernelcourse.ridge import KernelRidge

    for k in (kn.Polynomial(), kn.Linear(), kn.Cosine()):
        with pytest.raises(TypeError, match="n_features must be an integer, got True"):
            k.feature_dim(True)
    assert kn.RBF(np.array(0.5)).gamma == 0.5
    X = np.random.default_rng(0).normal(size=(10, 2))
    model, ref = (KernelRidge(gamma=g).fit(X, X[:, 0]) for g in (np.array(0.5), 0.5))
    np.testing.assert_array_equal(model.predict(X), ref.predict(X))
    with pytest.raises(TypeError, match="gamma must be a real number, got array"):
        kn.RBF(np.array(True))


@pytest.mark.parametrize("factor", [1.0, -0.5])
def test_near_pairs_found_by_row_extremes_match_the_whole_block_search(factor):
    """numpy's path looks for near pairs only in rows whose extreme entry is near 0; it must
    refine exactly the entries the comparison over the whole block finds (the generic path,
    here through array-api-compat's numpy namespace), to the bit."""
    compat_numpy = pytest.importorskip("array_api_compat.numpy")
    from kernelcourse.kernels import _refine_near_pairs

    rng = np.random.default_rng(0)
    X, Z = rng.normal(size=(60, 4)), rng.normal(size=(25, 4))
    Z[:5] = X[[3, 3, 17, 40, 59]]  # duplicates: near pairs in a few rows
    B = factor * ((X[:, None, :] - Z[None, :, :]) ** 2).sum(axis=2)
    B[[3, 17, 40, 59], [0, 2, 3, 4]] = factor * 1e-14  # round-off where 0 is exact
    B[10, 7] = B[17, 9] = np.nan  # a NaN is no near pair, nor hides one in its row
    limit = 1e-10
    ours = _refine_near_pairs(B.copy(), X, Z, factor, limit)
    generic = _refine_near_pairs(B.copy(), X, Z, factor, limit, xp=compat_numpy)
    np.testing.assert_array_equal(ours, generic)
    assert ours[3, 0] == 0.0 and ours[59, 4] == 0.0


class _ReturnsThis(kn.Kernel):
    """A user kernel whose _gram and _diag return what it is given (applied to a true Gram
    block, or diagonal)."""

    def __init__(self, gram=lambda K: K, diag=lambda d: d):
        self.gram, self.diag_of = gram, diag

    def _params(self):
        return {}

    def _gram(self, X, Y):
        return self.gram(kn.RBF(1.0)._gram(X, Y))

    def _diag(self, X):
        return self.diag_of(np.ones(len(X)))


@pytest.mark.parametrize(
    "gram, diag, method, got",
    [
        (lambda K: K[:, :1], None, "_gram", r"shape \(6, 1\)"),
        (lambda K: K.ravel(), None, "_gram", r"shape \(36,\)"),
        (lambda K: K.tolist(), None, "_gram", "list"),
        (lambda K: K + 0j, None, "_gram", "dtype complex128"),
        (None, lambda d: d[1:], "_diag", r"shape \(5,\)"),
    ],
)
def test_a_user_kernel_returning_a_wrong_block_is_named(gram, diag, method, got):
    # a block of the wrong shape failed far away ("y has 20 entries but the data have 1
    # rows" in KernelSVC), a list with "'list' object has no attribute 'sum'", and a
    # complex block lost its imaginary part with numpy's ComplexWarning only
    from kernelcourse.svm import KernelSVC

    kwargs = {"gram": gram} if gram is not None else {"diag": diag}
    k = _ReturnsThis(**kwargs)
    X = np.random.default_rng(0).normal(size=(6, 2))
    match = f"{method} of the kernel .* must return a real numpy array of shape .*, got .*{got}"
    with pytest.raises(TypeError, match=match):
        k.diag(X) if diag is not None else k(X)
    if gram is not None:
        with pytest.raises(TypeError, match=match):
            KernelSVC(kernel=k).fit(X, [0, 1] * 3)
    # an integer block is a real one
    np.testing.assert_array_equal(_ReturnsThis(lambda K: (K > 0.5).astype(int))(X).shape, (6, 6))


def test_estimators_refuse_a_string_kernel_by_name():
    # KernelSVC(kernel=SpectrumKernel()) on numeric X failed inside the kernel with
    # "'numpy.ndarray' object has no attribute 'encode'"
    from kernelcourse.features import Nystroem, RandomFourierFeatures
    from kernelcourse.ridge import KernelRidge
    from kernelcourse.scale import NystroemKRR
    from kernelcourse.strings import SpectrumKernel
    from kernelcourse.svm import KernelSVC

    X = np.random.default_rng(0).normal(size=(12, 3))
    y = np.arange(12) % 2
    match = r"kernel SpectrumKernel\(.*\) compares strings, not numeric vectors; .*string_gram"
    with pytest.raises(ValueError, match=match):
        kn.resolve_kernel(SpectrumKernel(k=3))
    for estimator in (
        KernelSVC(kernel=SpectrumKernel(k=3)),
        KernelRidge(kernel=SpectrumKernel(k=3)),
        NystroemKRR(kernel=SpectrumKernel(k=3), n_components=4),
        Nystroem(kernel=SpectrumKernel(k=3), n_components=4),
        RandomFourierFeatures(kernel=SpectrumKernel(k=3)),
    ):
        with pytest.raises(ValueError, match=match):
            estimator.fit(X, y)


def test_a_string_kernel_on_strings_is_refused_by_the_kernel_not_as_x():
    # with string X the estimators failed converting X to float ("X: could not convert
    # string to float"), before the kernel was looked at: the error named X, not the kernel
    from kernelcourse.ridge import KernelRidge
    from kernelcourse.strings import SpectrumKernel
    from kernelcourse.svm import KernelSVC

    X = np.array([["GATTACA"], ["TACATTA"], ["ACGTACG"], ["TTTTAAA"]])
    y = np.array([0, 1, 0, 1])
    match = r"compares strings, not numeric vectors; .*string_gram.*precomputed"
    for estimator in (KernelSVC(kernel=SpectrumKernel(k=2)), KernelRidge(SpectrumKernel(k=2))):
        with pytest.raises(ValueError, match=match):
            estimator.fit(X, y)
