"""Hoeffding and Rahimi–Recht bounds: values, inverses, monotonicity and validation."""

import math
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import kernelcourse.bounds as bounds
from kernelcourse.bounds import (
    TheoremRangeWarning,
    features_needed,
    hoeffding_bound,
    hoeffding_deviation,
    hoeffding_features,
    rademacher_bound,
    uniform_bound,
    uniform_deviation,
)


def test_hoeffding_values():
    assert hoeffding_bound(800, 0.1) == pytest.approx(2 * math.exp(-1.0))
    assert hoeffding_deviation(800, 2 * math.exp(-1.0)) == pytest.approx(0.1)


@given(
    a=st.floats(min_value=1e-3, max_value=2.0),
    delta=st.floats(min_value=1e-9, max_value=0.99),
)
def test_hoeffding_inverse_is_the_smallest_d(a, delta):
    D = hoeffding_features(a, delta)
    assert hoeffding_bound(D, a) <= delta * (1 + 1e-12)
    if D > 1:
        assert hoeffding_bound(D - 1, a) > delta


@given(
    eps=st.floats(min_value=1e-2, max_value=1.0),
    delta=st.floats(min_value=1e-6, max_value=0.5),
    d=st.integers(min_value=1, max_value=100),
    diameter=st.floats(min_value=0.1, max_value=100.0),
    sigma=st.floats(min_value=0.1, max_value=100.0),
)
def test_features_needed_inverts_the_uniform_bound(eps, delta, d, diameter, sigma):
    # outside the theorem's range (eps > sigma d_X) both warn and still invert each other
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TheoremRangeWarning)
        D = features_needed(eps, delta, d, diameter, sigma)
        assert uniform_bound(D, eps, d, diameter, sigma) <= delta * (1 + 1e-9)
        if D > 1:
            assert uniform_bound(D - 1, eps, d, diameter, sigma) > delta


def test_uniform_bound_lecture_form_and_growth_in_d():
    D, eps, d, diam, sig = 10_000, 0.2, 5, 2.0, 3.0
    expected = (2**5 * sig * diam / eps) ** 2 * math.exp(-D * eps**2 / (4 * (d + 2)))
    assert uniform_bound(D, eps, d, diam, sig) == pytest.approx(expected)
    Ds = [features_needed(0.1, 0.01, d, 1.0, 1.0) for d in (1, 10, 100)]
    assert Ds[0] < Ds[1] < Ds[2]
    # D grows linearly in d for fixed ε (the (d + 2) factor), up to rounding.
    assert Ds[2] / Ds[1] == pytest.approx(102 / 12, rel=1e-3)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: hoeffding_bound(0, 0.1), "D"),
        (lambda: hoeffding_bound(10, 0.0), "a"),
        (lambda: hoeffding_deviation(10, 1.5), "delta"),
        (lambda: hoeffding_features(0.1, 0.0), "delta"),
        (lambda: uniform_bound(10, 0.1, 2, -1.0, 1.0), "diameter"),
        (lambda: features_needed(0.1, 0.1, 2, 1.0, math.inf), "sigma_p"),
        (lambda: features_needed(0.1, 0.1, 0, 1.0, 1.0), "d"),
        (lambda: hoeffding_bound(np.nan, 0.1), "D"),
    ],
)
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_rademacher_bound_still_there():
    assert rademacher_bound(np.eye(4), 2.0) == pytest.approx(1.0)


def test_uniform_deviation_inverts_the_bound():
    eps = uniform_deviation(5000, 0.05, 3, 2.0, 1.5)
    assert uniform_bound(5000, eps, 3, 2.0, 1.5) == pytest.approx(0.05, rel=1e-6)
    assert features_needed(eps * 1.01, 0.05, 3, 2.0, 1.5) <= 5000


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: bounds.hoeffding_bound(float("inf"), 0.1), "D must be a finite number"),
        (lambda: bounds.uniform_bound(10, 0.1, 1.5, 1.0, 1.0), "d must be an integer"),
        (lambda: bounds.features_needed(0.1, 0.1, float("inf"), 1.0, 1.0), "d must be"),
        (lambda: bounds.rademacher_bound(np.array([[1.0, 2.0], [0.0, 1.0]]), 1.0), "symmetric"),
    ],
)
def test_bounds_validate_like_the_estimators(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_hoeffding_cossin_map_uses_the_range_of_its_terms():
    # cos(ωᵀ(x − y)) ∈ [−1, 1]: exponent 2Da²/2² = Da²/2, against Da²/8 for [−2, 2].
    assert hoeffding_bound(200, 0.1, map="cossin") == pytest.approx(2 * math.exp(-1.0))
    assert hoeffding_deviation(200, 2 * math.exp(-1.0), map="cossin") == pytest.approx(0.1)
    assert hoeffding_features(0.1, 0.05, map="cossin") == math.ceil(2 * math.log(40) / 0.01)
    # Per frequency the cos/sin map needs a quarter of the random-phase features.
    assert hoeffding_deviation(400, 0.05) == pytest.approx(
        2 * hoeffding_deviation(400, 0.05, map="cossin")
    )


@pytest.mark.parametrize("fn", [hoeffding_bound, hoeffding_deviation])
def test_hoeffding_rejects_an_unknown_map(fn):
    with pytest.raises(ValueError, match="map"):
        fn(10, 0.1, map="complex")
    with pytest.raises(ValueError, match="map"):
        hoeffding_features(0.1, 0.1, map="sin")


def test_float32_counts_do_not_warn():
    # comparing np.float32(D) with the float64 maximum cast that maximum to float32, and
    # numpy warned "overflow encountered in cast" (an error under the tests' filter)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert hoeffding_bound(np.float32(100.0), 0.1) == hoeffding_bound(100, 0.1)
        assert uniform_bound(np.float32(100), 0.1, np.float32(2), 1.0, 1.0) == uniform_bound(
            100, 0.1, 2, 1.0, 1.0
        )


@pytest.mark.parametrize("diameter, sigma_p", [(1e-300, 1.0), (1.0, 1e-300)])
def test_uniform_deviation_of_a_tiny_set(diameter, sigma_p):
    # the bisection's midpoint √(lo·hi) underflowed to 0, and the error blamed eps
    # (the eps found exceeds sigma_p d_X = 1e-300: outside the theorem's range, which warns)
    with pytest.warns(TheoremRangeWarning, match="eps = .* exceeds sigma_p"):
        eps = uniform_deviation(10**5, 0.05, 2, diameter, sigma_p)
    assert 0 < eps < 1e-290
    with pytest.warns(TheoremRangeWarning):
        value = uniform_bound(10**5, eps, 2, diameter, sigma_p)
    assert value == pytest.approx(0.05, rel=1e-9)


# The Rahimi-Recht bound is proved for eps <= sigma_p d_X only (uniform_bound's docstring):
# chapter 6's uniform_deviation(D=16) on the unit square (sigma_p d_X = 2 sqrt 2 = 2.83)
# returned 3.12 with no word, and uniform_bound and features_needed took such an eps.
SQUARE = dict(d=2, diameter=math.sqrt(2), sigma_p=2.0)


def test_uniform_deviation_outside_the_theorem_warns():
    with pytest.warns(TheoremRangeWarning) as record:
        eps = uniform_deviation(16, 0.05, **SQUARE)
    assert eps == pytest.approx(3.12, abs=0.005)
    assert len(record) == 1 and record[0].filename == __file__
    message = str(record[0].message)
    assert "eps = 3.12 exceeds sigma_p * diameter = 2.83" in message
    assert "says nothing at D = 16" in message
    # the D from which the theorem's range is reached: the bound at eps = sigma_p d_X is delta
    edge = math.ceil(4 * 4 * math.log(32**2 / 0.05) / 8)
    assert f"from D = {edge}" in message
    with warnings.catch_warnings():
        warnings.simplefilter("error", TheoremRangeWarning)
        assert uniform_deviation(edge, 0.05, **SQUARE) <= 2 * math.sqrt(2)
        uniform_deviation(64, 0.05, **SQUARE)  # vacuous (above 1) but inside the range


@pytest.mark.parametrize("fn", ["uniform_bound", "features_needed"])
def test_an_eps_outside_the_theorem_warns(fn):
    call = {
        "uniform_bound": lambda eps: uniform_bound(10**4, eps, **SQUARE),
        "features_needed": lambda eps: features_needed(eps, 0.05, **SQUARE),
    }[fn]
    with pytest.warns(TheoremRangeWarning, match=r"eps = 3 exceeds sigma_p \* diameter = 2.83"):
        call(3.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", TheoremRangeWarning)
        call(2 * math.sqrt(2))  # the edge belongs to the range
        call(0.1)
