"""nkibench: the per-signature plans of dma_transpose, dma_compute, nc_stream_shuffle,
bn_stats and bn_aggr (fastisa.nki._isaplan), the plain-index fast path of NkiTensor
indexing, and the blocked 16-bit transpose kernel.

Every scenario runs twice from a fresh state, with the plan caches on and off
(``fastisa.plans.disabled``), each call repeated so that the cached run stores a plan and
then runs it; results (bytes), errors (type and message) and cost records must be the
same.  The scenarios include what a plan must hand back to the full path: a dst that is a
source, a source overlapping dst in another layout, a view with the planned form at a
start partition the instruction rejects.
"""

from __future__ import annotations

import hashlib

import ml_dtypes
import numpy as np
import pytest

import reference as ref
from fastisa import cost, plans
from fastisa.errors import AccessError
from fastisa.nki import _isaplan
from fastisa.nki import isa as nisa
from fastisa.nki import language as nl
from fastisa.nki import tensor as _tensor
from fastisa.nki.tensor import NkiTensor

BF16 = ml_dtypes.bfloat16
REPEAT = 3


def T(a, fmt, buf=nl.sbuf):
    return NkiTensor(np.ascontiguousarray(a), fmt, buf)


def _outcome(fn):
    try:
        r = fn()
        return ("ok", r)
    except Exception as e:          # noqa: BLE001 -- compared, not swallowed
        return ("error", type(e).__name__, str(e))


def _check(scenario):
    res = []
    for on in (True, False):
        plans.clear()
        with cost.profiling() as prof:
            if on:     # plans on whatever FASTISA_PLAN_CACHE says, as test_plans.py does
                with plans.enabled_as(True):
                    r = [_outcome(s) for s in scenario() for _ in range(REPEAT)]
                assert any(v is not None for v in _isaplan.CACHE.values())
            else:
                with plans.disabled():
                    r = [_outcome(s) for s in scenario() for _ in range(REPEAT)]
        res.append((r, [(e.engine, e.instruction, e.cycles) for e in prof.events]))
    (a, ea), (b, eb) = res
    assert len(a) == len(b)
    for i, (x, y) in enumerate(zip(a, b)):
        assert x == y, f"step {i}: cached {x!r} != full path {y!r}"
    assert ea == eb


def _bits(t):
    """A digest of the tensor's bytes (compared between the two runs)."""
    return hashlib.sha256(np.ascontiguousarray(t.data).view(np.uint8).tobytes()).hexdigest()


def test_dma_transpose_plan_same_bits_and_errors():
    def scenario():
        rng = np.random.default_rng(0)
        src = T(rng.integers(0, 65536, (128, 512)).astype(np.uint16).view(BF16), "bfloat16",
                nl.hbm)
        big = T(np.zeros((4, 128, 128), BF16), "bfloat16")
        s3 = T(rng.integers(0, 65536, (4, 8, 24)).astype(np.uint16).view(BF16), "bfloat16")
        d3 = T(np.zeros((24, 8, 4), BF16), "bfloat16")
        own = T(np.zeros((128, 128), BF16), "bfloat16")

        def tr(k):
            nisa.dma_transpose(big[k], src[:, 128 * k:128 * (k + 1)])
            return _bits(big)

        def tr3():
            nisa.dma_transpose(d3, s3, axes=(2, 1, 0))
            return _bits(d3)

        def overlap():                  # same form as a planned call, but dst is src
            nisa.dma_transpose(own, own)

        def bad_axes():
            nisa.dma_transpose(d3, s3, axes=(0, 1, 2))
        return [lambda k=k: tr(k) for k in range(4)] + [tr3, overlap, bad_axes]
    _check(scenario)


def test_stream_shuffle_plan_same_bits_and_start_partition():
    mask = [(i * 7 + 3) % 32 for i in range(32)]
    mask[5] = 255

    def scenario():
        rng = np.random.default_rng(1)
        a = T(rng.standard_normal((128, 300)).astype(np.float32), "float32")
        d = T(np.zeros((128, 300), np.float32), "float32")
        big = T(rng.standard_normal((128, 64)).astype(np.float32), "float32")
        dq = T(np.zeros((32, 64), np.float32), "float32")

        def shuffle():
            nisa.nc_stream_shuffle(d, a, mask)
            return _bits(d)

        def in_place():
            nisa.nc_stream_shuffle(a, a, mask)
            return _bits(a)

        def quadrant(q):        # one form, start partitions 0, 32 (allowed) then 16 (not)
            nisa.nc_stream_shuffle(dq, big[q:q + 32], mask)
            return _bits(dq)
        def other_masks(m):     # equal values of other types, a bad entry, an unhashable one
            nisa.nc_stream_shuffle(d, a, m)
            return _bits(d)
        return [shuffle, in_place, lambda: quadrant(0), lambda: quadrant(32),
                lambda: quadrant(16), lambda: other_masks([float(m) for m in mask]),
                lambda: other_masks(tuple(np.int64(m) for m in mask)),
                lambda: other_masks([True] + mask[1:]), lambda: other_masks([40] + mask[1:]),
                lambda: other_masks([[0]] + mask[1:]), lambda: other_masks(mask[:31])]
    _check(scenario)


def test_dma_compute_plan_same_bits_with_aliasing():
    def scenario():
        rng = np.random.default_rng(2)
        xs = [T(rng.standard_normal((64, 96)).astype(np.float32), "float32", nl.hbm)
              for _ in range(3)]
        d = T(np.zeros((64, 96), np.float32), "float32", nl.hbm)
        flat = T(rng.standard_normal((96, 64)).astype(np.float32), "float32", nl.hbm)
        mix = T(rng.standard_normal((64, 96)).astype(BF16), "bfloat16", nl.hbm)
        db = T(np.zeros((64, 96), BF16), "bfloat16", nl.hbm)

        def plain():
            nisa.dma_compute(d, xs, nl.add)
            return _bits(d)

        def dst_is_source():
            nisa.dma_compute(xs[1], xs, nl.add, scales=[1.0, 1.0, 1.0])
            return _bits(xs[1])

        def other_layout():     # a source over dst's memory in another layout: copied first
            nisa.dma_compute(flat, [xs[0], NkiTensor(flat.data.T, "float32", nl.hbm), xs[2]],
                             nl.add)
            return _bits(flat)

        def mixed():
            nisa.dma_compute(db, [mix, xs[0], mix], nl.add)
            return _bits(db)

        def bad_scale():
            nisa.dma_compute(d, xs, nl.add, scales=[1.0, 2.0, 1.0])
        return [plain, dst_is_source, other_layout, mixed, bad_scale]
    _check(scenario)


def test_dma_compute_matches_oracle_on_the_plan_path():
    rng = np.random.default_rng(3)
    xs = [T(rng.standard_normal((128, 2048)).astype(np.float32), "float32", nl.hbm)
          for _ in range(3)]
    d = T(np.zeros((128, 2048), np.float32), "float32", nl.hbm)
    for _ in range(2):
        nisa.dma_compute(d, xs, nl.add)
        w = ref.nki_isa_dma_compute([x.data for x in xs])
        assert (d.data.reshape(-1).view(np.uint32) == np.asarray(w, np.float32).view(np.uint32)).all()


def test_bn_stats_aggr_plan_same_bits():
    def scenario():
        rng = np.random.default_rng(4)
        x = T(rng.standard_normal((128, 1024)).astype(np.float32), "float32")
        xb = T(rng.standard_normal((128, 300)).astype(BF16), "bfloat16")
        st = T(np.zeros((128, 12), np.float32), "float32")
        sb = T(np.zeros((128, 6), BF16), "bfloat16")
        mv = T(np.zeros((128, 2), np.float32), "float32")

        def stats(k):
            nisa.bn_stats(st[:, 6 * k:6 * k + 6], x[:, 512 * k:512 * (k + 1)])
            return _bits(st)

        def aggr():
            nisa.bn_aggr(mv, st)
            return _bits(mv)

        def to_bf16():              # a bfloat16 dst: always the full path
            nisa.bn_stats(sb, xb)
            nisa.bn_aggr(mv, sb)
            return _bits(sb) + _bits(mv)

        def too_wide():
            nisa.bn_stats(st[:, :6], x)
        return [lambda: stats(0), lambda: stats(1), aggr, to_bf16, too_wide]
    _check(scenario)


# ---- NkiTensor: plain ints and slices -------------------------------------------------
_KEYS = [0, -1, 3, (1, 2), (1, 2, 3), (), slice(None), (slice(0, 2, 1), 1), (slice(1, 1),),
         (slice(None, None, 2), slice(1, 3)), (Ellipsis, 0), (None,), (0, slice(2, None)),
         4, (0, 0, 0, 0), (slice(0, 5),), (slice(-1, None),), (slice(None, None, -1),),
         (True,), (slice(0, 2, 0),), (np.int64(1), 2), (slice(1.0, 2),), (2, -4)]


@pytest.mark.parametrize("shape", [(4, 3, 4), (6,)])
@pytest.mark.parametrize("buf", [nl.sbuf, nl.hbm], ids=["sbuf", "hbm"])
@pytest.mark.parametrize("key", _KEYS, ids=repr)
def test_plain_index_fast_path_is_the_general_path(key, buf, shape, monkeypatch):
    t = NkiTensor(np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape), "float32",
                  buf, name="x")

    def view(tensor):
        try:
            v = tensor[key]
            v.data
        except AccessError as e:
            return ("error", str(e))
        return (type(v), v.dtype, v.buffer, v.name, v.data.shape, v.data.strides,
                v.data.__array_interface__["data"][0], v.data.flags.writeable,
                v.data.tobytes())
    fast = view(t)
    monkeypatch.setattr(_tensor, "_plain_view", lambda d, k, ints=True: None)
    assert fast == view(t)


# ---- the blocked 16-bit transpose ------------------------------------------------------
@pytest.mark.parametrize("shape", [(128, 128), (7, 5), (9, 17), (16, 16), (33, 100),
                                   (100, 33), (130, 129), (300, 72)])
def test_blocked_16bit_transpose_every_tail(shape):
    from fastisa._kernels import move
    rng = np.random.default_rng(5)
    big = rng.integers(0, 65536, (shape[0], shape[1] + 40)).astype(np.uint16)
    x = big[:, 3:3 + shape[1]]                  # a strided source
    y = np.full(shape[::-1], 0xABCD, np.uint16)
    move.strided(y, x.T)
    assert (y == x.T).all()
    z = np.full((shape[1], shape[0] + 9), 0xABCD, np.uint16)   # a strided dst
    move.strided(z[:, 4:4 + shape[0]], x.T)
    assert (z[:, 4:4 + shape[0]] == x.T).all()
    assert (z[:, :4] == 0xABCD).all() and (z[:, 4 + shape[0]:] == 0xABCD).all()


# ---- threads: large dma_compute sums and stream shuffles split across OpenMP threads -----
def _threaded_run(threads):
    from fastisa.nki import _compute
    _compute.set_num_threads(threads)
    try:
        rng = np.random.default_rng(6)
        xs = [T(rng.standard_normal((128, 1031)).astype(np.float32), "float32", nl.hbm)
              for _ in range(3)]
        d = T(np.zeros((128, 1031), np.float32), "float32", nl.hbm)
        nisa.dma_compute(d, xs, nl.add)
        w = np.asarray(ref.nki_isa_dma_compute([x.data for x in xs]), np.float32)
        assert (d.data.reshape(-1).view(np.uint32) == w.view(np.uint32)).all()
        nisa.dma_compute(xs[2], xs, nl.add)                     # dst is a source
        mask = [(i * 5 + 1) % 32 for i in range(32)]
        mask[9] = 255
        sh = T(np.full((128, 1031), 7.0, np.float32), "float32")
        want = ref.nki_isa_stream_shuffle(sh.data, xs[2].data, mask)
        nisa.nc_stream_shuffle(sh, T(xs[2].data, "float32"), mask)
        assert (sh.data.view(np.uint32) == want.view(np.uint32)).all()
        return _bits(d), _bits(xs[2]), _bits(sh)
    finally:
        _compute.set_num_threads(None)


@pytest.mark.parametrize("n", [2, 3])
def test_dma_compute_and_shuffle_bits_do_not_depend_on_threads(n):
    assert _threaded_run(1) == _threaded_run(n)


@pytest.mark.parametrize("ns", [1, 2, 5, 16])
def test_dma_compute_plan_any_source_count(ns):
    def scenario():
        rng = np.random.default_rng(7)
        xs = [T(rng.standard_normal((8, 33)).astype(np.float32), "float32", nl.hbm)
              for _ in range(ns)]
        d = T(np.zeros((8, 33), np.float32), "float32", nl.hbm)

        def run():
            nisa.dma_compute(d, xs, nl.add)
            w = np.asarray(ref.nki_isa_dma_compute([x.data for x in xs]), np.float32)
            assert (d.data.reshape(-1).view(np.uint32) == w.view(np.uint32)).all()
            return _bits(d)
        return [run]
    _check(scenario)


def test_nc_matmul_plan_with_a_strided_psum_view_takes_the_full_path():
    """A planned nc_matmul whose next dst is a strided PSUM view (columns of a wider tile,
    as nki-library's attention_tkg writes) runs the full path with the same bits; the plan
    hit refused such a view with a ValueError from the kernel's contiguous-array check."""
    rng = np.random.default_rng(3)
    a = ref.nki_round(rng.standard_normal((128, 64)), "bfloat16").astype(np.float32)
    b = ref.nki_round(rng.standard_normal((128, 32)), "bfloat16").astype(np.float32)
    st, mv = T(a, "float32"), T(b, "float32")
    with plans.enabled_as(True):
        for _ in range(REPEAT):                       # a plan for a contiguous dst
            d = nl.ndarray((64, 32), nl.float32, buffer=nl.psum)
            nisa.nc_matmul(d, st, mv)
        wide = nl.ndarray((64, 96), nl.float32, buffer=nl.psum)
        for c in (0, 32, 64):
            nisa.nc_matmul(wide[:, c:c + 32], st, mv)
    want = ref.nki_matmul(a, b, np.zeros((64, 32), np.float32))
    for c in (0, 32, 64):
        assert (wide.data[:, c:c + 32].view(np.uint32) == want.view(np.uint32)).all()


# ---- speed14 branch (issue 14): the compiled plan hit paths ---------------------------
# fastisa._kernels.nki.hit_transpose / hit_shuffle / hit_dma_sum run the plans of
# dma_transpose, nc_stream_shuffle and dma_compute; these scenarios compare them with the
# full path (bits, errors, warnings, cost records) on forms that must hand calls back.
import warnings as _warnings

from fastisa._kernels import move as _kmove
from fastisa._kernels import nki as _knki
from fastisa.nki import _move


def _outcome_w(fn):
    """_outcome plus the texts of the warnings the call raised."""
    with _warnings.catch_warnings(record=True) as w:
        _warnings.simplefilter("always")
        r = _outcome(fn)
    return r, sorted({str(x.message) for x in w})


def _check_compiled(scenario, kinds):
    """_check with warnings, and the compiled plans of ``kinds`` stored by the cached run."""
    res = []
    for on in (True, False):
        plans.clear()
        with cost.profiling() as prof, plans.enabled_as(on):
            r = [_outcome_w(s) for s in scenario() for _ in range(REPEAT)]
            if on:
                have = {type(v) for v in _isaplan.CACHE.values()}
                assert set(kinds) <= have, (kinds, have)
        res.append((r, [(e.engine, e.instruction, e.cycles) for e in prof.events],
                    [(s.engine, s.instruction, s.start_ns, s.end_ns, s.source, s.pred, s.why,
                      s.deps) for s in prof.schedule.slots]))
    (a, ea, sa), (b, eb, sb) = res
    assert len(a) == len(b)
    for i, (x, y) in enumerate(zip(a, b)):
        assert x == y, f"step {i}: cached {x!r} != full path {y!r}"
    assert ea == eb
    assert sa == sb             # the same schedule: operands, dependencies, sources


def _u16(rng, shape):
    return rng.integers(0, 65536, shape).astype(np.uint16).view(BF16)


def test_compiled_transpose_plan_same_bits_errors_and_costs():
    def scenario():
        rng = np.random.default_rng(11)
        src = T(_u16(rng, (128, 700)), "bfloat16", nl.hbm)
        d = T(np.zeros((100, 128), BF16), "bfloat16")
        f32 = T(rng.standard_normal((40, 72)).astype(np.float32), "float32", nl.hbm)
        d32 = T(np.zeros((72, 40), np.float32), "float32")
        s4 = T(_u16(rng, (2, 3, 4, 5)), "bfloat16")
        d4 = T(np.zeros((5, 3, 4, 2), BF16), "bfloat16")
        buf = T(np.zeros((128, 256), BF16), "bfloat16")     # interleaved views of one buffer
        ev, od = buf[:, 0::2], buf[:, 1::2]
        od.data[...] = _u16(rng, (128, 128))

        def tr(c):          # one form at several source offsets (a 100-wide tile: tails)
            nisa.dma_transpose(d, src[:, c:c + 100])
            return _bits(d)

        def tr32():         # 4-byte elements: the tiled non-SIMD path
            nisa.dma_transpose(d32, f32)
            return _bits(d32)

        def tr4():
            nisa.dma_transpose(d4, s4)
            return _bits(d4)

        def interleaved():  # byte ranges meet, elements do not: the full path transposes
            nisa.dma_transpose(ev, od)
            return _bits(buf)

        def options():      # the options path runs the same compiled plan
            nisa.dma_transpose(d32, f32, axes=(1, 0), priority=1, dge_mode="none")
            return _bits(d32)

        def same_form_overlap():        # the form of `d <- src tile`, dst inside src
            nisa.dma_transpose(T(np.zeros((128, 128), BF16), "bfloat16"),
                               T(np.zeros((128, 128), BF16), "bfloat16"))
            own = T(np.zeros((128, 128), BF16), "bfloat16")
            nisa.dma_transpose(own, own)

        def bad_shape():
            nisa.dma_transpose(d, src[:, :99])
        return [lambda: tr(0), lambda: tr(37), lambda: tr(600), tr32, tr4, interleaved,
                options, same_form_overlap, bad_shape]
    _check_compiled(scenario, [_knki.TransposePlan])


def test_compiled_shuffle_plan_same_bits_errors_and_costs():
    mask = [(i * 11 + 2) % 32 for i in range(32)]
    mask[0] = mask[17] = 255

    def scenario():
        rng = np.random.default_rng(12)
        a3 = T(_u16(rng, (128, 4, 75)), "bfloat16")      # 2-byte, 3-d: rows of 300
        d3 = T(np.zeros((128, 4, 75), BF16), "bfloat16")
        half = T(rng.standard_normal((128, 64)).astype(np.float32), "float32")
        dh = T(np.full((128, 64), 3.0, np.float32), "float32")
        wide = T(rng.standard_normal((128, 2048)).astype(np.float32), "float32")
        dw = T(np.zeros((128, 2048), np.float32), "float32")

        def sh3():
            nisa.nc_stream_shuffle(d3, a3, mask)
            return _bits(d3)

        def halves(p):      # 64 active partitions: start 0 or 64 allowed, 32 is not
            nisa.nc_stream_shuffle(dh[p:p + 64], half[64 - p:128 - p], mask)
            return _bits(dh)

        def big():          # >= 256 KiB: the threaded row copy
            nisa.nc_stream_shuffle(dw, wide, mask)
            return _bits(dw)

        def in_place():     # the form of `dw <- wide`, dst is src: src copied first
            nisa.nc_stream_shuffle(wide, wide, mask)
            return _bits(wide)

        def mismatch():
            nisa.nc_stream_shuffle(dh, half[:, :32], mask)
        return [sh3, lambda: halves(0), lambda: halves(64), lambda: halves(32), big,
                in_place, mismatch]
    _check_compiled(scenario, [_knki.ShufflePlan])


def test_compiled_dma_sum_plan_same_bits_errors_and_costs():
    def scenario():
        rng = np.random.default_rng(13)
        xs = [T(rng.standard_normal((64, 130)).astype(np.float32), "float32", nl.hbm)
              for _ in range(3)]
        d = T(np.zeros((64, 130), np.float32), "float32", nl.hbm)
        db = T(np.zeros((64, 130), BF16), "bfloat16", nl.hbm)
        xb = T(rng.standard_normal((64, 130)).astype(BF16), "bfloat16", nl.hbm)
        wide = T(rng.standard_normal((64, 260)).astype(np.float32), "float32", nl.hbm)
        flat = T(rng.standard_normal((130, 64)).astype(np.float32), "float32", nl.hbm)

        def n(k):
            nisa.dma_compute(d, xs[:k], nl.add)
            return _bits(d)

        def dst_is_source(i):           # no options: the plan runs in place
            nisa.dma_compute(xs[i], xs, nl.add)
            return _bits(xs[i])

        def to_bf16():                  # the decode / encode kernel path
            nisa.dma_compute(db, [xb, xs[0], xb], nl.add)
            return _bits(db)

        def strided():                  # a strided source: the Python plan copies it
            nisa.dma_compute(d, [xs[0], wide[:, 0::2], xs[2]], nl.add)
            return _bits(d)

        def other_layout():             # the form of `flat <- 3 sources`, one over flat
            nisa.dma_compute(flat, [xs[0], xs[1], xs[2].reshape((130, 64))], nl.add)
            nisa.dma_compute(flat, [xs[0], NkiTensor(flat.data.T, "float32", nl.hbm), xs[2]],
                             nl.add)
            return _bits(flat)

        def bad_op():
            nisa.dma_compute(d, xs, nl.multiply)

        def views():                    # .ap views: keyed by their elements, or no key
            ok = xs[0].ap([[130, 64], [1, 130]])
            nisa.dma_compute(d, [ok, xs[1]], nl.add)
            r = _bits(d)
            nisa.dma_compute(d, [xs[0].ap([[130, 64], [1, 130]], offset=10), xs[1]], nl.add)
            return r
        return [lambda: n(1), lambda: n(2), lambda: n(3), lambda: dst_is_source(0),
                lambda: dst_is_source(2), to_bf16, strided, other_layout, bad_op, views]
    _check_compiled(scenario, [_knki.DmaSumPlan])


def test_compiled_start_partition_matches_python():
    x = T(np.zeros((128, 64), np.float32), "float32")
    views = [x, x[32:64], x[64:], x[5:9], x[:, 3:], x[96:, 1::2], x[0:0],
             T(np.zeros((4, 128, 8), np.float32), "float32")[2],
             NkiTensor(np.zeros((128, 64), np.float32).T, "float32", nl.sbuf)]
    for v in views:
        assert _knki.start_partition_of(v.data) == _move.start_partition(v)


@pytest.mark.parametrize("cap", [0, 1, 2], ids=["best", "sse2", "avx2"])
@pytest.mark.parametrize("shape", [(128, 128), (8, 16), (8, 32), (9, 47), (63, 33),
                                   (40, 100), (130, 129), (16, 80)])
def test_16bit_transpose_every_simd_path(shape, cap):
    """The AVX-512 (8 x 32), AVX2 (8 x 16) and SSE2 (8 x 8) passes of the 16-bit transpose
    and their column / row tails give the same bits as numpy (the CPU permitting)."""
    rng = np.random.default_rng(14)
    big = rng.integers(0, 65536, (shape[0], shape[1] + 40)).astype(np.uint16)
    x = big[:, 5:5 + shape[1]]
    old = _kmove.set_simd_cap(cap)
    try:
        z = np.full((shape[1], shape[0] + 7), 0xABCD, np.uint16)
        _kmove.strided(z[:, 2:2 + shape[0]], x.T)
    finally:
        _kmove.set_simd_cap(old)
    assert (z[:, 2:2 + shape[0]] == x.T).all()
    assert (z[:, :2] == 0xABCD).all() and (z[:, 2 + shape[0]:] == 0xABCD).all()


# ---- speed14b branch (issue 14): in-place stream shuffles and threaded decoding sums ----
# nc_stream_shuffle(t, t, mask) moves the rows in place (fastisa._kernels.move.rows_inplace:
# trees of the row map first, then each cycle through one saved row; large tiles split
# their columns over the threads) instead of copying src first; dma_compute's decoding
# path (a non-float32 operand) splits over the threads like the float32 one.
def _map_oracle(a, m):
    """Row r = old row m[r] (m[r] < 0 keeps row r): the semantics rows_inplace runs."""
    want = a.copy()
    keep = m >= 0
    want[keep] = a[m[keep]]
    return want


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_rows_inplace_any_map_same_bits_every_thread_count(threads):
    rng = np.random.default_rng(40 + threads)
    for trial in range(240):
        R = int(rng.integers(1, 300))            # > 256 rows: the heap scratch
        F = int(rng.choice([1, 2, 17, 64, 300]))
        kind = trial % 4
        if kind == 0:                            # any map with untouched rows
            m = rng.integers(-1, R, R)
        elif kind == 1:                          # a permutation: cycles only
            m = rng.permutation(R)
        elif kind == 2:                          # a partial permutation
            m = rng.permutation(R)
            m[rng.random(R) < 0.25] = -1
        else:                                    # few sources: trees into cycles
            m = rng.integers(0, max(1, R // 5), R)
        m = m.astype(np.int32)
        it = (np.uint8, np.uint16, np.uint32)[trial % 3]
        a = rng.integers(0, 250, (R, F)).astype(it)
        want = _map_oracle(a, m)
        b = a.copy()
        _kmove.rows_inplace(b, m, threads)
        assert (b == want).all(), (trial, R, F)
        wide = np.full((R, 2 * F + 1), 7, it)    # a strided view: the gaps stay
        v = wide[:, 1::2]
        v[...] = a
        _kmove.rows_inplace(v, m, threads)
        assert (v == want).all() and (wide[:, 0::2] == 7).all(), (trial, R, F)
    a = rng.integers(0, 2**32, (128, 2048), dtype=np.uint64).astype(np.uint32)
    m = rng.integers(0, 128, 128).astype(np.int32)
    m[::7] = -1
    b = a.copy()
    _kmove.rows_inplace(b, m, threads)           # 2^18 elements: the column-split path
    assert (b == _map_oracle(a, m)).all()


def _inplace_shuffle_run(threads, on):
    """In-place shuffles at every path (plans on: the full path stores a ShufflePlan and
    later calls run it) against the oracle; returns the digests of the results."""
    from fastisa.nki import _compute
    _compute.set_num_threads(threads)
    plans.clear()
    out = []
    try:
        with plans.enabled_as(on):
            rng = np.random.default_rng(9)
            masks = [[(i + 5) % 32 for i in range(32)],            # the bench's rotation
                     [int(v) if rng.random() > 0.2 else 255 for v in rng.integers(0, 32, 32)],
                     [0] * 32, list(range(32)), [(i * 7 + 3) % 32 for i in range(32)]]
            big = T(rng.standard_normal((128, 2048)).astype(np.float32), "float32")
            small = T(_u16(rng, (128, 9)), "bfloat16")
            byte = T(rng.integers(0, 256, (128, 33)).astype(np.uint8), "uint8")
            for mask in masks:
                for t, sl in ((big, slice(0, 128)), (small, slice(0, 128)),
                              (small, slice(64, 128)), (byte, slice(32, 64)),
                              (byte, slice(0, 96))):
                    for _ in range(REPEAT):
                        v = t[sl]
                        before = t.data.copy()
                        want = ref.nki_isa_stream_shuffle(v.data, v.data, mask)
                        nisa.nc_stream_shuffle(v, v, mask)
                        assert_rows = np.ones(t.data.shape[0], bool)
                        assert_rows[sl] = False
                        assert (np.ascontiguousarray(v.data).view(np.uint8)
                                == np.ascontiguousarray(want).view(np.uint8)).all()
                        assert (t.data[assert_rows].view(np.uint8)
                                == before[assert_rows].view(np.uint8)).all()
                out.append((_bits(big), _bits(small), _bits(byte)))
            if on:
                assert any(type(p) is _knki.ShufflePlan for p in _isaplan.CACHE.values())
    finally:
        _compute.set_num_threads(None)
        plans.clear()
    return out


def test_in_place_shuffle_same_bits_every_path_and_thread_count():
    runs = [_inplace_shuffle_run(n, on) for n in (1, 2, 3) for on in (True, False)]
    assert all(r == runs[0] for r in runs)


def test_in_place_shuffle_partial_overlap_still_copies():
    """dst and src overlapping but not the same rows (src shifted by one quadrant): the
    copy-first path, as before, on the plan path and the full path."""
    rng = np.random.default_rng(10)
    mask = [(i * 3 + 1) % 32 for i in range(32)]
    for on in (True, False):
        plans.clear()
        with plans.enabled_as(on):
            t = T(rng.standard_normal((128, 40)).astype(np.float32), "float32")
            for _ in range(REPEAT):
                want = ref.nki_isa_stream_shuffle(t.data[0:64], t.data[64:128], mask)
                nisa.nc_stream_shuffle(t[0:64], t[64:128], mask)
                assert (t.data[0:64].view(np.uint32) == want.view(np.uint32)).all()
                want = ref.nki_isa_stream_shuffle(t.data[0:32], t.data[32:64], mask)
                nisa.nc_stream_shuffle(t[0:32], t[32:64], mask)
                assert (t.data[0:32].view(np.uint32) == want.view(np.uint32)).all()
    plans.clear()


def _decoding_sum_run(threads, on):
    """dma_compute with decoded (non-float32) operands, each call repeated so that the
    cached run also takes the DmaSumPlan hit; returns the digests of the results."""
    from fastisa.nki import _compute
    _compute.set_num_threads(threads)
    plans.clear()
    try:
        with plans.enabled_as(on):
            rng = np.random.default_rng(13)
            shape = (128, 1031)                  # >= 2^16 elements: the threaded split
            b0 = rng.standard_normal(shape).astype(BF16)
            xb = T(b0.copy(), "bfloat16", nl.hbm)
            xf = T(rng.standard_normal(shape).astype(np.float32), "float32", nl.hbm)
            xh = T(rng.standard_normal(shape).astype(np.float16), "float16", nl.hbm)
            srcs = [xb, xf, xh]
            f32 = [ref.nki_to_f32(t.data, t.dtype.name) for t in srcs]
            wb = ref.nki_round(ref.nki_isa_dma_compute(f32), "bfloat16").reshape(shape)
            wf = ref.nki_isa_dma_compute(f32).reshape(shape)
            db = T(np.zeros(shape, BF16), "bfloat16", nl.hbm)
            df = T(np.zeros(shape, np.float32), "float32", nl.hbm)
            out = []
            for _ in range(REPEAT):
                nisa.dma_compute(db, srcs, nl.add)       # bf16 dst, mixed sources
                assert (db.data.view(np.uint16) == wb.view(np.uint16)).all()
                nisa.dma_compute(df, srcs, nl.add)       # float32 dst, decoded sources
                assert (df.data.view(np.uint32) == wf.view(np.uint32)).all()
                xb.data[...] = b0
                nisa.dma_compute(xb, srcs, nl.add)       # dst is a (bf16) source
                assert (xb.data.view(np.uint16) == wb.view(np.uint16)).all()
                xb.data[...] = b0
                out.append((_bits(db), _bits(df)))
            if on:
                assert any(type(p) is _knki.DmaSumPlan for p in _isaplan.CACHE.values())
            return out
    finally:
        _compute.set_num_threads(None)
        plans.clear()


def test_decoding_dma_compute_same_bits_every_path_and_thread_count():
    runs = [_decoding_sum_run(n, on) for n in (1, 2, 3) for on in (True, False)]
    assert all(r == runs[0] for r in runs)


def test_shuffle_2_and_1_byte_tiles_threaded_same_bits():
    """Tiles of >= 2^16 elements of 2- and 1-byte dtypes now take the threaded row copy
    (the compute kernels' policy; it was >= 256 KiB): the same bits for every thread
    count, path and mask as the oracle."""
    masks = [[(i * 11 + 2) % 32 for i in range(32)], [0] * 32]
    masks[0][5] = 255
    res = []
    for n in (1, 2, 3):
        from fastisa.nki import _compute
        _compute.set_num_threads(n)
        try:
            for on in (True, False):
                plans.clear()
                with plans.enabled_as(on):
                    rng = np.random.default_rng(15)
                    got = []
                    for fmt, src in (("bfloat16", _u16(rng, (128, 600))),
                                     ("uint8", rng.integers(0, 256, (128, 513)).astype(np.uint8))):
                        s = T(src, fmt)
                        d = T(np.zeros_like(src), fmt)
                        for mask in masks:
                            for _ in range(REPEAT):
                                want = ref.nki_isa_stream_shuffle(d.data, s.data, mask)
                                nisa.nc_stream_shuffle(d, s, mask)
                                assert (d.data.view(np.uint8) == want.view(np.uint8)).all()
                            got.append(_bits(d))
                    res.append(got)
        finally:
            _compute.set_num_threads(None)
            plans.clear()
    assert len(res) == 6 and all(r == res[0] for r in res)


def test_in_place_shuffle_takes_the_in_place_kernel(monkeypatch):
    """The same rows (t, t) run rows_inplace on the full path and on the plan path (the
    plan's hit does not hand the call back); other calls run rows."""
    calls = []
    for name in ("rows", "rows_inplace"):
        real = getattr(_kmove, name)
        monkeypatch.setattr(_kmove, name,
                            lambda *a, _r=real, _n=name: (calls.append(_n), _r(*a))[1])
    mask = [(i + 5) % 32 for i in range(32)]
    t = T(np.arange(128 * 8, dtype=np.float32).reshape(128, 8), "float32")
    d = T(np.zeros((128, 8), np.float32), "float32")
    with plans.disabled():
        nisa.nc_stream_shuffle(t, t, mask)
        nisa.nc_stream_shuffle(d, t, mask)
    assert calls == ["rows_inplace", "rows"]
    plans.clear()
    with plans.enabled_as(True):
        nisa.nc_stream_shuffle(t, t, mask)                  # full path: stores the plan
        r = _knki.hit_shuffle(t, t, mask)
        assert r is not None and r is not False             # ran in place on the plan
    plans.clear()
    want = np.arange(128 * 8, dtype=np.float32).reshape(128, 8)
    for _ in range(3):
        want = ref.nki_isa_stream_shuffle(want, want, mask)
    assert (t.data.view(np.uint32) == want.view(np.uint32)).all()


def test_in_place_shuffle_3d_and_column_views():
    """In place over a 3-D tile (rows of 4 x 75) and over a column slice (strided rows:
    the columns outside keep their contents), on the plan and the full path."""
    mask = [(i * 7 + 3) % 32 for i in range(32)]
    mask[4] = 255
    for on in (True, False):
        plans.clear()
        rng = np.random.default_rng(16)
        with plans.enabled_as(on):
            t3 = T(rng.standard_normal((128, 4, 75)).astype(np.float32), "float32")
            t2 = T(rng.standard_normal((128, 50)).astype(np.float32), "float32")
            for _ in range(REPEAT):
                rows = t3.data.reshape(128, -1)
                want = ref.nki_isa_stream_shuffle(rows, rows, mask)
                nisa.nc_stream_shuffle(t3, t3, mask)
                assert (t3.data.reshape(128, -1).view(np.uint32) == want.view(np.uint32)).all()
                v = t2[:, 3:40]
                before = t2.data.copy()
                want = ref.nki_isa_stream_shuffle(v.data, v.data, mask)
                nisa.nc_stream_shuffle(v, v, mask)
                assert (v.data.view(np.uint32) == want.view(np.uint32)).all()
                assert (t2.data[:, :3] == before[:, :3]).all()
                assert (t2.data[:, 40:] == before[:, 40:]).all()
    plans.clear()
