"""Branch ptolowp (issue 13): PTO low-precision / 64-bit tile formats, their memory-safety
rule, TCVT over them, GlobalTensor NZ and container dtypes.  Oracles: tests/reference.py
(ptolowp_*), ml_dtypes, and en_dtypes where it is installed."""

from __future__ import annotations

import inspect

import ml_dtypes
import numpy as np
import pytest

import reference as ref
from fastisa import errors, pto

V = pto.TileType.Vec
LOWP = ["float8_e4m3fn", "float8_e5m2", "hifloat8", "int4", "float4_e2m1x2", "float4_e1m2x2",
        "int64", "uint64"]
#: instructions that accept low-precision tiles (data movement, conversion, printing)
ALLOWED = {"TCVT", "TMOV", "TTRANS", "TEXTRACT", "TINSERT", "TPRINT", "TASSIGN", "TLOAD",
           "TSTORE", "TGET_SCALE_ADDR", "TEXTRACT_FP", "TINSERT_FP"}


def _instructions():
    out = []
    for n in pto.__all__:
        fn = getattr(pto, n)
        if n.isupper() and callable(fn) and not isinstance(fn, type):
            try:
                sig = inspect.signature(fn)
            except (TypeError, ValueError):
                continue
            ps = [p for p in sig.parameters.values() if p.default is inspect.Parameter.empty
                  and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
            if ps:
                out.append((n, len(ps)))
    return out


@pytest.mark.parametrize("fmt", ["hifloat8", "int64", "float4_e2m1x2", "float8_e4m3fn", "int4"])
def test_every_vector_instruction_refuses_lowp_tiles(fmt):
    """Every instruction outside ALLOWED refuses a low-precision tile in any Tile position
    with a fastisa error before its kernel runs, and changes nothing."""
    cols = 32 if fmt != "int64" else 8
    for name, n in _instructions():
        if name in ALLOWED:
            continue
        for k in range(n):
            lp = pto.Tile(V, fmt, 8, cols)
            lp.buffer.view(np.uint8)[:] = np.arange(lp.nbytes) % 251
            before = lp.buffer.copy()
            args = [lp if i == k else pto.Tile(V, "float32", 8, cols) for i in range(n)]
            with pytest.raises((errors.ConstraintError, errors.AccessError, NotImplementedError,
                                errors.AlignmentError)) as ei:
                getattr(pto, name)(*args)
            assert np.array_equal(lp.buffer.view(np.uint8), before.view(np.uint8)), name
            if isinstance(ei.value, errors.ConstraintError) and fmt in str(ei.value):
                assert str(ei.value).startswith(name) or name in str(ei.value), str(ei.value)


def test_operand_backstop_refuses_lowp():
    from fastisa.pto._ops import _operand
    with pytest.raises(errors.ConstraintError, match="cannot be passed to a C tile kernel"):
        _operand(pto.Tile(V, "hifloat8", 2, 32))


@pytest.mark.parametrize("fmt,isz", [("float8_e4m3fn", 1), ("float8_e5m2", 1), ("hifloat8", 1),
                                     ("int4", 1), ("float4_e2m1x2", 1), ("int64", 8),
                                     ("uint64", 8)])
def test_lowp_tile_storage_and_alignment(fmt, isz):
    t = pto.Tile(V, fmt, 4, 32 // isz)
    assert t.nbytes == 4 * 32 and t.data.shape == (4, 32 // isz)
    with pytest.raises(errors.AlignmentError):
        pto.Tile(V, fmt, 4, 16 // isz + 1)
    assert pto.Tile(V, {"i64": "int64"}.get(fmt, fmt), 1, 32 // isz).format.name == fmt


def test_lowp_aliases_and_numpy_dtypes():
    assert pto.Tile(V, ml_dtypes.float8_e4m3fn, 1, 32).format.name == "float8_e4m3fn"
    assert pto.Tile(V, "float8_e4m3_t", 1, 32).format.name == "float8_e4m3fn"
    assert pto.Tile(V, np.int64, 1, 4).format.name == "int64"
    assert pto.Tile(V, "hif8", 1, 32).format.name == "hifloat8"
    with pytest.raises(errors.ConstraintError, match="Tile: dtype must be one of"):
        pto.Tile(V, "float64", 1, 4)


@pytest.mark.parametrize("fmt", ["hifloat8", "int64", "float8_e5m2", "float4_e1m2x2"])
def test_moves_copy_bits(fmt):
    isz = 8 if fmt == "int64" else 1
    c = 32 // isz
    rng = np.random.default_rng(1)
    a = pto.Tile(V, fmt, 8, c)
    a.buffer.view(np.uint8)[:] = rng.integers(0, 256, a.nbytes)
    b = pto.Tile(V, fmt, 8, c)
    pto.TMOV(b, a)
    assert b.buffer.tobytes() == a.buffer.tobytes()
    e = pto.Tile(V, fmt, 4, c, valid_row=3, valid_col=c // 2)
    e.buffer.view(np.uint8)[:] = 7
    keep = e.buffer.copy()
    pto.TEXTRACT(e, a, 2, c // 4)
    assert e.valid.tobytes() == np.ascontiguousarray(a.data[2:5, c // 4:c // 4 + c // 2]).tobytes()
    outside = np.ones(e.data.shape, bool)
    outside[:3, :c // 2] = False
    assert (e.data.view(np.uint8).reshape(4, -1)[np.repeat(outside, isz, axis=1)] == 7).all()
    assert keep.size == e.buffer.size
    i = pto.Tile(V, fmt, 8, c)
    pto.TINSERT(i, e, 4, 0)
    assert i.data[4:7, :c // 2].tobytes() == e.valid.tobytes()
    if fmt != "float4_e1m2x2":
        n = 32 if isz == 1 else 4
        src = pto.Tile(V, fmt, n, n, valid_col=n // 2)
        src.buffer.view(np.uint8)[:] = rng.integers(0, 256, src.nbytes)
        t = pto.Tile(V, fmt, n, n, valid_row=n // 2)
        pto.TTRANS(t, src)
        assert np.ascontiguousarray(t.valid).tobytes() == np.ascontiguousarray(src.valid.T).tobytes()


def test_lowp_move_errors():
    a = pto.Tile(V, "hifloat8", 8, 32)
    with pytest.raises(errors.ConstraintError, match="TMOV: dst.dtype must equal src.dtype"):
        pto.TMOV(pto.Tile(V, "uint8", 8, 32), a)
    with pytest.raises(errors.ConstraintError, match="TTRANS: src.dtype must not be a packed"):
        pto.TTRANS(pto.Tile(V, "float4_e2m1x2", 32, 32), pto.Tile(V, "float4_e2m1x2", 32, 32))
    with pytest.raises(errors.ConstraintError, match="TEXTRACT: relu must be False"):
        pto.TEXTRACT(pto.Tile(V, "hifloat8", 8, 32), a, relu=True)


def test_pad_values_of_lowp_tiles():
    gt = pto.GlobalTensor(np.arange(32, dtype=np.uint8).reshape(1, 32), dtype="hifloat8")
    t = pto.Tile(V, "hifloat8", 2, 32, valid_row=1, pad=pto.PadValue.Max)
    pto.TLOAD(t, gt)
    assert t.data[0].tolist() == list(range(32)) and (t.data[1] == 0).all()   # A5: code 0
    t = pto.Tile(V, "float4_e2m1x2", 2, 32, valid_row=1, pad=pto.PadValue.Min)
    pto.TLOAD(t, pto.GlobalTensor(np.full((1, 32), 0x33, np.uint8), dtype="float4_e2m1x2"))
    assert (t.data[0] == 0x33).all() and (t.data[1] == 0).all()
    t = pto.Tile(V, "int64", 2, 4, valid_row=1, pad=pto.PadValue.Max)
    pto.TLOAD(t, pto.GlobalTensor(np.zeros((1, 4), np.int64)))
    assert (t.data[1] == np.iinfo(np.int64).max).all()


def test_globaltensor_container_dtype_errors():
    with pytest.raises(errors.ConstraintError, match="GlobalTensor: array must hold int64"):
        pto.GlobalTensor(np.zeros(4, np.int32), dtype="int64")
    t = pto.Tile(V, "hifloat8", 1, 32)
    with pytest.raises(errors.ConstraintError, match="TLOAD: src.dtype must equal"):
        pto.TLOAD(t, pto.GlobalTensor(np.zeros((1, 32), np.uint8)))


def test_globaltensor_nz_layout():
    """NZ: element (i2*16 + i3, (i0*n1 + i1)*C0 + i4) at offset sum(i_k * stride_k)."""
    n = (2, 1, 3, 16, 8)
    w = np.arange(2 * 1 * 4 * 16 * 8, dtype=np.float32)
    strides = (4 * 16 * 8, 4 * 16 * 8, 16 * 8, 8, 1)
    gt = pto.GlobalTensor(w, n, strides, pto.Layout.NZ)
    assert (gt.rows, gt.cols) == (48, 16)
    want = np.empty((48, 16), np.float32)
    for i0 in range(2):
        for i2 in range(3):
            for i3 in range(16):
                for i4 in range(8):
                    want[i2 * 16 + i3, i0 * 8 + i4] = w[i0 * strides[0] + i2 * strides[2]
                                                        + i3 * strides[3] + i4]
    t = pto.Tile(V, "float32", 48, 16, blayout=pto.BLayout.ColMajor, slayout=pto.SLayout.RowMajor)
    pto.TLOAD(t, gt)
    assert np.array_equal(t.data, want)
    out = np.zeros_like(w)
    pto.TSTORE(pto.GlobalTensor(out, n, strides, pto.Layout.NZ), t)
    mask = np.zeros(w.size, bool)
    mask[pto.GlobalTensor(np.arange(w.size, dtype=np.int32), n, strides,
                          pto.Layout.NZ).view2d().reshape(-1)] = True
    assert np.array_equal(out[mask], w[mask]) and (out[~mask] == 0).all()
    with pytest.raises(errors.ConstraintError, match="NZ tensor must end in the 16 x C0"):
        pto.GlobalTensor(w, (2, 1, 3, 8, 16), strides, pto.Layout.NZ)


# ---- TCVT --------------------------------------------------------------------------------

def _codes_tile(fmt, codes, cols=None):
    codes = np.asarray(codes, np.uint8).reshape(-1, 32)
    t = pto.Tile(V, fmt, codes.shape[0], 32)
    t.data[:] = codes.view(t.dtype)
    return t


def _hif8_table():
    return np.array([ref.ptolowp_hif8_value(c) for c in range(256)])


def _table(fmt):
    if fmt == "hifloat8":
        return _hif8_table()
    if fmt == "int4":
        return np.array([c - 16 if c & 8 else c for c in range(16)], np.float64)
    if fmt == "float4_e2m1x2":
        return np.array([ref.ptolowp_fp4_value(c, 2, 1) for c in range(16)])
    if fmt == "float4_e1m2x2":
        return np.array([ref.ptolowp_fp4_value(c, 1, 2) for c in range(16)])
    dt = {"float8_e4m3fn": ml_dtypes.float8_e4m3fn, "float8_e5m2": ml_dtypes.float8_e5m2}[fmt]
    return np.arange(256, dtype=np.uint8).view(dt).astype(np.float64)


def _same(a, b):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return bool((((a == b) & (np.signbit(a) == np.signbit(b))) | (np.isnan(a) & np.isnan(b))).all())


@pytest.mark.parametrize("fmt", ["float8_e4m3fn", "float8_e5m2", "hifloat8"])
def test_tcvt_every_8bit_code_to_float32(fmt):
    src = _codes_tile(fmt, np.arange(256))
    dst = pto.Tile(V, "float32", 8, 32)
    pto.TCVT(dst, src, pto.RoundMode.CAST_RINT)
    assert _same(dst.data.reshape(-1), _table(fmt))


def test_hif8_decode_matches_en_dtypes():
    en = pytest.importorskip("en_dtypes")
    want = np.arange(256, dtype=np.uint8).view(en.hifloat8).astype(np.float64)
    assert _same(_hif8_table(), want)


@pytest.mark.parametrize("fmt,pair", [("int4", "float16"), ("int4", "float32"),
                                      ("float4_e2m1x2", "bfloat16"),
                                      ("float4_e1m2x2", "bfloat16"),
                                      ("float4_e2m1x2", "float32")])
def test_tcvt_every_4bit_code(fmt, pair):
    t = _table(fmt)
    if fmt == "int4":
        src = _codes_tile(fmt, np.tile(np.arange(16), 2))
        want = t[np.tile(np.arange(16), 2)]
        dst = pto.Tile(V, pair, 1, 32)
    else:                                    # x2: byte j = codes (2j, 2j+1)
        codes = np.arange(64) % 16
        src = _codes_tile(fmt, (codes[0::2] | codes[1::2] << 4))
        want = t[codes]
        dst = pto.Tile(V, pair, 1, 64)
    pto.TCVT(dst, src, "RINT")
    assert _same(dst.data.reshape(-1).astype(np.float64), want)


_F16 = np.arange(65536, dtype=np.uint16).view(np.float16)


@pytest.mark.parametrize("fmt", ["float8_e4m3fn", "float8_e5m2"])
def test_tcvt_every_float16_value_to_fp8_is_ml_dtypes(fmt):
    """float32 sources holding every float16 value -> fp8 with CAST_RINT: ml_dtypes' astype
    (RNE; E5M2 overflows to inf, E4M3 to NaN)."""
    x = _F16.astype(np.float32).reshape(-1, 256)
    src = pto.Tile(V, "float32", x.shape[0], 256)
    src.data[:] = x
    dst = pto.Tile(V, fmt, x.shape[0], 256)
    pto.TCVT(dst, src, "RINT")
    want = x.astype(getattr(ml_dtypes, fmt)).view(np.uint8)
    got = dst.data.view(np.uint8)
    assert np.array_equal(got, want)


@pytest.mark.parametrize("mode", ["RINT", "ROUND"])
def test_tcvt_every_float16_value_to_hif8(mode):
    """float16 -> hifloat8 (a documented A5 pair) over every code, against the brute-force
    nearest oracle; CAST_ROUND (ties away) also equals en_dtypes' astype."""
    x = _F16.reshape(-1, 256)
    src = pto.Tile(V, "float16", x.shape[0], 256)
    src.data[:] = x
    dst = pto.Tile(V, "hifloat8", x.shape[0], 256)
    pto.TCVT(dst, src, mode)
    got = dst.data.view(np.uint8).reshape(-1).astype(np.int64)
    xf = _F16.astype(np.float64)
    fin = np.isfinite(xf) & (np.abs(xf) <= 32768)
    want = ref.ptolowp_nearest(_hif8_table(), xf[fin], "even" if mode == "RINT" else "away")
    assert np.array_equal(got[fin], want)
    assert (got[np.isnan(xf)] == 0x80).all()
    assert (got[xf == np.inf] == 0x6F).all() and (got[xf == -np.inf] == 0xEF).all()


def test_hif8_round_matches_en_dtypes():
    en = pytest.importorskip("en_dtypes")
    x = _F16.reshape(-1, 256)
    src = pto.Tile(V, "float16", x.shape[0], 256)
    src.data[:] = x
    dst = pto.Tile(V, "hifloat8", x.shape[0], 256)
    pto.TCVT(dst, src, "ROUND")
    with np.errstate(invalid="ignore"):
        want = _F16.astype(np.float32).astype(en.hifloat8).view(np.uint8)
    assert np.array_equal(dst.data.view(np.uint8).reshape(-1), want)


@pytest.mark.parametrize("fmt", ["float4_e2m1x2", "float4_e1m2x2"])
def test_tcvt_every_bfloat16_value_to_fp4(fmt):
    """bfloat16 -> fp4 x2 (A5): nearest even inside the range, clamped outside (no inf/NaN
    codes; NaN -> 0)."""
    x = np.arange(65536, dtype=np.uint16).view(ml_dtypes.bfloat16).reshape(-1, 256)
    src = pto.Tile(V, "bfloat16", x.shape[0], 256)
    src.data[:] = x
    dst = pto.Tile(V, fmt, x.shape[0], 128)
    pto.TCVT(dst, src, "RINT")
    raw = dst.data.view(np.uint8)
    codes = np.empty((x.shape[0], 256), np.int64)
    codes[:, 0::2], codes[:, 1::2] = raw & 0xF, raw >> 4
    t = _table(fmt)
    xf = x.astype(np.float64).reshape(-1)
    mx = t.max()
    want = ref.ptolowp_nearest(t, np.where(np.isnan(xf), 0.0, np.clip(xf, -mx, mx)), "even")
    want[np.isnan(xf)] = 0
    assert np.array_equal(codes.reshape(-1), want)
    if fmt == "float4_e2m1x2":
        ml = x.astype(np.float32).astype(ml_dtypes.float4_e2m1fn).view(np.uint8).reshape(-1)
        ok = ~np.isnan(xf)
        assert np.array_equal(codes.reshape(-1)[ok], ml[ok])


def test_tcvt_int64_pairs():
    a = np.array([[0, -1, 2 ** 40 + 1, -(2 ** 62), 2 ** 63 - 1, 7, -7, 2 ** 31]], np.int64)
    s = pto.Tile(V, "int64", 1, 8)
    s.data[:] = a
    f = pto.Tile(V, "float32", 1, 8)
    pto.TCVT(f, s, "RINT")
    assert np.array_equal(f.data, a.astype(np.float32))
    i = pto.Tile(V, "int32", 1, 8)
    pto.TCVT(i, s, "RINT")
    assert i.data.tolist() == [np.clip(a, -2 ** 31, 2 ** 31 - 1).astype(np.int32).tolist()[0]]
    x = pto.Tile(V, "float32", 1, 8)
    x.data[:] = [1.5, -2.5, 3e19, -3e19, np.nan, 0.49, -0.5, 1e10]
    o = pto.Tile(V, "int64", 1, 8)
    pto.TCVT(o, x, "RINT")
    assert o.data.tolist() == [[2, -2, 2 ** 63 - 1, -2 ** 63, 0, 0, 0, 10 ** 10]]
    pto.TCVT(o, x, "FLOOR")
    assert o.data[0, :2].tolist() == [1, -3]


def test_tcvt_float32_to_int4_every_mode():
    x = np.array([-9.5, -8.5, -2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 6.6, 7.5, np.nan, 100.0, -0.2, 0.7,
                  3.0, -3.0] * 2, np.float32).reshape(1, 32)
    s = pto.Tile(V, "float32", 1, 32)
    s.data[:] = x
    d = pto.Tile(V, "int4", 1, 32)
    for mode, fn in (("RINT", np.rint), ("FLOOR", np.floor), ("CEIL", np.ceil),
                     ("TRUNC", np.trunc)):
        pto.TCVT(d, s, mode)
        want = np.where(np.isnan(x), 0, np.clip(fn(x), -8, 7)).astype(np.int64) & 0xF
        assert d.data.tolist() == want.tolist(), mode


def test_tcvt_simulator_forms_for_int4_and_fp4():
    """satMode given: TCvt.hpp's computation (module doc of fastisa.pto._cvt_lowp)."""
    x = np.array([[0.4, 0.6, 1.4, 2.0, 3.0, 5.0, -5.0, 7.0] * 8], np.float32)
    s = pto.Tile(V, "float32", 1, 64)
    s.data[:] = x
    e1 = pto.Tile(V, "float4_e1m2x2", 1, 32)
    pto.TCVT(e1, s, "RINT", satMode="OFF")
    # rint first (0, 1, 1, 2, 3, 5, -5, 7), then MXType truncation with a wrapping exponent:
    # 1 -> 0b0100, 2 -> exponent 2 & 1 = 0 -> 0, 3 -> 0b0010 (exp 0, man 10), 5 -> 0b0101
    raw = e1.data.view(np.uint8)[0]
    codes = np.empty(64, np.int64)
    codes[0::2], codes[1::2] = raw & 0xF, raw >> 4
    assert codes[:8].tolist() == [0, 4, 4, 0, 2, 5, 13, 7]
    e2 = pto.Tile(V, "float4_e2m1x2", 1, 32)
    pto.TCVT(e2, s, "RINT", satMode="ON")            # clamp to [-6, 6] first
    raw = e2.data.view(np.uint8)[0]
    codes[0::2], codes[1::2] = raw & 0xF, raw >> 4
    assert codes[:8].tolist() == [0, 2, 2, 4, 5, 6, 14, 7]
    i4 = pto.Tile(V, "int4", 1, 64)
    s.data[0, 0] = np.nan
    pto.TCVT(i4, s, "RINT", satMode="OFF")           # the simulator's clamp: NaN -> 7
    assert i4.data[0, 0] == 7


def test_tcvt_lowp_errors():
    s = pto.Tile(V, "float32", 1, 32)
    with pytest.raises(errors.ConstraintError, match=r"TCVT: \(src.dtype, dst.dtype\) must be a "
                       "conversion"):
        pto.TCVT(pto.Tile(V, "float8_e4m3fn", 1, 32), pto.Tile(V, "float16", 1, 32), "RINT")
    with pytest.raises(errors.ConstraintError, match="TCVT: src valid shape must hold"):
        pto.TCVT(pto.Tile(V, "float4_e2m1x2", 1, 32), s, "RINT")
    with pytest.raises(errors.ConstraintError, match="TCVT: satMode must be"):
        pto.TCVT(pto.Tile(V, "int4", 1, 32), s, "RINT", satMode="MAYBE")
    with pytest.raises(errors.ConstraintError, match="TCVT: dst.loc must be TileType.Vec"):
        pto.TCVT(pto.Tile(pto.TileType.Mat, "hifloat8", 1, 32), s, "RINT")
    d = pto.Tile(V, "hifloat8", 1, 32)
    d.data[:] = 5
    with pytest.raises(errors.ConstraintError):
        pto.TCVT(d, pto.Tile(V, "float32", 2, 32), "RINT")
    assert (d.data == 5).all()


# ---- fixpipe: TSTORE / TSTORE_FP / TEXTRACT / TINSERT quantising forms ----------------------

_FIX_PAIRS = [("float32", "int8"), ("float32", "uint8"), ("float32", "float16"),
              ("float32", "bfloat16"), ("int32", "int8"), ("int32", "uint8"),
              ("int32", "float16"), ("int32", "int16")]


def _fix_src(src, rng, R=16, C=16):
    if src == "int32":
        return rng.integers(-70000, 70000, (R, C)).astype(np.int32)
    x = (rng.standard_normal((R, C)) * 300).astype(np.float32)
    x[0, :4] = [np.inf, -np.inf, np.nan, 7e4]
    return x


def _words(rng, n, dst):
    return np.array([pto.QuantWord.pack(rng.uniform(0.01, 5.0), rng.integers(0, 512),
                                        dst == "int8", rng.integers(0, 16)) for _ in range(n)],
                    np.uint64)


def _expect(x, src, dst, words, vector, relu, sat, col_major=False):
    R, C = x.shape
    out = np.empty((R, C), ml_dtypes.bfloat16 if dst == "bfloat16" else np.dtype(dst))
    for i in range(R):
        for j in range(C):
            w = None if words is None else words[(i if col_major else j) if vector else 0]
            out[i, j] = ref.ptolowp_fixpipe(x[i, j], src, dst, w, vector, relu, sat)
    return out


@pytest.mark.parametrize("src,dst", _FIX_PAIRS)
@pytest.mark.parametrize("vector", [False, True])
def test_tstore_fixpipe_quant(src, dst, vector):
    rng = np.random.default_rng(hash((src, dst, vector)) % 2 ** 32)
    x = _fix_src(src, rng)
    t = pto.Tile(pto.TileType.Acc, src, 16, 16)
    t.data[:] = x
    words = _words(rng, 16, dst)
    for relu in (False, True):
        for sat in (False, True):
            out = np.zeros((16, 16), ml_dtypes.bfloat16 if dst == "bfloat16" else np.dtype(dst))
            if vector:
                fp = pto.Tile(V, "uint64", 1, 16)
                fp.data[0] = words
                pto.TSTORE_FP(pto.GlobalTensor(out), t, fp, reluPreMode=int(relu), saturateInf=sat)
            else:
                pto.TSTORE(pto.GlobalTensor(out), t, int(words[0]), reluPreMode=int(relu),
                           saturateInf=sat)
            want = _expect(x, src, dst, words, vector, relu, sat)
            assert out.tobytes() == want.tobytes() or _same(out.astype(np.float64),
                                                            want.astype(np.float64))


def test_tstore_acc_plain_conversion_and_relu():
    x = np.array([[1.5, -2.25, 1e-8, 70000.0] * 4] * 2, np.float32)
    t = pto.Tile(pto.TileType.Acc, "float32", 2, 16)
    t.data[:] = x
    for dt in (np.float16, ml_dtypes.bfloat16):
        out = np.zeros((2, 16), dt)
        pto.TSTORE(pto.GlobalTensor(out), t)
        assert out.tobytes() == x.astype(dt).tobytes()
    out = np.zeros((2, 16), np.float32)
    pto.TSTORE(pto.GlobalTensor(out), t, reluPreMode=pto.ReluPreMode.NormalRelu)
    assert np.array_equal(out, np.maximum(x, 0))


def test_fp_tile_of_any_dtype_holds_words():
    """A Scaling tile declared float32 (as PTOAS programs do) holds the words in its bytes."""
    rng = np.random.default_rng(9)
    t = pto.Tile(pto.TileType.Acc, "int32", 2, 16)
    t.data[:] = rng.integers(-900, 900, (2, 16))
    words = _words(rng, 16, "int8")
    fp32 = pto.Tile(pto.TileType.Scaling, "float32", 1, 32)
    fp32.buffer.view(np.uint64)[:] = words
    fp64 = pto.Tile(V, "uint64", 1, 16)
    fp64.data[0] = words
    a, b = np.zeros((2, 16), np.int8), np.zeros((2, 16), np.int8)
    pto.TSTORE_FP(pto.GlobalTensor(a), t, fp32)
    pto.TSTORE_FP(pto.GlobalTensor(b), t, fp64)
    assert np.array_equal(a, b) and a.any()


def test_textract_tinsert_quant_forms():
    rng = np.random.default_rng(5)
    M = pto.TileType.Mat
    x = rng.integers(-3000, 3000, (32, 64)).astype(np.int32)
    src = pto.Tile(M, "int32", 32, 64)
    src.data[:] = x
    words = _words(rng, 64, "int8")
    fp = pto.Tile(M, "uint64", 1, 64)
    fp.data[0] = words
    d = pto.Tile(M, "int8", 16, 32)
    d.data[:] = 9
    pto.TEXTRACT_FP(d, src, fp, 8, 16, relu=True)
    want = _expect(x[8:24, 16:48], "int32", "int8", words[16:48], True, True, False)
    assert np.array_equal(d.data, want)
    pto.TEXTRACT(d, src, 0, 0, preQuant=int(words[3]))
    assert np.array_equal(d.data, _expect(x[:16, :32], "int32", "int8", words[3:4], False,
                                          False, False))
    big = pto.Tile(M, "float16", 64, 64)
    big.data[:] = 1
    s16 = pto.Tile(M, "int32", 16, 32)
    s16.data[:] = x[:16, :32]
    pto.TINSERT_FP(big, s16, fp, 32, 16)
    assert np.array_equal(big.data[32:48, 16:48], _expect(x[:16, :32], "int32", "float16",
                                                          words[:32], True, False, False))
    assert (big.data[:32] == 1).all() and (big.data[48:] == 1).all()


def test_fixpipe_errors_change_nothing():
    t = pto.Tile(pto.TileType.Acc, "float32", 2, 16)
    out = np.full((2, 16), 3, np.int16)
    with pytest.raises(errors.ConstraintError, match=r"TSTORE: \(src.dtype, dst.dtype\) must be"):
        pto.TSTORE(pto.GlobalTensor(out), t, 1)
    with pytest.raises(errors.ConstraintError, match="without a quantisation parameter"):
        pto.TSTORE(pto.GlobalTensor(np.zeros((2, 16), np.int8)), t)
    with pytest.raises(errors.ConstraintError, match="preQuantScalar must be a 64-bit"):
        pto.TSTORE(pto.GlobalTensor(np.zeros((2, 16), np.int8)), t, -1)
    with pytest.raises(errors.ConstraintError, match="TSTORE_FP: fp must be a row-major tile of "
                       "at least 128 bytes"):
        pto.TSTORE_FP(pto.GlobalTensor(np.zeros((2, 16), np.int8)), t, pto.Tile(V, "int32", 1, 16))
    with pytest.raises(errors.ConstraintError, match="TSTORE_FP: fp valid shape"):
        pto.TSTORE_FP(pto.GlobalTensor(np.zeros((2, 16), np.int8)), t, pto.Tile(V, "uint64", 1, 8))
    with pytest.raises(errors.ConstraintError, match="TEXTRACT: indexRow/indexCol"):
        pto.TEXTRACT(pto.Tile(V, "int8", 2, 32), pto.Tile(V, "float32", 2, 32), 1, 0, preQuant=1)
    assert (out == 3).all()


# ---- TMATMUL_MX ---------------------------------------------------------------------------

def _mx_operands(rng, af, bf, M, K, N):
    T = pto.TileType
    la, lb = (2 if af.startswith("float4") else 1), (2 if bf.startswith("float4") else 1)
    nca, ncb = 16 if la == 1 else 16, 16
    ca = rng.integers(0, nca if la == 2 else 256, (M, K)).astype(np.uint8)
    cb = rng.integers(0, ncb if lb == 2 else 256, (K, N)).astype(np.uint8)
    ta, tb = _table(af), _table(bf)
    ca[np.isnan(ta[ca])] = 0
    cb[np.isnan(tb[cb])] = 0
    a = pto.Tile(T.Left, af, M, 64, valid_col=K // la)
    a.data[:, :K // la] = ((ca[:, 0::2] | ca[:, 1::2] << 4) if la == 2 else ca).view(a.dtype)
    b = pto.Tile(T.Right, bf, K, 32, valid_col=N // lb)
    b.data[:, :N // lb] = ((cb[:, 0::2] | cb[:, 1::2] << 4) if lb == 2 else cb).view(b.dtype)
    G = -(-K // 32)
    sa_c = rng.integers(120, 135, (M, G)).astype(np.uint8)
    sb_c = rng.integers(120, 135, (G, N)).astype(np.uint8)
    sa = pto.Tile(T.ScaleLeft, "float8_e8m0fnu", M, 32, valid_col=G)
    sa.data[:, :G] = sa_c.view(sa.dtype)
    sb = pto.Tile(T.ScaleRight, "float8_e8m0fnu", G, 32, valid_col=N)
    sb.data[:, :N] = sb_c.view(sb.dtype)
    return a, sa, b, sb, ta[ca], sa_c, tb[cb], sb_c


@pytest.mark.parametrize("af,bf", [("float8_e4m3fn", "float8_e5m2"), ("float8_e5m2", "float8_e5m2"),
                                   ("float4_e2m1x2", "float4_e1m2x2"),
                                   ("float4_e1m2x2", "float4_e1m2x2")])
def test_tmatmul_mx_forms(af, bf):
    rng = np.random.default_rng(11)
    M, K, N = 5, 64 if af.startswith("float4") else 40, 16
    a, sa, b, sb, av, sac, bv, sbc = _mx_operands(rng, af, bf, M, K, N)
    c = pto.Tile(pto.TileType.Acc, "float32", M, 16)
    pto.TMATMUL_MX(c, a, sa, b, sb)
    want = ref.ptolowp_mx_matmul(av, sac, bv, sbc)
    assert _same(c.data, want)
    bias = pto.Tile(pto.TileType.Bias, "float32", 1, 16)
    bias.data[:] = rng.standard_normal((1, 16)).astype(np.float32)
    pto.TMATMUL_MX_BIAS(c, a, sa, b, sb, bias)
    assert _same(c.data, ref.ptolowp_mx_matmul(av, sac, bv, sbc, np.broadcast_to(bias.data, (M, 16))))
    acc = pto.Tile(pto.TileType.Acc, "float32", M, 16)
    acc.data[:] = 1.5
    pto.TMATMUL_MX_ACC(c, acc, a, sa, b, sb)
    assert _same(c.data, ref.ptolowp_mx_matmul(av, sac, bv, sbc, acc.data))


def test_tmatmul_mx_errors():
    rng = np.random.default_rng(2)
    a, sa, b, sb, *_ = _mx_operands(rng, "float8_e4m3fn", "float8_e4m3fn", 4, 32, 16)
    c = pto.Tile(pto.TileType.Acc, "float32", 4, 16)
    c.data[:] = 7
    with pytest.raises(errors.ConstraintError, match=r"TMATMUL_MX: \(a.dtype, b.dtype\)"):
        a4 = pto.Tile(pto.TileType.Left, "float4_e2m1x2", 4, 32, valid_col=16)
        pto.TMATMUL_MX(c, a4, sa, b, sb)
    with pytest.raises(errors.ConstraintError, match="TMATMUL_MX: a_scale.loc"):
        pto.TMATMUL_MX(c, a, pto.Tile(V, "float8_e8m0fnu", 4, 32, valid_col=1), b, sb)
    with pytest.raises(errors.ConstraintError, match="TMATMUL_MX: b_scale valid shape"):
        pto.TMATMUL_MX(c, a, sa, b, pto.Tile(pto.TileType.ScaleRight, "float8_e8m0fnu", 2, 32,
                                               valid_col=16))
    with pytest.raises(errors.ConstraintError, match="TMATMUL_MX: dst.dtype must be float32"):
        pto.TMATMUL_MX(pto.Tile(pto.TileType.Acc, "int32", 4, 16), a, sa, b, sb)
    assert (c.data == 7).all()


@pytest.mark.parametrize("lay", ["MX_A_ZZ", "MX_A_DN", "MX_A_ND", "MX_B_NN", "MX_B_ND",
                                 "MX_B_DN"])
def test_mx_scale_layouts(lay):
    """Each GM scale layout, written the way its docstring says, loads back as the logical
    [rows, cols] matrix."""
    R, C = (20, 6) if lay.startswith("MX_A") else (6, 20)
    x = np.arange(R * C, dtype=np.uint8).reshape(R, C)
    up = lambda v, m: -(-v // m) * m  # noqa: E731
    if lay == "MX_A_ZZ":
        p = np.zeros((up(R, 16), up(C, 2)), np.uint8)
        p[:R, :C] = x
        gm = p.reshape(p.shape[0] // 16, 16, p.shape[1] // 2, 2).transpose(0, 2, 1, 3)
    elif lay == "MX_A_DN":
        gm = x.reshape(R, C // 2, 2).transpose(1, 0, 2)
    elif lay == "MX_A_ND":
        gm = x
    elif lay == "MX_B_NN":
        p = np.zeros((up(R, 2), up(C, 16)), np.uint8)
        p[:R, :C] = x
        gm = p.reshape(p.shape[0] // 2, 2, p.shape[1] // 16, 16).transpose(2, 0, 3, 1)
    elif lay == "MX_B_ND":
        gm = x.reshape(R // 2, 2, C).transpose(0, 2, 1)
    else:
        gm = x.T
    gm = np.ascontiguousarray(gm).reshape(-1)
    g = pto.GlobalTensor(gm, (1, 1, 1, R, C), layout=getattr(pto.Layout, lay),
                         dtype="float8_e8m0fnu")
    t = pto.Tile(pto.TileType.Mat, "float8_e8m0fnu", R, 32, valid_col=C)
    pto.TLOAD(t, g)
    assert np.array_equal(t.valid.view(np.uint8), x)
    with pytest.raises(errors.ConstraintError, match="TSTORE: dst.layout must not be an MX"):
        pto.TSTORE(g, t)


# ---- TQUANT (INT8) ---------------------------------------------------------------------------

def _col(vals):
    t = pto.Tile(V, "float32", 8, 8, blayout=pto.BLayout.ColMajor, valid_row=len(vals), valid_col=1)
    t.data[:len(vals), 0] = vals
    return t


def test_tquant_int8_sym_and_asym():
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((4, 32)) * 60).astype(np.float32)
    x[0, :6] = [0.5, 1.5, -0.5, np.nan, np.inf, -np.inf]
    src = pto.Tile(V, "float32", 4, 32)
    src.data[:] = x
    s = [4.0, 0.5, 2.5, 1.0]
    d = pto.Tile(V, "int8", 4, 32)
    pto.TQUANT(d, src, _col(s))
    assert np.array_equal(d.data, ref.ptolowp_tquant_int8(x, s))
    u = pto.Tile(V, "uint8", 4, 32)
    off = [120.0, 121.0, 0.5, 3.0]
    pto.TQUANT(u, src, _col(s), _col(off), quantType=pto.QuantType.INT8_ASYM)
    assert np.array_equal(u.data, ref.ptolowp_tquant_int8(x, s, off))
    # a scale tile with fewer valid rows repeats its last value (the simulator's GetParamValue)
    pto.TQUANT(d, src, _col([2.0]))
    assert np.array_equal(d.data, ref.ptolowp_tquant_int8(x, [2.0] * 4))


def test_tquant_docs_vs_simulator_reading():
    """The docs' rint(x*s) + offset and the simulator's nearbyint(x*s + offset) differ when
    x*s is half-way and the offset is odd; they agree otherwise (integral offsets)."""
    x = np.full((1, 32), 0.25, np.float32)
    src = pto.Tile(V, "float32", 1, 32)
    src.data[:] = x
    u = pto.Tile(V, "uint8", 1, 32)
    pto.TQUANT(u, src, _col([2.0]), _col([3.0]))          # rint(0.5) + 3 = 3 (sim: rint(3.5)=4)
    assert (u.data == 3).all()
    pto.TQUANT(u, src, _col([2.0]), _col([4.0]))          # rint(0.5) + 4 = 4 = rint(4.5): agree
    assert (u.data == 4).all()
    pto.TQUANT(u, src, _col([4.0]), _col([3.0]))          # rint(1) + 3 = 4 = rint(4): agree
    assert (u.data == 4).all()


def test_tquant_errors():
    src = pto.Tile(V, "float32", 2, 32)
    d = pto.Tile(V, "int8", 2, 32)
    d.data[:] = 5
    with pytest.raises(errors.ConstraintError, match="TQUANT: dst.dtype must be uint8"):
        pto.TQUANT(d, src, _col([1.0]), _col([0.0]))
    with pytest.raises(errors.ConstraintError, match="TQUANT: offset is required"):
        pto.TQUANT(pto.Tile(V, "uint8", 2, 32), src, _col([1.0]),
                   quantType=pto.QuantType.INT8_ASYM)
    with pytest.raises(errors.ConstraintError, match="TQUANT: src.dtype must be float32"):
        pto.TQUANT(d, pto.Tile(V, "float16", 2, 32), _col([1.0]))
    with pytest.raises(errors.ConstraintError, match="TQUANT: scale.dtype must be float32"):
        pto.TQUANT(d, src, pto.Tile(V, "int32", 2, 8))
    with pytest.raises(errors.ConstraintError, match="TQUANT: target must be A5 for MXFP8"):
        pto.TQUANT(d, src, _col([1.0]), quantType=pto.QuantType.MXFP8)   # (ptoisa2: MX forms)
    assert (d.data == 5).all()


# ---- ConvTile ----------------------------------------------------------------------------

_CONV_CASES = [
    (("NCHW", "NC1HWC0"), "float32", (2, 11, 3, 2), (2, 2, 3, 2, 8)),
    (("NC1HWC0", "NCHW"), "int16", (2, 2, 3, 2, 16), (2, 20, 3, 2)),
    (("NC1HWC0", "FRACTAL_Z"), "int8", (19, 2, 2, 3, 32), (2, 2, 3, 2, 16, 32)),
    (("GNCHW", "GNC1HWC0"), "float16", (2, 3, 17, 2, 2), (2, 3, 2, 2, 2, 16)),
    (("GNC1HWC0", "FRACTAL_Z"), "int32", (2, 5, 2, 2, 3, 8), (4, 2, 3, 1, 16, 8)),
    (("NCDHW", "FRACTAL_Z_3D"), "float32", (5, 9, 2, 2, 3), (2 * 2 * 2 * 3, 1, 16, 8)),
]


@pytest.mark.parametrize("pair,dt,sshape,dshape", _CONV_CASES)
def test_ttrans_conv_layouts(pair, dt, sshape, dshape):
    rng = np.random.default_rng(4)
    x = rng.integers(-100, 100, sshape).astype(dt)
    src = pto.ConvTile(V, dt, sshape, getattr(pto.Layout, pair[0]))
    src.buffer[:] = x.reshape(-1)
    dst = pto.ConvTile(V, dt, dshape, getattr(pto.Layout, pair[1]))
    dst.buffer[:] = 7
    pto.TTRANS(dst, src)
    assert np.array_equal(dst.codes(), ref.ptolowp_conv(pair, x, dshape))


def test_ttrans_conv_fp4_and_aliasing():
    """x2 codes move per element; a ConvTile over a Tile aliases its bytes."""
    rng = np.random.default_rng(8)
    codes = rng.integers(0, 16, (1, 2, 3, 2, 4)).astype(np.uint8)      # G N C H W
    t = pto.Tile(V, "float4_e2m1x2", 1, 32, valid_col=24)
    t.data[0, :24] = (codes.reshape(-1)[0::2] | codes.reshape(-1)[1::2] << 4)
    src = pto.ConvTile(V, "float4_e2m1x2", codes.shape, pto.Layout.GNCHW, buffer=t)
    assert np.array_equal(src.codes(), codes)
    dst = pto.ConvTile(V, "float4_e2m1x2", (1, 2, 1, 2, 4, 64), pto.Layout.GNC1HWC0)
    pto.TTRANS(dst, src)
    assert np.array_equal(dst.codes(), ref.ptolowp_conv(("GNCHW", "GNC1HWC0"), codes,
                                                        (1, 2, 1, 2, 4, 64)))


def test_convtile_load_store_ndc1hwc0():
    n = (2, 3, 2, 1, 3)                        # N D C1 H W, C0 = 8 implicit
    x = np.arange(2 * 3 * 2 * 1 * 4 * 8, dtype=np.float32)
    strides = (3 * 2 * 1 * 4 * 8, 2 * 1 * 4 * 8, 1 * 4 * 8, 4 * 8, 8)   # W padded to 4
    t = pto.ConvTile(pto.TileType.Mat, "float32", n + (8,), pto.Layout.NDC1HWC0)
    pto.TLOAD(t, pto.GlobalTensor(x, n, strides, pto.Layout.NDC1HWC0))
    want = np.empty(n + (8,), np.float32)
    for idx in np.ndindex(*n):
        off = sum(i * s for i, s in zip(idx, strides))
        want[idx] = x[off:off + 8]
    assert np.array_equal(t.codes(), want)
    out = np.zeros_like(x)
    pto.TSTORE(pto.GlobalTensor(out, n, strides, pto.Layout.NDC1HWC0), t)
    written = out != 0
    assert np.array_equal(out[written], x[written])
    assert not written.reshape(2, 3, 2, 1, 4, 8)[:, :, :, :, 3].any()     # the W padding


def test_convtile_errors():
    with pytest.raises(errors.ConstraintError, match="ConvTile: layout must be one of"):
        pto.ConvTile(V, "float32", (1, 2, 3, 4), pto.Layout.ND)
    with pytest.raises(errors.ConstraintError, match="ConvTile: shape must have 4 to 6"):
        pto.ConvTile(V, "float32", (2, 3), pto.Layout.NCHW)
    with pytest.raises(errors.ConstraintError, match="ConvTile: buffer must hold"):
        pto.ConvTile(V, "float32", (1, 2, 3, 8), pto.Layout.NCHW, buffer=pto.Tile(V, "float32", 1, 8))
    s = pto.ConvTile(V, "float32", (1, 9, 2, 2), pto.Layout.NCHW)
    d = pto.ConvTile(V, "float32", (1, 1, 2, 2, 8), pto.Layout.NC1HWC0)
    d.buffer[:] = 3
    with pytest.raises(errors.ConstraintError, match="TTRANS: dst shape must be"):
        pto.TTRANS(d, s)
    with pytest.raises(errors.ConstraintError, match=r"TTRANS: \(src.layout, dst.layout\)"):
        pto.TTRANS(s, pto.ConvTile(V, "float32", (1, 9, 2, 2), pto.Layout.NCHW))
    assert (d.buffer == 3).all()
    with pytest.raises(errors.ConstraintError, match="TLOAD: GlobalTensor layout must equal"):
        pto.TLOAD(d, pto.GlobalTensor(np.zeros(32, np.float32), (1, 1, 2, 2, 8)))
    with pytest.raises(errors.ConstraintError, match="is a convolution layout"):
        pto.TLOAD(pto.Tile(V, "float32", 1, 8), pto.GlobalTensor(np.zeros(8, np.float32), (1, 1, 1, 1, 8),
                                                                  layout=pto.Layout.NCHW))
    with pytest.raises(errors.AccessError):
        pto.GlobalTensor(np.zeros(4, np.float32), (1, 1, 1, 1, 1), layout=pto.Layout.NDC1HWC0)


def test_tgemv_mx():
    rng = np.random.default_rng(12)
    a, sa, b, sb, av, sac, bv, sbc = _mx_operands(rng, "float8_e5m2", "float8_e4m3fn", 1, 64, 16)
    c = pto.Tile(pto.TileType.Acc, "float32", 1, 16)
    pto.TGEMV_MX(c, a, sa, b, sb)
    assert _same(c.data, ref.ptolowp_mx_matmul(av, sac, bv, sbc))
    a2, sa2, *_ = _mx_operands(rng, "float8_e5m2", "float8_e4m3fn", 2, 64, 16)
    with pytest.raises(errors.ConstraintError, match="TGEMV_MX: aMatrix.validRow must be 1"):
        pto.TGEMV_MX(pto.Tile(pto.TileType.Acc, "float32", 2, 16), a2, sa2, b, sb)


@pytest.mark.parametrize("mode,fn", [("RINT", np.rint), ("FLOOR", np.floor), ("CEIL", np.ceil),
                                     ("TRUNC", np.trunc),
                                     ("ROUND", lambda v: np.trunc(v + np.copysign(0.5, v)))])
def test_tcvt_every_float16_value_to_int4(mode, fn):
    """float16 -> int4 (the A2A3 pair FP16 -> S4) over every code: rounded with the mode,
    saturated to [-8, 7], NaN -> 0; the code in the low nibble."""
    x = _F16.reshape(-1, 256)
    src = pto.Tile(V, "float16", x.shape[0], 256)
    src.data[:] = x
    dst = pto.Tile(V, "int4", x.shape[0], 256)
    pto.TCVT(dst, src, mode)
    xf = _F16.astype(np.float64)
    with np.errstate(invalid="ignore"):
        want = np.where(np.isnan(xf), 0, np.clip(fn(xf), -8, 7)).astype(np.int64) & 0xF
    assert np.array_equal(dst.data.reshape(-1), want)


def test_tmov_fixpipe_forms():
    rng = np.random.default_rng(21)
    x = rng.integers(-5000, 5000, (8, 16)).astype(np.int32)
    acc = pto.Tile(pto.TileType.Acc, "int32", 8, 16)
    acc.data[:] = x
    words = _words(rng, 16, "int8")
    d = pto.Tile(V, "int8", 8, 32, valid_col=16)
    pto.TMOV(d, acc, int(words[0]), reluMode=pto.ReluPreMode.NormalRelu)
    assert np.array_equal(d.valid, _expect(x, "int32", "int8", words, False, True, False))
    fp = pto.Tile(V, "uint64", 1, 16)
    fp.data[0] = words
    h = pto.Tile(V, "float16", 8, 16)
    pto.TMOV(h, acc, fp)
    assert np.array_equal(h.valid, _expect(x, "int32", "float16", words, True, False, False))
    f = pto.Tile(pto.TileType.Acc, "float32", 8, 16)
    f.data[:] = x.astype(np.float32) - 0.5
    r = pto.Tile(V, "float32", 8, 16)
    pto.TMOV(r, f, reluMode=pto.ReluPreMode.NormalRelu)
    assert np.array_equal(r.data, np.maximum(f.data, 0))
    with pytest.raises(errors.ConstraintError, match="TMOV: src.loc must be TileType.Acc"):
        pto.TMOV(d, pto.Tile(V, "int32", 8, 16), 1)


@pytest.mark.parametrize("fmt,big", [("float8_e4m3fn", 448.0), ("float8_e5m2", 57344.0),
                                     ("hifloat8", 32768.0)])
def test_tcvt_fp8_saturation_modes(fmt, big):
    """satMode ON clamps to +-max finite (NaN -> 0); OFF is the form without satMode (inf or
    NaN on overflow) -- the documented reading, module doc of fastisa.pto._cvt_lowp."""
    x = np.array([[1e6, -1e6, np.inf, -np.inf, np.nan, 1.0, -0.0, big] * 4], np.float32)
    s = pto.Tile(V, "float32", 1, 32)
    s.data[:] = x
    on, off, plain = (pto.Tile(V, fmt, 1, 32) for _ in range(3))
    pto.TCVT(on, s, "RINT", satMode="ON")
    pto.TCVT(off, s, "RINT", satMode="OFF")
    pto.TCVT(plain, s, "RINT")
    t = _table(fmt)
    v_on = t[on.data.view(np.uint8)[0, :8]]
    assert v_on[:4].tolist() == [big, -big, big, -big] and v_on[4] == 0 and v_on[5] == 1.0
    assert off.data.tobytes() == plain.data.tobytes()
    v_off = t[off.data.view(np.uint8)[0, :8]]
    assert not np.isfinite(v_off[:5]).any()
