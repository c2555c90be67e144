"""PTO-AS text: lexer, parser, type checker and printer (no execution).

Round trips (parse -> format -> parse gives the same AST), the tile_buf type forms of
reference/pto.md section 3.2, and the exact line/column of syntax and type errors.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastisa.errors import AsmSyntaxError
from fastisa.pto import asm
from fastisa.pto import asm_syntax as syn

T = "!pto.tile_buf<vec, 16x128xf32>"
V = "!pto.tile_buf<vec, 16x1xf32, blayout=col_major>"
LEGACY = ("!pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=128, v_row=16, v_col=128, "
          "blayout=row_major, slayout=none_box, fractal=512, pad=0>")

SOFTMAX_PREPARE = f"""\
module attributes {{"pto.target_arch" = "a5"}} {{
  func.func @kernel_softmax_prepare(%arg0: !pto.ptr<f32>, %arg1: f32, %arg2: !pto.ptr<bf16>,
                                    %arg3: !pto.ptr<f32>) {{
    %c16 = arith.constant 16 : index
    %c128 = arith.constant 128 : index
    %c1 = arith.constant 1 : index
    %c0 = arith.constant 0 : index
    %7 = pto.make_tensor_view %arg0, shape = [%c16, %c128], strides = [%c128, %c1] : !pto.tensor_view<?x?xf32>
    %8 = pto.make_tensor_view %arg3, shape = [%c16, %c1], strides = [%c1, %c1] : !pto.tensor_view<?x?xf32>
    %0 = pto.alloc_tile : {LEGACY}
    %1 = pto.alloc_tile : {T}
    %2 = pto.alloc_tile : {V}
    %4 = pto.alloc_tile : !pto.tile_buf<vec, 16x128xbf16>
    %11 = pto.partition_view %7, offsets = [%c0, %c0], sizes = [%c16, %c128] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<16x128xf32>
    pto.tload ins(%11 : !pto.partition_tensor_view<16x128xf32>) outs(%0 : {T})
    pto.tmuls ins(%0, %arg1 : {T}, f32) outs(%1 : {T})      // scale
    pto.trowmax ins(%1, %0 : {T}, {T}) outs(%2 : {V})
    pto.trowexpandsub ins(%1, %2 : {T}, {V}) outs(%0 : {T})
    pto.texp ins(%0 : {T}) outs(%1 : {T})
    pto.tcvt ins(%1{{rmode = #pto<round_mode ROUND>}} : {T}) outs(%4 : !pto.tile_buf<vec, 16x128xbf16>)
    pto.tcvt ins(%4 : !pto.tile_buf<vec, 16x128xbf16>) outs(%1 : {T}) {{rmode = #pto<round_mode CAST_RINT>}}
    pto.trowsum ins(%1, %0 : {T}, {T}) outs(%2 : {V})
    pto.set_flag ["PIPE_V", "PIPE_MTE3", "EVENT_ID0"]
    pto.wait_flag ["PIPE_V", "PIPE_MTE3", "EVENT_ID0"]
    %12 = pto.partition_view %8, offsets = [%c0, %c0], sizes = [%c16, %c1] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<16x1xf32>
    pto.tstore ins(%2 : {V}) outs(%12 : !pto.partition_tensor_view<16x1xf32>)
    pto.barrier #pto.pipe<PIPE_ALL>
    return
  }}
}}
"""

SSA_FORMS = """\
# Automatic mode: the compiler/runtime handles resource placement and scheduling.
func.func @ssa(%x: !pto.ptr<f16>, %s: f16) {
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %one = arith.constant 1.0 : f16
  %inf = arith.constant 0x7C00 : f16
  %neg = arith.constant -2.5e-3 : f16
  %i = arith.constant -7 : i32
  %src = pto.alloc_tile : !pto.tile_buf<vec, 16x16xf16>
  %row = pto.alloc_tile valid_row = %c16 valid_col = %c1 : !pto.tile_buf<vec, 16x1xf16, valid=?x?, blayout=col_major>
  %dst = pto.trecip %src : !pto.tile<16x16xf16> -> !pto.tile<16x16xf16>
  %d2 = pto.trecip %src {precision = #pto<recip_precision HIGH_PRECISION>} : !pto.tile_buf<vec, 16x16xf16> -> !pto.tile<16x16xf16>
  %d3 = trecip %src : !pto.tile<16x16xf16>
  %d4 = pto.trowexpandexpdif %src, %row : !pto.tile<16x16xf16>, !pto.tile<16x1xf16, valid=?x?, blayout=col_major> -> !pto.tile<16x16xf16>
  %d5 = pto.tadd %d3, %d4 : (!pto.tile<16x16xf16>, !pto.tile<16x16xf16>) -> !pto.tile<16x16xf16>
  %d6 = pto.tdivs %one, %d5 : (f16, !pto.tile<16x16xf16>) -> !pto.tile<16x16xf16>
  %d7 = pto.tmuls %d6, %s : (!pto.tile<16x16xf16>, f16) -> !pto.tile<16x16xf16>
  pto.set_validshape %row, %c16, %c1 : !pto.tile_buf<vec, 16x1xf16, valid=?x?, blayout=col_major>
  func.return
}
"""

ALL_DPS = f"""\
func.func @all(%a: !pto.ptr<f32>, %s: f32) {{
  %c0 = arith.constant 0 : index
  %t0 = pto.alloc_tile : {T}
  %t1 = pto.alloc_tile : {T}
  %t2 = pto.alloc_tile : {T}
  %r = pto.alloc_tile : {V}
  %c = pto.alloc_tile : !pto.tile_buf<vec, 1x128xf32>
  %h = pto.alloc_tile : !pto.tile_buf<vec, 16x128xf16>
  %tt = pto.alloc_tile : !pto.tile_buf<vec, 128x16xf32>
  %l = pto.alloc_tile : !pto.tile_buf<left, 16x16xf16, blayout=col_major, slayout=row_major>
  %rr = pto.alloc_tile : !pto.tile_buf<right, 16x16xf16, slayout=col_major>
  %acc = pto.alloc_tile : !pto.tile_buf<acc, 16x16xf32, blayout=col_major, slayout=row_major, fractal=1024>
""" + "".join(f"  pto.{op} ins(%t0 : {T}) outs(%t1 : {T})\n" for op in (
    "tabs", "tneg", "texp", "tlog", "tsqrt", "trsqrt", "trecip", "trelu", "tmov")) + "".join(
    f"  pto.{op} ins(%t0, %t1 : {T}, {T}) outs(%t2 : {T})\n" for op in (
        "tadd", "tsub", "tmul", "tdiv", "tmax", "tmin")) + "".join(
    f"  pto.{op} ins(%t0, %s : {T}, f32) outs(%t2 : {T})\n" for op in (
        "tadds", "tsubs", "tmuls", "tdivs", "tmaxs", "tmins")) + f"""\
  pto.tdivs ins(%s, %t0 : f32, {T}) outs(%t2 : {T})
  pto.texpands ins(%s : f32) outs(%t2 : {T})
""" + "".join(f"  pto.{op} ins(%t0 : {T}) outs(%r : {V})\n" for op in (
    "trowmax", "trowmin", "trowsum")) + "".join(
    f"  pto.{op} ins(%t0, %t1 : {T}, {T}) outs(%r : {V})\n" for op in (
        "trowmax", "trowmin", "trowsum")) + "".join(
    f"  pto.{op} ins(%t0 : {T}) outs(%c : !pto.tile_buf<vec, 1x128xf32>)\n" for op in (
        "tcolmax", "tcolmin", "tcolsum")) + f"""\
  pto.trowexpand ins(%r : {V}) outs(%t2 : {T})
  pto.tcolexpand ins(%c : !pto.tile_buf<vec, 1x128xf32>) outs(%t2 : {T})
""" + "".join(f"  pto.trowexpand{s} ins(%t0, %r : {T}, {V}) outs(%t2 : {T})\n" for s in (
    "add", "sub", "mul", "div", "max", "min", "expdif")) + "".join(
    f"  pto.tcolexpand{s} ins(%t0, %c : {T}, !pto.tile_buf<vec, 1x128xf32>) outs(%t2 : {T})\n"
    for s in ("add", "sub", "mul", "div", "max", "min", "expdif")) + f"""\
  pto.trowexpandexpdif ins(%t0, %r, %t1 : {T}, {V}, {T}) outs(%t2 : {T})
  pto.tcvt ins(%t0{{rmode = #pto<round_mode FLOOR>}} : {T}) outs(%h : !pto.tile_buf<vec, 16x128xf16>)
  pto.ttrans ins(%t0 : {T}) outs(%tt : !pto.tile_buf<vec, 128x16xf32>)
  pto.ttrans ins(%t0, %t1 : {T}, {T}) outs(%tt : !pto.tile_buf<vec, 128x16xf32>)
  pto.tmatmul ins(%l, %rr : !pto.tile_buf<left, 16x16xf16, blayout=col_major, slayout=row_major>, !pto.tile_buf<right, 16x16xf16, slayout=col_major>) outs(%acc : !pto.tile_buf<acc, 16x16xf32, blayout=col_major, slayout=row_major, fractal=1024>)
  return
}}
"""

PROGRAMS = {"softmax_prepare": SOFTMAX_PREPARE, "ssa_forms": SSA_FORMS, "all_dps": ALL_DPS}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_round_trip(name):
    m = asm.parse(PROGRAMS[name])
    text = asm.format(m)
    m2 = asm.parse(text)
    assert m2 == m
    assert asm.format(m2) == text            # the printer is a fixed point


def test_round_trip_changes_the_ast_when_the_text_changes():
    m = asm.parse(SOFTMAX_PREPARE)
    m2 = asm.parse(SOFTMAX_PREPARE.replace("FLOOR", "CEIL").replace("ROUND", "FLOOR"))
    assert m2 != m


def test_softmax_prepare_ast():
    m = asm.parse(SOFTMAX_PREPARE)
    assert m.wrapped and m.target_arch == "a5"
    f = m.func()
    assert f.name == "kernel_softmax_prepare"
    assert [n for n, _ in f.args] == ["arg0", "arg1", "arg2", "arg3"]
    assert f.args[1][1] == syn.ScalarType("f32")
    assert f.args[2][1] == syn.PtrType("bf16")
    names = [type(op).__name__ for op in f.body]
    assert names.count("DpsOp") == 9 and names.count("SyncOp") == 3
    tload = next(op for op in f.body if isinstance(op, syn.DpsOp) and op.name == "tload")
    assert tload.in_types[0] == syn.ViewType("partition_tensor_view", (16, 128), "f32")
    cvt = next(op for op in f.body if isinstance(op, syn.DpsOp) and op.name == "tcvt")
    assert cvt.ins[0].attrs == (("rmode", "#pto<round_mode ROUND>"),)
    assert isinstance(f.body[-1], syn.ReturnOp)


def test_ssa_forms_ast():
    f = asm.parse(SSA_FORMS).func("ssa")
    ops = {op.results[0]: op for op in f.body if isinstance(op, syn.SsaOp)}
    assert ops["dst"].name == "trecip" and ops["dst"].prefixed
    assert ops["d3"].name == "trecip" and not ops["d3"].prefixed and not ops["d3"].arrow
    assert ops["d3"].out_types[0].same(syn.TileBufType("vec", "f16", 16, 16, 16, 16))
    assert ops["d4"].in_types[1].v_row is None and ops["d4"].in_types[1].blayout == "col_major"
    assert ops["d2"].attrs == (("precision", "#pto<recip_precision HIGH_PRECISION>"),)
    assert ops["d6"].in_types[0] == syn.ScalarType("f16")
    consts = {op.result: op for op in f.body if isinstance(op, syn.ConstantOp)}
    assert consts["inf"].bits == 0x7C00 and consts["inf"].value == float("inf")
    assert consts["neg"].bits == 0x991F          # -2.5e-3 rounded to binary16
    assert consts["i"].value == -7


def test_tile_buf_forms_agree():
    legacy = asm.parse(f"func.func @f() {{\n %t = pto.alloc_tile : {LEGACY}\n}}").funcs[0]
    compact = asm.parse(f"func.func @f() {{\n %t = pto.alloc_tile : {T}\n}}").funcs[0]
    a, b = legacy.body[0].type, compact.body[0].type
    assert a.same(b) and a != b and (a.form, b.form) == ("legacy", "compact")


@pytest.mark.parametrize("text, want", [
    ("!pto.tile_buf<loc=vec, dtype=f16, rows=32, cols=64, v_row=?, v_col=-1>",
     ("vec", "f16", 32, 64, None, None, "row_major", "none_box", 512, 0, 0)),
    ("!pto.tile_buf<loc=acc, dtype=f32, rows=16, cols=16, v_row=16, v_col=8, "
     "blayout=col_major, slayout=row_major, fractal=1024, pad=3>",
     ("acc", "f32", 16, 16, 16, 8, "col_major", "row_major", 1024, 3, 0)),
    ("!pto.tile_buf<loc=vec, dtype=i8, rows=8, cols=32, v_row=8, v_col=32, pad=1>",
     ("vec", "i8", 8, 32, 8, 32, "row_major", "none_box", 512, 1, 0)),
    ("!pto.tile_buf<vec, 16x128xf32, valid=16x?>",
     ("vec", "f32", 16, 128, 16, None, "row_major", "none_box", 512, 0, 0)),
    ("!pto.tile_buf<mat, 8x8xbf16, pad=2, blayout=col_major, compact=1>",
     ("mat", "bf16", 8, 8, 8, 8, "col_major", "none_box", 512, 2, 1)),
    ("!pto.tile<32x32xf32>", ("vec", "f32", 32, 32, 32, 32, "row_major", "none_box", 512, 0, 0)),
    ("!pto.tile<left, 16x32xf16, slayout=row_major>",
     ("left", "f16", 16, 32, 16, 32, "row_major", "row_major", 512, 0, 0)),
])
def test_tile_types(text, want):
    opts = "".join(f" {k} = %c" for k, v in (("valid_row", want[4]), ("valid_col", want[5]))
                   if v is None)
    f = asm.parse(f"func.func @f(%c: index) {{\n  %t = pto.alloc_tile{opts} : {text}\n}}\n")
    assert f.funcs[0].body[0].type.key() == want


@settings(max_examples=60, deadline=None)
@given(loc=st.sampled_from(syn.LOCS), dtype=st.sampled_from(sorted(syn.ELEMENT_TYPES)),
       rows=st.integers(1, 300), cols=st.integers(1, 300), vr=st.integers(0, 300),
       vc=st.integers(0, 300), dyn=st.tuples(st.booleans(), st.booleans()),
       bl=st.sampled_from(syn.BLAYOUTS), sl=st.sampled_from(syn.SLAYOUTS),
       fractal=st.sampled_from([32, 512, 1024]), pad=st.integers(0, 3),
       form=st.sampled_from(["legacy", "compact", "tile"]))
def test_type_round_trip(loc, dtype, rows, cols, vr, vc, dyn, bl, sl, fractal, pad, form):
    ty = syn.TileBufType(loc, dtype, rows, cols, None if dyn[0] else min(vr, rows),
                         None if dyn[1] else min(vc, cols), bl, sl, fractal, pad, 0, form)
    opts = "".join(f" {k} = %n" for k, v in (("valid_row", ty.v_row), ("valid_col", ty.v_col))
                   if v is None)
    text = f"func.func @f(%n: index) {{\n  %t = pto.alloc_tile{opts} : {syn.format_type(ty)}\n}}\n"
    assert asm.parse(text).funcs[0].body[0].type == ty


# ---- error positions ------------------------------------------------------------------

HEAD = "func.func @f(%a: !pto.ptr<f32>, %s: f32) {\n"
TDECL = f"  %t = pto.alloc_tile : {T}\n  %u = pto.alloc_tile : {T}\n"

ERRORS = [
    # (program, line, the text the column must point at (None: column 1), message fragment)
    ("func.func @f() {\n  %c = arith.constant 1 : index\n  $oops\n}\n", 3, "$",
     "unexpected character '$'"),
    (HEAD + TDECL + f"  pto.tfoo ins(%t : {T}) outs(%u : {T})\n}}\n", 4, "pto.tfoo",
     "unknown operation 'pto.tfoo'"),
    (HEAD + TDECL + f"  pto.tadd ins(%t : {T}) outs(%u : {T})\n}}\n", 4, "pto.tadd",
     "pto.tadd takes 2 input operands, got 1"),
    (HEAD + TDECL + f"  pto.texp ins(%t : {T}) outs(%v : {T})\n}}\n", 4, "%v",
     "use of undefined value %v"),
    (HEAD + TDECL + "  pto.texp ins(%t : !pto.tile_buf<vec, 16x64xf32>) outs(%u : " + T + ")\n}\n",
     4, "%t", "%t has type !pto.tile_buf<vec, 16x128xf32> but is used as"),
    (HEAD + TDECL + f"  pto.texp ins(%t : {T}) outs(%u : {T}\n}}\n", 5, "}", "expected ')'"),
    (HEAD + "  %t = pto.alloc_tile : !pto.tile_buf<vec, 16x128xf33>\n}\n", 2, "16x128xf33",
     "unknown element type 'f33'"),
    (HEAD + TDECL + "  %d = pto.trecip %t : !pto.tile<...> -> !pto.tile<...>\n}\n", 4, "...",
     "'...' is a placeholder in the spec's examples"),
    (HEAD + "  %t = pto.alloc_tile : !pto.tile_buf<vec, 16xx128xf32>\n}\n", 2, "16xx",
     "unknown element type 'x128xf32'"),
    (HEAD + "  %t = pto.alloc_tile : !pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=8, "
     "v_row=16, v_col=8, blayout=diagonal>\n}\n", 2, "diagonal", "unknown blayout 'diagonal'"),
    (HEAD + "  %t = pto.alloc_tile : !pto.tile_buf<vec, 16x128xf32, valid=?x128>\n}\n", 2, "!pto",
     "valid_row = %value is required"),
    (HEAD + "  %t = pto.alloc_tile : !pto.tile_buf<vec, 16x128xf32, valid=32x128>\n}\n", 2, "!pto",
     "v_row=32 is larger than the tile"),
    (HEAD + TDECL + f"  pto.tadds ins(%t, %u : {T}, {T}) outs(%u : {T})\n}}\n", 4, "%u",
     "pto.tadds: the second operand must be a scalar"),
    (HEAD + "  %c = arith.constant 300 : i8\n}\n", 2, "300", "constant 300 does not fit in i8"),
    (HEAD + "  %c = arith.constant 1 : index\n  %c = arith.constant 2 : index\n}\n", 3, "%c",
     "redefinition of %c"),
    (HEAD + "  %v = pto.make_tensor_view %s, shape = [%s], strides = [%s] : "
     "!pto.tensor_view<?xf32>\n}\n", 2, "%s", "must be a !pto.ptr<...>"),
    (HEAD + "  %c = arith.constant 1 : index\n  %v = pto.make_tensor_view %a, shape = [%c, %c], "
     "strides = [%c] : !pto.tensor_view<?x?xf32>\n}\n", 3, "!pto", "shape and strides need 2"),
    (HEAD + TDECL + f"  pto.tload ins(%t : {T}) outs(%u : {T})\n}}\n", 4, "%t",
     "pto.tload: the source must be a !pto.partition_tensor_view"),
    (HEAD + TDECL + "  %d = pto.trecip %t : !pto.tile<16x128xf32>\n  return\n", 6, None,
     "expected '}' closing the function body"),
    ("func.func @f(%a: !pto.ptr<f32>) {\n  return\n}\n}\n", 4, "}", "expected 'func.func'"),
    (HEAD + TDECL + f"  pto.tcvt ins(%t{{rmode = }} : {T}) outs(%u : {T})\n}}\n", 4, "}",
     "expected an attribute value"),
]


@pytest.mark.parametrize("text, line, anchor, fragment", ERRORS)
def test_error_positions(text, line, anchor, fragment):
    source_line = text.split("\n")[line - 1]
    col = 1 if anchor is None else source_line.index(anchor) + 1
    with pytest.raises(AsmSyntaxError) as ei:
        asm.parse(text)
    e = ei.value
    assert fragment in str(e)
    assert (e.line, e.column) == (line, col), str(e)
    assert e.source_line == text.split("\n")[line - 1]
    assert str(e).startswith(f"line {line}, column {col}: ")


def test_syntax_error_is_a_syntax_error():
    with pytest.raises(SyntaxError):
        asm.parse("func.func @f( {")


def test_comments():
    text = ("// leading comment\n# a hash comment\nfunc.func @f() {  // trailing\n"
            "  # pto.tassign %arg0, @tile(0x1000)\n  return\n}\n")
    f = asm.parse(text).funcs[0]
    assert isinstance(f.body[0], syn.ReturnOp)


def test_tokenize_shapes_and_numbers():
    kinds = [(t.kind, t.text) for t in syn.tokenize("16x128xf32 ?x?xbf16 16x? 0x7F800000 -1.5e3 -3 x")]
    assert kinds[:-1] == [("shape", "16x128xf32"), ("shape", "?x?xbf16"), ("dims", "16x?"),
                          ("hex", "0x7F800000"), ("float", "-1.5e3"), ("int", "-3"),
                          ("ident", "x")]


LOOPS = """\
func.func @loops(%x: !pto.ptr<f32>, %n: index, %k: i32) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %a0 = arith.constant 0 : i64
  %t = pto.alloc_tile valid_row = %c4 valid_col = %c4 : !pto.tile_buf<vec, 8x8xf32, valid=?x?>
  %t2 = pto.tassign %t, %a0 : !pto.tile_buf<vec, 8x8xf32, valid=?x?> -> !pto.tile_buf<vec, 8x8xf32, valid=?x?>
  scf.for %i = %c0 to %n step %c4 {
    %j = arith.addi %i, %c4 : index
    %m = arith.minsi %j, %n : index
    %ki = arith.index_cast %k : i32 to index
    scf.for %q = %i to %m step %ki {
      %f = arith.sitofp %k : i32 to f32
      %g = arith.mulf %f, %f : f32
      pto.texpands ins(%g : f32) outs(%t2 : !pto.tile_buf<vec, 8x8xf32, valid=?x?>)
      scf.yield
    }
  }
  return
}
"""
PROGRAMS["loops"] = LOOPS


@pytest.mark.parametrize("text", [LOOPS])
def test_loop_round_trip_and_ast(text):
    m = asm.parse(text)
    assert asm.parse(asm.format(m)) == m
    loop = next(op for op in m.funcs[0].body if isinstance(op, syn.ForOp))
    assert loop.iv == "i" and [type(o).__name__ for o in loop.body] == [
        "ArithOp", "ArithOp", "ArithOp", "ForOp"]
    inner = loop.body[-1]
    assert len(inner.body) == 3                      # scf.yield is implicit
    assert loop.body[2].src_type == syn.ScalarType("i32")


LOOP_ERRORS = [
    (LOOPS.replace("  return\n", "  %z = arith.addi %j, %c4 : index\n  return\n"), 18, "%j",
     "use of undefined value %j"),                                # loop-local value outside
    (LOOPS.replace("%j = arith.addi %i, %c4 : index", "%j = arith.addi %i, %k : index"), 8,
     "%k", "%k has type i32 but is used as index"),
    (LOOPS.replace("%g = arith.mulf %f, %f : f32", "%g = arith.muli %f, %f : f32"), 13,
     "f32", "arith.muli needs an integer type"),
    (LOOPS.replace("scf.yield", "return"), 15, "return", "return inside a loop body"),
    (LOOPS.replace("step %c4 {", "step %c4 iter_args(%a = %c0) -> (index) {"), 7, "iter_args",
     "1 iter_args but its body yields 0 values"),
    (LOOPS.replace("%i = %c0 to", "%i = %c0 until"), 7, "until", "expected 'to'"),
    (LOOPS.replace("arith.minsi", "arith.pow"), 9, "arith.pow", "unknown operation 'arith.pow'"),
    (LOOPS.replace("-> !pto.tile_buf<vec, 8x8xf32, valid=?x?>\n",
                   "-> !pto.tile_buf<vec, 8x16xf32, valid=?x?>\n"), 6, "!pto.tile_buf<vec, 8x16",
     "pto.tassign must return the type of its tile operand"),
]


@pytest.mark.parametrize("text, line, anchor, fragment", LOOP_ERRORS)
def test_loop_error_positions(text, line, anchor, fragment):
    source_line = text.split("\n")[line - 1]
    col = source_line.index(anchor) + 1
    with pytest.raises(AsmSyntaxError) as ei:
        asm.parse(text)
    assert fragment in str(ei.value)
    assert (ei.value.line, ei.value.column) == (line, col), str(ei.value)


def _mutate_and_parse(data, name):
    text = PROGRAMS[name]
    for _ in range(data.draw(st.integers(1, 3))):
        i = data.draw(st.integers(0, len(text) - 1))
        kind = data.draw(st.sampled_from(["del", "dup", "sub"]))
        if kind == "del":
            text = text[:i] + text[i + 1:]
        elif kind == "dup":
            text = text[:i] + text[i] + text[i:]
        else:
            text = text[:i] + data.draw(st.sampled_from(list("%@!#<>(){}[],:=?x0-9 \n\"a"))) \
                + text[i + 1:]
    try:
        m = asm.parse(text)
    except AsmSyntaxError as e:
        assert e.line >= 1 and e.column >= 1
        assert e.source_line == text.split("\n")[e.line - 1]
    else:
        assert asm.parse(asm.format(m)) == m


@settings(max_examples=100, deadline=None)
@given(data=st.data(), name=st.sampled_from(sorted(PROGRAMS)))
def test_mutated_programs_raise_only_asm_syntax_error(data, name):
    """Deleting, duplicating or replacing a few characters never crashes the parser."""
    _mutate_and_parse(data, name)


@pytest.mark.slow
@settings(max_examples=5000, deadline=None)
@given(data=st.data(), name=st.sampled_from(sorted(PROGRAMS)))
def test_mutated_programs_raise_only_asm_syntax_error_many(data, name):
    _mutate_and_parse(data, name)
