"""``gbrank bench letor``: a smoke run on tiny LETOR folds, its report and cache, and every
bad argument stopped before training."""

import json
import pathlib

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.datasets import dump_svmlight_file

import gbrank
from gbrank.bench.letor._bench import REGISTRY, REPORT_METRICS, load_cached, run_key, select_contenders
from gbrank.bench.letor._plan import NEW_OBJECTIVES
from gbrank.cli import main
from gbrank.datasets import make_letor

lightgbm = pytest.importorskip("lightgbm")

CONTENDERS = "lightgbm:lambdarank,xgboost:rank:map,catboost:YetiRank,gbrank:nrbp@0.95+minmax"
N = {"train": 30, "vali": 10, "test": 12}


@pytest.fixture(scope="module")
def letor_folder(tmp_path_factory):
    """Two LETOR folds of synthetic data; query ids are unique across the whole folder."""
    root = tmp_path_factory.mktemp("letor")
    offset = 0
    for k in (1, 2):
        (root / f"Fold{k}").mkdir()
        for i, (split, n) in enumerate(N.items()):
            X, y, qid = make_letor(n_queries=n, n_features=8, random_state=10 * k + i)
            dump_svmlight_file(X, y, str(root / f"Fold{k}" / f"{split}.txt"), query_id=qid + offset, zero_based=False)
            offset += n
    return root


@pytest.fixture(scope="module")
def bench_run(letor_folder, tmp_path_factory):
    out = tmp_path_factory.mktemp("bench")
    argv = ["bench", "letor", "--data", str(letor_folder), "--contenders", CONTENDERS, "--rounds", "6",
            "--patience", "2", "--out", str(out), "--threads", "1"]
    rc = main(argv, out=(log := _Log()))
    return out, argv, rc, log.text


class _Log:
    def __init__(self):
        self.text = ""

    def write(self, s):
        self.text += s

    def flush(self):
        pass


def _fold(folder, k, split):
    return gbrank.datasets.load_letor(pathlib.Path(folder) / f"Fold{k}" / f"{split}.txt")


def test_smoke_run_writes_the_report(bench_run):
    out, _, rc, text = bench_run
    assert rc == 0 and "report written to" in text and "8 runs to train, 0 cached" in text
    for name in ("summary.md", "summary.json", "config.json", "per_query.csv.gz", "metrics.png", "wins.png",
                 "diff_vs_relevant.png", "cdf.png", "ndcg_at_k.png"):
        assert (out / name).stat().st_size > 100, name
    # a folder of the user's own: no named analysis unless asked (tests/test_bench_analyses.py)
    assert not (out / "findings.md").exists() and not (out / "paradigm.md").exists()
    pq = pd.read_csv(out / "per_query.csv.gz")
    assert list(pq.columns[:5]) == ["contender", "split", "qid", "n_items", "n_relevant"]
    assert set(REPORT_METRICS) | {f"ndcg@{k}" for k in range(1, 21)} <= set(pq.columns)
    assert pq.groupby("contender").size().to_dict() == {n: 2 * N["test"] for n in CONTENDERS.split(",")}
    config = json.loads((out / "config.json").read_text())
    assert config["protocol"]["seed"] == 0 and config["protocol"]["rounds"] == 6
    assert config["versions"]["catboost"] and config["versions"]["lightgbm"]
    assert config["contenders"]["xgboost:rank:map"]["binary_labels"] is True
    assert config["command"].startswith("gbrank bench letor --data")
    assert all(1 <= r["best_iteration"] <= 6 for r in config["runs"])
    md = (out / "summary.md").read_text()
    assert "lightgbm:lambdarank (baseline)" in md and "binary labels" in md and "Holm" in md


def test_summary_equals_a_direct_evaluation_and_a_hand_holm(bench_run, letor_folder):
    out, _, _, _ = bench_run
    summary = json.loads((out / "summary.json").read_text())
    runs = sorted((out / "runs").glob("*.npz"))
    assert len(runs) == 8
    pooled = {}
    for path in runs:
        scores, rec = load_cached(path)
        k = int(rec["fold"][-1])
        pooled.setdefault(rec["contender"], {})[k] = scores
    ys = [_fold(letor_folder, k, "test") for k in (1, 2)]
    y = np.concatenate([t.y for t in ys])
    qid = np.concatenate([t.qid for t in ys])
    direct = {}
    top = json.loads((out / "config.json").read_text())["protocol"]["max_grade"]
    assert top == max(float(_fold(letor_folder, k, s).y.max()) for k in (1, 2) for s in N)
    for name, by_fold in pooled.items():
        direct[name] = gbrank.evaluate(y, np.concatenate([by_fold[1], by_fold[2]]), qid, REPORT_METRICS,
                                       max_grade=top)
        s = direct[name].summary()
        for m in REPORT_METRICS:
            assert summary["contenders"][name][m]["mean"] == pytest.approx(s.loc[m, "mean"], abs=1e-12)
            assert summary["contenders"][name][m]["ci_high"] == pytest.approx(s.loc[m, "ci_high"], abs=1e-12)
    others = [n for n in CONTENDERS.split(",") if n != "lightgbm:lambdarank"]
    base = direct["lightgbm:lambdarank"].per_query
    for m in ("ndcg@10", "ap", "nrbp@0.95"):
        p = np.array([stats.ttest_rel(direct[n].per_query[m], base[m]).pvalue
                      if not np.allclose(direct[n].per_query[m], base[m]) else 1.0 for n in others])
        order = np.argsort(p)
        hand = np.empty(3)
        running = 0.0
        for i, j in enumerate(order):  # Holm: (m - i) * p_(i), made monotone, capped at 1
            running = max(running, min(1.0, (3 - i) * p[j]))
            hand[j] = running
        for n, want in zip(others, hand):
            assert summary["tests"][n][m]["p_holm"] == pytest.approx(want, rel=1e-9)


def test_a_second_run_resumes_from_the_cache(bench_run):
    out, argv, _, _ = bench_run
    runs = sorted((out / "runs").glob("*.npz"))
    stamps = {p: p.stat().st_mtime_ns for p in runs}
    removed = next(p for p in runs if p.name.startswith("catboost"))
    removed.unlink()
    before = json.loads((out / "summary.json").read_text())
    assert main(argv, out=(log := _Log())) == 0
    assert "1 run to train, 7 cached" in log.text
    assert all(p.stat().st_mtime_ns == t for p, t in stamps.items() if p != removed) and removed.exists()
    after = json.loads((out / "summary.json").read_text())
    assert after["contenders"]["lightgbm:lambdarank"] == before["contenders"]["lightgbm:lambdarank"]
    # the cache key changes with anything that changes a run's result
    c = REGISTRY["gbrank:ndcg"]
    settings = json.loads((out / "config.json").read_text())["protocol"]
    settings = {k: settings[k] for k in ("early_stopping_metric", "rounds", "patience", "learning_rate",
                                         "num_leaves", "catboost_depth", "seed", "vali_fraction")}
    key = run_key(c, "Fold1", "data", settings)
    assert run_key(c, "Fold1", "data", dict(settings)) == key
    assert run_key(c, "Fold1", "data", {**settings, "rounds": 5}) != key
    assert run_key(c, "Fold1", "other data", settings) != key
    assert run_key(REGISTRY["gbrank-xgb:ndcg"], "Fold1", "data", settings) != key


def test_a_run_cached_under_other_versions_is_trained_again(bench_run):
    out, argv, _, _ = bench_run
    path = next(p for p in sorted((out / "runs").glob("*.npz")) if p.name.startswith("lightgbm"))
    scores, rec = load_cached(path)
    assert rec["versions"]["lightgbm"] == lightgbm.__version__ and rec["versions"]["gbrank"] == gbrank.__version__
    np.savez(path, scores=scores, record=json.dumps({**rec, "versions": {**rec["versions"], "lightgbm": "0.0"}}))
    assert main(argv, out=(log := _Log())) == 0
    assert "1 run to train, 7 cached" in log.text and "1 cached run was made under other library versions" in log.text
    assert load_cached(path)[1]["versions"]["lightgbm"] == lightgbm.__version__
    assert main(argv, out=(log := _Log())) == 0
    assert "0 runs to train, 8 cached" in log.text and "other library versions" not in log.text


def test_contender_selection():
    names = [c.name for c in select_contenders(["gbrank:nrbp@0.95*"], baseline="lightgbm:lambdarank")]
    assert names == ["lightgbm:lambdarank", "gbrank:nrbp@0.95", *(f"gbrank:nrbp@0.95+{b}" for b in
                     ("minmax", "expectation", "expectation_max", "distribution"))]
    assert len(select_contenders(["all"], baseline="lightgbm:lambdarank")) == len(REGISTRY) == 90  # 8 listwise
    assert [c.name for c in select_contenders(["new"], baseline="lightgbm:lambdarank")][1:] == list(NEW_OBJECTIVES)
    assert len(select_contenders(["bounded"], baseline="lightgbm:lambdarank")) == 49
    default = {c.name for c in select_contenders(None, baseline="lightgbm:lambdarank")}
    assert "catboost:LambdaMart:metric=MRR" in default and "gbrank:nrbp@0.8" in default
    assert not any(c.startswith(("gbrank-xgb", "gbrank-norm")) or "+" in c for c in default)
    assert not set(NEW_OBJECTIVES) & default
    normalised = [c.name for c in select_contenders(["normalised"], baseline="lightgbm:lambdarank")]
    assert normalised == ["lightgbm:lambdarank", *(f"gbrank-norm:{m}" for m in
                                                   ("ndcg", "ap", "rr", "nrbp@0.8", "nrbp@0.9", "nrbp@0.95"))]
    # the builtins come from the backend records, every library's own objectives
    from gbrank.backends import BACKENDS

    assert {c.name for c in select_contenders(["builtin"], baseline="lightgbm:lambdarank")} == {
        f"{b.name}:{o}" for b in BACKENDS.values() for o in b.objectives}


def test_cache_keys_of_existing_contenders_are_stable():
    """Runs cached before the backend records and the normalised contenders keep their keys."""
    settings = {"early_stopping_metric": "ndcg@10", "rounds": 6, "patience": 2, "learning_rate": 0.05,
                "num_leaves": 31, "catboost_depth": 6, "seed": 0, "vali_fraction": 0.2}
    assert run_key(REGISTRY["gbrank:ndcg"], "Fold1", "data", settings) == "1ed2aa5628f3b030"
    assert run_key(REGISTRY["lightgbm:lambdarank"], "Fold1", "data", settings) == "549768dfeca3be6a"
    assert run_key(REGISTRY["gbrank-norm:ndcg"], "Fold1", "data", settings) != "1ed2aa5628f3b030"


def _error(argv, capsys):
    assert main(argv) == 2
    return capsys.readouterr().err


@pytest.mark.parametrize("args, message", [
    (["--data", "/no/such/folder"], "no such folder"),
    (["--data", "no-such-dataset"], "is not 'example', an existing folder, or a known dataset name"),
    (["--contenders", "lightgbm:lambdarank,nope"], "unknown contender 'nope'; valid groups: all, bounded"),
    (["--baseline", "nope"], "unknown baseline 'nope'; choose one of: catboost:LambdaMart"),
    (["--rounds", "0"], "--rounds must be at least 1, got 0"),
    (["--patience", "-1"], "--patience must be at least 1"),
    (["--jobs", "0"], "--jobs must be at least 1"),
    (["--early-stopping-metric", "ndgc@10"], "--early-stopping-metric"),
    (["--folds", "2"], "--data example has a single train/test set; leave out --folds"),
])
def test_bad_arguments_stop_before_training(args, message, capsys, tmp_path):
    err = _error(["bench", "letor", "--out", str(tmp_path / "out"), *args], capsys)
    assert message in err and err.startswith("gbrank bench letor: error:") and "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_folds_that_do_not_exist(letor_folder, capsys, tmp_path):
    err = _error(["bench", "letor", "--data", str(letor_folder), "--folds", "1,7", "--out", str(tmp_path / "o")],
                 capsys)
    assert "fold 7 is not in" in err and "choose among [1, 2]" in err
    assert not (tmp_path / "o").exists()


def test_empty_folds_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["bench", "letor", "--folds", ","])
    assert exc.value.code == 2 and "--folds is empty" in capsys.readouterr().err


def test_list_contenders_names_every_one(capsys):
    assert main(["bench", "letor", "--list-contenders"]) == 0
    text = capsys.readouterr().out
    assert all(name in text for name in REGISTRY) and "bounded" in text


@pytest.mark.slow
def test_parallel_jobs_give_the_same_predictions(letor_folder, tmp_path):
    common = ["bench", "letor", "--data", str(letor_folder), "--folds", "1", "--contenders",
              "lightgbm:lambdarank,gbrank:ndcg", "--rounds", "5", "--patience", "2", "--threads", "1"]
    assert main([*common, "--out", str(tmp_path / "serial")], out=_Log()) == 0
    assert main([*common, "--jobs", "2", "--out", str(tmp_path / "parallel")], out=_Log()) == 0
    serial = sorted((tmp_path / "serial" / "runs").glob("*.npz"))
    parallel = sorted((tmp_path / "parallel" / "runs").glob("*.npz"))
    assert [p.name for p in serial] == [p.name for p in parallel] and len(serial) == 2
    for a, b in zip(serial, parallel):
        np.testing.assert_array_equal(load_cached(a)[0], load_cached(b)[0])


# ---------------------------------------------------------------------------------------
# fair tuning (--tune), the second reference (--also-against) and the newer objectives

from gbrank.bench.letor._tune import (GRID, SPACE, TUNED, choose, depth_for_leaves, library_settings,  # noqa: E402
                                     tune_configs)

TUNED_CONTENDERS = "lightgbm:lambdarank,catboost:YetiRank,gbrank:ndcg"
TUNE_ARGS = ["--tune", "random", "--tune-budget", "3", "--rounds", "6", "--patience", "2", "--threads", "1",
             "--also-against", "catboost:YetiRank"]


@pytest.fixture(scope="module")
def tuned_run(letor_folder, tmp_path_factory):
    out = tmp_path_factory.mktemp("tuned")
    argv = ["bench", "letor", "--data", str(letor_folder), "--contenders", TUNED_CONTENDERS, *TUNE_ARGS,
            "--out", str(out)]
    assert main(argv, out=(log := _Log())) == 0
    return out, argv, log.text


def _distinct_runs(contenders, configs, folds=2):
    """Runs a tuned benchmark trains: per contender and fold, its distinct library-level configurations."""
    n = 0
    for name in contenders:
        lib = REGISTRY[name].library
        n += folds * len({json.dumps(library_settings(c, lib)[0], sort_keys=True) for c in configs})
    return n


def test_random_configurations_are_seeded_and_inside_the_space():
    a, b = tune_configs("random", 40, seed=3), tune_configs("random", 40, seed=3)
    assert a == b and a != tune_configs("random", 40, seed=4)
    assert tune_configs("random", 5, seed=3) == a[:5]  # a larger budget extends a smaller one
    lo, hi = SPACE["learning_rate"]
    for c in a:
        assert list(c) == list(TUNED) and lo * 0.999 <= c["learning_rate"] <= hi * 1.001
        assert all(c[k] in SPACE[k] for k in TUNED[1:])
    assert len({tuple(c.values()) for c in a}) > 30
    grid = tune_configs("grid")
    assert len(grid) == 16 == len({tuple(c.values()) for c in grid})
    assert {tuple(c[k] for k in TUNED) for c in grid} == {(a, b, c, d) for a in GRID["learning_rate"]
                                                          for b in GRID["num_leaves"] for c in GRID["min_child_weight"]
                                                          for d in GRID["reg_lambda"]}
    assert tune_configs("none") == []


def test_a_configuration_reaches_each_library_through_its_record():
    from gbrank.backends import BACKENDS

    config = {"learning_rate": 0.07, "num_leaves": 63, "min_child_weight": 0.1, "reg_lambda": 10.0}
    for lib in ("lightgbm", "xgboost"):
        kwargs, dropped = library_settings(config, lib)
        assert kwargs == config and dropped == []
        params = BACKENDS[lib].library_params(kwargs)  # the library's own names
        assert {BACKENDS[lib].params[k] for k in TUNED} <= set(params)
    kwargs, dropped = library_settings(config, "catboost")
    assert kwargs == {"learning_rate": 0.07, "max_depth": 6, "backend_params": {"l2_leaf_reg": 10.0}}
    assert len(dropped) == 1 and dropped[0].startswith("min_child_weight")
    assert [depth_for_leaves(n) for n in (2, 3, 7, 15, 31, 63, 127, 10 ** 9)] == [1, 2, 3, 4, 5, 6, 7, 16]
    # configurations that differ only in what CatBoost does not take are one CatBoost run
    other = {**config, "min_child_weight": 10.0}
    assert library_settings(other, "catboost") == library_settings(config, "catboost")
    assert library_settings(other, "lightgbm") != library_settings(config, "lightgbm")


def test_choose_takes_the_best_vali_score_and_the_first_on_ties():
    rng = np.random.default_rng(0)
    for _ in range(200):
        v = rng.integers(0, 4, size=rng.integers(1, 8)).astype(float)
        k = choose(list(v))
        assert v[k] == v.max() and k == min(i for i in range(len(v)) if v[i] == v.max())
        assert choose(list(v), higher_is_better=False) == min(i for i in range(len(v)) if v[i] == v.min())
    assert choose([None, 0.2, float("nan"), 0.1]) == 1
    with pytest.raises(ValueError, match="no configuration has a vali score"):
        choose([None, float("nan")])


def test_every_contender_gets_the_same_configurations(tuned_run):
    out, _, text = tuned_run
    configs = tune_configs("random", 3, seed=0)
    assert f"{_distinct_runs(TUNED_CONTENDERS.split(','), configs)} runs to train, 0 cached" in text
    table = pd.read_csv(out / "tuning.csv")
    assert len(table) == 3 * 2 * 3
    for (name, fold), rows in table.groupby(["contender", "fold"]):
        rows = rows.sort_values("config")
        assert rows["config"].tolist() == [0, 1, 2]
        for k in TUNED:
            np.testing.assert_allclose(rows[k].to_numpy(), [c[k] for c in configs])
        lib = REGISTRY[name].library
        assert [json.loads(p) for p in rows["library_params"]] == [library_settings(c, lib)[0] for c in configs]
    # what each stored run was trained with is what its library receives from the configuration
    for path in (out / "runs").glob("*.npz"):
        rec = load_cached(path)[1]
        lib = REGISTRY[rec["contender"]].library
        assert rec["params"] in [library_settings(c, lib)[0] for c in configs]
    config = json.loads((out / "config.json").read_text())
    assert config["protocol"]["tune"]["configurations"] == configs
    md = (out / "tuning.md").read_text()
    assert "| 2 | " in md and "depth = round(log2(num_leaves))" in md
    assert (out / "tuning.png").stat().st_size > 1000


def test_the_chosen_configuration_is_the_vali_best(tuned_run, letor_folder):
    out, _, _ = tuned_run
    table = pd.read_csv(out / "tuning.csv")
    pq = pd.read_csv(out / "per_query.csv.gz")
    runs = {}
    for path in (out / "runs").glob("*.npz"):
        scores, rec = load_cached(path)
        runs.setdefault((rec["contender"], rec["fold"]), []).append((rec, scores))
    top = json.loads((out / "config.json").read_text())["protocol"]["max_grade"]
    for (name, fold), rows in table.groupby(["contender", "fold"]):
        rows = rows.sort_values("config")
        vali = rows["vali"].to_numpy()
        chosen = rows[rows["chosen"]]
        assert len(chosen) == 1
        k = int(chosen["config"].iloc[0])
        assert vali[k] == vali.max() and k == int(np.argmax(vali))
        # the test predictions evaluated are the chosen run's
        want = json.loads(rows["library_params"].iloc[k])
        scores = next(s for rec, s in runs[name, fold] if rec["params"] == want)
        test = _fold(letor_folder, int(fold[-1]), "test")
        direct = gbrank.evaluate(test.y, scores, test.qid, ["ndcg@10", "err@10"], max_grade=top).per_query
        mine = pq[(pq["contender"] == name) & (pq["split"] == fold)].set_index("qid")
        np.testing.assert_allclose(mine.loc[direct.index, "ndcg@10"], direct["ndcg@10"], atol=1e-6)
        np.testing.assert_allclose(mine.loc[direct.index, "err@10"], direct["err@10"], atol=1e-6)


def test_a_tuned_rerun_trains_nothing_and_an_added_contender_only_itself(tuned_run):
    out, argv, _ = tuned_run
    stamps = {p: p.stat().st_mtime_ns for p in (out / "runs").glob("*.npz")}
    assert main(argv, out=(log := _Log())) == 0
    assert f"0 runs to train, {len(stamps)} cached" in log.text
    more = [a if a != TUNED_CONTENDERS else TUNED_CONTENDERS + ",xgboost:rank:ndcg" for a in argv]
    assert main(more, out=(log := _Log())) == 0
    added = _distinct_runs(["xgboost:rank:ndcg"], tune_configs("random", 3, seed=0))
    assert f"{added} runs to train, {len(stamps)} cached" in log.text
    assert all(p.stat().st_mtime_ns == t for p, t in stamps.items())
    new = {p for p in (out / "runs").glob("*.npz")} - set(stamps)
    assert len(new) == added and all(p.name.startswith("xgboost") for p in new)


def test_the_second_reference_is_in_the_report(tuned_run):
    out, _, _ = tuned_run
    summary = json.loads((out / "summary.json").read_text())
    assert summary["baseline"] == "lightgbm:lambdarank" and summary["also_against"] == ["catboost:YetiRank"]
    also = summary["tests_also"]["catboost:YetiRank"]
    assert set(also) >= {"lightgbm:lambdarank", "gbrank:ndcg"} and "catboost:YetiRank" not in also
    assert "err@10" in summary["metrics"]
    for name, by in also.items():
        t = by["ndcg@10"]
        assert t["ci_low"] <= t["diff"] <= t["ci_high"] and t["p_value"] <= t["p_holm"] <= 1
    # the two references' tests are mirror images of each other
    a, b = summary["tests"]["catboost:YetiRank"]["ap"], also["lightgbm:lambdarank"]["ap"]
    assert a["diff"] == pytest.approx(-b["diff"]) and a["p_value"] == pytest.approx(b["p_value"])
    md = (out / "summary.md").read_text()
    assert "second reference catboost:YetiRank" in md
    effects = (out / "effects.md").read_text()
    assert "## against lightgbm:lambdarank" in effects and "## against catboost:YetiRank" in effects
    assert "significantly better (Holm p < 0.05) than every reference" in effects


@pytest.mark.parametrize("args, message", [
    (["--tune", "random", "--tune-budget", "0"], "--tune-budget must be a whole number of configurations, at least 1"),
    (["--tune-budget", "4"], "--tune-budget sets the number of random configurations; it needs --tune random"),
    (["--tune", "grid", "--tune-budget", "4"], "it needs --tune random (got --tune grid"),
    (["--also-against", "nope"], "--also-against: unknown contender 'nope'"),
    (["--also-against", "lightgbm:lambdarank"], "is already the --baseline"),
    (["--also-against", ","], "--also-against is empty"),
])
def test_bad_tuning_arguments_stop_before_training(args, message, capsys, tmp_path):
    err = _error(["bench", "letor", "--out", str(tmp_path / "out"), *args], capsys)
    assert message in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_a_bad_tune_mode_is_refused(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["bench", "letor", "--tune", "bayes"])
    assert exc.value.code == 2 and "invalid choice: 'bayes'" in capsys.readouterr().err
    from gbrank.bench import prepare_letor

    with pytest.raises(ValueError, match="--tune must be one of none, grid, random, got 'bayes'"):
        prepare_letor(tune="bayes")


def test_an_objective_this_gbrank_lacks_is_left_out_with_a_message(monkeypatch, tmp_path):
    import gbrank.bench.letor._plan as _letor_plan
    from gbrank.bench import prepare_letor

    fake = _letor_plan.Contender("gbrank:ndcg-fake", "lightgbm", "ndcg", "gbrank", options=(("no_such_option", 1),))
    monkeypatch.setitem(_letor_plan.REGISTRY, fake.name, fake)
    plan = prepare_letor(contenders=["gbrank:ndcg,gbrank:ndcg-fake"], out_dir=tmp_path / "o", rounds=2)
    assert [c.name for c in plan.contenders] == ["lightgbm:lambdarank", "gbrank:ndcg"]
    assert len(plan.left_out) == 1 and "gbrank:ndcg-fake is unavailable" in plan.left_out[0]
    assert "no_such_option" in plan.left_out[0] and plan.left_out[0] in plan.notes
    with pytest.raises(ValueError, match="reference 'gbrank:ndcg-fake' cannot be trained here"):
        prepare_letor(baseline="gbrank:ndcg-fake", out_dir=tmp_path / "o")


@pytest.mark.parametrize("name", list(NEW_OBJECTIVES))
def test_each_new_objective_trains_when_this_gbrank_has_it(name, letor_folder):
    from gbrank.bench.letor._plan import unavailable
    from gbrank.bench.letor._run import train_one, tuned_settings
    from gbrank.datasets import load_letor_folds

    c = REGISTRY[name]
    why = unavailable(c)
    if why:
        pytest.skip(why)
    fold = load_letor_folds(letor_folder, folds=[1])[0]
    settings = {"early_stopping_metric": "ndcg@10", "rounds": 5, "patience": 2, "seed": 0, "vali_fraction": 0.2}
    config = tune_configs("random", 1, seed=0)[0]
    scores, rec = train_one(c, fold, tuned_settings(settings, config, c.library), threads=1)
    assert scores.shape == fold.test.y.shape and np.isfinite(scores).all() and 1 <= rec["best_iteration"] <= 5


def test_float32_features_reach_the_runs_and_are_cached_apart(letor_folder, tmp_path):
    """``--dtype float32`` loads float32 folds (recorded in config.json) whose fingerprints differ
    from the float64 folds', so that runs on the two never share a cache entry; the models learn
    from either (the libraries bin float32 and float64 alike on these values)."""
    from gbrank.bench import prepare_letor
    from gbrank.bench.letor._run import fingerprint

    out = tmp_path / "o32"
    argv = ["bench", "letor", "--data", str(letor_folder), "--folds", "1", "--contenders", "gbrank:ndcg",
            "--rounds", "4", "--patience", "2", "--threads", "1", "--dtype", "float32", "--out", str(out)]
    assert main(argv, out=_Log()) == 0
    config = json.loads((out / "config.json").read_text())
    assert config["data"]["dtype"] == "float32"
    plans = {d: prepare_letor(data=str(letor_folder), folds=[1], contenders=["gbrank:ndcg"], rounds=2,
                              out_dir=tmp_path / d, dtype=d) for d in ("float32", "float64")}
    folds = {d: plan.folds[0] for d, plan in plans.items()}
    for split in ("train", "vali", "test"):
        assert getattr(folds["float32"], split).X.dtype == np.float32
        assert getattr(folds["float64"], split).X.dtype == np.float64
        np.testing.assert_array_equal(getattr(folds["float32"], split).X,
                                      getattr(folds["float64"], split).X.astype(np.float32))
    assert fingerprint(folds["float32"]) != fingerprint(folds["float64"])
    stored = json.loads((out / "summary.json").read_text())
    assert stored and config["data"]["folds"]["Fold1"]["fingerprint"] == fingerprint(folds["float32"])


def test_a_bad_dtype_is_refused(capsys, tmp_path):
    from gbrank.bench import prepare_letor

    with pytest.raises(SystemExit) as exc:
        main(["bench", "letor", "--dtype", "float16"])
    assert exc.value.code == 2 and "invalid choice: 'float16'" in capsys.readouterr().err
    with pytest.raises(ValueError, match="--dtype must be one of float64, float32, got 'int8'"):
        prepare_letor(dtype="int8", out_dir=tmp_path / "o")
