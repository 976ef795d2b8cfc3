"""Comparing systems honestly: paired tests over queries, corrected p-values, a plot.

The job: you have several rankers (or runs) evaluated on the same queries and want to say
which differences are real.  ``gbrank.compare`` over N systems pairs them by query id,
gives each mean with its interval, every pairwise difference with its interval, effect
size d_z and a p-value corrected for the number of pairs (Holm here), and a Markdown
report.

    python examples/compare_systems.py            # 4 systems, 150 rounds, randomisation test too
    python examples/compare_systems.py --quick    # 3 systems, 10 rounds

Look at: Comparison.to_markdown() (means, then pairs marked * when significant), and
docs/gallery/compare_systems.png (means with 95 % intervals; differences to the baseline).
"""

from __future__ import annotations

import pathlib

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import gbrank  # noqa: E402
from gbrank.datasets import make_letor  # noqa: E402

from _gallery import GALLERY, run, save_figure  # noqa: E402

FIGURES = ["compare_systems.png"]
METRICS = ["ndcg@10", "ap"]


def main(quick: bool = False, out: pathlib.Path = GALLERY) -> None:
    X, y, qid = make_letor(n_queries=150 if quick else 400, n_features=15, random_state=2)
    test = qid >= (100 if quick else 300)
    systems = {"lambdarank": "lightgbm:lambdarank", "ndcg": "ndcg", "nrbp": "nrbp@0.95"}
    if not quick:
        systems["ap"] = "ap"
    results = {}
    for name, objective in systems.items():
        model = gbrank.GBRanker(objective, n_estimators=10 if quick else 150, learning_rate=0.05, random_state=0)
        model.fit(X[~test], y[~test], qid=qid[~test])
        results[name] = gbrank.evaluate(y[test], model.predict(X[test]), qid[test], METRICS)
    tests = ["t"] if quick else ["t", "randomization"]
    comparison = gbrank.compare(results, baseline="lambdarank", test=tests, correction="holm")
    print(comparison.to_markdown())
    print("\nmeans:\n" + comparison.means.round(4).to_string())

    out.mkdir(parents=True, exist_ok=True)
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6), constrained_layout=True)
    for offset, metric in enumerate(METRICS):
        m = comparison.means.reset_index()
        m = m[m["metric"] == metric]
        xs = range(len(m))
        axes[0].errorbar([x + 0.15 * offset for x in xs], m["mean"],
                         yerr=[m["mean"] - m["ci_low"], m["ci_high"] - m["mean"]], fmt="o", capsize=3, label=metric)
        axes[0].set_xticks(list(xs), m["system"])
        p = comparison.pairs
        p = p[(p["metric"] == metric) & (p["test"] == "t")]
        axes[1].errorbar([x + 0.15 * offset for x in range(len(p))], p["diff"],
                         yerr=[p["diff"] - p["ci_low"], p["ci_high"] - p["diff"]], fmt="o", capsize=3, label=metric)
        axes[1].set_xticks(list(range(len(p))), [f"{a} - {b}" for a, b in zip(p["a"], p["b"])], fontsize=8)
    axes[0].set_title("test means, 95 % intervals")
    axes[1].axhline(0, color="grey", lw=0.8)
    axes[1].set_title("paired difference to the baseline, 95 % intervals")
    for ax in axes:
        ax.legend(fontsize=8)
        ax.grid(alpha=0.3)
    save_figure(fig, out, "compare_systems.png")


if __name__ == "__main__":
    run(main, __doc__)
