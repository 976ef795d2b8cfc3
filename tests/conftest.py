"""Shared fixtures.

``dataset_path(name)`` gives the folder of a real benchmark dataset under ``GBRANK_DATA``
(``gbrank.datasets.resolve``), or skips the test, saying why, when it is not there::

    def test_mq2008_folds(dataset_path):
        folds = load_letor_folds(dataset_path("mq2008"))
"""

from __future__ import annotations

import pathlib

import pytest


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
