"""TGATHER / TSCATTER / MGATHER / MSCATTER against tests/reference.py (bit-exact; every mask
pattern and axis; index forms with out-of-range indices; dtypes and layouts)."""

from __future__ import annotations

import numpy as np
import pytest

import reference as ref
from fastisa import pto
from fastisa.errors import AccessError, ConstraintError
from pto_helpers import CM, RM, assert_bits, tile

DTS = ("float32", "float16", "bfloat16", "int32", "int16", "uint8")


@pytest.mark.parametrize("lay", (RM, CM))
@pytest.mark.parametrize("dtype", DTS)
def test_tgather_index(dtype, lay):
    rng = np.random.default_rng(1)
    src = tile(dtype, 32, 32, lay, 20, 17, rng)
    dst = tile(dtype, 32, 32, lay, 9, 13, rng)
    before = dst.data.copy()
    idx = tile("int32", 16, 16, RM)
    idx.data[...] = rng.integers(-5, 32 * 32 + 5, idx.shape)
    pto.TGATHER(dst, src, idx)
    assert_bits(dst.valid, ref.ptox_gather_index(src.data, idx.data[:9, :13]), "TGATHER")
    out = np.ones(dst.shape, bool)
    out[:9, :13] = False
    assert_bits(dst.data[out], before[out], "outside")


@pytest.mark.parametrize("p", list(pto.MaskPattern))
@pytest.mark.parametrize("dtype", ("float32", "float16", "uint8"))
def test_tgather_mask(dtype, p):
    rng = np.random.default_rng(2)
    src = tile(dtype, 16, 64, RM, 11, 61, rng)
    dst = tile(dtype, 16, 64, RM, rng=rng)
    pto.TGATHER(dst, src, maskPattern=p)
    want = ref.ptox_gather_mask_row(src.valid, p)
    assert_bits(dst.buffer[: want.size], want, f"TGATHER row {p.name}")
    dc = tile(dtype, 16, 64, RM, rng=rng)
    pto.TGATHER(dc, src, maskPattern=p, axis="col")
    rows = src.valid[ref.ptox_pattern(p, 11)]
    assert_bits(dc.data[: rows.shape[0], :61], rows, f"TGATHER col {p.name}")


def test_tgather_bitcast_same_size():
    src = tile("float32", 4, 8)
    src.data[...] = np.arange(32, dtype=np.float32).reshape(4, 8) + 0.5
    dst = tile("int32", 4, 8)
    pto.TGATHER(dst, src, maskPattern="P1010")
    want = src.valid[:, 1::2].reshape(-1).view(np.int32)
    assert_bits(dst.buffer[:16], want, "bitcast")
    with pytest.raises(ConstraintError, match="TGATHER: dst.dtype"):
        pto.TGATHER(tile("int16", 4, 16), src, maskPattern="P1010")


@pytest.mark.parametrize("p", list(pto.MaskPattern))
def test_tscatter_mask(p):
    rng = np.random.default_rng(3)
    src = tile("float16", 16, 64, RM, rng=rng)
    dst = tile("float16", 16, 64, RM, 9, 40, rng)
    before = dst.data.copy()
    pto.TSCATTER(dst, src, maskPattern=p)
    assert_bits(dst.valid, ref.ptox_scatter_mask_row(src.data, p, (9, 40)), f"TSCATTER {p.name}")
    assert_bits(dst.data[9:], before[9:], "outside rows")
    dc = tile("float16", 16, 64, RM, 12, 64, rng)
    pto.TSCATTER(dc, src, maskPattern=p, axis="col")
    sel = ref.ptox_pattern(p, 12)
    want = np.zeros((12, 64), np.float16)
    want[sel] = src.data[: int(sel.sum())]
    assert_bits(dc.valid, want, f"TSCATTER col {p.name}")


@pytest.mark.parametrize("dtype", DTS)
def test_tscatter_index_last_write_wins(dtype):
    rng = np.random.default_rng(4)
    src = tile(dtype, 8, 32, RM, 8, 32, rng)
    dst = tile(dtype, 16, 32, RM, rng=rng)
    idx = tile("int32", 8, 32, RM, 6, 9)
    idx.data[...] = rng.integers(0, 40, idx.shape)       # collisions
    want = dst.buffer.copy()
    for i in range(6):
        for j in range(9):
            want[idx.data[i, j]] = src.data[i, j]
    pto.TSCATTER(dst, src, idx)
    assert_bits(dst.buffer, want, "TSCATTER index")
    idx.data[0, 0] = 16 * 32
    before = dst.buffer.copy()
    with pytest.raises(AccessError, match="TSCATTER: index 512"):
        pto.TSCATTER(dst, src, idx)
    assert_bits(dst.buffer, before, "unchanged after the error")


@pytest.mark.parametrize("oob", ("clamp", "wrap", "zero", "undefined"))
@pytest.mark.parametrize("co", ("elem", "row"))
def test_mgather(co, oob):
    rng = np.random.default_rng(5)
    g = rng.standard_normal((10, 24)).astype(np.float32)
    gm = pto.GlobalTensor(g)
    dst = tile("float32", 8, 16, RM, 7, 16, rng)
    idx = tile("int32", 8, 16, RM)
    hi = 240 if co == "elem" else 10
    idx.data[...] = rng.integers(0, hi, idx.shape)
    if oob != "undefined":
        idx.data[0, 0] = hi + 3
        idx.data[1, 0] = -2
    pto.MGATHER(dst, gm, idx, coalesce=co, oob=oob)
    raw = idx.data[:7, :16].astype(np.int64) if co == "elem" else idx.data[:7, :1].astype(np.int64)
    cap = hi
    if oob == "clamp":
        raw = np.clip(raw, 0, cap - 1)
    elif oob == "wrap":
        raw = np.mod(raw, cap)
    miss = (raw < 0) | (raw >= cap)
    if co == "elem":
        want = np.where(miss, 0, g.reshape(-1)[np.where(miss, 0, raw)])
    else:
        want = g[np.where(miss[:, 0], 0, raw[:, 0])][:, :16].copy()
        want[miss[:, 0]] = 0
    assert_bits(dst.valid, want.astype(np.float32), f"MGATHER {co} {oob}")
    if oob == "undefined":
        idx.data[0, 0] = hi
        with pytest.raises(AccessError, match="MGATHER: index"):
            pto.MGATHER(dst, gm, idx, coalesce=co)


@pytest.mark.parametrize("atomic", ("none", "add", "max", "min"))
@pytest.mark.parametrize("dtype", ("float32", "float16", "int32"))
def test_mscatter(dtype, atomic):
    rng = np.random.default_rng(6)
    src = tile(dtype, 8, 32, RM, 5, 11, rng)
    g = tile(dtype, 8, 32, RM, rng=rng).buffer[:200].copy()
    gm = pto.GlobalTensor(g)
    idx = tile("int32", 8, 32, RM)
    idx.data[...] = rng.integers(0, 60, idx.shape)
    want = ref.ptox_scatter_gm(g, src.valid, idx.data[:5, :11].astype(np.int64), atomic)
    pto.MSCATTER(gm, src, idx, atomic=atomic)
    assert_bits(g, want, f"MSCATTER {atomic}")
    idx.data[0, 0] = 500
    before = g.copy()
    pto.MSCATTER(gm, src, idx, atomic=atomic, oob="skip")
    idx.data[0, 0] = 0
    want2 = ref.ptox_scatter_gm(before, src.valid,
                                np.where(np.arange(55).reshape(5, 11) == 0, -1,
                                         idx.data[:5, :11].astype(np.int64)), atomic)
    assert_bits(g, want2, "skip")
    idx.data[0, 0] = 500
    with pytest.raises(AccessError):
        pto.MSCATTER(gm, src, idx)


def test_mscatter_row():
    src = tile("int32", 4, 8, RM, 3, 8)
    src.data[...] = np.arange(32).reshape(4, 8)
    g = np.zeros((6, 8), np.int32)
    idx = tile("int32", 4, 8)
    idx.data[:, 0] = [5, 0, 2, 1]
    pto.MSCATTER(pto.GlobalTensor(g), src, idx, coalesce="row")
    want = np.zeros((6, 8), np.int32)
    want[5], want[0], want[2] = src.data[0], src.data[1], src.data[2]
    assert_bits(g, want, "row scatter")
