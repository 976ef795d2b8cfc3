"""Matrix factorisation on MovieLens with listwise ranking losses (gbrank.torch.MFRanker).

The job: top-n recommendation from ratings, trained for the ranking metric you report.
The protocol of Li et al. (SIGIR 2021): ratings >= 4 are positives, 20 % of each user's
positives are held out, each test list holds them with as many sampled negatives.  Train
one MFRanker per listwise loss (smoothed nDCG, AP, nRBP) and evaluate each on every
metric.  Data: MovieLens ml-latest-small when ``GBRANK_DATA`` holds it (full run), else
(and always with --quick) seeded synthetic ratings from a low-rank model.

    python examples/mf_movielens.py            # MovieLens if present, 30 epochs
    python examples/mf_movielens.py --quick    # synthetic, 3 epochs

Look at: the table of test means (rows: loss, columns: metric) and
docs/gallery/mf_movielens.png, the validation metric per epoch of each loss.
"""

from __future__ import annotations

import pathlib

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

import gbrank.torch as gt  # noqa: E402

from _gallery import GALLERY, run, save_figure  # noqa: E402

FIGURES = ["mf_movielens.png"]
LOSSES = ["listwise_ndcg", "listwise_ap", "listwise_nrbp"]
METRICS = ["ndcg", "ap", "rr", "nrbp@0.95"]


def synthetic_ratings(n_users=150, n_items=300, per_user=60, seed=0) -> pd.DataFrame:
    """Ratings 1-5 from a rank-4 model: each user rates per_user random items."""
    rng = np.random.default_rng(seed)
    u, v = rng.normal(size=(n_users, 4)), rng.normal(size=(n_items, 4))
    rows = [(user, item) for user in range(n_users) for item in rng.choice(n_items, per_user, replace=False)]
    users, items = np.array(rows).T
    affinity = (u[users] * v[items]).sum(1) + rng.normal(0, 0.5, len(users))
    rating = np.clip(np.round(3 + affinity), 1, 5)
    return pd.DataFrame({"user": users, "item": items, "rating": rating})


def ratings_for(quick: bool) -> tuple[pd.DataFrame, str]:
    if not quick:
        try:
            from gbrank.datasets import load_movielens

            return load_movielens(), "MovieLens ml-latest-small"
        except FileNotFoundError as err:
            print(f"MovieLens not found ({err}); using synthetic ratings")
    return synthetic_ratings(), "synthetic ratings"


def main(quick: bool = False, out: pathlib.Path = GALLERY) -> None:
    ratings, source = ratings_for(quick)
    split = gt.split_interactions(ratings[["user", "item"]].to_numpy(), ratings["rating"].to_numpy(),
                                  relevance_threshold=4, min_positives=10 if quick else 25, nsr=1, random_state=0)
    print(f"{source}: {len(ratings):,} ratings; {len(split.items):,} items")
    rows, histories = {}, {}
    for loss in LOSSES:
        model = gt.MFRanker(loss=loss, optimizer="adam", relevance_threshold=4, epochs=3 if quick else 30,
                            eval_metric="ndcg", device="cpu", random_state=0, verbose=0)
        model.fit(split.X_train, split.y_train, items=split.items)
        rows[loss] = gt.evaluate_recommender(model, split, metrics=METRICS).mean()[METRICS]
        histories[loss] = model.history_
    table = pd.DataFrame(rows).T
    print("Test means, sampled protocol (rows: the loss trained, columns: the metric):")
    print(table.round(4).to_string())

    out.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(6.5, 3.6), constrained_layout=True)
    for loss, history in histories.items():
        column = [c for c in history.columns if c not in ("loss", "seconds")][0]
        h = history[column].dropna()
        ax.plot(h.index, h.values, "o-", ms=3, label=loss)
    ax.set_xlabel("epoch")
    ax.set_ylabel("validation nDCG (sampled lists)")
    ax.set_title(f"MFRanker on {source}")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    save_figure(fig, out, "mf_movielens.png")


if __name__ == "__main__":
    run(main, __doc__)
