"""pytest plugin for the book's strict nbval run (``-p tests.nbval_plugin`` in the Makefile).

Strict nbval compares every text, HTML, Markdown and glued output of every cell. Two things
change here, and nothing else:

* **Numbers match to their printed precision.** Low-order bits of BLAS, LAPACK and compiled
  loops differ between CPUs, so a number printed as ``0.00769`` on one machine may honestly be
  ``0.0077`` on another. Each stored output is compared with the computed one by
  :func:`kernelcourse.book.notebooks.first_difference`: the text between numbers must be identical
  (runs of spaces count as one), and each number must agree to one unit of its last printed
  digit (full-precision floats, as glue stores them, to a relative 1e-9).
* **Images are not compared**, glued ones included: pixels depend on the renderer, not on what
  the code computes. nbval already skips ``image/png``; a figure glued with ``myst_nb.glue`` is
  stored under ``application/papermill.record/image/png``, skipped here too.
"""

import os
from collections import defaultdict

from nbval.plugin import IPyNbCell, IPyNbFile, _trim_base64, transform_streams_for_comparison

from kernelcourse.book.notebooks import KERNEL_ENV, first_difference

# Same kernel environment as `make notebooks`, whatever the caller's shell exports.
os.environ.update(KERNEL_ENV)

GLUED_IMAGES = tuple(
    f"application/papermill.record/{mime}"
    for mime in ("image/png", "image/jpeg", "image/svg+xml", "application/pdf")
)


def pytest_collectstart(collector):
    if isinstance(collector, IPyNbFile):
        collector.skip_compare = tuple(collector.skip_compare) + GLUED_IMAGES


def _flatten(cell, outputs, skip):
    """{key: [sanitized values]} as nbval builds it: MIME types of ``data`` flattened out."""
    flat = defaultdict(list)
    for out in transform_streams_for_comparison(outputs):
        for key, value in out.items():
            if key in skip:
                continue
            if key == "data":
                for mime, content in value.items():
                    if mime not in skip:
                        flat[mime].append(cell.sanitize(content))
            else:
                flat[key].append(cell.sanitize(value))
    return flat


def compare_outputs(self, test, ref, skip_compare=None):
    """nbval's comparison, with numbers compared to their printed precision."""
    skip = skip_compare or self.parent.skip_compare
    new, stored = _flatten(self, test, skip), _flatten(self, ref, skip)
    self.comparison_traceback = []
    if set(stored) != set(new):
        missing, extra = set(stored) - set(new), set(new) - set(stored)
        self.comparison_traceback.append(
            f"output fields differ: missing {sorted(missing)}, unexpected {sorted(extra)}"
        )
        return False
    for key, stored_values in stored.items():
        new_values = new[key]
        if len(new_values) != len(stored_values):
            self.comparison_traceback.append(
                f"{len(stored_values)} stored outputs of {key!r} but {len(new_values)} computed"
                f"\n  stored:   {[_trim_base64(v) for v in stored_values]}"
                f"\n  computed: {[_trim_base64(v) for v in new_values]}"
            )
            return False
        for ref_out, test_out in zip(stored_values, new_values, strict=True):
            reason = first_difference(ref_out, test_out)
            if reason is not None:
                self.comparison_traceback.append(f"{key}: {reason}")
                self.format_output_compare(key, ref_out, test_out)
                return False
    return True


IPyNbCell.compare_outputs = compare_outputs
