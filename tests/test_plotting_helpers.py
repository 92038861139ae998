"""The figure helpers chapters use for legends, log axes and timings."""

import matplotlib.pyplot as plt
import numpy as np
import pytest

from kernelcourse.book import plotting


@pytest.fixture
def figures():
    yield
    plt.close("all")


def _extent(artist, fig):
    fig.canvas.draw()
    return artist.get_window_extent(fig.canvas.get_renderer())


def _two_series(ax):
    x = np.linspace(0, 1, 50)
    ax.plot(x, x, label="train")
    ax.plot(x, 1 - x, label="test")
    ax.set_xlabel("x")
    ax.set_ylabel("error")


def test_legend_below_an_axes_clears_the_data_and_the_axis_label(figures):
    fig, ax = plt.subplots()
    _two_series(ax)
    legend = plotting.legend_outside(ax)
    box = _extent(legend, fig)
    renderer = fig.canvas.get_renderer()
    assert box.y1 <= ax.bbox.y0  # below the plotting area
    assert box.y1 <= ax.xaxis.label.get_window_extent(renderer).y0  # and below the x label
    assert [t.get_text() for t in legend.get_texts()] == ["train", "test"]
    assert legend._ncols == 2  # side by side


def test_legend_right_of_an_axes(figures):
    fig, ax = plt.subplots()
    _two_series(ax)
    fig.canvas.draw()
    decorations = ax.get_tightbbox(fig.canvas.get_renderer())  # before the legend is in it
    legend = plotting.legend_outside(ax, where="right")
    assert _extent(legend, fig).x0 >= decorations.x1
    assert legend._ncols == 1


def test_one_legend_for_all_panels_of_a_figure(figures):
    fig, axes = plt.subplots(1, 2)
    for ax in axes:
        _two_series(ax)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    bottoms = [ax.get_tightbbox(renderer).y0 for ax in axes]
    legend = plotting.legend_outside(fig)
    assert [t.get_text() for t in legend.get_texts()] == ["train", "test"]  # each label once
    box = _extent(legend, fig)
    assert all(box.y1 <= bottom for bottom in bottoms)
    # a tight bounding box (as the book saves figures) takes the legend in
    assert fig.get_tightbbox(renderer).y0 <= legend.get_tightbbox(renderer).y0 / fig.dpi + 1e-9


def test_legend_outside_rejects_bad_input(figures):
    fig, ax = plt.subplots()
    with pytest.raises(ValueError, match="no labelled artist"):
        plotting.legend_outside(ax)
    _two_series(ax)
    with pytest.raises(ValueError, match="where"):
        plotting.legend_outside(ax, where="inside")
    with pytest.raises(ValueError, match="ncols"):
        plotting.legend_outside(ax, ncols=0)
    with pytest.raises(TypeError, match="Axes or Figure"):
        plotting.legend_outside([ax])


def _labels(axis, fig):
    fig.canvas.draw()
    lo, hi = sorted(axis.get_view_interval())
    major = [
        t.get_text()
        for t, v in zip(axis.get_majorticklabels(), axis.get_majorticklocs(), strict=True)
        if lo * (1 - 1e-9) <= v <= hi * (1 + 1e-9)
    ]
    minor = [t.get_text() for t in axis.get_minorticklabels() if t.get_text()]
    return major, minor


def test_log_ticks_over_decades_are_plain_numbers(figures):
    fig, ax = plt.subplots()
    ax.plot([1, 10_000], [1, 2])
    plotting.log_ticks(ax, "x")
    major, minor = _labels(ax.xaxis, fig)
    assert major == ["1", "10", "100", "1,000", "10,000"]
    assert minor == []
    assert ax.get_xscale() == "log"


def test_log_ticks_on_a_short_axis_do_not_overlap(figures):
    # Matplotlib's default labels the minor ticks here ("3×10¹", "4×10¹", ...) and they collide.
    fig, ax = plt.subplots(figsize=(3, 2))
    ax.plot([20, 80], [0.001, 0.1])
    plotting.log_ticks(ax, "both")
    major, minor = _labels(ax.xaxis, fig)
    assert major == ["20", "50"] and minor == []
    major_y, _ = _labels(ax.yaxis, fig)
    assert major_y == ["0.001", "0.01", "0.1"]
    renderer = fig.canvas.get_renderer()
    boxes = [t.get_window_extent(renderer) for t in ax.xaxis.get_ticklabels() if t.get_text()]
    boxes = sorted(boxes, key=lambda b: b.x0)
    assert all(a.x1 < b.x0 for a, b in zip(boxes, boxes[1:], strict=False))


def test_log_ticks_explicit_and_large_values(figures):
    fig, ax = plt.subplots()
    ax.plot([100, 1e7], [1, 2])
    plotting.log_ticks(ax, "x", ticks=[100, 1e4, 1e7], minor=False)
    major, minor = _labels(ax.xaxis, fig)
    assert major == ["100", "10,000", "$10^{7}$"]
    assert minor == [] and len(ax.xaxis.get_minorticklocs()) == 0


def test_log_ticks_rejects_bad_input(figures):
    _, ax = plt.subplots()
    with pytest.raises(ValueError, match="axis"):
        plotting.log_ticks(ax, "z")
    with pytest.raises(ValueError, match="base"):
        plotting.log_ticks(ax, base=1)
    with pytest.raises(ValueError, match="positive"):
        plotting.log_ticks(ax, ticks=[0, 1])


def test_warm_time_leaves_the_first_call_out(monkeypatch):
    clock = [0.0]
    calls = []

    def fn():
        calls.append(1)
        clock[0] += 10.0 if len(calls) == 1 else 1.0 + 0.5 * len(calls)  # slow first call

    monkeypatch.setattr(plotting.time, "perf_counter", lambda: clock[0])
    best = plotting.warm_time(fn, repeat=3)
    assert len(calls) == 4  # one warm-up, three timed
    assert best == pytest.approx(2.0)  # the fastest timed call (the second call overall)


def test_warm_time_reads_the_clock_it_is_given(monkeypatch):
    ticks = iter([0.0, 3.0, 10.0, 11.5])  # two timed calls: 3 s, then 1.5 s
    monkeypatch.setattr(plotting.time, "perf_counter", lambda: pytest.fail("wall clock read"))
    best = plotting.warm_time(lambda: None, repeat=2, warmup=0, clock=lambda: next(ticks))
    assert best == pytest.approx(1.5)


def test_warm_time_rejects_bad_input():
    with pytest.raises(TypeError, match="callable"):
        plotting.warm_time(3)
    with pytest.raises(ValueError, match="repeat"):
        plotting.warm_time(lambda: None, repeat=0)
    with pytest.raises(ValueError, match="warmup"):
        plotting.warm_time(lambda: None, warmup=-1)
    with pytest.raises(TypeError, match="clock"):
        plotting.warm_time(lambda: None, clock=1.0)


def test_new_figure_keeps_to_the_column():
    from kernelcourse.book.plotting import COLUMN_WIDTH

    fig, axes = plotting.new_figure(2, 2)
    assert fig.get_size_inches()[0] <= COLUMN_WIDTH and axes.shape == (2, 2)
    plt.close(fig)
    # the book's axis text is at least the body text's 16 px at 100 dpi
    assert plt.rcParams["xtick.labelsize"] * 100 / 72 >= 16
    with pytest.raises(ValueError, match="ncols"):
        plotting.new_figure(3)
    with pytest.raises(ValueError, match="width=8"):
        plotting.new_figure(width=8)
    with pytest.raises(ValueError, match="nrows"):
        plotting.new_figure(nrows=0)


def test_log_ticks_label_more_than_one_tick_on_a_short_axis(figures):
    # 1.6 decades with a single power of ten inside: 1-2-5 steps, not one lonely label
    fig, ax = plt.subplots()
    ax.loglog([16, 128], [0.012, 0.31])
    plotting.log_ticks(ax, "y")
    fig.canvas.draw()
    lo, hi = ax.get_ylim()
    shown = [v for v in ax.yaxis.get_major_locator()() if lo <= v <= hi]
    assert len(shown) >= 3 and 0.1 in shown and 0.02 in shown
