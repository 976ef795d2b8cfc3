"""Sampled against full-catalogue evaluation of a recommender: do the two agree?

The job: papers often rank each held-out positive among a few sampled negatives
("sampled" protocol); users see it among the whole catalogue ("full").  Sampled metrics
are higher and can order models differently (Krichene and Rendle, KDD 2020).  Train
MFRanker with two losses and evaluate each with ``gbrank.torch.evaluate_recommender``
under both protocols.

    python examples/sampled_vs_full.py            # 30 epochs
    python examples/sampled_vs_full.py --quick    # 3 epochs

Look at: the table (loss x protocol) and docs/gallery/sampled_vs_full.png; whether the
better loss under "sampled" is also the better one under "full".
"""

from __future__ import annotations

import pathlib
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

import gbrank.torch as gt  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from mf_movielens import synthetic_ratings  # noqa: E402

from _gallery import GALLERY, run, save_figure  # noqa: E402

FIGURES = ["sampled_vs_full.png"]
METRICS = ["ndcg", "ap", "rr"]


def main(quick: bool = False, out: pathlib.Path = GALLERY) -> None:
    ratings = synthetic_ratings(n_users=150 if quick else 400, n_items=300 if quick else 800)
    split = gt.split_interactions(ratings[["user", "item"]].to_numpy(), ratings["rating"].to_numpy(),
                                  relevance_threshold=4, min_positives=10, nsr=2, random_state=0)
    rows = []
    for loss in ["listwise_ndcg", "bpr"]:
        model = gt.MFRanker(loss=loss, optimizer="adam", relevance_threshold=4, epochs=3 if quick else 30,
                            device="cpu", random_state=0, verbose=0).fit(split.X_train, split.y_train,
                                                                         items=split.items)
        for protocol in gt.PROTOCOLS:
            mean = gt.evaluate_recommender(model, split, protocol=protocol, metrics=METRICS).mean()
            rows.append({"loss": loss, "protocol": protocol, **mean[METRICS].to_dict()})
    table = pd.DataFrame(rows).set_index(["loss", "protocol"])
    print("Test means per loss and protocol (sampled: positives + 2x sampled negatives; full: whole catalogue):")
    print(table.round(4).to_string())

    out.mkdir(parents=True, exist_ok=True)
    fig, axes = plt.subplots(1, len(METRICS), figsize=(10, 3.2), constrained_layout=True)
    for ax, metric in zip(axes, METRICS):
        wide = table[metric].unstack("protocol")
        wide.plot.bar(ax=ax, rot=0)
        ax.set_title(metric)
        ax.set_xlabel("")
    fig.suptitle("The same models under the sampled and the full-catalogue protocol")
    save_figure(fig, out, "sampled_vs_full.png")


if __name__ == "__main__":
    run(main, __doc__)
