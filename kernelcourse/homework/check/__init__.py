"""Self-checks students run on their own functions: ``check.hw1.q2(my_fn)``.

Each check calls the student's function on fresh random inputs (pass ``seed=`` to repeat a run)
and tests properties that only a correct answer has: an optimality condition (a vanishing
gradient, the KKT conditions), agreement of two forms of one quantity, an invariance, a
distribution, or rounded summaries of the expected output for a fixed seeded input. No check
holds a solution, and no message shows an expected value; the points come from nbgrader's
hidden tests in the instructor's notebooks, which the package does not contain.

While the student's function runs, calls into ``kernelcourse`` itself (and into library
routines that would answer the question in one call) are recorded, and such a function fails:
the package is there to compare with, outside the function.

A function that changes an array it was handed fails too (the check restores the array), and a
crash says whose code crashed: the student's function, or the check on what the function
returned.

Each check prints one line per test, ``[pass]`` or ``[FAIL]`` with what differed and a hint.

Contract: a check returns ``None`` when every test passed and raises ``AssertionError`` naming the
failed tests otherwise, so a check in a notebook cell stops the run like an ``assert`` (which is
also how nbgrader's autograder counts a failed test cell). A ``NotImplementedError`` from a
starter stub is passed through unchanged.
"""

from . import hw1, hw2, hw3, hw4, hw5, hw6, hw7, hw8, hw9, hw10

__all__ = ["hw1", "hw2", "hw3", "hw4", "hw5", "hw6", "hw7", "hw8", "hw9", "hw10"]
