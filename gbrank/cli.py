"""The ``gbrank`` command line: one sub-command per task.

    gbrank evaluate RUN QRELS -m ndcg@10 -m ap [--empty zero] [--ties average] ...
    gbrank bench letor [--data example|mq2008|FOLDER] [--contenders ...] [--quick] ...
    gbrank bench mf [--data movielens|citeulike|citeulike-paper|FILE|FOLDS] [--losses ...] [--nsr 1,2,5] ...

Each sub-command is a pair of functions: ``_add_<name>(subparsers)`` declares its
arguments and sets ``handler``; the handler imports what it needs (numpy, pandas, numba,
the evaluator) only when it runs, so ``gbrank --help`` stays fast.  To add a sub-command,
write such a pair and append the ``_add_`` function to ``SUBCOMMANDS``.  Benchmarks
are sub-commands of ``gbrank bench``: their ``_add_bench_<name>(bench_subparsers)``
functions are listed in ``BENCH_COMMANDS``; their handlers call the public functions of
``gbrank.bench`` (which never imports this module).
"""

from __future__ import annotations

import argparse
import inspect
import math
import os
import sys
from typing import Callable, Sequence

EXIT_USAGE = 2


class CommandError(Exception):
    """A problem with the user's input that a sub-command reports without a traceback."""


#: exit status after the reader of standard output went away (``... | head``): 128 + SIGPIPE,
#: what the shell reports for a program the closed pipe ended
EXIT_BROKEN_PIPE = 141


class HelpFormatter(argparse.HelpFormatter):
    """Every option's default, said once: ``(default: X)`` is added to an option that takes a
    value and has a default, unless its help already says what the default is (an option
    whose default is None, "chosen by --quick or by the data", says it in its own words).
    Flags (``store_true``/``store_false``) show no default: the flag is the setting."""

    def _get_help_string(self, action):
        text = action.help or ""
        if (action.option_strings and action.nargs != 0 and action.default is not None
                and action.default is not argparse.SUPPRESS and "(default" not in text):
            text += " (default: %(default)s)"
        return text


def _add_choice(p, flag: str, choices: tuple, help: str) -> None:
    """An option that takes one of ``choices``, the first being its default."""
    p.add_argument(flag, choices=choices, default=choices[0], help=help)


def _command(subparsers, name: str, builder: Callable, help: str) -> argparse.ArgumentParser:
    """The parser of one (sub)command: ``help`` is its line in the parent's list, and the
    docstring of ``builder`` (the function that adds it) is the description at the top of
    its own ``--help``, filled to the terminal's width."""
    return subparsers.add_parser(name, help=help, description=inspect.getdoc(builder),
                                 formatter_class=HelpFormatter)


# ---------------------------------------------------------------------------------------
# gbrank evaluate


def _add_evaluate(subparsers) -> None:
    """Evaluate RUN against QRELS with trec_eval's meaning: R, the ideal DCG and recall denominators come from
    QRELS, so a relevant document the run did not retrieve lowers AP, recall and nDCG; retrieved documents
    without a judgement (or with a negative grade) are not relevant and count as unjudged. The rank column of
    RUN is ignored; extra trailing fields and '#' comment lines are accepted; files may be gzipped. trec_eval's
    numbers: --ties trec_eval (its order of tied scores, document id descending). Metric names: gbrank's
    (ndcg@10, ap, rr, p@5, nrbp@0.95, bpref, err@20) or trec_eval's (map, ndcg_cut.10, P.5,10, recall.100,
    recip_rank, Rprec, bpref, success.1, set_F) or ranx's (mrr, map@10, hit_rate@10, f1@10)."""
    p = _command(subparsers, "evaluate", _add_evaluate,
                 "evaluate a TREC run file against a qrels file, as trec_eval does")
    p.add_argument("run", help="TREC run file: qid Q0 docid rank score tag")
    p.add_argument("qrels", help="TREC qrels file: qid 0 docid relevance")
    p.add_argument("-m", "--metric", action="append", dest="metrics", metavar="NAME",
                   help="a metric, repeat for several; trec_eval's 'P.5,10' gives P_5 and P_10 "
                        "(default: map ndcg ndcg_cut_10 P_10 recall_100 recip_rank bpref Rprec)")
    p.add_argument("-q", action="store_true", dest="per_query_trec",
                   help="print trec_eval's layout, one 'measure qid value' line per query and measure, "
                        "then the 'all' lines")
    p.add_argument("-l", "--level", type=float, default=1.0, dest="relevance_level", metavar="L",
                   help="relevance level: a document is relevant when its grade >= L (trec_eval -l)")
    p.add_argument("-c", action="store_true", dest="complete",
                   help="score queries of QRELS without run lines as empty runs (trec_eval -c)")
    p.add_argument("-M", type=int, default=None, dest="depth", metavar="K",
                   help="keep the first K documents of each query, in trec_eval's order (trec_eval -M; "
                        "default: every document)")
    p.add_argument("-J", action="store_true", dest="judged_only",
                   help="remove unjudged documents before ranking (trec_eval -J)")
    p.add_argument("--ties", choices=("average", "trec_eval", "pessimistic", "optimistic", "stable"),
                   default="average",
                   help="equal scores: expectation over all their orders, trec_eval's order (document id "
                        "descending), relevant last, relevant first, or file order")
    _add_choice(p, "--gain", ("linear", "exp"),
                 "nDCG/DCG gain: the grade (trec_eval) or 2**grade - 1")
    _add_choice(p, "--empty", ("zero", "one", "skip"),
                 "value of a metric on a query without a relevant document (trec_eval: zero), "
                 "or skip such queries")
    p.add_argument("--ap-divisor", choices=("R", "min(R,k)"), default="R", help="divisor of AP@k")
    p.add_argument("--per-query", action="store_true", help="also print one row per query (table formats)")
    p.add_argument("--format", choices=("text", "csv", "json", "trec"), default="text", dest="fmt",
                   help="output: a table of means with confidence intervals, CSV, JSON, or trec_eval's "
                        "'measure all value' lines")
    p.add_argument("--digits", type=int, default=4, help="decimals in the trec layout (trec_eval prints 4)")
    p.add_argument("--confidence", type=float, default=0.95,
                   help="level of the Student-t interval of each mean (text and json)")
    p.set_defaults(handler=_run_evaluate)


#: trec_eval's measure families that take integer cutoffs after a dot: ``-m P.5,10`` is P_5 and P_10
TREC_CUTOFF_FAMILIES = ("P", "recall", "map_cut", "ndcg_cut", "success", "relative_P")
#: ... and those that take fractions, printed with two decimals as trec_eval prints them
#: (``-m iprec_at_recall.0.5`` is iprec_at_recall_0.50)
TREC_FRACTION_FAMILIES = ("iprec_at_recall", "Rprec_mult")


def _trec_names(names) -> list[str]:
    """trec_eval's ``name.N[,M]`` form of its parametrised families expanded as trec_eval
    names the measures (``P.5,10``: ``P_5, P_10``; ``iprec_at_recall.0.5``:
    ``iprec_at_recall_0.50``); every other name as given, so that a dot inside gbrank's or
    ranx's names (``rbp@0.9``, ``nrbp@0.95``) is left alone."""
    families = {f.lower(): f for f in (*TREC_CUTOFF_FAMILIES, *TREC_FRACTION_FAMILIES)}
    out = []
    for name in names:
        base, dot, params = name.strip().partition(".")
        family = families.get(base.lower()) if dot and "@" not in name else None
        values = [v.strip() for v in params.split(",")]
        if family in TREC_CUTOFF_FAMILIES and all(v.isdigit() for v in values):
            out.extend(f"{base}_{v}" for v in values)
        elif family in TREC_FRACTION_FAMILIES and all(_is_fraction(v) for v in values):
            out.extend(f"{base}_{float(v):.2f}" for v in values)
        else:
            out.append(name)
    return out


def _is_fraction(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


#: trec_eval's name of a gbrank result column: (name without a cutoff, prefix of name_k)
_TREC_OUT = {"ap": ("map", "map_cut_"), "ndcg": ("ndcg", "ndcg_cut_"), "p": (None, "P_"), "r": (None, "recall_"),
             "rr": ("recip_rank", None), "rprec": ("Rprec", None), "bpref": ("bpref", None),
             "success": (None, "success_"), "f1": ("set_F", None)}


def _display_names(asked, columns) -> list[str]:
    """The name printed for each result column: the name the user asked for, as typed
    (trec_eval's in, trec_eval's out: ``-m map -m ndcg_cut.10 -m P.5`` prints ``map``,
    ``ndcg_cut_10``, ``P_5``; gbrank's ``ndcg@10`` and ranx's ``map@10`` stay so).  A column
    that no asked name gives on its own (a trec_eval family or set the evaluator expanded)
    gets trec_eval's name where it has one, else its own.

    Parameters
    ----------
    asked : list of str
        The names passed to ``evaluate_run`` (after :func:`_trec_names`).
    columns : sequence of str
        The result's metric columns (``EvaluationResult.metrics``, gbrank's canonical names).
    """
    from gbrank.metrics import parse

    by_column = {}
    for name in asked:
        try:
            column = str(parse(name))
        except (TypeError, ValueError):  # a name the evaluator resolves itself
            column = name.strip()
        by_column.setdefault(column, name.strip())
    out = []
    for column in columns:
        if column in by_column:
            out.append(by_column[column])
            continue
        family, _, k = column.partition("@")
        bare, prefix = _TREC_OUT.get(family, (None, None))
        name = (prefix + k if prefix and k.isdigit() else None) if k else bare
        out.append(name or column)
    return out


def _run_evaluate(args: argparse.Namespace, out) -> int:
    import json

    from gbrank._validation import plural
    from gbrank.evaluation import DEFAULT_RUN_METRICS, evaluate_run

    if not 0.0 < args.confidence < 1.0:  # checked before the files are read
        raise CommandError(f"--confidence must lie strictly between 0 and 1, got {args.confidence}")
    if not 0 <= args.digits <= 16:
        raise CommandError(f"--digits must be an integer from 0 to 16, got {args.digits}")
    if args.depth is not None and args.depth < 1:
        raise CommandError(f"-M (depth) must be a positive integer, got {args.depth}")
    if not (math.isfinite(args.relevance_level) and args.relevance_level > 0):
        raise CommandError(f"-l (relevance level) must be a positive number (a document is relevant when its "
                           f"grade >= L), got {args.relevance_level}")
    names = _trec_names(args.metrics or list(DEFAULT_RUN_METRICS))
    try:
        result = evaluate_run(args.run, args.qrels, names, relevance_level=args.relevance_level,
                              complete=args.complete, depth=args.depth, judged_only=args.judged_only,
                              ties=args.ties, gain=args.gain, empty=args.empty, ap_divisor=args.ap_divisor)
        if len(result.per_query) == 0 and result.n_empty == 0:
            raise CommandError(f"no query of {args.run!r} has a line in {args.qrels!r}: nothing to evaluate")
        summary = result.summary(args.confidence)
    except (OSError, ValueError, TypeError) as exc:
        raise CommandError(str(exc)) from None

    settings = dict(result.settings)
    notes = []
    if settings["n_queries_only_in_run"]:
        n = settings["n_queries_only_in_run"]
        notes.append(f"{plural(n, 'run query has', 'run queries have')} no qrels line and "
                     f"{'was' if n == 1 else 'were'} left out")
    if settings["n_queries_only_in_qrels"]:
        how = "scored as empty runs (-c)" if args.complete else "left out (-c scores them as empty runs)"
        notes.append(f"{plural(settings['n_queries_only_in_qrels'], 'qrels query has', 'qrels queries have')} "
                     f"no run line: {how}")
    if result.n_empty:
        what = "left out" if args.empty == "skip" else f"scored by --empty {args.empty}"
        notes.append(f"{plural(result.n_empty, 'query has', 'queries have')} no relevant document in the "
                     f"qrels ({what})")
    n_scored = len(result.per_query)
    if n_scored < 2 and args.fmt != "trec" and not args.per_query_trec:
        notes.append("one query: no spread, no interval (std and the confidence interval need at least "
                     "2 queries)" if n_scored == 1 else "no query left to average (--empty skip left out "
                     "every query)")
    for note in notes:
        print(f"gbrank evaluate: note: {note}", file=sys.stderr)

    # the names asked for, as typed (trec_eval's in, trec_eval's out)
    shown = dict(zip(result.metrics, _display_names(names, result.metrics)))
    per_query = result.per_query.rename(columns=shown)
    summary = summary.rename(index=shown)
    columns = [shown[c] for c in result.metrics]
    if args.per_query_trec or args.fmt == "trec":
        # trec_eval's lines (gbrank.evaluation.trec_lines): its summary figures, the counts as
        # integers, num_q / gm_map / gm_bpref on the 'all' lines only
        from gbrank.evaluation import trec_lines

        for line in trec_lines(result, per_query=args.per_query_trec, digits=args.digits, names=shown):
            out.write(line + "\n")
    elif args.fmt == "json":
        doc = {
            "settings": settings,
            "n_queries": int(len(per_query)),
            "n_empty": result.n_empty,
            "skipped_qids": [str(q) for q in result.skipped_qids],
            "summary": _records(summary),
            "notes": notes,
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
        out.write(f"# {plural(len(per_query), 'query', 'queries')}; {head}\n")
        out.write(summary.to_string(float_format=lambda v: f"{v:.4f}", na_rep="n/a") + "\n")
        if n_scored < 2:
            out.write(f"# {notes[-1]}\n")
        if args.per_query:
            out.write("\n" + per_query.to_string(float_format=lambda v: f"{v:.4f}") + "\n")
    return 0


def _records(table) -> dict:
    """``{row label: {column: value}}`` with Python scalars, keeping integer columns integer.
    JSON has no NaN or infinity (one query has no spread and no interval): they become null."""
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
    """Train every chosen contender on each fold's train split with early stopping on its vali split (the same
    gbrank metric, patience and round budget for all), predict the test split, and write per-query scores,
    summary.md/json (means with 95% CIs, paired t-tests against --baseline with Holm's correction), plots and
    config.json to --out. Finished runs are cached in --out/runs and skipped when the command is run again;
    processes sharing one --out split the runs; --analyses adds named analyses of the report. Evaluation:
    gbrank.evaluate, queries without a relevant document score 0, tied scores averaged over their orders."""
    from gbrank.bench import LETOR_ANALYSES, LETOR_ANALYSES_DEFAULT

    p = _command(bench_subparsers, "letor", _add_bench_letor,
                 "compare ranking objectives (built-in LambdaMART, CatBoost, gbrank's) on LETOR folds")
    p.add_argument("--data", default="example",
                   help="'example' (LightGBM's bundled example data), a dataset name under "
                        "$GBRANK_DATA such as mq2008, or a folder with Fold1..FoldK or a single "
                        "train/(vali)/test set")
    p.add_argument("--folds", type=_folds_arg, default=None, metavar="K,K",
                   help="fold numbers to run, e.g. 1,3 (default: all)")
    p.add_argument("--contenders", action="append", default=None, metavar="NAMES",
                   help="comma-separated contender names, groups (builtin, catboost, default, "
                        "gbrank, normalised, bounded, lightgbm, xgboost, all) or globs such as "
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
    p.add_argument("--learning-rate", type=float, default=0.05,
                   help="learning rate (shrinkage of each tree) of every contender; --tune grid|random "
                        "searches its own rates")
    p.add_argument("--num-leaves", type=int, default=31, help="leaves per tree (LightGBM, XGBoost)")
    p.add_argument("--depth", type=int, default=6, help="depth of CatBoost's symmetric trees")
    p.add_argument("--seed", type=int, default=0, help="seed of every library (and of the "
                                                        "validation split when the data has none)")
    p.add_argument("--vali-fraction", type=float, default=0.2,
                   help="share of the training queries held out for early stopping when a fold "
                        "has no vali split (the bundled example has none)")
    _add_choice(p, "--dtype", ("float64", "float32"),
                 "type of the features as loaded: float32 halves the memory of the folds (use it "
                 "for MSLR-WEB30K or Istella); runs on either are cached apart")
    p.add_argument("--baseline", default="lightgbm:lambdarank",
                   help="contender the others are tested against (added if not selected)")
    p.add_argument("--also-against", action="append", default=None, metavar="NAMES",
                   help="more references, comma-separated (e.g. catboost:YetiRank): every contender is "
                        "also tested against each, Holm-corrected per reference and metric (added if not "
                        "selected); effects.md gives the differences with 95%% CIs (default: --baseline "
                        "only)")
    _add_choice(p, "--tune", ("none", "grid", "random"),
                 "fair tuning: every contender trained with the same configurations of learning "
                 "rate, leaves (CatBoost: depth round(log2(leaves))), min child weight and L2 "
                 "regularisation, each early-stopped on the vali split; the vali-best one per "
                 "contender and fold is evaluated on test. grid: a fixed 16-configuration grid; "
                 "random: --tune-budget draws with --seed (docs/bench.md lists both); none: the "
                 "single setting of --learning-rate, --num-leaves, --depth")
    p.add_argument("--tune-budget", type=int, default=None, metavar="N",
                   help="number of random configurations of --tune random (default 8)")
    _add_report_arguments(
        p, "letor", jobs="runs trained in parallel (processes); each run gets --threads threads, by default "
                         "cores // jobs, so that jobs x threads <= cores",
        threads="threads per run (boosting library and numba; default cores // jobs)",
        analyses=(LETOR_ANALYSES, LETOR_ANALYSES_DEFAULT))
    p.set_defaults(handler=_run_bench_letor)


def _add_report_arguments(p, bench: str, *, jobs: str, threads: str, analyses: tuple) -> None:
    """The arguments every ``gbrank bench`` sub-command shares: where its report goes, the
    processes and threads that train it, and the named analyses it adds (``analyses``: the
    benchmark's registry and the words of its default, which list the names)."""
    from gbrank.bench import analyses_help

    p.add_argument("--out", default=None, help=f"output folder (default runs/bench-{bench}-<data>)")
    p.add_argument("--jobs", type=int, default=1, help=jobs)
    p.add_argument("--threads", type=int, default=None, help=threads)
    p.add_argument("--analyses", default=None, metavar="NAMES", help=analyses_help(*analyses))


def _run_bench_letor(args: argparse.Namespace, out) -> int:
    import shlex

    from gbrank.bench import contender_listing, prepare_letor, run_letor

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
            tune=args.tune, tune_budget=args.tune_budget, also_against=args.also_against,
            dtype=args.dtype, analyses=args.analyses,
        )
    except (OSError, ValueError) as exc:
        raise CommandError(str(exc)) from None
    run_letor(plan, write=lambda text: print(text, file=out, flush=True))
    return 0


_MF_LOSSES_HELP = (
    "comma-separated loss names (listwise_ndcg, lambda_nrbp@0.95, listwise_nrbp+minmax, kos_warp, ...) or "
    "groups: listwise, lambda, kos, bounded (listwise_nrbp+minmax), boundings (listwise nDCG, AP, nRBP x minmax, "
    "expectation, expectation_max, distribution), sampled (warp, bpr), default (listwise + lambda + kos + "
    "bounded), all; repeatable (default: 'default'; --quick: four losses)")


def _add_bench_mf(bench_subparsers) -> None:
    """For every NSR (negatives per positive) and split, train matrix factorisation with every chosen loss and
    learning rate, and score the popularity and random baselines. Splits are seeded random splits (ratings >=
    threshold are positives; users with at least --min-positives positives; 20% of each user's positives held
    out) or ready folds (--data FOLDER with fold_K/train.csv[.gz] and fold_K/test.csv[.gz], or citeulike-paper:
    the paper's own CiteULike-a folds); NSR x as many test negatives are drawn once per user. Before any
    training every NSR, split and user is checked for enough training, validation and test negatives (exit 2
    with the counts and the fix, or --drop-infeasible-users). Training runs up to --epochs (the paper's 3000)
    with early stopping on a validation split of each user's training positives; every evaluated epoch records
    the paper's six metrics (AP, nDCG, RR, RBP at p = 0.8, 0.9, 0.95) on the test and validation lists, from
    which two selections of (learning rate, epoch) are reported: (a) the paper's, on the test metric
    (optimistic), and (b) the honest one, on validation. Each model is also evaluated on the full catalogue, on
    the sampled test lists and with the corrected sampled estimate (Krichene & Rendle 2020): OUT/full,
    OUT/sampled, OUT/corrected, OUT/summary.md (with losses at or below popularity flagged), OUT/selection.csv,
    and the files of the named analyses (--analyses; on the paper's folds by default the paper's tables beside
    gbrank's, OUT/paper_comparison.md/.json). Finished runs are cached in OUT/runs and reused; processes sharing
    one OUT split the runs."""
    from gbrank.bench import MF_ANALYSES, MF_ANALYSES_DEFAULT

    p = _command(bench_subparsers, "mf", _add_bench_mf,
                 "the recommendation protocol of Li et al. 2021 with gbrank's MF: losses x NSR x splits, baselines, "
                 "both selections, the paper's tables")
    p.add_argument("--data", default="movielens",
                   help="'movielens' (ml-latest-small) or 'citeulike' (CiteULike-a) under $GBRANK_DATA; "
                        "'citeulike-paper' ($GBRANK_DATA/citeulike-a-paper-splits: the paper's own folds and "
                        "result tables); a folder of ready folds fold_K/{train,test}.csv[.gz] (columns user,item "
                        "or user_id,item_id, optionally rating); or a FILE or FOLDER, its format told by its "
                        "content: MovieLens ratings.csv (header userId,movieId,rating,timestamp; ml-latest, "
                        "ml-20m...), ratings.dat (user::item::rating::timestamp; ml-1m, ml-10m) or u.data "
                        "(tab-separated, no header; ml-100k), each plain or .gz, or the release folder holding "
                        "one; CiteULike users.dat (per user: the count, then the item ids) or its folder; or a "
                        "CSV/TSV table whose header names user and item (or user_id and item_id) columns and "
                        "optionally rating")
    p.add_argument("--nsr", default=None,
                   help="negative sampling ratios, comma-separated (default 1,2,5; --quick: 1)")
    p.add_argument("--splits", default=None,
                   help="random splits: how many (split i uses seed --seed + i; default 3, --quick: 1); ready "
                        "folds: a count (the first N folds) or fold names such as fold_0,fold_2 (default all; "
                        "--quick: the first)")
    p.add_argument("--seed", type=int, default=0,
                   help="seed of the first random split (and of its models); for ready folds, of the test "
                        "negatives (with the fold and NSR)")
    p.add_argument("--losses", action="append", default=None, metavar="NAMES", help=_MF_LOSSES_HELP)
    p.add_argument("--baseline", default="listwise_nrbp",
                   help="loss the others are tested against (added if not selected)")
    p.add_argument("--baselines", default="popularity,random",
                   help="non-learned contenders evaluated under every protocol: popularity, random, or none")
    p.add_argument("--epochs", type=int, default=None,
                   help="most epochs per model (default 3000, the paper's; --quick: 3); early stopping ends "
                        "training sooner")
    p.add_argument("--patience", type=int, default=None,
                   help="stop after this many evaluated epochs without validation improvement (default 50, "
                        "measured: docs/bench.md, Epochs and patience; --quick: 2)")
    p.add_argument("--learning-rates", "--learning-rate", dest="learning_rates", default=None, metavar="RATES",
                   help="comma-separated learning rates for every loss, each (loss, rate) a cached run; or a grid "
                        "per family or loss, 'listwise=1,10;lambda=0.001,0.01' (the longest matching key applies; "
                        "losses no key names keep their default rate); or 'paper': the SIGIR'21 SGD grid, listwise "
                        "0.001,0.01,0.1,1,3,10 and lambda 0.001,0.01 (default: each loss's default rate for the "
                        "optimizer)")
    _add_choice(p, "--optimizer", ("adam", "sgd"),
                 "adam, or sgd as in the paper")
    p.add_argument("--fixed-train-negatives", action="store_true",
                   help="draw each user's training negatives once, as the paper's code does; without it they "
                        "are redrawn every epoch")
    p.add_argument("--drop-infeasible-users", action="store_true",
                   help="leave out the users of an NSR and split that have too few items left for their "
                        "training, validation or test negatives (counted in the reports) instead of stopping")
    p.add_argument("--n-factors", type=int, default=32,
                   help="latent factors: the length of each user's and item's vector")
    p.add_argument("--batch-size", type=int, default=32, help="users (lists) per step")
    p.add_argument("--validation-size", type=float, default=0.1,
                   help="share of each user's training positives held out to choose the epoch")
    p.add_argument("--relevance-threshold", type=float, default=None,
                   help="rating that makes a positive (default: 4 for MovieLens ratings, 1 otherwise)")
    p.add_argument("--min-positives", type=int, default=25, help="users with fewer positives are left out")
    _add_choice(p, "--negatives", ("unrated", "non_relevant"),
                 "draw a user's negatives from the items it never rated, or from every item it did not "
                 "rate as relevant (the thesis: ratings below the threshold are dropped before splitting)")
    _add_choice(p, "--epoch-on", ("validation", "test"),
                 "choose each model's epoch on a validation split of the training positives, or on the "
                 "test lists themselves (the papers' choice; optimistic for the sampled protocol)")
    p.add_argument("--quick", action="store_true",
                   help="smoke run: NSR 1, one split, four losses, 3 epochs (unless given)")
    p.add_argument("--device", default="auto", help="auto (CUDA when present), cpu, cuda, cuda:N")
    _add_report_arguments(
        p, "mf", jobs="runs trained in parallel (processes)",
        threads="torch/numba threads per run (default cores // jobs); with --jobs 1 the runs happen in this "
                "process, which gets this budget when torch has not been loaded yet",
        analyses=(MF_ANALYSES, MF_ANALYSES_DEFAULT))
    p.add_argument("--report-only", action="store_true",
                   help="train nothing: write the reports from the finished runs in OUT/runs, leaving out every "
                        "(NSR, split) that some loss has not finished (named in the reports)")
    p.add_argument("--no-plots", dest="plots", action="store_false", help="write the reports without PNGs")
    p.set_defaults(handler=_run_bench_mf)


def _run_bench_mf(args: argparse.Namespace, out) -> int:
    import shlex

    if args.threads is not None and args.threads < 1:
        raise CommandError(f"--threads must be a positive integer, got {args.threads}")
    from gbrank.bench import prepare_mf, run_mf

    try:
        plan = prepare_mf(data=args.data, nsr=args.nsr, splits=args.splits, seed=args.seed, losses=args.losses,
                          baseline=args.baseline, epochs=args.epochs, patience=args.patience,
                          learning_rates=args.learning_rates, optimizer=args.optimizer, n_factors=args.n_factors,
                          batch_size=args.batch_size, validation_size=args.validation_size,
                          relevance_threshold=args.relevance_threshold, min_positives=args.min_positives,
                          device=args.device, jobs=args.jobs, threads=args.threads, out=args.out,
                          quick=args.quick, plots=args.plots, report_only=args.report_only,
                          negatives=args.negatives, epoch_on=args.epoch_on, baselines=args.baselines,
                          fixed_train_negatives=args.fixed_train_negatives,
                          drop_infeasible_users=args.drop_infeasible_users, analyses=args.analyses,
                          command=" ".join(["gbrank", *(shlex.quote(a) for a in getattr(args, "argv", []))]))
    except (OSError, ValueError) as exc:
        raise CommandError(str(exc)) from None
    try:
        run_mf(plan, write=lambda text: print(text, file=out, flush=True))
    except ValueError as exc:
        if args.report_only:  # nothing finished to report
            raise CommandError(str(exc)) from None
        raise
    return 0


BENCH_COMMANDS: list[Callable] = [_add_bench_letor, _add_bench_mf]


def _add_bench(subparsers) -> None:
    """Benchmarks that train several contenders under one protocol and write a report (per-query scores, summary
    with CIs and paired tests, plots)."""
    p = _command(subparsers, "bench", _add_bench,
                 "benchmarks: compare ranking objectives under one protocol and write a report")
    bench_subparsers = p.add_subparsers(dest="bench_command", metavar="BENCHMARK", required=True,
                                        help="the benchmark to run; BENCHMARK --help describes it")
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
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True,
                                       help="the task; COMMAND --help describes it")
    for add in SUBCOMMANDS:
        add(subparsers)
    return parser


def main(argv: Sequence[str] | None = None, out=None) -> int:
    """Entry point of the ``gbrank`` script; returns the exit status.

    ``out`` is where results go (standard output by default); notes and errors go to
    standard error, and so do the progress lines of ``gbrank bench`` (INFO lines of the
    ``gbrank`` loggers: one per finished run and a heartbeat at least once a minute when
    standard error is not a terminal; a progress bar when it is)."""
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(argv)
    args.argv = argv
    stream = out if out is not None else sys.stdout
    try:
        if args.command == "bench":  # progress lines (INFO of the gbrank loggers) to stderr
            from gbrank._progress import log_to_stderr

            with log_to_stderr():
                status = args.handler(args, stream)
        else:
            status = args.handler(args, stream)
        stream.flush()  # a closed pipe shows here, not at exit
        return status
    except CommandError as exc:
        sub = getattr(args, "bench_command", None)
        print(f"gbrank {args.command}{' ' + sub if sub else ''}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:  # the reader went away (``| head``): stop quietly, as other command lines do
        _quiet_stdout()
        return EXIT_BROKEN_PIPE


def _quiet_stdout() -> None:
    """Point standard output at the null device, so that the interpreter's last flush of
    what the closed pipe did not take raises nothing (Python's documented recipe)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # no file descriptor (a captured stream)
        pass


if __name__ == "__main__":
    sys.exit(main())
