"""Per-signature plans (fastisa.plans, issue 15): the cached path gives the same bits, the
same errors and the same cost records as the full path.

Every scenario runs twice in a fresh state, once with the plan caches on and once off
(``fastisa.plans.disabled``); each call is repeated so that, with the caches on, the
first call of a signature stores its plan and the later ones run it.  The scenarios
include what a plan must hand back to the full path: a source overlapping dst in another
layout, an operand tensor overlapping dst, scalars beyond float32, read-only and
mismatched operands, out-of-range integer scalars.
"""

from __future__ import annotations

import warnings

import ml_dtypes
import numpy as np
import pytest

from fastisa import cost, plans
from fastisa.errors import ConstraintError
from fastisa.nki import isa as nisa
from fastisa.nki import language as nl
from fastisa.nki.tensor import NkiTensor

BF16 = ml_dtypes.bfloat16
REPEAT = 3


def _specials(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * 4).astype(np.float32)
    flat = x.reshape(-1)
    flat[:8] = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-40, 3.4e38, -3.4e38][:flat.size]
    return x.astype(dtype)


def _outcome(fn):
    """(bytes of every result, or the error's type and message; the warnings' texts)."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            r = fn()
            res = ("ok", r)
        except Exception as e:          # noqa: BLE001 -- compared, not swallowed
            res = ("error", type(e).__name__, str(e))
    return res, sorted({str(x.message) for x in w})


def _both(scenario):
    """Outcomes and cost events of ``scenario`` with the caches on and off."""
    out = []
    before = plans.enabled()
    for on in (True, False):
        plans.clear()
        with cost.profiling() as prof, plans.enabled_as(on):
            r = [_outcome(step) for step in scenario()]
            if on:
                assert _n_plans() > 0        # the scenario did run plans
        out.append((r, [(e.engine, e.instruction, e.cycles) for e in prof.events],
                    [(s.engine, s.instruction, s.start_ns, s.end_ns, s.source, s.pred, s.why,
                      s.deps) for s in prof.schedule.slots]))
    assert plans.enabled() == before        # FASTISA_PLAN_CACHE=0 runs these too
    return out


def _n_plans():
    from fastisa.nki import _pe, _plan
    from fastisa.pto import _ops
    return (sum(1 for v in _plan._CACHE.values() if v is not False) + len(_ops._PLANS)
            + sum(1 for v in _pe._MM_PLANS.values() if v is not False))


def _check(scenario):
    (on, ev_on, sl_on), (off, ev_off, sl_off) = _both(scenario)
    assert len(on) == len(off)
    for i, (a, b) in enumerate(zip(on, off)):
        assert a == b, f"step {i}: cached {a!r} != full path {b!r}"
    assert ev_on == ev_off
    assert sl_on == sl_off          # the same schedule: operands, dependencies, sources


def _t(a, fmt, buf=nl.sbuf):
    return NkiTensor(np.ascontiguousarray(a), fmt, buf)


def _bytes(*ts):
    return tuple(t.data.tobytes() if isinstance(t, NkiTensor) else t.numpy().tobytes()
                 for t in ts)


# ---- NKI ------------------------------------------------------------------------------------
def _nki_elementwise():
    x = _specials((128, 8), np.float32, 1)
    y = _specials((128, 8), np.float32, 2)
    col = _specials((128, 1), np.float32, 3)
    a = _t(x, "float32")
    b = _t(y, "float32")
    ab = _t(x.astype(BF16), "bfloat16")
    c32 = _t(col, "float32")
    cbf = _t(col.astype(BF16), "bfloat16")
    d = _t(np.zeros((128, 8), np.float32), "float32")
    dbf = _t(np.zeros((128, 8), BF16), "bfloat16")
    ps = _t(np.zeros((128, 8), np.float32), "float32", nl.psum)
    big = _t(np.zeros((128, 16), np.float32), "float32")
    big.data[:, :8] = x
    ro = np.zeros((128, 8), np.float32)
    ro.flags.writeable = False
    rot = _t(ro, "float32")
    wide = _t(np.zeros((128, 9), np.float32), "float32")
    steps = []

    def rep(f):
        steps.extend([f] * REPEAT)

    rep(lambda: (nisa.tensor_scalar(d, a, nl.add, 1.5), _bytes(d))[1])
    rep(lambda: (nisa.tensor_scalar(d, a, nl.multiply, 0.75, op1=nl.add, operand1=-2),
                 _bytes(d))[1])
    rep(lambda: (nisa.tensor_scalar(d, a, nl.subtract, 3.0, reverse0=True), _bytes(d))[1])
    rep(lambda: (nisa.tensor_scalar(dbf, a, nl.multiply, np.float32(1.1)), _bytes(dbf))[1])
    rep(lambda: (nisa.tensor_scalar(d, ab, nl.maximum, c32), _bytes(d))[1])
    rep(lambda: (nisa.tensor_scalar(d, a, nl.add, cbf, op1=nl.multiply, operand1=c32),
                 _bytes(d))[1])
    rep(lambda: (nisa.tensor_scalar(d, a, nl.add, float("nan")), _bytes(d))[1])
    rep(lambda: (nisa.tensor_scalar(d, a, nl.add, 1e39), _bytes(d))[1])       # overflows
    rep(lambda: (nisa.tensor_scalar(d, a, nl.add, 1 << 30), _bytes(d))[1])    # big int
    rep(lambda: (nisa.tensor_scalar(d, a, nl.exp if hasattr(nl, "exp") else nl.abs, None),
                 _bytes(d))[1])
    rep(lambda: (nisa.tensor_scalar(d, a, nl.abs, 3.0), _bytes(d))[1])        # error
    rep(lambda: (nisa.tensor_scalar(d, d, nl.multiply, 1.25), _bytes(d))[1])  # in place
    # a source overlapping dst in another layout: the full path copies it first
    rep(lambda: (nisa.tensor_scalar(big[:, 1:9], big[:, 0:8], nl.add, 1.0), _bytes(big))[1])
    # an operand tensor overlapping dst
    rep(lambda: (nisa.tensor_scalar(big[:, 0:8], a, nl.add, big[:, 0:1]), _bytes(big))[1])
    rep(lambda: (nisa.tensor_scalar(rot, a, nl.add, 1.0), _bytes(rot))[1])    # read-only
    rep(lambda: (nisa.tensor_scalar(wide, a, nl.add, 1.0), _bytes(wide))[1])  # shapes
    rep(lambda: (nisa.tensor_scalar(ps, a, nl.add, 2.0), _bytes(ps))[1])      # PSUM dst
    rep(lambda: (nisa.tensor_tensor(d, a, b, nl.add), _bytes(d))[1])
    rep(lambda: (nisa.tensor_tensor(dbf, ab, b, nl.multiply), _bytes(dbf))[1])
    rep(lambda: (nisa.tensor_tensor(d, ps, a, nl.subtract), _bytes(d, ps))[1])
    rep(lambda: (nisa.tensor_tensor(big[:, 1:9], big[:, 0:8], a, nl.add), _bytes(big))[1])
    rep(lambda: (nisa.tensor_tensor(d, ps, ps, nl.add), _bytes(d))[1])        # error
    rep(lambda: (nisa.tensor_copy(dbf, a), _bytes(dbf))[1])
    rep(lambda: (nisa.tensor_copy(d, ab), _bytes(d))[1])
    rep(lambda: (nisa.tensor_copy(d, ps, engine=nisa.scalar_engine), _bytes(d))[1])
    rep(lambda: (nisa.tensor_copy(big[:, 2:10], big[:, 0:8]), _bytes(big))[1])
    rep(lambda: (nisa.tensor_copy(d, "not a tensor"), _bytes(d))[1])           # error
    return steps


def test_nki_plans_same_bits_errors_and_costs():
    _check(_nki_elementwise)


# speed2 branch: nc_matmul's plans (the PSUM accumulation state is read on every call)
def _nki_matmul():
    rng = np.random.default_rng(7)
    st = _t(rng.standard_normal((128, 64)).astype(BF16), "bfloat16")
    mv = _t(rng.standard_normal((128, 96)).astype(BF16), "bfloat16")
    sp = _t(_specials((64, 32), BF16, 8), "bfloat16")
    mp = _t(_specials((64, 40), BF16, 9), "bfloat16")
    s32 = _t(rng.standard_normal((32, 16)).astype(np.float32), "float32")
    m32 = _t(rng.standard_normal((32, 24)).astype(np.float32), "float32")
    big = _t(rng.standard_normal((128, 4, 128)).astype(BF16), "bfloat16")
    ps = _t(np.zeros((64, 96), np.float32), "float32", nl.psum)
    p2 = _t(np.zeros((32, 40), np.float32), "float32", nl.psum)
    p3 = _t(np.zeros((16, 24), np.float32), "float32", nl.psum)
    pw = _t(np.zeros((128, 128), np.float32), "float32", nl.psum)
    pbf = _t(np.zeros((64, 96), BF16), "bfloat16", nl.psum)
    sb = _t(np.zeros((64, 96), np.float32), "float32")
    steps = []

    def rep(f, n=REPEAT):
        steps.extend([f] * n)

    mm = nisa.nc_matmul
    rep(lambda: (mm(ps, st, mv), _bytes(ps))[1])                 # fresh, then accumulates
    rep(lambda: (mm(ps, st, mv, accumulate=False), _bytes(ps))[1])
    rep(lambda: (mm(ps, st, mv, accumulate=True), _bytes(ps))[1])
    rep(lambda: (nisa.tensor_copy(sb, ps), mm(ps, st, mv), _bytes(ps, sb))[2])  # group read
    rep(lambda: (nisa.memset(ps, 1.0), mm(ps, st, mv), _bytes(ps))[2])   # undefined: warns
    rep(lambda: (mm(ps[0:32, :], st[:, 0:32], mv), mm(ps, st, mv), _bytes(ps))[2])  # mixed
    rep(lambda: (mm(p2, sp, mp), _bytes(p2))[1])                 # NaN / Inf / subnormals
    rep(lambda: (mm(p3, s32, m32), _bytes(p3))[1])               # float32 operands
    rep(lambda: (mm(pw, big[:, 1, :], big[:, 3, :]), _bytes(pw))[1])   # strided views
    rep(lambda: (mm(pbf, st, mv), _bytes(pbf))[1])               # bf16 dst: never planned
    rep(lambda: (mm(ps, st, mv, accumulate=True), _bytes(ps))[1])
    rep(lambda: (mm(ps, mv, st), _bytes(ps))[1])                 # error: shapes
    rep(lambda: (mm(sb, st, mv), _bytes(sb))[1])                 # error: dst not in PSUM
    rep(lambda: (mm(ps, st, mv, accumulate="yes"), _bytes(ps))[1])   # error
    return steps


def test_nki_matmul_plans_same_bits_errors_warnings_and_costs():
    _check(_nki_matmul)
    from fastisa.nki import _pe
    plans.clear()
    with plans.enabled_as(True), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for step in _nki_matmul():
            _outcome(step)
        assert sum(1 for v in _pe._MM_PLANS.values() if v is not False) >= 4


def test_nki_plans_are_used_and_switch_off():
    a = _t(np.ones((128, 8), np.float32), "float32")
    d = _t(np.zeros((128, 8), np.float32), "float32")
    from fastisa.nki import _plan
    before = plans.enabled()
    plans.set_enabled(True)
    try:
        for _ in range(3):
            nisa.tensor_scalar(d, a, nl.add, 1.5)
        assert len(_plan._CACHE) == 1
        with plans.disabled():
            assert not plans.enabled()
            nisa.tensor_scalar(d, a, nl.add, 2.5)
        assert plans.enabled()
        assert np.all(d.data == 3.5)
        plans.set_enabled(False)
        assert len(_plan._CACHE) == 0
        nisa.tensor_scalar(d, a, nl.add, 0.5)
        assert len(_plan._CACHE) == 0
    finally:
        plans.set_enabled(before)


def test_nki_plans_in_simulate_profile():
    """Inside nki.simulate (a profile active) the plan path records the same schedule."""
    import fastisa.nki as nki

    def kern(x):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        a = nl.ndarray((128, 8), dtype=nl.float32, buffer=nl.sbuf)
        d = nl.ndarray((128, 8), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=a, src=x)
        c = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        ps = nl.ndarray((128, 8), dtype=nl.float32, buffer=nl.psum)
        nisa.tensor_copy(c, a[:, 0:1])
        for i in range(4):
            nisa.tensor_scalar(d, a, nl.multiply, 1.5, op1=nl.add, operand1=float(i))
            nisa.tensor_scalar(d[:, 0:4], a[:, 4:8], nl.multiply, c)
            nisa.tensor_tensor(a, d, a, nl.add)
            nisa.tensor_copy(ps, d)
            nisa.tensor_tensor(d, ps, a, nl.subtract)
        nisa.dma_copy(dst=out, src=a)
        return out

    x = _specials((128, 8), np.float32, 5)
    runs = []
    before = plans.ON[0]
    for on in (True, False):
        plans.clear()
        plans.ON[0] = on
        try:
            sim = nki.simulate(kern)
            r = sim(x)
            p = sim.profile
            runs.append((np.asarray(r).tobytes(), p.totals(),
                         [(e.engine, e.instruction, e.cycles) for e in p.events],
                         [(s.engine, s.instruction, s.start_ns, s.end_ns, s.source, s.pred,
                           s.why, s.deps) for s in p.schedule.slots],
                         p.latency().ns if hasattr(p.latency(), "ns") else None))
        finally:
            plans.ON[0] = before
    assert runs[0] == runs[1]


# ---- PTO ------------------------------------------------------------------------------------
def _pto_elementwise():
    from fastisa import pto
    from fastisa.pto import Tile, TileType

    def tile(dt, r=16, c=16, seed=0, **kw):
        t = Tile(TileType.Vec, dt, r, c, **kw)
        if np.dtype(t.dtype).kind == "f":
            with np.errstate(over="ignore"):
                t.data[...] = _specials((r, c), np.float32, seed).astype(t.dtype)
        else:
            t.data[...] = np.random.default_rng(seed).integers(-100, 100, (r, c))
        return t

    a, b, d = tile("float32", seed=1), tile("float32", seed=2), tile("float32", seed=3)
    h0, h1, hd = tile("float16", seed=4), tile("float16", seed=5), tile("float16", seed=6)
    i0, idd = tile("int16", seed=7), tile("int16", seed=8)
    dyn = tile("float32", seed=9, valid_row=pto.DYNAMIC)
    col = Tile(TileType.Vec, "float32", 16, 16, blayout=pto.BLayout.ColMajor)
    col.data[...] = _specials((16, 16), np.float32, 10)
    x0, x1 = tile("float32", seed=11), tile("float32", seed=12)
    pto.TASSIGN(x0, 0)
    pto.TASSIGN(x1, 32)                 # overlaps x0 shifted by 8 elements
    x0.buffer[...] = _specials((256,), np.float32, 11)       # the pool outlives the run
    x1.buffer[-8:] = _specials((8,), np.float32, 12)
    steps = []

    def rep(f):
        steps.extend([f] * REPEAT)

    def res(*ts):
        return tuple(t.buffer.tobytes() for t in ts)

    rep(lambda: (pto.TADD(d, a, b), res(d))[1])
    rep(lambda: (pto.TSUB(hd, h0, h1), res(hd))[1])
    rep(lambda: (pto.TMAX(d, d, b), res(d))[1])                  # in place
    rep(lambda: (pto.TADDS(d, a, 1.5), res(d))[1])
    rep(lambda: (pto.TADDS(d, a, 1e39), res(d))[1])              # overflows float32
    rep(lambda: (pto.TMULS(hd, h0, 0.1), res(hd))[1])
    rep(lambda: (pto.TADDS(idd, i0, 7), res(idd))[1])
    rep(lambda: (pto.TADDS(idd, i0, 1 << 20), res(idd))[1])      # error: out of range
    rep(lambda: (pto.TADDS(idd, i0, 2.5), res(idd))[1])          # error: not an integer
    rep(lambda: (pto.TSUBS(d, col, 2.0), res(d))[1])
    rep(lambda: (pto.TEXP(d, a), res(d))[1])
    rep(lambda: (pto.TEXP(hd, h0), res(hd))[1])
    rep(lambda: (pto.TEXP(d, col), res(d))[1])                   # error: column-major
    rep(lambda: (pto.TABS(d, h0), res(d))[1])                    # error: dtypes differ
    rep(lambda: (pto.TADD(x1, x0, a), res(x0, x1))[1])           # overlapping, copied
    rep(lambda: (pto.TEXP(x0, x1), res(x0, x1))[1])
    rep(lambda: (pto.TDIV(d, a, b), res(d))[1])                  # never planned
    rep(lambda: (dyn.set_valid_row(8), pto.TADD(dyn, dyn, a), res(dyn))[2])
    rep(lambda: (dyn.set_valid_row(16), pto.TADD(dyn, dyn, a), res(dyn))[2])
    rep(lambda: (pto.TADD(d, a, "x"), res(d))[1])                # error: not a tile
    return steps


def test_pto_plans_same_bits_errors_and_costs():
    _check(_pto_elementwise)


# ---- speed3 branch: a Tile's cached key part follows its form ------------------------------
def _pto_mutated():
    """Tiles whose valid region, format/dtype and layout change between calls (the way
    fastisa's own instructions retarget tiles: attribute writes)."""
    from fastisa import dtypes as fdt
    from fastisa import pto
    from fastisa.pto import Tile, TileType

    def tile(seed, **kw):
        t = Tile(TileType.Vec, "float32", 16, 16, **kw)
        t.data[...] = _specials((16, 16), np.float32, seed)
        return t

    a, b, d = tile(1), tile(2), tile(3)
    dyn = tile(4, valid_row=pto.DYNAMIC, valid_col=pto.DYNAMIC)
    steps = []

    def rep(f):
        steps.extend([f] * REPEAT)

    def res(*ts):
        return tuple(t.buffer.tobytes() for t in ts)

    def retype(t, name):                # reinterpret the tile's bytes in another format
        t.format = fdt.lookup(name)
        t.dtype = t.format.np_dtype
        t._buf = t._buf.view(t.dtype)

    def transpose_layout(t):            # the same bytes, column-major
        t.blayout = pto.BLayout.ColMajor
        t._rs, t._cs = 1, t.rows

    rep(lambda: (pto.TADD(d, a, b), res(d))[1])
    rep(lambda: (pto.TADD(dyn, a, b), res(dyn))[1])
    steps.append(lambda: dyn.set_valid_col(8))
    rep(lambda: (pto.TADD(dyn, a, b), res(dyn))[1])              # error: valid shapes differ
    steps.append(lambda: setattr(dyn, "_vr", 4))                # a direct write, too
    rep(lambda: (pto.TEXP(dyn, dyn), res(dyn))[1])
    steps.append(lambda: (dyn.set_valid_row(16), dyn.set_valid_col(16)))
    rep(lambda: (pto.TEXP(dyn, a), res(dyn))[1])
    steps.append(lambda: retype(b, "int32"))
    rep(lambda: (pto.TADD(d, a, b), res(d))[1])                  # error: dtypes differ
    steps.append(lambda: (retype(a, "int32"), retype(d, "int32")))
    rep(lambda: (pto.TADD(d, a, b), res(d))[1])                  # int32 wraps
    steps.append(lambda: (retype(a, "float32"), retype(b, "float32"), retype(d, "float32")))
    rep(lambda: (pto.TADD(d, a, b), res(d))[1])
    steps.append(lambda: transpose_layout(a))
    rep(lambda: (pto.TADD(d, a, b), res(d))[1])                  # mixed layouts
    rep(lambda: (pto.TEXP(d, a), res(d))[1])                     # error: column-major
    steps.append(lambda: delattr(a, "_vc"))
    rep(lambda: (pto.TADD(d, a, b), res(d))[1])                  # a broken tile: error
    return steps


def test_pto_plans_follow_tile_changes():
    """Changing a tile's valid region, dtype or layout after a call gives that call a new
    plan (or the full path's error): the same bits and errors as without plans."""
    _check(_pto_mutated)


def test_tile_key_part_is_cached_and_dropped_on_change():
    from fastisa import dtypes as fdt
    from fastisa import pto
    from fastisa._kernels import tile as k
    from fastisa.pto import Tile, TileType
    import copy
    import pickle
    t = Tile(TileType.Vec, "float32", 16, 16, valid_row=pto.DYNAMIC)
    u = Tile(TileType.Vec, "float32", 16, 16, valid_row=pto.DYNAMIC)
    p = k.tile_part(t)
    assert p is not None and k.cached_part(t) is p
    assert k.tile_part(u) is p                      # one part per form
    for c in (copy.deepcopy(t), copy.copy(t), pickle.loads(pickle.dumps(t))):
        assert k.cached_part(c) is None and k.tile_part(c) is p     # re-interned
        assert (c.data == t.data).all() and c.valid_shape == t.valid_shape
    key = k.tile_key(("TADD",), t, u)
    t.set_valid_row(8)
    assert k.cached_part(t) is None
    assert k.tile_part(t) is not p and k.tile_key(("TADD",), t, u) != key
    t.set_valid_row(16)
    assert k.tile_part(t) is p
    for name, value in (("format", fdt.lookup("int32")), ("blayout", pto.BLayout.ColMajor),
                        ("_rs", 1), ("_cs", 16), ("loc", TileType.Mat), ("dtype", np.int32)):
        k.tile_part(t)
        setattr(t, name, value)
        assert k.cached_part(t) is None, name
    k.tile_part(t)
    del t.dtype
    assert k.cached_part(t) is None
    t.addr = 5                                       # not part of the form: kept
    k.tile_part(t)
    t.addr = None
    assert k.cached_part(t) is not None


@pytest.mark.parametrize("n", [None, 1, 2])
def test_nki_thread_count_is_decided_once_and_settable(n):
    from fastisa.nki import _compute
    old = _compute.THREADS
    try:
        _compute.set_num_threads(n)
        first = _compute._threads()
        assert _compute._threads() == first
        if n is not None:
            assert first == n
        else:
            assert first >= 1
    finally:
        _compute.THREADS = old
        _compute._DEFAULT_THREADS.clear()


def test_compiled_array_span_matches_the_python_one():
    """fastisa._kernels.span.array_span gives schedule._array_span_py's tuple for views of
    every kind (slices, negative and zero strides, transposes, reshapes, non-contiguous
    roots, foreign bases)."""
    from fastisa import schedule as S
    from fastisa._kernels.span import array_span
    base = np.arange(4 * 6 * 8, dtype=np.float32).reshape(4, 6, 8)
    flat = np.zeros(1000, np.uint16)
    views = [base, base[1:3], base[:, 2:5, 1:7], base[::-1], base[:, ::-2, 3], base.T,
             base[2, 3], base[0, 0, :0], base.reshape(24, 8)[5:9],
             np.lib.stride_tricks.as_strided(base, (4, 3), (32, 0)),
             flat[10:500].reshape(49, 10)[:, 1:4], base[:, 1::2][1:], base[0:1, 5:6, 7:8],
             np.frombuffer(bytearray(64), np.uint8).reshape(8, 8)[2:4, 1:3],
             base.view(np.uint8)[:, :, 4:20]]
    for v in views:
        assert array_span(v, S._root_serial) == S._array_span_py(v), v.shape


def test_compiled_spans_and_user_source_match_the_python_ones():
    """fastisa._kernels.span.spans / user_source_frames give schedule._spans_py's list and
    _user_source_py's line for every kind of operand: arrays, NKI tensors and their .ap
    views, PTO tiles, (space, lo, hi) ranges, None, objects without memory."""
    import sys
    from fastisa import pto, schedule as S
    from fastisa._kernels.span import spans, user_source_frames
    from fastisa.nki import language as nl
    from fastisa.nki.tensor import NkiTensor
    base = np.arange(4 * 6 * 8, dtype=np.float32).reshape(4, 6, 8)
    t = NkiTensor(np.zeros((4, 16), np.float32), "float32", nl.sbuf)
    tile = pto.Tile(pto.TileType.Vec, np.float32, 16, 16)
    objs = [base, base[1:3, 2:5], t, t[1:3, 4:8], t.ap([[16, 2], [1, 8]]), tile,
            ("x", 4, 12), None, object(), 3.0, [base]]
    for o in objs + [objs, tuple(objs), None]:
        assert spans(o, S._root_serial) == S._spans_py(o), o
    assert user_source_frames(sys._getframe()) == S._user_source_py(sys._getframe())
    assert user_source_frames(None) == S._user_source_py(None) == ""


def test_record_hooks_see_the_instruction_frame_with_and_without_plans():
    """fastisa.cost.RECORD_HOOKS that read the instruction's operands from
    ``sys._getframe(2)`` (hook <- cost.record <- the instruction) see the same operands
    whether the plan or the full path ran the call."""
    import sys
    from fastisa import pto
    from fastisa.pto import Tile, TileType
    seen = []

    def hook(engine, instruction, cycles):
        f = sys._getframe(2)
        while f is not None:
            code = f.f_code
            names = code.co_varnames[:code.co_argcount]
            seen.append((instruction, code.co_name if not code.co_name.startswith("_") else "_",
                         tuple(
                (k, id(f.f_locals.get(k))) for k in names
                if isinstance(f.f_locals.get(k), (NkiTensor, Tile)))))
            if not code.co_name.startswith("_"):
                break
            f = f.f_back

    a = _t(np.ones((128, 8), np.float32), "float32")
    d = _t(np.zeros((128, 8), np.float32), "float32")
    ta, td = Tile(TileType.Vec, "float32", 16, 16), Tile(TileType.Vec, "float32", 16, 16)

    def calls():
        for _ in range(3):
            nisa.tensor_scalar(d, a, nl.add, 1.5)
            nisa.tensor_tensor(d, a, d, nl.add)
            nisa.tensor_copy(d, a)
            pto.TADD(td, ta, td)
            pto.TEXP(td, ta)
            pto.TADDS(td, ta, 2.0)

    cost.RECORD_HOOKS.insert(0, hook)
    try:
        plans.clear()
        calls()
        on = list(seen)
        seen.clear()
        with plans.disabled():
            calls()
        off = list(seen)
    finally:
        cost.RECORD_HOOKS.remove(hook)
    assert on == off


# speed2 branch: plan paths skip cost.record only when it would do nothing
def test_record_idle_only_without_profiles_and_with_idle_hooks():
    import contextvars
    from fastisa.nki import _compute  # noqa: F401 -- the NKI hooks are registered
    from fastisa.nki.tensor import _PENDING
    assert cost.record_idle()
    with cost.profiling():
        assert not cost.record_idle()
    var = contextvars.ContextVar("t_idle", default=None)
    calls = []

    def hook(engine, instruction, cycles):
        calls.append(instruction)

    cost.RECORD_HOOKS.append(hook)
    try:
        assert not cost.record_idle()           # not declared: always called
        a = _t(np.ones((128, 8), np.float32), "float32")
        d = _t(np.zeros((128, 8), np.float32), "float32")
        with plans.enabled_as(True):
            for _ in range(3):
                nisa.tensor_scalar(d, a, nl.add, 1.5)
        assert calls == ["tensor_scalar"] * 3
        cost.idle_when(hook, context=var)
        assert cost.record_idle()
        tok = var.set(1)
        assert not cost.record_idle()
        var.reset(tok)
        _PENDING.items.append((False, a))       # a PSUM access waiting to be applied
        try:
            assert not cost.record_idle()
        finally:
            _PENDING.items.clear()
    finally:
        cost.RECORD_HOOKS.remove(hook)
    assert cost.record_idle()


def test_plans_inside_simulate_call_the_launch_and_capacity_hooks():
    """Inside nki.simulate the kernel instance is active: the plan path still records
    (SBUF capacity with liveness sees the planned instructions' operands)."""
    import fastisa.nki as nki
    seen = []

    def kern(x):
        a = nl.ndarray((128, 8), dtype=nl.float32, buffer=nl.sbuf)
        d = nl.ndarray((128, 8), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=a, src=x)
        for _ in range(3):
            nisa.tensor_scalar(d, a, nl.add, 1.5)
            seen.append(cost.record_idle())
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=d)
        return out

    with plans.enabled_as(True):
        r = nki.simulate(kern)(np.ones((128, 8), np.float32))
    assert np.all(np.asarray(r) == 2.5)
    assert seen == [False] * 3


# ---- nkiattn branch: plan keys of access-pattern views ----------------------------------
# fastisa._kernels.nki.plan_key described only objects of exactly the NkiTensor class;
# an ``.ap`` view (an NkiTensor subclass, how nki-library's TensorView passes every
# operand) was keyed by its class alone, so views of any shape, strides, dtype or buffer
# shared one key: nc_matmul's plan for a bfloat16 view decoded a float16 view of the same
# bytes as bfloat16 (silently), and a plan for a contiguous dst view was hit by a strided
# one (the ValueError nki-library's attention_block_tkg met).

def _ap_operands():
    rng = np.random.default_rng(11)
    bits = rng.integers(0x3000, 0x4000, size=(64, 32)).astype(np.uint16)   # finite both ways
    sb = _t(bits.view(BF16).copy(), "bfloat16")
    mv = _t(rng.standard_normal((64, 16)).astype(BF16), "bfloat16")
    return bits, sb, mv


def test_plan_key_tells_access_pattern_views_apart():
    from fastisa._kernels import nki as k
    _, sb, mv = _ap_operands()
    ps = _t(np.zeros((32, 64), np.float32), "float32", nl.psum)
    head = ("nc_matmul",)
    base = k.plan_key(head, ps.ap([[64, 32], [1, 16]]), sb.ap([[32, 64], [1, 32]]), mv)
    # the same view built again: the same key (so views still get plans)
    assert k.plan_key(head, ps.ap([[64, 32], [1, 16]], offset=16),
                      sb.ap([[32, 64], [1, 32]]), mv) == base
    others = [
        (ps.ap([[64, 32], [2, 16]]), sb.ap([[32, 64], [1, 32]]), mv),            # dst strides
        (ps.ap([[64, 32], [1, 8]]), sb.ap([[32, 64], [1, 32]]), mv),             # dst shape
        (ps.ap([[64, 32], [1, 16]]), sb.ap([[32, 64], [1, 32]], dtype=nl.float16), mv),
        (ps.ap([[64, 32], [1, 16]]), sb.ap([[32, 32], [1, 32]]), mv),            # operand shape
        (_t(np.zeros((32, 16), np.float32), "float32", nl.sbuf).ap([[16, 32], [1, 16]]),
         sb.ap([[32, 64], [1, 32]]), mv),                                        # dst buffer
        (ps[:, 0:16], sb.ap([[32, 64], [1, 32]]), mv),      # an NkiTensor, not a view
    ]
    keys = {k.plan_key(head, *o) for o in others}
    assert base not in keys and len(keys) == len(others)


def test_nc_matmul_plan_is_not_hit_by_a_view_of_another_dtype_or_layout():
    """A plan stored for bfloat16 ``.ap`` operands and a contiguous ``.ap`` dst, then a
    float16 view of the same bytes and a strided dst view: bit-exact against the oracle
    (before the fix the float16 bytes were decoded as bfloat16)."""
    import reference as ref
    bits, sb, mv = _ap_operands()
    pat = [[32, 64], [1, 32]]
    want_bf = ref.nki_matmul(bits.view(BF16).astype(np.float32), mv.data.astype(np.float32),
                             np.zeros((32, 16), np.float32))
    want_f16 = ref.nki_matmul(bits.view(np.float16).astype(np.float32),
                              mv.data.astype(np.float32), np.zeros((32, 16), np.float32))
    assert not np.array_equal(want_bf, want_f16)
    plans.clear()
    with plans.enabled_as(True):
        for _ in range(REPEAT):                         # plans for bf16 views
            d = nl.ndarray((32, 16), nl.float32, buffer=nl.psum)
            nisa.nc_matmul(d.ap([[16, 32], [1, 16]]), sb.ap(pat), mv)
            assert (d.data.view(np.uint32) == want_bf.view(np.uint32)).all()
        d = nl.ndarray((32, 16), nl.float32, buffer=nl.psum)
        nisa.nc_matmul(d.ap([[16, 32], [1, 16]]), sb.ap(pat, dtype=nl.float16), mv)
        assert (d.data.view(np.uint32) == want_f16.view(np.uint32)).all()
        wide = nl.ndarray((32, 48), nl.float32, buffer=nl.psum)
        for c in (0, 16, 32):                           # strided dst views, same shape
            nisa.nc_matmul(wide.ap([[48, 32], [1, 16]], offset=c), sb.ap(pat), mv)
            assert (wide.data[:, c:c + 16].view(np.uint32) == want_bf.view(np.uint32)).all()
    from fastisa.nki import _pe
    assert any(v is not False for v in _pe._MM_PLANS.values())     # views are planned
    plans.clear()


def test_plan_key_refuses_operands_too_large_for_a_key():
    """High-rank operands get no key (TypeError, which the callers turn into the full path)
    instead of writes past the key's words; the instructions still run."""
    from fastisa._kernels import nki as k
    shp = (2,) * 14
    a = _t(np.arange(2 ** 14, dtype=np.float32).reshape(shp), "float32")
    b = _t(np.zeros(shp, np.float32), "float32")
    with pytest.raises(TypeError):
        k.plan_key(("tensor_copy",), a, b, a, b)
    small = _t(np.arange(8, dtype=np.float32).reshape(2, 4), "float32")
    k.plan_key(("tensor_copy",), small, small, small, small)       # a key fits
    big = (2,) * 16
    x = _t(np.zeros(big, np.float32), "float32")
    for on in (True, False):          # the rank error, not a crash, with the caches on or off
        with plans.enabled_as(on), pytest.raises(ConstraintError, match="rank <= 5"):
            nisa.tensor_tensor(x, x, x, nl.add)

# ---- nkifull: .ap() views of different formats never share an nc_matmul plan -------------

def test_nki_matmul_ap_views_of_different_formats_are_not_one_plan():
    """nc_matmul's plan key describes an ``.ap()`` view (a NkiTensor subclass) by its type
    alone; such operands take the full path, so an fp8 call's plan is never used for bf16
    operands of the same shape (nki-library attention_block_tkg returned NaN after an fp8
    case had run in the same process)."""
    import reference as ref
    rng = np.random.default_rng(5)
    with plans.enabled_as(True):
        plans.clear()
        outs = []
        for fmt in ("float8_e4m3", "bfloat16", "float8_e4m3", "bfloat16"):
            npd = getattr(ml_dtypes, fmt)
            a = rng.integers(-4, 5, (128, 256)).astype(npd)
            b = rng.integers(-4, 5, (128, 256)).astype(npd)
            st = NkiTensor(a, fmt).ap([[256, 128], [1, 64]])     # [128, 64] views
            mv = NkiTensor(b, fmt).ap([[256, 128], [1, 8]])      # [128, 8]
            dst = NkiTensor(np.zeros((64, 8), np.float32), "float32", nl.psum)
            nisa.nc_matmul(dst, st, mv)
            want = ref.nki_matmul(a[:, :64], b[:, :8], np.zeros((64, 8), np.float32))
            outs.append((dst.data.view(np.uint32), want.view(np.uint32)))
        for got, want in outs:
            assert (got == want).all()


def test_compiled_plain_view_matches_the_python_one():
    """fastisa._kernels.nki.plain_view gives tensor._plain_view_py's view (same shape,
    strides and address) or None, for ints, slices (None, negative, out-of-range and
    non-int fields, zero and negative steps), bools, tuples longer than the rank, and
    both the HBM and the on-chip rule."""
    from fastisa._kernels.nki import plain_view
    from fastisa.nki.tensor import _plain_view_py
    d = np.zeros((4, 3, 6), np.float32)
    parts = [0, 2, -1, 3, -4, 5, 7, True, 1.0, None, slice(None), slice(1, 3), slice(0, 4),
             slice(2, 2), slice(-1, None), slice(0, 9), slice(1, None, 2), slice(None, None, 0),
             slice(None, None, -1), slice(0, 2, 2.0), slice(np.int64(1), 3), 2 ** 70,
             slice(0, 2 ** 70), Ellipsis]
    rng = np.random.default_rng(0)
    keys = list(parts) + [tuple(rng.choice(len(parts), n)) for n in (1, 2, 3, 4)
                          for _ in range(300)]
    for key in keys:
        if isinstance(key, tuple):
            key = tuple(parts[i] for i in key)
        for ints in (True, False):
            want = _plain_view_py(d, key, ints)
            got = plain_view(d, key, ints)
            if want is None:
                assert got is None, (key, ints)
            else:
                assert got is not None, (key, ints)
                assert (got.shape, got.strides, got.__array_interface__["data"]) == \
                    (want.shape, want.strides, want.__array_interface__["data"]), (key, ints)
