"""Beta 1 (``neuronxcc.nki``) forms the SDK's legacy tests use, with kernels of our own
(issue 11): tile-returning ``nisa.*`` shapes (bn_stats / bn_aggr, local_gather,
sequence_bounds, tensor_partition_reduce, dma_transpose), ``nl.gather_flattened``, a bool
predicate, masks over max8 / nc_match_replace8 data, ``dma_copy(dst_rmw_op=np.add)``,
``perf_mode="double_row_gen3"``, and kernels named ``test_*`` that pytest must not collect.
Bit-exact against tests/reference.py."""

import ml_dtypes
import numpy as np
import pytest

import reference as ref
from fastisa import nki
from fastisa.errors import ConstraintError
from fastisa.nki import isa as nisa
from fastisa.nki import language as nl
from fastisa.nki import legacy_isa as lisa

RNG = np.random.default_rng(111)


def _tile(a, fmt=None):
    t = nl.ndarray(a.shape, fmt or a.dtype)
    t.data[...] = a
    return t


def test_gather_flattened_is_a_per_partition_gather():
    @nki.jit
    def k(data, idx):
        out = nl.ndarray(idx.shape, data.dtype, buffer=nl.shared_hbm)
        nl.store(out, nl.gather_flattened(nl.load(data), nl.load(idx)))
        return out
    data = RNG.standard_normal((16, 4, 8)).astype(np.float32)
    idx = RNG.integers(0, 32, (16, 12)).astype(np.uint32)
    got = nki.simulate(k)(data, idx)
    assert (got.view(np.uint32) == ref.nki_isa_n_gather(data, idx).view(np.uint32)).all()
    g = nl.gather_flattened(_tile(data), _tile(idx), dtype=nl.bfloat16)
    assert g.dtype is nl.bfloat16 and g.shape == (16, 12)


def test_bool_predicate_is_a_uint8_predicate():
    src = _tile(RNG.standard_normal((8, 32)).astype(np.float32))
    pred = RNG.random((8, 32)) < 0.5
    dst = _tile(np.zeros((8, 32), np.float32))
    nisa.tensor_copy_predicated(dst=dst, src=src, predicate=_tile(pred.astype(np.uint8), "bool_"))
    want = ref.nki_isa_copy_predicated(np.zeros((8, 32), np.float32), src.data, pred)
    assert (dst.data.view(np.uint32) == want.view(np.uint32)).all()


def test_tile_returning_shapes_of_beta1_instructions():
    x = RNG.standard_normal((32, 256)).astype(np.float32)
    st = lisa.bn_stats(_tile(x))
    assert st.shape == (32, 6)
    assert (st.data.view(np.uint32) == ref.nki_isa_bn_stats(x).view(np.uint32)).all()
    mv = lisa.bn_aggr(st)
    assert mv.shape == (32, 2)
    assert (mv.data.view(np.uint32) == ref.nki_isa_bn_aggr(st.data).view(np.uint32)).all()
    pr = lisa.tensor_partition_reduce(np.add, _tile(x.reshape(32, 16, 16)))
    assert pr.shape == (1, 16, 16)
    want = ref.nki_isa_partition_reduce(x, "add").reshape(1, 16, 16)
    assert (pr.data.view(np.uint32) == want.view(np.uint32)).all()
    ids = np.array([[0, 4, 4, 1, 1, 1, 0, 2]], np.int32)
    sb = lisa.sequence_bounds(segment_ids=_tile(ids))
    assert sb.shape == (1, 2, 8) and sb.dtype is nl.int32
    assert (sb.data == ref.nki_isa_sequence_bounds(ids)).all()
    src = RNG.standard_normal((16, 64)).astype(np.float32)
    index = (RNG.integers(0, 16, (16, 2)) * 4).astype(np.uint16)
    lg = lisa.local_gather(_tile(src), _tile(index), 4)
    assert lg.shape == (16, 32 * 4)
    want = ref.nki_isa_local_gather(src, index, 4)
    assert (lg.data.view(np.uint32) == want.reshape(16, -1).view(np.uint32)).all()


@pytest.mark.parametrize("fmt", ["float32", "bfloat16", "int32"])
def test_beta1_dma_transpose_returns_the_transposed_tile(fmt):
    a = (RNG.standard_normal((48, 96)) * 50).astype(ml_dtypes.bfloat16 if fmt == "bfloat16"
                                                     else fmt)
    t = lisa.dma_transpose(_tile(a, fmt))
    assert t.shape == (96, 48) and t.dtype.name == fmt and t.buffer is nl.sbuf
    assert np.array_equal(t.data.view(np.uint8), np.ascontiguousarray(a.T).view(np.uint8))
    with pytest.raises(ConstraintError, match="2 bytes"):      # SDK 2.33: hwdge's rule
        nisa.dma_transpose(nl.ndarray((96, 48), nl.float32), _tile(a.astype(np.float32)),
                           dge_mode=nisa.dge_mode.hwdge)


def test_mask_over_max8_and_match_replace8_data():
    x = RNG.random((16, 64)).astype(np.float32)
    x[:, 40:] += 2.0                     # larger values outside the mask: never selected
    i_f = nl.arange(64)[None, :]
    mask = i_f < 40
    mx = lisa.max8(src=_tile(x), mask=mask)
    want, _ = ref.nki_max8(x[:, :40])
    assert (mx.data.view(np.uint32) == want.view(np.uint32)).all()
    idx = lisa.memset(shape=(16, 8), value=0, dtype=nl.uint32)
    out = lisa.nc_match_replace8(dst_idx=idx, data=_tile(x), vals=mx, imm=-1.0, mask=mask)
    w_out, w_idx = ref.nki_match_replace8(x[:, :40], want, -1.0)
    assert (out.data[:, :40].view(np.uint32) == w_out.view(np.uint32)).all()
    assert np.isnan(out.data[:, 40:]).all()              # outside the mask: not written
    assert (idx.data == w_idx).all()


def test_dma_copy_dst_rmw_add():
    @nki.jit
    def k(a):
        out = nl.ndarray((16, 8), a.dtype, buffer=nl.shared_hbm)
        nl.store(out, lisa.memset(shape=(16, 8), value=0.5, dtype=a.dtype))
        i_p = 2 * nl.arange(8)[:, None]
        i_f = nl.arange(8)[None, :]
        lisa.dma_copy(dst=out[i_p, i_f], src=nl.load(a), dst_rmw_op=np.add)
        return out
    a = RNG.standard_normal((8, 8)).astype(np.float32)
    got = nki.simulate(k)(a)
    want = np.full((16, 8), 0.5, np.float32)
    want[0::2] = ref.nki_alu("add", want[0::2], a)
    assert (got.view(np.uint32) == want.view(np.uint32)).all()
    t = nl.ndarray((8, 8), nl.float32)
    with pytest.raises(ConstraintError, match="np.add"):
        lisa.dma_copy(dst=t, src=_tile(a), dst_rmw_op=np.multiply)
    with pytest.raises(ConstraintError, match="oob_mode.error"):
        lisa.dma_copy(dst=t, src=_tile(a), dst_rmw_op=np.add, oob_mode=nisa.oob_mode.skip)


def test_double_row_gen3_is_double_row():
    a = RNG.integers(-3, 4, (32, 2, 4)).astype(ml_dtypes.float8_e5m2)
    b = RNG.integers(-3, 4, (32, 2, 16)).astype(ml_dtypes.float8_e5m2)
    with nl.use_target("trn2"):
        c = lisa.nc_matmul(_tile(a), _tile(b), perf_mode="double_row_gen3")
        d = lisa.nc_matmul(_tile(a), _tile(b), perf_mode=nisa.matmul_perf_mode.double_row)
    assert c.shape == (4, 16)
    assert (c.data.view(np.uint32) == d.data.view(np.uint32)).all()
    want = np.einsum("kli,klj->ij", a.astype(np.float32), b.astype(np.float32))
    assert (c.data == want).all()          # small integers: exact in any order


@nki.jit
def test_kernel_named_like_a_test(a):      # pytest must not collect this kernel
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    nl.store(out, nl.load(a))
    return out


def test_kernels_are_not_pytest_tests():
    assert test_kernel_named_like_a_test.__test__ is False
    a = np.arange(8, dtype=np.float32).reshape(2, 4)
    assert (nki.simulate(test_kernel_named_like_a_test)(a) == a).all()


def test_masked_dst_form_writes_only_where_the_mask_holds():
    src = _tile(RNG.standard_normal((16, 8)).astype(np.float32))
    dst = _tile(np.zeros((16, 8), np.float32))
    i_p = nl.arange(16)[:, None]
    lisa.dma_copy(dst=dst, src=src, mask=i_p < 5)
    assert (dst.data[:5] == src.data[:5]).all() and (dst.data[5:] == 0).all()
    ps = nl.ndarray((16, 8), nl.float32, buffer=nl.psum)
    with pytest.raises(NotImplementedError, match="PSUM"):
        lisa.tensor_copy(dst=ps, src=src, mask=i_p < 5)


def test_masked_dst_form_keeps_what_the_instruction_keeps():
    """tensor_copy_predicated(dst=, mask=): dst elements the predicate leaves alone keep
    their values inside the mask too."""
    src = _tile(np.full((8, 4), 7.0, np.float32))
    dst = _tile(np.arange(32, dtype=np.float32).reshape(8, 4))
    pred = _tile((np.arange(32).reshape(8, 4) % 2).astype(np.uint8))
    i_p = nl.arange(8)[:, None]
    lisa.tensor_copy_predicated(dst=dst, src=src, predicate=pred, mask=i_p < 4)
    want = np.arange(32, dtype=np.float32).reshape(8, 4)
    want[:4][(np.arange(16).reshape(4, 4) % 2) == 1] = 7.0
    assert (dst.data == want).all()


# ---- nkifull: the Beta 1 simulator's exception for an out-of-bounds access ---------------

def _oob_gather(a):
    """Rows 0, 3, 6, ... of ``a`` gathered by an index tile (a Beta 1 tile-returning form):
    past a's 16 rows for half of the indices."""
    out = nl.ndarray((8, 4), a.dtype, buffer=nl.shared_hbm)
    idx = lisa.iota(3 * nl.arange(8)[:, None], dtype=np.int32)
    ix, iy = nl.mgrid[0:8, 0:4]
    t = lisa.memset(shape=(8, 4), value=-1, dtype=a.dtype)
    lisa.dma_copy(src=a[idx, iy], dst=t[ix, iy], oob_mode=nisa.oob_mode.error)
    nl.store(out, value=t)
    return out


def test_legacy_out_of_bounds_raises_the_builtin_index_error():
    from fastisa.errors import AccessError
    from fastisa.nki import legacy
    a = RNG.standard_normal((16, 4)).astype(np.float32)
    for run in (lambda: legacy.jit(mode="simulation")(_oob_gather)(a),
                lambda: legacy.simulate_kernel(legacy.jit(_oob_gather), a),
                lambda: legacy.baremetal(_oob_gather)(a)):
        with pytest.raises(IndexError) as info:
            run()
        assert type(info.value) is IndexError                  # not a subclass
        assert isinstance(info.value.__cause__, AccessError)   # fastisa's error kept
        assert str(info.value) == str(info.value.__cause__)
    with pytest.raises(AccessError):                           # the current API keeps it
        nki.simulate(nki.jit(_oob_gather))(a)
    ok = RNG.standard_normal((32, 4)).astype(np.float32)       # in bounds: rows 0, 3, .. 21
    got = legacy.jit(mode="simulation")(_oob_gather)(ok)
    assert (got.view(np.uint32) == ok[0:24:3].view(np.uint32)).all()
