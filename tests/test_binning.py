import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics.pairwise import laplacian_kernel
from sklearn.utils.estimator_checks import parametrize_with_checks

from kernelcourse.features import RandomBinningFeatures


def _data(n=50, d=3, seed=0):
    return np.random.default_rng(seed).normal(size=(n, d))


@parametrize_with_checks([RandomBinningFeatures(n_grids=5, random_state=0)])
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_sparse_one_hot_structure():
    X = _data(100, 4, 1)
    rb = RandomBinningFeatures(gamma=0.5, n_grids=20, random_state=0)
    Z = rb.fit_transform(X)
    assert sp.issparse(Z) and Z.format == "csr"
    assert Z.shape == (100, rb.n_bins_.sum())
    # one cell per grid per point, each worth 1/√P
    np.testing.assert_array_equal(np.diff(Z.indptr), 20)
    np.testing.assert_allclose(Z.data, 1 / np.sqrt(20))
    np.testing.assert_allclose(np.asarray(Z.multiply(Z).sum(axis=1)).ravel(), 1.0)
    # fit_transform and fit().transform agree
    Z2 = RandomBinningFeatures(gamma=0.5, n_grids=20, random_state=0).fit(X).transform(X)
    assert (Z != Z2).nnz == 0


def test_pitch_distribution_is_gamma_2():
    rb = RandomBinningFeatures(gamma=2.0, n_grids=4000, random_state=0).fit(_data(5, 5))
    # Gamma(2, 1/γ): mean 2/γ, variance 2/γ²; shifts uniform on [0, δ)
    assert abs(rb.pitches_.mean() - 1.0) < 0.02
    assert abs(rb.pitches_.var() - 0.5) < 0.03
    ratio = rb.shifts_ / rb.pitches_
    assert ratio.min() >= 0 and ratio.max() < 1 and abs(ratio.mean() - 0.5) < 0.01


def test_expectation_equals_laplacian_kernel():
    X = _data(40, 3, 2)
    K = laplacian_kernel(X, gamma=0.7)
    Z = RandomBinningFeatures(gamma=0.7, n_grids=20000, random_state=1).fit_transform(X)
    K_hat = (Z @ Z.T).toarray()
    # z(x)ᵀz(y) is a mean of P Bernoulli(K) variables: standard error ≤ 0.5/√P ≈ 0.0035
    assert np.abs(K_hat - K).max() < 6 * 0.5 / np.sqrt(20000)
    np.testing.assert_allclose(np.diag(K_hat), 1.0)


def test_error_falls_like_one_over_sqrt_P():
    X = _data(60, 2, 3)
    K = laplacian_kernel(X, gamma=1.0)
    errs = []
    for P in (25, 400):
        e = [
            np.abs((Z @ Z.T).toarray() - K).mean()
            for Z in (
                RandomBinningFeatures(gamma=1.0, n_grids=P, random_state=s).fit_transform(X)
                for s in range(5)
            )
        ]
        errs.append(np.mean(e))
    # 16× more grids: error about 4× smaller
    assert 2.5 < errs[0] / errs[1] < 6.5


def test_unseen_cells_give_empty_entries():
    X = _data(30, 2, 4)
    rb = RandomBinningFeatures(gamma=1.0, n_grids=10, random_state=0).fit(X)
    far = rb.transform(X + 1e6)
    assert far.nnz == 0 and far.shape == (30, rb.n_bins_.sum())
    assert rb.get_feature_names_out().shape == (rb.n_bins_.sum(),)


def test_default_gamma_and_errors():
    X = _data(20, 4)
    assert RandomBinningFeatures(random_state=0).fit(X).gamma_ == 0.25
    with pytest.raises(ValueError, match="gamma"):
        RandomBinningFeatures(gamma=0).fit(X)
    with pytest.raises(ValueError, match="n_grids"):
        RandomBinningFeatures(n_grids=0).fit(X)
    rb = RandomBinningFeatures(random_state=0).fit(X)
    with pytest.raises(ValueError, match="features"):
        rb.transform(_data(3, 5))


def test_cell_index_overflow_raises_naming_gamma():
    X = 1e8 * np.random.default_rng(0).normal(size=(20, 3))
    with pytest.raises(ValueError, match="lower gamma or rescale X"):
        RandomBinningFeatures(gamma=1e12, random_state=0).fit(X)


def test_per_feature_gamma_is_the_ard_laplacian_kernel():
    X = _data(40, 3, 4)
    gammas = np.array([0.2, 1.0, 2.5])
    K = np.exp(-np.abs(X[:, None, :] - X[None, :, :]) @ gammas)
    rb = RandomBinningFeatures(gamma=gammas, n_grids=20000, random_state=1)
    Z = rb.fit_transform(X)
    K_hat = (Z @ Z.T).toarray()
    assert np.abs(K_hat - K).max() < 6 * 0.5 / np.sqrt(20000)
    # Gamma(2, 1/γ_k) pitches on axis k: mean 2/γ_k
    np.testing.assert_allclose(rb.pitches_.mean(axis=0), 2 / gammas, rtol=0.03)
    np.testing.assert_array_equal(rb.gamma_, gammas)


def test_per_feature_gamma_equals_one_gamma_on_rescaled_inputs():
    X = _data(200, 3, 5)
    gammas = np.array([0.5, 2.0, 1.0])
    Z_ard = RandomBinningFeatures(gamma=gammas, n_grids=50, random_state=0).fit_transform(X)
    Z_one = RandomBinningFeatures(gamma=1.0, n_grids=50, random_state=0).fit_transform(X * gammas)
    np.testing.assert_allclose((Z_ard @ Z_ard.T).toarray(), (Z_one @ Z_one.T).toarray())
    # a scalar given as a 0-d array is the ordinary kernel
    rb = RandomBinningFeatures(gamma=np.float64(0.5), n_grids=5, random_state=0).fit(X)
    assert isinstance(rb.gamma_, float)


@pytest.mark.parametrize(
    "gamma, match",
    [
        ([1.0, 2.0], r"one entry per feature \(3\)"),
        ([1.0, 0.0, 1.0], "> 0"),
        ([1.0, np.nan, 1.0], "finite"),
    ],
)
def test_per_feature_gamma_is_checked(gamma, match):
    with pytest.raises(ValueError, match=match) as err:
        RandomBinningFeatures(gamma=gamma, n_grids=5).fit(_data(10, 3))
    assert "gamma" in str(err.value)


def test_bin_codes_rmatvec_accumulates_into_out():
    # Zᵀr + λv in place, as the ridge solver asks for it, equals the two-step sum
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    codes = RandomBinningFeatures(gamma=1.0, n_grids=8, random_state=0).fit_transform_codes(X)
    R = rng.normal(size=(200, 2))
    V = rng.normal(size=(codes.shape[1], 2))
    out = 0.5 * V
    assert codes.rmatvec(R, out=out) is out
    np.testing.assert_allclose(out, codes.rmatvec(R) + 0.5 * V, rtol=1e-12)
    with pytest.raises(ValueError, match="out must be a C-contiguous float64"):
        codes.rmatvec(R, out=np.zeros((codes.shape[1], 2), dtype=np.float32))
    with pytest.raises(ValueError, match="out must be"):
        codes.rmatvec(R, out=np.zeros((codes.shape[1], 3)))


def test_float32_input_gives_float32_features_in_the_same_cells():
    # as scikit-learn's transformers: float32 X keeps its dtype; the cells are computed in
    # float64, where every float32 coordinate is exact, so they are the float64 input's
    X = np.random.default_rng(0).normal(size=(60, 3)).astype(np.float32)
    est32 = RandomBinningFeatures(n_grids=20, random_state=0)
    est64 = RandomBinningFeatures(n_grids=20, random_state=0)
    Z32, Z64 = est32.fit_transform(X), est64.fit_transform(X.astype(np.float64))
    assert Z32.dtype == np.float32 and Z64.dtype == np.float64
    np.testing.assert_array_equal(Z32.indices, Z64.indices)
    np.testing.assert_array_equal(Z32.indptr, Z64.indptr)
    np.testing.assert_allclose(Z32.data, Z64.data, rtol=1e-7)
    new = np.random.default_rng(1).normal(size=(7, 3))
    assert est32.transform(new.astype(np.float32)).dtype == np.float32
    assert est32.transform(new).dtype == np.float64
    # integers are read as float64, as before
    assert est64.transform(np.arange(6).reshape(2, 3)).dtype == np.float64
