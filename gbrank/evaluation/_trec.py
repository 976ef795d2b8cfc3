"""TREC runs and qrels: reading files, and every other form a run or qrels comes in.

A *run* line is ``qid Q0 docid rank score tag`` and a *qrels* line is
``qid iteration docid relevance``, fields separated by whitespace, as trec_eval reads them:
the rank column is ignored, a run line may carry extra trailing fields, lines starting with
``#`` are comments, and a file may be gzip-compressed.  :func:`as_run` and :func:`as_qrels`
turn a file, a pytrec_eval-style nested dict, a tidy DataFrame or a ranx ``Run``/``Qrels``
into one DataFrame: ``qid``, ``docid`` (categorical strings) and ``score`` or ``relevance``
(float64).  Every problem is reported with the file and line (or the row) and the fix.
"""

from __future__ import annotations

import gzip
import io
import os
import re
import zlib
from typing import Mapping

import numpy as np
import pandas as pd

from ._group import first_duplicate

RUN_EXAMPLE = "301 Q0 FBIS3-10082 1 12.5 myrun"
QRELS_EXAMPLE = "301 0 FBIS3-10082 1"
_COMMENT = re.compile(rb"(?:^|\n)[ \t]*#")


def _read_bytes(path, what: str) -> bytes:
    """The file's bytes, gunzipped when it starts with gzip's magic number."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except FileNotFoundError:
        raise FileNotFoundError(f"the {what} file {str(path)!r} does not exist") from None
    except IsADirectoryError:
        raise ValueError(f"the {what} path {str(path)!r} is a folder; give the {what} file") from None
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (EOFError, OSError, zlib.error) as exc:
            raise ValueError(f"the {what} file {str(path)!r} is a truncated or corrupt gzip file ({exc}); "
                             "compress it again or give the plain text") from None
    return data


def _line_of(data: bytes, offset: int) -> int:
    return data.count(b"\n", 0, offset) + 1


def _decode(data: bytes, path, what: str, example: str) -> str:
    """The file's text; refuses text that is not UTF-8, naming the line."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"the {what} file {str(path)!r} is not UTF-8 text (byte {data[exc.start]:#04x} on line "
                         f"{_line_of(data, exc.start)}); expected lines like {example!r}") from None


def _slow_parse(text: str, path, what: str, n_fields: int, extra_ok: bool, example: str):
    """Line by line, for files with comments, extra fields or errors: the columns as lists and
    each kept row's line number."""
    columns = [[] for _ in range(n_fields)]
    lines = []
    for number, raw in enumerate(text.split("\n"), start=1):
        fields = raw.split()
        if not fields or fields[0].startswith("#"):
            continue
        if len(fields) < n_fields or (len(fields) > n_fields and not extra_ok):
            raise ValueError(f"the {what} file {str(path)!r} has {len(fields)} fields on line {number}, needs "
                             f"{n_fields} (e.g. {example!r}): {raw.strip()[:80]!r}")
        for c in range(n_fields):
            columns[c].append(fields[c])
        lines.append(number)
    return columns, np.asarray(lines, dtype=np.int64)


def _read_trec(path, what: str, n_fields: int, keep: tuple[int, int, int], names: tuple[str, str, str],
               extra_ok: bool, example: str) -> pd.DataFrame:
    data = _read_bytes(path, what)
    nul = data.find(b"\x00")
    if nul >= 0:
        raise ValueError(f"the {what} file {str(path)!r} is binary, not a TREC {what} (a NUL byte on line "
                         f"{_line_of(data, nul)}); expected lines like {example!r}")
    if not data or data.isspace():
        raise ValueError(f"the {what} file {str(path)!r} is empty; expected lines like {example!r}")
    table = None
    comments = b"#" in data and _COMMENT.search(data) is not None
    if not comments:
        table = _read_arrow(data, n_fields, keep)  # pyarrow checks that the text is UTF-8
    text = None if table is not None else _decode(data, path, what, example)
    if table is None and not comments:
        try:
            last = n_fields - 1  # read too, so that a short line shows
            table = pd.read_csv(io.BytesIO(data), sep=r"\s+", header=None, usecols=sorted({*keep, last}),
                                dtype={c: str for c in {*keep, last}}, engine="c",
                                na_filter=False, skip_blank_lines=True)
            short = table[last].isna() | (table[last] == "")
            table = None if short.any() or table.shape[1] != len({*keep, last}) else table[list(keep)]
        except (pd.errors.ParserError, ValueError, IndexError):
            table = None
        if table is not None:
            width = pd.read_csv(io.BytesIO(data), sep=r"\s+", header=None, nrows=1, dtype=str).shape[1]
            if width < n_fields or (width > n_fields and not extra_ok):
                table = None
    if table is None:  # the slow path finds the line, or handles comments and extra fields
        columns, lines = _slow_parse(text, path, what, n_fields, extra_ok, example)
        table = pd.DataFrame({keep[0]: pd.Categorical(columns[keep[0]]), keep[1]: pd.Categorical(columns[keep[1]]),
                              keep[2]: columns[keep[2]]})
    else:
        lines = None  # both readers refuse a short line (pandas: the last field is read too)
    table.columns = list(names)
    for col in names[:2]:  # ids are strings, even when they look like numbers ("01" is not "1")
        if not isinstance(table[col].dtype, pd.CategoricalDtype):
            table[col] = table[col].astype("category")
    column = table[names[2]]
    values = column.to_numpy(dtype=np.float64) if column.dtype == np.float64 else \
        pd.to_numeric(column, errors="coerce").to_numpy(dtype=np.float64)
    bad = ~np.isfinite(values)
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        line = int(lines[first]) if lines is not None else _data_line(data, first)
        raise ValueError(f"the {what} file {str(path)!r} has a non-numeric or non-finite {names[2]} "
                         f"{table[names[2]].iloc[first]!r} on line {line}; expected lines like {example!r}")
    table[names[2]] = values
    _no_duplicates(table, what, str(path), lambda i: f"line {lines[i] if lines is not None else _data_line(data, i)}")
    return table


def _read_arrow(data: bytes, n_fields: int, keep: tuple[int, int, int]) -> pd.DataFrame | None:
    """pyarrow's CSV reader for the common case, single spaces between exactly ``n_fields``
    fields per line (several times faster than pandas'); None when it does not apply."""
    if b"\t" in data or b"  " in data or b"\r" in data or data[:1] == b" ":
        return None
    try:
        import pyarrow as pa
        import pyarrow.csv as pacsv
    except ImportError:  # pragma: no cover - pyarrow comes with pandas' string dtype
        return None
    names = [f"f{i}" for i in range(n_fields)]
    try:
        tab = pacsv.read_csv(
            io.BytesIO(data),
            read_options=pacsv.ReadOptions(column_names=names),
            parse_options=pacsv.ParseOptions(delimiter=" ", quote_char=False, escape_char=False),
            convert_options=pacsv.ConvertOptions(
                include_columns=[names[k] for k in keep],
                column_types={names[keep[0]]: pa.string(), names[keep[1]]: pa.string(), names[keep[2]]: pa.float64()},
                strings_can_be_null=False),
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return None
    out = {}
    for k in keep:
        col = tab.column(names[k]).combine_chunks()
        if k == keep[2]:
            out[k] = col.to_numpy(zero_copy_only=False)
        else:
            enc = col.dictionary_encode()
            out[k] = pd.Categorical.from_codes(enc.indices.to_numpy(zero_copy_only=False),
                                               pd.Index(enc.dictionary.to_pylist(), dtype=object))
    return pd.DataFrame(out)


def _data_line(data: bytes, row: int) -> int:
    """Line number of the ``row``-th non-blank line (0-based), for messages."""
    count = -1
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if raw.strip():
            count += 1
            if count == row:
                return number
    return row + 1


def _no_duplicates(table: pd.DataFrame, what: str, source: str, where) -> None:
    # int64 whatever width pandas chose for the codes: one compiled (and cached) specialisation
    q = table["qid"].cat.codes.to_numpy(dtype=np.int64)
    d = table["docid"].cat.codes.to_numpy(dtype=np.int64)
    first = int(first_duplicate(q, d, len(table["qid"].cat.categories))) if len(q) else -1
    if first >= 0:
        raise ValueError(
            f"the {what} {source} lists document {str(table['docid'].iloc[first])!r} twice for query "
            f"{str(table['qid'].iloc[first])!r} ({where(first)}); each (qid, docid) pair may appear once"
        )


def read_run(path) -> pd.DataFrame:
    """Read a TREC run file (plain or gzip): ``qid``, ``docid`` (categorical) and ``score``,
    in file order.  The rank column is ignored and extra trailing fields are allowed, as in
    trec_eval; ``#`` lines are comments.

    Examples
    --------
    >>> import tempfile, os
    >>> with tempfile.NamedTemporaryFile("w", suffix=".run", delete=False) as f:
    ...     _ = f.write("1 Q0 d1 1 2.5 r\\n1 Q0 d2 2 1.5 r extra\\n")
    >>> read_run(f.name)["score"].tolist(); os.unlink(f.name)
    [2.5, 1.5]
    """
    return _read_trec(path, "run", 6, (0, 2, 4), ("qid", "docid", "score"), True, RUN_EXAMPLE)


def read_qrels(path) -> pd.DataFrame:
    """Read a TREC qrels file (plain or gzip): ``qid``, ``docid`` (categorical) and
    ``relevance``, in file order.  Negative grades are kept: :func:`gbrank.evaluate_run`
    treats them as unjudged, as trec_eval does."""
    return _read_trec(path, "qrels", 4, (0, 2, 3), ("qid", "docid", "relevance"), False, QRELS_EXAMPLE)


def _from_nested(mapping: Mapping, value: str, what: str) -> pd.DataFrame:
    qids, docids, values = [], [], []
    for q, docs in mapping.items():
        if not isinstance(docs, Mapping):
            raise TypeError(f"a {what} dict maps each query id to a dict {{docid: {value}}}; query {q!r} maps to "
                            f"{type(docs).__name__}")
        qids.extend([str(q)] * len(docs))
        docids.extend(str(d) for d in docs)
        values.extend(docs.values())
    frame = pd.DataFrame({"qid": pd.Categorical(qids), "docid": pd.Categorical(docids), value: values})
    # a query given with no document is there, with an empty list (a file cannot say so)
    frame.attrs["empty_qids"] = [str(q) for q, docs in mapping.items() if not docs]
    return frame


def _as_ids(column: pd.Series) -> pd.Categorical:
    """Ids as categorical strings (a categorical of strings is kept as it is)."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        cats = column.cat.categories
        if pd.api.types.is_string_dtype(cats) or cats.dtype == object and all(isinstance(c, str) for c in cats):
            return column.array
        return column.cat.rename_categories(cats.astype(str)).array
    return pd.Categorical(column.astype(str))


def _as_table(obj, what: str, value: str, reader, aliases: tuple[str, ...]) -> pd.DataFrame:
    source = "table"
    if isinstance(obj, (str, os.PathLike)):
        return reader(obj)
    if type(obj).__module__.split(".")[0] == "ranx":  # ranx Run / Qrels
        obj = obj.to_dict()
        source = "ranx object"
    if isinstance(obj, Mapping):
        frame = _from_nested(obj, value, what)
        source = "dict" if source == "table" else source
    elif isinstance(obj, pd.DataFrame):
        cols = {c.lower() if isinstance(c, str) else c: c for c in obj.columns}
        val = next((cols[a] for a in (value, *aliases) if a in cols), None)
        if "qid" not in cols or "docid" not in cols or val is None:
            raise ValueError(f"a {what} DataFrame needs columns qid, docid and {value}; got {list(obj.columns)}")
        frame = pd.DataFrame({"qid": _as_ids(obj[cols["qid"]]), "docid": _as_ids(obj[cols["docid"]]),
                              value: obj[val].to_numpy()})
    else:
        raise TypeError(f"a {what} is a TREC file path, a nested dict {{qid: {{docid: {value}}}}}, a DataFrame "
                        f"(qid, docid, {value}) or a ranx object; got {type(obj).__name__}")
    try:
        numbers = pd.to_numeric(frame[value], errors="coerce").to_numpy(dtype=np.float64)
    except (TypeError, ValueError):
        numbers = np.full(len(frame), np.nan)
    bad = ~np.isfinite(numbers)
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        raise ValueError(f"the {what} {source} has a non-numeric or non-finite {value} {frame[value].iloc[first]!r} "
                         f"for query {str(frame['qid'].iloc[first])!r}, document {str(frame['docid'].iloc[first])!r}")
    frame[value] = numbers
    _no_duplicates(frame, what, source, lambda i: f"row {i}")
    return frame


def as_run(run) -> pd.DataFrame:
    """A run in any accepted form as a DataFrame ``qid, docid, score``."""
    return _as_table(run, "run", "score", read_run, ("sim",))


def as_qrels(qrels) -> pd.DataFrame:
    """Qrels in any accepted form as a DataFrame ``qid, docid, relevance``."""
    return _as_table(qrels, "qrels", "relevance", read_qrels, ("rel", "label", "judgement", "judgment"))
