"""Conversions between number formats (placeholder until the formats work lands)."""

from __future__ import annotations

import numpy as np

from . import dtypes as _dt
from ._kernels import convert as _k

__all__ = ["convert", "pack_x4", "unpack_x4"]


def convert(x, dtype, *, saturate=False, out=None):
    src = _dt.lookup(np.asarray(x).dtype)
    dst = _dt.lookup(dtype)
    a = np.ascontiguousarray(x)
    if src.name == "float32" and dst.name in ("bfloat16", "float16") and not saturate:
        res = np.empty(a.shape, dst.np_dtype) if out is None else out
        f = _k.f32_to_bf16 if dst.name == "bfloat16" else _k.f32_to_f16
        f(a.reshape(-1), res.reshape(-1).view(np.uint16))
        return res
    raise NotImplementedError(f"convert: {src.name} -> {dst.name} is not implemented yet")


def pack_x4(x, dtype):
    raise NotImplementedError("pack_x4 is not implemented yet")


def unpack_x4(words, dtype):
    raise NotImplementedError("unpack_x4 is not implemented yet")
