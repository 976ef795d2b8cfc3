"""Which interaction format a file or folder holds, told by the file's content.

The first lines decide; the file's name only breaks a tie (a ``u.data`` whose lines also
read as CiteULike lines) or names the format of a file whose first line is damaged (its
loader then names the bad line).  Every refusal names the file and the fix.
"""

from __future__ import annotations

import gzip
import os
import pathlib
import zlib

from ._paths import resolve

#: every interaction format gbrank reads -> what its lines look like
FORMATS = {
    "ratings.csv": "MovieLens ratings.csv (ml-latest, ml-20m, ml-25m, ml-32m): the header "
                   "userId,movieId,rating,timestamp, then one rating per line",
    "ratings.dat": "MovieLens ratings.dat (ml-1m, ml-10m): user::item::rating::timestamp, no header",
    "u.data": "MovieLens u.data (ml-100k): user, item, rating and timestamp separated by tabs, no header",
    "users.dat": "CiteULike users.dat: one line per user, the number of items then the item ids, "
                 "separated by spaces",
    "table": "a delimited table (comma, tab, semicolon...) whose header names a user and an item column "
             "(user,item or user_id,item_id) and optionally rating",
}
MOVIELENS_NAMES = ("ratings.csv", "ratings.dat", "u.data")
MOVIELENS_FILES = tuple(n + gz for n in MOVIELENS_NAMES for gz in ("", ".gz"))
CITEULIKE_FILES = ("users.dat", "users.dat.gz")
#: the header names of a table's id columns, in the order of preference
ID_COLUMNS = (("user", "item"), ("user_id", "item_id"))

_HEAD_BYTES = 1 << 16
_HEAD_LINES = 20
_DELIMITERS = (",", "\t", ";", "|")


def _forms() -> str:
    return "; ".join(FORMATS.values())


def head_lines(path: pathlib.Path, limit: int = _HEAD_LINES) -> list[str]:
    """The first ``limit`` non-blank lines of a (gzipped) text file, stripped; at most the
    first 64 KiB are read.  Raises ``ValueError`` naming the file for binary content and for
    a gzip stream that cannot be read."""
    with open(path, "rb") as handle:
        gz = handle.read(2) == b"\x1f\x8b"
    try:
        with (gzip.open(path, "rb") if gz else open(path, "rb")) as handle:
            data = handle.read(_HEAD_BYTES)
    except (EOFError, OSError, zlib.error) as exc:
        raise ValueError(f"{path} is a truncated or corrupt gzip file ({exc}); download or compress it again, or "
                         "give the uncompressed text") from None
    if b"\x00" in data:
        raise ValueError(f"{path} is binary, not a text file of interactions; is it the right file? gbrank reads "
                         f"{_forms()}")
    lines = data.decode("utf-8", errors="replace").split("\n")
    if len(data) == _HEAD_BYTES and len(lines) > 1:
        lines = lines[:-1]  # the last line may be cut short
    return [line.strip() for line in lines if line.strip()][:limit]


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def header_fields(line: str) -> tuple[str | None, list[str]]:
    """(delimiter, fields) of a header line: the delimiter among comma, tab, semicolon and
    bar that splits it into the most fields (None: runs of spaces)."""
    best = max(_DELIMITERS, key=lambda d: len(line.split(d)))
    if len(line.split(best)) > 1:
        return best, [f.strip().strip('"').strip("'") for f in line.split(best)]
    return None, line.split()


def id_columns(names) -> tuple[str, str] | None:
    """The (user, item) columns of a table's header: ``user,item`` else ``user_id,item_id``
    (any case), as written; None when it has neither pair."""
    lower = {str(n).strip().lower(): n for n in names}
    for u, i in ID_COLUMNS:
        if u in lower and i in lower:
            return lower[u], lower[i]
    return None


def _citeulike_line(line: str) -> bool:
    tokens = line.split()
    return all(t.isdigit() for t in tokens) and int(tokens[0]) == len(tokens) - 1


def _u_data_line(line: str) -> bool:
    fields = line.split("\t")
    return len(fields) == 4 and all(_is_number(f) for f in fields)


def content_formats(lines: list[str], path) -> list[str]:
    """The formats the first lines of a file fit (several when they are ambiguous; none when
    they fit no format).  MovieLens' other tables (ml-1m's ``users.dat`` and ``movies.dat``)
    are refused with a pointer to the ratings."""
    if not lines:
        return []
    first = lines[0]
    if "::" in first:
        fields = first.split("::")
        if len(fields) == 4:
            return ["ratings.dat"]
        if len(fields) == 5 and not _is_number(fields[1]):
            raise ValueError(f"{path} is MovieLens ml-1m's user table (UserID::Gender::Age::...), not interactions; "
                             "pass ratings.dat or the release folder")
        if len(fields) == 3 and not _is_number(fields[1]):
            raise ValueError(f"{path} is a MovieLens movie table (MovieID::Title::Genres), not interactions; pass "
                             "ratings.dat or the release folder")
        return []
    _, fields = header_fields(first)
    if not all(_is_number(f) for f in fields):  # a header
        lower = {f.lower() for f in fields}
        if {"userid", "movieid"} <= lower:
            return ["ratings.csv"]
        return ["table"] if id_columns(fields) else []
    # the first line decides (the loader names a bad line further down); a u.data line of user 3 is also a
    # CiteULike line (3 then three ids): such a file is u.data unless every one of its first lines is both
    u_data, citeulike = _u_data_line(first), _citeulike_line(first)
    if u_data and citeulike and all(_citeulike_line(line) for line in lines):
        return ["u.data", "users.dat"]
    return ["u.data"] if u_data else ["users.dat"] if citeulike else []


def name_format(path: pathlib.Path) -> str | None:
    """The format a file's name promises (``u.data``, ``ratings.dat``, ``ratings.csv``,
    ``users.dat``, each maybe ``.gz``), or None."""
    name = path.name[:-3] if path.name.endswith(".gz") else path.name
    return name if name in MOVIELENS_NAMES or name == "users.dat" else None


def _in_folder(folder: pathlib.Path) -> pathlib.Path:
    """The interaction file of a release folder: its MovieLens ratings file, else its
    CiteULike ``users.dat`` (ml-1m's ``users.dat`` beside ``ratings.dat`` is its user table)."""
    found = [n for n in MOVIELENS_FILES if (folder / n).is_file()]
    if len(found) > 1:
        raise ValueError(f"{folder} holds both {found[0]} and {found[1]}; keep one, or pass the file to read")
    if not found:
        found = [n for n in CITEULIKE_FILES if (folder / n).is_file()]
    if not found:
        raise FileNotFoundError(
            f"{folder} holds none of {', '.join(MOVIELENS_FILES + CITEULIKE_FILES)}; pass a MovieLens release "
            "folder, a CiteULike folder, or the file to read (a table with a user,item header is read as a file)")
    return folder / found[0]


def interaction_format(path_or_name: str | os.PathLike) -> tuple[pathlib.Path, str]:
    """The file gbrank reads interactions from at a path, and the format it holds.

    A folder stands for the ratings file of a MovieLens release in it (``ratings.csv``,
    ``ratings.dat`` or ``u.data``, maybe ``.gz``; two of them are refused), else for its
    CiteULike ``users.dat``.  A file's format is told by its first lines, whatever its name:

    * ``ratings.csv``: the header ``userId,movieId,...`` (MovieLens ml-latest, ml-20m...);
    * ``ratings.dat``: ``user::item::rating::timestamp`` (MovieLens ml-1m, ml-10m);
    * ``u.data``: four numbers separated by tabs (MovieLens ml-100k; also ``u1.base``...);
    * ``users.dat``: CiteULike's lines ``n i1 ... in``, the count first;
    * ``table``: any other delimited text whose header names ``user`` and ``item`` (or
      ``user_id`` and ``item_id``) columns, and optionally ``rating``.

    When the lines fit two formats (tab-separated lines that are also CiteULike lines), the
    file's name decides, else it is refused; when they fit none (a damaged first line), a
    file named after a format is read in it, so that its loader names the bad line.

    Parameters
    ----------
    path_or_name : str or path-like
        A dataset name (see ``resolve``), a folder, or a file.

    Returns
    -------
    (pathlib.Path, str)
        The file and its format, one of ``FORMATS``.

    Raises
    ------
    FileNotFoundError
        If the path does not exist, or a folder holds none of these files.
    ValueError
        Naming the file and the fix: a binary file or broken gzip stream; two ratings files
        in one folder; MovieLens' user or movie table; lines that fit two formats; numbers
        without a header that fit no format; a line that is no format's.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "my_ratings.txt").write_text("196\\t242\\t3\\t881250949\\n186\\t302\\t3\\t891717742\\n")
    >>> interaction_format(folder / "my_ratings.txt")[1]
    'u.data'
    """
    path = resolve(path_or_name)
    if path.is_dir():
        path = _in_folder(path)
    if path.suffix.lower() == ".zip":
        raise ValueError(f"{path} is a zip archive; unzip it and pass the release folder (or its ratings file)")
    lines = head_lines(path)
    found = content_formats(lines, path)
    named = name_format(path)
    if len(found) == 1:
        return path, found[0]
    if found:
        if named in found:
            return path, named
        raise ValueError(
            f"{path}: its first lines read both as {FORMATS[found[0]]} and as {FORMATS[found[1]]}, so gbrank "
            f"cannot tell which it holds; name the file after its format ({' or '.join(found)}), or call "
            "gbrank.datasets.load_movielens or load_citeulike directly")
    if named:
        return path, named
    if not lines:
        raise ValueError(f"{path} is empty; gbrank reads {_forms()}")
    first = lines[0]
    _, fields = header_fields(first)
    if all(_is_number(f) for f in fields):
        raise ValueError(
            f"{path}: its first line {first[:60]!r} holds numbers without a header, in none of the headerless "
            f"formats gbrank reads ({FORMATS['ratings.dat']}; {FORMATS['u.data']}; {FORMATS['users.dat']}); add a "
            "header line naming the columns, e.g. user,item,rating, or name the file after its format")
    if len(fields) > 1:
        return path, "table"  # a header: the table's loader names the columns it needs
    raise ValueError(f"{path}: gbrank cannot tell what its first line {first[:60]!r} is; it reads {_forms()}")
