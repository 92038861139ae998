import warnings

import numpy as np
import pytest
from scipy.optimize import minimize
from sklearn.datasets import load_iris, make_moons
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVC, LinearSVC
from sklearn.utils.estimator_checks import parametrize_with_checks

from kernelcourse.kernels import RBF, Linear, Polynomial, exp
from kernelcourse.svm import KernelSVC, PrimalSVC, _dcd_hinge_epoch, _primal_objective


def _moons(n=200, noise=0.25, seed=0):
    X, y = make_moons(n, noise=noise, random_state=seed)
    return X, np.where(y == 1, 1, -1)


def _dual_objective(K, y, beta):
    # 1ᵀα − ½ αᵀGα with β = yα
    return float(np.abs(beta).sum() - 0.5 * beta @ K @ beta)


def _reference_qp(K, y, C):
    """The SVM dual by a general-purpose solver (SLSQP): max 1ᵀα − ½αᵀGα."""
    G = (y[:, None] * y[None, :]) * K
    n = len(y)
    res = minimize(
        lambda a: 0.5 * a @ G @ a - a.sum(),
        np.zeros(n),
        jac=lambda a: G @ a - 1.0,
        bounds=[(0.0, C)] * n,
        constraints=[{"type": "eq", "fun": lambda a: a @ y, "jac": lambda a: y}],
        method="SLSQP",
        options={"ftol": 1e-12, "maxiter": 1000},
    )
    assert res.success
    return res.x, -res.fun


def _expected_failed(estimator):
    if isinstance(estimator, PrimalSVC) and estimator.loss == "squared_hinge":
        return {}
    # Duplicating a sample and doubling its weight give the same dual problem, but SMO stops
    # at a KKT tolerance and visits a different sequence of pairs, so the two fits agree only
    # to about tol, not to the 1e-7 this check demands.
    return {
        "check_sample_weight_equivalence_on_dense_data": (
            "SMO and coordinate descent stop at a tolerance; weighted and repeated samples "
            "agree only to that tolerance."
        ),
    }


@parametrize_with_checks(
    [KernelSVC(), PrimalSVC(random_state=0), PrimalSVC(loss="hinge", random_state=0)],
    expected_failed_checks=_expected_failed,
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


@pytest.mark.parametrize("C", [0.1, 1.0, 10.0])
def test_smo_matches_reference_qp(C):
    X, y = _moons(40, seed=1)
    k = RBF(0.7)
    K = k(X)
    alpha_ref, obj_ref = _reference_qp(K, y.astype(float), C)
    m = KernelSVC(kernel=k, C=C, tol=1e-6).fit(X, y)
    assert m.dual_objective_ == pytest.approx(obj_ref, rel=1e-6)
    alpha = np.zeros(len(y))
    alpha[m.support_] = np.abs(m.dual_coef_[0])
    np.testing.assert_allclose(alpha, alpha_ref, atol=1e-3 * C)


def test_kkt_conditions_hold():
    X, y = _moons(150, seed=2)
    C, tol = 2.0, 1e-4
    m = KernelSVC(gamma=1.0, C=C, tol=tol).fit(X, y)
    alpha = np.zeros(len(y))
    alpha[m.support_] = y[m.support_] * m.dual_coef_[0]
    assert np.all(alpha >= 0) and np.all(alpha <= C)
    assert abs(alpha @ y) < 1e-10  # Σ y_i α_i = 0 is kept exactly by every SMO step
    margin = y * m.decision_function(X)
    free = (alpha > 1e-8) & (alpha < C - 1e-8)
    assert free.any()
    np.testing.assert_allclose(margin[free], 1.0, atol=2 * tol)
    assert np.all(margin[alpha == 0] >= 1 - 2 * tol)
    assert np.all(margin[alpha == C] <= 1 + 2 * tol)
    assert m.kkt_gap_[0] <= tol


@pytest.mark.parametrize("C", [0.5, 5.0])
def test_matches_libsvm(C):
    X, y = _moons(600, noise=0.3, seed=3)
    Xte, _ = _moons(2000, noise=0.3, seed=4)
    ours = KernelSVC(gamma=0.8, C=C).fit(X, y)
    ref = SVC(gamma=0.8, C=C).fit(X, y)
    obj_ref = _dual_objective(RBF(0.8)(ref.support_vectors_), y, ref.dual_coef_[0])
    assert ours.dual_objective_ == pytest.approx(obj_ref, rel=1e-3)
    assert np.mean(ours.predict(Xte) == ref.predict(Xte)) >= 0.995
    assert abs(len(ours.support_) - len(ref.support_)) <= 0.03 * len(ref.support_)
    np.testing.assert_allclose(ours.decision_function(Xte), ref.decision_function(Xte), atol=0.02)


def test_multiclass_one_vs_one_matches_libsvm():
    X, y = load_iris(return_X_y=True)
    ours = KernelSVC(gamma=0.5, C=1.0).fit(X, y)
    ref = SVC(gamma=0.5, C=1.0).fit(X, y)
    assert ours.intercept_.shape == (3,) and ours.dual_coef_.shape == (3, len(ours.support_))
    assert np.mean(ours.predict(X) == ref.predict(X)) >= 0.99
    np.testing.assert_array_equal(np.sort(ours.support_), np.sort(ref.support_))
    dec = ours.decision_function(X)
    np.testing.assert_array_equal(ours.classes_[dec.argmax(1)], ours.predict(X))


@pytest.mark.parametrize(
    "labels", [(-1, 1), (0, 1), ("ham", "spam"), (2, 7)], ids=["pm1", "01", "str", "int"]
)
def test_label_encodings_give_the_same_classifier(labels):
    X, y = _moons(120, seed=5)
    yl = np.where(y == 1, labels[1], labels[0])
    base = KernelSVC(gamma=1.0).fit(X, y)
    m = KernelSVC(gamma=1.0).fit(X, yl)
    np.testing.assert_array_equal(m.classes_, np.array(labels))
    np.testing.assert_allclose(m.decision_function(X), base.decision_function(X), atol=1e-12)
    np.testing.assert_array_equal(
        m.predict(X), np.where(base.predict(X) == 1, labels[1], labels[0])
    )


def test_hard_margin_is_the_maximum_margin_separator():
    rng = np.random.default_rng(6)
    X = rng.normal(size=(40, 2))
    y = np.where(X @ [1.0, -2.0] + 0.3 > 0, 1, -1)
    X = X + 0.4 * y[:, None] * np.array([1.0, -2.0]) / np.sqrt(5)  # open a gap
    m = KernelSVC(kernel=Linear(), C=np.inf, tol=1e-8).fit(X, y)
    w = m.dual_coef_[0] @ X[m.support_]
    b = m.intercept_[0]
    # The reference: min ½‖w‖² s.t. y(wᵀx + b) ≥ 1, by SLSQP.
    res = minimize(
        lambda p: 0.5 * p[:2] @ p[:2],
        np.zeros(3),
        constraints=[{"type": "ineq", "fun": lambda p: y * (X @ p[:2] + p[2]) - 1}],
        method="SLSQP",
        options={"ftol": 1e-14, "maxiter": 500},
    )
    np.testing.assert_allclose(np.r_[w, b], res.x, atol=1e-5)
    margins = y * (X @ w + b)
    assert margins.min() == pytest.approx(1.0, abs=1e-6)
    np.testing.assert_allclose(margins[m.support_], 1.0, atol=1e-6)


def test_precomputed_and_row_cache_agree_with_full_gram():
    X, y = _moons(300, seed=7)
    Xte, _ = _moons(50, seed=8)
    k = RBF(1.5)
    full = KernelSVC(kernel=k).fit(X, y)
    pre = KernelSVC(kernel="precomputed").fit(k(X), y)
    cached = KernelSVC(kernel=k, cache_size=0.05).fit(X, y)  # 0.05 MB: rows on demand
    np.testing.assert_allclose(pre.decision_function(k(Xte, X)), full.decision_function(Xte))
    np.testing.assert_allclose(cached.decision_function(Xte), full.decision_function(Xte))
    with pytest.raises(ValueError, match="square"):
        KernelSVC(kernel="precomputed").fit(X, y)


def test_shrinking_gives_the_same_solution():
    X, y = _moons(2400, noise=0.3, seed=9)
    a = KernelSVC(gamma=1.0, shrinking=True).fit(X, y)
    b = KernelSVC(gamma=1.0, shrinking=False).fit(X, y)
    assert a.dual_objective_ == pytest.approx(b.dual_objective_, rel=1e-4)
    assert np.mean(a.predict(X) == b.predict(X)) >= 0.995


def test_kernel_names_objects_and_params():
    X, y = _moons(100, seed=10)
    a = KernelSVC(kernel="poly", gamma=0.5, kernel_params={"degree": 3, "coef0": 1.0}).fit(X, y)
    b = KernelSVC(kernel=Polynomial(degree=3, gamma=0.5, coef0=1.0)).fit(X, y)
    np.testing.assert_allclose(a.decision_function(X), b.decision_function(X))
    assert a.kernel_ == Polynomial(degree=3, gamma=0.5, coef0=1.0)


def test_sample_weight_matches_libsvm():
    X, y = _moons(200, seed=11)
    sw = np.random.default_rng(0).uniform(0.2, 3.0, len(y))
    ours = KernelSVC(gamma=1.0, tol=1e-5).fit(X, y, sample_weight=sw)
    ref = SVC(gamma=1.0, tol=1e-5).fit(X, y, sample_weight=sw)
    np.testing.assert_allclose(ours.decision_function(X), ref.decision_function(X), atol=1e-3)


@pytest.mark.parametrize("C", [0, -1.0])
def test_bad_C(C):
    X, y = _moons(20)
    with pytest.raises(ValueError, match="'C'"):
        KernelSVC(C=C).fit(X, y)
    with pytest.raises(ValueError, match="'C'"):
        PrimalSVC(C=C).fit(X, y)


@pytest.mark.parametrize("est", [KernelSVC(), PrimalSVC()], ids=["kernel", "primal"])
def test_bad_inputs(est):
    X, y = _moons(20)
    with pytest.raises(ValueError, match="one class"):
        est.fit(X, np.ones(20))
    Xn = X.copy()
    Xn[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        est.fit(Xn, y)
    with pytest.raises(ValueError, match="sample_weight"):
        est.fit(X, y, sample_weight=np.ones(19))
    with pytest.raises(ValueError, match="sample_weight"):
        est.fit(X, y, sample_weight=-np.ones(20))


def test_bad_kernel_argument():
    X, y = _moons(20)
    with pytest.raises(ValueError, match="kernel"):
        KernelSVC(kernel="nope").fit(X, y)
    with pytest.raises(ValueError, match="gamma"):
        KernelSVC(kernel=RBF(1.0), gamma=2.0).fit(X, y)


def test_non_convergence_warns_with_the_kkt_gap():
    X, y = _moons(100)
    with pytest.warns(ConvergenceWarning, match="KKT gap"):
        KernelSVC(max_iter=3).fit(X, y)


@pytest.mark.parametrize("loss", ["squared_hinge", "hinge"])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_primal_matches_liblinear(loss, fit_intercept):
    rng = np.random.default_rng(12)
    X = rng.normal(size=(400, 20))
    y = np.where(X[:, :3].sum(1) + 0.5 * rng.normal(size=400) > 0, 1, -1)
    C = 0.5
    ours = PrimalSVC(
        C=C, loss=loss, fit_intercept=fit_intercept, tol=1e-8, max_iter=20000, random_state=0
    )
    ours.fit(X, y)
    ref = LinearSVC(C=C, loss=loss, fit_intercept=fit_intercept, tol=1e-8, max_iter=100000)
    ref.fit(X, y)
    Z = np.hstack([X, np.ones((400, 1))]) if fit_intercept else X
    w_ref = np.r_[ref.coef_[0], ref.intercept_] if fit_intercept else ref.coef_[0]
    obj_ref = _primal_objective(Z, y.astype(float), np.full(400, C), w_ref, loss)
    assert ours.objective_[0] == pytest.approx(obj_ref, rel=1e-5)
    assert np.mean(ours.predict(X) == ref.predict(X)) >= 0.995


def test_primal_multiclass_one_vs_rest():
    X, y = load_iris(return_X_y=True)
    ours = PrimalSVC(C=1.0).fit(X, y)
    ref = LinearSVC(C=1.0, tol=1e-8, max_iter=100000).fit(X, y)
    assert ours.coef_.shape == (3, 4)
    assert np.mean(ours.predict(X) == ref.predict(X)) >= 0.97


def test_hard_margin_on_overlapping_classes_does_not_converge():
    X, y = _moons(60, noise=0.4, seed=14)
    with pytest.warns(ConvergenceWarning, match="not separable"):
        KernelSVC(kernel=Linear(), C=np.inf, max_iter=3000).fit(X, y)


def _reference_dcd_epoch(Zy, qd, c, w, alpha, order, pg_max_old, pg_min_old):
    """One epoch of hinge-loss dual coordinate descent with shrinking, in plain Python."""
    kept, pg_max, pg_min = [], -np.inf, np.inf
    for i in order:
        g = sum(Zy[i, k] * w[k] for k in range(len(w))) - 1.0
        if alpha[i] == 0.0 and g > pg_max_old or alpha[i] == c[i] and g < pg_min_old:
            continue  # shrunk
        pg = min(g, 0.0) if alpha[i] == 0.0 else max(g, 0.0) if alpha[i] == c[i] else g
        kept.append(i)
        pg_max, pg_min = max(pg_max, pg), min(pg_min, pg)
        if abs(pg) > 1e-12:
            a_new = min(max(alpha[i] - g / qd[i], 0.0), c[i])
            w += (a_new - alpha[i]) * Zy[i]
            alpha[i] = a_new
    return pg_max, pg_min, np.array(kept, dtype=np.int64)


def test_dcd_epoch_matches_python_reference():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(60, 4))
    y = np.where(X[:, 0] + 0.7 * rng.normal(size=60) > 0, 1.0, -1.0)
    Zy = X * y[:, None]
    qd = np.einsum("ij,ij->i", Zy, Zy)
    c = np.full(60, 0.3)
    states = [[np.zeros(4), np.zeros(60)] for _ in range(2)]
    active, old = np.arange(60), (np.inf, -np.inf)
    shrunk = 0
    for _ in range(6):
        order = active[rng.permutation(len(active))]
        (w, alpha), (w_ref, alpha_ref) = states
        pg_max, pg_min, kept = _dcd_hinge_epoch(Zy, qd, c, w, alpha, order, *old)
        ref = _reference_dcd_epoch(Zy, qd, c, w_ref, alpha_ref, order, *old)
        assert np.array_equal(kept, ref[2])
        assert (pg_max, pg_min) == pytest.approx(ref[:2], abs=1e-12)
        np.testing.assert_allclose(w, w_ref, rtol=0, atol=1e-12)
        np.testing.assert_allclose(alpha, alpha_ref, rtol=0, atol=1e-12)
        shrunk += len(order) - len(kept)
        active = kept
        old = (pg_max if pg_max > 0 else np.inf, pg_min if pg_min < 0 else -np.inf)
    assert 0 < (alpha == 0).sum() and 0 < (alpha == 0.3).sum() and shrunk > 0


# -- numerical guards and class weights (issue 18) -----------------------------------------------
def _blobs(n=80, seed=0, ratio=0.5):
    rng = np.random.default_rng(seed)
    y = (rng.uniform(size=n) < ratio).astype(int)
    X = rng.normal(size=(n, 2)) + 1.5 * y[:, None]
    return X, y


@pytest.mark.parametrize("est", [KernelSVC(), PrimalSVC(random_state=0)], ids=repr)
def test_sample_weights_that_zero_a_class_raise(est):
    X, y = _blobs()
    sw = np.where(y == 1, 0.0, 1.0)
    with pytest.raises(ValueError, match="sample_weight and class_weight leave class"):
        est.fit(X, y, sample_weight=sw)
    with pytest.raises(ValueError, match="class_weight leave class"):
        est.set_params(class_weight={1: 0.0}).fit(X, y)


@pytest.mark.parametrize("kernel", ["exp-linear", "poly-huge"])
@pytest.mark.parametrize("cache_size", [1024, 1e-3])
def test_non_finite_gram_raises_naming_the_kernel_at_once(kernel, cache_size):
    rng = np.random.default_rng(0)
    if kernel == "exp-linear":
        k, X = exp(Linear()), 20 * rng.normal(size=(40, 3))
    else:
        k, X = "poly", 1e160 * rng.normal(size=(40, 3))  # the RBF stays exact there
    y = np.arange(40) % 2
    with pytest.raises(ValueError, match="kernel"):
        KernelSVC(kernel=k, cache_size=cache_size).fit(X, y)


def test_default_max_iter_scales_with_n_and_warns():
    from kernelcourse.svm import _default_max_iter

    assert _default_max_iter(10) == 10**5 and _default_max_iter(10**4) == 10**6
    X, y = _blobs(n=60)
    with pytest.warns(ConvergenceWarning, match="KKT gap"):
        KernelSVC(max_iter=2).fit(X, y)


@pytest.mark.parametrize("class_weight", [{0: 1.0, 1: 3.0}, "balanced"])
def test_class_weight_matches_sklearn(class_weight):

    X, y = _blobs(n=120, ratio=0.25)
    ref = SVC(C=1.0, gamma=0.5, tol=1e-6, class_weight=class_weight).fit(X, y)
    ours = KernelSVC(C=1.0, gamma=0.5, tol=1e-6, class_weight=class_weight).fit(X, y)
    np.testing.assert_allclose(ours.class_weight_, ref.class_weight_)
    np.testing.assert_allclose(ours.decision_function(X), ref.decision_function(X), atol=1e-4)
    lin = LinearSVC(C=1.0, tol=1e-8, class_weight=class_weight, max_iter=10**5).fit(X, y)
    primal = PrimalSVC(C=1.0, tol=1e-10, class_weight=class_weight).fit(X, y)
    np.testing.assert_allclose(primal.coef_, lin.coef_, atol=1e-3)
    with pytest.raises(ValueError, match="class_weight"):
        KernelSVC(class_weight={7: 2.0}).fit(X, y)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"y": np.array(["a", "b", "a", "b"])}, TypeError, "y must be numeric"),
        ({"y": np.array([1.0, -1.0, np.nan, 1.0])}, ValueError, "y contains NaN"),
        ({"y": np.array([1.0, 0.0, 1.0, 0.0])}, ValueError, "y must hold labels -1 and"),
        ({"C": -np.ones(4)}, ValueError, "C must be a number"),
        ({"C": np.ones(3)}, ValueError, "C must be a number"),
        # numpy's "could not convert string to float" named no argument, and bools were
        # taken as bounds (C=True: C = 1; shrinking="no": shrinking on)
        ({"C": "a"}, TypeError, "C must be a real number or array"),
        ({"C": True}, TypeError, "C must be a real number or array"),
        ({"C": None}, TypeError, "C must be a real number or array"),
        ({"shrinking": "no"}, TypeError, "shrinking must be True or False"),
        ({"gram": "K"}, TypeError, "gram must be"),
        ({"gram": np.ones((4, 3))}, ValueError, "gram must be a square"),
        ({"gram": np.diag([1.0, np.inf, 1.0, 1.0])}, ValueError, "gram contains NaN"),
        ({"tol": -1.0}, ValueError, "tol must be"),
        ({"max_iter": 0}, ValueError, "max_iter must be"),
    ],
)
def test_smo_solve_validates(kwargs, error, match):
    from kernelcourse.svm import smo_solve

    args = {"gram": np.eye(4), "y": np.array([1.0, -1.0, 1.0, -1.0]), "C": 1.0}
    args.update(kwargs)
    with pytest.raises(error, match=match):
        smo_solve(**args)


def test_ragged_x_names_x():
    with pytest.raises(ValueError, match="X is ragged"):
        KernelSVC().fit([[1.0, 2.0], [3.0]], [0, 1])


@pytest.mark.parametrize("C", [1e-3, 100.0])  # most rows active / few rows active
@pytest.mark.parametrize("gather_bytes", [0, 2**27])  # masked products / gathered rows
def test_primal_squared_hinge_bias_column_is_implicit(C, gather_bytes, monkeypatch):
    # The Newton solver handles [z_i; c] without copying Z: same solution as the explicit
    # augmented problem without an intercept, in both of its active-set branches.
    import kernelcourse.svm as svm_module

    monkeypatch.setattr(svm_module, "_GATHER_BYTES", gather_bytes)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 6))
    y = np.where(X[:, 0] + 0.3 * X[:, 1] + 0.5 > 0, 1, -1)
    c = 2.5
    implicit = PrimalSVC(C=C, intercept_scaling=c, tol=1e-10, max_iter=200).fit(X, y)
    Z = np.hstack([X, np.full((300, 1), c)])
    explicit = PrimalSVC(C=C, fit_intercept=False, tol=1e-10, max_iter=200).fit(Z, y)
    np.testing.assert_allclose(implicit.coef_[0], explicit.coef_[0, :-1], atol=1e-8)
    np.testing.assert_allclose(implicit.intercept_[0], c * explicit.coef_[0, -1], atol=1e-8)
    np.testing.assert_allclose(implicit.objective_, explicit.objective_, rtol=1e-10)


# -- the blocked working-set solver (issue 28) -----------------------------------------------
def _noisy_circles(n, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 6))
    y = np.where(np.linalg.norm(X[:, :3], axis=1) + 0.4 * rng.normal(size=n) > 1.6, 1, -1)
    return X, y


@pytest.mark.parametrize("cache_size", [1024, 2.0])  # rows all cached / evicted and recomputed
def test_working_sets_and_row_cache_match_libsvm(cache_size):
    # n > 2048: rows on demand (float32 here), working sets of 512, shrinking
    X, y = _noisy_circles(3000, seed=20)
    Xte, _ = _noisy_circles(1000, seed=21)
    ours = KernelSVC(gamma=0.2, C=2.0, cache_size=cache_size).fit(X, y)
    ref = SVC(gamma=0.2, C=2.0, cache_size=200).fit(X, y)
    obj_ref = _dual_objective(RBF(0.2)(ref.support_vectors_), y, ref.dual_coef_[0])
    assert ours.dual_objective_ == pytest.approx(obj_ref, rel=1e-4)
    assert ours.kkt_gap_[0] <= 1e-3
    np.testing.assert_allclose(ours.decision_function(Xte), ref.decision_function(Xte), atol=0.02)
    assert np.mean(ours.predict(Xte) == ref.predict(Xte)) >= 0.995


def test_row_dtype_follows_the_tolerance():
    from kernelcourse.svm import _RowCache, smo_solve

    X, y = _noisy_circles(2500, seed=22)
    results = {}
    for tol in (1e-3, 1e-9):
        gram = _RowCache(RBF(0.2), X, 64)
        results[tol] = smo_solve(gram, y.astype(float), 1.0, tol=tol)
        assert gram.dtype == (np.float32 if tol == 1e-3 else np.float64)
    # float32 rows move the solution by far less than the tolerance
    assert results[1e-3].dual_objective == pytest.approx(results[1e-9].dual_objective, rel=1e-5)


@pytest.mark.parametrize("q", [2, 16, 100])
def test_small_working_sets_reach_the_same_optimum(q):
    from kernelcourse.svm import smo_solve

    X, y = _noisy_circles(400, seed=23)
    K = RBF(0.3)(X)
    C = np.random.default_rng(0).uniform(0.5, 3.0, len(y))  # per-sample bounds (weights)
    whole = smo_solve(K, y.astype(float), C, tol=1e-6)
    blocked = smo_solve(K, y.astype(float), C, tol=1e-6, working_set_size=q)
    assert blocked.converged and blocked.kkt_gap <= 1e-6
    assert blocked.dual_objective == pytest.approx(whole.dual_objective, rel=1e-8)
    np.testing.assert_allclose(blocked.beta, whole.beta, atol=1e-4)
    assert abs(blocked.beta.sum()) < 1e-10
    with pytest.raises(ValueError, match="working_set_size"):
        smo_solve(K, y.astype(float), 1.0, working_set_size=0)


def test_shrinking_with_rows_on_demand_gives_the_same_solution():
    X, y = _noisy_circles(4000, seed=24)
    # 8 MB holds 524 float32 rows of 4000: the cache is small enough for shrinking to run
    a = KernelSVC(gamma=0.2, C=1.0, shrinking=True, cache_size=8).fit(X, y)
    b = KernelSVC(gamma=0.2, C=1.0, shrinking=False, cache_size=8).fit(X, y)
    assert a.dual_objective_ == pytest.approx(b.dual_objective_, rel=1e-5)
    assert a.kkt_gap_[0] <= 1e-3 and b.kkt_gap_[0] <= 1e-3
    assert np.mean(a.predict(X) == b.predict(X)) >= 0.998


def test_multiclass_and_sample_weights_through_the_blocked_solver():
    rng = np.random.default_rng(25)
    X = rng.normal(size=(4800, 4))
    y = np.digitize(X[:, 0] + 0.5 * X[:, 1] + 0.5 * rng.normal(size=4800), [-0.6, 0.6])
    sw = rng.uniform(0.5, 2.0, len(y))
    ours = KernelSVC(gamma=0.5, C=1.0).fit(X, y, sample_weight=sw)
    ref = SVC(gamma=0.5, C=1.0).fit(X, y, sample_weight=sw)
    Xte = rng.normal(size=(1000, 4))
    for p, (a, b) in enumerate(ours._pairs):
        idx = np.flatnonzero((y == a) | (y == b))
        pair = SVC(gamma=0.5, C=1.0).fit(X[idx], y[idx], sample_weight=sw[idx])
        np.testing.assert_allclose(
            ours._pair_decisions(Xte)[:, p], pair.decision_function(Xte), atol=0.02
        )
    assert np.mean(ours.predict(Xte) == ref.predict(Xte)) >= 0.99


def _noisy_labels(n, seed):
    # label noise puts most support vectors at their bound C: the case shrinking is for
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 6))
    y = np.where(np.linalg.norm(X[:, :3], axis=1) + 0.8 * rng.normal(size=n) > 1.6, 1, -1)
    return X, y


def test_shrunk_solve_with_bounded_support_vectors_matches_unshrunk_and_libsvm(monkeypatch):
    from kernelcourse.svm import _RowCache

    X, y = _noisy_labels(4000, seed=26)
    shrunk = []
    set_active = _RowCache.set_active

    def spy(self, act):
        shrunk.append(len(self.X) - len(act))
        set_active(self, act)

    monkeypatch.setattr(_RowCache, "set_active", spy)
    # 8 MB holds 524 float32 rows of 4000: shrinking runs
    a = KernelSVC(gamma=0.2, C=1.0, shrinking=True, cache_size=8).fit(X, y)
    assert max(shrunk) > 1000  # variables were dropped, and their gradient rebuilt
    b = KernelSVC(gamma=0.2, C=1.0, shrinking=False, cache_size=8).fit(X, y)
    ref = SVC(gamma=0.2, C=1.0).fit(X, y)
    alpha = np.abs(a.dual_coef_[0])
    assert np.mean(alpha > 1 - 1e-12) > 0.8  # most support vectors at the bound
    obj_ref = _dual_objective(RBF(0.2)(ref.support_vectors_), y, ref.dual_coef_[0])
    for m in (a, b):
        assert m.dual_objective_ == pytest.approx(obj_ref, rel=1e-4)
        assert m.kkt_gap_[0] <= 1e-3
    beta_a, beta_b = np.zeros(len(y)), np.zeros(len(y))
    beta_a[a.support_], beta_b[b.support_] = a.dual_coef_[0], b.dual_coef_[0]
    assert np.mean(np.abs(beta_a - beta_b) > 0.05) < 0.01
    np.testing.assert_allclose(a.decision_function(X), ref.decision_function(X), atol=0.02)


@pytest.mark.parametrize("max_iter", [3000, None])
def test_gradient_rebuild_counts_only_the_coefficients_that_moved(max_iter, monkeypatch):
    # v of a dropped variable is rebuilt from its value when it was dropped and the β that
    # moved since; a variable that left its bound and came back to it adds nothing. Stopping
    # early (max_iter) rebuilds while shrunk too. The objective, computed from v, must equal
    # the one computed from β directly, and the rebuild must skip the unmoved bounded ones.
    from kernelcourse.svm import _RowCache, smo_solve

    X, y = _noisy_labels(4000, seed=27)
    y = y.astype(float)
    moved = []
    products = _RowCache.products

    def spy(self, coef, cols):
        moved.append(np.count_nonzero(coef))
        return products(self, coef, cols)

    monkeypatch.setattr(_RowCache, "products", spy)
    res = smo_solve(_RowCache(RBF(0.2), X, 8), y, 1.0, max_iter=max_iter)
    assert moved, "no variable was shrunk"
    K = RBF(0.2)(X)
    exact = float(y @ res.beta - 0.5 * res.beta @ K @ res.beta)
    assert res.dual_objective == pytest.approx(exact, rel=1e-7)
    v = y - K @ res.beta
    free = (res.beta < 1.0 * (y > 0)) & (res.beta > -1.0 * (y < 0))
    assert res.intercept == pytest.approx(np.mean(v[free]), abs=1e-5)
    assert max(moved) < 0.5 * np.count_nonzero(res.beta)


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("class_weight", [{0: 5.0}, "balanced"])
def test_primal_svc_class_weights_as_liblinear(n_classes, class_weight):
    # LIBLINEAR weighs only the positive class of each one-vs-rest problem, and counts
    # "balanced" classes by their sample weights
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 2))
    y = rng.integers(0, n_classes, 300)
    X[:, 0] += 0.7 * y
    sw = rng.uniform(0.2, 2.0, 300)
    kw = dict(loss="hinge", C=0.7, tol=1e-9, class_weight=class_weight)
    ours = PrimalSVC(max_iter=10**5, random_state=0, **kw).fit(X, y, sample_weight=sw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # LIBLINEAR's own convergence chatter
        ref = LinearSVC(max_iter=10**7, dual=True, **kw).fit(X, y, sample_weight=sw)
    np.testing.assert_allclose(ours.coef_, ref.coef_, atol=1e-6)
    np.testing.assert_allclose(ours.intercept_, ref.intercept_, atol=1e-6)


@pytest.mark.parametrize("Est", [KernelSVC, PrimalSVC])
def test_max_iter_refuses_a_bool_by_name(Est):
    # scikit-learn's Interval(Integral) took max_iter=True as one iteration
    X = np.random.default_rng(0).normal(size=(30, 2))
    with pytest.raises(ValueError, match="'max_iter' parameter .*not a bool.*Got True"):
        Est(max_iter=True).fit(X, (X[:, 0] > 0).astype(int))


@pytest.mark.parametrize("C", [1e-200, 1e-300])
def test_primal_squared_hinge_with_a_tiny_C_scales_with_C(C):
    # with C below about 1e-154 the Newton direction d was so small that d·d underflowed to
    # 0 in the line search: w stayed 0 for max_iter steps, with a warning to raise max_iter.
    # For tiny C, w ≈ 2C Σ y_i z̃_i (every margin ≈ 0), linear in C.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = (X[:, 0] > 0).astype(int)
    ref = PrimalSVC(C=1e-100).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        tiny = PrimalSVC(C=C).fit(X, y)
    np.testing.assert_allclose(tiny.coef_ * (1e-100 / C), ref.coef_, rtol=1e-6)
    np.testing.assert_array_equal(tiny.predict(X), ref.predict(X))


@pytest.mark.parametrize("n_classes", [2, 3])
def test_a_decision_of_exactly_zero_predicts_as_libsvm(n_classes):
    # Every point the same, every class equally often: each pair's f(x) is exactly 0, and
    # LIBSVM gives the tie to the later class of the pair.
    X = np.zeros((4 * n_classes, 2))
    y = np.repeat(np.arange(n_classes), 4)
    ours = KernelSVC().fit(X, y)
    ref = SVC().fit(X, y)
    pairs = ours._pair_decisions(X[:1])
    assert np.all(pairs == 0)
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))


def test_linear_kernel_has_the_primal_weights_as_coef():
    # as SVC(kernel="linear").coef_: w = Σ y_i α_i x_i, and f(x) = wᵀx + b; other kernels
    # have no coef_ (hasattr is False), as in scikit-learn
    X, y = load_iris(return_X_y=True)
    binary = y < 2
    ours = KernelSVC(kernel="linear", tol=1e-8).fit(X[binary], y[binary])
    ref = SVC(kernel="linear", tol=1e-8).fit(X[binary], y[binary])
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=1e-5, atol=1e-6)
    many = KernelSVC(kernel="linear").fit(X, y)
    assert many.coef_.shape == (3, X.shape[1])
    np.testing.assert_allclose(
        X @ many.coef_.T + many.intercept_, many._pair_decisions(X), atol=1e-10
    )
    A = np.diag([1.0, 2.0, 0.5, 1.0])
    weighted = KernelSVC(kernel=Linear(A=A)).fit(X, y)
    np.testing.assert_allclose(
        X @ weighted.coef_.T + weighted.intercept_, weighted._pair_decisions(X), atol=1e-10
    )
    assert not hasattr(KernelSVC(kernel="linear"), "coef_")  # not fitted
    assert not hasattr(KernelSVC().fit(X, y), "coef_")
    assert not hasattr(KernelSVC(kernel="precomputed").fit(X @ X.T, y), "coef_")
    with pytest.raises(AttributeError, match="only available when using a linear kernel"):
        _ = KernelSVC(kernel="poly").fit(X, y).coef_
