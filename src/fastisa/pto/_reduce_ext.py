"""PTO reductions beyond sum/max/min: TROWPROD, TCOLPROD, TROWARGMAX, TROWARGMIN, TCOLARGMAX,
TCOLARGMIN, and the partial elementwise ops TPARTADD, TPARTMUL, TPARTMAX, TPARTMIN
(pto-isa docs/isa/<NAME>.md; CPU simulator include/pto/cpu/TRowProd.hpp, TColProd.hpp,
TReduceIdx.hpp, TPartOp.hpp where the docs are silent).

* Products fold left to right (top to bottom) from 1, rounding to the dtype after every
  multiplication (integers wrap).
* Arg-reductions return the index of the first maximum (minimum): a later element replaces
  the best only if strictly greater (less), so ties keep the first and NaN never wins (a NaN
  first element stays the answer).  The value forms also write the best value.
* TPART<op>: over dst's valid region, ``op(src0, src1)`` where both sources are valid,
  the valid one's value where only one is, and 0 where neither is.
* TPARTARGMAX / TPARTARGMIN (docs/isa/TPARTARGMAX.md, TPARTARGMIN.md): value and index tile
  pairs; where both sources are valid, src0's pair if ``src0Val > src1Val`` (``<`` for
  ARGMIN), else src1's (ties and NaN take src1: the docs' ``>=`` rule and the simulator's
  ``src0 > src1`` test, include/pto/cpu/TPartArgMax.hpp); the valid pair where one is valid;
  (0, 0) where neither is (TPartOp.hpp TPartInstr2).
"""

from __future__ import annotations

import numpy as np

from .._kernels import tilex as _kx
from ..errors import constraint
from . import _xcommon as X
from ._ops import _dtype_in, _operand, _run_binary, _run_unary
from ._tile import Tile

__all__ = ["TROWPROD", "TCOLPROD", "TROWARGMAX", "TROWARGMIN", "TCOLARGMAX", "TCOLARGMIN",
           "TPARTADD", "TPARTMUL", "TPARTMAX", "TPARTMIN", "TPARTARGMAX", "TPARTARGMIN", "TPAIRREDUCESUM"]

_PROD = ("float32", "float16", "bfloat16", "int32", "int16")


def _prod(instr, cols, dst, src):
    X.tiles(instr, dst=dst, src=src)
    _dtype_in(instr, "src", src, _PROD)
    X._ops._same_dtype(instr, src, "dst", dst)
    R, C = src.valid_shape
    if cols:
        if dst.valid_col != C:
            raise constraint(instr, "dst.validCol", f"must equal src.validCol ({C})", dst.valid_col)
    elif dst.valid_row != R:
        raise constraint(instr, "dst.validRow", f"must equal src.validRow ({R})", dst.valid_row)
    if R and C:
        _kx.prod(1 if cols else 0, *_operand(dst), *_operand(src, dst), R, C)
    X.record(instr, src, 1)


def TROWPROD(dst: Tile, src: Tile, tmp: Tile | None = None) -> None:  # noqa: N802
    """``dst[i, 0] = prod_j src[i, j]`` over src's valid region (docs/isa/TROWPROD.md);
    float32/float16/bfloat16/int32/int16, dst of src's dtype with dst.validRow ==
    src.validRow; ``tmp`` accepted, not written."""
    _prod("TROWPROD", 0, dst, src)


def TCOLPROD(dst: Tile, src: Tile) -> None:  # noqa: N802
    """``dst[0, j] = prod_i src[i, j]`` (docs/isa/TCOLPROD.md); as TROWPROD, dst.validCol ==
    src.validCol."""
    _prod("TCOLPROD", 1, dst, src)


def _arg(instr, cols, is_max, args):
    if len(args) == 3:
        dval, didx, src = args[0], args[1], args[2]
    elif len(args) == 2:
        dval, didx, src = None, args[0], args[1]
    else:
        raise constraint(instr, "operands", "must be (dst, src[, tmp]) or "
                         "(dstVal, dstIdx, src, tmp)", len(args))
    X.tiles(instr, dstIdx=didx, src=src)
    _dtype_in(instr, "dstIdx", didx, ("int32", "uint32"))
    _dtype_in(instr, "src", src, X.NUMERIC)
    R, C = src.valid_shape
    if R == 0 or C == 0:
        raise constraint(instr, "src valid shape", "must be nonzero", src.valid_shape)
    if cols:
        if didx.valid_col != C:
            raise constraint(instr, "dst.validCol", f"must equal src.validCol ({C})", didx.valid_col)
    elif didx.valid_row != R:
        raise constraint(instr, "dst.validRow", f"must equal src.validRow ({R})", didx.valid_row)
    vop = (None, 0, 0, 0)
    if dval is not None:
        X.tiles(instr, dstVal=dval)
        X._ops._same_dtype(instr, src, "dstVal", dval)
        vop = _operand(dval)
    _kx.argreduce(1 if cols else 0, 1 if is_max else 0, *_operand(didx), *vop,
                  *_operand(src), R, C)
    X.record(instr, src, 1)


def TROWARGMAX(*args: Tile) -> None:  # noqa: N802
    """``TROWARGMAX(dst, src[, tmp])``: ``dst[i, 0]`` = index of the first maximum of row i
    of src's valid region; ``TROWARGMAX(dstVal, dstIdx, src, tmp)`` also writes the value
    (docs/isa/TROWARGMAX.md).  dst: int32/uint32; src: any numeric dtype, nonzero valid
    shape; dst.validRow == src.validRow."""
    _arg("TROWARGMAX", 0, 1, _strip_tmp(args))


def TROWARGMIN(*args: Tile) -> None:  # noqa: N802
    """The first minimum's index per row (as TROWARGMAX)."""
    _arg("TROWARGMIN", 0, 0, _strip_tmp(args))


def TCOLARGMAX(*args: Tile) -> None:  # noqa: N802
    """``dst[0, j]`` = index of the first maximum of column j (docs/isa/TCOLARGMAX.md);
    dst.validCol == src.validCol; value form as TROWARGMAX."""
    _arg("TCOLARGMAX", 1, 1, _strip_tmp(args))


def TCOLARGMIN(*args: Tile) -> None:  # noqa: N802
    """The first minimum's index per column (as TCOLARGMAX)."""
    _arg("TCOLARGMIN", 1, 0, _strip_tmp(args))


def _strip_tmp(args):
    """(dst, src, tmp) -> (dst, src); (dstVal, dstIdx, src, tmp) -> (dstVal, dstIdx, src).
    Three operands are always (dst, src, tmp): the C++ intrinsics
    (include/pto/common/pto_instr.hpp) have only the (dst, src, tmp) and (dstVal, dstIdx,
    src, tmp) forms, so an int32 src with an int32 tmp is no value form."""
    args = list(args)
    if len(args) in (3, 4):
        args = args[:-1]
    return args


def _snapshot(t, dst):
    """t's kernel operand, read from a copy when t shares memory with dst (dst is cleared and
    written in several passes, so an in-place source must be read before the first)."""
    buf, code, rs, cs = _operand(t)
    if np.may_share_memory(t._buf, dst._buf):
        buf = buf.copy()
    return buf, code, rs, cs


def _part(instr, op, dst, src0, src1):
    X.tiles(instr, dst=dst, src0=src0, src1=src1)
    _dtype_in(instr, "dst", dst, X.NUMERIC)
    X._ops._same_dtype(instr, dst, "src0", src0)
    X._ops._same_dtype(instr, dst, "src1", src1)
    R, C = dst.valid_shape
    r0, c0 = min(R, src0.valid_row), min(C, src0.valid_col)
    r1, c1 = min(R, src1.valid_row), min(C, src1.valid_col)
    zero = X.scalar(instr, "0", 0, dst.format)[1]
    a = _snapshot(src0, dst)
    b = _snapshot(src1, dst)
    _run_unary("COPY", dst, zero, R, C)
    _run_unary("COPY", dst, a, r0, c0)
    _run_unary("COPY", dst, b, r1, c1)
    _run_binary(op, dst, a, X.BIG, b, X.BIG, min(r0, r1), min(c0, c1))
    X.record(instr, dst)


def TPARTADD(dst: Tile, src0: Tile, src1: Tile) -> None:  # noqa: N802
    """Partial add (docs/isa/TPARTADD.md): src0 + src1 where both are valid, the valid
    source where one is, 0 elsewhere in dst's valid region."""
    _part("TPARTADD", "ADD", dst, src0, src1)


def TPARTMUL(dst: Tile, src0: Tile, src1: Tile) -> None:  # noqa: N802
    """Partial multiply (docs/isa/TPARTMUL.md), as TPARTADD."""
    _part("TPARTMUL", "MUL", dst, src0, src1)


def TPARTMAX(dst: Tile, src0: Tile, src1: Tile) -> None:  # noqa: N802
    """Partial max (docs/isa/TPARTMAX.md), as TPARTADD."""
    _part("TPARTMAX", "MAX", dst, src0, src1)


def TPARTMIN(dst: Tile, src0: Tile, src1: Tile) -> None:  # noqa: N802
    """Partial min (docs/isa/TPARTMIN.md), as TPARTADD."""
    _part("TPARTMIN", "MIN", dst, src0, src1)


_ARG_VAL = ("float32", "float16", "bfloat16", "int32", "int16", "int8", "uint8")
_ARG_IDX = ("int32", "uint32", "int16", "uint16")


def _part_arg(instr, mode, dst_val, src0_val, src1_val, dst_idx, src0_idx, src1_idx):
    X.tiles(instr, dstVal=dst_val, src0Val=src0_val, src1Val=src1_val, dstIdx=dst_idx,
            src0Idx=src0_idx, src1Idx=src1_idx)
    _dtype_in(instr, "dstVal", dst_val, _ARG_VAL)
    X._ops._same_dtype(instr, dst_val, "src0Val", src0_val)
    X._ops._same_dtype(instr, dst_val, "src1Val", src1_val)
    _dtype_in(instr, "dstIdx", dst_idx, _ARG_IDX)
    X._ops._same_dtype(instr, dst_idx, "src0Idx", src0_idx)
    X._ops._same_dtype(instr, dst_idx, "src1Idx", src1_idx)
    if dst_val.format.name == "float32" and dst_idx.dtype.itemsize != 4:
        raise constraint(instr, "dstIdx.dtype", "must be int32 or uint32 for float32 values",
                         dst_idx.format.name)
    for nv, v, ni, i in (("dstVal", dst_val, "dstIdx", dst_idx),
                         ("src0Val", src0_val, "src0Idx", src0_idx),
                         ("src1Val", src1_val, "src1Idx", src1_idx)):
        if v.valid_shape != i.valid_shape:
            raise constraint(instr, f"{ni} valid shape", f"must equal {nv}'s {v.valid_shape}",
                             i.valid_shape)
    R, C = dst_val.valid_shape
    if (R, C) not in (src0_val.valid_shape, src1_val.valid_shape):
        raise constraint(instr, "dstVal valid shape", f"must equal src0Val's "
                         f"{src0_val.valid_shape} or src1Val's {src1_val.valid_shape}", (R, C))
    if not (R and C):
        return
    r0, c0 = min(R, src0_val.valid_row), min(C, src0_val.valid_col)
    r1, c1 = min(R, src1_val.valid_row), min(C, src1_val.valid_col)
    dsts = (dst_val, dst_idx)
    a = [_snapshot(t, d) for t, d in ((src0_val, dst_val), (src0_idx, dst_idx))]
    b = [_snapshot(t, d) for t, d in ((src1_val, dst_val), (src1_idx, dst_idx))]
    # a source may also share memory with the other destination
    a = [_snapshot_any(t, op, dsts) for t, op in zip((src0_val, src0_idx), a)]
    b = [_snapshot_any(t, op, dsts) for t, op in zip((src1_val, src1_idx), b)]
    rb, cb = min(r0, r1), min(c0, c1)
    m = np.zeros(max(1, rb * cb), np.uint8)
    if rb and cb:
        _kx.cmp(_kx.CMP[mode], m, *a[0], *b[0], rb, cb)
    for k, d in enumerate(dsts):
        _run_unary("COPY", d, X.scalar(instr, "0", 0, d.format)[1], R, C)
        _run_unary("COPY", d, a[k], r0, c0)
        _run_unary("COPY", d, b[k], r1, c1)
        if rb and cb:
            _kx.select(*_operand(d), m, *a[k], *b[k], rb, cb)
    X.record(instr, dst_val)


def _snapshot_any(t, op, dsts):
    if any(np.may_share_memory(op[0], d._buf) for d in dsts):
        return (op[0].copy(),) + tuple(op[1:])
    return op


def TPARTARGMAX(dstVal: Tile, src0Val: Tile, src1Val: Tile, dstIdx: Tile, src0Idx: Tile,  # noqa: N802,N803
                src1Idx: Tile) -> None:
    """Partial max with indices (docs/isa/TPARTARGMAX.md): over dstVal's valid region,
    ``(dstVal, dstIdx) = (src0Val, src0Idx) if src0Val > src1Val else (src1Val, src1Idx)``
    where both sources are valid, the valid source's pair where one is, (0, 0) elsewhere.
    Values float32/float16/bfloat16/int32/int16/int8/uint8 (one dtype for the three value
    tiles), indices int32/uint32/int16/uint16 (one dtype; 32-bit for float32 values); each
    index tile's valid shape equals its value tile's; dstVal's valid shape equals src0Val's or
    src1Val's.  Raises ConstraintError otherwise."""
    _part_arg("TPARTARGMAX", "GT", dstVal, src0Val, src1Val, dstIdx, src0Idx, src1Idx)


def TPARTARGMIN(dstVal: Tile, src0Val: Tile, src1Val: Tile, dstIdx: Tile, src0Idx: Tile,  # noqa: N802,N803
                src1Idx: Tile) -> None:
    """Partial min with indices (docs/isa/TPARTARGMIN.md): as TPARTARGMAX with
    ``src0Val < src1Val`` choosing src0's pair."""
    _part_arg("TPARTARGMIN", "LT", dstVal, src0Val, src1Val, dstIdx, src0Idx, src1Idx)


def TPAIRREDUCESUM(dst: Tile, src: Tile) -> None:  # noqa: N802
    """Pair-reduction sum (docs/isa/TPairReduceSum.md): with (R, C) = dst's valid shape,
    ``dst[i, k] = src[i, 2k] + src[i, 2k + 1]`` for k < ceil(C / 2), the missing partner of
    an odd C's last pair taken as 0 (a real ``x + 0``: -0 becomes +0); everything else of
    dst's tile -- the upper half of each valid row and the whole area outside the valid
    region -- becomes 0, as the CPU simulator (include/pto/cpu/TPairReduceSum.hpp) clears the
    whole tile first.  Sums are rounded once to T (integers wrap).

    dst, src: row-major Vec tiles of one dtype with the same valid shape.  The docs list
    float32/float16 (the NPU implementations' checks); the CPU simulator and its tests also
    use int32/int16, which fastisa accepts too (and bfloat16, int8, uint8 and the unsigned
    types, same rule).  Raises ConstraintError otherwise."""
    instr = "TPAIRREDUCESUM"
    X.tiles(instr, dst=dst, src=src)
    _dtype_in(instr, "dst", dst, X.NUMERIC)
    X.same(instr, dst, src=src)
    from ._tile import BLayout
    for name, t in (("dst", dst), ("src", src)):
        if t.blayout != BLayout.RowMajor:
            raise constraint(instr, f"{name}.blayout", "must be RowMajor", t.blayout.name)
    R, C = dst.valid_shape
    s = _snapshot(src, dst)
    zero = X.scalar(instr, "0", 0, dst.format)[1]
    whole = _Whole(dst)
    _run_unary("COPY", whole, zero, dst.rows, dst.cols)
    half = C // 2
    buf, code, rs, cs = s
    isz = dst.dtype.itemsize
    if R and half:
        even = (buf, code, rs, 2 * cs)
        odd = (buf[cs * isz:], code, rs, 2 * cs)
        _run_binary("ADD", dst, even, X.BIG, odd, X.BIG, R, half)
    if R and C % 2:
        last = (buf[(C - 1) * cs * isz:], code, rs, cs)
        d = _operand(dst)
        tail = (d[0][half * dst._cs * isz:], d[1], d[2], d[3])
        from ._ops import _k, _OP
        _k.binary(_OP["ADD"], *tail, *last, X.BIG, *zero, X.BIG, R, 1)
    X.record(instr, dst, 1, dst.rows, dst.cols)


class _Whole:
    """A tile seen with its whole physical shape as the valid region."""

    def __init__(self, t):
        self._buf, self.format, self.dtype = t._buf, t.format, t.dtype
        self._rs, self._cs = t._rs, t._cs
