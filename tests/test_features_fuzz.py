"""Bad and extreme inputs to the feature maps (random Fourier features off the default path,
random binning, kitchen sinks, Nyström): clear errors instead of silent overflow, and the
properties every transformer owes (estimates that converge to the exact kernel, features of a
row that do not depend on its batch, layout or container, names, pandas output, pickling)."""

import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.base import clone

from kernelcourse.features import (
    BinCodes,
    Nystroem,
    RandomBinningFeatures,
    RandomFourierFeatures,
    RandomKitchenSinks,
    RankDeficiencyWarning,
    fit_box_constrained,
    fourier_features,
    ridge_leverage_scores,
)
from kernelcourse.kernels import RBF, Laplacian, Matern


def _points(n=30, d=3, seed=0):
    return np.random.default_rng(seed).normal(size=(n, d))


def _dense(Z):
    return Z.toarray() if sp.issparse(Z) else np.asarray(Z)


# -- random Fourier features: the kernel's mass, float32 ------------------------------------------


def test_rff_features_of_a_multiple_near_the_largest_float_are_finite():
    # √(2c/D) formed 2c first, infinity for c = 1.7e308: every feature came back NaN
    X = _points()
    c = 1.7e308
    for map_ in ("cos", "cossin", "complex"):
        big = RandomFourierFeatures(c * RBF(0.5), n_components=50, map=map_, random_state=0)
        unit = RandomFourierFeatures(RBF(0.5), n_components=50, map=map_, random_state=0)
        Z = big.fit(X).transform(X)
        assert np.isfinite(Z).all()
        np.testing.assert_allclose(Z / np.sqrt(c), unit.fit(X).transform(X), rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("map_", ["cos", "cossin", "complex"])
def test_rff_float32_refuses_a_feature_scale_beyond_its_range(map_):
    # √(c/D) of c = 1e100 became infinity in float32: infinite features, numpy's warning only
    X = _points().astype(np.float32)
    rff = RandomFourierFeatures(1e100 * RBF(0.5), n_components=50, map=map_, random_state=0)
    rff.fit(X)
    with pytest.raises(ValueError, match="feature scale .* beyond the range of dtype=float32"):
        rff.transform(X)
    # the same kernel in float64 is fine
    assert np.isfinite(rff.set_params(dtype=np.float64).fit(X).transform(X)).all()


def test_rff_float32_refuses_frequencies_beyond_its_range_at_fit():
    # γ = 1e100: Ω ~ 1e50 was stored as infinity in float32, and transform blamed X
    X = _points()
    for sampling in ("mc", "leverage"):
        rff = RandomFourierFeatures(
            gamma=1e100, n_components=20, dtype=np.float32, sampling=sampling, random_state=0
        )
        with pytest.raises(ValueError, match="frequencies Ω .* beyond the range of dtype=float32"):
            rff.fit(X)


def test_rff_float64_fit_names_the_frequencies_in_a_float32_transform():
    # Ω ~ 1e50 of a float64 fit became infinite in float32: numpy's cast warning, then an
    # error that blamed X
    X = _points()
    rff = RandomFourierFeatures(gamma=1e100, n_components=20, random_state=0).fit(X)
    with pytest.raises(
        ValueError,
        match="Ω has entries of magnitude .* beyond the range of dtype=float32; these frequencies",
    ):
        rff.transform(X.astype(np.float32) * np.float32(1e-30))


def test_rff_float32_transform_of_tiny_float64_x_and_omega_is_the_limit_at_zero():
    # entries below float32's normal range round to 0 or a subnormal in the cast; the
    # cosine's argument ωᵀx + b does not feel them, so the features are those of x = 0 (or
    # ω = 0) to round-off, not an error
    X = _points()
    rff = RandomFourierFeatures(n_components=20, random_state=0).fit(X)
    at_zero = rff.transform(np.zeros_like(X))
    tiny = rff.transform((X * 1e-40).astype(np.float32))
    np.testing.assert_allclose(tiny, at_zero, atol=1e-6)
    small = RandomFourierFeatures(gamma=1e-80, n_components=20, random_state=0).fit(X)
    Z = small.transform(X.astype(np.float32))
    assert Z.dtype == np.float32
    np.testing.assert_allclose(Z, small.transform(np.zeros_like(X)), atol=1e-6)
    # and so for W = Ωᵀ given to fourier_features: it was refused as below float32's range
    W = 1e-40 * np.ones((3, 4))
    Z = fourier_features(X.astype(np.float32), W, offset=0.5, scale=1.0)
    np.testing.assert_allclose(Z, np.full_like(Z, np.cos(0.5)), atol=1e-6)


def test_fourier_features_names_W_when_its_float32_cast_overflows():
    # W of 1e50 became infinity in float32 with only numpy's cast warning
    X = _points().astype(np.float32)
    W = np.random.default_rng(1).normal(size=(3, 5))
    with pytest.raises(ValueError, match="W has entries of magnitude .* dtype=float32"):
        fourier_features(X, W * 1e50, 0.0, 1.0)
    np.testing.assert_allclose(
        fourier_features(X, W, 0.25, 2.0),
        2 * np.cos(X.astype(np.float64) @ W + 0.25),
        atol=1e-5,
    )


def test_rff_float32_names_X_when_its_cast_overflows():
    X = _points()
    rff = RandomFourierFeatures(gamma=1e-100, n_components=20, dtype=np.float32, random_state=0)
    rff.fit(X)
    with pytest.raises(ValueError, match="X has entries of magnitude 2.*dtype=float32"):
        rff.transform(X * 1e50)


@pytest.mark.parametrize("map_", ["cos", "cossin", "complex"])
def test_rff_approximate_kernel_refuses_an_estimate_that_overflows(map_):
    # c = 1e40 fits float32's features (1e20) but not their products: infinity came back
    X = _points().astype(np.float32)
    rff = RandomFourierFeatures(1e40 * RBF(0.5), n_components=50, map=map_, random_state=0)
    rff.fit(X)
    with pytest.raises(ValueError, match="kernel estimate .* overflows float32"):
        rff.approximate_kernel(X)
    K = rff.set_params(dtype=np.float64).fit(X).approximate_kernel(X)
    assert np.isfinite(K).all()


def test_rff_leverage_with_a_singular_gram_names_ridge():
    # duplicate rows and ridge=1e-300: scipy's "2-th leading minor ... not positive definite"
    X = np.repeat(_points(2), 10, axis=0)
    rff = RandomFourierFeatures(n_components=20, sampling="leverage", ridge=1e-300, random_state=0)
    with pytest.raises(ValueError, match="numerically singular with ridge=1e-300"):
        rff.fit(X)
    assert np.isfinite(rff.set_params(ridge=1e-6).fit(X).weights_).all()


# -- random Fourier features: the estimates converge -------------------------------------------


@pytest.mark.parametrize(
    "kernel",
    [RBF(0.5), Laplacian(0.5), Matern(nu=1.5), Matern(nu=2.5, length_scale=2.0), 3.0 * RBF(0.5)],
    ids=repr,
)
@pytest.mark.parametrize("map_", ["cos", "cossin", "complex"])
@pytest.mark.parametrize("sampling", ["mc", "qmc", "orthogonal", "leverage"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_rff_estimates_converge_to_the_exact_kernel(kernel, map_, sampling, dtype):
    if sampling == "orthogonal" and isinstance(kernel, Laplacian):
        pytest.skip("the Laplacian's spectral measure is not rotation invariant")
    X = _points(20) * 0.7
    rff = RandomFourierFeatures(
        kernel,
        n_components=8000,
        map=map_,
        sampling=sampling,
        dtype=dtype,
        pool_factor=2,
        random_state=0,
    ).fit(X)
    K = kernel(X)
    A = rff.approximate_kernel(X)
    assert A.dtype == dtype
    # D = 8000: the Monte Carlo error is about c/√D ≈ 0.011 c; 0.08 c is seven of those
    assert np.abs(A - K).max() < 0.08 * K.max()


# -- random binning ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "gamma", [np.array(["1", "2", "3"]), [True, True, True], np.array([1, 2, 3], dtype=object)]
)
def test_binning_refuses_a_gamma_array_that_is_not_real_numbers(gamma):
    # strings were parsed and booleans taken as 0 and 1, where a scalar True was refused
    with pytest.raises(TypeError, match="gamma must be a real number or a 1-D array"):
        RandomBinningFeatures(gamma=gamma, n_grids=4, random_state=0).fit(_points())


def test_binning_ard_gamma_estimates_the_laplacian_kernel():
    X = _points(25)
    gamma = [0.2, 1.0, 3.0]
    Z = RandomBinningFeatures(gamma=gamma, n_grids=8000, random_state=0).fit_transform(X)
    K = np.exp(-np.abs(X[:, None] - X[None]) @ np.asarray(gamma))
    assert np.abs((Z @ Z.T).toarray() - K).max() < 0.05


def test_bin_codes_multiply_with_no_columns_or_no_rows():
    # reshape(0, -1) of a length-0 vector raised "cannot reshape array of size 0"
    unseen = BinCodes(np.full((2, 3), -1), [0, 0, 0], 2)  # every cell unseen: Z is 3 × 0
    np.testing.assert_array_equal(unseen @ np.ones(0), np.zeros(3))
    assert unseen.rmatvec(np.ones(3)).shape == (0,)
    empty = BinCodes(np.zeros((2, 0), dtype=int), [0, 1, 2], 2)  # no rows: Z is 0 × 2
    assert (empty @ np.ones(2)).shape == (0,)
    np.testing.assert_array_equal(empty.rmatvec(np.ones(0)), np.zeros(2))
    np.testing.assert_array_equal(empty.rmatvec(np.ones((0, 3))), np.zeros((2, 3)))


# -- random kitchen sinks ----------------------------------------------------------------------


def test_kitchen_sinks_cosine_warns_when_the_phase_is_lost():
    # cos(wᵀx + b) with wᵀx ~ 1e20: rounding noise, returned without a word (RFF warns)
    X = _points()
    rks = RandomKitchenSinks("cosine", n_components=20, scale=1e20, random_state=0).fit(X)
    with pytest.warns(RuntimeWarning, match="cannot resolve their phase") as record:
        rks.transform(X)
    assert record[0].filename == __file__  # the caller's line, past scikit-learn's wrapper
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        RandomKitchenSinks("cosine", n_components=20, random_state=0).fit_transform(X * 1e3)


def test_kitchen_sinks_bump_box_that_overflows_is_refused():
    # numpy's uniform raised "OverflowError: Range exceeds valid bounds"
    with pytest.raises(ValueError, match="bump centres overflows .* lower bandwidth"):
        RandomKitchenSinks("bump", n_components=10, bandwidth=1.7e308).fit(_points())


def test_kitchen_sinks_bump_centres_beyond_float32_in_a_float32_transform():
    # a float64 fit with centres of 1e300: their cast to float32 overflowed
    X = _points()
    X[0] = 1e300
    rks = RandomKitchenSinks("bump", n_components=200, bandwidth=1.0, random_state=0).fit(X)
    Y = _points(10, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Z32 = rks.transform(Y.astype(np.float32))
    assert Z32.dtype == np.float32
    np.testing.assert_array_equal(Z32, rks.transform(Y.astype(np.float32).astype(np.float64)))


def test_kitchen_sinks_approximate_kernel_refuses_an_estimate_that_overflows():
    # ReLU features of 1e160 are finite, their products are not: infinity came back
    X = _points()
    rks = RandomKitchenSinks("relu", n_components=50, random_state=0).fit(X)
    with pytest.raises(ValueError, match="kernel estimate .* overflows float64"):
        rks.approximate_kernel(X * 1e160)


def test_kitchen_sinks_sampler_returning_a_scalar_is_named():
    # len() of a 0-d array: "TypeError: len() of unsized object"
    rks = RandomKitchenSinks(
        lambda X, W: X @ W.T, sampler=lambda q, X, rng: 3.0, n_components=5, random_state=0
    )
    with pytest.raises(ValueError, match="sampler returned a scalar"):
        rks.fit(_points())


@pytest.mark.parametrize("intercept, C", [(True, 1.0), (False, np.inf), (True, np.inf)])
def test_fit_box_constrained_refuses_one_class_for_logistic_loss(intercept, C):
    # the infimum 0 is not attained: β₀ ≈ 14 came back as a fit
    Psi = RandomKitchenSinks(n_components=10, random_state=0).fit_transform(_points(40))
    with pytest.raises(ValueError, match="needs both classes"):
        fit_box_constrained(Psi, np.ones(40), C, intercept=intercept)
    # a bounded problem without intercept is well posed with one class
    beta, beta0 = fit_box_constrained(Psi, np.ones(40), 1.0, intercept=False)
    assert beta0 == 0.0 and np.abs(beta).max() <= 1.0 / 10 + 1e-12


# -- Nyström ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kernel, X",
    [("linear", _points() * 1e-200), ("cosine", np.zeros((30, 3)))],
    ids=["linear-underflow", "cosine-zero-rows"],
)
def test_nystroem_leverage_sampling_on_a_kernel_that_vanishes(kernel, X):
    # the pilot's K̂ had rank 0: "Z is empty", naming an argument the caller never passed;
    # with all scores 0, 0/0 made every probability NaN
    ny = Nystroem(kernel, n_components=10, sampling="leverage", random_state=0)
    with pytest.warns(RankDeficiencyWarning):
        ny.fit(X)
    assert ny.rank_ == 0
    assert np.isfinite(ny.leverage_scores_).all()
    assert len(set(ny.component_indices_.tolist())) == 10
    assert ny.transform(X).shape == (30, 0)


@pytest.mark.parametrize("kernel", ["rbf", "laplacian", "cosine"])
def test_nystroem_float32_transform_of_a_fit_with_landmarks_beyond_float32(kernel):
    # landmarks of 1e300 became infinite in float32: "Y contains NaN or infinity", naming
    # an argument the caller never passed
    X = _points(20)
    X[:10] *= 1e300
    ny = Nystroem(kernel, n_components=20, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RankDeficiencyWarning)
        ny.fit(X)
    Y = X[10:].astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Z = ny.transform(Y)
    assert Z.dtype == np.float32
    np.testing.assert_allclose(Z, ny.transform(Y.astype(np.float64)), rtol=1e-6, atol=1e-7)


def test_nystroem_warnings_point_at_the_callers_line():
    # stacklevel=2 named the line of Nystroem.fit that calls its helper
    X = _points(20)
    with pytest.warns(UserWarning, match="larger than the number of samples") as record:
        Nystroem(n_components=30, random_state=0).fit(X)
    assert record[0].filename == __file__
    with pytest.warns(RankDeficiencyWarning) as record:
        Nystroem(n_components=10, random_state=0).fit(np.repeat(X[:2], 10, axis=0))
    assert record[0].filename == __file__


def test_ridge_leverage_scores_of_dependent_columns_names_ridge():
    # numpy's bare "Matrix is not positive definite"
    with pytest.raises(ValueError, match="numerically singular with ridge=1e-300"):
        ridge_leverage_scores(np.ones((5, 2)), np.ones(5), 1e-300)
    np.testing.assert_allclose(
        ridge_leverage_scores(np.ones((5, 2)), np.full(5, 2.0), 1.0),
        np.full(5, 2 / (10 + 5) + 0 / 5),
    )


# -- every transformer: batch, layout, container, names, pandas, pickle, clone ------------------

ESTIMATORS = [
    RandomFourierFeatures(n_components=30, random_state=0),
    RandomFourierFeatures(n_components=30, map="cossin", sampling="qmc", random_state=0),
    RandomFourierFeatures(n_components=30, map="complex", sampling="orthogonal", random_state=0),
    RandomFourierFeatures("laplacian", n_components=30, sampling="leverage", random_state=0),
    RandomFourierFeatures("matern", n_components=30, dtype=np.float32, random_state=0),
    RandomBinningFeatures(n_grids=10, random_state=0),
    RandomKitchenSinks("cosine", n_components=20, random_state=0),
    RandomKitchenSinks("bump", n_components=20, random_state=0),
    RandomKitchenSinks("arccos", order=2, n_components=20, random_state=0),
    Nystroem(n_components=15, random_state=0),
    Nystroem(n_components=15, rank=5, sampling="leverage", random_state=0),
]


@pytest.mark.parametrize("est", ESTIMATORS, ids=repr)
def test_features_of_a_row_do_not_depend_on_batch_layout_or_container(est):
    X = _points(40)
    fitted = clone(est).fit(X)
    Z = _dense(fitted.transform(X))
    variants = {
        "one row at a time": np.vstack([_dense(fitted.transform(X[i : i + 1])) for i in range(40)]),
        "reversed batch": _dense(fitted.transform(X[::-1]))[::-1],
        "Fortran order": _dense(fitted.transform(np.asfortranarray(X))),
        "strided columns": _dense(fitted.transform(np.repeat(X, 2, axis=1)[:, ::2])),
        "list": _dense(fitted.transform(X.tolist())),
        "DataFrame": _dense(fitted.transform(pd.DataFrame(X))),
        "pickled": _dense(pickle.loads(pickle.dumps(fitted)).transform(X)),
        "cloned and refitted": _dense(clone(est).fit(X).transform(X)),
    }
    # BLAS rounds a product by its kernel (row count, layout): round-off, nothing more
    for name, Y in variants.items():
        np.testing.assert_allclose(Y, Z, rtol=1e-12, atol=1e-13, err_msg=name)


@pytest.mark.parametrize("est", ESTIMATORS, ids=repr)
def test_feature_names_and_pandas_output(est):
    X = pd.DataFrame(_points(20), columns=["a", "b", "c"])
    fitted = clone(est).fit(X)
    names = fitted.get_feature_names_out()
    n_out = _dense(fitted.transform(X)).shape[1]
    assert len(names) == n_out and len(set(names)) == n_out
    prefix = type(est).__name__.lower()
    assert all(name.startswith(prefix) for name in names)
    if isinstance(est, RandomBinningFeatures):
        # sparse output: scikit-learn refuses pandas output for it, saying so
        with pytest.raises(ValueError, match="sparse"):
            clone(est).set_output(transform="pandas").fit_transform(X)
        return
    out = clone(est).set_output(transform="pandas").fit(X).transform(X)
    assert isinstance(out, pd.DataFrame)
    assert list(out.columns) == list(names) and list(out.index) == list(X.index)
    np.testing.assert_allclose(out.to_numpy(), _dense(fitted.transform(X)), rtol=1e-12)
