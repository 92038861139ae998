"""Round four of fuzzing the public API with bad and extreme inputs: regression tests for
the defects it found."""

import re
import warnings

import numpy as np
import pytest
from scipy import linalg


@pytest.mark.parametrize(
    "convert",
    [
        lambda A: A.astype(np.int64),
        lambda A: A.tolist(),
        lambda A: A.astype(np.float16),
        lambda A: A.astype(np.longdouble),
    ],
    ids=["int64", "list", "float16", "longdouble"],
)
@pytest.mark.parametrize("overwrite_a", [False, True])
def test_solve_regularized_psd_of_a_converted_indefinite_matrix_falls_back(convert, overwrite_a):
    # A matrix that is not float64 or float32 is factored in a private float64 copy; when
    # Cholesky failed there, the caller got "was overwritten; refit with overwrite_a=False"
    # although it had passed overwrite_a=False (and its matrix was untouched), where the
    # same matrix in float64 warns and returns the least-squares solution
    from kernelcourse.ridge import solve_regularized_psd

    A, b = np.array([[1.0, 2.0], [2.0, 1.0]]), np.array([1.0, 2.0])
    given = convert(A)
    with pytest.warns(linalg.LinAlgWarning, match="not numerically positive definite"):
        expected = solve_regularized_psd(A, b, 0.0)
    with pytest.warns(linalg.LinAlgWarning, match="not numerically positive definite"):
        x = solve_regularized_psd(given, b, 0.0, overwrite_a=overwrite_a)
    np.testing.assert_allclose(x, expected, rtol=1e-12)
    np.testing.assert_array_equal(np.asarray(given, dtype=np.float64), A)  # untouched
    # a positive definite integer matrix is solved as before, silently
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        spd = np.array([[2, 1], [1, 2]])
        np.testing.assert_allclose(
            solve_regularized_psd(spd, b, 0.0), np.linalg.solve(spd, b), atol=1e-12
        )


@pytest.mark.parametrize("d", [np.inf, np.nan, None, "3", 0, -1, 2.0, True, [3]])
@pytest.mark.parametrize("measure", ["gaussian", "student_t"])
def test_qmc_dim_checks_d_by_name(measure, d):
    # qmc_dim returned d = inf, NaN or None as it was (and d + 1 failed inside Python for a
    # string or a list, "can only concatenate str (not "int") to str")
    from kernelcourse.spectral import GaussianMeasure, StudentTMeasure

    p = GaussianMeasure(1.0) if measure == "gaussian" else StudentTMeasure(1.5, 1.0)
    with pytest.raises(ValueError, match=r"^d must be an integer >= 1"):
        p.qmc_dim(d)
    extra = 0 if measure == "gaussian" else 1
    assert p.qmc_dim(3) == p.qmc_dim(np.int64(3)) == p.qmc_dim(np.array(3)) == 3 + extra


@pytest.mark.parametrize("bad", [np.inf, -np.inf, np.nan, 1e308])
@pytest.mark.parametrize("fit_intercept", [False, True])
def test_dask_feature_ridge_refuses_bad_targets_without_numpy_warnings(bad, fit_intercept):
    # an infinite y raised the named error only after numpy's RuntimeWarning "invalid value
    # encountered in matmul" from inside the per-chunk sums
    da = pytest.importorskip("dask.array")
    import dask

    from kernelcourse.distributed import DaskFeatureRidge
    from kernelcourse.features import RandomFourierFeatures

    rng = np.random.default_rng(0)
    X = da.from_array(rng.normal(size=(40, 3)), chunks=(10, 3))
    y = rng.normal(size=40)
    y[3] = bad
    y[4] = bad  # 1e308 twice: a sum that overflows
    model = DaskFeatureRidge(
        RandomFourierFeatures(n_components=10, random_state=0), fit_intercept=fit_intercept
    )
    with dask.config.set(scheduler="synchronous"), warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match=r"^y contains NaN or infinity"):
            model.fit(X, y)


_H = np.array([[4.0, 1.0], [1.0, 3.0]])


@pytest.mark.parametrize(
    "matvec, preconditioner, name, got",
    [
        (lambda P: (_H @ P)[:, 0], None, "matvec", r"shape \(2,\)"),
        (lambda P: (_H @ P)[:1], None, "matvec", r"shape \(1, 1\)"),
        (lambda P: (_H @ P).tolist(), None, "matvec", "list"),
        (lambda P: _H @ P, lambda R: R[:, 0], "preconditioner", r"shape \(2,\)"),
        (lambda P: _H @ P, lambda R: np.vstack([R, R]), "preconditioner", r"shape \(4, 1\)"),
    ],
)
def test_block_cg_names_a_callable_that_returns_another_shape(matvec, preconditioner, name, got):
    # the recursion failed in numpy's einsum ("operands could not be broadcast together with
    # remapped shapes", "einstein sum subscripts string contains too many subscripts"), or
    # with an AttributeError for a list, naming neither callable
    from kernelcourse.solvers import block_cg

    with pytest.raises(ValueError, match=rf"^{name} returned {got} for an input of shape"):
        block_cg(matvec, np.ones((2, 1)), preconditioner=preconditioner)
    # the same callables of the right shape solve the system, as before
    result = block_cg(lambda P: _H @ P, np.ones((2, 1)), preconditioner=lambda R: R / 4.0)
    np.testing.assert_allclose(_H @ result.x, np.ones((2, 1)), atol=1e-6)


def _kernel_estimators():
    from kernelcourse.features import Nystroem, RandomFourierFeatures, RandomKitchenSinks
    from kernelcourse.kernels import RBF
    from kernelcourse.rkhs import GaussianMercer, mercer_expansion

    X = np.random.default_rng(0).normal(size=(20, 3))
    return X, {
        "RandomFourierFeatures": RandomFourierFeatures(n_components=10, random_state=0)
        .fit(X)
        .approximate_kernel,
        "Nystroem": Nystroem(n_components=5, random_state=0).fit(X).approximate_kernel,
        "RandomKitchenSinks": RandomKitchenSinks(n_components=10, random_state=0)
        .fit(X)
        .approximate_kernel,
        "MercerExpansion": mercer_expansion(RBF(1.0), X, 4).kernel_approximation,
        "GaussianMercer": GaussianMercer(1.0, 1.0, 4, 3).kernel_approximation,
    }


@pytest.mark.parametrize(
    "make_y",
    [
        lambda X: np.where(X > 1, np.nan, X),
        lambda X: X[:0],
        lambda X: X[0],
        lambda X: np.full(X.shape, "a"),
    ],
    ids=["nan", "empty", "1-d", "text"],
)
@pytest.mark.parametrize(
    "name",
    [
        "RandomFourierFeatures",
        "Nystroem",
        "RandomKitchenSinks",
        "MercerExpansion",
        "GaussianMercer",
    ],
)
def test_kernel_estimates_name_y_for_a_bad_y(name, make_y):
    # K(X, Y) passes Y through the method that checks X (transform, eigenfunctions), and a
    # bad Y was reported as X: "Input X contains NaN", "X is empty", "Expected 2D array"
    X, estimators = _kernel_estimators()
    estimate = estimators[name]
    with pytest.raises((ValueError, TypeError)) as info:
        estimate(X, make_y(X))
    text = str(info.value)
    assert re.search(r"(?<![\w.])Y(?!\w)", text), text
    assert not re.search(r"(?<![\w.])X(?!\w)", text), text
    # a bad X is still named X, and good inputs give the estimate as before
    with pytest.raises((ValueError, TypeError), match=r"(?<![\w.])X(?!\w)"):
        estimate(make_y(X), X)
    np.testing.assert_allclose(estimate(X, X[:4]), estimate(X)[:, :4], rtol=1e-12, atol=1e-15)


def test_kernel_estimates_name_y_with_the_wrong_feature_count():
    X, estimators = _kernel_estimators()
    for name in ["RandomFourierFeatures", "Nystroem", "RandomKitchenSinks"]:
        with pytest.raises(ValueError, match=r"^Y has 2 features, but"):
            estimators[name](X, X[:, :2])


@pytest.mark.parametrize("make", ["FeatureRidgeClassifier", "NystroemKRRClassifier"])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_ridge_classifiers_refuse_a_class_whose_samples_all_weigh_zero(make, n_classes):
    # the class's ±1 code was regressed on the other classes alone and the class was never
    # predicted, silently; KernelSVC and PrimalSVC refused the same weights by name
    from kernelcourse.features import RandomFourierFeatures
    from kernelcourse.ridge import FeatureRidgeClassifier
    from kernelcourse.scale import NystroemKRRClassifier

    def model():
        if make == "FeatureRidgeClassifier":
            return FeatureRidgeClassifier(RandomFourierFeatures(n_components=10, random_state=0))
        return NystroemKRRClassifier(n_components=5, random_state=0)

    X = np.random.default_rng(0).normal(size=(24, 3))
    y = np.array(["a", "b", "c"][:n_classes] * (24 // n_classes))
    sw = np.where(y == "b", 0.0, 1.0)
    with pytest.raises(ValueError, match=r"^sample_weight leaves class\(es\) \['b'\] with zero"):
        model().fit(X, y, sample_weight=sw)
    # a weight of zero on some samples of each class fits as before
    sw = np.ones(len(y))
    sw[::4] = 0.0
    ref = model().fit(X[sw > 0], y[sw > 0])
    np.testing.assert_allclose(
        model().fit(X, y, sample_weight=sw).decision_function(X),
        ref.decision_function(X),
        rtol=1e-6,
        atol=1e-8,
    )


def test_svm_message_for_a_class_without_weight_is_unchanged():
    from kernelcourse.svm import KernelSVC

    X = np.random.default_rng(0).normal(size=(12, 2))
    y = np.array([0, 1] * 6)
    with pytest.raises(
        ValueError, match=r"^sample_weight and class_weight leave class\(es\) \[1\] with zero"
    ):
        KernelSVC().fit(X, y, sample_weight=np.where(y == 1, 0.0, 1.0))
