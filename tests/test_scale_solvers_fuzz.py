"""Edge cases of the FALKON solver core and the large-scale estimators, checked against
direct numpy solves."""

import warnings

import numpy as np
import pytest

from kernelcourse.kernels import RBF, Kernel
from kernelcourse.scale import NystroemKRR, ProgressPrinter
from kernelcourse.solvers import (
    FalkonPreconditioner,
    NotPositiveDefiniteError,
    block_cg,
    cholesky_jitter,
    falkon_solve,
)


def _data(n=60):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 2))
    return X, np.sin(X[:, 0]) + X[:, 1]


@pytest.mark.parametrize("precompute", [False, True])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_nystroem_krr_with_targets_near_the_float_range(precompute, dtype):
    # ȳ, K_nMᵀ(y − ȳ) and Bᵀ K_nMᵀ(y − ȳ) overflowed for |y| of order 1e304: the fit failed
    # in scipy with "array must not contain infs or NaNs", or blamed X for the kernel
    X, y = _data()
    kw = dict(gamma=0.5, lam=1e-3, n_components=20, max_iter=100, tol=1e-10, random_state=0)
    kw.update(precompute=precompute, dtype=dtype)
    seen = []
    small = NystroemKRR(**kw).fit(X, y)
    big = NystroemKRR(callback=lambda it, alpha, res: seen.append(alpha), **kw)
    big.fit(X, 1e304 * y)
    np.testing.assert_allclose(big.predict(X[:5]) / 1e304, small.predict(X[:5]), atol=1e-8)
    scale = np.abs(small.dual_coef_).max()
    np.testing.assert_allclose(big.dual_coef_ / 1e304, small.dual_coef_, atol=1e-8 * scale)
    # the callback's coefficients are in the units of y, as dual_coef_ is
    np.testing.assert_allclose(seen[-1] / 1e304, small.dual_coef_, rtol=1e-6, atol=1e-12)
    const = NystroemKRR(**kw).fit(X, np.full(len(X), 1.5e308))  # ȳ overflowed to inf
    np.testing.assert_array_equal(const.predict(X[:3]), 1.5e308)


def test_nystroem_krr_says_when_its_coefficients_overflow():
    X, y = _data()
    model = NystroemKRR(gamma=0.5, lam=1e-3, n_components=30, random_state=0)
    with pytest.raises(ValueError, match=r"coefficients α overflow .*rescale y"):
        model.fit(X, 1e308 * np.sign(y))


def _falkon_problem():
    rng = np.random.default_rng(0)
    X = rng.uniform(-3, 3, size=(200, 1))
    k, C, lam, n = RBF(gamma=1.0), X[::5], 1e-3, 200
    KnM = k(X, C)
    rhs = KnM.T @ (np.sin(X[:, 0]) - np.sin(X[:, 0]).mean())[:, None]
    return k, C, lam, n, KnM, rhs


def test_falkon_solve_with_a_right_hand_side_near_the_float_range():
    # Bᵀ rhs, the iterates or the products overflowed: CG scaled b by NaN, and scipy's "must
    # not contain infs or NaNs" named nothing
    k, C, lam, n, KnM, rhs = _falkon_problem()

    def products(V):
        return KnM.T @ (KnM @ V)

    rhs = rhs / np.abs(rhs).max()  # largest entry 1, then 1e307
    exact = np.linalg.solve(KnM.T @ KnM + lam * n * k(C, C), rhs)
    Xt = np.linspace(-3, 3, 7)[:, None]
    seen = []
    res = falkon_solve(
        FalkonPreconditioner(k(C, C), lam, n),
        products,
        rhs * 1e307,
        lam,
        n,
        tol=1e-12,
        max_iter=100,
        callback=lambda it, alpha, r: seen.append(alpha),
    )
    np.testing.assert_allclose(k(Xt, C) @ res.alpha / 1e307, k(Xt, C) @ exact, atol=1e-6)
    # the callback's coefficients are in the units of rhs, as res.alpha is
    np.testing.assert_allclose(k(Xt, C) @ seen[-1] / 1e307, k(Xt, C) @ exact, atol=1e-6)


def test_falkon_solve_says_when_its_coefficients_overflow():
    # α ≈ rhs / λ_min beyond the float range: the error's own message failed to format
    # ("unsupported format string passed to numpy.ndarray.__format__")
    k, C, lam, n, KnM, rhs = _falkon_problem()
    with pytest.raises(ValueError, match=r"coefficients α overflow: .*largest \|entry\| 1e\+308"):
        falkon_solve(
            FalkonPreconditioner(k(C, C), lam, n),
            lambda V: KnM.T @ (KnM @ V),
            rhs / np.abs(rhs).max() * 1e308,
            lam,
            n,
            max_iter=50,
        )


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        ({"eps": -1.0}, ValueError, "eps must be a finite number > 0"),  # math domain error
        ({"eps": "a"}, TypeError, "eps must be a real number"),
        ({"rhs": np.zeros((40, 0))}, ValueError, r"rhs must be .*k >= 1, got shape \(40, 0\)"),
    ],
)
def test_falkon_solve_checks_eps_and_the_columns_of_rhs(kwargs, error, message):
    k, C, lam, n, KnM, rhs = _falkon_problem()
    args = {"rhs": rhs, **kwargs}
    rhs = args.pop("rhs")
    with pytest.raises(error, match=message):
        falkon_solve(
            FalkonPreconditioner(k(C, C), lam, n), lambda V: KnM.T @ (KnM @ V), rhs, lam, n, **args
        )


@pytest.mark.parametrize(
    "every, error", [(0, ValueError), (-1, ValueError), (2.5, TypeError), ("2", TypeError)]
)
def test_progress_printer_checks_every(every, error):
    # 0 failed at the first iteration with "integer modulo by zero"; 2.5 printed every 5th
    # iteration and -1 every one
    with pytest.raises(error, match="every must be an integer"):
        ProgressPrinter(every=every)


def test_progress_printer_prints_every_nth_iteration(capsys):
    printer = ProgressPrinter(every=2)
    for it in range(1, 6):
        printer(it, None, 0.5)
    lines = capsys.readouterr().out.splitlines()
    assert [int(line.split()[1]) for line in lines] == [2, 4]


class _Sigmoid(Kernel):
    """tanh(xᵀy − 1): not positive semidefinite."""

    def _params(self):
        return {}

    def _gram(self, X, Y):
        return np.tanh(X @ (X if Y is None else Y).T - 1.0)

    def _diag(self, X):
        return np.tanh((X * X).sum(axis=1) - 1.0)


def test_cholesky_jitter_refuses_a_matrix_indefinite_beyond_round_off():
    # the ladder of shifts went up to 10²² times the first: −I was factored as 6.7·I, and
    # an indefinite kernel's K_MM had 44·I added in silence, which the FALKON system then
    # used as its regulariser λn(K_MM + sI)
    with pytest.raises(NotPositiveDefiniteError, match=r"A is not positive definite"):
        cholesky_jitter(-np.eye(3))
    X, y = _data()
    model = NystroemKRR(kernel=_Sigmoid(), lam=1e-3, n_components=20, random_state=0)
    with pytest.raises(NotPositiveDefiniteError, match=r"K_MM is not positive definite"):
        model.fit(X, y)
    # a PSD matrix that needs a jitter (rank one, or all zeros) still gets one
    for A in (np.ones((4, 4)), np.zeros((4, 4))):
        T, shift = cholesky_jitter(A.copy())
        assert 0 < shift < 1e-12
        np.testing.assert_allclose(T.T @ T, A + shift * np.eye(4), atol=1e-14)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        NystroemKRR(gamma=0.5, lam=1e-3, n_components=60, random_state=0).fit(X, y)


def test_cg_refuses_an_indefinite_preconditioner():
    # An indefinite M made the step sizes change sign: CG ran to max_iter and warned only that
    # it had not converged, as if more iterations would help.
    from kernelcourse.solvers import conjugate_gradient

    rng = np.random.default_rng(0)
    A = rng.normal(size=(30, 30))
    H = A @ A.T + 30 * np.eye(30)
    b = rng.normal(size=30)
    signs = np.where(np.arange(30) % 2 == 0, 1.0, -1.0)
    with pytest.raises(NotPositiveDefiniteError, match=r"preconditioner is not positive definite"):
        conjugate_gradient(lambda v: H @ v, b, max_iter=50, preconditioner=lambda r: signs * r)
    # a positive definite (diagonal) one still converges, without a warning
    d = 1.0 / np.diag(H)
    x, _ = conjugate_gradient(
        lambda v: H @ v, b, max_iter=100, tol=1e-10, preconditioner=lambda r: d * r
    )
    np.testing.assert_allclose(H @ x, b, atol=1e-8)


_H = np.array([[4.0, 1.0], [1.0, 3.0]])


@pytest.mark.parametrize(
    "args, kwargs, error, message",
    [
        (("H", np.ones((2, 1))), {}, TypeError, "matvec must be a callable"),
        ((None, [[1.0], [2.0]]), {}, TypeError, "B must be a floating-point ndarray"),
        ((None, np.ones((2, 1), dtype=int)), {}, TypeError, "B must be a floating-point"),
        ((None, np.ones(2)), {}, ValueError, r"B must be a non-empty 2-d array .* \(2,\)"),
        ((None, np.ones((2, 0))), {}, ValueError, "B must be a non-empty 2-d array"),
        ((None, np.array([[1.0], [np.nan]])), {}, ValueError, "B contains NaN"),
        ((None, np.ones((2, 1))), {"max_iter": -1}, ValueError, "max_iter must be"),
        ((None, np.ones((2, 1))), {"max_iter": 2.5}, TypeError, "max_iter must be"),
        ((None, np.ones((2, 1))), {"tol": -1e-3}, ValueError, "tol must be"),
        ((None, np.ones((2, 1))), {"tol": np.nan}, ValueError, "tol must be"),
        ((None, np.ones((2, 1))), {"eps": 0.0}, ValueError, "eps must be"),
        ((None, np.ones((2, 1))), {"eps": 1.0}, ValueError, "eps must be a relative precision"),
        ((None, np.ones((2, 1))), {"callback": 3}, TypeError, "callback must be"),
        ((None, np.ones((2, 1))), {"preconditioner": "M"}, TypeError, "preconditioner must"),
    ],
)
def test_block_cg_names_the_bad_argument(args, kwargs, error, message):
    matvec, B = args
    matvec = (lambda P: _H @ P) if matvec is None else matvec
    with pytest.raises(error, match=message):
        block_cg(matvec, B, **kwargs)


def test_block_cg_with_no_iterations_returns_zero():
    result = block_cg(lambda P: _H @ P, np.ones((2, 1)), max_iter=0)
    assert result.n_iter == 0 and result.status == "max_iter"
    np.testing.assert_array_equal(result.x, 0.0)


@pytest.mark.parametrize("eps", [1.0, 1e10, 1e300])
def test_eps_of_one_or_more_is_refused_by_name(eps):
    # ε = 1e300 passed as "a number > 0": cholesky_jitter's first shift ε M max Aᵢᵢ was inf
    # and it returned a factor of NaN with shift = inf; FalkonPreconditioner failed saying
    # "T Tᵀ/M + λI holds NaN or infinity", and block_cg stopped at once on a "breakdown"
    A = 1e10 * np.ones((3, 3))
    with pytest.raises(ValueError, match="eps must be a relative precision below 1"):
        cholesky_jitter(A.copy(), eps=eps)
    with pytest.raises(ValueError, match="eps must be a relative precision below 1"):
        FalkonPreconditioner(A.copy(), 1e-3, 10, eps=eps)
    with pytest.raises(ValueError, match="eps must be a relative precision below 1"):
        block_cg(lambda P: _H @ P, np.ones((2, 1)), eps=eps)
    B = FalkonPreconditioner(np.eye(2), 1e-3, 10)
    with pytest.raises(ValueError, match="eps must be a relative precision below 1"):
        falkon_solve(B, lambda V: V, np.ones((2, 1)), 1e-3, 10, eps=eps)
    # a coarse precision below 1 is still taken
    T, shift = cholesky_jitter(A.copy(), eps=0.5)
    assert np.isfinite(T).all() and np.isfinite(shift)
