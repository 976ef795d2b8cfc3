"""``gbrank bench mf``, the reports: one per protocol through ``_report.write_report``, and
``OUT/summary.md`` with the protocols side by side and the findings."""

from __future__ import annotations

import json
import pathlib
from dataclasses import asdict, replace

import numpy as np
import pandas as pd

from ._mf_plan import METRICS, PROTOCOLS, THESIS_TABLE_5_1, MFPlan


def _config(plan: MFPlan, meta_list, elapsed) -> dict:
    from ._report import environment

    env = environment(("numpy", "scipy", "pandas", "numba", "torch", "sklearn"))
    return {"benchmark": "gbrank bench mf", "plan": asdict(plan), "environment": env,
            "seeds": {"splits": plan.seeds, "model": "random_state = split seed"},
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


def write_reports(plan: MFPlan, per_query: pd.DataFrame, meta_list, elapsed) -> dict:
    """One report per protocol (``OUT/<protocol>``) and ``OUT/summary.md`` beside them."""
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
        notes = [f"Data: {plan.data_name} ({plan.data_summary}). Splits pooled: NSR {plan.nsr} x seeds "
                 f"{plan.seeds}; each user appears once per split. {epoch_choice(plan)}. "
                 f"MF with {plan.n_factors} factors, {plan.optimizer} lr {plan.learning_rate:g}, batches of "
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
    (out / "summary.md").write_text(text)
    return summaries


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
    for loss in plan.losses:
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
             f"{plan.data_summary}. NSR {plan.nsr}, splits with seeds {plan.seeds} (each cell: the mean over users "
             f"pooled across the splits; every split holds the same users), {len(plan.losses)} losses; "
             f"{epoch_choice(plan)}; at most {plan.epochs} epochs, early stopping after {plan.patience}. "
             "Reports per protocol: `full/`, `sampled/`, `corrected/` (paired tests against the baseline "
             f"**{plan.baseline}**, Holm-corrected)." + (f" **Not finished and left out:** "
                                                         f"{', '.join(plan.unfinished)}." if plan.unfinished else ""), "",
             "## Each loss evaluated with the metric it optimises", "",
             "full = all never-interacted items ranked; sampled = the NSR test lists; corrected = full-catalogue "
             "estimate from the sampled ranks.", ""]
    head = "| loss (metric) | " + " | ".join(f"NSR {n} full | NSR {n} sampled | NSR {n} corrected"
                                             for n in plan.nsr) + " |"
    lines += [head, "|---|" + "---:|" * (3 * len(plan.nsr))]
    for loss in plan.losses:
        cells = []
        for n in plan.nsr:
            for p in PROTOCOLS:
                v = table[(table.loss == loss) & (table.nsr == n) & (table.protocol == p)]["own"]
                cells.append(f"{v.iloc[0]:.4f}" if len(v) else "-")
        lines.append(f"| {loss} ({plan.metric_of[loss]}) | " + " | ".join(cells) + " |")
    for metric in ("ndcg@10", "ap", "rr", "nrbp@0.95"):
        lines += ["", f"## {metric} of every loss", "", "| loss | " + " | ".join(
            f"NSR {n} full | NSR {n} sampled | NSR {n} corrected" for n in plan.nsr) + " |",
            "|---|" + "---:|" * (3 * len(plan.nsr))]
        for loss in plan.losses:
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
