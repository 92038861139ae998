"""Homework: release student starters from solution notebooks, and self-checks for students.

* ``python -m kernelcourse.homework release`` (``make homework``) writes the starter notebooks of
  ``book/homework/solutions/`` into ``book/homework/`` (see :mod:`kernelcourse.homework.release`).
* ``from kernelcourse.homework import check; check.hw1.q2(my_fn)`` tests a student's function
  (see :mod:`kernelcourse.homework.check`).
"""

from . import check
from .release import release, release_notebook

__all__ = ["check", "release", "release_notebook"]
