"""Sphinx extension for the kernelcourse book.

* Offline math: MathJax 4 and its font are served from the built site (``_static/mathjax``)
  instead of a CDN.  The pinned npm tarballs are fetched once with ``npm pack`` (npm's own
  registry and proxy settings apply), checked against their published sha512 integrity and
  unpacked into a cache folder outside the repository; later builds need no network.
  ``KERNELCOURSE_MATHJAX`` may name a folder holding the tarballs, or a ``node_modules``
  folder, to use instead.  Display equations wider than a phone's column break into lines.
* Inline math breaks between its bracketed parts, never inside one: every outermost bracket
  group or pair of bars of an inline formula is made one brace group as the page is read
  (``hold_brackets``), as a TeX author would, since MathJax, like TeX, may otherwise break
  "(K + λI)" after its "+" at a paragraph's line end.
* Launch buttons: one setting, ``repository.url`` in ``_config.yml``.  While it is empty the
  launch buttons are switched off, so builds never need it.
* ``{course-map}``: the intro's table of chapters and lectures; a chapter's row links to its page
  once ``book/NN_*`` exists and stays plain text before that, so a missing chapter never breaks
  a ``-W`` build.
* Bibliography: the pybtex style ``kernelcourse`` labels each entry exactly as the text cites it
  ("Rahimi and Recht, 2007", from sphinxcontrib-bibtex's own author-year template), sorts by
  that label and prints every DOI, URL and arXiv number as a link.
* Figures: a notebook figure carries the size it was drawn at (its PNG holds twice as many
  pixels, for sharpness) as ``width``/``height`` in its output metadata, which docutils writes as
  a fixed inline ``style="width: ...px"``.  The book writes that size as the image's ``width``
  and ``height`` attributes instead: the browser keeps the aspect ratio from them and
  ``kernelcourse.css`` lets the figure shrink to the column (``max-width: 100%``), so a figure is
  shown at its drawn size where the column holds it and scaled down, whole, on a phone.
* Scroll cues: ``kernelcourse_scroll.js`` marks every code block, table and display equation
  wider than the column, and ``kernelcourse.css`` fades its cut edge, so a reader sees that it
  scrolls sideways (phones hide scroll bars).
* Card tables: a Markdown table inside ``:::{div} kc-cards`` stacks on a phone, one entry per
  row, each cell after the first labelled with its column's header (``kernelcourse_cards.js``
  copies the headers into ``data-label``; ``kernelcourse.css`` lays the entries out).
* Search: the search language ``en_kernelcourse`` is English (Porter stemmer, English stop words)
  with diacritics and the German transliterations "oe"/"ae" folded on both sides, in the index
  that Python writes and in the query that ``searchtools.js`` stems, so "Nystrom", "Nystroem" and
  "Nyström" are one word.  ``kernelcourse_search.js`` drops math from the result summaries (they
  are built from the page source, where math is still raw TeX) and finds the folded word there.
"""

from __future__ import annotations

import base64
import hashlib
import os
import pathlib
import re
import shutil
import subprocess
import tarfile
import tempfile
import types
import unicodedata

import pybtex.plugin
from docutils import nodes
from docutils.statemachine import StringList
from pybtex.style.formatting.unsrt import Style as UnsrtStyle
from pybtex.style.labels import BaseLabelStyle
from pybtex.style.sorting import BaseSortingStyle
from sphinx.errors import ExtensionError
from sphinx.search.en import SearchEnglish, js_porter_stemmer
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective
from sphinxcontrib.bibtex.style.referencing import PersonStyle
from sphinxcontrib.bibtex.style.template import join as bib_join
from sphinxcontrib.bibtex.style.template import year as bib_year

logger = logging.getLogger(__name__)

MATHJAX_VERSION = "4.1.3"
FONT_PACKAGE = "@mathjax/mathjax-newcm-font"
# The npm packages the book's MathJax comes from, each with the registry's `dist.integrity`
# of that version's tarball: a changed tarball is refused.  MathJax 4 keeps its default font
# (New Computer Modern) in a package of its own, loaded by the page as it needs the glyphs.
MATHJAX_PACKAGES = {
    "mathjax": (
        "sha512-"
        "BN/8Pkgn7G1pIDYJqd9md+JHsE/jydSYbyOZnSdSA0WziuVO8mRxdYiWFumkVVly/8U+hm9DpIIoWuvySverzw=="
    ),
    FONT_PACKAGE: (
        "sha512-"
        "gzAB3dFHilHX1l5x2xUqRL+1jDQt3Fyza1DkEMVXWC4E8SvsGdlgEza47HYi2WhVcgfkvf4zgUGzuhbq3Pjlew=="
    ),
}
# What the page loads (tex-mml-chtml) and what it may load later: TeX extensions found by
# autoload, the CHTML output, the menu and its accessibility tools.  The other bundles (SVG
# output, the node entry points) are never requested by the book.
MATHJAX_PARTS = (
    "tex-mml-chtml.js",
    "core.js",
    "loader.js",
    "startup.js",
    "input",
    "output",
    "ui",
    "a11y",
    "sre",
)
# The font's CHTML part (web fonts and the glyph data loaded on demand), served at
# ``mathjax/fonts/mathjax-newcm-font/chtml``: MATHJAX_CONFIG's ``fonts`` path points at
# ``mathjax/fonts``, where MathJax looks for the font package by its name.
FONT_PARTS = ("chtml",)
FONTS = "fonts"
FONT_FOLDER = f"{FONTS}/{FONT_PACKAGE.split('/')[-1]}"
STATIC_NAME = "mathjax"

# Merged into Sphinx's ``mathjax3_config`` (MathJax 4 reads the same ``window.MathJax``):
# * fonts from the book's own copy, not from the CDN that MathJax 4 names by default;
# * a display equation wider than the column (on a phone) breaks into lines at its
#   operators instead of scrolling sideways; inline math breaks with the paragraph;
# * the formula's MathML for screen readers, as MathJax 3 gave by default, instead of the
#   generated speech: that runs in a web worker, which a page opened from disk (file://) may
#   not start.
MATHJAX_CONFIG = {
    "loader": {"paths": {"fonts": f"[mathjax]/{FONTS}"}},
    "output": {"displayOverflow": "linebreak", "linebreaks": {"inline": True}},
    "options": {
        "menuOptions": {
            "settings": {"enrich": False, "speech": False, "braille": False, "assistiveMml": True}
        }
    },
}


# --------------------------------------------------------------------------- MathJax


def _cache_dir():
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return pathlib.Path(base) / "kernelcourse"


def _tarball_name(package):
    """The file ``npm pack`` writes for ``package`` at MATHJAX_VERSION."""
    return f"{package.lstrip('@').replace('/', '-')}-{MATHJAX_VERSION}.tgz"


def _integrity_ok(path, package="mathjax"):
    algo, _, expected = MATHJAX_PACKAGES[package].partition("-")
    digest = hashlib.new(algo, pathlib.Path(path).read_bytes()).digest()
    return base64.b64encode(digest).decode() == expected


def _fetch_tarball(package, dest):
    """Fetch ``package`` at MATHJAX_VERSION to ``dest`` with ``npm pack``."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    errors = []
    npm = shutil.which("npm")
    if npm:
        with tempfile.TemporaryDirectory(dir=dest.parent) as tmp:
            try:
                proc = subprocess.run(
                    [npm, "pack", f"{package}@{MATHJAX_VERSION}", "--pack-destination", tmp],
                    capture_output=True,
                    text=True,
                    cwd=tmp,
                    timeout=300,
                )
                got = pathlib.Path(tmp) / _tarball_name(package)
                if proc.returncode == 0 and got.is_file():
                    os.replace(got, dest)
                    return
                errors.append(f"npm pack: {proc.stderr.strip()[-500:]}")
            except (OSError, subprocess.TimeoutExpired) as exc:
                errors.append(f"npm pack: {exc}")
    else:
        errors.append("npm is not installed (install Node.js and npm)")
    raise ExtensionError(
        f"could not fetch {package} {MATHJAX_VERSION} ({'; '.join(errors)}). Fetch it once "
        "with network access, or set KERNELCOURSE_MATHJAX to a folder holding "
        f"{' and '.join(_tarball_name(p) for p in MATHJAX_PACKAGES)}, or to a node_modules "
        f"folder where `npm install mathjax@{MATHJAX_VERSION}` put MathJax and its font."
    )


def _checked_tarball(package, folder, may_fetch):
    """The tarball of ``package`` in ``folder``, fetched first if allowed and missing; one
    that does not match its published sha512 is refused."""
    tarball = folder / _tarball_name(package)
    if not tarball.is_file():
        if not may_fetch:
            raise ExtensionError(f"KERNELCOURSE_MATHJAX: {tarball} does not exist")
        logger.info(f"fetching {package} {MATHJAX_VERSION} with npm pack")
        _fetch_tarball(package, tarball)
        if not _integrity_ok(tarball, package):
            tarball.unlink()
            raise ExtensionError(
                f"the fetched {package}@{MATHJAX_VERSION} does not match its published "
                "sha512; not used"
            )
    if not _integrity_ok(tarball, package):
        raise ExtensionError(
            f"{tarball} does not match the sha512 of {package}@{MATHJAX_VERSION}; "
            "delete it to fetch it again"
        )
    return tarball


def _unpack(tarball, dest):
    with tarfile.open(tarball) as tar:
        members = [m for m in tar.getmembers() if m.name.startswith("package/")]
        tar.extractall(dest, members=members, filter="data")
    return dest / "package"


def _copy_parts(source, parts, target):
    for part in parts:
        src = source / part
        if not src.exists():
            raise ExtensionError(f"MathJax folder {source} lacks {part}")
        dst = target / part
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, dst)
        else:
            shutil.copy2(src, dst)


def mathjax_static_dir():
    """A folder whose ``mathjax/`` subfolder holds the MathJax files the book serves.

    ``KERNELCOURSE_MATHJAX`` may name a folder that holds the two tarballs (checked as fetched
    ones are) or a ``node_modules`` folder with ``mathjax`` and ``@mathjax/mathjax-newcm-font``
    in it (used as it is).  Built once per MathJax source and cached; an interrupted run leaves
    no half-filled folder behind because the result is renamed into place only when complete.
    """
    source = os.environ.get("KERNELCOURSE_MATHJAX")
    cache = _cache_dir()
    modules = None
    if source:
        folder = pathlib.Path(source).resolve()
        if not folder.is_dir():
            raise ExtensionError(f"KERNELCOURSE_MATHJAX={source} is not a folder")
        if (folder / "mathjax" / MATHJAX_PARTS[0]).is_file():
            modules = folder
            key = "local-" + hashlib.sha256(str(folder).encode()).hexdigest()[:12]
        else:
            key = f"mathjax-{MATHJAX_VERSION}"
    else:
        folder = cache
        key = f"mathjax-{MATHJAX_VERSION}"
    static = cache / f"{key}-static"
    if (static / STATIC_NAME / MATHJAX_PARTS[0]).is_file():
        return static

    cache.mkdir(parents=True, exist_ok=True)
    work = pathlib.Path(tempfile.mkdtemp(dir=cache, prefix=".mathjax-"))
    try:
        if modules is not None:
            # npm installs a package at its name, the scope a folder of its own
            core, font = (modules.joinpath(*package.split("/")) for package in MATHJAX_PACKAGES)
        else:
            core, font = (
                _unpack(_checked_tarball(package, folder, not source), work / name)
                for name, package in zip(("core", "font"), MATHJAX_PACKAGES, strict=True)
            )
        out = work / "static" / STATIC_NAME
        _copy_parts(core, MATHJAX_PARTS, out)
        _copy_parts(font, FONT_PARTS, out / FONT_FOLDER)
        for licence, dest in ((core / "LICENSE", out), (font / "LICENSE", out / FONT_FOLDER)):
            if licence.is_file():
                shutil.copy2(licence, dest / "LICENSE")
        try:
            os.replace(work / "static", static)
        except OSError:
            # Another build finished first; its result is the same.
            if not (static / STATIC_NAME / MATHJAX_PARTS[0]).is_file():
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return static


def _merged(base, extra):
    """``base`` updated by ``extra``, nested dictionaries merged key by key."""
    out = dict(base or {})
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merged(out[key], value)
        else:
            out[key] = value
    return out


def _is_remote(url):
    return bool(re.match(r"^([a-z][a-z0-9+.-]*:)?//", url, re.IGNORECASE))


def setup_mathjax(app):
    if app.builder.format != "html":
        return
    if _is_remote(app.config.mathjax_path):
        raise ExtensionError(
            f"mathjax_path = {app.config.mathjax_path!r} loads MathJax from the network; the "
            f"book serves it itself: set mathjax_path to '{STATIC_NAME}/{MATHJAX_PARTS[0]}'"
        )
    app.config.html_static_path = [*app.config.html_static_path, str(mathjax_static_dir())]


def configure_mathjax(app, config):
    """MATHJAX_CONFIG into ``mathjax3_config`` while the configuration is read, so that a
    change to it rebuilds every page (Sphinx compares the configuration after this event)."""
    config.mathjax3_config = _merged(config.mathjax3_config, MATHJAX_CONFIG)


# --------------------------------------------------------------------------- launch buttons


REPOSITORY_ENV = "KERNELCOURSE_REPOSITORY_URL"


def configure_launch_buttons(app, config):
    """Launch buttons only when the book's public repository is known: the theme needs one to
    build Binder/Colab/JupyterHub links and fails without one. The environment variable
    ``KERNELCOURSE_REPOSITORY_URL`` at build time wins over ``repository.url`` in
    ``_config.yml``, so an instructor publishing the book never edits a file."""
    options = config.html_theme_options
    from_env = os.environ.get(REPOSITORY_ENV, "").strip()
    if from_env:
        options["repository_url"] = from_env
    if not str(options.get("repository_url") or "").strip():
        options.pop("launch_buttons", None)
        options.pop("repository_url", None)


def _thebe_enabled(config):
    launch = config.html_theme_options.get("launch_buttons") or {}
    return bool(launch.get("thebe"))


def _is_thebe_asset(asset):
    name = getattr(asset, "filename", None) or str(asset)
    body = (getattr(asset, "attributes", None) or {}).get("body", "")
    return "sphinx-thebe" in name or "THEBE_JS_URL" in body


def drop_thebe_assets(app, pagename, templatename, context, doctree):
    """Jupyter Book always loads sphinx-thebe, whose page script names a CDN copy of thebe.
    Live code is off here (launch_buttons.thebe), so its assets are left out of the pages."""
    if _thebe_enabled(app.config):
        return
    for key in ("script_files", "css_files"):
        if key in context:
            context[key] = [a for a in context[key] if not _is_thebe_asset(a)]


def drop_thebe_config(app, doctree, docname):
    if _thebe_enabled(app.config):
        return
    for node in list(doctree.findall(nodes.raw)):
        text = node.astext()
        if "text/x-thebe-config" in text or "<script>kernelName = " in text:
            node.parent.remove(node)


# --------------------------------------------------------------------------- course map


class CourseMap(SphinxDirective):
    """Rows ``N | topic | lectures`` become the course-map table; a row links to the chapter
    ``book/NN_*`` when that document exists."""

    has_content = True

    def run(self):
        lines = ["| Chapter | Topic | Lectures |", "|---|---|---|"]
        for number, line in enumerate(self.content, start=1):
            cells = [c.strip() for c in line.split("|")]
            if len(cells) != 3 or not cells[0].isdigit():
                raise self.error(f"course-map row {number}: expected 'N | topic | lectures'")
            chapter, topic, lectures = cells
            prefix = f"book/{int(chapter):02d}_"
            docs = sorted(d for d in self.env.found_docs if d.startswith(prefix))
            if docs:
                target = "/" + docs[0]
                chapter = f"{{doc}}`{chapter} <{target}>`"
                if not set(topic) & set("$`<>"):
                    topic = f"{{doc}}`{topic} <{target}>`"
            lines.append(f"| {chapter} | {topic} | {lectures} |")
        container = nodes.container(classes=["course-map"])
        self.state.nested_parse(StringList(lines, source=self.env.docname), 0, container)
        return [container]


# --------------------------------------------------------------------------- bibliography

BIBTEX_STYLE = "kernelcourse"
# The person style of sphinxcontrib-bibtex's author_year references ("A and B", "A et al.").
_PERSON = PersonStyle()
_LABEL_TEMPLATE = bib_join(sep=", ")[_PERSON.author_or_editor_or_title(full=False), bib_year]


def citation_label(entry):
    """The text an author-year citation shows for ``entry``, e.g. "Yang et al., 2012".

    Rendered with the very template of ``bibtex_reference_style = author_year`` (parenthetical
    form, without brackets), so the list and the text cannot disagree."""
    data = {"entry": entry, "style": types.SimpleNamespace(person=_PERSON)}
    return _LABEL_TEMPLATE.format_data(data).render_as("text")


class AuthorYearLabels(BaseLabelStyle):
    def format_labels(self, sorted_entries):
        for entry in sorted_entries:
            yield citation_label(entry)


class LabelSorting(BaseSortingStyle):
    """In the order a reader looks an entry up: by its label, then by title."""

    def sorting_key(self, entry):
        label = unicodedata.normalize("NFKD", citation_label(entry)).casefold()
        return (label, entry.fields.get("title", "").casefold())


class KernelcourseStyle(UnsrtStyle):
    default_label_style = AuthorYearLabels
    default_sorting_style = LabelSorting


# --------------------------------------------------------------------------- search

SEARCH_LANGUAGE = "en_kernelcourse"
# The same folding in Python (index) and JavaScript (query); keep the two in step.
_CONSONANT = "[b-df-hj-np-tv-z]"
_TRANSLITERATION = re.compile(f"({_CONSONANT})([ao])e(?={_CONSONANT})")
_LIGATURES = {"ß": "ss", "æ": "ae", "œ": "oe", "ø": "o", "đ": "d", "ł": "l", "ı": "i"}


def fold(word):
    """Lower case without diacritics, "oe"/"ae" between consonants read as "o"/"a".

    "Nyström", "Nystrom" and "Nystroem" all give "nystrom", "Rätsch" and "Raetsch" "ratsch".
    """
    word = word.lower()
    word = "".join(_LIGATURES.get(c, c) for c in word)
    word = "".join(c for c in unicodedata.normalize("NFKD", word) if not unicodedata.combining(c))
    return _TRANSLITERATION.sub(r"\1\2", word)


JS_FOLD = r"""
const kernelcourseFold = (word) => {
  const ligatures = {"ß": "ss", "æ": "ae", "œ": "oe", "ø": "o", "đ": "d", "ł": "l", "ı": "i"};
  word = [...word.toLowerCase()].map((c) => ligatures[c] || c).join("");
  return word.normalize("NFKD").replace(/\p{M}/gu, "")
             .replace(/([b-df-hj-np-tv-z])([ao])e(?=[b-df-hj-np-tv-z])/g, "$1$2");
};
"""


class SearchEnglishFolded(SearchEnglish):
    """English search whose stemmer first folds diacritics and transliterations."""

    lang = SEARCH_LANGUAGE
    language_name = "English (diacritics folded)"
    js_stemmer_code = (
        js_porter_stemmer.replace("var Stemmer = function", "var PorterStemmer = function")
        + JS_FOLD
        + """
var Stemmer = function() {
  const porter = new PorterStemmer();
  this.stemWord = (word) => porter.stemWord(kernelcourseFold(word));
};
"""
    )

    def stem(self, word):
        return super().stem(fold(word))


def configure_search(app, config):
    """The book's search language, unless the configuration names another one."""
    if not config.html_search_language and (config.language or "en").startswith("en"):
        config.html_search_language = SEARCH_LANGUAGE


# --------------------------------------------------------------------------- inline math

# MathJax breaks a paragraph's inline formula where TeX would, after a relation, a binary
# operator or a comma, and, as in TeX, also inside a bracket: "(K̃ + λI)⁻¹" could end one
# line at "(K̃" and start the next at "+ λI)⁻¹". TeX's remedy is a brace group, which MathJax
# sets as one unbreakable atom; the book applies it to every outermost bracket or pair of
# bars in inline math, so that a formula breaks only between its bracketed parts. The
# group takes the closing bracket's scripts with it, so that a superscript sits where it
# sat. Display math is left alone: MathJax breaks it by its own rules.
_TEX_TOKEN = re.compile(r"\\[A-Za-z]+\*?|\\.|\s+|.", re.DOTALL)
_OPENERS = {"(", "[", r"\{", r"\lbrace", r"\langle", r"\lvert", r"\lVert", r"\lfloor", r"\lceil"}
_CLOSERS = {")", "]", r"\}", r"\rbrace", r"\rangle", r"\rvert", r"\rVert", r"\rfloor", r"\rceil"}
_BARS = {"|", r"\|", r"\vert", r"\Vert"}
_BAR_NAMES = {r"\vert": "|", r"\Vert": r"\|"}
_SIZES = re.compile(r"\\[bB]igg?([lrm]?)$")
# Commands whose "[" opens an optional argument, not a bracket.
_OPTIONAL_ARGUMENT = {r"\sqrt", r"\xrightarrow", r"\xleftarrow", r"\\"}


def _brace_group_end(tokens, i):
    """The index after the brace group that opens at ``tokens[i] == "{"``; None when it is
    not closed."""
    depth = 0
    for j in range(i, len(tokens)):
        depth += {"{": 1, "}": -1}.get(tokens[j], 0)
        if depth == 0:
            return j + 1
    return None


def _items(tokens):
    """The formula's top-level items, as (kind, start, end) token spans: kind is "open",
    "close", "bar", "left", "right" or "other" (a brace group is one item). None where the
    formula's braces do not balance or it holds an environment."""
    items, i = [], 0
    while i < len(tokens):
        t = tokens[i]
        if t == "}" or t == r"\begin":
            return None
        if t == "{":
            end = _brace_group_end(tokens, i)
            if end is None:
                return None
            items.append(("other", i, end))
            i = end
            continue
        if t in (r"\left", r"\right") or _SIZES.match(t):
            j = i + 1
            while j < len(tokens) and tokens[j].isspace():
                j += 1
            if j == len(tokens):
                return None
            delimiter = tokens[j]
            if t == r"\left":
                kind = "left"
            elif t == r"\right":
                kind = "right"
            else:
                side = _SIZES.match(t).group(1)
                kind = {"l": "open", "r": "close"}.get(side) or _delimiter_kind(delimiter)
            items.append((kind, i, j + 1))
            i = j + 1
            continue
        if t == "[" and items and items[-1][0] == "other":
            previous = tokens[items[-1][1]]
            if previous in _OPTIONAL_ARGUMENT:
                depth, j = 0, i
                while j < len(tokens):
                    depth += {"[": 1, "]": -1}.get(tokens[j], 0)
                    if depth == 0:
                        break
                    j += 1
                if j == len(tokens):
                    return None
                items.append(("other", i, j + 1))
                i = j + 1
                continue
        items.append((_delimiter_kind(t), i, i + 1))
        i += 1
    return items


def _delimiter_kind(token):
    if token in _OPENERS:
        return "open"
    if token in _CLOSERS:
        return "close"
    if token in _BARS:
        return "bar"
    return "other"


def _outer_groups(tokens, items):
    """The (first item, last item) of every outermost bracket group or pair of bars, and
    whether it is a ``\\left ... \\right`` group; None where the brackets do not pair."""
    groups, stack = [], []
    for k, (kind, _, end) in enumerate(items):
        if kind in ("open", "left"):
            stack.append((kind, k, None))
        elif kind in ("close", "right"):
            while stack and stack[-1][0] == "bar":  # a bar inside brackets: "p(x | y)"
                stack.pop()
            if not stack:
                return None
            opened, start, _ = stack.pop()
            if (opened == "left") != (kind == "right"):
                return None
            if not stack:
                groups.append((start, k, opened == "left"))
        elif kind == "bar":
            bar = _BAR_NAMES.get(tokens[end - 1], tokens[end - 1])
            if stack and stack[-1][0] == "bar" and stack[-1][2] == bar:
                _, start, _ = stack.pop()
                if not stack:
                    groups.append((start, k, False))
            else:
                stack.append(("bar", k, bar))
    return None if stack else groups


def _scripts_end(tokens, i):
    """The index after the scripts and primes that follow ``tokens[:i]``."""
    while True:
        j = i
        while j < len(tokens) and tokens[j].isspace():
            j += 1
        if j < len(tokens) and tokens[j] == "'":
            i = j + 1
            continue
        if j < len(tokens) and tokens[j] in ("^", "_"):
            k = j + 1
            while k < len(tokens) and tokens[k].isspace():
                k += 1
            if k == len(tokens):
                return i
            if tokens[k] == "{":
                end = _brace_group_end(tokens, k)
                if end is None:
                    return i
                i = end
            else:
                i = k + 1
            continue
        return i


def hold_brackets(tex):
    """Inline TeX with each outermost bracket group (and pair of bars) that could break
    inside held together by braces: ``(K + \\lambda I)^{-1}`` becomes
    ``{(K + \\lambda I)^{-1}}``. A group of one symbol, and ``\\left ... \\right`` (one
    atom already) are left as they are; a formula whose braces or brackets do not pair,
    or that holds an environment, is returned unchanged."""
    tokens = _TEX_TOKEN.findall(tex)
    items = _items(tokens)
    if not items:
        return tex
    groups = _outer_groups(tokens, items)
    if not groups:
        return tex
    inserts = {}
    for first, last, is_left in groups:
        start, inner_start = items[first][1], items[first][2]
        inner_end, end = items[last][1], items[last][2]
        inner = [t for t in tokens[inner_start:inner_end] if not t.isspace()]
        if is_left or len(inner) < 2:
            continue
        end = _scripts_end(tokens, end)
        inserts[start] = inserts.get(start, "") + "{"
        inserts[end] = "}" + inserts.get(end, "")
    if not inserts:
        return tex
    return "".join(inserts.get(i, "") + t for i, t in enumerate(tokens)) + inserts.get(
        len(tokens), ""
    )


def hold_inline_brackets(app, doctree):
    """:func:`hold_brackets` on every inline formula of a page as it is read."""
    for node in doctree.findall(nodes.math):
        tex = node.astext()
        held = hold_brackets(tex)
        if held != tex:
            node.children = [nodes.Text(held)]


# --------------------------------------------------------------------------- figures

_PX = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(px)?\s*$")


def _pixels(value):
    """``"651"`` or ``"651px"`` as a whole number of pixels; None for any other length."""
    match = _PX.match(str(value)) if value is not None else None
    return round(float(match.group(1))) if match else None


def visit_image(self, node):
    """Write a pixel-sized image with ``width``/``height`` attributes, not an inline style.

    The attributes give the browser the figure's drawn size and aspect ratio; unlike an inline
    style they yield to the stylesheet, which caps the width at the column's.  Images sized in
    other units (``80%``, ``em``) keep docutils' inline style.
    """
    width, height = _pixels(node.get("width")), _pixels(node.get("height"))
    if width is None or (height is None and "height" in node):
        type(self).visit_image(self, node)
        return
    saved = {key: node.attributes.pop(key) for key in ("width", "height") if key in node}
    try:
        start = len(self.body)
        type(self).visit_image(self, node)
    finally:
        node.attributes.update(saved)
    size = f' width="{width}"' + (f' height="{height}"' if height is not None else "")
    for i in range(start, len(self.body)):
        if self.body[i].startswith("<img "):
            self.body[i] = "<img" + size + self.body[i][len("<img") :]
            break


def depart_image(self, node):
    type(self).depart_image(self, node)


STATIC_DIR = pathlib.Path(__file__).resolve().parent / "static"


def add_static(app):
    """The book's own stylesheet (result tables, figures) and search script from
    ``book/_ext/static``."""
    app.config.html_static_path = [*app.config.html_static_path, str(STATIC_DIR)]


def setup(app):
    app.connect("config-inited", configure_launch_buttons)
    app.connect("config-inited", configure_search)
    app.connect("config-inited", configure_mathjax)
    app.connect("builder-inited", add_static)
    app.add_css_file("kernelcourse.css")
    app.add_js_file("kernelcourse_search.js")
    app.add_js_file("kernelcourse_scroll.js")
    app.add_js_file("kernelcourse_cards.js")
    app.add_node(nodes.image, override=True, html=(visit_image, depart_image))
    app.add_search_language(SearchEnglishFolded)
    pybtex.plugin.register_plugin("pybtex.style.formatting", BIBTEX_STYLE, KernelcourseStyle)
    app.connect("builder-inited", setup_mathjax)
    # After sphinx-thebe's own handlers (default priority 500).
    app.connect("doctree-resolved", drop_thebe_config, priority=900)
    app.connect("html-page-context", drop_thebe_assets, priority=900)
    app.add_directive("course-map", CourseMap)
    app.connect("doctree-read", hold_inline_brackets)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
