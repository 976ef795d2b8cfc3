"""Reading data files as bytes, with every failure named by file (and line)."""

from __future__ import annotations

import gzip
import pathlib
import zlib


def read_bytes(path: pathlib.Path, what: str) -> bytes:
    """The bytes of ``path``, gunzipped when they start with gzip's magic number.

    Raises ``ValueError`` naming the file for a truncated or corrupt gzip stream and for a
    binary file (a NUL byte, with its line), ``FileNotFoundError`` for a missing file and
    ``IsADirectoryError`` for a folder."""
    path = pathlib.Path(path)
    if path.is_dir():
        raise IsADirectoryError(f"{path} is a folder; give the {what} file itself")
    if not path.is_file():
        raise FileNotFoundError(f"no {what} file at {path}")
    data = path.read_bytes()
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (EOFError, OSError, zlib.error) as exc:
            raise ValueError(
                f"{path} is a truncated or corrupt gzip file ({exc}); download or compress it "
                "again, or give the uncompressed text"
            ) from None
    nul = data.find(b"\x00")
    if nul >= 0:
        raise ValueError(
            f"{path} is binary, not a {what} text file (a NUL byte on line {line_of(data, nul)}); "
            "is it the right file?"
        )
    return data


def line_of(data: bytes, offset: int) -> int:
    """1-based line number of byte ``offset``."""
    return data.count(b"\n", 0, offset) + 1


def decode(data: bytes, path, what: str, encoding: str = "utf-8") -> str:
    """``data`` as text; a byte that is not ``encoding`` is reported with its line."""
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise ValueError(
            f"{path} is not {encoding} text (byte {data[exc.start]:#04x} on line "
            f"{line_of(data, exc.start)}); is it a {what} file?"
        ) from None
