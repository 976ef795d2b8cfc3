"""``gbrank bench mf``, the reports: one per protocol through ``_report.write_report``, and
``OUT/summary.md`` with the protocols side by side and the findings."""

from __future__ import annotations

import json
import pathlib
from dataclasses import asdict, replace

import numpy as np
import pandas as pd

from ._mf_baselines import DESCRIPTIONS as BASELINE_TEXT
from ._mf_plan import METRICS, PROTOCOLS, THESIS_TABLE_5_1, MFPlan


def _config(plan: MFPlan, meta_list, elapsed) -> dict:
    from ._report import environment

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
    selections (``OUT/selection.csv``), the baseline flags (``OUT/baseline_flags.csv``) and,
    on the paper's own splits, ``OUT/paper_comparison.md/.json``.  ``meta_list``: the runs of
    the protocol rows (one learning rate per loss); ``all_meta``: every run of the grid."""
    from ._report import write_report

    out = pathlib.Path(plan.out)
    config = _config(plan, meta_list, elapsed)
    summaries = {}
    for protocol in PROTOCOLS:
        rows = per_query[per_query["protocol"] == protocol].drop(columns=["protocol", "nsr", "seed"])
        conventions = {"protocol": f"{protocol}: {CONVENTIONS[protocol]}", "relevant": f"rating >= "
                       f"{plan.relevance_threshold:g}", "gain": "binary (2^1 - 1 = 1)", "ap divisor": "R",
                       "ties": "average" if protocol == "sampled" else "strict (a negative ties nowhere)",
                       "empty lists": "none (every user has held-out positives)"}
        notes = [f"Data: {plan.data_name} ({plan.data_summary}). Splits pooled: NSR {plan.nsr} x "
                 f"{', '.join(plan.split_label(x) for x in plan.seeds)}; each user appears once per split. "
                 f"{epoch_choice(plan)}. Baselines: " + ("; ".join(f"{b}: {BASELINE_TEXT[b]}" for b in plan.baselines)
                                                        or "none") + ". "
                 f"MF with {plan.n_factors} factors, {lr_text(plan)}, batches of "
                 f"{plan.batch_size} users, at most {plan.epochs} epochs, early stopping after {plan.patience}."]
        if plan.unfinished:
            notes.append(f"Not finished and left out (--report-only): {', '.join(plan.unfinished)}.")
        summaries[protocol] = write_report(
            rows, out / protocol, baseline=plan.baseline, metrics=METRICS,
            title=f"gbrank bench mf: {plan.data_name}, {protocol} evaluation", config=config,
            conventions=conventions, notes=notes, plots=plan.plots)
    (out / "config.json").write_text(json.dumps(config, indent=1, default=str) + "\n")
    beyond_table(meta_list).to_csv(out / BEYOND_FILE, index=False, float_format="%.8g")
    text = overview(plan, per_query, meta_list, summaries)
    table = protocol_table(per_query, plan.metric_of)
    plan_done = replace(plan, nsr=[n for n in plan.nsr if (table["nsr"] == n).any()])
    if plan.plots and protocols_plot(plan_done, table, out / "protocols.png"):
        text += ("\n![sampled and corrected means against full-catalogue means](protocols.png)\n")
    flags = baseline_flags(plan_done, per_query)
    flags.to_csv(out / "baseline_flags.csv", index=False, float_format="%.8g")
    text += "\n".join(baseline_section(plan_done, flags)) + "\n"
    text += "\n".join(feasibility_section(plan)) + "\n"
    from ._mf_select import history_frame, select, selection_means

    chosen = select(history_frame(all_meta if all_meta is not None else meta_list))
    chosen.to_csv(out / "selection.csv", index=False, float_format="%.8g")
    means = selection_means(chosen)
    text += "\n".join(selection_section(plan_done, means)) + "\n"
    if plan.paper_tables:
        from ._mf_paper import comparison, paper_means, write_comparison

        cells = comparison(paper_means(plan.paper_tables), means)
        notes = [f"Folds run: {', '.join(plan.split_label(x) for x in plan.seeds)}; NSR {plan_done.nsr}; "
                 f"{lr_text(plan)}; at most {plan.epochs} epochs, early stopping after {plan.patience} evaluated "
                 f"epochs without a validation improvement; {epoch_choice(plan)}.",
                 "Objectives map to gbrank's losses: ap, dcg, rr -> <paradigm>_ap, _ndcg, _rr; LambdaRank-MF rbp_80, "
                 "rbp_90, rbp_95 -> lambda_nrbp@0.8, @0.9, @0.95; listwise rbp_80, rbp_90, rbp_95 -> the one "
                 "listwise_nrbp run (its loss does not depend on p; the paper's three rows are the same model, "
                 "its epoch chosen per evaluation metric). RBP_p = gbrank's rbp@p (un-normalised) on the sampled "
                 "test lists."]
        write_comparison(out, cells, notes)
        n_flag = int((cells["status"] == "flag").sum())
        text += (f"\n## Beside the paper's tables\n\n`paper_comparison.md` / `.json`: {len(cells)} cells, "
                 f"{int((cells['status'] != 'not run').sum())} run, {n_flag} flagged (|gbrank (a) - paper| > 0.02).\n")
    (out / "summary.md").write_text(text)
    return summaries


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
        return lines + [f"Every user of every (NSR, split) had enough items left for its training, validation and "
                        f"test negatives ({len(plan.feasibility)} (NSR, split) pairs checked)."]
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
    from ._mf_select import PAPER_METRICS, SELECTIONS

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


def protocols_plot(plan: MFPlan, table: pd.DataFrame, path: pathlib.Path) -> bool:
    """``protocols.png``: each loss's mean under the sampled (top row) and corrected (bottom
    row) protocol against its full-catalogue mean, one point per (loss, NSR), one column per
    headline metric; Kendall's tau of the two orders of the losses in each panel."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:  # pragma: no cover - matplotlib missing
        return False
    metrics = list(FINDING_METRICS)
    fig = Figure(figsize=(3.2 * len(metrics), 6.4))
    axes = fig.subplots(2, len(metrics), squeeze=False)
    colours = dict(zip(plan.nsr, ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple")))
    for col, metric in enumerate(metrics):
        for row, prot in enumerate(("sampled", "corrected")):
            ax = axes[row][col]
            taus = []
            for n in plan.nsr:
                t = table[table.nsr == n].pivot(index="loss", columns="protocol", values=metric)
                ax.scatter(t["full"], t[prot], s=18, color=colours.get(n, "grey"), label=f"NSR {n}")
                taus.append(_kendall(t[prot], t["full"]))
            ax.set_title(f"{metric}: {prot} vs full (tau {np.nanmean(taus):.2f})", fontsize=8)
            ax.set_xlabel("full-catalogue mean", fontsize=8)
            ax.set_ylabel(f"{prot} mean", fontsize=8)
            ax.tick_params(labelsize=7)
            if row == 0 and col == 0:
                ax.legend(fontsize=7)
    fig.suptitle(f"gbrank bench mf: {plan.data_name}, one point per loss and NSR", fontsize=9)
    fig.tight_layout()
    FigureCanvasAgg(fig)
    fig.savefig(path, dpi=100)
    return True


def overview(plan: MFPlan, per_query: pd.DataFrame, meta_list, summaries) -> str:
    """``summary.md``: per NSR, every loss under the three protocols, and how far the sampled
    and corrected rankings of the losses agree with the full-catalogue ranking."""
    table = protocol_table(per_query, plan.metric_of)
    plan = replace(plan, nsr=[n for n in plan.nsr if (table["nsr"] == n).any()])  # NSRs with finished splits
    lines = [f"# gbrank bench mf: {plan.data_name}", "",
             f"{plan.data_summary}. NSR {plan.nsr}, splits {', '.join(plan.split_label(x) for x in plan.seeds)} "
             f"({'the ready folds' if plan.ready else 'seeded random splits'}; each cell: the mean over users "
             f"pooled across the splits), {len(plan.losses)} losses and the baselines "
             f"{', '.join(plan.baselines) or '(none)'}; {lr_text(plan)}; "
             f"{epoch_choice(plan)}; at most {plan.epochs} epochs, early stopping after {plan.patience} evaluated "
             f"epochs without a validation improvement"
             f"{'; training negatives drawn once (--fixed-train-negatives)' if plan.fixed_train_negatives else ''}. "
             "Reports per protocol: `full/`, `sampled/`, `corrected/` (paired tests against the baseline "
             f"**{plan.baseline}**, Holm-corrected)." + (f" **Not finished and left out:** "
                                                         f"{', '.join(plan.unfinished)}." if plan.unfinished else ""), "",
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
    runs = pd.DataFrame([{k: m[k] for k in ("loss", "nsr", "seed", "best_epoch", "epochs_run", "train_seconds",
                                             "eval_seconds")} for m in meta_list])
    agg = runs.groupby("loss", sort=False).agg(best_epoch=("best_epoch", "mean"), epochs_run=("epochs_run", "mean"),
                                               at_budget=("epochs_run", lambda e: int((e >= plan.epochs).sum())),
                                               train_s=("train_seconds", "mean"), eval_s=("eval_seconds", "mean"))
    lines += ["", "## Training", "", f"Per loss over its {len(plan.nsr) * len(plan.seeds)} runs: mean best epoch, "
              f"mean epochs run, runs that used all {plan.epochs} epochs, mean seconds to train and to evaluate.", "",
              "| loss | best epoch | epochs run | at budget | train s | eval s |", "|---|---:|---:|---:|---:|---:|"]
    for loss, r in agg.iterrows():
        lines.append(f"| {loss} | {r.best_epoch:.1f} | {r.epochs_run:.1f} | {r.at_budget} | {r.train_s:.1f} | "
                     f"{r.eval_s:.1f} |")
    return "\n".join(lines) + "\n"
