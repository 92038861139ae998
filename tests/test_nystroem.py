import warnings

import numpy as np
import pytest
from sklearn.kernel_approximation import Nystroem as SkNystroem
from sklearn.linear_model import RidgeClassifier
from sklearn.metrics.pairwise import laplacian_kernel, rbf_kernel
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.utils.estimator_checks import parametrize_with_checks

from kernelcourse import kernels as kn
from kernelcourse.features import Nystroem, RankDeficiencyWarning, ridge_leverage_scores


def _data(n=200, d=5, seed=0):
    return np.random.default_rng(seed).normal(size=(n, d))


@parametrize_with_checks(
    [
        Nystroem(n_components=10, random_state=0),
        Nystroem(n_components=8, rank=5, sampling="leverage", random_state=0),
    ]
)
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        # the checks' tiny data sets make K̂ singular on purpose (duplicates, constant columns)
        warnings.simplefilter("ignore", RankDeficiencyWarning)
        check(estimator)


@pytest.mark.parametrize("kernel", ["rbf", "laplacian"])
def test_m_equals_n_reproduces_K(kernel):
    X = _data(150, 4, 1)
    ny = Nystroem(kernel, gamma=0.3, n_components=len(X), random_state=0).fit(X)
    K = rbf_kernel(X, gamma=0.3) if kernel == "rbf" else laplacian_kernel(X, gamma=0.3)
    assert ny.rank_ == len(X)
    assert np.abs(ny.approximate_kernel(X) - K).max() < 1e-8


def test_same_components_as_sklearn_same_K_tilde():
    X, Y = _data(300, 6, 2), _data(40, 6, 3)
    ours = Nystroem(gamma=0.1, n_components=60, random_state=7).fit(X)
    ref = SkNystroem(gamma=0.1, n_components=60, random_state=7).fit(X)
    np.testing.assert_array_equal(ours.component_indices_, ref.component_indices_)
    Zr_x, Zr_y = ref.transform(X), ref.transform(Y)
    np.testing.assert_allclose(ours.approximate_kernel(X, Y), Zr_x @ Zr_y.T, atol=1e-10)
    # K̂ has full rank: on the landmarks z is L, the Cholesky factor of K̂ (the features
    # differ from scikit-learn's K_b K̂^{-1/2} by a rotation only)
    Z = ours.transform(ours.components_)
    L = np.linalg.cholesky(kn.RBF(0.1)(ours.components_))
    np.testing.assert_allclose(Z, L, atol=1e-10)
    Q = np.linalg.lstsq(Zr_x, ours.transform(X), rcond=None)[0]
    np.testing.assert_allclose(Q.T @ Q, np.eye(60), atol=1e-8)


@pytest.mark.parametrize("rank", [None, 25])
def test_map_is_triangular_and_independent_of_eigenvector_signs(rank):
    X = _data(200, 3, 8)
    ny = Nystroem(gamma=0.5, n_components=40, rank=rank, random_state=0).fit(X)
    A = ny.normalization_
    r = A.shape[0]
    T = A[:, 40 - r :]
    assert np.array_equal(T, np.tril(T)) and np.all(np.diag(T) > 0)
    K_hat = kn.RBF(0.5)(ny.components_)
    evals, evecs = np.linalg.eigh(K_hat)
    V = evecs[:, ::-1][:, :r]
    np.testing.assert_allclose(A.T @ A, (V / evals[::-1][:r]) @ V.T, rtol=1e-8, atol=1e-8)
    # the map is a function of K̂ alone: flipping the sign of any eigenvector changes nothing
    M = (V * np.where(np.arange(r) % 2, -1.0, 1.0) / np.sqrt(evals[::-1][:r])).T
    R = np.linalg.qr(M[:, ::-1], mode="r")
    R *= np.sign(np.diag(R))[:, None]
    np.testing.assert_allclose(R[::-1, ::-1], A, rtol=1e-8, atol=1e-8)


def test_triangular_transform_equals_the_general_product():
    # the in-place triangular product of transform, in both dtypes, against K_b Aᵀ
    X = _data(25_000, 5, 9)  # several row blocks, on every thread
    for dtype, tol in ((np.float64, 1e-12), (np.float32, 1e-4)):
        Xd = X.astype(dtype)
        ny = Nystroem(gamma=0.2, n_components=100, random_state=0).fit(Xd)
        assert ny.rank_ == 100
        Z = ny.transform(Xd)
        assert Z.dtype == dtype and Z.flags.c_contiguous
        ref = kn.RBF(0.2)(X, ny.components_.astype(np.float64)) @ ny.normalization_.T
        np.testing.assert_allclose(Z, ref, atol=tol * np.abs(ref).max())


def test_formula_of_lecture_004():
    X = _data(120, 3, 4)
    ny = Nystroem(gamma=0.5, n_components=30, random_state=1).fit(X)
    k = kn.RBF(0.5)
    Kb = k(X, ny.components_)
    K_tilde = Kb @ np.linalg.pinv(k(ny.components_), hermitian=True) @ Kb.T
    np.testing.assert_allclose(ny.approximate_kernel(X), K_tilde, atol=1e-9)
    # z(x) = D^{-1/2} V^T [k(x, x̂_j)]_j with eigenvalues in decreasing order
    assert np.all(np.diff(ny.eigenvalues_) <= 0)
    np.testing.assert_allclose(ny.transform(X), Kb @ ny.normalization_.T, atol=1e-12)


def test_rank_r_is_best_rank_r_of_K_hat():
    X = _data(200, 4, 5)
    ny = Nystroem(gamma=0.2, n_components=40, rank=7, random_state=0).fit(X)
    assert ny.transform(X).shape == (200, 7) and ny.rank_ == 7
    C = ny.components_
    K_hat = kn.RBF(0.2)(C)
    evals, evecs = np.linalg.eigh(K_hat)
    top = (evecs[:, -7:] * evals[-7:]) @ evecs[:, -7:].T
    # on the landmarks, z zᵀ is the best rank-7 approximation of K̂
    np.testing.assert_allclose(ny.approximate_kernel(C), top, atol=1e-9)
    np.testing.assert_allclose(ny.eigenvalues_, evals[::-1][:7], rtol=1e-10)


def test_duplicates_give_pseudo_inverse_without_nan():
    X = _data(30, 3, 6)
    X2 = np.vstack([X, X, X])
    with pytest.warns(RankDeficiencyWarning, match="condition number"):
        ny = Nystroem(gamma=0.4, n_components=len(X2), random_state=0).fit(X2)
    Z = ny.transform(X2)
    assert np.isfinite(Z).all()
    assert ny.rank_ == 30
    assert np.abs(Z @ Z.T - rbf_kernel(X2, gamma=0.4)).max() < 1e-8


def test_float32_preserved_and_close():
    X = _data(300, 5, 8)
    ny64 = Nystroem(gamma=0.2, n_components=50, random_state=0).fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RankDeficiencyWarning)
        ny32 = Nystroem(gamma=0.2, n_components=50, random_state=0).fit(X.astype(np.float32))
    Z32 = ny32.transform(X.astype(np.float32))
    assert Z32.dtype == np.float32
    np.testing.assert_allclose(Z32 @ Z32.T, ny64.approximate_kernel(X), atol=1e-3)


def test_leverage_scores_match_exact_when_pilot_is_exact():
    X = _data(80, 3, 9)
    K = rbf_kernel(X, gamma=0.5)
    lam = 1e-3
    exact = np.diag(K @ np.linalg.inv(K + len(X) * lam * np.eye(len(X))))
    evals, evecs = np.linalg.eigh(K)
    Z = evecs * np.sqrt(np.clip(evals, 0, None))
    np.testing.assert_allclose(ridge_leverage_scores(Z, np.ones(80), lam), exact, atol=1e-8)
    # a truncated factor over-estimates each score
    approx = ridge_leverage_scores(Z[:, -10:], np.ones(80), lam)
    assert np.all(approx >= exact - 1e-10)


def test_leverage_sampling_prefers_isolated_points_and_effective_dimension():
    rng = np.random.default_rng(10)
    # a dense cluster and a few far outliers: the outliers carry high leverage
    X = np.vstack([rng.normal(scale=0.05, size=(400, 2)), rng.normal(scale=5.0, size=(10, 2))])
    ny = Nystroem(gamma=1.0, n_components=20, sampling="leverage", random_state=0).fit(X)
    assert np.isclose(ny.leverage_scores_.sum(), 20, rtol=1e-6)
    assert np.sum(ny.component_indices_ >= 400) >= 8
    assert len(np.unique(ny.component_indices_)) == 20
    K = rbf_kernel(X, gamma=1.0)
    with pytest.warns(RankDeficiencyWarning):
        # uniform landmarks fall in the cluster, where K̂ is nearly singular
        uni = Nystroem(gamma=1.0, n_components=20, random_state=0).fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RankDeficiencyWarning)
        err_lev = np.linalg.norm(K - ny.approximate_kernel(X), 2)
        err_uni = np.linalg.norm(K - uni.approximate_kernel(X), 2)
    assert err_lev < err_uni


def test_error_decreases_with_m():
    X = _data(400, 3, 11)
    K = rbf_kernel(X, gamma=0.5)
    errs = [
        np.linalg.norm(
            K - Nystroem(gamma=0.5, n_components=m, random_state=0).fit(X).approximate_kernel(X), 2
        )
        for m in (10, 40, 160)
    ]
    assert errs[0] > errs[1] > errs[2]


def test_kernel_object_and_params():
    X = _data(60, 3, 12)
    a = Nystroem(kn.Matern(nu=1.5, length_scale=2.0), n_components=60).fit(X)
    b = Nystroem("matern", n_components=60, kernel_params={"nu": 1.5, "length_scale": 2.0})
    b.fit(X)
    K = kn.Matern(nu=1.5, length_scale=2.0)(X)
    assert np.abs(a.approximate_kernel(X) - K).max() < 1e-8
    assert np.abs(b.approximate_kernel(X) - K).max() < 1e-8


def test_pipeline_and_grid_search():
    rng = np.random.default_rng(13)
    X = rng.normal(size=(200, 2))
    y = (np.linalg.norm(X, axis=1) > 1.1).astype(int)
    pipe = make_pipeline(Nystroem(n_components=50, random_state=0), RidgeClassifier(alpha=1e-3))
    with warnings.catch_warnings():
        # γ = 0.01 on 2-D data: K̂ has only a few numerically non-zero eigenvalues
        warnings.simplefilter("ignore", RankDeficiencyWarning)
        gs = GridSearchCV(pipe, {"nystroem__gamma": [0.01, 1.0]}, cv=3).fit(X, y)
    assert gs.best_params_["nystroem__gamma"] == 1.0
    assert gs.best_score_ > 0.9


@pytest.mark.parametrize(
    ("params", "err", "match"),
    [
        ({"n_components": 0}, ValueError, "n_components"),
        ({"gamma": -1.0}, ValueError, "gamma"),
        ({"sampling": "greedy"}, ValueError, "sampling"),
        ({"rank": 0}, ValueError, "rank"),
        ({"kernel": "banana"}, ValueError, "kernel"),
        ({"ridge": 0.0}, ValueError, "ridge"),
        ({"kernel": kn.RBF(1.0), "gamma": 1.0}, ValueError, "gamma"),
    ],
)
def test_bad_parameters(params, err, match):
    with pytest.raises(err, match=match):
        Nystroem(**params).fit(_data(20, 2))


def test_more_components_than_samples_warns():
    with pytest.warns(UserWarning, match="n_components"):
        ny = Nystroem(n_components=50).fit(_data(20, 2))
    assert ny.rank_ == 20


def test_nan_and_feature_mismatch():
    X = _data(20, 2)
    ny = Nystroem(n_components=5, random_state=0).fit(X)
    with pytest.raises(ValueError, match="features"):
        ny.transform(_data(5, 3))
    X[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        Nystroem(n_components=5).fit(X)


@pytest.mark.parametrize(
    ("args", "match"),
    [
        ((np.array([[np.nan, 1.0]]), np.ones(1), 0.1), "Z contains NaN"),
        ((np.ones(3), np.ones(3), 0.1), "Z must be a 2-D array"),
        ((np.ones((3, 2)), np.ones(2), 0.1), "diag has 2 entries but the data have 3 rows"),
        ((np.ones((3, 2)), np.ones(3), 0.0), "ridge must be a finite number > 0"),
    ],
)
def test_ridge_leverage_scores_validates(args, match):
    from kernelcourse.features.nystroem import ridge_leverage_scores

    with pytest.raises(ValueError, match=match):
        ridge_leverage_scores(*args)


@pytest.mark.parametrize("param", ["n_components", "rank"])
def test_nystroem_refuses_a_bool_count(param):
    # True was taken as 1: one landmark (or rank one) without a word
    X = np.random.default_rng(0).normal(size=(30, 3))
    with pytest.raises(ValueError, match=f"'{param}' parameter.*not a bool"):
        Nystroem(**{"n_components": 10, param: True}).fit(X)


def test_ridge_leverage_scores_name_a_z_whose_gram_overflows():
    # ZᵀZ of Z = 1e200 was infinite: a NaN factor, and scipy's unnamed "must not contain infs"
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(20, 3))
    diag = np.einsum("ij,ij->i", Z, Z) + 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="Z has entries of magnitude 2.*e\\+200.*ZᵀZ"):
            ridge_leverage_scores(Z * 1e200, diag, 1.0)
    # the rescaling the message suggests leaves the scores as they were
    np.testing.assert_allclose(
        ridge_leverage_scores(Z * 1e100, diag * 1e200, 1e200),
        ridge_leverage_scores(Z, diag, 1.0),
        rtol=1e-12,
    )


@pytest.mark.parametrize("ridge", [1e-310, 5e-324])
def test_leverage_scores_that_overflow_name_ridge(ridge):
    # Nλ below 1e-308 made (K_ii − ‖z_i‖²)/(Nλ) inf: the scores were inf with numpy's bare
    # "overflow encountered", and Nystroem drew its landmarks from NaN (or all-zero)
    # probabilities without a word
    X = np.random.default_rng(0).normal(size=(50, 3))
    Z = np.random.default_rng(1).normal(size=(50, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match=f"ridge={ridge!r} is so small .* overflows"):
            ridge_leverage_scores(Z, np.full(50, 10.0), ridge)
        with pytest.raises(ValueError, match=f"ridge={ridge!r} is so small .* overflows"):
            Nystroem(n_components=10, sampling="leverage", ridge=ridge, random_state=0).fit(X)
        # a small ridge whose scores stay finite is still taken
        Nystroem(n_components=10, sampling="leverage", ridge=1e-300, random_state=0).fit(X)
