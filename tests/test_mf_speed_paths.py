"""The numba SGD engine of BPR and WARP (gbrank/torch/_sampled_sgd.py) against the torch path.

One SGD step on fixed lists and draws equals torch autograd's step through ``bpr_loss`` /
``warp_loss``; whole epochs through ``sgd_epoch`` equal ``_training.train_epoch`` with the
same seeds (lists, batches, WARP's uniforms); the BPR kernel matches a double loop, also
on lists whose score range takes its one-exponential-per-pair branch; a model trained with
the engine learns; the thread count does not change the result.
"""

from __future__ import annotations

import copy
import math
from types import SimpleNamespace

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from gbrank.interactions import csr_from  # noqa: E402
from gbrank.torch._losses import make_loss  # noqa: E402
from gbrank.torch._mf import MatrixFactorization, _MFTask  # noqa: E402
from gbrank.torch._sampled import bpr_loss  # noqa: E402
from gbrank.torch._sampled_sgd import _bpr_drawn_list, _bpr_list, applies, epoch_arrays, harmonic_table, sgd_epoch  # noqa: E402
from gbrank.torch._training import train_epoch  # noqa: E402


def _lists(rng, n_users, n_items, max_len, empty_ok=True):
    """Random CSR lists with labels in {0, 1} (some lists without a positive or a negative)."""
    lengths = rng.integers(0 if empty_ok else 2, max_len + 1, n_users)
    ptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    items = np.concatenate([rng.choice(n_items, k, replace=False) for k in lengths]).astype(np.int64)
    labels = (rng.random(ptr[-1]) < rng.uniform(0.1, 0.9)).astype(np.float64)
    return ptr, items, labels


def _torch_step(U, V, ptr, items, labels, rows, loss, lr, wd, seed):
    """The torch path's step on one batch: padded lists, autograd, torch.optim.SGD."""
    module = MatrixFactorization(U.shape[0], V.shape[0], U.shape[1])
    with torch.no_grad():
        module.user_factors.weight.copy_(torch.from_numpy(U))
        module.item_factors.weight.copy_(torch.from_numpy(V))
    lengths = ptr[rows + 1] - ptr[rows]
    width = int(lengths.max())
    mask = np.arange(width)[None, :] < lengths[:, None]
    index = np.where(mask, ptr[rows][:, None] + np.arange(width)[None, :], 0)
    opt = torch.optim.SGD(module.parameters(), lr=lr, weight_decay=wd)
    scores = module(torch.from_numpy(rows), torch.from_numpy(items[index]))
    per_list = loss(scores, torch.from_numpy(labels[index]).float(), torch.from_numpy(mask),
                    generator=torch.Generator().manual_seed(seed))
    (per_list.sum() / len(rows)).backward()
    opt.step()
    return (module.user_factors.weight.detach().numpy(), module.item_factors.weight.detach().numpy(),
            float(per_list.detach().mean()))


@pytest.mark.parametrize("name,options", [("bpr", {}), ("bpr", {"relevance_threshold": 0.5}), ("bpr", {"pairs": "drawn"}),
                                          ("bpr", {"pairs": "drawn", "relevance_threshold": 0.5}),
                                          ("warp", {}), ("warp", {"margin": 0.3}), ("warp", {"max_trials": 2}),
                                          ("warp", {"margin": 0.0, "max_trials": 1})])
@pytest.mark.parametrize("seed", range(6))
def test_one_step_equals_torch_autograd(name, options, seed):
    rng = np.random.default_rng(seed)
    n_users, n_items, dim = 7, 30, 5
    ptr, items, labels = _lists(rng, n_users, n_items, 12)
    std = [0.1, 1.0, 3.0][seed % 3]
    U = rng.normal(0, std, (n_users, dim)).astype(np.float32)
    V = rng.normal(0, std, (n_items, dim)).astype(np.float32)
    rows = rng.permutation(np.flatnonzero(np.diff(ptr) > 0))[:5]
    lr, wd = [0.5, 2.0][seed % 2], [0.0, 0.1][(seed // 2) % 2]
    loss = make_loss(name, **options)
    U_t, V_t, mean_t = _torch_step(U, V, ptr, items, labels, rows, loss, lr, wd, seed)
    U_n, V_n = U.copy(), V.copy()
    mean_n, n = epoch_arrays(U_n, V_n, ptr, items, labels, [rows], name, learning_rate=lr, weight_decay=wd,
                             generator=torch.Generator().manual_seed(seed), **options)
    assert n == len(rows)
    assert mean_n == pytest.approx(mean_t, rel=1e-5, abs=1e-6)
    np.testing.assert_allclose(U_n, U_t, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(V_n, V_t, rtol=1e-5, atol=1e-5)
    assert not np.allclose(V_n, V) or mean_t == 0.0  # the step moved something


def _bpr_brute(sc, lab, threshold):
    pos = [i for i in range(len(sc)) if lab[i] >= threshold]
    neg = [j for j in range(len(sc)) if lab[j] < threshold]
    g = np.zeros(len(sc))
    if not pos or not neg:
        return 0.0, g
    total, n = 0.0, len(pos) * len(neg)
    for i in pos:
        for j in neg:
            z = sc[j] - sc[i]
            total += max(z, 0.0) + math.log1p(math.exp(-abs(z)))
            r = 1.0 / (1.0 + math.exp(-z)) if z >= 0 else math.exp(z) / (1.0 + math.exp(z))
            g[i] -= r / n
            g[j] += r / n
    return total / n, g


@pytest.mark.parametrize("spread", [0.01, 1.0, 30.0, 200.0, 500.0, 2000.0])
def test_bpr_list_kernel_against_double_loop(spread):
    """Both branches of the kernel (factored exponentials with blocked logs; one exponential
    per pair beyond a score range of 600) against the textbook double loop."""
    rng = np.random.default_rng(int(spread * 10))
    for _ in range(20):
        n = int(rng.integers(1, 40))
        sc = rng.normal(0, spread, n)
        lab = (rng.random(n) < 0.4).astype(np.float64)
        g = np.empty(n)
        value = _bpr_list(sc, lab, 1.0, g, 1.0)
        want, g_want = _bpr_brute(sc, lab, 1.0)
        assert value == pytest.approx(want, rel=1e-9, abs=1e-12)
        np.testing.assert_allclose(g, g_want, rtol=1e-9, atol=1e-15)


def _bpr_drawn_brute(sc, lab, threshold):
    """The drawn pairs by their definition: the j-th non-relevant item with the
    floor(j P / N)-th relevant one, the loss their mean."""
    pos = [i for i in range(len(sc)) if lab[i] >= threshold]
    neg = [j for j in range(len(sc)) if lab[j] < threshold]
    g = np.zeros(len(sc))
    if not pos or not neg:
        return 0.0, g
    total = 0.0
    for k, j in enumerate(neg):
        i = pos[k * len(pos) // len(neg)]
        z = sc[j] - sc[i]
        total += max(z, 0.0) + math.log1p(math.exp(-abs(z)))
        r = 1.0 / (1.0 + math.exp(-z))
        g[i] -= r / len(neg)
        g[j] += r / len(neg)
    return total / len(neg), g


@pytest.mark.parametrize("seed", range(5))
def test_drawn_bpr_pairs_against_their_definition(seed):
    """``bpr_loss(pairs="drawn")`` (torch, padded batches) and the numba list kernel against
    the definition; at P = N it is one pair per positive, and with NSR negatives per positive
    each positive meets exactly NSR of them."""
    rng = np.random.default_rng(seed)
    rows, want = [], []
    for _ in range(12):
        n = int(rng.integers(1, 30))
        sc = rng.normal(0, [0.5, 3.0, 40.0][seed % 3], n)
        lab = (rng.random(n) < rng.uniform(0.1, 0.9)).astype(np.float64)
        g = np.empty(n)
        value = _bpr_drawn_list(sc, lab, 1.0, g, 1.0)
        w_value, w_g = _bpr_drawn_brute(sc, lab, 1.0)
        assert value == pytest.approx(w_value, rel=1e-9, abs=1e-12)
        np.testing.assert_allclose(g, w_g, rtol=1e-9, atol=1e-15)
        rows.append((sc, lab))
        want.append(w_value)
    width = max(len(sc) for sc, _ in rows)
    S = torch.zeros(len(rows), width, dtype=torch.float64)
    Y = torch.zeros(len(rows), width, dtype=torch.float64)
    M = torch.zeros(len(rows), width, dtype=torch.bool)
    for b, (sc, lab) in enumerate(rows):
        S[b, :len(sc)], Y[b, :len(sc)], M[b, :len(sc)] = torch.from_numpy(sc), torch.from_numpy(lab), True
    np.testing.assert_allclose(bpr_loss(S, Y, M, pairs="drawn").numpy(), want, rtol=1e-9, atol=1e-12)
    # positives first, then 3 negatives per positive: positive k meets negatives 3k..3k+2
    lab = np.array([1.0] * 4 + [0.0] * 12)
    counts = np.zeros(4, int)
    for k in range(12):
        counts[k * 4 // 12] += 1
    assert counts.tolist() == [3, 3, 3, 3]
    with pytest.raises(ValueError, match="pairs must be one of"):
        bpr_loss(S, Y, M, pairs="some")
    with pytest.raises(ValueError, match="'drawn' \\(BPR only\\)"):
        epoch_arrays(np.zeros((1, 2), np.float32), np.zeros((2, 2), np.float32), np.array([0, 2]), np.array([0, 1]),
                     np.array([1.0, 0.0]), [np.array([0])], "warp", learning_rate=0.1, pairs="drawn")


def _task(seed, n_users=40, n_items=60, nsr=2, batch_size=8):
    rng = np.random.default_rng(seed)
    u = np.repeat(np.arange(n_users), rng.integers(1, 12, n_users))
    keys = np.unique(u * n_items + rng.integers(0, n_items, len(u)))
    pos = csr_from(keys // n_items, keys % n_items, n_users)
    return _MFTask(pos, pos, n_items, nsr, True, batch_size, np.arange(n_users), None)


@pytest.mark.parametrize("name,wd,max_pairs", [("bpr", 0.0, 1 << 22), ("warp", 0.0, 1 << 22), ("bpr", 0.05, 1 << 22),
                                               ("warp", 0.1, 1 << 22), ("warp", 0.0, 300), ("bpr:drawn", 0.0, 1 << 22),
                                               ("bpr:drawn", 0.05, 1 << 22)])
def test_epochs_equal_train_epoch(name, wd, max_pairs):
    """Two roads: the numba epoch and torch's train_epoch, same seeds, three epochs (WARP's
    draws come from the generator in the torch path's chunk shapes; max_pairs=300 forces chunks)."""
    name, _, pairs = name.partition(":")
    loss = make_loss(name, **({"pairs": pairs} if pairs else {}))
    task_t, task_n = _task(1), _task(1)
    m_t = MatrixFactorization(40, 60, 8)
    m_t.reset_parameters(0.5, torch.Generator().manual_seed(0))
    m_n = copy.deepcopy(m_t)
    opt = torch.optim.SGD(m_t.parameters(), lr=1.0, weight_decay=wd)
    r_t, r_n = np.random.default_rng(5), np.random.default_rng(5)
    g_t, g_n = torch.Generator().manual_seed(3), torch.Generator().manual_seed(3)
    for _ in range(3):
        a, count_a = train_epoch(m_t, task_t, loss, opt, torch.device("cpu"), g_t, r_t, max_pairs)
        b, count_b = sgd_epoch(m_n, task_n, loss, 1.0, wd, g_n, r_n, max_pairs=max_pairs)
        assert count_a == count_b and b == pytest.approx(a, rel=1e-5)
    for w_t, w_n in ((m_t.user_factors.weight, m_n.user_factors.weight),
                     (m_t.item_factors.weight, m_n.item_factors.weight)):
        np.testing.assert_allclose(w_n.detach().numpy(), w_t.detach().numpy(), rtol=1e-4, atol=1e-5)


def test_thread_count_does_not_change_the_result():
    numba = pytest.importorskip("numba")
    rng = np.random.default_rng(3)
    ptr, items, labels = _lists(rng, 50, 80, 30, empty_ok=False)
    U0 = rng.normal(0, 1, (50, 6)).astype(np.float32)
    V0 = rng.normal(0, 1, (80, 6)).astype(np.float32)
    batches = np.array_split(rng.permutation(50), 5)
    before = numba.get_num_threads()
    results = []
    try:
        for threads in sorted({1, numba.config.NUMBA_NUM_THREADS}):
            numba.set_num_threads(threads)
            for name in ("bpr", "warp"):
                U, V = U0.copy(), V0.copy()
                epoch_arrays(U, V, ptr, items, labels, batches, name, learning_rate=0.3,
                             generator=torch.Generator().manual_seed(1))
                results.append((name, U, V))
    finally:
        numba.set_num_threads(before)
    for (n1, U1, V1), (n2, U2, V2) in zip(results, results[2:]):
        assert n1 == n2 and np.array_equal(U1, U2) and np.array_equal(V1, V2)


def _auc(U, V, test_pos, n_items):
    aucs = []
    for u, items in enumerate(test_pos):
        if not len(items):
            continue
        s = V @ U[u]
        neg = np.setdiff1d(np.arange(n_items), items)
        aucs.append((s[items][:, None] > s[neg][None, :]).mean())
    return float(np.mean(aucs))


@pytest.mark.parametrize("name,lr", [("bpr", 100.0), ("warp", 2.0)])
def test_trained_model_learns(name, lr):
    """Planted two-cluster preferences: the held-out AUC rises from chance (0.51 to about 0.68
    in 30 epochs; the model also fits its training lists, whose loss falls)."""
    rng = np.random.default_rng(0)
    n_users, n_items = 60, 80
    group_u, group_i = rng.integers(0, 2, n_users), rng.integers(0, 2, n_items)
    users, items, test = [], [], []
    for u in range(n_users):
        liked = np.flatnonzero(group_i == group_u[u])
        chosen = rng.choice(liked, 20, replace=False)
        users += [u] * 16
        items += list(chosen[:16])
        test.append(chosen[16:])
    pos = csr_from(np.array(users), np.array(items), n_users)
    task = _MFTask(pos, pos, n_items, 1, True, 16, np.arange(n_users), None)
    module = MatrixFactorization(n_users, n_items, 8)
    module.reset_parameters(0.1, torch.Generator().manual_seed(0))
    U, V = module.user_factors.weight.detach().numpy(), module.item_factors.weight.detach().numpy()
    before = _auc(U, V, test, n_items)
    loss, rng_e, gen = make_loss(name), np.random.default_rng(1), torch.Generator().manual_seed(1)
    losses = [sgd_epoch(module, task, loss, lr, 0.0, gen, rng_e)[0] for _ in range(30)]
    after = _auc(U, V, test, n_items)
    assert after > before + 0.12 and abs(before - 0.5) < 0.05
    assert np.mean(losses[-5:]) < 0.5 * np.mean(losses[:5])


@pytest.mark.parametrize("loss", ["bpr", "warp", "bpr:drawn"])
def test_mfranker_trains_bpr_and_warp_sgd_with_the_engine(loss, monkeypatch):
    """MFRanker with plain SGD on the CPU runs the engine's epochs (every epoch goes through
    sgd_epoch) and ends where the torch path ends, epoch by epoch."""
    import gbrank.torch._sampled_sgd as engine
    from gbrank.torch import MFRanker

    rng = np.random.default_rng(4)
    cells = rng.choice(40 * 50, size=500, replace=False)
    pairs = np.column_stack([cells // 50, cells % 50])
    loss, _, mode = loss.partition(":")
    kw = dict(loss=loss, optimizer="sgd", learning_rate=0.5, epochs=4, n_factors=6, validation_size=0.0,
              random_state=0, verbose=0, device="cpu",  # "auto" would take a GPU where there is one
              loss_params={"pairs": mode} if mode else None)
    calls = []
    real = engine.sgd_epoch
    monkeypatch.setattr(engine, "sgd_epoch", lambda *a, **k: calls.append(1) or real(*a, **k))
    fast = MFRanker(**kw).fit(pairs)
    assert len(calls) == 4
    monkeypatch.setattr(engine, "applies", lambda *a, **k: False)
    slow = MFRanker(**kw).fit(pairs)
    assert len(calls) == 4  # the torch path did not call it
    np.testing.assert_allclose(fast.history_["loss"], slow.history_["loss"], rtol=1e-4)
    np.testing.assert_allclose(fast.predict(pairs), slow.predict(pairs), rtol=1e-3, atol=1e-4)


def test_harmonic_table():
    h = harmonic_table(5)
    assert h[0] == 0.0 and h[1] == 1.0 and h[5] == pytest.approx(1 + 1 / 2 + 1 / 3 + 1 / 4 + 1 / 5)


def test_applies():
    module = MatrixFactorization(2, 3, 2)
    assert applies(module, make_loss("bpr"), "sgd", "cpu")
    assert applies(module, make_loss("warp"), "sgd", torch.device("cpu"))
    assert not applies(module, make_loss("bpr"), "adam", "cpu")
    assert not applies(module, make_loss("kos_warp"), "sgd", "cpu")
    assert not applies(module, make_loss("warp"), "sgd", "cpu", world_size=2)
    assert applies(module, make_loss("bpr"), "sgd", "cpu", task=SimpleNamespace(per_list=None))
    assert not applies(module, make_loss("bpr"), "sgd", "cpu", task=SimpleNamespace(per_list=1))  # cut lists


def test_bad_inputs_are_refused():
    U, V = np.zeros((2, 3), np.float32), np.zeros((4, 3), np.float32)
    ptr, items, labels = np.array([0, 2, 4]), np.array([0, 1, 2, 3]), np.array([1.0, 0, 1, 0])
    with pytest.raises(ValueError, match="loss must be one of"):
        epoch_arrays(U, V, ptr, items, labels, [np.array([0])], "kos_warp", learning_rate=0.1)
    with pytest.raises(TypeError, match="user_factors must be a writeable C-contiguous float32"):
        epoch_arrays(U.astype(np.float64), V, ptr, items, labels, [np.array([0])], "bpr", learning_rate=0.1)
    with pytest.raises(ValueError, match="same number of columns|as many columns"):
        epoch_arrays(U, V[:, :2].copy(), ptr, items, labels, [np.array([0])], "bpr", learning_rate=0.1)
    with pytest.raises(ValueError, match="appears twice"):
        epoch_arrays(U, V, ptr, items, labels, [np.array([0]), np.array([0])], "bpr", learning_rate=0.1)
    with pytest.raises(ValueError, match="items must be item rows"):
        epoch_arrays(U, V, ptr, np.array([0, 1, 2, 9]), labels, [np.array([0])], "bpr", learning_rate=0.1)
    with pytest.raises(ValueError, match="learning_rate must be positive"):
        epoch_arrays(U, V, ptr, items, labels, [np.array([0])], "bpr", learning_rate=0.0)
