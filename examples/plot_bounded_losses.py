"""Pictures of per-list metric bounding (gbrank.bounds): expectations, distributions, maps.

    python examples/plot_bounded_losses.py            # writes docs/figures/bounds_*.png
    python examples/plot_bounded_losses.py --quick    # fewer list sizes in the first figure
    python examples/plot_bounded_losses.py --out /tmp/figs

The job: see what each bounding map does to a metric before choosing a bounded objective
(``GBRanker("nrbp@0.95+minmax")``, ``MFRanker(bounding=...)``).  The figures go to
docs/figures/, where docs/bounds.md shows them.

Three figures, after the analysis of Westerborg (2022, Figs 3.2-3.7):

* ``bounds_expectation.png``: E[M] of a uniformly random order against the number of
  relevant items R, for lists with n = R (1 + NSR) items, NSR = 1, 2, 3;
* ``bounds_distributions.png``: for three list shapes (n = 10, R = 2; n = 50, R = 5;
  n = 100, R = 20), the distribution of each metric under random orders (top: its
  probability mass, binned) and its CDF F with the smoothed F~ of Eq 3.13 (bottom);
* ``bounds_maps.png``: the bounded value against the raw value for the same shapes, one
  row per map (min-max, expectation, expectation-max, distribution), one column per
  metric.  A raw value runs from the list's minimum to its maximum.

The nRBP loss runs from 0 to R (n - R), very different ranges for the three shapes; its
x axes show loss / R (n - R) so that the three curves can be told apart.
"""

from __future__ import annotations

import pathlib

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from gbrank import bounds  # noqa: E402

from _gallery import run  # noqa: E402

METRICS = {"ndcg": {}, "ap": {}, "rr": {}, "nrbp": {"p": 0.95}, "nrbp_loss": {}}
TITLES = {"ndcg": "nDCG", "ap": "AP", "rr": "RR", "nrbp": "nRBP (p = 0.95)", "nrbp_loss": "nRBP loss (Eq 19)"}
SHAPES = [(10, 2), (50, 5), (100, 20)]
COLOURS = ["tab:blue", "tab:orange", "tab:green"]
FIGURE_DIR = pathlib.Path(__file__).resolve().parents[1] / "docs" / "figures"
FIGURES = ["bounds_expectation.png", "bounds_distributions.png", "bounds_maps.png"]
MAP_TITLES = {"minmax": "min-max  (M - min) / (max - min)", "expectation": "expectation  M / E[M]",
              "expectation_max": "expectation-max  (M - E) / (max - E)", "distribution": "distribution  F~(M)"}


def lists_of(shapes):
    """Binary labels (R ones, n - R zeros) of each shape, concatenated, and group_ptr."""
    labels = np.concatenate([np.r_[np.ones(r), np.zeros(n - r)] for n, r in shapes])
    return labels, np.concatenate([[0], np.cumsum([n for n, _ in shapes])])


def plot_expectation(out: pathlib.Path, max_relevant: int = 40) -> None:
    rs = np.arange(1, max_relevant + 1)
    fig, axes = plt.subplots(1, 4, figsize=(15, 3.6), constrained_layout=True)
    for ax, metric in zip(axes, ["ndcg", "ap", "nrbp", "nrbp_loss"]):
        for nsr, colour in zip((1, 2, 3), COLOURS):
            labels, ptr = lists_of([(r * (1 + nsr), r) for r in rs])
            lb = bounds.prepare(metric, labels, ptr, **METRICS[metric])
            ax.plot(rs, lb.expectation, "o-", ms=2.5, color=colour, label=f"NSR {nsr}")
        ax.set_title(f"E[{TITLES[metric]}]")
        ax.set_xlabel("relevant items R  (n = R (1 + NSR))")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("expectation over random orders")
    axes[0].legend()
    fig.savefig(out / "bounds_expectation.png", dpi=110)
    plt.close(fig)


def plot_distributions(out: pathlib.Path) -> None:
    fig, axes = plt.subplots(2, 5, figsize=(19, 7), constrained_layout=True)
    for col, (metric, kw) in enumerate(METRICS.items()):
        for (n, r), colour in zip(SHAPES, COLOURS):
            labels = np.r_[np.ones(r), np.zeros(n - r)]
            d = bounds.distribution(metric, labels, **kw)
            b = bounds.list_bounds(metric, labels, **kw)
            how = "exact" if d.exact else f"MC {d.n_draws:,}"
            unit = b.maximum if metric == "nrbp_loss" else 1.0  # the loss is drawn over [0, 1]
            edges = np.linspace(b.minimum, b.maximum, 41)
            axes[0, col].hist(d.values / unit, bins=edges / unit, weights=d.probabilities, histtype="step",
                              color=colour, lw=1.4, label=f"n={n}, R={r} ({how})")
            xs = np.linspace(b.minimum, b.maximum, 600)
            axes[1, col].plot(xs / unit, d.cdf(xs), color=colour, lw=0.9, alpha=0.55)
            axes[1, col].plot(xs / unit, d.smoothed_cdf(xs), color=colour, lw=1.8, ls="--",
                              label=f"n={n}, R={r}: a = {d.gain:,.4g}")
            axes[1, col].axvline(b.expectation / unit, color=colour, lw=0.8, ls=":")
        axes[0, col].set_title(TITLES[metric])
        axes[0, col].legend(fontsize=8)
        axes[1, col].legend(fontsize=8, loc="lower right" if metric != "nrbp_loss" else "upper left")
        axes[1, col].set_xlabel("metric value" if metric != "nrbp_loss" else "loss / R(n - R)  (lower is better)")
        for ax in axes[:, col]:
            ax.grid(alpha=0.3)
    axes[0, 0].set_ylabel("probability (40 bins over [min, max])")
    axes[1, 0].set_ylabel("F (thin), smoothed F~ (dashed), E[M] (dotted)")
    fig.suptitle("Distribution of each metric over uniformly random orders")
    fig.savefig(out / "bounds_distributions.png", dpi=110)
    plt.close(fig)


def plot_maps(out: pathlib.Path) -> None:
    labels, ptr = lists_of(SHAPES)
    metrics = ["ndcg", "ap", "nrbp", "nrbp_loss"]
    fig, axes = plt.subplots(4, 4, figsize=(16, 13), constrained_layout=True)
    for col, metric in enumerate(metrics):
        lb = bounds.prepare(metric, labels, ptr, **METRICS[metric], distribution=True)
        t = np.linspace(0.0, 1.0, 301)
        raw = lb.minimum[None, :] + t[:, None] * (lb.maximum - lb.minimum)[None, :]  # [points, lists]
        for row, method in enumerate(bounds.BOUNDINGS):
            ax = axes[row, col]
            mapped = np.array([bounds.bounded(method, x, lb) for x in raw])
            for i, ((n, r), colour) in enumerate(zip(SHAPES, COLOURS)):
                unit = lb.maximum[i] if metric == "nrbp_loss" else 1.0  # the loss is drawn over [0, 1]
                ax.plot(raw[:, i] / unit, mapped[:, i], color=colour, lw=1.6, label=f"n={n}, R={r}")
                ax.plot([lb.expectation[i] / unit], [bounds.bounded(method, lb.expectation, lb)[i]], "o",
                        color=colour, ms=4)
            ax.grid(alpha=0.3)
            if metric == "nrbp_loss" and method != "distribution":
                ax.text(0.97, 0.05, "on this x axis (loss / R(n - R))\nthe three shapes coincide",
                        transform=ax.transAxes, ha="right", va="bottom", fontsize=8)
            if row == 0:
                ax.set_title(TITLES[metric] + ("  (loss: lower is better)" if metric == "nrbp_loss" else ""))
            if col == 0:
                ax.set_ylabel(MAP_TITLES[method], fontsize=9)
            if row == 3:
                ax.set_xlabel("raw value, from the list's minimum to its maximum" if metric != "nrbp_loss"
                              else "raw loss / R(n - R), from 0 (ideal) to 1 (worst)")
    axes[0, 0].legend(fontsize=8)
    fig.suptitle("Bounded versus raw value; dots mark E[M] (the value of a random order)")
    fig.savefig(out / "bounds_maps.png", dpi=100)
    plt.close(fig)


def main(quick: bool = False, out: pathlib.Path = FIGURE_DIR) -> None:
    out.mkdir(parents=True, exist_ok=True)
    plot_expectation(out, max_relevant=10 if quick else 40)
    plot_distributions(out)
    plot_maps(out)
    print(f"wrote {', '.join(FIGURES)} to {out}")


if __name__ == "__main__":
    run(main, __doc__, out=FIGURE_DIR, quick_help="fewer list sizes in the first figure")
