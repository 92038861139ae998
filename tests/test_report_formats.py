"""Numbers for prose and tables without e-notation."""

import re

import numpy as np
import pytest

from kernelcourse.book.report import Table, fmt_duration, fmt_plain


@pytest.mark.parametrize(
    ("value", "digits", "text"),
    [
        (1640.3, 3, "1,640"),
        (0.008372, 3, "0.00837"),
        (1.5e7, 3, "15,000,000"),
        (12345678.9, 3, "12,300,000"),
        (2.0, 3, "2"),
        (-0.5, 3, "-0.5"),
        (0.0001234, 3, "0.000123"),
        (999.96, 3, "1,000"),
        (3.14159, 4, "3.142"),
        (np.float32(0.25), 2, "0.25"),
        (7, 3, "7"),
        (123456, 3, "123,456"),
        (0.0, 3, "0"),
        (float("inf"), 3, "inf"),
        (True, 3, "yes"),
        ("n/a", 3, "n/a"),
    ],
)
def test_fmt_plain(value, digits, text):
    assert fmt_plain(value, digits) == text
    assert "e+" not in fmt_plain(value, digits) and "e-" not in fmt_plain(value, digits)


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (1.23e-5, "12 µs"),
        (0.0123, "12 ms"),
        (0.9996, "1 s"),
        (30.1, "30 s"),
        (119.6, "2 min"),
        (1234.0, "21 min"),
        (5.9 * 3600, "5.9 h"),
        (1.64e3 * 3600, "68 d"),
        (0, "0 s"),
    ],
)
def test_fmt_duration_picks_the_unit_that_reads_best(seconds, text):
    assert fmt_duration(seconds) == text


def test_formatted_numbers_stay_right_aligned_in_tables():
    table = Table([["a", fmt_plain(1640.3), fmt_duration(30.1)]], ["name", "n", "time"])
    html = table.to_styler().to_html()
    cells = dict(re.findall(r'<td id="T_\w+_(row\d+_col\d+)" class="[^"]* (kc-\w+)"', html))
    assert cells == {"row0_col0": "kc-text", "row0_col1": "kc-num", "row0_col2": "kc-num"}
    assert "td.kc-num {\n  text-align: right;" in html


def test_bad_input_is_refused():
    with pytest.raises(TypeError, match="real number"):
        fmt_plain(1 + 2j)
    with pytest.raises(ValueError, match="digits"):
        fmt_plain(1.5, 0)
    with pytest.raises(ValueError, match=">= 0"):
        fmt_duration(-1.0)
    with pytest.raises(ValueError, match="finite"):
        fmt_duration(float("nan"))
    with pytest.raises(TypeError, match="real number"):
        fmt_duration("30 s")
    with pytest.raises(ValueError, match="digits"):
        fmt_duration(3.0, digits=0)
