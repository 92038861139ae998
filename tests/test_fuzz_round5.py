"""Round five of fuzzing the public API with bad and extreme inputs: regression tests for
the defects it found."""

import warnings

import numpy as np
import pytest


def _svm_data():
    X = np.random.default_rng(0).normal(size=(30, 3))
    return X, (X[:, 0] > 0).astype(int)


@pytest.mark.parametrize("make", ["KernelSVC", "PrimalSVC"])
@pytest.mark.parametrize(
    ("sample_weight", "error"),
    [
        ([10**400] * 30, ValueError),  # Python's "int too large to convert to float"
        ({"a": 1.0}, TypeError),  # float()'s "argument must be a string or a real number"
        (np.full(30, 1.0 + 1.0j), (ValueError, TypeError)),
        (np.nan, ValueError),
    ],
    ids=["integers-beyond-float", "dict", "complex", "nan-scalar"],
)
def test_svms_name_sample_weight_as_the_ridge_estimators(make, sample_weight, error):
    # the SVMs read the weights with scikit-learn's _check_sample_weight directly, where the
    # ridge estimators use the shared check: an OverflowError and a TypeError named nothing
    from kernelcourse.svm import KernelSVC, PrimalSVC

    X, y = _svm_data()
    model = {"KernelSVC": KernelSVC, "PrimalSVC": PrimalSVC}[make]
    with pytest.raises(error, match="^sample_weight"):
        model().fit(X, y, sample_weight=sample_weight)
    # weights whose sum overflows only scale the box bounds: still fitted, as before
    sw = np.full(30, 1e308)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        heavy = model(C=1e-300).fit(X, y, sample_weight=sw)
    assert np.isfinite(heavy.decision_function(X)).all()


@pytest.mark.parametrize("make", ["KernelSVC", "PrimalSVC"])
def test_svm_class_weight_beyond_the_float_range_is_named(make):
    from kernelcourse.svm import KernelSVC, PrimalSVC

    X, y = _svm_data()
    model = {"KernelSVC": KernelSVC, "PrimalSVC": PrimalSVC}[make]
    with pytest.raises(ValueError, match=r"^class_weight\[1\] is an integer beyond the float"):
        model(class_weight={1: 10**400}).fit(X, y)
    ref = model(class_weight={1: 2.0}).fit(X, y).decision_function(X)
    np.testing.assert_array_equal(model(class_weight={1: 2}).fit(X, y).decision_function(X), ref)


def _estimators_with_real_parameters():
    from kernelcourse.features import Nystroem, RandomFourierFeatures, RandomKitchenSinks
    from kernelcourse.ridge import (
        FeatureRidge,
        FeatureRidgeClassifier,
        KernelRidge,
        RidgeRegression,
    )
    from kernelcourse.scale import NystroemKRR, StreamingFeatureRidge
    from kernelcourse.sgd import FeatureSGDClassifier
    from kernelcourse.svm import KernelSVC, PrimalSVC

    rff = RandomFourierFeatures(n_components=10, random_state=0)
    return [
        (RidgeRegression(), "lam"),
        (KernelRidge(), "lam"),
        (FeatureRidge(rff), "lam"),
        (FeatureRidge(rff), "tol"),
        (FeatureRidgeClassifier(rff), "lam"),
        (NystroemKRR(n_components=5, random_state=0), "lam"),
        (NystroemKRR(n_components=5, random_state=0), "tol"),
        (StreamingFeatureRidge(rff), "lam"),
        (FeatureSGDClassifier(rff, random_state=0), "eta0"),
        (KernelSVC(), "C"),
        (KernelSVC(), "cache_size"),
        (PrimalSVC(), "C"),
        (PrimalSVC(), "intercept_scaling"),
        (PrimalSVC(), "tol"),
        (RandomKitchenSinks(n_components=5, random_state=0), "scale"),
        (RandomFourierFeatures(n_components=5, sampling="leverage", random_state=0), "ridge"),
        (Nystroem(n_components=5, random_state=0), "ridge"),
    ]


@pytest.mark.parametrize(
    ("estimator", "param"),
    _estimators_with_real_parameters(),
    ids=lambda v: v if isinstance(v, str) else type(v).__name__,
)
def test_real_hyper_parameters_beyond_the_float_range_are_named(estimator, param):
    # numbers.Real counts 10**400 as a real number inside (0, inf), so it passed the
    # parameter check and failed later in float() with "int too large to convert to float"
    from sklearn.base import clone
    from sklearn.utils._param_validation import InvalidParameterError

    X, y = _svm_data()
    model = clone(estimator).set_params(**{param: 10**400})
    with pytest.raises(InvalidParameterError, match=f"^The '{param}' parameter of"):
        model.fit(X, y)
    # a large integer within the float range is the float it converts to, as before
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clone(estimator).set_params(**{param: 10**3}).fit(X, y)


@pytest.mark.parametrize("params", [{"gamma": 2.0}, {"nu": 2.5}, {"foo": 1}])
def test_spectral_measure_refuses_parameters_beside_a_kernel_object(params):
    # spectral_measure(RBF(), gamma=2.0) returned the measure of RBF(gamma=1.0): the
    # parameters were read for a kernel name only and dropped, silently, for an object
    from kernelcourse.kernels import RBF, Matern
    from kernelcourse.spectral import spectral_measure

    for kernel in [RBF(1.0), 2.0 * Matern(1.5, 1.0)]:
        with pytest.raises(ValueError, match=r"^kernel_params \[.*\] apply to a kernel name"):
            spectral_measure(kernel, **params)
    # a name takes them, and an object alone is unchanged
    assert spectral_measure("rbf", gamma=2.0).kernel.gamma == 2.0
    assert spectral_measure(RBF(2.0)).kernel.gamma == 2.0


@pytest.mark.parametrize("make", ["SpectrumKernel", "WeightedDegreeKernel"])
@pytest.mark.parametrize(
    "unknown", [np.array(["skip", "error"]), np.zeros((0,)), np.array([[1.0]]), 1.5, None]
)
def test_string_kernels_name_an_unknown_that_is_not_a_name(make, unknown):
    # an array reached `unknown not in ("error", "skip")`, where numpy raised "The truth
    # value of an array with more than one element is ambiguous", naming nothing
    from kernelcourse import strings

    kernel = getattr(strings, make)
    with pytest.raises(ValueError, match=r"^unknown must be one of \('error', 'skip'\)"):
        kernel(2, unknown=unknown)
    X = ["ACGN", "ACGT"]
    K = strings.string_gram(kernel(2, unknown=np.str_("skip")), X)
    np.testing.assert_array_equal(K, strings.string_gram(kernel(2, unknown="skip"), X))


def test_fit_box_constrained_names_a_c_beyond_the_float_range():
    # C / q raised Python's OverflowError "integer division result too large for a float"
    from kernelcourse.features import fit_box_constrained

    rng = np.random.default_rng(0)
    Psi, y = rng.normal(size=(20, 4)), np.array([0, 1] * 10)
    with pytest.raises(ValueError, match=r"^C must be a number > 0 .* beyond the float range"):
        fit_box_constrained(Psi, y, C=10**400)
    # a large integer within the float range is a box as before, the same as its float
    np.testing.assert_array_equal(
        fit_box_constrained(Psi, y, C=10**300)[0], fit_box_constrained(Psi, y, C=1e300)[0]
    )


@pytest.mark.parametrize("param", ["n_threads", "pool_factor"])
@pytest.mark.parametrize("value", [True, False])
def test_rff_refuses_a_boolean_thread_count_or_pool_factor_at_fit(param, value):
    # Interval(Integral) counts True as 1: fit took n_threads=True and every transform then
    # failed ("n_threads must be None or an integer >= 1"); pool_factor=True was taken too
    from sklearn.utils._param_validation import InvalidParameterError

    from kernelcourse.features import RandomFourierFeatures

    X = np.random.default_rng(0).normal(size=(20, 3))
    rff = RandomFourierFeatures(n_components=8, sampling="leverage", random_state=0)
    with pytest.raises(InvalidParameterError, match=f"^The '{param}' parameter of"):
        rff.set_params(**{param: value}).fit(X)
    Z = rff.set_params(**{param: 2}).fit_transform(X)
    np.testing.assert_array_equal(Z, rff.set_params(**{param: np.int64(2)}).fit_transform(X))


@pytest.mark.parametrize("convert", [np.asarray, lambda A: A.tolist()], ids=["numpy", "list"])
def test_gram_block_names_a_y_of_another_library_than_x(convert):
    # a numpy Y beside an array-API X failed inside xp.isdtype ("'dtype' must be a dtype, not
    # a <class 'numpy.dtypes.Float64DType'>"), a list in Y.shape, naming neither
    xps = pytest.importorskip("array_api_strict")
    from kernelcourse.devices import gram_block
    from kernelcourse.kernels import RBF

    X = np.random.default_rng(0).normal(size=(5, 3))
    with pytest.raises(TypeError, match=r"^Y is a (numpy\.ndarray|builtins\.list), not an arr"):
        gram_block(RBF(0.5), xps.asarray(X), convert(X))
    with pytest.raises(TypeError, match=r"^X is a numpy\.ndarray, not an array of array_api"):
        gram_block(RBF(0.5), X, xp=xps)
    # one library for both, and numpy X with any Y, are computed as before
    K = np.asarray(gram_block(RBF(0.5), xps.asarray(X), xps.asarray(X[:2])))
    np.testing.assert_allclose(K, RBF(0.5)(X, X[:2]), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(gram_block(RBF(0.5), X, X[:2]), K, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("value", ["relative/cache", "cache", ".", ""])
def test_cache_dir_ignores_a_relative_xdg_cache_home(value, monkeypatch, tmp_path):
    # a relative XDG_CACHE_HOME made the cache, and every download, depend on the folder the
    # program ran in (the XDG specification says to ignore such a value)
    from kernelcourse.datasets import cache_dir

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", value)
    assert cache_dir() == tmp_path / "home" / ".cache" / "kernelcourse"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == tmp_path / "xdg" / "kernelcourse"
    monkeypatch.setenv("XDG_CACHE_HOME", "~/xdg")
    assert cache_dir() == tmp_path / "home" / "xdg" / "kernelcourse"


@pytest.mark.parametrize("value", ["False", "no", 0, None, 2])
def test_ridge_solvers_refuse_flags_that_are_not_booleans(value):
    # a flag given as text was truthy: solve_regularized_psd(overwrite_a="False") destroyed
    # the caller's matrix and sparse_ridge_cg(fit_intercept="False") fitted an intercept
    import scipy.sparse as sp

    from kernelcourse.kernels import RBF
    from kernelcourse.ridge import solve_regularized_psd, sparse_ridge_cg

    rng = np.random.default_rng(0)
    A = RBF(0.5)(rng.normal(size=(20, 4)))
    given = A.copy()
    with pytest.raises(TypeError, match="^overwrite_a must be True or False"):
        solve_regularized_psd(given, np.ones(20), 0.1, overwrite_a=value)
    np.testing.assert_array_equal(given, A)
    Z = sp.random(30, 10, density=0.3, random_state=0, format="csr")
    Y = rng.normal(size=30) + 5.0
    for flag in ["fit_intercept", "warn"]:
        with pytest.raises(TypeError, match=f"^{flag} must be True or False"):
            sparse_ridge_cg(Z, Y, 0.1, **{flag: value})
    # numpy's booleans are flags, as before
    w, b, _ = sparse_ridge_cg(Z, Y, 0.1, fit_intercept=np.True_, warn=np.False_)
    w_ref, b_ref, _ = sparse_ridge_cg(Z, Y, 0.1, fit_intercept=True, warn=False)
    np.testing.assert_array_equal(w, w_ref)
    assert b == b_ref != 0.0
    np.testing.assert_array_equal(
        solve_regularized_psd(A, np.ones(20), 0.1, overwrite_a=np.False_),
        solve_regularized_psd(A, np.ones(20), 0.1),
    )
