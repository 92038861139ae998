"""Large-scale kernel ridge on full Covertype: Nystroem-FALKON vs sklearn Nystroem+RidgeClassifier.

Full mode loads the 581 012 rows of Covertype, makes a seeded 80/20 split, standardises with the
training statistics, and trains three models for the binary task (class 2 vs rest) and the
7-class task, each in a fresh subprocess so that its peak memory can be measured:

* ``NystroemKRRClassifier`` (M centres, FALKON preconditioner, one data pass for K_nMᵀK_nM);
* scikit-learn ``Nystroem(n_components=M)`` + ``RidgeClassifier(alpha=λn)``: the same model
  with the features materialised as an n × M array;
* ``StreamingFeatureRidge`` on M random Fourier features, trained block by block.

Time, peak memory (tracemalloc during fit, and the process's ``ru_maxrss``) and test accuracy go
to ``kernelcourse/benchmark_results/scale_covertype.json`` with the machine and the date; the
file ships with the package and chapter 11 reads it with ``datasets.load_benchmark``. Smoke
mode runs the same code on tiny synthetic data in-process and writes nothing.
"""

from __future__ import annotations

import datetime
import json
import os
import pathlib
import platform
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc

import numpy as np

from kernelcourse.datasets import benchmark_results_dir

from ._timing import result

RESULTS = benchmark_results_dir() / "scale_covertype.json"

#: settings of the full run (γ and λ chosen on a 60 000-row subset, see chapter 11)
FULL = {"n_centers": 1000, "gamma": 0.05, "lam": 1e-6, "maxiter": 50, "seed": 0}
METHODS = ("nystroem_falkon", "sklearn_nystroem_ridge", "streaming_rff_ridge")
TASKS = ("binary", "multiclass")
# the sklearn pipeline materialises an n × M float64 array; cap the address space of its
# subprocess so that an out-of-memory run fails cleanly instead of hurting the machine
ADDRESS_SPACE_CAP = 10 * 2**30


def split_and_scale(X, y, seed=0, test_fraction=0.2):
    """Seeded random split; features standardised with the training mean and deviation."""
    perm = np.random.default_rng(seed).permutation(len(X))
    n_test = int(round(test_fraction * len(X)))
    test, train = perm[:n_test], perm[n_test:]
    mu = X[train].mean(axis=0)
    sd = X[train].std(axis=0)
    sd[sd == 0] = 1.0
    scale = lambda A: ((A - mu) / sd).astype(np.float32)  # noqa: E731
    return scale(X[train]), y[train], scale(X[test]), y[test]


def make_model(method, task, n_train, *, n_centers, gamma, lam, maxiter, seed):
    """The three estimators compared, with the same M, γ and λ (α = λ n for sklearn's ridge)."""
    from sklearn.kernel_approximation import Nystroem
    from sklearn.linear_model import RidgeClassifier
    from sklearn.pipeline import make_pipeline

    from kernelcourse.features import RandomFourierFeatures
    from kernelcourse.scale import NystroemKRRClassifier, StreamingFeatureRidge

    if method == "nystroem_falkon":
        return NystroemKRRClassifier(
            gamma=gamma,
            lam=lam,
            n_centers=n_centers,
            maxiter=maxiter,
            precompute=True,
            dtype="float32",
            random_state=seed,
        )
    if method == "sklearn_nystroem_ridge":
        return make_pipeline(
            Nystroem(gamma=gamma, n_components=n_centers, random_state=seed),
            RidgeClassifier(alpha=lam * n_train),
        )
    if method == "streaming_rff_ridge":
        features = RandomFourierFeatures(gamma=gamma, n_components=n_centers, random_state=seed)
        return StreamingFeatureRidge(features, lam=lam, block_size=20000)
    raise ValueError(f"unknown method {method!r}")


def _targets(method, task, y):
    if task == "binary":
        y = np.where(y == 2, 1, -1)
    if method == "streaming_rff_ridge":  # a regressor: ±1 codes, one column per class
        if task == "binary":
            return y.astype(np.float64)
        classes = np.unique(y)
        return np.where(y[:, None] == classes[None, :], 1.0, -1.0)
    return y


def _predict(method, task, model, X, classes):
    if method != "streaming_rff_ridge":
        return model.predict(X)
    scores = model.predict(X)
    if task == "binary":
        return np.where(scores > 0, 1, -1)
    return classes[np.argmax(scores, axis=1)]


def evaluate(method, task, X_train, y_train, X_test, y_test, **params):
    """Fit one model and measure wall-clock time, tracemalloc peak and test accuracy."""
    model = make_model(method, task, len(X_train), **params)
    target = _targets(method, task, y_train)
    tracemalloc.start()
    start = time.perf_counter()
    model.fit(X_train, target)
    fit_s = time.perf_counter() - start
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    truth = np.where(y_test == 2, 1, -1) if task == "binary" else y_test
    start = time.perf_counter()
    pred = _predict(method, task, model, X_test, np.unique(y_train))
    predict_s = time.perf_counter() - start
    out = {
        "fit_s": fit_s,
        "predict_s": predict_s,
        "fit_peak_traced_bytes": int(peak),
        "accuracy": float(np.mean(pred == truth)),
    }
    if hasattr(model, "n_iter_"):
        out["n_iter"] = int(model.n_iter_)
        out["final_residual"] = float(model.history_[-1])
    return out


def _worker(argv):
    """Subprocess entry: ``--worker DATA_DIR METHOD TASK`` prints one JSON line."""
    data_dir, method, task = argv
    d = pathlib.Path(data_dir)
    arrays = [np.load(d / f"{k}.npy") for k in ("X_train", "y_train", "X_test", "y_test")]
    if method == "sklearn_nystroem_ridge":
        resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE_CAP, ADDRESS_SPACE_CAP))
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    try:
        out = evaluate(
            method,
            task,
            *arrays,
            **{k: v for k, v in FULL.items() if k != "seed"},
            seed=FULL["seed"],
        )
    except MemoryError as err:
        out = {"error": f"MemoryError under a {ADDRESS_SPACE_CAP / 2**30:.0f} GB cap: {err}"}
    out["rss_after_loading_bytes"] = int(rss_before)
    out["peak_rss_bytes"] = int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
    print(json.dumps(out), flush=True)


def machine():
    cpu = platform.processor()
    try:
        for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    import scipy
    import sklearn

    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "threads": os.environ.get("OMP_NUM_THREADS", "unset"),
        "memory_gb": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "sklearn": sklearn.__version__,
        "load_average_at_start": os.getloadavg()[0],
    }


def full_run(path=RESULTS, methods=METHODS):
    """Run ``methods`` on both tasks; runs of other methods already in ``path`` are kept."""
    from kernelcourse.datasets import load_covertype_full

    X, y = load_covertype_full(dtype=np.float32)
    X_train, y_train, X_test, y_test = split_and_scale(X, y, seed=FULL["seed"])
    del X, y
    record = {
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": machine(),
        "data": {
            "name": "UCI Covertype (complete)",
            "n_train": len(X_train),
            "n_test": len(X_test),
            "n_features": X_train.shape[1],
            "split": f"seeded random 80/20 (seed {FULL['seed']}), standardised",
        },
        "settings": FULL,
        "runs": [],
    }
    if path.exists() and set(methods) != set(METHODS):
        kept = json.loads(path.read_text())["runs"]
        record["runs"] = [r for r in kept if r["method"] not in methods]
    with tempfile.TemporaryDirectory() as tmp:
        for name, arr in zip(
            ("X_train", "y_train", "X_test", "y_test"),
            (X_train, y_train, X_test, y_test),
            strict=True,
        ):
            np.save(pathlib.Path(tmp) / f"{name}.npy", arr)
        for task in TASKS:
            for method in methods:
                print(f"{task} {method} ...", flush=True)
                proc = subprocess.run(
                    [sys.executable, "-m", "benchmarks.bench_scale", "--worker", tmp, method, task],
                    capture_output=True,
                    text=True,
                    cwd=pathlib.Path(__file__).parent.parent,
                )
                lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
                run = (
                    json.loads(lines[-1])
                    if lines
                    else {"error": f"exit code {proc.returncode}: {proc.stderr.strip()[-500:]}"}
                )
                run.update(task=task, method=method, date=record["date"])
                print(json.dumps(run), flush=True)
                record["runs"].append(run)
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(json.dumps(record, indent=2) + "\n")
    return record


def _rows(runs):
    rows = []
    for task in TASKS:
        ours = next(r for r in runs if r["task"] == task and r["method"] == "nystroem_falkon")
        ref = next(r for r in runs if r["task"] == task and r["method"] == "sklearn_nystroem_ridge")
        if "fit_s" in ours and "fit_s" in ref:
            rows.append(
                result(
                    f"Covertype {task}: FALKON vs sklearn Nystroem+Ridge",
                    ours["fit_s"],
                    ref["fit_s"],
                    1.0,
                )
            )
    return rows


def run(smoke=False):
    if not smoke:
        only = os.environ.get("BENCH_SCALE_METHODS")
        record = full_run(methods=tuple(only.split(",")) if only else METHODS)
        return _rows(record["runs"])
    rng = np.random.default_rng(0)
    n, d = 1200, 8
    X = rng.normal(size=(n, d))
    y = 1 + (X[:, 0] > 0) + (X[:, 1] > 0.5) * 2  # four classes
    y = np.where(y == 4, 2, y)
    X_train, y_train, X_test, y_test = split_and_scale(X, y, seed=0)
    params = {"n_centers": 60, "gamma": 0.1, "lam": 1e-4, "maxiter": 10, "seed": 0}
    runs = []
    for task in TASKS:
        for method in METHODS:
            out = evaluate(method, task, X_train, y_train, X_test, y_test, **params)
            out.update(task=task, method=method)
            runs.append(out)
    return _rows(runs)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--worker"]:
        _worker(sys.argv[2:])
    else:
        run(smoke="--smoke" in sys.argv)
