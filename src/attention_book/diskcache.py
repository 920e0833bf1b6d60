"""A disk cache for the deterministic results the chapters compute in every execution.

The strict build executes every chapter, and the tests execute them again live in
JupyterLab: a result that takes seconds (chapter 8's trained models, head scores at every
checkpoint, continuations and generation counts; chapter 9's gallery scores, syntax scores
and head removals) is kept in a file, so that the second execution reads what the first
computed. A file is used only when its key matches: the arguments, a digest of the source
code that computes the result, and the versions of what computes it. Editing that code, or
passing other arguments, computes again; a damaged file is computed again and replaced.

The folder is ``$ATTENTION_BOOK_CACHE/<name>`` when the variable is set, else
``_build/cache/<name>`` in the source checkout the package lives in (``make clean``
removes it with the rest of ``_build``); an installed package outside a checkout has no
folder of its own to write into, and keeps nothing on disk.

Files are ``numpy.savez`` archives of named arrays, loaded without pickle, and written
atomically (a temporary file in the same folder, then renamed), so that two kernels
computing the same result at the same time never read half a file. And while one process
computes a file, another that wants the same file waits for it (:func:`computing`) rather
than computing it a second time: on a fresh clone the build's data step and chapter 8's
kernel both want the two trained models at once.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import os
import sys
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np

__all__ = ["CACHE_ENV", "source_digest", "module_digest", "folder", "cache_file", "load",
           "save", "computing", "load_or_make", "cached_arrays"]

#: The environment variable that names the caches' root folder.
CACHE_ENV = "ATTENTION_BOOK_CACHE"

_log = logging.getLogger(__name__)
_KEY = "cache/key"  # the array holding a file's key, as JSON


def source_digest(sources: Iterable[bytes]) -> str:
    """sha256 of source texts, each prefixed by its length so that none runs into the next.

    Parameters
    ----------
    sources : iterable of bytes

    Returns
    -------
    str
        64 hexadecimal digits.
    """
    digest = hashlib.sha256()
    for text in sources:
        digest.update(len(text).to_bytes(8, "little"))
        digest.update(text)
    return digest.hexdigest()


def module_digest(*names: str) -> str | None:
    """The :func:`source_digest` of imported modules' source files, or None when one of
    them has no readable source beside it (bytecode only: then no disk cache).

    Parameters
    ----------
    *names : str
        Module names, e.g. ``"attention_book.block"``; each must be imported already.
    """
    try:
        return source_digest(Path(sys.modules[name].__file__).read_bytes() for name in names)
    except (OSError, TypeError, KeyError):
        return None


def folder(name: str, anchor: str | os.PathLike) -> Path | None:
    """The folder of the cache ``name``, or None: no disk cache.

    Parameters
    ----------
    name : str
        E.g. ``"train"``.
    anchor : path
        A module file of the package (its ``__file__``): the checkout is the folder two
        above the package, recognised by the book's ``_config.yml``.
    """
    root = os.environ.get(CACHE_ENV)
    if root:
        return Path(root) / name
    checkout = Path(anchor).resolve().parents[2]
    if (checkout / "_config.yml").is_file():
        return checkout / "_build" / "cache" / name
    return None


def cache_file(where: Path | None, stem: str, key: str | None) -> Path | None:
    """``where/<stem>-<24 hex digits of the key's sha256>.npz``, or None when there is no
    folder or no key."""
    if where is None or key is None:
        return None
    return where / f"{stem}-{hashlib.sha256(key.encode()).hexdigest()[:24]}.npz"


def load(path: Path, read: Callable):
    """``read(data)`` of the archive at path (data: the open npz file), or None when there
    is no file, or it cannot be used: ``read`` returned None (made for another key) or
    anything went wrong reading it (a truncated zip, bad JSON, a missing array, a pickle).
    """
    try:
        with np.load(path, allow_pickle=False) as data:
            return read(data)
    except FileNotFoundError:
        return None
    except Exception as error:  # noqa: BLE001 - any damage means the same: compute again
        _log.info("ignoring the unreadable cache file %s (%s: %s)", path,
                  type(error).__name__, error)
        return None


def save(path: Path, arrays: dict) -> bool:
    """Write named arrays to path atomically; on failure (a read-only or full disk) keep
    going and return False.

    The arrays go to a temporary file in the same folder, which ``os.replace`` then
    renames: a reader sees either no file or a whole one.
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=path.stem + ".",
                                             suffix=".tmp")
        try:
            with os.fdopen(handle, "wb") as out:
                np.savez(out, **arrays)
            os.chmod(temporary, 0o644)  # as an ordinary file, not mkstemp's owner-only 0600
            os.replace(temporary, path)
        finally:
            with contextlib.suppress(FileNotFoundError):  # gone once renamed
                os.unlink(temporary)
    except OSError as error:
        _log.info("could not write the cache file %s (%s)", path, error)
        return False
    return True


def load_or_make(path: Path, load_it: Callable, make: Callable):
    """``load_it()``, or, when that is None, ``make()`` (which computes and saves the file at
    path) while holding :func:`computing`: a process that waited there for another to make
    the same file loads it instead."""
    value = load_it()
    if value is None:
        with computing(path):
            value = load_it()  # made by another process while this one waited
            if value is None:
                value = make()
    return value


@contextlib.contextmanager
def computing(path: Path):
    """Held while this process computes the file at path: a second process computing the
    same file waits here until the first has saved it (:func:`load_or_make` then loads it).
    The lock is ``<cache root>/.locks/<file name>.lock``, beside the caches' folders rather
    than in them; without a writable folder nothing waits."""
    locks = path.parent.parent / ".locks"
    try:
        locks.mkdir(parents=True, exist_ok=True)
        lock = open(locks / f"{path.name}.lock", "a")  # noqa: SIM115 - closed below
    except OSError:
        yield
        return
    with lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)  # released when the file closes
        yield


def _numpy_machine() -> dict:
    """What besides numpy's version decides its float results: the SIMD features its
    loops dispatch on (the same version may sum in another order on another CPU)."""
    try:
        from numpy._core._multiarray_umath import __cpu_features__ as features
    except ImportError:  # numpy < 2
        from numpy.core._multiarray_umath import __cpu_features__ as features
    return {"numpy": np.__version__,
            "simd": sorted(name for name, present in features.items() if present)}


def cached_arrays(name: str, arguments, code: str | None, compute: Callable[[], dict],
                  *, versions: dict | None = None, cache: bool = True,
                  anchor: str | os.PathLike = __file__) -> dict:
    """``compute()``'s named arrays, from the disk cache when it holds them for this key.

    Parameters
    ----------
    name : str
        The cache's folder name, ``_build/cache/<name>``, and the files' stem.
    arguments : JSON-serialisable
        Everything the result depends on besides the code and the versions.
    code : str or None
        A digest of the source that computes the result (:func:`module_digest`); None
        means the source is unreadable: compute, and keep nothing on disk.
    compute : callable
        Returns a dict of name -> numpy.ndarray (no object arrays).
    versions : dict, optional
        Versions of what else decides the result (e.g. the model's); numpy's version and
        the CPU's SIMD features are always in the key.
    cache : bool
        False computes afresh, and neither reads nor writes the disk.

    Returns
    -------
    dict of str -> numpy.ndarray
    """
    where = folder(name, anchor) if cache and code is not None else None
    key = json.dumps({"arguments": arguments, "code": code, **_numpy_machine(),
                      **(versions or {})})
    path = cache_file(where, name, key)
    if path is None:
        return compute()

    def read(data):
        if str(data[_KEY][()]) != key:  # a name collision, or a file copied from elsewhere
            return None
        arrays = {k: data[k] for k in data.files if k != _KEY}
        _log.info("loaded %s from %s", name, path)
        return arrays

    def make():
        arrays = compute()
        if save(path, {**arrays, _KEY: np.array(key)}):
            _log.info("saved %s to %s", name, path)
        return arrays

    return load_or_make(path, lambda: load(path, read), make)
