"""Progress lines of long fits (issue 18: no run past a minute without progress output).

A fake clock that jumps 10 s at every read makes any fit "slow" without waiting; with the
real clock the same small fits must print nothing at all.
"""

import itertools

import numpy as np
import pytest
import scipy.sparse as sp
import sklearn
from sklearn.exceptions import ConvergenceWarning

from kernelcourse import _progress
from kernelcourse._progress import Progress
from kernelcourse.features import RandomBinningFeatures
from kernelcourse.ridge import FeatureRidge, sparse_ridge_cg
from kernelcourse.scale import NystroemKRR, NystroemKRRClassifier
from kernelcourse.sgd import FeatureSGDClassifier
from kernelcourse.svm import KernelSVC, PrimalSVC, smo_solve


@pytest.fixture
def slow_clock(monkeypatch):
    """Every read of the progress clock is 10 s after the previous one."""
    ticks = itertools.count(0.0, 10.0)
    monkeypatch.setattr(_progress, "clock", lambda: next(ticks))
    monkeypatch.delenv("KERNELCOURSE_PROGRESS_AFTER", raising=False)


def classification(n=400, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = (X[:, 0] + X[:, 1] ** 2 - 1 + 0.5 * rng.normal(size=n) > 0).astype(int)
    return X, y


def regression(n=300, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    return X, np.sin(X[:, 0]) + 0.1 * rng.normal(size=n)


# -- the reporter itself ---------------------------------------------------------------------------
def test_default_is_quiet_before_the_threshold_then_periodic(monkeypatch, capsys):
    monkeypatch.delenv("KERNELCOURSE_PROGRESS_AFTER", raising=False)
    now = [0.0]
    monkeypatch.setattr(_progress, "clock", lambda: now[0])
    p = Progress("task", None)
    for t in np.arange(0.0, 29.0, 0.5):
        now[0] = t
        assert not p.due()
    p.finish("done")  # nothing was reported, so no closing line either
    assert capsys.readouterr() == ("", "")
    lines = 0
    for t in np.arange(29.0, 125.0, 0.5):  # reports at 30, 60, 90, 120 s
        now[0] = t
        if p.due():
            p.report(f"at {t}")
            lines += 1
    p.finish("done")
    out, err = capsys.readouterr()
    assert out == "" and lines == 4
    assert err.splitlines() == [
        "[task, 30 s] at 30.0",
        "[task, 60 s] at 60.0",
        "[task, 90 s] at 90.0",
        "[task, 120 s] at 120.0",
        "[task, 124 s] done",
    ]


def test_threshold_from_the_environment(slow_clock, monkeypatch, capsys):
    monkeypatch.setenv("KERNELCOURSE_PROGRESS_AFTER", "inf")  # what the book's kernels use
    FITS["KernelSVC"](None)
    assert capsys.readouterr() == ("", "")
    monkeypatch.setenv("KERNELCOURSE_PROGRESS_AFTER", "0")
    p = Progress("task", None)
    assert p.due()
    for bad in ("soon", "-1", "nan"):
        monkeypatch.setenv("KERNELCOURSE_PROGRESS_AFTER", bad)
        with pytest.raises(ValueError, match="KERNELCOURSE_PROGRESS_AFTER"):
            Progress("task", None)
    # notebooks run (make notebooks, strict nbval) with the default's lines switched off
    from kernelcourse.book.notebooks import KERNEL_ENV

    assert KERNEL_ENV["KERNELCOURSE_PROGRESS_AFTER"] == "inf"


def test_verbose_levels(monkeypatch, capsys):
    now = [0.0]
    monkeypatch.setattr(_progress, "clock", lambda: now[0])
    silent = Progress("task", 0)
    assert not silent and not silent.due()
    silent.finish("done")
    counts = []
    for verbose in (1, True, 2):
        p = Progress("task", verbose)
        counts.append(0)
        for t in np.arange(0.0, 5.0, 0.25):
            now[0] = t
            if p.due():
                p.report("x")
                counts[-1] += 1
        now[0] = 0.0
    assert counts == [5, 5, 20]  # 1 (or True): once a second; 2: every check
    out, err = capsys.readouterr()
    assert err == "" and out.count("[task") == 30


# -- the estimators --------------------------------------------------------------------------------
def fits():
    """(name, fit) pairs: each a small fit of one estimator with the given verbose."""
    X, y = classification()
    Xr, yr = regression()
    return [
        ("KernelSVC", lambda v: KernelSVC(C=100.0, tol=1e-6, verbose=v).fit(X, y)),
        (
            "KernelSVC-ovo",
            lambda v: KernelSVC(C=100.0, tol=1e-6, verbose=v).fit(X, y + (X[:, 2] > 1)),
        ),
        ("smo_solve", lambda v: smo_solve(X @ X.T, 2.0 * y - 1, 10.0, tol=1e-6, verbose=v)),
        ("PrimalSVC-newton", lambda v: PrimalSVC(C=10.0, tol=1e-8, verbose=v).fit(X, y)),
        (
            "PrimalSVC-dcd",
            lambda v: PrimalSVC(
                C=10.0, loss="hinge", tol=1e-3, max_iter=100, verbose=v, random_state=0
            ).fit(X, y),
        ),
        (
            "NystroemKRR",
            lambda v: NystroemKRR(
                n_components=40, max_iter=8, tol=1e-12, random_state=0, verbose=v
            ).fit(Xr, yr),
        ),
        (
            "NystroemKRR-precompute",
            lambda v: NystroemKRR(
                n_components=40, max_iter=8, tol=1e-12, precompute=True, random_state=0, verbose=v
            ).fit(Xr, yr),
        ),
        (
            "NystroemKRRClassifier",
            lambda v: NystroemKRRClassifier(
                n_components=40, max_iter=8, tol=1e-12, random_state=0, verbose=v
            ).fit(X, y),
        ),
        (
            "FeatureSGDClassifier",
            lambda v: FeatureSGDClassifier(block_size=20, random_state=0, verbose=v).fit(X, y),
        ),
        (
            "FeatureRidge-sparse",
            lambda v: FeatureRidge(
                RandomBinningFeatures(n_grids=20, gamma=0.5, random_state=0),
                lam=1e-3,
                tol=1e-12,
                max_iter=30,
                verbose=v,
            ).fit(Xr, yr),
        ),
    ]


FITS = dict(fits())
QUIET = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


@QUIET
@pytest.mark.parametrize("name", list(FITS))
def test_slow_fit_reports_on_stderr(slow_clock, capsys, name):
    FITS[name](None)
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.splitlines()
    assert len(lines) >= 2, err
    # elapsed time on every line, and the closing line last
    assert all(line.startswith("[") and " s] " in line for line in lines), err
    assert "done" in lines[-1] or "stopped" in lines[-1], err
    # the quantity that converges is named
    assert any(
        word in err
        for word in ("KKT gap", "‖∇‖", "projected-gradient", "relative residual", "loss")
    ), err


@QUIET
@pytest.mark.parametrize("name", list(FITS))
def test_fast_fit_and_verbose_zero_print_nothing(slow_clock, capsys, monkeypatch, name):
    FITS[name](0)  # slow, but silenced
    assert capsys.readouterr() == ("", "")
    monkeypatch.setattr(_progress, "clock", _progress.time.monotonic)
    FITS[name](None)  # the default on a fast fit: nothing
    assert capsys.readouterr() == ("", "")


@QUIET
@pytest.mark.parametrize("name", ["KernelSVC", "PrimalSVC-dcd", "FeatureSGDClassifier"])
def test_verbose_two_reports_on_stdout(slow_clock, capsys, name):
    FITS[name](2)
    out, err = capsys.readouterr()
    assert err == "" and out.count("\n") >= 3


@QUIET
@pytest.mark.parametrize("name", [n for n in FITS if n != "smo_solve"])
def test_progress_does_not_change_the_model(slow_clock, capsys, name):
    quiet, loud = FITS[name](0), FITS[name](2)
    for attr in ("dual_coef_", "coef_", "intercept_"):
        if hasattr(quiet, attr):
            np.testing.assert_array_equal(getattr(loud, attr), getattr(quiet, attr))


def test_sparse_ridge_cg_callback():
    Xr, yr = regression()
    Z = sp.csr_matrix(
        RandomBinningFeatures(n_grids=20, gamma=0.5, random_state=0).fit_transform(Xr)
    )
    seen = []
    with pytest.warns(ConvergenceWarning):
        _, _, history = sparse_ridge_cg(
            Z, yr, 1e-3, tol=1e-14, max_iter=5, callback=lambda it, r: seen.append((it, r))
        )
    assert [s[0] for s in seen] == [1, 2, 3, 4, 5]
    np.testing.assert_allclose([s[1] for s in seen], history[1:])
    with pytest.raises(TypeError, match="callback"):
        sparse_ridge_cg(Z, yr, 1e-3, callback=3)


@pytest.mark.parametrize("verbose", [-1, 1.5, "yes"])
def test_verbose_is_validated(verbose):
    X, y = classification(n=40)
    for est in (KernelSVC(verbose=verbose), PrimalSVC(verbose=verbose)):
        with pytest.raises(ValueError, match="verbose"):
            est.fit(X, y)


def test_device_path_reports_when_slow(slow_clock, capsys, monkeypatch):
    xs = pytest.importorskip("array_api_strict")
    monkeypatch.setenv("SCIPY_ARRAY_API", "1")
    Xr, yr = regression()
    with sklearn.config_context(array_api_dispatch=True), pytest.warns(ConvergenceWarning):
        NystroemKRR(n_components=40, max_iter=8, tol=1e-12, random_state=0).fit(
            xs.asarray(Xr), xs.asarray(yr)
        )
    err = capsys.readouterr().err
    assert "CG iteration" in err and "done: 8 CG iterations" in err, err
