"""Random-feature ridge and FALKON on dask arrays, through a local two-process cluster, equal
the in-memory estimators."""

import numpy as np
import pytest
from scipy.linalg import LinAlgWarning

from kernelcourse.features import Nystroem, RandomFourierFeatures
from kernelcourse.scale import NystroemKRR, StreamingFeatureRidge

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

from kernelcourse.distributed import DaskFeatureRidge, DaskNystroemKRR  # noqa: E402

pytestmark = pytest.mark.dask


@pytest.fixture(scope="module")
def client():
    """Two worker processes with one thread each, closed whatever the tests do."""
    cluster = distributed.LocalCluster(
        n_workers=2,
        processes=True,
        threads_per_worker=1,
        memory_limit="1GiB",
        dashboard_address=None,
        scheduler_port=0,
    )
    try:
        with distributed.Client(cluster, timeout="60s") as c:
            yield c
    finally:
        cluster.close(timeout=30)


def data(n=900, d=4, k=1, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    Y = np.column_stack([np.sin(X[:, j % d]) + 0.1 * rng.normal(size=n) for j in range(k)])
    return X, Y[:, 0] if k == 1 else Y


@pytest.mark.parametrize("k", [1, 3])
def test_feature_ridge_equals_streaming(client, k):
    X, y = data(k=k)
    features = RandomFourierFeatures(gamma=0.5, n_components=40, random_state=0)
    Xd = da.from_array(X, chunks=(200, 2)).persist()
    yd = da.from_array(y, chunks=200 if k == 1 else (200, k))
    model = DaskFeatureRidge(features, lam=0.1, fit_intercept=True).fit(Xd, yd)
    ref = StreamingFeatureRidge(features, lam=0.1, fit_intercept=True, block_size=200).fit(X, y)
    np.testing.assert_allclose(model.coef_, ref.coef_, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(model.intercept_, ref.intercept_, rtol=1e-8, atol=1e-10)
    assert model.n_samples_seen_ == len(X)
    pred = model.predict(Xd)
    assert isinstance(pred, da.Array)
    np.testing.assert_allclose(pred.compute(), ref.predict(X), rtol=1e-8, atol=1e-10)


def test_feature_ridge_with_a_fitted_nystroem_map(client):
    X, y = data()
    features = Nystroem(gamma=0.5, n_components=30, random_state=0).fit(X)
    model = DaskFeatureRidge(features, lam=1e-3).fit(da.from_array(X, chunks=250), y)
    ref = StreamingFeatureRidge(features, lam=1e-3, block_size=len(X)).fit(X, y)
    np.testing.assert_allclose(model.coef_, ref.coef_, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("precompute,k", [(False, 1), (True, 2)])
def test_falkon_equals_in_memory(client, precompute, k):
    X, y = data(k=k)
    kw = dict(gamma=0.5, lam=1e-3, n_components=50, max_iter=30, tol=1e-9, random_state=0)
    Xd = da.from_array(X, chunks=(300, 4)).persist()
    model = DaskNystroemKRR(precompute=precompute, **kw).fit(Xd, da.from_array(y, chunks=300))
    ref = NystroemKRR(precompute=precompute, **kw).fit(X, y)
    np.testing.assert_array_equal(model.center_indices_, ref.center_indices_)
    pred = model.predict(Xd)
    assert isinstance(pred, da.Array) and pred.shape == np.shape(y)
    np.testing.assert_allclose(pred.compute(), ref.predict(X), rtol=1e-6, atol=1e-7)
    assert model.n_iter_ >= 1 and model.history_[-1] < 1e-3


def test_bad_inputs_are_named(client):
    X, y = data(n=50)
    with pytest.raises(TypeError, match="X must be a dask.array.Array"):
        DaskFeatureRidge().fit(X, y)
    with pytest.raises(ValueError, match="y must have shape"):
        DaskNystroemKRR(n_components=5).fit(da.from_array(X), da.from_array(y[:10]))
    with pytest.raises(ValueError, match="lam must be a finite number > 0"):
        DaskFeatureRidge(lam=0).fit(da.from_array(X), y)


def test_feature_ridge_lam_takes_numpy_scalars_and_refuses_bools():
    # lam=np.float32(1.0) was refused as "not a number > 0" while lam=True fitted with λ = 1
    X, y = data(n=60)
    dx = da.from_array(X, chunks=20)
    features = RandomFourierFeatures(n_components=10, random_state=0)
    ref = DaskFeatureRidge(features, lam=1.0).fit(dx, y)
    for lam in (np.float32(1.0), np.int64(1), np.array(1.0)[()]):
        model = DaskFeatureRidge(features, lam=lam).fit(dx, y)
        np.testing.assert_allclose(model.coef_, ref.coef_)
    with pytest.raises(TypeError, match="lam must be a real number, got True"):
        DaskFeatureRidge(features, lam=True).fit(dx, y)


@pytest.mark.parametrize("fit_intercept", [False, True])
def test_feature_ridge_singular_system_warns_as_streaming(fit_intercept):
    # more features than rows and a tiny λ: scipy's "A singular matrix detected" came out of
    # the solve; now it warns and agrees with StreamingFeatureRidge's least-squares solution
    X, y = data(n=30)
    features = RandomFourierFeatures(n_components=100, random_state=0).fit(X)
    kw = dict(lam=1e-300, fit_intercept=fit_intercept)
    with pytest.warns(LinAlgWarning, match="not numerically positive definite"):
        model = DaskFeatureRidge(features, **kw).fit(da.from_array(X, chunks=10), y)
    with pytest.warns(LinAlgWarning, match="not numerically positive definite"):
        ref = StreamingFeatureRidge(features, block_size=10, **kw).fit(X, y)
    np.testing.assert_allclose(model.predict(da.from_array(X)).compute(), ref.predict(X))


def test_falkon_centres_as_in_memory_for_repeated_rows():
    # the dask fit drew repeated rows as centres (K_MM singular) where NystroemKRR replaces
    # them, so "the same centres" did not hold; n_components=True failed inside numpy
    X, y = data(n=60)
    X = np.repeat(X[:8], 8, axis=0)[:60]
    kw = dict(gamma=0.5, lam=1e-3, n_components=12, random_state=0)
    with pytest.warns(UserWarning, match="only 8 distinct rows"):
        model = DaskNystroemKRR(**kw).fit(da.from_array(X, chunks=20), da.from_array(y, 20))
    with pytest.warns(UserWarning, match="only 8 distinct rows"):
        ref = NystroemKRR(**kw).fit(X, y)
    np.testing.assert_array_equal(model.center_indices_, ref.center_indices_)
    assert model.n_components_ == 8
    np.testing.assert_allclose(
        model.predict(da.from_array(X)).compute(), ref.predict(X), rtol=1e-6, atol=1e-7
    )
    with pytest.raises(TypeError, match="n_components. parameter .*not a bool.*Got True"):
        DaskNystroemKRR(n_components=True).fit(da.from_array(X), da.from_array(y))


@pytest.mark.parametrize("Est", [DaskFeatureRidge, DaskNystroemKRR])
def test_bad_targets_and_shapes_are_named(Est):
    # NaN in y reached the solver ("array must not contain infs or NaNs"), a string y failed
    # in numpy's conversion when the graph ran, an empty X was blamed on y, and predict on X
    # of another width said "Y has 3 features but X has 2" about the centres
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = X[:, 0].copy()
    dx = da.from_array(X, chunks=(10, -1))

    def est():
        return Est(random_state=0) if Est is DaskFeatureRidge else Est(n_components=5)

    y[3] = np.nan
    with pytest.raises(ValueError, match="^y contains NaN or infinity"):
        est().fit(dx, da.from_array(y, chunks=10))
    with pytest.raises(TypeError, match="y must be a real numeric array"):
        est().fit(dx, da.from_array(np.array(["a"] * 40), chunks=10))
    with pytest.raises(ValueError, match=r"X is empty \(shape \(0, 3\)\)"):
        est().fit(dx[:0], da.from_array(y[:0], chunks=1))
    model = est().fit(dx, da.from_array(X[:, 0], chunks=10))
    with pytest.raises(ValueError, match="X has 2 features"):
        model.predict(dx[:, :2]).compute()


def test_falkon_float32_centres_far_data_as_in_memory(client):
    # the dask fit cast X to float32 as it was, so data 1e4 from the origin kept 3 of their
    # digits and predictions moved by ~2e-3; and X of 1e150 overflowed in the cast (numpy's
    # warnings, then "X contains NaN or infinity"). Now it centres and casts as NystroemKRR.
    X, y = data()
    X = X + 1e4
    kw = dict(gamma=0.5, lam=1e-3, n_components=50, max_iter=30, tol=1e-6, random_state=0)
    Xd = da.from_array(X, chunks=(300, 4)).persist()
    model = DaskNystroemKRR(dtype=np.float32, **kw).fit(Xd, da.from_array(y, chunks=300))
    ref = NystroemKRR(dtype=np.float32, **kw).fit(X, y)
    np.testing.assert_array_equal(model.center_indices_, ref.center_indices_)
    assert model.centers_.dtype == np.float64
    np.testing.assert_array_equal(model.centers_, ref.centers_)
    np.testing.assert_allclose(model.predict(Xd).compute(), ref.predict(X), atol=1e-4)
    big = da.from_array(1e150 * data(n=60)[0], chunks=20)
    with pytest.raises(ValueError, match="X has entries of magnitude .* dtype=float32"):
        DaskNystroemKRR(dtype=np.float32, n_components=5).fit(big, da.from_array(y[:60], 20))
    with pytest.raises(ValueError, match="X has entries of magnitude .* dtype=float32"):
        NystroemKRR(dtype=np.float32, n_components=5).fit(1e150 * data(n=60)[0], y[:60])


def _lost_phase_data():
    # |x| of 1e17 with frequencies of order 1: arguments near 1e18, where neighbouring
    # float64 numbers lie more than pi apart
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 2)) * 1e17
    return da.from_array(X, chunks=(100, 2)), da.from_array(rng.normal(size=400), chunks=100)


def _phase_warnings(record):
    return [w for w in record if "cannot resolve their phase" in str(w.message)]


@pytest.mark.parametrize("scheduler", ["threads", "distributed"])
@pytest.mark.parametrize("fit_intercept", [False, True])
def test_feature_ridge_warns_once_for_a_lost_phase_at_the_fit(request, scheduler, fit_intercept):
    # the first-row probe warned, then every chunk again on dask's worker threads, naming
    # concurrent/futures/thread.py (five warnings for four chunks); on a cluster of processes
    # the chunks' warnings never reached the client. Now the fit gathers the chunks' largest
    # argument and warns once, at this line.
    import dask

    Xd, yd = _lost_phase_data()
    model = DaskFeatureRidge(RandomFourierFeatures(random_state=0), fit_intercept=fit_intercept)
    config = {"scheduler": "threads"} if scheduler == "threads" else {}
    if scheduler == "distributed":
        request.getfixturevalue("client")
    with dask.config.set(config), pytest.warns(RuntimeWarning) as record:
        model.fit(Xd, yd)
    found = _phase_warnings(record)
    assert len(found) == 1, [str(w.message) for w in record]
    assert found[0].filename == __file__
    # the largest argument of all the chunks, as RandomFourierFeatures.transform of all X
    with pytest.warns(RuntimeWarning) as whole:
        model.features_.transform(Xd.compute())
    assert str(found[0].message) == str(_phase_warnings(whole)[0].message)


def test_feature_ridge_predict_warns_when_computed_naming_its_call():
    # predict is lazy: each chunk warns when dask maps it; on a worker's thread the warning
    # named only concurrent/futures/thread.py, now its message names the line of predict
    import sys

    import dask

    X = np.random.default_rng(0).normal(size=(40, 2))
    Xd = da.from_array(X, chunks=20)
    with dask.config.set(scheduler="threads"):
        model = DaskFeatureRidge(RandomFourierFeatures(random_state=0)).fit(Xd, X[:, 0])
        pred = model.predict(da.from_array(X * 1e17, chunks=20))
        line = sys._getframe().f_lineno - 1
        with pytest.warns(RuntimeWarning) as record:
            pred.compute()
    found = _phase_warnings(record)
    assert found and all(f"predict called at {__file__}:{line}." in str(w.message) for w in found)


def test_feature_ridge_warns_once_for_a_lost_phase_of_cosine_kitchen_sinks():
    import dask

    from kernelcourse.features import RandomKitchenSinks

    Xd, yd = _lost_phase_data()
    sinks = RandomKitchenSinks(basis="cosine", n_components=10, random_state=0)
    with dask.config.set(scheduler="threads"), pytest.warns(RuntimeWarning) as record:
        DaskFeatureRidge(sinks, fit_intercept=True).fit(Xd, yd)
    found = _phase_warnings(record)
    assert len(found) == 1 and found[0].filename == __file__
    assert "lower scale=" in str(found[0].message)
