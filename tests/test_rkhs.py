import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from kernelcourse.kernels import RBF, Laplacian, Linear, Polynomial
from kernelcourse.rkhs import (
    RKHSFunction,
    gaussian_mercer_closed_form,
    inner,
    kernel_section,
    mercer_expansion,
    norm,
)

KERNELS = [RBF(0.7), Laplacian(0.5), Polynomial(2, gamma=0.5, coef0=1.0), Linear()]
finite = st.floats(-3, 3, allow_nan=False, allow_infinity=False)


def points(n, d=2):
    return arrays(np.float64, (n, d), elements=finite)


def coefs(n):
    return arrays(np.float64, (n,), elements=finite)


def random_function(kernel, n, d, seed):
    rng = np.random.default_rng(seed)
    return RKHSFunction(kernel, rng.normal(size=(n, d)), rng.normal(size=n))


# -- the four steps -------------------------------------------------------------------------------
def test_evaluation_is_the_kernel_expansion():
    k = RBF(0.5)
    C = np.array([[0.0, 0.0], [1.0, 0.0]])
    f = RKHSFunction(k, C, [2.0, -1.0])
    x = np.array([[0.5, 0.5]])
    expected = 2 * np.exp(-0.5 * 0.5) - np.exp(-0.5 * 0.5)
    assert f(x) == pytest.approx([expected])


def test_kernel_section_inner_products_are_kernel_values():
    k = RBF(0.3)
    x, z = np.array([0.1, 0.2]), np.array([-1.0, 2.0])
    assert inner(kernel_section(k, x), kernel_section(k, z)) == pytest.approx(
        float(k(x[None], z[None])[0, 0])
    )
    assert norm(kernel_section(k, x)) == pytest.approx(1.0)


@pytest.mark.parametrize("kernel", KERNELS, ids=repr)
@settings(max_examples=25)
@given(C=points(5), a=coefs(5), x=points(1))
def test_reproducing_property(kernel, C, a, x):
    f = RKHSFunction(kernel, C, a)
    lhs = inner(f, kernel_section(kernel, x[0]))
    assert lhs == pytest.approx(float(f(x)[0]), rel=1e-9, abs=1e-9)


@pytest.mark.parametrize("kernel", KERNELS, ids=repr)
@settings(max_examples=25)
@given(C1=points(4), a=coefs(4), C2=points(3), b=coefs(3), C3=points(2), c=coefs(2), s=finite)
def test_inner_product_is_bilinear_and_symmetric(kernel, C1, a, C2, b, C3, c, s):
    f, g, h = (RKHSFunction(kernel, C, v) for C, v in ((C1, a), (C2, b), (C3, c)))
    scale = 1 + abs(inner(f, h)) + abs(inner(g, h))
    assert inner(f, g) == pytest.approx(inner(g, f), rel=1e-9, abs=1e-9 * scale)
    lhs = inner(s * f + g, h)
    rhs = s * inner(f, h) + inner(g, h)
    assert lhs == pytest.approx(rhs, rel=1e-8, abs=1e-8 * scale * (1 + abs(s)))


@pytest.mark.parametrize("kernel", KERNELS, ids=repr)
@settings(max_examples=25)
@given(C=points(6), a=coefs(6))
def test_norm_is_nonnegative_and_homogeneous(kernel, C, a):
    f = RKHSFunction(kernel, C, a)
    assert norm(f) >= 0
    assert norm(-2.0 * f) == pytest.approx(2.0 * norm(f), rel=1e-7, abs=1e-6)


@settings(max_examples=25)
@given(C=points(5), a=coefs(5), X=points(4))
def test_sum_and_scaling_act_pointwise(C, a, X):
    k = RBF(0.4)
    f = RKHSFunction(k, C, a)
    g = RKHSFunction(k, C[::-1] + 1.0, a[::-1])
    np.testing.assert_allclose((f + g)(X), f(X) + g(X), atol=1e-10)
    np.testing.assert_allclose((3.0 * f - g)(X), 3.0 * f(X) - g(X), atol=1e-10)
    np.testing.assert_allclose((f / 2)(X), f(X) / 2, atol=1e-10)


def test_cauchy_schwarz_and_evaluation_bound():
    # |f(x)| = |<f, K_x>| <= ||f|| sqrt(K(x, x)): evaluation is continuous in the RKHS norm.
    k = RBF(1.0)
    f = random_function(k, 20, 3, 0)
    X = np.random.default_rng(1).normal(size=(50, 3))
    assert np.all(np.abs(f(X)) <= norm(f) * np.sqrt(k.diag(X)) + 1e-12)


def test_multi_output_coefficients():
    k = RBF(0.5)
    rng = np.random.default_rng(0)
    C, A = rng.normal(size=(6, 2)), rng.normal(size=(6, 3))
    f = RKHSFunction(k, C, A)
    X = rng.normal(size=(4, 2))
    assert f(X).shape == (4, 3)
    norms = norm(f)
    for j in range(3):
        assert norms[j] == pytest.approx(norm(RKHSFunction(k, C, A[:, j])))
    assert inner(f, f).shape == (3, 3)


def test_cauchy_sequence_converges():
    # Partial sums of sum_j 2^-j K_{x_j}: ||f_n - f_m|| shrinks geometrically.
    k = RBF(1.0)
    x = np.linspace(-1, 1, 30)[:, None]
    partial = [RKHSFunction(k, x[:n], 0.5 ** np.arange(n)) for n in range(1, 31)]
    gaps = [norm(partial[n] - partial[n - 1]) for n in range(1, 30)]
    assert gaps[-1] < 1e-8 and np.all(np.diff(gaps) < 0)


# -- errors ----------------------------------------------------------------------------------------
def test_bad_input_errors():
    k = RBF(1.0)
    with pytest.raises(ValueError, match="one coefficient"):
        RKHSFunction(k, np.zeros((3, 2)), np.ones(2))
    with pytest.raises(ValueError, match="NaN"):
        RKHSFunction(k, np.array([[np.nan, 0.0]]), [1.0])
    with pytest.raises(ValueError, match="coef contains NaN"):
        RKHSFunction(k, np.zeros((1, 2)), [np.nan])
    with pytest.raises(TypeError, match="kernel must be"):
        RKHSFunction("rbf", np.zeros((1, 2)), [1.0])
    with pytest.raises(ValueError, match="single point"):
        kernel_section(k, np.zeros((2, 2)))
    f = RKHSFunction(k, np.zeros((1, 2)), [1.0])
    with pytest.raises(ValueError, match="different RKHSs"):
        inner(f, RKHSFunction(RBF(2.0), np.zeros((1, 2)), [1.0]))
    with pytest.raises(ValueError, match="features"):
        f(np.zeros((3, 3)))
    with pytest.raises(ValueError, match="different RKHSs"):
        _ = f + RKHSFunction(Laplacian(1.0), np.zeros((1, 2)), [1.0])
    with pytest.raises(TypeError):
        _ = f * "2"


def test_scalars_as_0d_arrays_scale_like_floats():
    # np.array(2.0) * f raised TypeError and f * np.array(2.0) was a 0-d object array
    f = RKHSFunction(RBF(1.0), [[0.0], [1.0]], [1.0, -0.5])
    X = np.array([[0.2], [0.7]])
    for c in (np.array(2.0), np.array(2), np.float64(2.0), np.float32(2.0), np.int64(2)):
        for g in (c * f, f * c, f / np.array(0.5)):
            assert isinstance(g, RKHSFunction)
            np.testing.assert_allclose(g(X), 2.0 * f(X))
    for bad in (np.array([2.0]), np.array(True), np.array("2")):
        with pytest.raises(TypeError):
            _ = bad * f
        with pytest.raises(TypeError):
            _ = f * bad
    with pytest.raises(ValueError, match="scalar must be finite"):
        _ = np.array(np.inf) * f


# -- Mercer ----------------------------------------------------------------------------------------
def gaussian_sampler(sigma):
    return lambda n, rng: rng.normal(0.0, sigma, size=(n, 1))


def test_nystrom_matches_closed_form_gaussian():
    gamma, sigma = 0.5, 1.0
    est = mercer_expansion(RBF(gamma), gaussian_sampler(sigma), 6, n_samples=1500, random_state=0)
    exact = gaussian_mercer_closed_form(gamma, sigma, 6)
    np.testing.assert_allclose(est.eigenvalues[:4], exact.eigenvalues[:4], rtol=0.1)
    x = np.linspace(-1.5, 1.5, 21)[:, None]
    A, B = est.eigenfunctions(x)[:, :3], exact.eigenfunctions(x)[:, :3]
    A *= np.sign((A * B).sum(axis=0))  # eigenfunctions are defined up to sign
    assert np.abs(A - B).max() < 0.15


def test_closed_form_is_orthonormal_and_sums_to_kernel():
    gamma, sigma = 0.8, 0.7
    cf = gaussian_mercer_closed_form(gamma, sigma, 40)
    # Gauss-Hermite quadrature for N(0, sigma^2): orthonormality in L2(mu).
    u, w = np.polynomial.hermite_e.hermegauss(120)
    P = cf.eigenfunctions(sigma * u[:, None])[:, :10]
    G = (P * (w / w.sum())[:, None]).T @ P
    np.testing.assert_allclose(G, np.eye(10), atol=1e-8)
    X = np.linspace(-2, 2, 15)[:, None]
    np.testing.assert_allclose(cf.kernel_approximation(X), RBF(gamma)(X), atol=1e-8)


def test_closed_form_multi_dimensional():
    cf = gaussian_mercer_closed_form(0.5, 1.0, 60, n_features=2)
    assert np.all(np.diff(cf.eigenvalues) <= 0)
    X = np.random.default_rng(0).normal(size=(10, 2)) * 0.5
    np.testing.assert_allclose(cf.kernel_approximation(X), RBF(0.5)(X), atol=5e-3)


def test_truncation_error_decreases():
    k = RBF(0.5)
    cf = gaussian_mercer_closed_form(0.5, 1.0, 30)
    est = mercer_expansion(k, gaussian_sampler(1.0), 15, n_samples=600, random_state=1)
    grid = np.linspace(-2, 2, 41)[:, None]
    K = k(grid)
    for expansion in (cf, est):
        errors = [
            np.abs(K - expansion.kernel_approximation(grid, n_terms=m)).max() for m in (1, 3, 6, 12)
        ]
        assert np.all(np.diff(errors) < 0), errors


def test_nystrom_on_sample_is_exact_and_orthonormal():
    rng = np.random.default_rng(0)
    U = rng.uniform(-1, 1, size=(40, 2))
    k = Laplacian(1.0)
    est = mercer_expansion(k, U, 40)
    P = est.eigenfunctions(U)
    np.testing.assert_allclose(P.T @ P / 40, np.eye(40), atol=1e-6)
    np.testing.assert_allclose(est.kernel_approximation(U), k(U), atol=1e-8)


def test_quadrature_weights():
    # Gauss-Hermite nodes and weights give the eigenvalues far more accurately than a sample.
    u, w = np.polynomial.hermite_e.hermegauss(60)
    est = mercer_expansion(RBF(0.5), u[:, None], 5, weights=w)
    exact = gaussian_mercer_closed_form(0.5, 1.0, 5)
    np.testing.assert_allclose(est.eigenvalues, exact.eigenvalues, rtol=1e-8)


def test_mercer_bad_input():
    with pytest.raises(ValueError, match="n_terms"):
        mercer_expansion(RBF(1.0), np.zeros((3, 1)), 5)
    with pytest.raises(ValueError, match="weights"):
        mercer_expansion(RBF(1.0), np.zeros((3, 1)), 2, weights=[1.0, -1.0, 1.0])
    with pytest.raises(ValueError, match="NaN"):
        mercer_expansion(RBF(1.0), np.array([[np.nan], [0.0]]), 1)
    with pytest.raises(ValueError, match="gamma"):
        gaussian_mercer_closed_form(-1.0, 1.0, 3)
    with pytest.warns(RuntimeWarning, match="round-off"):
        mercer_expansion(Linear(), np.random.default_rng(0).normal(size=(10, 2)), 5)


def test_mercer_expansion_names_a_bad_random_state():
    from kernelcourse.kernels import RBF
    from kernelcourse.rkhs import mercer_expansion

    with pytest.raises(TypeError, match="random_state"):
        mercer_expansion(RBF(), lambda n, rng: rng.normal(size=(n, 1)), 2, random_state="x")


def test_sum_on_the_same_centers_adds_coefficients():
    # f - f is exactly the zero function (the quadratic form over both sets of centers
    # cancelled to a norm near 1e-8); a sum whose coefficients would overflow keeps both sets.
    rng = np.random.default_rng(0)
    X, a = rng.normal(size=(50, 3)), rng.normal(size=50)
    f = RKHSFunction(RBF(gamma=0.5), X, a)
    assert (f - f).norm() == 0.0
    assert (f - f).n_centers == 50
    g = RKHSFunction(RBF(gamma=0.5), X.copy(), a * (1 + 1e-9))
    np.testing.assert_allclose((f - g).norm(), 1e-9 * f.norm(), rtol=1e-4)
    h = RKHSFunction(RBF(gamma=0.5), X[:1], np.array([1e308]))
    assert (h + h).n_centers == 2
    np.testing.assert_allclose(((h + h) / 4).norm(), 0.5e308)
