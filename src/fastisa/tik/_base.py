"""Shared pieces of the TIK instruction families: cost constants, the immediate/range
checks, the legacy ``stride_unit`` rule and :class:`_Operand` (one tensor operand).

Engine cycles recorded into :mod:`fastisa.cost` are ESTIMATES (the spec gives no TIK
timing): Vector = ``VECTOR_ISSUE_CYCLES + repeats``; MTE = ``MTE_ISSUE_CYCLES + 32-byte
blocks moved``.
"""

from __future__ import annotations

import numpy as np

from .. import cost
from ..errors import ConstraintError
from . import _program as P
from ._program import Expr, Tensor, TensorView, as_expr

__all__ = ["VECTOR_ISSUE_CYCLES", "MTE_ISSUE_CYCLES"]

#: Estimated fixed issue cost of one vector instruction, in Vector-engine cycles.
VECTOR_ISSUE_CYCLES = 8
#: Estimated fixed issue cost of one data_move, in MTE cycles (plus 1 per 32-byte block).
MTE_ISSUE_CYCLES = 32

_U64 = 1 << 64


def _s64(v: int) -> int:
    return v - _U64 if v >= 1 << 63 else v


def _tspans(ops):
    """Byte ranges of tensor operands for the engine schedule: a whole tensor of a scope."""
    return [(("tik", id(o.t.tik), o.t.sidx), o.t.byte_off, o.t.byte_off + o.t.nbytes)
            for o in ops]


def _timed(op, engine, name, cyc, ops_r, ops_w):
    """Charge ``cyc`` cycles to ``engine`` with the operands' byte ranges (profiling only)."""
    if not cost._ACTIVE.get():
        return
    cost.record(engine, name, cyc, reads=_tspans(ops_r), writes=_tspans(ops_w),
                source=getattr(op, "_fi_src", ""), domain="tik")


def _is_dyn(x) -> bool:
    return isinstance(x, Expr) and x.const is None


def _static(x):
    return x.const if isinstance(x, Expr) else x


def _check_int(name, param, v, lo, hi, allow_expr=True):
    """Range check of an immediate (ints only); Scalars/Exprs pass (checked at run)."""
    if isinstance(v, Expr):
        if v.const is None:
            if not allow_expr:
                raise ConstraintError(f"{name}: {param} must be an immediate int, got {v!r}")
            if v.dtype not in P._INT_SCALAR_DTYPES + ("bool",) and v.dtype not in (
                    "int8", "uint8"):
                raise ConstraintError(f"{name}: {param} must be a Scalar/Expr of type "
                                      f"int16/int32/int64/uint16/uint32/uint64, got {v.dtype}")
            return
        v = v.const
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise ConstraintError(f"{name}: {param} must be an int, a Scalar or an Expr, "
                              f"got {v!r}")
    if not lo <= int(v) <= hi:
        raise ConstraintError(f"{name}: {param} should be in the range of [{lo}, {hi}], "
                              f"input {param}: {int(v)}")


def _check_repeat(name, v):
    """repeat_times: [0, 255]; an immediate 0 is rejected (a runtime 0 does nothing)."""
    _check_int(name, "repeat_times", v, 0, 255)
    if not _is_dyn(v) and int(_static(v)) == 0:
        raise ConstraintError(f"{name}: repeat_times should be in the range of [0, 255] and an "
                              f"immediate 0 is not supported, input repeat_times: 0")


def _stride_unit(name, target, stride_unit):
    """The legacy forms' ``stride_unit`` -> the unit the instruction uses.

    As TIK's ``_vector_scalar_single_elewise_func``: on Ascend 310/910 (v100) the field
    does not exist and the argument is ignored (forced to 0); elsewhere it must be an int
    in [0, 3] (the TIK source and its CPU debugger (github.com/jizhuoran/caffe-huawei-atlas-convertor, convertor/huawei/te/tik/), TIK ``get_extend_interval``):

    * 0: blk_stride and rep_stride in 32-byte blocks (the ``vec_*`` forms' only mode);
    * 1: blk_stride in blocks, rep_stride is a *gap* in blocks: repeat r+1 starts
      ``(7*blk_stride + 1 + rep_stride)`` blocks after repeat r;
    * 2, 3: block gaps and repeat strides/gaps in elements (blocks no longer 32-byte
      aligned) -- not implemented, NotImplementedError.
    """
    if target.family == "v100":
        return 0
    if isinstance(stride_unit, Expr) and stride_unit.const is not None:
        stride_unit = stride_unit.const
    if isinstance(stride_unit, bool) or not isinstance(stride_unit, (int, np.integer)):
        raise ConstraintError(f"{name}: input stride_unit should be int, input type of "
                              f"stride_unit: {type(stride_unit)}")
    su = int(stride_unit)
    if not 0 <= su <= 3:
        raise ConstraintError(f"{name}: stride_unit should be in the range of [0, 3], "
                              f"input stride_unit: {su}")
    if su >= 2:
        raise NotImplementedError(f"{name}: stride_unit={su} (block gap and repeat "
                                  f"{'stride' if su == 2 else 'gap'} in elements) is not "
                                  f"implemented by fastisa; stride_unit 0 and 1 are")
    return su


def _rep_blocks(su, blks, reps):
    """Repeat strides in 32-byte blocks: with stride_unit 1 ``rep`` is the gap between the
    end of one repeat's last block and the start of the next repeat."""
    if su == 1:
        return [(7 * b + 1) + r for b, r in zip(blks, reps)]
    return reps


def _reduce_stride_unit(name, target, stride_unit):
    """vcadd/vcmax/vcmin: stride_unit is ignored on Ascend 310/910 as for the other legacy
    forms; elsewhere only 0 is implemented."""
    if _stride_unit(name, target, stride_unit) != 0:
        raise NotImplementedError(f"{name}: stride_unit={stride_unit} is not implemented for "
                                  f"the reductions (only stride_unit 0)")


class _Operand:
    """One tensor operand: tensor, start element (int or runtime fn), strides."""

    __slots__ = ("role", "t", "off", "off_fn", "es", "B", "code")

    def __init__(self, name, role, x):
        if isinstance(x, Tensor):
            t, off = x, 0
        elif isinstance(x, TensorView):
            t, off = x.tensor, x.offset
        else:
            raise ConstraintError(f"{name}: {role} must be a Tensor, got {x!r}")
        self.role = role
        self.t = t
        e = as_expr(off)
        self.off = e.const
        self.off_fn = e.fn
        self.es = t.esize
        self.B = 32 // t.esize
        self.code = t.code
