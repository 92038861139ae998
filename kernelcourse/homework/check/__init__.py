"""Self-checks students run on their own functions: ``check.hw1.q2(my_fn)``.

Each check calls the student's function on fresh random inputs (pass ``seed=`` to repeat a run),
compares with a reference (:mod:`kernelcourse.kernels`, :mod:`kernelcourse.features`,
:mod:`kernelcourse.bounds`, :mod:`kernelcourse.svm`, or the
formulas in :mod:`kernelcourse.homework._reference`), and prints one line per test:
``[pass]`` or ``[FAIL]`` with what differed and a hint.

Contract: a check returns ``None`` when every test passed and raises ``AssertionError`` naming the
failed tests otherwise, so a check in a notebook cell stops the run like an ``assert`` (which is
also how nbgrader's autograder counts a failed test cell). A ``NotImplementedError`` from a
starter stub is passed through unchanged.
"""

from . import hw1, hw2, hw3, hw4, hw5

__all__ = ["hw1", "hw2", "hw3", "hw4", "hw5"]
