"""PTO-AS: tile ``pto.subview`` and mixed AIC/AIV kernels whose cores share global memory
(the forms the pypto-emitted Qwen3 / DeepSeek V4 decode samples of PTOAS use).

Programs are our own; the dialect facts come from PTOAS include/PTO/IR/PTOOps.td
(SubViewOp: "a view into the source tile ... lowering keeps parent physical stride/base
semantics") and lib/PTO/IR/PTO.cpp (SubViewOp::parse / verify)."""

import numpy as np
import pytest

from fastisa.errors import AccessError, FastisaError
from fastisa.pto import asm


def _tb(rows, cols, v_row=None, v_col=None, dtype="f32", layout="row_major"):
    vr = "?" if v_row is None else v_row
    vc = "?" if v_col is None else v_col
    return (f"!pto.tile_buf<loc=vec, dtype={dtype}, rows={rows}, cols={cols}, v_row={vr}, "
            f"v_col={vc}, blayout={layout}, slayout=none_box, fractal=512, pad=0>")


def _subview_prog(r0, c0, h, w, *, src=(8, 128), addr=None, valid=None, then=""):
    """Load an src-shaped f32 matrix from %a, take ``subview [r0, c0] sizes [h, w]`` and
    store the view to %b (h x w); ``then`` runs before the store (ops on %s / %t)."""
    R, C = src
    T = _tb(R, C, R, C)
    # constant valid operands give a static result valid shape (PTOAS SubViewOp)
    S = _tb(h, w, *((h, w) if valid is None else valid))
    alloc = (f"pto.alloc_tile addr = %caddr : {T}" if addr is not None
             else f"pto.alloc_tile : {T}")
    vtxt = "" if valid is None else f" valid [%cvr, %cvc]"
    vconst = "" if valid is None else (f"    %cvr = arith.constant {valid[0]} : index\n"
                                       f"    %cvc = arith.constant {valid[1]} : index\n")
    vh, vw = (h, w) if valid is None else valid
    return f"""module {{
  func.func @k(%a: !pto.ptr<f32>, %b: !pto.ptr<f32>) {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %cR = arith.constant {R} : index
    %cC = arith.constant {C} : index
    %cvh = arith.constant {vh} : index
    %cvw = arith.constant {vw} : index
    %cr0 = arith.constant {r0} : index
    %cc0 = arith.constant {c0} : index
    %caddr = arith.constant {addr or 0} : i64
{vconst}    %va = pto.make_tensor_view %a, shape = [%cR, %cC], strides = [%cC, %c1] : !pto.tensor_view<?x?xf32>
    %vb = pto.make_tensor_view %b, shape = [%cvh, %cvw], strides = [%cvw, %c1] : !pto.tensor_view<?x?xf32>
    %pa = pto.partition_view %va, offsets = [%c0, %c0], sizes = [%cR, %cC] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<{R}x{C}xf32>
    %pb = pto.partition_view %vb, offsets = [%c0, %c0], sizes = [%cvh, %cvw] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<{vh}x{vw}xf32>
    %t = {alloc}
    pto.tload ins(%pa : !pto.partition_tensor_view<{R}x{C}xf32>) outs(%t : {T})
    %s = pto.subview %t[%cr0, %cc0] sizes [{h}, {w}]{vtxt} : {T} -> {S}
{then}    pto.tstore ins(%s : {S}) outs(%pb : !pto.partition_tensor_view<{vh}x{vw}xf32>)
    return
  }}
}}
"""


def _a(shape=(8, 128)):
    return np.arange(np.prod(shape), dtype=np.float32).reshape(shape)


@pytest.mark.parametrize("r0, c0, h, w", [
    (0, 0, 8, 64), (0, 64, 8, 64), (3, 0, 1, 128), (7, 96, 1, 32), (2, 32, 4, 64),
])
@pytest.mark.parametrize("addr", [None, 4096])
def test_tile_subview_reads_the_parent_window(r0, c0, h, w, addr):
    a = _a()
    out = asm.run(_subview_prog(r0, c0, h, w, addr=addr), {"a": a})["b"]
    np.testing.assert_array_equal(out.reshape(h, w), a[r0:r0 + h, c0:c0 + w])


def test_tile_subview_explicit_valid_operands():
    a = _a()
    out = asm.run(_subview_prog(1, 64, 4, 64, valid=(2, 16)), {"a": a})["b"]
    np.testing.assert_array_equal(out.reshape(2, 16), a[1:3, 64:80])


def test_tile_subview_aliases_the_parent():
    """A write through the view lands in the parent: the view of columns 64..127 is
    doubled in place, then the whole parent is stored."""
    T = _tb(8, 128, 8, 128)
    S = _tb(8, 64, 8, 64)
    text = f"""module {{
  func.func @k(%a: !pto.ptr<f32>, %b: !pto.ptr<f32>) {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %va = pto.make_tensor_view %a, shape = [%c8, %c128], strides = [%c128, %c1] : !pto.tensor_view<?x?xf32>
    %vb = pto.make_tensor_view %b, shape = [%c8, %c128], strides = [%c128, %c1] : !pto.tensor_view<?x?xf32>
    %pa = pto.partition_view %va, offsets = [%c0, %c0], sizes = [%c8, %c128] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<8x128xf32>
    %pb = pto.partition_view %vb, offsets = [%c0, %c0], sizes = [%c8, %c128] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<8x128xf32>
    %t = pto.alloc_tile : {T}
    pto.tload ins(%pa : !pto.partition_tensor_view<8x128xf32>) outs(%t : {T})
    %s = pto.subview %t[%c0, %c64] sizes [8, 64] : {T} -> {S}
    pto.tadd ins(%s, %s : {S}, {S}) outs(%s : {S})
    pto.tstore ins(%t : {T}) outs(%pb : !pto.partition_tensor_view<8x128xf32>)
    return
  }}
}}
"""
    a = _a()
    want = a.copy()
    want[:, 64:] *= 2
    np.testing.assert_array_equal(asm.run(text, {"a": a})["b"].reshape(8, 128), want)


def test_tile_subview_outside_the_parent_is_an_error():
    with pytest.raises(AccessError, match="leave the 8x128 source tile") as ei:
        asm.run(_subview_prog(4, 64, 8, 64), {"a": _a()})
    assert ei.value.line > 0


def test_tile_subview_of_the_last_bytes_of_the_on_chip_buffer():
    """The window's last physical row would run past the end of UB (192 KiB on A2/A3):
    an AccessError, not a short view."""
    addr = 192 * 1024 - 8 * 128 * 4
    with pytest.raises(FastisaError):
        asm.run(_subview_prog(0, 64, 8, 64, addr=addr), {"a": _a()}, arch="a3")


# ---- mixed kernels: the cores of one launch share global memory ---------------------------

def _mixed(split_rows=4):
    T = _tb(8, 8, 8, 8)
    H = _tb(split_rows, 8)        # dynamic valid shape: set by the pop
    PH = f"!pto.partition_tensor_view<{split_rows}x8xf32>"
    TV = "!pto.tensor_view<?x?xf32>"
    PV = "!pto.partition_tensor_view<8x8xf32>"
    # two kernels nobody calls (as pypto emits them): PTOAS compiles them as the AIC and
    # AIV sides of one kernel launch, given the same arguments
    return f"""module {{
  func.func @k_aic(%x: !pto.ptr<f32>, %y: !pto.ptr<f32>) attributes {{pto.kernel_kind = #pto.kernel_kind<cube>}} {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    pto.aic_initialize_pipe {{dir_mask = 1, slot_size = 1024}}
    %vx = pto.make_tensor_view %x, shape = [%c8, %c8], strides = [%c8, %c1] : {TV}
    %px = pto.partition_view %vx, offsets = [%c0, %c0], sizes = [%c8, %c8] : {TV} -> {PV}
    %t = pto.alloc_tile : {T}
    pto.tload ins(%px : {PV}) outs(%t : {T})
    pto.tpush_to_aiv(%t : {T}) {{split = 1}}
    return
  }}
  func.func @k_aiv(%x: !pto.ptr<f32>, %y: !pto.ptr<f32>) attributes {{pto.kernel_kind = #pto.kernel_kind<vector>}} {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant {split_rows} : index
    %c8 = arith.constant 8 : index
    pto.aiv_initialize_pipe {{dir_mask = 1, slot_size = 1024}}
    %sb = pto.get_subblock_idx
    %sbi = arith.index_cast %sb : i64 to index
    %row = arith.muli %sbi, %c4 : index
    %vy = pto.make_tensor_view %y, shape = [%c8, %c8], strides = [%c8, %c1] : {TV}
    %py = pto.partition_view %vy, offsets = [%row, %c0], sizes = [%c4, %c8] : {TV} -> {PH}
    %h = pto.tpop_from_aic {{split = 1}} -> {H}
    pto.tadd ins(%h, %h : {H}, {H}) outs(%h : {H})
    pto.tstore ins(%h : {H}) outs(%py : {PH})
    pto.tfree_from_aic {{split = 1}}
    return
  }}
}}
"""


def test_mixed_kernel_subblocks_write_one_global_memory():
    """Both vector subblocks store their half into the same %y: neither half is lost
    (each core used to get its own copy of the pointer arguments, so only the last
    subblock's rows came back)."""
    x = np.arange(64, dtype=np.float32).reshape(8, 8)
    out = asm.run(_mixed(), {"x": x, "y": np.full((8, 8), -1, np.float32)})["y"]
    np.testing.assert_array_equal(out.reshape(8, 8), 2 * x)


def test_mixed_kernel_output_only_pointer():
    x = np.arange(64, dtype=np.float32).reshape(8, 8) / 4
    out = asm.run(_mixed(), {"x": x})["y"]
    np.testing.assert_array_equal(out.reshape(8, 8), 2 * x)


def test_tpop_into_a_dynamic_valid_result_type():
    """``tpop_from_aic -> tile_buf<..., v_row=?, v_col=?>`` takes the popped shape."""
    x = np.ones((8, 8), np.float32)
    out = asm.run(_mixed(), {"x": x})["y"]
    assert out.size == 64 and (out == 2).all()


# ---- scratch operands of the 2026-07 PTOAS forms, and their verifier rules -------------

def _one_op(op_text, tiles, arch="a3"):
    decl = "".join(f"    %{n} = pto.alloc_tile : {t}\n" for n, t in tiles.items())
    return (f'module attributes {{pto.target_arch = "{arch}"}} {{\n  func.func @k() {{\n'
            f"    %ci = arith.constant 3 : i32\n    %cf = arith.constant 2.0 : f32\n"
            f"{decl}    {op_text}\n    return\n  }}\n}}\n")


F = _tb(4, 16, 4, 16)
I = _tb(4, 16, 4, 16, dtype="i32")


def _err(text, fragment):
    from fastisa.errors import AsmSyntaxError
    with pytest.raises(AsmSyntaxError, match=fragment) as ei:
        asm.parse(text)
    assert ei.value.line > 0


def test_tpow_with_tmp_runs_as_without():
    text = _one_op(f"pto.tpow ins(%a, %b, %t : {F}, {F}, {F}) outs(%d : {F})",
                   {"a": F, "b": F, "t": F, "d": F})
    asm.parse(text)
    asm.run(text)


@pytest.mark.parametrize("op, tiles, fragment", [
    (f"pto.tpow ins(%a, %b : {F}, {F}) outs(%d : {F})", {"a": F, "b": F, "d": F},
     "expects tmp when element type is floating-point"),
    (f"pto.tpow ins(%a, %b, %t : {I}, {I}, {I}) outs(%d : {I})",
     {"a": I, "b": I, "t": I, "d": I}, "does not accept tmp when element type is integer"),
    (f"pto.tpows ins(%a, %ci, %t : {I}, i32, {I}) outs(%d : {I})",
     {"a": I, "t": I, "d": I}, "does not accept tmp when element type is integer"),
    (f"pto.tpow ins(%a, %b, %t : {F}, {F}, {_tb(4, 16, 4, 8)}) outs(%d : {F})",
     {"a": F, "b": F, "t": _tb(4, 16, 4, 8), "d": F}, "same valid_shape"),
    (f"pto.tpow ins(%a, %b, %t : {F}, {F}, {F}) outs(%d : {F}) "
     f"{{precisionType = #pto<pow_precision high_precision>}}",
     {"a": F, "b": F, "t": F, "d": F}, "A2/A3 does not support precisionType=high_precision"),
    (f"pto.txors ins(%a, %ci, %t : {I}, i32, {_tb(4, 16, 4, 16, dtype='i16')}) outs(%d : {I})",
     {"a": I, "t": _tb(4, 16, 4, 16, dtype="i16"), "d": I}, "same element type as src"),
    (f"pto.tprelu ins(%a, %b, %t : {F}, {F}, {_tb(4, 32, 4, 2, dtype='ui8')}) outs(%d : {F})",
     {"a": F, "b": F, "t": _tb(4, 32, 4, 2, dtype="ui8"), "d": F},
     r"tmp shape\[0\] to be at least dst valid_shape\[0\] \+ 1 \(5\)"),
    (f"pto.tprelu ins(%a, %b, %t : {F}, {F}, {_tb(8, 32, 8, 1, dtype='ui8')}) outs(%d : {F})",
     {"a": F, "b": F, "t": _tb(8, 32, 8, 1, dtype="ui8"), "d": F},
     r"tmp valid_shape\[1\] to be at least ceil\(dst valid_shape\[1\] / 8\) \(2\)"),
])
def test_tmp_operand_rules(op, tiles, fragment):
    _err(_one_op(op, tiles), fragment)


def test_txor_and_tprelu_take_a_tmp():
    U8 = _tb(8, 32, 8, 2, dtype="ui8")
    for op, tiles in [
            (f"pto.txor ins(%a, %b, %t : {I}, {I}, {I}) outs(%d : {I})",
             {"a": I, "b": I, "t": I, "d": I}),
            (f"pto.txors ins(%a, %ci, %t : {I}, i32, {I}) outs(%d : {I})",
             {"a": I, "t": I, "d": I}),
            (f"pto.tprelu ins(%a, %b, %t : {F}, {F}, {U8}) outs(%d : {F})",
             {"a": F, "b": F, "t": U8, "d": F})]:
        asm.run(_one_op(op, tiles))


# ---- the PTO dialect's own low-precision element types ---------------------------------

def _lowp_copy(elem, arch="a5"):
    T = (f"!pto.tile_buf<loc=vec, dtype={elem}, rows=4, cols=32, v_row=4, v_col=32, "
         f"blayout=row_major, slayout=none_box, fractal=512, pad=0>")
    return f"""module attributes {{pto.target_arch = "{arch}"}} {{
  func.func @k(%a: !pto.ptr<{elem}>, %b: !pto.ptr<{elem}>) {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c32 = arith.constant 32 : index
    %va = pto.make_tensor_view %a, shape = [%c4, %c32], strides = [%c32, %c1] : !pto.tensor_view<4x32x{elem}>
    %vb = pto.make_tensor_view %b, shape = [%c4, %c32], strides = [%c32, %c1] : !pto.tensor_view<4x32x{elem}>
    %pa = pto.partition_view %va, offsets = [%c0, %c0], sizes = [%c4, %c32] : !pto.tensor_view<4x32x{elem}> -> !pto.partition_tensor_view<4x32x{elem}>
    %pb = pto.partition_view %vb, offsets = [%c0, %c0], sizes = [%c4, %c32] : !pto.tensor_view<4x32x{elem}> -> !pto.partition_tensor_view<4x32x{elem}>
    %t = pto.alloc_tile : {T}
    pto.tload ins(%pa : !pto.partition_tensor_view<4x32x{elem}>) outs(%t : {T})
    pto.tstore ins(%t : {T}) outs(%pb : !pto.partition_tensor_view<4x32x{elem}>)
    return
  }}
}}
"""


@pytest.mark.parametrize("elem", ["!pto.hif8", "!pto.f8E8M0", "!pto.f4E2M1x2", "!pto.f4E1M2x2"])
def test_pto_dialect_element_types_move_their_bytes(elem):
    import ml_dtypes
    codes = np.arange(128, dtype=np.uint8).reshape(4, 32) * 2 + 1
    a = codes.view(ml_dtypes.float8_e8m0fnu) if elem == "!pto.f8E8M0" else codes
    out = asm.run(_lowp_copy(elem), {"a": a})["b"]
    np.testing.assert_array_equal(np.asarray(out).view(np.uint8).reshape(4, 32), codes)


@pytest.mark.parametrize("elem", ["!pto.hif8", "f8E4M3FN", "!pto.f4E2M1x2"])
def test_a2a3_rejects_low_precision_tload(elem):
    _err(_lowp_copy(elem, arch="a3"), "expects A2/A3 tload low-precision element types "
                                      "to be unsupported")


# ---- multi-buffer tiles ---------------------------------------------------------------

def _multi(alloc="pto.alloc_multi_tile", count=2, attrs=""):
    M = f"!pto.multi_tile_buf<vec, 8x8xf32, count={count}>"
    T = "!pto.tile_buf<vec, 8x8xf32>"
    TV = "!pto.tensor_view<16x8xf32>"
    PV = "!pto.partition_tensor_view<8x8xf32>"
    return f"""module {{
  func.func @k(%x: !pto.ptr<f32>, %y: !pto.ptr<f32>) {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c8 = arith.constant 8 : index
    %c16 = arith.constant 16 : index
    %base = arith.constant 4096 : i64
    %vx = pto.make_tensor_view %x, shape = [%c16, %c8], strides = [%c8, %c1] : {TV}
    %vy = pto.make_tensor_view %y, shape = [%c16, %c8], strides = [%c8, %c1] : {TV}
    %mb = {alloc}{attrs} : {M}
    scf.for %i = %c0 to %c2 step %c1 {{
      %row = arith.muli %i, %c8 : index
      %s = pto.multi_tile_get %mb[%i] : {M} -> {T}
      %px = pto.partition_view %vx, offsets = [%row, %c0], sizes = [%c8, %c8] : {TV} -> {PV}
      pto.tload ins(%px : {PV}) outs(%s : {T})
    }}
    scf.for %i = %c0 to %c2 step %c1 {{
      %row = arith.muli %i, %c8 : index
      %s = pto.multi_tile_get %mb[%i] : {M} -> {T}
      %py = pto.partition_view %vy, offsets = [%row, %c0], sizes = [%c8, %c8] : {TV} -> {PV}
      pto.tstore ins(%s : {T}) outs(%py : {PV})
    }}
    return
  }}
}}
"""


@pytest.mark.parametrize("attrs, level", [("", None), (" addr = %base", "level3")])
def test_multi_tile_slots_keep_their_data(attrs, level):
    """Slot k is the same tile at every get: both slots loaded first, stored after."""
    x = np.arange(128, dtype=np.float32).reshape(16, 8)
    text = _multi(attrs=attrs)
    m = asm.parse(text, level=level)
    np.testing.assert_array_equal(asm.run(m, {"x": x})["y"].reshape(16, 8), x)


def test_multi_tile_slot_out_of_range():
    text = _multi().replace("%s = pto.multi_tile_get %mb[%i]", "%s = pto.multi_tile_get %mb[%c2]", 1)
    with pytest.raises(AccessError, match="slot 2 is outside"):
        asm.run(text, {"x": np.zeros((16, 8), np.float32)})


@pytest.mark.parametrize("count, attrs, level, fragment", [
    (1, "", None, "count must be >= 2"),
    (2, "", "level3", "requires a base 'addr' operand"),
    (2, " addr = %base", "level2", "unexpected 'addr' operand"),
])
def test_multi_tile_verifier_rules(count, attrs, level, fragment):
    from fastisa.errors import AsmSyntaxError
    with pytest.raises(AsmSyntaxError, match=fragment):
        asm.parse(_multi(count=count, attrs=attrs), level=level)


# ---- textract / tinsert location pairs (PTOAS TExtractOp / TInsertOp verifiers) ---------

def _tt(loc, dtype="f16", bl="row_major", sl="none_box", r=16, c=16, fr=512):
    return (f"!pto.tile_buf<loc={loc}, dtype={dtype}, rows={r}, cols={c}, v_row={r}, "
            f"v_col={c}, blayout={bl}, slayout={sl}, fractal={fr}, pad=0>")


def _move(op, src, dst, arch):
    return (f'module attributes {{pto.target_arch = "{arch}"}} {{\n  func.func @k() {{\n'
            f"    %c0 = arith.constant 0 : index\n"
            f"    %s = pto.alloc_tile : {src}\n    %d = pto.alloc_tile : {dst}\n"
            f"    pto.{op} ins(%s, %c0, %c0 : {src}, index, index) outs(%d : {dst})\n"
            f"    return\n  }}\n}}\n")


@pytest.mark.parametrize("op, src, dst, arch, fragment", [
    ("textract", _tt("vec"), _tt("left", bl="col_major", sl="row_major"), "a5",
     "supported src/dst loc pair"),
    ("textract", _tt("vec"), _tt("vec", dtype="f32"), "a5", "same element type"),
    ("textract", _tt("mat", bl="row_major", sl="row_major"),
     _tt("right", bl="row_major", sl="col_major"), "a5", "supported mat blayout/slayout"),
    ("textract", _tt("vec"), _tt("left"), "a3", "src to use loc=mat, loc=acc, or loc=vec"),
    ("tinsert", _tt("vec", dtype="f32"), _tt("acc", dtype="f32", bl="col_major",
                                              sl="row_major", fr=1024), "a5",
     "acc->mat, acc->vec, vec->mat, or vec->vec"),
    ("tinsert", _tt("vec", dtype="f32"), _tt("vec", dtype="f16"), "a3",
     "vec->vec tinsert src/dst to have same supported dtype"),
    ("tinsert", _tt("acc", dtype="f32", bl="col_major", sl="row_major", fr=1024),
     _tt("mat", dtype="f32", bl="col_major", sl="row_major"), "a3",
     "src=f32, dst=f16/bf16"),
])
def test_textract_tinsert_verifier(op, src, dst, arch, fragment):
    _err(_move(op, src, dst, arch), fragment)


@pytest.mark.parametrize("arch", ["a3", "a5"])
def test_tinsert_vec_to_vec_runs(arch):
    asm.run(_move("tinsert", _tt("vec"), _tt("vec"), arch))


def test_textract_relu_is_applied():
    """``reluPreMode = normal_relu`` on an Acc -> Mat textract clamps negatives (it used to
    be dropped)."""
    A = _tt("acc", dtype="f32", bl="col_major", sl="row_major", fr=1024)
    M = _tt("mat", dtype="f16", bl="col_major", sl="row_major")
    V = _tt("vec", dtype="f32", bl="col_major", sl="row_major")
    base = _move("textract", A, M, "a3")
    relu = base.replace("outs(%d : " + M + ")",
                        "outs(%d : " + M + ") {reluPreMode = #pto<relu_pre_mode normal_relu>}")
    from fastisa.pto import _asm_runner as R
    import fastisa.pto as P
    got = {}
    for tag, text in (("plain", base), ("relu", relu)):
        m = asm.parse(text)
        r = R._Runner(m, R._entry(m), {}, P)
        vals = (np.arange(256, dtype=np.float32).reshape(16, 16) - 128) / 4
        orig = r.make_tile

        def make(ty, orig=orig):
            t = orig(ty)
            if ty.loc == "acc":
                t.valid[...] = vals
            return t
        r.make_tile = make
        r.run()
        got[tag] = np.asarray(r.env["d"].valid, np.float32)
    np.testing.assert_array_equal(got["plain"], (np.arange(256).reshape(16, 16) - 128) / 4)
    np.testing.assert_array_equal(got["relu"], np.maximum(got["plain"], 0))
    del V


# ---- scalar casts, valid-shape queries, local arrays, inferred partition types ---------

def test_unrealized_cast_local_arrays_and_get_validshape():
    T = _tb(8, 16, None, None)
    text = f"""module {{
  func.func @k(%y: !pto.ptr<i32>) {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %c5 = arith.constant 5 : index
    %c8 = arith.constant 8 : index
    %m1 = arith.constant -1 : i16
    %t = pto.alloc_tile valid_row = %c3 valid_col = %c5 : {T}
    %vr, %vc = pto.get_validshape %t : {T}
    %u = builtin.unrealized_conversion_cast %m1 : i16 to ui16
    %a = pto.declare_local_array -> !pto.local_array<4xi32>
    %u32 = arith.index_cast %vr : index to i32
    %w32 = arith.index_cast %vc : index to i32
    pto.local_array_set %a[%c0], %u32 : !pto.local_array<4xi32>, i32
    pto.local_array_set %a[%c1], %w32 : !pto.local_array<4xi32>, i32
    %g = pto.local_array_get %a[%c1] : !pto.local_array<4xi32> -> i32
    %uu = arith.extui %u : ui16 to i32
    pto.store_scalar %u32, %y[%c0] : !pto.ptr<i32>, i32
    pto.store_scalar %g, %y[%c1] : !pto.ptr<i32>, i32
    pto.store_scalar %uu, %y[%c2] : !pto.ptr<i32>, i32
    return
  }}
}}
"""
    out = asm.run(text, {"y": np.zeros(4, np.int32)})["y"]
    np.testing.assert_array_equal(out, [3, 5, 65535, 0])


def test_partition_view_without_result_type_round_trips():
    TV = "!pto.tensor_view<?x?xf32>"
    T = _tb(4, 8, 4, 8)
    text = f"""module {{
  func.func @k(%x: !pto.ptr<f32>, %y: !pto.ptr<f32>) {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    %vx = pto.make_tensor_view %x, shape = [%c4, %c8], strides = [%c8, %c1] : {TV}
    %vy = pto.make_tensor_view %y, shape = [%c4, %c8], strides = [%c8, %c1] : {TV}
    %px = pto.partition_view %vx, offsets = [%c0, %c0], sizes = [%c4, %c8] : {TV}
    %py = pto.partition_view %vy, offsets = [%c0, %c0], sizes = [%c4, %c8] : {TV}
    %t = pto.alloc_tile : {T}
    pto.tload ins(%px : !pto.partition_tensor_view<4x8xf32>) outs(%t : {T})
    pto.tstore ins(%t : {T}) outs(%py : !pto.partition_tensor_view<4x8xf32>)
    return
  }}
}}
"""
    x = np.arange(32, dtype=np.float32).reshape(4, 8)
    np.testing.assert_array_equal(asm.run(text, {"x": x})["y"].reshape(4, 8), x)
    f = asm.format(asm.parse(text))
    assert asm.format(asm.parse(f)) == f


# ---- thistogram byte, pipe slots, high-precision tmp, tstore/tprint rules ---------------

S16 = "!pto.tile_buf<loc=vec, dtype=ui16, rows=2, cols=64, v_row=2, v_col=64, blayout=row_major, slayout=none_box, fractal=512, pad=0>"
IX = "!pto.tile_buf<loc=vec, dtype=ui8, rows=2, cols=32, v_row=2, v_col=1, blayout=row_major, slayout=none_box, fractal=512, pad=0>"
HD = "!pto.tile_buf<loc=vec, dtype=ui32, rows=2, cols=256, v_row=2, v_col=256, blayout=row_major, slayout=none_box, fractal=512, pad=0>"


def _hist(attr, arch="a5"):
    return _one_op(f"pto.thistogram ins(%s, %i : {S16}, {IX}) outs(%d : {HD}){attr}",
                   {"s": S16, "i": IX, "d": HD}, arch)


@pytest.mark.parametrize("attr, arch, fragment", [
    (" {byte = 4 : i32}", "a5", r"byte to be in range \[0, 3\]"),
    (" {byte = 2 : i32}", "a5", "0 or 1 when src element type is ui16"),
    (" {byte = 1 : i32, isMSB = false}", "a5", "conflicting 'byte' and legacy 'isMSB'"),
    ("", "a3", "only supported on A5"),
])
def test_thistogram_rules(attr, arch, fragment):
    _err(_hist(attr, arch), fragment)


@pytest.mark.parametrize("attr, byte", [("", 1), (" {byte = 0 : i32}", 0),
                                        (" {isMSB = false}", 0), (" {byte = 1 : i32}", 1)])
def test_thistogram_byte_attribute_selects_the_byte(attr, byte):
    """``byte = 0`` counts the low byte among elements whose high byte matches idx (it used
    to run as byte 1)."""
    import fastisa.pto as P
    from fastisa.pto import _asm_runner as R
    rng = np.random.default_rng(5)
    src = rng.integers(0, 1 << 16, (2, 64)).astype(np.uint16)
    src[:, :20] = (src[:, :20] & 0xFF) | 0x3700
    m = asm.parse(_hist(attr))
    r = R._Runner(m, R._entry(m), {}, P)
    orig = r.make_tile

    def make(ty, orig=orig):
        t = orig(ty)
        if ty.dtype == "ui16":
            t.valid[...] = src
        elif ty.dtype == "ui8":
            t.valid[...] = 0x37
        return t
    r.make_tile = make
    r.run()
    got = np.asarray(r.env["d"].valid)
    want = np.zeros((2, 256), np.uint32)
    for i in range(2):
        if byte == 1:
            vals = src[i] >> 8
        else:
            vals = (src[i] & 0xFF)[(src[i] >> 8) == 0x37]
        want[i] = np.bincount(vals, minlength=256)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("attrs, arch, fragment", [
    ("{dir_mask = 1, slot_size = 1024, slot_num = 0}", "a3", "'slot_num' to be greater than 0"),
    ("{dir_mask = 1, slot_size = 1024, local_slot_num = 1}", "a5",
     "only supported for a2/a3 frontend"),
    ("{dir_mask = 2, slot_size = 1024, slot_num = 2, local_slot_num = 3}", "a3",
     r"less than or equal to slot_num \(2\) for dir_mask = 2"),
    ("{dir_mask = 3, slot_size = 1024, local_slot_num = 5}", "a3",
     r"less than or equal to slot_num \(4\) for dir_mask = 3"),
])
def test_pipe_slot_rules(attrs, arch, fragment):
    _err(_one_op(f"pto.aic_initialize_pipe {attrs}", {}, arch), fragment)


@pytest.mark.parametrize("op, tiles, arch, fragment", [
    (f"pto.trsqrt ins(%a : {F}) outs(%d : {F}) "
     f"{{precisionType = #pto<rsqrt_precision high_precision>}}", {"a": F, "d": F}, "a5",
     "expects tmp when precisionType is high_precision"),
    (f"pto.tprint ins(%a : {F}) {{printFormat = #pto<print_format width8_precision2>}}",
     {"a": F}, "a3", "printFormat only when tmp is present"),
])
def test_precision_and_print_tmp_rules(op, tiles, arch, fragment):
    _err(_one_op(op, tiles, arch), fragment)


@pytest.mark.parametrize("valid, result_valid, fragment", [
    (" valid [%c5, %c128]", (0, 128), r"result valid_shape\[0\] to match"),
    ("", ("?", 128), r"result valid_shape\[0\] to match"),
])
def test_tile_subview_valid_shape_rules(valid, result_valid, fragment):
    S = _tb(16, 128, 16, 128)
    R = _tb(5, 128, *result_valid)
    text = (f"module {{\n  func.func @k() {{\n    %c0 = arith.constant 0 : index\n"
            f"    %c5 = arith.constant 5 : index\n    %c128 = arith.constant 128 : index\n"
            f"    %s = pto.alloc_tile : {S}\n"
            f"    %t = pto.subview %s[%c0, %c0] sizes [5, 128]{valid} : {S} -> {R}\n"
            f"    return\n  }}\n}}\n")
    _err(text, fragment)
    ok = text.replace(R, _tb(5, 128, 5, 128))
    asm.run(ok)


def test_get_tensor_view_dim_and_stride():
    TV = "!pto.tensor_view<?x?xi32>"
    text = f"""module {{
  func.func @k(%x: !pto.ptr<i32>, %y: !pto.ptr<i32>) {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c6 = arith.constant 6 : index
    %c9 = arith.constant 9 : index
    %v = pto.make_tensor_view %x, shape = [%c6, %c9], strides = [%c9, %c1] : {TV}
    %r = pto.get_tensor_view_dim %v, %c0 : {TV}, index -> index
    %c = pto.get_tensor_view_dim %v, %c1 : {TV}, index -> index
    %s = pto.get_tensor_view_stride %v, %c0 : {TV}, index -> index
    %ri = arith.index_cast %r : index to i32
    %ci = arith.index_cast %c : index to i32
    %si = arith.index_cast %s : index to i32
    pto.store_scalar %ri, %y[%c0] : !pto.ptr<i32>, i32
    pto.store_scalar %ci, %y[%c1] : !pto.ptr<i32>, i32
    pto.store_scalar %si, %y[%c2] : !pto.ptr<i32>, i32
    return
  }}
}}
"""
    out = asm.run(text, {"x": np.zeros(54, np.int32), "y": np.zeros(3, np.int32)})["y"]
    np.testing.assert_array_equal(out, [6, 9, 9])


def test_tscatter_mask_pattern_form_matches_the_api():
    import fastisa.pto as P
    from fastisa.pto import _asm_runner as R
    Ts = "!pto.tile_buf<loc=vec, dtype=f16, rows=1, cols=64, v_row=1, v_col=64, blayout=row_major, slayout=none_box, fractal=512, pad=0>"
    Td = "!pto.tile_buf<loc=vec, dtype=f16, rows=1, cols=32, v_row=1, v_col=32, blayout=row_major, slayout=none_box, fractal=512, pad=0>"
    text = _one_op(f"pto.tscatter ins(%s, {{maskPattern = #pto.mask_pattern<P0101>}} : {Ts}) "
                   f"outs(%d : {Td})", {"s": Ts, "d": Td}, "a3")
    m = asm.parse(text)
    r = R._Runner(m, R._entry(m), {}, P)
    vals = np.arange(64, dtype=np.float16)
    orig = r.make_tile

    def make(ty, orig=orig):
        t = orig(ty)
        if ty.cols == 64:
            t.valid[...] = vals
        return t
    r.make_tile = make
    r.run()
    src = P.Tile(P.TileType.Vec, "float16", 1, 64)
    src.valid[...] = vals
    dst = P.Tile(P.TileType.Vec, "float16", 1, 32)
    P.TSCATTER(dst, src, maskPattern="P0101")
    assert np.asarray(r.env["d"].data).tobytes() == np.asarray(dst.data).tobytes()


def test_comm_point_to_point_ops():
    """``pto.comm.tput`` copies src to dst through the staging tile (atomic_add adds),
    ``tnotify`` sets the signal, ``twait``/``ttest`` compare it; the attribute dict may sit
    on the line after the operands."""
    Tb = "!pto.tile_buf<loc=vec, dtype=f32, rows=1, cols=32, v_row=1, v_col=32, blayout=row_major, slayout=none_box, fractal=512, pad=0>"
    PV = "!pto.partition_tensor_view<1x32xf32>"
    TV = "!pto.tensor_view<1x32xf32>"
    text = f"""module {{
  func.func @k(%d: !pto.ptr<f32>, %s: !pto.ptr<f32>, %g: !pto.ptr<i32>) {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %c7 = arith.constant 7 : i32
    %vd = pto.make_tensor_view %d, shape = [%c1, %c32], strides = [%c32, %c1] : {TV}
    %vs = pto.make_tensor_view %s, shape = [%c1, %c32], strides = [%c32, %c1] : {TV}
    %vg = pto.make_tensor_view %g, shape = [%c1], strides = [%c1] : !pto.tensor_view<1xi32>
    %pd = pto.partition_view %vd, offsets = [%c0, %c0], sizes = [%c1, %c32] : {TV} -> {PV}
    %ps = pto.partition_view %vs, offsets = [%c0, %c0], sizes = [%c1, %c32] : {TV} -> {PV}
    %pg = pto.partition_view %vg, offsets = [%c0], sizes = [%c1] : !pto.tensor_view<1xi32> -> !pto.partition_tensor_view<1xi32>
    %ping = pto.alloc_tile : {Tb}
    pto.comm.tput(%pd, %ps, buf(%ping) : {PV}, {PV}, {Tb})
        {{atomicType = #pto<atomic_type atomic_none>}}
    pto.comm.tput(%pd, %ps, buf(%ping) : {PV}, {PV}, {Tb}) {{atomicType = #pto<atomic_type atomic_add>}}
    pto.comm.tnotify(%pg, %c7 : !pto.partition_tensor_view<1xi32>, i32) {{notifyOp = #pto<notify_op set>}}
    pto.comm.twait(%pg, %c7 : !pto.partition_tensor_view<1xi32>, i32) {{cmp = #pto<wait_cmp ge>}}
    %t = pto.comm.ttest(%pg, %c7 : !pto.partition_tensor_view<1xi32>, i32) {{cmp = #pto<wait_cmp eq>}} -> i1
    return
  }}
}}
"""
    s = np.arange(32, dtype=np.float32).reshape(1, 32)
    out = asm.run(text, {"s": s, "d": np.zeros((1, 32), np.float32),
                         "g": np.zeros(1, np.int32)})
    np.testing.assert_array_equal(out["d"].reshape(1, 32), 2 * s)
    assert int(out["g"][0]) == 7
