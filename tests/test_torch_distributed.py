"""DistributedDataParallel training: real process groups on the loopback interface.

Two roads that must meet: ``MFRanker(...).fit`` in one process and the same estimator
fitted by 2 gloo processes (each computing its share of every global batch) give the same
parameters, history and evaluation, up to float summation order.  Every run is bounded by
the launcher's timeout, so a broken group fails the test instead of hanging it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

torch = pytest.importorskip("torch")
dist = pytest.importorskip("torch.distributed")

from gbrank.torch import (DistributedTrainingError, MFRanker, NetRanker, fit_distributed,  # noqa: E402
                          launch_local, split_interactions)
from gbrank.torch._distributed import Replicas  # noqa: E402

pytestmark = pytest.mark.skipif(not dist.is_available() or not dist.is_gloo_available(),
                                reason="torch.distributed with gloo is not available")

TIMEOUT = 240  # seconds one launch may take on two busy cores before the test fails
N_USERS, BATCH = 57, 8  # 57 = 7 * 8 + 1: every epoch has a batch of one list, so rank 1 gets none of it
COMMON = dict(epochs=5, batch_size=BATCH, verbose=0, random_state=0, device="cpu", validation_size=0)
# deterministic losses: DDP must give the one-process model (SGD at rates that train without blowing
# the factors up: at the default 1000 of the listwise losses the factors reach |w| ~ 100 in one epoch on this
# tiny data, where any float difference, DDP or not, grows to O(1) within three epochs)
EQUAL = {
    "listwise": (dict(loss="listwise_ndcg", optimizer="sgd", learning_rate=100.0), 1e-5),
    "lambda": (dict(loss="lambda_ndcg", optimizer="sgd", learning_rate=3.0), 1e-5),
    # with validation: rank 0 scores each epoch, every rank keeps the best one (epoch 3 of 5 here)
    "bounded": (dict(loss="listwise_nrbp", bounding="minmax", optimizer="sgd", learning_rate=100.0,
                     validation_size=0.1), 1e-5),
    # Adam divides by sqrt(v) + 1e-8: a gradient entry near 0 that differs by rounding (1e-12) moves its
    # weight by up to lr * 1e-12 / 1e-8, so Adam's tolerance is looser
    "adam": (dict(loss="lambda_ndcg", optimizer="adam", learning_rate=0.05), 1e-4),
    # a top-one loss: its default lists of one positive, each step's lists split over the ranks
    "one_positive_lists": (dict(loss="listwise_rr", optimizer="sgd", learning_rate=10.0), 1e-5),
}
# k-OS draws inside the loss, per rank: same distribution, not the same draws
SAMPLED = dict(loss="kos_warp", optimizer="adam", learning_rate=0.05)


def _clustered(n_users=N_USERS, n_items=120, per_user=24, seed=0):
    """Two taste groups: users of group g interact only with items of group g."""
    rng = np.random.default_rng(seed)
    rows = []
    for u in range(n_users):
        items = rng.choice(n_items // 2, size=per_user, replace=False) + (u % 2) * (n_items // 2)
        rows.extend((u, int(i)) for i in items)
    return np.array(rows)


def _flat(module) -> torch.Tensor:
    return torch.cat([p.detach().reshape(-1) for p in module.parameters()])


def _fit_all(configs, X, y, items):
    """Runs on every rank: fit each configuration, and measure how far the ranks' parameters are apart."""
    out = []
    for kw in configs:
        model = MFRanker(**kw, distributed=True).fit(X, y, items=items)
        mine = _flat(model.module_)
        if dist.get_backend() == "nccl":  # NCCL gathers CUDA tensors only
            mine = mine.to(f"cuda:{torch.cuda.current_device()}")
        every = [torch.empty_like(mine) for _ in range(dist.get_world_size())]
        dist.all_gather(every, mine)
        out.append((model, max(float((other - mine).abs().max()) for other in every), dist.get_world_size()))
    return out


def _die_mid_training(X):
    """Rank 1 dies abruptly (no Python error) in its 5th training step; rank 0 trains on."""
    if dist.get_rank() == 1:
        steps = []

        def die(module, inputs, output):
            steps.append(type(module).__name__ == "MatrixFactorization" and module.training)
            if sum(steps) == 5:
                os._exit(13)

        torch.nn.modules.module.register_module_forward_hook(die)
    MFRanker(loss="lambda_ndcg", epochs=1000, batch_size=4, verbose=0, random_state=0, device="cpu",
             distributed=True).fit(X)


def _rank_1_raises():
    dist.barrier()
    if dist.get_rank() == 1:
        raise ValueError("rank 1 cannot go on")
    dist.barrier()


def _rank_1_hangs():
    if dist.get_rank() == 1:
        time.sleep(3600)
    dist.barrier()


@pytest.fixture(scope="module")
def split():
    X = _clustered()
    return split_interactions(X, np.ones(len(X)), relevance_threshold=1, min_positives=10, nsr=2, random_state=0)


@pytest.fixture(scope="module")
def runs(split):
    """One 2-process launch fitting every configuration (process start-up dominates the cost)."""
    configs = [{**COMMON, **kw} for kw, _ in EQUAL.values()] + [{**COMMON, **SAMPLED}]
    results = launch_local(_fit_all, 2, (configs, split.X_train, split.y_train, split.items), timeout=TIMEOUT)
    return dict(zip(list(EQUAL) + ["sampled"], results))


def test_shards_cover_the_batch_contiguously_when_uneven():
    for world in (1, 2, 3, 4):
        for n_rows in (0, 1, 2, 5, 7, 8, 33):
            bounds = [Replicas(r, world, torch.device("cpu")).shard(n_rows) for r in range(world)]
            assert bounds[0][0] == 0 and bounds[-1][1] == n_rows
            assert all(a[1] == b[0] for a, b in zip(bounds, bounds[1:]))
            sizes = [b - a for a, b in bounds]
            assert max(sizes) - min(sizes) <= 1 and sizes == sorted(sizes, reverse=True)


def test_the_data_makes_uneven_shards_and_an_empty_one():
    assert len(np.unique(_clustered()[:, 0])) == N_USERS and N_USERS % 2 == 1
    assert N_USERS % BATCH == 1 and N_USERS < 50 * BATCH  # one bucketing pool: one batch of one list per epoch


@pytest.mark.parametrize("kind", list(EQUAL))
def test_two_processes_give_the_one_process_model(kind, runs, split):
    model, spread, world = runs[kind]
    kw, tolerance = EQUAL[kind]
    assert world == 2 and spread == 0.0  # all ranks end with the very same parameters
    one = MFRanker(**{**COMMON, **kw}).fit(split.X_train, split.y_train, items=split.items)
    assert model.loss_ == one.loss_
    gap = float((_flat(model.module_) - _flat(one.module_)).abs().max())
    assert gap < tolerance, gap
    np.testing.assert_allclose(model.history_["loss"], one.history_["loss"], rtol=1e-5, atol=1e-6)
    if kw.get("validation_size"):
        metric = one.eval_metric_
        np.testing.assert_allclose(model.history_[metric], one.history_[metric], rtol=1e-6, atol=1e-9)
    assert model.best_epoch_ == one.best_epoch_ and model.best_score_ == pytest.approx(one.best_score_, abs=1e-9)
    assert model.score(split.X_test, split.y_test) == pytest.approx(one.score(split.X_test, split.y_test), abs=1e-6)
    np.testing.assert_allclose(model.predict(split.X_test), one.predict(split.X_test), rtol=1e-4, atol=1e-5)
    # and the training did something: the model is far from its initialisation
    untrained = MFRanker(**{**COMMON, **kw, "epochs": 1, "learning_rate": 1e-12}).fit(
        split.X_train, split.y_train, items=split.items)
    assert float((_flat(one.module_) - _flat(untrained.module_)).abs().max()) > 100 * max(gap, 1e-7)


def _halves(n_rows, pairs_per_row, max_pairs):
    """Accumulate each batch's gradient over the two slices that ranks 0 and 1 compute."""
    half = (n_rows + 1) // 2
    return [(0, half), (half, n_rows)] if n_rows > 1 else [(0, n_rows)]


@pytest.mark.parametrize("kind", list(EQUAL))
def test_two_processes_are_bitwise_one_process_accumulating_the_same_halves(kind, runs, split, monkeypatch):
    """The whole gap to one process is float summation order: DDP on 2 ranks sums the gradients of the
    two halves of every batch (the world-size factor 2 is exact), as one process does when it accumulates
    the gradient over those halves (on this small data no list is long enough to be chunked otherwise)."""
    import gbrank.torch._training as training

    model, _, _ = runs[kind]
    monkeypatch.setattr(training, "_chunks", _halves)
    halves = MFRanker(**{**COMMON, **EQUAL[kind][0]}).fit(split.X_train, split.y_train, items=split.items)
    assert torch.equal(_flat(model.module_), _flat(halves.module_))
    assert model.history_["loss"].tolist() == pytest.approx(halves.history_["loss"].tolist(), rel=1e-12)


def test_sampled_losses_train_with_their_own_draws_per_rank(runs, split):
    model, spread, _ = runs["sampled"]
    assert spread == 0.0
    one = MFRanker(**{**COMMON, **SAMPLED}).fit(split.X_train, split.y_train, items=split.items)
    untrained = MFRanker(**{**COMMON, **SAMPLED, "epochs": 1, "learning_rate": 1e-12}).fit(
        split.X_train, split.y_train, items=split.items)
    before = untrained.score(split.X_test, split.y_test)
    assert model.score(split.X_test, split.y_test) > before + 0.05
    assert one.score(split.X_test, split.y_test) > before + 0.05


def test_a_rank_that_dies_mid_training_fails_the_launch_quickly():
    start = time.monotonic()
    with pytest.raises(DistributedTrainingError, match=r"rank 1 exited with code 13 without a Python error"):
        launch_local(_die_mid_training, 2, (_clustered(n_users=40),), timeout=TIMEOUT)
    assert time.monotonic() - start < TIMEOUT / 2


@pytest.mark.slow
def test_a_rank_that_raises_is_reported_with_its_error():
    with pytest.raises(DistributedTrainingError, match=r"(?s)rank 1 raised ValueError: rank 1 cannot go on.*Traceback"):
        launch_local(_rank_1_raises, 2, timeout=TIMEOUT)


@pytest.mark.slow
def test_a_rank_that_hangs_is_stopped_at_the_timeout():
    start = time.monotonic()
    with pytest.raises(DistributedTrainingError, match=r"did not finish within timeout=40 s"):
        launch_local(_rank_1_hangs, 2, timeout=40)
    assert time.monotonic() - start < 40 + 30


def test_distributed_fit_needs_a_group_and_a_seed(split, monkeypatch):
    for name in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(RuntimeError, match="torchrun --nproc_per_node"):
        MFRanker(**COMMON, distributed=True).fit(split.X_train, split.y_train)
    with pytest.raises(ValueError, match="needs an int random_state"):
        MFRanker(**{**COMMON, "random_state": None}, distributed=True).fit(split.X_train, split.y_train)
    with pytest.raises(ValueError, match="needs an int random_state"):
        fit_distributed(MFRanker(**{**COMMON, "random_state": None}), split.X_train)
    with pytest.raises(ValueError, match="distributed must be True or False"):
        MFRanker(**COMMON, distributed="yes").fit(split.X_train, split.y_train)
    with pytest.raises(TypeError, match="not a NetRanker"):
        fit_distributed(NetRanker(random_state=0), np.zeros((4, 2)), np.zeros(4), qid=[0, 0, 1, 1])
    with pytest.raises(ValueError, match="nprocs must be a positive integer"):
        launch_local(print, 0)


TORCHRUN_SCRIPT = """
import os
import sys

import numpy as np
import torch

from gbrank.torch import MFRanker

torch.set_num_threads(1)
X = np.load(sys.argv[1])
model = MFRanker(**eval(sys.argv[3]), distributed=True).fit(X)  # fit creates the gloo group from torchrun's env
if os.environ["RANK"] == "0":
    model.save(sys.argv[2])
"""


@pytest.mark.slow
def test_torchrun_trains_the_one_process_model(tmp_path):
    X = _clustered(n_users=21)
    kw = {**COMMON, **EQUAL["bounded"][0], "batch_size": 4}
    np.save(tmp_path / "X.npy", X)
    (tmp_path / "train.py").write_text(textwrap.dedent(TORCHRUN_SCRIPT))
    ddp = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2",
                          str(tmp_path / "train.py"), str(tmp_path / "X.npy"), str(tmp_path / "ddp.pt"), repr(kw)],
                         env={**os.environ, "OMP_NUM_THREADS": "1"}, capture_output=True, text=True, timeout=TIMEOUT)
    assert ddp.returncode == 0, ddp.stderr[-3000:]
    one, model = MFRanker(**kw).fit(X), MFRanker.load(tmp_path / "ddp.pt")
    assert model.distributed and model.best_epoch_ == one.best_epoch_
    assert float((_flat(one.module_) - _flat(model.module_)).abs().max()) < 1e-5


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available() or not dist.is_nccl_available(), reason="needs CUDA and NCCL")
def test_nccl_on_gpus_gives_the_one_process_model(split):
    nprocs = min(2, torch.cuda.device_count())
    kw = {**COMMON, **EQUAL["lambda"][0], "device": "cuda"}
    (model, spread, world), = launch_local(_fit_all, nprocs, ([kw], split.X_train, split.y_train, split.items),
                                          backend="nccl", timeout=TIMEOUT)
    assert world == nprocs and spread == 0.0
    one = MFRanker(**kw).fit(split.X_train, split.y_train, items=split.items)
    assert float((_flat(model.module_) - _flat(one.module_)).abs().max()) < 1e-5
    assert model.score(split.X_test, split.y_test) == pytest.approx(one.score(split.X_test, split.y_test), abs=1e-6)
