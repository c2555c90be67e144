"""PTO ranks/cores, communication instructions, cross-core pipes and TRANDOM (ptocomm)."""

import ml_dtypes
import numpy as np
import pytest

import reference
from fastisa import pto
from fastisa.errors import ConstraintError, AccessError
from fastisa.pto import comm

V = pto.TileType.Vec
DTYPES = [np.float32, np.float16, ml_dtypes.bfloat16, np.int32, np.int16, np.int8]


def gm(a, r, c, pitch=None):
    return pto.GlobalTensor(a, (1, 1, 1, r, c), (1, 1, 1, pitch or c, 1))


def rand(dt, n, rng):
    if np.dtype(dt).kind in "iu":
        return rng.integers(-100, 100, n).astype(dt)
    return rng.standard_normal(n).astype(dt)


# ---- TPUT / TGET ------------------------------------------------------------------------
@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("which", ["TPUT", "TGET", "TPUT_ASYNC", "TGET_ASYNC"])
def test_copy_strided_exact(dt, which):
    rng = np.random.default_rng(1)
    src = rand(dt, 8 * 40, rng)
    dst = rand(dt, 8 * 48, rng)
    before = dst.copy()
    d, s = gm(dst, 6, 33, 48), gm(src, 6, 33, 40)
    tile = pto.Tile(V, dt, 8, 64)
    if which.endswith("ASYNC"):
        ev = getattr(comm, which)(d, s, comm.AsyncSession())
        assert ev.wait() and ev.test()
    else:
        getattr(comm, which)(d, s, tile)
    want = before.reshape(8, 48).copy()
    want[:6, :33] = src.reshape(8, 40)[:6, :33]
    assert dst.view(np.uint8).tobytes() == want.reshape(-1).view(np.uint8).tobytes()


@pytest.mark.parametrize("dt", [np.float32, np.float16, ml_dtypes.bfloat16, np.int32, np.int8],
                         ids=lambda d: np.dtype(d).name)
def test_tput_atomic_add(dt):
    rng = np.random.default_rng(2)
    src, dst = rand(dt, 64, rng), rand(dt, 64, rng)
    want = (dst.astype(np.float64) + src.astype(np.float64))
    want = want.astype(dt) if np.dtype(dt).kind == "f" or dt is ml_dtypes.bfloat16 else \
        ((dst.astype(np.int64) + src) % 2**(8 * np.dtype(dt).itemsize)).astype(
            np.dtype(dt).str.replace("i", "u")).view(dt)
    comm.TPUT(gm(dst, 4, 16), gm(src, 4, 16), pto.Tile(V, dt, 4, 64),
              atomic=comm.AtomicType.AtomicAdd)
    assert dst.tobytes() == np.asarray(want, dt).tobytes()


def test_copy_errors_change_nothing():
    a = np.zeros(64, np.float32)
    b = np.ones(64, np.float16)
    t = pto.Tile(V, np.float32, 4, 16)
    with pytest.raises(ConstraintError, match="TGET: src and dst must have one element type"):
        comm.TGET(gm(a, 4, 16), gm(b, 4, 16), t)
    with pytest.raises(ConstraintError, match="staging tile's dtype"):
        comm.TPUT(gm(a, 4, 16), gm(a.copy(), 4, 16), pto.Tile(V, np.int32, 4, 16))
    with pytest.raises(ConstraintError, match="Vec"):
        comm.TPUT(gm(a, 4, 16), gm(a.copy(), 4, 16), pto.Tile(pto.TileType.Mat, np.float32, 4, 16))
    with pytest.raises(ConstraintError, match="ping and pong"):
        comm.TGET(gm(a, 4, 16), gm(a.copy(), 4, 16), t, t)
    with pytest.raises(AccessError, match="src"):
        comm.TGET(gm(a, 4, 16), gm(np.ones(10, np.float32), 1, 10), t)
    with pytest.raises(ConstraintError, match="atomic"):
        comm.TPUT(gm(a, 4, 16), gm(a.copy(), 4, 16), t, atomic=7)
    assert not a.any()


# ---- signals --------------------------------------------------------------------------
def test_tnotify_set_add_wrap():
    s = np.array([5, 9], np.int32)
    comm.TNOTIFY(comm.Signal(s), 7, comm.NotifyOp.AtomicAdd)
    assert s.tolist() == [12, 9]
    comm.TNOTIFY(comm.Signal(s, 1), -3, comm.NotifyOp.Set)
    assert s.tolist() == [12, -3]
    s[0] = 2**31 - 1
    comm.TNOTIFY(comm.Signal(s), 1, comm.NotifyOp.AtomicAdd)
    assert s[0] == -2**31
    with pytest.raises(ConstraintError, match="TNOTIFY: value must be an int32"):
        comm.TNOTIFY(comm.Signal(s), 2**31, comm.NotifyOp.Set)
    with pytest.raises(ConstraintError, match="int32"):
        comm.TNOTIFY(gm(np.zeros(4, np.float32), 1, 4), 1, comm.NotifyOp.Set)


@pytest.mark.parametrize("cmp", list(comm.WaitCmp))
def test_ttest_every_element(cmp):
    sig = np.array([3, 5, 7, 9, 3, 5], np.int32)
    ops = {"EQ": np.equal, "NE": np.not_equal, "GT": np.greater, "GE": np.greater_equal,
           "LT": np.less, "LE": np.less_equal}
    for v in (2, 3, 5, 9, 10):
        got = comm.TTEST(comm.Signal2D(sig, 2, 2, stride=3), v, cmp)
        sub = sig.reshape(2, 3)[:, :2]
        assert got == bool(ops[cmp.name](sub, v).all())


def test_twait_between_ranks_sees_every_phase():
    sig = np.zeros(1, np.int32)
    seen = []

    def body(rank):
        if rank == 0:
            for v in (1, 3, 5):
                comm.TWAIT(comm.Signal(sig), v, comm.WaitCmp.EQ)
                seen.append(int(sig[0]))
        else:
            for v in (1, 3, 5):
                comm.TNOTIFY(comm.Signal(sig), v, comm.NotifyOp.Set)
    pto.launch(2, body)
    assert seen == [1, 3, 5]


def test_twait_deadlock_is_reported():
    sig = np.zeros(1, np.int32)
    with pytest.raises(ConstraintError, match="TWAIT: .*deadlock"):
        comm.TWAIT(comm.Signal(sig), 1, comm.WaitCmp.EQ)

    def body(rank):
        comm.TWAIT(comm.Signal(sig), 1 + rank, comm.WaitCmp.EQ)
    with pytest.raises(ConstraintError, match="deadlock.*rank 0 waits"):
        pto.launch(2, body)
    comm.TWAIT(comm.Signal(sig), 0, comm.WaitCmp.EQ)        # holds: returns at once


def test_launch_is_deterministic_and_ordered():
    order = []
    assert pto.launch(3, lambda r: order.append(r) or r * 10) == [0, 10, 20]
    assert order == [0, 1, 2]
    assert pto.launch(2, lambda r: (comm.get_rank(), comm.get_rank_size())) == [(0, 2), (1, 2)]
    with pytest.raises(ConstraintError, match="launch: n must be"):
        pto.launch(0, lambda r: r)


# ---- collectives ----------------------------------------------------------------------
@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("op", ["sum", "max", "min"])
@pytest.mark.parametrize("root", [0, 2])
def test_treduce_chunked(dt, op, root):
    rng = np.random.default_rng(3)
    R, C = 20, 48
    srcs = [rand(dt, R * C, rng) for _ in range(3)]
    out = np.full(R * C, 7, dt)
    group = comm.ParallelGroup([gm(s, R, C) for s in srcs], 3, root)
    acc = pto.Tile(V, dt, 8, 32, valid_row=pto.DYNAMIC, valid_col=pto.DYNAMIC)
    recv = pto.Tile(V, dt, 8, 32, valid_row=pto.DYNAMIC, valid_col=pto.DYNAMIC)
    comm.TREDUCE(group, gm(out, R, C), acc, recv, comm.ReduceOp[op.capitalize()])
    want = reference.pto_comm_reduce([s.reshape(R, C) for s in srcs], root, op)
    assert out.reshape(R, C).tobytes() == want.tobytes()


def test_treduce_static_tile_partial_chunk_rejected():
    a = np.zeros(20 * 16, np.int32)
    out = np.zeros_like(a)
    g = comm.ParallelGroup([gm(a, 20, 16), gm(a.copy(), 20, 16)])
    acc = pto.Tile(V, np.int32, 8, 16)
    with pytest.raises(ConstraintError, match="TREDUCE: tile 0 has a static valid shape"):
        comm.TREDUCE(g, gm(out, 20, 16), acc, pto.Tile(V, np.int32, 8, 16), comm.ReduceOp.Sum)
    with pytest.raises(ConstraintError, match="TREDUCE: expected"):
        comm.TREDUCE(g, gm(out, 20, 16), acc, acc)


@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: np.dtype(d).name)
def test_tbroadcast_gather_scatter(dt):
    rng = np.random.default_rng(4)
    src = rand(dt, 4 * 16, rng)
    bufs = [np.zeros(4 * 16, dt) for _ in range(3)]
    group = comm.ParallelGroup([gm(b, 4, 16) for b in bufs], 3, 1)
    t = pto.Tile(V, dt, 4, 32)
    comm.TBROADCAST(group, gm(src, 4, 16), t)
    assert all(b.tobytes() == src.tobytes() for b in bufs)
    parts = [rand(dt, 4 * 16, rng) for _ in range(3)]
    group = comm.ParallelGroup([gm(p, 4, 16) for p in parts], 3, 0)
    big = np.zeros(12 * 16, dt)
    comm.TGATHER(group, gm(big, 12, 16), t)
    assert big.tobytes() == np.concatenate(parts).tobytes()
    back = [np.zeros(4 * 16, dt) for _ in range(3)]
    comm.TSCATTER(comm.ParallelGroup([gm(b, 4, 16) for b in back]), gm(big, 12, 16), t)
    assert all(b.tobytes() == p.tobytes() for b, p in zip(back, parts))
    with pytest.raises(ConstraintError, match="TGATHER: dst must have at least 3 x 4"):
        comm.TGATHER(group, gm(np.zeros(8 * 16, dt), 8, 16), t)


def test_parallel_group_errors():
    a = gm(np.zeros(4, np.float32), 1, 4)
    with pytest.raises(ConstraintError, match="root_idx"):
        comm.ParallelGroup([a, a], 2, 2)
    with pytest.raises(ConstraintError, match="one element type"):
        comm.ParallelGroup([a, gm(np.zeros(4, np.int32), 1, 4)])


# ---- TRANDOM -------------------------------------------------------------------------
@pytest.mark.parametrize("rows,cols,vr,vc", [(4, 256, 4, 256), (3, 512, 3, 300), (2, 64, 2, 40),
                                             (5, 1024, 4, 1000)])
@pytest.mark.parametrize("rounds", [7, 10])
@pytest.mark.parametrize("dt", [np.uint32, np.int32])
def test_trandom_bits(rows, cols, vr, vc, rounds, dt):
    key = [0x01234, 0xFFFFFFF0]
    counter = [0xFFFFFFFE, 0xFFFFFFFF, 3, 0]      # carries through the words
    t = pto.Tile(V, dt, rows, cols, valid_row=vr, valid_col=vc)
    t.data[...] = np.array(7, dt)
    pto.TRANDOM(t, key, counter, rounds=rounds)
    want = reference.pto_trandom(rows, cols, vr, vc, key, counter, rounds)
    assert t.data[:vr, :vc].view(np.uint32).tobytes() == want.tobytes()
    assert (t.data[vr:] == 7).all() and (t.data[:, vc:] == 7).all()


def test_trandom_errors():
    with pytest.raises(ConstraintError, match="TRANDOM: dst dtype must be int32 or uint32"):
        pto.TRANDOM(pto.Tile(V, np.float32, 1, 64), [1, 2], [0, 0, 0, 0])
    with pytest.raises(ConstraintError, match="TRANDOM: rounds must be 7 or 10"):
        pto.TRANDOM(pto.Tile(V, np.uint32, 1, 64), [1, 2], [0, 0, 0, 0], rounds=8)
    with pytest.raises(ConstraintError, match="TRANDOM: counter must be 4 words"):
        pto.TRANDOM(pto.Tile(V, np.uint32, 1, 64), [1, 2], [0, 0, 0])
    with pytest.raises(ConstraintError, match="row-major"):
        pto.TRANDOM(pto.Tile(V, np.uint32, 64, 8, blayout=pto.BLayout.ColMajor), [1, 2],
                    [0, 0, 0, 0])


# ---- pipes ------------------------------------------------------------------------------
def test_pipe_stream_two_cores_fifo_depth():
    f4 = np.float32
    pipe = pto.TPipe(0, pto.Direction.DIR_C2V, 16 * 32 * 4, 2)
    got, log = [], []

    def cube():
        for it in range(6):
            t = pto.Tile(pto.TileType.Acc, f4, 16, 32)
            t.data[...] = it
            pto.TPUSH(pipe, t)
            log.append(("push", it))

    def vec():
        for it in range(6):
            t = pto.Tile(V, f4, 16, 32)
            pto.TPOP(pipe, t)
            log.append(("pop", it))
            got.append(float(t.data[3, 5]))
    pto.launch([cube, vec])
    assert got == [0, 1, 2, 3, 4, 5]
    # never more than 2 (the slot count) pushed and not yet popped
    depth = 0
    for kind, _ in log:
        depth += 1 if kind == "push" else -1
        assert depth <= 2


@pytest.mark.parametrize("split", [pto.TileSplitAxis.TILE_UP_DOWN, pto.TileSplitAxis.TILE_LEFT_RIGHT])
def test_pipe_split_to_two_subblocks_and_back(split):
    data = np.arange(16 * 32, dtype=np.float32).reshape(16, 32)
    c2v = pto.TPipe(0, pto.Direction.DIR_BOTH, 0, 2)
    halves, joined = {}, {}
    sh = (8, 32) if split == pto.TileSplitAxis.TILE_UP_DOWN else (16, 16)

    def cube():
        t = pto.Tile(pto.TileType.Acc, np.float32, 16, 32)
        t.data[...] = data
        pto.TPUSH(c2v, t, split)
        m = pto.Tile(pto.TileType.Mat, np.float32, 16, 32)
        pto.TPOP(c2v, m, split)
        joined["m"] = m.data.copy()

    def vec():
        sb = pto.get_subblock_idx()
        t = pto.Tile(V, np.float32, *sh)
        pto.TPOP(c2v, t, split)
        halves[sb] = t.data.copy()
        t.data[...] += 1
        pto.TPUSH(c2v, t, split)
    pto.launch([cube, vec, vec], subblocks=2)
    axis = 0 if split == pto.TileSplitAxis.TILE_UP_DOWN else 1
    assert np.array_equal(np.concatenate([halves[0], halves[1]], axis=axis), data)
    assert np.array_equal(joined["m"], data + 1)


def test_pipe_errors_and_deadlock():
    pipe = pto.TPipe(0, pto.Direction.DIR_C2V, 64, 1)
    with pytest.raises(ConstraintError, match="TPOP: waits for data in the pipe.*deadlock"):
        pto.TPOP(pipe, pto.Tile(V, np.float32, 1, 8))
    with pytest.raises(ConstraintError, match="does not fit a 64-byte slot"):
        pto.TPUSH(pipe, pto.Tile(pto.TileType.Acc, np.float32, 16, 16))
    with pytest.raises(ConstraintError, match="TPUSH: the producer tile must be Acc, Mat or Vec"):
        pto.TPUSH(pipe, pto.Tile(pto.TileType.Left, np.float32, 1, 8))
    a = pto.Tile(pto.TileType.Acc, np.float32, 1, 16)
    pto.TPUSH(pipe, a)
    with pytest.raises(ConstraintError, match="TPUSH: waits for a free pipe slot"):
        pto.TPUSH(pipe, a)
    with pytest.raises(ConstraintError, match="element types must match"):
        pto.TPOP(pipe, pto.Tile(V, np.int32, 1, 16))
    with pytest.raises(ConstraintError, match="TPipe: slot_num must be >= 1"):
        pto.TPipe(0, pto.Direction.DIR_C2V, 64, 0)


def test_a5_slot_held_until_tfree_and_a3_released_at_pop():
    f4 = np.float32
    acc = pto.Tile(pto.TileType.Acc, f4, 1, 16)
    for tgt, held in (("A2A3", False), ("A5", True)):
        with pto.target(tgt):
            pipe = pto.TPipe(0, pto.Direction.DIR_C2V, 64, 1)
            pto.TPUSH(pipe, acc)
            pto.TPOP(pipe, pto.Tile(V, f4, 1, 16))
            assert pipe.occupied == (1 if held else 0)
            if held:
                with pytest.raises(ConstraintError, match="TPUSH: waits for a free pipe slot"):
                    pto.TPUSH(pipe, acc)
                pto.TFREE(pipe)
            assert pipe.occupied == 0
            pto.TPUSH(pipe, acc)


def test_dir_both_shares_one_ring_producer_waits_at_its_cursor():
    """The CPU simulator's DIR_BOTH ring: a V2C slot moves the shared producer cursor, so
    the next two cube tiles land in slots 1 and 0 and the consumer (cursor 0) reads them
    in slot order; a third cube push waits for slot 1 even when slot 0 is free."""
    f4 = np.float32
    with pto.target("A5"):
        pipe = pto.TPipe(0, pto.Direction.DIR_BOTH, 0, 2)
        v = pto.Tile(V, f4, 2, 8)
        pto.TPUSH(pipe, v)                                   # V2C -> slot 0
        pto.TPOP(pipe, pto.Tile(pto.TileType.Mat, f4, 2, 8))
        pto.TFREE(pipe)
        for base in (1, 2):                                  # X -> slot 1, Y -> slot 0
            a = pto.Tile(pto.TileType.Acc, f4, 2, 8)
            a.data[...] = base
            pto.TPUSH(pipe, a)
        got = []
        t = pto.Tile(V, f4, 2, 8)
        pto.TPOP(pipe, t)
        got.append(float(t.data[0, 0]))
        pto.TFREE(pipe)                                      # slot 0 free, cursor at slot 1
        with pytest.raises(ConstraintError, match="free pipe slot"):
            pto.TPUSH(pipe, pto.Tile(pto.TileType.Acc, f4, 2, 8))
        pto.TPOP(pipe, t)
        got.append(float(t.data[0, 0]))
        assert got == [2.0, 1.0]


def test_no_split_pipe_second_lane_zeros_but_takes_part():
    f4 = np.float32
    with pto.target("A5"):
        pipe = pto.TPipe(0, pto.Direction.DIR_C2V, 0, 1, no_split=True)
        a = pto.Tile(pto.TileType.Acc, f4, 2, 8)
        a.data[...] = 3
        with pto.ScopedExecutionContext(0, 0, 1):
            pto.TPUSH(pipe, a)
        outs = []
        for lane in (0, 1):
            with pto.ScopedExecutionContext(0, lane, 2):
                t = pto.Tile(V, f4, 2, 8)
                t.data[...] = 9
                pto.TPOP(pipe, t)
                outs.append(t.data.copy())
                assert pipe.occupied == 1
                pto.TFREE(pipe)
        assert (outs[0] == 3).all() and (outs[1] == 0).all() and pipe.occupied == 0


@pytest.mark.parametrize("mode,src_dt", [("F322F16", np.float32), ("F322BF16", np.float32),
                                         ("QF322F16_PRE", np.float32), ("DEQF16", np.int32),
                                         ("VDEQF16", np.int32)])
@pytest.mark.parametrize("relu", [False, True])
def test_tpush_fixpipe_quant(mode, src_dt, relu):
    rng = np.random.default_rng(7)
    R, C = 4, 16
    if src_dt is np.int32:
        data = rng.integers(-40000, 40000, (R, C)).astype(np.int32)
    else:
        data = (rng.standard_normal((R, C)) * 3e4).astype(np.float32)
        data[0, :4] = [np.inf, -np.inf, 1e30, -1e-30]
    acc = pto.Tile(pto.TileType.Acc, src_dt, R, C)
    acc.data[...] = data
    words = None
    scalar = 2.5 if mode != "F322F16" else None
    if mode == "VDEQF16":
        scales = rng.integers(1, 5, C).astype(np.float32)
        words = scales.view(np.uint32).astype(np.uint64)       # the float's bits, as gen_data
        scalar = None
    want = reference.pto_fixpipe(data, mode, relu, scalar, words)
    pipe = pto.TPipe(0, pto.Direction.DIR_C2V, 0, 1)
    pto.TPUSH(pipe, acc, quant=pto.QuantMode[mode], relu=relu, quant_scalar=scalar,
              quant_vector=words)
    out = pto.Tile(V, want.dtype, R, C)
    pto.TPOP(pipe, out)
    assert out.data.view(np.uint16).tobytes() == want.view(np.uint16).tobytes()


def test_tpush_fixpipe_errors():
    pipe = pto.TPipe(0, pto.Direction.DIR_C2V, 0, 1)
    with pytest.raises(ConstraintError, match="DEQF16 converts int32"):
        pto.TPUSH(pipe, pto.Tile(pto.TileType.Acc, np.float32, 1, 8), quant=pto.QuantMode.DEQF16)
    with pytest.raises(ConstraintError, match="VDEQF16 needs quant_vector"):
        pto.TPUSH(pipe, pto.Tile(pto.TileType.Acc, np.int32, 1, 8), quant=pto.QuantMode.VDEQF16)
    with pytest.raises(ConstraintError, match="fixpipe options of an Acc tile"):
        pto.TPUSH(pipe, pto.Tile(pto.TileType.Mat, np.float32, 1, 8), relu=True)
    with pytest.raises(ConstraintError, match="quant must be a QuantMode"):
        pto.TPUSH(pipe, pto.Tile(pto.TileType.Acc, np.float32, 1, 8), quant=99)
    assert pipe.occupied == 0


def test_launch_reraises_a_rank_error_and_the_other_ranks_end():
    sig = np.zeros(1, np.int32)
    done = []

    def body(rank):
        if rank == 0:
            raise ValueError("rank 0 failed")
        comm.TWAIT(comm.Signal(sig), 1, comm.WaitCmp.EQ)   # can never be satisfied now
        done.append(rank)
    with pytest.raises(ValueError, match="rank 0 failed"):
        pto.launch(2, body)
    assert done == []


def test_mixed_launch_roles_and_errors():
    seen = []
    pto.launch([lambda: seen.append(("c", pto.get_subblock_idx(), pto.get_subblock_num())),
                lambda: seen.append(("v", pto.get_subblock_idx(), pto.get_subblock_num())),
                lambda: seen.append(("v", pto.get_subblock_idx(), pto.get_subblock_num()))],
               subblocks=2)
    assert seen == [("c", 0, 2), ("v", 0, 2), ("v", 1, 2)]
    with pytest.raises(ConstraintError, match="with subblocks=2 there must be 3 cores"):
        pto.launch([lambda: None], subblocks=2)
    with pytest.raises(ConstraintError, match="ScopedExecutionContext"):
        pto.ScopedExecutionContext(0, 2, 2)
