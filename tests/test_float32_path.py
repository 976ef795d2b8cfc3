"""No copy the user did not ask for: float32 features stay float32 and grouped rows stay in
place from ``GBRanker.fit`` / ``predict`` to LightGBM and XGBoost; the finiteness check
runs by blocks of rows; the memory a fit allocates in Python is far below a copy of X."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from gbrank import _validation
from gbrank._validation import check_feature_matrix, first_infinite
from gbrank.datasets import make_letor
from gbrank.estimators import GBRanker


def _float32_set(n_queries=60, n_features=12, seed=0):
    X, y, qid = make_letor(n_queries=n_queries, docs_per_query=(10, 30), n_features=n_features, random_state=seed)
    return X.astype(np.float32), y, qid


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("order", ["C", "F"])
def test_float_features_are_returned_as_they_are(dtype, order):
    X = np.asarray(np.random.default_rng(0).normal(size=(50, 7)), dtype=dtype, order=order)
    out = check_feature_matrix(X)
    assert out is X or (out.dtype == dtype and np.shares_memory(out, X))
    assert out.dtype == dtype


def test_other_numbers_become_float64_and_a_strided_view_a_contiguous_copy():
    ints = np.arange(12).reshape(4, 3)
    assert check_feature_matrix(ints).dtype == np.float64
    assert check_feature_matrix(ints.astype(np.float16)).dtype == np.float64
    view = np.zeros((10, 6), dtype=np.float32)[::2, ::2]
    out = check_feature_matrix(view)
    assert out.dtype == np.float32 and out.flags.c_contiguous


def test_float32_dataframe_stays_float32_and_a_mixed_one_is_float64():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"a": np.arange(4, dtype=np.float32), "b": np.ones(4, dtype=np.float32)})
    assert check_feature_matrix(frame).dtype == np.float32
    frame["c"] = np.arange(4)
    assert check_feature_matrix(frame).dtype == np.float64


def test_infinite_value_found_in_any_block_with_its_row_column_and_count(monkeypatch):
    monkeypatch.setattr(_validation, "_CHECK_BLOCK_VALUES", 35)  # blocks of 7 rows
    X = np.zeros((40, 5), dtype=np.float32)
    X[23, 4] = np.inf
    X[31, 0] = -np.inf
    X[2, 2] = np.nan  # a missing value, kept
    assert first_infinite(X) == (23, 4, 2)
    with pytest.raises(ValueError, match=r"2 infinite value\(s\) \(first at row 23, column 4: inf\)"):
        check_feature_matrix(X)
    X[23, 4] = X[31, 0] = 0.0
    assert check_feature_matrix(X) is X


def _spy(monkeypatch, module, name, seen):
    """Wrap the library's own constructor ``module.name`` to record the data it is given."""
    real = getattr(module, name)

    class Spy(real):
        def __init__(self, data, *args, **kwargs):
            seen.append(data)
            super().__init__(data, *args, **kwargs)

    monkeypatch.setattr(module, name, Spy)


@pytest.mark.parametrize("backend", ["lightgbm", "xgboost"])
def test_the_library_gets_the_users_float32_rows_themselves(backend, monkeypatch):
    lib = pytest.importorskip(backend)
    X, y, qid = _float32_set()
    seen = []
    _spy(monkeypatch, lib, "Dataset" if backend == "lightgbm" else "QuantileDMatrix", seen)
    GBRanker("ndcg", backend=backend, n_estimators=3, backend_params={"min_data_in_leaf": 1}
             if backend == "lightgbm" else None).fit(X, y, qid=qid)
    assert len(seen) == 1
    assert seen[0] is X  # no float64 widening, no reordered copy of grouped rows


@pytest.mark.parametrize("backend", ["lightgbm", "xgboost"])
def test_float32_and_its_float64_widening_train_the_same_model(backend):
    pytest.importorskip(backend)
    X, y, qid = _float32_set(seed=1)
    a = GBRanker("ndcg", backend=backend, n_estimators=5, random_state=0).fit(X, y, qid=qid)
    b = GBRanker("ndcg", backend=backend, n_estimators=5, random_state=0).fit(X.astype(np.float64), y, qid=qid)
    np.testing.assert_array_equal(a.predict(X), b.predict(X.astype(np.float64)))


@pytest.mark.parametrize("backend", ["lightgbm", "xgboost"])
def test_fit_and_predict_allocate_far_less_than_a_copy_of_x(backend):
    """tracemalloc sees numpy's allocations: a float64 copy of a float32 X would be twice
    its size, a float32 copy its size, a full-size boolean mask a quarter of it; what a fit
    must allocate (labels, query ids, gradients: a few float64 per row) is about 8 % of
    an X of 200 float32 features."""
    pytest.importorskip(backend)
    X, y, qid = make_letor(n_queries=300, docs_per_query=(60, 120), n_features=200, random_state=2)
    X = X.astype(np.float32)
    model = GBRanker("ndcg", backend=backend, n_estimators=2)
    model.fit(X[:200], y[:200], qid=qid[:200])  # kernels and libraries loaded outside the measurement
    tracemalloc.start()
    try:
        model.fit(X, y, qid=qid)
        fit_peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.reset_peak()
        model.predict(X)
        predict_peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert fit_peak < 0.2 * X.nbytes, (fit_peak, X.nbytes)
    assert predict_peak < 0.2 * X.nbytes, (predict_peak, X.nbytes)
