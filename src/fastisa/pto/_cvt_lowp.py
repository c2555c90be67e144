"""TCVT to and from the low-precision and 64-bit element formats (branch ptolowp, issue 13):
fp8 E4M3 / E5M2, HiF8, fp4 E2M1 / E1M2 (x2 packed), int4 and int64 / uint64.

Sources: pto-isa docs/isa/TCVT.md "Supported Conversions" (the dtype pairs, A2A3 and A5) and
include/pto/cpu/TCvt.hpp (the CPU simulator).  The docs give the pairs and say the value is
``cast_rmode(src)``; they do not spell out overflow, so fastisa reads them as for the other
TCVT pairs (:func:`fastisa.pto.TCVT`):

* **Without satMode** (the documented hardware semantics): the source value is exact in
  float64; it is rounded once to dst's format with ``mode`` (NONE/RINT: nearest, ties to
  even; ROUND: nearest, ties away; FLOOR/CEIL/TRUNC; ODD).  Float targets overflow to +-inf
  where the format has one (E5M2, HiF8), to NaN for E4M3 (no inf, as ml_dtypes), and clamp
  for fp4 (no inf or NaN); rounding toward zero (or away from an infinity) gives the largest
  finite value.  Integer targets (int4, int64, uint64) saturate; NaN -> 0.
  Low-precision sources decode exactly; a float32/float16/bfloat16 destination is then
  written by fastisa's TCVT kernel (one rounding).  HiF8 encoding with CAST_ROUND equals
  en_dtypes' ``astype(hifloat8)`` (ties away from zero, the HiF8 paper's rounding).
* **With satMode** (SaturationMode.ON / OFF), for int4 and fp4 the CPU simulator's
  computation (TCvt.hpp ``TCvt_Impl``), documented here because it differs from the above:
  ON first clamps the source to the range both types share (SafeLimits: int4 [-8, 7], E2M1
  [-6, 6], E1M2 [-4, 3.5]; NaN to the upper limit; not for fp4 sources); a float source
  bound for int4 or fp4 is then rounded to an *integer* with ``mode``
  (applyRoundingToIntegral), and an fp4 source is decoded and rounded to an integer too;
  int4 results clamp to [-8, 7] (NaN -> 7); fp4 results are encoded by MXTypes.hpp's
  ``MXType(double)``, which truncates the mantissa and wraps the exponent field (E1M2 values
  >= 2 wrap around; the simulator's E1M2 has bias 1, max 1.75, while its SafeLimits say 3.5).
  For the fp8 / HiF8 / 64-bit pairs satMode follows the documented reading: ON clamps to
  +-max finite (NaN -> 0), OFF is the form without satMode.

Pairs (docs, A2A3 and A5; "sim" = a pair only the CPU simulator's tests use): FP32 -> I64,
FP8_E4M3, FP8_E5M2, H8, S4 (sim), FP4 (sim); FP16 -> S4, H8; BF16 -> FP4_E1M2X2, FP4_E2M1X2;
I32 -> I64; I64 -> FP32, I32; S4 -> FP16, FP32 (sim); FP8_E4M3, FP8_E5M2, H8 -> FP32;
FP4_E1M2X2, FP4_E2M1X2 -> BF16, FP32 (sim).

Tile shapes: equal valid rows, and equal valid element counts per row, where an x2 tile's
valid_col counts containers (two fp4 codes each).
"""

from __future__ import annotations

import numpy as np

from .. import cost
from .._kernels import tile as _k
from ..errors import ConstraintError, constraint
from . import _lowp_formats as L
from ._tile import KERNEL_FORMATS, Tile, TileType

__all__: list[str] = []

_FP4 = ("float4_e2m1x2", "float4_e1m2x2")
_F = ("float32", "float16", "bfloat16")

#: (src, dst) pairs a TCVT with a low-precision or 64-bit operand accepts.
PAIRS = frozenset([
    ("float32", "int64"), ("float32", "float8_e4m3fn"), ("float32", "float8_e5m2"),
    ("float32", "hifloat8"), ("float32", "int4"), ("float32", "float4_e2m1x2"),
    ("float32", "float4_e1m2x2"),
    ("float16", "int4"), ("float16", "hifloat8"),
    ("bfloat16", "float4_e1m2x2"), ("bfloat16", "float4_e2m1x2"),
    ("int32", "int64"), ("int64", "float32"), ("int64", "int32"),
    ("int4", "float16"), ("int4", "float32"),
    ("float8_e4m3fn", "float32"), ("float8_e5m2", "float32"), ("hifloat8", "float32"),
    ("float4_e1m2x2", "bfloat16"), ("float4_e2m1x2", "bfloat16"),
    ("float4_e1m2x2", "float32"), ("float4_e2m1x2", "float32"),
])

_SIM_LIMITS = {"int4": (-8.0, 7.0), "float4_e2m1x2": (-6.0, 6.0), "float4_e1m2x2": (-4.0, 3.5),
               "float16": (-65504.0, 65504.0)}


def is_lowp(t: Tile) -> bool:
    return t.format.name not in KERNEL_FORMATS


def _values(t: Tile) -> np.ndarray:
    """The valid region's element values, exact, as float64 [R, elements]."""
    v = t.valid
    name = t.format.name
    if name in KERNEL_FORMATS or name in ("int64", "uint64"):
        with np.errstate(invalid="ignore"):          # (ml_dtypes warns on NaN bfloat16)
            return v.astype(np.float64)
    return L.decode(name, np.ascontiguousarray(v).view(np.uint8))


def _round_int(x: np.ndarray, mode: int) -> np.ndarray:
    """applyRoundingToIntegral (and the documented rounding of a value to an integer)."""
    if mode in (0, 1):
        return np.rint(x)
    if mode == 2:
        return np.trunc(x + np.copysign(0.5, x))
    if mode == 3:
        return np.floor(x)
    if mode == 4:
        return np.ceil(x)
    if mode == 5:
        return np.trunc(x)
    f = np.floor(x)                     # CAST_ODD as the simulator: half -> the odd neighbour
    frac = x - f
    odd = np.mod(f, 2) != 0
    return np.where(frac > 0.5, f + 1, np.where(frac < 0.5, f, np.where(odd, f, f + 1)))


def _mx_encode(x: np.ndarray, e_bits: int, m_bits: int, bias: int) -> np.ndarray:
    """MXTypes.hpp ``MXType(double)`` as the CPU simulator computes it: mantissa truncated,
    exponent rebiased and masked to its field (no rounding, no saturation)."""
    bits = np.ascontiguousarray(x, dtype=np.float64).view(np.uint64).astype(np.int64)
    sign = (bits >> 63) & 1
    dexp = (bits >> 52) & 0x7FF
    dman = bits & ((1 << 52) - 1)
    oman = dman >> (52 - m_bits)
    oexp = dexp + bias - 1023
    neg = oexp < 0
    shift = np.where(neg, 1 - oexp, 0)
    oman = np.where(neg, (oman | (1 << m_bits)) >> np.minimum(shift, 62), oman)
    oexp = np.where(neg, 0, oexp)
    code = (sign << (e_bits + m_bits)) | ((oexp & ((1 << e_bits) - 1)) << m_bits) \
        | (oman & ((1 << m_bits) - 1))
    code = np.where((x == 0) | (dexp == 0), 0, code)
    return (code & 0xF).astype(np.uint8)


def _store(dst: Tile, codes_or_values, name: str) -> None:
    R, C = dst.valid_shape
    if name in ("int64", "uint64"):
        np.copyto(dst.valid, codes_or_values)
        return
    raw = L.pack_codes(name, codes_or_values)
    np.copyto(dst.valid, raw.reshape(R, C).view(dst.dtype))


def _to_kernel_float(dst: Tile, vals: np.ndarray, mode: int) -> None:
    """Write float64 values that are exact in float32 into a kernel-format dst with the C
    TCVT kernel (one rounding with mode)."""
    R, C = dst.valid_shape
    tmp = np.ascontiguousarray(vals, dtype=np.float32)
    from ._ops import _operand
    d = _operand(dst)
    f32 = 13    # FI_FLOAT32
    _k.cvt(int(mode), d[0], d[1], d[2], d[3], tmp.view(np.uint8).reshape(-1), f32, C, 1, R, C)


def _int_saturate(x: np.ndarray, lo: float, hi: float, dt) -> np.ndarray:
    y = np.where(np.isnan(x), 0.0, np.clip(x, lo, hi))
    if dt == np.uint64 or dt == np.int64:
        # float64 cannot hold 2^63 - 1: clip the top to the representable bound
        big = y >= float(np.iinfo(dt).max)
        out = y.astype(dt) if not big.any() else np.where(big, 0, y).astype(dt)
        if big.any():
            out[big] = np.iinfo(dt).max
        return out
    return y.astype(dt)


def tcvt(dst: Tile, src: Tile, mode: int, sat) -> None:
    """The TCVT entry for pairs with a low-precision / 64-bit operand (module doc)."""
    instr = "TCVT"
    for name, t in (("dst", dst), ("src", src)):
        if t.loc != TileType.Vec:
            raise constraint(instr, f"{name}.loc", "must be TileType.Vec", t.loc.name)
    sn, dn = src.format.name, dst.format.name
    if (sn, dn) not in PAIRS:
        raise constraint(instr, "(src.dtype, dst.dtype)", "must be a conversion pto-isa "
                         f"docs/isa/TCVT.md lists, one of {sorted(PAIRS)}", (sn, dn))
    if src.valid_row != dst.valid_row or \
            src.valid_col * src.format.lanes != dst.valid_col * dst.format.lanes:
        raise constraint(instr, "src valid shape", f"must hold dst's {dst.valid_row} x "
                         f"{dst.valid_col * dst.format.lanes} elements (x2 tiles count two "
                         "per column)", src.valid_shape)
    if sat is not None:
        from ._convert import SaturationMode
        try:
            sat = SaturationMode[sat.upper()] if isinstance(sat, str) else SaturationMode(sat)
        except (KeyError, ValueError):
            raise constraint(instr, "satMode", "must be SaturationMode.ON or OFF", sat) from None
    mode = int(mode)
    R, C = dst.valid_shape
    if not (R and C):
        return
    if sn == "int64" and dn == "float32" and mode not in (0, 1):
        raise constraint(instr, "mode", "must be CAST_RINT or CAST_NONE for int64 -> float32 "
                         "(fastisa rounds 64-bit integers to nearest even only)", mode)
    sim = sat is not None and (sn in ("int4",) + _FP4 or dn in ("int4",) + _FP4)
    if sim:
        _tcvt_sim(dst, src, mode, int(sat))
    else:
        _tcvt_doc(dst, src, mode, bool(sat is not None and int(sat) == 1))
    cost.record("Vector", instr, 32 + R * max(1, -(-C * max(dst.dtype.itemsize,
                                                            src.dtype.itemsize) // 256)))


def _tcvt_doc(dst, src, mode, saturate):
    sn, dn = src.format.name, dst.format.name
    R, C = dst.valid_shape
    if sn == "int64":
        v = src.valid
        if dn == "float32":
            np.copyto(dst.valid, v.astype(np.float32))    # RNE (x86-64 cvtsi2ss)
        else:
            np.copyto(dst.valid, np.clip(v, -2 ** 31, 2 ** 31 - 1).astype(np.int32))
        return
    x = _values(src).reshape(R, -1)
    if dn in ("float32", "float16", "bfloat16"):
        _to_kernel_float(dst, x, mode)
    elif dn in ("int64", "uint64"):
        dt = np.dtype(dn)
        info = np.iinfo(dt)
        if sn == "int32":
            np.copyto(dst.valid, src.valid.astype(dt))
        else:
            np.copyto(dst.valid, _int_saturate(_round_int(x, mode), info.min, info.max, dt))
    elif dn == "int4":
        y = np.where(np.isnan(x), 0.0, np.clip(_round_int(x, mode), -8, 7)).astype(np.int64)
        _store(dst, (y & 0xF).astype(np.uint8), dn)
    else:
        if saturate:
            s = L._sorted(dn)
            x = np.where(np.isnan(x), 0.0, np.clip(x, s.v[0], s.v[-1]))
        _store(dst, L.encode(dn, x, mode, saturate=saturate), dn)


def _tcvt_sim(dst, src, mode, sat_on):
    """TCvt.hpp TCvt_Impl for the int4 / fp4 pairs (module doc)."""
    sn, dn = src.format.name, dst.format.name
    R, C = dst.valid_shape
    x = _values(src).reshape(R, -1)
    # (an fp4 -0 code decodes as -0.0, as gen_data.py's golden and the hardware do; the C++
    # simulator's MXType writes ``retVal = -0``, an integer, i.e. +0.0)
    s_float = sn in _F
    if sat_on and sn not in _FP4:
        slo, shi = _SIM_LIMITS.get(sn, (-np.inf, np.inf))
        if sn in KERNEL_FORMATS and sn not in _F:
            info = np.iinfo(np.dtype(sn))
            slo, shi = float(info.min), float(info.max)
        elif sn in ("float32", "bfloat16"):
            slo, shi = -np.inf, np.inf
        dlo, dhi = _SIM_LIMITS.get(dn, (-np.inf, np.inf))
        if dn in KERNEL_FORMATS and dn not in _F:
            info = np.iinfo(np.dtype(dn))
            dlo, dhi = float(info.min), float(info.max)
        lo, hi = max(slo, dlo), min(shi, dhi)
        # std::max(lo, std::min(hi, v)): NaN -> hi
        x = np.where(np.isnan(x), hi, np.clip(x, lo, hi))
        if sn == "int4":
            x = np.trunc(np.clip(x, -8, 7))
    if dn == "int4":
        y = _round_int(x, mode) if s_float else x
        y = np.where(np.isnan(y), 7.0, np.clip(y, -8, 7))
        _store(dst, (np.trunc(y).astype(np.int64) & 0xF).astype(np.uint8), dn)
    elif dn in _FP4:
        y = _round_int(x, mode) if s_float else x
        e, m = (2, 1) if dn == "float4_e2m1x2" else (1, 2)
        _store(dst, _mx_encode(y, e, m, 1), dn)
    elif sn in _FP4:
        y = _round_int(x, mode)                          # the simulator rounds fp4 values too
        if dn in _F:
            _to_kernel_float(dst, y, 1)
        else:
            raise ConstraintError(f"TCVT: {sn} -> {dn} is not a listed conversion")
    else:                                                # int4 -> float / integer: exact
        _to_kernel_float(dst, x, 1)
