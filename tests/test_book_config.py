"""The book's configuration as Sphinx receives it: offline MathJax and the launch setting."""

import importlib.util
import pathlib
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
    assert ext._is_remote("https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-mml-chtml.js")
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
    fake = tmp_path / "mathjax-3.2.2.tgz"
    fake.write_bytes(b"not the published tarball")
    assert not ext._integrity_ok(fake)
