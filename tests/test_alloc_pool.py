"""Recycled storage of new NKI tensors (fastisa._kernels.pool, issue 15): a freed tensor's
memory is reused for the next tensor of the same byte size, and the new tensor still holds
the documented fill (NaN / 4) in every element, never the old contents; memory still viewed
by a live array is never reused."""

from __future__ import annotations

import gc

import ml_dtypes
import numpy as np
import pytest

from fastisa._kernels import pool
from fastisa.nki import language as nl


def _addr(a):
    return a.__array_interface__["data"][0]


@pytest.fixture
def recycling():
    old = pool.set_capacity(256 << 20)
    gc.collect()                         # no other tensor freed in the middle of a test
    pool.release()
    yield
    pool.set_capacity(old)


@pytest.mark.parametrize("dtype, want", [
    (nl.float32, np.full(1, np.nan, np.float32).view(np.uint32)[0]),
    (nl.bfloat16, np.full(1, np.nan, ml_dtypes.bfloat16).view(np.uint16)[0]),
    (nl.int32, 4), (nl.uint8, 4)])
def test_recycled_storage_is_refilled(recycling, dtype, want):
    shape = (128, 1024)
    t = nl.ndarray(shape, dtype=dtype, buffer=nl.sbuf)
    raw = t.data.view(f"u{t.data.itemsize}")
    raw[...] = 0x5A                      # garbage the next tensor must not see
    where = _addr(t.data)
    del t, raw
    assert pool.pooled()[1] == 1
    u = nl.ndarray(shape, dtype=dtype, buffer=nl.sbuf)
    assert _addr(u.data) == where        # the same (already paged-in) memory
    assert (u.data.view(f"u{u.data.itemsize}") == want).all()
    assert u.data.base is None or isinstance(u.data.base, np.ndarray)


def test_viewed_storage_is_not_reused(recycling):
    t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
    t.data[...] = 7.0
    view = t.data[3:5, 10:20]            # keeps the storage alive
    where = _addr(t.data)
    del t
    u = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
    assert _addr(u.data) != where
    assert (view == 7.0).all()
    del view                             # now it is freed and reused
    w = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
    assert _addr(w.data) == where and np.isnan(w.data).all()
    del u, w


def test_capacity_zero_and_small_tensors_bypass_the_pool(recycling):
    t = nl.ndarray((128, 8), dtype=nl.float32, buffer=nl.sbuf)       # 4 KiB: numpy's own
    del t
    assert pool.pooled() == (0, 0)
    pool.set_capacity(0)
    t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
    del t
    assert pool.pooled() == (0, 0)
    pool.set_capacity(1 << 20)
    ts = [nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.sbuf) for _ in range(3)]
    del ts                               # 3 x 512 KiB: only two fit 1 MiB
    assert pool.pooled() == (1 << 20, 2)
    pool.release()
    assert pool.pooled() == (0, 0)


def test_sbuf_accounting_unchanged_by_recycling(recycling):
    before = nl.sbuf_usage()
    t = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.sbuf)
    assert nl.sbuf_usage() == before + 4096
    del t
    assert nl.sbuf_usage() == before
    u = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.sbuf)
    assert nl.sbuf_usage() == before + 4096
    del u


@pytest.mark.parametrize("dtype", [nl.float32, nl.bfloat16, nl.int32, nl.uint8])
def test_simulate_results_are_independent_copies(recycling, dtype):
    """nki.simulate's returned arrays (large ones copied into pooled memory) hold the
    kernel's bits, are C-contiguous, and share no memory with the kernel's tensors or with
    each other; calling again gives new arrays and leaves the first results intact."""
    from fastisa import nki

    @nki.jit
    def kern(x):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
        nki.isa.dma_copy(dst=t, src=x)
        nki.isa.dma_copy(dst=out, src=t)
        return out, out

    np_dt = dtype.np_dtype
    x = (np.arange(128 * 1024) % 251).reshape(128, 1024).astype(np.float32).astype(np_dt)
    a, b = nki.simulate(kern)(x)
    assert a.view(np.uint8).tobytes() == x.view(np.uint8).tobytes()
    assert a.flags.c_contiguous and not np.shares_memory(a, b) and not np.shares_memory(a, x)
    keep = a.copy()
    c, _ = nki.simulate(kern)(x + np_dt.type(1) if dtype is not nl.uint8 else x)
    assert not np.shares_memory(a, c)
    assert a.view(np.uint8).tobytes() == keep.view(np.uint8).tobytes()
    if np.dtype(np_dt).kind != "V":
        assert a.flags.owndata


# ---- speed15b branch: blocks freed still holding their fill are reused without a refill ----
def _bits(t):
    return t.data.view(f"u{t.data.itemsize}")


def test_clean_block_reused_without_refill_and_written_ones_refilled(recycling):
    """A block freed still holding the fill is handed back as it is (the pool checks it
    byte for byte when numpy frees it); one written anywhere -- first byte, last byte, one
    byte in the middle -- is filled again over its dirty range (the 4 KiB chunks from the
    first that differs to the last); the new tensor holds the fill in every element either
    way."""
    shape = (128, 4096)
    want = int(np.full(1, np.nan, ml_dtypes.bfloat16).view(np.uint16)[0])
    t = nl.ndarray(shape, dtype=nl.bfloat16, buffer=nl.sbuf)
    where = _addr(t.data)
    del t
    for pos in (None, 0, 1, 524287, 2 * 4096 * 128 - 1, 333333):
        t = nl.ndarray(shape, dtype=nl.bfloat16, buffer=nl.sbuf)
        assert _addr(t.data) == where
        assert (_bits(t) == want).all()
        if pos is not None:
            t.data.view(np.uint8).reshape(-1)[pos] ^= 0x01     # one bit of one byte
        del t
    t = nl.ndarray(shape, dtype=nl.bfloat16, buffer=nl.sbuf)
    assert (_bits(t) == want).all()


def test_clean_blocks_of_other_fills_are_refilled(recycling):
    """The same byte size in formats with other fills (bf16 NaN 0x7FC0, float32 NaN,
    int16 / uint8 4): each new tensor holds its own fill, whatever the block held."""
    cases = [((128, 2048), nl.float32), ((128, 4096), nl.bfloat16), ((128, 4096), nl.int16),
             ((128, 8192), nl.uint8), ((128, 4096), nl.bfloat16), ((128, 2048), nl.float32)]
    for rnd in range(2):
        for shape, dt in cases:
            t = nl.ndarray(shape, dtype=dt, buffer=nl.sbuf)
            ref = np.full(shape, np.nan if dt in (nl.float32, nl.bfloat16) else 4,
                          t.data.dtype)
            assert t.data.view(np.uint8).tobytes() == ref.view(np.uint8).tobytes()
            del t


def test_filled_odd_sizes_and_tails(recycling):
    """pool.filled on byte sizes that are not multiples of 8 or of the 4 KiB check block."""
    for n in (65536 + 1, 65536 + 7, 65536 + 4095, 3 * 65536 + 13):
        for rnd in range(3):
            a = pool.filled((n,), np.uint8, 0x7F7F7F7F7F7F7F7F)
            assert (a == 0x7F).all()
            if rnd == 1:
                a[-1] = 0
            del a
    for rnd in range(3):
        b = pool.filled((65536 + 3,), np.uint16, 0x0004000400040004)
        assert (b == 4).all()
        if rnd == 0:
            b[-1] = 5
        del b


def test_plain_empty_never_keeps_a_stale_clean_mark(recycling):
    """A clean block taken by pool.empty (whose caller overwrites it) is not handed to
    filled() again unchecked: filled() fills it (or the check at free rejects it)."""
    pat = 0x7FC07FC07FC07FC0
    a = pool.filled((128, 4096), np.uint16, pat)
    del a                                   # clean
    e = pool.empty((128, 4096), np.uint16)  # takes the clean block
    e[5, 5] = 1
    del e
    b = pool.filled((128, 4096), np.uint16, pat)
    assert (b == 0x7FC0).all()
    e = pool.empty((128, 4096), np.uint16)
    del b
    e[...] = 0x7FC0                         # written by hand to the very pattern
    del e
    c = pool.filled((128, 4096), np.uint16, pat)
    assert (c == 0x7FC0).all()


def test_dirty_range_spans_every_written_chunk(recycling):
    """Bytes written in several distant chunks (and the chunks between them, untouched)
    all hold the fill again in the next tensor of that block."""
    shape = (128, 4096)
    want = int(np.full(1, np.nan, ml_dtypes.bfloat16).view(np.uint16)[0])
    for spots in [(5, 900000), (4095, 4096), (0, 1048575), (70000, 70001, 700000)]:
        t = nl.ndarray(shape, dtype=nl.bfloat16, buffer=nl.sbuf)
        for pos in spots:
            t.data.view(np.uint8).reshape(-1)[pos] ^= 0x80
        del t
        t = nl.ndarray(shape, dtype=nl.bfloat16, buffer=nl.sbuf)
        assert (_bits(t) == want).all()
        del t


@pytest.mark.parametrize("threads", [1, 2, 3, 0])
def test_threaded_fill_of_large_and_odd_sizes(recycling, threads):
    """pool.filled with the worker pool: pieces on 64-byte boundaries, any size from the
    256 KiB threshold on, fresh and recycled blocks, refilled dirty ranges."""
    for n in (1 << 18, (1 << 18) + 1, (1 << 18) + 63, 3 * (1 << 18) + 4097, 1 << 21):
        for rnd in range(3):
            a = pool.filled((n,), np.uint8, 0x7F7F7F7F7F7F7F7F, threads)
            assert (a == 0x7F).all()
            if rnd == 1:
                a[n // 3] = 0
                a[-1] = 1
            del a
        b = pool.filled((n // 2,), np.uint16, 0x0004000400040004, threads)
        assert (b == 4).all()
