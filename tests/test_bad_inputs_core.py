"""Catalogue of bad inputs to the loaders, the evaluator, the objectives, the bounds, the
backend adapters and the CLI (issue "Nothing silent, nothing obscure"; docs/bad-inputs.md).

Each case is (id, call, expected exception type, regex of its message) or, for a documented
result, (id, call, None, check of the result).  ``call`` gets a temporary folder for files.
"""

from __future__ import annotations

import gzip
import re

import numpy as np
import pandas as pd
import pytest

import gbrank
from gbrank import bounds, compare, evaluate, evaluate_run, swap_deltas
from gbrank.datasets import load_citeulike, load_letor, load_letor_folds, load_movielens, make_letor
from gbrank.lambdas import LambdaObjective

# --------------------------------------------------------------------------- helpers

LETOR_OK = "2 qid:1 1:0.5 2:1\n0 qid:1 1:0.1 2:0\n1 qid:2 1:0.3 2:0.2\n"
ML_HEADER = "userId,movieId,rating,timestamp\n"
RUN_OK = "1 Q0 d1 1 2.0 r\n1 Q0 d2 2 1.0 r\n"
QRELS_OK = "1 0 d1 1\n1 0 d2 0\n"


def _write(tmp, name, content):
    path = tmp / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return path


def letor(text, **kw):
    return lambda tmp: load_letor(_write(tmp, "f.txt", text), **kw)


def letor_bytes(data, name="f.txt"):
    return lambda tmp: load_letor(_write(tmp, name, data))


def truncated_gz(text):
    data = gzip.compress((text * 200).encode())
    return data[: len(data) // 2]


def ratings(text, name="ratings.csv"):
    return lambda tmp: load_movielens(_write(tmp, name, text))


def users_dat(data, name="users.dat"):
    return lambda tmp: load_citeulike(_write(tmp, name, data))


def run_file(run, qrels=QRELS_OK, **kw):
    return lambda tmp: evaluate_run(_write(tmp, "r.run", run), _write(tmp, "q.txt", qrels), **kw)


def fold_folder(train, test=LETOR_OK):
    def call(tmp):
        _write(tmp, "train.txt", train)
        _write(tmp, "test.txt", test)
        return load_letor_folds(tmp)
    return call


Y, S, Q = [2, 0, 1, 0], [0.9, 0.8, 0.1, 0.4], [7, 7, 7, 7]


def ev(**kw):
    args = {"y_true": Y, "y_score": S, "qid": Q, **kw}
    return lambda tmp: evaluate(**args)


def results(n=10, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, 4 * n)
    q = np.repeat(np.arange(n), 4)
    return evaluate(y, rng.random(4 * n), q), evaluate(y, rng.random(4 * n), q)


def cmp(**kw):
    def call(tmp):
        a, b = results()
        return compare({"a": a, "b": b}, **kw)
    return call


def obj(**kw):
    return lambda tmp: LambdaObjective(**kw)


def grad(scores=(1.0, 2.0, 3.0), labels=(0, 1, 0), ptr=(0, 3), weights=None, **kw):
    return lambda tmp: LambdaObjective(**kw).gradients(list(scores), list(labels), list(ptr), weights)


def bnd(fn, *args, **kw):
    return lambda tmp: getattr(bounds, fn)(*args, **kw)


def lgb_dataset(group=(3, 3)):
    import lightgbm as lgb
    X = np.arange(12.0).reshape(6, 2)
    return lgb.Dataset(X, np.array([0, 1, 2, 0, 1, 0.0]), group=None if group is None else list(group)).construct()


def xgb_dmatrix(group=(3, 3), weights=None, labels=(0, 1, 2, 0, 1, 0)):
    import xgboost as xgb
    d = xgb.DMatrix(np.arange(12.0).reshape(6, 2), label=list(labels))
    if group is not None:
        d.set_group(list(group))
    if weights is not None:
        d.set_weight(list(weights))
    return d


def backend(name, *call_args, wrap=None):
    def call(tmp):
        from gbrank import backends
        adapter = getattr(backends, name)(LambdaObjective() if wrap is None else wrap)
        args = [a() if callable(a) else a for a in call_args]
        return adapter(*args)
    return call


def metric_cb(name, *ctor, **kw):
    def call(tmp):
        from gbrank import backends
        return getattr(backends, name)(*ctor, **kw)
    return call


class CliExit(Exception):
    """What the CLI did: its exit status and standard error."""


def cli(*argv, files=None):
    def call(tmp):
        import contextlib
        import io

        from gbrank.cli import main
        for name, content in (files or {}).items():
            _write(tmp, name, content)
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            try:
                status = main(list(argv), out=io.StringIO())
            except SystemExit as exc:
                status = exc.code
        lines = [ln for ln in err.getvalue().splitlines() if ln.strip()]
        raise CliExit(f"status={status} | {lines[-1] if lines else ''}")
    return call


def cli_error(pattern):
    """A CLI case: exit status 2, and the last line of standard error names the problem."""
    return CliExit, r"status=2 \| .*" + pattern


# --------------------------------------------------------------------------- the catalogue

CASES = [
    # ---- load_letor: labels (refused with file and line) ------------------------------
    ("letor-nan-label", letor("nan qid:1 1:1\n0 qid:1 1:2\n"), ValueError, r"f\.txt, line 1 has the label nan.*finite and non-negative"),
    ("letor-inf-label", letor("0 qid:1 1:1\ninf qid:1 1:2\n"), ValueError, r"line 2 has the label inf"),
    ("letor-negative-label", letor("-1 qid:1 1:1\n"), ValueError, r"line 1 has the label -1"),
    ("letor-fractional-label-kept", letor("0.5 qid:1 1:1\n0 qid:1 1:2\n"), None,
     lambda r: r.y.tolist() == [0.5, 0.0]),
    ("letor-label-31-kept", letor("31 qid:1 1:1\n0 qid:1 1:2\n"), None, lambda r: r.y.max() == 31),
    ("letor-label-31-refused-by-objective",
     lambda tmp: LambdaObjective().gradients([0.0, 1.0], letor("31 qid:1 1:1\n0 qid:1 1:2\n")(tmp).y, [0, 2]),
     ValueError, r"over 30 overflow the exponential gain.*gain='linear'"),
    ("letor-fractional-label-refused-by-evaluate",
     lambda tmp: evaluate(letor("0.5 qid:1 1:1\n0 qid:1 1:2\n")(tmp).y, [1.0, 0.0], [1, 1]),
     ValueError, r"must be integers here.*gain='linear'"),
    ("letor-fractional-label-linear-gain-ok",
     lambda tmp: evaluate(letor("0.5 qid:1 1:1\n0 qid:1 1:2\n")(tmp).y, [1.0, 0.0], [1, 1], ["ndcg"], gain="linear"),
     None, lambda r: r.per_query["ndcg"].iloc[0] == 1.0),
    # ---- load_letor: features --------------------------------------------------------
    ("letor-nan-feature-missing", letor("1 qid:1 1:nan 2:1\n0 qid:1 1:2\n"), None,
     lambda r: np.isnan(r.X[0, 0]) and r.X[1, 0] == 2),
    ("letor-inf-feature", letor("1 qid:1 1:1\n0 qid:1 2:inf\n"), ValueError,
     r"line 2 has the feature value inf for feature 2.*NaN for a missing value"),
    ("letor-minus-inf-feature", letor("1 qid:1 1:-inf\n"), ValueError, r"feature value -inf"),
    ("letor-huge-index-dense", letor("1 qid:1 10000000:1\n0 qid:1 1:2\n"), ValueError,
     r"line 1 uses feature index 10000000.*only 2 distinct.*dense=False"),
    ("letor-huge-index-sparse", letor("1 qid:1 10000000:1\n0 qid:1 1:2\n", dense=False), None,
     lambda r: r.X.shape == (2, 10_000_000) and r.X.nnz == 2),
    ("letor-huge-index-folds", fold_folder("1 qid:1 10000000:1\n0 qid:1 1:2\n"), ValueError,
     r"train\.txt, line 1 uses feature index 10000000"),
    ("letor-zero-index", letor("1 qid:1 0:1\n"), ValueError, r"line 1: the feature index in '0:1' is below 1.*1-based"),
    ("letor-negative-index", letor("1 qid:1 -3:1\n"), ValueError, r"below 1"),
    ("letor-index-over-n-features", letor(LETOR_OK, n_features=1), ValueError, r"feature index 2, more than n_features=1"),
    # ---- load_letor: malformed text -----------------------------------------------------
    ("letor-garbage-token", letor("1 qid:1 1:1 garbage\n"), ValueError,
     r"f\.txt is not a valid SVMlight/LETOR file: line 1: the field 'garbage' is not '<index>:<value>'"),
    ("letor-garbage-label", letor(LETOR_OK + "foo qid:1 1:1\n"), ValueError, r"line 4: the label 'foo' is not a number"),
    ("letor-bad-value", letor("1 qid:1 1:x\n"), ValueError, r"line 1: the feature value in '1:x' is not a number"),
    ("letor-bad-qid", letor("1 qid:x 1:1\n"), ValueError, r"line 1: the query id in 'qid:x' is not an integer"),
    ("letor-bad-index", letor("1 qid:1 a:1\n"), ValueError, r"the feature index in 'a:1' is not an integer"),
    ("letor-comment-line-numbers", letor("# header\n1 qid:1 1:1\n\nnan qid:1 1:1\n"), ValueError, r"line 4 has the label nan"),
    ("letor-partial-qid", letor("1 qid:1 1:1\n0 1:2\n"), ValueError, r"only 1 carry a 'qid:' field"),
    ("letor-no-qid-no-companion", letor("1 1:1\n"), ValueError, r"no 'qid:' fields and no companion file"),
    ("letor-interleaved-queries", letor("1 qid:1 1:1\n1 qid:2 1:1\n1 qid:1 1:1\n"), ValueError, r"query 1 .* not contiguous"),
    ("letor-empty-file", letor(""), ValueError, r"holds no rows"),
    ("letor-binary", letor_bytes(b"\x00\x01\xff\xfe" * 10), ValueError, r"f\.txt is binary.*NUL byte on line 1"),
    ("letor-truncated-gzip", letor_bytes(truncated_gz(LETOR_OK), "f.txt.gz"), ValueError,
     r"f\.txt\.gz is a truncated or corrupt gzip file"),
    ("letor-missing-file", lambda tmp: load_letor(tmp / "nope.txt"), FileNotFoundError, r"no LETOR file at .*nope\.txt"),
    ("letor-folder", lambda tmp: load_letor(tmp), IsADirectoryError, r"is a folder; give the LETOR file"),
    ("letor-n-features-zero", letor(LETOR_OK, n_features=0), ValueError, r"n_features must be a positive integer"),
    ("letor-n-features-str", letor(LETOR_OK, n_features="3"), ValueError, r"n_features must be a positive integer"),
    ("letor-dense-str", letor(LETOR_OK, dense="no"), TypeError, r"dense must be True .* or False"),
    ("letor-companion-bad", lambda tmp: (_write(tmp, "g.txt.query", "2\nx\n"), load_letor(_write(tmp, "g.txt", "1 1:1\n0 1:1\n"))),
     ValueError, r"g\.txt\.query must hold one integer group size per line"),
    ("letor-companion-sum", lambda tmp: (_write(tmp, "g.txt.query", "3\n"), load_letor(_write(tmp, "g.txt", "1 1:1\n0 1:1\n"))),
     ValueError, r"lists 1 query with 3 rows in all, but .* has 2 rows"),
    # ---- load_letor_folds -----------------------------------------------------------------
    ("folds-empty-folder", lambda tmp: load_letor_folds(tmp), FileNotFoundError, r"holds no LETOR data"),
    ("folds-unknown-name", lambda tmp: load_letor_folds("no-such-dataset"), FileNotFoundError,
     r"neither an existing file or folder nor a known dataset name"),
    ("folds-on-a-file", lambda tmp: load_letor_folds(_write(tmp, "f.txt", LETOR_OK)), NotADirectoryError, r"is a file"),
    ("folds-with-single-pair", lambda tmp: (fold_folder(LETOR_OK)(tmp), load_letor_folds(tmp, folds=1)), ValueError,
     r"folds=1 selects Fold<k> sub-folders"),
    ("folds-bad-train-line", fold_folder("1 qid:1 1:1\n1 qid:1 x\n"), ValueError, r"train\.txt is not a valid .*line 2"),
    ("folds-unknown-fold", lambda tmp: ((tmp / "Fold1").mkdir(), fold_folder(LETOR_OK)(tmp / "Fold1"),
                                        load_letor_folds(tmp, folds=[2])), ValueError, r"fold 2 is not in"),
    # ---- make_letor -------------------------------------------------------------------------
    ("make-letor-zero-queries", lambda tmp: make_letor(0), ValueError, r"n_queries must be a positive integer"),
    ("make-letor-bad-range", lambda tmp: make_letor(2, docs_per_query=(5, 2)), ValueError, r"min <= max"),
    ("make-letor-bad-relevance", lambda tmp: make_letor(2, relevance="x"), ValueError, r"relevance must be one of"),
    ("make-letor-bad-seed", lambda tmp: make_letor(2, random_state=-1), ValueError, r"random_state must be"),
    ("make-letor-float-features", lambda tmp: make_letor(2, n_features=2.5), ValueError, r"n_features must be a positive integer"),
    ("make-letor-max-label-40", lambda tmp: make_letor(3, max_label=40, random_state=0), None,
     lambda r: r[1].max() <= 40 and r[1].min() == 0),
    ("make-letor-nan-relevance", lambda tmp: make_letor(2, relevance=lambda X, rng: np.full(len(X), np.nan)),
     ValueError, r"NaN or infinite scores"),
    # ---- load_movielens -----------------------------------------------------------------------
    ("ml-empty-rating", ratings(ML_HEADER + "1,3,4,5\n1,2,,3\n"), ValueError, r"ratings\.csv, line 3: rating \(an empty field\)"),
    ("ml-negative-rating", ratings(ML_HEADER + "1,2,-1,3\n"), ValueError, r"line 2: rating '-1' is not a finite, non-negative"),
    ("ml-nan-rating", ratings(ML_HEADER + "1,2,nan,3\n"), ValueError, r"rating 'nan'"),
    ("ml-inf-rating", ratings(ML_HEADER + "1,2,inf,3\n"), ValueError, r"rating 'inf'"),
    ("ml-text-rating", ratings(ML_HEADER + "1,2,x,3\n"), ValueError, r"rating 'x'"),
    ("ml-duplicate-pair", ratings(ML_HEADER + "1,2,4,3\n2,2,4,3\n1,2,5,4\n"), ValueError,
     r"rates movie 2 twice for user 1 \(lines 2 and 4\)"),
    ("ml-five-fields", ratings(ML_HEADER + "1,3,5,4\n1,2,4,3,9\n"), ValueError, r"line 3 has 5 fields, but the header has 4"),
    ("ml-three-fields", ratings(ML_HEADER + "1,2,4\n"), ValueError, r"line 2 has 3 fields"),
    ("ml-bad-id", ratings(ML_HEADER + "1,abc,4,3\n"), ValueError, r"line 2: movieId 'abc' is not a non-negative integer id"),
    ("ml-float-id", ratings(ML_HEADER + "1.5,2,4,3\n"), ValueError, r"userId '1.5'"),
    ("ml-negative-id", ratings(ML_HEADER + "-1,2,4,3\n"), ValueError, r"userId '-1'"),
    ("ml-bad-timestamp", ratings(ML_HEADER + "1,2,4,x\n"), ValueError, r"timestamp 'x' is not a non-negative integer"),
    ("ml-missing-column", ratings("userId,movieId,rating\n1,2,3\n"), ValueError, r"lacks the column \['timestamp'\]"),
    ("ml-empty-file", ratings(""), ValueError, r"ratings\.csv is empty"),
    ("ml-header-only", ratings(ML_HEADER), ValueError, r"holds a header but no ratings"),
    ("ml-binary", ratings(b"\x00\x01\xff\xfe" * 10), ValueError, r"is binary.*NUL byte on line 1"),
    ("ml-not-utf8", ratings(ML_HEADER.encode() + b"1,2,\xff,3\n"), ValueError, r"not utf-8 text \(byte 0xff on line 2\)"),
    ("ml-truncated-gzip", ratings(truncated_gz(ML_HEADER + "1,2,4,3\n"), "ratings.csv.gz"), ValueError,
     r"ratings\.csv\.gz is a truncated or corrupt gzip"),
    ("ml-folder-without-file", lambda tmp: load_movielens(tmp), FileNotFoundError, r"holds none of ratings\.csv"),
    ("ml-good-file", ratings(ML_HEADER + "1,2,4.5,3\n2,2,0.5,4\n"), None,
     lambda r: r["rating"].tolist() == [4.5, 0.5] and r["user"].dtype == np.int64),
    # ---- load_citeulike -------------------------------------------------------------------------
    ("cul-bad-token", users_dat("2 1 x\n"), ValueError, r"line 1 of .*users\.dat \(user 0\) is not a list of integers"),
    ("cul-count-mismatch", users_dat("1 1\n3 1 2\n"), ValueError, r"line 2 .* announces 3 items but lists 2"),
    ("cul-negative-item", users_dat("1 -4\n"), ValueError, r"negative item id -4"),
    ("cul-empty-line", users_dat("1 1\n\n"), ValueError, r"line 2 .* is empty"),
    ("cul-empty-file", users_dat(""), ValueError, r"users\.dat is empty"),
    ("cul-binary", users_dat(b"\x00\x01\xff" * 10), ValueError, r"is binary"),
    ("cul-not-ascii", users_dat(b"1 1\n1 \xe9\n"), ValueError, r"not ascii text \(byte 0xe9 on line 2\)"),
    ("cul-truncated-gzip", users_dat(truncated_gz("2 1 2\n"), "users.dat.gz"), ValueError, r"users\.dat\.gz is a truncated"),
    # ---- evaluate ----------------------------------------------------------------------------------
    ("ev-ndcg-at-nothing", ev(metrics=["ndcg@"]), ValueError, r"'ndcg@' ends with '@' but gives no parameter"),
    ("ev-unknown-metric", ev(metrics=["foo"]), ValueError, r"unknown metric 'foo'; known metrics: ap"),
    ("ev-cutoff-zero", ev(metrics=["ndcg@0"]), ValueError, r"cutoff of 'ndcg@0' must be a positive integer"),
    ("ev-cutoff-fraction", ev(metrics=["ndcg@1.5"]), ValueError, r"must be a positive integer"),
    ("ev-p-out-of-range", ev(metrics=["nrbp@1.5"]), ValueError, r"persistence .* strictly between 0 and 1"),
    ("ev-metrics-empty", ev(metrics=[]), ValueError, r"no metric was requested"),
    ("ev-metrics-int", ev(metrics=5), TypeError, r"metrics must be a metric name or a list"),
    ("ev-metric-twice", ev(metrics=["ap", "map"]), ValueError, r"requested twice"),
    ("ev-empty-input", lambda tmp: evaluate([], [], []), ValueError, r"no rows were given"),
    ("ev-length-mismatch", ev(y_score=S[:3]), ValueError, r"lengths differ: y_true=4, y_score=3, qid=4"),
    ("ev-nan-score", ev(y_score=[np.nan, 1, 2, 3]), ValueError, r"y_score contains 1 NaN .* row 0"),
    ("ev-inf-label", ev(y_true=[np.inf, 1, 2, 3]), ValueError, r"y_true contains 1 NaN or infinite"),
    ("ev-negative-label", ev(y_true=[-1, 1, 2, 3]), ValueError, r"non-negative relevance grades, found -1.0 at row 0"),
    ("ev-fractional-label", ev(y_true=[0.5, 1, 2, 3]), ValueError, r"must be integers here .*gain='linear'"),
    ("ev-label-31", ev(y_true=[31, 1, 2, 3]), ValueError, r"over 30 overflow"),
    ("ev-string-labels", ev(y_true=["1", "0", "2", "0"]), TypeError, r"y_true must be numeric"),
    ("ev-2d-labels", ev(y_true=np.ones((2, 2)), y_score=np.ones((2, 2)), qid=np.ones((2, 2))), ValueError, r"one-dimensional"),
    ("ev-scalar", lambda tmp: evaluate(1, 1, 1), TypeError, r"y_true must be an array-like with one entry per row"),
    ("ev-qid-none", ev(qid=[None, 1, 1, 1]), TypeError, r"qid values must be comparable"),
    ("ev-qid-nan", ev(qid=[np.nan, 1, 1, 1]), ValueError, r"qid contains NaN"),
    ("ev-gain-name", ev(gain="log"), ValueError, r"gain must be one of \['exp', 'linear'\]"),
    ("ev-gain-map-missing-label", ev(gain={0: 0, 1: 1}), ValueError, r"label 2 \(row 0\), which the gain mapping does not cover"),
    ("ev-gain-map-negative", ev(gain={0: 0, 1: -1, 2: 3}), ValueError, r"finite, non-negative gains"),
    ("ev-gain-map-text", ev(gain={"a": 0}), ValueError, r"numeric labels to numeric gains"),
    ("ev-empty-policy", ev(empty="nan"), ValueError, r"empty must be one of"),
    ("ev-ties", ev(ties="random"), ValueError, r"ties must be one of"),
    ("ev-ap-divisor", ev(ap_divisor="k"), ValueError, r"ap_divisor must be one of"),
    ("ev-threshold-zero", ev(relevance_threshold=0), ValueError, r"relevance_threshold must be positive and finite"),
    ("ev-threshold-text", ev(relevance_threshold="a"), ValueError, r"relevance_threshold must be a number"),
    ("ev-max-grade-below-labels", ev(metrics=["err"], max_grade=1), ValueError, r"max_grade must be .* at least the largest label \(2\)"),
    ("ev-max-grade-nan", ev(metrics=["err"], max_grade=np.nan), ValueError, r"max_grade must be a positive finite"),
    ("ev-max-grade-text", ev(metrics=["err"], max_grade="x"), TypeError, r"max_grade must be a number"),
    ("ev-summary-confidence-one", lambda tmp: evaluate(Y, S, Q).summary(1), ValueError, r"confidence must lie in \(0, 1\)"),
    ("ev-summary-confidence-text", lambda tmp: evaluate(Y, S, Q).summary("x"), TypeError, r"confidence must be a number"),
    ("ev-no-relevant-documented", ev(y_true=[0, 0, 0, 0], metrics=["ap"]), None,
     lambda r: r.n_empty == 1 and r.per_query["ap"].iloc[0] == 0.0),
    ("ev-inputs-not-mutated", lambda tmp: (lambda y: (evaluate(y, S, Q), y.tolist()))(np.array(Y)), None,
     lambda r: r[1] == Y),
    # ---- evaluate_run and its readers -----------------------------------------------------------
    ("run-binary", run_file(b"\x00\x01\xff" * 30), ValueError, r"run file .*r\.run' is binary.*NUL byte on line 1"),
    ("run-not-utf8", run_file(bytes(range(128, 256))), ValueError, r"is not UTF-8 text \(byte 0x80 on line 1\)"),
    ("run-missing", lambda tmp: evaluate_run(tmp / "nope.run", _write(tmp, "q.txt", QRELS_OK)), FileNotFoundError,
     r"run file .*nope\.run' does not exist"),
    ("run-folder", lambda tmp: evaluate_run(tmp, {"1": {"d1": 1}}), ValueError, r"run path .* is a folder"),
    ("run-empty", run_file(""), ValueError, r"run file .* is empty"),
    ("run-short-line", run_file("1 Q0 d1 1\n"), ValueError, r"4 fields on line 1, needs 6"),
    ("run-text-score", run_file("1 Q0 d1 1 x r\n"), ValueError, r"non-numeric or non-finite score 'x' on line 1"),
    ("run-nan-score", run_file(RUN_OK + "1 Q0 d3 3 nan r\n"), ValueError, r"non-finite score .* on line 3"),
    ("run-duplicate", run_file("1 Q0 d1 1 1 r\n1 Q0 d1 2 2 r\n"), ValueError, r"lists document 'd1' twice for query '1' \(line 2\)"),
    ("run-truncated-gzip", lambda tmp: evaluate_run(_write(tmp, "r.run.gz", truncated_gz(RUN_OK)), {"1": {"d1": 1}}),
     ValueError, r"r\.run\.gz' is a truncated or corrupt gzip"),
    ("qrels-five-fields", run_file(RUN_OK, "1 0 d1 1 x\n"), ValueError, r"qrels file .* 5 fields on line 1, needs 4"),
    ("qrels-duplicate", run_file(RUN_OK, "1 0 d1 1\n1 0 d1 2\n"), ValueError, r"qrels .* twice for query '1' \(line 2\)"),
    ("qrels-fractional-exp-gain", lambda tmp: evaluate_run({"1": {"d1": 1}}, {"1": {"d1": 1.5}}, gain="exp"),
     ValueError, r"qrels relevance must be integers here"),
    ("run-wrong-type", lambda tmp: evaluate_run(3, {"1": {"d1": 1}}), TypeError, r"a run is a TREC file path, a nested dict"),
    ("run-dict-of-lists", lambda tmp: evaluate_run({"1": [1]}, {"1": {"d1": 1}}), TypeError, r"query '1' maps to list"),
    ("run-frame-columns", lambda tmp: evaluate_run(pd.DataFrame({"a": [1]}), {"1": {"d1": 1}}), ValueError,
     r"needs columns qid, docid and score; got \['a'\]"),
    ("run-depth-zero", lambda tmp: evaluate_run({"1": {"d1": 1}}, {"1": {"d1": 1}}, depth=0), ValueError, r"depth .* positive integer"),
    ("run-metric-auc", lambda tmp: evaluate_run({"1": {"d1": 1}}, {"1": {"d1": 1}}, ["auc"]), ValueError,
     r"need every relevant document ranked"),
    ("run-no-shared-query-documented", lambda tmp: evaluate_run({"2": {"d1": 1.0}}, {"1": {"d1": 1}}), None,
     lambda r: len(r.per_query) == 0 and r.settings["n_queries_only_in_run"] == 1),
    # ---- compare --------------------------------------------------------------------------------
    ("cmp-one-system", lambda tmp: compare(results()[0]), ValueError, r"compare needs at least two systems"),
    ("cmp-not-a-result", lambda tmp: compare({"a": results()[0], "b": 3}), TypeError, r"system 'b' is a int, not an EvaluationResult"),
    ("cmp-unknown-test", cmp(test="z"), ValueError, r"test must be one of"),
    ("cmp-alpha-two", cmp(alpha=2), ValueError, r"alpha must be a number strictly between 0 and 1"),
    ("cmp-alpha-zero", cmp(alpha=0), ValueError, r"alpha must be"),
    ("cmp-confidence", cmp(confidence=1.5), ValueError, r"confidence must be a number strictly between 0 and 1"),
    ("cmp-confidence-text", cmp(confidence="x"), ValueError, r"confidence must be"),
    ("cmp-resamples", cmp(n_resamples=0, test="randomization"), ValueError, r"n_resamples must be a positive integer"),
    ("cmp-random-state", cmp(random_state="x"), ValueError, r"random_state must be None or a non-negative integer"),
    ("cmp-tukey-text", cmp(tukey="no"), TypeError, r"tukey must be True or False"),
    ("cmp-correction", cmp(correction="x"), ValueError, r"correction must be one of"),
    ("cmp-baseline", cmp(baseline="c"), ValueError, r"baseline 'c' is not one of the systems"),
    ("cmp-metric-missing", cmp(metrics=["foo"]), ValueError, r"lacks the metric\(s\) \['foo'\]"),
    ("cmp-metric-string", cmp(metrics="ap"), None, lambda r: r.metrics == ("ap",)),
    ("cmp-names-length", lambda tmp: compare(list(results()), names=["a"]), ValueError, r"names has 1 entries for 2 systems"),
    ("cmp-disjoint", lambda tmp: compare(evaluate(Y, S, Q), evaluate(Y, S, [8] * 4)), ValueError, r"share no query id"),
    ("cmp-conventions", lambda tmp: compare(evaluate(Y, S, Q), evaluate(Y, S, Q, gain="linear")), ValueError,
     r"different conventions"),
    # ---- beyond_accuracy -------------------------------------------------------------------------
    ("ba-item-out-of-catalogue", lambda tmp: gbrank.beyond_accuracy([[0, 9], [1, 2]], [[0, 1]], [[0, 0], [1, 1]], 4),
     ValueError, r"item code 9 outside the catalogue 0\.\.3"),
    ("ba-ragged-lists", lambda tmp: gbrank.beyond_accuracy([[0, 1], [1]], [[0, 1]], [[0, 0], [1, 1]], 4),
     ValueError, r"recommendations has lists of different lengths"),
    ("ba-k-too-large", lambda tmp: gbrank.beyond_accuracy([[0, 1], [1, 2]], [[0, 1]], [[0, 0], [1, 1]], 4, k=5),
     ValueError, r"k=5 exceeds the 2 items"),
    ("ba-float-items", lambda tmp: gbrank.beyond_accuracy([[0, 1.5], [1, 2]], [[0, 1]], [[0, 0], [1, 1]], 4),
     ValueError, r"must hold integer codes"),
    ("ba-empty-train", lambda tmp: gbrank.beyond_accuracy([[0, 1]], [[0, 1]], np.empty((0, 2), int), 4),
     ValueError, r"train is empty"),
    # ---- swap_deltas ---------------------------------------------------------------------------------
    ("sd-empty", lambda tmp: swap_deltas("ndcg", [], []), ValueError, r"the list is empty"),
    ("sd-unknown", lambda tmp: swap_deltas("foo", [1], [1]), ValueError, r"unknown objective metric 'foo'"),
    ("sd-length", lambda tmp: swap_deltas("ndcg", [1, 2], [1]), ValueError, r"one entry per item, got 2 and 1"),
    ("sd-fractional", lambda tmp: swap_deltas("ndcg", [1, 2], [0.5, 1]), ValueError, r"must be integers here"),
    ("sd-nan-score", lambda tmp: swap_deltas("ndcg", [1, np.nan], [0, 1]), ValueError, r"scores contains 1 NaN"),
    ("sd-p", lambda tmp: swap_deltas("nrbp", [1, 2], [0, 1], p=1.5), ValueError, r"strictly between 0 and 1"),
    ("sd-truncation", lambda tmp: swap_deltas("ndcg", [1, 2], [0, 1], truncation=1.5), ValueError, r"truncation must be a positive integer"),
    ("sd-bounding", lambda tmp: swap_deltas("ndcg", [1, 2], [0, 1], bounding="x"), ValueError, r"unknown bounding 'x'"),
    # ---- LambdaObjective: constructor --------------------------------------------------------------------
    ("obj-unknown-metric", obj(metric="p@5"), ValueError, r"unknown objective metric 'p@5'"),
    ("obj-metric-none", obj(metric=None), TypeError, r"named by a string"),
    ("obj-sigma-zero", obj(sigma=0), ValueError, r"sigma must be positive and finite"),
    ("obj-sigma-inf", obj(sigma=np.inf), ValueError, r"sigma must be positive and finite, got inf"),
    ("obj-sigma-text", obj(sigma="a"), TypeError, r"sigma must be a number"),
    ("obj-truncation-zero", obj(truncation=0), ValueError, r"truncation must be a positive integer"),
    ("obj-truncation-fraction", obj(truncation=2.5), ValueError, r"truncation must be a positive integer"),
    ("obj-p-one", obj(metric="nrbp", p=1.0), ValueError, r"strictly between 0 and 1"),
    ("obj-p-missing", obj(metric="nrbp"), ValueError, r"needs a persistence"),
    ("obj-p-for-ndcg", obj(metric="ndcg", p=0.5), ValueError, r"takes no p"),
    ("obj-hessian", obj(hessian="x"), ValueError, r"hessian must be one of"),
    ("obj-threshold-nan", obj(relevance_threshold=np.nan), ValueError, r"relevance_threshold must be positive and finite"),
    ("obj-threshold-inf", obj(relevance_threshold=np.inf), ValueError, r"relevance_threshold must be positive and finite"),
    ("obj-eps-inf", obj(score_normalization_eps=np.inf), ValueError, r"score_normalization_eps must be positive"),
    ("obj-floor-nan", obj(hessian_floor=np.nan), ValueError, r"hessian_floor must be >= 0 and finite"),
    ("obj-floor-negative", obj(hessian_floor=-1), ValueError, r"hessian_floor must be >= 0"),
    ("obj-normalization-text", obj(score_normalization="no"), TypeError, r"score_normalization must be True or False"),
    ("obj-sigmoid-table-text", obj(sigmoid_table=1), TypeError, r"sigmoid_table must be True or False"),
    ("obj-bounding", obj(bounding="x"), ValueError, r"unknown bounding 'x'"),
    ("obj-gain", obj(gain="x"), ValueError, r"gain must be one of"),
    # ---- LambdaObjective.gradients -------------------------------------------------------------------
    ("g-fractional-group-ptr", grad(ptr=(0, 1.5, 3)), ValueError, r"group_ptr must hold whole row numbers, found .*1\.5.* at entry 1"),
    ("g-empty-input", grad(scores=(), labels=(), ptr=(0,)), ValueError, r"scores is empty: no rows were given"),
    ("g-empty-input-ptr", grad(scores=(), labels=(), ptr=(0, 0)), ValueError, r"scores is empty"),
    ("g-non-increasing-ptr", grad(scores=(1, 2, 3, 4), labels=(0, 1, 0, 1), ptr=(0, 3, 1, 4)), ValueError,
     r"must not decrease, but group_ptr\[1\] = 3 > group_ptr\[2\] = 1"),
    ("g-ptr-not-from-zero", grad(ptr=(1, 3)), ValueError, r"must run from 0 to the number of rows \(3\)"),
    ("g-ptr-sizes", grad(ptr=(1, 2)), ValueError, r"runs from 1 to 2"),
    ("g-ptr-short", grad(ptr=(3,)), ValueError, r"at least two entries"),
    ("g-ptr-nan", grad(ptr=(0, np.nan, 3)), ValueError, r"whole row numbers, found .*nan"),
    ("g-empty-query", grad(ptr=(0, 0, 3)), ValueError, r"query 0 is empty"),
    ("g-length", grad(scores=(1, 2)), ValueError, r"one entry per row, got 2 and 3"),
    ("g-nan-score", grad(scores=(1, np.nan, 3)), ValueError, r"scores contains 1 NaN .* row 1"),
    ("g-negative-label", grad(labels=(0, -1, 0)), ValueError, r"non-negative"),
    ("g-fractional-label", grad(labels=(0, 1.5, 0)), ValueError, r"must be integers here"),
    ("g-fractional-label-linear", grad(labels=(0, 1.5, 0), gain="linear"), None, lambda r: np.isfinite(r[0]).all()),
    ("g-label-31", grad(labels=(0, 31, 0)), ValueError, r"over 30 overflow"),
    ("g-string-labels", grad(labels=("0", "1", "0")), TypeError, r"labels must be numeric"),
    ("g-weights-length", grad(weights=[1, 2]), ValueError, r"one entry per row \(3\) or per query \(1\), got 2"),
    ("g-weights-negative", grad(weights=[1, -2, 1]), ValueError, r"weights must be non-negative"),
    ("g-weights-nan", grad(weights=[1, np.nan, 1]), ValueError, r"weights contains 1 NaN"),
    ("g-no-pairs-documented", grad(labels=(0, 0, 0)), None, lambda r: (r[0] == 0).all() and (r[1] == 0).all()),
    # ---- gbrank.bounds -----------------------------------------------------------------------------------
    ("b-fractional-label", bnd("maximum", "ndcg", [1.5, 0, 1]), ValueError, r"must be integers here"),
    ("b-label-31", bnd("maximum", "ndcg", [31, 0, 1]), ValueError, r"over 30 overflow"),
    ("b-label-31-linear", bnd("maximum", "ndcg", [31, 0, 1], gain="linear"), None, lambda r: r == 1.0),
    ("b-string-labels", bnd("maximum", "ndcg", ["1", "0"]), TypeError, r"labels must be numeric"),
    ("b-nan-label", bnd("expectation", "ap", [np.nan, 1]), ValueError, r"labels contains 1 NaN"),
    ("b-negative-label", bnd("minimum", "ap", [-1, 1]), ValueError, r"non-negative"),
    ("b-2d-labels", bnd("maximum", "ap", [[1, 0], [0, 1]]), ValueError, r"must be 1-D"),
    ("b-scalar-labels", bnd("maximum", "ap", 1), TypeError, r"got the scalar 1"),
    ("b-empty-list-documented", bnd("list_bounds", "ap", []), None,
     lambda r: r.degenerate and (r.minimum, r.maximum, r.expectation) == (0.0, 0.0, 0.0)),
    ("b-unknown-metric", bnd("maximum", "p@5", [1, 0]), ValueError, r"unknown bounds metric 'p@5'; known metrics with bounds"),
    ("b-p-out-of-range", bnd("maximum", "nrbp", [1, 0], p=2), ValueError, r"strictly between 0 and 1"),
    ("b-threshold-zero", bnd("maximum", "ap", [1, 0], relevance_threshold=0), ValueError, r"relevance_threshold must be positive"),
    ("b-threshold-negative", bnd("expectation", "ap", [1, 0], relevance_threshold=-1), ValueError, r"relevance_threshold must be positive"),
    ("b-gain", bnd("maximum", "ndcg", [1, 0], gain="x"), ValueError, r"gain must be one of"),
    ("b-truncation", bnd("maximum", "ndcg", [1, 0], truncation=0), ValueError, r"truncation must be a positive integer"),
    ("b-distribution-seed-text", bnd("distribution", "ap", [1, 0], seed="x"), ValueError, r"seed must be an integer"),
    ("b-distribution-samples", bnd("distribution", "ap", [1, 0], n_samples=0), ValueError, r"n_samples must be an integer >= 1"),
    ("b-distribution-exact-limit", bnd("distribution", "ap", [1, 0], exact_limit=-1), ValueError, r"exact_limit must be an integer >= 0"),
    ("b-prepare-fractional-ptr", bnd("prepare", "ap", [1, 0, 1], [0, 1.5, 3]), ValueError, r"whole row numbers"),
    ("b-prepare-decreasing-ptr", bnd("prepare", "ap", [1, 0, 1], [0, 2, 1, 3]), ValueError, r"must not decrease"),
    ("b-prepare-ptr-end", bnd("prepare", "ap", [1, 0, 1], [0, 2]), ValueError, r"must run from 0 to the number of rows \(3\)"),
    ("b-prepare-empty-list-documented", bnd("prepare", "ap", [1, 0, 1], [0, 0, 3]), None, lambda r: r.degenerate.tolist() == [True, False]),
    ("b-prepare-grid", bnd("prepare", "ap", [1, 0], [0, 2], distribution=True, grid=1), ValueError, r"grid must be an integer >= 2"),
    ("b-bounded-unknown", lambda tmp: bounds.bounded("x", [0.5], bounds.prepare("ap", [1, 0], [0, 2])), ValueError, r"unknown bounding 'x'"),
    ("b-bounded-not-listbounds", lambda tmp: bounds.bounded("minmax", [0.5], 3), TypeError, r"bounds must be the ListBounds"),
    ("b-bounded-nan", lambda tmp: bounds.bounded("minmax", [np.nan], bounds.prepare("ap", [1, 0], [0, 2])), ValueError,
     r"values must be finite metric values"),
    ("b-bounded-length", lambda tmp: bounds.bounded("minmax", [0.5, 0.5], bounds.prepare("ap", [1, 0], [0, 2])), ValueError,
     r"one metric value per list \(1\)"),
    ("b-inverse-scale-not-listbounds", lambda tmp: bounds.inverse_scale("minmax", None), TypeError, r"bounds must be the ListBounds"),
    # ---- backend adapters ----------------------------------------------------------------------------------
    ("lgb-no-groups", backend("LightGBMObjective", np.zeros(6), lambda: lgb_dataset(None)), ValueError, r"has no query groups"),
    ("lgb-not-a-dataset", backend("LightGBMObjective", np.zeros(6), "x"), TypeError, r"expects a lightgbm\.Dataset .* got str"),
    ("lgb-not-an-objective", backend("LightGBMObjective", wrap="ndcg"), TypeError, r"wraps a gbrank objective .* got str 'ndcg'"),
    ("lgb-preds-length", backend("LightGBMObjective", np.zeros(5), lgb_dataset), ValueError, r"one entry per row, got 5 and 6"),
    ("ranker-fractional-group", backend("LGBMRankerObjective", np.zeros(6), np.zeros(6), None, [2.5, 3.5]), ValueError,
     r"group sizes must be positive whole numbers of rows, found .*2\.5.* at query 0"),
    ("ranker-zero-group", backend("LGBMRankerObjective", np.zeros(6), np.zeros(6), None, [0, 6]), ValueError, r"found .*0.* at query 0"),
    ("ranker-2d-group", backend("LGBMRankerObjective", np.zeros(6), np.zeros(6), None, [[3, 3]]), ValueError, r"group must be a 1-D array"),
    ("ranker-text-group", backend("LGBMRankerObjective", np.zeros(6), np.zeros(6), None, ["3", "3"]), ValueError, r"whole numbers of rows"),
    ("ranker-group-sum", backend("LGBMRankerObjective", np.zeros(6), np.zeros(6), None, [2, 2]), ValueError,
     r"must run from 0 to the number of rows \(6\)"),
    ("ranker-no-group", backend("LGBMRankerObjective", np.zeros(6), np.zeros(6), None, None), ValueError, r"no query groups"),
    ("lgb-metric-unknown", metric_cb("LightGBMMetric", "foo"), ValueError, r"unknown metric 'foo'"),
    ("lgb-metric-empty", metric_cb("LightGBMMetric", []), ValueError, r"names is empty"),
    ("lgb-metric-int", metric_cb("LightGBMMetric", 3), TypeError, r"names must be a metric name or a list"),
    ("lgb-metric-bad-keyword", metric_cb("LightGBMMetric", "ap", foo=1), TypeError, r"unexpected keyword argument 'foo'"),
    ("lgb-metric-bad-policy", metric_cb("LightGBMMetric", "ap", empty="x"), ValueError, r"empty must be one of"),
    ("lgb-metric-not-a-dataset", lambda tmp: metric_cb("LightGBMMetric", "ap")(tmp)(np.zeros(6), "x"), TypeError,
     r"LightGBMMetric needs query groups: pass it as lightgbm\.train\(feval=\.\.\.\)"),
    ("xgb-no-groups", backend("XGBoostObjective", np.zeros(6), lambda: xgb_dmatrix(None)), ValueError, r"DMatrix has no query groups"),
    ("xgb-not-a-dmatrix", backend("XGBoostObjective", np.zeros(6), "x"), TypeError, r"expects an xgboost\.DMatrix"),
    ("xgb-not-an-objective", backend("XGBoostObjective", wrap=42), TypeError, r"wraps a gbrank objective"),
    ("xgb-row-weights", backend("XGBoostObjective", np.zeros(6), lambda: xgb_dmatrix(weights=range(1, 7))), ValueError,
     r"6 weights for 2 queries; .* one per query"),
    ("xgb-label-31", backend("XGBoostObjective", np.zeros(6), lambda: xgb_dmatrix(labels=(0, 1, 2, 0, 1, 31))), ValueError,
     r"over 30 overflow"),
    ("xgb-metric-no-groups", lambda tmp: metric_cb("XGBoostMetric", "ap")(tmp)(np.zeros(6), xgb_dmatrix(None)), ValueError,
     r"no query groups"),
    ("xgb-metric-unknown", metric_cb("XGBoostMetric", "ndcg@"), ValueError, r"'ndcg@' ends with '@'"),
    # ---- CLI: exit status 2 and one line naming the problem ------------------------------------------------------
    ("cli-binary-run", cli("evaluate", "r.run", "q.txt", files={"r.run": b"\x00\x01" * 20, "q.txt": QRELS_OK}),
     *cli_error(r"r\.run' is binary, not a TREC run")),
    ("cli-non-utf8-run", cli("evaluate", "r.run", "q.txt", files={"r.run": bytes(range(128, 256)), "q.txt": QRELS_OK}),
     *cli_error(r"r\.run' is not UTF-8 text")),
    ("cli-missing-run", cli("evaluate", "nope.run", "q.txt", files={"q.txt": QRELS_OK}), *cli_error(r"does not exist")),
    ("cli-unknown-metric", cli("evaluate", "r.run", "q.txt", "-m", "foo", files={"r.run": RUN_OK, "q.txt": QRELS_OK}),
     *cli_error(r"unknown metric 'foo'")),
    ("cli-confidence", cli("evaluate", "r.run", "q.txt", "--confidence", "2", files={"r.run": RUN_OK, "q.txt": QRELS_OK}),
     *cli_error(r"--confidence must lie strictly between 0 and 1")),
    ("cli-digits", cli("evaluate", "r.run", "q.txt", "--digits", "-1", files={"r.run": RUN_OK, "q.txt": QRELS_OK}),
     *cli_error(r"--digits must be an integer from 0 to 16")),
    ("cli-depth", cli("evaluate", "r.run", "q.txt", "-M", "0", files={"r.run": RUN_OK, "q.txt": QRELS_OK}),
     *cli_error(r"-M \(depth\) must be a positive integer")),
    ("cli-depth-text", cli("evaluate", "r.run", "q.txt", "-M", "x"), *cli_error(r"argument -M: invalid int value: 'x'")),
    ("cli-no-common-query", cli("evaluate", "r.run", "q.txt", files={"r.run": "9 Q0 d1 1 1 r\n", "q.txt": QRELS_OK}),
     *cli_error(r"no query of .* has a line in")),
    ("cli-letor-folds", cli("bench", "letor", "--folds", "x"), *cli_error(r"--folds takes comma-separated fold numbers")),
    ("cli-letor-data", cli("bench", "letor", "--data", "nope"), *cli_error(r"--data 'nope' is not 'example'")),
    ("cli-letor-rounds", cli("bench", "letor", "--rounds", "0"), *cli_error(r"--rounds must be at least 1")),
    ("cli-letor-learning-rate", cli("bench", "letor", "--learning-rate", "-1"), *cli_error(r"--learning-rate must be positive")),
    ("cli-letor-contender", cli("bench", "letor", "--contenders", "foo"), *cli_error(r"unknown contender 'foo'")),
    ("cli-letor-vali-fraction", cli("bench", "letor", "--vali-fraction", "2"), *cli_error(r"--vali-fraction must lie strictly between")),
    ("cli-letor-metric", cli("bench", "letor", "--early-stopping-metric", "foo"), *cli_error(r"--early-stopping-metric: unknown metric")),
    ("cli-mf-nsr", cli("bench", "mf", "--nsr", "x"), *cli_error(r"--nsr takes comma-separated positive integers")),
    ("cli-mf-splits", cli("bench", "mf", "--splits", "0"), *cli_error(r"--splits must be a positive number")),
    ("cli-mf-loss", cli("bench", "mf", "--losses", "foo"), *cli_error(r"unknown loss 'foo'")),
    ("cli-mf-threads", cli("bench", "mf", "--threads", "0"), *cli_error(r"--threads must be a positive integer")),
    ("cli-mf-device", cli("bench", "mf", "--device", "foo"), *cli_error(r"unknown device 'foo'")),
    ("cli-mf-validation-size", cli("bench", "mf", "--validation-size", "2"), *cli_error(r"--validation-size must lie strictly between")),
]


def test_catalogue_is_large_and_unique():
    ids = [c[0] for c in CASES]
    assert len(ids) == len(set(ids))
    assert len(ids) >= 120


@pytest.mark.parametrize("call, error, expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input(call, error, expected, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    if error is None:
        result = call(tmp_path)
        assert expected(result), f"documented result does not hold: {result!r:.300}"
        return
    with pytest.raises(error) as info:
        call(tmp_path)
    assert re.search(expected, str(info.value), flags=re.IGNORECASE | re.DOTALL), str(info.value)
