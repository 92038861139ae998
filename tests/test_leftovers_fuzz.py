"""Regression tests from fuzzing the input checks, the ridge estimators' features, the device
path of random Fourier features and the RKHS functions with extreme and malformed inputs."""

import numpy as np
import pytest
import sklearn

from kernelcourse import kernels as kn
from kernelcourse._validation import check_weights, refuse_complex_features, validate_data
from kernelcourse.features import RandomFourierFeatures
from kernelcourse.ridge import FeatureRidge, FeatureRidgeClassifier, KernelRidge, RidgeRegression
from kernelcourse.scale import NystroemKRR

rng = np.random.default_rng(0)
X = rng.normal(size=(20, 3))
y = X[:, 0] - X[:, 1]


# -- sample weights whose sum overflows -------------------------------------------------------
def test_check_weights_refuses_a_sum_beyond_the_float_range_by_name():
    with pytest.raises(ValueError, match="sample_weight sums to more than the float range"):
        check_weights(np.full(20, 1e307), X)
    # a large but finite sum is the caller's (the ridge estimators scale it exactly)
    assert check_weights(np.full(20, 1e300), X)[0] == 1e300


@pytest.mark.parametrize(
    "est",
    [
        RidgeRegression(lam=1.0),
        KernelRidge(lam=1.0),
        FeatureRidge(lam=1.0),
        FeatureRidge(features=RandomFourierFeatures(n_components=10, random_state=0)),
        NystroemKRR(n_components=5, random_state=0),
    ],
    ids=type,
)
def test_estimators_refuse_weights_whose_sum_overflows(est):
    # numpy's bare "overflow encountered in reduce" RuntimeWarning before, in every estimator
    with pytest.raises(ValueError, match="sample_weight"):
        est.fit(X, y, sample_weight=np.full(20, 1e307))


def test_ridge_with_huge_weights_matches_lam_scaled_down():
    # weights 1e300 with λ = 1e300 are weights 1 with λ = 1: still fitted, and the same fit
    target = y + rng.normal(size=20)
    weights = rng.uniform(0.5, 2.0, size=20)
    big = RidgeRegression(lam=1e300).fit(X, target, sample_weight=1e300 * weights)
    small = RidgeRegression(lam=1.0).fit(X, target, sample_weight=weights)
    np.testing.assert_allclose(big.coef_, small.coef_, rtol=1e-10)
    np.testing.assert_allclose(big.intercept_, small.intercept_, rtol=1e-10)


# -- complex features and complex X -----------------------------------------------------------
@pytest.mark.parametrize("cls", [FeatureRidge, FeatureRidgeClassifier])
def test_feature_ridge_refuses_complex_features(cls):
    # the imaginary part was dropped with numpy's ComplexWarning only
    features = RandomFourierFeatures(n_components=10, map="complex", random_state=0)
    target = y if cls is FeatureRidge else y > 0
    with pytest.raises(TypeError, match="features must return real features"):
        cls(features=features).fit(X, target)


def test_feature_ridge_predict_refuses_complex_features():
    model = FeatureRidge(features=RandomFourierFeatures(n_components=10, random_state=0))
    model.fit(X, y)
    model.features_.map = "complex"  # a map that turns complex after the fit
    with pytest.raises(TypeError, match="features must return real features"):
        model.predict(X)


def test_refuse_complex_features_sparse_and_real():
    import scipy.sparse as sp

    with pytest.raises(TypeError, match="Z must return real features"):
        refuse_complex_features(sp.csr_matrix(np.eye(2, dtype=complex)), "Z")
    Z = np.eye(2)
    assert refuse_complex_features(Z) is Z


@pytest.mark.parametrize("as_list", [False, True])
def test_complex_X_error_is_short_and_names_X(as_list):
    # scikit-learn's error printed the whole array after "Complex data not supported"
    Xc = X + 1j
    with pytest.raises(ValueError, match="X: Complex data not supported") as info:
        FeatureRidge().fit(Xc.tolist() if as_list else Xc, y)
    assert "\n" not in str(info.value)
    with pytest.raises(ValueError, match="y: Complex data not supported"):
        validate_data(RidgeRegression(), X, y + 1j, y_numeric=True)


# -- the device path's feature scale -----------------------------------------------------------

@pytest.mark.parametrize("map", ["cos", "complex"])
def test_device_features_of_a_huge_kernel_multiple_match_numpy(dispatch, map):
    # √(2c/D) overflowed for c = 1.7e308 on the device path: an error about the cosine's
    # arguments, while the numpy path gave finite features
    import array_api_strict as xs

    kernel = 1.7e308 * kn.RBF(gamma=1.0)
    rff = RandomFourierFeatures(kernel=kernel, n_components=4, map=map, random_state=0)
    Z_dev = rff.fit(xs.asarray(X)).transform(xs.asarray(X))
    with sklearn.config_context(array_api_dispatch=False):
        Z_np = RandomFourierFeatures(kernel=kernel, n_components=4, map=map, random_state=0)
        Z_np = Z_np.fit(X).transform(X)
    np.testing.assert_allclose(np.asarray(Z_dev), Z_np, rtol=1e-12)


def test_device_features_give_numpy_error_for_float32(dispatch):
    import array_api_strict as xs

    kernel = 1e100 * kn.RBF(gamma=1.0)
    rff = RandomFourierFeatures(kernel=kernel, n_components=4, random_state=0, dtype=np.float32)
    with pytest.raises(ValueError, match=r"feature scale .* beyond the range of dtype=float32"):
        rff.fit(xs.asarray(X)).transform(xs.asarray(X))


# -- RKHS functions and Mercer expansions -----------------------------------------------------
def _f():
    from kernelcourse.rkhs import RKHSFunction

    return RKHSFunction(kn.RBF(gamma=1.0), [[0.0], [1.0]], [1.0, -1.0])


def test_rkhs_norm_of_each_column_is_scaled_on_its_own():
    # one scale for all columns: a column of ones next to one of 1e300 had norm 0
    from kernelcourse.rkhs import RKHSFunction, inner, norm

    centers = [[0.0], [1.0]]
    f = RKHSFunction(kn.RBF(gamma=1.0), centers, [[1e300, 1.0], [1e300, 1.0]])
    ones = RKHSFunction(kn.RBF(gamma=1.0), centers, [1.0, 1.0])
    np.testing.assert_allclose(norm(f), [1e300 * norm(ones), norm(ones)], rtol=1e-12)
    g = RKHSFunction(kn.RBF(gamma=1.0), centers, [[1.0, 1e-300], [1.0, 1e-300]])
    G = inner(g, g)
    np.testing.assert_allclose(G, norm(ones) ** 2 * np.array([[1, 1e-300], [1e-300, 1e-600]]))
    assert G[1, 1] == 0.0  # 1e-600 is below the float range; the off-diagonal is not
    assert G[0, 1] > 0


@pytest.mark.parametrize(
    "op, message",
    [
        (lambda f: (f * 1e300) * 1e10, "overflows floating point"),  # numpy's bare warning
        (lambda f: f / 1e-320, "overflows floating point"),  # said "got inf"
        (lambda f: f * 2**1100, "beyond the float range"),  # numpy's isfinite TypeError
        (lambda f: f / 10**400, "beyond the float range"),  # Python's OverflowError
        (lambda f: f / np.inf, "scalar must be finite"),  # the zero function, silently
    ],
)
def test_rkhs_scalar_operations_refuse_by_name(op, message):
    with pytest.raises(ValueError, match=message):
        op(_f())


def test_rkhs_division_by_a_subnormal_scalar_is_exact_where_representable():
    # α · (1/c) overflowed in 1/c; α / c is 1e300
    f = _f() * 1e-10
    np.testing.assert_allclose((f / 1e-310).coef, [1e300, -1e300], rtol=1e-12)


def test_gaussian_mercer_refuses_a_kernel_far_narrower_than_the_measure():
    # 8γσ² beyond the float range: the eigenvalues were [0, nan, nan], silently
    from kernelcourse.rkhs import GaussianMercer

    with pytest.raises(ValueError, match="8γσ² is beyond the float range"):
        GaussianMercer(1e300, 1e150, 3)
    assert np.isfinite(GaussianMercer(1e10, 1e148, 3).eigenvalues).all()


def test_mercer_eigenfunctions_refuse_overflow_by_name():
    # 1/λ magnified K(x, u): numpy's overflow warnings and infinite values before
    from kernelcourse.rkhs import mercer_expansion

    m = mercer_expansion(kn.Linear(), np.linspace(-1e-3, 1e-3, 10)[:, None], 1)
    with pytest.raises(ValueError, match="eigenfunctions overflow"):
        m.eigenfunctions(np.array([[1.7e308]]))
    with pytest.raises(ValueError, match="truncated Mercer sum overflows"):
        m.kernel_approximation(np.array([[1e300]]))


# -- the public input checks ------------------------------------------------------------------
@pytest.mark.parametrize(
    "weights, error, message",
    [
        # a scalar is broadcast unchecked: NaN was "sums to zero", infinity "sums to more"
        (np.nan, ValueError, "sample_weight contains NaN or infinity"),
        (np.inf, ValueError, "sample_weight contains NaN or infinity"),
        # Python's OverflowError and float()'s TypeError named nothing
        ([10**400, 1, 1], ValueError, "^sample_weight: "),
        ([1, 1j, 1], TypeError, "^sample_weight: "),
    ],
)
def test_check_weights_names_sample_weight(weights, error, message):
    with pytest.raises(error, match=message):
        check_weights(weights, np.ones((3, 1)))


def test_as_float_vector_names_an_integer_beyond_the_float_range():
    from kernelcourse._validation import as_float_vector

    with pytest.raises(ValueError, match="y has an integer beyond the float range"):
        as_float_vector([10**400, 1.0])  # Python's OverflowError before


@pytest.mark.skipif(
    np.finfo(np.longdouble).max <= np.finfo(np.float64).max, reason="no extended long double"
)
def test_long_double_beyond_float64_is_refused_by_name():
    # numpy's bare "overflow encountered in cast" RuntimeWarning before
    from kernelcourse._validation import as_float_matrix, as_float_vector

    big = np.longdouble("1e400")
    with pytest.raises(ValueError, match="X contains NaN or infinity"):
        as_float_matrix(np.array([[big]]))
    with pytest.raises(ValueError, match="y contains NaN or infinity"):
        as_float_vector(np.array([big]))


def test_kernel_params_of_names_a_non_dict():
    from kernelcourse._validation import kernel_params_of

    with pytest.raises(TypeError, match="kernel_params must be a dict"):
        kernel_params_of("abc")  # dict()'s "dictionary update sequence element #0" before
    assert kernel_params_of({"degree": 2}) == {"degree": 2}


def test_streaming_feature_ridge_refuses_complex_features():
    # the cast to float64 dropped the imaginary part with numpy's ComplexWarning only
    from kernelcourse.scale import StreamingFeatureRidge

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(40, 3)), rng.normal(size=40)
    complex_map = RandomFourierFeatures(map="complex", n_components=8, random_state=0).fit(X)
    with pytest.raises(TypeError, match="features must return real features, got dtype complex"):
        StreamingFeatureRidge(features=complex_map).partial_fit(X, y)
    real_map = RandomFourierFeatures(n_components=8, random_state=0).fit(X)
    model = StreamingFeatureRidge(features=real_map).fit(X, y)
    model.features_ = complex_map
    with pytest.raises(TypeError, match="features must return real features"):
        model.predict(X)
