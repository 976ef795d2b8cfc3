"""Read TREC run and qrels files, and join them into per-row labels and scores.

A *run* line is ``qid Q0 docid rank score tag`` and a *qrels* line is
``qid iteration docid relevance``, fields separated by whitespace.  gbrank ranks each
query's documents by ``score`` (descending; the ``rank`` column is ignored, as
trec_eval ignores it) and labels them from the qrels:

- a run document without a qrels line is not relevant (label 0);
- a query of the run without any qrels line is left out (it cannot be judged), as
  trec_eval leaves it out; a query of the qrels without run lines is ignored;
- a relevant qrels document that is absent from the run is *not* added: gbrank's R
  (number of relevant items) and IDCG are those of the ranked list.  Such documents are
  counted in :attr:`TrecData.n_relevant_unranked` so that a caller can say so.  trec_eval
  counts them in R and IDCG, so its recall, AP and nDCG are lower on such queries.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

RUN_COLUMNS = ("qid", "q0", "docid", "rank", "score", "tag")
QRELS_COLUMNS = ("qid", "iteration", "docid", "relevance")


def _read_table(path, columns: tuple[str, ...], what: str, example: str) -> pd.DataFrame:
    try:
        # every field a string, none read as missing: a document may be called "NA" or "null"
        table = pd.read_csv(path, sep=r"\s+", header=None, dtype=str, engine="c",
                            keep_default_na=False, skip_blank_lines=True)
    except pd.errors.EmptyDataError:
        raise ValueError(f"the {what} file {str(path)!r} is empty") from None
    except pd.errors.ParserError as exc:
        raise ValueError(
            f"the {what} file {str(path)!r} is not in TREC format ({len(columns)} whitespace-"
            f"separated fields per line, e.g. {example!r}): {exc}"
        ) from None
    short = (table == "").any(axis=1).to_numpy()  # a line with fewer fields than the longest
    if table.shape[1] != len(columns) or short.any():
        where = f" on data line {int(np.flatnonzero(short)[0]) + 1}" if short.any() else ""
        raise ValueError(
            f"the {what} file {str(path)!r} must have {len(columns)} whitespace-separated fields "
            f"per line ({' '.join(columns)}, e.g. {example!r}); found fewer or more{where}"
        )
    table.columns = list(columns)
    return table


def _numeric(table: pd.DataFrame, column: str, what: str, path) -> np.ndarray:
    values = pd.to_numeric(table[column], errors="coerce").to_numpy(dtype=np.float64)
    bad = ~np.isfinite(values)
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"the {what} file {str(path)!r} has a non-numeric or non-finite {column} "
            f"{table[column].iloc[first]!r} on data line {first + 1}"
        )
    return values


def _no_duplicates(table: pd.DataFrame, what: str, path) -> None:
    dup = table.duplicated(["qid", "docid"])
    if dup.any():
        first = int(np.flatnonzero(dup.to_numpy())[0])
        raise ValueError(
            f"the {what} file {str(path)!r} lists document {table['docid'].iloc[first]!r} twice "
            f"for query {table['qid'].iloc[first]!r} (data line {first + 1}); each (qid, docid) "
            "pair may appear once"
        )


def read_run(path) -> pd.DataFrame:
    """Read a TREC run file: columns ``qid``, ``docid`` (strings) and ``score`` (float),
    plus ``rank`` and ``tag`` as given, in file order."""
    table = _read_table(path, RUN_COLUMNS, "run", "301 Q0 FBIS3-10082 1 12.5 myrun")
    table["score"] = _numeric(table, "score", "run", path)
    _no_duplicates(table, "run", path)
    return table[["qid", "docid", "score", "rank", "tag"]]


def read_qrels(path) -> pd.DataFrame:
    """Read a TREC qrels file: columns ``qid``, ``docid`` (strings) and ``relevance`` (float).

    Raises on negative relevance grades (some collections mark junk documents with -1 or -2):
    map them to 0 in the file if that is what you mean."""
    table = _read_table(path, QRELS_COLUMNS, "qrels", "301 0 FBIS3-10082 1")
    table["relevance"] = _numeric(table, "relevance", "qrels", path)
    negative = table["relevance"].to_numpy() < 0
    if negative.any():
        first = int(np.flatnonzero(negative)[0])
        raise ValueError(
            f"the qrels file {str(path)!r} has a negative relevance "
            f"{table['relevance'].iloc[first]:g} on data line {first + 1}; gbrank needs grades >= 0 "
            "(0 = not relevant): map the negative grades to 0"
        )
    _no_duplicates(table, "qrels", path)
    return table[["qid", "docid", "relevance"]]


@dataclass(frozen=True)
class TrecData:
    """A run joined with its qrels: one row per ranked document of a judged query.

    Attributes
    ----------
    qid, docid : numpy.ndarray of str
    score, label : numpy.ndarray of float
        The run's score and the qrels relevance (0 for an unjudged document).
    unjudged_qids : numpy.ndarray of str
        Queries of the run without any qrels line; left out.
    n_relevant_unranked : int
        Qrels documents with relevance >= ``relevance_threshold`` of the evaluated queries that
        the run does not contain; they count neither in R nor in IDCG.
    """

    qid: np.ndarray
    docid: np.ndarray
    score: np.ndarray
    label: np.ndarray
    unjudged_qids: np.ndarray
    n_relevant_unranked: int


def join_run_qrels(run: pd.DataFrame, qrels: pd.DataFrame, relevance_threshold: float = 1) -> TrecData:
    """Label every run document from the qrels (see the module docstring for the rules)."""
    judged = pd.Index(qrels["qid"].unique())
    in_qrels = run["qid"].isin(judged).to_numpy()
    unjudged = pd.unique(run.loc[~in_qrels, "qid"])
    kept = run.loc[in_qrels, ["qid", "docid", "score"]]
    merged = kept.merge(qrels, on=["qid", "docid"], how="left", sort=False, validate="one_to_one")
    label = merged["relevance"].fillna(0.0).to_numpy(dtype=np.float64)

    ranked_queries = pd.Index(kept["qid"].unique())
    relevant = qrels[(qrels["relevance"] >= relevance_threshold) & qrels["qid"].isin(ranked_queries)]
    found = relevant.merge(kept[["qid", "docid"]], on=["qid", "docid"], how="left", indicator=True)
    n_unranked = int((found["_merge"] == "left_only").sum())
    return TrecData(
        qid=merged["qid"].to_numpy(dtype=object),
        docid=merged["docid"].to_numpy(dtype=object),
        score=merged["score"].to_numpy(dtype=np.float64),
        label=label,
        unjudged_qids=np.asarray(unjudged, dtype=object),
        n_relevant_unranked=n_unranked,
    )
