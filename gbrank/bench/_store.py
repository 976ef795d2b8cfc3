"""The run store of every ``gbrank bench`` command: finished runs in ``OUT/runs``, one file each.

A run is a few arrays and a JSON record, saved as ``<name>.npz`` (arrays plus ``record``).
Its name ends in a hash of everything that determines its result (:func:`key`), so runs with
other settings never collide.  The store guarantees:

* **Versions.** The record holds the versions the result depends on (``record["versions"]``);
  a stored run made under other versions is *stale* and trained again.  A run saved before
  records held versions is reused.
* **Atomic writes.** A run is written to a unique temporary file in the same folder and moved
  into place with ``os.replace``: a reader sees the whole file or none, and an interrupted
  write leaves no partial run (the temporary file is removed).
* **Unreadable files.** A truncated or corrupt run file is reported by a ``RuntimeWarning``
  that names it, and the run is trained again.
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
import hashlib
import io
import json
import os
import pathlib
import re
import tempfile
import warnings
import zipfile
from typing import Callable, Iterator

import numpy as np

SUFFIX = ".npz"
LOCKS = ".locks"
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
    with np.load(path) as f:
        arrays = {k: f[k] for k in f.files if k != "record"}
        record = json.loads(str(f["record"]))
    return Run(arrays, record)


def write_atomic(path: pathlib.Path, write: Callable[[io.BufferedWriter], None]) -> None:
    """``write(file)`` into a unique temporary file beside ``path``, then move it to ``path``."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def retrain_notes(counts: dict) -> str:
    """The log's words on cached runs that are trained again (``counts`` from the scan of a
    store: ``"stale"`` runs made under other library versions, ``"unreadable"`` files)."""
    return ((f"; {counts['stale']} cached run(s) were made under other library versions and are trained again"
             if counts.get("stale") else "")
            + (f"; {counts['unreadable']} cached run file(s) could not be read and are trained again"
               if counts.get("unreadable") else ""))


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
        """The stored run ``name``; None when there is none or its file cannot be read (with a
        ``RuntimeWarning`` naming the file when ``warn``)."""
        path = self.path(name)
        if not path.exists():
            return None
        try:
            return read_run(path)
        except _UNREADABLE as exc:
            if warn:
                warnings.warn(f"cached run {path} cannot be read ({type(exc).__name__}: {exc}); "
                              "it is trained again", RuntimeWarning, stacklevel=2)
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
            arrays, record = train()
            record = {**record, "versions": versions}
            self.save(name, arrays, record)
            return Run(arrays, record), True
