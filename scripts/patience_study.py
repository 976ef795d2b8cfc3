"""What a shorter early-stopping patience would have cost, replayed on stored ``gbrank bench mf`` runs.

Every run of ``OUT/runs/*.npz`` keeps its per-epoch history: the validation value of its
own metric (the one early stopping watches) and the six test metrics. For each patience P
this replays the trainer's rule on that history (an epoch improves when its validation value
is strictly above the best so far; training stops after P epochs without an improvement; the
best epoch's model is kept) and compares the epoch it keeps with the one the whole stored
history keeps (its own patience, or the epoch ceiling):

* ``stopped early``: runs where P stops before the stored history's best epoch;
* ``validation lost`` / ``test lost``: the own-metric value at the history's best epoch minus
  the value at P's epoch (0 when P finds the same epoch), mean and largest over the runs;
* ``epochs saved``: epochs the stored history ran beyond P's stopping epoch.

A history that ended on its ceiling (best epoch = last epoch) had not converged: P values at
or above its length say nothing about it, so such runs are counted apart.

    python scripts/patience_study.py runs/bench-mf-citeulike-paper-fold0-200ep --patience 3 5 10 15 20 \
        --save docs/results/patience_study.json
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import sys

import numpy as np


def load_histories(out):
    """(record, history) of every trained run under OUT/runs (baselines have no history)."""
    runs = []
    for path in sorted(glob.glob(os.path.join(out, "runs", "*.npz"))):
        with np.load(path, allow_pickle=False) as data:
            raw = data["record"]
            record = json.loads(raw.tobytes().decode() if raw.dtype == np.uint8 else str(raw))
        history = record.get("history") or {}
        metric = record.get("eval_metric")
        if metric and history.get(metric):
            runs.append((record, history))
    if not runs:
        raise SystemExit(f"no trained run with a per-epoch history under {os.path.join(out, 'runs')}: "
                         "pass the --out folder of a finished `gbrank bench mf` call")
    return runs


def replay(validation, patience):
    """Index of the epoch the trainer keeps and the index where it stops, under ``patience``."""
    best, best_at, stale = -np.inf, 0, 0
    for t, v in enumerate(validation):
        if v > best:
            best, best_at, stale = v, t, 0
        else:
            stale += 1
        if stale >= patience:
            return best_at, t
    return best_at, len(validation) - 1


def study(runs, patiences):
    rows = []
    for p in patiences:
        val_lost, test_lost, saved, early = [], [], [], 0
        unconverged = 0
        for record, history in runs:
            metric = record["eval_metric"]
            validation = np.asarray(history[metric], dtype=float)
            test = np.asarray(history.get(f"test:{metric}", history[metric]), dtype=float)
            full_best, _ = replay(validation, len(validation) + 1)
            if full_best == len(validation) - 1:
                unconverged += 1
            kept, stop = replay(validation, p)
            early += kept < full_best
            val_lost.append(validation[full_best] - validation[kept])
            test_lost.append(test[full_best] - test[kept])
            saved.append(len(validation) - 1 - stop)
        rows.append({"patience": p, "runs": len(runs), "stopped_early": int(early),
                     "ended_on_ceiling": unconverged,
                     "validation_lost_mean": float(np.mean(val_lost)), "validation_lost_max": float(np.max(val_lost)),
                     "test_lost_mean": float(np.mean(test_lost)), "test_lost_max": float(np.max(test_lost)),
                     "epochs_saved_mean": float(np.mean(saved))})
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", help="the --out folder of a finished gbrank bench mf call")
    parser.add_argument("--patience", type=int, nargs="+", default=[3, 5, 10, 15, 20])
    parser.add_argument("--save", help="write the table and the per-run best epochs to this JSON file")
    args = parser.parse_args(argv)
    if any(p < 1 for p in args.patience):
        parser.error(f"--patience values must be >= 1, got {args.patience}")
    runs = load_histories(args.out)
    rows = study(runs, args.patience)
    print(f"{len(runs)} runs from {args.out}")
    print("| patience | stopped before the stored best | own metric lost, validation mean / max "
          "| own metric lost, test mean / max | epochs saved, mean |")
    print("|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['patience']} | {r['stopped_early']} of {r['runs']} | {r['validation_lost_mean']:.4f} / "
              f"{r['validation_lost_max']:.4f} | {r['test_lost_mean']:.4f} / {r['test_lost_max']:.4f} | "
              f"{r['epochs_saved_mean']:.1f} |")
    print(f"{rows[0]['ended_on_ceiling']} of {len(runs)} stored histories have their best epoch at their last "
          "(not converged within the ceiling)")
    if args.save:
        per_run = [{"loss": rec["loss"], "split": rec["split"], "learning_rate": rec["learning_rate"],
                    "best_epoch": rec["best_epoch"], "epochs_run": rec["epochs_run"]} for rec, _ in runs]
        with open(args.save, "w") as fh:
            command = " ".join(sys.argv[1:] if argv is None else argv)
            json.dump({"command": f"python scripts/patience_study.py {command}", "source": args.out,
                       "table": rows, "runs": per_run}, fh, indent=1)


if __name__ == "__main__":
    main()
