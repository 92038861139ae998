"""Kernel machines on a GPU: FALKON and random Fourier features on full Covertype, CUDA tensors.

Full mode (``python -m benchmarks gpu``, needs PyTorch with a CUDA device) runs on Rahimi &
Recht's Forest split, the one of the CPU record ``scale_covertype.json``:
``datasets.load_covertype(n_train=None, n_test=58102, random_state=0)``, 522 910 training and
58 102 test rows, the 10 numeric columns standardised with training statistics, float32 on the
GPU, ``sklearn.set_config(array_api_dispatch=True)``. It records:

* ``NystroemKRRClassifier`` (FALKON) on the binary task (cover type 2 against the rest) and on
  the 7-class task: fit time (after a small warm-up fit that pays CUDA's one-time start-up),
  predict time, peak GPU memory, CG iterations, final residual and test accuracy;
* ``RandomFourierFeatures`` + ridge at D = 20 000 on the binary task (the Fourier row of
  Rahimi & Recht, 88.4 % at D = 5 000): the features are made on the GPU block by block and
  the D × D normal equations are accumulated there;
* the KernelRidge, Nystroem and RandomFourierFeatures transforms on the GPU against the numpy
  path on the same machine's CPU, as ratios measured in one run.

Everything goes to ``kernelcourse/benchmark_results/gpu_covertype.json`` with the GPU's name,
the driver and library versions; chapter 11 reads it with ``datasets.load_benchmark``.

Bandwidths. The Gaussian kernel takes one γ_k per feature (``RBF(gamma=array)``), here
:math:`\\gamma_k = \\gamma f_k^2`: :math:`K(x, y) = \\exp(-\\gamma \\sum_k f_k^2 (x_k - y_k)^2)`.
The factors are those that validation chose for random binning in the CPU record (one factor
per numeric column and per one-hot block). ``--select`` then picks γ and λ, with and without the
factors, on a validation split of the training rows (the last 58 102 shuffled training rows;
the test rows are never used for a choice), at M = 20 000; the full fits use M = 50 000, whose
float64 preconditioner holds three M × M matrices (60 GB) at its peak.

Targets on one H100-class GPU: ≥ 94 % test accuracy on the binary task with a fit of ≤ 30 s.
Smoke mode runs the same code on a small synthetic problem with PyTorch on the CPU
(array-api-strict when PyTorch is missing), checks it against the numpy path and writes
nothing.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import pathlib
import subprocess
import time

import numpy as np

from kernelcourse.book.records import FOREST_TASKS_SHORT
from kernelcourse.datasets import benchmark_results_dir

from ._timing import result
from .bench_scale import N_TEST, N_VALIDATION, SEED, machine

# one fit's cached blocks are of other sizes than the next fit's: without expandable segments
# the caching allocator can hold tens of GB it cannot reuse (read before CUDA starts)
os.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")

RESULTS = benchmark_results_dir() / "gpu_covertype.json"
#: ``python -m benchmarks`` skips this module unless ``gpu`` is named: it needs a CUDA device
RUN_ONLY_WHEN_NAMED = True

#: settings of the full FALKON run; ``--select`` replaces gamma, lam and bandwidths
FULL = {
    "n_components": 50_000,
    "gamma": 0.1,
    "lam": 1e-7,
    "bandwidths": "binning",
    "max_iter": 20,
    "seed": SEED,
}
#: the grid of ``--select`` (bandwidths, γ, λ) and the M it is evaluated at
GRID = [("standardised", g, lam) for g in (0.1, 0.3) for lam in (1e-7,)] + [
    ("binning", g, lam) for g in (0.03, 0.1, 0.3) for lam in (1e-6, 1e-7)
]
SELECT_CENTERS = 20_000
RFF = {"n_components": 20_000, "gamma": 0.1, "lam": 1e-6, "block_size": 50_000}
TASKS = ("binary", "multiclass")
TARGET = {"binary_accuracy": 0.94, "fit_s": 30.0}


def _torch_cuda():
    try:
        import torch
    except ImportError:
        return None
    return torch if torch.cuda.is_available() else None


def _namespace(smoke):
    """(convert, synchronize, peak-memory reset/read, description) for the run's arrays."""
    torch = _torch_cuda()
    if torch is not None and not smoke:
        dev = torch.device("cuda")
        return (
            lambda a: torch.asarray(a, device=dev),
            lambda: torch.cuda.synchronize(dev),
            (
                # each fit starts from an empty cache, as in a fresh process
                lambda: (torch.cuda.empty_cache(), torch.cuda.reset_peak_memory_stats(dev)),
                lambda: torch.cuda.max_memory_allocated(dev),
            ),
            {"library": "torch", "device": "cuda", "gpu": torch.cuda.get_device_name(dev)},
        )
    if not smoke:
        raise RuntimeError(
            "the GPU benchmark needs PyTorch with a CUDA device (torch.cuda.is_available() is "
            "False); run `python -m benchmarks gpu --smoke` for the CPU check of the script."
        )
    try:
        import torch

        return (
            lambda a: torch.asarray(a),
            lambda: None,
            (lambda: None, lambda: 0),
            {"library": "torch", "device": "cpu"},
        )
    except ImportError:
        import array_api_strict as xs

        return xs.asarray, lambda: None, (lambda: None, lambda: 0), {"library": "array_api_strict"}


def _targets(task, y):
    return np.where(y == 2, 1, -1) if task == "binary" else y


def binning_bandwidths():
    """The per-feature factors f_k that validation chose for random binning in the CPU record
    (γ_k / γ of its Laplacian kernel), one per column of Covertype."""
    from kernelcourse.datasets import load_benchmark

    chosen = load_benchmark("scale_covertype")["validation"]["binning"]
    gamma = np.asarray(chosen["chosen"]["gamma"], dtype=np.float64)
    return gamma / float(chosen["base_gamma"])


def forest_split(dtype=np.float32):
    """Rahimi & Recht's Forest split of the CPU record, as ``dtype`` arrays."""
    from kernelcourse.datasets import load_covertype

    data = load_covertype(n_train=None, n_test=N_TEST, random_state=SEED)
    return (
        data.X_train.astype(dtype),
        data.y_train,
        data.X_test.astype(dtype),
        data.y_test,
    )


def ard_gamma(gamma, bandwidths, factors):
    """γ for the standardised columns, or one γ_k = γ f_k² per column (the RBF kernel's
    per-feature form) for the binning factors."""
    return gamma if bandwidths == "standardised" else (gamma * factors**2).tolist()


def _fit_predict(model, Xtr, ytr, Xte, sync, memory):
    """Fit and predict ``model`` with array-API dispatch; times, peak memory, predictions."""
    import sklearn

    from kernelcourse._array_api import to_numpy

    reset_peak, read_peak = memory
    # scikit-learn allows array-API dispatch only with scipy's switch set
    os.environ.setdefault("SCIPY_ARRAY_API", "1")
    with sklearn.config_context(array_api_dispatch=True):
        sync()
        reset_peak()
        start = time.perf_counter()
        model.fit(Xtr, ytr)
        sync()
        fit_s = time.perf_counter() - start
        start = time.perf_counter()
        pred = to_numpy(model.predict(Xte))
        sync()
        predict_s = time.perf_counter() - start
    return fit_s, predict_s, int(read_peak()), pred


def evaluate(task, X_train, y_train, X_test, y_test, convert, sync, memory, **params):
    """FALKON on device arrays: fit time, predict time, peak memory, accuracy, CG record."""
    from kernelcourse._array_api import to_numpy
    from kernelcourse.scale import NystroemKRRClassifier

    seed = params.pop("seed")
    stamps = []

    def stamp(iteration, alpha, residual):  # where the fit's time goes: set-up against CG
        sync()
        stamps.append(time.perf_counter())

    model = NystroemKRRClassifier(dtype=np.float32, random_state=seed, callback=stamp, **params)
    start = time.perf_counter()
    fit_s, predict_s, peak, pred = _fit_predict(
        model, convert(X_train), convert(_targets(task, y_train)), convert(X_test), sync, memory
    )
    history = to_numpy(model.history_)
    return {
        "fit_s": fit_s,
        # from the fit's start to the end of the first CG iteration (centres, K_MM, the
        # preconditioner's two Cholesky factors, K_nMᵀy and one pass), then per iteration
        "to_first_iteration_s": stamps[0] - start if stamps else None,
        "per_iteration_s": (stamps[-1] - stamps[0]) / (len(stamps) - 1)
        if len(stamps) > 1
        else None,
        "predict_s": predict_s,
        "peak_device_bytes": peak,
        "accuracy": float(np.mean(pred == _targets(task, y_test))),
        "n_iter": int(model.n_iter_),
        "final_residual": float(history[-1]),
    }


def select(X, y, factors, convert, sync, memory, task="binary"):
    """Bandwidths, γ and λ with the best validation accuracy on the last N_VALIDATION
    training rows, at M = SELECT_CENTERS; every trial is returned."""
    fit, val = slice(None, len(X) - N_VALIDATION), slice(len(X) - N_VALIDATION, None)
    trials = []
    for bandwidths, gamma, lam in GRID:
        out = evaluate(
            task, X[fit], y[fit], X[val], y[val], convert, sync, memory,
            n_components=SELECT_CENTERS, gamma=ard_gamma(gamma, bandwidths, factors), lam=lam,
            max_iter=FULL["max_iter"], seed=SEED,
        )  # fmt: skip
        trials.append(
            {"bandwidths": bandwidths, "gamma": gamma, "lam": lam,
             "validation_accuracy": out["accuracy"], "fit_s": out["fit_s"]}
        )  # fmt: skip
        print(f"  select {bandwidths} γ={gamma:g} λ={lam:g}: {json.dumps(out)}", flush=True)
    best = max(trials, key=lambda t: t["validation_accuracy"])
    return best, trials


def rff_ridge(X_train, y_train, X_test, y_test, convert, sync, memory, settings=RFF):
    r"""Random Fourier features + ridge on the GPU: :math:`(Z^TZ + \lambda n I)w = Z^T(y -
    \bar y)`, Z made block by block from the fitted transformer and never held whole; the
    D × D system is solved by the package's Cholesky with jitter and triangular solves."""
    import sklearn

    from kernelcourse import _array_api as aa
    from kernelcourse._array_api import to_numpy
    from kernelcourse.features import RandomFourierFeatures
    from kernelcourse.solvers import cholesky_jitter

    reset_peak, read_peak = memory
    os.environ.setdefault("SCIPY_ARRAY_API", "1")
    Xtr, Xte = convert(X_train), convert(X_test)
    y = _targets("binary", y_train).astype(np.float64)
    y_mean = float(y.mean())
    yc = convert(y - y_mean)
    step = settings["block_size"]
    with sklearn.config_context(array_api_dispatch=True):
        sync()
        reset_peak()
        start = time.perf_counter()
        rff = RandomFourierFeatures(
            gamma=settings["gamma"], n_components=settings["n_components"],
            random_state=SEED, dtype=np.float32,
        ).fit(Xtr)  # fmt: skip
        xp = aa.namespace_of(Xtr)
        D = settings["n_components"]
        G = xp.zeros((D, D), dtype=xp.float64, device=aa.device_of(Xtr))
        r = xp.zeros((D, 1), dtype=xp.float64, device=aa.device_of(Xtr))
        n = Xtr.shape[0]
        for i in range(0, n, step):
            j = min(i + step, n)  # the array API leaves out-of-range slice ends unspecified
            Z = rff.transform(Xtr[i:j, :])
            G += xp.astype(Z.T @ Z, xp.float64)
            r += xp.astype(Z.T @ xp.astype(yc[i:j, None], Z.dtype), xp.float64)
        T, _ = cholesky_jitter(
            aa.add_to_diagonal(G, settings["lam"] * Xtr.shape[0], xp), xp=xp, name="Z^T Z + λnI"
        )
        w = aa.solve_triangular(T, aa.solve_triangular(T, r, xp, transpose=True), xp)
        sync()
        fit_s = time.perf_counter() - start
        start = time.perf_counter()
        w32 = xp.astype(w, xp.float32)
        m = Xte.shape[0]
        scores = [
            rff.transform(Xte[i : min(i + step, m), :]) @ w32 for i in range(0, m, step)
        ]
        pred = np.where(to_numpy(xp.concat(scores, axis=0))[:, 0] + y_mean >= 0, 1, -1)
        sync()
        predict_s = time.perf_counter() - start
    return {
        "task": "binary",
        "method": "rff_ridge",
        **{k: settings[k] for k in ("n_components", "gamma", "lam")},
        "fit_s": fit_s,
        "predict_s": predict_s,
        "peak_device_bytes": int(read_peak()),
        "accuracy": float(np.mean(pred == _targets("binary", y_test))),
    }


def _best_time(fn, sync, repeat=2):
    fn()  # warm-up: compilation, CUDA handles, caches
    sync()
    best = np.inf
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        sync()
        best = min(best, time.perf_counter() - start)
    return best


def _time_both(make, A, b, work, convert, sync):
    """Best-of-two times of ``work`` on the host arrays and on their device copies; with
    ``work=None``, of ``transform`` alone on a model fitted beforehand on each side."""
    import sklearn

    dev_A = convert(A)
    dev_b = None if b is None else convert(b)
    if work is None:
        host_model = make().fit(A)
        cpu_s = _best_time(lambda: host_model.transform(A), lambda: None)
        with sklearn.config_context(array_api_dispatch=True):
            dev_model = make().fit(dev_A)
            gpu_s = _best_time(lambda: dev_model.transform(dev_A), sync)
        return cpu_s, gpu_s
    cpu_s = _best_time(lambda: work(make(), A, b), lambda: None)
    with sklearn.config_context(array_api_dispatch=True):
        gpu_s = _best_time(lambda: work(make(), dev_A, dev_b), sync)
    return cpu_s, gpu_s


def device_ratios(X, convert, sync):
    """The estimators' device path against their numpy path on this machine's CPU, timed
    alternately in one run: KernelRidge fit + predict, Nystroem fit + transform,
    RandomFourierFeatures transform (float32)."""

    from kernelcourse.features import Nystroem, RandomFourierFeatures
    from kernelcourse.ridge import KernelRidge

    os.environ.setdefault("SCIPY_ARRAY_API", "1")
    y = np.sin(X[:, 0]).astype(X.dtype)
    cases = {
        "KernelRidge fit + predict, n = 20 000": (
            lambda: KernelRidge(kernel="rbf", gamma=0.1, lam=1e-3),
            X[:20_000].astype(np.float64), y[:20_000].astype(np.float64),
            lambda m, A, b: m.fit(A, b).predict(A),
        ),
        "Nystroem fit + transform, n = 200 000, m = 2 000": (
            lambda: Nystroem(gamma=0.1, n_components=2000, random_state=0),
            X[:200_000], None, lambda m, A, b: m.fit(A).transform(A),
        ),
        "RandomFourierFeatures transform, n = 200 000, D = 5 000, float32": (
            lambda: RandomFourierFeatures(gamma=0.1, n_components=5000, random_state=0),
            X[:200_000], None, None,
        ),
    }  # fmt: skip
    rows = []
    for name, (make, A, b, work) in cases.items():
        cpu_s, gpu_s = _time_both(make, A, b, work, convert, sync)
        rows.append({"case": name, "cpu_s": cpu_s, "gpu_s": gpu_s, "speedup": cpu_s / gpu_s})
        print(f"  {name}: CPU {cpu_s:.3f} s, GPU {gpu_s:.4f} s, {cpu_s / gpu_s:.1f}×", flush=True)
    return rows


def _versions(info):
    import array_api_compat
    import sklearn

    out = {"array_api_compat": array_api_compat.__version__, "sklearn": sklearn.__version__}
    if info["library"] == "torch":
        import torch

        out["torch"] = torch.__version__
    if info.get("device") == "cuda":
        out["cuda"] = torch.version.cuda
        try:
            out["driver"] = subprocess.run(
                ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                capture_output=True, text=True, check=True,
            ).stdout.strip()  # fmt: skip
        except (OSError, subprocess.CalledProcessError):
            out["driver"] = "unknown"
        props = torch.cuda.get_device_properties(0)
        out["gpu_memory_gb"] = round(props.total_memory / 2**30, 1)
        out["cpu_threads"] = os.cpu_count()
    return out


def full_run(
    settings=None, do_select=False, path=RESULTS, parts=("falkon", "rff", "ratios"), tasks=TASKS
):
    settings = dict(FULL if settings is None else settings)
    convert, sync, memory, info = _namespace(smoke=False)
    X_train, y_train, X_test, y_test = forest_split()
    factors = binning_bandwidths()
    # warm-up: CUDA context, cuBLAS and cuSOLVER handles are created once per process
    evaluate(
        "binary", X_train[:4000], y_train[:4000], X_test[:1000], y_test[:1000], convert, sync,
        memory, n_components=500, gamma=0.1, lam=1e-6, max_iter=3, seed=SEED,
    )  # fmt: skip
    record = {
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": {**machine(), **info, **_versions(info)},
        "data": {
            "name": "UCI Covertype (complete)",
            "n_train": len(X_train),
            "n_test": len(X_test),
            "n_features": X_train.shape[1],
            "split": "Rahimi & Recht's sizes, the seeded split of the CPU record "
            f"(load_covertype, seed {SEED}); 10 numeric columns standardised",
        },
        "targets": TARGET,
        "runs": [],
    }

    def save():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(record, indent=2) + "\n")

    if do_select:
        best, trials = select(X_train, y_train, factors, convert, sync, memory)
        settings.update(bandwidths=best["bandwidths"], gamma=best["gamma"], lam=best["lam"])
        record["selection"] = {
            "n_components": SELECT_CENTERS,
            "n_validation": N_VALIDATION,
            "trials": trials,
            "chosen": {k: best[k] for k in ("bandwidths", "gamma", "lam")},
        }
    record["settings"] = {
        **settings,
        "bandwidth_factors": factors.tolist() if settings["bandwidths"] == "binning" else None,
        "dtype": "float32 kernel blocks, float64 preconditioner",
        "rff": RFF,
    }
    if "falkon" in parts:
        params = {k: settings[k] for k in ("n_components", "lam", "max_iter", "seed")}
        params["gamma"] = ard_gamma(settings["gamma"], settings["bandwidths"], factors)
        for task in tasks:
            print(f"{task} nystroem_falkon on {info.get('gpu', info['device'])} ...", flush=True)
            run = evaluate(task, X_train, y_train, X_test, y_test, convert, sync, memory, **params)
            run.update(task=task, method="nystroem_falkon")
            print(json.dumps(run), flush=True)
            record["runs"].append(run)
            save()
    if "rff" in parts:
        run = rff_ridge(X_train, y_train, X_test, y_test, convert, sync, memory)
        print(json.dumps(run), flush=True)
        record["runs"].append(run)
        save()
    if "ratios" in parts:
        record["device_vs_cpu"] = device_ratios(X_train, convert, sync)
        save()
    return record


def _rows(runs, budget=TARGET["fit_s"]):
    """One row per run: the fit time against the time budget (ratio ≥ 1: within it)."""
    return [
        result(
            f"Covertype {r['task']} {r['method']} on GPU (acc {r['accuracy']:.4f})",
            r["fit_s"],
            budget,
            1.0,
        )
        for r in runs
        if "fit_s" in r
    ]


def smoke_run():
    """The full run's code on 1 500 synthetic rows with CPU arrays, checked against numpy."""
    from kernelcourse.scale import NystroemKRRClassifier

    convert, sync, memory, info = _namespace(smoke=True)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1500, 8)).astype(np.float32)
    y = 1 + (X[:, 0] > 0) + 2 * (X[:, 1] > 0.5)
    X_train, y_train, X_test, y_test = X[:1200], y[:1200], X[1200:], y[1200:]
    params = {"n_components": 100, "gamma": 0.1, "lam": 1e-4, "max_iter": 15, "seed": 0}
    rows = []
    for task in TASKS:
        out = evaluate(task, X_train, y_train, X_test, y_test, convert, sync, memory, **params)
        start = time.perf_counter()
        ref = NystroemKRRClassifier(
            dtype=np.float32, random_state=0, **{k: v for k, v in params.items() if k != "seed"}
        ).fit(X_train, _targets(task, y_train))
        numpy_s = time.perf_counter() - start
        ref_acc = float(np.mean(ref.predict(X_test) == _targets(task, y_test)))
        if abs(ref_acc - out["accuracy"]) > 0.01:
            raise AssertionError(
                f"{info['library']} accuracy {out['accuracy']:.4f} differs from the numpy "
                f"path's {ref_acc:.4f} by more than 0.01"
            )
        rows.append(result(f"smoke {task} on {info['library']}", out["fit_s"], numpy_s, 1e-3))
    if info["library"] == "torch":
        small = {"n_components": 300, "gamma": 0.1, "lam": 1e-6, "block_size": 500}
        out = rff_ridge(X_train, y_train, X_test, y_test, convert, sync, memory, small)
        if out["accuracy"] < 0.6:
            raise AssertionError(f"RFF ridge smoke accuracy {out['accuracy']:.3f} < 0.6")
        rows.append(result("smoke rff_ridge on torch", out["fit_s"], out["fit_s"], 1e-3))
    return rows


def run(smoke=False):
    if smoke:
        return smoke_run()
    return _rows(full_run(do_select=True)["runs"])


def readme_table(record):
    """The README's table of the GPU record: each run's setting, accuracy, fit and predict
    time and peak GPU memory, the device-against-CPU ratios, and where it was measured."""
    m = record["machine"]
    st = record["settings"]
    lines = [
        f"Measured {record['date']} on one {m['gpu']} ({m['gpu_memory_gb']:.0f} GiB; driver "
        f"{m['driver']}, CUDA {m['cuda']}, PyTorch {m['torch']}), float32 on the GPU; the CPU "
        f"side of the ratios is the same machine's {m['cpu']} ({m['cores']} cores).",
        "",
        "| run | task | setting | test accuracy | fit | predict | peak GPU memory |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in record["runs"]:
        if r["method"] == "nystroem_falkon":
            name = "NystroemKRRClassifier (FALKON)"
            setting = (
                f"M = {st['n_components']:,}, γ = {st['gamma']:g}"
                + (" × per-feature factors" if st["bandwidths"] == "binning" else "")
                + f", λ = {st['lam']:g}, {st['max_iter']} CG iterations"
            )
        else:
            name = "RandomFourierFeatures + ridge"
            setting = f"D = {r['n_components']:,}, γ = {r['gamma']:g}, λ = {r['lam']:g}"
        task = FOREST_TASKS_SHORT[r["task"]]
        lines.append(
            f"| {name} | {task} | {setting} | {100 * r['accuracy']:.2f} % | {r['fit_s']:.1f} s "
            f"| {r['predict_s']:.2f} s | {r['peak_device_bytes'] / 2**30:.1f} GiB |"
        )
    if record.get("device_vs_cpu"):
        lines += ["", "| on the GPU against numpy on the CPU | CPU | GPU | CPU time / GPU time |",
                  "|---|---|---|---|"]  # fmt: skip
        for c in record["device_vs_cpu"]:
            lines.append(
                f"| {c['case']} | {c['cpu_s']:.3f} s | {c['gpu_s']:.4f} s | {c['speedup']:.1f}× |"
            )
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument(
        "--no-select", action="store_true", help="skip the validation of bandwidths, γ and λ"
    )
    parser.add_argument("--n-components", type=int, default=FULL["n_components"])
    parser.add_argument("--gamma", type=float, default=FULL["gamma"])
    parser.add_argument("--lam", type=float, default=FULL["lam"])
    parser.add_argument("--bandwidths", choices=("binning", "standardised"),
                        default=FULL["bandwidths"])  # fmt: skip
    parser.add_argument("--max-iter", type=int, default=FULL["max_iter"])
    parser.add_argument("--parts", default="falkon,rff,ratios")
    parser.add_argument("--tasks", default=",".join(TASKS), help="FALKON's tasks, of " + str(TASKS))
    parser.add_argument("--output", type=pathlib.Path, default=RESULTS, help="the record's path")
    parser.add_argument(
        "--table", action="store_true", help="print the README's table of the stored record"
    )
    args = parser.parse_args(argv)
    if args.table:
        print(readme_table(json.loads(RESULTS.read_text())))
        return
    if args.smoke:
        rows = smoke_run()
    else:
        settings = {
            "n_components": args.n_components, "gamma": args.gamma, "lam": args.lam,
            "bandwidths": args.bandwidths, "max_iter": args.max_iter, "seed": FULL["seed"],
        }  # fmt: skip
        record = full_run(
            settings,
            do_select=not args.no_select,
            path=args.output,
            parts=tuple(args.parts.split(",")),
            tasks=tuple(args.tasks.split(",")),
        )
        rows = _rows(record["runs"])
    for r in rows:
        print(f"{r['name']}: {r['ours_s']:.2f} s (reference {r['reference_s']:.2f} s)")


if __name__ == "__main__":
    main()
