"""Every documented form of interaction data, at every entry point that takes data.

The forms (docs/datasets.md): MovieLens ``u.data`` (ml-100k), ``ratings.dat`` (ml-1m, ml-10m)
and ``ratings.csv`` (ml-latest...), each plain or gzipped, given as the file or as the release
folder; CiteULike ``users.dat`` (file or folder); a table whose header names user and item
columns.  The entry points: the library (``gbrank.datasets.load_interactions``, which tells
the format by the content) and ``gbrank bench mf --data``, which reads through it.  One tiny
synthetic data set is written in every form; each form must read back to the same pairs, and
the bench must run on each (``--quick``, one loss, one epoch: a second or so a form).  Also:
messages of the bench name its flags, not the library's Python arguments.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json

import numpy as np
import pandas as pd
import pytest

from gbrank.cli import main
from gbrank.datasets import load_interactions

N_USERS, N_ITEMS, PER_USER = 12, 60, 30


def _pairs() -> pd.DataFrame:
    """12 users x 30 of 60 items, rated 5 (mostly) or 2, with timestamps."""
    rng = np.random.default_rng(0)
    rows = []
    for u in range(1, N_USERS + 1):
        for i in rng.choice(N_ITEMS, PER_USER, replace=False):
            rows.append((u, int(i) + 1, 5.0 if rng.random() < 0.8 else 2.0, 880_000_000 + len(rows)))
    return pd.DataFrame(rows, columns=["user", "item", "rating", "timestamp"])


PAIRS = _pairs()


def _text(form: str) -> str:
    rows = PAIRS.itertuples(index=False)
    if form == "u.data":
        return "".join(f"{u}\t{i}\t{r:g}\t{t}\n" for u, i, r, t in rows)
    if form == "ratings.dat":
        return "".join(f"{u}::{i}::{r:g}::{t}\n" for u, i, r, t in rows)
    if form == "ratings.csv":
        return "userId,movieId,rating,timestamp\n" + "".join(f"{u},{i},{r:g},{t}\n" for u, i, r, t in rows)
    if form == "users.dat":  # CiteULike: line u is user u's library (the count first); ids 0-based
        lines = [" ".join(map(str, [len(g), *(g["item"] - 1)])) for _, g in PAIRS.groupby("user", sort=True)]
        return "\n".join(lines) + "\n"
    if form == "table.csv":
        return "user,item,rating\n" + "".join(f"u{u},m{i},{r:g}\n" for u, i, r, _ in rows)
    if form == "table.tsv":  # no rating column: implicit
        return "user_id\titem_id\n" + "".join(f"{u}\t{i}\n" for u, i, _, _ in rows)
    raise AssertionError(form)


def _write(folder, form: str, gz: bool):
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / (form + (".gz" if gz else ""))
    data = _text(form).encode()
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


MOVIELENS = ["u.data", "ratings.dat", "ratings.csv"]
# (form, gzipped, given as): every documented form
FORMS = ([(f, gz, how) for f in MOVIELENS for gz in (False, True) for how in ("file", "folder")]
         + [("users.dat", False, "file"), ("users.dat", False, "folder"), ("users.dat", True, "file"),
            ("table.csv", False, "file"), ("table.tsv", True, "file")])
IDS = [f"{f}{'.gz' if gz else ''}-{how}" for f, gz, how in FORMS]


def _target(tmp_path, form, gz, how):
    path = _write(tmp_path / "release", form, gz)
    return path.parent if how == "folder" else path


def _expected(form: str) -> pd.DataFrame:
    """The (user, item, rating) pairs the form holds, in file order."""
    if form == "users.dat":
        ordered = PAIRS.sort_values("user", kind="stable")
        return pd.DataFrame({"user": ordered["user"].to_numpy() - 1, "item": ordered["item"].to_numpy() - 1,
                             "rating": 1.0})
    if form == "table.csv":
        return pd.DataFrame({"user": "u" + PAIRS["user"].astype(str), "item": "m" + PAIRS["item"].astype(str),
                             "rating": PAIRS["rating"]})
    if form == "table.tsv":
        return pd.DataFrame({"user": PAIRS["user"], "item": PAIRS["item"], "rating": 1.0})
    return PAIRS[["user", "item", "rating"]]


# ---- the library ---------------------------------------------------------------------------


@pytest.mark.parametrize("form, gz, how", FORMS, ids=IDS)
def test_the_library_reads_every_form(tmp_path, form, gz, how):
    table = load_interactions(_target(tmp_path, form, gz, how))
    expected = _expected(form)
    pd.testing.assert_frame_equal(table[["user", "item", "rating"]].reset_index(drop=True), expected,
                                  check_dtype=False)
    assert table.attrs["format"] == (form if not form.startswith("table") else "table")
    assert table.attrs["implicit"] == (form in ("users.dat", "table.tsv"))


@pytest.mark.parametrize("form", MOVIELENS + ["users.dat"])
def test_the_content_decides_not_the_name(tmp_path, form):
    """The same bytes under a name that says nothing (a download renamed, ml-100k's u1.base...)."""
    path = tmp_path / "downloaded.txt"
    path.write_text(_text(form))
    pd.testing.assert_frame_equal(load_interactions(path)[["user", "item", "rating"]], _expected(form),
                                  check_dtype=False)


# ---- gbrank bench mf --data ----------------------------------------------------------------

QUICK = ["--quick", "--losses", "listwise_nrbp", "--baselines", "none", "--no-plots", "--epochs", "1",
         "--threads", "1", "--min-positives", "5"]


def _bench(data, out, *extra):
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(stderr):
        code = main(["bench", "mf", "--data", str(data), "--out", str(out), *QUICK, *extra], out=stdout)
    return code, stdout.getvalue(), stderr.getvalue()


@pytest.mark.parametrize("form, gz, how", FORMS, ids=IDS)
def test_bench_mf_runs_on_every_form(tmp_path, form, gz, how):
    data = _target(tmp_path, form, gz, how)
    code, text, err = _bench(data, tmp_path / "out")
    assert code == 0, err
    assert "reports written to" in text
    plan = json.loads((tmp_path / "out" / "config.json").read_text())["plan"]
    assert plan["data_summary"]["interactions"] == len(PAIRS)
    assert plan["data_summary"]["users_kept"] == N_USERS
    # explicit ratings binarised at 4, implicit data (CiteULike, a table without ratings) at 1
    assert plan["relevance_threshold"] == (1.0 if form in ("users.dat", "table.tsv") else 4.0)
    # a file named after its format is named after its release folder
    assert plan["data_name"] == ("release" if how == "folder" or not form.startswith("table") else "table")


def test_bench_mf_on_u_data_equals_the_library_table(tmp_path):
    """The issue's case: ml-100k's u.data given as a file; the bench reads what the library reads."""
    from gbrank.bench.mf._plan import load_interactions as bench_data

    path = _write(tmp_path / "ml-100k", "u.data", False)
    table, name, threshold = bench_data(str(path))
    pd.testing.assert_frame_equal(table, load_interactions(path))
    assert (name, threshold) == ("ml-100k", 4.0)


@pytest.mark.parametrize("content, message", [
    ("1,2,5,881250949\n", "holds numbers without a header"),
    ("3\t1\t2\t3\n3\t4\t5\t6\n", "read both as MovieLens u.data"),
    ("who,what\n1,2\n", "needs a header with columns user,item (or user_id,item_id)"),
])
def test_bench_mf_names_the_file_and_the_fix(tmp_path, content, message):
    data = tmp_path / "mine.txt"
    data.write_text(content)
    code, _, err = _bench(data, tmp_path / "out")
    assert code == 2 and message in err and str(data) in err
    assert "Traceback" not in err and not (tmp_path / "out").exists()


# ---- messages name the flags ---------------------------------------------------------------


def test_bench_messages_name_flags_and_library_messages_name_arguments(tmp_path):
    from gbrank.interactions import ArgumentError, NotEnoughNegatives, split_interactions

    data = _write(tmp_path, "u.data", False)
    code, _, err = _bench(data, tmp_path / "out", "--min-positives", "500")
    assert code == 2
    assert "no user has at least 500 positive interactions" in err
    assert "Lower --min-positives or --relevance-threshold" in err and "min_positives" not in err
    # from Python, the library names its arguments
    X, y = PAIRS[["user", "item"]].to_numpy(), PAIRS["rating"].to_numpy()
    with pytest.raises(ArgumentError, match="Lower min_positives or relevance_threshold") as info:
        split_interactions(X, y, min_positives=500)
    assert info.value.arguments == ("min_positives", "relevance_threshold")
    assert info.value.restated({"min_positives": "--min-positives", "relevance_threshold": "--relevance-threshold"}) \
        .endswith("Lower --min-positives or --relevance-threshold")
    with pytest.raises(ArgumentError, match="at least 1 positive interaction \\(rating"):
        split_interactions(X, np.zeros(len(y)), min_positives=1, relevance_threshold=1)
    exc = NotEnoughNegatives("cannot draw 9 test negatives for user 1 ...; lower nsr, or filter out users")
    assert exc.arguments == ("nsr",) and "lower --nsr, or" in exc.restated({"nsr": "--nsr"})
    assert isinstance(exc, ValueError)


def test_ready_fold_files_are_read_by_the_library(tmp_path):
    """The third entry point: the train and test files of ready folds (user_id,item_id, gzipped)."""
    from gbrank.bench.mf._splits import read_part

    path = _write(tmp_path, "table.tsv", True)
    table, used = read_part(path)
    assert used == "user_id,item_id" and len(table) == len(PAIRS) and (table["rating"] == 1.0).all()
    with pytest.raises(ValueError, match=r"u\.data holds u\.data data; a ready fold's train and test files are "
                                         r"tables"):
        read_part(_write(tmp_path, "u.data", False))
