"""The public NKI test patterns of reference/nki.md section 4, rewritten as our own tests
(max8 / nc_find_index8 / nc_match_replace8 / iota / memset / nki-library's top-k shapes)."""

import ml_dtypes
import numpy as np
import pytest

import reference as ref
import fastisa.nki as nki
from fastisa.nki import isa as nisa
from fastisa.nki import language as nl

BF16 = ml_dtypes.bfloat16


def _load(x, dtype=nl.float32):
    t = nl.ndarray(x.shape, dtype, buffer=nl.sbuf)
    t.data[...] = x.astype(dtype.np_dtype)
    return t


def test_max8_then_find_index8_uniform():
    """max8 on uniform random [32, 128]: (32, 8), in [0, 1), rows non-increasing; the
    find_index8 of those values: uint32 indices in [0, 128), distinct, pointing at them."""
    rng = np.random.default_rng(0)
    x = rng.random((32, 128), dtype=np.float32)
    src = _load(x)
    m = nl.ndarray((32, 8), nl.float32)
    nisa.max8(dst=m, src=src)
    assert m.shape == (32, 8)
    assert ((m.data >= 0) & (m.data < 1)).all() and (np.diff(m.data, axis=1) <= 0).all()
    assert np.array_equal(m.data, -np.sort(-x, axis=1)[:, :8])
    idx = nl.ndarray((32, 8), nl.uint32)
    nisa.nc_find_index8(dst=idx, data=src, vals=m)
    assert idx.data.dtype == np.uint32 and (idx.data < 128).all()
    assert all(len(set(r)) == 8 for r in idx.data.tolist())
    assert np.array_equal(np.take_along_axis(x, idx.data.astype(np.intp), axis=1), m.data)


@pytest.mark.parametrize("variant", ["2d", "subtile", "3d", "inplace"])
@pytest.mark.parametrize("imm", [-np.inf, 0.0])
def test_match_replace8_golden(variant, imm):
    """Golden: top-8 (descending) of each row, first occurrences replaced by imm, indices."""
    rng = np.random.default_rng(1)
    shape = (128, 4, 4) if variant == "3d" else (128, 512)
    x = rng.standard_normal(shape).astype(np.float32)
    parent = _load(x)
    data = parent[:64, :256] if variant == "subtile" else parent
    rows = data.data.reshape(data.partitions, -1)
    top = -np.sort(-rows, axis=1)[:, :8]
    vals = _load(top)
    dst = data if variant == "inplace" else nl.ndarray(data.shape, nl.float32)
    idx = nl.ndarray((data.partitions, 8), nl.uint32)
    before = rows.copy()
    nisa.nc_match_replace8(dst=dst, data=data, vals=vals, imm=imm, dst_idx=idx)
    want_idx = np.argsort(-before, axis=1, kind="stable")[:, :8]
    want = before.copy()
    np.put_along_axis(want, want_idx, np.float32(imm), axis=1)
    assert np.array_equal(idx.data, want_idx.astype(np.uint32))
    assert np.array_equal(dst.data.reshape(data.partitions, -1), want)
    if variant in ("subtile", "2d", "3d"):    # data (and the rest of the parent) untouched
        assert np.array_equal(parent.data, x)


def test_cascaded_argmax():
    """argmax per row via max8 + nc_find_index8 (nki-library cascaded_max pattern)."""
    rng = np.random.default_rng(2)
    x = rng.standard_normal((128, 1000)).astype(np.float32).astype(BF16)
    src = _load(x, nl.bfloat16)
    m = nl.ndarray((128, 8), nl.bfloat16)
    nisa.max8(m, src)
    idx = nl.ndarray((128, 8), nl.uint32)
    nisa.nc_find_index8(idx, src, m)
    assert np.array_equal(idx.data[:, 0], np.argmax(x.astype(np.float32), axis=1))


@pytest.mark.parametrize("pattern, offset, cm, want", [
    ([[1, 8]], 0, 0, lambda p: np.arange(8)),
    ([[-1, 8]], 0, 0, lambda p: -np.arange(8)),
    ([[2, 8]], 5, 0, lambda p: 5 + 2 * np.arange(8)),
    ([[1, 8]], 0, 1, lambda p: p + np.arange(8)),
])
def test_iota_patterns(pattern, offset, cm, want):
    d = nl.ndarray((16, 8), nl.int32)
    nisa.iota(d, pattern, offset=offset, channel_multiplier=cm)
    for p in range(16):
        assert np.array_equal(d.data[p], want(p))
    assert np.array_equal(d.data, ref.nki_iota(16, pattern, offset, cm))


def test_memset_0_2():
    t = nl.ndarray((128, 512), nl.float32)
    nisa.memset(t, 0.2)
    assert (t.data == np.float32(0.2)).all()


def test_dma_copy_to_tfloat32_rounds_rne():
    src = nl.ndarray((1, 4), nl.float32, buffer=nl.hbm)
    one = np.float32(1.0)
    src.data[...] = [one + np.float32(2.0**-11), one + np.float32(3 * 2.0**-11),
                     one + np.float32(2.0**-11 + 2.0**-20), -2.5]
    d = nl.ndarray((1, 4), nl.tfloat32)
    nisa.dma_copy(dst=d, src=src)
    assert d.data[0].tolist() == [1.0, 1.0 + 2 * 2.0**-10, 1.0 + 2.0**-10, -2.5]


# nki-library experimental/topk shapes: vocab sizes and k values, snake padded to full
# columns with the most negative finite bf16 and n = 16 * columns.
VOCABS = [8, 64, 1024, 3142, 3168, 4058, 16000, 16384]
KS = [1, 7, 8, 10, 12, 16, 20, 24, 30, 32, 40, 48, 50, 60, 64, 80, 96, 99, 100, 128, 150,
      200, 256]


@nki.jit
def _gpsimd_topk(logits, k, sorted_):
    P, cols = logits.shape
    src = nl.ndarray((P, cols), nl.bfloat16, buffer=nl.sbuf)
    nisa.dma_copy(dst=src, src=logits)
    val = nl.ndarray((P, k), nl.bfloat16, buffer=nl.sbuf)
    idx = nl.ndarray((P, k), nl.uint32, buffer=nl.sbuf)
    nisa.topk(val_dst=val, idx_dst=idx, src=src, n=16 * cols, sorted=sorted_)
    v = nl.ndarray((P, k), nl.bfloat16, buffer=nl.shared_hbm)
    i = nl.ndarray((P, k), nl.uint32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=v, src=val)
    nisa.dma_copy(dst=i, src=idx)
    return v, i


@pytest.mark.parametrize("vocab", VOCABS)
def test_nki_library_topk_shapes(vocab):
    rng = np.random.default_rng(vocab)
    batch = 2
    cols = (vocab + 15) // 16
    lowest = ml_dtypes.finfo(BF16).min
    ks = [k for k in KS if k <= vocab][::3] + [min(vocab, 256)]
    for k in ks:
        for sorted_ in (False, True):
            logits = np.full((16 * batch, cols), lowest, BF16)
            rows = rng.standard_normal((batch, vocab)).astype(np.float32).astype(BF16)
            for b in range(batch):   # snake: element e at partition 16b + e % 16, column e // 16
                snake = np.full(16 * cols, lowest, BF16)
                snake[:vocab] = rows[b]
                logits[16 * b:16 * b + 16] = snake.reshape(cols, 16).T
            v, i = nki.simulate(_gpsimd_topk)(logits, k, sorted_)
            gv, gi = ref.nki_topk_results(v.view(np.uint16), i, k)
            for b in range(batch):
                vals = gv[b].view(BF16).astype(np.float32)
                want = np.sort(rows[b].astype(np.float32))[::-1][:k]
                assert np.array_equal(np.sort(vals)[::-1], want)           # value set
                assert (gi[b] < vocab).all()                               # never the padding
                assert np.array_equal(rows[b][gi[b]].astype(np.float32), vals)  # pairing
                if sorted_:
                    assert (np.diff(vals) <= 0).all()                      # descending
