"""``gbrank bench mf``: argument declaration and handler (standard library only at top level)."""

from __future__ import annotations

import argparse


def _add_bench_mf(bench_subparsers) -> None:
    p = bench_subparsers.add_parser(
        "mf",
        help="the recommendation protocol of Li et al. 2021 with gbrank's MF: losses x NSR x random splits",
        description=(
            "For every NSR (negatives per positive) and seeded random split (ratings >= threshold "
            "are positives; users with at least --min-positives positives; 20% of each user's "
            "positives held out; NSR x as many sampled test negatives), train matrix factorisation "
            "with every chosen loss, choosing the epoch on a validation split of each user's "
            "training positives (never the test set). Evaluate each model on the full catalogue "
            "(every never-interacted item ranked), on the sampled test lists (the paper's "
            "protocol), and with the corrected sampled estimate of the full-catalogue metric "
            "(Krichene & Rendle 2020). Writes per-user scores, summary.md/json (means with 95% "
            "CIs, paired t-tests against --baseline with Holm's correction) and plots for each "
            "protocol to OUT/full, OUT/sampled, OUT/corrected, and OUT/summary.md and "
            "OUT/config.json. Finished runs are cached in OUT/runs and reused when the command "
            "is run again with the same settings."
        ),
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    p.add_argument("--data", default="movielens",
                   help="'movielens' (ml-latest-small) or 'citeulike' (CiteULike-a) under $GBRANK_DATA, or a "
                        "path: a MovieLens ratings file/folder, a CiteULike users.dat, or a CSV/TSV file with "
                        "a header naming columns user, item and optionally rating")
    p.add_argument("--nsr", default=None,
                   help="negative sampling ratios, comma-separated (default 1,2,5; --quick: 1)")
    p.add_argument("--splits", type=int, default=None,
                   help="seeded random splits per NSR; split i uses seed --seed + i (default 3; --quick: 1)")
    p.add_argument("--seed", type=int, default=0, help="seed of the first split (and of its models)")
    p.add_argument("--losses", action="append", default=None, metavar="NAMES",
                   help="comma-separated loss names (listwise_ndcg, lambda_nrbp@0.95, listwise_nrbp+minmax, "
                        "kos_warp, ...) or groups: listwise, lambda, kos, bounded, sampled (warp, bpr), "
                        "default (listwise + lambda + kos + bounded), all; repeatable (default: 'default'; "
                        "--quick: four losses)")
    p.add_argument("--baseline", default="listwise_nrbp",
                   help="loss the others are tested against (added if not selected)")
    p.add_argument("--epochs", type=int, default=None, help="most epochs per model (default 40; --quick: 3)")
    p.add_argument("--patience", type=int, default=None,
                   help="stop after this many epochs without validation improvement (default 8; --quick: 2)")
    p.add_argument("--learning-rate", type=float, default=0.01)
    p.add_argument("--optimizer", choices=("adam", "sgd"), default="adam")
    p.add_argument("--n-factors", type=int, default=32)
    p.add_argument("--batch-size", type=int, default=32, help="users (lists) per step")
    p.add_argument("--validation-size", type=float, default=0.1,
                   help="share of each user's training positives held out to choose the epoch")
    p.add_argument("--relevance-threshold", type=float, default=None,
                   help="rating that makes a positive (default: 4 for MovieLens ratings, 1 otherwise)")
    p.add_argument("--min-positives", type=int, default=25, help="users with fewer positives are left out")
    p.add_argument("--quick", action="store_true",
                   help="smoke run: NSR 1, one split, four losses, 3 epochs (unless given)")
    p.add_argument("--device", default="auto", help="auto (CUDA when present), cpu, cuda, cuda:N")
    p.add_argument("--jobs", type=int, default=1, help="runs trained in parallel (processes)")
    p.add_argument("--threads", type=int, default=None,
                   help="torch/numba threads per run (default cores // jobs); with --jobs 1 the runs happen in "
                        "this process, which gets this budget when torch has not been loaded yet")
    p.add_argument("--out", default=None, help="output folder (default runs/bench-mf-<data>)")
    p.add_argument("--report-only", action="store_true",
                   help="train nothing: write the reports from the finished runs in OUT/runs, leaving out every "
                        "(NSR, split) that some loss has not finished (named in the reports)")
    p.add_argument("--no-plots", dest="plots", action="store_false", help="write the reports without PNGs")
    p.set_defaults(handler=_run_bench_mf)


def _run_bench_mf(args: argparse.Namespace, out) -> int:
    import os
    import shlex
    import sys

    from gbrank.cli import CommandError

    if args.threads is not None and args.threads < 1:
        raise CommandError(f"--threads must be a positive integer, got {args.threads}")
    if "torch" not in sys.modules and "numba" not in sys.modules:
        # the runs of --jobs 1 happen in this process: give torch and numba the thread budget
        # before they load (workers of --jobs > 1 set their own)
        threads = args.threads or max(1, (os.cpu_count() or 1) // max(1, args.jobs))
        for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
            os.environ[var] = str(threads)

    from ._mf import prepare_mf, run_mf

    try:
        plan = prepare_mf(data=args.data, nsr=args.nsr, splits=args.splits, seed=args.seed, losses=args.losses,
                          baseline=args.baseline, epochs=args.epochs, patience=args.patience,
                          learning_rate=args.learning_rate, optimizer=args.optimizer, n_factors=args.n_factors,
                          batch_size=args.batch_size, validation_size=args.validation_size,
                          relevance_threshold=args.relevance_threshold, min_positives=args.min_positives,
                          device=args.device, jobs=args.jobs, threads=args.threads, out=args.out,
                          quick=args.quick, plots=args.plots,
                          report_only=args.report_only,
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
