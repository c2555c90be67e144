"""Shared validation and dispatch for the tile instruction families added for issue 13
(bitwise, arithmetic extensions, compare/select, extra reductions, layout, gather, sort).

The kernels are ``fastisa._kernels.tilex`` over ``csrc/fastisa/tilex.h``; operands are passed
as in :mod:`fastisa.pto._ops` (``_operand``).
"""

from __future__ import annotations

import numpy as np

from .._kernels import tilex as _kx
from ..errors import constraint
from . import _ops
from ._ops import (_BIG, _dtype_in, _operand, _record, _same_dtype, _same_valid, _scalar_array,
                   _scalar_operand, _tile, _vec)
from ._tile import Tile

__all__: list[str] = []

INTS = ("int32", "int16", "int8", "uint32", "uint16", "uint8")
FLOATS = ("float32", "float16", "bfloat16")
NUMERIC = FLOATS + INTS


def tiles(instr, **named):
    """Validates that every named operand is a Vec Tile."""
    for name, t in named.items():
        _tile(instr, name, t)
        _vec(instr, name, t)


def same(instr, dst, **named):
    """Same dtype and valid shape as dst."""
    for name, t in named.items():
        _same_dtype(instr, dst, name, t)
        _same_valid(instr, dst, name, t)


def scalar(instr, name, value, fmt):
    arr = _scalar_array(instr, name, value, fmt)
    return arr, _scalar_operand(arr, fmt)


def run_binary(op, dst, a_op, b_op, R, C):
    if R and C:
        d = _operand(dst)
        _kx.binary(_kx.BIN[op], *d, *a_op, *b_op, R, C)


def run_ternary(op, dst, a_op, b_op, c_op, R, C):
    if R and C:
        d = _operand(dst)
        _kx.ternary(_kx.TER[op], *d, *a_op, *b_op, *c_op, R, C)


def record(instr, dst, factor=1, rows=None, cols=None):
    r = dst.valid_row if rows is None else rows
    c = dst.valid_col if cols is None else cols
    from .. import cost
    cost.record("Vector", instr, _ops.vector_cycles(r, c, dst.dtype.itemsize, factor))


def check_nonzero(instr, name, arr, fmt, what="element(s)"):
    """Integer division/remainder by zero is an error (the CPU simulator asserts)."""
    if not fmt.is_float:
        a = np.asarray(arr)
        if a.size and not np.all(a != 0):
            from ..errors import ConstraintError
            raise ConstraintError(f"{instr}: {name} must be nonzero (integer remainder by zero), "
                                  f"got 0 in {int(np.count_nonzero(a == 0))} {what}")


BIG = _BIG
_ = (Tile, constraint, _dtype_in, _record)
