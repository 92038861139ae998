"""The array-API path: array-api-strict and PyTorch (CPU; CUDA where present) give the numpy
path's results, in the input's library and on its device; the backend shim's operations."""

import importlib.util
import warnings

import array_api_compat
import numpy as np
import pytest
import sklearn
from scipy.linalg import LinAlgWarning
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._array_api import NamespaceAndDevice, yield_mixed_namespace_input_permutations
from sklearn.utils.estimator_checks import (
    check_array_api_input,
    check_array_api_input_and_values,
    check_array_api_mixed_inputs,
    check_array_api_same_namespace,
)

from kernelcourse import _array_api as aa
from kernelcourse import devices
from kernelcourse import kernels as kn
from kernelcourse.features import Nystroem, RandomFourierFeatures
from kernelcourse.ridge import KernelRidge
from kernelcourse.scale import NystroemKRR, NystroemKRRClassifier
from kernelcourse.solvers import NotPositiveDefiniteError, cholesky_jitter

xs = pytest.importorskip("array_api_strict")
HAVE_TORCH = importlib.util.find_spec("torch") is not None
HAVE_CUDA = HAVE_TORCH and __import__("torch").cuda.is_available()

needs_torch = pytest.mark.skipif(not HAVE_TORCH, reason="PyTorch is not installed")
needs_cuda = [
    pytest.mark.gpu,
    pytest.mark.skipif(not HAVE_CUDA, reason="needs a CUDA device"),
]

# (name, device) of every namespace tested here; torch on the CPU and CUDA when available
NAMESPACES = [
    pytest.param("array_api_strict", None, id="strict"),
    # a second device of array-api-strict: mixing it with the default device raises, as CUDA does
    pytest.param("array_api_strict", "device1", id="strict-device1"),
    pytest.param("torch", "cpu", id="torch-cpu", marks=needs_torch),
    pytest.param("torch", "cuda", id="torch-cuda", marks=needs_cuda),
]



def convert(a, name, device):
    if name == "torch":
        import torch

        return torch.asarray(a, device=device)
    return xs.asarray(a) if device is None else xs.asarray(a, device=xs.Device(device))


def data(n=240, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.sin(X[:, 0]) + 0.5 * X[:, 1] ** 2 + 0.1 * rng.normal(size=n)
    labels = (X[:, 1] > 0).astype(int) + (X[:, 2] > 0.3).astype(int)
    return X, y, labels


def check_same_place(out, ref_input):
    assert aa.namespace_of(out) is not None
    assert type(out) is type(ref_input)
    assert str(aa.device_of(out)) == str(aa.device_of(ref_input))


# CG run to convergence, so that both paths reach the same solution whatever their round-off
CONVERGED = dict(max_iter=60, tol=1e-10, random_state=0)

ESTIMATORS = {
    "rff": (lambda: RandomFourierFeatures(gamma=0.3, n_components=64, random_state=0), "transform"),
    "rff-cossin": (
        lambda: RandomFourierFeatures(gamma=0.3, n_components=64, map="cossin", random_state=0),
        "transform",
    ),
    "rff-complex": (
        lambda: RandomFourierFeatures(gamma=0.3, n_components=64, map="complex", random_state=0),
        "transform",
    ),
    "rff-laplacian-qmc": (
        lambda: RandomFourierFeatures(
            kernel="laplacian", gamma=0.5, n_components=32, sampling="qmc", random_state=0
        ),
        "transform",
    ),
    "nystroem": (lambda: Nystroem(gamma=0.3, n_components=50, random_state=0), "transform"),
    "nystroem-rank": (
        lambda: Nystroem(kernel="matern", n_components=40, rank=20, random_state=0),
        "transform",
    ),
    "nystroem-leverage": (
        lambda: Nystroem(gamma=0.3, n_components=40, sampling="leverage", random_state=0),
        "transform",
    ),
    "kernel-ridge": (lambda: KernelRidge(gamma=0.3, lam=1e-2), "predict"),
    "kernel-ridge-laplacian": (lambda: KernelRidge(kernel="laplacian", lam=0.1), "predict"),
    "nystroem-krr": (
        lambda: NystroemKRR(gamma=0.3, lam=1e-3, n_components=60, **CONVERGED),
        "predict",
    ),
    "nystroem-krr-precompute": (
        lambda: NystroemKRR(gamma=0.3, lam=1e-3, n_components=60, precompute=True, **CONVERGED),
        "predict",
    ),
    "nystroem-krr-plain-cg": (
        lambda: NystroemKRR(
            gamma=0.3,
            lam=1e-1,
            n_components=20,
            preconditioner=None,
            max_iter=300,
            tol=1e-10,
            random_state=0,
        ),
        "predict",
    ),
}


@pytest.mark.parametrize("name,device", NAMESPACES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("which", sorted(ESTIMATORS))
def test_same_results_as_numpy(dispatch, which, dtype, name, device):
    make, method = ESTIMATORS[which]
    X, y, _ = data()
    X = X.astype(dtype)
    ref = getattr(make().fit(X, y), method)(X)
    Xd = convert(X, name, device)
    model = make().fit(Xd, convert(y, name, device))
    out = getattr(model, method)(Xd)
    check_same_place(out, Xd)
    got = aa.to_numpy(out)
    assert got.dtype == ref.dtype
    # float32 kernel blocks differ in round-off between the two formulas; the FALKON solve
    # (CG to tol 1e-7 on a system with condition ~1/λ) amplifies it a little
    tol = 1e-4 if dtype == np.float32 else 1e-6
    np.testing.assert_allclose(got, ref, rtol=tol, atol=tol * np.abs(ref).max())


@pytest.mark.parametrize("name,device", NAMESPACES)
@pytest.mark.parametrize("precompute", [False, True])
def test_nystroem_krr_float32_agrees_with_float64_on_the_device(dispatch, name, device, precompute):
    # As on the host (tests/test_extreme_inputs.py): every point a centre and λ = 1e-6, where
    # float32 products and a float32 K_MM were off by up to 4e-2; the blocks' own rounding
    # leaves about 3e-3.
    worst = 0.0
    for seed in range(20):
        rng = np.random.default_rng(seed)
        n = int(rng.integers(4, 21))
        X, y = rng.normal(size=(n, 2)), rng.normal(size=n)
        kw = dict(gamma=0.5, n_components=n, lam=1e-6, random_state=0, precompute=precompute)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the accuracy is tested here, not the warnings
            preds = [
                aa.to_numpy(
                    NystroemKRR(dtype=dtype, **kw)
                    .fit(convert(X, name, device), convert(y, name, device))
                    .predict(convert(X, name, device))
                )
                for dtype in (np.float64, np.float32)
            ]
        worst = max(worst, np.abs(preds[1] - preds[0]).max() / np.abs(preds[0]).max())
    assert worst < 1e-2, worst


@pytest.mark.parametrize("name,device", NAMESPACES)
def test_classifier_same_predictions(dispatch, name, device):
    X, _, labels = data(n=300)
    kw = dict(gamma=0.3, lam=1e-3, n_components=60, **CONVERGED)
    ref = NystroemKRRClassifier(**kw).fit(X, labels)
    Xd = convert(X, name, device)
    model = NystroemKRRClassifier(**kw).fit(Xd, convert(labels, name, device))
    scores = aa.to_numpy(model.decision_function(Xd))
    np.testing.assert_allclose(scores, ref.decision_function(X), rtol=1e-6, atol=1e-6)
    pred = model.predict(Xd)
    check_same_place(pred, Xd)
    # scores agree to 1e-6, so only points that close to a tie could change class
    margin = np.sort(ref.decision_function(X), axis=1)
    safe = (margin[:, -1] - margin[:, -2]) > 1e-5
    np.testing.assert_array_equal(aa.to_numpy(pred)[safe], ref.predict(X)[safe])
    # string labels stay on the host
    words = np.array(["a", "b", "c"])[labels]
    model = NystroemKRRClassifier(**kw).fit(Xd, words)
    assert isinstance(model.predict(Xd), np.ndarray)


# the estimators with an array-API path, as scikit-learn's checks receive them
ARRAY_API_ESTIMATORS = [
    RandomFourierFeatures(n_components=20, random_state=0),
    Nystroem(n_components=20, random_state=0),
    KernelRidge(lam=0.1),
    NystroemKRR(n_components=20, random_state=0),
    NystroemKRRClassifier(n_components=20, random_state=0),
]


@pytest.mark.parametrize("name,device", NAMESPACES)
@pytest.mark.parametrize("estimator", ARRAY_API_ESTIMATORS, ids=lambda e: type(e).__name__)
def test_scikit_learn_array_api_check(monkeypatch, estimator, name, device):
    """scikit-learn's own check: attributes and outputs in the input's namespace and device,
    with the numpy path's values, with sample weights where fit takes them."""
    monkeypatch.setenv("SCIPY_ARRAY_API", "1")
    check_array_api_input_and_values(
        type(estimator).__name__,
        estimator,
        array_namespace=name,
        device_name=device,
        check_sample_weight=True,
    )


# X's namespace and device, and those of y and sample_weight: scikit-learn's own pairs (those
# whose library or device is missing skip), then pairs that run on any machine with PyTorch
MIXED_INPUTS = [
    pytest.param(X_nd, other_nd, id=f"{X_nd.xp}-{X_nd.device}-from-{other_nd.xp}")
    for other_nd, X_nd, _ in yield_mixed_namespace_input_permutations()
] + [
    pytest.param(
        NamespaceAndDevice("array_api_strict", None),
        NamespaceAndDevice("torch", "cpu"),
        id="strict-from-torch",
        marks=needs_torch,
    ),
    pytest.param(
        NamespaceAndDevice("torch", "cpu"),
        NamespaceAndDevice("numpy", None),
        id="torch-from-numpy",
        marks=needs_torch,
    ),
    pytest.param(  # NystroemKRRClassifier binarized a torch y with numpy X into a tensor
        NamespaceAndDevice("numpy", None),
        NamespaceAndDevice("torch", "cpu"),
        id="numpy-from-torch",
        marks=needs_torch,
    ),
]


@pytest.mark.parametrize("X_nd, other_nd", MIXED_INPUTS)
@pytest.mark.parametrize("estimator", ARRAY_API_ESTIMATORS, ids=lambda e: type(e).__name__)
def test_scikit_learn_array_api_mixed_inputs(monkeypatch, estimator, X_nd, other_nd):
    """scikit-learn's check_array_api_mixed_inputs: y and sample_weight in another library or
    on another device than X follow X. KernelRidge refused any sample_weight with array-API
    X ("sample_weight is not supported for array-API input")."""
    if X_nd.xp == "torch" or other_nd.xp == "torch":
        pytest.importorskip("torch")
    monkeypatch.setenv("SCIPY_ARRAY_API", "1")
    check_array_api_mixed_inputs(
        type(estimator).__name__,
        estimator,
        X_ns_and_device=X_nd,
        other_ns_and_device=other_nd,
        check_values=True,
    )


@pytest.mark.parametrize("dtype_name", ["float64", "float32"])
@pytest.mark.parametrize("name,device", NAMESPACES)
@pytest.mark.parametrize("estimator", ARRAY_API_ESTIMATORS, ids=lambda e: type(e).__name__)
def test_scikit_learn_array_api_dtypes(monkeypatch, estimator, name, device, dtype_name):
    """scikit-learn's check_array_api_input, as check_estimator runs it: every fitted array
    and output has the numpy path's dtype. On float32 input, RandomFourierFeatures stored
    Ω, b and the weights in float64 on the device, where the numpy path keeps float32."""
    monkeypatch.setenv("SCIPY_ARRAY_API", "1")
    check_array_api_input(
        type(estimator).__name__,
        estimator,
        array_namespace=name,
        device_name=device,
        dtype_name=dtype_name,
    )


@pytest.mark.parametrize("name,device", NAMESPACES)
@pytest.mark.parametrize("estimator", ARRAY_API_ESTIMATORS, ids=lambda e: type(e).__name__)
def test_scikit_learn_array_api_same_namespace(monkeypatch, estimator, name, device):
    """scikit-learn's check_array_api_same_namespace: numpy X after a fit on another library
    raises scikit-learn's "Inputs passed to Name.method() must use the same namespace"; ours
    said only "X is a numpy array on cpu but the estimator was fitted on ...", which the
    check (and GridSearchCV's rewording of it) did not recognise."""
    monkeypatch.setenv("SCIPY_ARRAY_API", "1")
    check_array_api_same_namespace(
        type(estimator).__name__, estimator, array_namespace=name, device_name=device
    )


def test_namespace_error_names_the_method_called_and_the_devices(dispatch):
    X, _, labels = data(n=60)
    model = NystroemKRRClassifier(n_components=10, random_state=0)
    model.fit(xs.asarray(X, device=xs.Device("device1")), xs.asarray(labels))
    # predict and decision_function share the check: the message names the one called
    with pytest.raises(ValueError, match=r"NystroemKRRClassifier\.predict\(\) must use the same"):
        model.predict(xs.asarray(X))
    with pytest.raises(ValueError, match=r"decision_function\(\) must.*device1.*pass X in the"):
        model.decision_function(xs.asarray(X))
    rff = RandomFourierFeatures(n_components=8, random_state=0).fit(xs.asarray(X))
    with pytest.raises(ValueError, match=r"RandomFourierFeatures\.transform\(\) must use"):
        rff.transform(X)
    with sklearn.config_context(array_api_dispatch=False):
        with pytest.raises(ValueError, match=r"transform\(\) must use.*array_api_dispatch=True"):
            rff.transform(X)


def test_numpy_input_keeps_numpy_path(dispatch):
    X, y, _ = data()
    with sklearn.config_context(array_api_dispatch=False):
        ref = RandomFourierFeatures(n_components=32, random_state=0).fit(X).transform(X)
    out = RandomFourierFeatures(n_components=32, random_state=0).fit(X).transform(X)
    assert isinstance(out, np.ndarray)
    np.testing.assert_allclose(out, ref, rtol=1e-12, atol=0)
    assert isinstance(NystroemKRR(n_components=20).fit(X, y).dual_coef_, np.ndarray)


def test_fitted_elsewhere_is_refused(monkeypatch):
    X, y, _ = data()
    monkeypatch.setenv("SCIPY_ARRAY_API", "1")
    with sklearn.config_context(array_api_dispatch=True):
        model = KernelRidge(lam=0.1).fit(xs.asarray(X), xs.asarray(y))
        with pytest.raises(ValueError, match="fitted on array_api_strict"):
            model.predict(X)
    with pytest.raises(ValueError, match="array_api_dispatch=True"):
        model.predict(X)
    numpy_model = Nystroem(n_components=10).fit(X)
    with sklearn.config_context(array_api_dispatch=True):
        with pytest.raises(ValueError, match="fitted on numpy"):
            numpy_model.transform(xs.asarray(X))


def test_kernel_without_array_api_form(dispatch):
    X, y, _ = data()
    with pytest.raises(TypeError, match="no array-API form"):
        KernelRidge(kernel=kn.exp(kn.Linear())).fit(xs.asarray(X), xs.asarray(y))


@pytest.mark.parametrize(
    "kernel",
    [
        kn.RBF(0.2),
        kn.Laplacian(0.3),
        kn.Matern(0.5),
        kn.Matern(1.5, length_scale=2.0),
        kn.Matern(2.5),
        kn.Polynomial(3, gamma=0.2, coef0=1.0),
        kn.Linear(),
        kn.Linear(np.diag([1.0, 2.0, 0.5, 1.0, 3.0])),
        kn.Cosine(),
        2.0 * kn.RBF(0.1) + kn.Polynomial(2) * kn.Laplacian(0.2),
    ],
    ids=repr,
)
def test_gram_block_matches_kernels(kernel):
    X, _, _ = data(n=30)
    Y = X[:7] + 0.1
    got = aa.to_numpy(devices.gram_block(kernel, xs.asarray(X), xs.asarray(Y), xp=xs))
    np.testing.assert_allclose(got, kernel(X, Y), rtol=1e-12, atol=1e-12)


def test_gram_block_without_xp_uses_the_library_of_x():
    # with xp left out and array_api_dispatch off, an array-api-strict X went to the numpy
    # code: AttributeError: 'Array' object has no attribute 'sum'
    X, _, _ = data(n=12)
    K = devices.gram_block(kn.RBF(0.3), xs.asarray(X))
    assert isinstance(K, type(xs.asarray(X)))
    np.testing.assert_allclose(aa.to_numpy(K), kn.RBF(0.3)(X), atol=1e-12)


def test_not_positive_definite_warns_and_solves(dispatch):
    X, y, _ = data(n=40)
    X = np.vstack([X, X[:5]])  # duplicate rows: K is singular, λ = 0 leaves it so
    y = np.concatenate([y, y[:5]])
    with pytest.warns(LinAlgWarning, match="not numerically positive definite"):
        model = KernelRidge(kernel="linear", lam=0.0).fit(xs.asarray(X), xs.asarray(y))
    with pytest.warns(LinAlgWarning):
        ref = KernelRidge(kernel="linear", lam=0.0).fit(X, y)
    np.testing.assert_allclose(
        aa.to_numpy(model.predict(xs.asarray(X))), ref.predict(X), rtol=1e-6, atol=1e-8
    )


def test_ill_conditioned_kernel_ridge_warns_as_on_numpy(dispatch):
    # a Cholesky factorization that succeeds on a system with condition 1e14: the numpy path
    # warned that the solution may be inaccurate, the device path said nothing
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(200, 2)), rng.normal(size=200)
    model = KernelRidge(gamma=1e-2, lam=1e-14)
    with pytest.warns(LinAlgWarning, match=r"ill-conditioned: condition number >= [\d.]+e\+14"):
        model.fit(X, y)
    with pytest.warns(LinAlgWarning, match=r"ill-conditioned: condition number >= [\d.]+e\+14"):
        model.fit(xs.asarray(X), xs.asarray(y))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        KernelRidge(gamma=0.5, lam=1e-3).fit(xs.asarray(X), xs.asarray(y))


# -- the shim ----------------------------------------------------------------------------------
def test_cholesky_jitter_adds_the_smallest_jitter_that_works():
    rng = np.random.default_rng(1)
    B = rng.normal(size=(6, 3))
    A = B @ B.T  # rank 3: needs a jitter
    T, shift = cholesky_jitter(xs.asarray(A), xp=xs, name="A")
    T = aa.to_numpy(T)
    assert shift > 0
    np.testing.assert_allclose(T.T @ T, A + shift * np.eye(6), atol=1e-12)
    assert np.allclose(T, np.triu(T))
    with pytest.raises(NotPositiveDefiniteError, match="A is not positive definite"):
        cholesky_jitter(xs.asarray(-1e9 * np.eye(3)), xp=xs, name="A")


@pytest.mark.parametrize("library", ["numpy", "strict"])
def test_nystroem_map_names_bad_input(library):
    # it is public (the building block of Nystroem on every library), and without checks a NaN
    # K̂ failed in eigh with LinAlgError, a non-square one with a broadcast error
    def call(K_hat, rank=None, eps=1e-16):
        xp = np if library == "numpy" else xs
        K = np.asarray(K_hat, dtype=float)
        return devices.nystroem_map(K if xp is np else xs.asarray(K), rank, eps, xp)

    with pytest.raises(ValueError, match=r"K_hat must be a non-empty square matrix.*\(2, 3\)"):
        call(np.ones((2, 3)))
    with pytest.raises(ValueError, match="K_hat contains NaN or infinity"):
        call([[np.nan, 0.0], [0.0, 1.0]])
    with pytest.raises(TypeError, match="rank must be an integer"):
        call(np.eye(2), rank=1.5)
    with pytest.raises(ValueError, match="eps must be a finite number >= 0"):
        call(np.eye(2), eps=-1.0)
    evals, A, _ = call(np.diag([4.0, 1.0]), rank=np.int64(1))
    np.testing.assert_allclose(aa.to_numpy(evals), [4.0])
    np.testing.assert_allclose(aa.to_numpy(A), [[0.5, 0.0]])


@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("name,device", NAMESPACES)
def test_solve_triangular(name, device, upper, transpose):
    rng = np.random.default_rng(2)
    T = rng.normal(size=(5, 5)) + 5 * np.eye(5)
    T = np.triu(T) if upper else np.tril(T)
    B = rng.normal(size=(5, 2))
    xp = array_api_compat.array_namespace(convert(T, name, device))
    got = aa.solve_triangular(
        convert(T, name, device), convert(B, name, device), xp, upper=upper, transpose=transpose
    )
    A = T.T if transpose else T
    np.testing.assert_allclose(A @ aa.to_numpy(got), B, atol=1e-12)
    one = aa.solve_triangular(
        convert(T, name, device),
        convert(B[:, 0], name, device),
        xp,
        upper=upper,
        transpose=transpose,
    )
    np.testing.assert_allclose(aa.to_numpy(one), aa.to_numpy(got)[:, 0], atol=1e-12)


def test_block_rows_budget_and_errors(monkeypatch):
    assert aa.block_rows(1024, None, xp=xs, device=None) == 256 * 1024
    assert aa.block_rows(1024, 2, xp=xs, device=None) == 2  # block_size is rows
    # an accelerator with 1 GB free
    monkeypatch.setattr(aa, "free_memory", lambda xp, device: 2**30)
    assert aa.block_rows(2**20, None, xp=xs, device="gpu", resident=2**29) == 256
    assert aa.block_rows(2**20, 400, xp=xs, device="gpu", resident=2**29) == 400
    with pytest.raises(ValueError, match="block_size=800 rows .* do not fit"):
        aa.block_rows(2**20, 800, xp=xs, device="gpu", resident=2**29)
    with pytest.raises(ValueError, match="no block_size fits"):
        aa.block_rows(2**20, None, xp=xs, device="gpu", resident=2**30)


def test_nystroem_krr_refuses_a_block_that_does_not_fit(dispatch, monkeypatch):
    X, y, _ = data()
    monkeypatch.setattr(aa, "free_memory", lambda xp, device: 2**20)  # a 1 MB device
    model = NystroemKRR(n_components=100, block_size=2000, random_state=0)
    with pytest.raises(ValueError, match="block_size=2000 rows .* do not fit"):
        model.fit(xs.asarray(X), xs.asarray(y))
    with pytest.raises(ValueError, match="do not fit"):
        KernelRidge().fit(xs.asarray(np.vstack([X] * 2)), xs.asarray(np.concatenate([y] * 2)))


def test_max_float_and_move():
    dev = xs.Device("CPU_DEVICE")
    assert aa.max_float(xs, dev) == xs.float64
    moved = aa.move(np.arange(3), xs, dev)
    assert isinstance(moved, type(xs.asarray(0)))
    np.testing.assert_array_equal(aa.to_numpy(moved), np.arange(3))
    a = xs.asarray([1.0, 2.0])
    assert aa.move(a, xs, dev) is a


def test_matmul_into_reuses_out_only_where_it_can():
    rng = np.random.default_rng(0)
    A, B = rng.normal(size=(4, 3)), rng.normal(size=(3, 4))
    out = np.empty((4, 4))
    assert aa.matmul_into(A, B, out, np) is out
    np.testing.assert_allclose(out, A @ B)
    read_only = np.empty((4, 4))
    read_only.flags.writeable = False
    S = rng.normal(size=(4, 4))
    for bad in (read_only, np.empty((4, 4), np.float32), np.empty((3, 3)), S):
        got = aa.matmul_into(S if bad is S else A, S.T if bad is S else B, bad, np)
        assert got is not bad
    np.testing.assert_allclose(aa.matmul_into(S, S.T, S, np), S @ S.T)  # out overlaps A
    strict = aa.matmul_into(xs.asarray(A), xs.asarray(B), xs.asarray(out), xs)
    np.testing.assert_allclose(aa.to_numpy(strict), A @ B)


@pytest.mark.parametrize("M, block", [(10, 3), (12, 4), (7, 7), (9, 100)])
def test_upper_gram_into_is_the_full_product(M, block):
    rng = np.random.default_rng(M)
    T = np.triu(rng.normal(size=(M, M)))
    out = np.full((M, M), np.nan)
    got = aa.upper_gram_into(T, out, np, block=block)
    assert got is out
    np.testing.assert_allclose(got, T @ T.T, rtol=1e-12, atol=1e-12)
    read_only = np.full((M, M), np.nan)
    read_only.flags.writeable = False
    np.testing.assert_allclose(aa.upper_gram_into(T, read_only, np, block=block), T @ T.T)
    assert np.isnan(read_only).all()
    np.testing.assert_allclose(aa.upper_gram_into(T, T, np, block=block), T @ T.T)  # out is T
    strict = aa.upper_gram_into(xs.asarray(T), xs.asarray(out), xs, block=block)
    np.testing.assert_allclose(aa.to_numpy(strict), T @ T.T, rtol=1e-12, atol=1e-12)


def test_upper_gram_into_adds_no_m_by_m_matrix():
    import tracemalloc

    M, block = 600, 100
    T = np.triu(np.random.default_rng(0).normal(size=(M, M)))
    out = np.empty((M, M))
    tracemalloc.start()
    aa.upper_gram_into(T, out, np, block=block)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 0.25 * out.nbytes  # a few block × block products, not an M × M one


class _NoFloat64Info:
    """The inspection object of a library whose device has no float64 (Apple's MPS)."""

    def dtypes(self, *, device=None, kind=None):
        return {"float32": xs.float32}


def test_max_float_on_a_device_without_float64(monkeypatch):
    monkeypatch.setattr(xs, "__array_namespace_info__", _NoFloat64Info)
    dev = xs.Device("CPU_DEVICE")
    assert aa.max_float(xs, dev) == xs.float32
    with pytest.warns(UserWarning, match=r"dtype=float64 was asked for, but the device"):
        assert aa.requested_float(xs, dev, np.float64) == xs.float32
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert aa.requested_float(xs, dev, "float32") == xs.float32


@pytest.mark.parametrize(
    "make",
    [
        lambda: NystroemKRR(n_components=20, tol=1e-5, random_state=0, dtype=np.float64),
        lambda: KernelRidge(kernel="rbf", gamma=0.5, lam=1e-2, dtype=np.float64),
        lambda: RandomFourierFeatures(n_components=30, random_state=0, dtype=np.float64),
    ],
    ids=["nystroem-krr", "kernel-ridge", "rff"],
)
def test_float64_on_a_device_without_it_warns_and_runs_in_float32(dispatch, monkeypatch, make):
    # the device path asks max_float what the device holds; here it answers float32 alone
    monkeypatch.setattr(aa, "max_float", lambda xp, device: xp.float32)
    X, y, _ = data(n=80)
    X32, y32 = xs.asarray(X, dtype=xs.float32), xs.asarray(y, dtype=xs.float32)
    model = make()
    with pytest.warns(UserWarning, match=r"dtype=float64 was asked for.*runs in float32"):
        if hasattr(model, "transform"):
            out = model.fit_transform(X32)
        else:
            out = model.fit(X32, y32).predict(X32)
    assert out.dtype == xs.float32


@needs_torch
def test_falkon_callback_and_history_on_torch(dispatch):
    import torch

    X, y, _ = data()
    seen = []
    model = NystroemKRR(
        n_components=30,
        max_iter=4,
        tol=0,
        random_state=0,
        callback=lambda it, a, r: seen.append((it, type(a), r)),
    ).fit(torch.asarray(X), torch.asarray(y))
    assert [s[0] for s in seen] == [1, 2, 3, 4]
    assert all(s[1] is torch.Tensor for s in seen)
    np.testing.assert_allclose([s[2] for s in seen], aa.to_numpy(model.history_)[1:])


@pytest.mark.gpu
@pytest.mark.skipif(not HAVE_CUDA, reason="needs a CUDA device")
def test_cuda_block_size_beyond_the_device_is_refused(dispatch):
    import torch

    X, y, _ = data()
    free = aa.free_memory(aa.namespace_of(torch.ones(1, device="cuda")), torch.device("cuda"))
    model = NystroemKRR(n_components=50, block_size=free // 100, random_state=0)
    with pytest.raises(ValueError, match="block_size=.* do not fit"):
        model.fit(torch.asarray(X, device="cuda"), torch.asarray(y, device="cuda"))


def test_nystroem_krr_device_path_warns_when_tol_is_not_reached(dispatch):
    # issue 18's convergence warning holds for array-API input too
    X, y, _ = data()
    with pytest.warns(ConvergenceWarning, match="relative residual of the preconditioned"):
        NystroemKRR(n_components=30, max_iter=1, tol=1e-12, random_state=0).fit(
            xs.asarray(X), xs.asarray(y)
        )


@pytest.mark.parametrize("name,device", NAMESPACES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_kernel_ridge_sample_weight_on_the_device_matches_numpy(dispatch, name, device, dtype):
    # the device fit refused sample_weight; it solves the numpy path's weighted system
    # S^½(S^½ K S^½ + λI)⁻¹S^½ y, zero weights included, for one target or several
    X, y, _ = data(n=120)
    Y = np.column_stack([y, np.cos(X[:, 2])])
    sw = np.random.default_rng(3).uniform(0.2, 3.0, size=len(X))
    sw[::9] = 0.0
    kw = dict(gamma=0.3, lam=1e-2, dtype=dtype)
    # float32 factorizations by two libraries agree to their round-off times cond(K + λI)
    # (about 2e-5 of the largest coefficient here)
    rel = 1e-10 if dtype == np.float64 else 1e-4
    Xd = convert(X, name, device)
    for target in (y, Y):
        ref = KernelRidge(**kw).fit(X, target, sample_weight=sw)
        pred = ref.predict(X)
        for weights in (sw, list(sw), convert(sw, name, device)):
            model = KernelRidge(**kw).fit(Xd, convert(target, name, device), sample_weight=weights)
            check_same_place(model.dual_coef_, Xd)
            np.testing.assert_allclose(
                aa.to_numpy(model.dual_coef_),
                ref.dual_coef_,
                rtol=0,
                atol=rel * np.abs(ref.dual_coef_).max(),
            )
            np.testing.assert_allclose(
                aa.to_numpy(model.predict(Xd)), pred, rtol=0, atol=rel * np.abs(pred).max()
            )
    # the weights matter (not ignored): an unweighted fit is clearly different
    plain = KernelRidge(**kw).fit(Xd, convert(y, name, device))
    assert np.abs(aa.to_numpy(plain.predict(Xd)) - ref.predict(X)[:, 0]).max() > 1e-2


@needs_torch
def test_kernel_ridge_device_fit_takes_weights_in_a_tensor_that_requires_grad(dispatch):
    import torch

    X, y, _ = data(n=40)
    sw = np.random.default_rng(0).uniform(0.5, 2.0, size=40)
    ref = KernelRidge(lam=0.1).fit(X, y, sample_weight=sw)
    Xt = torch.asarray(X)
    model = KernelRidge(lam=0.1).fit(
        Xt, torch.asarray(y), sample_weight=torch.asarray(sw).requires_grad_()
    )
    assert not model.dual_coef_.requires_grad
    np.testing.assert_allclose(
        aa.to_numpy(model.predict(Xt)), ref.predict(X), rtol=1e-10, atol=1e-10
    )


def test_kernel_ridge_device_sample_weight_errors_name_it(dispatch):
    X, y, _ = data(n=40)
    Xd, yd = xs.asarray(X), xs.asarray(y)
    with pytest.raises(ValueError, match="sample_weight: Negative values"):
        KernelRidge().fit(Xd, yd, sample_weight=-np.ones(40))
    with pytest.raises(ValueError, match=r"sample_weight: sample_weight.shape == \(39,\)"):
        KernelRidge().fit(Xd, yd, sample_weight=xs.asarray(np.ones(39)))
    with pytest.raises(ValueError, match="sample_weight(: .*non-zero| sums to zero)"):
        KernelRidge().fit(Xd, yd, sample_weight=np.zeros(40))
    # in float32, y·√s beyond float32's range is refused by name, as on numpy
    sw = np.full(40, 1e30)
    with pytest.raises(ValueError, match="y·√sample_weight has entries of magnitude"):
        KernelRidge(dtype=np.float32).fit(Xd, yd * 1e30, sample_weight=sw)
    with pytest.raises(ValueError, match="y·√sample_weight has entries of magnitude"):
        KernelRidge(dtype=np.float32).fit(X, y * 1e30, sample_weight=sw)


def repeated_rows(n=400, seed=0):
    """Binary features: 32 distinct rows among n, so a uniform draw of centres repeats."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(n, 5)).astype(np.float64)
    y = X @ np.array([1.0, -2.0, 0.5, 0.0, 1.5]) + 0.1 * rng.normal(size=n)
    return X, y


@pytest.mark.parametrize("name,device", NAMESPACES)
def test_device_path_deduplicates_centres_as_numpy(dispatch, name, device):
    # issue 18, item 2 on the device path: the same distinct centres as the numpy path
    X, y = repeated_rows()
    kw = dict(gamma=0.5, lam=1e-6, n_components=20, **CONVERGED)
    ref = NystroemKRR(**kw).fit(X, y)
    assert len(np.unique(ref.centers_, axis=0)) == 20
    Xd = convert(X, name, device)
    model = NystroemKRR(**kw).fit(Xd, convert(y, name, device))
    np.testing.assert_array_equal(aa.to_numpy(model.center_indices_), ref.center_indices_)
    got = aa.to_numpy(model.predict(Xd))
    np.testing.assert_allclose(got, ref.predict(X), rtol=1e-6, atol=1e-6)
    # and it solves the problem: training RMSE at the noise level, not diverged
    assert np.sqrt(np.mean((got - y) ** 2)) < 0.2
    # more centres than distinct rows: the same warning and the 32 distinct rows
    with pytest.warns(UserWarning, match="only 32 distinct rows"):
        model = NystroemKRR(**{**kw, "n_components": 50}).fit(Xd, convert(y, name, device))
    assert model.n_components_ == 32
    assert len(np.unique(aa.to_numpy(model.centers_), axis=0)) == 32


@pytest.mark.parametrize("name,device", NAMESPACES)
@pytest.mark.parametrize("precompute", [False, True])
def test_device_path_sample_weight_matches_numpy(dispatch, name, device, precompute):
    X, y, _ = data()
    rng = np.random.default_rng(1)
    sw = rng.uniform(0.2, 3.0, size=len(X))
    sw[::7] = 0.0  # weight-zero points are left out and never become centres
    kw = dict(gamma=0.3, lam=1e-3, n_components=60, precompute=precompute, **CONVERGED)
    ref = NystroemKRR(**kw).fit(X, y, sample_weight=sw)
    Xd = convert(X, name, device)
    model = NystroemKRR(**kw).fit(Xd, convert(y, name, device), sample_weight=sw)
    np.testing.assert_array_equal(aa.to_numpy(model.center_indices_), ref.center_indices_)
    assert not np.isin(aa.to_numpy(model.center_indices_), np.flatnonzero(sw == 0)).any()
    np.testing.assert_allclose(aa.to_numpy(model.y_mean_), ref.y_mean_, rtol=1e-12)
    np.testing.assert_allclose(aa.to_numpy(model.predict(Xd)), ref.predict(X), rtol=1e-6, atol=1e-6)
    # the weights matter (not ignored): an unweighted fit is clearly different
    plain = NystroemKRR(**kw).fit(X, y)
    assert np.abs(plain.predict(X) - ref.predict(X)).max() > 1e-3
    # integer weights count as copies, on the device as on the host
    counts = rng.integers(1, 3, size=len(X))
    copies = NystroemKRR(**kw).fit(np.repeat(X, counts, axis=0), np.repeat(y, counts))
    weighted = NystroemKRR(**kw).fit(Xd, convert(y, name, device), sample_weight=counts)
    # (the centres differ, so compare through the fitted mean only, which is exact)
    np.testing.assert_allclose(aa.to_numpy(weighted.y_mean_), copies.y_mean_, rtol=1e-12)


@pytest.mark.parametrize("name,device", NAMESPACES)
def test_device_classifier_sample_weight_matches_numpy(dispatch, name, device):
    X, _, labels = data(n=300)
    sw = np.random.default_rng(2).uniform(0.5, 2.0, size=len(X))
    kw = dict(gamma=0.3, lam=1e-3, n_components=60, **CONVERGED)
    ref = NystroemKRRClassifier(**kw).fit(X, labels, sample_weight=sw)
    Xd = convert(X, name, device)
    model = NystroemKRRClassifier(**kw).fit(
        Xd, convert(labels, name, device), sample_weight=convert(sw, name, device)
    )
    np.testing.assert_allclose(
        aa.to_numpy(model.decision_function(Xd)), ref.decision_function(X), rtol=1e-6, atol=1e-6
    )


def test_device_path_sample_weight_errors_name_it(dispatch):
    X, y, _ = data(n=40)
    with pytest.raises(ValueError, match="sample_weight"):
        NystroemKRR().fit(xs.asarray(X), xs.asarray(y), sample_weight=-np.ones(40))
    with pytest.raises(ValueError, match="sample_weight"):
        NystroemKRR().fit(xs.asarray(X), xs.asarray(y), sample_weight=np.ones(39))


def test_gram_block_with_one_gamma_per_feature(dispatch):
    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(12, 3)), rng.normal(size=(7, 3))
    kernel = kn.RBF([0.2, 1.5, 0.7])
    got = devices.gram_block(kernel, xs.asarray(X), xs.asarray(Y), xp=xs)
    np.testing.assert_allclose(aa.to_numpy(got), kernel(X, Y), atol=1e-12)
    with pytest.raises(ValueError, match="gamma has 3 entries"):
        devices.gram_block(kernel, xs.asarray(X[:, :2]), xs.asarray(Y[:, :2]), xp=xs)


def test_nystroem_krr_with_one_gamma_per_feature_on_another_library(dispatch):
    X, y, _ = data()
    gamma = np.linspace(0.1, 0.5, X.shape[1])
    kw = dict(gamma=gamma, lam=1e-3, n_components=40, **CONVERGED)
    ref = NystroemKRR(**kw).fit(X, y)
    got = NystroemKRR(**kw).fit(xs.asarray(X), xs.asarray(y))
    np.testing.assert_allclose(aa.to_numpy(got.predict(xs.asarray(X))), ref.predict(X), atol=1e-8)


@pytest.mark.parametrize(
    "make",
    [lambda: KernelRidge(lam=0.1), lambda: NystroemKRR(n_components=10, random_state=0)],
    ids=["kernel-ridge", "nystroem-krr"],
)
def test_complex_targets_of_another_library_are_refused_by_name(dispatch, make):
    # an array-api-strict complex y failed in the library's own cast (a TypeError that
    # named no argument); numpy's complex y is a ValueError naming y
    X, y, _ = data(n=40)
    with pytest.raises(ValueError, match="y: Complex data not supported"):
        make().fit(xs.asarray(X), xs.asarray(y + 1j))


@needs_torch
@pytest.mark.parametrize(
    "make, method",
    [
        (lambda: RandomFourierFeatures(n_components=8, random_state=0), "transform"),
        (lambda: Nystroem(n_components=8, random_state=0), "transform"),
        (lambda: KernelRidge(lam=0.1), "predict"),
        (lambda: NystroemKRR(n_components=10, random_state=0), "predict"),
        (lambda: NystroemKRRClassifier(n_components=10, random_state=0), "predict"),
    ],
    ids=["rff", "nystroem", "kernel-ridge", "nystroem-krr", "classifier"],
)
def test_complex_torch_inputs_are_refused_not_cast_to_real(dispatch, make, method):
    # scikit-learn looks for complex data by numpy's dtype.kind: a complex tensor was cast to
    # float, its imaginary part dropped with only PyTorch's UserWarning
    import torch

    X, y, _ = data(n=40)
    Xt, yt = torch.asarray(X), torch.asarray(y > 0)
    with pytest.raises(ValueError, match="X: Complex data not supported"):
        make().fit(Xt + 1j, yt)
    model = make().fit(Xt, yt)
    with pytest.raises(ValueError, match="X: Complex data not supported"):
        getattr(model, method)(Xt + 1j)
    if method == "predict" and not isinstance(model, NystroemKRRClassifier):
        with pytest.raises(ValueError, match="y: Complex data not supported"):
            make().fit(Xt, yt + 1j)


def test_classifier_takes_a_column_of_labels_as_on_numpy(dispatch):
    # the device path skipped the numpy path's ravel: a column y gave no
    # DataConversionWarning, and a 3-D y was called "Unknown label type: unknown"
    from sklearn.exceptions import DataConversionWarning

    X, _, labels = data(n=60)
    kw = dict(n_components=10, random_state=0)
    with pytest.warns(DataConversionWarning, match="column-vector y"):
        ref = NystroemKRRClassifier(**kw).fit(X, labels[:, None])
    with pytest.warns(DataConversionWarning, match="column-vector y"):
        model = NystroemKRRClassifier(**kw).fit(xs.asarray(X), xs.asarray(labels[:, None]))
    np.testing.assert_array_equal(aa.to_numpy(model.predict(xs.asarray(X))), ref.predict(X))
    with pytest.raises(ValueError, match="y: Found array with dim 3"):
        NystroemKRRClassifier(**kw).fit(xs.asarray(X), xs.asarray(labels[:, None, None]))


def test_classifier_refuses_nan_labels_as_on_numpy(dispatch):
    # the device path sent y with NaN to scikit-learn's label-type check, whose cast to int
    # raised a RuntimeWarning before its "Unknown label type"; numpy's y check comes first
    X, y, _ = data(n=40)
    y[3] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="y contains NaN"):
            NystroemKRRClassifier(n_components=10).fit(xs.asarray(X), xs.asarray(y))


@needs_torch
def test_numpy_fit_takes_weights_in_a_tensor_that_requires_grad():
    # numpy's conversion of such a tensor raised PyTorch's RuntimeError ("Can't call numpy()
    # on Tensor that requires grad"); the weights are data here, as on the device path
    import torch

    X, y, _ = data(n=40)
    sw = np.random.default_rng(0).uniform(0.5, 2.0, size=40)
    kw = dict(n_components=10, random_state=0)
    ref = NystroemKRR(**kw).fit(X, y, sample_weight=sw).predict(X)
    weights = torch.asarray(sw).requires_grad_()
    got = NystroemKRR(**kw).fit(X, y, sample_weight=weights).predict(X)
    np.testing.assert_array_equal(got, ref)


@needs_torch
def test_cast_to_takes_an_empty_tensor():
    # a tensor's .size is a method: the narrowing cast must not take it for a count
    import array_api_compat.torch as xt
    import torch

    from kernelcourse._validation import cast_to

    out = cast_to(torch.zeros((0, 3), dtype=torch.float64), torch.float32, xp=xt)
    assert out.dtype == torch.float32 and tuple(out.shape) == (0, 3)
