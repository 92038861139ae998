"""The course book's own machinery, apart from the library.

``plotting``
    One figure style for every chapter (sizes, fonts, colours, log-axis ticks).
``report``
    Tables and prose with computed numbers, in the forms nbval compares.
``notebooks``
    Re-execution of the chapters in place (``python -m kernelcourse.book.notebooks execute
    book``) and the printed-precision rule that compares their outputs.
``homework_release``
    The student starters released from the instructors' solutions by nbgrader's
    preprocessors (``python -m kernelcourse.book.homework_release``).
``records``
    The stored full-size benchmark records as the appendix's tables.

These need the ``notebooks`` extra (matplotlib, pandas, nbformat, nbclient); the estimators of
:mod:`kernelcourse` never import them.
"""

__all__ = ["homework_release", "notebooks", "plotting", "records", "report"]
