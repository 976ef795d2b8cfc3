"""``gbrank.compare``: paired comparison of evaluated systems over their common lists.

Two systems (``compare(a, b)``) or many (a mapping name -> result, or a sequence with
``names=``) give a :class:`Comparison`: means with intervals, every pairwise (or
against-baseline) paired test with effect sizes, a multiple-testing correction, optionally
Tukey's HSD, as tidy tables, Markdown and LaTeX; ``Comparison.pair()`` is the table of one pair.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from .._validation import check_choice, is_positive_int
from ._evaluate import EvaluationResult, _t_half_width

TESTS = ("t", "wilcoxon", "randomization")
#: correction name -> the ``method`` of ``statsmodels.stats.multitest.multipletests``
CORRECTIONS = {"holm": "holm", "bonferroni": "bonferroni", "fdr_bh": "fdr_bh"}
_LEGACY = ["mean_a", "mean_b", "diff", "ci_low", "ci_high", "p_value", "n"]


@dataclass(frozen=True)
class Comparison:
    """What :func:`compare` returns, for two systems (named ``"a"`` and ``"b"``) or many.

    Attributes
    ----------
    means : pandas.DataFrame
        One row per (system, metric): ``mean``, ``std``, ``ci_low``, ``ci_high`` (Student-t
        interval at ``confidence``) and ``n``, over the queries common to all systems.
    pairs : pandas.DataFrame
        One row per (metric, pair, test): ``a``, ``b``, ``mean_a``, ``mean_b``, ``diff``
        (mean of a - b) with its paired Student-t interval ``ci_low``/``ci_high``, ``d_z``
        (Cohen's d for paired samples: mean / sd of the differences), ``better``/``worse``
        (fraction of queries where a scores higher/lower than b), the test's ``statistic``
        and two-sided ``p_value``, ``p_adjusted`` (by ``correction``; the raw p without one),
        ``significant`` (``p_adjusted < alpha``) and ``n``.
    tukey : pandas.DataFrame or None
        With ``tukey=True``, one row per (metric, pair): ``diff``, ``ci_low``, ``ci_high``
        and ``p_value`` of Tukey's HSD.
    systems, metrics : tuple of str
    settings : dict
        ``tests``, ``correction``, ``baseline``, ``confidence``, ``alpha``, ``n_resamples``,
        ``random_state``, and the evaluation conventions the systems share.
    n_common : int
        Number of queries all systems share (the pairs of every test).
    n_queries : dict
        Each system's own number of queries.
    """

    means: pd.DataFrame
    pairs: pd.DataFrame
    tukey: pd.DataFrame | None
    systems: tuple[str, ...]
    metrics: tuple[str, ...]
    settings: dict = field(default_factory=dict)
    n_common: int = 0
    n_queries: dict = field(default_factory=dict)

    def to_frame(self) -> pd.DataFrame:
        """The tidy table of pairwise tests (a copy of ``pairs``)."""
        return self.pairs.copy()

    def pair(self, a: str | None = None, b: str | None = None, test: str | None = None) -> pd.DataFrame:
        """The table of one pair of systems: indexed by metric, columns ``mean_a``, ``mean_b``,
        ``diff`` (a - b), ``ci_low``, ``ci_high``, ``p_value`` (raw) and ``n``;
        ``attrs["test"]`` names the test (default: the first test run).  ``a`` and ``b``
        default to the first and second systems, so ``compare(result_a, result_b).pair()`` is
        the table of the two."""
        test = self._test(test)
        a = self.systems[0] if a is None else a
        b = self.systems[1] if b is None else b
        rows = self.pairs[self.pairs["test"] == test]
        direct = rows[(rows["a"] == a) & (rows["b"] == b)]
        if len(direct):
            out = direct.set_index("metric")[_LEGACY]
        else:
            flipped = rows[(rows["a"] == b) & (rows["b"] == a)]
            if not len(flipped):
                raise ValueError(f"no comparison of {a!r} with {b!r}; the pairs compared are "
                                 f"{sorted(set(zip(rows['a'], rows['b'])))}")
            f = flipped.set_index("metric")
            out = pd.DataFrame({"mean_a": f["mean_b"], "mean_b": f["mean_a"], "diff": -f["diff"],
                                "ci_low": -f["ci_high"], "ci_high": -f["ci_low"], "p_value": f["p_value"],
                                "n": f["n"]})
        out = out.copy()
        out.attrs["test"] = test
        return out

    def _test(self, test):
        tests = self.settings["tests"]
        if test is None:
            return tests[0]
        if test not in tests:
            raise ValueError(f"test {test!r} was not run; this comparison ran {list(tests)}")
        return test

    # ---- text -----------------------------------------------------------------------------
    def _cells(self, test, digits, tex):
        """(test, means rows, pair rows, tukey rows) as lists of cell strings, for Markdown
        (``tex=False``) or LaTeX; the first cell of each row is the raw name."""
        test = self._test(test)
        pm, dz, star = (r"$\pm$", "$d_z$", "$^{*}$") if tex else ("±", "d_z", "*")
        p = _p_tex if tex else _p
        means = self.means.set_index(["system", "metric"])
        mean_rows = []
        for s in self.systems:
            cells = []
            for m in self.metrics:
                r = means.loc[(s, m)]
                cells.append(f"{r['mean']:.{digits}f} {pm} {(r['ci_high'] - r['ci_low']) / 2:.{digits}f}")
            mean_rows.append([s, *cells])
        rows = self.pairs[self.pairs["test"] == test].set_index(["a", "b", "metric"])
        pair_rows = []
        for a, b in dict.fromkeys(zip(rows.index.get_level_values(0), rows.index.get_level_values(1))):
            cells = []
            for m in self.metrics:
                r = rows.loc[(a, b, m)]
                cells.append(f"{r['diff']:+.{digits}f} ({dz} {r['d_z']:.2f}, {p(r['p_adjusted'])})"
                             + (star if r["significant"] else ""))
            pair_rows.append([(a, b), *cells])
        tukey_rows = []
        if self.tukey is not None:
            t = self.tukey.set_index(["a", "b", "metric"])
            for a, b in dict.fromkeys(zip(t.index.get_level_values(0), t.index.get_level_values(1))):
                tukey_rows.append([(a, b), *(f"{t.loc[(a, b, m), 'diff']:+.{digits}f} ({p(t.loc[(a, b, m), 'p_value'])})"
                                             for m in self.metrics)])
        return test, mean_rows, pair_rows, tukey_rows

    def _caption(self, test):
        s = self.settings
        level = round(100 * s["confidence"])
        corr = f"{_CORRECTION_NAMES[s['correction']]}-adjusted" if s["correction"] else "unadjusted"
        return (f"Means: mean +/- half-width of the {level}% Student-t interval over the {self.n_common} common "
                f"queries. Pairs (a - b): mean difference, Cohen's d_z and {corr} p of the paired "
                f"{_TEST_NAMES[test]}; * p < {s['alpha']:g}.")

    def to_markdown(self, test: str | None = None, digits: int = 4) -> str:
        """Markdown tables: the means (± half-width of the interval), the pairwise differences
        with d_z and the adjusted p of ``test`` (default: the first test run; ``*`` marks
        ``significant``), and Tukey's HSD when computed.  No tabulate dependency."""
        test, mean_rows, pair_rows, tukey_rows = self._cells(test, digits, tex=False)
        head = list(self.metrics)
        name = lambda ab: f"{ab[0]} - {ab[1]}"  # noqa: E731
        lines = [self._caption(test), "", *_md_table(["system", *head], mean_rows), "",
                 *_md_table(["a - b", *head], [[name(r[0]), *r[1:]] for r in pair_rows])]
        if tukey_rows:
            lines += ["", "Tukey HSD (assumes independent samples; for comparison with papers that report it): "
                      "difference of means and p.", "",
                      *_md_table(["a - b", *head], [[name(r[0]), *r[1:]] for r in tukey_rows])]
        return "\n".join(lines) + "\n"

    def to_latex(self, test: str | None = None, digits: int = 4) -> str:
        """The tables of :meth:`to_markdown` as LaTeX ``tabular`` environments (special
        characters of names escaped), each preceded by a comment line."""
        test, mean_rows, pair_rows, tukey_rows = self._cells(test, digits, tex=True)
        head = [_tex(m) for m in self.metrics]
        name = lambda ab: f"{_tex(ab[0])} $-$ {_tex(ab[1])}"  # noqa: E731
        parts = ["% " + self._caption(test), _tex_table(["system", *head], [[_tex(r[0]), *r[1:]] for r in mean_rows]),
                 _tex_table(["a $-$ b", *head], [[name(r[0]), *r[1:]] for r in pair_rows])]
        if tukey_rows:
            parts += ["% Tukey HSD (assumes independent samples): difference of means and p",
                      _tex_table(["a $-$ b", *head], [[name(r[0]), *r[1:]] for r in tukey_rows])]
        return "\n".join(parts) + "\n"

    def __repr__(self) -> str:
        s = self.settings
        head = (f"Comparison({len(self.systems)} systems over {self.n_common} common queries, tests "
                f"{list(s['tests'])}, correction={s['correction']!r}, baseline={s['baseline']!r})")
        return head + "\n" + self.means.pivot(index="system", columns="metric", values="mean") \
            .loc[list(self.systems), list(self.metrics)].to_string()


_CORRECTION_NAMES = {"holm": "Holm", "bonferroni": "Bonferroni", "fdr_bh": "Benjamini-Hochberg (FDR)"}
_TEST_NAMES = {"t": "t-test", "wilcoxon": "Wilcoxon signed-rank test", "randomization": "randomization test"}


def compare(
    systems,
    other: EvaluationResult | None = None,
    test: str | Sequence[str] = "t",
    *,
    names: Sequence[str] | None = None,
    baseline: str | None = None,
    metrics: Sequence[str] | None = None,
    correction: str | None = None,
    tukey: bool = False,
    confidence: float = 0.95,
    alpha: float = 0.05,
    n_resamples: int = 9999,
    random_state: int | None = 0,
) -> Comparison:
    r"""Paired comparison of evaluated systems over the queries they share.

    ``compare(result_a, result_b)`` compares two systems (named ``"a"`` and ``"b"``, on the
    metrics both have); ``compare({"bm25": r1, "lgbm": r2, "ours": r3})`` (or a sequence of
    results with ``names=``) compares many.  Both return a :class:`Comparison`;
    ``compare(result_a, result_b).pair()`` is the table of the two, one row per metric.

    Every statistic pairs the systems by query id over the queries *all* systems have.  For a
    pair (a, b) with per-query differences :math:`d_q = a_q - b_q`, q = 1..n:

    * ``diff`` :math:`\bar d`, with the Student-t interval :math:`\bar d \pm t_{n-1} s_d/\sqrt n`;
    * Cohen's d for paired samples :math:`d_z = \bar d / s_d` (0 when every d_q is 0,
      :math:`\pm\infty` when all d_q are equal and not 0);
    * ``better``/``worse``: the fraction of queries with :math:`d_q > 0` / :math:`d_q < 0`;
    * a two-sided p-value: the paired t-test (``scipy.stats.ttest_rel``), the Wilcoxon
      signed-rank test (``scipy.stats.wilcoxon``), or the paired randomisation test of Fisher
      (``scipy.stats.permutation_test`` with ``permutation_type="samples"``: the sign of each
      d_q flipped at random, statistic :math:`\bar d`, ``n_resamples`` draws seeded by
      ``random_state``; exact when 2**n <= n_resamples).  p = 1 when every d_q is 0.

    Parameters
    ----------
    systems : EvaluationResult, mapping or sequence
        The first of two results; or name -> :class:`EvaluationResult`; or a sequence of
        results named by ``names``.
    other : EvaluationResult, optional
        The second result of the two-system form.
    test : {"t", "wilcoxon", "randomization"} or sequence of them
        The paired tests to run (default the t-test); ``Comparison.pair()`` shows the first.
    names : sequence of str, optional
        Names of a sequence of results (default ``"s0"``, ``"s1"``, ...).
    baseline : str, optional
        Compare every other system with this one only (pairs ``(other, baseline)``, so
        ``diff`` = other - baseline); default every pair ``(a, b)`` with a before b.
    metrics : sequence of str, optional
        Metrics to compare (default: those of the first system); every system must have them.
    correction : {"holm", "bonferroni", "fdr_bh"} or None
        Multiple-testing correction of the p-values, computed by statsmodels'
        ``multipletests``: Holm's step-down or Bonferroni's (family-wise error rate), or
        Benjamini-Hochberg (false discovery rate).  The family is every pair compared on one
        metric with one test.  None: no correction (``p_adjusted`` = ``p_value``).
    tukey : bool, default False
        Also run Tukey's HSD (``scipy.stats.tukey_hsd``) over all systems per metric.  It
        assumes *independent* samples, which per-query values of systems evaluated on the
        same queries are not (the paired tests use that pairing and are more powerful); it
        is offered for comparison with papers that report it.
    confidence : float, default 0.95
        Level of the intervals (means, differences, Tukey).
    alpha : float, default 0.05
        Level of ``significant`` (on the adjusted p).
    n_resamples : int, default 9999
        Draws of the randomisation test.
    random_state : int or None, default 0
        Seed of the randomisation test (the same seed for every pair and metric).

    Returns
    -------
    Comparison
        Always, for two systems as for many: ``means``, ``pairs``, ``tukey``, ``to_markdown``,
        ``to_latex``; ``pair(a, b)`` is the table of one pair (indexed by metric, columns
        ``mean_a``, ``mean_b``, ``diff``, ``ci_low``, ``ci_high``, ``p_value``, ``n``).

    Raises
    ------
    ValueError
        Fewer than two systems; results computed under different conventions (empty-list
        or tie policy, gain, threshold, AP divisor); no common query; a metric missing from
        a system; an unknown test or correction; fewer than two common queries.

    References
    ----------
    Smucker, Allan & Carterette (2007), *A comparison of statistical significance tests for
    information retrieval evaluation*, CIKM; Holm (1979); Benjamini & Hochberg (1995);
    Sakai (2014), *Statistical reform in information retrieval?*, SIGIR Forum.

    Examples
    --------
    >>> import gbrank
    >>> y, q = [1, 0, 0, 1, 0, 0, 1, 0, 0], [1, 1, 1, 2, 2, 2, 3, 3, 3]
    >>> good = gbrank.evaluate(y, [3, 2, 1, 3, 2, 1, 2, 3, 1], q, ["rr"])
    >>> bad = gbrank.evaluate(y, [1, 2, 3, 1, 2, 3, 1, 2, 3], q, ["rr"])
    >>> gbrank.compare(good, bad).pair().loc["rr", ["mean_a", "mean_b", "diff"]].round(4).tolist()
    [0.8333, 0.3333, 0.5]
    >>> c = gbrank.compare({"good": good, "bad": bad, "same": bad}, correction="holm")
    >>> c.pairs[["a", "b", "diff", "d_z", "better"]].round(3).values.tolist()[0]
    ['good', 'bad', 0.5, 1.732, 1.0]
    """
    _check_options(confidence=confidence, alpha=alpha, n_resamples=n_resamples, random_state=random_state,
                   tukey=tukey)
    if isinstance(systems, EvaluationResult):
        if not isinstance(other, EvaluationResult):
            raise ValueError("compare needs at least two systems: pass two EvaluationResults, or a mapping "
                             "name -> EvaluationResult (or a list with names=) for many")
        if names is not None or baseline is not None or tukey or correction is not None:
            raise ValueError("names, baseline, correction and tukey belong to the many-system form: call "
                             "compare({'a': result_a, 'b': result_b, ...}, ...)")
        _check_settings({"a": systems, "b": other})
        common = [m for m in systems.metrics if m in other.metrics]
        if not common:
            raise ValueError(f"the results share no metric: {systems.metrics} vs {other.metrics}")
        tests = _check_tests(test)
        return _compare({"a": systems, "b": other}, tests, baseline=None, metrics=common, correction=None,
                        tukey=False, confidence=confidence, alpha=alpha, n_resamples=n_resamples,
                        random_state=random_state)
    if isinstance(other, str):
        raise ValueError(f"with many systems pass the test by keyword: compare(systems, test={other!r})")
    if other is not None:
        raise ValueError("pass either two EvaluationResults or one mapping/sequence of them, not both")
    results = _named(systems, names)
    tests = _check_tests(test)
    if correction is not None:
        check_choice(correction, "correction", CORRECTIONS)
    if baseline is not None and baseline not in results:
        raise ValueError(f"baseline {baseline!r} is not one of the systems; choose one of {sorted(results)}")
    _check_settings(results)
    first = next(iter(results))
    if isinstance(metrics, str):
        metrics = [metrics]
    metrics = list(results[first].metrics) if metrics is None else list(metrics)
    if not metrics:
        raise ValueError("metrics must be a non-empty list of metric names, e.g. ['ndcg@10', 'ap']")
    for name, r in results.items():
        missing = [m for m in metrics if m not in r.metrics]
        if missing:
            shared = [m for m in metrics if all(m in x.metrics for x in results.values())]
            raise ValueError(f"system {name!r} lacks the metric(s) {missing} (it has {list(r.metrics)}); evaluate it "
                             f"with them, or pass metrics= with metrics every system has: {shared}")
    return _compare(results, tests, baseline=baseline, metrics=metrics, correction=correction, tukey=tukey,
                    confidence=confidence, alpha=alpha, n_resamples=n_resamples, random_state=random_state)


def adjust_p_values(p_values, correction: str | None) -> np.ndarray:
    """p-values adjusted for multiple testing by statsmodels' ``multipletests``.

    ``correction``: ``"holm"``, ``"bonferroni"``, ``"fdr_bh"`` or None (returned unchanged).
    NaN p-values (tests that could not be run) stay NaN and are not counted in the family.

    >>> adjust_p_values([0.01, 0.04, 0.03], "holm").round(4).tolist()
    [0.03, 0.06, 0.06]
    """
    p = np.asarray(p_values, dtype=np.float64).copy()
    if correction is None:
        return p
    check_choice(correction, "correction", CORRECTIONS)
    ok = ~np.isnan(p)
    if ok.any():
        from statsmodels.stats.multitest import multipletests

        p[ok] = multipletests(p[ok], method=CORRECTIONS[correction])[1]
    return p


# ---------------------------------------------------------------------------------------
# checks


def _check_options(*, confidence, alpha, n_resamples, random_state, tukey) -> None:
    """The numeric options of ``compare``, checked before any statistic is computed."""
    for name, value in (("confidence", confidence), ("alpha", alpha)):
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
                or not 0.0 < value < 1.0:
            raise ValueError(f"{name} must be a number strictly between 0 and 1, got {value!r:.40}")
    if not is_positive_int(n_resamples):
        raise ValueError(f"n_resamples must be a positive integer (draws of the randomization test), "
                         f"got {n_resamples!r:.40}")
    if random_state is not None and (isinstance(random_state, bool)
                                     or not isinstance(random_state, (int, np.integer)) or random_state < 0):
        raise ValueError(f"random_state must be None or a non-negative integer seed, got {random_state!r:.40}")
    if not isinstance(tukey, (bool, np.bool_)):
        raise TypeError(f"tukey must be True or False, got {tukey!r:.40}")


def _check_tests(test) -> tuple[str, ...]:
    tests = (test,) if isinstance(test, str) else tuple(test)
    if not tests:
        raise ValueError(f"test is empty; choose from {sorted(TESTS)}")
    for t in tests:
        check_choice(t, "test", TESTS)
    return tuple(dict.fromkeys(tests))


def _named(systems, names) -> dict[str, EvaluationResult]:
    if isinstance(systems, Mapping):
        if names is not None:
            raise ValueError("names= is for a sequence of results; a mapping names its systems itself")
        results = {str(k): v for k, v in systems.items()}
        if len(results) != len(systems):
            raise ValueError(f"two systems have the same name as text: {list(systems)}")
    elif isinstance(systems, Sequence) and not isinstance(systems, str):
        systems = list(systems)
        names = [f"s{i}" for i in range(len(systems))] if names is None else [str(n) for n in names]
        if len(names) != len(systems):
            raise ValueError(f"names has {len(names)} entries for {len(systems)} systems; give one name per system")
        if len(set(names)) != len(names):
            raise ValueError(f"names must be distinct, got {names}")
        results = dict(zip(names, systems))
    else:
        raise TypeError("systems must be an EvaluationResult (with a second one), a mapping name -> "
                        f"EvaluationResult, or a sequence of them; got {type(systems).__name__}")
    for name, r in results.items():
        if not isinstance(r, EvaluationResult):
            raise TypeError(f"system {name!r} is a {type(r).__name__}, not an EvaluationResult; evaluate it "
                            "with gbrank.evaluate or gbrank.evaluate_run first")
    if len(results) < 2:
        raise ValueError(f"compare needs at least two systems, got {len(results)}: {list(results)}")
    return results


def _check_settings(results: dict) -> None:
    names = list(results)
    ref = results[names[0]].settings
    for name in names[1:]:
        s = results[name].settings
        if s != ref:
            diff = {k: (ref.get(k), s.get(k)) for k in set(ref) | set(s) if ref.get(k) != s.get(k)}
            who = "the two results use" if len(names) == 2 else f"systems {names[0]!r} and {name!r} use"
            raise ValueError(f"{who} different conventions {diff}; evaluate all systems the same way")


# ---------------------------------------------------------------------------------------
# the statistics


def _compare(results, tests, *, baseline, metrics, correction, tukey, confidence, alpha, n_resamples,
             random_state) -> Comparison:
    names = list(results)
    common = results[names[0]].per_query.index
    for name in names[1:]:
        common = common.intersection(results[name].per_query.index, sort=False)
    if len(common) == 0:
        raise ValueError("the systems share no query id, so there is nothing to pair: "
                         + ", ".join(f"{n} has {len(r.per_query)}" for n, r in results.items()))
    values = {n: results[n].per_query.loc[common, metrics].to_numpy(dtype=np.float64) for n in names}
    n = len(common)
    means = []
    for name in names:
        v = values[name]
        mean = v.mean(axis=0)
        std = v.std(axis=0, ddof=1) if n > 1 else np.zeros(len(metrics))
        half = _t_half_width(std, n, confidence)
        for j, m in enumerate(metrics):
            means.append({"system": name, "metric": m, "mean": mean[j], "std": std[j], "ci_low": mean[j] - half[j],
                          "ci_high": mean[j] + half[j], "n": n})
    pairs = [(a, baseline) for a in names if a != baseline] if baseline is not None \
        else list(itertools.combinations(names, 2))
    rows = []
    for j, m in enumerate(metrics):
        for a, b in pairs:
            x, y = values[a][:, j], values[b][:, j]
            d = x - y
            sd = d.std(ddof=1) if n > 1 else 0.0
            half = float(_t_half_width(sd, n, confidence))
            base = {"metric": m, "a": a, "b": b, "mean_a": x.mean(), "mean_b": y.mean(), "diff": d.mean(),
                    "ci_low": d.mean() - half, "ci_high": d.mean() + half, "d_z": _cohen_dz(d),
                    "better": float(np.mean(d > 0)), "worse": float(np.mean(d < 0))}
            for t in tests:
                statistic, p = _paired_test(x, y, t, n_resamples, random_state)
                rows.append({**base, "test": t, "statistic": statistic, "p_value": p, "n": n})
    table = pd.DataFrame(rows, columns=["metric", "a", "b", "test", "mean_a", "mean_b", "diff", "ci_low", "ci_high",
                                        "d_z", "better", "worse", "statistic", "p_value", "n"])
    table["p_adjusted"] = table["p_value"]
    if correction is not None:
        for _, idx in table.groupby(["metric", "test"], sort=False).groups.items():
            table.loc[idx, "p_adjusted"] = adjust_p_values(table.loc[idx, "p_value"].to_numpy(), correction)
    table["significant"] = table["p_adjusted"] < alpha
    table = table[["metric", "a", "b", "test", "mean_a", "mean_b", "diff", "ci_low", "ci_high", "d_z", "better",
                   "worse", "statistic", "p_value", "p_adjusted", "significant", "n"]]
    return Comparison(
        means=pd.DataFrame(means), pairs=table,
        tukey=_tukey(values, names, metrics, pairs, confidence) if tukey else None,
        systems=tuple(names), metrics=tuple(metrics),
        settings={"tests": tests, "correction": correction, "baseline": baseline, "confidence": confidence,
                  "alpha": alpha, "n_resamples": n_resamples, "random_state": random_state,
                  **results[names[0]].settings},
        n_common=n, n_queries={k: int(len(r.per_query)) for k, r in results.items()})


def _cohen_dz(d: np.ndarray) -> float:
    mean = d.mean()
    sd = d.std(ddof=1) if len(d) > 1 else 0.0
    if sd == 0:
        return 0.0 if mean == 0 else float(np.sign(mean) * np.inf)
    return float(mean / sd)


def _paired_test(x, y, test, n_resamples, random_state) -> tuple[float, float]:
    """(statistic, two-sided p) of one paired test."""
    d = x - y
    if np.all(d == 0):
        return 0.0, 1.0
    if len(d) < 2:
        raise ValueError("a paired test needs at least two common lists")
    from scipy import stats  # imported on first use: it is most of the cost of importing gbrank

    if test == "t":
        r = stats.ttest_rel(x, y)
    elif test == "wilcoxon":
        r = stats.wilcoxon(x, y)
    else:
        r = stats.permutation_test(
            (x, y), lambda u, v, axis: np.mean(u - v, axis=axis), permutation_type="samples",
            vectorized=True, n_resamples=n_resamples, alternative="two-sided", rng=random_state,
        )
    return float(r.statistic), float(r.pvalue)


def _tukey(values, names, metrics, pairs, confidence) -> pd.DataFrame:
    from scipy import stats

    where = {n: i for i, n in enumerate(names)}
    rows = []
    for j, m in enumerate(metrics):
        res = stats.tukey_hsd(*[values[n][:, j] for n in names])
        ci = res.confidence_interval(confidence_level=confidence)
        for a, b in pairs:
            i, k = where[a], where[b]
            rows.append({"metric": m, "a": a, "b": b, "diff": float(res.statistic[i, k]),
                         "ci_low": float(ci.low[i, k]), "ci_high": float(ci.high[i, k]),
                         "p_value": float(res.pvalue[i, k])})
    return pd.DataFrame(rows, columns=["metric", "a", "b", "diff", "ci_low", "ci_high", "p_value"])


# ---------------------------------------------------------------------------------------
# Markdown and LaTeX, written out (no tabulate)


def _p(p) -> str:
    if p is None or not np.isfinite(p):
        return "p n/a"
    return "p<1e-4" if p < 1e-4 else f"p={p:.4f}" if p < 0.01 else f"p={p:.3f}"


def _p_tex(p) -> str:
    if p is None or not np.isfinite(p):
        return "$p$ n/a"
    return "$" + _p(p).replace("<1e-4", "<10^{-4}") + "$"


def _md_table(head, rows) -> list[str]:
    esc = lambda s: str(s).replace("|", "\\|")  # noqa: E731
    return (["| " + " | ".join(esc(h) for h in head) + " |", "|---|" + "---:|" * (len(head) - 1)]
            + ["| " + " | ".join(esc(c) for c in r) + " |" for r in rows])


_TEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
        "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def _tex(s) -> str:
    """Text with LaTeX's special characters escaped."""
    return "".join(_TEX.get(c, c) for c in str(s))


def _tex_table(head, rows) -> str:
    """A ``tabular`` of cells already in LaTeX."""
    lines = [r"\begin{tabular}{l" + "r" * (len(head) - 1) + "}", r"\hline", " & ".join(head) + r" \\", r"\hline"]
    lines += [" & ".join(r) + r" \\" for r in rows]
    lines += [r"\hline", r"\end{tabular}"]
    return "\n".join(lines)
