"""``gbrank bench letor --tune``: the same tuning budget for every contender.

Every contender gets the same list of configurations (:func:`tune_configs`), each a set of
library-level tree-boosting settings named as :class:`gbrank.estimators.GBRanker` names
them:

``learning_rate``, ``num_leaves``, ``min_child_weight``, ``reg_lambda``

* ``--tune grid``: the full grid :data:`GRID` (2 x 2 x 2 x 2 = 16 configurations), in a fixed order.
* ``--tune random``: ``--tune-budget`` configurations drawn with the plan's seed from
  :data:`SPACE`: learning rate log-uniform on [0.02, 0.2] (rounded to 3 significant
  digits), the other settings uniformly from their lists.

A configuration reaches each library through its :class:`gbrank.backends.Backend` record
(:func:`library_settings`): the settings the record maps (``Backend.params``) are passed under
the library's own names; a library whose trees are sized by depth (CatBoost's symmetric
trees) gets ``depth = round(log2(num_leaves))`` (7 -> 3, 15 -> 4, 31 -> 5, 63 -> 6, 127 -> 7: the
symmetric tree with the nearest number of leaves); :data:`EXTRA_PARAMS` names the library
parameter of a setting the record lacks (CatBoost ``reg_lambda`` -> ``l2_leaf_reg``);
a setting with no equivalent is left out and said so (CatBoost's ``min_child_weight``: its
``min_data_in_leaf`` works only with non-symmetric trees).  Two configurations that reach
a library as the same parameters are one run (the run store's key holds the library-level
parameters), so CatBoost trains each distinct configuration once.

Each (contender, fold, configuration) run is trained with early stopping on the fold's vali
split; the configuration with the best vali score (the early-stopping metric at the best
round; the first one on ties) is chosen per contender and fold, and only its test
predictions are evaluated.  :func:`write_tuning` writes ``tuning.md``, ``tuning.csv`` and
``tuning.png`` (vali score of every configuration, the chosen one boxed).
"""

from __future__ import annotations

import math
import pathlib

import numpy as np

from gbrank.backends import BACKENDS

from ..._validation import is_positive_int

TUNE_MODES = ("none", "grid", "random")
DEFAULT_BUDGET = 8
#: the settings every configuration sets, in order
TUNED = ("learning_rate", "num_leaves", "min_child_weight", "reg_lambda")
#: ``--tune grid``: every combination, in this order (the last setting varies fastest)
GRID = {"learning_rate": (0.05, 0.1), "num_leaves": (15, 63), "min_child_weight": (1e-3, 1.0),
        "reg_lambda": (0.0, 10.0)}
#: ``--tune random``: learning rate log-uniform on the interval, the others uniform on the lists
SPACE = {"learning_rate": (0.02, 0.2), "num_leaves": (7, 15, 31, 63, 127),
         "min_child_weight": (1e-3, 1e-2, 0.1, 1.0, 10.0), "reg_lambda": (0.0, 0.1, 1.0, 10.0)}
#: library parameters of settings a backend record does not map (passed as backend_params)
EXTRA_PARAMS = {"catboost": {"reg_lambda": "l2_leaf_reg"}}
#: why a setting reaches a library not at all
NO_EQUIVALENT = {("catboost", "min_child_weight"): "CatBoost's min_data_in_leaf works only with Depthwise or "
                                                   "Lossguide trees, not its symmetric ones"}


def space_text() -> str:
    """The documented grid and random space, in words (for ``--help``, the report and docs)."""
    grid = " x ".join(f"{k} " + " or ".join(f"{x:g}" for x in v) for k, v in GRID.items())
    lo, hi = SPACE["learning_rate"]
    rand = (f"learning_rate log-uniform on [{lo:g}, {hi:g}]; " +
            "; ".join(f"{k} uniform over " + ", ".join(f"{x:g}" for x in SPACE[k]) for k in TUNED[1:]))
    return f"grid: {grid}; random: {rand}"


def tune_configs(mode: str, budget: int | None = None, seed: int = 0) -> list[dict]:
    """The configurations every contender is trained with.

    Parameters
    ----------
    mode : {"none", "grid", "random"}
        ``"none"``: no configuration (the plan's single setting); ``"grid"``: :data:`GRID`;
        ``"random"``: ``budget`` draws from :data:`SPACE`.
    budget : int, optional
        Number of random configurations (default :data:`DEFAULT_BUDGET`); only with ``"random"``.
    seed : int
        Seed of the random draws (the same seed gives the same configurations).

    Returns
    -------
    list of dict
        One dict per configuration, keys :data:`TUNED`.

    Examples
    --------
    >>> len(tune_configs("grid")), tune_configs("grid")[0]
    (16, {'learning_rate': 0.05, 'num_leaves': 15, 'min_child_weight': 0.001, 'reg_lambda': 0.0})
    >>> tune_configs("random", 3, seed=1) == tune_configs("random", 3, seed=1)
    True
    """
    if mode not in TUNE_MODES:
        raise ValueError(f"--tune must be one of {', '.join(TUNE_MODES)}, got {mode!r}")
    if mode != "random" and budget is not None:
        raise ValueError(f"--tune-budget sets the number of random configurations; it needs --tune random "
                         f"(got --tune {mode}; the grid has its own {_grid_size()} configurations)")
    if mode == "none":
        return []
    if mode == "grid":
        import itertools

        return [dict(zip(TUNED, values)) for values in itertools.product(*(GRID[k] for k in TUNED))]
    budget = DEFAULT_BUDGET if budget is None else budget
    if not is_positive_int(budget):
        raise ValueError(f"--tune-budget must be a whole number of configurations, at least 1, got {budget!r}")
    rng = np.random.default_rng([int(seed), 0x7E5E])
    lo, hi = SPACE["learning_rate"]
    out = []
    for _ in range(int(budget)):
        lr = float(f"{math.exp(rng.uniform(math.log(lo), math.log(hi))):.3g}")
        config = {"learning_rate": lr}
        for k in TUNED[1:]:
            values = SPACE[k]
            config[k] = values[int(rng.integers(len(values)))]
        out.append(config)
    return out


def _grid_size() -> int:
    return int(np.prod([len(v) for v in GRID.values()]))


def depth_for_leaves(num_leaves: int) -> int:
    """The depth of the symmetric tree whose 2**depth leaves are nearest ``num_leaves`` (1..16).

    >>> [depth_for_leaves(n) for n in (7, 15, 31, 63, 127)]
    [3, 4, 5, 6, 7]
    """
    return int(min(16, max(1, round(math.log2(num_leaves)))))


def library_settings(config: dict, library: str) -> tuple[dict, list[str]]:
    """A configuration as one library receives it.

    Returns ``(kwargs, dropped)``: ``kwargs`` are :class:`GBRanker` keyword arguments (the
    settings the library's :class:`~gbrank.backends.Backend` record maps, the depth of
    symmetric trees, and ``backend_params`` for :data:`EXTRA_PARAMS`); ``dropped`` names the
    settings with no equivalent in the library, with the reason.  Two configurations with
    equal ``kwargs`` train the same model.

    >>> library_settings({"learning_rate": 0.1, "num_leaves": 31, "min_child_weight": 1.0,
    ...                   "reg_lambda": 1.0}, "catboost")[0]
    {'learning_rate': 0.1, 'max_depth': 5, 'backend_params': {'l2_leaf_reg': 1.0}}
    """
    record = BACKENDS[library]
    kwargs, extra, dropped = {}, {}, []
    for setting in TUNED:
        value = config[setting]
        if setting == "num_leaves" and record.tree_size == "max_depth":
            kwargs["max_depth"] = depth_for_leaves(value)
        elif setting in record.params:
            kwargs[setting] = value
        elif setting in EXTRA_PARAMS.get(library, {}):
            extra[EXTRA_PARAMS[library][setting]] = value
        else:
            dropped.append(f"{setting} ({NO_EQUIVALENT.get((library, setting), 'no equivalent')})")
    if extra:
        kwargs["backend_params"] = extra
    return kwargs, dropped


def mapping_text() -> list[str]:
    """One line per library: how a configuration reaches it."""
    lines = []
    for b in BACKENDS.values():
        parts = []
        for setting in TUNED:
            if setting == "num_leaves" and b.tree_size == "max_depth":
                parts.append("num_leaves -> depth = round(log2(num_leaves))")
            elif setting in b.params:
                parts.append(f"{setting} -> {b.params[setting]}")
            elif setting in EXTRA_PARAMS.get(b.name, {}):
                parts.append(f"{setting} -> {EXTRA_PARAMS[b.name][setting]}")
            else:
                parts.append(f"{setting}: not passed ({NO_EQUIVALENT.get((b.name, setting), 'no equivalent')})")
        lines.append(f"{b.label}: " + "; ".join(parts))
    return lines


def choose(vali_scores, higher_is_better: bool = True) -> int:
    """Index of the best vali score (the first on ties); raises when every score is missing."""
    v = np.array([np.nan if s is None else float(s) for s in vali_scores], dtype=np.float64)
    if not np.isfinite(v).any():
        raise ValueError("no configuration has a vali score to choose by")
    v = np.where(np.isfinite(v), v if higher_is_better else -v, -np.inf)
    return int(np.argmax(v))


# ---------------------------------------------------------------------------------------
# the report of the tuning


def write_tuning(out, table, configs: list[dict], metric: str, mode: str) -> list[str]:
    """Write ``tuning.csv`` (one row per contender, fold and configuration: its vali score,
    best round, seconds, whether chosen), ``tuning.md`` (the configurations, the chosen one
    per contender and fold, the vali score of each configuration averaged over the folds)
    and ``tuning.png``; return the file names written."""
    import pandas as pd

    out = pathlib.Path(out)
    table = pd.DataFrame(table)
    table.to_csv(out / "tuning.csv", index=False, float_format="%.6g")
    contenders = list(dict.fromkeys(table["contender"]))
    folds = list(dict.fromkeys(table["fold"]))
    lines = [f"# Tuning ({mode}, {len(configs)} configurations, chosen by vali {metric})", "",
             "The same configurations for every contender:", "",
             "| config | " + " | ".join(TUNED) + " |", "|---:|" + "---:|" * len(TUNED)]
    for i, c in enumerate(configs):
        lines.append(f"| {i} | " + " | ".join(f"{c[k]:g}" for k in TUNED) + " |")
    lines += ["", "How a configuration reaches each library:", ""] + [f"- {t}" for t in mapping_text()]
    lines += ["", "Chosen configuration per contender and fold (vali score of the chosen one):", "",
              "| contender | " + " | ".join(folds) + " |", "|---|" + "---:|" * len(folds)]
    chosen = table[table["chosen"]]
    for name in contenders:
        cells = []
        for f in folds:
            row = chosen[(chosen["contender"] == name) & (chosen["fold"] == f)]
            cells.append("" if row.empty else f"{int(row['config'].iloc[0])} ({row['vali'].iloc[0]:.4f})")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    means = table.groupby(["contender", "config"], sort=False)["vali"].mean().unstack("config")
    lines += ["", f"Vali {metric} of every configuration, mean over the folds (bold: the best of the row):", "",
              "| contender | " + " | ".join(str(i) for i in means.columns) + " |",
              "|---|" + "---:|" * len(means.columns)]
    for name in contenders:
        row = means.loc[name]
        best = row.idxmax()
        lines.append(f"| {name} | " + " | ".join(
            (f"**{v:.4f}**" if i == best else f"{v:.4f}") for i, v in row.items()) + " |")
    files = ["tuning.csv", "tuning.md"]
    try:
        _plot(table, out / "tuning.png", metric, contenders, folds, len(configs))
        files.append("tuning.png")
        lines += ["", "![vali score per configuration](tuning.png)"]
    except ImportError as exc:  # pragma: no cover - matplotlib missing
        lines += ["", f"plot skipped: {exc}"]
    (out / "tuning.md").write_text("\n".join(lines) + "\n")
    return files


def _plot(table, path, metric, contenders, folds, n_configs) -> None:
    """One heatmap per fold: vali score, contender x configuration, the chosen cell boxed."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.patches import Rectangle

    ncol = min(3, len(folds))
    nrow = -(-len(folds) // ncol)
    fig = Figure(figsize=(1.6 + (0.45 * n_configs + 1.8) * ncol, nrow * (0.25 * len(contenders) + 1.3) + 0.4))
    for k, f in enumerate(folds):
        ax = fig.add_subplot(nrow, ncol, k + 1)
        rows = table[table["fold"] == f]
        grid = np.full((len(contenders), n_configs), np.nan)
        for r in rows.itertuples():
            grid[contenders.index(r.contender), int(r.config)] = r.vali
        im = ax.imshow(grid, aspect="auto", cmap="viridis")
        mid = np.nanmean(grid) if np.isfinite(grid).any() else 0.0
        for (i, j), v in np.ndenumerate(grid):
            if np.isfinite(v):
                ax.text(j, i, f"{v:.3f}", ha="center", va="center", fontsize=7,
                        color="black" if v > mid else "white")
        for r in rows[rows["chosen"]].itertuples():
            ax.add_patch(Rectangle((int(r.config) - 0.5, contenders.index(r.contender) - 0.5), 1, 1, fill=False,
                                   edgecolor="red", lw=1.5))
        ax.set_title(f"{f}: vali {metric}", fontsize=8)
        ax.set_xticks(range(n_configs))
        ax.set_xticklabels([str(i) for i in range(n_configs)], fontsize=7)
        ax.set_xlabel("configuration (tuning.md lists them)", fontsize=8)
        ax.set_yticks(range(len(contenders)))
        ax.set_yticklabels(contenders if k % ncol == 0 else [], fontsize=7)
        cb = fig.colorbar(im, ax=ax, fraction=0.05, pad=0.02)
        cb.ax.tick_params(labelsize=7)
        cb.set_label(f"vali {metric}", fontsize=7)
    fig.suptitle(f"vali {metric} per contender and configuration; red box: the chosen configuration", fontsize=9)
    fig.tight_layout()
    FigureCanvasAgg(fig)
    fig.savefig(path, dpi=100)
