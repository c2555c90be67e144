"""PTO-AS verifier rules of the 2026-07 PTOAS (wang-chonghao/PTOAS) for programs it rejects:
one error test per rule, each with the accepted neighbour of the program it rejects.

Programs are our own; the rules come from lib/PTO/IR/PTO.cpp (op verifiers),
lib/PTO/Transforms/PTOResolveReservedBuffersPass.cpp,
lib/PTO/Transforms/PTONormalizeUncoveredTileSections.cpp and tools/ptoas/driver.cpp.
"""

import pytest

from fastisa.errors import AsmSyntaxError
from fastisa.pto import asm


def _tb(rows, cols, v_row=None, v_col=None, dtype="f32", loc="vec", bl="row_major",
        sl="none_box", pad=0):
    vr = rows if v_row is None else v_row
    vc = cols if v_col is None else v_col
    return (f"!pto.tile_buf<loc={loc}, dtype={dtype}, rows={rows}, cols={cols}, v_row={vr}, "
            f"v_col={vc}, blayout={bl}, slayout={sl}, fractal=512, pad={pad}>")


def _one(op_text, tiles, arch="a3", args=""):
    decl = "".join(f"    %{n} = pto.alloc_tile : {t}\n" for n, t in tiles.items())
    return (f'module attributes {{pto.target_arch = "{arch}"}} {{\n'
            f"  func.func @k({args}) {{\n"
            f"    %c0 = arith.constant 0 : index\n    %cf = arith.constant 2.0 : f32\n"
            f"{decl}    {op_text}\n    return\n  }}\n}}\n")


def _op(name, ins, outs, attrs=""):
    """``pto.NAME ins(...) outs(...)`` from ``[(ssa, type)]`` lists."""
    i = ", ".join(n for n, _ in ins) + " : " + ", ".join(t for _, t in ins)
    o = ", ".join(n for n, _ in outs) + " : " + ", ".join(t for _, t in outs)
    return f"pto.{name} ins({i}) outs({o}){(' ' + attrs) if attrs else ''}"


def _err(text, fragment, **kw):
    with pytest.raises(AsmSyntaxError, match=fragment) as ei:
        asm.parse(text, **kw)
    assert ei.value.line > 0 and ei.value.column > 0
    return ei.value


def _op_line(text, needle):
    return next(k for k, line in enumerate(text.split("\n"), 1) if needle in line)


# ---- tmp / parameter tile contracts -------------------------------------------------

def _argred(name, src, tmp, dst):
    tiles = {"s": src, "t": tmp, "d": dst}
    return _one(_op(name, [("%s", src), ("%t", tmp)], [("%d", dst)]), tiles)


@pytest.mark.parametrize("name", ["trowargmax", "trowargmin"])
def test_row_arg_reduction_a3_tmp_columns(name):
    src = _tb(16, 128, 13, 127)
    dst = _tb(16, 1, 13, 1, dtype="ui32", bl="col_major")
    # 127 f32 columns = 2 repeats of 64: (ceil(4/8) + ceil(2/8)) * 8 = 16 tmp columns
    bad = _argred(name, src, _tb(16, 8, 13, 8), dst)
    e = _err(bad, r"A2/A3 tmp valid_shape\[1\] to be at least 16 for src valid_shape\[1\] "
                  r"= 127")
    assert e.line == _op_line(bad, f"pto.{name}")
    asm.parse(_argred(name, src, _tb(16, 16, 13, 16), dst))
    asm.parse(bad, arch="a5")                   # an A2/A3 rule only


@pytest.mark.parametrize("name", ["tcolargmax", "tcolargmin"])
def test_col_arg_reduction_a3_tmp_columns_and_dst_row(name):
    src = _tb(16, 256, 15, 255)
    dst = _tb(1, 256, 1, 255, dtype="i32")
    _err(_argred(name, src, _tb(1, 8), dst),
         r"at least 16 for src valid_shape\[1\] = 255")
    asm.parse(_argred(name, src, _tb(1, 16), dst))
    # dst valid_shape[0] must be 1, on every target
    two = _argred(name, src, _tb(1, 16), _tb(2, 256, 2, 255, dtype="i32"))
    _err(two, r"dst valid_shape\[0\] to be 1", arch="a5")


@pytest.mark.parametrize("name, scalar, least", [("trem", False, 2), ("trems", True, 1)])
def test_trem_trems_a3_tmp_rows(name, scalar, least):
    F = _tb(16, 64)
    short = _tb(2, 64, least - 1, 64)
    ok = _tb(2, 64, least, 64)

    def prog(tmp):
        ins = [("%a", F)] + ([("%cf", "f32")] if scalar else [("%b", F)]) + [("%t", tmp)]
        return _one(_op(name, ins, [("%d", F)]), {"a": F, "b": F, "t": tmp, "d": F})
    _err(prog(short), rf"A2/A3 tmp valid_shape\[0\] to be at least {least}")
    asm.parse(prog(ok))
    asm.parse(prog(short), arch="a5")
    _err(prog(_tb(2, 32)), "tmp valid columns to cover dst valid columns")


def test_tquant_a3_parameter_and_tmp_layouts():
    src = _tb(32, 32)
    col = _tb(32, 1, bl="col_major")
    dst = _tb(32, 32, dtype="i8")

    def prog(fp, tmp=None):
        outs = [("%d", dst)] + ([("%t", tmp)] if tmp else [])
        return _one(_op("tquant", [("%s", src), ("%f", fp)], outs,
                        "{quant_type = #pto<quant_type INT8_SYM>}"),
                    {"s": src, "f": fp, "d": dst, **({"t": tmp} if tmp else {})})
    _err(prog(_tb(32, 32)), "A2/A3 fp to use non-row-major layout")
    _err(prog(_tb(32, 2, bl="col_major")), r"A2/A3 fp valid_shape\[1\] to be 1")
    _err(prog(col, _tb(16, 32)), "A2/A3 tmp to have the same shape as src")
    asm.parse(prog(col, _tb(32, 32)))
    # offset of INT8_ASYM: the same parameter contract
    udst = _tb(32, 32, dtype="ui8")
    asym = _one(_op("tquant", [("%s", src), ("%f", col), ("%o", src)], [("%d", udst)],
                    "{quant_type = #pto<quant_type INT8_ASYM>}"),
                {"s": src, "f": col, "o": src, "d": udst})
    _err(asym, "A2/A3 offset to use non-row-major layout")


def test_tcolsum_binary_tmp_columns():
    src = _tb(16, 64)
    dst = _tb(1, 64)

    def prog(tmp):
        return _one(f"pto.tcolsum ins(%s, %t {{isBinary = true}} : {src}, {tmp}) "
                    f"outs(%d : {dst})", {"s": src, "t": tmp, "d": dst})
    for arch in ("a3", "a5"):
        _err(prog(_tb(1, 32)), r"tmp shape\[1\] to be at least src valid_shape\[1\] when "
                               r"isBinary is true; got 32 vs 64", arch=arch)
    asm.parse(prog(_tb(1, 64)))


def test_tmrgsort_format2_tmp_columns():
    T = _tb(1, 256)

    def prog(tmp):
        return _one(f"pto.tmrgsort ins(%a, %b, %t {{exhausted = false}} : {T}, {T}, {tmp}) "
                    f"outs(%d, %ex : {T}, vector<4xi16>)", {"a": T, "b": T, "t": tmp, "d": T},
                    args="%ex: vector<4xi16>")
    _err(prog(_tb(1, 128)), r"format2 expects tmp.cols >= dst.cols")
    asm.parse(prog(_tb(1, 256)))


# ---- element types, layouts, valid shapes ----------------------------------------------

@pytest.mark.parametrize("name, scalar, a5_bf16", [
    ("tmaxs", True, True), ("tmins", True, True), ("tsubs", True, True),
    ("tmuls", True, True), ("tmax", False, False), ("tmul", False, False)])
def test_arithmetic_element_types_per_target(name, scalar, a5_bf16):
    B = _tb(16, 16, dtype="bf16")
    ins = [("%a", B), ("%sc", "bf16")] if scalar else [("%a", B), ("%a", B)]
    text = _one(_op(name, ins, [("%d", B)]), {"a": B, "d": B}, args="%sc: bf16")
    _err(text, f"A2/A3 {name} element type to be i32/i16/f16/f32")
    if a5_bf16:
        asm.parse(text, arch="a5")
    else:
        _err(text, f"A5 {name} element type", arch="a5")
    asm.parse(text.replace("dtype=bf16", "dtype=f16").replace(": bf16", ": f16")
              .replace(", bf16)", ", f16)"))


def test_a5_tload_vec_layouts():
    def prog(bl, sl):
        T = _tb(16, 32, dtype="f16", bl=bl, sl=sl)
        return f"""module attributes {{pto.target_arch = "a5"}} {{
  func.func @k(%src: !pto.ptr<f16>) {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %c32 = arith.constant 32 : index
    %tv = pto.make_tensor_view %src, shape = [%c16, %c32], strides = [%c32, %c1] : !pto.tensor_view<?x?xf16>
    %sv = pto.partition_view %tv, offsets = [%c0, %c0], sizes = [%c16, %c32] : !pto.tensor_view<?x?xf16> -> !pto.partition_tensor_view<16x32xf16>
    %t = pto.alloc_tile : {T}
    pto.tload ins(%sv : !pto.partition_tensor_view<16x32xf16>) outs(%t : {T})
    return
  }}
}}
"""
    _err(prog("row_major", "row_major"), "expects A5 tload vec dst layout to be ND, DN, or NZ")
    asm.parse(prog("row_major", "none_box"))


def test_acc_tstore_destination_types():
    acc = _tb(16, 16, loc="acc", bl="col_major", sl="row_major")

    def prog(elem, pre, arch):
        ins = f"%s, %q : {acc}, i64" if pre else f"%s : {acc}"
        return f"""module attributes {{pto.target_arch = "{arch}"}} {{
  func.func @k(%dst: !pto.partition_tensor_view<16x16x{elem}>, %q: i64) {{
    %s = pto.alloc_tile : {acc}
    pto.tstore ins({ins}) outs(%dst : !pto.partition_tensor_view<16x16x{elem}>)
    return
  }}
}}
"""
    _err(prog("f8E5M2", True, "a5"),
         "A5 acc preQuantScalar tstore dst type to be i8/ui8/f16/bf16/f32/hif8/f8E4M3")
    asm.parse(prog("f8E4M3FN", True, "a5"), arch="a5")
    _err(prog("f16", True, "a3"), "A2/A3 acc preQuantScalar tstore dst type to be i8/ui8")
    _err(prog("i8", False, "a3"), "A2/A3 acc tstore dst element type to be i32/f32/f16/bf16")
    asm.parse(prog("f16", False, "a3"))


def test_tscatter_takes_indexes_or_a_mask_pattern():
    S, D = _tb(1, 64, dtype="f16"), _tb(1, 32, dtype="f16")
    I = _tb(1, 32, dtype="i16")
    both = _one(f'"pto.tscatter"(%s, %d, %i) <{{maskPattern = #pto.mask_pattern<P0101>}}> : '
                f"({S}, {D}, {I}) -> ()", {"s": S, "d": D, "i": I})
    _err(both, "expects exactly one of indexes operand or maskPattern attribute")
    neither = _one(f'"pto.tscatter"(%s, %d) : ({S}, {D}) -> ()', {"s": S, "d": D})
    _err(neither, "expects exactly one of indexes operand or maskPattern attribute")
    asm.parse(_one(f"pto.tscatter ins(%s, {{maskPattern = #pto.mask_pattern<P0101>}} : {S}) "
                   f"outs(%d : {D})", {"s": S, "d": D}))


def test_tfillpad_mat_needs_one_tile_type():
    def prog(src, dst):
        return _one(_op("tfillpad", [("%s", src)], [("%d", dst)]), {"s": src, "d": dst})
    src = _tb(16, 64, 8, 32, dtype="bf16", loc="mat", bl="col_major", sl="row_major")
    dst = _tb(16, 64, dtype="bf16", loc="mat", bl="col_major", sl="row_major", pad=1)
    _err(prog(src, dst), r"lowerable to TFILLPAD for loc=mat; mismatching fields: "
                         r"v_row \(8 vs 16\), v_col \(32 vs 64\), pad \(0 vs 1\)")
    asm.parse(prog(dst, dst))


def test_trowexpand_one_sided_empty_valid_region():
    src = _tb(16, 1, bl="col_major")

    def prog(dst):
        return _one(_op("trowexpand", [("%s", src)], [("%d", dst)]), {"s": src, "d": dst})
    _err(prog(_tb(16, 16, 16, 0)), r"expects dst valid_shape\[1\] to be non-zero", arch="a5")
    asm.parse(prog(_tb(16, 16, 0, 0)), arch="a5")      # 0 x 0: the no-op marker


def test_a5_textract_element_types_and_right_layout():
    def prog(src, dst):
        return _one(f"pto.textract ins(%s, %c0, %c0 : {src}, index, index) outs(%d : {dst})",
                    {"s": src, "d": dst}, arch="a5")
    v64 = prog(_tb(32, 64, dtype="si64"), _tb(16, 32, dtype="si64"))
    _err(v64, "expects A5 textract element type to be an fp8/f16/bf16/f32 or int8 family",
         arch="a5")
    m = _tb(32, 32, dtype="f16", loc="mat", bl="row_major", sl="col_major")
    _err(prog(m, _tb(16, 16, dtype="f16", loc="right", bl="col_major", sl="row_major")),
         "expects A5 right dst to use row_major blayout and col_major slayout", arch="a5")
    asm.parse(prog(m, _tb(16, 16, dtype="f16", loc="right", bl="row_major", sl="col_major")),
              arch="a5")


# ---- module structure: backends, peer lookups, sections ---------------------------------

RESERVE = ('%b = pto.reserve_buffer {name = "fifo", size = 4096, '
           'location = #pto.address_space<vec>, auto = true} -> i32')
IMPORT = '%p = pto.import_reserved_buffer {name = "fifo", peer_func = @producer} -> i32'


def _child(backend, body, extra=None):
    # a vpto child carries its kernel kind (VPTONormalizeContainer), unless told otherwise
    if extra is None:
        extra = "pto.kernel_kind = #pto.kernel_kind<vector>" if backend == "vpto" else ""
    attrs = f'pto.backend = "{backend}"' + (", " + extra if extra else "")
    return f"  module attributes {{{attrs}}} {{\n{body}  }}\n"


def _fn(name, ops=(), vis="", attrs=""):
    v = f"{vis} " if vis else ""
    a = f" attributes {{{attrs}}}" if attrs else ""
    return (f"    func.func {v}@{name}(){a} {{\n" + "".join(f"      {o}\n" for o in ops)
            + "      return\n    }\n")


def _outer(*children, top=""):
    return ('module attributes {pto.target_arch = "a5"} {\n' + "".join(children) + top
            + "}\n")


def test_invalid_backend_attribute():
    bad = ('module attributes {pto.backend = "other", pto.target_arch = "a5"} {\n'
           "  func.func @k() {\n    return\n  }\n}\n")
    e = _err(bad, "invalid pto.backend 'other'. Expected 'emitc' or 'vpto'.")
    assert e.line == 1
    asm.parse(bad.replace('"other"', '"emitc"'))


def test_backend_container_holds_only_child_modules():
    kids = (_child("emitc", _fn("a", attrs="pto.aicore")),
            _child("vpto", _fn("b"), "pto.kernel_kind = #pto.kernel_kind<vector>"))
    bad = _outer(kids[0], kids[1], top=_fn("stray"))
    e = _err(bad, "expects either a single module or an outer module containing only child "
                  "modules")
    assert e.line == _op_line(bad, "@stray")
    asm.parse(_outer(*kids))


def test_peer_func_lookup_across_modules():
    prod = _fn("producer", [RESERVE], vis="public")
    cons = _fn("consumer", [IMPORT])
    # one public producer in a sibling module: found
    asm.parse(_outer(_child("vpto", cons), _child("vpto", prod)))
    # two: ambiguous; a private one: not visible; a PTODSL-like name without the
    # logical-name attribute: not the same function
    for kids in ([_child("vpto", cons), _child("vpto", prod), _child("vpto", prod)],
                 [_child("emitc", cons), _child("vpto", prod.replace("public", "private"))],
                 [_child("vpto", cons),
                  _child("vpto", prod.replace("@producer", "@producer__ptodsl_user"))]):
        text = _outer(*kids)
        e = _err(text, "'pto.import_reserved_buffer' op expects 'peer_func' to reference an "
                       "existing func.func")
        assert e.line == _op_line(text, "import_reserved_buffer")
    # the logical-name attribute names the specialisation
    named = prod.replace("@producer()", "@producer__ptodsl_user()").replace(
        "{\n", ' attributes {pto.ptodsl.logical_name = "producer"} {\n', 1)
    asm.parse(_outer(_child("vpto", cons), _child("vpto", named)))


def test_mixed_backend_child_assembly_rules():
    side = _child("vpto", _fn("sidecar", vis="public"))
    helpers = [_fn("entry", ["func.call @h__a() : () -> ()"], attrs="pto.entry"),
               _fn("h__a", vis="public", attrs='pto.ptodsl.logical_name = "h"'),
               _fn("h__b", vis="public", attrs='pto.ptodsl.logical_name = "h"')]
    bad = _outer(_child("emitc", "".join(helpers)), side)
    _err(bad, "ambiguous in-child logical reference '@h'; found multiple ABI-specialized")
    asm.parse(_outer(_child("emitc", "".join(helpers[:2])), side))
    # an imported peer in a sibling may not call other functions
    prod = _fn("producer", ["func.call @helper() : () -> ()", RESERVE], vis="public")
    text = _outer(_child("emitc", _fn("consumer", [IMPORT], attrs="pto.entry")),
                  _child("vpto", _fn("helper", vis="private") + prod))
    e = _err(text, "transitive cross-child function closure for imported peer 'producer'; "
                   "cloned peer body @producer directly calls @helper")
    assert e.line == _op_line(text, "@producer()")
    # with one backend for both children, nothing is assembled across them
    asm.parse(text.replace('pto.backend = "emitc"',
                           'pto.backend = "vpto", pto.kernel_kind = #pto.kernel_kind<vector>'))


def test_nested_section_beside_uncovered_tile_ops():
    T = "memref<16x16xf32, #pto.address_space<vec>>"
    G = "memref<16x16xf32, #pto.address_space<gm>>"

    def prog(kind_attr, inside):
        tail = (f"      pto.tadds ins(%t0, %s : {T}, f32) outs(%t1 : {T})\n"
                f"      pto.tstore ins(%t1 : {T}) outs(%dst : {G})\n")
        body = (f"      pto.section.vector {{\n        pto.tload ins(%src : {G}) outs(%t0 : {T})\n"
                + (tail.replace("      ", "        ") if inside else "") + "      }\n"
                + ("" if inside else tail))
        return f"""module attributes {{pto.target_arch = "a5"}} {{
  func.func @k(%src: {G}, %dst: {G}){kind_attr} {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %t0 = memref.alloc() : {T}
    %t1 = memref.alloc() : {T}
    %s = arith.constant 1.0 : f32
    scf.for %i = %c0 to %c1 step %c1 {{
{body}    }}
    return
  }}
}}
"""
    bad = prog("", False)
    e = _err(bad, "mixes nested explicit pto.section.\\* with sibling TileOps outside those "
                  "sections; first uncovered TileOp segment starts at 'scf.for'")
    assert e.line == _op_line(bad, "func.func")
    asm.parse(prog("", True))
    asm.parse(prog(" attributes {pto.kernel_kind = #pto.kernel_kind<vector>}", False))


# ---- pipes ---------------------------------------------------------------------------

CUBE = "pto.kernel_kind = #pto.kernel_kind<cube>"
VEC = "pto.kernel_kind = #pto.kernel_kind<vector>"


def _pipe_prog(cube_ops, vec_ops):
    return ("module {\n" + _fn("cube_kernel", cube_ops, attrs=CUBE)
            + _fn("vector_kernel", vec_ops, attrs=VEC) + "}\n")


def _res(name, loc="vec"):
    return (f'%{name} = pto.reserve_buffer {{name = "{name}", size = 4096, location = '
            f'#pto.address_space<{loc}>, auto = true}} -> i32')


def _imp(name, peer):
    return f'%{name} = pto.import_reserved_buffer {{name = "{name}", peer_func = @{peer}}} -> i32'


def _finit(side, pid, mask, c2v="%c0_i32", v2c="%c0_i32"):
    return (f"pto.{side}_initialize_pipe {{id = {pid}, dir_mask = {mask}, slot_size = 1024}}"
            f"(c2v_consumer_buf = {c2v} : i32, v2c_consumer_buf = {v2c} : i32)")


ZERO = "%c0_i32 = arith.constant 0 : i32"


def test_pipe_inits_form_compatible_peer_pairs():
    good = _pipe_prog([ZERO, _imp("c2v", "vector_kernel"), _finit("aic", 10, 1, c2v="%c2v")],
                      [ZERO, _res("c2v"), _finit("aiv", 10, 1, c2v="%c2v")])
    asm.parse(good, arch="a5")
    # two cube inits on one buffer and direction, none in the vector kernel
    same = _pipe_prog([ZERO, _imp("c2v", "vector_kernel"), _finit("aic", 10, 1, c2v="%c2v"),
                       _finit("aic", 20, 1, c2v="%c2v")], [_res("c2v")])
    e = _err(same, "requires a complete compatible peer init pair", arch="a5")
    assert e.line == _op_line(same, "id = 10")
    # two one-way cube inits against one two-way vector init: three inits in one pipe
    mixed = _pipe_prog([ZERO, _res("v2c", "mat"), _imp("c2v", "vector_kernel"),
                        _finit("aic", 10, 1, c2v="%c2v"), _finit("aic", 20, 2, v2c="%v2c")],
                       [_res("c2v"), _imp("v2c", "cube_kernel"),
                        _finit("aiv", 0, 3, c2v="%c2v", v2c="%v2c")])
    _err(mixed, "requires a complete compatible peer init pair", arch="a5")


def test_pipe_components_fit_in_sixteen_flag_ids():
    def prog(n):
        cube = [_res(f"f{k}", "mat") for k in range(n)] + [
            f"%p{k} = pto.initialize_l2l_pipe {{dir_mask = 1, slot_size = 1024, slot_num = 8}}"
            f"(%f{k} : i32) -> !pto.pipe" for k in range(n)]
        vec = [_imp(f"f{k}", "cube_kernel") for k in range(n)] + [
            f"%p{k} = pto.initialize_l2l_pipe {{dir_mask = 1, slot_size = 1024, slot_num = 8}}"
            f"(%f{k} : i32) -> !pto.pipe" for k in range(n)]
        return _pipe_prog(cube, vec)
    asm.parse(prog(8), arch="a5")                       # 8 one-way pipes: flags 0..15
    bad = prog(9)
    e = _err(bad, "requires all pipe components in a function to fit within 16 hardware "
                  "flag ids", arch="a5")
    assert e.line == _op_line(bad, "%p8 = pto.initialize_l2l_pipe")


def test_frontend_pipe_init_needs_its_kernel_kind():
    init = _finit("aic", 0, 1, c2v="%buf", v2c="%buf")
    plain = f"module {{\n  func.func @k(%buf: i32) {{\n    {init}\n    return\n  }}\n}}\n"
    _err(plain, "'pto.aic_initialize_pipe' op must be inside a cube kernel function or "
                "section", arch="a5")
    in_vec = plain.replace(f"    {init}\n", f"    pto.section.vector {{\n      {init}\n    }}\n")
    _err(in_vec, "must be inside a cube kernel function or section", arch="a5")
    asm.parse(in_vec.replace("section.vector", "section.cube"), arch="a5")
    asm.parse(plain.replace("@k(%buf: i32)", f"@k(%buf: i32) attributes {{{CUBE}}}"),
              arch="a5")


def test_subkernel_helper_pipe_contract():
    G = "memref<16x16xf32, #pto.address_space<gm>>"
    T = _tb(16, 16)

    def prog(leaf_op):
        return f"""module attributes {{pto.target_arch = "a5", {VEC}}} {{
  func.func @kernel(%src: {G}) {{
    func.call @simd(%src) : ({G}) -> ()
    return
  }}
  func.func private @simd(%src: {G}) attributes {{pto.ptodsl.subkernel_helper = "simd"}} {{
    pto.section.vector {{
      func.call @leaf(%src) : ({G}) -> ()
    }}
    return
  }}
  func.func private @leaf(%src: {G}) {{
    pto.section.vector {{
      %t = pto.alloc_tile : {T}
      {leaf_op}
    }}
    return
  }}
}}
"""
    bad = prog(f"pto.tload ins(%src : {G}) outs(%t : {T})")
    e = _err(bad, "violates PTODSL subkernel pipe contract for root helper @simd: expected "
                  "PTO ops on PIPE_V only, but found PIPE_MTE2")
    assert e.line == _op_line(bad, "pto.tload")
    asm.parse(prog(f"pto.tneg ins(%t : {T}) outs(%t : {T})"))


def test_vpto_child_module_needs_a_kernel_kind():
    bad = _outer(_child("vpto", _fn("k"), ""))
    _err(bad, "expected VPTO kernel submodule to carry 'pto.kernel_kind'")
    asm.parse(_outer(_child("vpto", _fn("k"), VEC)))
    asm.parse(_outer(_child("emitc", _fn("k"))))


# ---- the conformance harness's reading of PTOAS's lit lines ------------------------------

def _harness():
    import importlib.util
    import pathlib
    path = pathlib.Path(__file__).parent / "conformance" / "run_ptoas.py"
    spec = importlib.util.spec_from_file_location("_run_ptoas_for_test", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_harness_classification_of_lit_lines():
    H = _harness()
    body = "module {\n  func.func @k() {\n    return\n  }\n}\n"
    assert H.classify("// RUN: ptoas %s | FileCheck %s\n// CHECK-NOT: error:\n" + body) == [
        ("accepted", None, None)]
    assert H.classify("// RUN: ptoas %s 2>&1 | FileCheck %s\n// CHECK: error: x\n" + body) == [
        ("rejected", None, None)]
    # rejected only under a sync pass or for the driver's command line: not counted
    two = ("// RUN: ptoas --pto-arch=a5 %s | FileCheck %s\n"
           "// RUN: not ptoas --pto-arch=a5 --enable-graph-sync-solver %s 2>&1\n" + body)
    assert H.classify(two) == [("accepted", "a5", None)]
    drv = ("// RUN: not ptoas --pto-arch=a5 %s -o - 2>&1 | FileCheck %s\n// CHECK: mixed "
           "pto.backend fatobj mode requires an explicit file path passed with -o\n" + body)
    assert H.classify(drv) == []
    # runop.sh expects *_invalid samples to fail
    assert H.sample_configs(body, "test/samples/Sync/x_invalid.pto", {}) == [
        ("rejected", None, None)]
    assert H.sample_configs(body, "test/samples/Sync/x.pto", {}) == [("accepted", None, None)]
