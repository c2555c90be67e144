"""ptoacc branch (issue 13): PTOAS tile types pto-isa's Tile cannot declare (a padded physical
layout in PTO-AS), pto-isa's fractal box sizes, tile arguments with dynamic valid shapes,
TLOAD / TSTORE / TPREFETCH with a view larger than the valid region, and trowexpand* with a
one-column row-major per-row operand.  Programs written for these tests."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import reference as ref
from fastisa import pto
from fastisa.errors import AccessError, AlignmentError, AsmSyntaxError, ConstraintError
from fastisa.pto import asm
from fastisa.pto._asm_parser import parse
from fastisa.pto._asm_runner import physical_shape

V, M = pto.TileType.Vec, pto.TileType.Mat
RM, CM = pto.BLayout.RowMajor, pto.BLayout.ColMajor
SL = {"none": pto.SLayout.NoneBox, "row": pto.SLayout.RowMajor, "col": pto.SLayout.ColMajor}


def bits(a):
    a = np.ascontiguousarray(a)
    return a.view(np.dtype(f"u{a.dtype.itemsize}"))


# ---- pto-isa's box sizes (pto_tile.hpp getInnerRow / getInnerCol) -------------------------
@pytest.mark.parametrize("dtype", ["float32", "float16", "int8"])
@pytest.mark.parametrize("slayout", ["none", "row", "col"])
@pytest.mark.parametrize("fractal", [32, 512, 1024])
def test_inner_shape_is_pto_isas(dtype, slayout, fractal):
    isz = np.dtype(dtype).itemsize
    ir, ic = ref.ptoacc_inner_shape(isz, slayout, fractal)
    rows, cols = 2 * max(ir, 16), 2 * max(ic, 32 // isz)
    t = pto.Tile(M, dtype, rows, cols, blayout=CM if slayout == "row" else RM,
                 slayout=SL[slayout], fractal=fractal)
    assert t.inner_shape == (ir, ic)


def test_mx_box_is_16_by_2_and_exempts_rows():
    # a 1 x 4 and a 4 x 32 scaling tile with the 32-byte MX box (16 x 2 / 2 x 16)
    pto.Tile(M, "float16", 1, 4, slayout=pto.SLayout.RowMajor, fractal=32)
    pto.Tile(M, "float16", 4, 32, blayout=CM, slayout=pto.SLayout.ColMajor, fractal=32)
    with pytest.raises(AlignmentError, match=r"InnerCols \(2\) == 0, got cols=3"):
        pto.Tile(M, "float16", 16, 3, slayout=pto.SLayout.RowMajor, fractal=32)
    # the 1024-byte box is 16 x 16 for every dtype: a 1 x 8 float16 acc tile is illegal
    with pytest.raises(AlignmentError, match=r"InnerCols \(16\) == 0, got cols=8"):
        pto.Tile(pto.TileType.Acc, "float16", 1, 8, blayout=CM, slayout=pto.SLayout.RowMajor,
                 fractal=1024)
    # rows must fill the box off Vec unless one row or the MX box
    with pytest.raises(AlignmentError, match=r"InnerRows \(16\) == 0, got rows=8"):
        pto.Tile(M, "float16", 8, 16, blayout=CM, slayout=pto.SLayout.RowMajor, fractal=1024)


# ---- PTO-AS: the physical shape of a tile type ---------------------------------------------
def _ty(text):
    src = f"func.func @f(%t: {text}) {{\n  return\n}}\n"
    return parse(src).func().args[0][1]


@pytest.mark.parametrize("ty,want", [
    ("!pto.tile_buf<vec, 32x1xf32>", (32, 8)),                 # 4-byte rows -> 32 bytes
    ("!pto.tile_buf<vec, 16x16xf8E4M3FN>", (16, 32)),          # 16-byte rows
    ("!pto.tile_buf<vec, 16x8x!pto.f4E1M2x2>", (16, 16)),      # x2: 16 bytes a row
    ("!pto.tile_buf<vec, 3x16xf16, blayout=col_major>", (16, 16)),
    ("!pto.tile_buf<vec, 16x16xf32>", (16, 16)),               # legal: unchanged
    ("!pto.tile_buf<acc, 1x8xf16, blayout=col_major, slayout=row_major, fractal=1024>",
     (1, 16)),
    ("!pto.tile_buf<mat, 8x16xf16, blayout=col_major, slayout=row_major, fractal=1024>",
     (16, 16)),
    ("!pto.tile_buf<vec, 8x16xf16, blayout=col_major, slayout=row_major, fractal=1024>",
     (8, 16)),                                                 # Vec: rows exempt
])
def test_physical_shape(ty, want):
    assert physical_shape(_ty(ty)) == want


def _copy_program(tile_decl, dt, rows, cols):
    return f"""module attributes {{pto.target_arch = "a5"}} {{
func.func @f(%x: !pto.ptr<{dt}>, %y: !pto.ptr<{dt}>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cr = arith.constant {rows} : index
  %cc = arith.constant {cols} : index
  %vx = pto.make_tensor_view %x, shape = [%cr, %cc], strides = [%cc, %c1] : !pto.tensor_view<?x?x{dt}>
  %vy = pto.make_tensor_view %y, shape = [%cr, %cc], strides = [%cc, %c1] : !pto.tensor_view<?x?x{dt}>
  %px = pto.partition_view %vx, offsets = [%c0, %c0], sizes = [%cr, %cc] : !pto.tensor_view<?x?x{dt}> -> !pto.partition_tensor_view<{rows}x{cols}x{dt}>
  %py = pto.partition_view %vy, offsets = [%c0, %c0], sizes = [%cr, %cc] : !pto.tensor_view<?x?x{dt}> -> !pto.partition_tensor_view<{rows}x{cols}x{dt}>
  %t = {tile_decl} !pto.tile_buf<vec, {rows}x{cols}x{dt}>
  pto.tload ins(%px : !pto.partition_tensor_view<{rows}x{cols}x{dt}>) outs(%t : !pto.tile_buf<vec, {rows}x{cols}x{dt}>)
  pto.tstore ins(%t : !pto.tile_buf<vec, {rows}x{cols}x{dt}>) outs(%py : !pto.partition_tensor_view<{rows}x{cols}x{dt}>)
  return
}}
}}
"""


def test_declared_fp8_tile_with_16_byte_rows_round_trips():
    """A 16 x 16 fp8 vec tile (16-byte rows, accepted by PTOAS's declare_tile) runs on a
    16 x 32 physical tile with valid 16 x 16: TLOAD then TSTORE is the identity."""
    codes = np.random.default_rng(3).integers(0, 256, (16, 16), dtype=np.uint8)
    x = codes.view(ml_dtypes.float8_e4m3fn)
    y = asm.run(_copy_program("pto.declare_tile ->", "f8E4M3FN", 16, 16), {"x": x})["y"]
    np.testing.assert_array_equal(bits(y), codes)


def test_alloc_tile_keeps_pto_isas_rule():
    """pto.alloc_tile is verified by PTOAS (verifyTileBufLayoutConstraints): no padding."""
    with pytest.raises(AlignmentError, match="32-byte rows") as ei:
        asm.run(_copy_program("pto.alloc_tile :", "f8E4M3FN", 16, 16),
                {"x": np.zeros((16, 16), ml_dtypes.float8_e4m3fn)})
    assert ei.value.line == 11
    text = ("func.func @f() {\n  %t = pto.alloc_multi_tile : "
            "!pto.multi_tile_buf<vec, 32x1xf32, count=2>\n  return\n}\n")
    with pytest.raises(AlignmentError, match="32-byte rows"):
        asm.run(text, {})


# ---- trowexpand* with a row-major one-column per-row operand -------------------------------
ROWEXP = """
func.func @f(%y: !pto.ptr<{dt}>, %full: !pto.tile_buf<vec, 16x32x{dt}>,
             %col: !pto.tile_buf<vec, 16x1x{dt}>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %vy = pto.make_tensor_view %y, shape = [%c16, %c32], strides = [%c32, %c1] : !pto.tensor_view<?x?x{dt}>
  %py = pto.partition_view %vy, offsets = [%c0, %c0], sizes = [%c16, %c32] : !pto.tensor_view<?x?x{dt}> -> !pto.partition_tensor_view<16x32x{dt}>
  %d = pto.alloc_tile : !pto.tile_buf<vec, 16x32x{dt}>
  pto.trowexpand{op} ins({a}, {b} : !pto.tile_buf<vec, {ta}x{dt}>, !pto.tile_buf<vec, {tb}x{dt}>) outs(%d : !pto.tile_buf<vec, 16x32x{dt}>)
  pto.tstore ins(%d : !pto.tile_buf<vec, 16x32x{dt}>) outs(%py : !pto.partition_tensor_view<16x32x{dt}>)
  return
}}
"""


@pytest.mark.parametrize("op,col_first", [(op, False) for op in ("add", "sub", "mul", "div",
                                                                 "max", "min")]
                         + [(op, True) for op in ("add", "mul", "max", "min")])
@pytest.mark.parametrize("dt,npdt", [("f32", np.float32), ("f16", np.float16)])
def test_trowexpand_one_column_row_major_operand(op, dt, npdt, col_first):
    rng = np.random.default_rng(11)
    full = (rng.standard_normal((16, 32)) * 4).astype(npdt)
    col = (rng.standard_normal((16, 1)) * 4 + 8).astype(npdt)   # no zero divisor
    a, b = ("%col", "%full") if col_first else ("%full", "%col")
    ta, tb = ("16x1", "16x32") if col_first else ("16x32", "16x1")
    text = ROWEXP.format(dt=dt, op=op, a=a, b=b, ta=ta, tb=tb)
    y = asm.run(text, {"full": full, "col": col})["y"]
    np.testing.assert_array_equal(bits(y), bits(ref.ptoacc_rowexpand(op, full, col)))


# ---- tile arguments with a dynamic valid shape ---------------------------------------------
DYN = """
func.func @f(%y: !pto.ptr<f32>, %t: !pto.tile_buf<vec, 16x32xf32, valid=?x?>, %r: index, %c: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %vy = pto.make_tensor_view %y, shape = [%c16, %c32], strides = [%c32, %c1] : !pto.tensor_view<?x?xf32>
  %py = pto.partition_view %vy, offsets = [%c0, %c0], sizes = [%r, %c] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<?x?xf32>
  %d = pto.alloc_tile valid_row = %r valid_col = %c : !pto.tile_buf<vec, 16x32xf32, valid=?x?>
  pto.tadd ins(%t, %t : !pto.tile_buf<vec, 16x32xf32, valid=?x?>, !pto.tile_buf<vec, 16x32xf32, valid=?x?>) outs(%d : !pto.tile_buf<vec, 16x32xf32, valid=?x?>)
  pto.tstore ins(%d : !pto.tile_buf<vec, 16x32xf32, valid=?x?>) outs(%py : !pto.partition_tensor_view<?x?xf32>)
  return
}
"""


def test_dynamic_tile_argument_takes_the_input_arrays_shape():
    t = np.random.default_rng(2).standard_normal((5, 7)).astype(np.float32)
    y = asm.run(DYN, {"t": t, "r": 5, "c": 7, "y": np.full((16, 32), 9, np.float32)})["y"]
    np.testing.assert_array_equal(y[:5, :7], t + t)
    assert (y[5:] == 9).all() and (y[:, 7:] == 9).all()


def test_dynamic_tile_argument_without_an_array_is_the_declared_shape():
    y = asm.run(DYN, {"r": 16, "c": 32}, random=np.random.default_rng(0))["y"]
    assert y.shape == (16, 32) and np.isfinite(y).all()
    with pytest.raises(ConstraintError, match="valid shape must equal"):
        asm.run(DYN, {"r": 4, "c": 4}, random=np.random.default_rng(0))


def test_dynamic_tile_argument_errors():
    with pytest.raises(ConstraintError, match="has 17 rows, more than the tile's 16"):
        asm.run(DYN, {"t": np.zeros((17, 4), np.float32), "r": 4, "c": 4})
    with pytest.raises(ConstraintError, match="must be 2-D"):
        asm.run(DYN, {"t": np.zeros(4, np.float32), "r": 4, "c": 4})


# ---- TLOAD / TSTORE / TPREFETCH with a view larger than the valid region -------------------
@pytest.mark.parametrize("pad,fill", [(pto.PadValue.Null, 0.0), (pto.PadValue.Max, np.inf),
                                      (pto.PadValue.Min, -np.inf)])
@pytest.mark.parametrize("shape,strides,valid", [
    ((1, 1, 1, 8, 48), (384, 384, 384, 48, 1), (8, 16)),
    ((1, 1, 2, 4, 48), (500, 500, 200, 48, 1), (6, 40)),      # rows split over dims 2, 3
    ((1, 1, 1, 8, 48), (384, 384, 384, 48, 1), (8, 48)),      # equal: the old rule
])
def test_tload_larger_view_loads_the_valid_region(pad, fill, shape, strides, valid):
    flat = np.random.default_rng(4).standard_normal(1000).astype(np.float32)
    gt = pto.GlobalTensor(flat, shape=shape, strides=strides)
    t = pto.Tile(V, "float32", 8, 48, valid_row=valid[0], valid_col=valid[1], pad=pad)
    t.data[...] = 77.0
    pto.TLOAD(t, gt)
    want = ref.ptoacc_tload(flat, shape, strides, (8, 48), valid, fill)
    np.testing.assert_array_equal(bits(t.data), bits(want))


def test_tload_larger_view_in_dn_layout():
    a = np.random.default_rng(6).standard_normal((12, 10)).astype(np.float32)
    gt = pto.GlobalTensor(np.asfortranarray(a).ravel(order="K"), shape=(1, 1, 1, 12, 10),
                          strides=(120, 120, 120, 1, 12), layout=pto.Layout.DN)
    t = pto.Tile(V, "float32", 16, 16, blayout=CM, valid_row=9, valid_col=5)
    pto.TLOAD(t, gt)
    np.testing.assert_array_equal(t.valid, a[:9, :5])
    assert not t.data[9:].any() and not t.data[:, 5:].any()


def test_tload_view_smaller_than_valid_raises_and_changes_nothing():
    t = pto.Tile(V, "float32", 8, 48, valid_row=8, valid_col=16)
    t.data[...] = 5.0
    gt = pto.GlobalTensor(np.zeros((8, 8), np.float32))
    with pytest.raises(ConstraintError, match=r"must be at least the tile valid shape \(8, 16\)"):
        pto.TLOAD(t, gt)
    with pytest.raises(ConstraintError, match=r"must be at least the tile valid shape"):
        pto.TSTORE(gt, t)
    with pytest.raises(ConstraintError, match=r"TPREFETCH: src shape"):
        pto.TPREFETCH(t, gt)
    assert (t.data == 5.0).all()


@pytest.mark.parametrize("shape,strides,valid", [
    ((1, 1, 1, 8, 48), (384, 384, 384, 48, 1), (8, 16)),
    ((1, 1, 2, 4, 16), (400, 400, 100, 16, 1), (5, 10)),      # a view numpy cannot reshape
])
def test_tstore_larger_view_writes_only_the_valid_region(shape, strides, valid):
    rng = np.random.default_rng(8)
    flat = rng.standard_normal(400).astype(np.float32)
    before = flat.copy()
    t = pto.Tile(V, "float32", 8, 48, valid_row=valid[0], valid_col=valid[1])
    t.data[...] = rng.standard_normal((8, 48)).astype(np.float32)
    pto.TSTORE(pto.GlobalTensor(flat, shape=shape, strides=strides), t)
    np.testing.assert_array_equal(bits(flat), bits(ref.ptoacc_tstore(before, shape, strides,
                                                                     t.valid)))


def test_tprefetch_larger_view_reads_the_top_left():
    a = np.random.default_rng(9).standard_normal((8, 48)).astype(np.float32)
    t = pto.Tile(V, "float32", 8, 48, valid_row=8, valid_col=16)
    t.data[...] = 3.0
    pto.TPREFETCH(t, pto.GlobalTensor(a))
    np.testing.assert_array_equal(t.valid, a[:, :16])
    assert (t.data[:, 16:] == 3.0).all()


LARGER = """
func.func @f(%x: !pto.ptr<f16>, %y: !pto.ptr<f16>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c48 = arith.constant 48 : index
  %vx = pto.make_tensor_view %x, shape = [%c8, %c48], strides = [%c48, %c1] : !pto.tensor_view<?x?xf16>
  %vy = pto.make_tensor_view %y, shape = [%c8, %c48], strides = [%c48, %c1] : !pto.tensor_view<?x?xf16>
  %px = pto.partition_view %vx, offsets = [%c0, %c0], sizes = [%c8, %c48] : !pto.tensor_view<?x?xf16> -> !pto.partition_tensor_view<8x48xf16>
  %py = pto.partition_view %vy, offsets = [%c0, %c0], sizes = [%c8, %c{n}] : !pto.tensor_view<?x?xf16> -> !pto.partition_tensor_view<8x{n}xf16>
  %a = pto.alloc_tile : !pto.tile_buf<vec, 8x48xf16, valid=8x16>
  pto.tload ins(%px : !pto.partition_tensor_view<8x48xf16>) outs(%a : !pto.tile_buf<vec, 8x48xf16, valid=8x16>)
  pto.tstore ins(%a : !pto.tile_buf<vec, 8x48xf16, valid=8x16>) outs(%py : !pto.partition_tensor_view<8x{n}xf16>)
  return
}}
"""


def test_tload_larger_view_from_pto_as():
    """PTOAS's TLOAD verifier has no shape rule (an 8 x 48 view into a tile with valid
    8 x 16 loads the valid region, checked against the CPU simulator's loop); its TSTORE
    verifier wants equal static element counts."""
    x = np.random.default_rng(1).standard_normal((8, 48)).astype(np.float16)
    y0 = np.full((8, 48), 2.0, np.float16)
    y = asm.run(LARGER.format(n=16), {"x": x, "y": y0})["y"]
    tile = ref.ptoacc_tload(x.ravel(), (1, 1, 1, 8, 48), (384, 384, 384, 48, 1), (8, 48),
                            (8, 16), 0)
    flat = ref.ptoacc_tstore(y0.ravel(), (1, 1, 1, 8, 16), (384, 384, 384, 48, 1),
                             tile[:, :16])
    np.testing.assert_array_equal(bits(y), bits(flat.reshape(8, 48)))
    with pytest.raises(AsmSyntaxError, match=r"expects dst static element count \(384\) to "
                       r"match src valid_shape static element count \(128\)") as ei:
        asm.parse(LARGER.format(n=48))
    assert ei.value.line == 14


# ---- pto.get_ctrl / set_ctrl / sbitset0 / sbitset1 ------------------------------------------
CTRL = """
func.func @f(%y: !pto.ptr<i64>, %v: i64, %b: i64) {{
  %c0 = arith.constant 0 : index
  %g0 = pto.get_ctrl : i64
  %s = pto.sbitset{which} %v, %b : i64, i64 -> i64
  pto.set_ctrl %s : i64
  %g1 = pto.get_ctrl : i64
  pto.store_scalar %g0, %y[%c0] : !pto.ptr<i64>, i64
  %c1 = arith.constant 1 : index
  pto.store_scalar %g1, %y[%c1] : !pto.ptr<i64>, i64
  pto.set_ctrl %g0 : i64
  {tail}
  return
}}
"""


@pytest.mark.parametrize("which", [0, 1])
@pytest.mark.parametrize("v,b", [(0, 0), (0, 45), (-1, 63), (0x1234_5678_9ABC_DEF0, 4),
                                 (5, 2)])
def test_ctrl_register_round_trip(which, v, b):
    y = asm.run(CTRL.format(which=which, tail=""), {"v": v, "b": b,
                                                    "y": np.zeros(2, np.int64)})["y"]
    u = v & (1 << 64) - 1
    want = u | (1 << b) if which else u & ~(1 << b)
    assert int(y[0]) == 0                                   # CTRL_RESET
    assert int(y[1]) & (1 << 64) - 1 == want


def test_ctrl_changed_stops_tile_instructions_and_restored_does_not():
    tile = ("%t = pto.alloc_tile : !pto.tile_buf<vec, 8x8xf32>\n"
            "  pto.tneg ins(%t : !pto.tile_buf<vec, 8x8xf32>) outs(%t : "
            "!pto.tile_buf<vec, 8x8xf32>)")
    # restored to the reset value before the tile instruction: runs
    asm.run(CTRL.format(which=1, tail=tile), {"v": 0, "b": 3, "y": np.zeros(2, np.int64)})
    changed = CTRL.format(which=1, tail="pto.set_ctrl %s : i64\n  " + tile)
    with pytest.raises(NotImplementedError, match="CTRL register"):
        asm.run(changed, {"v": 0, "b": 3, "y": np.zeros(2, np.int64)})
    with pytest.raises(ConstraintError, match=r"bit must be in \[0, 63\], got 64"):
        asm.run(CTRL.format(which=1, tail=""), {"v": 0, "b": 64, "y": np.zeros(2, np.int64)})


# ---- a declared helper defined in a sibling module ------------------------------------------
LINKED = """module {{
  module {{
    func.func private @helper(%x: !pto.ptr<f32>)
    func.func @entry(%x: !pto.ptr<f32>) {{
      func.call @helper(%x) : (!pto.ptr<f32>) -> ()
      return
    }}
  }}
  module {{
{defs}
  }}
}}
"""
HELPER = """    func.func {vis} @helper(%x: !pto.ptr<f32>) {{
      %c0 = arith.constant 0 : index
      %v = arith.constant {val} : f32
      pto.store_scalar %v, %x[%c0] : !pto.ptr<f32>, f32
      return
    }}"""


def test_declared_helper_runs_the_sibling_modules_definition():
    text = LINKED.format(defs=HELPER.format(vis="public", val="2.5"))
    x = asm.run(text, {"x": np.zeros(4, np.float32)}, func="entry")["x"]
    assert x[0] == np.float32(2.5)


@pytest.mark.parametrize("defs,msg", [
    (HELPER.format(vis="private", val="1.0"), r"only declared \(no body\)$"),
    (HELPER.format(vis="public", val="1.0") + "\n" + HELPER.format(vis="", val="2.0"),
     "2 definitions in the module match it"),
])
def test_declared_helper_without_one_definition_is_not_run(defs, msg):
    with pytest.raises(NotImplementedError, match=msg):
        asm.run(LINKED.format(defs=defs), {"x": np.zeros(4, np.float32)}, func="entry")


# ---- TROWEXPANDDIV / TCOLEXPANDDIV: the A5-only dtypes ----------------------------------------
def _div_oracle(a, b):
    """Integers: C++ truncating division element by element; bfloat16: the float32 quotient
    rounded once to bfloat16 (fastisa's arithmetic through float32)."""
    if a.dtype.kind in "iu":
        out = np.empty_like(a)
        for i, (x, y) in enumerate(zip(a.ravel().tolist(), b.ravel().tolist())):
            q = abs(x) // abs(y)
            out.flat[i] = q if (x < 0) == (y < 0) else -q
        return out
    return (a.astype(np.float32) / b.astype(np.float32)).astype(a.dtype)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "bfloat16"])
@pytest.mark.parametrize("form", ["row", "col"])
def test_expanddiv_a5_dtypes(dtype, form):
    npdt = np.dtype(ml_dtypes.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)
    rng = np.random.default_rng(12)
    lo = 0 if dtype == "uint8" else -100
    full = rng.integers(lo, 100, (32, 64)).astype(npdt)
    if form == "row":
        per = rng.integers(1, 9, (32, 1)) * rng.choice([1, -1] if lo else [1], (32, 1))
        per_t = pto.Tile(V, dtype, 32, 1, blayout=CM)
        b = np.broadcast_to(per.astype(npdt), (32, 64))
    else:
        per = rng.integers(1, 9, (1, 64)) * rng.choice([1, -1] if lo else [1], (1, 64))
        per_t = pto.Tile(V, dtype, 1, 64)
        b = np.broadcast_to(per.astype(npdt), (32, 64))
    per_t.data[...] = per.astype(npdt)
    src = pto.Tile(V, dtype, 32, 64)
    src.data[...] = full
    dst = pto.Tile(V, dtype, 32, 64)
    fn = pto.TROWEXPANDDIV if form == "row" else pto.TCOLEXPANDDIV
    with pto.target("A2A3"):
        with pytest.raises(ConstraintError, match="dst.dtype must be one of"):
            fn(dst, src, per_t)
    with pto.target("A5"):
        fn(dst, src, per_t)
    np.testing.assert_array_equal(bits(dst.data), bits(_div_oracle(full, np.array(b))))


# ---- pto.syncall ---------------------------------------------------------------------------
SYNCALL = """
func.func @f(%x: !pto.ptr<i32>, %y: !pto.ptr<i32>, %n: i32) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %v = pto.make_tensor_view %x, shape = [%c1, %c64], strides = [%c64, %c1] : !pto.tensor_view<?x?xi32>
  %p = pto.partition_view %v, offsets = [%c0, %c0], sizes = [%c1, %c64] : !pto.tensor_view<?x?xi32> -> !pto.partition_tensor_view<1x64xi32>
  %vy = pto.make_tensor_view %y, shape = [%c1, %c64], strides = [%c64, %c1] : !pto.tensor_view<?x?xi32>
  %py = pto.partition_view %vy, offsets = [%c0, %c0], sizes = [%c1, %c64] : !pto.tensor_view<?x?xi32> -> !pto.partition_tensor_view<1x64xi32>
  %ub = pto.alloc_tile : !pto.tile_buf<vec, 1x64xi32>
  %l1 = pto.alloc_tile : !pto.tile_buf<mat, 1x64xi32>
  pto.tload ins(%p : !pto.partition_tensor_view<1x64xi32>) outs(%ub : !pto.tile_buf<vec, 1x64xi32>)
  {sync}
  pto.tstore ins(%ub : !pto.tile_buf<vec, 1x64xi32>) outs(%py : !pto.partition_tensor_view<1x64xi32>)
  return
}}
"""
_T = {"p": "!pto.partition_tensor_view<1x64xi32>", "ub": "!pto.tile_buf<vec, 1x64xi32>",
      "l1": "!pto.tile_buf<mat, 1x64xi32>", "n": "i32"}


def _sync(ops, mode, core):
    ins = f"({', '.join('%' + o for o in ops)} : {', '.join(_T[o] for o in ops)})" if ops \
        else "()"
    return (f"pto.syncall{ins} mode = #pto.sync_all_mode<{mode}>, "
            f"core_type = #pto.sync_core_type<{core}>")


@pytest.mark.parametrize("ops,mode,core", [
    ((), "hard", "mix"), (("p", "ub"), "soft", "aiv_only"), (("p", "ub", "n"), "soft", "aiv_only"),
    (("p", "l1"), "soft", "aic_only"), (("p", "ub", "l1", "n"), "soft", "mix"),
])
def test_syncall_of_one_core_returns_at_once(ops, mode, core):
    """One block, one core: the barrier is complete on arrival (the CPU simulator's SYNCALL
    is a no-op); the workspaces are not written."""
    x = np.arange(64, dtype=np.int32).reshape(1, 64)
    out = asm.run(SYNCALL.format(sync=_sync(ops, mode, core)), {"x": x, "n": 1})
    np.testing.assert_array_equal(out["y"], x)
    assert "x" not in out


@pytest.mark.parametrize("ops,mode,core,msg", [
    (("p",), "hard", "mix", "hard syncall to have no workspace"),
    (("p",), "soft", "aiv_only", "soft AIV-only syncall to use gm_workspace \\+ ub_workspace"),
    (("p", "ub"), "soft", "aic_only", "soft AIC-only"),
    (("p", "l1"), "soft", "mix", "soft mixed syncall"),
])
def test_syncall_operand_rules(ops, mode, core, msg):
    with pytest.raises(ConstraintError, match=msg) as ei:
        asm.run(SYNCALL.format(sync=_sync(ops, mode, core)),
                {"x": np.zeros((1, 64), np.int32), "n": 1})
    assert ei.value.line == 13


# ---- an attribute dict on the line after a bare operand list ---------------------------------
def test_attribute_dict_continues_a_bare_operand_list():
    text = """func.func @f(%a: index, %b: index) {
  %v = pto.bind_tile %a, %b, %b
    {config = #pto.tile_buf_config<blayout=0 : i32, slayout=0 : i32, s_fractal_size=512, pad=0 : i32>}
    : memref<1x64xf32, #pto.address_space<bias>> -> memref<1x64xf32, #pto.address_space<bias>>
  return
}
"""
    op = parse(text).func().body[0]
    assert op.name == "pto.bind_tile" and "config" in op.text and "->" in op.text


# ---- TEXPANDS on a Mat tile -----------------------------------------------------------------
@pytest.mark.parametrize("dtype,value", [("bfloat16", 1.5), ("float32", -2.25), ("int8", -7),
                                         ("uint16", 65535)])
def test_texpands_mat_fills_the_whole_tile(dtype, value):
    t = pto.Tile(M, dtype, 16, 32, blayout=CM, slayout=pto.SLayout.RowMajor, valid_row=5,
                 valid_col=3)
    pto.TEXPANDS(t, value)
    npdt = t.dtype
    np.testing.assert_array_equal(bits(t.data), bits(np.full((16, 32), value, npdt)))
    v = pto.Tile(V, dtype, 16, 32, valid_row=5, valid_col=3)
    pto.TEXPANDS(v, value)                       # Vec: the valid region only
    assert (v.data[:5, :3] == np.array(value, npdt)).all() and not v.data[5:].any()


def test_texpands_mat_dtype_rule():
    with pytest.raises(ConstraintError, match="TEXPANDS: dst.dtype must be one of"):
        pto.TEXPANDS(pto.Tile(M, "uint64", 16, 4), 1)


# ---- pto.tcmp into a signless i8 mask tile ---------------------------------------------------
def test_tcmp_into_an_i8_mask_is_the_uint8_mask_bits():
    text = """
func.func @f(%a: !pto.tile_buf<vec, 8x64xf32>, %b: !pto.tile_buf<vec, 8x64xf32>, %y: !pto.ptr<i8>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %vy = pto.make_tensor_view %y, shape = [%c8, %c64], strides = [%c64, %c1] : !pto.tensor_view<?x?xi8>
  %py = pto.partition_view %vy, offsets = [%c0, %c0], sizes = [%c8, %c64] : !pto.tensor_view<?x?xi8> -> !pto.partition_tensor_view<8x64xi8>
  %m = pto.alloc_tile : !pto.tile_buf<vec, 8x64xi8>
  pto.tcmp ins(%a, %b {cmpMode = #pto<cmp gt>} : !pto.tile_buf<vec, 8x64xf32>, !pto.tile_buf<vec, 8x64xf32>) outs(%m : !pto.tile_buf<vec, 8x64xi8>)
  pto.tstore ins(%m : !pto.tile_buf<vec, 8x64xi8>) outs(%py : !pto.partition_tensor_view<8x64xi8>)
  return
}
"""
    rng = np.random.default_rng(13)
    a = rng.standard_normal((8, 64)).astype(np.float32)
    b = rng.standard_normal((8, 64)).astype(np.float32)
    y = asm.run(text, {"a": a, "b": b})["y"]
    ta, tb = pto.Tile(V, "float32", 8, 64), pto.Tile(V, "float32", 8, 64)
    ta.data[...], tb.data[...] = a, b
    m = pto.Tile(V, "uint8", 8, 64)
    pto.TCMP(m, ta, tb, cmpMode=pto.CmpMode.GT)
    np.testing.assert_array_equal(y.view(np.uint8), m.data)
    # the packed bits: byte j of row r holds columns 8j .. 8j+7, LSB first
    want = np.packbits(a > b, axis=1, bitorder="little")
    np.testing.assert_array_equal(y.view(np.uint8)[:, :8], want)


# ---- TPREFETCH of a low-precision tile; pto.tprefetch_async ----------------------------------
def test_tprefetch_low_precision_copies_the_codes():
    codes = np.random.default_rng(14).integers(0, 256, (16, 32), dtype=np.uint8)
    gt = pto.GlobalTensor(codes.view(ml_dtypes.float8_e5m2))
    t = pto.Tile(V, "float8_e5m2", 16, 32, valid_row=16, valid_col=20)
    pto.TPREFETCH(t, gt)
    np.testing.assert_array_equal(t.data.view(np.uint8)[:, :20], codes[:, :20])
    assert not t.data.view(np.uint8)[:, 20:].any()


PREFETCH_ASYNC = """
func.func @f(%x: !pto.ptr<f32>, %y: !pto.ptr<f32>, %w: !pto.ptr<{wt}>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %vx = pto.make_tensor_view %x, shape = [%c64], strides = [%c1] : !pto.tensor_view<64xf32>
  %vy = pto.make_tensor_view %y, shape = [%c64], strides = [%c1] : !pto.tensor_view<64xf32>
  %px = pto.partition_view %vx, offsets = [%c0], sizes = [%c64] : !pto.tensor_view<64xf32>
  %py = pto.partition_view %vy, offsets = [%c0], sizes = [%c64] : !pto.tensor_view<64xf32>
  %ctx = pto.make_prefetch_async_context(%w : !pto.ptr<{wt}>) -> !pto.prefetch_async_context
  %e = pto.tprefetch_async(%px, %ctx : !pto.partition_tensor_view<64xf32>, !pto.prefetch_async_context) -> !pto.async_event
  %s = pto.get_prefetch_async_session %ctx : !pto.prefetch_async_context -> !pto.async_session
  %ok = pto.comm.wait_async_event(%e, %s : !pto.async_event, !pto.async_session) -> i1
  %t = pto.alloc_tile : !pto.tile_buf<vec, 1x64xf32>
  pto.tload ins(%px : !pto.partition_tensor_view<64xf32>) outs(%t : !pto.tile_buf<vec, 1x64xf32>)
  pto.tstore ins(%t : !pto.tile_buf<vec, 1x64xf32>) outs(%py : !pto.partition_tensor_view<64xf32>)
  %c0i = arith.constant 0 : index
  %okx = arith.extui %ok : i1 to i32
  return
}}
"""


def test_tprefetch_async_changes_no_data_and_completes():
    x = np.random.default_rng(15).standard_normal(64).astype(np.float32)
    w = np.full(16, 7, np.int8)
    out = asm.run(PREFETCH_ASYNC.format(wt="i8"), {"x": x, "w": w})
    np.testing.assert_array_equal(out["y"].ravel(), x)
    assert (w == 7).all() and "w" not in out


def test_tprefetch_async_operand_rules():
    with pytest.raises(ConstraintError, match="workspace element type to be an 8-bit integer"):
        asm.run(PREFETCH_ASYNC.format(wt="f32"), {"x": np.zeros(64, np.float32),
                                                  "w": np.zeros(4, np.float32)})
    two_d = PREFETCH_ASYNC.format(wt="i8").replace(
        "%e = pto.tprefetch_async(%px, %ctx : !pto.partition_tensor_view<64xf32>",
        "%v2 = pto.make_tensor_view %x, shape = [%c1, %c64], strides = [%c64, %c1] : "
        "!pto.tensor_view<1x64xf32>\n  %e = pto.tprefetch_async(%v2, %ctx : "
        "!pto.tensor_view<1x64xf32>")
    with pytest.raises(ConstraintError, match="flat contiguous logical 1D GM"):
        asm.run(two_d, {"x": np.zeros(64, np.float32), "w": np.zeros(4, np.int8)})


# ---- the 0 x 0 no-op replay marker ------------------------------------------------------------
EMPTY = """
func.func @f(%s: !pto.tile_buf<vec, 16x16xf32>, %y: !pto.ptr<f32>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %vy = pto.make_tensor_view %y, shape = [%c16, %c1], strides = [%c1, %c1] : !pto.tensor_view<?x?xf32>
  %py = pto.partition_view %vy, offsets = [%c0, %c0], sizes = [%c16, %c1] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<16x1xf32>
  %tmp = pto.alloc_tile : !pto.tile_buf<vec, 16x16xf32>
  %d = pto.alloc_tile valid_row = %c16 valid_col = %c1 : !pto.tile_buf<vec, 16x1xf32, blayout=col_major, valid=?x?>
  pto.texpands ins(%c7 : f32) outs(%d : !pto.tile_buf<vec, 16x1xf32, blayout=col_major, valid=?x?>)
  pto.set_validshape %d, %c0, %c0 : !pto.tile_buf<vec, 16x1xf32, blayout=col_major, valid=?x?>
  pto.{op} ins(%s, %tmp : !pto.tile_buf<vec, 16x16xf32>, !pto.tile_buf<vec, 16x16xf32>) outs(%d : !pto.tile_buf<vec, 16x1xf32, blayout=col_major, valid=?x?>)
  pto.set_validshape %d, %c16, %c1 : !pto.tile_buf<vec, 16x1xf32, blayout=col_major, valid=?x?>
  pto.tstore ins(%d : !pto.tile_buf<vec, 16x1xf32, blayout=col_major, valid=?x?>) outs(%py : !pto.partition_tensor_view<16x1xf32>)
  return
}}
"""


@pytest.mark.parametrize("op", ["trowsum", "trowmax", "trowmin"])
def test_empty_valid_region_is_a_no_op(op):
    text = EMPTY.format(op=op).replace("%c7 : f32", "%c7f : f32").replace(
        "  %tmp = pto.alloc_tile", "  %c7f = arith.constant 7.0 : f32\n  %tmp = pto.alloc_tile")
    s = np.random.default_rng(16).standard_normal((16, 16)).astype(np.float32)
    y = asm.run(text, {"s": s, "y": np.zeros((16, 1), np.float32)})["y"]
    assert (y == 7.0).all()
    # a non-empty region still reduces (the marker is only 0 x 0)
    full = text.replace("pto.set_validshape %d, %c0, %c0", "pto.set_validshape %d, %c16, %c1")
    y = asm.run(full, {"s": s, "y": np.zeros((16, 1), np.float32)})["y"]
    assert not (y == 7.0).all()


# ---- pto.tgetval ------------------------------------------------------------------------------
GETVAL = """
func.func @f(%t: !pto.tile_buf<vec, {shape}x{dt}{lay}>, %y: !pto.ptr<{dt}>, %k: index) {{
  %c0 = arith.constant 0 : index
  %v = pto.tgetval ins(%t, %k : !pto.tile_buf<vec, {shape}x{dt}{lay}>, index) outs : {dt}
  pto.store_scalar %v, %y[%c0] : !pto.ptr<{dt}>, {dt}
  return
}}
"""


@pytest.mark.parametrize("shape,dt,lay,npdt", [
    ("2x8", "i32", "", np.int32),                       # legal: storage order
    ("32x1", "f32", "", np.float32),                    # padded to 32 x 8: the dense offset
    ("3x16", "f16", ", blayout=col_major", np.float16),  # padded rows, column-major
])
def test_tgetval_reads_the_element_at_the_dense_offset(shape, dt, lay, npdt):
    r, c = map(int, shape.split("x"))
    vals = (np.arange(r * c) * 3 - 7).astype(npdt).reshape(r, c)
    for k in (0, 1, r * c - 1, (r * c) // 2):
        y = asm.run(GETVAL.format(shape=shape, dt=dt, lay=lay),
                    {"t": vals, "y": np.zeros(1, npdt), "k": k})["y"]
        rr, cc = divmod(k, c) if not lay else divmod(k, r)[::-1]
        assert y[0] == vals[rr, cc]
    with pytest.raises(AccessError, match="offset must be in"):
        asm.run(GETVAL.format(shape=shape, dt=dt, lay=lay),
                {"t": vals, "y": np.zeros(1, npdt), "k": r * c + (8 if dt == "i32" else 0)})


# ---- func.call of a kernel function that returns a value ------------------------------------
def test_call_of_a_kernel_function_with_a_result_runs_inline():
    text = """module attributes {pto.target_arch = "a5"} {
  func.func @kernel(%a: i32, %y: !pto.ptr<i32>) attributes {pto.entry} {
    %c0 = arith.constant 0 : index
    %r = func.call @helper(%a) : (i32) -> i32
    pto.store_scalar %r, %y[%c0] : !pto.ptr<i32>, i32
    return
  }
  func.func private @helper(%x: i32) -> i32 attributes {pto.kernel_kind = #pto.kernel_kind<cube>} {
    %c5 = arith.constant 5 : i32
    %s = arith.addi %x, %c5 : i32
    return %s : i32
  }
}
"""
    y = asm.run(text, {"a": 37, "y": np.zeros(1, np.int32)})["y"]
    assert y[0] == 42


# ---- TFILLPAD of a 1-byte low-precision tile ----------------------------------------------------
@pytest.mark.parametrize("fmt,pad,code", [
    # pto-isa's A5 PadValueMap: code 0 for every PadValue of the low-precision formats
    ("float8_e4m3fn", pto.PadValue.Zero, 0x00),
    ("float8_e5m2", pto.PadValue.Max, 0x00),
    ("float8_e5m2", pto.PadValue.Min, 0x00),
    ("hifloat8", pto.PadValue.Max, 0x00),
    ("float8_e4m3fn", pto.PadCustom(0x1234_5678), 0x78),     # the low byte
])
def test_tfillpad_low_precision(fmt, pad, code):
    codes = np.random.default_rng(17).integers(0, 256, (32, 64), dtype=np.uint8)
    src = pto.Tile(V, fmt, 32, 64, valid_row=20, valid_col=40)
    src.data.view(np.uint8)[...] = codes
    dst = pto.Tile(V, fmt, 32, 64, pad=pad)
    pto.TFILLPAD(dst, src)
    want = np.full((32, 64), code, np.uint8)
    want[:20, :40] = codes[:20, :40]
    np.testing.assert_array_equal(dst.data.view(np.uint8), want)


# ---- TMATMUL of the A5 fp8 pairs ------------------------------------------------------------------
@pytest.mark.parametrize("fa,fb", [("float8_e4m3fn", "float8_e4m3fn"),
                                   ("float8_e4m3fn", "float8_e5m2"),
                                   ("float8_e5m2", "float8_e4m3fn"),
                                   ("float8_e5m2", "float8_e5m2")])
def test_tmatmul_fp8_pairs(fa, fb):
    rng = np.random.default_rng(18)
    M, K, N = 16, 64, 32
    npa, npb = np.dtype(getattr(ml_dtypes, fa)), np.dtype(getattr(ml_dtypes, fb))
    av = (rng.standard_normal((M, K)) * 3).astype(npa)
    bv = (rng.standard_normal((K, N)) * 3).astype(npb)
    a = pto.Tile(pto.TileType.Left, fa, M, K, blayout=CM, slayout=pto.SLayout.RowMajor)
    b = pto.Tile(pto.TileType.Right, fb, K, N, slayout=pto.SLayout.ColMajor)
    d = pto.Tile(pto.TileType.Acc, "float32", M, N, blayout=CM, slayout=pto.SLayout.RowMajor,
                 fractal=1024)
    a.data[...], b.data[...] = av, bv
    with pto.target("A2A3"):
        with pytest.raises(ConstraintError, match="A5 only"):
            pto.TMATMUL(d, a, b)
    with pto.target("A5"):
        pto.TMATMUL(d, a, b)
    want = ref.pto_matmul(av.astype(np.float32), bv.astype(np.float32), np.float32)
    np.testing.assert_array_equal(bits(d.data), bits(want))


# ---- TGATHER of 1-byte low-precision tiles (A5) -----------------------------------------------------
@pytest.mark.parametrize("fmt", ["float8_e4m3fn", "float8_e5m2", "hifloat8"])
def test_tgather_low_precision_moves_the_codes(fmt):
    rng = np.random.default_rng(19)
    codes = rng.integers(0, 256, (2, 32), dtype=np.uint8)
    idx = rng.integers(0, 64, (2, 32)).astype(np.int32)
    src = pto.Tile(V, fmt, 2, 32)
    src.data.view(np.uint8)[...] = codes
    dst = pto.Tile(V, fmt, 2, 32)
    it = pto.Tile(V, "int32", 2, 32)
    it.data[...] = idx
    with pto.target("A2A3"):
        with pytest.raises(ConstraintError, match="A5 only"):
            pto.TGATHER(dst, src, it)
    with pto.target("A5"):
        pto.TGATHER(dst, src, it)
        # the same gather of the uint8 codes (the oracle: flat index v -> codes.flat[v])
        np.testing.assert_array_equal(dst.data.view(np.uint8), codes.ravel()[idx])
        m = pto.Tile(V, fmt, 2, 32)
        pto.TGATHER(m, src, maskPattern=pto.MaskPattern.P1111)
        u = pto.Tile(V, "uint8", 2, 32)
        u.data[...] = codes
        w = pto.Tile(V, "uint8", 2, 32)
        pto.TGATHER(w, u, maskPattern=pto.MaskPattern.P1111)
        np.testing.assert_array_equal(m.data.view(np.uint8), w.data)
