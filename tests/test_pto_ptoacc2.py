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
