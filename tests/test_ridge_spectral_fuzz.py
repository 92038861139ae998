"""Bad and extreme inputs to the ridge solvers, the spectral measures and the bounds: each
case once gave a wrong number in silence or failed with an error that did not say why."""

import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from kernelcourse.bounds import (
    features_needed,
    hoeffding_bound,
    hoeffding_deviation,
    hoeffding_features,
    rademacher_bound,
    uniform_bound,
)
from kernelcourse.kernels import Matern
from kernelcourse.ridge import KernelRidge, RidgeRegression, solve_regularized_psd, sparse_ridge_cg
from kernelcourse.spectral import CauchyProductMeasure, GaussianMeasure, StudentTMeasure


@pytest.mark.parametrize("delta", [1e-320, 5e-324])
def test_hoeffding_with_subnormal_delta_is_finite(delta):
    # 2/δ overflowed: the deviation came back as inf and hoeffding_features blamed a
    log_term = math.log(2.0) - math.log(delta)
    assert hoeffding_deviation(1000, delta) == pytest.approx(math.sqrt(8 * log_term / 1000))
    assert hoeffding_deviation(1000, delta, map="cossin") == pytest.approx(
        math.sqrt(2 * log_term / 1000)
    )
    assert hoeffding_features(0.1, delta) == math.ceil(8 * log_term / 0.01)


def test_hoeffding_delta_above_the_float_range_boundary_is_unchanged():
    assert hoeffding_features(0.1, 0.05) == 2952
    assert hoeffding_deviation(800, 2 * math.exp(-1.0)) == pytest.approx(0.1)


@pytest.mark.parametrize("map_", [["cos"], {"cos": 1}, 8.0, None])
def test_hoeffding_map_of_the_wrong_type_is_named(map_):
    # a list raised "unhashable type: 'list'"
    for call in (
        lambda: hoeffding_bound(10, 0.1, map=map_),
        lambda: hoeffding_deviation(10, 0.1, map=map_),
        lambda: hoeffding_features(0.1, 0.1, map=map_),
    ):
        with pytest.raises(ValueError, match="map must be one of"):
            call()


def test_counts_accept_0d_arrays_as_their_number():
    # a 0-d array is a number elsewhere in the package; D=np.array(1000) was "not >= 1"
    assert hoeffding_bound(np.array(1000), 0.1) == hoeffding_bound(1000, 0.1)
    assert hoeffding_deviation(np.int64(1000), 0.05) == hoeffding_deviation(1000, 0.05)
    args = dict(eps=0.1, diameter=2.0, sigma_p=1.0)
    assert uniform_bound(D=np.array(10**5), d=np.array(2), **args) == uniform_bound(
        D=10**5, d=2, **args
    )
    assert features_needed(delta=0.05, d=np.array(2), **args) == features_needed(
        delta=0.05, d=2, **args
    )
    with pytest.raises(ValueError, match="integer"):
        uniform_bound(D=10, d=np.array(2.5), **args)
    with pytest.raises(ValueError, match="D must be"):
        hoeffding_bound(np.array([1000]), 0.1)


@pytest.mark.parametrize("diag", [[1.0, -0.5], [-1.0, 4.0, 0.0]])
def test_rademacher_bound_refuses_a_negative_diagonal(diag):
    # a positive trace hid the negative entry; no Gram matrix has K(x, x) < 0
    with pytest.raises(ValueError, match="negative diagonal"):
        rademacher_bound(np.diag(diag), 1.0)


def test_rademacher_bound_accepts_round_off_below_zero():
    K = np.diag([1.0, -1e-17, 2.0])
    assert rademacher_bound(K, 1.0) == pytest.approx(math.sqrt(3.0) / 3)


@pytest.mark.parametrize(
    "nu, error",
    [
        (0, ValueError),
        (-1, ValueError),
        (np.inf, ValueError),
        (np.nan, ValueError),
        ("a", TypeError),
        (None, TypeError),
        (True, TypeError),
    ],
)
def test_student_t_measure_checks_nu_when_given_a_kernel(nu, error):
    # with a kernel, ν went unchecked: "df <= 0" from numpy, "math domain error", or a
    # NaN density from ν = inf
    with pytest.raises(error, match=r"\bnu\b"):
        StudentTMeasure(nu, 1.0, kernel=Matern(1.5, 1.0))


def test_student_t_measure_with_a_kernel_keeps_nu():
    p = StudentTMeasure(1.5, 2.0, kernel=Matern(1.5, 2.0))
    assert p.nu == 1.5 and p.df == 3.0
    assert p.second_moment(2) == pytest.approx(2 * 3.0 / 1.0 / 4.0)


def test_sample_accepts_0d_integer_arrays():
    p = GaussianMeasure(0.5)
    expected = p.sample(4, 3, random_state=0)
    np.testing.assert_array_equal(p.sample(np.array(4), np.array(3), random_state=0), expected)
    assert p.second_moment(np.array(3)) == p.second_moment(3)
    with pytest.raises(ValueError, match="n must be an integer"):
        p.sample(np.array(4.0), 3)


def test_solve_regularized_psd_refuses_a_non_symmetric_matrix():
    # the factorization reads one triangle: [[2, 0.5], [0, 2]] was solved as
    # [[2, 0.5], [0.5, 2]] in silence
    A = np.array([[2.0, 0.5], [0.0, 2.0]])
    for layout in (A, np.asfortranarray(A), A.astype(np.float32)):
        with pytest.raises(ValueError, match=r"A \(K\) is not symmetric"):
            solve_regularized_psd(layout, np.ones(2), 0.1)


def test_solve_regularized_psd_accepts_round_off_asymmetry():
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(50, 6))
    A = Z.T @ Z
    A_noisy = A * (1 + 1e-13 * rng.normal(size=A.shape))  # not symmetric to the last bit
    b = rng.normal(size=6)
    x = solve_regularized_psd(A_noisy, b, 0.5)
    np.testing.assert_allclose(x, np.linalg.solve(A + 0.5 * np.eye(6), b), rtol=1e-9)


@pytest.mark.parametrize("shape", [(3, 0), (0,)])
def test_solve_regularized_psd_names_b_without_columns(shape):
    # (3, 0) failed inside numpy: "zero-size array to reduction operation maximum"
    with pytest.raises(ValueError, match="b must have shape"):
        solve_regularized_psd(np.eye(3), np.empty(shape), 1.0)


def test_regularized_diagonal_beyond_the_float_range_is_refused():
    # an infinite pivot returned x = 0 with numpy's overflow warnings only
    with pytest.raises(ValueError, match="overflows float64"):
        solve_regularized_psd(1e308 * np.eye(2), np.ones(2), 1e308)
    with pytest.raises(ValueError, match="overflows float32.*dtype=float64"):
        solve_regularized_psd(np.eye(2, dtype=np.float32), np.ones(2), 1e39)
    X = np.random.default_rng(0).normal(size=(10, 2))
    with pytest.raises(ValueError, match="lam"):
        KernelRidge(lam=1e39, dtype=np.float32).fit(X, X[:, 0])
    # in float64 the same λ is fine: α = y / λ to first order
    model = KernelRidge(lam=1e39).fit(X, X[:, 0])
    np.testing.assert_allclose(model.dual_coef_, X[:, 0] / 1e39, rtol=1e-12)


def _targets_near_float_max():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(30, 3))
    y = 0.01 * (X @ np.array([1.0, -2.0, 0.5]) + 0.1 * rng.normal(size=30)) + 8.0
    return X, y, 2.0**1020  # y · 2¹⁰²⁰ is near 9e307: finite, but its sum is not


def test_ridge_with_targets_whose_sum_overflows():
    # "b contains NaN or infinity" (b was the solver's right-hand side, not a parameter)
    X, y, scale = _targets_near_float_max()
    sw = np.random.default_rng(2).uniform(0.5, 2.0, size=30)
    for weights in (None, sw):
        small = RidgeRegression(lam=0.1).fit(X, y, sample_weight=weights)
        big = RidgeRegression(lam=0.1).fit(X, y * scale, sample_weight=weights)
        np.testing.assert_allclose(big.coef_ / scale, small.coef_, rtol=1e-10)
        assert big.intercept_ / scale == pytest.approx(small.intercept_, rel=1e-10)


def test_sparse_ridge_cg_intercept_with_targets_whose_sum_overflows():
    # the intercept came back as inf, with numpy's overflow warnings only
    X, y, scale = _targets_near_float_max()
    Z = sp.csr_matrix(X)
    small = sparse_ridge_cg(Z, y, 0.1, fit_intercept=True, tol=1e-12, max_iter=100)
    big = sparse_ridge_cg(Z, y * scale, 0.1, fit_intercept=True, tol=1e-12, max_iter=100)
    np.testing.assert_allclose(big[0] / scale, small[0], rtol=1e-8)
    assert big[1] / scale == pytest.approx(small[1], rel=1e-10)


def test_targets_beyond_the_float_range_once_centred_are_named():
    X = np.random.default_rng(0).normal(size=(3, 2))
    y = np.array([1.7e308, 1.7e308, -1.7e308])  # ȳ = 5.7e307; −1.7e308 − ȳ overflows
    with pytest.raises(ValueError, match="y minus its"):
        RidgeRegression().fit(X, y)
    # centred y finite, Xᵀy not: "b contains NaN or infinity" named the solver's argument
    with pytest.raises(ValueError, match="Xᵀy overflows"):
        RidgeRegression().fit(1e10 * X, np.array([1.7e308, -1.7e308, 1.0]))
    with pytest.raises(ValueError, match="Y minus its"):
        sparse_ridge_cg(sp.csr_matrix(X), y, 1.0, fit_intercept=True)


def test_kernel_ridge_lam_beyond_float32_is_named_on_array_api_input(monkeypatch):
    # the array-API path failed with "Eigenvalues did not converge" (the diagonal of
    # K + λI was infinite in float32)
    xs = pytest.importorskip("array_api_strict")
    import sklearn

    monkeypatch.setenv("SCIPY_ARRAY_API", "1")
    X = np.random.default_rng(0).normal(size=(10, 2))
    with sklearn.config_context(array_api_dispatch=True):
        with pytest.raises(ValueError, match="lam = 1e\\+39 is beyond the range of float32"):
            KernelRidge(lam=1e39, dtype=np.float32).fit(xs.asarray(X), xs.asarray(X[:, 0]))
        model = KernelRidge(lam=1e30, dtype=np.float32).fit(xs.asarray(X), xs.asarray(X[:, 0]))
        np.testing.assert_allclose(np.asarray(model.dual_coef_), X[:, 0] / 1e30, rtol=1e-5)


def test_features_needed_beyond_floating_point_names_d_too():
    # d = 1e307 overflowed the D needed and the error blamed eps = 0.1 alone
    with pytest.raises(ValueError, match=r"d = 1e\+307 too large"):
        features_needed(eps=0.1, delta=0.05, d=10**307, diameter=2.0, sigma_p=1.0)


def test_densities_beyond_the_float_range_round_without_numpy_warnings():
    # numpy's bare "overflow encountered in divide / exp" came with the correctly rounded
    # values; the densities themselves are right
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert GaussianMeasure(1e-300).logpdf(np.full((1, 2), 1e200))[0] == -np.inf
        assert GaussianMeasure(1e-300).pdf(np.full((1, 2), 1.7e308))[0] == 0.0
        p = CauchyProductMeasure(1e-300)
        assert p.pdf(np.zeros((1, 2)))[0] == np.inf
        assert p.logpdf(np.zeros((1, 2)))[0] == pytest.approx(2 * math.log(1 / (math.pi * 1e-300)))
        assert GaussianMeasure(1e-300).pdf(np.zeros((1, 2)))[0] == pytest.approx(
            1 / (2 * math.pi * 2e-300)
        )
