"""Spectral measures: densities integrate to one and match the samplers, sampled moments match
the laws, E[cos(ωᵀz)] = K(z)/K(0) for every kernel and sampling mode, and bad input fails."""

import math

import numpy as np
import pytest
from scipy import integrate, stats

from kernelcourse.bounds import hoeffding_deviation
from kernelcourse.kernels import RBF, Cosine, Laplacian, Matern, Polynomial
from kernelcourse.spectral import (
    CauchyProductMeasure,
    GaussianMeasure,
    StudentTMeasure,
    spectral_measure,
)

KERNELS = [RBF(0.4), Laplacian(0.7), Matern(0.5, 1.2), Matern(1.5, 0.8), Matern(2.5, 1.5)]


@pytest.mark.parametrize("kernel", KERNELS, ids=repr)
def test_density_integrates_to_one_in_1d_and_2d(kernel):
    m = spectral_measure(kernel)
    total, _ = integrate.quad(lambda w: m.pdf(np.array([[w]]))[0], -np.inf, np.inf, limit=200)
    assert total == pytest.approx(1.0, abs=1e-6)
    # 2-D: integrate in polar coordinates for the isotropic ones, per axis for the product
    if m.isotropic:
        radial, _ = integrate.quad(
            lambda r: 2 * np.pi * r * m.pdf(np.array([[r, 0.0]]))[0], 0, np.inf, limit=200
        )
        assert radial == pytest.approx(1.0, abs=1e-6)


@pytest.mark.parametrize("kernel", KERNELS, ids=repr)
def test_1d_fourier_transform_of_density_is_the_kernel(kernel):
    # Bochner in 1-D by quadrature: ∫ cos(ωz) p(ω) dω = K(z)/K(0).
    m = spectral_measure(kernel)
    for z in (0.3, 1.0, 2.5):
        # p is even: 2 ∫_0^∞ cos(ωz) p(ω) dω, with QAWF for the oscillatory tail
        val, _ = integrate.quad(
            lambda w: m.pdf(np.array([[w]]))[0], 0, np.inf, weight="cos", wvar=z
        )
        val *= 2
        assert val == pytest.approx(m.characteristic(np.array([[z]]))[0], abs=1e-6)


# Orthogonal sampling needs a rotation-invariant measure: not the Laplacian's Cauchy product.
CASES = [
    (k, method)
    for k in KERNELS
    for method in ("mc", "qmc", "orthogonal")
    if not (method == "orthogonal" and isinstance(k, Laplacian))
]


@pytest.mark.parametrize(("kernel", "method"), CASES, ids=repr)
def test_sample_average_of_cosines_estimates_kernel(kernel, method):
    m = spectral_measure(kernel)
    n, d = 20_000, 3
    W = m.sample(n, d, method=method, random_state=0)
    assert W.shape == (n, d) and np.isfinite(W).all()
    Z = np.random.default_rng(1).normal(size=(6, d))
    est = np.cos(Z @ W.T).mean(axis=1)
    # cos ∈ [−1, 1]: Hoeffding with range 2 gives a deviation sqrt(2 ln(2/δ)/n).
    assert np.abs(est - m.characteristic(Z)).max() < math.sqrt(2 * math.log(2 / 1e-4) / n)


def test_gaussian_moments():
    m = GaussianMeasure(0.3)
    W = m.sample(50_000, 4, random_state=0)
    cov = np.cov(W.T)
    np.testing.assert_allclose(cov, 0.6 * np.eye(4), atol=0.03)
    assert np.mean(np.sum(W**2, axis=1)) == pytest.approx(m.second_moment(4), rel=0.02)


def test_cauchy_quartiles_and_independence():
    gamma = 0.7
    W = CauchyProductMeasure(gamma).sample(40_000, 2, random_state=0)
    # Cauchy(0, γ) has quartiles ±γ.
    q1, q3 = np.quantile(W[:, 0], [0.25, 0.75])
    assert q1 == pytest.approx(-gamma, abs=0.03) and q3 == pytest.approx(gamma, abs=0.03)
    sign_corr = np.corrcoef(np.sign(W[:, 0]), np.sign(W[:, 1]))[0, 1]
    assert abs(sign_corr) < 0.02
    assert CauchyProductMeasure(gamma).second_moment(2) == math.inf


@pytest.mark.parametrize("nu", [0.5, 1.5, 2.5])
def test_student_t_radial_law(nu):
    ell, d = 1.3, 3
    m = StudentTMeasure(nu, ell)
    W = m.sample(40_000, d, random_state=0)
    # ℓ²‖ω‖²/d follows an F(d, 2ν) law.
    F = ell**2 * np.sum(W**2, axis=1) / d
    assert stats.kstest(F, stats.f(d, 2 * nu).cdf).pvalue > 1e-3
    if nu > 1:
        assert m.second_moment(d) == pytest.approx(d * 2 * nu / (2 * nu - 2) / ell**2)
    else:
        assert m.second_moment(d) == math.inf


def test_orthogonal_rows_are_orthogonal_within_blocks():
    m = GaussianMeasure(0.5)
    W = m.sample(8, 4, method="orthogonal", random_state=0)
    for block in (W[:4], W[4:]):
        G = block @ block.T
        np.testing.assert_allclose(G - np.diag(np.diag(G)), 0, atol=1e-10)


def test_qmc_engines_and_sample_size_prefix():
    m = GaussianMeasure(1.0)
    for engine in ("halton", "sobol"):
        W = m.sample(100, 2, method="qmc", qmc_engine=engine, random_state=3)
        assert W.shape == (100, 2)
        np.testing.assert_array_equal(
            W, m.sample(100, 2, method="qmc", qmc_engine=engine, random_state=3)
        )
    with pytest.raises(ValueError, match="qmc_engine"):
        m.sample(10, 2, method="qmc", qmc_engine="lattice")


def test_scaled_kernel_measure_has_mass():
    m = spectral_measure(2.5 * Matern(1.5, 1.0))
    assert isinstance(m, StudentTMeasure) and m.mass == 2.5
    Z = np.array([[0.5, 0.1]])
    assert m.characteristic(Z)[0] == pytest.approx(Matern(1.5, 1.0)(Z, np.zeros((1, 2)))[0, 0])


def test_names_resolve():
    assert isinstance(spectral_measure("rbf", gamma=0.2), GaussianMeasure)
    assert isinstance(spectral_measure("laplacian", gamma=0.2), CauchyProductMeasure)


@pytest.mark.parametrize("kernel", [Polynomial(2), Cosine(), RBF(1.0) + RBF(2.0)], ids=repr)
def test_unsupported_kernels_raise(kernel):
    with pytest.raises(ValueError, match="no spectral measure"):
        spectral_measure(kernel)


def test_bad_arguments():
    m = GaussianMeasure(1.0)
    with pytest.raises(ValueError, match="method"):
        m.sample(10, 2, method="lhs")
    with pytest.raises(ValueError, match="n must"):
        m.sample(0, 2)
    with pytest.raises(ValueError, match="d must"):
        m.sample(5, -1)
    with pytest.raises(ValueError, match="rotation-invariant"):
        CauchyProductMeasure(1.0).sample(4, 2, method="orthogonal")
    with pytest.raises(TypeError, match="kernel"):
        spectral_measure(3.0)
    with pytest.raises(ValueError, match="gamma"):
        spectral_measure("rbf", gamma=-1.0)
    with pytest.raises(ValueError, match="zero measure"):
        spectral_measure(0.0 * RBF(1.0))
    assert hoeffding_deviation(100, 0.1) > 0
