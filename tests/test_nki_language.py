"""nki.language as kernels use it: tile-level functions on fastisa's instructions (bit-exact
against tests/reference.py), ranges, NKIObject, dtypes as numpy dtypes, legacy index
arrays and tile arithmetic, the shim's module names and the harness entry points.  Kernels
here are our own, written in the patterns of the public collections."""

import sys

import ml_dtypes
import numpy as np
import pytest

import reference as ref
from fastisa import nki, shim
from fastisa.errors import AccessError, ConstraintError
from fastisa.nki import isa as nisa
from fastisa.nki import language as nl


def _bits(a):
    a = np.asarray(a)
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32}[a.dtype.itemsize])


def test_tile_level_add_exp_sum_bit_exact(rng):
    a = rng.standard_normal((128, 64)).astype(np.float32)
    b = rng.standard_normal((128, 64)).astype(np.float32)
    col = rng.standard_normal((128, 1)).astype(np.float32)

    @nki.jit
    def kernel(a, b, col):
        x, y, c = nl.load(a), nl.load(b), nl.load(col)
        s = nl.add(x, y)                       # tensor_tensor
        t = nl.multiply(x, 3.0)                # tensor_scalar
        u = nl.subtract(x, c)                  # [P, 1] column operand
        e = nl.exp(x)                          # activation
        r = nl.sum(x, axis=1)                  # tensor_reduce
        outs = []
        for v in (s, t, u, e, r):
            o = nl.ndarray(v.shape, nl.float32, buffer=nl.shared_hbm)
            nl.store(o, v)
            outs.append(o)
        return tuple(outs)

    s, t, u, e, r = nki.simulate(kernel)(a, b, col)
    assert (_bits(s) == _bits(ref.nki_alu("add", a, b))).all()
    assert (_bits(t) == _bits(ref.nki_alu("multiply", a, np.float32(3.0)))).all()
    assert (_bits(u) == _bits(ref.nki_alu("subtract", a, col))).all()
    want_e = ref.nki_activation("exp", a, "float32", "float32")
    assert (_bits(e) == _bits(want_e)).all()
    want_r = ref.nki_tensor_reduce(a, "float32", "float32", "add").reshape(128, 1)
    assert (_bits(r) == _bits(want_r)).all()


def test_matmul_transpose_and_dtype_rules(rng):
    x = ref.nki_round(rng.standard_normal((64, 32)), "bfloat16").astype(ml_dtypes.bfloat16)
    y = ref.nki_round(rng.standard_normal((64, 48)), "bfloat16").astype(ml_dtypes.bfloat16)

    @nki.jit
    def kernel(x, y):
        p = nl.matmul(nl.load(x), nl.load(y), transpose_x=True)     # x.T @ y in PSUM fp32
        assert p.dtype == np.float32 and p.buffer is nl.psum
        q = nl.transpose(nl.load(x))
        assert q.shape == (32, 64) and q.dtype == nl.bfloat16
        out = nl.ndarray(p.shape, nl.float32, buffer=nl.shared_hbm)
        nl.store(out, p)
        return out

    got = nki.simulate(kernel)(x, y)
    want = ref.nki_matmul(x.astype(np.float32), y.astype(np.float32),
                          np.zeros((32, 48), np.float32))
    assert (_bits(got) == _bits(want)).all()


def test_where_broadcast_full_and_shared_constants():
    @nki.jit
    def kernel():
        i = nl.shared_identity_matrix(4, dtype=nl.float32)
        k = nl.shared_constant(np.arange(8, dtype=np.float32).reshape(2, 4), nl.float32)
        f = nl.full((2, 4), 2.5, nl.float32)
        w = nl.where(nl.load(k), nl.load(k), f)          # 0 where k == 0 -> 2.5
        bc = nl.broadcast_to(nl.load(k[0:1, :]), (3, 4))
        outs = []
        for v in (i, w, bc):
            o = nl.ndarray(v.shape, nl.float32, buffer=nl.shared_hbm)
            nl.store(o, nl.load(v) if not v.buffer.on_chip else v)
            outs.append(o)
        return tuple(outs)

    i, w, bc = kernel()
    assert (i == np.eye(4)).all()
    assert w.tolist() == [[2.5, 1, 2, 3], [4, 5, 6, 7]]
    assert bc.tolist() == [[0, 1, 2, 3]] * 3


def test_ranges_and_nkiobject():
    assert list(nl.affine_range(3)) == [0, 1, 2]
    assert list(nl.sequential_range(1, 7, 2)) == [1, 3, 5]
    assert list(nl.static_range(2)) == [0, 1]
    with pytest.raises(ConstraintError, match="bounds must be integers"):
        nl.affine_range(2.5)

    class Cfg(nl.NKIObject):
        pass

    c = Cfg(tile=128, dtype=nl.bfloat16)
    assert c.tile == 128 and c.dtype == ml_dtypes.bfloat16


def test_dtypes_are_numpy_dtypes():
    assert np.zeros(3, dtype=nl.float32).dtype == np.float32
    assert np.ones(2).astype(nl.bfloat16).dtype == ml_dtypes.bfloat16
    assert nl.float32 == np.float32 and np.float32 == nl.float32
    assert np.dtype(nl.float8_e5m2) == ml_dtypes.float8_e5m2
    assert str(nl.float32) == "float32" and str(nl.bfloat16) == "bfloat16"
    t = nl.ndarray((2, 2), nl.int32)
    assert t.dtype == np.int32 and t.dtype != np.float32
    # tfloat32 and the packed x4 types keep their own identity (no numpy dtype of their own)
    assert nl.tfloat32 != np.float32 and nl.float8_e4m3fn_x4 != np.uint32
    assert str(nl.float4_e2m1fn_x4) == "float4_e2m1fn_x4"


def test_legacy_index_arrays_views_masks_and_arithmetic():
    t = nl.ndarray((128, 64), nl.float32)
    t.data[...] = np.arange(128 * 64, dtype=np.float32).reshape(128, 64)
    i_p, i_f = nl.arange(128)[:, None], nl.arange(64)[None, :]
    v = t[i_p, i_f]
    assert v.shape == (128, 64) and np.shares_memory(v.data, t.data)       # a view
    g = nl.mgrid[0:64, 0:32]
    w = t[g.p + 64, g.x * 2]
    assert w.shape == (64, 32) and w.data[0, 1] == t.data[64, 2]
    tr = t[i_f.T[:8, :] * 0 + nl.arange(8)[None, :], i_p[:8, :] * 0 + nl.arange(8)[:, None]]
    # affine, but the result's partitions come from the source's free axis: no access
    # pattern moves elements across partitions, so this stays a read-only gather copy
    assert not tr.data.flags.writeable and np.array_equal(tr.data, t.data[:8, :8].T)
    # a transposition of free axes is a strided view: writes go through
    i_a, i_b = nl.arange(4)[None, :, None], nl.arange(16)[None, None, :]
    ft = t[nl.arange(8)[:, None, None], i_b * 4 + i_a]
    assert np.shares_memory(ft.data, t.data) and ft.data.flags.writeable
    assert np.array_equal(ft.data, t.data[:8].reshape(8, 16, 4).transpose(0, 2, 1))
    sq = t[i_p[:8, :] * i_p[:8, :], i_f[:, :8]]                              # not affine
    assert not sq.data.flags.writeable and sq.data[3, 1] == t.data[9, 1]   # a gather copy
    with pytest.raises(AccessError):
        t[i_p + 1, i_f].data            # outside t: an error when accessed without a mask
    # t[...] = tile stores; tile arithmetic; psum += ...
    a = nl.full((4, 8), 1.5, nl.float32)
    b = a + a * 2.0
    assert (b.data == 4.5).all()
    out = nl.ndarray((4, 8), nl.float32)
    out[0:4, 0:8] = b
    assert (out.data == 4.5).all()
    # masked store leaves masked-off elements as they were
    dst = nl.zeros((4, 8), nl.float32)
    nl.store(dst, b, mask=(nl.arange(4)[:, None] < 2))
    assert (dst.data[:2] == 4.5).all() and (dst.data[2:] == 0).all()


def test_shim_module_names_and_legacy_entry_points():
    with shim.installed():
        import neuronxcc.nki as lnki
        import neuronxcc.nki.isa as lisa
        import neuronxcc.nki.language as lnl
        from neuronxcc.nki.typing import tensor
        import nki
        from nki.isa.constants import dge_mode, oob_mode  # noqa: F401
        import nki.typing as nt  # noqa: F401
        import nki.dtype  # noqa: F401
        from nki_cpu_simulator import nki as sim_nki

        assert sim_nki is nki and nki.cpu_simulate is nki.simulate

        @lnki.jit(mode="simulation")
        def legacy(a_tensor):
            out = lnl.ndarray(a_tensor.shape, dtype=a_tensor.dtype, buffer=lnl.shared_hbm)
            a: tensor[16, 32] = lnl.load(a_tensor)
            c = lisa.tensor_tensor(a, a, op=np.add)            # tile-returning form
            m = lisa.memset(shape=(16, 32), value=1.0, dtype=lnl.float32)
            lnl.store(out, lisa.tensor_tensor(c, m, op=lnl.subtract))
            return out

        x = np.arange(16 * 32, dtype=np.float32).reshape(16, 32)
        got = legacy(x)
        assert (got == x + x - 1).all()
        assert (lnki.simulate_kernel(legacy, x) == got).all()

        @lnki.baremetal
        def bm(a_tensor):
            out = lnl.ndarray(a_tensor.shape, dtype=a_tensor.dtype, buffer=lnl.shared_hbm)
            lnl.store(out, lnl.exp(lnl.load(a_tensor)))
            return out

        assert bm(np.zeros((2, 2), np.float32)).tolist() == [[1, 1], [1, 1]]
    assert "neuronxcc" not in sys.modules


def test_simulate_lnc_grid_with_kwargs():
    @nki.jit
    def kernel(a):
        out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
        pid = nl.program_id(0)
        rows = a.shape[0] // nl.num_programs(0)
        t = nl.load(a[pid * rows:(pid + 1) * rows, :])
        nl.store(out[pid * rows:(pid + 1) * rows, :], nl.add(t, float(pid)))
        return out

    a = np.zeros((8, 4), np.float32)
    got = nki.simulate(kernel)[2](a=a)
    assert got[:4].tolist() == [[0] * 4] * 4 and got[4:].tolist() == [[1] * 4] * 4


# ---- access patterns (.ap) and clean errors for bad views -----------------------------------
def test_ap_lazy_bounds_dtype_and_offsets():
    t = nl.ndarray((4, 8), nl.float32)
    t.data[...] = np.arange(32, dtype=np.float32).reshape(4, 8)
    v = t.ap([[8, 4], [2, 4]], offset=1)
    assert v.shape == (4, 4) and v.data[1].tolist() == [9, 11, 13, 15]
    v.data[0, 0] = -1                                      # a view: writes go through
    assert t.data[0, 1] == -1
    far = t.ap([[8, 5], [1, 8]])                            # built fine ...
    assert far.shape == (5, 8)
    with pytest.raises(AccessError, match="outside tensor"):
        far.data                                            # ... checked when accessed
    b = t.ap([[32, 4], [1, 32]], dtype=nl.uint8)            # the bytes
    assert b.shape == (4, 32) and b.data.dtype == np.uint8
    assert (b.data.view(np.float32) == t.data).all()
    so = nl.ndarray((1, 1), nl.int32)
    so.data[...] = 2
    w = t.ap([[8, 2], [1, 8]], scalar_offset=so)             # runtime row index (dim 0)
    assert w.data[0].tolist() == t.data[2].tolist()
    vo = nl.ndarray((3, 1), nl.int32)
    vo.data[:, 0] = [3, 0, 1]
    g = t.ap([[8, 3], [1, 8]], vector_offset=vo, indirect_dim=0)   # row indices (x 8 elements)
    assert g.data.tolist() == [t.data[3].tolist(), t.data[0].tolist(), t.data[1].tolist()]
    assert not g.data.flags.writeable
    f8 = nl.ndarray((4, 8), nl.float8_e5m2)                  # ml_dtypes storage
    assert f8.ap([[8, 4], [1, 8]]).data.dtype == ml_dtypes.float8_e5m2
    assert t.ap([[2**70, 1], [1, 8]]).shape == (1, 8)        # huge step with num 1: unused
    with pytest.raises(AccessError):
        t.ap([[2**62, 2], [1, 8]]).data
    with pytest.raises(ConstraintError, match="pattern step must be an integer"):
        t.ap([[8.5, 4], [1, 8]])


def test_bad_values_are_constraint_errors_not_truncated():
    with pytest.raises(ConstraintError, match="ds: start must be an integer, got 'a'"):
        nl.ds("a", 4)
    with pytest.raises(ConstraintError, match="ds: size must be an integer, got 1.5"):
        nl.ds(0, 1.5)
    with pytest.raises(ConstraintError, match=r"shape must be a tuple of ints, got \(128, 64.5\)"):
        nl.ndarray((128, 64.5), nl.float32)
    t = nl.ndarray((4, 8), nl.float32)
    with pytest.raises(ConstraintError, match="tensor_reduce: axis must be an int"):
        nisa.tensor_reduce(nl.ndarray((4, 1), nl.float32), nl.add, t, axis="x")


def test_par_dim_block_tensor_capacity():
    # 4 blocks of [128, 512] fp32: 8 KiB per partition, not 4 * 128 * 512 * 4 bytes
    b = nl.ndarray((4, nl.par_dim(128), 512), nl.float32)
    assert b.shape == (4, 128, 512)
    with pytest.raises(ConstraintError, match="partition dimension must be <= 128"):
        nl.ndarray((4, nl.par_dim(129), 8), nl.float32)


def test_address_placement_aliases_and_range_checks():
    with nl.use_target("trn2"):
        a = nl.ndarray((128, 64), nl.float32, buffer=nl.sbuf, address=(0, 1024))
        b = nl.ndarray((128, 128), nl.bfloat16, buffer=nl.sbuf, address=(0, 1024))
        nisa.memset(a, 1.0)
        assert b.data[0, :2].view(np.uint16).tolist() == [0x0000, 0x3F80]   # same bytes
        c = nl.ndarray((64, 16), nl.float32, buffer=nl.sbuf, address=(64, 1024 + 128))
        assert np.shares_memory(c.data, a.data) and (c.data == 1.0).all()
        v = a.ap([[64, 128], [2, 32]], offset=1)                 # ap on a placed tile
        assert v.shape == (128, 32) and np.shares_memory(v.data, a.data)
        # placed tensors are checked by their address range, not counted as allocations
        big = [nl.ndarray((128, 50000), nl.float32, address=(0, 0)) for _ in range(3)]
        assert len(big) == 3
        with pytest.raises(AccessError, match="outside psum's 16384 bytes"):
            nl.ndarray((128, 600), nl.float32, buffer=nl.psum, address=(0, 14336))
        with pytest.raises(AccessError, match="partitions"):
            nl.ndarray((64, 8), nl.float32, address=(100, 0))
        with pytest.raises(ConstraintError, match="multiple of the float32 item size"):
            nl.ndarray((4, 8), nl.float32, address=(0, 2))
        # nc_matmul's accumulation state lives in the bytes (views and aliases share it),
        # but declaring a tensor starts it afresh: the compiler infers accumulate=None per
        # tensor, so p2's first matmul overwrites; a later matmul into p1 then accumulates
        p1 = nl.ndarray((8, 16), nl.float32, buffer=nl.psum, address=(0, 2048))
        s = nl.ndarray((4, 8), nl.float32)
        s.data[...] = 1.0
        m = nl.ndarray((4, 16), nl.float32)
        m.data[...] = 1.0
        nisa.nc_matmul(p1, s, m)
        p2 = nl.ndarray((8, 16), nl.float32, buffer=nl.psum, address=(0, 2048))
        nisa.nc_matmul(p2, s, m)                                 # a new tensor: overwrites
        assert (p1.data == 4.0).all()
        nisa.nc_matmul(p1, s, m)                                 # p2's open group: adds
        assert (p2.data == 8.0).all()
