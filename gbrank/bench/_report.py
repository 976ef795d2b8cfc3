"""The report every ``gbrank bench`` command writes, from one tidy per-query table.

``write_report(per_query, out_dir, baseline=..., metrics=..., title=..., config=..., conventions=...)``
writes to ``out_dir``:

* ``per_query.csv.gz``: the table itself (one row per contender x split x query);
* ``config.json``: ``config`` as given (the caller puts the exact settings, seeds and library
  versions there; :func:`environment` collects the versions);
* ``summary.json`` and ``summary.md``: per contender and metric the mean over all queries
  with its Student-t confidence interval; paired t-tests of every contender against the
  baseline (:func:`gbrank.compare` with ``baseline=`` and ``correction="holm"``), Holm-corrected
  across the contenders for each metric, with Cohen's d_z and the fraction of queries that
  improve and worsen; the winner of each metric;
* plots (PNG, when matplotlib is installed): ``metrics.png`` (means with CIs),
  ``wins.png`` (training objective x evaluation metric), ``diff_vs_relevant.png`` (per-query
  difference to the baseline against the number of relevant items), ``cdf.png`` (CDFs of the
  per-query values) and ``ndcg_at_k.png`` (when the table has ``ndcg@1`` ... columns).

The table's columns: ``contender``, ``split`` (fold name, or e.g. ``"nsr1-seed0"``), ``qid``,
``n_items``, ``n_relevant``, then one column per metric name (``"ndcg@10"``, ``"ap"``,
``"nrbp@0.95"``, ...).  Every query appears once per contender and split; queries are
paired across contenders by ``(split, qid)``, so the splits' test queries are pooled.
"""

from __future__ import annotations

import json
import math
import pathlib
from typing import Sequence

import numpy as np
import pandas as pd

KEY = ("contender", "split", "qid")
#: what one row of the table is, in the words of the reports: ``unit`` of :func:`write_report`
#: -> (singular, plural, what the row's id is, what a list holds)
UNITS = {"query": ("query", "queries", "query id", "documents"),
         "user": ("user", "users", "user id", "items")}
REQUIRED = (*KEY, "n_items", "n_relevant")
PER_QUERY_FILE = "per_query.csv.gz"


def environment(modules: Sequence[str] = ("numpy", "scipy", "pandas", "numba", "sklearn")) -> dict:
    """Python, gbrank and each named module's own ``__version__`` (None when not installed),
    plus the machine's CPU count: what a report's ``config.json`` should record."""
    import importlib
    import os
    import platform

    from .._version import __version__

    out = {"python": platform.python_version(), "gbrank": __version__,
           "platform": platform.platform(), "cpus": os.cpu_count()}
    for name in modules:
        try:
            out[name] = importlib.import_module(name).__version__
        except ImportError:
            out[name] = None
    return out


def check_per_query(per_query: pd.DataFrame, metrics: Sequence[str]) -> pd.DataFrame:
    """Validate the tidy table and return it indexed by nothing, sorted by contender order of
    first appearance, split and qid.  Raises ``ValueError`` naming what is wrong."""
    if not isinstance(per_query, pd.DataFrame):
        raise TypeError(f"per_query must be a pandas DataFrame, got {type(per_query).__name__}")
    missing = [c for c in (*REQUIRED, *metrics) if c not in per_query.columns]
    if missing:
        raise ValueError(f"per_query lacks the columns {missing}; it needs {list(REQUIRED)} and one "
                         f"column per metric; it has {list(per_query.columns)}")
    if not len(metrics):
        raise ValueError("metrics is empty; name the metric columns to report, e.g. ['ndcg@10', 'ap']")
    if len(set(metrics)) != len(metrics):
        raise ValueError(f"a metric is listed twice: {list(metrics)}")
    if per_query.empty:
        raise ValueError("per_query has no rows: no run produced a query to report")
    dup = per_query.duplicated(list(KEY))
    if dup.any():
        first = per_query.loc[dup, list(KEY)].iloc[0].tolist()
        raise ValueError(f"per_query has {int(dup.sum())} repeated (contender, split, qid) rows, e.g. {first}; "
                         "each query must appear once per contender and split")
    values = per_query[list(metrics)].to_numpy(dtype=np.float64)
    if not np.isfinite(values).all():
        bad = [m for m in metrics if not np.isfinite(per_query[m].to_numpy(dtype=np.float64)).all()]
        raise ValueError(f"per_query has NaN or infinite values in {bad}; evaluate with an empty-list "
                         "policy that scores every query (or drop those rows)")
    return per_query.reset_index(drop=True)


def _results(per_query: pd.DataFrame, metrics: Sequence[str], conventions: dict) -> dict:
    """contender -> EvaluationResult over (split, qid), so that gbrank's own summary and
    compare give the means, intervals and paired tests."""
    from gbrank.evaluation import EvaluationResult

    out = {}
    for name, rows in per_query.groupby("contender", sort=False):
        table = rows.set_index(["split", "qid"])[[*metrics, "n_items", "n_relevant"]]
        out[name] = EvaluationResult(per_query=table, metrics=tuple(metrics), settings=dict(conventions),
                                     n_empty=int((table["n_relevant"] == 0).sum()))
    return out


def _float(v):
    v = float(v)
    return v if math.isfinite(v) else None


def summarise(per_query: pd.DataFrame, *, baseline: str, metrics: Sequence[str],
              conventions: dict, confidence: float = 0.95, also_against: Sequence[str] = ()) -> dict:
    """The numbers of the report (what ``summary.json`` holds, less title and notes).

    ``contenders[name][metric]``: mean, std, ci_low, ci_high over the contender's queries;
    ``splits[name][split][metric]``: the mean of each split; ``tests[name][metric]``: the
    paired t-test against the baseline over the queries all contenders have, from
    :func:`gbrank.compare` (mean difference contender - baseline, its CI, p, Holm-adjusted p
    across the contenders of that metric, Cohen's d_z, the fractions of queries improved
    and worsened);
    ``winners[metric]``: the contender with the highest mean; ``ranks[name][metric]``:
    1 = best (ties share the lower rank); ``also_against``: more references, and
    ``tests_also[reference][name][metric]``: the same paired tests against each of them
    (Holm across the contenders of each metric, within each reference)."""
    from gbrank.evaluation import compare

    per_query = check_per_query(per_query, metrics)
    metrics = list(metrics)
    contenders = list(dict.fromkeys(per_query["contender"]))
    if baseline not in contenders:
        raise ValueError(f"baseline {baseline!r} is not among the contenders; choose one of {sorted(contenders)}")
    also_against = list(also_against)
    for ref in also_against:
        if ref not in contenders or ref == baseline:
            raise ValueError(f"also_against {ref!r} must be a contender other than the baseline {baseline!r}; "
                             f"choose among {sorted(set(contenders) - {baseline})}")
    res = _results(per_query, metrics, conventions)
    out = {"baseline": baseline, "metrics": metrics, "confidence": confidence,
           "contenders": {}, "n_queries": {}, "n_empty": {}, "splits": {}, "tests": {},
           "winners": {}, "ranks": {}}
    if also_against:
        out["also_against"] = also_against
        out["tests_also"] = {}
    for name in contenders:
        s = res[name].summary(confidence)
        out["contenders"][name] = {m: {"mean": _float(s.loc[m, "mean"]), "std": _float(s.loc[m, "std"]),
                                       "ci_low": _float(s.loc[m, "ci_low"]), "ci_high": _float(s.loc[m, "ci_high"])}
                                   for m in metrics}
        out["n_queries"][name] = int(len(res[name].per_query))
        out["n_empty"][name] = res[name].n_empty
        by_split = per_query[per_query["contender"] == name].groupby("split", sort=False)[metrics].mean()
        out["splits"][name] = {str(k): {m: float(v[m]) for m in metrics} for k, v in by_split.iterrows()}
    if len(contenders) > 1:
        for ref in [baseline, *also_against]:
            tests = compare(res, baseline=ref, test="t", correction="holm", confidence=confidence).pairs
            into = out["tests"] if ref == baseline else out["tests_also"].setdefault(ref, {})
            for n in contenders:
                for c in tests[tests["a"] == n].itertuples():
                    into.setdefault(n, {})[c.metric] = {
                        "diff": _float(c.diff), "ci_low": _float(c.ci_low), "ci_high": _float(c.ci_high),
                        "p_value": _float(c.p_value), "p_holm": _float(c.p_adjusted), "d_z": _float(c.d_z),
                        "improved": _float(c.better), "worsened": _float(c.worse), "n": int(c.n)}
    means = pd.DataFrame({n: {m: out["contenders"][n][m]["mean"] for m in metrics} for n in contenders}).T
    ranks = means.rank(axis=0, ascending=False, method="min")
    for m in metrics:
        out["winners"][m] = str(means[m].idxmax())
    out["ranks"] = {n: {m: int(ranks.loc[n, m]) for m in metrics} for n in contenders}
    return out


# ---------------------------------------------------------------------------------------
# markdown


def _p(p) -> str:
    """``p=0.012``, ``p<1e-4`` or ``p n/a``."""
    if p is None:
        return "p n/a"
    return "p<1e-4" if p < 1e-4 else f"p={p:.4f}" if p < 0.01 else f"p={p:.3f}"


def _markdown(summary: dict, *, title: str, conventions: dict, notes: Sequence[str], plots: Sequence[str],
              unit: str = "query", seconds: dict | None = None) -> str:
    _, many, ident, _ = UNITS[unit]
    metrics, base = summary["metrics"], summary["baseline"]
    C, T = summary["contenders"], summary["tests"]
    level = round(100 * summary["confidence"])
    lines = [f"# {title}", ""]
    for note in notes:
        lines += [note, ""]
    lines += ["Conventions:", ""] + [f"- {k}: {v}" for k, v in conventions.items()] + ["",
              f"Each cell: mean over the pooled test {many} ± half-width of its {level}% Student-t "
              f"interval. ▲/▼: higher/lower than the baseline **{base}** by a paired t-test over the "
              f"{many} (paired by split and {ident}), Holm-corrected across the contenders of each "
              f"metric, p < 0.05. Bold: the best mean of the column.", "",
              f"| contender | {many} | " + " | ".join(metrics) + " |",
              "|---|---:|" + "---:|" * len(metrics)]
    for name in C:
        cells = []
        for m in metrics:
            v = C[name][m]
            half = (v["ci_high"] - v["ci_low"]) / 2 if v["ci_high"] is not None else float("nan")
            cell = f"{v['mean']:.4f} ± {half:.4f}"
            if summary["winners"][m] == name:
                cell = f"**{v['mean']:.4f}** ± {half:.4f}"
            t = T.get(name, {}).get(m)
            if t and t["p_holm"] is not None and t["p_holm"] < 0.05:
                cell += " ▲" if t["diff"] > 0 else " ▼"
            cells.append(cell)
        shown = f"{name} (baseline)" if name == base else name
        lines.append(f"| {shown} | {summary['n_queries'][name]} | " + " | ".join(cells) + " |")
    if T:
        lines += ["", f"Paired difference to {base} (contender − baseline) and Holm-adjusted p of the "
                  "paired t-test (raw p, CIs and n in summary.json):", "",
                  "| contender | " + " | ".join(metrics) + " |", "|---|" + "---:|" * len(metrics)]
        for name in T:
            lines.append(f"| {name} | " + " | ".join(
                f"{T[name][m]['diff']:+.4f} ({_p(T[name][m]['p_holm'])})" for m in metrics) + " |")
    for ref, tests in summary.get("tests_also", {}).items():
        lines += ["", f"Paired difference to the second reference {ref} (contender − {ref}) and Holm-adjusted p "
                  f"of the paired t-test, Holm across the contenders of each metric; ▲/▼: p < 0.05:", "",
                  "| contender | " + " | ".join(metrics) + " |", "|---|" + "---:|" * len(metrics)]
        for name in tests:
            lines.append(f"| {name} | " + " | ".join(
                f"{tests[name][m]['diff']:+.4f} ({_p(tests[name][m]['p_holm'])})"
                + ("" if tests[name][m]["p_holm"] is None or tests[name][m]["p_holm"] >= 0.05
                   else " ▲" if tests[name][m]["diff"] > 0 else " ▼") for m in metrics) + " |")
    lines += ["", "Best mean per metric: " + "; ".join(f"{m}: {w}" for m, w in summary["winners"].items()) + "."]
    if seconds:
        lines += ["", "Seconds per contender, summed over its runs: training as timed, and apart from it the "
                  "compile/warm-up its process paid first (numba loading or compiling gbrank's kernels, the "
                  "library's first fit; once per process; - : not recorded).", "",
                  "| contender | training seconds | compile/warm-up seconds |", "|---|---:|---:|"]
        for name, t in seconds.items():
            warm = "-" if t.get("compile") is None else f"{t['compile']:.1f}"
            lines.append(f"| {name} | {t['training']:.1f} | {warm} |")
    if plots:
        lines += [""] + [f"![{p}]({p})" for p in plots]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------
# the report


def write_report(per_query: pd.DataFrame, out_dir, *, baseline: str, metrics: list[str], title: str,
                 config: dict, conventions: dict, confidence: float = 0.95, notes: Sequence[str] = (),
                 highlight: Sequence[str] | None = None, plots: bool = True,
                 also_against: Sequence[str] = (), unit: str = "query", seconds: dict | None = None) -> dict:
    """Write the benchmark report of a tidy per-query table to ``out_dir``; return the summary.

    Parameters
    ----------
    per_query : pandas.DataFrame
        Columns ``contender``, ``split``, ``qid``, ``n_items``, ``n_relevant`` and one column
        per metric; one row per (contender, split, qid).  Contenders keep their order of
        first appearance in tables and plots.
    out_dir : str or path-like
        Created if missing; files of the same name are replaced.
    baseline : str
        The contender every other one is compared with.
    metrics : list of str
        The metric columns of the tables and tests, in order.  Columns ``ndcg@1``...``ndcg@K``
        present in ``per_query`` also give the nDCG@k curve, whether listed here or not.
    title : str
        First line of ``summary.md``.
    config : dict
        Written unchanged to ``config.json`` (JSON-serialisable): the exact settings, seeds
        and library versions of the runs.
    conventions : dict
        The evaluation conventions the numbers depend on (empty lists, ties, gain, ...),
        stated in ``summary.md`` and ``summary.json``.
    confidence : float, default 0.95
        Level of the Student-t intervals.
    notes : sequence of str
        Markdown paragraphs placed under the title (data, protocol, caveats).
    highlight : sequence of str, optional
        Contenders drawn in the line plots (CDF, nDCG@k, differences); default: the baseline
        and the five best others by the first metric.
    plots : bool, default True
        Draw the PNGs (needs matplotlib; skipped with a note in the summary when missing).
    also_against : sequence of str, default ()
        More references: every contender is also tested against each of them (paired
        t-tests, Holm across the contenders of each metric), in ``summary["tests_also"]``
        and one more table of ``summary.md`` each.
    unit : {"query", "user"}, default "query"
        What a row of the table is, in the words of ``summary.md`` and the plots: queries
        (and their documents) for LETOR, users (and their items) for recommendation.
    seconds : dict, optional
        ``{contender: {"training": s, "compile": s or None}}``: the seconds of the runs,
        training and compile/warm-up apart, in ``summary.json`` (``"seconds"``) and a table
        of ``summary.md``.

    Returns
    -------
    dict
        The content of ``summary.json``: ``title``, ``conventions``, ``files`` and the keys of
        :func:`summarise` (``contenders``, ``tests``, ``winners``, ``ranks``, ``splits``, ...).

    Examples
    --------
    >>> import pandas as pd, tempfile
    >>> pq = pd.DataFrame({"contender": ["a"] * 3 + ["b"] * 3, "split": "s", "qid": [1, 2, 3] * 2,
    ...                    "n_items": 5, "n_relevant": 1, "rr": [1, .5, 1, .5, .5, 1]})
    >>> s = write_report(pq, tempfile.mkdtemp(), baseline="b", metrics=["rr"], title="t",
    ...                  config={}, conventions={"empty": "zero"}, plots=False)
    >>> round(s["contenders"]["a"]["rr"]["mean"], 4), round(s["tests"]["a"]["rr"]["diff"], 4)
    (0.8333, 0.1667)
    """
    metrics = list(metrics)
    if unit not in UNITS:
        raise ValueError(f"unit must be one of {sorted(UNITS)}, got {unit!r}")
    per_query = check_per_query(per_query, metrics)
    summary = summarise(per_query, baseline=baseline, metrics=metrics, conventions=conventions,
                        confidence=confidence, also_against=also_against)
    out = pathlib.Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    per_query.to_csv(out / PER_QUERY_FILE, index=False, float_format="%.6g")
    (out / "config.json").write_text(json.dumps(config, indent=1, default=str) + "\n")

    drawn, plot_note = [], None
    if plots:
        try:
            from ._plots import draw_all
        except ImportError as exc:  # pragma: no cover - matplotlib missing
            plot_note = f"plots skipped: {exc}; install matplotlib (pip install 'gbrank[plot]')"
        else:
            chosen = list(highlight) if highlight is not None else default_highlight(summary)
            drawn = draw_all(per_query, summary, out, highlight=chosen, title=title, unit=UNITS[unit])
    files = [PER_QUERY_FILE, "config.json", "summary.json", "summary.md", *drawn]
    doc = {"title": title, "unit": unit, "conventions": dict(conventions), "notes": list(notes), "files": files,
           **summary}
    if seconds:
        doc["seconds"] = seconds
    if plot_note:
        doc["plot_note"] = plot_note
    (out / "summary.json").write_text(json.dumps(doc, indent=1) + "\n")
    (out / "summary.md").write_text(_markdown(summary, title=title, conventions=conventions,
                                              notes=[*notes, *([plot_note] if plot_note else [])], plots=drawn,
                                              unit=unit, seconds=seconds))
    return doc


def default_highlight(summary: dict, n_others: int = 5) -> list[str]:
    """The baseline and the ``n_others`` best other contenders by the first metric's mean."""
    first = summary["metrics"][0]
    others = sorted((n for n in summary["contenders"] if n != summary["baseline"]),
                    key=lambda n: -summary["contenders"][n][first]["mean"])
    return [summary["baseline"], *others[:n_others]]
