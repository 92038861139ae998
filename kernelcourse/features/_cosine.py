r"""The cosine pass of random Fourier features, :math:`\text{scale}\cdot\cos(t + b)` over a
block of the product :math:`X\Omega^T`, compiled for the vector width of the CPU it runs on
(:doc:`chapter 5 </book/05_bochner_random_fourier_features>`).

The argument is reduced to :math:`r \in [-\pi, \pi]` by :math:`r = t - k\,2\pi` with
:math:`k = \operatorname{round}(t / 2\pi)` (two-part Cody–Waite), and then
:math:`\cos r = p(r^2)` for a polynomial p of degree 6 (float32) or 10 (float64), by Horner's
rule. Rows whose arguments may leave the range where the reduction is exact go to numpy's
cosine, so the result is within a few units of round-off of ``np.cos`` for every finite input.

The loop is written in LLVM's language and compiled by llvmlite, numba's own binding to LLVM,
rather than by numba, because of ``NUMBA_CPU_NAME=generic``. That setting asks numba for code
that its on-disk cache can serve to any x86-64 machine, and numba's loops are then four lanes
of SSE2: this pass ran at a quarter of the host's speed, behind numpy's cosine, which picks
the host's widest instructions at run time. This loop is never cached; it is compiled once
per process, in milliseconds, with the options numba's JIT uses, for the CPU numba compiles
for, except that the generic target gives the host's own. A named CPU
(``NUMBA_CPU_NAME=haswell``, with ``NUMBA_CPU_FEATURES``) is followed as numba follows it.
"""

from __future__ import annotations

import ctypes
import math
import string
import threading
from fractions import Fraction

import llvmlite.binding as llvm
import numpy as np
from numba.core import config as numba_config
from numpy.polynomial import Chebyshev, Polynomial

from .._validation import check_cosine_arguments

_TWO_PI = 2.0 * math.pi


def _cosine_coefficients(degree, dtype):
    r"""Power-basis coefficients, highest first, of the polynomial p of the given degree
    with p(u) ≈ cos(√u) on [0, π²]: Chebyshev interpolation, so that cos r ≈ p(r²) on
    [−π, π] with a maximum error of 1.1e-8 at degree 6 and 3e-15 at degree 10."""
    p = Chebyshev.interpolate(lambda u: np.cos(np.sqrt(u)), degree, domain=[0.0, math.pi**2])
    return tuple(dtype.type(c) for c in p.convert(kind=Polynomial).coef[::-1])


# Degree 6 is below float32 round-off; degree 10 is at float64 round-off.
_COS_COEFFICIENTS = {
    np.dtype(np.float32): _cosine_coefficients(6, np.dtype(np.float32)),
    np.dtype(np.float64): _cosine_coefficients(10, np.dtype(np.float64)),
}
# 2π to 64 significant digits, so that its split below is exact in either dtype.
_TWO_PI_EXACT = Fraction(
    "6.283185307179586476925286766559005768394338798750211641949889184615632812572417997256"
)


def _round_to_bits(value, bits):
    """``value`` (a non-zero Fraction) rounded to ``bits`` significant bits, as a Fraction."""
    exponent = math.floor(math.log2(abs(value)))
    unit = Fraction(2) ** (exponent - bits + 1)
    return round(value / unit) * unit


def _reduction_constants(dtype, free_bits):
    r"""Cody–Waite constants for :math:`r = t - k\,2\pi` in ``dtype``, accurate for
    :math:`|k| < 2^{\text{free\_bits}}`.

    2π ≈ c₁ + c₂ where c₁ has ``free_bits`` trailing zero bits, so that k·c₁ is an exact
    product and t − k·c₁ is exact (Sterbenz); c₂ is the rest to the dtype's precision, so r
    carries only the rounding of k·c₂ and of the last subtraction (k·c₂ is below π) and the
    k·(2π − c₁ − c₂) left out, a few units of round-off in all. Beyond that range the fast path
    hands the row to numpy's cosine (see :func:`_cos_block`).

    Returns ``(limit, 1/2π, c₁, c₂)``: the reduction covers :math:`|t| \le` ``limit``.
    """
    bits = np.finfo(dtype).nmant + 1
    c1 = _round_to_bits(_TWO_PI_EXACT, bits - free_bits)
    c2 = _round_to_bits(_TWO_PI_EXACT - c1, bits)
    # Two periods of margin, so that k = rint(t / 2π) stays below 2^free_bits after rounding.
    limit = (2**free_bits - 2) * _TWO_PI
    return tuple(dtype.type(float(c)) for c in (limit, 1 / _TWO_PI_EXACT, c1, c2))


# 2^10 periods (|t| < 6.4e3) in float32 and 2^26 (|t| < 4.2e8) in float64: within these k·c₁
# fits the mantissa and the left-out k·(2π − c₁ − c₂) stays below round-off.
_REDUCTION_CONSTANTS = {
    np.dtype(np.float32): _reduction_constants(np.dtype(np.float32), 10),
    np.dtype(np.float64): _reduction_constants(np.dtype(np.float64), 26),
}
# 1.5 · 2^p (p + 1 mantissa bits): (x + s) − s rounds x to the nearest integer, ties to even as
# rint does, for |x| < 2^(p−1). One addition and one subtraction vectorise on any CPU, where
# rint needs SSE4.1 on x86-64 and otherwise becomes a library call per element.
_ROUNDING_SHIFTER = {
    np.dtype(np.float32): np.float32(1.5 * 2**23),
    np.dtype(np.float64): np.float64(1.5 * 2**52),
}

# The loop, for each row i not flagged in skip and each column j, with T the float type:
#   x = t[i, j] + offset[j];  k = (x·(1/2π) + shifter) − shifter;  r = (x − k·c₁) − k·c₂
#   out[i, j] = [scale[j] ·] p(r²)
# Rows are ldt (ldo) elements apart. Only "contract" among the fast-math flags (a·b + c may
# become one fused multiply-add): "reassoc" could fold the two-part reduction or the rounding
# by the shifter into nothing. Pointers that are only read are marked so, which lets the loop
# vectorise without run-time overlap checks on them; t and out may be the same block.
_LOOP = string.Template("""
define void @scaled_cos(ptr %t, ptr %out, i64 %n, i64 %D, i64 %ldt, i64 %ldo,
                        ptr noalias readonly %offset, ptr noalias readonly %scale,
                        ptr noalias readonly %skip, ptr noalias readonly %coef,
                        $T %inv_two_pi, $T %c1, $T %c2, $T %shifter) {
entry:
$coefficients
  %rows = icmp sgt i64 %n, 0
  %cols = icmp sgt i64 %D, 0
  %work = and i1 %rows, %cols
  br i1 %work, label %row, label %done
row:
  %i = phi i64 [0, %entry], [%i.next, %row.end]
  %skip.p = getelementptr i8, ptr %skip, i64 %i
  %skip.i = load i8, ptr %skip.p
  %skipped = icmp ne i8 %skip.i, 0
  br i1 %skipped, label %row.end, label %row.start
row.start:
  %t.at = mul i64 %i, %ldt
  %t.row = getelementptr $T, ptr %t, i64 %t.at
  %out.at = mul i64 %i, %ldo
  %out.row = getelementptr $T, ptr %out, i64 %out.at
  br label %col
col:
  %j = phi i64 [0, %row.start], [%j.next, %col]
  %t.p = getelementptr $T, ptr %t.row, i64 %j
  %t.ij = load $T, ptr %t.p
  %b.p = getelementptr $T, ptr %offset, i64 %j
  %b.j = load $T, ptr %b.p
  %x = fadd contract $T %t.ij, %b.j
  %x.turns = fmul contract $T %x, %inv_two_pi
  %x.shifted = fadd contract $T %x.turns, %shifter
  %k = fsub contract $T %x.shifted, %shifter
  %k.c1 = fmul contract $T %k, %c1
  %r.1 = fsub contract $T %x, %k.c1
  %k.c2 = fmul contract $T %k, %c2
  %r = fsub contract $T %r.1, %k.c2
  %u = fmul contract $T %r, %r
$polynomial
  %out.p = getelementptr $T, ptr %out.row, i64 %j
  store $T $value, ptr %out.p
  %j.next = add i64 %j, 1
  %row.done = icmp eq i64 %j.next, %D
  br i1 %row.done, label %row.end, label %col
row.end:
  %i.next = add i64 %i, 1
  %all.done = icmp eq i64 %i.next, %n
  br i1 %all.done, label %done, label %row
done:
  ret void
}
""")


def _loop_ir(dtype, scaled):
    """The loop's IR for ``dtype`` (float32 or float64), with a scale per column or not."""
    T = {np.dtype(np.float32): "float", np.dtype(np.float64): "double"}[dtype]
    degree = len(_COS_COEFFICIENTS[dtype]) - 1
    coefficients = []
    for m in range(degree + 1):
        coefficients.append(f"  %coef.{m}.p = getelementptr {T}, ptr %coef, i64 {m}")
        coefficients.append(f"  %coef.{m} = load {T}, ptr %coef.{m}.p")
    # Horner's rule in u = r²; with one scale for every column it is already in coef.
    polynomial, p = [], "%coef.0"
    for m in range(1, degree + 1):
        polynomial.append(f"  %p.{m}.u = fmul contract {T} {p}, %u")
        polynomial.append(f"  %p.{m} = fadd contract {T} %p.{m}.u, %coef.{m}")
        p = f"%p.{m}"
    if scaled:
        polynomial.append(f"  %scale.p = getelementptr {T}, ptr %scale, i64 %j")
        polynomial.append(f"  %scale.j = load {T}, ptr %scale.p")
        polynomial.append(f"  %scaled = fmul contract {T} %scale.j, {p}")
        p = "%scaled"
    return _LOOP.substitute(
        T=T, coefficients="\n".join(coefficients), polynomial="\n".join(polynomial), value=p
    )


def _target_machine():
    """An LLVM target machine with the options numba's JIT uses, for the CPU numba compiles
    for, except that ``NUMBA_CPU_NAME=generic`` gives the host's (see the module's note)."""
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    target = llvm.Target.from_default_triple()
    cpu, features = numba_config.CPU_NAME, numba_config.CPU_FEATURES
    if cpu is None or cpu.lower() == "generic":
        cpu, features = llvm.get_host_cpu_name(), None
    if features is None:
        try:
            features = llvm.get_host_cpu_features().flatten()
        except RuntimeError:  # LLVM cannot list them here: the CPU's name implies a set
            features = ""
    return target.create_target_machine(
        cpu=cpu,
        features=features,
        opt=3,
        reloc="static" if target.name.startswith("x86") else "default",
        codemodel="jitdefault",
        jit=True,
    )


_COMPILING = threading.Lock()
_LOOPS = {}


def _compiled_loop(dtype, scaled):
    """The loop for ``dtype`` as a ctypes function (which releases the GIL while it runs),
    compiled on first use, once, whichever thread asks first."""
    with _COMPILING:
        if (dtype, scaled) not in _LOOPS:
            _LOOPS[dtype, scaled] = _compile_loop(dtype, scaled)
        return _LOOPS[dtype, scaled][0]


def _optimized_module(dtype, scaled, machine):
    """The loop's module, checked and optimised (vectorised) for ``machine``."""
    module = llvm.parse_assembly(_loop_ir(dtype, scaled))
    module.verify()
    tuning = llvm.create_pipeline_tuning_options(speed_level=3)
    tuning.loop_vectorization = True
    tuning.slp_vectorization = True
    passes = llvm.create_pass_builder(machine, tuning)
    passes.getModulePassManager().run(module, passes)
    return module


def _compile_loop(dtype, scaled):
    """The ctypes function and the execution engine that holds its code (kept with it)."""
    machine = _target_machine()
    engine = llvm.create_mcjit_compiler(_optimized_module(dtype, scaled, machine), machine)
    engine.finalize_object()
    real = np.ctypeslib.as_ctypes_type(dtype)
    pointer, size = ctypes.c_void_p, ctypes.c_int64
    signature = ctypes.CFUNCTYPE(None, *[pointer] * 2, *[size] * 4, *[pointer] * 4, *[real] * 4)
    return signature(engine.get_function_address("scaled_cos")), engine


def _leading_dimension(a, name):
    """Elements between the rows of a matrix whose rows are contiguous."""
    n, D = a.shape
    if n <= 1:  # one row: its stride is never taken
        return D
    item = a.itemsize
    if (D > 1 and a.strides[1] != item) or a.strides[0] % item:
        raise ValueError(f"{name} must be a matrix with contiguous rows, got strides {a.strides}.")
    return a.strides[0] // item


def _scaled_cos(t, out, offset, column_scale, coef, skip):
    """``out[i] ← scale · cos(t[i] + offset)`` for the rows i not flagged in ``skip``, by the
    compiled loop; ``column_scale`` None means the scale is folded into ``coef``."""
    n, D = t.shape
    dtype = t.dtype
    # The loop reads raw memory: every vector must be contiguous, of t's dtype and length.
    offset, coef = (np.ascontiguousarray(a, dtype=dtype) for a in (offset, coef))
    skip = np.ascontiguousarray(skip, dtype=np.bool_)
    scale = coef if column_scale is None else np.ascontiguousarray(column_scale, dtype=dtype)
    if out.shape != t.shape or out.dtype != dtype:
        raise ValueError(f"out must have t's shape {t.shape} and dtype {dtype}.")
    if offset.shape != (D,) or (column_scale is not None and scale.shape != (D,)):
        raise ValueError(f"offset and scale must have shape ({D},), one entry per column.")
    if skip.shape != (n,) or coef.shape != (len(_COS_COEFFICIENTS[dtype]),):
        raise ValueError(f"skip must have shape ({n},) and coef the polynomial's length.")
    if t.size == 0:
        return
    loop = _compiled_loop(dtype, column_scale is not None)
    _, inv_two_pi, c1, c2 = _REDUCTION_CONSTANTS[dtype]
    loop(
        t.ctypes.data,
        out.ctypes.data,
        n,
        D,
        _leading_dimension(t, "t"),
        _leading_dimension(out, "out"),
        offset.ctypes.data,
        scale.ctypes.data,
        skip.ctypes.data,
        coef.ctypes.data,
        inv_two_pi,
        c1,
        c2,
        _ROUNDING_SHIFTER[dtype],
    )


def _cosine_plan(scale):
    """The polynomial's coefficients and the per-column scale for :func:`_scaled_cos`: one
    scale for every column goes into the coefficients (column scale None)."""
    coef = np.array(_COS_COEFFICIENTS[scale.dtype], dtype=scale.dtype)
    if np.all(scale == scale[0]):
        return coef * scale[0], None
    return coef, np.ascontiguousarray(scale)


def _cos_block(t, scale, exact, fallback=None, plan=None, out=None, offset=None, warn=True):
    """``out ← scale · cos(t + offset)``, by the compiled loop or, with ``exact=True``, by
    numpy's cosine. ``out`` None means in place; otherwise ``t`` is scratch, left
    overwritten. ``offset`` None means 0.

    The rows flagged in the boolean mask ``fallback`` go to numpy's cosine as well; None
    flags every row holding an argument beyond the exact reduction range (or NaN). So both
    paths agree to round-off for every finite argument; a non-finite argument raises. A mask
    from :func:`_beyond_exact_reduction` also vouches that the rows it leaves unflagged are
    finite, so only flagged rows are checked. ``plan`` is :func:`_cosine_plan` of ``scale``,
    passed in when many blocks share it.

    Returns the largest magnitude among the arguments given to numpy's cosine (0.0 when
    none), past which :func:`~kernelcourse._validation.warn_if_phase_lost` warns here, or,
    with ``warn=False``, leaves the warning to the caller (a worker thread's caller)."""
    if out is None:
        out = t
    if offset is None:
        offset = np.zeros(t.shape[1], dtype=t.dtype)
    if fallback is None:
        limit = _REDUCTION_CONSTANTS[t.dtype][0]
        fallback = ~(np.abs(t + offset) <= limit).all(axis=1)
    if exact:
        t += offset
        big = check_cosine_arguments(t, warn=warn)
        np.cos(t, out=t)
        np.multiply(t, scale, out=out)
        return big
    coef, column_scale = _cosine_plan(scale) if plan is None else plan
    _scaled_cos(t, out, offset, column_scale, coef, fallback)
    if fallback.any():
        rows = np.flatnonzero(fallback)
        flagged = t[rows] + offset
        big = check_cosine_arguments(flagged, warn=warn)
        np.cos(flagged, out=flagged)
        flagged *= scale
        out[rows] = flagged
        return big
    return 0.0


class _CosinePass:
    """:func:`_cos_block` for the row blocks of one output, prepared once.

    The feature maps fill their output a block at a time on several threads, and the Python
    work of a block holds the GIL that the other threads wait on. Checking the vectors and
    taking their addresses for each block cost ~12 µs, against ~1 µs for the compiled loop
    itself: 5–10 % of a float32 transform on two cores. Here they are checked and taken
    once, and a block costs one call of the loop. Blocks holding a row flagged in
    ``fallback``, and every block with ``exact=True``, take :func:`_cos_block`.

    Parameters
    ----------
    out : ndarray of shape (n, D)
        The output, with contiguous rows.
    offset, scale : ndarray of shape (D,)
        Contiguous, of ``out``'s dtype.
    fallback : ndarray of bool, shape (n,)
        The rows for numpy's cosine, as :func:`_beyond_exact_reduction` flags them.
    exact : bool
        numpy's cosine for every row.
    """

    def __init__(self, out, offset, scale, fallback, exact):
        self._out, self._offset, self._scale = out, offset, scale
        self._fallback = np.ascontiguousarray(fallback, dtype=np.bool_)
        self._exact = exact
        self._plan = _cosine_plan(scale)
        self._any_flagged = exact or bool(self._fallback.any())
        coef, column_scale = self._plan
        dtype = out.dtype
        # (their memory, read by address below, is held by self._offset and self._plan)
        vectors = offset, coef, coef if column_scale is None else column_scale
        for name, v in zip(("offset", "coef", "scale"), vectors, strict=True):
            if v.dtype != dtype or not v.flags.c_contiguous:
                raise ValueError(f"{name} must be a contiguous vector of dtype {dtype}.")
        self._loop = _compiled_loop(dtype, column_scale is not None)
        self._item = dtype.itemsize
        self._ldo = _leading_dimension(out, "out")
        self._out_address = out.ctypes.data
        self._skip_address = self._fallback.ctypes.data
        offset_at, coef_at, scale_at = (v.ctypes.data for v in vectors)
        _, inv_two_pi, c1, c2 = _REDUCTION_CONSTANTS[dtype]
        self._before_skip = offset_at, scale_at
        self._after_skip = coef_at, inv_two_pi, c1, c2, _ROUNDING_SHIFTER[dtype]

    def __call__(self, t, start, t_address):
        """``out[start:start + m] ← scale · cos(t + offset)`` for the block ``t`` of shape
        (m, D) with contiguous rows, at address ``t_address`` (the caller's, taken once:
        asking numpy for it costs a microsecond a block); ``t`` is left overwritten.

        Returns the largest magnitude of the block's arguments that went to numpy's cosine
        (0.0 when none), for the caller to warn about a lost phase once, on its own thread:
        a warning raised here, on a worker thread, would name a line of the library."""
        m, D = t.shape
        stop = start + m
        if D != self._out.shape[1] or not 0 <= start <= stop <= self._out.shape[0]:
            raise ValueError(f"a block of shape {t.shape} at row {start} is outside the output.")
        if m == 0 or D == 0:
            return 0.0
        if self._any_flagged and (self._exact or self._fallback[start:stop].any()):
            flagged, out = self._fallback[start:stop], self._out[start:stop]
            return _cos_block(
                t, self._scale, self._exact, flagged, self._plan, out, self._offset, warn=False
            )
        ldt = t.strides[0] // self._item if m > 1 else D
        self._loop(
            t_address,
            self._out_address + start * self._ldo * self._item,
            m,
            D,
            ldt,
            self._ldo,
            *self._before_skip,
            self._skip_address + start,
            *self._after_skip,
        )
        return 0.0


def _beyond_exact_reduction(X, W, offset):
    r"""Rows of X for which some :math:`|\omega_j^T x + b_j|` may leave the exact range of the
    compiled cosine, by Cauchy–Schwarz: :math:`\|x\|\max_j\|\omega_j\| + \max_j|b_j|`,
    widened by the rounding of the matrix product and of the norms (taken in X's dtype: a
    float32 square that overflows flags its row, which is safe). O(n d), against O(n d D) for
    the features. A row not flagged has finite arguments."""
    limit = float(_REDUCTION_CONSTANTS[X.dtype][0])
    eps = float(np.finfo(X.dtype).eps)
    with np.errstate(over="ignore", invalid="ignore"):
        x_norm = np.sqrt(np.einsum("ij,ij->i", X, X).astype(np.float64))
        w_norm = float(np.sqrt(np.einsum("ij,ij->j", W, W, dtype=np.float64)).max())
        bound = x_norm * w_norm + float(np.abs(offset).max())
    return ~(bound * (1.0 + 4.0 * (X.shape[1] + 1) * eps) <= limit)
