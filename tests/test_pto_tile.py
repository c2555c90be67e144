"""Tiles, valid regions, GlobalTensor, TLOAD/TSTORE/TASSIGN (reference/pto.md 1.1-1.5)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from fastisa import pto
from pto_helpers import CM, RM, V, assert_bits, tile


@pytest.fixture(autouse=True)
def _default_target():
    pto.set_target("A2A3")
    yield
    pto.set_target("A2A3")


def test_tile_views_row_and_col_major():
    t = pto.Tile(V, "float32", 4, 8)
    t.data[...] = np.arange(32).reshape(4, 8)
    assert np.array_equal(t.buffer, np.arange(32))          # r * cols + c
    c = pto.Tile(V, "float32", 8, 4, blayout=CM)
    c.data[...] = np.arange(32).reshape(8, 4)
    assert np.array_equal(c.buffer, np.arange(32).reshape(8, 4).T.reshape(-1))   # c * rows + r
    v = pto.Tile(V, "float16", 16, 16, valid_row=3, valid_col=5)
    assert v.valid.shape == (3, 5) and v.valid.base is not None
    v.valid[...] = 7
    assert v.data.sum() == 7 * 15


def test_tile_metadata():
    t = pto.Tile(pto.TileType.Vec, ml_dtypes.bfloat16, 16, 32, valid_row=pto.DYNAMIC, valid_col=9)
    assert t.dtype == np.dtype(ml_dtypes.bfloat16) and t.format.name == "bfloat16"
    assert t.is_dynamic == (True, False) and t.valid_shape == (16, 9)
    t.set_valid_row(4)
    assert t.GetValidRow() == 4 and t.GetValidCol() == 9
    assert "Tile<Vec, bfloat16, 16, 32" in repr(t)
    assert pto.Tile(pto.TileType.Mat, "float16", 32, 32, slayout=pto.SLayout.RowMajor).inner_shape == (16, 16)


@pytest.mark.parametrize("pad,want", [(pto.PadValue.Null, 0.0), (pto.PadValue.Zero, 0.0),
                                      (pto.PadValue.Max, np.inf), (pto.PadValue.Min, -np.inf)])
def test_tload_pads_whole_tile(pad, want, rng):
    gm = rng.standard_normal((5, 7)).astype(np.float32)
    t = pto.Tile(V, "float32", 8, 8, valid_row=5, valid_col=7, pad=pad)
    t.fill(123.0)
    pto.TLOAD(t, pto.GlobalTensor(gm))
    assert_bits(t.valid, gm)
    mask = np.ones((8, 8), bool)
    mask[:5, :7] = False
    assert (t.data[mask] == want).all()


def test_tload_pad_integers():
    t = pto.Tile(V, "int16", 16, 16, valid_row=1, valid_col=1, pad=pto.PadValue.Min)
    pto.TLOAD(t, pto.GlobalTensor(np.array([[5]], np.int16)))
    assert t.data[0, 0] == 5 and t.data[1, 1] == -32768


def test_tstore_writes_valid_region_only(rng):
    t = tile("float16", 16, 16, vr=3, vc=10, rng=rng)
    gm = np.full((6, 20), 9, np.float16)
    view = gm.reshape(-1)[2 * 20 + 4:]
    pto.TSTORE(pto.GlobalTensor(view, shape=(3, 10), strides=(20, 1)), t)
    want = np.full((6, 20), 9, np.float16)
    want[2:5, 4:14] = t.valid
    assert_bits(gm, want)


def test_global_tensor_5d_and_dn(rng):
    a = rng.standard_normal((2, 3, 8)).astype(np.float32)
    g = pto.GlobalTensor(a)                      # ND: rows = 2*3, cols = 8
    assert (g.rows, g.cols) == (6, 8)
    t = pto.Tile(V, "float32", 6, 8)
    pto.TLOAD(t, g)
    assert_bits(t.data, a.reshape(6, 8))
    # DN (column-major GM): a [16, 1] column stored as 16 contiguous elements
    col = rng.standard_normal(16).astype(np.float32)
    gd = pto.GlobalTensor(col, shape=(16, 1), strides=(1, 16), layout=pto.Layout.DN)
    v = pto.Tile(V, "float32", 16, 1, blayout=CM)
    pto.TLOAD(v, gd)
    assert_bits(v.data[:, 0], col)
    out = np.zeros(16, np.float32)
    pto.TSTORE(pto.GlobalTensor(out, shape=(16, 1), strides=(1, 16), layout=pto.Layout.DN), v)
    assert_bits(out, col)


def test_tassign_aliases_and_keeps_other_memory(rng):
    a = pto.Tile(V, "float32", 8, 8)
    b = pto.Tile(V, "float32", 8, 8)
    pto.TASSIGN(a, 0x1000)
    pto.TASSIGN(b, 0x1000)
    a.data[...] = 3.0
    assert (b.data == 3.0).all()
    c = pto.Tile(V, "float32", 8, 8)
    pto.TASSIGN(c, 0x1000 + 256)
    assert a.addr == 0x1000 and c.addr == 0x1100
    # an instruction whose dst overlaps a source only partly sees the source as it was
    src = a.data.copy()
    src_t = pto.Tile(V, "float32", 8, 8)
    src_t.data[...] = rng.standard_normal((8, 8)).astype(np.float32)
    pto.TADD(c, a, src_t)
    assert_bits(c.data, (src + src_t.data).astype(np.float32))


def test_targets():
    pto.set_target("A5")
    assert pto.get_target() == "A5"
    pto.set_target("a2a3")
    assert pto.get_target() == "A2A3"
    assert pto.BUFFER_BYTES["A2A3"]["UB"] == 192 * 1024
    assert pto.BUFFER_BYTES["A5"]["UB"] == 256 * 1024


def test_round_mode_names():
    assert pto.RoundMode.from_name("ROUND") is pto.RoundMode.CAST_ROUND
    assert pto.RoundMode.from_name("cast_rint") is pto.RoundMode.CAST_RINT


def test_pto_as_dtype_names():
    for name, want in [("f32", np.float32), ("f16", np.float16), ("bf16", ml_dtypes.bfloat16),
                       ("i32", np.int32), ("i16", np.int16), ("i8", np.int8), ("ui8", np.uint8)]:
        t = pto.Tile(V, name, 16, 32)
        assert t.dtype == np.dtype(want)
