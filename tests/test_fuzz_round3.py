"""Round three of fuzzing the public API with bad and extreme inputs: regression tests for
the defects it found."""

import warnings

import numpy as np
import pytest

from kernelcourse.features import RandomBinningFeatures


@pytest.mark.parametrize("gamma", [1e-310, 5e-324, "per-feature"])
def test_binning_with_a_gamma_whose_pitches_overflow_puts_every_point_in_one_cell(gamma):
    # 1/γ (or a Gamma(2, 1/γ) draw) overflowed to inf, the shifts u = U·δ became inf and
    # the cells NaN, and fit blamed pitches "tiny against |x|"; the kernel e^{-γ|Δ|} is 1
    # to the last bit, so every grid must put all points in one cell
    X = np.random.default_rng(0).normal(size=(6, 3))
    if gamma == "per-feature":
        gamma = np.array([1e-320, 1e-315, 5e-324])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rb = RandomBinningFeatures(gamma=gamma, n_grids=20, random_state=0)
        Z = rb.fit_transform(X)
        Z_new = rb.transform(-1e3 * X)
    assert np.all(np.isfinite(rb.pitches_)) and np.all(np.isfinite(rb.shifts_))
    assert Z.shape == (6, 20)
    np.testing.assert_allclose((Z @ Z.T).toarray(), 1.0)
    np.testing.assert_allclose((Z_new @ Z.T).toarray(), 1.0)
