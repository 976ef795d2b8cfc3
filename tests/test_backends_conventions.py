"""The boosting libraries' calling conventions live in gbrank.backends only (issue 27): the
objectives compute gradients from arrays; a gbrank objective passed straight to a library
delegates its ``__call__`` (and CatBoost's ``calc_ders_range``) to
``gbrank.backends.call_objective``, whose conventions are the explicit adapters'."""

import ast
import pathlib

import numpy as np
import pytest

from gbrank.backends import LGBMRankerObjective, LightGBMObjective, XGBoostObjective, call_objective
from gbrank.lambdas import LambdaObjective, ListwiseObjective, UnbiasedLambdaObjective

PKG = pathlib.Path(__file__).resolve().parents[1] / "gbrank"
# what a library hands a callable objective or metric: a lightgbm.Dataset or an xgboost.DMatrix
LIBRARY_DATA_METHODS = {"get_group", "get_uint_info", "get_label", "get_weight"}
# the refusals, each written once
ERROR_TEXTS = ("which is how a scikit-learn wrapper for regression calls",
               "CatBoost passes a Python objective no query groups")


def test_only_backends_reads_a_library_data_object():
    found = []
    for path in PKG.rglob("*.py"):
        if path.relative_to(PKG).parts[0] == "backends":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and node.attr in LIBRARY_DATA_METHODS:
                found.append(f"{path.relative_to(PKG)}:{node.lineno} .{node.attr}")
            elif isinstance(node, ast.Constant) and node.value in LIBRARY_DATA_METHODS:
                found.append(f"{path.relative_to(PKG)}:{node.lineno} {node.value!r}")
    assert found == [], "a library's Dataset/DMatrix is read outside gbrank.backends:\n" + "\n".join(found)


@pytest.mark.parametrize("text", ERROR_TEXTS)
def test_each_refusal_is_written_once_in_backends(text):
    where = [str(p.relative_to(PKG)) for p in PKG.rglob("*.py") if text in p.read_text()]
    assert len(where) == 1 and where[0].startswith("backends/"), where


class _Dataset:
    """What lightgbm.train hands a callable objective (the methods it calls)."""

    def __init__(self, y, sizes, w=None):
        self.y, self.sizes, self.w = y, sizes, w

    def get_group(self):
        return self.sizes

    def get_label(self):
        return self.y

    def get_weight(self):
        return self.w


class _DMatrix:
    """What xgboost.train hands ``obj`` (the methods it calls)."""

    def __init__(self, y, sizes, w=None):
        self.y, self.ptr, self.w = y, np.concatenate(([0], np.cumsum(sizes))).astype(np.uint32), w

    def get_uint_info(self, field):
        assert field == "group_ptr"
        return self.ptr

    def get_label(self):
        return self.y

    def get_weight(self):
        return np.zeros(0) if self.w is None else self.w


SIZES = np.array([4, 7, 3])
OBJECTIVES = [LambdaObjective("nrbp@0.9", truncation=5), ListwiseObjective("listwise_ndcg"),
              UnbiasedLambdaObjective(positions=np.concatenate([np.arange(1, s + 1) for s in SIZES]), learn=False)]


@pytest.mark.parametrize("obj", OBJECTIVES, ids=lambda o: type(o).__name__)
def test_the_objective_called_directly_is_the_adapters(obj):
    rng = np.random.default_rng(0)
    sizes = SIZES
    y = rng.integers(0, 3, sizes.sum()).astype(float)
    preds = rng.normal(size=sizes.sum())
    row_w, query_w = rng.random(sizes.sum()) + 0.5, np.array([1.0, 2.0, 0.5])
    pairs = [(obj(preds, _Dataset(y, sizes, row_w)), LightGBMObjective(obj)(preds, _Dataset(y, sizes, row_w))),
             (obj(y, preds, row_w, sizes), LGBMRankerObjective(obj)(y, preds, row_w, sizes)),
             (obj(preds, _DMatrix(y, sizes, query_w)), XGBoostObjective(obj)(preds, _DMatrix(y, sizes, query_w))),
             (call_objective(obj, preds, _Dataset(y, sizes)), LightGBMObjective(obj)(preds, _Dataset(y, sizes)))]
    for (g, h), (g_ref, h_ref) in pairs:
        np.testing.assert_array_equal(g, g_ref)
        np.testing.assert_array_equal(h, h_ref)
    assert obj(preds, _DMatrix(y, sizes))[0].shape == (sizes.sum(), 1)


@pytest.mark.parametrize("obj", OBJECTIVES, ids=lambda o: type(o).__name__)
def test_the_objectives_refuse_through_backends(obj):
    with pytest.raises(TypeError, match="without query groups.*LGBMRanker.*xgboost.train"):
        obj(np.zeros(3), np.zeros(3))
    with pytest.raises(TypeError, match=f"CatBoost passes a Python objective no query groups, so a gbrank "
                                        f"{type(obj).__name__} cannot train"):
        obj.calc_ders_range([0.0], [1.0], None)
