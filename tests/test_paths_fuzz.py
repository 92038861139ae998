"""Bad and extreme inputs on the other computation paths: the array-API functions of
:mod:`kernelcourse.devices` against the numpy kernels and estimators, the dask estimators of
:mod:`kernelcourse.distributed` against their in-memory models, and the SGD of
:mod:`kernelcourse.sgd` against scikit-learn's. The same inputs give the same numbers, or the
same error."""

import re
import warnings

import numpy as np
import pytest
import sklearn
from sklearn.linear_model import SGDClassifier
from sklearn.preprocessing import FunctionTransformer

from kernelcourse import kernels as kn
from kernelcourse.features import RandomBinningFeatures, RandomFourierFeatures
from kernelcourse.sgd import STRATEGIES, FeatureSGDClassifier


def _labelled(n=300, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    return X, (X[:, 0] + 0.5 * X[:, 1] > 0).astype(int)


# -- SGD -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("loss, sk_loss", [("hinge", "hinge"), ("logistic", "log_loss")])
def test_feature_sgd_is_sklearn_averaged_sgd_with_its_optimal_schedule(loss, sk_loss):
    # scikit-learn's "optimal" step 1/(α(t₀ + t)) with its t₀ = 1/(η₀α), η₀ = √(1/√α), is
    # η₀/(1 + η₀αt): on the identity map both take the same steps and average them alike
    X, y = _labelled()
    lam = 1e-3
    eta0 = np.sqrt(1.0 / np.sqrt(lam))
    ours = FeatureSGDClassifier(FunctionTransformer(), loss=loss, lam=lam, eta0=eta0).fit(X, y)
    ref = SGDClassifier(
        loss=sk_loss,
        alpha=lam,
        learning_rate="optimal",
        average=True,
        shuffle=False,
        max_iter=1,
        tol=None,
    ).fit(X, y)
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ours.intercept_, ref.intercept_, rtol=1e-12, atol=1e-12)


def test_feature_sgd_partial_fit_refuses_other_classes_later():
    # classes=[0, 2] on a second call was silently ignored (labels 1 kept counting as the
    # positive class); scikit-learn's partial_fit refuses it
    X, y = _labelled(n=40)
    clf = FeatureSGDClassifier(FunctionTransformer())
    clf.partial_fit(X[:20], y[:20], classes=[0, 1])
    coef = clf.coef_.copy()
    with pytest.raises(ValueError, match=r"`classes=\[0, 2\]` is not the same as on last call"):
        clf.partial_fit(X[20:], y[20:], classes=[0, 2])
    np.testing.assert_array_equal(clf.coef_, coef)  # the refused call changed nothing
    clf.partial_fit(X[20:], y[20:], classes=[1, 0, 1])  # the same classes, in any order
    assert clf.n_samples_seen_ == 40


@pytest.mark.parametrize("loss", ["hinge", "logistic"])
def test_feature_sgd_refuses_margins_that_overflow(loss):
    # on features of 1e200 the margins wᵀψ(x) overflowed to ±inf and NaN while the weights
    # stayed finite: a NaN hinge margin counted as classified, the fit returned, and its
    # decision values on the training rows were NaN (predicted as class 0)
    X, y = _labelled()
    clf = FeatureSGDClassifier(FunctionTransformer(), loss=loss)
    with pytest.raises(ValueError, match=r"margins wᵀψ\(x\) \+ b overflowed"):
        clf.fit(1e200 * X, y)
    assert not hasattr(clf, "coef_")  # a failed first call leaves no model
    # the progress line's loss of such margins came with numpy's overflow warning
    chatty = FeatureSGDClassifier(FunctionTransformer(), loss=loss, verbose=2, block_size=50)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.raises(ValueError, match="margins"):
            chatty.fit(1e200 * X, y)
    clf.partial_fit(X, y, classes=[0, 1])
    coef = clf.coef_.copy()
    with pytest.raises(ValueError, match="margins"):
        clf.partial_fit(1e200 * X, y)
    np.testing.assert_array_equal(clf.coef_, coef)  # a failed later call leaves the model
    assert clf.n_samples_seen_ == len(X)


def test_feature_sgd_decision_function_refuses_overflow():
    # a model with weights of 1e297 on inputs of 1e12: scores of ±inf came back with numpy's
    # overflow warning only (and inf − inf = NaN, which predict called class 0)
    X, y = _labelled()
    clf = FeatureSGDClassifier(FunctionTransformer(), eta0=1e300).fit(X, y)
    assert np.isfinite(clf.decision_function(X)).all()
    with pytest.raises(ValueError, match="decision values on X .* overflow floating point"):
        clf.decision_function(1e12 * X)
    with pytest.raises(ValueError, match="decision values on X"):
        clf.predict(1e12 * X)


@pytest.mark.parametrize("strategy", [5, 6])
def test_approximate_feature_strategies_take_sparse_feature_maps(strategy):
    # random binning returns a CSR matrix: np.asarray of it failed with "setting an array
    # element with a sequence"
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 3))
    y = X[:, 0]
    fm = RandomBinningFeatures(n_grids=3, random_state=0).fit(X)
    Z = fm.transform(X).toarray()
    order = rng.integers(0, 50, size=120)
    w = np.zeros(Z.shape[1])
    for i in order:  # the primal loop written out
        w -= 0.05 * (Z[i] @ w - y[i]) * Z[i]
    result = STRATEGIES[strategy](X, y, fm, order=order, step_size=0.05)
    np.testing.assert_allclose(result.coef, w, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(result.predict(X), Z @ w, rtol=1e-12, atol=1e-14)


# -- dask ------------------------------------------------------------------------------------------
@pytest.fixture
def dask_sync():
    """The dask estimators on the synchronous scheduler: no cluster, same numbers."""
    dask = pytest.importorskip("dask")
    pytest.importorskip("dask.array")
    with dask.config.set(scheduler="synchronous"):
        yield


def _regression(n=40, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    return X, X[:, 0] + 0.1 * rng.normal(size=n)


@pytest.mark.parametrize("value", ["yes", None, np.nan, 2])
def test_dask_feature_ridge_checks_fit_intercept(dask_sync, value):
    # fit_intercept was taken for its truth value: "yes" and 2 fitted an intercept, None
    # none, where StreamingFeatureRidge refuses them
    import dask.array as da
    from sklearn.utils._param_validation import InvalidParameterError

    from kernelcourse.distributed import DaskFeatureRidge
    from kernelcourse.scale import StreamingFeatureRidge

    X, y = _regression()
    rff = RandomFourierFeatures(n_components=10, random_state=0)
    with pytest.raises(InvalidParameterError, match="'fit_intercept' parameter"):
        DaskFeatureRidge(rff, fit_intercept=value).fit(da.from_array(X, chunks=10), y)
    with pytest.raises(InvalidParameterError, match="'fit_intercept' parameter"):
        StreamingFeatureRidge(rff, fit_intercept=value).fit(X, y)


def test_dask_estimators_refuse_complex_x_as_in_memory(dask_sync):
    # DaskNystroemKRR cast complex X to float, dropping the imaginary part with numpy's
    # ComplexWarning only; NystroemKRR refuses it
    import dask.array as da

    from kernelcourse.distributed import DaskFeatureRidge, DaskNystroemKRR
    from kernelcourse.scale import NystroemKRR

    X, y = _regression()
    Xc = X + 1j * X
    with pytest.raises(ValueError, match="Complex data not supported"):
        NystroemKRR(n_components=5).fit(Xc, y)
    dxc = da.from_array(Xc, chunks=10)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no ComplexWarning: an error before any cast
        with pytest.raises(ValueError, match="Complex data not supported"):
            DaskNystroemKRR(n_components=5).fit(dxc, y)
        with pytest.raises(ValueError, match="Complex data not supported"):
            DaskFeatureRidge(RandomFourierFeatures(n_components=5)).fit(dxc, y)
        model = DaskNystroemKRR(n_components=5, random_state=0).fit(da.from_array(X, 10), y)
        with pytest.raises(ValueError, match="Complex data not supported"):
            model.predict(dxc)


def test_dask_estimators_take_a_numpy_y_of_objects(dask_sync):
    # a numpy y of dtype object (numbers from a DataFrame column) failed inside dask:
    # "NotImplementedError: Can not use auto rechunking with object dtype"
    import dask.array as da

    from kernelcourse.distributed import DaskFeatureRidge, DaskNystroemKRR

    X, y = _regression()
    dx = da.from_array(X, chunks=10)
    rff = RandomFourierFeatures(n_components=10, random_state=0)
    ref = DaskFeatureRidge(rff).fit(dx, y)
    got = DaskFeatureRidge(rff).fit(dx, y.astype(object))
    np.testing.assert_allclose(got.coef_, ref.coef_, rtol=1e-12)
    kw = dict(n_components=5, random_state=0)
    ref = DaskNystroemKRR(**kw).fit(dx, y)
    got = DaskNystroemKRR(**kw).fit(dx, y.astype(object))
    np.testing.assert_allclose(got.dual_coef_, ref.dual_coef_, rtol=1e-12)
    with pytest.raises(TypeError, match="y must be a real numeric array, got dtype object"):
        DaskFeatureRidge(rff).fit(dx, np.array(["a"] * len(X), dtype=object))


def test_dask_feature_ridge_takes_sparse_features_as_streaming(dask_sync):
    # random binning returns CSR blocks: np.asarray made a 0-d object array of the first,
    # and the fit failed with "IndexError: tuple index out of range"
    import dask.array as da

    from kernelcourse.distributed import DaskFeatureRidge
    from kernelcourse.scale import StreamingFeatureRidge

    X, y = _regression(n=50)
    fm = RandomBinningFeatures(n_grids=3, random_state=0).fit(X)
    dx = da.from_array(X, chunks=10)
    model = DaskFeatureRidge(fm, lam=0.1, fit_intercept=True).fit(dx, y)
    ref = StreamingFeatureRidge(fm, lam=0.1, fit_intercept=True, block_size=10).fit(X, y)
    np.testing.assert_allclose(model.coef_, ref.coef_, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(model.predict(dx).compute(), ref.predict(X), rtol=1e-10, atol=1e-12)


def test_dask_estimators_skip_empty_row_chunks(dask_sync):
    # an empty row chunk (as X[mask].compute_chunk_sizes() leaves) reached the feature map or
    # the kernel, and a fit on 40 rows failed with "X is empty" or "Found array with 0
    # sample(s)"; fit and predict now equal those on the same chunks without the empty one
    import dask.array as da

    from kernelcourse.distributed import DaskFeatureRidge, DaskNystroemKRR

    X, y = _regression()
    gappy = da.from_array(X, chunks=((0, 10, 0, 30), (3,)))
    plain = da.from_array(X, chunks=((10, 30), (3,)))
    dy = da.from_array(y, chunks=((0, 10, 0, 30),))
    for make in (
        lambda: DaskFeatureRidge(RandomFourierFeatures(n_components=10, random_state=0)),
        lambda: DaskNystroemKRR(n_components=5, random_state=0),
        lambda: DaskNystroemKRR(n_components=5, random_state=0, precompute=True),
    ):
        ref = make().fit(plain, y)
        model = make().fit(gappy, dy)
        coef = "coef_" if hasattr(ref, "coef_") else "dual_coef_"
        np.testing.assert_array_equal(getattr(model, coef), getattr(ref, coef))
        np.testing.assert_array_equal(model.predict(gappy).compute(), ref.predict(plain).compute())


# -- array-API path --------------------------------------------------------------------------------
def _library(name):
    """The namespace and an asarray of the library ``name``; skipped where it is missing."""
    if name == "torch":
        torch = pytest.importorskip("torch")
        import array_api_compat

        return array_api_compat.array_namespace(torch.zeros(1)), torch.asarray
    xp = pytest.importorskip(name)
    return xp, xp.asarray


LIBRARIES = ["array_api_strict", "torch"]
KERNELS = [kn.RBF(0.5), kn.Laplacian(0.5), kn.Matern(nu=1.5), kn.Polynomial(degree=2), kn.Linear()]


@pytest.mark.parametrize("library", LIBRARIES)
@pytest.mark.parametrize("kernel", KERNELS, ids=repr)
def test_gram_block_names_empty_inputs_as_the_numpy_kernels(library, kernel):
    # an empty X failed with numpy's "zero-size array to reduction operation maximum which
    # has no identity" (RBF, Matérn), or came back as an empty block (linear, Laplacian)
    from kernelcourse import devices

    xp, asarray = _library(library)
    X = np.ones((3, 2))
    for A, B, name, shape in [
        (X[:0], None, "X", (0, 2)),
        (X, X[:0], "Y", (0, 2)),
        (X[:, :0], None, "X", (3, 0)),
    ]:
        message = re.escape(f"{name} is empty (shape {shape}); it needs at least one row")
        with pytest.raises(ValueError, match=message):
            kernel(A, B)
        with pytest.raises(ValueError, match=message):
            devices.gram_block(kernel, asarray(A), None if B is None else asarray(B), xp=xp)


@pytest.mark.parametrize("library", LIBRARIES)
@pytest.mark.parametrize("kernel", KERNELS, ids=repr)
@pytest.mark.parametrize("dtype", [np.int64, np.bool_])
def test_gram_block_of_integers_and_booleans_is_the_numpy_kernels(library, kernel, dtype):
    # integer inputs failed ("Only floating-point dtypes are allowed in mean"), and a linear
    # kernel of booleans came back boolean (logical or of ands) instead of counts
    from kernelcourse import devices

    xp, asarray = _library(library)
    A = (np.arange(12).reshape(4, 3) % 5).astype(dtype)
    B = (np.arange(6).reshape(2, 3) % 4).astype(dtype)
    got = devices.gram_block(kernel, asarray(A), asarray(B), xp=xp)
    assert xp.isdtype(got.dtype, "real floating")
    expect = kernel(A.astype(np.float64), B.astype(np.float64))
    np.testing.assert_allclose(np.asarray(got), expect, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(devices.gram_block(kernel, A, B), expect, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("library", LIBRARIES)
@pytest.mark.parametrize("kernel", [*KERNELS, kn.RBF([0.5, 1.0, 2.0]), kn.Cosine()], ids=repr)
@pytest.mark.parametrize("dtypes", [(np.float32, np.float64), (np.float64, np.float32)])
def test_gram_block_of_mixed_float_dtypes_is_the_numpy_kernels(library, kernel, dtypes):
    # float32 X with float64 Y failed in the Laplacian's in-place sum, and the RBF and Matérn
    # blocks kept float32 round-off (3e-8) in a float64 result, in one argument order only
    from kernelcourse import devices

    xp, asarray = _library(library)
    rng = np.random.default_rng(0)
    A, B = rng.normal(size=(5, 3)).astype(dtypes[0]), rng.normal(size=(4, 3)).astype(dtypes[1])
    got = devices.gram_block(kernel, asarray(A), asarray(B), xp=xp)
    expect = kernel(A, B)
    assert expect.dtype == np.float64
    assert got.dtype == xp.float64
    np.testing.assert_allclose(np.asarray(got), expect, rtol=1e-13, atol=1e-14)


@pytest.mark.parametrize("library", LIBRARIES)
@pytest.mark.parametrize("kernel", [kn.Polynomial(degree=2), kn.Linear()], ids=repr)
def test_gram_block_refuses_overflow_as_the_numpy_kernels(library, kernel):
    # a polynomial kernel of inputs of 1e200 came back as a block of infinity, silently
    from kernelcourse import devices

    xp, asarray = _library(library)
    X = 1e200 * np.random.default_rng(0).normal(size=(5, 3))
    message = "the Gram matrix of the kernel .* overflows floating point"
    with pytest.raises(ValueError, match=message):
        kernel(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the error alone, not numpy's overflow warnings
        with pytest.raises(ValueError, match=message):
            devices.gram_block(kernel, asarray(X), xp=xp)
    with pytest.raises(TypeError, match="X must hold real numbers"):
        devices.gram_block(kernel, asarray(X + 1j), xp=xp)


@pytest.mark.parametrize("map_", ["cos", "cossin", "complex"])
def test_device_fourier_features_warn_where_the_phase_is_lost(dispatch, map_):
    # inputs of 1e150 made the cosine's arguments rounding noise: the numpy path warns, the
    # device path returned the noise without a word
    import array_api_strict as xs

    X = 1e150 * np.random.default_rng(0).normal(size=(6, 2))
    rff = RandomFourierFeatures(n_components=8, map=map_, random_state=0)
    with sklearn.config_context(array_api_dispatch=False):
        with pytest.warns(RuntimeWarning, match="cannot resolve their phase") as ref:
            rff.fit(X).transform(X)
    with pytest.warns(RuntimeWarning, match="cannot resolve their phase") as got:
        rff.fit(xs.asarray(X)).transform(xs.asarray(X))
    assert len(got) == 1
    assert str(got[0].message).split(" reach ")[0] == str(ref[0].message).split(" reach ")[0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # data of unit scale: no warning
        rff.transform(xs.asarray(X / 1e150))


def test_device_kernel_ridge_of_huge_targets_is_silent_as_numpy(dispatch):
    # y of 1e200: ‖b‖² in the residual check overflowed, the relative residual came out
    # inf/inf = NaN, and the device fit warned "ill-conditioned" (with numpy's overflow
    # warnings) of a solve as accurate as the numpy path's, which says nothing
    import array_api_strict as xs

    from kernelcourse.ridge import KernelRidge

    X, y = _regression(n=30)
    y = 1e200 * y
    with sklearn.config_context(array_api_dispatch=False):
        ref = KernelRidge(lam=1e-2).fit(X, y).predict(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = KernelRidge(lam=1e-2).fit(xs.asarray(X), xs.asarray(y)).predict(xs.asarray(X))
    np.testing.assert_allclose(np.asarray(got), ref, rtol=1e-10)


def test_device_nystroem_krr_float32_model_predicts_far_float64_rows_as_numpy(dispatch):
    # a model fitted on float32 rows keeps float32 centres, and predict rounded float64 X to
    # them: rows of 1e150 became infinity and predict raised that the kernel "overflows",
    # where the numpy path (in float64) predicts ȳ, K being 0 that far from every centre
    import array_api_strict as xs

    from kernelcourse.scale import NystroemKRR

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2)).astype(np.float32)
    y = np.sin(X[:, 0]).astype(np.float64)
    kw = dict(gamma=1.0, n_components=20, lam=1e-3, dtype=np.float32, random_state=0)
    far = 1e150 * rng.normal(size=(5, 2))
    with sklearn.config_context(array_api_dispatch=False):
        ref = NystroemKRR(**kw).fit(X, y).predict(far)
    np.testing.assert_allclose(ref, np.mean(y))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = NystroemKRR(**kw).fit(xs.asarray(X), xs.asarray(y))
        got = model.predict(xs.asarray(far))
    assert got.dtype == xs.float64
    np.testing.assert_allclose(np.asarray(got), ref, rtol=1e-6)


def test_device_fourier_features_name_x_beyond_float32(dispatch):
    # dtype=float32 and X of 1e39: the cast made X infinite and the error blamed the cosine's
    # arguments ("X is too large for the frequencies Ω"), not the dtype
    import array_api_strict as xs

    X = 1e39 * np.random.default_rng(0).normal(size=(6, 2))
    rff = RandomFourierFeatures(n_components=8, dtype=np.float32, random_state=0)
    rff.fit(xs.asarray(X / 1e39))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the error alone, not numpy's cast warning
        message = r"X has entries of magnitude 1.3e\+39, beyond the range of dtype=float32"
        with pytest.raises(ValueError, match=message):
            rff.transform(xs.asarray(X))
    Z = rff.transform(xs.asarray(X / 1e39))
    assert Z.dtype == xs.float32


def test_device_fourier_features_name_the_frequencies_beyond_float32(dispatch):
    # a float64 fit (Ω ~ 1e50) applied to float32 X on a device: Ω became infinite in the
    # cast and the features NaN, where the numpy path names Ω
    import array_api_strict as xs

    X = np.random.default_rng(0).normal(size=(6, 2))
    rff = RandomFourierFeatures(gamma=1e100, n_components=8, random_state=0)
    rff.fit(xs.asarray(X))
    message = r"Ω has entries of magnitude .* beyond the range of dtype=float32; these frequencies"
    with pytest.raises(ValueError, match=message):
        rff.transform(xs.asarray(X * 1e-60, dtype=xs.float32))


def test_feature_models_refuse_complex_features(dask_sync):
    # RandomFourierFeatures(map="complex"): the cast to float dropped the imaginary part with
    # numpy's ComplexWarning only, and the models were fitted on the real parts, which are
    # not features of the kernel
    import dask.array as da

    from kernelcourse.distributed import DaskFeatureRidge

    X, y = _regression()
    rff = RandomFourierFeatures(n_components=10, map="complex", random_state=0).fit(X)
    message = "must return real features, got dtype complex128"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the TypeError alone, no ComplexWarning first
        for strategy in (5, 6):
            with pytest.raises(TypeError, match=message):
                STRATEGIES[strategy](X, y, rff, order=np.arange(len(X)), step_size=0.1)
        clf = FeatureSGDClassifier(rff)
        with pytest.raises(TypeError, match=message):
            clf.fit(X, (y > 0).astype(int))
        assert not hasattr(clf, "features_")  # a failed first call leaves nothing behind
        with pytest.raises(TypeError, match=message):
            DaskFeatureRidge(rff).fit(da.from_array(X, chunks=10), y)
