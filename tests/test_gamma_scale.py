"""``gamma="scale"``, 1 / (n_features · Var X), for every estimator that resolves a named
kernel, as scikit-learn's ``SVC`` and ``RBFSampler`` take it."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.kernel_approximation import RBFSampler
from sklearn.svm import SVC

from kernelcourse.features import Nystroem, RandomBinningFeatures, RandomFourierFeatures
from kernelcourse.kernels import resolve_kernel
from kernelcourse.ridge import KernelRidge
from kernelcourse.scale import NystroemKRR, NystroemKRRClassifier
from kernelcourse.svm import KernelSVC

rng = np.random.default_rng(0)
X = 3.0 * rng.normal(size=(60, 4)) + 1.0
y = (X[:, 0] > 1.0).astype(int)


def _gamma(est):
    return est.gamma_ if isinstance(est, RandomBinningFeatures) else est.kernel_.gamma


ESTIMATORS = [
    RandomFourierFeatures(gamma="scale", random_state=0),
    Nystroem(gamma="scale", n_components=10, random_state=0),
    RandomBinningFeatures(gamma="scale", random_state=0),
    KernelSVC(gamma="scale"),
    KernelRidge(gamma="scale"),
    NystroemKRR(gamma="scale", n_components=10, random_state=0),
    NystroemKRRClassifier(gamma="scale", n_components=10, random_state=0),
]


@pytest.mark.parametrize("est", ESTIMATORS, ids=lambda e: type(e).__name__)
def test_scale_is_scikit_learns_value(est):
    expected = SVC(gamma="scale").fit(X, y)._gamma
    assert expected == pytest.approx(RBFSampler(gamma="scale").fit(X)._gamma)
    est.fit(X, y)
    assert _gamma(est) == pytest.approx(expected, rel=1e-12)
    assert _gamma(est) == pytest.approx(1.0 / (X.shape[1] * X.var()), rel=1e-12)


def test_scale_reads_the_data_not_its_scale():
    # γ·Var X is the same at any scale of X, down to scales where X² underflows
    for s in (1e-150, 1e-3, 1.0, 1e3, 1e150):
        gamma = resolve_kernel("rbf", gamma="scale", n_features=4, X=s * X).gamma
        assert gamma * s * s == pytest.approx(1.0 / (4 * X.var()), rel=1e-12)


def test_scale_of_sparse_and_float32_data():
    expected = 1.0 / (X.shape[1] * X.var())
    Xs = sp.csr_matrix(np.where(np.abs(X) > 2, X, 0.0))
    dense = Xs.toarray()
    assert resolve_kernel("rbf", gamma="scale", n_features=4, X=Xs).gamma == pytest.approx(
        1.0 / (4 * dense.var()), rel=1e-12
    )
    assert 1.0 / (4 * dense.var()) == pytest.approx(SVC(gamma="scale").fit(Xs, y)._gamma)
    rff = RandomFourierFeatures(gamma="scale", random_state=0).fit(X.astype(np.float32))
    assert rff.kernel_.gamma == pytest.approx(expected, rel=1e-6)


def test_scale_of_a_constant_x_is_one():
    # scikit-learn's choice where Var X = 0
    svc = KernelSVC(gamma="scale").fit([[2.0, 2.0], [2.0, 2.0]], [0, 1])
    assert svc.kernel_.gamma == 1.0
    assert resolve_kernel("rbf", gamma="scale", n_features=2, X=np.zeros((3, 2))).gamma == 1.0


@pytest.mark.parametrize(
    "data, word",
    [([[1e-170], [-1e-170]], "overflows"), ([[1e300, 0.0], [-1e300, 1.0]], "underflows")],
)
def test_scale_names_a_gamma_beyond_floating_point(data, word):
    # γ = 1/(d·Var X) out of range was 0 (then refused by the kernel, naming γ) or inf
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match=f'^gamma="scale" .*γ {word}'):
            KernelSVC(gamma="scale").fit(data, [0, 1])


def test_scale_is_refused_where_gamma_does_not_apply():
    with pytest.raises(ValueError, match="gamma does not apply to the 'linear' kernel"):
        KernelSVC(kernel="linear", gamma="scale").fit(X, y)
    with pytest.raises(ValueError, match="gamma"):
        KernelSVC(gamma="auto").fit(X, y)
    with pytest.raises(ValueError, match="gamma and kernel_params do not apply"):
        KernelSVC(kernel="precomputed", gamma="scale").fit(X @ X.T, y)


def test_scale_with_weights_reads_every_row():
    # as SVC: the variance is over X as passed, rows of weight 0 included
    sw = np.r_[np.zeros(30), np.ones(30)]
    expected = 1.0 / (X.shape[1] * X.var())
    krr = NystroemKRR(gamma="scale", n_components=10, random_state=0)
    assert krr.fit(X, y.astype(float), sample_weight=sw).kernel_.gamma == pytest.approx(expected)
    assert KernelSVC(gamma="scale").fit(X, y, sample_weight=sw).kernel_.gamma == pytest.approx(
        expected
    )
