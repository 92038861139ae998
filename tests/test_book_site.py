"""The built book as a reader gets it, opened from disk in headless Chromium with no network.

Run through `make book-test` (part of `make test`), which builds the book and passes
``--book-html=_build/html``; without that option these tests are skipped.  Screenshots of every
page are kept in ``_build/screenshots/``.
"""

import html.parser
import json
import pathlib
import re
import urllib.parse

import pytest
import yaml
from _chromium import Chromium, find_chromium

ROOT = pathlib.Path(__file__).resolve().parents[1]
CHAPTER = re.compile(r"^book/\d\d_[^/]+\.html$")
MATHJAX_SCRIPT = "_static/mathjax/tex-mml-chtml.js"


def _pages(site):
    """Every page a reader can reach: all HTML files except the copied assets and sources."""
    return sorted(
        p.relative_to(site).as_posix()
        for p in site.rglob("*.html")
        if p.relative_to(site).parts[0] not in ("_static", "_sources", "_images")
    )


def pytest_generate_tests(metafunc):
    if "page" in metafunc.fixturenames:
        option = metafunc.config.getoption("--book-html")
        pages = _pages(pathlib.Path(option)) if option else ["(book not built)"]
        metafunc.parametrize("page", pages)
    if "chapter" in metafunc.fixturenames:
        option = metafunc.config.getoption("--book-html")
        pages = _pages(pathlib.Path(option)) if option else []
        metafunc.parametrize("chapter", [p for p in pages if CHAPTER.match(p)] or ["(none)"])


@pytest.fixture(scope="session")
def book_html(request):
    site = pathlib.Path(request.config.getoption("--book-html")).resolve()
    assert (site / "index.html").is_file(), f"no built book at {site}: run `make book` first"
    return site


@pytest.fixture(scope="session")
def browser(book_html):
    executable = find_chromium()
    if executable is None:
        pytest.fail(
            "Chromium is not installed: `make book-test` installs Debian's chromium package "
            "when run as root; otherwise run `sudo apt-get install chromium`"
        )
    with Chromium(executable) as chromium:
        for domain in ("Page", "Runtime", "Log", "Network"):
            chromium.call(f"{domain}.enable")
        yield chromium


@pytest.fixture(scope="session")
def screenshots(book_html):
    folder = book_html.parent / "screenshots"
    folder.mkdir(exist_ok=True)
    for old in folder.glob("*.png"):
        old.unlink()  # only this run's pages
    return folder


# ------------------------------------------------------------------ what the page shows

# Waits for MathJax (when the page loads it), web fonts and images, then reports what a reader
# would see.  Text inside code and outputs is left alone: `$$` may be printed there on purpose.
INSPECT = r"""
(async () => {
  if (document.readyState !== "complete")
    await new Promise(r => window.addEventListener("load", r, { once: true }));
  const usesMathJax = !!document.querySelector('script[src*="mathjax"]');
  const t0 = Date.now();
  let mathjax = usesMathJax ? "loading" : "absent";
  while (usesMathJax && !(window.MathJax && MathJax.startup && MathJax.startup.promise)) {
    if (Date.now() - t0 > 30000) { mathjax = "never started"; break; }
    await new Promise(r => setTimeout(r, 50));
  }
  if (mathjax === "loading") { await MathJax.startup.promise; mathjax = "typeset"; }
  await document.fonts.ready;
  await Promise.all([...document.images].map(img => img.complete ? null :
    new Promise(r => { img.addEventListener("load", r); img.addEventListener("error", r); })));

  const raw = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const node = walker.currentNode, parent = node.parentElement;
    if (!parent || parent.closest("pre, code, script, style, textarea, mjx-container, .output"))
      continue;
    const text = node.textContent;
    if (/\$\$|\\[()[\]]|\\[a-zA-Z]+\{/.test(text)) raw.push(text.trim().slice(0, 160));
  }
  const mathSources = [...document.querySelectorAll("span.math, div.math")];
  return {
    location: location.href,
    mathjax,
    mathSources: mathSources.length,
    untypeset: mathSources.filter(m => !m.querySelector("mjx-container"))
                          .map(m => m.textContent.slice(0, 120)),
    containers: document.querySelectorAll("mjx-container").length,
    mathErrors: [...document.querySelectorAll("mjx-merror")]
                  .map(e => e.getAttribute("data-mjx-error") || e.textContent),
    raw,
    images: document.images.length,
    brokenImages: [...document.images].filter(i => !i.complete || i.naturalWidth === 0)
                                      .map(i => i.getAttribute("src")),
    links: [...document.querySelectorAll("a[href]")].map(a => a.href),
    openSolutions: [...document.querySelectorAll(".admonition.dropdown")]
      .filter(d => [...d.querySelectorAll(":scope > .admonition-title ~ *")]
                     .some(c => getComputedStyle(c).visibility !== "hidden" &&
                                c.getBoundingClientRect().height > 0))
      .map(d => (d.querySelector(".admonition-title") || d).textContent.trim().slice(0, 80)),
    dropdowns: document.querySelectorAll(".admonition.dropdown").length,
    h1Number: (document.querySelector("h1 .section-number") || {}).textContent || null,
    figures: [...document.querySelectorAll("figure")].map(f => ({
      id: f.id,
      caption: (f.querySelector("figcaption") || {}).textContent || "",
      number: !!f.querySelector("figcaption .caption-number"),
      image: [...f.querySelectorAll("img, svg")].some(e => !e.closest("button")),
    })),
    equationNumbers: [...document.querySelectorAll("div.math .eqno")].map(e => e.textContent),
    // sphinx-proof (theorem, definition, ...) and sphinx-exercise blocks; a bare proof has
    // no kind and no number.
    blocks: [...document.querySelectorAll(".proof.admonition, .exercise.admonition")].map(b => ({
      kind: [...b.classList].filter(c => !["proof", "admonition"].includes(c)).join(" "),
      number: (b.querySelector(":scope > .admonition-title .caption-number") || {})
                .textContent || "",
    })),
  };
})()
"""


class _Ids(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids = set()

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name == "id" or (tag == "a" and name == "name"):
                self.ids.add(value)


_ID_CACHE = {}


def _ids(path):
    if path not in _ID_CACHE:
        parser = _Ids()
        parser.feed(path.read_text(encoding="utf-8"))
        _ID_CACHE[path] = parser.ids
    return _ID_CACHE[path]


def _broken_links(links, site):
    broken = []
    for link in sorted(set(links)):
        url = urllib.parse.urlsplit(link)
        if url.scheme != "file":
            continue  # external links are not followed: the network is closed
        target = pathlib.Path(urllib.parse.unquote(url.path))
        if not target.exists():
            broken.append(f"{link} (no such file)")
        elif target.is_relative_to(site) and not target.is_file():
            broken.append(f"{link} (a folder)")
        elif url.fragment and target.suffix == ".html":
            if urllib.parse.unquote(url.fragment) not in _ids(target):
                broken.append(f"{link} (no anchor #{url.fragment})")
    return broken


def _problems_in_events(events):
    """Console errors, uncaught exceptions, failed loads and any request leaving the disk."""
    problems = []
    for event in events:
        method, params = event["method"], event.get("params", {})
        if method == "Runtime.exceptionThrown":
            details = params["exceptionDetails"]
            text = (details.get("exception") or {}).get("description") or details.get("text")
            problems.append(f"uncaught exception: {text}")
        elif method == "Runtime.consoleAPICalled" and params["type"] in ("error", "assert"):
            args = " ".join(str(a.get("value", a.get("description", ""))) for a in params["args"])
            problems.append(f"console.{params['type']}: {args}")
        elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
            problems.append(f"log: {params['entry']['text']} {params['entry'].get('url', '')}")
        elif method == "Network.loadingFailed" and not params.get("canceled"):
            problems.append(f"failed load: {params.get('errorText')}")
        elif method == "Network.requestWillBeSent":
            scheme = urllib.parse.urlsplit(params["request"]["url"]).scheme
            if scheme not in ("file", "data", "blob", "about"):
                problems.append(f"network request: {params['request']['url']}")
    return problems


_REPORTS = {}


def _visit(browser, site, page, screenshots):
    if page not in _REPORTS:
        redirect = 'http-equiv="refresh"' in (site / page).read_text(encoding="utf-8").lower()
        browser.open((site / page).as_uri())
        if redirect:
            browser.wait_for("Page.loadEventFired")  # the page it sends the reader to
        report = browser.evaluate(INSPECT, timeout=90)
        report["events"] = _problems_in_events(browser.events)
        browser.screenshot(screenshots / (page.replace("/", "__").removesuffix(".html") + ".png"))
        _REPORTS[page] = report
    return _REPORTS[page]


# ------------------------------------------------------------------ every page


def test_page_renders_offline(book_html, browser, screenshots, page):
    report = _visit(browser, book_html, page, screenshots)
    assert report["events"] == [], f"{page}: {report['events']}"
    assert report["brokenImages"] == [], f"{page}: images that did not load"
    assert _broken_links(report["links"], book_html) == [], f"{page}: broken internal links"
    assert (screenshots / (page.replace("/", "__").removesuffix(".html") + ".png")).is_file()


def test_math_is_typeset(book_html, browser, screenshots, page):
    report = _visit(browser, book_html, page, screenshots)
    if report["mathSources"]:
        assert report["mathjax"] == "typeset", f"{page}: MathJax {report['mathjax']}"
        assert report["containers"] >= report["mathSources"]
    assert report["untypeset"] == [], f"{page}: math left as source"
    assert report["mathErrors"] == [], f"{page}: MathJax errors"
    assert report["raw"] == [], f"{page}: TeX delimiters in the visible text"


def test_solutions_start_hidden(book_html, browser, screenshots, page):
    report = _visit(browser, book_html, page, screenshots)
    assert report["openSolutions"] == [], f"{page}: dropdowns shown before a click"


def test_front_page_leads_to_the_intro(book_html, browser, screenshots):
    report = _visit(browser, book_html, "index.html", screenshots)
    assert report["location"] == (book_html / "book/intro.html").as_uri()


# ------------------------------------------------------------------ chapters


def test_chapter_page(book_html, browser, screenshots, chapter):
    if chapter == "(none)":
        pytest.fail("no chapter page book/NN_*.html was built")
    report = _visit(browser, book_html, chapter, screenshots)
    # Numbered sections: the title carries the chapter's number from the table of contents.
    assert report["h1Number"] and report["h1Number"].strip().rstrip(".").isdigit(), chapter
    assert report["mathSources"] > 0, f"{chapter} has no math"
    for figure in report["figures"]:
        # A glued figure stored without its PNG renders as the text "<Figure size ...>".
        assert figure["image"], f"{chapter}: figure #{figure['id']} shows no image"
        assert figure["number"] and figure["caption"].strip(), f"{chapter}: {figure}"
    for block in report["blocks"]:
        if block["kind"]:  # "Theorem 5.1", "Definition 1.1", "Exercise 1.2"
            assert re.fullmatch(r"[A-Z]\w+ \d+\.\d+", block["number"].strip()), (chapter, block)
    for eqno in report["equationNumbers"]:
        assert re.fullmatch(r"\(\d+\.\d+\)", eqno.strip().replace("#", "")), (chapter, eqno)


def test_chapter_notebook_downloads(book_html, chapter):
    """The download button offers the very notebook in book/, outputs included."""
    if chapter == "(none)":
        pytest.fail("no chapter page book/NN_*.html was built")
    source = ROOT / chapter.replace(".html", ".ipynb")
    page = (book_html / chapter).read_text(encoding="utf-8")
    href = f'href="../_sources/{source.relative_to(ROOT).as_posix()}"'
    assert href in page, f"{chapter}: no download link to its .ipynb"
    copy = book_html / "_sources" / source.relative_to(ROOT)
    assert json.loads(copy.read_text()) == json.loads(source.read_text())


# ------------------------------------------------------------------ whole site, no browser

EXTERNAL = re.compile(r"^\s*(?:[a-z][a-z0-9+.-]*:)?//", re.IGNORECASE)


class _Refs(html.parser.HTMLParser):
    """Where a page loads code, styles and images from."""

    def __init__(self):
        super().__init__()
        self.loads = []
        self.inline = []
        self._in_script = False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "script":
            self._in_script = "src" not in attrs
            if "src" in attrs:
                self.loads.append(attrs["src"])
        elif tag == "link" and attrs.get("rel") in ("stylesheet", "preload", "modulepreload"):
            self.loads.append(attrs.get("href", ""))
        elif tag in ("img", "iframe", "embed", "source") and "src" in attrs:
            self.loads.append(attrs["src"])

    def handle_endtag(self, tag):
        if tag == "script":
            self._in_script = False

    def handle_data(self, data):
        if self._in_script:
            self.inline.append(data)


def _external_loads(text):
    refs = _Refs()
    refs.feed(text)
    bad = [u for u in refs.loads if EXTERNAL.match(u)]
    return bad + re.findall(r"""["'](?:https?:)?//[^"']+\.m?js\b""", "\n".join(refs.inline))


def test_no_page_loads_anything_from_the_network(book_html):
    offenders = {}
    for page in sorted(book_html.rglob("*.html")):
        bad = _external_loads(page.read_text(encoding="utf-8"))
        if bad:
            offenders[page.relative_to(book_html).as_posix()] = bad
    assert offenders == {}


def test_the_network_scan_sees_external_scripts():
    page = """<html><head>
    <script src="../_static/mathjax/tex-mml-chtml.js"></script>
    <link rel="stylesheet" href="_static/theme.css">
    <a href="https://example.org/">a link is fine</a>
    <script src="https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-mml-chtml.js"></script>
    <link rel="stylesheet" href="//fonts.example.org/font.css">
    <script>const URL = "https://unpkg.com/thebe@0.8.2/lib/index.js";</script>
    </head></html>"""
    assert _external_loads(page) == [
        "https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-mml-chtml.js",
        "//fonts.example.org/font.css",
        '"https://unpkg.com/thebe@0.8.2/lib/index.js',
    ]


def test_mathjax_is_served_by_the_book(book_html):
    assert (book_html / MATHJAX_SCRIPT).is_file()
    fonts = list((book_html / "_static/mathjax/output/chtml/fonts/woff-v2").glob("*.woff"))
    assert len(fonts) > 10
    with_math = [p for p in _pages(book_html) if 'class="math' in (book_html / p).read_text()]
    assert with_math, "no page has math"
    for page in with_math:
        assert MATHJAX_SCRIPT in (book_html / page).read_text(), page


def test_bibliography_lists_the_references(book_html):
    page = (book_html / "book/bibliography.html").read_text(encoding="utf-8")
    entries = re.findall(r'<div class="citation" id="id\d+"|<dt class="label" id="', page)
    assert len(entries) >= 20


def test_launch_buttons_follow_the_repository_setting(book_html, chapter):
    if chapter == "(none)":
        pytest.fail("no chapter page book/NN_*.html was built")
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    page = (book_html / chapter).read_text(encoding="utf-8")
    has_buttons = "mybinder.org" in page or "colab.research.google.com" in page
    assert has_buttons == bool((config.get("repository") or {}).get("url"))


def test_intro_course_map_links_every_chapter(book_html, chapter):
    if chapter == "(none)":
        pytest.fail("no chapter page book/NN_*.html was built")
    intro = (book_html / "book/intro.html").read_text(encoding="utf-8")
    course_map = intro[intro.index('class="course-map') :]
    assert f'href="{pathlib.PurePosixPath(chapter).name}"' in course_map
