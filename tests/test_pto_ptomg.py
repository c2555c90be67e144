"""Branch ptomg: MGATHER's [1, R] row-index form, the GM -> L1 (Mat destination) form with
its GM index and scratch, 1-byte low-precision payloads of MGATHER / MSCATTER, and the
PTO-AS side: pto.mgather / pto.mscatter attributes (coalesce, gatherOob, scatterOob,
scatterAtomicOp) and PTOAS's verifier rules for them (lib/PTO/IR/PTO.cpp MGatherOp::verify,
MScatterOp::verify, verifyMGatherMScatterTileShape).  Bit-exact against tests/reference.py."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import reference as ref
from fastisa import pto
from fastisa.errors import AccessError, AsmSyntaxError, ConstraintError
from fastisa.pto import asm
from pto_helpers import CM, RM, assert_bits, rand, tile

MAT = pto.TileType.Mat


def _nz_tile(dtype, rows, cols, vr=None, vc=None, rng=None):
    return tile(dtype, rows, cols, CM, vr, vc, rng, loc=MAT, slayout=pto.SLayout.RowMajor,
                fractal=512)


@pytest.mark.parametrize("oob", ("undefined", "clamp", "wrap", "zero"))
@pytest.mark.parametrize("form", ("1xR", "Rx1"))
def test_mgather_row_index_forms(form, oob):
    rng = np.random.default_rng(1)
    R, C, T = 6, 16, 20
    g = rand("float32", (T, C), rng)
    gm = pto.GlobalTensor(g, shape=(1, 1, 1, T, C))
    dst = tile("float32", 8, 16, RM, R, C, rng)
    before = dst.data.copy()
    raw = rng.integers(0, T, R)
    if oob != "undefined":
        raw[0], raw[3] = T + 2, -3
    if form == "1xR":
        idx = tile("int32", 1, 8, RM, 1, R)
        idx.data[0, :R] = raw
    else:
        idx = tile("int32", 8, 8, CM, R, 1)
        idx.data[:R, 0] = raw
    pto.MGATHER(dst, gm, idx, coalesce="row", oob=oob)
    want = before.copy()
    want[:R, :C] = ref.ptomg_mgather_row(g, raw, oob, C)
    assert_bits(dst.data, want, f"MGATHER row {form} {oob}")


def test_mgather_row_index_too_short():
    gm = pto.GlobalTensor(np.zeros((4, 8), np.float32), shape=(1, 1, 1, 4, 8))
    dst = tile("float32", 8, 8, RM)
    idx = tile("int32", 4, 8, RM, 4, 1)
    with pytest.raises(ConstraintError, match="MGATHER: indexes must hold 8 row indices"):
        pto.MGATHER(dst, gm, idx, coalesce="row")


@pytest.mark.parametrize("oob", ("undefined", "clamp", "zero"))
@pytest.mark.parametrize("dtype", ("float16", "float32", "int8"))
def test_mgather_l1_row(dtype, oob):
    rng = np.random.default_rng(2)
    rows, cols = 32, 64 if dtype == "int8" else 32
    R, C, T = 20, cols, 40
    g = rand(dtype, (T, C), rng)
    gm = pto.GlobalTensor(g, shape=(1, 1, 1, T, C))
    raw = rng.integers(0, T, R).astype(np.int32)
    if oob != "undefined":
        raw[1], raw[5] = T, -1
    gi = pto.GlobalTensor(raw, shape=(1, 1, 1, 1, R))
    dst = _nz_tile(dtype, rows, cols, R, C, rng)
    before = dst.data.copy()
    pto.MGATHER(dst, gm, gi, coalesce="row", oob=oob)
    want = np.zeros_like(before) if oob == "zero" else before.copy()   # zero: L1 pre-zero
    want[:R, :C] = ref.ptomg_mgather_row(g, raw, oob, C)
    assert_bits(dst.data, want, f"MGATHER L1 row {dtype} {oob}")


@pytest.mark.parametrize("oob", ("undefined", "wrap", "zero"))
@pytest.mark.parametrize("dtype", ("float16", "bfloat16", "float32", "uint8"))
def test_mgather_l1_elem_scratch(dtype, oob):
    rng = np.random.default_rng(3)
    isz = np.dtype(ml_dtypes.bfloat16 if dtype == "bfloat16" else dtype).itemsize
    rows, cols, R, C, cap = 32, 64 // isz, 19, 64 // isz - 3, 300
    flat = rand(dtype, (cap,), rng)
    gm = pto.GlobalTensor(flat)
    raw = rng.integers(0, cap, (R, C)).astype(np.int32)
    if oob != "undefined":
        raw[0, 0], raw[2, 3] = cap + 7, -5
    gi = pto.GlobalTensor(raw, shape=(1, 1, 1, R, C))
    sc_arr = rand(dtype, (rows * cols + 5,), rng)
    tail = sc_arr[rows * cols:].copy()
    scratch = pto.GlobalTensor(sc_arr, shape=(1, 1, 1, 1, rows * cols))
    dst = _nz_tile(dtype, rows, cols, R, C, rng)
    pto.MGATHER(dst, gm, gi, coalesce="elem", oob=oob, scratch=scratch)
    whole = np.zeros((rows, cols), flat.dtype)
    whole[:R, :C] = ref.ptomg_mgather_elem(flat, raw, oob, cap)
    assert_bits(dst.data, whole, f"MGATHER L1 elem dst {dtype} {oob}")
    assert_bits(sc_arr[:rows * cols], ref.ptomg_nz_order(whole, 32 // isz), "scratch")
    assert_bits(sc_arr[rows * cols:], tail, "scratch beyond rows * cols untouched")


def test_mgather_l1_errors_change_nothing():
    rng = np.random.default_rng(4)
    gm = pto.GlobalTensor(rand("float16", (64, 32), rng), shape=(1, 1, 1, 64, 32))
    gi = pto.GlobalTensor(np.arange(32, dtype=np.int32), shape=(1, 1, 1, 1, 32))
    sc = pto.GlobalTensor(np.zeros(32 * 32, np.float16))
    dst = _nz_tile("float16", 32, 32, rng=rng)
    before = dst.data.copy()
    cases = [
        (dict(indexes=tile("int32", 1, 32, RM)), "indexes must be a GlobalTensor"),
        (dict(scratch=sc), "scratch must be omitted with coalesce='row'"),
        (dict(coalesce="elem"), "scratch must be a GlobalTensor"),
        (dict(indexes=pto.GlobalTensor(np.zeros(32, np.int16))), "indexes.dtype must be int32"),
        (dict(coalesce="elem", scratch=pto.GlobalTensor(np.zeros(100, np.float16)),
              indexes=pto.GlobalTensor(np.zeros((32, 32), np.int32))),
         "scratch must hold rows \\* cols = 1024"),
    ]
    for kw, msg in cases:
        args = dict(indexes=gi, coalesce="row", scratch=None) | kw
        with pytest.raises(ConstraintError, match="MGATHER: " + msg):
            pto.MGATHER(dst, gm, args["indexes"], coalesce=args["coalesce"],
                        scratch=args["scratch"])
    with pytest.raises(ConstraintError, match="must be NZ"):
        pto.MGATHER(tile("float16", 32, 32, RM, loc=MAT), gm, gi, coalesce="row")
    bad = pto.GlobalTensor(np.full(32, 64, np.int32), shape=(1, 1, 1, 1, 32))
    with pytest.raises(AccessError, match="MGATHER: index 64 is outside"):
        pto.MGATHER(dst, gm, bad, coalesce="row")
    with pytest.raises(ConstraintError, match="scratch is only for a Mat"):
        pto.MGATHER(tile("float16", 32, 32, RM), gm, tile("int32", 1, 32, RM), "row",
                    scratch=sc)
    assert_bits(dst.data, before, "nothing written")


@pytest.mark.parametrize("fmt", ("hifloat8", "float8_e4m3", "float8_e5m2"))
def test_mgather_mscatter_1byte_lowp(fmt):
    """1-byte low-precision payloads are copied as bit patterns (every one of the 256)."""
    rng = np.random.default_rng(5)
    codes = np.arange(256, dtype=np.uint8)
    dst = pto.Tile(pto.TileType.Vec, fmt, 8, 32)
    npdt = dst.data.dtype
    flat = codes.view(npdt).copy()
    idx = tile("int32", 8, 32, RM)
    idx.data[...] = rng.permutation(256).reshape(8, 32)
    pto.MGATHER(dst, pto.GlobalTensor(flat), idx, coalesce="elem")
    assert np.array_equal(dst.data.view(np.uint8), codes[idx.data])
    out = np.zeros(256, npdt)
    pto.MSCATTER(pto.GlobalTensor(out), dst, idx, coalesce="elem")
    assert np.array_equal(out.view(np.uint8), codes)
    with pytest.raises(ConstraintError, match="MSCATTER: atomic must be 'none'"):
        pto.MSCATTER(pto.GlobalTensor(out), dst, idx, coalesce="elem", atomic="add")


# ---- PTO-AS ----
_HEAD = """module attributes {pto.target_arch = "a5"} {
  func.func @k(%src: !pto.ptr<f32>, %ix: !pto.ptr<i32>, %out: !pto.ptr<f32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %c16 = arith.constant 16 : index
    %c64 = arith.constant 64 : index
    %tv = pto.make_tensor_view %src, shape = [%c64, %c16], strides = [%c16, %c1] : !pto.tensor_view<?x?xf32>
    %pv = pto.partition_view %tv, offsets = [%c0, %c0], sizes = [%c64, %c16] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<64x16xf32>
    %iv = pto.make_tensor_view %ix, shape = [%c1, %c8], strides = [%c8, %c1] : !pto.tensor_view<?x?xi32>
    %ip = pto.partition_view %iv, offsets = [%c0, %c0], sizes = [%c1, %c8] : !pto.tensor_view<?x?xi32> -> !pto.partition_tensor_view<1x8xi32>
    %ov = pto.make_tensor_view %out, shape = [%c8, %c16], strides = [%c16, %c1] : !pto.tensor_view<?x?xf32>
    %op = pto.partition_view %ov, offsets = [%c0, %c0], sizes = [%c8, %c16] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<8x16xf32>
    %it = pto.alloc_tile : !pto.tile_buf<loc=vec, dtype=i32, rows=1, cols=8, v_row=1, v_col=8, blayout=row_major, slayout=none_box, fractal=512, pad=0>
    %d = pto.alloc_tile : !pto.tile_buf<loc=vec, dtype=f32, rows=8, cols=16, v_row=8, v_col=16, blayout=row_major, slayout=none_box, fractal=512, pad=0>
    pto.tload ins(%ip : !pto.partition_tensor_view<1x8xi32>) outs(%it : !pto.tile_buf<loc=vec, dtype=i32, rows=1, cols=8, v_row=1, v_col=8, blayout=row_major, slayout=none_box, fractal=512, pad=0>)
"""
_GATHER = """    pto.mgather ins(%pv, %it : !pto.partition_tensor_view<64x16xf32>, !pto.tile_buf<loc=vec, dtype=i32, rows=1, cols=8, v_row=1, v_col=8, blayout=row_major, slayout=none_box, fractal=512, pad=0>) outs(%d : !pto.tile_buf<loc=vec, dtype=f32, rows=8, cols=16, v_row=8, v_col=16, blayout=row_major, slayout=none_box, fractal=512, pad=0>) ATTRS
"""
_TAIL = """    pto.tstore ins(%d : !pto.tile_buf<loc=vec, dtype=f32, rows=8, cols=16, v_row=8, v_col=16, blayout=row_major, slayout=none_box, fractal=512, pad=0>) outs(%op : !pto.partition_tensor_view<8x16xf32>)
    return
  }
}
"""


def _prog(attrs):
    return _HEAD + _GATHER.replace("ATTRS", attrs) + _TAIL


@pytest.mark.parametrize("oob", ("undefined", "clamp", "wrap", "zero"))
def test_asm_mgather_row_oob(oob):
    rng = np.random.default_rng(6)
    table = rand("float32", (64, 16), rng)
    ix = rng.integers(0, 64, (1, 8)).astype(np.int32)
    if oob != "undefined":
        ix[0, 2], ix[0, 6] = 70, -9
    attrs = "coalesce = #pto<coalesce row>" + (
        "" if oob == "undefined" else f", gatherOob = #pto<gather_oob {oob}>")
    got = asm.run(_prog("{" + attrs + "}"), {"src": table, "ix": ix,
                                             "out": np.zeros((8, 16), np.float32)})
    assert_bits(got["out"], ref.ptomg_mgather_row(table, ix[0], oob, 16), oob)


def test_asm_mgather_oob_undefined_out_of_range():
    ix = np.full((1, 8), 64, np.int32)
    with pytest.raises(AccessError, match="pto.mgather.*MGATHER: index 64 is outside"):
        asm.run(_prog("{coalesce = #pto<coalesce row>}"),
                {"src": np.zeros((64, 16), np.float32), "ix": ix,
                 "out": np.zeros((8, 16), np.float32)})


@pytest.mark.parametrize("attrs, msg", [
    ("{gatherOob = #pto<gather_oob zero>}", "'pto.mgather' op requires attribute 'coalesce'"),
    ("", "'pto.mgather' op requires attribute 'coalesce'"),
    ("{coalesce = #pto<coalesce elem>}",
     "expects elem-coalesce idx valid_shape to match dst valid_shape"),
])
def test_asm_mgather_verifier(attrs, msg):
    with pytest.raises(AsmSyntaxError, match=msg) as e:
        asm.parse(_prog(attrs))
    assert e.value.line == _prog(attrs).splitlines().index(
        _GATHER.replace("ATTRS", attrs).rstrip("\n")) + 1


_SC = """module {
  func.func @k(%out: !pto.ptr<f32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c256 = arith.constant 256 : index
    %ov = pto.make_tensor_view %out, shape = [%c256], strides = [%c1] : !pto.tensor_view<?xf32>
    %op = pto.partition_view %ov, offsets = [%c0], sizes = [%c256] : !pto.tensor_view<?xf32> -> !pto.partition_tensor_view<256xf32>
    %s = pto.alloc_tile : !pto.tile_buf<loc=vec, dtype=f32, rows=8, cols=32, v_row=8, v_col=32, blayout=row_major, slayout=none_box, fractal=512, pad=0>
    %i = pto.alloc_tile : !pto.tile_buf<loc=vec, dtype=i32, rows=8, cols=32, v_row=IR, v_col=IC, blayout=row_major, slayout=none_box, fractal=512, pad=0>
    pto.mscatter ins(%s, %i : !pto.tile_buf<loc=vec, dtype=f32, rows=8, cols=32, v_row=8, v_col=32, blayout=row_major, slayout=none_box, fractal=512, pad=0>, !pto.tile_buf<loc=vec, dtype=i32, rows=8, cols=32, v_row=IR, v_col=IC, blayout=row_major, slayout=none_box, fractal=512, pad=0>) outs(%op : !pto.partition_tensor_view<256xf32>) ATTRS
    return
  }
}
"""


@pytest.mark.parametrize("ir, ic, attrs, msg", [
    (8, 1, "{scatterOob = #pto<scatter_oob skip>}", "expects coalesce when scatterAtomicOp/"
     "scatterOob/scatterConflict is specified"),
    (8, 1, "{scatterAtomicOp = #pto<scatter_atomic_op add>}", "expects coalesce when"),
    (4, 32, "", "expects idx valid_shape to be \\[src.valid_row, 0\\|1\\] or match src"),
    (8, 32, "{coalesce = #pto<coalesce row>}", "expects row-coalesce idx valid_shape"),
])
def test_asm_mscatter_verifier(ir, ic, attrs, msg):
    text = _SC.replace("IR", str(ir)).replace("IC", str(ic)).replace("ATTRS", attrs)
    with pytest.raises(AsmSyntaxError, match="'pto.mscatter' op " + msg):
        asm.parse(text)


@pytest.mark.parametrize("attrs, atomic, oob", [
    ("{coalesce = #pto<coalesce elem>, scatterOob = #pto<scatter_oob skip>}", "none", "skip"),
    ("{coalesce = #pto<coalesce elem>, scatterAtomicOp = #pto<scatter_atomic_op add>, "
     "scatterConflict = #pto<scatter_conflict last>}", "add", "undefined"),
])
def test_asm_mscatter_attrs(attrs, atomic, oob):
    text = _SC.replace("IR", "8").replace("IC", "32").replace("ATTRS", attrs)
    mod = asm.parse(text)
    base = np.arange(256, dtype=np.float32)
    got = asm.run(mod, {"out": base.copy()})["out"]
    # src and idx tiles start as zeros: every element scatters 0.0 to index 0
    want = base.copy()
    want[0] = 0.0 if atomic == "none" else base[0]
    assert_bits(got.reshape(-1), want, attrs)


# ---- pto.comm collectives and the async spellings ----
_COLL_TY = "!pto.partition_tensor_view<HxWxf32>"
_COLL = """module {
  func.func @k(%big: !pto.ptr<f32>, %m0: !pto.ptr<f32>, %m1: !pto.ptr<f32>, %m2: !pto.ptr<f32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %cH = arith.constant H : index
    %cW = arith.constant W : index
    %cB = arith.constant B : index
    %tb = pto.make_tensor_view %big, shape = [%cB, %cW], strides = [%cW, %c1] : !pto.tensor_view<?x?xf32>
    %pb = pto.partition_view %tb, offsets = [%c0, %c0], sizes = [%cB, %cW] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<BxWxf32>
    %t0 = pto.make_tensor_view %m0, shape = [%cH, %cW], strides = [%cW, %c1] : !pto.tensor_view<?x?xf32>
    %p0 = pto.partition_view %t0, offsets = [%c0, %c0], sizes = [%cH, %cW] : !pto.tensor_view<?x?xf32> -> TY
    %t1 = pto.make_tensor_view %m1, shape = [%cH, %cW], strides = [%cW, %c1] : !pto.tensor_view<?x?xf32>
    %p1 = pto.partition_view %t1, offsets = [%c0, %c0], sizes = [%cH, %cW] : !pto.tensor_view<?x?xf32> -> TY
    %t2 = pto.make_tensor_view %m2, shape = [%cH, %cW], strides = [%cW, %c1] : !pto.tensor_view<?x?xf32>
    %p2 = pto.partition_view %t2, offsets = [%c0, %c0], sizes = [%cH, %cW] : !pto.tensor_view<?x?xf32> -> TY
    %a = pto.alloc_tile : !pto.tile_buf<vec, 2x16xf32>
    %p = pto.alloc_tile : !pto.tile_buf<vec, 2x16xf32>
    %q = pto.alloc_tile : !pto.tile_buf<vec, 2x16xf32>
    OP
    return
  }
}
"""
_TILE = "!pto.tile_buf<vec, 2x16xf32>"


def _coll_text(kind, pong, root, red="sum"):
    H, W = 4, 32
    B = 3 * H if kind in ("tgather", "tscatter") else H
    recv = "recv(%p, %q)" if pong else "recv(%p)"
    ntile = 2 if pong else 1
    head = "%pb, %a, " if kind == "treduce" else "%pb, "
    tys = ", ".join([f"!pto.partition_tensor_view<{B}xWxf32>"]
                    + [_TILE] * (ntile + (kind == "treduce")) + ["TY"] * 3)
    attrs = f"reduceOp = #pto<reduce_op {red}>, root = {root} : i32" if kind == "treduce" \
        else f"root = {root} : i32"
    op = (f"pto.comm.{kind}({head}{recv}, group(%p0, %p1, %p2) : {tys}) {{{attrs}}}")
    text = _COLL.replace("OP", op).replace("TY", _COLL_TY)
    return (text.replace("BxW", f"{B}x{W}").replace("HxW", f"{H}x{W}")
            .replace("%cH = arith.constant H", f"%cH = arith.constant {H}")
            .replace("%cW = arith.constant W", f"%cW = arith.constant {W}")
            .replace("%cB = arith.constant B", f"%cB = arith.constant {B}")
            .replace("xWxf32", f"x{W}xf32")), H, W, B


@pytest.mark.parametrize("pong", (False, True))
@pytest.mark.parametrize("kind, root, red", [
    ("tbroadcast", 1, None), ("tgather", 0, None), ("tscatter", 2, None),
    ("treduce", 1, "sum"), ("treduce", 0, "max"), ("treduce", 2, "min")])
def test_asm_comm_collectives(kind, root, red, pong):
    text, H, W, B = _coll_text(kind, pong, root, red or "sum")
    rng = np.random.default_rng(7)
    big = rand("float32", (B, W), rng)
    ms = [rand("float32", (H, W), rng) for _ in range(3)]
    ins = {"big": big.copy(), "m0": ms[0].copy(), "m1": ms[1].copy(), "m2": ms[2].copy()}
    got = asm.run(text, ins)
    # the written views come back; the others must still hold their inputs
    written = {"tbroadcast": {"m0", "m1", "m2"}, "tscatter": {"m0", "m1", "m2"}}.get(
        kind, {"big"})
    assert set(got) == written
    got = {k: got.get(k, v) for k, v in ins.items()}
    wb, wm = ref.ptomg_collective(kind, big, ms, root, red or "sum")
    assert_bits(got["big"].reshape(B, W), wb, kind + " big")
    for r in range(3):
        assert_bits(got[f"m{r}"].reshape(H, W), wm[r], f"{kind} member {r}")


def test_asm_comm_collective_errors():
    text, *_ = _coll_text("tbroadcast", False, 3)
    with pytest.raises(ConstraintError, match="root must be in \\[0, 3\\)"):
        asm.run(text, {"big": np.zeros(128, np.float32)})
    text, *_ = _coll_text("tgather", False, 0)
    small = text.replace("%cB = arith.constant 12", "%cB = arith.constant 8").replace(
        "12x32xf32", "8x32xf32")
    with pytest.raises(ConstraintError, match="TGATHER: dst must have at least 3 x 4 = 12"):
        asm.run(small, {})


_ASYNC = """module {
  func.func @k(%dst: memref<128xf32, #pto.address_space<gm>>, %src: memref<SHAPExf32, #pto.address_space<gm>>, %ws: !pto.ptr<i8>) {
    %scratch = pto.alloc_tile : !pto.tile_buf<loc=vec, dtype=i8, rows=1, cols=256, v_row=1, v_col=256, blayout=row_major, slayout=none_box, fractal=512, pad=0>
    %ctx = pto.make_prefetch_async_context(%ws : !pto.ptr<i8>) -> !pto.prefetch_async_context
    %pe = pto.tprefetch_async(%src, %ctx : memref<SHAPExf32, #pto.address_space<gm>>, !pto.prefetch_async_context) -> !pto.async_event
    %s = pto.get_prefetch_async_session %ctx : !pto.prefetch_async_context -> !pto.async_session
    %ok = pto.comm.wait_async_event(%pe, %s : !pto.async_event, !pto.async_session) -> i1
    %put = pto.comm.tput_async(%dst, %src, %s : memref<128xf32, #pto.address_space<gm>>, memref<SHAPExf32, #pto.address_space<gm>>, !pto.async_session) -> !pto.async_event
    %done = pto.comm.test_async_event(%put, %s : !pto.async_event, !pto.async_session) -> i1
    return
  }
}
"""


def test_asm_tprefetch_async_and_comm_async_copy():
    src = np.arange(128, dtype=np.float32) * 0.5
    got = asm.run(_ASYNC.replace("SHAPE", "128"), {"src": src.copy(),
                                                 "dst": np.zeros(128, np.float32)})
    assert_bits(got["dst"], src, "tput_async after a prefetch")
    assert "src" not in got          # the prefetch writes nothing
    with pytest.raises(AsmSyntaxError, match="'pto.tprefetch_async' op expects src to be a "
                       "static flat contiguous logical 1D GM memref"):
        asm.parse(_ASYNC.replace("SHAPE", "4x32"))


def test_tprefetch_async_api():
    g = pto.GlobalTensor(np.ones(64, np.float16))
    ctx = pto.PrefetchAsyncContext()
    ev = pto.TPREFETCH_ASYNC(g, ctx)
    assert ev.wait(ctx.GetSession()) and ev.test()
    assert np.array_equal(g.array, np.ones(64, np.float16))
    with pytest.raises(ConstraintError, match="TPREFETCH_ASYNC: src must be a GlobalTensor"):
        pto.TPREFETCH_ASYNC(np.ones(4), ctx)
    with pytest.raises(ConstraintError, match="TPREFETCH_ASYNC: ctx must be a "
                       "PrefetchAsyncContext"):
        pto.TPREFETCH_ASYNC(g, None)


def _roundtrip(text):
    m = asm.parse(text)
    assert asm.parse(asm.format(m)) == m
    return m


def test_collective_and_async_programs_roundtrip():
    _roundtrip(_coll_text("treduce", True, 1, "max")[0])
    _roundtrip(_ASYNC.replace("SHAPE", "128"))
    _roundtrip(_prog("{coalesce = #pto<coalesce row>, gatherOob = #pto<gather_oob zero>}"))


# ---- MX scale tiles (fractal 32), loc=scaling, low-precision copies ----
def test_mx_scale_box_alignment():
    """pto_tile.hpp getInnerRow/getInnerCol for fractalMxSize: a 16 x 2 box (row-major
    boxes) or 2 x 16 (column-major); rows are not checked for the MX box."""
    T, S, B = pto.TileType, pto.SLayout, pto.BLayout
    pto.Tile(T.ScaleLeft, "float8_e8m0fnu", 128, 4, slayout=S.RowMajor, fractal=32)
    pto.Tile(T.ScaleLeft, "float8_e8m0fnu", 5, 2, slayout=S.RowMajor, fractal=32)
    pto.Tile(T.ScaleRight, "float8_e8m0fnu", 4, 64, blayout=B.ColMajor, slayout=S.ColMajor,
             fractal=32)
    assert pto.Tile(T.ScaleLeft, "float8_e8m0fnu", 16, 2, slayout=S.RowMajor,
                    fractal=32).inner_shape == (16, 2)
    with pytest.raises(pto.AlignmentError if hasattr(pto, "AlignmentError") else Exception,
                       match="cols % InnerCols \\(2\\) == 0, got cols=3"):
        pto.Tile(T.ScaleLeft, "float8_e8m0fnu", 16, 3, slayout=S.RowMajor, fractal=32)
    with pytest.raises(Exception, match="cols % InnerCols \\(16\\) == 0, got cols=24"):
        pto.Tile(T.ScaleRight, "float8_e8m0fnu", 2, 24, blayout=B.ColMajor,
                 slayout=S.ColMajor, fractal=32)


_MX = """module attributes {pto.target_arch = "a5"} {
  func.func @k(%a: LT, %b: RT, %sa: SA, %sb: SB, %out: !pto.ptr<f32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %tv = pto.make_tensor_view %out, shape = [%c16, %c16], strides = [%c16, %c1] : !pto.tensor_view<?x?xf32>
    %pv = pto.partition_view %tv, offsets = [%c0, %c0], sizes = [%c16, %c16] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<16x16xf32>
    %d = pto.alloc_tile : ACC
    pto.tmatmul.mx ins(%a, %sa, %b, %sb : LT, SA, RT, SB) outs(%d : ACC)
    pto.tstore ins(%d : ACC) outs(%pv : !pto.partition_tensor_view<16x16xf32>)
    return
  }
}
"""
_MXT = {
    "LT": "!pto.tile_buf<loc=left, dtype=f8E4M3FN, rows=16, cols=64, v_row=16, v_col=64, "
          "blayout=col_major, slayout=row_major, fractal=512, pad=0>",
    "RT": "!pto.tile_buf<loc=right, dtype=f8E5M2, rows=64, cols=16, v_row=64, v_col=16, "
          "blayout=row_major, slayout=col_major, fractal=512, pad=0>",
    "SA": "!pto.tile_buf<loc=scaling, dtype=!pto.f8E8M0, rows=16, cols=2, v_row=16, v_col=2, "
          "blayout=row_major, slayout=row_major, fractal=32, pad=0>",
    "SB": "!pto.tile_buf<loc=scaling, dtype=!pto.f8E8M0, rows=2, cols=16, v_row=2, v_col=16, "
          "blayout=col_major, slayout=col_major, fractal=32, pad=0>",
    "ACC": "!pto.tile_buf<loc=acc, dtype=f32, rows=16, cols=16, v_row=16, v_col=16, "
           "blayout=col_major, slayout=row_major, fractal=1024, pad=0>",
}


def _mx_text(**over):
    text = _MX
    for k, v in (_MXT | over).items():
        text = text.replace(k, v)
    return text


def test_asm_tmatmul_mx_scaling_space():
    """PTOAS's loc=scaling f8E8M0 tiles are the ScaleLeft (row-major, row-major boxes) and
    ScaleRight (column-major, column-major boxes) operands (PTOToEmitC.cpp
    scalingRoleToken)."""
    rng = np.random.default_rng(8)
    e4, e5 = ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2
    ca = rng.integers(0, 256, (16, 64)).astype(np.uint8)
    cb = rng.integers(0, 256, (64, 16)).astype(np.uint8)
    ca[np.isnan(ca.view(e4).astype(np.float64))] = 0
    cb[~np.isfinite(cb.view(e5).astype(np.float64))] = 0
    sa = rng.integers(120, 135, (16, 2)).astype(np.uint8)
    sb = rng.integers(120, 135, (2, 16)).astype(np.uint8)
    text = _mx_text()
    _roundtrip(text)
    e8 = ml_dtypes.float8_e8m0fnu
    got = asm.run(text, {"a": ca.view(e4), "b": cb.view(e5), "sa": sa.view(e8),
                         "sb": sb.view(e8), "out": np.zeros((16, 16), np.float32)})["out"]
    want = ref.ptolowp_mx_matmul(ca.view(e4).astype(np.float64), sa,
                                 cb.view(e5).astype(np.float64), sb)
    assert_bits(got.reshape(16, 16), np.asarray(want, np.float32), "tmatmul.mx")
    # a scaling-space tile of another dtype stays the fixpipe's Scaling buffer
    f16 = _MXT["SA"].replace("!pto.f8E8M0", "f16").replace("cols=2,", "cols=16,")
    with pytest.raises(ConstraintError, match="a_scale.loc must be TileType.ScaleLeft \\(an MX "
                       "scale tile is float8_e8m0fnu.*got 'Scaling'"):
        asm.run(_mx_text(SA=f16), {"a": ca.view(e4), "b": cb.view(e5), "sb": sb.view(e8)})


@pytest.mark.parametrize("fmt, pad, code", [
    ("float8_e5m2", pto.PadValue.Zero, 0x00), ("float8_e4m3fn", pto.PadValue.Max, 0x00),
    ("hifloat8", pto.PadValue.Min, 0x00)])
def test_tfillpad_1byte_lowp(fmt, pad, code):
    """A bit copy inside src's valid region, code 0 elsewhere for every PadValue (pto-isa
    include/pto/common/constants.hpp, the A5 PadValueMap of the low-precision formats)."""
    rng = np.random.default_rng(9)
    src = pto.Tile(pto.TileType.Vec, fmt, 8, 64, valid_row=5, valid_col=37)
    dst = pto.Tile(pto.TileType.Vec, fmt, 8, 64, valid_row=5, valid_col=37, pad=pad)
    src.data.view(np.uint8)[...] = rng.integers(0, 256, (8, 64))
    pto.TFILLPAD(dst, src)
    want = np.full((8, 64), code, np.uint8)
    want[:5, :37] = src.data.view(np.uint8)[:5, :37]
    assert np.array_equal(dst.data.view(np.uint8), want)


def test_tfillpad_lowp_mat_tile_and_errors():
    fmt = "float8_e5m2"
    kw = dict(blayout=CM, slayout=pto.SLayout.RowMajor, valid_row=20, valid_col=40)
    src = pto.Tile(MAT, fmt, 32, 64, **kw)
    dst = pto.Tile(MAT, fmt, 32, 64, pad=pto.PadValue.Zero, **kw)
    src.data.view(np.uint8)[...] = 0x3C
    dst.data.view(np.uint8)[...] = 0x11
    pto.TFILLPAD(dst, src)
    want = np.zeros((32, 64), np.uint8)
    want[:20, :40] = 0x3C
    assert np.array_equal(dst.data.view(np.uint8), want)
    other = pto.Tile(MAT, fmt, 32, 128, **kw)
    with pytest.raises(ConstraintError, match="TFILLPAD: dst shape must equal src's shape"):
        pto.TFILLPAD(other, src)


def test_tprefetch_and_tgather_1byte_lowp():
    codes = np.arange(256, dtype=np.uint8).reshape(8, 32)
    g = pto.GlobalTensor(codes.view(ml_dtypes.float8_e4m3fn))
    t = pto.Tile(pto.TileType.Vec, "float8_e4m3fn", 8, 32)
    pto.TPREFETCH(t, g)
    assert np.array_equal(t.data.view(np.uint8), codes)
    rng = np.random.default_rng(10)
    src = pto.Tile(pto.TileType.Vec, "hifloat8", 8, 32)
    src.data[...] = codes
    idx = tile("int32", 8, 32, RM)
    idx.data[...] = rng.permutation(256).reshape(8, 32)
    dst = pto.Tile(pto.TileType.Vec, "hifloat8", 8, 32)
    with pto.target("A5"):
        pto.TGATHER(dst, src, idx)
    assert np.array_equal(dst.data.view(np.uint8), codes.reshape(-1)[idx.data])
    m = pto.Tile(pto.TileType.Vec, "hifloat8", 8, 32)
    with pto.target("A5"):
        pto.TGATHER(m, src, maskPattern="P0101")
    assert np.array_equal(m.data.view(np.uint8).reshape(-1)[:128],
                          codes[:, 0::2].reshape(-1))
    with pytest.raises(ConstraintError, match="TGATHER: src.dtype must be one of"):
        pto.TGATHER(pto.Tile(pto.TileType.Vec, "float16", 8, 32), src, idx)


_TQ = """module attributes {pto.target_arch = "a5"} {
  func.func @k(%x: !pto.ptr<f32>, %y: !pto.ptr<i8>, %e: !pto.ptr<ui8>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %c64 = arith.constant 64 : index
    %tx = pto.make_tensor_view %x, shape = [%c4, %c64], strides = [%c64, %c1] : !pto.tensor_view<?x?xf32>
    %px = pto.partition_view %tx, offsets = [%c0, %c0], sizes = [%c4, %c64] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<4x64xf32>
    %ty = pto.make_tensor_view %y, shape = [%c4, %c64], strides = [%c64, %c1] : !pto.tensor_view<?x?xi8>
    %py = pto.partition_view %ty, offsets = [%c0, %c0], sizes = [%c4, %c64] : !pto.tensor_view<?x?xi8> -> !pto.partition_tensor_view<4x64xi8>
    %te = pto.make_tensor_view %e, shape = [%c4, %c2], strides = [%c2, %c1] : !pto.tensor_view<?x?xui8>
    %pe = pto.partition_view %te, offsets = [%c0, %c0], sizes = [%c4, %c2] : !pto.tensor_view<?x?xui8> -> !pto.partition_tensor_view<4x2xui8>
    %s = pto.alloc_tile : !pto.tile_buf<loc=vec, dtype=f32, rows=4, cols=64, v_row=4, v_col=64, blayout=row_major, slayout=none_box, fractal=512, pad=0>
    %d = pto.alloc_tile : !pto.tile_buf<loc=vec, dtype=i8, rows=4, cols=64, v_row=4, v_col=64, blayout=row_major, slayout=none_box, fractal=512, pad=0>
    %ex = pto.alloc_tile : !pto.tile_buf<loc=vec, dtype=ui8, rows=4, cols=32, v_row=4, v_col=2, blayout=row_major, slayout=none_box, fractal=512, pad=0>
    %mx = pto.alloc_tile : !pto.tile_buf<loc=vec, dtype=f32, rows=1, cols=8, v_row=1, v_col=8, blayout=row_major, slayout=none_box, fractal=512, pad=0>
    %sc = pto.alloc_tile : !pto.tile_buf<loc=vec, dtype=f32, rows=1, cols=8, v_row=1, v_col=8, blayout=row_major, slayout=none_box, fractal=512, pad=0>
    pto.tload ins(%px : !pto.partition_tensor_view<4x64xf32>) outs(%s : !pto.tile_buf<loc=vec, dtype=f32, rows=4, cols=64, v_row=4, v_col=64, blayout=row_major, slayout=none_box, fractal=512, pad=0>)
    pto.tquant.mx ins(%s : !pto.tile_buf<loc=vec, dtype=f32, rows=4, cols=64, v_row=4, v_col=64, blayout=row_major, slayout=none_box, fractal=512, pad=0>) outs(%d, %ex, %mx, %sc : !pto.tile_buf<loc=vec, dtype=i8, rows=4, cols=64, v_row=4, v_col=64, blayout=row_major, slayout=none_box, fractal=512, pad=0>, !pto.tile_buf<loc=vec, dtype=ui8, rows=4, cols=32, v_row=4, v_col=2, blayout=row_major, slayout=none_box, fractal=512, pad=0>, !pto.tile_buf<loc=vec, dtype=f32, rows=1, cols=8, v_row=1, v_col=8, blayout=row_major, slayout=none_box, fractal=512, pad=0>, !pto.tile_buf<loc=vec, dtype=f32, rows=1, cols=8, v_row=1, v_col=8, blayout=row_major, slayout=none_box, fractal=512, pad=0>) {quant_type = #pto<quant_type QT>ALG}
    pto.tstore ins(%d : !pto.tile_buf<loc=vec, dtype=i8, rows=4, cols=64, v_row=4, v_col=64, blayout=row_major, slayout=none_box, fractal=512, pad=0>) outs(%py : !pto.partition_tensor_view<4x64xi8>)
    pto.tstore ins(%ex : !pto.tile_buf<loc=vec, dtype=ui8, rows=4, cols=32, v_row=4, v_col=2, blayout=row_major, slayout=none_box, fractal=512, pad=0>) outs(%pe : !pto.partition_tensor_view<4x2xui8>)
    return
  }
}
"""


@pytest.mark.parametrize("alg", ("ocp", "nv"))
def test_asm_tquant_mx_equals_api(alg):
    rng = np.random.default_rng(11)
    x = (rng.standard_normal((4, 64)) * 10.0 ** rng.integers(-3, 4, (4, 64))).astype(np.float32)
    a = "" if alg == "ocp" else ", quantScaleAlg = #pto<quant_scale_alg nv>"
    text = _TQ.replace("QT", "MXFP8").replace("ALG", a)
    _roundtrip(text)
    got = asm.run(text, {"x": x})
    V = pto.TileType.Vec
    s = pto.Tile(V, "float32", 4, 64)
    s.data[...] = x
    d = pto.Tile(V, "int8", 4, 64)
    ex = pto.Tile(V, "uint8", 4, 32, valid_col=2)
    mx = pto.Tile(V, "float32", 1, 8)
    sc = pto.Tile(V, "float32", 1, 8)
    old = pto.get_target()
    pto.set_target("a5")
    try:
        pto.TQUANT(d, s, quantType=pto.QuantType.MXFP8, exp=ex, max=mx, scaling=sc,
                   scaleAlg=pto.QuantScaleAlg[alg.upper()])
    finally:
        pto.set_target(old)
    assert np.array_equal(got["y"].reshape(4, 64), d.data)
    assert np.array_equal(got["e"].reshape(4, 2), ex.valid)
    with pytest.raises(ValueError, match="quant_type must be MXFP8 or MXFP4_E2M1"):
        asm.run(_TQ.replace("QT", "INT8_SYM").replace("ALG", ""), {"x": x})


_GMPIPE = """module {
  func.func @mix(%slots: !pto.ptr<f32>, %x: !pto.ptr<f32>, %y: !pto.ptr<f32>) attributes {pto.entry} {
    func.call @cube(%slots, %x) : (!pto.ptr<f32>, !pto.ptr<f32>) -> ()
    func.call @vec(%slots, %y) : (!pto.ptr<f32>, !pto.ptr<f32>) -> ()
    return
  }
  func.func private @cube(%slots: !pto.ptr<f32>, %x: !pto.ptr<f32>) attributes {pto.kernel_kind = #pto.kernel_kind<cube>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %gs = pto.make_tensor_view %slots, shape = [%c16, %c16], strides = [%c16, %c1] : !pto.tensor_view<16x16xf32>
    pto.aic_initialize_pipe {id = 0, dir_mask = 1, slot_size = 1024} (gm_slot_tensor = %gs : !pto.tensor_view<16x16xf32>)
    %vx = pto.make_tensor_view %x, shape = [%c16, %c16], strides = [%c16, %c1] : !pto.tensor_view<16x16xf32>
    %px = pto.partition_view %vx, offsets = [%c0, %c0], sizes = [%c16, %c16] : !pto.tensor_view<16x16xf32> -> !pto.partition_tensor_view<16x16xf32>
    %t = pto.alloc_tile : !pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=16, v_row=16, v_col=16, blayout=row_major, slayout=none_box, fractal=512, pad=0>
    pto.tload ins(%px : !pto.partition_tensor_view<16x16xf32>) outs(%t : !pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=16, v_row=16, v_col=16, blayout=row_major, slayout=none_box, fractal=512, pad=0>)
    %e = pto.talloc_to_aiv {id = 0, split = 0} -> !pto.tensor_view<16x16xf32>
    %pe = pto.partition_view %e, offsets = [%c0, %c0], sizes = [%c16, %c16] : !pto.tensor_view<16x16xf32> -> !pto.partition_tensor_view<16x16xf32>
    pto.tstore ins(%t : !pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=16, v_row=16, v_col=16, blayout=row_major, slayout=none_box, fractal=512, pad=0>) outs(%pe : !pto.partition_tensor_view<16x16xf32>)
    pto.tpush_to_aiv(%e : !pto.tensor_view<16x16xf32>) {id = 0, split = 0}
    return
  }
  func.func private @vec(%slots: !pto.ptr<f32>, %y: !pto.ptr<f32>) attributes {pto.kernel_kind = #pto.kernel_kind<vector>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %gs = pto.make_tensor_view %slots, shape = [%c16, %c16], strides = [%c16, %c1] : !pto.tensor_view<16x16xf32>
    pto.aiv_initialize_pipe {id = 0, dir_mask = 1, slot_size = 1024} (gm_slot_tensor = %gs : !pto.tensor_view<16x16xf32>)
    %vy = pto.make_tensor_view %y, shape = [%c16, %c16], strides = [%c16, %c1] : !pto.tensor_view<16x16xf32>
    %py = pto.partition_view %vy, offsets = [%c0, %c0], sizes = [%c16, %c16] : !pto.tensor_view<16x16xf32> -> !pto.partition_tensor_view<16x16xf32>
    %e = pto.tpop_from_aic {id = 0, split = 0} -> !pto.tensor_view<16x16xf32>
    %pe = pto.partition_view %e, offsets = [%c0, %c0], sizes = [%c16, %c16] : !pto.tensor_view<16x16xf32> -> !pto.partition_tensor_view<16x16xf32>
    %t = pto.alloc_tile : !pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=16, v_row=16, v_col=16, blayout=row_major, slayout=none_box, fractal=512, pad=0>
    pto.tload ins(%pe : !pto.partition_tensor_view<16x16xf32>) outs(%t : !pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=16, v_row=16, v_col=16, blayout=row_major, slayout=none_box, fractal=512, pad=0>)
    pto.tfree_from_aic(%e : !pto.tensor_view<16x16xf32>) {id = 0, split = 0}
    pto.tmuls ins(%t, %c2f : !pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=16, v_row=16, v_col=16, blayout=row_major, slayout=none_box, fractal=512, pad=0>, f32) outs(%t : !pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=16, v_row=16, v_col=16, blayout=row_major, slayout=none_box, fractal=512, pad=0>)
    pto.tstore ins(%t : !pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=16, v_row=16, v_col=16, blayout=row_major, slayout=none_box, fractal=512, pad=0>) outs(%py : !pto.partition_tensor_view<16x16xf32>)
    return
  }
}
"""


def test_asm_gm_slot_pipe():
    """pto.talloc_to_aiv / tpush_to_aiv of a tensor_view / tpop_from_aic -> tensor_view: the
    data the cube core stores into its slot reaches the vector core's tload."""
    text = _GMPIPE.replace("    %e = pto.tpop_from_aic", "    %c2f = arith.constant 2.0 : f32\n"
                           "    %e = pto.tpop_from_aic")
    _roundtrip(text)
    x = np.arange(256, dtype=np.float32).reshape(16, 16) - 100.5
    got = asm.run(text, {"x": x, "y": np.zeros((16, 16), np.float32)})
    assert_bits(got["y"].reshape(16, 16), x * np.float32(2), "through the GM slot")
    bad = text.replace("%e = pto.tpop_from_aic {id = 0, split = 0} -> "
                       "!pto.tensor_view<16x16xf32>",
                       "%e = pto.tpop_from_aic {id = 0, split = 0} -> "
                       "!pto.tensor_view<8x16xf32>")
    with pytest.raises(AsmSyntaxError, match="'pto.tpop_from_aic' op expects pipe entry "
                       "dimension 0 to match gm_slot_tensor dimension 16"):
        asm.parse(bad)


_TB16 = ("!pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=16, v_row=16, v_col=16, "
         "blayout=row_major, slayout=none_box, fractal=512, pad=0>")
_INTERNAL = """module {
  func.func @mix(%x: !pto.ptr<f32>, %y: !pto.ptr<f32>, %gs: !pto.tensor_view<16x16xf32>) attributes {pto.entry} {
    func.call @cube(%x, %gs) : (!pto.ptr<f32>, !pto.tensor_view<16x16xf32>) -> ()
    func.call @vec(%y, %gs) : (!pto.ptr<f32>, !pto.tensor_view<16x16xf32>) -> ()
    return
  }
  func.func private @cube(%x: !pto.ptr<f32>, %gs: !pto.tensor_view<16x16xf32>) attributes {pto.kernel_kind = #pto.kernel_kind<cube>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %pipe = "pto.initialize_l2g2l_pipe"(%gs) <{dir_mask = 1 : i8, slot_size = 1024 : i32, slot_num = 8 : i32, flag_base = 0 : i32, operandSegmentSizes = array<i32: 1, 0, 0>}> : (!pto.tensor_view<16x16xf32>) -> !pto.pipe
    %vx = pto.make_tensor_view %x, shape = [%c16, %c16], strides = [%c16, %c1] : !pto.tensor_view<16x16xf32>
    %px = pto.partition_view %vx, offsets = [%c0, %c0], sizes = [%c16, %c16] : !pto.tensor_view<16x16xf32> -> !pto.partition_tensor_view<16x16xf32>
    %t = pto.alloc_tile : TB
    pto.tload ins(%px : !pto.partition_tensor_view<16x16xf32>) outs(%t : TB)
    %e = pto.declare_global -> !pto.tensor_view<ENTRYxf32>
    pto.talloc(%e, %pipe : !pto.tensor_view<ENTRYxf32>, !pto.pipe) {split = 0}
    %pe = pto.partition_view %e, offsets = [%c0, %c0], sizes = [%c16, %c16] : !pto.tensor_view<16x16xf32> -> !pto.partition_tensor_view<16x16xf32>
    pto.tstore ins(%t : TB) outs(%pe : !pto.partition_tensor_view<16x16xf32>)
    pto.tpush(%e, %pipe : !pto.tensor_view<16x16xf32>, !pto.pipe) {split = 0}
    return
  }
  func.func private @vec(%y: !pto.ptr<f32>, %gs: !pto.tensor_view<16x16xf32>) attributes {pto.kernel_kind = #pto.kernel_kind<vector>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %pipe = "pto.initialize_l2g2l_pipe"(%gs) <{dir_mask = 1 : i8, slot_size = 1024 : i32, slot_num = 8 : i32, flag_base = 0 : i32, operandSegmentSizes = array<i32: 1, 0, 0>}> : (!pto.tensor_view<16x16xf32>) -> !pto.pipe
    %vy = pto.make_tensor_view %y, shape = [%c16, %c16], strides = [%c16, %c1] : !pto.tensor_view<16x16xf32>
    %py = pto.partition_view %vy, offsets = [%c0, %c0], sizes = [%c16, %c16] : !pto.tensor_view<16x16xf32> -> !pto.partition_tensor_view<16x16xf32>
    %t = pto.alloc_tile : TB
    pto.tpop(%t, %pipe : TB, !pto.pipe) {split = 0}
    pto.tstore ins(%t : TB) outs(%py : !pto.partition_tensor_view<16x16xf32>)
    return
  }
}
""".replace("TB", _TB16)


def test_asm_declare_global_talloc_tpush():
    """pto.declare_global + pto.talloc bind a GM slot descriptor, pto.tpush hands it over;
    the consumer's tpop into a tile sees the stored data."""
    text = _INTERNAL.replace("ENTRY", "16x16")
    _roundtrip(text)
    x = np.arange(256, dtype=np.float32).reshape(16, 16) * 0.25
    got = asm.run(text, {"x": x, "y": np.zeros((16, 16), np.float32)})
    assert_bits(got["y"].reshape(16, 16), x, "declare_global slot")


def test_asm_gm_pipe_entry_verifier():
    gmpipe = _GMPIPE.replace("    %e = pto.tpop_from_aic", "    %c2f = arith.constant 2.0 : "
                             "f32\n    %e = pto.tpop_from_aic")
    bad = _INTERNAL.replace("ENTRY", "16x32")
    with pytest.raises(AsmSyntaxError, match="'pto.talloc' op expects pipe entry dimension 1 "
                       "to match initialize_l2g2l_pipe gm_addr dimension 16"):
        asm.parse(bad)
    front = gmpipe.replace("%e = pto.talloc_to_aiv {id = 0, split = 0} -> "
                            "!pto.tensor_view<16x16xf32>",
                            "%e = pto.talloc_to_aiv {id = 0, split = 0} -> "
                            "!pto.tensor_view<16x8xf32>")
    with pytest.raises(AsmSyntaxError, match="'pto.talloc_to_aiv' op expects pipe entry "
                       "dimension 1 to match gm_slot_tensor dimension 16"):
        asm.parse(front)
    elem = gmpipe.replace("%e = pto.talloc_to_aiv {id = 0, split = 0} -> "
                           "!pto.tensor_view<16x16xf32>",
                           "%e = pto.talloc_to_aiv {id = 0, split = 0} -> "
                           "!pto.tensor_view<16x16xf16>")
    with pytest.raises(AsmSyntaxError, match="element type to match gm_slot_tensor"):
        asm.parse(elem)


@pytest.mark.parametrize("qt, sdt", [("MXFP8", "float32"), ("MXFP4_E2M1", "bfloat16")])
def test_tquant_mx_one_row_exp_and_padded_dst(qt, sdt):
    """A one-row exp tile holding the A x B exponents gets them flat in the grid's row-major
    order (the A5 implementation's consecutive UB bytes); a dst padded to 32-byte rows is
    written in its valid region only.  Both equal the grid-shaped, unpadded call."""
    rng = np.random.default_rng(12)
    V = pto.TileType.Vec
    x = (rng.standard_normal((16, 64)) * 10.0 ** rng.integers(-2, 3, (16, 64))).astype(np.float32)
    src = pto.Tile(V, sdt, 16, 64)
    src.data[...] = x.astype(src.dtype)
    ddt = "int8" if qt == "MXFP8" else "float4_e2m1x2"
    lanes = 1 if qt == "MXFP8" else 2
    grid_d = pto.Tile(V, ddt, 16, 64 // lanes)
    grid_e = pto.Tile(V, "uint8", 16, 32, valid_col=2)
    flat_d = pto.Tile(V, ddt, 16, 64 if lanes == 2 else 64, valid_col=64 // lanes)
    flat_d.data.view(np.uint8)[...] = 0xAB
    flat_e = pto.Tile(V, "uint8", 1, 64, valid_col=32)
    flat_e.data[...] = 0xCD
    mk = lambda: (pto.Tile(V, "float32", 1, 32), pto.Tile(V, "float32", 1, 32))  # noqa: E731
    with pto.target("A5"):
        pto.TQUANT(grid_d, src, quantType=pto.QuantType[qt], exp=grid_e, max=mk()[0],
                   scaling=mk()[1], rng=5)
        pto.TQUANT(flat_d, src, quantType=pto.QuantType[qt], exp=flat_e, max=mk()[0],
                   scaling=mk()[1], rng=5)
    assert np.array_equal(flat_e.data[0, :32], grid_e.valid.reshape(-1))
    assert (flat_e.data[0, 32:] == 0xCD).all()
    assert np.array_equal(flat_d.valid.view(np.uint8), grid_d.valid.view(np.uint8))
    if lanes == 2:
        assert (flat_d.data.view(np.uint8)[:, 32:] == 0xAB).all()
    short = pto.Tile(V, "uint8", 1, 32, valid_col=31)
    with pto.target("A5"), pytest.raises(ConstraintError, match="exp valid shape must hold "
                                         "the 16 x 2 exponent grid \\(or 32 exponents"):
        pto.TQUANT(grid_d, src, quantType=pto.QuantType[qt], exp=short, max=mk()[0],
                   scaling=mk()[1])


@pytest.mark.parametrize("oob", ("undefined", "skip", "clamp", "wrap"))
@pytest.mark.parametrize("form", ("1xR", "Rx1"))
def test_mscatter_row_index_forms(form, oob):
    rng = np.random.default_rng(13)
    R, C, T = 6, 16, 10
    g = rand("float32", (T, C), rng)
    src = tile("float32", 8, 16, RM, R, C, rng)
    raw = rng.permutation(T)[:R]
    if oob != "undefined":
        raw[1], raw[4] = T + 1, -2
    if form == "1xR":
        idx = tile("int32", 1, 8, RM, 1, R)
        idx.data[0, :R] = raw
    else:
        idx = tile("int32", 8, 8, CM, R, 1)
        idx.data[:R, 0] = raw
    out = g.copy()
    pto.MSCATTER(pto.GlobalTensor(out, shape=(1, 1, 1, T, C)), src, idx, coalesce="row",
                 oob=oob)
    assert_bits(out, ref.ptomg_mscatter_row(g, src.valid, raw, oob), f"{form} {oob}")


_L1 = """module {
  func.func @k(%mem: memref<1x1x1x64x32xf16, #pto.address_space<gm>>, %idx: IDXT, %sc: memref<1x1x1x32x32xf16, #pto.address_space<gm>>, %out: !pto.ptr<f16>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %dst = pto.alloc_tile : DST
    pto.mgather ins(%mem, %idx SCR: memref<1x1x1x64x32xf16, #pto.address_space<gm>>, IDXT SCRT) outs(%dst : DST) {coalesce = #pto<coalesce CO>}
    %b = pto.alloc_tile : !pto.tile_buf<loc=vec, dtype=f16, rows=32, cols=32, v_row=32, v_col=32, blayout=row_major, slayout=none_box, fractal=512, pad=0>
    return
  }
}
"""
_NZ = ("!pto.tile_buf<loc=mat, dtype=f16, rows=32, cols=32, v_row=32, v_col=32, "
       "blayout=col_major, slayout=row_major, fractal=512, pad=0>")


def _l1_text(co="row", scratch=False, idx="memref<1x1x1x1x32xi32, #pto.address_space<gm>>",
             dst=_NZ):
    scr, scrt = (", %sc", ", memref<1x1x1x32x32xf16, #pto.address_space<gm>>") if scratch \
        else ("", "")
    if co == "elem" and idx.startswith("memref<1x1x1x1x32"):
        idx = "memref<1x1x1x32x32xi32, #pto.address_space<gm>>"
    return (_L1.replace("IDXT", idx).replace("DST", dst).replace("SCRT", scrt)
            .replace("SCR", scr).replace("CO", co))


def test_asm_mgather_l1_runs_and_writes_scratch():
    rng = np.random.default_rng(14)
    table = rand("float16", (64, 32), rng)
    ix = rng.integers(0, 64 * 32, (32, 32)).astype(np.int32)
    sc = np.zeros(32 * 32, np.float16)
    text = _l1_text("elem", scratch=True)
    _roundtrip(text)
    got = asm.run(text, {"mem": table.reshape(1, 1, 1, 64, 32), "idx": ix.reshape(1, 1, 1, 32, 32),
                         "sc": sc.reshape(1, 1, 1, 32, 32)})
    whole = ref.ptomg_mgather_elem(table.reshape(-1), ix, "undefined", 64 * 32)
    assert_bits(got["sc"].reshape(-1), ref.ptomg_nz_order(whole, 16), "scratch in NZ order")
    rows = rng.integers(0, 64, (1, 32)).astype(np.int32)
    asm.run(_l1_text("row"), {"mem": table.reshape(1, 1, 1, 64, 32),
                              "idx": rows.reshape(1, 1, 1, 1, 32)})


@pytest.mark.parametrize("kw, msg", [
    (dict(idx="!pto.tile_buf<loc=vec, dtype=i32, rows=1, cols=32, v_row=1, v_col=32, "
              "blayout=row_major, slayout=none_box, fractal=512, pad=0>"),
     "expects GM->L1 mgather idx to be a GM tensor"),
    (dict(co="elem"), "expects GM->L1 mgather with coalesce=elem to provide a GM scratch"),
    (dict(scratch=True), "expects GM->L1 mgather with coalesce=row to omit the scratch"),
    (dict(dst=_NZ.replace("blayout=col_major", "blayout=row_major")),
     "expects GM->L1 mgather dst \\(loc=mat\\) to use blayout=col_major and slayout=row_major"),
])
def test_asm_mgather_l1_verifier(kw, msg):
    with pytest.raises(AsmSyntaxError, match="'pto.mgather' op " + msg):
        asm.parse(_l1_text(**kw))


def test_asm_mgather_vec_scratch_rejected():
    text = _prog("{coalesce = #pto<coalesce row>}").replace(
        "pto.mgather ins(%pv, %it : !pto.partition_tensor_view<64x16xf32>, ",
        "pto.mgather ins(%pv, %it, %op : !pto.partition_tensor_view<64x16xf32>, ").replace(
        "fractal=512, pad=0>) outs(%d", "fractal=512, pad=0>, "
        "!pto.partition_tensor_view<8x16xf32>) outs(%d")
    with pytest.raises(AsmSyntaxError, match="expects scratch operand only on GM->L1"):
        asm.parse(text)
