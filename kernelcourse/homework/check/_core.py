"""The machinery behind the self-checks: run named tests, print a report, fail loudly.

Two rules keep the checks honest without shipping an answer:

* A check verifies a property of the student's result (an optimality condition, agreement of
  two forms, an invariance, a distribution) or compares it with a :class:`Fingerprint`: a few
  rounded summaries of the expected output for a fixed seeded input, which reveal no formula.
* While the student's function runs, :class:`PackageGuard` records every call into
  ``kernelcourse`` and into the third-party routines that would answer the question (e.g.
  ``sklearn.svm`` for SMO). A function that lets the package do the work fails every test of
  its check, with a message naming what it called. The checks' own helpers count as package
  code too, since some of them compute what a question asks (a student can read them); only
  the callbacks a check hands to the student's function, marked with :func:`handed`, and this
  module's machinery may run.

A check also reads every answer as a student might get it wrong: :func:`unchanged_arguments`
fails a function that changes the arrays it is handed, :func:`as_numbers` names a result that is
not an array of numbers, and a crash in the check's own code on a returned value is reported as
that value's fault, not as numpy's message alone.
"""

from __future__ import annotations

import contextlib
import inspect
import math
import sys
import threading
import tracemalloc

import numpy as np

__all__ = [
    "SelfCheck",
    "ProfileHook",
    "PackageGuard",
    "Fingerprint",
    "fresh_rng",
    "close",
    "as_numbers",
    "unchanged_arguments",
    "handed",
]

#: Code that a student's function may not call while it is being checked...
PACKAGE = "kernelcourse"
#: ...except this machinery (the guards' own exits run inside the block) and the callbacks
#: marked with :func:`handed`.
ALLOWED = (__name__,)
#: Code objects of the callbacks that checks hand to the students' functions.
_HANDED = set()


def handed(fn):
    """Mark ``fn`` (a function, lambda or method) as a callback a check hands to the student's
    function: the guard lets it, and whatever it calls, run. Returns ``fn``."""
    _HANDED.add(fn.__code__)
    return fn


def peak_bytes(call):
    """``(call(), the most memory it held at once beyond what was in use before)``, by
    tracemalloc, left as it was found (running or not)."""
    tracing = tracemalloc.is_tracing()
    if not tracing:
        tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    try:
        out = call()
        return out, tracemalloc.get_traced_memory()[1] - base
    finally:
        if not tracing:
            tracemalloc.stop()


def fresh_rng(seed):
    """A generator for the test inputs: fresh entropy by default, fixed when ``seed`` is given."""
    return np.random.default_rng(seed)


def close(got, want, *, rtol=1e-6, atol=1e-8, what="result"):
    """Assert that ``got`` has ``want``'s shape and values.

    The message says how large the error is and where, never the expected value: a student who
    reads it learns that a property failed, not the answer.
    """
    got = as_numbers(got, what)
    want = np.asarray(want)
    if got.shape != want.shape:
        raise AssertionError(f"{what} has shape {got.shape}, expected {want.shape}")
    if not np.all(np.isfinite(got)):
        raise AssertionError(f"{what} contains NaN or infinity")
    err = np.abs(got - want)
    bound = atol + rtol * np.abs(want)
    if np.any(err > bound):
        worst = np.unravel_index(np.argmax(err - bound), err.shape)
        raise AssertionError(
            f"{what} is off: largest error {float(err.max()):.3g} "
            f"(at index {tuple(int(i) for i in worst)})"
        )


def as_numbers(got, what="result"):
    """``got`` as a float array, or an AssertionError that names what it was instead.

    Without it a None, a string or a ragged list reaches numpy, whose message (``ufunc
    'isfinite' not supported``) says nothing about the student's answer.
    """
    if got is None:
        raise AssertionError(f"{what} is None: does your function end with a return?")
    not_numbers = AssertionError(f"{what} is not an array of numbers (got {type(got).__name__})")
    try:
        a = np.asarray(got)
    except (TypeError, ValueError):
        raise not_numbers from None
    if np.iscomplexobj(a):  # e.g. from np.linalg.eig: fine when the imaginary part is 0
        scale = max(1.0, float(np.abs(a.real).max(initial=0.0)))
        if np.any(np.abs(a.imag) > 1e-12 * scale):
            raise AssertionError(f"{what} has a nonzero imaginary part")
        a = a.real
    try:
        return np.asarray(a, dtype=float)
    except (TypeError, ValueError):
        raise not_numbers from None


def _arrays_in(args, kwargs, names):
    """``(name, array)`` for every numpy array among the arguments, and in lists or tuples of
    them (the folds of homework 2)."""
    found = []
    for name, value in [*zip(names, args, strict=False), *kwargs.items()]:
        if isinstance(value, np.ndarray):
            found.append((name, value))
        elif isinstance(value, list | tuple):
            found.extend(
                (f"{name}[{i}]", v) for i, v in enumerate(value) if isinstance(v, np.ndarray)
            )
    return found


def _argument_names(fn, n):
    """The names of ``fn``'s first ``n`` positional parameters, as far as they can be read."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        params = []
    names = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return names[:n] + [f"argument {i + 1}" for i in range(len(names), n)]


@contextlib.contextmanager
def unchanged_arguments(fn, args, kwargs):
    """Run the block (a call of the student's ``fn``), then fail if it changed an array it was
    handed: the check reuses its inputs, so a change would make later tests fail for another
    reason or pass by accident. The arrays are restored either way. An exception from the
    block is marked as the student's (see :meth:`SelfCheck.test`)."""
    names = _argument_names(fn, len(args))
    arrays = _arrays_in(args, kwargs, names)
    before = [a.copy() for _, a in arrays]
    # a list (the folds of homework 2) could lose or gain items, which the check then misses
    lists = [
        (name, v, list(v))
        for name, v in [*zip(names, args, strict=False), *kwargs.items()]
        if isinstance(v, list)
    ]
    try:
        yield
    except Exception as err:
        err.raised_in_student_code = True
        raise
    finally:
        changed = [
            name
            for name, v, items in lists
            if len(v) != len(items) or any(x is not y for x, y in zip(v, items, strict=False))
        ]
        for _, v, items in lists:
            v[:] = items
        changed += [
            name
            for (name, a), b in zip(arrays, before, strict=True)
            if a.shape != b.shape or not np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")
        ]
        for (_, a), b in zip(arrays, before, strict=True):
            if a.shape == b.shape:
                with contextlib.suppress(ValueError):  # a read-only array cannot have changed
                    a[...] = b
    if changed:
        raise AssertionError(
            f"your function changed its input {changed[0]} in place: work on a copy "
            f"({changed[0].split('[')[0]} = {changed[0].split('[')[0]}.copy()) and leave the "
            "caller's arrays as they were"
        )


class ProfileHook:
    """A ``sys.setprofile`` hook while a block runs, on this thread and on the threads
    started inside it. A hook already installed (another check's) keeps receiving every
    event, and both profile functions are restored on exit. Subclasses define
    ``_event(frame, event, arg)``."""

    def _event(self, frame, event, arg):
        raise NotImplementedError

    def _hook(self, frame, event, arg):
        if self._previous is not None:
            self._previous(frame, event, arg)
        self._event(frame, event, arg)

    def __enter__(self):
        self._previous = sys.getprofile()
        self._previous_threads = threading.getprofile()
        sys.setprofile(self._hook)
        threading.setprofile(self._hook)
        return self

    def __exit__(self, *exc):
        sys.setprofile(self._previous)
        threading.setprofile(self._previous_threads)
        return False


class PackageGuard(ProfileHook):
    """Record calls into forbidden modules while a block runs (a :class:`ProfileHook`).

    Parameters
    ----------
    forbid : tuple of str
        Module-name prefixes besides ``kernelcourse`` whose Python code may not run inside the
        block (e.g. ``"sklearn.svm"``).
    allow : tuple of str
        Module-name prefixes inside ``kernelcourse`` that may run (e.g. ``"kernelcourse.kernels"``
        where a question builds on the package's kernels).

    Attributes
    ----------
    calls : list of str
        ``module.function`` of each forbidden call entered from allowed code, in order.
    """

    def __init__(self, forbid=(), allow=()):
        self.forbid = (PACKAGE, *forbid)
        self.allow = (*ALLOWED, *allow)
        self.calls = []
        self._verdict = {}  # code object -> forbidden?
        self._depth = 0

    def _verdict_of(self, frame):
        """``"forbidden"``, ``"handed"`` (a check's callback) or None (free to run)."""
        code = frame.f_code
        if code not in self._verdict:
            module = frame.f_globals.get("__name__", "") or ""
            if code in _HANDED:
                verdict = "handed"
            elif _matches(module, self.forbid) and not _matches(module, self.allow):
                verdict = "forbidden"
            else:
                verdict = None
            self._verdict[code] = verdict
        return self._verdict[code]

    def _event(self, frame, event, arg):
        # Calls below a forbidden call or a callback are not the student's own: depth counts
        # them, and only a forbidden call entered from the student's code is recorded.
        if event == "call":
            verdict = self._verdict_of(frame)
            if verdict is not None:
                if self._depth == 0 and verdict == "forbidden":
                    module = frame.f_globals.get("__name__", "")
                    self.calls.append(f"{module}.{frame.f_code.co_qualname}")
                self._depth += 1
        elif event == "return" and self._depth and self._verdict_of(frame) is not None:
            self._depth -= 1


def _matches(module, prefixes):
    return any(module == p or module.startswith(p + ".") for p in prefixes)


class Fingerprint:
    """Rounded summaries of an array: enough to recognise it, too few to reconstruct a formula.

    The summaries are the shape and ``k`` inner products with fixed pseudo-random weights,
    each kept to ``digits`` significant digits. :meth:`check` accepts an array whose summaries
    lie within two units of the last stored digit (plus ``atol``), so round-off on another CPU
    never decides the outcome.
    """

    def __init__(self, shape, values, *, digits=4, atol=1e-9):
        self.shape = tuple(shape)
        self.values = tuple(float(v) for v in values)
        self.digits = digits
        self.atol = atol

    @staticmethod
    def summaries(a, k=3):
        a = np.asarray(a, dtype=float)
        weights = np.random.default_rng(20260).uniform(-1, 1, size=(k, a.size))
        return weights @ a.ravel()

    @classmethod
    def of(cls, a, *, k=3, digits=4):
        """The fingerprint of ``a`` (how the stored values are made)."""
        a = np.asarray(a, dtype=float)
        values = [_round_sig(v, digits) for v in cls.summaries(a, k)]
        return cls(a.shape, values, digits=digits)

    def __repr__(self):
        values = ", ".join(f"{v:.{self.digits}g}" for v in self.values)
        return f"Fingerprint({self.shape}, [{values}], digits={self.digits})"

    def check(self, got, what="result"):
        got = as_numbers(got, what)
        if got.shape != self.shape:
            raise AssertionError(f"{what} has shape {got.shape}, expected {self.shape}")
        if not np.all(np.isfinite(got)):
            raise AssertionError(f"{what} contains NaN or infinity")
        for v, want in zip(self.summaries(got, len(self.values)), self.values, strict=True):
            unit = 10.0 ** (_exponent(want) - self.digits + 1) if want else 0.0
            if abs(v - want) > 2 * unit + self.atol:
                raise AssertionError(
                    f"{what} differs from the expected values for this fixed input"
                )


_NOTHING = object()  # no call of the student's function has returned yet


def _exponent(v):
    return math.floor(math.log10(abs(v)))


def _round_sig(v, digits):
    return 0.0 if v == 0 else round(float(v), digits - 1 - _exponent(v))


class SelfCheck:
    """Collects the outcome of named tests of one question and reports them.

    Use ``test`` as a decorator: the decorated function runs at once; an ``AssertionError`` (or
    any other exception) marks the test failed and its message is shown with the hint. A
    ``NotImplementedError`` is not caught: the student's function is still a stub, and the
    notebook cell should stop there.

    Call the student's function through :attr:`fn`: it runs under a :class:`PackageGuard` and
    raises ``AssertionError`` when the function called the package's own implementation.

    Parameters
    ----------
    label : str
        ``"hw1.q2"``.
    student_fn : callable
    forbid, allow : tuple of str
        Passed to :class:`PackageGuard`.
    """

    def __init__(self, label, student_fn, *, forbid=(), allow=()):
        if not callable(student_fn):
            raise TypeError(
                f"{label} checks a function: pass the function itself (no parentheses), got "
                f"{type(student_fn).__name__}."
            )
        self.label = label
        self.student_fn = student_fn
        self.forbid = forbid
        self.allow = allow
        self.results = []  # (description, ok, message, hint)
        self.last_output = _NOTHING

    def extra_guard(self):
        """A further recording guard for what this question refuses beyond the package (a
        :class:`ProfileHook` with ``calls``), and the reason shown; ``(None, "")`` here."""
        return None, ""

    def fn(self, *args, **kwargs):
        """Call the student's function under the guard (and :meth:`extra_guard`'s)."""
        extra, reason = self.extra_guard()
        contexts = () if extra is None else (extra,)
        out = self.guarded_call(self.student_fn, args, kwargs, *contexts)
        if extra is not None and extra.calls:
            raise AssertionError(f"your function calls {extra.calls[0]}: {reason}")
        return out

    def guarded_call(self, function, args, kwargs, *contexts):
        """``function(*args, **kwargs)``, a function of the student's (their answer, or a
        function it returned), under the package guard and any further ``contexts`` (a
        counter), failing if it changed the arrays it was handed or called what the question
        refuses."""
        guard = PackageGuard(self.forbid, self.allow)
        with contextlib.ExitStack() as stack:
            stack.enter_context(unchanged_arguments(function, args, kwargs))
            stack.enter_context(guard)
            for context in contexts:
                stack.enter_context(context)
            out = function(*args, **kwargs)
        self.last_output = out
        if guard.calls:
            raise AssertionError(
                f"your function calls {guard.calls[0]}: this question asks you to implement that "
                "yourself (kernelcourse and library solvers are for comparing, outside your "
                "function)"
            )
        return out

    def test(self, description, hint):
        def run(fn):
            try:
                fn()
            except NotImplementedError:
                raise
            except AssertionError as err:
                # the student's own assert is a crash of their code, not a failed property
                message = (
                    self._crash_message(err)
                    if getattr(err, "raised_in_student_code", False)
                    else str(err)
                )
                self.results.append((description, False, message, hint))
            except Exception as err:  # report a crash as a failure, saying whose code crashed
                self.results.append((description, False, self._crash_message(err), hint))
            else:
                self.results.append((description, True, "", hint))
            return fn

        return run

    def _crash_message(self, err):
        raised = f"raised {type(err).__name__}: {err}"
        if getattr(err, "raised_in_student_code", False):
            return f"your function {raised}"
        # The check's own code failed on what the function returned (a None, a list of the
        # wrong length, an array of the wrong shape): numpy's message alone would not say so.
        if self.last_output is None:
            got = "None: does your function end with a return?"
        elif self.last_output is _NOTHING:
            got = "a value of a type the check cannot use"
        else:
            got = f"a value of type {type(self.last_output).__name__} that the check cannot use"
        return (
            f"your function returned {got} (the check {raised}); compare the type, length and "
            "shape of what it returns with what the question asks for"
        )

    def finish(self):
        """Print one line per test; raise AssertionError naming the failures, if any."""
        failed = [r for r in self.results if not r[1]]
        for description, ok, message, hint in self.results:
            if ok:
                print(f"[pass] {description}")
            else:
                print(f"[FAIL] {description}\n       {message}\n       hint: {hint}")
        n = len(self.results)
        if failed:
            names = "; ".join(r[0] for r in failed)
            raise AssertionError(f"{self.label}: {len(failed)} of {n} checks failed ({names})")
        print(f"{self.label}: " + ("the check passed" if n == 1 else f"all {n} checks passed"))
