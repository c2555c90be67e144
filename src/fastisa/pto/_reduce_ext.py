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
"""

from __future__ import annotations

from .._kernels import tilex as _kx
from ..errors import constraint
from . import _xcommon as X
from ._ops import _dtype_in, _operand, _run_binary, _run_unary
from ._tile import Tile

__all__ = ["TROWPROD", "TCOLPROD", "TROWARGMAX", "TROWARGMIN", "TCOLARGMAX", "TCOLARGMIN",
           "TPARTADD", "TPARTMUL", "TPARTMAX", "TPARTMIN"]

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
    """(dst, src, tmp) -> (dst, src); (dstVal, dstIdx, src, tmp) -> (dstVal, dstIdx, src)."""
    args = list(args)
    if len(args) in (3, 4) and args[-1] is None:
        return args[:-1]
    if len(args) == 4 or (len(args) == 3 and isinstance(args[2], Tile)
                          and args[2].format.name != args[1].format.name
                          and args[0].format.name in ("int32", "uint32")):
        args = args[:-1]
    return args


def _part(instr, op, dst, src0, src1):
    X.tiles(instr, dst=dst, src0=src0, src1=src1)
    _dtype_in(instr, "dst", dst, X.NUMERIC)
    X._ops._same_dtype(instr, dst, "src0", src0)
    X._ops._same_dtype(instr, dst, "src1", src1)
    R, C = dst.valid_shape
    r0, c0 = min(R, src0.valid_row), min(C, src0.valid_col)
    r1, c1 = min(R, src1.valid_row), min(C, src1.valid_col)
    zero = X.scalar(instr, "0", 0, dst.format)[1]
    a = _operand(src0, dst)
    b = _operand(src1, dst)
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
