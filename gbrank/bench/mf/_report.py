"""``gbrank bench mf``, the reports: one per protocol through ``gbrank.bench._report.write_report``, and
``OUT/summary.md`` with the protocols side by side and the findings."""

from __future__ import annotations

import json
import pathlib
from dataclasses import asdict, replace

import numpy as np
import pandas as pd

from ..._validation import plural
from ._baselines import DESCRIPTIONS as BASELINE_TEXT
from ._plan import METRICS, PROTOCOLS, THESIS_TABLE_5_1, MFPlan


def _config(plan: MFPlan, meta_list, elapsed) -> dict:
    from .._report import environment

    env = environment(("numpy", "scipy", "pandas", "numba", "torch", "sklearn"))
    return {"benchmark": "gbrank bench mf", "plan": asdict(plan), "environment": env,
            "seeds": {"splits": plan.seeds, "model": "random_state = split seed (fold number for ready folds)",
                      "kind": "ready folds" if plan.ready else "seeded random splits"},
            "seconds_this_call": round(elapsed, 1),
            "runs": [{k: v for k, v in m.items() if k != "history"} for m in meta_list]}


CONVENTIONS = {
    "full": "held-out positives ranked among every catalogue item the user never interacted with",
    "sampled": "held-out positives ranked among NSR x as many sampled never-interacted items (the paper's lists)",
    "corrected": "full-catalogue metric estimated from the sampled ranks only: posterior mean per relevant item "
                 "under a uniform prior on its full rank (Krichene & Rendle 2020, bias-variance correction, gamma=1)",
}


def epoch_choice(plan: MFPlan) -> str:
    """How the plan chooses each model's epoch, and where its negatives come from."""
    if plan.epoch_on == "test":
        text = ("Epoch chosen on the test lists themselves (--epoch-on test, the papers' choice: optimistic for "
                "the sampled protocol)")
    else:
        text = (f"Epoch chosen on a validation split of {plan.validation_size:g} of each user's training positives "
                "(never the test set)")
    if plan.negatives == "non_relevant":
        text += (f"; negatives drawn from every item not rated >= {plan.relevance_threshold:g} (--negatives "
                 "non_relevant: lower ratings dropped before splitting)")
    return text


def _n(x) -> str:
    """A count with thousands separators: ``100,836``."""
    return f"{int(x):,}"


def _list(values) -> str:
    """``1, 2, 5``: the items of a list in words, never its Python repr."""
    return ", ".join(f"{v:g}" if isinstance(v, float) else str(v) for v in values)


def users_per_split(per_query: pd.DataFrame) -> dict:
    """``{split label: users evaluated there}``: the users of the tables, counted from the
    per-user rows themselves (every contender and protocol has the same users)."""
    rows = per_query[per_query["protocol"] == per_query["protocol"].iloc[0]] if "protocol" in per_query else per_query
    first = rows["contender"].iloc[0]
    by = rows[rows["contender"] == first].groupby("split", sort=False)["qid"].nunique()
    return {str(k): int(v) for k, v in by.items()}


def data_lines(plan: MFPlan, per_query: pd.DataFrame) -> list[str]:
    """The data of the run as markdown bullet lines: what was read, which users were kept
    and left out, and the users of every (NSR, split) as the tables count them (from
    ``per_query``, the source of the tables, so the two always agree)."""
    d = plan.data_summary
    left = {k: int(v) for k, v in d.get("users_left_out", {}).items() if v}
    per_split = users_per_split(per_query)
    t = f"{plan.relevance_threshold:g}"
    lines = []
    if "interactions" in d:  # seeded random splits of one table
        at = f"nsr{max(plan.nsr)}-{plan.split_label(plan.seeds[0])}"  # the split prepare_mf summarised
        eligible = int(d["users_kept"]) + left.get(at, 0)
        lines += [f"- data: {plan.data_name}, {_n(d['interactions'])} interactions, {_n(d['items'])} items",
                  f"- users: {_n(eligible)} with at least {plan.min_positives} positives (rating >= {t}) kept, "
                  f"{_n(d['users_dropped'])} with fewer left out"]
        where = f" (in {at}, without the users left out there)" if left.get(at) else ""
        lines.append(f"- positives per split{where}: {_n(d['train_positives'])} for training (the validation "
                     f"positives carved from them) and {_n(d['test_positives'])} held out for the test")
    elif d:  # ready folds
        first = d["folds"][0] if d.get("folds") else "the first fold"
        lines += [f"- data: {plan.data_name}, ready folds {_list(d.get('folds', []))} "
                  f"(columns {d.get('columns', '')})",
                  f"- {first}: {plural(d['users'], 'user')} with training positives (rating >= {t}), "
                  f"{_n(d['items'])} items, {_n(d['train_positives'])} training and {_n(d['test_positives'])} "
                  "test positives"]
    else:
        lines.append(f"- data: {plan.data_name}")
    if left:
        lines.append("- users left out where they are short of negatives (--drop-infeasible-users): "
                     + "; ".join(f"{k}: {_n(v)}" for k, v in left.items()))
    counts = set(per_split.values())
    if len(counts) == 1:
        lines.append(f"- users evaluated (the rows of every table): {_n(counts.pop())} in each (NSR, split): "
                     f"{_list(per_split)}")
    else:
        lines.append("- users evaluated (the rows of every table), per (NSR, split): "
                     + "; ".join(f"{k}: {_n(v)}" for k, v in per_split.items()))
    return lines


def lr_text(plan: MFPlan) -> str:
    """The learning rates of the plan in words."""
    if isinstance(plan.learning_rates, dict):
        grids = "; ".join(f"{k} {', '.join(f'{x:g}' for x in v)}" for k, v in plan.learning_rates.items())
        return (f"{plan.optimizer} with learning rates {grids} (other losses: their default rate; each loss's "
                "protocol rows use the rate with the best validation value of its own metric)")
    if plan.learning_rates:
        return (f"{plan.optimizer} with learning rates {', '.join(f'{x:g}' for x in plan.learning_rates)} (each "
                "loss's protocol rows use the rate with the best validation value of its own metric)")
    rates = sorted({lr for loss in plan.losses for lr in plan.learning_rates_of(loss)})
    return f"{plan.optimizer} at each loss's default learning rate ({', '.join(f'{x:g}' for x in rates)})"


def write_reports(plan: MFPlan, per_query: pd.DataFrame, meta_list, elapsed, all_meta=None) -> dict:
    """One report per protocol (``OUT/<protocol>``), ``OUT/summary.md`` beside them, the two
    selections (``OUT/selection.csv``), the baseline flags (``OUT/baseline_flags.csv``) and
    what the named analyses of ``plan.analyses`` write (``mf/_analyses.py``).  ``meta_list``:
    the runs of the protocol rows (one learning rate per loss); ``all_meta``: every run of the
    grid."""
    from .._report import write_report
    from ._analyses import ANALYSES

    out = pathlib.Path(plan.out)
    config = _config(plan, meta_list, elapsed)
    data = data_lines(plan, per_query)
    summaries = {}
    for protocol in PROTOCOLS:
        rows = per_query[per_query["protocol"] == protocol].drop(columns=["protocol", "nsr", "seed"])
        conventions = {"protocol": f"{protocol}: {CONVENTIONS[protocol]}", "relevant": f"rating >= "
                       f"{plan.relevance_threshold:g}", "gain": "binary (2^1 - 1 = 1)", "ap divisor": "R",
                       "ties": "average" if protocol == "sampled" else "strict (a negative ties nowhere)",
                       "empty lists": "none (every user has held-out positives)"}
        notes = ["\n".join(["Data and settings:", "", *data, f"- splits pooled: NSR {_list(plan.nsr)} x "
                             f"{', '.join(plan.split_label(x) for x in plan.seeds)}; each user appears once per split "
                             "(the users column of the table counts a user once per split)",
                             f"- epoch: {epoch_choice(plan)[0].lower()}{epoch_choice(plan)[1:]}",
                             "- baselines: " + ("; ".join(f"{b}: {BASELINE_TEXT[b]}" for b in plan.baselines)
                                                or "none"),
                             f"- training: MF with {plan.n_factors} factors, {lr_text(plan)}, batches of "
                             f"{plan.batch_size} users, at most {plan.epochs} epochs, early stopping after "
                             f"{plan.patience} evaluated epochs without a validation improvement"])]
        if plan.unfinished:
            notes.append(f"Not finished and left out (--report-only): {', '.join(plan.unfinished)}.")
        summaries[protocol] = write_report(
            rows, out / protocol, baseline=plan.baseline, metrics=METRICS,
            title=f"gbrank bench mf: {plan.data_name}, {protocol} evaluation", config=config,
            conventions=conventions, notes=notes, plots=plan.plots, unit="user", seconds=run_seconds(meta_list))
    (out / "config.json").write_text(json.dumps(config, indent=1, default=str) + "\n")
    beyond_table(meta_list).to_csv(out / BEYOND_FILE, index=False, float_format="%.8g")
    text = overview(plan, per_query, meta_list, summaries)
    table = protocol_table(per_query, plan.metric_of)
    plan_done = replace(plan, nsr=[n for n in plan.nsr if (table["nsr"] == n).any()])
    if plan.plots and protocols_plot(plan_done, table, out / "protocols.png") is not None:
        text += ("\n![sampled and corrected means against full-catalogue means](protocols.png)\n")
    flags = baseline_flags(plan_done, per_query)
    flags.to_csv(out / "baseline_flags.csv", index=False, float_format="%.8g")
    text += "\n".join(baseline_section(plan_done, flags)) + "\n"
    text += "\n".join(feasibility_section(plan)) + "\n"
    from ._select import history_frame, select, selection_means

    chosen = select(history_frame(all_meta if all_meta is not None else meta_list))
    chosen.to_csv(out / "selection.csv", index=False, float_format="%.8g")
    means = selection_means(chosen)
    text += "\n".join(selection_section(plan_done, means)) + "\n"
    for name in plan.analyses:  # the named analyses asked for (--analyses, or the data preset)
        text += ANALYSES[name].run(plan, out, means, [
            f"Folds run: {', '.join(plan.split_label(x) for x in plan.seeds)}; NSR {_list(plan_done.nsr)}; "
            f"{lr_text(plan)}; at most {plan.epochs} epochs, early stopping after {plan.patience} evaluated "
            f"epochs without a validation improvement; {epoch_choice(plan)}."])
    (out / "summary.md").write_text(text)
    return summaries


def run_seconds(meta_list) -> dict:
    """``{loss: {"training": s, "compile": s or None}}`` summed over its runs: training as
    timed, and apart from it the once-per-process warm-up (None for runs stored before
    gbrank timed it apart)."""
    out: dict = {}
    for m in meta_list:
        t = out.setdefault(m["loss"], {"training": 0.0, "compile": None})
        t["training"] += float(m.get("train_seconds") or 0.0)
        if m.get("compile_seconds") is not None:
            t["compile"] = (t["compile"] or 0.0) + float(m["compile_seconds"])
    return out


def baseline_flags(plan: MFPlan, per_query: pd.DataFrame) -> pd.DataFrame:
    """Per NSR, headline metric and loss on the full catalogue: the loss's mean, the
    popularity baseline's, their paired difference (loss - popularity over the (split,
    user) pairs both have), the two-sided paired t-test's p, and ``at_or_below``."""
    rows = []
    if "popularity" not in plan.baselines:
        return pd.DataFrame(rows, columns=["nsr", "metric", "loss", "mean", "popularity", "diff", "p", "n",
                                           "at_or_below"])
    full = per_query[per_query["protocol"] == "full"]
    for n in plan.nsr:
        at = full[full["nsr"] == n]
        pop = at[at["contender"] == "popularity"]
        if pop.empty:
            continue
        for metric in METRICS:
            for loss in plan.losses:
                own = at[at["contender"] == loss]
                if own.empty:
                    continue
                r = paired_difference(per_query, loss, "popularity", metric, "full", nsr=n)
                rows.append({"nsr": n, "metric": metric, "loss": loss, "mean": own[metric].mean(),
                             "popularity": pop[metric].mean(), "diff": r["diff"], "p": r["p"], "n": r["n"],
                             "at_or_below": bool(own[metric].mean() <= pop[metric].mean())})
    return pd.DataFrame(rows, columns=["nsr", "metric", "loss", "mean", "popularity", "diff", "p", "n", "at_or_below"])


def baseline_section(plan: MFPlan, flags: pd.DataFrame) -> list[str]:
    """``summary.md``: every loss whose full-catalogue mean is at or below popularity's."""
    lines = ["", "## Losses at or below the popularity baseline (full catalogue)", ""]
    if "popularity" not in plan.baselines:
        return lines + ["The popularity baseline was not run (--baselines)."]
    low = flags[flags["at_or_below"]]
    lines.append(f"Per NSR and metric, every loss whose mean over users and splits is at or below the popularity "
                 f"baseline's ({BASELINE_TEXT['popularity']}); difference = loss − popularity over the (split, user) "
                 "pairs, p = two-sided paired t-test (not adjusted). All pairs: `baseline_flags.csv`. "
                 f"{len(low)} of {len(flags)} (NSR, metric, loss) cells flagged.")
    if len(low):
        lines += ["", "| NSR | metric | loss | loss mean | popularity mean | difference | p |",
                  "|---:|---|---|---:|---:|---:|---:|"]
        for r in low.itertuples(index=False):
            lines.append(f"| {r.nsr} | {r.metric} | **{r.loss}** | {r.mean:.4f} | {r.popularity:.4f} | "
                         f"{r.diff:+.4f} | {r.p:.2g} |")
    return lines


def feasibility_section(plan: MFPlan) -> list[str]:
    """``summary.md``: the pre-check's counts and the users left out."""
    lines = ["", "## Feasibility of the negatives (checked before training)", ""]
    short = [r for r in plan.feasibility if r["short"]]
    if not short:
        n = len(plan.feasibility)
        return lines + [f"Every user of every (NSR, split) had enough items left for its training, validation and "
                        f"test negatives ({n} (NSR, split) {'pair' if n == 1 else 'pairs'} checked)."]
    lines += ["Users short of negatives, " + ("left out of the (NSR, split) where they are short "
                                              "(--drop-infeasible-users):" if plan.drop_infeasible_users else ":"), "",
              "| NSR | split | users | left out | short of training | of validation | of test negatives |",
              "|---:|---|---:|---:|---:|---:|---:|"]
    for r in plan.feasibility:
        lines.append(f"| {r['nsr']} | {r['split']} | {r['users']} | {r['short']} | {r['short_train']} | "
                     f"{r['short_validation']} | {r['short_test']} |")
    return lines


def selection_section(plan: MFPlan, means: pd.DataFrame) -> list[str]:
    """``summary.md``: the two selections of (learning rate, epoch) per loss and metric."""
    from ._select import PAPER_METRICS, SELECTIONS

    lines = ["", "## The paper's metrics on the sampled test lists, two selections", "",
             f"Every evaluated epoch of every run recorded AP, nDCG, RR and RBP (p = 0.8, 0.9, 0.95; plain, "
             f"un-normalised) on the test lists and on the validation lists. Per loss, NSR and metric, over the "
             f"learning rates and epochs: **(a)** {SELECTIONS['a']}; **(b)** {SELECTIONS['b']}. Means over the "
             f"splits; every choice in `selection.csv`."]
    if means.empty:
        return lines + ["", "(no run recorded the metrics)"]
    for n in plan.nsr:
        sub = means[means["nsr"] == n]
        if sub.empty:
            continue
        lines += ["", f"### NSR {n}", "", "| loss | " + " | ".join(f"{m} (a) | {m} (b)" for m in PAPER_METRICS) + " |",
                  "|---|" + "---:|" * (2 * len(PAPER_METRICS))]
        for loss in plan.contenders():
            cells = []
            for m in PAPER_METRICS:
                for sel in ("a", "b"):
                    v = sub[(sub["loss"] == loss) & (sub["metric"] == m) & (sub["selection"] == sel)]["test"]
                    cells.append(f"{v.iloc[0]:.4f}" if len(v) else "-")
            lines.append(f"| {loss} | " + " | ".join(cells) + " |")
    return lines


BEYOND_FILE = "beyond_accuracy.csv"
#: the columns of the beyond-accuracy table: aggregate of gbrank.beyond_accuracy -> heading
BEYOND_COLUMNS = {"coverage": "coverage", "aggregate_diversity": "distinct items", "novelty": "novelty",
                  "intra_list_diversity": "ILD", "serendipity": "serendipity", "arp": "ARP",
                  "popularity_ratio": "ARP / catalogue"}


def beyond_table(meta_list) -> pd.DataFrame:
    """One row per run: loss, NSR, seed and the beyond-accuracy aggregates of its top-k lists
    (NaN for runs stored before they were computed)."""
    rows = [{"loss": m["loss"], "nsr": m["nsr"], "seed": m["seed"], **m.get("beyond", {})} for m in meta_list]
    table = pd.DataFrame(rows, columns=["loss", "nsr", "seed", "k", "coverage", "aggregate_diversity", "novelty",
                                        "intra_list_diversity", "serendipity", "arp", "catalogue_popularity",
                                        "popularity_ratio"])
    return table


def beyond_section(plan: MFPlan, table: pd.DataFrame, meta_list) -> list[str]:
    """``summary.md``: per loss and NSR the full-catalogue nDCG@10 beside the beyond-accuracy
    metrics of the users' top-k lists, averaged over the seeds."""
    runs = beyond_table(meta_list)
    k = runs["k"].dropna()
    k = int(k.iloc[0]) if len(k) else 10
    means = runs.groupby(["loss", "nsr"], sort=False)[list(BEYOND_COLUMNS)].mean()
    lines = ["", f"## Beyond accuracy: each user's top {k} over the full catalogue", "",
             f"Per loss and NSR, the mean over the seeds: nDCG@10 of the full-catalogue protocol beside "
             f"`gbrank.beyond_accuracy` of every user's top {k} (training items left out): catalogue coverage, distinct "
             "items recommended, novelty (mean self-information -log2 p(i), p(i) = training users of i / users, in "
             "bits), intra-list diversity (mean 1 - cosine of the items' columns of the user-item training matrix), "
             f"serendipity (fraction of the list that is relevant and not among the user's top {k} unseen items by "
             "popularity; Ge et al. 2010), ARP (mean training popularity of the recommended items, in users) and ARP "
             f"over the catalogue's mean popularity (> 1: biased to popular items). Per run: `{BEYOND_FILE}`; "
             "- : a run stored before these were computed.", "",
             "| loss | NSR | nDCG@10 | " + " | ".join(BEYOND_COLUMNS.values()) + " |",
             "|---|---:|---:|" + "---:|" * len(BEYOND_COLUMNS)]
    formats = {"aggregate_diversity": "{:.0f}", "arp": "{:.1f}", "novelty": "{:.3f}", "popularity_ratio": "{:.2f}"}
    for loss in plan.contenders():
        for n in plan.nsr:
            acc = table[(table.loss == loss) & (table.nsr == n) & (table.protocol == "full")]["ndcg@10"]
            if not len(acc):
                continue
            cells = [f"{acc.iloc[0]:.4f}"]
            for col in BEYOND_COLUMNS:
                v = means[col].get((loss, n), np.nan) if len(means) else np.nan
                cells.append("-" if not np.isfinite(v) else formats.get(col, "{:.4f}").format(v))
            lines.append(f"| {loss} | {n} | " + " | ".join(cells) + " |")
    return lines


def protocol_table(per_query: pd.DataFrame, metric_of: dict) -> pd.DataFrame:
    """Mean of each loss's own metric per (loss, NSR, protocol), averaged over users and splits."""
    rows = []
    for (loss, nsr, protocol), g in per_query.groupby(["contender", "nsr", "protocol"], sort=False):
        own = metric_of[loss] if metric_of[loss] in g.columns else "ndcg"
        rows.append({"loss": loss, "nsr": nsr, "protocol": protocol, "metric": own, "own": g[own].mean(),
                     **{m: g[m].mean() for m in METRICS}})
    return pd.DataFrame(rows)


def _kendall(a, b) -> float:
    a, b = np.asarray(a), np.asarray(b)
    n, s, c = len(a), 0, 0
    for i in range(n):
        for j in range(i + 1, n):
            s += np.sign(a[i] - a[j]) * np.sign(b[i] - b[j])
            c += 1
    return float(s / c) if c else float("nan")


FINDING_METRICS = ("ndcg@10", "ap", "rr", "nrbp@0.95")


def paired_difference(per_query: pd.DataFrame, a: str, b: str, metric: str, protocol: str,
                      nsr: int | None = None) -> dict:
    """Mean of loss ``a`` minus loss ``b`` on ``metric`` over the (split, user) pairs both have,
    with the two-sided paired t-test's p-value."""
    from scipy import stats

    rows = per_query[(per_query["protocol"] == protocol) & (per_query["contender"].isin([a, b]))]
    if nsr is not None:
        rows = rows[rows["nsr"] == nsr]
    wide = rows.pivot_table(index=["split", "qid"], columns="contender", values=metric)
    if a not in wide or b not in wide:
        return {"diff": float("nan"), "p": float("nan"), "n": 0}
    wide = wide.dropna()
    d = (wide[a] - wide[b]).to_numpy()
    p = float(stats.ttest_rel(wide[a], wide[b]).pvalue) if len(d) > 1 and d.std() > 0 else float("nan")
    return {"diff": float(d.mean()), "p": p, "n": int(len(d))}


def findings(plan: MFPlan, per_query: pd.DataFrame, table: pd.DataFrame) -> list[str]:
    """The three questions of the benchmark, answered from the per-user numbers: where the RR
    losses rank on RR; nRBP losses against nDCG and AP losses; bounded listwise losses against
    the unbounded loss of the same metric."""
    from gbrank.evaluation import adjust_p_values

    lines = ["", "## Findings, measured", ""]
    losses = set(plan.losses)
    # (a) RR losses on RR
    rr_losses = [x for x in ("listwise_rr", "lambda_rr") if x in losses]
    if rr_losses:
        lines += ["### (a) Where do the RR losses rank when evaluated by RR?", "",
                  "Rank of each RR loss among all losses (1 = best) by mean RR, and the best loss by RR.", "",
                  "| NSR | protocol | " + " | ".join(f"rank of {x}" for x in rr_losses) + " | best by RR | of |",
                  "|---:|---|" + "---:|" * len(rr_losses) + "---|---:|"]
        for n in plan.nsr:
            for prot in ("full", "sampled"):
                t = table[(table.nsr == n) & (table.protocol == prot)].set_index("loss")["rr"]
                ranks = t.rank(ascending=False, method="min")
                lines.append(f"| {n} | {prot} | " + " | ".join(f"{int(ranks[x])}" for x in rr_losses)
                             + f" | {t.idxmax()} | {len(t)} |")
    # (b) nRBP against nDCG and AP, (c) bounded against unbounded
    pairs = []
    for fam, nrbp in (("listwise", "listwise_nrbp"), ("lambda", "lambda_nrbp@0.95")):
        for other in (f"{fam}_ndcg", f"{fam}_ap"):
            if nrbp in losses and other in losses:
                pairs.append(("b", nrbp, other))
    for bounded in [x for x in plan.losses if x.startswith("listwise_") and "+" in x]:
        if bounded.split("+")[0] in losses:
            pairs.append(("c", bounded, bounded.split("+")[0]))
    for question, title in (("b", "(b) nRBP losses against the nDCG and AP losses of the same family"),
                            ("c", "(c) Bounded against unbounded listwise losses")):
        chosen = [(a, b) for q, a, b in pairs if q == question]
        if not chosen:
            continue
        lines += ["", f"### {title}", "",
                  "Mean paired difference (first loss minus second) over users and splits, all NSR pooled; "
                  "Holm-adjusted p of the paired t-test across the cells of this table in brackets; "
                  "+ means the first loss is better.", ""]
        for prot in ("full", "sampled"):
            cells, ps = [], []
            for a, b in chosen:
                for m in FINDING_METRICS:
                    r = paired_difference(per_query, a, b, m, prot)
                    cells.append((a, b, m, r))
                    ps.append(r["p"])
            adj = adjust_p_values(ps, "holm")
            lines += [f"{prot}:", "", "| first − second | " + " | ".join(FINDING_METRICS) + " |",
                      "|---|" + "---:|" * len(FINDING_METRICS)]
            for i, (a, b) in enumerate(chosen):
                row = cells[i * len(FINDING_METRICS):(i + 1) * len(FINDING_METRICS)]
                pa = adj[i * len(FINDING_METRICS):(i + 1) * len(FINDING_METRICS)]
                lines.append(f"| {a} − {b} | " + " | ".join(
                    f"{r['diff']:+.4f} (p={p:.2g})" for (_, _, _, r), p in zip(row, pa)) + " |")
            lines.append("")
        if question == "c":
            lines += ["Per NSR, sampled lists, the metric the loss optimises (the thesis' Table 5.1 setting):", "",
                      "| bounded − unbounded (metric) | " + " | ".join(f"NSR {n}" for n in plan.nsr) + " |",
                      "|---|" + "---:|" * len(plan.nsr)]
            for a, b in chosen:
                cells = []
                for n in plan.nsr:
                    r = paired_difference(per_query, a, b, plan.metric_of[b], "sampled", nsr=n)
                    cells.append(f"{r['diff']:+.4f} (p={r['p']:.2g})")
                lines.append(f"| {a} − {b} ({plan.metric_of[b]}) | " + " | ".join(cells) + " |")
    return lines


def protocols_plot(plan: MFPlan, table: pd.DataFrame, path: pathlib.Path):
    """``protocols.png``: each loss's mean under the sampled (top row) and corrected (bottom
    row) protocol against its full-catalogue mean, one point per (loss, NSR), one column per
    headline metric; Kendall's tau of the two orders of the losses in each panel.  Colour:
    the loss; marker: the NSR; the legend under the panels names both.  Returns the figure
    (None without matplotlib)."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
        from matplotlib.lines import Line2D
    except ImportError:  # pragma: no cover - matplotlib missing
        return None
    from .._plots import SMALL

    metrics = list(FINDING_METRICS)
    losses = [c for c in plan.contenders() if (table.loss == c).any()]
    from matplotlib import colormaps

    palette = colormaps["tab10" if len(losses) <= 10 else "tab20"]
    colour = {loss: palette(i % palette.N) for i, loss in enumerate(losses)}
    markers = ("o", "s", "^", "D", "v", "P", "X")
    marker = {n: markers[i % len(markers)] for i, n in enumerate(plan.nsr)}
    n_legend_rows = -(-(len(losses) + len(plan.nsr)) // 4)
    legend_h = 0.22 * n_legend_rows + 0.3  # inches: the rows of the legend and its title
    fig = Figure(figsize=(3.4 * len(metrics), 6.6 + legend_h))
    axes = fig.subplots(2, len(metrics), squeeze=False)
    for col, metric in enumerate(metrics):
        for row, prot in enumerate(("sampled", "corrected")):
            ax = axes[row][col]
            taus = []
            for n in plan.nsr:
                t = table[table.nsr == n].pivot(index="loss", columns="protocol", values=metric)
                for loss in t.index:
                    ax.scatter(t.loc[loss, "full"], t.loc[loss, prot], s=26, color=colour.get(loss, "grey"),
                               marker=marker[n], edgecolors="black", linewidths=0.3)
                taus.append(_kendall(t[prot], t["full"]))
            ax.set_title(f"{metric}: {prot} vs full (Kendall tau {np.nanmean(taus):.2f})", fontsize=8)
            ax.set_xlabel("full-catalogue mean", fontsize=8)
            ax.set_ylabel(f"{prot} mean", fontsize=8)
            ax.tick_params(labelsize=SMALL)
    handles = [Line2D([], [], ls="", marker="o", ms=6, color=colour[x], markeredgecolor="black",
                      markeredgewidth=0.3, label=x) for x in losses]
    handles += [Line2D([], [], ls="", marker=marker[n], ms=6, color="0.5", label=f"NSR {n}") for n in plan.nsr]
    fig.legend(handles=handles, loc="lower center", ncol=4, fontsize=SMALL + 1, frameon=False,
               title="colour: loss or baseline; marker: NSR", title_fontsize=SMALL + 1)
    fig.suptitle(f"gbrank bench mf: {plan.data_name}, each loss's mean over users under the sampled and corrected "
                 "protocols against the full catalogue", fontsize=9)
    fig.tight_layout(rect=(0, (legend_h + 0.1) / fig.get_figheight(), 1, 1))
    FigureCanvasAgg(fig)
    fig.savefig(path, dpi=100)
    return fig


def overview(plan: MFPlan, per_query: pd.DataFrame, meta_list, summaries) -> str:
    """``summary.md``: per NSR, every loss under the three protocols, and how far the sampled
    and corrected rankings of the losses agree with the full-catalogue ranking."""
    table = protocol_table(per_query, plan.metric_of)
    data = data_lines(plan, per_query)  # before the plan is cut to the NSRs with finished splits
    plan = replace(plan, nsr=[n for n in plan.nsr if (table["nsr"] == n).any()])  # NSRs with finished splits
    negatives = ("drawn once per user (--fixed-train-negatives)" if plan.fixed_train_negatives
                 else "redrawn every epoch")
    lines = [f"# gbrank bench mf: {plan.data_name}", "",
             "Each cell of the tables below: the mean over the users, pooled across the splits. Reports per "
             "protocol: `full/`, `sampled/`, `corrected/` (paired tests against the baseline "
             f"**{plan.baseline}**, Holm-corrected).", ""]
    if plan.unfinished:
        lines += [f"**Not finished and left out:** {', '.join(plan.unfinished)}.", ""]
    lines += ["## Data and settings", "", *data,
              f"- NSR (sampled negatives per positive): {_list(plan.nsr)}",
              f"- splits: {', '.join(plan.split_label(x) for x in plan.seeds)} "
              f"({'the ready folds' if plan.ready else 'seeded random splits'})",
              f"- losses: {_list(plan.losses)}",
              f"- baselines: {_list(plan.baselines) or 'none'}",
              f"- optimiser and learning rates: {lr_text(plan)}",
              f"- epoch: {epoch_choice(plan)[0].lower()}{epoch_choice(plan)[1:]}",
              f"- training: MF with {plan.n_factors} factors, batches of {plan.batch_size} users, at most "
              f"{plan.epochs} epochs, early stopping after {plan.patience} evaluated epochs without a validation "
              f"improvement; training negatives {negatives}", "",
             "## Each loss evaluated with the metric it optimises", "",
             "full = all never-interacted items ranked; sampled = the NSR test lists; corrected = full-catalogue "
             "estimate from the sampled ranks.", ""]
    head = "| loss (metric) | " + " | ".join(f"NSR {n} full | NSR {n} sampled | NSR {n} corrected"
                                             for n in plan.nsr) + " |"
    lines += [head, "|---|" + "---:|" * (3 * len(plan.nsr))]
    for loss in plan.contenders():
        cells = []
        for n in plan.nsr:
            for p in PROTOCOLS:
                v = table[(table.loss == loss) & (table.nsr == n) & (table.protocol == p)]["own"]
                cells.append(f"{v.iloc[0]:.4f}" if len(v) else "-")
        used = table[table.loss == loss]["metric"]
        label = plan.metric_of[loss]
        if len(used) and used.iloc[0] != label:  # the runs hold no column of the loss's own metric
            label = f"{used.iloc[0]}; {label} is not among the reported metrics"
        lines.append(f"| {loss} ({label}) | " + " | ".join(cells) + " |")
    for metric in ("ndcg@10", "ap", "rr", "nrbp@0.95"):
        lines += ["", f"## {metric} of every loss", "", "| loss | " + " | ".join(
            f"NSR {n} full | NSR {n} sampled | NSR {n} corrected" for n in plan.nsr) + " |",
            "|---|" + "---:|" * (3 * len(plan.nsr))]
        for loss in plan.contenders():
            cells = []
            for n in plan.nsr:
                for p in PROTOCOLS:
                    v = table[(table.loss == loss) & (table.nsr == n) & (table.protocol == p)][metric]
                    cells.append(f"{v.iloc[0]:.4f}" if len(v) else "-")
            lines.append(f"| {loss} | " + " | ".join(cells) + " |")
    lines += beyond_section(plan, table, meta_list)
    lines += ["", "## Do the protocols agree on the order of the losses?", "",
              "Kendall's tau between the losses' means under the sampled (or corrected) protocol and under "
              "the full catalogue, per NSR and metric (1 = same order).", "",
              "| NSR | metric | sampled vs full | corrected vs full |", "|---:|---|---:|---:|"]
    for n in plan.nsr:
        for metric in METRICS:
            t = table[table.nsr == n].pivot(index="loss", columns="protocol", values=metric)
            lines.append(f"| {n} | {metric} | {_kendall(t['sampled'], t['full']):.2f} | "
                         f"{_kendall(t['corrected'], t['full']):.2f} |")
    if plan.data_name == "movielens" and any(n in THESIS_TABLE_5_1 for n in plan.nsr):
        lines += ["", "## Beside thesis Table 5.1 (MovieLens, sampled lists, own metric)", "",
                  "| loss | NSR | gbrank sampled | thesis |", "|---|---:|---:|---:|"]
        for n in plan.nsr:
            for loss, ref in THESIS_TABLE_5_1.get(n, {}).items():
                v = table[(table.loss == loss) & (table.nsr == n) & (table.protocol == "sampled")]["own"]
                if len(v):
                    lines.append(f"| {loss} | {n} | {v.iloc[0]:.4f} | {ref:.4f} |")
    lines += findings(plan, per_query, table)
    runs = pd.DataFrame([{**{k: m[k] for k in ("loss", "nsr", "seed", "best_epoch", "epochs_run", "train_seconds",
                                                "eval_seconds")}, "compile_seconds": m.get("compile_seconds")}
                         for m in meta_list])
    runs["compile_seconds"] = pd.to_numeric(runs["compile_seconds"], errors="coerce")
    agg = runs.groupby("loss", sort=False).agg(best_epoch=("best_epoch", "mean"), epochs_run=("epochs_run", "mean"),
                                               at_budget=("epochs_run", lambda e: int((e >= plan.epochs).sum())),
                                               train_s=("train_seconds", "mean"), eval_s=("eval_seconds", "mean"),
                                               compile_s=("compile_seconds", "sum"),
                                               timed=("compile_seconds", "count"))
    n_runs = len(plan.nsr) * len(plan.seeds)
    lines += ["", "## Training", "", f"Per loss over its {plural(n_runs, 'run')}: mean best epoch, "
              f"mean epochs run, runs that used all {plan.epochs} epochs, mean seconds to train and to evaluate, "
              "and apart from them the compile/warm-up seconds its processes paid once before timing its first run "
              "(numba loading or compiling gbrank's evaluator, torch's first use; summed over the runs; - : not "
              "recorded).", "",
              "| loss | best epoch | epochs run | at budget | train s | eval s | compile/warm-up s |",
              "|---|---:|---:|---:|---:|---:|---:|"]
    for loss, r in agg.iterrows():
        warm = f"{r.compile_s:.1f}" if r.timed else "-"
        lines.append(f"| {loss} | {r.best_epoch:.1f} | {r.epochs_run:.1f} | {int(r.at_budget)} | {r.train_s:.1f} | "
                     f"{r.eval_s:.1f} | {warm} |")
    return "\n".join(lines) + "\n"
