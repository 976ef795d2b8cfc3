"""gbrank.interactions: per-user CSR lists, hold-out, negative sampling and the paper's split.

Numpy only: these run without torch.
"""

from __future__ import annotations

import ast
import pathlib
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import gbrank.interactions as gi
from gbrank.interactions import (NotEnoughNegatives, check_nsr, check_pairs, csr_difference, csr_from, csr_rows,
                                 csr_take, csr_union, display_id, holdout, sample_negatives, split_interactions)

PKG = pathlib.Path(gi.__file__).resolve().parent


def _ratings(n_users=30, n_items=200, seed=0):
    """Synthetic explicit ratings: user u rated between 20 and 80 items, 1-5 stars."""
    rng = np.random.default_rng(seed)
    rows = []
    for u in range(n_users):
        items = rng.choice(n_items, size=int(rng.integers(20, 80)), replace=False)
        rows.extend((f"u{u}", 1000 + int(i), float(rng.integers(1, 6))) for i in items)
    users, items, ratings = zip(*rows)
    return np.column_stack([np.array(users, dtype=object), np.array(items, dtype=object)]), np.array(ratings)


def test_holdout_takes_round_fraction_per_user():
    indptr = np.array([0, 25, 26, 30, 30])  # users with 25, 1, 4 and 0 entries
    held = holdout(indptr, 0.2, np.random.default_rng(0))
    counts = [int(held[a:b].sum()) for a, b in zip(indptr[:-1], indptr[1:])]
    assert counts == [5, 0, 1, 0]  # round half up: 0.2, 0.8 -> 0, 1
    again = holdout(indptr, 0.2, np.random.default_rng(0))
    assert np.array_equal(held, again)


def test_sample_negatives_are_distinct_new_and_uniform():
    exclude = csr_from(np.array([0, 0, 1, 2, 2, 2]), np.array([1, 3, 0, 0, 1, 2]), 3)
    rng = np.random.default_rng(0)
    for _ in range(50):
        ptr, items = sample_negatives(np.array([3, 2, 2]), exclude, 5, rng)
        for u in range(3):
            got = items[ptr[u]:ptr[u + 1]]
            banned = exclude[1][exclude[0][u]:exclude[0][u + 1]]
            assert len(set(got)) == len(got) and not set(got) & set(banned)
        assert np.diff(ptr).tolist() == [3, 2, 2]
    counts = np.zeros(5)
    for _ in range(3000):
        ptr, items = sample_negatives(np.array([1, 0, 0]), exclude, 5, rng)
        counts[items] += 1
    assert counts[[1, 3]].sum() == 0
    assert counts[[0, 2, 4]].min() > 900  # about 1000 each


def test_sample_negatives_mask_and_sorted_key_paths_draw_the_same(monkeypatch):
    """Small key spaces test membership with a flat mask, large ones with sorted keys: the
    same draws either way, on lists with dense users, several rejection rounds and none."""
    import gbrank.interactions._sampling as sampling

    rng = np.random.default_rng(3)
    for trial in range(200):
        n_users, n_items = int(rng.integers(1, 30)), int(rng.integers(2, 200))
        cells = rng.choice(n_users * n_items, size=int(rng.integers(0, n_users * n_items // 2 + 1)), replace=False)
        exclude = csr_from(cells // n_items, cells % n_items, n_users)
        need = np.minimum(n_items - np.diff(exclude[0]), rng.integers(0, n_items, n_users))
        draws = []
        for mask_bytes in (1 << 26, 0):
            monkeypatch.setattr(sampling, "_MASK_BYTES", mask_bytes)
            draws.append(sample_negatives(need, exclude, n_items, np.random.default_rng(trial)))
        np.testing.assert_array_equal(draws[0][0], draws[1][0])
        np.testing.assert_array_equal(draws[0][1], draws[1][1])
        np.testing.assert_array_equal(np.diff(draws[0][0]), need)


def test_sample_negatives_dense_users_take_the_exact_path():
    exclude = csr_from(np.zeros(90, dtype=np.int64), np.arange(90), 1)
    ptr, items = sample_negatives(np.array([10]), exclude, 100, np.random.default_rng(0))
    assert sorted(items.tolist()) == list(range(90, 100))


def test_too_many_negatives_raise_a_clear_error():
    exclude = csr_from(np.array([0, 0]), np.array([0, 1]), 1)
    with pytest.raises(NotEnoughNegatives, match=r"cannot draw 4 negatives for user 'alice': only 3 of the 5"):
        sample_negatives(np.array([4]), exclude, 5, np.random.default_rng(0), names=np.array(["alice"]))


def test_split_follows_the_paper_protocol():
    X, y = _ratings()
    split = split_interactions(X, y, relevance_threshold=4, min_positives=10, nsr=2, random_state=0)
    positive = y >= 4
    per_user = {u: int(positive[X[:, 0] == u].sum()) for u in np.unique(X[:, 0])}
    kept = {u for u, n in per_user.items() if n >= 10}
    assert set(split.X_train[:, 0]) == kept and set(split.X_test[:, 0]) == kept
    assert split.settings["n_users"] == len(kept)
    for u in kept:
        n_test = int(((split.X_test[:, 0] == u) & (split.y_test >= 4)).sum())
        assert n_test == int(np.floor(0.2 * per_user[u] + 0.5))
        assert int(((split.X_test[:, 0] == u) & (split.y_test == 0)).sum()) == 2 * n_test
        rated = set(X[X[:, 0] == u, 1])
        negatives = set(split.X_test[(split.X_test[:, 0] == u) & (split.y_test == 0), 1])
        assert not negatives & rated  # test negatives were never interacted with
        train_items = set(split.X_train[split.X_train[:, 0] == u, 1])
        test_pos = set(split.X_test[(split.X_test[:, 0] == u) & (split.y_test >= 4), 1])
        assert not train_items & test_pos and (train_items | test_pos) == rated
    assert set(split.y_test[split.y_test > 0]) <= {4.0, 5.0}  # held-out positives keep their rating
    # the low ratings stay in training; the catalogue covers every item of the kept users
    assert (split.y_train < 4).sum() == sum(((y < 4) & (X[:, 0] == u)).sum() for u in kept)
    assert set(split.items) == set(X[np.isin(X[:, 0], list(kept)), 1])
    again = split_interactions(X, y, relevance_threshold=4, min_positives=10, nsr=2, random_state=0)
    assert np.array_equal(again.X_test, split.X_test) and np.array_equal(again.X_train, split.X_train)


def test_split_errors():
    X, y = _ratings(n_users=3)
    with pytest.raises(ValueError, match="no user has at least 500"):
        split_interactions(X, y, min_positives=500)
    with pytest.raises(ValueError, match="nsr"):
        split_interactions(X, y, nsr=0)
    with pytest.raises(ValueError, match="nsr"):
        split_interactions(X, y, nsr=1.5)
    with pytest.raises(ValueError, match="test_size"):
        split_interactions(X, y, test_size=1.0)
    with pytest.raises(ValueError, match="no rows"):
        split_interactions(np.zeros((0, 2)), np.zeros(0))
    with pytest.raises(ValueError, match=r"shape \(n, 2\)"):
        split_interactions(np.zeros((4, 3)), np.zeros(4))
    with pytest.raises(NotEnoughNegatives, match="test negatives"):
        split_interactions(X, y, relevance_threshold=1, min_positives=1, nsr=50)


def test_csr_helpers():
    a = csr_from(np.array([1, 0, 1, 1, 2]), np.array([4, 2, 0, 4, 1]), 4)
    assert a[0].tolist() == [0, 1, 3, 4, 4] and a[1].tolist() == [2, 0, 4, 1]  # sorted, de-duplicated
    assert csr_rows(a[0]).tolist() == [0, 1, 1, 2]
    local, items = csr_take(a[0], a[1], np.array([2, 1]))
    assert local.tolist() == [0, 1, 1] and items.tolist() == [1, 0, 4]
    b = csr_from(np.array([1, 3]), np.array([0, 5]), 4)
    u = csr_union(a, b, 4)
    assert u[0].tolist() == [0, 1, 3, 4, 5] and u[1].tolist() == [2, 0, 4, 1, 5]
    d = csr_difference(a, b, 6)
    assert d[0].tolist() == [0, 1, 2, 3, 3] and d[1].tolist() == [2, 4, 1]
    empty = csr_difference(b, b, 6)
    assert empty[0].tolist() == [0, 0, 0, 0, 0] and len(empty[1]) == 0


def test_input_checks():
    frame = pd.DataFrame({"user": ["a", "b"], "item": [3, 4], "other": [0, 0]})
    users, items, y = check_pairs(frame, [1, 0])
    assert users.tolist() == ["a", "b"] and items.tolist() == [3, 4] and y.dtype == np.float64
    with pytest.raises(ValueError, match="empty"):
        check_pairs(np.zeros((0, 2)))
    assert check_nsr(2) == 2 and check_nsr(3.0) == 3
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="nsr"):
            check_nsr(bad)
    assert display_id(np.int64(7)) == "7" and display_id("u1") == "'u1'"
    assert issubclass(NotEnoughNegatives, ValueError)


def test_public_names_and_layering():
    assert sorted(gi.__all__) == sorted([
        "split_interactions", "InteractionSplit", "NotEnoughNegatives", "ArgumentError", "check_pairs", "check_nsr", "display_id",
        "check_unique_pairs", "csr_from", "csr_take", "csr_rows", "csr_union", "csr_difference", "sample_negatives", "holdout", "top_k"])
    for path in PKG.glob("*.py"):  # of gbrank, only the shared input checks
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 2:
                assert node.module == "_validation", f"{path.name} imports gbrank.{node.module}"
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                assert not any(n.split(".")[0] in ("torch", "gbrank") for n in names), f"{path.name}: {names}"
    code = "import sys, gbrank.interactions; assert 'torch' not in sys.modules"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr


def test_gbrank_torch_re_exports_the_split():
    gt = pytest.importorskip("gbrank.torch")
    assert gt.split_interactions is split_interactions
    assert gt.InteractionSplit is gi.InteractionSplit and gt.NotEnoughNegatives is NotEnoughNegatives
