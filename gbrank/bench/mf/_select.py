"""``gbrank bench mf``, the per-epoch record and the two selections of (learning rate, epoch).

Every evaluated epoch of every run, :class:`ListsMonitor` (passed to ``MFRanker.fit`` as
``monitor``) scores the split's sampled test lists and the validation lists with the current
weights and records the paper's six metrics on each, as history columns ``test:<metric>``
and ``validation:<metric>``.  From those histories, per (NSR, split, loss) and evaluation
metric m, over every learning rate of the grid and every recorded epoch:

* **(a) the paper's selection (optimistic)**: the (learning rate, epoch) with the best test
  value of m; the value reported is that best test value (what the paper's tables hold: the
  test set chooses, so the figure is biased upwards);
* **(b) gbrank's honest selection**: the (learning rate, epoch) with the best *validation*
  value of m; the value reported is the test value of m at that choice.

Ties go to the first learning rate of the grid and the earliest epoch.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

#: the paper's six evaluation metrics (un-normalised RBP on the sampled test lists)
PAPER_METRICS = ["ap", "ndcg", "rr", "rbp@0.8", "rbp@0.9", "rbp@0.95"]
#: the lists each epoch is scored on: history columns "<part>:<metric>"
PARTS = ("test", "validation")
SELECTIONS = {"a": "paper (best lr and epoch on the test metric; optimistic)",
              "b": "honest (best lr and epoch on the validation metric; test value reported)"}


class ListsMonitor:
    """``monitor(estimator, epoch) -> {"test:ap": ..., "validation:ap": ..., ...}``: the
    paper's metrics of the current weights on candidate lists, with :func:`gbrank.evaluate`
    (binary labels, empty lists 0, tied scores averaged).

    Parameters
    ----------
    lists : dict
        part name -> ``(X, y, threshold)``: (user, item) pairs, ratings, and the rating that
        makes a pair relevant.
    metrics : list of str
        Metric names for :func:`gbrank.evaluate`.
    """

    def __init__(self, lists: dict, metrics=PAPER_METRICS):
        self.metrics = list(metrics)
        self.lists = {}
        for part, (X, y, threshold) in lists.items():
            X = np.asarray(X)
            _, qid = np.unique(X[:, 0], return_inverse=True)
            self.lists[part] = (X, (np.asarray(y) >= threshold).astype(np.float64), qid)

    def __call__(self, estimator, epoch) -> dict:
        from gbrank.evaluation import evaluate

        out = {}
        for part, (X, labels, qid) in self.lists.items():
            scores = estimator.predict(X)
            means = evaluate(labels, scores, qid, self.metrics, relevance_threshold=1, empty="zero",
                             ties="average").mean()
            out.update({f"{part}:{m}": float(means[m]) for m in self.metrics})
        return out


def history_frame(meta_list, metrics=PAPER_METRICS) -> pd.DataFrame:
    """One row per (run, recorded epoch): nsr, split, loss, lr, epoch and the monitored
    ``test:``/``validation:`` columns, from the runs' records (rows without them are left out)."""
    rows = []
    cols = [f"{p}:{m}" for p in PARTS for m in metrics]
    for meta in meta_list:
        hist = pd.DataFrame(meta.get("history") or {})
        if hist.empty or not set(cols) <= set(hist.columns):
            continue
        hist = hist.dropna(subset=cols, how="all")
        frame = hist[["epoch"] + cols].copy()
        frame.insert(0, "lr", meta.get("learning_rate"))
        frame.insert(0, "loss", meta["loss"])
        frame.insert(0, "split", meta["split"])
        frame.insert(0, "nsr", meta["nsr"])
        rows.append(frame)
    if not rows:
        return pd.DataFrame(columns=["nsr", "split", "loss", "lr", "epoch"] + cols)
    return pd.concat(rows, ignore_index=True)


def _first_best(values: np.ndarray) -> int:
    """Index of the largest finite value (the first of equals); -1 when none is finite."""
    v = np.where(np.isfinite(values), values, -np.inf)
    return int(np.argmax(v)) if np.isfinite(v).any() else -1


def select(history: pd.DataFrame, metrics=PAPER_METRICS) -> pd.DataFrame:
    """Both selections for every (nsr, split, loss) and metric of a :func:`history_frame`.

    The rows are ordered by learning rate as given (the grid's order), then by epoch; the
    first best wins.  Returns one row per (nsr, split, loss, metric, selection) with the
    chosen ``lr``, ``epoch``, the ``test`` value reported and the ``validation`` value there.
    """
    out = []
    for (nsr, split, loss), g in history.groupby(["nsr", "split", "loss"], sort=False):
        g = g.sort_values("epoch", kind="stable")
        order = pd.Index(pd.unique(g["lr"]))
        g = g.iloc[np.lexsort((g["epoch"].to_numpy(), order.get_indexer(g["lr"])))]
        for m in metrics:
            test, val = g[f"test:{m}"].to_numpy(float), g[f"validation:{m}"].to_numpy(float)
            for sel, by in (("a", test), ("b", val)):
                at = _first_best(by)
                if at < 0:
                    continue
                row = g.iloc[at]
                out.append({"nsr": nsr, "split": split, "loss": loss, "metric": m, "selection": sel,
                            "lr": row["lr"], "epoch": int(row["epoch"]), "test": float(test[at]),
                            "validation": float(val[at])})
    return pd.DataFrame(out, columns=["nsr", "split", "loss", "metric", "selection", "lr", "epoch", "test",
                                      "validation"])


def selection_means(chosen: pd.DataFrame) -> pd.DataFrame:
    """Per (nsr, loss, metric, selection): the mean test value over the splits run, their
    number, and the learning rates and epochs chosen."""
    if chosen.empty:
        return pd.DataFrame(columns=["nsr", "loss", "metric", "selection", "test", "splits", "lrs", "epochs"])
    g = chosen.groupby(["nsr", "loss", "metric", "selection"], sort=False)
    return g.agg(test=("test", "mean"), splits=("split", "nunique"),
                 lrs=("lr", lambda v: ",".join("-" if pd.isna(x) else f"{x:g}" for x in v)),
                 epochs=("epoch", lambda v: ",".join(str(int(x)) for x in v))).reset_index()
