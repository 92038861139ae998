"""Random Fourier features: unbiasedness within the Hoeffding tolerance, sampling modes,
agreement with scikit-learn's RBFSampler, input validation and the estimator checks."""

import math
import os
import platform
import subprocess
import sys
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.kernel_approximation import RBFSampler
from sklearn.utils.estimator_checks import parametrize_with_checks

from kernelcourse.bounds import hoeffding_deviation
from kernelcourse.features import RandomFourierFeatures, fourier_features
from kernelcourse.features._cosine import (
    _REDUCTION_CONSTANTS,
    _cos_block,
    _cosine_coefficients,
    _CosinePass,
)
from kernelcourse.kernels import RBF, Laplacian, Matern, Polynomial

KERNELS = [RBF(0.3), Laplacian(0.5), Matern(0.5, 1.5), Matern(1.5, 1.0), Matern(2.5, 2.0)]
MAPS = ["cos", "cossin", "complex"]


def _points(n=12, d=3, seed=0):
    return np.random.default_rng(seed).normal(size=(n, d)) * 0.8


@pytest.mark.parametrize("kernel", KERNELS, ids=repr)
@pytest.mark.parametrize("feature_map", MAPS)
def test_inner_products_within_hoeffding_tolerance(kernel, feature_map):
    X = _points()
    D, delta = 2000, 1e-3
    rff = RandomFourierFeatures(kernel=kernel, n_components=D, map=feature_map, random_state=0)
    K_hat = rff.fit(X).approximate_kernel(X)
    # Each pair deviates by more than a with probability <= δ; a union bound over the pairs.
    n_pairs = len(X) * (len(X) + 1) // 2
    a = hoeffding_deviation(D, delta / n_pairs)
    assert np.abs(K_hat - kernel(X)).max() <= a


@pytest.mark.parametrize("feature_map", MAPS)
def test_average_over_seeds_converges_to_kernel(feature_map):
    # E[ψ(x)ᵀψ(y)] = K(x, y): the mean over 200 independent maps of D = 50 features is an
    # average of 10 000 bounded terms, so its error is O(1/√10 000).
    X = _points(6)
    K = RBF(0.5)(X)
    est = np.mean(
        [
            RandomFourierFeatures(gamma=0.5, n_components=50, map=feature_map, random_state=s)
            .fit(X)
            .approximate_kernel(X)
            for s in range(200)
        ],
        axis=0,
    )
    assert np.abs(est - K).max() < hoeffding_deviation(10_000, 1e-3 / 21)


def test_same_draws_and_features_as_rbf_sampler():
    X = _points(50, 5)
    ours = RandomFourierFeatures(gamma=0.7, n_components=64, random_state=3).fit(X)
    ref = RBFSampler(gamma=0.7, n_components=64, random_state=3).fit(X)
    np.testing.assert_allclose(ours.omega_, ref.random_weights_.T)
    np.testing.assert_allclose(ours.offset_, ref.random_offset_)
    np.testing.assert_allclose(ours.transform(X), ref.transform(X), rtol=0, atol=1e-6)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("exact", [False, True])
def test_fast_path_matches_plain_formula(dtype, exact):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 7)).astype(dtype) * 3
    W = rng.normal(size=(7, 40)).astype(dtype) * 4  # arguments of size ~100: needs reduction
    b = rng.uniform(0, 2 * np.pi, 40)
    scale = math.sqrt(2 / 40)
    plain = scale * np.cos(X.astype(np.float64) @ W.astype(np.float64) + b)
    for n_threads in (1, 2, None):
        out = fourier_features(X, W, b, scale, exact=exact, n_threads=n_threads)
        assert out.dtype == dtype
        tol = 1e-12 if dtype == np.float64 else 2e-5 * np.abs(X @ W).max() * scale
        np.testing.assert_allclose(out, plain, rtol=0, atol=tol)


def test_fourier_features_casts_and_broadcasts():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(20, 3))
    W = rng.normal(size=(3, 8))
    out = fourier_features(X.astype(np.float32), W, 0.5, 2.0)
    assert out.dtype == np.float32  # W follows X's dtype
    np.testing.assert_allclose(out, 2.0 * np.cos(X @ W + 0.5), atol=2e-5)
    ints = fourier_features(np.arange(6).reshape(3, 2), np.ones((2, 4)), np.zeros(4), 1.0)
    assert ints.dtype == np.float64


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"X": np.ones(3)}, ValueError, "X must be a 2-D array"),
        ({"X": np.array([[np.nan, 1.0, 2.0]])}, ValueError, "X contains NaN"),
        ({"X": np.array([["a", "b", "c"]])}, TypeError, "X must be a numeric array"),
        ({"W": np.ones((4, 5))}, ValueError, r"W must have shape \(d, D\) with d = 3"),
        ({"W": np.ones(5)}, ValueError, "W must be a 2-D array"),
        ({"offset": np.zeros(4)}, ValueError, r"offset must be a number or have shape \(5,\)"),
        ({"offset": np.array([np.inf] * 5)}, ValueError, "offset contains NaN"),
        ({"scale": np.ones((5, 1))}, ValueError, "scale must be a number or have shape"),
        ({"scale": "big"}, TypeError, "scale must be a real number"),
        ({"n_threads": 0}, ValueError, "n_threads must be None or an integer >= 1"),
        ({"n_threads": 1.5}, ValueError, "n_threads"),
    ],
)
def test_fourier_features_rejects_bad_input(kwargs, error, match):
    args = {"X": np.ones((2, 3)), "W": np.ones((3, 5)), "offset": np.zeros(5), "scale": 1.0}
    args.update(kwargs)
    with pytest.raises(error, match=match):
        fourier_features(**args)


@pytest.mark.parametrize(
    ("dtype", "tol"),
    # float32: the polynomial is within 1.1e-8; the rest is the rounding of t itself.
    [(np.float32, 6e-7), (np.float64, 1e-14)],
)
def test_compiled_cosine_matches_numpy_over_many_periods(dtype, tol):
    t = np.linspace(-400.0, 400.0, 200_001).astype(dtype)
    t = np.concatenate([t, np.arange(-64, 65) * (np.pi / 2)]).astype(dtype)
    out = t.reshape(1, -1).copy()
    scale = np.full(out.shape[1], 0.5, dtype=dtype)
    _cos_block(out, scale, exact=False)
    assert out.dtype == dtype
    np.testing.assert_allclose(out[0], 0.5 * np.cos(t.astype(np.float64)), rtol=0, atol=tol)


# The compiled loop's assembly, in a fresh process under the given environment.
_LOOP_ASSEMBLY = """
import numpy as np
from kernelcourse.features import _cosine
machine = _cosine._target_machine()
print(machine.emit_assembly(_cosine._optimized_module(np.dtype(np.float32), False, machine)))
"""


def _loop_assembly(env):
    done = subprocess.run(
        [sys.executable, "-c", _LOOP_ASSEMBLY],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def _host_has_avx():
    import llvmlite.binding as llvm

    try:
        return "+avx" in llvm.get_host_cpu_features().flatten().split(",")
    except RuntimeError:
        return False


x86_64 = pytest.mark.skipif(
    platform.machine().lower() not in ("x86_64", "amd64"), reason="x86-64 registers"
)


@x86_64
@pytest.mark.skipif(not _host_has_avx(), reason="the host has no AVX: its width is SSE's")
def test_cosine_loop_keeps_the_hosts_width_under_numba_generic():
    # NUMBA_CPU_NAME=generic makes numba's loops four SSE2 lanes (xmm registers) for a cache
    # any machine can load; the cosine loop is never cached and keeps the host's ymm or zmm.
    assembly = _loop_assembly({"NUMBA_CPU_NAME": "generic"})
    assert "ymm" in assembly or "zmm" in assembly


@x86_64
def test_cosine_loop_follows_a_cpu_named_for_numba():
    # Core 2 has SSE only: a named CPU is followed as numba follows it.
    assembly = _loop_assembly({"NUMBA_CPU_NAME": "core2", "NUMBA_CPU_FEATURES": ""})
    assert "xmm" in assembly and "ymm" not in assembly and "zmm" not in assembly


def test_cosine_loop_refuses_memory_it_would_read_wrongly():
    # The loop reads raw pointers: a layout or a length it does not expect must raise.
    one = np.ones(3, dtype=np.float32)
    t = np.zeros((4, 6), dtype=np.float32)[:, ::2]
    with pytest.raises(ValueError, match="t must be a matrix with contiguous rows"):
        _cos_block(t, one, exact=False)
    t, rows = np.zeros((4, 3), dtype=np.float32), np.zeros(4, dtype=bool)
    with pytest.raises(ValueError, match=r"offset and scale must have shape \(3,\)"):
        _cos_block(t, one, False, rows, offset=np.zeros(2, dtype=np.float32))
    with pytest.raises(ValueError, match=r"offset and scale must have shape \(3,\)"):
        _cos_block(t, np.arange(1.0, 3.0, dtype=np.float32), False, rows)
    with pytest.raises(ValueError, match="out must have t's shape"):
        _cos_block(t, one, False, rows, out=np.zeros((4, 2), dtype=np.float32))
    with pytest.raises(ValueError, match=r"skip must have shape \(4,\)"):
        _cos_block(t, one, False, rows[:3])


@pytest.mark.parametrize("exact", [False, True])
def test_float32_cosine_paths_agree(exact):
    # The compiled loop or numpy's cosine: either path is within round-off of the cosine,
    # ties of t / 2π (odd multiples of π) included.
    t = np.concatenate([np.linspace(-900.0, 900.0, 50_001), np.arange(-41, 42, 2) * np.pi])
    out = t.astype(np.float32).reshape(1, -1)
    _cos_block(out, np.full(out.shape[1], 2.0, dtype=np.float32), exact=exact)
    assert out.dtype == np.float32
    expected = 2.0 * np.cos(t.astype(np.float32).astype(np.float64))
    np.testing.assert_allclose(out[0], expected, rtol=0, atol=1.2e-6)


def test_cosine_polynomial_is_as_accurate_as_stated():
    r = np.linspace(-np.pi, np.pi, 100_001)
    for degree, bound in ((6, 1.2e-8), (10, 4e-15)):
        coef = _cosine_coefficients(degree, np.dtype(np.float64))
        np.testing.assert_allclose(np.polyval(coef, r * r), np.cos(r), rtol=0, atol=bound)


def test_dtype_parameter_and_preservation():
    X = _points(20)
    Z = RandomFourierFeatures(n_components=8, random_state=0).fit_transform(X)
    assert Z.dtype == np.float64
    X32 = X.astype(np.float32)
    rff = RandomFourierFeatures(n_components=8, random_state=0)
    assert rff.fit_transform(X32).dtype == np.float32
    rff = RandomFourierFeatures(n_components=8, random_state=0, dtype=np.float32)
    Z32 = rff.fit_transform(X)
    assert Z32.dtype == np.float32
    rff64 = RandomFourierFeatures(n_components=8, random_state=0).fit(X)
    np.testing.assert_allclose(Z32, rff64.transform(X), atol=1e-5)
    Zc = RandomFourierFeatures(n_components=8, map="complex", random_state=0).fit_transform(X)
    assert Zc.dtype == np.complex128


def test_cossin_layout_and_complex_map():
    X = _points(5)
    rff = RandomFourierFeatures(gamma=0.4, n_components=10, map="cossin", random_state=0).fit(X)
    S = 5
    np.testing.assert_array_equal(rff.omega_[:S], rff.omega_[S:])
    P = X @ rff.omega_[:S].T
    expected = np.hstack([np.cos(P), np.sin(P)]) / math.sqrt(S)
    np.testing.assert_allclose(rff.transform(X), expected, atol=1e-7)
    cplx = RandomFourierFeatures(gamma=0.4, n_components=10, map="complex", random_state=0)
    cplx.fit(X)
    expected = np.exp(-1j * X @ cplx.omega_.T) / math.sqrt(10)
    np.testing.assert_allclose(cplx.transform(X), expected, atol=1e-7)


def test_scaled_kernel_features_carry_the_mass():
    X = _points(8)
    k = 3.0 * RBF(0.2)
    rff = RandomFourierFeatures(kernel=k, n_components=4000, random_state=0).fit(X)
    assert np.abs(rff.approximate_kernel(X) - k(X)).max() < 3 * hoeffding_deviation(4000, 1e-3)


def _mean_error(sampling, seeds=range(10), D=64, kernel=None):
    X = _points(30, 4, seed=5)
    kernel = kernel or RBF(0.25)
    K = kernel(X)
    errs = []
    for s in seeds:
        rff = RandomFourierFeatures(
            kernel=kernel, n_components=D, map="cossin", sampling=sampling, random_state=s
        )
        errs.append(np.abs(rff.fit(X).approximate_kernel(X) - K).mean())
    return np.mean(errs)


@pytest.mark.parametrize("sampling", ["qmc", "orthogonal"])
def test_structured_sampling_beats_monte_carlo_on_average(sampling):
    assert _mean_error(sampling) < _mean_error("mc")


def test_qmc_beats_monte_carlo_for_matern():
    assert _mean_error("qmc", kernel=Matern(2.5, 2.0)) < _mean_error("mc", kernel=Matern(2.5, 2.0))


def _leverage_draws(X, gamma, R, **params):
    """Z Zᵀ of R leverage-sampled maps (fresh pool each) and the same without the weights."""
    weighted, unweighted = [], []
    for seed in range(R):
        est = RandomFourierFeatures(
            gamma=gamma, sampling="leverage", random_state=seed, **params
        ).fit(X)
        Z = est.transform(X)
        weighted.append(Z @ Z.T)
        Zu = Z / est.weights_
        unweighted.append(Zu @ Zu.T)
    return np.array(weighted), np.array(unweighted)


def _max_z_score(draws, K):
    """Largest |mean − K| over the entries, in units of the standard error of the mean."""
    se = draws.std(axis=0) / np.sqrt(len(draws))
    return np.max(np.abs(draws.mean(axis=0) - K) / np.maximum(se, 1e-12))


@pytest.mark.parametrize("feature_map", ["cos", "cossin"])
def test_leverage_sampling_is_unbiased_and_weighted(feature_map):
    # Two clusters and a small ridge: the leverage distribution is far from p, so a wrong
    # importance weight shows up as a bias many standard errors wide.
    rng = np.random.default_rng(0)
    X = np.r_[rng.normal(0, 0.3, (15, 1)), rng.normal(4, 1.5, (15, 1))]
    K = RBF(5.0)(X)
    weighted, unweighted = _leverage_draws(
        X, 5.0, 400, n_components=20, map=feature_map, ridge=1e-4, pool_factor=4
    )
    # E[Z Zᵀ] = K entry by entry: within 5 standard errors of the mean of 400 draws
    assert _max_z_score(weighted, K) < 5.0
    # ... which the same draws without the weights √(p/q) miss by far
    assert _max_z_score(unweighted, K) > 15.0


def test_leverage_scores_use_the_kernel_scale():
    # c·k with ridge c·λ has the leverage function of k with ridge λ: the same frequencies.
    X = _points(40, 2, seed=2)
    a = RandomFourierFeatures(
        kernel=RBF(0.5), n_components=30, sampling="leverage", ridge=1e-3, random_state=0
    ).fit(X)
    b = RandomFourierFeatures(
        kernel=4.0 * RBF(0.5), n_components=30, sampling="leverage", ridge=4e-3, random_state=0
    ).fit(X)
    np.testing.assert_allclose(a.omega_, b.omega_)
    np.testing.assert_allclose(a.weights_, b.weights_, rtol=1e-8)
    np.testing.assert_allclose(4.0 * a.approximate_kernel(X), b.approximate_kernel(X), atol=1e-8)


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"n_components": 0}, "n_components"),
        ({"n_components": -3}, "n_components"),
        ({"map": "cossin", "n_components": 7}, "even"),
        ({"kernel": "spline"}, "kernel"),
        ({"map": "sine"}, "map"),
        ({"sampling": "sobol"}, "sampling"),
        ({"gamma": 0.0}, "gamma"),
        ({"gamma": -1.0}, "gamma"),
        ({"kernel": Polynomial(2)}, "shift invariant"),
        ({"kernel": "laplacian", "sampling": "orthogonal"}, "rotation-invariant"),
        ({"kernel": "matern", "kernel_params": {"nu": 0.7}}, "nu"),
        ({"dtype": np.int32}, "dtype"),
        ({"n_threads": 0}, "n_threads"),
    ],
)
def test_bad_parameters_raise_clear_errors(params, match):
    with pytest.raises((ValueError, TypeError), match=match):
        RandomFourierFeatures(**params).fit(_points())


def test_nan_input_raises():
    X = _points()
    X[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        RandomFourierFeatures().fit(X)
    rff = RandomFourierFeatures(n_components=4).fit(_points())
    with pytest.raises(ValueError, match="NaN"):
        rff.transform(X)


_ODD_N_COMPONENTS = "the check sets n_components=1, odd, which map='cossin' rejects by design"


@parametrize_with_checks(
    [
        RandomFourierFeatures(),
        RandomFourierFeatures(map="complex"),
        RandomFourierFeatures(kernel="laplacian", sampling="qmc"),
        RandomFourierFeatures(kernel="matern", sampling="orthogonal"),
        RandomFourierFeatures(sampling="leverage", n_components=10, pool_factor=2),
        RandomFourierFeatures(map="cossin", n_components=20),
        RandomFourierFeatures(dtype=np.float32),
        RandomFourierFeatures(dtype=np.float64),
    ],
    expected_failed_checks=lambda est: (
        {
            name: _ODD_N_COMPONENTS
            for name in (
                "check_dont_overwrite_parameters",
                "check_methods_sample_order_invariance",
                "check_methods_subset_invariance",
                "check_fit2d_1sample",
                "check_fit2d_1feature",
                "check_fit2d_predict1d",
            )
        }
        if est.map == "cossin"
        else {}
    ),
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


# -- the compiled cosine is right for every finite argument (issue 18, item 1) ------------------
@pytest.mark.parametrize(
    ("dtype", "tol"),
    # a few units of round-off of the dtype, against numpy's cosine of the same argument
    [(np.float32, 6e-7), (np.float64, 1e-14)],
)
def test_compiled_cosine_equals_numpy_for_every_magnitude(dtype, tol):
    rng = np.random.default_rng(3)
    top = np.log10(np.finfo(dtype).max)
    limit = float(_REDUCTION_CONSTANTS[np.dtype(dtype)][0])
    mags = np.concatenate([10.0 ** np.arange(-3, top, 0.5), [limit * 0.999, limit * 1.001]])
    t = np.concatenate([rng.uniform(-1, 1, 2000) * m for m in mags])
    t = np.concatenate([t, [0.0, limit, -limit, np.finfo(dtype).max]] * 2).astype(dtype)
    assert np.isfinite(t).all()
    out = t.reshape(-1, 8).copy()
    _cos_block(out, np.ones(out.shape[1], dtype=dtype), exact=False)
    np.testing.assert_allclose(out.ravel(), np.cos(t), rtol=0, atol=tol)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_features_of_timestamps_stay_bounded_and_match_numpy(dtype):
    # Hourly unix timestamps: ωᵀx + b is ~1e9, far beyond any fixed-period reduction.
    # In float32 their phase is lost (floats there are 128 apart), which a warning says.
    X = (1.7e9 + 3600 * np.arange(5.0)[:, None]).astype(dtype)
    D = 64
    fast = RandomFourierFeatures(n_components=D, gamma=1.0, random_state=0).fit(X)
    exact = clone(fast).set_params(exact_cos=True).fit(X)
    with _phase_warning(dtype):
        Z, Z_exact = fast.transform(X), exact.transform(X)
    assert np.abs(Z).max() <= math.sqrt(2 / D) * (1 + 1e-6)
    np.testing.assert_allclose(Z, Z_exact, rtol=0, atol=1e-6 if dtype == np.float32 else 1e-14)
    # Mixed rows: the small ones take the compiled path, the large ones numpy's cosine.
    rng = np.random.default_rng(0)
    W = rng.normal(size=(3, 40))
    Xm = np.vstack([rng.normal(size=(10, 3)), 1e12 * rng.normal(size=(3, 3))]).astype(dtype)
    b = rng.uniform(0, 2 * np.pi, 40)
    with _phase_warning(dtype):
        fast, exact = fourier_features(Xm, W, b, 1.0), fourier_features(Xm, W, b, 1.0, exact=True)
    np.testing.assert_allclose(fast, exact, rtol=0, atol=1e-6 if dtype == np.float32 else 1e-14)


def _phase_warning(dtype):
    """The warning that the arguments' phase is lost, expected in float32 only."""
    if dtype == np.float32:
        return pytest.warns(RuntimeWarning, match="cannot resolve their phase")
    return warnings.catch_warnings()  # float64: none (the tests' filter makes one an error)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_features_over_many_blocks_and_threads_match_numpy(dtype, monkeypatch):
    # Each thread multiplies into a block of its own and the cosine writes the output: every
    # block must land on its own rows, the large rows (numpy's cosine) included, with one
    # scale for all columns (folded into the polynomial) or a scale per column.
    from kernelcourse.features import fourier

    monkeypatch.setattr(fourier, "_BLOCK_ELEMENTS", 7 * 64)  # blocks of 7 rows
    rng = np.random.default_rng(5)
    X = rng.normal(size=(200, 4))
    X[[3, 50, 51, 199]] *= 1e9
    X = X.astype(dtype)
    W, b = rng.normal(size=(4, 64)), rng.uniform(0, 2 * np.pi, 64)
    expected = np.cos(X.astype(np.float64) @ W.astype(dtype).astype(np.float64) + b)
    tol = 2e-4 if dtype == np.float32 else 1e-12  # float32: the rounding of t = ωᵀx + b
    small = np.abs(X).max(axis=1) < 1e3
    round_off = 1e-6 if dtype == np.float32 else 1e-14
    for scale in (0.5, rng.uniform(0.5, 2.0, 64)):
        for n_threads in (1, 2, 3):
            with _phase_warning(dtype):  # float32 rows at 1e9
                Z = fourier_features(X, W, b, scale, n_threads=n_threads)
                exact = fourier_features(X, W, b, scale, exact=True, n_threads=n_threads)
            assert Z.dtype == dtype and Z.flags.c_contiguous
            np.testing.assert_allclose(Z, exact, rtol=0, atol=round_off)
            np.testing.assert_allclose(Z[small], (scale * expected)[small], rtol=0, atol=tol)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n_components", [1, 2, 7, 64])
@pytest.mark.parametrize("d", [1, 2, 3, 5, 9])
def test_features_of_a_row_do_not_depend_on_its_neighbours(d, n_components, dtype, monkeypatch):
    # BLAS multiplies one column or one row by matrix-vector kernels, which round a row
    # otherwise (and by its place in the block): seen for d = 2 to 5 before the product was
    # kept a matrix product. Blocks of 7 rows, so 22 rows end in a block of one.
    from kernelcourse.features import fourier

    monkeypatch.setattr(fourier, "_BLOCK_ELEMENTS", 7 * n_components)
    rng = np.random.default_rng(d)
    X = (3 * rng.uniform(size=(22, d))).astype(dtype)
    perm = rng.permutation(22)
    for seed in range(3):
        rff = RandomFourierFeatures(n_components=n_components, random_state=seed).fit(X)
        Z = rff.transform(X)
        np.testing.assert_array_equal(rff.transform(X[perm]), Z[perm])
        for i in (0, 7, 21):
            np.testing.assert_array_equal(rff.transform(X[i : i + 1])[0], Z[i])


@pytest.mark.parametrize("exact", [False, True])
def test_cos_block_writes_out_of_place(exact):
    rng = np.random.default_rng(1)
    t = (rng.normal(size=(6, 33)) * 50).astype(np.float32)
    t[2, 5] = 1e7  # beyond the exact reduction: that row goes to numpy's cosine
    scale = rng.uniform(0.5, 2.0, 33).astype(np.float32)
    out = np.full_like(t, np.nan)
    _cos_block(t.copy(), scale, exact=exact, out=out)
    in_place = t.copy()
    _cos_block(in_place, scale, exact=exact)
    np.testing.assert_array_equal(out, in_place)
    np.testing.assert_allclose(out, scale * np.cos(t.astype(np.float64)), rtol=0, atol=1e-5)


@pytest.mark.parametrize("exact", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("one_scale", [False, True])
def test_prepared_cosine_pass_matches_the_block_cosine(exact, dtype, one_scale):
    # The pass prepared once for a transform writes the rows _cos_block writes, block by
    # block from a scratch matrix wider than the output (as for D = 1), with a flagged row in
    # one block only.
    rng = np.random.default_rng(2)
    n, D = 11, 5
    t = (rng.normal(size=(n, D)) * 40).astype(dtype)
    limit = _REDUCTION_CONSTANTS[np.dtype(dtype)][0]
    t[7, 1] = 3 * limit  # beyond the exact reduction, where the phase is still resolved
    offset = rng.uniform(0, 2 * np.pi, D).astype(dtype)
    scale = np.full(D, 0.7, dtype) if one_scale else rng.uniform(0.5, 2, D).astype(dtype)
    fallback = ~(np.abs(t + offset) <= limit).all(axis=1)
    assert fallback.tolist() == [i == 7 for i in range(n)]
    expected = np.empty_like(t)
    _cos_block(t.copy(), scale, exact, fallback, out=expected, offset=offset)
    out = np.full_like(t, np.nan)
    cosine = _CosinePass(out, offset, scale, fallback, exact)
    scratch = np.empty((4, D + 1), dtype)
    for start in range(0, n, 4):
        m = min(4, n - start)
        scratch[:m, :D] = t[start : start + m]
        cosine(scratch[:m, :D], start, scratch.ctypes.data)
    np.testing.assert_array_equal(out, expected)
    np.testing.assert_allclose(out, scale * np.cos((t + offset).astype(np.float64)), atol=1e-5)


def test_prepared_cosine_pass_refuses_what_it_would_read_wrongly():
    out = np.zeros((4, 3), np.float32)
    vector, rows = np.ones(3, np.float32), np.zeros(4, bool)
    with pytest.raises(ValueError, match="offset must be a contiguous vector of dtype float32"):
        _CosinePass(out, np.ones(3), vector, rows, False)
    cosine = _CosinePass(out, vector, vector, rows, False)
    block = np.zeros((2, 3), np.float32)
    with pytest.raises(ValueError, match=r"block of shape \(2, 3\) at row 3 is outside"):
        cosine(block, 3, block.ctypes.data)
    with pytest.raises(ValueError, match=r"block of shape \(2, 2\) at row 0 is outside"):
        cosine(block[:, :2], 0, block.ctypes.data)


@pytest.mark.parametrize("exact", [False, True])
def test_overflowing_cosine_argument_raises(exact):
    X = np.full((2, 2), 1e300)
    with pytest.raises(ValueError, match="overflow"):
        fourier_features(X, np.full((2, 3), 1e10), 0.0, 1.0, exact=exact)


# -- leverage-score sampling scales with the pool, and refuses what cannot fit (item 8) ---------
def test_leverage_sampling_memory_is_linear_in_the_pool():
    import tracemalloc

    X = np.random.default_rng(0).normal(size=(100, 4))
    est = RandomFourierFeatures(sampling="leverage", n_components=400, random_state=0)
    tracemalloc.start()
    est.fit(X)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    # A pool of M = 3200 frequencies: the old 2M × 2M system alone took 6400² · 8 B = 328 MB;
    # the n × n form needs Z's blocks (n × 2M ≈ 5 MB at most) and the pool.
    assert peak < 40 * 2**20
    assert est.omega_.shape == (400, 4) and np.isfinite(est.weights_).all()


def test_leverage_sampling_refuses_a_pool_that_cannot_fit():
    X = np.random.default_rng(0).normal(size=(20, 50))
    est = RandomFourierFeatures(
        sampling="leverage", n_components=10**6, pool_factor=10**4, random_state=0
    )
    with pytest.raises(ValueError, match="lower pool_factor or n_components"):
        est.fit(X)


@pytest.mark.parametrize("name", ["scale", "offset"])
def test_fourier_features_refuses_a_scale_or_offset_beyond_float32(name):
    # cast to the float32 of X, scale=1e300 became infinity and every feature NaN (offset=1e300
    # was blamed on X)
    X = np.ones((3, 2), dtype=np.float32)
    args = {"offset": 0.0, "scale": 1.0, name: 1e300}
    with pytest.raises(ValueError, match=f"{name} has entries of magnitude 1e\\+300"):
        fourier_features(X, np.ones((2, 4)), args["offset"], args["scale"])


@pytest.mark.parametrize("map_", ["cos", "cossin", "complex"])
def test_arguments_beyond_their_phase_warn(map_):
    # at γ = 1e300 the arguments reach 1e151: floats there are far more than π apart, the
    # sine half of "cossin" (cos(t − π/2)) equalled the cosine half, and nothing was said
    X = np.random.default_rng(0).normal(size=(5, 3))
    rff = RandomFourierFeatures(map=map_, gamma=1e300, n_components=4, random_state=0).fit(X)
    with pytest.warns(RuntimeWarning, match=r"reach 9\.\d+e\+150, where float64 cannot resolve"):
        rff.transform(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        rff.set_params(gamma=1e10).fit(X).transform(X)  # arguments of 1e5: fine


@pytest.mark.parametrize(
    "kernel, params",
    [("laplacian", {"gamma": 1e300}), ("matern", {"kernel_params": {"length_scale": 1e-300}})],
)
def test_leverage_sampling_of_a_heavy_tailed_pool_on_large_x_names_the_cause(kernel, params):
    # the Cauchy or Student-t pool on X of 1e150 made ωᵀx infinite, and the Cholesky factor
    # of ZZᵀ failed in scipy with "array must not contain infs or NaNs"
    X = 1e150 * np.random.default_rng(0).normal(size=(30, 3))
    rff = RandomFourierFeatures(
        kernel=kernel, sampling="leverage", n_components=8, random_state=0, **params
    )
    with pytest.raises(ValueError, match="cosine's arguments ωᵀx \\+ b overflow"):
        rff.fit(X)
