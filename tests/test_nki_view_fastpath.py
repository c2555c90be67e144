"""NkiTensor indexing's direct-view path (issue 15, speed15 branch: on-chip keys with
integers on free dims) gives exactly the general path's view: the same shape, strides,
memory and tensor attributes, for every key form the fast path takes, and the general path
still handles (and raises for) everything else."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from fastisa.errors import AccessError
from fastisa.nki import language as nl
from fastisa.nki.tensor import NkiTensor


def _same_view(a: NkiTensor, b: NkiTensor):
    assert type(a) is type(b)
    assert a.data.shape == b.data.shape
    assert a.data.strides == b.data.strides
    assert a.data.__array_interface__["data"][0] == b.data.__array_interface__["data"][0]
    assert a.dtype is b.dtype and a.buffer is b.buffer and a.name == b.name
    assert np.shares_memory(a.data, b.data) or a.data.size == 0


def _keys(shape):
    """Every combination, per axis, of a full slice, a partial slice, open bounds, an
    integer, a negative integer, and a shorter key."""
    per_axis = []
    for d in shape:
        per_axis.append([slice(None), slice(1, d - 1), slice(0, d, 1), slice(2, None), 0,
                         d - 1, -1, slice(None, 3, 2)])
    for n in range(1, len(shape) + 1):
        yield from itertools.product(*per_axis[:n])


@pytest.mark.parametrize("shape", [(128, 8), (16, 4, 6), (8, 3, 5, 7)])
@pytest.mark.parametrize("buffer", [nl.sbuf, nl.psum, nl.shared_hbm])
def test_direct_views_equal_the_general_path(shape, buffer):
    t = NkiTensor(np.arange(np.prod(shape), dtype=np.float32).reshape(shape), "float32",
                  buffer, name="t")
    n = 0
    for key in _keys(shape):
        want = t._getitem(key)
        got = t[key]
        _same_view(got, want)
        n += 1
    assert n > 50


@pytest.mark.parametrize("key", [(slice(None), 8), (slice(None), 2, 9), (slice(0, 129), 0),
                                 (slice(None), -7, 0)])
def test_out_of_range_keys_still_raise(key):
    t = NkiTensor(np.zeros((16, 4, 6), np.float32), "float32", nl.sbuf, name="t")
    with pytest.raises((AccessError, IndexError)):
        t[key].data.sum()


def test_tutorial_block_slices_are_views():
    """The fully optimised matmul tutorial's operand slices: ``a[0:128, kt, m0:m1]`` of a
    [128, 8, 2048] SBUF block is a strided view (writes go through)."""
    a = nl.ndarray((128, 8, 2048), dtype=nl.bfloat16, buffer=nl.sbuf)
    v = a[0:128, 3, 256:384]
    assert v.shape == (128, 128)
    v.data[...] = 0
    assert (a.data[:, 3, 256:384].astype(np.float32) == 0).all()
    assert np.isnan(a.data[:, 2, :].astype(np.float32)).all()
