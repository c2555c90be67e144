"""TEXTRACT / TINSERT / TCONCAT / TRESHAPE / TFILLPAD: bit-exact window copies over dtypes,
layouts and valid regions (the oracle is numpy slicing of the operands' views); the rest of
dst untouched; errors for windows outside the valid region."""

from __future__ import annotations

import numpy as np
import pytest

from fastisa import pto
from fastisa.errors import ConstraintError
from pto_helpers import CM, RM, assert_bits, tile

DTS = ("float32", "float16", "bfloat16", "int32", "int16", "int8", "uint8")


def _geom(dtype, lay):
    step = 32 // np.dtype({"bfloat16": "uint16"}.get(dtype, dtype)).itemsize
    return (32, max(32, step)) if lay == RM else (max(32, step), 32)


@pytest.mark.parametrize("lay", (RM, CM))
@pytest.mark.parametrize("dtype", DTS)
def test_textract_tinsert(dtype, lay):
    rng = np.random.default_rng(1)
    R, C = _geom(dtype, lay)
    src = tile(dtype, R, C, lay, 30, 29, rng)
    dst = tile(dtype, R, C, lay, 7, 11, rng)
    before = dst.data.copy()
    pto.TEXTRACT(dst, src, 5, 9)
    want = before.copy()
    want[:7, :11] = src.data[5:12, 9:20]
    assert_bits(dst.data, want, "TEXTRACT")
    big = tile(dtype, R, C, lay, 25, 27, rng)
    b0 = big.data.copy()
    pto.TINSERT(big, dst, 3, 14)
    b0[3:10, 14:25] = dst.valid
    assert_bits(big.data, b0, "TINSERT")
    with pytest.raises(ConstraintError, match="TEXTRACT: indexRow/indexCol"):
        pto.TEXTRACT(dst, src, 24, 0)
    with pytest.raises(ConstraintError, match="TINSERT: indexRow/indexCol"):
        pto.TINSERT(big, dst, 0, 20)


def test_textract_relu_and_convert():
    src = tile("float32", 16, 16, RM)
    src.data[...] = np.linspace(-3, 3, 256, dtype=np.float32).reshape(16, 16)
    dst = tile("float16", 8, 16, RM, 8, 16)
    pto.TEXTRACT(dst, src, 4, 0, relu=True)
    assert_bits(dst.valid, np.maximum(src.data[4:12], 0).astype(np.float16), "relu")


@pytest.mark.parametrize("dtype", ("float32", "float16", "int8"))
def test_tconcat(dtype):
    rng = np.random.default_rng(2)
    w = 32 // np.dtype(dtype).itemsize
    a = tile(dtype, 8, 2 * w, RM, 6, w - 3, rng)
    b = tile(dtype, 8, 2 * w, RM, 6, w + 1, rng)
    d = tile(dtype, 8, 4 * w, RM, 6, 2 * w - 2, rng)
    before = d.data.copy()
    pto.TCONCAT(d, a, b)
    want = before.copy()
    want[:6, : 2 * w - 2] = np.concatenate([a.valid, b.valid], axis=1)
    assert_bits(d.data, want, "TCONCAT")
    with pytest.raises(ConstraintError, match="TCONCAT: dst.validCol"):
        pto.TCONCAT(tile(dtype, 8, 4 * w, RM, 6, 5), a, b)


def test_treshape():
    rng = np.random.default_rng(3)
    s = tile("float32", 8, 16, RM, rng=rng)
    d = tile("float32", 4, 32, RM)
    pto.TRESHAPE(d, s)
    assert_bits(d.buffer, s.buffer, "bytes")
    d16 = tile("float16", 8, 32, RM)
    pto.TRESHAPE(d16, s)
    assert_bits(d16.buffer.view(np.uint8), s.buffer.view(np.uint8), "float16 view")
    s.buffer[17] = 123.0                 # dst aliases src (A2/A3 and the CPU simulator)
    d.buffer[3] = -5.0
    assert d.buffer[17] == 123.0 and s.buffer[3] == -5.0
    assert_bits(d16.buffer.view(np.uint8), s.buffer.view(np.uint8), "float16 alias")
    with pytest.raises(ConstraintError, match="TRESHAPE: dst.loc"):
        pto.TRESHAPE(pto.Tile(pto.TileType.Mat, "float32", 8, 16), s)
    with pytest.raises(ConstraintError, match="TRESHAPE: dst.dtype"):
        pto.TRESHAPE(tile("int32", 8, 16, RM), s)
    with pytest.raises(ConstraintError, match="TRESHAPE: dst size"):
        pto.TRESHAPE(tile("float32", 8, 8, RM), s)


@pytest.mark.parametrize("pad", list(pto.PadValue))
@pytest.mark.parametrize("dtype", ("float32", "float16", "int16", "uint8"))
def test_tfillpad(dtype, pad):
    rng = np.random.default_rng(4)
    w = 32 // np.dtype(dtype).itemsize
    src = tile(dtype, 8, 2 * w, RM, 5, w + 3, rng)
    dst = tile(dtype, 8, 2 * w, RM, 8, 2 * w, rng, pad=pad)
    pto.TFILLPAD(dst, src)
    dt = np.dtype(dtype)
    if pad in (pto.PadValue.Null, pto.PadValue.Zero):
        pv = 0
    elif dt.kind == "f":
        pv = np.inf if pad == pto.PadValue.Max else -np.inf
    else:
        pv = np.iinfo(dt).max if pad == pto.PadValue.Max else np.iinfo(dt).min
    want = np.full(dst.shape, pv, dtype=dt)
    want[:5, : w + 3] = src.valid
    assert_bits(dst.data, want, f"TFILLPAD {pad.name}")
    pto.TFILLPAD_INPLACE(src, src)
    assert_bits(src.valid, want[:5, : w + 3], "in place keeps the valid region")
    big = tile(dtype, 16, 4 * w, RM, pad=pad)
    pto.TFILLPAD_EXPAND(big, dst)
    w2 = np.full(big.shape, pv, dtype=dt)
    w2[:8, : 2 * w] = dst.data
    assert_bits(big.data, w2, "TFILLPAD_EXPAND")
    with pytest.raises(ConstraintError, match="TFILLPAD: dst shape"):
        pto.TFILLPAD(big, dst)


@pytest.mark.parametrize("with_dst_idx", (False, True))
def test_tconcat_index_form(with_dst_idx):
    rng = np.random.default_rng(5)
    a = tile("float32", 8, 16, RM, rng=rng)
    b = tile("float32", 8, 16, RM, rng=rng)
    d = tile("float32", 8, 32, RM, 6, 32, rng)
    before = d.data.copy()
    i0 = tile("int16", 8, 16, RM)
    i1 = tile("int16", 8, 16, RM)
    i0.data[:, 0] = rng.integers(0, 17, 8) * 2          # byte counts / sizeof(int16)
    i1.data[:, 0] = rng.integers(0, 17, 8) * 2 + 1      # odd: rounded down
    di = tile("int16", 8, 16, RM)
    args = (di, i0, i1) if with_dst_idx else (i0, i1)
    pto.TCONCAT(d, a, b, *args)
    want = before.copy()
    for r in range(6):
        c0, c1 = i0.data[r, 0] // 2, i1.data[r, 0] // 2
        want[r, :c0] = a.data[r, :c0]
        want[r, c0:c0 + c1] = b.data[r, :c1]
    assert_bits(d.data, want, "indexed TCONCAT")
    if with_dst_idx:
        assert_bits(di.data[:6, 0], (i0.data[:6, 0] + i1.data[:6, 0]).astype(np.int16), "dstIdx")
    i0.data[0, 0] = 100
    with pytest.raises(ConstraintError, match="TCONCAT: index tiles"):
        pto.TCONCAT(d, a, b, i0, i1)


@pytest.mark.parametrize("dtype", ("float32", "float16", "int8"))
def test_interleave_roundtrip(dtype):
    rng = np.random.default_rng(6)
    w = 32 // np.dtype(dtype).itemsize
    s0, s1 = tile(dtype, 4, 2 * w, RM, 3, 2 * w - 2, rng), tile(dtype, 4, 2 * w, RM, 3, 2 * w - 2, rng)
    d0, d1 = tile(dtype, 4, 2 * w, RM, 3, 2 * w - 2, rng), tile(dtype, 4, 2 * w, RM, 3, 2 * w - 2, rng)
    m = w - 1
    pto.TINTERLEAVE(d1, d0, s1, s0)
    w0 = np.empty((3, 2 * m), s0.dtype)
    w1 = np.empty((3, 2 * m), s0.dtype)
    w0[:, 0::2], w0[:, 1::2] = s0.valid[:, :m], s1.valid[:, :m]
    w1[:, 0::2], w1[:, 1::2] = s0.valid[:, m:], s1.valid[:, m:]
    assert_bits(d0.valid, w0, "TINTERLEAVE dst0")
    assert_bits(d1.valid, w1, "TINTERLEAVE dst1")
    e0, e1 = tile(dtype, 4, 2 * w, RM, 3, 2 * w - 2, rng), tile(dtype, 4, 2 * w, RM, 3, 2 * w - 2, rng)
    pto.TDEINTERLEAVE(e1, e0, d1, d0)
    assert_bits(e0.valid, s0.valid, "round trip src0")
    assert_bits(e1.valid, s1.valid, "round trip src1")
    f0, f1 = tile(dtype, 4, w, RM, 3, w - 3, rng), tile(dtype, 4, w, RM, 3, w - 3, rng)
    pto.TDEINTERLEAVE(f1, f0, d0)
    assert_bits(f0.valid, d0.data[:3, 0:2 * (w - 3):2], "3-arg dst0")
    assert_bits(f1.valid, d0.data[:3, 1:2 * (w - 3):2], "3-arg dst1")
    with pytest.raises(ConstraintError, match="TINTERLEAVE: dst0.validCol"):
        odd = tile(dtype, 4, 2 * w, RM, 3, 3)
        pto.TINTERLEAVE(tile(dtype, 4, 2 * w, RM, 3, 3), odd, tile(dtype, 4, 2 * w, RM, 3, 3),
                        tile(dtype, 4, 2 * w, RM, 3, 3))
