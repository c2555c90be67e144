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
        if op == "abs_max":
            return nki_maximum(np.abs(a), np.abs(b))
        if op == "abs_min":
            return nki_minimum(np.abs(a), np.abs(b))
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


# ---- end of PTO section ----
