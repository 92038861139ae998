"""The PDF edition as a reader gets it, read back with poppler's pdftotext and pdfimages.

Run through `make book-test` (part of `make test`), after `make pdf` has printed the built book
to ``_build/html/kernelcourse.pdf``; without ``--book-pdf`` these tests are skipped.
"""

import glob
import json
import pathlib
import re
import shutil
import subprocess

import pytest
import yaml

ROOT = pathlib.Path(__file__).resolve().parents[1]

# TeX that MathJax or MyST should have turned into typeset math or a link.
RAW_TEX = re.compile(
    r"\\(frac|mathbf|mathcal|mathbb|mathrm|operatorname|begin|end|sum|int|sqrt|left|right|"
    r"alpha|beta|gamma|lambda|Omega|omega|phi|psi|top|le|ge|cdot|tilde|hat)\b|\$\$|"
    r"\{(eq|numref|ref|doc|cite|math|glue:text|prf:ref)\}`"
)


@pytest.fixture(scope="module")
def book_pdf(request):
    option = request.config.getoption("--book-pdf")
    if not option:
        pytest.skip("needs the PDF: run `make book-test`")
    path = pathlib.Path(option).resolve()
    assert path.is_file(), f"no PDF at {path}: run `make pdf` first"
    return path


def _tool(name):
    path = shutil.which(name)
    if path is None:
        pytest.fail(f"{name} is missing: `make pdf` installs poppler-utils when run as root")
    return path


@pytest.fixture(scope="module")
def text(book_pdf):
    out = subprocess.run([_tool("pdftotext"), "-enc", "UTF-8", str(book_pdf), "-"],
                         capture_output=True, text=True, check=True).stdout  # fmt: skip
    return out


@pytest.fixture(scope="module")
def flat(text):
    """The text with line breaks undone, spaces collapsed and typographic quotes made plain."""
    return _plain(" ".join(text.replace("\f", " ").split()))


def _plain(text):
    return text.translate(str.maketrans("‘’“”", "''\"\""))


@pytest.fixture(scope="module")
def manifest(book_pdf):
    return json.loads(book_pdf.with_suffix(".json").read_text())


def _toc_files():
    """Every page of the table of contents, in order, as paths relative to the root."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [toc["root"]]

    def walk(entries):
        for entry in entries:
            if "file" in entry:
                files.append(entry["file"])
            if "glob" in entry:
                found = glob.glob(str(ROOT / entry["glob"]))
                files.extend(sorted(str(pathlib.Path(p).with_suffix("")) for p in found))
            walk(entry.get("sections", []))

    for part in toc.get("parts", []):
        walk(part.get("chapters", []))
    return [str(pathlib.Path(f).relative_to(ROOT)) if f.startswith("/") else f for f in files]


def _title(stem):
    """The first level-1 heading of a page's source (notebook or MyST Markdown)."""
    path = ROOT / f"{stem}.ipynb"
    if path.exists():
        cells = json.loads(path.read_text())["cells"]
        source = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    else:
        source = (ROOT / f"{stem}.md").read_text()
    for line in source.splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    raise AssertionError(f"{stem} has no title")


def _words(title):
    """The title's plain-text pieces: math, code marks and roles are typeset differently."""
    title = re.sub(r"\$[^$]*\$", "|", title)
    title = re.sub(r"\{[a-z:-]+\}", "", title).replace("`", "")
    return [_plain(" ".join(piece.split())) for piece in title.split("|") if piece.strip()]


def test_every_page_of_the_book_is_printed(manifest):
    printed = [pathlib.PurePosixPath(r["page"]).with_suffix("").as_posix() for r in manifest]
    assert printed == _toc_files()


@pytest.mark.parametrize("stem", _toc_files())
def test_every_title_is_in_the_text(flat, stem):
    for piece in _words(_title(stem)):
        assert piece in flat, f"{stem}: title {piece!r} is not in the PDF's text"


def test_no_unresolved_reference(flat):
    where = [flat[max(0, m.start() - 60) : m.end() + 20] for m in re.finditer(r"\?\?", flat)]
    assert where == [], "unresolved references (??) in the PDF"


def test_no_raw_tex(flat):
    where = [flat[max(0, m.start() - 40) : m.end() + 40] for m in RAW_TEX.finditer(flat)]
    assert where == [], "raw TeX or MyST markup in the PDF"


def test_every_figure_is_embedded(book_pdf, manifest):
    listing = subprocess.run([_tool("pdfimages"), "-list", str(book_pdf)],
                             capture_output=True, text=True, check=True).stdout  # fmt: skip
    rows = [line.split() for line in listing.splitlines()[2:] if line.strip()]
    images = [row for row in rows if row[2] == "image"]  # soft masks are listed apart
    site = book_pdf.parent
    expected = 0
    for record in manifest:
        html = (site / record["page"]).read_text()
        article = html.split('<article class="bd-article"', 1)[-1].split("</article>", 1)[0]
        count = len(re.findall(r"<img\b", article))
        assert record["images"] == count, f"{record['page']}: printed images != images on page"
        expected += count
    assert expected > 0
    assert len(images) == expected


def test_solutions_are_gathered_after_each_chapter(flat, manifest):
    with_solutions = [r for r in manifest if r["solutions"]]
    assert len(with_solutions) >= 11, "every chapter has exercises with solutions"
    assert flat.count("Answers to the exercises") == len(with_solutions)
    assert flat.count("Solution to Exercise") >= sum(r["solutions"] for r in with_solutions)


def _visible_code_lines(stem):
    """The lines of a notebook's code cells that the book shows (hidden input is folded away
    on the web page and left out of the PDF)."""
    hidden = {"hide-input", "remove-input", "remove-cell"}
    cells = json.loads((ROOT / f"{stem}.ipynb").read_text())["cells"]
    return [
        line
        for cell in cells
        if cell["cell_type"] == "code" and not hidden & set(cell["metadata"].get("tags", []))
        for line in "".join(cell["source"]).splitlines()
        if line.strip()
    ]


def _compact(text):
    """White space and hyphens removed: a code line wrapped on paper reads as one (the text
    reader joins a line that ends in "-" to the next and drops the "-")."""
    return _plain("".join(text.split())).replace("-", "")


@pytest.fixture(scope="module")
def compact(text):
    return _compact(text)


@pytest.mark.parametrize(
    "stem", [s for s in _toc_files() if (ROOT / f"{s}.ipynb").exists() and "/homework/" not in s]
)
def test_every_line_of_code_is_printed_whole(compact, stem):
    """Paper cannot scroll: a code line wider than the printed column wraps instead of being
    cut at the margin, so each visible line of a chapter's code is in the PDF's text."""
    # An inline comment is printed in its place but the text reader may move it elsewhere in
    # the line's text, so the code before it is what is looked up.
    code = [line.split("  # ")[0] for line in _visible_code_lines(stem)]
    cut = [line for line in code if _compact(line) not in compact]
    assert cut == [], f"{stem}: code lines not printed whole: {cut[:3]}"
