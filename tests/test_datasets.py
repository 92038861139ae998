"""Loaders: real files when KERNELCOURSE_DATA holds them, tiny generated files otherwise; the
download path against an HTTP server on 127.0.0.1 (no other network)."""

import dataclasses
import gzip
import hashlib
import http.server
import io
import os
import pathlib
import threading
import zipfile

import numpy as np
import pytest

from kernelcourse import datasets as ds

SHARED = os.environ.get(ds.DATA_ENV)
HAVE_REAL = SHARED is not None and all(
    (pathlib.Path(SHARED) / s.filename).is_file() for s in ds.SOURCES.values()
)

sha = lambda b: hashlib.sha256(b).hexdigest()  # noqa: E731

ADULT_ROWS = [
    "39, State-gov, 77516, Bachelors, 13, Never-married, Adm-clerical, Not-in-family, White, "
    "Male, 2174, 0, 40, United-States, <=50K",
    "50, Self-emp-not-inc, 83311, Bachelors, 13, Married-civ-spouse, Exec-managerial, Husband, "
    "White, Male, 0, 0, 13, United-States, >50K",
    "38, Private, 215646, HS-grad, 9, Divorced, Handlers-cleaners, Not-in-family, White, Male, "
    "0, 0, 40, ?, <=50K",
    "53, Private, 234721, 11th, 7, Married-civ-spouse, Handlers-cleaners, Husband, Black, "
    "Male, 0, 0, 40, United-States, <=50K",
]


def tiny_adult():
    train = ("\n".join(ADULT_ROWS) + "\n\n").encode()
    test = ("|1x3 Cross validator\n" + "\n".join(r + "." for r in ADULT_ROWS[1:]) + "\n\n").encode()
    return train, test


def tiny_covtype():
    rng = np.random.default_rng(0)
    rows = np.zeros((30, 55), dtype=np.int64)
    rows[:, :10] = rng.integers(0, 3000, size=(30, 10))
    rows[np.arange(30), 10 + rng.integers(0, 4, 30)] = 1
    rows[np.arange(30), 14 + rng.integers(0, 40, 30)] = 1
    rows[:, 54] = np.arange(30) % 7 + 1
    return "".join(",".join(map(str, r)) + "\n" for r in rows).encode(), rows


def tiny_mnist():
    rng = np.random.default_rng(1)
    arrays = {
        "x_train": rng.integers(0, 256, size=(6, 28, 28), dtype=np.uint8),
        "y_train": np.arange(6, dtype=np.uint8),
        "x_test": rng.integers(0, 256, size=(2, 28, 28), dtype=np.uint8),
        "y_test": np.array([3, 4], dtype=np.uint8),
    }
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    return buf.getvalue(), arrays


def zip_bytes(members):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


class _Handler(http.server.BaseHTTPRequestHandler):
    routes: dict = {}
    hits: list = []

    def do_GET(self):  # noqa: N802 - http.server's naming
        self.hits.append(self.path)
        if self.path not in self.routes:
            self.send_error(404)
            return
        body, mode = self.routes[self.path]
        if mode == "chunked-truncate":
            # a chunked transfer that hangs up in the middle of a chunk
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            self.wfile.write(b"%x\r\n" % len(body) + body[: len(body) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if mode == "truncate":
            # announce the whole file, send half of it, hang up
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    _Handler.routes, _Handler.hits = {}, []
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{httpd.server_address[1]}"
    yield base, _Handler
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def isolated(tmp_path, monkeypatch):
    """No KERNELCOURSE_DATA, an empty cache folder."""
    monkeypatch.delenv(ds.DATA_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache" / "kernelcourse"


def patch_source(monkeypatch, key, **changes):
    monkeypatch.setitem(ds.SOURCES, key, dataclasses.replace(ds.SOURCES[key], **changes))


def serve_tiny_adult(monkeypatch, server, mode="ok", corrupt=False):
    base, handler = server
    train, test = tiny_adult()
    served_train = train.replace(b"39,", b"40,") if corrupt else train
    handler.routes["/adult.zip"] = (
        zip_bytes({"adult.data": served_train, "adult.test": test, "adult.names": b"x"}),
        mode,
    )
    patch_source(
        monkeypatch,
        "adult.data",
        url=base + "/adult.zip",
        content_sha256={"adult.data": sha(train)},
    )
    patch_source(
        monkeypatch, "adult.test", url=base + "/adult.zip", content_sha256={"adult.test": sha(test)}
    )


# -- download path -------------------------------------------------------------------------------
def test_adult_download_verifies_and_caches(monkeypatch, server, isolated):
    serve_tiny_adult(monkeypatch, server)
    b = ds.load_adult()
    # the row with "?" is dropped; labels with and without the trailing period
    assert b.X_train.shape[0] == 3 and b.X_test.shape[0] == 2
    np.testing.assert_array_equal(b.y_train, [0, 1, 0])
    np.testing.assert_array_equal(b.y_test, [1, 0])
    assert sorted(p.name for p in isolated.iterdir()) == ["adult.data.gz", "adult.test.gz"]
    assert gzip.decompress((isolated / "adult.data.gz").read_bytes()) == tiny_adult()[0]
    hits = len(server[1].hits)
    ds.load_adult()  # second call: from the cache, no request
    assert len(server[1].hits) == hits


def test_checksum_mismatch_leaves_no_file(monkeypatch, server, isolated):
    serve_tiny_adult(monkeypatch, server, corrupt=True)
    with pytest.raises(ds.ChecksumError, match="adult.data"):
        ds.load_adult()
    assert not isolated.exists() or list(isolated.iterdir()) == []


def test_interrupted_download_leaves_no_file(monkeypatch, server, isolated):
    serve_tiny_adult(monkeypatch, server, mode="truncate")
    with pytest.raises(ds.DataUnavailableError, match="interrupted|failed"):
        ds.load_adult()
    assert not isolated.exists() or list(isolated.iterdir()) == []


def test_offline_error_names_file_and_variable(monkeypatch, isolated):
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    patch_source(monkeypatch, "covtype", url=f"http://127.0.0.1:{port}/covertype.zip")
    with pytest.raises(ds.DataUnavailableError) as info:
        ds.load_covertype()
    msg = str(info.value)
    assert "covtype.data.gz" in msg and "KERNELCOURSE_DATA" in msg
    with pytest.raises(ds.DataUnavailableError, match="download=False"):
        ds.load_mnist(download=False)
    assert not isolated.exists() or list(isolated.iterdir()) == []


@pytest.mark.parametrize("data_home", [5, b"/tmp", ["/tmp"]])
def test_data_home_of_the_wrong_type_is_named(data_home, isolated):
    # pathlib's "expected str, bytes or os.PathLike object, not int" did not say which argument
    for load in (ds.load_adult, ds.load_mnist, ds.load_covertype):
        with pytest.raises(TypeError, match="data_home must be a folder path"):
            load(data_home=data_home, download=False)
    with pytest.raises(TypeError, match="data_home must be a folder path"):
        next(ds.iter_covertype_chunks(data_home=data_home, download=False))


def test_covtype_download_of_gz_member(monkeypatch, server, isolated):
    base, handler = server
    text, rows = tiny_covtype()
    handler.routes["/covertype.zip"] = (zip_bytes({"covtype.data.gz": gzip.compress(text)}), "ok")
    patch_source(
        monkeypatch,
        "covtype",
        url=base + "/covertype.zip",
        content_sha256={"covtype.data": sha(text)},
    )
    b = ds.load_covertype(n_train=20, n_test=10, random_state=3)
    assert b.X_train.shape == (20, 54) and b.X_test.shape == (10, 54)
    assert len(b.feature_names) == 54
    # a disjoint split of all rows, indicators untouched, numeric columns standardized
    labels = np.sort(np.concatenate([b.y_train, b.y_test]))
    np.testing.assert_array_equal(labels, np.sort(rows[:, 54]))
    assert set(np.unique(b.X_train[:, 10:])) <= {0.0, 1.0}
    np.testing.assert_allclose(b.X_train[:, :10].mean(axis=0), 0, atol=1e-12)
    again = ds.load_covertype(n_train=20, n_test=10, random_state=3)
    np.testing.assert_array_equal(again.X_test, b.X_test)
    with pytest.raises(ValueError, match="n_train"):
        ds.load_covertype(n_train=100, n_test=10)


def test_mnist_download_checks_file_and_arrays(monkeypatch, server, isolated):
    base, handler = server
    payload, arrays = tiny_mnist()
    handler.routes["/mnist.npz"] = (payload, "ok")
    hashes = {k: sha(v.tobytes()) for k, v in arrays.items()}
    patch_source(
        monkeypatch,
        "mnist",
        url=base + "/mnist.npz",
        content_sha256=hashes,
        url_sha256=sha(payload),
    )
    b = ds.load_mnist()
    assert b.X_train.shape == (6, 784) and b.X_train.dtype == np.float32
    np.testing.assert_allclose(b.X_test[1], arrays["x_test"][1].ravel() / 255.0, rtol=1e-6)
    np.testing.assert_array_equal(b.y_test, [3, 4])
    (isolated / "mnist.npz").unlink()
    patch_source(monkeypatch, "mnist", url_sha256="0" * 64)
    with pytest.raises(ds.ChecksumError, match="mnist"):
        ds.load_mnist()
    assert list(isolated.iterdir()) == []


# -- local files ---------------------------------------------------------------------------------
def test_local_folder_and_corrupt_file(monkeypatch, tmp_path):
    train, test = tiny_adult()
    (tmp_path / "adult.data.gz").write_bytes(gzip.compress(train))
    (tmp_path / "adult.test.gz").write_bytes(gzip.compress(test))
    patch_source(monkeypatch, "adult.data", content_sha256={"adult.data": sha(train)})
    patch_source(monkeypatch, "adult.test", content_sha256={"adult.test": sha(test)})
    monkeypatch.setenv(ds.DATA_ENV, str(tmp_path))
    b = ds.load_adult(download=False)
    # one-hot columns + standardized numeric columns, names for each
    assert b.X_train.shape[1] == len(b.feature_names)
    assert "sex=Male" in b.feature_names and "age" in b.feature_names
    bb = ds.load_adult(encoding="binary", download=False)
    assert set(np.unique(bb.X_train)) <= {0.0, 1.0}
    np.testing.assert_array_equal(bb.X_train.sum(axis=1), 14)  # one level per attribute
    (tmp_path / "adult.test.gz").write_bytes(gzip.compress(test + b"junk"))
    with pytest.raises(ds.ChecksumError, match="adult.test"):
        ds.load_adult(download=False)
    with pytest.raises(ValueError, match="encoding"):
        ds.load_adult(encoding="ordinal")


@pytest.mark.skipif(not HAVE_REAL, reason="KERNELCOURSE_DATA does not hold the real files")
def test_real_adult():
    b = ds.load_adult()
    assert b.X_train.shape == (30162, 104) and b.X_test.shape == (15060, 104)
    assert b.y_train.sum() == 7508 and b.y_test.sum() == 3700
    assert ds.load_adult(encoding="binary").X_train.shape == (30162, 120)


@pytest.mark.skipif(not HAVE_REAL, reason="KERNELCOURSE_DATA does not hold the real files")
def test_real_covertype_and_mnist():
    b = ds.load_covertype(n_train=None)
    assert b.X_train.shape == (571012, 54) and b.X_test.shape == (10000, 54)
    np.testing.assert_array_equal(
        np.bincount(np.concatenate([b.y_train, b.y_test]))[1:],
        [211840, 283301, 35754, 2747, 9493, 17367, 20510],
    )
    m = ds.load_mnist()
    assert len(m.X_train) + len(m.X_test) == 70000
    np.testing.assert_array_equal(np.bincount(m.y_test)[:3], [980, 1135, 1032])


# -- corrupt files, broken transfers, stale partial files, counts (issue 18) ---------------------
def _gz_variants(data):
    """Damaged gzip files: flipped bytes across the deflate stream and the trailer, cuts."""
    gz = gzip.compress(data)
    out = []
    for pos in range(10, len(gz), max(1, len(gz) // 30)):
        damaged = bytearray(gz)
        damaged[pos] ^= 0xFF
        out.append(bytes(damaged))
    out += [gz[:cut] for cut in (5, 12, len(gz) // 2, len(gz) - 4)]
    return out


def test_every_corrupt_gz_is_a_checksum_error_naming_the_file(monkeypatch, tmp_path):
    train, test = tiny_adult()
    (tmp_path / "adult.test.gz").write_bytes(gzip.compress(test))
    patch_source(monkeypatch, "adult.data", content_sha256={"adult.data": sha(train)})
    patch_source(monkeypatch, "adult.test", content_sha256={"adult.test": sha(test)})
    monkeypatch.setenv(ds.DATA_ENV, str(tmp_path))
    for damaged in _gz_variants(train * 20):
        (tmp_path / "adult.data.gz").write_bytes(damaged)
        with pytest.raises(ds.ChecksumError, match="adult.data"):
            ds.load_adult(download=False)


def test_truncated_chunked_download_is_data_unavailable(monkeypatch, server, isolated):
    serve_tiny_adult(monkeypatch, server, mode="chunked-truncate")
    with pytest.raises(ds.DataUnavailableError, match="adult"):
        ds.load_adult()
    assert not isolated.exists() or list(isolated.iterdir()) == []


def test_stale_partial_download_is_removed_on_the_next_run(monkeypatch, server, isolated):
    isolated.mkdir(parents=True)
    stale = isolated / ".download.abc123.part"
    stale.write_bytes(b"left by a killed process")
    serve_tiny_adult(monkeypatch, server)
    ds.load_adult()
    assert not stale.exists()
    assert sorted(p.name for p in isolated.iterdir()) == ["adult.data.gz", "adult.test.gz"]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"n_train": True}, "n_train"),
        ({"n_test": False}, "n_test"),
        ({"n_test": 1.5}, "n_test"),
        ({"n_train": "10"}, "n_train"),
    ],
)
def test_covertype_counts_refuse_bools_and_non_integers(kwargs, match, isolated):
    with pytest.raises(ValueError, match=match):
        ds.load_covertype(download=False, **kwargs)


@pytest.mark.skipif(not HAVE_REAL, reason="KERNELCOURSE_DATA does not hold the real files")
def test_covertype_accepts_numpy_integers():
    b = ds.load_covertype(n_train=np.int64(20), n_test=np.int32(10))
    assert b.X_train.shape == (20, 54) and b.X_test.shape == (10, 54)


# -- streaming Covertype ---------------------------------------------------------------------
def tiny_covtype_file(monkeypatch, folder, corrupt=False):
    text, rows = tiny_covtype()
    patch_source(monkeypatch, "covtype", content_sha256={"covtype.data": sha(text)})
    written = text[:-2] + b"9\n" if corrupt else text  # another last label
    (folder / "covtype.data.gz").write_bytes(gzip.compress(written))
    monkeypatch.setenv(ds.DATA_ENV, str(folder))
    return rows


@pytest.mark.parametrize("chunk_size", [1, 7, 30, 1000])
def test_covertype_chunks_stream_the_file_in_order(monkeypatch, tmp_path, chunk_size):
    rows = tiny_covtype_file(monkeypatch, tmp_path)
    blocks = list(ds.iter_covertype_chunks(chunk_size, download=False))
    assert all(0 < len(X) <= chunk_size for X, _ in blocks)
    np.testing.assert_array_equal(np.concatenate([X for X, _ in blocks]), rows[:, :54])
    np.testing.assert_array_equal(np.concatenate([y for _, y in blocks]), rows[:, 54])


def test_covertype_chunks_split_and_scale_like_the_loader(monkeypatch, tmp_path):
    tiny_covtype_file(monkeypatch, tmp_path)
    ref = ds.load_covertype(n_train=None, n_test=8, random_state=3, download=False)
    order = np.random.default_rng(3).permutation(30)
    for split, X_ref, y_ref, idx in (
        ("train", ref.X_train, ref.y_train, order[8:]),
        ("test", ref.X_test, ref.y_test, order[:8]),
    ):
        blocks = list(
            ds.iter_covertype_chunks(
                4, split=split, n_test=8, random_state=3, standardize=True, download=False
            )
        )
        X = np.concatenate([b[0] for b in blocks])
        y = np.concatenate([b[1] for b in blocks])
        file_order = np.argsort(idx)  # the stream keeps the rows in file order
        np.testing.assert_allclose(X, X_ref[file_order], rtol=1e-12, atol=1e-12)
        np.testing.assert_array_equal(y, y_ref[file_order])


def test_covertype_chunks_check_the_file_before_yielding(monkeypatch, tmp_path):
    tiny_covtype_file(monkeypatch, tmp_path, corrupt=True)
    stream = ds.iter_covertype_chunks(5, download=False)
    with pytest.raises(ds.ChecksumError, match="covtype.data"):
        next(stream)
    (tmp_path / "covtype.data.gz").write_bytes(b"not gzip at all")
    with pytest.raises(ds.ChecksumError, match="not a readable"):
        next(ds.iter_covertype_chunks(5, download=False))


def test_covertype_chunks_corrupt_gz_is_a_checksum_error(monkeypatch, tmp_path):
    # the streaming reader meets the damaged files of the loaders' test above
    text, _ = tiny_covtype()
    tiny_covtype_file(monkeypatch, tmp_path)
    for damaged in _gz_variants(text):
        (tmp_path / "covtype.data.gz").write_bytes(damaged)
        with pytest.raises(ds.ChecksumError, match="covtype.data"):
            next(ds.iter_covertype_chunks(5, download=False))


def test_covertype_chunks_bad_arguments(monkeypatch, tmp_path):
    tiny_covtype_file(monkeypatch, tmp_path)
    with pytest.raises(ValueError, match="chunk_size"):
        next(ds.iter_covertype_chunks(0))
    with pytest.raises(ValueError, match="chunk_size"):
        next(ds.iter_covertype_chunks(True))
    with pytest.raises(ValueError, match="n_test"):
        next(ds.iter_covertype_chunks(5, split="test", n_test=False, download=False))
    assert len(next(ds.iter_covertype_chunks(np.int64(5), download=False))[0]) == 5
    with pytest.raises(ValueError, match="split"):
        next(ds.iter_covertype_chunks(5, split="validation"))
    with pytest.raises(ValueError, match="n_test"):
        next(ds.iter_covertype_chunks(5, split="test", n_test=30, download=False))
    with pytest.raises(TypeError, match="standardize"):
        next(ds.iter_covertype_chunks(5, standardize=1))


def test_covertype_chunks_offline_error(monkeypatch, isolated):
    with pytest.raises(ds.DataUnavailableError, match="covtype.data.gz"):
        next(ds.iter_covertype_chunks(5, download=False))


@pytest.mark.parametrize("buffer, chunk_size", [(1, 1), (5, 4), (12, 7), (100, 6)])
def test_covertype_chunks_shuffle_buffer_yields_every_row_once(
    monkeypatch, tmp_path, buffer, chunk_size
):
    rows = tiny_covtype_file(monkeypatch, tmp_path)
    blocks = list(
        ds.iter_covertype_chunks(chunk_size, shuffle_buffer=buffer, shuffle_seed=1, download=False)
    )
    assert all(0 < len(X) <= chunk_size for X, _ in blocks)
    X = np.concatenate([b[0] for b in blocks])
    y = np.concatenate([b[1] for b in blocks])
    key = lambda a: np.lexsort(a.T[::-1])  # noqa: E731
    full = np.column_stack([X, y])
    np.testing.assert_array_equal(full[key(full)], rows[key(rows)])
    assert not np.array_equal(X, rows[:, :54])  # 30 rows: some moved
    again = np.concatenate(
        [
            b[0]
            for b in ds.iter_covertype_chunks(
                chunk_size, shuffle_buffer=buffer, shuffle_seed=1, download=False
            )
        ]
    )
    np.testing.assert_array_equal(X, again)


def test_covertype_chunks_shuffle_buffer_mixes_only_within_its_reach(monkeypatch, tmp_path):
    # a row leaves the buffer at most buffer + chunk rows after it entered
    rows = tiny_covtype_file(monkeypatch, tmp_path)
    index = {tuple(r[:54]): i for i, r in enumerate(rows)}
    blocks = ds.iter_covertype_chunks(3, shuffle_buffer=6, shuffle_seed=0, download=False)
    out = [index[tuple(x)] for X, _ in blocks for x in X]
    assert len(out) == len(rows)
    late = [pos - i for pos, i in enumerate(out)]
    assert max(-d for d in late) <= 6 + 3 + 3  # buffer + one yielded and one read block


def test_covertype_chunks_shuffle_buffer_is_validated(monkeypatch, tmp_path):
    tiny_covtype_file(monkeypatch, tmp_path)
    for bad in (-1, True, 2.5):
        with pytest.raises(ValueError, match="shuffle_buffer"):
            next(ds.iter_covertype_chunks(5, shuffle_buffer=bad, download=False))


def test_partial_files_of_killed_processes_go_and_live_ones_stay(monkeypatch, server, isolated):
    import signal
    import subprocess
    import sys

    isolated.mkdir(parents=True)
    # a process killed with SIGKILL while it writes: its .part file stays behind
    code = (
        "import os, sys, time, pathlib; from kernelcourse import datasets as ds; "
        "fd, tmp = ds._part_file(pathlib.Path(sys.argv[1]), '.adult.data.gz.'); "
        "os.write(fd, b'half'); print(tmp, flush=True); time.sleep(60)"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code, str(isolated)], stdout=subprocess.PIPE, text=True
    )
    killed = pathlib.Path(proc.stdout.readline().strip())
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert killed.exists()
    # a transfer that is still running (this process's parent stands in for it)
    live = isolated / f".download.{os.getppid()}.abc123.part"
    live.write_bytes(b"still coming")
    serve_tiny_adult(monkeypatch, server)
    ds.load_adult()
    assert not killed.exists()
    assert live.exists()
    names = sorted(p.name for p in isolated.iterdir())
    assert names == sorted(["adult.data.gz", "adult.test.gz", live.name])


@pytest.mark.parametrize(
    ("dtype", "error", "match"),
    [
        (np.int8, ValueError, "dtype must be float32 or float64, got int8"),
        (np.float16, ValueError, "dtype must be float32 or float64"),
        ("x", TypeError, "dtype must be a numpy float dtype, got 'x'"),
        # float128 came back where float32 or float64 was promised
        pytest.param(
            np.longdouble,
            ValueError,
            "dtype must be float32 or float64, got float",
            marks=pytest.mark.skipif(
                np.dtype(np.longdouble) == np.float64, reason="long double is float64 here"
            ),
        ),
    ],
)
def test_covertype_refuses_a_dtype_that_cannot_hold_its_columns(
    monkeypatch, tmp_path, dtype, error, match
):
    # dtype=np.int8 returned the columns wrapped around (an elevation of 2 596 as 36)
    tiny_covtype_file(monkeypatch, tmp_path)
    with pytest.raises(error, match=match):
        ds.load_covertype_full(dtype=dtype, download=False)
    with pytest.raises(error, match=match):
        next(ds.iter_covertype_chunks(5, dtype=dtype, download=False))
    X, _ = ds.load_covertype_full(dtype=np.float32, download=False)
    assert X.dtype == np.float32


def test_covertype_names_a_bad_random_state(monkeypatch, tmp_path):
    # numpy's "SeedSequence expects int or sequence of ints" did not name random_state
    tiny_covtype_file(monkeypatch, tmp_path)
    with pytest.raises(TypeError, match="^random_state: "):
        ds.load_covertype(n_train=10, n_test=5, random_state="x", download=False)
    with pytest.raises(ValueError, match="^random_state: "):
        next(ds.iter_covertype_chunks(5, split="test", n_test=5, random_state=-1, download=False))


def test_covertype_chunks_check_their_arguments_before_any_work(monkeypatch, tmp_path):
    # shuffle_seed="x" failed unnamed, and only after the whole file had been checked
    tiny_covtype_file(monkeypatch, tmp_path)

    def no_work(*args, **kwargs):
        raise AssertionError("the file was read before the arguments were checked")

    monkeypatch.setattr(ds, "_verify_covtype_stream", no_work)
    monkeypatch.setattr(ds, "_covtype_blocks", no_work)
    for seed in ("x", -1, 2.5):
        with pytest.raises(ValueError, match="^shuffle_seed: "):
            ds.iter_covertype_chunks(5, shuffle_buffer=10, shuffle_seed=seed)
    with pytest.raises(ValueError, match="n_test"):
        ds.iter_covertype_chunks(5, split="test", n_test=2.5)
    with pytest.raises(ValueError, match="chunk_size"):
        ds.iter_covertype_chunks(0)
    with pytest.raises(TypeError, match="download must be True or False"):
        ds.iter_covertype_chunks(5, download="no")


@pytest.mark.parametrize("download", ["no", 0, None, np.array([False])])
def test_download_that_is_not_a_bool_is_named(monkeypatch, tmp_path, isolated, download):
    # download="no" counted as True and started a download
    def no_download(*args, **kwargs):
        raise AssertionError("a download started")

    monkeypatch.setattr(ds, "_download", no_download)
    loaders = (ds.load_adult, ds.load_mnist, ds.load_covertype, ds.load_covertype_full)
    for load in loaders:
        with pytest.raises(TypeError, match="download must be True or False"):
            load(download=download)
    tiny_covtype_file(monkeypatch, tmp_path)  # refused even where the file is on disk
    with pytest.raises(TypeError, match="download must be True or False"):
        ds.load_covertype_full(download=download)
    X, _ = ds.load_covertype_full(download=np.False_)
    assert X.shape == (30, 54)


@pytest.mark.parametrize("name", ["a" * 300, "nope"])
def test_load_benchmark_of_an_unknown_name_lists_the_records(name):
    # a name of 300 letters failed in the file system with "[Errno 36] File name too long"
    with pytest.raises(ValueError, match="no stored benchmark record .* known records: .*"):
        ds.load_benchmark(name)
