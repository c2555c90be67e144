"""Running PTO-AS text: every instruction through text gives the same bits as the same call
in the Python API; inputs/outputs of ``run``; errors annotated with the line; the CLI.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastisa import cli, pto
from fastisa.errors import AccessError, AsmSyntaxError, ConstraintError, OverlapError
from fastisa.pto import asm

NP = {"f32": np.float32, "f16": np.float16, "i32": np.int32, "i16": np.int16}
LOC = {"vec": pto.TileType.Vec, "left": pto.TileType.Left, "right": pto.TileType.Right,
       "acc": pto.TileType.Acc, "mat": pto.TileType.Mat}
BL = {"row_major": pto.BLayout.RowMajor, "col_major": pto.BLayout.ColMajor}
DT = {"f32": "float32", "f16": "float16", "i32": "int32", "i16": "int16"}


class S:
    """A tile spec: dtype, physical rows x cols, valid vr x vc, blayout, loc."""

    def __init__(self, dtype, rows, cols, vr=None, vc=None, blayout="row_major", loc="vec"):
        self.dtype, self.rows, self.cols = dtype, rows, cols
        self.vr = rows if vr is None else vr
        self.vc = cols if vc is None else vc
        self.blayout, self.loc = blayout, loc

    def text(self, form="compact"):
        if form == "legacy":
            return (f"!pto.tile_buf<loc={self.loc}, dtype={self.dtype}, rows={self.rows}, "
                    f"cols={self.cols}, v_row={self.vr}, v_col={self.vc}, "
                    f"blayout={self.blayout}, slayout=none_box, fractal=512, pad=0>")
        s = f"!pto.tile_buf<{self.loc}, {self.rows}x{self.cols}x{self.dtype}"
        if (self.vr, self.vc) != (self.rows, self.cols):
            s += f", valid={self.vr}x{self.vc}"
        if self.blayout != "row_major":
            s += f", blayout={self.blayout}"
        return s + ">"

    def tile(self):
        return pto.Tile(LOC[self.loc], DT[self.dtype], self.rows, self.cols,
                        blayout=BL[self.blayout], valid_row=self.vr, valid_col=self.vc)


class Sc:
    """A scalar operand: MLIR type and value."""

    def __init__(self, type_, value):
        self.type, self.value = type_, value

    def py(self):
        return NP[self.type](self.value)


def _data(spec, rng, positive=False):
    shape = (spec.vr, spec.vc)
    if spec.dtype.startswith("i"):
        x = rng.integers(1, 10, size=shape) * rng.choice([-1, 1], size=shape)
        if positive:
            x = np.abs(x)
        return x.astype(NP[spec.dtype])
    x = rng.standard_normal(shape) * 2
    if positive:
        x = np.abs(x) + 0.05
    return x.astype(NP[spec.dtype])


def program(op, ins, out, *, form="compact", op_attrs="", operand_attrs="", const_scalars=False):
    """PTO-AS text: tload every tile input, run ``op`` in DPS form, tstore dst to %out."""
    args, body = [], []
    consts = set()

    def c(n):
        consts.add(n)
        return f"%c{n}"

    operands, types = [], []
    for i, x in enumerate(ins):
        if isinstance(x, Sc):
            if const_scalars:
                body.append(f"%s{i} = arith.constant {x.value!r} : {x.type}")
            else:
                args.append(f"%s{i}: {x.type}")
            operands.append(f"%s{i}")
            types.append(x.type)
            continue
        args.append(f"%in{i}: !pto.ptr<{x.dtype}>")
        body += [
            f"%tv{i} = pto.make_tensor_view %in{i}, shape = [{c(x.vr)}, {c(x.vc)}], strides = "
            f"[{c(x.vc)}, {c(1)}] : !pto.tensor_view<?x?x{x.dtype}>",
            f"%pv{i} = pto.partition_view %tv{i}, offsets = [{c(0)}, {c(0)}], sizes = "
            f"[{c(x.vr)}, {c(x.vc)}] : !pto.tensor_view<?x?x{x.dtype}> -> "
            f"!pto.partition_tensor_view<{x.vr}x{x.vc}x{x.dtype}>",
            f"%t{i} = pto.alloc_tile : {x.text(form)}",
            f"pto.tload ins(%pv{i} : !pto.partition_tensor_view<{x.vr}x{x.vc}x{x.dtype}>) "
            f"outs(%t{i} : {x.text(form)})",
        ]
        operands.append(f"%t{i}" + (operand_attrs if i == 0 else ""))
        types.append(x.text(form))
    args.append(f"%out: !pto.ptr<{out.dtype}>")
    body += [
        f"%d = pto.alloc_tile : {out.text(form)}",
        f"pto.{op} ins({', '.join(operands)} : {', '.join(types)}) outs(%d : {out.text(form)})"
        + (f" {op_attrs}" if op_attrs else ""),
        f"%tvo = pto.make_tensor_view %out, shape = [{c(out.vr)}, {c(out.vc)}], strides = "
        f"[{c(out.vc)}, {c(1)}] : !pto.tensor_view<?x?x{out.dtype}>",
        f"%pvo = pto.partition_view %tvo, offsets = [{c(0)}, {c(0)}], sizes = "
        f"[{c(out.vr)}, {c(out.vc)}] : !pto.tensor_view<?x?x{out.dtype}> -> "
        f"!pto.partition_tensor_view<{out.vr}x{out.vc}x{out.dtype}>",
        f"pto.tstore ins(%d : {out.text(form)}) outs(%pvo : "
        f"!pto.partition_tensor_view<{out.vr}x{out.vc}x{out.dtype}>)",
        "return",
    ]
    head = [f"%c{n} = arith.constant {n} : index" for n in sorted(consts)]
    return (f"func.func @k({', '.join(args)}) {{\n" + "".join(f"  {ln}\n" for ln in head + body)
            + "}\n")


def run_both(op, ins, out, *, seed=0, positive=False, api_args=(), api_kwargs=None, **kw):
    """(text result, API result) for ``op`` on the same random inputs."""
    rng = np.random.default_rng(seed)
    data = [None if isinstance(x, Sc) else _data(x, rng, positive) for x in ins]
    inputs = {}
    for i, (x, d) in enumerate(zip(ins, data)):
        if isinstance(x, Sc):
            if not kw.get("const_scalars"):
                inputs[f"s{i}"] = x.value
        else:
            inputs[f"in{i}"] = d
    got = asm.run(program(op, ins, out, **kw), inputs)["out"]
    # the same thing in the Python API
    tiles = []
    for x, d in zip(ins, data):
        if isinstance(x, Sc):
            tiles.append(x.py())
        else:
            t = x.tile()
            pto.TLOAD(t, pto.GlobalTensor(d.copy()))
            tiles.append(t)
    dst = out.tile()
    getattr(pto, op.upper())(dst, *tiles, *api_args, **(api_kwargs or {}))
    return got, dst.valid.copy()


def same_bits(a, b):
    assert a.shape == b.shape and a.dtype == b.dtype
    u = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize]
    np.testing.assert_array_equal(np.ascontiguousarray(a).view(u), np.ascontiguousarray(b).view(u))


A = S("f32", 16, 32)                  # a full f32 tile
P = S("f32", 32, 16, 20, 13)          # an edge tile: valid region smaller than the tile
H = S("f16", 16, 32)
R = S("f32", 16, 1, blayout="col_major")       # per-row scalars (mode 1)
R2 = S("f32", 16, 8)                           # one 32-byte block per row (mode 2)
RH = S("f16", 16, 1, blayout="col_major")
C = S("f32", 1, 32)                            # per-column scalars

UNARY = ["tabs", "tneg", "texp", "tlog", "tsqrt", "trsqrt", "trecip", "trelu", "tmov"]
BINARY = ["tadd", "tsub", "tmul", "tdiv", "tmax", "tmin"]
SCALAR = ["tadds", "tsubs", "tmuls", "tdivs", "tmaxs", "tmins"]
ROWEXP = ["add", "sub", "mul", "div", "max", "min", "expdif"]


@pytest.mark.parametrize("spec", [A, P, H], ids=["f32", "f32-edge", "f16"])
@pytest.mark.parametrize("op", UNARY)
def test_unary(op, spec):
    same_bits(*run_both(op, [spec], spec, positive=op in ("tlog", "tsqrt", "trsqrt")))


@pytest.mark.parametrize("spec", [A, P, H], ids=["f32", "f32-edge", "f16"])
@pytest.mark.parametrize("op", BINARY)
def test_binary(op, spec):
    same_bits(*run_both(op, [spec, spec], spec))


@pytest.mark.parametrize("spec, st", [(A, "f32"), (P, "f32"), (H, "f16"),
                                      (S("i32", 8, 8), "i32")], ids=["f32", "f32-edge", "f16", "i32"])
@pytest.mark.parametrize("op", SCALAR)
def test_tile_scalar(op, spec, st):
    sc = Sc(st, 3 if st == "i32" else 1.375)
    same_bits(*run_both(op, [spec, sc], spec))


@pytest.mark.parametrize("spec, st", [(A, "f32"), (H, "f16")], ids=["f32", "f16"])
def test_tdivs_scalar_over_tile(spec, st):
    same_bits(*run_both("tdivs", [Sc(st, 3.0), spec], spec))


def test_scalar_from_arith_constant():
    same_bits(*run_both("tmuls", [A, Sc("f32", 0.1)], A, const_scalars=True))
    same_bits(*run_both("texpands", [Sc("f16", -2.5)], H, const_scalars=True))


@pytest.mark.parametrize("spec, st", [(A, "f32"), (P, "f32"), (H, "f16")])
def test_texpands(spec, st):
    same_bits(*run_both("texpands", [Sc(st, -0.7)], spec))


@pytest.mark.parametrize("tmp", [False, True])
@pytest.mark.parametrize("op", ["trowmax", "trowmin", "trowsum"])
def test_row_reductions(op, tmp):
    for src, dst in ((A, R), (H, RH), (P, S("f32", 32, 1, 20, 1, blayout="col_major"))):
        same_bits(*run_both(op, [src, src] if tmp else [src], dst))


@pytest.mark.parametrize("op", ["tcolmax", "tcolmin", "tcolsum"])
def test_col_reductions(op):
    same_bits(*run_both(op, [A], C))
    same_bits(*run_both(op, [P], S("f32", 1, 16, 1, 13)))


def test_expands():
    same_bits(*run_both("trowexpand", [R], A))
    same_bits(*run_both("tcolexpand", [C], A))


@pytest.mark.parametrize("s", ROWEXP)
def test_row_expand_ops(s):
    op = "trowexpand" + s
    same_bits(*run_both(op, [A, R], A))           # mode 1: full - s_i
    if s != "expdif":                             # EXPDIF: src1 is always the per-row one
        same_bits(*run_both(op, [R, A], A))       # operand order kept: s_i - full
    same_bits(*run_both(op, [A, R2], A))          # mode 2: 32 bytes per row
    same_bits(*run_both(op, [H, RH], H))
    same_bits(*run_both(op, [A, R, A], A))        # with tmp


@pytest.mark.parametrize("s", ROWEXP)
def test_col_expand_ops(s):
    same_bits(*run_both("tcolexpand" + s, [A, C], A))


MODES = ["NONE", "RINT", "ROUND", "FLOOR", "CEIL", "TRUNC", "ODD", "CAST_RINT"]


@pytest.mark.parametrize("mode", MODES)
def test_tcvt_modes(mode):
    enum = pto.RoundMode["CAST_" + mode if not mode.startswith("CAST_") else mode]
    attr = f"{{rmode = #pto<round_mode {mode}>}}"
    # on the operand (as PTOAS prints it) and after outs(...)
    same_bits(*run_both("tcvt", [A], H, operand_attrs=attr, api_args=(enum,)))
    same_bits(*run_both("tcvt", [A], S("i32", 16, 32), op_attrs=attr, api_args=(enum,)))
    same_bits(*run_both("tcvt", [H], A, op_attrs=attr, api_args=(enum,)))


def test_tcvt_default_mode_is_cast_rint():
    same_bits(*run_both("tcvt", [A], H, api_args=(pto.RoundMode.CAST_RINT,)))


def test_tcvt_bad_mode():
    with pytest.raises(ConstraintError, match="rmode"):
        run_both("tcvt", [A], H, op_attrs="{rmode = #pto<round_mode SIDEWAYS>}")


def test_trecip_precision_and_integers():
    hp = "{precision = #pto<recip_precision HIGH_PRECISION>}"
    same_bits(*run_both("trecip", [A], A, op_attrs=hp,
                        api_kwargs={"precision": pto.RecipAlgorithm.HIGH_PRECISION}))
    for spec in (S("i32", 8, 8), S("i16", 16, 16)):
        same_bits(*run_both("trecip", [spec], spec))


def test_ttrans_and_tmov():
    same_bits(*run_both("ttrans", [S("f32", 16, 8)], S("f32", 8, 16)))
    same_bits(*run_both("ttrans", [S("f32", 16, 8), S("f32", 16, 8)], S("f32", 8, 16)))
    same_bits(*run_both("tmov", [A], S("f32", 16, 32, blayout="col_major")))


def test_tmatmul():
    a = S("f16", 16, 32, loc="left")
    b = S("f16", 32, 16, loc="right")
    same_bits(*run_both("tmatmul", [a, b], S("f32", 16, 16, loc="acc")))
    a = S("f32", 16, 8, loc="left")
    b = S("f32", 8, 16, loc="right")
    same_bits(*run_both("tmatmul", [a, b], S("f32", 16, 16, loc="acc")))


def test_legacy_type_form_runs_the_same():
    same_bits(*run_both("trowexpandexpdif", [A, R], A, form="legacy"))


# ---- SSA form ----------------------------------------------------------------------------

def _ssa_program(line, out_type):
    return f"""\
func.func @k(%x: !pto.ptr<f32>, %m: !pto.ptr<f32>, %out: !pto.ptr<f32>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %tx = pto.make_tensor_view %x, shape = [%c16, %c32], strides = [%c32, %c1] : !pto.tensor_view<?x?xf32>
  %tm = pto.make_tensor_view %m, shape = [%c16, %c1], strides = [%c1, %c1] : !pto.tensor_view<?x?xf32>
  %to = pto.make_tensor_view %out, shape = [%c16, %c32], strides = [%c32, %c1] : !pto.tensor_view<?x?xf32>
  %px = pto.partition_view %tx, offsets = [%c0, %c0], sizes = [%c16, %c32] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<16x32xf32>
  %pm = pto.partition_view %tm, offsets = [%c0, %c0], sizes = [%c16, %c1] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<16x1xf32>
  %po = pto.partition_view %to, offsets = [%c0, %c0], sizes = [%c16, %c32] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<16x32xf32>
  %src = pto.alloc_tile : !pto.tile_buf<vec, 16x32xf32>
  %row = pto.alloc_tile : !pto.tile_buf<vec, 16x1xf32, blayout=col_major>
  pto.tload ins(%px : !pto.partition_tensor_view<16x32xf32>) outs(%src : !pto.tile_buf<vec, 16x32xf32>)
  pto.tload ins(%pm : !pto.partition_tensor_view<16x1xf32>) outs(%row : !pto.tile_buf<vec, 16x1xf32, blayout=col_major>)
  {line}
  pto.tstore ins(%dst : {out_type}) outs(%po : !pto.partition_tensor_view<16x32xf32>)
  return
}}
"""


def test_ssa_trecip_matches_dps():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((16, 32)).astype(np.float32)
    m = rng.standard_normal((16, 1)).astype(np.float32)
    want = run_both("trecip", [A], A)  # warm-up: same API path
    del want
    t = pto.Tile(pto.TileType.Vec, "float32", 16, 32)
    d = pto.Tile(pto.TileType.Vec, "float32", 16, 32)
    t.data[...] = x
    pto.TRECIP(d, t)
    for line, ty in [
        ("%dst = pto.trecip %src : !pto.tile<16x32xf32> -> !pto.tile<16x32xf32>",
         "!pto.tile<16x32xf32>"),
        ("%dst = trecip %src : !pto.tile<16x32xf32>", "!pto.tile<16x32xf32>"),
        ("%dst = pto.trecip %src : !pto.tile_buf<vec, 16x32xf32> -> "
         "!pto.tile_buf<vec, 16x32xf32>", "!pto.tile_buf<vec, 16x32xf32>"),
    ]:
        got = asm.run(_ssa_program(line, ty), {"x": x, "m": m})["out"]
        same_bits(got, d.valid)


def test_ssa_trowexpandexpdif_matches_dps():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((16, 32)).astype(np.float32)
    m = rng.standard_normal((16, 1)).astype(np.float32)
    t = pto.Tile(pto.TileType.Vec, "float32", 16, 32)
    r = pto.Tile(pto.TileType.Vec, "float32", 16, 1, blayout=pto.BLayout.ColMajor)
    d = pto.Tile(pto.TileType.Vec, "float32", 16, 32)
    t.data[...] = x
    r.data[...] = m
    pto.TROWEXPANDEXPDIF(d, t, r)
    line = ("%dst = pto.trowexpandexpdif %src, %row : !pto.tile<16x32xf32>, "
            "!pto.tile<16x1xf32, blayout=col_major> -> !pto.tile<16x32xf32>")
    got = asm.run(_ssa_program(line, "!pto.tile<16x32xf32>"), {"x": x, "m": m})["out"]
    same_bits(got, d.valid)
    line = ("%dst = pto.trowexpandexpdif %src, %row : (!pto.tile_buf<vec, 16x32xf32>, "
            "!pto.tile_buf<vec, 16x1xf32, blayout=col_major>) -> !pto.tile<16x32xf32>")
    got = asm.run(_ssa_program(line, "!pto.tile<16x32xf32>"), {"x": x, "m": m})["out"]
    same_bits(got, d.valid)


# ---- run(): inputs, outputs, views ---------------------------------------------------------

COPY = """\
func.func @copy(%src: !pto.ptr<f32>, %dst: !pto.ptr<f32>, %r: index, %c: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %tv = pto.make_tensor_view %src, shape = [%c8, %c64], strides = [%c64, %c1] : !pto.tensor_view<?x?xf32>
  %ov = pto.make_tensor_view %dst, shape = [%c8, %c64], strides = [%c64, %c1] : !pto.tensor_view<?x?xf32>
  %pv = pto.partition_view %tv, offsets = [%c4, %c8], sizes = [%r, %c] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<?x?xf32>
  %po = pto.partition_view %ov, offsets = [%c0, %c4], sizes = [%r, %c] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<?x?xf32>
  %t = pto.alloc_tile valid_row = %r valid_col = %c : !pto.tile_buf<vec, 4x16xf32, valid=?x?>
  pto.tload ins(%pv : !pto.partition_tensor_view<?x?xf32>) outs(%t : !pto.tile_buf<vec, 4x16xf32, valid=?x?>)
  pto.tstore ins(%t : !pto.tile_buf<vec, 4x16xf32, valid=?x?>) outs(%po : !pto.partition_tensor_view<?x?xf32>)
  return
}
"""


def test_partition_offsets_dynamic_valid_and_untouched_output():
    src = np.arange(8 * 64, dtype=np.float32).reshape(8, 64)
    dst = np.full((8, 64), -1, dtype=np.float32)
    keep_src, keep_dst = src.copy(), dst.copy()
    out = asm.run(COPY, {"src": src, "dst": dst, "r": 3, "c": 10})
    assert list(out) == ["dst"]
    want = keep_dst.copy()
    want[0:3, 4:14] = src[4:7, 8:18]
    np.testing.assert_array_equal(out["dst"], want)
    np.testing.assert_array_equal(src, keep_src)       # inputs are never modified
    np.testing.assert_array_equal(dst, keep_dst)


def test_output_only_pointer_is_allocated():
    src = np.arange(8 * 64, dtype=np.float32).reshape(8, 64)
    out = asm.run(COPY, {"src": src, "r": 4, "c": 16})
    assert out["dst"].shape == (8, 64)
    want = np.zeros((8, 64), np.float32)
    want[0:4, 4:20] = src[4:8, 8:24]
    np.testing.assert_array_equal(out["dst"], want)


def test_tload_from_a_pointer_without_input_warns():
    """A forgotten input reads zeros: run() says so once per pointer, and stays silent
    when every loaded pointer was given."""
    with pytest.warns(RuntimeWarning, match=r"pto.tload reads %src, which has no input "
                      r"array .* reads zeros .*--input src=FILE.npy"):
        out = asm.run(COPY, {"r": 4, "c": 16})
    assert not out["dst"].any()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        asm.run(COPY, {"src": np.ones((8, 64), np.float32), "r": 4, "c": 16})


def test_input_errors():
    src = np.zeros((8, 64), np.float32)
    with pytest.raises(ConstraintError, match="must have dtype float32"):
        asm.run(COPY, {"src": src.astype(np.float64), "r": 1, "c": 1})
    with pytest.raises(ConstraintError, match="no argument named 'bogus'"):
        asm.run(COPY, {"src": src, "r": 1, "c": 1, "bogus": 1})
    with pytest.raises(ConstraintError, match="scalar argument %c"):
        asm.run(COPY, {"src": src, "r": 1})
    with pytest.raises(AccessError, match="needs 512 elements of %src"):
        asm.run(COPY, {"src": src[:4], "r": 1, "c": 1})


def test_runtime_errors_carry_the_line():
    src = np.zeros((8, 64), np.float32)
    # a partition outside its tensor view
    with pytest.raises(AccessError) as ei:
        asm.run(COPY, {"src": src, "r": 5, "c": 16})
    assert ei.value.line == 9 and str(ei.value).startswith("line 9, column 3")
    # the tile's valid region cannot hold the partition: Tile.set_valid_col rule
    with pytest.raises(ConstraintError) as ei:
        asm.run(COPY, {"src": src, "r": 4, "c": 17})
    assert ei.value.line == 11 and "valid_col" in str(ei.value)
    assert isinstance(ei.value.__cause__, ConstraintError)


def test_legality_error_from_the_api_is_annotated():
    text = program("trowexpandexpdif", [A, S("f32", 16, 16)], A)   # src1 neither mode 1 nor 2
    rng = np.random.default_rng(0)
    with pytest.raises(ConstraintError) as ei:
        asm.run(text, {"in0": rng.standard_normal((16, 32)).astype(np.float32),
                       "in1": rng.standard_normal((16, 16)).astype(np.float32)})
    line = next(i for i, ln in enumerate(text.split("\n"), 1) if "pto.trowexpandexpdif" in ln)
    assert ei.value.line == line
    assert str(ei.value).startswith(f"line {line}, column 3 (pto.trowexpandexpdif): TROWEXPANDEXPDIF")


def test_alignment_error_from_alloc_tile():
    text = "func.func @f() {\n  %t = pto.alloc_tile : !pto.tile_buf<vec, 16x4xf32>\n}\n"
    with pytest.raises(ValueError) as ei:
        asm.run(text, {})
    assert ei.value.line == 2 and "32" in str(ei.value)


TRECIP_SAME = """\
module attributes {{pto.target_arch = "{arch}"}} {{
  func.func @f(%x: !pto.ptr<f32>) {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %v = pto.make_tensor_view %x, shape = [%c8, %c8], strides = [%c8, %c1] : !pto.tensor_view<?x?xf32>
    %p = pto.partition_view %v, offsets = [%c0, %c0], sizes = [%c8, %c8] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<8x8xf32>
    %t = pto.alloc_tile : !pto.tile_buf<vec, 8x8xf32>
    pto.tload ins(%p : !pto.partition_tensor_view<8x8xf32>) outs(%t : !pto.tile_buf<vec, 8x8xf32>)
    pto.trecip ins(%t : !pto.tile_buf<vec, 8x8xf32>) outs(%t : !pto.tile_buf<vec, 8x8xf32>)
    pto.tstore ins(%t : !pto.tile_buf<vec, 8x8xf32>) outs(%p : !pto.partition_tensor_view<8x8xf32>)
  }}
}}
"""


def test_target_arch_attribute():
    x = np.arange(1, 65, dtype=np.float32).reshape(8, 8)
    before = pto.get_target()
    out = asm.run(TRECIP_SAME.format(arch="a5"), {"x": x})   # in place is fine on A5
    np.testing.assert_array_equal(out["x"], np.float32(1) / x)
    assert pto.get_target() == before                         # restored
    with pytest.raises(OverlapError) as ei:                   # A2/A3: not the same memory
        asm.run(TRECIP_SAME.format(arch="a3"), {"x": x})
    assert ei.value.line == 10
    assert pto.get_target() == before


def test_tassign_and_set_validshape():
    text = """\
func.func @f(%x: !pto.ptr<f16>, %y: !pto.ptr<f16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %c7 = arith.constant 7 : index
  %c16 = arith.constant 16 : index
  %a0 = arith.constant 0 : i64
  %a512 = arith.constant 512 : i64
  %vx = pto.make_tensor_view %x, shape = [%c16, %c16], strides = [%c16, %c1] : !pto.tensor_view<?x?xf16>
  %vy = pto.make_tensor_view %y, shape = [%c16, %c16], strides = [%c16, %c1] : !pto.tensor_view<?x?xf16>
  %px = pto.partition_view %vx, offsets = [%c0, %c0], sizes = [%c5, %c7] : !pto.tensor_view<?x?xf16> -> !pto.partition_tensor_view<5x7xf16>
  %py = pto.partition_view %vy, offsets = [%c0, %c0], sizes = [%c5, %c7] : !pto.tensor_view<?x?xf16> -> !pto.partition_tensor_view<5x7xf16>
  %t = pto.alloc_tile addr = %a0 valid_row = %c16 valid_col = %c16 : !pto.tile_buf<vec, 16x16xf16, valid=?x?>
  %u = pto.alloc_tile addr = %a512 valid_row = %c16 valid_col = %c16 : !pto.tile_buf<vec, 16x16xf16, valid=?x?>
  pto.set_validshape %t, %c5, %c7 : !pto.tile_buf<vec, 16x16xf16, valid=?x?>
  pto.set_validshape %u, %c5, %c7 : !pto.tile_buf<vec, 16x16xf16, valid=?x?>
  pto.tload ins(%px : !pto.partition_tensor_view<5x7xf16>) outs(%t : !pto.tile_buf<vec, 16x16xf16, valid=?x?>)
  pto.texp ins(%t : !pto.tile_buf<vec, 16x16xf16, valid=?x?>) outs(%u : !pto.tile_buf<vec, 16x16xf16, valid=?x?>)
  pto.tstore ins(%u : !pto.tile_buf<vec, 16x16xf16, valid=?x?>) outs(%py : !pto.partition_tensor_view<5x7xf16>)
  return
}
"""
    x = (np.random.default_rng(5).standard_normal((16, 16)) * 2).astype(np.float16)
    out = asm.run(text, {"x": x})["y"]
    t = pto.Tile(pto.TileType.Vec, "float16", 16, 16, valid_row=5, valid_col=7)
    u = pto.Tile(pto.TileType.Vec, "float16", 16, 16, valid_row=5, valid_col=7)
    pto.TLOAD(t, pto.GlobalTensor(x[:5, :7].copy()))
    pto.TEXP(u, t)
    same_bits(out[:5, :7], u.valid)
    assert not out[5:].any() and not out[:, 7:].any()


def test_run_accepts_a_parsed_module_and_a_function_name():
    m = asm.parse(COPY + COPY.replace("@copy", "@other"))
    src = np.arange(8 * 64, dtype=np.float32).reshape(8, 64)
    a = asm.run(m, {"src": src, "r": 2, "c": 3}, func="other")
    b = asm.run(m, {"src": src, "r": 2, "c": 3})
    np.testing.assert_array_equal(a["dst"], b["dst"])
    with pytest.raises(KeyError):
        asm.run(m, {"src": src, "r": 2, "c": 3}, func="nope")


def test_syntax_errors_are_raised_by_run():
    with pytest.raises(AsmSyntaxError) as ei:
        asm.run(COPY.replace("%c0 = arith", "%c0 = arithh"), {})
    assert ei.value.line == 2


# ---- CLI ------------------------------------------------------------------------------------

def test_cli_run_pto(tmp_path, capsys):
    rng = np.random.default_rng(7)
    x = rng.standard_normal((16, 32)).astype(np.float32)
    m = rng.standard_normal((16, 1)).astype(np.float32)
    kernel = tmp_path / "k.pto"
    kernel.write_text(_ssa_program(
        "%dst = pto.trowexpandexpdif %src, %row : !pto.tile<16x32xf32>, "
        "!pto.tile<16x1xf32, blayout=col_major> -> !pto.tile<16x32xf32>", "!pto.tile<16x32xf32>"))
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "m.npy", m)
    outdir = tmp_path / "out"
    rc = cli.main(["run", str(kernel), "--input", f"x={tmp_path / 'x.npy'}",
                   "--input", f"%m={tmp_path / 'm.npy'}", "--output-dir", str(outdir)])
    assert rc == 0
    assert "out: shape (16, 32), dtype float32" in capsys.readouterr().out
    got = np.load(outdir / "out.npy")
    want = asm.run(kernel.read_text(), {"x": x, "m": m})["out"]
    same_bits(got, want)
    # printing instead of writing, with --profile
    rc = cli.main(["run", str(kernel), "--input", f"x={tmp_path / 'x.npy'}",
                   "--input", f"m={tmp_path / 'm.npy'}", "--profile"])
    printed = capsys.readouterr().out
    assert rc == 0 and "out: shape (16, 32)" in printed and "TROWEXPANDEXPDIF" in printed


def test_cli_reports_syntax_errors(tmp_path, capsys):
    kernel = tmp_path / "bad.pto"
    kernel.write_text("func.func @f() {\n  pto.tadd ins(%a : f32) outs(%b : f32)\n}\n")
    assert cli.main(["run", str(kernel)]) == 1
    err = capsys.readouterr().err
    assert f"{kernel}:2:3: error:" in err
    assert "pto.tadd ins(%a : f32) outs(%b : f32)" in err


# ---- the example ----------------------------------------------------------------------------

def test_example_softmax_matches_float64_reference():
    from fastisa import examples
    for seed in (0, 1, 2):
        report = examples.run("pto_softmax_asm", seed=seed)
        assert report.matches, report.format()
        assert report.cycles.get("Vector", 0) > 0 and report.cycles.get("MTE2", 0) > 0


def test_example_softmax_is_bit_exact_against_the_oracles():
    import reference as ref

    from fastisa.examples import pto_softmax_asm as ex
    rng = np.random.default_rng(11)
    x = (rng.standard_normal((ex.ROWS, ex.COLS)) * 4).astype(np.float32)
    scale = np.float32(0.375)
    y = asm.run(ex.PTO_TEXT, {"x": x, "rows": ex.ROWS, "scale": scale})["y"]
    u = ref.pto_binary("MUL", x, np.full_like(x, scale))
    m = ref.pto_row_reduce("MAX", u)
    t = ref.pto_binary("EXPDIF", u, ref.pto_expand_cols(m, ex.COLS))
    s = ref.pto_row_reduce("SUM", t)
    want = ref.pto_binary("DIV", t, ref.pto_expand_cols(s, ex.COLS))
    same_bits(y, want)


def test_example_text_through_the_cli(tmp_path, capsys):
    from fastisa.examples import pto_softmax_asm as ex
    kernel = tmp_path / "softmax.pto"
    kernel.write_text(ex.PTO_TEXT)
    x = (np.random.default_rng(2).standard_normal((ex.ROWS, ex.COLS))).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "scale.npy", np.float32(1.0))
    np.save(tmp_path / "rows.npy", np.int64(ex.ROWS))
    rc = cli.main(["run", str(kernel), "--input", f"x={tmp_path / 'x.npy'}", "--input",
                   f"scale={tmp_path / 'scale.npy'}", "--input", f"rows={tmp_path / 'rows.npy'}",
                   "--output-dir", str(tmp_path)])
    assert rc == 0
    y = np.load(tmp_path / "y.npy")
    np.testing.assert_allclose(y, ex.reference(x, 1.0), rtol=64 * np.finfo(np.float32).eps)
    assert "y: shape (100, 100), dtype float32" in capsys.readouterr().out


# ---- scalar arith, scf.for, pto.tassign ------------------------------------------------------

def _scalar_program(lines, result, ty, tile_dtype, cols):
    """Compute scalar ``%result`` with ``lines``; TEXPANDS it into a 1 x cols tile; store."""
    body = "".join(f"  {ln}\n" for ln in lines)
    tb = f"!pto.tile_buf<vec, 1x{cols}x{tile_dtype}>"
    return f"""\
func.func @f(%out: !pto.ptr<{tile_dtype}>, %a: {ty}, %b: {ty}) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cn = arith.constant {cols} : index
{body}  %t = pto.alloc_tile : {tb}
  pto.texpands ins(%{result} : {tile_dtype}) outs(%t : {tb})
  %v = pto.make_tensor_view %out, shape = [%c1, %cn], strides = [%cn, %c1] : !pto.tensor_view<?x?x{tile_dtype}>
  %p = pto.partition_view %v, offsets = [%c0, %c0], sizes = [%c1, %cn] : !pto.tensor_view<?x?x{tile_dtype}> -> !pto.partition_tensor_view<1x{cols}x{tile_dtype}>
  pto.tstore ins(%t : {tb}) outs(%p : !pto.partition_tensor_view<1x{cols}x{tile_dtype}>)
  return
}}
"""


@pytest.mark.parametrize("op, a, b, want", [
    ("addi", 2**31 - 1, 1, -2**31),          # wraps to i32
    ("subi", -7, 5, -12),
    ("muli", 65536, 65536, 0),
    ("divsi", -7, 2, -3),                    # toward zero
    ("remsi", -7, 2, -1),                    # sign of the dividend
    ("divui", -1, 2, 2**31 - 1),             # unsigned
    ("remui", -1, 10, (2**32 - 1) % 10),
    ("ceildivsi", 7, 2, 4),
    ("ceildivsi", -7, 2, -3),
    ("floordivsi", -7, 2, -4),
    ("maxsi", -3, 2, 2),
    ("minsi", -3, 2, -3),
])
def test_arith_integer_ops(op, a, b, want):
    text = _scalar_program([f"%r = arith.{op} %a, %b : i32"], "r", "i32", "i32", 8)
    out = asm.run(text, {"a": a, "b": b})["out"]
    assert out.dtype == np.int32 and (out == want).all(), out


def test_arith_division_by_zero_is_an_error_with_the_line():
    text = _scalar_program(["%r = arith.divsi %a, %b : i32"], "r", "i32", "i32", 8)
    with pytest.raises(ConstraintError) as ei:
        asm.run(text, {"a": 1, "b": 0})
    assert ei.value.line == 5 and "division by zero" in str(ei.value)


@pytest.mark.parametrize("op, npop", [("addf", np.add), ("subf", np.subtract),
                                      ("mulf", np.multiply), ("divf", np.divide),
                                      ("maximumf", np.maximum), ("minimumf", np.minimum)])
def test_arith_float_ops_round_once_to_the_type(op, npop):
    a, b = np.float16(1.0009766), np.float16(3.0)
    text = _scalar_program([f"%r = arith.{op} %a, %b : f16"], "r", "f16", "f16", 16)
    out = asm.run(text, {"a": a, "b": b})["out"]
    want = np.float16(npop(np.float64(a), np.float64(b)))     # exact in f64, rounded once
    same_bits(out, np.full((1, 16), want, np.float16))


def test_arith_casts():
    lines = ["%i = arith.index_cast %a : i32 to index", "%j = arith.muli %i, %i : index",
             "%k = arith.trunci %j : index to i16", "%l = arith.extsi %k : i16 to i32",
             "%r = arith.addi %l, %b : i32"]
    out = asm.run(_scalar_program(lines, "r", "i32", "i32", 8), {"a": 300, "b": 1})["out"]
    assert (out == np.int16(300 * 300 - 65536 * 1) + 1).all()      # 90000 wraps in i16
    lines = ["%f = arith.sitofp %a : i32 to f32", "%h = arith.truncf %f : f32 to f16"]
    out = asm.run(_scalar_program(lines, "h", "i32", "f16", 16), {"a": 2049, "b": 0})["out"]
    assert (out == np.float16(2048)).all()                           # 2049 rounds to even


def test_scf_for_tiles_a_row_block_loop():
    """A TADDS over [rows, 32] in 8-row blocks, the last block partial (rows = 21)."""
    text = """\
func.func @f(%x: !pto.ptr<f32>, %y: !pto.ptr<f32>, %rows: index, %s: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %xv = pto.make_tensor_view %x, shape = [%rows, %c32], strides = [%c32, %c1] : !pto.tensor_view<?x?xf32>
  %yv = pto.make_tensor_view %y, shape = [%rows, %c32], strides = [%c32, %c1] : !pto.tensor_view<?x?xf32>
  %t = pto.alloc_tile valid_row = %c8 valid_col = %c32 : !pto.tile_buf<vec, 8x32xf32, valid=?x?>
  scf.for %i = %c0 to %rows step %c8 {
    %left = arith.subi %rows, %i : index
    %n = arith.minsi %left, %c8 : index
    pto.set_validshape %t, %n, %c32 : !pto.tile_buf<vec, 8x32xf32, valid=?x?>
    %xp = pto.partition_view %xv, offsets = [%i, %c0], sizes = [%n, %c32] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<?x32xf32>
    %yp = pto.partition_view %yv, offsets = [%i, %c0], sizes = [%n, %c32] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<?x32xf32>
    pto.tload ins(%xp : !pto.partition_tensor_view<?x32xf32>) outs(%t : !pto.tile_buf<vec, 8x32xf32, valid=?x?>)
    pto.tadds ins(%t, %s : !pto.tile_buf<vec, 8x32xf32, valid=?x?>, f32) outs(%t : !pto.tile_buf<vec, 8x32xf32, valid=?x?>)
    pto.tstore ins(%t : !pto.tile_buf<vec, 8x32xf32, valid=?x?>) outs(%yp : !pto.partition_tensor_view<?x32xf32>)
  }
  return
}
"""
    x = np.random.default_rng(8).standard_normal((21, 32)).astype(np.float32)
    y = asm.run(text, {"x": x, "rows": 21, "s": 0.25})["y"]
    assert y.shape == (21, 32)
    same_bits(y, x + np.float32(0.25))
    # an error inside the loop body reports the body's line
    with pytest.raises(ConstraintError) as ei:
        asm.run(text.replace("arith.minsi %left, %c8", "arith.minsi %left, %c32"),
                {"x": x, "rows": 21, "s": 0.25})
    assert ei.value.line == 12 and "valid_row" in str(ei.value)


def test_tassign_op_aliases_tiles():
    """Two tiles bound to the same UB address alias: writing one changes the other."""
    text = """\
func.func @f(%y: !pto.ptr<f32>, %s: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %a = arith.constant 1024 : i64
  %t = pto.alloc_tile : !pto.tile_buf<vec, 8x8xf32>
  %u = pto.alloc_tile : !pto.tile_buf<vec, 8x8xf32>
  %t1 = pto.tassign %t, %a : !pto.tile_buf<vec, 8x8xf32> -> !pto.tile_buf<vec, 8x8xf32>
  %u1 = pto.tassign %u, %a : !pto.tile_buf<vec, 8x8xf32> -> !pto.tile_buf<vec, 8x8xf32>
  pto.texpands ins(%s : f32) outs(%t1 : !pto.tile_buf<vec, 8x8xf32>)
  %v = pto.make_tensor_view %y, shape = [%c8, %c8], strides = [%c8, %c1] : !pto.tensor_view<?x?xf32>
  %p = pto.partition_view %v, offsets = [%c0, %c0], sizes = [%c8, %c8] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<8x8xf32>
  pto.tstore ins(%u1 : !pto.tile_buf<vec, 8x8xf32>) outs(%p : !pto.partition_tensor_view<8x8xf32>)
  return
}
"""
    y = asm.run(text, {"s": 3.5})["y"]
    assert (y == np.float32(3.5)).all()
    with pytest.raises(AccessError) as ei:                  # outside the 192 KiB UB
        asm.run(text.replace("1024 : i64", "196608 : i64"), {"s": 3.5})
    assert ei.value.line == 8


# ---- property: random shapes and valid regions, text == API ----------------------------------


@settings(max_examples=30, deadline=None)
@given(dtype=st.sampled_from(["f32", "f16"]), R=st.integers(1, 40), C=st.integers(1, 70),
       extra_rows=st.integers(0, 9), op=st.sampled_from(
           ["tadd", "tmax", "texp", "tmuls", "trowsum", "trowmax", "trowexpandexpdif",
            "trowexpandsub", "tcolsum", "tcvt"]), seed=st.integers(0, 2**16))
def test_text_equals_api_on_random_valid_regions(dtype, R, C, extra_rows, op, seed):
    per = 32 // np.dtype(NP[dtype]).itemsize
    cols = -(-C // per) * per
    rows = R + extra_rows
    full = S(dtype, rows, cols, R, C)
    rowvec = S(dtype, -(-rows // per) * per, 1, R, 1, blayout="col_major")
    if op in ("tadd", "tmax"):
        args = ([full, full], full)
    elif op == "texp":
        args = ([full], full)
    elif op == "tmuls":
        args = ([full, Sc(dtype, -1.5)], full)
    elif op in ("trowsum", "trowmax"):
        args = ([full], rowvec)
    elif op == "tcolsum":
        args = ([full], S(dtype, 1, cols, 1, C))
    elif op == "tcvt":
        other = "f16" if dtype == "f32" else "f32"
        oper = 32 // np.dtype(NP[other]).itemsize
        args = ([full], S(other, rows, -(-C // oper) * oper, R, C))
        same_bits(*run_both(op, *args, seed=seed, api_args=(pto.RoundMode.CAST_RINT,)))
        return
    else:
        args = ([full, rowvec], full)
    same_bits(*run_both(op, *args, seed=seed))


def test_bf16_pointers_need_bf16_arrays():
    import ml_dtypes
    b = S("bf16", 16, 16)
    text = program("tmov", [b], b)
    x = np.random.default_rng(9).standard_normal((16, 16)).astype(ml_dtypes.bfloat16)
    out = asm.run(text, {"in0": x})["out"]
    assert out.dtype == ml_dtypes.bfloat16
    same_bits(out, x)
    with pytest.raises(ConstraintError, match="must have dtype bfloat16"):
        asm.run(text, {"in0": x.astype(np.float32)})


SPEC_003_MANUAL = """\
func.func @example(%arg0: !pto.ptr<f32>, %arg1: !pto.ptr<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %v = pto.make_tensor_view %arg0, shape = [%c16, %c16], strides = [%c16, %c1] : !pto.tensor_view<?x?xf32>
  %w = pto.make_tensor_view %arg1, shape = [%c16, %c16], strides = [%c16, %c1] : !pto.tensor_view<?x?xf32>
  %p = pto.partition_view %v, offsets = [%c0, %c0], sizes = [%c16, %c16] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<16x16xf32>
  %q = pto.partition_view %w, offsets = [%c0, %c0], sizes = [%c16, %c16] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<16x16xf32>
  %src = pto.alloc_tile : !pto.tile_buf<vec, 16x16xf32>
  pto.tload ins(%p : !pto.partition_tensor_view<16x16xf32>) outs(%src : !pto.tile_buf<vec, 16x16xf32>)
  # Manual mode: explicitly bind resources first, then issue the instruction.
  # Optional (when the instruction contains tile operands):
  # pto.tassign %arg0, @tile(0x1000)
  # pto.tassign %arg1, @tile(0x2000)
  %dst = pto.trecip %src : !pto.tile<16x16xf32> -> !pto.tile<16x16xf32>
  pto.tstore ins(%dst : !pto.tile<16x16xf32>) outs(%q : !pto.partition_tensor_view<16x16xf32>)
  return
}
"""


def test_spec_003_example_in_pto_as():
    """Spec 003's example (Tile<Vec, float, 16, 16>; TRECIP(out, x)) written in PTO-AS, with
    the spec's manual-mode comment lines; the same bits as the Python call."""
    x = np.random.default_rng(12).uniform(1, 10, (16, 16)).astype(np.float32)
    got = asm.run(SPEC_003_MANUAL, {"arg0": x})["arg1"]
    src = pto.Tile(pto.TileType.Vec, "float32", 16, 16)
    out = pto.Tile(pto.TileType.Vec, "float32", 16, 16)
    src.data[...] = x
    pto.TRECIP(out, src)
    same_bits(got, out.data)
    # the DPS (AS level 2) spelling of the same instruction, and HIGH_PRECISION
    dps = SPEC_003_MANUAL.replace(
        "%dst = pto.trecip %src : !pto.tile<16x16xf32> -> !pto.tile<16x16xf32>",
        "%dst = pto.alloc_tile : !pto.tile<16x16xf32>\n"
        "  pto.trecip ins(%src : !pto.tile_buf<vec, 16x16xf32>) outs(%dst : !pto.tile_buf<vec, "
        "16x16xf32>) {precision = #pto<recip_precision HIGH_PRECISION>}")
    same_bits(asm.run(dps, {"arg0": x})["arg1"], out.data)


def test_scalar_inputs_are_checked_and_rounded_once():
    text = _scalar_program(["%r = arith.addi %a, %b : i32"], "r", "i32", "i32", 8)
    assert (asm.run(text, {"a": np.array([5]), "b": 2.0})["out"] == 7).all()
    assert (asm.run(text, {"a": 0xFFFFFFFF, "b": 0})["out"] == -1).all()   # signless pattern
    with pytest.raises(ConstraintError, match="must be an integer"):
        asm.run(text, {"a": 2.5, "b": 0})
    with pytest.raises(ConstraintError, match="does not fit in i32"):
        asm.run(text, {"a": 2**32, "b": 0})
    with pytest.raises(ConstraintError, match="single number"):
        asm.run(text, {"a": np.arange(3), "b": 0})
    text = _scalar_program(["%r = arith.addf %a, %b : f16"], "r", "f16", "f16", 16)
    # 1 + 2**-11 (exact in float64) rounds once to even: 1.0 in float16
    out = asm.run(text, {"a": 1 + 2.0**-11, "b": 0.0})["out"]
    assert (out == np.float16(1.0)).all()


def test_five_dimensional_views():
    """A 5-D tensor view (PTOAS's GlobalTensor shape): ND rows are dims 0-3, columns dim 4."""
    text = """\
func.func @f(%x: !pto.ptr<f32>, %y: !pto.ptr<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %v = pto.make_tensor_view %x, shape = [%c1, %c1, %c2, %c4, %c16], strides = [%c64, %c64, %c64, %c16, %c1] : !pto.tensor_view<?x?x?x?x?xf32>
  %w = pto.make_tensor_view %y, shape = [%c1, %c1, %c2, %c4, %c16], strides = [%c64, %c64, %c64, %c16, %c1] : !pto.tensor_view<?x?x?x?x?xf32>
  %p = pto.partition_view %v, offsets = [%c0, %c0, %c0, %c0, %c8], sizes = [%c1, %c1, %c2, %c4, %c8] : !pto.tensor_view<?x?x?x?x?xf32> -> !pto.partition_tensor_view<1x1x2x4x8xf32>
  %q = pto.partition_view %w, offsets = [%c0, %c0, %c0, %c0, %c0], sizes = [%c1, %c1, %c2, %c4, %c8] : !pto.tensor_view<?x?x?x?x?xf32> -> !pto.partition_tensor_view<1x1x2x4x8xf32>
  %t = pto.alloc_tile : !pto.tile_buf<vec, 8x8xf32>
  pto.tload ins(%p : !pto.partition_tensor_view<1x1x2x4x8xf32>) outs(%t : !pto.tile_buf<vec, 8x8xf32>)
  pto.tneg ins(%t : !pto.tile_buf<vec, 8x8xf32>) outs(%t : !pto.tile_buf<vec, 8x8xf32>)
  pto.tstore ins(%t : !pto.tile_buf<vec, 8x8xf32>) outs(%q : !pto.partition_tensor_view<1x1x2x4x8xf32>)
  return
}
"""
    x = np.arange(128, dtype=np.float32)
    y = asm.run(text, {"x": x})["y"]
    assert y.shape == (1, 1, 2, 4, 16)      # an allocated output takes its dense view's shape
    y = y.reshape(-1)
    want = np.zeros(128, np.float32)
    want.reshape(8, 16)[:, :8] = -x.reshape(8, 16)[:, 8:]
    np.testing.assert_array_equal(y, want)


def test_format_error():
    text = "func.func @f() {\n  %c = arith.constant 1 : index\n  $oops\n}\n"
    with pytest.raises(AsmSyntaxError) as ei:
        asm.parse(text)
    assert asm.format_error(ei.value, "k.pto") == (
        "k.pto:3:3: error: unexpected character '$'\n      $oops\n      ^")
    src = np.zeros((8, 64), np.float32)
    with pytest.raises(AccessError) as ei:
        asm.run(COPY, {"src": src, "r": 5, "c": 16})
    report = asm.format_error(ei.value, "copy.pto")
    assert report.startswith("copy.pto:9:3: error: pto.partition_view: dimension 0")
    assert report.endswith("\n      ^")
    assert asm.format_error(ConstraintError("run: bad"), "k.pto") == "k.pto: error: run: bad"


def test_cli_bf16_round_trip_through_npy(tmp_path):
    """np.save/np.load turn bfloat16 into raw |V2 arrays; run takes them bit for bit."""
    import ml_dtypes
    b = S("bf16", 16, 16)
    kernel = tmp_path / "k.pto"
    kernel.write_text(program("tneg", [b], b))
    x = np.random.default_rng(13).standard_normal((16, 16)).astype(ml_dtypes.bfloat16)
    np.save(tmp_path / "x.npy", x)
    assert np.load(tmp_path / "x.npy").dtype.kind == "V"
    assert cli.main(["run", str(kernel), "--input", f"in0={tmp_path / 'x.npy'}",
                     "--output-dir", str(tmp_path)]) == 0
    out = np.load(tmp_path / "out.npy").view(ml_dtypes.bfloat16)
    same_bits(out, -x)
