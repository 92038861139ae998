"""SVM training: KernelSVC vs LIBSVM (sklearn SVC) and oneDAL; PrimalSVC vs LIBLINEAR.

Data: Covertype (cover type 2 "lodgepole pine" against the rest), the first 120 000 rows of
covtype.data.gz shuffled with seed 0 and standardised, d = 54; the last 10 000 of them are the
test set, the first n the training set. RBF kernel with γ = 1/54, C = 1, tol = 1e-3 and a
1000 MB kernel cache for every solver. Sizes: n = 5 000 and 20 000, or the comma-separated
list in ``KERNELCOURSE_BENCH_SVM_SIZES`` (the record sizes are 5000,20000,50000,100000).
oneDAL's SVC (``sklearnex.svm.SVC``, the optional ``bench`` extra) is timed when installed;
otherwise its row says "not installed". Falls back to a synthetic set of the same shape when
the data file is absent.

A row reports a time only after checking that the solvers agree: the same dual objective
within 1e-3 relative and the same test accuracy within 0.1 points. The fits alternate in one
process (best of three at n <= 5000, of two at n <= 20 000), so a noisy stretch of a shared
machine slows all alike. Each fit's peak resident memory is measured (the process's peak,
reset before the fit), and a fit still running after 30 s reports every 30 s on standard
error (KernelSVC through its ``verbose``, the peers from a watcher thread).
A run at the record sizes writes the record
``kernelcourse/benchmark_results/svm_covertype.json`` (after each size, with the machine),
which the README's table is checked against (:func:`readme_table`); other sizes leave it.
The primal benchmark uses D = 500 random cosine features of the same rows.
"""

from __future__ import annotations

import datetime
import gzip
import json
import os
import pathlib
import threading
import time

import numpy as np
from sklearn.svm import SVC, LinearSVC

from kernelcourse._progress import Progress
from kernelcourse.datasets import benchmark_results_dir
from kernelcourse.kernels import RBF
from kernelcourse.svm import KernelSVC, PrimalSVC

from ._timing import best_times, result
from .bench_scale import _load, machine, peak_rss

SIZES = (5000, 20000)
RECORD_SIZES = (5000, 20000, 50000, 100000)
N_TEST = 10_000
CACHE_MB = 1000
RECORD = benchmark_results_dir() / "svm_covertype.json"
SOLVERS = ("KernelSVC", "LIBSVM", "oneDAL")


def _covtype(n_rows, pool=120_000):
    path = pathlib.Path(os.environ.get("KERNELCOURSE_DATA", "")) / "covtype.data.gz"
    if path.is_file():
        with gzip.open(path) as fh:
            raw = np.loadtxt(fh, delimiter=",", max_rows=max(pool, n_rows))
        raw = raw[np.random.default_rng(0).permutation(len(raw))]
        X, y = raw[:, :-1], np.where(raw[:, -1] == 2, 1, -1)
    else:
        rng = np.random.default_rng(0)
        X = rng.normal(size=(max(pool, n_rows), 54))
        y = np.where(np.sin(X[:, :4].sum(1)) + 0.3 * rng.normal(size=len(X)) > 0, 1, -1)
    X = (X - X.mean(0)) / np.maximum(X.std(0), 1e-12)
    return X, y


def _sizes():
    text = os.environ.get("KERNELCOURSE_BENCH_SVM_SIZES", "").strip()
    if not text:
        return SIZES
    try:
        sizes = tuple(int(s) for s in text.split(","))
    except ValueError:
        sizes = ()
    if not sizes or min(sizes) < 2:
        raise ValueError(
            f"KERNELCOURSE_BENCH_SVM_SIZES must be comma-separated sizes >= 2, got {text!r}."
        )
    return sizes


def _onedal_svc():
    """oneDAL's SVC class, or None when scikit-learn-intelex is not installed."""
    try:
        from sklearnex.svm import SVC as OneDalSVC
    except ImportError:
        return None
    return OneDalSVC


def _dual_objective(coef, sv, gamma):
    """1ᵀα − ½ αᵀGα from signed coefficients y_i α_i, a block of rows at a time."""
    kernel, quad = RBF(gamma), 0.0
    for start in range(0, len(coef), 2048):
        quad += coef[start : start + 2048] @ (kernel(sv[start : start + 2048], sv) @ coef)
    return float(np.abs(coef).sum() - 0.5 * quad)


def _reset_peak_rss():
    """Start the process's peak resident memory (VmHWM) afresh at the present one; False where
    Linux's /proc/self/clear_refs is not there to do it."""
    try:
        pathlib.Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return True


def _measured(label, fit, peaks, before, watch):
    """``fit`` wrapped so that each call records its peak resident memory in ``peaks[label]``
    (the largest over the calls; ``before[label]``: the resident memory it started from) and,
    with ``watch``, reports from a thread while it runs past 30 s (the peers have no
    progress lines of their own)."""

    def run():
        reset = _reset_peak_rss()
        if reset:
            before[label] = peak_rss()  # the peak starts at the present resident memory
        progress = Progress(f"{label} fit", None if watch else 0)  # verbose's default
        done = threading.Event()

        def report():
            while not done.wait(1.0):
                if progress.due():
                    progress.report("still fitting")

        thread = threading.Thread(target=report, daemon=True)
        if progress:
            thread.start()
        start = time.perf_counter()
        try:
            fit()
        finally:
            done.set()
            if progress:
                thread.join()
        peak = peak_rss() if reset else None
        progress.finish(
            f"done in {time.perf_counter() - start:.0f} s"
            + ("" if peak is None else f", peak resident memory {peak / 2**20:.0f} MB")
        )
        if peak is not None:
            peaks[label] = max(peaks.get(label, 0), peak)

    return run


def _check_agreement(name, obj, acc, obj_ref, acc_ref):
    rel = abs(obj - obj_ref) / abs(obj_ref)
    if rel > 1e-3 or abs(acc - acc_ref) > 1e-3:
        raise AssertionError(
            f"{name}: KernelSVC and the reference disagree: dual objective {obj:.6g} vs "
            f"{obj_ref:.6g} (relative {rel:.1e}), test accuracy {acc:.4f} vs {acc_ref:.4f}"
        )
    return rel


def _record_start(sizes, onedal):
    info = machine()
    if onedal is not None:
        import importlib.metadata

        # the distribution's version: the module's own __version__ can be a build placeholder
        info["sklearnex"] = importlib.metadata.version("scikit-learn-intelex")
    return {
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": info,
        "data": (
            "Covertype, cover type 2 against the rest: the first 120,000 rows of "
            "covtype.data.gz shuffled with seed 0 and standardised, d = 54; the last 10,000 "
            "the test set, the first n the training set"
        ),
        "settings": {
            "kernel": "rbf",
            "gamma": "1/54",
            "C": 1.0,
            "tol": 1e-3,
            "cache_size_mb": CACHE_MB,
            "sizes": list(sizes),
            "n_test": N_TEST,
        },
        "rows": [],
    }


def _save(record):
    record["machine"]["load_average_at_end"] = _load()
    RECORD.parent.mkdir(parents=True, exist_ok=True)
    RECORD.write_text(json.dumps(record, indent=2) + "\n")


def kernel_rows(smoke=False):
    """The KernelSVC rows: one against LIBSVM and one against oneDAL per size."""
    sizes = (300,) if smoke else _sizes()
    n_test = 200 if smoke else N_TEST
    X, y = _covtype(max(sizes) + n_test, pool=2000 if smoke else 120_000)
    Xte, yte = X[-n_test:], y[-n_test:]
    gamma, rows = 1.0 / X.shape[1], []
    onedal = _onedal_svc()
    keep = not smoke and tuple(sizes) == RECORD_SIZES
    record = _record_start(sizes, onedal) if keep else None
    # The first fit in a fresh process compiles the SMO loops (for float64 Gram blocks and
    # float32 cached rows): not part of any timing.
    KernelSVC(gamma=gamma).fit(X[:600], y[:600])
    if not smoke:
        KernelSVC(gamma=gamma).fit(X[:2100], y[:2100])
    for n in sizes:
        Xtr, ytr = X[:n], y[:n]
        common = {"gamma": gamma, "C": 1.0, "tol": 1e-3, "cache_size": CACHE_MB}
        models = [KernelSVC(**common), SVC(**common)]
        if onedal is not None:
            models.append(onedal(**common))
        peaks, before = {}, {}
        fits = [
            # KernelSVC reports through its own verbose; the peers through a watcher
            _measured(label, lambda m=m, Xtr=Xtr, ytr=ytr: m.fit(Xtr, ytr), peaks, before, k)
            for k, (label, m) in enumerate(zip(SOLVERS, models, strict=False))
        ]
        repeat = 1 if smoke or n > 20000 else 2 if n > 5000 else 3
        times = best_times(fits, repeat)
        ours = models[0]
        obj, acc = ours.dual_objective_, ours.score(Xte, yte)
        entry = {
            "n": n,
            "repeat": repeat,
            "fit_s": {"KernelSVC": times[0]},
            "dual_objective": {"KernelSVC": obj},
            "test_accuracy": {"KernelSVC": acc},
            "n_support": {"KernelSVC": int(len(ours.support_))},
            "peak_rss_bytes": peaks,
            "rss_before_fit_bytes": before,
        }
        for ref, t_ref, label in zip(models[1:], times[1:], SOLVERS[1:], strict=False):
            obj_ref = _dual_objective(ref.dual_coef_[0], ref.support_vectors_, gamma)
            acc_ref = ref.score(Xte, yte)
            name = f"KernelSVC.fit vs {label} n={n}"
            rel = _check_agreement(name, obj, acc, obj_ref, acc_ref)
            name += f" (obj rel {rel:.0e}, acc {100 * acc:.2f}/{100 * acc_ref:.2f} %)"
            rows.append(result(name, times[0], t_ref, 1.5 if label == "LIBSVM" else 0.5))
            entry["fit_s"][label] = t_ref
            entry["dual_objective"][label] = obj_ref
            entry["test_accuracy"][label] = acc_ref
            entry["n_support"][label] = int(len(ref.support_))
            entry[f"speedup_vs_{label}"] = t_ref / times[0]
        if onedal is None:
            rows.append(
                {"name": f"KernelSVC.fit vs oneDAL n={n}: not installed", "skipped": True}
            )
        if keep:
            record["rows"].append(entry)
            _save(record)  # after each size: a run stopped early keeps what finished
    return rows


def readme_table(record):
    """The README's table of the record: times, ratios (> 1: KernelSVC faster), objectives,
    accuracies and peak memory per size, and the machine it was measured on."""
    m = record["machine"]
    lines = [
        f"Measured {record['date']} on {m['cpu']} ({m['cores']} cores, "
        f"OMP_NUM_THREADS={m['threads']}, load average {m['load_average_at_start']:.1f} at "
        f"the start, {m['load_average_at_end']:.1f} at the end).",
        "",
        "| n | KernelSVC | LIBSVM | oneDAL | LIBSVM / ours | oneDAL / ours "
        "| dual objective (ours, LIBSVM, oneDAL) | test accuracy % "
        "| peak RSS MB (ours, LIBSVM, oneDAL) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]

    def each(values, fmt):
        return ", ".join(fmt(values[s]) if s in values else "–" for s in SOLVERS)

    for r in record["rows"]:
        t = r["fit_s"]
        lines.append(
            f"| {r['n']:,} | "
            + " | ".join(f"{t[s]:.1f} s" if s in t else "not installed" for s in SOLVERS)
            + " | "
            + " | ".join(
                f"{r[f'speedup_vs_{s}']:.2f}×" if f"speedup_vs_{s}" in r else "–"
                for s in SOLVERS[1:]
            )
            + f" | {each(r['dual_objective'], lambda v: f'{v:.2f}')}"
            + f" | {each(r['test_accuracy'], lambda v: f'{100 * v:.2f}')}"
            + f" | {each(r['peak_rss_bytes'], lambda v: f'{v / 2**20:.0f}')} |"
        )
    return "\n".join(lines)


def run(smoke=False):
    rows = kernel_rows(smoke)
    # Primal SVM on D random cosine features (lecture 003's algorithm) vs LIBLINEAR.
    n, D = (300, 50) if smoke else (10000, 500)
    X, y = _covtype(n + 2000, pool=2000 if smoke else 120_000)
    Xte = X[-2000:]
    gamma = 1.0 / X.shape[1]
    rng = np.random.default_rng(1)
    Omega = rng.normal(scale=np.sqrt(2 * gamma), size=(X.shape[1], D))
    b = rng.uniform(0, 2 * np.pi, D)
    Z = np.sqrt(2.0 / D) * np.cos(X[:n] @ Omega + b)
    Zte = np.sqrt(2.0 / D) * np.cos(Xte @ Omega + b)
    for loss in ("squared_hinge", "hinge"):
        ours = PrimalSVC(C=1.0, loss=loss, random_state=0)
        ref = LinearSVC(C=1.0, loss=loss, random_state=0)
        t_ours, t_ref = best_times(
            [lambda ours=ours: ours.fit(Z, y[:n]), lambda ref=ref: ref.fit(Z, y[:n])],
            1 if smoke else 2,
        )
        agree = np.mean(ours.predict(Zte) == ref.predict(Zte))
        rows.append(
            result(f"PrimalSVC.fit {loss} n={n} D={D} (agree {agree:.4f})", t_ours, t_ref, 1.0)
        )
    return [r for r in rows if not r.get("skipped")] if smoke else rows


if __name__ == "__main__":
    # the README's table, printed from the stored record (pasted, never typed)
    print(readme_table(json.loads(RECORD.read_text())))
