"""The torch losses: gradients, padding, the LambdaRank gradient, the smoothed metrics
against the exact ones, and the sampling losses' semantics (the swap deltas themselves:
test_swap_deltas.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import gbrank.metrics as _record

torch = pytest.importorskip("torch")

from gbrank import evaluate  # noqa: E402
from gbrank.lambdas import swap_deltas  # noqa: E402
from gbrank.torch import (LOSSES, bpr_loss, harmonic, kos_loss, lambda_loss,  # noqa: E402
                          listwise_ap_loss, listwise_ndcg_loss, listwise_nrbp_loss, listwise_rr_loss,
                          make_loss, smooth_ranks, warp_loss)

F64 = torch.float64
# every loss, the metric-based ones from the record (a family that gains a swap delta is tested here)
ALL_LOSSES = ([f"listwise_{n}" for n in sorted(_record.with_listwise())]
              + [f"lambda_{n}" + ("@0.9" if rec.param == "p" else "") for n, rec in sorted(_record.with_delta().items())]
              + ["kos_warp", "kos_auc", "warp", "bpr"])


def _batch(seed=0, b=4, n=9, graded=False, p_pad=0.25):
    """A padded batch with distinct scores, varied lengths and at least one relevant item per list."""
    g = torch.Generator().manual_seed(seed)
    scores = torch.randn(b, n, generator=g, dtype=F64)
    labels = torch.randint(0, 3 if graded else 2, (b, n), generator=g).to(F64)
    mask = torch.rand(b, n, generator=g) > p_pad
    mask[:, :2] = True
    labels[:, 0] = 1.0
    labels[:, 1] = 0.0
    return scores, labels, mask


def _call(name, scores, labels, mask, seed=7, **options):
    loss = make_loss(name, **options)
    return loss(scores, labels, mask, generator=torch.Generator().manual_seed(seed))


def test_registry_lists_every_loss_and_refuses_unknown_names():
    assert sorted(LOSSES) == sorted(n.split("@")[0] for n in ALL_LOSSES)
    with pytest.raises(ValueError) as err:
        make_loss("listwise_dcg")
    assert ", ".join(n + ("@p" if n == "lambda_nrbp" else "") for n in sorted(LOSSES)) in str(err.value)
    with pytest.raises(ValueError, match="needs a persistence"):
        make_loss("lambda_nrbp")
    with pytest.raises(ValueError, match="independent of p"):
        make_loss("listwise_nrbp@0.9")
    with pytest.raises(ValueError, match="strictly between 0 and 1"):
        make_loss("lambda_nrbp@1.5")
    with pytest.raises(ValueError, match="takes no '@' parameter"):
        make_loss("lambda_ndcg@10")  # the torch LambdaRank has no truncation
    with pytest.raises(ValueError, match="does not take option"):
        make_loss("listwise_ap", sigma=2.0)
    assert make_loss("lambda_nrbp@0.95").metric == "nrbp@0.95"
    assert make_loss("listwise_nrbp").metric == "nrbp@0.95"


def test_metric_losses_come_from_the_metric_record():
    from gbrank.metrics import METRICS, PARADIGMS, with_delta, with_listwise
    from gbrank.torch._bounded import BOUNDED_METRIC
    from gbrank.torch._losses import LAMBDA_SGD_LR, LISTWISE

    # the torch-side tables name only the record's families; a new objective metric gets its
    # lambda loss with the default SGD rate (1.0) without an entry, a listwise loss needs its function
    assert set(LAMBDA_SGD_LR) <= set(with_delta())
    assert sorted(LISTWISE) == sorted(with_listwise())
    metric_based = {n for n in LOSSES if n.partition("_")[0] in PARADIGMS}
    assert metric_based == {f"lambda_{n}" for n in with_delta()} | {f"listwise_{n}" for n in with_listwise()}
    assert BOUNDED_METRIC == {f"listwise_{n}": METRICS[n].listwise for n in with_listwise()}
    for name in metric_based:
        family = LOSSES[name].family
        label_option = "gain" if METRICS[family].graded else "relevance_threshold"
        assert label_option in LOSSES[name].options
        assert LOSSES[name].needs_p == (name.startswith("lambda_") and METRICS[family].param == "p")


@pytest.mark.parametrize("name,canonical,metric,lr", [
    ("lambda_ndcg", "lambda_ndcg", "ndcg", 10.0), ("lambda_ap", "lambda_ap", "ap", 1.0),
    ("lambda_rr", "lambda_rr", "rr", 1.0), (" Lambda_nRBP@0.950 ", "lambda_nrbp@0.95", "nrbp@0.95", 1.0),
    ("listwise_ndcg", "listwise_ndcg", "ndcg", 1000.0), ("listwise_nrbp", "listwise_nrbp", "nrbp@0.95", 0.1),
    ("listwise_nrbp+MinMax", "listwise_nrbp+minmax", "nrbp@0.95", 1000.0),
    ("listwise_ap+distribution", "listwise_ap+distribution", "ap", 1000.0),
    ("bpr", "bpr", "ndcg", 100.0), ("kos_warp", "kos_warp", "ndcg", 10.0),
])
def test_canonical_names_metrics_and_learning_rates(name, canonical, metric, lr):
    loss = make_loss(name)
    assert (loss.name, loss.metric, loss.sgd_learning_rate) == (canonical, metric, lr)


@pytest.mark.parametrize("name", ALL_LOSSES)
def test_gradient_equals_finite_differences(name):
    scores, labels, mask = _batch(seed=1, graded=name.endswith("ndcg"))
    scores.requires_grad_(True)
    options = {"temperature": 0.7} if name.startswith("listwise") else {}
    assert torch.autograd.gradcheck(lambda s: _call(name, s, labels, mask, **options), (scores,),
                                    eps=1e-6, atol=1e-7, rtol=1e-5)


@pytest.mark.parametrize("name", ALL_LOSSES)
def test_padding_changes_nothing(name):
    scores, labels, mask = _batch(seed=2, p_pad=0.0, n=7)
    scores.requires_grad_(True)
    base = _call(name, scores, labels, mask)
    (grad,) = torch.autograd.grad(base.sum(), scores)
    # insert padded entries with garbage scores and labels at random places
    g = torch.Generator().manual_seed(3)
    width = 12
    place = torch.stack([torch.sort(torch.randperm(width, generator=g)[:7]).values for _ in range(len(scores))])
    big_s = torch.full((len(scores), width), float("nan"), dtype=F64).scatter(1, place, scores.detach())
    big_l = torch.randint(0, 3, (len(scores), width), generator=g).to(F64).scatter(1, place, labels)
    big_m = torch.zeros(len(scores), width, dtype=torch.bool).scatter(1, place, mask)
    big_s.requires_grad_(True)
    padded = _call(name, big_s, big_l, big_m)
    (big_grad,) = torch.autograd.grad(padded.sum(), big_s)
    torch.testing.assert_close(padded, base, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(big_grad.gather(1, place), grad, rtol=1e-12, atol=1e-12)
    assert torch.all(big_grad[~big_m] == 0)


@pytest.mark.parametrize("name", [n for n in ALL_LOSSES if not LOSSES[n.split("@")[0]].sampled])
def test_lists_do_not_leak_into_each_other(name):
    scores, labels, mask = _batch(seed=4, b=5)
    batch = _call(name, scores, labels, mask)
    for i in range(len(scores)):
        m = mask[i]
        alone = _call(name, scores[i, m][None], labels[i, m][None], None)
        torch.testing.assert_close(batch[i:i + 1], alone, rtol=1e-12, atol=1e-12)


# ---- lambda weights ------------------------------------------------------------------

# The swap deltas themselves (numba, torch on the CPU and on CUDA) are checked against one
# brute-force oracle in test_swap_deltas.py.


@pytest.mark.parametrize("metric,p", [("ndcg", None), ("ap", None), ("rr", None), ("nrbp", 0.9)])
def test_lambda_gradient_is_lambdarank(metric, p):
    """dL/ds_i = sum over pairs of -sigma |dM_ij| rho_ij (REFERENCE.md section 2)."""
    sigma = 1.5
    rng = np.random.default_rng(6)
    for _ in range(20):
        n = int(rng.integers(2, 12))
        s = rng.normal(size=n)
        y = rng.integers(0, 3, n).astype(float)
        t = torch.tensor(s, dtype=F64, requires_grad=True)
        loss = lambda_loss(t[None], torch.tensor(y, dtype=F64)[None], metric=metric, p=p, sigma=sigma)
        (grad,) = torch.autograd.grad(loss.sum(), t)
        dm = swap_deltas(metric, s, y, p=p)
        g = np.zeros(n)
        for i in range(n):
            for j in range(n):
                if y[i] > y[j]:
                    rho = 1.0 / (1.0 + math.exp(sigma * (s[i] - s[j])))
                    lam = -sigma * dm[i, j] * rho
                    g[i] += lam
                    g[j] -= lam
        np.testing.assert_allclose(grad.numpy(), g, rtol=1e-10, atol=1e-13)


def test_lambda_loss_value_and_refusals():
    s, y = torch.tensor([[0.0, 2.0]], dtype=F64), torch.tensor([[1.0, 0.0]], dtype=F64)
    # one pair, relevant item at rank 2: |dRR| = 1/2, loss = 1/2 * log(1 + e^2)
    assert lambda_loss(s, y, metric="rr").item() == pytest.approx(0.5 * math.log1p(math.exp(2.0)))
    with pytest.raises(ValueError, match="persistence"):
        lambda_loss(s, y, metric="nrbp")
    with pytest.raises(ValueError, match=r"only \[.nrbp.\] take a persistence"):
        lambda_loss(s, y, metric="ap", p=0.5)
    with pytest.raises(ValueError, match="unknown lambda metric"):
        lambda_loss(s, y, metric="dcg")


# ---- smoothed listwise metrics -------------------------------------------------------

def test_smooth_ranks_tend_to_exact_ranks():
    s = torch.tensor([[0.3, 2.0, -1.0, 0.9]], dtype=F64)
    torch.testing.assert_close(smooth_ranks(s, temperature=1e-4), torch.tensor([[3.0, 1.0, 4.0, 2.0]], dtype=F64))
    # T = 1 keeps R~ = 1 + sum_{j != i} sigmoid(s_j - s_i)
    r = smooth_ranks(s)
    expect = 1 + torch.sigmoid(s[0][None, :] - s[0][:, None]).sum(dim=1) - 0.5
    torch.testing.assert_close(r[0], expect)


@pytest.mark.parametrize("seed", range(5))
def test_smoothed_metrics_approach_the_exact_ones(seed):
    rng = np.random.default_rng(seed)
    b, n = 6, 15
    scores = np.stack([rng.permutation(n) * 0.3 for _ in range(b)])  # distinct, 0.3 apart
    labels = rng.integers(0, 3, size=(b, n)).astype(float)
    labels[:, 0] = 2.0
    binary = (labels >= 1).astype(float)
    qid = np.repeat(np.arange(b), n)
    exact = evaluate(labels.ravel(), scores.ravel(), qid, ["ndcg", "ap", "rr", "auc"], ties="stable").per_query
    s, y = torch.tensor(scores), torch.tensor(labels)
    errors = {}
    for t in (1.0, 0.1, 1e-4):
        errors[t] = np.abs(-listwise_ndcg_loss(s, y, temperature=t).numpy() - exact["ndcg"].to_numpy()).max()
        ap = -listwise_ap_loss(s, y, temperature=t).numpy()
        rr = -listwise_rr_loss(s, y, temperature=t).numpy()
        if t == 1e-4:
            np.testing.assert_allclose(ap, exact["ap"], atol=1e-6)
            np.testing.assert_allclose(rr, exact["rr"], atol=1e-6)
            # Eq 19 is the number of mis-ordered (relevant, non-relevant) pairs: R(n - R)(1 - AUC)
            r_count = binary.sum(axis=1)
            misordered = r_count * (n - r_count) * (1 - exact["auc"].to_numpy())
            np.testing.assert_allclose(listwise_nrbp_loss(s, y, temperature=t).numpy(), misordered, atol=1e-6)
    assert errors[1e-4] < 1e-6 and errors[1e-4] < errors[0.1] < errors[1.0]


def test_nrbp_loss_is_eq_19():
    scores, labels, mask = _batch(seed=10, b=5, n=11)
    for t in (1.0, 0.3):
        r = smooth_ranks(scores, mask, temperature=t)
        rel = (labels >= 1) & mask
        n_rel = rel.sum(dim=1).to(F64)
        eq19 = torch.where(rel, r - 1.0, 0.0).sum(dim=1) - n_rel * (n_rel - 1) / 2
        torch.testing.assert_close(listwise_nrbp_loss(scores, labels, mask, temperature=t), eq19)


def test_nrbp_loss_range_and_normalisation():
    y = torch.tensor([[1.0, 1.0, 0.0, 0.0, 0.0]], dtype=F64)
    best = torch.tensor([[5.0, 4.0, 3.0, 2.0, 1.0]], dtype=F64)
    worst = torch.flip(best, dims=[1])
    t = 1e-6
    assert listwise_nrbp_loss(best, y, temperature=t).item() == pytest.approx(0.0, abs=1e-9)
    assert listwise_nrbp_loss(worst, y, temperature=t).item() == pytest.approx(2 * 3)
    assert listwise_nrbp_loss(worst, y, temperature=t, normalize=True).item() == pytest.approx(1.0)
    tied = torch.zeros_like(best)
    assert listwise_nrbp_loss(tied, y).item() == pytest.approx(2 * 3 / 2)  # R(n-R)/2, mean of a random order


def test_lists_without_relevant_items_cost_nothing():
    s = torch.randn(2, 5, dtype=F64, requires_grad=True)
    y = torch.zeros(2, 5, dtype=F64)
    for name in ALL_LOSSES:
        out = _call(name, s, y, None)
        assert torch.all(out == 0), name
        (g,) = torch.autograd.grad(out.sum(), s, allow_unused=True)
        assert g is None or torch.all(g == 0), name


# ---- sampling losses -----------------------------------------------------------------

def test_bpr_is_the_mean_pairwise_log_sigmoid():
    s = torch.tensor([[2.0, -1.0, 0.5, 0.0]], dtype=F64)
    y = torch.tensor([[1.0, 0.0, 1.0, 0.0]], dtype=F64)
    pairs = [(0, 1), (0, 3), (2, 1), (2, 3)]
    expect = np.mean([-math.log(1 / (1 + math.exp(-(s[0, i] - s[0, j]).item()))) for i, j in pairs])
    assert bpr_loss(s, y).item() == pytest.approx(expect)


def test_warp_weight_is_phi_of_the_rank_estimate():
    # every negative violates the margin: the first draw stops, N = 1, weight Phi(n_neg)
    s = torch.tensor([[0.0, 5.0, 6.0, 7.0]], dtype=F64)
    y = torch.tensor([[1.0, 0.0, 0.0, 0.0]], dtype=F64)
    out = warp_loss(s, y, generator=torch.Generator().manual_seed(0))
    hinges = [1 + 5.0, 1 + 6.0, 1 + 7.0]
    assert out.item() in [pytest.approx(harmonic(torch.tensor(3.0)).item() * h) for h in hinges]
    assert harmonic(torch.tensor(3.0)).item() == pytest.approx(1 + 1 / 2 + 1 / 3)
    # no negative within the margin: no step
    far = torch.tensor([[10.0, 0.0, 1.0, 2.0]], dtype=F64)
    assert warp_loss(far, y, generator=torch.Generator().manual_seed(0)).item() == 0.0


def test_warp_rank_estimate_uses_the_first_violator():
    """One violator among many negatives: E[weight] over draws matches the sequential algorithm."""
    n_neg = 20
    s = torch.zeros(1, n_neg + 1, dtype=F64)
    s[0, 0] = 10.0
    s[0, 1] = 10.0  # the only violating negative
    y = torch.zeros_like(s)
    y[0, 0] = 1.0
    g = torch.Generator().manual_seed(1)
    values = torch.stack([warp_loss(s, y, generator=g) for _ in range(3000)]).numpy().ravel()
    # N ~ Geometric(1/20), capped at n_neg draws; weight Phi(floor(20 / N)); hinge 1
    p = 1 / n_neg
    expect = sum(p * (1 - p) ** (k - 1) * harmonic(torch.tensor(float(n_neg // k))).item() for k in range(1, n_neg + 1))
    assert values.mean() == pytest.approx(expect, rel=0.05)


def test_warp_violator_is_uniform_among_violators_and_trials_are_capped():
    # the positive scores 5: 2 of 20 negatives violate (hinges 1 + 10 - 5 = 6 and 1 + 12 - 5 = 8)
    s = torch.zeros(1, 21, dtype=F64)
    s[0, 0], s[0, 1], s[0, 2] = 5.0, 10.0, 12.0
    y = torch.zeros_like(s)
    y[0, 0] = 1.0
    g = torch.Generator().manual_seed(2)
    picked = []
    for _ in range(3000):
        t = s.clone().requires_grad_(True)
        (grad,) = torch.autograd.grad(warp_loss(t, y, generator=g).sum(), t)
        picked.extend(np.flatnonzero(grad[0, 1:].numpy()) + 1)  # nothing when 20 draws found none
    assert set(picked) == {1, 2} and abs(np.mean(np.array(picked) == 1) - 0.5) < 0.05
    assert abs(len(picked) / 3000 - (1 - 0.9 ** 20)) < 0.03
    # one trial only: a step happens with probability 2/20
    capped = np.array([warp_loss(s, y, max_trials=1, generator=g).item() for _ in range(4000)])
    assert abs(np.mean(capped > 0) - 0.1) < 0.02
    assert set(np.round(capped[capped > 0] / harmonic(torch.tensor(20.0, dtype=F64)).item(), 9)) == {6.0, 8.0}


@pytest.mark.parametrize("k,expect_index", [(1, 2), (5, 0), (3, 1)])
def test_kos_picks_the_kth_positive_by_score(k, expect_index):
    # five positives (scores 0.1, 0.3, 0.9, 0.5, 0.2 -> by score: items 2, 3, 1, 4, 0) and one negative
    s = torch.tensor([[0.1, 0.3, 0.9, 0.5, 0.2, 5.0]], dtype=F64, requires_grad=True)
    y = torch.tensor([[1.0, 1.0, 1.0, 1.0, 1.0, 0.0]], dtype=F64)
    for step in ("warp", "auc"):
        out = kos_loss(s, y, step=step, k=k, n_draws=1, generator=torch.Generator().manual_seed(0))
        (g,) = torch.autograd.grad(out.sum(), s)
        nonzero = np.flatnonzero(g[0, :5].numpy()).tolist()
        assert nonzero == [expect_index], (step, g)
        assert g[0, 5] > 0


def test_kos_position_distribution_and_few_positives():
    s = torch.tensor([[0.1, 0.3, 0.9, 5.0, 6.0]], dtype=F64, requires_grad=True)
    y = torch.tensor([[1.0, 1.0, 1.0, 0.0, 0.0]], dtype=F64)
    # K = 5 > R = 3: k = 5 maps to the lowest-scored positive
    out = kos_loss(s, y, k=5, n_draws=4, generator=torch.Generator().manual_seed(0))
    (g,) = torch.autograd.grad(out.sum(), s)
    assert np.flatnonzero(g[0, :3].numpy()).tolist() == [0]
    # P concentrated on position 1: the top positive only
    out = kos_loss(s, y, position_weights=[1, 0, 0, 0, 0], n_draws=4, generator=torch.Generator().manual_seed(0))
    (g,) = torch.autograd.grad(out.sum(), s)
    assert np.flatnonzero(g[0, :3].numpy()).tolist() == [2]
    with pytest.raises(ValueError, match="position_weights"):
        kos_loss(s, y, position_weights=[1, 0])
    with pytest.raises(ValueError, match="k must lie"):
        kos_loss(s, y, k=6)


def test_kos_draws_distinct_positives_uniformly():
    from gbrank.torch._sampled import _distinct_draws

    idx, valid = _distinct_draws(torch.tensor([6, 2]), 6000, 3, torch.Generator().manual_seed(0))
    rows = idx[0].tolist()
    assert all(len(set(r)) == 3 for r in rows)
    counts = np.bincount(np.asarray(rows).ravel(), minlength=6)
    assert counts.min() > 0.9 * 3000 and counts.max() < 1.1 * 3000
    assert valid[1, 0].tolist() == [True, True, False]
    assert sorted(idx[1, 0, :2].tolist()) == [0, 1]


def test_sampled_losses_are_reproducible_with_a_generator():
    scores, labels, mask = _batch(seed=8)
    for name in ("kos_warp", "kos_auc", "warp"):
        a = _call(name, scores, labels, mask, seed=3)
        b = _call(name, scores, labels, mask, seed=3)
        torch.testing.assert_close(a, b, rtol=0, atol=0)


# ---- devices -------------------------------------------------------------------------

@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("name", ALL_LOSSES)
def test_cpu_and_gpu_agree(name):
    scores, labels, mask = _batch(seed=9, b=8, n=40)
    cpu_s = scores.clone().requires_grad_(True)
    gpu_s = scores.cuda().requires_grad_(True)
    cpu = _call(name, cpu_s, labels, mask)
    gpu = _call(name, gpu_s, labels.cuda(), mask.cuda())
    (gc,) = torch.autograd.grad(cpu.sum(), cpu_s)
    (gg,) = torch.autograd.grad(gpu.sum(), gpu_s)
    torch.testing.assert_close(gpu.cpu(), cpu, rtol=1e-9, atol=1e-12)
    torch.testing.assert_close(gg.cpu(), gc, rtol=1e-9, atol=1e-12)
