import warnings

import numpy as np
import pytest
from sklearn.kernel_approximation import RBFSampler
from sklearn.utils.estimator_checks import parametrize_with_checks

from kernelcourse import sgd
from kernelcourse.features import RandomFourierFeatures
from kernelcourse.kernels import RBF, Linear, Polynomial
from kernelcourse.sgd import FeatureSGDClassifier


def _problem(n=60, d=3, T=200, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=n)
    order = rng.integers(0, n, size=T)
    return X, y, order


def test_strategies_one_to_four_give_the_same_model():
    X, y, order = _problem()
    k = Polynomial(degree=2, gamma=0.5, coef0=1.0)
    Xq = np.random.default_rng(1).normal(size=(25, 3))
    preds = [
        sgd.STRATEGIES[s](X, y, k, order=order, step_size=0.05).predict(Xq) for s in (1, 2, 3, 4)
    ]
    for p in preds[1:]:
        np.testing.assert_allclose(p, preds[0], rtol=1e-10, atol=1e-10)
    assert np.abs(preds[0]).max() > 0.1  # a model was learned


def test_iterates_stay_in_the_span_of_the_features():
    X, y, order = _problem(T=150)
    k = Polynomial(degree=3, gamma=0.3, coef0=1.0)
    w = sgd.sgd_cached_features(X, y, k, order=order, step_size=0.02).coef
    u = sgd.sgd_dual_cached_gram(X, y, k, order=order, step_size=0.02).coef
    np.testing.assert_allclose(k.feature_map(X).T @ u, w, atol=1e-10)  # w_T = Σ u_i φ(x_i)


def test_approximate_feature_strategies_agree_with_each_other_and_the_dual():
    X, y, order = _problem()
    rff = RBFSampler(gamma=0.5, n_components=40, random_state=0).fit(X)
    steps = 0.1 / np.sqrt(1 + np.arange(len(order)))
    r5 = sgd.sgd_approx_features_on_the_fly(X, y, rff, order=order, step_size=steps)
    r6 = sgd.sgd_approx_cached_features(X, y, rff, order=order, step_size=steps)
    np.testing.assert_allclose(r5.coef, r6.coef, rtol=1e-10, atol=1e-12)
    # Both hold the map's frequencies and phases and w; ⑤ holds the data, ⑥ the features.
    (n, d), D = X.shape, 40
    assert r5.memory == n * d + d * D + 2 * D and r6.memory == n * D + d * D + 2 * D
    # ⑥ is ④ with the approximate kernel ψ(x)ᵀψ(y) = linear kernel on ψ.
    Z = rff.transform(X)
    r4 = sgd.sgd_dual_cached_gram(Z, y, Linear(), order=order, step_size=steps)
    np.testing.assert_allclose(Z.T @ r4.coef, r6.coef, atol=1e-10)


def test_operation_counts_and_memory_follow_the_lecture():
    n, d, T = 50, 4, 80
    X, y, order = _problem(n=n, d=d, T=T)
    k = Polynomial(degree=2, gamma=1.0, coef0=1.0)
    D = k.feature_dim(d)
    r = {s: sgd.STRATEGIES[s](X, y, k, order=order, step_size=0.01) for s in (1, 2, 3, 4)}
    assert r[1].operations == T * (d * D + 2 * D) and r[1].memory == n * d + D
    assert r[2].operations == n * d * D + 2 * T * D and r[2].memory == n * D + D
    assert r[3].operations == T * (n * d + n) and r[3].memory == n * d + n
    assert r[4].operations == n * n * d + T * n and r[4].memory == n * n + n
    assert r[4].time_formula == "Θ(n² d + T n)"
    assert set(sgd.COSTS) == set(sgd.STRATEGIES) == {1, 2, 3, 4, 5, 6}


def test_rbf_has_no_finite_features_for_strategies_one_and_two():
    X, y, order = _problem()
    with pytest.raises(ValueError, match="finite feature map"):
        sgd.sgd_features_on_the_fly(X, y, RBF(1.0), order=order, step_size=0.1)
    r3 = sgd.sgd_dual_kernel_on_the_fly(X, y, RBF(1.0), order=order, step_size=0.1)
    r4 = sgd.sgd_dual_cached_gram(X, y, RBF(1.0), order=order, step_size=0.1)
    np.testing.assert_allclose(r3.coef, r4.coef, atol=1e-12)


def test_bad_arguments():
    X, y, order = _problem()
    k = Polynomial(degree=2)
    with pytest.raises(ValueError, match="order"):
        sgd.sgd_cached_features(X, y, k, order=np.array([0, len(X)]), step_size=0.1)
    with pytest.raises(ValueError, match="step_size"):
        sgd.sgd_cached_features(X, y, k, order=order, step_size=-1.0)
    with pytest.raises(ValueError, match="y has 59 entries"):
        sgd.sgd_cached_features(X, y[:-1], k, order=order, step_size=0.1)
    with pytest.raises(TypeError, match="y must be numeric"):
        sgd.sgd_cached_features(X, np.array(["a"] * len(X)), k, order=order, step_size=0.1)
    with pytest.raises(ValueError, match="step_size must be a number or one per step"):
        sgd.sgd_cached_features(X, y, k, order=order, step_size=np.ones(3))
    with pytest.raises(TypeError, match="transform"):
        sgd.sgd_approx_cached_features(X, y, k, order=order, step_size=0.1)
    with pytest.raises(TypeError, match="Kernel"):
        sgd.sgd_dual_cached_gram(X, y, "rbf", order=order, step_size=0.1)


@pytest.mark.parametrize("strategy", [sgd.sgd_features_on_the_fly, sgd.sgd_dual_cached_gram])
def test_divergence_names_the_step_size(strategy):
    X, y, _ = _problem()
    order = np.random.default_rng(1).integers(0, len(X), size=3000)
    with pytest.raises(ValueError, match="SGD diverged.*lower step_size"):
        strategy(X, y, Polynomial(degree=2), order=order, step_size=5.0)


# -- strategy ⑤ out of core ------------------------------------------------------------------
def _two_moons(n=3000, seed=0):
    from sklearn.datasets import make_moons

    return make_moons(n_samples=n, noise=0.15, random_state=seed)


@pytest.mark.parametrize("loss", ["hinge", "logistic"])
def test_feature_sgd_streams_blocks_like_one_pass(loss):
    from kernelcourse.features import RandomFourierFeatures
    from kernelcourse.sgd import FeatureSGDClassifier

    X, y = _two_moons()
    feats = RandomFourierFeatures(gamma=2.0, n_components=200, random_state=0).fit(X)
    one = FeatureSGDClassifier(feats, loss=loss, lam=1e-4, eta0=0.5, block_size=512).fit(X, y)
    stream = FeatureSGDClassifier(feats, loss=loss, lam=1e-4, eta0=0.5, block_size=512)
    for part in np.array_split(np.arange(len(X)), 7):
        stream.partial_fit(X[part], y[part], classes=[0, 1])
    # the same steps in the same order: the same averaged weights
    np.testing.assert_allclose(stream.coef_, one.coef_, rtol=1e-10, atol=1e-12)
    assert stream.n_samples_seen_ == len(X)
    Xt, yt = _two_moons(1000, seed=1)
    assert np.mean(one.predict(Xt) == yt) > 0.9  # linear models on x alone reach about 0.86


def test_feature_sgd_errors():
    from kernelcourse.sgd import FeatureSGDClassifier

    X, y = _two_moons(200)
    with pytest.raises(ValueError, match="classes must be given"):
        FeatureSGDClassifier().partial_fit(X, y)
    with pytest.raises(ValueError, match="exactly two"):
        FeatureSGDClassifier().partial_fit(X, y, classes=[0, 1, 2])
    model = FeatureSGDClassifier(random_state=0).partial_fit(X, y, classes=[0, 1])
    with pytest.raises(ValueError, match="outside classes"):
        model.partial_fit(X[:5], np.full(5, 7))
    with pytest.raises(ValueError, match="loss"):
        FeatureSGDClassifier(loss="squared").fit(X, y)
    with pytest.raises(ValueError, match="continuous"):
        FeatureSGDClassifier().fit(X, X[:, 0])


def test_feature_sgd_state_and_feature_names():
    import pandas as pd
    from sklearn.exceptions import NotFittedError

    from kernelcourse.sgd import FeatureSGDClassifier

    X, y = _two_moons(200)
    with pytest.raises(NotFittedError):
        FeatureSGDClassifier().predict(X)
    # a first call that fails leaves no half-made state behind
    model = FeatureSGDClassifier(random_state=0)
    with pytest.raises(ValueError, match="outside classes"):
        model.partial_fit(X, y + 5, classes=[0, 1])
    model.partial_fit(X, y + 5, classes=[5, 6])
    np.testing.assert_array_equal(model.classes_, [5, 6])
    # a DataFrame's column names are kept, so predicting on one does not warn
    df = pd.DataFrame(X, columns=["u", "v"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fitted = FeatureSGDClassifier(random_state=0).fit(df, y)
        fitted.predict(df)
    np.testing.assert_array_equal(fitted.feature_names_in_, ["u", "v"])


def test_operation_tally_of_the_approximate_feature_strategies():
    n, d, T, D = 40, 3, 60, 25
    X, y, order = _problem(n=n, d=d, T=T)
    rff = RandomFourierFeatures(gamma=0.5, n_components=D, random_state=0).fit(X)
    r5 = sgd.sgd_approx_features_on_the_fly(X, y, rff, order=order, step_size=0.01)
    r6 = sgd.sgd_approx_cached_features(X, y, rff, order=order, step_size=0.01)
    assert r5.operations == T * (d * D + 2 * D)
    assert r6.operations == n * d * D + 2 * T * D
    # the tally follows the steps actually run: half the steps, half the step cost
    half = sgd.sgd_approx_cached_features(X, y, rff, order=order[: T // 2], step_size=0.01)
    assert r6.operations - half.operations == 2 * (T - T // 2) * D


def test_counts_and_step_sizes_refuse_bools_by_name():
    # block_size=True was one row a block, step_size=True the step 1.0
    from kernelcourse.sgd import FeatureSGDClassifier

    X, y = _two_moons(100)
    with pytest.raises(ValueError, match="'block_size' parameter .*not a bool.*Got True"):
        FeatureSGDClassifier(block_size=True).fit(X, y)
    X, y, order = _problem()
    for strategy in (sgd.sgd_cached_features, sgd.sgd_dual_kernel_on_the_fly):
        for step in (True, np.array([True])):
            with pytest.raises(TypeError, match="step_size must be a number"):
                strategy(X, y, Polynomial(degree=2), order=order, step_size=step)


@parametrize_with_checks([FeatureSGDClassifier(random_state=0)])
def test_feature_sgd_is_sklearn_compatible(estimator, check):
    # it was not checked, and failed 21 checks: no binary-only tag, and errors for a
    # multiclass or one-class y that did not say so in the words the checks look for
    check(estimator)


def test_feature_sgd_names_multiclass_and_one_class_y():
    X, y = _two_moons(60)
    with pytest.raises(ValueError, match="^Only binary classification is supported.*exactly two"):
        FeatureSGDClassifier().fit(X, np.arange(60) % 3)
    with pytest.raises(ValueError, match=r"classes holds one class \(\[1\]\)"):
        FeatureSGDClassifier().fit(X, np.ones(60, dtype=int))
