"""Every implementation of the LambdaRank swap deltas against one brute-force oracle.

The numba deltas of the boosting objectives (``gbrank.lambdas.swap_deltas``) and their torch
twin (``gbrank.torch.lambda_weights``, on the CPU and on a CUDA device) must equal
``brute.swap_delta_matrix`` (swap two items' ranks, recompute the metric from its textbook
definition) on many random lists: ties in the scores, all relevant, none relevant, one item,
graded labels, two relevance thresholds, both gains.  One suite, parametrised over the
implementations and over the metric record's ``with_delta()``, so a metric that gains a
swap delta is tested here without a new line (nRBP at two persistences).
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from brute import swap_delta_matrix

from gbrank.metrics import DELTA_FORMS, METRICS, with_delta

P_VALUES = (0.5, 0.9)
CASES = [pytest.param(name, p, id=name if p is None else f"{name}@{p}")
         for name, rec in sorted(with_delta().items())
         for p in (P_VALUES if rec.param == "p" else (None,))]
N_LISTS = 120


def _has_cuda() -> bool:
    if importlib.util.find_spec("torch") is None:
        return False
    import torch

    return torch.cuda.is_available()


def _random_lists(count: int, seed: int):
    """(scores, labels) of lists of 1 to 9 items, labels 0-3; the first lists are the edge cases."""
    yield np.array([0.3]), np.array([2.0])  # one item, relevant
    yield np.array([0.3]), np.array([0.0])  # one item, not relevant
    yield np.zeros(5), np.array([0.0, 2.0, 1.0, 3.0, 0.0])  # every score tied
    yield np.array([1.0, 3.0, 2.0, 0.0]), np.full(4, 3.0)  # all relevant, all equal
    yield np.array([1.0, 3.0, 2.0, 0.0]), np.array([1.0, 3.0, 2.0, 2.0])  # all relevant, graded
    yield np.array([1.0, 3.0, 2.0, 0.0]), np.zeros(4)  # none relevant
    rng = np.random.default_rng(seed)
    for _ in range(count - 6):
        n = int(rng.integers(1, 10))
        labels = rng.integers(0, 4, n).astype(float)
        kind = rng.integers(0, 4)
        if kind == 0:
            labels[:] = 0.0
        elif kind == 1:
            labels = np.maximum(labels, 2.0)
        scores = rng.integers(0, 4, n).astype(float) if kind != 3 else rng.normal(size=n)  # ties, or none
        yield scores, labels


# ---- the implementations: (metric, lists, options) -> one (n, n) matrix per list ----------------

def _numba(metric, lists, *, p, threshold, gain):
    from gbrank.lambdas import swap_deltas

    return [swap_deltas(metric, s, y, p=p, relevance_threshold=threshold, gain=gain) for s, y in lists]


def _torch(device):
    def deltas(metric, lists, *, p, threshold, gain):
        torch = pytest.importorskip("torch")
        from gbrank.torch import lambda_weights

        # every list in one padded batch (in random places): padding and batching must change nothing
        rng = np.random.default_rng(len(lists))
        width = max(len(s) for s, _ in lists) + 3
        scores = np.full((len(lists), width), np.nan)
        labels = rng.integers(0, 4, (len(lists), width)).astype(float)
        mask = np.zeros((len(lists), width), dtype=bool)
        places = []
        for b, (s, y) in enumerate(lists):
            place = np.sort(rng.choice(width, size=len(s), replace=False))
            scores[b, place], labels[b, place], mask[b, place] = s, y, True
            places.append(place)
        w = lambda_weights(metric, torch.tensor(scores, device=device), torch.tensor(labels, device=device),
                           torch.tensor(mask, device=device), p=p, relevance_threshold=threshold, gain=gain)
        assert w.device.type == device
        w = w.cpu().numpy()
        assert np.all(w[~mask] == 0) and np.all(w.transpose(0, 2, 1)[~mask] == 0), "padding has a delta"
        return [w[b][np.ix_(place, place)] for b, place in enumerate(places)]

    return deltas


IMPLEMENTATIONS = [
    pytest.param(_numba, id="numba"),
    pytest.param(_torch("cpu"), id="torch-cpu"),
    pytest.param(_torch("cuda"), id="torch-cuda",
                 marks=[pytest.mark.gpu, pytest.mark.skipif(not _has_cuda(), reason="needs a CUDA device")]),
]


@pytest.mark.parametrize("implementation", IMPLEMENTATIONS)
@pytest.mark.parametrize("metric,p", CASES)
@pytest.mark.parametrize("threshold,gain", [(1, "exp"), (2, "linear")])
def test_swap_deltas_equal_the_brute_force_swap(implementation, metric, p, threshold, gain):
    lists = list(_random_lists(N_LISTS, seed=hash((metric, p, threshold)) % 2**16))
    name = metric if p is None else f"{metric}@{p}"
    got = implementation(metric, lists, p=p, threshold=threshold, gain=gain)
    for (scores, labels), fast in zip(lists, got):
        slow = np.array(swap_delta_matrix(name, list(scores), list(labels), gain_kind=gain, threshold=threshold))
        np.testing.assert_allclose(fast, slow, rtol=0, atol=1e-12, err_msg=f"{name} scores {scores} labels {labels}")


# ---- the twins have the same shape ------------------------------------------------------------

def test_the_twins_know_the_same_forms_and_metrics():
    torch = pytest.importorskip("torch")  # noqa: F841
    from gbrank.lambdas import DELTA_METRICS
    from gbrank.lambdas._deltas import FORMS as NUMBA_FORMS
    from gbrank.torch import DELTAS
    from gbrank.torch._deltas import FORMS as TORCH_FORMS

    assert sorted(NUMBA_FORMS) == sorted(TORCH_FORMS) == sorted(DELTA_FORMS)
    assert sorted(DELTAS) == sorted(DELTA_METRICS) == sorted(with_delta())
    assert DELTAS == {name: METRICS[name].delta for name in with_delta()}


def test_torch_dispatch_refuses_what_it_does_not_know():
    torch = pytest.importorskip("torch")
    from gbrank.torch import lambda_weights
    from gbrank.torch._deltas import delta, delta_form, prepare

    known = str(sorted(with_delta()))
    with pytest.raises(ValueError, match="no LambdaRank swap delta") as err:
        delta_form("dcg")
    assert known in str(err.value)
    with pytest.raises(ValueError, match="no LambdaRank swap delta"):
        prepare("auc", torch.zeros(1, 3), torch.ones(1, 3, dtype=torch.bool))
    with pytest.raises(ValueError, match=r"unknown swap-delta form 'sum'"):
        i = torch.zeros(1, 1, 1, dtype=torch.long)
        delta("sum", i, i, torch.zeros(5, 1, 1), torch.ones(1), i[:, 0, 0], i[:, 0, 0])
    with pytest.raises(ValueError, match="unknown lambda metric") as err:
        lambda_weights("dcg", torch.zeros(1, 2), torch.zeros(1, 2))
    assert known in str(err.value)
