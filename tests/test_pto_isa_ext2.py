"""PTO tile instructions added in issue 13's second round against tests/reference.py's
oracles (the "second round" block): bit-exact over dtypes and valid regions, contents outside
the valid region kept, in-place operands, and the constraint errors."""

from __future__ import annotations

import numpy as np
import pytest

import reference as ref
from fastisa import pto
from fastisa.errors import ConstraintError
from pto_helpers import RM, assert_bits, tile

VALID_PAIRS = (((8, 16), (5, 9)), ((3, 16), (8, 16)), ((8, 16), (8, 16)), ((8, 9), (8, 16)))


@pytest.mark.parametrize("is_max", (True, False))
@pytest.mark.parametrize("vdt,idt", [("float32", "int32"), ("float32", "uint32"),
                                     ("float16", "int16"), ("float16", "uint32"),
                                     ("bfloat16", "uint16"), ("int32", "int32"),
                                     ("int16", "uint16"), ("int8", "int32"), ("uint8", "int16")])
def test_tpartarg(is_max, vdt, idt):
    rng = np.random.default_rng(3)
    name = "TPARTARGMAX" if is_max else "TPARTARGMIN"
    for (r0, c0), (r1, c1) in VALID_PAIRS:
        v0, v1 = tile(vdt, 8, 32, RM, r0, c0, rng), tile(vdt, 8, 32, RM, r1, c1, rng)
        i0, i1 = tile(idt, 8, 32, RM, r0, c0, rng), tile(idt, 8, 32, RM, r1, c1, rng)
        if vdt in ("float32", "float16"):
            v0.data[0, :4] = v1.data[0, :4]          # ties take src1
            v0.data[1, 0] = np.nan                    # NaN compares false: src1
            v1.data[1, 1] = np.nan
        R, C = (r0, c0) if (r0, c0) == (8, 16) or (r1, c1) != (8, 16) else (r1, c1)
        dv, di = tile(vdt, 8, 32, RM, R, C, rng), tile(idt, 8, 32, RM, R, C, rng)
        keep_v, keep_i = dv.data[:, C:].copy(), di.data[:, C:].copy()
        getattr(pto, name)(dv, v0, v1, di, i0, i1)
        wv, wi = ref.ptox_part_arg(is_max, v0.valid, i0.valid, v1.valid, i1.valid, (R, C))
        assert_bits(dv.valid, wv, f"{name} values")
        assert_bits(di.valid, wi, f"{name} indices")
        assert_bits(dv.data[:, C:], keep_v, "outside the valid region")
        assert_bits(di.data[:, C:], keep_i, "outside the valid region")


def test_tpartarg_in_place():
    rng = np.random.default_rng(4)
    v0, v1 = tile("float32", 8, 16, RM, 8, 16, rng), tile("float32", 8, 16, RM, 4, 8, rng)
    i0, i1 = tile("int32", 8, 16, RM, 8, 16, rng), tile("int32", 8, 16, RM, 4, 8, rng)
    wv, wi = ref.ptox_part_arg(True, v0.valid, i0.valid, v1.valid, i1.valid, (8, 16))
    pto.TPARTARGMAX(v0, v0, v1, i0, i0, i1)
    assert_bits(v0.valid, wv, "in-place values")
    assert_bits(i0.valid, wi, "in-place indices")


def test_tpartadd_in_place():
    """dst is src0: the sources are read before dst is cleared (was: dst cleared first)."""
    rng = np.random.default_rng(5)
    a, b = tile("float32", 8, 8, RM, 8, 8, rng), tile("float32", 8, 8, RM, 4, 4, rng)
    want = ref.ptox_part("ADD", a.valid, b.valid, (8, 8))
    pto.TPARTADD(a, a, b)
    assert_bits(a.valid, want, "TPARTADD in place")


def test_tpartarg_errors():
    f = lambda dt, vr=8, vc=8: pto.Tile(pto.TileType.Vec, dt, 8, 32, valid_row=vr, valid_col=vc)  # noqa: E731
    with pytest.raises(ConstraintError, match="TPARTARGMAX: dstIdx.dtype must be int32 or uint32"):
        pto.TPARTARGMAX(f("float32"), f("float32"), f("float32"), f("int16"), f("int16"),
                        f("int16"))
    with pytest.raises(ConstraintError, match="TPARTARGMIN: src1Val.dtype"):
        pto.TPARTARGMIN(f("float32"), f("float32"), f("float16"), f("int32"), f("int32"),
                        f("int32"))
    with pytest.raises(ConstraintError, match="TPARTARGMAX: src1Idx valid shape"):
        pto.TPARTARGMAX(f("float32"), f("float32"), f("float32", 4, 4), f("int32"), f("int32"),
                        f("int32"))
    d = f("float32", 5, 5)
    before = d.data.copy()
    with pytest.raises(ConstraintError, match="TPARTARGMAX: dstVal valid shape"):
        pto.TPARTARGMAX(d, f("float32"), f("float32", 4, 4), f("int32", 5, 5), f("int32"),
                        f("int32", 4, 4))
    assert_bits(d.data, before, "unchanged after an error")


# ---- TPAIRREDUCESUM --------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ("float32", "float16", "bfloat16", "int32", "int16", "uint8"))
@pytest.mark.parametrize("vr,vc", [(8, 32), (5, 17), (3, 1), (8, 2), (0, 4)])
def test_tpairreducesum(dtype, vr, vc):
    rng = np.random.default_rng(6)
    src = tile(dtype, 8, 64, RM, vr, vc, rng)
    if dtype in ("float32", "float16") and vr and vc % 2:
        src.data[0, vc - 1] = -0.0                     # x + 0 of the last odd element: +0
    dst = tile(dtype, 8, 64, RM, vr, vc, rng)
    pto.TPAIRREDUCESUM(dst, src)
    assert_bits(dst.data, ref.ptox_pair_reduce_sum(src.data, (vr, vc), (8, 64)),
                f"TPAIRREDUCESUM {dtype}")


def test_tpairreducesum_in_place_and_errors():
    rng = np.random.default_rng(7)
    x = tile("float32", 4, 16, RM, 4, 15, rng)
    want = ref.ptox_pair_reduce_sum(x.data.copy(), (4, 15), (4, 16))
    pto.TPAIRREDUCESUM(x, x)
    assert_bits(x.data, want, "in place")
    with pytest.raises(ConstraintError, match="TPAIRREDUCESUM: src valid shape|TPAIRREDUCESUM: src"):
        pto.TPAIRREDUCESUM(tile("float32", 4, 16, RM, 4, 8, rng), tile("float32", 4, 16, RM, 4, 9, rng))
    with pytest.raises(ConstraintError, match="TPAIRREDUCESUM: src.dtype"):
        pto.TPAIRREDUCESUM(tile("float32", 4, 16), tile("float16", 4, 16))
    cm = pto.Tile(pto.TileType.Vec, "float32", 16, 8, blayout=pto.BLayout.ColMajor)
    with pytest.raises(ConstraintError, match="TPAIRREDUCESUM: dst.blayout must be RowMajor"):
        pto.TPAIRREDUCESUM(cm, cm)


# ---- TSUBVIEW --------------------------------------------------------------------------
def test_tsubview_aliases_src():
    rng = np.random.default_rng(8)
    src = tile("int16", 16, 32, RM, 16, 32, rng)
    sub = pto.Tile(pto.TileType.Vec, "int16", 12, 32, valid_row=5, valid_col=7)
    pto.TSUBVIEW(sub, src, 3, 4)
    assert_bits(sub.valid, src.data[3:8, 4:11], "TSUBVIEW values")
    # rows of sub beyond the view fit src only when the offset leaves room: 16 x 32 from
    # (3, 4) does not, so that case is an AccessError; a 12-row dst fits
    sub.data[0, 0] = 1234                            # (write through the view)
    assert src.data[3, 4] == 1234
    cm = pto.Tile(pto.TileType.Vec, "float32", 16, 8, blayout=pto.BLayout.ColMajor)
    cs = pto.Tile(pto.TileType.Vec, "float32", 16, 4, blayout=pto.BLayout.ColMajor,
                  valid_row=4, valid_col=2)
    cm.data[...] = rng.standard_normal((16, 8)).astype(np.float32)
    pto.TSUBVIEW(cs, cm, 2, 1)
    assert_bits(cs.valid, cm.data[2:6, 1:3], "column-major TSUBVIEW")


def test_tsubview_in_on_chip_buffer_and_errors():
    src = pto.Tile(pto.TileType.Vec, "float32", 8, 16)
    pto.TASSIGN(src, 0)
    src.data[...] = np.arange(128, dtype=np.float32).reshape(8, 16)
    sub = pto.Tile(pto.TileType.Vec, "float32", 8, 16, valid_row=4, valid_col=8)
    pto.TSUBVIEW(sub, src, 4, 8)                   # runs past src, inside the UB: allowed
    assert_bits(sub.valid, src.data[4:8, 8:16], "UB view")
    free = pto.Tile(pto.TileType.Vec, "float32", 8, 16)
    before = sub._buf
    from fastisa.errors import AccessError
    with pytest.raises(AccessError, match="TSUBVIEW: dst's storage"):
        pto.TSUBVIEW(sub, free, 4, 8)
    assert sub._buf is before
    with pytest.raises(ConstraintError, match="TSUBVIEW: rowIdx"):
        pto.TSUBVIEW(sub, src, 5, 0)
    with pytest.raises(ConstraintError, match="TSUBVIEW: colIdx"):
        pto.TSUBVIEW(sub, src, 0, 9)
    with pytest.raises(ConstraintError, match="TSUBVIEW: dst layout"):
        pto.TSUBVIEW(pto.Tile(pto.TileType.Vec, "float32", 8, 8, valid_row=4, valid_col=4), src)
    with pytest.raises(ConstraintError, match="TSUBVIEW: dst.dtype"):
        pto.TSUBVIEW(pto.Tile(pto.TileType.Vec, "int32", 8, 16), src)


# ---- TPREFETCH -------------------------------------------------------------------------
def test_tprefetch():
    rng = np.random.default_rng(9)
    a = rng.standard_normal((6, 16)).astype(np.float32)
    gm = pto.GlobalTensor(a)
    dst = tile("float32", 8, 16, RM, 6, 16, rng)
    keep = dst.data[6:].copy()
    pto.TPREFETCH(dst, gm)
    assert_bits(dst.valid, a, "TPREFETCH from GM")
    assert_bits(dst.data[6:], keep, "outside the valid region")
    src = tile("int32", 8, 16, RM, 8, 16, rng)
    d2 = tile("int32", 8, 16, RM, 5, 9, rng)
    pto.TPREFETCH(d2, src)
    assert_bits(d2.valid, src.data[:5, :9], "TPREFETCH from a tile")
    with pytest.raises(ConstraintError, match="TPREFETCH: src shape"):
        pto.TPREFETCH(tile("float32", 8, 16), gm)
    with pytest.raises(ConstraintError, match="TPREFETCH: src.dtype"):
        pto.TPREFETCH(tile("int32", 8, 16, RM, 6, 16), gm)


# ---- TLOG on integers, TSQRT on bfloat16 (the CPU simulator's dtype sets) --------------
@pytest.mark.parametrize("dtype", ("int32", "int16", "int8", "uint32", "uint16", "uint8"))
def test_tlog_integers(dtype):
    info = np.iinfo(dtype)
    rng = np.random.default_rng(10)
    src = tile(dtype, 8, 64, RM, 7, 50, rng)
    src.data[...] = rng.integers(1, min(info.max, 2 ** 31 - 1), (8, 64), endpoint=True)
    src.data[0, :6] = [1, 2, 3, 7, 8, info.max]       # ln 2 = 0.69 -> 0, ln 8 = 2.07 -> 2
    dst = tile(dtype, 8, 64, RM, 7, 50, rng)
    keep = dst.data.copy()
    pto.TLOG(dst, src)
    assert_bits(dst.valid, ref.ptox_log_int(src.valid), f"TLOG {dtype}")
    keep[:7, :50] = dst.valid
    assert_bits(dst.data, keep, "outside the valid region")


def test_tlog_integer_nonpositive_raises():
    src = tile("int32", 8, 8)
    src.data[...] = 5
    src.data[3, 3] = 0
    dst = tile("int32", 8, 8)
    before = dst.data.copy()
    with pytest.raises(ConstraintError, match=r"TLOG: src integer elements must be > 0.*got 0"):
        pto.TLOG(dst, src)
    assert_bits(dst.data, before, "unchanged")
    with pytest.raises(ConstraintError, match="TLOG: src.dtype"):
        pto.TLOG(dst, tile("int16", 8, 16))


def test_tsqrt_bf16_every_code():
    """Every bfloat16 code: sqrt in float64 rounded once to bfloat16 (NaN/inf/negatives too)."""
    codes = np.arange(65536, dtype=np.uint32).astype(np.uint16)
    src = pto.Tile(pto.TileType.Vec, "bfloat16", 256, 256)
    src.data.view(np.uint16)[...] = codes.reshape(256, 256)
    dst = pto.Tile(pto.TileType.Vec, "bfloat16", 256, 256)
    pto.TSQRT(dst, src)
    assert_bits(dst.data, ref.pto_unary("SQRT", src.data), "TSQRT bf16 every code")


def test_unary_kernel_converts_between_int_and_float():
    """The unary kernel's COPY between an integer and a float format writes converted values
    (it used to write nothing): int -> float exact in double, rounded once; float -> int
    truncated toward zero, saturating, NaN -> 0."""
    from fastisa._kernels import tile as k
    from fastisa.pto._ops import _OP, _operand
    rng = np.random.default_rng(11)
    i = tile("int32", 4, 16, RM)
    i.data[...] = rng.integers(-2 ** 31, 2 ** 31, (4, 16))
    f = tile("float16", 4, 16, RM)
    k.unary(_OP["COPY"], *_operand(f), *_operand(i), 4, 16)
    assert_bits(f.data, ref.pto_f64_to(i.data.astype(np.float64), np.float16), "int32 -> f16")
    x = tile("float32", 4, 16, RM)
    x.data[...] = rng.uniform(-4e4, 4e4, (4, 16)).astype(np.float32)
    x.data[0, :4] = [np.nan, np.inf, -np.inf, -0.7]
    o = tile("int16", 4, 16, RM)
    k.unary(_OP["COPY"], *_operand(o), *_operand(x), 4, 16)
    assert_bits(o.data, ref.ptox_cast_trunc_sat(x.data, np.int16), "f32 -> int16")


# ---- TDEQUANT / TADDDEQRELU ------------------------------------------------------------
@pytest.mark.parametrize("sdt", ("int8", "int16"))
@pytest.mark.parametrize("vr,vc,pc", [(16, 64, 1), (11, 37, 1), (8, 20, 4), (5, 3, 8)])
def test_tdequant(sdt, vr, vc, pc):
    rng = np.random.default_rng(12)
    src = tile(sdt, 16, 64, RM, vr, vc, rng)
    info = np.iinfo(sdt)
    src.data[...] = rng.integers(info.min, info.max, (16, 64), endpoint=True)
    from pto_helpers import CM
    lay, shape = (CM, (16, 8)) if pc == 1 else (RM, (16, 8))
    scale = tile("float32", *shape, lay, vr, pc, rng)
    offset = tile("float32", *shape, lay, vr, pc, rng)
    dst = tile("float32", 16, 64, RM, vr, vc, rng)
    keep = dst.data.copy()
    pto.TDEQUANT(dst, src, scale, offset)
    keep[:vr, :vc] = ref.ptox_dequant(src.valid, scale.valid, offset.valid)
    assert_bits(dst.data, keep, f"TDEQUANT {sdt}")


def test_tdequant_errors():
    f = lambda dt, r=8, c=32, vr=None, vc=None: pto.Tile(pto.TileType.Vec, dt, r, c,  # noqa: E731
                                                       valid_row=vr, valid_col=vc)
    with pytest.raises(ConstraintError, match="TDEQUANT: src.dtype"):
        pto.TDEQUANT(f("float32"), f("int32"), f("float32"), f("float32"))
    with pytest.raises(ConstraintError, match="TDEQUANT: scale.validRow"):
        pto.TDEQUANT(f("float32"), f("int8"), f("float32", vr=4), f("float32", vr=4))
    with pytest.raises(ConstraintError, match="TDEQUANT: offset.validCol"):
        pto.TDEQUANT(f("float32"), f("int8"), f("float32", vc=1), f("float32", vc=2))


@pytest.mark.parametrize("vr,vc,s", [(16, 64, 0.5), (7, 33, 0.0625), (3, 5, 1e30), (16, 64, -2.0)])
def test_tadddeqrelu(vr, vc, s):
    rng = np.random.default_rng(13)
    a = tile("int32", 16, 64, RM, vr, vc)
    b = tile("int32", 16, 64, RM, vr, vc)
    a.data[...] = rng.integers(-2 ** 31, 2 ** 31, (16, 64))   # sums wrap
    b.data[...] = rng.integers(-2 ** 31, 2 ** 31, (16, 64))
    a.data[0, :3] = [1, 1000, 2 ** 30]
    dst = tile("float16", 16, 64, RM, vr, vc, rng)
    keep = dst.data.copy()
    pto.TADDDEQRELU(dst, a, b, s, tile("int32", 16, 64))
    keep[:vr, :vc] = ref.ptox_add_deq_relu(a.valid, b.valid, s)
    assert_bits(dst.data, keep, "TADDDEQRELU")


def test_tadddeqrelu_errors():
    i = tile("int32", 8, 16)
    with pytest.raises(ConstraintError, match="TADDDEQRELU: dst.dtype"):
        pto.TADDDEQRELU(tile("float32", 8, 16), i, i, 1.0)
    with pytest.raises(ConstraintError, match="TADDDEQRELU: dst valid shape"):
        pto.TADDDEQRELU(tile("float16", 8, 16, RM, 0, 16), tile("int32", 8, 16, RM, 0, 16),
                        tile("int32", 8, 16, RM, 0, 16), 1.0)
    with pytest.raises(ConstraintError, match="TADDDEQRELU: tmp"):
        pto.TADDDEQRELU(tile("float16", 8, 16), i, i, 1.0, tile("int32", 2, 8))


# ---- TGATHERB --------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ("float32", "int16", "bfloat16", "uint8", "uint32"))
@pytest.mark.parametrize("vr,nbv", [(4, 2), (3, 1), (4, 4)])
def test_tgatherb(dtype, vr, nbv):
    rng = np.random.default_rng(14)
    isz = np.dtype("uint16" if dtype == "bfloat16" else dtype).itemsize
    cols = 4 * 32 // isz
    src = tile(dtype, 4, cols, RM, rng=rng)
    dst = tile(dtype, 4, cols, RM, vr, nbv * 32 // isz, rng)
    off = pto.Tile(pto.TileType.Vec, "uint32", 4, 8)
    nbytes = src.buffer.nbytes
    off.data[...] = rng.integers(0, nbytes - 31, (4, 8))     # any byte alignment
    off.data[0, 0] = nbytes - 31                              # one past the end: skipped
    off.data[1, 0] = 0xFFFFFFF0                               # as uint32: huge, skipped
    rows = dst.buffer.view(np.uint8).reshape(4, -1)
    want = rows.copy()
    want[:vr] = ref.ptox_gatherb(rows[:vr], src.buffer.view(np.uint8), off.data, nbv)
    pto.TGATHERB(dst, src, off)
    assert_bits(dst.buffer.view(np.uint8).reshape(4, -1), want, f"TGATHERB {dtype}")


def test_tgatherb_errors():
    src = tile("float32", 4, 16)
    off = pto.Tile(pto.TileType.Vec, "int32", 4, 8)
    with pytest.raises(ConstraintError, match="TGATHERB: dst.validCol must make whole 32-byte"):
        pto.TGATHERB(tile("float32", 4, 16, RM, 4, 12), src, off)
    with pytest.raises(ConstraintError, match="TGATHERB: offset.dtype"):
        pto.TGATHERB(tile("float32", 4, 16), src, tile("float32", 4, 8))
    with pytest.raises(ConstraintError, match="TGATHERB: offset must hold"):
        pto.TGATHERB(tile("float32", 8, 16), tile("float32", 8, 16), off)


# ---- TGET_SCALE_ADDR -------------------------------------------------------------------
def test_tget_scale_addr_shifts_assigned_address():
    src = pto.Tile(pto.TileType.Vec, "float32", 8, 16)
    dst = pto.Tile(pto.TileType.Vec, "float32", 8, 16)
    pto.TASSIGN(src, 0x1000)
    pto.TASSIGN(dst, 0x2000)
    pto.TGET_SCALE_ADDR(dst, src)
    assert dst.addr == 0x1000 >> 4
    probe = pto.Tile(pto.TileType.Vec, "float32", 8, 16)
    pto.TASSIGN(probe, 0x100)                       # the same UB bytes as dst
    probe.data[...] = np.arange(128, dtype=np.float32).reshape(8, 16)
    assert_bits(dst.data, probe.data, "dst reads UB at src.addr >> 4")


def test_tget_scale_addr_free_tile_aliases_and_errors():
    src = tile("int32", 8, 16)
    dst = tile("int32", 4, 16)
    pto.TGET_SCALE_ADDR(dst, src)
    src.data[0, 3] = 77
    assert dst.data[0, 3] == 77                     # the simulator's dst.data() = src.data()
    big = tile("int32", 16, 16)
    before = big._buf
    with pytest.raises(ConstraintError, match="TGET_SCALE_ADDR: dst size"):
        pto.TGET_SCALE_ADDR(big, src)
    assert big._buf is before


# ---- TGEMV family, TRSQRT's tmp form ---------------------------------------------------
@pytest.mark.parametrize("adt,ddt", [("float16", "float32"), ("bfloat16", "float32"),
                                     ("float32", "float32"), ("int8", "int32")])
@pytest.mark.parametrize("k,n", [(32, 16), (7, 3), (64, 40)])
def test_tgemv(adt, ddt, k, n):
    rng = np.random.default_rng(15)
    L, Rt, Acc, Bias = (pto.TileType.Left, pto.TileType.Right, pto.TileType.Acc,
                        pto.TileType.Bias)
    isz = np.dtype("uint16" if adt == "bfloat16" else adt).itemsize
    dsz = np.dtype(ddt).itemsize
    pad = lambda v, s: -(-v * s // 32) * (32 // s)  # noqa: E731
    a = tile(adt, 1, pad(k, isz), loc=L, vr=1, vc=k, rng=rng)
    b = tile(adt, k, pad(n, isz), loc=Rt, vr=k, vc=n, rng=rng)
    c = tile(ddt, 1, pad(n, dsz), loc=Acc, vr=1, vc=n, rng=rng)
    cin = tile(ddt, 1, pad(n, dsz), loc=Acc, vr=1, vc=n, rng=rng)
    bias = tile(ddt, 1, pad(n, dsz), loc=Bias, vr=1, vc=n, rng=rng)
    if ddt == "int32":
        cin.data[...] = rng.integers(-1000, 1000, cin.data.shape)
        bias.data[...] = rng.integers(-1000, 1000, bias.data.shape)
    dt = np.dtype(ddt)
    pto.TGEMV(c, a, b)
    assert_bits(c.valid, ref.pto_matmul(a.valid, b.valid, dt), "TGEMV")
    pto.TGEMV_ACC(c, cin, a, b)
    assert_bits(c.valid, ref.pto_matmul(a.valid, b.valid, dt, init=cin.valid), "TGEMV_ACC")
    pto.TGEMV_BIAS(c, a, b, bias)
    assert_bits(c.valid, ref.pto_matmul(a.valid, b.valid, dt, init=bias.valid), "TGEMV_BIAS")


def test_tgemv_errors():
    L, Rt, Acc = pto.TileType.Left, pto.TileType.Right, pto.TileType.Acc
    a2 = pto.Tile(L, "float32", 2, 8)
    b = pto.Tile(Rt, "float32", 8, 8)
    c = pto.Tile(Acc, "float32", 2, 8)
    with pytest.raises(ConstraintError, match="TGEMV: aMatrix.validRow must be 1"):
        pto.TGEMV(c, a2, b)
    a = pto.Tile(L, "float32", 1, 8)
    c1 = pto.Tile(Acc, "float32", 1, 8)
    with pytest.raises(ConstraintError, match="TGEMV_BIAS: biasData.loc must be TileType.Bias"):
        pto.TGEMV_BIAS(c1, a, b, c1)
    with pytest.raises(ConstraintError, match="TGEMV_ACC: cInMatrix.loc"):
        pto.TGEMV_ACC(c1, pto.Tile(pto.TileType.Vec, "float32", 1, 8), a, b)
    b0 = pto.Tile(Rt, "float32", 8, 8, valid_row=8, valid_col=0)
    with pytest.raises(ConstraintError, match=r"TGEMV: bMatrix valid shape \(n\)"):
        pto.TGEMV(c1, a, b0)


def test_trsqrt_tmp_form():
    rng = np.random.default_rng(16)
    src = tile("float32", 8, 16, RM, rng=rng)
    src.data[...] = np.abs(src.data) + 0.5
    d1, d2, tmp = tile("float32", 8, 16), tile("float32", 8, 16), tile("float32", 8, 16, RM, rng=rng)
    keep = tmp.data.copy()
    pto.TRSQRT(d1, src)
    pto.TRSQRT(d2, src, tmp)
    assert_bits(d2.data, d1.data, "TRSQRT with tmp = without")
    assert_bits(tmp.data, keep, "tmp not written")
    with pytest.raises(ConstraintError, match="TRSQRT: tmp"):
        pto.TRSQRT(d2, src, pto.Tile(pto.TileType.Left, "float32", 8, 16))


# ---- THISTOGRAM ------------------------------------------------------------------------
@pytest.mark.parametrize("sdt,k", [("uint16", 1), ("uint16", 0), ("uint32", 3), ("uint32", 2),
                                   ("uint32", 1), ("uint32", 0)])
@pytest.mark.parametrize("cumulative", (False, True))
def test_thistogram(sdt, k, cumulative):
    rng = np.random.default_rng(17)
    R, C = 5, 40
    src = tile(sdt, 8, 64, RM, R, C)
    src.data[...] = rng.integers(0, 2 ** (16 if sdt == "uint16" else 32), (8, 64))
    # make the filters select something: upper bytes of a few elements copied from element 0
    src.data[:, 1:12] = (src.data[:, 1:12] & 0xFF) | (src.data[:, :1] & ~np.array(0xFF, src.data.dtype))
    if sdt == "uint16":
        idx = pto.Tile(pto.TileType.Vec, "uint8", 32, 1, blayout=pto.BLayout.ColMajor)
        idx.data[:8, 0] = src.data[:8, 0] >> 8               # each row's own upper byte
    else:
        idx = pto.Tile(pto.TileType.Vec, "uint8", 3, 64)
        v = int(src.data[2, 0])
        idx.data[:, 0] = [(v >> 24) & 0xFF, (v >> 16) & 0xFF, (v >> 8) & 0xFF]
    dst = tile("uint32", 8, 256, RM, rng=rng)
    keep = dst.data.copy()
    pto.THISTOGRAM(dst, src, idx, pto.HistByte(k), cumulative=cumulative)
    keep[:R] = ref.ptox_histogram(src.valid, k, idx.data, cumulative)
    assert_bits(dst.data, keep, f"THISTOGRAM {sdt} byte {k}")


def test_thistogram_every_uint16_code():
    codes = np.random.default_rng(18).permutation(65536).astype(np.uint16).reshape(128, 512)
    src = pto.Tile(pto.TileType.Vec, "uint16", 128, 512)
    src.data[...] = codes
    dst = pto.Tile(pto.TileType.Vec, "uint32", 128, 256)
    pto.THISTOGRAM(dst, src, None, pto.HistByte.BYTE_1)
    want = np.zeros((128, 256), np.uint32)
    np.add.at(want, (np.repeat(np.arange(128), 512), (codes >> 8).reshape(-1)), 1)
    assert_bits(dst.data, want, "THISTOGRAM every uint16 code")
    assert int(dst.data.sum()) == 65536


def test_thistogram_errors():
    src = tile("uint16", 4, 16)
    with pytest.raises(ConstraintError, match="THISTOGRAM: byte must be BYTE_0 or BYTE_1"):
        pto.THISTOGRAM(tile("uint32", 4, 256), src, None, pto.HistByte.BYTE_2)
    with pytest.raises(ConstraintError, match="THISTOGRAM: dst.validCol must be >= 256"):
        pto.THISTOGRAM(tile("uint32", 4, 256, RM, 4, 200), src, None, 1)
    with pytest.raises(ConstraintError, match="THISTOGRAM: src.dtype"):
        pto.THISTOGRAM(tile("uint32", 4, 256), tile("int32", 4, 16), None, 1)
    with pytest.raises(ConstraintError, match="THISTOGRAM: idx"):
        pto.THISTOGRAM(tile("uint32", 4, 256), tile("uint32", 4, 16), tile("uint8", 1, 32), 0)


# ---- the direct int32/uint32 index loops of TSCATTER / MGATHER (gather.h) ---------------
@pytest.mark.parametrize("idt", ("int32", "uint32"))
@pytest.mark.parametrize("layout", ("row", "col"))
def test_scatter_mgather_direct_index_paths(idt, layout):
    from pto_helpers import CM
    rng = np.random.default_rng(19)
    lay = RM if layout == "row" else CM
    R, C = 16, 16
    idx = tile(idt, R, C, lay)
    idx.data[...] = rng.permutation(R * C).reshape(R, C)
    src = tile("float32", R, C, lay, rng=rng)
    dst = tile("float32", R, C, RM, rng=rng)
    want = dst.data.copy()
    want.reshape(-1)[idx.data.reshape(-1).astype(np.int64)] = src.data.reshape(-1)
    pto.TSCATTER(dst, src, idx)
    assert_bits(dst.data, want, "TSCATTER")
    table = rng.standard_normal(R * C).astype(np.float32)
    g = tile("float32", R, C, lay, rng=rng)
    pto.MGATHER(g, pto.GlobalTensor(table), idx)
    assert_bits(g.data, table[idx.data.astype(np.int64)], "MGATHER")
    idx.data[3, 3] = R * C                           # one past the end: raises, nothing written
    before = g.data.copy()
    from fastisa.errors import AccessError
    with pytest.raises(AccessError, match="MGATHER: index 256"):
        pto.MGATHER(g, pto.GlobalTensor(table), idx)
    assert_bits(g.data, before, "unchanged")
