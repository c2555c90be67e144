"""nki-isa family: nc_matmul transpose mode and double_row perf mode; MX matmul/quantize."""

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import reference as ref
from fastisa import cost
from fastisa.errors import ConstraintError
from fastisa.nki import isa as nisa
from fastisa.nki import language as nl
from test_nki_compute import ALL, T, assert_bits, empty, random_values

MM_IN = ["float8_e4m3", "float8_e5m2", "float8_e4m3fn", "bfloat16", "float16", "tfloat32",
         "float32"]


def eye(K, fmt):
    return T(np.eye(K, dtype=np.float32), fmt)


@pytest.mark.parametrize("fmt", ALL)
def test_transpose_mode_bit_exact_every_dtype(fmt, rng):
    x = T(random_values(rng, fmt, (96, 40)), fmt)          # NaN / inf included
    d = empty((40, 96), fmt, nl.psum)
    nisa.nc_matmul(d, x, eye(96, "bfloat16"), is_transpose=True)
    assert_bits(d.data, np.ascontiguousarray(x.data.T))


@settings(max_examples=30)
@given(K=st.integers(1, 128), M=st.integers(1, 128), seed=st.integers(0, 2**31),
       fin=st.sampled_from(["bfloat16", "float32", "float8_e4m3"]))
def test_transpose_mode_convert_hypothesis(K, M, seed, fin):
    rng = np.random.default_rng(seed)
    x = T(random_values(rng, fin, (K, M)), fin)
    d = empty((M, K), "float32", nl.psum)
    nisa.nc_matmul(d, x, eye(K, fin), is_transpose=True)
    assert_bits(d.data, ref.nki_to_f32(x.data, fin).T)


def test_transpose_mode_then_matmul_group_and_cost(rng):
    x = T(rng.standard_normal((32, 16)).astype(np.float32), "float32")
    d = empty((16, 32), "float32", nl.psum)
    with cost.profiling() as p:
        nisa.nc_matmul(d, x, eye(32, "float32"), is_transpose=True)
    assert p.totals() == {"Tensor": 32}
    assert_bits(d.data, np.ascontiguousarray(x.data.T))


def test_transpose_mode_errors():
    x = empty((8, 4), "bfloat16")
    with pytest.raises(ConstraintError, match="identity"):
        nisa.nc_matmul(empty((4, 8), "bfloat16", nl.psum), x, empty((8, 4), "bfloat16"),
                       is_transpose=True)
    with pytest.raises(ConstraintError, match="identity matrix"):
        nisa.nc_matmul(empty((4, 8), "bfloat16", nl.psum), x, T(np.ones((8, 8)), "bfloat16"),
                       is_transpose=True)
    with pytest.raises(ConstraintError, match="shape"):
        nisa.nc_matmul(empty((8, 4), "bfloat16", nl.psum), x, eye(8, "bfloat16"),
                       is_transpose=True)
    with pytest.raises(ConstraintError, match="psum"):
        nisa.nc_matmul(empty((4, 8), "bfloat16"), x, eye(8, "bfloat16"), is_transpose=True)


def test_transpose_flag_on_trn1_is_an_ordinary_matmul(rng):
    x = T(rng.standard_normal((8, 4)).astype(np.float32), "bfloat16")
    y = T(rng.standard_normal((8, 6)).astype(np.float32), "bfloat16")
    d = empty((4, 6), "float32", nl.psum)
    with nl.use_target("trn1"):
        nisa.nc_matmul(d, x, y, is_transpose=True, accumulate=False)
    assert_bits(d.data, ref.nki_matmul(ref.nki_to_f32(x.data, "bfloat16"),
                                       ref.nki_to_f32(y.data, "bfloat16"), np.zeros((4, 6))))


@pytest.mark.parametrize("fs", ["float8_e4m3", "float8_e5m2", "float8_e4m3fn"])
@pytest.mark.parametrize("fm", ["float8_e5m2", "float8_e4m3fn"])
def test_double_row_perf_mode(fs, fm, rng):
    if {fs, fm} == {"float8_e4m3", "float8_e4m3fn"}:
        pytest.skip("mixing is an error, tested below")
    s = T(rng.standard_normal((128, 2, 24)).astype(np.float32), fs)
    m = T(rng.standard_normal((128, 2, 40)).astype(np.float32), fm)
    d = empty((24, 40), "float32", nl.psum)
    nisa.nc_matmul(d, s, m, perf_mode=nisa.matmul_perf_mode.double_row, accumulate=False)
    w = ref.nki_matmul(ref.nki_to_f32(s.data, fs).reshape(256, 24),
                       ref.nki_to_f32(m.data, fm).reshape(256, 40), np.zeros((24, 40)))
    assert_bits(d.data, w)


def test_perf_mode_errors():
    s = empty((8, 2, 4), "bfloat16")
    m = empty((8, 2, 4), "float8_e5m2")
    d = empty((4, 4), "float32", nl.psum)
    dr = nisa.matmul_perf_mode.double_row
    with pytest.raises(ConstraintError, match="float8"):
        nisa.nc_matmul(d, s, m, perf_mode=dr)
    with pytest.raises(ConstraintError, match=r"\[K, 2, F\]"):
        nisa.nc_matmul(d, empty((8, 4), "float8_e5m2"), m, perf_mode=dr)
    with pytest.raises(ConstraintError, match="cannot be mixed"):
        nisa.nc_matmul(d, empty((8, 2, 4), "float8_e4m3"), empty((8, 2, 4), "float8_e4m3fn"),
                       perf_mode=dr)
    with pytest.raises(ConstraintError, match="column tiling"):
        nisa.nc_matmul(d, m, m, perf_mode=dr, tile_position=(0, 0), tile_size=(128, 64))
    with pytest.raises(ConstraintError, match="perf_mode must be"):
        nisa.nc_matmul(d, m, m, perf_mode="quad")
    with nl.use_target("trn1"):
        with pytest.raises(ConstraintError, match="NeuronCore-v3"):
            nisa.nc_matmul(d, m, m, perf_mode=dr)
    nisa.nc_matmul(empty((4, 4), "float32", nl.psum), empty((8, 4), "bfloat16"),
                   empty((8, 4), "bfloat16"), perf_mode=nisa.matmul_perf_mode.none)


# ---- MX: quantize_mx / nc_matmul_mx ----------------------------------------------------------
MX8 = ["float8_e5m2", "float8_e4m3fn"]


def mx_scale_tile(P, cols, scales, offset=0, fmt="float8_e8m0fnu"):
    """A [max(P, P//8 + offset), cols] scale tile with the groups' bytes at the quadrant rows."""
    rows = P if P > 32 else P // 8 + offset
    t = np.full((max(rows, 1) + offset, cols), 0xAB, np.uint8)
    t[[r + offset for r in ref.nki_mx_scale_rows(P)], :scales.shape[1]] = scales
    return T(t, "uint8").view(fmt)


@pytest.mark.parametrize("src_fmt", ["bfloat16", "float16"])
@pytest.mark.parametrize("elem", MX8)
@pytest.mark.parametrize("P", [32, 64, 128])
def test_quantize_mx_against_oracle(src_fmt, elem, P, rng):
    F = 48
    x = (rng.standard_normal((P, F)) * 10.0 ** rng.integers(-6, 5, (P, 1))).astype(np.float32)
    x[:8, :4] = 0                                   # an all-zero group
    x[8, 4] = np.inf                                # a non-finite group
    if src_fmt == "float16":
        x[16:24, 8:12] = 2.0 ** -20                 # float16 subnormals
    src = T(x, src_fmt)
    dst = empty((P, F // 4), elem + "_x4")
    sc = T(np.full((P, F // 4), 0xCD, np.uint8), "uint8").view("float8_e8m0fnu")
    with nl.use_target("trn3"):
        nisa.quantize_mx(dst, src, sc)
    wd, ws = ref.nki_mx_quantize(ref.nki_to_f32(src.data, src_fmt), elem)
    assert_bits(dst.data, wd)
    rows = ref.nki_mx_scale_rows(P)
    assert_bits(sc.data.view(np.uint8)[rows], ws)
    other = np.setdiff1d(np.arange(P), rows)
    assert (sc.data.view(np.uint8)[other] == 0xCD).all()      # untouched
    assert ws[0, 0] == 0 and ws[1, 1] == 255


@pytest.mark.slow
@pytest.mark.parametrize("src_fmt", ["bfloat16", "float16"])
@pytest.mark.parametrize("elem", MX8)
def test_quantize_mx_every_16bit_code(src_fmt, elem):
    codes = np.arange(65536, dtype=np.uint16).reshape(2048, 32)
    # each group of 32 codes: 8 partitions x 4 elements
    x = codes.reshape(64, 32, 8, 4).transpose(0, 2, 1, 3).reshape(512, 128)
    src = T(x.view(ml_dtypes.bfloat16 if src_fmt == "bfloat16" else np.float16), src_fmt)
    for c in range(0, 512, 128):
        part = src[c:c + 128]
        dst = empty((128, 32), elem + "_x4")
        sc = empty((128, 32), "uint8")
        with nl.use_target("trn3"):
            nisa.quantize_mx(dst, part, sc)
        wd, ws = ref.nki_mx_quantize(ref.nki_to_f32(part.data, src_fmt), elem)
        assert_bits(dst.data, wd)
        assert_bits(sc.data[ref.nki_mx_scale_rows(128)], ws)


def test_quantize_mx_scale_packing_offsets(rng):
    x = T(rng.standard_normal((128, 16)).astype(np.float32), "bfloat16")
    tile = T(np.zeros((128, 4), np.uint8), "uint8")
    with nl.use_target("trn3"):
        for off in (0, 4, 8, 12):
            nisa.quantize_mx(empty((128, 4), "float8_e4m3fn_x4"), x, tile[off:128])
    _, ws = ref.nki_mx_quantize(ref.nki_to_f32(x.data, "bfloat16"), "float8_e4m3fn")
    for off in (0, 4, 8, 12):
        assert_bits(tile.data[[r + off for r in ref.nki_mx_scale_rows(128)]], ws)


def test_quantize_mx_errors():
    src = empty((32, 16), "bfloat16")
    dst = empty((32, 4), "float8_e4m3fn_x4")
    sc = empty((4, 4), "uint8")
    with pytest.raises(ConstraintError, match="trn3"):
        nisa.quantize_mx(dst, src, sc)
    with nl.use_target("trn3"):
        nisa.quantize_mx(dst, src, sc)
        with pytest.raises(ConstraintError, match="bfloat16 or float16"):
            nisa.quantize_mx(dst, empty((32, 16), "float32"), sc)
        with pytest.raises(ConstraintError, match="float8_e5m2_x4 or float8_e4m3fn_x4"):
            nisa.quantize_mx(empty((32, 4), "float4_e2m1fn_x4"), src, sc)
        with pytest.raises(ConstraintError, match="multiple of 32"):
            nisa.quantize_mx(empty((16, 4), "float8_e4m3fn_x4"), empty((16, 16), "bfloat16"), sc)
        with pytest.raises(ConstraintError, match="multiple of 4"):
            nisa.quantize_mx(dst, empty((32, 18), "bfloat16"), sc)
        with pytest.raises(ConstraintError, match="dst must have shape"):
            nisa.quantize_mx(empty((32, 5), "float8_e4m3fn_x4"), src, sc)
        with pytest.raises(ConstraintError, match="at least 36 partitions"):
            nisa.quantize_mx(empty((64, 4), "float8_e4m3fn_x4"), empty((64, 16), "bfloat16"),
                             empty((32, 4), "uint8"))
        with pytest.raises(ConstraintError, match="float8_e8m0fnu or uint8"):
            nisa.quantize_mx(dst, src, empty((4, 4), "int8"))
        with pytest.raises(ConstraintError, match="0, 4, 8 or 12"):
            nisa.quantize_mx(dst, src, empty((16, 4), "uint8")[2:8])
        with pytest.raises(ConstraintError, match="sbuf"):
            nisa.quantize_mx(dst, empty((32, 16), "bfloat16", nl.psum), sc)


def _mx_operand(rng, elem, K, J):
    if elem == "float4_e2m1fn":
        x4 = rng.integers(0, 1 << 16, (K, J)).astype(np.uint16)
    else:
        x4 = rng.integers(0, 1 << 32, (K, J), dtype=np.uint64).astype(np.uint32)
        b = x4.view(np.uint8).reshape(K, J, 4)
        nan = (b & 0x7F) == (0x7F if elem == "float8_e4m3fn" else 0x7C)
        b[nan] &= 0xF0                                # mostly finite codes; a few NaN/inf stay
    scales = rng.integers(110, 140, (K // 8, J)).astype(np.uint8)
    return x4, scales


@pytest.mark.parametrize("se", ["float8_e5m2", "float8_e4m3fn", "float4_e2m1fn"])
@pytest.mark.parametrize("me", ["float8_e5m2", "float8_e4m3fn", "float4_e2m1fn"])
@pytest.mark.parametrize("dfmt", ["float32", "bfloat16"])
def test_nc_matmul_mx_against_oracle(se, me, dfmt, rng):
    K, M, N = 64, 16, 40
    s4, ss = _mx_operand(rng, se, K, M)
    m4, ms = _mx_operand(rng, me, K, N)
    ss[0, 0] = 255                                   # a NaN scale
    st = T(s4, se + "_x4")
    mv = T(m4, me + "_x4")
    d = empty((M, N), dfmt, nl.psum)
    with nl.use_target("trn3"):
        nisa.nc_matmul_mx(d, st, mv, mx_scale_tile(K, M + 3, ss), mx_scale_tile(K, N, ms, fmt="uint8"),
                          accumulate=False)
    w = ref.nki_matmul(ref.nki_mx_dequant(s4, se, ss), ref.nki_mx_dequant(m4, me, ms),
                       np.zeros((M, N), np.float32))
    assert_bits(d.data, ref.nki_round(w, dfmt), nan_either=np.ones((M, N), bool))


@settings(max_examples=20)
@given(K=st.sampled_from([32, 64, 96, 128]), M=st.integers(1, 64).map(lambda m: 2 * m),
       N=st.integers(1, 300), seed=st.integers(0, 2**31), chained=st.booleans())
def test_nc_matmul_mx_hypothesis_accumulate(K, M, N, seed, chained):
    rng = np.random.default_rng(seed)
    s4, ss = _mx_operand(rng, "float8_e4m3fn", K, M)
    m4, ms = _mx_operand(rng, "float8_e5m2", K, N)
    d = empty((M, N), "float32", nl.psum)
    args = (T(s4, "float8_e4m3fn_x4"), T(m4, "float8_e5m2_x4"), mx_scale_tile(K, M, ss),
            mx_scale_tile(K, N, ms))
    w = np.zeros((M, N), np.float32)
    sd, md = ref.nki_mx_dequant(s4, "float8_e4m3fn", ss), ref.nki_mx_dequant(m4, "float8_e5m2", ms)
    with nl.use_target("trn3"):
        nisa.nc_matmul_mx(d, *args, accumulate=False)
        w = ref.nki_matmul(sd, md, w)
        if chained:
            nisa.nc_matmul_mx(d, *args)                  # None: accumulates onto the group
            w = ref.nki_matmul(sd, md, w)
    assert_bits(d.data, w, nan_either=np.ones((M, N), bool))


def test_quantize_then_matmul_mx_roundtrip(rng):
    """quantize_mx output feeds nc_matmul_mx directly (the deep-dive's flow)."""
    a = T(rng.standard_normal((128, 64)).astype(np.float32), "bfloat16")
    b = T(rng.standard_normal((128, 256)).astype(np.float32), "bfloat16")
    qa, qb = empty((128, 16), "float8_e4m3fn_x4"), empty((128, 64), "float8_e4m3fn_x4")
    sa, sb = empty((128, 16), "float8_e8m0fnu"), empty((128, 64), "float8_e8m0fnu")
    d = empty((16, 64), "float32", nl.psum)
    with nl.use_target("trn3"):
        nisa.quantize_mx(qa, a, sa)
        nisa.quantize_mx(qb, b, sb)
        nisa.nc_matmul_mx(d, qa, qb, sa, sb, accumulate=False)
    af = ref.nki_to_f32(a.data, "bfloat16").reshape(128, 16, 4).transpose(0, 2, 1).reshape(512, 16)
    bf = ref.nki_to_f32(b.data, "bfloat16").reshape(128, 64, 4).transpose(0, 2, 1).reshape(512, 64)
    exact = af.astype(np.float64).T @ bf.astype(np.float64)
    bound = np.abs(af).astype(np.float64).T @ np.abs(bf).astype(np.float64)
    assert (np.abs(d.data - exact) <= 0.13 * bound).all()     # e4m3fn: <= 2^-4 per element


def test_nc_matmul_mx_errors():
    st = empty((32, 8), "float8_e4m3fn_x4")
    mv = empty((32, 16), "float8_e5m2_x4")
    ss, ms = empty((4, 8), "uint8"), empty((4, 16), "uint8")
    d = empty((8, 16), "float32", nl.psum)
    with pytest.raises(ConstraintError, match="trn3"):
        nisa.nc_matmul_mx(d, st, mv, ss, ms)
    with nl.use_target("trn3"):
        nisa.nc_matmul_mx(d, st, mv, ss, ms, accumulate=False)
        with pytest.raises(ConstraintError, match="dtype must be float8_e5m2_x4"):
            nisa.nc_matmul_mx(d, empty((32, 8), "bfloat16"), mv, ss, ms)
        with pytest.raises(ConstraintError, match="multiple of 32"):
            nisa.nc_matmul_mx(d, empty((16, 8), "float8_e4m3fn_x4"),
                              empty((16, 16), "float8_e5m2_x4"), ss, ms)
        with pytest.raises(ConstraintError, match="even"):
            nisa.nc_matmul_mx(empty((7, 16), "float32", nl.psum),
                              empty((32, 7), "float8_e4m3fn_x4"), mv, ss, ms)
        with pytest.raises(ConstraintError, match="<= 4096"):
            nisa.nc_matmul_mx(empty((8, 4100), "float32", nl.psum), st,
                              empty((32, 4100), "float8_e5m2_x4"), ss, empty((4, 4100), "uint8"))
        with pytest.raises(ConstraintError, match="at least 16 elements"):
            nisa.nc_matmul_mx(d, st, mv, ss, empty((4, 8), "uint8"))
        with pytest.raises(ConstraintError, match="psum"):
            nisa.nc_matmul_mx(empty((8, 16), "float32"), st, mv, ss, ms)
        with pytest.raises(ConstraintError, match="row tiling"):
            nisa.nc_matmul_mx(d, st, mv, ss, ms, tile_position=(0, 0), tile_size=(32, 64))
        with pytest.raises(ConstraintError, match="both be set"):
            nisa.nc_matmul_mx(d, st, mv, ss, ms, tile_position=(0, 0))
        nisa.nc_matmul_mx(d, st, mv, ss, ms, tile_position=(32, 0), tile_size=(32, 128))
