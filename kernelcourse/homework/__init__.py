"""Homework self-checks students call on their own functions.

``from kernelcourse.homework import check; check.hw1.q2(my_fn)`` runs a student's function on
fresh random inputs and says which property failed (see :mod:`kernelcourse.homework.check`).
A check never shows an expected value or the code of an answer, and no module here holds a
solution or a graded test: the points come from nbgrader's hidden tests, which live only in
the instructor's solution notebooks (released by :mod:`kernelcourse.book.homework_release`).
"""

from . import check

__all__ = ["check"]
