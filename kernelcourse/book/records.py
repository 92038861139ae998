"""The stored full-size benchmark records, as the book's appendix shows them.

``python -m benchmarks scale`` (Rahimi & Recht's Forest row), ``python -m benchmarks
lecture004`` (the Nyström against random features study at full size), ``python -m benchmarks
svm`` (``KernelSVC`` against LIBSVM and oneDAL) and ``python -m benchmarks gpu`` write
JSON records that ship with the package (:func:`kernelcourse.datasets.load_benchmark` reads
them). The functions here turn a record into the :class:`~kernelcourse.book.report.Table` the
page prints, so the page holds prose and figures and no parsing.
"""

from __future__ import annotations

import math
import re

from .report import Table, fmt_sci

__all__ = [
    "FOREST_LABELS",
    "FOREST_TASKS",
    "FOREST_TASKS_SHORT",
    "pct",
    "seconds",
    "gib",
    "forest_settings",
    "forest_runs",
    "forest_table",
    "forest_comparison",
    "tree_trials_table",
    "binning_trials_table",
    "falkon_trials_table",
    "falkon_sizes_table",
    "lecture004_steps",
    "lecture004_svm_table",
    "lecture004_pca_table",
    "gpu_table",
    "gpu_frontier_table",
    "gpu_speedup_table",
    "cpu_frontier",
    "svm_speed_table",
    "svm_data",
    "svm_agreement",
    "svm_table",
    "book_counts",
    "machine_line",
]

#: the Forest row's methods, named as the book names them
FOREST_LABELS = {
    "random_binning_ridge": "random binning + ridge",
    "rff_ridge": "Fourier features + ridge",
    "nystroem_falkon": "Nyström-FALKON",
    "nystroem_falkon_200k": "Nyström-FALKON, 200,000 rows",
    "rff_linear_svm": "Fourier features + linear SVM",
    "sgd_out_of_core": "Fourier features + SGD",
    "hist_gradient_boosting": "gradient-boosted trees",
    "random_forest": "random forest",
    "extra_trees": "extremely randomized trees",
}
#: the tree models of the comparison (scikit-learn's ensembles)
TREE_METHODS = ("hist_gradient_boosting", "random_forest", "extra_trees")
#: the two tasks of the record, as the tables name them
FOREST_TASKS = {
    "binary": "cover type 2 against the rest",
    "multiclass": "all seven cover types",
}
#: the same, short, for a column of a table that names the task of each run
FOREST_TASKS_SHORT = {"binary": "type 2 vs rest", "multiclass": "7 classes"}


# Between a number and its unit, a no-break space: a line of prose never starts with "%" or
# "s" on a phone.
_UNIT_SPACE = "\u00a0"


def _unbroken(text):
    """``text`` with no-break spaces around "=" and "×", so that a narrow table column
    breaks a setting such as "D = 4,000, γ = 0.1" only after a comma, never inside
    "γ = 0.1"."""
    return text.replace(" = ", f"{_UNIT_SPACE}={_UNIT_SPACE}").replace(
        " × ", f"{_UNIT_SPACE}×{_UNIT_SPACE}"
    )


def pct(value, digits=1):
    """A fraction as a percentage with ``digits`` decimals, a no-break space before the
    sign: ``pct(0.9801) == "98.0\u00a0%"``."""
    return f"{100 * value:.{digits}f}{_UNIT_SPACE}%"


def seconds(value):
    """A duration in seconds with two significant digits, plain notation and a no-break
    space before the unit: ``"410\u00a0s"``, ``"0.21\u00a0s"``."""
    if value >= 100:
        return f"{value:.0f}{_UNIT_SPACE}s"
    return f"{float(f'{value:.2g}'):g}{_UNIT_SPACE}s"


def gib(n_bytes):
    """A size in bytes as GiB with one decimal and a no-break space before the unit:
    ``gib(2**32) == "4.0\u00a0GiB"``."""
    return f"{n_bytes / 2**30:.1f}{_UNIT_SPACE}GiB"


def _lam(value):
    """λ as the tables write it: a power of ten as ``10⁻⁶``, any other value plainly."""
    exponent = round(math.log10(value)) if value > 0 else None
    if exponent is not None and abs(value - 10.0**exponent) <= 1e-12 * value:
        return fmt_sci(10.0**exponent)
    return f"{value:g}"


_SPACED_COUNT = re.compile(r"(?<![\d.])\d{1,3}(?: \d{3})+(?![\d.])")


def book_counts(text):
    """``text`` with every count written with spaces between its groups of three digits
    ("120 000") written as the book writes counts, with a comma ("120,000"); a comma is
    what the tables print, and a space can break a count across two lines on a phone."""
    return _SPACED_COUNT.sub(lambda m: m.group(0).replace(" ", ","), text)


def machine_line(record):
    """One sentence naming where and when a record was measured."""
    m = record["machine"]
    where = m.get("gpu") or f"{m['cpu']}, {m['cores']} cores"
    return f"measured {record['date']} on {where}; numpy {m['numpy']}, scikit-learn {m['sklearn']}"


def _tree_setting(method, chosen):
    if method == "hist_gradient_boosting":
        return (
            f"{chosen['max_iter']} iterations, rate {chosen['learning_rate']:g}, "
            f"{chosen['max_leaf_nodes']} leaves"
        )
    return f"{chosen['n_estimators']} trees"


def forest_settings(record, task="binary"):
    """The setting of each method of ``task`` in words (γ, λ, D, M, P, trees), from the
    record."""
    settings = record["settings"]
    validation = record["validation"]
    out = {m: _tree_setting(m, v["chosen"]) for m, v in validation.get(f"trees_{task}", {}).items()}
    if task == "multiclass":
        mc = validation.get("binning_multiclass")
        if mc:
            out["random_binning_ridge"] = (
                f"P = {mc['chosen']['n_grids']}, the binary task's γ_k × {mc['gamma_scale']:g}, "
                f"λ = {mc['chosen']['lam']:g}"
            )
        return out
    chosen = validation["binning"]["chosen"]
    gamma_rff = validation["rff"]["chosen"]["gamma"]
    D = settings["rff"]["n_components"]
    out.update(
        {
            "random_binning_ridge": f"P = {chosen['n_grids']}, γ_k per feature",
            "rff_ridge": f"D = {D:,}, γ = {gamma_rff:g}",
            "nystroem_falkon": _falkon_setting(settings, validation),
            "nystroem_falkon_200k": _falkon_setting(settings, validation, fast=True)
            if "falkon_200k" in settings
            else "",
            "rff_linear_svm": (
                f"D = {settings['svm']['n_components']}, C = {settings['svm']['C']:g}"
            ),
            "sgd_out_of_core": f"D = {D:,}, {settings['sgd']['epochs']} passes, streamed",
        }
    )
    return out


def _falkon_setting(settings, validation, fast=False):
    if "falkon" in validation:  # γ (or the γ_k) and λ validated, M by the budget
        chosen = validation["falkon"]["chosen"]
        gamma = chosen["gamma"]
        bandwidth = f"γ = {gamma:g}" if isinstance(gamma, float | int) else "γ_k per feature"
        M = settings["falkon_200k"]["n_components"] if fast else chosen["n_components"]
        return f"M = {M:,}, {bandwidth}, λ = {_lam(chosen['lam'])}"
    falkon = settings["falkon"]  # records before the validation: λ = 1/√n
    M = falkon.get("n_components", falkon.get("n_centers"))
    return f"M = {M:,}, λ = {falkon['lam']:g}" if "lam" in falkon else f"M = {M:,}, λ = 1/√n"


def falkon_trials_table(record):
    """The validation fits of Nyström-FALKON: bandwidths, λ, validation accuracy and time,
    the fit the search kept marked "(chosen)", as in the other validation tables."""
    v = record["validation"]["falkon"]
    rows = []
    for r in v["grid"]:
        if r["gamma_scale"] is None:
            bandwidth = f"one γ = {r['gamma']:g}"
        else:
            bandwidth = f"γ_k = {r['gamma_scale']:g} × binning factor²"
        rows.append(
            [
                _unbroken(_chosen(bandwidth, r)),
                _lam(r["lam"]),
                f"{100 * r['validation_accuracy']:.2f} %",
                seconds(r["seconds"]),
            ]
        )
    first = v["grid"][0]
    return Table(
        rows,
        ["bandwidths", "λ", "accuracy", "fit"],
        title=_unbroken(
            f"Nyström-FALKON, M = {first['n_components']:,} on {first['n_rows']:,} rows: "
            "validation accuracy"
        ),
    )


def falkon_sizes_table(record):
    """The centres M tried for the full fit: its predicted time and memory and whether
    they fit the budgets."""
    return Table(
        [
            [
                f"{r['n_components']:,}",
                seconds(r["predicted_fit_s"]),
                gib(r["predicted_peak_bytes"]),
                "yes" if r["affordable"] else "no",
            ]
            for r in record["validation"]["falkon"]["sizes"]
        ],
        ["M", "predicted fit", "predicted memory", "affordable"],
        title=f"Nyström-FALKON on all {record['data']['n_train']:,} training rows, as predicted "
        "from the validation fit",
    )


def forest_runs(record, task="binary"):
    """The record's finished runs of ``task`` by method, in the record's order."""
    return {
        r["method"]: r
        for r in record["runs"]
        if "accuracy" in r and r.get("task", "binary") == task
    }


def _within_budget(record, r):
    budget = record.get("budget_s", 300.0)
    memory = record.get("memory_budget_bytes", 4 * 2**30)
    return r["fit_s"] <= budget and r["peak_rss_bytes"] <= memory


def forest_table(record, task="binary", part="accuracy"):
    """One of two tables of the runs of ``task``, each few columns wide enough for a phone.

    ``part="accuracy"``: method, setting and test accuracy; for the binary task the title
    adds Rahimi & Recht's published accuracies (two methods of nine, too few for a column).
    ``part="cost"``: method, fit and predict time and peak memory,
    with the budgets in the title and a run that exceeded them marked "over budget". A run
    that did not finish is listed in both with its reason."""
    if part not in ("accuracy", "cost"):
        raise ValueError(f"part must be 'accuracy' or 'cost', got {part!r}.")
    setting = forest_settings(record, task)
    binary = task == "binary"
    if part == "accuracy":
        header = ["method", "setting", "accuracy"]
    else:
        header = ["method", "fit", "predict", "memory"]
    rows = []
    for m, r in forest_runs(record, task).items():
        label = FOREST_LABELS.get(m, m)
        if part == "accuracy":
            row = [label, _unbroken(setting.get(m, "")), pct(r["accuracy"])]
        else:
            if not _within_budget(record, r):
                label += " (over budget)"
            row = [
                label,
                seconds(r["fit_s"]),
                seconds(r["predict_s"]),
                gib(r["peak_rss_bytes"]),
            ]
        rows.append(row)
    for r in record["runs"]:
        if "error" in r and r.get("task", "binary") == task:
            m = r["method"]
            rows.append([FOREST_LABELS.get(m, m), "did not finish", *["—"] * (len(header) - 2)])
    if part == "accuracy":
        data = record["data"]
        title = (
            f"Covertype, {FOREST_TASKS[task]}: {data['n_train']:,} training and "
            f"{data['n_test']:,} test points"
        )
        if binary:
            published = record["reference"]["test_error_percent"].items()
            title += ". Published by Rahimi & Recht: " + ", ".join(
                f"{pct(1 - e / 100)} for {FOREST_LABELS.get(m, m)}" for m, e in published
            )
    else:
        minutes = record.get("budget_s", 300.0) / 60
        budget = record.get("memory_budget_bytes", 4 * 2**30) / 2**30
        title = f"Cost, {FOREST_TASKS[task]} (budget: {minutes:g} min of fit, {budget:g} GiB)"
    return Table(rows, header, title=title)


def forest_comparison(record, task="binary"):
    """Random binning against the best tree model of ``task`` that kept to the budgets:
    ``(binning run, best tree method, its run, accuracy lead in points)``, the lead negative
    where the trees win."""
    runs = forest_runs(record, task)
    trees = [m for m in TREE_METHODS if m in runs and _within_budget(record, runs[m])]
    best = max(trees, key=lambda m: runs[m]["accuracy"])
    rb = runs["random_binning_ridge"]
    return rb, best, runs[best], 100 * (rb["accuracy"] - runs[best]["accuracy"])


def tree_trials_table(record, task="binary"):
    """The validation of the tree models: each forest size, and for gradient boosting the
    best number of iterations of each (learning rate, leaves), with the validation accuracy
    and the fit time on the fitting part of the training rows; the trial the search kept
    says "(chosen)", so that four columns fit a phone."""
    trees = record["validation"][f"trees_{task}"]
    rows = []
    for m in ("random_forest", "extra_trees"):
        for r in trees[m]["grid"]:
            rows.append(
                [
                    FOREST_LABELS[m],
                    _chosen(f"{r['n_estimators']} trees", r),
                    f"{100 * r['validation_accuracy']:.2f} %",
                    seconds(r["seconds"]),
                ]
            )
    grid = trees["hist_gradient_boosting"]["grid"]
    for lr, leaves in dict.fromkeys((r["learning_rate"], r["max_leaf_nodes"]) for r in grid):
        same = [r for r in grid if (r["learning_rate"], r["max_leaf_nodes"]) == (lr, leaves)]
        r = next((r for r in same if r["kept"]), max(same, key=lambda r: r["validation_accuracy"]))
        rows.append(
            [
                FOREST_LABELS["hist_gradient_boosting"],
                _chosen(
                    f"rate {lr:g}, {leaves} leaves: iteration {r['max_iter']} of "
                    f"{same[-1]['max_iter']}",
                    r,
                ),
                f"{100 * r['validation_accuracy']:.2f} %",
                seconds(r["seconds"]),
            ]
        )
    return Table(
        rows,
        ["model", "trial", "accuracy", "fit"],
        title=f"Tree models, {FOREST_TASKS[task]}: validation accuracy, boosting at its best "
        "iteration",
    )


def _chosen(trial, r):
    """A validation trial in words, with "(chosen)" where the search kept it. The marked
    text is long enough (16 characters or more) for a table to wrap it on a phone."""
    return f"{trial} (chosen)" if r["kept"] else trial


def _trial(r):
    if r["stage"] == 1:
        return f"γ = {r['gamma']:g}, λ = {r['lam']:g}"
    if r["stage"] == 2:
        return f"{r['group'].replace('_', ' ')}: γ_k × {r['factor']:g}"
    return f"P = {r['n_grids']}"


def binning_trials_table(record):
    """Every validation fit of random binning: what it tried ("(chosen)" where the
    search kept it), its validation accuracy, time and memory. The three stages (γ and λ, a
    factor on each feature group's γ_k, the grids P) are named in the title and read from
    the trials, so that four columns fit a phone."""
    grid = record["validation"]["binning"]["grid"]
    return Table(
        [
            [
                _unbroken(_chosen(_trial(r), r)),
                f"{100 * r['validation_accuracy']:.2f} %",
                seconds(r["seconds"]),
                gib(r["fit_peak_bytes"]),
            ]
            for r in grid
        ],
        ["trial", "accuracy", "fit", "memory"],
        title="Random binning: every validation fit, in the order of the search: γ and λ, "
        "then a factor on each feature group's γ_k, then the number of grids P",
    )


def lecture004_steps(record):
    """The record's steps by ``(step, data)``."""
    return {(s["step"], s["data"]): s for s in record["steps"]}


def lecture004_svm_table(record, data, title):
    """Exact SVMs (LIBSVM and the package's KernelSVC) and linear SVMs on D random Fourier
    or m Nyström features, at the lecture's sizes, for ``data`` ("adult" or "covertype").
    An exact SVM stopped at its time limit shows "> limit" as its fit time."""
    done = lecture004_steps(record)
    grid = done["grid", data]["result"]
    rows = []
    for step, label in [
        ("sklearn_svc", "exact RBF SVM (LIBSVM)"),
        ("kernel_svc", "exact RBF SVM (KernelSVC)"),
    ]:
        s = done.get((step, data), {})
        if "result" in s:
            r = s["result"]
            rows.append(
                [label, "—", pct(r["accuracy"]), seconds(r["fit_s"]), seconds(r["predict_s"])]
            )
        elif "limit_s" in s:
            rows.append([label, "—", "—", f"> {s['limit_s']} s", "—"])
        else:
            rows.append([label, "—", "—", "not run", "—"])
    for step, label in [
        ("rff_linear_svm", "Fourier features + linear SVM"),
        ("nystroem_linear_svm", "Nyström + linear SVM"),
    ]:
        for r in done[step, data]["result"]["runs"]:
            rows.append(
                [
                    label,
                    r["n_components"],
                    pct(r["accuracy"]),
                    seconds(r["fit_s"]),
                    seconds(r["predict_s"]),
                ]
            )
    n_train, n_test = record["settings"]["sizes"][data]
    return Table(
        rows,
        ["method", "D or m", "accuracy", "fit", "predict"],
        title=_unbroken(
            f"{title}: {n_train:,} training, {n_test:,} test rows; C = {grid['C']:g}, "
            f"γ = {grid['gamma']:g}; D or m: Fourier or Nyström features"
        ),
    )


def lecture004_pca_table(record, source="ours"):
    """Exact, Fourier and Nyström kernel PCA on MNIST at the lecture's size.

    ``source="ours"``: the record's time, first component's variance, its share of the ten
    components and its share of the kernel's total variance. ``source="lecture"``: lecture
    004's time, first variance and first explained-variance ratio, as its slides give
    them."""
    if source not in ("ours", "lecture"):
        raise ValueError(f"source must be 'ours' or 'lecture', got {source!r}.")
    done = lecture004_steps(record)
    lecture = record["lecture"]["pca"]
    exact = done["kernel_pca", "mnist"]["result"]
    rows = []
    for step, name in [
        ("kernel_pca", "kernel PCA"),
        ("fourier_pca", "Fourier PCA"),
        ("nystroem_pca", "Nystroem PCA"),
    ]:
        label = name.replace("Nystroem", "Nyström")
        if source == "lecture":
            rows.append(
                [
                    label,
                    seconds(lecture["seconds"][name]),
                    f"{lecture['explained_variance'][name][0]:.3g}",
                    f"{lecture['explained_variance_ratio'][name][0]:.3g}",
                ]
            )
            continue
        r = done[step, "mnist"]["result"]
        v = r["explained_variance"]
        rows.append(
            [
                label,
                seconds(r["fit_s"]),
                f"{v[0]:.3g}",
                f"{v[0] / sum(v):.3g}",
                f"{v[0] / exact['total_variance']:.3g}",
            ]
        )
    pca = record["settings"]["pca"]
    if source == "lecture":
        return Table(
            rows,
            ["method", "time", "variance", "ratio"],
            title="Lecture 004's slides: the first component's time, variance and "
            "explained-variance ratio",
        )
    return Table(
        rows,
        ["method", "time", "variance", "share of 10", "share of total"],
        title=f"{pca['n_samples']:,} MNIST digits, {pca['n_features']} random features: the "
        f"first component's variance, and its share of the {pca['n_components']} leading "
        "components' variance and of the kernel's total",
    )


def gpu_table(record, part="accuracy"):
    """One of two tables of the GPU record's runs, each few columns wide enough for a phone,
    as :func:`forest_table` splits the CPU runs; a run is named by its method and task.

    ``part="accuracy"``: run, setting and test accuracy. ``part="cost"``: run, fit and
    predict time and peak GPU memory."""
    if part not in ("accuracy", "cost"):
        raise ValueError(f"part must be 'accuracy' or 'cost', got {part!r}.")
    settings = record["settings"]
    gpu = record["machine"].get("gpu", "a GPU")
    rows = []
    for r in record["runs"]:
        label = f"{FOREST_LABELS.get(r['method'], r['method'])}, {FOREST_TASKS_SHORT[r['task']]}"
        if part == "cost":
            rows.append(
                [
                    label,
                    seconds(r["fit_s"]),
                    seconds(r["predict_s"]),
                    gib(r["peak_device_bytes"]),
                ]
            )
            continue
        if r["method"] == "nystroem_falkon":
            M = settings.get("n_components", settings.get("n_centers"))
            per_feature = settings.get("bandwidths") == "binning"
            setting = (
                f"M = {M:,}, γ_k per feature"
                if per_feature
                else f"M = {M:,}, γ = {settings['gamma']:g}"
            )
        else:
            setting = f"D = {r['n_components']:,}, γ = {r['gamma']:g}"
        rows.append([label, _unbroken(setting), pct(r["accuracy"])])
    if part == "cost":
        return Table(
            rows,
            ["method, task", "fit", "predict", "memory"],
            title=f"Cost on {gpu} (memory: the peak on the GPU)",
        )
    return Table(
        rows, ["method, task", "setting", "accuracy"], title=f"Full Covertype on {gpu}"
    )


def gpu_speedup_table(record):
    """The GPU record's like-for-like timings: each computation run on the GPU and on the
    same machine's CPU cores, both times in seconds and their ratio; the computations are
    named as the record names them, counts written the book's way (:func:`book_counts`)."""
    m = record["machine"]
    rows = [
        [
            _unbroken(book_counts(c["case"])),
            seconds(c["cpu_s"]),
            seconds(c["gpu_s"]),
            f"{c['cpu_s'] / c['gpu_s']:.0f}×",
        ]
        for c in record["device_vs_cpu"]
    ]
    cores = m.get("cpu_threads", m["cores"])
    return Table(
        rows,
        ["computation", "CPU", "GPU", "ratio"],
        title=f"The same computation on one {m.get('gpu', 'GPU')} and on {cores} CPU threads "
        f"of the same machine ({m['cpu']}): time in seconds, and the CPU's time over the GPU's",
    )


def cpu_frontier(record, task="binary"):
    """The CPU record's runs of ``task`` that no other run beats in both fit time and
    accuracy, fastest first."""
    front, best = [], -1.0
    for r in sorted(forest_runs(record, task).values(), key=lambda r: r["fit_s"]):
        if r["accuracy"] > best:
            front.append(r)
            best = r["accuracy"]
    return front


def gpu_frontier_table(gpu, cpu, task="binary"):
    """The GPU record's runs of ``task`` beside the accuracy–time frontier of the CPU record
    (:func:`cpu_frontier`): method and where it ran (GPU or CPU, both named in the title),
    accuracy and wall-clock fit time; three columns, which a phone's width holds."""

    def row(r, where):
        label = FOREST_LABELS.get(r["method"], r["method"])
        return [f"{label} ({where})", pct(r["accuracy"]), seconds(r["fit_s"])]

    rows = [row(r, "GPU") for r in gpu["runs"] if r["task"] == task]
    rows += [row(r, "CPU") for r in cpu_frontier(cpu, task)]
    return Table(
        rows,
        ["method", "accuracy", "fit time"],
        title=f"Full Covertype, {FOREST_TASKS[task]}: wall-clock fit time on one "
        f"{gpu['machine'].get('gpu', 'GPU')} GPU, or on {cpu['machine']['cores']} CPU cores "
        "for the CPU runs that no other CPU run beats in both accuracy and time",
    )


def svm_speed_table(record):
    """``KernelSVC``'s fit time at each training size of the SVM record, in seconds, and each
    peer's (LIBSVM, and oneDAL where the record has it) as a multiple of it: above 1×, the
    peer is slower. At most four columns, which a phone's width holds; the accuracies and
    dual objectives, equal across the solvers, are for the text to state."""
    rows = record["rows"]
    peers = [p for p in ("LIBSVM", "oneDAL") if p in rows[0]["fit_s"]]
    cells = []
    for r in rows:
        t = r["fit_s"]
        cells.append(
            [f"{r['n']:,}", seconds(t["KernelSVC"])]
            + [f"{t[p] / t['KernelSVC']:.1f}×" for p in peers]
        )
    names = " and ".join(f"{p}'s" for p in peers)
    multiples = "as multiples of it" if len(peers) > 1 else "as a multiple of it"
    title = (
        f"Fit time on n Covertype rows: KernelSVC's in seconds, {names} {multiples} "
        "(above 1×: slower than KernelSVC)"
    )
    return Table(cells, ["n", "KernelSVC", *peers], title=title)


#: the solvers of the SVM record, in the order the tables print them
SVM_SOLVERS = ("KernelSVC", "LIBSVM", "oneDAL")


def _svm_solvers(record):
    return [p for p in SVM_SOLVERS if p in record["rows"][0]["fit_s"]]


def svm_data(record):
    """The SVM record's data in words, its counts written the book's way
    (:func:`book_counts`): the record stores the description as the benchmark wrote it."""
    return book_counts(record["data"])


def svm_agreement(row):
    """How far the solvers of one row of the SVM record are from one another:
    ``(relative spread of the dual objectives, spread of the test accuracies in points)``,
    the largest minus the smallest over the solvers. The benchmark times a row only when
    each peer is within 10⁻³ relative and 0.1 points of ``KernelSVC``."""
    obj, acc = row["dual_objective"].values(), row["test_accuracy"].values()
    return (max(obj) - min(obj)) / abs(row["dual_objective"]["KernelSVC"]), 100 * (
        max(acc) - min(acc)
    )


def svm_table(record, part="accuracy"):
    """The SVM record as it was measured, one row per training size n and one column per
    solver (``KernelSVC``, LIBSVM and oneDAL where the record has it), at most four
    columns, which a phone's width holds.

    ``part="accuracy"``: the test accuracy of each solver, two decimals, since they differ
    by hundredths of a point. ``part="time"``: each solver's fit time in seconds, the
    shortest of the repeated fits (:func:`svm_speed_table` gives the peers' as multiples).
    """
    if part not in ("accuracy", "time"):
        raise ValueError(f"part must be 'accuracy' or 'time', got {part!r}.")
    solvers = _svm_solvers(record)
    settings = record["settings"]
    rows = []
    for r in record["rows"]:
        if part == "accuracy":
            rows.append([f"{r['n']:,}"] + [pct(r["test_accuracy"][p], 2) for p in solvers])
        else:
            rows.append([f"{r['n']:,}"] + [seconds(r["fit_s"][p]) for p in solvers])
    if part == "accuracy":
        title = (
            f"Test accuracy on {settings['n_test']:,} Covertype rows after training on n "
            f"(RBF kernel, γ = {settings['gamma']}, C = {settings['C']:g}, "
            f"tol = {_lam(settings['tol'])})"
        )
    else:
        repeat = max(r["repeat"] for r in record["rows"])
        title = (
            f"Fit time on n Covertype rows, in seconds, each the shortest of up to {repeat} fits"
        )
    return Table(rows, ["n", *solvers], title=_unbroken(title))
