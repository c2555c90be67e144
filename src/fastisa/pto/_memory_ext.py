"""PTO memory instructions beyond TLOAD/TSTORE/TASSIGN (issue 13): TPREFETCH
(pto-isa docs/isa/TPREFETCH.md; CPU simulator include/pto/cpu/TPrefetch.hpp).

* ``TPREFETCH(dst, src)``: the docs call the caching behaviour implementation-defined (a hint
  before a TLOAD); the CPU simulator copies ``src``'s elements into dst's valid region, element
  (r, c) from flat position ``r * dst.cols + c`` of src's data.  fastisa does the same copy:
  from a GlobalTensor as TLOAD does for the valid region (without TLOAD's pad fill of the
  rest), from a Tile (the form pto-isa's own CPU test uses) its storage in that flat order.
"""

from __future__ import annotations

import numpy as np

from .. import cost
from ..errors import constraint
from ._ops import _tile
from ._tile import GlobalTensor, Tile

__all__ = ["TPREFETCH"]


def TPREFETCH(dst: Tile, src: Tile | GlobalTensor) -> None:  # noqa: N802
    """``dst[r, c] = src.flat[r * dst.cols + c]`` over dst's valid region (module doc).

    dst: a Tile; src: a GlobalTensor of dst's dtype whose (rows, cols) equal dst's valid shape,
    or a Tile of dst's dtype holding at least ``(validRow - 1) * dst.cols + validCol``
    elements.  Elements of dst outside its valid region keep their contents.  Raises
    ConstraintError on a bad operand (nothing written)."""
    instr = "TPREFETCH"
    _tile(instr, "dst", dst)
    R, C = dst.valid_shape
    if isinstance(src, GlobalTensor):
        if src.format.name != dst.format.name:
            raise constraint(instr, "src.dtype", f"must equal dst's dtype {dst.format.name}",
                             src.format.name)
        if (src.rows, src.cols) != (R, C):
            raise constraint(instr, "src shape", f"(rows, cols) must equal dst's valid shape "
                             f"{(R, C)}", (src.rows, src.cols))
        vals = src.view2d()
    elif isinstance(src, Tile):
        if src.format.name != dst.format.name:
            raise constraint(instr, "src.dtype", f"must equal dst's dtype {dst.format.name}",
                             src.format.name)
        need = (R - 1) * dst.cols + C if R and C else 0
        if need > src._buf.size:
            raise constraint(instr, "src size", f"must hold {need} elements "
                             f"((validRow - 1) * dst.cols + validCol)", src._buf.size)
        flat = src._buf
        idx = (np.arange(R)[:, None] * dst.cols + np.arange(C)[None, :])
        vals = flat[idx] if R and C else np.zeros((R, C), dst.dtype)
    else:
        raise constraint(instr, "src", "must be a GlobalTensor or a Tile", type(src).__name__)
    if R and C:
        np.copyto(dst.valid, vals)
    nbytes = R * C * dst.dtype.itemsize
    cost.record("MTE2", instr, 64 + -(-nbytes // 64), nbytes=nbytes)
