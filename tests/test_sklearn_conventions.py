"""scikit-learn's own estimator checks on GBRanker, NetRanker and MFRanker, with small fast
parameters.  A check that cannot pass is listed with the reason, in one dict per estimator:
most call ``fit(X, y)`` with plain regression data, while a ranker needs the query of each
row (``qid``) or, for MFRanker, (user id, item id) pairs."""

import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from gbrank.estimators import GBRanker

torch = pytest.importorskip("torch")
from gbrank.torch import MFRanker, NetRanker  # noqa: E402

NEEDS_QID = "ranking needs the query of each row: fit(X, y, qid=...) (scikit-learn's checks call fit(X, y))"
NEEDS_PAIRS = "X must be (user id, item id) pairs: an (n, 2) interaction table, not a feature matrix"

# checks that fit on scikit-learn's generated data, which has no qid
_FIT_CHECKS = [
    "check_fit_score_takes_y", "check_estimators_overwrite_params", "check_dont_overwrite_parameters",
    "check_estimators_fit_returns_self", "check_readonly_memmap_input", "check_n_features_in_after_fitting",
    "check_estimators_dtypes", "check_complex_data", "check_dtype_object", "check_pipeline_consistency",
    "check_estimators_pickle", "check_f_contiguous_array_estimator", "check_methods_sample_order_invariance",
    "check_methods_subset_invariance", "check_fit2d_1sample", "check_fit2d_1feature", "check_dict_unchanged",
    "check_fit_idempotent", "check_fit_check_is_fitted", "check_n_features_in", "check_fit1d",
    "check_fit2d_predict1d", "check_positive_only_tag_during_fit", "check_estimators_empty_data_messages",
    "check_estimators_nan_inf",
]
_SAMPLE_WEIGHT_CHECKS = [
    "check_sample_weights_pandas_series", "check_sample_weights_not_an_array", "check_sample_weights_list",
    "check_all_zero_sample_weights_error", "check_sample_weights_shape", "check_sample_weights_not_overwritten",
    "check_sample_weight_equivalence_on_dense_data", "check_sample_weight_equivalence_on_sparse_data",
]
_SPARSE_CHECKS = ["check_estimator_sparse_tag", "check_estimator_sparse_array", "check_estimator_sparse_matrix"]

_NOT_ON_PAIRS = {"check_fit1d", "check_estimators_overwrite_params", "check_estimators_fit_returns_self",
                 "check_readonly_memmap_input", "check_fit_check_is_fitted"}  # data of two columns: they pass

EXPECTED_FAILURES = {
    "GBRanker": {name: NEEDS_QID for name in _FIT_CHECKS + _SAMPLE_WEIGHT_CHECKS + _SPARSE_CHECKS
                 if name not in ("check_fit1d", "check_complex_data")},  # 1-d and complex X are refused
    # before qid is looked at
    "NetRanker": {name: NEEDS_QID for name in _FIT_CHECKS + _SPARSE_CHECKS + ["check_requires_y_none"]},
    "MFRanker": {
        **{name: NEEDS_PAIRS for name in _FIT_CHECKS + _SPARSE_CHECKS if name not in _NOT_ON_PAIRS},
        # MFRanker takes ids of any kind: a NaN or inf id is an id like any other
        "check_estimators_nan_inf": "X holds ids, not features: NaN and inf are ids like any other",
    },
}

ESTIMATORS = [
    GBRanker(n_estimators=3, num_leaves=4, n_jobs=1, random_state=0),
    NetRanker(hidden=4, epochs=2, batch_size=8, validation_size=0.0, device="cpu", verbose=0, random_state=0),
    MFRanker(n_factors=4, epochs=2, validation_size=0.0, device="cpu", verbose=0, random_state=0),
]


def _expected_failed_checks(estimator):
    return EXPECTED_FAILURES[type(estimator).__name__]


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=_expected_failed_checks)
def test_sklearn_conventions(estimator, check):
    check(estimator)
