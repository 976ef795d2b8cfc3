"""User-item interactions for recommendation: ids, per-user CSR lists, splits, negative sampling.

The data side of the recommendation protocol of Li et al. (SIGIR 2021, Sec. 4.2; thesis
Sec. 4.3): :func:`split_interactions` splits (user, item) pairs per user into training data
and sampled test lists; the CSR helpers, :func:`sample_negatives` and :func:`top_k` are the vectorised
pieces it and ``gbrank.torch.MFRanker`` are built from.  numpy and pandas only (no torch):
of gbrank this sub-package imports only the shared input checks (``gbrank._validation``).

A CSR is a pair ``(indptr, items)``: the items of user u are
``items[indptr[u]:indptr[u + 1]]``, sorted and unique.  Seeds are parameters
(``numpy.random.Generator`` or an int ``random_state``).
"""

from ._checks import ArgumentError, check_nsr, check_pairs, check_unique_pairs, display_id
from ._csr import csr_difference, csr_from, csr_rows, csr_take, csr_union
from ._sampling import NotEnoughNegatives, holdout, sample_negatives
from ._split import InteractionSplit, split_interactions
from ._topk import top_k

__all__ = [
    "split_interactions", "InteractionSplit", "NotEnoughNegatives", "ArgumentError",
    "check_pairs", "check_unique_pairs", "check_nsr", "display_id",
    "csr_from", "csr_take", "csr_rows", "csr_union", "csr_difference",
    "sample_negatives", "holdout", "top_k",
]
