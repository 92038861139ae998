"""pytest plugin for the book's strict nbval run (``-p tests.nbval_plugin`` in the Makefile).

nbval does not compare ``image/png`` outputs: pixels depend on the renderer, not on what the
code computes. A figure glued with ``myst_nb.glue`` is stored under
``application/papermill.record/image/png`` instead, which nbval would compare byte for byte;
treat it like every other image. The glued *values* (``.../text/plain``) are still compared.
"""

import os

from nbval.plugin import IPyNbFile

from kernelcourse.notebooks import KERNEL_ENV

# Same kernel environment as `make notebooks`, whatever the caller's shell exports.
os.environ.update(KERNEL_ENV)

GLUED_IMAGES = tuple(
    f"application/papermill.record/{mime}"
    for mime in ("image/png", "image/jpeg", "image/svg+xml", "application/pdf")
)


def pytest_collectstart(collector):
    if isinstance(collector, IPyNbFile):
        collector.skip_compare = tuple(collector.skip_compare) + GLUED_IMAGES
