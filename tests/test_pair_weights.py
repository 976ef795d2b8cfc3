"""Pair weightings and pair sampling of LambdaObjective against slow oracles: the LambdaLoss
weights formula by formula, YetiRank-style noise with the kernel's own draws and (apart from
them) with another generator, XGBoost's ``mean`` pairs by their sampler's distribution, their
exact expectation, and XGBoost's own objective where the draws cannot matter."""

import copy
import math
import pickle

import numba
import numpy as np
import pytest
from scipy import stats
from scipy.special import expit

from gbrank.lambdas import LambdaObjective, swap_deltas
from gbrank.lambdas._pairweights import argsort_stable, list_state, sample_partners, score_key, uniform_draws


# -- random lists ------------------------------------------------------------------------

def _random_list(rng, n):
    """Scores with ties (and now and then a span over 700: the exp-per-pair path), graded,
    binary, all-equal or all-zero labels."""
    kind = rng.integers(6)
    if kind == 0:
        labels = np.zeros(n)
    elif kind == 1:
        labels = np.full(n, float(rng.integers(1, 4)))  # all equal
    elif kind == 2:
        labels = (rng.random(n) < 0.4).astype(float)
    else:
        labels = rng.integers(0, 5, n).astype(float) * (rng.random(n) < 0.6)
    scores = rng.integers(0, max(2, n // 2), n).astype(float)
    if rng.random() < 0.5:
        scores = scores + rng.random(n)
    if rng.random() < 0.08:
        scores = scores * 100.0
    return scores, labels


def _random_lists(rng, sizes):
    lists = [_random_list(rng, int(n)) for n in sizes]
    ptr = np.concatenate(([0], np.cumsum([len(s) for s, _ in lists])))
    return lists, np.concatenate([s for s, _ in lists]), np.concatenate([y for _, y in lists]), ptr


def _sizes(rng, count):
    return np.r_[[1, 2, 2, 2, 3], rng.integers(1, 25, count)]


# -- the slow assembly -------------------------------------------------------------------

def _positions(scores):
    order = np.argsort(-np.asarray(scores), kind="stable")
    pos = np.empty(len(scores), int)
    pos[order] = np.arange(len(scores))
    return pos


def _topk_pairs(obj, scores, labels):
    """(i, j) input rows with l_i > l_j and one of them in the current top ``truncation``."""
    pos = _positions(scores)
    top = obj.truncation or len(scores)
    return [(i, j) for i in range(len(scores)) for j in range(len(scores))
            if labels[i] > labels[j] and min(pos[i], pos[j]) < top]


def _assemble(obj, scores, labels, weight, pairs, norm_factor=None):
    """g and h of the LambdaRank formulas (test_lambdas' slow assembly) over ``pairs`` with
    pair weights ``weight[i][j]``; ``norm_factor`` replaces the log2(1 + S) / S list factor."""
    n = len(scores)
    g, h = np.zeros(n), np.zeros(n)
    total = 0.0
    equal_scores = max(scores) == min(scores)
    for i, j in pairs:
        hi, lo = (i, j) if labels[i] > labels[j] else (j, i)
        dm = weight[i][j]
        d = scores[hi] - scores[lo]
        if obj.score_normalization and not equal_scores:
            dm /= obj.score_normalization_eps + abs(d)
        x = obj.sigma * d
        rho = expit(-x)
        q = max(math.exp(-abs(x)) / (1 + math.exp(-abs(x))) ** 2, 1e-16)
        lam = obj.sigma * dm * rho
        hh = obj.sigma**2 * dm * q if obj.hessian == "lightgbm" else 2 * dm * q
        g[hi] -= lam
        g[lo] += lam
        h[hi] += hh
        h[lo] += hh
        total += 2 * lam
    if obj.list_normalization:
        f = norm_factor if norm_factor is not None else (math.log2(1 + total) / total if total > 0 else 1.0)
        g, h = g * f, h * f
    return g, h


def _gain(label, kind="exp"):
    return 2.0**label - 1.0 if kind == "exp" else float(label)


def _lambdaloss_weights(weighting, mu, scores, labels, truncation=None, gain="exp"):
    """The LambdaLoss weight of every pair of one list, formula by formula, ranks r from a
    stable descending sort: |G_i - G_j| (rho or delta terms) / IDCG@truncation."""
    n = len(scores)
    r = _positions(scores) + 1
    ideal = sorted((_gain(lab, gain) for lab in labels), reverse=True)[: truncation or n]
    idcg = sum(gn / math.log2(k + 2) for k, gn in enumerate(ideal))

    def disc(x):
        return 1.0 / math.log2(1 + x)

    w = [[0.0] * n for _ in range(n)]
    for i in range(n):
        for j in range(n):
            if i == j or idcg == 0:
                continue
            dgain = abs(_gain(labels[i], gain) - _gain(labels[j], gain))
            k = abs(r[i] - r[j])
            delta = abs(disc(k) - disc(k + 1))
            rho = abs(disc(r[i]) - disc(r[j]))
            w[i][j] = dgain * (delta if weighting == "ndcg_loss2" else rho + mu * delta) / idcg
    return w


# -- LambdaLoss weights ----------------------------------------------------------------------

LOSS2 = [
    LambdaObjective("ndcg", weighting="ndcg_loss2"),
    LambdaObjective("ndcg", weighting="ndcg_loss2++"),
    LambdaObjective("ndcg", weighting="ndcg_loss2++", mu=2.5, truncation=5, score_normalization=True,
                    list_normalization=True),
    LambdaObjective("ndcg", weighting="ndcg_loss2", truncation=3, hessian="xgboost", sigma=2.0),
    LambdaObjective("ndcg", weighting="ndcg_loss2++", mu=0.0, gain="linear", score_normalization=True),
    LambdaObjective("ndcg", weighting="ndcg_loss2", score_normalization=True, list_normalization=True,
                    score_normalization_eps=float(np.float32(0.01))),
]


@pytest.mark.parametrize("obj", LOSS2, ids=repr)
def test_lambdaloss_weights_equal_the_formula_pair_by_pair(obj):
    rng = np.random.default_rng(21)
    lists, scores, labels, ptr = _random_lists(rng, _sizes(rng, 150))
    g, h = obj.gradients(scores, labels, ptr)
    for q, (s, y) in enumerate(lists):
        w = _lambdaloss_weights(obj.weighting, obj.mu, s, y, obj.truncation, obj.gain)
        gs, hs = _assemble(obj, s, y, w, _topk_pairs(obj, s, y))
        np.testing.assert_allclose(g[ptr[q]:ptr[q + 1]], gs, rtol=1e-10, atol=1e-13, err_msg=f"list {q}")
        np.testing.assert_allclose(h[ptr[q]:ptr[q + 1]], hs, rtol=1e-10, atol=1e-13, err_msg=f"list {q}")


def test_lambdaloss2pp_with_mu_zero_is_the_plain_ndcg_weighting():
    rng = np.random.default_rng(3)
    _, scores, labels, ptr = _random_lists(rng, _sizes(rng, 80))
    for kw in ({}, {"truncation": 4, "score_normalization": True, "list_normalization": True}):
        g0, h0 = LambdaObjective("ndcg", **kw).gradients(scores, labels, ptr)
        g1, h1 = LambdaObjective("ndcg", weighting="ndcg_loss2++", mu=0.0, **kw).gradients(scores, labels, ptr)
        np.testing.assert_allclose(g1, g0, rtol=1e-10, atol=1e-14)
        np.testing.assert_allclose(h1, h0, rtol=1e-10, atol=1e-14)


def test_lambdaloss_sigmoid_table_is_close_to_the_exact_sigmoid():
    rng = np.random.default_rng(5)
    scores, labels, ptr = rng.normal(size=300), rng.integers(0, 3, 300).astype(float), [0, 100, 200, 300]
    kw = dict(weighting="ndcg_loss2++", truncation=30, score_normalization=True, list_normalization=True)
    g1, _ = LambdaObjective("ndcg", **kw).gradients(scores, labels, ptr)
    g2, _ = LambdaObjective("ndcg", sigmoid_table=True, **kw).gradients(scores, labels, ptr)
    np.testing.assert_allclose(g2, g1, rtol=0, atol=1e-5 * np.abs(g1).max())


# -- the defaults and the generic path reproduce today's gradients -----------------------------

PLAIN = [LambdaObjective("ndcg", truncation=5, score_normalization=True, list_normalization=True),
         LambdaObjective("ap", hessian="xgboost"), LambdaObjective("rr", sigma=2.0),
         LambdaObjective("nrbp@0.9", truncation=3), LambdaObjective("err", list_normalization=True),
         LambdaObjective("ap+minmax", truncation=4)]


@pytest.mark.parametrize("obj", PLAIN, ids=repr)
def test_explicit_defaults_reproduce_todays_gradients_exactly(obj):
    rng = np.random.default_rng(8)
    _, scores, labels, ptr = _random_lists(rng, _sizes(rng, 100))
    same = LambdaObjective(**dict(obj.get_params(), weighting="delta", stochastic=0, pair_method="topk",
                                  pairs_per_doc=1, random_state=123))
    g0, h0 = obj.gradients(scores, labels, ptr)
    g1, h1 = same.gradients(scores, labels, ptr)
    np.testing.assert_array_equal(g1, g0)
    np.testing.assert_array_equal(h1, h0)


@pytest.mark.parametrize("obj", PLAIN, ids=repr)
def test_the_generic_pair_loop_with_plain_weights_equals_todays_kernel(obj):
    """The new kernel's generic loop (the one noise and "mean" use), fed the plain weights at
    the unperturbed positions, gives today's gradients."""
    from gbrank.lambdas._deltas import delta_codes
    from gbrank.lambdas._kernels import HESS_LIGHTGBM, HESS_XGBOOST
    from gbrank.lambdas._pairweights import weighted_gradients
    from gbrank.metrics import GAINS

    rng = np.random.default_rng(9)
    _, scores, labels, ptr = _random_lists(rng, _sizes(rng, 100))
    _, scale, *_ = obj._bounding_arrays(labels, ptr)
    g, h = weighted_gradients(scores, labels, ptr, *delta_codes(obj.metric), obj.kernel_parameter(labels), obj.sigma,
                              obj.truncation or 0, obj.score_normalization, obj.score_normalization_eps,
                              obj.list_normalization, {"lightgbm": HESS_LIGHTGBM, "xgboost": HESS_XGBOOST}[obj.hessian],
                              obj.sigmoid_table, GAINS[obj.gain], obj.relevance_threshold, scale, 0, 0.0, 0, 0, 1, 0)
    g0, h0 = obj.gradients(scores, labels, ptr)
    np.testing.assert_allclose(g, g0, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(h, h0, rtol=1e-10, atol=1e-14)


# -- stochastic (YetiRank-style) weights ---------------------------------------------------

def _noise_weights(obj, s, y, draws, samples):
    """Mean over the samples of each pair's weight at its perturbed ranks, the noise being
    log(u / (1 - u)) of the given draws (sample k: draws[k n:(k + 1) n], input order)."""
    n = len(s)
    total = np.zeros((n, n))
    for k in range(samples):
        u = draws[k * n:(k + 1) * n]
        perturbed = s + np.log(u / (1 - u))
        if obj.weighting == "delta":
            total += swap_deltas(obj.metric, perturbed, y, p=obj.p, truncation=obj.truncation,
                                 relevance_threshold=obj.relevance_threshold, gain=obj.gain, bounding=obj.bounding)
        else:
            total += np.array(_lambdaloss_weights(obj.weighting, obj.mu, perturbed, y, obj.truncation, obj.gain))
    return total / samples


STOCHASTIC = [
    LambdaObjective("ndcg", stochastic=3, random_state=7),
    LambdaObjective("ndcg", stochastic=2, truncation=4, score_normalization=True, list_normalization=True,
                    random_state=1),
    LambdaObjective("nrbp@0.8", stochastic=2, hessian="xgboost", random_state=2),
    LambdaObjective("ap", stochastic=3, truncation=5, random_state=3),
    LambdaObjective("rr", stochastic=2, score_normalization=True, random_state=4),
    LambdaObjective("ap+minmax", stochastic=2, random_state=5),
    LambdaObjective("ndcg", weighting="ndcg_loss2++", mu=3.0, stochastic=2, truncation=6, random_state=6),
    LambdaObjective("ndcg", stochastic=2, sigmoid_table=True, random_state=8),
]


@pytest.mark.parametrize("obj", STOCHASTIC, ids=repr)
def test_stochastic_weights_equal_a_plain_monte_carlo_on_the_same_draws(obj):
    rng = np.random.default_rng(31)
    lists, scores, labels, ptr = _random_lists(rng, _sizes(rng, 60))
    g, h = obj.gradients(scores, labels, ptr)
    key = np.uint64(score_key(scores))
    for q, (s, y) in enumerate(lists):
        draws = uniform_draws(np.uint64(obj.random_state), key, q, obj.stochastic * len(s))
        w = _noise_weights(obj, s, y, draws, obj.stochastic)
        gs, hs = _assemble(obj, s, y, w, _topk_pairs(obj, s, y))
        # the table (bins 4.8e-5 wide) against the oracle's exact sigmoid
        tol = dict(rtol=2e-4, atol=1e-7) if obj.sigmoid_table else dict(rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(g[ptr[q]:ptr[q + 1]], gs, err_msg=f"list {q}", **tol)
        np.testing.assert_allclose(h[ptr[q]:ptr[q + 1]], hs, err_msg=f"list {q}", **tol)


def _sort_cases(rng):
    """Arrays of every shape the noise sort may meet: continuous, perturbed sorted scores,
    ties, signed zeros, one outlier squeezing the rest into a bucket (the mergesort
    fallback), a range that overflows or underflows, and the sizes 1, 2 and 1,000."""
    yield np.array([3.0])
    yield np.array([1.0, 1.0])
    yield np.array([2.0, -2.0])
    for _ in range(300):
        n = int(rng.integers(1, 400))
        yield rng.normal(size=n)
        yield -(np.sort(rng.normal(size=n))[::-1] * rng.choice([0.0, 1.0, 5.0]) + rng.logistic(size=n))
        yield rng.integers(0, 4, n).astype(float)
        yield rng.choice([0.0, -0.0, 1.0], size=n)
        yield np.r_[rng.normal(size=n), 1e6]
        yield rng.choice([-1.7e308, 1.7e308, 0.0], size=n) * rng.random(n)
        yield rng.normal(size=n) * 5e-324
    yield rng.normal(size=1000)


def test_noise_sort_is_numpys_stable_mergesort():
    """The bucket sort of the perturbed scores (``stable_argsort``) gives exactly the
    permutation of ``np.argsort(kind="mergesort")``, ties kept in input order."""
    rng = np.random.default_rng(8)
    for k, x in enumerate(_sort_cases(rng)):
        np.testing.assert_array_equal(argsort_stable(x), np.argsort(x, kind="mergesort"), err_msg=f"case {k}: {x}")


def test_stochastic_err_equals_the_same_draws_list_by_list():
    """ERR's scale is the data's top grade: one list per call, as in test_lambdas."""
    obj = LambdaObjective("err", stochastic=3, list_normalization=True, random_state=11)
    rng = np.random.default_rng(12)
    for n in rng.integers(1, 15, 60):
        s, y = _random_list(rng, int(n))
        g, h = obj.gradients(s, y, [0, len(s)])
        w = _noise_weights(obj, s, y, uniform_draws(np.uint64(11), np.uint64(score_key(s)), 0, 3 * len(s)), 3)
        gs, hs = _assemble(obj, s, y, w, _topk_pairs(obj, s, y))
        np.testing.assert_allclose(g, gs, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(h, hs, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("metric, weighting", [("ndcg", "delta"), ("ap", "delta"), ("rr", "delta"),
                                               ("ndcg", "ndcg_loss2")])
def test_stochastic_mean_approaches_the_expectation_under_another_generator(metric, weighting):
    """Apart from the kernel's draws: the gradient with S noise samples against the mean of
    M per-sample gradients under numpy's logistic generator; both estimate the same
    expectation, so they agree within 5 standard errors (per row, from the oracle's spread)."""
    s = np.array([0.4, 0.9, 0.0, 0.5, 0.45])
    y = np.array([1.0, 0.0, 2.0, 1.0, 0.0])
    samples, draws = 40_000, 20_000
    obj = LambdaObjective(metric, weighting=weighting, stochastic=samples, random_state=2)
    g, _ = obj.gradients(s, y, [0, len(s)])
    one = LambdaObjective(metric, weighting=weighting)
    rng = np.random.default_rng(99)
    pairs = _topk_pairs(one, s, y)
    per_sample = np.empty((draws, len(s)))
    for k in range(draws):
        perturbed = s + rng.logistic(size=len(s))
        if weighting == "delta":
            w = swap_deltas(metric, perturbed, y)
        else:
            w = _lambdaloss_weights(weighting, 0.0, perturbed, y)
        per_sample[k], _ = _assemble(one, s, y, w, pairs)
    expected = per_sample.mean(axis=0)
    se = per_sample.std(axis=0) * math.sqrt(1 / draws + 1 / samples)
    assert np.all(np.abs(g - expected) <= 5 * se + 1e-12), (g, expected, se)
    assert np.abs(g).max() > 20 * se.max()  # the check can fail


# -- XGBoost's mean pairs ------------------------------------------------------------------

def test_mean_partners_are_uniform_over_the_other_labels():
    """The sampler over many calls (one state per call): each item's partner is uniform over
    the items of a different label (chi-square), and never one of its own label."""
    lab = np.array([2.0, 1.0, 1.0, 0.0, 0.0, 0.0, 3.0])  # labels in rank order
    calls = 3000
    counts = np.zeros((len(lab), len(lab)))
    for c in range(calls):
        partners, _ = sample_partners(lab, 1, np.uint64(list_state(np.uint64(5), np.uint64(c * 7919), 0)))
        for r, j in enumerate(partners):
            counts[r, j] += 1
    for r in range(len(lab)):
        other = lab != lab[r]
        assert counts[r, ~other].sum() == 0
        assert counts[r].sum() == calls
        p = stats.chisquare(counts[r, other]).pvalue
        assert p > 1e-4, (r, counts[r])


def test_mean_sampler_marks_items_without_a_partner():
    partners, _ = sample_partners(np.array([1.0, 1.0, 1.0]), 2, np.uint64(list_state(np.uint64(1), np.uint64(2), 0)))
    assert (partners == -1).all()


@pytest.mark.parametrize("metric, K, kw", [("ndcg", 1, {}), ("ndcg", 3, {"list_normalization": True}),
                                           ("ap", 2, {"score_normalization": True, "hessian": "xgboost"}),
                                           ("ndcg", 1, {"weighting": "ndcg_loss2++", "mu": 2.0})])
def test_mean_expected_gradient_equals_the_exact_expectation(metric, K, kw):
    """R copies of one list in one call, each with its own stream: their mean gradient
    against sum over items r and partners j of K / |partners(r)| times the pair's gradient
    (times 1 / K with the list normalisation), by the slow assembly."""
    s = np.array([0.3, 1.2, -0.5, 0.8, 0.1, 0.75])
    y = np.array([2.0, 0.0, 1.0, 1.0, 0.0, 3.0])
    copies = 20_000
    obj = LambdaObjective(metric, pair_method="mean", pairs_per_doc=K, random_state=4, **kw)
    ptr = np.arange(copies + 1) * len(s)
    g, h = obj.gradients(np.tile(s, copies), np.tile(y, copies), ptr)
    g, h = g.reshape(copies, len(s)), h.reshape(copies, len(s))
    if obj.weighting == "delta":
        w = swap_deltas(metric, s, y)
    else:
        w = _lambdaloss_weights(obj.weighting, obj.mu, s, y)
    expected_g, expected_h = np.zeros(len(s)), np.zeros(len(s))
    for r in range(len(s)):
        others = [j for j in range(len(s)) if y[j] != y[r]]
        for j in others:
            gp, hp = _assemble(obj, s, y, w, [(r, j)], norm_factor=1.0 / K)
            expected_g += K * gp / len(others)
            expected_h += K * hp / len(others)
    se_g = g.std(axis=0) / math.sqrt(copies)
    se_h = h.std(axis=0) / math.sqrt(copies)
    assert np.all(np.abs(g.mean(axis=0) - expected_g) <= 5 * se_g + 1e-12), (g.mean(axis=0), expected_g)
    assert np.all(np.abs(h.mean(axis=0) - expected_h) <= 5 * se_h + 1e-12), (h.mean(axis=0), expected_h)
    assert se_g.max() > 0  # the draws vary


@pytest.mark.parametrize("metric, p, score_norm, hess, sigma, per_doc",
                         [("ndcg", 0.0, True, 0, 1.0, 1), ("ndcg", 0.0, False, 0, 1.0, 3), ("nrbp", 0.8, True, 0, 1.0, 2),
                          ("ap", 0.0, True, 0, 1.0, 1), ("ap", 0.0, False, 1, 2.0, 2), ("ndcg", 0.0, True, 1, 0.5, 4)])
def test_mean_pairs_fast_loop_equals_the_generic_loop_on_the_same_draws(metric, p, score_norm, hess, sigma, per_doc):
    """The vectorised ``mean`` loop (plain delta, product and prefix forms) against the
    generic pair loop on the same partners, list by list: the same pairs, g, h and S."""
    from gbrank.lambdas._deltas import delta_codes
    from gbrank.lambdas._kernels import EXP_RATIO, exp_ratios, ranked_list
    from gbrank.lambdas._pairweights import PAIRS_MEAN, W_DELTA, _pairs_generic, _pairs_mean
    from gbrank.metrics import GAINS

    code, form = delta_codes(metric)
    rng = np.random.default_rng(17)
    checked = 0
    for n in rng.integers(2, 40, 150):
        scores, labels = _random_list(rng, int(n))
        _, s, lab, aux, norm, first, second, by_score, _ = ranked_list(scores, labels, code, GAINS["exp"], 1.0, p, 0,
                                                                       score_norm)
        e, per_pair_exp = exp_ratios(s, sigma, False)
        if per_pair_exp:
            continue
        partners, _ = sample_partners(lab, per_doc, np.uint64(list_state(np.uint64(5), np.uint64(6), int(n))))
        g0, h0, g1, h1 = np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n)
        total0 = _pairs_generic((PAIRS_MEAN, partners, per_doc), form, W_DELTA, (s, lab, e, aux), (norm, first, second),
                                (np.arange(n), np.zeros(1), 0.0), 0, (sigma, 0.01), (g0, h0), by_score, hess, EXP_RATIO)
        total1 = _pairs_mean(partners, per_doc, (s, lab, e, aux), norm, sigma, 0.01, (g1, h1), metric != "ap", by_score,
                             hess)
        np.testing.assert_allclose(total1, total0, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(g1, g0, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(h1, h0, rtol=1e-12, atol=1e-15)
        checked += np.any(g0 != 0)
    assert checked > 50


def test_mean_pairs_of_two_item_lists_are_deterministic():
    """Every item of a two-item list has one partner: 2 K visits of the one pair, times 1/K."""
    rng = np.random.default_rng(2)
    s, y = rng.normal(size=40), np.tile([1.0, 0.0], 20)
    ptr = np.arange(0, 41, 2)
    obj = LambdaObjective("ndcg", pair_method="mean", pairs_per_doc=3, list_normalization=True, random_state=1)
    g, h = obj.gradients(s, y, ptr)
    for q in range(20):
        sl = slice(ptr[q], ptr[q + 1])
        gs, hs = _assemble(obj, s[sl], y[sl], swap_deltas("ndcg", s[sl], y[sl]), [(0, 1)] * 6, norm_factor=1 / 3)
        np.testing.assert_allclose(g[sl], gs, rtol=1e-12)
        np.testing.assert_allclose(h[sl], hs, rtol=1e-12)


def _two_item_queries(seed=0, n_queries=300):
    """Queries of one item, of two items with different labels, or of items all of one label:
    the queries where XGBoost's mean pairs do not depend on its draws."""
    rng = np.random.default_rng(seed)
    sizes, ys = [], []
    for _ in range(n_queries):
        kind = rng.integers(4)
        if kind == 0:
            sizes.append(1)
            ys.append(rng.integers(0, 3, 1))
        elif kind == 1:
            n = int(rng.integers(2, 6))
            sizes.append(n)
            ys.append(np.full(n, rng.integers(0, 3)))
        else:
            sizes.append(2)
            ys.append(rng.choice(4, 2, replace=False))
    y = np.concatenate(ys).astype(float)
    X = rng.normal(size=(len(y), 5))
    X[:, 0] += 0.5 * y
    return X, y, np.array(sizes)


@pytest.mark.parametrize("metric, builtin", [("ndcg", "rank:ndcg"), ("ap", "rank:map")])
@pytest.mark.parametrize("K", [1, 3])
def test_mean_pairs_reproduce_xgboost_where_its_draws_do_not_matter(metric, builtin, K):
    xgb = pytest.importorskip("xgboost")
    from gbrank.backends import XGBoostObjective

    X, y, sizes = _two_item_queries()
    if metric == "ap":
        y = (y >= 1).astype(float)
    d = xgb.DMatrix(X, y)
    d.set_group(sizes)
    params = dict(eta=0.3, max_depth=4, tree_method="hist", nthread=2, seed=1, base_score=0.5,
                  disable_default_eval_metric=1)
    ref = xgb.train(dict(params, objective=builtin, lambdarank_pair_method="mean", lambdarank_num_pair_per_sample=K,
                         lambdarank_normalization=True, lambdarank_score_normalization=True), d, 8)
    obj = LambdaObjective.like_xgboost_mean(metric, pairs_per_doc=K, random_state=0)
    ours = xgb.train(params, d, 8, obj=XGBoostObjective(obj))
    assert ours.get_dump()[0].split("\n")[0] == ref.get_dump()[0].split("\n")[0]
    assert np.std(ref.predict(d)) > 0.1
    np.testing.assert_allclose(ours.predict(d), ref.predict(d), rtol=0, atol=1e-6)


# -- seeds, copies, threads --------------------------------------------------------------------

RANDOM = [LambdaObjective("ndcg", stochastic=2, truncation=5, random_state=3),
          LambdaObjective("ap", pair_method="mean", pairs_per_doc=2, random_state=3),
          LambdaObjective("ndcg", weighting="ndcg_loss2", stochastic=1, pair_method="mean", random_state=3)]


@pytest.mark.parametrize("obj", RANDOM, ids=repr)
def test_draws_are_seeded_and_follow_the_scores_over_rounds(obj):
    rng = np.random.default_rng(4)
    _, scores, labels, ptr = _random_lists(rng, rng.integers(3, 30, 50))
    rounds = [scores + 0.1 * k * rng.normal(size=len(scores)) for k in range(3)]
    twin = LambdaObjective(**obj.get_params())
    first = [obj.gradients(s, labels, ptr)[0] for s in rounds]
    for s, g in zip(rounds, first):
        np.testing.assert_array_equal(twin.gradients(s, labels, ptr)[0], g)  # same seed, same sequence
        np.testing.assert_array_equal(copy.deepcopy(obj).gradients(s, labels, ptr)[0], g)
        np.testing.assert_array_equal(pickle.loads(pickle.dumps(obj)).gradients(s, labels, ptr)[0], g)
        np.testing.assert_array_equal(obj.gradients(s, labels, ptr)[0], g)  # no hidden counter
    assert not np.array_equal(first[1], first[2])
    other = LambdaObjective(**dict(obj.get_params(), random_state=4))
    assert not np.array_equal(other.gradients(rounds[0], labels, ptr)[0], first[0])
    fresh = LambdaObjective(**dict(obj.get_params(), random_state=None))
    assert not np.array_equal(fresh.gradients(rounds[0], labels, ptr)[0], fresh.gradients(rounds[0], labels, ptr)[0])


@pytest.mark.parametrize("obj", RANDOM, ids=repr)
def test_draws_do_not_depend_on_the_number_of_threads(obj):
    rng = np.random.default_rng(6)
    _, scores, labels, ptr = _random_lists(rng, rng.integers(1, 40, 300))
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        g1, h1 = obj.gradients(scores, labels, ptr)
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
        g2, h2 = obj.gradients(scores, labels, ptr)
    finally:
        numba.set_num_threads(before)
    np.testing.assert_array_equal(g1, g2)
    np.testing.assert_array_equal(h1, h2)


def test_draws_are_uniform_in_the_open_interval_and_the_key_follows_every_bit():
    u = uniform_draws(np.uint64(0), np.uint64(0), 0, 200_000)
    assert 0 < u.min() and u.max() < 1
    assert stats.kstest(u, "uniform").pvalue > 1e-4
    s = np.linspace(0, 1, 50)
    t = s.copy()
    t[17] = np.nextafter(t[17], 2)
    assert score_key(s) != score_key(t) and score_key(s) == score_key(s.copy())


# -- the boosting libraries -----------------------------------------------------------------

def test_new_weightings_train_in_lightgbm_reproducibly():
    lgb = pytest.importorskip("lightgbm")
    from gbrank.backends import LightGBMObjective
    from gbrank.datasets import make_letor

    X, y, qid = make_letor(n_queries=40, docs_per_query=(5, 30), n_features=8, random_state=1)
    sizes = np.unique(qid, return_counts=True)[1]
    params = dict(verbosity=-1, num_threads=2, deterministic=True, force_col_wise=True, min_sum_hessian_in_leaf=1e-3)
    for obj in (LambdaObjective("ndcg", weighting="ndcg_loss2++", truncation=10, list_normalization=True),
                LambdaObjective("ndcg", stochastic=2, random_state=0, score_normalization=True),
                LambdaObjective("ndcg", pair_method="mean", pairs_per_doc=2, random_state=0)):
        # lightgbm.train deep-copies the objective: two fits from one object give one model
        a = lgb.train(dict(params, objective=LightGBMObjective(obj)), lgb.Dataset(X, y, group=sizes), 8)
        b = lgb.train(dict(params, objective=obj), lgb.Dataset(X, y, group=sizes), 8)
        np.testing.assert_array_equal(a.predict(X), b.predict(X))
        assert np.std(a.predict(X)) > 0


# -- bad parameters --------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs, error, message", [
    ({"weighting": "lambdaloss"}, ValueError, "weighting must be one of"),
    ({"metric": "ap", "weighting": "ndcg_loss2"}, ValueError, "LambdaLoss weight of nDCG.*metric 'ap'"),
    ({"weighting": "ndcg_loss2", "bounding": "minmax"}, ValueError, "takes no bounding"),
    ({"weighting": "ndcg_loss2", "mu": 3.0}, ValueError, "mu=3.0 weighs delta_ij in weighting='ndcg_loss2\\+\\+'"),
    ({"weighting": "ndcg_loss2++", "mu": -1.0}, ValueError, "mu must be >= 0"),
    ({"weighting": "ndcg_loss2++", "mu": "5"}, TypeError, "mu must be a number"),
    ({"stochastic": -1}, ValueError, "stochastic must be a whole number"),
    ({"stochastic": 2.5}, TypeError, "stochastic must be a whole number"),
    ({"stochastic": True}, TypeError, "stochastic must be a whole number"),
    ({"pair_method": "all"}, ValueError, "pair_method must be one of"),
    ({"pair_method": "mean", "pairs_per_doc": 0}, ValueError, "pairs_per_doc must be a whole number >= 1"),
    ({"pairs_per_doc": 2}, ValueError, "pairs_per_doc=2 counts the partners drawn with pair_method='mean'"),
    ({"metric": "ndcg@10", "pair_method": "mean"}, ValueError, "pair_method='mean' .* takes no truncation"),
    ({"metric": "ap+distribution", "stochastic": 2}, ValueError, "bounding='distribution' works with the plain"),
    ({"random_state": -3}, ValueError, "random_state must be None or an integer seed"),
    ({"random_state": 1.5}, TypeError, "random_state must be None or an integer seed"),
])
def test_bad_parameters_raise_with_their_names(kwargs, error, message):
    with pytest.raises(error, match=message):
        LambdaObjective(**kwargs)


def test_new_parameters_are_in_params_repr_and_equality():
    a = LambdaObjective("ndcg", weighting="ndcg_loss2++", mu=3.0, stochastic=4, random_state=9)
    assert {"weighting", "mu", "stochastic", "pair_method", "pairs_per_doc", "random_state"} <= set(a.get_params())
    assert "weighting='ndcg_loss2++'" in repr(a) and "stochastic=4" in repr(a) and "random_state=9" in repr(a)
    assert a == LambdaObjective(**a.get_params()) and hash(a) == hash(LambdaObjective(**a.get_params()))
    assert a != LambdaObjective(**dict(a.get_params(), random_state=10))
    assert repr(LambdaObjective("ndcg")) == "LambdaObjective(metric='ndcg')"
