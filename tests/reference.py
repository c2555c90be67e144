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


# ---- end of TIK section ----


# ======================================================================================
# NKI (specs 000 and 001; reference/nki.md section 2)
# ======================================================================================


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


def pto_matmul(a, b, dtype):
    """TMATMUL: float sources accumulate in float32 with one fma per k, sequentially from
    +0 (reference/pto.md 2.2); int8 sources exactly in int64, wrapped to int32."""
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
        return acc.astype(dtype)
    return (a.astype(np.int64) @ b.astype(np.int64)).astype(dtype)


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
