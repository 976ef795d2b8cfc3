"""What the torch estimators share: training settings, seeds, device, save and load."""

from __future__ import annotations

import numpy as np
import torch
from sklearn.base import BaseEstimator
from sklearn.exceptions import NotFittedError

from .._validation import is_positive_int
from ..metrics import parse_metric
from ._device import resolve_device
from ._losses import make_loss
from ._persist import load_model, save_model
from ._training import TrainConfig, check_config


class TorchRanker(BaseEstimator):
    """Base of :class:`MFRanker` and :class:`NetRanker` (not used on its own): the set-up
    both share, from the settings each estimator's ``__init__`` lists with its own defaults
    and stores as given (``gbrank._validation.store_init_params``)."""

    # ---- set-up shared by fit ---------------------------------------------------------
    def _loss_options(self) -> dict:
        """Options passed to :func:`make_loss` (``loss_params``; subclasses may add defaults)."""
        return dict(self.loss_params or {})

    def _setup(self):
        """Validate the shared parameters; returns (loss, metric spec, config, device, rng, generator)."""
        if self.loss_params is not None and not isinstance(self.loss_params, dict):
            raise TypeError(f"loss_params must be a dict of loss options or None, got {self.loss_params!r}")
        loss = make_loss(self.loss, bounding=getattr(self, "bounding", None), training_defaults=True,
                         **self._loss_options())
        metric = parse_metric(self.eval_metric if self.eval_metric is not None else loss.metric)
        # None: the loss's defaults (the registry's DEFAULTS, chosen by benchmarks/mf_learning_rates.py)
        optimizer = loss.optimizer if self.optimizer is None else self.optimizer
        lr = self.learning_rate
        if lr is None and optimizer in ("sgd", "adam"):
            lr = loss.default_learning_rate(optimizer)
        check_config(optimizer, lr, self.weight_decay, self.epochs, self.eval_every, self.early_stopping)
        if not is_positive_int(self.batch_size):
            raise ValueError(f"batch_size must be a positive integer (lists per step), got {self.batch_size!r}")
        device = resolve_device(self.device)
        config = TrainConfig(optimizer=optimizer, learning_rate=float(lr), weight_decay=float(self.weight_decay),
                             epochs=int(self.epochs), eval_every=int(self.eval_every),
                             early_stopping=None if self.early_stopping is None else int(self.early_stopping),
                             higher_is_better=metric.higher_is_better, verbose=int(self.verbose))
        seed = self.random_state
        if isinstance(seed, np.random.Generator) or isinstance(seed, np.random.RandomState):
            raise TypeError("random_state must be an int or None (a seed that can be saved with the model)")
        if seed is None:
            seed = int(np.random.SeedSequence().generate_state(1)[0])
        sequence = np.random.SeedSequence(int(seed))
        data_seed, torch_seed = sequence.spawn(2)
        rng = np.random.default_rng(data_seed)
        generator = torch.Generator().manual_seed(int(torch_seed.generate_state(1, np.uint64)[0] >> 1))
        return loss, metric, config, device, rng, generator

    # ---- fitted state -----------------------------------------------------------------
    def _check_fitted(self):
        if not hasattr(self, "module_"):
            raise NotFittedError(f"this {type(self).__name__} is not fitted yet; call fit first")

    def __sklearn_is_fitted__(self):
        return hasattr(self, "module_")

    # ---- persistence ----------------------------------------------------------------
    def save(self, path) -> None:
        """Save the fitted model (torch weights + parameters + fitted attributes) to ``path``.

        The file is read back by :meth:`load` with ``torch.load(weights_only=True)``: it
        holds only tensors and plain Python values, no pickled code.  Weights are stored
        on the CPU, so a model trained on a GPU loads on a machine without one.
        """
        save_model(self, path)

    @classmethod
    def load(cls, path, map_location="cpu"):
        """Load a model written by :meth:`save` (onto ``map_location``, default the CPU)."""
        model = load_model(path, map_location=map_location)
        if not isinstance(model, cls):
            raise TypeError(f"{path} holds a {type(model).__name__}, not a {cls.__name__}")
        return model
