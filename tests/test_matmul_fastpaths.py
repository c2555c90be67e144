"""The matmul entry paths of issue 15 (nki-isa family) give the documented bits:

* nc_matmul decodes its operands inside the kernel call and adds straight into a
  C-contiguous float32 PSUM tile whose elements all accumulate (or all start from 0);
  every other case (mixed accumulation state, a strided or bfloat16 dst) takes the general
  path.  Both must equal reference.nki_matmul (k ascending, a float32 multiply and add per
  k onto the start value) and raise / warn exactly as before.
* TMATMUL's float path decodes A and B once and runs a register-blocked fma chain; the
  bits equal reference.pto_matmul (one fma per k from +0 / the init tile) at shapes with
  block tails, for 1 and several threads.
* dma_compute runs one pass of the dma_sum kernel; aliasing a source with dst (same or
  shifted memory) and a strided dst keep the reference bits.
"""

import warnings

import ml_dtypes
import numpy as np
import pytest

import reference as ref
from fastisa import pto
from fastisa.errors import UndefinedBehaviorWarning
from fastisa.nki import isa as nisa
from fastisa.nki import language as nl
from fastisa.nki.tensor import NkiTensor, PSUM_GROUP, psum_state
from pto_helpers import assert_bits as pto_assert_bits
from pto_helpers import tile
from test_nki_compute import T, assert_bits, empty, random_values

BF = ml_dtypes.bfloat16


def _bf(rng, shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(BF)


def _psum(shape, fmt="float32"):
    return empty(shape, fmt, nl.psum)


# ---- nc_matmul ------------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", ["bfloat16", "float16", "float8_e4m3", "float8_e5m2",
                                 "float32", "tfloat32"])
def test_nc_matmul_k_loop_strided_operands(fmt, rng):
    """The tutorial's operands: [K, BK, M] blocks sliced per k tile (strided views)."""
    K, BK, M, N = 128, 3, 128, 512
    a = T(random_values(rng, fmt, (K, BK, M)), fmt)
    b = T(random_values(rng, fmt, (K, BK, N)), fmt)
    acc = _psum((M, N))
    want = np.zeros((M, N), np.float32)
    for kt in range(BK):
        nisa.nc_matmul(dst=acc, stationary=a[0:K, kt, 0:M], moving=b[0:K, kt, 0:N])
        want = ref.nki_matmul(ref.nki_to_f32(a.data[:, kt], fmt),
                              ref.nki_to_f32(b.data[:, kt], fmt), want)
    assert_bits(acc.data, want, nan_either=np.ones(want.shape, bool))
    assert (psum_state(acc) == PSUM_GROUP).all()


@pytest.mark.parametrize("accumulate", [None, True, False])
def test_nc_matmul_strided_and_bf16_dst_take_the_general_path(accumulate, rng):
    K, M, N = 64, 40, 96
    s, m = T(_bf(rng, (K, M)), "bfloat16"), T(_bf(rng, (K, N)), "bfloat16")
    s32, m32 = s.data.astype(np.float32), m.data.astype(np.float32)
    wide = _psum((M, 2 * N))
    dst = wide[:, N:2 * N]                        # not C-contiguous
    bdst = _psum((M, N), "bfloat16")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedBehaviorWarning)
        for d in (dst, bdst):
            nisa.nc_matmul(dst=d, stationary=s, moving=m, accumulate=False)
            nisa.nc_matmul(dst=d, stationary=s, moving=m, accumulate=accumulate)
    once = ref.nki_matmul(s32, m32, np.zeros((M, N), np.float32))
    twice = once if accumulate is False else ref.nki_matmul(s32, m32, once)
    assert_bits(dst.data, twice)
    assert_bits(bdst.data, ref.nki_round(
        ref.nki_matmul(s32, m32, once.astype(BF).astype(np.float32))
        if accumulate is not False else once, "bfloat16"))
    assert (wide.data[:, :N] == 0).all()         # the other half untouched


def test_nc_matmul_mixed_state_per_element(rng):
    """Half of the PSUM tile in an open group, half fresh: accumulate=None adds onto the
    first half only (general path), then the uniform path accumulates everywhere."""
    K, M, N = 32, 16, 64
    s, m = T(_bf(rng, (K, M)), "bfloat16"), T(_bf(rng, (K, N)), "bfloat16")
    s32, m32 = s.data.astype(np.float32), m.data.astype(np.float32)
    acc = _psum((M, N))
    acc.data[...] = 7.0
    half = NkiTensor(acc.data[:, :N // 2], acc.dtype, acc.buffer, acc.name)
    nisa.nc_matmul(dst=half, stationary=s, moving=T(m.data[:, :N // 2], "bfloat16"))
    nisa.nc_matmul(dst=acc, stationary=s, moving=m)
    z = np.zeros((M, N), np.float32)
    want = ref.nki_matmul(s32, m32, z)
    want[:, :N // 2] = ref.nki_matmul(s32, m32[:, :N // 2],
                                      ref.nki_matmul(s32, m32[:, :N // 2], z[:, :N // 2]))
    assert_bits(acc.data, want)
    nisa.nc_matmul(dst=acc, stationary=s, moving=m)
    assert_bits(acc.data, ref.nki_matmul(s32, m32, want))


def test_nc_matmul_uniform_warnings_count_every_element(rng):
    s, m = T(_bf(rng, (8, 4)), "bfloat16"), T(_bf(rng, (8, 16)), "bfloat16")
    acc = _psum((4, 16))
    with nl.use_target("trn2"):
        with pytest.warns(UndefinedBehaviorWarning, match="64 never-written element"):
            nisa.nc_matmul(dst=acc, stationary=s, moving=m, accumulate=True)
        nisa.memset(dst=acc, value=1.0)
        with pytest.warns(UndefinedBehaviorWarning, match="64 element.s. initialised"):
            nisa.nc_matmul(dst=acc, stationary=s, moving=m)
    want = ref.nki_matmul(s.data.astype(np.float32), m.data.astype(np.float32),
                          np.ones((4, 16), np.float32))
    assert_bits(acc.data, want)


def test_nc_matmul_threads_never_change_bits(rng, monkeypatch):
    from fastisa.nki import _compute
    s, m = T(_bf(rng, (128, 128)), "bfloat16"), T(_bf(rng, (128, 512)), "bfloat16")
    outs = []
    for th in (1, 2, 3):
        monkeypatch.setattr(_compute, "THREADS", th)
        acc = _psum((128, 512))
        nisa.nc_matmul(dst=acc, stationary=s, moving=m)
        nisa.nc_matmul(dst=acc, stationary=s, moving=m)
        outs.append(acc.data.copy())
    assert all(o.tobytes() == outs[0].tobytes() for o in outs)


# ---- TMATMUL --------------------------------------------------------------------------------
@pytest.mark.parametrize("dt", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("mkn", [(70, 130, 200), (9, 64, 128), (128, 33, 64)])
def test_tmatmul_blocked_path_bits(dt, mkn, rng):
    M, K, N = mkn
    pad = lambda n: -(-n // 16) * 16  # noqa: E731   (32-byte rows for every dtype here)
    a = tile(dt, M, pad(K), loc=pto.TileType.Left, vr=M, vc=K, rng=rng)
    b = tile(dt, K, pad(N), loc=pto.TileType.Right, vr=K, vc=N, rng=rng)
    d = tile("float32", M, pad(N), loc=pto.TileType.Acc, vr=M, vc=N, rng=rng)
    pto.TMATMUL(d, a, b)
    pto_assert_bits(d.valid, ref.pto_matmul(a.valid, b.valid, np.float32), "TMATMUL")
    c = tile("float32", M, pad(N), loc=pto.TileType.Acc, vr=M, vc=N, rng=rng)
    init = c.valid.copy()
    pto.TMATMUL_ACC(c, c, a, b)                   # dst is the init tile
    pto_assert_bits(c.valid, ref.pto_matmul(a.valid, b.valid, np.float32, init=init),
                    "TMATMUL_ACC")


def test_tmatmul_threads_never_change_bits(rng):
    a = tile("float32", 256, 96, loc=pto.TileType.Left, rng=rng)
    b = tile("float32", 96, 320, loc=pto.TileType.Right, rng=rng)
    outs = []
    old = pto.get_num_threads()
    try:
        for th in (1, 2, 4):
            pto.set_num_threads(th)
            d = tile("float32", 256, 320, loc=pto.TileType.Acc)
            pto.TMATMUL(d, a, b)
            outs.append(d.data.copy())
    finally:
        pto.set_num_threads(old)
    assert all(o.tobytes() == outs[0].tobytes() for o in outs)


# ---- dma_compute ----------------------------------------------------------------------------
def test_dma_compute_aliasing_and_strided_dst(rng):
    x = rng.standard_normal((8, 64)).astype(np.float32)
    y = rng.standard_normal((8, 64)).astype(np.float32)
    a, b = T(x, "float32"), T(y, "float32")
    nisa.dma_compute(a, [b, a, b], nl.add)        # dst is srcs[1]
    assert_bits(a.data, ref.nki_isa_dma_compute([y, x, y]).reshape(8, 64))
    buf = T(np.arange(80, dtype=np.float32).reshape(1, 80), "float32")
    lo, hi = buf[0:1, 0:64], buf[0:1, 16:80]      # overlapping, shifted by 16
    want = ref.nki_isa_dma_compute([buf.data[0, 16:80].copy(), buf.data[0, 0:64].copy()])
    nisa.dma_compute(lo, [hi, lo], nl.add)
    assert_bits(buf.data[0, 0:64], want)
    wide = empty((8, 128), "bfloat16")
    d = wide[:, 0:128:2]                          # strided dst
    nisa.dma_compute(d, [T(x, "float32"), T(y.astype(BF), "bfloat16")], nl.add)
    assert_bits(wide.data[:, 0::2], ref.nki_round(
        ref.nki_isa_dma_compute([x, y.astype(BF).astype(np.float32)]), "bfloat16").reshape(8, 64))
    assert (wide.data[:, 1::2].astype(np.float32) == 0).all()


def test_nc_matmul_inexact_products_keep_multiply_then_add():
    """bf16 operands whose products fall below float32's 2^-149 grid: a fused multiply-add
    would round once where the documented order rounds twice.  c = 2^-125 + 2^-148 (odd on
    its 2^-148 grid), p = ((1 + 2^-7) 2^-75)^2 ~ 0.51 * 2^-149: multiply-then-add rounds p
    up to 2^-149, then c + 2^-149 is a tie that goes to the even neighbour c + 2^-148; an
    fma would return c.  fastisa's FMA path must not be taken here."""
    a = np.float32((1 + 2.0 ** -7) * 2.0 ** -75)
    c = np.float32(2.0 ** -125 + 2.0 ** -148)
    s = T(np.array([[a]], np.float32).astype(BF), "bfloat16")
    acc = _psum((1, 1))
    acc.data[...] = c
    with nl.use_target("trn3"):
        nisa.nc_matmul(dst=acc, stationary=s, moving=s, accumulate=True)
    want = ref.nki_matmul(np.array([[a]], np.float32), np.array([[a]], np.float32),
                          np.array([[c]], np.float32))
    assert want[0, 0] == np.float32(2.0 ** -125 + 2.0 ** -147)
    assert_bits(acc.data, want)


@pytest.mark.parametrize("fmt", ["bfloat16", "float16", "float8_e4m3fn"])
def test_nc_matmul_exact_products_full_tile(fmt, rng):
    """The tutorial tile (128 x 128 x 512, the FMA path where the CPU has it), with zeros,
    negative zeros and a NaN start value, equals the multiply-then-add oracle."""
    s = T(random_values(rng, fmt, (128, 128)), fmt)
    m = T(random_values(rng, fmt, (128, 512)), fmt)
    s.data[0, :5] = s.data.dtype.type(-0.0)
    acc = _psum((128, 512))
    start = rng.standard_normal((128, 512)).astype(np.float32)
    start[3, 7] = np.nan
    start[4, :] = -0.0
    acc.data[...] = start
    with nl.use_target("trn3"):
        nisa.nc_matmul(dst=acc, stationary=s, moving=m, accumulate=True)
    want = ref.nki_matmul(ref.nki_to_f32(s.data, fmt), ref.nki_to_f32(m.data, fmt), start)
    assert_bits(acc.data, want, nan_either=np.ones(want.shape, bool))


@pytest.mark.parametrize("fmt", ["bfloat16", "float32"])
@pytest.mark.parametrize("MN", [(128, 512), (70, 200), (3, 17)])
def test_nc_matmul_overwrite_ignores_old_values(fmt, MN, rng):
    """accumulate=False on a contiguous float32 tile: the kernel starts from +0 and never
    reads dst (NaN garbage there must not leak), blocks and tails alike."""
    M, N = MN
    K = 96
    s = T(random_values(rng, fmt, (K, M)) if fmt == "float32" else _bf(rng, (K, M)), fmt)
    m = T(random_values(rng, fmt, (K, N)) if fmt == "float32" else _bf(rng, (K, N)), fmt)
    acc = _psum((M, N))
    acc.data[...] = np.nan
    nisa.nc_matmul(dst=acc, stationary=s, moving=m, accumulate=False)
    want = ref.nki_matmul(ref.nki_to_f32(s.data, fmt), ref.nki_to_f32(m.data, fmt),
                          np.zeros((M, N), np.float32))
    assert_bits(acc.data, want, nan_either=np.isnan(want))


# ---- speed2 branch: the panel-major decode and the panel split over threads -------------
@pytest.mark.parametrize("N", [512, 448, 192, 64, 100])
@pytest.mark.parametrize("threads", [1, 2, 3])
def test_nc_matmul_panels_and_threads_keep_the_oracle_bits(N, threads, rng, monkeypatch):
    """Strided bf16 operand views (the tutorial's [K, block, F] SBUF tiles), moving
    decoded straight into 64-column panels when N is a multiple of 64, the panels split
    over 1-3 threads: the multiply-then-add oracle's bits, accumulating and not."""
    from fastisa.nki import _compute
    monkeypatch.setattr(_compute, "THREADS", threads)
    a = T(_bf(rng, (128, 4, 160)), "bfloat16")
    b = T(_bf(rng, (128, 3, 600)), "bfloat16")
    s, m = a[:, 2, 16:144], b[:, 1, 50:50 + N]
    acc = _psum((128, N))
    start = rng.standard_normal((128, N)).astype(np.float32)
    acc.data[...] = start
    with nl.use_target("trn3"):
        nisa.nc_matmul(dst=acc, stationary=s, moving=m, accumulate=True)
    s32 = ref.nki_to_f32(np.ascontiguousarray(s.data), "bfloat16")
    m32 = ref.nki_to_f32(np.ascontiguousarray(m.data), "bfloat16")
    assert_bits(acc.data, ref.nki_matmul(s32, m32, start))
    nisa.nc_matmul(dst=acc, stationary=s, moving=m, accumulate=False)
    assert_bits(acc.data, ref.nki_matmul(s32, m32, np.zeros((128, N), np.float32)))


# ---- speed15 branch: each 64-column panel decoded, checked and computed on its own -------
@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("accumulate", [True, False])
def test_nc_matmul_panels_choose_fma_or_multiply_add_each(threads, accumulate, rng,
                                                          monkeypatch):
    """Moving panels whose products are not all exact (a value of 2^-75 in panel 1 makes
    products below float32's 2^-149 grid, a huge one in panel 4 products beyond 2^128, a
    NaN in panel 6) take the multiply-then-add loop while the other panels take the FMA
    kernel: every panel keeps the oracle's bits, for 1-3 threads, and a NaN / inexact
    stationary operand sends every panel to the multiply-then-add loop."""
    from fastisa.nki import _compute
    monkeypatch.setattr(_compute, "THREADS", threads)
    s = T(_bf(rng, (128, 128)), "bfloat16")
    m = T(_bf(rng, (128, 512)), "bfloat16")
    a = np.float32((1 + 2.0 ** -7) * 2.0 ** -75)      # as in the 1 x 1 test above:
    s.data[:, 9] = 0                                   # out[9, 67] = c + a * a only, where
    m.data[:, 64 + 3] = 0                              # an fma would give c
    s.data[5, 9] = m.data[5, 64 + 3] = BF(a)
    m.data[7, 256 + 1] = BF(2.0 ** 120)
    s.data[7, 2] = BF(2.0 ** 20)
    m.data[9, 384 + 5] = BF(np.nan)
    for s_nan in (False, True):
        if s_nan:
            s.data[11, 100] = BF(np.nan)
        acc = _psum((128, 512))
        start = rng.standard_normal((128, 512)).astype(np.float32)
        start[9, 64 + 3] = np.float32(2.0 ** -125 + 2.0 ** -148)
        acc.data[...] = start
        with nl.use_target("trn3"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            nisa.nc_matmul(dst=acc, stationary=s, moving=m, accumulate=accumulate)
        s32 = ref.nki_to_f32(s.data, "bfloat16")
        m32 = ref.nki_to_f32(m.data, "bfloat16")
        with np.errstate(all="ignore"):
            want = ref.nki_matmul(s32, m32, start if accumulate else
                                  np.zeros((128, 512), np.float32))
        if accumulate and not s_nan:
            assert want[9, 67] == np.float32(2.0 ** -125 + 2.0 ** -147)
        assert_bits(acc.data, want, nan_either=np.isnan(want))


# ---- matmul15 branch: every instruction-set path, thread count and edge shape -----------
@pytest.fixture(params=["scalar", "avx2", "avx512"])
def mm_isa(request):
    """nc_matmul's kernels forced to one instruction set (lowered to the CPU's best when
    it lacks it), restored to the automatic choice afterwards."""
    from fastisa.nki import _pe
    got = _pe.set_matmul_isa(request.param)
    order = ["scalar", "avx2", "avx512"]
    assert order.index(got) <= order.index(request.param)
    yield got
    _pe.set_matmul_isa("auto")


_EDGE = [(1, 1, 1), (5, 3, 17), (7, 70, 200), (33, 128, 448), (128, 5, 64), (128, 128, 512),
         (64, 9, 100)]


def _edge_operands(rng, K, M, N, kind):
    s = _bf(rng, (K, M + 3))[:, 2:2 + M]        # strided views, as SBUF tiles are sliced
    m = _bf(rng, (K, N + 5))[:, 1:1 + N]
    if kind == "tiny":       # products below float32's 2^-149 grid: the fallback order
        s[K // 2, M // 2] = BF(2.0 ** -75)
        m[K // 2, N // 2] = BF(2.0 ** -75)
    elif kind == "huge":     # products beyond 2^128 (Inf), and a NaN operand
        s[0, 0] = BF(2.0 ** 120)
        m[0, N - 1] = BF(2.0 ** 20)
        m[K - 1, 0] = BF(np.nan)
    elif kind == "subnormal":   # a bfloat16 subnormal operand
        s[K - 1, M - 1] = np.uint16(3).view(BF)
    return s, m


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("KMN", _EDGE)
@pytest.mark.parametrize("kind", ["normal", "tiny", "huge", "subnormal"])
def test_nc_matmul_every_isa_thread_count_and_shape(mm_isa, threads, KMN, kind, rng,
                                                    monkeypatch):
    """Each forced instruction-set path (scalar, AVX2, AVX-512 with its exactness check and
    FMA kernel) x 1-3 threads x shapes whose K, M, N are not multiples of the blocking
    (4 rows, 64 columns, 16 lanes), with operands that take the FMA kernel (normal bf16)
    or the multiply-then-add fallback (tiny products, Inf/NaN, subnormals): the oracle's
    bits, accumulating onto a start value and starting from +0."""
    from fastisa.nki import _compute
    monkeypatch.setattr(_compute, "THREADS", threads)
    K, M, N = KMN
    s, m = _edge_operands(rng, K, M, N, kind)
    st, mv = T(s, "bfloat16"), T(m, "bfloat16")
    s32, m32 = s.astype(np.float32), m.astype(np.float32)
    start = rng.standard_normal((M, N)).astype(np.float32)
    start.flat[::7] = np.float32(2.0 ** -125 + 2.0 ** -148)
    for accumulate in (True, False):
        acc = _psum((M, N))
        acc.data[...] = start if accumulate else np.nan
        with nl.use_target("trn3"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            nisa.nc_matmul(dst=acc, stationary=st, moving=mv, accumulate=accumulate)
        with np.errstate(all="ignore"):
            want = ref.nki_matmul(s32, m32, start if accumulate else
                                  np.zeros((M, N), np.float32))
        assert_bits(acc.data, want, nan_either=np.isnan(want))


def test_nc_matmul_isa_names_and_the_environment(monkeypatch):
    from fastisa._kernels import nki as k
    from fastisa.errors import ConstraintError
    from fastisa.nki import _pe
    try:
        assert _pe.set_matmul_isa("scalar") == "scalar"
        assert k.matmul_isa() == 0
        best = _pe.set_matmul_isa("auto")
        assert best in ("scalar", "avx2", "avx512")
        assert _pe.set_matmul_isa("avx512") == best or best != "avx512"
        with pytest.raises(ConstraintError, match="set_matmul_isa: name must be one of"):
            _pe.set_matmul_isa("sse9")
        monkeypatch.setenv("FASTISA_MATMUL_ISA", "scalar")
        _pe._init_key()
        assert k.matmul_isa() == 0
    finally:
        _pe.set_matmul_isa("auto")


@pytest.fixture(params=["scalar", "avx2", "avx512"])
def tmm_isa(request):
    """TMATMUL's float kernel forced to one instruction set (lowered to the CPU's best)."""
    from fastisa.pto import _ops
    got = _ops._set_matmul_isa(request.param)
    order = ["scalar", "avx2", "avx512"]
    assert order.index(got) <= order.index(request.param)
    yield got
    _ops._set_matmul_isa("auto")


@pytest.mark.parametrize("threads", [1, 3])
@pytest.mark.parametrize("dt", ["float32", "bfloat16"])
@pytest.mark.parametrize("mkn", [(70, 130, 200), (9, 64, 128), (128, 33, 64), (1, 1, 1),
                                 (5, 300, 17), (13, 257, 130), (64, 128, 256)])
def test_tmatmul_every_isa_thread_count_and_shape(tmm_isa, threads, dt, mkn, rng):
    """matmul15 branch: each forced instruction set (the AVX-512 path packs B in 64-column
    panels, reads A in place and writes dst directly when it can, K in chunks of 128) x
    threads x shapes with row, column and K tails: reference.pto_matmul's bits, for
    TMATMUL and TMATMUL_ACC (dst as the init tile), with a subnormal and a -0 operand."""
    M, K, N = mkn
    pad = lambda n: -(-n // 16) * 16  # noqa: E731
    old = pto.get_num_threads()
    try:
        pto.set_num_threads(threads)
        a = tile(dt, M, pad(K), loc=pto.TileType.Left, vr=M, vc=K, rng=rng)
        b = tile(dt, K, pad(N), loc=pto.TileType.Right, vr=K, vc=N, rng=rng)
        if dt == "float32":
            a.valid[0, 0] = np.float32(1e-41)
        b.valid[K - 1, N - 1] = b.valid.dtype.type(-0.0)
        d = tile("float32", M, pad(N), loc=pto.TileType.Acc, vr=M, vc=N, rng=rng)
        pto.TMATMUL(d, a, b)
        pto_assert_bits(d.valid, ref.pto_matmul(a.valid, b.valid, np.float32), "TMATMUL")
        c = tile("float32", M, pad(N), loc=pto.TileType.Acc, vr=M, vc=N, rng=rng)
        init = c.valid.copy()
        pto.TMATMUL_ACC(c, c, a, b)
        pto_assert_bits(c.valid, ref.pto_matmul(a.valid, b.valid, np.float32, init=init),
                        "TMATMUL_ACC")
    finally:
        pto.set_num_threads(old)
