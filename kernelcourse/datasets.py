"""Loaders for the data sets of Yang et al. (2012) (UCI Adult, UCI Covertype, MNIST).

Where the files come from, in order:

1. the folder named by ``data_home=`` or, if not given, by the environment variable
   ``KERNELCOURSE_DATA`` (the course's offline copies live there);
2. the user cache folder, ``$XDG_CACHE_HOME/kernelcourse`` (default ``~/.cache/kernelcourse``);
3. a download from the data set's canonical URL into the cache folder.

Every file is checked against published SHA-256 sums of its *content* before it is parsed: the
uncompressed UCI text files for Adult and Covertype (so a gzip written by another program still
passes), and the raw bytes of each array for MNIST. A download goes to a temporary file in the
target folder, is verified, and only then renamed into place with :func:`os.replace`; a failed,
interrupted or mismatching download leaves nothing behind. Without network access the error
names the missing file and the variable to set.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gzip
import hashlib
import http.client
import io
import numbers
import os
import pathlib
import shutil
import tempfile
import urllib.error
import urllib.request
import zipfile
import zlib

import numpy as np
from sklearn.utils import Bunch

__all__ = [
    "DATA_ENV",
    "ChecksumError",
    "DataUnavailableError",
    "cache_dir",
    "load_adult",
    "load_covertype",
    "load_covertype_full",
    "iter_covertype_chunks",
    "load_mnist",
    "load_benchmark",
    "benchmark_results_dir",
]

DATA_ENV = "KERNELCOURSE_DATA"


class ChecksumError(ValueError):
    """A file's content does not match its published SHA-256."""


class DataUnavailableError(OSError):
    """A data file is neither on disk nor downloadable."""


@dataclasses.dataclass(frozen=True)
class _Source:
    """One file the loaders read: its local name, how to check it, where to download it."""

    filename: str
    content_sha256: dict  # name of a checked part -> sha256 (see _content_parts)
    url: str
    archive_member: str | None = None  # the file inside a zip archive at ``url``
    url_sha256: str | None = None  # whole-file hash of the download, when one is published


# Hashes from the data README (../shared/data/README.md).
SOURCES = {
    "adult.data": _Source(
        "adult.data.gz",
        {"adult.data": "5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d"},
        "https://archive.ics.uci.edu/static/public/2/adult.zip",
        archive_member="adult.data",
    ),
    "adult.test": _Source(
        "adult.test.gz",
        {"adult.test": "a2a9044bc167a35b2361efbabec64e89d69ce82d9790d2980119aac5fd7e9c05"},
        "https://archive.ics.uci.edu/static/public/2/adult.zip",
        archive_member="adult.test",
    ),
    "covtype": _Source(
        "covtype.data.gz",
        {"covtype.data": "0a9371cef7c964b5475d6053cc3e0894a5aa6f65ad1ed3ecb01c45aa96217945"},
        "https://archive.ics.uci.edu/static/public/31/covertype.zip",
        archive_member="covtype.data.gz",
    ),
    "mnist": _Source(
        "mnist.npz",
        {
            "x_train": "741c988805d008ac6e4c904b69001ba184c24b2c540a4ef403f4c71b676cf757",
            "y_train": "1feba77c54802fa5339a11837ea4b2866434b83314ec45192930f1df69120c13",
            "x_test": "6d87418db22cc8025d05968bec9bd5c3932904b23485740db143a061a2c9d161",
            "y_test": "ddeff807876a9661a1110d45c266c86239a3a1b7d37da0c3716a7a683c852ff5",
        },
        "https://storage.googleapis.com/tensorflow/tf-keras-datasets/mnist.npz",
        url_sha256="731c5ac602752760c8e48fbffcf8c3b850d9dc2a2aedcf2cc48468fc17b673d1",
    ),
}


# -- where files live ---------------------------------------------------------------------------
def cache_dir():
    """The user cache folder: ``$XDG_CACHE_HOME/kernelcourse`` or ``~/.cache/kernelcourse``.

    ``XDG_CACHE_HOME`` counts only when it is an absolute path (after ``~`` is expanded), as
    the XDG Base Directory Specification asks: a relative one would put the cache, and every
    download, under whatever folder the program happens to run in.

    Examples
    --------
    >>> from kernelcourse.datasets import cache_dir
    >>> print(cache_dir().name)
    kernelcourse
    """
    base = os.path.expanduser(os.environ.get("XDG_CACHE_HOME", ""))
    if not os.path.isabs(base):  # unset, empty or relative: the specification's default
        base = os.path.join(os.path.expanduser("~"), ".cache")
    return pathlib.Path(base) / "kernelcourse"


def _data_home(data_home):
    """``data_home`` as a Path with ``~`` expanded, or None when not given.

    Raises TypeError or ValueError naming ``data_home``: an empty string would make the current
    folder the download target, an unexpanded ``~`` a folder literally named "~", and a file
    where a folder belongs a bare FileExistsError on download.
    """
    if data_home is None:
        return None
    if not isinstance(data_home, str | os.PathLike):
        # else pathlib's "expected str, bytes or os.PathLike object, not int", unnamed
        raise TypeError(f"data_home must be a folder path (str or os.PathLike), got {data_home!r}.")
    if not os.fspath(data_home):
        raise ValueError("data_home must be a folder path, got an empty string.")
    return _folder(data_home, "data_home")


def _folder(value, name):
    """``value`` as a Path with ``~`` expanded, or a ValueError naming ``name`` where it is
    a file: a file in KERNELCOURSE_DATA was skipped in silence, and the data read from (or
    downloaded to) the cache."""
    path = pathlib.Path(value).expanduser()
    if path.exists() and not path.is_dir():
        raise ValueError(f"{name} must be a folder, but {str(path)!r} is a file.")
    return path


def _search_dirs(data_home):
    home = _data_home(data_home)
    if home is not None:
        return [home, cache_dir()]
    first = os.environ.get(DATA_ENV)
    dirs = [_folder(first, f"the environment variable {DATA_ENV}")] if first else []
    return dirs + [cache_dir()]


def _sha256(data):
    return hashlib.sha256(data).hexdigest()


def _content_parts(source, raw):
    """The parts of a file that carry published hashes: name -> bytes (or array)."""
    if source.filename.endswith(".npz"):
        with np.load(io.BytesIO(raw), allow_pickle=False) as npz:
            return {key: npz[key] for key in source.content_sha256}
    if source.filename.endswith(".gz"):
        raw = gzip.decompress(raw)
    (name,) = source.content_sha256
    return {name: raw}


def _check_content(source, raw, where):
    """Return the checked parts, or raise ChecksumError naming the file and the part."""
    try:
        parts = _content_parts(source, raw)
    except (OSError, EOFError, ValueError, KeyError, zipfile.BadZipFile, zlib.error) as err:
        # zlib.error: a damaged deflate stream inside an intact gzip header
        raise ChecksumError(f"{where} is not a readable {source.filename}: {err}") from err
    for name, expected in source.content_sha256.items():
        value = parts[name]
        got = _sha256(
            np.ascontiguousarray(value).tobytes() if isinstance(value, np.ndarray) else value
        )
        if got != expected:
            raise ChecksumError(
                f"{where}: sha256 of {name} is {got}, expected {expected}. The file is corrupt "
                f"or a different version; delete it and load again."
            )
    return parts


def _part_file(folder, prefix):
    """A new temporary ``.part`` file in ``folder`` whose name carries this process's id, so
    that a later run can tell a live transfer from one whose process was killed."""
    return tempfile.mkstemp(dir=folder, prefix=f"{prefix}{os.getpid()}.", suffix=".part")


def _process_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True  # it exists but belongs to someone else (or the platform cannot say)
    return True


def _remove_stale_parts(folder):
    """Remove the ``.part`` files that processes killed mid-write (SIGKILL, power loss) left
    in ``folder``: those whose process no longer runs, or that carry no process id (older
    versions). The files of transfers still running, here or in another process, stay."""
    for part in folder.glob(".*.part"):
        fields = part.name.split(".")  # "", prefix..., pid, random, "part"
        pid = fields[-3] if len(fields) >= 4 else ""
        if pid.isdigit() and (int(pid) == os.getpid() or _process_alive(int(pid))):
            continue
        with contextlib.suppress(OSError):
            part.unlink()


def _atomic_write(path, data):
    """Write ``data`` to ``path`` through a temporary file in the same folder and os.replace."""
    path.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale_parts(path.parent)
    fd, tmp = _part_file(path.parent, f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _download(url, target_dir, timeout=60):
    """Stream ``url`` into a temporary file in ``target_dir``; return its bytes and remove it.

    Raises DataUnavailableError when the server cannot be reached or the transfer ends early.
    """
    target_dir.mkdir(parents=True, exist_ok=True)
    # A process killed mid-download leaves its .part file behind; remove those first.
    _remove_stale_parts(target_dir)
    fd, tmp = _part_file(target_dir, ".download.")
    try:
        with os.fdopen(fd, "w+b") as f:
            with urllib.request.urlopen(url, timeout=timeout) as resp:
                expected = resp.headers.get("Content-Length")
                shutil.copyfileobj(resp, f, length=2**20)
            size = f.tell()
            if expected is not None and size != int(expected):
                raise DataUnavailableError(
                    f"download of {url} was interrupted: got {size} of {expected} bytes."
                )
            f.seek(0)
            return f.read()
    except (urllib.error.URLError, http.client.HTTPException, OSError, EOFError) as err:
        # http.client.IncompleteRead: a chunked transfer that ended early
        if isinstance(err, DataUnavailableError):
            raise
        raise DataUnavailableError(f"download of {url} failed: {err}") from err
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def _fetch(key, *, data_home=None, download=True):
    """Return the verified content parts of SOURCES[key] (see ``_content_parts``), from disk
    or (once) from the network."""
    _check_download(download)
    source = SOURCES[key]
    dirs = _search_dirs(data_home)
    for d in dirs:
        path = d / source.filename
        if path.is_file():
            return _check_content(source, path.read_bytes(), str(path))
    target = _data_home(data_home) or cache_dir()
    hint = (
        f"{source.filename} was not found in {', '.join(str(d) for d in dirs)}. Put the file "
        f"into a folder and set the environment variable {DATA_ENV} to that folder (or pass "
        f"data_home=), or allow the download from {source.url}."
    )
    if not download:
        raise DataUnavailableError(hint + " (download=False)")
    try:
        payload = _download(source.url, target)
    except DataUnavailableError as err:
        raise DataUnavailableError(f"{hint}\nThe download failed: {err}") from err
    if source.url_sha256 is not None and _sha256(payload) != source.url_sha256:
        raise ChecksumError(
            f"{source.url}: sha256 {_sha256(payload)} of the download, expected "
            f"{source.url_sha256}; nothing was saved."
        )
    if source.archive_member is not None:
        try:
            with zipfile.ZipFile(io.BytesIO(payload)) as zf:
                member = zf.read(source.archive_member)
        except (zipfile.BadZipFile, KeyError) as err:
            raise ChecksumError(
                f"{source.url} is not a zip archive holding {source.archive_member}: {err}; "
                "nothing was saved."
            ) from err
        # Plain text members are stored gzip-compressed, like the offline copies.
        raw = member if source.archive_member.endswith(".gz") else _gzip(member)
    else:
        raw = payload
    parts = _check_content(source, raw, f"{source.filename} downloaded from {source.url}")
    _atomic_write(target / source.filename, raw)
    return parts


def _gzip(data):
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", compresslevel=9, mtime=0, filename="") as f:
        f.write(data)
    return buf.getvalue()


# -- UCI Adult ----------------------------------------------------------------------------------
ADULT_COLUMNS = (
    "age", "workclass", "fnlwgt", "education", "education-num", "marital-status",
    "occupation", "relationship", "race", "sex", "capital-gain", "capital-loss",
    "hours-per-week", "native-country",
)  # fmt: skip
_ADULT_CONTINUOUS = (0, 2, 4, 10, 11, 12)


def _parse_adult(text):
    rows = []
    for line in text.splitlines():
        if not line or line.startswith("|"):
            continue  # the empty last line, and the test file's "|1x3 Cross validator"
        fields = line.split(", ")
        if "?" in fields:
            continue
        rows.append(fields)
    table = np.array(rows, dtype=object)
    y = np.array([label.rstrip(".") == ">50K" for label in table[:, -1]], dtype=np.int64)
    return table[:, :-1], y


def load_adult(*, encoding="onehot", data_home=None, download=True):
    """UCI Adult ("Census Income"): predict whether income exceeds $50K
    (:doc:`chapter 9 </book/09_nystroem_vs_rff>`).

    Rows with a missing value (``?``) are dropped, which leaves 30 162 training and 15 060 test
    rows, the sizes used by Yang et al. (2012). Features are built from the training split only (the
    test split reuses its categories, means and bin edges):

    * ``encoding="onehot"`` (default): the 8 categorical attributes one-hot encoded (98
      columns, from the categories present in the training rows) and the 6 numeric attributes
      standardized to mean 0 and variance 1: **104 features**.
    * ``encoding="binary"``: every attribute 0/1, as in the LIBSVM ``a9a`` file whose 123
      features that study quotes: the numeric attributes are cut into training quintiles (ties
      merge bins, e.g. capital-gain is 0 for 92 % of people) and one-hot encoded. This gives
      **about 120 features**; a9a has 123 because it also keeps ``?`` as a category.

    Parameters
    ----------
    encoding : {"onehot", "binary"}
    data_home : str or path, optional
        Folder with ``adult.data.gz`` and ``adult.test.gz``; default ``$KERNELCOURSE_DATA``,
        then the cache folder, then a download of the UCI archive. A leading ``~`` is expanded
        (in ``$KERNELCOURSE_DATA`` too); an empty string or a file is refused with ValueError.
    download : bool
        Whether to download missing files.

    Returns
    -------
    Bunch
        ``X_train, y_train, X_test, y_test`` (float64 features, labels 1 for ">50K" and 0
        otherwise) and ``feature_names``.

    Examples
    --------
    >>> from kernelcourse.datasets import load_adult
    >>> adult = load_adult()
    >>> print(adult.X_train.shape, adult.X_test.shape, sorted(set(adult.y_train.tolist())))
    (30162, 104) (15060, 104) [0, 1]
    """
    if encoding not in ("onehot", "binary"):
        raise ValueError(f"encoding must be 'onehot' or 'binary', got {encoding!r}.")
    tables = {}
    for split in ("data", "test"):
        (text,) = _fetch(f"adult.{split}", data_home=data_home, download=download).values()
        tables[split] = _parse_adult(text.decode("ascii"))
    (A_train, y_train), (A_test, y_test) = tables["data"], tables["test"]
    blocks_train, blocks_test, names = [], [], []
    for j, col in enumerate(ADULT_COLUMNS):
        a_tr, a_te = A_train[:, j], A_test[:, j]
        if j in _ADULT_CONTINUOUS:
            x_tr, x_te = a_tr.astype(np.float64), a_te.astype(np.float64)
            if encoding == "onehot":
                mean, std = x_tr.mean(), x_tr.std() or 1.0  # a constant column stays 0
                blocks_train.append(((x_tr - mean) / std)[:, None])
                blocks_test.append(((x_te - mean) / std)[:, None])
                names.append(col)
                continue
            edges = np.unique(np.quantile(x_tr, [0.2, 0.4, 0.6, 0.8]))
            a_tr, a_te = (
                np.searchsorted(edges, x_tr, "right"),
                np.searchsorted(edges, x_te, "right"),
            )
            levels = np.arange(len(edges) + 1)
            lows = np.concatenate([[-np.inf], edges])
            labels = [f"{col}>={lo:g}" if np.isfinite(lo) else f"{col}<{edges[0]:g}" for lo in lows]
        else:
            levels = np.unique(a_tr)
            labels = [f"{col}={v}" for v in levels]
        blocks_train.append((a_tr[:, None] == levels[None, :]).astype(np.float64))
        blocks_test.append((a_te[:, None] == levels[None, :]).astype(np.float64))
        names.extend(labels)
    return Bunch(
        X_train=np.hstack(blocks_train),
        y_train=y_train,
        X_test=np.hstack(blocks_test),
        y_test=y_test,
        feature_names=np.array(names),
    )


# -- UCI Covertype ------------------------------------------------------------------------------
COVTYPE_COLUMNS = (
    "Elevation", "Aspect", "Slope", "Horizontal_Distance_To_Hydrology",
    "Vertical_Distance_To_Hydrology", "Horizontal_Distance_To_Roadways", "Hillshade_9am",
    "Hillshade_Noon", "Hillshade_3pm", "Horizontal_Distance_To_Fire_Points",
    *(f"Wilderness_Area{i}" for i in range(1, 5)),
    *(f"Soil_Type{i}" for i in range(1, 41)),
)  # fmt: skip


def _is_count(value):
    """An integer, numpy's included, but not a bool."""
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


def _float_dtype(dtype):
    """``np.dtype(dtype)``, a float of at least 32 bits: the raw columns reach 7 173, which an
    integer dtype such as int8 wraps around and float16 rounds (errors name ``dtype``)."""
    try:
        dt = np.dtype(dtype)
    except TypeError as err:
        raise TypeError(f"dtype must be a numpy float dtype, got {dtype!r} ({err}).") from None
    if dt not in (np.float32, np.float64):  # float16 rounds the columns; longdouble is not
        raise ValueError(f"dtype must be float32 or float64, got {dt.name}.")
    return dt


def _check_download(download):
    """Refuse (naming ``download``) anything but True or False: "no" would count as True
    and start a download."""
    if not isinstance(download, (bool, np.bool_)):
        raise TypeError(f"download must be True or False, got {download!r}.")


def _check_seed(random_state):
    """Refuse (naming ``random_state``) a seed that ``np.random.default_rng`` cannot take,
    before the file is read."""
    try:
        np.random.default_rng(random_state)
    except (TypeError, ValueError) as err:
        raise type(err)(f"random_state: {err}") from None


def _parse_covtype(text):
    """Complete lines of covtype.data (bytes) -> an int64 array of shape (rows, 55)."""
    if not text:
        return np.empty((0, 55), dtype=np.int64)
    flat = np.fromstring(text.replace(b"\n", b","), dtype=np.int64, sep=",")  # noqa: NPY201
    return flat.reshape(-1, 55)


def load_covertype_full(*, dtype=np.float64, data_home=None, download=True):
    """All 581 012 Covertype rows in their original order, unscaled: ``X`` (581 012 × 54, as
    ``dtype``, float32 or float64) and the cover types ``y`` in 1..7. :func:`load_covertype`
    splits and scales it."""
    dtype = _float_dtype(dtype)
    (text,) = _fetch("covtype", data_home=data_home, download=download).values()
    data = _parse_covtype(text)
    return data[:, :54].astype(dtype), data[:, 54]


def _covertype_split(n, n_test, random_state):
    """Test rows of the seeded split of :func:`load_covertype`, as a boolean mask."""
    order = np.random.default_rng(random_state).permutation(n)
    is_test = np.zeros(n, dtype=bool)
    is_test[order[:n_test]] = True
    return is_test


def _covtype_path(data_home, download):
    """The local covtype.data.gz, downloaded (and verified) first if it is nowhere on disk."""
    _check_download(download)
    source = SOURCES["covtype"]
    for d in _search_dirs(data_home):
        if (d / source.filename).is_file():
            return d / source.filename
    _fetch("covtype", data_home=data_home, download=download)
    target = _data_home(data_home) or cache_dir()
    return target / source.filename


def _stream_covtype_text(path, piece=2**22):
    """Yield the decompressed text of ``path`` in pieces that end at a line break."""
    rest = b""
    with gzip.open(path, "rb") as f:
        while True:
            block = f.read(piece)
            if not block:
                break
            block = rest + block
            cut = block.rfind(b"\n") + 1
            rest = block[cut:]
            if cut:
                yield block[:cut]
    if rest:
        yield rest


def _verify_covtype_stream(path):
    """Stream ``path`` once: check the sha256 of its content, return its number of rows."""
    source = SOURCES["covtype"]
    ((name, expected),) = source.content_sha256.items()
    digest, rows = hashlib.sha256(), 0
    try:
        with gzip.open(path, "rb") as f:
            for block in iter(lambda: f.read(2**22), b""):
                digest.update(block)
                rows += block.count(b"\n")
    except (OSError, EOFError, zlib.error) as err:
        # zlib.error: a damaged deflate stream inside an intact gzip header
        raise ChecksumError(f"{path} is not a readable {source.filename}: {err}") from err
    if digest.hexdigest() != expected:
        raise ChecksumError(
            f"{path}: sha256 of {name} is {digest.hexdigest()}, expected {expected}. The file "
            "is corrupt or a different version; delete it and load again."
        )
    return rows


def iter_covertype_chunks(
    chunk_size=50_000,
    *,
    split=None,
    n_test=10_000,
    random_state=0,
    standardize=False,
    dtype=np.float64,
    shuffle_buffer=0,
    shuffle_seed=None,
    data_home=None,
    download=True,
):
    """Stream Covertype from the compressed file in blocks of rows, never holding all of X.

    The out-of-core reader of strategy ⑤ (:doc:`chapter 3 </book/03_kernel_trick_six_ways>`,
    :doc:`chapter 11 </book/11_scaling_up>`): the gzip file is decompressed a few megabytes at a
    time and parsed into blocks of at most ``chunk_size`` rows, in file order, so memory stays
    O(chunk_size · 55) whatever the file's size. Before the first block is yielded the whole file is
    streamed once to check the SHA-256 of its content (as the loaders do) and to count its rows, so
    a corrupt file raises :class:`ChecksumError` before any of it is used.

    With ``split="train"`` or ``"test"`` only the rows that :func:`load_covertype` with the
    same ``n_test`` and ``random_state`` (and ``n_train=None``) puts in that split are yielded,
    still in file order; with ``standardize=True`` the 10 numeric columns are standardized
    with the training split's mean and standard deviation, computed in one more streaming
    pass (Chan et al.'s pairwise update of mean and squared deviations), so that the blocks
    hold the rows of :func:`load_covertype` up to round-off.

    Parameters
    ----------
    chunk_size : int >= 1, default=50 000
        Most rows per block (a split yields the rows of each block that belong to it).
    split : {None, "train", "test"}, default=None
        None yields every row.
    n_test : int, default=10 000
        Size of the test split, as in :func:`load_covertype`.
    random_state : int, default=0
        Seed of the split, as in :func:`load_covertype`.
    standardize : bool, default=False
        Standardize the 10 numeric columns with training statistics.
    dtype : numpy dtype, default=float64
        dtype of the yielded X blocks, float32 or float64.
    shuffle_buffer : int >= 0, default=0
        With 0, blocks come in file order. The file is sorted by region, so the share of each
        cover type drifts from block to block, which biases SGD (each step follows the recent
        blocks). With ``shuffle_buffer = B > 0`` the rows pass through a buffer of B rows that
        is shuffled whenever it is full; each yielded block is drawn from it, so rows up to B
        apart in the file are mixed, at the cost of B rows of memory (B · 54 numbers, e.g.
        43 MB for B = 200 000 in float32). Every row is still yielded exactly once.
    shuffle_seed : int, RandomState instance or None, default=None
        Seed of the buffer's shuffles (a new pass with the same seed repeats the order; pass
        a different seed per epoch for a different order).
    data_home, download
        As in :func:`load_adult`; a missing file is downloaded (and verified) once into the
        cache folder, then streamed from there.

    Yields
    ------
    X : ndarray of shape (m, 54)
    y : ndarray of shape (m,)
        Cover types 1..7.

    Raises
    ------
    TypeError, ValueError
        When it is called, before any file is read, if an argument is of the wrong type or
        out of range (the error names it); ``n_test`` beyond the file's rows is found with the
        first block.
    """
    from sklearn.utils import check_random_state

    if not (_is_count(chunk_size) and chunk_size >= 1):
        raise ValueError(f"chunk_size must be an integer >= 1 (not a bool), got {chunk_size!r}.")
    if split not in (None, "train", "test"):
        raise ValueError(f"split must be None, 'train' or 'test', got {split!r}.")
    if not isinstance(standardize, bool):
        raise TypeError(f"standardize must be True or False, got {standardize!r}.")
    dtype = _float_dtype(dtype)
    if (split is not None or standardize) and not _is_count(n_test):
        raise ValueError(f"n_test must be an integer (not a bool), got {n_test!r}.")
    if split is not None:
        _check_seed(random_state)
    if not (_is_count(shuffle_buffer) and shuffle_buffer >= 0):
        raise ValueError(
            f"shuffle_buffer must be an integer >= 0 (not a bool), got {shuffle_buffer!r}."
        )
    try:
        shuffle_rng = check_random_state(shuffle_seed)
    except (TypeError, ValueError) as err:
        raise type(err)(f"shuffle_seed: {err}") from None
    _search_dirs(data_home)  # its type
    _check_download(download)
    # the checks above run when this is called; the blocks (and the file) when iterated
    blocks = _covertype_split_blocks(
        chunk_size, split, n_test, random_state, standardize, dtype, data_home, download
    )
    if shuffle_buffer:
        blocks = _shuffled(blocks, int(shuffle_buffer), int(chunk_size), shuffle_rng)
    return blocks


def _covertype_split_blocks(
    chunk_size, split, n_test, random_state, standardize, dtype, data_home, download
):
    path = _covtype_path(data_home, download)
    n = _verify_covtype_stream(path)
    if split is not None or standardize:
        if not (_is_count(n_test) and 0 <= n_test < n):
            raise ValueError(f"n_test must be an integer in [0, {n}) (not a bool), got {n_test!r}.")
        is_test = _covertype_split(n, int(n_test), random_state)
    mean, std = np.zeros(10), np.ones(10)
    if standardize:
        count, mean, m2 = 0, np.zeros(10), np.zeros(10)
        for rows, data in _covtype_blocks(path, chunk_size):
            x = data[~is_test[rows], :10].astype(np.float64)
            if len(x) == 0:
                continue
            bm, bm2 = x.mean(axis=0), ((x - x.mean(axis=0)) ** 2).sum(axis=0)
            delta, total = bm - mean, count + len(x)
            mean = mean + delta * len(x) / total
            m2 = m2 + bm2 + delta**2 * count * len(x) / total
            count = total
        std = np.sqrt(m2 / count)
        std[std == 0] = 1.0
    for rows, data in _covtype_blocks(path, chunk_size):
        if split is not None:
            data = data[is_test[rows] == (split == "test")]
        X = data[:, :54].astype(dtype)
        if standardize:
            X[:, :10] = ((data[:, :10] - mean) / std).astype(dtype)
        yield X, data[:, 54]


def _shuffled(blocks, buffer_rows, chunk_size, seed):
    """Blocks of ``chunk_size`` rows drawn from a shuffled buffer of ``buffer_rows`` rows (the
    shuffle buffer of streaming data loaders): whenever the buffer is full, it is permuted and
    one block leaves it; at the end the rest leaves in shuffled blocks."""
    from sklearn.utils import check_random_state

    rng = check_random_state(seed)
    X_buf, y_buf = [], []
    held = 0
    for X, y in blocks:
        X_buf.append(X)
        y_buf.append(y)
        held += len(y)
        while held >= buffer_rows + chunk_size:
            X_all, y_all = np.concatenate(X_buf), np.concatenate(y_buf)
            order = rng.permutation(held)
            X_all, y_all = X_all[order], y_all[order]
            yield X_all[:chunk_size], y_all[:chunk_size]
            X_buf, y_buf = [X_all[chunk_size:]], [y_all[chunk_size:]]
            held -= chunk_size
    if held:
        X_all, y_all = np.concatenate(X_buf), np.concatenate(y_buf)
        order = rng.permutation(held)
        X_all, y_all = X_all[order], y_all[order]
        for start in range(0, held, chunk_size):
            yield X_all[start : start + chunk_size], y_all[start : start + chunk_size]


def _covtype_blocks(path, chunk_size):
    """(row indices, int64 rows) blocks of at most chunk_size rows of the gzip file."""
    pending, start = [], 0
    held = 0
    for text in _stream_covtype_text(path):
        pending.append(_parse_covtype(text))
        held += len(pending[-1])
        while held >= chunk_size:
            data = np.concatenate(pending)
            yield np.arange(start, start + chunk_size), data[:chunk_size]
            start += chunk_size
            pending, held = [data[chunk_size:]], len(data) - chunk_size
    if held:
        data = np.concatenate(pending)
        yield np.arange(start, start + len(data)), data


def load_covertype(*, n_train=40_000, n_test=10_000, random_state=0, data_home=None, download=True):
    """UCI Covertype ("Forest CoverType"): 54 cartographic features, 7 cover types.

    The full set has 581 012 rows. Yang et al. (2012) train on 40 000 and test on 10 000; here the
    rows are shuffled with ``random_state`` and the first ``n_test`` form the test set, the next
    ``n_train`` the training set, so the two never overlap and a seed fixes both. The 10
    numeric columns are standardized with the training mean and standard deviation; the 44
    indicator columns (4 wilderness areas, 40 soil types) stay 0/1.

    Parameters
    ----------
    n_train : int or None
        Training rows; None takes every row not in the test set.
    n_test : int
        Test rows (0 allowed).
    random_state : int
        Seed of the shuffle.
    data_home, download
        As in :func:`load_adult`.

    Returns
    -------
    Bunch
        ``X_train, y_train, X_test, y_test`` (labels 1..7) and ``feature_names``.
    """
    if not _is_count(n_test):
        raise ValueError(f"n_test must be an integer (not a bool), got {n_test!r}.")
    if n_train is not None and not _is_count(n_train):
        raise ValueError(f"n_train must be None or an integer (not a bool), got {n_train!r}.")
    _check_seed(random_state)
    X, y = load_covertype_full(data_home=data_home, download=download)
    n = len(X)
    if not 0 <= n_test < n:
        raise ValueError(f"n_test must be an integer in [0, {n}), got {n_test!r}.")
    n_test = int(n_test)
    if n_train is not None and not 0 < n_train <= n - n_test:
        raise ValueError(
            f"n_train must be None or an integer in [1, {n - n_test}], got {n_train!r}."
        )
    n_train = None if n_train is None else int(n_train)
    order = np.random.default_rng(random_state).permutation(n)
    test = order[:n_test]
    train = order[n_test:] if n_train is None else order[n_test : n_test + n_train]
    X_train, X_test = X[train], X[test]
    mean, std = X_train[:, :10].mean(axis=0), X_train[:, :10].std(axis=0)
    std[std == 0] = 1.0
    X_train[:, :10] = (X_train[:, :10] - mean) / std
    X_test[:, :10] = (X_test[:, :10] - mean) / std
    return Bunch(
        X_train=X_train,
        y_train=y[train],
        X_test=X_test,
        y_test=y[test],
        feature_names=np.array(COVTYPE_COLUMNS),
    )


# -- MNIST --------------------------------------------------------------------------------------
def load_mnist(*, data_home=None, download=True):
    """MNIST: 70 000 handwritten digits (60 000 training, 10 000 test), 28 × 28 pixels.

    Returns
    -------
    Bunch
        ``X_train`` (60000, 784) and ``X_test`` (10000, 784) as float32 in [0, 1] (pixel / 255),
        ``y_train`` and ``y_test`` (int64 digits 0..9), ``feature_names`` ("pixel_r_c").
    """
    parts = _fetch("mnist", data_home=data_home, download=download)
    scale = lambda a: a.reshape(len(a), -1).astype(np.float32) / 255.0  # noqa: E731
    return Bunch(
        X_train=scale(parts["x_train"]),
        y_train=parts["y_train"].astype(np.int64),
        X_test=scale(parts["x_test"]),
        y_test=parts["y_test"].astype(np.int64),
        feature_names=np.array([f"pixel_{r}_{c}" for r in range(28) for c in range(28)]),
    )


def benchmark_results_dir():
    """The folder of the benchmark records that ship with the package.

    ``python -m benchmarks`` writes its full-data runs here (one JSON file per benchmark, with
    the machine, the date and the versions), so that an installed package, and a chapter run
    outside the repository, read the same numbers the book quotes.
    """
    return pathlib.Path(__file__).resolve().parent / "benchmark_results"


def load_benchmark(name):
    """The stored benchmark record ``name`` (for example ``"scale_covertype"``) as a dict.

    Parameters
    ----------
    name : str
        File stem of a record in :func:`benchmark_results_dir`.

    Returns
    -------
    dict
        The record as written by ``python -m benchmarks``: ``date``, ``machine``, ``settings``
        and ``runs`` among its keys.

    Examples
    --------
    >>> from kernelcourse.datasets import load_benchmark
    >>> record = load_benchmark("scale_covertype")
    >>> print({"date", "machine", "settings", "runs"} <= set(record))
    True
    """
    import json

    if not isinstance(name, str) or not name or not name.replace("_", "").isalnum():
        raise ValueError(f"name must be the stem of a stored benchmark record, got {name!r}.")
    # the name is looked up among the records, not as a path: a name of 300 letters failed
    # in the file system with "[Errno 36] File name too long"
    known = sorted(p.stem for p in benchmark_results_dir().glob("*.json"))
    if name not in known:
        raise ValueError(f"no stored benchmark record {name!r}; known records: {known}.")
    path = benchmark_results_dir() / f"{name}.json"
    return json.loads(path.read_text(encoding="utf-8"))
