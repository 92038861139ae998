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


@pytest.mark.parametrize(
    "make", ["FeatureRidge", "FeatureRidgeClassifier", "StreamingFeatureRidge"]
)
def test_feature_models_name_a_map_that_gives_no_features(make):
    # a linear Nyström map of all-zero rows keeps no eigenvalue, so Φ(X) has no columns; the
    # error named an X "with 0 features" and the inner RidgeRegression (or the internal
    # matrix ZᵀZ), though X had 3 features and the caller never built a RidgeRegression
    from kernelcourse.features import Nystroem
    from kernelcourse.ridge import FeatureRidge, FeatureRidgeClassifier
    from kernelcourse.scale import StreamingFeatureRidge

    model = {
        "FeatureRidge": FeatureRidge,
        "FeatureRidgeClassifier": FeatureRidgeClassifier,
        "StreamingFeatureRidge": StreamingFeatureRidge,
    }[make](Nystroem(kernel="linear", n_components=4, random_state=0))
    X, y = np.zeros((6, 3)), np.array([0, 1, 0, 1, 0, 1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the map's own rank-deficiency warning
        with pytest.raises(ValueError, match=r"^features: the fitted Nystroem maps X to no feat"):
            model.fit(X, y)


def test_dask_feature_ridge_names_a_map_that_gives_no_features():
    # the same map on Dask chunks failed naming the internal matrix Z_cᵀZ_c
    da = pytest.importorskip("dask.array")
    from kernelcourse.distributed import DaskFeatureRidge
    from kernelcourse.features import Nystroem

    X = da.zeros((6, 3), chunks=3)
    y = da.from_array(np.arange(6.0), chunks=3)
    model = DaskFeatureRidge(Nystroem(kernel="linear", n_components=4, random_state=0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match=r"^features: the fitted Nystroem maps X to no feat"):
            model.fit(X, y)


@pytest.mark.parametrize(
    ("value", "digits", "text"),
    [
        (1e23, 3, "100,000,000,000,000,000,000,000"),
        (-1.234e25, 2, "-12,000,000,000,000,000,000,000,000"),
        (6.561823337480043e20, 6, "656,182,000,000,000,000,000"),
        (1640.3, 3, "1,640"),
        (0.008372, 3, "0.00837"),
    ],
)
def test_fmt_plain_prints_its_rounded_digits_for_large_values(value, digits, text):
    # the rounded value went through a float, whose decimal expansion above 2**53 is not the
    # rounded one: 1e23 printed as "99,999,999,999,999,991,611,392"
    from kernelcourse.book.report import fmt_duration, fmt_plain

    assert fmt_plain(value, digits) == text
    assert fmt_duration(1e30) == "12,000,000,000,000,000,000,000,000 d"


def test_fmt_time_names_seconds_that_are_not_a_time():
    # a string or None failed inside str.format ("Unknown format code 'f'"), and NaN,
    # negative, complex and boolean values printed as times ("nan s", "1.000+1.000j s")
    from kernelcourse.book.report import fmt_time

    assert fmt_time(np.float32(0.5)) == "0.500 s"
    assert fmt_time(2) == "2.000 s"
    assert fmt_time(-0.0) == "0.000 s"
    for bad in ["a", None, [1.0], np.array([1.0, 2.0]), 1 + 1j, True]:
        with pytest.raises(TypeError, match="^seconds must be a real number"):
            fmt_time(bad)
    for bad in [np.nan, np.inf, -1.0]:
        with pytest.raises(ValueError, match="^seconds must be finite and >= 0"):
            fmt_time(bad)


@pytest.mark.parametrize(
    ("x", "y", "match"),
    [
        ([1.0, np.nan, 3.0], [1.0, 2.0, 3.0], "x and y must be finite"),
        ([1.0, 2.0, 3.0], [1.0, np.inf, 3.0], "x and y must be finite"),
        ([2.0, 2.0, 2.0], [1.0, 2.0, 3.0], "x must hold at least two distinct values"),
    ],
)
def test_fit_loglog_slope_names_inputs_it_cannot_fit(x, y, match):
    # NaN, inf or one repeated x reached np.polyfit, which raised numpy's LinAlgError
    # "SVD did not converge in Linear Least Squares"
    from kernelcourse.book.plotting import fit_loglog_slope

    with pytest.raises(ValueError, match=f"^{match}"):
        fit_loglog_slope(x, y)
    assert fit_loglog_slope([1, 2, 4], [1, 4, 16]) == pytest.approx(2.0)


@pytest.mark.parametrize("digits", [0, -1, np.nan, 2.5, "a", None, True])
def test_fmt_sig_names_bad_digits(digits):
    # digits reached str.format unchecked: "Format specifier missing precision"
    from kernelcourse.book.report import fmt_sig

    with pytest.raises(ValueError, match="^digits must be a positive integer"):
        fmt_sig(1.2345, digits=digits)
    assert fmt_sig(1.2345, digits=np.int64(2)) == "1.2"


@pytest.mark.parametrize("value", [None, 1 + 2j, [1.0], object()])
def test_table_names_the_cell_it_cannot_print(value):
    # a None cell failed inside float() with "float() argument must be ... not 'NoneType'",
    # naming neither the row nor the column
    from decimal import Decimal

    from kernelcourse.book.report import Table, fmt_sig

    with pytest.raises(TypeError, match=r"^row 1, column 'err': a cell must be text"):
        Table([["a", 0.5], ["b", value]], ["name", "err"])
    with pytest.raises(TypeError, match="^value must be text, a boolean or a real number"):
        fmt_sig(value)
    table = Table(
        [["a", 0.5], ["b", "–"], ["c", Decimal("0.25")], ["d", np.True_], ["e", np.float32(2)]],
        ["name", "err"],
    )
    assert [row[1] for row in table.cells] == ["0.5", "–", "0.25", "yes", "2"]


@pytest.mark.parametrize("name", ["StreamingFeatureRidge", "FeatureSGDClassifier"])
def test_streaming_models_read_numbers_given_as_text(name):
    # they refused X = [["1.0", "2.0"], ...] ("dtype='numeric' is not compatible with arrays
    # of bytes/strings") where FeatureRidge, KernelRidge and scikit-learn's Ridge and
    # SGDClassifier read it as numbers
    from kernelcourse.features import RandomFourierFeatures
    from kernelcourse.scale import StreamingFeatureRidge
    from kernelcourse.sgd import FeatureSGDClassifier

    X = np.array([["1.0", "2.0"], ["3.0", "4.0"], ["0.5", "1.5"], ["2", "1"]])
    y = np.array([0, 1, 0, 1])

    def model():
        features = RandomFourierFeatures(n_components=4, random_state=0)
        if name == "StreamingFeatureRidge":
            return StreamingFeatureRidge(features)
        return FeatureSGDClassifier(features, random_state=0)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a small problem: convergence is not the point
        text = model().fit(X, y).predict(X)
        numbers = model().fit(X.astype(float), y).predict(X.astype(float))
    np.testing.assert_array_equal(text, numbers)
