"""Unbiased LambdaMART on simulated clicks over MQ2008: does debiasing beat the biased objective
on the true labels, and do the learned propensities approach the simulated ones?

    GBRANK_DATA=/work/shared/data nice -n 10 .venv/bin/python scripts/unbiased_experiment.py \\
        --folds 1 2 3 4 5 --save docs/results/unbiased.json --figure docs/figures/unbiased_propensities.png

Per fold:

1. a logging ranker: LightGBM's built-in lambdarank trained on ``--log-fraction`` of the
   training queries (seeded) with their true labels;
2. clicks of the position-based model (``gbrank.datasets`` ``simulate_clicks``) on every
   training query, in the logging ranker's order: theta_k = (1 / k)**eta, P(rel | l) =
   0.1 + 0.9 (2**l - 1) / 3, ``--sessions`` sessions; the training lists are the sessions
   with at least one click (``session_lists``);
3. LightGBM trained with the same parameters and a fixed number of rounds (clicks give no
   true-label validation set) on: (a) ``LambdaObjective`` on the clicks (biased);
   (b) ``UnbiasedLambdaObjective`` on the clicks with bias_norm p = 0 and p = 2 (XGBoost's
   default); (ipw) the same with the simulated theta fixed (t+ = theta / theta_1, t- = 1:
   inverse propensity weighting with the true propensities); (c) ``LambdaObjective`` on the
   true labels of the training queries (skyline); with ``--update-rounds N ...`` also
   (b) with bias_norm 0 whose propensities are estimated in the first N rounds only and then
   kept (``update_rounds=N``), one contender per N, and ``unbiased_p0_vali``: of those, the N
   with the best NDCG@10 on the fold's *validation* queries (true labels: a small judged set,
   never the test queries).  All: nDCG swap deltas, LightGBM-style score and list
   normalisation, no truncation;
4. NDCG@10 and ERR@10 (max grade 2) of the test queries with their TRUE labels
   (``gbrank.evaluate``, exp gain, ties averaged, queries without a relevant document
   skipped); a paired t-test per query of (b) against (a) over the test queries of all folds.
   With several ``--click-seeds`` steps 2-4 are repeated per seed of the click simulation
   (the logging ranker stays) and each test query's metric is its mean over the seeds
   before the test, so the queries stay the independent units.
"""

from __future__ import annotations

import argparse
import importlib.metadata as md
import json
import pathlib
import platform
import time

import numpy as np

METRICS = ["ndcg@10", "err@10"]


def logging_ranker(train, fraction: float, seed: int, threads: int):
    """LightGBM lambdarank on a seeded fraction of the training queries (true labels)."""
    import lightgbm as lgb

    qids = np.unique(train.qid)
    rng = np.random.default_rng(seed)
    chosen = rng.choice(qids, size=max(2, int(round(fraction * len(qids)))), replace=False)
    keep = np.isin(train.qid, chosen)
    sizes = np.diff(np.flatnonzero(np.r_[True, np.diff(train.qid[keep]) != 0, True]))
    params = {"objective": "lambdarank", "learning_rate": 0.1, "num_leaves": 7, "min_data_in_leaf": 5,
              "verbose": -1, "num_threads": threads, "seed": seed}
    model = lgb.train(params, lgb.Dataset(train.X[keep], train.y[keep], group=sizes), num_boost_round=30)
    return model, len(chosen)


def train(X, y, ptr, objective, args):
    import lightgbm as lgb

    params = {"objective": objective, "learning_rate": args.learning_rate, "num_leaves": args.num_leaves,
              "min_data_in_leaf": 20, "min_sum_hessian_in_leaf": 0.0, "verbose": -1, "num_threads": args.threads,
              "seed": args.seed, "deterministic": True}
    return lgb.train(params, lgb.Dataset(X, y, group=np.diff(ptr)), num_boost_round=args.rounds)


def group_ptr(qid):
    return np.flatnonzero(np.r_[True, qid[1:] != qid[:-1], True]).astype(np.int64)


def run_fold(fold, args, click_seed=None):
    from gbrank import evaluate
    from gbrank.datasets import session_lists, simulate_clicks
    from gbrank.lambdas import LambdaObjective
    from gbrank.lambdas import UnbiasedLambdaObjective

    t0 = time.perf_counter()
    click_seed = args.seed if click_seed is None else click_seed
    logger, n_log = logging_ranker(fold.train, args.log_fraction, args.seed, args.threads)
    log = simulate_clicks(fold.train.y, logger.predict(fold.train.X), fold.train.qid, eta=args.eta,
                          sessions=args.sessions, max_label=2, random_state=click_seed)
    rows, clicks, positions, ptr = session_lists(log)
    X = fold.train.X[rows]
    settings = dict(score_normalization=True, list_normalization=True)
    K = args.max_position
    theta = log.theta[:K] / log.theta[0]
    objectives = {
        "biased": LambdaObjective("ndcg", **settings),
        "unbiased_p0": UnbiasedLambdaObjective("ndcg", positions=positions, bias_norm=0.0, max_position=K, **settings),
        "unbiased_p2": UnbiasedLambdaObjective("ndcg", positions=positions, bias_norm=2.0, max_position=K, **settings),
        "ipw_true_theta": UnbiasedLambdaObjective("ndcg", positions=positions, learn=False, max_position=K,
                                                  initial_plus=theta, **settings),
    }
    for n in args.update_rounds:
        objectives[f"unbiased_p0_r{n}"] = UnbiasedLambdaObjective("ndcg", positions=positions, bias_norm=0.0,
                                                                 max_position=K, update_rounds=n, **settings)
    test = fold.test
    scores = {"logging": logger.predict(test.X)}
    vali = {}
    for name, obj in objectives.items():
        t1 = time.perf_counter()
        model = train(X, clicks, ptr, obj, args)
        scores[name] = model.predict(test.X)
        if name.startswith("unbiased_p0_r"):
            vali[name] = float(evaluate(fold.vali.y, model.predict(fold.vali.X), fold.vali.qid, ["ndcg@10"],
                                        empty="skip", max_grade=2).mean()["ndcg@10"])
        print(f"  {fold.name} {name}: {time.perf_counter() - t1:.1f} s", flush=True)
    chosen = max(vali, key=vali.get) if vali else None  # the first N on ties
    if chosen:
        scores["unbiased_p0_vali"] = scores[chosen]
    scores["skyline"] = train(fold.train.X, fold.train.y, group_ptr(fold.train.qid),
                              LambdaObjective("ndcg", **settings), args).predict(test.X)
    per_query = {}
    for name, s in scores.items():
        res = evaluate(test.y, s, test.qid, METRICS, empty="skip", max_grade=2)
        per_query[name] = res.per_query[METRICS]
    shown = np.bincount(log.positions[log.clicks > 0].clip(max=K) - 1, weights=log.clicks[log.clicks > 0],
                        minlength=K)
    record = {
        "fold": fold.name, "click_seed": int(click_seed), "seconds": round(time.perf_counter() - t0, 1),
        "logging_queries": int(n_log), "training_queries": int(len(np.unique(fold.train.qid))),
        "session_lists": int(len(ptr) - 1), "session_rows": int(len(rows)), "clicks": int(log.clicks.sum()),
        "clicks_per_position": shown.astype(int).tolist(),
        "mean": {name: {m: float(pq[m].mean()) for m in METRICS} for name, pq in per_query.items()},
        "n_test_queries": int(len(per_query["biased"])),
        "propensities": {name: {"plus": obj.propensity_plus_.tolist(), "minus": obj.propensity_minus_.tolist(),
                                "plus_history": obj.propensity_plus_history_[:, :10].tolist()}
                         for name, obj in objectives.items() if name.startswith("unbiased")},
        "theta": log.theta[:K].tolist(),
        "validation_ndcg@10": vali, "chosen_on_validation": chosen,
    }
    return record, per_query


def paired(per_query_all, a: str, b: str, metric: str) -> dict:
    from scipy import stats

    x = np.concatenate([pq[b][metric].to_numpy() for pq in per_query_all])
    y = np.concatenate([pq[a][metric].to_numpy() for pq in per_query_all])
    t = stats.ttest_rel(x, y)
    return {"metric": metric, "a": a, "b": b, "n_queries": int(len(x)), "mean_a": float(y.mean()),
            "mean_b": float(x.mean()), "mean_diff": float((x - y).mean()), "t": float(t.statistic),
            "p_value": float(t.pvalue), "wins": int((x > y).sum()), "losses": int((x < y).sum())}


def figure(records, path, K_show=20):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    theta = np.array(records[0]["theta"][:K_show])
    k = np.arange(1, K_show + 1)
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(11, 4))
    ax.plot(k, theta / theta[0], "k-o", label="simulated theta_k / theta_1 = 1/k")
    for name, style, power in (("unbiased_p0", "C0-s", 1.0), ("unbiased_p2", "C1-^", 3.0)):
        t = np.array([r["propensities"][name]["plus"][:K_show] for r in records])
        label = "learned t+ (p=0)" if power == 1 else "learned t+**3 (p=2)"
        ax.errorbar(k, (t**power).mean(axis=0), yerr=(t**power).std(axis=0), fmt=style, label=label, capsize=2)
    if records[0].get("chosen_on_validation"):
        t = np.array([r["propensities"][r["chosen_on_validation"]]["plus"][:K_show] for r in records])
        ax.errorbar(k, t.mean(axis=0), yerr=t.std(axis=0), fmt="C2-v", capsize=2,
                    label="learned t+ (p=0), first N rounds, N chosen on validation")
    ax.set_xlabel("displayed position k")
    ax.set_ylabel("examination, relative to position 1")
    folds, logs = len({r["fold"] for r in records}), len({r.get("click_seed", 0) for r in records})
    ax.set_title(f"MQ2008, {folds} fold(s) x {logs} click log(s): learned vs simulated")
    ax.legend()
    hist = np.array(records[0]["propensities"]["unbiased_p0"]["plus_history"])
    for j in (1, 2, 4, 9):
        bx.plot(hist[:, j], label=f"t+ at position {j + 1}")
        bx.axhline(theta[j] / theta[0], color="gray", lw=0.5, ls="--")
    bx.set_xlabel("boosting round")
    bx.set_ylabel("t+ (p = 0)")
    bx.set_title(f"{records[0]['fold']}: t+ per round (dashed: 1/k)")
    bx.legend()
    fig.tight_layout()
    pathlib.Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--folds", type=int, nargs="+", default=[1])
    ap.add_argument("--sessions", type=int, default=10)
    ap.add_argument("--eta", type=float, default=1.0)
    ap.add_argument("--log-fraction", type=float, default=0.03)
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--learning-rate", type=float, default=0.1)
    ap.add_argument("--num-leaves", type=int, default=15)
    ap.add_argument("--max-position", type=int, default=32)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0,
                    help="seeds the logging ranker (and the clicks without --click-seeds)")
    ap.add_argument("--click-seeds", type=int, nargs="+", help="seeds of the click simulation, each a replicate")
    ap.add_argument("--update-rounds", type=int, nargs="*", default=[],
                    help="also unbiased (bias_norm 0) with propensities estimated in the first N rounds only")
    ap.add_argument("--save", type=pathlib.Path)
    ap.add_argument("--figure", type=pathlib.Path)
    ap.add_argument("--figure-from", type=pathlib.Path,
                    help="draw --figure from a JSON saved by --save instead of running the experiment")
    args = ap.parse_args(argv)
    if args.figure_from:
        if not args.figure:
            ap.error("--figure-from needs --figure (the image to write)")
        figure(json.loads(args.figure_from.read_text())["folds"], args.figure)
        return 0

    from gbrank.datasets import load_letor_folds

    records, per_query_all = [], []
    for fold in load_letor_folds("mq2008", folds=args.folds):
        replicates = []
        for click_seed in (args.click_seeds or [args.seed]):
            record, per_query = run_fold(fold, args, click_seed)
            records.append(record)
            replicates.append(per_query)
            print(f"{record['fold']} clicks seed {click_seed} ({record['seconds']} s, {record['session_lists']} "
                  f"session lists, {record['clicks']} clicks):")
            for name, m in record["mean"].items():
                print(f"  {name:17s} " + "  ".join(f"{k} {v:.4f}" for k, v in m.items()))
            print("  t+ (p=0) 1..6:", np.round(record["propensities"]["unbiased_p0"]["plus"][:6], 3),
                  " theta:", np.round(record["theta"][:6], 3),
                  f" chosen on validation: {record['chosen_on_validation']}" if record["chosen_on_validation"] else "")
        # each test query's metric: its mean over the click replicates (the queries stay the units)
        per_query_all.append({name: sum(r[name] for r in replicates) / len(replicates) for name in replicates[0]})
    names = list(per_query_all[0])
    overall = {name: {m: float(np.concatenate([pq[name][m].to_numpy() for pq in per_query_all]).mean())
                      for m in METRICS} for name in names}
    contenders = ["unbiased_p0", "unbiased_p2", "ipw_true_theta"] + [n for n in names if n.startswith("unbiased_p0_")]
    tests = [paired(per_query_all, "biased", b, m) for b in contenders for m in METRICS]
    from gbrank.evaluation import adjust_p_values

    holm = adjust_p_values([t["p_value"] for t in tests], "holm")  # across every test printed
    for t, p in zip(tests, holm):
        t["p_holm"] = float(p)
    print("all test queries:")
    for name, m in overall.items():
        print(f"  {name:17s} " + "  ".join(f"{k} {v:.4f}" for k, v in m.items()))
    for t in tests:
        print(f"  {t['b']} vs {t['a']} {t['metric']}: diff {t['mean_diff']:+.4f}, t = {t['t']:.2f}, "
              f"p = {t['p_value']:.3g} (Holm {t['p_holm']:.3g}), {t['wins']} wins / {t['losses']} losses over "
              f"{t['n_queries']} queries")
    out = {
        "command": "python scripts/unbiased_experiment.py " + " ".join(argv or __import__("sys").argv[1:]),
        "config": {k: (str(v) if isinstance(v, pathlib.Path) else v) for k, v in vars(args).items()},
        "conventions": {"metrics": METRICS, "gain": "exp", "ties": "average",
                        "empty": "skip (queries without a relevant document left out)", "max_grade": 2,
                        "click_model": "position-based, theta_k = (1/k)**eta, P(rel|l) = 0.1 + 0.9 (2**l - 1)/3",
                        "positions": "1-based"},
        "versions": {"python": platform.python_version(),
                     **{p: md.version(p) for p in ("numpy", "numba", "lightgbm", "scipy")}},
        "overall": overall, "paired_t_tests": tests, "folds": records,
    }
    if args.save:
        args.save.parent.mkdir(parents=True, exist_ok=True)
        args.save.write_text(json.dumps(out, indent=1))
    if args.figure:
        figure(records, args.figure)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
