"""Where tensors live: ``device="auto"`` picks CUDA when present, else the CPU."""

from __future__ import annotations

import torch


def resolve_device(device: str | torch.device = "auto") -> torch.device:
    """Turn ``"auto"``, ``"cpu"``, ``"cuda"``, ``"cuda:1"`` or a ``torch.device`` into a device.

    ``"auto"`` is ``cuda`` when ``torch.cuda.is_available()``, else ``cpu``.  Asking for
    CUDA on a machine without it raises instead of silently falling back.
    """
    if isinstance(device, torch.device):
        dev = device
    elif not isinstance(device, str):
        raise TypeError(f"device must be 'auto', 'cpu', 'cuda[:n]' or a torch.device, got {device!r}")
    elif device == "auto":
        dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    else:
        try:
            dev = torch.device(device)
        except RuntimeError as err:
            raise ValueError(f"unknown device {device!r}; use 'auto', 'cpu' or 'cuda[:n]'") from err
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device {device!r} was requested but CUDA is not available here; "
                         "use device='auto' or 'cpu'")
    return dev
