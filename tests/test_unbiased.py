"""Unbiased LambdaMART (position propensities learned with the trees) and the click simulator.

- with propensities fixed at 1 the gradients are LambdaObjective's, for every objective metric;
- the 1 / (t+ t-) pair weighting, the pair losses and the propensity update against a plain
  Python loop over the pairs (swap deltas by brute force, ``tests/brute.py``);
- the simulator's click rates per (position, label) against theta_k * P(rel | l) (chi-square);
- the propensities learned on simulated clicks against the simulated theta;
- the same propensities as XGBoost's ``lambdarank_unbiased`` after the same rounds;
- bad inputs raise, naming the problem.
"""

from __future__ import annotations

import copy
import json
import math

import numpy as np
import pytest
from scipy import stats
from scipy.special import expit

from brute import swap_delta_matrix
from gbrank.datasets import make_letor
from gbrank.datasets._clicks import relevance_probability, session_lists, simulate_clicks
from gbrank.lambdas import LambdaObjective
from gbrank.lambdas._unbiased import UnbiasedLambdaObjective, update_propensity


def _random_lists(rng, sizes, max_click=1):
    scores, labels, positions, ptr = [], [], [], [0]
    for n in sizes:
        n = int(n)
        s = rng.integers(0, max(2, n // 2), n).astype(float)  # ties
        if rng.random() < 0.5:
            s = s + rng.random(n)
        scores.append(s)
        labels.append(rng.integers(0, max_click + 1, n).astype(float) * (rng.random(n) < 0.6))
        positions.append(rng.permutation(n) + 1)
        ptr.append(ptr[-1] + n)
    return np.concatenate(scores), np.concatenate(labels), np.concatenate(positions), np.array(ptr)


SETTINGS = [
    dict(metric="ndcg"),
    dict(metric="ndcg", truncation=5, score_normalization=True, list_normalization=True),
    dict(metric="ap", sigma=2.0, hessian="xgboost"),
    dict(metric="ap", truncation=3, list_normalization=True),
    dict(metric="rr", score_normalization=True),
    dict(metric="nrbp@0.8"),
    dict(metric="nrbp", p=0.95, truncation=7, list_normalization=True, hessian="xgboost"),
    dict(metric="err", list_normalization=True),
    dict(metric="ndcg", gain="linear", hessian_floor=1e-3),
]


@pytest.mark.parametrize("kw", SETTINGS, ids=lambda kw: "-".join(f"{v}" for v in kw.values()))
def test_propensities_at_one_give_lambda_objective_gradients(kw):
    rng = np.random.default_rng(3)
    scores, labels, positions, ptr = _random_lists(rng, rng.integers(1, 40, 200), max_click=3)
    obj = UnbiasedLambdaObjective(positions=positions, learn=False, **kw)
    g, h = obj.gradients(scores, labels, ptr)
    g0, h0 = LambdaObjective(**kw).gradients(scores, labels, ptr)
    np.testing.assert_allclose(g, g0, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(h, h0, rtol=1e-10, atol=1e-14)
    assert obj.n_updates_ == 0 and np.all(obj.propensity_plus_ == 1.0)
    # the first round of a learning objective is the biased one too
    g1, _ = UnbiasedLambdaObjective(positions=positions, **kw).gradients(scores, labels, ptr)
    np.testing.assert_allclose(g1, g0, rtol=1e-10, atol=1e-14)
    assert obj.lambda_objective() == LambdaObjective(**kw)


def _slow_unbiased(obj, name, scores, labels, pos, tp, tm):
    """Plain assembly of one list: (g, h, loss+ per position, loss- per position)."""
    n, K = len(scores), len(tp)
    g, h = np.zeros(n), np.zeros(n)
    lp, lm = np.zeros(K), np.zeros(K)
    if n < 2:
        return g, h, lp, lm
    D = np.array(swap_delta_matrix(name, list(scores), list(labels)))
    order = np.argsort(-scores, kind="stable")
    rank = np.empty(n, int)
    rank[order] = np.arange(n)
    top = obj._base.truncation or n
    total = 0.0
    equal = scores.max() == scores.min()
    for i in range(n):
        for j in range(n):
            if labels[i] <= labels[j] or min(rank[i], rank[j]) >= top:
                continue
            dm, d = D[i, j], scores[i] - scores[j]
            if obj._base.score_normalization and not equal:
                dm /= obj._base.score_normalization_eps + abs(d)
            sg = obj._base.sigma
            lam = sg * dm * expit(-sg * d)
            q = max(expit(sg * d) * expit(-sg * d), 1e-16)
            hh = sg * sg * dm * q if obj._base.hessian == "lightgbm" else 2 * dm * q
            k, m = pos[i] - 1, pos[j] - 1
            if k < K and m < K:
                loss = dm * math.log1p(math.exp(-sg * d))
                if tm[m] >= 1e-16:
                    lp[k] += loss / tm[m]
                if tp[k] >= 1e-16:
                    lm[m] += loss / tp[k]
                if tp[k] >= 1e-16 and tm[m] >= 1e-16:
                    lam, hh = lam / (tp[k] * tm[m]), hh / (tp[k] * tm[m])
            g[i] -= lam
            g[j] += lam
            h[i] += hh
            h[j] += hh
            total += 2 * lam
    if obj._base.list_normalization and total > 0:
        f = math.log2(1 + total) / total
        g, h = g * f, h * f
    return g, h, lp, lm


BRUTE = [
    ("ndcg", dict(metric="ndcg")),
    ("ndcg", dict(metric="ndcg", score_normalization=True, list_normalization=True, hessian="xgboost")),
    ("ap", dict(metric="ap", truncation=3, sigma=1.5)),
    ("rr", dict(metric="rr", list_normalization=True)),
    ("nrbp@0.8", dict(metric="nrbp@0.8", score_normalization=True)),
]


@pytest.mark.parametrize("name,kw", BRUTE, ids=lambda x: str(x))
def test_pair_weighting_and_update_equal_a_python_loop(name, kw):
    rng = np.random.default_rng(11)
    K = 6  # positions 7 and below are not tracked
    sizes = rng.integers(1, 11, 120)
    scores, labels, positions, ptr = _random_lists(rng, sizes, max_click=2)
    tp = rng.uniform(0.1, 1.0, K)
    tm = rng.uniform(0.5, 2.0, K)
    tp[4] = 0.0  # below 1e-16: pairs there are not reweighted
    obj = UnbiasedLambdaObjective(positions=positions, max_position=K, initial_plus=tp, initial_minus=tm,
                                  bias_norm=1.5, **kw)
    g, h = obj.gradients(scores, labels, ptr)
    lp_all, lm_all = np.zeros(K), np.zeros(K)
    for a, b in zip(ptr[:-1], ptr[1:]):
        gs, hs, lp, lm = _slow_unbiased(obj, name, scores[a:b], labels[a:b], positions[a:b], tp, tm)
        np.testing.assert_allclose(g[a:b], gs, rtol=1e-10, atol=1e-13)
        np.testing.assert_allclose(h[a:b], hs, rtol=1e-10, atol=1e-13)
        lp_all += lp
        lm_all += lm
    np.testing.assert_allclose(obj.last_loss_plus_, lp_all, rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(obj.last_loss_minus_, lm_all, rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(obj.propensity_plus_, (lp_all / lp_all[0]) ** (1 / 2.5), rtol=1e-10)
    np.testing.assert_allclose(obj.propensity_minus_, (lm_all / lm_all[0]) ** (1 / 2.5), rtol=1e-10)
    assert obj.n_updates_ == 1 and obj.propensity_plus_history_.shape == (2, K)
    np.testing.assert_array_equal(obj.propensity_plus_history_[0], tp)


def test_update_keeps_propensities_when_position_one_has_no_loss():
    current = np.array([1.0, 0.3])
    np.testing.assert_array_equal(update_propensity(np.array([0.0, 2.0]), current, 2.0), current)
    np.testing.assert_allclose(update_propensity(np.array([2.0, 0.25]), current, 2.0), [1.0, 0.5])


def test_weights_scale_gradients_but_not_the_update():
    rng = np.random.default_rng(2)
    scores, labels, positions, ptr = _random_lists(rng, [8, 5, 9])
    a = UnbiasedLambdaObjective(positions=positions)
    b = UnbiasedLambdaObjective(positions=positions)
    g, h = a.gradients(scores, labels, ptr)
    gw, hw = b.gradients(scores, labels, ptr, [2.0, 0.5, 1.0])
    w = np.repeat([2.0, 0.5, 1.0], np.diff(ptr))
    np.testing.assert_allclose(gw, g * w)
    np.testing.assert_allclose(hw, h * w)
    np.testing.assert_array_equal(a.propensity_plus_, b.propensity_plus_)


# -- the simulator ----------------------------------------------------------------------------

def test_click_rates_follow_the_position_based_model():
    rng = np.random.default_rng(5)
    n_q, n_doc, sessions = 600, 8, 40
    labels = rng.integers(0, 3, n_q * n_doc)
    scores = rng.random(n_q * n_doc)
    qid = np.repeat(np.arange(n_q), n_doc)
    log = simulate_clicks(labels, scores, qid, eta=1.0, sessions=sessions, max_label=2, random_state=9)
    theta = (1.0 / np.arange(1, n_doc + 1))
    np.testing.assert_allclose(log.theta, theta)
    np.testing.assert_allclose(log.p_relevant, 0.1 + 0.9 * (2.0**labels - 1) / 3)
    # positions: a permutation of 1..n per list, in descending score order
    for a in range(0, len(labels), n_doc):
        assert sorted(log.positions[a:a + n_doc]) == list(range(1, n_doc + 1))
        assert np.all(np.diff(scores[a:a + n_doc][np.argsort(log.positions[a:a + n_doc])]) <= 0)
    chi2, cells = 0.0, 0
    for k in range(1, n_doc + 1):
        for lab in range(3):
            sel = (log.positions == k) & (labels == lab)
            trials = sel.sum() * sessions
            p = theta[k - 1] * (0.1 + 0.9 * (2.0**lab - 1) / 3)
            chi2 += (log.clicks[sel].sum() - trials * p) ** 2 / (trials * p * (1 - p) + 1e-300)
            cells += 1
    assert stats.chi2.sf(chi2, cells) > 1e-3, (chi2, cells)
    # a cell far from its rate would be seen: one shifted rate doubles the statistic
    assert log.session_clicks.shape == (sessions, len(labels))
    np.testing.assert_array_equal(log.session_clicks.sum(axis=0), log.clicks)


def test_simulator_options_and_seeds():
    y = np.array([2, 0, 1, 1, 0])
    s = np.array([0.1, 0.9, 0.5, 0.5, 0.3])  # a tie: input order first
    a = simulate_clicks(y, s, group_ptr=[0, 5], sessions=50, random_state=1)
    b = simulate_clicks(y, s, group_ptr=[0, 5], sessions=50, random_state=1)
    c = simulate_clicks(y, s, group_ptr=[0, 5], sessions=50, random_state=2)
    np.testing.assert_array_equal(a.clicks, b.clicks)
    assert not np.array_equal(a.session_clicks, c.session_clicks)
    assert a.positions.tolist() == [5, 1, 2, 3, 4]
    d = simulate_clicks(y, s, group_ptr=[0, 5], max_position=3, sessions=200, random_state=1)
    assert d.clicks[[0, 4]].sum() == 0 and d.theta[3:].sum() == 0
    e = simulate_clicks(y, s, group_ptr=[0, 5], propensity=[1, 1, 1, 1, 1], click_noise={0: 0.0, 1: 0.0, 2: 1.0},
                        sessions=7)
    assert e.clicks.tolist() == [7, 0, 0, 0, 0]
    np.testing.assert_allclose(simulate_clicks(y, s, group_ptr=[0, 5], eta=2.0).theta,
                               1 / np.arange(1, 6) ** 2)
    np.testing.assert_allclose(relevance_probability([0, 1, 2], (0.0, 0.5), max_label=4), [0, 0.5 / 15, 1.5 / 15])


def test_session_lists_expand_sessions_with_clicks():
    y = np.array([1, 0, 0, 1, 1])
    log = simulate_clicks(y, np.arange(5.0), group_ptr=[0, 2, 5], sessions=30, random_state=4)
    rows, clicks, positions, ptr = session_lists(log)
    assert len(ptr) - 1 == int((np.add.reduceat(log.session_clicks, [0, 2], axis=1) > 0).sum())
    for a, b in zip(ptr[:-1], ptr[1:]):
        assert clicks[a:b].sum() >= 1
        assert rows[a:b].tolist() in ([0, 1], [2, 3, 4])
    np.testing.assert_array_equal(positions, log.positions[rows])
    assert clicks.sum() == log.clicks.sum()
    rows_all, _, _, ptr_all = session_lists(log, keep_empty=True)
    assert len(ptr_all) - 1 == 2 * 30 and len(rows_all) == 5 * 30


# -- propensities learned on simulated clicks ---------------------------------------------------

def _random_logger_clicks(n_q=1500, n_doc=10, sessions=10, seed=0):
    """Clicks of a logging ranker that orders at random: the rows shown at each position are
    alike, so the pair losses at position k scale with theta_k alone."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 3, n_q * n_doc)
    log = simulate_clicks(labels, rng.random(len(labels)), group_ptr=np.arange(0, len(labels) + 1, n_doc),
                          eta=1.0, sessions=sessions, max_label=2, random_state=seed)
    return labels, log


@pytest.mark.parametrize("metric", ["ndcg", "ap", "err"])
def test_learned_propensities_recover_theta_with_a_random_logger(metric):
    """With model scores that do not depend on the displayed position, the update (bias_norm = 0)
    settles near t+_k = theta_k / theta_1: within 20 % at positions 1-5 with 1,500 queries x
    10 sessions (about 4,000 clicks at position 5).  Measured: 5-15 % low.  The estimator is
    biased so, not noisy: a pair's |dM| carries the list's normaliser (1 / IDCG, 1 / R), which
    grows with the session's other clicks, and a click at position 1 leaves the other rows at
    the rarely clicked positions (mean 1 / IDCG 0.71 for a click at position 1, 0.62 at 5)."""
    labels, log = _random_logger_clicks()
    rows, clicks, positions, ptr = session_lists(log)
    rng = np.random.default_rng(1)
    model_scores = labels[rows] + rng.normal(0.0, 1.0, len(rows))  # a fair model: no position in it
    obj = UnbiasedLambdaObjective(metric, positions=positions, bias_norm=0.0, max_position=10)
    for _ in range(6):
        obj.gradients(model_scores, clicks, ptr)
    rel_err = np.abs(obj.propensity_plus_[:5] / log.theta[:5] - 1)
    assert rel_err.max() < 0.20, (obj.propensity_plus_[:5], log.theta[:5])
    # far closer than no debiasing (t = 1: off by up to 400 %)
    assert rel_err.max() < 0.1 * np.abs(1 / log.theta[:5] - 1).max()
    # the propensities settled: the last two rounds agree
    hist = obj.propensity_plus_history_
    assert np.abs(hist[-1] - hist[-2]).max() < 1e-3
    # with the p-norm regulariser the estimate is t+ ** (p + 1)
    obj2 = UnbiasedLambdaObjective(metric, positions=positions, bias_norm=2.0, max_position=10)
    for _ in range(6):
        obj2.gradients(model_scores, clicks, ptr)
    assert np.abs(obj2.examination_[:5] / log.theta[:5] - 1).max() < 0.20


@pytest.mark.slow
def test_lightgbm_learns_propensities_and_keeps_them_on_the_object():
    lgb = pytest.importorskip("lightgbm")
    X, y, qid = make_letor(n_queries=1500, docs_per_query=10, n_features=10, max_label=2, random_state=3)
    rng = np.random.default_rng(0)
    log = simulate_clicks(y, rng.random(len(y)), qid, eta=1.0, sessions=10, max_label=2, random_state=0)
    rows, clicks, positions, ptr = session_lists(log)
    obj = UnbiasedLambdaObjective("ndcg", positions=positions, bias_norm=0.0, max_position=10)
    ds = lgb.Dataset(X[rows], clicks, group=np.diff(ptr))
    lgb.train({"objective": obj, "learning_rate": 0.1, "num_leaves": 15, "verbose": -1, "num_threads": 2,
               "min_sum_hessian_in_leaf": 0.0}, ds, num_boost_round=30)
    assert obj.n_updates_ == 30  # lightgbm deep-copies params; the state stays on this object
    assert np.abs(obj.propensity_plus_[:5] / log.theta[:5] - 1).max() < 0.20, obj.propensity_plus_[:5]


def test_update_rounds_stops_the_estimate_and_keeps_it():
    """update_rounds=3: the first three calls update exactly as the every-round estimate
    does, the later ones leave the propensities where the third left them (and still
    weight the pairs by them)."""
    rng = np.random.default_rng(5)
    ptr = np.arange(0, 8 * 40 + 1, 8)
    positions = np.tile(np.arange(1, 9), 40)
    labels = (rng.random(len(positions)) < 0.3).astype(float)
    every = UnbiasedLambdaObjective("ndcg", positions=positions, bias_norm=0.0, max_position=8)
    stopped = UnbiasedLambdaObjective("ndcg", positions=positions, bias_norm=0.0, max_position=8, update_rounds=3)
    fixed = None
    for call in range(6):
        scores = rng.normal(size=len(positions))
        g_every, _ = every.gradients(scores, labels, ptr)
        g_stopped, _ = stopped.gradients(scores, labels, ptr)
        if call < 3:
            np.testing.assert_array_equal(g_stopped, g_every)
            np.testing.assert_array_equal(stopped.propensity_plus_, every.propensity_plus_)
        else:
            if fixed is None:
                fixed = UnbiasedLambdaObjective("ndcg", positions=positions, bias_norm=0.0, max_position=8,
                                                learn=False, initial_plus=stopped.propensity_plus_,
                                                initial_minus=stopped.propensity_minus_)
            g_fixed, _ = fixed.gradients(scores, labels, ptr)
            np.testing.assert_array_equal(g_stopped, g_fixed)  # weighted by the frozen estimate
            assert not np.array_equal(every.propensity_plus_, stopped.propensity_plus_)
    assert stopped.n_updates_ == 3 and every.n_updates_ == 6
    assert len(stopped.propensity_plus_history_) == 4
    np.testing.assert_array_equal(stopped.propensity_plus_, stopped.propensity_plus_history_[3])
    assert stopped.get_params()["update_rounds"] == 3 and "update_rounds=3" in repr(stopped)
    stopped.gradients(rng.normal(size=len(positions)), labels, ptr, update=True)  # the override still updates
    assert stopped.n_updates_ == 4
    stopped.reset()
    assert stopped.n_updates_ == 0 and (stopped.propensity_plus_ == 1).all()


def test_deepcopy_keeps_the_learning_object():
    obj = UnbiasedLambdaObjective(positions=[1, 2])
    assert copy.deepcopy({"objective": obj})["objective"] is obj


def test_lightgbm_and_lgbmranker_calling_conventions():
    lgb = pytest.importorskip("lightgbm")
    X, y, qid = make_letor(n_queries=30, docs_per_query=8, n_features=5, max_label=1, random_state=0)
    positions = np.tile(np.arange(1, 9), 30)
    sizes = np.full(30, 8)
    obj = UnbiasedLambdaObjective(positions=positions, max_position=8)
    booster = lgb.train({"objective": obj, "verbose": -1, "num_threads": 2, "min_sum_hessian_in_leaf": 0.0},
                        lgb.Dataset(X, y, group=sizes), num_boost_round=3)
    assert obj.n_updates_ == 3 and booster.num_trees() == 3
    obj.reset()
    assert obj.n_updates_ == 0 and np.all(obj.propensity_plus_ == 1)
    g, h = obj(y, np.zeros(len(y)), None, sizes)  # LGBMRanker: (y_true, y_pred, weight, group)
    assert g.shape == (len(y),) and obj.n_updates_ == 1


def test_same_propensities_as_xgboost_lambdarank_unbiased():
    """XGBoost's ``rank:ndcg`` with ``lambdarank_unbiased`` (topk 32 pairs, both normalisations,
    its hessian, its cost): the propensities after 8 rounds agree to 1e-6 (XGBoost keeps them
    as float32 in its configuration), and so do the models."""
    xgb = pytest.importorskip("xgboost")
    X, y, qid = make_letor(n_queries=120, docs_per_query=(5, 40), n_features=8, max_label=2, random_state=1)
    rng = np.random.default_rng(0)
    log = simulate_clicks(y, X[:, 0] + rng.normal(size=len(y)), qid, sessions=3, max_label=2, random_state=3)
    rows, clicks, positions, ptr = session_lists(log)
    # XGBoost takes the row order inside a list as the displayed position
    order = np.concatenate([a + np.argsort(positions[a:b], kind="stable") for a, b in zip(ptr[:-1], ptr[1:])])
    rows, clicks, positions = rows[order], clicks[order], positions[order]
    d = xgb.DMatrix(X[rows], clicks)
    d.set_group(np.diff(ptr))
    params = dict(base_score=0.0, tree_method="hist", max_depth=4, eta=0.1, nthread=2, seed=0)
    builtin = xgb.train({**params, "objective": "rank:ndcg", "lambdarank_unbiased": True,
                         "lambdarank_bias_norm": 2.0}, d, 8)
    conf = json.loads(builtin.save_config())["learner"]["objective"]
    obj = UnbiasedLambdaObjective("ndcg", positions=positions, truncation=32, score_normalization=True,
                                  list_normalization=True, hessian="xgboost", pair_loss="xgboost", max_position=32)
    ours = xgb.train(params, d, 8, obj=obj)
    k = len(conf["ti+"])
    np.testing.assert_allclose(obj.propensity_plus_[:k], np.array(conf["ti+"]), atol=1e-6)
    np.testing.assert_allclose(obj.propensity_minus_[:k], np.array(conf["tj-"]), atol=1e-6)
    np.testing.assert_allclose(ours.predict(d), builtin.predict(d), atol=1e-5)


# -- bad inputs ---------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs,message", [
    (dict(bias_norm=-1), "bias_norm"),
    (dict(max_position=0), "max_position"),
    (dict(max_position=2.5), "max_position"),
    (dict(pair_loss="hinge"), "pair_loss"),
    (dict(update_rounds=0), "update_rounds"),
    (dict(update_rounds=2.0), "update_rounds"),
    (dict(update_rounds=True), "update_rounds"),
    (dict(initial_plus=[1.0, 0.5]), "initial_plus"),
    (dict(metric="ndcg+minmax"), "unbounded"),
    (dict(metric="p@3"), "swap delta"),
    (dict(positions=[1, 0, 2]), "1-based"),
    (dict(positions=[1.5, 2]), "whole numbers"),
    (dict(positions=[[1, 2]]), "one-dimensional"),
])
def test_bad_configuration_raises(kwargs, message):
    with pytest.raises(ValueError, match=message):
        UnbiasedLambdaObjective(**kwargs)


def test_positions_are_checked_against_the_rows():
    obj = UnbiasedLambdaObjective()
    with pytest.raises(ValueError, match="no positions"):
        obj.gradients([0.0, 1.0], [1, 0], [0, 2])
    obj.set_positions([1, 2, 3])
    with pytest.raises(ValueError, match="3 entries but the data has 2 rows"):
        obj.gradients([0.0, 1.0], [1, 0], [0, 2])
    with pytest.raises(ValueError, match="non-negative"):
        UnbiasedLambdaObjective(positions=[1, 2]).gradients([0.0, 1.0], [-1, 0], [0, 2])


@pytest.mark.parametrize("kwargs,message", [
    (dict(labels=[0, -1]), "non-negative"),
    (dict(scores=[0.1]), "one entry per row"),
    (dict(group_ptr=None), "exactly one of qid"),
    (dict(qid=[0, 0]), "exactly one of qid"),
    (dict(eta=-1.0), "eta"),
    (dict(propensity=[1.0, 1.5]), r"\[0, 1\]"),
    (dict(propensity=[1.0]), "positions"),
    (dict(click_noise=(0.5, 0.1)), "eps_minus <= eps_plus"),
    (dict(click_noise=0.1), "pair"),
    (dict(click_noise={0: 0.1}), "label"),
    (dict(max_label=0), "max_label"),
    (dict(sessions=0), "sessions"),
    (dict(max_position=-2), "max_position"),
    (dict(random_state=-1), "random_state"),
    (dict(scores=[0.0, np.nan]), "NaN"),
])
def test_simulator_bad_inputs_raise(kwargs, message):
    args = dict(labels=[0, 1], scores=[0.3, 0.2], group_ptr=[0, 2])
    args.update(kwargs)
    with pytest.raises(ValueError, match=message):
        simulate_clicks(args.pop("labels"), args.pop("scores"), **args)


def test_session_lists_needs_a_click_log():
    with pytest.raises(TypeError, match="ClickLog"):
        session_lists((np.zeros(2), np.ones(2)))


def test_experiment_script_on_one_fold(dataset_path, repo_module, tmp_path):
    """scripts/unbiased_experiment.py end to end on MQ2008 fold 1, few rounds, two click logs:
    the early-stopped estimates are contenders, one is chosen on the validation queries, and
    the saved tests carry Holm-adjusted p-values (never below the raw ones)."""
    pytest.importorskip("lightgbm")
    pytest.importorskip("statsmodels")
    dataset_path("mq2008")
    script = repo_module("scripts/unbiased_experiment.py")
    out = tmp_path / "unbiased.json"
    assert script.main(["--folds", "1", "--threads", "1", "--rounds", "6", "--click-seeds", "0", "1",
                        "--update-rounds", "1", "3", "--save", str(out), "--figure", str(tmp_path / "t.png")]) == 0
    saved = json.loads(out.read_text())
    assert [r["click_seed"] for r in saved["folds"]] == [0, 1]
    for record in saved["folds"]:
        assert record["chosen_on_validation"] in ("unbiased_p0_r1", "unbiased_p0_r3")
        assert set(record["validation_ndcg@10"]) == {"unbiased_p0_r1", "unbiased_p0_r3"}
        for n in (1, 3):  # n updates of 6 rounds, and the last one is the estimate used
            learned = record["propensities"][f"unbiased_p0_r{n}"]
            assert len(learned["plus_history"]) == n + 1
            assert learned["plus_history"][-1] == learned["plus"][:10]
        assert len(record["propensities"]["unbiased_p0"]["plus_history"]) == 7
    names = {t["b"] for t in saved["paired_t_tests"]}
    assert {"unbiased_p0", "ipw_true_theta", "unbiased_p0_r1", "unbiased_p0_r3", "unbiased_p0_vali"} <= names
    assert all(t["p_value"] <= t["p_holm"] <= 1 for t in saved["paired_t_tests"])
    assert (tmp_path / "t.png").stat().st_size > 0
    script.main(["--figure-from", str(out), "--figure", str(tmp_path / "again.png")])
    assert (tmp_path / "again.png").stat().st_size > 0
