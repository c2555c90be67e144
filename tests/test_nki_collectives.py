"""nki.collectives (SDK 2.33) on simulated ranks: ``nki.simulate(kernel, ranks=R)[lnc]``.

Kernels of our own in the patterns of nki-library's collective kernels (copy into a
shared-HBM buffer, collective, copy out; SBUF all-gather tiles split over the LNC cores;
``rank_id()`` as an ``.ap(scalar_offset=)``; a ring all-gather with
``collective_permute_implicit``), bit-exact against ``tests/reference.py``
(``nki_cc_*``).  Also: matching errors are immediate (no hang), a call that raises writes
nothing, ranks have separate memory, ``nl.range``."""

import ml_dtypes
import numpy as np
import pytest

from fastisa import nki
from fastisa.errors import ConstraintError
from fastisa.nki import collectives as ncc, isa as nisa, language as nl
from fastisa.nki.collectives import ReplicaGroup
from reference import (nki_cc_all_gather, nki_cc_all_to_all, nki_cc_reduce,
                       nki_cc_reduce_scatter)

BF16 = ml_dtypes.bfloat16


def _bits(a):
    a = np.ascontiguousarray(a)
    return a.view(f"u{a.dtype.itemsize}")


# ---- kernels ---------------------------------------------------------------------------------
@nki.jit
def _all_reduce_hbm(x, rg, op):
    src = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm, name="src")
    dst = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm, name="dst")
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=src, src=x)
    ncc.all_reduce(dsts=[dst], srcs=[src], op=op, replica_group=rg)
    nisa.dma_copy(dst=out, src=dst)
    return out


@nki.jit
def _all_reduce_sbuf(x, rg, op):
    a = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    b = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=a, src=x)
    ncc.all_reduce(dsts=[b], srcs=[a], op=op, replica_group=rg)
    nisa.dma_copy(dst=out, src=b)
    return out


@nki.jit
def _gather_tiles_sbuf(x, rg, n):
    """SBUF all-gather along the free dim, 128-row tiles split over the LNC cores."""
    M, K = x.shape
    tiles = M // 128
    cores = nl.num_programs(0)
    per = tiles // cores
    out = nl.ndarray((M, K * n), dtype=x.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(per):
        t = nl.program_id(0) * per + i
        a = nl.ndarray((128, K), dtype=x.dtype, buffer=nl.sbuf)
        b = nl.ndarray((128, K * n), dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=a, src=x[t * 128:(t + 1) * 128, :])
        ncc.all_gather(dsts=[b], srcs=[a], replica_group=rg, collective_dim=1)
        nisa.dma_copy(dst=out[t * 128:(t + 1) * 128, :], src=b)
    return out


@nki.jit
def _gather_hbm(x, rg, n):
    src = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    dst = nl.ndarray((x.shape[0] * n,) + tuple(x.shape[1:]), dtype=x.dtype,
                     buffer=nl.shared_hbm)
    nisa.dma_copy(dst=src, src=x)
    ncc.all_gather(dsts=[dst], srcs=[src], replica_group=rg, collective_dim=0)
    return dst


@nki.jit
def _reduce_scatter_hbm(x, rg, n):
    src = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    dst = nl.ndarray((x.shape[0] // n, x.shape[1]), dtype=x.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=src, src=x)
    ncc.reduce_scatter(dsts=[dst], srcs=[src], op=nl.add, replica_group=rg, collective_dim=0)
    return dst


@nki.jit
def _all_to_all_hbm(x, rg):
    src = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    dst = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=src, src=x)
    ncc.all_to_all(dsts=[dst], srcs=[src], replica_group=rg, collective_dim=0)
    return dst


@nki.jit
def _select_by_rank(table):
    """Each rank copies table[rank_id()] (a register as the .ap scalar_offset)."""
    _, H, W = table.shape
    out = nl.ndarray((H, W), dtype=table.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=table.ap(pattern=[[W, H], [1, W]], scalar_offset=ncc.rank_id(),
                                        indirect_dim=0))
    return out


@nki.jit
def _ring_gather(x, rg, n):
    """Fine-grained ring all-gather: n - 1 ring steps; step i's buffer holds the chunk of
    rank current_processing_rank_id(i), stored at that rank's rows."""
    H, W = x.shape
    out = nl.ndarray((n, H, W), dtype=x.dtype, buffer=nl.shared_hbm)
    bufs = [nl.ndarray((H, W), dtype=x.dtype, buffer=nl.shared_hbm) for _ in range(2)]
    nisa.dma_copy(dst=bufs[0], src=x)
    for i in range(n):
        who = ncc.collective_permute_implicit_current_processing_rank_id(i, rg)
        cur = bufs[i % 2]
        nisa.dma_copy(dst=out.ap(pattern=[[W, H], [1, W]], scalar_offset=who, indirect_dim=0),
                      src=cur)
        if i < n - 1:
            ncc.collective_permute_implicit(srcs_by_channel=[[cur]],
                                            dsts_by_channel=[[bufs[(i + 1) % 2]]],
                                            replica_group=rg)
    return out


@nki.jit
def _ring_reduce_step(a, b, rg):
    s0 = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    s1 = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    d = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=s0, src=a)
    nisa.dma_copy(dst=s1, src=b)
    ncc.collective_permute_implicit_reduce([[s0]], [[s1]], [[d]], rg, nl.add)
    return d


@nki.jit
def _permute(x, keep, pairs):
    src = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    dst = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=src, src=x)
    nisa.dma_copy(dst=dst, src=keep)
    ncc.collective_permute(srcs=[src], dsts=[dst], source_target_pairs=pairs)
    return dst


# ---- results ---------------------------------------------------------------------------------
@pytest.mark.parametrize("lnc", [1, 2])
@pytest.mark.parametrize("dtype", [np.float32, BF16])
def test_all_reduce_hbm_is_the_left_fold_in_group_order(lnc, dtype):
    rng = np.random.default_rng(1)
    # magnitudes far apart, so another summation order gives other bits
    xs = [(rng.standard_normal((64, 96)) * 10.0 ** (3 * (r % 2))).astype(dtype)
          for r in range(4)]
    rg = ReplicaGroup([[0, 1, 2, 3]])
    outs = nki.simulate(_all_reduce_hbm, ranks=4)[lnc].per_rank(
        [{"x": xs[r], "rg": rg, "op": nl.add} for r in range(4)])
    want = nki_cc_reduce("add", xs)
    assert all(np.array_equal(_bits(o), _bits(want)) for o in outs)
    # the order is visible: a right fold differs
    other = nki_cc_reduce("add", xs[::-1])
    assert not np.array_equal(_bits(other), _bits(want))


@pytest.mark.parametrize("op", ["maximum", "minimum", "add"])
def test_all_reduce_sbuf_int32_and_subgroups(op):
    rng = np.random.default_rng(2)
    xs = [rng.integers(-2**31, 2**31, (32, 16), dtype=np.int32) for _ in range(4)]
    rg = ReplicaGroup([[0, 2], [3, 1]])
    outs = nki.simulate(_all_reduce_sbuf, ranks=4).per_rank(
        [{"x": xs[r], "rg": rg, "op": getattr(nl, op)} for r in range(4)])
    for r, g in ((0, [0, 2]), (2, [0, 2]), (1, [3, 1]), (3, [3, 1])):
        assert np.array_equal(outs[r], nki_cc_reduce(op, [xs[q] for q in g]))  # wraps on add


@pytest.mark.parametrize("lnc", [1, 2])
def test_all_gather_sbuf_tiles_split_over_lnc_cores(lnc):
    rng = np.random.default_rng(3)
    xs = [rng.standard_normal((256, 64)).astype(BF16) for _ in range(4)]
    rg = ReplicaGroup([list(range(4))])
    outs = nki.simulate(_gather_tiles_sbuf, ranks=4)[lnc].per_rank(
        lambda r: {"x": xs[r], "rg": rg, "n": 4})
    want = nki_cc_all_gather(xs, 1)
    assert all(np.array_equal(_bits(o), _bits(want)) for o in outs)


def test_all_gather_hbm_dim0_per_subgroup():
    xs = [np.full((2, 3, 4), r, np.float32) for r in range(4)]
    rg = ReplicaGroup([[0, 1], [2, 3]])
    outs = nki.simulate(_gather_hbm, ranks=4).per_rank(
        lambda r: {"x": xs[r], "rg": rg, "n": 2})
    assert np.array_equal(outs[1], nki_cc_all_gather(xs[:2], 0))
    assert np.array_equal(outs[2], nki_cc_all_gather(xs[2:], 0))


def test_reduce_scatter_and_all_to_all():
    rng = np.random.default_rng(4)
    xs = [rng.standard_normal((8, 5)).astype(np.float32) for _ in range(4)]
    rg = ReplicaGroup([[0, 1, 2, 3]])
    rs = nki.simulate(_reduce_scatter_hbm, ranks=4).per_rank(
        lambda r: {"x": xs[r], "rg": rg, "n": 4})
    a2a = nki.simulate(_all_to_all_hbm, ranks=4)[2].per_rank(lambda r: {"x": xs[r], "rg": rg})
    for p in range(4):
        assert np.array_equal(_bits(rs[p]), _bits(nki_cc_reduce_scatter("add", xs, p)))
        assert np.array_equal(a2a[p], nki_cc_all_to_all(xs, p))


def test_rank_id_selects_each_ranks_slice_and_inputs_are_per_rank():
    table = np.arange(3 * 4 * 8, dtype=np.float32).reshape(3, 4, 8)
    outs = nki.simulate(_select_by_rank, ranks=3)(table)     # the same inputs, copied per rank
    for r in range(3):
        assert np.array_equal(outs[r], table[r])
    # without ranks=: a world of one
    assert np.array_equal(nki.simulate(_select_by_rank)(table), table[0])


@pytest.mark.parametrize("lnc", [1, 2])
def test_ring_all_gather_with_collective_permute_implicit(lnc):
    xs = [np.full((4, 8), 10 * r + 1, np.float32) for r in range(4)]
    rg = ReplicaGroup([[0, 1, 2, 3]])
    outs = nki.simulate(_ring_gather, ranks=4)[lnc].per_rank(
        lambda r: {"x": xs[r], "rg": rg, "n": 4})
    want = np.stack(xs)
    assert all(np.array_equal(o, want) for o in outs)


def test_collective_permute_implicit_reduce_sends_op_of_sources_to_the_next_rank():
    rng = np.random.default_rng(5)
    a = [rng.standard_normal((4, 4)).astype(BF16) for _ in range(3)]
    b = [rng.standard_normal((4, 4)).astype(BF16) for _ in range(3)]
    rg = ReplicaGroup([[2, 0, 1]])                    # ring 2 -> 0 -> 1 -> 2
    outs = nki.simulate(_ring_reduce_step, ranks=3).per_rank(
        lambda r: {"a": a[r], "b": b[r], "rg": rg})
    prev = {0: 2, 1: 0, 2: 1}
    for r in range(3):
        assert np.array_equal(_bits(outs[r]), _bits(nki_cc_reduce("add", [a[prev[r]],
                                                                         b[prev[r]]])))


def test_collective_permute_pairs_and_untargeted_rank_keeps_dst():
    xs = [np.full((2, 2), r, np.int32) for r in range(3)]
    keep = np.full((2, 2), -7, np.int32)
    outs = nki.simulate(_permute, ranks=3).per_rank(
        lambda r: {"x": xs[r], "keep": keep, "pairs": [(0, 1), (1, 0)]})
    assert np.array_equal(outs[0], xs[1]) and np.array_equal(outs[1], xs[0])
    assert np.array_equal(outs[2], keep)


@nki.jit
def _gather_v(x, meta, rg):
    src = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    dst = nl.ndarray((4 * x.shape[0],), dtype=x.dtype, buffer=nl.shared_hbm)
    md = nl.ndarray(meta.shape, dtype=meta.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=src, src=x)
    nisa.dma_copy(dst=md, src=meta)
    ncc.all_gather_v([src], [dst], rg, md)
    return dst, md


def test_all_gather_v_places_each_ranks_chunk_in_its_slot_and_reports_counts():
    xs = [np.arange(8, dtype=np.int32) + 100 * r for r in range(4)]
    metas = []
    for r in range(4):
        m = np.zeros((3, 4), np.uint32)
        m[0, 0], m[1, 0] = r + 1, 2          # send r + 1 elements from index 2
        metas.append(m)
    rg = ReplicaGroup([[0, 1, 2, 3]])
    outs = nki.simulate(_gather_v, ranks=4).per_rank(
        lambda r: {"x": xs[r], "meta": metas[r], "rg": rg})
    for dst, md in outs:
        for q in range(4):
            assert np.array_equal(dst[8 * q:8 * q + q + 1], xs[q][2:3 + q])
        assert list(md[2]) == [1, 2, 3, 4]


# ---- errors: immediate, nothing written ------------------------------------------------------
@nki.jit
def _skips_on_rank1(x, rg):
    if ncc.rank_id().value == 1:
        return x
    return _all_reduce_hbm.func(x, rg, nl.add)


def test_a_rank_that_never_calls_is_an_immediate_error_naming_every_program():
    x = np.ones((4, 4), np.float32)
    with pytest.raises(ConstraintError, match=r"all_reduce: the partner core never arrives "
                       r"\(rank 0 core 0 waits in all_reduce .*rank 1 core 0 has ended"):
        nki.simulate(_skips_on_rank1, ranks=2)[2](x=x, rg=ReplicaGroup([[0, 1]]))


@nki.jit
def _mismatched(x, rg):
    if ncc.rank_id().value == 1:
        return _gather_hbm.func(x, rg, 2)
    return _all_reduce_hbm.func(x, rg, nl.add)


def test_mismatched_collectives_raise():
    x = np.ones((4, 4), np.float32)
    with pytest.raises(ConstraintError, match="meets all_reduce issued by another rank"):
        nki.simulate(_mismatched, ranks=2)(x=x, rg=ReplicaGroup([[0, 1]]))


def test_argument_errors_name_the_rule_and_write_nothing():
    x = np.ones((4, 4), np.float32)
    with pytest.raises(ConstraintError, match=r"names rank 2, but the launch has 2 rank"):
        nki.simulate(_all_reduce_hbm, ranks=2)(x=x, rg=ReplicaGroup([[0, 1, 2]]), op=nl.add)
    with pytest.raises(ConstraintError, match="op must be nl.add, nl.minimum or nl.maximum"):
        nki.simulate(_all_reduce_hbm, ranks=2)(x=x, rg=ReplicaGroup([[0, 1]]), op=nl.multiply)
    with pytest.raises(ConstraintError, match="more than one sub-group"):
        ReplicaGroup([[0, 1], [1, 2]])
    a = nl.ndarray((4, 4), nl.float32, buffer=nl.sbuf)
    h = nl.ndarray((4, 4), nl.float32, buffer=nl.shared_hbm)
    h.data[...] = 3.0
    a.data[...] = 1.0
    with pytest.raises(ConstraintError, match="must be on HBM or all on SBUF"):
        ncc.all_reduce([a], [h], ReplicaGroup([[0]]), nl.add)
    with pytest.raises(ConstraintError, match=r"dsts\[0\] must have shape \(4, 4\)"):
        ncc.all_gather([a], [nl.ndarray((4, 8), nl.float32, buffer=nl.sbuf)],
                       ReplicaGroup([[0]]), 1)
    with pytest.raises(ConstraintError, match="collective_dim must be 0 here"):
        ncc.all_gather([h], [h], ReplicaGroup([[0]]), 1)
    assert (h.data == 3.0).all() and (a.data == 1.0).all()
    # a world of one: the collective over [[0]] is a copy
    d = nl.ndarray((4, 4), nl.float32, buffer=nl.shared_hbm)
    ncc.all_reduce([h], [d], ReplicaGroup([[0]]), nl.maximum)
    assert (d.data == 3.0).all()


def test_core_barrier_pairs_the_cores_of_each_rank():
    @nki.jit
    def k(x):
        out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=x)
        nisa.core_barrier(out, (0, 1))
        return out

    xs = [np.full((2, 2), r, np.float32) for r in range(3)]
    outs = nki.simulate(k, ranks=3)[2].per_rank(lambda r: {"x": xs[r]})
    assert all(np.array_equal(o, xs[r]) for r, o in enumerate(outs))


def test_nl_range_is_a_loop_iterator():
    assert list(nl.range(3)) == [0, 1, 2] and list(nl.range(1, 7, 2)) == [1, 3, 5]
    with pytest.raises(ConstraintError, match="range: bounds must be integers"):
        nl.range(1.5)


# ---- oob_mode.skip on a scalar-offset dst (the block-scatter pattern) -------------------------
@nki.jit
def _scatter_blocks(x, offsets, fill):
    """Row r of x goes to block offsets[r] of the flat output; an offset past the end (a
    padding row, offset 2**31 - 1) is skipped by oob_mode.skip."""
    R, F = x.shape
    nblk = fill.shape[0]
    out = nl.ndarray((nblk, F), dtype=x.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=fill)
    offs = nl.ndarray((1, R), dtype=nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=offs, src=offsets)
    for r in nl.affine_range(R):
        row = nl.ndarray((1, F), dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=row, src=x[r:r + 1, :])
        nisa.dma_copy(dst=out.ap(pattern=[[F, 1], [1, F]], scalar_offset=offs[0:1, r:r + 1],
                                 indirect_dim=0),
                      src=row, oob_mode=nisa.oob_mode.skip)
    return out


def test_oob_skip_on_a_scalar_offset_dst_skips_the_whole_block():
    x = np.arange(4 * 8, dtype=np.int32).reshape(4, 8)
    fill = np.full((6, 8), -1, np.int32)
    offsets = np.array([[5, 2**31 - 1, 0, 6]], np.int32)      # rows 1 and 3 out of bounds
    out = nki.simulate(_scatter_blocks)(x, offsets, fill)
    want = fill.copy()
    want[5], want[0] = x[0], x[2]
    assert np.array_equal(out, want)
    # without skip the same access is an AccessError
    from fastisa.errors import AccessError
    t = nl.ndarray((2, 8), nl.int32, buffer=nl.sbuf)
    with pytest.raises(AccessError):
        nisa.dma_copy(dst=t.ap(pattern=[[8, 1], [1, 8]], scalar_offset=2, indirect_dim=0),
                      src=nl.ndarray((1, 8), nl.int32, buffer=nl.sbuf))


@nki.jit
def _cache_update(cache, rows, idx):
    """The KV-cache update pattern: rows scattered to cache rows idx (vector_offset), an
    invalid index (2**31 - 1) skipped by oob_mode.skip; program 0 of an LNC2 launch."""
    B, D = rows.shape
    r = nl.ndarray((B, D), dtype=rows.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=r, src=rows)
    ix = nl.ndarray((B, 1), dtype=nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=ix, src=idx)
    if nl.program_id(0) == 0:
        nisa.dma_copy(dst=cache.ap(pattern=[[1, B], [1, D]], offset=0, vector_offset=ix,
                                   indirect_dim=0),
                      src=r, oob_mode=nisa.oob_mode.skip)
    return cache


@pytest.mark.parametrize("lnc", [1, 2])
def test_indirect_dst_with_skipped_index_in_a_launch(lnc):
    cache = np.zeros((8, 4), np.float32)
    rows = np.arange(1, 13, dtype=np.float32).reshape(3, 4)
    idx = np.array([[5], [2**31 - 1], [1]], np.int32)
    out = nki.simulate(_cache_update)[lnc](cache.copy(), rows, idx)
    want = np.zeros((8, 4), np.float32)
    want[5], want[1] = rows[0], rows[2]
    assert np.array_equal(out, want)
