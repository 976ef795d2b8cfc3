"""``gbrank bench mf``: the command on tiny synthetic ratings (outputs, a direct evaluation
of the same models, resume from cached runs, bad arguments), and the corrected sampled
estimate of Krichene & Rendle (exact without sampling, unbiased for the mean metric when
true ranks are uniform, checked by simulation)."""

from __future__ import annotations

import io
import json
import pathlib

import numpy as np
import pandas as pd
import pytest

from gbrank.bench.mf._correction import corrected_metrics, rescaled_rank, sampled_ranks
from gbrank.cli import main
from gbrank.evaluation import evaluate

METRICS = ["ndcg", "ndcg@1", "ndcg@5", "ndcg@20", "ap", "rr", "nrbp@0.8", "nrbp@0.95", "auc"]


# ---------------------------------------------------------------------------------------
# the correction


def _random_lists(rng, n_users=40):
    users, scores, rel = [], [], []
    for u in range(n_users):
        n = int(rng.integers(5, 80))
        r = int(rng.integers(1, min(n - 1, 12) + 1))
        s = rng.normal(size=n)
        lab = np.zeros(n, dtype=bool)
        lab[rng.choice(n, r, replace=False)] = True
        users += [u] * n
        scores += list(s)
        rel += list(lab)
    return np.array(users), np.array(scores), np.array(rel)


def test_without_sampling_the_estimate_is_the_exact_metric():
    """m = N: every sampled rank is the full rank, and the formulas meet gbrank.evaluate."""
    users, scores, rel = _random_lists(np.random.default_rng(0))
    n_users = users.max() + 1
    pu, k = sampled_ranks(users, scores, rel, n_users)
    N = np.bincount(users[~rel], minlength=n_users)
    est = corrected_metrics(pu, k, N, N, METRICS)
    ref = evaluate(rel.astype(float), scores, users, METRICS, relevance_threshold=1, empty="zero").per_query
    for m in METRICS:
        np.testing.assert_allclose(est[m], ref[m].sort_index().to_numpy(), rtol=1e-12, atol=1e-12, err_msg=m)


def test_corrected_estimate_is_unbiased_for_uniform_true_ranks():
    """The posterior mean under a uniform prior on the full rank is unbiased for the mean
    metric when true ranks are uniform (law of total expectation), while the naive sampled
    metric is far off; the truth and the draws are simulated."""
    rng = np.random.default_rng(1)
    N, m, n = 400, 8, 200_000
    K = rng.integers(0, N + 1, n)  # true negatives above the relevant item
    k = rng.hypergeometric(K, N - K, m)  # m negatives sampled without replacement
    users = np.arange(n)
    est = corrected_metrics(users, k, np.full(n, N), np.full(n, m), METRICS)
    truth = corrected_metrics(users, K, np.full(n, N), np.full(n, N), METRICS)
    naive = corrected_metrics(users, k, np.full(n, m), np.full(n, m), METRICS)
    for name in METRICS:
        se = est[name].std() / np.sqrt(n) + truth[name].std() / np.sqrt(n)
        assert abs(est[name].mean() - truth[name].mean()) < 4 * se, name
        if name != "auc":  # the sampled AUC is itself unbiased; the top-heavy metrics are not
            assert naive[name].mean() > truth[name].mean() + 20 * se, name


def test_unbiased_through_real_subsets_of_scored_items():
    """End to end with scores: each user's relevant item sits at a uniform rank among N
    scored negatives; m of them are drawn as a subset; sampled_ranks + the correction."""
    rng = np.random.default_rng(2)
    n_users, N, m = 6000, 60, 5
    truth_rank = rng.integers(0, N + 1, n_users)
    neg_scores = -np.arange(N, dtype=float)  # negative i has i negatives above it
    rows_u, rows_s, rows_r = [], [], []
    for u in range(n_users):
        chosen = rng.choice(N, m, replace=False)
        rows_u += [u] * (m + 1)
        rows_s += list(neg_scores[chosen]) + [-(truth_rank[u] - 0.5)]
        rows_r += [False] * m + [True]
    pu, k = sampled_ranks(np.array(rows_u), np.array(rows_s), np.array(rows_r), n_users)
    est = corrected_metrics(pu, k, np.full(n_users, N), np.full(n_users, m), ["ndcg", "rr", "auc"])
    exact = corrected_metrics(np.arange(n_users), truth_rank, np.full(n_users, N), np.full(n_users, N),
                              ["ndcg", "rr", "auc"])
    for name in ("ndcg", "rr", "auc"):
        se = est[name].std() / np.sqrt(n_users) + exact[name].std() / np.sqrt(n_users)
        assert abs(est[name].mean() - exact[name].mean()) < 4 * se, name
    # the simple rank estimate k N / m is unbiased for the rank itself
    assert abs(rescaled_rank(k, N, m).mean() - truth_rank.mean()) < 4 * rescaled_rank(k, N, m).std() / np.sqrt(n_users)


def test_correction_rejects_bad_input():
    with pytest.raises(ValueError, match="no corrected estimate for metric 'p@5'"):
        corrected_metrics(np.array([0]), np.array([0]), np.array([5]), np.array([2]), ["p@5"])
    with pytest.raises(ValueError, match="subset"):
        corrected_metrics(np.array([0]), np.array([0]), np.array([5]), np.array([6]), ["ndcg"])


# ---------------------------------------------------------------------------------------
# the command


def _ratings(path: pathlib.Path, n_users=30, n_items=110, seed=0) -> pathlib.Path:
    """Low-rank synthetic ratings: each user's 32 best items rated 5, 8 others rated 2."""
    rng = np.random.default_rng(seed)
    U, V = rng.normal(size=(n_users, 3)), rng.normal(size=(n_items, 3))
    rows = []
    for u in range(n_users):
        s = U[u] @ V.T + 0.5 * rng.normal(size=n_items)
        order = np.argsort(-s)
        rows += [(f"u{u}", 1000 + i, 5.0) for i in order[:32]]
        rows += [(f"u{u}", 1000 + i, 2.0) for i in rng.choice(order[32:], 8, replace=False)]
    path.write_text("user,item,rating\n" + "".join(f"{u},{i},{r}\n" for u, i, r in rows))
    return path


ARGS = ["--nsr", "1,2", "--splits", "1", "--seed", "3", "--losses", "listwise_nrbp,lambda_ndcg", "--epochs", "2",
        "--patience", "1", "--jobs", "1", "--threads", "1"]


def _run(argv):
    out, err = io.StringIO(), io.StringIO()
    import contextlib

    with contextlib.redirect_stderr(err):
        code = main(argv, out=out)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def bench_run(tmp_path_factory):
    base = tmp_path_factory.mktemp("bench_mf")
    data = _ratings(base / "ratings.csv")
    out = base / "out"
    code, text, err = _run(["bench", "mf", "--data", str(data), "--out", str(out), *ARGS])
    assert code == 0, err
    return data, out, text


def test_bench_mf_writes_the_reports(bench_run):
    data, out, text = bench_run
    assert "8 runs, 0 cached, 8 to train" in text  # 2 NSR x (2 losses + the popularity and random baselines)
    for protocol in ("full", "sampled", "corrected"):
        folder = out / protocol
        for name in ("summary.md", "summary.json", "config.json", "per_query.csv.gz", "metrics.png", "wins.png",
                     "cdf.png", "ndcg_at_k.png", "diff_vs_relevant.png"):
            assert (folder / name).is_file(), f"{protocol}/{name}"
        summary = json.loads((folder / "summary.json").read_text())
        assert summary["baseline"] == "listwise_nrbp"
        assert set(summary["contenders"]) == {"listwise_nrbp", "lambda_ndcg", "popularity", "random"}
        assert protocol in summary["conventions"]["protocol"]
        pq = pd.read_csv(folder / "per_query.csv.gz")
        assert set(pq["split"]) == {"nsr1-seed3", "nsr2-seed3"}
        assert len(pq) == 4 * 2 * 30  # contenders x splits x users
    config = json.loads((out / "config.json").read_text())
    assert config["seeds"]["splits"] == [3]
    assert config["environment"]["torch"]
    assert len(config["runs"]) == 8
    md = (out / "summary.md").read_text()
    assert "| listwise_nrbp (nrbp@0.95) |" in md
    full = pd.read_csv(out / "full" / "per_query.csv.gz")
    sampled = pd.read_csv(out / "sampled" / "per_query.csv.gz")
    # the sampled lists are short: NSR x as many negatives as positives
    np.testing.assert_array_equal(sampled[sampled.split == "nsr2-seed3"]["n_items"],
                                  3 * sampled[sampled.split == "nsr2-seed3"]["n_relevant"])
    assert (full["n_items"] > sampled["n_items"].max()).all()
    assert sampled["ndcg"].mean() > full["ndcg"].mean()  # sampled metrics are optimistic
    # beyond accuracy beside accuracy: one row per run, and a table per loss and NSR in summary.md
    assert "## Beyond accuracy: each user's top 10 over the full catalogue" in md
    assert ("| loss | NSR | nDCG@10 | coverage | distinct items | novelty | ILD | serendipity | ARP | "
            "ARP / catalogue |") in md
    assert sum(line.startswith("| lambda_ndcg | ") for line in md.splitlines()) >= 2
    beyond = pd.read_csv(out / "beyond_accuracy.csv")
    assert len(beyond) == 8 and (beyond["k"] == 10).all()
    assert beyond["coverage"].between(10 / 110, 1).all()
    assert (beyond["aggregate_diversity"] == np.round(beyond["coverage"] * 110)).all()
    assert beyond["intra_list_diversity"].between(0, 2).all() and beyond["serendipity"].between(0, 1).all()
    assert (beyond["novelty"] > 0).all() and (beyond["arp"] > 0).all()
    np.testing.assert_allclose(beyond["popularity_ratio"], beyond["arp"] / beyond["catalogue_popularity"], rtol=1e-6)


def test_summary_equals_a_direct_evaluation(bench_run):
    """The same split, validation split and model trained directly, evaluated with
    evaluate_recommender."""
    from gbrank.bench.mf._splits import carve_validation
    from gbrank.torch import MFRanker, evaluate_recommender, split_interactions

    data, out, _ = bench_run
    frame = pd.read_csv(data)
    X, y = frame[["user", "item"]].to_numpy(), frame["rating"].to_numpy()
    split = split_interactions(X, y, relevance_threshold=4, min_positives=25, nsr=2, random_state=3)
    y_fit, X_val, y_val = carve_validation(split.X_train, split.y_train, threshold=4, validation_size=0.1, nsr=2,
                                           items=split.items, seed=3)
    model = MFRanker(loss="lambda_ndcg", n_factors=32, nsr=2, optimizer="adam", learning_rate=0.01, epochs=2,
                     batch_size=32, early_stopping=1, validation_size=0, relevance_threshold=4, device="cpu",
                     random_state=3, verbose=0).fit(split.X_train, y_fit, items=split.items, eval_set=(X_val, y_val))
    metrics = ["ndcg@10", "ndcg", "ap", "rr", "nrbp@0.95", "auc"]
    for protocol in ("full", "sampled"):
        direct = evaluate_recommender(model, split, protocol=protocol, metrics=metrics).mean()
        summary = json.loads((out / protocol / "summary.json").read_text())
        reported = summary["splits"]["lambda_ndcg"]["nsr2-seed3"]
        for m in metrics:
            assert reported[m] == pytest.approx(direct[m], abs=1e-9), (protocol, m)
    # beyond accuracy of model.recommend's top 10 (ids mapped to codes), computed directly
    from scipy import sparse

    import gbrank

    code = lambda ids, known: pd.Index(known).get_indexer(ids)  # noqa: E731
    users = np.unique(code(split.test_positives[:, 0], model.users_))
    recs = code(model.recommend(model.users_[users], k=10).ravel(), model.items_).reshape(-1, 10)
    tu, ti = code(split.X_train[:, 0], model.users_), code(split.X_train[:, 1], model.items_)
    lists = pd.DataFrame({"user": np.repeat(users, 10), "item": recs.ravel(), "rank": np.tile(np.arange(10), len(users))})
    vectors = sparse.csr_matrix((np.ones(len(tu)), (ti, tu)), shape=(model.n_items_, model.n_users_))
    vectors.data[:] = 1.0
    test = np.column_stack([code(split.test_positives[:, 0], model.users_),
                            code(split.test_positives[:, 1], model.items_)])
    direct = gbrank.beyond_accuracy(lists, test, np.column_stack([tu, ti]), model.n_items_,
                                    item_vectors=vectors).aggregate
    row = pd.read_csv(out / "beyond_accuracy.csv").query("loss == 'lambda_ndcg' and nsr == 2").iloc[0]
    for m in ("coverage", "aggregate_diversity", "novelty", "intra_list_diversity", "serendipity", "arp",
              "popularity_ratio"):
        assert row[m] == pytest.approx(direct[m], rel=1e-5), m


def test_bench_mf_resumes_from_cached_runs(bench_run, tmp_path):
    from gbrank.bench import RunStore
    from gbrank.bench.mf._bench import cached_run, prepare_mf, run_name, run_versions

    data, out, _ = bench_run
    runs = out / "runs"
    before = {p.name: p.stat().st_mtime_ns for p in runs.glob("*.npz")}
    assert len(before) == 8 and not list(runs.glob("*.tmp"))  # one file per run, no leftovers
    first = json.loads((out / "full" / "summary.json").read_text())["contenders"]
    plan = prepare_mf(data=str(data), nsr="1,2", splits=1, seed=3, losses=["listwise_nrbp", "lambda_ndcg"],
                      epochs=2, patience=1, out=str(out), jobs=1, threads=1)
    lr = plan.lr_grid["lambda_ndcg"][0]
    assert lr == 0.01  # Adam's default rate
    removed = RunStore(runs).path(run_name(plan, 2, 3, "lambda_ndcg", lr))
    removed.unlink()  # as if killed before this run finished
    # --report-only reports the splits every loss finished and names the others
    code, text, err = _run(["bench", "mf", "--data", str(data), "--out", str(tmp_path / "partial"), *ARGS,
                            "--no-plots", "--report-only"])
    assert code == 2 and "no (NSR, split) of this plan has all its runs finished" in err
    code, text, err = _run(["bench", "mf", "--data", str(data), "--out", str(out), *ARGS, "--no-plots",
                            "--report-only"])
    assert code == 0, err
    assert "left out the unfinished splits nsr2-seed3" in text
    partial = json.loads((out / "full" / "summary.json").read_text())
    assert set(partial["splits"]["lambda_ndcg"]) == {"nsr1-seed3"}
    assert "nsr2-seed3" in (out / "summary.md").read_text()
    assert not removed.exists()  # nothing was trained
    code, text, err = _run(["bench", "mf", "--data", str(data), "--out", str(out), *ARGS, "--no-plots"])
    assert code == 0, err
    assert "8 runs, 7 cached, 1 to train" in text
    after = {p.name: p.stat().st_mtime_ns for p in runs.glob("*.npz")}
    assert {n for n in after if after[n] != before.get(n)} == {removed.name}
    again = json.loads((out / "full" / "summary.json").read_text())["contenders"]
    assert again == first  # seeded on the CPU: the retrained run is the same model
    # other settings do not reuse the cache
    assert cached_run(plan, 2, 3, "lambda_ndcg") is not None
    # nor a run made under other versions, and the log says so
    store, name = RunStore(runs), run_name(plan, 2, 3, "lambda_ndcg", lr)
    run = store.load(name)
    assert run.record["versions"] == run_versions()
    assert run.record["versions"]["torch"] == pytest.importorskip("torch").__version__
    store.save(name, run.arrays, {**run.record, "versions": {**run.record["versions"], "torch": "0.0"}})
    assert cached_run(plan, 2, 3, "lambda_ndcg") is None
    code, text, err = _run(["bench", "mf", "--data", str(data), "--out", str(out), *ARGS, "--no-plots"])
    assert code == 0, err
    assert "8 runs, 7 cached, 1 to train" in text and "1 cached run was made under other library versions" in text
    plan.epochs = 4
    assert cached_run(plan, 2, 3, "lambda_ndcg") is None


def test_bench_mf_options_select_the_protocol(tmp_path):
    """--negatives and --epoch-on enter the cache key only when chosen, reach the model and
    are stated in the report; the bounded listwise losses are one group."""
    from gbrank.bench.mf._plan import LOSS_GROUPS, parse_losses, prepare_mf

    assert len(parse_losses(["boundings"])) == 12 and "listwise_ap+distribution" in LOSS_GROUPS["boundings"]
    data = _ratings(tmp_path / "ratings.csv", n_users=30)
    plan = prepare_mf(data=str(data), nsr="1", splits=1, losses=["listwise_nrbp"], epochs=2, patience=1,
                      out=str(tmp_path / "o"), jobs=1, threads=1)
    assert "negatives" not in plan.training_settings() and "epoch_on" not in plan.training_settings()
    code, text, err = _run(["bench", "mf", "--data", str(data), "--out", str(tmp_path / "o"), "--nsr", "1",
                            "--splits", "1", "--losses", "listwise_nrbp", "--epochs", "2", "--patience", "1",
                            "--threads", "1", "--no-plots", "--epoch-on", "test", "--negatives", "non_relevant"])
    assert code == 0, err
    md = (tmp_path / "o" / "summary.md").read_text()
    assert "epoch chosen on the test lists" in md and "--negatives non_relevant" in md
    config = json.loads((tmp_path / "o" / "config.json").read_text())
    assert config["plan"]["epoch_on"] == "test" and config["plan"]["negatives"] == "non_relevant"


@pytest.mark.parametrize("argv, message", [
    (["--losses", "listwise_foo"], "unknown loss 'listwise_foo'"),
    (["--losses", "listwise,nope"], "valid names: bpr, kos_auc"),
    (["--nsr", "0"], "--nsr takes positive integers"),
    (["--nsr", "1,x"], "'x' is not a number"),
    (["--splits", "0"], "--splits must be a positive"),
    (["--epochs", "0"], "--epochs must be a positive integer"),
    (["--baseline", "nope"], "--baseline: unknown loss"),
    (["--device", "tpu"], "unknown device 'tpu'"),
    (["--min-positives", "500"], "no user has at least 500 positive"),
])
def test_bad_arguments_fail_before_training(tmp_path, argv, message):
    data = _ratings(tmp_path / "ratings.csv", n_users=6)
    out = tmp_path / "out"
    code, text, err = _run(["bench", "mf", "--data", str(data), "--out", str(out), *argv])
    assert code == 2
    assert message in err
    assert not out.exists()  # nothing trained, nothing written


def test_missing_data_fails_with_the_fix(tmp_path):
    code, _, err = _run(["bench", "mf", "--data", str(tmp_path / "nowhere.csv")])
    assert code == 2
    assert "neither 'movielens', 'citeulike' nor an existing file" in err
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n1,2\n")
    code, _, err = _run(["bench", "mf", "--data", str(bad)])
    assert code == 2 and "needs a header with columns user,item" in err


@pytest.mark.slow
def test_parallel_jobs_give_the_same_numbers(bench_run, tmp_path):
    """--jobs 2 trains in spawned worker processes; seeded CPU runs give the same report."""
    data, out, _ = bench_run
    code, text, err = _run(["bench", "mf", "--data", str(data), "--out", str(tmp_path / "par"), *ARGS[:-4],
                            "--jobs", "2", "--threads", "1", "--no-plots"])
    assert code == 0, err
    assert "2 jobs x 1 thread" in text
    for protocol in ("full", "sampled", "corrected"):
        a = json.loads((out / protocol / "summary.json").read_text())["contenders"]
        b = json.loads((tmp_path / "par" / protocol / "summary.json").read_text())["contenders"]
        assert a == b, protocol


def test_raising_epochs_retrains_only_the_runs_that_reached_the_ceiling(tmp_path):
    """A run that stopped on patience before its --epochs ceiling is the run of every higher
    ceiling (training does not look at the ceiling before reaching it): a call with a higher
    --epochs reuses it (and the baselines) and retrains only the runs that reached the old
    ceiling; its reports equal those of a fresh call with the higher ceiling."""
    from gbrank.bench import RunStore

    data = _ratings(tmp_path / "ratings.csv")
    args = ["--nsr", "1,2", "--splits", "1", "--seed", "3", "--losses", "listwise_nrbp,lambda_ndcg",
            "--patience", "2", "--jobs", "1", "--threads", "1", "--no-plots"]
    out, fresh = tmp_path / "out", tmp_path / "fresh"
    code, text, err = _run(["bench", "mf", "--data", str(data), "--out", str(out), *args, "--epochs", "6"])
    assert code == 0, err
    records = [RunStore(out / "runs").load(p.stem).record for p in sorted((out / "runs").glob("*.npz"))]
    trained = [r for r in records if r["loss"] not in ("popularity", "random")]
    early = [r for r in trained if r["epochs_run"] < 6]
    assert 0 < len(early) < len(trained)  # both kinds occur, or the check below says nothing
    code, text, err = _run(["bench", "mf", "--data", str(data), "--out", str(out), *args, "--epochs", "12"])
    assert code == 0, err
    reused = 4 + len(early)  # 2 NSR x 2 baselines, and the runs that stopped early
    assert f"8 runs, {reused} cached, {8 - reused} to train" in text
    assert f"{reused} of the cached runs stopped on patience under another --epochs ceiling" in text
    assert len(list((out / "runs").glob("*.npz"))) == 8 + 8 - reused
    code, text, err = _run(["bench", "mf", "--data", str(data), "--out", str(fresh), *args, "--epochs", "12"])
    assert code == 0, err
    assert "8 runs, 0 cached, 8 to train" in text
    for protocol in ("full", "sampled"):
        got = json.loads((out / protocol / "summary.json").read_text())["splits"]
        want = json.loads((fresh / protocol / "summary.json").read_text())["splits"]
        assert got == want, protocol
    # a lower ceiling does not take a run that went past it
    code, text, err = _run(["bench", "mf", "--data", str(data), "--out", str(out), *args, "--epochs", "3",
                            "--report-only"])
    assert code == 2 and "no (NSR, split) of this plan has all its runs finished" in err
