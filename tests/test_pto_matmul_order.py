"""Branch ptoisa2: TMATMUL_ACC / TMATMUL_BIAS / TGEMV_ACC / TGEMV_BIAS add C0 (or the bias)
once after the fma chain, ``C0 + sum_k a*b`` as docs/isa/TMATMUL_ACC.md writes it and
include/pto/cpu/TMatmul.hpp computes it (the chain used to start from C0: different bits
whenever the partial sums round differently)."""

from __future__ import annotations

import numpy as np
import pytest

import reference as ref
from fastisa import pto

T = pto.TileType


def _tiles(M, K, N, dt="float32"):
    a = pto.Tile(T.Left, dt, M, K)
    b = pto.Tile(T.Right, dt, K, N)
    c = pto.Tile(T.Acc, "float32", M, N)
    a.data[:] = 1
    b.data[:] = 1
    return a, b, c


@pytest.mark.parametrize("form", ["TMATMUL_ACC", "TMATMUL_BIAS", "TGEMV_ACC", "TGEMV_BIAS"])
@pytest.mark.parametrize("dt", ["float32", "float16", "bfloat16"])
def test_init_is_added_after_the_chain(form, dt):
    """1e8 + (1 + 1 + 1 + 1 + 1): the sum 5 first gives 100000008 (float32 ties 100000005 to
    it), adding 1 five times to 1e8 would leave 1e8."""
    M = 1 if form.startswith("TGEMV") else 16
    K, N = 16, 16
    a, b, c = _tiles(M, K, N, dt)
    a.data[:, 5:] = 0
    init = pto.Tile(T.Bias, "float32", 1, N) if form.endswith("BIAS") else \
        pto.Tile(T.Acc, "float32", M, N)
    init.data[:] = np.float32(1e8)
    fn = getattr(pto, form)
    if form.endswith("BIAS"):
        fn(c, a, b, init)
    else:
        fn(c, init, a, b)
    assert (c.data == np.float32(100000008.0)).all()
    want = ref.pto_matmul(a.valid, b.valid, np.float32, init=init.valid)
    assert c.valid.tobytes() == want.tobytes()


def test_acc_in_place_and_large_fast_path():
    """dst may be C0 itself; the blocked fast path (large tiles) adds C0 after the chain too."""
    rng = np.random.default_rng(2)
    M, K, N = 64, 96, 80
    a = pto.Tile(T.Left, "float32", M, K)
    b = pto.Tile(T.Right, "float32", K, N)
    c = pto.Tile(T.Acc, "float32", M, N)
    a.data[:] = rng.standard_normal((M, K)).astype(np.float32)
    b.data[:] = rng.standard_normal((K, N)).astype(np.float32)
    c.data[:] = (rng.standard_normal((M, N)) * 1e4).astype(np.float32)
    c0 = c.data.copy()
    pto.TMATMUL_ACC(c, c, a, b)
    assert c.data.tobytes() == ref.pto_matmul(a.data, b.data, np.float32, init=c0).tobytes()
