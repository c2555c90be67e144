"""PTO-AS: the PTOAS dialect beyond straight-line tile code (control flow, calls, the
older memref dialect, scalars in global memory, pipes) and PTOAS's verifier rules.

Programs are our own; the dialect facts come from hw-native-sys/PTOAS
(include/PTO/IR/PTOOps.td, test/basic)."""

import numpy as np
import pytest

from fastisa.errors import AsmSyntaxError, ConstraintError
from fastisa.pto import asm

T = "!pto.tile_buf<loc=vec, dtype=f32, rows=8, cols=8, v_row=8, v_col=8, blayout=row_major, slayout=none_box, fractal=512, pad=0>"
PV = "!pto.partition_tensor_view<8x8xf32>"
TV = "!pto.tensor_view<8x8xf32>"

HEAD = f"""
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %vx = pto.make_tensor_view %x, shape = [%c8, %c8], strides = [%c8, %c1] : {TV}
    %vy = pto.make_tensor_view %y, shape = [%c8, %c8], strides = [%c8, %c1] : {TV}
    %px = pto.partition_view %vx, offsets = [%c0, %c0], sizes = [%c8, %c8] : {TV} -> {PV}
    %py = pto.partition_view %vy, offsets = [%c0, %c0], sizes = [%c8, %c8] : {TV} -> {PV}
    %t = pto.alloc_tile : {T}
    pto.tload ins(%px : {PV}) outs(%t : {T})
"""
STORE = f"    pto.tstore ins(%t : {T}) outs(%py : {PV})\n    return\n"


def prog(body, args="%x: !pto.ptr<f32>, %y: !pto.ptr<f32>, %n: i32"):
    return f"module {{\n  func.func @k({args}) {{\n{HEAD}{body}{STORE}  }}\n}}\n"


def x8():
    return np.arange(64, dtype=np.float32).reshape(8, 8) / 8


def roundtrip(text):
    m = asm.parse(text)
    assert asm.parse(asm.format(m)) == m
    return m


@pytest.mark.parametrize("n, want", [(1, 2.0), (0, -1.0)])
def test_scf_if_else_with_result(n, want):
    body = """    %c0_i32 = arith.constant 0 : i32
    %p = arith.cmpi sgt, %n, %c0_i32 : i32
    %s = scf.if %p -> (f32) {
      %a = arith.constant 2.0 : f32
      scf.yield %a : f32
    } else {
      %b = arith.constant -1.0 : f32
      scf.yield %b : f32
    }
""" + f"    pto.tmuls ins(%t, %s : {T}, f32) outs(%t : {T})\n"
    text = prog(body)
    roundtrip(text)
    out = asm.run(text, {"x": x8(), "n": n})["y"]
    np.testing.assert_array_equal(out, x8() * np.float32(want))


def test_scf_for_iter_args_and_while():
    body = """    %c4 = arith.constant 4 : index
    %f0 = arith.constant 0.0 : f32
    %f1 = arith.constant 1.5 : f32
    %sum = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %f0) -> (f32) {
      %nx = arith.addf %acc, %f1 : f32
      scf.yield %nx : f32
    }
    %w:2 = scf.while (%j = %c0, %v = %sum) : (index, f32) -> (index, f32) {
      %go = arith.cmpi slt, %j, %c4 : index
      scf.condition(%go) %j, %v : index, f32
    } do {
    ^bb0(%j2: index, %v2: f32):
      %j3 = arith.addi %j2, %c1 : index
      %v3 = arith.addf %v2, %v2 : f32
      scf.yield %j3, %v3 : index, f32
    }
""" + f"    pto.tadds ins(%t, %w#1 : {T}, f32) outs(%t : {T})\n"
    text = prog(body)
    roundtrip(text)
    out = asm.run(text, {"x": x8(), "n": 0})["y"]
    np.testing.assert_array_equal(out, x8() + np.float32(6.0 * 16))


def test_func_call_with_result_private_and_several_modules():
    text = f"""module {{
  func.func private @twice(%a: f32) -> f32 {{
    %r = arith.addf %a, %a : f32
    return %r : f32
  }}
}}
module {{
  func.func @k(%x: !pto.ptr<f32>, %y: !pto.ptr<f32>) attributes {{pto.entry}} {{
{HEAD}    %h = arith.constant 0.25 : f32
    %s = func.call @twice(%h) : (f32) -> f32
    pto.tmuls ins(%t, %s : {T}, f32) outs(%t : {T})
    func.call @store(%t, %py) : ({T}, {PV}) -> ()
    return
  }}
  func.func private @store(%u: {T}, %dst: {PV}) {{
    pto.tstore ins(%u : {T}) outs(%dst : {PV})
    return
  }}
}}
"""
    roundtrip(text)
    out = asm.run(text, {"x": x8()})["y"]
    np.testing.assert_array_equal(out, x8() * np.float32(0.5))


@pytest.mark.parametrize("op, a, b, want", [
    ("andi", 12, 10, 8), ("ori", 12, 10, 14), ("xori", 12, 10, 6), ("shli", 3, 4, 48),
    ("shrsi", -16, 2, -4), ("shrui", -16, 28, 15), ("maxui", -1, 3, -1), ("minui", -1, 3, 3),
])
def test_arith_integer_ops(op, a, b, want):
    body = f"""    %a = arith.constant {a} : i32
    %b = arith.constant {b} : i32
    %r = arith.{op} %a, %b : i32
    %e = arith.cmpi eq, %r, %n : i32
    %one = arith.constant 1.0 : f32
    %zero = arith.constant 0.0 : f32
    %s = arith.select %e, %one, %zero : f32
""" + f"    pto.tmuls ins(%t, %s : {T}, f32) outs(%t : {T})\n"
    text = prog(body)
    roundtrip(text)
    assert asm.run(text, {"x": x8(), "n": want})["y"][0, 1] == np.float32(0.125)
    assert asm.run(text, {"x": x8(), "n": want + 1})["y"][0, 1] == 0


def test_i64_wraps_and_cmpf_unordered():
    body = """    %big = arith.constant 9223372036854775807 : i64
    %one64 = arith.constant 1 : i64
    %w = arith.addi %big, %one64 : i64
    %neg = arith.constant -9223372036854775808 : i64
    %ok = arith.cmpi eq, %w, %neg : i64
    %nan = arith.constant 0x7FC00000 : f32
    %f = arith.constant 1.0 : f32
    %u = arith.cmpf une, %nan, %f : f32
    %o = arith.cmpf oeq, %nan, %nan : f32
    %both = arith.andi %ok, %u : i1
    %x1 = arith.xori %o, %both : i1
    %two = arith.constant 2.0 : f32
    %s = arith.select %x1, %two, %f : f32
""" + f"    pto.tmuls ins(%t, %s : {T}, f32) outs(%t : {T})\n"
    out = asm.run(prog(body), {"x": x8(), "n": 0})["y"]
    np.testing.assert_array_equal(out, x8() * 2)


def test_memref_alloc_and_block_idx_and_scalars():
    M = "memref<8x8xf32, #pto.address_space<vec>>"
    text = f"""module {{
  func.func @k(%x: !pto.ptr<f32>, %y: !pto.ptr<f32>) {{
{HEAD}    %m = memref.alloc() : {M}
    pto.tadd ins(%t, %t : {T}, {T}) outs(%m : {M})
    %b = pto.get_block_idx
    %bi = arith.index_cast %b : i64 to index
    %s = pto.load_scalar %x[%c1] : !pto.ptr<f32> -> f32
    pto.store_scalar %s, %y[%bi] : !pto.ptr<f32>, f32
    pto.tmov ins(%m : {M}) outs(%t : {T})
    pto.tstore ins(%t : {T}) outs(%py : {PV})
    pto.store_scalar %s, %y[%bi] : !pto.ptr<f32>, f32
    return
  }}
}}
"""
    roundtrip(text)
    out = asm.run(text, {"x": x8()})["y"]
    want = x8() * 2
    want[0, 0] = x8()[0, 1]
    np.testing.assert_array_equal(out, want)


def test_cross_core_pipe_split_rows():
    H = "!pto.tile_buf<loc=vec, dtype=f32, rows=4, cols=8, v_row=4, v_col=8, blayout=row_major, slayout=none_box, fractal=512, pad=0>"
    PH = "!pto.partition_tensor_view<4x8xf32>"
    text = f"""module {{
  func.func @mix(%x: !pto.ptr<f32>, %y: !pto.ptr<f32>) attributes {{pto.entry}} {{
    func.call @cube(%x) : (!pto.ptr<f32>) -> ()
    func.call @vec(%y) : (!pto.ptr<f32>) -> ()
    return
  }}
  func.func private @cube(%x: !pto.ptr<f32>) attributes {{pto.kernel_kind = #pto.kernel_kind<cube>}} {{
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
  func.func private @vec(%y: !pto.ptr<f32>) attributes {{pto.kernel_kind = #pto.kernel_kind<vector>}} {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    pto.aiv_initialize_pipe {{dir_mask = 1, slot_size = 1024}}
    %sb = pto.get_subblock_idx
    %sbi = arith.index_cast %sb : i64 to index
    %row = arith.muli %sbi, %c4 : index
    %vy = pto.make_tensor_view %y, shape = [%c8, %c8], strides = [%c8, %c1] : {TV}
    %py = pto.partition_view %vy, offsets = [%row, %c0], sizes = [%c4, %c8] : {TV} -> {PH}
    %h = pto.tpop_from_aic {{split = 1}} -> {H}
    pto.tstore ins(%h : {H}) outs(%py : {PH})
    pto.tfree_from_aic {{split = 1}}
    return
  }}
}}
"""
    roundtrip(text)
    out = asm.run(text, {"x": x8(), "y": np.zeros((8, 8), np.float32)})["y"]
    np.testing.assert_array_equal(out, x8())    # subblock s stored rows 4s..4s+3


def test_pop_before_push_is_a_deadlock_error():
    text = f"""module {{
  func.func @v() attributes {{pto.kernel_kind = #pto.kernel_kind<vector>}} {{
    %h = pto.tpop_from_aic {{split = 0}} -> {T}
    return
  }}
}}
"""
    with pytest.raises(ConstraintError, match="deadlock") as ei:
        asm.run(text)
    assert ei.value.line == 3


def test_events_and_sections_are_accepted():
    body = """    pto.record_event(TLOAD, TMATMUL, EVENT_ID0)
    pto.wait_event(TLOAD, TMATMUL, EVENT_ID0)
    pto.barrier
    pto.section.vector {
""" + f"      pto.tadd ins(%t, %t : {T}, {T}) outs(%t : {T})\n    }}\n"
    text = prog(body, "%x: !pto.ptr<f32>, %y: !pto.ptr<f32>")
    roundtrip(text)
    np.testing.assert_array_equal(asm.run(text, {"x": x8()})["y"], x8() * 2)


def test_not_yet_implemented_instruction_parses_and_says_so_when_run():
    text = prog(f"    pto.tprint ins(%t : {T})\n", "%x: !pto.ptr<f32>, %y: !pto.ptr<f32>")
    m = roundtrip(text)
    try:
        asm.run(m, {"x": x8()})
    except NotImplementedError as exc:
        assert "TPRINT" in str(exc)


def test_vpto_is_out_of_scope():
    text = prog("    %v = pto.vlds %t : f32\n", "%x: !pto.ptr<f32>, %y: !pto.ptr<f32>")
    with pytest.raises(AsmSyntaxError, match="VPTO micro-instruction"):
        asm.parse(text)


# ---- verifier rules: one error test each ------------------------------------------------

def _err(text, fragment, line, **kw):
    with pytest.raises(AsmSyntaxError) as ei:
        asm.parse(text, **kw)
    assert fragment in str(ei.value)
    assert ei.value.line == line
    assert ei.value.column >= 1
    return ei.value


A5 = 'module attributes {"pto.target_arch" = "a5"} {\n'


def test_verify_entry_returns_void():
    text = ("module {\n  func.func @k(%a: i32) -> i32 attributes {pto.entry} {\n"
            "    return %a : i32\n  }\n}\n")
    _err(text, "PTO entry functions must return void", 2)


def test_verify_level3_alloc_tile_needs_addr():
    text = f"module {{\n  func.func @k() {{\n    %t = pto.alloc_tile : {T}\n    return\n  }}\n}}\n"
    asm.parse(text)
    _err(text, "requires 'addr' operand when --pto-level=level3", 3, level="level3")


def _tile(loc, dtype, bl="row_major", sl="none_box"):
    return (f"!pto.tile_buf<loc={loc}, dtype={dtype}, rows=32, cols=32, v_row=32, v_col=32, "
            f"blayout={bl}, slayout={sl}, fractal=512, pad=0>")


def _two_tile_op(head, op, src, dst):
    return (f"{head}  func.func @k() {{\n    %c0 = arith.constant 0 : index\n"
            f"    %s = pto.alloc_tile : {src}\n    %d = pto.alloc_tile : {dst}\n"
            f"    pto.{op} ins(%s, %c0, %c0 : {src}, index, index) outs(%d : {dst})\n"
            f"    return\n  }}\n}}\n")


def test_verify_tinsert_a5_loc_pair_and_a3_dtypes():
    bad = _two_tile_op(A5, "tinsert", _tile("vec", "f32"), _tile("acc", "f32"))
    _err(bad, "supported src/dst loc pair", 6)
    asm.parse(_two_tile_op(A5, "tinsert", _tile("vec", "f32"), _tile("mat", "f32")))
    bad3 = _two_tile_op("module {\n", "tinsert", _tile("acc", "f32"), _tile("mat", "f32"))
    _err(bad3, "src=f32, dst=f16/bf16", 6)
    asm.parse(_two_tile_op("module {\n", "tinsert", _tile("acc", "f32"), _tile("mat", "f16")))


def test_verify_textract_a5_vec_vec_layout():
    bad = _two_tile_op(A5, "textract", _tile("vec", "f16", "col_major", "row_major"),
                       _tile("vec", "f16"))
    _err(bad, "ND layout", 6)
    asm.parse(_two_tile_op(A5, "textract", _tile("vec", "f16"), _tile("vec", "f16")))


def test_verify_tsel_a3_element_types():
    t8 = _tile("vec", "i8")
    text = (f"module {{\n  func.func @k() {{\n    %m = pto.alloc_tile : {t8}\n"
            f"    %a = pto.alloc_tile : {t8}\n    %d = pto.alloc_tile : {t8}\n"
            f"    pto.tsel ins(%m, %a, %a : {t8}, {t8}, {t8}) outs(%d : {t8})\n"
            f"    return\n  }}\n}}\n")
    _err(text, "i16/i32/f16/bf16/f32", 6)
    asm.parse(text, arch="a5")
    # the 2026-07 PTOAS allows bf16 on A2/A3 (ptoacc)
    tb = _tile("vec", "bf16")
    asm.parse(text.replace(f"%a = pto.alloc_tile : {t8}", f"%a = pto.alloc_tile : {tb}")
              .replace(f"%d = pto.alloc_tile : {t8}", f"%d = pto.alloc_tile : {tb}")
              .replace(f"{t8}, {t8}, {t8}) outs(%d : {t8})", f"{t8}, {tb}, {tb}) outs(%d : {tb})"),
              arch="a3")


def test_verify_tgather_compare_form_a3():
    t16, t8 = _tile("vec", "i16"), _tile("vec", "i8")
    text = (f"module {{\n  func.func @k() {{\n    %k = arith.constant 0 : i16\n"
            f"    %s = pto.alloc_tile : {t16}\n    %tmp = pto.alloc_tile : {t8}\n"
            f"    pto.tgather ins(%s, %k, %tmp : {t16}, i16, {t8}) outs(%s : {t16})\n"
            f"    return\n  }}\n}}\n")
    _err(text, "compare-form tgather", 6)


def test_verify_tpop_dynamic_valid_shape():
    text = (f"module {{\n  func.func @v(%r: index, %c: index) {{\n"
            f"    %h = pto.tpop_from_aic(%r, %c) {{split = 0}} -> {T}\n    return\n  }}\n}}\n")
    _err(text, "dynamic validShape (?, ?)", 3)


@pytest.mark.parametrize("init, split, fragment", [
    ("{dir_mask = 1, slot_size = 1024, nosplit = false}", "0", "'nosplit = false' conflicts"),
    ("{dir_mask = 3, slot_size = 1024}", "mixed", "conflicting pipe split usage"),
])
def test_verify_pipe_split_rules(init, split, fragment):
    s1 = "1" if split == "mixed" else split
    text = (f"module {{\n  func.func @c() {{\n    pto.aic_initialize_pipe {init}\n"
            f"    %t = pto.alloc_tile : {T}\n    pto.tpush_to_aiv(%t : {T}) {{split = {s1}}}\n"
            f"    return\n  }}\n  func.func @v() {{\n    pto.aiv_initialize_pipe {init}\n"
            f"    %h = pto.tpop_from_aic {{split = {split if split != 'mixed' else '0'}}}"
            f" -> {T}\n    return\n  }}\n}}\n")
    _err(text, fragment, 3)


def test_verify_scf_yield_counts():
    text = prog("""    %p = arith.constant true
    %r = scf.if %p -> (f32) {
      %a = arith.constant 1.0 : f32
      scf.yield %a : f32
    }
""")
    _err(text, "needs an else region", 14)


def test_verify_tassign_needs_level3_when_a_level_is_given():
    text = (f"module {{\n  func.func @k() {{\n    %a = arith.constant 0 : index\n"
            f"    %t = pto.alloc_tile addr = %a : {T}\n    %u = pto.tassign %t, %a : {T} -> {T}\n"
            f"    return\n  }}\n}}\n")
    asm.parse(text)
    asm.parse(text, level="level3")
    _err(text, "only supported when --pto-level=level3", 5, level="level2")


def test_verify_tput_async_flat_destination():
    def prog_(shape):
        m = f"memref<{shape}xf32, #pto.address_space<gm>>"
        return (f"module {{\n  func.func @k(%d: {m}, %s: {m}, %w: memref<1024xi8, "
                f"#pto.address_space<gm>>) {{\n"
                f"    %e = pto.tput_async(%d, %s, %w : {m}, {m}, memref<1024xi8, "
                f"#pto.address_space<gm>>) -> !pto.async_event\n    return\n  }}\n}}\n")
    asm.parse(prog_("128"))
    _err(prog_("4x32"), "static flat contiguous logical 1D GM memref", 3)
