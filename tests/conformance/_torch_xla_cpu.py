"""A CPU stand-in for ``torch_xla`` (the Neuron device of the tutorials' torch scripts),
for the NKI conformance harness: ``torch_xla.device()`` and
``torch_xla.core.xla_model.xla_device()`` are the CPU, so a script that moves its torch
tensors "to the device" and calls an NKI kernel on them runs the kernel on fastisa (torch
tensors in, torch tensors out) and compares with its torch reference on the CPU.
``torch_neuronx`` (imported by some of them, unused) is an empty module.  Installed only
when torch is importable and torch_xla is not; nothing of the tutorials is
copied."""

from __future__ import annotations

import importlib.util
import sys
import types


def install() -> bool:
    if importlib.util.find_spec("torch_xla") is not None or \
            importlib.util.find_spec("torch") is None:
        return False
    import torch

    def device(*args, **kwargs):
        return torch.device("cpu")

    top = types.ModuleType("torch_xla")
    top.__doc__ = "fastisa conformance stand-in: the device is the CPU"
    top.device = device
    core = types.ModuleType("torch_xla.core")
    xm = types.ModuleType("torch_xla.core.xla_model")
    xm.xla_device = device
    xm.mark_step = lambda *a, **k: None
    xm.wait_device_ops = lambda *a, **k: None
    top.core = core
    core.xla_model = xm
    top.__path__ = []
    core.__path__ = []
    sys.modules.update({"torch_xla": top, "torch_xla.core": core,
                        "torch_xla.core.xla_model": xm})
    if importlib.util.find_spec("torch_neuronx") is None:     # imported, never used by them
        sys.modules["torch_neuronx"] = types.ModuleType("torch_neuronx")
    return True
