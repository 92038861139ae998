"""Large-scale kernel ridge: CG against the direct solve, preconditioning, streaming, checks."""

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.kernel_approximation import RBFSampler
from sklearn.utils.estimator_checks import parametrize_with_checks

from kernelcourse.features import RandomFourierFeatures
from kernelcourse.kernels import RBF
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
        n_centers=40,
        maxiter=300,
        tol=1e-13,
        precompute=precompute,
        block_memory=0.02,  # many small row blocks
        random_state=0,
    ).fit(X, y)
    alpha = direct_solution(model, X, y, lam)
    np.testing.assert_allclose(model.dual_coef_, alpha, atol=1e-6 * np.abs(alpha).max())
    K = RBF(0.2)
    pred = K(X[:7], model.centers_) @ alpha + y.mean(axis=0)
    np.testing.assert_allclose(
        model.predict(X[:7]), pred.reshape(model.predict(X[:7]).shape), atol=1e-6
    )


def test_all_centres_is_exact_kernel_ridge():
    X, y = data(n=60)
    lam = 1e-3
    model = NystroemKRR(
        gamma=0.3, lam=lam, n_centers=60, maxiter=500, tol=1e-14, random_state=0
    ).fit(X, y)
    K = RBF(0.3)(X)
    # with M = n: K(K + λnI)α = K(y − ȳ), so f = K α matches exact KRR
    exact = K @ np.linalg.solve(K + lam * 60 * np.eye(60), y - y.mean()) + y.mean()
    np.testing.assert_allclose(model.predict(X), exact, atol=1e-6)


def test_preconditioner_reduces_iterations():
    X, y = data(n=400)
    common = dict(gamma=0.2, lam=1e-5, n_centers=80, maxiter=2000, tol=1e-8, random_state=0)
    falkon = NystroemKRR(**common).fit(X, y)
    plain = NystroemKRR(preconditioner=None, **common).fit(X, y)
    assert falkon.history_[-1] <= 1e-8
    assert falkon.n_iter_ < plain.n_iter_ / 2, (falkon.n_iter_, plain.n_iter_)


def test_history_callback_and_verbose(capsys):
    X, y = data()
    seen = []
    with pytest.warns(ConvergenceWarning, match="did not reach tol=0"):
        model = NystroemKRR(
            n_centers=30,
            maxiter=5,
            tol=0,
            random_state=0,
            callback=lambda it, a, r: seen.append((it, a.shape, r)),
        ).fit(X, y)
    assert [s[0] for s in seen] == [1, 2, 3, 4, 5]
    assert seen[0][1] == (30, 1)
    np.testing.assert_allclose([s[2] for s in seen], model.history_[1:])
    assert model.history_[0] == pytest.approx(1.0, rel=1e-12) and model.n_iter_ == 5
    with pytest.warns(ConvergenceWarning, match="relative residual"):
        NystroemKRR(n_centers=30, maxiter=3, verbose=True, random_state=0).fit(X, y)
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


def test_float32_blocks_close_to_float64():
    X, y = data()
    a = NystroemKRR(gamma=0.2, lam=1e-3, n_centers=40, random_state=0).fit(X, y)
    b = NystroemKRR(gamma=0.2, lam=1e-3, n_centers=40, dtype="float32", random_state=0).fit(
        X.astype(np.float32), y
    )
    np.testing.assert_allclose(a.predict(X), b.predict(X), atol=1e-3)


def test_classifier_one_vs_rest():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 2))
    y = np.where(X[:, 0] > 0, "east", np.where(X[:, 1] > 0, "north", "south"))
    clf = NystroemKRRClassifier(gamma=1.0, lam=1e-5, n_centers=60, random_state=0).fit(X, y)
    assert clf.decision_function(X).shape == (300, 3)
    assert clf.score(X, y) > 0.9
    binary = NystroemKRRClassifier(gamma=1.0, n_centers=60, random_state=0).fit(X, X[:, 0] > 0)
    assert binary.decision_function(X).shape == (300,)
    assert binary.score(X, X[:, 0] > 0) > 0.9
    with pytest.raises(ValueError, match="only one class"):
        NystroemKRRClassifier().fit(X, np.zeros(300))


def test_bad_parameters_and_warnings():
    X, y = data(n=20)
    with pytest.raises(ValueError, match="lam"):
        NystroemKRR(lam=0).fit(X, y)
    with pytest.raises(ValueError, match="n_centers"):
        NystroemKRR(n_centers=0).fit(X, y)
    with pytest.raises(ValueError, match="kernel"):
        NystroemKRR(kernel="spline").fit(X, y)
    with pytest.warns(UserWarning, match="n_centers=50 > n_samples=20"):
        NystroemKRR(n_centers=50).fit(X, y)
    with pytest.raises(ValueError, match="NaN"):
        NystroemKRR().fit(np.full((5, 2), np.nan), np.ones(5))


def test_conjugate_gradient_on_spd_matrix():
    rng = np.random.default_rng(0)
    A = rng.normal(size=(30, 30))
    H = A @ A.T + 30 * np.eye(30)
    b = rng.normal(size=(30, 2))
    x, hist = conjugate_gradient(lambda v: H @ v, b, maxiter=100, tol=1e-12)
    np.testing.assert_allclose(H @ x, b, atol=1e-9)
    assert hist[0] == pytest.approx(1.0, rel=1e-12) and hist[-1] <= 1e-12


def test_exact_cost_is_eight_terabytes_at_a_million():
    memory, _ = exact_krr_cost(10**6)
    assert memory == 8e12


@pytest.mark.parametrize("blocks", [1, 3, 7])
def test_partial_fit_on_blocks_equals_fit(blocks):
    X, Y = data(n=210, targets=2)
    feats = RandomFourierFeatures(gamma=0.2, n_components=50, random_state=0).fit(X)
    full = StreamingFeatureRidge(feats, lam=1e-4, block_size=10**6).fit(X, Y)
    stream = StreamingFeatureRidge(feats, lam=1e-4)
    for part in np.array_split(np.arange(210), blocks):
        stream.partial_fit(X[part], Y[part])
    np.testing.assert_allclose(stream.coef_, full.coef_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(stream.intercept_, full.intercept_, rtol=1e-9, atol=1e-12)
    # and both equal ridge on the materialised features
    Z = feats.transform(X)
    Zc, Yc = Z - Z.mean(0), Y - Y.mean(0)
    W = np.linalg.solve(Zc.T @ Zc + 1e-4 * 210 * np.eye(50), Zc.T @ Yc)
    np.testing.assert_allclose(full.coef_, W.T, rtol=1e-8, atol=1e-10)
    assert stream.n_samples_seen_ == 210


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
        NystroemKRR(n_centers=20, random_state=0),
        NystroemKRRClassifier(n_centers=20, random_state=0),
        NystroemKRR(n_centers=20, precompute=True, preconditioner=None, random_state=0),
        StreamingFeatureRidge(random_state=0, block_size=7),
    ]
)
def test_sklearn_compatible(estimator, check):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        check(estimator)


# -- numerical guards (issue 18) -----------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_repeated_points_give_distinct_centres_and_the_exact_krr_fit(dtype):
    # Binary features: 2000 rows, only 32 distinct points. Repeated centres made K_MM
    # singular and CG diverged (training RMSE 13.9 against 0.098 for exact KRR).
    from kernelcourse.ridge import KernelRidge

    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, (2000, 5)).astype(float)
    y = X.sum(axis=1) + 0.1 * rng.normal(size=2000)
    with pytest.warns(UserWarning, match="only 32 distinct rows"):
        model = NystroemKRR(n_centers=200, lam=1e-6, random_state=0, dtype=dtype).fit(X, y)
    assert model.n_centers_ == 32
    assert len(np.unique(model.centers_, axis=0)) == 32
    exact = KernelRidge(lam=1e-6 * 2000, gamma=0.2).fit(X, y - y.mean())
    rmse = np.sqrt(np.mean((model.predict(X) - y) ** 2))
    rmse_exact = np.sqrt(np.mean((exact.predict(X) + y.mean() - y) ** 2))
    assert rmse == pytest.approx(rmse_exact, rel=1e-3)


def test_centres_are_unchanged_when_the_rows_are_distinct():
    X, y = data()
    model = NystroemKRR(n_centers=30, random_state=0, maxiter=50).fit(X, y)
    expected = np.sort(np.random.RandomState(0).choice(len(X), size=30, replace=False))
    np.testing.assert_array_equal(model.center_indices_, expected)


def test_tol_not_reached_warns_with_the_residual():
    X, y = data()
    with pytest.warns(ConvergenceWarning, match="relative residual of the preconditioned"):
        NystroemKRR(n_centers=30, maxiter=1, tol=1e-12, random_state=0).fit(X, y)


def test_sample_weight_equals_repeating_points():
    X, y = data(n=120)
    counts = np.random.default_rng(2).integers(0, 3, size=len(X))
    kw = dict(n_centers=len(X), lam=1e-3, maxiter=200, tol=1e-12, precompute=True)
    weighted = NystroemKRR(**kw).fit(X, y, sample_weight=counts)
    Xr, yr = np.repeat(X, counts, axis=0), np.repeat(y, counts)
    repeated = NystroemKRR(**{**kw, "n_centers": len(Xr)}).fit(Xr, yr)
    np.testing.assert_allclose(weighted.predict(X), repeated.predict(X), rtol=0, atol=1e-6)
    with pytest.raises(ValueError, match="sample_weight"):
        NystroemKRR().fit(X, y, sample_weight=-np.ones(len(X)))


def test_huge_inputs_raise_naming_the_kernel():
    # the RBF scales before squaring and stays exact at 1e160; a polynomial cannot
    X = 1e160 * np.random.default_rng(0).normal(size=(50, 3))
    with pytest.raises(ValueError, match="Polynomial.*overflows"):
        NystroemKRR(kernel="poly", n_centers=10, random_state=0).fit(X, np.ones(50))


def test_conjugate_gradient_refuses_a_negative_operator():
    H = -np.diag([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="matvec is not positive definite"):
        conjugate_gradient(lambda v: H @ v, np.ones(3))


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"matvec": "H"}, TypeError, "matvec must be a callable"),
        ({"b": np.array([1.0, np.nan])}, ValueError, "b contains NaN"),
        ({"b": np.array(["a", "b"])}, TypeError, "b must be a numeric array"),
        ({"b": np.ones((2, 2, 2))}, ValueError, "b must be a non-empty array"),
        ({"maxiter": 0}, ValueError, "maxiter must be an integer >= 1"),
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
        conjugate_gradient(lambda v: H @ v, np.ones(50), maxiter=3, tol=1e-10)


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
    model = StreamingFeatureRidge(rb, lam=1e-3, block_size=70, tol=1e-12).fit(X, y)
    Z = rb.transform(X).toarray()
    Zc, yc = Z - Z.mean(0), y - y.mean()
    w = np.linalg.solve(Zc.T @ Zc + 1e-3 * 300 * np.eye(Z.shape[1]), Zc.T @ yc)
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
