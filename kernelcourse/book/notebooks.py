"""Re-execute the book's notebooks in place so their stored outputs are what the code computes.

``python -m kernelcourse.book.notebooks execute book`` (``make notebooks``) runs every
notebook under the folder top to bottom in a fresh kernel, then trims what changes from run to
run without meaning anything (execution timings, kernel versions), so that running it twice
changes nothing and diffs show only real changes. Needs the ``notebooks`` extra (nbclient,
nbformat, ipykernel); without it the command prints a one-line error naming the extra.
"""

from __future__ import annotations

import argparse
import math
import os
import pathlib
import re
import sys
import time

__all__ = [
    "find_notebooks",
    "is_homework_starter",
    "execute_notebook",
    "trim_metadata",
    "MissingExtraError",
    "split_numbers",
    "numbers_match",
    "outputs_match",
    "first_difference",
    "main",
]

# The kernels draw figures with the inline backend, as a student's Jupyter does, under
# `make notebooks` and strict nbval alike (tests/nbval_plugin.py): figures become ordinary cell
# outputs, and stored outputs do not depend on the caller's matplotlib backend.
# They also never print the estimators' progress lines for slow fits (kernelcourse._progress):
# whether a fit passes their threshold depends on the machine's load, not on the code.
KERNEL_ENV = {
    "MPLBACKEND": "module://matplotlib_inline.backend_inline",
    "KERNELCOURSE_PROGRESS_AFTER": "inf",
}

# Kept notebook-level metadata; everything else (versions, widget state, ...) is dropped.
_KERNELSPEC = {"display_name": "Python 3", "language": "python", "name": "python3"}


def is_homework_starter(path):
    """Whether ``path`` is a released homework starter (``book/homework/*.ipynb``).

    Starters are written with cleared outputs by ``python -m kernelcourse.book.homework_release``
    from the solutions in ``book/homework/solutions/``; executing them in place would store
    outputs.
    """
    return pathlib.Path(path).parent.name == "homework"


def find_notebooks(root):
    """Every ``.ipynb`` below ``root`` (checkpoints, build folders and homework starters
    excluded), sorted."""
    root = pathlib.Path(root)
    if root.is_file():
        return [root]
    skip = {".ipynb_checkpoints", "_build", ".venv"}
    return sorted(
        p for p in root.rglob("*.ipynb") if not skip & set(p.parts) and not is_homework_starter(p)
    )


def trim_metadata(nb):
    """Drop volatile metadata in place: cell timings, kernel/version details, widget state.

    Adjacent outputs of one stream are also merged: how a cell's prints split into messages
    depends on when the kernel flushed, not on what the cell printed."""
    nb.metadata = {
        "kernelspec": dict(_KERNELSPEC),
        "language_info": {"name": "python"},
        **({"nbgrader": nb.metadata["nbgrader"]} if "nbgrader" in nb.metadata else {}),
    }
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        cell.metadata.pop("collapsed", None)
        cell.metadata.pop("scrolled", None)
        if cell.cell_type == "code":
            cell.outputs = _merge_adjacent_streams(cell.outputs)
    return nb


def _merge_adjacent_streams(outputs):
    merged = []
    for out in outputs:
        prev = merged[-1] if merged else None
        if (
            out.output_type == "stream"
            and prev is not None
            and prev.output_type == "stream"
            and prev.name == out.name
        ):
            prev.text += out.text
        else:
            merged.append(out)
    return merged


class MissingExtraError(ImportError):
    """A command needs an optional extra that is not installed."""


def _require(extra, *modules):
    """Import ``modules`` or raise :class:`MissingExtraError` naming the extra to install."""
    import importlib

    try:
        return [importlib.import_module(m) for m in modules]
    except ImportError as err:
        raise MissingExtraError(
            f"this command needs the '{extra}' extra ({err.name} is missing): "
            f"pip install 'kernelcourse[{extra}]'"
        ) from err


def execute_notebook(path, *, timeout=600, kernel_name="python3"):
    """Execute the notebook at ``path`` in place with a fresh kernel started in its folder."""
    nbformat, nbclient = _require("notebooks", "nbformat", "nbclient")
    NotebookClient = nbclient.NotebookClient
    path = pathlib.Path(path)
    os.environ.update(KERNEL_ENV)  # inherited by the kernel process
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb,
        timeout=timeout,
        kernel_name=kernel_name,
        resources={"metadata": {"path": str(path.parent.resolve())}},
    )
    client.execute()
    trim_metadata(nb)
    nbformat.validate(nb)
    nbformat.write(nb, path)
    return nb


# --- Comparing stored and computed outputs to printed precision ---------------------------------
#
# Compare a stored notebook output with a fresh one, number by number, to printed precision.
#
# The book promises that every number it prints is what the code computes today. Low-order bits
# of BLAS, LAPACK and compiled loops differ between CPUs (AVX2 or AVX-512 kernels, summation
# order, thread count), so a number printed to four significant digits can honestly come out as
# ``0.00769`` on one machine and ``0.0077`` on another. :func:`outputs_match` accepts exactly that
# and nothing more:
#
# * the text is cut into numbers and the text between them; the text between must be identical,
#   except that a run of spaces counts as one space (column padding follows the width of the
#   numbers in it);
# * both sides must hold the same count of numbers, and each pair must agree to within one unit of
#   the last printed digit of the coarser of the two (``84.4`` against ``84.5``, ``75`` against
#   ``76``, ``1.2e-05`` against ``1.3e-05``);
# * a number printed with 12 or more significant digits (a full-precision ``repr``, as
#   ``myst_nb.glue`` stores) matches to a relative tolerance of ``1e-9`` instead.
#
# Used by the project's strict nbval run (``tests/nbval_plugin.py``), which compares every text,
# HTML, Markdown and glued output this way.



#: relative tolerance for numbers printed at (nearly) full double precision
FULL_PRECISION_RTOL = 1e-9
FULL_PRECISION_DIGITS = 12

# A number: optional sign (ASCII or Unicode minus) not glued to a word, digits with optional
# thousands commas, an optional fraction and an optional exponent. A digit right after a letter,
# an underscore or a dot belongs to a word (``hw1``, ``x_2``, ``v1.9``) and stays text.
_NUMBER = re.compile(
    r"(?<![\w.])"
    r"(?P<sign>[-+\u2212]?)"
    r"(?P<int>\d{1,3}(?:,\d{3})+(?![\d])|\d+)"
    r"(?:\.(?P<frac>\d+))?"
    r"(?:[eE](?P<exp>[-+]?\d+))?"
    r"(?![\w])"
)
_SPACES = re.compile(r"[ \t]+")


class _Num:
    __slots__ = ("text", "value", "ulp", "digits")

    def __init__(self, match):
        self.text = match.group(0)
        sign = -1.0 if match.group("sign") in ("-", "\u2212") else 1.0
        int_part = match.group("int").replace(",", "")
        frac = match.group("frac") or ""
        exp = int(match.group("exp") or 0)
        self.value = sign * float(f"{int_part}.{frac or '0'}e{exp}")
        # one unit of the last printed digit
        self.ulp = 10.0 ** (exp - len(frac))
        self.digits = len((int_part + frac).lstrip("0")) or 1


def split_numbers(text):
    """``(pieces, numbers)``: the text between numbers (one more piece than numbers, runs of
    spaces collapsed) and the numbers themselves, in order."""
    pieces, numbers, last = [], [], 0
    for m in _NUMBER.finditer(text):
        pieces.append(_SPACES.sub(" ", text[last : m.start()]))
        numbers.append(_Num(m))
        last = m.end()
    pieces.append(_SPACES.sub(" ", text[last:]))
    return pieces, numbers


def numbers_match(ref, new):
    """Whether two printed numbers (strings) agree to the printed precision."""
    a, b = _NUMBER.fullmatch(ref.strip()), _NUMBER.fullmatch(new.strip())
    if a is None or b is None:
        raise ValueError(f"not a printed number: {ref!r} or {new!r}")
    return _num_match(_Num(a), _Num(b))


def _num_match(a, b):
    if a.text == b.text:
        return True
    diff = abs(a.value - b.value)
    if min(a.digits, b.digits) >= FULL_PRECISION_DIGITS:
        return diff <= FULL_PRECISION_RTOL * max(abs(a.value), abs(b.value))
    tol = max(a.ulp, b.ulp)
    # the decimal strings are exact; only the binary conversion needs the small slack
    return diff <= tol * (1 + 1e-9) + 1e-300 or math.isclose(diff, tol, rel_tol=1e-9)


def first_difference(ref, new):
    """``None`` when ``new`` matches ``ref`` to printed precision, else a one-line reason."""
    if not isinstance(ref, str) or not isinstance(new, str):
        return None if ref == new else "outputs differ"
    if ref == new:
        return None
    ref_pieces, ref_nums = split_numbers(ref)
    new_pieces, new_nums = split_numbers(new)
    if len(ref_nums) != len(new_nums):
        return f"{len(ref_nums)} numbers stored but {len(new_nums)} computed"
    for i, (p, q) in enumerate(zip(ref_pieces, new_pieces, strict=True)):
        if p != q:
            return f"text differs: stored {p!r}, computed {q!r}"
        if i < len(ref_nums) and not _num_match(ref_nums[i], new_nums[i]):
            a, b = ref_nums[i], new_nums[i]
            return (
                f"number {i + 1} differs beyond its printed precision: stored {a.text}, "
                f"computed {b.text}"
            )
    return None


def outputs_match(ref, new):
    """Whether the computed output ``new`` matches the stored output ``ref`` (strings) to
    printed precision; see the module docstring for the rule."""
    return first_difference(ref, new) is None


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m kernelcourse.book.notebooks", description=__doc__
    )
    sub = parser.add_subparsers(dest="command", required=True)
    ex = sub.add_parser("execute", help="re-execute notebooks in place")
    ex.add_argument("paths", nargs="+", help="notebooks or folders to search for notebooks")
    ex.add_argument("--timeout", type=int, default=600, help="seconds allowed per cell")
    args = parser.parse_args(argv)
    notebooks = [nb for p in args.paths for nb in find_notebooks(p)]
    if not notebooks:
        parser.error(f"no notebooks found under {args.paths}")
    for nb_path in notebooks:
        start = time.perf_counter()
        print(f"executing {nb_path} ...", flush=True)
        try:
            execute_notebook(nb_path, timeout=args.timeout)
        except MissingExtraError as err:
            print(f"error: {err}", file=sys.stderr)
            return 2
        print(f"  done in {time.perf_counter() - start:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
