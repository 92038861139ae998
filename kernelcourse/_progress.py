"""Progress lines for fits that run long: the ``verbose`` parameter of the iterative estimators.

A fit on 10⁵ points can take minutes (SMO steps, conjugate-gradient passes over the data, SGD
blocks), and a silent minute looks like a hang. Every iterative loop in the package therefore
asks a :class:`Progress` at its natural report points (every 64 SMO steps, each CG iteration,
each pass block, each SGD block or DCD epoch) whether a line is due; the check is one clock
read, so it costs nothing measurable next to a step.

``verbose`` follows scikit-learn's integers, with one default of its own:

* ``None`` (default): quiet for short fits. Only a fit still running after
  :data:`AFTER` seconds (30) reports, then every :data:`EVERY` seconds, and once more when it
  ends. No fit in the book comes near that, so notebooks see nothing.
* ``0`` or ``False``: never a line.
* ``1`` or ``True``: a line at most every :data:`VERBOSE_EVERY` second from the start, and a
  last one at the end (like scikit-learn's ``verbose=1``, or LIBSVM's progress dots).
* ``2`` and more: a line at every report point.

Where the lines go. Asked-for lines (``verbose >= 1``) are printed to standard output, as
scikit-learn's and LIBSVM's are. The unasked-for ones of the default go to standard error,
beside warnings, so that a program's standard output stays its results. They are neither
warnings nor log records on purpose: the warnings filter shows a message from one place only
once (so periodic progress would be swallowed) and ``-W error`` would turn a slow fit into a
failure; and a library's logger has no handler until the application configures logging, so
the default would stay as silent as before. ``verbose=0`` silences them.

The environment variable ``KERNELCOURSE_PROGRESS_AFTER`` (seconds, ``inf`` for never) moves
the default's threshold for a whole process. The book's kernels set it to ``inf``
(:data:`kernelcourse.book.notebooks.KERNEL_ENV`): their committed outputs are compared as text,
and whether a fit passes 30 s depends on the machine's load, like the wall-clock timings the
comparison masks.
"""

from __future__ import annotations

import math
import os
import sys
import time

__all__ = ["Progress", "AFTER", "EVERY", "VERBOSE_EVERY"]

AFTER = 30.0  # seconds before the default (verbose=None) says anything
EVERY = 30.0  # seconds between the default's lines
VERBOSE_EVERY = 1.0  # seconds between lines at verbose=1


def _after():
    """The default's threshold: ``KERNELCOURSE_PROGRESS_AFTER`` if set, else :data:`AFTER`."""
    value = os.environ.get("KERNELCOURSE_PROGRESS_AFTER")
    if value is None:
        return AFTER
    try:
        after = float(value)
    except ValueError:
        after = math.nan
    if not after >= 0:
        raise ValueError(
            f"KERNELCOURSE_PROGRESS_AFTER must be a number of seconds >= 0 (or inf), got {value!r}."
        )
    return after


def clock():
    """The clock progress is measured with (a module attribute, so tests can replace it)."""
    return time.monotonic()


class Progress:
    """Decides when a long-running loop reports, and writes the line.

    Parameters
    ----------
    task : str
        What runs, e.g. ``"KernelSVC.fit"``; it starts every line.
    verbose : None, bool or int >= 0
        See the module docstring.

    A loop calls :meth:`due` at each report point and, when it returns True,
    :meth:`report` with the iteration count and the quantity that converges; :meth:`finish`
    writes the closing line when any line was written (or at ``verbose >= 1``). A Progress
    with ``verbose=0`` is false, so ``if progress and progress.due()`` skips even the clock.
    """

    def __init__(self, task, verbose=None):
        self.task = task
        self.verbose = verbose
        self.lines = 0
        if verbose is None:
            self._interval, self._file = EVERY, "stderr"
        elif verbose >= 2:
            self._interval, self._file = 0.0, "stdout"
        elif verbose:
            self._interval, self._file = VERBOSE_EVERY, "stdout"
        else:
            self._interval, self._file = None, None
        self._start = clock()
        # the default's first line comes AFTER seconds in; verbose=1 and 2 start at once
        self._next = self._start + (_after() if verbose is None else 0.0)

    def __bool__(self):
        return self._interval is not None

    def due(self):
        """Whether a line is due now (one clock read)."""
        return self._interval is not None and clock() >= self._next

    def report(self, text):
        """Write ``[task, elapsed] text`` and schedule the next line."""
        now = clock()
        self._next = now + self._interval
        self.lines += 1
        file = sys.stderr if self._file == "stderr" else sys.stdout
        print(f"[{self.task}, {now - self._start:.0f} s] {text}", file=file, flush=True)

    def finish(self, text):
        """The closing line, written when the fit reported before (or at ``verbose >= 1``)."""
        if self._interval is not None and (self.lines or self.verbose):
            self.report(text)
