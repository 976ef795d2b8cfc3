"""Slow, obviously correct reference implementations for the metric tests.

Nothing here is clever: a metric is computed from its textbook definition on one fixed
order of labels, and a tie policy is applied by literally building the orders it allows
(every permutation of every group of tied scores for "average").  The fast kernels in
``gbrank.metrics`` must agree with these on many random lists.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter

BRUTE_METRICS = (
    "ndcg", "ndcg@3", "dcg", "dcg@3", "ap", "ap@3", "rr", "rr@2", "rbp@0.8", "nrbp@0.5",
    "nrbp@0.95", "p@3", "p@10", "r@3", "auc", "mean_rank", "max_rank", "nrbp_loss",
    "success", "success@1", "success@3", "rprec", "bpref", "err", "err@3", "f1", "f1@3", "judged@5",
    "rbp_graded@0.8", "rbp_residual@0.5",
)


def gain(label, gain_kind):
    return 2.0**label - 1.0 if gain_kind == "exp" else float(label)


def _split(name):
    family, _, arg = name.partition("@")
    return family, arg


def metric_of_order(name, labels, *, gain_kind="exp", threshold=1.0, ap_divisor="R", max_grade=None):
    """Metric ``name`` of the labels listed in rank order (best first); every item judged.
    ``max_grade``: top grade of the scale (ERR, graded RBP; default the list's largest label).

    Returns ``None`` where the metric is undefined (no relevant item, or a zero ideal).
    """
    family, arg = _split(name)
    n = len(labels)
    rel = [1 if lab >= threshold else 0 for lab in labels]
    n_rel = sum(rel)
    k = int(arg) if arg and family not in ("rbp", "nrbp", "rbp_graded", "rbp_residual") else n
    top = min(k, n)

    if family in ("dcg", "ndcg"):
        def dcg_of(seq):
            return sum(gain(seq[r - 1], gain_kind) / math.log2(r + 1) for r in range(1, top + 1))

        value = dcg_of(labels)
        if family == "dcg":
            return value
        ideal = dcg_of(sorted(labels, reverse=True))
        return None if ideal == 0 else value / ideal

    if family == "p":
        return sum(rel[:top]) / k
    top_gain = gain(max(labels) if max_grade is None else max_grade, gain_kind)
    if family == "err":
        x = [gain(lab, gain_kind) / (top_gain + 1) for lab in labels]
        return sum(x[r - 1] / r * math.prod(1 - x[i] for i in range(r - 1)) for r in range(1, top + 1))
    if family == "rbp_graded":
        p = float(arg)
        if top_gain == 0:
            return 0.0
        return (1 - p) * sum(gain(labels[r - 1], gain_kind) / top_gain * p ** (r - 1) for r in range(1, n + 1))
    if family == "rbp_residual":  # every item judged: only the ranks beyond the end remain
        return float(arg) ** n
    if family == "judged":
        return top / k
    if family == "rbp":
        p = float(arg)
        return (1 - p) * sum(rel[r - 1] * p ** (r - 1) for r in range(1, n + 1))

    if n_rel == 0:
        return None
    if family == "ap":
        total = 0.0
        for r in range(1, top + 1):
            if rel[r - 1]:
                total += sum(rel[:r]) / r
        divisor = min(n_rel, k) if (ap_divisor == "min(R,k)" and arg) else n_rel
        return total / divisor
    if family == "rr":
        first = rel.index(1) + 1
        return 1.0 / first if first <= top else 0.0
    if family == "nrbp":
        p = float(arg)
        rbp = (1 - p) * sum(rel[r - 1] * p ** (r - 1) for r in range(1, n + 1))
        return rbp / (1 - p**n_rel)  # ideal binary RBP: R relevant items on top
    if family == "r":
        return sum(rel[:top]) / n_rel
    if family == "auc":
        n_neg = n - n_rel
        if n_neg == 0:
            return 1.0
        good = sum(1 for i in range(n) for j in range(i + 1, n) if rel[i] and not rel[j])
        return good / (n_rel * n_neg)
    if family == "mean_rank":
        return sum(r for r in range(1, n + 1) if rel[r - 1]) / n_rel
    if family == "max_rank":
        return float(max(r for r in range(1, n + 1) if rel[r - 1]))
    if family == "rprec":
        return sum(rel[:n_rel]) / n_rel
    if family == "bpref":  # trec_eval's form; every non-relevant item is judged
        n_nonrel = n - n_rel
        total = 0.0
        for r in range(n):
            if rel[r]:
                above = r - sum(rel[:r])
                total += 1.0 if above == 0 else 1.0 - min(above, n_rel) / min(n_rel, n_nonrel)
        return total / n_rel
    if family == "f1":
        hits = sum(rel[:top])
        prec, rec = hits / k, hits / n_rel
        return 0.0 if hits == 0 else 2 * prec * rec / (prec + rec)
    if family == "success":
        return 1.0 if sum(rel[:top]) > 0 else 0.0
    if family == "nrbp_loss":  # Li et al. 2021, Eq 19: sum of (rank - 1) over relevant, minus its ideal
        return sum(r - 1 for r in range(1, n + 1) if rel[r - 1]) - n_rel * (n_rel - 1) / 2
    raise ValueError(name)


def _groups(scores):
    """Indices grouped by equal score, best score first; input order within a group."""
    by_score = {}
    for i, s in enumerate(scores):
        by_score.setdefault(s, []).append(i)
    return [by_score[s] for s in sorted(by_score, reverse=True)]


def orders(scores, labels, ties):
    """The label sequences a tie policy allows, as a list of (sequence, probability)."""
    groups = _groups(scores)
    if ties == "stable":
        return [(tuple(labels[i] for g in groups for i in g), 1.0)]
    if ties in ("pessimistic", "optimistic"):
        seq = []
        for g in groups:
            seq.extend(sorted((labels[i] for i in g), reverse=ties == "optimistic"))
        return [(tuple(seq), 1.0)]
    if ties != "average":
        raise ValueError(ties)
    # every ordering of every tie group, equally likely; orders that give the same label
    # sequence are merged with their counts (the metric only sees the labels)
    per_group = []
    for g in groups:
        perms = Counter(itertools.permutations([labels[i] for i in g]))
        total = sum(perms.values())
        per_group.append([(seq, c / total) for seq, c in perms.items()])
    out = []
    for combo in itertools.product(*per_group):
        seq = tuple(lab for part, _ in combo for lab in part)
        prob = math.prod(pr for _, pr in combo)
        out.append((seq, prob))
    return out


def expected_metric(name, scores, labels, ties, **kw):
    """Metric under a tie policy: the probability-weighted mean over the allowed orders.
    ``None`` where undefined (then it is undefined for every order)."""
    total = 0.0
    for seq, prob in orders(scores, labels, ties):
        value = metric_of_order(name, list(seq), **kw)
        if value is None:
            return None
        total += prob * value
    return total


def swap_delta_matrix(name, scores, labels, *, gain_kind="exp", threshold=1.0):
    """|M(after items i and j swap their current ranks) - M(now)| for every pair of one list,
    entry ``[i, j]`` for input rows i and j, by literally swapping and recomputing.

    The current ranking is a stable descending sort of ``scores`` (input order breaks ties);
    ``name`` is a :func:`metric_of_order` name (e.g. ``"ndcg"``, ``"nrbp@0.9"``).  Where the
    metric is undefined (no relevant item) every delta is 0, as the LambdaRank weights are.
    """
    n = len(labels)
    order = sorted(range(n), key=lambda i: -scores[i])  # sorted() is stable
    ranked = [labels[i] for i in order]
    now = metric_of_order(name, ranked, gain_kind=gain_kind, threshold=threshold)
    out = [[0.0] * n for _ in range(n)]
    for a in range(n):
        for b in range(n):
            if a == b or now is None:
                continue
            swapped = list(ranked)
            swapped[a], swapped[b] = swapped[b], swapped[a]
            after = metric_of_order(name, swapped, gain_kind=gain_kind, threshold=threshold)
            out[order[a]][order[b]] = abs(after - now)
    return out
