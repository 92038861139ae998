"""Tables and prose that print the same numbers as plain text and as rich output.

Chapters show results with :class:`Table`: the plain-text form is what strict nbval compares, and
the HTML form is what the book renders; both come from the same rounded strings.

A sentence that quotes computed numbers is written with :func:`md` in a code cell (tagged
``remove-input`` for the book): Jupyter shows it as rendered Markdown under the cell, the book
renders it as MyST (math and roles included) in place of the cell, and strict nbval compares
its text, numbers to their printed precision.
"""

from __future__ import annotations

import hashlib
import html
import numbers
import re
import textwrap
from decimal import Decimal

import numpy as np

__all__ = [
    "Table",
    "Markdown",
    "md",
    "fmt_sig",
    "fmt_below",
    "fmt_time",
    "fmt_plain",
    "fmt_tex_count",
    "fmt_sci",
    "fmt_tex_sci",
    "fmt_duration",
]


_DIGITS = re.compile(r"\d+")

# A cell that reads as a number (with an optional sign, unit or percent sign, or a bound such
# as "< 1e-10"): right-aligned. tests/test_book_site.py checks cells with the same pattern.
_NUMERIC = re.compile(
    r"^([<>≤≥≈~]\s?)?[-+\u2212]?(\d[\d,]*(\.\d+)?|\.\d+)([eE][-+]?\d+)?\s?(%|×|[a-zA-Zµ]{1,3})?$"
)
# Text cells at least this long may wrap between words where the column is narrow; shorter
# ones ("primal", "Θ(n d)") stay on one line.
_WRAP_FROM = 16


def _check_digits(digits):
    # an unchecked digits fails inside str.format ("Format specifier missing precision")
    if isinstance(digits, bool) or not isinstance(digits, numbers.Integral) or digits < 1:
        raise ValueError(f"digits must be a positive integer, got {digits!r}.")


def _checked_seconds(seconds):
    """``seconds`` as a float, refused by name unless a finite real number >= 0."""
    if isinstance(seconds, (bool, np.bool_)) or not isinstance(seconds, numbers.Real):
        raise TypeError(f"seconds must be a real number, got {type(seconds).__name__}.")
    seconds = float(seconds) + 0.0  # + 0.0: -0.0 prints as "0.000 s"
    if not np.isfinite(seconds) or seconds < 0:
        raise ValueError(f"seconds must be finite and >= 0, got {seconds!r}.")
    return seconds


def fmt_sig(value, digits=4):
    """``value`` rounded to ``digits`` significant digits, as text stable across BLAS builds."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value.item()  # a reduction such as np.sum(x, axis=None, keepdims=False)
    if isinstance(value, str):
        return value
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if not isinstance(value, (numbers.Real, Decimal)):
        raise TypeError(
            f"value must be text, a boolean or a real number, got {type(value).__name__}."
        )
    _check_digits(digits)
    value = float(value)
    if value == 0 or not np.isfinite(value):
        return f"{value:g}"
    return f"{value:.{digits}g}"


def fmt_below(value, tol, digits=2):
    """``value`` as text that stays the same where round-off moves it: "< 1e-12" when
    ``|value| < tol``, else ``value`` to ``digits`` significant digits.

    For differences that are zero in exact arithmetic (a package call against its
    from-scratch formula, a symmetry that holds identically), whose printed digits would
    otherwise be round-off noise.
    """
    if isinstance(tol, (bool, np.bool_)) or not isinstance(tol, numbers.Real) or not tol > 0:
        raise ValueError(f"tol must be a positive number, got {tol!r}.")
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"value must be a real number, got {type(value).__name__}.")
    if abs(float(value)) < tol:
        return f"< {float(tol):.0e}".replace("e-0", "e-").replace("e+0", "e")
    return fmt_sig(float(value), digits)


def fmt_time(seconds):
    """A wall-clock time as "1.234 s"; the nbval sanitizer rewrites exactly this form.

    ``seconds`` must be a finite real number >= 0 (a TypeError or ValueError names it
    otherwise, as :func:`fmt_duration` does).
    """
    return f"{_checked_seconds(seconds):.3f} s"


def fmt_plain(value, digits=3):
    """``value`` to ``digits`` significant digits in plain decimal notation, for prose and tables
    where e-notation reads badly: 1640.3 → "1,640", 0.008372 → "0.00837", 1.5e7 → "15,000,000".

    Thousands are separated by commas; trailing zeros after the decimal point are dropped, as
    :func:`fmt_sig` drops them. Integers are printed whole; text, booleans and non-finite numbers
    as :func:`fmt_sig` prints them.
    """
    if isinstance(value, (str, bool, np.bool_)):
        return fmt_sig(value)
    if isinstance(value, numbers.Integral):
        return f"{int(value):,}"
    if not isinstance(value, numbers.Real):
        raise TypeError(f"value must be a real number, got {type(value).__name__}.")
    _check_digits(digits)
    value = float(value)
    if value == 0 or not np.isfinite(value):
        return fmt_sig(value)
    # The rounded value as an exact decimal: formatted as a float, 1e23 (a binary fraction
    # just below it) printed as "99,999,999,999,999,991,611,392".
    rounded = Decimal(f"{value:.{digits - 1}e}")
    exponent = rounded.adjusted()
    text = f"{rounded:,.{max(digits - 1 - exponent, 0)}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def fmt_tex_count(value):
    """A whole number for TeX math, its thousands separated as in prose: 18000 →
    ``"18{,}000"``, so that ``$n = 18{,}000$`` reads "n = 18,000" (a bare comma is
    punctuation in TeX math, which puts a space after it)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"value must be a whole number, got {type(value).__name__}.")
    return f"{int(value):,}".replace(",", "{,}")


def _mantissa_exponent(value, digits):
    """``value`` rounded to ``digits`` significant digits as (mantissa text, exponent), the
    mantissa dropped (``None``) where it is 1: 1e-6 is written 10⁻⁶, not 1.0 × 10⁻⁶."""
    _check_digits(digits)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"value must be a real number, got {type(value).__name__}.")
    value = float(value)
    if not np.isfinite(value) or value == 0:
        raise ValueError(f"value must be finite and non-zero, got {value!r}.")
    mantissa, exponent = f"{value:.{digits - 1}e}".split("e")
    if mantissa.lstrip("-").rstrip("0").rstrip(".") == "1":
        mantissa = "-" if value < 0 else None
    return mantissa, int(exponent)


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
_MINUS, _NBSP = "\u2212", "\u00a0"


def fmt_sci(value, digits=2):
    """A non-zero number in scientific notation for prose and tables, to ``digits``
    significant digits, with a true minus sign and no-break spaces (a phone never ends a line
    at "×"): 0.0000464 → "4.6 × 10⁻⁵", 2e-6 → "2.0 × 10⁻⁶", 1e-6 → "10⁻⁶"."""
    mantissa, exponent = _mantissa_exponent(value, digits)
    power = "10" + str(exponent).translate(_SUPERSCRIPT)
    if mantissa is None:
        return power
    if mantissa == "-":
        return _MINUS + power
    return mantissa.replace("-", _MINUS) + f"{_NBSP}×{_NBSP}{power}"


def fmt_tex_sci(value, digits=2):
    """:func:`fmt_sci` for TeX math, as one brace group so that it never breaks at ×:
    0.0000464 → ``"{4.6 \\times 10^{-5}}"``, 1e-6 → ``"{10^{-6}}"``."""
    mantissa, exponent = _mantissa_exponent(value, digits)
    power = f"10^{{{exponent}}}"
    if mantissa is None:
        return f"{{{power}}}"
    if mantissa == "-":
        return f"{{-{power}}}"
    return f"{{{mantissa} \\times {power}}}"


# (upper limit in seconds, unit, seconds per unit): the first unit whose range holds the value.
_DURATION_UNITS = (
    (1e-3, "µs", 1e-6),
    (1.0, "ms", 1e-3),
    (120.0, "s", 1.0),
    (2 * 3600.0, "min", 60.0),
    (48 * 3600.0, "h", 3600.0),
    (np.inf, "d", 86400.0),
)


def fmt_duration(seconds, digits=2):
    """A duration in the unit that reads best, to ``digits`` significant digits: 0.0123 → "12 ms",
    30.1 → "30 s", 1234 → "21 min", 5.9e6 → "68 d", never "0.00837 h" or "1.64e+03 h".

    For durations a chapter computes or predicts (costs extrapolated to large n). Measured
    wall-clock times keep :func:`fmt_time`: the nbval sanitizer masks exactly that form, and
    this one only in seconds, milliseconds, microseconds and minutes.
    """
    seconds = _checked_seconds(seconds)
    _check_digits(digits)
    if seconds == 0:
        return "0 s"
    # Choose the unit after rounding, so that 119.6 s becomes "2 min", not "120 s".
    rounded = float(f"{seconds:.{digits - 1}e}")
    for limit, unit, scale in _DURATION_UNITS:
        if rounded < limit:
            return f"{fmt_plain(seconds / scale, digits)} {unit}"
    raise AssertionError("unreachable: the last unit has no upper limit")  # pragma: no cover


def _is_float(value):
    return isinstance(value, numbers.Real) and not isinstance(
        value, (bool, np.bool_, numbers.Integral)
    )


def _is_measured(column, digits):
    """Whether a column holds a float that ``digits`` significant digits do not write exactly:
    a measured quantity, whose digits are then all shown. A column of settings (γ = 0.1, C = 10)
    keeps its short form."""
    return any(
        _is_float(v) and np.isfinite(v) and float(f"{float(v):.{digits}g}") != float(v)
        for v in column
    )


def _fmt_cell(value, digits, measured):
    """A table cell: integers with thousands separators, as :func:`fmt_plain` writes them;
    floats of a measured column to ``digits`` significant digits with their trailing zeros
    (0.1100 beside 0.1093, not 0.11, which reads as the less precise of the two); anything
    else by :func:`fmt_sig`."""
    if isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_)):
        return f"{int(value):,}"
    if not (measured and _is_float(value)) or value == 0 or not np.isfinite(value):
        return fmt_sig(value, digits)
    text = f"{float(value):#.{digits}g}"
    return text.removesuffix(".")  # "1000." from the alternate form


def _table_cell(value, digits, measured, row, header):
    """:func:`_fmt_cell`, whose refusal of a value it cannot print (fmt_sig's TypeError)
    names the cell's row and column."""
    try:
        return _fmt_cell(value, digits, measured)
    except TypeError:
        raise TypeError(
            f"row {row}, column {header!r}: a cell must be text, a boolean or a real number, "
            f"got {type(value).__name__} ({value!r}); write a missing entry as text, such as "
            "'–'."
        ) from None


class Table:
    """A small result table.

    Parameters
    ----------
    rows : list of sequences
        Cell values. Integers get thousands separators (1,000). Floats get ``digits``
        significant digits; in a column of measured values (one that those digits do not
        write exactly), trailing zeros are kept, so that every entry shows the same precision.
        Text is printed as it is, booleans as yes/no. Any other value (None, a complex number)
        is refused with a TypeError naming its row and column: write a missing entry as text,
        such as ``"–"`` or ``"not run"``, so the table says why it is missing.
    headers : sequence of str
    title : str, optional
    digits : int
        Significant digits for floats.
    """

    def __init__(self, rows, headers, *, title=None, digits=4):
        headers = [str(h) for h in headers]
        # a 0-d array (what some reductions return) is its one value
        rows = [
            [v.item() if isinstance(v, np.ndarray) and v.ndim == 0 else v for v in row]
            for row in rows
        ]
        for i, row in enumerate(rows):
            if len(row) != len(headers):
                raise ValueError(
                    f"row {i} has {len(row)} cells but there are {len(headers)} headers."
                )
        measured = [_is_measured([row[j] for row in rows], digits) for j in range(len(headers))]
        cells = [
            [
                _table_cell(v, digits, keep, i, header)
                for v, keep, header in zip(row, measured, headers, strict=True)
            ]
            for i, row in enumerate(rows)
        ]
        self.headers, self.cells, self.title = headers, cells, title

    def __repr__(self):
        widths = [
            max(len(h), *(len(r[j]) for r in self.cells)) if self.cells else len(h)
            for j, h in enumerate(self.headers)
        ]
        line = lambda vals: "  ".join(v.rjust(w) for v, w in zip(vals, widths, strict=True))  # noqa: E731
        out = [self.title] if self.title else []
        out += [line(self.headers), line(["-" * w for w in widths])]
        out += [line(r) for r in self.cells]
        return "\n".join(out)

    def _repr_html_(self):
        return self.to_styler().to_html()

    def to_styler(self):
        """The table as a pandas ``Styler``: numeric cells right-aligned and text cells
        left-aligned (each header as the majority of its column), no index, a caption, and
        stable element ids (derived from the layout, not the values), as the book renders it.

        Needs pandas (the ``notebooks`` extra)."""
        try:
            import pandas as pd
        except ImportError as err:  # pragma: no cover - depends on the environment
            raise ImportError(
                "HTML tables need pandas: pip install 'kernelcourse[notebooks]'"
            ) from err
        frame = pd.DataFrame(self.cells, columns=range(len(self.headers)))
        # Ids from the layout, not the values: a number that moves within its printed
        # precision on another CPU must not change the HTML that nbval compares.
        layout = [self.title or "", *self.headers, *(c for r in self.cells for c in r)]
        layout = _DIGITS.sub("#", repr((len(self.headers), layout)))
        uuid = hashlib.sha1(layout.encode("utf-8")).hexdigest()[:10]
        # Alignment per cell: a number (with its unit or sign) sits right, text sits left, so
        # a column that mixes "12.3" with "n/a" or a method name still lines its digits up.
        # A header follows the majority of its column.
        numeric = [[bool(_NUMERIC.match(c)) for c in row] for row in self.cells]
        classes = pd.DataFrame(
            [
                [
                    "kc-num" if n else "kc-text kc-wrap" if len(c) >= _WRAP_FROM else "kc-text"
                    for n, c in zip(flags, row, strict=True)
                ]
                for flags, row in zip(numeric, self.cells, strict=True)
            ],
            columns=frame.columns,
        )
        styles = [
            {"selector": "td.kc-num", "props": "text-align: right;"},
            {"selector": "td.kc-text", "props": "text-align: left;"},
        ]
        for j in range(len(self.headers)):
            votes = sum(row[j] for row in numeric)
            side = "right" if 2 * votes > len(numeric) else "left"
            styles.append({"selector": f"th.col_heading.col{j}", "props": f"text-align: {side};"})
        styler = (
            frame.style.hide(axis="index")
            .format(escape="html")
            .format_index(lambda j: html.escape(self.headers[j]), axis="columns")
            .set_uuid(uuid)
            .set_table_attributes('class="kc-table"')
            .set_table_styles(styles)
            .set_td_classes(classes)
        )
        if self.title:
            styler = styler.set_caption(html.escape(self.title))
        return styler


class Markdown:
    """Markdown text with computed numbers in it, displayed as rendered prose.

    The same text is the ``text/markdown`` output that Jupyter and the book render and the
    ``text/plain`` output that strict nbval compares.

    Parameters
    ----------
    text : str
        MyST Markdown; common leading indentation and surrounding blank lines are removed.
    """

    def __init__(self, text):
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}.")
        self.text = textwrap.dedent(text).strip()

    def __repr__(self):
        return self.text

    def _repr_markdown_(self):
        return self.text


def md(text):
    """Prose with computed numbers for a chapter: ``md(f"accuracy {acc:.1%} on {n} points")``.

    Put it last in a code cell tagged ``remove-input``: the reader sees the rendered sentence in
    Jupyter and in the book, never role markup, and nbval checks every number in it.
    """
    return Markdown(text)
