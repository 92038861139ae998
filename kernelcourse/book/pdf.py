"""The book as one PDF: the built HTML pages printed by headless Chromium, in the book's order.

``python -m kernelcourse.book.pdf _build/html _build/html/kernelcourse.pdf`` (``make pdf``)
opens every page of the built book from disk, in the order of its table of contents, lets
MathJax typeset it, and prints it with Chromium's own PDF printer; poppler's ``pdfunite`` joins
the pages into one file. Printing the HTML the reader sees keeps what the LaTeX route of
Jupyter Book loses or needs a TeX installation for: the book's MathJax macros and numbered
equations, its SVG and PNG figures, its HTML result tables, theorem and exercise boxes. Nothing
is fetched from the network (the book serves its own MathJax).

For paper, each page is changed before it is printed: the exercises' solutions, folded behind a
button on the web, move open into an "Answers to the exercises" section at the end of their
chapter; code cells the web page folds away (``hide-input``) are left out, their outputs stay;
navigation, buttons and the table of contents beside the text are hidden (the theme's print
style). Each PDF page carries the chapter's title and its page number at the foot.

Needs Chromium and poppler-utils (``make pdf`` installs both from Debian when run as root).
"""

from __future__ import annotations

import argparse
import base64
import json
import pathlib
import shutil
import subprocess
import sys
import tempfile

from .chromium import Chromium, find_chromium

PAPER_WIDTH = 8.27  # A4, in inches
MARGIN = 0.6  # left and right, in inches

# Run in each page before printing; returns what the page holds so the caller can check it.
PREPARE = r"""
(async () => {
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
    await MathJax.startup.promise;
  }
  const article = document.querySelector("article.bd-article") || document.body;
  // Code the web page folds away stays out of the PDF; its outputs are printed.
  for (const d of article.querySelectorAll("details.hide.above-input, details.hide.below-input")) {
    d.remove();
  }
  // Solutions: open, and moved to the end of the chapter under their own heading.
  const solutions = [...article.querySelectorAll("div.solution")];
  if (solutions.length) {
    const section = document.createElement("section");
    section.className = "kc-answers";
    const h = document.createElement("h2");
    h.textContent = "Answers to the exercises";
    section.appendChild(h);
    for (const s of solutions) {
      s.classList.remove("dropdown", "toggle", "toggle-hidden");
      for (const el of s.querySelectorAll(".toggle-hidden")) el.classList.remove("toggle-hidden");
      for (const b of s.querySelectorAll("button.toggle-button")) b.remove();
      section.appendChild(s);
    }
    (article.querySelector("section") || article).appendChild(section);
  }
  for (const img of article.querySelectorAll("img")) img.loading = "eager";
  await Promise.all([...article.querySelectorAll("img")].map(
    img => img.complete ? null : new Promise(r => { img.onload = img.onerror = r; })));
  await document.fonts.ready;
  const style = document.createElement("style");
  style.textContent = `
    @media print {
      .bd-header, .bd-sidebar-primary, .bd-sidebar-secondary, .bd-header-article,
      .bd-footer, .bd-footer-article, .prev-next-area, .header-article-items,
      .toggle-button, .headerlink, #pst-back-to-top, .bd-footer-content {
        display: none !important;
      }
      .bd-main .bd-content .bd-article-container { max-width: 100% !important; }
      .bd-page-width { max-width: 100% !important; }
      div.solution { break-inside: auto; }
      figure, img, tr { break-inside: avoid; }
      h1, h2, h3 { break-after: avoid; }
      details > summary { list-style: none; }
      /* Paper cannot scroll: a code line wider than the column wraps, with no fade. */
      .bd-article pre { white-space: pre-wrap !important; overflow-wrap: anywhere; }
      .bd-article [data-kc-scroll] {
        mask-image: none !important;
        -webkit-mask-image: none !important;
      }
    }`;
  document.head.appendChild(style);
  // Chromium prints a blurred shadow as a bitmap: none on paper, so that the only images in
  // the PDF are the book's figures (inline, as the theme's own rules are !important).
  for (const el of document.querySelectorAll("*")) {
    if (getComputedStyle(el).boxShadow !== "none") {
      el.style.setProperty("box-shadow", "none", "important");
    }
  }
  const broken = [...article.querySelectorAll("img")].filter(i => !i.naturalWidth).map(i => i.src);
  return {
    title: (article.querySelector("h1") || {}).textContent || document.title,
    images: article.querySelectorAll("img").length,
    solutions: solutions.length,
    broken: broken,
  };
})()
"""

NAV = r"""
[...document.querySelectorAll("nav.bd-docs-nav a.reference.internal")]
  .map(a => a.href.split("#")[0])
"""

FOOTER = (
    '<div style="font-size:8px;width:100%;margin:0 12mm;display:flex;'
    'justify-content:space-between;color:#555">'
    '<span>{title}</span><span class="pageNumber"></span></div>'
)


class PdfError(RuntimeError):
    pass


def _require(tool, package):
    path = shutil.which(tool)
    if path is None:
        raise PdfError(f"{tool} is missing: install it first (Debian: apt-get install {package})")
    return path


def page_order(chromium, site):
    """The book's pages in table-of-contents order: the root page, then its navigation."""
    root = (site / "index.html").read_text()
    start = site / root.split("url=", 1)[1].split('"', 1)[0] if "url=" in root else site
    start = start if start.suffix == ".html" else site / "index.html"
    chromium.open(start.resolve().as_uri())
    urls = [start.resolve().as_uri()]
    for url in chromium.evaluate(NAV):
        if url not in urls:
            urls.append(url)
    return urls


def build_pdf(site, output, *, timeout=120.0):
    """Print the built book under ``site`` to ``output``; returns one record per page."""
    site = pathlib.Path(site).resolve()
    output = pathlib.Path(output).resolve()
    if not (site / "index.html").is_file():
        raise PdfError(f"no built book at {site}: run `make book` first")
    pdfunite = _require("pdfunite", "poppler-utils")
    executable = find_chromium()
    if executable is None:
        raise PdfError("Chromium is missing: install it first (Debian: apt-get install chromium)")
    records = []
    with tempfile.TemporaryDirectory(prefix="kernelcourse-pdf-") as tmp, Chromium(
        executable, timeout=timeout
    ) as chromium:
        chromium.call("Page.enable")
        chromium.call("Emulation.setEmulatedMedia", media="print")
        # Laid out at the printed column's width, so that MathJax breaks a wide equation
        # for the paper, not for a desktop screen.
        chromium.set_viewport(round((PAPER_WIDTH - 2 * MARGIN) * 96), 1100)
        parts = []
        for number, url in enumerate(page_order(chromium, site)):
            chromium.open(url, timeout=timeout)
            info = chromium.evaluate(PREPARE, timeout=timeout)
            if info["broken"]:
                raise PdfError(f"{url}: images that did not load: {info['broken']}")
            title = " ".join(info["title"].replace("#", "").split())
            data = chromium.call(
                "Page.printToPDF",
                timeout=timeout,
                paperWidth=PAPER_WIDTH,
                paperHeight=11.69,
                marginTop=0.6,
                marginBottom=0.7,
                marginLeft=MARGIN,
                marginRight=MARGIN,
                printBackground=True,
                displayHeaderFooter=True,
                headerTemplate="<span></span>",
                footerTemplate=FOOTER.format(title=_html_escape(title)),
            )["data"]
            part = pathlib.Path(tmp) / f"{number:03d}.pdf"
            part.write_bytes(base64.b64decode(data))
            parts.append(str(part))
            page = pathlib.Path(url.removeprefix("file://")).relative_to(site).as_posix()
            records.append({"page": page, "title": title, "images": info["images"],
                            "solutions": info["solutions"]})  # fmt: skip
        output.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run([pdfunite, *parts, str(output)], check=True)
    output.with_suffix(".json").write_text(json.dumps(records, indent=1, ensure_ascii=False))
    return records


def _html_escape(text):
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m kernelcourse.book.pdf", description=__doc__)
    parser.add_argument("site", help="the built HTML book, e.g. _build/html")
    parser.add_argument("output", help="the PDF to write, e.g. _build/html/kernelcourse.pdf")
    args = parser.parse_args(argv)
    try:
        records = build_pdf(args.site, args.output)
    except PdfError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print(f"{args.output}: {len(records)} pages of the book, "
          f"{sum(r['images'] for r in records)} images")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
