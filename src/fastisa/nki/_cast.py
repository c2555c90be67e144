"""Type casting through float32 (the NKI docs, page NKI ISA API Common Fields (github.com/aws-neuron/aws-neuron-sdk, nki/api/nki.api.shared.rst) "Type Casting"), shared by the NKI instructions.

* :func:`to_f32` -- any non-packed tensor's elements as float32: float formats exactly,
  integers rounded to nearest even (exact up to 2^24), bool_ as 0.0 / 1.0.
* :func:`from_f32` -- float32 values to a destination format with one RNE rounding
  (integers: RNE, saturate to the destination range, NaN -> 0) via :func:`fastisa.convert`;
  ``bool_`` is the integer range [0, 1] (RNE, saturate, NaN -> 0), as everywhere.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes as _dt
from ..errors import ConstraintError

__all__ = ["to_f32", "from_f32", "require_unpacked"]


def require_unpacked(instr: str, param: str, fmt) -> None:
    if fmt.kind == "packed":
        raise ConstraintError(f"{instr}: {param} dtype must not be a packed x4 type when the "
                              f"instruction converts values, got {fmt.name}")


def to_f32(data: np.ndarray, fmt) -> np.ndarray:
    """float32 copy of ``data`` (storage of format ``fmt``)."""
    fmt = _dt.lookup(fmt)
    if fmt.kind == "packed":
        raise ConstraintError(f"to_f32: packed type {fmt.name} has no per-element float32 view")
    return np.asarray(data).astype(np.float32)


def from_f32(x: np.ndarray, fmt) -> np.ndarray:
    """float32 array ``x`` rounded once to format ``fmt`` (an array of ``fmt.np_dtype``)."""
    fmt = _dt.lookup(fmt)
    x = np.asarray(x, dtype=np.float32)
    if fmt.name == "float32":
        return x.copy()
    from .. import convert   # floats: RNE (ml_dtypes overflow rules); ints: RNE, saturate, NaN->0
    return np.asarray(convert(x, fmt))
