"""Figures reach Jupyter and the book as sharp images under any backend."""

import matplotlib.pyplot as plt

from kernelcourse.book import plotting


def test_use_style_displays_figures_as_double_resolution_png():
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
    try:
        before, _ = shell.display_formatter.format(fig)
        plotting.use_style()
        after, meta = shell.display_formatter.format(fig)
    finally:
        plt.close(fig)
        InteractiveShell.clear_instance()
    # Under the Agg backend (as `make` runs the kernels) IPython alone keeps only text.
    assert "image/png" not in before
    assert isinstance(after["image/png"], str) and after["image/png"].startswith("iVBOR")
    # twice the pixels of the logical size given in the metadata
    import base64
    import struct

    png = base64.b64decode(after["image/png"])
    width_px = struct.unpack(">I", png[16:20])[0]
    assert width_px >= 2 * meta["image/png"]["width"] - 2
