"""Self-checks for homework 4: SMO beyond chapter 8 (Platt 1998; Fan, Chen & Lin
2005; :doc:`chapter 8 </book/08_svm_dual_and_primal>`): the pair step for kernels that
are not positive semi-definite, the shrinking rule, and SMO with shrinking and
unshrinking.

The checks test properties, not agreement with a solver: the step must be feasible and
never lose objective, and be the best point on its line when the kernel is positive
definite and when, for a pair with a_ij < 0, the best end lies against the slope; the
shrinking rule must set aside exactly the variables at a bound that belong to no
violating pair, and do a fixed number of passes over the variables (counted by
:class:`WorkCounter`, never timed), and the solver's α must satisfy the KKT conditions. LIBSVM
(scikit-learn's ``SVC``) only provides the partly solved problems that the shrinking
check starts from; it may not be called from the student's code.
"""

from __future__ import annotations

import numpy as np
from sklearn.svm import SVC

from ...kernels import RBF
from ._core import SelfCheck, as_numbers, close, fresh_rng
from ._work import WorkCounter, counted_call

__all__ = ["q1", "q2", "q3", "q4", "toy_problem", "sigmoid_problem", "WorkCounter"]

# What else would answer these questions in one call.
SVM_SOLVERS = ("sklearn.svm",)


def toy_problem(rng, n=40, gamma=1.0):
    """Two overlapping Gaussian blobs in 2-D, labels ±1, and their RBF Gram matrix."""
    y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    X = rng.normal(size=(n, 2)) + 0.9 * y[:, None]
    return X, y, RBF(gamma=gamma)(X)


def sigmoid_problem(rng, n=40, gamma=1.0, coef0=0.0):
    """Points of varied length in 2-D, labels ±1, and the Gram matrix of the sigmoid
    kernel tanh(γ xᵀx' + c), which is symmetric but not positive semi-definite."""
    y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    X = (rng.normal(size=(n, 2)) + 0.5 * y[:, None]) * rng.uniform(0.3, 2.0, size=(n, 1))
    return X, y, np.tanh(gamma * X @ X.T + coef0)


def _box(y, C):
    """The box [L, U] of the signed coefficients β = y ∘ α."""
    return np.where(y > 0, 0.0, -C), np.where(y > 0, C, 0.0)


def _feasible_alpha(rng, y, C):
    """A random α with 0 ≤ α ≤ C and yᵀα = 0."""
    alpha = rng.uniform(0, C, size=len(y))
    pos, neg = y > 0, y < 0
    s_pos, s_neg = alpha[pos].sum(), alpha[neg].sum()
    if s_pos > s_neg:
        alpha[pos] *= s_neg / s_pos
    else:
        alpha[neg] *= s_pos / s_neg
    return alpha


def _objective(alpha, K, y):
    beta = alpha * y
    return float(y @ beta - beta @ K @ beta / 2)


def _segment(alpha, y, C, i, j):
    """The feasible τ of β + τ(e_i − e_j), as its two ends."""
    L, U = _box(y, C)
    beta = alpha * y
    return max(L[i] - beta[i], beta[j] - U[j]), min(U[i] - beta[i], beta[j] - L[j])


def _line_gain(alpha, K, y, i, j, lo, hi, size=4001):
    """The change of the objective at β + τ(e_i − e_j) for τ on a grid of [lo, hi]."""
    beta = alpha * y
    ts = np.linspace(lo, hi, size)
    slope = y[i] - y[j] - (K[i] - K[j]) @ beta
    return slope * ts - 0.5 * (K[i, i] + K[j, j] - 2.0 * K[i, j]) * ts**2


def _kkt_gap(alpha, K, y, C):
    """m(β) − M(β) over all variables (≤ tol at an approximate optimum)."""
    L, U = _box(y, C)
    beta = alpha * y
    v = y - K @ beta
    eps = 1e-9 * C
    return float(v[beta < U - eps].max() - v[beta > L + eps].min())


def _primal(alpha, K, y, C, b):
    """P(β, b) = ½βᵀKβ + C Σ max(0, 1 − y_i((Kβ)_i + b)), the primal objective at
    w = Σ β_i φ(x_i) and the bias b."""
    beta = alpha * y
    Kb = K @ beta
    return float(0.5 * beta @ Kb + C * np.maximum(0.0, 1.0 - y * (Kb + b)).sum())


def q1(student_duality_gap, *, seed=None):
    """Check ``duality_gap(alpha, K, y, C)`` = (𝒟(β), P(β, b) − 𝒟(β), b) with b minimising
    P(β, ·): the dual objective against ‖w‖² for a linear kernel, the gap against the primal
    at the returned b, that b against its neighbours (P is convex in b), and the gap's sign
    and its size at LIBSVM's solution."""
    rng = fresh_rng(seed)
    c = SelfCheck("hw4.q1", student_duality_gap, forbid=SVM_SOLVERS)
    C = 1.0

    def run(alpha, K, y):
        out = c.fn(alpha, K, y, C)
        assert isinstance(out, tuple | list) and len(out) == 3, (
            "return the triple (dual objective, duality gap, b)"
        )
        try:
            dual, gap, b = (float(v) for v in out)
        except (TypeError, ValueError):
            raise AssertionError("each of the three values must be one number") from None
        assert np.isfinite([dual, gap, b]).all(), "the triple holds NaN or infinity"
        return dual, gap, b

    @c.test(
        "the dual objective equals 1ᵀα − ½‖w‖² with w = Σ_i α_i y_i x_i for a linear kernel",
        "with β = α * y the quadratic term is βᵀ K β; the ½ matters.",
    )
    def _():
        for _ in range(3):
            X = rng.normal(size=(12, 3))
            y = np.where(np.arange(12) % 2 == 0, 1.0, -1.0)
            alpha = _feasible_alpha(rng, y, C)
            w = X.T @ (alpha * y)
            close(run(alpha, X @ X.T, y)[0], alpha.sum() - 0.5 * w @ w, what="the dual objective")

    @c.test(
        "the gap is P(β, b) − 𝒟(β) at the b returned, and b minimises P(β, ·)",
        "Σ max(0, 1 − y_i((Kβ)_i + b)) is convex and piecewise linear in b: follow its "
        "slope from b = −∞, kink by kink.",
    )
    def _():
        for _ in range(4):
            _, y, K = toy_problem(rng, n=int(rng.integers(6, 40)))
            alpha = _feasible_alpha(rng, y, C)
            dual, gap, b = run(alpha, K, y)
            primal = _primal(alpha, K, y, C, b)
            close(gap, primal - dual, atol=1e-8 * (1 + abs(primal)), what="the gap")
            for step in (1e-6, 1e-3, 0.1, 1.0, 10.0):
                for other in (b - step, b + step):
                    worse = _primal(alpha, K, y, C, other)
                    assert worse >= primal - 1e-9 * (1 + abs(primal)), (
                        "another bias gives a smaller primal objective: b is no minimiser"
                    )

    @c.test(
        "the gap is ≥ 0 at every feasible α, and below 10⁻⁴ of the objective at LIBSVM's solution",
        "for feasible α (0 ≤ α ≤ C, yᵀα = 0) weak duality gives P(β, b) ≥ 𝒟(β) for every b; "
        "question 5(d) proves it term by term.",
    )
    def _():
        _, y, K = toy_problem(rng, n=60)
        for _ in range(5):
            assert run(_feasible_alpha(rng, y, C), K, y)[1] >= -1e-9, "a negative gap"
        svc = SVC(C=C, kernel="precomputed", tol=1e-8).fit(K, y)
        alpha = np.zeros(len(y))
        alpha[svc.support_] = np.abs(svc.dual_coef_[0])
        dual, gap, _ = run(alpha, K, y)
        assert -1e-9 <= gap <= 1e-4 * (1 + abs(dual)), f"gap {gap:.3g} at an optimum"

    c.finish()


def _against_the_slope(rng, C, n=16, count=4, tries=5000):
    """A random symmetric K, labels, and ``count`` cases (α, i, j) with a_ij < −1 whose best
    point on the segment is the end against the slope, by a clear margin: the start lies near
    one end of the segment and the far end wins."""
    B = rng.normal(size=(n, n))
    K = (B + B.T) / 2
    y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    d = np.diag(K)
    pairs = np.argwhere(np.triu(d[:, None] + d[None, :] - 2.0 * K < -1.0, 1))
    cases = []
    for _ in range(tries):
        i, j = (int(t) for t in pairs[rng.integers(len(pairs))][rng.permutation(2)])
        alpha = _feasible_alpha(rng, y, C)
        lo, hi = _segment(alpha, y, C, i, j)
        t0 = lo + float(rng.choice([0.05, 0.95])) * (hi - lo)
        beta = alpha * y
        beta[i] += t0
        beta[j] -= t0
        alpha = np.clip(beta * y, 0.0, C)
        lo, hi = _segment(alpha, y, C, i, j)
        ends = _line_gain(alpha, K, y, i, j, lo, hi, size=2)
        slope = y[i] - y[j] - (K[i] - K[j]) @ (alpha * y)
        if ends.max() > (ends[1] if slope > 0 else ends[0]) + 1e-3:
            cases.append((alpha, i, j))
            if len(cases) == count:
                break
    return K, y, cases


def q2(student_smo_step, *, seed=None):
    """Check ``smo_step(alpha, K, y, C, i, j)``: a feasible pair step that never loses
    objective, for positive definite and for indefinite kernels."""
    rng = fresh_rng(seed)
    c = SelfCheck("hw4.q2", student_smo_step, forbid=SVM_SOLVERS)
    C = 1.0
    _, y, K = toy_problem(rng, n=20)
    _, y_s, K_s = sigmoid_problem(rng, n=30)
    diag = np.diag(K_s)
    a_s = diag[:, None] + diag[None, :] - 2.0 * K_s
    negative = np.argwhere(np.triu(a_s < -1e-2, 1))
    cases, cases_s = [], []
    for _ in range(12):
        i, j = rng.choice(20, size=2, replace=False)
        cases.append((_feasible_alpha(rng, y, C), int(i), int(j)))
        i, j = negative[rng.integers(len(negative))][rng.permutation(2)]
        cases_s.append((_feasible_alpha(rng, y_s, C), int(i), int(j)))

    def step(alpha, K, y, i, j):
        """The student's step from a copy of α (a changed α is reported by c.fn)."""
        new = as_numbers(c.fn(alpha, K, y, C, i, j), "the new α")
        assert new.shape == alpha.shape, f"the new α has shape {new.shape}, expected {alpha.shape}"
        return new

    def feasible(alpha, new, y, i, j):
        others = np.ones(len(y), bool)
        others[[i, j]] = False
        close(new[others], alpha[others], what="the α_k with k ∉ {i, j}")
        close(float(y @ new), float(y @ alpha), atol=1e-9, what="yᵀα")
        assert new.min() >= -1e-12 and new.max() <= C + 1e-12, "α left the box [0, C]"

    @c.test("does not modify its input α", "work on a copy: alpha = alpha.copy().")
    def _():
        alpha, i, j = cases[0]
        before = alpha.copy()
        c.fn(alpha, K, y, C, i, j)
        close(alpha, before, rtol=0, atol=0, what="the input α after the call")

    @c.test(
        "changes only α_i and α_j, keeps yᵀα and the box 0 ≤ α ≤ C",
        "move along the line β_i + β_j = constant and clip t (the step) to the "
        "interval that keeps both coefficients in their box.",
    )
    def _():
        for alpha, i, j in cases:
            new = step(alpha, K, y, i, j)
            feasible(alpha, new, y, i, j)

    @c.test(
        "for an RBF kernel, reaches the best feasible point on the line",
        "along the line the objective is a parabola in the step; find its best point "
        "on the feasible interval.",
    )
    def _():
        for alpha, i, j in cases:
            new = step(alpha, K, y, i, j)
            lo, hi = _segment(alpha, y, C, i, j)
            best = _objective(alpha, K, y) + _line_gain(alpha, K, y, i, j, lo, hi).max()
            got = _objective(new, K, y)
            assert got >= best - 1e-9, (
                f"pair ({i}, {j}): a feasible point on the line has a larger objective"
                f" than yours, by {best - got:.3g}"
            )

    @c.test(
        "for a sigmoid kernel and pairs with a_ij < 0, stays feasible and never lowers"
        " the objective",
        "with a_ij < 0 the objective is not concave along the line: the point where "
        "its derivative vanishes is no maximum. Stay on the feasible interval.",
    )
    def _():
        for alpha, i, j in cases_s:
            new = step(alpha, K_s, y_s, i, j)
            feasible(alpha, new, y_s, i, j)
            loss = _objective(alpha, K_s, y_s) - _objective(new, K_s, y_s)
            assert loss <= 1e-9, f"pair ({i}, {j}): the step lowers the objective by {loss:.3g}"

    @c.test(
        "for pairs with a_ij < 0 of an indefinite K, reaches the best point of the segment, "
        "also when it lies against the slope",
        "with a_ij < 0 the objective is convex along the line: the slope at the current "
        "point does not tell where its maximum on the segment is.",
    )
    def _():
        K_r, y_r, far = _against_the_slope(rng, C)
        assert far, "the check found no test case (run it again)"
        for alpha, i, j in far:
            new = step(alpha, K_r, y_r, i, j)
            feasible(alpha, new, y_r, i, j)
            lo, hi = _segment(alpha, y_r, C, i, j)
            best = _objective(alpha, K_r, y_r) + _line_gain(alpha, K_r, y_r, i, j, lo, hi).max()
            got = _objective(new, K_r, y_r)
            assert got >= best - 1e-9 * (1.0 + abs(best)), (
                f"pair ({i}, {j}): a feasible point on the line has a larger objective"
                f" than yours, by {best - got:.3g}"
            )

    c.finish()


def _triple(out):
    """``out`` if it is the triple (alpha, n_kernel, n_steps) the question asks for: indexing
    a bare α would test α[0] as the whole answer, and a pair cannot be unpacked into three."""
    assert isinstance(out, tuple | list) and len(out) == 3, (
        "return the triple (alpha, n_kernel, n_steps)"
        + (f", not {len(out)} values" if isinstance(out, tuple | list) else "")
    )
    return out


def q4(student_smo, *, seed=None):
    """Check ``smo_shrinking(K, y, C, tol=1e-5) -> (alpha, n_kernel, n_steps)``: a
    feasible dual optimum (KKT gap over all variables below 1e-3, and below 1e-4 when it
    shrinks at every step) and a count of kernel values, the measure of what shrinking
    saves."""
    rng = fresh_rng(seed)
    c = SelfCheck("hw4.q4", student_smo, forbid=SVM_SOLVERS)
    for C in (0.5, 10.0):

        @c.test(
            f"returns a feasible α satisfying the KKT conditions for C = {C}",
            "stop only when m(β) and M(β), taken over all the variables (those set "
            "aside included, after unshrinking), are within tol; keep every β_t in its"
            " box and Σ β_t = 0, and keep v equal to y − Kβ on the active variables.",
        )
        def _(C=C):
            X, y, K = toy_problem(rng, n=60, gamma=float(rng.uniform(0.5, 2.0)))
            alpha = as_numbers(_triple(c.fn(K, y, C))[0], "α")
            assert alpha.shape == (60,), f"α has shape {alpha.shape}, expected (60,)"
            assert alpha.min() >= -1e-9 and alpha.max() <= C + 1e-9, "α left the box [0, C]"
            assert abs(y @ alpha) < 1e-6 * C * 60, "yᵀα is not 0"
            gap = _kkt_gap(alpha, K, y, C)
            assert gap < 1e-3, f"the KKT gap m(β) − M(β) over all variables is {gap:.3g}"

    @c.test(
        "reports the number of kernel values it used, and 2n per step without shrinking",
        "add the length of each kernel row you read, and the values you compute to "
        "rebuild v when you unshrink: the count is what shrinking is meant to lower.",
    )
    def _():
        X, y, K = toy_problem(rng, n=30)
        for options in ({}, {"shrink": False}):  # the default first, then without shrinking
            _, n_kernel, n_steps = _triple(c.fn(K, y, 1.0, 1e-5, **options))
            for name, count in (("n_kernel", n_kernel), ("n_steps", n_steps)):
                try:
                    whole = np.ndim(count) == 0 and int(count) >= 1 and int(count) == count
                except (TypeError, ValueError):
                    whole = False
                assert whole, f"{name} = {count!r} is not a positive whole number"
        assert int(n_kernel) == 60 * int(n_steps), (
            f"with shrink=False and n = 30, {int(n_kernel)} kernel values in "
            f"{int(n_steps)} steps: each step reads two whole rows, 2n = 60 values"
        )

    @c.test(
        "shrinking at every step (every = 1), still optimal over all variables on six "
        "problems, with fewer kernel values than 2n per step",
        "a variable set aside can be pulled back into a violating pair as the others move: "
        "before stopping, rebuild v on the set-aside variables from β, make them active again "
        "and test m − M over all of them. Count 2|A| per step on the active set A.",
    )
    def _():
        used = full = 0
        for C in (0.5, 1.0, 10.0) * 2:
            X, y, K = toy_problem(rng, n=60, gamma=float(rng.uniform(0.5, 2.0)))
            alpha, n_kernel, n_steps = _triple(c.fn(K, y, C, 1e-5, every=1))
            alpha = as_numbers(alpha, "α")
            assert alpha.shape == (60,), f"α has shape {alpha.shape}, expected (60,)"
            gap = _kkt_gap(alpha, K, y, C)
            assert gap < 1e-4, (
                f"with every = 1 and C = {C} the KKT gap m(β) − M(β) over all variables is "
                f"{gap:.3g}"
            )
            used, full = used + int(n_kernel), full + 120 * int(n_steps)
        # the solution uses at most 0.59 of 2n per step here (300 draws)
        assert used < 0.9 * full, (
            f"{used / full:.2f} of 2n kernel values per step with shrinking at every step"
        )

    c.finish()


def _partly_solved(rng, C):
    """A problem and the α of a loose LIBSVM fit: many coefficients at a bound, far from
    the optimum in places."""
    X, y, K = toy_problem(rng, n=40, gamma=float(rng.uniform(0.5, 2.0)))
    svc = SVC(C=C, kernel="precomputed", tol=float(rng.uniform(0.3, 1.0)), shrinking=False)
    svc.fit(K, y)
    alpha = np.zeros(40)
    alpha[svc.support_] = np.abs(svc.dual_coef_[0])
    alpha[np.isclose(alpha, C, rtol=0, atol=1e-12 * C)] = C
    return alpha, K, y


def _violating_partners(alpha, K, y, C):
    """For each t, how far the best partner of a violating pair beats it (≤ 0: none)."""
    L, U = _box(y, C)
    beta = alpha * y
    v = y - K @ beta
    up, low = beta < U, beta > L
    excess = np.full(len(y), -np.inf)
    for t in range(len(y)):
        if low[t]:  # t as the coefficient that shrinks: a partner in I_up above it
            excess[t] = max(excess[t], max(v[s] - v[t] for s in np.flatnonzero(up)))
        if up[t]:  # t as the coefficient that grows: a partner in I_low below it
            excess[t] = max(excess[t], max(v[t] - v[s] for s in np.flatnonzero(low)))
    return excess, up & low


def _near_optimum(rng, n, C):
    """A problem of ``n`` points and the α of a LIBSVM fit to tol 10⁻³: most variables sit at a
    bound and belong to no violating pair, so a search for partners scans all of them."""
    X, y, K = toy_problem(rng, n=n, gamma=float(rng.uniform(0.5, 2.0)))
    svc = SVC(C=C, kernel="precomputed", tol=1e-3).fit(K, y)
    alpha = np.zeros(n)
    alpha[svc.support_] = np.abs(svc.dual_coef_[0])
    alpha[np.isclose(alpha, C, rtol=0, atol=1e-12 * C)] = C
    return alpha, K, y


#: The size of the problem on which q3 counts the work, and what an O(n) rule stays within
#: there: steps per variable (a Python loop over the variables takes about 9), vector
#: operations in all (the solution makes at most 9), entries of vectors that numpy works
#: through per variable, in its functions, ufuncs, ufunc methods and operators, products with
#: K excepted (the solution: about 27; a maximum over the variables recomputed for each one:
#: about n) and bytes held at once per variable (the solution holds about 30; an n × n mask
#: holds n).
COST_N = 1000
STEPS_PER_VARIABLE = 100
MAX_VECTOR_OPS = 60
ELEMENTS_PER_VARIABLE = 100
BYTES_PER_VARIABLE = 200


def q3(student_shrinkable, *, seed=None):
    """Check ``shrinkable(alpha, K, y, C)``: a boolean mask of the variables at a
    bound that belong to no violating pair, found in O(n) once v is known (the work is
    counted by :class:`WorkCounter`, on a problem near its optimum, where a search for
    partners would scan all of them; the counter follows the arrays it hands over through
    numpy's compiled code, and K is exempt)."""
    rng = fresh_rng(seed)
    c = SelfCheck("hw4.q3", student_shrinkable, forbid=SVM_SOLVERS)
    cases = [_partly_solved(rng, C) for C in (0.5, 1.0, 5.0, 20.0)]

    def mask(alpha, K, y, C):
        got = np.asarray(c.fn(alpha, K, y, C))
        assert got.shape == y.shape, f"the mask has shape {got.shape}, expected {y.shape}"
        assert got.dtype == bool, f"the mask has dtype {got.dtype}, expected bool"
        return got

    @c.test(
        "never sets aside a free support vector",
        "free support vectors (0 < α_t < C) can still move both ways: they stay active.",
    )
    def _():
        for (alpha, K, y), C in zip(cases, (0.5, 1.0, 5.0, 20.0), strict=True):
            free = (alpha > 0) & (alpha < C)
            got = mask(alpha, K, y, C)
            assert not (got & free).any(), f"{int((got & free).sum())} free variables set aside"

    @c.test(
        "sets aside only variables that belong to no violating pair",
        "a variable at a bound can move one way only; ask whether some partner forms a "
        "violating pair with it in that direction.",
    )
    def _():
        for (alpha, K, y), C in zip(cases, (0.5, 1.0, 5.0, 20.0), strict=True):
            excess, _ = _violating_partners(alpha, K, y, C)
            wrong = mask(alpha, K, y, C) & (excess > 1e-9)
            assert not wrong.any(), (
                f"{int(wrong.sum())} variables set aside still belong to a violating pair"
            )

    @c.test(
        "sets aside every variable at a bound that belongs to no violating pair",
        "every variable at a bound with which no partner forms a violating pair is to "
        "be set aside, not only some of them.",
    )
    def _():
        for (alpha, K, y), C in zip(cases, (0.5, 1.0, 5.0, 20.0), strict=True):
            excess, free = _violating_partners(alpha, K, y, C)
            missed = ~mask(alpha, K, y, C) & ~free & (excess < -1e-9)
            assert not missed.any(), f"{int(missed.sum())} shrinkable variables kept"

    @c.test(
        f"costs O(n) once v is known: on n = {COST_N:,} variables, at most "
        f"{STEPS_PER_VARIABLE} Python steps per variable, {MAX_VECTOR_OPS} vector operations, "
        f"{ELEMENTS_PER_VARIABLE} vector entries per variable through numpy and "
        f"{BYTES_PER_VARIABLE} bytes per variable held at once (counted, not timed)",
        "compute v = y − Kβ with one matrix–vector product (K @ beta), then m(β) and M(β) once "
        "each, and compare every v_t with them: no search for partners variable by variable, "
        "no maximum over all the variables recomputed for each one (by v.max(), np.max or "
        "np.maximum.reduce alike), no n × n array (such as K * beta or v[:, None] − "
        "v[None, :]).",
    )
    def _():
        C = float(rng.choice([0.5, 1.0, 10.0]))
        alpha, K, y = _near_optimum(rng, COST_N, C)
        # K is exempt: v = y − Kβ is the O(n²) part that the question sets aside
        counter = WorkCounter(COST_N, max_steps=STEPS_PER_VARIABLE * COST_N + 10_000, exempt=(K,))
        counted_call(
            c,
            counter.wrap(alpha, K, y, C),
            counter,
            f"your function took more than {counter.max_steps:,} Python steps on "
            f"{COST_N:,} variables (stopped there): a loop over the partners inside a loop "
            "over the variables is O(n²)",
        )
        assert counter.vector_ops <= MAX_VECTOR_OPS, (
            f"your function ran {counter.vector_ops:,} operations on whole vectors on "
            f"{COST_N:,} variables: a vector operation inside a loop over the variables is O(n²)"
        )
        entries = counter.elements / COST_N
        assert entries <= ELEMENTS_PER_VARIABLE, (
            f"numpy went through {entries:,.0f} vector entries per variable on {COST_N:,} "
            "variables: a reduction over all the variables (such as v.max(), "
            "np.maximum.reduce(v) or np.max(v, where=mask)) inside a loop over them is O(n²)"
        )
        held = counter.peak_bytes / COST_N
        assert held <= BYTES_PER_VARIABLE, (
            f"your function held {held:,.0f} bytes per variable at once on {COST_N:,} "
            "variables: an n × n array"
        )

    c.finish()
