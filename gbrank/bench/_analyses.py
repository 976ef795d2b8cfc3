"""Named analyses: what a benchmark's report adds only when asked.

A benchmark (a room: ``bench/letor``, ``bench/mf``) keeps its analyses in a plain dict,
``name -> Analysis`` (``letor/_analyses.py``, ``mf/_analyses.py``).  A report runs those the
command asked for (``--analyses NAME[,NAME]``), or, without the option, those its data preset
asks for (the paper's own data sets: the paper-reproduction runs); a user's own data gets
none.  The names run are recorded in ``config.json``.  Adding an analysis is one function and
one registry entry; the ``--help`` text and the error for an unknown name come from the
registry (``sorted(registry)``), so they cannot drift.
"""

from __future__ import annotations

import dataclasses
from typing import Callable, Mapping, Sequence

#: the word of ``--analyses`` that asks for no analysis, not even the data preset's
NONE = "none"


@dataclasses.dataclass(frozen=True)
class Analysis:
    """One named analysis: ``run(...)`` writes its files into the report folder; its
    arguments and what it returns are the room's (``letor``: the files written, none when
    there was nothing to analyse; ``mf``: its section of ``summary.md``)."""

    name: str
    description: str  # one line, shown by --help
    run: Callable[..., list]


def choose_analyses(asked: str | Sequence[str] | None, registry: Mapping[str, Analysis],
                    preset: Sequence[str] = ()) -> tuple[str, ...]:
    """The analyses a report runs: ``asked`` (comma-separated names, a list of them, or
    ``"none"``), or ``preset`` (the data preset's) when ``asked`` is None.

    >>> registry = {"a": Analysis("a", "first", list), "b": Analysis("b", "second", list)}
    >>> choose_analyses("b,a", registry), choose_analyses(None, registry, ("a",)), choose_analyses("none", registry)
    (('b', 'a'), ('a',), ())
    """
    if asked is None:
        return tuple(preset)
    if isinstance(asked, str):
        asked = [asked]
    names = [w.strip() for text in asked for w in str(text).split(",") if w.strip()]
    if names == [NONE]:
        return ()
    for name in names:
        if name not in registry:
            raise ValueError(f"--analyses: unknown analysis {name!r}; choose among: {', '.join(sorted(registry))} "
                             f"(comma-separated), or {NONE}")
    return tuple(dict.fromkeys(names))


def analyses_help(registry: Mapping[str, Analysis], preset: str) -> str:
    """The ``--help`` text of ``--analyses``: every name with its line, then the default."""
    listed = "; ".join(f"{name}: {registry[name].description}" for name in sorted(registry))
    return (f"named analyses the report adds, comma-separated ({listed}); '{NONE}': none "
            f"(default: {preset})")
