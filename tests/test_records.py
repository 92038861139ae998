"""The appendix's tables: built from the stored records, every run in them, as printed."""

import copy

import pytest

from kernelcourse.book import records
from kernelcourse.datasets import load_benchmark


def plain(text):
    """A table cell with its no-break spaces as plain ones."""
    return text.replace("\u00a0", " ")


@pytest.fixture(scope="module")
def forest():
    return load_benchmark("scale_covertype")


@pytest.fixture(scope="module")
def lecture():
    return load_benchmark("lecture004_sizes")


def test_pct_and_seconds():
    # a no-break space between number and unit: the unit never starts a line
    assert records.pct(0.98) == "98.0\u00a0%"
    assert records.pct(0.97856, 2) == "97.86\u00a0%"
    assert records.seconds(406.2) == "406\u00a0s"
    assert records.seconds(34.87) == "35\u00a0s"
    assert records.seconds(0.2134) == "0.21\u00a0s"
    assert records.seconds(3.0) == "3\u00a0s"
    assert records.gib(4 * 2**30) == "4.0\u00a0GiB"


def test_forest_table_has_every_finished_run(forest):
    for task in records.FOREST_TASKS:
        runs = [r for r in forest["runs"] if r.get("task", "binary") == task]
        for part in ("accuracy", "cost"):
            table = records.forest_table(forest, task, part)
            assert len(table.cells) == len(runs)  # finished runs, and any that did not finish
            assert all(len(row) == len(table.headers) for row in table.cells)
            assert len(table.headers) <= 4  # few columns: the table reads on a phone
    table = records.forest_table(forest)
    by_method = {row[0]: row for row in table.cells}
    binning = by_method["random binning + ridge"]
    run = records.forest_runs(forest)["random_binning_ridge"]
    assert binning[2] == records.pct(run["accuracy"])
    # the published accuracies of the two methods Rahimi & Recht report are in the title
    assert table.headers == ["method", "setting", "accuracy"]
    assert table.title.endswith(
        "Published by Rahimi & Recht: 97.8\u00a0% for random binning + ridge, "
        "88.4\u00a0% for Fourier features + ridge"
    )
    assert "Rahimi & Recht" not in records.forest_table(forest, "multiclass").title


def test_forest_table_says_which_runs_kept_to_the_budgets(forest):
    record = copy.deepcopy(forest)
    slow = next(r for r in record["runs"] if r["method"] == "random_forest")
    slow["fit_s"] = 2 * record["budget_s"]
    record["runs"].append({"method": "extra_trees", "task": slow["task"], "error": "out of time"})
    table = records.forest_table(record, slow["task"], "cost")
    assert "5 min" in table.title and "4 GiB" in table.title
    marked = [row[0] for row in table.cells if "over budget" in row[0]]
    assert marked == ["random forest (over budget)"]
    for part in ("accuracy", "cost"):
        table = records.forest_table(record, slow["task"], part)
        failed = [row for row in table.cells if row[1] == "did not finish"]
        assert len(failed) == 1 and len(failed[0]) == len(table.headers)
    with pytest.raises(ValueError, match="part"):
        records.forest_table(record, "binary", "speed")


def test_forest_comparison_takes_the_best_tree_within_the_budgets(forest):
    for task in records.FOREST_TASKS:
        rb, best, tree, lead = records.forest_comparison(forest, task)
        runs = records.forest_runs(forest, task)
        assert best in records.TREE_METHODS and runs[best] is tree
        assert lead == pytest.approx(100 * (rb["accuracy"] - tree["accuracy"]))
        within = [
            runs[m]["accuracy"]
            for m in records.TREE_METHODS
            if runs[m]["fit_s"] <= forest["budget_s"]
            and runs[m]["peak_rss_bytes"] <= forest["memory_budget_bytes"]
        ]
        assert tree["accuracy"] == max(within)
    # a tree that ran over the time budget is not the one compared with
    record = copy.deepcopy(forest)
    _, best, tree, _ = records.forest_comparison(record, "binary")
    tree["fit_s"] = 10 * record["budget_s"]
    assert records.forest_comparison(record, "binary")[1] != best


def test_tree_trials_table_lists_every_forest_size_and_boosting_setting(forest):
    for task in records.FOREST_TASKS:
        trees = forest["validation"][f"trees_{task}"]
        table = records.tree_trials_table(forest, task)
        sizes = len(trees["random_forest"]["grid"]) + len(trees["extra_trees"]["grid"])
        hgb = {
            (r["learning_rate"], r["max_leaf_nodes"])
            for r in trees["hist_gradient_boosting"]["grid"]
        }
        assert len(table.cells) == sizes + len(hgb)
        assert len(table.headers) == 4  # few columns: the table reads on a phone
        kept = [row for row in table.cells if row[1].endswith(" (chosen)")]
        assert [row[0] for row in kept] == [
            records.FOREST_LABELS[m]
            for m in ("random_forest", "extra_trees", "hist_gradient_boosting")
        ]  # one setting kept per model
        chosen = trees["random_forest"]["chosen"]["n_estimators"]
        assert kept[0][1] == f"{chosen} trees (chosen)"


def test_forest_runs_select_the_task(forest):
    record = copy.deepcopy(forest)
    before = records.forest_runs(record, "multiclass")
    extra = {**record["runs"][0], "method": "a new method", "task": "multiclass", "accuracy": 0.5}
    record["runs"].append(extra)
    assert all(r.get("task", "binary") == "binary" for r in records.forest_runs(record).values())
    assert len(records.forest_runs(record, "multiclass")) == len(before) + 1


def test_binning_trials_table_lists_every_trial(forest):
    table = records.binning_trials_table(forest)
    grid = forest["validation"]["binning"]["grid"]
    assert len(table.cells) == len(grid)
    assert table.headers == ["trial", "accuracy", "fit", "memory"]
    kept = [row[0].endswith(" (chosen)") for row in table.cells]
    assert kept == [r["kept"] for r in grid]
    first = grid[0]
    assert table.cells[0][0].startswith(
        f"γ\u00a0=\u00a0{first['gamma']:g}, λ\u00a0=\u00a0{first['lam']:g}"
    )


def test_lecture004_tables(lecture):
    adult = records.lecture004_svm_table(lecture, "adult", "Adult")
    assert adult.cells[0][0] == "exact RBF SVM (LIBSVM)"
    assert len(adult.cells) == 2 + 2 * 3
    assert adult.headers[1] == "D or m" and "D or m: Fourier or Nyström" in adult.title
    cov = records.lecture004_svm_table(lecture, "covertype", "Covertype")
    # LIBSVM did not finish within its limit on Covertype: said so, not left blank
    limit = records.lecture004_steps(lecture)["sklearn_svc", "covertype"]
    assert cov.cells[0][3] == f"> {limit['limit_s']} s" and "result" not in limit
    pca = records.lecture004_pca_table(lecture)
    assert [row[0] for row in pca.cells] == ["kernel PCA", "Fourier PCA", "Nyström PCA"]
    # the lecture's numbers stand in a table of their own, not beside ours
    slides = records.lecture004_pca_table(lecture, "lecture")
    assert [row[0] for row in slides.cells] == [row[0] for row in pca.cells]
    first = lecture["lecture"]["pca"]["explained_variance"]["kernel PCA"][0]
    assert slides.cells[0][2] == f"{first:.3g}"
    assert "lecture" not in " ".join(pca.headers) and "Lecture 004" in slides.title
    # the title says what the shares are of
    shares = "share of the 10 leading components' variance and of the kernel's total"
    assert shares in pca.title
    with pytest.raises(ValueError, match="source"):
        records.lecture004_pca_table(lecture, "slides")


def test_gpu_table_from_a_record():
    record = {
        "date": "2026-01-01 00:00 UTC",
        "machine": {"gpu": "Some GPU", "numpy": "2", "sklearn": "1.9"},
        "settings": {"n_components": 50_000, "gamma": 0.1},
        "runs": [
            {"method": "nystroem_falkon", "task": "binary", "accuracy": 0.95, "fit_s": 20.0,
             "predict_s": 0.5, "peak_device_bytes": 2**34},
            {"method": "rff_ridge", "task": "binary", "n_components": 20_000, "gamma": 0.1,
             "accuracy": 0.88, "fit_s": 9.0, "predict_s": 0.2, "peak_device_bytes": 2**32},
        ],
    }  # fmt: skip
    table = records.gpu_table(record)
    assert table.cells[0] == [
        "Nyström-FALKON, type 2 vs rest",
        "M\u00a0=\u00a050,000, γ\u00a0=\u00a00.1",
        "95.0\u00a0%",
    ]
    assert plain(table.cells[1][1]) == "D = 20,000, γ = 0.1"
    assert table.title == "Full Covertype on Some GPU"
    cost = records.gpu_table(record, "cost")
    assert cost.headers == ["method, task", "fit", "predict", "memory"]
    assert cost.cells[1] == [
        "Fourier features + ridge, type 2 vs rest",
        "9\u00a0s",
        "0.2\u00a0s",
        "4.0\u00a0GiB",
    ]
    assert "Some GPU" in cost.title
    with pytest.raises(ValueError, match="part"):
        records.gpu_table(record, "speed")
    assert records.machine_line(record).startswith("measured 2026-01-01 00:00 UTC on Some GPU")


def test_gpu_frontier_table_sets_the_gpu_runs_beside_the_cpu_frontier():
    cpu = load_benchmark("scale_covertype")
    gpu = {
        "machine": {"gpu": "Some GPU"},
        "runs": [
            {"method": "nystroem_falkon", "task": "binary", "accuracy": 0.95, "fit_s": 20.0},
            {"method": "nystroem_falkon", "task": "multiclass", "accuracy": 0.9, "fit_s": 25.0},
        ],
    }
    for task in records.FOREST_TASKS:
        front = records.cpu_frontier(cpu, task)
        runs = list(records.forest_runs(cpu, task).values())
        # no run of the record is both faster and more accurate than a run on the frontier
        for r in front:
            assert not any(o["fit_s"] < r["fit_s"] and o["accuracy"] > r["accuracy"] for o in runs)
        # and every run off it is beaten in both by one on it
        for o in runs:
            if o not in front:
                assert any(
                    r["fit_s"] <= o["fit_s"] and r["accuracy"] >= o["accuracy"] for r in front
                )
        table = records.gpu_frontier_table(gpu, cpu, task)
        assert [row[0][-5:] for row in table.cells] == ["(GPU)"] + ["(CPU)"] * len(front)
        assert table.cells[0][0] == "Nyström-FALKON (GPU)"
        assert "one Some GPU GPU" in table.title and "2 CPU cores" in table.title
        assert table.headers == ["method", "accuracy", "fit time"]


def test_svm_speed_table_from_the_record():
    record = load_benchmark("svm_covertype")
    table = records.svm_speed_table(record)
    assert [row[0] for row in table.cells] == [f"{r['n']:,}" for r in record["rows"]]
    assert table.headers == ["n", "KernelSVC", "LIBSVM", "oneDAL"]
    for row, r in zip(table.cells, record["rows"], strict=True):
        t = r["fit_s"]
        assert row[1] == records.seconds(t["KernelSVC"])
        assert row[2:] == [f"{t[p] / t['KernelSVC']:.1f}×" for p in ("LIBSVM", "oneDAL")]
    assert "LIBSVM's and oneDAL's as multiples of it" in table.title
    # without oneDAL (not installed), its column is left out, not blank
    lone = copy.deepcopy(record)
    for r in lone["rows"]:
        for key in ("fit_s", "test_accuracy"):
            r[key].pop("oneDAL")
    alone = records.svm_speed_table(lone)
    assert alone.headers == ["n", "KernelSVC", "LIBSVM"]
    assert "LIBSVM's as a multiple of it" in alone.title


def test_falkon_setting_and_trials_from_the_validation(forest):
    record = copy.deepcopy(forest)
    base = {"n_components": 2000, "n_rows": 100_000, "seconds": 12.0, "kept": False}
    record["validation"]["falkon"] = {
        "grid": [
            {**base, "gamma": 0.1, "gamma_scale": None, "lam": 1e-6,
             "validation_accuracy": 0.83},
            {**base, "gamma": None, "gamma_scale": 0.05, "lam": 1e-7,
             "validation_accuracy": 0.876, "kept": True},
        ],
        "sizes": [
            {"n_components": 4000, "predicted_fit_s": 120.0, "predicted_peak_bytes": 2**30,
             "affordable": True},
            {"n_components": 12_000, "predicted_fit_s": 420.0,
             "predicted_peak_bytes": 3 * 2**30, "affordable": False},
        ],
        "chosen": {"gamma": [0.05] * 54, "lam": 1e-7, "n_components": 4000},
        "gamma_scale": 0.05,
    }  # fmt: skip
    assert records.forest_settings(record)["nystroem_falkon"] == (
        "M = 4,000, γ_k per feature, λ = 10⁻⁷"
    )
    trials = records.falkon_trials_table(record)
    assert trials.cells[0][:3] == ["one γ\u00a0=\u00a00.1", "10⁻⁶", "83.00 %"]
    assert plain(trials.cells[1][0]) == "γ_k = 0.05 × binning factor² (chosen)"
    assert "(chosen)" not in trials.cells[0][0] and len(trials.headers) == 4
    sizes = records.falkon_sizes_table(record)
    assert [row[-1] for row in sizes.cells] == ["yes", "no"]
    # the row count is the record's, printed as every count in the book
    n_train = record["data"]["n_train"]
    assert f"all {n_train:,} training rows" in sizes.title
    # one γ chosen: named by its value
    record["validation"]["falkon"]["chosen"]["gamma"] = 0.1
    assert "γ = 0.1" in records.forest_settings(record)["nystroem_falkon"]


def test_book_counts_writes_spaced_counts_with_commas():
    assert records.book_counts("the first 120 000 rows; the last 10 000") == (
        "the first 120,000 rows; the last 10,000"
    )
    assert records.book_counts("10 000 000 rows") == "10,000,000 rows"
    # no count of groups of three: a dimension, a date, a decimal are left as they are
    for text in ("d = 54, seed 0", "2026 11", "1.5 000", "12 3456"):
        assert records.book_counts(text) == text


def test_svm_data_and_tables_from_the_record():
    record = load_benchmark("svm_covertype")
    data = records.svm_data(record)
    assert "the first 120,000 rows" in data and "the last 10,000 the test set" in data
    assert "000 " not in data.replace(",000 ", "")  # no count left with a space
    acc = records.svm_table(record)
    time = records.svm_table(record, "time")
    for table in (acc, time):
        assert table.headers == ["n", "KernelSVC", "LIBSVM", "oneDAL"]
        assert [row[0] for row in table.cells] == [f"{r['n']:,}" for r in record["rows"]]
    for row, r in zip(acc.cells, record["rows"], strict=True):
        assert row[1:] == [records.pct(r["test_accuracy"][p], 2) for p in records.SVM_SOLVERS]
    for row, r in zip(time.cells, record["rows"], strict=True):
        assert row[1:] == [records.seconds(r["fit_s"][p]) for p in records.SVM_SOLVERS]
    assert "10,000 Covertype rows" in acc.title and "tol\u00a0=\u00a010⁻³" in acc.title
    assert "up to 3 fits" in time.title
    with pytest.raises(ValueError, match="part"):
        records.svm_table(record, "speed")
    # the solvers agree as the benchmark checks before it times a row
    for r in record["rows"]:
        objective, points = records.svm_agreement(r)
        assert 0 <= objective <= 1e-3 and 0 <= points <= 0.1 + 1e-9
    # without oneDAL, its column is left out
    lone = copy.deepcopy(record)
    for r in lone["rows"]:
        for key in ("fit_s", "test_accuracy", "dual_objective"):
            r[key].pop("oneDAL")
    assert records.svm_table(lone, "time").headers == ["n", "KernelSVC", "LIBSVM"]
    assert records.svm_agreement(lone["rows"][0])[1] == pytest.approx(2e-2)


def test_gpu_speedup_table_times_the_same_computation_on_both():
    record = load_benchmark("gpu_covertype")
    table = records.gpu_speedup_table(record)
    assert table.headers == ["computation", "CPU", "GPU", "ratio"]
    cases = record["device_vs_cpu"]
    assert len(table.cells) == len(cases)
    for row, c in zip(table.cells, cases, strict=True):
        assert plain(row[0]) == records.book_counts(c["case"]) and " 000" not in row[0]
        assert " = " not in row[0]  # never broken inside "n = 20,000"
        assert row[1:3] == [records.seconds(c["cpu_s"]), records.seconds(c["gpu_s"])]
        assert row[3] == f"{c['cpu_s'] / c['gpu_s']:.0f}×"
    assert record["machine"]["gpu"] in table.title and record["machine"]["cpu"] in table.title
