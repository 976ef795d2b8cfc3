"""Evaluating TREC runs like trec_eval: from Python and from the command line.

The job: you have run files (``qid Q0 docid rank score tag``) and qrels
(``qid 0 docid relevance``) and want trec_eval's numbers, plus what trec_eval does not
give: other metrics (nRBP, ...), an explicit policy for tied scores, and paired
comparisons.  This writes a small run and qrels to a temporary folder, evaluates them with
``gbrank.evaluate_run`` and with ``gbrank evaluate -q --ties trec_eval`` (trec_eval's
layout and tie order), then compares two runs.

    python examples/trec_runs.py            # 200 queries
    python examples/trec_runs.py --quick    # 20 queries

Look at: the per-query lines of the command line (``measure qid value``, then ``all``), the
difference between the exact tie expectation (``--ties average``, gbrank's default) and
trec_eval's order, and the paired comparison of the two runs.
"""

from __future__ import annotations

import pathlib
import subprocess
import sys
import tempfile

import numpy as np

import gbrank

from _gallery import GALLERY, run

FIGURES: list[str] = []  # draws nothing


def write_files(folder: pathlib.Path, n_queries: int, rng) -> tuple[pathlib.Path, pathlib.Path, pathlib.Path]:
    """qrels and two runs; scores rounded to one decimal so that ties occur."""
    qrels, run_a, run_b = [], [], []
    for q in range(1, n_queries + 1):
        grades = rng.choice([0, 0, 0, 1, 2], size=30)
        for d, g in enumerate(grades):
            qrels.append(f"q{q} 0 d{d} {g}")
        for lines_of_run, noise in ((run_a, 1.0), (run_b, 1.5)):
            scores = np.round(grades + rng.normal(0, noise, size=30), 1)
            for rank, d in enumerate(np.argsort(-scores)[:20], start=1):  # top 20 retrieved
                lines_of_run.append(f"q{q} Q0 d{d} {rank} {scores[d]:.1f} run")
    paths = folder / "qrels.txt", folder / "a.run", folder / "b.run"
    for path, lines in zip(paths, (qrels, run_a, run_b)):
        path.write_text("\n".join(lines) + "\n")
    return paths


def main(quick: bool = False, out: pathlib.Path = GALLERY) -> None:
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as tmp:
        qrels, run_a, run_b = write_files(pathlib.Path(tmp), 20 if quick else 200, rng)
        metrics = ["map", "ndcg_cut_10", "P_10", "recip_rank", "nrbp@0.95"]
        tied = gbrank.evaluate_run(run_a, qrels, metrics)                       # exact tie expectation
        trec = gbrank.evaluate_run(run_a, qrels, metrics, ties="trec_eval")     # trec_eval's order
        print("Run a, mean over queries: ties averaged (gbrank) and in trec_eval's order:")
        print(tied.mean().rename("average").to_frame().join(trec.mean().rename("trec_eval")).round(4).to_string())

        cli = [sys.executable, "-m", "gbrank.cli", "evaluate", str(run_a), str(qrels), "-q", "--ties", "trec_eval",
               "-m", "map", "-m", "ndcg_cut_10"]
        print("\n$ gbrank evaluate a.run qrels.txt -q --ties trec_eval -m map -m ndcg_cut_10   (last lines)")
        lines = subprocess.run(cli, check=True, capture_output=True, text=True).stdout.splitlines()
        print("\n".join(lines[:3] + ["..."] + lines[-2:]))

        other = gbrank.evaluate_run(run_b, qrels, metrics, ties="trec_eval")
        print("\nPaired t-test, run a against run b, over the queries both ranked:")
        print(gbrank.compare(trec, other).pair().round(4).to_string())


if __name__ == "__main__":
    run(main, __doc__)
