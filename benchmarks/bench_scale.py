"""Rahimi & Recht's Forest row on full Covertype: the kernel methods against the tree models.

The task of Rahimi & Recht (2007), Table 1, "Forest": cover type 2 against the rest, 522 910
training and 58 102 test points (the Core Vector Machine split; here a seeded split of the
same sizes by ``datasets.load_covertype(n_train=None, n_test=58102, random_state=0)``, the 10
numeric columns standardized with training statistics). Methods, each in a fresh subprocess
so that its peak memory (the kernel's high-water mark ``VmHWM`` of its address space) is
its own:

* ``random_binning_ridge``: ``FeatureRidge(RandomBinningFeatures(γ, P))``, solved by
  block-Jacobi CG on the cell indices; γ and λ, then one bandwidth factor per feature group
  (the Laplacian kernel with a γ_k per column), then P, chosen by validation on the training
  set (the last 58 102 shuffled training rows held out), every trial and the choice recorded;
* ``rff_ridge``: ``StreamingFeatureRidge`` on D random Fourier features (D as large as the
  5-minute budget allows on two cores); γ chosen on a training subset;
* ``nystroem_falkon``: ``NystroemKRRClassifier``, the Gaussian kernel with a γ_k per feature
  (binning's validated factor per feature group, squared, times a validated scale) and λ
  chosen on a training subset, then the largest M the budget allows (Rudi et al. ask for
  M ≳ √n log n); ``nystroem_falkon_200k`` is the same model with M = 2000 on the first
  200 000 training rows;
* ``rff_linear_svm``: the lecture-004 pipeline, random Fourier features + linear SVM
  (``PrimalSVC``);
* ``sgd_out_of_core``: ``FeatureSGDClassifier`` (strategy ⑤) fed by
  ``datasets.iter_covertype_chunks`` from the compressed file, never holding X; the same
  Fourier features as ``rff_ridge``, so its accuracy compares with the in-memory ridge.
* the tree ensembles practitioners use on tabular data, scikit-learn's
  ``HistGradientBoostingClassifier``, ``RandomForestClassifier`` and ``ExtraTreesClassifier``,
  their main settings validated on the same held-out rows (:func:`validate_trees`).

A second task, all seven cover types on the same split (lecture 004's task at full size),
runs random binning (``FeatureRidgeClassifier``: the seven one-vs-rest targets on one set of
cell indices, the binary task's γ_k scaled by a validated factor, with λ and P) and the three
tree models.

Accuracy, fit and predict time, peak memory and the load average go to
``kernelcourse/benchmark_results/scale_covertype.json`` (read it with
``datasets.load_benchmark("scale_covertype")``) with the machine, the date and the versions.
Smoke mode runs the same code on small synthetic data in-process and writes nothing. The
printed rows compare each fit time with the 5-minute budget (ratio ≥ 1: within budget).
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
import time
import tracemalloc

import numpy as np

from kernelcourse.datasets import COVTYPE_COLUMNS, benchmark_results_dir

from ._timing import result

RESULTS = benchmark_results_dir() / "scale_covertype.json"
#: ``python -m benchmarks`` skips this module unless ``scale`` is named: a full run takes
#: one and a half to two hours on two cores
RUN_ONLY_WHEN_NAMED = True

#: Rahimi & Recht (2007), Table 1, Forest row: test error in percent
RAHIMI_RECHT = {"random_binning_ridge": 2.2, "rff_ridge": 11.6}
N_TEST = 58_102
N_VALIDATION = 58_102
BUDGET_S = 300.0
MEMORY_BUDGET = 4 * 2**30
#: a validation fit on 464 708 rows may use this share of the time budget for its P to be
#: chosen
BUDGET_FRACTION_FOR_P = 0.75
#: what a worker holds before it fits: the interpreter, the libraries and the data (0.94 GiB
#: measured); the fit may allocate the rest of the memory budget
BASELINE_BYTES = 2**30
SEED = 0


def covertype_feature_groups():
    """One bandwidth group per numeric column of Covertype, and one per one-hot block (the
    wilderness areas, the soil types), named from ``datasets.COVTYPE_COLUMNS``."""
    blocks = ("Wilderness_Area", "Soil_Type")
    groups = {name: [j] for j, name in enumerate(COVTYPE_COLUMNS) if not name.startswith(blocks)}
    for prefix in blocks:
        cols = [j for j, name in enumerate(COVTYPE_COLUMNS) if name.startswith(prefix)]
        groups[f"{prefix} ({len(cols)} indicators)"] = cols
    return groups


#: settings of the full run; the binning grid and the RFF γ grid are searched by validation
FULL = {
    "binning_grid": {
        "gamma": [0.5, 1.0, 2.0],
        "lam": [0.03, 0.1, 0.3],
        "stage1_n_grids": 100,
        "n_grids": [100, 200, 400, 600],
        # one bandwidth factor per group: each numeric column, the two one-hot blocks
        "feature_groups": covertype_feature_groups(),
        "min_gain": 5e-4,
    },
    "binning": {"tol": 1e-3, "max_iter": 30},
    "rff_gamma_grid": [0.01, 0.02, 0.05, 0.1, 0.2, 0.5],
    "rff_gamma_subset": 100_000,
    "rff_gamma_components": 2000,
    "rff": {"n_components": 4000, "lam": 1e-6, "block_size": 10_000},
    # Nyström-FALKON with the Gaussian kernel: a γ_k per feature, the square of binning's
    # group factor times a validated scale, and λ, at ``n_components`` centres on the first
    # ``subset`` fitting rows; then the largest M of ``n_components_grid`` the budget allows
    "falkon_grid": {
        "subset": 100_000,
        "n_components": 2000,
        "gamma_scale": [0.02, 0.05, 0.1],
        "lam": [1e-6, 1e-7],
        "n_components_grid": [2000, 4000, 6000, 8000, 10_000],
    },
    "falkon": {"max_iter": 20},
    # the same model on the first 200 000 training rows with M = 2000: the fast end
    "falkon_200k": {"n_rows": 200_000, "n_components": 2000},
    "svm": {"n_components": 300, "C": 1.0},
    "sgd": {
        "loss": "hinge",
        "lam": 1e-6,
        "eta0": 0.05,
        "epochs": 2,
        "chunk_size": 10_000,
        "shuffle_buffer": 200_000,
    },
    # 7 classes: the binary task's γ_k scaled as a whole, λ, then P (the one-vs-rest targets
    # share the cell indices and each CG pass)
    "binning_multiclass_grid": {
        "gamma_scale": [0.5, 1.0, 2.0],
        "lam": [0.01, 0.03, 0.1],
        "stage1_n_grids": 50,
        "n_grids": [50, 100],
    },
    "trees": {
        # forests grow by warm start: each size is validated on the way to the largest
        "forest_sizes": [25, 50, 100, 200],
        # gradient boosting: (learning rate, leaves); the iterations are chosen along the fit
        "hgb_grid": [[0.1, 63], [0.1, 255], [0.3, 255]],
        "hgb_max_iter": {"binary": 800, "multiclass": 200},
        "hgb_stage_step": 25,
    },
}
SMOKE = {
    "binning_grid": {
        "gamma": [0.5, 1.0],
        "lam": [0.1],
        "stage1_n_grids": 10,
        "n_grids": [10, 20],
        "feature_groups": {"x0": [0], "x1": [1], "x2 to x5": [2, 3, 4, 5]},
        "min_gain": 5e-4,
    },
    "binning": {"tol": 1e-3, "max_iter": 40},
    "rff_gamma_grid": [0.1, 0.3],
    "rff_gamma_subset": 400,
    "rff_gamma_components": 50,
    "rff": {"n_components": 100, "lam": 1e-6, "block_size": 200},
    "falkon_grid": {
        "subset": 1000,
        "n_components": 40,
        "gamma_scale": [0.1, 0.3],
        "lam": [1e-4],
        "n_components_grid": [40, 80],
    },
    "falkon": {"max_iter": 10},
    "falkon_200k": {"n_rows": 1200, "n_components": 40},
    "svm": {"n_components": 50, "C": 1.0},
    "sgd": {
        "loss": "hinge",
        "lam": 1e-5,
        "eta0": 0.1,
        "epochs": 2,
        "chunk_size": 300,
        "shuffle_buffer": 0,
    },
    "binning_multiclass_grid": {
        "gamma_scale": [0.5, 1.0],
        "lam": [0.1],
        "stage1_n_grids": 10,
        "n_grids": [10, 20],
    },
    "trees": {
        "forest_sizes": [5, 10],
        "hgb_grid": [[0.1, 15], [0.3, 15]],
        "hgb_max_iter": {"binary": 40, "multiclass": 20},
        "hgb_stage_step": 10,
    },
}
METHODS = (
    "random_binning_ridge",
    "rff_ridge",
    "nystroem_falkon",
    "nystroem_falkon_200k",
    "rff_linear_svm",
    "sgd_out_of_core",
)
#: the models practitioners reach for on tabular data, run on the same split and budgets
TREES = ("hist_gradient_boosting", "random_forest", "extra_trees")
#: the methods of each task: the binary task is Rahimi & Recht's; the 7-class one is lecture
#: 004's, on the full data
TASKS = {"binary": METHODS + TREES, "multiclass": ("random_binning_ridge",) + TREES}


def covertype_task(task="binary"):
    """The R&R Forest task, class 2 (label 1) against the rest (label -1); or, for
    ``task="multiclass"``, the seven cover types (labels 1 to 7) on the same split."""
    from kernelcourse.datasets import load_covertype

    b = load_covertype(n_train=None, n_test=N_TEST, random_state=SEED)
    if task == "multiclass":
        return b.X_train, b.y_train, b.X_test, b.y_test
    return (
        b.X_train,
        np.where(b.y_train == 2, 1, -1),
        b.X_test,
        np.where(b.y_test == 2, 1, -1),
    )


def synthetic_task(n=2400, d=6, seed=0, task="binary"):
    """A small stand-in with the same shape of problem, for smoke runs (three classes for
    ``task="multiclass"``)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    f = np.sin(2 * X[:, 0]) + X[:, 1] ** 2 - 1
    y = np.digitize(f, [-0.5, 0.5]) + 1 if task == "multiclass" else np.where(f > 0, 1, -1)
    cut = n // 5
    return X[cut:], y[cut:], X[:cut], y[:cut]


def accuracy(pred, y):
    """Share of correct labels; real-valued scores of the binary ridge count by their sign."""
    pred = np.asarray(pred)
    if pred.dtype.kind == "f":
        pred = np.sign(pred)
    return float(np.mean(pred == y))


def _binning_model(gamma, n_grids, lam, tol, max_iter, classifier=False):
    """Ridge on random binning features: a regressor of the ±1 labels (binary task, its sign
    decides), or ``FeatureRidgeClassifier`` for several classes."""
    from kernelcourse.features import RandomBinningFeatures
    from kernelcourse.ridge import FeatureRidge, FeatureRidgeClassifier

    return (FeatureRidgeClassifier if classifier else FeatureRidge)(
        RandomBinningFeatures(gamma=gamma, n_grids=n_grids, random_state=SEED),
        lam=lam,
        tol=tol,
        max_iter=max_iter,
    )


def validate_binning(X, y, settings, n_val):
    """γ, λ, a bandwidth factor per feature group, then P of random binning, chosen on a
    held-out part of the training set.

    Three stages, because the parameters are not alike:

    1. at a fixed, cheap P, the bandwidth γ and λ trade off against each other and have an
       interior optimum;
    2. one γ for all 54 columns treats a metre of elevation like a degree of aspect once
       both are standardized; the Laplacian kernel takes a γ_k per column as easily (automatic
       relevance determination). Group by group (``feature_groups``), the factor on γ_k is
       doubled while that gains more than ``min_gain`` validation accuracy, else halved while
       that gains; one sweep, at the stage-1 P, γ and λ;
    3. at those bandwidths the validation accuracy rises with P (more grids, a better kernel
       approximation) while the fit's time and memory grow linearly in P: of the P in
       ``n_grids`` whose validation fit took at most ``BUDGET_FRACTION_FOR_P`` of the time
       budget and whose memory, scaled to the full training set (13 % larger than the
       fitting part), fits the memory budget, the most accurate is kept. With fine cells
       every training point has a cell of its own in each grid, so the weights and the CG
       vectors have about P·n entries each.
    """
    Xf, yf, Xv, yv = X[:-n_val], y[:-n_val], X[-n_val:], y[-n_val:]
    grid = settings["binning_grid"]
    rows = []

    def run(gamma, P, lam, stage, **extra):
        model, seconds, peak = _timed_fit(
            _binning_model(gamma, P, lam, **settings["binning"]), Xf, yf
        )
        row = {
            "stage": stage,
            "gamma": gamma,
            "n_grids": P,
            "lam": lam,
            **extra,
            "validation_accuracy": accuracy(model.predict(Xv), yv),
            "seconds": seconds,
            "fit_peak_bytes": int(peak),
        }
        print(f"  validation {row}", flush=True)
        rows.append(row)
        return row

    P1 = grid["stage1_n_grids"]
    for gamma in grid["gamma"]:
        for lam in grid["lam"]:
            run(gamma, P1, lam, 1)
    best = max(rows, key=lambda r: r["validation_accuracy"])
    best["kept"] = True
    base_gamma, lam = best["gamma"], best["lam"]

    factors = {name: 1.0 for name in grid["feature_groups"]}

    def per_feature(factors):
        g = np.full(X.shape[1], float(base_gamma))
        for name, cols in grid["feature_groups"].items():
            g[cols] *= factors[name]
        return g.tolist()

    for name in grid["feature_groups"]:
        for step in (2.0, 0.5):
            moved = False
            while True:
                trial = {**factors, name: factors[name] * step}
                row = run(per_feature(trial), P1, lam, 2, group=name, factor=trial[name])
                if row["validation_accuracy"] <= best["validation_accuracy"] + grid["min_gain"]:
                    break
                best, factors, moved = row, trial, True
                row["kept"] = True
            if moved:  # no need to try the other direction
                break
    gamma = per_feature(factors)

    stage3 = [best] + [run(gamma, P, lam, 3) for P in grid["n_grids"] if P != P1]
    # the full fit has len(X) / len(Xf) times the rows: its memory grows in proportion (one
    # cell index per row and grid, and about as many cells when they are fine)
    growth = len(X) / len(Xf)
    affordable = [
        r
        for r in stage3
        if r["seconds"] <= BUDGET_FRACTION_FOR_P * BUDGET_S
        and r["fit_peak_bytes"] * growth <= MEMORY_BUDGET - BASELINE_BYTES
    ]
    top = max(affordable or stage3[:1], key=lambda r: r["validation_accuracy"])
    top["kept"] = True
    for row in rows:
        row.setdefault("kept", False)
    return {
        "grid": rows,
        "chosen": {"gamma": gamma, "n_grids": top["n_grids"], "lam": lam},
        "base_gamma": base_gamma,
        "group_factors": factors,
    }


def validate_rff_gamma(X, y, settings, n_val):
    """γ of the Gaussian kernel chosen by ridge on Fourier features, on a training subset
    (``rff_gamma_components`` features, fewer than the full run's, so that it stays cheap)."""
    from kernelcourse.features import RandomFourierFeatures
    from kernelcourse.scale import StreamingFeatureRidge

    m = min(settings["rff_gamma_subset"], len(X) - n_val)
    Xf, yf, Xv, yv = X[:m], y[:m], X[-n_val:], y[-n_val:]
    rows = []
    for gamma in settings["rff_gamma_grid"]:
        feats = RandomFourierFeatures(
            gamma=gamma, n_components=settings["rff_gamma_components"], random_state=SEED
        )
        model = StreamingFeatureRidge(feats, lam=1e-6).fit(Xf, yf)
        rows.append({"gamma": gamma, "validation_accuracy": accuracy(model.predict(Xv), yv)})
    best = max(rows, key=lambda r: r["validation_accuracy"])
    return {"grid": rows, "chosen": {"gamma": best["gamma"]}}


def _falkon_model(gamma, lam, n_components, max_iter):
    from kernelcourse.scale import NystroemKRRClassifier

    return NystroemKRRClassifier(
        gamma=gamma,
        lam=lam,
        n_components=n_components,
        max_iter=max_iter,
        dtype=np.float32,  # float32 kernel tiles made and used in cache, float64 CG
        random_state=SEED,
    )


def validate_falkon(X, y, settings, n_val, binning, rff_gamma=None):
    """γ_k and λ of Nyström-FALKON on a training subset, then M by the budget.

    The Gaussian kernel takes a γ_k per feature (automatic relevance determination) as the
    Laplacian kernel of random binning does. Binning's validation has already found which
    features deserve a finer scale (``binning``, the output of :func:`validate_binning`): a
    Laplacian rate is an inverse length and a Gaussian γ an inverse squared length, so the
    base is each feature's binning factor squared, scaled by a validated ``gamma_scale``.
    Stage 1 fits ``n_components`` centres on the first ``subset`` fitting rows for each scale
    and λ, and, for comparison, with one γ for every feature (``rff_gamma``, the one chosen
    for Fourier features) at each λ. Stage 2 does not fit again: a CG iteration costs n·M
    kernel entries and the fit about as many iterations at any size, so the fit time scales
    as n·M from the stage-1 fit
    (plus M³/3 for the Cholesky factors, whose float64 M × M matrices bound the memory);
    the largest M of ``n_components_grid`` whose full fit fits the budgets is kept, since
    more centres approximate the kernel better.
    """
    grid = settings["falkon_grid"]
    m = min(grid["subset"], len(X) - n_val)
    Xf, yf, Xv, yv = X[:m], y[:m], X[-n_val:], y[-n_val:]
    groups = settings["binning_grid"]["feature_groups"]
    base = np.ones(X.shape[1])
    for name, cols in groups.items():
        base[cols] = binning["group_factors"].get(name, 1.0) ** 2
    M1, max_iter = grid["n_components"], settings["falkon"]["max_iter"]
    rows = []
    trials = [(None, lam) for lam in grid["lam"] if rff_gamma is not None]
    trials += [(scale, lam) for scale in grid["gamma_scale"] for lam in grid["lam"]]
    for scale, lam in trials:
        gamma = float(rff_gamma) if scale is None else (scale * base).tolist()
        model, seconds, peak = _timed_fit(_falkon_model(gamma, lam, M1, max_iter), Xf, yf)
        row = {
            "bandwidths": "one γ" if scale is None else "a γ_k per feature",
            "gamma": float(rff_gamma) if scale is None else None,
            "gamma_scale": scale,
            "lam": lam,
            "n_components": M1,
            "n_rows": m,
            "validation_accuracy": accuracy(model.predict(Xv), yv),
            "seconds": seconds,
            "fit_peak_bytes": int(peak),
            "kept": False,
        }
        print(f"  validation {row}", flush=True)
        rows.append(row)
    best = max(rows, key=lambda r: r["validation_accuracy"])
    best["kept"] = True
    scale = best["gamma_scale"]
    chosen_gamma = best["gamma"] if scale is None else (scale * base).tolist()
    n_full = len(X)
    per_entry = best["seconds"] / (m * M1)
    A = np.random.default_rng(SEED).normal(size=(1000, 1000))
    start = time.perf_counter()
    A @ A
    flop_rate = 2e9 / (time.perf_counter() - start)

    def predicted(M):
        # the passes over the data, and the factors of the preconditioner: about M³/3 for
        # each Cholesky and M³ for TTᵀ
        seconds = per_entry * n_full * M + 1.7 * M**3 / flop_rate
        memory = 3 * 8 * M * M + 4 * n_full * X.shape[1]  # K_MM, T, A; X in float32
        return seconds, memory

    sizes = []
    for M in grid["n_components_grid"]:
        seconds, memory = predicted(M)
        sizes.append(
            {
                "n_components": M,
                "predicted_fit_s": seconds,
                "predicted_peak_bytes": int(memory),
                "affordable": bool(
                    seconds <= BUDGET_FRACTION_FOR_P * BUDGET_S
                    and memory <= MEMORY_BUDGET - BASELINE_BYTES
                ),
            }
        )
    fits = [r["n_components"] for r in sizes if r["affordable"]] or [M1]
    return {
        "grid": rows,
        "sizes": sizes,
        "chosen": {
            "gamma": chosen_gamma,
            "lam": best["lam"],
            "n_components": max(fits),
        },
        "gamma_scale": best["gamma_scale"],
    }


def _timed_fit(model, X, y):
    """Fit; return the model, seconds and the tracemalloc peak of the fit."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    tracemalloc.start()
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(X, y)
    seconds = time.perf_counter() - start
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return model, seconds, int(peak)


def _affordable(rows, growth):
    """The rows whose fit, scaled to the full training set, fits the time and memory budgets
    with the margin of ``BUDGET_FRACTION_FOR_P``."""
    return [
        r
        for r in rows
        if r["seconds"] * growth <= BUDGET_FRACTION_FOR_P * BUDGET_S
        and r.get("fit_peak_bytes", 0) * growth <= MEMORY_BUDGET - BASELINE_BYTES
    ]


def validate_binning_multiclass(X, y, settings, n_val, binary):
    """The 7-class task's random binning: the binary task's bandwidths γ_k (``binary``, the
    output of :func:`validate_binning`) scaled by one factor, and λ, at a cheap P; then the most
    accurate P whose validation fit, scaled to the full training set, fits the budgets. The
    seven one-vs-rest targets are solved together (``FeatureRidgeClassifier``)."""
    Xf, yf, Xv, yv = X[:-n_val], y[:-n_val], X[-n_val:], y[-n_val:]
    grid = settings["binning_multiclass_grid"]
    base = np.asarray(binary["chosen"]["gamma"], dtype=float)
    rows = []

    def run(scale, lam, P, stage):
        gamma = (scale * base).tolist()
        model, seconds, peak = _timed_fit(
            _binning_model(gamma, P, lam, **settings["binning"], classifier=True), Xf, yf
        )
        row = {
            "stage": stage,
            "gamma_scale": scale,
            "lam": lam,
            "n_grids": P,
            "validation_accuracy": accuracy(model.predict(Xv), yv),
            "seconds": seconds,
            "fit_peak_bytes": peak,
            "kept": False,
        }
        print(f"  validation {row}", flush=True)
        rows.append(row)
        return row

    P1 = grid["stage1_n_grids"]
    first = [run(sc, lam, P1, 1) for sc in grid["gamma_scale"] for lam in grid["lam"]]
    best = max(first, key=lambda r: r["validation_accuracy"])
    best["kept"] = True
    scale, lam = best["gamma_scale"], best["lam"]
    stage2 = [best] + [run(scale, lam, P, 2) for P in grid["n_grids"] if P != P1]
    top = max(
        _affordable(stage2, len(X) / len(Xf)) or stage2[:1], key=lambda r: r["validation_accuracy"]
    )
    top["kept"] = True
    return {
        "grid": rows,
        "chosen": {"gamma": (scale * base).tolist(), "n_grids": top["n_grids"], "lam": lam},
        "gamma_scale": scale,
    }


def _tree_model(method, **params):
    from sklearn.ensemble import (
        ExtraTreesClassifier,
        HistGradientBoostingClassifier,
        RandomForestClassifier,
    )

    if method == "hist_gradient_boosting":
        # a fixed number of iterations, chosen by validation: no internal early stopping
        return HistGradientBoostingClassifier(early_stopping=False, random_state=SEED, **params)
    cls = RandomForestClassifier if method == "random_forest" else ExtraTreesClassifier
    return cls(n_jobs=-1, random_state=SEED, **params)


def validate_trees(X, y, settings, n_val, task):
    """A small validation of each tree model's main settings, on the held-out rows the kernel
    methods use.

    * Forests: the number of trees. One forest grows by warm start through
      ``forest_sizes``; each size is validated on the way (a forest of 50 trees is the first
      50 of the forest of 100).
    * Gradient boosting: learning rate and leaves from ``hgb_grid``; for each, one fit of
      ``hgb_max_iter`` iterations, validated every ``hgb_stage_step`` iterations along the way
      (``staged_predict``), so that the number of iterations is chosen too.

    Of each model's settings, the most accurate whose fit (scaled from the fitting part to
    the full training set, and for boosting from the iterations fitted to those kept) fits
    the time budget with the margin of ``BUDGET_FRACTION_FOR_P`` is kept, and for forests
    whose trees fit the memory budget (measured as the growth of the resident memory: trees
    are allocated outside tracemalloc's sight).
    """
    Xf, yf, Xv, yv = X[:-n_val], y[:-n_val], X[-n_val:], y[-n_val:]
    t = settings["trees"]
    growth = len(X) / len(Xf)
    out = {}
    for method in ("random_forest", "extra_trees"):
        rows, model, elapsed = [], _tree_model(method, warm_start=True), 0.0
        rss_before = current_rss()
        for size in t["forest_sizes"]:
            model.set_params(n_estimators=size)
            start = time.perf_counter()
            model.fit(Xf, yf)
            elapsed += time.perf_counter() - start
            row = {
                "n_estimators": size,
                "validation_accuracy": accuracy(model.predict(Xv), yv),
                "seconds": elapsed,
                # the trees' memory: what the process grew by while they were built
                "fit_peak_bytes": max(0, current_rss() - rss_before),
                "kept": False,
            }
            print(f"  validation {method} {row}", flush=True)
            rows.append(row)
            if elapsed * growth > BUDGET_S:  # larger forests cannot fit the budget
                break
        del model
        top = max(_affordable(rows, growth) or rows[:1], key=lambda r: r["validation_accuracy"])
        top["kept"] = True
        out[method] = {"grid": rows, "chosen": {"n_estimators": top["n_estimators"]}}
    rows = []
    for lr, leaves in t["hgb_grid"]:
        n_iter = t["hgb_max_iter"][task]
        model = _tree_model(
            "hist_gradient_boosting", learning_rate=lr, max_leaf_nodes=leaves, max_iter=n_iter
        )
        start = time.perf_counter()
        model.fit(Xf, yf)
        seconds = time.perf_counter() - start
        for it, pred in enumerate(model.staged_predict(Xv), start=1):
            if it % t["hgb_stage_step"] == 0 or it == model.n_iter_:
                row = {
                    "learning_rate": lr,
                    "max_leaf_nodes": leaves,
                    "max_iter": it,
                    "validation_accuracy": accuracy(pred, yv),
                    # the time of the first `it` iterations, in proportion
                    "seconds": seconds * it / model.n_iter_,
                    "kept": False,
                }
                rows.append(row)
        print(f"  validation hist_gradient_boosting {rows[-1]}", flush=True)
        del model
    top = max(_affordable(rows, growth) or rows[:1], key=lambda r: r["validation_accuracy"])
    top["kept"] = True
    out["hist_gradient_boosting"] = {
        "grid": rows,
        "chosen": {k: top[k] for k in ("learning_rate", "max_leaf_nodes", "max_iter")},
    }
    return out


def make_model(method, n_train, settings, choices, task="binary"):
    from kernelcourse.features import RandomFourierFeatures
    from kernelcourse.scale import StreamingFeatureRidge
    from kernelcourse.sgd import FeatureSGDClassifier
    from kernelcourse.svm import PrimalSVC

    if method in TREES:
        return _tree_model(method, **choices[f"trees_{task}"][method]["chosen"])
    if task == "multiclass":
        if method != "random_binning_ridge":
            raise ValueError(f"no 7-class run of {method!r}")
        return _binning_model(
            **choices["binning_multiclass"]["chosen"], **settings["binning"], classifier=True
        )
    gamma = choices["rff"]["chosen"]["gamma"]
    if method == "random_binning_ridge":
        return _binning_model(**choices["binning"]["chosen"], **settings["binning"])
    if method == "rff_ridge":
        r = settings["rff"]
        feats = RandomFourierFeatures(
            gamma=gamma, n_components=r["n_components"], random_state=SEED
        )
        # the stored λ is per sample (λ n ‖w‖²); the estimator penalises λ‖w‖²
        return StreamingFeatureRidge(
            feats, lam=r["lam"] * n_train, fit_intercept=True, block_size=r["block_size"]
        )
    if method == "nystroem_falkon":
        return _falkon_model(**choices["falkon"]["chosen"], **settings["falkon"])
    if method == "nystroem_falkon_200k":
        chosen = {**choices["falkon"]["chosen"], **settings["falkon_200k"]}
        chosen.pop("n_rows")
        return _falkon_model(**chosen, **settings["falkon"])
    if method == "rff_linear_svm":
        from sklearn.pipeline import make_pipeline

        s = settings["svm"]
        feats = RandomFourierFeatures(
            gamma=gamma, n_components=s["n_components"], random_state=SEED
        )
        return make_pipeline(feats, PrimalSVC(C=s["C"], loss="squared_hinge"))
    if method == "sgd_out_of_core":
        s = settings["sgd"]
        feats = RandomFourierFeatures(
            gamma=gamma, n_components=settings["rff"]["n_components"], random_state=SEED
        )
        return FeatureSGDClassifier(feats, loss=s["loss"], lam=s["lam"], eta0=s["eta0"])
    raise ValueError(f"unknown method {method!r}")


def _load():
    return os.getloadavg()[0]


def evaluate(method, X_train, y_train, X_test, y_test, settings, choices, task="binary"):
    """Fit one in-memory model; time, tracemalloc peak and test accuracy."""
    if method == "nystroem_falkon_200k":  # a prefix of the (shuffled) training rows
        rows = settings["falkon_200k"]["n_rows"]
        X_train, y_train = X_train[:rows], y_train[:rows]
    model = make_model(method, len(X_train), settings, choices, task)
    load_before = _load()
    tracemalloc.start()
    start = time.perf_counter()
    model.fit(X_train, y_train)
    fit_s = time.perf_counter() - start
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    start = time.perf_counter()
    pred = model.predict(X_test)
    predict_s = time.perf_counter() - start
    out = {
        "fit_s": fit_s,
        "predict_s": predict_s,
        "fit_peak_traced_bytes": int(peak),
        "accuracy": accuracy(pred, y_test),
        "load_average_before": load_before,
        "load_average_after": _load(),
    }
    inner = model[-1] if hasattr(model, "steps") else model
    history = getattr(inner, "history_", None)
    if history is not None:
        out["n_iter"] = len(history) - 1
        out["final_residual"] = float(history[-1])
    return out


def evaluate_sgd(chunks, settings, choices):
    """Strategy ⑤ out of core: ``train_chunks(epoch)`` yields (X, y) blocks of the training
    rows (one call per epoch), ``test_chunks()`` those of the test rows. Returns time and
    accuracy."""
    train_chunks, test_chunks = chunks
    model = make_model("sgd_out_of_core", None, settings, choices)
    load_before = _load()
    start = time.perf_counter()
    for epoch in range(settings["sgd"]["epochs"]):
        for X, y in train_chunks(epoch):
            model.partial_fit(X, y, classes=[-1, 1])
    fit_s = time.perf_counter() - start
    start = time.perf_counter()
    hits = total = 0
    for X, y in test_chunks():
        hits += int(np.sum(model.predict(X) == y))
        total += len(y)
    return {
        "fit_s": fit_s,
        "predict_s": time.perf_counter() - start,
        "accuracy": hits / total,
        "epochs": settings["sgd"]["epochs"],
        "n_samples_seen": int(model.n_samples_seen_),
        "load_average_before": load_before,
        "load_average_after": _load(),
    }


def _covertype_chunks(split, chunk_size, shuffle_buffer=0):
    """Blocks of the R&R split streamed from the gzip; each epoch its own buffer shuffle."""
    from kernelcourse.datasets import iter_covertype_chunks

    def gen(epoch=0):
        for X, y in iter_covertype_chunks(
            chunk_size,
            split=split,
            n_test=N_TEST,
            random_state=SEED,
            standardize=True,
            dtype=np.float32,
            shuffle_buffer=shuffle_buffer,
            shuffle_seed=SEED + epoch,
        ):
            yield X, np.where(y == 2, 1, -1)

    return gen


def peak_rss():
    """Peak resident memory of this process in bytes.

    ``VmHWM`` of /proc/self/status belongs to the address space, which ``exec`` replaces, so
    it counts this process only. ``getrusage``'s ``ru_maxrss`` does not: Linux carries it
    over from the parent through fork and exec, so a worker started by a parent that once
    held 5 GB would report at least 5 GB.
    """
    try:
        for line in pathlib.Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)


def current_rss():
    """Resident memory of this process now, in bytes (``VmRSS``)."""
    try:
        for line in pathlib.Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _worker(argv):
    """Subprocess entry: ``--worker TASK METHOD CHOICES_JSON`` prints one JSON line."""
    task, method, choices = argv[0], argv[1], json.loads(argv[2])
    if method == "sgd_out_of_core":
        s = FULL["sgd"]
        train = _covertype_chunks("train", s["chunk_size"], s["shuffle_buffer"])
        out = evaluate_sgd((train, _covertype_chunks("test", s["chunk_size"])), FULL, choices)
        out["rss_after_loading_bytes"] = 0
    else:
        data = covertype_task(task)
        out_rss = peak_rss()
        out = evaluate(method, *data, FULL, choices, task)
        out["rss_after_loading_bytes"] = int(out_rss)
    out["peak_rss_bytes"] = peak_rss()
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
    import numba
    import scipy
    import sklearn

    import kernelcourse

    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "threads": os.environ.get("OMP_NUM_THREADS", "unset"),
        "memory_gb": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "sklearn": sklearn.__version__,
        "numba": numba.__version__,
        "kernelcourse": getattr(kernelcourse, "__version__", "unknown"),
        "load_average_at_start": _load(),
    }


def _save(record, path):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=2) + "\n")


def _validate(record, task, same, X_train, y_train, path):
    """Run the validations of ``task`` that the record lacks (or whose grid changed)."""
    v = record["validation"]
    keys = {
        "binning": ("binning_grid", "binning"),
        "rff": ("rff_gamma_grid",),
        "binning_multiclass": ("binning_multiclass_grid", "binning_grid", "binning"),
        "falkon": ("falkon_grid", "falkon", "binning_grid", "binning"),
        f"trees_{task}": ("trees",),
    }
    for key, grids in keys.items():
        if any(same.get(g) != FULL[g] for g in grids):
            v.pop(key, None)
    steps = {
        "binary": [
            ("binning", lambda: validate_binning(X_train, y_train, FULL, N_VALIDATION)),
            ("rff", lambda: validate_rff_gamma(X_train, y_train, FULL, N_VALIDATION)),
            (
                "falkon",
                lambda: validate_falkon(
                    X_train, y_train, FULL, N_VALIDATION, v["binning"], v["rff"]["chosen"]["gamma"]
                ),
            ),
        ],
        "multiclass": [
            (
                "binning_multiclass",
                lambda: validate_binning_multiclass(
                    X_train, y_train, FULL, N_VALIDATION, v["binning"]
                ),
            ),
        ],
    }[task] + [
        (f"trees_{task}", lambda: validate_trees(X_train, y_train, FULL, N_VALIDATION, task))
    ]
    for key, validate in steps:
        if key not in v:
            print(f"validating {key} ...", flush=True)
            v[key] = validate()
            _save(record, path)


def _run_worker(task, method, validation):
    """One method in a fresh subprocess; a fit that runs past three budgets is stopped and
    recorded as out of time."""
    try:
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "benchmarks.bench_scale",
                "--worker",
                task,
                method,
                json.dumps(validation),
            ],
            capture_output=True,
            text=True,
            cwd=pathlib.Path(__file__).parent.parent,
            timeout=3 * BUDGET_S + 600,
        )
    except subprocess.TimeoutExpired:
        return {"error": f"stopped after {3 * BUDGET_S + 600:.0f} s: out of the time budget"}
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if not lines:
        return {"error": f"exit code {proc.returncode}: {proc.stderr.strip()[-500:]}"}
    run = json.loads(lines[-1])
    run["within_budget"] = bool(run["fit_s"] <= BUDGET_S and run["peak_rss_bytes"] <= MEMORY_BUDGET)
    return run


def full_run(path=RESULTS, tasks=TASKS):
    """Validate, then run each task's methods (``tasks`` maps a task to the methods to run);
    runs of other tasks and methods already in ``path`` are kept."""
    date = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    old = json.loads(path.read_text()) if path.exists() else {}
    record = {
        "date": date,
        "machine": machine(),
        "data": {
            "name": "UCI Covertype (complete): cover type 2 against the rest, and all 7 types",
            "n_train": 522_910,
            "n_test": N_TEST,
            "n_features": len(COVTYPE_COLUMNS),
            "split": (
                f"seeded random split of Rahimi & Recht's sizes (load_covertype, seed {SEED}); "
                "10 numeric columns standardized with training statistics"
            ),
        },
        "reference": {
            "source": "Rahimi & Recht (2007), Table 1, Forest row (test error, %)",
            "test_error_percent": RAHIMI_RECHT,
        },
        "budget_s": BUDGET_S,
        "memory_budget_bytes": MEMORY_BUDGET,
        "settings": FULL,
        "validation": old.get("validation", {}),
        "runs": [
            r
            for r in old.get("runs", [])
            if r.get("method") not in tasks.get(r.get("task", "binary"), ())
        ],
    }
    same = old.get("settings", {})
    if "cg_rates" in old:
        record["cg_rates"] = old["cg_rates"]
    if "nystroem_falkon" in tasks.get("binary", ()):
        # the kernel entries per second of FALKON's CG product, against a float32 GEMM of
        # the same shape and the previous implementation, measured in one run
        record["cg_rates"] = {"load_average": _load(), **cg_iteration_rates()}
        _save(record, path)
    for task, methods in tasks.items():
        X_train, y_train, _, _ = covertype_task(task)
        _validate(record, task, same, X_train, y_train, path)
        del X_train, y_train
        for method in methods:
            print(f"{task} {method} ...", flush=True)
            run = _run_worker(task, method, record["validation"])
            run.update(task=task, method=method, date=date)
            print(json.dumps(run), flush=True)
            record["runs"].append(run)
            _save(record, path)
    record["machine"]["load_average_at_end"] = _load()
    _save(record, path)
    return record


def _rows(runs):
    return [
        result(
            f"Covertype {r.get('task', 'binary')} {r['method']} (fit vs 5 min)",
            r["fit_s"],
            BUDGET_S,
            1.0,
        )
        for r in runs
        if "fit_s" in r
    ]


def smoke_runs():
    """Every method of both tasks at small size on synthetic data, in-process (nothing
    written)."""
    X_train, y_train, X_test, y_test = synthetic_task()
    choices = {
        "binning": validate_binning(X_train, y_train, SMOKE, 300),
        "rff": validate_rff_gamma(X_train, y_train, SMOKE, 300),
        "trees_binary": validate_trees(X_train, y_train, SMOKE, 300, "binary"),
    }
    choices["falkon"] = validate_falkon(
        X_train, y_train, SMOKE, 300, choices["binning"], choices["rff"]["chosen"]["gamma"]
    )
    runs = []
    for method in METHODS[:-1] + TREES:
        out = evaluate(method, X_train, y_train, X_test, y_test, SMOKE, choices)
        out.update(task="binary", method=method)
        runs.append(out)
    step = SMOKE["sgd"]["chunk_size"]

    def blocks(X, y):
        return lambda epoch=0: ((X[i : i + step], y[i : i + step]) for i in range(0, len(X), step))

    out = evaluate_sgd((blocks(X_train, y_train), blocks(X_test, y_test)), SMOKE, choices)
    out.update(task="binary", method="sgd_out_of_core")
    runs.append(out)
    X_train, y_train, X_test, y_test = synthetic_task(task="multiclass")
    choices["binning_multiclass"] = validate_binning_multiclass(
        X_train, y_train, SMOKE, 300, choices["binning"]
    )
    choices["trees_multiclass"] = validate_trees(X_train, y_train, SMOKE, 300, "multiclass")
    for method in TASKS["multiclass"]:
        out = evaluate(method, X_train, y_train, X_test, y_test, SMOKE, choices, "multiclass")
        out.update(task="multiclass", method=method)
        runs.append(out)
    return runs, choices


def cg_iteration_rates(n=100_000, M=2000, gamma=0.1, repeats=3, seed=SEED, X=None):
    """Kernel entries per second of one FALKON CG product K_nMᵀ(K_nM v) on the first n
    Covertype training rows (54 columns) against M of them, float32, measured in one run for:
    the one-pass product with tiles in cache (``kernelcourse._fused``, what float32 RBF fits
    use), the previous implementation (row blocks of K_nM through memory, 256 MB each), and
    a float32 GEMM of the shape of one block's distance product, (block × d) by (d × M).
    ``X`` replaces the Covertype rows (same shape, for a machine without the data)."""
    from kernelcourse._fused import rbf_normal_products
    from kernelcourse.datasets import load_covertype
    from kernelcourse.scale import NystroemKRR

    if X is None:
        X = load_covertype(n_train=n, n_test=1, random_state=seed).X_train
    X = np.ascontiguousarray(X, dtype=np.float32)
    n, d = X.shape
    C = X[np.random.default_rng(seed).choice(n, M, replace=False)]
    V = np.random.default_rng(seed).normal(size=(M, 1))
    old = NystroemKRR(gamma=gamma, dtype=np.float32).fit(X[:50], np.zeros(50))
    old.centers_ = C
    block = old._block_rows(M)

    def best(f):
        f()  # compile, warm caches
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            f()
            times.append(time.perf_counter() - start)
        return min(times)

    t_fused = best(lambda: rbf_normal_products(X, C, gamma, V))
    t_old = best(lambda: old._knm_t_knm(X, V))
    Xb, Ct = X[:block], np.ascontiguousarray(C.T)
    t_gemm = best(lambda: Xb @ Ct) * n / len(Xb)
    rates = {
        "one_pass": n * M / t_fused,
        "previous": n * M / t_old,
        "gemm_float32": n * M / t_gemm,
    }
    print(f"CG product K_nMᵀ(K_nM v), n = {n}, M = {M}, d = {d}, float32, load {_load():.1f}:")
    for name, rate in rates.items():
        print(f"  {name:>13}: {rate / 1e9:6.3f} billion kernel entries/s")
    print(
        f"  one pass / previous = {rates['one_pass'] / rates['previous']:.2f} (target >= 2); "
        f"one pass / GEMM of the same shape = {rates['one_pass'] / rates['gemm_float32']:.2f}"
    )
    return rates


def run(smoke=False):
    if "--rates" in sys.argv:
        return cg_iteration_rates()
    if not smoke:
        # BENCH_SCALE_TASKS=multiclass and BENCH_SCALE_METHODS=a,b run a part of the study
        tasks = os.environ.get("BENCH_SCALE_TASKS")
        only = os.environ.get("BENCH_SCALE_METHODS")
        chosen = {
            task: tuple(m for m in methods if not only or m in only.split(","))
            for task, methods in TASKS.items()
            if not tasks or task in tasks.split(",")
        }
        record = full_run(tasks=chosen)
        return _rows(record["runs"])
    runs, _ = smoke_runs()
    return _rows(runs)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--worker"]:
        _worker(sys.argv[2:])
    else:
        run(smoke="--smoke" in sys.argv)
