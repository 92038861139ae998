"""Figure helpers for the book, so every chapter's figures share one style."""

from __future__ import annotations

import math
import numbers
import time

import numpy as np

__all__ = [
    "use_style",
    "new_figure",
    "loglog_with_slopes",
    "fit_loglog_slope",
    "legend_outside",
    "log_ticks",
    "warm_time",
    "pareto_optimal",
    "accuracy_time_pareto",
]

# The book's text column is about 750 px wide at a 1280 px window, and figures are drawn at
# 100 px per inch, so a figure at most COLUMN_WIDTH inches wide (plus the saved margin) is shown
# at its drawn size there. Its text is then 12 pt = 16.7 px: at least the body text's 16 px at
# 100 % zoom. On a narrower screen (a phone) the whole figure shrinks to the column; its PNG has
# twice its drawn pixels, so it stays sharp.
COLUMN_WIDTH = 6.5
_FONT = 12
_STYLE = {
    "figure.figsize": (5.0, 3.5),
    "figure.dpi": 100,
    "font.size": _FONT,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.titlesize": _FONT,
    "axes.labelsize": _FONT,
    "xtick.labelsize": _FONT,
    "ytick.labelsize": _FONT,
    "legend.fontsize": _FONT,
    "figure.titlesize": _FONT,
    "legend.frameon": False,
    "image.cmap": "viridis",
    "savefig.bbox": "tight",
    "savefig.pad_inches": 0.05,
}


def use_style():
    """Apply the book's matplotlib style (call once at the top of a chapter).

    Inside a Jupyter kernel it also makes figures display as PNG at twice their size in pixels
    (IPython's ``retina`` format, with the logical size in the output's metadata), so they stay
    sharp on high-density screens, at any zoom and when a narrow screen shrinks them, in Jupyter
    and in the book alike (the book writes the logical size as the image's width and height,
    which give way to the width of its column). A figure
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
    """A figure and axes in the book's style, sized by the number of panels.

    At most two panels side by side, and never wider than the book's column
    (``COLUMN_WIDTH`` inches), so that no figure is scaled down and its axis text stays as
    large as the body text. Stack further panels in rows.
    """
    import matplotlib.pyplot as plt

    if ncols not in (1, 2):
        raise ValueError(
            f"ncols must be 1 or 2 (panels side by side in the book's column), got {ncols!r}."
        )
    if not isinstance(nrows, numbers.Integral) or nrows < 1:
        raise ValueError(f"nrows must be a positive integer, got {nrows!r}.")
    one_w, one_h = _STYLE["figure.figsize"]  # a single panel's size
    w = width if width is not None else (one_w if ncols == 1 else COLUMN_WIDTH)
    if not w <= COLUMN_WIDTH:
        raise ValueError(
            f"width={w!r} inches is wider than the book's column ({COLUMN_WIDTH} in), so the "
            "figure would be shown scaled down; use at most two panels a row and stack the rest."
        )
    h = height if height is not None else (one_h if ncols == 1 else 3.0) * nrows + 0.3
    use_style()
    return plt.subplots(nrows, ncols, figsize=(w, h), **kwargs)


def fit_loglog_slope(x, y):
    """Least-squares slope of log y against log x: the measured exponent of a power law."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.shape != y.shape or x.ndim != 1 or len(x) < 2:
        raise ValueError("x and y must be 1-D arrays of the same length >= 2.")
    # NaN, inf or one repeated x made np.polyfit fail with "SVD did not converge"
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        raise ValueError("x and y must be finite to fit a slope on log axes.")
    if np.any(x <= 0) or np.any(y <= 0):
        raise ValueError("x and y must be positive to fit a slope on log axes.")
    if np.all(x == x[0]):
        raise ValueError(f"x must hold at least two distinct values, got only {float(x[0])!r}.")
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


# --------------------------------------------------------------------------- legends


def _renderer(fig):
    """A renderer with the figure laid out, or None where the canvas cannot give one."""
    try:
        fig.draw_without_rendering()
        return fig.canvas.get_renderer()
    except (AttributeError, NotImplementedError):
        return None


def _handles_and_labels(axes):
    """Legend entries of all ``axes``, each label once (panels usually repeat their series)."""
    seen = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            seen.setdefault(label, handle)
    return list(seen.values()), list(seen)


def legend_outside(ax_or_fig, *, where="below", ncols=None, pad=0.02, **kwargs):
    """Put the legend outside the plotting area, where it can never hide data.

    Parameters
    ----------
    ax_or_fig : matplotlib Axes or Figure
        An Axes gets its own legend; a Figure gets one legend for all its panels, each label
        once, below (or right of) the whole grid.
    where : {"below", "right"}
        Below the axes' tick labels and axis label (entries side by side), or at the right of
        the axes (entries stacked).
    ncols : int, optional
        Columns of entries; by default up to 4 below, 1 at the right.
    pad : float
        Gap between the axes' decorations and the legend, as a fraction of the axes (or
        figure) size.
    **kwargs
        Passed on to ``legend`` (``title``, ``fontsize``, ...).

    Returns
    -------
    matplotlib.legend.Legend

    Notes
    -----
    The book's figures are saved with a tight bounding box, which grows to take the legend in.
    Call it after the axes are labelled, so that the legend clears the axis label.
    """
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    if where not in ("below", "right"):
        raise ValueError(f"where must be 'below' or 'right', got {where!r}.")
    if isinstance(ax_or_fig, Axes):
        fig, axes = ax_or_fig.figure, [ax_or_fig]
    elif isinstance(ax_or_fig, Figure):
        fig, axes = ax_or_fig, [a for a in ax_or_fig.axes if a.get_visible()]
    else:
        raise TypeError(f"ax_or_fig must be a matplotlib Axes or Figure, got {type(ax_or_fig)}.")
    handles, labels = _handles_and_labels(axes)
    if not handles:
        raise ValueError("legend_outside: no labelled artist to put in a legend.")
    if ncols is None:
        ncols = min(len(handles), 4) if where == "below" else 1
    if not isinstance(ncols, numbers.Integral) or ncols < 1:
        raise ValueError(f"ncols must be a positive integer, got {ncols!r}.")

    # Where the axes' decorations (tick labels, axis labels, titles) end, in display units.
    renderer = _renderer(fig)
    if renderer is not None:
        boxes = [a.get_tightbbox(renderer) for a in axes]
        right, bottom = max(b.x1 for b in boxes), min(b.y0 for b in boxes)
    else:  # no layout available: the usual room for tick labels and an axis label
        right, bottom = None, None
    options = {"frameon": False, "ncols": ncols, "borderaxespad": 0.0, **kwargs}

    if isinstance(ax_or_fig, Axes):
        to_axes = ax_or_fig.transAxes.inverted()
        if where == "below":
            y = -0.15 if bottom is None else to_axes.transform((0, bottom))[1]
            anchor, loc = (0.5, y - pad), "upper center"
        else:
            x = 1.0 if right is None else to_axes.transform((right, 0))[0]
            anchor, loc = (x + pad, 0.5), "center left"
        return ax_or_fig.legend(handles, labels, loc=loc, bbox_to_anchor=anchor, **options)

    positions = [a.get_position() for a in axes]
    to_fig = fig.transFigure.inverted()
    if where == "below":
        middle = (min(p.x0 for p in positions) + max(p.x1 for p in positions)) / 2
        y = -0.05 if bottom is None else to_fig.transform((0, bottom))[1]
        anchor, loc = (middle, y - pad), "upper center"
    else:
        middle = (min(p.y0 for p in positions) + max(p.y1 for p in positions)) / 2
        x = 1.0 if right is None else to_fig.transform((right, 0))[0]
        anchor, loc = (x + pad, middle), "center left"
    return fig.legend(handles, labels, loc=loc, bbox_to_anchor=anchor, **options)


# --------------------------------------------------------------------------- log axes


def _plain_number(value):
    """10 000 as "10,000" and 0.001 as "0.001": no e-notation between 1e-4 and 1e6; beyond that
    a power of ten in math ("$10^{7}$")."""
    if value == 0:
        return "0"
    exponent = math.floor(math.log10(abs(value)) + 1e-9)
    if -4 <= exponent <= 5:
        decimals = max(0, -exponent + 2)
        text = f"{value:,.{decimals}f}"
        return text.rstrip("0").rstrip(".") if "." in text else text
    mantissa = value / 10**exponent
    if abs(mantissa - round(mantissa)) < 1e-9 and round(mantissa) == 1:
        return f"$10^{{{exponent}}}$"
    return f"${mantissa:.3g}\\times10^{{{exponent}}}$"


def log_ticks(ax, axis="x", *, ticks=None, base=10, minor=True):
    """Log scale with explicit, readable ticks: labelled major ticks, unlabelled minor ones.

    Parameters
    ----------
    ax : matplotlib Axes
    axis : {"x", "y", "both"}
    ticks : sequence of float, optional
        The labelled ticks. By default every power of ``base`` in view, or 1-2-5 steps when
        the data span less than about one and a half decades, or fewer than three powers of
        ``base`` are in view (so that at least two ticks carry labels).
    base : float
        Base of the logarithm (> 1).
    minor : bool
        Draw unlabelled minor ticks between the major ones (at 2..9 times a power of 10).

    Returns
    -------
    ax : matplotlib Axes

    Notes
    -----
    Matplotlib labels minor ticks of a short log axis ("3×10¹", "4×10¹", ...), and they run
    into each other. Here only the major ticks carry labels, written as plain numbers
    ("0.01", "100", "10,000") up to 10⁵ and as powers of ten beyond.
    """
    from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, NullFormatter

    if axis not in ("x", "y", "both"):
        raise ValueError(f"axis must be 'x', 'y' or 'both', got {axis!r}.")
    if not isinstance(base, numbers.Real) or not base > 1:
        raise ValueError(f"base must be a number > 1, got {base!r}.")
    if ticks is not None:
        ticks = np.asarray(ticks, dtype=float).ravel()
        if ticks.size == 0 or np.any(~np.isfinite(ticks)) or np.any(ticks <= 0):
            raise ValueError("ticks must be finite positive numbers on a log axis.")
    for name in ("x", "y") if axis == "both" else (axis,):
        target = ax.xaxis if name == "x" else ax.yaxis
        getattr(ax, f"set_{name}scale")("log", base=base)
        if ticks is not None:
            major = FixedLocator(ticks)
        else:
            lo, hi = sorted(abs(v) for v in getattr(ax, f"get_{name}lim")())
            span = math.log(hi / lo, base) if lo > 0 else math.inf
            # powers of the base in view: with fewer than three, one of them may sit at an
            # edge and the axis would carry a single label
            powers = (
                math.floor(math.log(hi, base) + 1e-9) - math.ceil(math.log(lo, base) - 1e-9) + 1
                if lo > 0
                else math.inf
            )
            subs = (1.0, 2.0, 5.0) if span < 1.5 or (powers < 3 and span < 2.5) else (1.0,)
            major = LogLocator(base=base, subs=subs, numticks=12)
        target.set_major_locator(major)
        target.set_major_formatter(FuncFormatter(lambda v, _pos: _plain_number(v)))
        if minor:
            target.set_minor_locator(LogLocator(base=base, subs=np.arange(2, 10), numticks=12))
        else:
            target.set_minor_locator(FixedLocator([]))
        target.set_minor_formatter(NullFormatter())
    return ax


# --------------------------------------------------------------------------- timing


def warm_time(fn, repeat=5, *, warmup=1, clock=None):
    """Best time of ``fn()`` in seconds, measured after ``warmup`` untimed calls.

    The first call pays for one-off work (numba compilation, BLAS thread start-up, caches,
    page faults of new arrays): a timing plot that includes it shows a small problem slower
    than a large one. The best of ``repeat`` timed calls is the one least disturbed by other
    work on the machine.

    Parameters
    ----------
    fn : callable
        Called without arguments.
    repeat : int
        Timed calls (>= 1).
    warmup : int
        Untimed calls first (>= 0).
    clock : callable or None
        Returns the current time in seconds; None is :func:`time.perf_counter` (wall-clock
        time). :func:`time.process_time` gives the CPU time of this process, which leaves out
        the time it waits while other programs run.

    Returns
    -------
    float
        Seconds of the fastest timed call.
    """
    if not callable(fn):
        raise TypeError(f"fn must be callable, got {type(fn).__name__}.")
    if clock is None:
        clock = time.perf_counter
    elif not callable(clock):
        raise TypeError(f"clock must be callable or None, got {type(clock).__name__}.")
    for name, value, least in (("repeat", repeat, 1), ("warmup", warmup, 0)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < least:
            raise ValueError(f"{name} must be an integer >= {least}, got {value!r}.")
    for _ in range(warmup):
        fn()
    best = math.inf
    for _ in range(repeat):
        start = clock()
        fn()
        best = min(best, clock() - start)
    return best


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
    ax.plot([], [], "o", mfc="C0", mec="C0", ls="none", label="on the front")
    ax.plot([], [], "s", mfc="white", mec="C0", ls="none", label="dominated")
    notes = []
    for r, ti, ai, on in zip(kept, t, acc, front, strict=True):
        ax.plot(ti, ai, "o" if on else "s", ms=7, mfc="C0" if on else "white", mec="C0")
        notes.append(
            ax.annotate(
                labels.get(r["method"], r["method"]),
                (ti, ai),
                xytext=(5, 4),
                textcoords="offset points",
            )
        )
    # the published references go into the legend, which sits below the axes: a label
    # written next to its line would collide with a run that lands close to it
    colors = ["C3", "C1", "C2", "C4"]
    for k, (name, value) in enumerate((references or {}).items()):
        ax.axhline(100 * value, ls=":", lw=1.5, color=colors[k % len(colors)], label=name)
    ax.set_xscale("log")
    # room on the right for the labels of the slowest runs (they are written rightwards)
    ax.set_xlim(t.min() / 1.3, t.max() * 2.2)
    # and room above the top run for its label
    low, high = ax.get_ylim()
    ax.set_ylim(low, high + 0.08 * (high - low))
    log_ticks(ax, "x")
    ax.set_xlabel("fit time (s, log scale)" if time_key == "fit_s" else f"{time_key} (s)")
    ax.set_ylabel("test accuracy (%)")
    _separate_labels(ax, notes)
    legend_outside(ax, ncols=2)
    return front


def _separate_labels(ax, notes, max_moves=8):
    """Place point labels so that none overlaps an earlier one.

    Runs of similar accuracy and time (several tree models, say) would otherwise write their
    names over each other. From the most accurate run down, each label tries the four corners
    of its point (right and above first), and if all four touch a placed label it moves down a
    line at a time from the first."""
    renderer = ax.figure.canvas.get_renderer()
    placed = []
    line = None
    corners = [
        ((5, 4), "left", "bottom"),
        ((5, -4), "left", "top"),
        ((-5, 4), "right", "bottom"),
        ((-5, -4), "right", "top"),
    ]

    def free(note):
        box = note.get_window_extent(renderer)
        return not any(box.overlaps(other) for other in placed)

    for note in sorted(notes, key=lambda a: -a.xy[1]):
        for offset, ha, va in corners:
            note.set_position(offset)
            note.set_ha(ha)
            note.set_va(va)
            if free(note):
                break
        else:
            note.set_position(corners[0][0])
            note.set_ha("left")
            note.set_va("bottom")
            line = line or note.get_window_extent(renderer).height * 72 / ax.figure.dpi + 1
            for _ in range(max_moves):
                if free(note):
                    break
                dx, dy = note.get_position()
                note.set_position((dx, dy - line))
        placed.append(note.get_window_extent(renderer))
