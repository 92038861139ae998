"""Every benchmark runs at smoke size, so `make bench` keeps working (nothing is timed here)."""

import pytest

from benchmarks.__main__ import modules


@pytest.mark.parametrize("mod", modules(every=True), ids=lambda m: m.__name__)
def test_benchmark_runs_at_smoke_size(mod, monkeypatch):
    # the GPU benchmark sets SCIPY_ARRAY_API for its array-API fits; undone after the test, so
    # that scikit-learn's estimator checks in later tests do not see it half-set. (setenv
    # first: delenv of an unset variable records nothing to undo, and the benchmark's
    # os.environ.setdefault would then outlive the test)
    monkeypatch.setenv("SCIPY_ARRAY_API", "")
    monkeypatch.delenv("SCIPY_ARRAY_API")
    rows = mod.run(smoke=True)
    assert rows
    for r in rows:
        if r.get("skipped"):  # a comparison this machine cannot make, said in its name
            assert r["name"]
            continue
        assert r["ours_s"] > 0 and r["reference_s"] > 0 and r["target"] > 0
        if "floor" in r:  # (what, seconds): the cost no implementation can go below
            assert r["floor"][0] and r["floor"][1] > 0


def test_lecture004_record_matches_its_benchmark():
    """The stored lecture-004 record, read by chapter 9, has the shape the module writes."""
    from benchmarks import bench_lecture004 as bench
    from kernelcourse.datasets import load_benchmark

    record = load_benchmark("lecture004_sizes")
    assert {"date", "machine", "settings", "lecture", "steps"} <= set(record)
    assert record["settings"]["sizes"] == {"adult": [30_162, 15_060], "covertype": [40_000, 10_000]}
    assert record["settings"]["pca"]["n_samples"] == 20_000
    planned = {(step, data) for step, data, _ in bench.PLAN}
    for s in record["steps"]:
        assert (s["step"], s["data"]) in planned
        assert ("result" in s) != ("error" in s)
        if s["step"] == "grid" and "result" in s:
            assert s["result"]["C"] in bench.GRID["C"]
            assert s["result"]["gamma"] in bench.GRID["gamma"]


def test_full_data_records_run_only_when_named():
    default = {m.__name__ for m in modules()}
    assert "benchmarks.bench_scale" not in default
    assert "benchmarks.bench_rff" in default
    assert "benchmarks.bench_lecture004" not in default
    assert [m.__name__ for m in modules(["scale"])] == ["benchmarks.bench_scale"]


def test_binning_validation_gives_an_irrelevant_feature_a_smaller_bandwidth():
    """The per-feature stage halves γ_k on a column that only adds noise to the distances."""
    import numpy as np

    from benchmarks import bench_scale as bench

    rng = np.random.default_rng(0)
    X = rng.normal(size=(1500, 3))
    X[:, 2] *= 4.0  # a wide, irrelevant column dominates |x - x'|_1
    y = np.where(np.sin(2 * X[:, 0]) + X[:, 1] > 0, 1, -1)
    settings = {
        **bench.SMOKE,
        "binning_grid": {
            "gamma": [1.0],
            "lam": [0.1],
            "stage1_n_grids": 20,
            "n_grids": [20],
            "feature_groups": {"x0 and x1": [0, 1], "noise": [2]},
            "min_gain": 5e-3,
        },
    }
    out = bench.validate_binning(X, y, settings, 500)
    assert out["group_factors"]["noise"] < 1.0
    assert out["chosen"]["gamma"][2] == out["base_gamma"] * out["group_factors"]["noise"]
    stage2 = [r for r in out["grid"] if r["stage"] == 2]
    kept = [r for r in stage2 if r["kept"]]
    assert kept and all(r["group"] in settings["binning_grid"]["feature_groups"] for r in stage2)
    # each kept step beat the one before it by more than min_gain
    first = max(r["validation_accuracy"] for r in out["grid"] if r["stage"] == 1)
    assert kept[0]["validation_accuracy"] > first + 5e-3


def test_scale_record_matches_its_benchmark():
    """The stored full-data record, read by chapter 11, has the shape the module writes."""
    from benchmarks import bench_scale as bench
    from kernelcourse.datasets import load_benchmark

    record = load_benchmark("scale_covertype")
    assert record["settings"]["binning_grid"] == bench.FULL["binning_grid"]
    binning = record["validation"]["binning"]
    assert {"grid", "chosen", "base_gamma", "group_factors"} <= set(binning)
    assert len(binning["chosen"]["gamma"]) == record["data"]["n_features"]
    assert {(r.get("task", "binary"), r["method"]) for r in record["runs"]} == {
        (task, m) for task, methods in bench.TASKS.items() for m in methods
    }
    assert {"binning_multiclass", "trees_binary", "trees_multiclass"} <= set(record["validation"])
    mc = record["validation"]["binning_multiclass"]
    assert mc["chosen"]["gamma"] == [mc["gamma_scale"] * g for g in binning["chosen"]["gamma"]]


def test_readme_svm_table_is_read_from_the_record():
    """The README's KernelSVC table is the stored record's (``python -m benchmarks.bench_svm``
    prints it), and the record holds only rows whose solvers agreed."""
    import pathlib

    from benchmarks import bench_svm as bench
    from kernelcourse.datasets import load_benchmark

    record = load_benchmark("svm_covertype")
    readme = (pathlib.Path(__file__).parent.parent / "README.md").read_text()
    table = bench.readme_table(record)
    assert table in readme
    # the table's ratio columns, parsed back, are the record's times divided
    section = readme.split("### Speed of `KernelSVC` at scale", 1)[1].split("\n## ", 1)[0]
    rows = [ln for ln in section.splitlines() if ln.startswith("| ") and "×" in ln]
    assert len(rows) == len(record["rows"]) >= 1
    for line, r in zip(rows, record["rows"], strict=True):
        cells = [c.strip() for c in line.strip("|").split("|")]
        assert int(cells[0].replace(",", "")) == r["n"]
        for cell, peer in zip(cells[4:6], bench.SOLVERS[1:], strict=True):
            if peer in r["fit_s"]:
                ratio = r["fit_s"][peer] / r["fit_s"]["KernelSVC"]
                assert float(cell.rstrip("×")) == pytest.approx(ratio, abs=0.006)
        for peer in r["fit_s"]:
            obj, ref = r["dual_objective"]["KernelSVC"], r["dual_objective"][peer]
            assert abs(obj - ref) <= 1e-3 * abs(ref)
            acc, acc_ref = r["test_accuracy"]["KernelSVC"], r["test_accuracy"][peer]
            assert abs(acc - acc_ref) <= 1e-3
    assert record["machine"]["cpu"] in readme


def test_readme_gpu_table_is_read_from_the_record():
    """The README's GPU table is the stored record's (``python -m benchmarks.bench_gpu
    --table`` prints it), and the record meets the issue's targets it claims."""
    import pathlib

    from benchmarks import bench_gpu as bench
    from kernelcourse.datasets import load_benchmark

    record = load_benchmark("gpu_covertype")
    readme = (pathlib.Path(__file__).parent.parent / "README.md").read_text()
    assert bench.readme_table(record) in readme
    assert record["machine"]["device"] == "cuda" and record["machine"]["gpu"] in readme
    tasks = {(r["method"], r["task"]) for r in record["runs"]}
    assert tasks == {("nystroem_falkon", "binary"), ("nystroem_falkon", "multiclass"),
                     ("rff_ridge", "binary")}  # fmt: skip
    assert record["data"]["n_train"] == 522_910 and record["data"]["n_test"] == 58_102
