"""pytest's root configuration: the docstring examples of ``gbrank/`` run as tests.

``pyproject.toml`` turns on ``--doctest-modules`` over ``testpaths = ["tests", "gbrank"]``, so
``bash scripts/test.sh`` runs every ``>>>`` example.  An example that needs something the
machine may lack skips, saying why, instead of failing:

* an optional library (``NEEDS_LIBRARY``): ``gbrank/torch`` is not even collected without
  torch (collecting a module imports it); the other modules import their library lazily,
  so their examples are collected and skipped;
* a real data set under ``GBRANK_DATA`` (``NEEDS_DATA``), as ``tests/conftest.py``'s
  ``dataset_path`` fixture does for the tests.
"""

from __future__ import annotations

import importlib.util

import pytest

# Module (prefix) whose examples use a library -> that library.
NEEDS_LIBRARY = {
    "gbrank.torch": "torch",
    "gbrank.dask": "dask",
    "gbrank.estimators": "lightgbm",
    "gbrank.backends._lightgbm": "lightgbm",
    "gbrank.bench": "matplotlib",
}

# Doctest (qualified name) -> the named data set (gbrank.datasets.DATASETS) it reads.
NEEDS_DATA = {
    "gbrank.datasets._letor.load_letor": "mq2008",
    "gbrank.datasets._letor.load_letor_folds": "mq2008",
    "gbrank.datasets._interactions.load_movielens": "movielens-latest-small",
    "gbrank.datasets._interactions.load_citeulike": "citeulike-a",
}


def _missing(library: str) -> bool:
    return importlib.util.find_spec(library) is None


collect_ignore_glob = ["gbrank/torch/*.py"] if _missing("torch") else []


def pytest_runtest_setup(item):
    if type(item).__name__ != "DoctestItem":
        return
    for prefix, library in NEEDS_LIBRARY.items():
        if (item.name == prefix or item.name.startswith(prefix + ".")) and _missing(library):
            pytest.skip(f"this example needs {library}, which is not installed")
    if item.name in NEEDS_DATA:
        from gbrank.datasets import resolve

        try:
            resolve(NEEDS_DATA[item.name])
        except FileNotFoundError as err:
            pytest.skip(f"this example reads data set {NEEDS_DATA[item.name]!r}: {err}")
