"""Shared helpers for the PTO tests: random tiles, bit comparison, ULP distance."""

from __future__ import annotations

import ml_dtypes
import numpy as np

from fastisa import pto

V = pto.TileType.Vec
RM = pto.BLayout.RowMajor
CM = pto.BLayout.ColMajor
FLOATS = ("float32", "float16", "bfloat16")
NPDT = {"float32": np.dtype(np.float32), "float16": np.dtype(np.float16),
        "bfloat16": np.dtype(ml_dtypes.bfloat16), "int32": np.dtype(np.int32),
        "int16": np.dtype(np.int16), "int8": np.dtype(np.int8), "uint8": np.dtype(np.uint8),
        "uint16": np.dtype(np.uint16), "uint32": np.dtype(np.uint32)}


def rand(dtype, shape, rng, scale=3.0, small_ints=False):
    dt = NPDT[dtype] if isinstance(dtype, str) else np.dtype(dtype)
    if dt.kind == "f" or dt == NPDT["bfloat16"]:
        return (rng.standard_normal(shape) * scale).astype(np.float32).astype(dt)
    info = np.iinfo(dt)
    if small_ints:
        lo, hi = max(info.min, -100), min(info.max, 100)
    else:
        lo, hi = info.min, info.max
    return rng.integers(lo, hi, size=shape, endpoint=True).astype(dt)


def tile(dtype, rows, cols, layout=RM, vr=None, vc=None, rng=None, loc=V, **kw):
    """A tile whose whole buffer holds random data (so writes outside the valid region show)."""
    t = pto.Tile(loc, dtype, rows, cols, blayout=layout, valid_row=vr, valid_col=vc, **kw)
    if rng is not None:
        t.data[...] = rand(dtype, (rows, cols), rng)
    return t


def bits(a):
    a = np.ascontiguousarray(a)
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize])


def _isnan(a):
    a = np.asarray(a)
    if a.dtype.kind in "iu":
        return np.zeros(a.shape, bool)
    return np.isnan(a.astype(np.float32))


def assert_bits(got, want, what=""):
    """Bit-for-bit equality (NaNs compared as NaN: payloads are not specified)."""
    got = np.asarray(got)
    want = np.asarray(want)
    assert got.dtype == want.dtype, (what, got.dtype, want.dtype)
    assert got.shape == want.shape, (what, got.shape, want.shape)
    nan = _isnan(got) & _isnan(want)
    bad = (bits(got) != bits(want)) & ~nan
    if bad.any():
        idx = np.argwhere(bad)[:5]
        details = [(tuple(i), got[tuple(i)], want[tuple(i)]) for i in idx]
        raise AssertionError(f"{what}: {int(bad.sum())} element(s) differ, first {details}")


def ordered(a):
    """Map floats to integers whose difference is the ULP distance."""
    a = np.asarray(a)
    if a.dtype.itemsize == 4:
        b = a.view(np.int32).astype(np.int64)
        return np.where(b < 0, -(b & 0x7FFFFFFF), b)
    b = bits(a).astype(np.int64)
    return np.where(b & 0x8000, -(b & 0x7FFF), b)


def assert_ulp(got, want, ulp, what=""):
    got = np.asarray(got)
    want = np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    gn, wn = _isnan(got), _isnan(want)
    assert np.array_equal(gn, wn), f"{what}: NaN positions differ"
    d = np.abs(ordered(got) - ordered(want))
    d = np.where(gn, 0, d)
    if d.max(initial=0) > ulp:
        i = np.unravel_index(np.argmax(d), d.shape)
        raise AssertionError(f"{what}: {d.max()} ULP > {ulp} at {i}: {got[i]} vs {want[i]}")


def check_dst(dst, before, want, what="", ulp=0):
    """dst's valid region equals ``want``; everything outside it equals ``before``."""
    if ulp:
        assert_ulp(dst.valid, want, ulp, what)
    else:
        assert_bits(dst.valid, want, what)
    mask = np.ones(dst.shape, bool)
    mask[: dst.valid_row, : dst.valid_col] = False
    assert np.array_equal(bits(dst.data)[mask], bits(before)[mask]), \
        f"{what}: elements outside the valid region changed"
