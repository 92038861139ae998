"""Round six of fuzzing the public API with bad and extreme inputs: regression tests for
the defects it found (``score`` and the other methods of fitted estimators)."""

import warnings

import numpy as np
import pytest
from sklearn.base import clone, is_regressor
from sklearn.metrics import accuracy_score, r2_score


def _data(n=30):
    X = np.random.default_rng(0).normal(size=(n, 3))
    return X, X[:, 0] + 0.5 * X[:, 1], (X[:, 0] > 0).astype(int)


def _estimators():
    from kernelcourse.features import RandomFourierFeatures
    from kernelcourse.ridge import (
        FeatureRidge,
        FeatureRidgeClassifier,
        KernelRidge,
        RidgeRegression,
    )
    from kernelcourse.scale import NystroemKRR, NystroemKRRClassifier, StreamingFeatureRidge
    from kernelcourse.sgd import FeatureSGDClassifier
    from kernelcourse.svm import KernelSVC, PrimalSVC

    rff = RandomFourierFeatures(n_components=10, random_state=0)
    return [
        RidgeRegression(),
        KernelRidge(),
        FeatureRidge(rff),
        FeatureRidgeClassifier(rff),
        NystroemKRR(n_components=5, random_state=0),
        NystroemKRRClassifier(n_components=5, random_state=0),
        StreamingFeatureRidge(rff),
        FeatureSGDClassifier(rff, random_state=0),
        KernelSVC(),
        PrimalSVC(),
    ]


def _fitted(estimator):
    X, y, labels = _data()
    target = y if is_regressor(estimator) else labels
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return clone(estimator).fit(X, target), X, target


_ids = {"ids": lambda e: type(e).__name__}


@pytest.mark.parametrize("estimator", _estimators(), **_ids)
@pytest.mark.parametrize(
    ("bad_y", "error", "message"),
    [
        (lambda y: y[:5], ValueError, r"^y has 5 entries but X has 30 rows"),
        (lambda y: np.where(np.arange(30) == 0, np.nan, y), ValueError, r"^y contains NaN"),
        (lambda y: None, ValueError, r"^y is None: \w+\.score compares"),
        (lambda y: y + 1j, ValueError, r"^y: Complex data not supported"),
        (lambda y: np.c_[y, y, y], ValueError, r"^y: "),
        (lambda y: 3.0, TypeError, r"^y: "),
        (lambda y: [[1.0, 2.0], [1.0]] * 15, ValueError, r"^y is ragged"),
    ],
    ids=["short", "nan", "none", "complex", "three-columns", "scalar", "ragged"],
)
def test_score_names_a_bad_y(estimator, bad_y, error, message):
    # score was scikit-learn's: "Found input variables with inconsistent numbers of
    # samples: [5, 30]", "Input contains NaN", "The 'y_true' parameter of r2_score ...",
    # none of which said which argument of score was wrong
    model, X, y = _fitted(estimator)
    with pytest.raises(error, match=message):
        model.score(X, bad_y(y))


@pytest.mark.parametrize("estimator", _estimators(), **_ids)
def test_score_names_a_non_numeric_y_of_a_regressor_or_an_unknown_label(estimator):
    model, X, y = _fitted(estimator)
    if is_regressor(model):
        with pytest.raises(ValueError, match=r"^y must be numeric for a regressor"):
            model.score(X, np.array(["a"] * 30))
    else:
        with pytest.raises(ValueError, match=r"^y: Mix of label input types"):
            model.score(X, np.array(["a"] * 30))


@pytest.mark.parametrize("estimator", _estimators(), **_ids)
@pytest.mark.parametrize(
    ("sample_weight", "error", "message"),
    [
        (np.ones(5), ValueError, r"^sample_weight: sample_weight\.shape == \(5,\), expected"),
        (np.full(30, np.nan), ValueError, r"^sample_weight"),
        (-np.ones(30), ValueError, r"^sample_weight: Negative values"),
        ("a", (ValueError, TypeError), r"^sample_weight"),
        (np.zeros(30), ValueError, r"^sample_weight: Sample weights must contain at least"),
        (np.full(30, 1e308), ValueError, r"^sample_weight sums to more than the float range"),
    ],
    ids=["short", "nan", "negative", "text", "zeros", "sum-overflows"],
)
def test_score_checks_sample_weight_as_fit_does(estimator, sample_weight, error, message):
    # negative weights were taken (R² or accuracy of a negative count), weights summing
    # beyond the float range gave R² = NaN silently, and the other errors named nothing
    model, X, y = _fitted(estimator)
    with pytest.raises(error, match=message):
        model.score(X, y, sample_weight=sample_weight)


@pytest.mark.parametrize("estimator", _estimators(), **_ids)
def test_score_on_valid_input_is_unchanged(estimator):
    model, X, y = _fitted(estimator)
    metric = r2_score if is_regressor(model) else accuracy_score
    sw = np.random.default_rng(1).uniform(0.0, 2.0, size=len(y))
    assert model.score(X, y) == metric(y, model.predict(X))
    assert model.score(X, y, sample_weight=sw) == metric(y, model.predict(X), sample_weight=sw)
    assert model.score(X, y.tolist(), sample_weight=sw.tolist()) == model.score(
        X, y, sample_weight=sw
    )
    # a column y, as before (a regressor's fitted on 1-D y, and a classifier's)
    assert model.score(X, y[:, None]) == model.score(X, y)


@pytest.mark.parametrize("make", ["DaskFeatureRidge", "DaskNystroemKRR"])
def test_dask_score_names_y_and_sample_weight(make):
    da = pytest.importorskip("dask.array")
    from kernelcourse import distributed
    from kernelcourse.features import RandomFourierFeatures

    X, y, _ = _data(200)
    Xd, yd = da.from_array(X, chunks=50), da.from_array(y, chunks=50)
    params = {"DaskFeatureRidge": {"features": RandomFourierFeatures(random_state=0)}}
    model = getattr(distributed, make)(**params.get(make, {"n_components": 20}))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(Xd, yd)
    with pytest.raises(ValueError, match=r"^y has 10 entries but X has 200 rows"):
        model.score(Xd, yd[:10])
    with pytest.raises(ValueError, match=r"^sample_weight: sample_weight\.shape == \(10,\)"):
        model.score(Xd, yd, sample_weight=np.ones(10))
    with pytest.raises(ValueError, match=r"^y: Input contains NaN"):
        model.score(Xd, yd * np.nan)
    expected = r2_score(y, model.predict(Xd).compute())
    assert model.score(Xd, yd) == pytest.approx(expected, rel=1e-12)
    assert model.score(Xd, y, sample_weight=np.ones(200)) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("make", ["FeatureRidgeClassifier", "NystroemKRRClassifier"])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_ridge_classifiers_encode_y_once(make, n_classes, monkeypatch):
    # fit binarized y to ±1 codes and then sorted it again with np.unique(return_inverse=
    # True) for the class totals; the index of each label is now read off the codes
    from kernelcourse.features import RandomFourierFeatures
    from kernelcourse.ridge import FeatureRidgeClassifier
    from kernelcourse.scale import NystroemKRRClassifier

    X, _, _ = _data(60)
    y = np.array(["b", "a", "c"][:n_classes] * 30)[:60]
    sw = np.random.default_rng(2).uniform(0.5, 2.0, size=60)
    model = {
        "FeatureRidgeClassifier": FeatureRidgeClassifier(RandomFourierFeatures(random_state=0)),
        "NystroemKRRClassifier": NystroemKRRClassifier(n_components=10, random_state=0),
    }[make]
    reference = clone(model).fit(X, y, sample_weight=sw)
    unique, inverses = np.unique, []

    def spy(*args, **kwargs):
        inverses.append(bool(kwargs.get("return_inverse")))
        return unique(*args, **kwargs)

    monkeypatch.setattr(np, "unique", spy)
    fitted = clone(model).fit(X, y, sample_weight=sw)
    assert not any(inverses)
    np.testing.assert_array_equal(fitted.classes_, reference.classes_)
    np.testing.assert_array_equal(fitted.decision_function(X), reference.decision_function(X))
    # a class whose samples all weigh zero is still named
    sw[y == "c" if n_classes == 3 else y == "a"] = 0.0
    with pytest.raises(ValueError, match=r"^sample_weight leaves class\(es\) \['[ac]'\] with"):
        clone(model).fit(X, y, sample_weight=sw)


@pytest.mark.parametrize("map_", ["cos", "cossin", "complex"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_rff_transform_warns_once_at_the_callers_line_when_the_phase_is_lost(map_, dtype):
    # map="complex" takes the cosines twice (real and imaginary part) and warned twice; every
    # map warned from a worker's line inside fourier.py, so that the warning named no line
    # of the caller and a filter for the caller's module did not see it
    from kernelcourse.features import RandomFourierFeatures, fourier_features

    X, _, _ = _data(20)
    rff = RandomFourierFeatures(n_components=8, map=map_, random_state=0, dtype=dtype).fit(X)
    with pytest.warns(RuntimeWarning, match="cannot resolve their phase") as record:
        Z = rff.transform(X * 1e30)
    assert len(record) == 1
    assert record[0].filename == __file__
    with pytest.warns(RuntimeWarning, match="cannot resolve their phase") as record:
        fourier_features(X * 1e30, rff.omega_.T, rff.offset_, 1.0)
    assert len(record) == 1
    assert record[0].filename == __file__
    # the same features as before, and none of the caller's filters are lost
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.raises(RuntimeWarning, match="cannot resolve their phase"):
            rff.transform(X * 1e30)
        rff.transform(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        np.testing.assert_array_equal(rff.transform(X * 1e30), Z)


@pytest.mark.parametrize("make", ["RidgeRegression", "KernelRidge", "NystroemKRR"])
def test_regressors_score_targets_near_the_float_range(make):
    # R²'s sums of squares overflowed: a model fitted on targets near 1e301, which the fit
    # takes, scored NaN with numpy's "overflow encountered in square"; R² does not change
    # when y and the predictions are scaled together
    import math

    from kernelcourse.ridge import KernelRidge, RidgeRegression
    from kernelcourse.scale import NystroemKRR

    X, y, _ = _data()
    model = {
        "RidgeRegression": RidgeRegression(),
        "KernelRidge": KernelRidge(lam=0.1),
        "NystroemKRR": NystroemKRR(n_components=10, random_state=0),
    }[make]
    sw = np.random.default_rng(1).uniform(0.0, 2.0, size=len(y))
    s = math.ldexp(1.0, 1000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        small = clone(model).fit(X, y)
        huge = clone(model).fit(X, y * s)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert huge.score(X, y * s) == pytest.approx(small.score(X, y), rel=1e-12)
        assert huge.score(X, y * s, sample_weight=sw) == pytest.approx(
            small.score(X, y, sample_weight=sw), rel=1e-12
        )
        # at ordinary magnitudes, scikit-learn's r2_score as it is
        assert small.score(X, y * 1e150) == r2_score(y * 1e150, small.predict(X))


def test_r2_below_the_float_range_is_minus_infinity_with_a_warning():
    # predictions of order 1e300 against targets of order 1: R² is about -1e600, which
    # came as -inf with numpy's bare "overflow encountered in square"
    from kernelcourse.ridge import RidgeRegression

    X, y, _ = _data()
    model = RidgeRegression().fit(X, y)
    with pytest.warns(RuntimeWarning, match=r"^R² is below the float range") as record:
        assert model.score(X * 1e300, y) == -np.inf
    assert len(record) == 1
    assert record[0].filename == __file__
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.isfinite(model.score(X * 1e100, y))  # about -1e200: still a float


def _linear_models():
    from kernelcourse.kernels import RBF
    from kernelcourse.ridge import FeatureRidge, RidgeRegression
    from kernelcourse.svm import KernelSVC, PrimalSVC

    X, y, labels = _data()
    big = np.sign(np.random.default_rng(3).normal(size=(5, 3))) * 1.7e308
    gram = RBF(0.5)(X)
    return [
        ("RidgeRegression", RidgeRegression(lam=1e-6).fit(X, 30 * y), big),
        ("FeatureRidge", FeatureRidge().fit(X, 30 * y), big),
        ("PrimalSVC", PrimalSVC(C=100).fit(X, labels), big),
        ("KernelSVC-precomputed", KernelSVC(kernel="precomputed").fit(gram, labels), gram * 1e308),
    ]


@pytest.mark.parametrize(
    ("name", "model", "X"), _linear_models(), ids=[case[0] for case in _linear_models()]
)
def test_linear_outputs_that_overflow_are_refused_by_name(name, model, X):
    # X @ coef_ of rows near the largest float overflowed: predict and decision_function
    # returned infinity or NaN with numpy's "overflow encountered in matmul", and predict
    # read a class off NaN, silently
    methods = [m for m in ("predict", "decision_function") if hasattr(model, m)]
    for method in methods:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with pytest.raises(ValueError, match=r"^the (predictions|decision values) on X \("):
                getattr(model, method)(X)
    # rows within the range are computed as before
    X_ok = X / 1e6
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for method in methods:
            assert np.asarray(getattr(model, method)(X_ok)).shape[0] == len(X_ok)


@pytest.mark.parametrize("estimator", _estimators(), **_ids)
def test_validation_of_rows_near_the_largest_float_raises_no_numpy_warning(estimator):
    # scikit-learn's finiteness check sums X first: rows of ±1.7e308 overflowed that sum,
    # and numpy's "invalid value encountered in reduce" came with every method on them
    model, X, y = _fitted(estimator)
    big = np.sign(np.random.default_rng(3).normal(size=(5, 3))) * 1.7e308
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        try:
            model.predict(big)
        except ValueError:
            pass
    assert not [w for w in record if "encountered in" in str(w.message)]


@pytest.mark.parametrize(
    ("classes", "message"),
    [
        ([0, np.nan], r"^classes: Input y contains NaN"),
        ([[0, 1]], r"^classes must be a 1-D array of labels, got shape \(1, 2\)"),
        ([0.5, 1.7], r"^classes: Unknown label type: continuous"),
    ],
    ids=["nan", "2-d", "continuous"],
)
def test_sgd_partial_fit_checks_classes_by_name(classes, message):
    # np.unique(classes) took [0, nan] as two classes (predict then returned NaN for one)
    # and flattened [[0, 1]], silently
    from kernelcourse.sgd import FeatureSGDClassifier

    X, _, labels = _data()
    model = FeatureSGDClassifier(random_state=0)
    with pytest.raises(ValueError, match=message):
        model.partial_fit(X, np.zeros(30, dtype=int), classes=classes)
    assert not hasattr(model, "classes_")
    fitted = model.partial_fit(X, labels, classes=(1, 0))
    np.testing.assert_array_equal(fitted.classes_, [0, 1])


def test_ridge_classifier_names_a_nan_label_without_a_numpy_warning():
    # its labels are checked before X and y are validated together, where scikit-learn's
    # check cast the NaN to an integer with numpy's "invalid value encountered in cast"
    from kernelcourse.ridge import FeatureRidgeClassifier

    X, _, labels = _data()
    y = labels.astype(float)
    y[0] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match=r"Input y contains NaN"):
            FeatureRidgeClassifier().fit(X, y)


def test_rff_transforms_on_several_threads_leave_the_warnings_machinery_alone():
    # holding a transform's warnings back with warnings.catch_warnings is not thread-safe:
    # two transforms at once (dask's threaded scheduler runs them so) restored each other's
    # state, and every later warning in the process went to a list nobody read
    import threading

    from kernelcourse.features import RandomFourierFeatures

    X, _, _ = _data(200)
    rff = RandomFourierFeatures(n_components=64, random_state=0).fit(X)
    filters, show = list(warnings.filters), warnings.showwarning

    def transform_many():
        for _ in range(40):
            rff.transform(X)

    threads = [threading.Thread(target=transform_many) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert warnings.filters == filters
    assert warnings.showwarning is show


@pytest.mark.parametrize("shift", [1e8, 1e12])
def test_streaming_ridge_fits_targets_far_from_zero(shift):
    # the sums were raw and centred at the end (ZᵀY − n z̄ȳᵀ), which lost
    # 2 log10(|ȳ| / spread) digits: at y + 1e12 the predictions were off by units, where
    # FeatureRidge, which centres the rows, is right to round-off of the shift
    from kernelcourse.features import RandomFourierFeatures
    from kernelcourse.ridge import FeatureRidge
    from kernelcourse.scale import StreamingFeatureRidge

    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 4))
    y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=2000)
    rff = RandomFourierFeatures(n_components=100, random_state=0)
    streamed = StreamingFeatureRidge(rff, lam=1e-3, fit_intercept=True, block_size=300)
    streamed.fit(X, y + shift)
    direct = FeatureRidge(rff, lam=1e-3, fit_intercept=True).fit(X, y + shift)
    err = np.abs(streamed.predict(X[:100]) - direct.predict(X[:100])).max()
    assert err <= 1e3 * np.finfo(float).eps * shift
    # fit_intercept switched off after the blocks were taken about their first row: the
    # raw sums are rebuilt from the shifted ones
    streamed.set_params(fit_intercept=False)
    streamed._solution = None
    direct = FeatureRidge(rff, lam=1e-3, fit_intercept=False).fit(X, y + shift)
    scale = np.abs(direct.coef_).max()  # (a huge constant through the features alone)
    np.testing.assert_allclose(streamed.coef_, direct.coef_, rtol=0, atol=1e-8 * scale)


@pytest.mark.parametrize("shift", [1e8, 1e12])
def test_dask_feature_ridge_fits_targets_far_from_zero(shift):
    da = pytest.importorskip("dask.array")
    from kernelcourse.distributed import DaskFeatureRidge
    from kernelcourse.features import RandomFourierFeatures
    from kernelcourse.ridge import FeatureRidge

    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 4))
    y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=2000)
    rff = RandomFourierFeatures(n_components=100, random_state=0).fit(X)
    Xd, yd = da.from_array(X, chunks=500), da.from_array(y + shift, chunks=500)
    model = DaskFeatureRidge(rff, lam=1e-3, fit_intercept=True).fit(Xd, yd)
    direct = FeatureRidge(rff, lam=1e-3, fit_intercept=True).fit(X, y + shift)
    ours = np.asarray(model.predict(Xd[:100]))
    err = np.abs(ours - direct.predict(X[:100])).max()
    assert err <= 1e3 * np.finfo(float).eps * shift
