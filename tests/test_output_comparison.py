"""The book's output comparison: numbers to their printed precision, all other text exact."""

import json
import subprocess
import sys
import textwrap

import pytest

from kernelcourse.book.notebooks import (
    first_difference,
    numbers_match,
    outputs_match,
    split_numbers,
)


@pytest.mark.parametrize(
    ("stored", "computed"),
    [
        ("0.00769", "0.0077"),  # one unit of the stored last digit, printed with .3g
        ("0.0077", "0.00769"),
        ("84.4", "84.5"),
        ("75", "76"),
        ("1.2e-05", "1.3e-05"),
        ("-0.5", "-0.4"),
        ("-0.0", "0.0"),
        ("50,000", "50,001"),
        ("0.42489504573428666", "0.4248950457342866"),  # a glued full-precision float
        ("\u22120.25", "\u22120.26"),  # matplotlib's Unicode minus
    ],
)
def test_numbers_within_one_unit_match(stored, computed):
    assert numbers_match(stored, computed)
    assert outputs_match(f"value {stored} here", f"value {computed} here")


@pytest.mark.parametrize(
    ("stored", "computed"),
    [
        ("84.4", "84.6"),  # two units
        ("75", "77"),
        ("0.00769", "0.00771"),
        ("1.2e-05", "1.4e-05"),
        ("1.2e-05", "1.2e-04"),
        ("0.5", "-0.5"),
        ("0.42489504573428666", "0.42489504673428666"),  # full precision: 2.4e-9 relative
    ],
)
def test_numbers_beyond_one_unit_differ(stored, computed):
    assert not numbers_match(stored, computed)
    assert not outputs_match(f"x = {stored}", f"x = {computed}")


def test_percentages_and_units_around_numbers():
    assert outputs_match("accuracy 84.4 % in 3 runs", "accuracy 84.5 % in 3 runs")
    assert not outputs_match("accuracy 84.4 %", "accuracy 84.4 pts")


def test_text_must_be_identical():
    assert not outputs_match("accuracy 0.81 on test", "accuracy 0.81 on train")
    assert "text differs" in first_difference("Nyström: 0.81", "Nystroem: 0.81")
    # a number glued to a word is part of the word
    assert not outputs_match("hw1 done", "hw2 done")
    assert not outputs_match("x_1 = 3", "x_2 = 3")
    assert not outputs_match("True", "False")
    assert not outputs_match("converged: True", "converged: False")


def test_column_padding_may_follow_number_width():
    stored = "   n    error\n-----  -------\n  100  0.00769\n"
    computed = "   n   error\n-----  ------\n  100  0.0077\n"
    # the rule line changed length too: dashes are text, so that is a real difference
    assert not outputs_match(stored, computed)
    assert outputs_match("  100  0.00769\n", "  100   0.0077\n")
    # line breaks are never collapsed
    assert not outputs_match("a 1\nb 2", "a 1 b 2")


def test_missing_or_extra_row_is_reported():
    stored = "n  acc\n1  0.5\n2  0.6\n"
    assert "numbers stored" in first_difference(stored, "n  acc\n1  0.5\n")
    assert not outputs_match(stored, stored + "3  0.7\n")


def test_split_numbers_keeps_words_whole():
    pieces, numbers = split_numbers("D = 2000, gamma=1e-3, v1.9 and -4.5%")
    assert [n.text for n in numbers] == ["2000", "1e-3", "-4.5"]
    assert pieces[0] == "D = " and "v1.9" in pieces[2]


def test_non_string_outputs_compare_exactly():
    assert outputs_match(3, 3)
    assert first_difference(3, 4) == "outputs differ"


def _notebook(source, stored_text):
    return {
        "cells": [
            {
                "cell_type": "code",
                "execution_count": 1,
                "id": "c1",
                "metadata": {},
                "outputs": [{"name": "stdout", "output_type": "stream", "text": stored_text}],
                "source": source,
            }
        ],
        "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python",
                                    "name": "python3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }


@pytest.mark.parametrize(
    ("stored", "passes"),
    [
        ("mean 0.0077 over 75 runs\n", True),
        ("mean 0.00769 over 76 runs\n", True),
        ("mean 0.0079 over 75 runs\n", False),  # two units off
        ("mean 0.0077 over 75 trials\n", False),  # a changed word
        ("mean 0.0077 over 75 runs\nsecond row\n", False),  # a missing row
    ],
)
def test_strict_nbval_uses_the_comparison(tmp_path, stored, passes):
    """The plugin really runs: a notebook stored with these outputs passes or fails strict nbval
    against a cell that prints 'mean 0.0077 over 75 runs'."""
    nb = tmp_path / "probe.ipynb"
    nb.write_text(json.dumps(_notebook('print("mean 0.0077 over 75 runs")', stored)))
    root = __import__("pathlib").Path(__file__).resolve().parents[1]
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "tests.nbval_plugin", "--nbval",
         "--nbval-current-env", "-p", "no:cacheprovider", str(nb)],
        cwd=root, capture_output=True, text=True, timeout=120,
        env={**__import__("os").environ, "PYTHONPATH": str(root)},
    )
    assert (proc.returncode == 0) is passes, textwrap.shorten(proc.stdout, 2000)
