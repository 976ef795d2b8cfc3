"""The plots of a benchmark report (PNG through matplotlib's Agg canvas).

Figures are built with ``matplotlib.figure.Figure`` and saved by the Agg canvas directly,
so drawing a report never touches pyplot's global state or the user's chosen backend.
Every function takes the tidy per-query table and/or the summary of ``_report.summarise``
(this module imports nothing of the report: ``_report.write_report`` imports it).
"""

from __future__ import annotations

import pathlib
import re
from typing import Sequence

import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

HEADLINE = ("ndcg@10", "ap", "rr", "nrbp@0.95")
_NDCG_AT = re.compile(r"^ndcg@(\d+)$")
_RELEVANT_EDGES = (0, 1, 2, 3, 4, 5, 6, 8, 11, 16, 21, 31, 51, 101, np.inf)
#: the words of a row when none are given: (singular, plural, its id, what its list holds)
QUERY_WORDS = ("query", "queries", "query id", "documents")
#: smallest font size of any text on a plot (tick labels, legends), readable at dpi 100
SMALL = 7


def _save(fig: Figure, path: pathlib.Path) -> None:
    FigureCanvasAgg(fig)
    fig.savefig(path, dpi=100)


def ndcg_curve_columns(columns) -> list[tuple[int, str]]:
    """``[(k, "ndcg@k"), ...]`` for the ``ndcg@k`` columns present, by k."""
    found = [(int(m.group(1)), c) for c in columns if (m := _NDCG_AT.match(str(c)))]
    return sorted(found)


def headline_metrics(metrics: Sequence[str], n: int = 4) -> list[str]:
    """The standard headline metrics present, else the first ``n`` metrics."""
    chosen = [m for m in HEADLINE if m in metrics]
    return chosen or list(metrics[:n])


def metric_means(summary: dict, path: pathlib.Path, title: str) -> Figure:
    """One panel per metric: each contender's mean with its confidence interval."""
    metrics, C = summary["metrics"], summary["contenders"]
    names = list(C)
    ncol = min(4, len(metrics))
    nrow = -(-len(metrics) // ncol)
    fig = Figure(figsize=(3.2 * ncol, nrow * (0.18 * len(names) + 1.0) + 0.5))
    ypos = np.arange(len(names))[::-1]
    for i, m in enumerate(metrics):
        ax = fig.add_subplot(nrow, ncol, i + 1)
        mean = np.array([C[n][m]["mean"] for n in names])
        lo = np.array([C[n][m]["ci_low"] if C[n][m]["ci_low"] is not None else np.nan for n in names])
        hi = np.array([C[n][m]["ci_high"] if C[n][m]["ci_high"] is not None else np.nan for n in names])
        colors = ["C3" if n == summary["baseline"] else "C0" for n in names]
        ax.errorbar(mean, ypos, xerr=[mean - lo, hi - mean], fmt="none", ecolor="0.6", lw=1)
        ax.scatter(mean, ypos, c=colors, s=12, zorder=3)
        ax.axvline(C[summary["baseline"]][m]["mean"], color="C3", lw=0.6, ls="--")
        ax.set_title(m, fontsize=9)
        ax.tick_params(labelsize=SMALL)
        ax.set_yticks(ypos)
        ax.set_yticklabels(names if i % ncol == 0 else [], fontsize=SMALL)
    level = round(100 * summary["confidence"])
    from matplotlib.lines import Line2D

    marks = [Line2D([], [], ls="", marker="o", ms=4, color="C0", label="mean of a contender"),
             Line2D([], [], ls="", marker="o", ms=4, color="C3", label=f"mean of the baseline {summary['baseline']}"),
             Line2D([], [], color="0.6", lw=1, label=f"{level}% confidence interval"),
             Line2D([], [], color="C3", lw=0.6, ls="--", label="baseline's mean")]
    fig.legend(handles=marks, loc="lower center", ncol=4, fontsize=SMALL, frameon=False)
    fig.suptitle(f"{title}: mean and {level}% CI per metric", fontsize=9)
    fig.tight_layout(rect=(0, 0.3 / fig.get_figheight(), 1, 1))
    _save(fig, path)
    return fig


def wins_matrix(summary: dict, path: pathlib.Path, title: str) -> Figure:
    """Rows = contender (training objective), columns = evaluation metric; cell = mean,
    colour = rank within the column (yellow = better), best of each column boxed."""
    metrics, C, ranks = summary["metrics"], summary["contenders"], summary["ranks"]
    names = list(C)
    mean = np.array([[C[n][m]["mean"] for m in metrics] for n in names])
    rank = np.array([[ranks[n][m] for m in metrics] for n in names], dtype=float)
    fig = Figure(figsize=(1.6 + 0.8 * len(metrics) + 0.07 * max(len(n) for n in names),
                          0.25 * len(names) + 1.8))
    ax = fig.add_subplot(1, 1, 1)
    ax.imshow(rank, cmap="viridis_r", aspect="auto", vmin=1, vmax=max(2, len(names)))
    for i in range(len(names)):
        for j in range(len(metrics)):
            best = rank[i, j] == 1
            ax.text(j, i, f"{mean[i, j]:.3f}", ha="center", va="center", fontsize=SMALL,
                    fontweight="bold" if best else "normal",
                    color="black" if rank[i, j] <= len(names) / 2 else "white")
            if best:
                ax.add_patch(_box(j, i))
    ax.set_xticks(range(len(metrics)))
    ax.set_xticklabels(metrics, rotation=45, ha="right", fontsize=SMALL)
    ax.set_yticks(range(len(names)))
    ax.set_yticklabels(names, fontsize=SMALL)
    ax.set_xlabel("evaluation metric", fontsize=8)
    ax.set_ylabel("training objective (contender)", fontsize=8)
    ax.set_title(f"{title}\nmean per (objective, metric); colour = rank in column (yellow = best), "
                 "red box = best", fontsize=8)
    fig.tight_layout()
    _save(fig, path)
    return fig


def _box(x, y):
    from matplotlib.patches import Rectangle

    return Rectangle((x - 0.5, y - 0.5), 1, 1, fill=False, edgecolor="red", lw=1.5)


def _relevant_bins(n_relevant: np.ndarray):
    """Bin index of each query's number of relevant items, and the labels of the bins used."""
    edges = np.array(_RELEVANT_EDGES, dtype=float)
    bins = np.searchsorted(edges, n_relevant, side="right") - 1
    labels = {}
    for j in np.unique(bins):
        lo, hi = int(edges[j]), edges[j + 1] - 1
        labels[j] = str(lo) if hi == lo else f"{lo}+" if not np.isfinite(hi) else f"{lo}-{int(hi)}"
    return bins, labels


def diff_vs_relevant(per_query: pd.DataFrame, summary: dict, path: pathlib.Path, highlight, title: str,
                     unit: tuple = QUERY_WORDS) -> Figure:
    """Per-query difference to the baseline (mean and 95% t-interval per bin) against the
    number of relevant items of the query; one panel per headline metric.  ``unit``: the
    words of a row (``_report.UNITS``: queries, or users for recommendation)."""
    from scipy import stats

    one, many = unit[0], unit[1]
    base = summary["baseline"]
    metrics = headline_metrics(summary["metrics"])
    others = [n for n in highlight if n != base]
    b = per_query[per_query["contender"] == base].set_index(["split", "qid"])
    bins, labels = _relevant_bins(b["n_relevant"].to_numpy())
    bin_of = pd.Series(bins, index=b.index)
    order = sorted(labels)
    pos = {j: i for i, j in enumerate(order)}
    counts = bin_of.value_counts()
    fig = Figure(figsize=(3.6 * len(metrics), 3.6))
    for i, m in enumerate(metrics):
        ax = fig.add_subplot(1, len(metrics), i + 1)
        for k, name in enumerate(others):
            a = per_query[per_query["contender"] == name].set_index(["split", "qid"])
            common = a.index.intersection(b.index)
            d = a.loc[common, m].to_numpy() - b.loc[common, m].to_numpy()
            qb = bin_of.loc[common].to_numpy()
            xs, ys, hs = [], [], []
            for j in order:
                sel = d[qb == j]
                if len(sel) == 0:
                    continue
                xs.append(pos[j] + (k - (len(others) - 1) / 2) * 0.08)
                ys.append(sel.mean())
                hs.append(stats.t.ppf(0.975, len(sel) - 1) * sel.std(ddof=1) / np.sqrt(len(sel))
                          if len(sel) > 2 else 0.0)
            ax.errorbar(xs, ys, yerr=hs, marker="o", ms=3, lw=1, capsize=2, label=name, color=f"C{k % 10}")
        ax.axhline(0.0, color="k", lw=0.6)
        ax.set_xticks(range(len(order)))
        ax.set_xticklabels([f"{labels[j]} ({counts.get(j, 0)})" for j in order], fontsize=SMALL, rotation=90)
        ax.set_xlabel(f"relevant items of the {one} ({many} in the bin)", fontsize=8)
        ax.set_title(f"{m}: contender − {base}", fontsize=8)
        ax.tick_params(axis="y", labelsize=SMALL)
        if i == 0:
            ax.set_ylabel(f"mean per-{one} difference (95% CI)", fontsize=8)
    fig.legend(*fig.axes[0].get_legend_handles_labels(), loc="lower center", ncol=min(3, max(1, len(others))),
               fontsize=SMALL, frameon=False)
    fig.suptitle(f"{title}: difference to the baseline by number of relevant items "
                 f"(no interval on bins of < 3 {many})", fontsize=9)
    fig.tight_layout(rect=(0, 0.08 + 0.04 * (len(others) > 3), 1, 1))
    _save(fig, path)
    return fig


def cdfs(per_query: pd.DataFrame, summary: dict, path: pathlib.Path, highlight, title: str,
         unit: tuple = QUERY_WORDS) -> Figure:
    """Empirical CDF of the per-query values of each highlighted contender, per headline metric."""
    one, many = unit[0], unit[1]
    metrics = headline_metrics(summary["metrics"])
    fig = Figure(figsize=(3.4 * len(metrics), 3.4))
    for i, m in enumerate(metrics):
        ax = fig.add_subplot(1, len(metrics), i + 1)
        for k, name in enumerate(highlight):
            v = np.sort(per_query.loc[per_query["contender"] == name, m].to_numpy())
            ax.step(v, np.arange(1, len(v) + 1) / len(v), where="post", lw=1.2 if k else 1.8,
                    label=name, color=f"C{k % 10}")
        ax.set_xlabel(f"per-{one} {m}", fontsize=8)
        ax.set_title(m, fontsize=9)
        ax.tick_params(labelsize=SMALL)
        if i == 0:
            ax.set_ylabel(f"fraction of {many} ≤ x", fontsize=8)
    fig.legend(*fig.axes[0].get_legend_handles_labels(), loc="lower center", ncol=min(3, len(highlight)),
               fontsize=SMALL, frameon=False)
    fig.suptitle(f"{title}: CDF of per-{one} values (lower curve = better)", fontsize=9)
    fig.tight_layout(rect=(0, 0.08 + 0.04 * (len(highlight) > 3), 1, 1))
    _save(fig, path)
    return fig


def ndcg_at_k(per_query: pd.DataFrame, summary: dict, path: pathlib.Path, highlight, title: str) -> Figure | None:
    """Mean nDCG@k against k for the ``ndcg@k`` columns present; every contender in grey,
    the highlighted ones in colour.  Returns the figure, or None (nothing drawn) with fewer
    than two such columns."""
    cols = ndcg_curve_columns(per_query.columns)
    if len(cols) < 2:
        return None
    ks = [k for k, _ in cols]
    means = per_query.groupby("contender", sort=False)[[c for _, c in cols]].mean()
    fig = Figure(figsize=(6.0, 4.0))
    ax = fig.add_subplot(1, 1, 1)
    for name in means.index:
        if name not in highlight:
            ax.plot(ks, means.loc[name].to_numpy(), color="0.82", lw=0.8)
    for k, name in enumerate(highlight):
        ax.plot(ks, means.loc[name].to_numpy(), marker="o", ms=3, lw=1.3, label=name, color=f"C{k % 10}")
    ax.set_xlabel("k", fontsize=8)
    ax.set_ylabel("mean nDCG@k", fontsize=8)
    ax.set_xticks(ks if len(ks) <= 20 else ks[:: max(1, len(ks) // 20)])
    ax.tick_params(labelsize=SMALL)
    ax.legend(fontsize=SMALL, frameon=False)
    ax.set_title(f"{title}\nmean nDCG@k (grey: the other contenders)", fontsize=8)
    fig.tight_layout()
    _save(fig, path)
    return fig


def draw_all(per_query: pd.DataFrame, summary: dict, out: pathlib.Path, *, highlight, title: str,
             unit: tuple = QUERY_WORDS) -> list[str]:
    """Draw every plot into ``out``; return the file names written.  ``unit``: the words of a
    row, (singular, plural, id, what its list holds), e.g. ``_report.UNITS["user"]``."""
    missing = [n for n in highlight if n not in summary["contenders"]]
    if missing:
        raise ValueError(f"highlight names unknown contenders {missing}; choose among {sorted(summary['contenders'])}")
    drawn = []
    metric_means(summary, out / "metrics.png", title)
    drawn.append("metrics.png")
    wins_matrix(summary, out / "wins.png", title)
    drawn.append("wins.png")
    if len(highlight) > 1:
        diff_vs_relevant(per_query, summary, out / "diff_vs_relevant.png", highlight, title, unit)
        drawn.append("diff_vs_relevant.png")
    cdfs(per_query, summary, out / "cdf.png", highlight, title, unit)
    drawn.append("cdf.png")
    if ndcg_at_k(per_query, summary, out / "ndcg_at_k.png", highlight, title):
        drawn.append("ndcg_at_k.png")
    return drawn
