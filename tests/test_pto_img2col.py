"""Branch ptoisa2 (issue 13): TIMG2COL with its ConvTile configuration (SETFMATRIX,
SET_IMG2COL_PADDING, SET_IMG2COL_RPT) and TEXTRACT from a FRACTAL_Z ConvTile into a Right
tile, bit-exact against tests/reference.py (ptoisa2_*), over their dtypes, layouts and
valid regions, and every rule's error."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import reference as ref
from fastisa import errors, pto

T = pto.TileType
CM, RM = pto.BLayout.ColMajor, pto.BLayout.RowMajor
SR, SC = pto.SLayout.RowMajor, pto.SLayout.ColMajor

A2A3 = ["int8", "float16", "bfloat16", "float32"]
A5_ONLY = ["uint8", "int16", "uint16", "int32", "uint32"]


def _values(rng, dt, n):
    dt = np.dtype(ml_dtypes.bfloat16) if dt == "bfloat16" else np.dtype(dt)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(info.min, int(info.max) + 1, n, dtype=np.int64).astype(dt)
    # any bit pattern but NaN (bit copies; NaN payloads compare by bits below anyway)
    bits = rng.integers(0, 1 << (8 * dt.itemsize), n, dtype=np.uint64)
    v = bits.astype({2: np.uint16, 4: np.uint32}[dt.itemsize]).view(dt)
    return np.where(np.isnan(v.astype(np.float32)), dt.type(1.5), v).astype(dt)


def _same_bits(a, b):
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    return a.shape == b.shape and a.tobytes() == b.tobytes()


def _conv(dt, shape, layout="NC1HWC0", rng=None):
    src = pto.ConvTile(T.Mat, dt, shape, getattr(pto.Layout, layout))
    if rng is not None:
        src.buffer[:] = _values(rng, dt, src.buffer.size)
    return src


def _config(src, pads, filt, stride, dil, pad_value):
    src.SetPadListArray(pads)
    src.SetFmapH(src.shape[-3])
    src.SetFmapW(src.shape[-2])
    src.SetFilterH(filt[0])
    src.SetFilterW(filt[1])
    src.SetStrideH(stride[0])
    src.SetStrideW(stride[1])
    src.SetDilationH(dil[0])
    src.SetDilationW(dil[1])
    src.SetPadValue(pad_value)


def _left(dt, R, C, vr=None, vc=None, rng=None):
    d = pto.Tile(T.Left, dt, R, C, blayout=CM, slayout=SR, valid_row=vr, valid_col=vc)
    if rng is not None:
        d.data[:] = _values(rng, dt, R * C).reshape(R, C)
    return d


def _check_img2col(dt, layout, shape, R, C, vr, vc, pm, pk, pads, filt, stride, dil, padv,
                   seed=0):
    rng = np.random.default_rng(seed)
    src = _conv(dt, shape, layout, rng)
    _config(src, pads, filt, stride, dil, padv)
    dst = _left(dt, R, C, vr, vc, rng)
    before = dst.data.copy()
    fmap = src.buffer.reshape(shape).copy()
    pto.SETFMATRIX(src)
    pto.SET_IMG2COL_PADDING(src)
    pto.SET_IMG2COL_RPT(src)
    pto.TIMG2COL(dst, src, pm, pk)
    want = before.copy()
    want[:vr, :vc] = ref.ptoisa2_img2col(fmap, layout, vr, vc, pm, pk, pads, filt, stride, dil,
                                         src.GetPadValue())
    assert _same_bits(dst.data, want)
    assert _same_bits(src.buffer.reshape(shape), fmap)            # the input is not modified


@pytest.mark.parametrize("dt", A2A3)
@pytest.mark.parametrize("layout,shape", [("NC1HWC0", (2, 2, 5, 4, None)),
                                          ("NDC1HWC0", (2, 2, 1, 3, 4, None))])
def test_timg2col_dtypes_and_layouts(dt, layout, shape):
    c0 = 32 // (2 if dt in ("float16", "bfloat16") else np.dtype(dt).itemsize)
    shape = shape[:-1] + (c0,)
    # a 3 x 2 filter: K = 12 C0 over the two channel blocks; valid K runs one C0 past them
    _check_img2col(dt, layout, shape, 48, 14 * c0, 40, 13 * c0, 3, 0, (1, 2, 0, 1), (3, 2),
                   (2, 1), (1, 2), 1)


@pytest.mark.parametrize("dt", A5_ONLY)
def test_timg2col_a5_dtypes(dt):
    c0 = 32 // np.dtype(dt).itemsize
    with pto.target("A5"):
        _check_img2col(dt, "NC1HWC0", (1, 2, 4, 3, c0), 16, 4 * c0, 16, 4 * c0, 1, c0,
                       (1, 1, 1, 1), (2, 2), (1, 1), (1, 1), 3)


def test_timg2col_the_pto_isa_example_values():
    """tests/cpu/st/testcase/timg2col's first scenario (its fill pattern and configuration)."""
    src = _conv("float32", (1, 1, 3, 4, 8))
    x = src.codes()
    h, w, c = np.meshgrid(np.arange(3), np.arange(4), np.arange(8), indexing="ij")
    x[0, 0] = 100 * h + 10 * w + c
    _config(src, (1, 0, 1, 0), (2, 2), (1, 1), (1, 1), -1.0)
    dst = _left("float32", 16, 16, 4, 16)
    pto.TIMG2COL(dst, src, 1, 8, pto.SetFmatrixMode.FMATRIX_B_MANUAL)
    row0 = [-1.0] * 8 + list(range(8))                 # tap (0, 1) above the image, (1, 0)
    assert dst.data[0].tolist() == row0
    assert dst.data[3].tolist() == list(range(8)) + [-1.0] * 8
    assert (dst.data[4:] == 0).all()                   # outside the valid rows: kept


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_timg2col_random_configurations(data):
    dt = data.draw(st.sampled_from(["float32", "float16", "int8"]))
    c0 = 32 // np.dtype(dt).itemsize
    N, C1 = data.draw(st.integers(1, 2)), data.draw(st.integers(1, 2))
    H, W = data.draw(st.integers(1, 5)), data.draw(st.integers(1, 5))
    pads = tuple(data.draw(st.integers(0, 2)) for _ in range(4))
    filt = (data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3)))
    dil = (data.draw(st.integers(1, 2)), data.draw(st.integers(1, 2)))
    stride = (data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3)))
    if (H + pads[2] + pads[3] < dil[0] * (filt[0] - 1) + 1
            or W + pads[0] + pads[1] < dil[1] * (filt[1] - 1) + 1):
        return
    R = 16 * data.draw(st.integers(1, 3))
    C = max(16, c0) * data.draw(st.integers(1, 4))
    vr, vc = data.draw(st.integers(0, R)), data.draw(st.integers(0, C))
    pm, pk = data.draw(st.integers(0, 40)), data.draw(st.integers(0, 200))
    _check_img2col(dt, "NC1HWC0", (N, C1, H, W, c0), R, C, vr, vc, pm, pk, pads, filt, stride,
                   dil, -3, seed=data.draw(st.integers(0, 9)))


def test_convtile_img2col_fields():
    src = _conv("int8", (1, 1, 2, 2, 32))
    assert (src.GetFilterH(), src.GetStrideW(), src.GetDilationH(), src.GetRepeatTime(),
            src.GetFmapH(), src.GetChannelSize()) == (1, 1, 1, 1, 0, 0)
    assert src.GetPadListArray() == [0, 0, 0, 0] and src.GetPadValue() == 0
    src.SetPadList(3, 7)
    src.SetRepeatStride(9)
    src.SetTranspose(True)
    src.SetDstMposition(4)
    assert (src.GetPadList(3), src.GetRepeatStride(), src.GetTranspose(),
            src.GetDstMposition()) == (7, 9, True, 4)
    src.SetPadValue(-128)
    assert src.GetPadValue() == -128 and src.GetPadValue().dtype == np.int8
    f = _conv("bfloat16", (1, 1, 1, 1, 16))
    f.SetPadValue(1.00390625)           # half-way between two bfloat16 values: to even
    assert float(f.GetPadValue()) == 1.0


def test_timg2col_errors_change_nothing():
    src = _conv("float32", (1, 1, 3, 3, 8))
    dst = _left("float32", 16, 16)
    dst.data[:] = 5
    E = errors.ConstraintError
    cases = [
        (lambda: pto.TIMG2COL(np.zeros((16, 16)), src), "TIMG2COL: dst must be a Tile"),
        (lambda: pto.TIMG2COL(dst, dst), "TIMG2COL: src must be a ConvTile"),
        (lambda: pto.TIMG2COL(dst, pto.ConvTile(T.Vec, "float32", (1, 1, 3, 3, 8),
                                                pto.Layout.NC1HWC0)), "src.loc must be"),
        (lambda: pto.TIMG2COL(dst, pto.ConvTile(T.Mat, "float32", (1, 8, 3, 3),
                                                pto.Layout.NCHW)), "src.layout must be one of"),
        (lambda: pto.TIMG2COL(pto.Tile(T.Right, "float32", 16, 16, blayout=RM, slayout=SC),
                              src), "dst.loc must be TileType.Left"),
        (lambda: pto.TIMG2COL(pto.Tile(T.Left, "float32", 16, 16, blayout=RM, slayout=SR),
                              src), "dst layout must be BLayout.ColMajor"),
        (lambda: pto.TIMG2COL(_left("float16", 16, 16), src), r"dst.dtype must equal src"),
        (lambda: pto.TIMG2COL(_left("uint8", 16, 32), _conv("uint8", (1, 1, 2, 2, 32))),
         "dtype must be one of .* on A2A3"),
        (lambda: pto.TIMG2COL(dst, src, 70000), r"posM must be an integer in \[0, 65535\]"),
        (lambda: pto.TIMG2COL(dst, src, 0, -1), r"posK must be an integer"),
        (lambda: pto.TIMG2COL(dst, src, 0, 0, 9), "fmatrixMode must be a SetFmatrixMode"),
        (lambda: pto.TIMG2COL(dst, pto.ConvTile(T.Mat, "float32", (1, 1, 1, 3, 3, 8),
                                                pto.Layout.NC1HWC0)),
         "src.shape must have 5 dimensions for NC1HWC0"),
    ]
    for fn, msg in cases:
        with pytest.raises(E, match=msg):
            fn()
    src.SetStrideH(0)
    with pytest.raises(E, match="TIMG2COL: src.StrideH must be >= 1"):
        pto.TIMG2COL(dst, src)
    src.SetStrideH(1)
    src.SetFilterW(5)
    with pytest.raises(E, match="TIMG2COL: src output W must be >= 1"):
        pto.TIMG2COL(dst, src)
    assert (dst.data == 5).all()
    with pytest.raises(E, match="SETFMATRIX: src.FmapH must be > 0"):
        pto.SETFMATRIX(src)
    with pytest.raises(E, match="SET_IMG2COL_PADDING: src must be a ConvTile"):
        pto.SET_IMG2COL_PADDING(dst)
    with pytest.raises(E, match="SET_IMG2COL_RPT: src.layout must be one of"):
        pto.SET_IMG2COL_RPT(pto.ConvTile(T.Mat, "float32", (1, 8, 3, 3), pto.Layout.NCHW))
    with pytest.raises(E, match=r"ConvTile.SetStrideW: strideW must be an integer in \[0, 255\]"):
        src.SetStrideW(256)
    with pytest.raises(E, match=r"ConvTile.SetFmapH: fmapH must be an integer in \[0, 65535\]"):
        src.SetFmapH(-1)
    with pytest.raises(E, match="ConvTile.SetPadListArray: values must hold 4 pads"):
        src.SetPadListArray([1, 2])
    with pytest.raises(E, match=r"ConvTile.SetPadList: index must be an integer in \[0, 3\]"):
        src.SetPadList(4, 0)
    with pytest.raises(E, match=r"ConvTile.SetPadValue: value must be in \[-128, 127\]"):
        _conv("int8", (1, 1, 1, 1, 32)).SetPadValue(300)
    with pytest.raises(E, match="ConvTile.SetPadValue: dtype must not be a packed x2"):
        pto.ConvTile(T.Mat, "float4_e2m1x2", (1, 1, 1, 1, 64), pto.Layout.NC1HWC0).SetPadValue(0)
    assert src.GetPadListArray() == [0, 0, 0, 0]


# ---- TEXTRACT from a FRACTAL_Z ConvTile -------------------------------------------------
def _right(dt, R, C, vr=None, vc=None):
    return pto.Tile(T.Right, dt, R, C, blayout=RM, slayout=SC, valid_row=vr, valid_col=vc)


@pytest.mark.parametrize("dt", ["int8", "uint8", "int16", "uint16", "int32", "uint32",
                                "float16", "bfloat16", "float32"])
@pytest.mark.parametrize("five_d", [False, True])
def test_textract_fractal_z(dt, five_d):
    rng = np.random.default_rng(3)
    isz = 2 if dt in ("float16", "bfloat16") else np.dtype(dt).itemsize
    c0 = 32 // isz
    kb, nb = 4, 3
    if five_d:                                  # [C1, H, W, N, C0]
        src = _conv(dt, (1, 2, 2, nb * 16, c0), "FRACTAL_Z", rng)
    else:
        src = _conv(dt, (kb, nb, 16, c0), "FRACTAL_Z", rng)
    w = src.buffer.reshape(kb, nb, 16, c0).copy()
    R, C = 2 * c0, 32
    dst = _right(dt, R, C, R - 1, C - 3)
    dst.data[:] = _values(rng, dt, R * C).reshape(R, C)
    want = dst.data.copy()
    pto.TEXTRACT(dst, src, c0, 16)
    want[:R - 1, :C - 3] = ref.ptoisa2_fractal_z_extract(w, R - 1, C - 3, c0, 16)
    assert _same_bits(dst.data, want)


def test_textract_fractal_z_3d_and_same_size_dtype():
    rng = np.random.default_rng(5)
    src = _conv("int16", (6, 2, 16, 16), "FRACTAL_Z_3D", rng)
    dst = _right("float16", 32, 32)
    pto.TEXTRACT(dst, src, 48, 0)
    want = ref.ptoisa2_fractal_z_extract(src.buffer.reshape(6, 2, 16, 16), 32, 32, 48, 0)
    assert _same_bits(dst.data, want.view(np.float16))


def test_textract_convtile_errors_change_nothing():
    src = _conv("float32", (4, 3, 16, 8), "FRACTAL_Z")
    dst = _right("float32", 16, 32)
    dst.data[:] = 2
    E = errors.ConstraintError
    cases = [
        (lambda: pto.TEXTRACT(dst, _conv("float32", (1, 1, 3, 3, 8))), "src.layout must be"),
        (lambda: pto.TEXTRACT(dst, pto.ConvTile(T.Vec, "float32", (4, 3, 16, 8),
                                                pto.Layout.FRACTAL_Z)), "src.loc must be"),
        (lambda: pto.TEXTRACT(pto.Tile(T.Left, "float32", 16, 32, blayout=CM, slayout=SR), src),
         "dst.loc must be TileType.Right"),
        (lambda: pto.TEXTRACT(pto.Tile(T.Right, "float32", 16, 32), src),
         "dst layout must be BLayout.RowMajor with SLayout.ColMajor"),
        (lambda: pto.TEXTRACT(_right("float16", 16, 32), src), "dst.dtype must have src's"),
        (lambda: pto.TEXTRACT(pto.Tile(T.Right, "float8_e4m3fn", 32, 32, blayout=RM,
                                       slayout=SC), _conv("int8", (2, 2, 16, 32), "FRACTAL_Z")),
         "dst.dtype must be one of"),
        (lambda: pto.TEXTRACT(dst, src, 4, 0), "must be multiples of C0 = 8 and 16"),
        (lambda: pto.TEXTRACT(dst, src, 0, 8), "must be multiples of C0 = 8 and 16"),
        (lambda: pto.TEXTRACT(dst, src, 24, 0), "must lie inside src's 32 x 48"),
        (lambda: pto.TEXTRACT(dst, src, 0, 32), "must lie inside src's 32 x 48"),
        (lambda: pto.TEXTRACT(dst, src, relu=True), "relu/preQuant/saturateInf must be unset"),
        (lambda: pto.TEXTRACT(dst, _conv("float32", (1, 2, 2, 40, 8), "FRACTAL_Z")),
         r"N % 16 == 0"),
        (lambda: pto.TEXTRACT(dst, _conv("float32", (4, 3, 8, 16), "FRACTAL_Z")),
         r"must end in the 16 x C0 fractal \(16, 8\)"),
        (lambda: pto.TEXTRACT(dst, _conv("float32", (1, 2, 3, 4, 16, 8), "FRACTAL_Z")),
         r"must be \[C1HW, N1, 16, C0\]"),
    ]
    for fn, msg in cases:
        with pytest.raises(E, match=msg):
            fn()
    assert (dst.data == 2).all()


def test_right_tile_column_major_box_is_c0_by_16():
    """pto_tile.hpp getInnerRow/getInnerCol: a 512-byte SLayout.ColMajor box is
    (32 / sizeof(T)) x 16: a float32 ZN tile may have 24 rows, not 8 columns."""
    assert _right("float32", 24, 32).inner_shape == (8, 16)
    with pytest.raises(errors.AlignmentError, match="InnerCols \\(16\\)"):
        _right("float32", 16, 8)
