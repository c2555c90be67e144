"""fastisa.convert / pack_x4 / unpack_x4 against ml_dtypes, numpy and the oracles in
tests/reference.py, bit for bit (spec 000 "Supported Data Types", "Type Casting";
reference/numerics.md)."""

import threading
import time

import ml_dtypes as md
import numpy as np
import pytest
from hypothesis import given, strategies as st

import fastisa
import reference as R
from fastisa import dtypes as D
from fastisa._kernels import convert as K
from fastisa.errors import ConstraintError, OverlapError

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

# every format ml_dtypes (or numpy, for float16) has, with the uint view of its storage
ORACLE_TYPES = {
    "bfloat16": (md.bfloat16, np.uint16),
    "float16": (np.float16, np.uint16),
    "float8_e4m3": (md.float8_e4m3, np.uint8),
    "float8_e4m3fn": (md.float8_e4m3fn, np.uint8),
    "float8_e5m2": (md.float8_e5m2, np.uint8),
    "float8_e8m0fnu": (md.float8_e8m0fnu, np.uint8),
    "float4_e2m1fn": (md.float4_e2m1fn, np.uint8),
}
SMALL_FLOATS = ["float8_e4m3", "float8_e4m3fn", "float8_e5m2", "float8_e8m0fnu",
                "float16", "bfloat16", "float4_e2m1fn"]


def bits(a):
    a = np.asarray(a)
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32}[a.dtype.itemsize])


def f32(u):
    return np.asarray(u, np.uint32).view(np.float32)


def enc(x, name, saturate=False):
    return bits(fastisa.convert(np.asarray(x, np.float32), name, saturate=saturate))


def oracle_encode(name, x, saturate=False):
    """The reference.py rule for float32 -> name (codes as int64)."""
    x = np.asarray(x, np.float32)
    if name == "float8_e8m0fnu":
        return R.e8m0_encode(x, saturate)
    if name == "tfloat32":
        return R.tf32_encode(x, saturate).astype(np.int64)
    c = R.float_encode(name, x, saturate)
    if name == "float16" and saturate != "ascend":
        c = np.where(np.isnan(x), R.f16_nan_numpy(x.view(np.uint32)), c)
    return c


@pytest.fixture(scope="module")
def stratified():
    """2^24 float32 inputs, stratified: for each of the 2^16 values of the top 16 bits
    (sign, exponent, top 7 mantissa bits) 256 random low halves, plus low halves
    0x0000/0x8000/0xffff/0x7fff/0x8001 (exact ties for 16-bit formats and their
    neighbours)."""
    rng = np.random.default_rng(2026)
    hi = np.repeat(np.arange(1 << 16, dtype=np.uint32) << 16, 256)
    lo = rng.integers(0, 1 << 16, size=hi.size, dtype=np.uint32)
    lo = lo.reshape(-1, 256)
    lo[:, :5] = [0x0000, 0x8000, 0xFFFF, 0x7FFF, 0x8001]
    return (hi | lo.reshape(-1)).view(np.float32)


def boundaries(name):
    """Every boundary of a format: all exact midpoints between adjacent values (the ties,
    including max + ulp/2 and half the smallest subnormal), each +-1 float32 ulp, every
    representable value, max +- 1 ulp, +-0, +-inf, float32 extremes, quiet and
    signalling NaNs with payloads, both signs."""
    E, M, B, signed, has_inf, nan, mx = R.FLOAT_DEFS[name]
    nb = 1 + E + M if signed else E + M
    vals, isnan = R.float_decode(name, np.arange(1 << nb))
    v = np.unique(vals[~isnan & np.isfinite(vals)])
    v = v[v >= 0]
    ulp_max = mx - v[-2]
    pts = np.concatenate([v, (v[1:] + v[:-1]) / 2, [mx + ulp_max / 2, mx + ulp_max, mx * 2,
                                                     v[1] / 2, v[1] / 4]])
    pts = pts[pts < 3.4e38].astype(np.float32)
    u = pts.view(np.uint32)
    u = np.concatenate([u, u + 1, np.maximum(u, 1) - 1])
    special = np.array([0, 0x7F800000, 0x7F7FFFFF, 0x00000001, 0x007FFFFF, 0x00800000,
                        0x7FC00000, 0x7FC00001, 0x7FFFFFFF, 0x7F800001, 0x7FA00000,
                        0x7F802000, 0x7F801FFF, 0x7FBFFFFF, 0x7FC02000], np.uint32)
    u = np.concatenate([u, special])
    u = np.unique(np.concatenate([u, u | 0x80000000]))
    return u.view(np.float32)


# ---- decode: every code -------------------------------------------------------------

@pytest.mark.parametrize("name", SMALL_FLOATS)
def test_decode_every_code_matches_ml_dtypes(name):
    dt, ut = ORACLE_TYPES[name]
    codes = np.arange(1 << (8 * np.dtype(ut).itemsize), dtype=np.int64).astype(ut)
    got = fastisa.convert(codes.view(dt), np.float32)
    ref = codes.view(dt).astype(np.float32)
    np.testing.assert_array_equal(bits(got), bits(ref))


@pytest.mark.parametrize("name", SMALL_FLOATS)
def test_decode_every_code_matches_definition(name):
    E, M, B, signed, *_ = R.FLOAT_DEFS[name]
    nb = 1 + E + M if signed else E + M
    dt, ut = ORACLE_TYPES[name]
    codes = np.arange(1 << nb, dtype=np.int64)
    got = fastisa.convert(codes.astype(ut).view(dt), np.float32)
    want, isnan = R.float_decode(name, codes)
    assert np.array_equal(np.isnan(got), isnan)
    np.testing.assert_array_equal(got[~isnan], want[~isnan].astype(np.float32))
    # NaN codes decode with the code's sign (e8m0 has none: positive)
    sign = (codes >> (nb - 1)) & 1 if signed else 0 * codes
    assert np.array_equal(np.signbit(got[isnan]), sign[isnan].astype(bool))


def test_decode_float8_nan_codes_are_canonical():
    for name, dt in [("float8_e4m3", md.float8_e4m3), ("float8_e5m2", md.float8_e5m2),
                     ("float8_e4m3fn", md.float8_e4m3fn), ("float8_e8m0fnu", md.float8_e8m0fnu)]:
        codes = np.array(D.lookup(name).nan_codes, np.uint8)
        got = bits(fastisa.convert(codes.view(dt), np.float32))
        assert set(got.tolist()) <= {0x7FC00000, 0xFFC00000}, name


def test_decode_float16_keeps_payload_like_numpy():
    codes = np.arange(1 << 16, dtype=np.uint16)
    got = fastisa.convert(codes.view(np.float16), np.float32)
    np.testing.assert_array_equal(bits(got), bits(codes.view(np.float16).astype(np.float32)))
    assert bits(fastisa.convert(np.array([0x7C01], np.uint16).view(np.float16), "float32"))[0] \
        == 0x7F802000


def test_decode_bfloat16_keeps_payload():
    got = fastisa.convert(np.array([0x7F81, 0xFFC1], np.uint16).view(md.bfloat16), "float32")
    assert bits(got).tolist() == [0x7F810000, 0xFFC10000]


def test_decode_float4_upper_bits_as_ml_dtypes():
    codes = np.arange(256, dtype=np.uint8)
    got = fastisa.convert(codes.view(md.float4_e2m1fn), np.float32)
    np.testing.assert_array_equal(bits(got), bits(codes.view(md.float4_e2m1fn).astype(np.float32)))
    assert got[0x17] == -6.0 and got[0xF1] == -0.5


@pytest.mark.parametrize("name", ["uint8", "int8", "uint16", "int16", "bool_"])
def test_decode_every_code_of_small_ints(name):
    fmt = D.lookup(name)
    codes = np.arange(1 << fmt.bits, dtype=np.int64).astype(
        {8: np.uint8, 16: np.uint16}[fmt.bits]).view(fmt.np_dtype)
    got = fastisa.convert(codes, "float32", src_dtype=name)
    want = (codes != 0).astype(np.float32) if name == "bool_" else codes.astype(np.float32)
    np.testing.assert_array_equal(bits(got), bits(want))


@pytest.mark.parametrize("name,bits_", [("float8_e5m2_x4", 8), ("float8_e4m3fn_x4", 8),
                                        ("float4_e2m1fn_x4", 4)])
def test_decode_every_code_of_packed_formats(name, bits_):
    fmt = D.lookup(name)
    elem = D.lookup(fmt.element)
    n = 1 << bits_
    codes = np.arange(n, dtype=np.uint8)
    # every code in every lane: 4 rotations
    lanes = np.stack([np.roll(codes, k) for k in range(4)], axis=-1).reshape(1, -1)
    words = R.pack_x4_loops(lanes, bits_).astype(fmt.np_dtype)
    got = fastisa.convert(words, "float32", src_dtype=name)
    want = lanes.view(elem.np_dtype).astype(np.float32)
    np.testing.assert_array_equal(bits(got), bits(want))


def test_decode_scalar_api_matches_arrays():
    for name in SMALL_FLOATS:
        fmt = D.lookup(name)
        dt, ut = ORACLE_TYPES[name]
        codes = np.arange(1 << (8 * np.dtype(ut).itemsize), dtype=np.int64).astype(ut)
        if ut == np.uint16:
            codes = codes[::97]
        arr = bits(fastisa.convert(codes.view(dt), np.float32))
        sc = bits(np.array([K.decode_scalar(fmt.code, int(c)) for c in codes], np.float32))
        # a Python float is a double: the round trip sets the quiet bit of signalling NaNs
        quiet = np.where(np.isnan(arr.view(np.float32)), np.uint32(0x400000), np.uint32(0))
        np.testing.assert_array_equal(sc | quiet, arr | quiet)


# ---- encode: stratified + boundaries ------------------------------------------------

@pytest.mark.parametrize("name", SMALL_FLOATS)
def test_encode_stratified_2_24_matches_ml_dtypes(name, stratified):
    dt, ut = ORACLE_TYPES[name]
    got = fastisa.convert(stratified, name)
    ref = stratified.astype(dt)
    bad = np.nonzero(bits(got) != bits(ref))[0]
    assert bad.size == 0, [(hex(stratified.view(np.uint32)[i]), hex(bits(ref)[i]),
                            hex(bits(got)[i])) for i in bad[:8]]


@pytest.mark.parametrize("name", SMALL_FLOATS)
def test_encode_boundaries_match_ml_dtypes_and_oracle(name):
    dt, ut = ORACLE_TYPES[name]
    x = boundaries(name)
    got = bits(fastisa.convert(x, name)).astype(np.int64)
    np.testing.assert_array_equal(got, bits(x.astype(dt)).astype(np.int64))
    np.testing.assert_array_equal(got, oracle_encode(name, x))


# reference/numerics.md 5.3, boundary vectors measured with ml_dtypes 0.6.0: bits -> code
VECTORS = {
    "bfloat16": [(0x7F7F0000, 0x7F7F), (0x7F7F8000, 0x7F80), (0x7F7FA000, 0x7F80),
                 (0x7149F2CA, 0x714A), (0x00800000, 0x0080), (0x00010000, 0x0001),
                 (0x00008000, 0x0000), (0x00018000, 0x0002), (0x0000828F, 0x0001),
                 (0x80000000, 0x8000), (0x7F800000, 0x7F80), (0xFF800000, 0xFF80),
                 (0x7FC00000, 0x7FC0), (0xFFC00000, 0xFFC0), (0x7F810000, 0x7FC0),
                 (0x00008001, 0x0001), (0x007FFFFF, 0x0080), (0x3F808000, 0x3F80),
                 (0x3F818000, 0x3F82)],
    "float8_e4m3": [(0x43700000, 0x77), (0x43780000, 0x78), (0x437A0000, 0x78),
                    (0xC3800000, 0xF8), (0x7149F2CA, 0x78), (0x3C800000, 0x08),
                    (0x3B000000, 0x01), (0x3A800000, 0x00), (0x3B400000, 0x02),
                    (0x80000000, 0x80), (0x7F800000, 0x78), (0xFF800000, 0xF8),
                    (0x7FC00000, 0x7C), (0xFFC00000, 0xFC)],
    "float8_e4m3fn": [(0x43E00000, 0x7E), (0x43E80000, 0x7E), (0x43EA0000, 0x7F),
                      (0xC3F00000, 0xFF), (0x7149F2CA, 0x7F), (0x3C800000, 0x08),
                      (0x3B000000, 0x01), (0x3A800000, 0x00), (0x3B400000, 0x02),
                      (0x80000000, 0x80), (0x7F800000, 0x7F), (0xFF800000, 0xFF),
                      (0x7FC00000, 0x7F), (0xFFC00000, 0xFF)],
    "float8_e5m2": [(0x47600000, 0x7B), (0x47700000, 0x7C), (0x47740000, 0x7C),
                    (0xC7800000, 0xFC), (0x38800000, 0x04), (0x37800000, 0x01),
                    (0x37000000, 0x00), (0x37C00000, 0x02), (0x80000000, 0x80),
                    (0x7F800000, 0x7C), (0x7FC00000, 0x7E), (0xFFC00000, 0xFE)],
    "float4_e2m1fn": [(0x40C00000, 0x7), (0x40E00000, 0x7), (0x41000000, 0x7),
                      (0xC1000000, 0xF), (0x7149F2CA, 0x7), (0x3F800000, 0x2),
                      (0x3F000000, 0x1), (0x3E800000, 0x0), (0x3F400000, 0x2),
                      (0x3E851EB8, 0x1), (0x3FA00000, 0x2), (0x3FE00000, 0x4),
                      (0x40200000, 0x4), (0x40600000, 0x6), (0x40A00000, 0x6),
                      (0x40A051EC, 0x7), (0x80000000, 0x8), (0x7F800000, 0x7),
                      (0xFF800000, 0xF), (0x7FC00000, 0x8), (0xFFC00000, 0x0)],
    "float8_e8m0fnu": [(0x3F800000, 0x7F), (0x3FC00000, 0x80), (0x3FBFFBCE, 0x7F),
                       (0x3FA00000, 0x7F), (0x3FE00000, 0x80), (0x40400000, 0x81),
                       (0x3F400000, 0x7F), (0x7F000000, 0xFE), (0x7F400000, 0xFF),
                       (0x00400000, 0x00), (0x00200000, 0x00), (0x00000001, 0x00),
                       (0x00000000, 0xFF), (0x80000000, 0xFF), (0xBF800000, 0xFF),
                       (0x7F800000, 0xFF), (0xFF800000, 0xFF), (0x7FC00000, 0xFF)],
}


@pytest.mark.parametrize("name", sorted(VECTORS))
def test_encode_reference_vectors(name):
    u, c = zip(*VECTORS[name])
    assert enc(f32(list(u)), name).tolist() == list(c)


def test_encode_float16_nan_payloads_as_numpy():
    nans = f32([0x7F800001, 0x7F801FFF, 0x7F802000, 0x7FA00000, 0x7FC00000, 0xFFC00001,
                0x7FFFFFFF, 0xFF812345])
    assert enc(nans, "float16").tolist() == bits(nans.astype(np.float16)).tolist() == \
        [0x7C01, 0x7C01, 0x7C01, 0x7D00, 0x7E00, 0xFE00, 0x7FFF, 0xFC09]


def test_encode_scalar_api_matches_arrays():
    rng = np.random.default_rng(7)
    x = np.concatenate([rng.integers(0, 2**32, 3000, dtype=np.uint64).astype(np.uint32),
                        boundaries("float8_e4m3").view(np.uint32)[::7]])
    # signalling NaNs are quieted by the float64 round trip of a Python float argument
    snan = ((x & 0x7F800000) == 0x7F800000) & ((x & 0x7FFFFF) != 0) & ((x & 0x400000) == 0)
    x = x[~snan].view(np.float32)
    for fmt in D.FORMATS.values():
        for mode in (0, 1, 2):
            arr_fmt = fmt.element or fmt.name
            arr = fastisa.convert(x, arr_fmt, saturate=[False, True, "ascend"][mode])
            want = bits(arr).astype(np.int64) & ((1 << (8 * arr.dtype.itemsize)) - 1)
            sc = np.array([K.encode_scalar(fmt.code, float(v), mode) for v in x], np.int64)
            np.testing.assert_array_equal(sc, want, err_msg=f"{fmt.name} mode {mode}")


@pytest.mark.parametrize("saturate", [False, True, "ascend"])
def test_bfloat16_streaming_path_matches_scalar_loop(saturate):
    """From 2^22 elements (FI__STREAM_MIN) float32 -> bfloat16 takes the AVX2 streaming-store kernel
    (csrc/fastisa/convert.h fi__enc_bf16_stream): an unaligned head, 16-lane body and
    tail.  It must give the bits of the short-array loop for every mode, at every
    destination alignment and length around the threshold."""
    rng = np.random.default_rng(11)
    n = (1 << 22) + 37
    u = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    special = boundaries("bfloat16").view(np.uint32)
    u[: special.size] = special
    u[-special.size:] = special
    x = u.view(np.float32)
    for off in (0, 1, 7):
        for m in (n - 37 - off, n - off):
            out = np.zeros(m + off, md.bfloat16)
            fastisa.convert(x[:m], "bfloat16", saturate=saturate, out=out[off:])
            short = np.concatenate([fastisa.convert(c, "bfloat16", saturate=saturate)
                                    for c in np.array_split(x[:m], 4)])
            np.testing.assert_array_equal(bits(out[off:]), bits(short))
            assert not bits(out[:off]).any()
            if off != 1:
                continue
            if saturate is False:
                np.testing.assert_array_equal(bits(out[off:]), bits(x[:m].astype(md.bfloat16)))
            else:
                np.testing.assert_array_equal(bits(out[off:]).astype(np.int64),
                                              oracle_encode("bfloat16", x[:m], saturate))


# ---- saturating modes ---------------------------------------------------------------

@pytest.mark.parametrize("name", SMALL_FLOATS + ["tfloat32"])
@pytest.mark.parametrize("saturate", [True, "ascend"])
def test_saturating_modes_match_rule(name, saturate, stratified):
    x = np.concatenate([stratified[::16], boundaries(name if name != "tfloat32" else "bfloat16")])
    got = bits(fastisa.convert(x, name, saturate=saturate)).astype(np.int64)
    np.testing.assert_array_equal(got, oracle_encode(name, x, saturate))


def test_saturate_true_examples():
    x = np.array([1e30, -1e30, np.inf, -np.inf, 465.0, np.nan, -np.nan], np.float32)
    assert enc(x, "float8_e4m3fn", True).tolist() == [0x7E, 0xFE, 0x7E, 0xFE, 0x7E, 0x7F, 0xFF]
    assert enc(x, "float8_e5m2", True).tolist()[:4] == [0x7B, 0xFB, 0x7B, 0xFB]
    assert enc(x, "bfloat16", True).tolist()[:4] == [0x714A, 0xF14A, 0x7F7F, 0xFF7F]
    assert enc(x, "float16", True).tolist()[:5] == [0x7BFF, 0xFBFF, 0x7BFF, 0xFBFF, 0x5F44]
    assert enc(x, "float8_e8m0fnu", True).tolist() == [0xE3, 0x00, 0xFE, 0x00, 0x88, 0xFF, 0xFF]


def test_ascend_mode_float16_is_fi_f16_saturate():
    """Ascend saturation mode (reference/tik.md 1.8): inf -> +-65504, NaN -> 0, finite
    overflow -> +-65504; otherwise the default RNE result."""
    x = np.array([np.inf, -np.inf, np.nan, -np.nan, 65520.0, -1e9, 1.5, -2.0**-25], np.float32)
    assert enc(x, "float16", "ascend").tolist() == [0x7BFF, 0xFBFF, 0, 0, 0x7BFF, 0xFBFF,
                                                   0x3E00, 0x8000]
    f = fastisa.convert(np.array([np.inf, np.nan], np.float32), "float32", saturate="ascend")
    assert bits(f).tolist() == [0x7F7FFFFF, 0]


# ---- integers (spec 000 "Type Casting") ---------------------------------------------

def test_spec_type_casting_table():
    """spec 000 "FP32-to-Integer Conversion" table, exactly."""
    cases = [(42.0, "int32", 42), (2147483648.0, "uint8", 255), (-300.0, "int8", -128),
             (-1.0, "uint32", 0)]
    for v, name, want in cases:
        got = fastisa.convert(np.array([v], np.float32), name)
        assert got.dtype == D.lookup(name).np_dtype and got.tolist() == [want], (v, name)


def test_spec_int_to_f32_rne_example():
    """spec 000: 2^24 + 1 lies halfway between 2^24 and 2^24 + 2, so RNE gives 2^24."""
    v = np.array([2**24 + 1, 2**24 + 3, -(2**24 + 1), 2**31 - 1], np.int32)
    got = fastisa.convert(v, "float32")
    assert got.tolist() == [2.0**24, 2.0**24 + 4, -(2.0**24), 2.0**31]
    np.testing.assert_array_equal(got, R.int_to_f32(v))
    u = np.array([2**32 - 1, 2**24 + 1, 2**25 + 2], np.uint32)
    np.testing.assert_array_equal(fastisa.convert(u, "float32"), R.int_to_f32(u))
    # integer -> integer goes through float32 (spec 000 "Integer-to-Integer Conversion")
    assert fastisa.convert(np.array([2**24 + 1], np.int32), "int32").tolist() == [2**24]
    assert fastisa.convert(np.array([2**31 - 1], np.int32), "int32").tolist() == [2**31 - 1]
    assert fastisa.convert(np.array([300, -5], np.int16), "uint8").tolist() == [255, 0]


@pytest.mark.parametrize("name", list(R.INT_RANGES) + ["bool_"])
def test_f32_to_int_matches_oracle(name, stratified):
    lo, hi = R.INT_RANGES[name][:2] if name != "bool_" else (0, 1)
    edges = np.array([lo, hi, lo - 1, hi + 1, lo + 0.5, hi - 0.5, 0.5, 1.5, 2.5, -0.5, -1.5,
                      -2.5, 0.49999997, np.nan, -np.nan, np.inf, -np.inf, -0.0], np.float64)
    limits = np.array([lo, hi, lo - 0.5, hi + 0.5, 2.0**22, 2.0**23, 2.0**24, 2.0**31,
                       2.0**32, 0.5, 1.5], np.float32)
    lb = np.concatenate([(limits.view(np.uint32).astype(np.int64) + d).astype(np.uint32)
                         for d in range(-3, 4)])
    near = np.concatenate([lb, lb | np.uint32(0x80000000)]).view(np.float32)
    x = np.concatenate([stratified[::8], edges.astype(np.float32), near,
                        np.arange(-70000, 70000, 0.25, dtype=np.float32)])
    got = fastisa.convert(x, name)
    np.testing.assert_array_equal(got, R.f32_to_int(x, name))


@pytest.mark.parametrize("src", list(R.INT_RANGES) + ["bool_"])
@pytest.mark.parametrize("dst", list(R.INT_RANGES) + ["bool_", "float16", "bfloat16"])
def test_int_sources_go_through_float32(src, dst):
    rng = np.random.default_rng(3)
    fmt = D.lookup(src)
    info = np.iinfo(fmt.np_dtype)
    v = np.concatenate([rng.integers(info.min, int(info.max) + 1, 4000, dtype=np.int64),
                        [info.min, info.max, 0, 1, 2**24 + 1, -(2**24 + 1)]])
    v = np.clip(v, info.min, info.max).astype(fmt.np_dtype)
    if src == "bool_":
        v = (v != 0).astype(np.uint8)
    mid = fastisa.convert(v, "float32", src_dtype=src)
    np.testing.assert_array_equal(mid, (v != 0).astype(np.float32) if src == "bool_"
                                  else R.int_to_f32(v))
    got = fastisa.convert(v, dst, src_dtype=src)
    np.testing.assert_array_equal(bits(got), bits(fastisa.convert(mid, dst)))


def test_bool_destination():
    # bool_ is the integer range [0, 1]: RNE, saturate, NaN -> 0 (spec 000 FP32-to-Integer)
    x = np.array([0.0, -0.0, 1.0, -2.5, np.nan, np.inf, 1e-45, 0.5, 0.7, 1.5, 2.0, -np.inf,
                  0.49999997], np.float32)
    assert fastisa.convert(x, "bool_").tolist() == [0, 0, 1, 0, 0, 1, 0, 0, 1, 1, 1, 0, 0]
    np.testing.assert_array_equal(fastisa.convert(x, "bool_"), R.nki_round(x, "bool_"))
    assert fastisa.convert(np.array([True, False]), "float32").tolist() == [1.0, 0.0]


# ---- tfloat32 -----------------------------------------------------------------------

def test_tfloat32_rne_ties():
    one = 0x3F800000
    x = f32([one | 0x1000,            # 1 + 2^-11: exact tie, even neighbour 1.0
             one | 0x3000,            # 1 + 3*2^-11: tie, even neighbour 1 + 2^-9
             one | 0x1001,            # just above the tie: up
             one | 0x0FFF,            # just below: down
             0x7F7FF000,              # max + ulp/2 (tie, odd max): inf
             0x7F7FEFFF, 0x00001000,  # below the tie at max; tie at the smallest subnormal
             0x00003000, 0x7FC12345, 0xFF812345, 0x80000000])
    got = bits(fastisa.convert(x, "tfloat32"))
    assert got.tolist() == [one, one | 0x4000, one | 0x2000, one, 0x7F800000, 0x7F7FE000,
                            0x0, 0x4000, 0x7FC00000, 0xFFC00000, 0x80000000]
    assert fastisa.convert(x, "tfloat32").dtype == np.float32
    assert bits(fastisa.convert(x[4:5], "tfloat32", saturate=True)).tolist() == [0x7F7FE000]


def test_tfloat32_matches_oracle(stratified):
    x = stratified[::4]
    got = bits(fastisa.convert(x, "tfloat32"))
    np.testing.assert_array_equal(got, R.tf32_encode(x))
    assert not np.any(got & 0x1FFF)


def test_tfloat32_in_place():
    x = np.array([1.0 + 2**-11, 3.0, np.pi], np.float32)
    want = fastisa.convert(x, "tfloat32")
    r = fastisa.convert(x, "tfloat32", out=x)
    assert r is x and np.array_equal(bits(x), bits(want))


# ---- packing ------------------------------------------------------------------------

@pytest.mark.parametrize("name,nbits", [("float8_e5m2_x4", 8), ("float8_e4m3fn_x4", 8),
                                        ("float4_e2m1fn_x4", 4)])
def test_pack_round_trip_and_order(name, nbits):
    fmt = D.lookup(name)
    elem = D.lookup(fmt.element)
    rng = np.random.default_rng(5)
    codes = rng.integers(0, 1 << nbits, size=(3, 5, 16), dtype=np.uint8)
    words = fastisa.pack_x4(codes.view(elem.np_dtype), name)
    assert words.shape == (3, 5, 4) and words.dtype == fmt.np_dtype
    np.testing.assert_array_equal(words, R.pack_x4_loops(codes, nbits).astype(fmt.np_dtype))
    back = fastisa.unpack_x4(words, name)
    assert back.dtype == elem.np_dtype and back.shape == codes.shape
    np.testing.assert_array_equal(back.view(np.uint8), codes)


def test_pack_element_order_explicit():
    e = np.array([0x01, 0x02, 0x03, 0x04], np.uint8)
    assert fastisa.pack_x4(e, "float8_e4m3fn_x4").tolist() == [0x04030201]
    assert fastisa.pack_x4(e, "float4_e2m1fn_x4").tolist() == [0x4321]
    # fp8_x4 is the little-endian byte view of consecutive fp8 codes (AWS golden code)
    codes = np.arange(64, dtype=np.uint8).view(md.float8_e5m2)
    np.testing.assert_array_equal(fastisa.pack_x4(codes, "float8_e5m2_x4"),
                                  codes.view(np.uint8).view("<u4"))
    assert fastisa.unpack_x4(np.array([0xFEDC], np.uint16), "float4_e2m1fn_x4") \
        .view(np.uint8).tolist() == [0xC, 0xD, 0xE, 0xF]
    # float4: the high nibble of an input byte is ignored
    assert fastisa.pack_x4(np.array([0xF1, 0x12, 0x23, 0x34], np.uint8),
                           "float4_e2m1fn_x4").tolist() == [0x4321]


@pytest.mark.parametrize("name", ["float8_e5m2_x4", "float8_e4m3fn_x4", "float4_e2m1fn_x4"])
@pytest.mark.parametrize("saturate", [False, True, "ascend"])
def test_convert_to_and_from_packed(name, saturate, stratified):
    fmt = D.lookup(name)
    x = stratified[::64].reshape(-1, 64)
    words = fastisa.convert(x, name, saturate=saturate)
    assert words.shape == (x.shape[0], 16)
    elem = fastisa.convert(x, fmt.element, saturate=saturate)
    np.testing.assert_array_equal(words, fastisa.pack_x4(elem, name))
    back = fastisa.convert(words, "float32", src_dtype=name)
    np.testing.assert_array_equal(bits(back), bits(elem.astype(np.float32)))
    # packed -> packed and packed -> another format go through float32
    np.testing.assert_array_equal(fastisa.convert(words, name, src_dtype=name), words)
    np.testing.assert_array_equal(bits(fastisa.convert(words, "bfloat16", src_dtype=name)),
                                  bits(fastisa.convert(back, "bfloat16")))


# ---- any pair through float32 (hypothesis) -------------------------------------------

ALL = list(D.FORMATS)


def _random_of(fmt, rng, shape):
    """Random storage of format fmt (every bit pattern possible)."""
    if fmt.name == "bool_":
        return rng.integers(0, 2, shape, dtype=np.uint8)
    raw = rng.integers(0, 256, shape + (fmt.np_dtype.itemsize,), dtype=np.uint8)
    a = raw.view(fmt.np_dtype).reshape(shape)
    if fmt.name == "float4_e2m1fn":
        a = (raw[..., 0] & 0xF).view(fmt.np_dtype)
    return a


@given(src=st.sampled_from(ALL), dst=st.sampled_from(ALL),
       saturate=st.sampled_from([False, True, "ascend"]),
       rows=st.integers(0, 3), cols=st.integers(0, 700), seed=st.integers(0, 2**32 - 1))
def test_any_pair_is_decode_then_encode(src, dst, saturate, rows, cols, seed):
    s, d = D.lookup(src), D.lookup(dst)
    rng = np.random.default_rng(seed)
    if s.lanes > 1:
        cols = cols // 4
    if d.lanes > 1 and s.lanes == 1:
        cols = cols // 4 * 4
    x = _random_of(s, rng, (rows, cols))
    got = fastisa.convert(x, d, saturate=saturate, src_dtype=s)
    mid = fastisa.convert(x, "float32", src_dtype=s)
    want = fastisa.convert(mid, d, saturate=saturate)
    assert got.dtype == d.np_dtype
    np.testing.assert_array_equal(bits(got), bits(want))
    # the float32 step itself against the oracles
    if s.kind == "float" and s.name not in ("float32", "tfloat32", "float8_e8m0fnu"):
        codes = bits(x).astype(np.int64)
        dec, isnan = R.float_decode(s.name, codes)
        assert np.array_equal(np.isnan(mid), isnan)
        np.testing.assert_array_equal(mid[~isnan], dec[~isnan].astype(np.float32))
    if d.kind == "float" and d.name != "float32":
        np.testing.assert_array_equal(bits(want).astype(np.int64) & ((1 << 32) - 1),
                                      oracle_encode(d.name, mid, saturate).reshape(want.shape)
                                      & ((1 << 32) - 1))


def test_noncontiguous_and_shapes():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)[:, ::2, ::-1] / 7
    got = fastisa.convert(x, "bfloat16")
    assert got.shape == x.shape
    np.testing.assert_array_equal(bits(got), bits(x.astype(md.bfloat16)))
    assert fastisa.convert(np.float32(1.5), "float16").shape == ()
    assert fastisa.convert(np.zeros((0, 8), np.float32), "float8_e4m3fn_x4").shape == (0, 2)


def test_out_parameter():
    x = np.linspace(-500, 500, 64, dtype=np.float32).reshape(4, 16)
    out = np.empty((4, 16), md.float8_e4m3fn)
    r = fastisa.convert(x, "float8_e4m3fn", out=out)
    assert r is out
    np.testing.assert_array_equal(bits(out), bits(x.astype(md.float8_e4m3fn)))


def test_errors():
    x = np.ones((2, 6), np.float32)
    with pytest.raises(ConstraintError, match="saturate must be False, True or 'ascend'"):
        fastisa.convert(x, "bfloat16", saturate="yes")
    with pytest.raises(ConstraintError, match="multiple of 4"):
        fastisa.convert(x, "float8_e4m3fn_x4")
    with pytest.raises(ConstraintError, match="spec format"):
        fastisa.convert(x.astype(np.float64), "bfloat16")
    with pytest.raises(ConstraintError, match="out must have dtype"):
        fastisa.convert(x, "bfloat16", out=np.empty((2, 6), np.float16))
    with pytest.raises(ConstraintError, match="out must have shape"):
        fastisa.convert(x, "bfloat16", out=np.empty((6, 2), md.bfloat16))
    with pytest.raises(ConstraintError, match="C-contiguous"):
        fastisa.convert(x, "bfloat16", out=np.empty((2, 12), md.bfloat16)[:, ::2])
    with pytest.raises(ConstraintError, match="src_dtype"):
        fastisa.convert(x, "bfloat16", src_dtype="float8_e5m2_x4")
    with pytest.raises(ConstraintError, match="dtype"):
        fastisa.convert(x, "float64")
    y = np.ones(12, np.float32)
    with pytest.raises(OverlapError):
        fastisa.convert(y, "bfloat16", out=y.view(np.uint16)[:12].view(md.bfloat16))
    with pytest.raises(ConstraintError, match="packed x4"):
        fastisa.pack_x4(np.zeros(4, np.uint8), "bfloat16")
    with pytest.raises(ConstraintError, match="codes"):
        fastisa.pack_x4(np.zeros(4, np.float32), "float8_e5m2_x4")
    with pytest.raises(ConstraintError, match="multiple of 4"):
        fastisa.pack_x4(np.zeros(6, np.uint8), "float8_e5m2_x4")
    with pytest.raises(ConstraintError, match="uint16"):
        fastisa.unpack_x4(np.zeros(4, np.uint32), "float4_e2m1fn_x4")
    before = x.copy()
    fastisa.convert(x, "float16")
    np.testing.assert_array_equal(x, before)


def test_gil_released_threads_give_same_bits():
    """Two threads converting halves give the same bits as one call (the timing side of
    the nogil claim is in bench/bench_convert.py)."""
    x = np.random.default_rng(1).standard_normal(1 << 20).astype(np.float32)
    whole = fastisa.convert(x, "float8_e4m3fn")
    out = np.empty_like(whole)
    h = x.size // 2
    ts = [threading.Thread(target=fastisa.convert, args=(x[i:i + h], "float8_e4m3fn"),
                           kwargs={"out": out[i:i + h]}) for i in (0, h)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    np.testing.assert_array_equal(bits(out), bits(whole))


# ---- exhaustive (slow) ----------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("name", SMALL_FLOATS)
def test_encode_all_2_32_float32_patterns(name):
    """Every float32 bit pattern, in chunks of 2^24, against ml_dtypes (numpy for f16)."""
    dt, ut = ORACLE_TYPES[name]
    chunk = 1 << 24
    base = np.arange(chunk, dtype=np.uint32)
    out = np.empty(chunk, dt)
    t0 = time.perf_counter()
    for k in range(1 << 8):
        x = (base + np.uint32(k * chunk)).view(np.float32)
        fastisa.convert(x, name, out=out)
        ref = x.astype(dt)
        if not np.array_equal(bits(out), bits(ref)):
            bad = np.nonzero(bits(out) != bits(ref))[0]
            raise AssertionError(f"{name}: {bad.size} mismatches in chunk {k}, first input "
                                 f"{hex(int(x.view(np.uint32)[bad[0]]))}")
    print(f"{name}: all 2^32 inputs in {time.perf_counter() - t0:.1f} s")


# ---- formats.h scalar primitives -----------------------------------------------------

def test_formats_h_f32_primitives_agree_with_convert(stratified):
    x = np.ascontiguousarray(stratified[::4])
    h = np.empty(x.size, np.uint16)
    K.f32_to_f16(x, h)
    np.testing.assert_array_equal(h, bits(fastisa.convert(x, "float16")))
    K.f32_to_bf16(x, h)
    np.testing.assert_array_equal(h, bits(fastisa.convert(x, "bfloat16")))
    codes = np.arange(1 << 16, dtype=np.uint16)
    f = np.empty(codes.size, np.float32)
    K.f16_to_f32(codes, f)
    np.testing.assert_array_equal(bits(f), bits(codes.view(np.float16).astype(np.float32)))
    K.bf16_to_f32(codes, f)
    np.testing.assert_array_equal(bits(f), codes.astype(np.uint32) << 16)


def test_formats_h_f64_single_rounding(stratified):
    """fi_f64_to_f16 equals numpy's float64 -> float16 astype (one rounding, numpy's NaN
    rule); fi_f64_to_bf16 equals the generic RNE model applied to the double (one
    rounding; ml_dtypes would round twice through float32)."""
    rng = np.random.default_rng(11)
    u = rng.integers(0, 2**64, size=1 << 20, dtype=np.uint64)
    u[: 1 << 16] = (np.arange(1 << 16, dtype=np.uint64) << 48) | np.uint64(1 << 28)  # ties+eps
    d = np.concatenate([u.view(np.float64), stratified[::64].astype(np.float64),
                        [1 + 2.0**-8 + 2.0**-40, 65520.0, 65519.999, 2.0**-25, 2.0**-25 * 1.0000001]])
    h = np.empty(d.size, np.uint16)
    K.f64_to_f16(d, h)
    np.testing.assert_array_equal(h, bits(d.astype(np.float16)))
    K.f64_to_bf16(d, h)
    ok = ~np.isnan(d)
    want = _bf16_from_f64(d[ok])
    np.testing.assert_array_equal(h[ok].astype(np.int64), want)
    assert np.all((h[~ok] & 0x7FFF) == 0x7FC0)
    # reference/numerics.md 4 (#401): 1 + 2^-8 + 2^-40 -> bf16 1.0078125 with one rounding
    K.f64_to_bf16(np.array([1 + 2.0**-8 + 2.0**-40]), h[:1])
    assert h[0] == 0x3F81


def _bf16_from_f64(d):
    """RNE of doubles to bfloat16 by the generic model (exact in float64 arithmetic on
    the integer mantissa; huge and tiny values handled by the exponent clamp)."""
    a = np.abs(d)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        q = np.maximum(np.floor(np.log2(np.where(a > 0, a, 1.0))), -126) - 7
        q = np.where(np.isfinite(a), q, 0)
        r = np.rint(a / np.exp2(q)) * np.exp2(q)
    r = np.where(r > R.FLOAT_DEFS["bfloat16"][6], np.inf, r)
    r32 = r.astype(np.float32)      # exact: r is a bfloat16 value or inf
    return ((r32.view(np.uint32) >> 16) | (np.signbit(d).astype(np.uint32) << 15)).astype(np.int64)


def test_formats_h_f16_saturate_every_code():
    codes = np.arange(1 << 16, dtype=np.uint16)
    out = np.empty_like(codes)
    K.f16_saturate(codes, out)
    a = codes & 0x7FFF
    want = np.where(a > 0x7C00, 0, np.where(a == 0x7C00, (codes & 0x8000) | 0x7BFF, codes))
    np.testing.assert_array_equal(out, want.astype(np.uint16))
    # and convert(saturate="ascend") to float16 == fi_f16_saturate(default result)
    x = np.random.default_rng(4).integers(0, 2**32, 1 << 16, dtype=np.uint64).astype(
        np.uint32).view(np.float32)
    K.f16_saturate(bits(fastisa.convert(x, "float16")).copy(), out)
    np.testing.assert_array_equal(out, bits(fastisa.convert(x, "float16", saturate="ascend")))
