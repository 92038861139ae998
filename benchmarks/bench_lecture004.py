"""Lecture 004 at its own sizes: SVMs on Adult and Covertype, kernel PCA on 20 000 MNIST digits.

The slides of lecture 004 (Nyström method vs random Fourier features) train, on Adult (30 162
training and 15 060 test rows, binary) and Covertype (40 000 training and 10 000 test rows, 7
classes), an exact RBF SVM, a linear SVM on random Fourier features and a linear SVM on
Nyström features, with C and γ chosen by ``GridSearchCV`` over C ∈ {1, 10, 100, 1000},
γ ∈ {1, 0.1, 0.01, 0.001} on a small random subset; and they compare exact kernel PCA on
20 000 MNIST digits (589 s there) with PCA on 50 random Fourier or Nyström features
(0.68 s and 1.84 s), 10 components, by their explained-variance ratios. Book chapter 9 runs
the same study on 3000-row subsets within its time budget; this module runs it at the
lecture's sizes, each step in a fresh subprocess with its own time limit, so that a step
that does not finish is recorded as such and the others still run:

* ``grid``: ``GridSearchCV(sklearn.svm.SVC(), grid, cv=3)`` on ``grid_subset`` training rows;
* ``sklearn_svc`` (the LIBSVM reference) and ``kernel_svc`` (``kernelcourse.svm.KernelSVC``,
  SMO with a kernel-row cache): the exact RBF SVM on all training rows;
* ``rff_linear_svm`` and ``nystroem_linear_svm``: ``RandomFourierFeatures`` or ``Nystroem``
  with D = m components, then ``PrimalSVC`` (squared hinge, one-vs-rest), for each D;
* ``kernel_pca``: the 10 leading eigenpairs of the centred 20 000 × 20 000 RBF Gram matrix in
  float64 by Lanczos (``scipy.sparse.linalg.eigsh``), the matrix built block by block and
  centred in place (3.2 GB, no second copy);
* ``fourier_pca`` and ``nystroem_pca``: PCA with 10 components on 50 random features.

Accuracy, fit and predict time, explained variances, peak memory, the machine, the date and
the versions go to ``kernelcourse/benchmark_results/lecture004_sizes.json`` (read it with
``datasets.load_benchmark("lecture004_sizes")``); ``BENCH_LECTURE004_STEPS=step:data,...``
reruns only those steps and keeps the others. Smoke mode runs every step in-process on small
synthetic data and writes nothing. The printed rows compare each exact fit time with
the best approximate one (ratio > 1: the approximation is faster).
"""

from __future__ import annotations

import datetime
import json
import os
import pathlib
import resource
import subprocess
import sys
import time

import numpy as np

from kernelcourse.datasets import benchmark_results_dir

from ._timing import result

RESULTS = benchmark_results_dir() / "lecture004_sizes.json"
#: a full run takes most of an hour: `python -m benchmarks` runs it only when named
RUN_ONLY_WHEN_NAMED = True
SEED = 0
#: the lecture's hyper-parameter grid
GRID = {"C": [1, 10, 100, 1000], "gamma": [1, 0.1, 0.01, 0.001]}
#: the lecture's PCA numbers: 20 000 digits, 10 components, 50 random features
LECTURE_PCA = {
    "n_samples": 20_000,
    "n_random_features": 50,
    "explained_variance": {
        "kernel PCA": [0.04455248, 0.00388329, 0.00378083],
        "Fourier PCA": [0.05280394, 0.01386613, 0.01111522],
        "Nystroem PCA": [0.04452722, 0.00361673, 0.00343708],
    },
    "explained_variance_ratio": {
        "kernel PCA": [0.354843, 0.03092884, 0.03011284],
        "Fourier PCA": [0.36885661, 0.09686044, 0.07764426],
        "Nystroem PCA": [0.68685186, 0.05578958, 0.05301842],
    },
    "seconds": {"kernel PCA": 589.1665, "Fourier PCA": 0.6794, "Nystroem PCA": 1.8425},
}

FULL = {
    "sizes": {"adult": [30_162, 15_060], "covertype": [40_000, 10_000]},
    "grid_subset": 2000,
    "cv": 3,
    "components": [100, 300, 1000],
    "svc_cache_mb": 2048,
    "pca": {"n_samples": 20_000, "gamma": 0.02, "n_components": 10, "n_features": 50},
    #: wall-clock limit of each step, in seconds
    "timeouts": {
        "grid": 400,
        "approximate": 600,
        "sklearn_svc": 700,
        "kernel_svc": 500,
        "pca": 600,
    },
}
SMOKE = {
    "sizes": {"adult": [600, 300], "covertype": [600, 300]},
    "grid_subset": 150,
    "cv": 2,
    "components": [20, 40],
    "svc_cache_mb": 64,
    "pca": {"n_samples": 400, "gamma": 0.05, "n_components": 4, "n_features": 20},
    "timeouts": {},
}


# -- data ----------------------------------------------------------------------------------------
def real_data(name, settings):
    """The lecture's split of ``name`` ("adult" or "covertype"), or MNIST's first rows."""
    from kernelcourse import datasets

    if name == "adult":
        b = datasets.load_adult()
    elif name == "covertype":
        n_train, n_test = settings["sizes"]["covertype"]
        b = datasets.load_covertype(n_train=n_train, n_test=n_test, random_state=SEED)
    elif name == "mnist":
        b = datasets.load_mnist()
        idx = np.random.default_rng(SEED).permutation(len(b.X_train))
        X = b.X_train[idx[: settings["pca"]["n_samples"]]].astype(np.float64)
        return X, None, None, None
    else:
        raise ValueError(f"unknown data set {name!r}")
    n_train, n_test = settings["sizes"][name]
    return b.X_train[:n_train], b.y_train[:n_train], b.X_test[:n_test], b.y_test[:n_test]


def synthetic_data(name, settings):
    """Small stand-ins of the same kind (binary, 7 classes, digits-like) for smoke runs."""
    rng = np.random.default_rng(SEED)
    if name == "mnist":
        return rng.random((settings["pca"]["n_samples"], 16)), None, None, None
    n_train, n_test = settings["sizes"][name]
    X = rng.normal(size=(n_train + n_test, 6))
    if name == "adult":
        y = np.where(np.sin(2 * X[:, 0]) + X[:, 1] ** 2 > 1, 1, 0)
    else:
        y = np.digitize(X[:, 0] + np.sin(X[:, 1]), [-1.5, -1, -0.5, 0, 0.5, 1]) + 1
    return X[:n_train], y[:n_train], X[n_train:], y[n_train:]


# -- steps ---------------------------------------------------------------------------------------
def _timed(fn):
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def grid_search(X, y, settings):
    """The lecture's GridSearchCV of SVC over C and γ on a random subset of the training rows."""
    from sklearn.model_selection import GridSearchCV
    from sklearn.svm import SVC

    idx = np.random.default_rng(SEED).permutation(len(X))[: settings["grid_subset"]]
    search, seconds = _timed(
        lambda: GridSearchCV(SVC(), GRID, cv=settings["cv"]).fit(X[idx], y[idx])
    )
    return {
        "C": float(search.best_params_["C"]),
        "gamma": float(search.best_params_["gamma"]),
        "cv_accuracy": float(search.best_score_),
        "n_rows": int(len(idx)),
        "seconds": seconds,
    }


def exact_svm(which, X, y, Xt, yt, params, settings):
    """Exact RBF SVM: scikit-learn's SVC (LIBSVM) or the package's KernelSVC (SMO)."""
    if which == "sklearn_svc":
        from sklearn.svm import SVC

        model = SVC(C=params["C"], gamma=params["gamma"], cache_size=settings["svc_cache_mb"])
    else:
        from kernelcourse.svm import KernelSVC

        model = KernelSVC(
            C=params["C"], gamma=params["gamma"], cache_size=settings["svc_cache_mb"]
        )
    _, fit_s = _timed(lambda: model.fit(X, y))
    pred, predict_s = _timed(lambda: model.predict(Xt))
    return {
        "fit_s": fit_s,
        "predict_s": predict_s,
        "accuracy": float(np.mean(pred == yt)),
        "n_support": int(np.sum(model.n_support_)),
    }


def approximate_svm(which, X, y, Xt, yt, params, settings):
    """Random Fourier or Nyström features + linear SVM (PrimalSVC), one run per D = m."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning
    from sklearn.pipeline import make_pipeline

    from kernelcourse.features import Nystroem, RandomFourierFeatures, RankDeficiencyWarning
    from kernelcourse.svm import PrimalSVC

    make = RandomFourierFeatures if which == "rff_linear_svm" else Nystroem
    runs = []
    for D in settings["components"]:
        model = make_pipeline(
            make(gamma=params["gamma"], n_components=D, random_state=SEED),
            PrimalSVC(C=params["C"], loss="squared_hinge"),
        )
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ConvergenceWarning)
            warnings.simplefilter("always", RankDeficiencyWarning)
            _, fit_s = _timed(lambda model=model: model.fit(X, y))
        pred, predict_s = _timed(lambda model=model: model.predict(Xt))
        runs.append(
            {
                "n_components": D,
                "fit_s": fit_s,
                "predict_s": predict_s,
                "accuracy": float(np.mean(pred == yt)),
                "warnings": sorted({type(w.message).__name__ for w in caught}),
            }
        )
        print(f"  {which} D={D}: {runs[-1]}", flush=True)
    return {"runs": runs}


def _rbf_gram_centred(X, gamma, block=2000):
    """The centred RBF Gram matrix, built block by block and centred in place (one n × n)."""
    n = len(X)
    sq = np.einsum("ij,ij->i", X, X)
    K = np.empty((n, n))
    for i in range(0, n, block):
        D2 = sq[i : i + block, None] + sq[None, :] - 2.0 * (X[i : i + block] @ X.T)
        np.maximum(D2, 0.0, out=D2)
        np.exp(-gamma * D2, out=K[i : i + block])
    mean = K.mean(axis=0)
    K -= mean[None, :]
    K -= mean[:, None]
    K += mean.mean()
    return K


def kernel_pca(X, settings):
    """Exact kernel PCA: leading eigenvalues of K_c by Lanczos, variance = eigenvalue / n."""
    from scipy.sparse.linalg import eigsh

    p = settings["pca"]
    n = len(X)
    Kc, build_s = _timed(lambda: _rbf_gram_centred(X, p["gamma"]))
    total = float(np.trace(Kc)) / n
    vals, eig_s = _timed(
        lambda: eigsh(
            Kc, k=p["n_components"], which="LA", v0=np.ones(n), return_eigenvectors=False
        )
    )
    variances = np.sort(vals)[::-1] / n
    return {
        "fit_s": build_s + eig_s,
        "gram_s": build_s,
        "eigsh_s": eig_s,
        "explained_variance": variances.tolist(),
        "total_variance": total,
    }


def feature_pca(which, X, settings):
    """PCA with 10 components on 50 random Fourier or Nyström features of the digits."""
    from sklearn.decomposition import PCA

    from kernelcourse.features import Nystroem, RandomFourierFeatures

    p = settings["pca"]
    make = RandomFourierFeatures if which == "fourier_pca" else Nystroem
    n = len(X)

    def fit():
        Z = make(gamma=p["gamma"], n_components=p["n_features"], random_state=SEED).fit_transform(
            X
        )
        return Z, PCA(n_components=p["n_components"]).fit(Z)

    (Z, pca), seconds = _timed(fit)
    scale = (n - 1) / n  # PCA divides by n − 1, kernel PCA's eigenvalues by n
    return {
        "fit_s": seconds,
        "explained_variance": (pca.explained_variance_ * scale).tolist(),
        "explained_variance_ratio": pca.explained_variance_ratio_.tolist(),
        "feature_total_variance": float(np.sum(np.var(Z, axis=0))),
    }


def run_step(step, data, settings, choices, loader):
    """One step on one data set: returns the JSON-able outcome."""
    if step == "grid":
        X, y, _, _ = loader(data, settings)
        return grid_search(X, y, settings)
    if step in ("kernel_pca", "fourier_pca", "nystroem_pca"):
        X = loader("mnist", settings)[0]
        return kernel_pca(X, settings) if step == "kernel_pca" else feature_pca(step, X, settings)
    X, y, Xt, yt = loader(data, settings)
    params = choices[data]
    if step in ("sklearn_svc", "kernel_svc"):
        return exact_svm(step, X, y, Xt, yt, params, settings)
    return approximate_svm(step, X, y, Xt, yt, params, settings)


#: (step, data set, timeout key) in the order of the full run: cheap and certain first
PLAN = [
    ("grid", "adult", "grid"),
    ("grid", "covertype", "grid"),
    ("rff_linear_svm", "adult", "approximate"),
    ("nystroem_linear_svm", "adult", "approximate"),
    ("rff_linear_svm", "covertype", "approximate"),
    ("nystroem_linear_svm", "covertype", "approximate"),
    ("fourier_pca", "mnist", "pca"),
    ("nystroem_pca", "mnist", "pca"),
    ("kernel_pca", "mnist", "pca"),
    ("sklearn_svc", "adult", "sklearn_svc"),
    ("kernel_svc", "adult", "kernel_svc"),
    ("sklearn_svc", "covertype", "sklearn_svc"),
    ("kernel_svc", "covertype", "kernel_svc"),
]


def _worker(argv):
    """Subprocess entry: ``--worker STEP DATA CHOICES_JSON`` prints one JSON line."""
    step, data, choices = argv[0], argv[1], json.loads(argv[2])
    out = run_step(step, data, FULL, choices, real_data)
    out["peak_rss_bytes"] = int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
    print(json.dumps(out), flush=True)


def _save(record, path):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=2) + "\n")


def full_run(path=RESULTS, plan=PLAN):
    from .bench_scale import machine

    date = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    old = json.loads(path.read_text()) if path.exists() else {}
    redo = {(s, d) for s, d, _ in plan}
    record = {
        "date": date,
        "machine": machine(),
        "data": {
            "adult": "UCI Adult, rows with missing values dropped: 30 162 train / 15 060 test, "
            "104 features (one-hot categorical, standardized numeric), binary",
            "covertype": "UCI Covertype, seeded random split (load_covertype, seed 0): "
            "40 000 train / 10 000 test, 54 features, 7 classes",
            "mnist": "MNIST training digits, the first 20 000 of a seeded permutation "
            "(seed 0), pixels / 255",
        },
        "lecture": {"grid": GRID, "pca": LECTURE_PCA},
        "settings": FULL,
        "steps": [s for s in old.get("steps", []) if (s["step"], s["data"]) not in redo],
    }
    for step, data, limit in plan:
        choices = {
            s["data"]: {"C": s["result"]["C"], "gamma": s["result"]["gamma"]}
            for s in record["steps"]
            if s["step"] == "grid" and "result" in s
        }
        print(f"{step} on {data} (limit {FULL['timeouts'][limit]} s) ...", flush=True)
        entry = {
            "step": step,
            "data": data,
            "limit_s": FULL["timeouts"][limit],
            "started": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        }
        start = time.perf_counter()
        try:
            proc = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "benchmarks.bench_lecture004",
                    "--worker",
                    step,
                    data,
                    json.dumps(choices),
                ],
                capture_output=True,
                text=True,
                timeout=FULL["timeouts"][limit],
                cwd=pathlib.Path(__file__).parent.parent,
            )
            lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
            if lines:
                entry["result"] = json.loads(lines[-1])
            else:
                entry["error"] = f"exit code {proc.returncode}: {proc.stderr.strip()[-500:]}"
        except subprocess.TimeoutExpired:
            entry["error"] = f"did not finish within {FULL['timeouts'][limit]} s"
        entry["wall_s"] = time.perf_counter() - start
        entry["load_average_after"] = os.getloadavg()[0]
        print(json.dumps(entry), flush=True)
        record["steps"].append(entry)
        _save(record, path)
    record["machine"]["load_average_at_end"] = os.getloadavg()[0]
    _save(record, path)
    return record


def smoke_run():
    """Every step in-process on small synthetic data (nothing written)."""
    steps, choices = [], {}
    for step, data, _ in PLAN:
        out = run_step(step, data, SMOKE, choices, synthetic_data)
        if step == "grid":
            choices[data] = {"C": out["C"], "gamma": out["gamma"]}
        steps.append({"step": step, "data": data, "result": out})
    return {"steps": steps}


def _rows(record):
    """Exact fit time against the fastest approximate fit on the same data (ratio > 1: the
    approximation is faster)."""
    done = {(s["step"], s["data"]): s["result"] for s in record["steps"] if "result" in s}
    rows = []
    for data in ("adult", "covertype"):
        fast = [
            r["fit_s"]
            for which in ("rff_linear_svm", "nystroem_linear_svm")
            for r in done.get((which, data), {}).get("runs", [])
        ]
        for exact in ("sklearn_svc", "kernel_svc"):
            if fast and (exact, data) in done:
                rows.append(
                    result(
                        f"lecture 004 {data}: fastest approximate SVM vs {exact}",
                        min(fast),
                        done[exact, data]["fit_s"],
                        1.0,
                    )
                )
    if ("kernel_pca", "mnist") in done:
        for which in ("fourier_pca", "nystroem_pca"):
            if (which, "mnist") in done:
                rows.append(
                    result(
                        f"lecture 004 MNIST: {which} vs exact kernel PCA",
                        done[which, "mnist"]["fit_s"],
                        done["kernel_pca", "mnist"]["fit_s"],
                        1.0,
                    )
                )
    return rows


def run(smoke=False):
    if smoke:
        return _rows(smoke_run())
    # BENCH_LECTURE004_STEPS="kernel_svc:covertype,..." reruns only those steps, keeping the
    # record's other steps
    only = os.environ.get("BENCH_LECTURE004_STEPS")
    plan = PLAN
    if only:
        wanted = {tuple(item.split(":")) for item in only.split(",")}
        plan = [p for p in PLAN if (p[0], p[1]) in wanted]
    return _rows(full_run(plan=plan))


if __name__ == "__main__":
    if sys.argv[1:2] == ["--worker"]:
        _worker(sys.argv[2:])
    else:
        run(smoke="--smoke" in sys.argv)
