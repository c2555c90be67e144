"""nisa.topk's AVX-512BW chunk-maxima pass (speed15b branch, issue 15) gives the portable
code's results: the same values, indices, untouched slots and NaN status, for every n
(row tails of 0-255 elements past the last 16-chunk block), every kind of data (specials,
both zeros, ties, NaN), k from 1 to 1024, sorted and not, 1 and 2 threads; and the
oracle's.  Skips the SIMD half on CPUs without AVX-512BW (the choice falls back)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import reference as ref
from fastisa._kernels import select as ksel

BF16 = ml_dtypes.bfloat16


def _bits(rng, shape, kind):
    if kind == "normal":
        return (rng.standard_normal(shape) * 3).astype(np.float32).astype(BF16).view(np.uint16)
    if kind == "codes":                 # every bit pattern, NaN included
        return rng.integers(0, 65536, shape).astype(np.uint16)
    if kind == "specials":              # +-0, +-inf, NaN of both signs, extremes
        pool = np.array([0x0000, 0x8000, 0x7F80, 0xFF80, 0x7FC0, 0xFFC0, 0x7F81, 0xFFFF,
                         0x7F7F, 0xFF7F, 0x0001, 0x8001, 0x3F80, 0xBF80], np.uint16)
        return pool[rng.integers(0, pool.size, shape)]
    if kind == "ties":
        pool = np.array([0.0, -0.0, 1.0, -1.0, 2.0], np.float32).astype(BF16).view(np.uint16)
        return pool[rng.integers(0, pool.size, shape)]
    if kind == "descending":            # the maximum in the last chunks of each row
        return np.arange(np.prod(shape), dtype=np.float32)[::-1].reshape(shape).astype(
            BF16).view(np.uint16)
    raise ValueError(kind)


def _run_k(src, n, k, sorted_, threads, simd):
    P = src.shape[0]
    val = np.full((P, k), 0x1234, np.uint16)
    idx = np.full((P, k), 0xABCDEF, np.uint32)
    old = ksel.set_simd(simd)
    try:
        st = ksel.topk_bf16(src, n, sorted_, val, idx, threads)
    finally:
        ksel.set_simd(old)
    return st, val, idx


@pytest.mark.parametrize("kind", ["normal", "codes", "specials", "ties", "descending"])
@pytest.mark.parametrize("n", [65535, 65535 - 16 * 37, 16 * 256 + 5, 16 * 300, 8 * 16 + 3])
def test_simd_chunk_maxima_same_results(kind, n):
    rng = np.random.default_rng(n * 7 + len(kind))
    cols = -(-n // 16) + 3                 # storage past n is ignored
    src = _bits(rng, (32, cols), kind)
    for k, sorted_ in ((1, True), (64, True), (64, False), (min(1024, n), False)):
        for threads in (1, 2):
            a = _run_k(src, n, k, sorted_, threads, 0)
            b = _run_k(src, n, k, sorted_, threads, 1)
            assert a[0] == b[0]
            np.testing.assert_array_equal(a[1], b[1])
            np.testing.assert_array_equal(a[2], b[2])


@pytest.mark.parametrize("simd", [0, 1])
def test_simd_matches_the_oracle(simd):
    rng = np.random.default_rng(5)
    n, k = 65535, 64
    src = _bits(rng, (32, 4096), "normal")
    st, val, idx = _run_k(src, n, k, True, 1, simd)
    assert st == 0
    vb = np.full((32, k), 0x1234, np.uint16)
    ib = np.full((32, k), 0xABCDEF, np.uint32)
    want_v, want_i = ref.nki_topk(src, n, k, vb, ib)
    np.testing.assert_array_equal(val, want_v)
    np.testing.assert_array_equal(idx, want_i)


def test_nan_status_from_every_chunk_position():
    # one NaN anywhere among the active elements sets the status, with either code; past
    # n it does not
    n = 16 * 512
    for pos in (0, 15, 16 * 255, 16 * 256 + 1, n - 1, n):
        src = np.full((16, 520), 0x3F80, np.uint16)
        e = pos
        src[e % 16, e // 16] = 0xFFC1            # a negative NaN (the largest raw pattern)
        for simd in (0, 1):
            st, _, _ = _run_k(src, n, 16, True, 1, simd)
            assert (st & 1) == (pos < n), (pos, simd)


def test_set_simd_returns_the_previous_choice():
    old = ksel.set_simd(0)
    try:
        assert ksel.set_simd(-1) == 0
        ksel.set_simd(1)
        assert ksel.set_simd(0) in (0, 1)      # 0 where the CPU lacks AVX-512BW
    finally:
        ksel.set_simd(old)
