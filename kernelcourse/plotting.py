"""Figure helpers for the book, so every chapter's figures share one style."""

from __future__ import annotations

import numpy as np

__all__ = [
    "use_style",
    "new_figure",
    "loglog_with_slopes",
    "fit_loglog_slope",
    "pareto_optimal",
    "accuracy_time_pareto",
]

_STYLE = {
    "figure.figsize": (6.4, 4.0),
    "figure.dpi": 90,
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

    Inside a Jupyter kernel it also lets figures be displayed as PNG whatever the matplotlib
    backend is, so that ``glue("fig-name", fig, display=False)`` stores an image for the book
    (``make`` exports ``MPLBACKEND=Agg``; with that backend IPython would keep only the text
    ``<Figure size ...>``).
    """
    import matplotlib.pyplot as plt

    plt.rcParams.update(_STYLE)
    _display_figures_as_png()


def _display_figures_as_png():
    try:
        from IPython import get_ipython
        from IPython.core.pylabtools import select_figure_formats
    except ImportError:  # IPython is not installed: there is no notebook to display in
        return
    shell = get_ipython()
    if shell is not None:
        select_figure_formats(shell, {"png"})


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


def pareto_optimal(times, accuracies):
    """Mask of the runs on the accuracy–time Pareto front: no other run is at least as fast
    and at least as accurate, and strictly better in one of the two."""
    t, a = np.asarray(times, dtype=float), np.asarray(accuracies, dtype=float)
    if t.shape != a.shape or t.ndim != 1 or len(t) == 0:
        raise ValueError("times and accuracies must be 1-D arrays of the same non-zero length.")
    if not (np.isfinite(t).all() and np.isfinite(a).all()):
        raise ValueError("times and accuracies must be finite.")
    better_or_equal = (t[None, :] <= t[:, None]) & (a[None, :] >= a[:, None])
    strictly = (t[None, :] < t[:, None]) | (a[None, :] > a[:, None])
    return ~np.any(better_or_equal & strictly, axis=1)


def accuracy_time_pareto(ax, runs, *, time_key="fit_s", labels=None, references=None):
    """Plot test accuracy against time (log axis) for benchmark runs, with their Pareto front.

    Parameters
    ----------
    ax : matplotlib Axes
    runs : list of dict
        Each with ``"method"``, ``"accuracy"`` (a fraction) and ``time_key`` (seconds), as in
        ``datasets.load_benchmark("scale_covertype")["runs"]``; runs without them (failed
        runs) are skipped.
    time_key : str, default="fit_s"
    labels : dict or None
        Display name per method (default: the method name).
    references : dict or None
        Published accuracies (fractions) per label, drawn as dotted horizontal lines, e.g.
        Rahimi & Recht's.

    Returns
    -------
    ndarray of bool
        Which of the plotted runs are on the front.
    """
    kept = [r for r in runs if "accuracy" in r and time_key in r]
    if not kept:
        raise ValueError(f"no run has both 'accuracy' and {time_key!r}.")
    labels = labels or {}
    t = np.array([r[time_key] for r in kept], dtype=float)
    acc = 100 * np.array([r["accuracy"] for r in kept], dtype=float)
    front = pareto_optimal(t, acc)
    order = np.argsort(t[front])
    ax.step(
        t[front][order], acc[front][order], where="post", color="gray", lw=1, label="Pareto front"
    )
    for r, ti, ai, on in zip(kept, t, acc, front, strict=True):
        ax.plot(ti, ai, "o" if on else "s", ms=7, mfc="C0" if on else "white", mec="C0")
        ax.annotate(
            labels.get(r["method"], r["method"]),
            (ti, ai),
            xytext=(5, 4),
            textcoords="offset points",
            fontsize=8,
        )
    for name, value in (references or {}).items():
        ax.axhline(100 * value, ls=":", lw=1, color="C3")
        ax.annotate(
            name,
            (ax.get_xlim()[0], 100 * value),
            xytext=(3, 2),
            textcoords="offset points",
            fontsize=8,
            color="C3",
        )
    ax.set_xscale("log")
    ax.set_xlabel("fit time (s, log scale)" if time_key == "fit_s" else f"{time_key} (s)")
    ax.set_ylabel("test accuracy (%)")
    ax.legend(loc="lower right")
    return front
