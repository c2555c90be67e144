"""PTO compare / select / index-generation tile instructions: TCMP, TCMPS, TSEL, TSELS, TCI,
TTRI (pto-isa docs/isa/TCMP.md, TCMPS.md, TSEL.md, TSELS.md, TCI.md, TTRI.md).

The docs leave the packed predicate layout "implementation-defined"; fastisa follows pto-isa's
CPU simulator (include/pto/cpu/TCmp.h, TCmps.hpp, TSel.hpp, TSelS.hpp, TCI.hpp, TTRI.hpp):

* TCMP: dst (uint8: 8 predicates per element, uint32: 32) is zeroed in full, then for each
  source row r < validRow, element w < min(ceil(validCol / bits), dst.validCol) of dst row r
  holds predicates (r, w * bits + k) in bit k (LSB first).
* TCMPS: the predicates of src's whole physical tile (0 outside the valid region) are packed
  8 per byte along each physical row (Cols / 8 bytes per row), the byte stream is laid out
  row-major over dst's valid region (dst.validCol bytes per row), the rest of dst is zero.
  Equality is |a - b| < 1e-9 in double (NE is true when either side is NaN).
* TSEL: the mask bits are consumed as one LSB-first stream over the valid region in row-major
  order, 8 bits per mask element, mask.validCol elements per mask row;
  ``dst = bit ? src0 : src1``.
* TSELS: bit (c % bits) of mask[r, c // bits] (bits = the mask dtype's width) selects src
  or the scalar.
* TCI: dst[0, j] = start + j (or start - j) for j < validCol (row 0 only).
* TTRI: lower (upper=False): dst[r, c] = 1 if c <= r + diagonal else 0; upper: 1 if
  c >= r + diagonal else 0, over the valid region.
"""

from __future__ import annotations

import numpy as np

from .._kernels import tilex as _kx
from ..errors import ConstraintError, constraint
from . import _xcommon as X
from ._ops import _dtype_in, _operand, _same_valid
from ._tile import Tile

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .._types import EnumLike, Int, Real

__all__ = ["CmpMode", "TCMP", "TCMPS", "TSEL", "TSELS", "TCI", "TTRI"]


class CmpMode:
    """pto's ``CmpMode`` names (EQ, NE, LT, GT, GE, LE); instructions take the name or this."""
    EQ, NE, LT, GT, GE, LE = "EQ", "NE", "LT", "GT", "GE", "LE"


def _mode(instr, mode):
    m = str(getattr(mode, "name", mode)).upper().replace("CMPMODE.", "")
    if m not in ("EQ", "NE", "LT", "GT", "GE", "LE"):
        raise constraint(instr, "cmpMode", "must be one of EQ, NE, LT, GT, GE, LE", mode)
    return m


def _bits(instr, R, C, a_op, b_op, mode):
    m = np.zeros(max(1, R * C), dtype=np.uint8)
    if R and C:
        _kx.cmp(_kx.CMP[mode], m, *a_op, *b_op, R, C)
    return m[: R * C].reshape(R, C)


def _cmp_srcs(instr, dst, src0, src1):
    X.tiles(instr, dst=dst, src0=src0)
    _dtype_in(instr, "src0", src0, X.NUMERIC)
    if isinstance(src1, Tile):
        X.tiles(instr, src1=src1)
        X.same(instr, src0, src1=src1)


def TCMP(dst: Tile, src0: Tile, src1: Tile, cmpMode: EnumLike = "EQ") -> None:  # noqa: N802
    """Packed predicate ``p[i, j] = src0[i, j] cmpMode src1[i, j]`` (layout in the module
    doc).  dst: uint8 or uint32 Vec tile with dst.validRow == src0.validRow; src0/src1: one
    dtype, equal valid shapes.  Raises ConstraintError otherwise."""
    instr = "TCMP"
    mode = _mode(instr, cmpMode)
    _cmp_srcs(instr, dst, src0, src1)
    _tile(instr, "src1", src1)
    _dtype_in(instr, "dst", dst, ("uint8", "uint32"))
    R, C = src0.valid_shape
    if dst.valid_row != R:
        raise constraint(instr, "dst.validRow", f"must equal src0.validRow ({R})", dst.valid_row)
    bits = _bits(instr, R, C, _operand(src0), _operand(src1), mode)
    nb = 32 if dst.format.name == "uint32" else 8
    words = min(-(-C // nb), dst.valid_col)
    pad = np.zeros((R, words * nb), dtype=np.uint64)
    w = min(C, words * nb)
    pad[:, :w] = bits[:, :w]
    packed = (pad.reshape(R, words, nb) << np.arange(nb, dtype=np.uint64)).sum(axis=2)
    dst.buffer[...] = 0
    if R and words:
        dst.data[:R, :words] = packed.astype(dst.dtype)
    X.record(instr, dst, 1, R, C)


def _tile(instr, name, t):
    if not isinstance(t, Tile):
        raise constraint(instr, name, "must be a Tile", type(t).__name__)


def TCMPS(dst: Tile, src0: Tile, src1: Tile | Real,  # noqa: N802
          cmpMode: EnumLike = "EQ") -> None:
    """Packed predicate ``src0 cmpMode scalar`` (or a tile src1), laid out as the module doc
    says.  src1: a scalar (converted to src0's dtype) or a Tile of src0's dtype and valid
    shape; dst: a Vec tile (uint8 in practice).  Raises ConstraintError on a bad operand."""
    instr = "TCMPS"
    mode = _mode(instr, cmpMode)
    mode = {"EQ": "EQ_EPS", "NE": "NE_EPS"}.get(mode, mode)
    _cmp_srcs(instr, dst, src0, src1)
    if isinstance(src1, Tile):
        b_op = _operand(src1)
    else:
        b_op = X.scalar(instr, "src1", src1, src0.format)[1]
    R, C = src0.valid_shape
    H, W = src0.rows, src0.cols
    full = np.zeros((H, W), dtype=np.uint8)
    full[:R, :C] = _bits(instr, R, C, _operand(src0), b_op, mode)
    nbytes = W // 8
    stream = np.packbits(full[:, : nbytes * 8], axis=1, bitorder="little").reshape(-1)
    dst.buffer[...] = 0
    dvr, dvc = dst.valid_shape
    if dvc:
        n = min(stream.size, dst.rows * dst.cols, dvr * dvc)
        idx = np.arange(n)
        dst.data[idx // dvc, idx % dvc] = stream[:n].astype(dst.dtype)
    X.record(instr, dst, 1, R, C)


def _select(instr, dst, m, a_op, b_op, R, C):
    if R and C:
        _kx.select(*_operand(dst), np.ascontiguousarray(m, dtype=np.uint8).reshape(-1), *a_op,
                   *b_op, R, C)


def TSEL(dst: Tile, selMask: Tile, src0: Tile, src1: Tile,  # noqa: N802
         tmp: Tile | None = None) -> None:
    """``dst = bit ? src0 : src1`` with the bits of selMask read as the module doc says.
    dst, src0, src1: one dtype, equal valid shapes; selMask: an integer Vec tile holding at
    least ceil(R * C / 8) elements in validCol-wide rows.  ``tmp`` accepted, not written."""
    instr = "TSEL"
    X.tiles(instr, dst=dst, selMask=selMask, src0=src0, src1=src1)
    X.same(instr, dst, src0=src0, src1=src1)
    _dtype_in(instr, "selMask", selMask, X.INTS)
    R, C = dst.valid_shape
    vmc = selMask.valid_col
    need = -(-R * C // 8)
    if R * C and (vmc == 0 or -(-need // vmc) > selMask.rows):
        raise constraint(instr, "selMask", f"must hold ceil({R}*{C}/8) = {need} mask elements "
                         f"in rows of validCol={vmc}", selMask.shape)
    if R * C:
        k = np.arange(R * C)
        e = k // 8
        words = selMask.data[e // vmc, e % vmc].astype(np.uint64)
        m = (words >> (k % 8).astype(np.uint64)) & 1
    else:
        m = np.zeros(0, np.uint8)
    _select(instr, dst, m, _operand(src0, dst), _operand(src1, dst), R, C)
    X.record(instr, dst)


def TSELS(dst: Tile, mask: Tile, src: Tile, tmp: Tile | Real | None = None,  # noqa: N802
          scalar: Real = 0) -> None:
    """``dst[r, c] = bit(mask[r, c // w], c % w) ? src[r, c] : scalar`` (w = the mask
    dtype's bit width).  dst, src: one dtype, equal valid shapes; mask: integer Vec tile with
    at least validRow rows and ceil(validCol / w) columns."""
    instr = "TSELS"
    if not isinstance(tmp, Tile) and tmp is not None and scalar == 0:
        tmp, scalar = None, tmp        # TSELS(dst, mask, src, scalar)
    X.tiles(instr, dst=dst, mask=mask, src=src)
    X.same(instr, dst, src=src)
    _dtype_in(instr, "mask", mask, X.INTS)
    R, C = dst.valid_shape
    w = mask.dtype.itemsize * 8
    if R > mask.rows or -(-C // w) > mask.cols:
        raise constraint(instr, "mask", f"must have >= {R} rows and >= ceil({C}/{w}) columns",
                         mask.shape)
    c = np.arange(C)
    words = mask.data[:R, c // w].astype(np.uint64)
    m = (words >> (c % w).astype(np.uint64)) & 1
    _, sop = X.scalar(instr, "scalar", scalar, dst.format)
    _select(instr, dst, m, _operand(src, dst), sop, R, C)
    X.record(instr, dst)


def TCI(dst: Tile, start: Real, descending: bool = False,  # noqa: N802
        tmp: Tile | None = None) -> None:
    """``dst[0, j] = start + j`` (``start - j`` when descending) for j < dst.validCol, wrapping
    to the dtype; row 0 only (CPU simulator).  dst: int16/uint16/int32/uint32 Vec tile; start
    must be representable in the dtype.  Float dtypes (A2/A3 only) are not implemented: they
    raise NotImplementedError."""
    instr = "TCI"
    X.tiles(instr, dst=dst)
    if dst.format.is_float:
        raise NotImplementedError("TCI: float destination tiles (A2/A3 only) are not "
                                  "implemented in fastisa; use an integer dtype")
    _dtype_in(instr, "dst", dst, ("int16", "uint16", "int32", "uint32"))
    s = X.scalar(instr, "start", start, dst.format)[0]
    C = dst.valid_col
    if dst.valid_row and C:
        _kx.iota(*_operand(dst), int(s[0]), 1 if descending else 0, C)
    X.record(instr, dst, 1, 1, C)


def TTRI(dst: Tile, diagonal: Int = 0, upper: bool = False) -> None:  # noqa: N802
    """Triangular 0/1 mask over dst's valid region (``isUpperOrLower``: 0 = lower, 1 =
    upper): lower ``dst[r, c] = c <= r + diagonal``; upper ``dst[r, c] = c >= r + diagonal``.
    dst: a Vec tile of a numeric dtype."""
    instr = "TTRI"
    X.tiles(instr, dst=dst)
    _dtype_in(instr, "dst", dst, X.NUMERIC)
    if isinstance(diagonal, bool) or not isinstance(diagonal, (int, np.integer)):
        raise constraint(instr, "diagonal", "must be an integer", diagonal)
    R, C = dst.valid_shape
    r = np.arange(R)[:, None]
    c = np.arange(C)[None, :]
    m = (c >= r + diagonal) if upper else (c <= r + diagonal)
    one = X.scalar(instr, "1", 1, dst.format)[1]
    zero = X.scalar(instr, "0", 0, dst.format)[1]
    _select(instr, dst, m, one, zero, R, C)
    X.record(instr, dst)


_ = (ConstraintError, _same_valid)
