"""TCVT with SaturationMode ON/OFF (the CPU simulator's conversion) against
tests/reference.py: every RoundMode, NaN / inf / out-of-range sources, all dtype pairs, and
every float16 / bfloat16 code into each integer type (slow sweep) and float32 -> float16."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import reference as ref
from fastisa import pto
from pto_helpers import RM, assert_bits

TYPES = ("float32", "float16", "bfloat16", "int32", "uint32", "int16", "uint16", "int8", "uint8")
NP = {"bfloat16": np.dtype(ml_dtypes.bfloat16)}


def _dt(n):
    return NP.get(n, np.dtype(n))


def _run(src_vals, ddt, mode, sat):
    n = src_vals.size
    sdt = src_vals.dtype
    step = 32 // min(sdt.itemsize, _dt(ddt).itemsize)
    cols = -(-n // step) * step
    s = pto.Tile(pto.TileType.Vec, sdt, 1, cols, valid_col=n)
    s.data[0, :n] = src_vals
    d = pto.Tile(pto.TileType.Vec, _dt(ddt), 1, cols, valid_col=n)
    pto.TCVT(d, s, mode, satMode=sat)
    return d.data[0, :n]


def _sources(sdt, rng):
    if np.dtype(sdt).kind in "iu" and sdt != NP.get("bfloat16"):
        info = np.iinfo(sdt)
        return np.concatenate([rng.integers(info.min, info.max, 200, endpoint=True),
                               [info.min, info.max, 0, -1 if info.min < 0 else 1]]).astype(sdt)
    v = np.concatenate([rng.standard_normal(100) * 10, rng.standard_normal(60) * 1e6,
                        [0.5, 1.5, 2.5, -0.5, -2.5, 3e9, -3e9, 7e4, -7e4, 1e20, -1e20,
                         np.inf, -np.inf, np.nan, 65519.0, 65520.0, 255.5, 256.0]])
    with np.errstate(over="ignore"):
        return v.astype(np.float32).astype(sdt)


@pytest.mark.parametrize("sat", ("OFF", "ON"))
@pytest.mark.parametrize("src", TYPES)
def test_cvt_sat_pairs(src, sat):
    rng = np.random.default_rng(1)
    x = _sources(_dt(src), rng)
    for dst in TYPES:
        for mode in pto.RoundMode:
            got = _run(x, dst, mode, sat)
            want = ref.ptox_cvt_sat(x, _dt(dst), mode, sat == "ON")
            assert_bits(got, want, f"{src}->{dst} {mode.name} sat={sat}")


@pytest.mark.slow
@pytest.mark.parametrize("src", ("float16", "bfloat16"))
def test_cvt_sat_every_16bit_code(src):
    x = np.arange(65536, dtype=np.uint16).view(_dt(src))
    for dst in ("int32", "int16", "int8", "uint8", "uint16", "float32", "float16", "bfloat16"):
        for sat in ("OFF", "ON"):
            for mode in (pto.RoundMode.CAST_RINT, pto.RoundMode.CAST_ODD, pto.RoundMode.CAST_TRUNC):
                assert_bits(_run(x, dst, mode, sat), ref.ptox_cvt_sat(x, _dt(dst), mode,
                                                                      sat == "ON"),
                            f"{src}->{dst} {mode.name} {sat}")
