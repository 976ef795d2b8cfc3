"""The sampled-metric correction family (gbrank/bench/mf/_correction.py): the bias-variance
tables against brute-force minimisation of their definition over enumerated samples, the
gamma limits, the rank mapping against its definition, the unbiased end in a simulation,
and the study's numbers against a hand-computed example."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from gbrank.bench.mf._correction import (bias_variance_table, corrected_metrics, correction_study, estimated_metrics,
                                        hypergeometric_matrix, rank_mapped_metrics)

METRICS = ["ndcg", "ndcg@1", "ndcg@5", "ap", "rr", "nrbp@0.8", "auc"]


def _enumerated_pk(N, m):
    """P(k | K) by enumerating every m-subset of the N negatives (the first K are above)."""
    A = np.zeros((N + 1, m + 1))
    subsets = list(itertools.combinations(range(N), m))
    for K in range(N + 1):
        for s in subsets:
            A[K, sum(1 for i in s if i < K)] += 1
    return A / len(subsets)


def _loss(x, A, f, gamma):
    """The definition: sum_K p(K) [bias(K)^2 + gamma Var(K)], p uniform on 0..N."""
    mean = A @ x
    var = A @ x ** 2 - mean ** 2
    return float(np.mean((mean - f) ** 2 + gamma * var))


@pytest.mark.parametrize("N,m", [(4, 1), (5, 2), (7, 3), (8, 8)])
def test_hypergeometric_matrix_by_enumeration(N, m):
    np.testing.assert_allclose(hypergeometric_matrix(N, m), _enumerated_pk(N, m), atol=1e-12)


@pytest.mark.parametrize("gamma", [0.0, 0.01, 0.3, 0.7, 1.0])
@pytest.mark.parametrize("N,m", [(5, 2), (7, 3), (9, 4)])
def test_table_minimises_its_definition(gamma, N, m):
    """Against a brute-force minimisation of L_gamma over x (scipy), for several terms f."""
    from scipy.optimize import minimize

    A = _enumerated_pk(N, m)
    K = np.arange(N + 1)
    for f in (1 / np.log2(2 + K), 1 / (1 + K), K.astype(float), 0.8 ** K, (K == 0).astype(float)):
        x = bias_variance_table(N, m, f, gamma)
        best = minimize(lambda z: _loss(z, A, f, gamma), np.zeros(m + 1), method="BFGS",
                        options={"gtol": 1e-12, "maxiter": 10_000})
        assert _loss(x, A, f, gamma) <= best.fun + 1e-10
        if gamma > 0:  # strictly convex: the minimiser is unique
            np.testing.assert_allclose(x, best.x, atol=1e-4)


def test_gamma_one_is_the_posterior_mean_and_the_kernel():
    """gamma = 1: the table is E[f(K) | k] under the uniform prior (enumerated), and the
    lstsq path just below 1 meets corrected_metrics' numba kernel (today's default)."""
    N, m = 7, 3
    A = _enumerated_pk(N, m)
    f = 1 / (1 + np.arange(N + 1))
    post = (A * f[:, None]).sum(axis=0) / A.sum(axis=0)
    np.testing.assert_allclose(bias_variance_table(N, m, f, 1.0), post, rtol=1e-12)
    rng = np.random.default_rng(0)
    n = 60
    users = np.repeat(np.arange(20), 3)
    Nu = rng.integers(30, 60, 20)
    mu = rng.integers(1, 12, 20)
    k = rng.integers(0, mu[users] + 1)
    one = corrected_metrics(users, k, Nu, mu, METRICS)
    near = corrected_metrics(users, k, Nu, mu, METRICS, gamma=1 - 1e-9)
    default = corrected_metrics(users, k, Nu, mu, METRICS, gamma=1)
    for name in METRICS:
        assert np.array_equal(one[name], default[name])  # the default path, bit for bit
        np.testing.assert_allclose(near[name], one[name], atol=1e-6, err_msg=name)
    assert n == len(users)


def test_gamma_zero_is_unbiased_for_linear_terms():
    """gamma = 0 makes E[x_k | K] = f(K) for every K when f is linear in K (AUC's term)."""
    N, m = 12, 4
    A = _enumerated_pk(N, m)
    f = np.arange(N + 1, dtype=float)
    x = bias_variance_table(N, m, f, 0.0)
    np.testing.assert_allclose(A @ x, f, atol=1e-9)
    # and its squared bias is the least any table has, below that of gamma = 1
    g = 1 / np.log2(2 + np.arange(N + 1))
    b0 = _loss(bias_variance_table(N, m, g, 0.0), A, g, 0.0)
    b1 = _loss(bias_variance_table(N, m, g, 1.0), A, g, 0.0)
    assert b0 < b1


def test_without_sampling_every_gamma_is_exact():
    rng = np.random.default_rng(1)
    users = np.repeat(np.arange(10), 2)
    N = rng.integers(5, 20, 10)
    k = rng.integers(0, N[users] + 1)
    exact = corrected_metrics(users, k, N, N, METRICS)
    for gamma in (0.0, 0.5):
        est = corrected_metrics(users, k, N, N, METRICS, gamma=gamma)
        for name in METRICS:
            np.testing.assert_allclose(est[name], exact[name], atol=1e-9, err_msg=name)
    mapped = rank_mapped_metrics(users, k, N, N, METRICS)
    for name in METRICS:
        np.testing.assert_allclose(mapped[name], exact[name], atol=1e-12, err_msg=name)


def test_rank_mapping_against_its_definition():
    """One relevant item of sampled rank r = k + 1 among m + 1: the metric at the full rank
    1 + (n - 1)(r - 1)/m, n = N + 1; and its AUC is unbiased (enumerated expectation)."""
    N, m = 40, 5
    for k in range(m + 1):
        rank = 1 + N * k / m
        est = rank_mapped_metrics(np.array([0]), np.array([k]), np.array([N]), np.array([m]), METRICS)
        want = {"ndcg": 1 / math.log2(1 + rank), "ndcg@1": float(rank <= 1), "ndcg@5": float(rank <= 5)
                / math.log2(1 + rank), "ap": 1 / rank, "rr": 1 / rank, "nrbp@0.8": 0.2 * 0.8 ** (rank - 1) / 0.2,
                "auc": 1 - (rank - 1) / N}
        for name in METRICS:
            assert est[name][0] == pytest.approx(want[name], rel=1e-12), (k, name)
    Ns, ms = 9, 3
    A = _enumerated_pk(Ns, ms)
    for K in range(Ns + 1):
        auc = [rank_mapped_metrics(np.array([0]), np.array([k]), np.array([Ns]), np.array([ms]), ["auc"])["auc"][0]
               for k in range(ms + 1)]
        assert A[K] @ np.array(auc) == pytest.approx(1 - K / Ns, abs=1e-12)


def test_sampled_variant_is_the_metric_of_the_sampled_list():
    k, m = np.array([2]), np.array([4])
    est = estimated_metrics("sampled", np.array([0]), k, np.array([100]), m, ["rr", "auc"])
    assert est["rr"][0] == pytest.approx(1 / 3) and est["auc"][0] == pytest.approx(1 - 2 / 4)


def test_unbiased_end_in_a_simulation():
    """Known full ranks from a top-heavy system: the mean estimate of bv@0 lands on the
    true mean (the bias is within noise), while the sampled metric and bv@1 are off."""
    rng = np.random.default_rng(3)
    N, m, n = 200, 10, 40_000
    K = np.minimum(rng.geometric(0.05, n) - 1, N)  # a good system: most relevant items near the top
    k = rng.hypergeometric(K, N - K, m)
    users = np.arange(n)
    full = corrected_metrics(users, K, np.full(n, N), np.full(n, N), ["ap", "ndcg", "auc"])
    for name in ("ap", "ndcg", "auc"):
        truth = full[name].mean()
        est = {v: estimated_metrics(v, users, k, np.full(n, N), np.full(n, m), [name])[name]
               for v in ("bv@0", "bv@1", "sampled")}
        se = est["bv@0"].std() / math.sqrt(n)
        bias0 = est["bv@0"].mean() - truth
        assert abs(bias0) < max(4 * se, 0.01), (name, bias0, se)
        if name != "auc":
            assert abs(est["sampled"].mean() - truth) > 10 * abs(bias0) + 0.05
            assert abs(est["bv@1"].mean() - truth) > abs(bias0)


def test_study_against_a_hand_computed_example():
    rows = []
    full = {("A", 1): 0.5, ("A", 2): 0.3, ("B", 1): 0.2, ("B", 2): 0.2, ("C", 1): 0.1, ("C", 2): 0.0}
    plain = {("A", 1): 0.9, ("A", 2): 0.5, ("B", 1): 0.8, ("B", 2): 0.8, ("C", 1): 0.3, ("C", 2): 0.2}
    good = {key: v + 0.1 for key, v in full.items()}
    for variant, values in (("sampled", plain), ("bv@1", good)):
        for (system, user), v in values.items():
            rows.append({"system": system, "user": user, "metric": "ap", "variant": variant, "estimate": v,
                         "full": full[(system, user)]})
    out = correction_study(pd.DataFrame(rows)).set_index("variant")
    # sampled: system means 0.7, 0.8, 0.25 against 0.4, 0.2, 0.05 -> differences 0.3, 0.6, 0.2
    s = out.loc["sampled"]
    assert s["bias"] == pytest.approx((0.3 + 0.6 + 0.2) / 3)
    assert s["abs_bias"] == pytest.approx((0.3 + 0.6 + 0.2) / 3)
    errs = np.array([0.4, 0.2, 0.6, 0.6, 0.2, 0.2])
    assert s["rmse"] == pytest.approx(math.sqrt(np.mean(errs ** 2)))
    # order by estimate B > A > C, by truth A > B > C: one discordant pair of three -> tau = 1/3
    assert s["kendall_tau"] == pytest.approx(1 / 3)
    g = out.loc["bv@1"]
    assert g["bias"] == pytest.approx(0.1) and g["rmse"] == pytest.approx(0.1) and g["kendall_tau"] == 1.0
    assert s["n_systems"] == 3 and s["n_users"] == 2


def test_bad_inputs_are_refused():
    one = (np.array([0]), np.array([1]), np.array([10]), np.array([3]))
    for bad in (-0.1, 1.5, True, "1"):
        with pytest.raises(ValueError, match="gamma must be a number in"):
            corrected_metrics(*one, ["ap"], gamma=bad)
    with pytest.raises(ValueError, match="unknown variant"):
        estimated_metrics("bv@x", *one, ["ap"])
    with pytest.raises(ValueError, match="unknown variant"):
        estimated_metrics("posterior", *one, ["ap"])
    frame = pd.DataFrame({"system": ["a", "a"], "user": [1, 1], "metric": "ap", "variant": ["sampled", "bv@1"],
                          "estimate": [0.1, 0.2], "full": [0.1, 0.1]})
    with pytest.raises(ValueError, match="lacks column"):
        correction_study(frame.drop(columns="full"))
    with pytest.raises(ValueError, match="cover different"):
        correction_study(pd.concat([frame, frame.iloc[[0]].assign(user=2)]))
    with pytest.raises(ValueError, match="finite numbers"):
        correction_study(frame.assign(estimate=[0.1, np.nan]))
    with pytest.raises(ValueError, match="twice"):
        correction_study(pd.concat([frame, frame]))
    with pytest.raises(ValueError, match="different 'full'"):
        correction_study(frame.assign(full=[0.1, 0.2]))
    with pytest.raises(TypeError, match="pandas DataFrame"):
        correction_study({"system": []})
