"""The book's configuration as Sphinx receives it: offline MathJax and the launch setting."""

import importlib.util
import json
import pathlib
import re
import shutil
import subprocess
import types

import pytest
import yaml

ROOT = pathlib.Path(__file__).resolve().parents[1]

jb_config = pytest.importorskip("jupyter_book.config", reason="needs the book extra")


def _extension():
    spec = importlib.util.spec_from_file_location(
        "kernelcourse_book", ROOT / "book/_ext/kernelcourse_book.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _sphinx_config(**repository):
    user = yaml.safe_load((ROOT / "_config.yml").read_text())
    user["repository"] = {**user["repository"], **repository}
    config, _ = jb_config.get_final_config(
        user_yaml=user, cli_config={"latex_individualpages": False}, sourcedir=ROOT
    )
    return config


def _after_extension(config):
    sphinx = types.SimpleNamespace(html_theme_options=config["html_theme_options"])
    _extension().configure_launch_buttons(None, sphinx)
    return sphinx.html_theme_options


def test_mathjax_is_loaded_from_the_book_not_a_cdn():
    config = _sphinx_config()
    ext = _extension()
    assert config["mathjax_path"] == f"{ext.STATIC_NAME}/{ext.MATHJAX_PARTS[0]}"
    assert not ext._is_remote(config["mathjax_path"])
    assert ext._is_remote("https://cdn.jsdelivr.net/npm/mathjax@4/tex-mml-chtml.js")
    assert ext._is_remote("//cdn.example.org/mathjax.js")
    assert "kernelcourse_book" in config["extensions"]


def test_without_a_repository_there_are_no_launch_buttons():
    options = _after_extension(_sphinx_config())
    assert "launch_buttons" not in options
    assert "repository_url" not in options


def test_one_repository_url_switches_the_launch_buttons_on():
    url = "https://github.com/example/kernelcourse"
    options = _after_extension(_sphinx_config(url=url))
    assert options["repository_url"] == url
    launch = options["launch_buttons"]
    assert launch["binderhub_url"] == "https://mybinder.org"
    assert launch["colab_url"] == "https://colab.research.google.com"
    assert "jupyterhub_url" in launch  # a JupyterHub button needs the hub's own address too


def test_the_repository_url_can_come_from_the_environment(monkeypatch):
    ext = _extension()
    url = "https://github.com/example/kernelcourse"
    monkeypatch.setenv(ext.REPOSITORY_ENV, url)
    options = _after_extension(_sphinx_config())
    assert options["repository_url"] == url
    assert options["launch_buttons"]["colab_url"] == "https://colab.research.google.com"
    monkeypatch.delenv(ext.REPOSITORY_ENV)
    assert "launch_buttons" not in _after_extension(_sphinx_config())


def test_a_changed_mathjax_tarball_is_refused(tmp_path):
    ext = _extension()
    for package in ext.MATHJAX_PACKAGES:
        fake = tmp_path / ext._tarball_name(package)
        fake.write_bytes(b"not the published tarball")
        assert not ext._integrity_ok(fake, package)
        with pytest.raises(ext.ExtensionError, match="does not match the sha512"):
            ext._checked_tarball(package, tmp_path, may_fetch=False)
    assert ext._tarball_name("@mathjax/mathjax-newcm-font").startswith("mathjax-mathjax-newcm")


def test_a_missing_local_tarball_is_named(tmp_path):
    ext = _extension()
    with pytest.raises(ext.ExtensionError, match=r"mathjax-4\.\d+\.\d+\.tgz does not exist"):
        ext._checked_tarball("mathjax", tmp_path, may_fetch=False)


def test_the_mathjax_settings_join_the_ones_myst_sets():
    """Fonts from the book's copy, wide display equations broken into lines and MathML for
    screen readers; merged key by key, so MyST's processHtmlClass is kept."""
    ext = _extension()
    myst = {"options": {"processHtmlClass": "tex2jax_process|mathjax_process|math"}}
    merged = ext._merged(myst, ext.MATHJAX_CONFIG)
    assert merged["options"]["processHtmlClass"] == myst["options"]["processHtmlClass"]
    assert merged["options"]["menuOptions"]["settings"]["assistiveMml"] is True
    assert merged["output"]["displayOverflow"] == "linebreak"
    assert not ext._is_remote(merged["loader"]["paths"]["fonts"])
    assert merged["loader"]["paths"]["fonts"].startswith("[mathjax]/")
    assert myst == {"options": {"processHtmlClass": "tex2jax_process|mathjax_process|math"}}


# --------------------------------------------------------------------------- search

SPELLINGS = {
    "nystrom": ["Nyström", "Nystrom", "Nystroem", "NYSTRÖM", "nyström"],
    "ratsch": ["Rätsch", "Raetsch", "Ratsch"],
    "scholkopf": ["Schölkopf", "Schoelkopf", "Scholkopf"],
    "matern": ["Matérn", "Matern"],
}


def test_search_folds_diacritics_and_transliterations():
    ext = _extension()
    for folded, words in SPELLINGS.items():
        assert {ext.fold(w) for w in words} == {folded}
    # English words keep their stems; folding is applied alike to index and query
    language = ext.SearchEnglishFolded({})
    assert language.stem("kernels") == language.stem("kernel") == "kernel"
    assert len({language.stem(w) for w in ("Nyström", "Nystroem", "nystrom")}) == 1
    assert language.stem("coefficients") == language.stem("coefficient")


def test_the_book_uses_the_folding_search_language():
    config = types.SimpleNamespace(html_search_language=None, language="en")
    ext = _extension()
    ext.configure_search(None, config)
    assert config.html_search_language == ext.SEARCH_LANGUAGE
    config = types.SimpleNamespace(html_search_language="de", language="en")
    ext.configure_search(None, config)
    assert config.html_search_language == "de"  # an explicit choice is kept


NODE = shutil.which("node")


@pytest.mark.skipif(NODE is None, reason="needs Node.js (the book's MathJax is fetched with npm)")
def test_the_javascript_stemmer_agrees_with_the_index():
    """What searchtools.js makes of a query word is the key the Python side indexed it under."""
    ext = _extension()
    words = [w for spellings in SPELLINGS.values() for w in spellings]
    words += ["kernels", "Coefficients", "approximation", "Bochner's", "Straße", "œuvre", "does"]
    script = ext.SearchEnglishFolded.js_stemmer_code + (
        f"\nconst s = new Stemmer();\nconsole.log(JSON.stringify({json.dumps(words)}"
        ".map(w => s.stemWord(w.toLowerCase()))));"
    )
    out = subprocess.run(
        [NODE, "-e", script], capture_output=True, text=True, timeout=60, check=True
    )
    language = ext.SearchEnglishFolded({})
    assert json.loads(out.stdout) == [language.stem(w) for w in words]


# --------------------------------------------------------------------------- bibliography

BIB = ROOT / "book/references.bib"


def _entries():
    from pybtex.database import parse_file

    return parse_file(str(BIB)).entries


def test_bibliography_labels_are_the_author_year_citations():
    ext = _extension()
    entries = _entries()
    assert ext.citation_label(entries["yang2012nystrom"]) == "Yang et al., 2012"
    assert ext.citation_label(entries["rahimi2007random"]) == "Rahimi and Recht, 2007"
    assert ext.citation_label(entries["lecture000"]) == "CS4787/5777, Cornell University, 2023"
    labels = [ext.citation_label(e) for e in entries.values()]
    assert len(set(labels)) == len(labels), "two entries would share a label"
    style = ext.KernelcourseStyle()
    ordered = list(style.format_labels(style.sort(entries.values())))
    assert ordered == sorted(ordered, key=lambda t: ext.unicodedata.normalize("NFKD", t).casefold())


def test_bibliography_entries_are_plain_text_with_links():
    text = BIB.read_text(encoding="utf-8")
    markup = re.findall(r"\\(emph|textit|textbf|textsc|it|em|bf|url|href)\b", text)
    assert markup == [], "TeX markup in references.bib renders as raw text"
    # Two sources with no public address found: a blog lecture, and a book chapter whose
    # kernel chapter 10 also cites from an open-access paper. Everything else links.
    no_address = {"lecture001", "ratsch2004accurate"}
    unlinked = {k for k, e in _entries().items() if not {"url", "doi", "eprint"} & set(e.fields)}
    assert unlinked == no_address


def test_bach_2017_is_the_paper_lecture_001_cites():
    entry = _entries()["bach2017equivalence"]
    assert (
        entry.fields["title"] == "Breaking the Curse of Dimensionality with Convex Neural Networks"
    )
    assert (entry.fields["volume"], entry.fields["number"], entry.fields["pages"]) == (
        "18",
        "19",
        "1--53",
    )


def test_pixel_sized_images_get_size_attributes_not_an_inline_style():
    """A notebook figure's drawn size becomes width/height attributes, which the stylesheet
    can cap at the column's width; an image sized in other units keeps its inline style."""
    from docutils import nodes

    class Translator:  # what docutils' own visit_image appends
        def __init__(self):
            self.body = []

        def visit_image(self, node):
            style = " ".join(f"{k}: {node[k]};" for k in ("width", "height") if k in node)
            self.body.append(
                f'<img src="{node["uri"]}"' + (f' style="{style}"' if style else "") + " />"
            )

    ext, writer = _extension(), Translator()
    figure = nodes.image(uri="fig.png", width="651", height="897")
    ext.visit_image(writer, figure)
    assert writer.body == ['<img width="651" height="897" src="fig.png" />']
    assert (figure["width"], figure["height"]) == ("651", "897")  # the doctree keeps its size
    ext.visit_image(writer, nodes.image(uri="logo.png", width="80%"))
    assert writer.body[-1] == '<img src="logo.png" style="width: 80%;" />'
    assert (ext._pixels("651px"), ext._pixels(" 12.6 "), ext._pixels("80%")) == (651, 13, None)


@pytest.mark.parametrize(
    "tex, held",
    [
        # the outermost group, with the scripts of its closing bracket
        (r"\tilde K(\tilde K + \lambda I)^{-1}y", r"\tilde K{(\tilde K + \lambda I)^{-1}}y"),
        (r"\varepsilon = \|K - \tilde K\|_2", r"\varepsilon = {\|K - \tilde K\|_2}"),
        (r"x' + (a + b)'", r"x' + {(a + b)'}"),
        (r"\mathbb E[\cos(w^T x + b)]", r"\mathbb E{[\cos(w^T x + b)]}"),
        (r"\big(a + b\big)^2", r"{\big(a + b\big)^2}"),
        (r"[0, 1)", r"{[0, 1)}"),
        # bars pair by kind; a bar inside brackets is part of the group
        (r"|x| \le \|x - |y|\|", r"|x| \le {\|x - |y|\|}"),
        (r"p(x | y) = 1", r"p{(x | y)} = 1"),
        (r"\{x : |x| < 1\}", r"{\{x : |x| < 1\}}"),
        # left alone: one symbol, \left...\right, an optional argument, brace groups
        (r"f(x) + (a + b)", r"f(x) + {(a + b)}"),
        (r"\left( a + b \right) + c", r"\left( a + b \right) + c"),
        (r"\sqrt[n+1]{x} + (a+b)", r"\sqrt[n+1]{x} + {(a+b)}"),
        (r"\frac{(a + b)}{2}", r"\frac{(a + b)}{2}"),
        # unchanged where brackets do not pair, or with an environment
        (r"f(x)|_{x=0} + (a + b)", r"f(x)|_{x=0} + (a + b)"),
        (r"(a + b", r"(a + b"),
        (r"a + b)", r"a + b)"),
        (r"\begin{pmatrix} (a + b) \end{pmatrix}", r"\begin{pmatrix} (a + b) \end{pmatrix}"),
        (r"a + b", r"a + b"),
        ("", ""),
    ],
)
def test_inline_math_is_held_together_inside_its_brackets(tex, held):
    """MathJax may break an inline formula after an operator, inside a bracket too; the
    book makes each outermost bracket one brace group, which does not break."""
    assert _extension().hold_brackets(tex) == held


def test_held_brackets_are_applied_to_inline_math_only():
    from docutils import nodes

    ext = _extension()
    doctree = nodes.paragraph()
    inline = nodes.math(r"(a + b)^2", r"(a + b)^2")
    block = nodes.math_block(r"(a + b)^2", r"(a + b)^2")
    doctree += [inline, block]
    ext.hold_inline_brackets(None, doctree)
    assert inline.astext() == r"{(a + b)^2}" and block.astext() == r"(a + b)^2"
