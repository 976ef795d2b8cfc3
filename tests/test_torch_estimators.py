"""MFRanker and NetRanker: learning, scikit-learn conventions, determinism, persistence, bad inputs."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from sklearn.base import clone  # noqa: E402
from sklearn.exceptions import NotFittedError  # noqa: E402

from gbrank.datasets import make_letor  # noqa: E402
from gbrank.torch import (MFRanker, NetRanker, NotEnoughNegatives, evaluate_recommender,  # noqa: E402
                          split_interactions)

LOSSES = ["listwise_ndcg", "listwise_ap", "listwise_rr", "listwise_nrbp", "lambda_ndcg", "lambda_ap", "lambda_rr",
          "lambda_nrbp@0.95", "kos_warp", "kos_auc", "warp", "bpr"]
FAST = dict(epochs=4, verbose=0, random_state=0, optimizer="adam", learning_rate=0.05)


def _clustered(n_users=60, n_items=120, per_user=24, seed=0):
    """Two taste groups: users of group g interact only with items of group g."""
    rng = np.random.default_rng(seed)
    rows = []
    for u in range(n_users):
        group = u % 2
        items = rng.choice(n_items // 2, size=per_user, replace=False) + group * (n_items // 2)
        rows.extend((u, int(i)) for i in items)
    return np.array(rows)


@pytest.fixture(scope="module")
def clustered_split():
    X = _clustered()
    return split_interactions(X, np.ones(len(X)), relevance_threshold=1, min_positives=10, nsr=2, random_state=0)


@pytest.mark.parametrize("loss", LOSSES)
def test_every_loss_learns_the_taste_groups(loss, clustered_split):
    """Each loss raises its own metric on the training lists; all but the RR losses (which
    only care for the first relevant item, as Li et al. found) generalise to the test lists."""
    sp = clustered_split
    negatives = sp.X_test[sp.y_test == 0]  # never interacted with: negatives for the training lists too
    X_fit = np.concatenate([sp.X_train, negatives])
    y_fit = np.concatenate([np.ones(len(sp.X_train)), np.zeros(len(negatives))])
    untrained = MFRanker(loss=loss, **{**FAST, "epochs": 1, "learning_rate": 1e-9}).fit(sp.X_train, sp.y_train,
                                                                                          items=sp.items)
    model = MFRanker(loss=loss, **{**FAST, "epochs": 12}).fit(sp.X_train, sp.y_train, items=sp.items)
    assert model.score(X_fit, y_fit) > untrained.score(X_fit, y_fit) + 0.1
    if not loss.endswith("_rr"):
        before = evaluate_recommender(untrained, sp, metrics=["auc"]).mean()["auc"]
        after = evaluate_recommender(model, sp, metrics=["auc"]).mean()["auc"]
        assert after > before + 0.15, (before, after)


def test_fit_predict_recommend_score(clustered_split):
    sp = clustered_split
    model = MFRanker(loss="lambda_ndcg", eval_every=2, **FAST).fit(sp.X_train, sp.y_train, items=sp.items)
    assert model.eval_metric_ == "ndcg" and model.loss_.name == "lambda_ndcg"
    assert list(model.history_.columns[:3]) == ["epoch", "loss", "seconds"]
    assert model.history_["ndcg"].notna().sum() == 2  # epochs 2 and 4
    assert model.best_epoch_ in (2, 4) and model.best_score_ == model.history_["ndcg"].max()
    scores = model.predict(sp.X_test)
    assert scores.shape == (len(sp.X_test),) and scores.dtype == np.float64
    u = sp.X_train[0, 0]
    top = model.recommend([u], k=5)
    seen = set(sp.X_train[sp.X_train[:, 0] == u, 1])
    assert top.shape == (1, 5) and not seen & set(top[0])
    items, values = model.recommend([u], k=5, return_scores=True)
    assert np.all(np.diff(values[0]) <= 0)
    by_predict = model.predict(np.column_stack([np.full(5, u), items[0]]))
    np.testing.assert_allclose(by_predict, values[0], rtol=1e-6)
    assert set(model.recommend([u], k=5, exclude_seen=False)[0]) & seen  # its own items score high
    res = evaluate_recommender(model, sp, metrics=["ndcg", "ap"])
    assert res.settings["protocol"] == "sampled" and res.settings["n_unknown_positives"] == 0
    assert res.mean()["ndcg"] == pytest.approx(model.score(sp.X_test, sp.y_test))
    full = evaluate_recommender(model, sp, protocol="full", metrics=["ndcg"])
    assert full.settings["protocol"] == "full"
    lengths = full.per_query["n_items"]
    n_seen = np.diff(model.seen_indptr_)
    codes = np.searchsorted(model.users_, lengths.index.to_numpy())
    n_pos = full.per_query["n_relevant"].to_numpy()
    assert np.array_equal(lengths.to_numpy(), model.n_items_ - n_seen[codes] + 0 * n_pos)
    assert full.mean()["ndcg"] < res.mean()["ndcg"]  # sampled metrics are optimistic


def test_unknown_test_items_are_counted_not_scored(clustered_split):
    sp = clustered_split
    model = MFRanker(loss="bpr", **FAST).fit(sp.X_train, sp.y_train)  # without the catalogue
    res = evaluate_recommender(model, sp, metrics=["ndcg"])
    missing = set(sp.items) - set(model.items_)
    expect = int(np.isin(sp.test_positives[:, 1], list(missing)).sum())
    assert res.settings["n_unknown_positives"] == expect


def test_deterministic_on_cpu_for_a_seed(clustered_split):
    sp = clustered_split
    for loss in ("kos_warp", "listwise_ap"):
        a = MFRanker(loss=loss, device="cpu", **FAST).fit(sp.X_train, sp.y_train)
        b = MFRanker(loss=loss, device="cpu", **FAST).fit(sp.X_train, sp.y_train)
        c = MFRanker(loss=loss, device="cpu", **{**FAST, "random_state": 1}).fit(sp.X_train, sp.y_train)
        for key, value in a.module_.state_dict().items():
            assert torch.equal(value, b.module_.state_dict()[key])
        assert not torch.equal(a.module_.user_factors.weight, c.module_.user_factors.weight)
        assert a.history_["loss"].tolist() == b.history_["loss"].tolist()


def test_save_load_pickle_clone(tmp_path, clustered_split):
    sp = clustered_split
    model = MFRanker(loss="lambda_nrbp@0.9", loss_params={"sigma": 2.0}, **FAST).fit(sp.X_train, sp.y_train)
    path = tmp_path / "mf.pt"
    model.save(path)
    loaded = MFRanker.load(path)
    np.testing.assert_array_equal(loaded.predict(sp.X_test), model.predict(sp.X_test))
    np.testing.assert_array_equal(loaded.recommend(sp.X_train[:3, 0], k=4), model.recommend(sp.X_train[:3, 0], k=4))
    assert loaded.get_params() == model.get_params()
    assert loaded.loss_ == model.loss_ and loaded.eval_metric_ == "nrbp@0.9"
    assert loaded.history_.equals(model.history_) and loaded.best_epoch_ == model.best_epoch_
    # the file needs no code to load: plain torch.load with weights_only
    assert torch.load(path, weights_only=True)["class"] == "MFRanker"
    with pytest.raises(TypeError, match="not a NetRanker"):
        NetRanker.load(path)
    again = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(again.predict(sp.X_test), model.predict(sp.X_test))
    fresh = clone(model)
    assert fresh.get_params() == model.get_params() and not hasattr(fresh, "module_")
    with pytest.raises(NotFittedError):
        fresh.predict(sp.X_test)


def test_string_ids_and_low_ratings():
    X = np.array([["ann", "a"], ["ann", "b"], ["ann", "c"], ["bob", "a"], ["bob", "d"], ["cy", "b"]], dtype=object)
    y = np.array([5.0, 4.0, 1.0, 4.5, 2.0, 2.0])
    catalogue = list("abcdefg")
    model = MFRanker(loss="listwise_ap", relevance_threshold=4, validation_size=0, **FAST).fit(X, y, items=catalogue)
    assert model.users_.tolist() == ["ann", "bob"] and model.dropped_users_.tolist() == ["cy"]
    assert model.items_.tolist() == catalogue
    # "d" (rated 2) is an interaction of bob: never recommended to him with exclude_seen
    assert set(model.recommend(["bob"], k=5)[0]) == set("bcefg")
    with pytest.raises(ValueError, match="k=6 exceeds the 5 items"):
        model.recommend(["bob"], k=6)
    with pytest.raises(ValueError, match=r"unknown user id\(s\) 'cy'"):
        model.recommend(["cy"])
    with pytest.raises(ValueError, match=r"unknown user id\(s\) and 1 unknown item id\(s\) \(first: items 'z'\)"):
        model.predict([["ann", "z"]])


def test_bad_inputs_raise_clear_errors(clustered_split):
    sp = clustered_split
    model = MFRanker(loss="bpr", **FAST).fit(sp.X_train, sp.y_train)
    with pytest.raises(ValueError, match=r"1 unknown user id\(s\) and 1 unknown item id\(s\) \(first: users 999; items 777\)"):
        model.predict(np.array([[999, 777], [sp.X_train[0, 0], sp.X_train[0, 1]]]))
    with pytest.raises(ValueError, match="no user has at least 1 positive"):
        MFRanker(**FAST).fit(sp.X_train, np.zeros(len(sp.X_train)))
    with pytest.raises(ValueError, match="no rows|empty"):
        MFRanker(**FAST).fit(np.zeros((0, 2)), np.zeros(0))
    with pytest.raises(ValueError, match="unknown loss 'ndcg'; known losses: bpr, kos_auc"):
        MFRanker(loss="ndcg", **FAST).fit(sp.X_train, sp.y_train)
    with pytest.raises(ValueError, match="optimizer must be one of"):
        MFRanker(**{**FAST, "optimizer": "adagrad"}).fit(sp.X_train, sp.y_train)
    with pytest.raises(ValueError, match="eval_protocol"):
        MFRanker(eval_protocol="all", **FAST).fit(sp.X_train, sp.y_train)
    with pytest.raises(ValueError, match=r"shape \(n, 2\)"):
        MFRanker(**FAST).fit(np.zeros((5, 3)), np.ones(5))
    with pytest.raises(FloatingPointError, match="lower the learning rate"):
        MFRanker(loss="lambda_ndcg", **{**FAST, "optimizer": "sgd", "learning_rate": 1e30}).fit(sp.X_train, sp.y_train)
    with pytest.raises(ValueError, match="lengths differ"):
        MFRanker(**FAST).fit(sp.X_train, np.ones(3))
    # every user has 24 items of 120 and the catalogue left is 96: nsr 5 asks for more
    X = _clustered()
    with pytest.raises(NotEnoughNegatives, match=r"nsr=5 asks for \d+ training negatives for user \d+, but only 96"):
        MFRanker(nsr=5, validation_size=0, **FAST).fit(X)
    MFRanker(nsr=4, validation_size=0, **FAST).fit(X)  # 4 x 24 = 96 fits exactly


def test_users_without_positives_are_dropped_and_unknown():
    X = _clustered(n_users=10)
    y = np.ones(len(X))
    y[X[:, 0] == 3] = 0.0  # user 3 has interactions but no positive
    model = MFRanker(validation_size=0, **FAST).fit(X, y)
    assert model.dropped_users_.tolist() == [3] and 3 not in model.users_
    with pytest.raises(ValueError, match="fewer than min_positives=1"):
        model.predict([[3, 0]])
    strict = MFRanker(validation_size=0, min_positives=25, **FAST)
    with pytest.raises(ValueError, match="no user has at least 25"):
        strict.fit(X, y)


def test_eval_set_early_stopping_and_best_epoch(clustered_split):
    sp = clustered_split
    model = MFRanker(loss="listwise_nrbp", epochs=60, early_stopping=2, **{k: v for k, v in FAST.items()
                                                                          if k != "epochs"})
    model.set_params(learning_rate=0.5)
    model.fit(sp.X_train, sp.y_train, items=sp.items, eval_set=(sp.X_test, sp.y_test))
    assert len(model.history_) < 60  # stopped early
    assert model.best_epoch_ == len(model.history_) - 2
    # the kept weights are those of the best epoch: scoring the eval set gives its score back
    assert model.score(sp.X_test, sp.y_test) == pytest.approx(model.best_score_)


def test_explicit_ratings_threshold_flows_through_split_fit_and_score():
    rng = np.random.default_rng(0)
    X = _clustered(n_users=20)
    y = np.where(rng.random(len(X)) < 0.8, 5.0, 2.0)  # most of a user's items are liked
    sp = split_interactions(X, y, relevance_threshold=4, min_positives=10, nsr=1, random_state=0)
    model = MFRanker(loss="listwise_ndcg", relevance_threshold=4, **{**FAST, "epochs": 6})
    model.fit(sp.X_train, sp.y_train, items=sp.items, eval_set=(sp.X_test, sp.y_test))
    assert 0.5 < model.best_score_ <= 1.0
    assert model.score(sp.X_test, sp.y_test) == pytest.approx(model.best_score_)
    assert evaluate_recommender(model, sp, metrics=["ndcg"]).mean()["ndcg"] == pytest.approx(model.best_score_)


def test_fixed_or_resampled_negatives(clustered_split):
    from gbrank.torch._mf import _MFTask
    from gbrank.interactions import csr_from

    pos = csr_from(np.array([0, 0, 1]), np.array([0, 1, 2]), 2)
    for resample in (False, True):
        task = _MFTask(pos, pos, 50, 2, resample, 8, np.array(["a", "b"]), None)
        rng = np.random.default_rng(0)
        first = task.lists(rng)[1].copy()
        second = task.lists(rng)[1]
        assert np.array_equal(first, second) != resample
        assert len(first) == 3 * 3  # 3 positives + 6 negatives


@pytest.mark.parametrize("per_list, nsr", [(1, 1), (1, 3), (2, 2), (5, 1)])
def test_positives_per_list_cuts_each_users_list(per_list, nsr):
    """Lists of ``per_list`` positives (the last of a user shorter), each with ``nsr``
    negatives per positive, every training positive once, every list owned by its user,
    a new order of the positives every epoch; batches carry the owners as user indices."""
    from gbrank.interactions import csr_from
    from gbrank.torch._mf import _MFTask

    rng = np.random.default_rng(3)
    n_users, n_items = 7, 60
    u = np.repeat(np.arange(n_users), [1, 4, 7, 2, 0, 9, 3])
    i = np.concatenate([rng.choice(n_items, k, replace=False) for k in [1, 4, 7, 2, 0, 9, 3]])
    pos = csr_from(u, i, n_users)
    task = _MFTask(pos, pos, n_items, nsr, True, 4, np.arange(n_users), None, per_list)
    orders = []
    for _ in range(2):
        ptr, items, labels = task.lists(rng)
        owner = task._owner
        assert len(owner) == len(ptr) - 1 == sum(-(-k // per_list) for k in [1, 4, 7, 2, 0, 9, 3])
        for r in range(len(owner)):
            lab, it = labels[ptr[r]:ptr[r + 1]], items[ptr[r]:ptr[r + 1]]
            n_pos = int(lab.sum())
            assert 1 <= n_pos <= per_list and len(lab) == n_pos * (1 + nsr)
            assert (lab[:n_pos] == 1).all() and (lab[n_pos:] == 0).all()  # positives first
            user_pos = set(pos[1][pos[0][owner[r]]:pos[0][owner[r] + 1]].tolist())
            assert set(it[:n_pos].tolist()) <= user_pos and not set(it[n_pos:].tolist()) & user_pos
        for user in range(n_users):  # every positive once, and only the user's last list is short
            mine = np.flatnonzero(owner == user)
            got = np.concatenate([items[ptr[r]:ptr[r] + int(labels[ptr[r]:ptr[r + 1]].sum())] for r in mine]) \
                if len(mine) else np.array([], int)
            assert sorted(got.tolist()) == sorted(pos[1][pos[0][user]:pos[0][user + 1]].tolist())
            sizes = [int(labels[ptr[r]:ptr[r + 1]].sum()) for r in mine]
            assert all(s == per_list for s in sizes[:-1])
        orders.append(items[labels == 1].copy())
        seen = []
        for rows, batch_items, batch_labels, mask in task.batches(rng):
            assert len(np.unique(rows)) <= 4  # batch_size users, with every list of theirs
            for user in np.unique(rows):
                assert (rows == user).sum() == (owner == user).sum()
            for b in range(len(rows)):  # each padded row holds one list of its owner
                user_pos = set(pos[1][pos[0][rows[b]]:pos[0][rows[b] + 1]].tolist())
                assert set(batch_items[b][mask[b] & (batch_labels[b] == 1)].tolist()) <= user_pos
                assert mask[b].sum() == int(batch_labels[b][mask[b]].sum()) * (1 + nsr)
            seen.extend(rows.tolist())
        assert sorted(seen) == sorted(owner.tolist())
    if per_list > 1:
        assert not np.array_equal(orders[0], orders[1])  # a new cut every epoch


def test_positives_per_list_defaults_and_bad_values(clustered_split):
    from gbrank.torch import make_loss

    assert make_loss("listwise_rr", training_defaults=True).positives_per_list == 1
    assert make_loss("lambda_err", training_defaults=True).positives_per_list == 1
    assert make_loss("listwise_ndcg", training_defaults=True).positives_per_list is None
    sp = clustered_split
    for bad in (0, -1, 1.5, True, "all"):
        with pytest.raises(ValueError, match="positives_per_list"):
            MFRanker(positives_per_list=bad, **FAST).fit(sp.X_train, sp.y_train)
    # None trains the paper's per-user lists: the same model as the default for a loss without a cut
    a = MFRanker(loss="listwise_ndcg", **FAST).fit(sp.X_train, sp.y_train)
    b = MFRanker(loss="listwise_ndcg", positives_per_list=None, **FAST).fit(sp.X_train, sp.y_train)
    np.testing.assert_array_equal(a.predict(sp.X_test), b.predict(sp.X_test))
    c = MFRanker(loss="listwise_ndcg", positives_per_list=2, **FAST).fit(sp.X_train, sp.y_train)
    assert not np.array_equal(a.predict(sp.X_test), c.predict(sp.X_test))


def test_full_catalogue_validation_and_sgd(clustered_split):
    sp = clustered_split
    model = MFRanker(loss="listwise_ndcg", eval_protocol="full", epochs=3, verbose=0, random_state=0)
    model.fit(sp.X_train, sp.y_train)
    assert model.history_["ndcg"].notna().all() and 0 < model.best_score_ < 1


@pytest.fixture(scope="module")
def letor():
    X, y, qid = make_letor(n_queries=60, docs_per_query=(8, 30), n_features=10, max_label=2, random_state=0)
    return X, y, qid


@pytest.mark.parametrize("loss", ["listwise_ndcg", "listwise_nrbp", "lambda_ap", "kos_auc"])
def test_net_ranker_learns(letor, loss):
    X, y, qid = letor
    train, test = qid < 40, qid >= 40
    before = NetRanker(loss=loss, epochs=1, learning_rate=1e-9, verbose=0, random_state=0, validation_size=0)
    before.fit(X[train], y[train], qid=qid[train])
    model = NetRanker(loss=loss, epochs=15, verbose=0, random_state=0, eval_metric="ndcg@10")
    model.fit(X[train], y[train], qid=qid[train])
    b = before.set_params(eval_metric="ndcg@10")
    b.eval_metric_ = "ndcg@10"
    assert model.score(X[test], y[test], qid[test]) > b.score(X[test], y[test], qid[test]) + 0.05


def test_net_ranker_conventions(tmp_path, letor):
    X, y, qid = letor
    model = NetRanker(epochs=3, verbose=0, random_state=0, hidden=7).fit(X, y, qid=qid, eval_set=(X, y, qid))
    assert model.module_.hidden.out_features == 7 and model.n_features_in_ == 10
    assert model.predict(X).shape == (len(X),)
    path = tmp_path / "net.pt"
    model.save(path)
    np.testing.assert_array_equal(NetRanker.load(path).predict(X), model.predict(X))
    twin = NetRanker(epochs=3, verbose=0, random_state=0, hidden=7).fit(X, y, qid=qid, eval_set=(X, y, qid))
    np.testing.assert_array_equal(twin.predict(X), model.predict(X))
    with pytest.raises(ValueError, match="has 3 features, but the model was fitted with 10"):
        model.predict(X[:, :3])
    with pytest.raises(ValueError, match="no training query has a relevant row"):
        NetRanker(verbose=0, relevance_threshold=9).fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="negative"):
        NetRanker(verbose=0).fit(X, -y, qid=qid)
    with pytest.raises(ValueError, match="activation"):
        NetRanker(verbose=0, activation="gelu").fit(X, y, qid=qid)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_trained_on_gpu_loads_on_cpu(tmp_path, clustered_split):
    sp = clustered_split
    model = MFRanker(loss="listwise_ap", device="cuda", **FAST).fit(sp.X_train, sp.y_train)
    assert model.device_.startswith("cuda") and model.module_.user_factors.weight.device.type == "cpu"
    path = tmp_path / "gpu.pt"
    model.save(path)
    loaded = MFRanker.load(path, map_location="cpu")
    np.testing.assert_array_equal(loaded.predict(sp.X_test), model.predict(sp.X_test))
    cpu = MFRanker(loss="listwise_ap", device="cpu", **FAST).fit(sp.X_train, sp.y_train)
    np.testing.assert_allclose(cpu.predict(sp.X_test), model.predict(sp.X_test), rtol=1e-3, atol=1e-4)


def test_progress_bar_and_device_choice(capsys, monkeypatch, clustered_split):
    from gbrank import _progress

    sp = clustered_split
    # stderr captured (not a terminal): no bar even with verbose=1, so logs are not flooded
    MFRanker(loss="bpr", epochs=2, verbose=1, random_state=0).fit(sp.X_train, sp.y_train)
    assert capsys.readouterr().err == ""
    monkeypatch.setattr(_progress, "can_show", lambda: True)  # as on a terminal
    MFRanker(loss="bpr", epochs=2, verbose=1, random_state=0).fit(sp.X_train, sp.y_train)
    assert "epochs" in capsys.readouterr().err
    MFRanker(loss="bpr", epochs=2, verbose=0, random_state=0).fit(sp.X_train, sp.y_train)
    assert capsys.readouterr().err == ""
    auto = MFRanker(loss="bpr", epochs=1, verbose=0, random_state=0, device="auto").fit(sp.X_train, sp.y_train)
    assert auto.device_ == ("cuda" if torch.cuda.is_available() else "cpu")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="CUDA is not available"):
            MFRanker(device="cuda", verbose=0).fit(sp.X_train, sp.y_train)
    with pytest.raises(ValueError, match="unknown device"):
        MFRanker(device="tpu9", verbose=0).fit(sp.X_train, sp.y_train)
