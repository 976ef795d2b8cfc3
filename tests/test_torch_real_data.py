"""gbrank.torch on the real data sets (slow; skipped when GBRANK_DATA lacks them)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")

from gbrank.datasets import load_citeulike, load_letor_folds, load_movielens  # noqa: E402
from gbrank.torch import MFRanker, NetRanker, evaluate_recommender, split_interactions  # noqa: E402

pytestmark = pytest.mark.slow


def test_citeulike_filter_matches_the_paper(dataset_path):
    likes = load_citeulike(dataset_path("citeulike-a"))
    split = split_interactions(likes[["user", "item"]].to_numpy(), likes["rating"].to_numpy(),
                               relevance_threshold=1, min_positives=25, nsr=1, random_state=0)
    s = split.settings
    # Li et al. 2021, Table 1: 2,465 users, 16,702 items, 157,527 ratings after the filter
    assert s["n_users"] == 2465 and len(split.items) == 16702
    assert s["n_train_positives"] + s["n_test_positives"] == 157527
    model = MFRanker(loss="lambda_ndcg", epochs=1, validation_size=0, verbose=0, random_state=0)
    model.fit(split.X_train, split.y_train, items=split.items)
    assert model.n_users_ == 2465 and model.n_items_ == 16702


def test_movielens_listwise_ndcg_learns(dataset_path):
    ratings = load_movielens(dataset_path("movielens-latest-small"))
    X, y = ratings[["user", "item"]].to_numpy(), ratings["rating"].to_numpy()
    split = split_interactions(X, y, relevance_threshold=4, min_positives=25, nsr=1, random_state=0)
    assert split.settings["n_users"] == 412
    model = MFRanker(loss="listwise_ndcg", optimizer="adam", learning_rate=0.01, epochs=5, relevance_threshold=4,
                     verbose=0, random_state=0).fit(split.X_train, split.y_train, items=split.items)
    sampled = evaluate_recommender(model, split, metrics=["ndcg"]).mean()["ndcg"]
    full = evaluate_recommender(model, split, protocol="full", metrics=["ndcg"]).mean()["ndcg"]
    assert sampled > 0.93 and 0.2 < full < sampled


def test_mq2008_network_ranker(dataset_path):
    fold = load_letor_folds(dataset_path("mq2008"), folds=[1])[0]
    tr, va, te = fold.train, fold.vali, fold.test
    model = NetRanker(loss="listwise_ndcg", epochs=10, eval_metric="ndcg@10", verbose=0, random_state=0)
    model.fit(tr.X, tr.y, qid=tr.qid, eval_set=(va.X, va.y, va.qid))
    assert model.module_.hidden.out_features == 46
    untrained = NetRanker(epochs=1, learning_rate=1e-9, eval_metric="ndcg@10", validation_size=0, verbose=0,
                          random_state=0).fit(tr.X, tr.y, qid=tr.qid)
    assert model.score(te.X, te.y, te.qid) > untrained.score(te.X, te.y, te.qid) + 0.02
    assert np.isfinite(model.predict(te.X)).all()
