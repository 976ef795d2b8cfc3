"""``gbrank.beyond_accuracy``: every metric against a slow, obvious implementation on random
data (loops over users and pairs, Python sets) and on small cases computed by hand; the
input forms; bad input."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import sparse

import gbrank
from gbrank.evaluation import BeyondAccuracyResult, beyond_accuracy


# ---------------------------------------------------------------------------------------
# the slow oracle


def slow_beyond(recs, test, train, n_items, users=None, vectors=None, sim=None, primitive=None, n_users=None):
    """Definitions written out, one user and one pair at a time."""
    recs = [list(map(int, r)) for r in recs]
    users = list(range(len(recs))) if users is None else list(users)
    k = len(recs[0])
    seen = {}
    for u, i in train:
        seen.setdefault(int(u), set()).add(int(i))
    relevant = {}
    for u, i in test:
        relevant.setdefault(int(u), set()).add(int(i))
    pop = [sum(1 for u in seen if i in seen[u]) for i in range(n_items)]
    n = len(seen) if n_users is None else n_users
    out = {"novelty": [], "ild": [], "serendipity": [], "popularity": [], "n_relevant": []}
    by_popularity = sorted(range(n_items), key=lambda i: (-pop[i], i))
    for row, (u, lst) in enumerate(zip(users, recs)):
        out["novelty"].append(sum(-math.log2(max(pop[i], 1) / n) for i in lst) / k)
        out["popularity"].append(sum(pop[i] for i in lst) / k)
        if primitive is None:
            prim = [i for i in by_popularity if i not in seen.get(u, set())][:k]
        else:
            prim = list(primitive[row])
        out["serendipity"].append(sum(1 for i in lst if i in relevant.get(u, set()) and i not in prim) / k)
        out["n_relevant"].append(len(relevant.get(u, set())))
        dist = []
        for a in range(k):
            for b in range(a + 1, k):
                i, j = lst[a], lst[b]
                if sim is not None:
                    s = sim(i, j)
                elif vectors is not None:
                    vi, vj = np.asarray(vectors[i], float), np.asarray(vectors[j], float)
                    ni, nj = math.sqrt(sum(x * x for x in vi)), math.sqrt(sum(x * x for x in vj))
                    s = 0.0 if ni == 0 or nj == 0 else sum(x * y for x, y in zip(vi, vj)) / (ni * nj)
                else:
                    s = float("nan")
                dist.append(1 - s)
        out["ild"].append(sum(dist) / len(dist) if dist else float("nan"))
    distinct = {i for lst in recs for i in lst}
    arp = sum(out["popularity"]) / len(recs)
    agg = {"coverage": len(distinct) / n_items, "aggregate_diversity": len(distinct),
           "novelty": sum(out["novelty"]) / len(recs), "serendipity": sum(out["serendipity"]) / len(recs),
           "arp": arp, "catalogue_popularity": sum(pop) / n_items, "popularity_ratio": arp / (sum(pop) / n_items)}
    ild = [x for x in out["ild"] if not math.isnan(x)]
    agg["intra_list_diversity"] = sum(ild) / len(ild) if ild else float("nan")
    return out, agg


def _random_case(seed, n_users=60, n_items=45, k=6, d=5):
    rng = np.random.default_rng(seed)
    recs = np.array([rng.choice(n_items, k, replace=False) for _ in range(n_users)])
    train = np.column_stack([rng.integers(0, n_users + 5, 400), rng.zipf(1.5, 400) % n_items])  # skewed items
    test = np.column_stack([rng.integers(0, n_users, 150), rng.integers(0, n_items, 150)])
    test = np.concatenate([test, np.column_stack([np.arange(n_users), recs[:, 0]])])  # some hits for sure
    vectors = rng.normal(size=(n_items, d))
    vectors[3] = 0.0  # a zero vector
    vectors[7] = vectors[5] * 2  # cosine 1
    return recs, test, train, n_items, vectors


def _check(result, oracle, users=None):
    out, agg = oracle
    pu = result.per_user
    if users is not None:
        assert pu.index.tolist() == list(users)
    np.testing.assert_allclose(pu["novelty"], out["novelty"], rtol=1e-12)
    np.testing.assert_allclose(pu["popularity"], out["popularity"], rtol=1e-12)
    np.testing.assert_allclose(pu["serendipity"], out["serendipity"], rtol=1e-12)
    np.testing.assert_array_equal(pu["n_relevant"], out["n_relevant"])
    np.testing.assert_allclose(pu["intra_list_diversity"], out["ild"], rtol=1e-9, atol=1e-12)
    for name, want in agg.items():
        np.testing.assert_allclose(result.aggregate[name], want, rtol=1e-9, atol=1e-12, err_msg=name)


@pytest.mark.parametrize("seed", range(4))
def test_random_lists_against_the_slow_definitions(seed):
    recs, test, train, n_items, vectors = _random_case(seed)
    oracle = slow_beyond(recs, test, train, n_items, vectors=vectors)
    r = beyond_accuracy(recs, test, train, n_items, item_vectors=vectors, chunk_size=7)
    assert isinstance(r, BeyondAccuracyResult)
    assert r.per_user["serendipity"].sum() > 0  # the case exercises serendipity
    _check(r, oracle, users=range(len(recs)))
    # sparse vectors, a similarity callable and a similarity matrix give the same diversity
    cos = lambda i, j: oracle_cos(vectors, i, j)  # noqa: E731
    _check(beyond_accuracy(recs, test, train, n_items, item_vectors=sparse.csr_matrix(vectors)), oracle)
    matrix = np.array([[cos(i, j) for j in range(n_items)] for i in range(n_items)])
    _check(beyond_accuracy(recs, test, train, n_items, similarity=matrix, chunk_size=5), oracle)
    _check(beyond_accuracy(recs, test, train, n_items, similarity=lambda a, b: matrix[a, b]), oracle)


def oracle_cos(vectors, i, j):
    vi, vj = vectors[i], vectors[j]
    ni, nj = np.linalg.norm(vi), np.linalg.norm(vj)
    return 0.0 if ni == 0 or nj == 0 else float(vi @ vj / (ni * nj))


def test_binary_interaction_vectors_and_a_given_similarity_function():
    """The bench's choice: each item's column of the user-item training matrix (sparse)."""
    recs, test, train, n_items, _ = _random_case(10, k=4)
    rows, cols = train[:, 1], train[:, 0]
    X = sparse.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(n_items, cols.max() + 1))
    X.data[:] = 1.0  # repeated pairs count once
    dense = X.toarray()
    oracle = slow_beyond(recs, test, train, n_items, vectors=dense)
    _check(beyond_accuracy(recs, test, train, n_items, item_vectors=X), oracle)
    jaccard = lambda i, j: (len(set(np.flatnonzero(dense[i])) & set(np.flatnonzero(dense[j]))) /  # noqa: E731
                            max(1, len(set(np.flatnonzero(dense[i])) | set(np.flatnonzero(dense[j])))))
    vec_jaccard = lambda a, b: np.array([jaccard(i, j) for i, j in zip(a, b)])  # noqa: E731
    oracle = slow_beyond(recs, test, train, n_items, sim=jaccard)
    _check(beyond_accuracy(recs, test, train, n_items, similarity=vec_jaccard), oracle)


def test_a_given_primitive_model_and_a_given_n_users():
    recs, test, train, n_items, _ = _random_case(11)
    rng = np.random.default_rng(0)
    prim = np.array([rng.choice(n_items, 9, replace=False) for _ in range(len(recs))])
    oracle = slow_beyond(recs, test, train, n_items, primitive=prim, n_users=500)
    r = beyond_accuracy(recs, test, train, n_items, primitive=prim, n_users=500)
    _check(r, oracle)
    assert r.settings["n_users"] == 500 and r.settings["primitive"] == "given lists"


def test_the_popularity_lists_leave_out_training_items_and_may_run_short():
    from gbrank.evaluation._beyond import _popular_lists

    rng = np.random.default_rng(5)
    n_items, k = 12, 4
    train = np.unique(np.column_stack([rng.integers(0, 20, 120), rng.integers(0, n_items, 120)]), axis=0)
    train = train[train[:, 0] != 3]
    train = np.concatenate([train, [[3, i] for i in range(2, n_items)]])  # user 3 saw 10 of 12 items
    pop = np.bincount(train[:, 1], minlength=n_items).astype(float)
    users = np.arange(20)
    got = _popular_lists(pop, users, train[:, 0], train[:, 1], k, n_items, chunk_entries=16)
    order = sorted(range(n_items), key=lambda i: (-pop[i], i))
    for u in users:
        seen = set(train[train[:, 0] == u, 1])
        want = [i for i in order if i not in seen][:k]
        assert got[u].tolist() == want + [-1] * (k - len(want)), u
    assert (got[3] == -1).sum() == 2


def test_small_cases_by_hand():
    # 4 users saw items in training: item 0 by 4 users, item 1 by 2, item 2 by 1, items 3-4 by nobody
    train = [[0, 0], [1, 0], [2, 0], [3, 0], [0, 1], [1, 1], [2, 2]]
    vectors = [[1, 0], [0, 1], [1, 1], [0, 0], [-1, 0]]
    recs = [[1, 2, 3], [4, 0, 1]]
    test = [[0, 3], [0, 2], [1, 4], [1, 1]]
    r = beyond_accuracy(recs, test, train, 5, item_vectors=vectors)
    pu = r.per_user
    # novelty: p = (1, 1/2, 1/4, 1/4*, 1/4*) (* never seen: counted as one user of 4)
    assert pu["novelty"].tolist() == pytest.approx([(1 + 2 + 2) / 3, (2 + 0 + 1) / 3])
    # ILD of user 0: pairs (1,2): 1 - 1/sqrt2, (1,3) and (2,3): 1 (zero vector)
    assert pu.loc[0, "intra_list_diversity"] == pytest.approx((1 - 1 / math.sqrt(2) + 2) / 3)
    # user 1: (4,0): 1 - (-1) = 2, (4,1): 1, (0,1): 1
    assert pu.loc[1, "intra_list_diversity"] == pytest.approx(4 / 3)
    # primitive lists: user 0 saw {0, 1} -> [2, 3, 4]; user 1 saw {0, 1} -> [2, 3, 4]
    # user 0: relevant 2 and 3 are both expected -> 0; user 1: relevant 4 expected, 1 is not -> 1/3
    assert pu["serendipity"].tolist() == pytest.approx([0, 1 / 3])
    assert pu["popularity"].tolist() == pytest.approx([(2 + 1 + 0) / 3, (0 + 4 + 2) / 3])
    assert pu["n_relevant"].tolist() == [2, 2]
    agg = r.aggregate
    assert agg["coverage"] == 1.0 and agg["aggregate_diversity"] == 5
    assert agg["arp"] == pytest.approx(1.5) and agg["catalogue_popularity"] == pytest.approx(7 / 5)
    assert agg["popularity_ratio"] == pytest.approx(1.5 / 1.4)
    assert agg["serendipity"] == pytest.approx(1 / 6)
    # without vectors diversity is NaN; one-item lists have none either
    assert np.isnan(beyond_accuracy(recs, test, train, 5).aggregate["intra_list_diversity"])
    one = beyond_accuracy(recs, test, train, 5, k=1, item_vectors=vectors)
    assert one.per_user["intra_list_diversity"].isna().all() and one.settings["k"] == 1
    assert one.aggregate["coverage"] == pytest.approx(2 / 5)


def test_table_input_equals_array_input():
    recs, test, train, n_items, vectors = _random_case(3, n_users=20)
    users = np.arange(0, 40, 2)  # the lists belong to the even users
    rows = pd.DataFrame({"user": np.repeat(users, recs.shape[1]), "item": recs.ravel(),
                         "rank": np.tile(np.arange(1, recs.shape[1] + 1), len(users))}).sample(frac=1, random_state=1)
    test_t = pd.DataFrame({"user": test[:, 0] * 2, "item": test[:, 1]})
    train_t = pd.DataFrame({"user": train[:, 0] * 2, "item": train[:, 1], "rating": 5})
    got = beyond_accuracy(rows, test_t, train_t, n_items, item_vectors=vectors)
    want = beyond_accuracy(recs, np.column_stack([test[:, 0], test[:, 1]]), train, n_items, item_vectors=vectors)
    assert got.per_user.index.tolist() == users.tolist()
    np.testing.assert_allclose(got.per_user.to_numpy(), want.per_user.to_numpy(), rtol=1e-12)
    pd.testing.assert_series_equal(got.aggregate, want.aggregate)
    _check(got, slow_beyond(recs, test_t.to_numpy(), train_t[["user", "item"]].to_numpy(), n_items, users=users,
                            vectors=vectors), users=users)


def test_k_takes_the_head_of_each_list():
    recs, test, train, n_items, vectors = _random_case(4)
    head = beyond_accuracy(recs, test, train, n_items, k=3, item_vectors=vectors)
    _check(head, slow_beyond(recs[:, :3], test, train, n_items, vectors=vectors))


def test_exported_as_gbrank_beyond_accuracy():
    assert gbrank.beyond_accuracy is beyond_accuracy
    assert "beyond_accuracy" in gbrank.__all__ and "beyond_accuracy" in gbrank.evaluation.__all__


@pytest.mark.parametrize("change, message", [
    (dict(recommendations=[[0, 1], [2, 9]]), r"recommendations holds item code 9 outside the catalogue 0..4 "
                                             r"\(n_items=5\).*pandas.factorize"),
    (dict(recommendations=[[0, -1], [2, 3]]), "recommendations holds item code -1 outside"),
    (dict(recommendations=[0, 1, 2]), r"recommendations must be 2-D.*got shape \(3,\)"),
    (dict(recommendations=[[0, 1], [2, 2]]), "repeat item 2 in the list of user 1"),
    (dict(recommendations=[[0.5, 1], [2, 3]]), "recommendations must hold integer codes"),
    (dict(k=-1), "k must be a positive integer.*got -1"),
    (dict(k=0), "k must be a positive integer"),
    (dict(k=3), "k=3 exceeds the 2 items of each list"),
    (dict(n_items=0), "n_items must be a positive integer"),
    (dict(test=[[0, 7]]), "test holds item code 7 outside"),
    (dict(train=[[0, 1, 2]]), r"train must be \(user, item\) pairs of shape \(n, 2\), got shape \(1, 3\)"),
    (dict(train=[[-1, 1]]), "train holds negative user codes"),
    (dict(train=np.empty((0, 2), dtype=int)), "train is empty"),
    (dict(item_vectors=np.ones((4, 2))), r"item_vectors has 4 rows but the catalogue has n_items=5"),
    (dict(item_vectors=np.ones(5)), "item_vectors must be 2-D"),
    (dict(item_vectors=np.ones((5, 2)), similarity=np.eye(5)), "not both"),
    (dict(similarity=np.eye(4)), r"similarity must be a callable or an \(n_items, n_items\)"),
    (dict(similarity=lambda a, b: np.ones(3)), "must return one value per pair"),
    (dict(primitive=[[0, 1]]), "primitive has 1 lists for 2 recommendation lists"),
    (dict(primitive="random"), "primitive must be 'popularity' or an array"),
    (dict(primitive=[[0, 8], [1, 2]]), "primitive holds item code 8 outside"),
    (dict(n_users=1), "n_users must be an integer at least the 2 distinct users of train"),
    (dict(chunk_size=0), "chunk_size must be a positive integer"),
])
def test_bad_input_names_the_argument_and_the_fix(change, message):
    args = dict(recommendations=[[0, 1], [2, 3]], test=[[0, 1]], train=[[0, 0], [1, 2]], n_items=5)
    args.update(change)
    with pytest.raises(ValueError, match=message):
        beyond_accuracy(args.pop("recommendations"), args.pop("test"), args.pop("train"), args.pop("n_items"), **args)


def test_bad_tables():
    train = [[0, 0], [1, 2]]
    with pytest.raises(ValueError, match=r"recommendations lacks the columns \['rank'\]"):
        beyond_accuracy(pd.DataFrame({"user": [0], "item": [1]}), [], train, 5)
    uneven = pd.DataFrame({"user": [0, 0, 1], "item": [1, 2, 3], "rank": [1, 2, 1]})
    with pytest.raises(ValueError, match="same number of recommendations: user 1 has 1, user 0 has 2"):
        beyond_accuracy(uneven, [], train, 5)
    twice = pd.DataFrame({"user": [0, 0], "item": [1, 2], "rank": [1, 1]})
    with pytest.raises(ValueError, match="same \\(user, rank\\)"):
        beyond_accuracy(twice, [], train, 5)
    with pytest.raises(ValueError, match=r"test lacks the columns \['item'\]"):
        beyond_accuracy([[0, 1]], pd.DataFrame({"user": [0]}), train, 5)
