"""NKI launches of several programs (issue 11 item 5, issue 14 multi-core): the programs
of ``nki.simulate(kernel)[n]`` run as turn-taking threads -- concurrently when they
synchronise (core_barrier / sendrecv), in program order otherwise; a partner that never
arrives is an immediate error; cross-program write-after-write races on shared HBM are
warned about.  Also: SBUF/PSUM capacity with the compiler's liveness, NKIObject
dataclasses without annotations, shared_identity_matrix in SBUF (kernels of our own in
the patterns of nki-library's kernels)."""

import time
import warnings
from dataclasses import dataclass, field

import numpy as np
import pytest

from fastisa import nki
from fastisa.errors import AccessError, ConstraintError, UndefinedBehaviorWarning
from fastisa.nki import isa as nisa, language as nl


def _no_race_warnings(fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = fn()
    races = [x for x in w if issubclass(x.category, UndefinedBehaviorWarning)
             and "write-after-write" in str(x.message)]
    return out, races


# ---- LNC2: programs that synchronise run concurrently -----------------------------------------

@nki.jit
def _swap_halves(a):
    """Each core loads its half, swaps it with the other core by sendrecv, stores it."""
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    r = nl.program_id(0)
    h = a.shape[0] // 2
    mine = nl.ndarray((h, a.shape[1]), a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=mine, src=a[r * h:(r + 1) * h])
    got = nl.ndarray((h, a.shape[1]), a.dtype, buffer=nl.sbuf)
    nisa.sendrecv(mine, got, send_to_rank=1 - r, recv_from_rank=1 - r, pipe_id=0)
    nisa.dma_copy(dst=out[r * h:(r + 1) * h], src=got)
    return out


def test_lnc2_sendrecv_swaps_bit_exact():
    a = np.random.default_rng(0).standard_normal((8, 16)).astype(np.float32)
    a[0, 0] = np.nan
    out, races = _no_race_warnings(lambda: nki.simulate(_swap_halves)[2](a))
    want = np.concatenate([a[4:], a[:4]])
    assert (out.view(np.uint32) == want.view(np.uint32)).all()
    assert races == []
    assert _swap_halves.profile.totals().get("DMA", 0) > 0     # costs recorded from the threads


@nki.jit
def _ring_rounds(a):
    """Three rounds in an affine_range: add the partner's tile, barrier, next round."""
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    r = nl.program_id(0)
    h = a.shape[0] // 2
    acc = nl.ndarray((h, a.shape[1]), a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=acc, src=a[r * h:(r + 1) * h])
    other = nl.ndarray((h, a.shape[1]), a.dtype, buffer=nl.sbuf)
    for _ in nl.affine_range(3):
        nisa.sendrecv(acc, other, send_to_rank=1 - r, recv_from_rank=1 - r, pipe_id=1)
        nisa.tensor_tensor(dst=acc, data1=acc, data2=other, op=nl.add)
        nisa.core_barrier(out, (0, 1))
    nisa.dma_copy(dst=out[r * h:(r + 1) * h], src=acc)
    return out


def test_lnc2_rounds_of_exchange_and_barrier():
    a = np.arange(32, dtype=np.float32).reshape(8, 4)
    out = nki.simulate(_ring_rounds)[2](a)
    x, y = a[:4].copy(), a[4:].copy()
    for _ in range(3):                         # both add the other's value each round
        x, y = np.float32(x + y), np.float32(y + x)
    assert (out == np.concatenate([x, y])).all()


@nki.jit
def _zero_fill_then_rows(a):
    """Every program zero-fills the whole output, then (after a barrier) stores its rows."""
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    r = nl.program_id(0)
    h = a.shape[0] // 2
    z = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
    nisa.memset(z, 0.0)
    nisa.dma_copy(dst=out, src=z)              # the same zeros from both cores: benign
    nisa.core_barrier(out, (0, 1))
    t = nl.ndarray((h, a.shape[1]), a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a[r * h:(r + 1) * h])
    nisa.dma_copy(dst=out[r * h:(r + 1) * h], src=t)
    return out


def test_barrier_orders_the_zero_fill_before_the_rows():
    a = np.arange(1, 33, dtype=np.float32).reshape(8, 4)
    out, races = _no_race_warnings(lambda: nki.simulate(_zero_fill_then_rows)[2](a))
    assert (out == a).all() and races == []


# ---- without synchronisation: program order, and the race is named ----------------------------

@nki.jit
def _racy_fill_then_rows(a):
    """The same without the barrier: program 1's zero-fill lands on program 0's rows."""
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    r = nl.program_id(0)
    h = a.shape[0] // 2
    z = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
    nisa.memset(z, 0.0)
    nisa.dma_copy(dst=out, src=z)
    t = nl.ndarray((h, a.shape[1]), a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a[r * h:(r + 1) * h])
    nisa.dma_copy(dst=out[r * h:(r + 1) * h], src=t)
    return out


def test_unsynchronised_programs_run_in_order_and_the_race_is_warned():
    a = np.arange(1, 33, dtype=np.float32).reshape(8, 4)
    with pytest.warns(UndefinedBehaviorWarning, match=r"program 1 overwrote bytes of "
                      r"shared_hbm tensor .* that program 0 wrote"):
        out = nki.simulate(_racy_fill_then_rows)[2](a)
    # program 0 ran to its end first, then program 1 zero-filled everything
    assert (out[:4] == 0).all() and (out[4:] == a[4:]).all()


@nki.jit
def _rows_per_program(a):
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    r = nl.program_id(0)
    n = nl.num_programs(0)
    h = a.shape[0] // n
    t = nl.ndarray((h, a.shape[1]), a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a[r * h:(r + 1) * h])
    nisa.tensor_scalar(dst=t, data=t, op0=np.add, operand0=float(r))
    nisa.dma_copy(dst=out[r * h:(r + 1) * h], src=t)
    return out


def test_spmd_grid_without_sync_disjoint_rows_no_warning():
    a = np.zeros((8, 4), np.float32)
    out, races = _no_race_warnings(lambda: nki.simulate(_rows_per_program)[4](a))
    assert out[:, 0].tolist() == [0, 0, 1, 1, 2, 2, 3, 3] and races == []


# ---- a partner that never arrives: an error at once, not a hang ------------------------------

@nki.jit
def _barrier_on_core0_only(a):
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    if nl.program_id(0) == 0:
        nisa.core_barrier(out, (0, 1))
    return out


@nki.jit
def _mismatched_sync(a):
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((2, 2), nl.float32, buffer=nl.sbuf)
    if nl.program_id(0) == 0:
        nisa.sendrecv(t, t, send_to_rank=1, recv_from_rank=1, pipe_id=0)
    else:
        nisa.core_barrier(out, (0, 1))
    return out


def test_partner_that_ended_is_a_deadlock_error():
    t0 = time.monotonic()
    with pytest.raises(ConstraintError, match=r"core_barrier: the partner core never arrives "
                       r"\(program 0 waits in core_barrier; program 1 has ended\)"):
        nki.simulate(_barrier_on_core0_only)[2](np.zeros((2, 2), np.float32))
    assert time.monotonic() - t0 < 2.0         # detected, not timed out


def test_partners_waiting_in_different_instructions():
    with pytest.raises(ConstraintError, match=r"program 0 waits in sendrecv on pipe 0; "
                       r"program 1 waits in core_barrier"):
        nki.simulate(_mismatched_sync)[2](np.zeros((2, 2), np.float32))


@nki.jit
def _core1_fails(a):
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((2, 2), nl.float32, buffer=nl.sbuf)
    if nl.program_id(0) == 0:
        nisa.core_barrier(out, (0, 1))
    else:
        nisa.sendrecv(t, t, send_to_rank=5, recv_from_rank=0, pipe_id=0)
    return out


def test_the_first_error_is_raised_not_the_deadlock_it_causes():
    with pytest.raises(ConstraintError, match="sendrecv: send_to_rank must be 0 or 1, got 5"):
        nki.simulate(_core1_fails)[2](np.zeros((2, 2), np.float32))


# ---- SBUF capacity with the compiler's liveness ----------------------------------------------

_BIG = 150 * 256            # float32 elements per partition: 150 KiB of the 224 KiB


@nki.jit
def _big_buffers_in_sequence(x):
    """Two 150 KiB buffers in turn; the first is still bound to a variable, never used again."""
    o = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
    a = nl.ndarray((128, _BIG), nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=a[:, 0:x.shape[1]], src=x)
    nisa.dma_copy(dst=o, src=a[:, 0:x.shape[1]])
    b = nl.ndarray((128, _BIG), nl.float32, buffer=nl.sbuf)
    nisa.memset(b, 2.0)
    nisa.tensor_tensor(dst=b[:, 0:x.shape[1]], data1=b[:, 0:x.shape[1]], data2=b[:, 0:x.shape[1]],
                       op=nl.multiply)
    nisa.dma_copy(dst=o, src=b[:, 0:x.shape[1]])
    return o


@nki.jit
def _big_buffers_together(x):
    o = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
    a = nl.ndarray((128, _BIG), nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=a[:, 0:x.shape[1]], src=x)
    b = nl.ndarray((128, _BIG), nl.float32, buffer=nl.sbuf)
    nisa.memset(b, 2.0)
    nisa.tensor_tensor(dst=b[:, 0:x.shape[1]], data1=a[:, 0:x.shape[1]], data2=b[:, 0:x.shape[1]],
                       op=nl.add)                              # a is used with b allocated
    nisa.dma_copy(dst=o, src=b[:, 0:x.shape[1]])
    return o


def test_capacity_counts_tensors_in_use_not_every_live_variable():
    x = np.ones((128, 64), np.float32)
    assert (nki.simulate(_big_buffers_in_sequence)(x) == 4.0).all()


def test_capacity_error_when_the_tensors_are_used_together():
    x = np.ones((128, 64), np.float32)
    with pytest.raises(AccessError, match=r"sbuf capacity exceeded on trn2: .* needs 153600 "
                       r"bytes per partition.*tensors used later are still needed.*"
                       r"307200 of 229376 do not fit"):
        nki.simulate(_big_buffers_together)(x)


def test_eager_allocation_outside_a_kernel_still_checks_at_once():
    with nl.use_target("trn2"):
        a = nl.ndarray((128, _BIG), nl.float32, buffer=nl.sbuf)
        with pytest.raises(AccessError, match="sbuf capacity exceeded"):
            nl.ndarray((128, _BIG), nl.float32, buffer=nl.sbuf)
        del a


@nki.jit
def _psum_tiles_per_iteration(x):
    """A PSUM tile per iteration kept in a list (as unrolled code keeps its variables):
    each is used only in its iteration."""
    o = nl.ndarray((x.shape[0], x.shape[1]), nl.float32, buffer=nl.shared_hbm)
    xs = nl.ndarray(x.shape, x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=xs, src=x)
    keep = []
    acc = nl.ndarray(x.shape, nl.float32, buffer=nl.sbuf)
    nisa.memset(acc, 0.0)
    for _ in range(6):                          # 6 x 4 KiB > the 16 KiB of PSUM
        p = nl.ndarray((x.shape[0], 1024), nl.float32, buffer=nl.psum)
        nisa.tensor_copy(dst=p[:, 0:x.shape[1]], src=xs)
        nisa.tensor_tensor(dst=acc, data1=acc, data2=p[:, 0:x.shape[1]], op=nl.add)
        keep.append(p)
    nisa.dma_copy(dst=o, src=acc)
    return o


def test_psum_tiles_kept_alive_but_unused_fit():
    x = np.full((128, 16), 0.5, np.float32)
    assert (nki.simulate(_psum_tiles_per_iteration)(x) == 3.0).all()


# ---- nkifull: a freed tensor's id reused by a new allocation is not a later use -------------

@nki.jit
def _psum_bank_freed_then_id_reused(x):
    """Seven PSUM banks used to the end, an eighth used once and freed, a ninth allocated
    and first written while the eighth was still referenced (an overflow checkpoint with it
    pending), then a new SBUF tile that has the freed bank's ``id`` (CPython reuses a freed object's memory,
    so ids repeat; which allocation gets it depends on the allocator, so the test gives the
    checkpoint's entry the new tile's id, the state such a reuse leaves).  The bank was
    dead, so 7 + 1 banks fit the 8 of trn2's PSUM (as moe_block_tkg's gate/up tiles do)."""
    from fastisa.nki import language as _lang
    from fastisa.nki.tensor import _owner
    o = nl.ndarray((x.shape[0], x.shape[1]), nl.float32, buffer=nl.shared_hbm)
    xs = nl.ndarray(x.shape, x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=xs, src=x)
    keep = []
    for _ in range(7):
        p = nl.ndarray((x.shape[0], 512), nl.float32, buffer=nl.psum)
        nisa.tensor_copy(dst=p[:, 0:x.shape[1]], src=xs)
        keep.append(p)
    a = nl.ndarray((x.shape[0], 512), nl.float32, buffer=nl.psum)
    nisa.memset(a, 0.0)
    dead = id(_owner(a.data))
    c = nl.ndarray((x.shape[0], 512), nl.float32, buffer=nl.psum)   # over the 8 banks
    nisa.tensor_copy(dst=c[:, 0:x.shape[1]], src=xs)   # c's first write: a still held
    del a, p
    t = nl.ndarray((x.shape[0], 4), nl.float32, buffer=nl.sbuf)
    new = id(_owner(t.data))
    (cp,) = [cp for cp in _lang._MACHINE.get()._checkpoints if dead in cp.pending]
    assert cp.pending[dead][0]() is None                 # the bank was freed
    if new != dead:                                      # the id reuse, made certain
        cp.pending[new] = cp.pending.pop(dead)
        index = _lang._MACHINE.get()._cp_index
        index.setdefault(new, []).extend(index.pop(dead))
    nisa.memset(t, 1.0)          # the new tensor is used: not a use of the freed bank
    acc = nl.ndarray(x.shape, nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=acc, src=c[:, 0:x.shape[1]])
    for q in keep:                           # the seven banks are used to the end
        nisa.tensor_tensor(dst=acc, data1=acc, data2=q[:, 0:x.shape[1]], op=nl.add)
    nisa.dma_copy(dst=o, src=acc)
    return o


def test_capacity_a_freed_tensors_id_on_a_new_tensor_is_not_a_use():
    x = np.full((128, 16), 0.5, np.float32)
    assert (nki.simulate(_psum_bank_freed_then_id_reused)(x) == 4.0).all()


def _psum_list_up_front(x, together):
    """Twelve [128, 512] float32 PSUM tiles (24 KiB, PSUM has 16) allocated up front in a
    list, as nki-library's moe_cte bwmm_shard_on_I does; filled and read out four at a time
    (fits: the compiler places a tile at its first write) or all filled before any is read
    (does not fit)."""
    o = nl.ndarray((x.shape[0], x.shape[1]), nl.float32, buffer=nl.shared_hbm)
    xs = nl.ndarray(x.shape, x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=xs, src=x)
    tiles = [nl.ndarray((x.shape[0], 512), nl.float32, buffer=nl.psum) for _ in range(12)]
    acc = nl.ndarray(x.shape, nl.float32, buffer=nl.sbuf)
    nisa.memset(acc, 0.0)
    groups = [range(12)] if together else [range(g, g + 4) for g in range(0, 12, 4)]
    for g in groups:
        for i in g:
            nisa.tensor_copy(dst=tiles[i][:, 0:x.shape[1]], src=xs)
        for i in g:
            nisa.tensor_tensor(dst=acc, data1=acc, data2=tiles[i][:, 0:x.shape[1]], op=nl.add)
    nisa.dma_copy(dst=o, src=acc)
    return o


def test_capacity_live_range_starts_at_the_first_write():
    x = np.full((128, 16), 0.25, np.float32)
    got = nki.simulate(nki.jit(lambda x: _psum_list_up_front(x, False)))(x)
    assert (got == 3.0).all()
    with pytest.raises(AccessError, match=r"psum capacity exceeded on trn2: .* needs 2048 bytes "
                       r"per partition.*first written by tensor_copy.*do not fit"):
        nki.simulate(nki.jit(lambda x: _psum_list_up_front(x, True)))(x)


# ---- NKIObject dataclasses, shared_identity_matrix -------------------------------------------

@dataclass
class _SectionCfg(nl.NKIObject):
    index = None            # no annotations: no dataclass fields
    offset = 0


@dataclass
class _TileCfg(nl.NKIObject):
    size: int
    dims: list = field(default_factory=list)
    scale: float = 1.0

    def __post_init__(self):
        self.total = None if self.size is None else self.size * 2


class _PlainCfg(nl.NKIObject):             # no @dataclass: compiled the same way
    rows: int
    cols: int = 512
    name = "cfg"


def test_nkiobject_without_dataclass_takes_its_annotated_fields_positionally():
    c = _PlainCfg(128)
    assert (c.rows, c.cols, c.name) == (128, 512, "cfg")
    d = _PlainCfg(cols=64, name="x")
    assert (d.rows, d.cols, d.name) == (None, 64, "x")
    with pytest.raises(TypeError, match="unexpected keyword argument 'depth'"):
        _PlainCfg(depth=2)


def test_nkiobject_dataclass_without_annotations_takes_keywords():
    c = _SectionCfg(index=3, offset=128)
    assert (c.index, c.offset) == (3, 128) and _SectionCfg().offset == 0
    t = _TileCfg(64, scale=0.5)
    assert (t.size, t.dims, t.scale, t.total) == (64, [], 0.5, 128)
    assert _TileCfg(1) == _TileCfg(1) and repr(_TileCfg(2)).startswith("_TileCfg(size=2")
    # SDK language guide, "Class Support": the compiler's default __init__ gives a field
    # without a default the default None (nki-library builds MLPTKGConstantsDimensionSizes
    # without one of its fields)
    none = _TileCfg()
    assert (none.size, none.dims, none.scale) == (None, [], 1.0)
    with pytest.raises(TypeError, match="takes 3 positional arguments but 4"):
        _TileCfg(1, [], 1.0, 2)
    with pytest.raises(TypeError, match="unexpected keyword argument 'sizes'"):
        _TileCfg(sizes=1)


@nki.jit
def _interleave_permutation(x):
    """The permutation of rows [e0, e1, ..., o0, o1, ...] -> [e0, o0, e1, o1, ...] read out
    of the SBUF identity with a strided access pattern, applied with nc_matmul."""
    d = x.shape[0]
    ident = nl.shared_identity_matrix(d, dtype=nl.float32)
    perm = nl.ndarray((d, d), nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=perm.reshape((d, 2, d // 2)),
                     src=ident.ap(pattern=[[d, d], [1, 2], [2, d // 2]]))
    xs = nl.ndarray(x.shape, x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=xs, src=x)
    ps = nl.ndarray(x.shape, nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=ps, stationary=perm, moving=xs)       # perm.T @ x
    o = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
    r = nl.ndarray(x.shape, x.dtype, buffer=nl.sbuf)
    nisa.tensor_copy(dst=r, src=ps)
    nisa.dma_copy(dst=o, src=r)
    po = nl.ndarray((d, d), nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=po, src=perm)
    return o, po


def test_shared_identity_matrix_is_an_sbuf_tile():
    @nki.jit
    def k():
        i = nl.shared_identity_matrix(8, dtype=nl.bfloat16)
        assert i.buffer is nl.sbuf and i.shape == (8, 8)
        d = nl.ndarray((4, 4), nl.int32, buffer=nl.sbuf)
        assert nl.shared_identity_matrix(4, dst=d) is d
        o = nl.ndarray((8, 8), nl.bfloat16, buffer=nl.shared_hbm)
        nl.store(o, nl.load(i))               # Beta 1 kernels load it: still works
        do = nl.ndarray((4, 4), nl.int32, buffer=nl.shared_hbm)
        nl.store(do, d)
        return o, do
    o, d = nki.simulate(k)()
    assert (o.astype(np.float32) == np.eye(8)).all() and (d == np.eye(4)).all()
    with pytest.raises(ConstraintError, match=r"n must be an integer in \[1, 128\]"):
        nl.shared_identity_matrix(129)


def test_identity_permutation_by_access_pattern_bit_exact():
    x = np.random.default_rng(1).standard_normal((8, 16)).astype(np.float32)
    out, perm = nki.simulate(_interleave_permutation)(x)
    want_perm = np.zeros((8, 8), np.float32)
    for i in range(8):                         # row i of perm = identity row i, columns
        cols = list(range(0, 8, 2)) + list(range(1, 8, 2))      # even ones, then odd ones
        want_perm[i] = np.eye(8, dtype=np.float32)[i, cols]
    assert (perm == want_perm).all()
    want = want_perm.T.astype(np.float64) @ x.astype(np.float64)   # one 1.0 per column: exact
    assert (out.view(np.uint32) == want.astype(np.float32).view(np.uint32)).all()
