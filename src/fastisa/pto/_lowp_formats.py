"""PTO tile element formats beyond the C tile kernels' nine (issue 13: the A5 low-precision
types and the 64-bit integers), and their codecs.

The PTO ISA docs list these element types for tiles (pto-isa docs/isa/TCVT.md "Supported
Conversions", docs/isa/TSTORE.md, docs/isa/TMATMUL_MX.md; include/pto/common/type.hpp and
include/pto/cpu/MXTypes.hpp, include/pto/cpu/Hifloat8.hpp for their encodings):

===================  =========================================  ===========================
name                 pto-isa type                               storage in a fastisa Tile
===================  =========================================  ===========================
float8_e4m3fn        ``float8_e4m3_t`` (E4M3, max 448, no inf)  one byte (ml_dtypes)
float8_e5m2          ``float8_e5m2_t`` (E5M2, IEEE-like)        one byte (ml_dtypes)
float8_e8m0fnu       ``float8_e8m0_t`` (MX scale)               one byte (ml_dtypes)
hifloat8             ``hifloat8_t`` (HiF8, tapered)             one byte (the code)
int4                 ``int4b_t``                                one byte, low nibble (the
                                                                CPU simulator's storage)
float4_e2m1x2        ``float4_e2m1x2_t``                        one byte = two codes (x2)
float4_e1m2x2        ``float4_e1m2x2_t``                        one byte = two codes (x2)
int64, uint64        ``int64_t``, ``uint64_t``                  numpy int64 / uint64
===================  =========================================  ===========================

An x2 tile counts its columns in containers (bytes), like fastisa.dtypes' x4 formats: a
``Tile(Vec, "float4_e2m1x2", 64, 32)`` holds 64 x 64 fp4 values; element ``2j`` of a row is
the low nibble of byte ``j``, element ``2j+1`` the high nibble (MXTypes.hpp
``GetProperDataPart``).

These formats never reach a C tile kernel (``csrc/fastisa/tile.h`` ``fi_tile_itemsize``
knows only the nine kernel formats and the fp8 bytes): :func:`fastisa.pto._ops._operand`
refuses them, and the instructions that accept them (TLOAD, TSTORE, TMOV, TTRANS,
TEXTRACT, TINSERT, TCVT, TMATMUL_MX, ...) move their bytes with numpy or convert them here.

Codecs (our code, vectorised numpy): every format here has at most 256 codes, so decoding is
a table lookup and encoding a search in the sorted table of finite values with the rounding
mode's choice between the two neighbours.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes as _dt
from ..errors import ConstraintError

__all__: list[str] = []


def _fmt(name, kind, bits, np_dtype, **kw):
    return _dt.Format(name, -1, kind, bits, np_dtype=np.dtype(np_dtype), **kw)


#: The pto-only formats (code -1: no C format code; they never reach a C kernel).
HIFLOAT8 = _fmt("hifloat8", "float", 8, np.uint8, max_finite=32768.0, min_normal=2.0 ** -15,
                min_subnormal=2.0 ** -22, has_inf=True, nan_codes=(0x80,), overflow="inf",
                container="uint8 (the HiF8 code)")
INT4 = _fmt("int4", "int", 4, np.uint8, max_finite=7.0, overflow="saturate",
            container="uint8, the code in the low nibble (int4b_t of the CPU simulator)")
FLOAT4_E2M1X2 = _fmt("float4_e2m1x2", "packed", 4, np.uint8, exp_bits=2, man_bits=1, bias=1,
                     max_finite=6.0, min_normal=1.0, min_subnormal=0.5, overflow="saturate",
                     container="uint8, element 2j = low nibble, 2j+1 = high nibble",
                     element="float4_e2m1", lanes=2)
FLOAT4_E1M2X2 = _fmt("float4_e1m2x2", "packed", 4, np.uint8, exp_bits=1, man_bits=2, bias=1,
                     max_finite=1.75, min_normal=1.0, min_subnormal=0.25, overflow="saturate",
                     container="uint8, element 2j = low nibble, 2j+1 = high nibble",
                     element="float4_e1m2", lanes=2)
INT64 = _fmt("int64", "int", 64, np.int64, max_finite=float(2 ** 63 - 1), overflow="saturate")
UINT64 = _fmt("uint64", "int", 64, np.uint64, signed=False, max_finite=float(2 ** 64 - 1),
              overflow="saturate")

EXTRA = {f.name: f for f in (HIFLOAT8, INT4, FLOAT4_E2M1X2, FLOAT4_E1M2X2, INT64, UINT64)}

#: Registry formats a tile may hold besides the nine kernel formats (one byte each).
FP8 = ("float8_e4m3fn", "float8_e5m2", "float8_e8m0fnu")

#: Every low-precision / 64-bit tile format (what the C tile kernels must never see).
LOWP = FP8 + tuple(EXTRA)

#: Names a user may spell these formats with (pto-isa C++ type names, PTO-AS names, numpy /
#: ml_dtypes / en_dtypes dtype names).
ALIASES = {
    "float8_e4m3": "float8_e4m3fn", "float8_e4m3_t": "float8_e4m3fn", "f8E4M3FN": "float8_e4m3fn",
    "f8e4m3": "float8_e4m3fn", "fp8_e4m3": "float8_e4m3fn",
    "float8_e5m2_t": "float8_e5m2", "f8E5M2": "float8_e5m2", "f8e5m2": "float8_e5m2",
    "fp8_e5m2": "float8_e5m2",
    "float8_e8m0": "float8_e8m0fnu", "float8_e8m0_t": "float8_e8m0fnu", "f8E8M0FNU": "float8_e8m0fnu",
    "e8m0": "float8_e8m0fnu",
    "hifloat8_t": "hifloat8", "hif8": "hifloat8", "h8": "hifloat8",
    "int4b_t": "int4", "i4": "int4", "s4": "int4",
    "float4_e2m1x2_t": "float4_e2m1x2", "fp4_e2m1x2": "float4_e2m1x2",
    "float4_e1m2x2_t": "float4_e1m2x2", "fp4_e1m2x2": "float4_e1m2x2",
    "i64": "int64", "int64_t": "int64", "ui64": "uint64", "u64": "uint64", "uint64_t": "uint64",
}


def lookup(dtype):
    """The Format for a pto-only format (name, alias, numpy int64/uint64 dtype or en_dtypes
    hifloat8 dtype), or None."""
    if isinstance(dtype, _dt.Format):
        return EXTRA.get(dtype.name)
    if isinstance(dtype, str):
        key = ALIASES.get(dtype, dtype)
        return EXTRA.get(key)
    try:
        dt = np.dtype(dtype)
    except TypeError:
        return None
    if dt == np.int64:
        return INT64
    if dt == np.uint64:
        return UINT64
    if dt.name == "hifloat8":            # en_dtypes.hifloat8
        return HIFLOAT8
    return None


# ---- decode tables ---------------------------------------------------------------------

def _hif8_value(code: int) -> float:
    """HiF8 (Luo et al., "Ascend HiFloat8 Format for Deep Learning", arXiv:2409.16626 §3; the
    CPU simulator include/pto/cpu/Hifloat8.hpp): sign, a prefix-coded dot field D giving
    the exponent width (D=0..4), the exponent in sign-magnitude with an implicit leading 1,
    a 1.M mantissa of 5-D bits; 0x00 = 0, 0x80 = NaN, 0x01..0x07 the denormals 2^(M-23),
    D=4 with |E|=15, M=1 is +-inf."""
    sign = -1.0 if code & 0x80 else 1.0
    p = code & 0x7F
    if p >> 3 == 0:
        m = p & 7
        if m == 0:
            return float("nan") if code & 0x80 else 0.0
        return sign * 2.0 ** (m - 23)
    if p >> 5 == 3:
        d, rest = 4, p & 0x1F
    elif p >> 5 == 2:
        d, rest = 3, p & 0x1F
    elif p >> 5 == 1:
        d, rest = 2, p & 0x1F
    elif p >> 4 == 1:
        d, rest = 1, p & 0x0F
    else:
        d, rest = 0, p & 0x07
    # mantissa widths: D=0: 3, D=1: 3, D=2: 3, D=3: 2, D=4: 1 (7 payload bits in all; the
    # CPU simulator's decoder takes 5 - D bits, which en_dtypes and the paper do not)
    mb = {0: 3, 1: 3, 2: 3, 3: 2, 4: 1}[d]
    e_raw, m = rest >> mb, rest & ((1 << mb) - 1)
    e = 0
    if d:
        sbit = e_raw & (1 << (d - 1))
        mag = (1 << (d - 1)) | (e_raw - sbit)
        e = -mag if sbit else mag
    if d == 4 and e == 15 and m == 1:
        return sign * float("inf")
    return sign * 2.0 ** e * (1.0 + m / (1 << mb))


def _minifloat_value(code: int, e_bits: int, m_bits: int, bias: int) -> float:
    """An IEEE-style minifloat without inf/NaN (the fp4 formats): subnormals at exponent 0."""
    sign = -1.0 if code >> (e_bits + m_bits) & 1 else 1.0
    e = code >> m_bits & ((1 << e_bits) - 1)
    m = code & ((1 << m_bits) - 1)
    if e == 0:
        return sign * m / (1 << m_bits) * 2.0 ** (1 - bias)
    return sign * (1.0 + m / (1 << m_bits)) * 2.0 ** (e - bias)


def _table(name: str) -> np.ndarray:
    if name == "hifloat8":
        return np.array([_hif8_value(c) for c in range(256)])
    if name == "float4_e2m1x2":
        return np.array([_minifloat_value(c, 2, 1, 1) for c in range(16)])
    if name == "float4_e1m2x2":
        return np.array([_minifloat_value(c, 1, 2, 1) for c in range(16)])
    if name == "int4":
        return np.array([c - 16 if c & 8 else c for c in range(16)], dtype=np.float64)
    import ml_dtypes
    dt = {"float8_e4m3fn": ml_dtypes.float8_e4m3fn, "float8_e5m2": ml_dtypes.float8_e5m2,
          "float8_e8m0fnu": ml_dtypes.float8_e8m0fnu}[name]
    return np.arange(256, dtype=np.uint8).view(dt).astype(np.float64)


_TABLES: dict = {}


def table(name: str) -> np.ndarray:
    """Value of every code of a <= 8-bit format (float64; NaN codes are NaN)."""
    t = _TABLES.get(name)
    if t is None:
        t = _table(name)
        t.flags.writeable = False
        _TABLES[name] = t
    return t


def unpack_codes(name: str, raw: np.ndarray) -> np.ndarray:
    """[..., n] stored bytes -> [..., n * lanes] codes (uint8)."""
    raw = np.asarray(raw, dtype=np.uint8)
    if name in ("float4_e2m1x2", "float4_e1m2x2"):
        out = np.empty(raw.shape[:-1] + (raw.shape[-1] * 2,), np.uint8)
        out[..., 0::2] = raw & 0xF
        out[..., 1::2] = raw >> 4
        return out
    if name == "int4":
        return raw & 0xF
    return raw


def pack_codes(name: str, codes: np.ndarray) -> np.ndarray:
    """Inverse of :func:`unpack_codes` (int4 keeps one code per byte, high nibble 0)."""
    codes = np.asarray(codes, dtype=np.uint8)
    if name in ("float4_e2m1x2", "float4_e1m2x2"):
        return (codes[..., 0::2] & 0xF) | ((codes[..., 1::2] & 0xF) << 4)
    if name == "int4":
        return codes & 0xF
    return codes


def decode(name: str, raw: np.ndarray) -> np.ndarray:
    """Stored bytes of a low-precision format -> exact float64 values (x2 unpacked)."""
    return table(name)[unpack_codes(name, raw)]


# ---- encoding with a rounding mode -----------------------------------------------------

class _Sorted:
    """The finite values of a format in ascending order with one code each (+0 for 0)."""

    def __init__(self, name):
        t = table(name)
        codes = np.arange(t.size)
        fin = np.isfinite(t)
        v, c = t[fin], codes[fin]
        # one code per value: prefer +0 over -0 (the code with the sign bit clear)
        order = np.lexsort((c, v))
        v, c = v[order], c[order]
        keep = np.ones(v.size, bool)
        keep[1:] = v[1:] != v[:-1]
        self.v, self.c = v[keep], c[keep]
        self.name = name
        self.pinf = np.flatnonzero(t == np.inf)
        self.ninf = np.flatnonzero(t == -np.inf)
        self.nan = np.flatnonzero(np.isnan(t))
        # the -0 code (int4, e8m0 and HiF8 have none: HiF8's 0x80 is NaN)
        self.negzero = None if name in ("int4", "float8_e8m0fnu", "hifloat8") else t.size >> 1


_SORTED: dict = {}


def _sorted(name):
    s = _SORTED.get(name)
    if s is None:
        s = _SORTED[name] = _Sorted(name)
    return s


#: RoundMode values (fastisa.pto.RoundMode), repeated here to keep this module below _ops.
_NONE, _RINT, _ROUND, _FLOOR, _CEIL, _TRUNC, _ODD = range(7)


#: The step past the largest finite value that rounding to nearest measures overflow with
#: (half of it is the threshold): HiF8's inf code sits where 1.5 * 2^15 would.
_OVER_ULP = {"hifloat8": 16384.0}
#: The NaN code an encoder writes (formats without NaN write 0, as Ascend saturation does).
_NAN_CODE = {"float8_e4m3fn": 0x7F, "float8_e5m2": 0x7E, "float8_e8m0fnu": 0xFF, "hifloat8": 0x80}


def encode(name: str, x: np.ndarray, mode: int = _RINT, saturate: bool = True) -> np.ndarray:
    """float64 values -> codes of format ``name`` (uint8, one code per element, x2 not yet
    packed), rounded once with ``mode``: NONE/RINT nearest, ties to the even code; ROUND
    nearest, ties away from zero; FLOOR/CEIL/TRUNC directed; ODD: an inexact value takes
    the neighbour with the odd code.  Beyond the largest finite value: ``saturate`` clamps
    to +-max finite, otherwise +-inf where the format has one (NaN where it has a NaN but
    no inf, clamped where it has neither).  NaN -> the format's NaN code (0 where it has
    none).  Results of zero keep the input's sign where the format has -0."""
    s = _sorted(name)
    x = np.asarray(x, dtype=np.float64)
    v, c = s.v, s.c
    n = v.size
    xf = np.where(np.isnan(x), 0.0, x)
    hi = np.searchsorted(v, xf, side="left")          # v[hi] >= x
    hi_c = np.clip(hi, 0, n - 1)
    lo_c = np.clip(hi - 1, 0, n - 1)
    exact = v[hi_c] == xf
    lo_c = np.where(exact, hi_c, lo_c)
    below = xf < v[0]
    above = xf > v[-1]
    lo_c = np.where(below, 0, lo_c)
    hi_c = np.where(above, n - 1, hi_c)
    vlo, vhi = v[lo_c], v[hi_c]
    clo, chi = c[lo_c], c[hi_c]
    dlo, dhi = xf - vlo, vhi - xf
    if mode in (_NONE, _RINT, _ROUND):
        tie = dlo == dhi
        if mode == _ROUND:
            tie_hi = xf > 0                          # away from zero
        else:
            tie_hi = (chi & 1) == 0                  # the even code
        take_hi = (dhi < dlo) | (tie & tie_hi)
    elif mode == _FLOOR:
        take_hi = exact
    elif mode == _CEIL:
        take_hi = np.ones(x.shape, bool)
    elif mode == _TRUNC:
        take_hi = exact | (xf < 0)
    elif mode == _ODD:
        take_hi = exact | ((chi & 1) == 1)
    else:
        raise ConstraintError(f"encode: mode must be a RoundMode value, got {mode}")
    res = np.where(take_hi, chi, clo).astype(np.int64)
    if not saturate:          # beyond max finite: inf (or NaN) where rounding reaches it
        ulp = _OVER_ULP.get(name, (v[-1] - v[-2]) if n > 1 else 1.0)
        for side, mask, infc in ((1, above, s.pinf), (-1, below, s.ninf)):
            if not mask.any() or not (infc.size or s.nan.size):
                continue
            edge = v[-1] if side > 0 else v[0]
            if mode == _ROUND:
                over = mask & (np.abs(xf - edge) >= ulp / 2)
            elif mode in (_NONE, _RINT):     # a tie overflows when the max code is odd
                d = np.abs(xf - edge)
                over = mask & ((d > ulp / 2) | ((d == ulp / 2) & bool(c[-1] & 1)))
            elif (mode == _CEIL and side > 0) or (mode == _FLOOR and side < 0):
                over = mask
            else:                                    # toward zero / odd: max finite
                over = np.zeros_like(mask)
            over = over | (mask & np.isinf(xf))
            code = infc[0] if infc.size else _NAN_CODE[name] | (0x80 if side < 0 else 0)
            res = np.where(over, code, res)
    # zeros keep the sign of a negative input where the format has -0
    if s.negzero is not None:
        zero = table(name)[res] == 0
        res = np.where(zero & (np.signbit(x)), s.negzero, res)
    nan = np.isnan(x)
    if nan.any():
        code = _NAN_CODE.get(name, 0)
        if name in ("float8_e4m3fn", "float8_e5m2"):     # ml_dtypes: the sign is kept
            code = np.where(np.signbit(x), code | 0x80, code)
        res = np.where(nan, code, res)
    return res.astype(np.uint8)


def tile_format(dtype, where: str):
    """The Format of a tile/GlobalTensor dtype among the pto-only formats and fp8 aliases, or
    None when ``dtype`` is none of them."""
    f = lookup(dtype)
    if f is not None:
        return f
    if isinstance(dtype, str) and dtype in ALIASES:
        return _dt.FORMATS[ALIASES[dtype]]
    return None

