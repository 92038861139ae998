"""Random Fourier features: RandomFourierFeatures.transform vs sklearn's RBFSampler.transform.

The float32 row is measured again in fresh processes under two other CPU settings, so that a
gain on this host's vector width is not taken for a gain on every CPU:

* "AVX2 host": numpy's dispatch, OpenBLAS's kernels and numba's target (with it the compiled
  cosine's) all held to AVX2 (a host without AVX-512), where this host has AVX-512;
* "numba generic": ``NUMBA_CPU_NAME=generic``, numba compiling for the baseline x86-64
  (SSE2), as for caches shared between machines; numpy and OpenBLAS still use the host's
  width. The compiled cosine, which is never cached, is then compiled for the host's width
  (see ``kernelcourse/features/_cosine.py``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
from sklearn.kernel_approximation import RBFSampler

from kernelcourse.features import RandomFourierFeatures

from ._timing import best_times, result


def _sizes(smoke):
    return (500, 10, 64) if smoke else (50_000, 54, 2000)


def _times(dtype, smoke):
    """Best times of our transform and RBFSampler's on the same draws, after checking that
    they agree."""
    n, d, D = _sizes(smoke)
    Xd = np.random.default_rng(0).normal(size=(n, d)).astype(dtype)
    ours = RandomFourierFeatures(gamma=0.02, n_components=D, random_state=0).fit(Xd)
    ref = RBFSampler(gamma=0.02, n_components=D, random_state=0).fit(Xd)
    # Same draws, so the outputs can be compared: the speed must not cost accuracy.
    err = float(np.abs(ours.transform(Xd[:1000]) - ref.transform(Xd[:1000])).max())
    if err > 1e-6:
        raise AssertionError(f"features differ from RBFSampler by {err:.3g} > 1e-6")
    # The floor of any such transform: the product X @ Ωᵀ alone, into a fresh output (whose
    # pages the system zeroes on first touch), with BLAS on every thread. RBFSampler pays it
    # too, and then makes three passes over the output, where ours makes one. It is timed
    # between ours and RBFSampler: right after a BLAS call, BLAS's threads still spin for a
    # while, and would take the cores from whichever transform came next but RBFSampler,
    # whose own product starts on those threads.
    W = np.ascontiguousarray(ours.omega_.T)
    t_ours, t_product, t_ref = best_times(
        [lambda: ours.transform(Xd), lambda: Xd @ W, lambda: ref.transform(Xd)],
        repeat=7 if dtype == np.float32 else 3,
    )
    return t_ours, t_ref, t_product


def _row(name, ours_s, reference_s, product_s):
    row = result(name, ours_s, reference_s, 2.0)
    row["floor"] = ("the product X @ Ωᵀ alone, into a fresh output", product_s)
    return row


def _wider_than_avx2():
    """numpy's dispatch targets above AVX2 that this CPU has (AVX-512), empty without them;
    None where numpy does not say or the CPU lacks AVX2."""
    try:
        from numpy._core import _multiarray_umath as umath
    except ImportError:  # numpy 1.x
        from numpy.core import _multiarray_umath as umath
    found = getattr(umath, "__cpu_features__", {})
    if not found.get("AVX2") or not found.get("FMA3"):
        return None
    targets = getattr(umath, "__cpu_dispatch__", [])
    return [t for t in targets if found.get(t) and (t.startswith("AVX512") or t == "X86_V4")]


def _cpu_settings():
    """The other settings as environment variables; ``None`` for one that cannot differ from
    the host's here, with the reason."""
    wider = _wider_than_avx2()
    if wider is None:
        avx2 = "not measured: this CPU has no AVX2 (or numpy does not list its features)"
    elif not wider:
        avx2 = "not measured: this host is an AVX2 host (the row above)"
    else:
        avx2 = {
            "NPY_DISABLE_CPU_FEATURES": " ".join(wider),
            "OPENBLAS_CORETYPE": "Haswell",
            "NUMBA_CPU_NAME": "haswell",
            "NUMBA_CPU_FEATURES": "",  # haswell's own features, not the host's wider ones
        }
    return {"AVX2 host": avx2, "numba generic": {"NUMBA_CPU_NAME": "generic"}}


def _times_elsewhere(env, smoke):
    code = (
        "import json, numpy as np; from benchmarks.bench_rff import _times; "
        f"print(json.dumps(_times(np.float32, {smoke!r})))"
    )
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    done = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, **env},
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def run(smoke=False):
    n, d, D = _sizes(smoke)
    rows = []
    for dtype in (np.float64, np.float32):
        name = f"RFF transform n={n} d={d} D={D} {np.dtype(dtype).name}"
        rows.append(_row(name, *_times(dtype, smoke)))
    for setting, env in _cpu_settings().items():
        name = f"RFF transform float32, {setting}"
        if isinstance(env, str):
            rows.append({"name": f"{name}: {env}", "skipped": True})
            continue
        rows.append(_row(name, *_times_elsewhere(env, smoke)))
    return rows
