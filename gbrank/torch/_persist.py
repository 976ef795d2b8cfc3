"""Save and load fitted torch estimators: one ``torch.save`` file of tensors and plain values.

The file holds ``{"format", "class", "params", "module", "state_dict", "fitted"}``; numpy
arrays become tensors (numeric) or lists (ids of other types), the history a dict of
columns.  Loading uses ``torch.load(weights_only=True)`` (no pickled code runs) and
``map_location`` (a model trained on a GPU loads on a CPU).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import torch

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


def _classes():
    from ._mf import MatrixFactorization, MFRanker
    from ._net import NetRanker, RankingNet

    return {
        "MFRanker": (MFRanker, lambda m: {"n_users": m.user_factors.num_embeddings,
                                          "n_items": m.item_factors.num_embeddings,
                                          "n_factors": m.user_factors.embedding_dim},
                     MatrixFactorization,
                     ("users_", "items_", "n_users_", "n_items_", "dropped_users_", "seen_indptr_", "seen_items_",
                      "eval_metric_", "history_", "best_epoch_", "best_score_", "device_")),
        "NetRanker": (NetRanker, lambda m: {"n_features": m.hidden.in_features, "hidden": m.hidden.out_features,
                                            "activation": type(m.activation).__name__.lower()},
                      RankingNet,
                      ("n_features_in_", "eval_metric_", "history_", "best_epoch_", "best_score_", "device_")),
    }


def save_model(model, path) -> None:
    model._check_fitted()
    name = type(model).__name__
    classes = _classes()
    if name not in classes:
        raise TypeError(f"cannot save a {name}; known: {sorted(classes)}")
    _, config, _, attrs = classes[name]
    params = model.get_params(deep=False)
    for key, value in params.items():
        if not isinstance(value, (str, int, float, bool, type(None), dict, list, tuple)):
            raise TypeError(f"parameter {key}={value!r} cannot be saved; use plain values (e.g. an int seed)")
    payload = {
        "format": FORMAT,
        "class": name,
        "params": params,
        "module": config(model.module_),
        "state_dict": {k: v.detach().cpu() for k, v in model.module_.state_dict().items()},
        "fitted": {a: _pack(getattr(model, a)) for a in attrs},
    }
    torch.save(payload, path)


def load_model(path, map_location="cpu"):
    from ._losses import make_loss

    payload = torch.load(path, map_location=map_location, weights_only=True)
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise ValueError(f"{path} is not a gbrank torch model file (format {FORMAT})")
    cls, _, module_cls, attrs = _classes()[payload["class"]]
    model = cls(**payload["params"])
    module = module_cls(**payload["module"])
    module.load_state_dict(payload["state_dict"])
    model.module_ = module.eval()
    for a in attrs:
        setattr(model, a, _unpack(payload["fitted"][a]))
    model.loss_ = make_loss(model.loss, **model._loss_options())
    return model
