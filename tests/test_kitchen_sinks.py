"""Random kitchen sinks: the arc-cosine kernel and its features, bumps, callable bases, the
box-constrained ERM, validation and the estimator checks."""

import math

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from kernelcourse.bounds import hoeffding_deviation
from kernelcourse.features import ArcCosine, RandomKitchenSinks, fit_box_constrained
from kernelcourse.kernels import RBF, is_psd


def _points(n=10, d=3, seed=0):
    return np.random.default_rng(seed).normal(size=(n, d))


@pytest.mark.parametrize("order", [0, 1, 2])
def test_arccos_kernel_closed_form_is_psd_with_exact_diagonal(order):
    X = _points(15)
    k = ArcCosine(order)
    K = k(X)
    assert is_psd(K)
    np.testing.assert_allclose(np.diag(K), k.diag(X), rtol=1e-12)
    # Order 0 depends on the angle only: K_0(x, y) = 1 − θ/π.
    if order == 0:
        x, y = np.array([[1.0, 0.0]]), np.array([[0.0, 2.0]])
        assert k(x, y)[0, 0] == pytest.approx(0.5)


@pytest.mark.parametrize("order", [0, 1, 2])
def test_arccos_features_estimate_the_kernel(order):
    X = _points(8) / 1.5
    q = 20_000
    rks = RandomKitchenSinks("arccos", n_components=q, order=order, random_state=0).fit(X)
    K = ArcCosine(order)(X)
    err = np.abs(rks.approximate_kernel(X) - K).max()
    # Unbounded terms: compare with a Hoeffding-like tolerance scaled by the largest K(x, x).
    assert err < 3 * hoeffding_deviation(q, 1e-3) * np.diag(K).max()


def test_relu_is_order_one():
    X = _points()
    a = RandomKitchenSinks("relu", n_components=50, random_state=1).fit_transform(X)
    b = RandomKitchenSinks("arccos", order=1, n_components=50, random_state=1).fit_transform(X)
    np.testing.assert_array_equal(a, b)


def test_cosine_basis_estimates_half_the_gaussian_kernel():
    X = _points(8)
    sigma = 0.8
    rks = RandomKitchenSinks("cosine", n_components=20_000, scale=sigma, random_state=0).fit(X)
    K = 0.5 * RBF(sigma**2 / 2)(X)
    assert np.abs(rks.approximate_kernel(X) - K).max() < hoeffding_deviation(20_000, 1e-3) / 2


def test_bumps_are_indicators_of_balls():
    X = _points(30, 2)
    rks = RandomKitchenSinks("bump", n_components=40, bandwidth=0.7, random_state=0).fit(X)
    Psi = rks.transform(X)
    assert set(np.unique(Psi)) <= {0.0, 1.0}
    dist = np.linalg.norm(X[:, None, :] - rks.weights_[None, :, :], axis=2)
    np.testing.assert_array_equal(Psi, (dist <= 0.7).astype(float))
    lo, hi = X.min(0) - 0.7, X.max(0) + 0.7
    assert np.all(rks.weights_ >= lo) and np.all(rks.weights_ <= hi)


def test_callable_basis_with_sampler():
    def basis(X, W):
        return np.tanh(X @ W.T)

    def sampler(q, X, rng):
        return rng.normal(size=(q, X.shape[1]))

    X = _points()
    rks = RandomKitchenSinks(basis, n_components=7, sampler=sampler, random_state=0).fit(X)
    np.testing.assert_allclose(rks.transform(X), np.tanh(X @ rks.weights_.T))
    with pytest.raises(ValueError, match="sampler"):
        RandomKitchenSinks(basis, n_components=7).fit(X)


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"n_components": 0}, "n_components"),
        ({"basis": "wavelet"}, "basis"),
        ({"scale": 0.0}, "scale"),
        ({"bandwidth": -1.0}, "bandwidth"),
        ({"order": 3}, "order"),
    ],
)
def test_bad_parameters(params, match):
    with pytest.raises(ValueError, match=match):
        RandomKitchenSinks(**params).fit(_points())


def test_bad_arccos_order_and_nan():
    with pytest.raises(ValueError, match="order"):
        ArcCosine(5)
    X = _points()
    X[1, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        RandomKitchenSinks().fit(X)


def test_box_constrained_erm_respects_the_box_and_fits():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 2))
    y = (np.linalg.norm(X, axis=1) > 1.1).astype(float)
    Psi = RandomKitchenSinks(n_components=30, random_state=0).fit_transform(X)
    C = 30.0
    beta, b0 = fit_box_constrained(Psi, y, C)
    assert np.abs(beta).max() <= C / 30 + 1e-9
    assert np.isclose(np.abs(beta).max(), C / 30)  # the constraint is active at this C
    free, f0 = fit_box_constrained(Psi, y, 10 * C)
    acc = lambda b, c: np.mean(((Psi @ b + c) > 0) == (y > 0))  # noqa: E731
    assert acc(free, f0) >= acc(beta, b0) >= 0.7
    # squared loss without constraint is least squares
    Psi = Psi[:, :5]
    beta_ls, c_ls = fit_box_constrained(Psi, y, np.inf, loss="squared")
    A = np.hstack([Psi, np.ones((200, 1))])
    ref = np.linalg.lstsq(A, y, rcond=None)[0]
    mse = lambda theta: np.mean((A @ theta - y) ** 2)  # noqa: E731
    assert mse(np.append(beta_ls, c_ls)) <= mse(ref) + 1e-8


def test_box_constrained_erm_validation():
    Psi = np.ones((4, 2))
    with pytest.raises(ValueError, match="C"):
        fit_box_constrained(Psi, [0, 1, 0, 1], 0.0)
    with pytest.raises(ValueError, match="labels"):
        fit_box_constrained(Psi, [0, 2, 0, 1], 1.0)
    with pytest.raises(ValueError, match="loss"):
        fit_box_constrained(Psi, [0, 1, 0, 1], 1.0, loss="hinge")
    with pytest.raises(ValueError, match="rows"):
        fit_box_constrained(Psi, [0, 1], 1.0)
    assert math.isfinite(fit_box_constrained(Psi, [0, 1, 0, 1], 1.0)[1])


@parametrize_with_checks(
    [
        RandomKitchenSinks(),
        RandomKitchenSinks(basis="bump"),
        RandomKitchenSinks(basis="arccos", order=2),
    ]
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


@pytest.mark.parametrize(
    ("y", "kwargs", "error", "match"),
    [
        (np.array([0.0, 1.0, np.nan, 1.0]), {}, ValueError, "y contains NaN"),
        (np.array(["a", "b", "a", "b"]), {}, TypeError, "y must be numeric"),
        (np.ones(3), {}, ValueError, "y has 3 entries"),
        (np.array([0.0, 1.0, 0.0, 1.0]), {"max_iter": 0}, ValueError, "max_iter"),
        (np.array([0.0, 1.0, 0.0, 1.0]), {"C": float("nan")}, ValueError, "C must be"),
    ],
)
def test_fit_box_constrained_validates_y_and_parameters(y, kwargs, error, match):
    from kernelcourse.features.kitchen_sinks import fit_box_constrained

    args = {"C": 1.0, **kwargs}
    with pytest.raises(error, match=match):
        fit_box_constrained(np.random.default_rng(0).normal(size=(4, 3)), y, **args)


@pytest.mark.parametrize("order", [True, False])
def test_kitchen_sinks_refuse_a_bool_order(order):
    # order=True was order 1 and order=False order 0 (the step function), where ArcCosine
    # refuses bools
    X = np.random.default_rng(0).normal(size=(10, 3))
    with pytest.raises(TypeError, match="order must be an integer"):
        RandomKitchenSinks(basis="arccos", order=order, n_components=5).fit(X)


@pytest.mark.parametrize("order", [np.array([1, 2]), [1], "1", None])
def test_arccos_order_that_is_not_a_number_is_named(order):
    # an array failed in `order in (0, 1, 2)` with numpy's "truth value ... is ambiguous"
    with pytest.raises(ValueError, match="order must be 0, 1 or 2"):
        ArcCosine(order)


def test_arc_cosine_order_0_at_nearly_parallel_rows_keeps_its_digits():
    # J₀ = π − θ with θ = arccos(cos θ): a cosine rounded by ε gave θ ~ √ε, so K₀(x, 2x) was
    # 1 − 5e-9 in K(X, X), while K(X) and diag said 1
    X = np.array([[1.0, 1.0], [2.0, 2.0], [-1.0, -1.0000001], [1.0, 1.0 + 1e-9], [3.0, -1.0]])
    k = ArcCosine(order=0)
    K = k(X, X)
    np.testing.assert_array_equal(K, k(X))
    np.testing.assert_array_equal(np.diag(K), k.diag(X))
    assert K[0, 1] == 1.0
    # the angles from the exact directions, θ = atan(1 + δ) − π/4 (and π minus it)
    np.testing.assert_allclose(K[0, 3], 1 - (math.atan(1 + 1e-9) - math.pi / 4) / math.pi)
    np.testing.assert_allclose(K[0, 2], (math.atan(1.0000001) - math.pi / 4) / math.pi)


@pytest.mark.parametrize("order", [0, 1, 2])
def test_arc_cosine_of_zero_and_tiny_rows(order):
    # K₀(x, 0) was 1 and K₀(0, 0) = 1 (a Gram matrix with a negative eigenvalue, where the
    # features √2 Θ(wᵀx) of a zero row are 0); rows of 1e-200, whose ‖x‖‖y‖ underflows,
    # took cos θ = 1 whatever their angle
    k = ArcCosine(order=order)
    X = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]])
    K = k(X)
    np.testing.assert_array_equal(K[2], 0.0)
    np.testing.assert_array_equal(k.diag(X), np.diag(K))
    assert np.linalg.eigvalsh(K).min() > -1e-15
    if order == 0:  # scale-free: the angle alone
        np.testing.assert_array_equal(k(1e-200 * X), K)
        np.testing.assert_array_equal(k.diag(1e-200 * X), np.diag(K))
