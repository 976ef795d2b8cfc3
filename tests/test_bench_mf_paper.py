"""``gbrank bench mf`` on ready train/test folds, as the paper's own CiteULike splits: the
folds read, the feasibility pre-check before any training, the popularity and random
baselines under every protocol, the two selections of (learning rate, epoch) on a
hand-made history, the paper's result tables read and compared cell by cell, and cached
reruns that train nothing.  Tiny synthetic folds in tmp_path, a few epochs."""

from __future__ import annotations

import contextlib
import io
import json
import pathlib
import re

import numpy as np
import pandas as pd
import pytest

from gbrank.cli import main


def _run(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(argv, out=out)
    return code, out.getvalue(), err.getvalue()


def ready_folder(base: pathlib.Path, n_users=24, n_items=90, folds=2, seed=0, id_columns=False, n_liked=30,
                 n_test=6) -> pathlib.Path:
    """fold_K/{train,test}.csv: each user's n_liked best items (low-rank scores) split into
    n_test test and the rest train positives; ``id_columns``: columns user_id,item_id only."""
    rng = np.random.default_rng(seed)
    U, V = rng.normal(size=(n_users, 3)), rng.normal(size=(n_items, 3))
    liked = [np.argsort(-(U[u] @ V.T + 0.5 * rng.normal(size=n_items)))[:n_liked] for u in range(n_users)]
    for k in range(folds):
        sub = base / f"fold_{k}"
        sub.mkdir(parents=True, exist_ok=True)
        tr, te = [], []
        for u in range(n_users):
            items = rng.permutation(liked[u])
            te += [(u, 500 + i) for i in items[:n_test]]
            tr += [(u, 500 + i) for i in items[n_test:]]
        head, fmt = (("user_id,item_id", "{},{}\n") if id_columns else ("user,item,rating,user_id,item_id",
                                                                          "{0},{1},1,{0},{1}\n"))
        (sub / "train.csv").write_text(head + "\n" + "".join(fmt.format(u, i) for u, i in tr))
        (sub / "test.csv").write_text(head + "\n" + "".join(fmt.format(u, i) for u, i in te))
    return base


ARGS = ["--nsr", "1,2", "--losses", "listwise_nrbp", "--epochs", "3", "--patience", "2", "--threads", "1",
        "--no-plots"]


@pytest.fixture(scope="module")
def ready_run(tmp_path_factory):
    base = tmp_path_factory.mktemp("ready")
    data = ready_folder(base / "folds")
    out = base / "out"
    code, text, err = _run(["bench", "mf", "--data", str(data), "--out", str(out), *ARGS])
    assert code == 0, err
    return data, out, text


# ---------------------------------------------------------------------------------------
# ready folds


def test_ready_folds_are_read_and_split(tmp_path):
    from gbrank.bench.mf._splits import fold_numbers, parse_folds, read_fold, read_part, ready_split

    data = ready_folder(tmp_path / "a", id_columns=True, folds=3)
    assert fold_numbers(data) == [0, 1, 2]
    assert parse_folds("2", [0, 1, 2]) == [0, 1] and parse_folds("fold_2,fold_0", [0, 1, 2]) == [2, 0]
    with pytest.raises(ValueError, match="not a fold of the data; its folds are fold_0, fold_1, fold_2"):
        parse_folds("fold_7", [0, 1, 2])
    table, used = read_part(data / "fold_0" / "train.csv")
    assert used == "user_id,item_id" and (table["rating"] == 1).all()
    _, used = read_part(ready_folder(tmp_path / "b", folds=1) / "fold_0" / "train.csv")
    assert used == "user,item,rating"  # user,item preferred over user_id,item_id
    fold = read_fold(data, 1)
    for nsr in (1, 3):
        split = ready_split(fold, nsr=nsr, seed=5, threshold=1.0)
        test = pd.DataFrame({"user": split.X_test[:, 0], "item": split.X_test[:, 1], "y": split.y_test})
        per_user = test.groupby("user")["y"].agg(["size", "sum"])
        np.testing.assert_array_equal(per_user["size"], (nsr + 1) * per_user["sum"])  # NSR x the positives
        seen = set(map(tuple, fold.train[["user", "item"]].to_numpy())) | set(map(tuple, fold.test[["user", "item"]]
                                                                                 .to_numpy()))
        negatives = test[test.y == 0]
        assert not any((u, i) in seen for u, i in negatives[["user", "item"]].to_numpy())
        assert len(set(map(tuple, negatives[["user", "item"]].to_numpy()))) == len(negatives)  # no repeats
        np.testing.assert_array_equal(split.items, np.union1d(fold.train.item, fold.test.item))
        again = ready_split(fold, nsr=nsr, seed=5, threshold=1.0)
        np.testing.assert_array_equal(again.X_test, split.X_test)  # seeded: drawn once, the same every time
    (tmp_path / "c" / "fold_0").mkdir(parents=True)
    (tmp_path / "c" / "fold_0" / "train.csv").write_text("a,b\n1,2\n")
    (tmp_path / "c" / "fold_0" / "test.csv").write_text("a,b\n1,3\n")
    with pytest.raises(ValueError, match="needs a header with columns user,item"):
        read_fold(tmp_path / "c", 0)


def test_validation_is_carved_from_training_positives(tmp_path):
    from gbrank.bench.mf._splits import carve_validation, read_fold, ready_split

    split = ready_split(read_fold(ready_folder(tmp_path), 0), nsr=2, seed=0, threshold=1.0)
    y_fit, X_val, y_val = carve_validation(split.X_train, split.y_train, threshold=1.0, validation_size=0.1, nsr=2,
                                           items=split.items, seed=3)
    held = y_fit < 1
    per_user = pd.Series(held).groupby(split.X_train[:, 0]).sum()
    n_train = pd.Series(split.y_train >= 1).groupby(split.X_train[:, 0]).sum()
    np.testing.assert_array_equal(per_user.to_numpy(), np.floor(0.1 * n_train.to_numpy() + 0.5))  # half up
    pos = {tuple(p) for p in split.X_train[held]}
    assert {tuple(p) for p in X_val[y_val >= 1]} == pos
    train_pairs = {tuple(p) for p in split.X_train}
    negs = X_val[y_val == 0]
    assert len(negs) == 2 * len(pos) and not any(tuple(p) in train_pairs for p in negs)


# ---------------------------------------------------------------------------------------
# feasibility


def test_precheck_stops_before_training_and_drop_counts(tmp_path):
    """At most 60 items, users with 30 of them (22 training positives after validation): NSR 2
    asks for 44 training negatives, more than the at most 36 left."""
    data = ready_folder(tmp_path / "folds", n_users=12, n_items=60, folds=1, n_liked=30)
    out = tmp_path / "out"
    code, text, err = _run(["bench", "mf", "--data", str(data), "--out", str(out), "--nsr", "1,2", "--losses",
                            "listwise_nrbp", "--epochs", "2", "--threads", "1", "--no-plots"])
    assert code == 2
    assert "NSR 2, fold0: 12 of 12 users short (training negatives 12, validation 0, test 0)" in err
    assert re.search(r"first: user \d+ needs 44 train negatives, (3[0-6]|[12]\d) available", err)
    assert "--drop-infeasible-users" in err and "feasible here: 1" in err and "NSR 1, fold0" not in err
    assert not out.exists()  # nothing trained, nothing written
    # a catalogue that fits some users only: they are left out where they are short, and counted
    data = ready_folder(tmp_path / "mixed", n_users=12, n_items=70, folds=1, n_liked=30)
    fold = data / "fold_0"
    extra = "".join(f"{u},{i},1,{u},{i}\n" for u in range(3) for i in range(900, 920))  # 3 heavy users
    (fold / "train.csv").write_text((fold / "train.csv").read_text() + extra)
    code, text, err = _run(["bench", "mf", "--data", str(data), "--out", str(out), "--nsr", "1,2", "--losses",
                            "listwise_nrbp", "--epochs", "2", "--threads", "1", "--no-plots", "--baselines", "none",
                            "--drop-infeasible-users"])
    assert code == 0, err
    md = (out / "summary.md").read_text()
    assert "| 2 | fold0 | 12 | 3 | 3 | 0 | 0 |" in md and "| 1 | fold0 | 12 | 0 | 0 | 0 | 0 |" in md
    pq = pd.read_csv(out / "full" / "per_query.csv.gz")
    assert pq[pq.split == "nsr2-fold0"]["qid"].nunique() == 9 and pq[pq.split == "nsr1-fold0"]["qid"].nunique() == 12
    assert json.loads((out / "config.json").read_text())["plan"]["dropped"] == {"nsr2-fold0": [0, 1, 2]}


def test_precheck_covers_random_splits(tmp_path):
    """Ratings files: the pre-check counts (no split drawn), NotEnoughNegatives never escapes."""
    from gbrank.bench.mf._plan import prepare_mf
    from gbrank.bench.mf._splits import InfeasibleSplits

    rows = [(f"u{u}", i, 5.0) for u in range(10) for i in range(30 if u < 2 else 26)]
    path = tmp_path / "r.csv"
    path.write_text("user,item,rating\n" + "".join(f"{u},{i},{r}\n" for u, i, r in rows))
    with pytest.raises(InfeasibleSplits, match=r"NSR 1, seed0: 10 of 10 users short \(training negatives 10"):
        prepare_mf(data=str(path), nsr="1", splits=1, losses=["listwise_nrbp"], epochs=1, threads=1,
                   relevance_threshold=4, out=str(tmp_path / "o"))


# ---------------------------------------------------------------------------------------
# the command on ready folds


def test_baselines_are_evaluated_under_every_protocol(ready_run):
    data, out, text = ready_run
    assert "12 runs, 0 cached, 12 to train" in text  # NSR 1, 2 x folds 0, 1 x (1 loss + 2 baselines)
    for protocol in ("full", "sampled", "corrected"):
        pq = pd.read_csv(out / protocol / "per_query.csv.gz")
        assert {"popularity", "random", "listwise_nrbp"} <= set(pq["contender"]), protocol
        assert set(pq["split"]) == {"nsr1-fold0", "nsr1-fold1", "nsr2-fold0", "nsr2-fold1"}
    flags = pd.read_csv(out / "baseline_flags.csv")
    assert set(flags["loss"]) == {"listwise_nrbp"} and flags["p"].notna().all()
    np.testing.assert_array_equal(flags["at_or_below"], flags["mean"] <= flags["popularity"])
    md = (out / "summary.md").read_text()
    assert "## Losses at or below the popularity baseline (full catalogue)" in md
    assert "paired t-test" in md
    assert "| popularity |" in md and "| random |" in md
    # the per-epoch record: the paper's six metrics on test and validation lists
    chosen = pd.read_csv(out / "selection.csv")
    assert set(chosen["metric"]) == {"ap", "ndcg", "rr", "rbp@0.8", "rbp@0.9", "rbp@0.95"}
    a = chosen[(chosen.selection == "a") & (chosen.loss == "listwise_nrbp")]
    b = chosen[(chosen.selection == "b") & (chosen.loss == "listwise_nrbp")]
    assert (a.set_index(["split", "metric"])["test"] >= b.set_index(["split", "metric"])["test"]).all()
    assert "(a)** paper" in md and "(b)** honest" in md


def test_baseline_scores_are_consistent():
    from gbrank.bench.mf._baselines import BaselineScorer

    X = np.array([[u, i] for u in range(5) for i in range(u + 1)])
    y = np.ones(len(X))
    for kind in ("popularity", "random"):
        b = BaselineScorer(kind, X, y, np.arange(8), 1.0, seed=3)
        rows = b._score_user_rows(np.arange(5))
        u, i = np.meshgrid(np.arange(5), np.arange(8), indexing="ij")
        np.testing.assert_array_equal(rows, b._score_codes(u.ravel(), i.ravel()).reshape(5, 8))
        np.testing.assert_array_equal(b.predict(np.array([[2, 1], [4, 7]])), rows[[2, 4], [1, 7]])
    pop = BaselineScorer("popularity", X, y, np.arange(8), 1.0, seed=3)._score_user_rows(np.arange(5))
    counts = np.bincount(X[:, 1], minlength=8)  # item 0: 5 users, item 4: 1, items 5-7: 0
    assert (np.argsort(-pop, axis=1)[:, :5] == np.arange(5)).all()  # more positives, higher score
    assert ((pop - counts) >= 0).all() and ((pop - counts) < 0.5).all()


def test_cached_rerun_trains_nothing(ready_run):
    data, out, _ = ready_run
    runs = out / "runs"
    before = {p.name: p.stat().st_mtime_ns for p in runs.glob("*.npz")}
    assert len(before) == 12
    code, text, err = _run(["bench", "mf", "--data", str(data), "--out", str(out), *ARGS])
    assert code == 0, err
    assert "12 runs, 12 cached, 0 to train" in text
    assert {p.name: p.stat().st_mtime_ns for p in runs.glob("*.npz")} == before


# ---------------------------------------------------------------------------------------
# the two selections


def test_selections_on_a_hand_made_history():
    from gbrank.bench.mf._select import select, selection_means

    metrics = ["ap"]
    rows = []
    # lr 0.1: test peaks at epoch 2 (0.9), validation peaks at epoch 3 (0.8, test 0.7)
    for epoch, t, v in ((1, 0.5, 0.5), (2, 0.9, 0.6), (3, 0.7, 0.8)):
        rows.append({"nsr": 1, "split": "nsr1-fold0", "loss": "x", "lr": 0.1, "epoch": epoch, "test:ap": t,
                     "validation:ap": v})
    # lr 1: test 0.9 too but later (a tie: the first lr of the grid wins), validation 0.85 at epoch 1 (test 0.6)
    for epoch, t, v in ((1, 0.6, 0.85), (2, 0.9, 0.1)):
        rows.append({"nsr": 1, "split": "nsr1-fold0", "loss": "x", "lr": 1.0, "epoch": epoch, "test:ap": t,
                     "validation:ap": v})
    rows.append({"nsr": 1, "split": "nsr1-fold1", "loss": "x", "lr": 0.1, "epoch": 1, "test:ap": 0.3,
                 "validation:ap": np.nan})
    rows.append({"nsr": 1, "split": "nsr1-fold1", "loss": "x", "lr": 0.1, "epoch": 2, "test:ap": 0.2,
                 "validation:ap": 0.4})
    chosen = select(pd.DataFrame(rows), metrics).set_index(["split", "selection"])
    a, b = chosen.loc[("nsr1-fold0", "a")], chosen.loc[("nsr1-fold0", "b")]
    assert (a.lr, a.epoch, a.test) == (0.1, 2, 0.9)
    assert (b.lr, b.epoch, b.test, b.validation) == (1.0, 1, 0.6, 0.85)
    b1 = chosen.loc[("nsr1-fold1", "b")]
    assert (b1.epoch, b1.test) == (2, 0.2)  # a missing validation value is never chosen
    means = selection_means(select(pd.DataFrame(rows), metrics)).set_index("selection")
    assert means.loc["a", "test"] == pytest.approx((0.9 + 0.3) / 2) and means.loc["a", "splits"] == 2
    assert means.loc["b", "test"] == pytest.approx((0.6 + 0.2) / 2) and means.loc["b", "lrs"] == "1,0.1"


# ---------------------------------------------------------------------------------------
# the paper's tables


def _fake_table(path: pathlib.Path, paradigm: str):
    rows = []
    for optim in ("ap", "dcg", "rr", "rbp_80", "rbp_90", "rbp_95"):
        for fold in (0, 1, 2):
            for nsr in (1, 2, 5):
                for j, metric in enumerate(("AP", "NDCG", "RBP_80", "RBP_90", "RBP_95", "RR")):
                    y = 0.5 + 0.01 * fold + 0.001 * j - 0.02 * nsr
                    rows.append((optim, 0.01, fold, nsr, "citeulike", metric, y))
                    rows.append((optim, 0.01, fold, nsr, "Epinions", metric, 0.0))
    frame = pd.DataFrame(rows, columns=["metric_optim", "lr", "fold", "NSR", "dataset", "metric_eval", "y"])
    frame.to_csv(path / f"{paradigm}_results_best.csv.gz", index=False)


def test_paper_tables_are_read_and_compared(tmp_path):
    from gbrank.bench.mf._paper import comparison, loss_of, paper_means, read_paper_table, write_comparison

    for paradigm in ("listwise", "lambda"):
        _fake_table(tmp_path, paradigm)
    rows = read_paper_table(tmp_path / "lambda_results_best.csv.gz")
    assert set(rows["dataset"]) == {"citeulike"} and len(rows) == 6 * 3 * 3 * 6
    assert set(rows["metric"]) == {"ap", "ndcg", "rr", "rbp@0.8", "rbp@0.9", "rbp@0.95"}
    paper = paper_means(tmp_path)
    assert len(paper) == 2 * 3 * 6 * 6 and (paper["paper_folds"] == 3).all()
    cell = paper[(paper.paradigm == "lambda") & (paper.nsr == 2) & (paper.objective == "dcg")
                 & (paper.metric_eval == "RBP_80")]
    assert cell["paper"].iloc[0] == pytest.approx(0.5 + 0.01 + 0.002 - 0.04)
    assert loss_of("lambda", "rbp_80") == "lambda_nrbp@0.8" and loss_of("listwise", "rbp_90") == "listwise_nrbp"
    assert loss_of("listwise", "dcg") == "listwise_ndcg" and loss_of("lambda", "rbp_95") == "lambda_nrbp@0.95"
    means = pd.DataFrame([
        {"nsr": 2, "loss": "lambda_ndcg", "metric": "rbp@0.8", "selection": "a", "test": 0.6, "splits": 1,
         "lrs": "0.1", "epochs": "7"},
        {"nsr": 2, "loss": "lambda_ndcg", "metric": "rbp@0.8", "selection": "b", "test": 0.45, "splits": 1,
         "lrs": "1", "epochs": "3"},
        {"nsr": 1, "loss": "listwise_nrbp", "metric": "ap", "selection": "a", "test": 0.49, "splits": 2,
         "lrs": "0.1,0.1", "epochs": "4,5"}])
    table = comparison(paper, means)
    assert len(table) == len(paper)  # missing cells are kept
    hit = table[(table.paradigm == "lambda") & (table.nsr == 2) & (table.objective == "dcg")
                & (table.metric_eval == "RBP_80")].iloc[0]
    assert hit["status"] == "flag" and hit["diff_a"] == pytest.approx(0.6 - 0.472)
    assert hit["b"] == 0.45
    # the one listwise nRBP run answers the three listwise rbp rows
    lw = table[(table.paradigm == "listwise") & (table.nsr == 1) & (table.metric_eval == "AP")
               & table.objective.str.startswith("rbp")]
    assert list(lw["a"]) == [0.49] * 3 and set(lw["status"]) == {"ok"}
    assert (table["status"] == "not run").sum() == len(table) - 4
    write_comparison(tmp_path, table, ["note"])
    md = (tmp_path / "paper_comparison.md").read_text()
    assert "## LambdaRank-MF, NSR 2" in md and "not run" in md
    assert "| dcg (lambda_ndcg) | RBP_80 | 0.4720 | 0.6000 | 0.4500 | +0.1280 | -0.0220 | ! |" in md
    doc = json.loads((tmp_path / "paper_comparison.json").read_text())
    assert len(doc["cells"]) == len(table) and doc["tolerance"] == 0.02
    bad = tmp_path / "bad"
    bad.mkdir()
    pd.DataFrame({"metric_optim": ["ap"], "y": [1.0]}).to_csv(bad / "lambda_results_best.csv.gz", index=False)
    with pytest.raises(ValueError, match="lacks column"):
        paper_means(bad)


def test_paper_comparison_written_for_the_paper_splits(tmp_path):
    """A ready folder with paper-results/ beside its folds gets OUT/paper_comparison.md: its
    data preset asks for the named analysis ``paper``; ``--analyses none`` leaves it out."""
    data = ready_folder(tmp_path / "folds", folds=1)
    (data / "paper-results").mkdir()
    for paradigm in ("listwise", "lambda"):
        _fake_table(data / "paper-results", paradigm)
    out = tmp_path / "out"
    argv = ["bench", "mf", "--data", str(data), "--out", str(out), "--nsr", "1", "--losses", "lambda_nrbp@0.8",
            "--baseline", "lambda_nrbp@0.8", "--baselines", "none", "--epochs", "2", "--threads", "1", "--no-plots"]
    code, text, err = _run([*argv, "--analyses", "none"])
    assert code == 0, err
    assert not (out / "paper_comparison.md").exists() and "paper_comparison" not in (out / "summary.md").read_text()
    assert json.loads((out / "config.json").read_text())["plan"]["analyses"] == []
    code, text, err = _run(argv)  # the runs are cached now
    assert code == 0, err
    assert json.loads((out / "config.json").read_text())["plan"]["analyses"] == ["paper"]
    doc = json.loads((out / "paper_comparison.json").read_text())
    run = [c for c in doc["cells"] if c["status"] != "not run"]
    assert len(run) == 6 and {c["loss"] for c in run} == {"lambda_nrbp@0.8"} and {c["nsr"] for c in run} == {1}
    assert "paper_comparison.md" in (out / "summary.md").read_text()


@pytest.mark.skipif(not (pathlib.Path(__file__).resolve().parents[2] / "shared" / "data" /
                         "citeulike-a-paper-splits").is_dir(), reason="../shared/data/citeulike-a-paper-splits absent")
def test_citeulike_paper_name_resolves(monkeypatch):
    from gbrank.bench.mf._plan import prepare_mf

    monkeypatch.setenv("GBRANK_DATA", str(pathlib.Path(__file__).resolve().parents[2] / "shared" / "data"))
    plan = prepare_mf(data="citeulike-paper", nsr="1,5", splits="fold_1", losses=["lambda_ndcg"], epochs=1, threads=1,
                      out="unused")
    assert plan.seeds == [1] and plan.ready.endswith("citeulike-a-paper-splits") and plan.paper_tables
    assert plan.data_summary["users"] == 2465 and plan.data_summary["items"] == 16702
    assert not any(r["short"] for r in plan.feasibility)


# ---- learning-rate grids per family ------------------------------------------------------
def test_learning_rate_grids_per_family_and_the_papers():
    from gbrank.bench.mf._plan import PAPER_GRID, parse_learning_rates, rates_for_loss

    assert parse_learning_rates(None) is None
    assert parse_learning_rates("0.1, 0.01,0.1") == [0.1, 0.01]
    paper = parse_learning_rates("paper")
    assert paper == PAPER_GRID and paper is not PAPER_GRID
    assert rates_for_loss(paper, "listwise_nrbp") == [0.001, 0.01, 0.1, 1.0, 3.0, 10.0]
    assert rates_for_loss(paper, "lambda_nrbp@0.8") == [0.001, 0.01]
    assert rates_for_loss(paper, "kos_warp") is None  # not named: the loss's default rate
    grid = parse_learning_rates("listwise=1,10; lambda_nrbp=0.1; lambda=0.01")
    assert rates_for_loss(grid, "lambda_nrbp@0.9") == [0.1]  # the longest key wins
    assert rates_for_loss(grid, "lambda_ndcg") == [0.01]
    assert rates_for_loss(grid, "listwise_nrbp+minmax") == [1.0, 10.0]
    assert rates_for_loss([0.5], "anything") == [0.5]


@pytest.mark.parametrize("text, words", [
    ("listwise=", "is empty (for listwise)"),
    ("listwise=1;listwise=2", "names 'listwise' twice"),
    ("=1", "is not FAMILY=RATES"),
    ("lambda=-1", "positive numbers"),
    ("x", "'x' is not a number"),
])
def test_bad_learning_rate_grids_name_the_problem(text, words):
    from gbrank.bench.mf._plan import parse_learning_rates

    with pytest.raises(ValueError, match=re.escape(words)):
        parse_learning_rates(text)


def test_a_grid_key_that_names_no_loss_stops_before_training(tmp_path):
    from gbrank.bench import prepare_mf

    from test_bench_mf import _ratings

    data = _ratings(tmp_path / "ratings.csv", n_users=30)
    with pytest.raises(ValueError, match=r"names \['listwize'\], which match no loss"):
        prepare_mf(data=str(data), learning_rates="listwize=1", out=str(tmp_path / "o"))
