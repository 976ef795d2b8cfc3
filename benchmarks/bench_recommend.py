"""Speed of ``MFRanker.recommend``: the partial sort (``np.argpartition`` + a sort of the k)
against the full argsort per user it replaced, in one process.

The model is built with ml-latest-small's shape (610 users, 9724 items, ``--factors``
factors, each user with ml-latest-small's number of ratings, ~165 on average), seeded random
factors, so nothing has to be trained.  Timed, best of ``--repeats``, interleaved:

* ``select``: only the top-k selection on one matrix of scores (seen items at -inf):
  ``np.argsort(-scores, axis=1, kind="stable")[:, :k]`` against ``gbrank.interactions.top_k``;
* ``recommend``: the whole call for every user, scoring included: the old ``recommend``
  (all users scored at once, full argsort) against ``MFRanker.recommend``.

Both answers are checked equal before timing.

    python benchmarks/bench_recommend.py             # k = 10, 32 factors
    python benchmarks/bench_recommend.py --k 100
"""

from __future__ import annotations

import argparse
import platform
import time

import numpy as np
import torch

from gbrank.interactions import csr_from, csr_take, top_k
from gbrank.torch import MFRanker
from gbrank.torch._mf import MatrixFactorization


def model(n_users: int, n_items: int, factors: int, seen_per_user: int, seed: int = 0) -> MFRanker:
    """A fitted-looking MFRanker with random factors and random seen items."""
    rng = np.random.default_rng(seed)
    est = MFRanker(n_factors=factors)
    est.module_ = MatrixFactorization(n_users, n_items, factors)
    est.module_.reset_parameters(0.1, torch.Generator().manual_seed(seed))
    est.module_.eval()
    counts = np.minimum(rng.geometric(1 / seen_per_user, size=n_users) + 19, n_items // 2)
    users = np.repeat(np.arange(n_users), counts)
    items = np.concatenate([rng.choice(n_items, size=c, replace=False) for c in counts])
    est.seen_indptr_, est.seen_items_ = csr_from(users, items, n_users)
    est.users_, est.items_ = np.arange(n_users), np.arange(n_items) * 3 + 1
    est.n_users_, est.n_items_ = n_users, n_items
    return est


def old_recommend(est: MFRanker, users, k: int) -> np.ndarray:
    """``recommend`` as it was: every user scored at once, then a full stable argsort per user."""
    codes = np.searchsorted(est.users_, users)
    scores = est._score_user_rows(codes)
    local, items = csr_take(est.seen_indptr_, est.seen_items_, codes)
    scores[local, items] = -np.inf
    return est.items_[np.argsort(-scores, axis=1, kind="stable")[:, :k]]


def best_of(old, new, repeats: int) -> tuple[float, float]:
    """Best times of ``old()`` and ``new()``, run alternately ``repeats`` times each (after one warm-up)."""
    times = {old: [], new: []}
    for i in range(repeats + 1):
        for fn in (old, new) if i % 2 else (new, old):
            start = time.perf_counter()
            fn()
            if i:
                times[fn].append(time.perf_counter() - start)
    return min(times[old]), min(times[new])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--users", type=int, default=610)
    parser.add_argument("--items", type=int, default=9724)
    parser.add_argument("--factors", type=int, default=32)
    parser.add_argument("--seen", type=int, default=165, help="mean seen items per user")
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()

    est = model(args.users, args.items, args.factors, args.seen)
    users = est.users_
    scores = est._score_user_rows(np.arange(args.users))
    local, items = csr_take(est.seen_indptr_, est.seen_items_, np.arange(args.users))
    scores[local, items] = -np.inf
    full = lambda: np.argsort(-scores, axis=1, kind="stable")[:, :args.k]  # noqa: E731
    partial = lambda: top_k(scores, args.k)  # noqa: E731
    assert np.array_equal(full(), partial())
    assert np.array_equal(old_recommend(est, users, args.k), est.recommend(users, k=args.k))

    print(f"{args.users} users x {args.items} items, {args.factors} factors, k={args.k}; numpy {np.__version__}, "
          f"torch {torch.__version__}, {platform.processor() or platform.machine()}, "
          f"torch threads {torch.get_num_threads()}; best of {args.repeats}")
    for name, old, new in (("select", full, partial),
                           ("recommend", lambda: old_recommend(est, users, args.k),
                            lambda: est.recommend(users, k=args.k))):
        t_old, t_new = best_of(old, new, args.repeats)
        print(f"{name:10s} full argsort {t_old * 1e3:8.2f} ms   partial sort {t_new * 1e3:8.2f} ms   "
              f"ratio {t_old / t_new:5.1f}x")


if __name__ == "__main__":
    main()
