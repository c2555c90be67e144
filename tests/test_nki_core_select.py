"""nisa.topk (spec 001) and the max8 family (reference/nki.md 2.2-2.4) against tests/reference.py."""

import warnings

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import reference as ref
from fastisa import cost
from fastisa._kernels import select as ksel
from fastisa.errors import ConstraintError, OverlapError
from fastisa.nki import isa as nisa
from fastisa.nki import language as nl
from fastisa.nki.tensor import NkiTensor

BF16 = ml_dtypes.bfloat16


def _sbuf_bits(bits, dtype=nl.bfloat16):
    t = nl.ndarray(bits.shape, dtype, buffer=nl.sbuf)
    t.data.view(np.uint16)[...] = bits
    return t


def _random_bits(rng, shape, kind):
    if kind == "normal":
        return rng.standard_normal(shape).astype(np.float32).astype(BF16).view(np.uint16)
    if kind == "ties":   # few distinct values, both zeros
        pool = np.array([0.0, -0.0, 1.0, -1.0, 2.0, 0.5], np.float32).astype(BF16).view(np.uint16)
        return pool[rng.integers(0, pool.size, shape)]
    if kind == "codes":  # any non-NaN bf16 bit pattern
        b = rng.integers(0, 65536, shape).astype(np.uint16)
        nan = (b & 0x7FFF) > 0x7F80
        return np.where(nan, b & 0x807F, b).astype(np.uint16)
    if kind == "ascending":
        return np.arange(np.prod(shape), dtype=np.float32).reshape(shape).astype(BF16).view(np.uint16)
    raise ValueError(kind)


def _run_topk(bits, n, k, sorted_, vshape=None, prefill=0x1234):
    P = bits.shape[0]
    src = _sbuf_bits(bits)
    vshape = vshape or (P, k)
    val = nl.ndarray(vshape, nl.bfloat16, buffer=nl.sbuf)
    idx = nl.ndarray(vshape, nl.uint32, buffer=nl.sbuf)
    val.data.view(np.uint16)[...] = prefill
    idx.data[...] = 0xABCDEF
    nisa.topk(val_dst=val, idx_dst=idx, src=src, n=n, sorted=sorted_)
    return (val.data.view(np.uint16).reshape(P, -1).copy(), idx.data.reshape(P, -1).copy())


# ---- spec 001 example ----------------------------------------------------------------------
def test_spec_example_kernel():
    import fastisa.nki as nki

    @nki.jit
    def topk_sorted_kernel(in_tensor):
        par_dim = in_tensor.shape[0]
        n = 42
        src_x = (n + 15) // 16
        k = 8
        src = nl.ndarray((par_dim, src_x), dtype=nl.bfloat16, buffer=nl.sbuf)
        nisa.dma_copy(dst=src, src=in_tensor)
        val_dst = nl.ndarray((par_dim, k), dtype=nl.bfloat16, buffer=nl.sbuf)
        idx_dst = nl.ndarray((par_dim, k), dtype=nl.uint32, buffer=nl.sbuf)
        nisa.topk(val_dst=val_dst, idx_dst=idx_dst, src=src, n=n, sorted=True)
        val_out = nl.ndarray((par_dim, k), dtype=nl.bfloat16, buffer=nl.shared_hbm)
        idx_out = nl.ndarray((par_dim, k), dtype=nl.uint32, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=val_out, src=val_dst)
        nisa.dma_copy(dst=idx_out, src=idx_dst)
        return val_out, idx_out

    rng = np.random.default_rng(1)
    x = rng.standard_normal((128, 3)).astype(np.float32).astype(BF16)
    x_before = x.copy()
    val, idx = nki.simulate(topk_sorted_kernel)(x)
    assert val.dtype == BF16 and idx.dtype == np.uint32 and val.shape == (128, 8)
    assert np.array_equal(x.view(np.uint16), x_before.view(np.uint16))  # input untouched
    exp_v, exp_i = ref.nki_topk(x.view(np.uint16), 42, 8, np.full((128, 8), 0x7FC0, np.uint16),
                                np.full((128, 8), 4, np.uint32))
    vb = val.view(np.uint16)
    # position 0 (the only written column) matches; columns 1..7 were never written: the
    # NaN / 4 fill of new SBUF tensors shows through.
    assert np.array_equal(vb[:, 0], exp_v[:, 0]) and np.array_equal(idx[:, 0], exp_i[:, 0])
    assert np.isnan(val[:, 1:].astype(np.float32)).all() and (idx[:, 1:] == 4).all()
    snakes = ref.nki_desnake(x.view(np.uint16), 42)
    for g in range(8):
        v = val[16 * g:16 * g + 8, 0].astype(np.float32)
        i = idx[16 * g:16 * g + 8, 0]
        assert (np.diff(v) <= 0).all()                                  # descending
        assert np.array_equal(snakes[g][i], val.view(np.uint16)[16 * g:16 * g + 8, 0])  # pairing
        assert np.array_equal(np.sort(v), np.sort(snakes[g].view(BF16).astype(np.float32))[-8:])
    assert topk_sorted_kernel.profile.totals()["GpSimd"] == 4 * 42 + 8


# ---- bit-exact against the oracle ------------------------------------------------------------
@settings(max_examples=40)
@given(groups=st.integers(1, 8), n=st.integers(8, 1500), kfrac=st.floats(0, 1),
       sorted_=st.booleans(), kind=st.sampled_from(["normal", "ties", "codes", "ascending"]),
       extra=st.integers(0, 3), seed=st.integers(0, 2**32 - 1))
def test_topk_matches_oracle(groups, n, kfrac, sorted_, kind, extra, seed):
    rng = np.random.default_rng(seed)
    k = max(1, min(n, int(kfrac * min(n, 600)), 8192))
    cols = (n + 15) // 16 + extra
    bits = _random_bits(rng, (16 * groups, cols), kind)
    val, idx = _run_topk(bits, n, k, sorted_)
    exp_v, exp_i = ref.nki_topk(bits, n, k, np.full_like(val, 0x1234), np.full_like(idx, 0xABCDEF))
    if sorted_:
        assert np.array_equal(val, exp_v) and np.array_equal(idx, exp_i)
    else:
        # same set, same pairing, unwritten slots untouched; order unspecified
        got_v, got_i = ref.nki_topk_results(val, idx, k)
        want_v, want_i = ref.nki_topk_results(exp_v, exp_i, k)
        for g in range(groups):
            o1, o2 = np.argsort(got_i[g]), np.argsort(want_i[g])
            assert np.array_equal(got_i[g][o1], want_i[g][o2])
            assert np.array_equal(got_v[g][o1], want_v[g][o2])
        mask = np.zeros(val.shape, bool)
        for j in range(k):
            mask[np.arange(groups)[:, None] * 16 + j % 16, j // 16] = True
        assert (val[~mask] == 0x1234).all() and (idx[~mask] == 0xABCDEF).all()


@pytest.mark.parametrize("k, sorted_", [(1, True), (7, True), (16, True), (64, True),
                                        (100, True), (1024, True), (4096, True), (8192, True),
                                        (16384, False), (12345, False), (64, False)])
def test_topk_vocab_size(k, sorted_):
    rng = np.random.default_rng(k)
    n = 65535
    bits = _random_bits(rng, (32, 4096), "normal")
    val, idx = _run_topk(bits, n, k, sorted_)
    exp_v, exp_i = ref.nki_topk(bits, n, k, np.full_like(val, 0x1234), np.full_like(idx, 0xABCDEF))
    if sorted_:
        assert np.array_equal(val, exp_v) and np.array_equal(idx, exp_i)
    else:
        got_v, got_i = ref.nki_topk_results(val, idx, k)
        want_v, want_i = ref.nki_topk_results(exp_v, exp_i, k)
        for g in range(2):
            o1, o2 = np.argsort(got_i[g]), np.argsort(want_i[g])
            assert np.array_equal(got_i[g][o1], want_i[g][o2])
            assert np.array_equal(got_v[g][o1], want_v[g][o2])


def test_topk_every_bf16_code():
    """All 65282 non-NaN bf16 codes in one snake (shuffled): the sorted top 8192 are exact."""
    codes = np.arange(65536, dtype=np.uint32).astype(np.uint16)
    codes = codes[(codes & 0x7FFF) <= 0x7F80]
    rng = np.random.default_rng(7)
    rng.shuffle(codes)
    n = codes.size
    cols = (n + 15) // 16
    snake = np.zeros(cols * 16, np.uint16)
    snake[:n] = codes
    bits = snake.reshape(cols, 16).T.copy()
    k = 8192
    val, idx = _run_topk(bits, n, k, True)
    exp_v, exp_i = ref.nki_topk(bits, n, k, np.full_like(val, 0x1234), np.full_like(idx, 0xABCDEF))
    assert np.array_equal(val, exp_v) and np.array_equal(idx, exp_i)
    # and the bottom: top n of the negated codes (k = 8192 from the other end)
    neg = bits ^ 0x8000
    val, idx = _run_topk(neg, n, k, True)
    exp_v, exp_i = ref.nki_topk(neg, n, k, np.full_like(val, 0x1234), np.full_like(idx, 0xABCDEF))
    assert np.array_equal(val, exp_v) and np.array_equal(idx, exp_i)


def test_topk_zeros_compare_equal_ties_by_index():
    # -0 at snake index 0, +0 at index 1, ... everything else negative: both zeros are
    # "equal", so the lower index (the -0) comes first and its bits are kept.
    bits = np.full((16, 4), np.float32(-1).astype(BF16).view(np.uint16), np.uint16)
    bits[0, 0] = 0x8000   # index 0: -0
    bits[1, 0] = 0x0000   # index 1: +0
    val, idx = _run_topk(bits, 64, 2, True)
    assert list(val[:2, 0]) == [0x8000, 0x0000] and list(idx[:2, 0]) == [0, 1]
    bits[0, 0], bits[1, 0] = 0x0000, 0x8000
    val, idx = _run_topk(bits, 64, 1, True)
    assert val[0, 0] == 0x0000 and idx[0, 0] == 0


def test_topk_unwritten_positions_keep_contents():
    rng = np.random.default_rng(3)
    bits = _random_bits(rng, (16, 64), "normal")
    k = 40   # ceil(40/16) = 3 positions written, slots 40..47 of position 2 unspecified
    val, idx = _run_topk(bits, 1000, k, True, prefill=0x4242)
    for j in range(16 * 3):
        p, c = j % 16, j // 16
        if j >= k:
            assert val[p, c] == 0x4242 and idx[p, c] == 0xABCDEF
    assert (val[:, 3:] == 0x4242).all() and (idx[:, 3:] == 0xABCDEF).all()


def test_topk_views_and_ranks():
    """src rank 4 (3 free dims) and a strided column slice of a wider val/idx tile."""
    rng = np.random.default_rng(5)
    n, k = 700, 37
    bits = _random_bits(rng, (32, 4, 2, 6), "normal")            # 48 per partition >= 44
    src = _sbuf_bits(bits)
    big_v = nl.ndarray((32, 3, 40), nl.bfloat16, buffer=nl.sbuf)
    big_i = nl.ndarray((32, 3, 40), nl.uint32, buffer=nl.sbuf)
    big_v.data.view(np.uint16)[...] = 0x1111
    big_i.data[...] = 7
    val, idx = big_v[:, 1, 2:39], big_i[:, 1, 1:38]               # [32, 37], non-contiguous
    nisa.topk(val_dst=val, idx_dst=idx, src=src, n=n, sorted=True)
    exp_v, exp_i = ref.nki_topk(bits.reshape(32, -1), n, k, np.full((32, k), 0x1111, np.uint16),
                                np.full((32, k), 7, np.uint32))
    assert np.array_equal(val.data.view(np.uint16), exp_v)
    assert np.array_equal(idx.data, exp_i)
    assert (big_v.data.view(np.uint16)[:, [0, 2]] == 0x1111).all()
    assert (big_v.data.view(np.uint16)[:, 1, :2] == 0x1111).all()
    assert (big_i.data[:, 1, 38:] == 7).all()
    # a 3-D [P, 2, 8] val_dst: k = 16
    v3 = nl.ndarray((32, 2, 8), nl.bfloat16, buffer=nl.sbuf)
    i3 = nl.ndarray((32, 16), nl.uint32, buffer=nl.sbuf)
    nisa.topk(val_dst=v3, idx_dst=i3, src=src, n=n, sorted=True)
    exp_v, exp_i = ref.nki_topk(bits.reshape(32, -1), n, 16, np.full((32, 16), 0x7FC0, np.uint16),
                                np.full((32, 16), 4, np.uint32))
    assert np.array_equal(v3.data.view(np.uint16).reshape(32, 16)[:, 0], exp_v[:, 0])
    assert np.array_equal(i3.data[:, 0], exp_i[:, 0])


@pytest.mark.parametrize("k, sorted_", [(5, False), (5, True), (64, False), (64, True),
                                        (1024, False), (1024, True), (9000, False)])
def test_topk_thread_count_does_not_change_results(k, sorted_):
    rng = np.random.default_rng(k)
    n = 65535
    bits = _random_bits(rng, (128, 4096), "ties" if k == 1024 else "normal")
    outs = []
    for threads in (1, 2, 3, 8, 0, 0):    # 0: the automatic count (load now and on average)
        v = np.full((128, k), 0x5555, np.uint16)
        i = np.full((128, k), 9, np.uint32)
        status = ksel.topk_bf16(bits, n, sorted_, v, i, threads)
        assert status == 0
        outs.append((v, i))
    for v, i in outs[1:]:
        assert np.array_equal(v, outs[0][0]) and np.array_equal(i, outs[0][1])


def test_topk_nan_warns():
    bits = np.zeros((16, 4), np.uint16)
    bits[3, 1] = 0x7FC0
    with pytest.warns(RuntimeWarning, match="NaN"):
        _run_topk(bits, 64, 8, True)
    bits[3, 1] = 0
    bits[3, 3] = 0x7FC0      # element 51 >= n = 50: ignored, no warning
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        _run_topk(bits, 50, 8, True)


def test_topk_cost():
    bits = np.zeros((128, 64), np.uint16)
    with cost.profiling() as p:
        _run_topk(bits, 1000, 64, False)
    assert p.totals() == {"GpSimd": 4 * 1000 + 64}


# ---- constraint errors -----------------------------------------------------------------
def _tiles(P=16, cols=8, k=8, src_dtype=nl.bfloat16, val_dtype=nl.bfloat16, idx_dtype=nl.uint32,
           src_buf=nl.sbuf, val_buf=nl.sbuf, idx_buf=nl.sbuf):
    src = nl.ndarray((P, cols), src_dtype, buffer=src_buf)
    val = nl.ndarray((P, k), val_dtype, buffer=val_buf)
    idx = nl.ndarray((P, k), idx_dtype, buffer=idx_buf)
    return val, idx, src


@pytest.mark.parametrize("kw, n, sorted_, match", [
    (dict(), 7, False, r"topk: n must satisfy 8 <= n < 65536, got 7"),
    (dict(cols=4096), 65536, False, r"n must satisfy 8 <= n < 65536, got 65536"),
    (dict(k=20), 16, False, r"k \(val_dst free size\) must be <= n \(16\), got 20"),
    (dict(P=24), 64, False, r"partition dimension must be a positive multiple of 16, got 24"),
    (dict(cols=3), 64, False, r"src free size must be >= ceil\(n/16\) = 4, got 3"),
    (dict(src_dtype=nl.float32), 64, False, r"src dtype must be bfloat16, got float32"),
    (dict(val_dtype=nl.float16), 64, False, r"val_dst dtype must be bfloat16, got float16"),
    (dict(idx_dtype=nl.int32), 64, False, r"idx_dst dtype must be uint32, got int32"),
    (dict(src_buf=nl.psum), 64, False, r"src must be in sbuf, got psum"),
    (dict(val_buf=nl.hbm), 64, False, r"val_dst must be in sbuf, got private_hbm"),
    (dict(idx_buf=nl.shared_hbm), 64, False, r"idx_dst must be in sbuf, got shared_hbm"),
    (dict(cols=1100, k=8193), 17000, True, r"must be <= 8192 when sorted=True, got 8193"),
    (dict(cols=1100, k=16385), 17000, False, r"must satisfy 1 <= k <= 16384, got 16385"),
])
def test_topk_constraints(kw, n, sorted_, match):
    val, idx, src = _tiles(**kw)
    with pytest.raises(ConstraintError, match=match):
        nisa.topk(val_dst=val, idx_dst=idx, src=src, n=n, sorted=sorted_)


def test_topk_more_constraints():
    val, idx, src = _tiles()
    with pytest.raises(ConstraintError, match="n must be an integer"):
        nisa.topk(val, idx, src, 64.0)
    with pytest.raises(ConstraintError, match="sorted must be a bool"):
        nisa.topk(val, idx, src, 64, sorted="yes")
    idx2 = nl.ndarray((16, 9), nl.uint32)
    with pytest.raises(ConstraintError, match="idx_dst must have the same free size k"):
        nisa.topk(val, idx2, src, 64)
    val32 = nl.ndarray((32, 8), nl.bfloat16)
    with pytest.raises(ConstraintError, match="same partition dimension"):
        nisa.topk(val32, idx, src, 64)
    src5 = nl.ndarray((16, 2, 2, 2, 2), nl.bfloat16)
    with pytest.raises(ConstraintError, match="src must have rank <= 4"):
        nisa.topk(val, idx, src5, 8)
    v4 = nl.ndarray((16, 2, 2, 2), nl.bfloat16)
    with pytest.raises(ConstraintError, match="val_dst must have rank <= 3"):
        nisa.topk(v4, idx, src, 64)
    with pytest.raises(ConstraintError, match="src must be an NkiTensor"):
        nisa.topk(val, idx, np.zeros((16, 8)), 64)
    big = nl.ndarray((16, 16), nl.bfloat16)
    with pytest.raises(OverlapError, match="val_dst must not overlap src"):
        nisa.topk(big[:, 8:], idx, big, 64)
    with pytest.raises(ConstraintError, match="positive multiple of 16, got 0"):
        nisa.topk(val[0:0], idx[0:0], src[0:0], 64)
    with pytest.raises(ConstraintError, match="at least one partition"):
        nisa.max8(nl.ndarray((4, 8), nl.float32)[0:0], nl.ndarray((4, 16), nl.float32)[0:0])
    # nothing was written by the failed calls
    assert np.isnan(val.data.astype(np.float32)).all() and (idx.data == 4).all()


# ---- max8 family -------------------------------------------------------------------------
def _tile_from(values, dtype, buffer=nl.sbuf):
    fmt = nl.float32 if dtype is None else dtype
    t = nl.ndarray(values.shape, fmt, buffer=buffer)
    t.data[...] = values.astype(fmt.np_dtype)
    return t


@settings(max_examples=30)
@given(P=st.integers(1, 16), N=st.integers(8, 200), dtype=st.sampled_from(
    [nl.float32, nl.bfloat16, nl.float16, nl.int32, nl.uint8, nl.float8_e4m3fn]),
    ties=st.booleans(), seed=st.integers(0, 2**32 - 1))
def test_max8_matches_oracle(P, N, dtype, ties, seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(-3, 4, (P, N)) if ties else rng.standard_normal((P, N)) * 50
    if dtype.name == "uint8":
        x = np.abs(x)
    src = _tile_from(x, dtype)
    dst = nl.ndarray((P, 8), dtype)
    with cost.profiling() as prof:
        nisa.max8(dst=dst, src=src)
    rows = src.data.astype(np.float32)
    ev, ei = ref.nki_max8(rows)
    exp = np.take_along_axis(src.data, ei.astype(np.intp), axis=1)
    assert np.array_equal(dst.data.view(np.uint8), exp.view(np.uint8))
    assert prof.totals() == {"Vector": N}


def test_max8_nan_and_zero_and_cast():
    x = np.array([[1.0, np.nan, -0.0, 0.0, 5.0, -np.inf, np.inf, 2.0, 3.0, -7.0]], np.float32)
    src = _tile_from(x, nl.float32)
    dst = nl.ndarray((1, 8), nl.bfloat16)
    nisa.max8(dst, src)
    got = dst.data.astype(np.float32)
    assert np.isnan(got[0, 0])
    assert list(got[0, 1:]) == [np.inf, 5.0, 3.0, 2.0, 1.0, 0.0, 0.0]
    assert np.signbit(got[0, 6]) and not np.signbit(got[0, 7])   # -0 (index 2) before +0


def test_max8_constraints():
    src = nl.ndarray((4, 7), nl.float32)
    with pytest.raises(ConstraintError, match=r"max8: src must have 8 to 16384 elements per "
                                              r"partition, got 7"):
        nisa.max8(nl.ndarray((4, 8), nl.float32), src)
    with pytest.raises(ConstraintError, match="max8: dst must have 8 to 8 elements"):
        nisa.max8(nl.ndarray((4, 9), nl.float32), nl.ndarray((4, 16), nl.float32))
    with pytest.raises(ConstraintError, match="src must be in psum or sbuf, got private_hbm"):
        nisa.max8(nl.ndarray((4, 8), nl.float32), nl.ndarray((4, 16), nl.float32, buffer=nl.hbm))
    with pytest.raises(ConstraintError, match="same partition dimension"):
        nisa.max8(nl.ndarray((5, 8), nl.float32), nl.ndarray((4, 16), nl.float32))


def test_find_index8_doc_rules():
    data = np.array([[1, 2, 3, 4, 8, 8, 8, 8, 8, 8, 8]], np.float32)
    vals = np.array([[3, 8, 8, 8, 8, 8, 8, 8]], np.float32)
    dst = nl.ndarray((1, 8), nl.uint32)
    nisa.nc_find_index8(dst, _tile_from(data, nl.float32), _tile_from(vals, nl.float32))
    assert list(dst.data[0]) == [2, 4, 5, 6, 7, 8, 9, 10]   # successive occurrences, ascending
    vals = np.array([[3, 9, 8, 8, -0.0, np.nan, 1, 2]], np.float32)
    data[0, 0] = 0.0
    d16 = nl.ndarray((1, 8), nl.uint16)
    with cost.profiling() as p:
        nisa.nc_find_index8(d16, _tile_from(data, nl.float32), _tile_from(vals, nl.float32))
    assert list(d16.data[0]) == [2, 0xFFFF, 4, 5, 0, 0xFFFF, 0xFFFF, 1]
    assert p.totals() == {"Vector": 11}


@settings(max_examples=30)
@given(P=st.integers(1, 8), N=st.integers(8, 64), dup=st.booleans(),
       dtype=st.sampled_from([nl.float32, nl.bfloat16, nl.int16]), seed=st.integers(0, 2**32 - 1))
def test_find_index8_matches_oracle(P, N, dup, dtype, seed):
    rng = np.random.default_rng(seed)
    data = rng.integers(-4, 5, (P, N)).astype(np.float32)
    vals = rng.integers(-6, 7, (P, 8)).astype(np.float32)
    if dup:
        vals[:, 4:] = vals[:, :1]
    dst = nl.ndarray((P, 8), nl.uint32)
    dt, vt = _tile_from(data, dtype), _tile_from(vals, dtype)
    nisa.nc_find_index8(dst, dt, vt)
    assert np.array_equal(dst.data, ref.nki_find_index8(dt.data.astype(np.float32),
                                                        vt.data.astype(np.float32)))


def test_match_replace8_doc_example():
    data = np.array([[1, 2, 3, 4, 8, 8, 8, 8, 8, 8, 8]], np.float32)
    vals = np.array([[3, 8, 8, 8, 8, 8, 8, 8]], np.float32)
    d = _tile_from(data, nl.float32)
    idx = nl.ndarray((1, 8), nl.uint32)
    with cost.profiling() as p:
        nisa.nc_match_replace8(dst=d, data=d, vals=_tile_from(vals, nl.float32), imm=-np.inf,
                               dst_idx=idx)
    assert list(idx.data[0]) == [2, 10, 9, 8, 7, 6, 5, 4]
    assert list(d.data[0]) == [1, 2, -np.inf, 4] + [-np.inf] * 7
    assert p.totals() == {"Vector": 64}


@settings(max_examples=30)
@given(P=st.integers(1, 8), N=st.integers(8, 64), imm=st.sampled_from([0.0, -np.inf, 3.0, 1e30]),
       dtype=st.sampled_from([nl.float32, nl.bfloat16, nl.float16, nl.int8]),
       dst_dtype=st.sampled_from([None, nl.float32, nl.bfloat16]), seed=st.integers(0, 2**32 - 1))
def test_match_replace8_matches_oracle(P, N, imm, dtype, dst_dtype, seed):
    rng = np.random.default_rng(seed)
    data = rng.integers(-4, 5, (P, N)).astype(np.float32)
    vals = rng.integers(-5, 6, (P, 8)).astype(np.float32)
    dt, vt = _tile_from(data, dtype), _tile_from(vals, dtype)
    dst_fmt = dtype if dst_dtype is None else dst_dtype
    if dst_fmt.kind == "int" and not np.isfinite(imm):
        imm = 3.0
    dst = nl.ndarray((P, N), dst_fmt)
    idx = nl.ndarray((P, 8), nl.uint32)
    nisa.nc_match_replace8(dst, dt, vt, imm, dst_idx=idx)
    work, eidx = ref.nki_match_replace8(dt.data.astype(np.float32), vt.data.astype(np.float32), imm)
    assert np.array_equal(idx.data, eidx)
    if dst_fmt is dtype:
        exp = dt.data.copy()
        hit = eidx != 0xFFFFFFFF
        exp[np.nonzero(hit)[0], eidx[hit].astype(np.intp)] = ref.nki_f32_to(
            np.array([imm], np.float32), dtype.np_dtype)[0]
    else:
        exp = ref.nki_f32_to(work, dst_fmt.np_dtype)
    assert np.array_equal(dst.data.view(np.uint8), exp.view(np.uint8))


def test_match_replace8_constraints():
    d = nl.ndarray((2, 16), nl.float32)
    v = nl.ndarray((2, 8), nl.float32)
    with pytest.raises(ConstraintError, match="imm must be a float constant"):
        nisa.nc_match_replace8(d, d, v, imm="x")
    with pytest.raises(ConstraintError, match="dst_idx dtype must be uint16 or uint32, got int32"):
        nisa.nc_match_replace8(d, d, v, 0.0, dst_idx=nl.ndarray((2, 8), nl.int32))
    with pytest.raises(ConstraintError, match="dst must have 16 to 16 elements"):
        nisa.nc_match_replace8(nl.ndarray((2, 8), nl.float32), d, v, 0.0)
    with pytest.raises(ConstraintError, match="vals must have 8 to 8 elements"):
        nisa.nc_match_replace8(d, d, nl.ndarray((2, 4), nl.float32), 0.0)
    with pytest.raises(ConstraintError, match="nc_find_index8: dst dtype must be uint16 or uint32"):
        nisa.nc_find_index8(nl.ndarray((2, 8), nl.float32), d, v)
    data = nl.ndarray((2, 16), nl.float32)
    with pytest.raises(OverlapError, match="dst_idx must not overlap dst"):
        nisa.nc_match_replace8(d, data, v, 0.0, dst_idx=d.view(nl.uint32)[:, 8:])


def test_tensor_is_the_contract():
    t = nl.ndarray((16, 4), nl.bfloat16)
    assert isinstance(t, NkiTensor) and t.data.dtype == BF16


def test_topk_threads_setting_does_not_change_results(monkeypatch):
    rng = np.random.default_rng(11)
    bits = _random_bits(rng, (128, 700), "ties")
    outs = []
    for threads in (1, 2, 4):
        monkeypatch.setattr(nisa, "TOPK_THREADS", threads)
        outs.append(_run_topk(bits, 11111, 333, False))
    for v, i in outs[1:]:
        assert np.array_equal(v, outs[0][0]) and np.array_equal(i, outs[0][1])


# ---- speed15 branch: topk names its operands to the cost record ---------------------------
def test_topk_record_names_the_operands_the_frame_inference_gave():
    """topk passes its operands to cost.record instead of letting the record read its frame:
    the profile's pending entry holds the same byte spans, in the same order, as the
    inference from its parameters (fastisa.schedule.infer_operands)."""
    from fastisa import schedule
    from fastisa.nki import isa as nisa
    from fastisa.nki import language as nl
    src = nl.ndarray((16, 64), nl.bfloat16, buffer=nl.sbuf)
    src.data[...] = np.arange(16 * 64).reshape(16, 64).astype(np.float32).astype(
        ml_dtypes.bfloat16)
    val = nl.ndarray((16, 8), nl.bfloat16, buffer=nl.sbuf)
    idx = nl.ndarray((16, 8), nl.uint32, buffer=nl.sbuf)
    with cost.profiling() as prof:
        nisa.topk(val_dst=val, idx_dst=idx, src=src, n=1000, sorted=True)
    ent = prof._pending[-1]
    want = [schedule.span_of(t) for t in (val, idx, src)]
    assert ent[1] == "topk" and ent[5] == want and ent[6] == []
    assert len(prof.events) == 1 and prof.events[0].engine == "GpSimd"
