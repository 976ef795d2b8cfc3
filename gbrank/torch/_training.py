"""The training loop shared by the estimators: optimiser, epochs, validation every k epochs,
best epoch, early stopping, progress bar.

A *task* supplies the data side (``MF`` or ``Net``): ``batches(rng)`` yields batches of
padded lists, ``tensors(batch, device)`` turns one into ``(inputs, labels, mask)``,
``scores(module, inputs)`` scores them, and ``validate(module)`` returns the value of the
model-selection metric (or ``None`` without validation data).
"""

from __future__ import annotations

import copy
import logging
import math
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

import gbrank.torch._sampled_sgd as sampled_sgd  # the module, not the package: no cycle through __init__

from .._progress import progress
from .._validation import is_positive_int
from ._distributed import ONE_PROCESS

OPTIMIZERS = {"adam": torch.optim.Adam, "sgd": torch.optim.SGD}

log = logging.getLogger("gbrank.torch")


@dataclass
class TrainConfig:
    """Settings of :func:`train` (validated by the estimators)."""

    optimizer: str = "sgd"
    learning_rate: float = 0.1
    weight_decay: float = 0.0
    epochs: int = 100
    eval_every: int = 1
    early_stopping: int | None = None
    higher_is_better: bool = True
    verbose: int = 1
    max_pairs: int = 1 << 22  # pair entries ([rows, P, L]) per forward chunk


def check_config(optimizer, learning_rate, weight_decay, epochs, eval_every, early_stopping) -> None:
    if optimizer not in OPTIMIZERS:
        raise ValueError(f"optimizer must be one of {sorted(OPTIMIZERS)}, got {optimizer!r}")
    if not (isinstance(learning_rate, (int, float)) and learning_rate > 0 and math.isfinite(learning_rate)):
        raise ValueError(f"learning_rate must be a positive number, got {learning_rate!r}")
    if not (isinstance(weight_decay, (int, float)) and weight_decay >= 0):
        raise ValueError(f"weight_decay must be a non-negative number, got {weight_decay!r}")
    for name, value in (("epochs", epochs), ("eval_every", eval_every)):
        if not is_positive_int(value):
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    if early_stopping is not None and (isinstance(early_stopping, bool) or not isinstance(
            early_stopping, (int, np.integer)) or early_stopping < 1):
        raise ValueError(f"early_stopping must be None or a positive number of evaluations, got {early_stopping!r}")


#: Largest weight magnitude training accepts: far beyond any useful model (initial weights are
#: ~0.1), and scores built from larger weights lose their float32 precision or overflow.
MAX_WEIGHT = 1e6


def check_divergence(module, mean_loss: float, epoch: int, loss, config: TrainConfig) -> None:
    """Stop a diverging training: a non-finite loss, or weights beyond :data:`MAX_WEIGHT`
    (exploding), raise ``FloatingPointError`` naming the loss, the learning rate and the fix."""
    largest = max((float(w.detach().abs().max()) for w in module.parameters() if w.numel()), default=0.0)
    if math.isfinite(mean_loss) and math.isfinite(largest) and largest <= MAX_WEIGHT:
        return
    what = (f"the {getattr(loss, 'name', 'training')} loss became {mean_loss}" if not math.isfinite(mean_loss)
            else f"the weights exploded (largest |w| = {largest:.3g} > {MAX_WEIGHT:g}; {getattr(loss, 'name', '')} "
                 f"loss {mean_loss:.4g})")
    lr = config.learning_rate
    raise FloatingPointError(
        f"training diverged at epoch {epoch}: {what} with optimizer={config.optimizer!r}, learning_rate={lr:g}; "
        f"lower the learning rate (e.g. learning_rate={lr / 100:g}) or use optimizer='adam'")


def _chunks(n_rows: int, pairs_per_row: int, max_pairs: int):
    step = max(1, max_pairs // max(pairs_per_row, 1))
    return [(a, min(a + step, n_rows)) for a in range(0, n_rows, step)]


def train_epoch(module, task, loss, optimizer, device, generator, rng, max_pairs,
                replicas=ONE_PROCESS) -> tuple[float, int]:
    """One pass over the task's batches; returns (mean loss per list, number of lists).

    With DDP ``replicas`` (``_distributed.Replicas``) each process computes its shard of
    every global batch and back-propagates ``world_size / n_rows * sum(shard losses)``;
    DDP's average over the processes then equals the one-process gradient of the batch mean.
    """
    module.train()
    total, count = 0.0, 0
    for batch in task.batches(rng):
        inputs, labels, mask = task.tensors(batch, device)
        n_rows, width = labels.shape
        first, last = replicas.shard(n_rows)
        inputs, labels, mask = task.slice(inputs, first, last), labels[first:last], mask[first:last]
        n_pos = int((labels > 0).sum(dim=1).max()) if labels.numel() else 0
        optimizer.zero_grad(set_to_none=True)
        chunks = _chunks(last - first, max(n_pos, 1) * width, max_pairs) or [(0, 0)]
        for k, (a, b) in enumerate(chunks):
            with replicas.no_sync(module, last=k == len(chunks) - 1):
                part = task.scores(module, task.slice(inputs, a, b))
                # an empty shard still runs forward and backward, so that DDP's all-reduce never waits for it
                per_list = loss(part, labels[a:b], mask[a:b], generator=generator) if b > a else part.sum(dim=1)
                value = per_list.sum() * replicas.world_size / n_rows
                value.backward()
            total += float(per_list.detach().sum())
        optimizer.step()
        count += n_rows
    total, = replicas.sum([total], device)
    return (total / count if count else float("nan")), count


def call_monitor(monitor, module, epoch: int, taken: set) -> dict[str, float]:
    """``monitor(epoch)`` with ``module`` in eval mode and under ``torch.no_grad()`` (its
    train/eval mode restored after), its answer checked: a dict of new column names to
    numbers, as floats."""
    was_training = module.training
    module.eval()
    try:
        with torch.no_grad():
            values = monitor(epoch)
    finally:
        module.train(was_training)
    if not isinstance(values, dict):
        raise TypeError(f"monitor must return a dict of column name -> number, got {type(values).__name__} at "
                        f"epoch {epoch}")
    out = {}
    for name, value in values.items():
        if not isinstance(name, str) or name in taken:
            raise ValueError(f"monitor returned the column {name!r} at epoch {epoch}; use str names other than "
                             f"{sorted(taken)} (those columns of history_ are taken)")
        if isinstance(value, (np.ndarray, torch.Tensor, np.generic)) and value.ndim == 0:
            value = value.item()  # a numpy or torch scalar
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"monitor returned {name}={value!r} at epoch {epoch}; each value must be one number")
        out[name] = float(value)
    return out


def train(module, task, loss, config: TrainConfig, device: torch.device, generator: torch.Generator,
          rng: np.random.Generator, metric_name: str | None, replicas=ONE_PROCESS, monitor=None):
    """Train ``module`` in place; returns ``(history DataFrame, best_epoch, best_score)``.

    With validation (``task.validate`` returning a number) the module ends with the weights
    of its best evaluated epoch; without, with those of the last epoch.  ``replicas`` are
    the processes of a DDP run (``gbrank.torch._distributed``): the steps run on a
    ``DistributedDataParallel`` wrapper of ``module``, validation on rank 0 only.

    ``monitor``, a callable ``monitor(epoch) -> dict[str, float]`` or None, is called after
    every evaluated epoch (every ``eval_every`` epochs and after the last), after the
    validation score, with the weights of that epoch, in eval mode and without gradients
    (the mode is restored after); its values become columns of the history (NaN at the
    epochs not evaluated).  It runs on rank 0 only, and draws nothing from ``rng`` or
    ``generator``: a monitor does not change the training.
    """
    optimizer = OPTIMIZERS[config.optimizer](module.parameters(), lr=config.learning_rate,
                                             weight_decay=config.weight_decay)
    # BPR and WARP with plain SGD on the CPU: the numba engine runs the same epoch (the same
    # lists, batches, draws and update; tests/test_mf_speed_paths.py), about 4-7x faster per epoch
    # (docs/results/mf_speed.md)
    engine = sampled_sgd.applies(module, loss, config.optimizer, device, replicas.world_size, task)
    model = replicas.wrap(module)
    generator = replicas.loss_generator(generator, loss)
    history, best_state, best_epoch, best_score, stale = [], None, config.epochs, None, 0
    sign = 1.0 if config.higher_is_better else -1.0
    bar = progress(range(1, config.epochs + 1), enabled=bool(config.verbose) and replicas.rank == 0, desc="epochs",
                   leave=False)
    for epoch in bar:
        start = time.perf_counter()
        if engine:
            mean_loss, _ = sampled_sgd.sgd_epoch(module, task, loss, config.learning_rate, config.weight_decay,
                                                 generator, rng, config.max_pairs)
        else:
            mean_loss, _ = train_epoch(model, task, loss, optimizer, device, generator, rng, config.max_pairs,
                                       replicas)
        check_divergence(module, mean_loss, epoch, loss, config)
        row = {"epoch": epoch, "loss": mean_loss, "seconds": time.perf_counter() - start}
        if epoch % config.eval_every == 0 or epoch == config.epochs:
            was_training = module.training
            module.eval()
            with torch.no_grad():
                score = replicas.agree(lambda: task.validate(module))
            if score is not None:
                row[metric_name] = score
                if best_score is None or sign * score > sign * best_score:
                    best_score, best_epoch, stale = score, epoch, 0
                    best_state = copy.deepcopy(module.state_dict())
                else:
                    stale += 1
                bar.set_postfix({"loss": f"{mean_loss:.4g}", metric_name: f"{score:.4f}"})
            if monitor is not None and replicas.rank == 0:
                row.update(call_monitor(monitor, module, epoch, {"epoch", "loss", "seconds"} | {metric_name} - {None}))
            module.train(was_training)
        history.append(row)
        if replicas.rank == 0:
            log.debug("epoch %d: loss %.6g%s (%.2f s)", epoch, mean_loss,
                      f", {metric_name} {row[metric_name]:.4f}" if metric_name in row else "", row["seconds"])
        if config.early_stopping is not None and stale >= config.early_stopping:
            break
    bar.close()
    if best_state is not None:
        module.load_state_dict(best_state)
    else:
        best_epoch = history[-1]["epoch"]
    return pd.DataFrame(history), best_epoch, best_score
