"""Distributed data-parallel training of MFRanker on one machine (torch DDP, CPU, gloo).

The job: scale MFRanker's training over several processes (here 2, on CPU with the gloo
backend; the same code runs on GPUs with NCCL, or under ``torchrun`` with
``MFRanker(distributed=True)``).  ``gbrank.torch.fit_distributed`` fits a clone of the
estimator in ``nprocs`` local processes started by ``launch_local`` and returns rank
0's model; with the same ``random_state`` it equals the one-process model up to the
order of float sums.

    python examples/torch_ddp.py            # 20 epochs
    python examples/torch_ddp.py --quick    # 2 epochs

Look at: the largest difference between the factors of the 2-process model and the
one-process model (float rounding only), and the two models' test means.
"""

from __future__ import annotations

import pathlib
import sys

import numpy as np

import gbrank.torch as gt

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from mf_movielens import synthetic_ratings  # noqa: E402

from _gallery import GALLERY, run  # noqa: E402

FIGURES: list[str] = []  # draws nothing


def main(quick: bool = False, out: pathlib.Path = GALLERY) -> None:
    ratings = synthetic_ratings(n_users=80 if quick else 300)
    split = gt.split_interactions(ratings[["user", "item"]].to_numpy(), ratings["rating"].to_numpy(),
                                  relevance_threshold=4, min_positives=10, nsr=1, random_state=0)
    model = gt.MFRanker(loss="lambda_ndcg", relevance_threshold=4, epochs=2 if quick else 20, device="cpu",
                        random_state=0, verbose=0)
    two = gt.fit_distributed(model, split.X_train, split.y_train, items=split.items, nprocs=2, timeout=300)
    one = model.fit(split.X_train, split.y_train, items=split.items)
    gap = max(float(np.abs(a.detach().numpy() - b.detach().numpy()).max())
              for a, b in zip(one.module_.parameters(), two.module_.parameters()))
    print(f"largest |factor difference|, 2 processes against 1: {gap:.2e}")
    for name, m in (("1 process", one), ("2 processes", two)):
        print(f"{name:12s}", gt.evaluate_recommender(m, split, metrics=["ndcg", "ap"]).mean().round(4).to_dict())


if __name__ == "__main__":
    run(main, __doc__)
