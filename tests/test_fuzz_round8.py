"""Round eight of fuzzing the public API with bad and extreme inputs: regression tests for
the defects it found (a bool taken for a class weight, a lost phase warned once per block of
rows instead of once per call, factorizations that read one triangle of a matrix that is not
symmetric)."""

import warnings

import numpy as np
import pytest


def _data(n=40, d=3):
    X = np.random.default_rng(0).normal(size=(n, d))
    return X, X[:, 0] + 0.5 * X[:, 1], (X[:, 0] > 0).astype(int)


def _recorded(call):
    """The warnings ``call()`` raises, each one shown (no registry, no filter)."""
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        call()
    return record


# -- 1. a bool is not a class weight --------------------------------------------------------
@pytest.mark.parametrize("make", ["KernelSVC", "PrimalSVC"])
@pytest.mark.parametrize("flag", [True, np.True_, False])
def test_svm_class_weight_refuses_a_bool(make, flag):
    # class_weight={0: True} was fitted as the weight 1 (False as 0), where C=True and the
    # other real hyper-parameters refuse a bool by name
    from kernelcourse import svm

    X, _, labels = _data()
    model = getattr(svm, make)
    with pytest.raises(TypeError, match=r"^class_weight\[0\] is (np\.)?(True|False)_?, a bool"):
        model(class_weight={0: flag, 1: 2.0}).fit(X, labels)
    # numbers still work, integers included, and give the float's fit
    ref = model(class_weight={0: 1.0, 1: 2.0}).fit(X, labels).decision_function(X)
    got = model(class_weight={0: 1, 1: 2}).fit(X, labels).decision_function(X)
    np.testing.assert_array_equal(got, ref)


# -- 2. a lost phase warns once per call, not once per block of rows ----------------------
def _phase_cases():
    from kernelcourse.features import RandomFourierFeatures, RandomKitchenSinks
    from kernelcourse.scale import StreamingFeatureRidge
    from kernelcourse.sgd import FeatureSGDClassifier

    X, y, labels = _data(n=100, d=2)
    big = X * 1e17  # arguments near 1e18: neighbouring floats more than pi apart

    def rff():
        return RandomFourierFeatures(n_components=8, random_state=0)

    sinks = RandomKitchenSinks(basis="cosine", n_components=5, random_state=0)
    fitted_sgd = FeatureSGDClassifier(rff(), random_state=0, block_size=25).fit(X, labels)
    # each call maps X in four blocks (three for the kitchen sinks, after their first-row
    # probe, which warned too); every case warns once, from the line in this file
    return {
        "StreamingFeatureRidge.fit": (
            lambda: StreamingFeatureRidge(rff(), block_size=25).fit(big, y),
            lambda: rff().fit(X).transform(big),
        ),
        "StreamingFeatureRidge.fit(kitchen sinks)": (
            lambda: StreamingFeatureRidge(sinks, block_size=40).fit(big, y),
            lambda: sinks.fit(big[:40]).transform(big),
        ),
        "FeatureSGDClassifier.fit": (
            lambda: FeatureSGDClassifier(rff(), random_state=0, block_size=25).fit(big, labels),
            lambda: rff().fit(X).transform(big),
        ),
        "FeatureSGDClassifier.decision_function": (
            lambda: fitted_sgd.decision_function(big),
            lambda: fitted_sgd.features_.transform(big),
        ),
    }


@pytest.mark.parametrize("case", list(_phase_cases()))
def test_a_lost_phase_warns_once_for_all_blocks(case):
    call, whole = _phase_cases()[case]
    record = [w for w in _recorded(call) if "cannot resolve their phase" in str(w.message)]
    assert len(record) == 1, [str(w.message) for w in record]
    assert record[0].filename == __file__
    # with the largest argument of all the blocks: what one transform of all X names
    (expected,) = [str(w.message) for w in _recorded(whole)]
    assert str(record[0].message) == expected


# -- 3. factorizations that read one triangle refuse a matrix that is not symmetric --------
NOT_SYMMETRIC = np.array([[2.0, 1.0], [0.0, 2.0]])


def test_cholesky_jitter_refuses_a_matrix_that_is_not_symmetric():
    # the factor of [[2, 1], [0, 2]] came back as sqrt(2) I, the factor of its lower
    # triangle's symmetric matrix, silently (solve_regularized_psd refuses it by name)
    from kernelcourse.solvers import cholesky_jitter

    with pytest.raises(ValueError, match=r"^A is not symmetric: \|A_ij − A_ji\| reaches 1 "):
        cholesky_jitter(NOT_SYMMETRIC)
    with pytest.raises(ValueError, match=r"^K is not symmetric"):
        cholesky_jitter(NOT_SYMMETRIC.astype(np.float32), name="K")
    xs = pytest.importorskip("array_api_strict")
    with pytest.raises(ValueError, match=r"^A is not symmetric"):
        cholesky_jitter(xs.asarray(NOT_SYMMETRIC), xp=xs)
    # round-off asymmetry, as a Gram matrix computed by a general product has, is accepted
    A = np.array([[2.0, 1.0], [1.0 + 1e-15, 2.0]])
    T, shift = cholesky_jitter(A.copy())
    np.testing.assert_allclose(T.T @ T, np.array([[2.0, 1.0], [1.0, 2.0]]) + shift * np.eye(2))


def test_nystroem_map_refuses_a_matrix_that_is_not_symmetric_and_takes_xp_none():
    # K_hat = [[1, 0.9], [0, 1]] was mapped as its symmetric part [[1, 0.45], [0.45, 1]],
    # silently; xp=None raised "'NoneType' object has no attribute 'linalg'"
    from kernelcourse.devices import nystroem_map
    from kernelcourse.kernels import RBF

    with pytest.raises(ValueError, match=r"^K_hat is not symmetric"):
        nystroem_map(np.array([[1.0, 0.9], [0.0, 1.0]]), None, 1e-16, np)
    K_hat = RBF(gamma=0.5)(np.random.default_rng(0).normal(size=(5, 2)))
    ref = nystroem_map(K_hat, None, np.finfo(float).eps, np)
    got = nystroem_map(K_hat, None, np.finfo(float).eps, None)
    np.testing.assert_array_equal(got[1], ref[1])


@pytest.mark.parametrize("bad", ["numpy", np.linalg, 3])
def test_functions_taking_xp_name_it_when_it_is_no_array_namespace(bad):
    # xp="numpy" failed with "'str' object has no attribute 'finfo'" (or '__name__', 'max'),
    # naming neither the argument nor what it should be
    from kernelcourse.devices import gram_block, nystroem_map
    from kernelcourse.kernels import RBF
    from kernelcourse.solvers import FalkonPreconditioner, block_cg, cholesky_jitter

    A = np.eye(3)
    calls = [
        lambda: gram_block(RBF(gamma=1.0), A, xp=bad),
        lambda: nystroem_map(A, None, 1e-16, bad),
        lambda: cholesky_jitter(A, xp=bad),
        lambda: FalkonPreconditioner(A, 1e-3, 10, xp=bad),
        lambda: block_cg(lambda V: V, np.ones((3, 1)), xp=bad),
    ]
    for call in calls:
        with pytest.raises(TypeError, match=r"^xp must be an array namespace .* or None, got"):
            call()
