"""Branch ptoisa2 (issue 13): TQUANT's MX forms (MXFP8 e4m3, MXFP4 e2m1; OCP and NV shared
exponents; ND and DN groups).  Stages 1-2 (max, E8M0 exponent, scaling) bit-exact against
tests/reference.py (ptoisa2_mx_*), over every float16 and bfloat16 code; stage 3 (the
documented stochastic rounding) checked to pick one of the two neighbours with the stated
probability, and every rule's error."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import reference as ref
from fastisa import errors, pto

V = pto.TileType.Vec
QT = pto.QuantType
ALG = pto.QuantScaleAlg
BF16 = np.dtype(ml_dtypes.bfloat16)


def _np(dt):
    return BF16 if dt == "bfloat16" else np.dtype(dt)


def _values(rng, dt, n):
    """Random values with specials, fp16 subnormals and wide exponents, as dtype dt."""
    kinds = rng.integers(0, 4, n)
    special = rng.choice([0.0, -0.0, np.inf, -np.inf, np.nan, 6.0, -448.0, 65504.0], n)
    sub = rng.integers(1, 1024, n) * 2.0 ** -24
    wide = (1 + rng.random(n)) * 2.0 ** rng.integers(-30, 16, n)
    grid = rng.choice([0.25, 0.75, 1.25, 2.5, 5.0], n)
    v = np.choose(kinds, [special, sub, wide, grid]) * rng.choice([-1.0, 1.0], n)
    return v.astype(_np(dt))


def _run(qt, alg, grp, x, dt, R, C, vr=None, rng=None, exp_cols=None):
    """TQUANT on tiles holding x [R, C] (dtype dt); returns the tiles."""
    fp4 = qt == QT.MXFP4_E2M1
    vr = R if vr is None else vr
    A, B = (vr, C // 32) if grp == 1 else (vr // 32, C)
    src = pto.Tile(V, dt, R, C, valid_row=vr)
    src.data[:] = x
    dst = pto.Tile(V, "float4_e2m1x2" if fp4 else "int8", R, C // 2 if fp4 else C, valid_row=vr)
    dst.data[:] = 0x5A
    ec = exp_cols or max(32, B)
    exp = pto.Tile(V, "uint8", max(A, 1) + 1, ec, valid_row=max(A, 1), valid_col=B)
    exp.data[:] = 0xA5
    n = max(8, -(-(A * B + 3) // 8) * 8)
    mx = pto.Tile(V, "float32", 1, n)
    sc = pto.Tile(V, "float32", 1, n)
    mx.data[:] = -7.0
    sc.data[:] = -9.0
    with pto.target("A5"):
        pto.TQUANT(dst, src, exp, mx, sc, quantType=qt, scaleAlg=alg, grpAxis=grp, rng=rng)
    return src, dst, exp, mx, sc, (A, B)


def _check(qt, alg, grp, x, dt, R, C, vr=None, seed=0):
    src, dst, exp, mx, sc, (A, B) = _run(qt, alg, grp, x, dt, R, C, vr, seed)
    vr = src.valid_row
    xv = x[:vr].astype(np.float32)
    e, m, s, per = ref.ptoisa2_mx_quant(xv, qt.name, alg.name, grp)
    assert exp.data[:A, :B].tobytes() == e.tobytes()
    assert (exp.data[A:] == 0xA5).all() and (exp.data[:, B:] == 0xA5).all()
    k = A * B
    assert mx.buffer[:k].tobytes() == m.reshape(-1).tobytes() or np.array_equal(
        mx.buffer[:k], m.reshape(-1), equal_nan=True)
    assert np.array_equal(sc.buffer[:k], s.reshape(-1), equal_nan=True)
    assert (mx.buffer[k:] == -7).all() and (sc.buffer[k:] == -9).all()
    # stage 3: one of the two neighbours, the lower one where the value is representable
    with np.errstate(all="ignore"):
        y = (xv * per).astype(np.float32)
        if qt == QT.MXFP4_E2M1 and dt == "bfloat16":
            y = y.astype(BF16).astype(np.float32)
    fmt = "float4_e2m1" if qt == QT.MXFP4_E2M1 else "float8_e4m3fn"
    lo, hi, p = ref.ptoisa2_sr_neighbours(np.where(np.isnan(y), 0, y), fmt)
    raw = dst.data[:vr].view(np.uint8)
    codes = np.stack([raw & 0xF, raw >> 4], -1).reshape(vr, C) if fmt == "float4_e2m1" else raw
    nan_code = 0x7 if fmt == "float4_e2m1" else 0x7F
    nan = np.isnan(y) | (np.isnan(per) if fmt == "float4_e2m1" else False)
    ok = (codes == lo) | (codes == hi)
    assert (codes[nan] == nan_code).all()
    assert ok[~nan].all()
    assert (codes[~nan & (p == 0)] == lo[~nan & (p == 0)]).all()
    assert (dst.data[vr:] == 0x5A).all()                          # outside the valid rows


@pytest.mark.parametrize("qt,dt", [(QT.MXFP8, "float32"), (QT.MXFP8, "float16"),
                                   (QT.MXFP8, "bfloat16"), (QT.MXFP4_E2M1, "float16"),
                                   (QT.MXFP4_E2M1, "bfloat16")])
@pytest.mark.parametrize("alg", [ALG.OCP, ALG.NV])
@pytest.mark.parametrize("grp", [0, 1])
def test_tquant_mx_random(qt, dt, alg, grp):
    rng = np.random.default_rng(21)
    R, C = 64, 64
    vr = R if grp == 0 else 48                      # a partial valid region off the group axis
    _check(qt, alg, grp, _values(rng, dt, R * C).reshape(R, C), dt, R, C, vr)


@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
@pytest.mark.parametrize("qt,alg", [(QT.MXFP4_E2M1, ALG.OCP), (QT.MXFP4_E2M1, ALG.NV),
                                    (QT.MXFP8, ALG.OCP), (QT.MXFP8, ALG.NV)])
def test_tquant_mx_every_16bit_code(dt, qt, alg):
    """Every float16 / bfloat16 code, 32 consecutive codes a group (ND), stages 1-3."""
    x = np.arange(65536, dtype=np.uint16).view(_np(dt)).reshape(2048, 32)
    _check(qt, alg, 1, x, dt, 2048, 32)


def test_tquant_mx_stochastic_rounding_distribution():
    """Half-way and quarter-way values round up with probability 1/2 and 1/4; exactly
    representable ones never move; one seed reproduces, another differs."""
    R, C = 64, 1024
    x = np.full((R, C), 1.25, np.float16)        # e2m1 neighbours 1.0 / 1.5: p = 1/2
    x[:, 512:] = 2.25                              # neighbours 2 / 3: p = 1/4
    x[:, ::32] = 6.0                               # each group's max: scaling 1
    _, dst, _, _, sc, _ = _run(QT.MXFP4_E2M1, ALG.OCP, 1, x, "float16", R, C, rng=7)
    assert (sc.buffer[: R * C // 32] == 1.0).all()
    raw = dst.data.view(np.uint8)
    codes = np.stack([raw & 0xF, raw >> 4], -1).reshape(R, C)
    rest = np.arange(C) % 32 != 0
    half, quarter = codes[:, :512][:, rest[:512]], codes[:, 512:][:, rest[512:]]
    assert set(np.unique(half)) == {2, 3} and set(np.unique(quarter)) == {4, 5}
    assert abs((half == 3).mean() - 0.5) < 0.02
    assert abs((quarter == 5).mean() - 0.25) < 0.02
    assert (codes[:, ~rest] == 7).all()
    again = _run(QT.MXFP4_E2M1, ALG.OCP, 1, x, "float16", R, C, rng=np.random.default_rng(7))[1]
    assert np.array_equal(again.data, dst.data)
    other = _run(QT.MXFP4_E2M1, ALG.OCP, 1, x, "float16", R, C, rng=8)[1]
    assert not np.array_equal(other.data, dst.data)
    default = _run(QT.MXFP4_E2M1, ALG.OCP, 1, x, "float16", R, C)[1]
    assert np.array_equal(default.data, _run(QT.MXFP4_E2M1, ALG.OCP, 1, x, "float16", R, C,
                                             rng=0)[1].data)


def test_tquant_mx_alg_tag_and_positional_form():
    """The C++ grouped form TQUANT<grp_axis, MxQuantAlg> and the positional exp/max/scaling
    order give the same tiles as quantType + scaleAlg."""
    rng = np.random.default_rng(4)
    x = _values(rng, "float16", 64 * 32).reshape(64, 32)
    a = _run(QT.MXFP4_E2M1, ALG.NV, 0, x, "float16", 64, 32)
    src, dst, exp, mx, sc = (pto.Tile(t.loc, t.format.name, t.rows, t.cols,
                                      valid_row=t.valid_row, valid_col=t.valid_col)
                             for t in a[:5])
    src.data[:] = x
    dst.data[:], exp.data[:], mx.data[:], sc.data[:] = 0x5A, 0xA5, -7.0, -9.0   # as _run
    with pto.target("A5"):
        pto.TQUANT(dst, src, exp, mx, sc, mxAlg=pto.MxQuantAlg.NvMxFp4E2M1, grpAxis=0)
    for t, o in zip((dst, exp, mx, sc), a[1:5]):
        assert t.buffer.tobytes() == o.buffer.tobytes()


def test_tquant_mx_errors_change_nothing():
    E = errors.ConstraintError
    R, C = 64, 64

    def tiles(sdt="float16", ddt="float4_e2m1x2", dcols=32, edt="uint8", mdt="float32",
              mcols=128, vr=None, bl=pto.BLayout.RowMajor):
        src = pto.Tile(V, sdt, R, C, valid_row=vr) if bl == pto.BLayout.RowMajor else \
            pto.Tile(V, sdt, R, C, blayout=bl)
        dst = pto.Tile(V, ddt, R, dcols, valid_row=vr)
        dst.data[:] = 3
        exp = pto.Tile(V, edt, 2, 64)
        return src, dst, exp, pto.Tile(V, mdt, 1, mcols), pto.Tile(V, "float32", 1, 128)

    fp4 = dict(quantType=QT.MXFP4_E2M1, grpAxis=0)
    cases = [
        (dict(), dict(quantType=QT.MXFP4_E2M1, grpAxis=0, exp=None), None,
         "TQUANT: exp is required"),
        (dict(sdt="float32"), fp4, None, r"src.dtype must be one of \['float16', 'bfloat16'\]"),
        (dict(sdt="int16"), dict(quantType=QT.MXFP8, grpAxis=0), None, "src.dtype must be"),
        (dict(ddt="int8", dcols=64), fp4, None, r"dst.dtype must be one of \['float4_e2m1x2'\]"),
        (dict(ddt="uint8", dcols=64), dict(quantType=QT.MXFP8, grpAxis=0), None,
         r"dst.dtype must be one of \['int8', 'float8_e4m3fn'\]"),
        (dict(dcols=16), fp4, None, "dst valid shape must equal src's valid shape"),
        (dict(bl=pto.BLayout.ColMajor), fp4, None, "src.blayout must be RowMajor"),
        (dict(vr=48), fp4, None, r"must cover the grouped axis \(rows\) fully"),
        (dict(), dict(quantType=QT.MXFP4_E2M1, grpAxis=2), None, "grpAxis must be 0"),
        (dict(), dict(quantType=QT.MXFP4_E2M1, scaleAlg=5), None, "scaleAlg must be a"),
        (dict(edt="int8"), fp4, None, "exp.dtype must be uint8 or float8_e8m0fnu"),
        (dict(mdt="int32"), fp4, None, "max.dtype must be float32"),
        (dict(mcols=32), fp4, None, "max size must hold the 128 group values"),
        (dict(), dict(quantType=QT.MXFP4_E2M1, grpAxis=0, rng="x"), None, "rng must be"),
        (dict(), dict(mxAlg=9), None, "mxAlg must be a MxQuantAlg"),
        (dict(), dict(mxAlg=pto.MxQuantAlg.NvMxFp4E2M1, quantType=QT.MXFP8), None,
         "quantType must be None when mxAlg is given"),
    ]
    for kw, call, _x, msg in cases:
        src, dst, exp, mx, sc = tiles(**kw)
        call = dict(call)
        e = call.pop("exp", exp)
        with pto.target("A5"):
            with pytest.raises(E, match=msg):
                pto.TQUANT(dst, src, e, mx, sc, **call)
        assert (dst.data == 3).all()
    src, dst, exp, mx, sc = tiles()
    small = pto.Tile(V, "uint8", 1, 64)
    with pto.target("A5"), pytest.raises(E, match="exp valid shape must hold the 2 x 64"):
        pto.TQUANT(dst, src, small, mx, sc, **fp4)
    with pytest.raises(E, match="TQUANT: target must be A5 for MXFP4_E2M1"):
        pto.TQUANT(dst, src, exp, mx, sc, **fp4)
    with pto.target("A5"), pytest.raises(NotImplementedError, match="Hif4"):
        pto.TQUANT(dst, src, exp, mx, sc, mxAlg=pto.MxQuantAlg.Hif4)
    i8 = pto.Tile(V, "int8", 8, 32)
    f32 = pto.Tile(V, "float32", 8, 32)
    with pytest.raises(E, match="exp/max/scaling/expZZ/storeMode must be unset for INT8_SYM"):
        pto.TQUANT(i8, f32, pto.Tile(V, "float32", 8, 8), exp=exp)
    with pytest.raises(E, match="exp/max/scaling/expZZ/storeMode must be unset for INT8_SYM"):
        pto.TQUANT(i8, f32, pto.Tile(V, "float32", 8, 8), storeMode=pto.VecStoreMode.NZ)
    with pytest.raises(E, match="scale is required for INT8_SYM"):
        pto.TQUANT(i8, f32)
    assert (dst.data == 3).all() and (i8.data == 0).all()


def test_x2_row_major_tile_needs_32_elements_a_row():
    """pto_tile.hpp counts an x2 tile's Cols in elements, sizeof(float4_e2m1x2_t) == 1:
    a 16-byte row of 32 fp4 values is aligned, an 8-byte one is not."""
    assert pto.Tile(V, "float4_e2m1x2", 4, 16).cols == 16
    with pytest.raises(errors.AlignmentError, match="x2 tile needs a multiple of 32 elements"):
        pto.Tile(V, "float4_e2m1x2", 4, 8)


def test_tquant_mxfp8_zz_exponent_store():
    """VecStoreMode.NZ: the exponents also in ZZ order ([16 x 2] boxes) in expZZ."""
    rng = np.random.default_rng(6)
    R, C = 32, 128
    src = pto.Tile(V, "float32", R, C)
    src.data[:] = _values(rng, "float32", R * C).reshape(R, C)
    dst = pto.Tile(V, "float8_e4m3fn", R, C)
    exp = pto.Tile(V, "uint8", R, 32, valid_col=4)
    zz = pto.Tile(V, "float8_e8m0fnu", 4, 32)
    zz.data.view(np.uint8)[:] = 0x11
    mx, sc = pto.Tile(V, "float32", 1, 128), pto.Tile(V, "float32", 1, 128)
    with pto.target("A5"):
        pto.TQUANT(dst, src, exp, mx, sc, quantType=QT.MXFP8, storeMode=pto.VecStoreMode.NZ,
                   expZZ=zz)
    e, *_ = ref.ptoisa2_mx_quant(src.data, "MXFP8", "OCP", 1)
    assert exp.data[:, :4].tobytes() == e.tobytes()
    assert zz.buffer.view(np.uint8).tobytes() == ref.ptoisa2_zz(e).tobytes()


def test_tquant_zz_store_errors():
    E = errors.ConstraintError
    NZ = pto.VecStoreMode.NZ

    def run(qt=QT.MXFP8, R=32, C=128, grp=1, zz="uint8", zn=128, mode=NZ, give=True,
            sdt="float32"):
        src = pto.Tile(V, sdt, R, C)
        fp4 = qt == QT.MXFP4_E2M1
        dst = pto.Tile(V, "float4_e2m1x2" if fp4 else "int8", R, C // 2 if fp4 else C)
        dst.data[:] = 9
        A, B = (R, C // 32) if grp == 1 else (R // 32, C)
        exp = pto.Tile(V, "uint8", max(A, 1), max(32, B), valid_col=B)
        t = pto.Tile(V, zz, 1, zn) if give else None
        mx, sc = pto.Tile(V, "float32", 1, 512), pto.Tile(V, "float32", 1, 512)
        with pto.target("A5"):
            try:
                pto.TQUANT(dst, src, exp, mx, sc, quantType=qt, grpAxis=grp, storeMode=mode,
                           expZZ=t)
            finally:
                assert (dst.data == 9).all()
    cases = [(dict(qt=QT.MXFP4_E2M1, sdt="float16"), "NZ .* is for MXFP8 with ND groups"),
             (dict(grp=0), "NZ .* is for MXFP8 with ND groups"),
             (dict(give=False), "expZZ is required for storeMode NZ"),
             (dict(zz="int8"), "expZZ.dtype must be uint8 or float8_e8m0fnu"),
             (dict(R=24), r"exponent grid must have rows % 16 == 0"),
             (dict(C=96), r"exponent grid must have rows % 16 == 0 and an even"),
             (dict(zn=64), "expZZ size must hold the 128 exponents"),
             (dict(mode=pto.VecStoreMode.ND), "expZZ must be None unless storeMode is NZ"),
             (dict(mode=7), "storeMode must be a VecStoreMode")]
    for kw, msg in cases:
        with pytest.raises(E, match=msg):
            run(**kw)
