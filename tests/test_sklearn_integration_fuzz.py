"""The estimators as a scikit-learn user meets them: DataFrames and their column names,
pickling, sample weights, labels, and refits, checked against the behaviour of
scikit-learn's own estimators."""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.frozen import FrozenEstimator
from sklearn.model_selection import cross_val_score

from kernelcourse.features import Nystroem, RandomBinningFeatures, RandomFourierFeatures
from kernelcourse.ridge import FeatureRidge, FeatureRidgeClassifier
from kernelcourse.scale import NystroemKRRClassifier, StreamingFeatureRidge
from kernelcourse.sgd import FeatureSGDClassifier
from kernelcourse.svm import KernelSVC


def _frame(n=120, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, 3)), columns=["a", "b", "c"])
    y = np.sin(2 * X["a"].to_numpy()) + 0.5 * X["b"].to_numpy()
    return X, y, (y > 0).astype(int)


# -- a feature map fitted beforehand on a DataFrame ------------------------------------------------
def _streaming(features):
    return StreamingFeatureRidge(features, lam=1e-2, block_size=50)


def _sgd(features):
    return FeatureSGDClassifier(features, lam=1e-4, block_size=50)


@pytest.mark.parametrize("make", [_streaming, _sgd], ids=["streaming", "sgd"])
@pytest.mark.parametrize(
    "feature_map",
    [RandomFourierFeatures(gamma=0.5, n_components=40, random_state=0), Nystroem(n_components=20)],
    ids=["rff", "nystroem"],
)
def test_map_fitted_on_a_frame_takes_the_same_frame_silently(make, feature_map):
    # The blocks reach the map as plain arrays, so a map fitted on a DataFrame warned
    # "X does not have valid feature names" on every block of a correct fit and predict.
    X, y, labels = _frame()
    target = labels if make is _sgd else y
    fitted_map = clone(feature_map).set_params(random_state=0).fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = make(fitted_map).fit(X, target)
        on_frame = model.predict(X)
        streamed = make(fitted_map)
        classes = {"classes": [0, 1]} if make is _sgd else {}
        streamed.partial_fit(X[:60], target[:60], **classes).partial_fit(X[60:], target[60:])
        streamed_prediction = streamed.predict(X)
    # the same numbers as the map fitted on the bare array
    on_array = clone(feature_map).set_params(random_state=0).fit(X.to_numpy())
    reference = make(on_array).fit(X.to_numpy(), target)
    np.testing.assert_allclose(on_frame, reference.predict(X.to_numpy()))
    np.testing.assert_allclose(streamed_prediction, on_frame)
    assert list(model.feature_names_in_) == ["a", "b", "c"]
    assert list(streamed.feature_names_in_) == ["a", "b", "c"]
    assert fitted_map.feature_names_in_.tolist() == ["a", "b", "c"]  # the user's map untouched


@pytest.mark.parametrize("make", [_streaming, _sgd], ids=["streaming", "sgd"])
@pytest.mark.parametrize("how", ["fit", "partial_fit"])
def test_map_fitted_on_other_columns_is_refused(make, how):
    # Reordered columns went to the map in the wrong order with only that same warning;
    # scikit-learn's Pipeline refuses them, and so do these estimators now.
    X, y, labels = _frame()
    target = labels if make is _sgd else y
    fitted_map = Nystroem(n_components=20, random_state=0).fit(X)
    model = make(fitted_map)
    reordered = X[["c", "b", "a"]]
    with pytest.raises(ValueError, match=r"columns \['c', 'b', 'a'\].*'a', 'b', 'c'"):
        if how == "fit":
            model.fit(reordered, target)
        else:
            extra = {"classes": [0, 1]} if make is _sgd else {}
            model.partial_fit(reordered, target, **extra)
    assert not hasattr(model, "features_")
    assert not hasattr(model, "classes_")


@pytest.mark.parametrize("make", [_streaming, _sgd], ids=["streaming", "sgd"])
def test_map_fitted_on_a_frame_warns_once_for_a_bare_array(make):
    # As scikit-learn: an array without names for a map fitted with names warns, once per
    # fit (not once per block), and the columns are taken in the order of fit.
    X, y, labels = _frame()
    target = labels if make is _sgd else y
    fitted_map = RandomFourierFeatures(gamma=0.5, n_components=40, random_state=0).fit(X)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = make(fitted_map).fit(X.to_numpy(), target)
        prediction = model.predict(X.to_numpy())
    messages = [str(w.message) for w in caught if "feature names" in str(w.message)]
    assert len(messages) == 1
    assert "RandomFourierFeatures" in messages[0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        reference = make(fitted_map).fit(X, target).predict(X)
    np.testing.assert_allclose(prediction, reference)


# -- maps frozen with scikit-learn's FrozenEstimator -----------------------------------------------
def test_feature_ridge_leaves_a_frozen_binning_map_alone():
    # The cell-index path called the map's fit_transform_codes through the wrapper, which
    # refitted the user's frozen map on the new X: its grids changed under the user's feet.
    X, y, _ = _frame()
    X = X.to_numpy()
    binning = RandomBinningFeatures(n_grids=5, random_state=0).fit(X)
    fitted = {name: np.copy(value) for name, value in vars(binning).items() if name.endswith("_")}
    before = binning.transform(X[:20]).toarray()
    model = FeatureRidge(FrozenEstimator(binning), lam=1e-2).fit(3 * X[:40] + 5, y[:40])
    np.testing.assert_array_equal(binning.transform(X[:20]).toarray(), before)
    for name, value in fitted.items():
        np.testing.assert_array_equal(getattr(binning, name), value)
    # and the model uses the frozen grids: the same as fitting the map on X itself
    reference = FeatureRidge(RandomBinningFeatures(n_grids=5, random_state=0), lam=1e-2)
    reference.fit(X, y)
    frozen = FeatureRidge(FrozenEstimator(binning), lam=1e-2).fit(X, y)
    np.testing.assert_allclose(frozen.predict(X), reference.predict(X), atol=1e-6)
    assert model.predict(X).shape == (len(X),)


@pytest.mark.parametrize(
    "make",
    [lambda f: FeatureRidge(f, lam=1e-2), _streaming, _sgd],
    ids=["feature_ridge", "streaming", "sgd"],
)
def test_frozen_map_fitted_on_a_frame(make):
    # FrozenEstimator keeps a fitted map through clone (cross-validation); fitted on a
    # DataFrame, it warned on every array it was given and took reordered columns silently.
    X, y, labels = _frame()
    target = labels if make is _sgd else y
    nystroem = Nystroem(n_components=20, random_state=0).fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        scores = cross_val_score(make(FrozenEstimator(nystroem)), X, target, cv=3)
        prediction = make(FrozenEstimator(nystroem)).fit(X, target).predict(X)
    assert np.all(np.isfinite(scores))
    reference = make(Nystroem(n_components=20, random_state=0).fit(X.to_numpy()))
    reference = reference.fit(X.to_numpy(), target).predict(X.to_numpy())
    np.testing.assert_allclose(prediction, reference)
    with pytest.raises(ValueError, match="fitted on the columns"):
        make(FrozenEstimator(nystroem)).fit(X[["b", "a", "c"]], target)
    assert nystroem.feature_names_in_.tolist() == ["a", "b", "c"]


# -- labels ----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "classifier",
    [FeatureRidgeClassifier(), NystroemKRRClassifier(n_components=5), KernelSVC()],
    ids=lambda c: type(c).__name__,
)
@pytest.mark.parametrize(
    "label, shown", [(0, "(0)"), (np.True_, "(True)"), ("yes", "('yes')"), (2.0, "(2.0)")]
)
def test_one_class_error_shows_the_label_as_written(classifier, label, shown):
    # numpy 2's repr of a numpy scalar made the message "y has only one class (np.int64(0))"
    X = np.random.default_rng(0).normal(size=(10, 2))
    with pytest.raises(ValueError, match="only one class") as err:
        classifier.fit(X, np.full(10, label))
    assert shown in str(err.value)
    assert "np." not in str(err.value)
