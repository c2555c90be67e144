"""PTO bitwise tile instructions: TAND, TOR, TXOR, TNOT, TSHL, TSHR and the tile/scalar forms
TANDS, TORS, TXORS, TSHLS, TSHRS (pto-isa docs/isa/TAND.md, TOR.md, TXOR.md, TNOT.md,
TSHL.md, TSHR.md and their S forms; CPU simulator include/pto/cpu/ElementOp.h).

Every instruction iterates over dst's valid region and leaves the rest of dst untouched.
Operands: Vec tiles of one integer dtype (int8/uint8/int16/uint16/int32/uint32) with equal
valid shapes.  Shifts: a left shift fills with zeros and drops bits above the width; a right
shift is arithmetic for signed and logical for unsigned dtypes (C++ ``>>``); shift counts
outside [0, 64) are not defined by the docs: fastisa gives 0 (left) or the sign fill (right).
"""

from __future__ import annotations

from . import _xcommon as X
from ._ops import _dtype_in, _operand

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .._types import Real
    from ._tile import Tile

__all__ = ["TAND", "TOR", "TXOR", "TNOT", "TSHL", "TSHR", "TANDS", "TORS", "TXORS", "TSHLS",
           "TSHRS"]


def _bin(instr, op, dst, src0, src1):
    X.tiles(instr, dst=dst, src0=src0, src1=src1)
    _dtype_in(instr, "dst", dst, X.INTS)
    X.same(instr, dst, src0=src0, src1=src1)
    R, C = dst.valid_shape
    X.run_binary(op, dst, _operand(src0, dst), _operand(src1, dst), R, C)
    X.record(instr, dst)


def _bins(instr, op, dst, src, scalar):
    X.tiles(instr, dst=dst, src=src)
    _dtype_in(instr, "dst", dst, X.INTS)
    X.same(instr, dst, src=src)
    _, sop = X.scalar(instr, "scalar", scalar, src.format)
    R, C = dst.valid_shape
    X.run_binary(op, dst, _operand(src, dst), sop, R, C)
    X.record(instr, dst)


def TAND(dst: Tile, src0: Tile, src1: Tile) -> None:  # noqa: N802
    """``dst = src0 & src1`` (docs/isa/TAND.md).  Raises ConstraintError on a non-integer
    dtype, a dtype or valid-shape mismatch, or a non-Vec tile."""
    _bin("TAND", "AND", dst, src0, src1)


def TOR(dst: Tile, src0: Tile, src1: Tile) -> None:  # noqa: N802
    """``dst = src0 | src1`` (docs/isa/TOR.md); as TAND."""
    _bin("TOR", "OR", dst, src0, src1)


def TXOR(dst: Tile, src0: Tile, src1: Tile, tmp: Tile | None = None) -> None:  # noqa: N802
    """``dst = src0 ^ src1`` (docs/isa/TXOR.md); ``tmp`` (the A2/A3 scratch tile) is accepted
    and not written."""
    if tmp is not None:
        X.tiles("TXOR", tmp=tmp)
    _bin("TXOR", "XOR", dst, src0, src1)


def TSHL(dst: Tile, src0: Tile, src1: Tile) -> None:  # noqa: N802
    """``dst = src0 << src1`` elementwise (docs/isa/TSHL.md); as TAND."""
    _bin("TSHL", "SHL", dst, src0, src1)


def TSHR(dst: Tile, src0: Tile, src1: Tile) -> None:  # noqa: N802
    """``dst = src0 >> src1`` elementwise, arithmetic for signed dtypes (docs/isa/TSHR.md)."""
    _bin("TSHR", "SHR", dst, src0, src1)


def TNOT(dst: Tile, src: Tile) -> None:  # noqa: N802
    """``dst = ~src`` (docs/isa/TNOT.md); integer Vec tiles, equal valid shapes."""
    instr = "TNOT"
    X.tiles(instr, dst=dst, src=src)
    _dtype_in(instr, "dst", dst, X.INTS)
    X.same(instr, dst, src=src)
    R, C = dst.valid_shape
    s = _operand(src, dst)
    X.run_binary("NOT", dst, s, s, R, C)
    X.record(instr, dst)


def TANDS(dst: Tile, src: Tile, scalar: Real) -> None:  # noqa: N802
    """``dst = src & scalar``; the scalar must be representable in src's dtype
    (docs/isa/TANDS.md)."""
    _bins("TANDS", "AND", dst, src, scalar)


def TORS(dst: Tile, src: Tile, scalar: Real) -> None:  # noqa: N802
    """``dst = src | scalar`` (docs/isa/TORS.md)."""
    _bins("TORS", "OR", dst, src, scalar)


def TXORS(dst: Tile, src: Tile, scalar: Real, tmp: Tile | None = None) -> None:  # noqa: N802
    """``dst = src ^ scalar`` (docs/isa/TXORS.md); ``tmp`` accepted, not written."""
    if tmp is not None:
        X.tiles("TXORS", tmp=tmp)
    _bins("TXORS", "XOR", dst, src, scalar)


def TSHLS(dst: Tile, src: Tile, scalar: Real) -> None:  # noqa: N802
    """``dst = src << scalar`` (docs/isa/TSHLS.md)."""
    _bins("TSHLS", "SHL", dst, src, scalar)


def TSHRS(dst: Tile, src: Tile, scalar: Real) -> None:  # noqa: N802
    """``dst = src >> scalar`` (docs/isa/TSHRS.md)."""
    _bins("TSHRS", "SHR", dst, src, scalar)
