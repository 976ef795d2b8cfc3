r"""Data-parallel training with ``torch.distributed``: DistributedDataParallel over the lists.

With ``MFRanker(distributed=True)`` every process of a process group (one per CPU share
or GPU) trains the same model on its share of each batch; the model equals the one of a
single process for the same seed and global batch, up to the order of float sums.

How the one-process step is reproduced
--------------------------------------
* Every rank holds the whole training data and runs the same seeded data pipeline
  (negative sampling, shuffling, bucketing), so all ranks see the same sequence of
  *global* batches of B lists.  Rank r of W keeps a contiguous slice of each global
  batch (slices differ in size by at most one list; a rank may get none of a batch
  shorter than W).  Only the forward and backward passes are split.
* Rank r back-propagates ``W / B * sum_{b in shard r} loss_b``.  DDP averages the ranks'
  gradients (sum / W), which gives ``(1 / B) sum_b grad loss_b``: the gradient of the
  one-process batch mean.  For W a power of two the scaling is exact in floating point.
* Embedding tables get dense gradients (``torch.nn.Embedding(sparse=False)``, the
  default of :class:`MatrixFactorization`), and every parameter takes part in every
  step, so DDP runs with ``find_unused_parameters=False``.  The cost is an all-reduce of
  the whole user and item tables per step.  Sparse gradients are not used: NCCL has no
  sparse all-reduce, and the one-process model trains with dense gradients (Adam and
  weight decay update every row), which the DDP model must reproduce.
* Long lists are split into row chunks with gradient accumulation, as in one process;
  all chunks but a rank's last run under ``DDP.no_sync()``, so every rank takes part in
  exactly one all-reduce per step however many chunks it has.  A rank without a list in
  a step still runs a forward on an empty slice, so the all-reduce never waits for it.
* The mean loss of an epoch is all-reduced (the divergence check and the history see
  the global value on every rank); validation runs on rank 0 and its score is broadcast,
  so early stopping and the choice of the best epoch agree on all ranks.  All ranks end
  with the same parameters.
* k-OS and WARP draw random numbers inside the loss; their draws depend on the shard's
  shape, so each rank draws from its own stream (seeded by the estimator's seed and the
  rank).  Those models follow the same distribution as one process, but are not equal
  to it.

Entry points: ``MFRanker(distributed=True).fit(...)`` inside a process group (under
``torchrun``, which sets ``RANK``, ``WORLD_SIZE``, ``MASTER_ADDR``, ``MASTER_PORT``; fit
then creates the group, gloo on the CPU and NCCL on CUDA, and destroys it at the end), or
:func:`launch_local` / :func:`fit_distributed`, which start N local processes on the
loopback interface and return rank 0's result.
"""

from __future__ import annotations

import contextlib
import datetime
import multiprocessing.connection
import os
import pickle
import signal
import socket
import tempfile
import time
import traceback

import numpy as np
import torch
import torch.distributed as dist

from .._validation import is_positive_int

#: seconds a collective of a group made by :func:`launch_local` waits for a missing rank
DEFAULT_TIMEOUT = 300.0

_ENV = ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")


class DistributedTrainingError(RuntimeError):
    """A process of a :func:`launch_local` run failed, died or ran out of time."""


# ---- the replica protocol of the training loop ---------------------------------------------
class OneProcess:
    """What the training loop asks of its replicas, for the one-process case (all no-ops)."""

    rank, world_size = 0, 1

    def device_for(self, device: torch.device) -> torch.device:
        return device

    def wrap(self, module):
        return module

    def shard(self, n_rows: int) -> tuple[int, int]:
        return 0, n_rows

    def no_sync(self, model, last: bool):
        return contextlib.nullcontext()

    def sum(self, values, device):
        return list(values)

    def agree(self, compute):
        return compute()

    def loss_generator(self, generator, loss):
        return generator


ONE_PROCESS = OneProcess()


class Replicas(OneProcess):
    """This process as rank ``rank`` of ``world_size`` replicas of one DDP model."""

    def __init__(self, rank: int, world_size: int, device: torch.device):
        self.rank, self.world_size, self.device = rank, world_size, device

    def device_for(self, device: torch.device) -> torch.device:
        return self.device

    def wrap(self, module):
        ids = [self.device.index] if self.device.type == "cuda" else None
        return torch.nn.parallel.DistributedDataParallel(module, device_ids=ids, find_unused_parameters=False)

    def shard(self, n_rows: int) -> tuple[int, int]:
        """The contiguous slice of a global batch of ``n_rows`` lists this rank computes."""
        base, extra = divmod(n_rows, self.world_size)
        start = self.rank * base + min(self.rank, extra)
        return start, start + base + (self.rank < extra)

    def no_sync(self, model, last: bool):
        return contextlib.nullcontext() if last else model.no_sync()

    def sum(self, values, device):
        t = torch.tensor(list(values), dtype=torch.float64, device=device)
        dist.all_reduce(t)
        return t.tolist()

    def agree(self, compute):
        """``compute()`` on rank 0 (None or a number), broadcast to every rank."""
        t = torch.zeros(2, dtype=torch.float64, device=self.device)
        if self.rank == 0:
            value = compute()
            if value is not None:
                t[0], t[1] = 1.0, float(value)
        dist.broadcast(t, src=0)
        return float(t[1]) if bool(t[0]) else None

    def loss_generator(self, generator, loss):
        if not loss.sampled:
            return generator
        seed = np.random.SeedSequence([generator.initial_seed(), self.rank]).generate_state(1, np.uint64)[0]
        return torch.Generator().manual_seed(int(seed >> 1))


def _rank_device(device: torch.device) -> torch.device:
    """cuda without an index becomes this process' GPU (LOCAL_RANK, as torchrun sets it)."""
    if device.type != "cuda" or device.index is not None:
        return device
    local = os.environ.get("LOCAL_RANK")
    index = int(local) if local is not None else dist.get_rank() % torch.cuda.device_count()
    return torch.device("cuda", index)


def check_distributed(distributed, random_state) -> bool:
    """Validate an estimator's ``distributed`` flag (and, when set, its seed); returns the flag."""
    if not isinstance(distributed, (bool, np.bool_)):
        raise ValueError(f"distributed must be True or False, got {distributed!r}")
    if distributed and (isinstance(random_state, bool) or not isinstance(random_state, (int, np.integer))):
        raise ValueError(f"distributed=True needs an int random_state, got {random_state!r}: every process must "
                         "draw the same initialisation, negatives and batches; pass e.g. random_state=0")
    return bool(distributed)


@contextlib.contextmanager
def data_parallel(device: torch.device, random_state):
    """The :class:`Replicas` of this process for a ``distributed=True`` fit.

    Uses the process group of the caller when there is one; otherwise creates one from the
    environment of ``torchrun`` (gloo for a CPU device, NCCL for CUDA) and destroys it on
    exit.  Raises when there is neither, or when ``random_state`` is not an int.
    """
    check_distributed(True, random_state)
    if not dist.is_available():
        raise RuntimeError("distributed=True needs torch.distributed, which this torch build lacks; "
                           "install a torch with distributed support or fit with distributed=False")
    created = False
    if not dist.is_initialized():
        missing = [name for name in _ENV if name not in os.environ]
        if missing:
            raise RuntimeError(
                f"distributed=True needs a torch.distributed process group, but none is initialised and "
                f"{', '.join(missing)} {'is' if len(missing) == 1 else 'are'} not set: run the script under "
                "`torchrun --nproc_per_node=N script.py`, call torch.distributed.init_process_group first, "
                "or use gbrank.torch.fit_distributed / launch_local")
        backend = "nccl" if device.type == "cuda" else "gloo"
        if device.type == "cuda":
            torch.cuda.set_device(_rank_device(device))
        dist.init_process_group(backend)
        created = True
    try:
        device = _rank_device(device)
        backend = dist.get_backend()
        if backend == "nccl" and device.type != "cuda":
            raise ValueError(f"the process group uses NCCL, which reduces only CUDA tensors, but the model is on "
                             f"{device}; use device='cuda' (or 'auto'), or a gloo process group for the CPU")
        yield Replicas(dist.get_rank(), dist.get_world_size(), device)
    finally:
        if created:
            dist.destroy_process_group()


# ---- local launcher ------------------------------------------------------------------------
def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _loopback_interface() -> str | None:
    names = {name for _, name in socket.if_nameindex()} if hasattr(socket, "if_nameindex") else set()
    return next((n for n in ("lo", "lo0") if n in names), None)


def _worker(rank, world_size, port, backend, function, args, folder, num_threads, collective_timeout):
    """Body of one launched process: join the group, run ``function(*args)``, leave the group."""
    try:
        os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank), LOCAL_RANK=str(rank),
                          WORLD_SIZE=str(world_size), LOCAL_WORLD_SIZE=str(world_size))
        loopback = _loopback_interface()
        if loopback is not None:
            os.environ.setdefault("GLOO_SOCKET_IFNAME", loopback)
        if num_threads is not None:
            torch.set_num_threads(int(num_threads))
        if backend == "nccl":
            torch.cuda.set_device(rank)
        dist.init_process_group(backend, rank=rank, world_size=world_size,
                                timeout=datetime.timedelta(seconds=collective_timeout))
        try:
            result = function(*args)
        finally:
            dist.destroy_process_group()
        if rank == 0:
            with open(os.path.join(folder, "result.pkl"), "wb") as f:
                pickle.dump(result, f)
    except BaseException as err:  # noqa: BLE001 - reported to the parent, then the process fails
        with open(os.path.join(folder, f"error-{rank}.txt"), "w") as f:
            f.write(f"{type(err).__name__}: {err}\n\n{traceback.format_exc()}")
        raise SystemExit(1) from None


def _describe(rank: int, exitcode: int | None, folder: str) -> str:
    path = os.path.join(folder, f"error-{rank}.txt")
    if os.path.exists(path):
        with open(path) as f:
            text = f.read()
        return f"rank {rank} raised {text.splitlines()[0]}\n{text.partition(chr(10) * 2)[2].rstrip()}"
    if exitcode is not None and exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        return f"rank {rank} was killed by {name}"
    return f"rank {rank} exited with code {exitcode} without a Python error (it died)"


def launch_local(function, nprocs: int = 2, args: tuple = (), *, backend: str = "auto",
                 timeout: float | None = None, collective_timeout: float = DEFAULT_TIMEOUT,
                 num_threads: int | None = 1):
    """Run ``function(*args)`` in ``nprocs`` local processes forming a process group; return rank 0's result.

    The processes are started with the ``spawn`` method and meet on the loopback interface
    (``MASTER_ADDR=127.0.0.1``, a free port; ``GLOO_SOCKET_IFNAME`` set to the loopback
    interface unless already set), with ``RANK``, ``LOCAL_RANK`` and ``WORLD_SIZE`` set as
    ``torchrun`` sets them; inside, ``torch.distributed`` is initialised, so
    ``MFRanker(distributed=True).fit`` trains as one replica.  The parent watches the
    processes: when one fails or dies, the others are stopped and a
    :class:`DistributedTrainingError` names the rank and its error.

    Parameters
    ----------
    function : callable
        Picklable (a module-level function), run on every rank; rank 0's return value is
        pickled back to the caller.
    nprocs : int, default 2
        Number of processes (the world size).  With NCCL at most one per GPU.
    args : tuple
        Arguments of ``function`` (pickled to every process).
    backend : {"auto", "gloo", "nccl"}
        "auto": NCCL when CUDA is available with a GPU per process, else gloo.
    timeout : float or None
        Seconds the whole run may take; past them every process is stopped and
        :class:`DistributedTrainingError` is raised.  None: no limit (a failed or dead
        rank is still reported at once).
    collective_timeout : float, default 300
        ``init_process_group(timeout=...)``: how long a collective waits for a missing rank.
    num_threads : int or None, default 1
        ``torch.set_num_threads`` in each process, so that N processes share the cores
        instead of each taking all of them; None keeps torch's default.

    Examples
    --------
    >>> from gbrank.torch import MFRanker, fit_distributed
    >>> X = [[u, i] for u in range(9) for i in range(12) if (u + i) % 3 == 0]
    >>> model = fit_distributed(MFRanker(loss="lambda_ndcg", epochs=2, verbose=0, random_state=0,
    ...                                  validation_size=0), X, nprocs=2)   # doctest: +SKIP
    """
    if not is_positive_int(nprocs):
        raise ValueError(f"nprocs must be a positive integer (processes to launch), got {nprocs!r}")
    if backend == "auto":
        # NCCL needs one GPU per process: with fewer GPUs than processes, gloo (on the CPU)
        backend = ("nccl" if torch.cuda.is_available() and dist.is_nccl_available()
                   and nprocs <= torch.cuda.device_count() else "gloo")
    if backend not in ("gloo", "nccl"):
        raise ValueError(f"backend must be 'auto', 'gloo' or 'nccl', got {backend!r}")
    if backend == "nccl":
        if not torch.cuda.is_available():
            raise ValueError("backend='nccl' needs CUDA, which is not available here; use backend='gloo'")
        if nprocs > torch.cuda.device_count():
            raise ValueError(f"backend='nccl' runs one process per GPU, but nprocs={nprocs} exceeds the "
                             f"{torch.cuda.device_count()} GPU(s) here; lower nprocs or use backend='gloo'")
    if timeout is not None and not timeout > 0:
        raise ValueError(f"timeout must be a positive number of seconds or None, got {timeout!r}")
    ctx = torch.multiprocessing.get_context("spawn")
    port = _free_port()
    with tempfile.TemporaryDirectory(prefix="gbrank-ddp-") as folder:
        procs = [ctx.Process(target=_worker, name=f"gbrank-ddp-rank{rank}", daemon=True,
                             args=(rank, nprocs, port, backend, function, args, folder, num_threads,
                                   float(collective_timeout)))
                 for rank in range(nprocs)]
        deadline = None if timeout is None else time.monotonic() + float(timeout)
        failed, timed_out = [], False
        try:
            for p in procs:
                p.start()
            while True:
                failed = [r for r, p in enumerate(procs) if p.exitcode not in (None, 0)]
                alive = [p for p in procs if p.exitcode is None]
                if failed or not alive:
                    break
                if deadline is not None and time.monotonic() > deadline:
                    timed_out = True
                    break
                wait = 1.0 if deadline is None else max(0.0, min(1.0, deadline - time.monotonic()))
                multiprocessing.connection.wait([p.sentinel for p in alive], timeout=wait)
            if failed:  # give the peers of a dead rank a moment to report their own errors
                end = time.monotonic() + 2.0
                while time.monotonic() < end and any(p.exitcode is None for p in procs):
                    time.sleep(0.05)
                failed = [r for r, p in enumerate(procs) if p.exitcode not in (None, 0)]
        finally:
            for p in procs:
                if p.exitcode is None and p.pid is not None:
                    p.terminate()
            for p in procs:
                if p.pid is not None:
                    p.join(5.0)
                    if p.exitcode is None:
                        p.kill()
                        p.join()
        if timed_out:
            raise DistributedTrainingError(
                f"the {nprocs} processes did not finish within timeout={timeout} s and were stopped; "
                "raise timeout, or look for a rank that hangs")
        if failed:
            # a rank that died without a Python error is the likely cause: name it first
            failed.sort(key=lambda r: os.path.exists(os.path.join(folder, f"error-{r}.txt")))
            details = "\n\n".join(_describe(r, procs[r].exitcode, folder) for r in failed)
            raise DistributedTrainingError(
                f"{len(failed)} of {nprocs} processes failed; the others were stopped.\n\n{details}")
        with open(os.path.join(folder, "result.pkl"), "rb") as f:
            return pickle.load(f)


def _fit_replica(estimator, fit_args, fit_kwargs):
    from sklearn.base import clone

    return clone(estimator).set_params(distributed=True).fit(*fit_args, **fit_kwargs)


def fit_distributed(estimator, *fit_args, nprocs: int = 2, timeout: float | None = None, **fit_kwargs):
    """Fit a copy of ``estimator`` with ``distributed=True`` in ``nprocs`` local processes; return it (rank 0's).

    ``fit_distributed(MFRanker(random_state=0), X, y, items=items, nprocs=2)`` trains as
    ``MFRanker(random_state=0).fit(X, y, items=items)`` does, with each step's lists split
    over the processes (see :func:`launch_local` for ``timeout`` and the processes).
    The estimator needs an int ``random_state``.
    """
    params = estimator.get_params(deep=False)
    if "distributed" not in params:
        raise TypeError(f"fit_distributed trains estimators with a distributed parameter (MFRanker), "
                        f"not a {type(estimator).__name__}")
    check_distributed(True, params.get("random_state"))
    return launch_local(_fit_replica, nprocs, (estimator, fit_args, fit_kwargs), timeout=timeout)
