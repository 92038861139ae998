"""The accuracy–time Pareto figure helper."""

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from kernelcourse.book import plotting  # noqa: E402


def test_pareto_optimal_keeps_only_undominated_runs():
    times = [1.0, 2.0, 3.0, 3.0, 10.0]
    accs = [0.80, 0.90, 0.85, 0.90, 0.97]
    # run 2 is slower and worse than run 1; run 3 ties run 1 in accuracy but is slower
    np.testing.assert_array_equal(
        plotting.pareto_optimal(times, accs), [True, True, False, False, True]
    )
    with pytest.raises(ValueError, match="same non-zero length"):
        plotting.pareto_optimal([1.0], [0.5, 0.6])
    with pytest.raises(ValueError, match="finite"):
        plotting.pareto_optimal([1.0, np.nan], [0.5, 0.6])


def test_accuracy_time_pareto_draws_runs_front_and_references():
    runs = [
        {"method": "a", "accuracy": 0.80, "fit_s": 1.0},
        {"method": "b", "accuracy": 0.97, "fit_s": 100.0},
        {"method": "c", "accuracy": 0.85, "fit_s": 300.0},
        {"method": "failed", "error": "MemoryError"},
    ]
    fig, ax = plotting.new_figure()
    front = plotting.accuracy_time_pareto(
        ax, runs, labels={"b": "binning"}, references={"R&R binning": 0.978}
    )
    np.testing.assert_array_equal(front, [True, True, False])
    texts = [t.get_text() for t in ax.texts]
    assert "binning" in texts and "a" in texts
    # the reference is named in the legend, off the data
    assert "R&R binning" in [t.get_text() for t in ax.get_legend().get_texts()]
    assert ax.get_xscale() == "log" and "accuracy" in ax.get_ylabel()
    # front, two legend keys (on the front / dominated), three runs, one reference
    assert len(ax.get_lines()) == 1 + 2 + 3 + 1
    assert ax.get_legend() is not None
    legend_box = ax.get_legend().get_window_extent(fig.canvas.get_renderer())
    axes_box = ax.get_window_extent(fig.canvas.get_renderer())
    assert legend_box.y1 <= axes_box.y0  # below the axes, never over the data
    with pytest.raises(ValueError, match="no run"):
        plotting.accuracy_time_pareto(ax, [{"method": "x"}])
    matplotlib.pyplot.close(fig)


def test_accuracy_time_pareto_keeps_labels_of_close_runs_apart():
    # three runs within a few percent of each other and of each other's time: their names
    # must not be written over each other
    fig, ax = plotting.new_figure()
    runs = [
        {"method": "random forest", "accuracy": 0.965, "fit_s": 57.0},
        {"method": "extremely randomized trees", "accuracy": 0.962, "fit_s": 60.0},
        {"method": "gradient-boosted trees", "accuracy": 0.977, "fit_s": 137.0},
        {"method": "random binning", "accuracy": 0.98, "fit_s": 45.0},
        {"method": "far below", "accuracy": 0.78, "fit_s": 21.0},
    ]
    plotting.accuracy_time_pareto(ax, runs)
    renderer = fig.canvas.get_renderer()
    boxes = [t.get_window_extent(renderer) for t in ax.texts]
    assert len(boxes) == len(runs)
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            assert not a.overlaps(b)
    matplotlib.pyplot.close(fig)
