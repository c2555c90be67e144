"""nki-isa family: scans, cumulative and tensor_scalar_reduce, statistics, partition reduce,
against tests/reference.py bit for bit (every dtype each accepts), with hypothesis geometry."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import reference as ref
from fastisa import cost
from fastisa.errors import ConstraintError
from fastisa.nki import isa as nisa
from fastisa.nki import language as nl
from test_nki_compute import ALL, INTS, T, assert_bits, empty, random_values

CUM_DTYPES = ["bfloat16", "float16", "float32", "float8_e4m3", "float8_e5m2", "float8_e4m3fn",
              "uint8", "uint16", "int8", "int16"]
BIN = ["add", "subtract", "multiply", "maximum", "minimum"]


def f32(t):
    return ref.nki_to_f32(t.data.reshape(t.partitions, -1), t.dtype.name)


def want(x, fmt, shape):
    return ref.nki_round(x, fmt).reshape(shape)


def nan_any(a):
    return np.ones(np.shape(a), bool)


# ---- tensor_tensor_scan --------------------------------------------------------------
@pytest.mark.parametrize("fmt", ALL)
def test_tensor_tensor_scan_every_dtype(fmt, rng):
    a = T(random_values(rng, fmt, (8, 37)), fmt)
    b = T(random_values(rng, fmt, (8, 37)), fmt)
    d = empty((8, 37), fmt)
    nisa.tensor_tensor_scan(d, a, b, 0.5, nl.multiply, nl.add)
    w = want(ref.nki_isa_tt_scan(f32(a), f32(b), np.float32(0.5), "multiply", "add"), fmt, d.shape)
    assert_bits(d.data, w, nan_either=nan_any(w))


@settings(max_examples=40)
@given(P=st.integers(1, 128), F=st.integers(1, 1100), op0=st.sampled_from(BIN),
       op1=st.sampled_from(BIN), rev0=st.booleans(), rev1=st.booleans(),
       fin=st.sampled_from(["float32", "bfloat16"]), fout=st.sampled_from(["float32", "bfloat16",
                                                                           "int16"]),
       tile_init=st.booleans(), seed=st.integers(0, 2**31))
def test_tensor_tensor_scan_hypothesis(P, F, op0, op1, rev0, rev1, fin, fout, tile_init, seed):
    rng = np.random.default_rng(seed)
    a = T((rng.standard_normal((P, F)) * 0.9).astype(np.float32), fin)
    b = T(rng.standard_normal((P, F)).astype(np.float32), fin, nl.psum)
    init = T(rng.standard_normal((P, 1)).astype(np.float32), "float32") if tile_init else -1.25
    d = empty((P, F), fout)
    nisa.tensor_tensor_scan(d, a, b, init, getattr(nl, op0), getattr(nl, op1), rev0, rev1)
    iv = f32(init).reshape(P) if tile_init else np.float32(-1.25)
    w = want(ref.nki_isa_tt_scan(f32(a), f32(b), iv, op0, op1, rev0, rev1), fout, d.shape)
    assert_bits(d.data, w, nan_either=nan_any(w))


def test_tensor_tensor_scan_sdk_example(rng):
    """The SDK's example: two halves chained through initial=c[:, 511]."""
    a = T(rng.random((128, 1024)).astype(np.float32), "float32")
    b = T(rng.random((128, 1024)).astype(np.float32), "float32")
    c = empty((128, 1024), "float32")
    nisa.tensor_tensor_scan(c[:, 0:512], a[:, 0:512], b[:, 0:512], 0, nl.multiply, nl.add)
    nisa.tensor_tensor_scan(c[:, 512:1024], a[:, 512:1024], b[:, 512:1024], c[:, 511:512],
                            nl.multiply, nl.add)
    whole = ref.nki_isa_tt_scan(a.data, b.data, np.float32(0), "multiply", "add")
    assert_bits(c.data, whole)


def test_tensor_tensor_scan_strided_views_and_in_place(rng):
    base = T(rng.standard_normal((16, 3, 40)).astype(np.float32), "float32")
    a = base[:, 0, 0:40:2]
    b = base[:, 1, 1:40:2]
    want_ = ref.nki_isa_tt_scan(a.data, b.data, np.float32(1), "add", "multiply")
    nisa.tensor_tensor_scan(a, a, b, 1.0, nl.add, nl.multiply)
    assert_bits(a.data, want_)


def test_tensor_tensor_scan_errors():
    a, b, d = (empty((4, 8), "float32") for _ in range(3))
    with pytest.raises(ConstraintError, match="both be in psum"):
        nisa.tensor_tensor_scan(d, T(np.zeros((4, 8)), "float32", nl.psum),
                                T(np.zeros((4, 8)), "float32", nl.psum), 0.0, nl.add, nl.add)
    with pytest.raises(ConstraintError, match="same number of elements"):
        nisa.tensor_tensor_scan(d, a, empty((4, 9), "float32"), 0.0, nl.add, nl.add)
    with pytest.raises(ConstraintError, match="same partition"):
        nisa.tensor_tensor_scan(d, a, empty((3, 8), "float32"), 0.0, nl.add, nl.add)
    with pytest.raises(ConstraintError, match="arithmetic"):
        nisa.tensor_tensor_scan(d, a, b, 0.0, nl.bitwise_and, nl.add)
    with pytest.raises(ConstraintError, match="binary"):
        nisa.tensor_tensor_scan(d, a, b, 0.0, nl.abs, nl.add)
    with pytest.raises(ConstraintError, match="initial"):
        nisa.tensor_tensor_scan(d, a, b, empty((4, 2), "float32"), nl.add, nl.add)
    with pytest.raises(ConstraintError, match="hbm"):
        nisa.tensor_tensor_scan(d, T(np.zeros((4, 8)), "float32", nl.hbm), b, 0.0, nl.add, nl.add)
    with pytest.raises(ConstraintError, match="packed"):
        nisa.tensor_tensor_scan(empty((4, 8), "float8_e4m3fn_x4"), a, b, 0.0, nl.add, nl.add)
    with pytest.raises(ConstraintError, match="reverse0"):
        nisa.tensor_tensor_scan(d, a, b, 0.0, nl.add, nl.add, reverse0=1)


def test_tensor_tensor_scan_cost():
    a = empty((4, 100), "float32")
    with cost.profiling() as p:
        nisa.tensor_tensor_scan(a, a, a, 0.0, nl.add, nl.add)
    assert p.totals() == {"Vector": 200}


# ---- tensor_scalar_cumulative -----------------------------------------------------------
@pytest.mark.parametrize("fmt", CUM_DTYPES)
@pytest.mark.parametrize("op1", BIN)
def test_cumulative_every_dtype_and_op(fmt, op1, rng):
    src = T(random_values(rng, fmt, (13, 45)), fmt)     # 8-row groups and a tail
    d = empty((13, 45), fmt)
    nisa.tensor_scalar_cumulative(d, src, nl.multiply, getattr(nl, op1), 0.75)
    start = {"add": 0, "subtract": 0, "multiply": 1, "maximum": -np.inf, "minimum": np.inf}[op1]
    o, _ = ref.nki_isa_cumulative(f32(src), np.float32(0.75), "multiply", op1, np.float32(start))
    w = want(o, fmt, d.shape)
    assert_bits(d.data, w, nan_either=nan_any(w))


@settings(max_examples=30)
@given(P=st.integers(1, 128), F=st.integers(1, 700), op0=st.sampled_from(BIN + ["abs"]),
       op1=st.sampled_from(BIN), seed=st.integers(0, 2**31))
def test_cumulative_chain_load_reduce_hypothesis(P, F, op0, op1, seed):
    rng = np.random.default_rng(seed)
    src = T(rng.standard_normal((P, F)).astype(np.float32), "float32")
    imm0 = None if op0 == "abs" else T(rng.standard_normal((P, 1)).astype(np.float32), "float32")
    imm1 = T(rng.standard_normal((P, 1)).astype(np.float32), "float32")
    d = empty((P, F), "float32")
    nisa.tensor_scalar_cumulative(d, src, getattr(nl, op0), getattr(nl, op1), imm0, imm1,
                                  reduce_cmd=nisa.reduce_cmd.load_reduce)
    iv = np.float32(0) if imm0 is None else imm0.data.reshape(P)
    o1, reg = ref.nki_isa_cumulative(src.data, iv, op0, op1, imm1.data.reshape(P))
    assert_bits(d.data, o1, nan_either=nan_any(o1))
    # chained with reduce_cmd=reduce: continues from the accumulator
    nisa.tensor_scalar_cumulative(d, src, getattr(nl, op0), getattr(nl, op1), imm0,
                                  reduce_cmd=nisa.reduce_cmd.reduce)
    o2, _ = ref.nki_isa_cumulative(src.data, iv, op0, op1, reg)
    assert_bits(d.data, o2, nan_either=nan_any(o2))


def test_cumulative_sdk_examples():
    src = T(np.ones((128, 64), np.float32), "float32")
    d = empty((128, 64), "float32")
    nisa.tensor_scalar_cumulative(d, src, nl.add, nl.add, 0.0)
    assert np.array_equal(d.data, np.add.accumulate(src.data, axis=-1))
    one = T(np.ones((128, 1), np.float32), "float32")
    nisa.tensor_scalar_cumulative(d, src, nl.add, nl.add, 0.0, one,
                                  reduce_cmd=nisa.reduce_cmd.load_reduce)
    assert np.array_equal(d.data, np.add.accumulate(src.data, axis=-1) + 1)


def test_cumulative_errors():
    s, d = empty((4, 8), "float32"), empty((4, 8), "float32")
    for bad in ("int32", "uint32"):
        with pytest.raises(ConstraintError, match="dtype must be one of"):
            nisa.tensor_scalar_cumulative(empty((4, 8), bad), s, nl.add, nl.add, 0.0)
    with pytest.raises(ConstraintError, match="op1 must be one of"):
        nisa.tensor_scalar_cumulative(d, s, nl.add, nl.equal, 0.0)
    with pytest.raises(ConstraintError, match="arithmetic"):
        nisa.tensor_scalar_cumulative(d, s, nl.bitwise_or, nl.add, 0.0)
    with pytest.raises(ConstraintError, match="imm1 must be given"):
        nisa.tensor_scalar_cumulative(d, s, nl.add, nl.add, 0.0,
                                      reduce_cmd=nisa.reduce_cmd.load_reduce)
    nisa.tensor_scalar_cumulative(d, s, nl.add, nl.add, 0.0, 1.0)  # imm1 ignored (reset)
    with pytest.raises(ConstraintError, match="reduce_cmd must be"):
        nisa.tensor_scalar_cumulative(d, s, nl.add, nl.add, 0.0,
                                      reduce_cmd=nisa.reduce_cmd.idle)
    with pytest.raises(ConstraintError, match="None or 0"):
        nisa.tensor_scalar_cumulative(d, s, nl.abs, nl.add, 2.0)
    before = d.data.copy()
    with pytest.raises(ConstraintError):
        nisa.tensor_scalar_cumulative(d, empty((4, 9), "float32"), nl.add, nl.add, 0.0)
    assert_bits(d.data, before)


# ---- tensor_scalar_reduce -----------------------------------------------------------------
@pytest.mark.parametrize("fmt", ALL)
@pytest.mark.parametrize("rop", ["add", "multiply", "maximum", "minimum"])
def test_tensor_scalar_reduce_every_dtype(fmt, rop, rng):
    data = T(random_values(rng, fmt, (5, 33)), fmt)
    d = empty((5, 33), fmt)
    rr = empty((5, 1), "float32")
    nisa.tensor_scalar_reduce(d, data, nl.subtract, 1.5, getattr(nl, rop), reduce_res=rr)
    start = {"add": 0, "multiply": 1, "maximum": -np.inf, "minimum": np.inf}[rop]
    t, acc = ref.nki_isa_ts_reduce(f32(data), np.float32(1.5), "subtract", rop, np.float32(start))
    w = want(t, fmt, d.shape)
    assert_bits(d.data, w, nan_either=nan_any(w))
    assert_bits(rr.data.reshape(5), acc, nan_either=nan_any(acc))


@settings(max_examples=30)
@given(P=st.integers(1, 128), F=st.integers(1, 1500), rev=st.booleans(), neg=st.booleans(),
       rop=st.sampled_from(["add", "maximum", "minimum"]), seed=st.integers(0, 2**31))
def test_tensor_scalar_reduce_hypothesis(P, F, rev, neg, rop, seed):
    rng = np.random.default_rng(seed)
    data = T(rng.standard_normal((P, F)).astype(np.float32), "bfloat16")
    op = T(rng.standard_normal((P, 1)).astype(np.float32), "float32")
    init = T(rng.standard_normal((P, 1)).astype(np.float32), "float32")
    d = empty((P, F), "bfloat16")
    rr = empty((P, 1), "float32")
    nisa.tensor_scalar_reduce(d, data, nl.subtract, op, getattr(nl, rop), reduce_res=rr,
                              reverse0=rev, reduce_cmd=nisa.reduce_cmd.load_reduce,
                              reduce_init=init, reduce_res_negate=neg)
    t, acc = ref.nki_isa_ts_reduce(f32(data), op.data.reshape(P, 1), "subtract", rop,
                                   init.data.reshape(P), rev0=rev)
    assert_bits(d.data, want(t, "bfloat16", d.shape))
    assert_bits(rr.data.reshape(P), -acc if neg else acc)


def test_tensor_scalar_reduce_accumulator_chain(rng):
    a = T(rng.standard_normal((8, 20)).astype(np.float32), "float32")
    d = empty((8, 20), "float32")
    nisa.tensor_scalar_reduce(d, a, nl.add, 0.0, nl.add)              # keeps it in the registers
    rr = empty((8, 1), "float32")
    nisa.tensor_scalar_reduce(d, a, nl.add, 0.0, nl.add, reduce_res=rr,
                              reduce_cmd=nisa.reduce_cmd.reduce, reduce_res_negate=True)
    _, acc1 = ref.nki_isa_ts_reduce(a.data, np.float32(0), "add", "add", np.float32(0))
    _, acc2 = ref.nki_isa_ts_reduce(a.data, np.float32(0), "add", "add", acc1)
    assert_bits(rr.data.reshape(8), -acc2)


def test_tensor_scalar_reduce_errors():
    a, d = empty((4, 8), "float32"), empty((4, 8), "float32")
    with pytest.raises(ConstraintError, match="reduce_op must be one of"):
        nisa.tensor_scalar_reduce(d, a, nl.add, 0.0, nl.subtract)
    with pytest.raises(ConstraintError, match="arithmetic"):
        nisa.tensor_scalar_reduce(d, a, nl.bitwise_and, 0, nl.add)
    with pytest.raises(ConstraintError, match="reduce_res"):
        nisa.tensor_scalar_reduce(d, a, nl.add, 0.0, nl.add, reduce_res=empty((4, 2), "float32"))
    with pytest.raises(ConstraintError, match="reduce_init must only"):
        nisa.tensor_scalar_reduce(d, a, nl.add, 0.0, nl.add, reduce_init=1.0)
    with pytest.raises(ConstraintError, match="must be given"):
        nisa.tensor_scalar_reduce(d, a, nl.add, 0.0, nl.add,
                                  reduce_cmd=nisa.reduce_cmd.load_reduce)
    with pytest.raises(ConstraintError, match="None or 0"):
        nisa.tensor_scalar_reduce(d, a, nl.abs, 3.0, nl.add)


# ---- bn_stats / bn_aggr -----------------------------------------------------------------
@pytest.mark.parametrize("fmt", ALL)
def test_bn_stats_aggr_every_dtype(fmt, rng):
    x = T(random_values(rng, fmt, (11, 41)), fmt)      # 8-row groups and a tail
    s = empty((11, 6), "float32")
    nisa.bn_stats(s, x)
    ws = ref.nki_isa_bn_stats(f32(x))
    assert_bits(s.data, ws, nan_either=nan_any(ws))
    m = empty((11, 2), fmt)
    nisa.bn_aggr(m, s)
    wm = want(ref.nki_isa_bn_aggr(ws), fmt, (11, 2))
    assert_bits(m.data, wm, nan_either=nan_any(wm))


@settings(max_examples=30)
@given(P=st.integers(1, 128), tiles=st.lists(st.integers(1, 512), min_size=1, max_size=4),
       seed=st.integers(0, 2**31))
def test_bn_stats_aggr_tiled_hypothesis(P, tiles, seed):
    rng = np.random.default_rng(seed)
    xs = [T((rng.standard_normal((P, n)) * 3 + 1).astype(np.float32), "float32") for n in tiles]
    s = empty((P, 6 * len(tiles)), "float32")
    for i, x in enumerate(xs):
        nisa.bn_stats(s[:, 6 * i:6 * i + 6], x)
    m = empty((P, 2), "float32")
    nisa.bn_aggr(m, s)
    ws = np.concatenate([ref.nki_isa_bn_stats(x.data) for x in xs], axis=1)
    assert_bits(s.data, ws)
    assert_bits(m.data, ref.nki_isa_bn_aggr(ws))
    allx = np.concatenate([x.data for x in xs], axis=1).astype(np.float64)
    assert np.allclose(m.data[:, 0], allx.mean(1), rtol=1e-4, atol=1e-4)
    assert np.allclose(m.data[:, 1], allx.var(1), rtol=1e-3, atol=1e-3)


def test_bn_errors():
    with pytest.raises(ConstraintError, match="512"):
        nisa.bn_stats(empty((4, 6), "float32"), empty((4, 513), "float32"))
    with pytest.raises(ConstraintError, match="6 elements"):
        nisa.bn_stats(empty((4, 5), "float32"), empty((4, 8), "float32"))
    with pytest.raises(ConstraintError, match="partition"):
        nisa.bn_stats(empty((3, 6), "float32"), empty((4, 8), "float32"))
    with pytest.raises(ConstraintError, match="multiple of 3"):
        nisa.bn_aggr(empty((4, 2), "float32"), empty((4, 7), "float32"))
    with pytest.raises(ConstraintError, match="2 elements"):
        nisa.bn_aggr(empty((4, 3), "float32"), empty((4, 6), "float32"))
    with pytest.raises(ConstraintError, match="sbuf or psum"):
        nisa.bn_stats(empty((4, 6), "float32"), T(np.zeros((4, 8)), "float32", nl.hbm))


# ---- tensor_partition_reduce --------------------------------------------------------------
@pytest.mark.parametrize("fmt", ALL)
@pytest.mark.parametrize("op", ["add", "maximum", "minimum", "average"])
def test_partition_reduce_every_dtype(fmt, op, rng):
    x = T(random_values(rng, fmt, (23, 19)), fmt)
    d = empty((1, 19), fmt)
    nisa.tensor_partition_reduce(d, op if op == "average" else getattr(nl, op), x)
    w = want(ref.nki_isa_partition_reduce(f32(x), op), fmt, d.shape)
    assert_bits(d.data, w, nan_either=nan_any(w))


@pytest.mark.parametrize("fmt", INTS)
@pytest.mark.parametrize("op", ["bitwise_or", "bitwise_and"])
def test_partition_reduce_bitwise(fmt, op, rng):
    x = T(random_values(rng, fmt, (128, 70)), fmt)
    d = empty((1, 70), fmt)
    nisa.tensor_partition_reduce(d, getattr(nl, op), x)
    f = np.bitwise_or if op == "bitwise_or" else np.bitwise_and
    assert_bits(d.data, f.reduce(x.data, axis=0, keepdims=True))


def test_partition_reduce_errors():
    with pytest.raises(ConstraintError, match="one partition"):
        nisa.tensor_partition_reduce(empty((2, 8), "float32"), nl.add, empty((4, 8), "float32"))
    with pytest.raises(ConstraintError, match="op must be"):
        nisa.tensor_partition_reduce(empty((1, 8), "float32"), nl.subtract,
                                     empty((4, 8), "float32"))
    with pytest.raises(ConstraintError, match="integer"):
        nisa.tensor_partition_reduce(empty((1, 8), "float32"), nl.bitwise_or,
                                     empty((4, 8), "float32"))
    with pytest.raises(ConstraintError, match="sbuf"):
        nisa.tensor_partition_reduce(empty((1, 8), "float32"), nl.add,
                                     empty((4, 8), "float32", nl.psum))


def test_cumulative_chain_imm1_ignored_unless_load_reduce():
    """A load_reduce then a reduce call, both given imm1 (the SDK's chained pattern): the
    second continues from the accumulator, its imm1 unread (nkisamp)."""
    P, F = 8, 16
    src = T(np.ones((P, F), np.float32), "float32")
    d = T(np.zeros((P, F), np.float32), "float32")
    nisa.tensor_scalar_cumulative(d, src, nl.add, nl.add, 0.0, 1.0,
                                  reduce_cmd=nisa.reduce_cmd.load_reduce)
    assert (d.data[:, -1] == F + 1).all()
    nisa.tensor_scalar_cumulative(d, src, nl.add, nl.add, 0.0, 5.0,
                                  reduce_cmd=nisa.reduce_cmd.reduce)
    assert (d.data == np.arange(1, F + 1, dtype=np.float32) + F + 1).all()
    with pytest.raises(ConstraintError, match="imm1"):
        nisa.tensor_scalar_cumulative(d, src, nl.add, nl.add, 0.0, "x",
                                      reduce_cmd=nisa.reduce_cmd.reduce)
