"""The NKI elementwise plan hit path's lookup (speed15b branch, issue 15): the key words are
built in C from NkiTensor's slots and looked up through a memo in front of the plan dict
(``fastisa._kernels.nki._lookup``).  These tests check that the memo changes nothing: the
key it uses is ``plan_key``'s, every change of the dict (``plans.clear()``, an entry
replaced or removed, the cache emptied when full) is seen on the next call, memo slot
collisions between many signatures give each its own plan, and with the memo the results
and errors are the full path's (bits and messages compared with ``plans.disabled()``).
"""

from __future__ import annotations

import numpy as np
import pytest

from fastisa import plans
from fastisa._kernels import nki as _k
from fastisa.errors import ConstraintError
from fastisa.nki import _compute as _c
from fastisa.nki import _plan
from fastisa.nki import isa as nisa
from fastisa.nki import language as nl
from fastisa.nki.tensor import NkiTensor


def _t(x, dt="float32", buf=nl.sbuf):
    return NkiTensor(np.array(x, dtype=np.float32).astype(np.dtype(dt)), dt, buf)


@pytest.fixture
def counted(monkeypatch):
    """Count the full path's tensor_tensor / tensor_scalar / tensor_copy calls."""
    n = {"tt": 0, "ts": 0, "tc": 0}
    tt, ts, tc = _c.tensor_tensor, _c.tensor_scalar, _c.tensor_copy

    def ctt(*a, **k):
        n["tt"] += 1
        return tt(*a, **k)

    def cts(*a, **k):
        n["ts"] += 1
        return ts(*a, **k)

    def ctc(*a, **k):
        n["tc"] += 1
        return tc(*a, **k)
    monkeypatch.setattr(_c, "tensor_tensor", ctt)
    monkeypatch.setattr(_c, "tensor_scalar", cts)
    monkeypatch.setattr(_c, "tensor_copy", ctc)
    with plans.enabled_as(True):
        plans.clear()
        yield n
    plans.clear()


def _tiles(shape=(128, 8), seed=0):
    rng = np.random.default_rng(seed)
    a = _t(rng.standard_normal(shape))
    b = _t(rng.standard_normal(shape))
    d = _t(np.zeros(shape))
    return a, b, d


def test_hit_key_is_plan_key_and_hits(counted):
    a, b, d = _tiles()
    for _ in range(5):
        nisa.tensor_tensor(d, a, b, nl.add)
        nisa.tensor_scalar(d, a, nl.multiply, 2.0)
        nisa.tensor_copy(d, b)
    assert counted == {"tt": 1, "ts": 1, "tc": 1}        # one miss each, then plan hits
    keys = set(_plan._CACHE)
    assert _k.plan_key(("tensor_tensor", nl.add, None), d, a, b) in keys
    assert _k.plan_key(("tensor_scalar", nl.multiply, False, None, False, None), d, a, 2.0,
                       None) in keys
    assert _k.plan_key(("tensor_copy", None), d, b) in keys
    assert len(keys) == 3
    np.testing.assert_array_equal(d.data, b.data)


def test_memo_sees_every_change_of_the_dict(counted):
    a, b, d = _tiles()
    nisa.tensor_tensor(d, a, b, nl.add)
    nisa.tensor_tensor(d, a, b, nl.add)
    assert counted["tt"] == 1
    plans.clear()                                   # emptied: the next call is a miss
    nisa.tensor_tensor(d, a, b, nl.add)
    assert counted["tt"] == 2
    nisa.tensor_tensor(d, a, b, nl.add)
    assert counted["tt"] == 2
    key = _k.plan_key(("tensor_tensor", nl.add, None), d, a, b)
    _plan._CACHE[key] = False                       # replaced: no plan for the signature
    nisa.tensor_tensor(d, a, b, nl.add)
    nisa.tensor_tensor(d, a, b, nl.add)
    assert counted["tt"] == 4
    del _plan._CACHE[key]                           # removed: a miss stores it again
    nisa.tensor_tensor(d, a, b, nl.add)
    assert counted["tt"] == 5 and _plan._CACHE.get(key) not in (None, False)
    nisa.tensor_tensor(d, a, b, nl.add)
    assert counted["tt"] == 5
    np.testing.assert_array_equal(d.data, a.data + b.data)


def test_memo_after_store_empties_a_full_cache(counted, monkeypatch):
    monkeypatch.setattr(plans, "MAX_ENTRIES", 3)
    tiles = [_tiles((16, f)) for f in (1, 2, 3, 4)]
    for a, b, d in tiles:
        nisa.tensor_tensor(d, a, b, nl.add)         # the 4th store empties the cache
    assert len(_plan._CACHE) == 1
    a, b, d = tiles[0]
    n = counted["tt"]
    nisa.tensor_tensor(d, a, b, nl.add)             # its plan is gone: a miss
    assert counted["tt"] == n + 1
    np.testing.assert_array_equal(d.data, a.data + b.data)


def test_many_signatures_share_memo_slots(counted):
    # more signatures than memo slots (256): each keeps its own plan and its own bits
    sigs = [_tiles((p, f), seed=p * 100 + f) for p in (1, 2, 16, 128) for f in range(1, 81)]
    for rnd in range(3):
        for a, b, d in sigs:
            d.data[...] = 0
            nisa.tensor_tensor(d, a, b, nl.subtract)
            np.testing.assert_array_equal(d.data, a.data - b.data)
    assert counted["tt"] == len(sigs)
    assert len(_plan._CACHE) == len(sigs)


def test_dtype_and_buffer_of_the_same_storage_form_differ(counted):
    # the slots read in place: a float32 and an int32 tensor with the same storage shape and
    # strides, or one in SBUF and one in PSUM, are different signatures
    a, b, d = _tiles((4, 4))
    nisa.tensor_tensor(d, a, b, nl.add)
    di = NkiTensor(np.zeros((4, 4), np.int32), "int32", nl.sbuf)
    nisa.tensor_tensor(di, a, b, nl.add)
    dp = NkiTensor(np.zeros((4, 4), np.float32), "float32", nl.psum)
    nisa.tensor_tensor(dp, a, b, nl.add)
    assert counted["tt"] == 3 and len(_plan._CACHE) == 3
    with plans.disabled():
        ri = NkiTensor(np.zeros((4, 4), np.int32), "int32", nl.sbuf)
        nisa.tensor_tensor(ri, a, b, nl.add)
    np.testing.assert_array_equal(di.data, ri.data)


def _outcome(fn):
    try:
        fn()
        return "ok"
    except Exception as e:          # noqa: BLE001 -- compared, not swallowed
        return type(e).__name__, str(e)


@pytest.mark.parametrize("on", [True, False])
def test_same_bits_and_errors_as_the_full_path(on):
    """A sequence of hits, a changed dst form, a mismatched operand and an overlap, run
    with the plans (memo) on and off: the same bits and the same messages."""
    results = []
    for enabled in (on, False):
        plans.clear()
        with plans.enabled_as(enabled):
            a, b, d = _tiles((128, 8), seed=3)
            out = []
            for _ in range(4):
                nisa.tensor_tensor(d, a, b, nl.maximum)
                out.append(d.data.tobytes())
            bad = _t(np.zeros((128, 4)))
            for _ in range(2):
                out.append(_outcome(lambda: nisa.tensor_tensor(bad, a, b, nl.add)))
            small = _t(np.zeros((64, 8)))
            for _ in range(2):
                out.append(_outcome(lambda: nisa.tensor_tensor(d, a, small, nl.add)))
            # dst overlapping a source in another layout (the plan hands it to the full path)
            buf = np.arange(128 * 16, dtype=np.float32).reshape(128, 16)
            src = NkiTensor(buf[:, 0:8], "float32", nl.sbuf)
            dst = NkiTensor(buf[:, 4:12], "float32", nl.sbuf)
            for _ in range(3):
                out.append(_outcome(lambda: nisa.tensor_tensor(dst, src, a, nl.add)))
                out.append(buf.tobytes())
            ro = _t(np.zeros((128, 8)))
            ro.data.flags.writeable = False
            for _ in range(2):
                out.append(_outcome(lambda: nisa.tensor_copy(ro, a)))
            results.append(out)
    plans.clear()
    assert results[0] == results[1]
    assert any(isinstance(r, tuple) and r[0] == ConstraintError.__name__ for r in results[0])


# ---- topk's plan (speed15b): the checks once per signature, overlaps every call ----------
def _topk_scenario():
    import warnings

    import ml_dtypes

    from fastisa import cost
    rng = np.random.default_rng(11)
    bits = (rng.standard_normal((32, 300)) * 3).astype(np.float32).astype(
        ml_dtypes.bfloat16).view(np.uint16)
    out = []
    with cost.profiling() as prof:
        src = NkiTensor(bits.copy().view(ml_dtypes.bfloat16), "bfloat16", nl.sbuf)
        val = NkiTensor(np.zeros((32, 64), np.uint16).view(ml_dtypes.bfloat16), "bfloat16",
                        nl.sbuf)
        idx = NkiTensor(np.zeros((32, 64), np.uint32), "uint32", nl.sbuf)

        def step(f):
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                out.append(_outcome(f))
            out.append(sorted(str(x.message) for x in w
                              if not issubclass(x.category, ImportWarning)))
            out.append((val.data.view(np.uint16).tobytes(), idx.data.tobytes()))

        for n, srt in ((4800, True), (4800, True), (4800, False), (4000, True), (4800, True)):
            step(lambda: nisa.topk(val_dst=val, idx_dst=idx, src=src, n=n, sorted=srt))
        src.data.view(np.uint16)[3, 7] = 0x7FC1          # a NaN: the warning, every call
        for _ in range(2):
            step(lambda: nisa.topk(val_dst=val, idx_dst=idx, src=src, n=4800, sorted=True))
        # val_dst inside src's memory, the same form as val: an OverlapError every call
        big = np.zeros((32, 400), np.uint16).view(ml_dtypes.bfloat16)
        src2 = NkiTensor(big[:, :300], "bfloat16", nl.sbuf)
        val2 = NkiTensor(big[:, 300:364], "bfloat16", nl.sbuf)
        val3 = NkiTensor(big[:, 100:164], "bfloat16", nl.sbuf)
        for v in (val2, val3, val2, val3):
            step(lambda: nisa.topk(val_dst=v, idx_dst=idx, src=src2, n=4800, sorted=True))
        for bad in (dict(n=7), dict(n=70000), dict(sorted=1)):
            kw = dict(n=4800, sorted=True)
            kw.update(bad)
            for _ in range(2):
                step(lambda: nisa.topk(val_dst=val, idx_dst=idx, src=src, **kw))
    out.append([(e.engine, e.instruction, e.cycles) for e in prof.events])
    return out


def test_topk_plan_same_bits_errors_warnings_and_costs():
    from fastisa.nki import isa as _isa
    runs = []
    for on in (True, False):
        plans.clear()
        with plans.enabled_as(on):
            runs.append(_topk_scenario())
            if on:
                assert sum(1 for v in _isa._TOPK_PLANS.values() if v) >= 3
    plans.clear()
    assert runs[0] == runs[1]
    flat = [r for r in runs[0] if isinstance(r, tuple) and len(r) == 2 and isinstance(r[0], str)]
    assert ("OverlapError" in [r[0] for r in flat]) and ("ConstraintError" in [r[0] for r in flat])
    assert any("NaN" in m for r in runs[0] if isinstance(r, list) for m in r
               if isinstance(m, str))
