"""Figures reach the book as images: glued figures must carry a PNG under any backend."""

import matplotlib.pyplot as plt

from kernelcourse import plotting


def test_use_style_lets_ipython_display_figures_as_png():
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
    try:
        before, _ = shell.display_formatter.format(fig)
        plotting.use_style()
        after, _ = shell.display_formatter.format(fig)
    finally:
        plt.close(fig)
        InteractiveShell.clear_instance()
    # Under the Agg backend (as `make` runs the kernels) IPython alone keeps only text.
    assert "image/png" not in before
    assert isinstance(after["image/png"], str) and after["image/png"].startswith("iVBOR")
