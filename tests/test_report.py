import numpy as np
import pytest

from kernelcourse.book.report import Table, fmt_sig, fmt_time


def test_fmt_sig():
    assert fmt_sig(3.14159265, 4) == "3.142"
    assert fmt_sig(12345.678, 3) == "1.23e+04"
    assert fmt_sig(7) == "7"
    assert fmt_sig(True) == "yes" and fmt_sig(np.bool_(False)) == "no"
    assert fmt_sig("text") == "text"
    assert fmt_sig(float("nan")) == "nan"
    assert fmt_time(0.12345) == "0.123 s"


def test_table_text_and_html_agree():
    t = Table([["a", 1.23456, True], ["b<c", 2, False]], ["name", "value", "ok"], title="T")
    text = repr(t)
    assert text.splitlines()[0] == "T"
    assert "1.235" in text and "yes" in text and "no" in text
    html = t._repr_html_()
    assert "<caption>T</caption>" in html and "b&lt;c" in html and "1.235" in html


def test_table_rejects_ragged_rows():
    with pytest.raises(ValueError, match="row 1 has 1 cells but there are 2 headers"):
        Table([[1, 2], [3]], ["x", "y"])


def test_md_is_markdown_and_plain_text_alike():
    from kernelcourse.book.report import md

    prose = md(
        """
        The fit reaches $R^2 = 0.47$ on
        89 points.
        """
    )
    assert prose._repr_markdown_() == "The fit reaches $R^2 = 0.47$ on\n89 points."
    assert repr(prose) == prose._repr_markdown_()


def test_md_rejects_non_text():
    import pytest

    from kernelcourse.book.report import md

    with pytest.raises(TypeError, match="text must be a str"):
        md(0.5)


def _alignment(html):
    """What a browser applies to each cell of a rendered Table: {"row0_col1": "right", ...},
    headers as {"head_col1": ...}, from the table's own style rules and the cells' classes."""
    import re

    rules = dict(re.findall(r"#T_\w+ +([\w.-]+) \{\s*text-align: (\w+);", html))
    sides = {}
    for where, classes in re.findall(r'<t[dh] id="T_\w+?_(\w+)" class="([^"]*)"', html):
        tag = "th" if where.startswith("level") else "td"
        chosen = [side for selector, side in rules.items()
                  if selector.startswith(tag + ".")
                  and set(selector.split(".")[1:]) <= set(classes.split())]
        assert len(chosen) == 1, (where, classes, chosen)
        sides[where.replace("level0", "head")] = chosen[0]
    return sides


def test_html_table_right_aligns_numbers_and_escapes_text():
    import pytest

    pytest.importorskip("pandas")
    from kernelcourse.book.report import Table

    t = Table([["rff", 0.8132, "1.2 s"], ["a<b", 85, "10 ms"]], ["method", "acc", "time"],
              title="x < y")
    html = t._repr_html_()
    assert 'class="kc-table"' in html
    sides = _alignment(html)
    assert sides["row0_col0"] == sides["row1_col0"] == sides["head_col0"] == "left"
    assert all(sides[f"row{i}_col{j}"] == "right" for i in (0, 1) for j in (1, 2))
    assert sides["head_col1"] == sides["head_col2"] == "right"
    assert "a&lt;b" in html and "x &lt; y" in html
    assert html == Table([["rff", 0.8132, "1.2 s"], ["a<b", 85, "10 ms"]],
                         ["method", "acc", "time"], title="x < y")._repr_html_()


def test_html_table_aligns_each_cell_of_a_mixed_column():
    """A column mixing numbers with "—", "n/a" or words: every number right, every word left,
    the header with the column's majority; the plain-text form is unchanged."""
    pytest.importorskip("pandas")
    rows = [
        ["exact", "12.3", "n/a", "−0.5 %"],
        ["rff", "—", "4.1e-03", "text"],
        ["nystroem", "1,024", "+7 ms", "more text"],
        ["features on the fly", "< 1e-10", "≈ 2 s", "a note long enough to wrap"],
    ]
    t = Table(rows, ["method", "error", "time", "note"])
    sides = _alignment(t._repr_html_())
    assert [sides[f"row{i}_col1"] for i in range(4)] == ["right", "left", "right", "right"]
    assert [sides[f"row{i}_col2"] for i in range(4)] == ["left", "right", "right", "right"]
    assert [sides[f"row{i}_col3"] for i in range(4)] == ["right", "left", "left", "left"]
    assert [sides[f"head_col{j}"] for j in range(4)] == ["left", "right", "right", "left"]
    assert repr(t).splitlines()[2] == " " * 14 + "exact     12.3      n/a" + " " * 22 + "−0.5 %"


def test_html_table_lets_only_long_text_wrap():
    """Long text cells may wrap in a narrow column; numbers and short words stay whole."""
    import re

    pytest.importorskip("pandas")
    t = Table([["features on the fly", "primal", "< 1e-10", "Θ(n d D + T D)"]],
              ["strategy", "trains", "gap", "time"])
    classes = re.findall(r'<td id="T_\w+?_row0_col\d" class="data row0 col\d ([^"]*)"',
                         t._repr_html_())
    assert classes == ["kc-text kc-wrap", "kc-text", "kc-num", "kc-text"]


def test_html_table_header_alignment_with_no_rows():
    pytest.importorskip("pandas")
    sides = _alignment(Table([], ["a", "b"])._repr_html_())
    assert sides == {"head_col0": "left", "head_col1": "left"}


def test_html_table_ids_do_not_depend_on_the_values():
    """A number that moves within its printed precision between CPUs must leave the HTML
    identical apart from the number, or strict nbval would compare the element ids."""
    import re

    pytest.importorskip("pandas")
    ids = lambda t: set(re.findall(r"T_[0-9a-f]+", t._repr_html_()))  # noqa: E731
    a = Table([["rff", "84.4 %"]], ["method", "accuracy"], title="Adult (85.2 %)")
    b = Table([["rff", "84.5 %"]], ["method", "accuracy"], title="Adult (85.1 %)")
    c = Table([["nystroem", "84.4 %"]], ["method", "accuracy"], title="Adult (85.2 %)")
    assert ids(a) == ids(b)
    assert ids(a) != ids(c)


def test_fmt_below_prints_the_tolerance_for_round_off_and_the_value_above_it():
    from kernelcourse.book.report import fmt_below

    assert fmt_below(3e-16, 1e-12) == "< 1e-12"
    assert fmt_below(-3e-16, 1e-12) == "< 1e-12"
    assert fmt_below(0.0, 1e-6) == "< 1e-6"
    assert fmt_below(0.01234, 1e-12) == "0.012"
    assert fmt_below(0.01234, 1e-12, digits=3) == "0.0123"
    with pytest.raises(ValueError, match="tol"):
        fmt_below(1.0, 0)
    with pytest.raises(TypeError, match="value"):
        fmt_below("small", 1e-12)


def test_table_shows_one_precision_per_measured_column():
    """A measured column keeps trailing zeros (0.1100 beside 0.1093, not 0.11, which would read
    as the coarser number); a column of exact settings keeps its short form; counts get
    thousands separators, as the prose (fmt_plain) writes them."""
    t = Table(
        [["a", 0.11000001, 0.1, 12345, 1000.4], ["b", 0.10934, 10.0, np.int64(2048), 3.14159]],
        ["method", "error", "C", "n", "x"],
    )
    assert [row[1:] for row in t.cells] == [
        ["0.1100", "0.1", "12,345", "1000"],
        ["0.1093", "10", "2,048", "3.142"],
    ]
    # a float that the digits write exactly stays short when the column holds only such
    assert Table([[0.25], [0.5]], ["p"]).cells == [["0.25"], ["0.5"]]
    # non-finite values and zeros keep fmt_sig's form inside a measured column
    assert Table([[0.123456], [float("nan")], [0.0]], ["v"]).cells == [
        ["0.1235"], ["nan"], ["0"]
    ]


def test_fmt_tex_count_groups_thousands_as_tex_wants():
    from kernelcourse.book.report import fmt_tex_count

    assert fmt_tex_count(18000) == "18{,}000"
    assert fmt_tex_count(np.int64(1234567)) == "1{,}234{,}567"
    assert fmt_tex_count(999) == "999" and fmt_tex_count(-4096) == "-4{,}096"
    for bad in (2.0, True, "1000"):
        with pytest.raises(TypeError, match="value must be a whole number"):
            fmt_tex_count(bad)


def test_fmt_sci_writes_one_unbreakable_power_of_ten():
    from kernelcourse.book.report import fmt_sci, fmt_tex_sci

    nb = "\u00a0"
    assert fmt_sci(4.64e-5) == f"4.6{nb}×{nb}10⁻⁵"
    assert fmt_sci(4.64e-5, 3) == f"4.64{nb}×{nb}10⁻⁵"
    assert fmt_sci(np.float32(-3.2e7)) == f"\u22123.2{nb}×{nb}10⁷"
    # a mantissa of 1 is left out, after rounding
    assert fmt_sci(1e-6) == "10⁻⁶" and fmt_sci(0.99996e-3) == "10⁻³"
    assert fmt_sci(-1e12) == "\u221210¹²" and fmt_sci(2e-6) == f"2.0{nb}×{nb}10⁻⁶"
    assert fmt_tex_sci(4.64e-5) == r"{4.6 \times 10^{-5}}"
    assert fmt_tex_sci(np.int64(12345), 3) == r"{1.23 \times 10^{4}}"
    assert fmt_tex_sci(1e-12) == "{10^{-12}}" and fmt_tex_sci(-1e3) == "{-10^{3}}"
    for f in (fmt_sci, fmt_tex_sci):
        for bad in (0.0, np.inf, np.nan):
            with pytest.raises(ValueError, match="value must be finite and non-zero"):
                f(bad)
        for bad in (True, "1e-3", None):
            with pytest.raises(TypeError, match="value must be a real number"):
                f(bad)
        with pytest.raises(ValueError, match="digits must be a positive integer"):
            f(1.5, 0)
