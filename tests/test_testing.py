"""fastisa.testing against hand-made mismatches: every assertion must fail on them, with
a report naming the first differing elements and their bit patterns."""

import re

import ml_dtypes
import numpy as np
import pytest

import fastisa
from fastisa.testing import assert_bits_equal, assert_ulp_close, ulp_distance

FLOATS = ["bfloat16", "float16", "float32", "float8_e4m3", "float8_e5m2", "float8_e4m3fn",
          "float8_e8m0fnu", "float4_e2m1fn"]


def _arr(name, values):
    return np.asarray(values, np.float64).astype(fastisa.dtypes.lookup(name).np_dtype)


def _bits(a):
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32}[a.dtype.itemsize])


@pytest.mark.parametrize("name", FLOATS)
def test_bits_equal_passes_on_identical_and_fails_on_one_bit(name):
    a = _arr(name, [1.0, 2.0, 0.5, 4.0])
    assert_bits_equal(a, a.copy())
    b = a.copy()
    _bits(b)[2] ^= 1                       # flip the lowest bit of element 2
    with pytest.raises(AssertionError) as e:
        assert_bits_equal(a, b)
    msg = str(e.value)
    assert f"Arrays are not bit-identical ({name})" in msg
    assert "Mismatched elements: 1 / 4 (25%)" in msg
    code_a, code_b = int(_bits(a)[2]), int(_bits(b)[2])
    assert re.search(r"\[2\]: 0x0*%x \(.*\) \| 0x0*%x" % (code_a, code_b), msg), msg


def test_bits_equal_nan_payload_and_signed_zero():
    a = np.array([0x7FC0, 0x0000], np.uint16).view(ml_dtypes.bfloat16)
    b = np.array([0x7FC1, 0x8000], np.uint16).view(ml_dtypes.bfloat16)
    with pytest.raises(AssertionError) as e:
        assert_bits_equal(a, b)
    msg = str(e.value)
    assert "Mismatched elements: 2 / 2" in msg
    assert "[0]: 0x7fc0 (nan) | 0x7fc1 (nan)" in msg
    assert "[1]: 0x0000 (0.0) | 0x8000 (-0.0)" in msg
    # numpy's own equality would accept both differences
    np.testing.assert_array_equal(a.astype(np.float32), b.astype(np.float32))


def test_bits_equal_report_lists_first_mismatches_only():
    a = np.zeros((4, 8), np.float32)
    b = a.copy()
    b[1:, :] = 1.0
    with pytest.raises(AssertionError) as e:
        assert_bits_equal(a, b, max_report=3, err_msg="row 1 on")
    msg = str(e.value)
    assert "row 1 on" in msg and "Mismatched elements: 24 / 32 (75%)" in msg
    assert "[1, 0]: 0x00000000 (0.0) | 0x3f800000 (1.0)" in msg
    assert "[1, 2]" in msg and "[1, 3]" not in msg and "... 21 more" in msg


def test_bits_equal_dtype_shape_and_values():
    a = _arr("bfloat16", [1.0, 3.0])
    assert_bits_equal(a, [1.0, 3.0])              # lists are values, rounded into bf16
    with pytest.raises(AssertionError, match="different dtypes"):
        assert_bits_equal(a, a.astype(np.float32))
    with pytest.raises(AssertionError, match="shapes"):
        assert_bits_equal(a, np.zeros(3, a.dtype))
    assert_bits_equal(np.full(3, 2, np.int32), np.int32(2))   # broadcast


def test_bits_equal_packed_x4_reports_container_and_lane():
    codes = np.arange(8, dtype=np.uint8).view(ml_dtypes.float8_e4m3fn).reshape(1, 8)
    w = fastisa.pack_x4(codes, "float8_e4m3fn_x4")            # (1, 2) uint32
    v = w.copy()
    v[0, 1] ^= np.uint32(0x01 << 16)                         # element 6 = container 1, lane 2
    assert_bits_equal(w, w.copy(), "float8_e4m3fn_x4")
    with pytest.raises(AssertionError) as e:
        assert_bits_equal(w, v, "float8_e4m3fn_x4")
    msg = str(e.value)
    assert "(float8_e4m3fn_x4)" in msg and "Mismatched elements: 1 / 8" in msg
    assert "[0, 1] lane 2: 0x06" in msg and "| 0x07" in msg
    f4 = fastisa.pack_x4(np.arange(8, dtype=np.uint8).reshape(2, 4), "float4_e2m1fn_x4")
    g4 = f4.copy()
    g4[1] ^= np.uint16(0x8 << 12)                              # lane 3 sign bit
    with pytest.raises(AssertionError, match=r"\[1, 0\] lane 3: 0x7 \(6.0\) \| 0xf \(-6.0\)"):
        assert_bits_equal(f4, g4, "float4_e2m1fn_x4")


def test_bits_equal_tfloat32_container():
    x = fastisa.convert(np.array([1.0, 1.5], np.float32), "tfloat32")
    y = x.copy()
    y.view(np.uint32)[1] += 1 << 13                          # one tf32 ULP
    with pytest.raises(AssertionError, match=r"\(tfloat32\).*\n.*\n.*\n  \[1\]: 0x3fc00000"):
        assert_bits_equal(x, y, "tfloat32")
    with pytest.raises(TypeError, match="stored as float32"):
        assert_bits_equal(x.astype(np.float16), x.astype(np.float16), "tfloat32")


def test_bits_equal_accepts_tensors_and_tiles():
    from fastisa import pto
    t = pto.Tile(pto.TileType.Vec, "float32", 8, 8)
    t.data[:] = 1.0
    assert_bits_equal(t, np.ones((8, 8), np.float32))


@pytest.mark.parametrize("name", ["bfloat16", "float16", "float32", "float8_e4m3",
                                  "float8_e5m2", "float8_e4m3fn", "float4_e2m1fn"])
def test_ulp_close_counts_representable_values(name):
    fmt = fastisa.dtypes.lookup(name)
    a = _arr(name, [1.0, 1.0, -1.0, 0.0])
    b = a.copy()
    _bits(b)[0] += 1                                         # +1 ULP above 1.0
    _bits(b)[1] -= 1                                         # 1 ULP below 1.0
    _bits(b)[2] += 1                                         # -1.0 -> one step more negative
    b[3] = -b[3]                                             # -0 vs +0: 0 ULP
    assert list(ulp_distance(a, b)) == [1, 1, 1, 0]
    assert_ulp_close(a, b, maxulp=1)
    c = b.copy()
    _bits(c)[0] += 1                                         # now 2 ULP
    with pytest.raises(AssertionError) as e:
        assert_ulp_close(a, c, maxulp=1)
    msg = str(e.value)
    assert f"Arrays are not within 1 ULP ({name})" in msg
    assert "Max ULP difference: 2 (allowed 1)" in msg
    assert re.search(r"\[0\]: 0x0*%x \(1.0\) \| 0x0*%x \(.*\) \| 2" % (_bits(a)[0], _bits(c)[0]),
                     msg), msg
    assert fmt.name in msg


def test_ulp_close_across_zero_and_subnormals():
    a = np.array([0x0001, 0x8001, 0x007F, 0x0080], np.uint16).view(ml_dtypes.bfloat16)
    b = np.array([0x8001, 0x0001, 0x0080, 0x007F], np.uint16).view(ml_dtypes.bfloat16)
    # smallest subnormals of opposite signs are 2 apart (via zero); max subnormal and min
    # normal are neighbours
    assert list(ulp_distance(a, b)) == [2, 2, 1, 1]


def test_ulp_close_nan_and_inf():
    inf, nan = np.float32(np.inf), np.float32(np.nan)
    mx = np.finfo(np.float32).max
    a = np.array([nan, inf, -inf, nan, inf], np.float32)
    b = np.array([-nan, inf, -inf, 1.0, mx], np.float32)
    d = ulp_distance(a, b)
    assert list(d) == [0, 0, 0, -1, -1]                     # inf is never 1 ULP from max
    with pytest.raises(AssertionError) as e:
        assert_ulp_close(a, b, maxulp=100)
    msg = str(e.value)
    assert "NaN/inf mismatches: 2" in msg and "[3]: 0x7fc00000 (nan) | 0x3f800000" in msg
    e4 = np.array([0x7F, 0x7E], np.uint8).view(ml_dtypes.float8_e4m3fn)   # NaN, 448
    assert list(ulp_distance(e4, e4[::-1].copy())) == [-1, -1]


def test_ulp_close_float64_reference_is_rounded_first():
    x = np.array([1 + 2**-8, 1 + 3 * 2**-8], np.float64)          # bf16 ties
    exact = x.astype(ml_dtypes.bfloat16)                            # RNE: 1.0, 1+2**-6
    assert_ulp_close(exact, x, maxulp=0)
    off = exact.copy()
    off.view(np.uint16)[1] -= 1
    with pytest.raises(AssertionError, match="within 0 ULP"):
        assert_ulp_close(off, x, maxulp=0)
    assert_ulp_close(off, x, maxulp=1)


def test_ulp_close_e8m0_and_packed_and_tf32():
    e = np.array([127, 128], np.uint8).view(ml_dtypes.float8_e8m0fnu)       # 1, 2
    f = np.array([128, 130], np.uint8).view(ml_dtypes.float8_e8m0fnu)
    assert list(ulp_distance(e, f)) == [1, 2]
    w = fastisa.pack_x4(np.full((1, 4), 0x38, np.uint8), "float8_e5m2_x4")   # 4 x 0.5
    v = w + np.uint32(3 << 8)                                                 # lane 1: +3
    assert list(ulp_distance(w, v, "float8_e5m2_x4").ravel()) == [0, 3, 0, 0]
    with pytest.raises(AssertionError, match=r"\[0, 0\] lane 1: 0x38 \(0.5\) \| 0x3b .* \| 3"):
        assert_ulp_close(w, v, 2, "float8_e5m2_x4")
    t = fastisa.convert(np.array([1.0], np.float32), "tfloat32")
    u = t.copy()
    u.view(np.uint32)[0] += 2 << 13
    assert list(ulp_distance(t, u, "tfloat32")) == [2]
    assert_ulp_close(t, u, 2, "tfloat32")


def test_ulp_close_integers():
    assert_ulp_close(np.array([5, -3], np.int32), np.array([6, -3], np.int32), maxulp=1)
    with pytest.raises(AssertionError, match="Max ULP difference: 10"):
        assert_ulp_close(np.array([5], np.int8), np.array([-5], np.int8), maxulp=1)
