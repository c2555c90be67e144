"""The float32 exp of TEXP / TROWEXPANDEXPDIF: the AVX-512F code (csrc/fastisa/tile.h,
fi_tile_exp_f32_row_avx512, used on CPUs that have it) and the portable code give the same
bits, both equal to (float)exp((double)x) with libm's exp (Python's math.exp), on inputs
chosen near float32 rounding midpoints (where the fast formula hands the element to the
slow one), specials, and row lengths that leave every tail length of a 16-lane step.

On a CPU without AVX-512F both runs take the portable code and the tests still check it
against libm."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fastisa import pto
from fastisa._kernels import tile as _tile
from pto_helpers import CM, assert_bits, tile


@pytest.fixture(autouse=True)
def _default_target():
    pto.set_target("A2A3")
    pto.set_debug(False)
    yield
    pto.set_target("A2A3")
    pto.set_debug(False)


@pytest.fixture
def both_paths():
    """Runs f under each exp code (AVX-512F where available, then portable) and returns the
    two results."""
    def run(f):
        _tile.set_exp_simd(True)
        try:
            fast = f()
            _tile.set_exp_simd(False)
            slow = f()
        finally:
            _tile.set_exp_simd(True)
        return fast, slow
    yield run
    _tile.set_exp_simd(True)


def _libm_f32(x):
    x = np.asarray(x, np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        return np.array([math.exp(v) if not math.isnan(v) and v < 700 else v * np.inf
                         for v in x.astype(np.float64).reshape(-1).tolist()],
                        dtype=np.float64).astype(np.float32).reshape(x.shape)


def _near_midpoints(rng, n):
    """float32 x in [-87, 88] whose exp lies within 2^14 units (of the double's last place)
    of a float32 rounding midpoint, about 2^-14 of all inputs: the fast formula settles
    some of them and hands the nearest ones to libm."""
    out = []
    while sum(len(o) for o in out) < n:
        x = rng.uniform(-87, 88, 1 << 20).astype(np.float32)
        low = np.exp(x.astype(np.float64)).view(np.uint64) & np.uint64(0x1FFFFFFF)
        out.append(x[np.abs(low.astype(np.int64) - 0x10000000) < (1 << 14)])
    return np.concatenate(out)[:n]


def test_exp_simd_and_portable_match_libm_near_midpoints(rng, both_paths):
    near = _near_midpoints(rng, 400)
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 88.0, 88.72, 88.73, -87.0,
                         -87.0001, -103.9, -150.0, 1e-30, -1e-30, 1e-45], np.float32)
    x = np.concatenate([near, specials, rng.uniform(-90, 90, 1000).astype(np.float32)])
    rng.shuffle(x)           # near-midpoint lanes mixed with ordinary ones in each step
    x = np.concatenate([x, np.zeros((-x.size) % 64, np.float32)])
    src = tile("float32", x.size // 64, 64)
    src.data[...] = x.reshape(-1, 64)
    dst = tile("float32", x.size // 64, 64)

    def run():
        dst.fill(0)
        pto.TEXP(dst, src)
        return dst.data.copy()
    fast, slow = both_paths(run)
    want = _libm_f32(src.data)
    assert_bits(fast, want, "TEXP f32 (AVX-512F code) vs libm")
    assert_bits(slow, want, "TEXP f32 (portable code) vs libm")


@pytest.mark.parametrize("vc", [1, 7, 15, 16, 17, 31, 33, 100])
def test_exp_simd_tails_and_expdif(rng, both_paths, vc):
    """Rows of every tail length (valid columns vc of a 128-column tile: one run per row),
    in place, with EXPDIF's per-row subtraction; the columns past vc keep their bits."""
    R, C = 8, 128
    near = _near_midpoints(rng, R * vc)
    x = np.where(rng.random((R, vc)) < 0.5, near.reshape(R, vc),
                 rng.uniform(-80, 80, (R, vc)).astype(np.float32))
    x[0, 0] = np.nan
    m = rng.uniform(-3, 3, (R, 1)).astype(np.float32)
    src = tile("float32", R, C, vc=vc, rng=rng)
    src.data[:, :vc] = x
    keep = src.data[:, vc:].copy()
    mt = tile("float32", R, 1, layout=CM)
    mt.data[...] = m

    def run():
        src.data[:, :vc] = x
        pto.TEXP(src, src)
        e = src.data.copy()
        src.data[:, :vc] = x
        pto.TROWEXPANDEXPDIF(src, src, mt)
        return e, src.data.copy()
    (fe, fd), (se, sd) = both_paths(run)
    want_e = _libm_f32(x)
    want_d = _libm_f32(x - m)          # the subtraction in float32, then exp in double
    for got_e, got_d, what in ((fe, fd, "AVX-512F"), (se, sd, "portable")):
        assert_bits(got_e[:, :vc], want_e, f"TEXP {what}, vc={vc}")
        assert_bits(got_d[:, :vc], want_d, f"EXPDIF {what}, vc={vc}")
        assert_bits(got_e[:, vc:], keep, f"TEXP {what} outside the valid region")
        assert_bits(got_d[:, vc:], keep, f"EXPDIF {what} outside the valid region")


def test_set_exp_simd_reports_the_previous_choice():
    try:
        _tile.set_exp_simd(False)
        assert _tile.set_exp_simd(False) is False
        assert _tile.set_exp_simd(True) is False
        assert isinstance(_tile.set_exp_simd(True), bool)   # True on AVX-512F CPUs
    finally:
        _tile.set_exp_simd(True)
