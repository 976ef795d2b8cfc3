"""User-item interaction data as long tables: MovieLens ratings in each of their release
formats, CiteULike libraries, and plain user/item tables."""

from __future__ import annotations

import io
import os
import pathlib
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._validation import plural
from ._files import decode, read_bytes
from ._formats import CITEULIKE_FILES, content_formats, header_fields, id_columns, interaction_format, name_format
from ._paths import resolve


def _file_in(path: pathlib.Path, names: tuple[str, ...], dataset: str) -> pathlib.Path:
    """``path`` itself if it is a file, else the one of ``names`` inside the folder."""
    if path.is_file():
        return path
    found = [path / n for n in names if (path / n).is_file()]
    if not found:
        raise FileNotFoundError(
            f"{path} holds none of {', '.join(names)}; pass the {dataset} folder or the file "
            "itself"
        )
    if len(found) > 1:
        raise ValueError(
            f"{path} holds both {found[0].name} and {found[1].name}; keep one, or pass the file "
            "to read"
        )
    return found[0]


# ---- MovieLens ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _RatingsFormat:
    """How one MovieLens release writes its ratings: one line per rating, four fields."""

    name: str  # the file name in the release
    sep: str
    header: bool  # a header line naming the columns (ratings.csv only)
    releases: str


_COLUMNS = {"userId": "user", "movieId": "item", "rating": "rating", "timestamp": "timestamp"}
_RATINGS_HEADER = ",".join(_COLUMNS)

#: The MovieLens ratings files gbrank reads, by file name (each may also be gzipped, ``.gz``).
MOVIELENS_FORMATS = {
    "ratings.csv": _RatingsFormat("ratings.csv", ",", True, "ml-latest-small, ml-latest, ml-20m, ml-25m, ml-32m"),
    "ratings.dat": _RatingsFormat("ratings.dat", "::", False, "ml-1m, ml-10m"),
    "u.data": _RatingsFormat("u.data", "\t", False, "ml-100k"),
}
_MOVIELENS_FILES = tuple(n + gz for n in MOVIELENS_FORMATS for gz in ("", ".gz"))

#: The MovieLens rating scale: 0.5 to 5 stars in half-star steps (whole stars 1 to 5 in
#: ml-100k and ml-1m); ``load_movielens(check_scale=True)`` refuses any other value.
MOVIELENS_SCALE = (0.5, 5.0, 0.5)


def _format_of(path: pathlib.Path, lines: list[str]) -> _RatingsFormat | None:
    """The MovieLens format of a ratings file: by its first lines (``content_formats``), else
    by its name (then the parser names the bad first line); None if neither tells."""
    found = [f for f in content_formats(lines, path) if f in MOVIELENS_FORMATS]
    name = found[0] if found else name_format(path)
    return MOVIELENS_FORMATS.get(name)


def load_movielens(path_or_name: str | os.PathLike = "movielens-latest-small", *,
                   check_scale: bool = True) -> pd.DataFrame:
    """MovieLens explicit ratings as a long table, one row per (user, movie) rating.

    Reads the ratings of any MovieLens release in its own format, plain or gzipped
    (``.gz``), from the file or from the release folder holding it:

    * ``ratings.csv``: ml-latest(-small), ml-20m, ml-25m, ml-32m; the header
      ``userId,movieId,rating,timestamp``, then one comma-separated rating per line;
    * ``ratings.dat``: ml-1m, ml-10m; ``UserID::MovieID::Rating::Timestamp``, no header;
    * ``u.data``: ml-100k; ``user item rating timestamp`` separated by tabs, no header.

    The format is told by the file's first lines, whatever its name (``u1.base``,
    ``r1.train``... are read too); the name decides only when the first line is damaged,
    and then the error names that line.  Every format gives the same table.  Ids are kept as
    MovieLens numbers them.

    Parameters
    ----------
    path_or_name : str or path-like, default "movielens-latest-small"
        A dataset name (see ``resolve``), a release folder, or the ratings file itself.
    check_scale : bool, default True
        Refuse a rating off the MovieLens scale (``MOVIELENS_SCALE``: 0.5 to 5 stars in
        half-star steps; ml-100k and ml-1m use whole stars 1 to 5): such a value means the
        file is not what it claims.  ``False`` reads any finite, non-negative rating.

    Returns
    -------
    pandas.DataFrame
        Columns ``user`` (int64), ``item`` (int64, the movieId), ``rating`` (float64) and
        ``timestamp`` (int64, Unix seconds, UTC), in file order.  ``attrs["format"]`` is
        the format read (``"ratings.csv"``, ``"ratings.dat"`` or ``"u.data"``).

    Raises
    ------
    FileNotFoundError
        If the folder holds no ratings file (or the name cannot be resolved).
    ValueError
        Naming the file and line: if a ``ratings.csv`` lacks one of the four columns; if
        the file is empty, holds only the header, is binary, not UTF-8 or a truncated gzip
        stream; if a line has more or fewer fields than four (or than the header); if an id
        or timestamp is not a non-negative integer; if a rating is empty, not a number,
        NaN, infinite, negative or (with ``check_scale``) off the MovieLens scale; or if a
        (user, movie) pair is rated twice.  Also if the format cannot be told from the
        file's name or first line.  Nothing is dropped or turned into NaN.

    Notes
    -----
    Files are parsed with pandas' C reader and the columns then checked as arrays; only
    when a check fails is the file read again line by line, to name the first bad line.

    Examples
    --------
    >>> ratings = load_movielens()             # with GBRANK_DATA set
    >>> len(ratings), ratings["user"].nunique(), float(ratings["rating"].max())
    (100836, 610, 5.0)
    """
    resolved = resolve(path_or_name)
    if resolved.is_file() and resolved.suffix.lower() == ".zip":
        raise ValueError(f"{resolved} is a zip archive; unzip it and pass the release folder (or its ratings file)")
    path = _file_in(resolved, _MOVIELENS_FILES, "MovieLens")
    text = decode(read_bytes(path, "MovieLens ratings"), path, "MovieLens ratings")
    lines = [line.strip() for line in text.split("\n", 64)[:64] if line.strip()][:20]
    fmt = _format_of(path, lines)
    if fmt is None:
        first = lines[0] if lines else ""
        raise ValueError(
            f"{path} is not a MovieLens ratings file gbrank recognises: its first line {first[:60]!r} is neither "
            f"the ratings.csv header {_RATINGS_HEADER}, nor 'user::item::rating::timestamp' (ratings.dat), nor "
            "four tab-separated fields (u.data); name the file after its format, or read any interaction file "
            "with load_interactions")
    return _read_ratings(text, path, fmt, check_scale)


def _read_ratings(text: str, path, fmt: _RatingsFormat, check_scale: bool) -> pd.DataFrame:
    """The table of a MovieLens ratings file in a known format (see load_movielens)."""
    frame = _fast_ratings(text, fmt, bool(check_scale))
    if frame is None:  # a check failed: read again line by line, to name the first bad line
        frame = _parse_ratings(text, path, fmt, bool(check_scale))
    frame.attrs["format"] = fmt.name
    return frame


def _fast_ratings(text: str, fmt: _RatingsFormat, check_scale: bool) -> pd.DataFrame | None:
    """The table through pandas' C reader, or None when any check fails (then
    :func:`_parse_ratings` finds and names the first bad line)."""
    if fmt.sep == "::":
        text = text.replace("::", "\t")
    sep = "\t" if fmt.sep in ("::", "\t") else ","
    try:
        with warnings.catch_warnings():  # a line longer than the header: refused, never cut
            warnings.simplefilter("error", pd.errors.ParserWarning)
            raw = pd.read_csv(io.StringIO(text), sep=sep, header=0 if fmt.header else None,
                              names=None if fmt.header else list(_COLUMNS), dtype=np.float64, engine="c",
                              index_col=False, skipinitialspace=True)
    except (ValueError, pd.errors.ParserError, pd.errors.ParserWarning, pd.errors.EmptyDataError):
        return None
    if fmt.header:
        raw.columns = [str(c).strip() for c in raw.columns]
        if any(c not in raw.columns for c in _COLUMNS) or raw.columns.duplicated().any():
            return None
    if len(raw) == 0 or raw.isna().to_numpy().any():
        return None
    out = {}
    for name, col in _COLUMNS.items():
        values = raw[name].to_numpy(dtype=np.float64)
        if _bad_values(name, values).any() or (name == "rating" and check_scale and _off_scale(values).any()):
            return None
        out[col] = values if name == "rating" else values.astype(np.int64)
    frame = pd.DataFrame(out)
    if frame.duplicated(["user", "item"]).any():
        return None
    return frame


def _bad_values(name: str, values: np.ndarray) -> np.ndarray:
    """True where a value breaks the rule of its column (see load_movielens)."""
    if name != "rating":
        return ~np.isfinite(values) | (values != np.round(values)) | (values < 0)
    return ~np.isfinite(values) | (values < 0)


def _off_scale(values: np.ndarray) -> np.ndarray:
    low, high, step = MOVIELENS_SCALE
    return (values < low) | (values > high) | (values / step != np.round(values / step))


def _parse_ratings(text: str, path, fmt: _RatingsFormat, check_scale: bool = True) -> pd.DataFrame:
    """The four columns of a MovieLens ratings file, every field checked (see load_movielens)."""
    numbered = [(i, line) for i, line in enumerate(text.split("\n"), start=1) if line.strip()]
    if not numbered:
        hint = f" starts with the header {_RATINGS_HEADER}" if fmt.header else " holds one rating per line"
        raise ValueError(f"{path} is empty; a MovieLens {fmt.name} file{hint}")
    if fmt.header:
        header = [h.strip() for h in numbered[0][1].strip().split(",")]
        missing = [c for c in _COLUMNS if c not in header]
        if missing:
            raise ValueError(
                f"{path} lacks the column{'s' if len(missing) > 1 else ''} {missing}; a MovieLens ratings file has "
                "the header "
                f"{_RATINGS_HEADER}"
            )
        rows = numbered[1:]
        if not rows:
            raise ValueError(f"{path} holds a header but no ratings")
        described = f"the header has {len(header)} ({','.join(header)})"
    else:
        header, rows = list(_COLUMNS), numbered
        described = f"a {fmt.name} line has 4 ({fmt.sep.join(_COLUMNS)!r})"
    width = len(header)
    lines = np.fromiter((i for i, _ in rows), dtype=np.int64, count=len(rows))
    fields = [line.rstrip("\r").split(fmt.sep) for _, line in rows]
    counts = np.fromiter((len(f) for f in fields), dtype=np.int64, count=len(fields))
    if (counts != width).any():
        r = int(np.flatnonzero(counts != width)[0])
        raise ValueError(
            f"{path}, line {lines[r]} has {counts[r]} fields, but {described}: "
            f"{rows[r][1].strip()[:80]!r}; every line needs one value per column"
        )
    out = {}
    for name, col in _COLUMNS.items():
        raw = pd.Series([f[header.index(name)].strip() for f in fields], dtype=object)
        values = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=np.float64)
        bad = _bad_values(name, values)
        rule = ("a finite, non-negative number of stars" if name == "rating" else
                "a non-negative integer" + (" (Unix seconds)" if name == "timestamp" else " id"))
        if not bad.any() and name == "rating" and check_scale:
            bad = _off_scale(values)
            low, high, step = MOVIELENS_SCALE
            rule = (f"on the MovieLens scale ({low:g} to {high:g} stars in steps of {step:g}); is this a MovieLens "
                    "file? To read other scales, pass check_scale=False to load_movielens, or give the file a header "
                    "user,item,rating (a table, read without the scale check)")
        if bad.any():
            r = int(np.flatnonzero(bad)[0])
            shown = repr(raw.iloc[r]) if raw.iloc[r] else "(an empty field)"
            raise ValueError(
                f"{path}, line {lines[r]}: {name} {shown} is not {rule} ({plural(bad.sum(), 'such line')} in "
                "all); fix or drop those lines"
            )
        out[col] = values if name == "rating" else values.astype(np.int64)
    frame = pd.DataFrame(out)
    dup = frame.duplicated(["user", "item"], keep=False).to_numpy()
    if dup.any():
        first, *_ = np.flatnonzero(dup)
        again = np.flatnonzero(dup & (frame["user"].to_numpy() == frame["user"].iat[first])
                               & (frame["item"].to_numpy() == frame["item"].iat[first]))
        raise ValueError(
            f"{path} rates movie {frame['item'].iat[first]} twice for user {frame['user'].iat[first]} "
            f"(lines {lines[again[0]]} and {lines[again[1]]}); keep one rating per (user, movie), "
            "e.g. the latest"
        )
    return frame


# ---- CiteULike ---------------------------------------------------------------------------


def load_citeulike(path_or_name: str | os.PathLike = "citeulike-a") -> pd.DataFrame:
    """CiteULike user libraries (implicit feedback) as a long table of (user, item) pairs.

    Reads ``users.dat`` of CiteULike-a (Wang & Blei, KDD 2011): line ``u`` (0-based) is user
    ``u``'s library, written ``n i1 i2 ... in`` with the count ``n`` first and 0-based
    article ids after it.  The count is checked on every line, and a library lists each
    article once (as MovieLens rates a movie once per user).  Every pair is a positive
    ("like"), so ``rating`` is 1.0 throughout; there are no timestamps.

    Parameters
    ----------
    path_or_name : str or path-like, default "citeulike-a"
        A dataset name (see ``resolve``), the folder holding ``users.dat``, or the file.

    Returns
    -------
    pandas.DataFrame
        Columns ``user`` (int64), ``item`` (int64) and ``rating`` (float64, all 1.0), users
        in line order and items in the order listed.

    Raises
    ------
    ValueError
        Naming the line and the user: if a line's count differs from the number of ids on
        it, a line is not integers or is empty, an id is negative, or a line lists an item
        twice (with the number of repeated ids in the whole file).  Nothing is dropped.

    Examples
    --------
    >>> likes = load_citeulike()               # with GBRANK_DATA set
    >>> len(likes), likes["user"].nunique(), likes["item"].nunique()
    (204986, 5551, 16980)
    """
    path = _file_in(resolve(path_or_name), CITEULIKE_FILES, "CiteULike")
    users, items = [], []
    repeated, repeated_lines, first_repeat = 0, 0, None
    text = decode(read_bytes(path, "CiteULike users.dat"), path, "CiteULike users.dat", "ascii")
    for user, line in enumerate(text.splitlines(keepends=True)):
        where = f"line {user + 1} of {path} (user {user})"
        try:
            numbers = [int(tok) for tok in line.split()]
        except ValueError:
            raise ValueError(
                f"{where} is not a list of integers: {line.strip()[:60]!r}"
            ) from None
        if not numbers:
            raise ValueError(
                f"{where} is empty; each line must be 'n i1 ... in' (write '0' for a user "
                "with no items)"
            )
        count, library = numbers[0], numbers[1:]
        if count != len(library):
            raise ValueError(
                f"{where} announces {count} items but lists {len(library)}; each line must "
                "be 'n i1 ... in' with n the number of item ids after it"
            )
        if library and min(library) < 0:
            raise ValueError(f"{where} holds a negative item id {min(library)}; ids are 0-based")
        ids = np.asarray(library, dtype=np.int64)
        if len(np.unique(ids)) < len(ids):
            repeated += len(ids) - len(np.unique(ids))
            repeated_lines += 1
            if first_repeat is None:
                item = next(i for k, i in enumerate(library) if i in library[:k])
                at = [k + 1 for k, i in enumerate(library) if i == item]
                first_repeat = (where, item, at)
        users.append(np.full(count, user, dtype=np.int64))
        items.append(ids)
    if not users:
        raise ValueError(f"{path} is empty; it must hold one line per user")
    if first_repeat is not None:
        where, item, at = first_repeat
        raise ValueError(
            f"{where} lists item {item} twice (ids {at[0]} and {at[1]} of the line; "
            f"{plural(repeated, 'repeated id')} on {plural(repeated_lines, 'line')} in all); a library holds each "
            "article once: remove the repeated ids and lower each line's count to match")
    user = np.concatenate(users)
    return pd.DataFrame(
        {"user": user, "item": np.concatenate(items), "rating": np.ones(user.size)}
    )


# ---- any interaction file ------------------------------------------------------------------


def load_interactions(path_or_name: str | os.PathLike) -> pd.DataFrame:
    """Interactions from any file gbrank reads, as a long table: MovieLens, CiteULike or a table.

    The format is told by the file's content (:func:`interaction_format`), whatever its
    name; a folder stands for the MovieLens ratings file in it, else its CiteULike
    ``users.dat``:

    1. MovieLens ratings (:func:`load_movielens`): ``ratings.csv`` (the header
       ``userId,movieId,rating,timestamp``), ``ratings.dat`` (``u::i::r::t``) and ``u.data``
       (four tab-separated numbers), each plain or gzipped;
    2. CiteULike ``users.dat`` (:func:`load_citeulike`): ``n i1 ... in`` per user;
    3. any other delimited text table (comma, tab, semicolon...: the delimiter is sniffed
       from the header), plain or gzipped, whose header names a ``user`` and an ``item``
       column (or ``user_id`` and ``item_id``; any case), and optionally ``rating``;
       without ``rating`` every pair is a positive (1.0).

    Parameters
    ----------
    path_or_name : str or path-like
        A dataset name (see ``resolve``: ``movielens-latest-small``, ``citeulike-a``...), a
        folder (its ratings file, else its ``users.dat``), or an interaction file.

    Returns
    -------
    pandas.DataFrame
        Columns ``user``, ``item``, ``rating`` (float64) and, for MovieLens, ``timestamp``.
        ``attrs["format"]`` is ``"ratings.csv"``, ``"ratings.dat"``, ``"u.data"``,
        ``"users.dat"`` or ``"table"``; ``attrs["implicit"]`` is True when the file holds
        no ratings (CiteULike, a table without ``rating``): binarise such data at 1.  For a
        table, ``attrs["columns"]`` names the columns read (``"user_id,item_id"``...).

    Raises
    ------
    FileNotFoundError
        If the path does not exist, or a folder holds none of these files.
    ValueError
        Naming the file and the fix: when the format cannot be told (lines that fit two
        formats, numbers without a header, an unknown first line) and as the loaders do,
        naming the line; for a table: a missing ``user`` or ``item`` column, a missing id
        (naming the rows), a rating that is not a finite, non-negative number, or a
        (user, item) pair given twice (naming it and its rows).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "likes.tsv").write_text("user\\titem\\nann\\tx\\nann\\ty\\nbob\\tx\\n")
    >>> table = load_interactions(folder / "likes.tsv")
    >>> table.to_dict("list")
    {'user': ['ann', 'ann', 'bob'], 'item': ['x', 'y', 'x'], 'rating': [1.0, 1.0, 1.0]}
    >>> table.attrs
    {'format': 'table', 'implicit': True, 'columns': 'user,item'}
    """
    path, fmt = interaction_format(path_or_name)
    if fmt in MOVIELENS_FORMATS:
        spec = MOVIELENS_FORMATS[fmt]
        frame = _read_ratings(decode(read_bytes(path, "MovieLens ratings"), path, "MovieLens ratings"), path, spec,
                              True)
        frame.attrs["implicit"] = False
        return frame
    if fmt == "users.dat":
        frame = load_citeulike(path)
        frame.attrs.update(format="users.dat", implicit=True)
        return frame
    return _load_table(path)


def _load_table(path: pathlib.Path) -> pd.DataFrame:
    """A delimited text table with ``user`` and ``item`` (or ``user_id`` and ``item_id``)
    columns, and optionally ``rating``."""
    text = decode(read_bytes(path, "interaction table"), path, "interaction table")
    first = next((line.strip() for line in text.split("\n", 64)[:64] if line.strip()), "")
    if not first:
        raise ValueError(f"{path} is empty; an interaction table has a header naming user and item columns")
    sep, _ = header_fields(first)
    try:
        frame = pd.read_csv(io.StringIO(text), sep=sep if sep else r"\s+", engine="c" if sep else "python",
                            skipinitialspace=True)
    except (ValueError, pd.errors.ParserError) as exc:
        raise ValueError(f"{path} is not a delimited text table ({' '.join(str(exc).split())})") from None
    frame.columns = [str(c).strip() for c in frame.columns]
    ids = id_columns(frame.columns)
    if ids is None:
        raise ValueError(
            f"{path} needs a header with columns user,item (or user_id,item_id) and optionally rating; it has "
            f"{[str(c) for c in frame.columns]}. gbrank also reads MovieLens ratings.csv, ratings.dat and u.data, "
            "and CiteULike users.dat: pass such a file as it was released")
    if len(frame) == 0:
        raise ValueError(f"{path} holds a header but no interactions")
    rating = next((c for c in frame.columns if c.lower() == "rating"), None)
    out = pd.DataFrame({"user": frame[ids[0]], "item": frame[ids[1]]})
    for col in ("user", "item"):
        missing = np.flatnonzero(out[col].isna().to_numpy())
        if len(missing):
            raise ValueError(
                f"{path}: {plural(len(missing), 'row')} {'has' if len(missing) == 1 else 'have'} no {col} id (data "
                f"rows {(missing[:5] + 1).tolist()}, row 1 being the line after the header); fill them in or drop "
                "those rows")
    if rating is not None:
        raw = frame[rating]
        values = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=np.float64)
        bad = np.flatnonzero(~np.isfinite(values) | (values < 0))
        if len(bad):
            raise ValueError(
                f"{path}, data row {bad[0] + 1} (row 1 being the line after the header): rating "
                f"{_show(raw.iloc[bad[0]])} is not a finite, non-negative number ({plural(len(bad), 'such row')} in "
                "all); fix or drop those rows")
        out["rating"] = values
    else:
        out["rating"] = 1.0
    dup = out.duplicated(["user", "item"], keep=False).to_numpy()
    if dup.any():
        rows = np.flatnonzero(dup)
        u, i = out["user"].iat[rows[0]], out["item"].iat[rows[0]]
        same = rows[(out["user"].to_numpy()[rows] == u) & (out["item"].to_numpy()[rows] == i)]
        raise ValueError(
            f"{path} gives the pair (user {_show(u)}, item {_show(i)}) more than once (data rows "
            f"{(same[:5] + 1).tolist()}; {plural(out.duplicated(['user', 'item']).sum(), 'repeated pair')} in all); "
            "keep one row per pair, e.g. pandas: df.groupby(['user', 'item'], as_index=False)['rating'].max()")
    out.attrs.update(format="table", implicit=rating is None,
                     columns=",".join([*ids, *([rating] if rating is not None else [])]))
    return out


def _show(value) -> str:
    """``repr`` of a value as the file wrote it (a numpy scalar shows as its Python value)."""
    return repr(value.item() if isinstance(value, np.generic) else value)
