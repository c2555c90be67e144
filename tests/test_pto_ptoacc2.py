"""ptoacc2 (issue 13): the pad code of low-precision tiles in TLOAD and TFILLPAD."""
from __future__ import annotations

import numpy as np
import pytest

import reference as ref
from fastisa import pto

V = pto.TileType.Vec
LOWP = ["float8_e4m3fn", "float8_e5m2", "float8_e8m0fnu", "hifloat8", "float4_e2m1x2",
        "float4_e1m2x2"]
PADS = ["Null", "Zero", "Max", "Min"]


def _codes(rows, cols, seed):
    # every byte but 0, so a pad of code 0 is told apart from loaded data
    return np.random.default_rng(seed).integers(1, 256, (rows, cols)).astype(np.uint8)


@pytest.mark.parametrize("fmt", LOWP)
@pytest.mark.parametrize("pad", PADS)
def test_tload_pads_lowp_tiles_with_the_a5_code(fmt, pad):
    src = _codes(3, 40, 1)
    t = pto.Tile(V, fmt, 8, 64, valid_row=3, valid_col=40, pad=getattr(pto.PadValue, pad))
    gt = pto.GlobalTensor(src.view(t.dtype), dtype=fmt)       # the codes, not the values
    t.data.view(np.uint8)[...] = 0xAB                      # stale contents: every byte must be rewritten
    pto.TLOAD(t, gt)
    want = np.full((8, 64), ref.ptoacc2_pad_byte(fmt, pad), np.uint8)
    want[:3, :40] = src
    np.testing.assert_array_equal(t.data.view(np.uint8), want)


@pytest.mark.parametrize("fmt", LOWP)
@pytest.mark.parametrize("pad", PADS)
def test_tfillpad_pads_lowp_tiles_with_the_a5_code(fmt, pad):
    src = pto.Tile(V, fmt, 4, 32, valid_row=2, valid_col=32)
    codes = _codes(4, 32, 2)
    src.data.view(np.uint8)[...] = codes
    dst = pto.Tile(V, fmt, 4, 32, pad=getattr(pto.PadValue, pad))
    dst.data.view(np.uint8)[...] = 0xCD
    pto.TFILLPAD(dst, src)
    want = ref.ptox_fillpad((4, 32), codes[:2, :32], ref.ptoacc2_pad_byte(fmt, pad), np.uint8)
    np.testing.assert_array_equal(dst.data.view(np.uint8), want)


def test_e4m3_max_pad_is_not_nan():
    # the code of +inf in e4m3fn's encoder is 0x7f, its NaN: a Max pad must not load NaN
    t = pto.Tile(V, "float8_e4m3fn", 2, 32, valid_row=1, pad=pto.PadValue.Max)
    pto.TLOAD(t, pto.GlobalTensor(np.zeros((1, 32), t.dtype)))
    assert not (t.data.view(np.uint8) == 0x7F).any()


# ---- pto.tconcatidx (PTOAS's indexed concat: per-row element counts, clamped) -------------
def _concatidx_program(idt):
    T = "!pto.tile_buf<vec, 8x32xf32>"
    S1 = "!pto.tile_buf<vec, 8x32xf32, valid=8x24>"
    I = f"!pto.tile_buf<vec, 8x{32 // {'i32': 4, 'i16': 2, 'i8': 1}[idt]}x{idt}, valid=8x1>"
    return f"""
func.func @cat(%y: !pto.ptr<f32>, %a: {T}, %b: {S1}, %i0: {I}, %i1: {I}, %d: {T}) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %vy = pto.make_tensor_view %y, shape = [%c8, %c32], strides = [%c32, %c1] : !pto.tensor_view<8x32xf32>
  %py = pto.partition_view %vy, offsets = [%c0, %c0], sizes = [%c8, %c32] : !pto.tensor_view<8x32xf32> -> !pto.partition_tensor_view<8x32xf32>
  pto.tconcatidx ins(%a, %b, %i0, %i1 : {T}, {S1}, {I}, {I}) outs(%d : {T})
  pto.tstore ins(%d : {T}) outs(%py : !pto.partition_tensor_view<8x32xf32>)
  return
}}
"""


@pytest.mark.parametrize("idt,npdt", [("i32", np.int32), ("i16", np.int16), ("i8", np.int8)])
def test_tconcatidx_copies_per_row_element_counts(idt, npdt):
    from fastisa.pto import asm
    rng = np.random.default_rng(7)
    a = rng.standard_normal((8, 32)).astype(np.float32)
    b = rng.standard_normal((8, 32)).astype(np.float32)
    d = np.full((8, 32), -5.0, np.float32)
    cols = 32 // np.dtype(npdt).itemsize
    n0 = np.array([0, 3, 8, 16, 32, 40, -2, 5], npdt)       # 40 > 32: clamped; -2: none
    n1 = np.array([4, 29, 30, 0, 9, 1, 24, 27], npdt)       # > 24 (b's valid): clamped
    i0 = np.zeros((8, cols), npdt)
    i1 = np.zeros((8, cols), npdt)
    i0[:, 0], i1[:, 0] = n0, n1
    y = asm.run(_concatidx_program(idt), {"a": a, "b": b[:, :24], "i0": i0[:, :1],
                                          "i1": i1[:, :1], "d": d})["y"]
    want = ref.ptoacc2_tconcatidx(a, b, n0, n1, d, 32, 24)
    np.testing.assert_array_equal(y.view(np.uint32), want.view(np.uint32))


def test_tconcatidx_rejects_a_float_index_tile():
    from fastisa.errors import ConstraintError
    from fastisa.pto import asm
    text = _concatidx_program("i32").replace("x8xi32, valid=8x1", "x8xf32, valid=8x1")
    with pytest.raises(ConstraintError, match="src0Idx must be an integer tile"):
        asm.run(text, {})
