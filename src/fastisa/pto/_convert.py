"""TCVT with an explicit SaturationMode (pto-isa docs/isa/TCVT.md; the CPU simulator
include/pto/cpu/TCvt.hpp gives the values, which the docs leave to the hardware).

``TCVT(dst, src, mode, satMode)`` with ``SaturationMode.ON`` or ``OFF`` (or "ON"/"OFF")
computes what pto-isa's CPU simulator computes on x86-64 (kernel ``fi_tx_cvt_sat`` in
csrc/fastisa/tilex.h, whose comment spells the rules out): ON clamps the source to the range
both types share (NaN to the upper limit) before converting; OFF converts with C++'s
``static_cast`` as compiled there (float -> integer: the mode's rounding, then cvttsd2si, so
NaN and out-of-range values give INT_MIN of the 32- or 64-bit conversion wrapped to the width;
float -> float: round to nearest even whatever the mode, overflow to inf; integer -> integer:
wrap).  Without ``satMode``, TCVT keeps fastisa's documented hardware semantics
(:func:`fastisa.pto.TCVT`).  dtypes: float32, float16, bfloat16, int32, uint32, int16,
uint16, int8, uint8.
"""

from __future__ import annotations

import enum

from .._kernels import tilex as _kx
from ..errors import constraint
from . import _xcommon as X
from ._ops import _dtype_in, _operand, _same_valid, _tile

__all__ = ["SaturationMode"]

_TYPES = X.FLOATS + X.INTS


class SaturationMode(enum.IntEnum):
    """pto's ``SaturationMode``."""
    OFF = 0
    ON = 1


def tcvt_sat(dst, src, mode, sat) -> None:
    instr = "TCVT"
    _tile(instr, "dst", dst)
    _tile(instr, "src", src)
    try:
        sat = SaturationMode[sat.upper()] if isinstance(sat, str) else SaturationMode(sat)
    except (KeyError, ValueError):
        raise constraint(instr, "satMode", "must be SaturationMode.ON or OFF", sat) from None
    _dtype_in(instr, "dst", dst, _TYPES)
    _dtype_in(instr, "src", src, _TYPES)
    _same_valid(instr, dst, "src", src)
    R, C = dst.valid_shape
    if R and C:
        _kx.cvt_sat(int(mode), int(sat), *_operand(dst), *_operand(src, dst), R, C)
    X.record(instr, dst)
