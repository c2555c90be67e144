"""PTO dequantisation instructions (issue 13): TDEQUANT and TADDDEQRELU (pto-isa
docs/isa/TDEQUANT.md, TAddDeqRelu.md; CPU simulator include/pto/cpu/TDeQuant.hpp,
TAddDeqRelu.hpp).

* ``TDEQUANT(dst, src, scale, offset)``: ``dst[i, j] = (float(src[i, j]) - offset[i, p]) *
  scale[i, p]`` with ``p = min(j, max(1, scale.validCol) - 1)`` (the docs' parameter-column
  rule), each step in float32 (the simulator's ``(T(src) - T(offset)) * T(scale)``).
* ``TADDDEQRELU(dst, src0, src1, deqScale, tmp)``: the docs' sequence: ``x = src0 + src1``
  (int32, wrapping), converted to float32 (rounded to nearest even), ``((x * 2^-17) *
  deqScale) * 2^17`` in float32, ReLU, then a saturating conversion to float16 (+-65504 at
  most, the docs' "saturating behavior"; the simulator's plain cast would give +inf).  The
  two powers of two are exact except where the middle product leaves float32's normal range.

Every step runs the existing elementwise C kernels (tile.h) on float32 scratch storage.
"""

from __future__ import annotations

import numpy as np

from ..dtypes import lookup
from ..errors import constraint
from . import _xcommon as X
from ._ops import _dtype_in, _k, _OP, _operand, _row_major, _same_valid, _scalar_operand
from ._tile import Tile

import typing as _typing

if _typing.TYPE_CHECKING:
    from .._types import Real

__all__ = ["TDEQUANT", "TADDDEQRELU"]

_F32 = lookup("float32")


def _scratch(R, C, fmt=_F32):
    """A contiguous R x C scratch operand of format fmt (row-major)."""
    buf = np.zeros(max(1, R * C), dtype=fmt.np_dtype)
    return buf, (buf.view(np.uint8), fmt.code, C, 1)


def _f32(v):
    return _scalar_operand(np.array([v], dtype=np.float32), _F32)


def _bin(op, d, a, b, R, C, avc=X.BIG, bvc=X.BIG):
    if R and C:
        _k.binary(_OP[op], *d, *a, avc, *b, bvc, R, C)


def _un(op, d, s, R, C):
    if R and C:
        _k.unary(_OP[op], *d, *s, R, C)


def TDEQUANT(dst: Tile, src: Tile, scale: Tile, offset: Tile) -> None:  # noqa: N802
    """Per-row affine dequantisation (module doc).

    dst: float32 row-major Vec tile; src: int8 or int16 row-major Vec tile with dst's valid
    shape; scale, offset: float32 Vec tiles of one shape and layout (typically [M, 1],
    one value per row) whose valid rows equal dst's.  Elements outside dst's valid region
    keep their contents.  Raises ConstraintError otherwise (nothing written)."""
    instr = "TDEQUANT"
    X.tiles(instr, dst=dst, src=src, scale=scale, offset=offset)
    _dtype_in(instr, "dst", dst, ("float32",))
    _dtype_in(instr, "src", src, ("int8", "int16"))
    _dtype_in(instr, "scale", scale, ("float32",))
    _dtype_in(instr, "offset", offset, ("float32",))
    _row_major(instr, "dst", dst)
    _row_major(instr, "src", src)
    _same_valid(instr, dst, "src", src)
    R, C = dst.valid_shape
    for name, t in (("scale", scale), ("offset", offset)):
        if t.valid_row != R:
            raise constraint(instr, f"{name}.validRow", f"must equal dst.validRow ({R})",
                             t.valid_row)
        if t.valid_col != scale.valid_col:
            raise constraint(instr, f"{name}.validCol", f"must equal scale.validCol "
                             f"({scale.valid_col})", t.valid_col)
    if not (R and C):
        return
    pc = max(1, scale.valid_col)
    buf, t = _scratch(R, C)
    _un("COPY", t, _operand(src), R, C)                 # float(src), exact
    for op, par in (("SUB", offset), ("MUL", scale)):
        p = _operand(par)
        n = min(pc, C)
        if pc == 1:
            _bin(op, t, t, p, R, C, bvc=1)
        else:
            _bin(op, t, t, p, R, n)
            if C > n:                                   # columns past the parameters: the last
                last = (p[0][(pc - 1) * par._cs * 4:], p[1], p[2], 0)
                tt = (t[0][n * 4:], t[1], t[2], t[3])
                _bin(op, tt, tt, last, R, C - n)
    _un("COPY", _operand(dst), (buf.view(np.uint8), _F32.code, C, 1), R, C)
    X.record(instr, dst, 3)


def TADDDEQRELU(dst: Tile, src0: Tile, src1: Tile, deqScale: Real,  # noqa: N802,N803
                tmp: Tile | None = None) -> None:
    """``dst = half_sat(relu(((float(src0 + src1) * 2^-17) * deqScale) * 2^17))`` (module doc).

    dst: float16 row-major Vec tile; src0, src1: int32 row-major Vec tiles with dst's valid
    shape (validRow, validCol > 0); deqScale: a real number (rounded to float32); tmp: an
    int32 Vec tile at least as large as dst's valid region (accepted, not written: fastisa
    keeps the intermediates in its own scratch, as the docs say A5 does).  Raises
    ConstraintError otherwise (nothing written)."""
    instr = "TADDDEQRELU"
    X.tiles(instr, dst=dst, src0=src0, src1=src1)
    _dtype_in(instr, "dst", dst, ("float16",))
    _dtype_in(instr, "src0", src0, ("int32",))
    _dtype_in(instr, "src1", src1, ("int32",))
    for name, t in (("dst", dst), ("src0", src0), ("src1", src1)):
        _row_major(instr, name, t)
    _same_valid(instr, dst, "src0", src0)
    _same_valid(instr, dst, "src1", src1)
    R, C = dst.valid_shape
    if R == 0 or C == 0:
        raise constraint(instr, "dst valid shape", "must have validRow > 0 and validCol > 0",
                         (R, C))
    if tmp is not None:
        X.tiles(instr, tmp=tmp)
        _dtype_in(instr, "tmp", tmp, ("int32",))
        if tmp.rows * tmp.cols < R * C:
            raise constraint(instr, "tmp", f"must hold dst's valid region ({R} x {C})",
                             tmp.shape)
    s = X.scalar(instr, "deqScale", deqScale, _F32)[1]
    ibuf, ti = _scratch(R, C, lookup("int32"))
    fbuf, tf = _scratch(R, C)
    _bin("ADD", ti, _operand(src0), _operand(src1), R, C)      # int32, wrapping
    _un("COPY", tf, ti, R, C)                                   # to float32, RNE
    _bin("MUL", tf, tf, _f32(2.0 ** -17), R, C)
    _bin("MUL", tf, tf, s, R, C)
    _bin("MUL", tf, tf, _f32(2.0 ** 17), R, C)
    _bin("MAX", tf, tf, _f32(0.0), R, C)
    _bin("MIN", tf, tf, _f32(65504.0), R, C)                    # saturate, then round
    _un("COPY", _operand(dst), tf, R, C)
    X.record(instr, dst, 4)


_ = Tile
