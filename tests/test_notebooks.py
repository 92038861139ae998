"""Checks on the committed notebooks that strict nbval alone cannot make."""

import json
import pathlib

import pytest

from kernelcourse.book.notebooks import is_homework_starter, trim_metadata

ROOT = pathlib.Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted(
    p for p in (ROOT / "book").rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts
)


def _is_starter(path):
    # Homework starters (book/homework/*.ipynb, released from book/homework/solutions/) are
    # published with outputs cleared on purpose; nbval then runs their cells without comparing
    # outputs, and tests/test_homework.py checks them against their solutions instead.
    return is_homework_starter(path)


def test_book_has_notebooks():
    assert NOTEBOOKS, "no notebooks found under book/"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: str(p.relative_to(ROOT)))
def test_notebook_has_stored_outputs(path):
    """A notebook saved without outputs would pass nbval without checking anything."""
    if _is_starter(path):
        pytest.skip("starter notebooks are released with cleared outputs")
    nb = json.loads(path.read_text(encoding="utf-8"))
    code = [c for c in nb["cells"] if c["cell_type"] == "code" and "".join(c["source"]).strip()]
    assert code, f"{path.name} has no code cells"
    unexecuted = [i for i, c in enumerate(code) if c.get("execution_count") is None]
    assert not unexecuted, f"{path.name}: code cells {unexecuted} were never executed"
    assert any(c.get("outputs") for c in code), f"{path.name} has no stored outputs"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: str(p.relative_to(ROOT)))
def test_notebook_skips_no_cell(path):
    """Strict nbval everywhere: no cell is skipped and lax mode is never asked for."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        tags = cell.get("metadata", {}).get("tags", [])
        assert "nbval-skip" not in tags, f"{path.name} skips a cell"
        assert "# NBVAL_SKIP" not in "".join(cell["source"]), f"{path.name} skips a cell"


def test_sanitizer_rewrites_only_timings_addresses_and_cell_file_names():
    import re

    text = (ROOT / "tests" / "nbval_sanitize.cfg").read_text()
    pairs = re.findall(r"regex: (.*)\nreplace: (.*)", text)
    assert len(pairs) == 3

    def sanitize(s):
        for rx, rep in pairs:
            s = re.sub(rx, rep, s)
        return s

    assert sanitize("fit took 0.153 s, predict 12 ms") == "fit took <TIME>, predict <TIME>"
    assert sanitize("<object at 0x7f3a2b1c9d10>") == "<object at <ADDRESS>>"
    warning = "/tmp/ipykernel_690/920470821.py:12: ConvergenceWarning: residual 0.0015"
    assert sanitize(warning) == "<CELL>: ConvergenceWarning: residual 0.0015"
    kept = "accuracy 0.9731, D = 2000, gamma = 0.5, 10 samples, error 1.2e-05"
    assert sanitize(kept) == kept


def test_trim_metadata_merges_split_streams_and_keeps_order():
    nbformat = pytest.importorskip("nbformat")
    v4 = nbformat.v4
    cell = v4.new_code_cell(
        "print(1); print(2); display(3); print(4)",
        outputs=[
            v4.new_output("stream", name="stdout", text="1\n"),
            v4.new_output("stream", name="stdout", text="2\n"),
            v4.new_output("stream", name="stderr", text="warn\n"),
            v4.new_output("display_data", data={"text/plain": "3"}),
            v4.new_output("stream", name="stdout", text="4\n"),
        ],
        metadata={"execution": {"iopub.status.busy": "now"}},
    )
    nb = trim_metadata(v4.new_notebook(cells=[cell]))
    outputs = nb.cells[0].outputs
    assert [(o.output_type, o.get("name")) for o in outputs] == [
        ("stream", "stdout"),
        ("stream", "stderr"),
        ("display_data", None),
        ("stream", "stdout"),
    ]
    assert outputs[0].text == "1\n2\n"
    assert "execution" not in nb.cells[0].metadata
    nbformat.validate(nb)


CHAPTERS = sorted((ROOT / "book").glob("[0-9][0-9]_*.ipynb"))


def _outputs(nb):
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            yield from ((cell, out) for out in cell.get("outputs", []))


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_figures_are_ordinary_outputs(path):
    """A figure shows in Jupyter as a cell output, and the book numbers it from the cell's
    ``mystnb.figure`` metadata; nothing is stored only as glued data."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    for cell, out in _outputs(nb):
        glued = [k for k in out.get("data", {}) if k.startswith("application/papermill.record/")]
        assert not glued, f"{path.name}: glued output {glued} in cell {cell.get('id')}"
    for cell in nb["cells"]:
        src = "".join(cell["source"])
        assert "{glue" not in src, f"{path.name}: glue markup in cell {cell.get('id')}"
        figure = cell.get("metadata", {}).get("mystnb", {}).get("figure")
        if figure:
            images = [o for o in cell.get("outputs", []) if "image/png" in o.get("data", {})]
            name = figure.get("name")
            assert len(images) == 1, f"{path.name}: figure {name} has {len(images)} images"
            assert figure.get("name") and figure.get("caption"), f"{path.name}: unnamed figure"


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_figures_fit_the_column_at_their_drawn_size(path):
    """A figure no wider than the book's column is shown unscaled at 1280 px, so its 12 pt
    axis text stays at least as large as the body text; the PNG has twice the pixels."""
    import base64
    import struct

    from kernelcourse.book.plotting import COLUMN_WIDTH

    nb = json.loads(path.read_text(encoding="utf-8"))
    for cell, out in _outputs(nb):
        if "image/png" not in out.get("data", {}):
            continue
        width = out.get("metadata", {}).get("image/png", {}).get("width")
        assert width is not None, f"{path.name}: a figure in cell {cell.get('id')} has no width"
        # 100 px per inch, plus the saved margin of 0.05 in on each side
        assert width <= 100 * COLUMN_WIDTH + 12, (
            f"{path.name}: a figure in cell {cell.get('id')} is {width} px wide, wider than "
            "the column; it would be shown scaled down"
        )
        png = base64.b64decode(out["data"]["image/png"])
        assert struct.unpack(">I", png[16:20])[0] >= 2 * width - 2


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_chapter_reads_nothing_from_the_checkout(path):
    """A chapter downloaded from the book runs anywhere: data come through
    kernelcourse.datasets and stored results through the package, never a repository path."""
    import re

    nb = json.loads(path.read_text(encoding="utf-8"))
    code = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
    for pattern in (r"\.\./", r"shared/data", r"benchmarks/", r"KERNELCOURSE_DATA",
                    r"\.data\.gz", r"\.npz[\"']"):
        assert not re.search(pattern, code), f"{path.name} reads a checkout path: {pattern}"


def test_execute_without_the_extra_says_which_extra_in_one_line(monkeypatch, tmp_path, capsys):
    import sys

    from kernelcourse.book import notebooks

    nb = tmp_path / "a.ipynb"
    nb.write_text("{}")
    monkeypatch.setitem(sys.modules, "nbclient", None)  # as on a base install
    assert notebooks.main(["execute", str(nb)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "kernelcourse[notebooks]" in err and "nbclient" in err


# The homework solutions (nbgrader's source notebooks) and the starters released from them.
HOMEWORK = sorted((ROOT / "book" / "homework").glob("hw*.ipynb")) + sorted(
    (ROOT / "book" / "homework" / "solutions").glob("hw*.ipynb")
)


def test_homework_notebooks_are_found():
    solutions = [p for p in HOMEWORK if p.parent.name == "solutions"]
    assert solutions and len(HOMEWORK) == 2 * len(solutions)


@pytest.mark.parametrize(
    "path", CHAPTERS + HOMEWORK, ids=lambda p: p.relative_to(ROOT / "book").as_posix()
)
def test_code_lines_fit_the_page(path):
    """Code lines of at most 88 characters: the book's code column and a laptop's Jupyter
    show them without scrolling sideways, in the chapters and in the homework alike."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    long = [
        (cell.get("id"), len(line))
        for cell in nb["cells"]
        if cell["cell_type"] == "code"
        for line in "".join(cell["source"]).splitlines()
        if len(line) > 88
    ]
    where = path.relative_to(ROOT).as_posix()
    assert long == [], f"{where}: code lines over 88 characters (cell id, length): {long}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.relative_to(ROOT / "book").as_posix())
def test_no_backtick_fence_with_backticks_in_its_info_string(path):
    """A directive opened by a backtick fence may not hold a backtick in its line (CommonMark:
    ```{admonition} How `X` works is then no fence at all, and its closing ``` opens a code
    block that swallows the rest of the cell as literal text). Such titles take a colon
    fence, :::{admonition}. Markdown cells and the prose that md() prints are both read."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    texts = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown"]
    texts += [
        "".join(out["data"]["text/markdown"])
        for c in nb["cells"]
        for out in c.get("outputs", [])
        if "text/markdown" in out.get("data", {})
    ]
    bad = [
        line
        for text in texts
        for line in text.splitlines()
        if line.lstrip().startswith("```") and "`" in line.lstrip().lstrip("`")
    ]
    assert bad == [], f"{path.name}: backtick fences with a backtick in their info string: {bad}"
