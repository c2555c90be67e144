"""On-chip views stay at least 2-D (SDK 2.33 nki/get-started/nki-language-guide.rst, "The
partition dimension is special"): a kernel of our own in the pattern of nki-library's
1-row kernels -- a [1, T] HBM row loaded into partition 0 of a [128, T] tile with
``t[0, :]``, T > 128, processed and stored back from ``t[0, :]``."""

import numpy as np

from fastisa import nki
from fastisa.nki import isa as nisa, language as nl


@nki.jit
def _row_plus_one(x):
    T = x.shape[-1]
    sb = nl.ndarray((128, T), dtype=x.dtype, buffer=nl.sbuf)
    res = nl.ndarray((128, T), dtype=x.dtype, buffer=nl.sbuf)
    out = nl.ndarray((1, T), dtype=x.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(src=x[...], dst=sb[0, :])              # (1, T): partition 0, not T partitions
    nisa.tensor_scalar(dst=res[0, :], data=sb[0, :], op0=nl.add, operand0=1.0)
    nisa.dma_copy(src=res[0, :], dst=out[0, :])
    return out


def test_row_of_a_tile_is_one_partition():
    x = np.arange(1000, dtype=np.float32).reshape(1, 1000)
    assert np.array_equal(nki.simulate(_row_plus_one)(x), x + 1)


@nki.jit
def _column_sum(x):
    P, F = x.shape
    sb = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=sb, src=x)
    col = nl.ndarray((P, 1), dtype=x.dtype, buffer=nl.sbuf)
    nisa.tensor_copy(dst=col, src=sb[:, 0])              # (P, 1), not a 1-D (P,)
    nisa.tensor_tensor(dst=col, data1=col, data2=sb[:, F - 1], op=nl.add)
    out = nl.ndarray((P, 1), dtype=x.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=col)
    return out


def test_column_of_a_tile_keeps_its_free_dim():
    x = np.arange(128 * 6, dtype=np.float32).reshape(128, 6)
    assert np.array_equal(nki.simulate(_column_sum)(x), x[:, :1] + x[:, 5:])


def test_legacy_par_dim_blocks_index_the_block_dim():
    """Beta 1 block tensors ``(n, par_dim(128), F)``: ``t[i]`` is block i, a (128, F) tile
    (its own views then follow the >= 2-D rule)."""
    t = nl.ndarray((4, nl.par_dim(128), 64), dtype=nl.float32, buffer=nl.sbuf)
    t.data[...] = np.arange(4 * 128 * 64, dtype=np.float32).reshape(4, 128, 64)
    b = t[2]
    assert b.shape == (128, 64) and np.shares_memory(b.data, t.data)
    assert b[0].shape == (1, 64) and b[0].data[0, 3] == t.data[2, 0, 3]
