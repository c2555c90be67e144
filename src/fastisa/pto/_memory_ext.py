"""PTO memory instructions beyond TLOAD/TSTORE/TASSIGN (issue 13): TPREFETCH and
TGET_SCALE_ADDR (pto-isa docs/isa/TPREFETCH.md, TGET_SCALE_ADDR.md; CPU simulator
include/pto/cpu/TPrefetch.hpp, TGetScaleAddr.hpp).

* ``TGET_SCALE_ADDR(dst, src)``: the docs bind dst at ``Address(src) >> SHIFT_MX_ADDR``
  (SHIFT_MX_ADDR = 4, include/pto/npu/a5/utils.hpp).  For a TASSIGNed src fastisa does
  exactly that in dst's on-chip buffer; for a free-standing src (no address: the docs' auto
  mode) it does what the CPU simulator does, ``dst.data() = src.data()``: dst aliases src's
  storage.

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

__all__ = ["TPREFETCH", "TGET_SCALE_ADDR"]

#: include/pto/npu/a5/utils.hpp
SHIFT_MX_ADDR = 4


def TPREFETCH(dst: Tile, src: Tile | GlobalTensor) -> None:  # noqa: N802
    """``dst[r, c] = src.flat[r * dst.cols + c]`` over dst's valid region (module doc).

    dst: a Tile; src: a GlobalTensor of dst's dtype whose (rows, cols) are at least dst's valid
    shape (its top-left valid region is read, as TLOAD),
    or a Tile of dst's dtype holding at least ``(validRow - 1) * dst.cols + validCol``
    elements.  Elements of dst outside its valid region keep their contents.  Raises
    ConstraintError on a bad operand (nothing written)."""
    instr = "TPREFETCH"
    # ptoacc: a copy of any element format, the low-precision ones too (docs/isa/TPREFETCH.md
    # lists no dtype rule; PTOAS's A5 TPrefetchOp verifier accepts f8/hif8/fp4)
    _tile(instr, "dst", dst, lowp=True)
    R, C = dst.valid_shape
    if isinstance(src, GlobalTensor):
        if src.format.name != dst.format.name:
            raise constraint(instr, "src.dtype", f"must equal dst's dtype {dst.format.name}",
                             src.format.name)
        # ptoacc: TLOAD's rule -- an ND/DN view at least the valid shape, its top-left read
        from ._tile import _check_view_shape
        _check_view_shape(instr, "src", src, dst)
        vals = src.view2d()[:R, :C]
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


def TGET_SCALE_ADDR(dst: Tile, src: Tile) -> None:  # noqa: N802
    """Bind dst to the scaled address of src (module doc).  dst, src: Tiles.  A TASSIGNed src:
    dst is bound at byte ``src.addr >> 4`` of dst's on-chip buffer (AccessError past the
    buffer's end).  A free-standing src: dst aliases src's storage, which must hold dst's
    ``rows * cols`` elements (ConstraintError otherwise).  dst's previous contents are not
    copied; nothing changes when a check fails."""
    instr = "TGET_SCALE_ADDR"
    _tile(instr, "dst", dst, lowp=True)      # an address binding: any element format
    _tile(instr, "src", src, lowp=True)
    from ..errors import AccessError
    from ._tile import _LOC_BUFFER, _pool
    if src.addr is not None:
        addr = src.addr >> SHIFT_MX_ADDR
        pool = _pool(_LOC_BUFFER[dst.loc])
        if addr + dst.nbytes > pool.size:
            raise AccessError(f"{instr}: address {addr} + dst size {dst.nbytes} bytes exceeds the "
                              f"{_LOC_BUFFER[dst.loc]} capacity of {pool.size} bytes")
        dst._buf = pool[addr: addr + dst.nbytes].view(dst.dtype)
        dst.addr = addr
        return
    if dst.nbytes > src.nbytes:
        raise constraint(instr, "dst size", f"must be at most src's {src.nbytes} bytes (dst "
                         f"aliases src's storage)", dst.nbytes)
    dst._buf = src._buf.view(np.uint8)[: dst.nbytes].view(dst.dtype)
    dst.addr = None

