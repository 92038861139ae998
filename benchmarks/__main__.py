"""Run every benchmark module and print one table of speed ratios."""

from __future__ import annotations

import importlib
import pathlib
import sys


def modules(selectors=(), *, every=False):
    here = pathlib.Path(__file__).parent
    names = sorted(p.stem for p in here.glob("bench_*.py"))
    if selectors:
        names = [n for n in names if any(s in n for s in selectors)]
    mods = [importlib.import_module(f"benchmarks.{n}") for n in names]
    if not selectors and not every:
        # full-data record runs (tens of minutes) run only when named, e.g. `scale`
        mods = [m for m in mods if not getattr(m, "RUN_ONLY_WHEN_NAMED", False)]
    return mods


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    smoke = "--smoke" in argv
    selectors = [a for a in argv if not a.startswith("--")]
    rows = []
    for mod in modules(selectors):
        print(f"# {mod.__name__}: {(mod.__doc__ or '').strip().splitlines()[0]}", flush=True)
        for r in mod.run(smoke=smoke):
            if r.get("skipped"):  # a comparison that could not run, e.g. a peer not installed
                print(f"  {r['name']}", flush=True)
                continue
            met = "yes" if r["ratio"] >= r["target"] else "NO"
            print(
                f"  {r['name']:<48} ours {r['ours_s']:8.3f} s  reference {r['reference_s']:8.3f} s"
                f"  speed-up {r['ratio']:5.2f}x  (target >= {r['target']:g}x: {met})",
                flush=True,
            )
            if "floor" in r:  # what no implementation can beat, to read the ratio against
                what, floor_s = r["floor"]
                times = r["ours_s"] / floor_s
                print(f"    floor, {what}: {floor_s:.3f} s; ours {times:.2f}x it", flush=True)
            rows.append(r)
    return rows


if __name__ == "__main__":
    main()
