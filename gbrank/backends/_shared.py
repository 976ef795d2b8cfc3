"""Training data built once and shared by several fits (``shared_datasets``).

A LightGBM ``Dataset`` or an XGBoost ``QuantileDMatrix`` holds the features binned; the
binning depends on the data and on a few parameters (``max_bin``, ...), not on the
objective.  A benchmark trains many objectives on one fold: inside ``shared_datasets(scope)``
each distinct training or validation set is built once and every later fit on the same
arrays reuses it.  A set is the same when it is the same feature array object (held by
the entry, so its id cannot be reused) with equal labels, query boundaries and weights,
and the same construction options.  LightGBM itself rebuilds a kept ``Dataset`` (its raw
data is kept: ``free_raw_data=False``) when a later fit's parameters change its binning,
so the models are those of a construction per fit (``tests/test_shared_datasets.py``).
"""

from __future__ import annotations

import contextlib
import hashlib
import threading

import numpy as np

_lock = threading.Lock()
_state = {"scope": None, "active": 0, "entries": {}, "built": 0}


@contextlib.contextmanager
def shared_datasets(scope):
    """Share the training and validation sets of the fits inside the block.

    ``scope`` names the data (e.g. a fold and its fingerprint): entering another scope frees
    the sets of the previous one (so a benchmark holds one fold's sets at a time); the sets
    of a scope are kept after the block, for the next block of the same scope, until
    :func:`free_shared_datasets`.  Outside any block every fit builds its own sets."""
    with _lock:
        if _state["scope"] != scope:
            _state["entries"].clear()
            _state["scope"] = scope
        _state["active"] += 1
    try:
        yield
    finally:
        with _lock:
            _state["active"] -= 1


def free_shared_datasets() -> None:
    """Drop every shared set (and the references to its arrays)."""
    with _lock:
        _state["entries"].clear()
        _state["scope"] = None


def shared_builds() -> int:
    """How many sets ``shared_or_built`` has built inside a sharing block, in this process."""
    return _state["built"]


def _digest(a) -> str | None:
    if a is None:
        return None
    a = np.ascontiguousarray(a)
    h = hashlib.sha1(str((a.shape, a.dtype.str)).encode())
    h.update(a.data)  # the buffer itself, no bytes copy
    return h.hexdigest()


def shared_or_built(library: str, role: str, X, labels, ptr, weight, options: tuple, build):
    """``build()``, or the set built before for the same arguments inside an active
    ``shared_datasets`` block.  ``role`` tells training from validation sets; ``options``
    (hashable) holds what else the construction depends on (``max_bin``, the reference)."""
    if not _state["active"]:
        return build()
    key = (library, role, id(X), getattr(X, "shape", None), _digest(labels), _digest(ptr), _digest(weight),
           options)
    with _lock:
        entry = _state["entries"].get(key)
    if entry is not None and entry[0] is X:
        return entry[1]
    made = build()
    with _lock:
        _state["entries"][key] = (X, made)
        _state["built"] += 1
    return made
