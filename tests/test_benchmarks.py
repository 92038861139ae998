"""Every benchmark runs at smoke size, so `make bench` keeps working (nothing is timed here)."""

import pytest

from benchmarks.__main__ import modules


@pytest.mark.parametrize("mod", modules(), ids=lambda m: m.__name__)
def test_benchmark_runs_at_smoke_size(mod):
    rows = mod.run(smoke=True)
    assert rows
    for r in rows:
        assert r["ours_s"] > 0 and r["reference_s"] > 0 and r["target"] > 0
