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
