"""Shared fixtures.

``repo_module(path)`` imports a script of the repository that is not a package module
(``benchmarks/...``, ``scripts/...``) by its path from the repository root.

``dataset_path(name)`` gives the folder of a real benchmark dataset under ``GBRANK_DATA``
(``gbrank.datasets.resolve``), or skips the test, saying why, when it is not there::

    def test_mq2008_folds(dataset_path):
        folds = load_letor_folds(dataset_path("mq2008"))
"""

from __future__ import annotations

import functools
import importlib.util
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


@functools.cache
def load_repo_module(path: str):
    """The module of the repository script at ``path`` (relative to the root), loaded once."""
    spec = importlib.util.spec_from_file_location(pathlib.Path(path).stem, ROOT / path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def repo_module():
    """``repo_module("benchmarks/x.py")`` -> the loaded script (see :func:`load_repo_module`)."""
    return load_repo_module


def find_dataset(name: str) -> pathlib.Path:
    """The resolved folder of dataset ``name``, or ``pytest.skip`` naming GBRANK_DATA."""
    from gbrank.datasets import DATASETS, resolve  # lazy: keep collection light

    if name not in DATASETS:  # a typo must fail, not skip
        raise ValueError(f"unknown dataset {name!r}; known names: {sorted(DATASETS)}")
    try:
        return resolve(name)
    except FileNotFoundError as err:
        pytest.skip(f"dataset {name!r} not available: {err}")


@pytest.fixture(scope="session")
def dataset_path():
    """``dataset_path(name) -> pathlib.Path``, skipping the test when the data is absent."""
    return find_dataset
