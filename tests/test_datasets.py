"""gbrank.datasets: paths, LETOR loaders, interaction tables, the synthetic generator.

Unit tests write small files with scikit-learn's own ``dump_svmlight_file`` (an
independent writer) and read them back; the real-data tests skip without GBRANK_DATA.
"""

from __future__ import annotations

import gzip
import shutil
import time

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from scipy.stats import spearmanr
from sklearn.datasets import dump_svmlight_file
from sklearn.linear_model import LinearRegression

from gbrank.datasets import (
    DATASETS,
    RELEVANCE,
    LetorFold,
    LetorSplit,
    data_home,
    label_proportions,
    load_citeulike,
    load_example,
    load_letor,
    load_letor_folds,
    load_movielens,
    make_letor,
    resolve,
)


def n_queries(qid: np.ndarray) -> int:
    return len(np.unique(qid))


def assert_contiguous(qid: np.ndarray) -> None:
    run_starts = np.concatenate(([0], np.flatnonzero(np.diff(qid)) + 1))
    assert len(np.unique(qid[run_starts])) == len(run_starts)


# ---------------------------------------------------------------------------------------
# paths


def test_data_home_unset(monkeypatch):
    monkeypatch.delenv("GBRANK_DATA", raising=False)
    with pytest.raises(FileNotFoundError, match="GBRANK_DATA is not set"):
        data_home()


def test_data_home_missing_folder(monkeypatch, tmp_path):
    monkeypatch.setenv("GBRANK_DATA", str(tmp_path / "nowhere"))
    with pytest.raises(FileNotFoundError, match="not an existing folder"):
        data_home()


def test_resolve_name_under_data_home(monkeypatch, tmp_path):
    (tmp_path / "mq2008").mkdir()
    monkeypatch.setenv("GBRANK_DATA", str(tmp_path))
    assert data_home() == tmp_path
    assert resolve("mq2008") == tmp_path / "mq2008"


def test_resolve_existing_path_as_is(monkeypatch, tmp_path):
    monkeypatch.delenv("GBRANK_DATA", raising=False)
    file = tmp_path / "train.txt"
    file.write_text("1 qid:1 1:0.5\n")
    assert resolve(file) == file
    assert resolve(str(tmp_path)) == tmp_path


def test_resolve_errors_list_known_names(monkeypatch, tmp_path):
    monkeypatch.delenv("GBRANK_DATA", raising=False)
    with pytest.raises(FileNotFoundError, match="GBRANK_DATA") as err:
        resolve("mq2008")
    assert all(name in str(err.value) for name in DATASETS)
    with pytest.raises(FileNotFoundError, match="known dataset name") as err:
        resolve("no-such-dataset")
    assert "citeulike-a" in str(err.value)
    monkeypatch.setenv("GBRANK_DATA", str(tmp_path))  # exists, but holds no mq2008/
    with pytest.raises(FileNotFoundError, match="looked for at .*mq2008"):
        resolve("mq2008")


# ---------------------------------------------------------------------------------------
# load_letor


def _letor_arrays(seed=0, n_features=7):
    rng = np.random.default_rng(seed)
    qid = np.repeat(np.array([7, 3, 12, 5]), [3, 1, 4, 2])  # contiguous, not sorted
    X = rng.integers(0, 1024, size=(qid.size, n_features)) / 1024.0  # exact in text
    X[rng.random(X.shape) < 0.3] = 0.0
    X[:, -1] = 0.5  # the widest feature appears, so the width is n_features
    y = rng.integers(0, 5, size=qid.size).astype(np.float64)
    return X, y, qid


def _write(path, X, y, qid=None):
    if qid is None:
        dump_svmlight_file(X, y, str(path), zero_based=False)
    else:
        dump_svmlight_file(X, y, str(path), query_id=qid, zero_based=False)
    return path


def _gzip(path):
    target = path.with_name(path.name + ".gz")
    with open(path, "rb") as src, gzip.open(target, "wb") as dst:
        shutil.copyfileobj(src, dst)
    return target


def test_load_letor_round_trip_plain_and_gz(tmp_path):
    X, y, qid = _letor_arrays()
    plain = _write(tmp_path / "train.txt", X, y, qid)
    for path in (plain, _gzip(plain)):
        got = load_letor(path)
        assert isinstance(got, LetorSplit)
        assert isinstance(got.X, np.ndarray) and got.X.dtype == np.float64
        assert got.y.dtype == np.float64 and got.qid.dtype == np.int64
        np.testing.assert_array_equal(got.X, X)
        np.testing.assert_array_equal(got.y, y)
        np.testing.assert_array_equal(got.qid, qid)


def test_load_letor_sparse_and_width(tmp_path):
    X, y, qid = _letor_arrays()
    path = _write(tmp_path / "train.txt", X, y, qid)
    Xs, _, _ = load_letor(path, dense=False)
    assert sp.issparse(Xs) and Xs.format == "csr" and Xs.dtype == np.float64
    np.testing.assert_array_equal(Xs.toarray(), X)
    wide, _, _ = load_letor(path, n_features=10)
    assert wide.shape == (X.shape[0], 10)
    np.testing.assert_array_equal(wide[:, : X.shape[1]], X)
    assert not wide[:, X.shape[1]:].any()
    with pytest.raises(ValueError, match="more than n_features=3"):
        load_letor(path, n_features=3)
    with pytest.raises(ValueError, match="positive integer"):
        load_letor(path, n_features=0)


def test_load_letor_query_companion(tmp_path):
    X, y, _ = _letor_arrays()
    sizes = [3, 1, 4, 2]
    path = _write(tmp_path / "rank.train", X, y)
    (tmp_path / "rank.train.query").write_text("\n".join(map(str, sizes)) + "\n")
    got = load_letor(path)
    np.testing.assert_array_equal(got.qid, np.repeat(np.arange(4), sizes))
    np.testing.assert_array_equal(got.X, X)
    # a gzipped file finds x.query beside x.gz
    np.testing.assert_array_equal(load_letor(_gzip(path)).qid, got.qid)


def test_load_letor_qid_fields_win_over_companion(tmp_path):
    X, y, qid = _letor_arrays()
    path = _write(tmp_path / "train.txt", X, y, qid)
    (tmp_path / "train.txt.query").write_text("10\n")
    np.testing.assert_array_equal(load_letor(path).qid, qid)


def test_load_letor_group_sizes_must_sum(tmp_path):
    X, y, _ = _letor_arrays()
    path = _write(tmp_path / "rank.train", X, y)
    (tmp_path / "rank.train.query").write_text("3\n1\n4\n")
    with pytest.raises(ValueError, match="3 queries with 8 rows .* has 10 rows"):
        load_letor(path)
    (tmp_path / "rank.train.query").write_text("3\n1\n4\nfour\n")
    with pytest.raises(ValueError, match="one integer group size per line"):
        load_letor(path)
    (tmp_path / "rank.train.query").write_text("3\n0\n5\n2\n")
    with pytest.raises(ValueError, match="group size of 0"):
        load_letor(path)


def test_load_letor_needs_qids_or_companion(tmp_path):
    X, y, _ = _letor_arrays()
    path = _write(tmp_path / "rank.train", X, y)
    with pytest.raises(ValueError, match=r"no 'qid:' fields and no companion file rank\.train\.query"):
        load_letor(path)


def test_load_letor_non_contiguous_query_is_named(tmp_path):
    X, y, _ = _letor_arrays()
    qid = np.array([1, 1, 2, 2, 3, 3, 9, 9, 3, 4])  # query 3 comes back at row 8
    path = _write(tmp_path / "train.txt", X, y, qid)
    with pytest.raises(ValueError, match="rows of query 3 .* not contiguous .* row 8"):
        load_letor(path)


def test_load_letor_file_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="no LETOR file"):
        load_letor(tmp_path / "missing.txt")
    partial = tmp_path / "partial.txt"
    partial.write_text("1 qid:3 1:0.5\n0 1:0.25\n")
    with pytest.raises(ValueError, match="only 1 carry a 'qid:' field"):
        load_letor(partial)
    zero = tmp_path / "zero.txt"
    zero.write_text("1 qid:3 0:0.5 1:0.25\n")
    with pytest.raises(ValueError, match="1-based"):
        load_letor(zero)
    garbage = tmp_path / "garbage.txt"
    garbage.write_text("relevant qid:3 one:half\n")
    with pytest.raises(ValueError, match="not a valid SVMlight/LETOR file"):
        load_letor(garbage)


# ---------------------------------------------------------------------------------------
# load_letor_folds


def _make_fold(folder, seed, widths=(7, 7, 5), gz=False):
    folder.mkdir(parents=True)
    out = {}
    for split, width in zip(("train", "vali", "test"), widths):
        X, y, qid = _letor_arrays(seed, n_features=width)
        path = _write(folder / f"{split}.txt", X, y, qid)
        if gz:
            _gzip(path)
            path.unlink()
        out[split] = (X, y, qid)
        seed += 1
    return out


def test_load_letor_folds_layout_and_common_width(tmp_path):
    written = {k: _make_fold(tmp_path / f"Fold{k}", seed=10 * k, gz=k == 2) for k in (1, 2, 3)}
    folds = load_letor_folds(tmp_path)
    assert [f.name for f in folds] == ["Fold1", "Fold2", "Fold3"]
    for fold in folds:
        assert isinstance(fold, LetorFold)
        expected = written[int(fold.name[-1])]
        for split in ("train", "vali", "test"):
            X, y, qid = expected[split]
            got = getattr(fold, split)
            assert got.X.shape == (X.shape[0], 7)  # test has 5 features, widened to 7
            np.testing.assert_array_equal(got.X[:, : X.shape[1]], X)
            np.testing.assert_array_equal(got.y, y)
            np.testing.assert_array_equal(got.qid, qid)
    with pytest.raises(AttributeError):
        folds[0].name = "other"  # frozen
    assert [f.name for f in load_letor_folds(tmp_path, folds=[3, 1])] == ["Fold3", "Fold1"]
    assert [f.name for f in load_letor_folds(tmp_path, folds=2)] == ["Fold2"]


def test_load_letor_folds_errors(tmp_path):
    _make_fold(tmp_path / "data" / "Fold1", seed=0)
    with pytest.raises(ValueError, match=r"fold 4 is not in .* choose among \[1\]"):
        load_letor_folds(tmp_path / "data", folds=[1, 4])
    with pytest.raises(ValueError, match="listed twice"):
        load_letor_folds(tmp_path / "data", folds=[1, 1])
    with pytest.raises(ValueError, match="folds is empty"):
        load_letor_folds(tmp_path / "data", folds=[])
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="holds no LETOR data"):
        load_letor_folds(tmp_path / "empty")
    (tmp_path / "data" / "Fold1" / "test.txt").unlink()
    with pytest.raises(FileNotFoundError, match="has no test file"):
        load_letor_folds(tmp_path / "data")
    with pytest.raises(NotADirectoryError):
        load_letor_folds(tmp_path / "data" / "Fold1" / "train.txt")


def test_load_letor_folds_rejects_two_copies_of_a_split(tmp_path):
    _make_fold(tmp_path / "Fold1", seed=0)
    _gzip(tmp_path / "Fold1" / "train.txt")
    with pytest.raises(ValueError, match="several train files"):
        load_letor_folds(tmp_path)


def test_load_letor_folds_single_pair(tmp_path):
    folder = tmp_path / "sample"
    folder.mkdir()
    Xtr, ytr, qtr = _letor_arrays(1, n_features=4)
    Xte, yte, qte = _letor_arrays(2, n_features=6)
    _gzip(_write(folder / "train.5k.txt", Xtr, ytr, qtr))
    (folder / "train.5k.txt").unlink()
    _write(folder / "test.5k.txt", Xte, yte, qte)
    (fold,) = load_letor_folds(folder)
    assert fold.name == "sample" and fold.vali is None
    assert fold.train.X.shape == (Xtr.shape[0], 6) and fold.test.X.shape == Xte.shape
    np.testing.assert_array_equal(fold.train.X[:, :4], Xtr)
    np.testing.assert_array_equal(fold.test.qid, qte)
    with pytest.raises(ValueError, match="single train/test pair"):
        load_letor_folds(folder, folds=[1])


# ---------------------------------------------------------------------------------------
# bundled example


def test_load_example():
    example = load_example()
    assert example.name == "lightgbm-lambdarank-example" and example.vali is None
    train, test = example.train, example.test
    assert train.X.shape == (3005, 300) and test.X.shape == (768, 300)
    assert n_queries(train.qid) == 201 and n_queries(test.qid) == 50
    assert train.X.dtype == np.float64 and train.qid.dtype == np.int64
    np.testing.assert_array_equal(np.bincount(train.y.astype(int)), [645, 1211, 858, 222, 69])
    np.testing.assert_array_equal(np.bincount(test.y.astype(int)), [206, 256, 252, 44, 10])
    sizes = np.bincount(train.qid)
    assert sizes.min() == 1 and sizes.max() == 27
    assert_contiguous(train.qid)
    sparse = load_example(dense=False)
    assert sp.issparse(sparse.test.X)
    np.testing.assert_array_equal(sparse.test.X.toarray(), test.X)


# ---------------------------------------------------------------------------------------
# interactions


def test_load_movielens_folder_file_and_gz(tmp_path):
    text = "userId,movieId,rating,timestamp\r\n1,10,4.0,964982703\r\n1,3,0.5,964981247\r\n2,10,5.0,964982224\r\n"
    folder = tmp_path / "ml"
    folder.mkdir()
    (folder / "ratings.csv").write_bytes(text.encode())
    expected = pd.DataFrame({
        "user": np.array([1, 1, 2], dtype=np.int64),
        "item": np.array([10, 3, 10], dtype=np.int64),
        "rating": [4.0, 0.5, 5.0],
        "timestamp": np.array([964982703, 964981247, 964982224], dtype=np.int64),
    })
    pd.testing.assert_frame_equal(load_movielens(folder), expected)
    pd.testing.assert_frame_equal(load_movielens(folder / "ratings.csv"), expected)
    gz_folder = tmp_path / "ml-gz"
    gz_folder.mkdir()
    with gzip.open(gz_folder / "ratings.csv.gz", "wb") as handle:
        handle.write(text.encode())
    pd.testing.assert_frame_equal(load_movielens(gz_folder), expected)


def test_load_movielens_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="ratings.csv"):
        load_movielens(tmp_path)
    (tmp_path / "ratings.csv").write_text("userId,itemId,rating\n1,2,3.0\n")
    with pytest.raises(ValueError, match=r"lacks the columns \['movieId', 'timestamp'\]"):
        load_movielens(tmp_path)


def test_load_citeulike(tmp_path):
    (tmp_path / "users.dat").write_text("2 5 0\n1 3\n3 0 1 2")  # no trailing newline
    likes = load_citeulike(tmp_path)
    expected = pd.DataFrame({
        "user": np.array([0, 0, 1, 2, 2, 2], dtype=np.int64),
        "item": np.array([5, 0, 3, 0, 1, 2], dtype=np.int64),
        "rating": np.ones(6),
    })
    pd.testing.assert_frame_equal(likes, expected)
    pd.testing.assert_frame_equal(load_citeulike(tmp_path / "users.dat"), expected)


@pytest.mark.parametrize(
    "text, message",
    [
        ("2 5 0\n3 1 2\n1 4", r"line 2 .*\(user 1\) announces 3 items but lists 2"),
        ("2 5 0\n1 x", r"line 2 .*\(user 1\) is not a list of integers"),
        ("2 5 0\n\n1 4", r"line 2 .*\(user 1\) is empty"),
        ("1 -4", r"line 1 .*negative item id"),
        ("", "is empty; it must hold one line per user"),
        ("2 5 0\n3 1 2 1\n3 4 4 4", r"line 2 .*\(user 1\) lists item 1 twice \(ids 1 and 3 of the line; 3 repeated "
                                    r"ids on 2 lines in all\); a library holds each article once: remove"),
        ("2 7 7", r"line 1 .*\(user 0\) lists item 7 twice \(ids 1 and 2 of the line; 1 repeated id on 1 line"),
    ],
)
def test_load_citeulike_errors(tmp_path, text, message):
    (tmp_path / "users.dat").write_text(text)
    with pytest.raises(ValueError, match=message):
        load_citeulike(tmp_path)


# ---------------------------------------------------------------------------------------
# make_letor


def test_make_letor_shapes_and_dtypes():
    X, y, qid = make_letor(n_queries=40, docs_per_query=(3, 9), n_features=6, random_state=0)
    assert X.dtype == np.float64 and y.dtype == np.float64 and qid.dtype == np.int64
    assert X.shape == (len(y), 6) and qid.shape == y.shape
    sizes = np.bincount(qid)
    assert len(sizes) == 40 and sizes.min() >= 3 and sizes.max() <= 9
    assert np.all(np.diff(qid) >= 0)  # sorted, hence contiguous
    assert np.all(np.isfinite(X))
    X, y, qid = make_letor(n_queries=5, docs_per_query=4, n_features=1, random_state=0)
    assert X.shape == (20, 1) and np.all(np.bincount(qid) == 4)


@pytest.mark.parametrize("max_label", [1, 2, 4])
def test_make_letor_labels_fall_off_with_grade(max_label):
    _, y, _ = make_letor(n_queries=400, max_label=max_label, random_state=1)
    assert set(np.unique(y)) == set(range(max_label + 1))
    assert np.all(y == np.round(y))
    shares = np.bincount(y.astype(int)) / len(y)
    np.testing.assert_allclose(shares, label_proportions(max_label), atol=0.01)
    assert np.all(np.diff(shares) < 0)  # most 0, fewest max_label
    if max_label == 4:
        assert shares[0] > 0.45 and shares[4] < 0.02


def test_make_letor_is_seeded():
    a = make_letor(n_queries=20, random_state=7)
    b = make_letor(n_queries=20, random_state=7)
    c = make_letor(n_queries=20, random_state=8)
    for left, right in zip(a, b):
        np.testing.assert_array_equal(left, right)
    assert a[0].shape != c[0].shape or not np.array_equal(a[0], c[0])
    g1 = make_letor(n_queries=20, random_state=np.random.default_rng(7))
    np.testing.assert_array_equal(g1[0], a[0])


@pytest.mark.parametrize("relevance", sorted(RELEVANCE))
def test_make_letor_labels_depend_on_features(relevance):
    X, y, qid = make_letor(n_queries=200, relevance=relevance, random_state=3)
    half = len(np.unique(qid)) // 2
    train, test = qid < half, qid >= half
    model = LinearRegression().fit(X[train], y[train])
    rho = spearmanr(model.predict(X[test]), y[test]).statistic
    assert rho > 0.5, f"held-out Spearman {rho:.2f}"
    # shuffling the rows' labels destroys the link
    shuffled = np.random.default_rng(0).permutation(y)
    model = LinearRegression().fit(X[train], shuffled[train])
    assert abs(spearmanr(model.predict(X[test]), shuffled[test]).statistic) < 0.1


def test_make_letor_custom_relevance():
    X, y, _ = make_letor(n_queries=100, relevance=lambda X, rng: X[:, 0], random_state=0)
    assert spearmanr(X[:, 0], y).statistic > 0.8
    assert abs(spearmanr(X[:, 1], y).statistic) < 0.1


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"n_queries": 0}, "n_queries must be a positive integer"),
        ({"n_queries": 2.5}, "n_queries must be a positive integer"),
        ({"n_features": True}, "n_features must be a positive integer"),
        ({"max_label": 0}, "max_label must be a positive integer"),
        ({"docs_per_query": 0}, "docs_per_query must be a positive integer"),
        ({"docs_per_query": (9, 3)}, r"min <= max"),
        ({"docs_per_query": (0, 3)}, "docs_per_query's min"),
        ({"docs_per_query": (1, 2, 3)}, r"inclusive \(min, max\) pair"),
        ({"docs_per_query": "many"}, r"inclusive \(min, max\) pair"),
        ({"relevance": "quadratic"}, r"relevance must be one of \['linear', 'nonlinear'\]"),
        ({"relevance": lambda X, rng: X[:3, 0]}, "one score per row"),
        ({"relevance": lambda X, rng: X[:, 0] / 0.0}, "NaN or infinite"),
        ({"random_state": -1}, "random_state must be"),
        ({"random_state": "seed"}, "random_state must be"),
    ],
)
def test_make_letor_argument_errors(kwargs, message):
    with np.errstate(divide="ignore", invalid="ignore"), pytest.raises(ValueError, match=message):
        make_letor(n_queries=kwargs.pop("n_queries", 5), **kwargs)


@pytest.mark.slow
def test_make_letor_mslr_sized_is_fast():
    start = time.perf_counter()
    X, y, qid = make_letor(4800, (60, 180), 136, random_state=0)
    elapsed = time.perf_counter() - start
    assert X.shape[1] == 136 and n_queries(qid) == 4800 and 500_000 < len(y) < 650_000
    assert elapsed < 15, f"{elapsed:.1f} s"


# ---------------------------------------------------------------------------------------
# real data (skipped without GBRANK_DATA)

MQ2008_FOLDS = {  # rows, queries per split, from the data folder's README
    1: ((9630, 471), (2707, 157), (2874, 156)),
    2: ((9404, 471), (2874, 156), (2933, 157)),
    3: ((8643, 470), (2933, 157), (3635, 157)),
    4: ((8514, 470), (3635, 157), (3062, 157)),
    5: ((9442, 470), (3062, 157), (2707, 157)),
}


def test_mq2008_folds(dataset_path):
    folds = load_letor_folds(dataset_path("mq2008"))
    assert [f.name for f in folds] == [f"Fold{k}" for k in range(1, 6)]
    for k, fold in enumerate(folds, start=1):
        for split, (rows, queries) in zip((fold.train, fold.vali, fold.test), MQ2008_FOLDS[k]):
            assert split.X.shape == (rows, 46)
            assert n_queries(split.qid) == queries
            assert set(np.unique(split.y)) == {0.0, 1.0, 2.0}
            assert split.X.min() >= 0 and split.X.max() <= 1
    # Fold k's vali is Fold k-1's test (the README's rotation)
    for prev, fold in zip(folds, folds[1:]):
        np.testing.assert_array_equal(fold.vali.X, prev.test.X)
        np.testing.assert_array_equal(fold.vali.qid, prev.test.qid)
    labels = np.concatenate([f.test.y for f in folds]).astype(int)
    np.testing.assert_array_equal(np.bincount(labels), [12279, 2001, 931])


def test_mq2008_single_file(dataset_path):
    X, y, qid = load_letor(dataset_path("mq2008") / "Fold1" / "vali.txt.gz", dense=False)
    assert sp.issparse(X) and X.shape == (2707, 46) and n_queries(qid) == 157


def test_mslr_sample(dataset_path):
    (fold,) = load_letor_folds(dataset_path("mslr-web10k-fold1-sample"))
    assert fold.vali is None
    for split, counts in ((fold.train, [2792, 1458, 665, 55, 30]), (fold.test, [2847, 1442, 579, 98, 34])):
        assert split.X.shape == (5000, 136) and n_queries(split.qid) == 43
        np.testing.assert_array_equal(np.bincount(split.y.astype(int)), counts)
    assert not set(fold.train.qid) & set(fold.test.qid)


def test_lightgbm_example_matches_bundled_copy(dataset_path):
    folder = dataset_path("lightgbm-lambdarank-example")
    example = load_example()
    for name, split in (("rank.train", example.train), ("rank.test", example.test)):
        X, y, qid = load_letor(folder / name, n_features=300)
        np.testing.assert_array_equal(X, split.X)
        np.testing.assert_array_equal(y, split.y)
        np.testing.assert_array_equal(qid, split.qid)


def test_movielens(dataset_path):
    ratings = load_movielens(dataset_path("movielens-latest-small"))
    assert len(ratings) == 100_836 and ratings["user"].nunique() == 610
    assert ratings["item"].nunique() == 9_724
    assert list(ratings.dtypes) == [np.int64, np.int64, np.float64, np.int64]
    assert ratings["rating"].min() == 0.5 and ratings["rating"].max() == 5.0
    assert not ratings.duplicated(["user", "item"]).any()
    assert (ratings["rating"] == 4.0).sum() == 26_818


def test_citeulike(dataset_path):
    likes = load_citeulike(dataset_path("citeulike-a"))
    assert len(likes) == 204_986
    assert likes["user"].nunique() == 5_551 and likes["user"].max() == 5_550
    assert likes["item"].nunique() == 16_980 and likes["item"].max() == 16_979
    assert (likes["rating"] == 1.0).all()
    per_user = likes.groupby("user").size()
    assert per_user.min() == 10 and per_user.max() == 403
    assert not likes.duplicated(["user", "item"]).any()
