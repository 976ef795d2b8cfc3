"""``gbrank.backends.shared_datasets``: inside a block the fits on one fold build each
library's training and validation sets once, and every model equals the one a fit with
its own construction trains (objectives, tuned parameters that change LightGBM's binning,
binary labels)."""

from __future__ import annotations

import numpy as np
import pytest

from gbrank.backends import _shared, free_shared_datasets, shared_datasets
from gbrank.datasets import make_letor
from gbrank.estimators import GBRanker


@pytest.fixture(autouse=True)
def _fresh():
    free_shared_datasets()
    yield
    free_shared_datasets()


def _fold():
    X, y, qid = make_letor(n_queries=60, docs_per_query=(8, 25), n_features=10, random_state=3)
    cut = np.searchsorted(qid, 45)
    return (X[:cut], y[:cut], qid[:cut]), (X[cut:], y[cut:], qid[cut:])


#: (objective, parameters, binary labels): built-in and gbrank objectives, a change of
#: LightGBM's dataset parameters (min_data_in_leaf with feature_pre_filter), binary labels
FITS = {
    "lightgbm": [("lightgbm:lambdarank", {}, False), ("ndcg", {}, False), ("listwise_ndcg", {}, False),
                 ("ndcg", {"backend_params": {"min_data_in_leaf": 5}}, False), ("ap", {}, True)],
    "xgboost": [("xgboost:rank:ndcg", {}, False), ("ndcg", {}, False), ("xgboost:rank:map", {}, True),
                ("nrbp@0.9", {"max_depth": 4}, False)],
}


def _fit(backend, objective, params, binary, train, vali):
    X, y, qid = train
    y = (y >= 1).astype(float) if binary else y
    model = GBRanker(objective, backend=backend, n_estimators=8, random_state=0, early_stopping_rounds=3,
                     eval_metric="ndcg@10", **params)
    return model.fit(X, y, qid=qid, eval_set=[vali])


@pytest.mark.parametrize("backend", ["lightgbm", "xgboost"])
def test_shared_sets_train_the_models_of_per_fit_construction(backend):
    pytest.importorskip(backend)
    train, vali = _fold()
    alone = [_fit(backend, *f, train, vali).predict(vali[0]) for f in FITS[backend]]
    before = _shared.shared_builds()
    with shared_datasets("fold 1"):
        together = [_fit(backend, *f, train, vali).predict(vali[0]) for f in FITS[backend]]
    for a, b, f in zip(alone, together, FITS[backend]):
        np.testing.assert_array_equal(a, b, err_msg=str(f))
    # one training and one validation set per label set: graded and binary
    assert _shared.shared_builds() - before == 4


def test_a_new_scope_frees_the_previous_sets_and_outside_nothing_is_kept():
    pytest.importorskip("lightgbm")
    train, vali = _fold()
    with shared_datasets("fold 1"):
        _fit("lightgbm", "ndcg", {}, False, train, vali)
    assert len(_shared._state["entries"]) == 2
    with shared_datasets("fold 1"):  # the same scope again: kept
        _fit("lightgbm", "ap", {}, False, train, vali)
    assert len(_shared._state["entries"]) == 2
    with shared_datasets("fold 2"):
        assert not _shared._state["entries"]
    free_shared_datasets()
    _fit("lightgbm", "ndcg", {}, False, train, vali)
    assert not _shared._state["entries"]


def test_a_new_feature_array_with_equal_values_is_another_set():
    """The key is the array object (held, so its id is not reused), not its values."""
    pytest.importorskip("lightgbm")
    train, vali = _fold()
    with shared_datasets("fold 1"):
        _fit("lightgbm", "ndcg", {}, False, train, vali)
        copy = (train[0].copy(), *train[1:])
        _fit("lightgbm", "ndcg", {}, False, copy, vali)
    assert len(_shared._state["entries"]) == 4


def test_the_bench_runs_of_a_fold_train_the_models_of_per_run_construction():
    """``gbrank bench letor``'s runs of one fold (``train_one`` with the fold's scope) give the
    test scores of runs that each build their own sets."""
    pytest.importorskip("lightgbm")
    pytest.importorskip("xgboost")
    from gbrank.bench.letor._plan import GROUPS, REGISTRY
    from gbrank.bench.letor._run import train_one
    from gbrank.datasets import LetorFold, LetorSplit

    train, vali = _fold()
    X, y, qid = make_letor(n_queries=20, docs_per_query=(8, 25), n_features=10, random_state=4)
    fold = LetorFold("Fold1", LetorSplit(*train), LetorSplit(*vali), LetorSplit(X, y, qid))
    settings = {"early_stopping_metric": "ndcg@10", "rounds": 8, "patience": 3, "learning_rate": 0.1,
                "num_leaves": 7, "catboost_depth": 4, "seed": 0}
    contenders = [c for c in REGISTRY.values() if GROUPS["default"](c) and c.library in ("lightgbm", "xgboost")]
    assert len({c.library for c in contenders}) == 2 and any(c.binary_labels for c in contenders)
    alone = [train_one(c, fold, settings, 1)[0] for c in contenders]
    before = _shared.shared_builds()
    shared = [train_one(c, fold, settings, 1, scope="Fold1:test")[0] for c in contenders]
    for c, a, b in zip(contenders, alone, shared):
        np.testing.assert_array_equal(a, b, err_msg=c.name)
    labels = {(c.library, c.binary_labels) for c in contenders}
    assert _shared.shared_builds() - before == 2 * len(labels)  # a training and a validation set each
