"""nki-isa family: dma_transpose, dma_compute, nc_stream_shuffle, tensor_copy_predicated,
nc_n_gather, local_gather, nonzero_with_count, sequence_bounds against tests/reference.py."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import reference as ref
from fastisa import cost
from fastisa import dtypes as dt
from fastisa.errors import AccessError, ConstraintError, OverlapError
from fastisa.nki import isa as nisa
from fastisa.nki import language as nl
from test_nki_compute import ALL, T, assert_bits, empty, random_values

TWO_BYTE = ["bfloat16", "float16", "int16", "uint16", "float4_e2m1fn_x4"]
EVERY = ALL + ["float8_e5m2_x4", "float8_e4m3fn_x4", "float4_e2m1fn_x4"]


def raw(rng, fmt, shape):
    f = dt.lookup(fmt)
    if f.kind == "packed":
        w = f.np_dtype.itemsize * 8
        return rng.integers(0, 1 << w, shape, dtype=np.uint64).astype(f.np_dtype)
    return random_values(rng, fmt, shape)


# ---- dma_transpose --------------------------------------------------------------------
@pytest.mark.parametrize("fmt", TWO_BYTE)
@pytest.mark.parametrize("shape", [(16, 128), (128, 100), (4, 8, 64), (16, 3, 5, 7), (2, 1, 9, 40)])
def test_dma_transpose_every_2byte_dtype(fmt, shape, rng):
    x = T(raw(rng, fmt, shape), fmt, nl.hbm)
    want = ref.nki_isa_dma_transpose(x.data)
    d = empty(want.shape, fmt)
    nisa.dma_transpose(d, x)
    assert_bits(d.data, want)


@settings(max_examples=40)
@given(shape=st.lists(st.integers(1, 40), min_size=2, max_size=4), seed=st.integers(0, 2**31),
       step=st.integers(1, 3))
def test_dma_transpose_strided_views_hypothesis(shape, seed, step):
    rng = np.random.default_rng(seed)
    big = list(shape)
    big[-1] = shape[-1] * step
    base = T(rng.integers(0, 65536, big).astype(np.uint16), "bfloat16", nl.sbuf)
    src = base[(slice(None),) * (len(shape) - 1) + (slice(0, shape[-1] * step, step),)]
    want = ref.nki_isa_dma_transpose(src.data)
    dst_base = empty(tuple(want.shape[:-1]) + (want.shape[-1] + 3,), "bfloat16")
    dst = dst_base[(slice(None),) * (len(shape) - 1) + (slice(1, 1 + want.shape[-1]),)]
    before = dst_base.data.copy()
    nisa.dma_transpose(dst, src, axes=nisa.TRANSPOSE_AXES[len(shape)])
    assert_bits(dst.data, want)
    assert_bits(dst_base.data[..., 0], before[..., 0])
    assert_bits(dst_base.data[..., -2:], before[..., -2:])


@pytest.mark.parametrize("mode", [None, "unknown", "none"])
@pytest.mark.parametrize("fmt,shape", [("float32", (96, 128)), ("int8", (3, 5, 7)),
                                       ("uint32", (2, 3, 4, 100)), ("bfloat16", (8, 120))])
def test_dma_transpose_other_dtypes_without_hwdge(fmt, shape, mode, rng):
    """The 2-byte dtype and last-dim <= 128 rules are hwdge's "additional restrictions"
    (SDK 2.33 dma_transpose); dge_mode unknown / none move any dtype (nki-library's
    attention_cte transposes float32 q, its mlp_tkg passes dge_mode none)."""
    x = T(raw(rng, fmt, shape), fmt, nl.hbm)
    want = ref.nki_isa_dma_transpose(x.data)
    d = empty(want.shape, fmt)
    kw = {} if mode is None else {"dge_mode": getattr(nisa.dge_mode, mode)}
    nisa.dma_transpose(d, x, **kw)
    assert_bits(d.data, want)


def test_dma_transpose_errors():
    s = empty((16, 64), "bfloat16", nl.hbm)
    d = empty((64, 16), "bfloat16")
    with pytest.raises(ConstraintError, match="2 bytes"):
        nisa.dma_transpose(empty((64, 16), "float32"), empty((16, 64), "float32"),
                           dge_mode=nisa.dge_mode.hwdge)
    with pytest.raises(ConstraintError, match="same dtype"):
        nisa.dma_transpose(empty((64, 16), "float16"), s)
    with pytest.raises(ConstraintError, match="axes must be"):
        nisa.dma_transpose(d, s, axes=(0, 1))
    with pytest.raises(ConstraintError, match="shape"):
        nisa.dma_transpose(empty((16, 64), "bfloat16"), s)
    with pytest.raises(ConstraintError, match="<= 128"):
        nisa.dma_transpose(empty((129, 16), "bfloat16"), empty((16, 129), "bfloat16"),
                           dge_mode=nisa.dge_mode.hwdge)
    with pytest.raises(ConstraintError, match="rank 2, 3 or 4"):
        nisa.dma_transpose(empty((2, 2, 2, 2, 2), "bfloat16"), empty((2, 2, 2, 2, 2), "bfloat16"))
    with pytest.raises(ConstraintError, match="sbuf"):
        nisa.dma_transpose(empty((64, 16), "bfloat16", nl.hbm), s)
    with pytest.raises(ConstraintError, match="hbm or sbuf"):
        nisa.dma_transpose(d, empty((16, 64), "bfloat16", nl.psum))
    with pytest.raises(ConstraintError, match="== 16"):
        nisa.dma_transpose(empty((64, 8), "bfloat16"), empty((8, 64), "bfloat16"),
                           dge_mode=nisa.dge_mode.hwdge)
    with pytest.raises(ConstraintError, match=r"\{1, 2, 4, 8, 16\}"):
        nisa.dma_transpose(empty((8, 4, 3), "bfloat16"), empty((3, 4, 8), "bfloat16"),
                           dge_mode=nisa.dge_mode.hwdge)
    with pytest.raises(ConstraintError, match="multiple of 16"):
        nisa.dma_transpose(empty((8, 3, 4), "bfloat16"), empty((4, 3, 8), "bfloat16"),
                           dge_mode=nisa.dge_mode.hwdge)
    nisa.dma_transpose(empty((8, 4, 4), "bfloat16"), empty((4, 4, 8), "bfloat16"),
                       dge_mode=nisa.dge_mode.hwdge)
    with pytest.raises(ConstraintError, match="swdge"):
        nisa.dma_transpose(d, s, dge_mode=nisa.dge_mode.swdge)
    nisa.dma_transpose(d, s, dge_mode=nisa.dge_mode.none)     # accepted (direct transpose)
    with pytest.raises(ConstraintError, match="oob_mode skip"):
        nisa.dma_transpose(d, s, oob_mode=nisa.oob_mode.skip)
    with pytest.raises(ConstraintError, match="priority"):
        nisa.dma_transpose(d, s, priority=4)
    sq = empty((32, 32), "bfloat16")
    with pytest.raises(OverlapError):
        nisa.dma_transpose(sq, sq)


def test_dma_transpose_cost():
    with cost.profiling() as p:
        nisa.dma_transpose(empty((100, 16), "bfloat16"), empty((16, 100), "bfloat16"))
    assert p.totals() == {"DMA": 64}


# ---- dma_compute -------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", ALL)
def test_dma_compute_every_dtype(fmt, rng):
    srcs = [T(random_values(rng, fmt, (6, 10)), fmt, nl.hbm) for _ in range(3)]
    d = empty((6, 10), fmt)
    nisa.dma_compute(d, srcs, nl.add)
    w = ref.nki_round(ref.nki_isa_dma_compute([ref.nki_to_f32(s.data, fmt) for s in srcs]),
                      fmt).reshape(6, 10)
    assert_bits(d.data, w, nan_either=np.ones(w.shape, bool))


@settings(max_examples=25)
@given(n=st.integers(1, 16), P=st.integers(1, 64), F=st.integers(1, 300), seed=st.integers(0, 2**31))
def test_dma_compute_hypothesis(n, P, F, seed):
    rng = np.random.default_rng(seed)
    fmts = rng.choice(["float32", "bfloat16", "float16", "int8"], n)
    srcs = [T(rng.standard_normal((P, F)) * 4, str(f)) for f in fmts]
    d = empty((P * F,), "bfloat16", nl.hbm).reshape(F, P)
    nisa.dma_compute(d, srcs, nl.add, scales=[1.0] * n)
    w = ref.nki_round(ref.nki_isa_dma_compute([ref.nki_to_f32(s.data, s.dtype.name)
                                               for s in srcs]), "bfloat16").reshape(F, P)
    assert_bits(d.data, w)


def test_dma_compute_in_place_and_errors():
    a = T(np.arange(12, dtype=np.float32).reshape(3, 4), "float32")
    b = T(np.ones((3, 4), np.float32), "float32")
    nisa.dma_compute(a, [a, b], nl.add)
    assert np.array_equal(a.data, np.arange(12).reshape(3, 4) + 1)
    with pytest.raises(ConstraintError, match="nl.add"):
        nisa.dma_compute(a, [a, b], nl.multiply)
    with pytest.raises(ConstraintError, match="1.0"):
        nisa.dma_compute(a, [a, b], nl.add, scales=[1.0, 2.0])
    with pytest.raises(ConstraintError, match="one value per source"):
        nisa.dma_compute(a, [a, b], nl.add, scales=[1.0])
    with pytest.raises(ConstraintError, match="at most 16"):
        nisa.dma_compute(a, [b] * 17, nl.add)
    with pytest.raises(ConstraintError, match="elements"):
        nisa.dma_compute(a, [empty((3, 5), "float32")], nl.add)
    with pytest.raises(ConstraintError, match="psum"):
        nisa.dma_compute(a, [empty((3, 4), "float32", nl.psum)], nl.add)
    with pytest.raises(ConstraintError, match="non-empty"):
        nisa.dma_compute(a, [], nl.add)


# ---- nc_stream_shuffle ----------------------------------------------------------------------
@pytest.mark.parametrize("fmt", EVERY)
def test_stream_shuffle_every_dtype(fmt, rng):
    src = T(raw(rng, fmt, (128, 9)), fmt)
    dst = T(raw(rng, fmt, (128, 9)), fmt)
    mask = [int(v) for v in rng.permutation(32)]
    mask[3] = 255
    want = ref.nki_isa_stream_shuffle(dst.data, src.data, mask)
    nisa.nc_stream_shuffle(dst, src, mask)
    assert_bits(dst.data, want)


@settings(max_examples=40)
@given(active=st.sampled_from([32, 64, 96, 128]), seed=st.integers(0, 2**31),
       F=st.integers(1, 200), inplace=st.booleans(), psum=st.booleans())
def test_stream_shuffle_hypothesis(active, seed, F, inplace, psum):
    rng = np.random.default_rng(seed)
    starts = {32: [0, 32, 64, 96], 64: [0, 64], 96: [0], 128: [0]}[active]
    base = T(rng.standard_normal((128, F)).astype(np.float32), "float32",
             nl.psum if psum else nl.sbuf)
    s0 = int(rng.choice(starts))
    d0 = s0 if inplace else int(rng.choice(starts))
    dst_base = base if inplace else T(rng.standard_normal((128, F)).astype(np.float32), "float32")
    src = base[s0:s0 + active]
    dst = dst_base[d0:d0 + active]
    mask = [int(v) if rng.random() > 0.2 else 255 for v in rng.integers(0, 32, 32)]
    before = dst_base.data.copy()
    want = ref.nki_isa_stream_shuffle(dst.data, src.data, mask)
    nisa.nc_stream_shuffle(dst, src, mask)
    assert_bits(dst.data, want)
    outside = np.ones(128, bool)
    outside[d0:d0 + active] = False
    assert_bits(dst_base.data[outside], before[outside])


def test_stream_shuffle_broadcast_and_sdk_examples():
    a = T(np.arange(32 * 4, dtype=np.float32).reshape(32, 4), "float32")
    want = np.roll(a.data, 1, axis=0)
    nisa.nc_stream_shuffle(a, a, [(i - 1) % 32 for i in range(32)])
    assert np.array_equal(a.data, want)
    one = T(np.arange(4, dtype=np.float32).reshape(1, 4), "float32")
    b = empty((32, 4), "float32")
    nisa.nc_stream_shuffle(b, one, [0] * 32)
    assert np.array_equal(b.data, np.broadcast_to(one.data, (32, 4)))


def test_stream_shuffle_errors():
    a = empty((128, 4), "float32")
    with pytest.raises(ConstraintError, match="32 elements"):
        nisa.nc_stream_shuffle(a, a, [0] * 31)
    with pytest.raises(ConstraintError, match=r"\[0, 31\] or 255"):
        nisa.nc_stream_shuffle(a, a, [32] + [0] * 31)
    with pytest.raises(ConstraintError, match="same dtype"):
        nisa.nc_stream_shuffle(empty((32, 4), "int32"), a[0:32], [0] * 32)
    with pytest.raises(ConstraintError, match="elements per partition"):
        nisa.nc_stream_shuffle(empty((32, 5), "float32"), a[0:32], [0] * 32)
    with pytest.raises(ConstraintError, match="start partition"):
        nisa.nc_stream_shuffle(a[32:96], a[0:64], [0] * 32)
    with pytest.raises(ConstraintError, match="start partition"):
        nisa.nc_stream_shuffle(a[16:48], a[0:32], [0] * 32)
    with pytest.raises(ConstraintError, match="src has 1 partitions"):
        nisa.nc_stream_shuffle(a[0:32], a[0:1], [1] * 32)
    with pytest.raises(ConstraintError, match="sbuf or psum"):
        nisa.nc_stream_shuffle(empty((32, 4), "float32", nl.hbm), a[0:32], [0] * 32)


# ---- tensor_copy_predicated -------------------------------------------------------------------
@pytest.mark.parametrize("fmt", EVERY)
@pytest.mark.parametrize("pfmt", ["uint8", "uint16", "uint32"])
def test_copy_predicated_every_dtype(fmt, pfmt, rng):
    src = T(raw(rng, fmt, (16, 33)), fmt)
    dst = T(raw(rng, fmt, (16, 33)), fmt)
    pred = T(rng.integers(0, 3, (16, 33)) * (1 << (8 * dt.lookup(pfmt).itemsize - 2)), pfmt)
    for rev in (False, True):
        want = ref.nki_isa_copy_predicated(dst.data, src.data, pred.data, rev)
        nisa.tensor_copy_predicated(dst, src, pred, reverse_pred=rev)
        assert_bits(dst.data, want)


@pytest.mark.parametrize("fmt", ALL)
def test_copy_predicated_scalar(fmt, rng):
    dst = T(random_values(rng, fmt, (8, 20)), fmt)
    pred = T(rng.integers(0, 2, (8, 20)), "uint8")
    want = ref.nki_isa_copy_predicated(dst.data, ref.nki_round(np.float32(-2.5), fmt), pred.data)
    nisa.tensor_copy_predicated(dst, -2.5, pred)
    assert_bits(dst.data, want)


@settings(max_examples=30)
@given(P=st.integers(1, 128), F=st.integers(1, 600), seed=st.integers(0, 2**31),
       rank=st.integers(2, 4))
def test_copy_predicated_hypothesis(P, F, seed, rank):
    rng = np.random.default_rng(seed)
    shape = (P, F) if rank == 2 else (P, 1, F) if rank == 3 else (P, 1, 1, F)
    src = T(rng.standard_normal(shape).astype(np.float32), "float32", nl.psum)
    dbase = T(rng.standard_normal((P, 2 * F)).astype(np.float32), "float32")
    dst = dbase[:, 0:2 * F:2]
    pred = T(rng.integers(0, 2, (P, F)), "uint8")
    want = ref.nki_isa_copy_predicated(dst.data, src.data.reshape(P, F), pred.data)
    odd = dbase.data[:, 1::2].copy()
    nisa.tensor_copy_predicated(dst, src, pred)
    assert_bits(dst.data, want)
    assert_bits(dbase.data[:, 1::2], odd)


def test_copy_predicated_errors():
    d = empty((4, 8), "float32")
    p = empty((4, 8), "uint8")
    with pytest.raises(ConstraintError, match="predicate dtype"):
        nisa.tensor_copy_predicated(d, d, empty((4, 8), "int8"))
    with pytest.raises(ConstraintError, match="same dtype"):
        nisa.tensor_copy_predicated(d, empty((4, 8), "bfloat16"), p)
    with pytest.raises(ConstraintError, match="both be in psum"):
        nisa.tensor_copy_predicated(d, empty((4, 8), "float32", nl.psum),
                                    empty((4, 8), "uint8", nl.psum))
    with pytest.raises(ConstraintError, match="elements per partition"):
        nisa.tensor_copy_predicated(d, d, empty((4, 9), "uint8"))
    with pytest.raises(ConstraintError, match="number"):
        nisa.tensor_copy_predicated(d, "x", p)
    with pytest.raises(ConstraintError, match="reverse_pred"):
        nisa.tensor_copy_predicated(d, d, p, reverse_pred=1)


# ---- gathers -----------------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", EVERY)
def test_n_gather_every_dtype(fmt, rng):
    data = T(raw(rng, fmt, (16, 4, 25)), fmt)
    idx = T(rng.integers(0, 100, (16, 37)).astype(np.uint32), "uint32")
    d = empty((16, 37), fmt)
    nisa.nc_n_gather(d, data, idx)
    assert_bits(d.data, ref.nki_isa_n_gather(data.data, idx.data))


def test_n_gather_errors():
    data = empty((4, 10), "float32")
    idx = T(np.full((4, 3), 10, np.uint32), "uint32")
    d = T(np.full((4, 3), 7, np.float32), "float32")
    with pytest.raises(AccessError, match=r"\[0, 10\)"):
        nisa.nc_n_gather(d, data, idx)
    assert (d.data == 7).all()
    with pytest.raises(ConstraintError, match="uint32"):
        nisa.nc_n_gather(d, data, empty((4, 3), "int32"))
    with pytest.raises(ConstraintError, match="same dtype"):
        nisa.nc_n_gather(empty((4, 3), "int32"), data, idx)
    with pytest.raises(ConstraintError, match="sbuf"):
        nisa.nc_n_gather(empty((4, 3), "float32", nl.psum), data, idx)
    with pytest.raises(ConstraintError, match="elements per partition"):
        nisa.nc_n_gather(empty((4, 4), "float32"), data, idx)


@pytest.mark.parametrize("fmt", ["float32", "bfloat16", "int8", "float8_e4m3fn_x4"])
@pytest.mark.parametrize("ne,nv", [(1, None), (4, 64), (2, 7), (32, 3)])
def test_local_gather(fmt, ne, nv, rng):
    src = T(raw(rng, fmt, (128, 16, 32)), fmt)
    F = 16 * 32
    index = T(rng.integers(0, (F - ne) // ne + 1, (128, 4)).astype(np.uint16) * ne, "uint16")
    n = 64 if nv is None else nv
    d = empty((128, n * ne), fmt)
    nisa.local_gather(d, src, index, num_elem_per_idx=ne, num_valid_indices=nv)
    assert_bits(d.data, ref.nki_isa_local_gather(src.data, index.data, ne, nv))


def test_local_gather_sdk_example(rng):
    """The SDK test's shapes: src (128, 512, 4), index (128, 4), 4 elements, 64 valid."""
    src = T((rng.random((128, 512, 4)) * 100).astype(np.float32), "float32")
    per_core = rng.integers(0, 512, (16, 4)).astype(np.uint16)
    index = T(np.tile(per_core, (8, 1)) * 4, "uint16")
    d = empty((128, 4, 16, 4), "float32")
    nisa.local_gather(d, src, index, 4, 64)
    w = np.empty((128, 64, 4), np.float32)
    for c in range(8):
        ids = np.tile(per_core, (8, 1))[16 * c:16 * c + 16].flatten(order="F")[:64]
        w[16 * c:16 * c + 16] = np.take(src.data[16 * c:16 * c + 16], ids, axis=1)
    assert_bits(d.data, w.reshape(128, 4, 16, 4))


def test_local_gather_errors():
    src = empty((32, 8), "float32")
    idx = T(np.zeros((32, 1), np.uint16), "uint16")
    with pytest.raises(ConstraintError, match="multiple of 16"):
        nisa.local_gather(empty((8, 16), "float32"), empty((8, 8), "float32"),
                          T(np.zeros((8, 1), np.uint16), "uint16"))
    with pytest.raises(ConstraintError, match="num_elem_per_idx"):
        nisa.local_gather(empty((32, 48), "float32"), src, idx, num_elem_per_idx=3)
    with pytest.raises(ConstraintError, match="uint16"):
        nisa.local_gather(empty((32, 16), "float32"), src, empty((32, 1), "uint32"))
    with pytest.raises(ConstraintError, match=r"num_valid_indices must be in \[1, 16\]"):
        nisa.local_gather(empty((32, 17), "float32"), src, idx, num_valid_indices=17)
    with pytest.raises(ConstraintError, match="elements per partition"):
        nisa.local_gather(empty((32, 15), "float32"), src, idx)
    with pytest.raises(AccessError, match="exceeds"):
        nisa.local_gather(empty((32, 32), "float32"), src,
                          T(np.full((32, 1), 7, np.uint16), "uint16"), num_elem_per_idx=2)


# ---- nonzero_with_count / sequence_bounds ------------------------------------------------------
@pytest.mark.parametrize("fmt", ["float32", "int32"])
def test_nonzero_with_count(fmt, rng):
    v = random_values(rng, fmt, (128, 50))
    v[rng.random((128, 50)) < 0.5] = 0
    if fmt == "float32":
        v[0, 3] = -0.0
        v[16, 4] = np.nan
    src = T(v, fmt)
    dst = T(rng.integers(-9, 9, (128, 51)).astype(np.int32), "int32")
    want = ref.nki_isa_nonzero(src.data, 2**31 - 3, -7, dst.data)
    nisa.nonzero_with_count(dst, src, index_offset=2**31 - 3, padding_val=-7)
    assert_bits(dst.data, want)


def test_nonzero_with_count_sdk_example():
    src = T(np.array([[0, 1, 1, 0, 0, 1, 0, 0]], np.float32), "float32")
    dst = empty((1, 9), "int32")
    nisa.nonzero_with_count(dst, src, index_offset=16, padding_val=-1)
    assert dst.data.tolist() == [[17, 18, 21, -1, -1, -1, -1, -1, 3]]


def test_nonzero_with_count_errors():
    s = empty((16, 8), "float32")
    with pytest.raises(ConstraintError, match="one more element"):
        nisa.nonzero_with_count(empty((16, 8), "int32"), s)
    with pytest.raises(ConstraintError, match="float32 or int32"):
        nisa.nonzero_with_count(empty((16, 9), "int32"), empty((16, 8), "bfloat16"))
    with pytest.raises(ConstraintError, match="dst dtype must be int32"):
        nisa.nonzero_with_count(empty((16, 9), "float32"), s)
    with pytest.raises(ConstraintError, match="index_offset must be in"):
        nisa.nonzero_with_count(empty((16, 9), "int32"), s, index_offset=2**31)
    with pytest.raises(ConstraintError, match="sbuf"):
        nisa.nonzero_with_count(empty((16, 9), "int32", nl.psum), s)


@pytest.mark.parametrize("fmt", ["float32", "int32"])
def test_sequence_bounds(fmt, rng):
    ids = np.repeat(rng.integers(0, 4, 40), rng.integers(1, 5, 40))[None, :]
    seg = T(ids, fmt)
    d = empty((1, 2, ids.shape[1]), fmt)
    nisa.sequence_bounds(d, seg)
    assert np.array_equal(d.data, ref.nki_isa_sequence_bounds(ids).astype(d.data.dtype))


def test_sequence_bounds_end_is_exclusive():
    """The example of the SDK's sequence_bounds test: ends are one past each run."""
    ids = np.array([[0, 1, 1, 2, 2, 2, 0, 3, 3]])
    d = empty((1, 2, 9), "int32")
    nisa.sequence_bounds(d, T(ids, "int32"))
    assert d.data[0, 0].tolist() == [9, 1, 1, 3, 3, 3, 9, 7, 7]
    assert d.data[0, 1].tolist() == [-1, 3, 3, 6, 6, 6, -1, 9, 9]


def test_sequence_bounds_errors():
    with pytest.raises(ConstraintError, match=r"\[1, n\]"):
        nisa.sequence_bounds(empty((2, 2, 4), "int32"), empty((2, 4), "int32"))
    with pytest.raises(ConstraintError, match="shape"):
        nisa.sequence_bounds(empty((1, 4), "int32"), empty((1, 4), "int32"))
    with pytest.raises(ConstraintError, match="non-negative"):
        nisa.sequence_bounds(empty((1, 2, 2), "int32"), T(np.array([[1, -1]]), "int32"))


# ---- dma_copy: oob_mode / dge_mode, indirect gather and scatter ---------------------------
def _indirect_ref(n_el, pairs, offset, vo, dim):
    """Element indices of an indirect access pattern (plain loops)."""
    shape = [n for _, n in pairs]
    out = np.empty(shape, np.int64)
    for ix in np.ndindex(*shape):
        out[ix] = offset + sum(vo[i] if d == dim else i * st
                               for d, ((st, _), i) in enumerate(zip(pairs, ix)))
    return out


@pytest.mark.parametrize("fmt", ["int32", "bfloat16", "uint8", "float8_e4m3fn_x4"])
def test_dma_copy_indirect_scatter_skip_and_error(fmt, rng):
    base0 = raw(rng, fmt, (12, 6))
    vo = np.array([1, 12, 5, -1, 0], np.int32)             # row indices; 12 and -1 are out
    src = T(raw(rng, fmt, (5, 6)), fmt)
    pairs = [[1, 5], [1, 6]]
    idx = _indirect_ref(72, pairs, 0, vo * 6, 0)           # a row index steps 6 elements
    want = base0.copy().reshape(-1)
    for i in range(5):
        if (idx[i] >= 0).all() and (idx[i] < 72).all():
            want[idx[i]] = src.data[i]
    cache = T(base0, fmt, nl.hbm)
    view = cache.ap(pairs, vector_offset=T(vo.reshape(5, 1), "int32"), indirect_dim=0)
    nisa.dma_copy(view, src, oob_mode=nisa.oob_mode.skip)
    assert_bits(cache.data.reshape(-1), want)
    cache2 = T(base0, fmt, nl.hbm)
    with pytest.raises(AccessError, match="oob_mode"):
        nisa.dma_copy(cache2.ap(pairs, vector_offset=T(vo.reshape(5, 1), "int32"),
                                indirect_dim=0), src)
    assert_bits(cache2.data, base0)                          # a raising call changes nothing


def test_dma_copy_indirect_gather_skip(rng):
    base = T(rng.integers(-100, 100, (10, 4)).astype(np.int32), "int32", nl.hbm)
    vo = np.array([2, 9, 10, -1], np.int32)                 # row indices; 10 and -1 are out
    d = T(np.full((4, 4), -7, np.int32), "int32")
    nisa.dma_copy(d, base.ap([[4, 4], [1, 4]], vector_offset=T(vo.reshape(4, 1), "int32"),
                             indirect_dim=0), oob_mode=nisa.oob_mode.skip)
    flat = base.data.reshape(-1)
    assert_bits(d.data[0], flat[8:12])
    assert_bits(d.data[1], flat[36:40])
    assert (d.data[2:] == -7).all()
    with pytest.raises(AccessError):
        nisa.dma_copy(d, base.ap([[4, 4], [1, 4]], vector_offset=T(vo.reshape(4, 1), "int32"),
                                 indirect_dim=0))


def test_dma_copy_mode_errors():
    a, b = empty((4, 4), "float32"), empty((4, 4), "float32", nl.hbm)
    # nkifull: skip with static addresses only is the ordinary copy (nothing dynamic to skip)
    b.data[...] = np.arange(16, dtype=np.float32).reshape(4, 4)
    nisa.dma_copy(a, b, oob_mode=nisa.oob_mode.skip)
    assert_bits(a.data, b.data)
    h = empty((8, 4), "float32", nl.hbm)
    h.data[...] = -1.0
    nisa.dma_copy(h.ap([[4, 4], [1, 4]], offset=8), a, oob_mode=nisa.oob_mode.skip)
    assert_bits(h.data[2:6], b.data)
    assert (h.data[:2] == -1).all() and (h.data[6:] == -1).all()
    with pytest.raises(AccessError):                # a static out-of-bounds view still raises
        nisa.dma_copy(h.ap([[4, 4], [1, 4]], offset=20), a, oob_mode=nisa.oob_mode.skip)
    with pytest.raises(ConstraintError, match="oob_mode must be"):
        nisa.dma_copy(a, b, oob_mode="sometimes")
    with pytest.raises(ConstraintError, match="dge_mode must be"):
        nisa.dma_copy(a, b, dge_mode="fast")
    view = b.ap([[4, 4], [1, 4]], vector_offset=T(np.zeros((4, 1), np.int32), "int32"),
                indirect_dim=0)
    with pytest.raises(ConstraintError, match="software DGE"):
        nisa.dma_copy(a, view, dge_mode=nisa.dge_mode.hwdge)
    nisa.dma_copy(a, b, dge_mode=nisa.dge_mode.hwdge)


def test_dma_transpose_indirect_gather(rng):
    """The docstring's gather-transpose: dst = src[flat_indices, :].T (row indices)."""
    src = T(rng.integers(0, 65536, (64, 32)).astype(np.uint16), "bfloat16", nl.hbm)
    rows = rng.permutation(64)[:24].astype(np.int32)
    view = src.ap([[32, 24], [1, 32]], vector_offset=T(rows.reshape(24, 1), "int32"),
                  indirect_dim=0)
    d = empty((32, 24), "bfloat16")
    nisa.dma_transpose(d, view, axes=(1, 0), dge_mode=nisa.dge_mode.swdge)
    assert_bits(d.data, np.ascontiguousarray(src.data[rows].T))
    # oob_mode skip: offsets past the source's 64 rows are skipped, their dst columns kept
    bad = rows.copy()
    bad[[3, 10]] = [64, 1000]
    vbad = src.ap([[32, 24], [1, 32]], vector_offset=T(bad.reshape(24, 1), "int32"),
                  indirect_dim=0)
    d2 = T(rng.integers(0, 65536, (32, 24)).astype(np.uint16), "bfloat16")
    before = d2.data.copy()
    with pytest.raises(AccessError):
        nisa.dma_transpose(d2, vbad)
    with pytest.raises(ConstraintError, match="got none"):    # the gather needs a DGE
        nisa.dma_transpose(d2, view, dge_mode=nisa.dge_mode.none)
    assert_bits(d2.data, before)                      # the raising call changed nothing
    nisa.dma_transpose(d2, vbad, oob_mode=nisa.oob_mode.skip)
    want = before.copy()
    ok = np.array([i not in (3, 10) for i in range(24)])
    want[:, ok] = src.data[bad[ok]].T
    assert_bits(d2.data, want)
    with pytest.raises(ConstraintError, match="hwdge"):
        nisa.dma_transpose(d, view, dge_mode=nisa.dge_mode.hwdge)
