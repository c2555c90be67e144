"""NKI compute: select family, nc_transpose, nc_matmul, scalar_tensor_tensor, constraints,
costs, the softmax example -- against tests/reference.py, bit for bit."""


import warnings

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import reference as ref
from fastisa import cost
from fastisa import dtypes as dt
from fastisa.errors import ConstraintError, UndefinedBehaviorWarning
from fastisa.nki import isa as nisa
from fastisa.nki import language as nl
from fastisa.nki.tensor import NkiTensor
from test_nki_compute import ALL, ARITH_BINARY, T, assert_bits, bits, empty, random_values

FP32_MIN = float(np.finfo(np.float32).min)


# ---- select_reduce ---------------------------------------------------------------------------
@settings(max_examples=40)
@given(st.data())
def test_select_reduce_matches_oracle(data):
    P, F = data.draw(st.integers(1, 128)), data.draw(st.integers(1, 60))
    tf = data.draw(st.sampled_from([f for f in ALL if f not in ("tfloat32", "int32", "uint32")]))
    df = data.draw(st.sampled_from(ALL))
    pf = data.draw(st.sampled_from(["int8", "uint8", "int16", "uint16", "bool_"]))
    rev = data.draw(st.booleans())
    vec = data.draw(st.booleans())
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    on_true = random_values(rng, tf, (P, F))
    pred = (rng.integers(0, 2, (P, F)) * rng.integers(1, 100, (P, F))).astype(
        dt.lookup(pf).np_dtype) if pf != "bool_" else rng.integers(0, 2, (P, F)).astype(np.uint8)
    off = rng.standard_normal(P).astype(np.float32) if vec else np.float32(-2.5)
    dst = empty((P, F), df)
    res = empty((P, 1), "float32")
    nisa.select_reduce(dst, T(pred, pf), T(on_true, tf),
                       T(off.reshape(P, 1), "float32") if vec else float(off),
                       reduce_res=res, reduce_cmd=nisa.reduce_cmd.reset_reduce,
                       reduce_op=nl.maximum, reverse_pred=rev)
    keep = (pred != 0) != rev
    sel = np.where(keep, ref.nki_to_f32(on_true, tf),
                   off.reshape(P, 1) if vec else off).astype(np.float32)
    assert_bits(dst.data, ref.nki_round(sel, df))
    with np.errstate(invalid="ignore"):  # NaN rows are test data
        rmax = np.array([ref._nki_fold(ref.nki_maximum,
                                       np.concatenate([[-np.inf], r]).astype(np.float32))
                         for r in sel], np.float32)
    assert_bits(res.data[:, 0], rmax)


def test_select_reduce_reference_pattern(rng):
    """reference/nki.md 4.7: where(pred, on_true, on_false [128, 1]) and the row max."""
    x = rng.standard_normal((128, 512)).astype(np.float32)
    pred = (rng.random((128, 512)) > 0.5).astype(np.uint8)
    fill = np.full((128, 1), FP32_MIN, np.float32)
    dst = empty((128, 512), "float32")
    res = empty((128, 1), "float32")
    nisa.select_reduce(dst, T(pred, "uint8"), T(x, "float32"), T(fill, "float32"),
                       reduce_res=res, reduce_cmd=nisa.reduce_cmd.reset_reduce)
    want = np.where(pred != 0, x, FP32_MIN).astype(np.float32)
    assert_bits(dst.data, want)
    assert_bits(res.data[:, 0], want.max(axis=1))


def test_select_reduce_constraints():
    x = T(np.zeros((4, 4), np.float32), "float32")
    p = T(np.zeros((4, 4), np.uint8), "uint8")
    d = empty((4, 4), "float32")
    with pytest.raises(ConstraintError, match="predicate dtype"):
        nisa.select_reduce(d, T(np.zeros((4, 4)), "int32"), x, 0.0)
    with pytest.raises(ConstraintError, match="on_true dtype must not be"):
        nisa.select_reduce(d, p, T(np.zeros((4, 4)), "int32"), 0.0)
    with pytest.raises(ConstraintError, match="not both be in psum"):
        nisa.select_reduce(d, T(np.zeros((4, 4), np.uint8), "uint8", nl.psum),
                           T(np.zeros((4, 4), np.float32), "float32", nl.psum), 0.0)
    with pytest.raises(ConstraintError, match="reduce_op must be nl.maximum"):
        nisa.select_reduce(d, p, x, 0.0, reduce_op=nl.add)
    with pytest.raises(ConstraintError, match="reduce_res dtype must be a float"):
        nisa.select_reduce(d, p, x, 0.0, reduce_res=empty((4, 1), "int32"))


# ---- range_select ---------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", ["float8_e4m3", "float8_e5m2", "bfloat16", "float16", "float32"])
def test_range_select_reference_pattern(fmt, rng):
    """reference/nki.md 4.6: keep range_start + i in [bound0, bound1), else fp32.min; max;
    chained across calls with reduce_cmd.reduce."""
    P, N = 64, 128
    x = random_values(rng, "float32", (P, N))
    x = np.where(np.isfinite(x), x, 0).astype(np.float32)
    xs = ref.nki_round(x, fmt)
    b0 = np.arange(P, dtype=np.float32).reshape(P, 1)
    b1 = b0 + 64
    dst = empty((P, N), fmt)
    res = empty((P, 1), "float32")
    nisa.range_select(dst, T(xs, fmt), nl.greater_equal, nl.less, T(b0, "float32"),
                      T(b1, "float32"), reduce_res=res, range_start=0)
    idx = np.arange(N, dtype=np.float32)
    keep = (idx >= b0) & (idx < b1)
    sel = np.where(keep, ref.nki_to_f32(xs, fmt), np.float32(FP32_MIN)).astype(np.float32)
    assert_bits(dst.data, ref.nki_round(sel, fmt))
    if fmt != "float32":
        assert np.all(np.isneginf(dst.data.astype(np.float32)[~keep]))   # FP32_MIN -> -inf
    assert_bits(res.data[:, 0], sel.max(axis=1))
    # a second tile continues the maximum (range_start moves on)
    y = ref.nki_round(np.full((P, N), 1000.0, np.float32), fmt)
    nisa.range_select(dst, T(y, fmt), nl.greater_equal, nl.less, T(b0, "float32"),
                      T(b1, "float32"), reduce_res=res, range_start=N,
                      reduce_cmd=nisa.reduce_cmd.reduce)
    keep2 = (idx + N >= b0) & (idx + N < b1)
    want = np.where(keep2.any(axis=1), np.maximum(sel.max(axis=1),
                                                  ref.nki_to_f32(y, fmt)[:, 0]), sel.max(axis=1))
    assert_bits(res.data[:, 0], want.astype(np.float32))


def test_range_select_constraints():
    x = T(np.zeros((4, 8), np.float32), "float32")
    d = empty((4, 8), "float32")
    b = T(np.zeros((4, 1), np.float32), "float32")
    with pytest.raises(ConstraintError, match="on_false_value must be FP32_MIN"):
        nisa.range_select(d, x, nl.less, nl.less, b, b, on_false_value=0.0)
    with pytest.raises(ConstraintError, match="comp_op0 must be one of"):
        nisa.range_select(d, x, nl.add, nl.less, b, b)
    with pytest.raises(ConstraintError, match="2\\^24"):
        nisa.range_select(d, x, nl.less, nl.less, b, b, range_start=2**24)
    with pytest.raises(ConstraintError, match="float type"):
        nisa.range_select(empty((4, 8), "int8"), T(np.zeros((4, 8)), "int8"), nl.less, nl.less,
                          b, b)
    with nl.use_target("trn1"), pytest.raises(ConstraintError, match="NeuronCore-v3"):
        nisa.range_select(d, x, nl.less, nl.less, b, b)


# ---- affine_select ---------------------------------------------------------------------------
def test_affine_select_causal_mask(rng):
    """reference/nki.md 4.8: lower-triangular (causal) mask with fp32.min."""
    P = N = 128
    x = rng.standard_normal((P, N)).astype(np.float32)
    dst = empty((P, N), "float32")
    with cost.profiling() as prof:
        nisa.affine_select(dst, [[-1, N]], 1, T(x, "float32"), FP32_MIN,
                           cmp_op=nl.greater_equal)
    p = np.arange(P).reshape(P, 1)
    i = np.arange(N).reshape(1, N)
    assert_bits(dst.data, np.where(p - i >= 0, x, np.float32(FP32_MIN)).astype(np.float32))
    assert prof.totals() == {"GpSimd": 150 + N}


def test_affine_select_multi_dim_pattern(rng):
    x = rng.standard_normal((16, 4, 6)).astype(np.float32)
    dst = empty((16, 4, 6), "bfloat16")
    nisa.affine_select(dst, [[6, 4], [1, 6]], -2, T(x, "float32"), -7.0, cmp_op=nl.less,
                       offset=5)
    p = np.arange(16).reshape(16, 1, 1)
    a = 5 - 2 * p + 6 * np.arange(4).reshape(1, 4, 1) + np.arange(6).reshape(1, 1, 6)
    assert_bits(dst.data, ref.nki_round(np.where(a < 0, x, np.float32(-7.0)), "bfloat16"))


def test_affine_select_constraints():
    x = T(np.zeros((4, 8), np.float32), "float32")
    d = empty((4, 8), "float32")
    with pytest.raises(ConstraintError, match="product of pattern nums"):
        nisa.affine_select(d, [[1, 7]], 0, x, 0.0)
    with pytest.raises(ConstraintError, match="1 to 4"):
        nisa.affine_select(d, [[1, 1]] * 5, 0, x, 0.0)
    with pytest.raises(ConstraintError, match="cmp_op"):
        nisa.affine_select(d, [[1, 8]], 0, x, 0.0, cmp_op=nl.add)
    with pytest.raises(ConstraintError, match="must be in sbuf"):
        nisa.affine_select(d, [[1, 8]], 0, T(np.zeros((4, 8)), "float32", nl.psum), 0.0)


# ---- nc_transpose / nc_matmul ----------------------------------------------------------------
@pytest.mark.parametrize("P,F,eng", [(32, 17, "vector"), (5, 32, None), (128, 100, "tensor"),
                                     (64, 128, None)])
def test_nc_transpose(P, F, eng, rng):
    x = random_values(rng, "bfloat16", (P, F))
    buf = nl.psum if (eng == "tensor" or P > 32 or F > 32) else nl.sbuf
    dst = empty((F, P), "bfloat16", buf)
    with cost.profiling() as prof:
        nisa.nc_transpose(dst, T(x, "bfloat16"),
                          engine=None if eng is None else getattr(nisa.engine, eng))
    assert_bits(dst.data, x.T)             # same float dtype: a bit copy on both engines
    ((engname, _),) = prof.totals().items()
    assert engname == ("Vector" if buf is nl.sbuf else "Tensor")


def test_nc_transpose_int32_on_tensor_engine_goes_through_fp32():
    x = np.array([[2**24 + 1, -3], [7, 2**31 - 1]], np.int32)
    dst = empty((2, 2), "int32", nl.psum)
    nisa.nc_transpose(dst, T(x, "int32"), engine=nisa.engine.tensor)
    assert dst.data.tolist() == [[2**24, 7], [-3, 2**31 - 1]]


def test_nc_transpose_constraints():
    with pytest.raises(ConstraintError, match="at most \\[32, 32\\]"):
        nisa.nc_transpose(empty((40, 8), "float32"), T(np.zeros((8, 40)), "float32"),
                          engine=nisa.engine.vector)
    with pytest.raises(ConstraintError, match="dst must have shape"):
        nisa.nc_transpose(empty((8, 8), "float32"), T(np.zeros((8, 9)), "float32"))
    with pytest.raises(ConstraintError, match="dst must be in psum"):
        nisa.nc_transpose(empty((64, 64), "float32"), T(np.zeros((64, 64)), "float32"))


@pytest.mark.parametrize("sf,mf", [("bfloat16", "bfloat16"), ("float32", "float32"),
                                   ("float8_e4m3", "float16"), ("tfloat32", "bfloat16")])
@pytest.mark.parametrize("accumulate", [None, False, True])
def test_nc_matmul(sf, mf, accumulate, rng):
    K, M, N = 128, 96, 200
    s = ref.nki_round(rng.standard_normal((K, M)), sf)
    v = ref.nki_round(rng.standard_normal((K, N)), mf)
    start = rng.standard_normal((M, N)).astype(np.float32)
    dst = T(start, "float32", nl.psum)
    with cost.profiling() as prof, warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedBehaviorWarning)   # True on unwritten PSUM
        nisa.nc_matmul(dst, T(s, sf), T(v, mf), accumulate=accumulate)
    # None on PSUM no matmul has written overwrites (tests/test_nki_matmul_accumulate.py)
    base = start if accumulate else np.zeros((M, N), np.float32)
    want = ref.nki_matmul(ref.nki_to_f32(s, sf), ref.nki_to_f32(v, mf), base)
    assert_bits(dst.data, want)
    assert prof.totals() == {"Tensor": max(min(64, M), N) * (4 if "float32" in (sf, mf) else 1)}


def test_nc_matmul_constraints():
    s = T(np.zeros((128, 128), np.float32), "bfloat16")
    v = T(np.zeros((128, 512), np.float32), "bfloat16")
    with pytest.raises(ConstraintError, match="dst must be in psum"):
        nisa.nc_matmul(empty((128, 512), "float32"), s, v)
    with pytest.raises(ConstraintError, match="moving free size must be <= 512"):
        nisa.nc_matmul(empty((128, 600), "float32", nl.psum), s,
                       T(np.zeros((128, 600)), "bfloat16"))
    with pytest.raises(ConstraintError, match="same partition"):
        nisa.nc_matmul(empty((128, 512), "float32", nl.psum), T(np.zeros((64, 128)), "bfloat16"), v)
    with pytest.raises(ConstraintError, match="dtype must be one of"):
        nisa.nc_matmul(empty((128, 512), "float32", nl.psum), T(np.zeros((128, 128)), "int8"), v)
    with pytest.raises(ConstraintError, match="must be in sbuf"):
        nisa.nc_matmul(empty((128, 512), "float32", nl.psum),
                       T(np.zeros((128, 128)), "bfloat16", nl.psum), v)
    with pytest.raises(ConstraintError, match="is_transpose=True needs moving"):  # nki-isa
        nisa.nc_matmul(empty((128, 512), "float32", nl.psum), s, v, is_transpose=True)


# ---- scalar_tensor_tensor ----------------------------------------------------------------------
@settings(max_examples=40)
@given(st.data())
def test_scalar_tensor_tensor_matches_oracle(data):
    f0, f1, fd = (data.draw(st.sampled_from(ALL)) for _ in range(3))
    op0, op1 = (data.draw(st.sampled_from(ARITH_BINARY)) for _ in range(2))
    rev0, rev1 = data.draw(st.booleans()), data.draw(st.booleans())
    P, F = data.draw(st.integers(1, 128)), data.draw(st.integers(1, 40))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    a, b = random_values(rng, f0, (P, F)), random_values(rng, f1, (P, F))
    k = np.float32(rng.standard_normal() * 2)
    dst = empty((P, F), fd)
    nisa.scalar_tensor_tensor(dst, T(a, f0), getattr(nl, op0), float(k), getattr(nl, op1),
                              T(b, f1), reverse0=rev0, reverse1=rev1)
    t = ref.nki_to_f32(a, f0)
    t = ref.nki_alu(op0, k, t) if rev0 else ref.nki_alu(op0, t, k)
    u = ref.nki_to_f32(b, f1)
    both_nan = np.isnan(t) & np.isnan(u)
    t = ref.nki_alu(op1, u, t) if rev1 else ref.nki_alu(op1, t, u)
    assert_bits(dst.data, ref.nki_round(t, fd), nan_either=both_nan)


def test_scalar_tensor_tensor_cost():
    a = T(np.zeros((4, 10), ml_dtypes.bfloat16), "bfloat16")
    with cost.profiling() as p:
        nisa.scalar_tensor_tensor(empty((4, 10), "bfloat16"), a, nl.subtract, 1.0, nl.multiply, a)
        nisa.scalar_tensor_tensor(empty((4, 10), "bfloat16"), a, nl.add, 1.0, nl.multiply, a)
    assert [e.cycles for e in p.events] == [10, 20]


# ---- shared constraints ---------------------------------------------------------------------------
def test_common_constraints():
    x = T(np.zeros((4, 8), np.float32), "float32")
    d = empty((4, 8), "float32")
    hbm = T(np.zeros((4, 8), np.float32), "float32", nl.hbm)
    with pytest.raises(ConstraintError, match="must be in sbuf or psum, got private_hbm"):
        nisa.tensor_scalar(d, hbm, nl.add, 1.0)
    with pytest.raises(ConstraintError, match="same number of elements per partition"):
        nisa.tensor_scalar(empty((4, 9), "float32"), x, nl.add, 1.0)
    with pytest.raises(ConstraintError, match="same partition dimension"):
        nisa.tensor_scalar(empty((3, 8), "float32"), x, nl.add, 1.0)
    with pytest.raises(ConstraintError, match="partition dimension must be <= 128"):
        nisa.tensor_copy(empty((129, 2), "float32"), T(np.zeros((129, 2)), "float32"))
    with pytest.raises(ConstraintError, match="must be an NkiTensor"):
        nisa.tensor_scalar(d, np.zeros((4, 8), np.float32), nl.add, 1.0)
    with pytest.raises(ConstraintError, match="must be a math operator"):
        nisa.tensor_scalar(d, x, nl.exp, 1.0)
    with pytest.raises(ConstraintError, match="unary op nl.rsqrt must be None or 0"):
        nisa.tensor_scalar(d, x, nl.rsqrt, 2.0)
    with pytest.raises(ConstraintError, match="both be bitvec or both arithmetic"):
        nisa.tensor_scalar(empty((4, 8), "int32"), T(np.zeros((4, 8)), "int32"), nl.add, 1,
                           op1=nl.bitwise_and, operand1=1)
    with pytest.raises(ConstraintError, match="Scalar engine supports only"):
        nisa.tensor_scalar(d, x, nl.subtract, 1.0, engine=nisa.engine.scalar)
    with pytest.raises(ConstraintError, match="GpSimd engine supports only op0=nl.rsqrt"):
        nisa.tensor_scalar(d, x, nl.add, 1.0, engine=nisa.engine.gpsimd)
    with pytest.raises(ConstraintError, match="Vector engine only"):
        nisa.tensor_scalar(empty((4, 8), "int32"), T(np.zeros((4, 8)), "int32"),
                           nl.bitwise_and, 1, engine=nisa.engine.gpsimd)
    with pytest.raises(ConstraintError, match="requires target trn3"):
        nisa.tensor_scalar(d, x, nl.abs_max, 1.0)
    with pytest.raises(ConstraintError, match="must fit in 32 bits"):
        nisa.tensor_scalar(empty((4, 8), "int32"), T(np.zeros((4, 8)), "int32"),
                           nl.bitwise_and, 2**33)
    with pytest.raises(ConstraintError, match=r"\[4, 1\] tensor"):
        nisa.tensor_scalar(d, x, nl.add, T(np.zeros((4, 2)), "float32"))
    with pytest.raises(ConstraintError, match="binary operator"):
        nisa.tensor_tensor(d, x, x, nl.abs)
    with pytest.raises(ConstraintError, match="not both be in psum"):
        p = T(np.zeros((4, 8), np.float32), "float32", nl.psum)
        nisa.tensor_tensor(d, p, p, nl.add)
    with pytest.raises(ConstraintError, match="packed"):
        nisa.tensor_scalar(d, NkiTensor(np.zeros((4, 8), np.uint32), dt.lookup("float8_e5m2_x4")),
                           nl.add, 1.0)
    with pytest.raises(NotImplementedError, match="float8_e8m0fnu"):
        nisa.tensor_scalar(d, NkiTensor(np.zeros((4, 8), np.uint8), dt.lookup("float8_e8m0fnu")),
                           nl.add, 1.0)
    with pytest.raises(ConstraintError, match="trn1"):
        with nl.use_target("trn1"):
            nisa.tensor_copy(d, x, engine=nisa.engine.scalar)
    with pytest.raises(ConstraintError, match="reduce_cmd must be one of"):
        nisa.activation(d, nl.exp, x, reduce_cmd="sometimes")


def test_tensor_tensor_costs():
    b = T(np.zeros((4, 100), ml_dtypes.bfloat16), "bfloat16")
    f = T(np.zeros((4, 100), np.float32), "float32")
    ps = T(np.zeros((4, 100), np.float32), "float32", nl.psum)
    with cost.profiling() as p:
        nisa.tensor_tensor(empty((4, 100), "bfloat16"), b, b, nl.add)        # bf16 add: N
        nisa.tensor_tensor(empty((4, 100), "float32"), f, f, nl.add)         # fp32: 2N
        nisa.tensor_tensor(empty((4, 100), "float32"), ps, f, nl.maximum)    # one in PSUM: N
        nisa.tensor_tensor(empty((4, 10), "float32"), f[:, :10], f[:, :10], nl.add)  # MIN_II
    assert [e.cycles for e in p.events] == [100, 200, 100, 64]


def test_inplace_and_overlapping_views(rng):
    x = rng.standard_normal((8, 64)).astype(np.float32)
    t = T(x, "float32")
    nisa.tensor_scalar(t, t, nl.multiply, 2.0)                   # exact in place
    assert_bits(t.data, (x * 2).astype(np.float32))
    # dst overlaps data shifted by one column: the instruction reads all of data first
    u = T(x, "float32")
    nisa.tensor_scalar(u[:, 1:64], u[:, 0:63], nl.add, 1.0)
    assert_bits(u.data[:, 1:], (x[:, :63] + 1).astype(np.float32))
    # a dst that is not viewable as [P, F] (a transposed view) is written through a temporary
    w = empty((6, 4, 5), "float32")
    v = NkiTensor(w.data.transpose(0, 2, 1), w.dtype, nl.sbuf)
    nisa.tensor_copy(v, T(np.arange(120, dtype=np.float32).reshape(6, 5, 4), "float32"))
    assert_bits(w.data.transpose(0, 2, 1), np.arange(120, dtype=np.float32).reshape(6, 5, 4))


def test_bf16_reduce_special_values():
    rows = np.array([[-0.0, 0.0, -0.0], [0.0, -0.0, -1.0], [-np.inf, -3.0, -np.inf],
                     [1.0, np.nan, 2.0], [-5.0, -5.0, -5.0]], np.float32)
    x = rows.astype(ml_dtypes.bfloat16)
    for op in ("maximum", "minimum"):
        dst = empty((5,), "float32")
        nisa.tensor_reduce(dst, getattr(nl, op), T(x, "bfloat16"), axis=1)
        assert_bits(dst.data, ref.nki_tensor_reduce(x, "bfloat16", "float32", op))
    dst = empty((5,), "float32")
    nisa.tensor_reduce(dst, nl.maximum, T(x, "bfloat16"), axis=1)
    assert np.signbit(dst.data[0]) == False and dst.data[0] == 0  # noqa: E712  max(-0, +0) = +0


# ---- the example and nki.simulate -----------------------------------------------------------------
def test_softmax_example_matches():
    from fastisa import examples
    r = examples.run("nki_softmax")
    assert r.matches, r.format()
    assert r.cycles == {"DMA": 2 * 8192, "Scalar": 8192 + 64, "Vector": 3 * 8192 + 64}


def test_accumulator_fresh_per_simulate_run():
    import fastisa.nki as fnki

    @fnki.jit
    def k(x):
        t = nl.ndarray(x.shape, nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x)
        res = nl.ndarray((x.shape[0], 1), nl.float32, buffer=nl.sbuf)
        nisa.activation(dst=t, op=nl.copy, data=t, reduce_cmd=nisa.reduce_cmd.reduce,
                        reduce_res=res)
        out = nl.ndarray((x.shape[0], 1), nl.float32, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=res)
        return out

    x = np.ones((4, 5), np.float32)
    assert fnki.simulate(k)(x).ravel().tolist() == [5.0] * 4
    assert fnki.simulate(k)(x).ravel().tolist() == [5.0] * 4   # registers start at 0 again


# ---- tensor_tensor: GpSimd's native int32/uint32 path ---------------------------------------
INT_OPS = ["add", "subtract", "multiply", "maximum", "minimum", "equal", "not_equal",
           "greater_equal", "greater", "less_equal", "less", "logical_and", "logical_or",
           "logical_xor"]


@pytest.mark.parametrize("op", INT_OPS)
@pytest.mark.parametrize("f1,f2,fd", [("int32", "int32", "int32"), ("uint32", "int32", "uint32"),
                                      ("uint32", "uint32", "int32")])
def test_tensor_tensor_native_int(op, f1, f2, fd, rng):
    a = random_values(rng, f1, (16, 40))
    b = random_values(rng, f2, (16, 40))
    b[:, :5] = a[:, :5].astype(np.int64).astype(b.dtype)   # some equal pairs
    dst = empty((16, 40), fd)
    with cost.profiling() as p:
        nisa.tensor_tensor(dst, T(a, f1), T(b, f2), getattr(nl, op))
    A, B = a.astype(object), b.astype(object)
    f = {"add": lambda x, y: x + y, "subtract": lambda x, y: x - y,
         "multiply": lambda x, y: x * y, "maximum": max, "minimum": min,
         "equal": lambda x, y: int(x == y), "not_equal": lambda x, y: int(x != y),
         "greater_equal": lambda x, y: int(x >= y), "greater": lambda x, y: int(x > y),
         "less_equal": lambda x, y: int(x <= y), "less": lambda x, y: int(x < y),
         "logical_and": lambda x, y: int(x != 0 and y != 0),
         "logical_or": lambda x, y: int(x != 0 or y != 0),
         "logical_xor": lambda x, y: int((x != 0) != (y != 0))}[op]
    exact = np.frompyfunc(f, 2, 1)(A, B)
    wrapped = np.array([int(v) & 0xFFFFFFFF for v in exact.ravel()], np.uint32).reshape(16, 40)
    assert_bits(dst.data, wrapped.view(dst.data.dtype))
    assert list(p.totals()) == ["GpSimd"]


def test_tensor_tensor_int32_vector_engine_goes_through_fp32():
    a = np.array([[2**24 + 1, 7]], np.int32)
    b = np.array([[0, 0]], np.int32)
    dst = empty((1, 2), "int32")
    nisa.tensor_tensor(dst, T(a, "int32"), T(b, "int32"), nl.add, engine=nisa.engine.vector)
    assert dst.data.tolist() == [[2**24, 7]]
    nisa.tensor_tensor(dst, T(a, "int32"), T(b, "int32"), nl.add)
    assert dst.data.tolist() == [[2**24 + 1, 7]]
    # a PSUM operand falls back to the Vector engine (float32)
    with cost.profiling() as p:
        nisa.tensor_tensor(dst, T(a, "int32", nl.psum), T(b, "int32"), nl.add)
    assert dst.data.tolist() == [[2**24, 7]] and list(p.totals()) == ["Vector"]


def test_more_constraints():
    x = T(np.zeros((4, 8), np.float32), "float32")
    d = empty((4, 8), "float32")
    with nl.use_target("trn3"):
        with pytest.raises(ConstraintError, match="dst dtype must be one of"):
            nisa.exponential(empty((4, 8), "uint32"), x)
        with pytest.raises(ConstraintError, match="reduce_init must be a float32 scalar"):
            nisa.exponential(d, x, reduce_init="a")
    with pytest.raises(ConstraintError, match="got load_reduce"):
        nisa.activation(d, nl.exp, x, reduce_cmd=nisa.reduce_cmd.load_reduce)
    with pytest.raises(ConstraintError, match="reduce_res must be a \\[P, 1\\] tensor"):
        nisa.activation_reduce(d, nl.exp, x, reduce_op=nl.add, reduce_res=None)
    with pytest.raises(ConstraintError, match="reduce_op must be nl.add, got None"):
        nisa.activation_reduce(d, nl.exp, x, reduce_op=None, reduce_res=empty((4, 1), "float32"))
    with pytest.raises(ConstraintError, match="reduce_res must have shape"):
        nisa.activation(d, nl.exp, x, reduce_res=empty((4, 2), "float32"))
    with pytest.raises(ConstraintError, match="must be in sbuf, got psum"):
        nisa.tensor_copy(d, T(np.zeros((4, 8)), "float32", nl.psum), engine=nisa.engine.gpsimd)
    with pytest.raises(ConstraintError, match="engine must be"):
        nisa.tensor_copy(d, x, engine=nisa.engine.tensor)
    with pytest.raises(ConstraintError, match="got load_reduce"):
        nisa.select_reduce(d, T(np.zeros((4, 8)), "uint8"), x, 0.0,
                           reduce_cmd=nisa.reduce_cmd.load_reduce)
    with pytest.raises(ConstraintError, match="nl.power runs on the GpSimd engine only"):
        nisa.tensor_tensor(d, x, x, nl.power, engine=nisa.engine.vector)
    with pytest.raises(ConstraintError, match="operand1"):
        nisa.scalar_tensor_tensor(d, x, nl.add, 1.0, nl.add, T(np.zeros((4, 7)), "float32"))
    with pytest.raises(ConstraintError, match="rank <= 5"):
        nisa.tensor_copy(empty((2, 1, 1, 1, 1, 2), "float32"),
                         T(np.zeros((2, 1, 1, 1, 1, 2)), "float32"))


@pytest.mark.parametrize("rop", ["add", "maximum"])
def test_scalar_tensor_tensor_reduce(rop, rng):
    P, F = 32, 70
    a = rng.standard_normal((P, F)).astype(np.float32)
    b = rng.standard_normal((P, F)).astype(np.float32)
    dst = empty((P, F), "bfloat16")
    res = empty((P, 1), "float32")
    nisa.scalar_tensor_tensor(dst, T(a, "float32"), nl.subtract, 0.5, nl.multiply, T(b, "float32"),
                              reduce_op=getattr(nl, rop), reduce_res=res)
    t = ((a - np.float32(0.5)).astype(np.float32) * b).astype(np.float32)
    assert_bits(dst.data, ref.nki_round(t, "bfloat16"))
    if rop == "add":
        want = np.zeros(P, np.float32)
        for j in range(F):
            want = (want + t[:, j]).astype(np.float32)
    else:
        want = t.max(axis=1)
    assert_bits(res.data[:, 0], want)


def test_scalar_tensor_tensor_rejects_bitvec():
    x = T(np.zeros((4, 8), np.int32), "int32")
    with pytest.raises(ConstraintError, match="bitvec ops are not supported"):
        nisa.scalar_tensor_tensor(empty((4, 8), "int32"), x, nl.bitwise_and, 1, nl.add, x)
    f = T(np.zeros((4, 8), np.float32), "float32")
    with pytest.raises(ConstraintError, match="needs reduce_op"):
        nisa.scalar_tensor_tensor(empty((4, 8), "float32"), f, nl.add, 1.0, nl.add, f,
                                  reduce_cmd=nisa.reduce_cmd.reduce)
    with pytest.raises(ConstraintError, match="reduce_op must be nl.add or nl.maximum"):
        nisa.scalar_tensor_tensor(empty((4, 8), "float32"), f, nl.add, 1.0, nl.add, f,
                                  reduce_op=nl.subtract)


def test_thread_count_does_not_change_results(rng, monkeypatch):
    from fastisa.nki import _compute
    x = random_values(rng, "bfloat16", (128, 1024))
    y = rng.standard_normal((128, 1024)).astype(np.float32)
    outs = []
    for threads in (1, 0, 2):
        monkeypatch.setattr(_compute, "THREADS", threads)
        d1 = empty((128, 1024), "bfloat16")
        r1 = empty((128, 1), "float32")
        nisa.activation(d1, nl.gelu, T(y, "float32"), scale=0.5,
                        reduce_cmd=nisa.reduce_cmd.reset_reduce, reduce_res=r1)
        d2 = empty((128, 1024), "float32")
        nisa.tensor_tensor(d2, T(x, "bfloat16"), T(y, "float32"), nl.multiply)
        m = empty((128,), "float32")
        nisa.tensor_reduce(m, nl.add, T(y, "float32"), axis=1)
        outs.append([bits(a.data).copy() for a in (d1, r1, d2, m)])
    for o in outs[1:]:
        for a, b in zip(outs[0], o):
            assert a.tobytes() == b.tobytes()
