"""PTO-AS: PTOAS's operand forms and attributes of the tile instructions (cmpMode,
descending, upperOrLower, sat_mode, maskPattern, exhausted, scratch ``tmp`` operands,
interleaved ``ins(%a : T, %b : T)``, attribute dicts inside ``ins(...)``), the func
dialect's ``call``, ``dense<...>`` constants, ``memref.reinterpret_cast`` and TPRINT.

Each program is our own; the forms come from hw-native-sys/PTOAS include/PTO/IR/PTOOps.td
(TCmpOp, TCmpSOp, TCIOp, TTriOp, TCvtOp, TRsqrtOp, TGatherOp, TMrgSortOp, TRowArgMaxOp,
TStoreOp, TPrintOp).  Every run result is compared with the same call through the Python
API on the same inputs (bit patterns), and with a value that would be wrong if the
attribute were dropped, so the test fails when the attribute is ignored."""

import numpy as np
import pytest

import fastisa.pto as P
from fastisa.errors import AsmSyntaxError, ConstraintError
from fastisa.pto import asm


def tb(dtype, rows, cols, vr=None, vc=None):
    vr = rows if vr is None else vr
    vc = cols if vc is None else vc
    return (f"!pto.tile_buf<loc=vec, dtype={dtype}, rows={rows}, cols={cols}, v_row={vr}, "
            f"v_col={vc}, blayout=row_major, slayout=none_box, fractal=512, pad=0>")


_NP = {"f32": np.float32, "f16": np.float16, "i32": np.int32, "i16": np.int16,
       "ui8": np.uint8, "ui32": np.uint32}
_API = {"f32": "float32", "f16": "float16", "i32": "int32", "i16": "int16", "ui8": "uint8",
        "ui32": "uint32"}


def program(ins, out, body, scalars=""):
    """A kernel loading every ``ins`` tile ``(name, dtype, rows, cols)`` from a pointer
    argument of the same name, running ``body`` and storing tile ``out`` to ``%out``."""
    args = [f"%{n}: !pto.ptr<{d}>" for n, d, _r, _c in ins]
    args.append(f"%out: !pto.ptr<{out[1]}>")
    if scalars:
        args.append(scalars)
    lines = ["    %c0 = arith.constant 0 : index", "    %c1 = arith.constant 1 : index"]
    for k, (n, d, r, c) in enumerate(list(ins) + [out]):
        ptr = n if k < len(ins) else "out"
        lines += [
            f"    %r_{n} = arith.constant {r} : index",
            f"    %k_{n} = arith.constant {c} : index",
            f"    %v_{n} = pto.make_tensor_view %{ptr}, shape = [%r_{n}, %k_{n}], strides = "
            f"[%k_{n}, %c1] : !pto.tensor_view<?x?x{d}>",
            f"    %p_{n} = pto.partition_view %v_{n}, offsets = [%c0, %c0], sizes = [%r_{n}, "
            f"%k_{n}] : !pto.tensor_view<?x?x{d}> -> !pto.partition_tensor_view<{r}x{c}x{d}>",
            f"    %t_{n} = pto.alloc_tile : {tb(d, r, c)}"]
    for n, d, r, c in ins:
        lines.append(f"    pto.tload ins(%p_{n} : !pto.partition_tensor_view<{r}x{c}x{d}>) "
                     f"outs(%t_{n} : {tb(d, r, c)})")
    lines.append(body)
    n, d, r, c = out
    lines.append(f"    pto.tstore ins(%t_{n} : {tb(d, r, c)}) outs(%p_{n} : "
                 f"!pto.partition_tensor_view<{r}x{c}x{d}>)")
    return ("module {\n  func.func @k(" + ", ".join(args) + ") {\n" + "\n".join(lines)
            + "\n    return\n  }\n}\n")


def api_tiles(specs, arrays):
    tiles = []
    for (n, d, r, c), a in zip(specs, arrays):
        t = P.Tile(P.TileType.Vec, _API[d], r, c)
        if a is not None:
            t.data[...] = a
        tiles.append(t)
    return tiles


def roundtrip(text):
    m = asm.parse(text)
    assert asm.parse(asm.format(m)) == m
    return m


def rand(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    return rng.integers(-4, 5, size=shape).astype(dtype)


F8 = ("a", "f32", 8, 8), ("b", "f32", 8, 8)


@pytest.mark.parametrize("mode", ["gt", "lt", "ne", "le"])
def test_tcmp_reads_cmpmode_inside_ins(mode):
    a, b = rand((8, 8), np.float32, 1), rand((8, 8), np.float32, 2)
    out = ("d", "ui8", 8, 32)
    body = (f"    pto.tcmp ins(%t_a, %t_b {{cmpMode = #pto<cmp {mode}>}} : {tb('f32', 8, 8)}, "
            f"{tb('f32', 8, 8)}) outs(%t_d : {tb('ui8', 8, 32)})")
    text = program(F8, out, body)
    roundtrip(text)
    got = asm.run(text, {"a": a, "b": b})["out"].reshape(8, 32)
    ta, tb_, td = api_tiles(list(F8) + [out], [a, b, None])
    P.TCMP(td, ta, tb_, cmpMode=mode.upper())
    np.testing.assert_array_equal(got, td.data)
    P.TCMP(td, ta, tb_, cmpMode="EQ")
    assert not np.array_equal(got, td.data)       # the mode was not dropped


def test_tcmps_reads_cmpmode_and_the_dotted_attribute_spelling():
    a = rand((8, 8), np.float32, 3)
    out = ("d", "ui8", 8, 32)
    body = (f"    %s = arith.constant 0.0 : f32\n"
            f"    pto.tcmps ins(%t_a, %s {{cmpMode = #pto.cmp<ge>}} : {tb('f32', 8, 8)}, f32) "
            f"outs(%t_d : {tb('ui8', 8, 32)})")
    text = program(F8[:1], out, body)
    got = asm.run(text, {"a": a})["out"].reshape(8, 32)
    ta, td = api_tiles([F8[0], out], [a, None])
    P.TCMPS(td, ta, np.float32(0), cmpMode="GE")
    np.testing.assert_array_equal(got, td.data)


@pytest.mark.parametrize("desc", [False, True])
def test_tci_descending(desc):
    out = ("d", "i32", 1, 16)
    attr = " {descending = true}" if desc else ""
    body = (f"    %s = arith.constant 5 : i32\n"
            f"    pto.tci ins(%s{attr} : i32) outs(%t_d : {tb('i32', 1, 16)})")
    got = asm.run(program([], out, body), {})["out"].reshape(1, 16)
    want = 5 - np.arange(16) if desc else 5 + np.arange(16)
    np.testing.assert_array_equal(got[0], want.astype(np.int32))


@pytest.mark.parametrize("upper", [0, 1])
def test_ttri_upper_or_lower(upper):
    out = ("d", "f32", 8, 8)
    attr = f" {{upperOrLower = {upper} : i32}}" if upper else ""
    body = (f"    %dg = arith.constant 1 : i32\n"
            f"    pto.ttri ins(%dg{attr} : i32) outs(%t_d : {tb('f32', 8, 8)})")
    text = program([], out, body)
    roundtrip(text)
    got = asm.run(text, {})["out"].reshape(8, 8)
    r, c = np.arange(8)[:, None], np.arange(8)[None, :]
    want = (c >= r + 1) if upper else (c <= r + 1)
    np.testing.assert_array_equal(got, want.astype(np.float32))


def test_ttri_rejects_another_upper_or_lower_value_with_its_line():
    out = ("d", "f32", 8, 8)
    body = (f"    %dg = arith.constant 0 : i32\n"
            f"    pto.ttri ins(%dg {{upperOrLower = 2 : i32}} : i32) outs(%t_d : "
            f"{tb('f32', 8, 8)})")
    text = program([], out, body)
    with pytest.raises(ConstraintError, match="upperOrLower must be 0") as ei:
        asm.run(text, {})
    assert ei.value.line == text.split("\n").index(
        next(ln for ln in text.split("\n") if "pto.ttri" in ln)) + 1


@pytest.mark.parametrize("sat", ["ON", "OFF"])
def test_tcvt_with_tmp_and_sat_mode(sat):
    a = (np.random.default_rng(4).standard_normal((8, 16)) * 60000).astype(np.float32)
    ins = [("a", "f32", 8, 16), ("tmp", "f32", 8, 16)]
    out = ("d", "i16", 8, 16)
    body = (f"    pto.tcvt ins(%t_a, %t_tmp {{rmode = #pto<round_mode ROUND>, sat_mode = "
            f"#pto<saturation_mode {sat}>}} : {tb('f32', 8, 16)}, {tb('f32', 8, 16)}) "
            f"outs(%t_d : {tb('i16', 8, 16)})")
    text = program(ins, out, body)
    roundtrip(text)
    got = asm.run(text, {"a": a, "tmp": np.zeros_like(a)})["out"].reshape(8, 16)
    ta, td = api_tiles([ins[0], out], [a, None])
    P.TCVT(td, ta, P.RoundMode.CAST_ROUND, satMode=P.SaturationMode[sat])
    np.testing.assert_array_equal(got, td.data)


def test_tcvt_sat_modes_differ_on_out_of_range_values():
    """The sat_mode attribute reaches TCVT: ON and OFF give different int16 bits here."""
    a = np.full((8, 16), 70000.0, np.float32)
    ins = [("a", "f32", 8, 16)]
    out = ("d", "i16", 8, 16)
    res = {}
    for sat in ("ON", "OFF"):
        body = (f"    pto.tcvt ins(%t_a {{rmode = #pto<round_mode ROUND>, sat_mode = "
                f"#pto<saturation_mode {sat}>}} : {tb('f32', 8, 16)}) outs(%t_d : "
                f"{tb('i16', 8, 16)})")
        res[sat] = asm.run(program(ins, out, body), {"a": a})["out"]
    assert res["ON"].reshape(-1)[0] == 32767
    assert not np.array_equal(res["ON"], res["OFF"])


def test_scratch_tmp_operands_give_the_result_without_tmp():
    """trsqrt ins(src, tmp), trowargmax ins(src, tmp), trem ins(a, b, tmp),
    trems ins(src, s, tmp): the result equals the API call (tmp is scratch)."""
    a = np.abs(rand((8, 8), np.float32, 5)) + 1
    b = np.abs(rand((8, 8), np.float32, 6)) + 1
    T8 = tb("f32", 8, 8)
    cases = [
        (f"pto.trsqrt ins(%t_a, %t_b : {T8}, {T8}) outs(%t_d : {T8})",
         ("d", "f32", 8, 8), lambda d, x, y: P.TRSQRT(d, x)),
        (f"pto.trem ins(%t_a, %t_b, %t_b : {T8}, {T8}, {T8}) outs(%t_d : {T8})",
         ("d", "f32", 8, 8), lambda d, x, y: P.TREM(d, x, y)),
        (f"%s = arith.constant 3.0 : f32\n    pto.trems ins(%t_a, %s, %t_b : {T8}, f32, {T8}) "
         f"outs(%t_d : {T8})",
         ("d", "f32", 8, 8), lambda d, x, y: P.TREMS(d, x, np.float32(3))),
        (f"pto.trowargmax ins(%t_a, %t_b : {T8}, {T8}) outs(%t_d : {tb('ui32', 8, 8)})",
         ("d", "ui32", 8, 8), lambda d, x, y: P.TROWARGMAX(d, x)),
    ]
    for body, out, api in cases:
        text = program(F8, out, "    " + body)
        roundtrip(text)
        got = asm.run(text, {"a": a, "b": b})["out"].reshape(8, 8)
        ta, tb_, td = api_tiles(list(F8) + [out], [a, b, None])
        api(td, ta, tb_)
        np.testing.assert_array_equal(got, td.data, err_msg=body)


def test_tmp_operand_counts_are_checked_with_line_and_column():
    T8 = tb("f32", 8, 8)
    body = f"    pto.trsqrt ins(%t_a, %t_b, %t_b : {T8}, {T8}, {T8}) outs(%t_b : {T8})"
    text = program(F8, ("d", "f32", 8, 8), body)
    with pytest.raises(AsmSyntaxError, match=r"pto.trsqrt takes 1 or 2 input operands, got 3") as ei:
        asm.parse(text)
    line = next(k for k, ln in enumerate(text.split("\n"), 1) if "pto.trsqrt" in ln)
    assert (ei.value.line, ei.value.column) == (line, 5)


def test_tgather_mask_form_with_an_attribute_dict_in_ins():
    a = rand((8, 8), np.float32, 7)
    out = ("d", "f32", 8, 8)
    body = (f"    pto.tgather ins(%t_a, {{maskPattern = #pto.mask_pattern<P0101>}} : "
            f"{tb('f32', 8, 8)}) outs(%t_d : {tb('f32', 8, 8)})")
    text = program(F8[:1], out, body)
    roundtrip(text)
    got = asm.run(text, {"a": a})["out"].reshape(8, 8)
    ta, td = api_tiles([F8[0], out], [a, None])
    P.TGATHER(td, ta, maskPattern="P0101")
    np.testing.assert_array_equal(got, td.data)
    P.TGATHER(td, ta, maskPattern="P1010")
    assert not np.array_equal(got, td.data)


def test_tgather_compare_form_is_not_run_silently():
    T8 = tb("f32", 8, 8)
    body = (f"    %k = arith.constant 0.0 : f32\n"
            f"    pto.tgather ins(%t_a, %k, %t_b : {T8}, f32, {T8}) outs(%t_d, %t_b : {T8}, {T8})")
    text = program(F8, ("d", "f32", 8, 8), body)
    asm.parse(text)
    with pytest.raises(NotImplementedError, match="compare form"):
        asm.run(text, {"a": np.ones((8, 8), np.float32), "b": np.ones((8, 8), np.float32)})


def test_tmrgsort_two_lists_executed_counts_and_exhausted():
    # two sorted (descending) lists of 32 (value, index) structs each, float32
    rng = np.random.default_rng(8)
    def lst(seed):
        v = np.sort(rng.standard_normal(32).astype(np.float32))[::-1]
        s = np.zeros(64, np.float32)
        s[0::2] = v
        s[1::2] = np.arange(32, dtype=np.uint32).view(np.float32)
        return s.reshape(1, 64)
    a, b = lst(0), lst(1)
    ins = [("a", "f32", 1, 64), ("b", "f32", 1, 64), ("tmp", "f32", 1, 128)]
    out = ("d", "f32", 1, 128)
    T64, T128 = tb("f32", 1, 64), tb("f32", 1, 128)
    body = (f"    %ex = arith.constant dense<[0, 0, 0, 0]> : vector<4xi16>\n"
            f"    pto.tmrgsort ins(%t_a, %t_b, %t_tmp {{exhausted = false}} : {T64}, {T64}, "
            f"{T128}) outs(%t_d, %ex : {T128}, vector<4xi16>)")
    text = program(ins, out, body)
    roundtrip(text)
    got = asm.run(text, {"a": a, "b": b, "tmp": np.zeros((1, 128), np.float32)})["out"]
    ta, tb_, tt, td = api_tiles(ins + [out], [a, b, None, None])
    P.TMRGSORT(td, P.MrgSortExecutedNumList(), tt, ta, tb_, exhausted=False)
    np.testing.assert_array_equal(got.reshape(-1).view(np.uint32),
                                  td.data.reshape(-1).view(np.uint32))


def test_dense_vector_constant():
    from fastisa.pto import _asm_generic as G
    from fastisa.pto._asm_runner import _Runner
    text = ("func.func @k() {\n"
            "  %v = arith.constant dense<[50000, 1, -1, 7]> : vector<4xi16>\n"
            "  %z = arith.constant dense<3> : vector<2xi32>\n  return\n}\n")
    m = roundtrip(text)
    r = _Runner(m, m.funcs[0], {}, P)
    for op in m.funcs[0].body[:2]:
        G.execute(r, op)
    np.testing.assert_array_equal(r.env["v"], np.array([50000 - 65536, 1, -1, 7], np.int16))
    np.testing.assert_array_equal(r.env["z"], np.array([3, 3], np.int32))


def test_dense_constant_with_the_wrong_count_is_an_error():
    text = ("func.func @k() {\n  %v = arith.constant dense<[1, 2, 3]> : vector<4xi16>\n"
            "  return\n}\n")
    with pytest.raises(ConstraintError, match="has 3 values, the type holds 4") as ei:
        asm.run(text, {})
    assert ei.value.line == 2


def test_func_dialect_call_spelling():
    T8 = tb("f32", 8, 8)
    text = f"""module {{
  func.func private @neg(%t: {T8}) {{
    pto.tneg ins(%t : {T8}) outs(%t : {T8})
    return
  }}
  func.func @k(%x: !pto.ptr<f32>) attributes {{pto.entry}} {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %v = pto.make_tensor_view %x, shape = [%c8, %c8], strides = [%c8, %c1] : !pto.tensor_view<?x?xf32>
    %p = pto.partition_view %v, offsets = [%c0, %c0], sizes = [%c8, %c8] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<8x8xf32>
    %t = pto.alloc_tile : {T8}
    pto.tload ins(%p : !pto.partition_tensor_view<8x8xf32>) outs(%t : {T8})
    call @neg(%t) : ({T8}) -> ()
    pto.tstore ins(%t : {T8}) outs(%p : !pto.partition_tensor_view<8x8xf32>)
    return
  }}
}}
"""
    roundtrip(text)
    x = rand((8, 8), np.float32, 9)
    np.testing.assert_array_equal(asm.run(text, {"x": x})["x"], -x)


def test_memref_reinterpret_cast_views_the_buffer_at_an_offset():
    text = """func.func @k(%dst: memref<64xi32, #pto.address_space<gm>>) {
  %c0_i32 = arith.constant 3 : i32
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %v = memref.reinterpret_cast %dst to offset: [%c32], sizes: [%c1, %c16], strides: [%c16, %c1] : memref<64xi32, #pto.address_space<gm>> to memref<1x16xi32, strided<[16, 1], offset: ?>, #pto.address_space<gm>>
  %t = pto.alloc_tile : !pto.tile_buf<loc=vec, dtype=i32, rows=1, cols=16, v_row=1, v_col=16, blayout=row_major, slayout=none_box, fractal=512, pad=0>
  pto.tci ins(%c0_i32 : i32) outs(%t : !pto.tile_buf<loc=vec, dtype=i32, rows=1, cols=16, v_row=1, v_col=16, blayout=row_major, slayout=none_box, fractal=512, pad=0>)
  pto.tstore ins(%t : !pto.tile_buf<loc=vec, dtype=i32, rows=1, cols=16, v_row=1, v_col=16, blayout=row_major, slayout=none_box, fractal=512, pad=0>) outs(%v : memref<1x16xi32, strided<[16, 1], offset: ?>, #pto.address_space<gm>>)
  return
}
"""
    roundtrip(text)
    buf = np.full(64, -1, np.int32)
    got = asm.run(text, {"dst": buf})["dst"]
    want = buf.copy()
    want[32:48] = 3 + np.arange(16)
    np.testing.assert_array_equal(got, want)


def test_interleaved_ins_types_parse_and_unsimulated_store_forms_raise():
    """``ins(%t : T, %pre : i64)`` parses; a pre-quantised or relu store raises
    NotImplementedError instead of storing plain values."""
    T8 = tb("f32", 8, 8)
    for extra, attrs, match in (
            (f", %pre : i64", "", "pre-quantisation"),
            ("", " {atomicType = #pto<atomic_type atomic_add>, reluPreMode = "
                 "#pto<relu_pre_mode normal_relu>}", "reluPreMode"),
            ("", " {reluPreMode = #pto<relu_pre_mode normal_relu>}", "reluPreMode")):
        text = f"""func.func @k(%x: !pto.ptr<f32>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %pre = arith.constant 7 : i64
  %v = pto.make_tensor_view %x, shape = [%c8, %c8], strides = [%c8, %c1] : !pto.tensor_view<?x?xf32>
  %p = pto.partition_view %v, offsets = [%c0, %c0], sizes = [%c8, %c8] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<8x8xf32>
  %t = pto.alloc_tile : {T8}
  pto.tstore ins(%t : {T8}{extra}) outs(%p : !pto.partition_tensor_view<8x8xf32>){attrs}
  return
}}
"""
        m = asm.parse(text)
        assert asm.parse(asm.format(m)) == m
        with pytest.raises(NotImplementedError, match=match):
            asm.run(text, {"x": np.zeros((8, 8), np.float32)})


def test_tprint_api_format(capsys):
    t = P.Tile(P.TileType.Vec, "float32", 2, 8, valid_row=2, valid_col=3)
    t.data[...] = np.arange(16, dtype=np.float32).reshape(2, 8) / 4
    P.TPRINT(t)
    i = P.Tile(P.TileType.Vec, "int8", 1, 32, valid_row=1, valid_col=2)
    i.data[0, :2] = [-5, 7]
    P.TPRINT(i, format=P.PrintFormat.Width10_Precision6)
    assert capsys.readouterr().out == (
        "TPRINT 2x3\n  0.0000   0.2500   0.5000\n  2.0000   2.2500   2.5000\n"
        "TPRINT 1x2\n        -5          7\n")
    with pytest.raises(ConstraintError, match="TPRINT: src must be a Tile"):
        P.TPRINT(np.zeros(3))


def test_tprint_in_a_program(capsys):
    T8 = tb("f32", 8, 8, 1, 2)
    text = f"""func.func @k() {{
  %t = pto.alloc_tile : {T8}
  %one = arith.constant 1.5 : f32
  pto.texpands ins(%one : f32) outs(%t : {T8})
  pto.tprint ins(%t : {T8})
  return
}}
"""
    roundtrip(text)
    asm.run(text, {})
    assert capsys.readouterr().out == "TPRINT 1x2\n  1.5000   1.5000\n"


def test_taxpy_widening_float16_source_into_float32():
    """TAXPY dst float32, src0 float16 (docs/isa/TAXPY.md "diff path"): src0 and the
    scalar widen exactly, then dst + src0 * scalar in float32, the product rounded first."""
    rng = np.random.default_rng(10)
    d0 = rng.standard_normal((8, 16)).astype(np.float32)
    s0 = rng.standard_normal((8, 16)).astype(np.float16)
    dst = P.Tile(P.TileType.Vec, "float32", 8, 16, valid_row=8, valid_col=12)
    src = P.Tile(P.TileType.Vec, "float16", 8, 16, valid_row=8, valid_col=12)
    dst.data[...] = d0
    src.data[...] = s0
    P.TAXPY(dst, src, 0.3)
    a = np.float32(np.float16(0.3))
    want = d0.copy()
    want[:, :12] = d0[:, :12] + (s0[:, :12].astype(np.float32) * a)
    np.testing.assert_array_equal(dst.data.view(np.uint32), want.view(np.uint32))
    bad = P.Tile(P.TileType.Vec, "float16", 8, 16, valid_row=8, valid_col=8)
    with pytest.raises(ConstraintError, match="TAXPY"):
        P.TAXPY(dst, bad, 0.3)
    with pytest.raises(ConstraintError, match="TAXPY"):
        P.TAXPY(src, dst, 0.3)          # float16 dst with a float32 source stays illegal


def test_pointer_cast_buffers_alias_at_their_address():
    """The older PTOAS's ``pto.pointer_cast(%addr) : memref<N x T, ub>``: a 1-D on-chip
    buffer takes the shape of the 2-D view moved through it, and two casts of one address
    are the same memory (the and result written over its first operand)."""
    G = "memref<8x16xi32, #pto.address_space<gm>>"
    U = "memref<128xi32, #pto.address_space<ub>>"
    text = f"""func.func @k(%a: {G}, %b: {G}, %c: {G}, %d: {G}) {{
  %c0_i64 = arith.constant 0 : i64
  %c512_i64 = arith.constant 512 : i64
  %x = pto.pointer_cast(%c0_i64) : {U}
  %y = pto.pointer_cast(%c512_i64) : {U}
  %z = pto.pointer_cast(%c0_i64) : {U}
  pto.tload ins(%a : {G}) outs(%x : {U})
  pto.tload ins(%b : {G}) outs(%y : {U})
  pto.tand ins(%x, %y : {U}, {U}) outs(%z : {U})
  pto.store_dps ins(%z : {U}) outs(%c : {G})
  pto.store_dps ins(%x : {U}) outs(%d : {G})
  return
}}
"""
    roundtrip(text)
    rng = np.random.default_rng(11)
    a = rng.integers(0, 1 << 20, (8, 16)).astype(np.int32)
    b = rng.integers(0, 1 << 20, (8, 16)).astype(np.int32)
    out = asm.run(text, {"a": a, "b": b})
    np.testing.assert_array_equal(out["c"].reshape(8, 16), a & b)
    np.testing.assert_array_equal(out["d"].reshape(8, 16), a & b)   # %x is %z's memory


def test_older_pipe_push_pop_between_cube_and_vector():
    T = tb("f32", 8, 16)
    text = f"""module {{
  func.func @cube(%x: !pto.ptr<f32>) attributes {{pto.kernel_kind = #pto.kernel_kind<cube>}} {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %c16 = arith.constant 16 : index
    %c0_i32 = arith.constant 0 : i32
    %pipe = pto.initialize_l2l_pipe {{dir_mask = 1, slot_size = 1024, slot_num = 8, flag_base = 0}}(%c0_i32 : i32) -> !pto.pipe
    %v = pto.make_tensor_view %x, shape = [%c8, %c16], strides = [%c16, %c1] : !pto.tensor_view<?x?xf32>
    %p = pto.partition_view %v, offsets = [%c0, %c0], sizes = [%c8, %c16] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<8x16xf32>
    %t = pto.alloc_tile : {T}
    pto.tload ins(%p : !pto.partition_tensor_view<8x16xf32>) outs(%t : {T})
    pto.tpush(%t, %pipe : {T}, !pto.pipe) {{split = 0}}
    return
  }}
  func.func @vec(%y: !pto.ptr<f32>) attributes {{pto.kernel_kind = #pto.kernel_kind<vector>}} {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %c16 = arith.constant 16 : index
    %c0_i32 = arith.constant 0 : i32
    %pipe = pto.initialize_l2l_pipe {{dir_mask = 1, slot_size = 1024, slot_num = 8, flag_base = 0}}(%c0_i32 : i32) -> !pto.pipe
    %v = pto.make_tensor_view %y, shape = [%c8, %c16], strides = [%c16, %c1] : !pto.tensor_view<?x?xf32>
    %p = pto.partition_view %v, offsets = [%c0, %c0], sizes = [%c8, %c16] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<8x16xf32>
    %t = pto.alloc_tile : {T}
    pto.tpop(%t, %pipe : {T}, !pto.pipe) {{split = 0}}
    pto.tneg ins(%t : {T}) outs(%t : {T})
    pto.tstore ins(%t : {T}) outs(%p : !pto.partition_tensor_view<8x16xf32>)
    pto.tfree(%pipe : !pto.pipe) {{split = 0}}
    return
  }}
  func.func @main(%x: !pto.ptr<f32>, %y: !pto.ptr<f32>) attributes {{pto.entry}} {{
    func.call @cube(%x) : (!pto.ptr<f32>) -> ()
    func.call @vec(%y) : (!pto.ptr<f32>) -> ()
    return
  }}
}}
"""
    roundtrip(text)
    x = rand((8, 16), np.float32, 12)
    np.testing.assert_array_equal(asm.run(text, {"x": x})["y"], -x)


RESERVE = """    %buf = pto.reserve_buffer {{
      name = "fifo",
      size = 4096,
      location = #pto.address_space<vec>,
      auto = {auto}{base}
    }} -> i32
"""


def _line_of(text, needle):
    return next(k for k, ln in enumerate(text.split("\n"), 1) if needle in ln)


def test_verify_reserve_buffer_auto_false_needs_level3():
    text = ("module {\n  func.func @k() {\n" + RESERVE.format(auto="false", base=",\n      base = 0")
            + "    return\n  }\n}\n")
    with pytest.raises(AsmSyntaxError, match=r"auto = false\) is not supported in "
                                             r"PlanMemory") as ei:
        asm.parse(text)
    assert (ei.value.line, ei.value.column) == (_line_of(text, "pto.reserve_buffer"), 5)
    asm.parse(text, level="level3")                         # accepted at level3
    asm.parse(text.replace("auto = false", "auto = true"))   # and with auto = true


def test_verify_pipe_init_flag_base_or_reserved_address():
    text = """module {
  func.func @k(%a: i32) attributes {pto.kernel_kind = #pto.kernel_kind<cube>} {
    %pipe = pto.initialize_l2l_pipe {dir_mask = 1, slot_size = 1024, slot_num = 8}(%a : i32) -> !pto.pipe
    return
  }
}
"""
    with pytest.raises(AsmSyntaxError, match="requires local_addr to come from "
                                             "pto.reserve_buffer") as ei:
        asm.parse(text)
    assert (ei.value.line, ei.value.column) == (3, 5)
    asm.parse(text.replace("slot_num = 8}", "slot_num = 8, flag_base = 0}"))


def test_verify_reserved_pipe_needs_a_peer_init_pair():
    cube = """  func.func @cube() attributes {pto.kernel_kind = #pto.kernel_kind<cube>} {
""" + RESERVE.format(auto="true", base="") + """    %pipe = pto.initialize_l2l_pipe {dir_mask = 1, slot_size = 1024, slot_num = 8}(%buf : i32) -> !pto.pipe
    return
  }
"""
    vec = """  func.func @vec() attributes {pto.kernel_kind = #pto.kernel_kind<vector>} {
    %imp = pto.import_reserved_buffer {name = "fifo", peer_func = @cube} -> i32
%INIT    return
  }
"""
    init = ("    %pipe = pto.initialize_l2l_pipe {dir_mask = 1, slot_size = 1024, "
            "slot_num = 8}(%imp : i32) -> !pto.pipe\n")
    bad = "module {\n" + cube + vec.replace("%INIT", "") + "}\n"
    with pytest.raises(AsmSyntaxError, match="requires a complete compatible peer init pair") as ei:
        asm.parse(bad)
    assert ei.value.line == _line_of(bad, "initialize_l2l_pipe")
    asm.parse("module {\n" + cube + vec.replace("%INIT", init) + "}\n")


def test_subset_is_a_view_of_the_source_tile():
    T = tb("f32", 8, 16)
    text = f"""func.func @k(%x: !pto.ptr<f32>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %v = pto.make_tensor_view %x, shape = [%c8, %c16], strides = [%c16, %c1] : !pto.tensor_view<?x?xf32>
  %p = pto.partition_view %v, offsets = [%c0, %c0], sizes = [%c8, %c16] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<8x16xf32>
  %t = pto.alloc_tile : {T}
  pto.tload ins(%p : !pto.partition_tensor_view<8x16xf32>) outs(%t : {T})
  %s = pto.subset %t[%c2, %c8] sizes [4, 8] : {T}
  pto.tneg ins(%s : {T}) outs(%s : {T})
  pto.tstore ins(%t : {T}) outs(%p : !pto.partition_tensor_view<8x16xf32>)
  return
}}
"""
    roundtrip(text)
    x = rand((8, 16), np.float32, 13)
    want = x.copy()
    want[2:6, 8:16] *= -1
    np.testing.assert_array_equal(asm.run(text, {"x": x})["x"], want)
    bad = text.replace("sizes [4, 8]", "sizes [4, 9]")
    from fastisa.errors import AccessError
    with pytest.raises(AccessError, match="leave the 8x16 source tile") as ei:
        asm.run(bad, {"x": x})
    assert ei.value.line == _line_of(bad, "pto.subset")


def test_async_put_get_copy_between_global_views():
    G = "memref<64xf32, #pto.address_space<gm>>"
    text = f"""func.func @k(%dst: {G}, %src: {G}, %ws: memref<1024xi8, #pto.address_space<gm>>) {{
  %scratch = pto.alloc_tile : {tb("i8", 1, 256)}
  %session = pto.build_async_session(%scratch, %ws : {tb("i8", 1, 256)}, memref<1024xi8, #pto.address_space<gm>>) -> !pto.async_session
  %put = pto.tput_async(%dst, %src, %session : {G}, {G}, !pto.async_session) -> !pto.async_event
  %done = pto.wait_async_event(%put, %session : !pto.async_event, !pto.async_session) -> i1
  return
}}
"""
    roundtrip(text)
    src = rand(64, np.float32, 14)
    out = asm.run(text, {"src": src, "dst": np.zeros(64, np.float32),
                         "ws": np.zeros(1024, np.int8)})
    np.testing.assert_array_equal(out["dst"], src)


@pytest.mark.parametrize("sdt", ["int8", "int16"])
@pytest.mark.parametrize("pcols", [1, 8])
def test_tdequant_bit_exact(sdt, pcols):
    from reference import ptox_dequant
    rng = np.random.default_rng(15)
    info = np.iinfo(sdt)
    cols = 32
    R, C = 16, 24                       # a valid region smaller than the tile
    src = P.Tile(P.TileType.Vec, sdt, 16, cols, valid_row=R, valid_col=C)
    dst = P.Tile(P.TileType.Vec, "float32", 16, cols, valid_row=R, valid_col=C)
    scale = P.Tile(P.TileType.Vec, "float32", 16, 8, valid_row=R, valid_col=pcols)
    offset = P.Tile(P.TileType.Vec, "float32", 16, 8, valid_row=R, valid_col=pcols)
    src.data[...] = rng.integers(info.min, info.max + 1, (16, cols))
    scale.data[...] = rng.standard_normal((16, 8)).astype(np.float32) / 7
    offset.data[...] = (rng.standard_normal((16, 8)) * 50).astype(np.float32)
    before = rng.standard_normal((16, cols)).astype(np.float32)
    dst.data[...] = before
    P.TDEQUANT(dst, src, scale, offset)
    want = before.copy()
    want[:R, :C] = ptox_dequant(src.valid, scale.valid, offset.valid)
    np.testing.assert_array_equal(dst.data.view(np.uint32), want.view(np.uint32))


def test_tdequant_errors():
    dst = P.Tile(P.TileType.Vec, "float32", 16, 16)
    src = P.Tile(P.TileType.Vec, "int8", 16, 32, valid_row=16, valid_col=16)
    par = P.Tile(P.TileType.Vec, "float32", 16, 8, valid_row=16, valid_col=1)
    short = P.Tile(P.TileType.Vec, "float32", 16, 8, valid_row=8, valid_col=1)
    with pytest.raises(ConstraintError, match="TDEQUANT: scale.validRow"):
        P.TDEQUANT(dst, src, short, par)
    with pytest.raises(ConstraintError, match="TDEQUANT: src"):
        P.TDEQUANT(dst, P.Tile(P.TileType.Vec, "float32", 16, 16), par, par)
    before = dst.data.copy()
    with pytest.raises(ConstraintError):
        P.TDEQUANT(dst, src, par, short)
    np.testing.assert_array_equal(dst.data, before)


def test_tdequant_in_a_program():
    M = "memref<16x32x{}, #pto.address_space<vec>>"
    S = "memref<16x8xf32, #pto.address_space<vec>>"
    text = f"""func.func @k() {{
  %src = memref.alloc() : {M.format('i8')}
  %scale = memref.alloc() : {S}
  %offset = memref.alloc() : {S}
  %dst = memref.alloc() : {M.format('f32')}
  %one = arith.constant 1.5 : f32
  %two = arith.constant 2.0 : f32
  %q = arith.constant 7 : i8
  pto.texpands ins(%q : i8) outs(%src : {M.format('i8')})
  pto.texpands ins(%one : f32) outs(%scale : {S})
  pto.texpands ins(%two : f32) outs(%offset : {S})
  pto.tdequant ins(%src, %scale, %offset : {M.format('i8')}, {S}, {S}) outs(%dst : {M.format('f32')})
  pto.tprint ins(%dst : {M.format('f32')})
  return
}}
"""
    roundtrip(text)
    import contextlib
    import io
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        asm.run(text, {})
    from reference import pto_tprint_text
    assert buf.getvalue() == pto_tprint_text(np.full((16, 32), 7.5, np.float32))


T816 = tb("f32", 8, 16)


@pytest.mark.parametrize("body, api", [
    (f"%s = arith.constant 2.5 : f32\n    pto.taddsc ins(%t_a, %s, %t_b : {T816}, f32, {T816}) "
     f"outs(%t_d : {T816})", lambda d, a, b, m: P.TADDSC(d, a, np.float32(2.5), b)),
    (f"%s = arith.constant 2.5 : f32\n    pto.tsubsc ins(%t_a, %s, %t_b : {T816}, f32, {T816}) "
     f"outs(%t_d : {T816})", lambda d, a, b, m: P.TSUBSC(d, a, np.float32(2.5), b)),
    (f"%s = arith.constant -1.0 : f32\n    pto.tsels ins(%t_m, %t_a, %t_b, %s : "
     f"{tb('ui8', 8, 32)}, {T816}, {T816}, f32) outs(%t_d : {T816})",
     lambda d, a, b, m: P.TSELS(d, m, a, b, np.float32(-1))),
    (f"%e = pto.alloc_tile : {T816}\n    pto.tinterleave ins(%t_b, %t_a : {T816}, {T816}) "
     f"outs(%e, %t_d : {T816}, {T816})",
     lambda d, a, b, m: P.TINTERLEAVE(P.Tile(P.TileType.Vec, "float32", 8, 16), d, b, a)),
    (f"%e = pto.alloc_tile : {T816}\n    pto.tdeinterleave ins(%t_b, %t_a : {T816}, {T816}) "
     f"outs(%t_d, %e : {T816}, {T816})",
     lambda d, a, b, m: P.TDEINTERLEAVE(d, P.Tile(P.TileType.Vec, "float32", 8, 16), b, a)),
], ids=["taddsc", "tsubsc", "tsels", "tinterleave", "tdeinterleave"])
def test_registered_instruction_forms_match_the_api(body, api):
    a, b = rand((8, 16), np.float32, 16), rand((8, 16), np.float32, 17)
    m = np.random.default_rng(18).integers(0, 256, (8, 32)).astype(np.uint8)
    ins = [("a", "f32", 8, 16), ("b", "f32", 8, 16), ("m", "ui8", 8, 32)]
    out = ("d", "f32", 8, 16)
    text = program(ins, out, "    " + body)
    roundtrip(text)
    got = asm.run(text, {"a": a, "b": b, "m": m})["out"].reshape(8, 16)
    ta, tb_, tm, td = api_tiles(ins + [out], [a, b, m, None])
    api(td, ta, tb_, tm)
    np.testing.assert_array_equal(got.view(np.uint32), td.data.view(np.uint32))


def test_textract_then_tinsert_index_operands():
    """A5 vec->vec: extract a[2:6, 8:16] into a 4x8 tile, insert it into b at (1, 4)."""
    W = tb("f32", 8, 16, 4, 8)
    body = (f"    %r = arith.constant 2 : index\n    %c = arith.constant 8 : index\n"
            f"    %r1 = arith.constant 1 : index\n    %c4 = arith.constant 4 : index\n"
            f"    %w = pto.alloc_tile : {W}\n"
            f"    pto.textract ins(%t_a, %r, %c : {T816}, index, index) outs(%w : {W})\n"
            f"    pto.tmov ins(%t_b : {T816}) outs(%t_d : {T816})\n"
            f"    pto.tinsert ins(%w, %r1, %c4 : {W}, index, index) outs(%t_d : {T816})")
    text = program(F8[:0] + (("a", "f32", 8, 16), ("b", "f32", 8, 16)), ("d", "f32", 8, 16),
                   body)
    asm.parse(text, arch="a5")
    a, b = rand((8, 16), np.float32, 19), rand((8, 16), np.float32, 20)
    got = asm.run(text, {"a": a, "b": b}, arch="a5")["out"].reshape(8, 16)
    want = b.copy()
    want[1:5, 4:12] = a[2:6, 8:16]
    np.testing.assert_array_equal(got, want)


def test_result_changing_attributes_without_a_mapping_raise():
    T = tb("f32", 8, 16)
    R = tb("f32", 8, 16, 1, 16)
    for attrs, match in (("{isBinary = true}", "isBinary"), ("{isBinary = false}", None)):
        body = f"    pto.tcolsum ins(%t_a : {T}) outs(%t_d : {R}) {attrs}"
        text = program([("a", "f32", 8, 16)], ("d", "f32", 8, 16), body)
        text = text.replace(f"%t_d = pto.alloc_tile : {T}", f"%t_d = pto.alloc_tile : {R}")
        text = text.replace(f"pto.tstore ins(%t_d : {T})", f"pto.tstore ins(%t_d : {R})")
        text = text.replace("sizes = [%r_d, %k_d]", "sizes = [%c1, %k_d]").replace(
            "!pto.partition_tensor_view<8x16xf32>)\n    return",
            "!pto.partition_tensor_view<1x16xf32>)\n    return").replace(
            "-> !pto.partition_tensor_view<8x16xf32>\n    %t_d",
            "-> !pto.partition_tensor_view<1x16xf32>\n    %t_d")
        a = rand((8, 16), np.float32, 21)
        if match:
            with pytest.raises(NotImplementedError, match=match):
                asm.run(text, {"a": a})
        else:
            got = asm.run(text, {"a": a})["out"].reshape(8, 16)
            ta = P.Tile(P.TileType.Vec, "float32", 8, 16)
            ta.data[...] = a
            td = P.Tile(P.TileType.Vec, "float32", 8, 16, valid_row=1, valid_col=16)
            P.TCOLSUM(td, ta)
            np.testing.assert_array_equal(got[0].view(np.uint32), td.data[0].view(np.uint32))


def test_tprefetch_reads_the_global_view_into_the_tile():
    T = tb("f32", 8, 16)
    text = f"""func.func @k(%x: !pto.ptr<f32>, %y: !pto.ptr<f32>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %vx = pto.make_tensor_view %x, shape = [%c8, %c16], strides = [%c16, %c1] : !pto.tensor_view<?x?xf32>
  %px = pto.partition_view %vx, offsets = [%c0, %c0], sizes = [%c8, %c16] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<8x16xf32>
  %vy = pto.make_tensor_view %y, shape = [%c8, %c16], strides = [%c16, %c1] : !pto.tensor_view<?x?xf32>
  %py = pto.partition_view %vy, offsets = [%c0, %c0], sizes = [%c8, %c16] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<8x16xf32>
  %t = pto.alloc_tile : {T}
  pto.tprefetch ins(%px : !pto.partition_tensor_view<8x16xf32>) outs(%t : {T})
  pto.tstore ins(%t : {T}) outs(%py : !pto.partition_tensor_view<8x16xf32>)
  return
}}
"""
    roundtrip(text)
    x = rand((8, 16), np.float32, 22)
    np.testing.assert_array_equal(asm.run(text, {"x": x})["y"], x)


def test_mgather_and_mscatter_through_global_views():
    """pto.mgather ins(%mem, %idx) outs(%dst) and pto.mscatter ins(%src, %idx) outs(%mem):
    the views reach MGATHER/MSCATTER as GlobalTensors; the results equal the API's."""
    T = tb("f32", 8, 16)
    I = tb("i32", 8, 16)
    G = "!pto.partition_tensor_view<8x16xf32>"
    GI = "!pto.partition_tensor_view<8x16xi32>"
    text = f"""func.func @k(%x: !pto.ptr<f32>, %i: !pto.ptr<i32>, %y: !pto.ptr<f32>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %vx = pto.make_tensor_view %x, shape = [%c8, %c16], strides = [%c16, %c1] : !pto.tensor_view<?x?xf32>
  %px = pto.partition_view %vx, offsets = [%c0, %c0], sizes = [%c8, %c16] : !pto.tensor_view<?x?xf32> -> {G}
  %vi = pto.make_tensor_view %i, shape = [%c8, %c16], strides = [%c16, %c1] : !pto.tensor_view<?x?xi32>
  %pi = pto.partition_view %vi, offsets = [%c0, %c0], sizes = [%c8, %c16] : !pto.tensor_view<?x?xi32> -> {GI}
  %vy = pto.make_tensor_view %y, shape = [%c8, %c16], strides = [%c16, %c1] : !pto.tensor_view<?x?xf32>
  %py = pto.partition_view %vy, offsets = [%c0, %c0], sizes = [%c8, %c16] : !pto.tensor_view<?x?xf32> -> {G}
  %ti = pto.alloc_tile : {I}
  %t = pto.alloc_tile : {T}
  pto.tload ins(%pi : {GI}) outs(%ti : {I})
  pto.mgather ins(%px, %ti : {G}, {I}) outs(%t : {T}) {{coalesce = #pto<coalesce elem>}}
  pto.tneg ins(%t : {T}) outs(%t : {T})
  pto.mscatter ins(%t, %ti : {T}, {I}) outs(%py : {G})
  return
}}
"""
    roundtrip(text)
    rng = np.random.default_rng(23)
    x = rand((8, 16), np.float32, 24)
    idx = rng.permutation(128).astype(np.int32).reshape(8, 16)
    y = asm.run(text, {"x": x, "i": idx, "y": np.zeros((8, 16), np.float32)})["y"]
    want = np.zeros(128, np.float32)
    want[idx.reshape(-1)] = -x.reshape(-1)[idx.reshape(-1)]
    np.testing.assert_array_equal(y.reshape(-1), want)


@pytest.mark.parametrize("dt", ["f32", "f16", "i32"])
def test_tstore_atomic_add_accumulates_into_global_memory(dt):
    T = tb(dt, 8, 16)
    G = f"!pto.partition_tensor_view<8x16x{dt}>"
    text = f"""func.func @k(%x: !pto.ptr<{dt}>, %y: !pto.ptr<{dt}>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %vx = pto.make_tensor_view %x, shape = [%c8, %c16], strides = [%c16, %c1] : !pto.tensor_view<?x?x{dt}>
  %px = pto.partition_view %vx, offsets = [%c0, %c0], sizes = [%c8, %c16] : !pto.tensor_view<?x?x{dt}> -> {G}
  %vy = pto.make_tensor_view %y, shape = [%c8, %c16], strides = [%c16, %c1] : !pto.tensor_view<?x?x{dt}>
  %py = pto.partition_view %vy, offsets = [%c0, %c0], sizes = [%c8, %c16] : !pto.tensor_view<?x?x{dt}> -> {G}
  %t = pto.alloc_tile : {T}
  pto.tload ins(%px : {G}) outs(%t : {T})
  pto.tstore ins(%t : {T}) outs(%py : {G}) {{atomicType = #pto<atomic_type atomic_add>}}
  pto.tstore ins(%t : {T}) outs(%py : {G}) {{atomicType = #pto<atomic_type atomic_add>}}
  return
}}
"""
    roundtrip(text)
    npdt = _NP[dt]
    rng = np.random.default_rng(25)
    x = (rng.standard_normal((8, 16)) * 100).astype(npdt)
    y0 = (rng.standard_normal((8, 16)) * 100).astype(npdt)
    got = asm.run(text, {"x": x, "y": y0})["y"]
    want = (y0 + x) + x                    # each sum rounded to the dtype
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))
    assert not np.array_equal(got, x)      # not a plain store


def test_fastisa_spellings_of_pairreducesum_and_adddeqrelu():
    a = rand((8, 16), np.float32, 26)
    body = f"    pto.tpairreducesum ins(%t_a : {T816}) outs(%t_d : {T816})"
    text = program([("a", "f32", 8, 16)], ("d", "f32", 8, 16), body)
    roundtrip(text)
    got = asm.run(text, {"a": a})["out"].reshape(8, 16)
    ta, td = api_tiles([("a", "f32", 8, 16), ("d", "f32", 8, 16)], [a, None])
    P.TPAIRREDUCESUM(td, ta)
    np.testing.assert_array_equal(got.view(np.uint32), td.data.view(np.uint32))

    I = tb("i32", 8, 16)
    H = tb("f16", 8, 16)
    x = np.random.default_rng(27).integers(-1 << 20, 1 << 20, (8, 16)).astype(np.int32)
    y = np.random.default_rng(28).integers(-1 << 20, 1 << 20, (8, 16)).astype(np.int32)
    body = (f"    %s = arith.constant 0.001 : f32\n"
            f"    pto.tadddeqrelu ins(%t_x, %t_y, %s : {I}, {I}, f32) outs(%t_d : {H})")
    ins = [("x", "i32", 8, 16), ("y", "i32", 8, 16)]
    text = program(ins, ("d", "f16", 8, 16), body)
    roundtrip(text)
    got = asm.run(text, {"x": x, "y": y})["out"].reshape(8, 16)
    tx, ty, td = api_tiles(ins + [("d", "f16", 8, 16)], [x, y, None])
    P.TADDDEQRELU(td, tx, ty, np.float32(0.001))
    np.testing.assert_array_equal(got.view(np.uint16), td.data.view(np.uint16))
