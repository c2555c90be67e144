"""nki-isa family: registers (and dynamic offsets), target queries, random instructions,
LNC2 core_barrier / sendrecv, and the SDK 2.33 name list."""

import threading

import ml_dtypes
import numpy as np
import pytest

import reference as ref
import fastisa.nki as nki
from fastisa.errors import ConstraintError
from fastisa.nki import isa as nisa
from fastisa.nki import language as nl
from fastisa.nki import _multicore, _random
from test_nki_compute import T, assert_bits, empty

SDK_233_ISA = """nc_matmul nc_matmul_mx nc_transpose activation activation_reduce activate2
tensor_reduce tensor_partition_reduce tensor_tensor tensor_tensor_scan scalar_tensor_tensor
tensor_scalar tensor_scalar_reduce tensor_scalar_cumulative tensor_copy tensor_copy_predicated
exponential reciprocal quantize_mx iota dropout affine_select range_select select_reduce
sequence_bounds memset bn_stats bn_aggr local_gather nc_n_gather dma_copy dma_transpose
dma_compute max8 nc_find_index8 nc_match_replace8 nc_stream_shuffle register_alloc
register_load register_move register_store core_barrier sendrecv rng rand2 rand_set_state
rand_get_state set_rng_seed nonzero_with_count topk engine dma_engine reduce_cmd dge_mode
oob_mode matmul_perf_mode nc_version get_nc_version VirtualRegister NkiInstruction""".split()


def test_every_sdk_233_name_is_present():
    """aws-neuron-sdk nki/api/nki.isa.rst lists these names."""
    missing = [n for n in SDK_233_ISA if not hasattr(nisa, n)]
    assert missing == []


# ---- registers ------------------------------------------------------------------------
def test_register_alloc_move_load_store():
    r = nisa.register_alloc(5)
    assert int(r) == 5 and bool(r)
    z = nisa.register_alloc()
    with pytest.raises(ConstraintError, match="read before"):
        int(z)
    nisa.register_move(z, r)
    assert int(z) == 5
    nisa.register_move(z, 2**32 - 1)
    assert int(z) == -1                              # 32-bit two's complement
    t = T(np.array([[-7]], np.int32), "int32")
    nisa.register_load(z, t)
    assert int(z) == -7
    u = T(np.array([[200]], np.uint8), "uint8")
    nisa.register_load(z, u)
    assert int(z) == 200
    out = empty((1, 1), "int16")
    nisa.register_move(z, 70000)
    nisa.register_store(out, z)
    assert out.data[0, 0] == np.int16(70000 - 65536)
    f = T(np.array([1.0], np.float32), "float32")
    nisa.register_load(z, f)
    assert int(z) == 0x3F800000                      # a raw 32-bit load


def test_register_loops_and_dynamic_offsets():
    n = nisa.register_alloc(3)
    assert len(list(nl.dynamic_range(n))) == 3
    count = 0
    r = nisa.register_alloc(4)
    while r:
        count += 1
        nisa.register_move(r, int(r) - 1)
    assert count == 4
    a = T(np.arange(40, dtype=np.float32).reshape(4, 10), "float32")
    off = nisa.register_alloc(3)
    assert_bits(a[:, nl.ds(off, 4)].data, a.data[:, 3:7])
    assert_bits(a[off].data, a.data[3:4])     # on-chip: the partition dim stays
    assert_bits(a.ap([[10, 2], [1, 3]], offset=off).data, np.array([[3, 4, 5], [13, 14, 15]],
                                                                    np.float32))


# A kernel of our own in the register-driven block-loop pattern: a runtime block count in a
# register drives nl.dynamic_range; an SBUF counter (or a register) is the .ap scalar_offset
# with indirect_dim, i.e. a ROW INDEX of the base tensor, scaled by the elements to the right
# of that dimension (aws-neuron-sdk nki/migration/index.rst "Scalar dynamic access":
# "offset + scalar_offset * prod(A.shape[indirect_dim+1:])").  fastisa once added the index
# as a raw element offset, so every block after the first re-read and re-wrote block 0
# shifted by a few columns, and the later rows stayed unwritten: a silent wrong result.
_BLK, _COLS = 32, 64


@nki.jit
def _blockwise_sub(x, y, out, nblk):
    """out[:nblk*_BLK] = x - y in (_BLK, _COLS) tiles; rows after nblk*_BLK untouched."""
    rows, cols = x.shape
    nb = nl.ndarray((1, 1), nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=nb, src=nblk)
    trips = nisa.register_alloc()
    nisa.register_load(trips, nb)
    row0 = nl.ndarray((1, 1), nl.int32, buffer=nl.sbuf)
    nisa.memset(dst=row0, value=0)
    pat = [[cols, _BLK], [1, _COLS]]
    for _ in nl.dynamic_range(0, trips, 1):
        for c in nl.affine_range(cols // _COLS):
            tx = nl.ndarray((_BLK, _COLS), x.dtype, buffer=nl.sbuf)
            ty = nl.ndarray((_BLK, _COLS), x.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=tx, src=x.ap(pattern=pat, offset=c * _COLS, scalar_offset=row0,
                                           indirect_dim=0))
            nisa.dma_copy(dst=ty, src=y.ap(pattern=pat, offset=c * _COLS, scalar_offset=row0,
                                           indirect_dim=0))
            tz = nl.ndarray((_BLK, _COLS), x.dtype, buffer=nl.sbuf)
            nisa.tensor_tensor(dst=tz, data1=tx, data2=ty, op=nl.subtract)
            nisa.dma_copy(dst=out.ap(pattern=pat, offset=c * _COLS, scalar_offset=row0,
                                     indirect_dim=0), src=tz)
        nisa.tensor_scalar(dst=row0, data=row0, op0=nl.add, operand0=_BLK)


@pytest.mark.parametrize("nblk", [0, 1, 3, 4])
def test_scalar_offset_is_a_row_index_in_a_dynamic_block_loop(nblk, rng):
    rows, cols = 4 * _BLK, 3 * _COLS
    x = rng.standard_normal((rows, cols)).astype(ml_dtypes.bfloat16)
    y = rng.standard_normal((rows, cols)).astype(ml_dtypes.bfloat16)
    out = np.full((rows, cols), 5.0, ml_dtypes.bfloat16)
    nki.simulate(_blockwise_sub)(x, y, out, np.array([[nblk]], np.int32))
    n = nblk * _BLK
    want = ref.nki_round(ref.nki_alu("subtract", x[:n].astype(np.float32),
                                     y[:n].astype(np.float32)), "bfloat16")
    assert_bits(out[:n], want)
    assert (out[n:].astype(np.float32) == 5.0).all()          # rows past the trip count kept


def test_scalar_offset_scales_by_the_base_shape_right_of_indirect_dim():
    """A register, a 1x1 tensor or an int index along dim 1 of a (3, 4, 5) base moves the
    access by prod(shape[2:]) = 5 elements per unit (the base's shape, not the pattern's
    step of 3); along dim 0 by 4 * 5 = 20."""
    a = T(np.arange(3 * 4 * 5, dtype=np.int32).reshape(3, 4, 5), "int32", nl.hbm)
    reg = nisa.register_alloc(2)
    t = T(np.array([[2]], np.int32), "int32")
    want = a.data.reshape(-1)[20 + 2 * 5: 20 + 2 * 5 + 6].reshape(2, 3)
    for so in (reg, t, 2):
        got = a.ap([[3, 2], [1, 3]], offset=20, scalar_offset=so, indirect_dim=1).data
        assert_bits(got, want)
    # indirect_dim 0 of the same base: 20 elements per index
    assert_bits(a.ap([[5, 1], [1, 5]], scalar_offset=t, indirect_dim=0).data, a.data[2, 0:1])
    # through a dma_copy store (dst side) too
    src = T(np.full((1, 5), -1, np.int32), "int32")
    nisa.dma_copy(dst=a.ap([[5, 1], [1, 5]], offset=5, scalar_offset=t, indirect_dim=0), src=src)
    assert (a.data[2, 1] == -1).all() and (a.data[2, 0] == 40 + np.arange(5)).all()
    with pytest.raises(ConstraintError, match="indirect_dim must be in \\[0, 2\\]"):
        a.ap([[1, 1], [1, 1]], scalar_offset=t, indirect_dim=3)
    # reinterpreted as int16: one index along dim 1 is 5 int32 = 10 int16 elements
    h = a.ap([[1, 1], [1, 2]], scalar_offset=t, indirect_dim=1, dtype=nl.int16).data
    assert_bits(h.view(np.int32), a.data[0, 2, 0:1].reshape(1, 1))
    b = T(np.arange(6, dtype=np.int16).reshape(2, 3), "int16", nl.hbm)
    with pytest.raises(ConstraintError, match="not a whole number"):
        b.ap([[1, 1], [1, 1]], scalar_offset=t, indirect_dim=0, dtype=nl.int32)


def test_vector_offset_holds_row_indices_scaled_by_the_base_row():
    """dma_copy's documented gather / scatter (aws-neuron-sdk nki/api/nki/isa/__init__.py,
    dma_copy: "one row index per partition"): dst[p, :] = data[idx[p], :] and back; the
    DMA engine scales each index by the base's row length (8 here), not by 1."""
    data = T(np.arange(16 * 8, dtype=np.int32).reshape(16, 8), "int32", nl.hbm)
    idx = np.array([5, 0, 15, 5, 9], np.int32)
    it = T(idx.reshape(5, 1), "uint32")
    g = empty((5, 8), "int32")
    nisa.dma_copy(dst=g, src=data.ap(pattern=[[8, 5], [1, 8]], vector_offset=it, indirect_dim=0))
    assert_bits(g.data, data.data[idx])
    out = T(np.full((16, 8), -1, np.int32), "int32", nl.hbm)
    rows = np.array([3, 14, 7, 0, 10], np.int32)
    nisa.dma_copy(dst=out.ap(pattern=[[8, 5], [1, 8]], vector_offset=T(rows.reshape(5, 1),
                                                                         "uint32"),
                             indirect_dim=0), src=g)
    want = np.full((16, 8), -1, np.int32)
    want[rows] = data.data[idx]
    assert_bits(out.data, want)


def test_register_errors():
    r = nisa.register_alloc(0)
    with pytest.raises(ConstraintError, match="VirtualRegister"):
        nisa.register_move(5, r)
    with pytest.raises(ConstraintError, match="32 bits"):
        nisa.register_alloc(2**32)
    with pytest.raises(ConstraintError, match="exactly one element"):
        nisa.register_load(r, empty((1, 2), "int32"))
    with pytest.raises(ConstraintError, match="psum"):
        nisa.register_load(r, empty((1, 1), "int32", nl.psum))
    with pytest.raises(ConstraintError, match="integer"):
        nisa.register_move(r, 1.5)


def test_nc_version_and_instruction_handle():
    assert nisa.get_nc_version() is nisa.nc_version.gen3
    with nl.use_target("trn3"):
        assert nisa.get_nc_version() is nisa.nc_version.gen4
    with nl.use_target("trn1"):
        assert nisa.get_nc_version() is nisa.nc_version.gen2
    h = nisa.NkiInstruction()
    assert h.depends_on(nisa.NkiInstruction(), nisa.NkiInstruction()) is h
    with pytest.raises(ConstraintError):
        h.depends_on(3)


# ---- random ----------------------------------------------------------------------------------
def xorwow_ref(state, nsub, F):
    """Plain-Python XORWOW (Marsaglia 2003): element i of a lane from generator i % nsub."""
    st = [list(map(int, state[6 * g:6 * g + 6])) for g in range(nsub)]
    out = []
    M = 0xFFFFFFFF
    for i in range(F):
        s = st[i % nsub]
        t = s[0] ^ (s[0] >> 2)
        s[0], s[1], s[2], s[3] = s[1], s[2], s[3], s[4]
        s[4] = ((s[4] ^ (s[4] << 4)) ^ (t ^ (t << 1))) & M
        s[5] = (s[5] + 362437) & M
        out.append((s[5] + s[4]) & M)
    return np.array(out, np.uint32), np.array(sum(st, []), np.uint32)


@pytest.mark.parametrize("fmt", ["int8", "int16", "int32", "uint8", "uint16", "uint32"])
@pytest.mark.parametrize("eng", ["vector", "gpsimd"])
def test_rng_against_xorwow(fmt, eng):
    with nl.use_target("trn3"):
        st = empty((5, 6 * _random._NSUB[eng]), "uint32")
        nisa.rand_get_state(st, engine=eng)
        d = empty((5, 3, 7), fmt)
        nisa.rng(d, engine=getattr(nisa.engine, eng))
        after = empty((5, 6 * _random._NSUB[eng]), "uint32")
        nisa.rand_get_state(after, engine=eng)
    w = np.dtype(d.data.dtype).itemsize * 8
    for p in range(5):
        bits, last = xorwow_ref(st.data[p], _random._NSUB[eng], 21)
        want = (bits.astype(np.uint64) & ((1 << w) - 1)).astype(d.data.dtype.str.replace("i", "u"))
        assert_bits(d.data[p].reshape(-1), want.view(d.data.dtype))
        assert_bits(after.data[p], last)


def test_seed_replays_and_state_roundtrip():
    with nl.use_target("trn3"):
        seed = T(np.array([[1234]], np.uint32), "uint32")
        nisa.set_rng_seed(seed)
        a = empty((8, 64), "uint32")
        nisa.rng(a)
        nisa.set_rng_seed(seed)
        b = empty((8, 64), "uint32")
        nisa.rng(b)
        assert_bits(a.data, b.data)
        nisa.set_rng_seed(T(np.array([[1235]], np.uint32), "uint32"))
        nisa.rng(b)
        assert (a.data != b.data).mean() > 0.99
        st = empty((8, 24), "uint32")
        nisa.rand_get_state(st, engine=nisa.engine.vector)
        nisa.rng(a)
        nisa.rand_set_state(st, engine=nisa.engine.vector)
        nisa.rng(b)
        assert_bits(a.data, b.data)


def test_fresh_instances_start_from_seed_zero():
    outs = []
    for _ in range(2):
        with nl.use_target("trn2"):
            d = empty((4, 16), "uint32")
            nisa.rng(d)
            outs.append(d.data.copy())
    assert_bits(outs[0], outs[1])
    st = _random.seed_states(0, "vector")
    assert_bits(outs[0][1], np.concatenate([xorwow_ref(st[1], 4, 16)[0]]))


@pytest.mark.parametrize("fmt", ["float32", "bfloat16", "float16", "int32", "uint8",
                                 "float8_e4m3"])
def test_rand2_against_oracle(fmt):
    with nl.use_target("trn3"):
        st = empty((16, 24), "uint32")
        nisa.rand_get_state(st, engine=nisa.engine.vector)
        lo = T(np.linspace(-3, 1, 16, dtype=np.float32).reshape(16, 1), "float32")
        d = empty((16, 40), fmt)
        nisa.rand2(d, lo, 7.5)
    for p in range(16):
        bits, _ = xorwow_ref(st.data[p], 4, 40)
        u = (bits >> 8).astype(np.float32) * np.float32(2.0 ** -24)
        a = lo.data[p, 0]
        v = (a + (u * np.float32(np.float32(7.5) - a)).astype(np.float32)).astype(np.float32)
        assert_bits(d.data[p], ref.nki_round(v, fmt))
        assert (v >= a).all() and (v <= 7.5).all()


@pytest.mark.parametrize("fmt", ["float32", "bfloat16", "int16", "uint8", "float8_e5m2"])
def test_dropout_against_oracle(fmt, rng):
    data = T(rng.integers(1, 100, (12, 50)), fmt)
    prob = T(np.linspace(0, 1, 12, dtype=np.float32).reshape(12, 1), "float32")
    with nl.use_target("trn2"):
        st = empty((12, 24), "uint32")
        st.data[...] = _random._states("vector")[:12]
        d = empty((12, 50), fmt)
        nisa.dropout(d, data, prob)
    for p in range(12):
        bits, _ = xorwow_ref(st.data[p], 4, 50)
        u = (bits >> 8).astype(np.float32) * np.float32(2.0 ** -24)
        want = np.where(u < prob.data[p, 0], np.zeros(1, data.data.dtype), data.data[p])
        assert_bits(d.data[p], want)
    assert (d.data[0] == data.data[0]).all()          # prob 0: all kept
    assert (d.data[11].astype(np.float32) == 0).all()   # prob 1: all dropped


def test_random_errors():
    with pytest.raises(ConstraintError, match="dtype must be one of"):
        nisa.rng(empty((4, 4), "float32"))
    with pytest.raises(ConstraintError, match="sbuf"):
        nisa.rng(empty((4, 4), "uint32", nl.psum), engine=nisa.engine.gpsimd)
    with nl.use_target("trn1"):
        with pytest.raises(ConstraintError, match="NeuronCore-v3"):
            nisa.rng(empty((4, 4), "uint32"), engine=nisa.engine.gpsimd)
    with pytest.raises(ConstraintError, match="trn3"):
        nisa.rand2(empty((4, 4), "float32"), 0.0, 1.0)
    with nl.use_target("trn3"):
        with pytest.raises(ConstraintError, match="min must be < max"):
            nisa.rand2(empty((4, 4), "float32"), 1.0, 1.0)
    with pytest.raises(ConstraintError, match="6 elements"):
        nisa.rand_set_state(empty((4, 5), "uint32"))
    with pytest.raises(ConstraintError, match="uint32"):
        nisa.rand_get_state(empty((4, 6), "int32"))
    with pytest.raises(ConstraintError, match="NeuronCore-v4"):
        nisa.rand_get_state(empty((4, 24), "uint32"), engine=nisa.engine.vector)
    with pytest.raises(ConstraintError, match=r"\[1, 1\]"):
        nisa.set_rng_seed(empty((1, 2), "uint32"))
    with pytest.raises(ConstraintError, match="32-bit"):
        nisa.set_rng_seed(empty((1, 1), "uint16"))
    with pytest.raises(ConstraintError, match="match"):
        nisa.dropout(empty((4, 4), "float16"), empty((4, 4), "float32"), 0.5)
    with pytest.raises(ConstraintError, match="float32 when data"):
        nisa.dropout(empty((4, 4), "int32"), empty((4, 4), "int32"), empty((4, 1), "bfloat16"))


# ---- LNC2 ------------------------------------------------------------------------------------
def run_lnc2(body, target="trn2"):
    """Run body(rank) as the two programs of one LNC2 launch, concurrently (one thread each)."""
    from fastisa.nki import language
    shared = []
    results, errors = [None, None], [None, None]

    def worker(rank):
        try:
            with language._instance(target, (rank,), (2,), shared):
                results[rank] = body(rank)
        except Exception as e:   # noqa: BLE001 - reported to the test
            errors[rank] = e

    ts = [threading.Thread(target=worker, args=(r,)) for r in (0, 1)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(60)
    return results, errors


def test_sendrecv_ring_exchange_and_barrier():
    def body(rank):
        src = T(np.full((4, 8), rank + 1, np.float32), "float32")
        dst = empty((4, 8), "float32")
        nisa.sendrecv(src, dst, send_to_rank=1 - rank, recv_from_rank=1 - rank, pipe_id=0)
        got1 = dst.data.copy()
        nisa.sendrecv(dst, dst, send_to_rank=1 - rank, recv_from_rank=1 - rank, pipe_id=0)
        shared = nl.ndarray((2, 4), "int32", buffer=nl.shared_hbm)
        shared.data[rank] = rank + 10
        nisa.core_barrier(shared, (0, 1))
        return got1, dst.data.copy(), shared.data.copy()

    res, err = run_lnc2(body)
    assert err == [None, None]
    for rank in (0, 1):
        g1, g2, sh = res[rank]
        assert (g1 == 2 - rank).all()                 # the other core's src
        assert (g2 == rank + 1).all()                 # sent back: our own values
        assert (sh == np.array([[10] * 4, [11] * 4])).all()


def test_partner_never_arrives_is_an_error_not_a_hang(monkeypatch):
    monkeypatch.setattr(_multicore, "TIMEOUT", 0.3)

    def body(rank):
        if rank == 0:
            shared = nl.ndarray((1, 1), "int32", buffer=nl.shared_hbm)
            nisa.core_barrier(shared, (0, 1))
        return rank

    res, err = run_lnc2(body)
    assert isinstance(err[0], ConstraintError) and "never arrived" in str(err[0])
    assert err[1] is None


def test_multicore_errors():
    s = empty((2, 2), "float32")
    with pytest.raises(ConstraintError, match="LNC2"):
        nisa.sendrecv(s, empty((2, 2), "float32"), 1, 1, 0)
    with pytest.raises(ConstraintError, match="same shape"):
        nisa.sendrecv(s, empty((2, 3), "float32"), 1, 1, 0)
    with pytest.raises(ConstraintError, match="0 or 1"):
        nisa.sendrecv(s, empty((2, 2), "float32"), 2, 1, 0)
    with pytest.raises(ConstraintError, match="sbuf"):
        nisa.sendrecv(empty((2, 2), "float32", nl.hbm), s, 1, 1, 0)
    with pytest.raises(ConstraintError, match="gpsimd_dma"):
        nisa.sendrecv(empty((2, 300), "float32"), empty((2, 300), "float32"), 1, 1, 0,
                      dma_engine=nisa.dma_engine.gpsimd_dma)
    with pytest.raises(ConstraintError, match="shared_hbm"):      # nkifull: private HBM
        nisa.core_barrier(empty((2, 2), "float32", nl.hbm), (0, 1))
    with pytest.raises(ConstraintError, match=r"\(0, 1\)"):
        nisa.core_barrier(empty((1, 1), "float32", nl.shared_hbm), (0, 2))


# ---- nkifull: core_barrier on an on-chip tensor (nki-library bwmm_shard_on_I) -------------

def test_core_barrier_on_an_sbuf_counter_synchronises():
    """Each core writes its half of a shared tensor, bumps its own SBUF block counter and
    synchronises on the counter (as moe_cte's dynamic block loop does); after the barrier
    each core reads the other's half."""
    def body(rank):
        shared = nl.ndarray((2, 4), "int32", buffer=nl.shared_hbm)
        counter = empty((1, 1), "int32")
        nisa.memset(counter, 0)
        seen = []
        for step in range(3):
            shared.data[rank] = 10 * step + rank
            nisa.tensor_scalar(dst=counter, data=counter, op0=nl.add, operand0=1)
            nisa.core_barrier(counter, (0, 1))
            seen.append(shared.data[1 - rank].copy())
            nisa.core_barrier(counter, (0, 1))        # both read before the next write
        return seen, int(counter.data[0, 0])

    res, err = run_lnc2(body)
    assert err == [None, None]
    for rank in (0, 1):
        seen, n = res[rank]
        assert n == 3
        assert [int(v[0]) for v in seen] == [10 * s + 1 - rank for s in range(3)]


def test_shared_hbm_allocation_is_one_tensor_when_programs_allocate_together(monkeypatch):
    """Two concurrent programs reaching their first nl.shared_hbm allocation at the same
    moment get the same tensor (a lock around the lookup-or-create; without it each made
    its own, and the barrier test above failed on a loaded machine)."""
    from fastisa.nki import language
    meet = threading.Barrier(2)
    real = language._filled

    def slow_filled(shape, fmt):
        try:
            meet.wait(timeout=0.5)      # both inside the creation at once, if they can be
        except threading.BrokenBarrierError:
            pass
        return real(shape, fmt)

    monkeypatch.setattr(language, "_filled", slow_filled)

    def body(rank):
        return nl.ndarray((2, 4), "int32", buffer=nl.shared_hbm)

    res, err = run_lnc2(body)
    assert err == [None, None]
    assert res[0] is res[1]
