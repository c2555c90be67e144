"""Every PTO legality rule (reference/pto.md section 8, specs 003 and 004) is an error with a
clear message naming the instruction, the parameter, the rule and the value."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from fastisa import pto
from fastisa.errors import AccessError, AlignmentError, ConstraintError, OverlapError
from pto_helpers import CM, RM, V, tile


@pytest.fixture(autouse=True)
def _default_target():
    pto.set_target("A2A3")
    pto.set_debug(False)
    yield
    pto.set_target("A2A3")
    pto.set_debug(False)


# ---- Tile construction ---------------------------------------------------------------------
def test_trecip_on_tile_whose_valid_region_exceeds_its_shape():
    """Issue 2: TRECIP on a tile whose valid region exceeds its shape is an error."""
    out = pto.Tile(V, "float32", 16, 16)
    with pytest.raises(ConstraintError, match=r"Tile: valid_row must be in \[0, rows=16\].*got 17"):
        pto.TRECIP(out, pto.Tile(V, "float32", 16, 16, valid_row=17))
    with pytest.raises(ConstraintError, match=r"Tile: valid_col must be in \[0, cols=16\].*got 32"):
        pto.TRECIP(out, pto.Tile(V, "float32", 16, 16, valid_col=32))
    dyn = pto.Tile(V, "float32", 16, 16, valid_row=pto.DYNAMIC, valid_col=pto.DYNAMIC)
    with pytest.raises(ConstraintError, match=r"valid_row must be in \[0, rows=16\].*got 20"):
        dyn.set_valid_row(20)
    with pytest.raises(ConstraintError, match=r"valid_col must be in \[0, cols=16\].*got -2"):
        dyn.set_valid_col(-2)
    assert dyn.valid_shape == (16, 16)   # unchanged after the failed set


def test_static_valid_cannot_be_set():
    t = pto.Tile(V, "float32", 16, 16, valid_row=8)
    with pytest.raises(ConstraintError, match="valid_row is static"):
        t.set_valid_row(4)


@pytest.mark.parametrize("dtype,rows,cols,layout,msg", [
    ("float32", 16, 12, RM, r"cols \* sizeof\(T\) % 32 == 0.*cols=12 x 4 bytes = 48"),
    ("float16", 16, 8, RM, r"cols=8 x 2 bytes = 16"),
    ("float32", 12, 16, CM, r"rows \* sizeof\(T\) % 32 == 0.*rows=12"),
    ("float32", 16, 1, RM, r"cols=1 x 4 bytes"),
    ("int8", 16, 16, RM, r"cols=16 x 1 bytes"),
])
def test_32_byte_rule(dtype, rows, cols, layout, msg):
    with pytest.raises(AlignmentError, match=msg):
        pto.Tile(V, dtype, rows, cols, blayout=layout)


def test_boxed_rules():
    pto.Tile(pto.TileType.Mat, "float16", 32, 32, blayout=CM, slayout=pto.SLayout.RowMajor)
    with pytest.raises(AlignmentError, match=r"InnerCols \(16\)"):
        pto.Tile(pto.TileType.Mat, "float16", 32, 24, slayout=pto.SLayout.RowMajor)
    with pytest.raises(AlignmentError, match=r"InnerRows \(16\)"):
        pto.Tile(pto.TileType.Mat, "float16", 24, 32, slayout=pto.SLayout.RowMajor)


@pytest.mark.parametrize("kw,msg", [
    (dict(rows=0), "Tile: rows must be > 0, got 0"),
    (dict(cols=-8), "Tile: cols must be > 0, got -8"),
    (dict(dtype="float64"), "Tile: dtype must be one of .* got 'float64'"),
    (dict(dtype=np.float64), "Tile: dtype must be one of .* got 'float64'"),
    (dict(dtype="tfloat32"), "Tile: dtype must be one of"),
    (dict(fractal=256), "Tile: fractal must be 32, 512 or 1024 bytes, got 256"),
    (dict(loc=42), "Tile: loc must be a TileType, got 42"),
    (dict(pad=7), "Tile: pad must be a PadValue"),
    (dict(rows=2.5), "Tile: rows must be an integer"),
])
def test_tile_parameter_errors(kw, msg):
    args = dict(loc=V, dtype="float32", rows=16, cols=16)
    args.update(kw)
    with pytest.raises(ConstraintError, match=msg):
        pto.Tile(**args)


# ---- TRECIP (spec 003) -----------------------------------------------------------------
def test_trecip_errors():
    f = tile("float32", 16, 16)
    with pytest.raises(ConstraintError, match=r"TRECIP: dst.dtype must be one of \['float32', "
                       r"'float16', 'int32', 'int16'\], got 'bfloat16'"):
        pto.TRECIP(tile("bfloat16", 16, 16), tile("bfloat16", 16, 16))
    with pytest.raises(ConstraintError, match="TRECIP: dst.dtype must be one of .* got 'int8'"):
        pto.TRECIP(tile("int8", 16, 32), tile("int8", 16, 32))
    with pytest.raises(ConstraintError, match="TRECIP: src.dtype must equal dst.dtype"):
        pto.TRECIP(f, tile("float16", 16, 16))
    with pytest.raises(ConstraintError, match="TRECIP: src.loc must be TileType.Vec, got 'Mat'"):
        pto.TRECIP(f, tile("float32", 16, 16, loc=pto.TileType.Mat))
    with pytest.raises(ConstraintError, match="TRECIP: src.blayout must be BLayout.RowMajor"):
        pto.TRECIP(f, tile("float32", 16, 16, layout=CM))
    with pytest.raises(ConstraintError, match=r"TRECIP: src valid shape must equal dst's valid "
                       r"shape \(16, 16\), got \(16, 8\)"):
        pto.TRECIP(f, tile("float32", 16, 16, vc=8))
    with pytest.raises(ConstraintError, match="TRECIP: precision must be"):
        pto.TRECIP(f, tile("float32", 16, 16), precision=5)
    with pytest.raises(ConstraintError, match="TRECIP: src must be a Tile"):
        pto.TRECIP(f, np.ones((16, 16), np.float32))


def test_trecip_same_memory_a2a3():
    t = tile("float32", 16, 16)
    with pytest.raises(OverlapError, match="TRECIP: dst and src must not be the same memory on A2/A3"):
        pto.TRECIP(t, t)
    a = tile("float32", 16, 16)
    b = tile("float32", 16, 16)
    pto.TASSIGN(a, 0x1000)
    pto.TASSIGN(b, 0x1000 + 512)   # overlapping halves
    with pytest.raises(OverlapError):
        pto.TRECIP(a, b)


def test_integer_division_by_zero_always_raises():
    src = tile("int32", 8, 8)
    src.data[...] = 3
    src.data[2, 3] = 0
    dst = tile("int32", 8, 8)
    before = dst.data.copy()
    with pytest.raises(ConstraintError, match=r"TRECIP: src must be nonzero \(integer division by "
                       r"zero\), got 0 in 1 element\(s\) of src"):
        pto.TRECIP(dst, src)
    assert np.array_equal(dst.data, before)   # nothing written
    with pytest.raises(ConstraintError, match="TDIVS: scalar must be nonzero"):
        pto.TDIVS(dst, src, 0)
    with pytest.raises(ConstraintError, match="TDIV: src1 must be nonzero"):
        pto.TDIV(dst, dst, src)


def test_float_division_by_zero_debug():
    src = tile("float16", 16, 16)
    src.data[...] = 2
    src.data[5, 5] = 0
    dst = tile("float16", 16, 16)
    pto.TDIV(dst, src, src)                    # IEEE by default: 0/0 = NaN
    assert np.isnan(dst.data[5, 5])
    pto.set_debug(True)
    for call in (lambda: pto.TDIV(dst, src, src), lambda: pto.TDIVS(dst, src, 0.0),
                 lambda: pto.TDIVS(dst, 1.0, src), lambda: pto.TRECIP(dst, src),
                 lambda: pto.TRSQRT(dst, src)):
        with pytest.raises(ConstraintError, match="debug mode"):
            call()
    pto.TDIVS(dst, src, 2.0)   # a nonzero divisor is fine in debug mode


def test_debug_env_var():
    code = ("from fastisa import pto\n"
            "t = pto.Tile(pto.TileType.Vec, 'float32', 8, 8)\n"
            "try:\n    pto.TDIVS(t, t, 0.0)\nexcept ValueError as e:\n    print('RAISED', e)\n")
    env = dict(os.environ, FASTISA_PTO_DEBUG="1")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert "RAISED TDIVS: scalar must be nonzero" in out.stdout, out.stderr


# ---- TROWEXPANDEXPDIF (spec 004) and the row-expand family -----------------------------
def test_expdif_errors():
    R, C = 16, 32
    d = tile("float32", R, C)
    s0 = tile("float32", R, C)
    m1 = tile("float32", R, 1, layout=CM)
    pto.TROWEXPANDEXPDIF(d, s0, m1)
    with pytest.raises(ConstraintError, match=r"TROWEXPANDEXPDIF: dst.dtype must be one of "
                       r"\['float32', 'float16'\], got 'int32'"):
        pto.TROWEXPANDEXPDIF(tile("int32", R, C), tile("int32", R, C), tile("int32", R, 1, layout=CM))
    with pytest.raises(ConstraintError, match="TROWEXPANDEXPDIF: dst.dtype must be one of"):
        pto.TROWEXPANDEXPDIF(tile("bfloat16", R, C), tile("bfloat16", R, C),
                             tile("bfloat16", R, 1, layout=CM))
    with pytest.raises(ConstraintError, match="src1.dtype must equal dst.dtype"):
        pto.TROWEXPANDEXPDIF(d, s0, tile("float16", R, 1, layout=CM))
    with pytest.raises(ConstraintError, match="dst.blayout must be BLayout.RowMajor"):
        pto.TROWEXPANDEXPDIF(tile("float32", R, C, layout=CM), s0, m1)
    with pytest.raises(ConstraintError, match=r"src1 must be the per-row operand: valid_row == 16 "
                       r"and either ColMajor with valid_col == 1 \(mode 1\) or RowMajor with "
                       r"valid_col == 8"):
        pto.TROWEXPANDEXPDIF(d, s0, tile("float32", R, 16))        # RowMajor, 16 != 8 per row
    with pytest.raises(ConstraintError, match="src1 must be the per-row operand"):
        pto.TROWEXPANDEXPDIF(d, s0, tile("float32", 8, 1, layout=CM))   # too few rows
    with pytest.raises(ConstraintError, match="src1 must be the per-row operand"):
        pto.TROWEXPANDEXPDIF(d, s0, tile("float32", R, 8, layout=CM, vc=2))
    with pytest.raises(ConstraintError, match=r"src0 must be RowMajor with dst's valid shape"):
        pto.TROWEXPANDEXPDIF(d, tile("float32", R, C, vc=16), m1)
    with pytest.raises(ConstraintError, match="tmp must be a Tile"):
        pto.TROWEXPANDEXPDIF(d, s0, m1, tmp=np.zeros(64))


@pytest.mark.parametrize("instr", ["TROWEXPANDADD", "TROWEXPANDSUB", "TROWEXPANDMUL",
                                   "TROWEXPANDDIV", "TROWEXPANDMAX", "TROWEXPANDMIN"])
def test_row_expand_errors(instr):
    fn = getattr(pto, instr)
    d = tile("float32", 16, 32)
    full = tile("float32", 16, 32)
    with pytest.raises(ConstraintError, match=f"{instr}: dst.blayout must be BLayout.RowMajor"):
        fn(tile("float32", 16, 32, layout=CM), full, tile("float32", 16, 1, layout=CM))
    with pytest.raises(ConstraintError, match=f"{instr}: src1 must be the per-row operand"):
        fn(d, full, tile("float32", 16, 16))
    with pytest.raises(ConstraintError, match=f"{instr}: src0 must be the per-row operand"):
        fn(d, tile("float32", 16, 16), full)
    with pytest.raises(ConstraintError, match=f"{instr}: src0/src1 one must be RowMajor"):
        fn(d, tile("float32", 16, 16), tile("float32", 16, 16))
    with pytest.raises(ConstraintError, match=f"{instr}: dst.dtype must be one of"):
        fn(tile("bfloat16", 16, 32), tile("bfloat16", 16, 32), tile("bfloat16", 16, 1, layout=CM))


def test_col_expand_errors():
    d = tile("float32", 16, 32)
    with pytest.raises(ConstraintError, match=r"TCOLEXPANDADD: src0/src1 one must have dst's valid "
                       r"shape \(16, 32\) and the other valid shape \(1, 32\)"):
        pto.TCOLEXPANDADD(d, tile("float32", 16, 32), tile("float32", 2, 32))


# ---- elementwise, scalar, reductions, cvt, matmul ------------------------------------------
def test_elementwise_errors():
    a = tile("float32", 16, 16)
    with pytest.raises(ConstraintError, match=r"TADD: src1 valid shape must equal dst's valid "
                       r"shape \(16, 16\), got \(8, 16\)"):
        pto.TADD(a, a, tile("float32", 16, 16, vr=8))
    with pytest.raises(ConstraintError, match="TMUL: src0.dtype must equal dst.dtype"):
        pto.TMUL(a, tile("float16", 16, 16), a)
    with pytest.raises(ConstraintError, match="TEXP: dst.dtype must be one of"):
        pto.TEXP(tile("int32", 16, 16), tile("int32", 16, 16))
    with pytest.raises(ConstraintError, match="TEXP: dst.blayout must be BLayout.RowMajor"):
        pto.TEXP(tile("float32", 16, 16, layout=CM), tile("float32", 16, 16, layout=CM))
    with pytest.raises(ConstraintError, match="TABS: dst.dtype must be one of"):
        pto.TABS(tile("uint8", 16, 32), tile("uint8", 16, 32))
    with pytest.raises(ConstraintError, match="TSUB: dst.loc must be TileType.Vec"):
        pto.TSUB(tile("float32", 16, 16, loc=pto.TileType.Acc), a, a)


def test_scalar_errors():
    a = tile("float32", 16, 16)
    i = tile("int16", 16, 16)
    with pytest.raises(ConstraintError, match="TADDS: scalar must be a real number, got 'x'"):
        pto.TADDS(a, a, "x")
    with pytest.raises(ConstraintError, match=r"TMULS: scalar must be in \[-32768, 32767\] for "
                       r"int16, got 40000"):
        pto.TMULS(i, i, 40000)
    with pytest.raises(ConstraintError, match="TADDS: scalar must be an integer for a int16 tile"):
        pto.TADDS(i, i, 0.5)
    with pytest.raises(ConstraintError, match="TMAXS: dst.blayout must be BLayout.RowMajor"):
        pto.TMAXS(tile("float32", 16, 16, layout=CM), tile("float32", 16, 16, layout=CM), 1.0)
    pto.TMINS(tile("float32", 16, 16, layout=CM), tile("float32", 16, 16, layout=CM), 1.0)


def test_reduce_errors():
    src = tile("float32", 16, 32)
    with pytest.raises(ConstraintError, match=r"TROWMAX: dst.valid_col must be 1 \(the result goes "
                       r"to dst\[i, 0\]\), got 8"):
        pto.TROWMAX(tile("float32", 16, 8), src)
    with pytest.raises(ConstraintError, match=r"TROWSUM: dst.valid_row must equal src.valid_row "
                       r"\(16\), got 8"):
        pto.TROWSUM(tile("float32", 8, 1, layout=CM), src)
    with pytest.raises(ConstraintError, match=r"TROWSUM: \(src.dtype, dst.dtype\) must be one of"):
        pto.TROWSUM(tile("float16", 16, 1, layout=CM), src)
    with pytest.raises(ConstraintError, match="TROWMAX: dst.dtype must equal src.dtype"):
        pto.TROWMAX(tile("float16", 16, 1, layout=CM), src)
    with pytest.raises(ConstraintError, match=r"TCOLSUM: dst.valid_row must be 1"):
        pto.TCOLSUM(tile("float32", 2, 32), src)
    with pytest.raises(ConstraintError, match=r"TCOLMAX: dst.valid_col must equal src.valid_col"):
        pto.TCOLMAX(tile("float32", 1, 32, vc=16), src)


def test_cvt_matmul_move_errors():
    with pytest.raises(ConstraintError, match="TCVT: mode must be one of"):
        pto.TCVT(tile("float16", 16, 16), tile("float32", 16, 16), "SIDEWAYS")
    with pytest.raises(ConstraintError, match="TCVT: src valid shape must equal"):
        pto.TCVT(tile("float16", 16, 16), tile("float32", 16, 16, vr=3), "RINT")
    L, R_, A = pto.TileType.Left, pto.TileType.Right, pto.TileType.Acc
    a = tile("float16", 16, 16, loc=L)
    b = tile("float16", 16, 16, loc=R_)
    d = tile("float32", 16, 16, loc=A)
    pto.TMATMUL(d, a, b)
    with pytest.raises(ConstraintError, match="TMATMUL: a.loc must be TileType.Left, got 'Vec'"):
        pto.TMATMUL(d, tile("float16", 16, 16), b)
    with pytest.raises(ConstraintError, match="TMATMUL: dst.dtype must be float32"):
        pto.TMATMUL(tile("float16", 16, 16, loc=A), a, b)
    with pytest.raises(ConstraintError, match=r"TMATMUL: b.valid_row must equal a.valid_col \(K=16\)"):
        pto.TMATMUL(d, a, tile("float16", 16, 16, loc=R_, vr=8))
    with pytest.raises(ConstraintError, match=r"TMATMUL: \(a.dtype, b.dtype\) must be one of"):
        pto.TMATMUL(d, a, tile("float32", 16, 16, loc=R_))
    with pytest.raises(ConstraintError, match="TMOV: dst.dtype must equal src.dtype"):
        pto.TMOV(tile("float16", 16, 16), tile("float32", 16, 16))
    with pytest.raises(ConstraintError, match=r"TTRANS: dst valid shape must be src's transposed"):
        pto.TTRANS(tile("float32", 16, 16), tile("float32", 16, 16, vr=8))


# ---- memory: TLOAD/TSTORE/TASSIGN/GlobalTensor ---------------------------------------------
def test_memory_errors():
    t = tile("float32", 16, 16)
    with pytest.raises(AlignmentError, match="TASSIGN: addr must be a multiple of 32 bytes, got 33"):
        pto.TASSIGN(t, 33)
    with pytest.raises(AccessError, match=r"TASSIGN: addr 196608 \+ tile size 1024 bytes exceeds "
                       r"the UB capacity of 196608 bytes on A2A3"):
        pto.TASSIGN(t, 192 * 1024)
    pto.set_target("A5")
    pto.TASSIGN(t, 192 * 1024)             # A5 UB is 256 KiB
    with pytest.raises(AccessError, match="GlobalTensor: shape .* reaches element 299"):
        pto.GlobalTensor(np.zeros(100, np.float32), shape=(2, 16), strides=(284, 1))
    g = pto.GlobalTensor(np.zeros((8, 8), np.float32))
    with pytest.raises(ConstraintError, match=r"TLOAD: src shape \(rows, cols\) must be at least "
                       r"the tile valid shape \(16, 16\) \(the valid region is what moves\), "
                       r"got \(8, 8\)"):
        pto.TLOAD(t, g)
    with pytest.raises(ConstraintError, match="TSTORE: dst.dtype must equal the tile dtype float32"):
        pto.TSTORE(pto.GlobalTensor(np.zeros((16, 16), np.float16)), t)
    with pytest.raises(ConstraintError, match="set_target: target must be 'A2A3' or 'A5'"):
        pto.set_target("B7")
