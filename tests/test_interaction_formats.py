"""MovieLens in each release's own format, and load_interactions' dispatch on what a path holds.

Every format is written from one table in the test, and must read back to that same table.
The fast reader (pandas' C parser + array checks) is proven against the line-by-line reader
on many random files, valid and corrupted: it may only ever return the same table, or hand
the file over (None) to the line-by-line reader, which names the bad line.
"""

from __future__ import annotations

import gzip

import numpy as np
import pandas as pd
import pytest

from gbrank.datasets import (INTERACTION_FORMATS, MOVIELENS_SCALE, interaction_format, load_citeulike,
                             load_interactions, load_movielens)
from gbrank.datasets._interactions import MOVIELENS_FORMATS, _fast_ratings, _parse_ratings

TABLE = pd.DataFrame({
    "user": np.array([1, 1, 2, 7, 7], dtype=np.int64),
    "item": np.array([10, 3, 10, 250, 3], dtype=np.int64),
    "rating": [4.0, 0.5, 5.0, 3.0, 2.5],
    "timestamp": np.array([964982703, 964981247, 964982224, 881250949, 0], dtype=np.int64),
})


def write(table: pd.DataFrame, fmt: str) -> str:
    """``table`` as MovieLens writes it in format ``fmt``."""
    rows = [(str(u), str(i), f"{r:g}", str(t)) for u, i, r, t in table.itertuples(index=False)]
    if fmt == "ratings.csv":
        return "userId,movieId,rating,timestamp\n" + "".join(",".join(r) + "\n" for r in rows)
    sep = "::" if fmt == "ratings.dat" else "\t"
    return "".join(sep.join(r) + "\n" for r in rows)


def put(folder, name, text, gz=False):
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / (name + (".gz" if gz else ""))
    path.write_bytes(gzip.compress(text.encode()) if gz else text.encode())
    return path


@pytest.mark.parametrize("fmt", list(MOVIELENS_FORMATS))
@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gz"])
def test_each_format_reads_the_same_table(tmp_path, fmt, gz):
    path = put(tmp_path / "release", fmt, write(TABLE, fmt), gz)
    for target in (path, path.parent):
        frame = load_movielens(target)
        pd.testing.assert_frame_equal(frame, TABLE)
        assert frame.attrs["format"] == fmt
        via = load_interactions(target)
        pd.testing.assert_frame_equal(via, TABLE)
        assert via.attrs == {"format": fmt, "implicit": False}


@pytest.mark.parametrize("fmt, name", [("u.data", "u1.base"), ("ratings.dat", "r1.train"),
                                       ("ratings.csv", "ratings_small.csv")])
def test_other_names_are_read_in_the_format_of_their_first_line(tmp_path, fmt, name):
    path = put(tmp_path, name, write(TABLE, fmt))
    pd.testing.assert_frame_equal(load_movielens(path), TABLE)
    assert load_interactions(path).attrs["format"] == fmt


def test_whole_stars_windows_line_ends_and_blank_lines(tmp_path):
    text = "196\t242\t3\t881250949\r\n\r\n186\t302\t3\t891717742\r\n22\t377\t1\t878887116\r\n"
    frame = load_movielens(put(tmp_path, "u.data", text))
    assert frame["rating"].tolist() == [3.0, 3.0, 1.0] and frame["item"].tolist() == [242, 302, 377]


def test_a_folder_with_two_ratings_files_is_refused(tmp_path):
    put(tmp_path, "ratings.dat", write(TABLE, "ratings.dat"))
    put(tmp_path, "u.data", write(TABLE, "u.data"))
    with pytest.raises(ValueError, match=r"holds both ratings\.dat and u\.data; keep one"):
        load_movielens(tmp_path)
    with pytest.raises(ValueError, match=r"holds both"):
        load_interactions(tmp_path)


def test_ml_1m_folder_reads_ratings_not_the_user_table(tmp_path):
    put(tmp_path, "ratings.dat", write(TABLE, "ratings.dat"))
    put(tmp_path, "users.dat", "1::F::1::10::48067\n2::M::56::16::70072\n")
    put(tmp_path, "movies.dat", "1::Toy Story (1995)::Animation|Children's|Comedy\n")
    pd.testing.assert_frame_equal(load_interactions(tmp_path), TABLE)
    with pytest.raises(ValueError, match=r"ml-1m's user table.*pass ratings\.dat"):
        load_interactions(tmp_path / "users.dat")


@pytest.mark.parametrize("fmt, text, message", [
    ("ratings.dat", "1::2::4::3\n1::3::4::3::9\n", r"line 2 has 5 fields, but a ratings\.dat line has 4"),
    ("u.data", "1\t2\t4\n", r"line 1 has 3 fields, but a u\.data line has 4"),
    ("u.data", "1\t2\t4\t3\n1\t3\tnan\t3\n", r"u\.data, line 2: rating 'nan' is not a finite, non-negative"),
    ("ratings.dat", "1::2::4::3\n2::2::4::3\n1::2::5::4\n", r"rates movie 2 twice for user 1 \(lines 1 and 3\)"),
    ("ratings.dat", "1::2::7::3\n", r"line 1: rating '7' is not on the MovieLens scale \(0\.5 to 5 stars.*"
                                    r"check_scale=False"),
    ("u.data", "1\t2\t4\t3\n1\t3\t4.3\t3\n", r"line 2: rating '4\.3' is not on the MovieLens scale"),
    ("ratings.csv", "userId,movieId,rating,timestamp\n1,2,0,3\n", r"line 2: rating '0' is not on the MovieLens"),
    ("u.data", "", r"u\.data is empty; a MovieLens u\.data file holds one rating per line"),
    ("ratings.dat", "1::x::4::3\n", r"line 1: movieId 'x' is not a non-negative integer id"),
])
def test_errors_name_the_file_and_line(tmp_path, fmt, text, message):
    with pytest.raises(ValueError, match=message):
        load_movielens(put(tmp_path, fmt, text))


def test_check_scale_false_reads_other_scales(tmp_path):
    path = put(tmp_path, "ratings.dat", "1::2::7::3\n1::3::4.3::3\n")
    assert load_movielens(path, check_scale=False)["rating"].tolist() == [7.0, 4.3]
    assert MOVIELENS_SCALE == (0.5, 5.0, 0.5)


def test_unrecognised_files_and_zip_archives(tmp_path):
    with pytest.raises(ValueError, match=r"not a MovieLens ratings file gbrank recognises.*first line 'hello world'"):
        load_movielens(put(tmp_path, "notes.txt", "hello world\n"))
    (tmp_path / "ml-100k.zip").write_bytes(b"PK\x03\x04")
    with pytest.raises(ValueError, match=r"zip archive; unzip it"):
        load_movielens(tmp_path / "ml-100k.zip")
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match=r"holds none of ratings\.csv.*users\.dat"):
        load_interactions(tmp_path / "empty")


# ---- the fast reader against the line-by-line reader ------------------------------------

def _random_table(rng, n):
    pairs = rng.choice(40 * 60, size=n, replace=False)
    return pd.DataFrame({
        "user": (pairs // 60).astype(np.int64), "item": (pairs % 60 * 7).astype(np.int64),
        "rating": rng.integers(1, 11, size=n) / 2.0,
        "timestamp": rng.integers(0, 2_000_000_000, size=n).astype(np.int64)})


BAD_RATINGS = ["nan", "inf", "-1", "x", "", "7", "4.3", "0", "NA"]
BAD_IDS = ["1.5", "-2", "abc", "", "nan"]


def _replace(line, sep, column, value):
    fields = line.split(sep)
    fields[column] = value
    return sep.join(fields)


CORRUPTIONS = [
    lambda line, sep, rng: line + sep + "9",                                         # a field too many
    lambda line, sep, rng: sep.join(line.split(sep)[:3]),                            # a field too few
    lambda line, sep, rng: _replace(line, sep, 2, str(rng.choice(BAD_RATINGS))),     # a bad rating
    lambda line, sep, rng: _replace(line, sep, int(rng.choice([0, 1, 3])), str(rng.choice(BAD_IDS))),
    lambda line, sep, rng: "",                                                       # a blank line: fine
    lambda line, sep, rng: None,                                                     # the line before, again
]


def test_fast_reader_equals_line_by_line_reader_on_random_files():
    rng = np.random.default_rng(0)
    outcomes = {"same": 0, "handed over": 0}
    for trial in range(300):
        fmt = list(MOVIELENS_FORMATS)[trial % 3]
        spec = MOVIELENS_FORMATS[fmt]
        table = _random_table(rng, int(rng.integers(1, 30)))
        lines = write(table, fmt).splitlines()
        start = 1 if spec.header else 0
        if trial % 4:  # corrupt one line in three trials of four
            at = int(rng.integers(start, len(lines)))
            corrupt = CORRUPTIONS[int(rng.integers(len(CORRUPTIONS)))](lines[at], spec.sep, rng)
            lines[at] = lines[at - 1] if corrupt is None and at > start else (corrupt or "")
        text = "\n".join(lines) + "\n"
        for check_scale in (True, False):
            fast = _fast_ratings(text, spec, check_scale)
            try:
                slow = _parse_ratings(text, "f", spec, check_scale)
            except ValueError:
                assert fast is None, (fmt, text)
                outcomes["handed over"] += 1
                continue
            if fast is None:  # the fast reader may hand a valid file over, never change it
                outcomes["handed over"] += 1
                continue
            pd.testing.assert_frame_equal(fast, slow)
            outcomes["same"] += 1
    assert outcomes["same"] > 150 and outcomes["handed over"] > 100, outcomes


# ---- load_interactions: CiteULike and plain tables ---------------------------------------

def test_citeulike_file_and_folder(tmp_path):
    put(tmp_path, "users.dat", "2 5 0\n1 3\n")
    for target in (tmp_path, tmp_path / "users.dat"):
        frame = load_interactions(target)
        pd.testing.assert_frame_equal(frame, load_citeulike(tmp_path))
        assert frame.attrs == {"format": "users.dat", "implicit": True}


def test_plain_tables(tmp_path):
    frame = load_interactions(put(tmp_path, "r.csv", "User,Item,Rating\nann,x,4\nann,y,2.5\nbob,x,0\n"))
    assert frame.to_dict("list") == {"user": ["ann", "ann", "bob"], "item": ["x", "y", "x"], "rating": [4.0, 2.5, 0.0]}
    assert frame.attrs == {"format": "table", "implicit": False, "columns": "User,Item,Rating"}
    frame = load_interactions(put(tmp_path, "likes.tsv", "user\titem\n1\t5\n2\t5\n"))
    assert frame["rating"].tolist() == [1.0, 1.0] and frame.attrs["implicit"]
    # the ready folds' id columns; user,item preferred when both pairs are there
    frame = load_interactions(put(tmp_path, "f.csv", "user_id,item_id\n1,5\n2,5\n"))
    assert frame["item"].tolist() == [5, 5] and frame.attrs["columns"] == "user_id,item_id"
    frame = load_interactions(put(tmp_path, "g.csv", "user,item,rating,user_id,item_id\n0,7,1,0,55\n"))
    assert frame["item"].tolist() == [7] and frame.attrs["columns"] == "user,item,rating"


@pytest.mark.parametrize("text, message", [
    ("who,what\n1,2\n", r"needs a header with columns user,item \(or user_id,item_id\).*\['who', 'what'\]"),
    ("user,item\n", r"holds a header but no interactions"),
    ("user,item\n1,2\n,3\n", r"1 row has no user id \(data rows \[2\]"),
    ("user,item\n1,2\n,3\n,4\n", r"2 rows have no user id \(data rows \[2, 3\]"),
    ("user,item,rating\n1,2,4\n1,3,-1\n", r"data row 2 .*rating -1 is not a finite, non-negative"),
    ("user,item,rating\n1,2,4\n1,3,x\n", r"rating 'x' is not a finite"),
    ("user,item,rating\n1,2,4\n1,3,4\n1,2,5\n",
     r"pair \(user 1, item 2\) more than once \(data rows \[1, 3\]; 1 repeated pair in all.*groupby"),
    ("", r"is empty"),
])
def test_plain_table_errors(tmp_path, text, message):
    with pytest.raises(ValueError, match=message):
        load_interactions(put(tmp_path, "t.csv", text))


# ---- the format told by the content -------------------------------------------------------

CITEULIKE = "2 5 0\n1 3\n3 0 1 2\n"


@pytest.mark.parametrize("fmt", list(MOVIELENS_FORMATS))
@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gz"])
def test_the_content_tells_the_format_whatever_the_name(tmp_path, fmt, gz):
    path = put(tmp_path, "my_data.txt", write(TABLE, fmt), gz)
    assert interaction_format(path) == (path, fmt)
    frame = load_interactions(path)
    pd.testing.assert_frame_equal(frame, TABLE)
    assert frame.attrs == {"format": fmt, "implicit": False}
    pd.testing.assert_frame_equal(load_movielens(path), TABLE)


def test_citeulike_and_tables_by_content(tmp_path):
    path = put(tmp_path, "libraries.txt", CITEULIKE)
    assert interaction_format(path)[1] == "users.dat"
    pd.testing.assert_frame_equal(load_interactions(path), load_citeulike(path))
    # a table named like a MovieLens file is read as the table it is
    path = put(tmp_path / "mine", "ratings.csv", "user,item,rating\n1,2,4\n1,3,5\n")
    assert interaction_format(path)[1] == "table"
    assert interaction_format(path.parent) == (path, "table")
    assert load_interactions(path.parent).to_dict("list") == {"user": [1, 1], "item": [2, 3], "rating": [4.0, 5.0]}
    assert set(INTERACTION_FORMATS) == {"ratings.csv", "ratings.dat", "u.data", "users.dat", "table"}


def test_lines_that_fit_two_formats_take_the_name_or_are_refused(tmp_path):
    text = "3\t1\t2\t3\n3\t4\t5\t6\n"  # u.data lines of user 3, and CiteULike lines of three ids
    with pytest.raises(ValueError, match=r"read both as MovieLens u\.data .* and as CiteULike users\.dat.*name the "
                                         r"file after its format \(u\.data or users\.dat\)"):
        interaction_format(put(tmp_path, "x.txt", text))
    assert interaction_format(put(tmp_path / "a", "u.data", text))[1] == "u.data"
    assert interaction_format(put(tmp_path / "b", "users.dat", text))[1] == "users.dat"
    # one line that is no CiteULike line settles it
    assert interaction_format(put(tmp_path, "y.txt", text + "196\t242\t3\t881250949\n"))[1] == "u.data"


@pytest.mark.parametrize("name, content, message", [
    ("r.csv", "1,2,5,881250949\n", r"r\.csv: its first line '1,2,5,881250949' holds numbers without a header.*add "
                                   r"a header line naming the columns, e\.g\. user,item,rating"),
    ("r.tsv", "1\t2\t5\n", r"holds numbers without a header"),
    ("movies.dat", "1::Toy Story (1995)::Animation|Children's|Comedy\n", r"movie table .*pass ratings\.dat"),
    ("notes.txt", "hello\n", r"notes\.txt: gbrank cannot tell what its first line 'hello' is; it reads MovieLens"),
    ("blank.txt", "\n\n", r"blank\.txt is empty; gbrank reads MovieLens ratings\.csv"),
    ("model.bin", "\x00\x01\x02", r"model\.bin is binary"),
])
def test_unrecognised_content_names_the_file_and_the_fix(tmp_path, name, content, message):
    path = put(tmp_path, name, content)
    with pytest.raises(ValueError, match=message):
        load_interactions(path)


def test_a_damaged_first_line_is_named_by_the_format_of_the_file_name(tmp_path):
    with pytest.raises(ValueError, match=r"u\.data, line 1: movieId 'x' is not a non-negative integer id"):
        load_interactions(put(tmp_path, "u.data", "1\tx\t4\t3\n1\t3\t4\t3\n"))
    truncated = tmp_path / "ratings.dat.gz"
    truncated.write_bytes(gzip.compress(write(TABLE, "ratings.dat").encode())[:30])
    with pytest.raises(ValueError, match=r"ratings\.dat\.gz is a truncated or corrupt gzip file"):
        load_interactions(truncated)


def test_real_movielens_through_load_interactions(dataset_path):
    folder = dataset_path("movielens-latest-small")
    frame = load_interactions("movielens-latest-small")
    pd.testing.assert_frame_equal(frame, load_movielens(folder))
    assert len(frame) == 100_836 and frame.attrs == {"format": "ratings.csv", "implicit": False}
