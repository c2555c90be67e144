"""Plain-numpy oracles, one per instruction, written from the spec: slow and obvious.

Kernels are compared against these bit for bit (0 ULP where the ISA is exact).  Each
function names the spec section it follows.  Nothing here imports fastisa's kernels.

Sections (keep them in this order; each front-end adds its oracles to its own section):
formats, TIK, NKI, PTO.
"""

from __future__ import annotations

import bisect
import math

import ml_dtypes
import numpy as np


# ======================================================================================
# Number formats (spec 000 "Supported Data Types", "Type Casting"; reference/numerics.md)
# ======================================================================================



# The formats as data, written from spec 000's table and reference/numerics.md 1.2 / 5.1:
# name -> (exponent bits, mantissa bits, bias, signed, has_inf, nan rule, max finite).
#   nan rule: "ieee" (exponent all ones, mantissa != 0), "fn" (only S.1111.111),
#             "e8m0" (only 0xff), None (no NaN).
FLOAT_DEFS = {
    "float8_e4m3": (4, 3, 7, True, True, "ieee", 240.0),
    "float8_e5m2": (5, 2, 15, True, True, "ieee", 57344.0),
    "float8_e4m3fn": (4, 3, 7, True, False, "fn", 448.0),
    "float8_e8m0fnu": (8, 0, 127, False, False, "e8m0", 2.0**127),
    "float16": (5, 10, 15, True, True, "ieee", 65504.0),
    "bfloat16": (8, 7, 127, True, True, "ieee", (2 - 2.0**-7) * 2.0**127),
    "tfloat32": (8, 10, 127, True, True, "ieee", (2 - 2.0**-10) * 2.0**127),
    "float4_e2m1fn": (2, 1, 1, True, False, None, 6.0),
}
# canonical NaN code (positive) each format's encoder produces; None: no NaN
CANONICAL_NAN = {"float8_e4m3": 0x7C, "float8_e5m2": 0x7E, "float8_e4m3fn": 0x7F,
                 "float8_e8m0fnu": 0xFF, "bfloat16": 0x7FC0, "tfloat32": 0x3FE00,  # 19-bit S E8 M10
                 "float16": 0x7E00, "float4_e2m1fn": None}
INT_RANGES = {"uint8": (0, 255, np.uint8), "int8": (-128, 127, np.int8),
              "uint16": (0, 65535, np.uint16), "int16": (-32768, 32767, np.int16),
              "uint32": (0, 2**32 - 1, np.uint32), "int32": (-2**31, 2**31 - 1, np.int32)}


def float_decode(name, codes):
    """Value (float64) of each code of a float format, from its definition: sign, biased
    exponent e and mantissa m give (-1)^s * 2^(e-bias) * (1 + m/2^M) for e > 0 and
    (-1)^s * 2^(1-bias) * m/2^M for e = 0; inf/NaN encodings as FLOAT_DEFS says.
    e8m0 is unsigned 2^(c-127) (0xff NaN).  tfloat32 codes are 19-bit (S E8 M10)."""
    E, M, B, signed, has_inf, nan, _ = FLOAT_DEFS[name]
    c = np.asarray(codes, dtype=np.int64)
    nb = 1 + E + M if signed else E + M
    if name == "float4_e2m1fn":
        neg = (c & 0xFF) > 7          # ml_dtypes: any bit above the magnitude is the sign
    else:
        neg = ((c >> (nb - 1)) & 1).astype(bool) if signed else np.zeros(c.shape, bool)
    e = (c >> M) & ((1 << E) - 1)
    m = c & ((1 << M) - 1)
    emax = (1 << E) - 1
    with np.errstate(over="ignore"):
        mag = np.where(e > 0, np.ldexp(1.0 + m / 2.0**M, (e - B).astype(np.int32)),
                       np.ldexp(m / 2.0**M, 1 - B))
    if name == "float8_e8m0fnu":
        mag = np.ldexp(1.0, (c & 0xFF).astype(np.int32) - 127)
    if has_inf:
        mag = np.where((e == emax) & (m == 0), np.inf, mag)
    isnan = np.zeros(c.shape, bool)
    if nan == "ieee":
        isnan = (e == emax) & (m != 0)
    elif nan == "fn":
        isnan = (e == emax) & (m == (1 << M) - 1)
    elif nan == "e8m0":
        isnan = (c & 0xFF) == 0xFF
    val = np.where(neg, -mag, mag)
    return np.where(isnan, np.nan, val), isnan


def float_encode(name, x, saturate=False):
    """float32 -> code of a small float format, from the definition of RNE and the
    overflow rules (reference/numerics.md 0 and 1.7, the "generic model"):
    r = rint(|x| / 2^q) * 2^q with q = max(floor(log2|x|), 1 - bias) - M (numpy rint is
    half-to-even), computed in float64 (exact); then if r > max the overflow rule:
    default -> inf (if the format has inf), NaN (e4m3fn), max (float4); saturate=True or
    "ascend" -> max.  NaN -> canonical NaN with the input's sign (float4: zero of the
    opposite sign; "ascend": 0).  The code is found by searching the table of values.
    Not for float16's NaN payloads or e8m0 (see e8m0_encode)."""
    E, M, B, signed, has_inf, nan, mx = FLOAT_DEFS[name]
    nb = 1 + E + M
    x = np.asarray(x, np.float32).astype(np.float64)
    neg = np.signbit(x)
    a = np.abs(x)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        q = np.maximum(np.floor(np.log2(np.where(a > 0, a, 1.0))), 1 - B) - M
        q = np.where(np.isfinite(a), q, 0)
        r = np.rint(a / np.exp2(q)) * np.exp2(q)
    sat = bool(saturate)
    over = (r > mx) | np.isinf(a)
    if sat or not (has_inf or nan == "fn"):
        r = np.where(over, mx, r)
    # code of a finite magnitude: its index in the table of positive magnitudes
    npos = 1 << (nb - 1)
    table, tnan = float_decode(name, np.arange(npos))
    finite = np.isfinite(table) & ~tnan
    vals = table[finite]
    idx = np.searchsorted(vals, np.where(np.isfinite(r), r, 0.0))
    idx = np.minimum(idx, len(vals) - 1)
    codes = np.arange(npos)[finite][idx].astype(np.int64)
    if has_inf:
        inf_code = int(np.nonzero(np.isinf(table))[0][0])
        codes = np.where(over & (not sat), inf_code, codes)
    elif nan == "fn":
        codes = np.where(over & (not sat), CANONICAL_NAN[name], codes)
    codes = codes | (neg.astype(np.int64) << (nb - 1))
    isnan = np.isnan(x)
    if saturate == "ascend":
        nan_code = np.zeros_like(codes)
    elif CANONICAL_NAN[name] is None:
        nan_code = np.where(neg, 0, 1 << (nb - 1))
    else:
        nan_code = CANONICAL_NAN[name] | (neg.astype(np.int64) << (nb - 1))
    return np.where(isnan, nan_code, codes)


def e8m0_encode(x, saturate=False):
    """float32 -> float8_e8m0fnu code, ml_dtypes' rule (reference/numerics.md 1.4): for
    x >= 2^-126 the exponent k = floor(log2 x), plus one if the mantissa is >= 1.5 (half
    up); code k + 127, and 0xff past 2^127.  float32 subnormals: 0 up to 2^-127, 1 above.
    0, negatives, NaN, +inf -> 0xff.  saturate: zero/negative -> 0, overflow/+inf -> 0xfe;
    "ascend" also NaN -> 0."""
    x = np.asarray(x, np.float32).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        k = np.floor(np.log2(np.where(x > 0, x, 1.0)))
        frac = x / np.exp2(k)
    code = k + 127 + (frac >= 1.5)
    code = np.where(x < 2.0**-126, np.where(x > 2.0**-127, 1, 0), code)
    over = (code > 254) | np.isposinf(x)
    bad = (x <= 0) | np.signbit(x)
    if saturate:
        code = np.where(over, 0xFE, np.where(bad, 0, code))
    else:
        code = np.where(over | bad, 0xFF, code)
    code = np.where(np.isnan(x), 0 if saturate == "ascend" else 0xFF, code)
    return code.astype(np.int64)


def f16_nan_numpy(bits32):
    """numpy's float32 -> float16 NaN rule (npy_floatbits_to_halfbits): sign | 0x7c00 |
    (mantissa >> 13), 0x7c01 when that is zero."""
    b = np.asarray(bits32, np.uint32).astype(np.int64)
    p = (b & 0x7FFFFF) >> 13
    return ((b >> 16) & 0x8000) | 0x7C00 | np.where(p == 0, 1, p)


def tf32_encode(x, saturate=False):
    """float32 -> tfloat32 (float32 container, low 13 bits zero), by the generic model:
    RNE to 10 mantissa bits, overflow -> inf (saturate: max), NaN -> 0x7fc00000 | sign
    ("ascend": 0).  Returns uint32 bit patterns."""
    codes = float_encode("tfloat32", x, saturate)
    E, M = 8, 10
    c = codes.astype(np.int64)
    sign = (c >> 18) & 1
    mag = c & ((1 << 18) - 1)
    out = (sign << 31) | (mag << 13)
    if saturate == "ascend":
        out = np.where(np.isnan(np.asarray(x, np.float32)), 0, out)
    return out.astype(np.uint32)


def f32_to_int(x, name):
    """spec 000 "FP32-to-Integer Conversion": round to nearest even, saturate to the
    destination range, NaN -> 0 (reference/nki.md: the 0.6.0 simulator rule).  bool_
    ("boolean stored as uint8") is the range [0, 1]."""
    lo, hi, dt = (0, 1, np.uint8) if name == "bool_" else INT_RANGES[name]
    x = np.asarray(x, np.float32).astype(np.float64)
    r = np.clip(np.rint(np.nan_to_num(x, nan=0.0, posinf=hi, neginf=lo)), lo, hi)
    return r.astype(np.int64).astype(dt)


def int_to_f32(v):
    """spec 000 "Integer-to-FP32 Conversion": nearest float32, ties to even (exact in
    float64 for every int32/uint32, then one RNE rounding float64 -> float32)."""
    return np.asarray(v).astype(np.float64).astype(np.float32)


def pack_x4_loops(codes, bits):
    """Pack (..., 4m) element codes into (..., m) words, element i at bits i*bits: plain
    Python loops (reference/numerics.md 2.4)."""
    codes = np.asarray(codes)
    m = codes.shape[-1] // 4
    out = np.zeros(codes.shape[:-1] + (m,), np.uint64)
    flat_in = codes.reshape(-1, codes.shape[-1])
    flat_out = out.reshape(-1, m)
    for r in range(flat_in.shape[0]):
        for j in range(m):
            w = 0
            for i in range(4):
                w |= (int(flat_in[r, 4 * j + i]) & ((1 << bits) - 1)) << (bits * i)
            flat_out[r, j] = w
    return out

# ---- end of formats section ----


# ======================================================================================
# TIK (spec 002; reference/tik.md sections 0 and 1)
# ======================================================================================


# The TIK vector model (reference/tik.md 0.2-0.6 and the 1.9 pseudo-code), lane by lane.
# Operands are flat 1-D numpy arrays (the tensor's elements) plus a start element; the
# oracle walks repeats in order, and inside a repeat reads every active lane's sources
# before writing (so dst == src in place and the accumulate idiom are well defined).

TIK_SAT_F16_MAX = np.uint16(0x7BFF)


def tik_lanes_per_repeat(*dtypes) -> int:
    """PAR = 256 bytes / largest element size."""
    return 256 // max(np.dtype(d).itemsize for d in dtypes)


def tik_active_lanes(par, mask=None, counter=None, nrep=None):
    """-> (number of repeats, [lane list of repeat r] function).

    mask: int m (lanes 0..m-1) or [mask_h, mask_l] (bit i of mask_l = lane i, bit i of
    mask_h = lane 64 + i); counter: element count (full repeats, then a partial one)."""
    if counter is not None:
        n = -(-counter // par)
        tail = counter - (n - 1) * par
        return n, (lambda r: list(range(par)) if r < n - 1 else list(range(tail)))
    if isinstance(mask, (list, tuple)):
        h, lo = int(mask[0]) % 2**64, int(mask[1]) % 2**64
        lanes = [i for i in range(par) if (lo >> i) & 1] + \
                [i for i in range(64, par) if (h >> (i - 64)) & 1]
    else:
        lanes = list(range(int(mask)))
    return nrep, (lambda r: lanes)


def tik_lane_offset(r, i, start, blk, rep, dtype, stride_unit=0) -> int:
    """Element offset of lane i of repeat r (B elements per 32-byte block, j = i//B):

    stride_unit 0: start + r*rep*B + j*blk*B + i%B          (strides in blocks)
    stride_unit 1: start + r*((7*blk + 1)*B + rep*B) + j*blk*B + i%B   (rep gap in blocks)
    stride_unit 2: start + r*rep + j*(B + blk) + i%B         (blk gap, rep stride: elements)
    stride_unit 3: start + r*(7*(B + blk) + B + rep) + j*(B + blk) + i%B  (gaps: elements)

    (reference/tik.md 1.4; TIK common_util.get_extend_interval / vector_max_offset_cal.)"""
    B = 32 // np.dtype(dtype).itemsize
    j = i // B
    if stride_unit == 0:
        return start + r * rep * B + j * blk * B + i % B
    if stride_unit == 1:
        return start + r * ((7 * blk + 1) * B + rep * B) + j * blk * B + i % B
    if stride_unit == 2:
        return start + r * rep + j * (B + blk) + i % B
    return start + r * (7 * (B + blk) + B + rep) + j * (B + blk) + i % B


def tik_f16_saturate(h: np.ndarray) -> np.ndarray:
    """Ascend saturation mode on float16 bit patterns: +-inf -> +-65504, NaN -> +0."""
    h = h.astype(np.uint16).copy()
    a = h & 0x7FFF
    h[a > 0x7C00] = 0
    inf = a == 0x7C00
    h[inf] = (h[inf] & 0x8000) | 0x7BFF
    return h


def tik_to_f16(v) -> np.ndarray:
    """float32/float64 -> float16, RNE, one rounding; a NaN stays NaN with its sign and
    top payload bits and the quiet bit set (as x86 F16C / formats.h; numpy's own cast
    keeps signalling NaNs signalling)."""
    v = np.asarray(v)
    out = v.astype(np.float16)
    nan = np.isnan(v)
    if nan.any():
        if v.dtype == np.float32:
            bits = v.view(np.uint32).astype(np.uint64)
            sign, pay = (bits >> 16) & 0x8000, (bits >> 13) & 0x3FF
        else:
            bits = v.astype(np.float64).view(np.uint64)
            sign, pay = (bits >> 48) & 0x8000, (bits >> 42) & 0x3FF
        out.view(np.uint16)[nan] = (sign | 0x7E00 | pay)[nan].astype(np.uint16)
    return out


def _round_out(v, dtype, sat):
    """Round a float32/float64 array once to dtype (float16 saturating when sat)."""
    v = np.asarray(v)
    with np.errstate(all="ignore"):
        out = tik_to_f16(v) if np.dtype(dtype) == np.float16 else v.astype(dtype)
    if np.dtype(dtype) == np.float16 and sat:
        out = tik_f16_saturate(out.view(np.uint16)).view(np.float16)
    return out


def _tik_max(a, b):
    return np.where((a >= b) | np.isnan(a), a, b)


def _tik_min(a, b):
    return np.where((a <= b) | np.isnan(a), a, b)


def tik_f32_to_f16_odd(x: np.ndarray) -> np.ndarray:
    """float32 -> float16 rounding to odd: truncate toward zero, set the last bit when
    inexact (NaN/inf pass through)."""
    x = np.asarray(x, dtype=np.float32)
    out = np.empty(x.shape, dtype=np.uint16)
    for k, v in enumerate(x.ravel()):
        h = tik_to_f16(np.array([v]))[0]
        if np.isnan(v) or np.isinf(v) or float(h) == float(v):
            out.flat[k] = h.view(np.uint16)
            continue
        if abs(float(h)) > abs(float(v)):
            h = np.nextafter(h, np.float16(0))
        out.flat[k] = h.view(np.uint16) | 1
    return out.view(np.float16)


def tik_round_int(x, mode, dtype):
    """float -> integer with a vec_conv round mode, saturating, NaN -> 0."""
    x = np.asarray(x, dtype=np.float64)
    if mode in ("", "none", "round"):
        y = np.rint(x)
    elif mode == "floor":
        y = np.floor(x)
    elif mode in ("ceil", "ceiling"):
        y = np.ceil(x)
    elif mode == "away-zero":
        y = np.where(x >= 0, np.floor(x + 0.5), np.ceil(x - 0.5))
        # floor(x + 0.5) is exact here: x has at most 24 significant bits
    elif mode == "to-zero":
        y = np.trunc(x)
    else:
        raise ValueError(mode)
    info = np.iinfo(dtype)
    y = np.where(np.isnan(x), 0, np.clip(y, info.min, info.max))
    return y.astype(dtype)


def tik_op(name, dst_dtype, srcs, scalar, old_dst, sat, round_mode=""):
    """The per-lane op of one TIK vector instruction on gathered lanes (numpy arrays)."""
    dd = np.dtype(dst_dtype)
    a = srcs[0] if srcs else None
    b = srcs[1] if len(srcs) > 1 else None
    isf = dd.kind == "f"
    base = name[4:] if name.startswith("vec_") else name[1:]
    base = {"ector_dup": "dup", "adds": "adds"}.get(base, base)
    if base == "dup":
        return np.full(len(old_dst), scalar, dtype=dd)
    if base == "conv":
        sd = a.dtype
        if dd.kind in "iu" and sd.kind == "f":
            return tik_round_int(a, round_mode, dd)
        if sd == np.float32 and dd == np.float16:
            v = tik_f32_to_f16_odd(a) if round_mode == "odd" else tik_to_f16(a)
            if sat:
                v = tik_f16_saturate(v.view(np.uint16)).view(np.float16)
            return v
        if sd == np.int32 and dd == np.float16:
            return _round_out(a.astype(np.float64), dd, sat)
        return a.astype(dd)  # exact (f16 -> f32, int8/uint8 -> f16) or RNE (int32 -> f32)
    if isf:
        af = a.astype(np.float32) if a is not None else None
        bf = b.astype(np.float32) if b is not None else None
        c = np.float32(scalar) if scalar is not None else None
        a64 = a.astype(np.float64) if a is not None else None
        with np.errstate(all="ignore"):
            r = {
                "adds": lambda: af + c, "muls": lambda: af * c,
                "maxs": lambda: _tik_max(af, c), "mins": lambda: _tik_min(af, c),
                "axpy": lambda: af * c + old_dst.astype(np.float32),
                "mla": lambda: af * bf + old_dst.astype(np.float32),   # vmla (tik-ops)
                "abs": lambda: np.abs(af), "relu": lambda: np.where(af > 0, af, np.float32(0)),
                "exp": lambda: np.exp(a64), "ln": lambda: np.log(a64),
                "rec": lambda: 1.0 / a64, "rsqrt": lambda: 1.0 / np.sqrt(a64),
                "sqrt": lambda: np.sqrt(a64),
                "add": lambda: af + bf, "sub": lambda: af - bf, "mul": lambda: af * bf,
                "div": lambda: af / bf, "max": lambda: _tik_max(af, bf),
                "min": lambda: _tik_min(af, bf),
            }[base]()
            return _round_out(r, dd, sat)
    # integers: exact in int64, then wrap to the dtype
    ai = a.astype(np.int64) if a is not None else None
    bi = b.astype(np.int64) if b is not None else None
    c = int(scalar) if scalar is not None else None
    r = {
        "adds": lambda: ai + c, "muls": lambda: ai * c,
        "maxs": lambda: np.maximum(ai, c), "mins": lambda: np.minimum(ai, c),
        "relu": lambda: np.maximum(ai, 0), "not": lambda: ~ai,
        "add": lambda: ai + bi, "sub": lambda: ai - bi, "mul": lambda: ai * bi,
        "max": lambda: np.maximum(ai, bi), "min": lambda: np.minimum(ai, bi),
        "and": lambda: ai & bi, "or": lambda: ai | bi,
    }[base]()
    return r.astype(dd)


def tik_vector(name, dst, dst_start, srcs, src_starts, *, scalar=None, mask=128, nrep=1,
               counter=None, blks=None, reps=None, sat=False, round_mode="", src_is_dst=(),
               stride_unit=0):
    """Run one TIK vector instruction on copies of flat arrays; return the new dst.

    srcs: list of flat arrays (the source tensors), src_starts their start elements.
    blks/reps: block and repeat strides (32-byte blocks), dst first, in the units
    ``stride_unit`` gives (see tik_lane_offset).  scalar: already
    converted to the source dtype by the caller (``np.<dtype>(value)``).  src_is_dst[k]
    True: source k is the dst tensor itself (in place), so a repeat reads what earlier
    repeats wrote."""
    dst = dst.copy()
    srcs = [dst if (k < len(src_is_dst) and src_is_dst[k]) else a for k, a in enumerate(srcs)]
    dts = [dst.dtype] + [s.dtype for s in srcs]
    par = tik_lanes_per_repeat(*dts)
    n, lanes_of = tik_active_lanes(par, mask, counter, nrep)
    blks = blks or [1] * len(dts)
    starts = [dst_start] + list(src_starts)
    for r in range(n):
        lanes = lanes_of(r)
        if not lanes:
            continue
        offs = [[tik_lane_offset(r, i, starts[k], blks[k], reps[k], dts[k], stride_unit)
                 for i in lanes] for k in range(len(dts))]
        gathered = [srcs[k - 1][offs[k]] for k in range(1, len(dts))]
        old = dst[offs[0]]
        dst[offs[0]] = tik_op(name, dst.dtype, gathered, scalar, old, sat, round_mode)
    return dst


def tik_extent(dtype, start, blk, rep, par, mask=128, nrep=1, counter=None,
               stride_unit=0) -> int:
    """Number of elements from the tensor start an operand reaches (last lane + 1)."""
    n, lanes_of = tik_active_lanes(par, mask, counter, nrep)
    hi = start
    for r in ([0, n - 2, n - 1] if n > 1 else [0]):
        if r < 0:
            continue
        for i in lanes_of(r):
            hi = max(hi, tik_lane_offset(r, i, start, blk, rep, dtype, stride_unit) + 1)
    return hi


def tik_reduce_repeat(name, src, start, *, mask, nrep, blk, rep, sat=False):
    """vcadd per repeat: the active lanes summed in lane order in float64, rounded once."""
    par = tik_lanes_per_repeat(src.dtype)
    n, lanes_of = tik_active_lanes(par, mask, None, nrep)
    out = []
    for r in range(n):
        acc = None
        for i in lanes_of(r):
            v = float(src[tik_lane_offset(r, i, start, blk, rep, src.dtype)])
            if acc is None:
                acc = v
            elif name == "add":
                acc = acc + v
            elif name == "max":
                acc = acc if (acc >= v or math.isnan(acc)) else v
            else:
                acc = acc if (acc <= v or math.isnan(acc)) else v
        out.append(acc)
    return _round_out(np.array(out, dtype=np.float64), src.dtype, sat)


def tik_data_move(dst, dst_start, src, src_start, nburst, burst, src_stride, dst_stride):
    """data_move in 32-byte units with tail-to-head gaps, element by element."""
    dst = dst.copy()
    B = 32 // dst.dtype.itemsize
    for k in range(nburst):
        for e in range(burst * B):
            dst[dst_start + k * (burst + dst_stride) * B + e] = \
                src[src_start + k * (burst + src_stride) * B + e]
    return dst


def tik_reduce_arg(name, dst, dst_start, src, start, *, mask, nrep, dst_rep, blk, rep):
    """vcmax/vcmin lane by lane: for each repeat, the first lane (lowest lane number)
    holding the max ("max") / min ("min") of the active lanes -- a NaN lane wins over
    any number, the first NaN wins -- then dst[dst_start + 2*r*dst_rep] = that element's
    bits and dst[... + 1] = the lane number as an unsigned integer of the element width.
    dst_rep counts [value, index] pairs.  Returns a new dst array."""
    par = tik_lanes_per_repeat(src.dtype)
    n, lanes_of = tik_active_lanes(par, mask, None, nrep)
    ut = {2: np.uint16, 4: np.uint32}[src.dtype.itemsize]
    out = dst.copy().view(ut)
    sbits = src.view(ut)
    for r in range(n):
        best_i, best_v, best_b = None, None, None
        for i in lanes_of(r):
            k = tik_lane_offset(r, i, start, blk, rep, src.dtype)
            v = float(src[k])
            if best_i is None:
                take = True
            elif math.isnan(best_v):
                take = False
            elif math.isnan(v):
                take = True
            elif name == "max":
                take = v > best_v
            else:
                take = v < best_v
            if take:
                best_i, best_v, best_b = i, v, sbits[k]
        if best_i is None:
            continue
        out[dst_start + 2 * r * dst_rep] = best_b
        out[dst_start + 2 * r * dst_rep + 1] = best_i
    return out.view(src.dtype)


# ---- tik-isa: compare/select (vcmp, vcmpv, vcmpvs, vsel, CMPMASK) and transposes ------
# (CANN TIK API reference vcmp/vcmpv/vsel/vnchwconv/vtranspose; cceintrinsic reference
# vcmpv "dst = dst + 16 Bytes" per repeat; Ascend C TransDataTo5HD per-repeat rule)

def tik_compare(op, a, b):
    """IEEE compare of gathered lanes (numpy arrays or a scalar b): NaN -> False, except
    'ne' -> True; -0 == +0."""
    a = np.asarray(a).astype(np.float64)
    b = np.asarray(b).astype(np.float64)
    with np.errstate(invalid="ignore"):
        return {"eq": a == b, "ne": a != b, "lt": a < b, "gt": a > b, "le": a <= b,
                "ge": a >= b}[op]


def tik_cmp_lanes(op, src0, start0, src1, start1, *, lanes, nrep, blks, reps, scalar=None):
    """-> bool array (nrep, par): lane i of repeat r compared (False for lanes not in
    ``lanes``).  src1 None: compare with ``scalar`` (already in src0's dtype)."""
    par = tik_lanes_per_repeat(src0.dtype)
    out = np.zeros((nrep, par), dtype=bool)
    for r in range(nrep):
        for i in lanes:
            x = src0[tik_lane_offset(r, i, start0, blks[0], reps[0], src0.dtype)]
            y = scalar if src1 is None else \
                src1[tik_lane_offset(r, i, start1, blks[1], reps[1], src1.dtype)]
            out[r, i] = bool(tik_compare(op, x, y))
    return out


def tik_bits_to_bytes(bits):
    """(nrep, par) bools -> the little-endian bit field bytes, repeat after repeat."""
    out = []
    for row in bits:
        v = 0
        for i, b in enumerate(row):
            v |= int(b) << i
        out += list(v.to_bytes(len(row) // 8, "little"))
    return np.array(out, dtype=np.uint8)


def tik_vcmp_register(old, op, src0, start0, src1, start1, *, mask, blks):
    """vcmp: the new 128-bit CMPMASK (Python int): the active lanes' compare bits, the
    other bits of ``old`` kept."""
    par = tik_lanes_per_repeat(src0.dtype)
    _, lanes_of = tik_active_lanes(par, mask, None, 1)
    lanes = lanes_of(0)
    bits = tik_cmp_lanes(op, src0, start0, src1, start1, lanes=lanes, nrep=1, blks=blks,
                         reps=[0, 0])[0]
    new = old
    for i in lanes:
        new = (new & ~(1 << i)) | (int(bits[i]) << i)
    return new


def tik_vsel(dst, dst_start, src0, start0, src1, start1, *, sel_bits, mask, nrep, blks,
             reps, scalar=None):
    """vsel lane by lane: dst lane i of repeat r = sel_bits(r)[i] ? src0 lane : src1 lane
    (src1 None: ``scalar``, in dst's dtype), for the active lanes; bit copies.
    sel_bits(r) -> an int whose bit i is lane i's bit.  Returns the new dst."""
    dst = dst.copy()
    par = tik_lanes_per_repeat(dst.dtype)
    n, lanes_of = tik_active_lanes(par, mask, None, nrep)
    ut = {2: np.uint16, 4: np.uint32}[dst.dtype.itemsize]
    dv, av = dst.view(ut), src0.view(ut)
    bv = None if src1 is None else src1.view(ut)
    sbits = None if scalar is None else np.array([scalar], dtype=dst.dtype).view(ut)[0]
    for r in range(n):
        sb = sel_bits(r)
        vals = []
        lanes = lanes_of(r)
        for i in lanes:      # read every active lane of the repeat, then write
            if (sb >> i) & 1:
                vals.append(av[tik_lane_offset(r, i, start0, blks[1], reps[1], dst.dtype)])
            elif bv is None:
                vals.append(sbits)
            else:
                vals.append(bv[tik_lane_offset(r, i, start1, blks[2], reps[2], dst.dtype)])
        for i, v in zip(lanes, vals):
            dv[tik_lane_offset(r, i, dst_start, blks[0], reps[0], dst.dtype)] = v
    return dst


def tik_nchwconv(ub, dst_addrs, src_addrs, es, nrep, dst_rep, src_rep, dst_hi=False,
                 src_hi=False):
    """vnchwconv on a flat byte array ``ub`` (a copy is returned).  *_addrs: 16 byte
    addresses each; *_rep: repeat strides in 32-byte blocks; repeat_times 1 starts at
    addr + rep*32 (documented).  Per repeat every source block is read before writing."""
    ub = ub.copy()
    shift = 1 if nrep == 1 else 0
    for r in range(nrep):
        blocks = [ub[a + (r + shift) * src_rep * 32:][:32].copy() for a in src_addrs]
        for j in range(16):
            d = dst_addrs[j] + (r + shift) * dst_rep * 32
            if es == 1:
                col = [blocks[i][16 * int(src_hi) + j] for i in range(16)]
                ub[d + 16 * int(dst_hi):d + 16 * int(dst_hi) + 16] = col
            elif es == 2:
                col = [blocks[i].view(np.uint16)[j] for i in range(16)]
                ub[d:d + 32] = np.array(col, dtype=np.uint16).view(np.uint8)
            else:
                c, h = j // 2, j % 2
                col = [blocks[8 * h + k].view(np.uint32)[c] for k in range(8)]
                ub[d:d + 32] = np.array(col, dtype=np.uint32).view(np.uint8)
    return ub


def tik_transpose16(dst, dst_start, src, src_start, nrep=1, dst_rep=0, src_rep=0):
    """vtranspose / vec_trans on flat 16-bit arrays (element starts; rep in 256-element
    units): dst block r [i*16+j] = src block r [j*16+i]."""
    dst = dst.copy()
    for r in range(nrep):
        s = src_start + r * src_rep * 256
        d = dst_start + r * dst_rep * 256
        blk = (dst if src is dst else src)[s:s + 256].reshape(16, 16).copy()
        dst[d:d + 256] = blk.T.ravel()
    return dst


def tik_vconcat(dst, dst_start, src, src_start, nrep, mode):
    """vconcat: dst[dst_start + (16r+k)*8 + mode] = src[src_start + 16r+k]."""
    dst = dst.copy()
    for r in range(nrep):
        for k in range(16):
            dst[dst_start + (16 * r + k) * 8 + mode] = src[src_start + 16 * r + k]
    return dst


def tik_vextract(dst, dst_start, src, src_start, nrep, mode):
    """vextract: dst[dst_start + 16r+k] = src[src_start + (16r+k)*8 + mode]."""
    dst = dst.copy()
    for r in range(nrep):
        for k in range(16):
            dst[dst_start + 16 * r + k] = src[src_start + (16 * r + k) * 8 + mode]
    return dst


def tik_atomic_add(gm, src, dtype):
    """set_atomic_add + data_move to GM: gm + src elementwise in dtype (float16: the exact
    sum rounded once; float32: correctly rounded), IEEE inf/NaN."""
    with np.errstate(all="ignore"):
        return (gm.astype(np.float64) + src.astype(np.float64)).astype(dtype)


def tik_scalar_op(name, *vals, dtype="int64", round_mode=""):
    """The scalar intrinsics on Python numbers -> the value dst (of dtype) holds."""
    import math as _m
    u = [int(v) & (2**64 - 1) if not isinstance(v, float) else 0 for v in vals]
    if name == "max":
        r = max(vals)
    elif name == "min":
        r = min(vals)
    elif name == "abs":
        r = abs(vals[0])
    elif name == "sqrt":
        r = _m.sqrt(abs(vals[0]))
    elif name == "countbit0":
        r = 64 - bin(u[0]).count("1")
    elif name == "countbit1":
        r = bin(u[0]).count("1")
    elif name == "countleading0":
        r = 64 - u[0].bit_length()
    elif name == "conv":
        x = vals[0]
        if dtype == "int32":
            if _m.isnan(x):
                return 0
            r = float(tik_round_int(np.array([x]), round_mode, np.int32)[0])
        elif dtype == "float16" and round_mode == "odd":
            return float(tik_f32_to_f16_odd(np.array([x], np.float32))[0])
        else:
            r = x
    if np.dtype(dtype).kind == "f":
        return float(np.array([r], dtype=np.float64).astype(dtype)[0])
    return int(np.array([int(r)], dtype=np.int64).astype(dtype)[0]) if abs(r) < 2**63 \
        else int(r)


def tik_group_reduce(op, dst, dst_start, src, start, *, mask, nrep, dst_rep, blk, rep,
                     sat=False):
    """vcgadd/vcgmax/vcgmin (op add/max/min: one result per block, dst_rep in 8-element
    units) and vcpadd (op pair: one per lane pair, dst_rep in PAR/2 elements), lane by
    lane: active lanes in order, float64, rounded once; groups without an active lane
    are not written.  Returns the new dst."""
    dst = dst.copy()
    par = tik_lanes_per_repeat(src.dtype)
    B = 32 // src.dtype.itemsize
    g = 2 if op == "pair" else B
    per = par // 2 if op == "pair" else 8
    _, lanes_of = tik_active_lanes(par, mask, None, nrep)
    lanes = set(lanes_of(0))
    for r in range(nrep):
        vals = {}
        for q in range(par // g):
            acc = None
            for i in range(q * g, (q + 1) * g):
                if i not in lanes:
                    continue
                v = float(src[tik_lane_offset(r, i, start, blk, rep, src.dtype)])
                if acc is None:
                    acc = v
                elif op in ("add", "pair"):
                    acc = acc + v
                elif op == "max":
                    acc = acc if (acc >= v or math.isnan(acc)) else v
                else:
                    acc = acc if (acc <= v or math.isnan(acc)) else v
            if acc is not None:
                vals[q] = acc
        for q, a in vals.items():
            dst[dst_start + r * dst_rep * per + q] = _round_out(
                np.array([a]), src.dtype, sat and op in ("add", "pair"))[0]
    return dst

# ---- end of tik-isa block ----

# ---- tik-ops: region-proposal sorts (vrpsort16, vmrgsort4) -------------------------------
def _rp_before(a, b):
    """Does score a go before score b (larger first; NaN after every number)?"""
    if np.isnan(b):
        return not np.isnan(a)
    if np.isnan(a):
        return False
    return float(a) > float(b)


def _rp_stable_sort(props):
    """Proposals (n, 8) by score (field 4), larger first, ties in input order: insertion
    sort with the documented comparison (proposal j before i when scores are equal and
    j < i)."""
    out = []
    for p in props:
        k = len(out)
        while k > 0 and _rp_before(p[4], out[k - 1][4]):
            k -= 1
        out.insert(k, p)
    return np.array(out).reshape(-1, 8)


def tik_vrpsort16(dst, dst_start, src, src_start, nrep):
    """vrpsort16: per repeat, 16 proposals of src sorted by score into dst (flat arrays,
    element starts)."""
    dst = dst.copy()
    src = src.copy()
    for r in range(nrep):
        blk = src[src_start + r * 128:src_start + (r + 1) * 128].reshape(16, 8)
        dst[dst_start + r * 128:dst_start + (r + 1) * 128] = _rp_stable_sort(blk).ravel()
    return dst


def tik_vmrgsort4(dst, dst_start, ub, starts, counts, suspend=False):
    """vmrgsort4 (one repeat): merge the sorted lists ub[starts[i]:starts[i]+counts[i]*8]
    by a four-way merge that takes the head with the largest score, the lowest list on
    ties; with ``suspend`` it stops after a list's last proposal was taken."""
    dst = dst.copy()
    heads = [0] * len(starts)
    lists = [ub[s:s + c * 8].reshape(c, 8) for s, c in zip(starts, counts)]
    out = []
    while any(h < len(lst) for h, lst in zip(heads, lists)):
        best = None
        for i, (h, lst) in enumerate(zip(heads, lists)):
            if h < len(lst) and (best is None or
                                 _rp_before(lst[h][4], lists[best][heads[best]][4])):
                best = i
        out.append(lists[best][heads[best]])
        heads[best] += 1
        if suspend and heads[best] == len(lists[best]):
            break
    if out:
        dst[dst_start:dst_start + len(out) * 8] = np.array(out).ravel()
    return dst
# ---- end of tik-ops block ----


# ---- tik-cube block: matmul, conv2d, fixpipe (element by element, from the TIK docs) ----

def tik_matmul(dst, a, b, m, k, n, init_l1out=True):
    """TIK matmul on flat arrays: dst [N1, Mr, 16] (float32/int32), a [K1, Mr, K0],
    b [K1, Nr, K0]; C[i, j] over i < Mr, j < Nr, summed over kk < k in ascending order,
    float32 adds of exact float16 products (or wrapping int32)."""
    K0 = 16 if a.dtype == np.float16 else 32
    Mr, Nr = -(-m // 16) * 16, -(-n // 16) * 16
    Kr = -(-k // K0) * K0
    A = a.reshape(-1)[:Mr * Kr].reshape(Kr // K0, Mr, K0)
    B = b.reshape(-1)[:Kr * Nr].reshape(Kr // K0, Nr, K0)
    out = dst.copy().reshape(-1)
    D = out[:Mr * Nr].reshape(Nr // 16, Mr, 16)
    isf = a.dtype == np.float16
    for i in range(Mr):
        for j in range(Nr):
            acc = np.float32(0) if init_l1out else D[j // 16, i, j % 16]
            if isf:
                for kk in range(k):
                    p = np.float32(A[kk // K0, i, kk % K0]) * np.float32(B[kk // K0, j, kk % K0])
                    acc = np.float32(acc + p)
            else:
                acc = int(acc)
                for kk in range(k):
                    acc += int(A[kk // K0, i, kk % K0]) * int(B[kk // K0, j, kk % K0])
                acc = np.int64(acc).astype(np.int32) if -2**31 <= acc < 2**31 else \
                    np.int32(((acc + 2**31) % 2**32) - 2**31)
            D[j // 16, i, j % 16] = acc
    return out.reshape(dst.shape)


def tik_conv2d(dst, fm, w, stride, pad, dilation, pad_value=0, init_l1out=True):
    """TIK conv2d: fm [C1, H, W, C0], w [C1, Kh, Kw, Cout, C0], dst [Cout/16, round_howo, 16];
    pad = [left, right, top, bottom]; rows >= Ho*Wo are left unchanged."""
    C1, H, W, C0 = fm.shape
    _, KH, KW, CO, _ = w.shape
    sh, sw = stride
    pl, pr, pt, pb = pad
    dh, dw = dilation
    ho = (H + pt + pb - dh * (KH - 1) - 1) // sh + 1
    wo = (W + pl + pr - dw * (KW - 1) - 1) // sw + 1
    out = dst.copy()
    isf = fm.dtype == np.float16
    for oh in range(ho):
        for ow in range(wo):
            for co in range(CO):
                acc = (np.float32(0) if isf else 0) if init_l1out else \
                    out[co // 16, oh * wo + ow, co % 16]
                if not isf:
                    acc = int(acc)
                for c1 in range(C1):
                    for i in range(KH):
                        for j in range(KW):
                            y, x = oh * sh - pt + i * dh, ow * sw - pl + j * dw
                            for c0 in range(C0):
                                v = fm[c1, y, x, c0] if 0 <= y < H and 0 <= x < W else pad_value
                                if isf:
                                    acc = np.float32(acc + np.float32(np.float16(v)) *
                                                     np.float32(w[c1, i, j, co, c0]))
                                else:
                                    acc += int(v) * int(w[c1, i, j, co, c0])
                if not isf:
                    acc = np.int32(((acc + 2**31) % 2**32) - 2**31)
                out[co // 16, oh * wo + ow, co % 16] = acc
    return out


def tik_fixpipe(dst, src, cburst_num, burst_len, dst_stride, src_stride, bias=None,
                ele=None, mode=None, relu=False, saturate=True):
    """TIK fixpipe on flat arrays: bias -> element-wise-add -> quantize -> relu, burst by
    burst (see fastisa.tik.fixpipe's docstring for the layout)."""
    out = dst.copy().reshape(-1)
    s = src.reshape(-1)
    howo = burst_len * 32 // src.dtype.itemsize // 16
    rh = -(-howo // 16) * 16
    sb = (rh // 16 + src_stride) * 256
    db = howo * 16 + dst_stride * 32 // dst.dtype.itemsize
    isf = src.dtype == np.float32
    for i in range(cburst_num):
        for r in range(howo):
            for c in range(16):
                e = i * sb + r * 16 + c
                x = s[e]
                if bias is not None:
                    x = np.float32(x + bias.reshape(-1)[i * 16 + c]) if isf else \
                        np.int32(((int(x) + int(bias.reshape(-1)[i * 16 + c]) + 2**31) % 2**32)
                                 - 2**31)
                if ele is not None:
                    x = np.float32(x + ele.reshape(-1)[e]) if isf else \
                        np.int32(((int(x) + int(ele.reshape(-1)[e]) + 2**31) % 2**32) - 2**31)
                if mode is not None:
                    with np.errstate(over="ignore", invalid="ignore"):
                        y = np.float16(float(x))
                    if saturate:
                        if np.isnan(y):
                            y = np.float16(0)
                        elif np.isinf(y):
                            y = np.float16(65504 if y > 0 else -65504)
                    x = y
                if relu:
                    x = x if x > 0 else type(x)(0)
                out[i * db + r * 16 + c] = x
    return out.reshape(dst.shape)


def tik_h_region(shape, index):
    """Flat element indices (row-major) of a TIK 1.5 h_* region of a tensor of ``shape``:
    index None = all; one entry = a range of the flattened tensor; one entry per
    dimension = the box (an int keeps a length-1 dimension).  -> (region shape, indices)."""
    import itertools
    size = int(np.prod(shape))
    if index is None:
        ranges, strides = [range(n) for n in shape], [int(np.prod(shape[d + 1:]))
                                                      for d in range(len(shape))]
    else:
        if len(index) == 1:
            dims, strides = [size], [1]
        else:
            dims, strides = list(shape), [int(np.prod(shape[d + 1:])) for d in range(len(shape))]
        ranges = []
        for ix, n in zip(index, dims):
            if isinstance(ix, slice):
                ranges.append(range(0 if ix.start is None else ix.start,
                                    n if ix.stop is None else ix.stop))
            else:
                ranges.append(range(ix, ix + 1))
    flat = [sum(i * st for i, st in zip(pos, strides)) for pos in itertools.product(*ranges)]
    return tuple(len(r) for r in ranges), np.array(flat, dtype=np.int64)


def tik_h_reduce(name, src, sat):
    """h_reduce_*: x [R, K] -> [K], pairwise halving (x[r] op x[r + R//2], odd last carried),
    each step rounded as the vector instruction (tik_op)."""
    rows = [src[r].copy() for r in range(src.shape[0])]
    op = {"h_reduce_sum": "vec_add", "h_reduce_max": "vec_max", "h_reduce_min": "vec_min"}[name]
    while len(rows) > 1:
        h = len(rows) // 2
        new = [tik_op(op, src.dtype, [rows[r], rows[r + h]], None, rows[r], sat)
               for r in range(h)]
        if len(rows) % 2:
            new.append(rows[-1])
        rows = new
    return rows[0]


def tik_tensor_mov_matrix(dst, src, nburst, burst_len, dst_step, src_step, relu=False,
                          sat=True):
    """tensor_mov block mode 'm' on flat arrays: burst i copies burst_len*256 elements from
    src[i*src_step:] to dst[i*dst_step:], converting float32 -> float16 as vconv does and
    clamping at 0 with relu."""
    out = dst.copy()
    n = burst_len * 256
    for i in range(nburst):
        x = src[i * src_step:i * src_step + n]
        if x.dtype != dst.dtype:
            x = tik_op("vec_conv", dst.dtype, [x], None, out[:n], sat)
        if relu:
            x = np.array([v if v > 0 else 0 for v in x], dtype=dst.dtype)
        out[i * dst_step:i * dst_step + n] = x
    return out

# ---- end of tik-cube block ----


# ---- end of TIK section ----


# ======================================================================================
# NKI (specs 000 and 001; reference/nki.md section 2)
# ======================================================================================


# ---- NKI core: topk, max8 family, iota, casting (nki-core) ----------------------------

def nki_bf16_order_key(bits):
    """Order key of bf16 bit patterns as Python-comparable floats: value order with
    -0 == +0; a NaN ranks by its bit pattern (positive NaN above +inf, negative below -inf).
    """
    bits = np.asarray(bits, dtype=np.uint16).astype(np.int64)
    vals = (bits << 16).astype(np.uint32).view(np.float32).astype(np.float64)
    vals = np.where(vals == 0.0, 0.0, vals)                    # -0 == +0
    nan = np.isnan(vals)
    pos = (bits & 0x8000) == 0
    # NaN: beyond the infinities, ordered by payload bits
    vals = np.where(nan & pos, np.inf, vals)
    vals = np.where(nan & ~pos, -np.inf, vals)
    tier = np.where(nan & pos, 1, np.where(nan & ~pos, -1, 0))
    payload = np.where(pos, bits & 0x7FFF, -(bits & 0x7FFF))
    return tier, vals, payload


def nki_topk_group(snake_bits, k):
    """Spec 001 for one group: (value bits, indices) of the top k of a de-snaked group,
    descending by value, ties by lower index first.  snake_bits: 1-D uint16, length n."""
    snake_bits = np.asarray(snake_bits, dtype=np.uint16)
    tier, vals, payload = nki_bf16_order_key(snake_bits)
    idx = np.arange(snake_bits.size)
    order = sorted(idx.tolist(), key=lambda i: (-tier[i], -vals[i], -payload[i] if tier[i] else 0, i))
    top = np.array(order[:k], dtype=np.int64)
    return snake_bits[top], top.astype(np.uint32)


def nki_desnake(src_bits, n):
    """[P, F] bf16 bits (P a multiple of 16) -> [P // 16, n] snakes: e = col*16 + partition."""
    src_bits = np.asarray(src_bits, dtype=np.uint16)
    P = src_bits.shape[0]
    cols = (n + 15) // 16
    out = []
    for g in range(P // 16):
        block = src_bits[16 * g:16 * g + 16, :cols]        # [16, cols]
        out.append(block.T.reshape(-1)[:n])
    return np.stack(out)


def nki_topk(src_bits, n, k, val_before, idx_before):
    """nisa.topk(sorted=True) on [P, F] bf16 bits: the expected val_dst / idx_dst ([P, k]),
    starting from their previous contents; only result slots j < k are written, at
    partition j % 16, column j // 16 of each group."""
    val = np.array(val_before, dtype=np.uint16, copy=True)
    idx = np.array(idx_before, dtype=np.uint32, copy=True)
    snakes = nki_desnake(src_bits, n)
    for g in range(snakes.shape[0]):
        v, i = nki_topk_group(snakes[g], k)
        for j in range(k):
            val[16 * g + j % 16, j // 16] = v[j]
            idx[16 * g + j % 16, j // 16] = i[j]
    return val, idx


def nki_topk_results(val_bits, idx, k):
    """Read back the k results per group from snake-layout [P, >= ceil(k/16)] outputs."""
    P = val_bits.shape[0]
    v = np.empty((P // 16, k), np.uint16)
    i = np.empty((P // 16, k), np.uint32)
    for g in range(P // 16):
        for j in range(k):
            v[g, j] = val_bits[16 * g + j % 16, j // 16]
            i[g, j] = idx[16 * g + j % 16, j // 16]
    return v, i


def _f32_rank_key(x):
    x = float(x)
    if math.isnan(x):
        return (1, 0.0)
    return (0, 0.0 if x == 0.0 else x)


def nki_max8(rows):
    """max8 on [P, N] float32 rows: (values [P, 8], indices [P, 8]), descending, NaN above
    +inf, -0 == +0, ties by lower index."""
    rows = np.asarray(rows, dtype=np.float32)
    P, N = rows.shape
    vals = np.empty((P, 8), np.float32)
    idx = np.empty((P, 8), np.uint32)
    for p in range(P):
        order = sorted(range(N), key=lambda i: (tuple(-v for v in _f32_rank_key(rows[p, i])), i))
        for j, i in enumerate(order[:8]):
            vals[p, j] = rows[p, i]
            idx[p, j] = i
    return vals, idx


def nki_find_index8(data, vals):
    """nc_find_index8 on [P, N] / [P, 8] float32: first occurrence, duplicates in vals take
    successive occurrences, missing -> 0xFFFFFFFF (reference/nki.md 2.3)."""
    data = np.asarray(data, dtype=np.float32)
    vals = np.asarray(vals, dtype=np.float32)
    P, N = data.shape
    out = np.full((P, 8), 0xFFFFFFFF, np.uint32)
    for p in range(P):
        for j in range(8):
            start = 0
            prev = [i for i in range(j) if vals[p, i] == vals[p, j]]
            if prev:
                if out[p, prev[-1]] == 0xFFFFFFFF:
                    continue
                start = int(out[p, prev[-1]]) + 1
            for i in range(start, N):
                if data[p, i] == vals[p, j]:
                    out[p, j] = i
                    break
    return out


def nki_match_replace8(data, vals, imm):
    """nc_match_replace8 on [P, N] / [P, 8] float32: for i = 7..0 replace the first element
    equal to vals[i] by imm (a later search sees earlier replacements); returns (data after,
    indices [P, 8], 0xFFFFFFFF when not found)."""
    work = np.array(data, dtype=np.float32, copy=True)
    vals = np.asarray(vals, dtype=np.float32)
    P, N = work.shape
    idx = np.full((P, 8), 0xFFFFFFFF, np.uint32)
    for p in range(P):
        for i in range(7, -1, -1):
            for e in range(N):
                if work[p, e] == vals[p, i]:
                    work[p, e] = np.float32(imm)
                    idx[p, i] = e
                    break
    return work, idx


def nki_iota(P, pattern, offset=0, channel_multiplier=0):
    """iota values as int32 [P, prod(num)]: offset + p*cm + sum idx_d*step_d, wrapped."""
    sizes = [n for _, n in pattern]
    out = np.empty((P, int(np.prod(sizes))), np.int64)
    for p in range(P):
        for flat, multi in enumerate(np.ndindex(*sizes)):
            out[p, flat] = offset + p * channel_multiplier + \
                sum(i * s for i, (s, _) in zip(multi, pattern))
    return ((out + 2**31) % 2**32 - 2**31).astype(np.int32)


def nki_f32_to(x, np_dtype):
    """float32 -> destination storage with one RNE rounding (spec 000 Type Casting):
    integers RNE + saturate (NaN -> 0), floats by ml_dtypes / numpy RNE casts."""
    x = np.asarray(x, dtype=np.float32)
    dt = np.dtype(np_dtype)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        r = np.rint(x.astype(np.float64))
        r = np.where(np.isnan(r), 0, np.clip(r, info.min, info.max))
        return r.astype(dt)
    return x.astype(dt)



# ---- NKI compute (nki-compute): casting, operators, activation, reduce, matmul ----------
# Spec 000 "Type Casting", Table 8 (operators), Table 9 (activation functions);
# reference/nki.md 2.5-2.17.  Values are numpy arrays; formats are spec names.

_NKI_FP8 = {  # name: (mantissa bits, bias, max finite, overflow -> NaN)
    "float8_e4m3": (3, 7, 240.0, False),
    "float8_e5m2": (2, 15, 57344.0, False),
    "float8_e4m3fn": (3, 7, 448.0, True),
}
_NKI_NP = {
    "uint8": np.uint8, "int8": np.int8, "uint16": np.uint16, "int16": np.int16,
    "uint32": np.uint32, "int32": np.int32, "bool_": np.uint8, "float16": np.float16,
    "bfloat16": ml_dtypes.bfloat16, "tfloat32": np.float32, "float32": np.float32,
    "float8_e4m3": ml_dtypes.float8_e4m3, "float8_e5m2": ml_dtypes.float8_e5m2,
    "float8_e4m3fn": ml_dtypes.float8_e4m3fn,
}


def nki_to_f32(a, fmt):
    """Elements of a ``fmt`` array as float32: floats exactly, integers RNE (spec 000)."""
    return np.asarray(a).astype(np.float32)


def _nki_round_p(x, man, emin):
    """Round float64 x to ``man`` mantissa bits, minimum exponent emin, RNE, unbounded above."""
    x = np.asarray(x, np.float64)
    a = np.abs(x)
    fin = np.isfinite(a) & (a > 0)
    safe = np.where(fin, a, 1.0)
    _, e = np.frexp(safe)
    e = np.maximum(e - 1, emin)
    q = np.ldexp(1.0, e - man)
    r = np.rint(safe / q) * q
    return np.where(fin, np.copysign(r, x), x)


def nki_round(x, fmt):
    """float64 (or float32) values rounded ONCE to ``fmt``; returns its storage array.

    Integers: RNE, saturate to the range, NaN -> 0 (spec 000 FP32-to-Integer); bool_ to
    [0, 1].  Floats: RNE with subnormals; overflow -> inf (NaN for float8_e4m3fn).
    """
    npdt = _NKI_NP[fmt]
    if fmt == "float32":   # float32 in: unchanged (NaN payloads too); float64 in: one RNE
        return np.asarray(x).astype(np.float32)
    x_in = np.asarray(x)
    x = np.asarray(x, np.float64)
    if fmt in ("uint8", "int8", "uint16", "int16", "uint32", "int32", "bool_"):
        lo, hi = (0.0, 1.0) if fmt == "bool_" else (float(np.iinfo(npdt).min), float(np.iinfo(npdt).max))
        r = np.where(np.isnan(x), 0.0, np.clip(np.rint(x), lo, hi))
        return r.astype(npdt)
    if fmt in _NKI_FP8:
        man, bias, mx, ovf_nan = _NKI_FP8[fmt]
        emin = 1 - bias
    elif fmt == "bfloat16":
        man, emin, mx, ovf_nan = 7, -126, float(ml_dtypes.finfo(ml_dtypes.bfloat16).max), False
    elif fmt == "float16":
        man, emin, mx, ovf_nan = 10, -14, 65504.0, False
    elif fmt == "tfloat32":
        man, emin, mx, ovf_nan = 10, -126, (2 - 2.0**-10) * 2.0**127, False
    else:
        raise ValueError(fmt)
    r = _nki_round_p(x, man, emin)
    over = np.abs(r) > mx
    r = np.where(over & ~np.isnan(r), np.copysign(np.nan if ovf_nan else np.inf, r), r)
    if fmt == "tfloat32":
        out = r.astype(np.float32)
        nan = np.isnan(out)
        bits = out.view(np.uint32)
        return np.where(nan, (bits & np.uint32(0x80000000)) | np.uint32(0x7FC00000),
                        bits).astype(np.uint32).view(np.float32)
    if fmt == "float16":
        # A NaN converts with numpy's float32 -> float16 rule (payload kept, quiet bit not
        # forced); numpy's float64 -> float16 path would force the quiet bit.
        # (float32 -> float64 would quiet a signalling NaN: use the float32 input itself.)
        with np.errstate(invalid="ignore"):
            nan16 = x_in.astype(np.float32).astype(np.float16)
        return np.where(np.isnan(r), nan16, r.astype(np.float16))
    return r.astype(npdt)


def _nki_qnan():
    return np.uint32(0x7FC00000).view(np.float32)


def nki_maximum(a, b):
    """IEEE 754-2019 maximum in float32: NaN -> canonical quiet NaN, -0 < +0."""
    a = np.asarray(a, np.float32)
    b = np.asarray(b, np.float32)
    a, b = np.broadcast_arrays(a, b)
    eq = np.where(a == b, (a.view(np.uint32) & b.view(np.uint32)).view(np.float32), 0)
    r = np.where(a > b, a, np.where(b > a, b, eq))
    return np.where(np.isnan(a) | np.isnan(b), _nki_qnan(), r).astype(np.float32)


def nki_minimum(a, b):
    a = np.asarray(a, np.float32)
    b = np.asarray(b, np.float32)
    a, b = np.broadcast_arrays(a, b)
    eq = np.where(a == b, (a.view(np.uint32) | b.view(np.uint32)).view(np.float32), 0)
    r = np.where(a < b, a, np.where(b < a, b, eq))
    return np.where(np.isnan(a) | np.isnan(b), _nki_qnan(), r).astype(np.float32)


def _nki_pow(a, b):
    f = np.frompyfunc(lambda x, y: _nki_pyfloat_pow(x, y), 2, 1)
    return f(a.astype(np.float64), b.astype(np.float64)).astype(np.float64).astype(np.float32)


def _nki_pyfloat_pow(x, y):
    try:
        return math.pow(x, y)
    except (OverflowError, ValueError):
        return float(np.power(np.float64(x), np.float64(y)))


def nki_alu(op, a, b=None):
    """Arithmetic operator ``op`` (a spec name) on float32 arrays, in float32 (spec 000 Table 8)."""
    a = np.asarray(a, np.float32)
    b = np.float32(0) if b is None else np.asarray(b, np.float32)
    one, zero = np.float32(1), np.float32(0)
    with np.errstate(all="ignore"):
        if op == "add":
            return (a + b).astype(np.float32)
        if op == "subtract":
            return (a - b).astype(np.float32)
        if op == "multiply":
            return (a * b).astype(np.float32)
        if op == "maximum":
            return nki_maximum(a, b)
        if op == "minimum":
            return nki_minimum(a, b)
        cmp = {"equal": np.equal, "not_equal": np.not_equal, "greater_equal": np.greater_equal,
               "greater": np.greater, "less_equal": np.less_equal, "less": np.less}
        if op in cmp:
            return np.where(cmp[op](a, b), one, zero).astype(np.float32)
        if op == "logical_and":
            return np.where((a != 0) & (b != 0), one, zero).astype(np.float32)
        if op == "logical_or":
            return np.where((a != 0) | (b != 0), one, zero).astype(np.float32)
        if op == "logical_xor":
            return np.where((a != 0) != (b != 0), one, zero).astype(np.float32)
        if op == "power":
            a, b = np.broadcast_arrays(a, b)
            return _nki_pow(a, b)
        if op == "abs_max":     # SDK 2.33 nl.abs_max: x if |x| > |y| else y (signed)
            a, b = np.broadcast_arrays(a, b)
            return np.where(np.abs(a) > np.abs(b), a, b).astype(np.float32)
        if op == "abs_min":     # SDK 2.33 nl.abs_min: x if |x| < |y| else y (signed)
            a, b = np.broadcast_arrays(a, b)
            return np.where(np.abs(a) < np.abs(b), a, b).astype(np.float32)
        if op == "abs":
            return np.abs(a)
        if op == "square":
            return (a * a).astype(np.float32)
        if op == "relu":
            return np.where(np.isnan(a), a, np.where(a > 0, a, zero)).astype(np.float32)
        if op == "rsqrt":
            return (1.0 / np.sqrt(a.astype(np.float64))).astype(np.float32)
        if op == "reciprocal":
            return (one / a).astype(np.float32)
    raise ValueError(op)


def nki_bitvec(op, a, b, width_a):
    """Bitvec operator on uint32 bit patterns (a zero-extended from ``width_a`` bits)."""
    a = np.asarray(a, np.uint64) & ((1 << width_a) - 1)
    b = np.asarray(b, np.uint64) & 0xFFFFFFFF
    m = np.uint64(0xFFFFFFFF)
    if op == "invert":
        r = ~a & m
    elif op == "bitwise_and":
        r = a & b
    elif op == "bitwise_or":
        r = a | b
    elif op == "bitwise_xor":
        r = a ^ b
    elif op == "left_shift":
        r = np.where(b >= 32, 0, (a << np.minimum(b, 31)) & m)
    elif op == "right_shift":
        r = np.where(b >= 32, 0, a >> np.minimum(b, 31))
    else:
        raise ValueError(op)
    return r.astype(np.uint64)


def _nki_sig(x):
    return 1.0 / (1.0 + math.exp(-x)) if x >= 0 else math.exp(x) / (1.0 + math.exp(x))


def _nki_softplus(x):
    return x + math.log1p(math.exp(-x)) if x > 0 else math.log1p(math.exp(x))


def _nki_safe(f):
    def g(x):
        try:
            return f(x)
        except OverflowError:
            return math.inf
        except ValueError:
            return math.nan
    return g


_NKI_ACT = {
    "copy": lambda x: x,
    "square": lambda x: x * x,
    "sigmoid": _nki_sig,
    "relu": lambda x: x if x != x else (x if x > 0 else 0.0),
    "gelu": lambda x: 0.5 * x * (1.0 + math.erf(x * 0.70710678118654752440)),
    "gelu_dx": lambda x: 0.5 * (1.0 + math.erf(x * 0.70710678118654752440))
    + x * 0.39894228040143267794 * math.exp(-0.5 * x * x),
    "gelu_apprx_tanh": lambda x: 0.5 * x * (1.0 + math.tanh(
        0.79788456080286535588 * (x + 0.044715 * x * x * x))),
    "gelu_apprx_sigmoid": lambda x: x * _nki_sig(1.702 * x),
    "gelu_apprx_sigmoid_dx": lambda x: (lambda s: s + 1.702 * x * s * (1.0 - s))(_nki_sig(1.702 * x)),
    "silu": lambda x: x * _nki_sig(x),
    "silu_dx": lambda x: (lambda s: s * (1.0 + x * (1.0 - s)))(_nki_sig(x)),
    "tanh": math.tanh,
    "softplus": _nki_softplus,
    "mish": lambda x: x * math.tanh(_nki_softplus(x)),
    "erf": math.erf,
    "erf_dx": lambda x: 1.12837916709551257390 * math.exp(-x * x),
    "exp": math.exp,
    "log": lambda x: -math.inf if x == 0 else (math.nan if x < 0 else math.log(x)),
    "log1p": lambda x: -math.inf if x == -1 else (math.nan if x < -1 else math.log1p(x)),
    "sin": math.sin,
    "arctan": math.atan,
    "sqrt": lambda x: math.nan if x < 0 else math.sqrt(x),
    "rsqrt": lambda x: math.inf if x == 0 and math.copysign(1, x) > 0 else (
        -math.inf if x == 0 else (math.nan if x < 0 else 1.0 / math.sqrt(x))),
    "reciprocal": lambda x: math.copysign(math.inf, x) if x == 0 else 1.0 / x,
    "sign": lambda x: x if x != x else (1.0 if x > 0 else (-1.0 if x < 0 else 0.0)),
    "abs": abs,
}


def nki_sin_scalar(x):
    """ScalarE sin: accurate in [-pi, pi]; outside, the cubic about +-pi (spec 000 note)."""
    a = abs(x)
    if not a > math.pi:
        return _nki_safe(math.sin)(x)
    u = a - math.pi
    u = u * (u * u / 6.0 - 1.0)        # -u + u^3/6, evaluated so that +inf -> +inf
    return -u if x < 0 else u


def nki_activation_f64(op, x, scalar_engine=True, alpha=0.0):
    """Activation ``op`` of float32 inputs ``x`` in float64, element by element (libm)."""
    if op == "sin" and scalar_engine:
        f = nki_sin_scalar
    elif op == "prelu":
        def f(v):
            return v if v != v else (v if v > 0 else (alpha * v if v < 0 else 0.0))
    else:
        base = _NKI_ACT[op]

        def f(v):
            return _nki_safe(base)(v)
    # a NaN input comes out unchanged (sign and payload); a NaN made from a number is +qNaN
    def g(v):
        if v != v:
            return float(v)
        y = float(f(float(v)))
        return math.nan if y != y else y
    vf = np.frompyfunc(g, 1, 1)
    return vf(np.asarray(x, np.float32)).astype(np.float64)


def nki_activation(op, data, data_fmt, dst_fmt, scale=1.0, bias=None, scalar_engine=True,
                   alpha=0.0, acc=None):
    """``dst = op(data*scale + bias)`` (float32 affine, float64 function, one rounding).

    scale / bias: scalars or [P] arrays (None = no bias).  acc: float32 [P] registers to add
    the float32-rounded results into (left to right), updated in place.
    Returns dst's storage array [P, F].
    """
    t = nki_to_f32(data, data_fmt)
    P = t.shape[0]
    sc = np.asarray(scale, np.float32).reshape(-1, 1) if np.ndim(scale) else np.float32(scale)
    if not (np.ndim(scale) == 0 and np.float32(scale) == 1):
        t = (t * sc).astype(np.float32)
    if bias is not None:
        b = np.asarray(bias, np.float32).reshape(-1, 1) if np.ndim(bias) else np.float32(bias)
        t = (t + b).astype(np.float32)
    y = nki_activation_f64(op, t, scalar_engine, alpha)
    if acc is not None:
        y32 = y.astype(np.float32)
        for p in range(P):
            s = np.float32(acc[p])
            for v in y32[p]:
                s = np.float32(s + v)
            acc[p] = _nki_qnan() if np.isnan(s) else s   # a NaN sum is the canonical qNaN
    return nki_round(y, dst_fmt)


def nki_tensor_scalar(data, data_fmt, dst_fmt, op0, operand0, op1=None, operand1=None,
                      reverse0=False, reverse1=False):
    """(data op0 operand0) op1 operand1 in float32 (arithmetic), one rounding to dst."""
    t = nki_to_f32(data, data_fmt)
    for op, opd, rev in ((op0, operand0, reverse0), (op1, operand1, reverse1)):
        if op is None:
            continue
        o = np.asarray(opd if opd is not None else 0, np.float32)
        o = o.reshape(-1, 1) if o.ndim else o
        t = nki_alu(op, o, t) if rev and op not in ("abs", "square", "relu", "rsqrt", "reciprocal") \
            else nki_alu(op, t, o)
    return nki_round(t, dst_fmt)


def nki_tensor_reduce(data, data_fmt, dst_fmt, op, negate=False):
    """Fold each row of a [R, F] array left to right in float32; negate; one rounding.

    maximum / minimum are IEEE 754-2019 (order-independent); add / subtract / multiply /
    logical ops are folded strictly left to right.
    """
    t = nki_to_f32(data, data_fmt)
    R = t.shape[0]
    out = np.empty(R, np.float32)
    for r in range(R):
        if op == "maximum":
            out[r] = _nki_fold(nki_maximum, t[r])
        elif op == "minimum":
            out[r] = _nki_fold(nki_minimum, t[r])
        else:
            out[r] = _nki_fold(lambda a, b: nki_alu(op, a, b), t[r])
    if negate:
        out = (out * np.float32(-1)).astype(np.float32)
    out = np.where(np.isnan(out), _nki_qnan(), out)   # NaN results: canonical quiet NaN
    return nki_round(out, dst_fmt)


def _nki_fold(f, row):
    acc = row[0]
    for v in row[1:]:
        acc = f(acc, v)[()]
    return acc


def nki_matmul(stationary, moving, start):
    """start + stationary.T @ moving in float32: products and sums rounded, k ascending."""
    s = np.asarray(stationary, np.float32)
    v = np.asarray(moving, np.float32)
    out = np.array(start, np.float32, copy=True)
    for k in range(s.shape[0]):
        out = (out + (s[k][:, None] * v[k][None, :]).astype(np.float32)).astype(np.float32)
    return out



# ---- end of NKI section ----


# ======================================================================================
# PTO (specs 003 and 004; reference/pto.md sections 1 and 2)
# ======================================================================================


# ---- pto-core oracles (tiles and instructions) ---------------------------------------
# Inputs are the numpy values of the operands' valid regions; each oracle returns dst's
# valid region in dst's dtype.  Floats: float32 arithmetic rounded once (RNE) to T;
# transcendentals in float64 rounded once; integers in int64, wrapping to T
# (reference/pto.md 2.2-2.3).


def pto_f64_to(x, dtype):
    """Round float64 values once (RNE) to ``dtype`` (float32, float16 or bfloat16)."""
    x = np.asarray(x, dtype=np.float64)
    dt = np.dtype(dtype)
    if dt == np.float32:
        return x.astype(np.float32)
    if dt == np.float16:
        return x.astype(np.float16)          # numpy rounds double -> half directly
    # bfloat16: round to odd in float32 first (24 >= 8 + 2 bits), then RNE to bf16.
    f = x.astype(np.float32)
    with np.errstate(invalid="ignore"):
        inexact = (f.astype(np.float64) != x) & np.isfinite(f)
    bits = f.view(np.uint32)
    even = (bits & 1) == 0
    fix = inexact & even
    toward = np.where(x > f.astype(np.float64), np.float32(np.inf), np.float32(-np.inf))
    f = np.where(fix, np.nextafter(f, toward), f)
    return f.astype(ml_dtypes.bfloat16)


def pto_f32_to(x, dtype):
    """Round float32 values once (RNE) to ``dtype``."""
    return np.asarray(x, dtype=np.float32).astype(dtype)


def _pto_is_float(dtype):
    return np.dtype(dtype) in (np.dtype(np.float32), np.dtype(np.float16),
                               np.dtype(ml_dtypes.bfloat16))


def pto_unary(op, x, dtype=None):
    """TEXP/TLOG/TSQRT/TRSQRT (float64, rounded once), TRECIP/TABS/TNEG/TRELU (in T),
    TRECIP on integers = truncating 1/x (reference/pto.md 2.3)."""
    x = np.asarray(x)
    dtype = x.dtype if dtype is None else np.dtype(dtype)
    with np.errstate(all="ignore"):
        if _pto_is_float(x.dtype):
            if op in ("EXP", "LOG", "SQRT", "RSQRT"):
                d = x.astype(np.float64)
                r = {"EXP": np.exp, "LOG": np.log, "SQRT": np.sqrt,
                     "RSQRT": lambda v: 1.0 / np.sqrt(v)}[op](d)
                return pto_f64_to(r, dtype)
            f = x.astype(np.float32)
            r = {"RECIP": lambda v: np.float32(1) / v, "ABS": np.abs, "NEG": np.negative,
                 "RELU": lambda v: np.where(v > 0, v, np.float32(0)),
                 "COPY": lambda v: v}[op](f)
            return pto_f32_to(r, dtype)
        i = x.astype(np.int64)
        if op == "RECIP":
            r = np.where(np.abs(i) == 1, i, 0)
        else:
            r = {"ABS": np.abs, "NEG": np.negative, "RELU": lambda v: np.where(v > 0, v, 0),
                 "COPY": lambda v: v}[op](i)
        return r.astype(dtype)


def pto_binary(op, a, b, dtype=None):
    """dst = a (op) b elementwise with numpy broadcasting: ADD SUB MUL DIV, MAX = std::max
    (``a < b ? b : a``), MIN = std::min (``b < a ? b : a``), EXPDIF = exp(round_T(a - b))
    in float64 rounded once.  Integers: int64, truncating division, wrap to T."""
    a = np.asarray(a)
    b = np.asarray(b)
    dtype = a.dtype if dtype is None else np.dtype(dtype)
    with np.errstate(all="ignore"):
        if _pto_is_float(a.dtype):
            x = a.astype(np.float32)
            y = b.astype(np.float32)
            if op == "EXPDIF":
                d = pto_f32_to(x - y, a.dtype).astype(np.float64)
                return pto_f64_to(np.exp(d), dtype)
            r = {"ADD": np.add, "SUB": np.subtract, "MUL": np.multiply, "DIV": np.divide,
                 "MAX": lambda p, q: np.where(p < q, q, p),
                 "MIN": lambda p, q: np.where(q < p, q, p)}[op](x, y)
            return pto_f32_to(r, dtype)
        x = a.astype(np.int64)
        y = b.astype(np.int64)
        if op == "DIV":
            q = np.abs(x) // np.where(y == 0, 1, np.abs(y))
            r = np.sign(x) * np.sign(y) * q
        else:
            r = {"ADD": np.add, "SUB": np.subtract, "MUL": np.multiply,
                 "MAX": lambda p, q: np.where(p < q, q, p),
                 "MIN": lambda p, q: np.where(q < p, q, p)}[op](x, y)
        return r.astype(dtype)


def pto_expand_cols(x, C):
    """The ``c % validCol`` rule: column j of the result is column ``j % x.shape[1]``."""
    x = np.asarray(x)
    return x[:, np.arange(C) % x.shape[1]]


def pto_row_reduce(op, x, dtype=None):
    """TROWSUM/TROWMAX/TROWMIN -> shape [R, 1]: SUM from 0, left to right, in float32
    (float sources) or int64 (integers); MAX/MIN folded from column 0 with std::max/min."""
    x = np.asarray(x)
    dtype = x.dtype if dtype is None else np.dtype(dtype)
    fl = _pto_is_float(x.dtype)
    v = x.astype(np.float32 if fl else np.int64)
    R, C = v.shape
    if op == "SUM":
        acc = np.zeros(R, dtype=v.dtype)
        for j in range(C):
            acc = acc + v[:, j]
    else:
        acc = v[:, 0].copy()
        for j in range(1, C):
            acc = np.where(acc < v[:, j], v[:, j], acc) if op == "MAX" else \
                np.where(v[:, j] < acc, v[:, j], acc)
    return (pto_f32_to(acc, dtype) if fl else acc.astype(dtype)).reshape(R, 1)


def pto_col_reduce(op, x, dtype=None):
    """TCOLSUM/TCOLMAX/TCOLMIN -> shape [1, C], top to bottom (as pto_row_reduce)."""
    return pto_row_reduce(op, np.asarray(x).T, dtype).reshape(1, -1)


def _pto_fma_f32(a, b, c):
    """Correctly rounded float32 fma(a, b, c): a*b is exact in float64; the sum is rounded to
    odd in float64 (two-sum error term), which then rounds correctly to float32."""
    p = a.astype(np.float64) * b.astype(np.float64)
    cc = c.astype(np.float64)
    with np.errstate(all="ignore"):
        s = p + cc
        bp = s - cc
        err = (p - bp) + (cc - (s - bp))
        odd = (s.view(np.uint64) & 1) == 1
        fix = (err != 0) & ~odd & np.isfinite(s)
        s = np.where(fix, np.nextafter(s, np.where(err > 0, np.inf, -np.inf)), s)
    return s.astype(np.float32)


def pto_matmul(a, b, dtype, init=None):
    """TMATMUL: float sources accumulate in float32 with one fma per k, sequentially from
    +0 (reference/pto.md 2.2); int8 sources exactly in int64, wrapped to int32.
    TMATMUL_ACC / TMATMUL_BIAS: ``init + chain`` (broadcast to [M, N]), one float32 addition
    after the chain (docs/isa/TMATMUL_ACC.md ``C0 + sum``, TMATMUL_BIAS.md ``sum + Bias``, as
    include/pto/cpu/TMatmul.hpp computes them; branch ptoisa2: the chain used to start from
    ``init``)."""
    a = np.asarray(a)
    b = np.asarray(b)
    M, K = a.shape
    N = b.shape[1]
    if _pto_is_float(a.dtype):
        fa = a.astype(np.float32)
        fb = b.astype(np.float32)
        acc = np.zeros((M, N), dtype=np.float32)
        for k in range(K):
            acc = _pto_fma_f32(np.repeat(fa[:, k:k + 1], N, axis=1),
                               np.repeat(fb[k:k + 1, :], M, axis=0), acc)
        if init is not None:
            acc = (np.broadcast_to(np.asarray(init, dtype=np.float32), (M, N)) + acc
                   ).astype(np.float32)
        return acc.astype(dtype)
    base = 0 if init is None else np.asarray(init).astype(np.int64)
    return (base + a.astype(np.int64) @ b.astype(np.int64)).astype(dtype)


_PTO_FLOAT_LIMITS = {np.dtype(np.float32): (23, -126), np.dtype(np.float16): (10, -14),
                     np.dtype(ml_dtypes.bfloat16): (7, -126)}


def pto_cvt(x, dtype, mode):
    """TCVT: the exact source value rounded once to ``dtype`` with ``mode`` (one of NONE,
    RINT, ROUND, FLOOR, CEIL, TRUNC, ODD).  Float targets: the two neighbours of x in the
    target format are found from its RNE rounding by stepping one code; overflow goes to
    inf or the largest finite value by direction.  Integer targets saturate, NaN -> 0."""
    dt = np.dtype(dtype)
    with np.errstate(invalid="ignore"):
        x = np.asarray(x).astype(np.float64)
    if mode == "NONE":
        mode = "RINT"
    with np.errstate(all="ignore"):
        if dt.kind in "iu":
            if mode == "RINT":
                y = np.rint(x)
            elif mode == "ROUND":
                y = np.sign(x) * np.floor(np.abs(x) + 0.5)
            elif mode == "FLOOR":
                y = np.floor(x)
            elif mode == "CEIL":
                y = np.ceil(x)
            elif mode == "TRUNC":
                y = np.trunc(x)
            else:
                t = np.trunc(x)
                y = np.where((t != x) & (np.fmod(t, 2) == 0), t + np.sign(x), t)
            info = np.iinfo(dt)
            y = np.clip(np.nan_to_num(y, nan=0.0), info.min, info.max)
            y = np.where(np.isnan(x), 0, y)
            return y.astype(dt)
        maxf = float(ml_dtypes.finfo(dt).max) if dt == ml_dtypes.bfloat16 else float(np.finfo(dt).max)
        r = pto_f64_to(x, dt)                      # RNE
        rv = r.astype(np.float64)
        ubits = {2: np.uint16, 4: np.uint32}[dt.itemsize]
        rb = r.view(ubits).astype(np.int64)
        # one code toward x (codes are sign-magnitude: away from zero = +1 on the magnitude)
        away = np.abs(x) > np.abs(rv)
        nb = np.where(away, rb + 1, rb - 1)
        nb = np.where((rv == 0) & (x != 0), np.where(x > 0, 1, (1 << (8 * dt.itemsize - 1)) + 1), nb)
        nb = nb.astype(ubits).view(dt).astype(np.float64)
        nb = np.where(np.isinf(rv) & np.isfinite(x), np.sign(x) * maxf, nb)
        exact = (rv == x) | np.isnan(x) | np.isinf(x)
        lo = np.where(rv <= x, rv, nb)
        hi = np.where(rv <= x, nb, rv)
        hi = np.where(np.abs(hi) > maxf, np.sign(hi) * np.inf, hi)
        lo = np.where(np.abs(lo) > maxf, np.sign(lo) * np.inf, lo)
        if mode == "RINT":
            y = rv
        elif mode == "FLOOR":
            y = lo
        elif mode == "CEIL":
            y = hi
        elif mode == "TRUNC":
            y = np.where(x > 0, lo, hi)
            y = np.where(np.isinf(y), np.sign(y) * maxf, y)
        elif mode == "ROUND":
            top = 2.0 ** {2: 16, 4: 128}[dt.itemsize] if dt != ml_dtypes.bfloat16 else 2.0 ** 128
            dl = np.where(np.isinf(lo), x + top, x - lo)
            dh = np.where(np.isinf(hi), top - x, hi - x)
            y = np.where(dl < dh, lo, np.where(dh < dl, hi, np.where(x > 0, hi, lo)))
        else:  # ODD
            bl = pto_f64_to(lo, dt).view(ubits) & 1
            y = np.where(bl == 1, lo, hi)
            y = np.where(np.isinf(y), np.sign(y) * maxf, y)
        y = np.where(exact, x, y)
        return pto_f64_to(y, dt)


# ---- end of PTO section ----


# ======================================================================================
# ---- nki-isa family (SDK 2.33 instructions: scans, statistics, data movement, MX, ...) --
# ======================================================================================
# Sources: aws-neuron-sdk nki/api/nki/isa/__init__.py docstrings of each instruction and the
# NumPy semantics in nki/test/test_nki_isa_*.py.  Values: float32 arrays [P, F] unless said.

def nki_isa_tt_scan(d0, d1, init, op0, op1, rev0=False, rev1=False):
    """tensor_tensor_scan: r_i = op1(op0(d0_i, r_{i-1}), d1_i), float32 carry."""
    d0 = np.asarray(d0, np.float32)
    d1 = np.asarray(d1, np.float32)
    P, F = d0.shape
    carry = np.broadcast_to(np.asarray(init, np.float32), (P,)).copy()
    out = np.empty((P, F), np.float32)
    for i in range(F):
        t = nki_alu(op0, carry, d0[:, i]) if rev0 else nki_alu(op0, d0[:, i], carry)
        carry = nki_alu(op1, d1[:, i], t) if rev1 else nki_alu(op1, t, d1[:, i])
        out[:, i] = carry
    return out


def nki_isa_cumulative(src, imm, op0, op1, start):
    """tensor_scalar_cumulative: reg = op1(op0(x_i, imm), reg); returns (out, last reg)."""
    src = np.asarray(src, np.float32)
    P, F = src.shape
    imm = np.broadcast_to(np.asarray(imm, np.float32), (P,))
    reg = np.broadcast_to(np.asarray(start, np.float32), (P,)).copy()
    out = np.empty((P, F), np.float32)
    for i in range(F):
        t = nki_alu(op0, src[:, i], imm)
        reg = nki_alu(op1, t, reg)
        out[:, i] = reg
    return out, reg


def nki_isa_ts_reduce(data, imm, op0, rop, start, rev0=False):
    """tensor_scalar_reduce: t = op0(x, imm) (float32); acc folds t left to right."""
    data = np.asarray(data, np.float32)
    P, F = data.shape
    imm = np.broadcast_to(np.asarray(imm, np.float32), (P, 1))
    t = nki_alu(op0, imm, data) if rev0 else nki_alu(op0, data, imm)
    acc = np.broadcast_to(np.asarray(start, np.float32), (P,)).copy()
    for i in range(F):
        acc = nki_alu(rop, acc, t[:, i])
    return t, acc


def nki_isa_bn_stats(x):
    """bn_stats rows: [n_e, mean_e, m2_e, n_o, mean_o, m2_o] in fastisa's float32 order."""
    x = np.asarray(x, np.float32)
    P, F = x.shape
    out = np.zeros((P, 6), np.float32)
    for h in range(2):
        half = x[:, h::2]
        n = half.shape[1]
        if n == 0:
            continue
        s = np.zeros(P, np.float32)
        for i in range(n):
            s = (s + half[:, i]).astype(np.float32)
        mean = (s / np.float32(n)).astype(np.float32)
        m2 = np.zeros(P, np.float32)
        for i in range(n):
            d = (half[:, i] - mean).astype(np.float32)
            m2 = (m2 + (d * d).astype(np.float32)).astype(np.float32)
        out[:, 3 * h] = n
        out[:, 3 * h + 1] = mean
        out[:, 3 * h + 2] = m2
    return out


def nki_isa_bn_aggr(stats):
    """bn_aggr rows of (count, mean, m2) triples -> [mean, var], Chan's update, float32."""
    stats = np.asarray(stats, np.float32)
    P = stats.shape[0]
    out = np.zeros((P, 2), np.float32)
    f = np.float32
    for p in range(P):
        n = mean = m2 = f(0)
        for t in range(stats.shape[1] // 3):
            nb, mb, m2b = (f(v) for v in stats[p, 3 * t:3 * t + 3])
            if nb == 0:
                continue
            if n == 0:
                n, mean, m2 = nb, mb, m2b
                continue
            nn = f(n + nb)
            d = f(mb - mean)
            mean = f(mean + f(d * f(nb / nn)))
            m2 = f(f(m2 + m2b) + f(f(d * d) * f(f(n * nb) / nn)))
            n = nn
        if n != 0:
            out[p] = (mean, f(m2 / n))
    return out


def nki_isa_partition_reduce(x, op):
    """tensor_partition_reduce over float32 rows (add/maximum/minimum/average)."""
    x = np.asarray(x, np.float32)
    acc = x[0].copy()
    name = {"max": "maximum", "min": "minimum", "average": "add"}.get(op, op)
    for p in range(1, x.shape[0]):
        acc = nki_alu(name, acc, x[p])
    if op == "average":
        acc = (acc / np.float32(x.shape[0])).astype(np.float32)
    return acc


def nki_isa_stream_shuffle(dst_before, src, mask):
    """nc_stream_shuffle on storage rows: dst[32q+i] = src[32q+mask[i]], 255 keeps dst."""
    out = np.array(dst_before, copy=True)
    src = np.array(src, copy=True)
    for r in range(out.shape[0]):
        q, i = divmod(r, 32)
        if mask[i] != 255:
            out[r] = src[32 * q + mask[i]]
    return out


def nki_isa_copy_predicated(dst_before, src, pred, reverse=False):
    """tensor_copy_predicated on storage: src where (pred != 0) xor reverse, else dst."""
    keep = (np.asarray(pred) != 0) != bool(reverse)
    return np.where(keep, src, dst_before)


def nki_isa_nonzero(src, offset, pad, dst_before):
    """nonzero_with_count on rows 0, 16, ...: indices + offset, padding, count (int32)."""
    out = np.array(dst_before, copy=True)
    for p in range(0, src.shape[0], 16):
        row = src[p]
        idx = [i + offset for i in range(len(row)) if row[i] != 0]
        vals = idx + [pad] * (len(row) - len(idx)) + [len(idx)]
        out[p] = ((np.array(vals, np.int64) + 2**31) % 2**32 - 2**31).astype(np.int32)
    return out


NKI_ISA_TRANSPOSE = {2: (1, 0), 3: (2, 1, 0), 4: (3, 1, 2, 0)}


def nki_isa_dma_transpose(src):
    return np.ascontiguousarray(np.asarray(src).transpose(NKI_ISA_TRANSPOSE[np.ndim(src)]))


def nki_isa_dma_compute(srcs_f32):
    """dma_compute: ((s0 + s1) + s2) ... in float32."""
    acc = np.asarray(srcs_f32[0], np.float32).reshape(-1).copy()
    for s in srcs_f32[1:]:
        acc = (acc + np.asarray(s, np.float32).reshape(-1)).astype(np.float32)
    return acc


def nki_isa_n_gather(data, idx):
    data = np.asarray(data).reshape(data.shape[0], -1)
    return np.take_along_axis(data, np.asarray(idx).reshape(data.shape[0], -1).astype(np.intp), 1)


def nki_isa_local_gather(src, index, ne, nv=None):
    """The SDK test's NumPy semantics (test_nki_isa_local_gather.py), with element offsets."""
    P = src.shape[0]
    src = np.asarray(src).reshape(P, -1)
    per_core = index.size // (P // 16)
    nv = per_core if nv is None else nv
    out = np.empty((P, nv * ne), src.dtype)
    for c in range(P // 16):
        ids = np.asarray(index[16 * c:16 * c + 16]).flatten(order="F")[:nv].astype(np.int64)
        cols = (ids[:, None] + np.arange(ne)[None, :]).reshape(-1)
        out[16 * c:16 * c + 16] = src[16 * c:16 * c + 16][:, cols]
    return out


def nki_isa_sequence_bounds(ids):
    ids = list(np.asarray(ids).reshape(-1))
    n = len(ids)
    st, en = [], []
    for i, v in enumerate(ids):
        if v == 0:
            st.append(n)
            en.append(-1)
            continue
        a = i
        while a > 0 and ids[a - 1] == v:
            a -= 1
        b = i
        while b < n - 1 and ids[b + 1] == v:
            b += 1
        st.append(a)
        en.append(b + 1)    # exclusive (the SDK test's NumPy equivalent; nkisamp fix)
    return np.array([[st, en]])
# ---- end of nki-isa family (part 1) ----


# ---- nki-isa family: OCP MX (quantize_mx, nc_matmul_mx) ---------------------------------
# quantize_mx docstring "Scale calculation" (scale 2^(floor(log2 amax) - (Emax - 1)));
# packing and the dequantised einsum of nki/deep-dives/src/mxfp-matmul/mx_cpu_utils.py.
NKI_MX_EMAX = {"float8_e5m2": 15, "float8_e4m3fn": 8}
NKI_MX_NP = {"float8_e5m2": ml_dtypes.float8_e5m2, "float8_e4m3fn": ml_dtypes.float8_e4m3fn,
             "float4_e2m1fn": ml_dtypes.float4_e2m1fn}


def nki_mx_scale_rows(P):
    return [32 * (g // 4) + g % 4 for g in range(P // 8)]


def nki_mx_quantize(x, elem):
    """float32 [P, F] -> (uint32 [P, F/4] x4 containers, uint8 [P/8, F/4] scale bytes)."""
    x = np.asarray(x, np.float32)
    P, F = x.shape
    emax = NKI_MX_EMAX[elem]
    mx = float(ml_dtypes.finfo(NKI_MX_NP[elem]).max)
    codes = np.zeros((P, F), np.uint8)
    scales = np.zeros((P // 8, F // 4), np.uint8)
    nan_code = np.array([np.nan], np.float32).astype(NKI_MX_NP[elem]).view(np.uint8)[0]
    for g in range(P // 8):
        for j in range(F // 4):
            blk = x[8 * g:8 * g + 8, 4 * j:4 * j + 4].astype(np.float64)
            if not np.isfinite(blk).all():
                scales[g, j] = 255
                codes[8 * g:8 * g + 8, 4 * j:4 * j + 4] = nan_code
                continue
            amax = float(np.abs(blk).max())
            s = 0 if amax == 0 else min(254, max(0, math.frexp(amax)[1] - 1 - (emax - 1) + 127))
            scales[g, j] = s
            q = np.clip(blk * 2.0 ** (127 - s), -mx, mx)
            codes[8 * g:8 * g + 8, 4 * j:4 * j + 4] = q.astype(NKI_MX_NP[elem]).view(np.uint8)
    return codes.reshape(P, F // 4, 4).view("<u4").reshape(P, F // 4), scales


def nki_mx_dequant(x4, elem, scales):
    """x4 containers [K, J] (uint32 fp8 / uint16 fp4) and scales [K/8, J] -> float32 [4K, J]."""
    x4 = np.asarray(x4)
    K, J = x4.shape
    if elem == "float4_e2m1fn":
        nib = np.stack([(x4 >> (4 * q)) & 15 for q in range(4)], axis=-1).astype(np.uint8)
        vals = nib.view(ml_dtypes.float4_e2m1fn).astype(np.float32)
    else:
        vals = np.ascontiguousarray(x4).view(NKI_MX_NP[elem]).reshape(K, J, 4).astype(np.float32)
    s = np.repeat(np.asarray(scales, np.int64), 8, axis=0)[:, :, None]
    with np.errstate(over="ignore", invalid="ignore"):
        f = np.where(s == 255, np.nan, np.ldexp(1.0, s - 127))
        out = (vals.astype(np.float64) * f).astype(np.float32)
    return out.transpose(0, 2, 1).reshape(4 * K, J)
# ---- end of nki-isa family (MX) ----


# ======================================================================================
# PTO full tile ISA (pto-isa helper, issue 13): bitwise, arithmetic extensions,
# compare/select, products, arg-reductions, partial ops.  Written from pto-isa
# docs/isa/*.md and, where the docs are silent, the CPU simulator's C++ semantics
# (include/pto/cpu/ElementOp.h): floats in float64/float32 rounded to T per C++ operation,
# integers in int64 wrapping to T.
# ======================================================================================
def ptox_binary(op, a, b):
    """AND OR XOR SHL SHR NOT REM FMOD PRELU POW SUBRELU on equal-shape (or scalar b) arrays;
    returns a's dtype."""
    a = np.asarray(a)
    dt = a.dtype
    b = np.broadcast_to(np.asarray(b, dtype=dt), a.shape)
    with np.errstate(all="ignore"):
        if _pto_is_float(dt):
            x = a.astype(np.float64)
            y = b.astype(np.float64)
            if op == "REM":
                r = np.fmod(x, y)
                fix = ((x >= 0) != (y >= 0)) & (r != 0)
                r = np.where(fix, r + y, r)
            elif op == "FMOD":
                r = np.fmod(x, y)
            elif op == "PRELU":
                r = np.where(x > 0, x, x * y)
            elif op == "POW":
                r = np.power(x, y)
            elif op == "SUBRELU":
                d = x - y
                r = np.where(d > 0, d, 0.0)
            else:
                raise ValueError(op)
            return pto_f64_to(r, dt)
        x = a.astype(np.int64)
        y = b.astype(np.int64)
        if op == "AND":
            r = x & y
        elif op == "OR":
            r = x | y
        elif op == "XOR":
            r = x ^ y
        elif op == "NOT":
            r = ~x
        elif op == "SHL":
            ok = (y >= 0) & (y < 64)
            r = np.where(ok, (x.astype(np.uint64) << np.where(ok, y, 0).astype(np.uint64))
                         .astype(np.int64), 0)
        elif op == "SHR":
            ok = (y >= 0) & (y < 64)
            r = np.where(ok, x >> np.where(ok, y, 0), np.where(x < 0, -1, 0))
        elif op in ("REM", "FMOD"):
            ys = np.where(y == 0, 1, y)
            q = np.abs(x) // np.abs(ys) * np.sign(x) * np.sign(ys)
            r = x - q * ys                         # C's truncating %
            if op == "REM":
                r = np.where(((x >= 0) != (y >= 0)) & (r != 0), r + y, r)
        elif op == "PRELU":
            r = np.where(x > 0, x, x * y)
        elif op == "POW":
            p = np.power(x.astype(np.float64), y.astype(np.float64))
            ok = (p > -2147483649.0) & (p < 2147483648.0)
            r = np.where(ok, np.trunc(np.where(ok, p, 0)), -2147483648).astype(np.int64)
        elif op == "SUBRELU":
            r = (x - y).astype(dt).astype(np.int64)
            r = np.where(r > 0, r, 0)
        else:
            raise ValueError(op)
        return r.astype(dt)


def ptox_ternary(op, a, b, c):
    """ADDC (a+b)+c, SUBC (a-b)+c, FMA a*b+c: float32 intermediates rounded once to T;
    MULADD_R round_T(round_T(a*b)+c) and MULADD_R_RELU; integers wrap."""
    a = np.asarray(a)
    dt = a.dtype
    b = np.broadcast_to(np.asarray(b, dtype=dt), a.shape)
    c = np.broadcast_to(np.asarray(c, dtype=dt), a.shape)
    with np.errstate(all="ignore"):
        if _pto_is_float(dt):
            x, y, z = (v.astype(np.float32) for v in (a, b, c))
            if op == "ADDC":
                r = (x + y) + z
            elif op == "SUBC":
                r = (x - y) + z
            elif op == "FMA":
                r = (x * y) + z
            else:
                p = pto_f32_to(x * y, dt).astype(np.float32)
                r = pto_f32_to(p + z, dt).astype(np.float32)
                if op == "MULADD_R_RELU":
                    r = np.where(r > 0, r, np.float32(0))
            return pto_f32_to(r, dt)
        x, y, z = (v.astype(np.int64) for v in (a, b, c))
        r = {"ADDC": lambda: x + y + z, "SUBC": lambda: x - y + z}.get(op, lambda: x * y + z)()
        r = r.astype(dt)
        if op == "MULADD_R_RELU":
            r = np.where(r > 0, r, 0).astype(dt)
        return r


def ptox_cmp(mode, a, b, eps=False):
    """0/1 predicates of a (mode) b compared exactly (eps: TCMPS's |a-b| < 1e-9 EQ/NE)."""
    x = np.asarray(a).astype(np.float64)
    y = np.broadcast_to(np.asarray(b).astype(np.float64), x.shape)
    with np.errstate(invalid="ignore"):
        if eps and mode == "EQ":
            return (np.abs(x - y) < 1e-9).astype(np.uint8)
        if eps and mode == "NE":
            return (np.isnan(x) | np.isnan(y) | (np.abs(x - y) > 1e-9)).astype(np.uint8)
        f = {"EQ": np.equal, "NE": np.not_equal, "LT": np.less, "GT": np.greater,
             "GE": np.greater_equal, "LE": np.less_equal}[mode]
        return f(x, y).astype(np.uint8)


def ptox_pack_rows(pred, bits_per_word, words):
    """Pack each row's predicates LSB first into ``words`` words of ``bits_per_word``."""
    R, C = pred.shape
    out = np.zeros((R, words), dtype=np.uint64)
    for w in range(words):
        for k in range(bits_per_word):
            c = w * bits_per_word + k
            if c < C:
                out[:, w] |= pred[:, c].astype(np.uint64) << np.uint64(k)
    return out


def ptox_prod(x, axis):
    """Products along axis (1 = rows, 0 = columns) rounded to T after every step."""
    x = np.asarray(x)
    dt = x.dtype
    xs = np.moveaxis(x, axis, 0)
    acc = np.ones(xs.shape[1:], dtype=dt)
    with np.errstate(all="ignore"):
        for k in range(xs.shape[0]):
            if _pto_is_float(dt):
                acc = pto_f32_to(acc.astype(np.float32) * xs[k].astype(np.float32), dt)
            else:
                acc = (acc.astype(np.int64) * xs[k].astype(np.int64)).astype(dt)
    return acc


def ptox_argreduce(x, axis, is_max):
    """Index of the first strict max/min along axis (1 = rows, 0 = columns); NaN never wins
    (a NaN first element stays)."""
    x = np.asarray(x)
    xs = np.moveaxis(x, axis, 0).astype(np.float64)
    best = xs[0].copy()
    idx = np.zeros(best.shape, dtype=np.int64)
    for k in range(1, xs.shape[0]):
        better = xs[k] > best if is_max else xs[k] < best
        best = np.where(better, xs[k], best)
        idx = np.where(better, k, idx)
    return idx


def ptox_part(op, a, b, shape):
    """TPART<op> over a dst valid region of ``shape``: op where both a (its valid region)
    and b cover, the covering one elsewhere, 0 outside both."""
    R, C = shape
    dt = np.asarray(a).dtype
    out = np.zeros((R, C), dtype=dt)
    ra, ca = min(R, a.shape[0]), min(C, a.shape[1])
    rb, cb = min(R, b.shape[0]), min(C, b.shape[1])
    out[:ra, :ca] = a[:ra, :ca]
    out[:rb, :cb] = b[:rb, :cb]
    r, c = min(ra, rb), min(ca, cb)
    out[:r, :c] = pto_binary(op, a[:r, :c], b[:r, :c])
    return out
def ptox_pattern(p, n):
    """MaskPattern selection of indices 0..n-1 (1 P0101 even, 2 P1010 odd, 3-6 i % 4 == 0-3,
    7 all)."""
    i = np.arange(n)
    return {1: i % 2 == 0, 2: i % 2 == 1, 3: i % 4 == 0, 4: i % 4 == 1, 5: i % 4 == 2,
            6: i % 4 == 3, 7: np.ones(n, bool)}[int(p)]


def ptox_gather_index(src_full, idx):
    """dst[r, c] = src_full.flat[idx[r, c]] (row-major over the physical tile), 0 outside."""
    flat = src_full.reshape(-1)
    out = np.zeros(idx.shape, dtype=src_full.dtype)
    for r in range(idx.shape[0]):
        for c in range(idx.shape[1]):
            k = int(idx[r, c])
            if 0 <= k < flat.size:
                out[r, c] = flat[k]
    return out


def ptox_gather_mask_row(src_valid, p):
    """The selected columns of each row, concatenated row by row (a flat sequence)."""
    sel = ptox_pattern(p, src_valid.shape[1])
    return np.concatenate([row[sel] for row in src_valid]) if src_valid.size else src_valid[:0, 0]


def ptox_scatter_mask_row(src_full, p, shape):
    """dst (shape) with src's elements (row-major over its physical tile) at the selected
    columns, 0 elsewhere."""
    R, C = shape
    sel = ptox_pattern(p, C)
    seq = iter(src_full.reshape(-1))
    out = np.zeros(shape, dtype=src_full.dtype)
    for r in range(R):
        for c in range(C):
            if sel[c]:
                out[r, c] = next(seq)
    return out


def ptox_scatter_gm(flat, src, off, atomic="none"):
    """flat[off[i, j]] (op)= src[i, j] in row-major order (off < 0 skipped); returns a copy."""
    out = flat.copy()
    for i in range(src.shape[0]):
        for j in range(src.shape[1]):
            k = int(off[i, j])
            if k < 0:
                continue
            v = src[i, j]
            if atomic == "add":
                v = pto_binary("ADD", out[k:k + 1], np.array([v], dtype=out.dtype))[0]
            elif atomic == "max":
                v = v if out[k] < v else out[k]
            elif atomic == "min":
                v = v if v < out[k] else out[k]
            out[k] = v
    return out
def ptox_sort32_row(vals, idx, dtype):
    """TSORT32 of one row: uint8 bytes of the 8-byte structs, block by block (value
    descending, index ascending, stable)."""
    vals = np.asarray(vals, dtype=dtype)
    out = []
    for b in range(0, vals.size, 32):
        blk = sorted(range(b, min(b + 32, vals.size)),
                     key=lambda k: (-float(vals[k]), int(idx[k])))
        for k in blk:
            rec = np.zeros(8, np.uint8)
            rec[: vals.itemsize] = np.frombuffer(vals[k:k + 1].tobytes(), np.uint8)
            rec[4:] = np.frombuffer(np.uint32(idx[k]).tobytes(), np.uint8)
            out.append(rec)
    return np.concatenate(out) if out else np.zeros(0, np.uint8)


def ptox_merge(lists, dtype, out_n, exhausted=False):
    """TMRGSORT of 8-byte struct lists (uint8 arrays): strictly greatest head value, the lowest
    list on ties; returns (bytes, taken per list)."""
    pos = [0] * len(lists)
    n = [len(x) // 8 for x in lists]
    res = []
    while len(res) < out_n:
        pick, best = -1, None
        for li, x in enumerate(lists):
            if pos[li] < n[li]:
                v = float(np.frombuffer(x[pos[li] * 8: pos[li] * 8 + np.dtype(dtype).itemsize]
                                        .tobytes(), dtype)[0])
                if pick < 0 or v > best:
                    pick, best = li, v
        if pick < 0:
            break
        res.append(lists[pick][pos[pick] * 8: pos[pick] * 8 + 8])
        pos[pick] += 1
        if exhausted and any(p == m for p, m in zip(pos, n)):
            break
    return (np.concatenate(res) if res else np.zeros(0, np.uint8)), pos
_PTOX_LIMITS = {"float32": (-3.4028234663852886e38, 3.4028234663852886e38),
                "float16": (-65504.0, 65504.0),
                "bfloat16": (-3.3895313892515355e38, 3.3895313892515355e38)}


def _ptox_limits(dt):
    name = "bfloat16" if dt == np.dtype(ml_dtypes.bfloat16) else dt.name
    if name in _PTOX_LIMITS:
        return _PTOX_LIMITS[name]
    info = np.iinfo(dt)
    return float(info.min), float(info.max)


def ptox_cvt_sat(x, dtype, mode, sat):
    """TCVT with SaturationMode (pto-isa's CPU simulator on x86-64): sat clamps to the shared
    range (NaN -> the upper limit) in the source type; float -> int rounds with mode (ODD:
    nearest, ties to odd; NONE: none) then cvttsd2si (INT_MIN of the 32-bit conversion for
    int32/int16/int8/uint16, of the 64-bit one for uint32/uint8, when NaN or out of range),
    wrapping; float -> float: nearest even; int -> int: wrap."""
    x = np.asarray(x)
    sdt, ddt = x.dtype, np.dtype(dtype)
    v = x.astype(np.float64)
    sf, df = _pto_is_float(sdt), _pto_is_float(ddt)
    with np.errstate(all="ignore"):
        if sat:
            lo = max(_ptox_limits(sdt)[0], _ptox_limits(ddt)[0])
            hi = min(_ptox_limits(sdt)[1], _ptox_limits(ddt)[1])
            v = np.where(np.isnan(v), hi, np.clip(v, lo, hi))
            v = pto_f64_to(v, sdt).astype(np.float64) if sf else np.trunc(v)
        if df:
            return pto_f64_to(v, ddt)
        if not sf:
            return v.astype(np.int64).astype(ddt)
        m = {0: lambda a: a, 1: np.rint, 2: lambda a: np.where(a >= 0, np.floor(a + 0.5),
                                                               np.ceil(a - 0.5)),
             3: np.floor, 4: np.ceil, 5: np.trunc}
        if int(mode) == 6:
            f = np.floor(v)
            fr = v - f
            odd = np.mod(f, 2) != 0
            r = np.where(fr > 0.5, f + 1, np.where(fr < 0.5, f, np.where(odd, f, f + 1)))
        else:
            r = m[int(mode)](v)
        wide = ddt in (np.dtype(np.uint32), np.dtype(np.uint8))
        lim = 9223372036854775808.0 if wide else 2147483648.0
        ok = (r > -lim - 1) & (r < lim)
        t = np.where(ok, np.trunc(np.where(ok, r, 0)), -lim)
        return t.astype(np.int64).astype(ddt)
# ---- end of PTO full tile ISA section ----


# ---- PTO-AS helper (ptoas): TPRINT (TDEQUANT's oracle is ptox_dequant) ----
def pto_tprint_text(values, width=8, precision=4):
    """TPRINT's text (pto-isa include/pto/cpu/TPrint.hpp): 'TPRINT RxC', then each row's
    values right-aligned in ``width`` columns, one space apart; floats fixed with
    ``precision`` digits, integers in decimal."""
    v = np.asarray(values)
    lines = [f"TPRINT {v.shape[0]}x{v.shape[1]}"]
    for row in v:
        if v.dtype.kind == "f" or v.dtype.name == "bfloat16":
            lines.append(" ".join("%*.*f" % (width, precision, float(x)) for x in row))
        else:
            lines.append(" ".join("%*d" % (width, int(x)) for x in row))
    return "\n".join(lines) + "\n"
# ---- end of PTO-AS helper section ----


# ===============================================================================
# PTO tile ISA, second round (ptoisa helper, issue 13): partial arg-reductions and the
# other instructions added in this round.  Written from pto-isa docs/isa/*.md and, where the
# docs are silent, the CPU simulator's C++ semantics (include/pto/cpu/).
# ======================================================================================
def ptox_part_arg(is_max, v0, i0, v1, i1, shape):
    """TPARTARGMAX/MIN over a dst valid region of ``shape``: where both sources cover, src0's
    (value, index) if v0 > v1 (v0 < v1 for MIN) else src1's; the covering one's pair where
    one covers; (0, 0) where neither does.  Returns (values, indices)."""
    R, C = shape
    ov = np.zeros((R, C), dtype=np.asarray(v0).dtype)
    oi = np.zeros((R, C), dtype=np.asarray(i0).dtype)
    ra, ca = min(R, v0.shape[0]), min(C, v0.shape[1])
    rb, cb = min(R, v1.shape[0]), min(C, v1.shape[1])
    ov[:ra, :ca], oi[:ra, :ca] = v0[:ra, :ca], i0[:ra, :ca]
    ov[:rb, :cb], oi[:rb, :cb] = v1[:rb, :cb], i1[:rb, :cb]
    r, c = min(ra, rb), min(ca, cb)
    a = v0[:r, :c].astype(np.float64)
    b = v1[:r, :c].astype(np.float64)
    with np.errstate(invalid="ignore"):
        first = a > b if is_max else a < b
    ov[:r, :c] = np.where(first, v0[:r, :c], v1[:r, :c])
    oi[:r, :c] = np.where(first, i0[:r, :c], i1[:r, :c])
    return ov, oi

def ptox_pair_reduce_sum(src, shape, tile_shape):
    """TPAIRREDUCESUM: a tile_shape array of zeros with dst[i, k] = src[i, 2k] + src[i, 2k+1]
    (src[i, C] = 0 for an odd valid C) for i < R, k < ceil(C / 2); sums rounded once to T."""
    R, C = shape
    src = np.asarray(src)
    dt = src.dtype
    out = np.zeros(tile_shape, dtype=dt)
    h = (C + 1) // 2
    x = np.zeros((R, 2 * h), dtype=dt)
    x[:, :C] = src[:R, :C]
    out[:R, :h] = pto_binary("ADD", x[:, 0::2], x[:, 1::2])
    return out

def ptox_log_int(x):
    """TLOG on integers (the CPU simulator's static_cast<T>(log((double)x)), x > 0):
    floor of ln(x) for positive integers (truncation toward zero of a value >= 0)."""
    x = np.asarray(x)
    return np.trunc(np.log(x.astype(np.float64))).astype(x.dtype)


def ptox_cast_trunc_sat(x, dtype):
    """A float64 value stored to an integer dtype: truncation toward zero, saturating to the
    dtype's range, NaN -> 0 (the unary kernel's float -> integer store)."""
    info = np.iinfo(dtype)
    x = np.asarray(x, dtype=np.float64)
    t = np.where(np.isnan(x), 0, np.clip(np.trunc(np.nan_to_num(x, nan=0.0)), info.min, info.max))
    return t.astype(dtype)

def ptox_dequant(src, scale, offset):
    """TDEQUANT: (float32(src) - offset[i, p]) * scale[i, p], p = min(j, pc - 1), float32
    steps; scale/offset are [R, pc] arrays (their valid regions)."""
    src = np.asarray(src)
    R, C = src.shape
    pc = max(1, scale.shape[1])
    p = np.minimum(np.arange(C), pc - 1)
    x = src.astype(np.float32)
    return ((x - offset[:, p].astype(np.float32)) * scale[:, p].astype(np.float32)).astype(np.float32)


def ptox_add_deq_relu(a, b, s):
    """TADDDEQRELU: float16(min(max(((f32(a + b) * 2^-17) * f32(s)) * 2^17, 0), 65504)), the
    sum wrapping in int32, each float step in float32."""
    x = (np.asarray(a).astype(np.int64) + np.asarray(b)).astype(np.int64)
    x = ((x + 2 ** 31) % 2 ** 32 - 2 ** 31).astype(np.float64).astype(np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        y = (x * np.float32(2.0 ** -17)) * np.float32(s)
        y = y * np.float32(2.0 ** 17)
    y = np.where(y < 0, np.float32(0), y)           # MAX(y, 0) = y < 0 ? 0 : y
    y = np.where(np.float32(65504) < y, np.float32(65504), y)
    return y.astype(np.float16)

def ptox_gatherb(dst_bytes_rows, src_bytes, offs, nb):
    """TGATHERB on byte arrays: dst_bytes_rows[r, 32b:32b+32] = src_bytes[o:o+32] for
    o = offs[r, b] (uint32) when o + 32 <= len(src_bytes), else unchanged."""
    out = np.array(dst_bytes_rows, copy=True)
    for r in range(out.shape[0]):
        for b in range(nb):
            o = int(np.uint32(offs[r, b]))
            if o + 32 <= src_bytes.size:
                out[r, 32 * b: 32 * b + 32] = src_bytes[o: o + 32]
    return out

def ptox_histogram(src, k, idx=None, cumulative=False):
    """THISTOGRAM written element by element: per row, counts of byte k of every element whose
    upper bytes pass the filter (uint16, k = 0: byte 1 == idx[r, 0]; uint32: bytes 3.. k+1 ==
    idx[0, 0], idx[1, 0], ...); 256 uint32 bins per row, prefix-summed if cumulative."""
    src = np.asarray(src)
    R, C = src.shape
    out = np.zeros((R, 256), np.uint32)
    for r in range(R):
        for j in range(C):
            v = int(src[r, j])
            ok = True
            if src.dtype == np.uint16:
                if k == 0:
                    ok = (v >> 8) == int(idx[r, 0])
            else:
                for level, hb in enumerate(range(3, k, -1)):
                    ok = ok and ((v >> (8 * hb)) & 0xFF) == int(idx[level, 0])
            if ok:
                out[r, (v >> (8 * k)) & 0xFF] += 1
    return np.cumsum(out, axis=1, dtype=np.uint32) if cumulative else out
# ---- end of PTO tile ISA second-round section ----


# ======================================================================================
# nki-isa: activate2 (SDK 2.33 nki/api/nki/isa/__init__.py, activate2 "Behavior")
# ======================================================================================
def nki_isa_activate2(op, data, data_fmt, dst_fmt, imm0, imm1, op0, op1, relu_param=0.0,
                      reverse0=False, reverse1=False, reduce_op=None, acc=None):
    """val = data; val = op0(val, imm0) (imm0 op0 val if reverse0); val = op1(val, imm1)
    (likewise), each in float32 (op None = bypass); dst = op(val; relu_param) in float64
    rounded once to dst_fmt (relu_param: a number, or one float32 slope per partition).
    acc: float32 [P] registers, folded left to right with the float32-rounded results,
    updated in place: reduce_op "add" (float32 sums), "maximum" / "minimum" (IEEE 754-2019),
    "abs_max" / "abs_min" (SDK 2.33 nl.abs_max / abs_min: acc if |acc| > |y| (< for
    abs_min) else y); a NaN register ends as the canonical quiet NaN."""
    t = nki_to_f32(data, data_fmt)
    for o, imm, rev in ((op0, imm0, reverse0), (op1, imm1, reverse1)):
        if o is None:
            continue
        v = np.asarray(imm, np.float32)
        v = v.reshape(-1, 1) if v.ndim else v
        t = nki_alu(o, v, t) if rev else nki_alu(o, t, v)
    rp = np.asarray(relu_param, np.float32).reshape(-1)
    if rp.size == 1:
        y = nki_activation_f64(op, t, True, float(rp[0]))
    else:                                    # one slope per partition
        y = np.concatenate([nki_activation_f64(op, t[p:p + 1], True, float(rp[p]))
                            for p in range(t.shape[0])])
    if acc is not None:
        y32 = y.astype(np.float32)
        for p in range(t.shape[0]):
            s = np.float32(acc[p])
            for v in y32[p]:
                if reduce_op == "maximum":
                    s = nki_maximum(s, v)[()]
                elif reduce_op == "minimum":
                    s = nki_minimum(s, v)[()]
                elif reduce_op == "abs_max":
                    s = s if abs(s) > abs(v) else v
                elif reduce_op == "abs_min":
                    s = s if abs(s) < abs(v) else v
                else:
                    s = np.float32(s + v)
            acc[p] = _nki_qnan() if np.isnan(s) else s
    return nki_round(y, dst_fmt)
# ---- end of nki-isa activate2 section ----


# ---- ptogold (pto-isa conformance round 3): TPACK, Tile.SetValue ----
def ptox_pack(dst, src_valid, dst_dtype):
    """TPACK oracle: dst (a copy of the destination's 2-D storage) with its top-left
    src_valid.shape window replaced by src_valid converted to dst_dtype (integer widening is
    exact; float32 -> float16/bfloat16 rounds to nearest even, numpy/ml_dtypes' astype)."""
    out = np.array(dst, copy=True)
    r, c = src_valid.shape
    out[:r, :c] = np.asarray(src_valid).astype(dst_dtype)
    return out


def ptox_setvalue(storage, offset, value):
    """Tile::SetValue oracle: the flat storage with element ``offset`` = value converted to
    its dtype (a float value rounded once, from float64, to nearest even)."""
    out = np.array(storage, copy=True).reshape(-1)
    out[offset] = np.asarray(value, np.float64 if isinstance(value, float) else None) \
        .astype(out.dtype)
    return out
def ptox_custom_pad(bits, dtype):
    """PadValueCustom payload decoding (pto-isa include/pto/cpu/TFillPad.hpp): 4-byte types
    read the 32 bits, 2-byte types the low 16 bits, 1-byte integers the low 8 bits converted."""
    dt = np.dtype(dtype)
    if dt.itemsize == 4:
        return np.frombuffer(int(bits).to_bytes(4, "little"), dt)[0]
    if dt.itemsize == 2:
        return np.frombuffer((int(bits) & 0xFFFF).to_bytes(2, "little"), dt)[0]
    return np.frombuffer((int(bits) & 0xFF).to_bytes(1, "little"), dt)[0]


def ptox_fillpad(dst_shape, src_valid, pad, dtype):
    """TFILLPAD oracle: the whole dst = pad, src's valid window copied at the top left."""
    out = np.full(dst_shape, pad, dtype)
    r, c = src_valid.shape
    out[:r, :c] = src_valid
    return out
def ptox_nz_2d(a5):
    """The rows x cols view of an NZ GM tensor [N0, N1, N2, N3, N4]: element (i0..i4) at row
    i2 * N3 + i3, column (i0 * N1 + i1) * N4 + i4 (pto-isa tile_offsets.hpp)."""
    n0, n1, n2, n3, n4 = a5.shape
    out = np.empty((n2 * n3, n0 * n1 * n4), a5.dtype)
    for i0 in range(n0):
        for i1 in range(n1):
            for i2 in range(n2):
                c = (i0 * n1 + i1) * n4
                out[i2 * n3:(i2 + 1) * n3, c:c + n4] = a5[i0, i1, i2]
    return out
# ---- end of ptogold section ----


# ======================================================================================
# ptolowp (branch ptolowp): PTO low-precision element formats and TCVT over them
# (pto-isa docs/isa/TCVT.md; HiF8: arXiv:2409.16626 section 3; fp4 E1M2: bias 1 as
# include/pto/cpu/MXTypes.hpp kFloat4E1M2Bias)
# ======================================================================================
def ptolowp_hif8_value(code):
    """HiF8 code -> value, from the paper's field table: after the sign, the dot field is
    '0000' (denormal, 3 bits M: 2^(M-23), M=0 is 0 / NaN with sign), '0001' (D=0, 3 bits
    M), '001' (D=1, 1 bit E, 3 bits M), '01' (D=2, 2+3), '10' (D=3, 3+2), '11' (D=4, 4+1);
    E is sign-magnitude with an implicit leading 1 (|E| in [2^(D-1), 2^D - 1]); D=4 with
    E = +15 and M = 1 is infinity."""
    s = -1.0 if code & 0x80 else 1.0
    bits = format(code & 0x7F, "07b")
    if bits.startswith("0000"):
        m = int(bits[4:], 2)
        if m == 0:
            return float("nan") if code & 0x80 else 0.0
        return s * 2.0 ** (m - 23)
    for prefix, d, mb in (("0001", 0, 3), ("001", 1, 3), ("01", 2, 3), ("10", 3, 2),
                          ("11", 4, 1)):
        if bits.startswith(prefix):
            rest = bits[len(prefix):]
            ebits, mbits = rest[:d], rest[d:]
            assert len(mbits) == mb
            e = 0
            if d:
                mag = int("1" + ebits[1:], 2) if d > 1 else 1
                e = -mag if ebits[0] == "1" else mag
            m = int(mbits, 2)
            if d == 4 and e == 15 and m == 1:
                return s * float("inf")
            return s * 2.0 ** e * (1 + m / 2 ** mb)
    raise AssertionError(code)


def ptolowp_fp4_value(code, e_bits, m_bits, bias=1):
    s = -1.0 if code & (1 << (e_bits + m_bits)) else 1.0
    e = (code >> m_bits) & ((1 << e_bits) - 1)
    m = code & ((1 << m_bits) - 1)
    if e == 0:
        return s * (m / 2 ** m_bits) * 2.0 ** (1 - bias)
    return s * (1 + m / 2 ** m_bits) * 2.0 ** (e - bias)


def ptolowp_nearest(values, x, ties="even"):
    """Brute-force round to nearest over a code table (float64 values, NaN codes ignored):
    ties to the even code or away from zero; a zero result keeps x's sign where the table
    has a -0.  Values beyond the largest finite magnitude are the caller's business."""
    v = np.asarray(values, np.float64)
    x = np.asarray(x, np.float64).reshape(-1)
    codes = np.flatnonzero(np.isfinite(v))
    vv = v[codes]
    out = np.empty(x.size, np.int64)
    for lo in range(0, x.size, 2048):
        xs = x[lo:lo + 2048]
        d = np.abs(xs[:, None] - vv[None, :])
        cand = d == d.min(axis=1, keepdims=True)
        out[lo:lo + 2048] = codes[np.argmax(cand, axis=1)]
        for i in np.flatnonzero(cand.sum(axis=1) > 1):
            cs = codes[cand[i]]
            xi = xs[i]
            if (v[cs] == 0).all():                       # +0 / -0: the sign of x
                same = cs[np.signbit(v[cs]) == np.signbit(xi)]
                out[lo + i] = (same if same.size else cs)[0]
                continue
            if ties == "even":
                ev = cs[(cs & 1) == 0]
                same = ev[np.signbit(v[ev]) == np.signbit(xi)]
                out[lo + i] = (same if same.size else ev)[0]
            else:
                out[lo + i] = cs[np.argmax(np.abs(v[cs]))]
    return out
def ptolowp_fixpipe(x, src, dst, word=None, vector=False, relu=False, saturate_inf=False):
    """One element through the fixpipe (fastisa.pto._fixpipe module doc): word fields per
    pto-isa include/pto/cpu/common.hpp quantize_element; plain casts without a word."""
    import math
    f32 = np.float32
    if word is None:
        v = max(x, 0) if relu else x
        return np.array([v], dtype=src).astype(dst)[0]
    word = int(word)
    if dst == "int16":
        v = f32(max(-32768, min(32767, int(x) >> (((word >> 32) & 0xF) + 1))))
    else:
        bits = word & 0xFFFFFFFF
        if vector:
            bits &= ~0x1FFF
        m1 = np.array([bits], np.uint32).view(np.float32)[0]
        with np.errstate(all="ignore"):
            v = f32(f32(x) * m1)
        if dst in ("int8", "uint8"):
            off = f32((word >> 37) & 0x1FF)
            signed = (word >> 46) & 1
            with np.errstate(all="ignore"):
                r = f32(np.rint(f32(v + off)))
            lo, hi = (-128, 127) if signed else (0, 255)
            v = f32(0) if math.isnan(r) else f32(min(max(r, lo), hi))
        elif dst in ("float16", "bfloat16"):
            top = f32(65504) if dst == "float16" else np.finfo(np.float32).max
            if math.isnan(v) and saturate_inf:
                v = f32(0)
            elif math.isfinite(v) or saturate_inf:
                v = f32(min(max(v, -top), top))
    if relu:
        v = v if v > 0 else f32(0)
    return np.array([v], np.float32).astype(ml_dtypes.bfloat16 if dst == "bfloat16" else dst)[0]
def ptolowp_mx_matmul(a_vals, sa_codes, b_vals, sb_codes, init=None):
    """OCP MX matmul: C[i,j] = init + sum_k a[i,k] 2^(sa[i,k//32]-127) b[k,j] 2^(sb[k//32,j]-127),
    summed exactly (math.fsum) and rounded once to float32; E8M0 0xFF is NaN."""
    import math
    M, K = a_vals.shape
    N = b_vals.shape[1]

    def sc(code):
        return float("nan") if code == 0xFF else 2.0 ** (int(code) - 127)
    out = np.empty((M, N), np.float32)
    for i in range(M):
        for j in range(N):
            terms = [a_vals[i, k] * sc(sa_codes[i, k // 32]) * b_vals[k, j] * sc(sb_codes[k // 32, j])
                     for k in range(K)]
            if init is not None:
                terms.append(float(init[i, j]))
            out[i, j] = np.float32(math.fsum(terms)) if all(map(math.isfinite, terms)) else \
                np.float32(sum(terms))
    return out
def ptolowp_tquant_int8(x, scale_rows, offset_rows=None):
    """TQUANT INT8 (docs/isa/TQUANT.md, scale read as the reciprocal): per element
    sat(rint(f32(x * s)) + offset), a non-integral sum rounded once more; NaN -> 0."""
    out = np.empty(x.shape, np.int8 if offset_rows is None else np.uint8)
    lo, hi = (-128, 127) if offset_rows is None else (0, 255)
    for r in range(x.shape[0]):
        for c in range(x.shape[1]):
            with np.errstate(all="ignore"):
                p = np.float32(np.float32(x[r, c]) * np.float32(scale_rows[r]))
                q = float(np.rint(p))
                if offset_rows is not None:
                    q = float(np.rint(np.float32(q) + np.float32(offset_rows[r])))
            out[r, c] = 0 if math.isnan(q) else min(max(q, lo), hi)
    return out
def ptolowp_conv(pair, x, dshape):
    """Convolution-layout TTRANS by explicit indices (fastisa.pto._conv module table); padded
    channels / batches are zero."""
    out = np.zeros(dshape, x.dtype)
    for idx in np.ndindex(*dshape):
        if pair == ("NCHW", "NC1HWC0"):
            n, c1, h, w, c0 = idx
            c = c1 * dshape[4] + c0
            if c < x.shape[1]:
                out[idx] = x[n, c, h, w]
        elif pair == ("NC1HWC0", "NCHW"):
            n, c, h, w = idx
            C0 = x.shape[4]
            out[idx] = x[n, c // C0, h, w, c % C0]
        elif pair == ("NC1HWC0", "FRACTAL_Z"):
            c1, h, w, n1, n0, c0 = idx
            n = n1 * dshape[4] + n0
            if n < x.shape[0]:
                out[idx] = x[n, c1, h, w, c0]
        elif pair == ("GNCHW", "GNC1HWC0"):
            g, n, c1, h, w, c0 = idx
            c = c1 * dshape[5] + c0
            if c < x.shape[2]:
                out[idx] = x[g, n, c, h, w]
        elif pair == ("GNC1HWC0", "FRACTAL_Z"):
            gc1, h, w, n1, n0, c0 = idx
            C1 = x.shape[2]
            g, c1 = divmod(gc1, C1)
            n = n1 * dshape[4] + n0
            if n < x.shape[1]:
                out[idx] = x[g, n, c1, h, w, c0]
        elif pair == ("NCDHW", "FRACTAL_Z_3D"):
            a, n1, n0, c0 = idx
            N, C, D, H, W = x.shape
            C1 = -(-C // dshape[3])
            d, rest = divmod(a, C1 * H * W)
            c1, rest = divmod(rest, H * W)
            h, w = divmod(rest, W)
            n, c = n1 * dshape[2] + n0, c1 * dshape[3] + c0
            if n < N and c < C:
                out[idx] = x[n, c, d, h, w]
        else:
            raise ValueError(pair)
    return out
# ---- end of ptolowp section ----

# ======================================================================================
# ---- ptocomm branch: TRANDOM, comm copies / reduce ----
# ======================================================================================
def pto_trandom(rows, cols, valid_row, valid_col, key, counter, rounds=10):
    """TRANDOM, element by element with Python ints (pto-isa include/pto/cpu/TRandom.hpp's
    algorithm re-derived): the block counter advances by cols/4 per block of 256 columns of
    a row (rows continue the count), lane l of a block uses counter + l, repeat k of the
    block takes word k of the rounds' output.  Returns uint32 [valid_row, valid_col]."""
    def rounds_of(c, k):
        c = list(c)
        k0, k1 = k
        for _ in range(rounds):
            m0 = c[0] * 0xD2511F53
            m1 = c[2] * 0xCD9E8D57
            c = [((m1 >> 32) ^ c[1] ^ k0) & 0xFFFFFFFF, m1 & 0xFFFFFFFF,
                 ((m0 >> 32) ^ c[3] ^ k1) & 0xFFFFFFFF, m0 & 0xFFFFFFFF]
            k0 = (k0 + 0x9E3779B9) & 0xFFFFFFFF
            k1 = (k1 + 0xBB67AE85) & 0xFFFFFFFF
        return c

    def words(v):
        v %= 1 << 128
        return [(v >> (32 * w)) & 0xFFFFFFFF for w in range(4)]
    base = sum(int(counter[w]) << (32 * w) for w in range(4))
    loops = -(-valid_col // 256)
    out = np.zeros((valid_row, valid_col), np.uint32)
    block = 0
    for r in range(valid_row):
        for lp in range(loops):
            for lane in range(64):
                o = rounds_of(words(base + block * (cols // 4) + lane), (int(key[0]), int(key[1])))
                for k in range(4):
                    col = lp * 256 + k * 64 + lane
                    if col < valid_col:
                        out[r, col] = o[k]
            block += 1
    return out


def pto_comm_reduce(arrays, root, op):
    """TREDUCE: root's data, then op with every other rank in index order, in the dtype."""
    acc = arrays[root].copy()
    for r, a in enumerate(arrays):
        if r == root:
            continue
        acc = {"sum": lambda x, y: (x + y).astype(x.dtype), "max": np.maximum,
               "min": np.minimum}[op](acc, a)
    return acc
def pto_fixpipe(acc, mode, relu=False, scalar=None, words=None):
    """The fixpipe conversion of a TPUSH (CPU simulator quantize_element), element by
    element: x * scale in float32 (vector modes: the column's 19-bit scale s|e8|m10 from
    bits 13..31 of its word), DEQF16/VDEQF16 clamp to +-65504, ReLU, cast to the mode's
    float16 / bfloat16 with round-to-nearest-even."""
    import ml_dtypes
    R, C = acc.shape
    out_dt = ml_dtypes.bfloat16 if mode in ("F322BF16", "QF322BF16_PRE") else np.float16
    out = np.zeros((R, C), out_dt)
    for c in range(C):
        if mode == "VDEQF16":
            m1 = (int(words[c]) >> 13) & 0x7FFFF
            e, m = (m1 >> 10) & 0xFF, m1 & 0x3FF
            sc = 0.0 if e == 0 and m == 0 else (-1) ** (m1 >> 18) * (1 + m / 1024) * 2.0 ** (e - 127)
        else:
            sc = 1.0 if not scalar else scalar
        for r in range(R):
            y = np.float32(np.float32(acc[r, c]) * np.float32(sc))
            if mode in ("DEQF16", "VDEQF16") or (mode == "QF322F16_PRE" and np.isfinite(y)):
                y = np.float32(min(max(float(y), -65504.0), 65504.0)) if not np.isnan(y) else y
            if relu:
                y = y if y > 0 else np.float32(0)
            out[r, c] = np.array(y, np.float32).astype(out_dt)
    return out
def pto_fixpipe_b8(acc, word_per_col, vector, relu, dst_dtype):
    """QF322B8_PRE (vector=False: the scale is the float in each word's low 32 bits) /
    VQF322B8_PRE (the 19-bit s|e8|m10 field at bits 13..31): rint(x * scale + offset),
    offset = bits 37..45, clamped to [-128, 127] if bit 46 else [0, 255], ReLU, then the
    x86 float -> int32 -> int8/uint8 truncation; element by element."""
    R, C = acc.shape
    out = np.zeros((R, C), dst_dtype)
    for c in range(C):
        w = int(word_per_col[c])
        if vector:
            m1 = (w >> 13) & 0x7FFFF
            e, m = (m1 >> 10) & 0xFF, m1 & 0x3FF
            sc = 0.0 if e == 0 and m == 0 else (-1) ** (m1 >> 18) * (1 + m / 1024) * 2.0 ** (e - 127)
        else:
            sc = float(np.array([w & 0xFFFFFFFF], np.uint32).view(np.float32)[0])
        off, sign = (w >> 37) & 0x1FF, (w >> 46) & 1
        for r in range(R):
            y = float(np.float32(np.float32(acc[r, c]) * np.float32(sc)))
            y = float(np.rint(np.float32(np.float32(y) + np.float32(off))))
            y = min(max(y, -128.0), 127.0) if sign else min(max(y, 0.0), 255.0)
            if relu:
                y = y if y > 0 else 0.0
            out[r, c] = np.array(int(y) & 0xFF, np.uint8).view(np.int8) \
                if np.dtype(dst_dtype) == np.int8 else int(y)
    return out
# ---- end of ptocomm section ----


# ======================================================================================
# nkiexp: nki.collectives (SDK 2.33 nki/api/nki/collectives/__init__.py).  Arrays are the
# ranks' tensors in replica sub-group list order; the reduction order (folded left in list
# order, each partial rounded to the dtype) is fastisa's documented choice.
# ======================================================================================
def nki_cc_reduce(op, arrays):
    """op in "add" / "minimum" / "maximum"; float dtypes through float32, one rounding per
    partial; integer dtypes exact, wrapped to the width."""
    acc = np.array(arrays[0])
    for a in arrays[1:]:
        if np.issubdtype(acc.dtype, np.integer):
            x, y = acc.astype(np.int64), np.asarray(a).astype(np.int64)
        else:
            x, y = acc.astype(np.float32), np.asarray(a).astype(np.float32)
        r = {"add": np.add, "minimum": np.minimum, "maximum": np.maximum}[op](x, y)
        acc = r.astype(acc.dtype)
    return acc


def nki_cc_all_gather(arrays, dim):
    return np.concatenate(arrays, axis=dim)


def nki_cc_reduce_scatter(op, arrays, pos):
    red = nki_cc_reduce(op, arrays)
    n = len(arrays)
    c = red.shape[0] // n
    return red[pos * c:(pos + 1) * c]


def nki_cc_all_to_all(arrays, pos):
    n = len(arrays)
    c = arrays[0].shape[0] // n
    return np.concatenate([a[pos * c:(pos + 1) * c] for a in arrays], axis=0)
# ---- end of nkiexp nki.collectives section ----


# ======================================================================================
# nkisamp: nki.language-only math functions and masked reductions (issue 11; SDK 2.33
# nki/api/nki/language/__init__.py divide / mod / fmod / floor / ceil / trunc, "similar
# to" numpy's; the NKI Beta 1 masking rules of nki.api.shared "Masking")
# ======================================================================================
def nki_lang_math(op, a, b=None):
    """``nl.<op>`` on float32 values, in float32 (one IEEE operation, round to nearest even):
    divide a / b; mod numpy's float32 remainder (sign of b); fmod C fmod (sign of a);
    floor / ceil / trunc exact.  Written element by element from the definitions."""
    a = np.asarray(a, np.float32)
    if b is not None:
        a, b = np.broadcast_arrays(a, np.asarray(b, np.float32))
    out = np.empty(a.shape, np.float32)
    for i in np.ndindex(a.shape):
        x = float(a[i])
        if op in ("floor", "ceil", "trunc"):
            if not math.isfinite(x):
                out[i] = x
            else:
                r = {"floor": math.floor, "ceil": math.ceil, "trunc": math.trunc}[op](x)
                out[i] = math.copysign(float(r), x) if r == 0 else float(r)
            continue
        y = float(b[i])
        with np.errstate(all="ignore"):
            if op == "divide":
                # float64 division of two float32 values, then one rounding to float32, is
                # the correctly rounded float32 quotient (53 >= 2 * 24 + 2 bits)
                if y == 0.0:
                    out[i] = np.float32(np.nan if (x == 0.0 or math.isnan(x)) else
                                        math.copysign(math.inf, x) * math.copysign(1.0, y))
                else:
                    out[i] = np.float32(x / y)
            elif op == "fmod":
                bad = y == 0.0 or not math.isfinite(x) or math.isnan(y)
                out[i] = np.float32(np.nan) if bad else np.float32(math.fmod(x, y))
            elif op == "mod":
                if y == 0.0 or not math.isfinite(x) or math.isnan(y):
                    out[i] = np.float32(np.nan)
                else:
                    m = math.fmod(x, y)     # exact
                    if m != 0.0:
                        if (y < 0) != (m < 0):
                            m += y          # rounds once (float64 sum of two float32 values
                            #                 is exact; the float32 cast is the one rounding)
                    else:
                        m = math.copysign(0.0, y)
                    out[i] = np.float32(m)
            else:
                raise ValueError(op)
    return out


def nki_masked_reduce(x, op, axes, mask):
    """A reduction over ``axes`` of float32 ``x`` taking only the elements where ``mask``
    (broadcast to x) holds, folded left to right in row-major order of the reduced axes;
    returns (values, written) where ``written`` is False for results with no active input."""
    x = np.asarray(x, np.float32)
    m = np.broadcast_to(np.asarray(mask, bool), x.shape)
    kept = [a for a in range(x.ndim) if a not in axes]
    xt = np.transpose(x, kept + list(axes)).reshape([x.shape[a] for a in kept] + [-1])
    mt = np.transpose(m, kept + list(axes)).reshape(xt.shape)
    vals = np.zeros(xt.shape[:-1], np.float32)
    written = np.zeros(xt.shape[:-1], bool)
    for i in np.ndindex(xt.shape[:-1]):
        acc = None
        for v, on in zip(xt[i], mt[i]):
            if not on:
                continue
            if acc is None:
                acc = np.float32(v)
            elif op == "add":
                acc = np.float32(acc + v)
            elif op == "maximum":
                acc = nki_maximum(acc, v)[()]
            else:
                raise ValueError(op)
        if acc is not None:
            vals[i], written[i] = acc, True
    return vals, written
# ---- end of nkisamp section ----


# ======================================================================================
# ptoisa2 (branch ptoisa2): TIMG2COL, TEXTRACT from a FRACTAL_Z ConvTile
# ======================================================================================
def ptoisa2_img2col(fmap, layout, rows, cols, posM, posK, pads, filt, stride, dil, pad_value):
    """TIMG2COL per pto-isa include/pto/cpu/TImg2col.hpp, element by element.  fmap: the
    ConvTile's elements, NC1HWC0 [N, C1, H, W, C0] or NDC1HWC0 [N, D, C1, H, W, C0];
    pads (left, right, top, bottom); filt, stride, dil: (h, w).  Returns the rows x cols
    window at (posM, posK) of the im2col matrix."""
    x = fmap if layout == "NDC1HWC0" else fmap[:, None]
    N, D, C1, H, W, C0 = x.shape
    left, right, top, bottom = pads
    fh, fw = filt
    oh_n = (H + top + bottom - dil[0] * (fh - 1) - 1) // stride[0] + 1
    ow_n = (W + left + right - dil[1] * (fw - 1) - 1) // stride[1] + 1
    out = np.empty((rows, cols), fmap.dtype)
    for i in range(rows):
        m = posM + i
        n = m // (D * oh_n * ow_n)
        d = (m % (D * oh_n * ow_n)) // (oh_n * ow_n)
        oh = (m % (oh_n * ow_n)) // ow_n
        ow = m % ow_n
        for j in range(cols):
            k = posK + j
            c1 = k // (C0 * fh * fw)
            tap = (k % (C0 * fh * fw)) // C0
            c0 = k % C0
            h = oh * stride[0] + (tap // fw) * dil[0] - top
            w = ow * stride[1] + (tap % fw) * dil[1] - left
            if n < N and c1 < C1 and 0 <= h < H and 0 <= w < W:
                out[i, j] = x[n, d, c1, h, w, c0]
            else:
                out[i, j] = pad_value
    return out


def ptoisa2_fractal_z_extract(weights, rows, cols, index_row, index_col):
    """TEXTRACT from a FRACTAL_Z ConvTile [C1HW, N1, 16, C0] (include/pto/cpu/TExtract.hpp
    TEXTRACT_CONVTILE_IMPL): element (k, n) of the K x N weight matrix is
    weights[k // C0, n // 16, n % 16, k % C0]; returns the rows x cols window at
    (index_row, index_col)."""
    C0 = weights.shape[3]
    out = np.empty((rows, cols), weights.dtype)
    for i in range(rows):
        for j in range(cols):
            k, n = index_row + i, index_col + j
            out[i, j] = weights[k // C0, n // 16, n % 16, k % C0]
    return out
def _f32_bits(v):
    return int(np.array(v, np.float32).view(np.uint32))


def _bits_f32(b):
    return float(np.array(b & 0xFFFFFFFF, np.uint32).view(np.float32))


def ptoisa2_mx_group(vals, qt, alg):
    """TQUANT MX stages 1-2 for one group of 32 float32 values (pto-isa docs/isa/TQUANT.md
    "MX formats"; where silent include/pto/cpu/TQuant.hpp): (max, e8m0, scaling), one element
    at a time.  qt "MXFP8" / "MXFP4_E2M1", alg "OCP" / "NV"."""
    vals = [float(np.float32(v)) for v in vals]
    if qt == "MXFP4_E2M1" and alg == "OCP":
        m = _bits_f32(max((_f32_bits(v) >> 16) & 0x7FFF for v in vals) << 16)
    else:
        if qt == "MXFP4_E2M1" and any(v != v for v in vals):
            m = float("nan")
        else:
            m = 0.0
            for v in vals:
                if abs(v) > m:                     # NaN never compares greater
                    m = abs(v)
    m = float(np.float32(m))
    if alg == "OCP":
        off = 8 if qt == "MXFP8" else 2
        b = _f32_bits(m)
        E, man = (b >> 23) & 0xFF, b & 0x7FFFFF
        e = 0xFF if (E == 0xFF and man) else (0 if E <= off else E - off)
    elif m == 0.0:
        e = 0
    else:
        mul = np.float32(1.0) / np.float32(448.0 if qt == "MXFP8" else 6.0)
        with np.errstate(all="ignore"):
            d = np.float32(np.float32(m) * mul)
        b = _f32_bits(d)
        E, man = (b >> 23) & 0xFF, b & 0x7FFFFF
        if E == 0xFF:
            e = 0xFE if man == 0 else 0xFF
        else:
            up = man > 0 and E != 0xFE and not (E == 0 and man <= 0x400000)
            e = E + int(up)
    if e == 0xFF:
        s = m
    elif alg == "NV" and e == 0xFE:
        s = 2.0 ** -127
    else:
        s = _bits_f32((254 - e) << 23) or 2.0 ** -127
    return m, e, float(np.float32(s))


def ptoisa2_mx_quant(x, qt, alg, grp_axis):
    """TQUANT MX stages 1-2 over a float32 [R, C] array (groups of 32 along grp_axis 1 = ND
    or 0 = DN): the exponent grid [A, B] (uint8), the max and scaling grids (float32) and the
    per-element scaling [R, C]."""
    R, C = x.shape
    A, B = (R, C // 32) if grp_axis == 1 else (R // 32, C)
    ex = np.zeros((A, B), np.uint8)
    mx = np.zeros((A, B), np.float32)
    sc = np.zeros((A, B), np.float32)
    per = np.zeros((R, C), np.float32)
    for a in range(A):
        for b in range(B):
            if grp_axis == 1:
                idx = (a, slice(32 * b, 32 * b + 32))
            else:
                idx = (slice(32 * a, 32 * a + 32), b)
            mx[a, b], ex[a, b], sc[a, b] = ptoisa2_mx_group(x[idx], qt, alg)
            per[idx] = sc[a, b]
    return ex, mx, sc, per


def ptoisa2_sr_neighbours(y, fmt):
    """Stage 3's two candidates for each value y (after clipping to +-Vmax): the codes of the
    neighbouring representable magnitudes lo <= |y| <= hi of ``fmt`` ("float8_e4m3fn" or
    "float4_e2m1") with the sign of y, and the probability of hi, (|y| - lo) / (hi - lo)."""
    if fmt == "float8_e4m3fn":
        mags = [float(v) for v in np.arange(0x7F, dtype=np.uint8).view(ml_dtypes.float8_e4m3fn)
                .astype(np.float64)]
        vmax, sbit = 448.0, 0x80
    else:
        mags, vmax, sbit = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0], 6.0, 0x8
    y = np.asarray(y, np.float64)
    lo = np.zeros(y.shape, np.uint8)
    hi = np.zeros(y.shape, np.uint8)
    p = np.zeros(y.shape)
    for i, v in np.ndenumerate(y):
        a = min(abs(v), vmax)
        j = bisect.bisect_right(mags, a) - 1           # the largest magnitude <= a
        h = j if mags[j] == a else j + 1
        sign = sbit if np.signbit(v) else 0
        lo[i], hi[i] = j | sign, h | sign
        p[i] = 0.0 if h == j else (a - mags[j]) / (mags[h] - mags[j])
    return lo, hi, p
def ptoisa2_zz(e):
    """The ZZ exponent order (docs/isa/TQUANT.md: [16, 2] boxes): for each block of 16 rows,
    for each pair of groups, the 16 x 2 box row by row."""
    A, B = e.shape
    out = []
    for rb in range(A // 16):
        for gb in range(B // 2):
            for r in range(16):
                for g in range(2):
                    out.append(e[rb * 16 + r, gb * 2 + g])
    return np.array(out, e.dtype)
# ---- end of ptoisa2 section ----


# ---- ptomg: MGATHER's row/elem forms, the GM -> L1 (Mat) form, oob modes ----
def ptomg_remap(idx, cap, oob):
    """(indices, miss) after an MGATHER oob policy (pto-isa docs/isa/MGATHER.md
    "Out-of-Bounds Behaviour"): clamp / wrap remap, zero marks the lanes that read 0."""
    i = np.asarray(idx, np.int64)
    if oob == "clamp":
        i = np.clip(i, 0, cap - 1)
    elif oob == "wrap":
        i = np.mod(i, cap)
    miss = (i < 0) | (i >= cap)
    return np.where(miss, 0, i), miss


def ptomg_mgather_row(table2d, rows_idx, oob, ncols):
    """dst[r, j] = table[idx[r], j] (j < ncols); zero-oob rows are 0."""
    i, miss = ptomg_remap(rows_idx, table2d.shape[0], oob)
    out = table2d[i, :ncols].copy()
    out[miss] = 0
    return out


def ptomg_mgather_elem(flat, idx2d, oob, cap):
    """dst[r, c] = table.flat[idx[r, c]]; zero-oob lanes are 0."""
    i, miss = ptomg_remap(idx2d, cap, oob)
    return np.where(miss, np.zeros((), flat.dtype), flat[i])


def ptomg_nz_order(whole, c0):
    """A [rows, cols] matrix in NZ fractal order: element (r, c) at
    (c // c0) * rows * c0 + r * c0 + c % c0 (MGATHER.md, GM -> L1 Elem algorithm)."""
    rows, cols = whole.shape
    out = np.empty(rows * cols, whole.dtype)
    for r in range(rows):
        for c in range(cols):
            out[(c // c0) * rows * c0 + r * c0 + c % c0] = whole[r, c]
    return out
def ptomg_mscatter_row(table2d, src, rows_idx, oob):
    """table[idx[r], :C] = src[r, :C] in row order (a later row wins); skip-oob rows are
    dropped, clamp / wrap remap (MSCATTER.md)."""
    out = table2d.copy()
    cap = table2d.shape[0]
    for r, i in enumerate(np.asarray(rows_idx, np.int64)):
        if oob == "clamp":
            i = min(max(i, 0), cap - 1)
        elif oob == "wrap":
            i = i % cap
        if 0 <= i < cap:
            out[i, :src.shape[1]] = src[r]
    return out
# ---- end of ptomg section ----


# ---- ptomg (2): the collective pto.comm ops on one address space ----
def ptomg_collective(kind, big, members, root=0, op="sum"):
    """(big', members') after pto.comm.<kind> (pto-isa docs/isa/comm/TBROADCAST.md,
    TREDUCE.md, TGATHER.md, TSCATTER.md) for 2-D [H, W] members and a [N*H, W] (gather /
    scatter) or [H, W] (broadcast src / reduce dst) big tensor."""
    big = big.copy()
    members = [m.copy() for m in members]
    h = members[0].shape[0]
    if kind == "tbroadcast":
        members = [big[:h].copy() for _ in members]
    elif kind == "tgather":
        for r, m in enumerate(members):
            big[r * h:(r + 1) * h] = m
    elif kind == "tscatter":
        members = [big[r * h:(r + 1) * h].copy() for r in range(len(members))]
    else:
        acc = members[root].copy()
        for r, m in enumerate(members):
            if r != root:
                acc = {"sum": acc + m, "max": np.maximum(acc, m), "min": np.minimum(acc, m)}[op]
        big[...] = acc
    return big, members
# ---- end of ptomg (2) section ----
# ======================================================================================
# ptoacc (branch ptoacc, issue 13): TLOAD/TSTORE with a view larger than the valid region,
# the per-row broadcast of trowexpand*, pto-isa's fractal box sizes
# ======================================================================================
def ptoacc_inner_shape(itemsize, slayout, fractal):
    """(InnerRows, InnerCols) from pto-isa include/pto/common/pto_tile.hpp getInnerRow /
    getInnerCol: 'none' -> (1, 1); fractal 1024 -> (16, 16); 32 -> 16 x 2 ('row') or 2 x 16
    ('col'); 512 -> 16 x 32/itemsize ('row') or 32/itemsize x 16 ('col')."""
    if slayout == "none":
        return (1, 1)
    if fractal == 1024:
        return (16, 16)
    if fractal == 32:
        return (16, 2) if slayout == "row" else (2, 16)
    return (16, 32 // itemsize) if slayout == "row" else (32 // itemsize, 16)


def ptoacc_nd_offset(r, c, shape, strides):
    """The element offset of tile element (r, c) in an ND global tensor of 5-D ``shape`` /
    ``strides``: pto-isa include/pto/cpu/tile_offsets.hpp MapTileIndicesToGlobalOffset,
    ND branch (i4 = c, r split over dims 3, 2, 1, 0)."""
    s0, s1, s2, s3, s4 = shape
    i3 = r % s3
    i2 = (r // s3) % s2
    i1 = (r // (s3 * s2)) % s1
    i0 = r // (s1 * s2 * s3)
    return i0 * strides[0] + i1 * strides[1] + i2 * strides[2] + i3 * strides[3] + c * strides[4]


def ptoacc_tload(flat, shape, strides, tile_shape, valid, pad):
    """TLOAD ND per the CPU simulator (include/pto/cpu/TLoad.hpp): the whole tile filled with
    ``pad``, then tile[r, c] = flat[offset(r, c)] over the valid region, one element at a
    time."""
    out = np.full(tile_shape, pad, dtype=flat.dtype)
    for r in range(valid[0]):
        for c in range(valid[1]):
            out[r, c] = flat[ptoacc_nd_offset(r, c, shape, strides)]
    return out


def ptoacc_tstore(flat, shape, strides, tile_valid):
    """TSTORE ND per the CPU simulator (include/pto/cpu/TStore.hpp): flat[offset(r, c)] =
    tile[r, c] over the valid region; every other element of ``flat`` kept."""
    out = flat.copy()
    for (r, c), v in np.ndenumerate(tile_valid):
        out[ptoacc_nd_offset(r, c, shape, strides)] = v
    return out


def ptoacc_rowexpand(op, full, col):
    """dst[r, c] = full[r, c] op col[r, 0] (PTOAS lib/TileOps/trowexpand*_template.py),
    computed in the operands' dtype element by element (float: rounded once per element)."""
    f = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
         "div": lambda a, b: a / b, "max": max, "min": min}[op]
    out = np.empty_like(full)
    for (r, c), a in np.ndenumerate(full):
        out[r, c] = f(a, col[r, 0])
    return out
# ---- end of ptoacc section ----


# ======================================================================================
# ptoacc2 (branch ptoacc2, issue 13): the TLOAD / TFILLPAD pad code of low-precision tiles
# ======================================================================================
def ptoacc2_pad_byte(fmt, pad):
    """The byte a PadValue fills a tile of an A5 low-precision format with: pto-isa
    include/pto/common/constants.hpp ``PadValueMap`` (PTO_NPU_ARCH_A5) gives 0 for Null,
    Zero, Max and Min of float4_e1m2x2, float4_e2m1x2, float8_e8m0, float8_e4m3,
    float8_e5m2 and hifloat8 (both nibbles of an fp4 x2 byte)."""
    table = {"float8_e4m3fn": 0, "float8_e5m2": 0, "float8_e8m0fnu": 0, "hifloat8": 0,
             "float4_e2m1x2": 0, "float4_e1m2x2": 0}
    if pad not in ("Null", "Zero", "Max", "Min"):
        raise ValueError(pad)
    return table[fmt]


def ptoacc2_tconcatidx(src0, src1, idx0, idx1, dst, v0, v1):
    """pto.tconcatidx per PTOAS's manual (docs/PTO_IR_manual.md): for each dst row r, the
    first n0 = min(idx0[r], v0, dst cols) columns of src0, then n1 = min(idx1[r], v1, dst
    cols - n0) of src1, the index entries read as element counts (a negative count: 0);
    v0, v1: the sources' valid columns; every other dst element kept."""
    out = dst.copy()
    C = dst.shape[1]
    for r in range(dst.shape[0]):
        n0 = max(0, min(int(idx0[r]), v0, C))
        n1 = max(0, min(int(idx1[r]), v1, C - n0))
        for c in range(n0):
            out[r, c] = src0[r, c]
        for c in range(n1):
            out[r, n0 + c] = src1[r, c]
    return out
