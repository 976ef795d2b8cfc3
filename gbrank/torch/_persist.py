"""Save and load fitted torch estimators: one ``torch.save`` file of tensors and plain values.

The file holds ``{"format", "class", "params", "module", "state_dict", "fitted"}``; numpy
arrays become tensors (numeric) or lists (ids of other types), the history a dict of
columns.  Loading uses ``torch.load(weights_only=True)`` (no pickled code runs) and
``map_location`` (a model trained on a GPU loads on a CPU).  The estimator classes register
themselves with :func:`persistable`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import torch

from ._losses import make_loss

FORMAT = "gbrank.torch/1"


def _pack(value):
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "biuf":
            return {"__ndarray__": torch.from_numpy(np.array(value, copy=True, order="C")), "dtype": str(value.dtype)}
        return {"__list__": value.tolist(), "dtype": str(value.dtype)}
    if isinstance(value, pd.DataFrame):
        return {"__frame__": {c: _pack(value[c].to_numpy()) for c in value.columns}, "columns": list(value.columns)}
    if isinstance(value, np.generic):
        return value.item()
    return value


def _unpack(value):
    if isinstance(value, dict):
        if "__ndarray__" in value:
            return value["__ndarray__"].numpy().astype(value["dtype"], copy=False)
        if "__list__" in value:
            return np.asarray(value["__list__"], dtype=value["dtype"] if value["dtype"] != "object" else object)
        if "__frame__" in value:
            return pd.DataFrame({c: _unpack(value["__frame__"][c]) for c in value["columns"]})
    return value


#: class name -> the estimator class that :func:`save_model` and :func:`load_model` handle
PERSISTABLE: dict[str, type] = {}


def persistable(cls):
    """Class decorator of the estimator modules: let save and load handle ``cls``.

    The class says what a file holds: its torch module class (``_module_class``), the
    module's constructor arguments (``_module_config(module) -> dict``) and the fitted
    attributes saved beside the weights (``_fitted_attributes``).  The estimator modules
    fill this registry, so this module imports none of them (no import cycle).
    """
    for need in ("_module_class", "_module_config", "_fitted_attributes"):
        if getattr(cls, need, None) is None:
            raise TypeError(f"{cls.__name__} cannot be persistable without {need}")
    PERSISTABLE[cls.__name__] = cls
    return cls


def save_model(model, path) -> None:
    model._check_fitted()
    name = type(model).__name__
    if PERSISTABLE.get(name) is not type(model):
        raise TypeError(f"cannot save a {name}; known: {sorted(PERSISTABLE)}")
    cls = PERSISTABLE[name]
    params = model.get_params(deep=False)
    for key, value in params.items():
        if not isinstance(value, (str, int, float, bool, type(None), dict, list, tuple)):
            raise TypeError(f"parameter {key}={value!r} cannot be saved; use plain values (e.g. an int seed)")
    payload = {
        "format": FORMAT,
        "class": name,
        "params": params,
        "module": cls._module_config(model.module_),
        "state_dict": {k: v.detach().cpu() for k, v in model.module_.state_dict().items()},
        "fitted": {a: _pack(getattr(model, a)) for a in cls._fitted_attributes},
    }
    torch.save(payload, path)


def load_model(path, map_location="cpu"):
    payload = torch.load(path, map_location=map_location, weights_only=True)
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise ValueError(f"{path} is not a gbrank torch model file (format {FORMAT})")
    if payload.get("class") not in PERSISTABLE:
        raise ValueError(f"{path} holds a {payload.get('class')!r}; known: {sorted(PERSISTABLE)}")
    cls = PERSISTABLE[payload["class"]]
    model = cls(**payload["params"])
    module = cls._module_class(**payload["module"])
    module.load_state_dict(payload["state_dict"])
    model.module_ = module.eval()
    for a in cls._fitted_attributes:
        setattr(model, a, _unpack(payload["fitted"][a]))
    model.loss_ = make_loss(model.loss, **model._loss_options())
    return model
