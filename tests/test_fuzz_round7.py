"""Round seven of fuzzing the public API with bad and extreme inputs: regression tests for
the defects it found (warnings that named a line of scikit-learn or of the package instead of
the user's, parameters at their edges, pickled and cloned estimators, float32 against
float64)."""

import sys
import threading
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import Ridge
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import make_pipeline


def _data(n=30, d=3):
    X = np.random.default_rng(0).normal(size=(n, d))
    return X, X[:, 0] + 0.5 * X[:, 1], (X[:, 0] > 0).astype(int)


def _rff(**params):
    from kernelcourse.features import RandomFourierFeatures

    return RandomFourierFeatures(n_components=8, random_state=0, **params)


def _recorded(call):
    """The warnings ``call()`` raises, each one shown (no registry, no filter)."""
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        call()
    return record


# -- 1. warnings name the user's line, however the package is called -----------------------
def _phase_cases():
    from kernelcourse.features import RandomKitchenSinks, fourier_features
    from kernelcourse.ridge import FeatureRidge, FeatureRidgeClassifier
    from kernelcourse.scale import StreamingFeatureRidge
    from kernelcourse.sgd import FeatureSGDClassifier

    X, y, labels = _data()
    big = X * 1e30
    fitted = _rff().fit(X)
    sinks = RandomKitchenSinks(basis="cosine", n_components=5, random_state=0)
    # every case warns exactly once, from the line in this file that calls the package
    return {
        "transform": lambda: fitted.transform(big),
        "fourier_features": lambda: fourier_features(big, fitted.omega_.T, fitted.offset_, 1.0),
        "fit_transform": lambda: _rff().fit_transform(big),
        "set_output": lambda: _rff().set_output(transform="default").fit_transform(big),
        "Pipeline.fit": lambda: make_pipeline(_rff(), Ridge()).fit(big, y),
        "Pipeline.fit_transform": lambda: make_pipeline(_rff()).fit_transform(big),
        "kitchen_sinks.fit_transform": lambda: sinks.fit_transform(big),
        "FeatureRidge": lambda: FeatureRidge(_rff()).fit(big, y),
        "FeatureRidge(fitted map)": lambda: FeatureRidge(fitted).fit(big, y),
        "FeatureRidgeClassifier": lambda: FeatureRidgeClassifier(_rff()).fit(big, labels),
        "StreamingFeatureRidge": lambda: StreamingFeatureRidge(_rff()).fit(big, y),
        "StreamingFeatureRidge.partial_fit": (
            lambda: StreamingFeatureRidge(_rff()).partial_fit(big, y)
        ),
        "FeatureSGDClassifier": lambda: FeatureSGDClassifier(_rff(), random_state=0).fit(
            big, labels
        ),
        "FeatureSGDClassifier.partial_fit": (
            lambda: FeatureSGDClassifier(_rff(), random_state=0).partial_fit(
                big, labels, classes=[0, 1]
            )
        ),
        "Pipeline(FeatureRidge)": lambda: make_pipeline(FeatureRidge(_rff())).fit(big, y),
    }


@pytest.mark.parametrize("case", list(_phase_cases()))
def test_a_lost_phase_warns_once_at_the_users_line(case):
    # fit_transform (scikit-learn's TransformerMixin calls transform), Pipeline, and every
    # estimator that transforms inside fit named sklearn/base.py, sklearn/pipeline.py or a
    # module of the package; FeatureRidge and FeatureSGDClassifier warned a second time for
    # the one row they transform first, only to count the features
    record = [w for w in _recorded(_phase_cases()[case]) if "resolve their phase" in str(w.message)]
    assert len(record) == 1, [str(w.message) for w in record]
    assert record[0].filename == __file__
    assert record[0].category is RuntimeWarning


def test_a_lost_phase_warns_at_the_users_line_in_a_grid_search():
    from kernelcourse.ridge import FeatureRidge

    X, y, _ = _data()
    search = GridSearchCV(FeatureRidge(_rff()), {"lam": [0.1, 1.0]}, cv=2)
    record = _recorded(lambda: search.fit(X * 1e30, y))
    phase = [w for w in record if "resolve their phase" in str(w.message)]
    assert phase and all(w.filename == __file__ for w in phase)
    # the same through cross_val_score, and the features of a pipeline's predict
    model = make_pipeline(_rff(), Ridge()).fit(X, y)
    for call in (
        lambda: cross_val_score(FeatureRidge(_rff()), X * 1e30, y, cv=2),
        lambda: model.predict(X * 1e30),
    ):
        phase = [w for w in _recorded(call) if "resolve their phase" in str(w.message)]
        assert phase and all(w.filename == __file__ for w in phase)


def _other_cases():
    from kernelcourse.features import Nystroem
    from kernelcourse.ridge import KernelRidge, solve_regularized_psd
    from kernelcourse.scale import NystroemKRR, conjugate_gradient
    from kernelcourse.svm import KernelSVC, PrimalSVC

    X, y, labels = _data()
    singular = np.ones((3, 3))
    return {
        "Nystroem m > n, Pipeline": (
            UserWarning,
            lambda: make_pipeline(Nystroem(n_components=40), Ridge()).fit(X, y),
        ),
        "Nystroem m > n, fit_transform": (
            UserWarning,
            lambda: Nystroem(n_components=40).fit_transform(X),
        ),
        "NystroemKRR m > n, Pipeline": (
            UserWarning,
            lambda: make_pipeline(NystroemKRR(n_components=40, random_state=0)).fit(X, y),
        ),
        "NystroemKRR max_iter, Pipeline": (
            ConvergenceWarning,
            lambda: make_pipeline(
                NystroemKRR(n_components=20, lam=1e-9, max_iter=1, tol=1e-14, random_state=0)
            ).fit(X, y),
        ),
        "KernelSVC max_iter, Pipeline": (
            ConvergenceWarning,
            lambda: make_pipeline(KernelSVC(max_iter=1)).fit(X, labels),
        ),
        "PrimalSVC max_iter, Pipeline": (
            ConvergenceWarning,
            lambda: make_pipeline(PrimalSVC(max_iter=1)).fit(X, labels),
        ),
        "KernelRidge singular, Pipeline": (
            Warning,
            lambda: make_pipeline(KernelRidge(kernel="linear", lam=1e-300)).fit(X[:, :1], y),
        ),
        "solve_regularized_psd": (Warning, lambda: solve_regularized_psd(singular, [1, 2, 3], 0)),
        "conjugate_gradient": (
            ConvergenceWarning,
            lambda: conjugate_gradient(lambda v: v * [1, 1e6, 1e12], [1, 1, 1], max_iter=1),
        ),
    }


@pytest.mark.parametrize("case", list(_other_cases()))
def test_the_packages_other_warnings_name_the_users_line(case):
    category, call = _other_cases()[case]
    record = [w for w in _recorded(call) if issubclass(w.category, category)]
    ours = [w for w in record if "sklearn" not in w.filename or w.filename == __file__]
    assert ours, [str(w.message) for w in record]
    assert all(w.filename == __file__ for w in ours), [(w.filename, str(w.message)) for w in ours]


def test_find_stack_level_skips_what_python_3_12_skip_file_prefixes_skips():
    # The stack level names the first frame outside the package and the libraries that call
    # into it, as warnings.warn(..., skip_file_prefixes=...) of Python 3.12 does; a frame of
    # the user's code between two of the package's (a callable the package calls) is the
    # user's line.
    from kernelcourse._validation import _library_prefixes, find_stack_level

    prefixes = _library_prefixes()
    assert all(p.endswith(("/", "\\")) for p in prefixes)
    assert any(p.rstrip("/\\").endswith("kernelcourse") for p in prefixes)
    assert any(p.rstrip("/\\").endswith("sklearn") for p in prefixes)
    assert not any(__file__.startswith(p) for p in prefixes)

    def warn_here():  # in this file: level 1 is this function itself
        return find_stack_level()

    assert warn_here() == 1
    if sys.version_info >= (3, 12):  # the same frame as the standard library's own skip
        from kernelcourse.features import RandomFourierFeatures

        X, _, _ = _data()
        rff = RandomFourierFeatures(n_components=8, random_state=0).fit(X)
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            rff.fit_transform(X * 1e30)
        assert record[0].filename == __file__


def test_a_user_callable_between_the_packages_frames_is_the_users_line():
    # conjugate_gradient calls the user's matvec; a warning of the package raised while the
    # package is called again from inside it names the user's matvec, not the outer call
    from kernelcourse.features import RandomFourierFeatures

    X, _, _ = _data()
    rff = RandomFourierFeatures(n_components=3, random_state=0).fit(X)
    lines = []

    def matvec(v):
        lines.append(sys._getframe().f_lineno + 1)
        rff.transform(X[:1] * 1e30)
        return v

    from kernelcourse.scale import conjugate_gradient

    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        conjugate_gradient(matvec, np.ones(3), max_iter=1)
    phase = [w for w in record if "resolve their phase" in str(w.message)]
    assert phase and all(w.filename == __file__ for w in phase)
    assert {w.lineno for w in phase} == set(lines)


def test_warnings_at_the_users_line_from_two_threads_at_once():
    # the stack level is computed from each thread's own frames: no shared state to race on
    # (the record is taken once, around both threads: warnings.catch_warnings in each
    # thread would itself be the race that 3ceb196 removed from the package)
    from kernelcourse.ridge import FeatureRidge

    X, y, _ = _data()
    errors = []

    def work():
        try:
            for _ in range(5):
                FeatureRidge(_rff()).fit(X * 1e30, y)
        except Exception as err:  # pragma: no cover (reported below)
            errors.append(err)

    threads = [threading.Thread(target=work) for _ in range(2)]
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert not errors
    assert len(record) == 10  # once per fit
    assert all(w.filename == __file__ for w in record)
    assert {w.lineno for w in record} == {work.__code__.co_firstlineno + 3}


# -- 3. kernel_section names x with a hint for one point ------------------------------------
@pytest.mark.parametrize(
    ("x", "error", "message"),
    [
        (3.0, ValueError, r"^x must be one point, of shape \(d,\) or \(1, d\), got the number 3"),
        (np.float32(2.0), ValueError, r"a point of a 1-D input space is a list or array, \[2"),
        (np.zeros((1, 1, 2)), ValueError, r"got shape \(1, 1, 2\); pass one point"),
        ([[1.0], [1.0, 2.0]], ValueError, r"^x is ragged"),
        ("a", TypeError, r"^x must be a numeric array"),
        ([[1.0, 2.0], [3.0, 4.0]], ValueError, r"^x must be a single point"),
    ],
)
def test_kernel_section_names_x_with_a_hint_for_one_point(x, error, message):
    # a number got as_float_matrix's hint for data of many rows, x.reshape(-1, 1), which
    # kernel_section then refused as (n, 1) of more than one row; a ragged list got numpy's
    # "setting an array element with a sequence", which named nothing
    from kernelcourse.kernels import RBF
    from kernelcourse.rkhs import kernel_section

    with pytest.raises(error, match=message) as info:
        kernel_section(RBF(), x)
    assert "reshape(-1, 1)" not in str(info.value)
    assert kernel_section(RBF(), [3.0]).n_centers == 1


# -- parameters at their edges ----------------------------------------------------------------
def _real_parameters():
    from kernelcourse.features import Nystroem, RandomFourierFeatures, RandomKitchenSinks
    from kernelcourse.ridge import (
        FeatureRidge,
        FeatureRidgeClassifier,
        KernelRidge,
        RidgeRegression,
    )
    from kernelcourse.scale import NystroemKRR, NystroemKRRClassifier, StreamingFeatureRidge
    from kernelcourse.sgd import FeatureSGDClassifier
    from kernelcourse.svm import KernelSVC, PrimalSVC

    rff = RandomFourierFeatures(n_components=8, random_state=0)
    nys = {"n_components": 5, "random_state": 0}
    return [
        (RidgeRegression(), "lam"),
        (KernelRidge(), "lam"),
        (KernelRidge(), "gamma"),
        (FeatureRidge(rff), "lam"),
        (FeatureRidge(rff), "tol"),
        (FeatureRidgeClassifier(rff), "lam"),
        (NystroemKRR(**nys), "lam"),
        (NystroemKRR(**nys), "tol"),
        (NystroemKRRClassifier(**nys), "lam"),
        (StreamingFeatureRidge(rff), "lam"),
        (StreamingFeatureRidge(rff), "tol"),
        (FeatureSGDClassifier(rff, random_state=0), "lam"),
        (FeatureSGDClassifier(rff, random_state=0), "eta0"),
        (KernelSVC(), "C"),
        (KernelSVC(), "cache_size"),
        (PrimalSVC(), "C"),
        (PrimalSVC(), "tol"),
        (PrimalSVC(), "intercept_scaling"),
        (RandomFourierFeatures(n_components=8), "ridge"),
        (RandomFourierFeatures(n_components=8), "gamma"),
        (Nystroem(n_components=5), "ridge"),
        (RandomKitchenSinks(n_components=5), "scale"),
        (RandomKitchenSinks(n_components=5), "bandwidth"),
    ]


@pytest.mark.parametrize(
    ("estimator", "name"), _real_parameters(), ids=lambda v: getattr(v, "__name__", str(v))
)
@pytest.mark.parametrize("flag", [True, np.True_])
def test_a_bool_is_not_a_real_hyper_parameter(estimator, name, flag):
    # numbers.Real counts True as 1: lam=True, C=True, tol=True, eta0=True fitted as 1,
    # where the functions (smo_solve, DaskFeatureRidge) refuse True by name, as the
    # counts (max_iter, n_components) do
    from sklearn.base import is_classifier

    X, y, labels = _data()
    target = labels if is_classifier(estimator) else y
    model = clone(estimator).set_params(**{name: flag})
    args = (X,) if not hasattr(estimator, "predict") else (X, target)
    with pytest.raises((TypeError, ValueError), match=rf"'{name}' parameter .*not a bool"):
        model.fit(*args)
    # a number of any type is still a number
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for value in (np.float32(0.5), np.int64(1), 1):
            clone(estimator).set_params(**{name: value}).fit(*args)


@pytest.mark.parametrize("make", ["NystroemKRR", "NystroemKRRClassifier", "falkon_solve"])
def test_falkon_names_lam_when_lam_times_n_overflows(make):
    # λn K_MM overflowed: scipy's "array must not contain infs or NaNs" named nothing
    from kernelcourse.kernels import RBF
    from kernelcourse.scale import NystroemKRR, NystroemKRRClassifier
    from kernelcourse.solvers import FalkonPreconditioner, falkon_solve

    X, y, labels = _data()
    message = r"^lam \* n = 1e\+308 \* 30 overflows floating point .*lower lam"
    with pytest.raises(ValueError, match=message):
        if make == "falkon_solve":
            C = X[:5]
            B = FalkonPreconditioner(RBF()(C, C), 1e308, 30)
            falkon_solve(B, lambda V: V, np.ones((5, 1)), 1e308, 30)
        elif make == "NystroemKRR":
            NystroemKRR(n_components=5, lam=1e308, random_state=0).fit(X, y)
        else:
            NystroemKRRClassifier(n_components=5, lam=1e308, random_state=0).fit(X, labels)
    NystroemKRR(n_components=5, lam=1e300, random_state=0).fit(X, y)  # λn finite: fits


def _regressors():
    from kernelcourse.ridge import FeatureRidge, KernelRidge, RidgeRegression
    from kernelcourse.scale import NystroemKRR, StreamingFeatureRidge

    return [
        RidgeRegression(),
        KernelRidge(),
        FeatureRidge(_rff()),
        NystroemKRR(n_components=5, random_state=0),
        StreamingFeatureRidge(_rff()),
    ]


@pytest.mark.parametrize("estimator", _regressors(), ids=lambda e: type(e).__name__)
def test_regressors_name_a_none_or_a_word_among_the_targets(estimator):
    # None became NaN in the cast, past scikit-learn's check of an object y (it looks for
    # NaN only): RidgeRegression said 'y minus its mean overflows', KernelRidge 'b contains
    # NaN', NystroemKRR blamed the kernel; [1, 'a', ...] named the 1 as the non-numeric
    # value, in np.str_('a') form for an array of text, and StreamingFeatureRidge.fit gave
    # numpy's "could not convert string to float"
    X, y, _ = _data(4)
    with pytest.raises(ValueError, match=r"^y contains None; a regressor needs a number"):
        clone(estimator).fit(X, [1.0, None, 2.0, 3.0])
    for bad in (np.array([1, "a", 2, 3], dtype=object), ["1", "2", "a", "3"]):
        with pytest.raises(ValueError, match=r"non-numeric values such as 'a'; use a classifier"):
            clone(estimator).fit(X, bad)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = clone(estimator).fit(X, y)
    with pytest.raises(ValueError, match=r"^y contains None"):
        model.score(X, [1.0, None, 2.0, 3.0])
    # numbers held as Python objects are numbers
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clone(estimator).fit(X, np.array([1, 2.5, 3, 4], dtype=object))


@pytest.mark.parametrize("estimator", _regressors(), ids=lambda e: type(e).__name__)
def test_fit_and_predict_name_an_x_of_none(estimator):
    # np.asarray(None, dtype=float) is the number NaN: "y: Expected 2D array, got scalar
    # array instead: array=nan", which blamed y for the missing X
    X, y, _ = _data()
    with pytest.raises(ValueError, match=r"^X is None; pass the data X"):
        clone(estimator).fit(None, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = clone(estimator).fit(X, y)
    with pytest.raises(ValueError, match=r"^X is None; pass the data X"):
        model.predict(None)
    with pytest.raises(ValueError, match=r"^X is None; pass the data X"):
        _rff().fit(None)


@pytest.mark.parametrize("make", ["DaskFeatureRidge", "DaskNystroemKRR"])
def test_dask_estimators_name_a_y_of_none(make):
    # an AttributeError ("'NoneType' object has no attribute 'shape'", or 'mean') came from
    # inside the fit
    da = pytest.importorskip("dask.array")
    from kernelcourse.distributed import DaskFeatureRidge, DaskNystroemKRR

    X, _, _ = _data()
    model = {"DaskFeatureRidge": DaskFeatureRidge(), "DaskNystroemKRR": DaskNystroemKRR()}[make]
    with pytest.raises(ValueError, match=rf"^y is None: {make}.fit needs the targets y"):
        model.fit(da.from_array(X, chunks=10), None)


def test_a_point_given_as_a_1d_array_gets_both_reshape_hints():
    # a kernel, an RKHS function or a transformer called on one point x of shape (d,) was
    # told to reshape it to (d, 1), one feature of d samples, which then failed on the
    # number of features; the hint now names both readings, as scikit-learn's does
    from kernelcourse.kernels import RBF
    from kernelcourse.rkhs import RKHSFunction

    X, _, _ = _data()
    f = RKHSFunction(RBF(), X[:5], np.ones(5))
    message = r"got shape \(3,\); reshape 1-D data with X\.reshape\(-1, 1\) if it is one "
    message += r"feature, or X\.reshape\(1, -1\) if it is one sample\.$"
    for call in (lambda: RBF()(X[0], X), lambda: f(X[0])):
        with pytest.raises(ValueError, match=message):
            call()
    # the hint's second reading is the right one here
    np.testing.assert_array_equal(RBF()(X[0].reshape(1, -1), X), RBF()(X[:1], X))
    with pytest.raises(ValueError, match=r"got shape \(\)\.$"):  # no hint for a number
        RBF()(np.float64(1.0), X)


def test_orthogonal_sampling_names_d_when_its_blocks_do_not_fit_in_memory():
    # the d × d blocks were allocated as they came: numpy's "Unable to allocate 74.5 GiB for
    # an array with shape (1, 100000, 100000)" named neither d nor the method, and a d
    # that fits only just swapped for minutes
    from kernelcourse.features import RandomFourierFeatures
    from kernelcourse.kernels import RBF
    from kernelcourse.spectral import spectral_measure

    message = r"^orthogonal sampling in d=100000 dimensions .* use method='mc' or 'qmc'\.$"
    with pytest.raises(MemoryError, match=message):
        spectral_measure(RBF()).sample(3, 10**5, method="orthogonal", random_state=0)
    X = np.zeros((1, 10**5), dtype=np.float32)
    rff = RandomFourierFeatures(n_components=3, sampling="orthogonal", random_state=0)
    with pytest.raises(MemoryError, match=message):
        rff.fit(X)
    assert spectral_measure(RBF()).sample(3, 100, method="orthogonal").shape == (3, 100)


def _all_estimators():
    from kernelcourse.features import Nystroem, RandomBinningFeatures, RandomKitchenSinks
    from kernelcourse.ridge import FeatureRidgeClassifier
    from kernelcourse.scale import NystroemKRRClassifier
    from kernelcourse.sgd import FeatureSGDClassifier
    from kernelcourse.svm import KernelSVC, PrimalSVC

    return [
        *_regressors(),
        FeatureRidgeClassifier(_rff()),
        NystroemKRRClassifier(n_components=5, random_state=0),
        FeatureSGDClassifier(_rff(), random_state=0),
        KernelSVC(),
        PrimalSVC(),
        _rff(),
        Nystroem(n_components=5, random_state=0),
        RandomBinningFeatures(n_grids=5, random_state=0),
        RandomKitchenSinks(n_components=5, random_state=0),
    ]


@pytest.mark.parametrize("estimator", _all_estimators(), ids=lambda e: type(e).__name__)
def test_fitted_estimators_pickle_and_agree_in_float32(estimator):
    # no defect found: a guard that a pickled fitted model gives the same outputs, to the
    # bit, that a clone refits to the same model, and that float32 input agrees with float64
    import pickle

    from sklearn.base import is_classifier, is_regressor

    X, y, labels = _data()
    target = y if is_regressor(estimator) else labels
    args = (target,) if hasattr(estimator, "predict") else ()

    def outputs(model, A):
        out = model.predict(A) if hasattr(model, "predict") else model.transform(A)
        return out.toarray() if hasattr(out, "toarray") else np.asarray(out)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = clone(estimator).fit(X, *args)
        again = clone(model).fit(X, *args)
        single = clone(estimator).fit(X.astype(np.float32), *args)
    np.testing.assert_array_equal(outputs(pickle.loads(pickle.dumps(model)), X), outputs(model, X))
    np.testing.assert_array_equal(outputs(again, X), outputs(model, X))
    low = outputs(single, X.astype(np.float32))
    if is_classifier(estimator):
        np.testing.assert_array_equal(low, outputs(model, X))
    else:
        np.testing.assert_allclose(low, outputs(model, X), atol=1e-3)
