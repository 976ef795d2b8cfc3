"""The ``gbrank`` command line: one sub-command per task.

    gbrank evaluate RUN QRELS -m ndcg@10 -m ap [--empty zero] [--ties average] ...
    gbrank bench letor [--data example|mq2008|FOLDER] [--contenders ...] [--quick] ...

Each sub-command is a pair of functions: ``_add_<name>(subparsers)`` declares its
arguments and sets ``handler``; the handler imports what it needs (numpy, pandas, numba,
the evaluator) only when it runs, so ``gbrank --help`` stays fast.  To add a sub-command,
write such a pair and append the ``_add_`` function to ``SUBCOMMANDS``.  Benchmarks
are sub-commands of ``gbrank bench``: their ``_add_bench_<name>(bench_subparsers)``
functions are listed in ``BENCH_COMMANDS`` (a module that defines one imports only the
standard library at top level).
"""

from __future__ import annotations

import argparse
import math
import sys
from typing import Callable, Sequence

EXIT_USAGE = 2


class CommandError(Exception):
    """A problem with the user's input that a sub-command reports without a traceback."""


# ---------------------------------------------------------------------------------------
# gbrank evaluate


def _add_evaluate(subparsers) -> None:
    p = subparsers.add_parser(
        "evaluate",
        help="evaluate a TREC run file against a qrels file",
        description=(
            "Rank each query's documents of RUN by score (descending) and evaluate them with "
            "the labels of QRELS. Run documents without a qrels line are not relevant; run "
            "queries without any qrels line are left out; relevant qrels documents missing "
            "from the run are NOT added: R and IDCG are those of the ranked list (trec_eval "
            "counts them, so its recall, AP and nDCG are lower on such queries). The rank "
            "column of RUN is ignored. trec_eval's numbers on tie-free runs: --gain linear "
            "--empty zero."
        ),
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    p.add_argument("run", help="TREC run file: qid Q0 docid rank score tag")
    p.add_argument("qrels", help="TREC qrels file: qid 0 docid relevance")
    p.add_argument("-m", "--metric", action="append", dest="metrics", metavar="NAME",
                   help="metric such as ndcg@10, ap, rr, p@5, r@100, nrbp@0.95, auc; repeat "
                        "for several (default: ndcg@1 ndcg@3 ndcg@5 ndcg@10 ap rr nrbp@0.95)")
    p.add_argument("--empty", choices=("zero", "one", "skip"), default="zero",
                   help="value of nDCG/AP/RR/nRBP/R@k/AUC/ranks on a query without a relevant "
                        "ranked document, or skip such queries")
    p.add_argument("--ties", choices=("average", "pessimistic", "optimistic", "stable"),
                   default="average",
                   help="equal scores: expectation over all their orders, relevant last, "
                        "relevant first, or file order")
    p.add_argument("--gain", choices=("exp", "linear"), default="exp",
                   help="nDCG/DCG gain: 2**rel - 1 or rel (trec_eval uses rel)")
    p.add_argument("--relevance-threshold", type=float, default=1.0, metavar="T",
                   help="binary metrics count a document relevant when rel >= T")
    p.add_argument("--ap-divisor", choices=("R", "min(R,k)"), default="R",
                   help="divisor of AP@k")
    p.add_argument("--per-query", action="store_true", help="also print one row per query")
    p.add_argument("--format", choices=("text", "csv", "json"), default="text", dest="fmt",
                   help="output format")
    p.add_argument("--confidence", type=float, default=0.95,
                   help="level of the Student-t interval of each mean (text and json)")
    p.set_defaults(handler=_run_evaluate)


def _run_evaluate(args: argparse.Namespace, out) -> int:
    import json

    from gbrank.evaluation import DEFAULT_METRICS, evaluate
    from gbrank.evaluation._trec import join_run_qrels, read_qrels, read_run

    try:
        run = read_run(args.run)
        qrels = read_qrels(args.qrels)
        data = join_run_qrels(run, qrels, args.relevance_threshold)
        if len(data.qid) == 0:
            raise CommandError(f"no query of {args.run!r} has a line in {args.qrels!r}: nothing to evaluate")
        result = evaluate(
            data.label, data.score, data.qid, args.metrics or list(DEFAULT_METRICS),
            relevance_threshold=args.relevance_threshold, gain=args.gain, empty=args.empty,
            ties=args.ties, ap_divisor=args.ap_divisor,
        )
        summary = result.summary(args.confidence)
    except (OSError, ValueError) as exc:
        raise CommandError(str(exc)) from None

    notes = []
    if len(data.unjudged_qids):
        notes.append(f"{len(data.unjudged_qids)} run queries without qrels were left out "
                     f"(e.g. {', '.join(map(str, data.unjudged_qids[:3]))})")
    if data.n_relevant_unranked:
        notes.append(f"{data.n_relevant_unranked} relevant qrels documents are not in the run; "
                     "R and IDCG count only the ranked documents")
    if result.n_empty:
        what = "left out" if args.empty == "skip" else f"scored by --empty {args.empty}"
        notes.append(f"{result.n_empty} queries have no relevant ranked document ({what})")
    for note in notes:
        print(f"gbrank evaluate: note: {note}", file=sys.stderr)

    settings = dict(result.settings)
    per_query = result.per_query
    if args.fmt == "json":
        doc = {
            "settings": settings,
            "n_queries": int(len(per_query)),
            "n_empty": result.n_empty,
            "skipped_qids": [str(q) for q in result.skipped_qids],
            "unjudged_qids": [str(q) for q in data.unjudged_qids],
            "n_relevant_unranked": data.n_relevant_unranked,
            "summary": _records(summary),
        }
        if args.per_query:
            doc["per_query"] = _records(per_query)
        json.dump(doc, out, indent=2)
        out.write("\n")
    elif args.fmt == "csv":
        if args.per_query:
            per_query.to_csv(out, float_format="%.6f")
        else:
            summary.to_csv(out, float_format="%.6f")
    else:
        head = ", ".join(f"{k}={v!r}" for k, v in settings.items())
        out.write(f"# {len(per_query)} queries; {head}\n")
        out.write(summary.to_string(float_format=lambda v: f"{v:.4f}") + "\n")
        if args.per_query:
            out.write("\n" + per_query.to_string(float_format=lambda v: f"{v:.4f}") + "\n")
    return 0


def _records(table) -> dict:
    """``{row label: {column: value}}`` with Python scalars, keeping integer columns integer.
    JSON has no NaN or infinity (the interval of a single query is infinite): they become null."""
    columns = {c: table[c].tolist() for c in table.columns}
    return {
        str(label): {c: (None if isinstance(v, float) and not math.isfinite(v) else v)
                     for c, v in ((c, columns[c][i]) for c in table.columns)}
        for i, label in enumerate(table.index)
    }


# ---------------------------------------------------------------------------------------
# gbrank bench <sub>


def _folds_arg(text: str) -> list[int]:
    """``--folds 1,3`` -> [1, 3]; bad input is reported before any data is read."""
    parts = [t.strip() for t in text.split(",")]
    if not any(parts):
        raise argparse.ArgumentTypeError("--folds is empty; give fold numbers such as 1,3")
    try:
        return [int(t) for t in parts if t]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--folds takes comma-separated fold numbers such as 1,3, got {text!r}") from None


def _add_bench_letor(bench_subparsers) -> None:
    p = bench_subparsers.add_parser(
        "letor",
        help="compare ranking objectives (built-in LambdaMART, CatBoost, gbrank's) on LETOR folds",
        description=(
            "Train every chosen contender on each fold's train split with early stopping on its "
            "vali split (the same gbrank metric, patience and round budget for all), predict the "
            "test split, and write per-query scores, summary.md/json (means with 95% CIs, paired "
            "t-tests against --baseline with Holm's correction), plots and config.json to --out. "
            "Finished runs are cached in --out/runs and skipped when the command is run again. "
            "Evaluation: gbrank.evaluate, queries without a relevant document score 0, tied "
            "scores averaged over their orders."
        ),
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    p.add_argument("--data", default="example",
                   help="'example' (LightGBM's bundled example data), a dataset name under "
                        "$GBRANK_DATA such as mq2008, or a folder with Fold1..FoldK or a single "
                        "train/(vali)/test set")
    p.add_argument("--folds", type=_folds_arg, default=None, metavar="K,K",
                   help="fold numbers to run, e.g. 1,3 (default: all)")
    p.add_argument("--contenders", action="append", default=None, metavar="NAMES",
                   help="comma-separated contender names, groups (default, builtin, catboost, "
                        "gbrank, bounded, lightgbm, xgboost, all) or globs such as "
                        "'gbrank:nrbp*'; repeatable (default: 'default' = the libraries' own "
                        "objectives and gbrank's unbounded objectives on LightGBM; --quick: a "
                        "handful); --list-contenders shows them")
    p.add_argument("--list-contenders", action="store_true",
                   help="print every contender and group, then exit")
    p.add_argument("--quick", action="store_true",
                   help="smoke run: few contenders (unless --contenders), at most 20 rounds, "
                        "patience 5, the first fold only (unless --folds)")
    p.add_argument("--rounds", type=int, default=None,
                   help="most boosting rounds per run (default 1000; 20 with --quick)")
    p.add_argument("--patience", type=int, default=None,
                   help="stop when the validation metric has not improved for this many rounds "
                        "(default 50; 5 with --quick)")
    p.add_argument("--early-stopping-metric", default="ndcg@10", metavar="METRIC",
                   help="gbrank metric watched on the validation queries by every contender")
    p.add_argument("--learning-rate", type=float, default=0.05)
    p.add_argument("--num-leaves", type=int, default=31, help="leaves per tree (LightGBM, XGBoost)")
    p.add_argument("--depth", type=int, default=6, help="depth of CatBoost's symmetric trees")
    p.add_argument("--seed", type=int, default=0, help="seed of every library (and of the "
                                                        "validation split when the data has none)")
    p.add_argument("--vali-fraction", type=float, default=0.2,
                   help="share of the training queries held out for early stopping when a fold "
                        "has no vali split (the bundled example has none)")
    p.add_argument("--baseline", default="lightgbm:lambdarank",
                   help="contender the others are tested against (added if not selected)")
    p.add_argument("--out", default=None,
                   help="output folder (default runs/bench-letor-<data>)")
    p.add_argument("--jobs", type=int, default=1,
                   help="runs trained in parallel (processes); each run gets --threads threads, "
                        "by default cores // jobs, so that jobs x threads <= cores")
    p.add_argument("--threads", type=int, default=None,
                   help="threads per run (boosting library and numba; default cores // jobs)")
    p.set_defaults(handler=_run_bench_letor)


def _run_bench_letor(args: argparse.Namespace, out) -> int:
    import shlex

    from gbrank.bench._letor import contender_listing, prepare_letor, run_letor

    if args.list_contenders:
        out.write(contender_listing() + "\n")
        return 0
    try:
        plan = prepare_letor(
            data=args.data, folds=args.folds, contenders=args.contenders, quick=args.quick,
            rounds=args.rounds, patience=args.patience, early_stopping_metric=args.early_stopping_metric,
            learning_rate=args.learning_rate, num_leaves=args.num_leaves, depth=args.depth,
            seed=args.seed, vali_fraction=args.vali_fraction, baseline=args.baseline,
            out_dir=args.out, jobs=args.jobs, threads=args.threads,
            command=" ".join(["gbrank", *(shlex.quote(a) for a in args.argv)]),
        )
    except (OSError, ValueError) as exc:
        raise CommandError(str(exc)) from None
    run_letor(plan, write=lambda text: print(text, file=out, flush=True))
    return 0


def _add_bench_mf(bench_subparsers) -> None:
    """``gbrank bench mf``: declared in gbrank.bench._mf_cli (standard library only at its top)."""
    from gbrank.bench._mf_cli import _add_bench_mf as add

    add(bench_subparsers)


BENCH_COMMANDS: list[Callable] = [_add_bench_letor, _add_bench_mf]


def _add_bench(subparsers) -> None:
    p = subparsers.add_parser(
        "bench",
        help="benchmarks: compare ranking objectives under one protocol and write a report",
        description="Benchmarks that train several contenders under one protocol and write a "
                    "report (per-query scores, summary with CIs and paired tests, plots).",
    )
    bench_subparsers = p.add_subparsers(dest="bench_command", metavar="BENCHMARK", required=True)
    for add in BENCH_COMMANDS:
        add(bench_subparsers)


SUBCOMMANDS: list[Callable] = [_add_evaluate, _add_bench]


# ---------------------------------------------------------------------------------------
# the parser


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gbrank",
        description="gbrank: learning to rank with the metric you choose, and an honest evaluator.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for add in SUBCOMMANDS:
        add(subparsers)
    return parser


def main(argv: Sequence[str] | None = None, out=None) -> int:
    """Entry point of the ``gbrank`` script; returns the exit status.

    ``out`` is where results go (standard output by default); notes and errors go to
    standard error."""
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(argv)
    args.argv = argv
    try:
        return args.handler(args, out if out is not None else sys.stdout)
    except CommandError as exc:
        sub = getattr(args, "bench_command", None)
        print(f"gbrank {args.command}{' ' + sub if sub else ''}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
