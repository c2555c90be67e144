"""PTO instructions against the numpy oracles in tests/reference.py (bit-exact where the
semantics are exact; transcendentals within 1 ULP of float64 numpy rounded once)."""

from __future__ import annotations

import itertools

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import reference as ref
from fastisa import pto
from fastisa.errors import ConstraintError
from pto_helpers import (CM, NPDT, RM, V, assert_bits, assert_ulp, bits, check_dst, rand,
                         tile)

#: ULP bound for exp/log/rsqrt: numpy's float64 exp/log may differ from glibc's in the last
#: double bit, which can move the rounded result by at most one ULP of T.
TRANSCENDENTAL_ULP = 1


@pytest.fixture(autouse=True)
def _default_target():
    pto.set_target("A2A3")
    pto.set_debug(False)
    yield
    pto.set_target("A2A3")
    pto.set_debug(False)


def all_f16_codes():
    return np.arange(65536, dtype=np.uint32).astype(np.uint16).view(np.float16).reshape(256, 256)


def all_bf16_codes():
    return np.arange(65536, dtype=np.uint32).astype(np.uint16).view(ml_dtypes.bfloat16).reshape(256, 256)


# ---- spec 003: TRECIP -------------------------------------------------------------------
def test_spec003_trecip_example():
    """Spec 003's example: Tile<TileType::Vec, float, 16, 16>; TRECIP(out, x) and
    TRECIP<RecipAlgorithm::HIGH_PRECISION>(out, x)."""
    rng = np.random.default_rng(3)
    x = pto.Tile(pto.TileType.Vec, np.float32, 16, 16)
    out = pto.Tile(pto.TileType.Vec, np.float32, 16, 16)
    x.data[...] = rng.uniform(0.5, 8.0, (16, 16)).astype(np.float32)
    pto.TRECIP(out, x)
    assert_bits(out.data, (np.float32(1) / x.data).astype(np.float32), "DEFAULT")
    out.fill(0)
    pto.TRECIP(out, x, precision=pto.RecipAlgorithm.HIGH_PRECISION)
    assert_bits(out.data, (np.float32(1) / x.data).astype(np.float32), "HIGH_PRECISION")
    pto.set_target("A5")
    out2 = pto.Tile(pto.TileType.Vec, np.float32, 16, 16)
    pto.TRECIP(out2, x, precision=pto.RecipAlgorithm.HIGH_PRECISION)
    assert_bits(out2.data, out.data, "A5")


@pytest.mark.parametrize("dtype", ["float32", "float16", "int32", "int16"])
@pytest.mark.parametrize("shape,valid", [((16, 16), None), ((64, 64), (37, 50)),
                                         ((32, 32), (1, 1)), ((16, 256), (16, 200))])
def test_trecip_dtypes_valid(dtype, shape, valid, rng):
    R, C = shape
    cols = C if (C * NPDT[dtype].itemsize) % 32 == 0 else C
    vr, vc = valid if valid else (None, None)
    src = tile(dtype, R, cols, vr=vr, vc=vc, rng=rng)
    if NPDT[dtype].kind == "i":
        src.data[...] = rng.integers(1, 10, (R, cols)) * rng.choice([-1, 1], (R, cols))
    dst = tile(dtype, R, cols, vr=vr, vc=vc, rng=rng)
    before = dst.data.copy()
    pto.TRECIP(dst, src)
    check_dst(dst, before, ref.pto_unary("RECIP", src.valid), f"TRECIP {dtype}")


def test_trecip_f16_every_code():
    src = tile("float16", 256, 256)
    src.data[...] = all_f16_codes()
    dst = tile("float16", 256, 256)
    pto.TRECIP(dst, src)
    assert_bits(dst.data, ref.pto_unary("RECIP", src.data), "TRECIP every f16 code")


def test_trecip_int16_every_nonzero_code():
    v = np.arange(-32768, 32768, dtype=np.int32).astype(np.int16)
    v = v[v != 0]
    src = tile("int16", 65535 // 5 + 1, 16)
    src.data.reshape(-1)[: v.size] = v
    src.data.reshape(-1)[v.size:] = 7
    dst = tile("int16", src.rows, 16)
    pto.TRECIP(dst, src)
    want = np.where(np.abs(src.data.astype(np.int64)) == 1, src.data, 0).astype(np.int16)
    assert_bits(dst.data, want, "TRECIP int16")


def test_trecip_dynamic_valid(rng):
    src = tile("float32", 32, 32, vr=pto.DYNAMIC, vc=pto.DYNAMIC, rng=rng)
    dst = tile("float32", 32, 32, vr=pto.DYNAMIC, vc=pto.DYNAMIC, rng=rng)
    for r, c in [(5, 7), (32, 32), (0, 3), (17, 1)]:
        src.set_valid_row(r), src.set_valid_col(c)
        dst.set_valid_row(r), dst.set_valid_col(c)
        before = dst.data.copy()
        pto.TRECIP(dst, src)
        check_dst(dst, before, ref.pto_unary("RECIP", src.valid), f"dynamic {r}x{c}")


def test_trecip_same_memory_allowed_on_a5(rng):
    pto.set_target("A5")
    t = tile("float32", 16, 16, rng=rng)
    want = ref.pto_unary("RECIP", t.data)
    pto.TRECIP(t, t)
    assert_bits(t.data, want)


def test_trecip_zero_ieee_and_debug():
    src = tile("float32", 8, 8)
    src.data[...] = 2.0
    src.data[0, 0] = 0.0
    src.data[0, 1] = -0.0
    dst = tile("float32", 8, 8)
    pto.TRECIP(dst, src)
    assert dst.data[0, 0] == np.inf and dst.data[0, 1] == -np.inf
    pto.set_debug(True)
    with pytest.raises(ConstraintError, match="TRECIP: src must be nonzero"):
        pto.TRECIP(dst, src)


# ---- spec 004: TROWEXPANDEXPDIF ---------------------------------------------------------
def _rowvec(dtype, R, mode, rng, rows=None):
    """Mode 1: ColMajor [R, 1] (rows padded to 32 bytes); mode 2: RowMajor [R, 32/sizeof]."""
    isz = NPDT[dtype].itemsize
    if mode == 1:
        rows = rows or max(1, -(-R * isz // 32)) * (32 // isz)
        return tile(dtype, rows, 1, layout=CM, vr=R, vc=1, rng=rng)
    w = 32 // isz
    return tile(dtype, rows or R, w, layout=RM, vr=R, vc=w, rng=rng)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("mode", [1, 2])
@pytest.mark.parametrize("shape,valid", [((16, 16), None), ((32, 32), (16, 16)),
                                         ((1, 1024), None), ((64, 64), (61, 45)),
                                         ((32, 128), (0, 128))])
def test_trowexpandexpdif(dtype, mode, shape, valid, rng):
    R, C = shape
    vr, vc = valid if valid else (R, C)
    src0 = tile(dtype, R, C, vr=vr, vc=vc, rng=rng)
    src1 = _rowvec(dtype, vr, mode, rng, rows=R if mode == 2 else None)
    dst = tile(dtype, R, C, vr=vr, vc=vc, rng=rng)
    before = dst.data.copy()
    pto.TROWEXPANDEXPDIF(dst, src0, src1)
    s = ref.pto_expand_cols(src1.valid, vc)
    want = ref.pto_binary("EXPDIF", src0.valid, s)
    check_dst(dst, before, want, f"EXPDIF mode {mode}", ulp=TRANSCENDENTAL_ULP)


def test_trowexpandexpdif_mode2_reads_j_mod_block(rng):
    """Mode 2: element j of row i reads src1[i, j % (32 / sizeof T)]."""
    src0 = tile("float32", 4, 32)
    src0.data[...] = 1.0
    src1 = tile("float32", 4, 8)
    src1.data[...] = np.arange(32, dtype=np.float32).reshape(4, 8) / 8
    dst = tile("float32", 4, 32)
    pto.TROWEXPANDEXPDIF(dst, src0, src1)
    j = np.arange(32) % 8
    want = np.exp(1.0 - src1.data[:, j].astype(np.float64)).astype(np.float32)
    assert_ulp(dst.data, want, TRANSCENDENTAL_ULP)


def test_trowexpandexpdif_f16_every_code():
    """Every f16 code as src0 against a per-row scalar: the difference is rounded to f16,
    then exp in float64 is rounded once."""
    src0 = tile("float16", 256, 256)
    src0.data[...] = all_f16_codes()
    src1 = tile("float16", 256, 1, layout=CM)
    src1.data[:, 0] = np.linspace(-3, 3, 256).astype(np.float16)
    dst = tile("float16", 256, 256)
    pto.TROWEXPANDEXPDIF(dst, src0, src1)
    want = ref.pto_binary("EXPDIF", src0.data, src1.data)
    assert_ulp(dst.data, want, TRANSCENDENTAL_ULP, "EXPDIF f16")


@pytest.mark.parametrize("R,need", [(1, 256), (8, 256), (9, 512), (255, 8192), (256, 7680),
                                    (2048, 7680)])
def test_expdif_tmp_bytes(R, need):
    assert pto.expdif_tmp_bytes(R) == need if R < 256 else pto.expdif_tmp_bytes(R) == 7680
    assert pto.expdif_tmp_bytes(R) == (-(-R // 8) * 256 if R < 256 else 7680)


@pytest.mark.parametrize("target", ["A2A3", "A5"])
def test_trowexpandexpdif_tmp(target, rng):
    pto.set_target(target)
    R, C = 16, 64
    src0 = tile("float32", R, C, rng=rng)
    src1 = _rowvec("float32", R, 1, rng)
    dst = tile("float32", R, C)
    ok_tmp = tile("float32", 1, 128)          # 512 bytes >= ceil(16/8)*256
    pto.TROWEXPANDEXPDIF(dst, src0, src1, tmp=ok_tmp)
    want = ref.pto_binary("EXPDIF", src0.data, src1.data)
    assert_ulp(dst.data, want, TRANSCENDENTAL_ULP)
    small = tile("float32", 1, 64)             # 256 bytes < 512
    if target == "A2A3":
        with pytest.raises(ValueError, match=r"TROWEXPANDEXPDIF: tmp size must be >= 512 bytes"):
            pto.TROWEXPANDEXPDIF(dst, src0, src1, tmp=small)
    else:
        pto.TROWEXPANDEXPDIF(dst, src0, src1, tmp=small)   # accepted and unused on A5
    with pytest.raises(ValueError, match="only mode 1"):
        pto.TROWEXPANDEXPDIF(dst, src0, _rowvec("float32", R, 2, rng), tmp=ok_tmp)


def test_trowexpandexpdif_tmp_large_r(rng):
    R, C = 256, 16
    src0 = tile("float32", R, C, rng=rng)
    src1 = _rowvec("float32", R, 1, rng)
    dst = tile("float32", R, C)
    pto.TROWEXPANDEXPDIF(dst, src0, src1, tmp=tile("float32", 8, 240))   # 7680 bytes
    with pytest.raises(ValueError, match="7680"):
        pto.TROWEXPANDEXPDIF(dst, src0, src1, tmp=tile("float32", 8, 232))


# ---- elementwise unary -------------------------------------------------------------------
@pytest.mark.parametrize("instr,op,dtypes", [
    ("TEXP", "EXP", ("float32", "float16")), ("TLOG", "LOG", ("float32", "float16")),
    ("TSQRT", "SQRT", ("float32", "float16")), ("TRSQRT", "RSQRT", ("float32", "float16")),
    ("TABS", "ABS", ("float32", "float16", "bfloat16", "int32", "int16", "int8")),
    ("TNEG", "NEG", ("float32", "float16", "bfloat16", "int32", "int16", "int8")),
    ("TRELU", "RELU", ("float32", "float16", "bfloat16", "int32", "int16", "int8")),
])
@pytest.mark.parametrize("layout", [RM, CM])
def test_unary(instr, op, dtypes, layout, rng):
    fn = getattr(pto, instr)
    ulp = TRANSCENDENTAL_ULP if op in ("EXP", "LOG", "RSQRT") else 0
    for dtype in dtypes:
        if instr == "TEXP" and layout == CM:
            continue  # TEXP needs row-major
        src = tile(dtype, 64, 64, layout=layout, vr=41, vc=63, rng=rng)
        if op in ("LOG", "SQRT", "RSQRT"):
            src.data[...] = np.abs(src.data.astype(np.float32)).astype(src.dtype)
        dst = tile(dtype, 64, 64, layout=layout, vr=41, vc=63, rng=rng)
        before = dst.data.copy()
        fn(dst, src)
        check_dst(dst, before, ref.pto_unary(op, src.valid), f"{instr} {dtype}", ulp=ulp)


@pytest.mark.parametrize("instr,op", [("TEXP", "EXP"), ("TLOG", "LOG"), ("TSQRT", "SQRT"),
                                      ("TRSQRT", "RSQRT"), ("TABS", "ABS"), ("TNEG", "NEG"),
                                      ("TRELU", "RELU")])
def test_unary_f16_every_code(instr, op):
    src = tile("float16", 256, 256)
    src.data[...] = all_f16_codes()
    dst = tile("float16", 256, 256)
    getattr(pto, instr)(dst, src)
    ulp = TRANSCENDENTAL_ULP if op in ("EXP", "LOG", "RSQRT") else 0
    if ulp:
        assert_ulp(dst.data, ref.pto_unary(op, src.data), ulp, instr)
    else:
        assert_bits(dst.data, ref.pto_unary(op, src.data), instr)


@pytest.mark.parametrize("instr,op", [("TABS", "ABS"), ("TNEG", "NEG"), ("TRELU", "RELU")])
def test_unary_bf16_every_code(instr, op):
    src = tile("bfloat16", 256, 256)
    src.data[...] = all_bf16_codes()
    dst = tile("bfloat16", 256, 256)
    getattr(pto, instr)(dst, src)
    assert_bits(dst.data, ref.pto_unary(op, src.data), instr)


def test_texp_f32_bit_exact_mostly(rng):
    """exp in float64 rounded once: bit-exact against numpy except (rarely) 1 ULP."""
    src = tile("float32", 128, 128, rng=rng)
    dst = tile("float32", 128, 128)
    pto.TEXP(dst, src)
    want = ref.pto_unary("EXP", src.data)
    assert_ulp(dst.data, want, 1)
    assert np.mean(bits(dst.data) == bits(want)) > 0.999


# ---- elementwise binary ------------------------------------------------------------------
BIN = [("TADD", "ADD"), ("TSUB", "SUB"), ("TMUL", "MUL"), ("TDIV", "DIV"), ("TMAX", "MAX"),
       ("TMIN", "MIN")]
ALL_DT = ("float32", "float16", "bfloat16", "int32", "int16", "int8", "uint8", "uint16", "uint32")


@pytest.mark.parametrize("instr,op", BIN)
@pytest.mark.parametrize("dtype", ALL_DT)
def test_binary(instr, op, dtype, rng):
    a = tile(dtype, 32, 64, vr=29, vc=60, rng=rng)
    b = tile(dtype, 64, 64, layout=CM, vr=29, vc=60, rng=rng)
    if op == "DIV" and NPDT[dtype].kind in "iu":
        b.data[b.data == 0] = 3
    dst = tile(dtype, 32, 64, vr=29, vc=60, rng=rng)
    before = dst.data.copy()
    getattr(pto, instr)(dst, a, b)
    check_dst(dst, before, ref.pto_binary(op, a.valid, b.valid), f"{instr} {dtype}")


@pytest.mark.parametrize("instr,op", BIN)
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_binary_16bit_every_code(instr, op, dtype, rng):
    codes = all_f16_codes() if dtype == "float16" else all_bf16_codes()
    a = tile(dtype, 256, 256)
    a.data[...] = codes
    b = tile(dtype, 256, 256, rng=rng)
    b.data[::7] = codes[::-1][::7]
    dst = tile(dtype, 256, 256)
    getattr(pto, instr)(dst, a, b)
    assert_bits(dst.data, ref.pto_binary(op, a.data, b.data), instr)
    getattr(pto, instr)(dst, b, a)
    assert_bits(dst.data, ref.pto_binary(op, b.data, a.data), instr + " swapped")


def test_binary_in_place(rng):
    a = tile("float32", 16, 16, rng=rng)
    b = tile("float32", 16, 16, rng=rng)
    want = ref.pto_binary("ADD", a.data, b.data)
    pto.TADD(a, a, b)
    assert_bits(a.data, want)


def test_binary_int_wraps_and_truncates():
    a = tile("int32", 1, 8)
    b = tile("int32", 1, 8)
    a.data[0] = [2**31 - 1, -2**31, 7, -7, 7, -7, -2**31, 5]
    b.data[0] = [1, -1, 2, 2, -2, -2, -1, 0x7FFFFFFF]
    d = tile("int32", 1, 8)
    pto.TADD(d, a, b)
    assert d.data[0, 0] == -2**31
    pto.TDIV(d, a, b)
    assert list(d.data[0, 2:6]) == [3, -3, -3, 3]
    assert d.data[0, 6] == -2**31          # INT_MIN / -1 wraps, never traps


@settings(max_examples=25)
@given(st.integers(1, 40), st.integers(1, 40), st.integers(0, 40), st.integers(0, 40),
       st.sampled_from(["float32", "float16", "int16"]), st.sampled_from(BIN),
       st.booleans(), st.integers(0, 2**32 - 1))
def test_binary_hypothesis(rows, cb, vr, vc, dtype, instr_op, colmajor, seed):
    rng = np.random.default_rng(seed)
    isz = NPDT[dtype].itemsize
    per = 32 // isz
    cols = -(-cb // per) * per
    rows_cm = -(-rows // per) * per
    layout = CM if colmajor else RM
    R = rows_cm if colmajor else rows
    vr, vc = min(vr, R), min(vc, cols)
    instr, op = instr_op
    a = tile(dtype, R, cols, layout=layout, vr=vr, vc=vc, rng=rng)
    b = tile(dtype, R, cols, layout=layout, vr=vr, vc=vc, rng=rng)
    if op == "DIV" and dtype == "int16":
        b.data[b.data == 0] = 1
    d = tile(dtype, R, cols, layout=layout, vr=vr, vc=vc, rng=rng)
    before = d.data.copy()
    getattr(pto, instr)(d, a, b)
    check_dst(d, before, ref.pto_binary(op, a.valid, b.valid), instr)


# ---- tile / scalar ----------------------------------------------------------------------
SCAL = [("TADDS", "ADD"), ("TSUBS", "SUB"), ("TMULS", "MUL"), ("TDIVS", "DIV"),
        ("TMAXS", "MAX"), ("TMINS", "MIN")]


@pytest.mark.parametrize("instr,op", SCAL)
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "int32", "int16"])
def test_tile_scalar(instr, op, dtype, rng):
    src = tile(dtype, 32, 32, vr=31, vc=17, rng=rng)
    dst = tile(dtype, 32, 32, vr=31, vc=17, rng=rng)
    scalar = 3 if NPDT[dtype].kind == "i" else 0.3
    s = np.array([scalar]).astype(np.float64).astype(NPDT[dtype]) if NPDT[dtype].kind != "i" \
        else np.array([scalar], dtype=NPDT[dtype])
    if dtype == "bfloat16":
        s = np.array([np.float32(scalar)]).astype(NPDT[dtype])
    before = dst.data.copy()
    getattr(pto, instr)(dst, src, scalar)
    check_dst(dst, before, ref.pto_binary(op, src.valid, s), f"{instr} {dtype}")


@pytest.mark.parametrize("dtype", ["float32", "float16", "int32", "int16"])
def test_tdivs_scalar_over_tile(dtype, rng):
    src = tile(dtype, 16, 32, vr=15, vc=31, rng=rng)
    if NPDT[dtype].kind == "i":
        src.data[src.data == 0] = 1
    dst = tile(dtype, 16, 32, vr=15, vc=31, rng=rng)
    before = dst.data.copy()
    pto.TDIVS(dst, 5, src)
    s = np.array([5], dtype=NPDT[dtype])
    check_dst(dst, before, ref.pto_binary("DIV", s, src.valid), "scalar/tile")
    pto.TDIVS(dst, src, 5)
    check_dst(dst, before, ref.pto_binary("DIV", src.valid, s), "tile/scalar")


def test_texpands(rng):
    dst = tile("float16", 16, 32, vr=9, vc=30, rng=rng)
    before = dst.data.copy()
    pto.TEXPANDS(dst, 1.0 / 3)
    check_dst(dst, before, np.full((9, 30), 1.0 / 3).astype(np.float16))


@pytest.mark.parametrize("mode", ["RINT", "ROUND", "FLOOR", "CEIL", "TRUNC", "ODD"])
@pytest.mark.parametrize("ddt", ["float32", "float16", "int16", "int8"])
def test_tcvt_from_every_bf16_code(mode, ddt):
    src = tile("bfloat16", 256, 256)
    src.data[...] = all_bf16_codes()
    dst = tile(ddt, 256, 256)
    pto.TCVT(dst, src, mode)
    assert_bits(dst.data, ref.pto_cvt(src.data, NPDT[ddt], mode), f"bf16->{ddt} {mode}")


def test_bf16_scalar_rounds_once_from_double():
    src = tile("bfloat16", 1, 16)
    src.data[...] = 0
    dst = tile("bfloat16", 1, 16)
    v = 1.0 + 2.0**-8 + 2.0**-30          # just above the bf16 midpoint 1 + 2^-8
    pto.TADDS(dst, src, v)
    assert float(dst.data[0, 0]) == 1.0 + 2.0**-7


def test_scalar_rounds_to_tile_dtype():
    src = tile("float16", 1, 16)
    src.data[...] = 0
    dst = tile("float16", 1, 16)
    pto.TADDS(dst, src, 1.0 + 2.0**-11 + 2.0**-30)   # rounds up to 1 + 2^-10 in f16
    assert dst.data[0, 0] == np.float16(1 + 2.0**-10)


# ---- reductions -------------------------------------------------------------------------
SUM_PAIRS = [("float16", "float16"), ("bfloat16", "bfloat16"), ("float16", "float32"),
             ("bfloat16", "float32"), ("float32", "float32"), ("int16", "int16"),
             ("int16", "int32"), ("int32", "int32")]


@pytest.mark.parametrize("sdt,ddt", SUM_PAIRS)
@pytest.mark.parametrize("valid", [(64, 64), (33, 47), (1, 1)])
def test_trowsum(sdt, ddt, valid, rng):
    src = tile(sdt, 64, 64, vr=valid[0], vc=valid[1], rng=rng)
    isz = NPDT[ddt].itemsize
    dst = tile(ddt, -(-64 * isz // 32) * 32 // isz, 1, layout=CM, vr=valid[0], vc=1, rng=rng)
    before = dst.data.copy()
    pto.TROWSUM(dst, src)
    check_dst(dst, before, ref.pto_row_reduce("SUM", src.valid, NPDT[ddt]), f"{sdt}->{ddt}")


def test_trowsum_left_to_right_in_float32():
    """1 + 2^-11 * 2048 in f16: accumulated in float32 (exact 2.0), not in half (stays 1)."""
    src = tile("float16", 1, 2064)
    src.data[0, 0] = 1.0
    src.data[0, 1:2049] = 2.0**-11
    src.data[0, 2049:] = 0
    dst = tile("float16", 16, 1, layout=CM, vr=1)
    pto.TROWSUM(dst, src)
    assert dst.data[0, 0] == np.float16(2.0)


@pytest.mark.parametrize("instr,op", [("TROWMAX", "MAX"), ("TROWMIN", "MIN")])
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "int32", "int16", "int8",
                                   "uint8"])
def test_trowmax_min(instr, op, dtype, rng):
    src = tile(dtype, 64, 64, vr=50, vc=61, rng=rng)
    # row-major legacy ND destination with valid_col == 1
    dst = tile(dtype, 64, 32 // NPDT[dtype].itemsize, vr=50, vc=1, rng=rng)
    before = dst.data.copy()
    getattr(pto, instr)(dst, src, tile(dtype, 64, 64))
    check_dst(dst, before, ref.pto_row_reduce(op, src.valid), instr)


@pytest.mark.parametrize("instr,op", [("TCOLMAX", "MAX"), ("TCOLMIN", "MIN"), ("TCOLSUM", "SUM")])
@pytest.mark.parametrize("dtype", ["float32", "float16", "int32", "int16"])
def test_col_reduce(instr, op, dtype, rng):
    src = tile(dtype, 48, 64, layout=CM if dtype == "float32" else RM, vr=45, vc=50, rng=rng)
    dst = tile(dtype, 1, 64, vr=1, vc=50, rng=rng)
    before = dst.data.copy()
    getattr(pto, instr)(dst, src)
    check_dst(dst, before, ref.pto_col_reduce(op, src.valid), instr)


def test_edge_tiles_77x81_in_32x16(rng):
    """f32 77 x 81 GM data walked in 32 x 16 tiles with dynamic valid regions (edge tiles
    are 13 rows and/or 1 column): TLOAD, TROWMAX, TROWSUM, TSTORE per tile."""
    gm = rng.standard_normal((77, 81)).astype(np.float32)
    flat = gm.reshape(-1)
    nb = -(-81 // 16)
    out_max = np.zeros((77, nb), np.float32)
    out_sum = np.zeros((77, nb), np.float32)
    x = pto.Tile(pto.TileType.Vec, "float32", 32, 16, valid_row=pto.DYNAMIC, valid_col=pto.DYNAMIC)
    m = pto.Tile(pto.TileType.Vec, "float32", 32, 1, blayout=CM, valid_row=pto.DYNAMIC, valid_col=1)
    s = pto.Tile(pto.TileType.Vec, "float32", 32, 1, blayout=CM, valid_row=pto.DYNAMIC, valid_col=1)
    for r0 in range(0, 77, 32):
        for bi, c0 in enumerate(range(0, 81, 16)):
            vr, vc = min(32, 77 - r0), min(16, 81 - c0)
            x.set_valid_row(vr), x.set_valid_col(vc)
            m.set_valid_row(vr), s.set_valid_row(vr)
            pto.TLOAD(x, pto.GlobalTensor(flat[r0 * 81 + c0:], shape=(vr, vc), strides=(81, 1)))
            pto.TROWMAX(m, x)
            pto.TROWSUM(s, x)
            om = out_max.reshape(-1)[r0 * nb + bi:]
            pto.TSTORE(pto.GlobalTensor(om, shape=(vr, 1), strides=(nb, 1)), m)
            os_ = out_sum.reshape(-1)[r0 * nb + bi:]
            pto.TSTORE(pto.GlobalTensor(os_, shape=(vr, 1), strides=(nb, 1)), s)
    for bi, c0 in enumerate(range(0, 81, 16)):
        blk = gm[:, c0:c0 + 16]
        assert_bits(out_max[:, bi:bi + 1], ref.pto_row_reduce("MAX", blk), f"max block {bi}")
        assert_bits(out_sum[:, bi:bi + 1], ref.pto_row_reduce("SUM", blk), f"sum block {bi}")


# ---- row / column expand -----------------------------------------------------------------
REXP = [("TROWEXPANDADD", "ADD"), ("TROWEXPANDSUB", "SUB"), ("TROWEXPANDMUL", "MUL"),
        ("TROWEXPANDDIV", "DIV"), ("TROWEXPANDMAX", "MAX"), ("TROWEXPANDMIN", "MIN")]


@pytest.mark.parametrize("instr,op", REXP)
@pytest.mark.parametrize("dtype", ["float32", "float16", "int32", "int16", "uint16", "uint32"])
@pytest.mark.parametrize("mode", [1, 2])
@pytest.mark.parametrize("row_first", [False, True])
def test_row_expand_ops(instr, op, dtype, mode, row_first, rng):
    R, C, vr, vc = 32, 64, 29, 57
    full = tile(dtype, R, C, vr=vr, vc=vc, rng=rng)
    row = _rowvec(dtype, vr, mode, rng)
    if op == "DIV":
        row.data[row.data == 0] = 1
        full.data[full.data == 0] = 1
    dst = tile(dtype, R, C, vr=vr, vc=vc, rng=rng)
    before = dst.data.copy()
    s = ref.pto_expand_cols(row.valid, vc)
    if row_first:
        getattr(pto, instr)(dst, row, full)
        want = ref.pto_binary(op, s, full.valid)
    else:
        getattr(pto, instr)(dst, full, row)
        want = ref.pto_binary(op, full.valid, s)
    check_dst(dst, before, want, f"{instr} {dtype} mode {mode} row_first={row_first}")


def test_row_expand_sub_keeps_operand_order():
    full = tile("float32", 2, 8)
    full.data[...] = 10
    row = tile("float32", 8, 1, layout=CM, vr=2)
    row.data[:2, 0] = [1, 2]
    d = tile("float32", 2, 8)
    pto.TROWEXPANDSUB(d, full, row)
    assert (d.data[0] == 9).all() and (d.data[1] == 8).all()
    pto.TROWEXPANDSUB(d, row, full)
    assert (d.data[0] == -9).all() and (d.data[1] == -8).all()


def test_trowexpand(rng):
    src = tile("float16", 32, 1, layout=CM, vr=20, rng=rng)
    dst = tile("float16", 32, 64, vr=20, vc=33, rng=rng)
    before = dst.data.copy()
    pto.TROWEXPAND(dst, src)
    check_dst(dst, before, np.repeat(src.valid[:, :1], 33, axis=1))


def test_tcolexpand(rng):
    src = tile("float32", 1, 64, vc=40, rng=rng)
    dst = tile("float32", 16, 64, vr=11, vc=40, rng=rng)
    before = dst.data.copy()
    pto.TCOLEXPAND(dst, src)
    check_dst(dst, before, np.repeat(src.valid, 11, axis=0))


CEXP = [("TCOLEXPANDADD", "ADD"), ("TCOLEXPANDSUB", "SUB"), ("TCOLEXPANDMUL", "MUL"),
        ("TCOLEXPANDDIV", "DIV"), ("TCOLEXPANDMAX", "MAX"), ("TCOLEXPANDMIN", "MIN"),
        ("TCOLEXPANDEXPDIF", "EXPDIF")]


@pytest.mark.parametrize("instr,op", CEXP)
@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("col_first", [False, True])
def test_col_expand_ops(instr, op, dtype, col_first, rng):
    full = tile(dtype, 32, 64, vr=30, vc=50, rng=rng)
    col = tile(dtype, 1, 64, vc=50, rng=rng)
    dst = tile(dtype, 32, 64, vr=30, vc=50, rng=rng)
    before = dst.data.copy()
    cv = np.repeat(col.valid, 30, axis=0)
    if col_first:
        getattr(pto, instr)(dst, col, full)
        want = ref.pto_binary(op, cv, full.valid)
    else:
        getattr(pto, instr)(dst, full, col)
        want = ref.pto_binary(op, full.valid, cv)
    check_dst(dst, before, want, instr, ulp=TRANSCENDENTAL_ULP if op == "EXPDIF" else 0)


# ---- TCVT -------------------------------------------------------------------------------
MODES = ["NONE", "RINT", "ROUND", "FLOOR", "CEIL", "TRUNC", "ODD"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("ddt", ["float32", "bfloat16", "int32", "int16", "int8", "uint8"])
def test_tcvt_from_every_f16_code(mode, ddt):
    src = tile("float16", 256, 256)
    src.data[...] = all_f16_codes()
    dst = tile(ddt, 256, 256)
    pto.TCVT(dst, src, pto.RoundMode.from_name(mode))
    assert_bits(dst.data, ref.pto_cvt(src.data, NPDT[ddt], mode), f"f16->{ddt} {mode}")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("ddt", ["float16", "bfloat16", "int32", "int16", "int8", "uint8"])
def test_tcvt_from_f32(mode, ddt, rng):
    x = np.concatenate([
        (rng.standard_normal(4096) * 10.0 ** rng.integers(-8, 8, 4096)).astype(np.float32),
        np.array([0.5, 1.5, 2.5, -0.5, -2.5, 65504, 65519.99, 65520, 70000, -70000, 1e-8,
                  -1e-8, 5.96e-8, 3e38, np.inf, -np.inf, np.nan, 0.0, -0.0, 2**31, -2**31 - 512,
                  127.5, 255.5, -128.5, 32767.5] + [0] * 7, np.float32)])
    src = tile("float32", x.size // 32, 32)
    src.data[...] = x.reshape(-1, 32)
    dst = tile(ddt, x.size // 32, 32)
    pto.TCVT(dst, src, mode)
    assert_bits(dst.data, ref.pto_cvt(src.data, NPDT[ddt], mode), f"f32->{ddt} {mode}")


@pytest.mark.parametrize("mode", MODES)
def test_tcvt_int32_to_f32_and_f16(mode, rng):
    src = tile("int32", 64, 64)
    src.data[...] = rng.integers(-2**31, 2**31 - 1, (64, 64), endpoint=True)
    src.data[0, :8] = [2**24 + 1, 2**24 + 3, -(2**24 + 1), 65519, 65520, 70000, 0, -1]
    for ddt in ("float32", "float16", "bfloat16", "int16", "uint8"):
        dst = tile(ddt, 64, 64)
        pto.TCVT(dst, src, mode)
        assert_bits(dst.data, ref.pto_cvt(src.data, NPDT[ddt], mode), f"i32->{ddt} {mode}")


def test_tcvt_valid_region_and_layout(rng):
    src = tile("float32", 32, 32, layout=CM, vr=20, vc=9, rng=rng)
    dst = tile("float16", 32, 32, vr=20, vc=9, rng=rng)
    before = dst.data.copy()
    pto.TCVT(dst, src, pto.RoundMode.CAST_RINT)
    check_dst(dst, before, src.valid.astype(np.float16))


# ---- TMATMUL, TMOV, TTRANS ----------------------------------------------------------------
@pytest.mark.parametrize("adt,ddt", [("float16", "float32"), ("bfloat16", "float32"),
                                     ("float32", "float32"), ("int8", "int32")])
@pytest.mark.parametrize("mkn", [(16, 32, 16), (64, 32, 64), (5, 7, 3)])
def test_tmatmul(adt, ddt, mkn, rng):
    M, K, N = mkn
    isz = NPDT[adt].itemsize
    pad = lambda n: -(-n * isz // 32) * (32 // isz)  # noqa: E731
    a = tile(adt, M, pad(K), loc=pto.TileType.Left, vr=M, vc=K, rng=rng)
    b = tile(adt, K, pad(N), loc=pto.TileType.Right, vr=K, vc=N, rng=rng)
    dsz = NPDT[ddt].itemsize
    d = tile(ddt, M, -(-N * dsz // 32) * (32 // dsz), loc=pto.TileType.Acc, vr=M, vc=N, rng=rng)
    before = d.data.copy()
    pto.TMATMUL(d, a, b)
    check_dst(d, before, ref.pto_matmul(a.valid, b.valid, NPDT[ddt]), f"TMATMUL {adt}")


def test_tmatmul_uses_fma():
    """fma(a, b, c) differs from round(round(a*b) + c): 1 + 2^-23 squared minus (1 + 2^-22)."""
    e = 2.0**-23
    a = tile("float32", 1, 8, loc=pto.TileType.Left, vc=2)
    b = tile("float32", 2, 8, loc=pto.TileType.Right, vc=1)
    a.data[0, :2] = [-(1 + 2 * e), 1 + e]
    b.data[:2, 0] = [1.0, 1 + e]
    d = tile("float32", 1, 8, loc=pto.TileType.Acc, vc=1)
    pto.TMATMUL(d, a, b)
    assert d.data[0, 0] == np.float32(e * e)   # fused: the 2^-46 term survives


def test_tmov_and_ttrans(rng):
    src = tile("float32", 16, 32, vr=13, vc=29, rng=rng)
    dst = tile("float32", 16, 32, layout=pto.BLayout.ColMajor, vr=13, vc=29, rng=rng)
    before = dst.data.copy()
    pto.TMOV(dst, src)
    check_dst(dst, before, src.valid)
    acc = tile("float32", 16, 32, loc=pto.TileType.Acc, vr=13, vc=29, rng=rng)
    h = tile("float16", 16, 32, vr=13, vc=29, rng=rng)
    before = h.data.copy()
    pto.TMOV(h, acc)
    check_dst(h, before, acc.valid.astype(np.float16))
    t = tile("float32", 32, 16, vr=29, vc=13, rng=rng)
    before = t.data.copy()
    pto.TTRANS(t, src)
    check_dst(t, before, src.valid.T)


def test_f16_nan_and_bits_copied_exactly():
    src = tile("float16", 256, 256)
    src.data[...] = all_f16_codes()
    dst = tile("float16", 256, 256)
    pto.TMOV(dst, src)
    assert np.array_equal(bits(dst.data), bits(src.data))


def test_cost_recorded(rng):
    from fastisa import cost
    a = tile("float32", 16, 16, rng=rng)
    with cost.profiling() as p:
        pto.TADD(a, a, a)
        pto.TEXP(a, a)
    t = p.totals()
    assert t["Vector"] == pto.vector_cycles(16, 16, 4, 1) + pto.vector_cycles(16, 16, 4, 2)


def test_thread_count_never_changes_bits(rng):
    x = tile("float32", 512, 256, rng=rng)
    m = tile("float32", 512, 1, layout=CM)
    pto.TROWMAX(m, x)
    outs = []
    old = pto.get_num_threads()
    try:
        for n in (1, 2, 3, 7):
            pto.set_num_threads(n)
            e = tile("float32", 512, 256)
            s = tile("float32", 512, 1, layout=CM)
            pto.TROWEXPANDEXPDIF(e, x, m)
            pto.TROWSUM(s, e)
            pto.TROWEXPANDDIV(e, e, s)
            outs.append((e.data.copy(), s.data.copy()))
    finally:
        pto.set_num_threads(old)
    for e, s in outs[1:]:
        assert_bits(e, outs[0][0])
        assert_bits(s, outs[0][1])


@pytest.mark.parametrize("name", ["pto_trecip", "pto_softmax", "pto_flash_attention"])
def test_bundled_examples_match(name):
    from fastisa import examples
    rep = examples.run(name, seed=0)
    assert rep.matches, rep.format()
    assert rep.cycles.get("Vector", 0) > 0


def test_texp_f32_is_libm_exp_rounded_once(rng):
    """float32 TEXP and EXPDIF give exactly (float)exp((double)x) with libm's exp
    (Python's math.exp), including inputs near float32 rounding midpoints, the subnormal
    and overflow ranges, and NaN/inf."""
    import math
    x = np.concatenate([
        rng.uniform(-110, 95, 60000), rng.uniform(-1, 1, 20000),
        np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 88.0, 88.72, 88.73, -87.0, -87.5,
                  -103.9, -104.0, -150.0, 1e-30, -1e-30]),
    ]).astype(np.float32)
    x = np.concatenate([x, np.zeros((-x.size) % 512, np.float32)])
    src = tile("float32", x.size // 64, 64)
    src.data[...] = x.reshape(-1, 64)
    dst = tile("float32", x.size // 64, 64)
    pto.TEXP(dst, src)
    with np.errstate(over="ignore"):
        want = np.array([math.exp(v) if not math.isnan(v) and v < 700 else v * np.inf
                         for v in src.data.reshape(-1).tolist()],
                        dtype=np.float64).astype(np.float32).reshape(src.shape)
    assert_bits(dst.data, want, "TEXP f32 vs libm")
    zero = tile("float32", src.rows, 1, layout=CM)
    zero.data[...] = 0
    dst.fill(0)
    pto.TROWEXPANDEXPDIF(dst, src, zero)
    assert_bits(dst.data, want, "EXPDIF f32 vs libm")


def test_texp_f32_in_place_and_long_rows_match_libm(rng):
    """The vectorised float32 exp (chunks of 256, a chunk holding a near-midpoint, NaN or
    out-of-range element redone element by element) in place (dst is src) and over rows
    longer than one chunk, with each row's EXPDIF operand subtracted first."""
    import math
    R, C = 40, 1000
    x = rng.uniform(-100, 92, (R, C)).astype(np.float32)
    x[3, 700] = np.nan
    x[5, 10] = -np.inf
    m = rng.uniform(-3, 3, (R, 1)).astype(np.float32)
    src = tile("float32", R, 1024, vc=C)
    src.data[:, :C] = x
    with np.errstate(over="ignore", invalid="ignore"):
        def libm(v):
            return np.array([math.exp(t) if not math.isnan(t) and t < 700 else t * np.inf
                             for t in v.reshape(-1).tolist()]).astype(np.float32).reshape(v.shape)
        want_exp = libm(x.astype(np.float64))
        want_dif = libm((x - m).astype(np.float64))
    keep = src.data[:, C:].copy()
    pto.TEXP(src, src)
    assert_bits(src.data[:, :C], want_exp, "TEXP f32 in place")
    assert_bits(src.data[:, C:], keep, "TEXP f32 outside the valid region")
    src.data[:, :C] = x
    mt = tile("float32", R, 1, layout=CM)
    mt.data[...] = m
    pto.TROWEXPANDEXPDIF(src, src, mt)
    assert_bits(src.data[:, :C], want_dif, "EXPDIF f32 in place")


@settings(max_examples=25)
@given(st.integers(1, 48), st.integers(1, 4), st.integers(0, 48), st.integers(0, 64),
       st.sampled_from(["float32", "float16", "int32"]), st.sampled_from(REXP + [("EXPDIF", "EXPDIF")]),
       st.sampled_from([1, 2]), st.booleans(), st.integers(0, 2**32 - 1))
def test_row_expand_hypothesis(rows, cblocks, vr, vc, dtype, instr_op, mode, row_first, seed):
    """Random shapes, valid regions, modes and operand orders for the row-expand family."""
    instr, op = instr_op
    if op == "EXPDIF":
        if dtype == "int32":
            dtype = "float32"
        row_first = False
        instr = "TROWEXPANDEXPDIF"
    rng = np.random.default_rng(seed)
    per = 32 // NPDT[dtype].itemsize
    C = cblocks * per * 2
    vr, vc = min(vr, rows), min(vc, C)
    full = tile(dtype, rows, C, vr=vr, vc=vc, rng=rng)
    row = _rowvec(dtype, vr, mode, rng, rows=None if mode == 1 else max(rows, 1))
    if op == "DIV":
        row.data[row.data == 0] = 1
        full.data[full.data == 0] = 1
    dst = tile(dtype, rows, C, vr=vr, vc=vc, rng=rng)
    before = dst.data.copy()
    s = ref.pto_expand_cols(row.valid, vc) if vc else np.zeros((vr, 0), row.dtype)
    if row_first:
        getattr(pto, instr)(dst, row, full)
        want = ref.pto_binary(op, s, full.valid)
    else:
        getattr(pto, instr)(dst, full, row)
        want = ref.pto_binary(op, full.valid, s)
    check_dst(dst, before, want, instr, ulp=TRANSCENDENTAL_ULP if op == "EXPDIF" else 0)


@pytest.mark.parametrize("adt,ddt", [("float16", "float32"), ("float32", "float32"),
                                     ("int8", "int32")])
def test_tmatmul_acc_and_bias(adt, ddt, rng):
    M, K, N = 16, 32, 16
    isz = NPDT[adt].itemsize
    pad = lambda n: -(-n * isz // 32) * (32 // isz)  # noqa: E731
    a = tile(adt, M, pad(K), loc=pto.TileType.Left, vc=K, rng=rng)
    b = tile(adt, K, pad(N), loc=pto.TileType.Right, vc=N, rng=rng)
    acc = tile(ddt, M, N, loc=pto.TileType.Acc, rng=rng)
    if NPDT[ddt].kind == "i":
        acc.data[...] = rng.integers(-1000, 1000, (M, N))
    d = tile(ddt, M, N, loc=pto.TileType.Acc, rng=rng)
    pto.TMATMUL_ACC(d, acc, a, b)
    assert_bits(d.data, ref.pto_matmul(a.valid, b.valid, NPDT[ddt], init=acc.data), "ACC")
    want = ref.pto_matmul(a.valid, b.valid, NPDT[ddt], init=acc.data)
    pto.TMATMUL_ACC(acc, acc, a, b)                  # in place
    assert_bits(acc.data, want, "ACC in place")
    bias = tile(ddt, 1, N, loc=pto.TileType.Bias, rng=rng)
    if NPDT[ddt].kind == "i":
        bias.data[...] = rng.integers(-1000, 1000, (1, N))
    pto.TMATMUL_BIAS(d, a, b, bias)
    assert_bits(d.data, ref.pto_matmul(a.valid, b.valid, NPDT[ddt], init=bias.data), "BIAS")
    with pytest.raises(ConstraintError, match="TMATMUL_BIAS: bias.loc must be TileType.Bias"):
        pto.TMATMUL_BIAS(d, a, b, acc)
    with pytest.raises(ConstraintError, match="TMATMUL_ACC: acc valid shape must equal"):
        pto.TMATMUL_ACC(d, tile(ddt, M, N, loc=pto.TileType.Acc, vr=3), a, b)
