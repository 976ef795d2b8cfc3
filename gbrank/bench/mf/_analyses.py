"""The named analyses of ``gbrank bench mf`` (``--analyses``), each one function and one entry.

Each takes the plan, the report folder, the two selections' means
(:func:`gbrank.bench.mf._select.selection_means`) and the notes of the run, writes its files
into the folder and returns its section of ``OUT/summary.md``.  ``paper`` sets gbrank's
numbers beside the SIGIR'21 paper's tables; it needs them, so it runs on the paper's own folds
(``--data citeulike-paper``, whose preset asks for it); other data asks for none.
"""

from __future__ import annotations

from .._analyses import Analysis

#: how the paper's objectives map to gbrank's losses (``_paper.py``), a note of its comparison
PAPER_MAPPING = (
    "Objectives map to gbrank's losses: ap, dcg, rr -> <paradigm>_ap, _ndcg, _rr; LambdaRank-MF rbp_80, "
    "rbp_90, rbp_95 -> lambda_nrbp@0.8, @0.9, @0.95; listwise rbp_80, rbp_90, rbp_95 -> the one "
    "listwise_nrbp run (its loss does not depend on p; the paper's three rows are the same model, "
    "its epoch chosen per evaluation metric). RBP_p = gbrank's rbp@p (un-normalised) on the sampled "
    "test lists.")


def _paper(plan, out, means, notes: list[str]) -> str:
    from ._paper import TOLERANCE, comparison, paper_means, write_comparison

    cells = comparison(paper_means(plan.paper_tables), means)
    write_comparison(out, cells, [*notes, PAPER_MAPPING])
    n_flag = int((cells["status"] == "flag").sum())
    return (f"\n## Beside the paper's tables\n\n`paper_comparison.md` / `.json`: {len(cells)} cells, "
            f"{int((cells['status'] != 'not run').sum())} run, {n_flag} flagged (|gbrank (a) - paper| > "
            f"{TOLERANCE:g}).\n")


ANALYSES = {
    "paper": Analysis("paper", "the SIGIR'21 paper's result tables beside gbrank's two selections, cell by "
                               "cell (needs the paper's folds and tables): paper_comparison.md/.json", _paper),
}
PRESET_TEXT = "paper on the paper's own folds (citeulike-paper), none otherwise"
