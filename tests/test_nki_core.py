"""NKI core: tensor model, nki.language, nki.jit / nki.simulate, dma_copy, memset, iota."""

import math

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import reference as ref
import fastisa.nki as nki
from fastisa import cost, dtypes
from fastisa.errors import AccessError, ConstraintError
from fastisa.nki import isa as nisa
from fastisa.nki import language as nl
from fastisa.nki.tensor import NkiTensor

BF16 = ml_dtypes.bfloat16


# ---- nki.language --------------------------------------------------------------------------
def test_every_spec_dtype_is_exported():
    for name in nl.SPEC_DTYPES:
        fmt = getattr(nl, name)
        assert fmt is dtypes.FORMATS[name]
    assert len(nl.SPEC_DTYPES) == 18


def test_buffers():
    assert nl.hbm is nl.private_hbm
    assert nl.sbuf.on_chip and nl.psum.on_chip and not nl.shared_hbm.on_chip
    assert nl.tile_size.pmax == 128 and nl.tile_size.psum_fmax == 512


@pytest.mark.parametrize("name", nl.SPEC_DTYPES)
def test_new_tensors_are_filled_like_the_official_simulator(name):
    fmt = getattr(nl, name)
    t = nl.ndarray((4, 3), fmt, buffer=nl.sbuf)
    assert t.shape == (4, 3) and t.dtype is fmt and t.data.dtype == fmt.np_dtype
    if fmt.kind == "float":
        assert np.isnan(t.data.astype(np.float32)).all()
    elif fmt.kind in ("int", "bool"):
        assert (t.data == 4).all()
    elif fmt.name == "float4_e2m1fn_x4":
        assert (t.data == 0x7777).all()
    else:
        assert (t.data == 0x7F7F7F7F).all()


def test_ndarray_errors():
    with pytest.raises(ConstraintError, match="partition dimension must be <= 128 for sbuf, "
                                              "got 129"):
        nl.ndarray((129, 4), nl.float32, buffer=nl.sbuf)
    with pytest.raises(ConstraintError, match="partition dimension must be <= 128 for psum"):
        nl.ndarray((256, 4), nl.float32, buffer=nl.psum)
    nl.ndarray((256, 4), nl.float32, buffer=nl.hbm)    # HBM has no partition limit
    with pytest.raises(ConstraintError, match="every dimension must be positive"):
        nl.ndarray((4, 0), nl.float32)
    with pytest.raises(ConstraintError, match="dtype"):
        nl.ndarray((4, 4), np.float64)
    with pytest.raises(ConstraintError, match="buffer must be"):
        nl.ndarray((4, 4), nl.float32, buffer="dram")


def test_sbuf_and_psum_capacity_per_target():
    with nl.use_target("trn2"):
        assert nl.target() == "trn2" and nl.sbuf_capacity() == 224 * 1024
        a = nl.ndarray((128, 50 * 1024), nl.float32, buffer=nl.sbuf)   # 200 KiB / partition
        with pytest.raises(AccessError, match=r"sbuf capacity exceeded on trn2"):
            nl.ndarray((128, 8 * 1024), nl.float32, buffer=nl.sbuf)    # +32 KiB
        del a                                                           # freed
        b = nl.ndarray((128, 8 * 1024), nl.float32, buffer=nl.sbuf)
        assert nl.sbuf_usage() == 32 * 1024
        p = nl.ndarray((128, 3 * 1024), nl.float32, buffer=nl.psum)     # 12 KiB
        with pytest.raises(AccessError, match="psum capacity exceeded"):
            nl.ndarray((128, 2 * 1024), nl.float32, buffer=nl.psum)   # +8 KiB > 16 KiB
        del b, p
    with nl.use_target("trn3"):
        assert nl.target() == "trn3"
        nl.ndarray((128, 60 * 1024), nl.float32, buffer=nl.sbuf)       # 240 KiB fits on trn3
    with pytest.raises(ConstraintError, match="target"):
        with nl.use_target("trn9"):
            pass


def test_views_and_bounds():
    t = nl.ndarray((128, 64), nl.float32)
    t.data[...] = np.arange(128 * 64, dtype=np.float32).reshape(128, 64)
    v = t[0:64, nl.ds(8, 16)]
    assert isinstance(v, NkiTensor) and v.shape == (64, 16) and v.buffer is nl.sbuf
    assert v.data[1, 0] == 64 + 8
    v.data[...] = -1                      # writes go through to the parent
    assert t.data[0, 8] == -1 and t.data[0, 7] == 7 and t.data[64, 8] == 64 * 64 + 8
    # on-chip: an integer on the partition dim keeps it as a size-1 slice, and the result is
    # at least 2-D (SDK 2.33 NkiTensor.__getitem__); in HBM the integer removes the dim
    assert t[3].shape == (1, 64) and t[..., 5].shape == (128, 1) and t[-1].data[0, 0] == 127 * 64
    assert t[2, 5].shape == (1, 1) and t[2, 5].data[0, 0] == 2 * 64 + 5
    h = nl.ndarray((4, 128, 64), nl.float32, buffer=nl.shared_hbm)
    assert h[3].shape == (128, 64) and h[1, :, 5].shape == (128,) and h[0, 0, 0].shape == ()
    # on-chip views stay >= 2-D (SDK language guide, "The partition dimension is special")
    assert t[3].shape == (1, 64) and t[..., 5].shape == (128, 1) and t[3, 5].shape == (1, 1)
    assert t[3].data[0, 5] == t.data[3, 5] and np.shares_memory(t[..., 5].data, t.data)
    t3 = nl.ndarray((16, 4, 8), nl.float32)
    assert t3[:, 0].shape == (16, 8) and t3[:, 0, 2].shape == (16, 1)
    assert t3[2, :, :].shape == (1, 4, 8) and t3[0, 1, 2].shape == (1, 1)
    h = nl.ndarray((4, 16, 8), nl.float32, buffer=nl.shared_hbm)
    assert h[0].shape == (16, 8) and h[0, 1].shape == (8,)     # HBM drops indexed dims
    assert t[:, 0:64:2].shape == (128, 32)
    for bad in [(slice(0, 129),), (slice(0, 10), slice(60, 65)), (128,), (slice(None), 64),
                (slice(None), nl.ds(60, 5))]:
        with pytest.raises(AccessError, match="outside"):
            t[bad].data          # slices past the end: checked when the view is accessed
    with pytest.raises(AccessError):       # index arrays (legacy nl.arange) are bounds-checked
        t[np.array([1, 200])].data
    r = t.reshape(128, 8, 8)
    assert r.shape == (128, 8, 8) and np.shares_memory(r.data, t.data)
    with pytest.raises(ConstraintError, match="reshape"):
        t[:, 0:32].reshape(128 * 32)       # strided: would need a copy
    a = t.ap(pattern=[[64, 4], [1, 8]], offset=2)
    assert a.shape == (4, 8) and a.data[1, 0] == t.data[1, 2]
    far = t.ap(pattern=[[64, 129], [1, 8]])   # built; checked when accessed
    with pytest.raises(AccessError, match="ap"):
        far.data


# ---- nki.jit / nki.simulate ---------------------------------------------------------------------
@nki.jit
def _copy_kernel(a):
    t = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=t)
    return out


def test_simulate_round_trip_and_profile():
    x = np.arange(256, dtype=np.float32).reshape(16, 16)
    out = nki.simulate(_copy_kernel)(x)
    assert isinstance(out, np.ndarray) and np.array_equal(out, x)
    assert _copy_kernel.profile.totals() == {"DMA": 2 * 64}
    assert nki.profile is _copy_kernel.profile
    # calling the jitted kernel with numpy arrays simulates it too
    assert np.array_equal(_copy_kernel(x), x)


def test_simulate_writes_back_modified_inputs_only():
    @nki.jit
    def k(a, b):
        t = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
        nisa.memset(t, 7.0)
        nisa.dma_copy(dst=a, src=t)          # writes input a
        out = nl.ndarray(b.shape, b.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=b)
        return out

    a = np.zeros((4, 4), np.float32)
    b = np.ones((4, 4), BF16)
    out = nki.simulate(k)(a, b)
    assert (a == 7.0).all() and (b.astype(np.float32) == 1).all() and out.dtype == BF16


def test_simulate_rejects_float64_and_on_chip_outputs():
    with pytest.raises(ConstraintError, match="float64"):
        nki.simulate(_copy_kernel)(np.zeros((4, 4)))

    @nki.jit
    def bad(a):
        t = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a)
        return t

    with pytest.raises(ConstraintError, match="must be in HBM"):
        nki.simulate(bad)(np.zeros((4, 4), np.float32))


def test_spmd_launch():
    @nki.jit
    def k(a):
        pid = nl.program_id(0)
        n = nl.num_programs(0)
        rows = a.shape[0] // n
        out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
        t = nl.ndarray((rows, a.shape[1]), a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a[pid * rows:(pid + 1) * rows])
        nisa.memset(t[:, 0:1], float(pid + 10))
        nisa.dma_copy(dst=out[pid * rows:(pid + 1) * rows], src=t)
        return out

    x = np.arange(32, dtype=np.float32).reshape(8, 4)
    out = nki.simulate(k[2])(x)
    assert list(out[:, 0]) == [10] * 4 + [11] * 4
    assert np.array_equal(out[:, 1:], x[:, 1:])
    out4 = k[4](x)
    assert list(out4[:, 0]) == [10, 10, 11, 11, 12, 12, 13, 13]

    @nki.jit
    def grid(a):
        out = nl.ndarray((2, 3), nl.int32, buffer=nl.shared_hbm)
        t = nl.ndarray((1, 1), nl.int32, buffer=nl.sbuf)
        nisa.memset(t, nl.program_id(0) * 10 + nl.program_id(1))
        nisa.dma_copy(dst=out[nl.program_id(0), nl.ds(nl.program_id(1), 1)], src=t)
        assert nl.num_programs() == (2, 3) and nl.program_ndim() == 2
        return out

    assert grid[2, 3](np.zeros((1, 1), np.float32)).tolist() == [[0, 1, 2], [10, 11, 12]]


def test_shim_vendor_imports():
    from fastisa import shim
    with shim.installed():
        import nki as vnki
        import nki.isa as vnisa
        import nki.language as vnl
        assert vnki.simulate is nki.simulate and vnisa.topk is nisa.topk
        assert vnl.bfloat16 is nl.bfloat16


# ---- dma_copy --------------------------------------------------------------------------------
@settings(max_examples=30)
@given(dtype=st.sampled_from(nl.SPEC_DTYPES), seed=st.integers(0, 2**32 - 1),
       shape=st.sampled_from([((4, 6), (4, 6)), ((4, 6), (2, 12)), ((8, 3), (24,))]))
def test_dma_copy_same_dtype_is_bit_exact(dtype, seed, shape):
    fmt = getattr(nl, dtype)
    rng = np.random.default_rng(seed)
    src = nl.ndarray(shape[0], fmt, buffer=nl.hbm)
    raw = rng.integers(0, 256, src.data.nbytes, dtype=np.uint8)
    src.data.view(np.uint8).reshape(-1)[...] = raw
    dst = nl.ndarray(shape[1], fmt, buffer=nl.sbuf) if len(shape[1]) > 1 else \
        nl.ndarray(shape[1], fmt, buffer=nl.hbm)
    nisa.dma_copy(dst=dst, src=src)
    assert np.array_equal(dst.data.view(np.uint8).reshape(-1), raw)


def test_dma_copy_strided_views():
    src = nl.ndarray((8, 16), nl.bfloat16, buffer=nl.hbm)
    src.data[...] = np.arange(128).reshape(8, 16).astype(BF16)
    dst = nl.ndarray((8, 16), nl.bfloat16)
    dst.data[...] = 0
    nisa.dma_copy(dst=dst[:, 0:16:2], src=src[:, 8:16])
    assert np.array_equal(dst.data[:, 0:16:2], src.data[:, 8:16])
    assert (dst.data[:, 1:16:2].astype(np.float32) == 0).all()


def test_dma_copy_casts_through_fp32():
    # spec 000 FP32-to-Integer table
    cases = [(42.0, nl.int32, 42), (2147483648.0, nl.uint8, 255), (-300.0, nl.int8, -128),
             (-1.0, nl.uint32, 0)]
    for v, fmt, want in cases:
        src = nl.ndarray((1, 1), nl.float32, buffer=nl.hbm)
        src.data[...] = v
        dst = nl.ndarray((1, 1), fmt)
        nisa.dma_copy(dst=dst, src=src)
        assert int(dst.data[0, 0]) == want
    # int32 -> float32: 2**24 + 1 rounds to 2**24 (RNE); int32 -> int8 through fp32
    src = nl.ndarray((1, 3), nl.int32, buffer=nl.hbm)
    src.data[...] = [2**24 + 1, 2**24 + 3, -(2**31)]
    d32 = nl.ndarray((1, 3), nl.float32)
    nisa.dma_copy(dst=d32, src=src)
    assert list(d32.data[0]) == [2.0**24, 2.0**24 + 4, -(2.0**31)]
    d8 = nl.ndarray((1, 3), nl.int8)
    nisa.dma_copy(dst=d8, src=src)
    assert list(d8.data[0]) == [127, 127, -128]


@pytest.mark.parametrize("src_dt, dst_dt", [("float32", "bfloat16"), ("float32", "float16"),
                                            ("bfloat16", "float32"), ("float16", "float32"),
                                            ("bfloat16", "int16"), ("float32", "int32")])
def test_dma_copy_casts_every_16bit_code_or_random_f32(src_dt, dst_dt):
    sf, df = getattr(nl, src_dt), getattr(nl, dst_dt)
    if sf.bits == 16:
        vals = np.arange(65536, dtype=np.uint32).astype(np.uint16).view(sf.np_dtype)
    else:
        rng = np.random.default_rng(0)
        vals = rng.integers(0, 2**32, 65536, dtype=np.uint64).astype(np.uint32).view(np.float32)
        vals[:6] = [np.inf, -np.inf, np.nan, 1e9, -3e9, 0.5]
    src = nl.ndarray((128, 512), sf, buffer=nl.hbm)
    src.data[...] = vals.reshape(128, 512)
    dst = nl.ndarray((128, 512), df)
    nisa.dma_copy(dst=dst, src=src)
    want = ref.nki_f32_to(vals.astype(np.float32), df.np_dtype).reshape(128, 512)
    got = dst.data
    if df.kind == "float":
        gf, wf = got.astype(np.float32), want.astype(np.float32)
        both_nan = np.isnan(gf) & np.isnan(wf)
        assert np.array_equal(got.view(np.uint8)[~np.repeat(both_nan, got.itemsize, axis=1)],
                              want.view(np.uint8)[~np.repeat(both_nan, got.itemsize, axis=1)])
    else:
        assert np.array_equal(got, want)


def test_dma_copy_errors():
    a = nl.ndarray((4, 4), nl.float32)
    with pytest.raises(ConstraintError, match="same number of elements, got 16 .* and 12"):
        nisa.dma_copy(dst=a, src=nl.ndarray((4, 3), nl.float32))
    with pytest.raises(ConstraintError, match="packed x4"):
        nisa.dma_copy(dst=nl.ndarray((4, 4), nl.float8_e4m3fn_x4), src=nl.ndarray((4, 4), nl.uint32))
    with pytest.raises(ConstraintError, match="dst must be an NkiTensor"):
        nisa.dma_copy(dst=np.zeros((4, 4)), src=a)
    with pytest.raises(ConstraintError, match=r"priority must be in \[0, 3\], got 5"):
        nisa.dma_copy(dst=a, src=a, priority=5)


# ---- memset ---------------------------------------------------------------------------------
@pytest.mark.parametrize("name", [n for n in nl.SPEC_DTYPES])
def test_memset_every_dtype(name):
    fmt = getattr(nl, name)
    t = nl.ndarray((8, 5), fmt)
    if fmt.kind == "packed":
        nisa.memset(t, 0)
        assert (t.data.view(np.uint8) == 0).all()
        with pytest.raises(ConstraintError, match="value must be 0 for packed"):
            nisa.memset(t, 1.0)
        return
    if fmt.kind == "bool":      # bool_: RNE then saturate to [0, 1]
        for v, want in [(0, 0), (1, 1), (3, 1), (0.3, 0), (0.7, 1), (-2, 0)]:
            nisa.memset(t, v)
            assert (t.data == want).all(), v
        return
    values = [0, 3, -2.5, 0.1] if fmt.name != "tfloat32" else [0, 3, -2.5]  # tf32: exact ones
    for v in values:
        nisa.memset(t, v)
        want = ref.nki_f32_to(np.full((8, 5), v, np.float32), fmt.np_dtype)
        assert np.array_equal(t.data.view(np.uint8), want.view(np.uint8)), (name, v)


@pytest.mark.parametrize("name", [n for n in nl.SPEC_DTYPES
                                  if getattr(nl, n).kind not in ("packed", "bool")])
def test_memset_large_tensors_take_the_pattern_fill_with_the_same_bits(name):
    """>= 256 KiB, contiguous and 8-byte aligned: the pool's 64-bit pattern fill (issue 15);
    a misaligned contiguous view and a strided one take numpy's assignment.  Every element
    and the bytes around the view get the bits the small-tensor path gives."""
    fmt = getattr(nl, name)
    t = nl.ndarray((128, 2048 + 8), fmt)
    for v in ([0, 3, -2.5, 0.1, -0.0, 1e30] if fmt.name != "tfloat32" else [0, 3, -2.5]):
        want = ref.nki_f32_to(np.full((1,), v, np.float32), fmt.np_dtype).view(np.uint8)
        nisa.memset(t, v)
        assert (t.data.view(np.uint8).reshape(-1, want.size) == want).all(), (name, v)
    flat = t.data.reshape(-1)
    edge = ref.nki_f32_to(np.full((1,), 7.0, np.float32), fmt.np_dtype).view(np.uint8)
    for lo in (1, 8):                       # misaligned (1 element in) and aligned views
        nisa.memset(t, 7.0)
        n = 128 * 2048
        v = NkiTensor(flat[lo:lo + n].reshape(128, 2048), fmt, nl.sbuf)
        nisa.memset(v, 3)
        want = ref.nki_f32_to(np.full((1,), 3, np.float32), fmt.np_dtype).view(np.uint8)
        b = flat.view(np.uint8).reshape(-1, want.size)
        assert (b[lo:lo + n] == want).all() and (b[:lo] == edge).all() and \
            (b[lo + n:] == edge).all(), (name, lo)
    nisa.memset(t, 7.0)
    nisa.memset(t[0:128, 0:2048], 3)           # strided (row padding): numpy's path
    b = t.data.view(np.uint8).reshape(128, 2048 + 8, -1)
    assert (b[:, :2048] == want).all() and (b[:, 2048:] == edge).all()


def test_memset_rounding_and_saturation():
    t = nl.ndarray((2, 3), nl.bfloat16)
    nisa.memset(t, 0.1)       # 0.1 -> fp32 -> bf16 (RNE)
    assert (t.data.view(np.uint16) == np.float32(0.1).astype(BF16).view(np.uint16)).all()
    i8 = nl.ndarray((2, 3), nl.int8)
    nisa.memset(i8, 1000)
    assert (i8.data == 127).all()
    nisa.memset(i8, -2.5)
    assert (i8.data == -2).all()      # RNE
    i32 = nl.ndarray((2, 3), nl.int32)
    nisa.memset(i32, 2**31 - 1)       # exact integer, not through fp32
    assert (i32.data == 2**31 - 1).all()
    sub = nl.ndarray((4, 4), nl.float32)
    sub.data[...] = 1
    nisa.memset(sub[1:3, 1:3], 5.0)
    assert sub.data.sum() == 12 + 20


def test_memset_cost_and_errors():
    t = nl.ndarray((4, 1000), nl.bfloat16)
    with cost.profiling() as p:
        nisa.memset(t, 0)
        nisa.memset(t, 1.0)
        nisa.memset(t[:, :10], 1.0, engine=nisa.gpsimd_engine)
    assert [(e.engine, e.cycles) for e in p.events] == [("Vector", 500), ("Vector", 1000),
                                                        ("GpSimd", 64)]
    with pytest.raises(ConstraintError, match="dst must be in sbuf, got psum"):
        nisa.memset(nl.ndarray((4, 4), nl.float32, buffer=nl.psum), 0, engine=nisa.gpsimd_engine)
    with pytest.raises(ConstraintError, match="engine must be unknown or vector or gpsimd"):
        nisa.memset(t, 0, engine=nisa.tensor_engine)
    with pytest.raises(ConstraintError, match="dst must be in psum or sbuf, got private_hbm"):
        nisa.memset(nl.ndarray((4, 4), nl.float32, buffer=nl.hbm), 0)
    with pytest.raises(ConstraintError, match="value must be an int or float"):
        nisa.memset(t, "1")


# ---- iota -----------------------------------------------------------------------------------
@settings(max_examples=30)
@given(P=st.integers(1, 128), pattern=st.lists(st.tuples(st.integers(-5, 5), st.integers(1, 5)),
                                                min_size=1, max_size=4),
       offset=st.integers(-100, 100), cm=st.integers(-3, 3),
       dtype=st.sampled_from([nl.int32, nl.float32, nl.bfloat16, nl.uint16, nl.int8]))
def test_iota_matches_oracle(P, pattern, offset, cm, dtype):
    F = math.prod(n for _, n in pattern)
    dst = nl.ndarray((P, F), dtype)
    with cost.profiling() as p:
        nisa.iota(dst, [list(x) for x in pattern], offset=offset, channel_multiplier=cm)
    want = ref.nki_iota(P, pattern, offset, cm)
    if dtype is not nl.int32:
        want = ref.nki_f32_to(want.astype(np.float32), dtype.np_dtype)
    assert np.array_equal(dst.data.view(np.uint8), want.view(np.uint8))
    assert p.totals() == {"GpSimd": 150 + F}


def test_iota_examples_and_errors():
    d = nl.ndarray((2, 6), nl.int32)
    nisa.iota(d, [[2, 3], [-1, 2]], offset=5, channel_multiplier=100)
    assert d.data.tolist() == [[5, 4, 7, 6, 9, 8], [105, 104, 107, 106, 109, 108]]
    with pytest.raises(ConstraintError, match="pattern must cover dst's 6 elements"):
        nisa.iota(d, [[1, 5]])
    with pytest.raises(ConstraintError, match="1 to 4"):
        nisa.iota(d, [[1, 1]] * 5 + [[1, 6]])
    with pytest.raises(ConstraintError, match="dst must be in sbuf"):
        nisa.iota(nl.ndarray((2, 6), nl.int32, buffer=nl.psum), [[1, 6]])
    with pytest.raises(ConstraintError, match="offset must be an integer"):
        nisa.iota(d, [[1, 6]], offset=1.5)
