"""Large-scale kernel ridge: CG against the direct solve, preconditioning, streaming, checks."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.kernel_approximation import RBFSampler
from sklearn.utils.estimator_checks import parametrize_with_checks

from kernelcourse.features import RandomFourierFeatures
from kernelcourse.kernels import RBF
from kernelcourse.ridge import FeatureRidge
from kernelcourse.scale import (
    NystroemKRR,
    NystroemKRRClassifier,
    ProgressPrinter,
    StreamingFeatureRidge,
    conjugate_gradient,
    exact_krr_cost,
)


def data(n=300, d=5, seed=0, targets=1):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    Y = np.column_stack([np.sin(X[:, j]) for j in range(targets)]) + 0.1 * rng.normal(
        size=(n, targets)
    )
    return X, (Y[:, 0] if targets == 1 else Y)


def direct_solution(model, X, Y, lam):
    K = RBF(model.kernel_.gamma)
    Knm, Kmm = K(X, model.centers_), K(model.centers_)
    Y = Y if Y.ndim == 2 else Y[:, None]
    rhs = Knm.T @ (Y - Y.mean(axis=0))
    return np.linalg.solve(Knm.T @ Knm + lam * len(X) * Kmm, rhs)


@pytest.mark.parametrize("precompute", [False, True])
@pytest.mark.parametrize("targets", [1, 3])
def test_cg_matches_direct_solve(precompute, targets):
    X, y = data(targets=targets)
    lam = 1e-4
    model = NystroemKRR(
        gamma=0.2,
        lam=lam,
        n_components=40,
        max_iter=300,
        tol=1e-13,
        precompute=precompute,
        block_size=7,  # many small row blocks
        random_state=0,
    ).fit(X, y)
    alpha = direct_solution(model, X, y, lam)
    np.testing.assert_allclose(model.dual_coef_, alpha, atol=1e-6 * np.abs(alpha).max())
    K = RBF(0.2)
    pred = K(X[:7], model.centers_) @ alpha + y.mean(axis=0)
    np.testing.assert_allclose(
        model.predict(X[:7]), pred.reshape(model.predict(X[:7]).shape), atol=1e-6
    )


@pytest.mark.parametrize("n_components, lam", [(100, 1e-3), (60, 1e-6)])
def test_precompute_agrees_where_k_mm_is_nearly_singular(n_components, lam):
    # Centres crowded in two dimensions make K_MM singular to round-off. The accumulated
    # K_nMᵀK_nM then carried rounding that the preconditioner magnified into negative
    # curvature (CG stopped with NotPositiveDefiniteError) or into wrong predictions; its
    # factor does not.
    rng = np.random.default_rng(0)
    n = 2000 if n_components == 100 else n_components
    X = rng.normal(size=(n, 2))
    y = np.sin(2 * X[:, 0]) + 3
    Xt = rng.normal(size=(300, 2))
    kw = dict(gamma=0.5, lam=lam, n_components=n_components, max_iter=200, tol=1e-10)
    fits = [
        NystroemKRR(precompute=p, random_state=0, **kw).fit(X, y) for p in (False, True)
    ]
    for model in fits:
        assert model.history_[-1] < 1e-6
    np.testing.assert_allclose(fits[1].predict(Xt), fits[0].predict(Xt), atol=1e-5)


def test_all_centres_is_exact_kernel_ridge():
    X, y = data(n=60)
    lam = 1e-3
    model = NystroemKRR(
        gamma=0.3, lam=lam, n_components=60, max_iter=500, tol=1e-14, random_state=0
    ).fit(X, y)
    K = RBF(0.3)(X)
    # with M = n: K(K + λnI)α = K(y − ȳ), so f = K α matches exact KRR
    exact = K @ np.linalg.solve(K + lam * 60 * np.eye(60), y - y.mean()) + y.mean()
    np.testing.assert_allclose(model.predict(X), exact, atol=1e-6)


def test_preconditioner_holds_three_m_by_m_matrices_at_its_peak():
    # T Tᵀ is written over K_MM, so the factors T and A are all it adds to K_MM: three
    # M × M matrices at the peak, which is what decides the largest M a GPU can hold
    import tracemalloc

    from kernelcourse.solvers import FalkonPreconditioner

    C = np.random.default_rng(0).normal(size=(600, 4))
    KMM = RBF(0.5)(C, C)
    one = KMM.nbytes
    tracemalloc.start()
    try:
        B = FalkonPreconditioner(KMM, 1e-4, 5000)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 2.2 * one  # T and A; K_MM was there before
    K = RBF(0.5)(C, C)
    np.testing.assert_allclose(B.T.T @ B.T, K + B.shift * np.eye(600), atol=1e-10)
    TTt = B.T @ B.T.T / 600 + 1e-4 * np.eye(600)
    np.testing.assert_allclose(B.A.T @ B.A, TTt, rtol=1e-8, atol=1e-12)


def test_cholesky_jitter_takes_huge_finite_entries():
    # the sum of the entries overflows, yet every entry is finite: a factor, not an error
    from kernelcourse.solvers import NotPositiveDefiniteError, cholesky_jitter

    A = 1e307 * np.eye(40)
    T, _ = cholesky_jitter(A.copy())
    np.testing.assert_allclose(np.diag(T), np.sqrt(np.diag(A)), rtol=1e-10)
    A[3, 5] = np.nan
    with pytest.raises(NotPositiveDefiniteError, match="holds NaN or infinity"):
        cholesky_jitter(A)


def test_cholesky_jitter_of_a_subnormal_matrix():
    # ε·M·max Aᵢᵢ underflowed to a shift of 0 that no power of 100 could grow: a PSD matrix of
    # order 1e-320 was "not positive definite even after adding 0.0e+00·I" (NystroemKRR with
    # the linear kernel on data of order 1e-160)
    from kernelcourse.solvers import cholesky_jitter

    A = 1e-320 * np.ones((3, 3))
    T, shift = cholesky_jitter(A.copy())
    assert 0 < shift < 1e-300
    np.testing.assert_allclose(T.T @ T, A + shift * np.eye(3), rtol=0, atol=1e-322)
    X, y = data(n=50)
    for scale in (1e-150, 1e-160):  # K ~ 1e-300 and ~ 1e-320: λ dominates, f = ȳ
        model = NystroemKRR(kernel="linear", n_components=10, random_state=0)
        with warnings.catch_warnings():  # subnormal K carries few bits: CG may say it drifted
            warnings.simplefilter("ignore", ConvergenceWarning)
            pred = model.fit(X * scale, y).predict(X[:5] * scale)
        np.testing.assert_allclose(pred, y.mean(), rtol=1e-10)


def test_cholesky_jitter_of_a_read_only_matrix():
    # the shift went onto A's diagonal in place: "assignment destination is read-only"
    from kernelcourse.solvers import FalkonPreconditioner, cholesky_jitter

    K = RBF(gamma=1.0)(np.linspace(0, 1, 5)[:, None])
    K.flags.writeable = False
    T, shift = cholesky_jitter(K)
    np.testing.assert_allclose(T.T @ T, K + shift * np.eye(5), atol=1e-14)
    assert FalkonPreconditioner(K, 1e-3, 10).M == 5


def test_preconditioner_reduces_iterations():
    X, y = data(n=400)
    common = dict(gamma=0.2, lam=1e-5, n_components=80, max_iter=2000, tol=1e-8, random_state=0)
    falkon = NystroemKRR(**common).fit(X, y)
    plain = NystroemKRR(preconditioner=None, **common).fit(X, y)
    assert falkon.history_[-1] <= 1e-8
    assert falkon.n_iter_ < plain.n_iter_ / 2, (falkon.n_iter_, plain.n_iter_)


def test_history_callback_and_verbose(capsys):
    X, y = data()
    seen = []
    with pytest.warns(ConvergenceWarning, match="did not reach tol=0"):
        model = NystroemKRR(
            n_components=30,
            max_iter=5,
            tol=0,
            random_state=0,
            callback=lambda it, a, r: seen.append((it, a.shape, r)),
        ).fit(X, y)
    assert [s[0] for s in seen] == [1, 2, 3, 4, 5]
    assert seen[0][1] == (30, 1)
    np.testing.assert_allclose([s[2] for s in seen], model.history_[1:])
    assert model.history_[0] == pytest.approx(1.0, rel=1e-12) and model.n_iter_ == 5
    with pytest.warns(ConvergenceWarning, match="relative residual"):
        NystroemKRR(n_components=30, max_iter=3, verbose=True, random_state=0).fit(X, y)
    out = capsys.readouterr().out
    assert out.count("relative residual") == 3


def test_progress_printer_every():
    lines = []

    class Sink:
        def write(self, s):
            lines.append(s)

        def flush(self):
            pass

    p = ProgressPrinter(file=Sink(), every=2)
    for it in range(1, 5):
        p(it, None, 0.1)
    assert sum("iteration" in s for s in lines) == 2


@pytest.mark.parametrize("Estimator", [NystroemKRR, NystroemKRRClassifier])
def test_float32_agrees_with_float64(Estimator):
    # float32 kernel blocks, float64 preconditioner and CG: on small, well-posed data the
    # two fits agree to 1e-3 relative in their predictions (float32 round-off, ~1e-7 per
    # entry, amplified by the conditioning of the λ = 1e-3 system), and both converge.
    X, y = data()
    if Estimator is NystroemKRRClassifier:
        y = np.where(y > np.median(y), "high", "low")
    kw = dict(gamma=0.2, lam=1e-3, n_components=40, max_iter=50, tol=1e-6, random_state=0)
    a = Estimator(**kw).fit(X, y)
    b = Estimator(dtype=np.float32, **kw).fit(X.astype(np.float32), y)
    fa = a.predict(X) if Estimator is NystroemKRR else a.decision_function(X)
    fb = b.predict(X) if Estimator is NystroemKRR else b.decision_function(X)
    scale = np.max(np.abs(fa))
    np.testing.assert_allclose(fb, fa, rtol=0, atol=1e-3 * scale)
    assert b.residual_ <= 10 * np.sqrt(np.finfo(np.float32).eps)
    np.testing.assert_array_equal(b.center_indices_, a.center_indices_)


def test_near_singular_system_stops_with_a_warning_and_a_finite_answer():
    # All points are centres, half of them repeated, and γ tiny: K_MM is singular to
    # working precision and the CG system has no curvature left after a few steps.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    X = np.vstack([X, X[:30]])
    y = X[:, 0] + 0.1 * rng.normal(size=len(X))
    model = NystroemKRR(gamma=1e-6, lam=1e-12, n_components=200, max_iter=100, tol=1e-10)
    with pytest.warns(ConvergenceWarning, match="relative residual"):
        model.fit(X, y)
    pred = model.predict(X)
    assert np.isfinite(pred).all() and np.isfinite(model.dual_coef_).all()
    assert np.sqrt(np.mean((pred - y) ** 2)) < 0.5 * np.std(y)  # still a useful fit
    assert model.n_iter_ < 100 and np.isfinite(model.residual_)


def test_conjugate_gradient_stops_at_a_breakdown_with_the_best_iterate():
    # H is positive semidefinite of rank 3 and b has a part in its null space, which no
    # iterate can remove: the search directions turn into that null space, CG runs out of
    # curvature, stops, warns with the residual and returns the best iterate it saw.
    rng = np.random.default_rng(0)
    Q, _ = np.linalg.qr(rng.normal(size=(5, 5)))
    H = Q @ np.diag([3.0, 2.0, 1.0, 0.0, 0.0]) @ Q.T
    b = Q @ np.array([1.0, 1.0, 1.0, 0.5, 0.0])
    with pytest.warns(ConvergenceWarning, match="no curvature left above round-off"):
        x, history = conjugate_gradient(lambda v: H @ v, b, max_iter=50, tol=1e-10)
    assert len(history) - 1 < 10
    floor = 0.5 / np.linalg.norm(b)  # the part of b outside the range of H
    residual = np.linalg.norm(b - H @ x) / np.linalg.norm(b)
    assert residual == pytest.approx(min(history), rel=1e-9)
    assert floor <= residual < history[-1]


def test_default_estimators_fit_small_data_the_checks_use():
    # scikit-learn's checks use about 100 samples, so every point becomes a centre; this
    # used to raise "not positive definite" at a round-off breakdown of CG.
    from sklearn.utils.estimator_checks import check_fit_idempotent, check_n_features_in

    for estimator in (NystroemKRR(), NystroemKRR(gamma=1e-12), NystroemKRR(dtype=np.float32)):
        check_n_features_in(type(estimator).__name__, estimator)
        check_fit_idempotent(type(estimator).__name__, estimator)


def test_classifier_one_vs_rest():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 2))
    y = np.where(X[:, 0] > 0, "east", np.where(X[:, 1] > 0, "north", "south"))
    clf = NystroemKRRClassifier(gamma=1.0, lam=1e-5, n_components=60, random_state=0).fit(X, y)
    assert clf.decision_function(X).shape == (300, 3)
    assert clf.score(X, y) > 0.9
    binary = NystroemKRRClassifier(gamma=1.0, n_components=60, random_state=0).fit(X, X[:, 0] > 0)
    assert binary.decision_function(X).shape == (300,)
    assert binary.score(X, X[:, 0] > 0) > 0.9
    with pytest.raises(ValueError, match="only one class"):
        NystroemKRRClassifier().fit(X, np.zeros(300))


def test_bad_parameters_and_warnings():
    X, y = data(n=20)
    with pytest.raises(ValueError, match="lam"):
        NystroemKRR(lam=0).fit(X, y)
    with pytest.raises(ValueError, match="n_components"):
        NystroemKRR(n_components=0).fit(X, y)
    with pytest.raises(ValueError, match="kernel"):
        NystroemKRR(kernel="spline").fit(X, y)
    with pytest.warns(UserWarning, match="n_components=50 > n_samples=20"):
        NystroemKRR(n_components=50).fit(X, y)
    with pytest.raises(ValueError, match="NaN"):
        NystroemKRR().fit(np.full((5, 2), np.nan), np.ones(5))


def test_conjugate_gradient_on_spd_matrix():
    rng = np.random.default_rng(0)
    A = rng.normal(size=(30, 30))
    H = A @ A.T + 30 * np.eye(30)
    b = rng.normal(size=(30, 2))
    x, hist = conjugate_gradient(lambda v: H @ v, b, max_iter=100, tol=1e-12)
    np.testing.assert_allclose(H @ x, b, atol=1e-9)
    assert hist[0] == pytest.approx(1.0, rel=1e-12) and hist[-1] <= 1e-12


def test_exact_cost_is_eight_terabytes_at_a_million():
    memory, _ = exact_krr_cost(10**6)
    assert memory == 8e12


@pytest.mark.parametrize("blocks", [1, 3, 7])
def test_partial_fit_on_blocks_equals_fit(blocks):
    X, Y = data(n=210, targets=2)
    feats = RandomFourierFeatures(gamma=0.2, n_components=50, random_state=0).fit(X)
    lam = 1e-4 * 210
    full = StreamingFeatureRidge(feats, lam=lam, fit_intercept=True, block_size=10**6).fit(X, Y)
    stream = StreamingFeatureRidge(feats, lam=lam, fit_intercept=True)
    for part in np.array_split(np.arange(210), blocks):
        stream.partial_fit(X[part], Y[part])
    np.testing.assert_allclose(stream.coef_, full.coef_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(stream.intercept_, full.intercept_, rtol=1e-9, atol=1e-12)
    # and both equal ridge on the materialised features
    Z = feats.transform(X)
    Zc, Yc = Z - Z.mean(0), Y - Y.mean(0)
    W = np.linalg.solve(Zc.T @ Zc + lam * np.eye(50), Zc.T @ Yc)
    np.testing.assert_allclose(full.coef_, W.T, rtol=1e-8, atol=1e-10)
    assert stream.n_samples_seen_ == 210


@pytest.mark.parametrize("fit_intercept", [False, True])
def test_streaming_and_in_memory_feature_ridge_share_one_penalty(fit_intercept):
    X, y = data(n=150)
    feats = RandomFourierFeatures(gamma=0.2, n_components=30, random_state=0).fit(X)
    kw = dict(lam=0.5, fit_intercept=fit_intercept)
    stream = StreamingFeatureRidge(feats, block_size=40, **kw).fit(X, y)
    memory = FeatureRidge(feats, **kw).fit(X, y)
    np.testing.assert_allclose(stream.coef_, memory.coef_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(stream.intercept_, memory.intercept_, rtol=1e-9, atol=1e-12)


def test_streaming_unfitted_transformer_and_target_mismatch():
    X, y = data(n=100)
    model = StreamingFeatureRidge(RBFSampler(n_components=20, random_state=0))
    model.partial_fit(X[:50], y[:50])
    assert model.features_.n_components == 20
    assert not hasattr(model.features, "random_weights_")  # the given one is left untouched
    with pytest.raises(ValueError, match="targets"):
        model.partial_fit(X[50:], np.column_stack([y[50:], y[50:]]))
    with pytest.raises(ValueError, match="features"):
        model.partial_fit(X[50:, :3], y[50:])


@parametrize_with_checks(
    [
        NystroemKRR(),
        NystroemKRRClassifier(),
        NystroemKRR(dtype=np.float32),
        NystroemKRRClassifier(dtype=np.float32),
        NystroemKRR(n_components=20, random_state=0),
        NystroemKRRClassifier(n_components=20, random_state=0),
        NystroemKRR(n_components=20, precompute=True, preconditioner=None, random_state=0),
        StreamingFeatureRidge(random_state=0, block_size=7),
    ],
    expected_failed_checks=lambda est: (
        # max_iter bounds the sparse solver only; dense features are solved directly
        {"check_non_transformer_estimators_n_iter": "direct solve on dense features"}
        if isinstance(est, StreamingFeatureRidge)
        # float32 kernel blocks: weighted and repeated points agree to float32 round-off
        # (test_float32_agrees_with_float64 states that tolerance), not to the check's 1e-7
        else {"check_sample_weight_equivalence_on_dense_data": "float32 round-off, by design"}
        if est.get_params().get("dtype") is np.float32
        else {}
    ),
)
def test_sklearn_compatible(estimator, check):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        check(estimator)


# -- numerical guards (issue 18) -----------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_repeated_points_give_distinct_centres_and_the_exact_krr_fit(dtype):
    # Binary features: 2000 rows, only 32 distinct points. Repeated centres made K_MM
    # singular and CG diverged (training RMSE 13.9 against 0.098 for exact KRR).
    from kernelcourse.ridge import KernelRidge

    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, (2000, 5)).astype(float)
    y = X.sum(axis=1) + 0.1 * rng.normal(size=2000)
    with pytest.warns(UserWarning, match="only 32 distinct rows"):
        model = NystroemKRR(n_components=200, lam=1e-6, random_state=0, dtype=dtype).fit(X, y)
    assert model.n_components_ == 32
    assert len(np.unique(model.centers_, axis=0)) == 32
    exact = KernelRidge(lam=1e-6 * 2000, gamma=0.2).fit(X, y - y.mean())
    rmse = np.sqrt(np.mean((model.predict(X) - y) ** 2))
    rmse_exact = np.sqrt(np.mean((exact.predict(X) + y.mean() - y) ** 2))
    assert rmse == pytest.approx(rmse_exact, rel=1e-3)


def test_centres_are_unchanged_when_the_rows_are_distinct():
    X, y = data()
    model = NystroemKRR(n_components=30, random_state=0, max_iter=50).fit(X, y)
    expected = np.sort(np.random.RandomState(0).choice(len(X), size=30, replace=False))
    np.testing.assert_array_equal(model.center_indices_, expected)


def test_tol_not_reached_warns_with_the_residual():
    X, y = data()
    with pytest.warns(ConvergenceWarning, match="relative residual of the preconditioned"):
        NystroemKRR(n_components=30, max_iter=1, tol=1e-12, random_state=0).fit(X, y)


@pytest.mark.parametrize("scale", [1e-320, 1e-300, 1e300])
def test_sample_weight_scale_does_not_matter(scale):
    # subnormal weights lost their digits in K_nMᵀ S K_nM: CG "drifted" and the predictions
    # moved by 1e-3
    X, y = data(n=100)
    kw = dict(gamma=0.2, lam=1e-4, n_components=20, random_state=0)
    ref = NystroemKRR(**kw).fit(X, y).predict(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = NystroemKRR(**kw).fit(X, y, sample_weight=np.full(len(X), scale))
    np.testing.assert_allclose(model.predict(X), ref, rtol=1e-8, atol=1e-10)


def test_sample_weight_equals_repeating_points():
    X, y = data(n=120)
    counts = np.random.default_rng(2).integers(0, 3, size=len(X))
    kw = dict(n_components=len(X), lam=1e-3, max_iter=200, tol=1e-12, precompute=True)
    weighted = NystroemKRR(**kw).fit(X, y, sample_weight=counts)
    Xr, yr = np.repeat(X, counts, axis=0), np.repeat(y, counts)
    repeated = NystroemKRR(**{**kw, "n_components": len(Xr)}).fit(Xr, yr)
    np.testing.assert_allclose(weighted.predict(X), repeated.predict(X), rtol=0, atol=1e-6)
    with pytest.raises(ValueError, match="sample_weight"):
        NystroemKRR().fit(X, y, sample_weight=-np.ones(len(X)))


def test_huge_inputs_raise_naming_the_kernel():
    # the RBF scales before squaring and stays exact at 1e160; a polynomial cannot
    X = 1e160 * np.random.default_rng(0).normal(size=(50, 3))
    with pytest.raises(ValueError, match="Polynomial.*overflows"):
        NystroemKRR(kernel="poly", n_components=10, random_state=0).fit(X, np.ones(50))


def test_conjugate_gradient_refuses_a_negative_operator():
    H = -np.diag([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="operator is not positive definite"):
        conjugate_gradient(lambda v: H @ v, np.ones(3))


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"matvec": "H"}, TypeError, "matvec must be a callable"),
        ({"b": np.array([1.0, np.nan])}, ValueError, "b contains NaN"),
        ({"b": np.array(["a", "b"])}, TypeError, "b must be a numeric array"),
        ({"b": np.ones((2, 2, 2))}, ValueError, "b must be a non-empty array"),
        ({"max_iter": 0}, ValueError, "max_iter must be an integer >= 1"),
        ({"tol": -1.0}, ValueError, "tol must be a finite number >= 0"),
        ({"matvec": lambda v: v[:1]}, ValueError, "matvec returned shape"),
        ({"matvec": lambda v: v * np.nan}, ValueError, "matvec returned NaN"),
    ],
)
def test_conjugate_gradient_validates(kwargs, error, match):
    args = {"matvec": lambda v: v, "b": np.ones(2)}
    args.update(kwargs)
    with pytest.raises(error, match=match):
        conjugate_gradient(**args)


def test_conjugate_gradient_warns_when_tol_is_not_reached():
    H = np.diag(np.linspace(1, 1e4, 50))
    with pytest.warns(ConvergenceWarning, match="relative residual"):
        conjugate_gradient(lambda v: H @ v, np.ones(50), max_iter=3, tol=1e-10)


def test_streaming_solves_lazily_once_all_blocks_are_in():
    # D = 50 features, blocks of 5 rows and a tiny λ: each partial system is singular, the full
    # one is fine. Solving after every block used to fail; now nothing is solved until asked.
    X, y = data(n=400)
    feats = RandomFourierFeatures(gamma=0.2, n_components=50, random_state=0).fit(X)
    model = StreamingFeatureRidge(feats, lam=1e-12)
    for start in range(0, 400, 5):
        model.partial_fit(X[start : start + 5], y[start : start + 5])
    assert model._solution is None  # not solved yet
    full = StreamingFeatureRidge(feats, lam=1e-12, block_size=400).fit(X, y)
    np.testing.assert_allclose(model.predict(X[:10]), full.predict(X[:10]), rtol=1e-6, atol=1e-8)
    assert model._solution is not None
    model.partial_fit(X[:5], y[:5])  # new data makes the solution stale again
    assert model._solution is None


def test_streaming_sparse_binning_features_equal_direct_solve():
    from kernelcourse.features import RandomBinningFeatures

    X, y = data(n=300)
    rb = RandomBinningFeatures(gamma=0.5, n_grids=6, random_state=0).fit(X)
    model = StreamingFeatureRidge(rb, lam=0.3, fit_intercept=True, block_size=70, tol=1e-12).fit(
        X, y
    )
    Z = rb.transform(X).toarray()
    Zc, yc = Z - Z.mean(0), y - y.mean()
    w = np.linalg.solve(Zc.T @ Zc + 0.3 * np.eye(Z.shape[1]), Zc.T @ yc)
    np.testing.assert_allclose(model.coef_, w, atol=1e-7 * np.abs(w).max())
    assert model.intercept_ == pytest.approx(y.mean() - Z.mean(0) @ w, abs=1e-7)


def test_streaming_warns_for_data_dependent_map_on_small_first_block():
    from kernelcourse.features import Nystroem

    X, y = data(n=400)
    with pytest.warns(UserWarning, match=r"first block only, 50 rows for D = 40"):
        StreamingFeatureRidge(Nystroem(n_components=40, random_state=0)).partial_fit(X[:50], y[:50])
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        StreamingFeatureRidge(Nystroem(n_components=10, random_state=0)).partial_fit(X, y)
        StreamingFeatureRidge(RandomFourierFeatures(n_components=40)).partial_fit(X[:5], y[:5])


# -- a bandwidth per feature (ARD) ---------------------------------------------------------------
def test_rbf_with_one_gamma_per_feature_equals_scalar_gamma_on_rescaled_inputs():
    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(30, 4)), rng.normal(size=(20, 4))
    gamma = np.array([0.5, 2.0, 0.1, 1.0])
    root = np.sqrt(gamma / 0.3)  # γ_k = 0.3 · root_k²
    np.testing.assert_allclose(RBF(gamma)(X, Y), RBF(0.3)(X * root, Y * root), atol=1e-13)
    np.testing.assert_allclose(RBF(gamma)(X), RBF(0.3)(X * root), atol=1e-13)
    np.testing.assert_allclose(RBF(np.full(4, 0.7))(X, Y), RBF(0.7)(X, Y), atol=1e-13)


def test_nystroem_krr_with_one_gamma_per_feature_equals_rescaled_fit():
    X, y = data()
    gamma = np.linspace(0.05, 0.5, X.shape[1])
    kw = dict(lam=1e-3, n_components=40, max_iter=50, tol=1e-10, random_state=0)
    ard = NystroemKRR(gamma=gamma, **kw).fit(X, y)
    scaled = NystroemKRR(gamma=1.0, **kw).fit(X * np.sqrt(gamma), y)
    np.testing.assert_allclose(ard.predict(X), scaled.predict(X * np.sqrt(gamma)), atol=1e-8)


@pytest.mark.parametrize(
    "gamma, error",
    [
        ([1.0, 2.0], ValueError),  # two entries for five features
        ([1.0, -2.0, 1.0, 1.0, 1.0], ValueError),
        ([1.0, 0.0, 1.0, 1.0, 1.0], ValueError),
        ([1.0, np.nan, 1.0, 1.0, 1.0], ValueError),
        (np.ones((5, 1)), ValueError),
        (-1.0, ValueError),
        (np.nan, ValueError),
    ],
)
def test_bad_per_feature_gamma_is_refused_naming_gamma(gamma, error):
    X, y = data()
    assert X.shape[1] == 5
    with pytest.raises(error, match="gamma"):
        NystroemKRR(gamma=gamma, n_components=10).fit(X, y)


@pytest.mark.parametrize("gamma", [0.3, np.array([0.1, 0.5, 0.2, 1.0, 0.05])])
@pytest.mark.parametrize("weighted", [False, True])
def test_one_pass_products_equal_the_blocked_ones(gamma, weighted):
    # float32 RBF fits compute K_nMᵀ S K_nM V in one pass with tiles kept in cache; it is
    # the same product as the row blocks of K_nM, to float32 round-off.
    from kernelcourse._fused import rbf_normal_products

    X, _ = data(n=700)
    X = X.astype(np.float32)
    C = X[::7]
    V = np.random.default_rng(1).normal(size=(len(C), 3))
    sw = np.random.default_rng(2).uniform(0.5, 2.0, size=len(X)) if weighted else None
    root = np.sqrt(np.broadcast_to(gamma, (5,))).astype(np.float32)
    got = rbf_normal_products(X * root, C * root, 1.0, V, sw, tile=50)
    K = RBF(gamma)(X.astype(np.float64), C.astype(np.float64))
    KV = K @ V if sw is None else (K @ V) * sw[:, None]
    want = K.T @ KV
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-5 * np.abs(want).max())


@pytest.mark.parametrize("gamma", [0.3, np.array([0.1, 0.5, 0.2, 1.0, 0.05])])
def test_one_pass_right_hand_side_equals_the_blocked_one(gamma):
    # and FALKON's right-hand side K_nMᵀ Y comes from the same tiles as the products
    from kernelcourse._fused import rbf_transpose_product

    X, _ = data(n=700)
    X = X.astype(np.float32)
    C = X[::7]
    Y = np.random.default_rng(1).normal(size=(len(X), 2))
    root = np.sqrt(np.broadcast_to(gamma, (5,))).astype(np.float32)
    got = rbf_transpose_product(X * root, C * root, 1.0, Y, tile=50)
    want = RBF(gamma)(X.astype(np.float64), C.astype(np.float64)).T @ Y
    assert got.shape == (len(C), 2)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-5 * np.abs(want).max())


def test_streaming_ridge_keeps_the_column_names_of_a_dataframe():
    pd = pytest.importorskip("pandas")
    X = np.random.default_rng(0).normal(size=(100, 3))
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "X has feature names, but ... without" is a warning
        model = StreamingFeatureRidge(block_size=30, random_state=0).fit(df, X[:, 0])
        model.predict(df)
    np.testing.assert_array_equal(model.feature_names_in_, ["a", "b", "c"])


def test_the_fused_products_compile_without_a_warning():
    # asked to cache, numba warned on every first call that it cannot cache the BLAS call
    import subprocess
    import sys

    code = (
        "import numpy as np\n"
        "from kernelcourse._fused import rbf_normal_products\n"
        "X = np.random.default_rng(0).normal(size=(50, 3)).astype(np.float32)\n"
        "rbf_normal_products(X, X[:5], 0.5, np.ones((5, 1)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-W", "error", "-c", code], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr


def test_falkon_solve_takes_the_gram_matrix_or_its_factor():
    # the package passes the factor; a caller's Gram matrix is factored first, to the same
    # solution where K_MM is well conditioned
    from kernelcourse.solvers import FalkonPreconditioner, falkon_solve, gram_factor_update

    rng = np.random.default_rng(0)
    X = rng.uniform(-3, 3, size=(300, 1))
    y = np.sin(X[:, 0])
    k, C, lam, n = RBF(gamma=1.0), X[::10], 1e-3, 300
    KnM = k(X, C)
    rhs = KnM.T @ (y - y.mean())[:, None]
    R = None
    for start in range(0, n, 70):
        R = gram_factor_update(R, KnM[start : start + 70])
    kw = dict(max_iter=100, tol=1e-12)
    a = falkon_solve(FalkonPreconditioner(k(C, C), lam, n), None, rhs, lam, n,
                     gram_factor=R, **kw).alpha
    b = falkon_solve(FalkonPreconditioner(k(C, C), lam, n), None, rhs, lam, n,
                     gram=KnM.T @ KnM, **kw).alpha
    streamed = falkon_solve(FalkonPreconditioner(k(C, C), lam, n),
                            lambda V: KnM.T @ (KnM @ V), rhs, lam, n, **kw).alpha
    np.testing.assert_allclose(KnM @ a, KnM @ streamed, atol=1e-8)
    # the matrix carries its rounding squared (falkon_solve's docstring): close, not as close
    np.testing.assert_allclose(KnM @ b, KnM @ streamed, atol=1e-5)


@pytest.mark.parametrize("param", ["max_iter", "block_size", "n_components"])
@pytest.mark.parametrize("Est", [NystroemKRR, NystroemKRRClassifier, StreamingFeatureRidge])
def test_counts_refuse_bools_by_name(Est, param):
    # scikit-learn's Interval(Integral) took max_iter=True and block_size=True as 1
    if param not in Est().get_params():
        pytest.skip(f"{Est.__name__} has no {param}")
    X, y = data(n=40)
    if Est is NystroemKRRClassifier:
        y = (y > 0).astype(int)
    with pytest.raises(ValueError, match=f"'{param}' parameter .*not a bool.*Got True"):
        Est(**{param: True}).fit(X, y)
    Est(**{param: np.int64(2)}).fit(X, y)  # a numpy integer is a count


def test_gram_factor_update_in_chunks_matches_one_factorisation():
    """A tall block is factored a few thousand rows at a time (cache-sized QRs); the factor is
    the one QR of the whole block gives, up to the signs of its rows, in K's own dtype, and
    the caller's K is left as it was."""
    from scipy import linalg

    from kernelcourse.solvers import _qr_rows, gram_factor_update

    rng = np.random.default_rng(0)
    M = 6
    K = np.asfortranarray(rng.normal(size=(3 * _qr_rows(M) + 17, M)))
    before = K.copy()
    R = gram_factor_update(None, K)
    np.testing.assert_array_equal(K, before)
    assert R.shape == (M, M) and np.array_equal(R, np.triu(R))
    reference = linalg.qr(K, mode="r")[0][:M]
    np.testing.assert_allclose(np.abs(R), np.abs(reference), rtol=1e-10, atol=1e-10)
    R32 = gram_factor_update(None, K.astype(np.float32))
    assert R32.dtype == np.float32
    np.testing.assert_allclose(np.abs(R32), np.abs(reference), rtol=1e-4, atol=1e-3)
    # fewer rows than columns first: zero rows pad the factor, and the next block stacks
    R = gram_factor_update(None, K[:3])
    assert R.shape == (M, M) and np.all(R[3:] == 0)
    R = gram_factor_update(R, K[3:20])
    np.testing.assert_allclose(R.T @ R, K[:20].T @ K[:20], atol=1e-12)


def test_falkon_solve_forms_coefficients_only_for_callbacks_that_read_them():
    """A progress line reads the residual only: ``needs_coefficients = False`` spares the two
    triangular solves an iteration that α = Bβ costs, and the solution is the same."""
    from kernelcourse.scale import ProgressPrinter
    from kernelcourse.solvers import FalkonPreconditioner, falkon_solve

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    k, C, lam, n = RBF(gamma=0.5), X[:30], 1e-3, 300
    KnM = k(X, C)
    rhs = KnM.T @ rng.normal(size=(300, 1))
    seen = {"full": [], "progress": []}

    def full(it, alpha, res):
        seen["full"].append(alpha)

    def progress(it, alpha, res):
        seen["progress"].append(alpha)

    progress.needs_coefficients = False
    results = [
        falkon_solve(FalkonPreconditioner(k(C), lam, n), lambda V: KnM.T @ (KnM @ V), rhs,
                     lam, n, max_iter=30, tol=1e-10, callback=cb)
        for cb in (full, progress)
    ]
    assert seen["full"] and all(a.shape == (30, 1) for a in seen["full"])
    assert len(seen["progress"]) == len(seen["full"]) and all(
        a is None for a in seen["progress"]
    )
    np.testing.assert_array_equal(results[0].alpha, results[1].alpha)
    assert ProgressPrinter.needs_coefficients is False


def test_progress_line_beside_a_callback_keeps_its_need_for_coefficients():
    # the default progress line wraps the user's callback with itself: the pair asks the
    # solver for α only when the user's callback reads it (ProgressPrinter() does not)
    from kernelcourse.scale import ProgressPrinter, _progress_callback

    class Progress:
        def due(self):
            return False

    def reads_alpha(it, alpha, residual):
        pass

    for callback, needs in ((ProgressPrinter(), False), (reads_alpha, True)):
        both = _progress_callback(callback, False, Progress(), 1e-6)
        assert both is not callback
        assert getattr(both, "needs_coefficients", True) is needs
