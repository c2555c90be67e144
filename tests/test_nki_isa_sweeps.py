"""nki-isa family, exhaustive 16-bit sweeps (``pytest -m slow``): every bfloat16 / float16
code as the 16-bit input of each SDK 2.33 instruction that takes one, against
tests/reference.py bit for bit (NaN payloads only where two NaNs meet in one operation,
see ``assert_bits``).  The 65536 codes are laid out [128, 512] (row p holds codes
512p .. 512p + 511) unless an instruction's shape rule asks otherwise."""

import numpy as np
import pytest

import reference as ref
from fastisa.nki import isa as nisa
from fastisa.nki import language as nl
from test_nki_compute import T, assert_bits, empty

pytestmark = pytest.mark.slow
FMTS = ["bfloat16", "float16"]


def codes(fmt, shape=(128, 512), shift=0):
    c = ((np.arange(65536, dtype=np.uint32) + shift) % 65536).astype(np.uint16)
    c = np.resize(c, int(np.prod(shape))).reshape(shape)
    return T(c.view(ref.ml_dtypes.bfloat16 if fmt == "bfloat16" else np.float16), fmt)


def f32(t):
    return ref.nki_to_f32(t.data.reshape(t.partitions, -1), t.dtype.name)


def nan_any(a):
    return np.ones(np.shape(a), bool)


@pytest.mark.parametrize("fmt", FMTS)
def test_tensor_tensor_scan_every_16bit_code(fmt):
    a, b = codes(fmt), codes(fmt, shift=12345)
    d = empty((128, 512), fmt)
    nisa.tensor_tensor_scan(d, a, b, 0.0, nl.maximum, nl.add)
    w = ref.nki_round(ref.nki_isa_tt_scan(f32(a), f32(b), np.float32(0), "maximum", "add"),
                      fmt).reshape(d.shape)
    assert_bits(d.data, w, nan_either=nan_any(w))


@pytest.mark.parametrize("fmt", FMTS)
def test_tensor_scalar_cumulative_every_16bit_code(fmt):
    a = codes(fmt)
    d = empty((128, 512), fmt)
    nisa.tensor_scalar_cumulative(d, a, nl.multiply, nl.maximum, 0.75)
    o, _ = ref.nki_isa_cumulative(f32(a), np.float32(0.75), "multiply", "maximum",
                                  np.float32(-np.inf))
    w = ref.nki_round(o, fmt).reshape(d.shape)
    assert_bits(d.data, w, nan_either=nan_any(w))


@pytest.mark.parametrize("fmt", FMTS)
def test_tensor_scalar_reduce_every_16bit_code(fmt):
    a = codes(fmt)
    d = empty((128, 512), fmt)
    rr = empty((128, 1), "float32")
    nisa.tensor_scalar_reduce(d, a, nl.subtract, 1.5, nl.minimum, reduce_res=rr)
    t, acc = ref.nki_isa_ts_reduce(f32(a), np.float32(1.5), "subtract", "minimum",
                                   np.float32(np.inf))
    w = ref.nki_round(t, fmt).reshape(d.shape)
    assert_bits(d.data, w, nan_either=nan_any(w))
    assert_bits(rr.data.reshape(128), acc, nan_either=nan_any(acc))


@pytest.mark.parametrize("fmt", FMTS)
def test_bn_stats_and_aggr_every_16bit_code(fmt):
    a = codes(fmt)                                   # 512 = nl.tile_size.bn_stats_fmax
    s = empty((128, 6), "float32")
    nisa.bn_stats(s, a)
    ws = ref.nki_isa_bn_stats(f32(a))
    assert_bits(s.data, ws, nan_either=nan_any(ws))
    tri = codes(fmt, (128, 513))                     # every code as a (count, mean, m2) entry
    m = empty((128, 2), fmt)
    nisa.bn_aggr(m, tri)
    wm = ref.nki_round(ref.nki_isa_bn_aggr(f32(tri)), fmt).reshape(m.shape)
    assert_bits(m.data, wm, nan_either=nan_any(wm))


@pytest.mark.parametrize("fmt", FMTS)
@pytest.mark.parametrize("op", ["add", "maximum", "minimum", "average"])
def test_partition_reduce_every_16bit_code(fmt, op):
    a = codes(fmt)
    d = empty((1, 512), fmt)
    nisa.tensor_partition_reduce(d, op if op == "average" else getattr(nl, op), a)
    w = ref.nki_round(ref.nki_isa_partition_reduce(f32(a), op), fmt).reshape(d.shape)
    assert_bits(d.data, w, nan_either=nan_any(w))


@pytest.mark.parametrize("fmt", FMTS)
def test_dma_compute_every_16bit_code(fmt):
    a, b = codes(fmt), codes(fmt, shift=777)
    a = T(a.data, fmt, nl.hbm)
    d = empty((128, 512), fmt, nl.hbm)
    nisa.dma_compute(d, [a, b, a], nl.add)
    w = ref.nki_round(ref.nki_isa_dma_compute([f32(a), f32(b), f32(a)]), fmt).reshape(d.shape)
    assert_bits(d.data, w, nan_either=nan_any(w))


@pytest.mark.parametrize("fmt", FMTS)
@pytest.mark.parametrize("act", ["exp", "gelu", "prelu", "copy"])
def test_activate2_every_16bit_code(fmt, act):
    a = codes(fmt)
    d = empty((128, 512), fmt)
    with nl.use_target("trn3"):
        nisa.activate2(d, getattr(nl, act), a, 0.5, -0.25, nl.multiply, nl.add, relu_param=0.125)
    w = ref.nki_isa_activate2(act, a.data, fmt, fmt, 0.5, -0.25, "multiply", "add", 0.125)
    assert_bits(d.data, w, nan_either=nan_any(w))


@pytest.mark.parametrize("fmt", FMTS)
def test_bit_moves_keep_every_16bit_code(fmt):
    """dma_transpose, nc_stream_shuffle and tensor_copy_predicated move bit patterns (NaN
    payloads and signed zeros included)."""
    a = T(codes(fmt, (512, 128)).data, fmt, nl.hbm)
    t = empty((128, 512), fmt)
    nisa.dma_transpose(t, a)
    assert_bits(t.data, ref.nki_isa_dma_transpose(a.data))
    b = codes(fmt)
    s = empty((128, 512), fmt)
    mask = [(i + 7) % 32 for i in range(32)]
    want = ref.nki_isa_stream_shuffle(s.data, b.data, mask)
    nisa.nc_stream_shuffle(s, b, mask)
    assert_bits(s.data, want)
    pred = T((np.arange(128 * 512) % 3 != 0).astype(np.uint8).reshape(128, 512), "uint8")
    c = codes(fmt, shift=31)
    want = ref.nki_isa_copy_predicated(c.data, b.data, pred.data)
    nisa.tensor_copy_predicated(c, b, pred)
    assert_bits(c.data, want)


@pytest.mark.parametrize("fmt", FMTS)
def test_matmul_transpose_mode_keeps_every_16bit_code(fmt):
    eye = T(np.eye(128, dtype=np.float32), "bfloat16")
    allc = codes(fmt, (512, 128))
    for k in range(4):
        x = T(allc.data[128 * k:128 * (k + 1)], fmt)
        d = empty((128, 128), fmt, nl.psum)
        nisa.nc_matmul(d, x, eye, is_transpose=True)
        assert_bits(d.data, np.ascontiguousarray(x.data.T))


@pytest.mark.parametrize("fmt", FMTS)
def test_dropout_keeps_or_zeroes_every_16bit_code(fmt):
    a = codes(fmt)
    prob = T(np.where(np.arange(128) % 2 == 0, 0.0, 1.0).astype(np.float32).reshape(128, 1),
             "float32")
    d = codes(fmt, shift=99)
    nisa.dropout(d, a, prob)
    assert_bits(d.data[0::2], a.data[0::2])                  # probability 0: every bit kept
    assert (d.data[1::2].view(np.uint16) == 0).all()         # probability 1: +0
