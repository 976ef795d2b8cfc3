"""Each numba entry point compiles to one specialisation, whatever types the caller passes, so
that the on-disk cache warmed by ``scripts/warmup.py`` is always hit; and a call compiles the
kernel variant of its own settings only (docs/speed.md, "First use")."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import gbrank
from gbrank.evaluation import _group
from gbrank.lambdas import LambdaObjective
from gbrank.lambdas import _kernels
from gbrank.lambdas._deltas import FIRST, PREFIX, PRODUCT
from gbrank.lambdas._settings import bounding, settings
from gbrank.metrics import METRICS
from gbrank.metrics import _kernels as metric_kernels


def test_gradients_compile_once_for_any_input_types():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 12)
    s = rng.normal(size=12)
    readonly = s.copy()
    readonly.flags.writeable = False
    calls = [
        (LambdaObjective("ndcg"), s, y, np.array([0, 6, 12])),
        (LambdaObjective("ndcg", relevance_threshold=1.0, sigma=2), s.astype(np.float32), y.astype(np.int32),
         np.array([0, 6, 12], dtype=np.int32)),
        (LambdaObjective("ap", relevance_threshold=2), readonly, y.astype(float), [0, 4, 12]),
    ]
    for objective, scores, labels, ptr in calls:
        objective.gradients(scores, labels, ptr)
    variants = _kernels.gradient_kernel.variants
    ndcg = (METRICS["ndcg"].code, PRODUCT, _kernels.BOUND_NONE, True, _kernels.RATIO_LISTS)
    ap = (METRICS["ap"].code, PREFIX, _kernels.BOUND_NONE, True, _kernels.RATIO_LISTS)
    assert ndcg in variants and ap in variants
    assert len(variants[ndcg].signatures) == 1 and len(variants[ap].signatures) == 1


def test_lists_that_need_an_exp_per_pair_compile_their_own_kernel_when_met():
    """A variant's lists whose e-ratios hold and those that need an exp per pair (scores
    spanning >= 700 / sigma, LightGBM's sigmoid table) run two kernels: a call compiles
    the second only when it meets such a list, and a list goes through exactly one."""
    rng = np.random.default_rng(3)
    y = rng.integers(0, 3, 30).astype(float)
    s = rng.normal(size=30)
    ptr = np.array([0, 10, 20, 30])
    code = METRICS["nrbp"].code
    key = (code, PRODUCT, _kernels.BOUND_NONE, True)
    ratio, exp = key + (_kernels.RATIO_LISTS,), key + (_kernels.EXP_LISTS,)
    variants = _kernels.gradient_kernel.variants
    for k in (ratio, exp):
        variants.pop(k, None)  # forget this process's (compiled or cached) kernels: rebuilt on demand
    obj = LambdaObjective("nrbp@0.7")
    g_plain, _ = obj.gradients(s, y, ptr)
    assert ratio in variants and exp not in variants
    wide = s.copy()
    wide[10:20] *= 1000.0  # the middle list spans > 700: the other kernel
    g, h = obj.gradients(wide, y, ptr)
    assert exp in variants
    np.testing.assert_array_equal(g[:10], g_plain[:10])  # the other lists are untouched
    np.testing.assert_array_equal(g[20:], g_plain[20:])
    assert np.abs(g[10:20]).max() > 0 and np.all(h[10:20] >= 0)  # (its values: tests/test_objective_calls.py)
    variants.pop(ratio)
    LambdaObjective("nrbp@0.7", sigmoid_table=True).gradients(s, y, ptr)
    assert ratio not in variants  # the sigmoid table: every list takes an exp per pair
    with pytest.raises(ValueError, match="lists must be RATIO_LISTS or EXP_LISTS"):
        _kernels.gradient_kernel(code, PRODUCT, _kernels.BOUND_NONE, True, _kernels.ALL_LISTS)


def test_settings_pick_their_gradient_variant():
    y = np.array([2.0, 0.0, 1.0, 0.0])
    ptr = np.array([0, 4])
    s = np.array([0.1, 0.4, 0.3, 0.2])
    code = METRICS["rr"].code
    LambdaObjective("rr").gradients(s, y, ptr)
    LambdaObjective("rr+minmax", hessian="xgboost").gradients(s, y, ptr)  # sigma 1: LightGBM's hessian, doubled
    LambdaObjective("rr", score_normalization=True).gradients(s, y, ptr)  # the kernel of any setting
    variants = _kernels.gradient_kernel.variants
    ratio = _kernels.RATIO_LISTS
    assert {(code, FIRST, _kernels.BOUND_NONE, True, ratio), (code, FIRST, _kernels.BOUND_LINEAR, True, ratio)} \
        <= set(variants)
    assert len(_kernels._all_gradients_general.signatures) == 1
    with pytest.raises(ValueError, match="other settings than its variant"):  # a variant refuses other settings
        kernel = variants[(code, FIRST, _kernels.BOUND_NONE, True, ratio)]
        cfg = settings(METRICS["ndcg"].code, 0, 0.0, 1.0, 0, False, 0.01, False, 0, False, 0, 1.0, 0)
        kernel(s, y, np.asarray(ptr, dtype=np.int64), 0, 1, cfg, bounding(np.ones(1), np.zeros((1, 2)), np.zeros(1),
               np.ones(1)), np.empty(4), np.empty(4), np.zeros(1, dtype=bool))


def test_one_metric_runs_its_own_evaluator_variant():
    y = [1.0, 0.0, 2.0, 0.0]
    s = [0.3, 0.2, 0.1, 0.4]
    one = gbrank.evaluate(y, s, [0, 0, 1, 1], ["err"])
    several = gbrank.evaluate(y, s, [0, 0, 1, 1], ["err", "ndcg@10"])
    np.testing.assert_array_equal(one.per_query["err"], several.per_query["err"])
    variants = metric_kernels.evaluate_kernel.variants
    assert (frozenset({METRICS["err"].code}),) in variants and (metric_kernels.KERNEL_CODES,) in variants


def test_run_checks_compile_once_for_any_code_width():
    # pandas picks int8 / int16 codes by the number of categories: the wrappers pass int64
    few = {"q1": {"d1": 1.0, "d2": 0.5}}
    many = {f"q{i}": {f"d{j}": float(j) for j in range(3)} for i in range(300)}
    for run in (few, many):
        gbrank.evaluate_run(run, pd.DataFrame({"qid": ["q1"], "docid": ["d1"], "relevance": [1]}), depth=2)
    assert len(_group.first_duplicate.signatures) == 1
    assert len(_group.group_order.signatures) == 1


def test_ideal_orders_sorted_by_the_stable_argsort_are_np_sorts():
    """nDCG's and nRBP's normalisers sort with the argsort the ranking compiles anyway: the
    same values in the same order as ``np.sort``, so the same sums, to the bit."""
    rng = np.random.default_rng(3)
    for n in (1, 2, 7, 40, 300):
        for _ in range(20):
            values = rng.integers(0, 5, n).astype(float) * rng.choice([1.0, 0.5, 3.0])
            expected = -np.sort(-values)
            got = metric_kernels.descending(values)
            assert np.array_equal(got, expected) and not np.signbit(got).any()
            total = 0.0
            for q in range(n):
                total += expected[q] * metric_kernels.discount(q)
            assert metric_kernels.ideal_dcg(values, n) == total
            rel = (values > 0).astype(float)
            plain = metric_kernels.rbp(-np.sort(-rel), np.arange(n + 1), 0.8)
            if plain > 0:
                assert metric_kernels.nrbp(rel, np.arange(n + 1), 0.8) == metric_kernels.rbp(rel, np.arange(n + 1),
                                                                                                0.8) / plain
