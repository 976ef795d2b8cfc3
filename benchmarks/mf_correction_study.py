"""The sampled-metric correction study on a finished ``gbrank bench mf`` output folder.

For every split (NSR, seed) of the folder, each contender is a system and each test user a
row: the study (``gbrank.bench.mf._correction.correction_study``) reports per (variant,
metric) the bias of the variant's mean against the full-catalogue mean, its RMSE, and the
Kendall tau between the systems' ordering by the variant and by the full catalogue.

Variants come from what the folder holds:

* ``sampled/per_query.csv.gz`` (the plain sampled metric) and ``full/per_query.csv.gz``
  (the truth) are required;
* ``corrected/per_query.csv.gz``, when present, adds ``bv@1``;
* ``sampled_ranks.csv.gz``, when present (one row per held-out relevant item: columns
  ``contender, split, qid, k, n_negatives, n_sampled``), adds every variant computed from the
  sampled ranks: ``sampled``, ``rank_mapping`` and ``bv@<gamma>`` for each ``--gammas``.

    .venv/bin/python benchmarks/mf_correction_study.py docs/results/bench-mf-movielens
    .venv/bin/python benchmarks/mf_correction_study.py runs/bench-mf-x --gammas 1,0.1,0.01,0 --out study.csv
"""

from __future__ import annotations

import argparse
import pathlib
import sys

import numpy as np
import pandas as pd

from gbrank.bench.mf._correction import correction_study, estimated_metrics

KEYS = ["contender", "split", "qid"]


def _long(table: pd.DataFrame, metrics, variant: str) -> pd.DataFrame:
    out = table.melt(id_vars=KEYS, value_vars=metrics, var_name="metric", value_name="estimate")
    out["variant"] = variant
    return out


def _from_ranks(ranks: pd.DataFrame, users: pd.DataFrame, metrics, variants) -> pd.DataFrame:
    """Per-user estimates of each variant from the per-item sampled ranks."""
    parts = []
    for (contender, split), g in ranks.groupby(["contender", "split"], sort=False):
        who = users[(users["contender"] == contender) & (users["split"] == split)]["qid"].to_numpy()
        code = pd.Index(who).get_indexer(g["qid"])
        if (code < 0).any():
            raise ValueError(f"sampled_ranks.csv.gz names users of {contender}/{split} that full/per_query lacks")
        per_user = g.groupby("qid")[["n_negatives", "n_sampled"]].first().reindex(who)
        if per_user.isna().any().any():
            raise ValueError(f"a test user of {contender}/{split} has no row in sampled_ranks.csv.gz")
        N, m = per_user["n_negatives"].to_numpy(np.int64), per_user["n_sampled"].to_numpy(np.int64)
        for variant in variants:
            est = estimated_metrics(variant, code, g["k"].to_numpy(np.int64), N, m, metrics)
            frame = pd.DataFrame({"contender": contender, "split": split, "qid": who, **est})
            parts.append(_long(frame, metrics, variant))
    return pd.concat(parts, ignore_index=True)


def study(folder: pathlib.Path, gammas, metrics=None) -> pd.DataFrame:
    """The study table of one folder, per split: columns split, variant, metric, bias, ..."""
    full = pd.read_csv(folder / "full" / "per_query.csv.gz")
    sampled = pd.read_csv(folder / "sampled" / "per_query.csv.gz")
    skip = set(KEYS) | {"n_items", "n_relevant"}
    metrics = metrics or [c for c in full.columns if c not in skip and c in sampled.columns]
    estimates = [_long(sampled, metrics, "sampled")]
    corrected = folder / "corrected" / "per_query.csv.gz"
    if corrected.exists():
        estimates.append(_long(pd.read_csv(corrected), metrics, "bv@1"))
    ranks_path = folder / "sampled_ranks.csv.gz"
    if ranks_path.exists():
        variants = ["rank_mapping"] + [f"bv@{g:g}" for g in gammas if not (g == 1 and corrected.exists())]
        estimates.append(_from_ranks(pd.read_csv(ranks_path), full, metrics, variants))
    est = pd.concat(estimates, ignore_index=True)
    truth = full.melt(id_vars=KEYS, value_vars=metrics, var_name="metric", value_name="full")
    frame = est.merge(truth, on=KEYS + ["metric"], how="inner", validate="many_to_one")
    frame = frame.rename(columns={"contender": "system", "qid": "user"})
    out = []
    for split, g in frame.groupby("split", sort=True):
        res = correction_study(g.drop(columns="split"))
        res.insert(0, "split", split)
        out.append(res)
    return pd.concat(out, ignore_index=True)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=pathlib.Path)
    parser.add_argument("--gammas", default="1,0.1,0.01,0")
    parser.add_argument("--metrics", default="", help="comma-separated; default: every metric of the folder")
    parser.add_argument("--out", default="", help="CSV of the full table (default: print only)")
    args = parser.parse_args(argv)
    if not (args.folder / "full" / "per_query.csv.gz").exists():
        sys.exit(f"{args.folder} is not a finished `gbrank bench mf` folder (no full/per_query.csv.gz)")
    gammas = [float(g) for g in args.gammas.split(",") if g]
    metrics = [m for m in args.metrics.split(",") if m] or None
    table = study(args.folder, gammas, metrics)
    summary = table.groupby(["variant", "metric"])[["bias", "abs_bias", "rmse", "kendall_tau"]].mean()
    with pd.option_context("display.width", 160, "display.max_rows", 400):
        print(f"{args.folder}: mean over {table['split'].nunique()} split(s) of each split's study\n")
        print(summary.round(4).to_string())
    if args.out:
        table.to_csv(args.out, index=False)
        print(f"\nwritten to {args.out}")


if __name__ == "__main__":
    main()
