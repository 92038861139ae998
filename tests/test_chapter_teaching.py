"""Every chapter teaches the d2l way: exercises with folded solutions, and each algorithm it
writes from scratch checked against the package call that follows it."""

import json
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "book").glob("[0-9][0-9]_*.ipynb"))


def _cells(path):
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def _source(cell):
    return "".join(cell["source"])


def _tags(cell):
    return cell.get("metadata", {}).get("tags", [])


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_at_least_four_exercises_each_with_a_folded_solution(path):
    markdown = "\n".join(_source(c) for c in _cells(path) if c["cell_type"] == "markdown")
    labels = re.findall(r"`{3,}\{exercise\}[^\n]*\n:label: *([\w-]+)", markdown)
    solutions = re.findall(r"`{3,}\{solution\} *([\w-]+)\n((?::[\w-]+:[^\n]*\n)*)", markdown)
    assert len(labels) >= 4, f"{path.name}: {len(labels)} labelled exercises"
    solved = {label: opts for label, opts in solutions}
    for label in labels:
        assert label in solved, f"{path.name}: exercise {label} has no solution"
        assert "dropdown" in solved[label], f"{path.name}: solution of {label} is not folded"


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_each_from_scratch_cell_is_checked_against_the_package(path):
    code = [c for c in _cells(path) if c["cell_type"] == "code"]
    for i, cell in enumerate(code):
        if "from-scratch" not in _tags(cell):
            continue
        assert i + 1 < len(code) and "package-check" in _tags(code[i + 1]), (
            f"{path.name}: a from-scratch cell is not followed by a package-check cell"
        )
        check = code[i + 1]
        printed = "".join(
            "".join(o.get("text", "")) + "".join(o.get("data", {}).get("text/plain", ""))
            for o in check.get("outputs", [])
        )
        # The check prints the difference against its tolerance ("< 1e-12", "below 1e-10");
        # strict nbval re-runs it, so a disagreement would change that text and fail.
        assert re.search(r"(<|below) \d(\.\d+)?e-\d+", printed), (
            f"{path.name}: the package check prints no agreement within a tolerance: {printed!r}"
        )
