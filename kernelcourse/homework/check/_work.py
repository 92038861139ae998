"""Counting the work of a student's function without a clock: lines of Python run, vector
operations, vector entries handed to numpy and memory held (:class:`WorkCounter`). The checks
of homework 1 (the ANOVA recursion's cost) and homework 4 (the shrinking rule's O(n)) use it;
``check.hw4.WorkCounter`` is the name the assignment and its hidden tests give it."""

from __future__ import annotations

import inspect
import sys
import tracemalloc

import numpy as np

from ._core import handed

__all__ = ["WorkCounter"]


class WorkCounter:
    """Count the work of the code that runs inside the block, without a clock.

    Three counts, each the same on every CPU and under any load:

    * ``steps``: the lines of Python executed (in every function called, numpy's own Python
      code included). A loop over the variables takes about n of them; a loop inside such a
      loop takes about n².
    * ``vector_ops``: the stretches of code between two steps that allocate at least one byte
      per variable (``n`` bytes), as a new mask or vector of length n does. A fixed number of
      passes over the variables makes a fixed number of them, however large n is; a vector
      operation inside a loop over the variables makes about n.
    * ``peak_bytes``: the most memory held at once beyond what was in use before the block,
      by tracemalloc (an n × n temporary shows here).
    * ``elements``: the entries of the vectors (arrays of at most one dimension) handed to
      numpy's own Python functions, such as ``np.max`` and the ``max`` method, whose work grows
      with them. A fixed number of reductions over the variables hands over a fixed multiple of
      n; a reduction over all of them inside a loop over them, about n², even when it
      allocates nothing (``np.max(v, where=mask, initial=-np.inf)``, or ``w.max()`` on a
      vector ``w`` made once before the loop).

    Parameters
    ----------
    n : int
        The number of variables: the size of a vector operation.
    max_steps : int or None
        Stop the block with :class:`WorkCounter.Exceeded` after this many steps (a loop
        inside a loop would otherwise run for a long time under the counter).
    """

    class Exceeded(Exception):
        """Raised inside the counted code when it takes more than ``max_steps`` steps."""

    def __init__(self, n, max_steps=None):
        self.n = int(n)
        self.max_steps = max_steps
        self.steps = self.vector_ops = self.peak_bytes = self.elements = 0

    # entered and left under the package guard, around the student's function
    @handed
    def __enter__(self):
        self._was_tracing = tracemalloc.is_tracing()
        if not self._was_tracing:
            tracemalloc.start()
        self._previous = sys.gettrace()
        tracemalloc.reset_peak()
        self._base = self._mark = tracemalloc.get_traced_memory()[0]
        sys.settrace(self._on_call)
        return self

    @handed
    def __exit__(self, *exc):
        sys.settrace(self._previous)
        self._stretch(step=False)
        if not self._was_tracing:
            tracemalloc.stop()
        return False

    def _on_call(self, frame, event, arg):
        module = frame.f_globals.get("__name__")
        if module in _UNCOUNTED:  # the counter and its with-block
            return None
        if isinstance(module, str) and module.startswith("numpy."):
            self.elements += _vector_entries(frame)
        self._stretch(step=True)
        return self._on_event

    def _on_event(self, frame, event, arg):
        self._stretch(step=event == "line")
        return self._on_event

    def _stretch(self, step):
        """Close the stretch of code since the last event: its memory, then the step."""
        current, peak = tracemalloc.get_traced_memory()
        if peak - self._mark >= self.n:
            self.vector_ops += 1
        self.peak_bytes = max(self.peak_bytes, peak - self._base)
        if step:
            self.steps += 1
            if self.max_steps is not None and self.steps > self.max_steps:
                raise WorkCounter.Exceeded(f"more than {self.max_steps} steps")
        tracemalloc.reset_peak()
        self._mark = tracemalloc.get_traced_memory()[0]


_UNCOUNTED = (__name__, "contextlib")


def _vector_entries(frame):
    """The entries of the arrays of at most one dimension among the arguments of ``frame``'s
    function, ``*args`` included."""
    code, local = frame.f_code, frame.f_locals
    named = code.co_argcount + code.co_kwonlyargcount
    values = [local.get(name) for name in code.co_varnames[:named]]
    if code.co_flags & inspect.CO_VARARGS:
        values += list(local.get(code.co_varnames[named], ()))
    return sum(v.size for v in values if isinstance(v, np.ndarray) and v.ndim <= 1)
