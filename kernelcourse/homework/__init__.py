"""Homework: self-checks for students, and the release of starters with nbgrader.

* ``from kernelcourse.homework import check; check.hw1.q2(my_fn)`` tests a student's function
  (see :mod:`kernelcourse.homework.check`). No module here holds a solution.
* ``python -m kernelcourse.homework release`` (``make homework``) runs nbgrader's
  ``generate_assignment`` on the instructor's solution notebooks and writes the starters (see
  :mod:`kernelcourse.homework.release`; needs the ``instructor`` extra).
"""

from . import check

__all__ = ["check"]
