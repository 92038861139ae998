"""Ridge on sparse random binning features: block-Jacobi CG against the direct solve."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning

from kernelcourse.features import RandomBinningFeatures
from kernelcourse.ridge import FeatureRidge, sparse_ridge_cg
from kernelcourse.solvers import block_cg


def binned(n=300, d=3, P=8, gamma=1.0, seed=0, targets=1):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    Y = np.column_stack([np.sin(2 * X[:, j]) for j in range(targets)])
    Y = Y + 0.1 * rng.normal(size=Y.shape)
    rb = RandomBinningFeatures(gamma=gamma, n_grids=P, random_state=seed)
    return X, (Y[:, 0] if targets == 1 else Y), rb, rb.fit_transform(X)


def direct(Z, Y, lam, fit_intercept=False):
    Zd = Z.toarray()
    if fit_intercept:  # an unpenalized last coordinate
        Zd = np.hstack([Zd, np.ones((len(Zd), 1))])
    pen = lam * np.eye(Zd.shape[1])
    if fit_intercept:
        pen[-1, -1] = 0.0
    return np.linalg.solve(Zd.T @ Zd + pen, Zd.T @ Y)


@pytest.mark.parametrize("fit_intercept", [False, True])
@pytest.mark.parametrize("targets", [1, 2])
def test_block_jacobi_cg_matches_direct_solve(fit_intercept, targets):
    _, Y, _, Z = binned(targets=targets)
    lam = 0.05
    W, b, history = sparse_ridge_cg(Z, Y, lam, fit_intercept=fit_intercept, tol=1e-12, max_iter=500)
    ref = direct(Z, Y, lam, fit_intercept)
    got = np.vstack([W.reshape(len(W), -1), np.reshape(b, (1, -1))]) if fit_intercept else W
    np.testing.assert_allclose(got.reshape(ref.shape), ref, atol=1e-8 * np.abs(ref).max())
    assert history[0] == pytest.approx(1.0) and history[-1] <= 1e-12
    if not fit_intercept:
        assert np.all(np.asarray(b) == 0)


def test_preconditioner_is_the_exact_block_diagonal():
    # one-hot blocks: Z_pᵀZ_p is diagonal, so diag(ZᵀZ) is the whole block-diagonal part
    _, _, rb, Z = binned(P=5)
    G = (Z.T @ Z).toarray()
    for p in range(5):
        lo, hi = rb._offsets[p], rb._offsets[p + 1]
        block = G[lo:hi, lo:hi]
        np.testing.assert_allclose(block, np.diag(np.diag(block)), atol=0)
        counts = np.bincount(Z[:, lo:hi].indices, minlength=hi - lo)
        np.testing.assert_allclose(np.diag(block), counts / 5)


def test_block_jacobi_helps_when_cell_counts_spread():
    # coarse cells on heavy-tailed data: counts from 1 to hundreds; the preconditioner
    # evens them out, so the prediction error after a fixed number of steps is smaller
    rng = np.random.default_rng(0)
    X = rng.standard_t(3, size=(20000, 5))
    y = np.sign(np.sin(2 * X[:, 0]) + 0.3 * rng.normal(size=len(X)))
    Z = RandomBinningFeatures(gamma=1.0, n_grids=30, random_state=0).fit_transform_codes(X)
    lam = 0.1
    A = lambda V: Z.rmatvec(Z @ V) + lam * V  # noqa: E731
    rhs = Z.rmatvec(y[:, None])
    diag = Z.column_sq_norms() + lam
    w_star = block_cg(
        A, rhs, preconditioner=lambda R: R / diag[:, None], tol=1e-12, max_iter=3000
    ).x
    errors = {}
    for name, d in (("block Jacobi", diag), ("none", np.ones_like(diag))):
        w = block_cg(A, rhs, preconditioner=lambda R, d=d: R / d[:, None], tol=0.0, max_iter=10).x
        errors[name] = np.linalg.norm(Z @ (w - w_star)) / np.linalg.norm(Z @ w_star)
    assert errors["block Jacobi"] < errors["none"] / 2


def test_warns_with_residual_when_not_converged():
    _, y, _, Z = binned()
    with pytest.warns(ConvergenceWarning, match=r"relative residual .*\d\.\d+e-\d+ > tol"):
        sparse_ridge_cg(Z, y, 1e-6, tol=1e-14, max_iter=2)


def test_bad_arguments():
    _, y, _, Z = binned()
    with pytest.raises(TypeError, match="Z must be a scipy.sparse"):
        sparse_ridge_cg(Z.toarray(), y, 1.0)
    with pytest.raises(ValueError, match="lam"):
        sparse_ridge_cg(Z, y, 0.0)
    with pytest.raises(ValueError, match="max_iter"):
        sparse_ridge_cg(Z, y, 1.0, max_iter=0)
    with pytest.raises(ValueError, match="tol"):
        sparse_ridge_cg(Z, y, 1.0, tol=-1)
    with pytest.raises(ValueError, match="rows"):
        sparse_ridge_cg(Z, y[:-1], 1.0)


@pytest.mark.parametrize("fit_intercept", [False, True])
def test_feature_ridge_on_binning_features(fit_intercept):
    X, y, rb, Z = binned()
    model = FeatureRidge(
        RandomBinningFeatures(gamma=1.0, n_grids=8, random_state=0),
        lam=0.05,
        fit_intercept=fit_intercept,
        tol=1e-12,
        max_iter=500,
    ).fit(X, y)
    ref = direct(Z, y, 0.05, fit_intercept)
    np.testing.assert_allclose(model.coef_, ref[: Z.shape[1]], atol=1e-8 * np.abs(ref).max())
    assert model.ridge_ is None and model.history_[-1] <= 1e-12
    Zq = rb.transform(X[:9]).toarray()
    expected = Zq @ ref[: Z.shape[1]] + (ref[-1] if fit_intercept else 0.0)
    np.testing.assert_allclose(model.predict(X[:9]), expected, atol=1e-8)
    # a sparse X with φ(x) = x goes the same way
    direct_sparse = FeatureRidge(lam=0.05, tol=1e-12, max_iter=500).fit(Z, y)
    np.testing.assert_allclose(direct_sparse.predict(Z[:9]), Zq @ direct(Z, y, 0.05), atol=1e-8)
    with pytest.raises(ValueError, match="lam must be > 0"):
        FeatureRidge(lam=0.0).fit(Z, y)


def test_dense_features_keep_the_cholesky_path():
    X, y, _, _ = binned()
    model = FeatureRidge(lam=0.1).fit(X, y)
    assert model.history_ is None and model.ridge_ is not None
    assert not sp.issparse(model.coef_)


def test_bin_codes_multiply_like_the_csr_matrix():
    X, _, rb, Z = binned(P=6)
    codes = RandomBinningFeatures(gamma=1.0, n_grids=6, random_state=0).fit_transform_codes(X)
    assert codes.shape == Z.shape and (codes.tocsr() != Z).nnz == 0
    rng = np.random.default_rng(1)
    V, R = rng.normal(size=(Z.shape[1], 2)), rng.normal(size=len(X))
    np.testing.assert_allclose(codes @ V, Z @ V, atol=1e-12)
    np.testing.assert_allclose(codes.rmatvec(R), Z.T @ R, atol=1e-12)
    np.testing.assert_allclose(codes.column_sq_norms(), Z.multiply(Z).sum(axis=0).A1)
    # unseen cells (-1) give no entry, as in transform
    far = rb.transform_codes(X + 100.0)
    assert (far.codes == -1).all() and np.abs(far @ V).max() == 0
    with pytest.raises(ValueError, match="rows"):
        codes @ V[:-1]


def test_solver_on_codes_equals_solver_on_csr():
    X, y, rb, Z = binned()
    codes = rb.transform_codes(X)
    W1, b1, _ = sparse_ridge_cg(Z, y, 0.1, fit_intercept=True, tol=1e-10, max_iter=500)
    W2, b2, _ = sparse_ridge_cg(codes, y, 0.1, fit_intercept=True, tol=1e-10, max_iter=500)
    np.testing.assert_allclose(W1, W2, atol=1e-9)
    assert b1 == pytest.approx(b2, abs=1e-9)


@pytest.mark.parametrize("fit_intercept", [False, True])
def test_sample_weight_on_sparse_features_is_repeating_rows(fit_intercept):
    # issue 18's sample_weight meets the sparse solver: integer weights repeat the samples,
    # on BinCodes (random binning) and on a CSR X alike
    X, y, rb, Z = binned(n=120)
    sw = np.random.default_rng(1).integers(0, 3, size=len(X)).astype(float)
    rep = np.repeat(np.arange(len(X)), sw.astype(int))
    kw = {"lam": 0.05, "fit_intercept": fit_intercept, "tol": 1e-12, "max_iter": 2000}
    for transformer, data in ((rb, X), (None, Z)):
        weighted = FeatureRidge(transformer, **kw).fit(data, y, sample_weight=sw)
        repeated = FeatureRidge(transformer, **kw).fit(data[rep], y[rep])
        # (binning fits its cells without the weights: zero-weight rows add cells of weight 0)
        np.testing.assert_allclose(weighted.predict(data), repeated.predict(data), atol=1e-8)
        np.testing.assert_allclose(weighted.intercept_, repeated.intercept_, atol=1e-8)
    np.testing.assert_allclose(weighted.coef_, repeated.coef_, atol=1e-8)
    # the solver's own check names the weights
    with pytest.raises(ValueError, match="sample_weight"):
        sparse_ridge_cg(Z, y, 0.1, sample_weight=-np.ones(len(X)))


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        # tol=inf stopped CG before its first step: w = 0 with no warning
        ({"tol": np.inf}, ValueError, "tol must be a finite number > 0, got inf"),
        # bools were taken as numbers: one iteration, tol = 1, λ = 1
        ({"tol": True}, TypeError, "tol must be a real number, got True"),
        ({"max_iter": True}, TypeError, "max_iter must be an integer, got True"),
        ({"lam": True}, TypeError, "lam must be a real number, got True"),
        ({"lam": "1"}, TypeError, "lam must be a real number"),
        # numpy's "could not convert string to float" named no argument
        ({"sample_weight": ["a"] * 300}, ValueError, "sample_weight"),
    ],
)
def test_sparse_ridge_cg_checks_its_arguments_by_name(kwargs, error, message):
    _, y, _, Z = binned()
    kwargs = {"lam": 1.0, **kwargs}
    with pytest.raises(error, match=message):
        sparse_ridge_cg(Z, y, **kwargs)


def test_feature_ridge_refuses_a_bool_max_iter():
    # max_iter=True was one conjugate-gradient iteration
    X, y, rb, _ = binned()
    with pytest.raises(ValueError, match="max_iter"):
        FeatureRidge(rb, max_iter=True).fit(X, y)


@pytest.mark.parametrize(
    "Z, Y, message",
    [
        # "max() arg is an empty sequence"
        (sp.eye(6, 4, format="csr"), np.ones((6, 0)), r"Y has shape \(6, 0\)"),
        # ZeroDivisionError: integer division or modulo by zero
        (sp.csr_matrix((6, 0)), np.ones(6), r"Z has shape \(6, 0\)"),
        (sp.csr_matrix((0, 4)), np.ones(0), r"Z has shape \(0, 4\)"),
    ],
)
def test_sparse_ridge_cg_refuses_empty_inputs_by_name(Z, Y, message):
    with pytest.raises(ValueError, match=message):
        sparse_ridge_cg(Z, Y, 1.0)


@pytest.mark.parametrize("fit_intercept", [False, True])
def test_sparse_ridge_cg_refuses_features_whose_squares_overflow(fit_intercept):
    # entries of 1e200 overflowed in the column sums of squares (the preconditioner): CG
    # then returned w = 0 or stopped at max_iter with the mean, after numpy's overflow warning
    Z = sp.csr_matrix(np.random.default_rng(0).normal(size=(20, 3)) * 1e200)
    with pytest.raises(ValueError, match="Z is too large in magnitude"):
        sparse_ridge_cg(Z, np.ones(20), 1.0, fit_intercept=fit_intercept)
