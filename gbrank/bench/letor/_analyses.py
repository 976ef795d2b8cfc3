"""The named analyses of ``gbrank bench letor`` (``--analyses``), each one function and one entry.

Each takes the report folder and the pooled per-query table (``per_query.csv.gz``'s rows) and
returns the files it wrote.  Both test claims of the research behind gbrank on its data sets:
the data presets of those sets (``--data`` a dataset name, such as mq2008) ask for them, so the
committed reports stay reproducible by their commands; ``--data example`` or a folder of the
user's own asks for none.
"""

from __future__ import annotations

from .._analyses import Analysis


def _findings(out, per_query) -> list[str]:
    from ._findings import write_findings

    write_findings(out, per_query)
    return ["findings.md", "findings.json"]


def _paradigm(out, per_query) -> list[str]:
    from ._paradigm import write_paradigm

    return ["paradigm.md", "paradigm.json"] if write_paradigm(out, per_query) is not None else []


ANALYSES = {
    "findings": Analysis("findings", "three claims of the research (RR worst, nRBP at least nDCG and AP, "
                                     "bounding helps nRBP): findings.md/.json", _findings),
    "paradigm": Analysis("paradigm", "the SIGIR'21 comparison, listwise against LambdaRank per metric and "
                                     "against the libraries' best, when a listwise objective ran: "
                                     "paradigm.md/.json", _paradigm),
}
#: what the data presets (the research's data sets, ``--data`` a dataset name) ask for
PRESET = ("findings", "paradigm")
PRESET_TEXT = "findings,paradigm for a dataset name such as mq2008; none for example or a folder"
