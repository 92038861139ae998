"""Valid but extreme inputs: data far from the origin, magnitudes whose squares overflow.

Every kernel and every estimator built on a Gram block must give the right answer or a clear
error naming the input, never a silently wrong number or NaN.
"""

import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from kernelcourse import kernels as kn
from kernelcourse.bounds import uniform_bound, uniform_deviation
from kernelcourse.features import Nystroem
from kernelcourse.features.kitchen_sinks import ArcCosine, RandomKitchenSinks
from kernelcourse.ridge import FeatureRidge, KernelRidge, sparse_ridge_cg
from kernelcourse.rkhs import GaussianMercer, RKHSFunction, mercer_expansion
from kernelcourse.scale import NystroemKRR
from kernelcourse.solvers import block_cg, cholesky_jitter, conjugate_gradient
from kernelcourse.strings import SpectrumKernel, WeightedDegreeKernel, string_exp
from kernelcourse.svm import KernelSVC, smo_solve

OFFSETS = [0.0, 1e6, 1e7, 1e8, 1e9]


def _direct_sq(X, Y):
    X, Y = np.asarray(X, np.float64), np.asarray(Y, np.float64)
    return ((X[:, None, :] - Y[None, :, :]) ** 2).sum(-1)


def _matern52(D, ell):
    s = math.sqrt(5.0) * np.sqrt(D) / ell
    return (1 + s + s**2 / 3) * np.exp(-s)


def _shifted(offset, dtype, seed=0, n=25, d=3):
    # The spread grows with the offset in float32 so that its 24-bit mantissa still resolves
    # the points (the same relative spread as unit data at 1e4); in float64 it is 1.
    spread = 1.0 if dtype == np.float64 else max(1.0, offset * 1e-4)
    rng = np.random.default_rng(seed)
    X = (offset + spread * rng.normal(size=(n, d))).astype(dtype)
    Y = (offset + spread * rng.normal(size=(n - 7, d))).astype(dtype)
    return X, Y, spread


# Tolerances on K (values in [0, 1]): float64 1e-12, float32 2e-6 (a few float32 ulps of the
# centred coordinates, squared); before centring the float64 error was 0.66 at 1e8.
@pytest.mark.parametrize("dtype, tol", [(np.float64, 1e-12), (np.float32, 2e-6)])
@pytest.mark.parametrize("offset", OFFSETS)
def test_stationary_kernels_exact_far_from_origin(offset, dtype, tol):
    X, Y, spread = _shifted(offset, dtype)
    gamma, ell = 0.5 / spread**2, 1.3 * spread
    cases = [
        (kn.RBF(gamma), lambda D: np.exp(-gamma * D)),
        (kn.Matern(nu=2.5, length_scale=ell), lambda D: _matern52(D, ell)),
        (kn.Matern(nu=0.5, length_scale=ell), lambda D: np.exp(-np.sqrt(D) / ell)),
    ]
    for k, f in cases:
        K_xy, K_xx = k(X, Y), k(X)
        assert K_xy.dtype == dtype
        np.testing.assert_allclose(K_xy, f(_direct_sq(X, Y)), rtol=0, atol=tol, err_msg=repr(k))
        np.testing.assert_allclose(K_xx, f(_direct_sq(X, X)), rtol=0, atol=tol, err_msg=repr(k))
        # and the kernel is the same function of the differences as at the origin
        X0, Y0 = X.astype(np.float64) - offset, Y.astype(np.float64) - offset
        np.testing.assert_allclose(K_xy, k(X0, Y0), rtol=0, atol=tol)


@pytest.mark.parametrize("offset", [1e8, 1e9])
def test_gram_users_exact_far_from_origin(offset):
    # Nystroem, KernelRidge and KernelSVC on shifted data give what they give at the origin.
    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 2))
    y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=60)
    labels = np.where(X[:, 0] + X[:, 1] > 0, 1, -1)
    Xs = X + offset

    ny0 = Nystroem(kernel="rbf", gamma=0.5, n_components=20, random_state=0).fit(X)
    ny1 = Nystroem(kernel="rbf", gamma=0.5, n_components=20, random_state=0).fit(Xs)
    np.testing.assert_allclose(
        ny1.approximate_kernel(Xs[:10]), ny0.approximate_kernel(X[:10]), atol=1e-7
    )
    kr0 = KernelRidge(kernel="rbf", gamma=0.5, lam=0.1).fit(X, y)
    kr1 = KernelRidge(kernel="rbf", gamma=0.5, lam=0.1).fit(Xs, y)
    np.testing.assert_allclose(kr1.predict(Xs), kr0.predict(X), atol=1e-7)
    sv0 = KernelSVC(kernel="rbf", gamma=0.5, C=1.0).fit(X, labels)
    sv1 = KernelSVC(kernel="rbf", gamma=0.5, C=1.0).fit(Xs, labels)
    np.testing.assert_allclose(sv1.decision_function(Xs), sv0.decision_function(X), atol=1e-5)


def test_laplacian_and_bump_basis_far_from_origin():
    X, Y, _ = _shifted(1e8, np.float64)
    D1 = np.abs(X[:, None, :] - Y[None, :, :]).sum(-1)
    np.testing.assert_allclose(kn.Laplacian(0.7)(X, Y), np.exp(-0.7 * D1), atol=1e-12)
    rks = RandomKitchenSinks(basis="bump", bandwidth=1.5, n_components=30, random_state=0)
    rks.fit(X)
    inside = np.sqrt(_direct_sq(X, rks.weights_)) <= 1.5
    np.testing.assert_array_equal(rks.transform(X), inside.astype(float))


# -- squares that overflow -------------------------------------------------------------------
HUGE = np.array([[1e200, 0.0], [0.0, 1e200], [1e200, 1e200], [3e200, -2e200]])


@pytest.mark.parametrize("k", [kn.RBF(0.5), kn.Matern(nu=1.5), kn.Matern(nu=2.5)])
def test_stationary_grams_scale_before_squaring(k):
    # distances of 1e200 are representable; only their squares are not: K is I, exactly
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        K = k(HUGE)
        np.testing.assert_array_equal(K, np.eye(len(HUGE)))
        # a spread of 1e194 at 1e200 keeps its kernel values
        Z = 1e200 * np.array([[1.0], [1.0 + 2.0**-20]])
        ell = float(Z[1, 0] - Z[0, 0])
        e = math.exp(-1.0)
        np.testing.assert_allclose(kn.Matern(nu=0.5, length_scale=ell)(Z), [[1, e], [e, 1]])


def test_angle_kernels_scale_before_squaring():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ref = kn.Cosine()(HUGE / 1e200)
        np.testing.assert_allclose(kn.Cosine()(HUGE), ref, rtol=1e-15)
        np.testing.assert_allclose(kn.Cosine()(HUGE * 1e-300), ref, rtol=1e-15)
        np.testing.assert_allclose(ArcCosine(0)(HUGE), ArcCosine(0)(HUGE / 1e200), rtol=1e-15)


@pytest.mark.parametrize("scale", [1e-300, 1.0, 1e300])
def test_cosine_diagonal_is_the_gram_diagonal(scale):
    # the norm of a row at 1e-300 underflowed to 0, and diag said 0 where K(x, x) is 1
    X = np.random.default_rng(0).normal(size=(5, 3))
    X[0] = 0.0
    dtypes = [np.float64] if scale != 1.0 else [np.float64, np.float32]  # float32's range
    for Xs in ((scale * X).astype(dtype) for dtype in dtypes):
        np.testing.assert_allclose(kn.Cosine().diag(Xs), np.diag(kn.Cosine()(Xs)), rtol=1e-6)


@pytest.mark.parametrize(
    "k", [ArcCosine(1), ArcCosine(2), kn.Polynomial(degree=2), kn.Linear(), kn.exp(kn.Linear())]
)
def test_kernels_that_overflow_say_so(k):
    with pytest.raises(ValueError, match=r"overflows.*X \(largest \|entry\| 3e\+200\)|X.*overflow"):
        k(HUGE)
    with pytest.raises(ValueError, match="overflow"):
        k(HUGE[:2], HUGE)


def test_feature_map_and_diag_overflow_say_so():
    k = kn.Polynomial(degree=3)
    with pytest.raises(ValueError, match="feature map .* overflows"):
        k.feature_map(HUGE)
    with pytest.raises(ValueError, match="diagonal .* overflows"):
        k.diag(HUGE)


def test_estimators_with_polynomial_kernel_refuse_overflowing_inputs():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(30, 2)), rng.normal(size=30)
    labels = np.where(y > 0, 1, -1)
    with pytest.raises(ValueError, match="X.*overflow"):
        Nystroem(kernel="poly", n_components=5, random_state=0).fit(X).transform(HUGE)
    with pytest.raises(ValueError, match="X.*overflow"):
        FeatureRidge(features=kn.Polynomial(degree=2), lam=1.0).fit(X, y).predict(HUGE)
    with pytest.raises(ValueError, match="X.*overflow"):
        KernelSVC(kernel="poly", C=1.0).fit(X, labels).decision_function(HUGE)


@pytest.mark.parametrize(
    "make",
    [
        lambda: KernelRidge(kernel="poly"),
        lambda: NystroemKRR(kernel="poly", n_components=5, random_state=0),
        lambda: Nystroem(kernel="poly", n_components=5, random_state=0),
    ],
    ids=["kernel-ridge", "nystroem-krr", "nystroem"],
)
def test_array_api_estimators_with_polynomial_kernel_refuse_overflowing_inputs(
    monkeypatch, make
):
    # as on the numpy path: fit raised a LinAlgError ("Eigenvalues did not converge", "K_MM
    # holds NaN"), and predict or transform returned NaN
    xp = pytest.importorskip("array_api_strict")
    import sklearn

    monkeypatch.setenv("SCIPY_ARRAY_API", "1")
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(30, 2)), rng.normal(size=30)
    with sklearn.config_context(array_api_dispatch=True):
        with pytest.raises(ValueError, match=r"kernel Polynomial.*(overflow|NaN or infinity)"):
            make().fit(xp.asarray(1e100 * X), xp.asarray(y))
        model = make().fit(xp.asarray(X), xp.asarray(y))
        apply = getattr(model, "predict", None) or model.transform
        with pytest.raises(ValueError, match=r"kernel Polynomial.* on X .*overflows"):
            apply(xp.asarray(HUGE))


def test_sgd_result_predict_refuses_overflowing_inputs():
    from kernelcourse import sgd

    rng = np.random.default_rng(0)
    X, order = rng.normal(size=(20, 2)), np.arange(20)
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    poly = kn.Polynomial(degree=2)
    for strategy in (sgd.sgd_features_on_the_fly, sgd.sgd_dual_cached_gram):
        result = strategy(X, y, poly, order=order, step_size=0.1)
        with pytest.raises(ValueError, match="X.*overflow"):
            result.predict(HUGE)
    # K finite, its product with u not: still an error, not inf
    result = sgd.sgd_dual_cached_gram(X, y, kn.Linear(), order=order, step_size=0.1)
    with pytest.raises(ValueError, match="X.*overflow"):
        result.predict(np.full((1, 2), 1e308))


@pytest.mark.parametrize("offset", [0.0, 1e6])
def test_kernel_ridge_with_identity_gram_predicts_y_over_one_plus_lambda(offset):
    # γ = 1e12 on unit-spread points: K = I, α = y / (1 + λ), and predict gives α back
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(30, 3)) + offset, rng.normal(size=30)
    model = KernelRidge(kernel="rbf", gamma=1e12, lam=0.5).fit(X, y)
    np.testing.assert_allclose(model.predict(X), y / 1.5, rtol=0, atol=1e-14)
    np.testing.assert_array_equal(kn.RBF(1e12)(X, X), np.eye(30))


def _float32_gap(make, seeds=range(40), lam=1e-6):
    """Worst relative gap between float32 and float64 fits of ``make(dtype=..., n=...)`` on
    small problems where every point is a centre, and the gap that rounding the kernel
    values alone to float32 causes in the exact solution (the floor no fit can beat)."""
    worst = floor = 0.0
    for seed in seeds:
        rng = np.random.default_rng(seed)
        n = int(rng.integers(4, 21))
        X, y = rng.normal(size=(n, 2)), rng.normal(size=n)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the accuracy is tested here, not the warnings
            p64 = make(np.float64, n).fit(X, y).predict(X)
            p32 = make(np.float32, n).fit(X, y).predict(X)
        worst = max(worst, np.abs(p32 - p64).max() / np.abs(p64).max())
        K, yc = kn.RBF(0.5)(X, X), y - y.mean()
        exact = K @ np.linalg.solve(K + lam * n * np.eye(n), yc)
        K32 = kn.RBF(0.5)(X.astype(np.float32), X.astype(np.float32)).astype(np.float64)
        rounded = K @ np.linalg.solve(K32 + lam * n * np.eye(n), yc)
        floor = max(floor, np.abs(rounded - exact).max() / np.abs(exact + y.mean()).max())
    return worst, floor


@pytest.mark.parametrize("precompute", [False, True])
def test_nystroem_krr_float32_agrees_with_float64(precompute):
    # λ = 1e-6 with every point a centre: 1/(λn) magnifies every rounding. K_MM used to be
    # formed in float32, and its rounding, inside both the preconditioner and the
    # regulariser, moved the fit by up to 4e-2. With K_MM in float64 what is left is the
    # rounding of the float32 kernel blocks, of the size the exact solve shows on a Gram
    # computed in float32 (about 3e-3 here).
    from kernelcourse.scale import NystroemKRR

    def make(dtype, n):
        return NystroemKRR(
            kernel="rbf",
            gamma=0.5,
            n_components=n,
            lam=1e-6,
            random_state=0,
            precompute=precompute,
            dtype=dtype,
        )

    worst, floor = _float32_gap(make)
    assert 1e-4 < floor < 1e-2, floor  # the problems are as ill-conditioned as intended
    assert worst < 3 * floor, (worst, floor)


def test_nystroem_krr_float32_agrees_at_a_moderate_lambda():
    from kernelcourse.scale import NystroemKRR

    def make(dtype, n):
        return NystroemKRR(
            kernel="rbf", gamma=0.5, n_components=n, lam=1e-3, random_state=0, dtype=dtype
        )

    # about 1e-5 here, as close as float32 kernel values allow
    worst, floor = _float32_gap(make, seeds=range(10), lam=1e-3)
    assert floor < 1e-4 and worst < 3 * floor, (worst, floor)


@pytest.mark.parametrize("k", [kn.RBF(0.5), kn.Matern(nu=2.5)])
def test_array_api_gram_block_exact_far_from_origin(k):
    xp = pytest.importorskip("array_api_strict")
    from kernelcourse import devices

    X, Y, _ = _shifted(1e8, np.float64)
    K = devices.gram_block(k, xp.asarray(X), xp.asarray(Y), xp=xp)
    np.testing.assert_allclose(np.asarray(K), k(X - 1e8, Y - 1e8), rtol=0, atol=1e-12)


@pytest.mark.parametrize("k", [kn.RBF(0.5), kn.Matern(0.5), kn.Matern(1.5), kn.Matern(2.5)])
@pytest.mark.parametrize("scale", [1e-3, 1e100])
def test_array_api_gram_block_scales_before_squaring(k, scale):
    # inputs of magnitude 1e200 overflowed ‖x‖² on the array-API path: an RBF block of NaN
    # (a LinAlgError in fit), where the numpy path scales by a power of two first; a Matérn
    # block far beyond its length scale was inf · 0 = NaN
    xp = pytest.importorskip("array_api_strict")
    from kernelcourse import devices

    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(12, 3)), rng.normal(size=(5, 3))
    X[0] = Y[0]  # a pair at distance 0: its entry is 1 at any scale
    if isinstance(k, kn.RBF):
        k = kn.RBF(0.5 / scale**2)  # the same matrix at every scale
    else:
        k = kn.Matern(nu=k.nu, length_scale=scale)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        K = devices.gram_block(k, xp.asarray(scale * X), xp.asarray(scale * Y), xp=xp)
    np.testing.assert_allclose(np.asarray(K), k(X * scale, Y * scale), rtol=1e-12, atol=1e-14)
    assert np.asarray(K)[0, 0] == 1.0
    far = kn.Matern(nu=2.5) if isinstance(k, kn.Matern) else kn.RBF(0.5)
    K = devices.gram_block(far, xp.asarray(1e200 * X), xp.asarray(1e200 * Y), xp=xp)
    np.testing.assert_array_equal(np.asarray(K), far(1e200 * X, 1e200 * Y))  # 1 at (0, 0)


@pytest.mark.parametrize("gamma", [1e13, 1e15])
def test_array_api_rbf_block_with_a_huge_gamma_recomputes_near_pairs(gamma):
    # the expansion's round-off, ε·γ‖x‖², is the whole exponent near the diagonal: with
    # γ = 1e15 on data of spread 10 the block against a copy of X had 1e-28 on its diagonal
    # where the numpy path (and the exact kernel) has 1
    xp = pytest.importorskip("array_api_strict")
    from kernelcourse import devices

    rng = np.random.default_rng(0)
    X = 10 * rng.normal(size=(30, 3))
    X = np.vstack([X, X[:3] + 1e-8])  # near duplicates: exp(−γ · 3e-16) in (0, 1)
    K = devices.gram_block(kn.RBF(gamma), xp.asarray(X), xp.asarray(X.copy()), xp=xp)
    np.testing.assert_allclose(np.asarray(K), kn.RBF(gamma)(X, X), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("nu", [0.5, 1.5, 2.5])
@pytest.mark.parametrize("scale", [1e7, 1e100])
def test_array_api_matern_block_recomputes_near_pairs(nu, scale):
    # √ of the expansion's round-off at a pair of equal rows, √ε‖x‖, is 0.1 at ‖x‖ = 1e7: the
    # block against a copy of X had K(x, x) < 1 (0 at 1e100) where the numpy path has 1
    xp = pytest.importorskip("array_api_strict")
    from kernelcourse import devices

    X = scale * np.random.default_rng(0).normal(size=(20, 3))
    k = kn.Matern(nu)
    K = devices.gram_block(k, xp.asarray(X), xp.asarray(X.copy()), xp=xp)
    np.testing.assert_allclose(np.asarray(K), k(X, X), rtol=1e-12, atol=1e-14)


def _gram_by(library):
    """K(X, X) as a numpy array, by the kernel itself ("numpy") or by the array-API path on
    the named library."""
    if library == "numpy":
        return lambda k, X: k(X)
    xp = pytest.importorskip(library)
    from kernelcourse import devices

    return lambda k, X: np.asarray(devices.gram_block(k, xp.asarray(X), xp=xp))


@pytest.mark.parametrize("library", ["numpy", "array_api_strict"])
def test_near_pairs_of_duplicated_data_are_recomputed_in_bounded_memory(library, monkeypatch):
    # two points repeated 200 times each: 80 000 of the block's pairs are near. The device
    # path took all their differences at once, (pairs, d) floats: 21 GB at 3000 rows of
    # dimension 200
    import tracemalloc

    gram = _gram_by(library)
    monkeypatch.setattr(kn, "_NEAR_PAIR_CHUNK", 4096)
    rng = np.random.default_rng(0)
    X = np.repeat(rng.normal(size=(2, 64)), 200, axis=0)
    k = kn.Matern(nu=0.5)
    tracemalloc.start()
    K = gram(k, X)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 20 * 2**20  # all differences at once: 80 000 × 64 floats, 41 MB each
    same = np.equal.outer(np.arange(400) // 200, np.arange(400) // 200)
    assert (K[same] == 1.0).all()
    np.testing.assert_allclose(K[~same], k(X[:1], X[-1:])[0, 0], rtol=1e-12)


@pytest.mark.parametrize("library", ["numpy", "array_api_strict"])
@pytest.mark.parametrize(
    "dtype,scale",
    [(np.float64, 1e-200), (np.float64, 1e200), (np.float32, 1e-20), (np.float32, 1e-30)]
    + [(np.float32, 1e20), (np.float32, 1e30)],
)
def test_shift_invariant_kernels_are_scale_free_at_any_magnitude(library, dtype, scale):
    # K(c·x, c·y) with length c·ℓ (γ/c² for the RBF) is K(x, y): the squares of data at
    # 1e-200 (1e-20 in float32) underflowed, and Matérn was 1 everywhere; float32 data at
    # 1e20 raised "overflows"; and γ = 3e39, beyond float32, was inf on the array-API path
    gram = _gram_by(library)
    X = np.random.default_rng(0).normal(size=(20, 3))
    pairs = [(kn.Matern(nu, length_scale=scale), kn.Matern(nu)) for nu in (0.5, 1.5, 2.5)]
    if 1e-300 < 0.3 / scale / scale < 1e300:  # γ itself in float64's range
        pairs.append((kn.RBF(0.3 / scale / scale), kn.RBF(0.3)))
    Xs = (scale * X).astype(dtype)
    atol = 1e-13 if dtype == np.float64 else 1e-5
    for scaled, unit in pairs:
        K = gram(scaled, Xs)
        assert K.dtype == dtype
        np.testing.assert_allclose(K, unit(X), atol=atol, err_msg=repr(scaled))


def test_array_api_cosine_block_of_huge_rows():
    # ‖x‖² of rows beyond 1e154 overflowed: the normalised rows, and the block, were 0
    xp = pytest.importorskip("array_api_strict")
    from kernelcourse import devices

    X = np.random.default_rng(0).normal(size=(10, 3))
    X[0] = 0.0  # a zero row stays a zero row of the block
    for scale in (1.0, 1e160, 1e300):
        K = devices.gram_block(kn.Cosine(), xp.asarray(scale * X), xp=xp)
        np.testing.assert_allclose(np.asarray(K), kn.Cosine()(X), rtol=1e-12, atol=1e-15)


def test_kernel_ridge_on_huge_inputs_agrees_on_the_array_api_path(monkeypatch):
    # at 1e200 the RBF Gram matrix is I: α = y / (1 + λ), on both paths (the array-API path
    # raised a LinAlgError from a Gram matrix of NaN)
    xp = pytest.importorskip("array_api_strict")
    import sklearn

    monkeypatch.setenv("SCIPY_ARRAY_API", "1")
    rng = np.random.default_rng(1)
    X, y = 1e200 * rng.normal(size=(30, 2)), rng.normal(size=30)
    model = KernelRidge(kernel="rbf", gamma=0.5, lam=0.5)
    np.testing.assert_allclose(model.fit(X, y).predict(X), y / 1.5, rtol=0, atol=1e-14)
    with sklearn.config_context(array_api_dispatch=True):
        got = model.fit(xp.asarray(X), xp.asarray(y)).predict(xp.asarray(X))
    np.testing.assert_allclose(np.asarray(got), y / 1.5, rtol=0, atol=1e-14)


def test_nystroem_on_an_overflowing_gram_is_a_value_error_not_linalg_error():
    # exp(xᵀy) overflows for inputs of size 20: a clear error before any eigendecomposition
    X = 20 * np.random.default_rng(0).normal(size=(30, 4))
    with pytest.raises(ValueError, match=r"exp\(Linear\(\)\).*X.*overflows"):
        Nystroem(kernel=kn.exp(kn.Linear()), n_components=10, random_state=0).fit(X)


# -- rerun of the extreme-but-valid inputs: solvers, helpers, float32 -----------------------------
def _spd(n=30, cond=1e3, seed=0):
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.normal(size=(n, n)))
    return (Q * np.logspace(0, math.log10(cond), n)) @ Q.T


@pytest.mark.parametrize("c", [1e-150, 1.0, 1e150])
def test_block_cg_solves_systems_at_any_scale(c):
    # H and B both scaled by c: pᵀHp was c³ (0 or infinity) and the solution came back 0
    A, B = _spd(), np.random.default_rng(1).normal(size=(30, 3))
    result = block_cg(lambda P: (c * A) @ P, c * B, tol=1e-12, max_iter=200)
    assert result.status == "converged"
    np.testing.assert_allclose(result.x, np.linalg.solve(A, B), rtol=1e-8, atol=0)
    tiny = block_cg(lambda P: A @ P, 1e-300 * B, tol=1e-12, max_iter=200)
    np.testing.assert_allclose(tiny.x, 1e-300 * np.linalg.solve(A, B), rtol=1e-8, atol=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x, _ = conjugate_gradient(lambda v: c * (A @ v), c * B[:, 0], tol=1e-12, max_iter=200)
    np.testing.assert_allclose(x, np.linalg.solve(A, B[:, 0]), rtol=1e-8)


def test_cholesky_jitter_is_relative_to_the_matrix():
    A = 1e-150 * _spd()
    T, shift = cholesky_jitter(A.copy())
    assert 0 < shift <= 1e-12 * np.abs(A).max()  # was 6.7e-15, 1e133 times A
    np.testing.assert_allclose(T.T @ T, A, rtol=1e-10, atol=1e-10 * np.abs(A).max())


def test_sparse_ridge_cg_intercept_with_targets_far_from_zero():
    Z = sp.random(200, 50, density=0.1, random_state=0, format="csr")
    y = (np.random.default_rng(0).normal(size=200) + 1e9) - 1e9  # y and y + 1e9 both exact
    w0, b0, _ = sparse_ridge_cg(Z, y, 1.0, tol=1e-12, max_iter=5000, fit_intercept=True)
    w, b, _ = sparse_ridge_cg(Z, y + 1e9, 1.0, tol=1e-12, max_iter=5000, fit_intercept=True)
    np.testing.assert_allclose(w, w0, atol=1e-8)  # was off by 1.2e-2, silently
    np.testing.assert_allclose(b, b0 + 1e9, rtol=1e-15)


@pytest.mark.parametrize("scale", [1e-200, 1e200])
def test_rkhs_norm_and_inner_of_tiny_and_huge_coefficients(scale):
    X = np.random.default_rng(0).normal(size=(20, 2))
    c = np.random.default_rng(1).normal(size=20)
    K = kn.RBF(0.5)(X)
    f = RKHSFunction(kn.RBF(0.5), X, scale * c)
    ref = math.sqrt(c @ K @ c)
    assert f.norm() == pytest.approx(scale * ref, rel=1e-12, abs=0)  # was 0 and NaN
    g = RKHSFunction(kn.RBF(0.5), X, c / scale)
    assert f.inner(g) == pytest.approx(ref**2, rel=1e-12, abs=0)


def test_gaussian_mercer_with_a_tiny_measure():
    # σ = 1e-100: a = 1/(4σ²) used to overflow in a² (all NaN)
    m = GaussianMercer(gamma=0.5, sigma=1e-100, n_terms=5)
    x = np.array([[0.3e-100], [-0.4e-100]])
    np.testing.assert_allclose(m.kernel_approximation(x), np.ones((2, 2)), atol=1e-12)
    # and the rewritten constants give the closed form at σ = 1
    a, b = 0.25, 0.5
    c = math.sqrt(a * a + 2 * a * b)
    A = a + b + c
    ref = math.sqrt(2 * a / A) * (b / A) ** np.arange(5)
    np.testing.assert_allclose(
        GaussianMercer(gamma=0.5, sigma=1.0, n_terms=5).eigenvalues, ref, rtol=1e-14
    )


def test_string_exp_overflow_is_a_clear_error():
    k = string_exp(SpectrumKernel(k=2))
    with pytest.raises(ValueError, match="overflows"):
        k(["AAAA" * 500])  # exp(K(x, x)) = exp(1999²): was infinity with a RuntimeWarning
    np.testing.assert_allclose(k(["ACGT"]), [[math.exp(3.0)]])


def test_weighted_degree_kernel_of_high_degree():
    # degree 20 on DNA indexes 10¹³ columns: the Gram asked numpy for 228 TiB
    k = WeightedDegreeKernel(degree=20)
    s = ["ACGT" * 10, "ACGA" * 10, "TTGC" * 10]
    ref = [
        [
            sum(
                k.eta[d - 1] * sum(a[i : i + d] == b[i : i + d] for i in range(len(a) - d + 1))
                for d in range(1, 21)
            )
            for b in s
        ]
        for a in s
    ]
    np.testing.assert_allclose(k(s), ref, rtol=1e-12)
    np.testing.assert_allclose(k(s[:1], s), [ref[0]], rtol=1e-12)
    low = WeightedDegreeKernel(degree=3)
    np.testing.assert_allclose(low(s), (low.feature_map(s) @ low.feature_map(s).T).toarray())
    with pytest.raises(ValueError, match="degree=40"):
        WeightedDegreeKernel(degree=40)(["ACGT" * 10])


def test_uniform_bounds_with_huge_diameter():
    # (2⁵ σ_p d_X / ε)² of 1e600 raised OverflowError; the bound is computed in logarithms
    eps = uniform_deviation(D=10, delta=1e-300, d=1000, diameter=1e150, sigma_p=1e150)
    assert math.isfinite(eps)
    assert uniform_bound(10, eps, 1000, 1e150, 1e150) == pytest.approx(1e-300, rel=1e-6)
    assert uniform_bound(D=10**5, eps=0.1, d=2, diameter=2.0, sigma_p=1.0) == pytest.approx(
        (32 * 2.0 / 0.1) ** 2 * math.exp(-(10**5) * 0.01 / 16), rel=1e-12
    )


@pytest.mark.filterwarnings("ignore:NystroemKRR. conjugate gradients stopped")  # float32 floor
def test_float32_estimators_on_float64_data_far_from_origin():
    # dtype=float32 rounded 1e6 ± 1 to steps of 1/16 before the kernel: off by 2e-2
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    y = np.sin(X[:, 0])
    p64 = KernelRidge(gamma=0.5, lam=0.1).fit(X, y).predict(X)
    m32 = KernelRidge(gamma=0.5, lam=0.1, dtype=np.float32).fit(X + 1e6, y)
    assert m32.dual_coef_.dtype == np.float32
    np.testing.assert_allclose(m32.predict(X + 1e6), p64, atol=1e-4)
    kw = dict(gamma=0.5, lam=1e-3, n_components=60, max_iter=200, tol=1e-12, random_state=0)
    n64 = NystroemKRR(**kw).fit(X, y).predict(X)
    n32 = NystroemKRR(dtype=np.float32, **kw).fit(X + 1e6, y)
    np.testing.assert_allclose(n32.predict(X + 1e6), n64, atol=2e-3)  # was 1.2e-2
    for est in (NystroemKRR(dtype=np.float32, **kw), KernelRidge(dtype=np.float32)):
        # 1e150 is beyond float32: say so (it was "the centres contains NaN or infinity")
        with pytest.raises(ValueError, match="X has entries of magnitude .* dtype=float32"):
            est.fit(X * 1e150, y)


def test_array_api_float32_kernel_ridge_on_float64_data_far_from_origin(monkeypatch):
    # the array-API path cast X to float32 before centring it: at 1e6 from the origin the
    # points kept 3 digits and the predictions moved by 1e-2 (the numpy path centres first)
    xp = pytest.importorskip("array_api_strict")
    import sklearn

    monkeypatch.setenv("SCIPY_ARRAY_API", "1")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    y = np.sin(X[:, 0])
    ref = KernelRidge(gamma=0.5, lam=1e-3).fit(X, y).predict(X)
    model = KernelRidge(gamma=0.5, lam=1e-3, dtype=np.float32)
    with sklearn.config_context(array_api_dispatch=True):
        Xd = xp.asarray(X + 1e6)
        got = np.asarray(model.fit(Xd, xp.asarray(y)).predict(Xd))
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-5)


def test_array_api_float32_nystroem_krr_on_float64_data_far_from_origin(monkeypatch):
    # as for KernelRidge: the centres and blocks were cast before centring, and 1e6 from the
    # origin the predictions moved by 3e-2
    xp = pytest.importorskip("array_api_strict")
    import sklearn

    monkeypatch.setenv("SCIPY_ARRAY_API", "1")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 2))
    y = np.sin(X[:, 0])
    kw = dict(gamma=0.5, lam=1e-3, n_components=30, random_state=0, max_iter=100, tol=1e-8)
    ref = NystroemKRR(**kw).fit(X, y).predict(X)
    model = NystroemKRR(dtype=np.float32, **kw)
    with sklearn.config_context(array_api_dispatch=True):
        Xd = xp.asarray(X + 1e6)
        got = np.asarray(model.fit(Xd, xp.asarray(y)).predict(Xd))
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-4)
    centres = X[np.asarray(model.center_indices_)] + 1e6
    np.testing.assert_array_equal(np.asarray(model.centers_), centres)


def test_smo_solve_warns_when_the_gram_is_below_its_curvature_floor():
    X = np.random.default_rng(0).normal(size=(40, 2))
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    with pytest.warns(RuntimeWarning, match="gram's largest diagonal entry is 1e-150"):
        smo_solve(1e-150 * kn.RBF(0.5)(X), y, 1e150)


@pytest.mark.parametrize("scale", [1e80, 1e150])
def test_primal_svc_on_huge_features_solves_the_same_problem(scale):
    # ‖Hp‖ of the Newton system I + 2C ZᵀZ overflowed float64 for Z of order 1e80, so CG
    # saw an infinite ‖H‖, stopped at once and returned w = 0 (accuracy of a constant)
    from kernelcourse.svm import PrimalSVC

    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 5))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=200) > 0, 1, -1)
    ref = PrimalSVC(C=1.0, fit_intercept=False).fit(X * 1e20, y)
    big = PrimalSVC(C=1.0, fit_intercept=False).fit(X * scale, y)
    np.testing.assert_allclose(big.coef_ * scale, ref.coef_ * 1e20, rtol=1e-6)
    np.testing.assert_array_equal(big.predict(X * scale), ref.predict(X * 1e20))


def test_block_cg_with_an_operator_of_order_1e160():
    from kernelcourse.solvers import block_cg

    rng = np.random.default_rng(0)
    A = rng.normal(size=(30, 30))
    H = (A @ A.T + 30 * np.eye(30)) * 1e160
    b = rng.normal(size=(30, 1))
    result = block_cg(lambda P: H @ P, b, max_iter=100, tol=1e-10)
    np.testing.assert_allclose(H @ result.x, b, rtol=0, atol=1e-8)


@pytest.mark.parametrize("loss", ["hinge", "squared_hinge"])
def test_primal_svc_refuses_a_scale_that_overflows(loss):
    from kernelcourse.svm import PrimalSVC

    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 5))
    y = (X[:, 0] > 0).astype(int)
    # the squared norms of the rows overflow: the solvers stopped at once with w = 0
    with pytest.raises(ValueError, match="X is too large in magnitude"):
        PrimalSVC(loss=loss).fit(X * 1e155, y)
    # C · Σ‖z_i‖² overflows
    with pytest.raises(ValueError, match="lower C or rescale X"):
        PrimalSVC(loss=loss, C=1e305).fit(X, y)
    # just inside the range both still fit (squared gradient norms beyond it are scaled)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        model = PrimalSVC(loss=loss, C=1e300, max_iter=10**5, random_state=0).fit(X, y)
    assert model.score(X, y) == 1.0


def test_kernel_svc_checks_a_precomputed_gram_matrix():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    y = (X[:, 0] > 0).astype(int)
    K = kn.RBF(gamma=0.5)(X)
    bad = K.copy()
    bad[0, 1] += 5.0
    with pytest.raises(ValueError, match=r"X \(the precomputed Gram matrix\) is not symmetric"):
        KernelSVC(kernel="precomputed").fit(bad, y)
    with pytest.raises(ValueError, match="negative diagonal entry"):
        KernelSVC(kernel="precomputed").fit(-K, y)
    assert KernelSVC(kernel="precomputed").fit(K, y).score(K, y) > 0.9


def test_tiny_accuracies_and_widths_are_refused_by_name():
    from kernelcourse.bounds import features_needed, hoeffding_features

    # a², ε² and σ² underflowed to 0 and raised a bare ZeroDivisionError
    with pytest.raises(ValueError, match="a = 1e-300 is too small"):
        hoeffding_features(1e-300, 0.1)
    with pytest.raises(ValueError, match="a = 1e-160 is too small"):
        hoeffding_features(1e-160, 0.1)
    with pytest.raises(ValueError, match="eps = 1e-300 is too small"):
        features_needed(eps=1e-300, delta=0.1, d=3, diameter=2.0, sigma_p=1.0)
    with pytest.raises(ValueError, match="sigma = 1e-200 is too small"):
        GaussianMercer(gamma=1.0, sigma=1e-200, n_terms=5)
    assert hoeffding_features(1e-100, 0.1) > 10**200  # still an exact integer where it fits


def test_huge_targets_and_traces_raise_no_numpy_overflow():
    from kernelcourse.bounds import rademacher_bound
    from kernelcourse.ridge import RidgeRegression

    X = np.random.default_rng(0).normal(size=(50, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's bare "overflow encountered" included
        # the trace of 3·10³⁰⁸ overflows; its root does not
        assert rademacher_bound(np.eye(3) * 1e308, 1.0) == pytest.approx(math.sqrt(1e308 / 3))
        # ‖y‖² overflows: the accuracy check of the solve used to be skipped with a warning
        big = RidgeRegression(1.0).fit(X, X[:, 0] * 1e160).coef_
    small = RidgeRegression(1.0).fit(X, X[:, 0]).coef_
    np.testing.assert_allclose(big / 1e160, small, rtol=1e-10)


@pytest.mark.parametrize("inputs", ["numpy", "array-api-strict"])
def test_float32_falkon_warns_when_its_rounding_moves_the_predictions(inputs, monkeypatch):
    # as many centres as points, close together, and a tiny λ: α is large, and the float32
    # kernel's rounding moves the predictions by a seventh of the targets' spread. The
    # warning ran on numpy inputs only; array-API inputs have float32 blocks too.
    import sklearn
    from sklearn.exceptions import ConvergenceWarning

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    y = np.sin(2 * X[:, 0]) + 3
    if inputs != "numpy":
        xp = pytest.importorskip("array_api_strict")
        monkeypatch.setenv("SCIPY_ARRAY_API", "1")
        X, y = xp.asarray(X), xp.asarray(y)
    kw = dict(gamma=0.2, n_components=300, max_iter=300, tol=1e-10, random_state=0)
    with warnings.catch_warnings(), sklearn.config_context(array_api_dispatch=inputs != "numpy"):
        warnings.simplefilter("ignore", ConvergenceWarning)
        with pytest.warns(RuntimeWarning, match=r"rounding of the float32 kernel .*√M·κ²·‖α‖"):
            NystroemKRR(lam=1e-7, dtype=np.float32, **kw).fit(X, y)
        warnings.simplefilter("error", RuntimeWarning)
        NystroemKRR(lam=1e-7, dtype=np.float64, **kw).fit(X, y)  # float64: fine
        NystroemKRR(lam=1e-2, dtype=np.float32, **kw).fit(X, y)  # a larger λ: fine


@pytest.mark.parametrize("precompute", [True, False])
def test_float64_falkon_warns_when_lam_is_below_the_round_off_of_its_kernel(precompute):
    # a linear kernel on data of order 1e6 (entries 1e12) with λ = 1e-6 and ten centres in
    # three dimensions: the system is singular to round-off, and the precomputed fit
    # predicted up to 6 times the targets' spread away from the same fit at scale 1, in
    # silence (its residual is measured on the same rounded system)
    from sklearn.exceptions import ConvergenceWarning

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(50, 3)), rng.normal(size=50)
    kw = dict(kernel="linear", n_components=10, precompute=precompute, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        with pytest.warns(RuntimeWarning, match=r"rounding of the float64 kernel .*Raise lam"):
            NystroemKRR(**kw).fit(1e6 * X, y)
        warnings.simplefilter("error", RuntimeWarning)
        NystroemKRR(**kw).fit(X, y)  # at scale 1 λ is far above the round-off: silent


def test_falkon_says_why_its_system_lost_definiteness():
    # ten centres in three dimensions with λ = 1e-20: the system is singular to round-off,
    # and CG's "pᵀHp < 0 ... need a symmetric positive definite H" did not say that FALKON's
    # system is definite in exact arithmetic, nor what to change
    from kernelcourse.solvers import NotPositiveDefiniteError

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(50, 3)), rng.normal(size=50)
    model = NystroemKRR(kernel="linear", n_components=10, lam=1e-20, random_state=0)
    with pytest.raises(NotPositiveDefiniteError, match=r"pᵀHp = .*lam=1e-20 .*Raise lam"):
        model.fit(X, y)


def test_float32_falkon_takes_its_right_hand_side_from_the_kernel_entries_of_its_system():
    # K_nMᵀy came from row blocks computed one way and CG's products from tiles computed
    # another: their float32 roundings differed, 1/λ magnified the mismatch, and the
    # predictions of this fit were off by 21 times the targets' spread (now by 3 %)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    y = np.sin(2 * X[:, 0]) + 3
    X_new = rng.normal(size=(500, 2))
    kw = dict(gamma=0.5, n_components=60, max_iter=200, tol=1e-10, random_state=0)
    f32 = NystroemKRR(lam=1e-6, dtype=np.float32, **kw).fit(X, y).predict(X_new)
    f64 = NystroemKRR(lam=1e-6, dtype=np.float64, **kw).fit(X, y).predict(X_new)
    assert np.abs(f32 - f64).max() < 0.05 * y.std()


# -- functional API fuzzed with bad and extreme inputs ---------------------------------------------
@pytest.mark.parametrize(
    "make, name",
    [
        (lambda v: kn.RBF(v), "gamma"),
        (lambda v: kn.Laplacian(v), "gamma"),
        (lambda v: kn.Matern(length_scale=v), "length_scale"),
        (lambda v: kn.Polynomial(gamma=v), "gamma"),
        (lambda v: kn.Polynomial(coef0=v), "coef0"),
        (lambda v: kn.Constant(v), "c"),
        (lambda v: kn.Scaled(v, kn.RBF(1.0)), "c"),
        (lambda v: v * kn.RBF(1.0), "c"),
    ],
)
def test_integers_beyond_the_float_range_are_refused_by_name(make, name):
    # float(10**400) raised a bare OverflowError; Scaled raised numpy's ufunc TypeError
    with pytest.raises(ValueError, match=rf"^{name} must be a finite number"):
        make(10**400)


def test_matern_refuses_a_huge_integer_nu_by_name():
    with pytest.raises(ValueError, match="nu must be one of"):
        kn.Matern(nu=10**400)


@pytest.mark.parametrize("weights", [lambda X: np.full(len(X), 1j), lambda X: ["a"] * len(X)])
def test_weighting_function_must_return_real_weights(weights):
    # complex weights lost their imaginary part with only numpy's ComplexWarning; strings
    # gave "could not convert string to float"
    X = np.random.default_rng(0).normal(size=(4, 2))
    with pytest.raises(TypeError, match="f must return real weights"):
        kn.weighted(kn.RBF(1.0), weights)(X)


def test_polynomial_feature_map_too_large_for_memory_says_so():
    # D = C(120, 20) ≈ 3e22 columns: numpy's "Maximum allowed dimension exceeded" before
    with pytest.raises(MemoryError, match="feature map of Polynomial.*lower the degree"):
        kn.Polynomial(degree=20).feature_map(np.ones((2, 100)))


@pytest.mark.parametrize("n_features, error", [(0, ValueError), (-3, ValueError), ("a", TypeError)])
def test_resolve_kernel_checks_n_features_by_name(n_features, error):
    # 0 silently gave gamma = 1, -3 blamed gamma, "a" raised an operand TypeError
    with pytest.raises(error, match="n_features must be an integer"):
        kn.resolve_kernel("rbf", n_features=n_features)


def test_bump_features_of_rows_near_the_largest_float():
    # centring and scaling computed 2**1024 (OverflowError) for rows of 1.7e308
    X = np.random.default_rng(0).normal(size=(20, 3))
    rks = RandomKitchenSinks(basis="bump", random_state=0).fit(X)
    Psi = rks.transform(np.full((2, 3), 1.7e308))
    np.testing.assert_array_equal(Psi, 0.0)  # far from every bump centre
    np.testing.assert_allclose(kn.distances(np.array([[1.7e308], [-1.0e308]]))[0, 1], np.inf)


@pytest.mark.parametrize(
    "kernel, points",
    [(kn.Constant(0.0), np.ones((5, 1))), (kn.Linear(), np.zeros((5, 2)))],
)
def test_mercer_expansion_of_a_zero_gram_matrix_says_so(kernel, points):
    # no eigenvalue above round-off: an IndexError from the warning's message before
    with pytest.raises(ValueError, match="no eigenvalue above round-off"):
        mercer_expansion(kernel, points, 1)


def test_mercer_expansion_weights_of_any_scale_and_checked_by_name():
    u = np.random.default_rng(0).normal(size=(50, 1))
    ref = mercer_expansion(kn.RBF(0.5), u, 3)
    # weights of 1e308 each: their sum overflowed, every weight became 0 (an IndexError)
    big = mercer_expansion(kn.RBF(0.5), u, 3, weights=np.full(50, 1e308))
    np.testing.assert_allclose(big.eigenvalues, ref.eigenvalues, rtol=1e-12)
    # complex weights lost their imaginary part silently, text raised numpy's message
    with pytest.raises(TypeError, match="weights must be real-valued"):
        mercer_expansion(kn.RBF(0.5), u, 3, weights=np.ones(50) + 1j)
    with pytest.raises(TypeError, match="weights must be numeric"):
        mercer_expansion(kn.RBF(0.5), u, 3, weights=["a"] * 50)


def test_gaussian_mercer_with_a_huge_sigma_or_many_features():
    # 1/(4σ²) underflowed to 0: ZeroDivisionError
    with pytest.raises(ValueError, match="sigma = 1e\\+300 is too large"):
        GaussianMercer(gamma=1.0, sigma=1e300, n_terms=3)
    # the multi-indices were enumerated recursively, one level per feature: RecursionError
    m = GaussianMercer(gamma=1.0, sigma=1.0, n_terms=3, n_features=2000)
    assert m.multi_indices.shape == (3, 2000)
    np.testing.assert_array_equal(m.multi_indices.sum(axis=1), [0, 1, 1])


def test_gaussian_mercer_eigenfunctions_far_in_the_tails_raise_not_nan():
    # the Hermite recurrence overflowed to inf, its envelope to 0: NaN with numpy warnings
    m = GaussianMercer(gamma=1.0, sigma=1.0, n_terms=50)
    with pytest.raises(ValueError, match="eigenfunctions overflow.*fewer n_terms"):
        m.eigenfunctions(np.full((2, 1), 1e10))


def test_rkhs_values_beyond_the_float_range_raise():
    # coefficients of 1e308: f(X), ‖f‖ and ⟨f, f⟩ were inf (numpy warning at most)
    X = np.random.default_rng(0).normal(size=(5, 2))
    f = RKHSFunction(kn.RBF(1.0), X, np.full(5, 1e308))
    with pytest.raises(ValueError, match="value of f overflows"):
        f(X)
    with pytest.raises(ValueError, match="RKHS norm overflows"):
        f.norm()
    with pytest.raises(ValueError, match="inner product overflows"):
        f.inner(f)


@pytest.mark.parametrize("D, d", [(1e30, 2), (1e300, 2)])
def test_uniform_deviation_solves_beyond_its_old_bracket(D, d):
    # the bisection ran in [1e-12, 1e12] and returned an end of it: 1e-12 for D = 1e30
    eps = uniform_deviation(D=D, delta=0.05, d=d, diameter=2.0, sigma_p=1.0)
    assert uniform_bound(D, eps, d, 2.0, 1.0) == pytest.approx(0.05, rel=1e-6)


def test_bounds_refuse_integers_beyond_the_float_range_and_overflowing_results():
    from kernelcourse.bounds import hoeffding_bound, rademacher_bound

    with pytest.raises(ValueError, match="D must be a finite number"):
        hoeffding_bound(10**400, 0.1)  # float(10**400): OverflowError
    # c √top √tr K / n overflowed in c √top first: inf for a representable 7e307
    assert rademacher_bound(np.eye(2), 1e308) == pytest.approx(1e308 / math.sqrt(2))
    with pytest.raises(ValueError, match="beyond the float range"):
        rademacher_bound(np.array([[4.0]]), 1e308)


def test_spectral_measures_check_their_arguments_by_name():
    from kernelcourse.spectral import CauchyProductMeasure, GaussianMeasure, StudentTMeasure

    # second_moment(d) took any d: -2 for d = -1
    for p in (GaussianMeasure(1.0), CauchyProductMeasure(1.0), StudentTMeasure(2.5, 1.0)):
        with pytest.raises(ValueError, match="d must be an integer >= 1"):
            p.second_moment(-1)
    # with a kernel given, gamma went unchecked (math domain error), and so did mass
    with pytest.raises(ValueError, match="gamma must be a finite number > 0"):
        GaussianMeasure(-1.0, kernel=kn.RBF(1.0))
    with pytest.raises(ValueError, match="mass must be a finite number > 0"):
        GaussianMeasure(1.0, mass=-1.0)
    # sklearn's "Seed must be between 0 and 2**32 - 1" did not say which argument
    with pytest.raises(ValueError, match="^random_state: "):
        GaussianMeasure(1.0).sample(3, 2, random_state=-1)


def test_spectral_samples_that_overflow_raise():
    from kernelcourse.spectral import spectral_measure

    # σ = √(2γ) overflowed for γ near the float range: frequencies of inf, silently
    with pytest.raises(ValueError, match="frequencies drawn for RBF.*overflow"):
        spectral_measure(kn.RBF(1.7e308)).sample(3, 2, random_state=0)
    # numpy's "Unable to allocate 14.6 TiB" did not name n
    with pytest.raises(MemoryError, match="sampling n=1000000000000 frequencies"):
        spectral_measure(kn.RBF(1.0)).sample(10**12, 2, random_state=0)


def test_spectrum_kernel_of_long_kmers_uses_only_the_kmers_present():
    # 4**30 possible 30-mers: the sparse product indexed every one ("array is too big";
    # from k = 16 on DNA tens of gigabytes)
    from collections import Counter

    X = ["ACGT" * 10, "ACGT" * 9 + "ACGA"]
    counts = [Counter(s[i : i + 30] for i in range(len(s) - 29)) for s in X]
    expected = [[sum(a[u] * b[u] for u in a) for b in counts] for a in counts]
    np.testing.assert_array_equal(SpectrumKernel(k=30)(X), expected)


def test_string_kernels_treat_lone_surrogates_as_unknown_characters():
    # str.encode("utf-32-le") raised UnicodeEncodeError, which named no sequence
    with pytest.raises(ValueError, match="sequence 0 contains characters"):
        SpectrumKernel(k=2)(["AC\ud800T", "ACGT"])
    K = SpectrumKernel(k=2, unknown="skip")(["AC\ud800GT", "ACGT"])
    np.testing.assert_array_equal(K, [[2.0, 2.0], [2.0, 3.0]])


@pytest.mark.parametrize(
    "basis, order, magnitude",
    [("cosine", 1, 1.7e308), ("relu", 1, 1.7e308), ("arccos", 0, 1.7e308), ("arccos", 2, 1e200)],
)
def test_kitchen_sinks_that_overflow_say_so(basis, order, magnitude):
    # cos(inf) was NaN, a ReLU of inf infinite, (w^T x)^2 infinite from 1e200: numpy's
    # warnings only; order 0 turned NaN projections into 0 silently
    X = np.random.default_rng(0).normal(size=(20, 3))
    rks = RandomKitchenSinks(basis=basis, order=order, random_state=0).fit(X)
    Z = np.full((2, 3), magnitude)
    Z[1] *= -1.0
    Z[:, 0] *= -1.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match=r"on X \(largest \|entry\| .*\) overflow"):
            rks.transform(Z)


def test_kitchen_sinks_scale_that_overflows_says_so():
    X = np.random.default_rng(0).normal(size=(20, 3))
    with pytest.raises(ValueError, match="scale=1.7e\\+308 times the drawn"):
        RandomKitchenSinks(scale=1.7e308, random_state=0).fit(X)
    rks = RandomKitchenSinks(scale=1e300, random_state=0).fit(X)
    # finite, and said to be rounding noise: no float64 resolves the phase of 1e300
    with pytest.warns(RuntimeWarning, match="cannot resolve their phase"):
        assert np.isfinite(rks.transform(X)).all()
    with pytest.raises(ValueError, match="rescale X .* or lower scale=1e\\+300"):
        rks.transform(1e10 * X)


def test_random_binning_with_too_many_grids_for_memory_says_so():
    # n_grids=10**9 drew (P, d) pitches and a list of P cell arrays until the process was killed
    from kernelcourse.features import RandomBinningFeatures

    X = np.random.default_rng(0).normal(size=(10, 3))
    with pytest.raises(MemoryError, match="random binning with n_grids=1000000000000 .*n_grids"):
        RandomBinningFeatures(n_grids=10**12, random_state=0).fit(X)


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        # the imaginary part was dropped with only numpy's ComplexWarning
        ({"matvec": lambda v: (1 + 1j) * v}, TypeError, "matvec returned dtype complex128"),
        # "could not convert string to float"
        ({"matvec": lambda v: np.array(["a"] * len(v))}, TypeError, "matvec returned dtype <U1"),
        (
            {"matvec": lambda v: v, "preconditioner": lambda r: r + 0j},
            TypeError,
            "preconditioner returned dtype complex128",
        ),
        # numpy's "cannot reshape array of size 3 into shape (4,1)"
        (
            {"matvec": lambda v: v, "preconditioner": lambda r: r[:3]},
            ValueError,
            r"preconditioner returned shape \(3,\) for an input of shape \(4,\)",
        ),
        # was "matvec returned NaN or infinity"
        (
            {"matvec": lambda v: v, "preconditioner": lambda r: r * np.nan},
            ValueError,
            "^preconditioner returned NaN or infinity",
        ),
    ],
)
def test_conjugate_gradient_names_the_callable_that_returned_bad_values(kwargs, error, message):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(error, match=message):
            conjugate_gradient(b=np.arange(1.0, 5.0), **kwargs)


@pytest.mark.parametrize("scale, b_scale", [(1e-320, 1.0), (1e-310, 1e-20)])
def test_conjugate_gradient_says_when_its_steps_overflow(scale, b_scale):
    # "matvec returned NaN or infinity" (and numpy's overflow warnings), though matvec had
    # returned finite values: the steps rᵀz / pᵀHp of an operator of order 1e-320 overflow
    H = np.diag([1.0, 2.0, 3.0, 4.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(
            ValueError,
            match=r"conjugate gradients overflowed: matvec returns values of order "
            r"\de-3\d\d times its input's.*Rescale H",
        ):
            conjugate_gradient(lambda v: scale * (H @ v), np.full(4, b_scale))
    x, _ = conjugate_gradient(lambda v: 1e-300 * (H @ v), np.ones(4), tol=1e-12)
    np.testing.assert_allclose(x, 1e300 / np.diag(H))


@pytest.mark.parametrize(
    "A, kwargs, error, message",
    [
        (np.eye(3), {"eps": np.nan}, ValueError, "eps must be a finite number > 0"),  # NaN factor
        (np.eye(3), {"eps": -1e-16}, ValueError, "eps must be a finite number > 0"),
        (np.eye(3), {"max_tries": 0}, ValueError, "max_tries must be an integer >= 1"),
        (np.ones(3), {"name": "K_MM"}, ValueError, r"K_MM must be a square matrix, got shape"),
        (np.eye(2) + 0j, {}, TypeError, "A must be a real matrix"),
    ],
)
def test_cholesky_jitter_checks_its_arguments_by_name(A, kwargs, error, message):
    with pytest.raises(error, match=message):
        cholesky_jitter(A, **kwargs)


def test_cholesky_jitter_takes_integer_matrices_and_lists():
    # numpy's finfo refused an int dtype; a list had no .shape (AttributeError)
    for A in (2 * np.eye(3, dtype=np.int64), [[2.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 2.0]]):
        T, shift = cholesky_jitter(A)
        np.testing.assert_allclose(T.T @ T, (2.0 + shift) * np.eye(3))


def test_heavy_tailed_spectral_log_densities_far_in_the_tails():
    # γ² + ω² and ℓ²‖ω‖² overflowed from |ω| = 1.3e154: -inf (numpy warning at most) where
    # the log density is about -1e3; γ or ℓ of 1e155 raised a bare OverflowError (γ**2)
    from kernelcourse.spectral import CauchyProductMeasure, StudentTMeasure

    omega = np.array([[1e160, -3e300]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for g in (1.0, 1e155):
            # log(γ² + ω²) = 2 log|ω| + log1p(γ²/ω²), the last term below 1e-10 here
            ref = sum(math.log(g / math.pi) - 2 * math.log(abs(w)) for w in omega[0])
            assert CauchyProductMeasure(g).logpdf(omega)[0] == pytest.approx(ref, rel=1e-12)
        for ell in (1.0, 1e155, 1e-155):
            # d = 1, 2ν = 3: log p = log Γ(2) - log Γ(3/2) - log(3π)/2 + log ℓ - 2 log(1 + t²),
            # t = ℓ|ω|/√3 ≥ 1e145, so log(1 + t²) = 2 log t to 1e-290
            log_t = math.log(ell) + math.log(3e300) - 0.5 * math.log(3.0)
            ref = -math.lgamma(1.5) - 0.5 * math.log(3 * math.pi) + math.log(ell) - 4 * log_t
            logp = StudentTMeasure(1.5, ell).logpdf(omega[:, 1:])[0]
            assert logp == pytest.approx(ref, rel=1e-12)


def test_spectral_edge_cases_name_their_argument():
    from kernelcourse.spectral import GaussianMeasure, StudentTMeasure

    # characteristic's kernel call said "X is empty"; its argument is Z
    with pytest.raises(ValueError, match="^Z is empty"):
        GaussianMeasure(1.0).characteristic(np.zeros((0, 2)))
    # scipy's "Maximum supported dimensionality is 21201." named no argument
    with pytest.raises(ValueError, match="d=21201 needs 21202 coordinates"):
        StudentTMeasure(1.5, 1.0).sample(4, 21201, method="qmc", qmc_engine="sobol",
                                         random_state=0)
    # ℓ**2 raised OverflowError; d·ν/(ν-1)/ℓ² returned inf for a finite moment of 6e320
    assert StudentTMeasure(1.5, 1e155).second_moment(2) == pytest.approx(6e-310, rel=1e-6)
    with pytest.raises(ValueError, match="second moment .* overflows.*length_scale=1e-160"):
        StudentTMeasure(1.5, 1e-160).second_moment(2)


@pytest.mark.parametrize(
    "form, message",
    [
        (lambda k: k + np.array([1, 2]), r"RBF\(gamma=1.0\) \+ an array of shape \(2,\)"),
        (lambda k: np.array([1, 2]) + k, r"RBF\(gamma=1.0\) \+ an array of shape \(2,\)"),
        (lambda k: np.ones((2, 2)) * k, r"RBF\(gamma=1.0\) \* an array of shape \(2, 2\)"),
        (lambda k: k * "a", r"RBF\(gamma=1.0\) \* an object of type str"),
    ],
)
def test_kernel_algebra_refuses_arrays_and_other_operands(form, message):
    # numpy broadcast an array operand and called __radd__ per entry: an array of kernels
    with pytest.raises(TypeError, match=message):
        form(kn.RBF(1.0))


def test_kernel_algebra_takes_numpy_scalars():
    k = kn.RBF(1.0)
    for c in (np.float64(2.0), np.array(2.0), np.int64(2)):
        assert c * k == kn.Scaled(2.0, k) and k * c == kn.Scaled(2.0, k)
        assert k + c == kn.Sum(k, kn.Constant(2.0))


def test_cubic_feature_map_of_many_features_built_a_block_at_a_time_is_exact():
    # one Python step per column: D = C(1003, 3) = 1.7e8 columns for 1000 features ran for
    # minutes; 200 features (D = 1.4e6) took 30 s, now a fraction of a second (not timed
    # here: the blocks must give the columns of the one-at-a-time map, to the bit)
    import itertools

    X = np.random.default_rng(0).normal(size=(2, 200))
    k = kn.Polynomial(degree=3, gamma=0.5, coef0=1.0)
    F = k.feature_map(X)
    assert F.shape == (2, math.comb(203, 3))
    np.testing.assert_allclose(F @ F.T, k(X), rtol=1e-12)
    # the same columns, in the same order and to the bit, as one monomial at a time
    Z = np.hstack([math.sqrt(0.5) * X, np.ones((2, 1))])
    for j, idx in itertools.islice(
        enumerate(itertools.combinations_with_replacement(range(201), 3)), 0, None, 9973
    ):
        coef = math.factorial(3)
        for c in np.bincount(idx):
            coef //= math.factorial(int(c))
        np.testing.assert_array_equal(F[:, j], math.sqrt(coef) * np.prod(Z[:, idx], axis=1))


@pytest.mark.parametrize(
    "random_state, error", [(-1, ValueError), ("a", TypeError), (1.5, TypeError)]
)
def test_planted_motif_sequences_names_random_state(random_state, error):
    # numpy's "expected non-negative integer" and SeedSequence messages named nothing
    from kernelcourse.strings import planted_motif_sequences

    with pytest.raises(error, match="^random_state: "):
        planted_motif_sequences(3, random_state=random_state)


def test_planted_motif_sequences_too_many_for_memory_says_so():
    # n_per_class=10**12 built sequences until memory ran out
    from kernelcourse.strings import planted_motif_sequences

    with pytest.raises(MemoryError, match="n_per_class=1000000000000 .*lower n_per_class"):
        planted_motif_sequences(10**12, random_state=0)


def test_kmers_refuses_indices_that_are_not_integers():
    # kmers(1.5) gave the k-mer of index 1
    k = SpectrumKernel(k=2)
    with pytest.raises(TypeError, match="indices must be integers, got np.float64\\(1.5\\)"):
        k.kmers(1.5)
    assert k.kmers(np.array([1, 15], dtype=np.int32)) == ["AC", "TT"]
    with pytest.raises(TypeError, match=r"SpectrumKernel\(k=2.*\) \+ an array of shape \(2,\)"):
        k + np.ones(2)


_CODES = np.array([[0, 1, 2], [0, 0, 1]])
_OFFSETS = np.array([0, 3, 5])


@pytest.mark.parametrize(
    "codes, offsets, n_grids, error, message",
    [
        # a code past its grid's block: rmatvec wrote outside the output (segmentation fault),
        # matvec read another grid's (or no) entry and returned a wrong product
        ([[0, 1, 10**6], [0, 0, 1]], _OFFSETS, 2, ValueError, "codes must lie in"),
        ([[0, 1, 3], [0, 0, 1]], _OFFSETS, 2, ValueError, "codes must lie in"),
        ([[0, -2, 1], [0, 0, 1]], _OFFSETS, 2, ValueError, "codes must lie in"),
        ([[0, 1, 2**40], [0, 0, 1]], [0, 3, 2**41], 2, ValueError, "codes must"),
        ([[0.0, 1.5, 2.0], [0.0, 0.0, 1.0]], _OFFSETS, 2, TypeError, "codes must be .*integers"),
        ([0, 1, 2], _OFFSETS, 2, ValueError, r"codes must have shape \(P, n\)"),
        # offsets of the wrong length or negative: the loops read past the offsets array
        (_CODES, [0, 3], 2, ValueError, r"offsets must have shape \(3,\)"),
        (_CODES, [-(10**7), 3, 5], 2, ValueError, "offsets must lie in"),
        (_CODES, [0, 5, 3], 2, ValueError, "offsets must be non-decreasing"),
        (_CODES, [0.0, 3.0, 5.0], 2, TypeError, "offsets must be .*integers"),
        # n_grids 0 or negative: a scale of inf or NaN, every product NaN
        (_CODES, _OFFSETS, 0, ValueError, "n_grids must be an integer >= 1"),
        (_CODES, _OFFSETS, 3, ValueError, "n_grids must be P = 2"),
        (_CODES, _OFFSETS, 2.0, TypeError, "n_grids must be an integer"),
    ],
)
def test_bin_codes_checks_its_arguments_by_name(codes, offsets, n_grids, error, message):
    from kernelcourse.features import BinCodes

    with pytest.raises(error, match=message):
        BinCodes(np.asarray(codes), np.asarray(offsets), n_grids)


def test_bin_codes_products_check_their_operands_by_name():
    from kernelcourse.features import BinCodes

    Z = BinCodes(_CODES, _OFFSETS, 2)
    dense = Z.tocsr().toarray()
    np.testing.assert_allclose(Z @ np.arange(5.0), dense @ np.arange(5.0))
    np.testing.assert_allclose(Z.rmatvec(np.arange(3.0)), dense.T @ np.arange(3.0))
    # a 3-D operand was flattened to 2-D; complex lost its imaginary part with a numpy warning
    with pytest.raises(ValueError, match=r"V must have 5 rows: shape \(5,\) or \(5, k\)"):
        Z @ np.ones((5, 2, 2))
    with pytest.raises(TypeError, match="V must be a real numeric array"):
        Z @ (np.ones(5) + 1j)
    with pytest.raises(TypeError, match="R must be a real numeric array"):
        Z.rmatvec(np.array(["a"] * 3))
    with pytest.raises(ValueError, match=r"R must have 3 rows"):
        Z.rmatvec(np.ones(4))
    # weights of the wrong length were an IndexError from a boolean mask
    with pytest.raises(ValueError, match="weights has 2 entries"):
        Z.column_sq_norms(np.ones(2))


_EYE = np.eye(6, 4) > 0


@pytest.mark.parametrize(
    "Z, Y, error, message",
    [
        # NaN or infinity in Y or Z came back as NaN weights and residuals, with no error
        (sp.eye(6, 4, format="csr"), np.r_[np.nan, np.ones(5)], ValueError, "Y contains NaN"),
        (sp.eye(6, 4, format="csr"), np.r_[np.inf, np.ones(5)], ValueError, "Y contains NaN"),
        (sp.csr_matrix(np.where(_EYE, np.nan, 0)), np.ones(6), ValueError, "Z contains NaN"),
        (sp.lil_matrix(np.where(_EYE, np.inf, 0)), np.ones(6), ValueError, "Z contains NaN"),
        # complex lost its imaginary part with only numpy's ComplexWarning
        (sp.eye(6, 4, format="csr", dtype=complex), np.ones(6), TypeError, "Z must hold real"),
        (sp.eye(6, 4, format="csr"), np.ones(6) + 1j, TypeError, "Y must be a real numeric"),
        (sp.eye(6, 4, format="csr"), np.array(["a"] * 6), TypeError, "Y must be a real numeric"),
        (sp.eye(6, 4, format="csr"), np.ones((6, 2, 1)), ValueError, r"Y has shape \(6, 2, 1\)"),
        (sp.eye(6, 4, format="csr"), np.ones(5), ValueError, r"Y has shape \(5,\) but Z has 6"),
    ],
)
def test_sparse_ridge_cg_refuses_nonfinite_and_malformed_input_by_name(Z, Y, error, message):
    with pytest.raises(error, match=message):
        sparse_ridge_cg(Z, Y, 1.0)


def test_sparse_ridge_cg_refuses_an_infinite_lam():
    # lam=inf passed the check lam > 0 and gave zero weights
    with pytest.raises(ValueError, match="lam must be a finite number > 0, got inf"):
        sparse_ridge_cg(sp.eye(6, 4, format="csr"), np.ones(6), np.inf)


def _classifiers():
    from kernelcourse.ridge import FeatureRidgeClassifier
    from kernelcourse.scale import NystroemKRRClassifier
    from kernelcourse.sgd import FeatureSGDClassifier
    from kernelcourse.svm import PrimalSVC

    return [
        FeatureRidgeClassifier(),
        NystroemKRRClassifier(n_components=5, random_state=0),
        KernelSVC(),
        PrimalSVC(random_state=0),
        FeatureSGDClassifier(random_state=0),
    ]


@pytest.mark.parametrize("clf", _classifiers(), ids=lambda c: type(c).__name__)
def test_classifiers_name_y_when_its_labels_are_not_classes(clf):
    # scikit-learn's "Unknown label type: continuous" did not say which argument
    X = np.random.default_rng(0).normal(size=(20, 3))
    with pytest.raises(ValueError, match="^y: Unknown label type: continuous"):
        clf.fit(X, X[:, 0])


@pytest.mark.parametrize(
    "y, error", [(np.ones((20, 1, 1)), ValueError), (np.arange(20) % 2 + 0j, ValueError)]
)
def test_feature_ridge_classifier_names_a_malformed_y(y, error):
    # its column_or_1d said "Found array with dim 3" and "Complex data not supported"
    from kernelcourse.ridge import FeatureRidgeClassifier

    X = np.random.default_rng(0).normal(size=(20, 3))
    with pytest.raises(error, match="^y: "):
        FeatureRidgeClassifier().fit(X, y)


def test_streaming_feature_ridge_names_a_non_numeric_y():
    # numpy's "could not convert string to float" did not name y
    from kernelcourse.scale import StreamingFeatureRidge

    X = np.random.default_rng(0).normal(size=(20, 3))
    with pytest.raises(ValueError, match="y must be numeric for a regressor"):
        StreamingFeatureRidge(random_state=0).partial_fit(X, np.array(["a"] * 20))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_nystroem_krr_on_targets_whose_squares_overflow(dtype):
    # targets of 1e300: the measured FALKON residual and the float32 sensitivity check were
    # inf / inf, with numpy's "invalid value" and "overflow" warnings and a NaN residual
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3))
    y = X[:, 0] + 0.1 * rng.normal(size=30) + 1.0
    unit = NystroemKRR(n_components=5, dtype=dtype, random_state=0).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        huge = NystroemKRR(n_components=5, dtype=dtype, random_state=0).fit(X, y * 1e300)
        assert np.isfinite(huge.history_).all()
        np.testing.assert_allclose(huge.predict(X) / 1e300, unit.predict(X), rtol=1e-12)


@pytest.mark.parametrize("inputs", ["numpy", "array-api-strict"])
def test_float32_fits_name_targets_below_its_range(inputs, monkeypatch):
    # y of 1e-300 became 0 in float32, and KernelRidge predicted 0 everywhere in silence
    import sklearn

    X = np.random.default_rng(0).normal(size=(20, 3))
    y = X[:, 0] * 1e-300
    if inputs != "numpy":
        xp = pytest.importorskip("array_api_strict")
        monkeypatch.setenv("SCIPY_ARRAY_API", "1")
        X, y = xp.asarray(X), xp.asarray(y)
    with sklearn.config_context(array_api_dispatch=inputs != "numpy"):
        with pytest.raises(ValueError, match=r"^y has entries of magnitude at most 2\.3\de-300"):
            KernelRidge(dtype=np.float32).fit(X, y)
        KernelRidge(dtype=np.float64).fit(X, y)  # float64 holds them


@pytest.mark.parametrize(
    "dtype, scale, weight, message",
    [
        # cast to float32, targets of 1e300 became infinity: "b contains NaN or infinity"
        (np.float32, 1e300, None, r"^y has entries of magnitude 2\.3\de\+300, beyond the range"),
        (np.float32, 1.0, 1e300, r"^y·√sample_weight has entries .* dtype=float32"),
        (np.float64, 1e300, 1e300, r"^y·√sample_weight overflows"),
    ],
)
def test_kernel_ridge_names_targets_beyond_its_dtype(dtype, scale, weight, message):
    X = np.random.default_rng(0).normal(size=(20, 3))
    sw = None if weight is None else np.full(20, weight)
    with pytest.raises(ValueError, match=message):
        KernelRidge(dtype=dtype).fit(X, X[:, 0] * scale, sample_weight=sw)
    # what fits the dtype is fitted, and equals the float64 fit to float32 round-off
    small = KernelRidge(dtype=np.float32).fit(X, X[:, 0] * 1e30, sample_weight=np.full(20, 4.0))
    ref = KernelRidge().fit(X, X[:, 0] * 1e30, sample_weight=np.full(20, 4.0))
    np.testing.assert_allclose(small.predict(X), ref.predict(X), rtol=1e-3, atol=1e27)


def test_array_api_float32_estimators_name_inputs_beyond_float32(monkeypatch):
    # dtype=float32 on float64 arrays of another library: RandomFourierFeatures returned NaN
    # features silently, KernelRidge blamed the kernel for a y that became infinity, and
    # NystroemKRR blamed the kernel for an X that did
    xp = pytest.importorskip("array_api_strict")
    import sklearn

    from kernelcourse.features import RandomFourierFeatures

    monkeypatch.setenv("SCIPY_ARRAY_API", "1")
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(30, 2)), rng.normal(size=30)
    with sklearn.config_context(array_api_dispatch=True):
        rff = RandomFourierFeatures(n_components=8, random_state=0, dtype=np.float32)
        with pytest.raises(ValueError, match="the cosine's arguments"):
            rff.fit(xp.asarray(X)).transform(xp.asarray(1e50 * X))
        with pytest.raises(ValueError, match="y has entries of magnitude .*, beyond .*float32"):
            KernelRidge(lam=0.1, dtype=np.float32).fit(xp.asarray(X), xp.asarray(1e50 * y))
        model = NystroemKRR(n_components=10, random_state=0, dtype=np.float32)
        with pytest.raises(ValueError, match="X has entries of magnitude .*float32"):
            model.fit(xp.asarray(1e50 * X), xp.asarray(y))


def test_feature_sgd_classifier_that_diverges_says_so():
    # η₀ = λ = 1e300: the first step's shrink 1 - η₀λ is -inf, every weight NaN, and predict
    # returned one class for every row without a word
    from sklearn.exceptions import NotFittedError

    from kernelcourse.sgd import FeatureSGDClassifier

    X = np.random.default_rng(0).normal(size=(30, 3))
    y = (X[:, 0] > 0).astype(int)
    clf = FeatureSGDClassifier(eta0=1e300, lam=1e300, random_state=0)
    with pytest.raises(ValueError, match="SGD diverged: .* eta0=1e\\+300 and lam=1e\\+300"):
        clf.fit(X, y)
    with pytest.raises(NotFittedError):  # the failed fit leaves no model behind
        clf.predict(X)
    clf.set_params(eta0=0.1, lam=1e-6).partial_fit(X, y, classes=[0, 1])
    assert np.isfinite(clf.decision_function(X)).all()


@pytest.mark.parametrize("block_size", [0, -1, 2.5, None])
def test_streaming_feature_ridge_fit_checks_block_size_by_name(block_size):
    # fit used block_size before any check: range() errors, or (-1) a NotFittedError
    from sklearn.utils._param_validation import InvalidParameterError

    from kernelcourse.scale import StreamingFeatureRidge

    X = np.random.default_rng(0).normal(size=(20, 3))
    with pytest.raises(InvalidParameterError, match="block_size"):
        StreamingFeatureRidge(block_size=block_size, random_state=0).fit(X, X[:, 0])


def test_streaming_feature_ridge_with_a_singular_system_warns_and_fits():
    # 20 samples, 100 features and λ = 1e-300: the Cholesky of Z_cᵀZ_c + λI fails, and the
    # in-place factorization raised LinAlgError("refit with overwrite_a=False"), an argument
    # the user cannot pass
    from scipy.linalg import LinAlgWarning

    from kernelcourse.scale import StreamingFeatureRidge

    X = np.random.default_rng(0).normal(size=(20, 3))
    model = StreamingFeatureRidge(lam=1e-300, random_state=0)
    with pytest.warns(LinAlgWarning, match="Z_cᵀZ_c \\+ λI is not numerically positive"):
        model.fit(X, X[:, 0])
    np.testing.assert_allclose(model.predict(X), X[:, 0], atol=1e-8)


def test_solve_regularized_psd_with_overwrite_a_on_a_read_only_matrix():
    # numpy's "underlying array is read-only" did not name A; it is factored in a copy
    from kernelcourse.ridge import solve_regularized_psd

    A = np.diag([1.0, 2.0, 3.0])
    A.setflags(write=False)
    x = solve_regularized_psd(A, np.ones(3), 1.0, overwrite_a=True)
    np.testing.assert_allclose(x, [1 / 2, 1 / 3, 1 / 4])
    np.testing.assert_array_equal(A, np.diag([1.0, 2.0, 3.0]))


def test_kernel_svc_takes_integer_tol_and_small_integer_cache_size():
    # tol=10**20 (an int beyond int64) failed to type in the compiled SMO loop (a numba
    # TypingError); cache_size=np.int8(3) overflowed int8 when converted to bytes
    X = np.random.default_rng(0).normal(size=(30, 3))
    y = (X[:, 0] > 0).astype(int)
    ref = KernelSVC().fit(X, y).decision_function(X)
    np.testing.assert_allclose(KernelSVC(cache_size=np.int8(3)).fit(X, y).decision_function(X), ref)
    assert np.isfinite(KernelSVC(tol=10**20).fit(X, y).decision_function(X)).all()


def test_primal_svc_names_an_intercept_scaling_whose_square_overflows():
    # the error blamed X ("largest |entry| 2.33") for intercept_scaling=1e300
    from kernelcourse.svm import PrimalSVC

    X = np.random.default_rng(0).normal(size=(30, 3))
    with pytest.raises(ValueError, match="intercept_scaling=1e\\+300 is too large"):
        PrimalSVC(intercept_scaling=1e300).fit(X, (X[:, 0] > 0).astype(int))


@pytest.mark.parametrize(
    "make, error, message",
    [
        # n_components=True reached numpy ("expected a sequence of integers, got 'True'"),
        # 10**20 gave numpy's "Maximum allowed dimension exceeded"
        (lambda: RandomKitchenSinks(n_components=True), TypeError, "n_components must be an int"),
        (lambda: RandomKitchenSinks(n_components=10**20), MemoryError, "lower n_components"),
        (lambda: NystroemKRR(n_components=True), TypeError, "n_components. parameter .*bool"),
        # np.int8 overflowed in the memory estimate; {} passed as "array-like" to float()
        (lambda: _binning(n_grids=True), TypeError, "n_grids must be an integer"),
        (lambda: _binning(gamma={}), TypeError, "gamma must be a real number"),
    ],
)
def test_feature_counts_and_widths_of_odd_types_are_named(make, error, message):
    X = np.random.default_rng(0).normal(size=(30, 3))
    with pytest.raises(error, match=message):
        make().fit(X, X[:, 0])


def _binning(**params):
    from kernelcourse.features import RandomBinningFeatures

    return RandomBinningFeatures(random_state=0, **params)


def test_random_binning_with_a_small_integer_dtype_n_grids():
    X = np.random.default_rng(0).normal(size=(30, 3))
    Z = _binning(n_grids=np.int8(3)).fit_transform(X)
    np.testing.assert_array_equal(Z.toarray(), _binning(n_grids=3).fit_transform(X).toarray())


@pytest.mark.parametrize("strategy", [1, 2, 3, 4])
def test_sgd_result_predict_names_x_with_the_wrong_number_of_features(strategy):
    # strategies ①② failed in numpy's matmul ("mismatch in its core dimension"), ③④ said
    # "Y has 3 features but X has 2" about the training points
    from kernelcourse.sgd import STRATEGIES

    rng = np.random.default_rng(0)
    X = rng.normal(size=(10, 3))
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    result = STRATEGIES[strategy](
        X, y, kn.Polynomial(degree=2), order=rng.integers(0, 10, size=30), step_size=0.05
    )
    assert result.predict(X).shape == (10,)
    with pytest.raises(ValueError, match="X has 2 features but the model was trained on 3"):
        result.predict(X[:, :2])


def test_polynomial_refuses_a_degree_beyond_int64_by_name():
    # numpy's power raised OverflowError("int too large to convert to float")
    with pytest.raises(ValueError, match="degree must be an integer below 2\\*\\*63"):
        kn.Polynomial(degree=10**30)
    K = kn.Polynomial(degree=2**62, coef0=0.0, gamma=0.5)(np.eye(2))
    np.testing.assert_array_equal(K, np.zeros((2, 2)))  # 0.5**(2**62) underflows to 0


def test_smo_solve_takes_a_boolean_gram_matrix():
    # its symmetry check subtracted K.T in bool, numpy's "boolean subtract is not supported"
    y = np.array([1.0, -1.0, 1.0, -1.0])
    result = smo_solve(np.eye(4, dtype=bool), y, 1.0)
    np.testing.assert_allclose(result.beta, smo_solve(np.eye(4), y, 1.0).beta)
    with pytest.raises(ValueError, match="gram is not symmetric"):
        smo_solve(np.triu(np.ones((4, 4), dtype=bool)), y, 1.0)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        # λ < 0 or n ≤ 0 built a preconditioner of NaN or infinity (math domain error for
        # n < 0); a misspelt kind silently gave plain CG
        ({"lam": -0.1}, "lam must be a finite number >= 0"),
        ({"lam": np.nan}, "lam must be a finite number >= 0"),
        ({"n": 0}, "n must be a finite number > 0"),
        ({"n": -3}, "n must be a finite number > 0"),
        ({"kind": "Falkon"}, "kind must be 'falkon' or None"),
        ({"KMM": np.eye(5)[:, :4]}, r"K_MM must be a square matrix, got shape \(5, 4\)"),
    ],
)
def test_falkon_preconditioner_checks_its_arguments_by_name(kwargs, message):
    from kernelcourse.solvers import FalkonPreconditioner

    args = {"KMM": np.eye(5), "lam": 0.1, "n": 20} | kwargs
    with pytest.raises(ValueError, match=message):
        FalkonPreconditioner(args.pop("KMM"), args.pop("lam"), args.pop("n"), **args)
    plain = FalkonPreconditioner(np.eye(5), 0.1, 20, kind=None)  # B = I/√n
    np.testing.assert_allclose(plain.apply(np.ones((5, 1))), np.ones((5, 1)) / np.sqrt(20))


@pytest.mark.parametrize(
    "KMM",
    [np.eye(5, dtype=int), np.eye(5).tolist(), np.eye(5, dtype=bool)],
    ids=["int", "list", "bool"],
)
def test_falkon_preconditioner_takes_integers_and_lists_as_float64(KMM):
    # "data type <class 'numpy.int64'> not inexact", and a list's AttributeError on .shape
    from kernelcourse.solvers import FalkonPreconditioner

    B = FalkonPreconditioner(KMM, 1e-3, 10)
    ref = FalkonPreconditioner(np.eye(5), 1e-3, 10)
    assert B.T.dtype == np.float64
    np.testing.assert_array_equal(B.apply(np.ones((5, 1))), ref.apply(np.ones((5, 1))))
    with pytest.raises(TypeError, match="K_MM must be a real matrix, got dtype <U1"):
        FalkonPreconditioner(np.array([["a"]]), 1e-3, 10)


def _falkon_problem():
    from kernelcourse.kernels import RBF
    from kernelcourse.solvers import FalkonPreconditioner

    X = np.random.default_rng(0).normal(size=(40, 2))
    k = RBF(1.0)
    KnM = k(X, X[:5])
    B = FalkonPreconditioner(k(X[:5], X[:5]), 1e-3, 40)
    return B, (lambda V: KnM.T @ (KnM @ V)), KnM.T @ X[:, :1], KnM


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        # each failed inside numpy or scipy (AttributeError on a list, einsum's "too many
        # subscripts" for 1-D, "could not convert string to float"), or went on with n < 0
        ({"rhs": "list"}, None, None),
        ({"rhs": np.ones(5)}, ValueError, r"rhs must be an array of shape \(M, k\) = \(5, k\)"),
        ({"rhs": np.ones((3, 1))}, ValueError, r"rhs must be an array of shape \(M, k\)"),
        ({"rhs": np.array([["a"]] * 5)}, TypeError, "rhs must be a real"),
        ({"rhs": np.full((5, 1), np.nan)}, ValueError, "rhs contains NaN or infinity"),
        ({"gram": np.ones(5)}, ValueError, r"gram must be an array of shape \(M, M\)"),
        ({"gram": np.array([["a"] * 5] * 5)}, TypeError, "gram must be a real"),
        ({"gram_factor": np.ones(5)}, ValueError, r"gram_factor must be an array of shape"),
        ({"gram_factor": np.full((5, 5), "a")}, TypeError, "gram_factor must be a real"),
        ({"preconditioner": "B"}, TypeError, "preconditioner must be a FalkonPreconditioner"),
        ({"products": "K"}, TypeError, "products must be a callable"),
        ({"lam": "x"}, TypeError, "lam must be a real number"),
        ({"n": -1}, ValueError, "n must be a finite number > 0"),
        ({"max_iter": 0}, ValueError, "max_iter must be an integer >= 1"),
        ({"tol": -1.0}, ValueError, "tol must be a finite number >= 0"),
    ],
)
def test_falkon_solve_checks_its_arguments_by_name(kwargs, error, message):
    from kernelcourse.solvers import falkon_solve

    B, products, rhs, _ = _falkon_problem()
    args = {"preconditioner": B, "products": products, "rhs": rhs, "lam": 1e-3, "n": 40}
    if isinstance(kwargs.get("rhs"), str):  # a nested list gives the array's solution
        ref = falkon_solve(**args).alpha
        np.testing.assert_array_equal(falkon_solve(**(args | {"rhs": rhs.tolist()})).alpha, ref)
        return
    with pytest.raises(error, match=message):
        falkon_solve(**(args | kwargs))


def test_falkon_solve_takes_a_gram_matrix_or_factor_as_a_list():
    from kernelcourse.solvers import falkon_solve

    B, _, rhs, KnM = _falkon_problem()
    ref = falkon_solve(B, None, rhs, 1e-3, 40, gram=KnM.T @ KnM).alpha
    out = falkon_solve(B, None, rhs.tolist(), 1e-3, 40, gram=(KnM.T @ KnM).tolist()).alpha
    np.testing.assert_array_equal(out, ref)


def test_gram_factor_update_checks_its_block_by_name():
    # a block with other columns than R failed in numpy's concatenate; NaN in a block made
    # the factor NaN, silently, for every later update
    from kernelcourse.solvers import gram_factor_update

    K = np.random.default_rng(0).normal(size=(8, 5))
    R = gram_factor_update(None, K)
    with pytest.raises(ValueError, match=r"got K of shape \(8, 4\) and R of shape \(5, 5\)"):
        gram_factor_update(R, K[:, :4])
    with pytest.raises(ValueError, match="K contains NaN or infinity"):
        gram_factor_update(R, np.where(K > 1, np.nan, K))
    # a list had no .shape, text failed in numpy's sum
    np.testing.assert_array_equal(
        gram_factor_update(R.tolist(), K.tolist()), gram_factor_update(R, K)
    )
    with pytest.raises(TypeError, match="K must be a real matrix, got dtype <U1"):
        gram_factor_update(None, np.full((2, 5), "a"))
    with pytest.raises(TypeError, match="R must be a real matrix"):
        gram_factor_update(np.full((5, 5), "a"), K)
    with pytest.raises(ValueError, match=r"got K of shape \(5,\)"):
        gram_factor_update(None, K[0])
    np.testing.assert_allclose((R2 := gram_factor_update(R, K)).T @ R2, 2 * K.T @ K)


@pytest.mark.parametrize(
    "X, Y, message",
    [
        # NaN came back as a block of NaN; a 1-D X was numpy's AxisError, Y of other width a
        # broadcasting error
        (np.full((3, 2), np.nan), None, "X contains NaN or infinity"),
        (np.ones((3, 2)), np.array([[np.inf, 0.0]]), "Y contains NaN or infinity"),
        (np.ones(3), None, r"X must be 2-D \(n_samples, n_features\), got shape \(3,\)"),
        (np.ones((3, 2)), np.ones((4, 3)), "Y has 3 features but X has 2"),
    ],
)
def test_array_api_gram_block_checks_its_inputs_by_name(X, Y, message):
    from kernelcourse import devices

    with pytest.raises(ValueError, match=message):
        devices.gram_block(kn.RBF(0.5), X, Y)
    np.testing.assert_allclose(devices.gram_block(kn.RBF(0.5), np.eye(3)), kn.RBF(0.5)(np.eye(3)))


@pytest.mark.parametrize(
    "scale_psi, scale_y, loss",
    [
        (1e300, 1.0, "logistic"),
        (1e155, 1.0, "logistic"),
        (1e300, 1.0, "squared"),
        (1.0, 1e300, "squared"),
    ],
)
def test_fit_box_constrained_refuses_an_objective_that_overflows(scale_psi, scale_y, loss):
    # L-BFGS-B stopped at once on a NaN objective and β = 0 came back as if fitted
    from kernelcourse.features import fit_box_constrained

    Psi = np.random.default_rng(0).normal(size=(20, 4))
    y = np.where(Psi[:, 0] > 0, 1.0, -1.0) if loss == "logistic" else Psi[:, 0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the error says it all, no numpy warnings besides
        with pytest.raises(ValueError, match="objective or its gradient overflows"):
            fit_box_constrained(Psi * scale_psi, y * scale_y, 1.0, loss=loss)


def test_fit_box_constrained_warns_when_it_takes_no_step():
    # features of 1e100: the line search failed at β = 0, returned without a word
    from kernelcourse.features import fit_box_constrained

    Psi = np.random.default_rng(0).normal(size=(20, 4))
    y = np.where(Psi[:, 0] > 0, 1.0, -1.0)
    with pytest.warns(RuntimeWarning, match="took no step.*gradient norm 3.3\\de\\+99"):
        beta, _ = fit_box_constrained(Psi * 1e100, y, 1.0)
    np.testing.assert_array_equal(beta, 0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        beta, _ = fit_box_constrained(Psi, y, 1.0)  # a well-scaled problem: no warning
    assert np.abs(beta).max() > 0


@pytest.mark.parametrize("k", [kn.RBF(0.5), kn.Linear(), kn.Polynomial()])
def test_kernels_say_a_sparse_x_is_sparse(k):
    # "X must be a numeric array, got dtype object": np.asarray wraps a sparse matrix
    with pytest.raises(TypeError, match=r"X is a sparse matrix; .*X\.toarray\(\)"):
        k(sp.csr_matrix(np.eye(3)))
    with pytest.raises(TypeError, match=r"Y is a sparse matrix"):
        k(np.eye(3), sp.csr_array(np.eye(3)))


def test_feature_sgd_classifier_names_sparse_features():
    # RandomBinningFeatures' CSR blocks failed in numpy ("setting an array element with a
    # sequence"), after the first call had already set features_ and classes_
    from kernelcourse.features import RandomBinningFeatures
    from kernelcourse.sgd import FeatureSGDClassifier

    X = np.random.default_rng(0).normal(size=(20, 3))
    y = (X[:, 0] > 0).astype(int)
    clf = FeatureSGDClassifier(features=RandomBinningFeatures(n_grids=3, random_state=0))
    with pytest.raises(TypeError, match="features must return a dense array; Random.*csr"):
        clf.fit(X, y)
    assert not hasattr(clf, "features_") and not hasattr(clf, "classes_")


def test_svc_class_weight_of_non_numbers_is_named():
    # scikit-learn's "could not convert string to float: 'a'" did not name class_weight
    from kernelcourse.svm import PrimalSVC

    X = np.random.default_rng(0).normal(size=(20, 3))
    y = (X[:, 0] > 0).astype(int)
    for clf in (KernelSVC(class_weight={0: "a", 1: 1}), PrimalSVC(class_weight={0: None})):
        with pytest.raises(TypeError, match="class_weight must map labels to real numbers"):
            clf.fit(X, y)


def test_mercer_expansion_checks_the_sample_size_and_the_sampler():
    # n_samples=10**9 drew points for minutes before an impossible Gram matrix; a sampler
    # that returned 3 points for 20 was used as if it were the sample asked for
    def sampler(n, rng):
        return rng.normal(size=(n, 2))

    with pytest.raises(MemoryError, match="lower n_samples"):
        mercer_expansion(kn.RBF(), sampler, 3, n_samples=10**9)
    with pytest.raises(ValueError, match="sampler returned 3 points for n_samples=20"):
        mercer_expansion(kn.RBF(), lambda n, rng: np.ones((3, 2)), 3, n_samples=20)
    with pytest.raises(TypeError, match="points must be a numeric array"):
        mercer_expansion(kn.RBF(), lambda n, rng: "abc", 3, n_samples=20)
    assert len(mercer_expansion(kn.RBF(), sampler, 3, n_samples=50).eigenvalues) == 3


def test_weighted_degree_kernel_of_a_degree_far_beyond_the_length():
    # degree 10**6 on strings of length 4: feature_dim summed 4**d for every d up to 10**6,
    # minutes of big-integer arithmetic for terms that are all 0 beyond d = 4
    k = WeightedDegreeKernel(degree=10**6)
    assert k.feature_dim(4) == sum((4 - d + 1) * 4**d for d in range(1, 5))
    s = ["ACGT", "ACGA"]
    ref = [
        [
            sum(
                k.eta[d - 1] * sum(a[i : i + d] == b[i : i + d] for i in range(5 - d))
                for d in range(1, 5)
            )
            for b in s
        ]
        for a in s
    ]
    np.testing.assert_allclose(k(s), ref, rtol=1e-12)


def test_scrambled_halton_beyond_memory_says_so(monkeypatch):
    # scipy's scrambled Halton keeps ~dim² log dim digit permutations: d = 25 000 ran for
    # hours, swapping. Pretend the machine has 1 GiB, which d = 4000 (1.65 GiB) exceeds.
    from kernelcourse import _validation
    from kernelcourse.features import RandomFourierFeatures

    monkeypatch.setattr(_validation, "physical_memory", lambda: 2**30)
    X = np.random.default_rng(0).normal(size=(3, 4000))
    with pytest.raises(MemoryError, match="Halton points in 4000 dimensions.*qmc_engine='sobol'"):
        RandomFourierFeatures(n_components=4, sampling="qmc", random_state=0).fit(X)
    small = RandomFourierFeatures(n_components=4, sampling="qmc", random_state=0)
    assert small.fit(X[:, :100]).transform(X[:, :100]).shape == (3, 4)


@pytest.mark.parametrize(
    "make",
    [
        lambda p: KernelRidge(kernel_params=p),
        lambda p: KernelSVC(kernel_params=p),
        lambda p: Nystroem(n_components=5, kernel_params=p),
    ],
)
@pytest.mark.parametrize("params", [{"gamma": 1.0}, {"n_features": 3}])
def test_kernel_params_that_clash_with_the_estimators_own_are_named(make, params):
    # Python's "resolve_kernel() got multiple values for keyword argument 'gamma'"
    X = np.random.default_rng(0).normal(size=(20, 3))
    y = (X[:, 0] > 0).astype(int)
    with pytest.raises(ValueError, match="kernel_params must not hold .*set gamma="):
        make(params).fit(X, y)
    make(None).fit(X, y)  # without them it fits


def _rff(**params):
    from kernelcourse.features import RandomFourierFeatures

    return RandomFourierFeatures(random_state=0, **params)


@pytest.mark.parametrize(
    "make, error, message",
    [
        # numpy's "expected a sequence of integers" and "Maximum allowed dimension exceeded"
        (lambda: _rff(n_components=True), TypeError, "n_components must be an integer"),
        (lambda: _rff(n_components=10**20), MemoryError, "lower n_components"),
        # Python's "got multiple values for keyword argument 'gamma'"
        (lambda: _rff(kernel_params={"gamma": 1.0}), ValueError, "kernel_params must not"),
    ],
)
def test_random_fourier_features_name_odd_counts_and_kernel_params(make, error, message):
    X = np.random.default_rng(0).normal(size=(30, 3))
    with pytest.raises(error, match=message):
        make().fit(X)


def test_leverage_pool_factor_of_a_small_integer_dtype_does_not_overflow():
    # np.int8(100) * n_freq overflowed (OverflowError) before the pool was drawn
    X = np.random.default_rng(0).normal(size=(40, 3))
    Z = _rff(sampling="leverage", pool_factor=np.int8(100), n_components=20).fit_transform(X)
    np.testing.assert_array_equal(
        Z, _rff(sampling="leverage", pool_factor=100, n_components=20).fit_transform(X)
    )


def test_fourier_features_refuses_an_exact_flag_that_is_not_a_bool():
    from kernelcourse.features.fourier import fourier_features

    X = np.random.default_rng(0).normal(size=(5, 3))
    with pytest.raises(TypeError, match="exact must be True or False"):
        fourier_features(X, np.ones((3, 4)), 0.0, 1.0, exact="no")  # a string is truthy
