"""The registry of boosting libraries: name -> :class:`Backend` record."""

from __future__ import annotations

from ._catboost import CATBOOST
from ._lightgbm import LIGHTGBM
from ._record import Backend
from ._xgboost import XGBOOST

BACKENDS: dict[str, Backend] = {b.name: b for b in (LIGHTGBM, XGBOOST, CATBOOST)}


def get_backend(name: str) -> Backend:
    """The record of library ``name``; ``ValueError`` listing the known ones otherwise."""
    if name not in BACKENDS:
        raise ValueError(f"backend must be one of {sorted(BACKENDS)}, got {name!r}")
    return BACKENDS[name]
