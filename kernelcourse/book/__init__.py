"""The course book's own machinery, apart from the library.

``plotting``
    One figure style for every chapter (sizes, fonts, colours, log-axis ticks).
``report``
    Tables and prose with computed numbers, in the forms nbval compares.
``notebooks``
    Re-execution of the chapters in place (``python -m kernelcourse.book.notebooks execute
    book``) and the printed-precision rule that compares their outputs.

These need the ``notebooks`` extra (matplotlib, pandas, nbformat, nbclient); the estimators of
:mod:`kernelcourse` never import them.
"""

__all__ = ["notebooks", "plotting", "report"]
