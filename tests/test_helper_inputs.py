"""The public helpers refuse bad input with an error that names the argument."""

import time
import warnings

import numpy as np
import pytest

from kernelcourse import kernels as kn
from kernelcourse.features import RandomKitchenSinks
from kernelcourse.features.nystroem import ridge_leverage_scores
from kernelcourse.ridge import solve_regularized_psd
from kernelcourse.rkhs import gaussian_mercer_closed_form, mercer_expansion
from kernelcourse.scale import exact_krr_cost
from kernelcourse.spectral import spectral_measure
from kernelcourse.strings import planted_motif_sequences
from kernelcourse.svm import KernelSVC, smo_solve


@pytest.mark.parametrize("kernel", [kn.RBF(0.5), kn.Laplacian(1.0), kn.Matern(nu=1.5)])
@pytest.mark.parametrize(
    ("omega", "error", "match"),
    [
        (np.array([[0.0, np.nan]]), ValueError, "omega contains NaN or infinity"),
        (np.array([[0.0, np.inf]]), ValueError, "omega contains NaN or infinity"),
        (np.array([[1.0 + 2.0j, 0.0]]), TypeError, "omega must be real-valued"),
        ([[0.0, 1.0], [2.0]], ValueError, "omega is ragged"),
        (np.array([["a", "b"]]), TypeError, "omega must be a numeric array"),
    ],
)
def test_spectral_pdf_refuses_bad_omega(kernel, omega, error, match):
    with pytest.raises(error, match=match):
        spectral_measure(kernel).pdf(omega)


def test_spectral_characteristic_refuses_complex_z():
    mu = spectral_measure(kn.RBF(0.5))
    with pytest.raises(TypeError, match="Z must be real-valued"):
        mu.characteristic(np.array([[1.0 + 1.0j]]))
    with pytest.raises(ValueError, match="Z contains NaN"):
        mu.characteristic(np.array([[np.nan]]))
    np.testing.assert_allclose(mu.characteristic([[0.0]]), [1.0])


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"n_per_class": -1}, "n_per_class"),
        ({"n_per_class": 2.5}, "n_per_class"),
        ({"n_copies": -1}, "n_copies"),
        ({"mutation_rate": 2}, "mutation_rate"),
        ({"mutation_rate": float("nan")}, "mutation_rate"),
        ({"length": 0}, "length"),
        ({"motifs": "ACGT"}, "motifs"),
        ({"motifs": 5}, "motifs"),
        ({"motifs": None}, "motifs"),
        ({"length": 10, "n_copies": 10**12}, "n_copies"),
    ],
)
def test_planted_motif_sequences_refuses_bad_arguments(kwargs, match):
    args = {"n_per_class": 3, **kwargs}
    with pytest.raises((ValueError, TypeError), match=match):
        planted_motif_sequences(random_state=0, **args)


def test_planted_motif_sequences_takes_as_many_copies_as_letters():
    seqs, _ = planted_motif_sequences(2, length=10, n_copies=10, random_state=0)
    assert [len(s) for s in seqs] == [10] * 4


@pytest.mark.parametrize("n", [-1, float("nan"), float("inf"), [10, -1], "ten"])
def test_exact_krr_cost_refuses_bad_n(n):
    with pytest.raises((ValueError, TypeError), match="n must"):
        exact_krr_cost(n)


def test_exact_krr_cost_of_sizes_beyond_the_float_range():
    # 10**200 points, a Python int beyond int64, was "not a number of points"; 1e300 gave
    # numpy's bare "overflow encountered in square"; the cost is inf, said in the docstring
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert exact_krr_cost(10**200) == (np.inf, np.inf)
        assert exact_krr_cost(1e300) == (np.inf, np.inf)
        memory, seconds = exact_krr_cost([10**200, 10**6])
        np.testing.assert_array_equal(memory, [np.inf, 8e12])
    with pytest.raises(ValueError, match="n must be finite"):
        exact_krr_cost(10**400)


def test_exact_krr_cost_on_good_n():
    memory, seconds = exact_krr_cost(10**6)
    assert memory == 8e12 and seconds == pytest.approx(1e18 / 3 / 1e10)
    with pytest.raises(ValueError, match="itemsize"):
        exact_krr_cost(10, itemsize=0)


@pytest.mark.parametrize(
    ("gram", "error", "match"),
    [
        (np.ones((3, 4)), ValueError, "gram must be a square"),
        (np.array([[1.0, 0.5, 0], [0.0, 1.0, 0], [0, 0, 1.0]]), ValueError, "not symmetric"),
        (np.array([[1.0, np.nan], [np.nan, 1.0]]), ValueError, "gram contains NaN"),
        (np.eye(2) * (1 + 1j), TypeError, "gram must be a real"),
    ],
)
def test_smo_solve_refuses_bad_gram(gram, error, match):
    y = np.where(np.arange(len(gram)) % 2 == 0, 1.0, -1.0)
    with pytest.raises(error, match=match):
        smo_solve(gram, y, 1.0)


def test_solve_regularized_psd_refuses_complex_matrix():
    with pytest.raises(TypeError, match=r"A \(K\) must be a real"):
        solve_regularized_psd(np.eye(2) * (1 + 1j), np.ones(2), 0.1)
    with pytest.raises(TypeError, match=r"A \(K\) must be a real"):
        solve_regularized_psd([[1 + 1j, 0], [0, 1]], np.ones(2), 0.1)


def test_ridge_leverage_scores_checks_diag():
    Z = np.random.default_rng(0).normal(size=(5, 2))
    with pytest.raises(ValueError, match="diag must be a 1-D array"):
        ridge_leverage_scores(Z, np.ones((5, 5)), 0.1)
    with pytest.raises(ValueError, match="diag must be a 1-D array"):
        ridge_leverage_scores(Z, np.ones((1, 5)), 0.1)
    with pytest.raises(ValueError, match="diag holds negative"):
        ridge_leverage_scores(Z, -np.ones(5), 0.1)
    assert ridge_leverage_scores(Z, np.full((5, 1), 10.0), 0.1).shape == (5,)


def test_mercer_kernel_approximation_needs_an_integer_n_terms():
    closed = gaussian_mercer_closed_form(1.0, 1.0, 5)
    with pytest.raises(TypeError, match="n_terms must be an integer, got 2.7"):
        closed.kernel_approximation(np.zeros((2, 1)), n_terms=2.7)
    nodes = np.linspace(-2, 2, 40)[:, None]
    numeric = mercer_expansion(kn.RBF(1.0), nodes, 4)
    with pytest.raises(TypeError, match="n_terms must be an integer"):
        numeric.kernel_approximation(nodes[:3], n_terms=2.7)
    assert closed.kernel_approximation(np.zeros((2, 1)), n_terms=3).shape == (2, 2)


def test_gaussian_mercer_refuses_a_huge_n_terms_at_once():
    start = time.perf_counter()
    with pytest.raises(ValueError, match="n_terms=1000000000 is more than"):
        gaussian_mercer_closed_form(1.0, 1.0, 10**9)
    assert time.perf_counter() - start < 1.0


def test_gaussian_mercer_names_an_n_features_too_large_for_memory():
    # the multi-index table of 3 × 2**62 degrees was a MemoryError with an empty message
    from kernelcourse.rkhs import GaussianMercer

    with pytest.raises(MemoryError, match="n_features=4611686018427387904.*lower n_features"):
        GaussianMercer(1.0, 1.0, 3, n_features=2**62)
    assert GaussianMercer(1.0, 1.0, 3, n_features=1000).multi_indices.shape == (3, 1000)


def test_kitchen_sinks_basis_returning_nan_is_named_at_fit():
    def ragged_log(X, W):
        return np.log(X @ W.T)  # NaN for negative projections

    def sampler(q, X, rng):
        return rng.normal(size=(q, X.shape[1]))

    X = np.random.default_rng(0).normal(size=(20, 2))
    rks = RandomKitchenSinks(basis=ragged_log, sampler=sampler, n_components=5, random_state=0)
    with pytest.raises(ValueError, match="basis ragged_log returned NaN or infinity"):
        with np.errstate(invalid="ignore"):
            rks.fit(X)


def test_kernel_svc_checks_the_gram_before_solving():
    # X of order 1e307 and a linear kernel: the Gram overflows; say so at once, not blame C
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(40, 2)) * 1e307, np.where(rng.normal(size=40) > 0, 1, -1)
    start = time.perf_counter()
    with pytest.raises(ValueError, match="Linear.*overflows"):
        KernelSVC(kernel="linear").fit(X, y)
    assert time.perf_counter() - start < 5.0


def test_feature_ridge_refuses_a_system_larger_than_memory(monkeypatch):
    from kernelcourse import _validation
    from kernelcourse.features import RandomFourierFeatures
    from kernelcourse.ridge import FeatureRidge

    # pretend the machine has 64 MiB: 2000 samples × 4000 features need about 150 MiB
    monkeypatch.setattr(_validation, "physical_memory", lambda: 64 * 2**20)
    X = np.random.default_rng(0).normal(size=(2000, 3))
    model = FeatureRidge(RandomFourierFeatures(n_components=4000, random_state=0))
    start = time.perf_counter()
    with pytest.raises(MemoryError, match="n_components"):
        model.fit(X, X[:, 0])
    assert time.perf_counter() - start < 5.0
    # what fits is fitted
    FeatureRidge(RandomFourierFeatures(n_components=50, random_state=0)).fit(X, X[:, 0])


def _estimators():
    from kernelcourse.features import Nystroem, RandomFourierFeatures
    from kernelcourse.ridge import FeatureRidge, KernelRidge
    from kernelcourse.scale import NystroemKRR
    from kernelcourse.svm import PrimalSVC

    return {
        "RandomFourierFeatures": RandomFourierFeatures(n_components=8, random_state=0),
        "Nystroem": Nystroem(n_components=5, random_state=0),
        "KernelRidge": KernelRidge(),
        "FeatureRidge": FeatureRidge(),
        "NystroemKRR": NystroemKRR(n_components=5, random_state=0),
        "KernelSVC": KernelSVC(),
        "PrimalSVC": PrimalSVC(random_state=0),
    }


_GOOD_X = np.random.default_rng(0).normal(size=(20, 3))
_BAD_X = {
    "ragged": [[1.0, 2.0, 3.0], [1.0, 2.0]] + [[0.0, 0.0, 0.0]] * 18,
    "strings": np.array([["a", "b", "c"]] * 20),
    "complex": _GOOD_X * (1 + 1j),
    "3-D": _GOOD_X[:, :, None],
    "objects": np.array([[{}] * 3] * 20, dtype=object),
}


@pytest.mark.parametrize("bad", list(_BAD_X))
@pytest.mark.parametrize("name", list(_estimators()))
def test_estimator_errors_name_x(name, bad):
    est = _estimators()[name]
    y = np.arange(20) % 2 if "SVC" in name else np.linspace(0, 1, 20)
    with pytest.raises((ValueError, TypeError), match=r"(?<!\w)X(?!\w)"):
        est.fit(_BAD_X[bad], y)
    est.fit(_GOOD_X, y)
    method = getattr(est, "predict", None) or est.transform
    with pytest.raises((ValueError, TypeError), match=r"(?<!\w)X(?!\w)"):
        method(_BAD_X[bad])


@pytest.mark.parametrize("name", ["KernelRidge", "FeatureRidge", "NystroemKRR"])
@pytest.mark.parametrize(
    "y",
    [np.array(["a"] * 20), [[1.0], [1.0, 2.0]] + [[0.0]] * 18, np.ones(20) * (1 + 1j)],
    ids=["strings", "ragged", "complex"],
)
def test_regressor_errors_name_y(name, y):
    with pytest.raises((ValueError, TypeError), match=r"(?<!\w)y(?!\w)"):
        _estimators()[name].fit(_GOOD_X, y)


def test_kernel_call_names_a_ragged_x():
    with pytest.raises(ValueError, match="X is ragged"):
        kn.RBF()([[1.0, 2.0], [1.0]])


def test_leverage_sampling_refuses_a_pool_that_would_take_hours():
    from kernelcourse.features import RandomFourierFeatures

    X = np.random.default_rng(0).normal(size=(500, 3))
    rff = RandomFourierFeatures(sampling="leverage", n_components=10**6, random_state=0)
    start = time.perf_counter()
    with pytest.raises(ValueError, match="pool_factor or n_components"):
        rff.fit(X)
    assert time.perf_counter() - start < 5.0


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda X: RandomKitchenSinks(n_components=10**400).fit(X), "lower n_components"),
        (lambda X: _rff(n_components=10**400).fit(X), "lower n_components"),
        (lambda X: _binning(n_grids=10**400).fit(X), "lower n_grids"),
        (lambda X: spectral_measure(kn.RBF(1.0)).sample(10**400, 2), "lower n"),
        (lambda X: planted_motif_sequences(10**400), "lower n_per_class"),
        (lambda X: kn.Polynomial(degree=10**5).feature_map(np.ones((2, 100))), "lower the degree"),
    ],
    ids=["kitchen_sinks", "fourier", "binning", "spectral", "planted", "polynomial"],
)
def test_memory_check_names_counts_beyond_the_float_range(make, match):
    # the size in GiB was a float division: an OverflowError instead of the MemoryError
    X = np.random.default_rng(0).normal(size=(5, 2))
    with pytest.raises(MemoryError, match=f"needs about .*e\\+.* GiB.*{match}"):
        make(X)


def _rff(**params):
    from kernelcourse.features import RandomFourierFeatures

    return RandomFourierFeatures(**params)


def _binning(**params):
    from kernelcourse.features import RandomBinningFeatures

    return RandomBinningFeatures(**params)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: solve_regularized_psd(np.eye(3), np.ones(3), 10**400), "lam"),
        (lambda: smo_solve(np.eye(2), np.array([1.0, -1.0]), 1.0, tol=10**400), "tol"),
        (lambda: _conjugate_gradient(lambda v: v, np.ones(2), tol=10**400), "tol"),
    ],
    ids=["solve_regularized_psd", "smo_solve", "conjugate_gradient"],
)
def test_helpers_name_an_integer_beyond_the_float_range(call, match):
    # float(10**400) raised a bare OverflowError; check_positive/check_nonnegative name it
    with pytest.raises(ValueError, match=f"^{match} must be a finite number.*beyond the float"):
        call()


def _conjugate_gradient(*args, **kwargs):
    from kernelcourse.solvers import conjugate_gradient

    return conjugate_gradient(*args, **kwargs)
