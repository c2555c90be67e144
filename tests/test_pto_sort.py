"""TSORT32 / TMRGSORT against tests/reference.py (bit-exact structs, ties, tails, both
TMRGSORT forms, exhausted mode)."""

from __future__ import annotations

import numpy as np
import pytest

import reference as ref
from fastisa import pto
from fastisa.errors import ConstraintError
from pto_helpers import RM, assert_bits, tile


@pytest.mark.parametrize("C", (32, 64, 45, 7))
@pytest.mark.parametrize("dtype", ("float32", "float16"))
def test_tsort32(dtype, C):
    rng = np.random.default_rng(1)
    coef = 8 // np.dtype(dtype).itemsize
    src = tile(dtype, 4, 64, RM, 3, C, rng)
    src.data[:, 3] = src.data[:, 5]                    # ties: index order decides
    src.data[0, 10:20] = 1.0
    idx = tile("uint32", 4, 64, RM)
    idx.data[...] = rng.permutation(4 * 64).reshape(4, 64)
    dst = tile(dtype, 4, 64 * coef, RM, rng=rng)
    before = dst.data.copy()
    pto.TSORT32(dst, src, idx)
    for r in range(3):
        want = ref.ptox_sort32_row(src.data[r, :C], idx.data[r, :C], src.dtype)
        got = dst.data[r].view(np.uint8)[: want.size]
        assert_bits(got, want, f"row {r}")
        rest = dst.data[r].view(np.uint8)[want.size:]
        assert_bits(rest, before[r].view(np.uint8)[want.size:], "untouched tail")
    assert_bits(dst.data[3], before[3], "row outside the valid region")


def _sorted_list(dtype, n, rng):
    v = np.sort(rng.standard_normal(n).astype(dtype))[::-1]
    idx = rng.integers(0, 1000, n).astype(np.uint32)
    return ref.ptox_sort32_row(v, idx, dtype) if n <= 32 else b"".join(
        ref.ptox_sort32_row(v[k:k + 32], idx[k:k + 32], dtype).tobytes()
        for k in range(0, n, 32))


@pytest.mark.parametrize("nl", (2, 3, 4))
@pytest.mark.parametrize("exhausted", (False, True))
@pytest.mark.parametrize("dtype", ("float32", "float16"))
def test_tmrgsort_lists(dtype, exhausted, nl):
    rng = np.random.default_rng(2)
    coef = 8 // np.dtype(dtype).itemsize
    lists, tiles = [], []
    for k in range(nl):
        n = int(rng.integers(5, 30))
        v = np.sort(rng.integers(-20, 20, n).astype(dtype))[::-1]   # many ties across lists
        data = np.concatenate([ref.ptox_sort32_row(v[j:j + 1], np.array([k * 100 + j]), dtype)
                               for j in range(n)])
        lists.append(data)
        cols = -(-n * coef // (32 // np.dtype(dtype).itemsize)) * (32 // np.dtype(dtype).itemsize)
        t = pto.Tile(pto.TileType.Vec, dtype, 1, cols, valid_col=n * coef)
        t.buffer.view(np.uint8)[: data.size] = data
        tiles.append(t)
    total = sum(len(x) // 8 for x in lists)
    dst = tile(dtype, 1, 128 * coef, RM, 1, (total - 2) * coef, rng)
    ex = pto.MrgSortExecutedNumList()
    pto.TMRGSORT(dst, ex, None, *tiles, exhausted=exhausted)
    want, taken = ref.ptox_merge(lists, dtype, total - 2, exhausted)
    assert_bits(dst.buffer.view(np.uint8)[: want.size], want, "merged")
    got = [ex.mrgSortList0, ex.mrgSortList1, ex.mrgSortList2, ex.mrgSortList3][:nl]
    assert got == taken


def test_tmrgsort_blocklen():
    rng = np.random.default_rng(3)
    block = 64                                   # 32 float32 structs per block
    data = b"".join(_sorted_list(np.float32, 32, rng).tobytes() for _ in range(8))
    src = tile("float32", 1, 512)
    src.buffer.view(np.uint8)[:] = np.frombuffer(data, np.uint8)
    dst = tile("float32", 1, 512)
    pto.TMRGSORT(dst, src, block)
    for g in range(2):
        lists = [np.frombuffer(data[(g * 4 + b) * 256:(g * 4 + b + 1) * 256], np.uint8)
                 for b in range(4)]
        want, _ = ref.ptox_merge(lists, np.float32, 128)
        assert_bits(dst.buffer.view(np.uint8)[g * 1024:(g + 1) * 1024], want, f"group {g}")
    with pytest.raises(ConstraintError, match="TMRGSORT: blockLen"):
        pto.TMRGSORT(dst, src, 48)
