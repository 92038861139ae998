"""pytest plugin for the package's doctests (``-p tests.doctest_plugin`` in ``make doctest``).

An Examples section prints numbers that low-order bits of BLAS or LAPACK may move on another
CPU. Its expected output is compared as the notebooks' outputs are, by
:func:`kernelcourse.book.notebooks.first_difference`: the text between numbers must be
identical (runs of spaces count as one), and each number must agree to one unit of its last
printed digit. pytest's own ``NUMBER`` flag is close but rejects a difference of exactly one
unit when the float subtraction rounds up, so it is not used.
"""

import doctest

import _pytest.doctest

from kernelcourse.book.notebooks import first_difference


class PrintedPrecisionChecker(doctest.OutputChecker):
    def check_output(self, want, got, optionflags):
        if super().check_output(want, got, optionflags):
            return True
        return first_difference(want.rstrip("\n"), got.rstrip("\n")) is None


def _get_checker():
    return PrintedPrecisionChecker()


# pytest builds every doctest runner with _get_checker(); one checker for all of them.
_pytest.doctest._get_checker = _get_checker
