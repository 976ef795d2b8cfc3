"""The run store of every ``gbrank bench`` command: finished runs in ``OUT/runs``, one file each.

A run is a few arrays and a JSON record, saved as ``<name>.npz`` (arrays plus ``record``).
Its name ends in a hash of everything that determines its result (:func:`key`), so runs with
other settings never collide.  The store guarantees:

* **Versions.** The record holds the versions the result depends on (``record["versions"]``);
  a stored run made under other versions is *stale* and trained again.  A run saved before
  records held versions is reused.
* **Atomic writes.** A run is written to a unique temporary file in the same folder and moved
  into place with ``os.replace``: a reader sees the whole file or none, and a write that
  fails leaves no partial run (the temporary file is removed); a temporary file left by a
  process that was killed is removed by the next :meth:`RunStore.claim` of that run.  Files
  are created with mode ``0o666`` less the umask, as ``open`` creates them (readable by
  others under the usual umask 022).
* **Unreadable files.** A truncated or corrupt run file is reported by one ``logging``
  warning (logger ``gbrank.bench._store``) that names it and says it is trained again.
* **Locks, one per run.** :meth:`RunStore.claim` trains a run under an exclusive
  ``fcntl.flock`` on ``runs/.locks/<name>.lock`` and first looks again whether another
  process has finished it meanwhile.  Two processes writing into one ``--out`` folder thus
  never train or write the same run twice, and share the work: each takes the runs no other
  process holds (``wait=False``), then waits for the ones still held.  The reports are written
  under one more lock (:meth:`RunStore.report_lock`).  Lock files stay (removing them would
  race with a process about to lock them); they are empty.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import glob
import hashlib
import io
import json
import logging
import os
import pathlib
import re
import secrets
import zipfile
from typing import Callable, Iterator

import numpy as np

from gbrank._validation import plural

SUFFIX = ".npz"
LOCKS = ".locks"
TEMPORARY = ".tmp"
logger = logging.getLogger(__name__)
#: What reading a damaged ``.npz`` can raise.
_UNREADABLE = (OSError, EOFError, ValueError, KeyError, zipfile.BadZipFile, json.JSONDecodeError)


def key(doc: dict, length: int = 16) -> str:
    """Hash of a JSON-serialisable ``doc`` (keys sorted): the part of a run's name that
    changes with anything that determines its result."""
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:length]


def slug(text: str) -> str:
    """``text`` with every run of characters unsafe in a file name replaced by ``_``."""
    return re.sub(r"[^A-Za-z0-9@.+_-]+", "_", text)


@dataclasses.dataclass(frozen=True)
class Run:
    """A finished run: its arrays and its record (JSON-serialisable)."""

    arrays: dict
    record: dict


def read_run(path) -> Run:
    """The run saved at ``path``; raises what numpy, zipfile or json raise on a damaged file."""
    with open(path, "rb") as handle, np.load(handle) as f:  # the file is closed even when numpy fails
        arrays = {k: f[k] for k in f.files if k != "record"}
        record = json.loads(str(f["record"]))
    return Run(arrays, record)


def _temporary(path: pathlib.Path) -> tuple[int, str]:
    """A new file ``.<name>.<random>.tmp`` beside ``path``, opened for writing: (fd, its path).

    Created by ``os.open`` with mode ``0o666``, so that the umask decides who may read it
    (``tempfile.mkstemp`` would make it ``0o600``, private to its owner, after the move too)."""
    while True:
        tmp = str(path.parent / f".{path.name}.{secrets.token_hex(6)}{TEMPORARY}")
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666), tmp
        except FileExistsError:  # pragma: no cover - 48 random bits taken
            continue


def write_atomic(path: pathlib.Path, write: Callable[[io.BufferedWriter], None]) -> None:
    """``write(file)`` into a unique temporary file beside ``path``, then move it to ``path``.

    The file gets mode ``0o666`` less the umask.  Whatever fails (``write``, the disk, an
    interrupt), the temporary file is removed and the error raised again."""
    fd, tmp = _temporary(path)
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _leftovers(path: pathlib.Path) -> list[pathlib.Path]:
    """Temporary files of ``path`` that a killed writer left behind."""
    return [p for p in path.parent.glob(f".{glob.escape(path.name)}.*{TEMPORARY}") if p.is_file()]


def retrain_notes(counts: dict) -> str:
    """The log's words on cached runs that are trained again (``counts`` from the scan of a
    store: ``"stale"`` runs made under other library versions, ``"unreadable"`` files)."""
    stale, unreadable = counts.get("stale", 0), counts.get("unreadable", 0)
    return ((f"; {plural(stale, 'cached run')} {'was' if stale == 1 else 'were'} made under other library "
             f"versions and {'is' if stale == 1 else 'are'} trained again" if stale else "")
            + (f"; {plural(unreadable, 'cached run file')} could not be read and {'is' if unreadable == 1 else 'are'} "
               "trained again" if unreadable else ""))


class RunStore:
    """Finished runs in ``folder`` (created on first write), one ``<name>.npz`` per run.

    Examples
    --------
    >>> import tempfile
    >>> store = RunStore(tempfile.mkdtemp())
    >>> name = "demo__" + key({"seed": 0})
    >>> store.state(name, {"numpy": np.__version__})[0]
    'missing'
    >>> run, trained = store.claim(name, {"numpy": np.__version__},
    ...                            lambda: ({"scores": np.arange(3.0)}, {"seed": 0}))
    >>> trained, store.state(name, {"numpy": np.__version__})[0], store.state(name, {"numpy": "0"})[0]
    (True, 'ok', 'stale')
    """

    def __init__(self, folder):
        self.folder = pathlib.Path(folder)

    def path(self, name: str) -> pathlib.Path:
        return self.folder / f"{name}{SUFFIX}"

    def load(self, name: str, *, warn: bool = True) -> Run | None:
        """The stored run ``name``; None when there is none or its file cannot be read (then,
        when ``warn``, one ``logging`` warning names the file and says it is trained again)."""
        path = self.path(name)
        if not path.exists():
            return None
        try:
            return read_run(path)
        except _UNREADABLE as exc:
            if warn:
                reason = " ".join(f"{type(exc).__name__}: {exc}".split())
                logger.warning("cached run %s cannot be read (%s); it will be trained again", path, reason)
            return None

    def state(self, name: str, versions: dict, *, warn: bool = True) -> tuple[str, Run | None]:
        """``("ok", run)`` for a reusable stored run, else ``("missing" | "unreadable" |
        "stale", None)``; stale: made under other versions than ``versions``."""
        if not self.path(name).exists():
            return "missing", None
        run = self.load(name, warn=warn)
        if run is None:
            return "unreadable", None
        if run.record.get("versions", versions) != versions:
            return "stale", None
        return "ok", run

    def save(self, name: str, arrays: dict, record: dict) -> pathlib.Path:
        """Write run ``name`` atomically (replacing a stored one); returns its path."""
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self.path(name)
        text = json.dumps(record, default=str)
        write_atomic(path, lambda f: np.savez_compressed(f, record=text, **arrays))
        return path

    @contextlib.contextmanager
    def _lock(self, lock_name: str, wait: bool) -> Iterator[bool]:
        folder = self.folder / LOCKS
        folder.mkdir(parents=True, exist_ok=True)
        with open(folder / f"{lock_name}.lock", "a") as f:
            try:
                fcntl.flock(f.fileno(), fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
            except BlockingIOError:
                yield False
                return
            try:
                yield True
            finally:
                fcntl.flock(f.fileno(), fcntl.LOCK_UN)

    def lock(self, name: str, *, wait: bool = True):
        """Context manager: hold the exclusive lock of run ``name``; yields False (without
        the lock) when ``wait`` is False and another process holds it."""
        return self._lock(name, wait)

    def report_lock(self):
        """Context manager: the lock held while a command writes its reports from the store."""
        return self._lock("report", True)

    def claim(self, name: str, versions: dict, train: Callable[[], tuple[dict, dict]], *,
              wait: bool = True) -> tuple[Run, bool] | None:
        """Under run ``name``'s lock: ``(stored run, False)`` when another process finished it
        meanwhile, else ``train() -> (arrays, record)`` saved with ``versions`` and returned as
        ``(run, True)``.  None when ``wait`` is False and another process holds the lock."""
        with self.lock(name, wait=wait) as held:
            if not held:
                return None
            state, run = self.state(name, versions, warn=False)
            if state == "ok":
                return run, False
            for tmp in _leftovers(self.path(name)):  # a writer of this run was killed: nobody writes it now
                with contextlib.suppress(FileNotFoundError):
                    tmp.unlink()
            arrays, record = train()
            record = {**record, "versions": versions}
            self.save(name, arrays, record)
            return Run(arrays, record), True
