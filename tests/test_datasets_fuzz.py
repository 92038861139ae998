"""Loader folders given in odd forms: ``~``, empty strings, files where a folder belongs, and
corrupt copies; all on tiny generated files with no network (downloads go to a closed port)."""

import dataclasses
import io
import os

import numpy as np
import pytest

from kernelcourse import datasets as ds


def _tiny_mnist():
    rng = np.random.default_rng(3)
    arrays = {
        "x_train": rng.integers(0, 256, size=(5, 28, 28), dtype=np.uint8),
        "y_train": np.array([0, 1, 2, 9, 5], dtype=np.uint8),
        "x_test": rng.integers(0, 256, size=(2, 28, 28), dtype=np.uint8),
        "y_test": np.array([7, 3], dtype=np.uint8),
    }
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    return buf.getvalue(), arrays


@pytest.fixture
def tiny(tmp_path, monkeypatch):
    """A tiny mnist.npz whose hashes the loader expects, HOME and the cache inside tmp_path,
    no KERNELCOURSE_DATA, a download URL that is refused at once, and tmp_path as cwd."""
    payload, arrays = _tiny_mnist()
    hashes = {k: ds._sha256(np.ascontiguousarray(v).tobytes()) for k, v in arrays.items()}
    source = dataclasses.replace(
        ds.SOURCES["mnist"], content_sha256=hashes, url="http://127.0.0.1:1/mnist.npz"
    )
    monkeypatch.setitem(ds.SOURCES, "mnist", source)
    monkeypatch.delenv(ds.DATA_ENV, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "home" / "data").mkdir(parents=True)
    return payload, arrays


def _check_mnist(bunch, arrays):
    assert bunch.X_train.dtype == np.float32 and bunch.X_train.shape == (5, 784)
    assert bunch.y_train.dtype == np.int64
    np.testing.assert_array_equal(bunch.y_train, arrays["y_train"])
    np.testing.assert_array_equal(bunch.y_test, arrays["y_test"])
    np.testing.assert_allclose(bunch.X_test * 255, arrays["x_test"].reshape(2, -1), atol=1e-4)


def test_tilde_in_data_home_is_expanded(tiny, tmp_path):
    payload, arrays = tiny
    (tmp_path / "home" / "data" / "mnist.npz").write_bytes(payload)
    _check_mnist(ds.load_mnist(data_home="~/data", download=False), arrays)


def test_tilde_in_the_environment_variable_is_expanded(tiny, tmp_path, monkeypatch):
    payload, arrays = tiny
    (tmp_path / "home" / "data" / "mnist.npz").write_bytes(payload)
    monkeypatch.setenv(ds.DATA_ENV, "~/data")
    _check_mnist(ds.load_mnist(download=False), arrays)


def test_failed_download_to_a_tilde_folder_makes_no_literal_tilde_folder(tiny, tmp_path):
    with pytest.raises(ds.DataUnavailableError, match="mnist.npz"):
        ds.load_mnist(data_home="~/fresh")
    assert not (tmp_path / "~").exists()
    assert (tmp_path / "home" / "fresh").is_dir()  # the download went where "~/fresh" points


def test_empty_data_home_is_refused_not_the_current_folder(tiny, tmp_path):
    with pytest.raises(ValueError, match="data_home"):
        ds.load_mnist(data_home="")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["home"]  # nothing written in cwd


@pytest.mark.parametrize("as_path", [False, True])
def test_data_home_that_is_a_file_is_named(tiny, tmp_path, as_path):
    (tmp_path / "afile").write_text("x")
    home = tmp_path / "afile" if as_path else "afile"
    with pytest.raises(ValueError, match="data_home must be a folder"):
        ds.load_mnist(data_home=home)
    with pytest.raises(ValueError, match="data_home must be a folder"):
        ds.iter_covertype_chunks(data_home=home)  # at the call, before any file is read


def test_environment_variable_that_is_a_file_is_named(tiny, tmp_path, monkeypatch):
    payload, _ = tiny
    (tmp_path / "afile").write_text("x")
    monkeypatch.setenv(ds.DATA_ENV, "afile")
    # with a good copy in the cache, a mistyped variable would otherwise pass unnoticed
    (tmp_path / "cache" / "kernelcourse").mkdir(parents=True)
    (tmp_path / "cache" / "kernelcourse" / "mnist.npz").write_bytes(payload)
    with pytest.raises(ValueError, match=ds.DATA_ENV):
        ds.load_mnist(download=False)


def test_truncated_copy_is_a_checksum_error_and_nothing_is_cached(tiny, tmp_path, monkeypatch):
    payload, _ = tiny
    (tmp_path / "home" / "data" / "mnist.npz").write_bytes(payload[: len(payload) // 2])
    monkeypatch.setenv(ds.DATA_ENV, os.path.join("home", "data"))  # a relative path
    with pytest.raises(ds.ChecksumError, match="mnist.npz"):
        ds.load_mnist()
    assert not (tmp_path / "cache").exists()
