"""MFRanker's recommender conventions: scipy.sparse input, top-k by partial sort, filter_items,
similar_items, the per-epoch monitor, and clear errors for bad interaction data.

Every fast path is checked against a slow obvious one: ``top_k`` and ``recommend`` against the
full stable sort, ``similar_items`` against cosines computed pair by pair, a sparse fit
against the equivalent pairs, the monitor's values against models trained for that many
epochs."""

from __future__ import annotations

import copy

import numpy as np
import pandas as pd
import pytest

torch = pytest.importorskip("torch")
sp = pytest.importorskip("scipy.sparse")

from gbrank.torch import MFRanker  # noqa: E402
from gbrank.interactions import top_k  # noqa: E402

FAST = dict(loss="lambda_ndcg", n_factors=4, validation_size=0, epochs=3, device="cpu", verbose=0, random_state=0,
            optimizer="adam", learning_rate=0.05)


def _pairs(n_users=8, n_items=15, seed=0):
    rng = np.random.default_rng(seed)
    pairs = [(u, i) for u in range(n_users) for i in rng.choice(n_items - 1, size=5, replace=False)]
    X = np.array(pairs, dtype=np.int64)
    return X, rng.integers(1, 6, size=len(X)).astype(float)


@pytest.fixture(scope="module")
def model():
    X, y = _pairs()
    return MFRanker(relevance_threshold=3, **FAST).fit(X, y, items=np.arange(15)), X


def same_weights(a, b):
    return all(torch.equal(v, b.module_.state_dict()[k]) for k, v in a.module_.state_dict().items())


# ---- top_k and recommend ------------------------------------------------------------------

def test_top_k_equals_the_full_stable_sort_on_random_rows():
    rng = np.random.default_rng(1)
    for trial in range(3000):
        n = int(rng.integers(1, 40))
        k = int(rng.integers(1, n + 1))
        shape = (int(rng.integers(1, 5)), n)
        if trial % 3 == 0:
            scores = rng.integers(0, 3, size=shape).astype(float)  # many ties
        elif trial % 3 == 1:
            scores = rng.normal(size=shape)
        else:
            scores = np.where(rng.random(shape) < 0.3, -np.inf, rng.integers(0, 5, size=shape).astype(float))
        np.testing.assert_array_equal(top_k(scores, k), np.argsort(-scores, axis=1, kind="stable")[:, :k])


def _full_sort_recommend(est, users, k, exclude_seen=True, filter_items=()):
    """The reference: every item scored, a full stable argsort per user."""
    out = []
    for u in users:
        code = int(np.searchsorted(est.users_, u))
        scores = est._score_user_rows(np.array([code]))[0]  # the model's own scores: the selection is tested
        if exclude_seen:
            scores[est.seen_items_[est.seen_indptr_[code]:est.seen_indptr_[code + 1]]] = -np.inf
        scores[np.searchsorted(est.items_, list(filter_items)).astype(int)] = -np.inf
        out.append(np.argsort(-scores, kind="stable")[:k])
    return est.items_[np.array(out)]


@pytest.mark.parametrize("exclude_seen", [True, False])
def test_recommend_equals_the_full_sort(model, exclude_seen):
    est, _ = model
    users = est.users_
    for k in (1, 3, 9):
        np.testing.assert_array_equal(est.recommend(users, k=k, exclude_seen=exclude_seen),
                                      _full_sort_recommend(est, users, k, exclude_seen))
        items, scores = est.recommend(users, k=k, exclude_seen=exclude_seen, return_scores=True)
        np.testing.assert_allclose(est.predict(np.column_stack([np.repeat(users, k), items.ravel()])),
                                   scores.ravel(), rtol=1e-6, atol=1e-7)


def test_recommend_in_batches_and_ties_by_lower_item_id(model, monkeypatch):
    est, _ = model
    tied = copy.deepcopy(est)
    with torch.no_grad():
        tied.module_.item_factors.weight[:] = tied.module_.item_factors.weight[0]  # every item scores the same
    top = tied.recommend(tied.users_, k=4, exclude_seen=False)
    assert (top == tied.items_[:4]).all()  # ties: the lower id first
    monkeypatch.setattr("gbrank.torch._mf._SCORES_PER_BATCH", 2 * est.n_items_)  # two users per batch
    np.testing.assert_array_equal(est.recommend(est.users_, k=5), _full_sort_recommend(est, est.users_, 5))


def test_filter_items(model):
    est, X = model
    banned = [0, 7, 14]
    rec = est.recommend(est.users_, k=4, filter_items=banned)
    assert not set(rec.ravel()) & set(banned)
    np.testing.assert_array_equal(rec, _full_sort_recommend(est, est.users_, 4, filter_items=banned))
    # items seen and filtered count once: a user with 5 seen items among 15 has 10 left
    user = est.users_[0]
    seen = set(X[X[:, 0] == user, 1])
    ban = sorted(seen)[:2] + sorted(set(range(15)) - seen)[:3]
    assert est.recommend([user], k=7, filter_items=ban).shape == (1, 7)
    with pytest.raises(ValueError, match=r"k=8 exceeds the 7 items a requested user has not seen and that are not "
                                         r"in filter_items"):
        est.recommend([user], k=8, filter_items=ban)
    with pytest.raises(ValueError, match=r"filter_items holds 2 unknown item id\(s\) \(99, 'x'\)"):
        est.recommend([user], filter_items=np.array([99, "x", 3], dtype=object))
    with pytest.raises(ValueError, match=r"unknown user id\(s\) 42"):
        est.recommend([42])


# ---- similar_items ------------------------------------------------------------------------

def test_similar_items_by_cosine_against_pairwise_oracle(model):
    est, _ = model
    V = est.module_.item_factors.weight.detach().double().numpy()
    for item in est.items_:
        i = int(np.searchsorted(est.items_, item))
        cos = np.array([V[i] @ V[j] / np.linalg.norm(V[i]) / np.linalg.norm(V[j]) if j != i else -np.inf
                        for j in range(len(V))])
        expect = np.argsort(-cos, kind="stable")[:4]
        got, scores = est.similar_items([item], k=4, return_scores=True)
        np.testing.assert_array_equal(got[0], est.items_[expect])
        np.testing.assert_allclose(scores[0], cos[expect], rtol=1e-12)
        assert item not in got[0]
    np.testing.assert_array_equal(est.similar_items([3, 5], k=14)[0], est.similar_items([3], k=14)[0])


def test_similar_items_zero_vector_filter_and_errors(model):
    est, _ = model
    zero = copy.deepcopy(est)
    with torch.no_grad():
        zero.module_.item_factors.weight[2] = 0.0
    _, scores = zero.similar_items([2], k=14, return_scores=True)
    assert (scores == 0).all()  # a zero vector is at cosine 0 of every item
    got = est.similar_items([1], k=11, filter_items=[1, 4, 5, 6])
    assert not {1, 4, 5, 6} & set(got[0])
    with pytest.raises(ValueError, match=r"k=12 exceeds the 11 other items not in filter_items"):
        est.similar_items([1], k=12, filter_items=[1, 4, 5, 6])
    with pytest.raises(ValueError, match=r"k=15 exceeds the 14 other items"):
        est.similar_items([1], k=15)
    with pytest.raises(ValueError, match=r"items holds 1 unknown item id\(s\) \(77\)"):
        est.similar_items([77])
    with pytest.raises(ValueError, match=r"k must be a positive integer"):
        est.similar_items([1], k=0)


# ---- scipy.sparse input -------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["csr_matrix", "csc_matrix", "coo_matrix", "csr_array"])
def test_sparse_fit_equals_the_equivalent_pairs(kind):
    X, y = _pairs()
    matrix = getattr(sp, kind)((y, (X[:, 0], X[:, 1])), shape=(8, 16))  # column 15: no interaction
    a = MFRanker(relevance_threshold=3, **FAST).fit(matrix)
    order = np.random.default_rng(0).permutation(len(X))  # the order of the pairs does not matter
    b = MFRanker(relevance_threshold=3, **FAST).fit(X[order], y[order], items=np.arange(16))
    assert same_weights(a, b) and a.items_.tolist() == list(range(16)) and a.users_.tolist() == list(range(8))
    np.testing.assert_array_equal(a.recommend([0, 3], k=5), b.recommend([0, 3], k=5))


def test_sparse_fit_with_ids():
    X, y = _pairs()
    users, items = np.array([f"u{u}" for u in range(8)]), np.arange(100, 116)
    matrix = sp.csr_matrix((y, (X[:, 0], X[:, 1])), shape=(8, 16))
    a = MFRanker(relevance_threshold=3, **FAST).fit(matrix, user_ids=users, item_ids=items)
    pairs = pd.DataFrame({"user": users[X[:, 0]], "item": items[X[:, 1]]})
    b = MFRanker(relevance_threshold=3, **FAST).fit(pairs, y, items=items)
    assert same_weights(a, b) and a.users_.tolist() == sorted(users)
    assert set(a.recommend(["u3"], k=3)[0]) <= set(items)


@pytest.mark.parametrize("call, exc, message", [
    (lambda m: MFRanker(**FAST).fit(m, np.ones(m.nnz)), TypeError,
     r"y is given, so X must be \(user id, item id\) pairs, not a csr_matrix user-item matrix.*y=None.*tocoo"),
    (lambda m: MFRanker(**FAST).fit(m, user_ids=np.arange(3)), ValueError,
     r"user_ids must give one id per row of X: X has 8 rows, user_ids has shape \(3,\)"),
    (lambda m: MFRanker(**FAST).fit(m, item_ids=np.r_[np.arange(15), 0]), ValueError,
     r"item_ids must be unique: 0 names 2 columns"),
    (lambda m: MFRanker(**FAST).fit(m, user_ids=np.r_[np.arange(7.0), np.nan]), ValueError,
     r"user_ids has 1 missing or infinite user id.*\[7\]"),
    (lambda m: MFRanker(**FAST).fit(_pairs()[0], user_ids=np.arange(8)), ValueError,
     r"user_ids and item_ids name the rows and columns of a scipy.sparse"),
    (lambda m: MFRanker(**FAST).fit(sp.csr_matrix((8, 16))), ValueError, r"without any stored entry"),
    (lambda m: MFRanker(**FAST).fit(_with_value(m, np.nan)), ValueError,
     r"X stores 1 NaN, infinite or negative value\(s\), e.g. X\[0, \d+\] = nan"),
    (lambda m: MFRanker(**FAST).fit(_with_value(m, -2.0)), ValueError, r"= -2; its values are ratings"),
    (lambda m: MFRanker(**FAST).fit(sp.coo_matrix(([1.0, 1.0, 1.0], ([0, 0, 1], [2, 2, 3])), shape=(2, 4))),
     ValueError, r"X stores entry \(0, 2\) more than once.*sum_duplicates"),
])
def test_sparse_bad_inputs(call, exc, message):
    X, y = _pairs()
    with pytest.raises(exc, match=message):
        call(sp.csr_matrix((y, (X[:, 0], X[:, 1])), shape=(8, 16)))


def _with_value(m, value):
    m = m.copy()
    m.data[0] = value
    return m


def test_explicit_zeros_are_interactions_rated_zero():
    X, y = _pairs()
    y[:3] = 0.0  # three interactions rated 0: never positives, never negatives, never recommended
    matrix = sp.csr_matrix((np.ones(len(X)), (X[:, 0], X[:, 1])), shape=(8, 16))
    matrix.data[:] = y[np.lexsort((X[:, 1], X[:, 0]))]  # csr order: by row, then column
    a = MFRanker(**FAST).fit(matrix)
    b = MFRanker(**FAST).fit(X, y, items=np.arange(16))
    assert same_weights(a, b)
    assert not set(a.recommend([X[0, 0]], k=5)[0]) & set(X[X[:, 0] == X[0, 0], 1])


# ---- monitor ------------------------------------------------------------------------------

def test_monitor_values_equal_the_model_of_that_epoch():
    X, y = _pairs()
    X_test = np.array([[u, i] for u in range(8) for i in range(14)])
    y_test = np.random.default_rng(3).integers(0, 2, size=len(X_test)).astype(float)
    seen = []

    def monitor(est, epoch):
        assert not est.module_.training and not torch.is_grad_enabled()
        seen.append(copy.deepcopy(est.module_.state_dict()))
        return {"test_ndcg": est.score(X_test, y_test), "first_score": np.float32(est.predict(X_test[:1])[0])}

    params = {**FAST, "epochs": 4, "relevance_threshold": 3}
    model = MFRanker(**params).fit(X, y, monitor=monitor)
    assert list(model.history_.columns) == ["epoch", "loss", "seconds", "test_ndcg", "first_score"]
    for epoch in range(1, 5):
        at = MFRanker(**{**params, "epochs": epoch}).fit(X, y)  # the model trained for that many epochs
        row = model.history_.iloc[epoch - 1]
        assert row["test_ndcg"] == at.score(X_test, y_test)
        assert row["first_score"] == pytest.approx(at.predict(X_test[:1])[0], rel=1e-6)
        assert all(torch.equal(v, seen[epoch - 1][k]) for k, v in at.module_.state_dict().items())
    assert same_weights(model, MFRanker(**params).fit(X, y))  # no effect on training
    assert model.history_["loss"].tolist() == MFRanker(**params).fit(X, y).history_["loss"].tolist()


def test_monitor_every_evaluated_epoch_with_validation():
    X, y = _pairs(n_users=10, n_items=30)
    epochs = []
    params = {**FAST, "epochs": 5, "eval_every": 2, "validation_size": 0.2}
    model = MFRanker(**params).fit(X, y, monitor=lambda est, epoch: epochs.append(epoch) or {"n": len(epochs)})
    assert epochs == [2, 4, 5]
    assert model.history_["n"].tolist()[1::2] == [1.0, 2.0] and np.isnan(model.history_["n"][[0, 2]]).all()
    assert model.history_["ndcg"].notna().tolist() == model.history_["n"].notna().tolist()
    assert same_weights(model, MFRanker(**params).fit(X, y))


@pytest.mark.parametrize("monitor, exc, message", [
    (lambda est, epoch: [1.0], TypeError, r"monitor must return a dict of column name -> number, got list at epoch 1"),
    (lambda est, epoch: {"loss": 1.0}, ValueError, r"monitor returned the column 'loss' at epoch 1"),
    (lambda est, epoch: {"x": "high"}, TypeError, r"monitor returned x='high' at epoch 1; each value must be one"),
    (lambda est, epoch: {"x": np.ones(2)}, TypeError, r"each value must be one number"),
    (42, TypeError, r"monitor must be a callable monitor\(estimator, epoch\)"),
])
def test_monitor_bad_answers(monitor, exc, message):
    X, y = _pairs()
    model = MFRanker(**FAST)
    with pytest.raises(exc, match=message):
        model.fit(X, y, monitor=monitor)
    assert not hasattr(model, "module_")  # a failed fit leaves no half-trained model


# ---- bad interaction data -----------------------------------------------------------------

@pytest.mark.parametrize("make, message", [
    (lambda X, y: (pd.DataFrame({"u": X[:, 0].astype(float), "i": X[:, 1]}).assign(
        u=lambda d: d["u"].where(d.index != 6)), y), r"X\[:, 0\] has 1 missing or infinite user id.*row\(s\) \[6\]"),
    (lambda X, y: (pd.DataFrame({"u": X[:, 0], "i": [None] + X[1:, 1].tolist()}), y),
     r"X\[:, 1\] has 1 missing or infinite item id.*row\(s\) \[0\]"),
    (lambda X, y: (np.vstack([X, X[[4, 9]]]), np.r_[y, 1.0, 2.0]),
     r"X holds 2 repeated \(user, item\) pairs, e.g. \(0, \d+\) at rows \[4, 40\].*groupby"),
    (lambda X, y: (X, np.r_[-1.0, y[1:]]), r"y \(ratings\) must be non-negative, found -1 at row \[0\]"),
    (lambda X, y: (X, np.r_[np.nan, y[1:]]), r"y contains 1 NaN"),
    (lambda X, y: (X, np.r_[y[:-1], np.inf]), r"y contains 1 NaN or infinite"),
])
def test_bad_interaction_data(make, message):
    X, y = make(*_pairs())
    with pytest.raises(ValueError, match=message):
        MFRanker(**FAST).fit(X, y)
