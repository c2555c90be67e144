"""Plain-numpy oracles, one per instruction, written from the spec: slow and obvious.

Kernels are compared against these bit for bit (0 ULP where the ISA is exact).  Each
function names the spec section it follows.  Nothing here imports fastisa's kernels.

Sections (keep them in this order; each front-end adds its oracles to its own section):
formats, TIK, NKI, PTO.
"""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np


# ======================================================================================
# Number formats (spec 000 "Supported Data Types", "Type Casting"; reference/numerics.md)
# ======================================================================================


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


def tik_lane_offset(r, i, start, blk, rep, dtype) -> int:
    """Element offset of lane i of repeat r: start + r*rep*B + (i//B)*blk*B + i%B."""
    B = 32 // np.dtype(dtype).itemsize
    return start + r * rep * B + (i // B) * blk * B + i % B


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
               counter=None, blks=None, reps=None, sat=False, round_mode=""):
    """Run one TIK vector instruction on copies of flat arrays; return the new dst.

    srcs: list of flat arrays (the source tensors), src_starts their start elements.
    blks/reps: block and repeat strides (32-byte blocks), dst first.  scalar: already
    converted to the source dtype by the caller (``np.<dtype>(value)``)."""
    dst = dst.copy()
    dts = [dst.dtype] + [s.dtype for s in srcs]
    par = tik_lanes_per_repeat(*dts)
    n, lanes_of = tik_active_lanes(par, mask, counter, nrep)
    blks = blks or [1] * len(dts)
    starts = [dst_start] + list(src_starts)
    for r in range(n):
        lanes = lanes_of(r)
        if not lanes:
            continue
        offs = [[tik_lane_offset(r, i, starts[k], blks[k], reps[k], dts[k]) for i in lanes]
                for k in range(len(dts))]
        gathered = [srcs[k - 1][offs[k]] for k in range(1, len(dts))]
        old = dst[offs[0]]
        dst[offs[0]] = tik_op(name, dst.dtype, gathered, scalar, old, sat, round_mode)
    return dst


def tik_extent(dtype, start, blk, rep, par, mask=128, nrep=1, counter=None) -> int:
    """Number of elements from the tensor start an operand reaches (last lane + 1)."""
    n, lanes_of = tik_active_lanes(par, mask, counter, nrep)
    hi = start
    for r in ([0, n - 2, n - 1] if n > 1 else [0]):
        if r < 0:
            continue
        for i in lanes_of(r):
            hi = max(hi, tik_lane_offset(r, i, start, blk, rep, dtype) + 1)
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


# ---- end of TIK section ----


# ======================================================================================
# NKI (specs 000 and 001; reference/nki.md section 2)
# ======================================================================================


# ---- end of NKI section ----


# ======================================================================================
# PTO (specs 003 and 004; reference/pto.md sections 1 and 2)
# ======================================================================================


# ---- end of PTO section ----
