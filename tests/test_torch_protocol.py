"""The torch side of the recommendation protocol: batching of the per-user lists (the
splits and negative sampling themselves: test_interactions.py)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")

from gbrank.interactions import csr_rows  # noqa: E402
from gbrank.torch._batching import bucket_batches, pad  # noqa: E402


def test_bucketing_keeps_padding_small_and_covers_every_list():
    rng = np.random.default_rng(0)
    lengths = rng.integers(1, 400, size=1000)
    batches = bucket_batches(np.arange(1000), lengths, 32, rng)
    assert sorted(np.concatenate(batches).tolist()) == list(range(1000))
    padded = sum(len(b) * lengths[b].max() for b in batches)
    assert padded < 1.1 * lengths.sum()  # random batches would pad about 1.9x
    ptr = np.concatenate([[0], np.cumsum(lengths)])
    values = np.arange(ptr[-1])
    got, mask = pad(batches[0], ptr, values)
    for row, u in enumerate(batches[0]):
        assert got[row][mask[row]].tolist() == values[ptr[u]:ptr[u + 1]].tolist()
    assert csr_rows(np.array([0, 2, 2, 3])).tolist() == [0, 0, 2]
