"""``gbrank.compare``: paired comparison of two evaluated systems over their common lists."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from .._validation import check_choice
from ._evaluate import EvaluationResult, _t_half_width

TESTS = ("t", "wilcoxon", "randomization")


def compare(
    result_a: EvaluationResult,
    result_b: EvaluationResult,
    test: str = "t",
    *,
    confidence: float = 0.95,
    n_resamples: int = 9999,
    random_state: int | None = 0,
) -> pd.DataFrame:
    """Per metric: mean of A, mean of B, mean paired difference A - B with its
    Student-t confidence interval, and a two-sided p-value, over the lists both share.

    Parameters
    ----------
    test : {"t", "wilcoxon", "randomization"}
        Paired t-test, Wilcoxon signed-rank test, or a paired randomization
        (sign-flip permutation) test with ``n_resamples`` draws seeded by ``random_state``.

    Raises
    ------
    ValueError
        When the two results were computed under different conventions (empty-list or tie
        policy, gain, threshold, AP divisor), share no metric or share no list.
    """
    check_choice(test, "test", TESTS)
    if result_a.settings != result_b.settings:
        diff = {k: (result_a.settings.get(k), result_b.settings.get(k))
                for k in set(result_a.settings) | set(result_b.settings)
                if result_a.settings.get(k) != result_b.settings.get(k)}
        raise ValueError(f"the two results use different conventions {diff}; evaluate both the same way")
    metrics = [m for m in result_a.metrics if m in result_b.metrics]
    if not metrics:
        raise ValueError(f"the results share no metric: {result_a.metrics} vs {result_b.metrics}")
    common = result_a.per_query.index.intersection(result_b.per_query.index)
    if len(common) == 0:
        raise ValueError("the results share no query id, so there is nothing to pair")
    a = result_a.per_query.loc[common, metrics]
    b = result_b.per_query.loc[common, metrics]
    rows = []
    for m in metrics:
        x, y = a[m].to_numpy(), b[m].to_numpy()
        d = x - y
        n = len(d)
        sd = d.std(ddof=1) if n > 1 else 0.0
        half = float(_t_half_width(sd, n, confidence))
        rows.append({
            "metric": m, "mean_a": x.mean(), "mean_b": y.mean(), "diff": d.mean(),
            "ci_low": d.mean() - half, "ci_high": d.mean() + half,
            "p_value": _p_value(x, y, test, n_resamples, random_state), "n": n,
        })
    out = pd.DataFrame(rows).set_index("metric")
    out.attrs["test"] = test
    return out


def _p_value(x, y, test, n_resamples, random_state) -> float:
    d = x - y
    if np.all(d == 0):
        return 1.0
    if len(d) < 2:
        raise ValueError("a paired test needs at least two common lists")
    if test == "t":
        return float(stats.ttest_rel(x, y).pvalue)
    if test == "wilcoxon":
        return float(stats.wilcoxon(x, y).pvalue)
    res = stats.permutation_test(
        (x, y), lambda u, v, axis: np.mean(u - v, axis=axis), permutation_type="samples",
        vectorized=True, n_resamples=n_resamples, alternative="two-sided", rng=random_state,
    )
    return float(res.pvalue)
