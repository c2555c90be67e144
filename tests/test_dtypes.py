"""The format registry (fastisa.dtypes) against spec 000's table, ml_dtypes.finfo, the C
traits table in csrc/fastisa/convert.h and the decoders."""

import ml_dtypes as md
import numpy as np
import pytest

import fastisa
import reference as R
from fastisa import dtypes as D
from fastisa._kernels import convert as K
from fastisa.errors import ConstraintError

SPEC_NAMES = ["uint8", "int8", "uint16", "int16", "uint32", "int32", "float8_e4m3",
              "float8_e5m2", "float8_e4m3fn", "float8_e8m0fnu", "float16", "bfloat16",
              "tfloat32", "float32", "float8_e5m2_x4", "float8_e4m3fn_x4", "float4_e2m1fn_x4",
              "bool_"]
KINDS = {0: "int", 1: "float", 2: "packed", 3: "bool"}
OVERFLOW = {0: "inf", 1: "nan", 2: "saturate", 3: "none"}


def test_every_spec_format_is_registered():
    """spec 000 Table 7, plus the unpacked float4_e2m1fn the x4 form builds on."""
    assert sorted(D.FORMATS) == sorted(SPEC_NAMES + ["float4_e2m1fn"])
    for name in D.FORMATS:
        assert getattr(D, name) is D.FORMATS[name]


def test_registry_agrees_with_c_traits():
    table = K.traits()
    assert len(table) == len(D.FORMATS)
    for t in table:
        f = D.by_code(t["code"])
        assert f.name == t["name"]
        assert f.kind == KINDS[t["kind"]]
        assert f.bits == t["bits"]
        assert (f.exp_bits, f.man_bits, f.bias) == (t["exp_bits"], t["man_bits"], t["bias"])
        assert f.signed == t["is_signed"]
        assert (f.max_finite, f.min_normal, f.min_subnormal) == \
            (t["max_finite"], t["min_normal"], t["min_subnormal"]), f.name
        assert f.has_inf == t["has_inf"]
        assert tuple(f.nan_codes) == t["nan_codes"], f.name
        assert f.overflow == OVERFLOW[t["overflow"]], f.name
        assert f.np_dtype.itemsize * 8 == t["container_bits"], f.name
        assert f.lanes == t["lanes"]
        elem = D.by_code(t["element"])
        assert (f.element or f.name) == elem.name


@pytest.mark.parametrize("name", ["bfloat16", "float16", "float8_e4m3", "float8_e5m2",
                                  "float8_e4m3fn", "float8_e8m0fnu", "float4_e2m1fn"])
def test_limits_match_ml_dtypes_finfo(name):
    f = D.lookup(name)
    fi = md.finfo(f.np_dtype)
    assert f.np_dtype == np.dtype(fi.dtype)
    assert f.max_finite == float(fi.max)
    assert f.min_normal == float(fi.smallest_normal)
    if name != "float8_e8m0fnu":
        assert f.min_subnormal == float(fi.smallest_subnormal)
        assert f.man_bits == fi.nmant and f.exp_bits == fi.nexp
    assert f.bits == fi.bits


@pytest.mark.parametrize("name", list(R.FLOAT_DEFS))
def test_registry_matches_format_definitions(name):
    E, M, B, signed, has_inf, nan, mx = R.FLOAT_DEFS[name]
    f = D.lookup(name)
    assert (f.exp_bits, f.man_bits, f.bias, f.signed, f.has_inf, f.max_finite) == \
        (E, M, B, signed, has_inf, mx)
    nb = 1 + E + M if signed else E + M
    vals, isnan = R.float_decode(name, np.arange(1 << nb))
    fin = vals[np.isfinite(vals) & (vals > 0)]
    assert fin.max() == mx
    if name == "float8_e8m0fnu":
        assert f.min_normal == fin.min() and f.min_subnormal == 0.0
    else:
        assert f.min_subnormal == fin.min()
        assert f.min_normal == 2.0 ** (1 - B)
    if nb <= 8:   # every NaN code is listed
        assert set(f.nan_codes) == set(np.nonzero(isnan)[0].tolist())
    else:         # canonical quiet NaNs
        assert all(isnan[c] for c in f.nan_codes if c < (1 << nb))


def test_packed_and_container_formats():
    for name, cont, elem in [("float8_e5m2_x4", np.uint32, "float8_e5m2"),
                             ("float8_e4m3fn_x4", np.uint32, "float8_e4m3fn"),
                             ("float4_e2m1fn_x4", np.uint16, "float4_e2m1fn")]:
        f = D.lookup(name)
        e = D.lookup(elem)
        assert f.np_dtype == cont and f.lanes == 4 and f.element == elem and f.container
        assert (f.exp_bits, f.man_bits, f.bias, f.max_finite, f.nan_codes) == \
            (e.exp_bits, e.man_bits, e.bias, e.max_finite, e.nan_codes)
    assert D.tfloat32.np_dtype == np.float32 and D.tfloat32.container
    assert D.bool_.np_dtype == np.uint8


def test_lookup():
    assert D.lookup("bfloat16") is D.bfloat16
    assert D.lookup(D.float16) is D.float16
    assert D.lookup(md.bfloat16) is D.bfloat16
    assert D.lookup(np.dtype(md.float8_e4m3fn)) is D.float8_e4m3fn
    assert D.lookup(np.float32) is D.float32
    assert D.lookup(np.uint16) is D.uint16
    assert D.lookup(np.bool_) is D.bool_
    assert D.lookup("bool") is D.bool_ and D.lookup("bf16") is D.bfloat16
    assert D.lookup(md.float4_e2m1fn) is D.float4_e2m1fn
    for bad in ["float64", np.float64, "nope", md.float8_e4m3fnuz, 3]:
        with pytest.raises(ConstraintError):
            D.lookup(bad)


def test_int_limits():
    for name in ["uint8", "int8", "uint16", "int16", "uint32", "int32"]:
        f = D.lookup(name)
        assert f.max_finite == float(np.iinfo(f.np_dtype).max)
        assert f.signed == (np.iinfo(f.np_dtype).min < 0)
        assert f.overflow == "saturate"


def test_public_api():
    assert fastisa.convert is fastisa.numerics.convert
    assert callable(fastisa.pack_x4) and callable(fastisa.unpack_x4)
