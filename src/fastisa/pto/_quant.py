"""TDEQUANT: affine dequantisation of an int8/int16 tile to float32 (pto-isa
docs/isa/TDEQUANT.md; the CPU simulator include/pto/cpu/TDeQuant.hpp, hw-native-sys/pto-isa).

``TDEQUANT(dst, src, scale, offset)``: for ``(i, j)`` in dst's valid region,
``dst[i, j] = (float(src[i, j]) - offset[i, p]) * scale[i, p]`` with
``p = min(j, max(1, scale.validCol) - 1)`` (the docs' and the simulator's parameter column:
one value per row in the usual ``M x 1`` form), the subtraction and the product each
rounded to float32 (round to nearest even).  Elements outside dst's valid region keep
their contents.
"""

from __future__ import annotations

import numpy as np

from ..errors import constraint
from . import _xcommon as X
from ._ops import _dtype_in

__all__ = ["TDEQUANT"]


def TDEQUANT(dst, src, scale, offset) -> None:  # noqa: N802
    """Dequantise ``src`` (int8/int16 Vec tile, dst's valid shape) into ``dst`` (float32 Vec
    tile) with per-row ``scale`` and ``offset`` (float32 Vec tiles of one shape whose valid
    rows equal dst's); the formula is in the module doc.  Raises ConstraintError."""
    instr = "TDEQUANT"
    X.tiles(instr, dst=dst, src=src, scale=scale, offset=offset)
    _dtype_in(instr, "dst", dst, ("float32",))
    _dtype_in(instr, "src", src, ("int8", "int16"))
    _dtype_in(instr, "scale", scale, ("float32",))
    _dtype_in(instr, "offset", offset, ("float32",))
    X._same_valid(instr, dst, "src", src)
    R, C = dst.valid_shape
    for name, t in (("scale", scale), ("offset", offset)):
        if t.valid_row != R:
            raise constraint(instr, f"{name}.validRow", f"must equal dst.validRow ({R})",
                             t.valid_row)
    if offset.valid_col != scale.valid_col:
        raise constraint(instr, "offset.validCol", f"must equal scale.validCol "
                         f"({scale.valid_col})", offset.valid_col)
    if not (R and C):
        return
    para = max(1, scale.valid_col)
    cols = np.minimum(np.arange(C), para - 1)
    sc = scale.data[:R, :][:, cols]
    of = offset.data[:R, :][:, cols]
    x = src.valid.astype(np.float32)
    dst.valid[...] = (x - of) * sc
    X.record(instr, dst, 2)
