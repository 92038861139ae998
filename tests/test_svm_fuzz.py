"""Bad and extreme inputs to the SVMs, and random small problems checked against LIBSVM."""

import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from kernelcourse.kernels import RBF
from kernelcourse.svm import KernelSVC, PrimalSVC, smo_solve


def _separated(n=24, seed=0):
    """Two clusters far apart: separable by a line, so the hard margin converges at once."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 2
    X = rng.normal(size=(n, 2)) + 6.0 * y[:, None]
    return X, y


# -- box bounds C·s_i·w_c --------------------------------------------------------------------------
def test_hard_margin_with_zero_sample_weights_drops_those_samples():
    # C = ∞ times a zero weight was evaluated as NaN (∞·0) before being masked, a
    # RuntimeWarning; the sample is now simply out of the problem, as if it were dropped.
    X, y = _separated()
    sw = np.ones(len(y))
    sw[:3] = 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        svc = KernelSVC(kernel="linear", C=np.inf, tol=1e-8).fit(X, y, sample_weight=sw)
    dropped = KernelSVC(kernel="linear", C=np.inf, tol=1e-8).fit(X[3:], y[3:])
    assert not np.isin(np.arange(3), svc.support_).any()
    np.testing.assert_allclose(svc.decision_function(X), dropped.decision_function(X), atol=1e-6)


@pytest.mark.parametrize(
    ("C", "sample_weight", "class_weight", "match"),
    [
        # C·s_i overflowed to ∞: a silent hard margin, and on overlapping classes a
        # ConvergenceWarning that blamed max_iter, with dual_objective_ = inf
        (1e300, 1e10, None, r"C=1e\+300 times sample_weight and class_weight overflows"),
        # s_i·w_c overflowed the same way
        (1.0, 1e300, {0: 1e300}, "sample_weight times class_weight overflows"),
    ],
)
def test_kernel_svc_box_bounds_that_overflow_raise(C, sample_weight, class_weight, match):
    X, y = _separated()
    X[0], y[0] = X[1], 1 - y[1]  # overlapping classes: the hard margin has no solution
    sw = np.full(len(y), sample_weight)
    with pytest.raises(ValueError, match=match):
        KernelSVC(C=C, class_weight=class_weight).fit(X, y, sample_weight=sw)


@pytest.mark.parametrize(
    ("C", "sample_weight", "class_weight", "match"),
    [
        (1.0, 1e300, {0: 1e300}, "sample_weight times class_weight overflows"),
        # one-vs-rest: the rest of each problem keep C·s_i, which overflowed after the check
        # on C·s_i·w_c passed; coef_ came out NaN (after RuntimeWarnings)
        (1e300, 1e10, {0: 1e-20, 1: 1e-20, 2: 1e-20}, "overflows floating point"),
    ],
)
def test_primal_svc_weights_that_overflow_raise(C, sample_weight, class_weight, match):
    X, _ = _separated(30)
    y = np.arange(30) % 3
    sw = np.full(30, sample_weight)
    with pytest.raises(ValueError, match=match):
        PrimalSVC(C=C, class_weight=class_weight).fit(X, y, sample_weight=sw)


def test_huge_finite_box_bounds_still_fit():
    # large but finite C·s_i is a soft margin that behaves as the hard one on separable data
    X, y = _separated()
    hard = KernelSVC(kernel="linear", C=np.inf, tol=1e-8).fit(X, y)
    soft = KernelSVC(kernel="linear", C=1e200, tol=1e-8).fit(X, y, sample_weight=np.full(24, 1e5))
    np.testing.assert_allclose(soft.decision_function(X), hard.decision_function(X), atol=1e-6)


# -- smo_solve's intercept when an index set is empty ----------------------------------------------
@pytest.mark.parametrize(
    ("labels", "C", "b"),
    [
        (-1.0, 1.0, -1.0),  # was 1.8e308: the empty I_up's +∞ taken as the intercept
        (1.0, 1.0, 1.0),
        (np.array([1.0, -1.0] * 4), 0.0, 0.0),  # every box [0, 0]: no bound on b at all
    ],
)
def test_smo_solve_intercept_is_the_finite_end_of_its_interval(labels, C, b):
    K = RBF(gamma=1.0)(np.arange(8.0)[:, None])
    y = np.broadcast_to(labels, (8,)).astype(float)
    res = smo_solve(K, y, C)
    assert res.intercept == b
    assert np.all(res.beta == 0.0) and res.converged


def test_gram_too_large_for_the_curvatures_raises():
    # K_ii + K_jj − 2K_ij overflowed inside the solver: NaN steps, and a ConvergenceWarning
    # that blamed max_iter; one scale lower (scaled C to match) the solution is unchanged
    X, y = _separated()
    K = RBF(gamma=0.5)(X)
    base = KernelSVC(kernel="precomputed").fit(K, y)
    big = KernelSVC(kernel="precomputed", C=1e-307).fit(K * 1e307, y)
    np.testing.assert_allclose(big.decision_function(K * 1e307), base.decision_function(K))
    with pytest.raises(ValueError, match="curvatures .* overflow"):
        KernelSVC(kernel="precomputed", C=1e-308).fit(K * 1e308, y)


# -- parameters that do not apply ------------------------------------------------------------------
@pytest.mark.parametrize("params", [{"gamma": 2.0}, {"kernel_params": {"degree": 3}}])
def test_precomputed_refuses_kernel_parameters(params):
    # they were ignored without a word, where a named linear kernel refuses gamma
    X, y = _separated()
    with pytest.raises(ValueError, match="do not apply to kernel='precomputed'"):
        KernelSVC(kernel="precomputed", **params).fit(X @ X.T, y)


# -- random small problems against LIBSVM ---------------------------------------------------------
def _random_problem(seed):
    rng = np.random.default_rng(seed)
    n, d, k = int(rng.integers(6, 50)), int(rng.integers(1, 4)), int(rng.integers(2, 5))
    X = rng.normal(size=(n, d))
    if seed % 3 == 0:
        X = np.round(X)  # repeated points, some with different labels
    labels = np.array(["x", "a", "m", "b"])[:k]
    y = labels[np.arange(n) % k]
    rng.shuffle(y)
    sw = rng.exponential(size=n) * (rng.uniform(size=n) > 0.2) if seed % 2 else None
    class_weight = [None, "balanced", {labels[0]: 2.5}][seed % 3]
    params = {"C": 10.0 ** rng.uniform(-2, 2), "gamma": 10.0 ** rng.uniform(-1, 1)}
    return X, y, sw, class_weight, params, rng.normal(size=(20, d))


@pytest.mark.parametrize("seed", range(12))
def test_random_small_problems_match_libsvm(seed):
    X, y, sw, class_weight, params, Xt = _random_problem(seed)
    ours = KernelSVC(tol=1e-7, class_weight=class_weight, **params).fit(X, y, sample_weight=sw)
    ref = SVC(tol=1e-7, class_weight=class_weight, break_ties=True, **params)
    ref.fit(X, y, sample_weight=sw)
    Xall = np.r_[X, Xt]
    assert list(ours.classes_) == list(ref.classes_)
    np.testing.assert_allclose(ours.class_weight_, ref.class_weight_)
    np.testing.assert_allclose(ours.decision_function(Xall), ref.decision_function(Xall), atol=1e-4)
    # the dual objective, from LIBSVM's coefficients (y_i α_i, signs flipped); its support_
    # indexes the samples of nonzero weight only, so its support vectors are used
    if len(ours.classes_) == 2:
        K = RBF(gamma=params["gamma"])(ref.support_vectors_)
        beta = -ref.dual_coef_[0]
        lib = np.abs(beta).sum() - 0.5 * beta @ K @ beta
        assert ours.dual_objective_ == pytest.approx(lib, rel=1e-5, abs=1e-8)


def test_identical_points_predict_the_weighted_majority():
    X = np.zeros((7, 2))
    y = np.array(["b", "b", "b", "a", "a", "a", "a"])
    for sw, expected in [(None, "a"), (np.array([3.0, 3, 3, 1, 1, 1, 1]), "b")]:
        ours = KernelSVC().fit(X, y, sample_weight=sw)
        ref = SVC(gamma=0.5).fit(X, y, sample_weight=sw)
        assert ours.predict(X[:1])[0] == ref.predict(X[:1])[0] == expected
        np.testing.assert_allclose(ours.decision_function(X), ref.decision_function(X), atol=1e-9)


@pytest.mark.parametrize("scale", [1e-150, 1e150])
def test_extreme_magnitudes_match_libsvm_with_gamma_scaled(scale):
    # the RBF kernel sees only γ‖x − y‖²: scaling X by s and γ by 1/s² changes nothing
    X, y, _, _, params, Xt = _random_problem(4)
    base = KernelSVC(C=params["C"], gamma=params["gamma"], tol=1e-8).fit(X, y)
    scaled = KernelSVC(C=params["C"], gamma=params["gamma"] / scale**2, tol=1e-8)
    scaled.fit(X * scale, y)
    np.testing.assert_allclose(
        scaled.decision_function(Xt * scale), base.decision_function(Xt), atol=1e-8
    )


# -- scikit-learn machinery ------------------------------------------------------------------------
def test_clone_pickle_pipeline_and_grid_search():
    X, y, _, _, _, Xt = _random_problem(5)
    svc = KernelSVC(C=3.0, gamma=0.5, class_weight="balanced").fit(X, y)
    again = pickle.loads(pickle.dumps(svc))
    np.testing.assert_array_equal(again.decision_function(Xt), svc.decision_function(Xt))
    fresh = clone(svc).fit(X, y)
    np.testing.assert_array_equal(fresh.decision_function(Xt), svc.decision_function(Xt))
    pipe = make_pipeline(StandardScaler(), KernelSVC(gamma=0.5)).fit(X, y)
    ref = make_pipeline(StandardScaler(), SVC(gamma=0.5, break_ties=True)).fit(X, y)
    np.testing.assert_allclose(pipe.decision_function(Xt), ref.decision_function(Xt), atol=1e-3)
    grid = {"C": [0.1, 1.0, 10.0]}
    K = RBF(gamma=0.5)(X)
    by_kernel = GridSearchCV(KernelSVC(gamma=0.5), grid, cv=3).fit(X, y)
    by_gram = GridSearchCV(KernelSVC(kernel="precomputed"), grid, cv=3).fit(K, y)
    np.testing.assert_allclose(
        by_kernel.cv_results_["mean_test_score"], by_gram.cv_results_["mean_test_score"]
    )
