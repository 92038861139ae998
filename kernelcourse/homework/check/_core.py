"""The machinery behind the self-checks: run named tests, print a report, fail loudly."""

from __future__ import annotations

import numpy as np

__all__ = ["SelfCheck", "fresh_rng", "close"]


def fresh_rng(seed):
    """A generator for the test inputs: fresh entropy by default, fixed when ``seed`` is given."""
    return np.random.default_rng(seed)


def close(got, want, *, rtol=1e-6, atol=1e-8, what="result"):
    """Assert that ``got`` has ``want``'s shape and values, with a message saying how it differs."""
    got = np.asarray(got)
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
            f"{what} differs from the reference: largest error {float(err.max()):.3g} "
            f"(at index {tuple(int(i) for i in worst)}: got {float(got[worst]):.6g}, "
            f"expected {float(want[worst]):.6g})"
        )


class SelfCheck:
    """Collects the outcome of named tests of one question and reports them.

    Use ``test`` as a decorator: the decorated function runs at once; an ``AssertionError`` (or
    any other exception) marks the test failed and its message is shown with the hint. A
    ``NotImplementedError`` is not caught: the student's function is still a stub, and the
    notebook cell should stop there.
    """

    def __init__(self, label, student_fn):
        if not callable(student_fn):
            raise TypeError(
                f"{label} checks a function: pass the function itself (no parentheses), got "
                f"{type(student_fn).__name__}."
            )
        self.label = label
        self.results = []  # (description, ok, message, hint)

    def test(self, description, hint):
        def run(fn):
            try:
                fn()
            except NotImplementedError:
                raise
            except AssertionError as err:
                self.results.append((description, False, str(err), hint))
            except Exception as err:  # the student's code crashed: report it as a failure
                self.results.append(
                    (description, False, f"raised {type(err).__name__}: {err}", hint)
                )
            else:
                self.results.append((description, True, "", hint))
            return fn

        return run

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
