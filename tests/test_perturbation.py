"""The perturbed-numerics notebook run (``make nbval-perturbed``) really perturbs the numerics.

``make test`` runs every notebook a second time under the environment in the Makefile's
``PERTURB`` line and requires the same outputs to printed precision. That proves portability
across CPUs only if the perturbation changes low-order bits; these tests show that it does, for
LAPACK/BLAS and for numba-compiled loops, so the second run can never become a no-op.
"""

import os
import pathlib
import re
import shlex
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]

PROBE = """
import hashlib
import numpy as np
from numba import njit

@njit(fastmath={"contract"})
def axpy(a, x, y, out):
    # a*x + y is fused into one FMA where the target CPU has it, rounded twice where not
    for i in range(x.size):
        out[i] = a[i] * x[i] + y[i]

rng = np.random.default_rng(0)
A = rng.standard_normal((300, 300))
eig = np.linalg.eigvalsh(A @ A.T)
v = rng.standard_normal((3, 10_000))
print("lapack", eig.tobytes().hex()[:64], hashlib.sha256(eig.tobytes()).hexdigest())
out = np.empty(v.shape[1])
axpy(v[0], v[1], v[2], out)
print("numba", hashlib.sha256(out.tobytes()).hexdigest())
"""


def perturbation():
    """The ``PERTURB`` variable of the Makefile, as a dict."""
    text = (ROOT / "Makefile").read_text().replace("\\\n", " ")
    line = re.search(r"^PERTURB\s*:=\s*(.*)$", text, flags=re.M).group(1)
    return dict(item.split("=", 1) for item in shlex.split(line))


def _probe(extra_env):
    env = {k: v for k, v in os.environ.items() if k not in perturbation()}
    env.update(extra_env)
    out = subprocess.run(
        [sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=120,
        check=True,
    ).stdout
    return dict(line.split(" ", 1) for line in out.strip().splitlines())


def test_perturbation_names_blas_kernel_numba_target_and_threads():
    env = perturbation()
    assert env["OPENBLAS_CORETYPE"]
    assert env["NUMBA_CPU_NAME"] == "generic"
    assert env["OMP_NUM_THREADS"] == env["OPENBLAS_NUM_THREADS"] == "1"


@pytest.fixture(scope="module")
def both_ways():
    return _probe({}), _probe(perturbation())


def test_perturbation_changes_lapack_low_order_bits(both_ways):
    default, perturbed = both_ways
    assert default["lapack"] != perturbed["lapack"], (
        "OPENBLAS_CORETYPE and one thread gave bit-identical eigenvalues: "
        "the perturbed notebook run would prove nothing"
    )


def test_perturbation_changes_numba_low_order_bits(both_ways):
    default, perturbed = both_ways
    assert default["numba"] != perturbed["numba"], (
        "NUMBA_CPU_NAME=generic gave bit-identical fused products: "
        "the perturbed notebook run would prove nothing for compiled loops"
    )


def test_make_test_runs_the_perturbed_pass():
    text = (ROOT / "Makefile").read_text()
    test_recipe = re.search(r"^test:.*?(?=^\S)", text, flags=re.M | re.S).group(0)
    assert "nbval-perturbed" in test_recipe
    recipe = re.search(r"^nbval-perturbed:.*?(?=^\S|\Z)", text, flags=re.M | re.S).group(0)
    assert "$(PERTURB)" in recipe and "$(NBVAL)" in recipe and "--nbval-lax" not in recipe
