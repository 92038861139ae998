"""Every benchmark runs at smoke size, so `make bench` keeps working (nothing is timed here)."""

import pytest

from benchmarks.__main__ import modules


@pytest.mark.parametrize("mod", modules(every=True), ids=lambda m: m.__name__)
def test_benchmark_runs_at_smoke_size(mod):
    rows = mod.run(smoke=True)
    assert rows
    for r in rows:
        assert r["ours_s"] > 0 and r["reference_s"] > 0 and r["target"] > 0


def test_full_data_records_run_only_when_named():
    default = {m.__name__ for m in modules()}
    assert "benchmarks.bench_scale" not in default
    assert "benchmarks.bench_rff" in default
    assert [m.__name__ for m in modules(["scale"])] == ["benchmarks.bench_scale"]
