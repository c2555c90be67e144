"""PTO arithmetic tile instructions beyond the basic set: remainders (TREM, TREMS, TFMOD,
TFMODS), power (TPOW, TPOWS), leaky/parametric ReLU (TPRELU, TLRELU, TSUBRELU), three-input
sums (TADDC, TSUBC, TADDSC, TSUBSC) and the multiply-add forms (TAXPY, TFUSEDMULADD,
TFUSEDMULADDRELU, TMULADDDST).

Sources: pto-isa docs/isa/<NAME>.md for the formula and the operand rules; where the docs are
silent (rounding between the steps of a multi-operation instruction, the sign fix-up of TREM,
integer TPOW), the CPU simulator (include/pto/cpu/ElementOp.h, TBinSOps.hpp), which computes
in the element type T with C++ semantics:

* TREM(a, b) = fmod(a, b), plus b when the result is nonzero and a, b have different signs
  (``(a >= 0) != (b >= 0)``): Python's ``%`` for finite values; TFMOD(a, b) = fmod(a, b)
  (integers: C's truncating ``%``).  Float results are exact, the fix-up addition rounds once.
* TPOW(a, b) = pow((double)a, (double)b) rounded once to T; integers truncate toward zero
  (NaN / out of the int32 range give INT32_MIN, then wrap to T).
* TPRELU(a, s) = a > 0 ? a : a * s (one rounding); TLRELU the same with a scalar slope;
  TSUBRELU(a, b) = relu(a - b) (rounded, then clamped; integers wrap, then clamp).
* TADDC = (a + b) + c, TSUBC = (a - b) + c, TFUSEDMULADD: dst = src0 * dst + src1 - each
  computed in float32 for float types and rounded once to T (the simulator's half arithmetic
  keeps float intermediates); float32 rounds after every operation.
* TMULADDDST: dst = round_T(round_T(src0 * src1) + dst); TFUSEDMULADDRELU: dst =
  relu(round_T(round_T(src0 * dst) + src1)); TAXPY: dst = round_T(dst + round_T(src * s)).

Every instruction iterates over dst's valid region and leaves the rest of dst untouched;
operands are Vec tiles with equal valid shapes and one dtype.  Integer remainder by zero is a
ConstraintError (the simulator asserts); float division by zero gives NaN as fmod does.
"""

from __future__ import annotations

import numpy as np

from ..errors import constraint
from . import _xcommon as X
from ._ops import _dtype_in, _operand
from ._tile import Tile

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .._types import Real

__all__ = ["TREM", "TREMS", "TFMOD", "TFMODS", "TPOW", "TPOWS", "TPRELU", "TLRELU", "TSUBRELU",
           "TADDC", "TSUBC", "TADDSC", "TSUBSC", "TAXPY", "TFUSEDMULADD", "TFUSEDMULADDRELU",
           "TMULADDDST"]

_NUM = X.NUMERIC
_FL = X.FLOATS


def _bin(instr, op, dst, src0, src1, allowed, tmp=None):
    X.tiles(instr, dst=dst, src0=src0, src1=src1)
    if tmp is not None:
        X.tiles(instr, tmp=tmp)
    _dtype_in(instr, "dst", dst, allowed)
    X.same(instr, dst, src0=src0, src1=src1)
    if op in ("REM", "FMOD"):
        X.check_nonzero(instr, "src1", src1.valid, src1.format)
    R, C = dst.valid_shape
    X.run_binary(op, dst, _operand(src0, dst), _operand(src1, dst), R, C)
    X.record(instr, dst, 2)


def _bins(instr, op, dst, src, scalar, allowed, tmp=None):
    X.tiles(instr, dst=dst, src=src)
    if tmp is not None:
        X.tiles(instr, tmp=tmp)
    _dtype_in(instr, "dst", dst, allowed)
    X.same(instr, dst, src=src)
    arr, sop = X.scalar(instr, "scalar", scalar, src.format)
    if op in ("REM", "FMOD"):
        X.check_nonzero(instr, "scalar", arr, src.format, "scalar")
    R, C = dst.valid_shape
    X.run_binary(op, dst, _operand(src, dst), sop, R, C)
    X.record(instr, dst, 2)


def TREM(dst: Tile, src0: Tile, src1: Tile, tmp: Tile | None = None) -> None:  # noqa: N802
    """``dst = src0 - floor(src0 / src1) * src1`` (the remainder with src1's sign;
    docs/isa/TREM.md), computed as fmod plus the CPU simulator's sign fix-up (module doc).
    dtypes float32/float16/bfloat16 and the integer types; ``tmp`` accepted, not written."""
    _bin("TREM", "REM", dst, src0, src1, _NUM, tmp)


def TREMS(dst: Tile, src: Tile, scalar: Real, tmp: Tile | None = None) -> None:  # noqa: N802
    """TREM with a scalar divisor (docs/isa/TREMS.md)."""
    _bins("TREMS", "REM", dst, src, scalar, _NUM, tmp)


def TFMOD(dst: Tile, src0: Tile, src1: Tile) -> None:  # noqa: N802
    """``dst = fmod(src0, src1)`` (the remainder with src0's sign, docs/isa/TFMOD.md);
    integers: C's truncating ``%``."""
    _bin("TFMOD", "FMOD", dst, src0, src1, _NUM)


def TFMODS(dst: Tile, src: Tile, scalar: Real) -> None:  # noqa: N802
    """TFMOD with a scalar divisor (docs/isa/TFMODS.md)."""
    _bins("TFMODS", "FMOD", dst, src, scalar, _NUM)


def TPOW(dst: Tile, base: Tile, exp: Tile, tmp: Tile | None = None) -> None:  # noqa: N802
    """``dst = base ** exp`` elementwise (docs/isa/TPOW.md), pow in float64 rounded once to
    the dtype (integers: truncated, module doc)."""
    _bin("TPOW", "POW", dst, base, exp, _NUM, tmp)


def TPOWS(dst: Tile, base: Tile, exp: Real, tmp: Tile | None = None) -> None:  # noqa: N802
    """``dst = base ** exp`` with a scalar exponent (docs/isa/TPOWS.md)."""
    _bins("TPOWS", "POW", dst, base, exp, _NUM, tmp)


def TPRELU(dst: Tile, src0: Tile, src1: Tile, tmp: Tile | None = None) -> None:  # noqa: N802
    """``dst = src0 > 0 ? src0 : src0 * src1`` (per-element slope, docs/isa/TPRELU.md)."""
    _bin("TPRELU", "PRELU", dst, src0, src1, _NUM, tmp)


def TLRELU(dst: Tile, src: Tile, slope: Real) -> None:  # noqa: N802
    """``dst = src > 0 ? src : src * slope`` (scalar slope, docs/isa/TLRELU.md)."""
    _bins("TLRELU", "PRELU", dst, src, slope, _NUM)


def TSUBRELU(dst: Tile, src0: Tile, src1: Tile) -> None:  # noqa: N802
    """``dst = max(src0 - src1, 0)`` (docs/isa/TSUBRELU.md)."""
    _bin("TSUBRELU", "SUBRELU", dst, src0, src1, _NUM)


def _ter(instr, op, dst, a, b, c):
    """a, b, c: Tile or ("scalar", value)."""
    ops = []
    for name, t in (("a", a), ("b", b), ("c", c)):
        if isinstance(t, Tile):
            ops.append(_operand(t, dst))
        else:
            ops.append(X.scalar(instr, name, t[1], dst.format)[1])
    R, C = dst.valid_shape
    X.run_ternary(op, dst, *ops, R, C)
    X.record(instr, dst, 2)


def _ter_check(instr, dst, allowed, **named):
    X.tiles(instr, dst=dst, **named)
    _dtype_in(instr, "dst", dst, allowed)
    X.same(instr, dst, **named)


def TADDC(dst: Tile, src0: Tile, src1: Tile, src2: Tile) -> None:  # noqa: N802
    """``dst = src0 + src1 + src2`` (docs/isa/TADDC.md; rounding as the module doc)."""
    _ter_check("TADDC", dst, _NUM, src0=src0, src1=src1, src2=src2)
    _ter("TADDC", "ADDC", dst, src0, src1, src2)


def TSUBC(dst: Tile, src0: Tile, src1: Tile, src2: Tile) -> None:  # noqa: N802
    """``dst = src0 - src1 + src2`` (docs/isa/TSUBC.md)."""
    _ter_check("TSUBC", dst, _NUM, src0=src0, src1=src1, src2=src2)
    _ter("TSUBC", "SUBC", dst, src0, src1, src2)


def TADDSC(dst: Tile, src0: Tile, scalar: Real, src1: Tile) -> None:  # noqa: N802
    """``dst = src0 + scalar + src1`` (docs/isa/TADDSC.md)."""
    _ter_check("TADDSC", dst, _NUM, src0=src0, src1=src1)
    _ter("TADDSC", "ADDC", dst, src0, ("s", scalar), src1)


def TSUBSC(dst: Tile, src0: Tile, scalar: Real, src1: Tile) -> None:  # noqa: N802
    """``dst = src0 - scalar + src1`` (docs/isa/TSUBSC.md)."""
    _ter_check("TSUBSC", dst, _NUM, src0=src0, src1=src1)
    _ter("TSUBSC", "SUBC", dst, src0, ("s", scalar), src1)


def TAXPY(dst: Tile, src0: Tile, scalar: Real) -> None:  # noqa: N802
    """``dst = dst + src0 * scalar`` (docs/isa/TAXPY.md), the product rounded to the dtype
    before the addition (CPU simulator); float32/float16, dst and src0 one dtype, or the
    widening form dst float32 with src0 float16 (and a float16 scalar, the docs' "diff
    path": src0 and the scalar are widened to float32, exactly, and the float32 form runs;
    the docs define the widening, the CPU simulator's ``half * half`` product would round
    to half first, fastisa follows the docs).  Equal valid shapes."""
    if isinstance(dst, Tile) and isinstance(src0, Tile) and dst.dtype.name == "float32" \
            and src0.dtype.name == "float16":
        X.tiles("TAXPY", dst=dst, src0=src0)
        X._same_valid("TAXPY", dst, "src0", src0)
        if isinstance(scalar, bool) or not isinstance(scalar, (int, float, np.integer,
                                                               np.floating)):
            raise constraint("TAXPY", "scalar", "must be a number", type(scalar).__name__)
        wide = Tile(src0.loc, "float32", src0.rows, src0.cols, blayout=src0.blayout,
                    valid_row=src0.valid_row, valid_col=src0.valid_col)
        wide.valid[...] = src0.valid.astype(np.float32)
        TAXPY(dst, wide, np.float32(np.float16(scalar)))
        return
    _ter_check("TAXPY", dst, _FL, src0=src0)
    _ter("TAXPY", "MULADD_R", dst, src0, ("s", scalar), dst)


def TFUSEDMULADD(dst: Tile, src0: Tile, src1: Tile) -> None:  # noqa: N802
    """``dst = src0 * dst + src1`` (docs/isa/TFUSEDMULADD.md; rounding as the module doc)."""
    _ter_check("TFUSEDMULADD", dst, _NUM, src0=src0, src1=src1)
    _ter("TFUSEDMULADD", "FMA", dst, src0, dst, src1)


def TFUSEDMULADDRELU(dst: Tile, src0: Tile, src1: Tile) -> None:  # noqa: N802
    """``dst = relu(src0 * dst + src1)`` (docs/isa/TFUSEDMULADDRELU.md), the product and the
    sum each rounded to the dtype."""
    _ter_check("TFUSEDMULADDRELU", dst, _NUM, src0=src0, src1=src1)
    _ter("TFUSEDMULADDRELU", "MULADD_R_RELU", dst, src0, dst, src1)


def TMULADDDST(dst: Tile, src0: Tile, src1: Tile) -> None:  # noqa: N802
    """``dst = src0 * src1 + dst`` (docs/isa/TMULADDDST.md), the product and the sum each
    rounded to the dtype."""
    _ter_check("TMULADDDST", dst, _NUM, src0=src0, src1=src1)
    _ter("TMULADDDST", "MULADD_R", dst, src0, src1, dst)
