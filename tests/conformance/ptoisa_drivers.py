"""fastisa-side drivers for pto-isa's CPU-simulator test directories (our code, not vendor
code): each driver reads the inputs a test's gen_data.py wrote into one case directory, runs
the computation the C++ test body (tests/cpu/st/testcase/<dir>/*_kernel.cpp) performs with
``fastisa.pto``, and returns ``(fastisa output, golden, eps)`` shaped like golden.bin.

A driver is ``f(case_dir, args, kwargs, ns)``: ``args`` / ``kwargs`` are what gen_data.py
passed to its golden generator for this case (the parameter object among them), ``ns`` is the
generator module's namespace.
"""

from __future__ import annotations

import os

import ml_dtypes
import numpy as np

from fastisa import pto

V = pto.TileType.Vec


def _param(args, kwargs):
    for x in list(args) + list(kwargs.values()):
        if hasattr(x, "__dict__") and not callable(x) and not isinstance(x, (str, bytes)):
            return x
    raise ValueError("no parameter object among the generator's arguments")


def _dtype(p):
    d = getattr(p, "dtype", None)
    if d is None:
        d = getattr(p, "data_type")
    try:
        return np.dtype(d)
    except TypeError:
        if "bf" in str(d).lower():
            return np.dtype(ml_dtypes.bfloat16)
        raise


def _read(case_dir, name, dtype):
    return np.fromfile(os.path.join(case_dir, name), dtype=dtype)


def _first(p, *names):
    for n in names:
        v = getattr(p, n, None)
        if v is not None:
            return int(v)
    return None


def _valid(p):
    vr = _first(p, "valid_row", "row", "m")
    vc = _first(p, "valid_col", "col", "n")
    return vr, vc


_OUT_ROWS = ("out_row", "dst_tile_row", "dst_row", "global_row", "tile_row", "valid_row", "row")
_IN_ROWS = ("in_row", "src_tile_row", "src_row", "global_row", "tile_row", "valid_row", "row")


def _rows_for(p, size, vc, names=_OUT_ROWS):
    for n in names:
        r = getattr(p, n, None)
        if r and size % int(r) == 0 and size // int(r) >= vc:
            return int(r)
    raise ValueError(f"cannot infer the row count of a {size}-element array")


def _tile_from(arr2d, dtype, vr, vc):
    """A Vec tile holding arr2d (columns padded to the 32-byte rule), valid vr x vc."""
    R, C = arr2d.shape
    step = max(1, 32 // dtype.itemsize)
    cols = -(-C // step) * step
    t = pto.Tile(V, dtype, R, cols, valid_row=vr, valid_col=vc)
    t.data[:, :C] = arr2d
    return t


def _scalar(case_dir, names, dtype, as_f32=False):
    for n in names:
        path = os.path.join(case_dir, n)
        if os.path.exists(path):
            size = os.path.getsize(path)
            if as_f32:                   # written with struct.pack('f', ...)
                v = np.fromfile(path, dtype=np.float32)[0]
                return int(v) if dtype.kind in "iu" else float(v)
            if size == dtype.itemsize:
                v = np.fromfile(path, dtype=dtype)[0]
            elif dtype.kind in "iu":
                v = np.fromfile(path, dtype={2: np.int16, 4: np.int32, 8: np.int64}[size])[0]
            else:
                v = np.fromfile(path, dtype={2: np.float16, 4: np.float32, 8: np.float64}[size])[0]
            return float(v) if dtype.kind not in "iu" else int(v)
    raise FileNotFoundError(f"none of {names} in the case directory")


def elementwise(fn, inputs, scalar=None, dst_init=None, outside=None, eps=1e-3,
                scalar_f32=False):
    """A driver for an elementwise test: ``inputs`` are the file names of the tile operands in
    call order, ``scalar`` the candidate scalar file names (the scalar is passed where
    ``fn``'s ``s`` goes), ``dst_init`` the file dst is loaded from (TFUSEDMULADD & co)."""
    def drive(case_dir, args, kwargs, ns):
        p = _param(args, kwargs)
        dt = _dtype(p)
        golden = _read(case_dir, "golden.bin", dt)
        vr, vc = _valid(p)
        R = _rows_for(p, golden.size, vc)
        C = golden.size // R
        tiles = []
        for k, name in enumerate(inputs):
            a = _read(case_dir, name, dt)
            r = _rows_for(p, a.size, vc, (f"src{k}_tile_row",) + _IN_ROWS)
            tiles.append(_tile_from(a.reshape(r, a.size // r), dt, vr, vc))
        init = np.zeros((R, C), dt)
        if dst_init is not None:
            init = _read(case_dir, dst_init, dt).reshape(R, C)
        dst = _tile_from(init, dt, vr, vc)
        s = _scalar(case_dir, scalar, dt, scalar_f32) if scalar else None
        _CUR["p"] = p
        fn(dst, tiles, s)
        keep = outside if outside is not None else ("dst" if dst_init else "zero")
        out = np.zeros((R, C), dt) if keep == "zero" else init.copy()
        out[:vr, :vc] = dst.data[:vr, :vc]
        return out.reshape(-1), golden, eps
    return drive


_CUR = {}


def _tdivs(d, t, s):
    """TDIVSTest cases 5-8 divide the scalar by the tile (tdivs/gen_data.py)."""
    if int(_CUR["p"].name[-1]) > 4:
        pto.TDIVS(d, s, t[0])
    else:
        pto.TDIVS(d, t[0], s)


def _bin(name):
    return lambda d, t, s: getattr(pto, name)(d, t[0], t[1])


def _un(name):
    return lambda d, t, s: getattr(pto, name)(d, t[0])


def _sc(name):
    return lambda d, t, s: getattr(pto, name)(d, t[0], s)


IN1, IN12, IN123 = ["input1.bin"], ["input1.bin", "input2.bin"], ["input1.bin", "input2.bin",
                                                                   "input3.bin"]
SC = ["scalar.bin", "input_scalar.bin", "divider.bin"]

DRIVERS = {}
for _n in ("tadd", "tsub", "tmul", "tdiv", "tmax", "tmin", "tand", "tor", "txor", "tshl",
           "tshr", "trem", "tfmod", "tprelu", "tpow"):
    DRIVERS[_n] = elementwise(_bin(_n.upper()), IN12)
for _n in ("tabs", "tneg", "texp", "tlog", "tsqrt", "trsqrt", "trecip", "trelu", "tnot"):
    DRIVERS[_n] = elementwise(_un(_n.upper()), IN1)
for _n in ("tands", "tors", "txors", "tmaxs", "tmins", "tsubs", "trems", "tfmods", "tlrelu"):
    DRIVERS[_n] = elementwise(_sc(_n.upper()), IN1, SC)
for _n in ("tadds", "tmuls", "tdivs", "tpows", "tshls", "tshrs"):
    DRIVERS[_n] = elementwise(_sc(_n.upper()), ["input.bin"], SC,
                              scalar_f32=_n in ("tadds", "tmuls", "tdivs"))
DRIVERS["tdivs"] = elementwise(_tdivs, ["input.bin"], SC, scalar_f32=True)
DRIVERS["taddc"] = elementwise(lambda d, t, s: pto.TADDC(d, *t), IN123)
DRIVERS["tsubc"] = elementwise(lambda d, t, s: pto.TSUBC(d, *t), IN123)
DRIVERS["taddsc"] = elementwise(lambda d, t, s: pto.TADDSC(d, t[0], s, t[1]), IN12, SC)
DRIVERS["tsubsc"] = elementwise(lambda d, t, s: pto.TSUBSC(d, t[0], s, t[1]), IN12, SC)
DRIVERS["texpands"] = elementwise(lambda d, t, s: pto.TEXPANDS(d, s), [], SC, scalar_f32=True)
DRIVERS["taxpy"] = elementwise(lambda d, t, s: pto.TAXPY(d, t[0], s), ["input_src.bin"], SC,
                               dst_init="input_dst.bin", scalar_f32=True)
for _n in ("tfusemuladd", "tfusemuladdrelu", "tmuladddst"):
    _api = {"tfusemuladd": "TFUSEDMULADD", "tfusemuladdrelu": "TFUSEDMULADDRELU",
            "tmuladddst": "TMULADDDST"}[_n]
    DRIVERS[_n] = elementwise(_bin(_api), ["input0.bin", "input1.bin"], dst_init="input_dst.bin")
DRIVERS["tsubrelu"] = elementwise(_bin("TSUBRELU"), ["input0.bin", "input1.bin"],
                                  dst_init="input_dst.bin")

#: Directories with no driver yet, and why (reported in the table).
WHY_NOT = {
    "tgather": "TGATHER not implemented", "tscatter": "TSCATTER not implemented",
    "mgather": "MGATHER not implemented", "mscatter": "MSCATTER not implemented",
    "tsort32": "TSORT32 not implemented", "tmrgsort": "TMRGSORT not implemented",
    "textract": "TEXTRACT not implemented", "tinsert": "TINSERT not implemented",
    "tconcat": "TCONCAT not implemented", "tfillpad": "TFILLPAD not implemented",
}

#: Functions a generator module calls between cases that are not golden generators.
SKIP_FUNCS = {"generate_case_name", "gen_case_name", "substring"}

_CATS = [
    ("bitwise", ("tand", "tands", "tor", "tors", "txor", "txors", "tnot", "tshl", "tshls",
                 "tshr", "tshrs")),
    ("arith-ext", ("trem", "trems", "tfmod", "tfmods", "tprelu", "tlrelu", "tpow", "tpows",
                   "taddc", "tsubc", "taddsc", "tsubsc", "taxpy", "tfusemuladd",
                   "tfusemuladdrelu", "tmuladddst", "tsubrelu")),
    ("elementwise", ("tadd", "tsub", "tmul", "tdiv", "tmax", "tmin", "tadds", "tsubs", "tmuls",
                     "tdivs", "tmaxs", "tmins", "tabs", "tneg", "texp", "tlog", "tsqrt",
                     "trsqrt", "trecip", "trelu", "texpands")),
    ("compare/select", ("tcmp", "tcmps", "tsel", "tsels", "tci", "ttri")),
    ("reduce", ("trowsum", "trowmax", "trowmin", "tcolsum", "tcolmax", "tcolmin", "trowprod",
                "tcolprod", "targreduceop", "trowreduceidx", "tcolreduceidx", "tpartadd",
                "tpartmul", "tpartmax", "tpartmin", "tpartargmax", "tpartargmin", "treduce",
                "tpairreducesum")),
    ("expand", ("trowexpand", "tcolexpand", "trowexpandop", "tcolexpandop", "tbroadcast")),
    ("gather/scatter", ("tgather", "tgatherb", "tscatter", "mgather", "mgather_gm2l1",
                        "mscatter", "hashfind")),
    ("sort", ("tsort32", "tmrgsort", "thistogram")),
    ("layout", ("textract", "textract_conv", "textract_quant", "tinsert", "tinsert_quant",
                "tconcat", "treshape", "tfillpad", "tsubview", "tinterleave", "tdeinterleave",
                "ttrans", "ttrans_conv", "tmov", "timg2col", "tpack")),
    ("memory", ("tload", "tloadconv", "tstore", "tstore_acc2gm", "tstore_conv", "tstore_quant",
                "tassign", "tprefetch", "setgetval", "tget_scale_addr", "tgetscaleaddr")),
    ("cube", ("tmatmul", "tmatmul_layout", "tmatmul_mx", "tmatmul_mx_nddn", "tflashattn")),
    ("convert/quant", ("tcvt", "tquant", "tquant_dn", "tdequant", "tadddeqrelu")),
]


def category(name: str) -> str:
    for cat, names in _CATS:
        if name in names:
            return cat
    return "sync/comm/misc"


def reduce_driver(fn, axis, infile):
    """Row (axis=1) or column (axis=0) reductions: golden holds one value per row / column,
    or (row reductions) a rows x k block whose first column holds them."""
    def drive(case_dir, args, kwargs, ns):
        p = _param(args, kwargs)
        dt = _dtype(p)
        golden = _read(case_dir, "golden.bin", dt)
        vr, vc = _valid(p)
        name = infile if os.path.exists(os.path.join(case_dir, infile)) else "input1.bin"
        a = _read(case_dir, name, dt)
        r = _rows_for(p, a.size, vc, _IN_ROWS)
        src = _tile_from(a.reshape(r, a.size // r), dt, vr, vc)
        if axis == 1:
            dst = pto.Tile(V, dt, max(vr, 1), max(1, 32 // dt.itemsize), valid_row=vr, valid_col=1)
            fn(dst, src)
            res = dst.data[:vr, 0]
            if golden.size == vr:
                return res.copy(), golden, 1e-3
            out = np.zeros((vr, golden.size // vr), dt)
            out[:, 0] = res
            return out.reshape(-1), golden, 1e-3
        cols = -(-vc // max(1, 32 // dt.itemsize)) * max(1, 32 // dt.itemsize)
        dst = pto.Tile(V, dt, 1, cols, valid_row=1, valid_col=vc)
        fn(dst, src)
        out = np.zeros(golden.size, dt)
        out[:vc] = dst.data[0, :vc]
        return out, golden, 1e-3
    return drive


DRIVERS["trowsum"] = reduce_driver(lambda d, s: pto.TROWSUM(d, s), 1, "input.bin")
DRIVERS["trowmax"] = reduce_driver(lambda d, s: pto.TROWMAX(d, s), 1, "input1.bin")
DRIVERS["trowmin"] = reduce_driver(lambda d, s: pto.TROWMIN(d, s), 1, "input1.bin")
DRIVERS["trowprod"] = reduce_driver(lambda d, s: pto.TROWPROD(d, s), 1, "input.bin")
DRIVERS["tcolsum"] = reduce_driver(lambda d, s: pto.TCOLSUM(d, s), 0, "input.bin")
DRIVERS["tcolmax"] = reduce_driver(lambda d, s: pto.TCOLMAX(d, s), 0, "input.bin")
DRIVERS["tcolmin"] = reduce_driver(lambda d, s: pto.TCOLMIN(d, s), 0, "input.bin")


def _ttri(case_dir, args, kwargs, ns):
    p = _param(args, kwargs)
    dt = _dtype(p)
    golden = _read(case_dir, "golden.bin", dt)
    d = pto.Tile(V, dt, p.tile_row, p.tile_col, valid_row=p.valid_row, valid_col=p.valid_col)
    pto.TTRI(d, int(p.diagonal), upper=int(p.isUpperOrLower) == 1)
    out = d.valid if golden.size == d.valid_row * d.valid_col else d.data
    return np.ascontiguousarray(out).reshape(-1), golden, 1e-3


DRIVERS["ttri"] = _ttri
