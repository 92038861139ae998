"""Every benchmark runs at smoke size, so `make bench` keeps working (nothing is timed here)."""

import pytest

from benchmarks.__main__ import modules


@pytest.mark.parametrize("mod", modules(every=True), ids=lambda m: m.__name__)
def test_benchmark_runs_at_smoke_size(mod):
    rows = mod.run(smoke=True)
    assert rows
    for r in rows:
        assert r["ours_s"] > 0 and r["reference_s"] > 0 and r["target"] > 0


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
