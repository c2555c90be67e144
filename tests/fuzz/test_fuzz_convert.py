"""Conversion fuzzer with hostile ``out=``: random source/destination formats and shapes,
and ``out`` wrong in dtype, shape, contiguity or writability, overlapping ``x`` at an
offset, ``x`` itself, or right.  A call either raises a fastisa error with ``x`` and
``out`` unchanged, or returns ``out`` holding exactly what a fresh conversion gives with
``x`` unchanged (unless ``out`` is ``x``, the documented in-place case)."""
from __future__ import annotations

import numpy as np
import pytest

import fastisa
from fastisa import dtypes, errors

from conftest import SEED, Case, budgets

FORMATS = ["float32", "float16", "bfloat16", "float8_e4m3fn", "float8_e5m2", "tfloat32",
           "int8", "uint8", "int32"]


def one_case(rng):
    src = str(rng.choice(FORMATS[:3]))
    dst = str(rng.choice(FORMATS))
    sf, df = dtypes.lookup(src), dtypes.lookup(dst)
    shape = tuple(int(s) for s in rng.integers(1, 9, size=int(rng.integers(1, 3))))
    x = (rng.standard_normal(shape) * 50).astype(np.float32).astype(sf.np_dtype)
    ref = fastisa.convert(x, dst)
    kind = int(rng.integers(8))
    big = np.zeros(2 * x.size + 8, df.np_dtype)
    if kind == 0:
        out = np.empty(shape, np.float64)                       # wrong dtype
    elif kind == 1:
        out = np.empty(shape + (2,), df.np_dtype)               # wrong shape
    elif kind == 2:
        out = big[::2][:x.size].reshape(shape)                  # not contiguous
    elif kind == 3:
        out = np.zeros(shape, df.np_dtype)
        out.flags.writeable = False                             # read-only
    elif kind == 4 and sf.np_dtype.itemsize == df.np_dtype.itemsize:
        raw = x.view(np.uint8).reshape(-1)                      # overlaps x at an offset
        pad = np.concatenate([raw, raw]).copy()
        x = pad[:raw.size].view(sf.np_dtype).reshape(shape)
        out = pad[df.np_dtype.itemsize:df.np_dtype.itemsize + raw.size].view(
            df.np_dtype).reshape(shape)
    elif kind == 5 and x.dtype == df.np_dtype:
        out = x                                                 # in place
    else:
        out = np.full(shape, 3, df.np_dtype)                    # right
    x0, out0 = x.copy(), np.array(out, copy=True)
    try:
        r = fastisa.convert(x, dst, out=out)
    except errors.FastisaError:
        assert x.tobytes() == x0.tobytes(), "a failed call changed x"
        assert out.tobytes() == out0.tobytes(), "a failed call changed out"
        return "rejected"
    assert r is out
    assert out.tobytes() == ref.tobytes(), "out differs from a fresh conversion"
    if out is not x:
        assert x.tobytes() == x0.tobytes(), "x changed"
    return "ran"


@pytest.mark.parametrize("calls", budgets(400, 100000))
def test_convert_hostile_out(calls):
    seen = {}
    for k in range(calls):
        try:
            how = one_case(np.random.default_rng([SEED, 5, k]))
        except AssertionError as e:
            raise AssertionError(f"{Case('convert', k)}: {e}") from None
        seen[how] = seen.get(how, 0) + 1
    assert seen.get("ran", 0) > 0 and seen.get("rejected", 0) > 0, seen
