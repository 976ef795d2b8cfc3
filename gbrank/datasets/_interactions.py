"""User-item interaction data: MovieLens ratings and CiteULike libraries, as long tables."""

from __future__ import annotations

import os
import pathlib

import numpy as np
import pandas as pd

from ._files import decode, read_bytes
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


def load_movielens(path_or_name: str | os.PathLike = "movielens-latest-small") -> pd.DataFrame:
    """MovieLens explicit ratings as a long table, one row per (user, movie) rating.

    Reads the ``ratings.csv`` of a MovieLens release (``userId,movieId,rating,timestamp``
    with a header; ``ratings.csv.gz`` too), e.g. ml-latest-small, whose ratings run from
    0.5 to 5 stars in half-star steps.  Ids are kept as MovieLens numbers them.

    Parameters
    ----------
    path_or_name : str or path-like, default "movielens-latest-small"
        A dataset name (see ``resolve``), a release folder, or the ratings file itself.

    Returns
    -------
    pandas.DataFrame
        Columns ``user`` (int64), ``item`` (int64, the movieId), ``rating`` (float64) and
        ``timestamp`` (int64, Unix seconds, UTC), in file order.

    Raises
    ------
    FileNotFoundError
        If the folder holds no ratings file (or the name cannot be resolved).
    ValueError
        Naming the file and line: if the file lacks one of the four columns, is empty or
        holds only the header, is binary, not UTF-8 or a truncated gzip stream; if a line
        has more or fewer fields than the header; if an id or timestamp is not a
        non-negative integer; if a rating is empty, not a number, NaN, infinite or
        negative; or if a (user, movie) pair is rated twice.  Nothing is dropped or
        turned into NaN.

    Examples
    --------
    >>> ratings = load_movielens()             # with GBRANK_DATA set
    >>> len(ratings), ratings["user"].nunique(), float(ratings["rating"].max())
    (100836, 610, 5.0)
    """
    path = _file_in(resolve(path_or_name), ("ratings.csv", "ratings.csv.gz"), "MovieLens")
    text = decode(read_bytes(path, "MovieLens ratings"), path, "MovieLens ratings")
    return _parse_ratings(text, path)


_RATINGS_HEADER = "userId,movieId,rating,timestamp"


def _parse_ratings(text: str, path) -> pd.DataFrame:
    """The four columns of a MovieLens ratings file, every field checked (see load_movielens)."""
    numbered = [(i, line) for i, line in enumerate(text.split("\n"), start=1) if line.strip()]
    if not numbered:
        raise ValueError(f"{path} is empty; a MovieLens ratings file starts with the header {_RATINGS_HEADER}")
    header = [h.strip() for h in numbered[0][1].strip().split(",")]
    columns = {"userId": "user", "movieId": "item", "rating": "rating", "timestamp": "timestamp"}
    missing = [c for c in columns if c not in header]
    if missing:
        raise ValueError(
            f"{path} lacks the column(s) {missing}; a MovieLens ratings file has the header "
            f"{_RATINGS_HEADER}"
        )
    rows = numbered[1:]
    if not rows:
        raise ValueError(f"{path} holds a header but no ratings")
    width = len(header)
    lines = np.fromiter((i for i, _ in rows), dtype=np.int64, count=len(rows))
    fields = [line.rstrip("\r").split(",") for _, line in rows]
    counts = np.fromiter((len(f) for f in fields), dtype=np.int64, count=len(fields))
    if (counts != width).any():
        r = int(np.flatnonzero(counts != width)[0])
        raise ValueError(
            f"{path}, line {lines[r]} has {counts[r]} fields, but the header has {width} "
            f"({','.join(header)}): {rows[r][1].strip()[:80]!r}; every line needs one value per column"
        )
    out = {}
    for name, col in columns.items():
        raw = pd.Series([f[header.index(name)].strip() for f in fields], dtype=object)
        values = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=np.float64)
        if name == "rating":
            bad = ~np.isfinite(values) | (values < 0)
            rule = "a finite, non-negative number of stars"
        else:
            bad = ~np.isfinite(values) | (values != np.round(values)) | (values < 0)
            rule = "a non-negative integer" + (" (Unix seconds)" if name == "timestamp" else " id")
        if bad.any():
            r = int(np.flatnonzero(bad)[0])
            shown = repr(raw.iloc[r]) if raw.iloc[r] else "(an empty field)"
            raise ValueError(
                f"{path}, line {lines[r]}: {name} {shown} is not {rule} ({int(bad.sum())} such "
                "line(s)); fix or drop those lines"
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


def load_citeulike(path_or_name: str | os.PathLike = "citeulike-a") -> pd.DataFrame:
    """CiteULike user libraries (implicit feedback) as a long table of (user, item) pairs.

    Reads ``users.dat`` of CiteULike-a (Wang & Blei, KDD 2011): line ``u`` (0-based) is user
    ``u``'s library, written ``n i1 i2 ... in`` with the count ``n`` first and 0-based
    article ids after it.  The count is checked on every line.  Every pair is a positive
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
        If a line's count differs from the number of ids on it, or a line is not integers;
        the message names the line.

    Examples
    --------
    >>> likes = load_citeulike()               # with GBRANK_DATA set
    >>> len(likes), likes["user"].nunique(), likes["item"].nunique()
    (204986, 5551, 16980)
    """
    path = _file_in(resolve(path_or_name), ("users.dat", "users.dat.gz"), "CiteULike")
    users, items = [], []
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
        users.append(np.full(count, user, dtype=np.int64))
        items.append(np.asarray(library, dtype=np.int64))
    if not users:
        raise ValueError(f"{path} is empty; it must hold one line per user")
    user = np.concatenate(users)
    return pd.DataFrame(
        {"user": user, "item": np.concatenate(items), "rating": np.ones(user.size)}
    )
