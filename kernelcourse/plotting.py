"""Figure helpers for the book, so every chapter's figures share one style."""

from __future__ import annotations

import numpy as np

__all__ = ["use_style", "new_figure", "loglog_with_slopes", "fit_loglog_slope"]

_STYLE = {
    "figure.figsize": (6.4, 4.0),
    "figure.dpi": 100,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.titlesize": 11,
    "axes.labelsize": 10,
    "legend.fontsize": 9,
    "legend.frameon": False,
    "image.cmap": "viridis",
    "savefig.bbox": "tight",
}


def use_style():
    """Apply the book's matplotlib style (call once at the top of a chapter).

    Inside a Jupyter kernel it also makes figures display as PNG at twice their size in pixels
    (IPython's ``retina`` format, with the logical size in the output's metadata), so they stay
    sharp on high-density screens and at any zoom, in Jupyter and in the book alike. A figure
    is an ordinary cell output; the book numbers and captions it from the cell's
    ``mystnb.figure`` metadata.
    """
    import matplotlib.pyplot as plt

    plt.rcParams.update(_STYLE)
    _display_figures_sharp()


def _display_figures_sharp():
    try:
        from IPython import get_ipython
        from IPython.core.pylabtools import select_figure_formats
    except ImportError:  # IPython is not installed: there is no notebook to display in
        return
    shell = get_ipython()
    if shell is None:
        return
    try:
        # The inline backend re-selects its configured formats when pyplot first draws; make
        # that selection retina too, not only the current one.
        from matplotlib_inline.config import InlineBackend

        InlineBackend.instance().figure_formats = {"retina"}
    except ImportError:  # another frontend's backend: the formatter below is all there is
        pass
    select_figure_formats(shell, {"retina"})


def new_figure(ncols=1, nrows=1, *, width=None, height=None, **kwargs):
    """A figure and axes in the book's style, sized by the number of panels."""
    import matplotlib.pyplot as plt

    use_style()
    w = width if width is not None else 4.2 * ncols + 0.6
    h = height if height is not None else 3.4 * nrows + 0.4
    return plt.subplots(nrows, ncols, figsize=(w, h), **kwargs)


def fit_loglog_slope(x, y):
    """Least-squares slope of log y against log x: the measured exponent of a power law."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.shape != y.shape or x.ndim != 1 or len(x) < 2:
        raise ValueError("x and y must be 1-D arrays of the same length >= 2.")
    if np.any(x <= 0) or np.any(y <= 0):
        raise ValueError("x and y must be positive to fit a slope on log axes.")
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])


def loglog_with_slopes(ax, x, y, *, label, reference_slope=None, marker="o"):
    """Plot y against x on log axes with the fitted slope in the legend, and optionally the
    reference power law x^reference_slope through the last point (a big-O guide line)."""
    slope = fit_loglog_slope(x, y)
    ax.loglog(x, y, marker=marker, label=f"{label} (slope {slope:.2f})")
    if reference_slope is not None:
        x = np.asarray(x, dtype=float)
        ref = y[-1] * (x / x[-1]) ** reference_slope
        ax.loglog(x, ref, ls="--", color="gray", lw=1, label=f"slope {reference_slope:g}")
    return slope
