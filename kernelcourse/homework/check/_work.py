"""Counting the work of a student's function without a clock: lines of Python run, vector
operations, entries of arrays handed to numpy and memory held (:class:`WorkCounter`). The checks
of homework 1 (the ANOVA recursion's cost), homework 4 (the shrinking rule's O(n)) and homework 9
(coordinate descent's O(nq) a sweep) use it; ``check.hw4.WorkCounter`` and
``check.hw9.WorkCounter`` are the names the assignments and their hidden tests give it.

Numpy's compiled code runs no Python frame: a ufunc, a ufunc method such as
``np.maximum.reduce``, an operator (``Z @ alpha``) or a compiled function such as ``np.dot``
would escape a count of Python lines. The arrays that :meth:`WorkCounter.wrap` hands to the
student's function are therefore views of one ndarray subclass whose ``__array_ufunc__`` and
``__array_function__`` (and the compiled methods, iteration and fancy indexing) count the entries
every operation reads and writes, and hand back arrays of the same subclass, so that what is
computed from them is counted too; while the block runs, numpy's array constructors
(``np.asarray``, ``np.array``, ``np.zeros``, ...) also return that subclass.
"""

from __future__ import annotations

import functools
import inspect
import math
import sys
import tracemalloc

import numpy as np

from ._core import handed

__all__ = ["WorkCounter", "counted_call"]


class WorkCounter:
    """Count the work of the code that runs inside the block, without a clock.

    Five counts, each the same on every CPU and under any load:

    * ``steps``: the lines of Python executed (in every function called, numpy's own Python
      code included). A loop over the variables takes about n of them; a loop inside such a
      loop takes about n².
    * ``vector_ops``: the stretches of code between two steps that allocate at least one byte
      per variable (``n`` bytes), as a new mask or vector of length n does. A fixed number of
      passes over the variables makes a fixed number of them, however large n is; a vector
      operation inside a loop over the variables makes about n.
    * ``peak_bytes``: the most memory held at once beyond what was in use before the block,
      by tracemalloc (an n × n temporary shows here).
    * ``elements``: the entries of the vectors (arrays of at most one dimension) that numpy
      works through: those handed to numpy's own Python functions, such as ``np.max`` and the
      ``max`` method, and, for the arrays handed over by :meth:`wrap` and those computed from
      them, the vector operands of every ufunc, ufunc method (``np.maximum.reduce``), operator,
      compiled function (``np.dot``), compiled method (``argmax``), iteration and fancy index.
      A fixed number of reductions over the variables hands over a fixed multiple of n; a
      reduction over all of them inside a loop over them, about n², even when it allocates
      nothing and runs no Python frame.
    * ``entries``: the same for arrays of any dimension, each operation counted by the entries
      it reads and writes, a product by its multiply–adds (``Z @ alpha`` with ``Z`` of shape
      n × q: nq). Only the arrays handed over by :meth:`wrap`, and those computed from them or
      made by numpy's constructors inside the block, are followed.

    Parameters
    ----------
    n : int
        The number of variables: the size of a vector operation.
    max_steps : int or None
        Stop the block with :class:`WorkCounter.Exceeded` after this many steps (a loop
        inside a loop would otherwise run for a long time under the counter).
    exempt : sequence of ndarray
        Arrays whose reading is not counted: an operation with an operand that is one of them,
        or a view of one, adds nothing to ``elements`` and ``entries`` (homework 4's kernel
        matrix K: v = y − Kβ is the O(n²) part its question sets aside).

    Notes
    -----
    The subclass is followed through numpy's functions, methods and constructors, not through
    deliberate unwrapping (``a.view(np.ndarray)``, a constructor imported by name before the
    block): the count is an estimate of the work of plain code, not a sandbox.

    References
    ----------
    .. [1] NumPy Enhancement Proposals 13 and 18: a mechanism for overriding ufuncs, and a
       dispatch mechanism for NumPy's high level array functions (``__array_ufunc__``,
       ``__array_function__``), https://numpy.org/neps/.

    Examples
    --------
    >>> import numpy as np
    >>> v = np.arange(1000.0)
    >>> counter = WorkCounter(1000)
    >>> (w,) = counter.wrap(v)
    >>> with counter:
    ...     _ = [np.maximum.reduce(w) for _ in range(10)]
    >>> counter.elements
    10000
    """

    class Exceeded(Exception):
        """Raised inside the counted code when it takes more than ``max_steps`` steps."""

    def __init__(self, n, max_steps=None, exempt=()):
        self.n = int(n)
        self.max_steps = max_steps
        self.steps = self.vector_ops = self.peak_bytes = self.elements = self.entries = 0
        self._held = 0  # the most memory held in this stretch, up to the last _fold
        self._own = False  # whether this module's code ran in this stretch
        self._exempt = [_root(a) for a in exempt if isinstance(a, np.ndarray)]
        self._follow = self._entered = False

    def wrap(self, *values):
        """``values`` with every ndarray among them replaced by a view whose operations this
        counter counts (same data, same dtype; the rest as they are), as a tuple. Hand these
        to the function counted inside the block; what it returns may hold such views, which
        :func:`numpy.asarray` turns back into plain arrays."""
        if self._entered and not self._follow:
            _follow(self)
        self._follow = True
        return tuple(
            v.view(_Counted) if isinstance(v, np.ndarray) and not isinstance(v, _Counted) else v
            for v in values
        )

    # entered and left under the package guard, around the student's function
    @handed
    def __enter__(self):
        self._was_tracing = tracemalloc.is_tracing()
        if not self._was_tracing:
            tracemalloc.start()
        if self._follow:
            _follow(self)
        self._entered = True
        self._previous = sys.gettrace()
        tracemalloc.reset_peak()
        self._base = self._mark = tracemalloc.get_traced_memory()[0]
        sys.settrace(self._on_call)
        return self

    @handed
    def __exit__(self, *exc):
        sys.settrace(self._previous)
        if self._follow:
            _unfollow(self)
        self._entered = False
        self._stretch(step=False)
        if not self._was_tracing:
            tracemalloc.stop()
        return False

    def _on_call(self, frame, event, arg):
        module = frame.f_globals.get("__name__")
        if module in _UNCOUNTED:  # the counter and its with-block
            return None
        if isinstance(module, str) and module.startswith("numpy.") and not _STATE["depth"]:
            vector, total = _plain_entries(frame)
            self.elements += vector
            self.entries += total
        self._stretch(step=True)
        return self._on_event

    def _on_event(self, frame, event, arg):
        self._stretch(step=event == "line")
        return self._on_event

    def _stretch(self, step):
        """Close the stretch of code since the last event: its memory, then the step."""
        peak = tracemalloc.get_traced_memory()[1]  # first: before this method allocates
        own = _OWN_BYTES if self._own else 0
        if max(self._held, peak - self._mark - own) >= self.n:
            self.vector_ops += 1
        self.peak_bytes = max(self.peak_bytes, peak - self._base)
        self._held, self._own = 0, False
        if step:
            self.steps += 1
            if self.max_steps is not None and self.steps > self.max_steps:
                raise WorkCounter.Exceeded(f"more than {self.max_steps} steps")
        tracemalloc.reset_peak()
        self._mark = tracemalloc.get_traced_memory()[0]

    def _fold(self, own=0):
        """Keep the memory held in this stretch so far, less ``own`` bytes (the frames and
        bookkeeping of this module, which tracing makes), and measure on from here."""
        peak = tracemalloc.get_traced_memory()[1]
        self._held = max(self._held, peak - self._mark - own)
        self.peak_bytes = max(self.peak_bytes, peak - self._base)
        tracemalloc.reset_peak()

    def _add(self, operands, results=(), product=None, made=None):
        """Count one operation of the followed arrays on ``operands`` giving ``results``
        (``product``: its multiply–adds, for a product; ``made``: a new array a constructor
        filled), then leave the memory of this bookkeeping out of the stretch: the arrays the
        operation allocated stand for it."""
        # plain loops: a generator would call the tracer at every item
        vector = moved = 0
        exempt = False
        for a in operands:
            if isinstance(a, np.ndarray):
                moved += a.size
                if a.ndim <= 1:
                    vector += a.size
                if self._exempt:
                    root = _root(a)
                    for e in self._exempt:
                        exempt = exempt or root is e
        for r in (*results, made):
            if isinstance(r, np.ndarray):
                moved += r.size
                if r.base is None:  # a new array: the allocation that stands for the operation
                    self._held = max(self._held, r.nbytes)
            elif r is not None:
                moved += 1
        if made is not None:
            vector += made.size if made.ndim <= 1 else 0
        if not exempt:
            self.elements += vector
            self.entries += max(moved, int(product or 0))
        self._own = True
        tracemalloc.reset_peak()


def counted_call(check, args, counter, too_many):
    """``check.student_fn(*args)`` under the package guard of ``check`` (a
    :class:`~kernelcourse.homework.check._core.SelfCheck`) and ``counter``, its result. The
    counter's step limit, when reached, fails the check with the message ``too_many``, which
    says what ran too long and why that is too much."""
    try:
        return check.guarded_call(check.student_fn, args, {}, counter)
    except WorkCounter.Exceeded:
        raise AssertionError(too_many) from None


_UNCOUNTED = (__name__, "contextlib")
#: What the frames and bookkeeping of this module's code take at most, as tracing makes them
#: (about 3 kB, measured): left out of the memory of a stretch in which that code ran.
_OWN_BYTES = 4096

#: The counters following arrays (the innermost last), and how deep the code runs inside an
#: operation already counted (numpy's own code under a counted function is not counted again).
_STATE = {"counters": [], "depth": 0, "saved": {}}


def _counter():
    """The counter to credit with an operation now, or None."""
    return _STATE["counters"][-1] if _STATE["counters"] and not _STATE["depth"] else None


def _inside(counter, call, *args, **kwargs):
    """``call(*args, **kwargs)`` as one counted operation: numpy's code under it is not counted
    again, and the memory that this module's own bookkeeping takes is left out of the stretch
    (the operation's own allocation is kept)."""
    if counter is not None:
        counter._fold(_OWN_BYTES)
    _STATE["depth"] += 1
    try:
        return call(*args, **kwargs)
    finally:
        _STATE["depth"] -= 1
        if counter is not None:
            counter._fold(_OWN_BYTES)


def _root(a):
    """The array that owns ``a``'s memory, through its chain of views."""
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def _plain(x):
    return x.view(np.ndarray) if isinstance(x, _Counted) else x


def _plains(values):
    plain = []
    for x in values:
        plain.append(x.view(np.ndarray) if isinstance(x, _Counted) else x)
    return tuple(plain)


def _followed(x):
    """``x`` with the plain ndarrays in it (and in tuples and lists of them) made followed."""
    if type(x) is np.ndarray:
        return x.view(_Counted)
    if type(x) is tuple or (type(x) is list and x and type(x[0]) is np.ndarray):
        return type(x)(_followed(v) for v in x)
    return x


def _arrays_in(values, depth=0):
    """The ndarrays among ``values`` and in the tuples and lists among them, as a list."""
    found = []
    for v in values:
        if isinstance(v, np.ndarray):
            found.append(v)
        elif isinstance(v, tuple | list) and depth < 2:
            found.extend(_arrays_in(v, depth + 1))
    return found


def _product_size(a, b, result):
    """The multiply–adds of a product of ``a`` and ``b`` giving ``result`` (a contraction of
    k entries: a.size · b.size · result.size = (result.size · k)²)."""
    size = 1
    for x in (a, b, result):
        size *= max(x.size, 1) if isinstance(x, np.ndarray) else 1
    return math.isqrt(size)


class _Counted(np.ndarray):
    """An ndarray whose operations the active :class:`WorkCounter` counts."""

    __slots__ = ()

    @handed
    def __array_ufunc__(self, ufunc, method, *inputs, out=None, **kwargs):
        inputs = _plains(inputs)
        if out is not None:
            kwargs["out"] = _plains(out)
        if "where" in kwargs:
            kwargs["where"] = _plain(kwargs["where"])
        counter = _counter()
        result = _inside(counter, getattr(ufunc, method), *inputs, **kwargs)
        results = result if isinstance(result, tuple) else (result,)
        if method == "at":
            back = None
        elif out is not None:  # the arrays the caller gave, as numpy returns them
            given = list(out)
            for i, r in enumerate(results):
                if given[i] is None:
                    given[i] = _followed(r)
            back = tuple(given) if isinstance(result, tuple) else given[0]
        else:
            back = _followed(result)
        if counter is not None:
            product = None
            if ufunc is np.matmul and method == "__call__" and len(inputs) == 2:
                product = _product_size(inputs[0], inputs[1], result)
            counter._add(inputs + tuple(kwargs.get("out") or ()), results, product)
        return back

    @handed
    def __array_function__(self, func, types, args, kwargs):
        counter = _counter()
        result = _inside(counter, super().__array_function__, func, types, args, kwargs)
        back = _followed(result)
        if counter is not None:
            operands = _arrays_in(args) + _arrays_in(kwargs.values())
            results = _arrays_in(result if isinstance(result, tuple | list) else (result,))
            counter._add(operands, results, _function_product(func, args, operands, result))
        return back

    @handed
    def __iter__(self):
        counter = _counter()
        items = np.ndarray.__iter__(self.view(np.ndarray) if self.ndim <= 1 else self)
        if counter is not None:
            counter._add((self,) if self.ndim <= 1 else ())
        return items

    @handed
    def __getitem__(self, key):
        counter = _counter()
        if counter is None or not _fancy(key):  # an entry, a slice: no work to count
            if counter is not None:
                counter._own = True
            return np.ndarray.__getitem__(self, key)
        result = _inside(counter, np.ndarray.__getitem__, self, key)
        counter._add([self if _is_mask(key) else None, *_arrays_in(_keys(key))], (result,))
        return result

    @handed
    def __setitem__(self, key, value):
        counter = _counter()
        if counter is None or not (_fancy(key) or isinstance(value, np.ndarray)):
            if counter is not None:
                counter._own = True
            return np.ndarray.__setitem__(self, key, value)
        _inside(counter, np.ndarray.__setitem__, self, key, value)
        counter._add([*_arrays_in(_keys(key)), *_arrays_in((value,))])


def _keys(key):
    return key if isinstance(key, tuple) else (key,)


def _fancy(key):
    """Whether indexing by ``key`` selects entries by an array or a list (a copy, O(size))."""
    if type(key) is tuple:
        for k in key:
            if isinstance(k, np.ndarray | list):
                return True
        return False
    return isinstance(key, np.ndarray | list)


def _is_mask(key):
    for k in _keys(key):
        if isinstance(k, np.ndarray) and k.dtype == bool:
            return True
    return False


def _function_product(func, args, operands, result):
    """The multiply–adds of numpy function ``func`` when it is a product (None otherwise)."""
    name = getattr(func, "__name__", "")
    if name in ("dot", "inner", "vdot", "tensordot", "outer", "kron", "matmul") and (
        len(operands) >= 2
    ):
        return _product_size(operands[0], operands[1], result)
    if name == "einsum" and args and isinstance(args[0], str):
        return _einsum_size(args[0], operands)
    if getattr(func, "__module__", "").startswith("numpy.linalg") and operands:
        return sum(a.size for a in operands) * max(max(a.shape, default=1) for a in operands)
    return None


def _einsum_size(subscripts, operands):
    """The terms of a naive einsum: the product of the lengths of its distinct indices."""
    lengths = {}
    for letters, a in zip(subscripts.split("->")[0].split(","), operands, strict=False):
        letters = letters.strip()
        if "." in letters or len(letters) != a.ndim:
            return None
        lengths.update(zip(letters, a.shape, strict=True))
    return math.prod(lengths.values())


def _counted_method(name):
    base = getattr(np.ndarray, name)

    @handed
    def method(self, *args, **kwargs):
        counter = _counter()
        result = _inside(counter, base, self, *args, **kwargs)
        back = _followed(result)
        if counter is not None:
            operands = [self, *_arrays_in(args), *_arrays_in(kwargs.values())]
            results = _arrays_in(result if isinstance(result, tuple) else (result,))
            product = None
            if name == "dot" and len(operands) > 1:
                product = _product_size(self, operands[1], result)
            counter._add(operands, results, product)
        return back

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"``numpy.ndarray.{name}``, its entries counted."
    return method


# the compiled methods that do not go through a ufunc (max, sum, clip, ... do)
for _name in (
    "argmax argmin argsort sort partition argpartition nonzero searchsorted take put "
    "compress repeat choose dot tolist copy flatten fill"
).split():
    setattr(_Counted, _name, _counted_method(_name))


#: numpy's array constructors, which return followed arrays while a counter follows arrays.
_CONSTRUCTORS = (
    "array asarray asanyarray ascontiguousarray asfortranarray asarray_chkfinite copy require "
    "zeros ones empty full zeros_like ones_like empty_like full_like arange linspace geomspace "
    "logspace eye identity tri fromiter frombuffer fromfunction"
).split()


def _following(fn):
    @handed
    @functools.wraps(fn)
    def made(*args, **kwargs):
        counter = _counter()
        result = _inside(counter, fn, *args, **kwargs)
        if counter is not None:
            fresh = isinstance(result, np.ndarray) and result.base is None
            counter._add((), made=result if fresh else None)
        return _followed(result)

    return made


def _follow(counter):
    if not _STATE["counters"]:
        saved = _STATE["saved"] = {name: getattr(np, name) for name in _CONSTRUCTORS}
        for name, fn in saved.items():
            setattr(np, name, _following(fn))
    _STATE["counters"].append(counter)


def _unfollow(counter):
    _STATE["counters"].remove(counter)
    if not _STATE["counters"]:
        for name, fn in _STATE["saved"].items():
            setattr(np, name, fn)
        _STATE["saved"] = {}


def _plain_entries(frame):
    """The entries of the plain arrays among the arguments of ``frame``'s function, ``*args``
    included: (those of arrays of at most one dimension, those of all). Followed arrays are
    counted where numpy dispatches their operations."""
    code, local = frame.f_code, frame.f_locals
    named = code.co_argcount + code.co_kwonlyargcount
    values = [local.get(name) for name in code.co_varnames[:named]]
    if code.co_flags & inspect.CO_VARARGS:
        values += list(local.get(code.co_varnames[named], ()))
    plain = [v for v in values if isinstance(v, np.ndarray) and not isinstance(v, _Counted)]
    return sum(v.size for v in plain if v.ndim <= 1), sum(v.size for v in plain)
