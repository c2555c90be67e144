"""NKI compute instructions against tests/reference.py, bit for bit.

Transcendental activation functions: kernel and oracle both evaluate libm in float64 and
round once, so the ULP bound against the oracle is 0 (asserted bit-exactly below).
"""

import math
import warnings

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import reference as ref
from fastisa import cost
from fastisa import dtypes as dt
from fastisa.errors import ConstraintError
from fastisa.nki import isa as nisa
from fastisa.nki import language as nl
from fastisa.nki.tensor import NkiTensor

FLOATS = ["float32", "bfloat16", "float16", "tfloat32", "float8_e4m3", "float8_e5m2",
          "float8_e4m3fn"]
INTS = ["uint8", "int8", "uint16", "int16", "uint32", "int32"]
ALL = FLOATS + INTS + ["bool_"]
ARITH_BINARY = ["add", "subtract", "multiply", "maximum", "minimum", "equal", "not_equal",
                "greater_equal", "greater", "less_equal", "less", "logical_and", "logical_or",
                "logical_xor"]
UNARY = ["abs", "square", "relu", "rsqrt", "reciprocal"]


def T(arr, fmt, buffer=nl.sbuf):
    """An NkiTensor over a copy of ``arr`` stored as ``fmt``."""
    f = dt.lookup(fmt)
    a = np.array(arr)
    if a.dtype != f.np_dtype:
        a = a.astype(f.np_dtype) if f.kind != "bool" else a.astype(np.uint8)
    return NkiTensor(np.ascontiguousarray(a), f, buffer)


def empty(shape, fmt, buffer=nl.sbuf):
    f = dt.lookup(fmt)
    return NkiTensor(np.zeros(shape, f.np_dtype), f, buffer)


def bits(a):
    a = np.asarray(a)
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32}[a.dtype.itemsize])


def assert_bits(got, want, nan_either=None):
    """Bit-exact equality.  ``nan_either``: positions where an arithmetic op met two NaN
    operands.  IEEE 754 (6.2.3) leaves whose payload the NaN result carries to the
    implementation (x86 returns the instruction's first operand's, and compilers may
    commute the operands of +, *), so there got and want need only both be NaN."""
    if nan_either is not None:
        m = np.asarray(nan_either) & np.isnan(np.asarray(got).astype(np.float32)) & np.isnan(
            np.asarray(want).astype(np.float32))
        if m.any():
            got = np.array(got, copy=True)
            got[m] = np.asarray(want)[m]
    g, w = bits(np.ascontiguousarray(got)), bits(np.ascontiguousarray(want))
    assert g.shape == w.shape
    bad = np.nonzero(g != w)
    assert g.tobytes() == w.tobytes(), (
        f"{len(bad[0])} mismatches, first at {tuple(b[0] for b in bad)}: got "
        f"{np.asarray(got)[tuple(b[0] for b in bad)]} want {np.asarray(want)[tuple(b[0] for b in bad)]}")


def random_values(rng, fmt, shape):
    """Random storage values of ``fmt``: all bit patterns for floats (incl. NaN/inf)."""
    f = dt.lookup(fmt)
    if f.kind == "bool":
        return rng.integers(0, 2, shape).astype(np.uint8)
    if f.kind == "int":
        info = np.iinfo(f.np_dtype)
        return rng.integers(info.min, int(info.max) + 1, shape, dtype=np.int64).astype(f.np_dtype)
    if fmt == "float32" or fmt == "tfloat32":
        v = (rng.standard_normal(shape) * 10.0 ** rng.integers(-3, 4, shape)).astype(np.float32)
        if fmt == "tfloat32":
            v = ref.nki_round(v, "tfloat32")
        v.flat[:: 37] = np.float32(np.inf)
        v.flat[5:: 41] = np.float32(np.nan)
        v.flat[7:: 43] = np.float32(0.0) * -1
        return v
    width = f.np_dtype.itemsize * 8
    u = rng.integers(0, 1 << width, shape).astype(np.uint8 if width == 8 else np.uint16)
    return u.view(f.np_dtype)


# ---- the spec's tables -------------------------------------------------------------------
TABLE8 = [  # spec 000 Table 8: (op, class, legal reduction)
    ("invert", "bitvec", False), ("bitwise_and", "bitvec", True), ("bitwise_or", "bitvec", True),
    ("bitwise_xor", "bitvec", True), ("left_shift", "bitvec", False),
    ("right_shift", "bitvec", False),
    ("add", "arithmetic", True), ("subtract", "arithmetic", True),
    ("multiply", "arithmetic", True), ("maximum", "arithmetic", True),
    ("minimum", "arithmetic", True), ("equal", "arithmetic", False),
    ("not_equal", "arithmetic", False), ("greater_equal", "arithmetic", False),
    ("greater", "arithmetic", False), ("less_equal", "arithmetic", False),
    ("less", "arithmetic", False), ("logical_and", "arithmetic", True),
    ("logical_or", "arithmetic", True), ("logical_xor", "arithmetic", True),
    ("power", "arithmetic", False), ("abs_max", "arithmetic", False),
    ("abs_min", "arithmetic", False),
    ("abs", "arithmetic unary", False), ("square", "arithmetic unary", False),
    ("relu", "arithmetic unary", False), ("rsqrt", "arithmetic unary", False),
    ("reciprocal", "arithmetic unary", False),
]

PI = math.pi
INF = math.inf
TABLE9 = [  # spec 000 Table 9: (op, ScalarE range or None, ScalarE ULP, GpSimd ULP or None)
    ("copy", (-INF, INF), 1, None), ("square", (-INF, INF), 1, None),
    ("sigmoid", (-INF, INF), 40, 3), ("relu", (-INF, INF), 1, None),
    ("prelu", (-INF, INF), 1, None), ("gelu", (-INF, INF), 4, None),
    ("gelu_dx", (-INF, INF), 40, None), ("gelu_apprx_tanh", (-INF, INF), 40, None),
    ("gelu_apprx_sigmoid", (-INF, INF), 40, None),
    ("gelu_apprx_sigmoid_dx", (-INF, INF), 4096, None), ("silu", (-INF, INF), 32, 4),
    ("silu_dx", (-INF, INF), 32, None), ("tanh", (-INF, INF), 4, None),
    ("softplus", (-INF, INF), 40, 3), ("mish", (-INF, INF), 4, None),
    ("erf", (-INF, INF), 4, None), ("erf_dx", (-INF, INF), 400, None),
    ("exp", (-INF, INF), 400, 1), ("log", (2.0**-64, 2.0**64), 40, 2),
    ("log1p", None, None, 2), ("sin", (-PI, PI), 4, None), ("arctan", (-PI / 2, PI / 2), 4, None),
    ("sqrt", (2.0**-116, 2.0**118), 65536, 0), ("rsqrt", (2.0**-87, 2.0**97), 40000, 1),
    ("reciprocal", (2.0**-42, 2.0**42), 400, None), ("sign", (-INF, INF), 1, None),
    ("abs", (-INF, INF), 1, None),
]


def test_operator_table_matches_spec():
    assert list(nl.OPERATORS) == [n for n, _, _ in TABLE8]
    for name, kind, red in TABLE8:
        op = getattr(nl, name)
        assert op.kind == kind and op.reducible is red, name
    # arithmetic shift right is "not supported": there is no such name
    assert not hasattr(nl, "arithmetic_shift_right")


def test_activation_table_matches_spec():
    assert list(nl.ACTIVATIONS) == [n for n, *_ in TABLE9]
    for name, rng_, sulp, gulp in TABLE9:
        op = getattr(nl, name)
        assert op.is_activation
        assert ("scalar" in op.engines) == (rng_ is not None), name
        assert ("gpsimd" in op.engines) == (gulp is not None), name
        if rng_ is not None:
            assert op.scalar_range[:2] == rng_, name
            assert op.scalar_ulp == sulp
        assert op.gpsimd_ulp == gulp
    # names with both roles are one object
    for name in ("abs", "square", "relu", "rsqrt", "reciprocal"):
        op = getattr(nl, name)
        assert op.is_operator and op.is_activation
    assert nl.reciprocal.scalar_range[2] is True       # +-[2^-42, 2^42]


# nl.exp(tile) and the other tile-level calls: tests/test_nki_language.py


@pytest.mark.parametrize("value,fmt,want", [
    (42.0, "int32", 42), (2147483648.0, "uint8", 255), (-300.0, "int8", -128),
    (-1.0, "uint32", 0)])
def test_spec_fp32_to_int_table(value, fmt, want):
    src = T(np.array([[value]], np.float32), "float32")
    dst = empty((1, 1), fmt)
    nisa.tensor_copy(dst, src)
    assert int(dst.data[0, 0]) == want


def test_spec_int_to_fp32_rne():
    src = T(np.array([[2**24 + 1, 2**24 + 3, -(2**24 + 1), 2**31 - 1]], np.int32), "int32")
    dst = empty((1, 4), "float32")
    nisa.tensor_copy(dst, src)
    assert dst.data.tolist() == [[2.0**24, 2.0**24 + 4, -(2.0**24), 2.0**31]]
    # int32 -> int32 is a bit copy; int32 -> int16 goes through fp32 (lossy, saturating)
    d16 = empty((1, 4), "int16")
    nisa.tensor_copy(d16, src)
    assert d16.data.tolist() == [[32767, 32767, -32768, 32767]]
    d32 = empty((1, 4), "uint32")
    nisa.tensor_copy(d32, src)
    assert d32.data.tolist() == [[2**24, 2**24 + 4, 0, 2**31]]


def test_sin_9_scalar_engine_cubic():
    x = T(np.array([[9.0, -9.0, 3.0, PI, 4.0]], np.float32), "float32")
    y = empty((1, 5), "float32")
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # sin never warns: the cubic is the behaviour
        nisa.activation(y, nl.sin, x)
    assert abs(y.data[0, 0] - 27.65) < 0.01
    assert y.data[0, 1] == -y.data[0, 0]
    assert y.data[0, 2] == np.float32(math.sin(3.0))
    u = 4.0 - PI
    assert y.data[0, 4] == np.float32(-u + u ** 3 / 6)


@pytest.mark.parametrize("name,bad", [("log", -1.0), ("log", 2.0**70), ("arctan", 2.0),
                                      ("sqrt", 2.0**-120), ("rsqrt", 2.0**100),
                                      ("reciprocal", 2.0**50)])
def test_out_of_range_warns_and_is_accurate(name, bad):
    op = getattr(nl, name)
    x = T(np.array([[bad, 1.0]], np.float32), "float32")
    y = empty((1, 2), "float32")
    with pytest.warns(RuntimeWarning, match="outside the Scalar engine's valid range"):
        nisa.activation(y, op, x)
    want = ref.nki_round(ref.nki_activation_f64(name, np.float32([bad, 1.0])), "float32")
    assert_bits(y.data[0], want)


def test_in_range_does_not_warn():
    x = T(np.array([[0.5, 2.0]], np.float32), "float32")
    y = empty((1, 2), "float32")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nisa.activation(y, nl.log, x)
        nisa.activation(y, nl.reciprocal, x)


# ---- tensor_scalar ------------------------------------------------------------------------
@settings(max_examples=60)
@given(st.data())
def test_tensor_scalar_matches_oracle(data):
    src_fmt = data.draw(st.sampled_from(ALL))
    dst_fmt = data.draw(st.sampled_from(ALL))
    op0 = data.draw(st.sampled_from(ARITH_BINARY + UNARY))
    op1 = data.draw(st.sampled_from([None] + ARITH_BINARY + UNARY))
    P = data.draw(st.integers(1, 130 - 2))
    F = data.draw(st.integers(1, 40))
    rev0, rev1 = data.draw(st.booleans()), data.draw(st.booleans())
    vec0 = data.draw(st.booleans())
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    x = random_values(rng, src_fmt, (P, F))
    if vec0:
        o0 = (rng.standard_normal(P) * 3).astype(np.float32)
        opd0 = T(o0.reshape(P, 1), "float32")
    else:
        o0 = np.float32(rng.standard_normal() * 3)
        opd0 = float(o0)
    o1 = np.float32(rng.standard_normal())
    if op0 in UNARY:
        o0, opd0 = None, None
    if op1 in UNARY:
        o1 = None
    dst = empty((P, F), dst_fmt)
    nisa.tensor_scalar(dst, T(x, src_fmt), getattr(nl, op0), opd0, reverse0=rev0,
                       op1=None if op1 is None else getattr(nl, op1),
                       operand1=None if o1 is None else float(o1), reverse1=rev1)
    want = ref.nki_tensor_scalar(x, src_fmt, dst_fmt, op0, o0, op1, o1, rev0, rev1)
    assert_bits(dst.data, want)


def test_tensor_scalar_reference_patterns():
    """reference/nki.md 4.3: a - 1; 1 - c (reverse0); e * f + 2.5 with a [64, 1] vector."""
    rng = np.random.default_rng(1)
    a = rng.random((128, 512), np.float32)
    out = empty((128, 512), "float32")
    nisa.tensor_scalar(out, T(a, "float32"), nl.subtract, 1.0)
    assert_bits(out.data, (a - np.float32(1)).astype(np.float32))
    nisa.tensor_scalar(out, T(a, "float32"), nl.subtract, 1.0, reverse0=True)
    assert_bits(out.data, (np.float32(1) - a).astype(np.float32))
    e = rng.random((64, 1024), np.float32)
    f = rng.random((64, 1), np.float32)
    out = empty((64, 1024), "float32")
    nisa.tensor_scalar(out, T(e, "float32"), nl.multiply, T(f, "float32"), op1=nl.add,
                       operand1=2.5)
    assert_bits(out.data, (e * f + np.float32(2.5)).astype(np.float32))


@pytest.mark.parametrize("op", ["invert", "bitwise_and", "bitwise_or", "bitwise_xor",
                                "left_shift", "right_shift"])
@pytest.mark.parametrize("fmt", INTS)
def test_tensor_scalar_bitvec(op, fmt, rng):
    x = random_values(rng, fmt, (16, 33))
    width = dt.lookup(fmt).itemsize * 8
    k = None if op == "invert" else (3 if "shift" in op else 0x5A5A00FF)
    dst = empty((16, 33), fmt)
    nisa.tensor_scalar(dst, T(x, fmt), getattr(nl, op), k)
    want = ref.nki_bitvec(op, bits(x), 0 if k is None else k, width)
    want = (want & ((1 << width) - 1)).astype(bits(dst.data).dtype)
    assert_bits(dst.data, want.view(dst.data.dtype))


def test_bitvec_on_float_is_constraint_error():
    x = T(np.ones((4, 4), np.float32), "float32")
    with pytest.raises(ConstraintError, match="bitvec op nl.bitwise_and needs integer dtypes"):
        nisa.tensor_scalar(empty((4, 4), "float32"), x, nl.bitwise_and, 1)
    with pytest.raises(ConstraintError, match="bitvec"):
        nisa.tensor_tensor(empty((4, 4), "int32"), T(np.ones((4, 4)), "int32"), x,
                           nl.bitwise_xor)


# ---- tensor_tensor ---------------------------------------------------------------------------
@settings(max_examples=50)
@given(st.data())
def test_tensor_tensor_matches_oracle(data):
    f1, f2, fd = (data.draw(st.sampled_from(ALL)) for _ in range(3))
    op = data.draw(st.sampled_from(ARITH_BINARY))
    P, F = data.draw(st.integers(1, 128)), data.draw(st.integers(1, 50))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    a, b = random_values(rng, f1, (P, F)), random_values(rng, f2, (P, F))
    if data.draw(st.booleans()):      # equal values exercise ==, max/min of +-0
        b = ref.nki_round(ref.nki_to_f32(a, f1), f2)
    dst = empty((P, F), fd)
    # the Vector engine's float32 path (all-int32 operands default to GpSimd's integer
    # path, tested in test_nki_compute_select.py)
    nisa.tensor_tensor(dst, T(a, f1), T(b, f2), getattr(nl, op), engine=nisa.engine.vector)
    fa, fb = ref.nki_to_f32(a, f1), ref.nki_to_f32(b, f2)
    want = ref.nki_round(ref.nki_alu(op, fa, fb), fd)
    assert_bits(dst.data, want, nan_either=np.isnan(fa) & np.isnan(fb))


def test_tensor_tensor_power_on_gpsimd(rng):
    a = rng.random((8, 16), np.float32) * 4
    b = rng.standard_normal((8, 16)).astype(np.float32)
    dst = empty((8, 16), "float32")
    with cost.profiling() as p:
        nisa.tensor_tensor(dst, T(a, "float32"), T(b, "float32"), nl.power)
    assert_bits(dst.data, ref.nki_alu("power", a, b))
    assert p.totals() == {"GpSimd": max(64, 32)}


def test_tensor_tensor_strided_views(rng):
    base = rng.standard_normal((64, 100)).astype(np.float32)
    big = T(base, "float32")
    a = big[0:64:2, 1:100:3]
    b = big[1:64:2, 0:99:3]
    out = empty((64, 100), "float32")
    d = out[0:32, 50:83]
    nisa.tensor_tensor(d, a, b, nl.multiply)
    assert_bits(out.data[0:32, 50:83], base[0:64:2, 1:100:3] * base[1:64:2, 0:99:3])
    assert not out.data[:, :50].any() and not out.data[32:].any()


# ---- activation -------------------------------------------------------------------------------
ACT_NAMES = [n for n, *_ in TABLE9]


@pytest.mark.parametrize("name", ACT_NAMES)
@pytest.mark.parametrize("dst_fmt", ["float32", "bfloat16", "float16"])
def test_activation_bf16_codes(name, dst_fmt):
    """A spread of bf16 input codes (every 7th code, NaN/inf included) vs the oracle: 0 ULP."""
    codes = np.arange(0, 65536, 7, dtype=np.uint16)
    x = codes.view(ml_dtypes.bfloat16).reshape(-1, 1)[: 9362 // 2 * 2].reshape(2, -1)
    op = getattr(nl, name)
    eng = "scalar" if "scalar" in op.engines else "gpsimd"
    dst = empty(x.shape, dst_fmt)
    with nl.use_target("trn3"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        nisa.activation(dst, op, T(x, "bfloat16"), engine=getattr(nisa.engine, eng))
    want = ref.nki_round(ref.nki_activation_f64(name, ref.nki_to_f32(x, "bfloat16"),
                                                scalar_engine=eng == "scalar"), dst_fmt)
    assert_bits(dst.data, want)


@pytest.mark.slow
@pytest.mark.parametrize("name", ACT_NAMES)
@pytest.mark.parametrize("src", ["bfloat16", "float16"])
def test_activation_all_16bit_codes(name, src):
    """Every bf16 / fp16 input code (the table path: >= 2^17 elements), rounded to bf16,
    fp16 and float32, on ScalarE (GpSimd for log1p) and, where implemented, on GpSimd."""
    codes = np.arange(65536, dtype=np.uint16).view(dt.lookup(src).np_dtype)
    x = np.concatenate([codes, codes]).reshape(2, 65536)
    op = getattr(nl, name)
    for eng in op.engines:
        want64 = ref.nki_activation_f64(name, ref.nki_to_f32(x, src),
                                        scalar_engine=eng == "scalar")
        for fmt in ("bfloat16", "float16", "float32"):
            dst = empty(x.shape, fmt)
            with nl.use_target("trn3"), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                nisa.activation(dst, op, T(x, src), engine=getattr(nisa.engine, eng))
            assert_bits(dst.data, ref.nki_round(want64, fmt))


@pytest.mark.parametrize("name", [n for n, *_ in TABLE9 if n in
                                  ("sigmoid", "silu", "softplus", "exp", "log", "log1p", "sqrt",
                                   "rsqrt")])
def test_activation_gpsimd_random_f32(name, rng):
    x = random_values(rng, "float32", (128, 64))
    dst = empty((128, 64), "float32")
    with nl.use_target("trn3"):
        nisa.activation(dst, getattr(nl, name), T(x, "float32"), engine=nisa.engine.gpsimd,
                        scale=0.5, bias=0.25)
    assert_bits(dst.data, ref.nki_activation(name, x, "float32", "float32", 0.5, np.float32(0.25),
                                             scalar_engine=False))


@settings(max_examples=40)
@given(st.data())
def test_activation_scale_bias_matches_oracle(data):
    name = data.draw(st.sampled_from([n for n in ACT_NAMES if n != "log1p"]))
    src_fmt = data.draw(st.sampled_from(FLOATS + ["int8", "int32"]))
    dst_fmt = data.draw(st.sampled_from(ALL))
    P, F = data.draw(st.integers(1, 128)), data.draw(st.integers(1, 30))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    x = random_values(rng, src_fmt, (P, F))
    vec_scale = data.draw(st.booleans())
    scale = (rng.standard_normal(P).astype(np.float32) if vec_scale
             else np.float32(data.draw(st.sampled_from([1.0, 0.5, -2.0, 3.25]))))
    bias_kind = data.draw(st.sampled_from(["none", "scalar", "vector"]))
    bias = {"none": None, "scalar": np.float32(0.75),
            "vector": rng.standard_normal(P).astype(np.float32)}[bias_kind]
    dst = empty((P, F), dst_fmt)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        nisa.activation(dst, getattr(nl, name), T(x, src_fmt),
                        bias=None if bias is None else (T(bias.reshape(P, 1), "float32")
                                                        if bias_kind == "vector" else float(bias)),
                        scale=T(scale.reshape(P, 1), "float32") if vec_scale else float(scale))
    want = ref.nki_activation(name, x, src_fmt, dst_fmt, scale=scale, bias=bias)
    assert_bits(dst.data, want)


def test_activation_reference_patterns(rng):
    """reference/nki.md 4.4: exp(a), a in [0, 100) fp32 (inf above ~88.7);
    square(b * 2 + c) with a [128, 1] bias, bf16 output."""
    a = (rng.random((128, 512)) * 100).astype(np.float32)
    y = empty((128, 512), "float32")
    nisa.activation(y, nl.exp, T(a, "float32"))
    assert_bits(y.data, ref.nki_round(ref.nki_activation_f64("exp", a), "float32"))
    assert np.isinf(y.data[a > 88.73]).all() and np.isfinite(y.data[a < 88.72]).all()
    b = rng.standard_normal((128, 512)).astype(np.float32)
    c = rng.standard_normal((128, 1)).astype(np.float32)
    yb = empty((128, 512), "bfloat16")
    nisa.activation(yb, nl.square, T(b, "float32"), bias=T(c, "float32"), scale=2.0)
    assert_bits(yb.data, ref.nki_activation("square", b, "float32", "bfloat16", 2.0, c[:, 0]))


def test_activation_accumulator_commands(rng):
    P, F = 96, 300
    x = rng.standard_normal((P, F)).astype(np.float32)
    xt = T(x, "float32")
    dst = empty((P, F), "bfloat16")
    res = empty((P, 1), "float32")
    acc = np.zeros(P, np.float32)
    RC = nisa.reduce_cmd
    with nl.use_target("trn2"):
        nisa.activation(dst, nl.exp, xt, reduce_op=nl.add, reduce_cmd=RC.reset_reduce)
        want = ref.nki_activation("exp", x, "float32", "bfloat16", acc=acc)
        assert_bits(dst.data, want)
        nisa.activation(dst, nl.tanh, xt, reduce_op=nl.add, reduce_cmd=RC.reduce)
        ref.nki_activation("tanh", x, "float32", "bfloat16", acc=acc)
        nisa.activation(dst, nl.sigmoid, xt, reduce_cmd=RC.idle, reduce_res=res)
        assert_bits(res.data[:, 0], acc)
        nisa.activation(dst, nl.copy, xt, reduce_cmd=RC.reset, reduce_res=res)
        assert not res.data.any()
        r2 = empty((P, 1), "bfloat16")
        acc[:] = 0
        nisa.activation_reduce(dst, nl.silu, xt, reduce_op=nl.add, reduce_res=r2, scale=0.5)
        ref.nki_activation("silu", x, "float32", "bfloat16", scale=0.5, acc=acc)
        assert_bits(r2.data[:, 0], ref.nki_round(acc, "bfloat16"))


def test_activation_lut_path_equals_direct_path(rng):
    """A bf16 input of >= 2^17 elements takes the per-code table: same bits as direct."""
    x = random_values(rng, "bfloat16", (128, 2048))
    for name in ("exp", "gelu", "silu", "tanh"):
        big = empty((128, 2048), "bfloat16")
        acc = np.zeros(128, np.float32)
        res = empty((128, 1), "float32")
        nisa.activation(big, getattr(nl, name), T(x, "bfloat16"),
                        reduce_cmd=nisa.reduce_cmd.reset_reduce, reduce_res=res)
        want = ref.nki_activation(name, x, "bfloat16", "bfloat16", acc=acc)
        assert_bits(big.data, want)
        assert_bits(res.data[:, 0], acc)


def test_activation_engine_rules():
    x = T(np.ones((4, 4), np.float32), "float32")
    y = empty((4, 4), "float32")
    with pytest.raises(ConstraintError, match="not implemented on the scalar engine"):
        nisa.activation(y, nl.log1p, x)
    with pytest.raises(ConstraintError, match="requires target trn3"):
        nisa.activation(y, nl.exp, x, engine=nisa.engine.gpsimd)
    with nl.use_target("trn3"):
        with pytest.raises(ConstraintError, match="not implemented on the gpsimd engine"):
            nisa.activation(y, nl.gelu, x, engine=nisa.engine.gpsimd)
        with pytest.raises(ConstraintError, match="accumulator is only available"):
            nisa.activation(y, nl.exp, x, engine=nisa.engine.gpsimd,
                            reduce_cmd=nisa.reduce_cmd.reset_reduce)
        with pytest.raises(ConstraintError, match="must be in sbuf"):
            nisa.activation(y, nl.exp, T(np.ones((4, 4)), "float32", nl.psum),
                            engine=nisa.engine.gpsimd)
        nisa.activation(y, nl.log1p, x, engine=nisa.engine.gpsimd)
        assert_bits(y.data, np.full((4, 4), np.float32(math.log1p(1.0))))
    with pytest.raises(ConstraintError, match="reduce_op must be nl.add"):
        nisa.activation(y, nl.exp, x, reduce_op=nl.maximum)
    with pytest.raises(ConstraintError, match="must be an activation function"):
        nisa.activation(y, nl.add, x)
    with pytest.raises(ConstraintError, match="bias dtype must not be tfloat32"):
        nisa.activation(y, nl.exp, x, bias=T(np.zeros((4, 1)), "tfloat32"))
    with pytest.raises(ConstraintError, match=r"\[4, 1\] tensor"):
        nisa.activation(y, nl.exp, x, bias=T(np.zeros((4, 2)), "float32"))
    with nl.use_target("trn1"):
        with pytest.raises(ConstraintError, match="on trn1"):
            nisa.activation(y, nl.exp, x, bias=1.0)
        with pytest.raises(ConstraintError, match="reciprocal does not support bias"):
            nisa.activation(y, nl.reciprocal, x, bias=T(np.zeros((4, 1)), "float32"))


def test_gpsimd_activation_full_range_no_warning():
    x = T(np.array([[-1.0, 0.0, 2.0**100]], np.float32), "float32")
    y = empty((1, 3), "float32")
    with nl.use_target("trn3"), warnings.catch_warnings():
        warnings.simplefilter("error")
        nisa.activation(y, nl.log, x, engine=nisa.engine.gpsimd)
    assert np.isnan(y.data[0, 0]) and y.data[0, 1] == -np.inf


# ---- reciprocal / exponential / engine costs -----------------------------------------------
def test_reciprocal_and_costs(rng):
    x = (rng.random((128, 512)) * 100).astype(np.float32)   # reference/nki.md 4.5
    y = empty((128, 512), "float32")
    with cost.profiling() as p:
        nisa.reciprocal(y, T(x, "float32"))
        nisa.activation(y, nl.reciprocal, T(x, "float32"))
        nisa.reciprocal(empty((128, 8), "float32"), T(x[:, :8], "float32"))
        nisa.activation(empty((128, 8), "float32"), nl.reciprocal, T(x[:, :8], "float32"))
    assert_bits(y.data, ref.nki_round(ref.nki_activation_f64("reciprocal", x), "float32"))
    ev = [(e.engine, e.cycles) for e in p.events]
    assert ev == [("Vector", 8 * 512), ("Scalar", 512), ("Vector", 64), ("Scalar", 64)]


def test_rsqrt_gpsimd_cost_is_4x_scalar(rng):
    x = T((rng.random((16, 256)) + 0.5).astype(np.float32), "float32")
    y = empty((16, 256), "float32")
    with cost.profiling() as p:
        nisa.tensor_scalar(y, x, nl.rsqrt, 0.0, engine=nisa.engine.gpsimd)
        nisa.activation(y, nl.rsqrt, x)
    assert [e.cycles for e in p.events] == [4 * 256, 256]
    assert [e.engine for e in p.events] == ["GpSimd", "Scalar"]


@pytest.mark.parametrize("cmd", ["reset_reduce", "reduce", "load_reduce", "idle"])
def test_exponential(cmd, rng):
    P, F = 64, 200
    x = rng.standard_normal((P, F)).astype(np.float32)
    m = rng.standard_normal((P, 1)).astype(np.float32)
    dst = empty((P, F), "bfloat16")
    res = empty((P, 1), "float32")
    with nl.use_target("trn3"):
        nisa.exponential(dst, T(x, "float32"), max_value=1.0, reduce_cmd="reset_reduce")
        acc = np.zeros(P, np.float32)
        ref.nki_activation("exp", x, "float32", "bfloat16", bias=np.float32(-1.0), acc=acc)
        nisa.exponential(dst, T(x, "float32"), max_value=T(m, "float32"), reduce_res=res,
                         reduce_cmd=getattr(nisa.reduce_cmd, cmd), reduce_init=2.5)
    t = (x - m).astype(np.float32)
    if cmd == "reset_reduce":
        acc[:] = 0
    elif cmd == "load_reduce":
        acc[:] = 2.5
    want = ref.nki_activation("exp", t, "float32", "bfloat16",
                              acc=None if cmd == "idle" else acc)
    assert_bits(dst.data, want)
    assert_bits(res.data[:, 0], acc)
    with pytest.raises(ConstraintError, match="requires target trn3"):
        nisa.exponential(dst, T(x, "float32"))


# ---- tensor_copy -----------------------------------------------------------------------------
@pytest.mark.parametrize("src_fmt", ALL)
@pytest.mark.parametrize("dst_fmt", ALL)
def test_tensor_copy_all_pairs(src_fmt, dst_fmt, rng):
    x = random_values(rng, src_fmt, (8, 64))
    dst = empty((8, 64), dst_fmt)
    nisa.tensor_copy(dst, T(x, src_fmt))
    want = x if src_fmt == dst_fmt else ref.nki_round(ref.nki_to_f32(x, src_fmt), dst_fmt)
    assert_bits(dst.data, want)


@pytest.mark.slow
@pytest.mark.parametrize("src_fmt", ["bfloat16", "float16"])
@pytest.mark.parametrize("dst_fmt", FLOATS + INTS + ["bool_"])
def test_tensor_copy_every_16bit_code(src_fmt, dst_fmt):
    x = np.arange(65536, dtype=np.uint16).view(dt.lookup(src_fmt).np_dtype).reshape(128, 512)
    dst = empty((128, 512), dst_fmt)
    nisa.tensor_copy(dst, T(x, src_fmt))
    want = x if src_fmt == dst_fmt else ref.nki_round(ref.nki_to_f32(x, src_fmt), dst_fmt)
    assert_bits(dst.data, want)


def test_tensor_copy_packed_same_dtype_only():
    src = NkiTensor(np.arange(8, dtype=np.uint32).reshape(2, 4), dt.lookup("float8_e5m2_x4"))
    dst = NkiTensor(np.zeros((2, 4), np.uint32), dt.lookup("float8_e5m2_x4"))
    nisa.tensor_copy(dst, src)
    assert (dst.data == src.data).all()
    with pytest.raises(ConstraintError, match="packed"):
        nisa.tensor_copy(empty((2, 4), "float32"), src)


# ---- tensor_reduce ---------------------------------------------------------------------------
REDUCE_ARITH = ["add", "subtract", "multiply", "maximum", "minimum", "logical_and",
                "logical_or", "logical_xor"]


@settings(max_examples=50)
@given(st.data())
def test_tensor_reduce_matches_oracle(data):
    op = data.draw(st.sampled_from(REDUCE_ARITH))
    sf, df = data.draw(st.sampled_from(ALL)), data.draw(st.sampled_from(ALL))
    P, A, B = data.draw(st.integers(1, 128)), data.draw(st.integers(1, 5)), data.draw(st.integers(1, 40))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    x = random_values(rng, sf, (P, A, B))
    if op == "multiply" and sf in FLOATS:
        x = np.where(np.abs(x.astype(np.float32)) > 4, x.dtype.type(1.5), x).astype(x.dtype)
    negate = data.draw(st.booleans())
    keep = data.draw(st.booleans())
    two = data.draw(st.booleans())
    axis = (1, 2) if two else 2
    shape = ((P, 1, 1) if keep else (P,)) if two else ((P, A, 1) if keep else (P, A))
    dst = empty(shape, df)
    nisa.tensor_reduce(dst, getattr(nl, op), T(x, sf), axis=axis, negate=negate, keepdims=keep)
    rows = x.reshape(P, A * B) if two else x.reshape(P * A, B)
    want = ref.nki_tensor_reduce(rows, sf, df, op, negate)
    assert_bits(dst.data.reshape(-1), want)


@pytest.mark.parametrize("op", ["bitwise_and", "bitwise_or", "bitwise_xor"])
def test_tensor_reduce_bitvec(op, rng):
    x = random_values(rng, "uint16", (32, 77))
    dst = empty((32,), "uint16")
    nisa.tensor_reduce(dst, getattr(nl, op), T(x, "uint16"), axis=1)
    f = {"bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or,
         "bitwise_xor": np.bitwise_xor}[op]
    assert (dst.data == f.reduce(x, axis=1)).all()


def test_tensor_reduce_row_sum_and_max(rng):
    """reference/nki.md 4.8 / 4.12: row sum and row max as in the softmax tutorials."""
    x = rng.standard_normal((128, 1000)).astype(np.float32)
    s = empty((128, 1), "float32")
    nisa.tensor_reduce(s, nl.add, T(x, "float32"), axis=1, keepdims=True)
    assert_bits(s.data[:, 0], ref.nki_tensor_reduce(x, "float32", "float32", "add"))
    m = empty((128, 1), "float32")
    nisa.tensor_reduce(m, nl.maximum, T(x, "float32"), axis=(1,), keepdims=True)
    assert (m.data[:, 0] == x.max(axis=1)).all()


def test_tensor_reduce_constraints():
    x = T(np.zeros((4, 3, 5), np.float32), "float32")
    for op in ("equal", "power", "invert", "left_shift", "abs", "abs_max"):
        with pytest.raises(ConstraintError, match="legal reduction op"):
            nisa.tensor_reduce(empty((4, 3), "float32"), getattr(nl, op), x, axis=2)
    with pytest.raises(ConstraintError, match="last consecutive free axes"):
        nisa.tensor_reduce(empty((4, 5), "float32"), nl.add, x, axis=1)
    with pytest.raises(ConstraintError, match="free axes"):
        nisa.tensor_reduce(empty((3, 5), "float32"), nl.add, x, axis=0)
    with pytest.raises(ConstraintError, match="dst must have shape"):
        nisa.tensor_reduce(empty((4, 4), "float32"), nl.add, x, axis=2)
    with pytest.raises(ConstraintError, match="needs integer dtypes"):
        nisa.tensor_reduce(empty((4, 3), "float32"), nl.bitwise_or, x, axis=2)
    xi = T(np.zeros((4, 3), np.int32), "int32")
    with pytest.raises(ConstraintError, match="negate applies to arithmetic"):
        nisa.tensor_reduce(empty((4,), "int32"), nl.bitwise_or, xi, axis=1, negate=True)


def test_tensor_reduce_cost():
    x = T(np.zeros((4, 100), ml_dtypes.bfloat16), "bfloat16")
    with cost.profiling() as p:
        nisa.tensor_reduce(empty((4, 1), "bfloat16"), nl.maximum, x, axis=1, keepdims=True)
        nisa.tensor_reduce(empty((4, 1), "float32"), nl.maximum, x, axis=1, keepdims=True)
    assert [e.cycles for e in p.events] == [50, 100]


@pytest.mark.parametrize("op", ["add", "subtract", "multiply"])
@pytest.mark.parametrize("rev", [False, True])
@pytest.mark.parametrize("vec", [False, True])
def test_tensor_scalar_bf16_fused_path_every_code(op, rev, vec, rng):
    """bf16 -> bf16 with one add/subtract/multiply (the fused loop), every input code."""
    x = np.arange(65536, dtype=np.uint16).view(ml_dtypes.bfloat16).reshape(128, 512)
    k = (rng.standard_normal(128) * 3).astype(np.float32)
    if not vec:
        k[:] = np.float32(1.5)
    dst = empty((128, 512), "bfloat16")
    nisa.tensor_scalar(dst, T(x, "bfloat16"), getattr(nl, op),
                       T(k.reshape(128, 1), "float32") if vec else 1.5, reverse0=rev)
    want = ref.nki_tensor_scalar(x, "bfloat16", "bfloat16", op, k if vec else np.float32(1.5),
                                 reverse0=rev)
    assert_bits(dst.data, want)


@pytest.mark.parametrize("op", ["bitwise_and", "bitwise_or", "bitwise_xor", "left_shift",
                                "right_shift"])
@pytest.mark.parametrize("f1,f2,fd", [("int32", "int32", "int32"), ("uint8", "uint16", "uint16"),
                                      ("int16", "uint32", "int8"), ("bool_", "uint8", "bool_")])
def test_tensor_tensor_bitvec(op, f1, f2, fd, rng):
    a = random_values(rng, f1, (12, 50))
    b = random_values(rng, f2, (12, 50))
    if "shift" in op:
        b = (bits(b) % 40).astype(b.dtype)          # shift amounts, some >= 32
    dst = empty((12, 50), fd)
    nisa.tensor_tensor(dst, T(a, f1), T(b, f2), getattr(nl, op))
    wa = dt.lookup(f1).itemsize * 8
    wb = dt.lookup(f2).itemsize * 8
    bb = bits(b).astype(np.uint64) & ((1 << wb) - 1)
    want = ref.nki_bitvec(op, bits(a), bb, wa)
    wd = dt.lookup(fd).itemsize * 8
    assert_bits(dst.data, (want & ((1 << wd) - 1)).astype(bits(dst.data).dtype))


def test_tensor_scalar_bitvec_vector_operand(rng):
    x = random_values(rng, "int16", (16, 20))
    m = rng.integers(-32768, 32768, (16, 1)).astype(np.int16)
    dst = empty((16, 20), "int16")
    nisa.tensor_scalar(dst, T(x, "int16"), nl.bitwise_xor, T(m, "int16"), op1=nl.right_shift,
                       operand1=3)
    t = ref.nki_bitvec("bitwise_xor", bits(x), bits(m).astype(np.uint64), 16)
    t = ref.nki_bitvec("right_shift", t, 3, 32)
    assert_bits(dst.data, (t & 0xFFFF).astype(np.uint16))


def test_numpy_functions_given_as_ops_are_coerced_like_nl_operators():
    """nisa.activation(op=np.exp) / tensor_tensor(op=np.add) / tensor_reduce(op=np.max) take
    the numpy function as its nl operator (the coerced op is the one used: it raised an
    internal AttributeError before)."""
    import numpy as np
    from fastisa.nki import isa as nisa, language as nl
    a = nl.ndarray((4, 8), nl.float32)
    a.data[...] = np.linspace(-1, 1, 32, dtype=np.float32).reshape(4, 8)
    b = nl.ndarray((4, 8), nl.float32)
    c = nl.ndarray((4, 8), nl.float32)
    nisa.activation(dst=b, op=np.exp, data=a)
    nisa.activation(dst=c, op=nl.exp, data=a)
    assert np.array_equal(b.data.view(np.uint32), c.data.view(np.uint32))
    nisa.tensor_tensor(dst=b, data1=a, data2=a, op=np.add)
    assert np.array_equal(b.data, a.data + a.data)


# ---- speed2 branch: the fused float32 path of tensor_scalar / tensor_tensor -------------
@pytest.mark.parametrize("op0", ["add", "subtract", "multiply", "maximum", "minimum"])
@pytest.mark.parametrize("op1", [None, "add", "maximum", "minimum", "multiply"])
def test_float32_fused_path_bits(op0, op1):
    """float32 in, float32 out, contiguous rows, one or two add/subtract/multiply/max/min
    stages (the fused loop): the oracle's bits, NaN / Inf / -0 / subnormals included,
    scalars and per-partition [P, 1] operands, reversed and in place."""
    rng = np.random.default_rng(11)
    x = random_values(rng, "float32", (96, 200))
    y = random_values(rng, "float32", (96, 200))
    x[0, :8] = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-40, 3.4e38, -3.4e38]
    y[0, :8] = [1.0, -np.inf, np.inf, -0.0, 0.0, -1e-40, 3.4e38, np.nan]
    col = random_values(rng, "float32", (96, 1))
    for rev0, rev1, vec in ((False, False, False), (True, True, True), (True, False, True)):
        o0 = T(col, "float32") if vec else -0.0
        w0 = col if vec else np.float32(-0.0)
        dst = empty((96, 200), "float32")
        nisa.tensor_scalar(dst, T(x, "float32"), getattr(nl, op0), o0, reverse0=rev0,
                           op1=None if op1 is None else getattr(nl, op1),
                           operand1=None if op1 is None else 2.5, reverse1=rev1)
        want = ref.nki_tensor_scalar(x, "float32", "float32", op0, w0, op1,
                                     None if op1 is None else np.float32(2.5), rev0, rev1)
        assert_bits(dst.data, want)
    for inplace in (False, True):
        a = T(x.copy(), "float32")
        dst = a if inplace else empty((96, 200), "float32")
        nisa.tensor_tensor(dst, a, T(y, "float32"), getattr(nl, op0))
        assert_bits(dst.data, ref.nki_round(ref.nki_alu(op0, x, y), "float32"))


def test_float32_to_bfloat16_copy_fused_path_bits():
    """tensor_copy float32 -> bfloat16 on contiguous rows (one fused loop): the oracle's
    rounding, ties to even, NaN, Inf, -0 and subnormals included, and strided rows."""
    rng = np.random.default_rng(12)
    x = random_values(rng, "float32", (64, 300))
    x[0, :10] = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-40, 3.4e38, -3.4e38,
                 np.float32(1.00390625), np.float32(1.01171875)]        # ties
    for src in (T(x, "float32"), T(np.concatenate([x, x], 1), "float32")[:, 0:300]):
        dst = empty((64, 300), "bfloat16")
        nisa.tensor_copy(dst, src)
        assert_bits(dst.data, ref.nki_round(x, "bfloat16"))


# ---- abs_max / abs_min: the signed operand (SDK 2.33 nki.language docstrings) ----------
@pytest.mark.parametrize("op", ["abs_max", "abs_min"])
def test_abs_max_min_return_the_signed_operand(op):
    """``abs_max(-5, 3)`` is -5, ``abs_min(-5, 3)`` is 3, a tie gives y (the docstrings'
    examples); fastisa returned max(|x|, |y|) before, a silently wrong sign."""
    x = np.array([[-5.0, 1.0, -0.0, 2.0, np.nan, 3.0]] * 4, np.float32)
    y = np.array([[3.0, -1.0, 0.0, -7.0, 1.0, np.nan]] * 4, np.float32)
    a = NkiTensor(x.copy(), "float32", nl.sbuf)
    b = NkiTensor(y.copy(), "float32", nl.sbuf)
    d = NkiTensor(np.zeros_like(x), "float32", nl.sbuf)
    with nl.use_target("trn3"):
        nisa.tensor_tensor(dst=d, data1=a, data2=b, op=getattr(nl, op))
    want = ref.nki_alu(op, x, y)
    row = d.data[0]
    if op == "abs_max":
        assert row[0] == -5.0 and np.signbit(row[1]) and row[3] == -7.0
    else:
        assert row[0] == 3.0 and np.signbit(row[1]) and row[3] == 2.0
    assert not np.signbit(row[2])                   # -0 vs +0: a tie gives y = +0
    assert row[4] == 1.0 and np.isnan(row[5])       # a NaN comparison gives y
    assert (d.data.view(np.uint32) == np.asarray(want, np.float32).view(np.uint32)).all()
