"""PTO fuzzer: tiles TASSIGNed to random (often overlapping) UB addresses through TADD /
TMULS / TMOV / TTRANS, with the WHOLE UB pool compared against "sources read first, then
dst's valid region written" (nothing else may change); and TLOAD / TSTORE through
GlobalTensors with random 5-D shapes and strides (zero strides included): the tile is pad
+ the addressed elements, GM unchanged by TLOAD; TSTORE writes exactly the addressed
elements."""
from __future__ import annotations

import numpy as np
import pytest

from fastisa import errors, pto
from fastisa.pto import _tile as T

from conftest import SEED, Case, budgets

V = pto.TileType.Vec
RM, CM = pto.BLayout.RowMajor, pto.BLayout.ColMajor


def _expected_view(pool, t):
    """The dst tile's [rows, cols] view into a copy of the pool."""
    e = pool[t.addr:t.addr + t.nbytes].view(t.dtype)
    return e.reshape(t.rows, t.cols) if t.blayout == RM else e.reshape(t.cols, t.rows).T


def tile_case(rng):
    pto.set_target("A2A3")
    rows = 8 * int(rng.integers(1, 5))
    cols = 8 * int(rng.integers(1, 5))
    op = str(rng.choice(["TADD", "TMULS", "TMOV", "TTRANS"]))
    vr, vc = int(rng.integers(1, rows + 1)), int(rng.integers(1, cols + 1))
    if op == "TTRANS":
        cols = rows
        vc = vr = min(vr, vc)
    tiles = []
    for _ in range(3):
        t = pto.Tile(V, np.float32, rows, cols, blayout=RM, valid_row=vr, valid_col=vc)
        pto.TASSIGN(t, 32 * int(rng.integers(0, 64)))
        tiles.append(t)
    d, a, b = tiles
    pool = T._pool("UB")
    pool[:8192].view(np.float32)[:] = rng.standard_normal(2048).astype(np.float32)
    before = pool.copy()
    av, bv = a.valid.copy(), b.valid.copy()
    c = float(np.float32(rng.standard_normal()))
    want = {"TADD": lambda: av + bv, "TMULS": lambda: av * np.float32(c),
            "TMOV": lambda: av, "TTRANS": lambda: av.T}[op]()
    try:
        {"TADD": lambda: pto.TADD(d, a, b), "TMULS": lambda: pto.TMULS(d, a, c),
         "TMOV": lambda: pto.TMOV(d, a), "TTRANS": lambda: pto.TTRANS(d, a)}[op]()
    except (errors.OverlapError, errors.ConstraintError):
        np.testing.assert_array_equal(pool, before)
        return "rejected"
    exp = before.copy()
    _expected_view(exp, d)[:vr, :vc] = want
    np.testing.assert_array_equal(pool, exp, err_msg=f"{op} rows={rows} cols={cols} "
                                  f"valid=({vr}, {vc}) addrs={[t.addr for t in tiles]}")
    return "ran"


def gm_case(rng):
    n = int(rng.integers(1, 400))
    g = rng.standard_normal(n).astype(np.float32)
    shape = [int(rng.integers(1, 4)) for _ in range(5)]
    shape[4] = int(rng.integers(1, 20))
    strides = [int(rng.choice([0, 1, 2, 5, 17, 40, 1 << 63 - 3 if rng.random() < 0.02
                               else 3])) for _ in range(5)]
    try:
        gt = pto.GlobalTensor(g, shape=shape, strides=strides)
    except (errors.AccessError, errors.ConstraintError):
        return "rejected"
    rows, cols = gt.rows, gt.cols
    pad = pto.PadValue(int(rng.integers(0, 4)))
    t = pto.Tile(V, np.float32, rows, -(-cols // 8) * 8, valid_row=rows, valid_col=cols,
                 pad=pad)
    g0 = g.copy()
    pto.TLOAD(t, gt)
    np.testing.assert_array_equal(g, g0)
    v5 = np.lib.stride_tricks.as_strided(g0, shape=gt.shape,
                                         strides=tuple(s * 4 for s in gt.strides))
    np.testing.assert_array_equal(t.valid, v5.reshape(rows, cols))
    padv = {pto.PadValue.Max: np.inf, pto.PadValue.Min: -np.inf}.get(pad, 0.0)
    rest = t.data.copy()
    rest[:rows, :cols] = padv
    assert (rest == padv).all()
    # TSTORE of new values: exactly the addressed elements change
    t.valid[...] = rng.standard_normal((rows, cols)).astype(np.float32)
    pto.TSTORE(gt, t)
    idx = sum(np.arange(nn).reshape([-1 if k == i else 1 for k in range(5)]) * s
              for i, (nn, s) in enumerate(zip(gt.shape, gt.strides))).reshape(-1)
    untouched = np.ones(n, bool)
    untouched[idx] = False
    np.testing.assert_array_equal(g[untouched], g0[untouched])
    if np.unique(idx).size == idx.size:
        np.testing.assert_array_equal(g[idx], t.valid.reshape(-1))
    return "ran"


@pytest.mark.parametrize("calls", budgets(300, 50000))
def test_pto_tassign_aliasing_full_pool(calls):
    seen = {}
    for k in range(calls):
        try:
            how = tile_case(np.random.default_rng([SEED, 2, k]))
        except AssertionError as e:
            raise AssertionError(f"{Case('pto tiles', k)}: {e}") from None
        seen[how] = seen.get(how, 0) + 1
    assert seen.get("ran", 0) > calls // 2, seen


@pytest.mark.parametrize("calls", budgets(300, 50000))
def test_pto_globaltensor_strides(calls):
    seen = {}
    for k in range(calls):
        try:
            how = gm_case(np.random.default_rng([SEED, 3, k]))
        except AssertionError as e:
            raise AssertionError(f"{Case('pto gm', k)}: {e}") from None
        seen[how] = seen.get(how, 0) + 1
    assert seen.get("ran", 0) > calls // 4, seen
