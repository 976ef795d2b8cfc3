"""``gbrank bench letor``, its plan: the contenders, the arguments checked and the folds loaded
before any training (the protocol: ``_bench.py``).

The contenders come from the backend records (:data:`gbrank.backends.BACKENDS`): each
library's own ranking objectives, and gbrank's objectives on every library that takes them.
A fold without a ``vali`` split (the bundled example) gets one: ``vali_fraction`` of its
training queries, drawn with the seed.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import os
import pathlib
import re
from typing import Callable, Sequence

import numpy as np

from gbrank.backends import BACKENDS

BOUNDINGS = ("minmax", "expectation", "expectation_max", "distribution")
GBRANK_METRICS = ("ndcg", "ap", "rr", "nrbp@0.8", "nrbp@0.9", "nrbp@0.95")
REPORT_METRICS = ["ndcg@1", "ndcg@3", "ndcg@5", "ndcg@10", "err@10", "ap", "rr", "rbp@0.8", "rbp@0.9",
                  "rbp@0.95", "nrbp@0.8", "nrbp@0.9", "nrbp@0.95"]
CURVE_METRICS = [f"ndcg@{k}" for k in range(1, 21)]
QUICK = ("lightgbm:lambdarank", "xgboost:rank:ndcg", "catboost:YetiRank", "gbrank:ndcg", "gbrank:nrbp@0.95",
         "gbrank:nrbp@0.95+minmax")
QUICK_ROUNDS, QUICK_PATIENCE = 20, 5
DEFAULT_ROUNDS, DEFAULT_PATIENCE = 1000, 50
#: the prefix of gbrank's objectives on each library that takes them ("gbrank-<library>" otherwise)
GBRANK_PREFIX = {"lightgbm": "gbrank", "xgboost": "gbrank-xgb"}
#: the setting of the plan that sizes a library's trees (``Backend.tree_size``)
TREE_SIZE_SETTING = {"num_leaves": "num_leaves", "max_depth": "catboost_depth"}


@dataclasses.dataclass(frozen=True)
class Contender:
    """One way of training a ranker: a library and its objective (or loss)."""

    name: str
    library: str          # a key of gbrank.backends.BACKENDS
    objective: str        # GBRanker objective ("lightgbm:lambdarank", "catboost:YetiRank", "nrbp@0.95+minmax")
    kind: str             # "builtin" or "gbrank"
    bounding: str | None = None
    binary_labels: bool = False  # trained on labels >= 1 (XGBoost's rank:map refuses grades)
    normalised: bool = False     # LambdaObjective(score_normalization=True, list_normalization=True)
    options: tuple = ()          # more LambdaObjective arguments, ((name, value), ...)

    def describe(self) -> str:
        where = BACKENDS[self.library].label
        if self.options:
            args = ", ".join(f"{k}={v!r}" for k, v in self.options)
            text = f"gbrank LambdaObjective({self.objective!r}, {args}) on {where}"
        elif self.normalised:
            text = (f"gbrank LambdaObjective {self.objective!r} with LightGBM-style score and list "
                    f"normalisation on {where}")
        elif self.kind == "gbrank" and self.name in _LISTWISE:
            text = f"gbrank ListwiseObjective {self.objective!r} on {where} (GBRanker defaults)"
        elif self.kind == "gbrank":
            text = f"gbrank LambdaObjective {self.objective!r} on {where} (GBRanker defaults)"
        else:
            text = f"{where}'s own {self.objective!r}, library defaults"
        return text + ("; trained on binary labels (label >= 1)" if self.binary_labels else "")


def _registry() -> dict[str, Contender]:
    """Every library's own objectives (binary ones trained on label >= 1), then gbrank's
    objectives, unbounded and bounded, on every library that takes them."""
    reg = {}
    for b in BACKENDS.values():
        for objective in b.objectives:
            name = f"{b.name}:{objective}"
            reg[name] = Contender(name, b.name, name, "builtin", binary_labels=objective in b.binary_objectives)
    for b in BACKENDS.values():
        if not b.gbrank_objectives:
            continue
        prefix = GBRANK_PREFIX.get(b.name, f"gbrank-{b.name}")
        for m in GBRANK_METRICS:
            for bounding in (None, *BOUNDINGS):
                objective = m if bounding is None else f"{m}+{bounding}"
                reg[f"{prefix}:{objective}"] = Contender(f"{prefix}:{objective}", b.name, objective, "gbrank", bounding)
    for m in GBRANK_METRICS:  # does LightGBM's normalisation of the lambdas matter?
        reg[f"gbrank-norm:{m}"] = Contender(f"gbrank-norm:{m}", "lightgbm", m, "gbrank", normalised=True)
    for name, (objective, options) in NEW_OBJECTIVES.items():
        reg[name] = Contender(name, "lightgbm", objective, "gbrank", options=options)
    for objective in LISTWISE_OBJECTIVES:  # the listwise paradigm (gbrank.ListwiseObjective) on LightGBM
        reg[f"gbrank:{objective}"] = Contender(f"gbrank:{objective}", "lightgbm", objective, "gbrank")
    return reg


#: gbrank's listwise objectives (group ``listwise``): the paper's smoothed metrics and the known families
#: (``approx_ndcg``, ApproxNDCG, is ``listwise_ndcg``'s loss itself: benched once, as ``listwise_ndcg``)
LISTWISE_OBJECTIVES = ("listwise_ndcg", "listwise_ap", "listwise_rr", "listwise_nrbp", "softmax", "listnet",
                       "listmle", "neural_ndcg")
_LISTWISE = {f"gbrank:{o}" for o in LISTWISE_OBJECTIVES}


#: the newer gbrank objectives on LightGBM (group ``new``): name -> (metric, LambdaObjective
#: arguments).  A stochastic objective also gets ``random_state`` = the plan's seed.
NEW_OBJECTIVES = {
    "gbrank:err": ("err", ()),
    "gbrank:ndcg-loss2": ("ndcg", (("weighting", "ndcg_loss2"),)),
    "gbrank:ndcg-loss2pp": ("ndcg", (("weighting", "ndcg_loss2++"),)),
    "gbrank:ndcg-stochastic": ("ndcg", (("stochastic", 10),)),
    "gbrank:err-stochastic": ("err", (("stochastic", 10),)),
    "gbrank:ndcg-mean": ("ndcg", (("pair_method", "mean"),)),
}


def objective_arguments(contender: Contender, seed: int) -> dict:
    """The ``LambdaObjective`` keyword arguments of a gbrank contender beyond its metric."""
    args = dict(contender.options)
    if contender.normalised:
        args.update(score_normalization=True, list_normalization=True)
    if "stochastic" in args:
        args["random_state"] = seed
    return args


_UNAVAILABLE: dict = {}


def unavailable(contender: Contender) -> str | None:
    """Why this gbrank ``LambdaObjective`` cannot be built here (an argument it does not take
    yet, a value it refuses), or None when it can (built-ins: always None)."""
    if contender.kind != "gbrank" or not (contender.options or contender.name in NEW_OBJECTIVES):
        return None
    if contender.name not in _UNAVAILABLE:
        from gbrank.lambdas import LambdaObjective

        try:
            LambdaObjective(contender.objective, **objective_arguments(contender, 0))
            _UNAVAILABLE[contender.name] = None
        except (TypeError, ValueError) as exc:
            args = ", ".join(f"{k}={v!r}" for k, v in contender.options)
            _UNAVAILABLE[contender.name] = (f"{contender.name} is unavailable: LambdaObjective({contender.objective!r}, "
                                            f"{args}) fails here ({type(exc).__name__}: {exc}); it is left out "
                                            "(this gbrank does not have that objective yet)")
    return _UNAVAILABLE[contender.name]


REGISTRY: dict[str, Contender] = _registry()
GROUPS: dict[str, Callable[[Contender], bool]] = {
    "all": lambda c: True,
    "builtin": lambda c: c.kind == "builtin",
    **{name: (lambda c, name=name: c.library == name) for name in sorted(BACKENDS)},
    "gbrank": lambda c: c.kind == "gbrank" and c.bounding is None and not c.normalised and c.name not in NEW_OBJECTIVES
    and c.name not in _LISTWISE,
    "bounded": lambda c: c.bounding is not None,
    "normalised": lambda c: c.normalised,
    "default": lambda c: c.kind == "builtin" or (c.kind == "gbrank" and c.library == "lightgbm" and c.bounding is None
                                                 and not c.normalised and c.name not in NEW_OBJECTIVES
                                                 and c.name not in _LISTWISE),
    "new": lambda c: c.name in NEW_OBJECTIVES,
    "listwise": lambda c: c.name in _LISTWISE,
    "quick": lambda c: c.name in QUICK,
}
GROUP_HELP = {
    "all": "every contender",
    "builtin": "the libraries' own objectives (" + ", ".join(b.label for b in BACKENDS.values()) + ")",
    **{b.name: f"everything trained with {b.label}" for b in BACKENDS.values()},
    "gbrank": "gbrank's unbounded objectives on LightGBM (gbrank:) and XGBoost (gbrank-xgb:)",
    "bounded": "gbrank's bounded objectives (+minmax, +expectation, +expectation_max, +distribution)",
    "normalised": "gbrank's unbounded objectives on LightGBM with LightGBM-style score and list normalisation "
                  "(gbrank-norm:)",
    "default": "builtin + gbrank's unbounded objectives on LightGBM",
    "new": "the newer gbrank objectives on LightGBM: " + ", ".join(NEW_OBJECTIVES) + " (those this gbrank's "
           "LambdaObjective does not take yet are left out, with a note)",
    "quick": "a handful for smoke runs: " + ", ".join(QUICK),
    "listwise": "gbrank's listwise objectives (ListwiseObjective) on LightGBM: " + ", ".join(LISTWISE_OBJECTIVES),
}


def contender_listing() -> str:
    """The text of ``--list-contenders``."""
    lines = ["groups:"]
    for g in GROUPS:
        n = sum(GROUPS[g](c) for c in REGISTRY.values())
        lines.append(f"  {g:10s} {n:3d}  {GROUP_HELP[g]}")
    lines += ["", "contenders (also usable as globs, e.g. 'gbrank:nrbp*' or '*+minmax'):"]
    lines += [f"  {c.name:44s} {c.describe()}" + (" [unavailable here]" if unavailable(c) else "")
              for c in REGISTRY.values()]
    return "\n".join(lines)


def select_contenders(tokens: Sequence[str] | None, *, quick: bool = False, baseline: str) -> list[Contender]:
    """Contenders named by ``tokens`` (names, groups or globs; comma-separated strings allowed),
    in registry order, with the baseline added.  Raises ``ValueError`` for a token that names
    nothing, listing the valid names."""
    if baseline not in REGISTRY:
        raise ValueError(f"unknown baseline {baseline!r}; choose one of: {', '.join(sorted(REGISTRY))}")
    if tokens is None:
        tokens = ["quick" if quick else "default"]
    words = [w.strip() for t in tokens for w in str(t).split(",")]
    words = [w for w in words if w]
    if not words:
        raise ValueError("--contenders is empty; name contenders or groups, e.g. --contenders default "
                         "(see --list-contenders)")
    chosen: set[str] = {baseline}
    for w in words:
        if w in GROUPS:
            hits = {n for n, c in REGISTRY.items() if GROUPS[w](c)}
        elif w in REGISTRY:
            hits = {w}
        else:
            hits = set(fnmatch.filter(REGISTRY, w))
        if not hits:
            raise ValueError(
                f"unknown contender {w!r}; valid groups: {', '.join(sorted(GROUPS))}; valid names: "
                f"{', '.join(sorted(REGISTRY))} (globs such as 'gbrank:nrbp*' work too)")
        chosen |= hits
    return [c for n, c in REGISTRY.items() if n in chosen]


# ---------------------------------------------------------------------------------------
# the plan: everything checked and loaded before any training


@dataclasses.dataclass
class LetorPlan:
    data: str
    data_label: str
    folds: list               # gbrank.datasets.LetorFold, each with a vali split
    contenders: list[Contender]
    settings: dict            # what determines a run's result (hashed into the cache key)
    out_dir: pathlib.Path
    jobs: int
    threads: int
    notes: list[str]
    baseline: str
    command: str | None = None
    tune: str = "none"                                # "none", "grid" or "random" (letor/_tune.py)
    configs: list = dataclasses.field(default_factory=list)   # the configurations of every contender
    also_against: list = dataclasses.field(default_factory=list)  # more references of the paired tests
    left_out: list = dataclasses.field(default_factory=list)   # messages: contenders unavailable here
    max_grade: float | None = None                    # top grade of the data's scale (ERR)
    dtype: str = "float64"                            # of the features as loaded (in each fold's fingerprint)
    analyses: tuple = ()                              # the named analyses the report runs (letor/_analyses.py)


DTYPES = ("float64", "float32")  # the feature types of --dtype


def _positive(value, name: str, minimum=1):
    if value is None or value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {value}")
    return value


def _load_folds(data: str, folds, quick: bool, dtype=np.float64):
    from gbrank.datasets import DATASETS, load_example, load_letor_folds, resolve

    if data == "example":
        if folds is not None and list(folds) != [1]:
            raise ValueError("--data example has a single train/test set; leave out --folds "
                             "(or pass a folder with Fold1..FoldK sub-folders)")
        return [load_example(dtype=dtype)], "example", "LightGBM's lambdarank example data (bundled with gbrank)"
    path = pathlib.Path(data).expanduser()
    if path.exists() or os.sep in data or data.startswith("."):
        if not path.is_dir():
            raise FileNotFoundError(f"--data {data!r}: no such folder; give a folder with Fold1..FoldK "
                                    "sub-folders or train/test files, 'example', or a dataset name")
        folder, label = path, path.name
    elif data in DATASETS:
        folder, label = resolve(data), data
    else:
        raise FileNotFoundError(
            f"--data {data!r} is not 'example', an existing folder, or a known dataset name "
            f"({', '.join(sorted(DATASETS))}); for a folder of your own give its path")
    if not folder.is_dir():
        raise FileNotFoundError(f"--data {data!r}: {folder} does not exist; download the data there or "
                                "point GBRANK_DATA at the folder holding it")
    if folds is not None and not folds:
        raise ValueError("--folds is empty; give fold numbers such as 1,3")
    if quick and folds is None:
        subs = sorted(int(m.group(1)) for p in folder.iterdir() if (m := re.match(r"^Fold(\d+)$", p.name)))
        folds = subs[:1] or None
    return load_letor_folds(folder, folds=folds, dtype=dtype), label, str(folder)


def _carve_vali(fold, fraction: float, seed: int):
    """A copy of ``fold`` whose training queries lose ``fraction`` of them (drawn with ``seed``)
    to a new vali split; rows keep their order."""
    from gbrank.datasets import LetorFold, LetorSplit

    qids = np.unique(fold.train.qid)
    n_vali = max(1, int(round(fraction * len(qids))))
    if n_vali >= len(qids):
        raise ValueError(f"{fold.name} has {len(qids)} training queries: too few to hold out "
                         f"{fraction:.0%} of them for early stopping")
    held = np.random.default_rng(seed).choice(qids, size=n_vali, replace=False)
    is_vali = np.isin(fold.train.qid, held)
    part = lambda rows: LetorSplit(fold.train.X[rows], fold.train.y[rows], fold.train.qid[rows])  # noqa: E731
    return LetorFold(fold.name, part(~is_vali), part(is_vali), fold.test), n_vali, len(qids)


def _check_libraries(contenders) -> None:
    import importlib.util

    for lib in sorted({c.library for c in contenders}):
        if importlib.util.find_spec(lib) is None:
            names = [c.name for c in contenders if c.library == lib]
            raise ValueError(f"{lib} is not installed but contenders {names[:3]}{'...' if len(names) > 3 else ''} "
                             f"need it; pip install 'gbrank[{BACKENDS[lib].extra}]' or leave them out")


def prepare_letor(*, data: str = "example", folds=None, contenders=None, quick: bool = False,
                  rounds: int | None = None, patience: int | None = None,
                  early_stopping_metric: str = "ndcg@10", learning_rate: float = 0.05,
                  num_leaves: int = 31, depth: int = 6, seed: int = 0, vali_fraction: float = 0.2,
                  baseline: str = "lightgbm:lambdarank", out_dir=None, jobs: int = 1,
                  threads: int | None = None, command: str | None = None, tune: str = "none",
                  tune_budget: int | None = None, also_against=None, dtype: str = "float64",
                  analyses=None) -> LetorPlan:
    """Check every argument and load the data; raise ``ValueError``/``OSError`` with a message
    that names the problem and the fix.  Nothing is trained here.

    ``tune``: ``"none"`` (one setting: ``learning_rate``, ``num_leaves``, ``depth``),
    ``"grid"`` or ``"random"`` (``tune_budget`` configurations): the same configurations for
    every contender, the vali-best one chosen per contender and fold (``_tune.py``).
    ``also_against``: more references (contender names) every contender is tested against,
    beside ``baseline``; added to the contenders if not selected.  Contenders whose gbrank
    objective this installation cannot build are left out, each with a message in
    ``plan.left_out``.  ``analyses``: the named analyses of ``letor/_analyses.py`` the report
    runs (comma-separated names, a list, or ``"none"``); None: those of the data preset
    (``findings`` and ``paradigm`` for a dataset name such as mq2008, none for ``"example"`` or
    a folder)."""
    from gbrank.metrics import parse_metric

    from .._analyses import choose_analyses
    from ._analyses import ANALYSES, PRESET
    from ._tune import tune_configs

    rounds = (QUICK_ROUNDS if quick else DEFAULT_ROUNDS) if rounds is None else rounds
    patience = (QUICK_PATIENCE if quick else DEFAULT_PATIENCE) if patience is None else patience
    _positive(rounds, "--rounds")
    _positive(patience, "--patience")
    _positive(jobs, "--jobs")
    _positive(num_leaves, "--num-leaves", 2)
    if not 1 <= depth <= 16:
        raise ValueError(f"--depth must lie in 1..16 (CatBoost's limit), got {depth}")
    if not learning_rate > 0:
        raise ValueError(f"--learning-rate must be positive, got {learning_rate}")
    if not 0 < vali_fraction < 1:
        raise ValueError(f"--vali-fraction must lie strictly between 0 and 1, got {vali_fraction}")
    cores = os.cpu_count() or 1
    threads = max(1, cores // jobs) if threads is None else _positive(threads, "--threads")
    try:
        metric = str(parse_metric(early_stopping_metric))
    except ValueError as exc:
        raise ValueError(f"--early-stopping-metric: {exc}") from None
    configs = tune_configs(tune, tune_budget, seed)
    references = _references(also_against, baseline)
    chosen = select_contenders(contenders, quick=quick, baseline=baseline)
    chosen += [REGISTRY[r] for r in references if REGISTRY[r] not in chosen]
    chosen = [c for c in REGISTRY.values() if c in chosen]
    for ref in (baseline, *references):
        why = unavailable(REGISTRY[ref])
        if why:
            raise ValueError(f"reference {ref!r} cannot be trained here: {why}")
    left_out = [why for c in chosen if (why := unavailable(c))]
    chosen = [c for c in chosen if not unavailable(c)]
    _check_libraries(chosen)
    if dtype not in DTYPES:
        raise ValueError(f"--dtype must be one of {', '.join(DTYPES)}, got {dtype!r}")
    chosen_analyses = choose_analyses(analyses, ANALYSES)
    loaded, label, source = _load_folds(data, folds, quick, np.dtype(dtype).type)
    if analyses is None:
        chosen_analyses = choose_analyses(None, ANALYSES, PRESET if _is_preset(data) else ())
    notes, ready = [], []
    for fold in loaded:
        if fold.vali is None:
            fold, n_vali, n_train = _carve_vali(fold, vali_fraction, seed)
            notes.append(f"{fold.name} has no vali split: {n_vali} of its {n_train} training queries "
                         f"(drawn with seed {seed}) are held out for early stopping.")
        ready.append(fold)
    settings = {"early_stopping_metric": metric, "rounds": rounds, "patience": patience,
                "learning_rate": learning_rate, "num_leaves": num_leaves, "catboost_depth": depth,
                "seed": seed, "vali_fraction": vali_fraction}
    out = pathlib.Path(out_dir) if out_dir else pathlib.Path("runs") / f"bench-letor-{label}"
    top = max(float(np.max(s.y)) for f in ready for s in (f.train, f.vali, f.test))
    return LetorPlan(data, label, ready, chosen, settings, out, jobs, threads, notes + left_out, baseline, command,
                     tune, configs, references, left_out, top, dtype, chosen_analyses)


def _is_preset(data: str) -> bool:
    """Whether ``--data`` names one of the research's data sets (not the example, not a folder)."""
    from gbrank.datasets import DATASETS

    path = pathlib.Path(data).expanduser()
    return data in DATASETS and not (path.exists() or os.sep in data or data.startswith("."))


def _references(also_against, baseline: str) -> list[str]:
    """The names of ``--also-against`` (comma-separated strings allowed), checked."""
    if also_against is None:
        return []
    if isinstance(also_against, str):
        also_against = [also_against]
    names = [w.strip() for t in also_against for w in str(t).split(",") if w.strip()]
    if not names:
        raise ValueError("--also-against is empty; name one or more contenders, e.g. --also-against catboost:YetiRank")
    for n in names:
        if n not in REGISTRY:
            raise ValueError(f"--also-against: unknown contender {n!r}; choose among: {', '.join(sorted(REGISTRY))}")
        if n == baseline:
            raise ValueError(f"--also-against {n!r} is already the --baseline; name another reference")
    return list(dict.fromkeys(names))
