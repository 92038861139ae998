"""Self-checks fed deliberately wrong answers: a wrong answer gets a ``[FAIL]`` line that says what
is wrong with it and an AssertionError, never numpy's message alone, a warning from the check's
own code, or a pass. Correct answers (the solution notebooks' functions) still pass."""

import numpy as np
import pytest
from test_homework import CALLS, _solution_functions

from kernelcourse.homework import check
from kernelcourse.homework.check._core import SelfCheck, as_numbers, close

SOLUTION = {(hw, q): (path, name) for path, hw, q, name in CALLS}


def _solution(hw, q):
    path, name = SOLUTION[(hw, q)]
    return _solution_functions(path)[name]


def _run(hw, q, fn, capsys, seed=0):
    """Run check ``hw.q`` on ``fn``; it must fail. Returns what it printed."""
    with pytest.raises(AssertionError, match=rf"{hw}\.{q}: \d+ of \d+ checks failed"):
        getattr(getattr(check, hw), q)(fn, seed=seed)
    out = capsys.readouterr().out
    assert "[FAIL]" in out and "hint:" in out
    return out


# -- the machinery -----------------------------------------------------------------------------
def test_close_names_a_result_that_is_not_numbers():
    with pytest.raises(AssertionError, match="the points is None: does your function end"):
        close(None, np.zeros(3), what="the points")
    with pytest.raises(AssertionError, match=r"Z is not an array of numbers \(got str\)"):
        close("abc", np.zeros(3), what="Z")
    with pytest.raises(AssertionError, match=r"not an array of numbers \(got list\)"):
        as_numbers([[1.0, 2.0], [3.0]])  # ragged
    close([1.0, 2.0], np.array([1.0, 2.0]))  # a list of the right numbers still passes
    close(np.array([1.0, 2.0]) + 0j, np.array([1.0, 2.0]))  # as before: a zero imaginary part
    with pytest.raises(AssertionError, match="nonzero imaginary part"):
        close(np.array([1.0, 2.0]) + 1j, np.array([1.0, 2.0]))


def test_a_crash_in_the_check_on_the_returned_value_blames_the_returned_value(capsys):
    c = SelfCheck("demo.q1", lambda: None)

    @c.test("uses the result", "return an array.")
    def _():
        c.fn()[0]  # what a check does with a result it expects to index

    with pytest.raises(AssertionError):
        c.finish()
    out = capsys.readouterr().out
    assert "your function returned None: does your function end with a return?" in out
    assert "(the check raised TypeError" in out


def test_a_crash_inside_the_student_function_is_named_as_such(capsys):
    def crashes(K, tol=1e-10):
        return 1 / 0

    out = _run("hw1", "q1", crashes, capsys)
    assert "your function raised ZeroDivisionError: division by zero" in out
    assert "the check raised" not in out


def test_a_function_that_changes_its_input_fails_and_the_input_is_restored(capsys):
    K = np.eye(3)
    c = SelfCheck("demo.q1", lambda K: K.__setitem__((0, 0), 5.0))

    @c.test("leaves K alone", "copy.")
    def _():
        c.fn(K)

    with pytest.raises(AssertionError):
        c.finish()
    assert "your function changed its input K in place: work on a copy (K = K.copy())" in (
        capsys.readouterr().out
    )
    assert np.array_equal(K, np.eye(3)), "the check's own array was left changed"


# -- mutated inputs: silently passed, or failed with another test's message --------------------
def _zeroing_inputs_afterwards(fn):
    """The right answer, then every float array it was handed set to zero."""

    def wrapped(*args):
        out = fn(*args)
        for a in args:
            if isinstance(a, np.ndarray) and a.dtype.kind == "f":
                a[...] = 0.0
        return out

    return wrapped


def _shifting_inputs_first(fn):
    """Every float array it is handed shifted by one, then the right answer for those."""

    def wrapped(*args):
        for a in args:
            if isinstance(a, np.ndarray) and a.dtype.kind == "f":
                a += 1.0
        return fn(*args)

    return wrapped


@pytest.mark.parametrize(
    "hw, q, mutate",
    [
        ("hw9", "q2", _zeroing_inputs_afterwards),  # passed: Z = 0, y = 0 satisfy the KKT test
        ("hw10", "q2", _zeroing_inputs_afterwards),  # passed
        ("hw8", "q3", _shifting_inputs_first),  # passed
        ("hw8", "q2", _shifting_inputs_first),  # passed
        ("hw5", "q1", _shifting_inputs_first),  # passed
        ("hw1", "q3", _zeroing_inputs_afterwards),  # a RuntimeWarning from the check's code
        ("hw4", "q3", _zeroing_inputs_afterwards),  # "max() arg is an empty sequence"
        ("hw2", "q1", _zeroing_inputs_afterwards),  # "LinAlgError: Singular matrix"
    ],
)
def test_a_function_that_changes_its_inputs_fails_saying_so(hw, q, mutate, capsys):
    out = _run(hw, q, mutate(_solution(hw, q)), capsys)
    assert "in place: work on a copy" in out
    assert "the check raised" not in out


# -- outputs the checks could not read ---------------------------------------------------------
def test_hw3_q1_nan_points_fail_without_a_warning(capsys):
    solution = _solution("hw3", "q1")

    def nan_points(n, d, rng):
        U = np.asarray(solution(n, d, rng), dtype=float)
        U[0, 0] = np.nan
        return U

    out = _run("hw3", "q1", nan_points, capsys)
    assert "some coordinate is NaN or outside [0, 1)" in out
    assert "RuntimeWarning" not in out and "the check raised" not in out


def test_hw3_q1_a_transposed_result_names_its_shape(capsys):
    solution = _solution("hw3", "q1")
    out = _run("hw3", "q1", lambda n, d, rng: np.asarray(solution(n, d, rng)).T, capsys)
    assert "got shape (2, 3) for n = 3, d = 2" in out
    assert "IndexError" not in out


def test_hw4_q4_wants_the_triple(capsys):
    """A bare α was read as the triple: α[0] checked as α ("shape ()"), α[1] as the count."""
    solution = _solution("hw4", "q4")
    out = _run("hw4", "q4", lambda *args: solution(*args)[0], capsys)
    assert out.count("return the triple (alpha, n_kernel, n_steps)") == 3
    assert "shape ()" not in out


def test_hw4_q1_none_asks_for_the_triple(capsys):
    out = _run("hw4", "q1", lambda alpha, K, y, C: None, capsys)
    assert "return the triple (dual objective, duality gap, b)" in out


@pytest.mark.parametrize(
    "bad, message",
    [
        (lambda c: np.full(c.shape, np.nan), "not a whole number"),  # an IndexError from numpy
        (lambda c: c + 0.5, "not a whole number"),
        (lambda c: c + 100, "a coordinate outside"),  # an IndexError from numpy
        (lambda c: -c - 1, "a coordinate outside"),  # "'list' argument must have no negative"
    ],
)
def test_hw9_q1_bad_coordinates_are_named(bad, message, capsys):
    solution = _solution("hw9", "q1")

    def wrong(X, q, low, high, rng):
        Z, coords, thresholds = solution(X, q, low, high, rng)
        return Z, bad(np.asarray(coords, dtype=float)), thresholds

    out = _run("hw9", "q1", wrong, capsys)
    assert message in out
    assert "the check raised" not in out


def test_hw9_q1_float_coordinates_that_are_whole_numbers_still_pass(capsys):
    solution = _solution("hw9", "q1")

    def float_coords(X, q, low, high, rng):
        Z, coords, thresholds = solution(X, q, low, high, rng)
        return Z, np.asarray(coords, dtype=float), thresholds

    assert check.hw9.q1(float_coords, seed=0) is None


@pytest.mark.parametrize(
    "bad",
    [lambda i: i.astype(float) + 0.5, lambda i: np.full(i.shape, np.nan), lambda i: i + 10**6],
)
def test_hw8_q3_bad_indices_are_named(bad, capsys):
    solution = _solution("hw8", "q3")

    def wrong(kernel, candidates, m):
        indices, p_max = solution(kernel, candidates, m)
        return bad(np.asarray(indices)), p_max

    out = _run("hw8", "q3", wrong, capsys)
    assert "not a row number" in out
    assert "IndexError" not in out


# -- generic wrong answers for every check -----------------------------------------------------
KEYS = sorted(SOLUTION)


@pytest.mark.parametrize("key", KEYS, ids=[f"{hw}.{q}" for hw, q in KEYS])
@pytest.mark.parametrize(
    "wrong",
    [lambda *a, **k: None, lambda *a, **k: "abc", lambda *a, **k: 0],
    ids=["None", "str", "int"],
)
def test_a_value_of_the_wrong_kind_fails_with_a_readable_message(key, wrong, capsys):
    """The function returned; a crash is the check's, on that value, and says so."""
    hw, q = key
    out = _run(hw, q, wrong, capsys)
    assert "your function raised" not in out
    for line in out.splitlines():
        if "raised" in line:  # a crash in the check's code says what was returned
            assert "your function returned" in line, line


@pytest.mark.parametrize("key", KEYS, ids=[f"{hw}.{q}" for hw, q in KEYS])
def test_the_solution_passes_with_another_seed(key, capsys):
    hw, q = key
    assert getattr(getattr(check, hw), q)(_solution(hw, q), seed=12345) is None


def test_interrupting_a_slow_function_stops_the_check_and_restores_its_state():
    """The checks set no time limit: a function that never returns is stopped with the kernel's
    interrupt, which passes through (it is no failed test), with the profiler and the check's
    arrays restored."""
    import sys

    K = np.eye(3)

    def endless(K):
        K[0, 0] = 2.0
        raise KeyboardInterrupt  # where the interrupt would land in a loop

    c = SelfCheck("demo.q1", endless)
    profiler = sys.getprofile()
    with pytest.raises(KeyboardInterrupt):

        @c.test("runs", "return.")
        def _():
            c.fn(K)

    assert sys.getprofile() is profiler
    assert np.array_equal(K, np.eye(3))


def _transposed(fn):
    return lambda *args: np.asarray(fn(*args)).T


def _first_two(fn):
    return lambda *args: np.asarray(fn(*args))[:2]


def _as_row(fn):
    return lambda *args: np.asarray(fn(*args))[None]


@pytest.mark.parametrize(
    "hw, q, wrong, message",
    [
        # numpy's "operands could not be broadcast together" or "matmul: ... mismatch"
        ("hw3", "q2", _transposed, "got shape (32, 7) for n = 7, D = 16"),
        ("hw3", "q2", _as_row, "expected (n, 2D)"),
        # "boolean index did not match indexed array"
        ("hw4", "q2", _first_two, "the new α has shape (2,), expected (20,)"),
        ("hw7", "q3", _as_row, "w has shape (1, 12), expected (12,) like w0"),
        ("hw8", "q2", _first_two, "got shape (2,) for 50 points"),
    ],
)
def test_a_result_of_the_wrong_shape_is_named(hw, q, wrong, message, capsys):
    out = _run(hw, q, wrong(_solution(hw, q)), capsys)
    assert message in out
    assert "the check raised" not in out
    assert not any(numpy in out for numpy in ("broadcast", "matmul", "IndexError")), out


def test_hw6_q1_widths_in_an_object_array_are_read_as_numbers(capsys):
    """An object array of floats holds the right widths; np.isfinite raised on it."""
    solution = _solution("hw6", "q1")
    fn = lambda size, gamma, rng: np.asarray(solution(size, gamma, rng)).astype(object)  # noqa: E731
    assert check.hw6.q1(fn, seed=0) is None


def test_an_assert_inside_the_student_function_is_named_as_its_own(capsys):
    def asserts(K, tol=1e-10):
        assert K.shape[0] > 100, "my own assumption"

    out = _run("hw1", "q1", asserts, capsys)
    assert "your function raised AssertionError: my own assumption" in out


def test_hw2_q2_a_function_that_empties_the_list_of_folds_fails(capsys):
    """The check reads its list of folds after the call: popped folds were never compared."""
    solution = _solution("hw2", "q2")

    def pops(K, y, lams, folds):
        E = solution(K, y, lams, folds)
        del folds[1:]
        return E

    out = _run("hw2", "q2", pops, capsys)
    assert "your function changed its input folds in place" in out


def test_hw4_q4_a_pair_or_a_wrong_count_fails(capsys):
    """(alpha, n_kernel) passed the self-check but cannot be unpacked into the triple; a count
    that is not 2n per step without shrinking passed it too."""
    solution = _solution("hw4", "q4")
    out = _run("hw4", "q4", lambda *args, **kw: solution(*args, **kw)[:2], capsys)
    assert out.count("return the triple (alpha, n_kernel, n_steps), not 2 values") == 4

    def halves(*args, **kw):
        alpha, n_kernel, n_steps = solution(*args, **kw)
        return alpha, n_kernel // 2, n_steps

    out = _run("hw4", "q4", halves, capsys)
    assert "each step reads two whole rows, 2n = 60 values" in out


def test_hw10_a_walk_through_unequal_labels_fails(capsys):
    """Masking only the walks' ends (q1) or only the constant term (q2) passed every other
    property: symmetry, renumbering, λ = 0, a PSD Gram matrix, growth with λ."""

    def ends_masked(A1, labels1, A2, labels2, lam):
        m = (labels1[:, None] == labels2[None, :]).ravel().astype(float)
        return float(m @ np.linalg.solve(np.eye(len(m)) - lam * np.kron(A1, A2), m))

    def constant_masked(A1, labels1, A2, labels2, lam, tol):
        mask = (labels1[:, None] == labels2[None, :]).astype(float)
        X, n_iter = mask, 0
        while n_iter < 10_000:
            X, X_old, n_iter = mask + lam * (A1 @ X @ A2.T), X, n_iter + 1
            if np.max(np.abs(X - X_old)) <= tol:
                break
        return float(X.sum()), n_iter

    for q, wrong in (("q1", ends_masked), ("q2", constant_masked)):
        out = _run("hw10", q, wrong, capsys)
        assert "[FAIL] walks match labels at every step" in out


def test_hw8_q3_a_constant_p_max_fails(capsys):
    """Any distinct indices with p_max = max √K(x, x) at every step passed: it is right at
    step 0, bounds every error and never grows."""

    def constant(kernel, candidates, m):
        return np.arange(m), np.full(m, np.sqrt(kernel.diag(candidates).max()))

    out = _run("hw8", "q3", constant, capsys)
    assert "exceeds the largest power function" in out
