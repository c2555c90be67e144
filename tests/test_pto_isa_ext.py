"""The PTO tile instruction families added for issue 13 against tests/reference.py's oracles:
bit-exact over dtypes, layouts (row/column-major) and valid regions; outside the valid region
dst keeps its contents; bad operands raise fastisa.errors."""

from __future__ import annotations

import numpy as np
import pytest

import reference as ref
from fastisa import pto
from fastisa.errors import ConstraintError
from pto_helpers import CM, RM, assert_bits, rand, tile

INTS = ("int32", "int16", "int8", "uint32", "uint16", "uint8")
FLS = ("float32", "float16", "bfloat16")
GEOM = [(8, 32, None, None, RM), (16, 32, 11, 29, RM), (32, 16, 13, 7, CM)]


def _geom(dtype, g):
    rows, cols, vr, vc, lay = g
    isz = np.dtype(ref.np.dtype(dtype) if dtype != "bfloat16" else np.uint16).itemsize
    if lay == RM:
        cols = max(cols, 32 // isz)
    else:
        rows = max(rows, 32 // isz)
    return rows, cols, vr, vc, lay


def _run_bin(fn, op, dtype, g, rng, b_gen=None):
    rows, cols, vr, vc, lay = _geom(dtype, g)
    a = tile(dtype, rows, cols, lay, vr, vc, rng)
    b = tile(dtype, rows, cols, lay, vr, vc, rng)
    if b_gen is not None:
        b.data[...] = b_gen((rows, cols))
    d = tile(dtype, rows, cols, lay, vr, vc, rng)
    before = d.data.copy()
    fn(d, a, b)
    want = ref.ptox_binary(op, a.valid, b.valid)
    assert_bits(d.valid, want, f"{op} {dtype}")
    outside = np.ones(d.shape, bool)
    outside[: d.valid_row, : d.valid_col] = False
    assert_bits(d.data[outside], before[outside], "outside the valid region")


@pytest.mark.parametrize("g", GEOM)
@pytest.mark.parametrize("dtype", INTS)
@pytest.mark.parametrize("name,op", [("TAND", "AND"), ("TOR", "OR"), ("TXOR", "XOR")])
def test_bitwise(name, op, dtype, g):
    _run_bin(getattr(pto, name), op, dtype, g, np.random.default_rng(1))


@pytest.mark.parametrize("dtype", INTS)
@pytest.mark.parametrize("name,op", [("TSHL", "SHL"), ("TSHR", "SHR")])
def test_shifts(name, op, dtype):
    rng = np.random.default_rng(2)
    w = np.dtype(dtype).itemsize * 8
    for g in GEOM:
        _run_bin(getattr(pto, name), op, dtype, g, rng,
                 lambda s: rng.integers(0, w, size=s).astype(dtype))


@pytest.mark.parametrize("dtype", INTS)
def test_scalar_bitwise_and_shifts(dtype):
    rng = np.random.default_rng(3)
    info = np.iinfo(dtype)
    for g in GEOM:
        rows, cols, vr, vc, lay = _geom(dtype, g)
        a = tile(dtype, rows, cols, lay, vr, vc, rng)
        for name, op, s in (("TANDS", "AND", info.max // 3), ("TORS", "OR", 5),
                            ("TXORS", "XOR", info.max), ("TSHLS", "SHL", 3),
                            ("TSHRS", "SHR", 2)):
            d = tile(dtype, rows, cols, lay, vr, vc, rng)
            getattr(pto, name)(d, a, s)
            assert_bits(d.valid, ref.ptox_binary(op, a.valid, s), name)


@pytest.mark.parametrize("dtype", ("int16", "uint16"))
def test_tnot_every_16bit_code(dtype):
    d = pto.Tile(pto.TileType.Vec, dtype, 256, 256)
    s = pto.Tile(pto.TileType.Vec, dtype, 256, 256)
    s.data[...] = np.arange(65536, dtype=np.uint16).view(dtype).reshape(256, 256)
    pto.TNOT(d, s)
    assert_bits(d.data, ref.ptox_binary("NOT", s.data, 0), "TNOT")


def _nonzero(dtype, rng):
    def gen(shape):
        x = rand(dtype, shape, rng, small_ints=True)
        if np.dtype(x.dtype).kind in "iu":
            x = np.where(x == 0, 3, x).astype(x.dtype)
        return x
    return gen


@pytest.mark.parametrize("g", GEOM)
@pytest.mark.parametrize("dtype", FLS + ("int32", "int16", "uint16"))
@pytest.mark.parametrize("name,op", [("TREM", "REM"), ("TFMOD", "FMOD"), ("TPRELU", "PRELU"),
                                     ("TSUBRELU", "SUBRELU"), ("TPOW", "POW")])
def test_arith_binary(name, op, dtype, g):
    rng = np.random.default_rng(4)
    gen = _nonzero(dtype, rng)
    if op == "POW":
        def gen(shape, _g=gen):
            return rng.integers(0, 4, size=shape).astype(np.float32).astype(ref.np.dtype(
                rand(dtype, (1,), rng).dtype))
    _run_bin(getattr(pto, name), op, dtype, g, rng, gen)


@pytest.mark.parametrize("dtype", FLS + ("int32", "int16"))
def test_arith_scalar(dtype):
    rng = np.random.default_rng(5)
    for g in GEOM:
        rows, cols, vr, vc, lay = _geom(dtype, g)
        a = tile(dtype, rows, cols, lay, vr, vc, rng)
        for name, op, s in (("TREMS", "REM", -3), ("TFMODS", "FMOD", 3), ("TLRELU", "PRELU", 2),
                            ("TPOWS", "POW", 2)):
            d = tile(dtype, rows, cols, lay, vr, vc, rng)
            getattr(pto, name)(d, a, s)
            assert_bits(d.valid, ref.ptox_binary(op, a.valid, s), f"{name} {dtype}")


def test_rem_sign_fixup_and_zero_divisor():
    a = pto.Tile(pto.TileType.Vec, "float32", 1, 8)
    b = pto.Tile(pto.TileType.Vec, "float32", 1, 8)
    d = pto.Tile(pto.TileType.Vec, "float32", 1, 8)
    a.data[0] = [7, -7, 7, -7, 0, -0.0, 5.5, np.inf]
    b.data[0] = [3, 3, -3, -3, 3, 3, 2, 3]
    pto.TREM(d, a, b)
    np.testing.assert_array_equal(d.data[0, :7], [1, 2, -2, -1, 0, 0, 1.5])
    assert np.isnan(d.data[0, 7])
    i = pto.Tile(pto.TileType.Vec, "int32", 1, 8)
    z = pto.Tile(pto.TileType.Vec, "int32", 1, 8)
    with pytest.raises(ConstraintError, match="TREM: src1 must be nonzero"):
        pto.TREM(i, i, z)
    with pytest.raises(ConstraintError, match="TFMODS: scalar must be nonzero"):
        pto.TFMODS(i, i, 0)


@pytest.mark.parametrize("dtype", FLS + ("int32", "int16"))
def test_ternary(dtype):
    rng = np.random.default_rng(6)
    for g in GEOM:
        rows, cols, vr, vc, lay = _geom(dtype, g)
        a, b, c = (tile(dtype, rows, cols, lay, vr, vc, rng) for _ in range(3))
        for name, op in (("TADDC", "ADDC"), ("TSUBC", "SUBC")):
            d = tile(dtype, rows, cols, lay, vr, vc, rng)
            getattr(pto, name)(d, a, b, c)
            assert_bits(d.valid, ref.ptox_ternary(op, a.valid, b.valid, c.valid), name)
        for name, op in (("TADDSC", "ADDC"), ("TSUBSC", "SUBC")):
            d = tile(dtype, rows, cols, lay, vr, vc, rng)
            getattr(pto, name)(d, a, 2, c)
            assert_bits(d.valid, ref.ptox_ternary(op, a.valid, 2, c.valid), name)
        for name, op, args in (("TFUSEDMULADD", "FMA", lambda d0: (a.valid, d0, b.valid)),
                               ("TFUSEDMULADDRELU", "MULADD_R_RELU",
                                lambda d0: (a.valid, d0, b.valid)),
                               ("TMULADDDST", "MULADD_R", lambda d0: (a.valid, b.valid, d0))):
            d = tile(dtype, rows, cols, lay, vr, vc, rng)
            d0 = d.valid.copy()
            getattr(pto, name)(d, a, b)
            assert_bits(d.valid, ref.ptox_ternary(op, *args(d0)), f"{name} {dtype}")
        if dtype in ("float32", "float16"):
            d = tile(dtype, rows, cols, lay, vr, vc, rng)
            d0 = d.valid.copy()
            pto.TAXPY(d, a, 1.5)
            assert_bits(d.valid, ref.ptox_ternary("MULADD_R", a.valid, 1.5, d0), "TAXPY")


@pytest.mark.parametrize("dtype", ("float32", "float16", "int32", "int16", "uint8"))
@pytest.mark.parametrize("mode", ("EQ", "NE", "LT", "GT", "GE", "LE"))
def test_tcmp_packing(mode, dtype):
    rng = np.random.default_rng(7)
    R, C, vc = 8, 64, 45
    a = tile(dtype, R, C, RM, R, vc, rng)
    b = tile(dtype, R, C, RM, R, vc, rng)
    b.data[:, ::3] = a.data[:, ::3]
    for ddt, nb in (("uint8", 8), ("uint32", 32)):
        d = tile(ddt, R, 32, RM, R, 32 // (nb // 8) if nb == 32 else 32, rng)
        pto.TCMP(d, a, b, mode)
        pred = ref.ptox_cmp(mode, a.valid, b.valid)
        words = min(-(-vc // nb), d.valid_col)
        want = np.zeros(d.shape, dtype=np.uint64)
        want[:, :words] = ref.ptox_pack_rows(pred, nb, words)
        assert_bits(d.data, want.astype(ddt), f"TCMP {mode} -> {ddt}")


@pytest.mark.parametrize("mode", ("EQ", "NE", "LT", "GT", "GE", "LE"))
def test_tcmps_and_tsels(mode):
    rng = np.random.default_rng(8)
    a = tile("float32", 4, 32, RM, 3, 20, rng)
    a.data[0, :5] = 1.0
    d = tile("uint8", 4, 32, RM, 4, 4, rng)
    pto.TCMPS(d, a, 1.0, mode)
    full = np.zeros(a.shape, np.uint8)
    full[:3, :20] = ref.ptox_cmp(mode, a.valid, 1.0, eps=True)
    want = np.zeros(d.shape, np.uint8)
    want[:, :4] = np.packbits(full, axis=1, bitorder="little")
    assert_bits(d.data, want, f"TCMPS {mode}")
    # TSELS consumes the same per-row bytes
    dst = tile("float32", 4, 32, RM, 3, 20, rng)
    pto.TSELS(dst, d, a, -5.0)
    pred = full[:3, :20]
    assert_bits(dst.valid, np.where(pred == 1, a.valid, np.float32(-5)).astype(np.float32),
                "TSELS")


def test_tsel_stream_mask():
    rng = np.random.default_rng(9)
    R, C = 6, 16
    a, b, d = (tile("float16", R, C, RM, 5, 12, rng) for _ in range(3))
    m = tile("uint8", 4, 32, RM, 4, 3, rng)
    pto.TSEL(d, m, a, b)
    k = np.arange(5 * 12)
    e = k // 8
    bit = (m.data[e // 3, e % 3] >> (k % 8)) & 1
    want = np.where(bit.reshape(5, 12) == 1, a.valid, b.valid)
    assert_bits(d.valid, want, "TSEL")
    small = tile("uint8", 1, 32, RM, 1, 2, rng)
    with pytest.raises(ConstraintError, match="TSEL: selMask"):
        pto.TSEL(d, small, a, b)


@pytest.mark.parametrize("dtype", ("int32", "int16", "uint32", "uint16"))
def test_tci(dtype):
    d = pto.Tile(pto.TileType.Vec, dtype, 2, 64, valid_col=50)
    d.data[...] = 7
    pto.TCI(d, 100, descending=False)
    np.testing.assert_array_equal(d.data[0, :50], (100 + np.arange(50)).astype(dtype))
    assert (d.data[0, 50:] == 7).all() and (d.data[1] == 7).all()
    pto.TCI(d, 20, descending=True)
    np.testing.assert_array_equal(d.data[0, :50], (20 - np.arange(50)).astype(dtype))
    with pytest.raises(NotImplementedError):
        pto.TCI(pto.Tile(pto.TileType.Vec, "float32", 1, 8), 0)


@pytest.mark.parametrize("diag", (-2, 0, 3))
@pytest.mark.parametrize("upper", (False, True))
def test_ttri(upper, diag):
    d = pto.Tile(pto.TileType.Vec, "float16", 8, 16, valid_row=7, valid_col=13)
    d.data[...] = 9
    pto.TTRI(d, diag, upper=upper)
    r, c = np.arange(7)[:, None], np.arange(13)[None, :]
    want = (c >= r + diag) if upper else (c <= r + diag)
    np.testing.assert_array_equal(d.valid, want.astype(np.float16))
    assert (d.data[7] == 9).all() and (d.data[:, 13:] == 9).all()


@pytest.mark.parametrize("dtype", ("float32", "float16", "bfloat16", "int32", "int16"))
def test_products(dtype):
    rng = np.random.default_rng(10)
    for lay in (RM, CM):
        s = tile(dtype, 32, 16, lay, 9, 13, rng)
        s.data[...] = (rng.integers(-3, 4, s.shape) * (rng.random(s.shape) + 0.5)).astype(
            np.float32).astype(s.dtype) if dtype in FLS else rng.integers(-3, 4, s.shape)
        dr = tile(dtype, 32, 16, lay, 9, 1, rng)
        pto.TROWPROD(dr, s)
        assert_bits(dr.data[:9, 0], ref.ptox_prod(s.valid, 1), "TROWPROD")
        dc = tile(dtype, 32, 16, lay, 1, 13, rng)
        pto.TCOLPROD(dc, s)
        assert_bits(dc.data[0, :13], ref.ptox_prod(s.valid, 0), "TCOLPROD")


@pytest.mark.parametrize("dtype", ("float32", "float16", "int16", "uint16", "uint32"))
@pytest.mark.parametrize("is_max", (True, False))
def test_argreduce(dtype, is_max):
    rng = np.random.default_rng(11)
    s = tile(dtype, 16, 32, RM, 11, 27, rng)
    s.data[:, 5] = s.data[:, 9]        # ties keep the first
    if dtype.startswith("float"):
        s.data[2, 3] = np.nan
        s.data[3, 0] = np.nan
    sfx = "MAX" if is_max else "MIN"
    di = tile("int32", 16, 8, RM, 11, 1, rng)
    dv = tile(dtype, 16, 32, RM, 11, 1, rng)
    getattr(pto, "TROWARG" + sfx)(dv, di, s, None)
    want = ref.ptox_argreduce(s.valid, 1, is_max)
    assert_bits(di.data[:11, 0], want.astype(np.int32), "row idx")
    assert_bits(dv.data[:11, 0], s.valid[np.arange(11), want], "row val")
    dc = tile("uint32", 8, 32, RM, 1, 27, rng)
    getattr(pto, "TCOLARG" + sfx)(dc, s)
    assert_bits(dc.data[0, :27], ref.ptox_argreduce(s.valid, 0, is_max).astype(np.uint32),
                "col idx")


def test_argreduce_three_operands_are_dst_src_tmp():
    """(dst, src, tmp) with an int32 src and an int32 tmp: the C++ intrinsics' form, not a
    value form (pto_instr.hpp has only (dst, src, tmp) and (dstVal, dstIdx, src, tmp))."""
    rng = np.random.default_rng(13)
    s = tile("int32", 4, 8, RM, 3, 5, rng)
    s.data[:] = rng.integers(-3, 3, s.data.shape)
    for sfx, is_max in (("MAX", True), ("MIN", False)):
        d = tile("int32", 4, 8, RM, 3, 1, rng)
        keep = d.data.copy()
        getattr(pto, "TROWARG" + sfx)(d, s, tile("int32", 1, 8, RM, 1, 1, rng))
        want = keep.copy()
        want[:3, 0] = ref.ptox_argreduce(s.valid, 1, is_max)
        assert_bits(d.data, want, "row idx, the rest kept")
        c = tile("int32", 1, 8, RM, 1, 5, rng)
        getattr(pto, "TCOLARG" + sfx)(c, s, tile("int32", 1, 8, RM, 1, 1, rng))
        assert_bits(c.data[0, :5], ref.ptox_argreduce(s.valid, 0, is_max).astype(np.int32),
                    "col idx")


@pytest.mark.parametrize("name,op", [("TPARTADD", "ADD"), ("TPARTMUL", "MUL"),
                                     ("TPARTMAX", "MAX"), ("TPARTMIN", "MIN")])
@pytest.mark.parametrize("dtype", ("float32", "float16", "int32"))
def test_partial(name, op, dtype):
    rng = np.random.default_rng(12)
    for (r0, c0), (r1, c1) in (((8, 16), (5, 9)), ((3, 16), (8, 4)), ((8, 16), (8, 16))):
        a = tile(dtype, 8, 16, RM, r0, c0, rng)
        b = tile(dtype, 8, 16, RM, r1, c1, rng)
        d = tile(dtype, 8, 16, RM, 8, 16, rng)
        getattr(pto, name)(d, a, b)
        assert_bits(d.valid, ref.ptox_part(op, a.valid, b.valid, (8, 16)), name)


def test_errors_name_instruction_and_rule():
    i = pto.Tile(pto.TileType.Vec, "int32", 8, 8)
    f = pto.Tile(pto.TileType.Vec, "float32", 8, 8)
    with pytest.raises(ConstraintError, match="TAND: dst.dtype"):
        pto.TAND(f, f, f)
    with pytest.raises(ConstraintError, match="TOR: src1.dtype"):
        pto.TOR(i, i, f)
    with pytest.raises(ConstraintError, match="TANDS: scalar"):
        pto.TANDS(i, i, 2 ** 40)
    with pytest.raises(ConstraintError, match="TCMP: cmpMode"):
        pto.TCMP(pto.Tile(pto.TileType.Vec, "uint8", 8, 32), f, f, "XX")
    with pytest.raises(ConstraintError, match="TROWPROD: dst.validRow"):
        pto.TROWPROD(pto.Tile(pto.TileType.Vec, "float32", 4, 8), f)
    before = i.data.copy()
    with pytest.raises(ConstraintError):
        pto.TREM(i, i, pto.Tile(pto.TileType.Vec, "int32", 8, 8))
    assert (i.data == before).all()


# ---- the same instructions through PTO-AS text ------------------------------------------
from test_pto_asm import S, Sc, run_both, same_bits  # noqa: E402

_I = S("i32", 8, 8)
_F = S("f32", 16, 32, 11, 29)


@pytest.mark.parametrize("op", ["tand", "tor", "txor", "tshl", "tshr", "trem", "tfmod",
                                "tsubrelu", "tpartadd", "tpartmax", "tmuladddst"])
def test_asm_binary(op):
    same_bits(*run_both(op, [_I, _I], _I, positive=True))


@pytest.mark.parametrize("op", ["tands", "tors", "txors", "tshls", "tshrs", "trems", "tfmods"])
def test_asm_scalar(op):
    same_bits(*run_both(op, [_I, Sc("i32", 3)], _I, positive=True))


def test_asm_float_forms():
    same_bits(*run_both("tprelu", [_F, _F], _F))
    same_bits(*run_both("tlrelu", [_F, Sc("f32", 0.25)], _F))
    same_bits(*run_both("taddc", [_F, _F, _F], _F))
    same_bits(*run_both("tnot", [_I], _I))
