"""Each numba entry point compiles to one specialisation, whatever types the caller passes, so
that the on-disk cache warmed by ``scripts/warmup.py`` is always hit."""

from __future__ import annotations

import numpy as np
import pandas as pd

import gbrank
from gbrank.evaluation import _group
from gbrank.lambdas import LambdaObjective
from gbrank.lambdas import _kernel


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
    assert len(_kernel._all_gradients.signatures) == 1


def test_run_checks_compile_once_for_any_code_width():
    # pandas picks int8 / int16 codes by the number of categories: the wrappers pass int64
    few = {"q1": {"d1": 1.0, "d2": 0.5}}
    many = {f"q{i}": {f"d{j}": float(j) for j in range(3)} for i in range(300)}
    for run in (few, many):
        gbrank.evaluate_run(run, pd.DataFrame({"qid": ["q1"], "docid": ["d1"], "relevance": [1]}), depth=2)
    assert len(_group.first_duplicate.signatures) == 1
    assert len(_group.group_order.signatures) == 1
