"""load_letor at full size: float32 features, no dense copy for CSR, a streamed parse by blocks, linear query ids.

Small synthetic files in ``tmp_path``; ``_BLOCK_BYTES`` is patched down so that they span many
blocks.  The speed and memory figures are in ``docs/speed.md`` ("Loading LETOR files at full
size", ``benchmarks/bench_load_letor.py``).
"""

from __future__ import annotations

import gzip

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file

import gbrank.datasets._letor as letor_module
from gbrank.datasets import load_letor, load_letor_folds

# values with 6-7 significant digits, most not exact in float32; NaN kept as missing
TEXT = """\
# a header comment, qid:99 here is not a row
2 qid:10 1:0.123457 2:3 3:-13.6779 5:0.333333 # docid = GX000-00-0000000 qid:77
0 qid:10 1:0.0 2:12 3:1234.56 4:nan 5:0.1

1 qid:4 1:0.666667 2:0 4:1e-07 5:98765.4
0 qid:4 2:7 3:0.000123457 5:1.5
3 qid:25 1:0.999999 2:1 3:-0.5 4:2.71828 5:3.14159
"""


def _write(tmp_path, text=TEXT, name="train.txt"):
    path = tmp_path / name
    if name.endswith(".gz"):
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text)
    return path


def _block_dense(monkeypatch):
    """Make every whole-matrix dense conversion of a sparse matrix raise."""
    def refuse(self, *args, **kwargs):
        raise AssertionError(f"dense copy of a {type(self).__name__} {self.shape}")

    for cls in (sp.csr_matrix, sp.csr_array, sp.coo_matrix, sp.coo_array):
        for name in ("toarray", "todense"):
            monkeypatch.setattr(cls, name, refuse)


# ---------------------------------------------------------------------------------------
# dtype


@pytest.mark.parametrize("name", ["train.txt", "train.txt.gz"])
@pytest.mark.parametrize("dense", [True, False])
def test_float32_equals_float64_load_cast(tmp_path, name, dense):
    path = _write(tmp_path, name=name)
    f64 = load_letor(path, dense=dense)
    f32 = load_letor(path, dense=dense, dtype=np.float32)
    assert f32.X.dtype == np.float32 and f64.X.dtype == np.float64
    assert f32.y.dtype == np.float64 and f32.qid.dtype == np.int64
    assert sp.issparse(f32.X) is not dense and f32.X.shape == f64.X.shape == (5, 5)
    want = (f64.X.toarray() if not dense else f64.X).astype(np.float32)
    got = f32.X.toarray() if not dense else f32.X
    np.testing.assert_array_equal(got, want)  # NaN in the same place, every value the cast one
    assert not np.array_equal(got.astype(np.float64), f64.X if dense else f64.X.toarray(), equal_nan=True)
    np.testing.assert_array_equal(f32.y, f64.y)
    np.testing.assert_array_equal(f32.qid, f64.qid)


@pytest.mark.parametrize("dtype", [np.float32, "float32", np.dtype("float32"), np.float64, float, "f8"])
def test_dtype_spellings_accepted(tmp_path, dtype):
    X = load_letor(_write(tmp_path), dtype=dtype).X
    assert X.dtype == np.dtype(dtype)


@pytest.mark.parametrize("dtype", [np.float16, np.int64, int, "int32", np.complex128, None, True, "x", 3])
def test_bad_dtype_refused_naming_the_argument(tmp_path, dtype):
    with pytest.raises(ValueError, match=r"dtype must be np\.float64 or np\.float32 .*got"):
        load_letor(_write(tmp_path), dtype=dtype)
    with pytest.raises(ValueError, match=r"dtype must be np\.float64 or np\.float32"):
        load_letor_folds(tmp_path, dtype=dtype)


def test_float32_parsed_as_float32(tmp_path, monkeypatch):
    """scikit-learn is asked for float32 itself (no float64 matrix on the way), and the one dense
    conversion is of the float32 CSR."""
    asked, converted = [], []
    real_load, real_toarray = letor_module.load_svmlight_file, sp.csr_matrix.toarray

    def load(*args, **kwargs):
        asked.append(kwargs.get("dtype"))
        return real_load(*args, **kwargs)

    def toarray(self, *args, **kwargs):
        converted.append(self.dtype)
        return real_toarray(self, *args, **kwargs)

    monkeypatch.setattr(letor_module, "load_svmlight_file", load)
    monkeypatch.setattr(sp.csr_matrix, "toarray", toarray)
    X = load_letor(_write(tmp_path), dtype=np.float32).X
    assert set(asked) == {np.float32} and set(converted) == {np.dtype(np.float32)} and X.dtype == np.float32


def test_folds_pass_dtype(tmp_path):
    _write(tmp_path, name="train.txt")
    _write(tmp_path, TEXT.replace("5:", "7:"), name="test.txt.gz")  # wider: the fold's width is 7
    (fold,) = load_letor_folds(tmp_path, dtype=np.float32)
    (ref,) = load_letor_folds(tmp_path)
    for got, want in ((fold.train, ref.train), (fold.test, ref.test)):
        assert got.X.dtype == np.float32 and got.X.shape == want.X.shape == (5, 7)
        np.testing.assert_array_equal(got.X, want.X.astype(np.float32))


# ---------------------------------------------------------------------------------------
# no dense copy, no whole text in memory


def test_csr_load_makes_no_dense_copy(tmp_path, monkeypatch):
    _block_dense(monkeypatch)
    for dtype in (np.float64, np.float32):
        X, y, qid = load_letor(_write(tmp_path), dense=False, dtype=dtype)
        assert sp.issparse(X) and X.format == "csr" and X.dtype == dtype and X.shape == (5, 5)
        wide = load_letor(_write(tmp_path), dense=False, dtype=dtype, n_features=9).X
        assert sp.issparse(wide) and wide.shape == (5, 9)


def test_csr_load_refuses_inf_without_a_dense_copy(tmp_path, monkeypatch):
    _block_dense(monkeypatch)
    path = _write(tmp_path, TEXT.replace("4:2.71828", "4:-inf"))
    for dtype in (np.float64, np.float32):
        with pytest.raises(ValueError, match=r"train\.txt, line 7 has the feature value -inf for feature 4; "
                                             r"features must be finite, or NaN"):
            load_letor(path, dense=False, dtype=dtype)


def test_huge_index_checked_without_a_dense_copy(tmp_path, monkeypatch):
    _block_dense(monkeypatch)
    path = _write(tmp_path, "1 qid:1 10000000:1\n0 qid:1 1:2\n")
    with pytest.raises(ValueError, match=r"line 1 uses feature index 10000000.*dense=False"):
        load_letor(path)
    assert load_letor(path, dense=False).X.shape == (2, 10_000_000)


def test_good_file_is_streamed_not_read_whole(tmp_path, monkeypatch):
    """The text is read whole only to word an error."""
    def refuse(path, what):
        raise AssertionError(f"{path} read whole")

    monkeypatch.setattr(letor_module, "read_bytes", refuse)
    for name in ("train.txt", "train.txt.gz"):
        assert load_letor(_write(tmp_path, name=name), dtype=np.float32).X.shape == (5, 5)


# ---------------------------------------------------------------------------------------
# query ids collected as the lines pass: scikit-learn's query_id=True is the oracle


@pytest.mark.parametrize("name", ["train.txt", "train.txt.gz"])
def test_query_ids_and_rows_match_sklearn(tmp_path, name):
    rng = np.random.default_rng(3)
    lines, qid = ["# LETOR 4.0 style: comments, blank lines, '#' inside rows"], 0
    for _ in range(40):
        qid += int(rng.integers(1, 5))
        for _ in range(int(rng.integers(1, 9))):
            feats = " ".join(f"{j}:{rng.normal():.6g}" for j in sorted(rng.choice(46, 5, replace=False) + 1))
            lines.append(f"{int(rng.integers(0, 3))} qid:{qid} {feats} #docid = GX{qid} qid:{qid + 1000} inc = 1")
        if rng.random() < 0.3:
            lines.append("   ")
    path = _write(tmp_path, "\n".join(lines) + "\n", name=name)
    Xs, ys, qs = load_svmlight_file(str(path), query_id=True, zero_based=False)
    for dense in (True, False):
        got = load_letor(path, dense=dense)
        np.testing.assert_array_equal(got.qid, qs)
        np.testing.assert_array_equal(got.y, ys)
        np.testing.assert_array_equal(got.X if dense else got.X.toarray(), Xs.toarray())


def test_companion_file_with_dtype(tmp_path):
    path = _write(tmp_path, "1 1:0.1\n0 1:0.2 2:0.3\n2 2:0.7\n", name="rank.train.gz")
    (tmp_path / "rank.train.query").write_text("2\n1\n")
    X, y, qid = load_letor(path, dtype=np.float32)
    assert X.dtype == np.float32 and qid.tolist() == [0, 0, 1]
    np.testing.assert_array_equal(X, np.array([[0.1, 0], [0.2, 0.3], [0, 0.7]], dtype=np.float32))


# ---------------------------------------------------------------------------------------
# failures found while streaming keep their messages


def test_binary_after_good_lines_names_its_line(tmp_path):
    path = tmp_path / "f.txt"
    path.write_bytes(b"1 qid:1 1:1\n0 qid:1 1:2\n\x00\x01\xff\n")
    with pytest.raises(ValueError, match=r"f\.txt is binary.*NUL byte on line 3"):
        load_letor(path, dtype=np.float32)


def test_truncated_gzip_with_dtype(tmp_path):
    path = tmp_path / "f.txt.gz"
    data = gzip.compress(("2 qid:1 1:0.5 2:1\n0 qid:1 1:0.1 2:0\n" * 200).encode())
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match=r"f\.txt\.gz is a truncated or corrupt gzip file"):
        load_letor(path, dtype=np.float32)


@pytest.mark.parametrize("text, message", [
    ("1 qid:1 1:1\n1 qid:x 1:1\n", r"line 2: the query id in 'qid:x' is not an integer"),
    ("1 qid:1 1:1\n1 qid 1:1\n", r"line 2: the field 'qid' is not '<index>:<value>'"),
    ("1 qid:1 0:1\n", r"line 1: the feature index in '0:1' is below 1"),
    ("1 qid:1 1:1\n0 1:2\n", r"only 1 carry a 'qid:' field"),
    ("nan qid:1 1:1\n", r"line 1 has the label nan"),
])
def test_parse_errors_keep_their_messages(tmp_path, text, message):
    for dtype in (np.float64, np.float32):
        with pytest.raises(ValueError, match=message):
            load_letor(_write(tmp_path, text), dense=False, dtype=dtype)


# ---------------------------------------------------------------------------------------
# blocks of rows: the file is parsed a few MiB at a time; any block size gives the same split


def _many_rows(rng, n_lists=30, width=46, comment=False):
    lines = []
    for q in range(1, n_lists + 1):
        for _ in range(int(rng.integers(1, 12))):
            cols = np.sort(rng.choice(width, int(rng.integers(1, 8)), replace=False)) + 1
            feats = " ".join(f"{j}:{rng.normal() * 10:.7g}" for j in cols)
            lines.append(f"{int(rng.integers(0, 5))} qid:{3 * q} {feats}" + (" # doc" if comment else ""))
        if rng.random() < 0.2:
            lines.append("# between lists")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("block_bytes", [1, 37, 500, 1 << 24])
@pytest.mark.parametrize("name", ["train.txt", "train.txt.gz"])
def test_any_block_size_gives_the_same_split(tmp_path, monkeypatch, block_bytes, name):
    monkeypatch.setattr(letor_module, "_BLOCK_BYTES", block_bytes)
    path = _write(tmp_path, _many_rows(np.random.default_rng(block_bytes), comment=True), name=name)
    Xs, ys, qs = load_svmlight_file(str(path), query_id=True, zero_based=False)
    for dtype in (np.float64, np.float32):
        want = Xs.toarray().astype(dtype)
        dense = load_letor(path, dtype=dtype)
        csr = load_letor(path, dtype=dtype, dense=False)
        wide = load_letor(path, dtype=dtype, dense=False, n_features=50)
        np.testing.assert_array_equal(dense.X, want)
        np.testing.assert_array_equal(csr.X.toarray(), want)
        np.testing.assert_array_equal(wide.X.toarray()[:, : want.shape[1]], want)
        assert csr.X.indices.dtype == np.int32 and csr.X.has_sorted_indices and wide.X.shape[1] == 50
        for got in (dense, csr):
            np.testing.assert_array_equal(got.y, ys)
            np.testing.assert_array_equal(got.qid, qs)


def test_dense_load_converts_only_blocks(tmp_path, monkeypatch):
    """A dense X is made block by block: no dense copy of the whole matrix, sparse or not."""
    monkeypatch.setattr(letor_module, "_BLOCK_BYTES", 200)
    path = _write(tmp_path, _many_rows(np.random.default_rng(5)))
    n_rows = load_svmlight_file(str(path), zero_based=False)[0].shape[0]
    shapes, real = [], sp.csr_matrix.toarray

    def toarray(self, *args, **kwargs):
        shapes.append(self.shape)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(sp.csr_matrix, "toarray", toarray)
    X = load_letor(path, dtype=np.float32).X
    assert X.shape[0] == n_rows and len(shapes) > 5 and max(rows for rows, _ in shapes) < n_rows / 5


def test_errors_in_a_later_block_name_their_line(tmp_path, monkeypatch):
    monkeypatch.setattr(letor_module, "_BLOCK_BYTES", 30)
    rows = [f"{i % 3} qid:{i // 4} 1:{i} 2:0.5" for i in range(40)]
    for dense in (True, False):
        text = rows[:25] + ["1 qid:6 1:2 2:inf"] + rows[26:]
        with pytest.raises(ValueError, match=r"line 26 has the feature value inf for feature 2"):
            load_letor(_write(tmp_path, "\n".join(text) + "\n"), dense=dense)
        text = rows[:30] + ["-1 qid:7 1:2"] + rows[31:]
        with pytest.raises(ValueError, match=r"line 31 has the label -1"):
            load_letor(_write(tmp_path, "\n".join(text) + "\n"), dense=dense)
    text = rows[:33] + ["1 qid:8 1:2 10000000:1"] + rows[34:]
    with pytest.raises(ValueError, match=r"line 34 uses feature index 10000000, but the file has only 3 distinct"):
        load_letor(_write(tmp_path, "\n".join(text) + "\n"))


def test_wide_block_beside_dense_blocks(tmp_path, monkeypatch):
    """A block wider than DENSE_WIDTH_LIMIT stays sparse until the join; the dense X is still exact."""
    monkeypatch.setattr(letor_module, "_BLOCK_BYTES", 2000)
    rng = np.random.default_rng(9)
    lines = [f"1 qid:1 {j}:{rng.normal():.6g}" for j in range(1, 400)]  # narrow blocks first
    lines += [f"0 qid:2 {j}:{rng.normal():.6g}" for j in range(10_000, 12_001, 2)]  # 1001 more columns
    path = _write(tmp_path, "\n".join(lines) + "\n")
    X = load_letor(path).X
    assert X.shape == (len(lines), 12_000)
    np.testing.assert_array_equal(X, load_svmlight_file(str(path), zero_based=False)[0].toarray())


def test_the_bundled_example_loads_as_float32_with_the_float64_values():
    from gbrank.datasets import load_example

    wide, narrow = load_example(), load_example(dtype=np.float32)
    for split in ("train", "test"):
        a, b = getattr(wide, split), getattr(narrow, split)
        assert b.X.dtype == np.float32 and a.X.dtype == np.float64
        np.testing.assert_array_equal(b.X, a.X.astype(np.float32))
        np.testing.assert_array_equal(b.y, a.y)
        np.testing.assert_array_equal(b.qid, a.qid)
    with pytest.raises(ValueError, match="dtype must be np.float64 or np.float32"):
        load_example(dtype=np.int32)
