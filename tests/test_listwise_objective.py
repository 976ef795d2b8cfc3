"""ListwiseObjective: gradients equal torch autograd of the torch losses (and of plain torch
definitions of the known listwise families), positive hessians, the names through the one
parser, and training through every adapter (LightGBM, LGBMRanker, XGBoost, GBRanker, bench)."""

from __future__ import annotations

import numpy as np
import pytest

import gbrank
from gbrank.lambdas import ListwiseObjective, is_listwise_name
from gbrank.lambdas._listwise import ideal_order

torch = pytest.importorskip("torch")
from gbrank.torch import make_loss  # noqa: E402

BOUNDINGS = (None, "minmax", "expectation", "expectation_max", "distribution")


@pytest.fixture(autouse=True)
def _float64_torch():
    """torch in float64 in this module's tests only (the reference gradients are compared to
    1e-9); the default dtype is restored after each, for the rest of the suite."""
    before = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(before)


def _lists(seed, max_label=3):
    """Random lists with graded labels and tied scores, plus the edge cases: one item, no
    relevant item, every item relevant (and equally graded), two items."""
    rng = np.random.default_rng(seed)
    sizes = [1, 5, 8, 3, 12, 7, 2, 9, 6]
    ys = []
    for k, n in enumerate(sizes):
        y = rng.integers(0, max_label + 1, n).astype(float)
        if k == 1:
            y[:] = 0
        if k == 2:
            y[:] = 2
        ys.append(y)
    y = np.concatenate(ys)
    ptr = np.concatenate([[0], np.cumsum(sizes)])
    s = np.round(rng.normal(size=len(y)), 1)  # one decimal: many ties
    s[ptr[5]:ptr[6]] = 0.25  # a list whose scores are all tied
    return s, y, ptr


def _padded(s, y, ptr):
    B, L = len(ptr) - 1, int(np.diff(ptr).max())
    S, Y = torch.zeros(B, L), torch.zeros(B, L)
    M = torch.zeros(B, L, dtype=torch.bool)
    for q in range(B):
        a, b = ptr[q], ptr[q + 1]
        S[q, :b - a], Y[q, :b - a], M[q, :b - a] = torch.tensor(s[a:b]), torch.tensor(y[a:b]), True
    return S.requires_grad_(True), Y, M


def _torch_sum(name, bounding, s, y, ptr, **options):
    S, Y, M = _padded(s, y, ptr)
    loss = make_loss(name, bounding, training_defaults=True, **options)(S, Y, M).sum()
    loss.backward()
    g = np.concatenate([S.grad[q, :ptr[q + 1] - ptr[q]].numpy() for q in range(len(ptr) - 1)])
    return float(loss.detach()), g


def _close(g, expected):
    scale = max(np.abs(expected).max(), 1e-300)
    # 1e-8 of the largest; a list whose exact gradient is 0 gets torch's rounding noise (1e-16)
    assert np.abs(g - expected).max() <= max(1e-8 * scale, 1e-14), (np.abs(g - expected).max(), scale)


@pytest.mark.parametrize("metric", ["ndcg", "ap", "rr", "nrbp"])
@pytest.mark.parametrize("bounding", BOUNDINGS)
def test_gradient_is_autograd_of_the_torch_loss(metric, bounding):
    for seed, t in ((0, 1.0), (1, 0.5)):
        s, y, ptr = _lists(seed)
        obj = ListwiseObjective(metric, temperature=t, bounding=bounding)
        g, h = obj.gradients(s, y, ptr)
        value, expected = _torch_sum(f"listwise_{metric}", bounding, s, y, ptr, temperature=t)
        _close(g, expected)
        assert obj.loss(s, y, ptr).sum() == pytest.approx(value, abs=1e-10)
        assert (h > 0).all()


@pytest.mark.parametrize("options", [dict(metric="rr", log=False), dict(metric="nrbp", normalize=True),
                                     dict(metric="ndcg", gain="linear"),
                                     dict(metric="ap", relevance_threshold=2)])
def test_gradient_with_the_options_of_the_torch_loss(options):
    s, y, ptr = _lists(3)
    metric = options.pop("metric")
    g, _ = ListwiseObjective(metric, **options).gradients(s, y, ptr)
    _, expected = _torch_sum(f"listwise_{metric}", None, s, y, ptr, **options)
    _close(g, expected)


@pytest.mark.parametrize("metric", ["ndcg", "ap", "rr"])
def test_gradient_when_the_scores_span_more_than_600_temperatures(metric):
    """Scores that span more than 600 T take the kernel's per-pair exp (exp of one score
    would leave the normal range): the same gradient as autograd there too."""
    s, y, ptr = _lists(4)
    s[ptr[:-1]] += 700.0  # one outlier per list: the others' pairs are in the sigmoids' slope
    g, _ = ListwiseObjective(metric).gradients(s, y, ptr)
    _, expected = _torch_sum(f"listwise_{metric}", None, s, y, ptr)
    _close(g, expected)


@pytest.mark.parametrize("seed", [0, 6])
@pytest.mark.parametrize("t", [1.0, 0.3])
def test_ndcg_hessian_forms_are_their_pair_sums(seed, t):
    """The bound and curvature hessians of listwise_ndcg are their pair sums written out:
    with a = dL/dR~ (autograd through R~ = 1 + sum_{j != i} sigmoid((s_j - s_i) / T)) and
    t_ik = P_ik (1 - P_ik) (a_k - a_i), h_i = sum_k |t_ik| / T^2 and |sum_k (1 - 2 P_ik) t_ik| / T^2."""
    s, y, ptr = _lists(seed, max_label=4)
    bound = ListwiseObjective("ndcg", temperature=t, hessian_floor=0).gradients(s, y, ptr)[1]
    curv = ListwiseObjective("ndcg", temperature=t, hessian="curvature", hessian_floor=0).gradients(s, y, ptr)[1]
    for a, b in zip(ptr[:-1], ptr[1:]):
        ss, yy = torch.tensor(s[a:b]), torch.tensor(y[a:b])
        p = torch.sigmoid((ss[:, None] - ss[None, :]) / t)  # P_ik
        ranks = (1.0 + (1.0 - p).sum(1) - 0.5).detach().requires_grad_(True)  # the j = i term is 1/2
        gain = 2.0**yy - 1.0
        idcg = (torch.sort(gain, descending=True).values / torch.log2(torch.arange(2, b - a + 2.0))).sum()
        if idcg > 0:
            (-(gain / torch.log2(1.0 + ranks)).sum() / idcg).backward()
            da = ranks.grad
        else:
            da = torch.zeros(b - a)
        terms = p * (1.0 - p) * (da[None, :] - da[:, None])
        np.testing.assert_allclose(bound[a:b], terms.abs().sum(1).numpy() / t**2, rtol=1e-10, atol=1e-15)
        np.testing.assert_allclose(curv[a:b], ((1.0 - 2.0 * p) * terms).sum(1).abs().numpy() / t**2, rtol=1e-9,
                                   atol=1e-15)


@pytest.mark.parametrize("name", ["listwise_ndcg", "listwise_ap", "listwise_rr", "listwise_nrbp", "listmle"])
def test_values_do_not_depend_on_the_thread_count(name):
    """Each list is computed alone (ranges of lists on threads): one thread and two give the same bits."""
    numba = pytest.importorskip("numba")
    from gbrank.datasets import make_letor

    _, y, qid = make_letor(n_queries=60, docs_per_query=(5, 40), n_features=2, max_label=4, random_state=1)
    ptr = np.concatenate([[0], np.cumsum(np.unique(qid, return_counts=True)[1])])
    s = np.random.default_rng(2).normal(size=len(y))
    obj = ListwiseObjective(name)
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = obj.gradients(s, y, ptr)
        numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
        two = obj.gradients(s, y, ptr)
    finally:
        numba.set_num_threads(before)
    for u, v in zip(one, two):
        np.testing.assert_array_equal(u, v)


# -- the known listwise families, against plain torch definitions written here ----------------------


def _plain(name, s, y, t):
    n = len(s)
    gain = 2.0**y - 1.0
    disc = 1.0 / torch.log2(torch.arange(2, n + 2.0))
    idcg = (torch.sort(gain, descending=True).values * disc).sum()
    if name == "softmax":  # softmax cross-entropy, labels normalised to a distribution
        return -(y / y.sum() * torch.log_softmax(s / t, 0)).sum() if y.sum() > 0 else 0.0 * s.sum()
    if name == "listnet":  # Cao et al. 2007, top-one probabilities, phi = exp
        return -(torch.softmax(y, 0) * torch.log_softmax(s / t, 0)).sum()
    if name == "listmle":  # Xia et al. 2008: -log Plackett-Luce likelihood of the ideal order
        z = s[torch.as_tensor(ideal_order(s.detach().numpy(), y.numpy()))] / t
        return sum(torch.logsumexp(z[r:], 0) - z[r] for r in range(n))
    if idcg <= 0:
        return 0.0 * s.sum()
    if name == "approx_ndcg":  # Qin, Liu & Li 2010: pi(x) = 1 + sum_{y != x} sigmoid(-alpha (s_x - s_y))
        diff = s[:, None] - s[None, :]
        pi = 1.0 + (torch.sigmoid(-diff / t) * (1 - torch.eye(n))).sum(1)
        return -(gain / torch.log2(1.0 + pi)).sum() / idcg
    # NeuralNDCG (Pobrotyn & Bialobrzeski 2021) with NeuralSort's relaxed permutation, no Sinkhorn
    spread = (s[:, None] - s[None, :]).abs().sum(1)
    c = n + 1 - 2 * torch.arange(1, n + 1.0)
    perm = torch.softmax((c[:, None] * s[None, :] - spread[None, :]) / t, dim=1)
    return -(disc * (perm @ gain)).sum() / idcg


@pytest.mark.parametrize("name", ["approx_ndcg", "softmax", "listnet", "listmle", "neural_ndcg"])
def test_known_family_is_autograd_of_its_plain_definition(name):
    rng = np.random.default_rng(7)
    for t in (1.0, 0.3):
        for n in (1, 2, 5, 9, 14):
            for kind in range(3):
                y = rng.integers(0, 4, n).astype(float)
                if kind == 1:
                    y[:] = 0
                s = np.round(rng.normal(size=n), 1)
                obj = ListwiseObjective(name, temperature=t)
                g, h = obj.gradients(s, y, [0, n])
                st = torch.tensor(s, requires_grad=True)
                loss = _plain(name, st, torch.tensor(y), t)
                loss.backward()
                _close(g, st.grad.numpy())
                assert obj.loss(s, y, [0, n])[0] == pytest.approx(float(loss.detach()), abs=1e-10)
                assert (h > 0).all()


def test_softmax_matches_catboost_query_softmax():
    """CatBoost's QuerySoftMax is sum over lists of -sum_i l_i ln softmax(s)_i, divided by the sum of
    all labels: gbrank's per-list loss times the list's label sum, over the total."""
    utils = pytest.importorskip("catboost.utils")
    rng = np.random.default_rng(3)
    sizes = [4, 6, 3, 7]
    ptr = np.concatenate([[0], np.cumsum(sizes)])
    y = rng.integers(0, 3, ptr[-1]).astype(float)
    y[0] = 1.0
    s = rng.normal(size=ptr[-1])
    ours = ListwiseObjective("softmax").loss(s, y, ptr)
    sums = np.add.reduceat(y, ptr[:-1])
    expected = utils.eval_metric(y, s, "QuerySoftMax", group_id=np.repeat(np.arange(len(sizes)), sizes))[0]
    assert (ours * sums).sum() / y.sum() == pytest.approx(expected, rel=1e-9)


# -- hessians, names, errors ------------------------------------------------------------------------


@pytest.mark.parametrize("hessian", ["bound", "constant", "curvature"])
def test_hessian_choices_are_positive_and_constant_is_constant_per_list(hessian):
    s, y, ptr = _lists(5)
    g0, _ = ListwiseObjective("ndcg").gradients(s, y, ptr)
    g, h = ListwiseObjective("ndcg", hessian=hessian).gradients(s, y, ptr)
    np.testing.assert_array_equal(g, g0)
    assert (h > 0).all()
    if hessian == "constant":
        for a, b in zip(ptr[:-1], ptr[1:]):
            assert np.ptp(h[a:b]) == 0.0


def test_names_go_through_the_one_parser():
    obj = ListwiseObjective("listwise_nrbp@0.9+minmax")
    assert (obj.metric, obj.p, obj.bounding, obj.name) == ("nrbp", 0.9, "minmax", "listwise_nrbp@0.9+minmax")
    assert ListwiseObjective("AP", bounding="expectation").name == "listwise_ap+expectation"
    assert ListwiseObjective("listnet").name == "listnet"
    assert is_listwise_name("listwise_rr") and is_listwise_name("listmle") and not is_listwise_name("ndcg")
    with pytest.raises(ValueError, match="known listwise objectives"):
        ListwiseObjective("listwise_err")
    with pytest.raises(ValueError, match="takes no bounding"):
        ListwiseObjective("listmle+minmax")
    with pytest.raises(ValueError, match="differs"):
        ListwiseObjective("ap+minmax", bounding="expectation")
    with pytest.raises(ValueError, match="hessian"):
        ListwiseObjective("ndcg", hessian="exact")
    with pytest.raises(ValueError, match="temperature"):
        ListwiseObjective("ndcg", temperature=0)
    with pytest.raises(ValueError, match="log=True"):
        ListwiseObjective("rr", bounding="minmax", log=True)
    with pytest.raises(ValueError, match="NaN or infinite"):
        ListwiseObjective("ndcg").gradients([0.0, np.nan], [1, 0], [0, 2])


def test_top_level_export_and_pickle():
    import pickle

    assert gbrank.ListwiseObjective is ListwiseObjective
    obj = ListwiseObjective("listwise_ap+distribution", temperature=0.5)
    s, y, ptr = _lists(2)
    g, _ = obj.gradients(s, y, ptr)
    clone = pickle.loads(pickle.dumps(obj))
    assert clone == obj
    np.testing.assert_array_equal(clone.gradients(s, y, ptr)[0], g)


# -- the boosting libraries ------------------------------------------------------------------------


def _data():
    from gbrank.datasets import make_letor

    return make_letor(n_queries=40, docs_per_query=(5, 15), random_state=0)


def test_lightgbm_train_lgbmranker_and_xgboost_train():
    lgb = pytest.importorskip("lightgbm")
    xgb = pytest.importorskip("xgboost")
    X, y, qid = _data()
    sizes = np.unique(qid, return_counts=True)[1]
    obj = ListwiseObjective("listwise_ndcg")
    booster = lgb.train({"objective": obj, "verbosity": -1, "min_sum_hessian_in_leaf": 1e-3},
                        lgb.Dataset(X, y, group=sizes), num_boost_round=5)
    ranker = lgb.LGBMRanker(objective=obj, n_estimators=5, min_child_weight=1e-3, verbose=-1).fit(X, y, group=sizes)
    np.testing.assert_allclose(ranker.predict(X), booster.predict(X), rtol=1e-9, atol=1e-12)
    d = xgb.DMatrix(X, label=y)
    d.set_group(sizes)
    xb = xgb.train({"min_child_weight": 1e-3, "base_score": 0.0}, d, num_boost_round=5, obj=obj)
    assert np.std(xb.predict(d)) > 0


@pytest.mark.parametrize("backend", ["lightgbm", "xgboost"])
@pytest.mark.parametrize("objective", ["listwise_nrbp@0.9+minmax", "listwise_ap", "listmle", "softmax"])
def test_gbranker_takes_the_names(objective, backend):
    pytest.importorskip(backend)
    from gbrank.estimators import GBRanker

    X, y, qid = _data()
    model = GBRanker(objective, backend=backend, n_estimators=20).fit(X, y, qid=qid)
    assert isinstance(model.objective_, ListwiseObjective)
    assert model.score(X, y, qid=qid) > 0.6


def test_bench_listwise_group():
    from gbrank.bench.letor._plan import GROUPS, REGISTRY, select_contenders

    names = [c.name for c in select_contenders(["listwise"], baseline="lightgbm:lambdarank")]
    assert "gbrank:listwise_ndcg" in names and "gbrank:listmle" in names and "gbrank:neural_ndcg" in names
    assert not any(GROUPS["gbrank"](REGISTRY[n]) or GROUPS["default"](REGISTRY[n]) for n in names
                   if n.startswith("gbrank:"))
    assert "ListwiseObjective" in REGISTRY["gbrank:listwise_rr"].describe()
