"""Issue 12 (reliability), PTO: TTRANS in place, TLOAD checks before writes, raw errors."""
from __future__ import annotations

import threading

import numpy as np
import pytest

from fastisa import errors, pto

V = pto.TileType.Vec


def test_ttrans_in_place_is_the_transpose():
    t = pto.Tile(V, np.float32, 16, 16)
    a = np.arange(256, dtype=np.float32).reshape(16, 16)
    t.data[...] = a
    pto.TTRANS(t, t)
    np.testing.assert_array_equal(t.data, a.T)


def test_ttrans_through_two_tassigned_tiles_matches_in_place():
    pto.set_target("A2A3")
    x, y = pto.Tile(V, np.float32, 16, 16), pto.Tile(V, np.float32, 16, 16)
    pto.TASSIGN(x, 0x2000)
    pto.TASSIGN(y, 0x2000)
    a = np.random.default_rng(1).standard_normal((16, 16)).astype(np.float32)
    x.data[...] = a
    pto.TTRANS(y, x)
    np.testing.assert_array_equal(y.data, a.T)


def test_tload_huge_stride_fails_before_writing():
    t = pto.Tile(V, np.float32, 1, 8, pad=pto.PadValue.Max)
    t.data[...] = 7.0
    g = np.zeros(64, np.float32)
    with pytest.raises(errors.ConstraintError, match="GlobalTensor: strides must be < 2"):
        gt = pto.GlobalTensor(g, shape=(1, 1, 1, 1, 8), strides=(2**62, 1, 1, 1, 1))
        pto.TLOAD(t, gt)
    np.testing.assert_array_equal(t.data, 7.0)   # not the pad value: nothing written


def test_set_num_threads_rejects_non_integers():
    old = pto.get_num_threads()
    for bad in ("x", 2.5, None, True, 0, 10**6):
        with pytest.raises(errors.ConstraintError, match="set_num_threads: n must be"):
            pto.set_num_threads(bad)
    assert pto.get_num_threads() == old


def test_absurd_tile_is_a_constraint_error_not_memory_error():
    with pytest.raises(errors.ConstraintError, match="Tile: rows . cols . sizeof.T. must be "
                       "<= MAX_TILE_BYTES"):
        pto.Tile(V, np.float32, 100000, 100000)


def test_pto_four_threads_bit_identical_to_one():
    rng = np.random.default_rng(5)
    xs = [rng.standard_normal((64, 256)).astype(np.float32) for _ in range(8)]

    def run(x):
        a, b = pto.Tile(V, np.float32, 64, 256), pto.Tile(V, np.float32, 64, 256)
        pto.TLOAD(a, pto.GlobalTensor(x))
        pto.TEXP(b, a)
        pto.TADD(b, b, a)
        pto.TMULS(b, b, 0.75)
        return b.data.view(np.uint32).copy()
    serial = [run(x) for x in xs]
    out = [None] * len(xs)

    def work(k0):
        for k in range(k0, len(xs), 4):
            out[k] = run(xs[k])
    th = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in th:
        t.start()
    for t in th:
        t.join()
    for a, b in zip(out, serial):
        np.testing.assert_array_equal(a, b)
