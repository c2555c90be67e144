"""TPACK, Tile.SetValue / Tile.GetValue (pto-isa conformance, branch ptogold): bit-exact
against the oracles in tests/reference.py over dtypes, layouts and valid regions, and the
constraint errors."""

from __future__ import annotations

import numpy as np
import pytest

import reference as ref
from fastisa import pto
from fastisa.errors import AccessError, ConstraintError
from pto_helpers import CM, RM, assert_bits, tile

PAIRS = [("int16", "int32"), ("int8", "int16"), ("uint8", "int16"), ("uint8", "uint32"),
         ("uint16", "int32"), ("int32", "int32"), ("float16", "float32"),
         ("bfloat16", "float32"), ("float32", "float16"), ("float32", "bfloat16"),
         ("float16", "float16")]


@pytest.mark.parametrize("sdt,ddt", PAIRS)
@pytest.mark.parametrize("lay", (RM, CM))
def test_tpack(sdt, ddt, lay):
    rng = np.random.default_rng(5)
    for (vr, vc) in ((32, 32), (5, 7), (1, 1)):
        s = tile(sdt, 32, 32, lay, vr, vc, rng)
        if np.dtype(s.dtype).kind == "f" or sdt == "bfloat16":
            s.data[...] = (rng.standard_normal((32, 32)) * 1e3).astype(s.dtype)
        d = tile(ddt, 32, 32, lay, vr, vc, rng)
        want = ref.ptox_pack(d.data, s.valid, d.dtype)
        pto.TPACK(d, s)
        assert_bits(d.data, want, f"TPACK {sdt}->{ddt} {vr}x{vc}")


def test_tpack_errors():
    s = tile("int32", 8, 8, RM)
    before = tile("int16", 8, 16, RM)
    with pytest.raises(ConstraintError, match="TPACK: dst.dtype must be int32, a wider"):
        pto.TPACK(before, s)                       # narrowing: undocumented
    with pytest.raises(ConstraintError, match="TPACK: dst.dtype"):
        pto.TPACK(tile("float32", 8, 8, RM), s)    # int -> float
    with pytest.raises(ConstraintError, match="TPACK: dst shape"):
        pto.TPACK(tile("int32", 4, 8, RM), s)
    with pytest.raises(ConstraintError, match="TPACK: dst.loc"):
        pto.TPACK(pto.Tile(pto.TileType.Mat, "int32", 8, 8), s)


@pytest.mark.parametrize("dtype,value", [("float32", 12.34), ("float16", 1.0 / 3),
                                         ("bfloat16", -7.3e5), ("int32", -123456),
                                         ("int16", 321), ("uint8", 255), ("int8", -128)])
def test_setvalue_getvalue(dtype, value):
    rng = np.random.default_rng(6)
    t = tile(dtype, 4, 64, RM, 3, 5, rng)
    want = ref.ptox_setvalue(t.buffer, 37, value)
    t.SetValue(37, value)
    assert_bits(t.buffer, want, "SetValue")
    v = t.GetValue(37)
    assert v.dtype == t.dtype and bits_eq(v, want[37])
    t.SetValue(200, v)                              # outside the valid region: storage offset
    assert_bits(t.buffer[200:201], want[37:38], "SetValue(GetValue)")


def bits_eq(a, b):
    return np.asarray(a).tobytes() == np.asarray(b).tobytes()


def test_setvalue_errors():
    t = tile("int16", 4, 16, RM)
    keep = t.buffer.copy()
    with pytest.raises(AccessError, match=r"Tile.SetValue: offset must be in \[0, 64\)"):
        t.SetValue(64, 1)
    with pytest.raises(AccessError, match="Tile.GetValue: offset"):
        t.GetValue(-1)
    with pytest.raises(ConstraintError, match="Tile.SetValue: value must be in"):
        t.SetValue(0, 40000)
    with pytest.raises(ConstraintError, match="Tile.SetValue: value must be an integer"):
        t.SetValue(0, 1.5)
    with pytest.raises(ConstraintError, match="Tile.SetValue: offset must be an integer"):
        t.SetValue(1.0, 1)
    with pytest.raises(ConstraintError, match="Tile.GetValue: tile.loc must be TileType.Vec"):
        pto.Tile(pto.TileType.Mat, "int16", 16, 16).GetValue(0)
    assert_bits(t.buffer, keep, "unchanged")


@pytest.mark.parametrize("dtype,pad", [("float32", pto.PadValueCustom(-1.0)),
                                       ("float16", pto.PadValueCustom16(0xBC00)),
                                       ("bfloat16", pto.PadValueCustom16(0xFF80)),
                                       ("int32", pto.PadValueCustom(-7)),
                                       ("uint32", pto.PadValueCustom(0xDEADBEEF)),
                                       ("int16", pto.PadValueCustom(-2)),
                                       ("int8", pto.PadValueCustom(0x1FF)),
                                       ("uint8", pto.PadValueCustom(300))])
def test_tfillpad_custom_pad(dtype, pad):
    rng = np.random.default_rng(7)
    s = tile(dtype, 32, 64, RM, 13, 21, rng)
    d = tile(dtype, 32, 64, RM, rng=rng, pad=pad)
    want = ref.ptox_fillpad((32, 64), s.valid, ref.ptox_custom_pad(pad.bits, d.dtype), d.dtype)
    pto.TFILLPAD(d, s)
    assert_bits(d.data, want, f"TFILLPAD custom {pad}")
    # TLOAD pads with 0 for a custom pad value (the simulator's getPadValue has no custom case)
    t = pto.Tile(pto.TileType.Vec, dtype, 32, 64, valid_row=5, valid_col=7, pad=pad)
    t.data[...] = d.data
    g = s.valid[:5, :7].copy()
    pto.TLOAD(t, pto.GlobalTensor(g))
    want = np.zeros((32, 64), t.dtype)
    want[:5, :7] = g
    assert_bits(t.data, want, "TLOAD custom pad")


def test_pad_custom_errors():
    with pytest.raises(ConstraintError, match="PadValueCustom: value"):
        pto.PadValueCustom(2**40)
    with pytest.raises(ConstraintError, match="PadValueCustom16: bits16"):
        pto.PadValueCustom16(0x10000)
    with pytest.raises(ConstraintError, match="PadCustom: bits"):
        pto.PadCustom(-1)
    with pytest.raises(ConstraintError, match="Tile: pad must be a PadValue"):
        pto.Tile(pto.TileType.Vec, "float32", 8, 8, pad=7)
    assert pto.PadValueCustom(-1.0).bits == 0xBF800000
    assert pto.PadValueCustom(-1).bits == 0xFFFFFFFF


@pytest.mark.parametrize("dtype,shape", [("float32", (1, 1, 1, 16, 8)), ("int16", (2, 2, 2, 16, 16)),
                                         ("uint8", (1, 2, 1, 16, 32)), ("float16", (3, 1, 2, 16, 16))])
@pytest.mark.parametrize("boxed", (True, False))
def test_globaltensor_nz(dtype, shape, boxed):
    rng = np.random.default_rng(8)
    a = (rng.standard_normal(shape) * 50).astype(dtype)
    R, C = shape[2] * shape[3], shape[0] * shape[1] * shape[4]
    kw = dict(blayout=CM, slayout=pto.SLayout.RowMajor) if boxed else {}
    t = pto.Tile(pto.TileType.Vec, dtype, R, C, **kw)
    gt = pto.GlobalTensor(a, layout=pto.Layout.NZ)
    assert (gt.rows, gt.cols) == (R, C)
    pto.TLOAD(t, gt)
    assert_bits(t.data, ref.ptox_nz_2d(a), "TLOAD NZ")
    back = np.zeros(shape, dtype)
    pto.TSTORE(pto.GlobalTensor(back, layout=pto.Layout.NZ), t)
    assert_bits(back, a, "TSTORE NZ")
    # a window of a larger NZ tensor (strides of the whole): TSTORE writes only the window
    whole = np.zeros((shape[0] + 1,) + shape[1:], dtype)
    st = tuple(s // whole.dtype.itemsize for s in whole.strides)
    pto.TSTORE(pto.GlobalTensor(whole, shape=shape, strides=st, layout=pto.Layout.NZ), t)
    assert_bits(whole[:shape[0]], a, "window")
    assert not whole[shape[0]:].any()
    with pytest.raises(ConstraintError, match="TLOAD"):
        pto.TLOAD(pto.Tile(pto.TileType.Vec, dtype, R, C * 2), gt)
