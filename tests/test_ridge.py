import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.linalg import LinAlgWarning
from sklearn.kernel_ridge import KernelRidge as SklearnKernelRidge
from sklearn.linear_model import Ridge
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

from kernelcourse.features import RandomBinningFeatures
from kernelcourse.kernels import RBF, Laplacian, Linear, Polynomial, exp
from kernelcourse.ridge import (
    FeatureRidge,
    FeatureRidgeClassifier,
    KernelRidge,
    RidgeRegression,
    solve_regularized_psd,
    sparse_ridge_cg,
)
from kernelcourse.rkhs import RKHSFunction, norm


def data(n=60, d=4, k=None, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    shape = (n,) if k is None else (n, k)
    y = np.sin(X[:, :1].sum(axis=1))[:, None] if k else np.sin(X[:, 0])
    y = y + 0.1 * rng.normal(size=shape)
    return X, y, rng.normal(size=(20, d))


def _expected_failed(estimator):
    if isinstance(estimator, KernelRidge) and estimator.dtype == np.float32:
        # Documented: the float32 solve agrees with the fit on repeated samples to float32
        # round-off (~1e-7 relative), the tolerance the check itself uses.
        return {"check_sample_weight_equivalence_on_dense_data": "float32 round-off, by design"}
    if isinstance(estimator, FeatureRidge) and not hasattr(estimator.features, "n_grids"):
        # max_iter bounds the sparse solver only; a dense Φ is solved directly (n_iter_ = 0)
        return {"check_non_transformer_estimators_n_iter": "direct solve on dense features"}
    return {}


@parametrize_with_checks(
    [
        RidgeRegression(),
        RidgeRegression(fit_intercept=False),
        KernelRidge(),
        KernelRidge(dtype=np.float32),
        KernelRidge(kernel=RBF(0.5) + Polynomial(2)),
        FeatureRidge(),
        FeatureRidge(Polynomial(2)),
    ],
    expected_failed_checks=_expected_failed,
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


# -- agreement with scikit-learn -----------------------------------------------------------------
@pytest.mark.parametrize(
    "name, params",
    [
        ("rbf", {"gamma": 0.3}),
        ("rbf", {}),
        ("laplacian", {"gamma": 0.2}),
        ("polynomial", {"gamma": 0.5, "degree": 3, "coef0": 1.0}),
        ("linear", {}),
    ],
)
def test_kernel_ridge_matches_sklearn(name, params):
    X, y, Xt = data()
    sk_params = dict(params)
    ours_params = {k: v for k, v in params.items() if k == "gamma"}
    kernel_params = {k: v for k, v in params.items() if k != "gamma"}
    ours = KernelRidge(name, lam=0.7, kernel_params=kernel_params or None, **ours_params)
    ref = SklearnKernelRidge(alpha=0.7, kernel=name, **sk_params)
    a, b = ours.fit(X, y).predict(Xt), ref.fit(X, y).predict(Xt)
    assert np.abs(a - b).max() <= 1e-8 * np.abs(b).max()
    np.testing.assert_allclose(ours.dual_coef_, ref.dual_coef_, rtol=1e-8, atol=1e-10)


def test_ridge_matches_sklearn_with_and_without_intercept():
    X, y, Xt = data(k=2)
    y = y + 3.0
    for fit_intercept in (True, False):
        ours = RidgeRegression(0.5, fit_intercept=fit_intercept).fit(X, y)
        ref = Ridge(alpha=0.5, fit_intercept=fit_intercept).fit(X, y)
        np.testing.assert_allclose(ours.predict(Xt), ref.predict(Xt), rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=1e-10, atol=1e-12)


def test_ridge_is_the_map_formula():
    X, y, _ = data()
    lam = 2.0
    w = np.linalg.solve(lam * np.eye(X.shape[1]) + X.T @ X, X.T @ y)
    model = RidgeRegression(lam, fit_intercept=False).fit(X, y)
    np.testing.assert_allclose(model.coef_, w, rtol=1e-12)
    assert model.intercept_ == 0.0


# -- push-through identity and the representer theorem ----------------------------------------
@settings(max_examples=20)
@given(
    lam=st.floats(1e-2, 10.0),
    seed=st.integers(0, 2**16),
    which=st.sampled_from(["linear", "poly2", "poly3", "sum"]),
)
def test_push_through_identity(lam, seed, which):
    X, y, Xt = data(n=25, d=3, seed=seed)
    kernel = {
        "linear": Linear(),
        "poly2": Polynomial(2, gamma=0.5, coef0=1.0),
        "poly3": Polynomial(3, gamma=0.3, coef0=0.5),
        "sum": Linear() + Polynomial(2, gamma=1.0, coef0=0.0),
    }[which]
    primal = FeatureRidge(kernel, lam=lam).fit(X, y).predict(Xt)
    dual = KernelRidge(kernel, lam=lam).fit(X, y).predict(Xt)
    np.testing.assert_allclose(primal, dual, rtol=1e-7, atol=1e-9 * (1 + np.abs(dual).max()))


def test_primal_weights_are_phi_transpose_alpha():
    # w = Phi^T alpha: the primal weights lie in the span of the mapped data.
    X, y, _ = data(n=30, d=3)
    k = Polynomial(2, gamma=1.0, coef0=1.0)
    w = FeatureRidge(k, lam=0.3).fit(X, y).coef_
    alpha = KernelRidge(k, lam=0.3).fit(X, y).dual_coef_
    np.testing.assert_allclose(w, k.feature_map(X).T @ alpha, rtol=1e-8, atol=1e-10)


def test_representer_minimizer_in_the_span():
    # Adding a kernel section outside the data to the fitted function can only raise the
    # regularized objective: the minimizer lies in span{K_xi}.
    X, y, _ = data(n=40, d=2)
    lam = 0.5
    model = KernelRidge(RBF(0.5), lam=lam).fit(X, y)
    f = model.rkhs_function_

    def objective(g):
        return np.sum((y - g(X)) ** 2) + lam * norm(g) ** 2

    base = objective(f)
    rng = np.random.default_rng(3)
    for _ in range(5):
        h = RKHSFunction(RBF(0.5), rng.normal(size=(1, 2)), [rng.normal()])
        assert objective(f + 0.1 * h) >= base - 1e-10


def test_rkhs_function_and_norm():
    X, y, Xt = data()
    model = KernelRidge("rbf", gamma=0.4, lam=0.2).fit(X, y)
    f = model.rkhs_function_
    np.testing.assert_allclose(f(Xt), model.predict(Xt), rtol=1e-12)
    alpha = model.dual_coef_
    expected = np.sqrt(alpha @ RBF(0.4)(X) @ alpha)
    assert f.norm() == pytest.approx(expected, rel=1e-10)


def test_multi_output():
    X, y, Xt = data(k=3)
    y[:, 1] *= -2
    model = KernelRidge(Laplacian(0.3), lam=0.5).fit(X, y)
    assert model.dual_coef_.shape == (60, 3)
    P = model.predict(Xt)
    for j in range(3):
        single = KernelRidge(Laplacian(0.3), lam=0.5).fit(X, y[:, j]).predict(Xt)
        np.testing.assert_allclose(P[:, j], single, rtol=1e-10, atol=1e-12)
    assert model.rkhs_function_.norm().shape == (3,)
    ref = SklearnKernelRidge(alpha=0.5, kernel="laplacian", gamma=0.3).fit(X, y).predict(Xt)
    assert np.abs(P - ref).max() <= 1e-8 * np.abs(ref).max()


def test_float32_option_is_close():
    X, y, Xt = data()
    p64 = KernelRidge(gamma=0.3, lam=1.0).fit(X, y).predict(Xt)
    m32 = KernelRidge(gamma=0.3, lam=1.0, dtype=np.float32).fit(X, y)
    assert m32.dual_coef_.dtype == np.float32
    np.testing.assert_allclose(m32.predict(Xt), p64, rtol=1e-4, atol=1e-5)


def test_works_in_grid_search_and_pipeline():
    X, y, _ = data(n=80)
    search = GridSearchCV(
        make_pipeline(StandardScaler(), KernelRidge()),
        {"kernelridge__gamma": [0.1, 1.0], "kernelridge__lam": [0.1, 1.0]},
        cv=3,
    ).fit(X, y)
    assert search.best_score_ > 0.5


# -- numerical trouble and bad input -----------------------------------------------------------
def test_not_positive_definite_warns_and_falls_back():
    X, y, _ = data(n=30, d=2)
    X = np.vstack([X, X])  # duplicated rows: the linear Gram matrix is singular
    y = np.concatenate([y, y])
    with pytest.warns(LinAlgWarning, match="smallest eigenvalue"):
        model = KernelRidge(Polynomial(2, gamma=1.0, coef0=0.0), lam=0.0).fit(X, y)
    assert np.isfinite(model.dual_coef_).all()


def test_positive_definite_fit_does_not_warn():
    X, y, _ = data()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        KernelRidge(lam=1e-3).fit(X, y)


@pytest.mark.parametrize(
    "estimator, match",
    [
        (KernelRidge(lam=-1.0), "lam"),
        (RidgeRegression(lam=-0.1), "lam"),
        (FeatureRidge(lam=-1.0), "lam"),
        (KernelRidge(kernel="gaussianish"), "kernel"),
        (KernelRidge(gamma=0.0), "gamma"),
        (KernelRidge(dtype=np.float16), "dtype"),
        (KernelRidge(kernel="rbf", kernel_params={"degree": 2}), "kernel parameters"),
        (KernelRidge(kernel=RBF(1.0), gamma=0.5), "gamma"),
        (FeatureRidge(RBF(1.0)), "finite feature map"),
    ],
)
def test_bad_parameters(estimator, match):
    X, y, _ = data()
    with pytest.raises(ValueError, match=match):
        estimator.fit(X, y)


def test_nan_and_shape_errors():
    X, y, Xt = data()
    Xn = X.copy()
    Xn[0, 0] = np.nan
    for est in (KernelRidge(), RidgeRegression(), FeatureRidge()):
        with pytest.raises(ValueError, match="NaN"):
            est.fit(Xn, y)
        yn = y.copy()
        yn[3] = np.nan
        with pytest.raises(ValueError, match="NaN"):
            est.fit(X, yn)
        est.fit(X, y)
        with pytest.raises(ValueError, match="features"):
            est.predict(Xt[:, :2])


# -- numerical guards (issue 18) -----------------------------------------------------------------
@pytest.mark.parametrize("lam", [1e-16, 1e-10, 1e-3])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_more_features_than_samples_is_solved_in_the_dual_as_accurately_as_sklearn(
    lam, fit_intercept
):
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(30, 200)), rng.normal(size=30)
    sw = rng.uniform(0.5, 2.0, size=30)
    ref = Ridge(alpha=lam, fit_intercept=fit_intercept, solver="svd").fit(X, y, sample_weight=sw)
    ours = RidgeRegression(lam=lam, fit_intercept=fit_intercept).fit(X, y, sample_weight=sw)
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=0, atol=1e-9)
    np.testing.assert_allclose(ours.intercept_, ref.intercept_, rtol=0, atol=1e-9)
    feat = FeatureRidge(lam=lam, fit_intercept=fit_intercept).fit(X, y, sample_weight=sw)
    np.testing.assert_allclose(feat.coef_, ref.coef_, rtol=0, atol=1e-9)


def test_collinear_columns_without_ridge_warn_with_the_condition_number():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 3))
    X = np.hstack([X, X[:, :1]])  # the fourth column repeats the first
    with pytest.warns(LinAlgWarning, match="condition number"):
        RidgeRegression(lam=0.0).fit(X, rng.normal(size=50))


def test_ill_conditioned_kernel_ridge_warns():
    X = np.linspace(0, 1, 60)[:, None]
    y = np.sin(6 * X[:, 0])
    with pytest.warns(LinAlgWarning, match="condition number"):
        KernelRidge(kernel=RBF(1.0), lam=1e-15).fit(X, y)


@pytest.mark.parametrize(
    ("A", "lam", "error", "match"),
    [
        (np.diag([1.0, -np.inf, 1.0]), 0.1, ValueError, r"A \(K\) contains NaN or infinity"),
        (np.triu(np.full((3, 3), np.nan), 1) + np.eye(3), 0.1, ValueError, r"A \(K\)"),
        (np.eye(3), -1e-3, ValueError, "lam must be a finite number >= 0"),
        (np.eye(3), float("nan"), ValueError, "lam must be a finite number >= 0"),
        (np.eye(3), "1", TypeError, "lam must be a real number"),
        (np.ones((3, 2)), 0.1, ValueError, r"A \(K\) must be a non-empty square matrix"),
    ],
)
def test_solve_regularized_psd_rejects_bad_input(A, lam, error, match):
    with pytest.raises(error, match=match):
        solve_regularized_psd(A, np.ones(3), lam)


def test_solve_regularized_psd_checks_b():
    with pytest.raises(ValueError, match=r"b must have shape \(3,\)"):
        solve_regularized_psd(np.eye(3), np.ones(4), 0.1)
    with pytest.raises(ValueError, match="b contains NaN"):
        solve_regularized_psd(np.eye(3), np.array([1.0, np.nan, 0.0]), 0.1)


@pytest.mark.parametrize(
    ("kernel", "scale"), [(exp(Linear()), 20.0), ("poly", 1e160)], ids=["exp-linear", "poly"]
)
def test_non_finite_gram_matrix_raises_naming_the_kernel(kernel, scale):
    X = scale * np.random.default_rng(0).normal(size=(20, 5))
    with pytest.raises(ValueError, match="Gram matrix of the kernel"):
        KernelRidge(kernel=kernel).fit(X, np.ones(20))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_kernel_ridge_sample_weight_matches_sklearn(dtype):
    X, y, _ = data(n=40)
    sw = np.random.default_rng(1).uniform(0, 3, size=40)
    sw[:5] = 0
    ref = SklearnKernelRidge(alpha=0.1, kernel="rbf", gamma=0.5).fit(X, y, sample_weight=sw)
    ours = KernelRidge(lam=0.1, gamma=0.5, dtype=dtype).fit(X, y, sample_weight=sw)
    tol = 1e-10 if dtype is np.float64 else 1e-4
    np.testing.assert_allclose(ours.dual_coef_, ref.dual_coef_, rtol=0, atol=tol)


@pytest.mark.parametrize("est", [RidgeRegression(), KernelRidge(), FeatureRidge()], ids=repr)
def test_sample_weight_must_not_sum_to_zero(est):
    X, y, _ = data(n=10)
    with pytest.raises(ValueError, match="sample_weight"):
        est.fit(X, y, sample_weight=np.zeros(10))


@pytest.mark.parametrize("est", [RidgeRegression(), KernelRidge(), FeatureRidge()], ids=repr)
def test_regressors_name_a_string_y_and_a_ragged_x(est):
    with pytest.raises(ValueError, match="y must be numeric for a regressor"):
        est.fit(np.ones((3, 2)), ["a", "b", "c"])
    with pytest.raises(ValueError, match="X is ragged"):
        est.fit([[1.0, 2.0], [3.0]], [1.0, 2.0])


# -- FeatureRidgeClassifier ----------------------------------------------------------------------
@parametrize_with_checks(
    [
        # the default tol: sparse X is solved by CG to 1e-4, and the check of weights
        # against repeated rows compares the two fits to 1e-7
        FeatureRidgeClassifier(),
        # a tight tol: the checks compare sparse (CG) and dense (direct) fits closely
        FeatureRidgeClassifier(tol=1e-10),
        FeatureRidgeClassifier(
            RandomBinningFeatures(n_grids=5, random_state=0), lam=0.5, tol=1e-10
        ),
    ],
    expected_failed_checks=_expected_failed,
)
def test_feature_ridge_classifier_sklearn_compatible(estimator, check):
    check(estimator)


def test_feature_ridge_classifier_is_one_ridge_per_class():
    # the classifier's scores are FeatureRidge fits on the ±1 codes of each class, solved
    # together; the argmax of those scores is its prediction
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 3))
    y = np.digitize(X[:, 0] + 0.5 * X[:, 1] ** 2, [-0.5, 0.3, 1.0])
    feats = RandomBinningFeatures(gamma=1.0, n_grids=20, random_state=0)
    clf = FeatureRidgeClassifier(feats, lam=0.3, tol=1e-10, max_iter=500).fit(X, y)
    scores = np.column_stack(
        [
            FeatureRidge(feats, lam=0.3, fit_intercept=True, tol=1e-10, max_iter=500)
            .fit(X, np.where(y == c, 1.0, -1.0))
            .predict(X)
            for c in clf.classes_
        ]
    )
    np.testing.assert_allclose(clf.decision_function(X), scores, atol=1e-7)
    np.testing.assert_array_equal(clf.predict(X), clf.classes_[scores.argmax(axis=1)])


def test_feature_ridge_classifier_binary_and_string_labels():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 2))
    y = np.where(X[:, 0] > 0, "yes", "no")
    clf = FeatureRidgeClassifier(lam=1.0).fit(X, y)
    assert clf.coef_.shape == (1, 2)
    scores = clf.decision_function(X)
    assert scores.shape == (200,)
    np.testing.assert_array_equal(clf.predict(X), np.where(scores > 0, "yes", "no"))
    with pytest.raises(ValueError, match="only one class"):
        FeatureRidgeClassifier().fit(X, np.zeros(200))
    with pytest.raises(ValueError, match="Unknown label type|continuous"):
        FeatureRidgeClassifier().fit(X, rng.normal(size=200))


def test_sparse_ridge_cg_column_groups_match_one_solve(monkeypatch):
    # the columns of Y are independent recursions: solving them one at a time (as for the
    # D ≈ 10⁷ features of binning at full size) gives the same weights as all together
    from kernelcourse import ridge

    rng = np.random.default_rng(2)
    X = rng.normal(size=(300, 2))
    Z = RandomBinningFeatures(gamma=1.0, n_grids=10, random_state=0).fit_transform(X)
    Y = rng.normal(size=(300, 4))
    together = sparse_ridge_cg(Z, Y, 0.5, fit_intercept=True, tol=1e-12, max_iter=400)
    monkeypatch.setattr(ridge, "_CG_GROUP_BYTES", 1)
    alone = sparse_ridge_cg(Z, Y, 0.5, fit_intercept=True, tol=1e-12, max_iter=400)
    np.testing.assert_allclose(alone[0], together[0], atol=1e-9)
    np.testing.assert_allclose(alone[1], together[1], atol=1e-9)
    assert alone[2][-1] <= 1e-12


def test_sparse_ridge_cg_weights_equal_repeated_rows_at_the_default_tol():
    # scikit-learn's check_sample_weight_equivalence_on_sparse_data, on the solver: integer
    # weights and repeated rows give the same system, but CG on positive features beside
    # the ones column was ill-conditioned (condition 4e3 after the diagonal preconditioner),
    # so round-off in the two runs' sums moved their tol=1e-4 iterates apart by 1e-7.
    # Centring Z with the weighted means (b = ȳ − z̄ᵀw) brings the condition to about 20.
    import scipy.sparse as sp
    from sklearn.utils import shuffle

    rng = np.random.RandomState(42)
    X = rng.rand(15, 30)
    y = rng.randint(0, 3, size=15).astype(float)
    sw = rng.randint(0, 5, size=15)
    Xs, ys, sws = shuffle(X, y, sw, random_state=0)
    kw = dict(fit_intercept=True, tol=1e-4)
    w1, b1, _ = sparse_ridge_cg(sp.csr_matrix(X.repeat(sw, axis=0)), y.repeat(sw), 1.0, **kw)
    w2, b2, _ = sparse_ridge_cg(sp.csr_matrix(Xs), ys, 1.0, sample_weight=sws, **kw)
    np.testing.assert_allclose(X @ w2 + b2, X @ w1 + b1, rtol=1e-9)
    # and it is the direct solution (dense ridge with an intercept) to about tol
    ref = FeatureRidge(lam=1.0, fit_intercept=True).fit(X, y, sample_weight=sw)
    np.testing.assert_allclose(X @ w2 + b2, ref.predict(X), rtol=0, atol=1e-3)


def test_sparse_ridge_cg_intercept_solution_matches_the_direct_solve():
    # the centred system has the solution of the system with an intercept column: binning
    # features (each grid's columns sum to the ones column) and general sparse features
    import scipy.sparse as sp

    rng = np.random.default_rng(4)
    X = rng.normal(size=(400, 3))
    y = np.sin(X[:, 0]) + 3.0 + 0.1 * rng.normal(size=400)
    sw = rng.uniform(0.0, 2.0, size=400)
    Z = RandomBinningFeatures(gamma=1.0, n_grids=8, random_state=0).fit_transform(X)
    for feats in (Z, sp.csr_matrix(np.abs(rng.normal(size=(400, 12))) + 5.0)):
        w, b, _ = sparse_ridge_cg(
            feats, y, 0.3, fit_intercept=True, tol=1e-12, max_iter=2000, sample_weight=sw
        )
        ref = RidgeRegression(lam=0.3).fit(feats.toarray(), y, sample_weight=sw)
        np.testing.assert_allclose(w, ref.coef_, rtol=0, atol=1e-8)
        np.testing.assert_allclose(b, ref.intercept_, rtol=1e-10)


def test_feature_ridge_classifier_refuses_a_multilabel_y_by_name():
    # scikit-learn's RidgeClassifier takes an indicator matrix; ours said only "y should be
    # a 1d array", which did not say that multilabel output is what is missing
    import scipy.sparse as sp

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    Y = (rng.random((40, 3)) > 0.5).astype(int)
    for labels in (Y, Y.tolist(), sp.csr_matrix(Y)):
        with pytest.raises(ValueError, match=r"y has shape \(40, 3\).*no multilabel"):
            FeatureRidgeClassifier().fit(X, labels)
    with pytest.warns(UserWarning, match="column-vector y"):  # a column is still one label
        FeatureRidgeClassifier().fit(X, Y[:, :1])


def test_feature_ridge_classifier_class_weights_by_sample_weight():
    # the Notes' advice: sample_weight = each sample's class weight is RidgeClassifier's
    # class_weight
    from sklearn.linear_model import RidgeClassifier
    from sklearn.utils.class_weight import compute_sample_weight

    rng = np.random.default_rng(1)
    X = rng.normal(size=(120, 4))
    y = np.digitize(X[:, 0] + 0.3 * rng.normal(size=120), [-1.0, 0.8])  # unbalanced classes
    ref = RidgeClassifier(alpha=2.0, class_weight="balanced").fit(X, y)
    sw = compute_sample_weight("balanced", y)
    ours = FeatureRidgeClassifier(lam=2.0).fit(X, y, sample_weight=sw)
    np.testing.assert_allclose(ours.decision_function(X), ref.decision_function(X), atol=1e-10)


@pytest.mark.parametrize("shape, product", [((40, 3), "XᵀX"), ((5, 10), "XXᵀ")])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_ridge_regression_names_x_when_its_gram_overflows(shape, product, fit_intercept):
    # the error was solve_regularized_psd's: "A (XᵀX) ... a kernel or Gram matrix must be finite"
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=shape) * 1e160, rng.normal(size=shape[0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match=f"^{product} overflows .*X is too large.*rescale X"):
            RidgeRegression(fit_intercept=fit_intercept).fit(X, y)
