"""Kernels of our own written in the patterns nki-library's ``core`` kernels use (branch
nkicore): column views of on-chip running statistics (``buf[:, g]``), Beta 1 block tensors,
``nl.shared_constant`` read from a ``.npy`` file.  Bit-exact against tests/reference.py."""

import ml_dtypes
import numpy as np
import pytest

import reference as ref
from fastisa import nki
from fastisa.errors import AccessError
from fastisa.nki import isa as nisa
from fastisa.nki import language as nl


def _bits(a):
    a = np.asarray(a)
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32}[a.dtype.itemsize])


# A flash-attention style running maximum: each group g of score columns reduces to a
# per-row maximum (a [P, 1] tile), which is copied into column g of the running-max buffer
# (``run_max[:, g]``, a one-column view: SDK 2.33 keeps on-chip views at least 2-D) on the
# first section and folded in with tensor_tensor(maximum) on the later ones.  fastisa once
# made ``run_max[:, g]`` a 1-D [P] view that tensor_copy rejected.
_P, _G, _SECTIONS, _W = 128, 3, 2, 64


@nki.jit
def _running_max(scores):
    out = nl.ndarray((_P, _G), nl.float32, buffer=nl.shared_hbm)
    run_max = nl.ndarray((_P, _G), nl.float32, buffer=nl.sbuf)
    for s in nl.sequential_range(_SECTIONS):
        for g in nl.static_range(_G):
            tile = nl.ndarray((_P, _W), nl.float32, buffer=nl.sbuf)
            nisa.dma_copy(dst=tile, src=scores[s, :, g * _W:(g + 1) * _W])
            sec_max = nl.ndarray((_P, 1), nl.float32, buffer=nl.sbuf)
            nisa.tensor_reduce(dst=sec_max, op=nl.maximum, data=tile, axis=1)
            col = run_max[:, g]
            assert col.shape == (_P, 1)
            if s == 0:
                nisa.tensor_copy(col, sec_max)
            else:
                nisa.tensor_tensor(col, col, sec_max, op=nl.maximum)
    nisa.dma_copy(dst=out, src=run_max)
    return out


def test_running_max_into_column_views_bit_exact(rng):
    x = rng.standard_normal((_SECTIONS, _P, _G * _W)).astype(np.float32)
    x[0, 5, 7] = np.nan
    got = nki.simulate(_running_max)(x)
    want = np.empty((_P, _G), np.float32)
    for g in range(_G):
        cols = x[:, :, g * _W:(g + 1) * _W]
        m = [ref.nki_tensor_reduce(cols[s], "float32", "float32", "maximum")
             for s in range(_SECTIONS)]
        acc = m[0]
        for s in range(1, _SECTIONS):
            acc = ref.nki_maximum(acc, m[s])
        want[:, g] = acc
    assert (_bits(got) == _bits(want)).all()


def test_on_chip_integer_index_keeps_partition_dim_hbm_drops_it():
    s = nl.ndarray((128, 4, 8), nl.bfloat16, buffer=nl.sbuf)
    assert s[0].shape == (1, 4, 8) and s[:, 2].shape == (128, 8) and s[:, 1, 3].shape == (128, 1)
    p = nl.ndarray((64, 16), nl.float32, buffer=nl.psum)
    assert p[:, 5].shape == (64, 1) and p[7, 5].shape == (1, 1)
    h = nl.ndarray((128, 4, 8), nl.bfloat16, buffer=nl.shared_hbm)
    assert h[0].shape == (4, 8) and h[:, 1, 3].shape == (128,)
    # writes through a column view reach the parent
    s2 = nl.ndarray((128, 3), nl.float32, buffer=nl.sbuf)
    s2.data[...] = 0
    nisa.memset(s2[:, 1], value=2.5)
    assert (s2.data[:, 1] == 2.5).all() and (s2.data[:, [0, 2]] == 0).all()


@nki.jit(mode="simulation")
def _block_exp(a):
    B, N, M = a.shape
    loaded = nl.ndarray((B, nl.par_dim(N), M), dtype=a.dtype, buffer=nl.sbuf)
    out = nl.ndarray((B, N, M), dtype=a.dtype, buffer=nl.shared_hbm)
    for b in nl.affine_range(B):
        assert loaded[b].shape == (N, M)            # Beta 1: the block index drops its dim
        loaded[b] = nl.load(a[b])
        nl.store(out[b], value=nl.exp(loaded[b]))
    return out


def test_beta1_block_tensor_index_drops_the_block_dim(rng):
    x = rng.standard_normal((3, 128, 32)).astype(np.float32)
    got = _block_exp(x)
    want = np.stack([ref.nki_activation("exp", x[b], "float32", "float32") for b in range(3)])
    assert (_bits(got) == _bits(want)).all()


def test_shared_constant_from_a_npy_path(tmp_path, rng):
    table = rng.integers(-1000, 1000, (16, 8)).astype(np.int32)
    path = tmp_path / "rot.npy"
    np.save(path, table)

    @nki.jit
    def kernel():
        c = nl.shared_constant(str(path))
        out = nl.ndarray(c.shape, c.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=c)
        return out

    got = nki.simulate(kernel)()
    assert got.dtype == np.int32 and (got == table).all()
    assert (nl.shared_constant(path).data == table).all()     # a PathLike too
    with pytest.raises(OSError):
        nl.shared_constant(str(tmp_path / "missing.npy"))


# PSUM banks reused by address= (nki-library's attention_tkg): every reduction tile is a new
# nl.ndarray at bank ``i % 8``; per column, one matmul (accumulate=None) against a ones
# vector reduces the partitions.  An earlier tile at the same bank whose matmul group was
# only partly read out leaves an open group; the compiler infers accumulate per tensor, so
# the new tile's first matmul must overwrite.  fastisa kept the state per PSUM byte across
# declarations and accumulated onto the stale partial sums: the last attention_tkg row
# group's softmax denominators came out 1-3 % too large.
_R, _C = 6, 12


@nki.jit
def _bank_reuse(first, x):
    out = nl.ndarray((_R, _C), nl.float32, buffer=nl.shared_hbm)
    ones = nl.ndarray((128, 1), nl.float32, buffer=nl.sbuf)
    nisa.memset(ones, value=1.0)
    a = nl.ndarray((128, _C * _R), nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=a, src=first)
    # phase 1: a [R, C] partial-sum tile at bank 3, only its first column read out
    old = nl.ndarray((_R, _C), nl.float32, buffer=nl.psum, address=(0, 3 * 2048))
    for c in nl.static_range(_C):
        nisa.nc_matmul(old[:, c], stationary=a[:, c * _R:(c + 1) * _R], moving=ones)
    keep = nl.ndarray((_R, 1), nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(keep, old[:, 0])
    # phase 2: a new tile at the same bytes, one overwriting matmul per column
    b = nl.ndarray((128, _C * _R), nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=b, src=x)
    new = nl.ndarray((_R, _C), nl.float32, buffer=nl.psum, address=(0, 3 * 2048))
    for c in nl.static_range(_C):
        nisa.nc_matmul(new[:, c], stationary=b[:, c * _R:(c + 1) * _R], moving=ones)
    res = nl.ndarray((_R, _C), nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(res, new)
    nisa.dma_copy(dst=out, src=res)
    return out


def test_new_psum_tile_at_a_reused_address_starts_a_new_group(rng):
    first = rng.standard_normal((128, _C * _R)).astype(np.float32)
    x = rng.standard_normal((128, _C * _R)).astype(np.float32)
    got = nki.simulate(_bank_reuse)(first, x)
    ones = np.ones((128, 1), np.float32)
    want = np.concatenate([ref.nki_matmul(x[:, c * _R:(c + 1) * _R], ones,
                                          np.zeros((_R, 1), np.float32)) for c in range(_C)],
                          axis=1)
    assert (_bits(got) == _bits(want)).all()


# A kernel argument is contiguous in HBM whatever the caller's strides (nki-library passes
# torch-permuted arrays, e.g. attention_bwd's lse): .ap() patterns address the row-major
# storage of the logical shape, and in-place writes reach the caller's array.
@nki.jit
def _rows_by_ap(x, io):
    R, C = x.shape
    out = nl.ndarray((C, R), x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((C, R), x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x.ap([[1, C], [C, R]], offset=0))      # a transposing pattern
    nisa.dma_copy(dst=out, src=t)
    nisa.dma_copy(dst=io[0:1, :], src=t[0:1, 0:io.shape[1]])         # in place into io
    return out


def test_non_contiguous_arguments_are_row_major_in_hbm(rng):
    base = rng.standard_normal((16, 24)).astype(np.float32)
    x = base.T                                   # shape (24, 16), Fortran-ordered
    assert not x.flags.c_contiguous
    io = np.zeros((8, 4), np.float32).T          # (4, 8), written in place
    got = nki.simulate(_rows_by_ap)(x, io)
    assert (_bits(got) == _bits(np.ascontiguousarray(x.T))).all()
    assert (io[0] == x[:8, 0]).all() and (io[1:] == 0).all()


def test_dtypes_are_atoms_to_dataclasses_asdict_copy_and_pickle():
    """nki-library builds test parameters with dataclasses.asdict(cfg); the official
    package's dtypes are numpy / ml_dtypes types, so a dtype field stays a dtype."""
    import copy
    import dataclasses
    import pickle

    @dataclasses.dataclass
    class Params:
        dtype: object = nl.bfloat16
        acc: object = nl.float32

    d = dataclasses.asdict(Params())
    assert d["dtype"] is nl.bfloat16 and d["acc"] is nl.float32
    assert not np.issubdtype(d["dtype"], np.integer) and np.issubdtype(d["acc"], np.floating)
    assert copy.deepcopy(nl.int8) is nl.int8 and pickle.loads(pickle.dumps(nl.tfloat32)) is nl.tfloat32
    with pytest.raises(dataclasses.FrozenInstanceError):
        nl.float32.name = "x"


# nki-library's rope pattern: the head dim split into even/odd halves, so five
# [32, ...] products live next to the [64, ...] input and output.  Per partition they need
# 2 x 64000 + 5 x 64000 bytes (more than trn2's 229376), but a 32-partition tile takes one
# quadrant: the bytes of all partitions together fit, so the hardware can hold them.
_F = 32000                      # bf16 elements per partition: 64000 bytes


@nki.jit
def _halves(x):
    out = nl.ndarray((64, _F), nl.bfloat16, buffer=nl.shared_hbm)
    full = nl.ndarray((64, _F), nl.bfloat16, buffer=nl.sbuf)
    nisa.dma_copy(dst=full, src=x)
    res = nl.ndarray((64, _F), nl.bfloat16, buffer=nl.sbuf)
    halves = [nl.ndarray((32, _F), nl.bfloat16, buffer=nl.sbuf) for _ in range(5)]
    for h in halves:
        nisa.tensor_copy(h, full[32:64, :])
    for h in halves:                                  # all five are used together with full
        nisa.tensor_tensor(res[0:32, :], full[0:32, :], h, op=nl.add)
    nisa.tensor_copy(res[32:64, :], halves[0])
    nisa.dma_copy(dst=out, src=res)
    return out


@nki.jit
def _too_many_full(x):
    out = nl.ndarray((128, 64), nl.float32, buffer=nl.shared_hbm)
    tiles = [nl.ndarray((128, 20000), nl.float32, buffer=nl.sbuf) for _ in range(3)]
    for t in tiles:                                     # 3 x 80000 bytes on every partition
        nisa.memset(t, 1.0)
    for t in tiles:
        nisa.tensor_tensor(tiles[0], tiles[0], t, op=nl.add)
    nisa.dma_copy(dst=out, src=tiles[0][:, 0:64])
    return out


def test_capacity_counts_partition_quadrants(rng):
    x = ref.nki_round(rng.standard_normal((64, _F)), "bfloat16").astype(ml_dtypes.bfloat16)
    with nl.use_target("trn2"):
        got = nki.simulate(_halves)(x)
    lo, hi = x[:32].astype(np.float32), x[32:].astype(np.float32)
    want_lo = ref.nki_round((lo + hi).astype(np.float32), "bfloat16")
    assert (_bits(got[:32]) == _bits(want_lo.astype(ml_dtypes.bfloat16))).all()
    assert (_bits(got[32:]) == _bits(x[32:])).all()
    with nl.use_target("trn2"), pytest.raises(AccessError, match="sbuf capacity exceeded"):
        nki.simulate(_too_many_full)(np.zeros((128, 64), np.float32))
    with nl.use_target("trn2"):          # eager: four 32-partition tiles of 200 KiB fit
        ts = [nl.ndarray((32, 50 * 1024), nl.float32) for _ in range(4)]
        with pytest.raises(AccessError, match=r"on 32 partitions \(51200 averaged"):
            nl.ndarray((32, 50 * 1024), nl.float32)
        del ts


# qkv_cte's RMS-norm pattern: only the row sums of squares are wanted, so activation_reduce
# writes its elementwise result through a zero-step access pattern onto one [P, 1] column
# (``act.ap([[1, P], [0, H]])``).  Each column element is written H times; fastisa keeps the
# last write in access order (with an UndefinedBehaviorWarning: the docs give no order)
# instead of rejecting the destination.
@nki.jit
def _sum_of_squares(x):
    P, H = x.shape
    out = nl.ndarray((P, 2), nl.float32, buffer=nl.shared_hbm)
    xs = nl.ndarray((P, H), nl.bfloat16, buffer=nl.sbuf)
    nisa.dma_copy(dst=xs, src=x)
    act = nl.ndarray((P, 1), nl.float32, buffer=nl.sbuf)
    ssq = nl.ndarray((P, 1), nl.float32, buffer=nl.sbuf)
    nisa.activation_reduce(dst=act.ap(pattern=[[1, P], [0, H]]), op=nl.square, data=xs,
                           reduce_op=nl.add, reduce_res=ssq)
    both = nl.ndarray((P, 2), nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(both[:, 0:1], ssq)
    nisa.tensor_copy(both[:, 1:2], act)
    nisa.dma_copy(dst=out, src=both)
    return out


def test_activation_reduce_into_a_zero_step_dst(rng):
    from fastisa.errors import OverlapError, UndefinedBehaviorWarning
    x = ref.nki_round(rng.standard_normal((128, 96)), "bfloat16").astype(ml_dtypes.bfloat16)
    with pytest.warns(UndefinedBehaviorWarning, match="last write in access order"):
        got = nki.simulate(_sum_of_squares)(x)
    acc = np.zeros(128, np.float32)
    y = ref.nki_activation("square", x, "bfloat16", "float32", acc=acc)
    assert (_bits(got[:, 0]) == _bits(acc)).all()
    assert (_bits(got[:, 1]) == _bits(y[:, -1])).all()          # the last element's square
    t = nl.ndarray((128, 4), nl.float32)
    with pytest.raises(OverlapError):                 # other self-overlaps stay an error
        nisa.activation(dst=t.ap([[4, 128], [1, 3], [1, 2]]), op=nl.copy,
                        data=nl.ndarray((128, 3, 2), nl.float32))


# nki-library's MoE block loads: expert weights picked by a dynamic scalar_offset read from
# SBUF (a padding block carries an out-of-range expert index), token rows gathered by a
# vector_offset holding -1 for padding tokens, both with oob_mode.skip (dst keeps its
# contents there).  fastisa rejected skip with a scalar offset, and inside nki.simulate
# its cost record re-read the whole gather view (AccessError for the skipped -1 rows).
_E, _H = 4, 64


@nki.jit
def _moe_loads(w, x, experts, tokens):
    out = nl.ndarray((len(experts) + 1, 8, _H), nl.float32, buffer=nl.shared_hbm)
    acc = nl.ndarray((8, len(experts) + 1, _H), nl.float32, buffer=nl.sbuf)
    nisa.memset(acc, value=-5.0)
    e_sb = nl.ndarray((1, len(experts)), nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=e_sb, src=experts.reshape((1, len(experts))))
    for b in nl.static_range(len(experts)):
        nisa.dma_copy(dst=acc[:, b, :],
                      src=w.ap([[_H, 8], [1, _H]], offset=0, scalar_offset=e_sb[0:1, b:b + 1],
                               indirect_dim=0),
                      oob_mode=nisa.oob_mode.skip)
    t_sb = nl.ndarray((8, 1), nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t_sb, src=tokens)
    nisa.dma_copy(dst=acc[:, len(experts), :],
                  src=x.ap([[_H, 8], [1, _H]], offset=0, vector_offset=t_sb, indirect_dim=0),
                  oob_mode=nisa.oob_mode.skip)
    for b in nl.static_range(len(experts) + 1):
        nisa.dma_copy(dst=out[b], src=acc[:, b, :])
    return out


def test_oob_skip_with_scalar_and_vector_offsets(rng):
    w = rng.standard_normal((_E, 8 * _H)).astype(np.float32)   # expert e: rows of 8 x H
    x = rng.standard_normal((16, _H)).astype(np.float32)
    experts = np.array([2, -1, _E, 0], np.int32)
    tokens = np.array([3, -1, 15, 0, 16, 7, -1, 1], np.int32).reshape(8, 1)
    got = nki.simulate(_moe_loads)(w, x, experts, tokens)
    for b, e in enumerate(experts):
        want = w[e].reshape(8, _H) if 0 <= e < _E else np.full((8, _H), -5.0, np.float32)
        assert (got[b] == want).all()
    for i, t in enumerate(tokens[:, 0]):
        assert (got[-1, i] == (x[t] if 0 <= t < 16 else -5.0)).all()
