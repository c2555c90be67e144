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
        if getattr(p, "tile_row", None):     # the generators clamp the valid region to the tile
            vr, vc = min(vr, int(p.tile_row)), min(vc, int(p.tile_col))
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


# ---- gather / sort / layout ---------------------------------------------------------
def _pad_cols(n, dt):
    step = max(1, 32 // dt.itemsize)
    return max(step, -(-n // step) * step)


def _mgather(case_dir, args, kwargs, ns):
    fn = ns.get("__case_fn__", "")
    dt = np.dtype(args[1])
    golden = _read(case_dir, "golden.bin", dt)
    table = _read(case_dir, "table.bin", dt)
    idx = _read(case_dir, "indices.bin", np.int32)
    if fn == "case_row":
        R, C, T = int(args[2]), int(args[3]), int(args[4])
        oob = kwargs.get("oob", args[5] if len(args) > 5 else "undefined")
        gm = pto.GlobalTensor(table.reshape(T, C))
        it = pto.Tile(V, np.int32, R, 8)
        it.data[:, 0] = idx[:R]
        dst = pto.Tile(V, dt, R, _pad_cols(C, dt), valid_row=R, valid_col=C)
        pto.MGATHER(dst, gm, it, coalesce="row", oob=oob)
        return np.ascontiguousarray(dst.valid).reshape(-1), golden, 1e-3
    if fn == "case_elem" and idx.size == int(args[2]):
        shape, opos = (1, int(args[2])), 4
    else:
        shape, opos = (int(args[2]), int(args[3])), 5
    oob = kwargs.get("oob", args[opos] if len(args) > opos else "undefined")
    R, C = shape
    it = pto.Tile(V, np.int32, R, _pad_cols(C, np.dtype(np.int32)), valid_row=R, valid_col=C)
    it.data[:R, :C] = idx.reshape(R, C)
    dst = pto.Tile(V, dt, R, _pad_cols(C, dt), valid_row=R, valid_col=C)
    pto.MGATHER(dst, pto.GlobalTensor(table), it, coalesce="elem", oob=oob)
    return np.ascontiguousarray(dst.valid).reshape(-1), golden, 1e-3


DRIVERS["mgather"] = _mgather
DRIVERS["mgather_gm2l1"] = _mgather


def _tsort32(case_dir, args, kwargs, ns):
    p = _param(args, kwargs)
    dt = _dtype(p)
    R, C = int(p.rows), int(p.cols)
    golden = _read(case_dir, "golden.bin", dt)
    coef = 8 // dt.itemsize
    src = pto.Tile(V, dt, R, _pad_cols(C, dt), valid_row=R, valid_col=C)
    src.data[:, :C] = _read(case_dir, "input0.bin", dt).reshape(R, C)
    idx = pto.Tile(V, np.uint32, R, _pad_cols(C, np.dtype(np.uint32)), valid_row=R, valid_col=C)
    raw = _read(case_dir, "input1.bin", np.uint32)
    idx.data[:, :C] = raw.reshape(-1, C)[:R] if raw.size >= R * C else np.broadcast_to(raw[:C], (R, C))
    dst = pto.Tile(V, dt, R, coef * _pad_cols(C, dt))
    pto.TSORT32(dst, src, idx)
    out = np.ascontiguousarray(dst.data[:, : coef * C]).reshape(-1)
    return out[: golden.size], golden, 1e-3


DRIVERS["tsort32"] = _tsort32


def _tmrgsort(case_dir, args, kwargs, ns):
    """tmrgsort/tmrgsort_kernel.cpp: the float16 cases are launched with T = uint16_t and run
    as half tiles of twice the float column counts (``TYPE_COEF``), blockLen scaled the same
    way in the single form; the topk form is a loop of single-form merges (blockLen 64,
    unscaled, times 4 while 4 * blockLen fits) and a 2-list merge of the tail."""
    p = _param(args, kwargs)
    dt = _dtype(p)
    golden = _read(case_dir, "golden.bin", dt)
    coef = 4 // dt.itemsize                  # the kernel's TYPE_COEF
    name = str(p.case_name)
    if name.startswith("TMRGSORTTest.case_topk"):
        a = _read(case_dir, "input0.bin", dt)
        cols, topk = a.size, int(p.topk) * coef
        src = pto.Tile(V, dt, 1, cols)
        src.data[0] = a
        tmp = pto.Tile(V, dt, 1, cols)
        dst = pto.Tile(V, dt, 1, topk)
        block = 64
        while block * 4 <= cols:
            pto.TMRGSORT(tmp, src, block)
            n = cols // (block * 4) * (block * 4)
            src.data[0, :n] = tmp.data[0, :n]
            block *= 4
        if block < cols:
            runs, inner, i = [], cols, block       # FillMrgArray
            while i >= 64:
                c = inner // i
                runs += [i] * c
                inner -= c * i
                i //= 4
            done = 0
            for k in range(len(runs) - 1):
                done += runs[k]
                n0, n1 = min(done, topk), min(runs[k + 1], topk)
                s0 = pto.Tile(V, dt, 1, topk, valid_col=n0)
                s1 = pto.Tile(V, dt, 1, topk, valid_col=n1)
                s0.data[0, :n0] = src.data[0, :n0]
                s1.data[0, :n1] = src.data[0, done:done + n1]
                pto.TMRGSORT(dst, pto.MrgSortExecutedNumList(), tmp, s0, s1)
                src.data[0, :topk] = dst.data[0, :topk]
        else:
            dst.data[0, :topk] = tmp.data[0, :topk]
        return dst.data[0, : golden.size].copy(), golden, 1e-3
    if int(getattr(p, "block_len", 0) or 0) > 0:
        a = _read(case_dir, "input0.bin", dt)
        src = pto.Tile(V, dt, 1, _pad_cols(a.size, dt))
        src.data[0, : a.size] = a
        dst = pto.Tile(V, dt, 1, _pad_cols(a.size, dt), valid_col=a.size)
        pto.TMRGSORT(dst, src, int(p.block_len) * coef)
        return dst.data[0, : golden.size].copy(), golden, 1e-3
    tiles = []
    for k in range(int(p.input_num)):
        a = _read(case_dir, f"input{k}.bin", dt)
        t = pto.Tile(V, dt, 1, _pad_cols(a.size, dt), valid_col=a.size)
        t.data[0, : a.size] = a
        tiles.append(t)
    topk = golden.size
    dst = pto.Tile(V, dt, 1, _pad_cols(topk, dt), valid_col=topk)
    pto.TMRGSORT(dst, pto.MrgSortExecutedNumList(), None, *tiles,
                 exhausted=name.startswith("TMRGSORTTest.case_exhausted"))
    return dst.data[0, :topk].copy(), golden, 1e-3


DRIVERS["tmrgsort"] = _tmrgsort


def _tconcat(case_dir, args, kwargs, ns):
    p = _param(args, kwargs)
    dt = _dtype(p)
    mode = getattr(p, "idx_tiles", "none")
    golden = _read(case_dir, "golden.bin", dt)
    R = int(p.valid_row)
    ts = []
    for k, name in ((0, "input1.bin"), (1, "input2.bin")):
        rows, cols = int(getattr(p, f"src{k}_tile_row")), int(getattr(p, f"src{k}_tile_col"))
        a = _read(case_dir, name, dt).reshape(rows, cols)
        t = _tile_from(a, dt, R, int(getattr(p, f"valid_col{k}")))
        ts.append(t)
    DR, DC = int(p.dst_tile_row), int(p.dst_tile_col)
    if mode != "none":
        it = np.dtype(p.idxtype)
        i0 = _tile_from(_read(case_dir, "input1_idx.bin", it).reshape(int(p.src0_idx_row), -1),
                        it, R, 1)
        i1 = _tile_from(_read(case_dir, "input2_idx.bin", it).reshape(int(p.src1_idx_row), -1),
                        it, R, 1)
        dst = _tile_from(np.zeros((DR, DC), dt), dt, R, DC)
        extra = ()
        if mode == "dst":
            extra = (_tile_from(np.zeros((int(p.dst_idx_row), int(p.dst_idx_col)), it), it, R, 1),)
        pto.TCONCAT(dst, ts[0], ts[1], *extra, i0, i1)
        return np.ascontiguousarray(dst.data[:DR, :DC]).reshape(-1), golden, 1e-3
    dst = _tile_from(np.zeros((DR, DC), dt), dt, R, ts[0].valid_col + ts[1].valid_col)
    pto.TCONCAT(dst, ts[0], ts[1])
    out = np.zeros((DR, DC), dt)
    out[:R, : dst.valid_col] = dst.valid
    return out.reshape(-1)[: golden.size], golden, 1e-3


DRIVERS["tconcat"] = _tconcat


def _tgather(case_dir, args, kwargs, ns):
    p = _param(args, kwargs)
    if type(p).__name__.endswith("1D"):
        sdt = np.dtype(p.src_type)
        golden = _read(case_dir, "golden.bin", sdt)
        src = _tile_from(_read(case_dir, "src0.bin", sdt).reshape(p.src_row, p.src_col), sdt,
                         p.src_row, p.src_col)
        R, C = int(p.dst_row), int(p.dst_col)
        it = _tile_from(_read(case_dir, "src1.bin", np.int32).reshape(R, C), np.dtype(np.int32),
                        R, C)
        dst = _tile_from(np.zeros((R, C), sdt), sdt, R, C)
        pto.TGATHER(dst, src, it)
        return np.ascontiguousarray(dst.valid).reshape(-1), golden, 1e-3
    sdt, ddt = np.dtype(p.src_type), np.dtype(p.dst_type)
    golden = _read(case_dir, "golden.bin", ddt)
    x = _read(case_dir, "x1_gm.bin", sdt)
    R, C = int(p.row), int(p.col)
    src = _tile_from(x.reshape(R, C), sdt, R, C)
    axis = "col" if "Col" in type(p).__name__ else "row"
    n = golden.size
    dst = pto.Tile(V, ddt, R, _pad_cols(C, ddt))
    pto.TGATHER(dst, src, maskPattern=int(p.pattern), axis=axis)
    if axis == "row":
        return dst.buffer[:n].copy(), golden, 1e-3
    out = np.ascontiguousarray(dst.data[:, :C]).reshape(-1)
    return out[:n], golden, 1e-3


DRIVERS["tgather"] = _tgather
for _k in ("tgather", "mgather", "tsort32", "tmrgsort", "tconcat"):
    WHY_NOT.pop(_k, None)


# ---- compare / index generation / partial / expand --------------------------------------
def _tcmp(case_dir, args, kwargs, ns):
    p = _param(args, kwargs)
    dt, ddt = _dtype(p), np.dtype(p.dst_dtype)
    golden = _read(case_dir, "golden.bin", ddt)
    R, C = int(p.tile_row), int(p.tile_col)
    vr, vc = int(p.valid_row), int(p.valid_col)
    a = _tile_from(_read(case_dir, "input1.bin", dt).reshape(R, C), dt, vr, vc)
    b = _tile_from(_read(case_dir, "input2.bin", dt).reshape(R, C), dt, vr, vc)
    cols = golden.size // R
    d = pto.Tile(V, ddt, R, _pad_cols(cols, ddt), valid_row=vr, valid_col=cols)
    pto.TCMP(d, a, b, str(p.cmp_mode))
    out = np.zeros((R, cols), ddt)
    out[:vr] = d.data[:vr, :cols]
    return out.reshape(-1), golden, 1e-3


DRIVERS["tcmp"] = _tcmp


def _tci(case_dir, args, kwargs, ns):
    golden = _read(case_dir, "golden.bin", np.int32)
    start, desc = int(args[1]), str(args[2]) in ("True", "1") or args[2] is True
    d = pto.Tile(V, np.int32, 1, _pad_cols(golden.size, np.dtype(np.int32)),
                 valid_col=golden.size)
    pto.TCI(d, start, descending=desc)
    return d.data[0, : golden.size].copy(), golden, 1e-3


DRIVERS["tci"] = _tci


def _part(api):
    def drive(case_dir, args, kwargs, ns):
        dt = np.dtype(args[0]) if args else np.dtype(np.float32)
        golden = _read(case_dir, "golden.bin", dt)
        n = golden.size
        R = int(round(n ** 0.5))
        C = n // R
        a = _tile_from(_read(case_dir, "input1.bin", dt).reshape(R, C), dt, R, C)
        b = _tile_from(_read(case_dir, "input2.bin", dt).reshape(R, C), dt, R // 2, C // 2)
        d = _tile_from(np.zeros((R, C), dt), dt, R, C)
        getattr(pto, api)(d, a, b)
        return np.ascontiguousarray(d.valid).reshape(-1), golden, 1e-3
    return drive


for _n in ("tpartadd", "tpartmax", "tpartmin"):
    DRIVERS[_n] = _part(_n.upper())


def _tcolexpand(case_dir, args, kwargs, ns):
    p = _param(args, kwargs)
    dt = _dtype(p)
    golden = _read(case_dir, "golden.bin", dt)
    R, C = int(p.tile_row), int(p.tile_col)
    vr, vc = int(p.valid_row), int(p.valid_col)
    s = _tile_from(_read(case_dir, "input1.bin", dt).reshape(R, C), dt, 1, vc)
    d = _tile_from(np.zeros((R, C), dt), dt, vr, vc)
    pto.TCOLEXPAND(d, s)
    out = np.zeros((R, C), dt)
    out[:vr, :vc] = d.valid
    return out.reshape(-1), golden, 1e-3


DRIVERS["tcolexpand"] = _tcolexpand


def _expandop(axis):
    """TROWEXPAND<op> (axis 'row': one value per row, a ColMajor [R, 1] tile) and
    TCOLEXPAND<op> (axis 'col': one value per column, a [1, C] tile)."""
    def drive(case_dir, args, kwargs, ns):
        p = _param(args, kwargs)
        op = str(args[1]).strip("'")
        dt = _dtype(p)
        golden = _read(case_dir, "golden.bin", dt)
        R, C = int(p.tile_row), int(p.tile_col)
        ir = int(getattr(p, "in_row", getattr(p, "src_row", R)))
        ic = int(getattr(p, "in_col", getattr(p, "src_col", C)))
        orow = int(getattr(p, "out_row", getattr(p, "dst_row", R)))
        ocol = int(getattr(p, "out_col", getattr(p, "dst_col", C)))
        a = _tile_from(_read(case_dir, "input1.bin", dt).reshape(ir, ic), dt, R, C)
        v = _read(case_dir, "input2.bin", dt)
        if axis == "row":
            step = max(1, 32 // dt.itemsize)
            rows = -(-ir // step) * step
            b = pto.Tile(V, dt, rows, 1, blayout=pto.BLayout.ColMajor, valid_row=R, valid_col=1)
            b.data[:ir, 0] = v[:ir]
        else:
            b = _tile_from(v.reshape(1, -1), dt, 1, C)
        d = _tile_from(np.zeros((orow, ocol), dt), dt, R, C)
        name = ("TROWEXPAND" if axis == "row" else "TCOLEXPAND") + op.upper()
        getattr(pto, name)(d, a, b)
        out = np.zeros((orow, ocol), dt)
        out[:R, :C] = d.valid
        return out.reshape(-1), golden, 1e-3
    return drive


DRIVERS["trowexpandop"] = _expandop("row")
DRIVERS["tcolexpandop"] = _expandop("col")


def _tsel(case_dir, args, kwargs, ns):
    p = _param(args, kwargs)
    dt = _dtype(p)
    golden = _read(case_dir, "golden.bin", dt)
    R, C, vr, vc = int(p.rows), int(p.cols), int(p.validRows), int(p.validCols)
    a = _tile_from(_read(case_dir, "input0.bin", dt).reshape(R, C), dt, vr, vc)
    b = _tile_from(_read(case_dir, "input1.bin", dt).reshape(R, C), dt, vr, vc)
    m = _read(case_dir, "mask.bin", np.uint8)
    mcols = m.size // R
    mt = _tile_from(m.reshape(R, mcols), np.dtype(np.uint8), R, mcols)
    d = _tile_from(np.zeros((R, C), dt), dt, vr, vc)
    pto.TSEL(d, mt, a, b)
    out = np.zeros((R, C), dt)
    out[:vr, :vc] = d.valid
    return out.reshape(-1), golden, 1e-3


DRIVERS["tsel"] = _tsel


def _argreduce(case_dir, args, kwargs, ns):
    p = _param(args, kwargs)
    op = str(args[1]).strip("'")
    dt, it = _dtype(p), np.dtype(p.idxtype)
    golden = _read(case_dir, "golden.bin", it)
    R, C = int(p.tile_row), int(p.tile_col)
    src = _tile_from(_read(case_dir, "input.bin", dt).reshape(int(p.in_row), int(p.in_col)),
                     dt, R, C)
    orow, ocol = int(p.out_row), int(p.out_col)
    axis, _, kind = op.rpartition("_")
    row = axis.startswith("row")
    idx = _tile_from(np.zeros((orow, ocol), it), it, R if row else 1, 1 if row else C)
    name = ("TROWARG" if row else "TCOLARG") + kind.upper()
    if "val" in axis:
        val = _tile_from(np.zeros((orow, ocol), dt), dt, R if row else 1, 1 if row else C)
        getattr(pto, name)(val, idx, src, None)
    else:
        getattr(pto, name)(idx, src, None)
    out = np.zeros((orow, ocol), it)
    if row:
        out[:R, 0] = idx.data[:R, 0]
    else:
        out[0, :C] = idx.data[0, :C]
    return out.reshape(-1), golden, 1e-3


DRIVERS["targreduceop"] = _argreduce


def _textract(case_dir, args, kwargs, ns):
    p = _param(args, kwargs)
    sdt, ddt = np.dtype(p.src_type), np.dtype(p.dst_type)
    golden = _read(case_dir, "golden.bin", ddt)
    vr, vc, r0, c0 = int(p.valid_rows), int(p.valid_cols), int(p.idx_row), int(p.idx_col)
    src = _tile_from(_read(case_dir, "input.bin", sdt).reshape(vr, vc), sdt, vr, vc)
    d = _tile_from(np.zeros((vr - r0, vc - c0), ddt), ddt, vr - r0, vc - c0)
    pto.TEXTRACT(d, src, r0, c0)
    return np.ascontiguousarray(d.valid).reshape(-1), golden, 1e-3


DRIVERS["textract"] = _textract


def _tinsert(case_dir, args, kwargs, ns):
    p = _param(args, kwargs)
    sdt, ddt = np.dtype(p.src_type), np.dtype(p.dst_type)
    golden = _read(case_dir, "golden.bin", ddt)
    sr, sc = int(p.src_valid_rows), int(p.src_valid_cols)
    dr, dc = int(p.dst_valid_rows), int(p.dst_valid_cols)
    src = _tile_from(_read(case_dir, "input.bin", sdt).reshape(sr, sc), sdt, sr, sc)
    d = _tile_from(np.zeros((dr, dc), ddt), ddt, dr, dc)
    pto.TINSERT(d, src, dr - sr, dc - sc)
    return np.ascontiguousarray(d.valid).reshape(-1), golden, 1e-3


DRIVERS["tinsert"] = _tinsert


def _tcvt(case_dir, args, kwargs, ns):
    p = _param(args, kwargs)
    sdt, ddt = _np_or_bf16(p.srctype), _np_or_bf16(p.dsttype)
    golden = _read(case_dir, "golden.bin", ddt)
    M, N = int(p.m), int(p.n)
    src = _tile_from(_read(case_dir, "x1_gm.bin", sdt).reshape(M, N), sdt, M, N)
    d = _tile_from(np.zeros((M, N), ddt), ddt, M, N)
    mode = str(p.mode).split("::")[-1]
    pto.TCVT(d, src, mode, satMode=str(p.saturation_mode).split("::")[-1])
    return np.ascontiguousarray(d.valid).reshape(-1), golden, 1e-3


def _np_or_bf16(t):
    try:
        return np.dtype(t)
    except TypeError:
        return np.dtype(ml_dtypes.bfloat16)


DRIVERS["tcvt"] = _tcvt


def _tcmps(case_dir, args, kwargs, ns):
    p = _param(args, kwargs)
    dt = _dtype(p)
    golden = _read(case_dir, "golden.bin", np.uint8)
    R, C = int(p.tile_row), int(p.tile_col)
    vr, vc = int(p.valid_row), int(p.valid_col)
    a = _tile_from(_read(case_dir, "input1.bin", dt).reshape(R, C), dt, vr, vc)
    s = _read(case_dir, "input2.bin", dt)[0]
    s = int(s) if dt.kind in "iu" else float(s)
    cols = golden.size // R
    d = pto.Tile(V, np.uint8, R, _pad_cols(cols, np.dtype(np.uint8)), valid_row=R, valid_col=cols)
    pto.TCMPS(d, a, s, str(p.mode).split("::")[-1])
    return np.ascontiguousarray(d.data[:, :cols]).reshape(-1), golden, 1e-3


DRIVERS["tcmps"] = _tcmps


def _tile_at(loc, arr, dt, vr, vc):
    R, C = arr.shape
    step = max(1, 32 // dt.itemsize)
    t = pto.Tile(loc, dt, R, -(-C // step) * step, valid_row=vr, valid_col=vc)
    t.data[:, :C] = arr
    return t


def _tmatmul(case_dir, args, kwargs, ns):
    p = _param(args, kwargs)
    at, bt, ct = (_np_or_bf16(x) for x in (p.atype, p.btype, p.ctype))
    M, K, N = int(p.m), int(p.k), int(p.n)
    golden = _read(case_dir, "golden.bin", ct)
    reps = int(getattr(p, "repeats", 1) or 1)
    xa = _read(case_dir, "x1_gm.bin", at).reshape(reps, M, K)
    xb = _read(case_dir, "x2_gm.bin", bt).reshape(reps, K, N)
    c = _tile_at(pto.TileType.Acc, np.zeros((M, N), ct), ct, M, N)
    for i in range(reps):     # repeats: K split into blocks accumulated in the Acc tile
        a = _tile_at(pto.TileType.Left, xa[i], at, M, K)
        b = _tile_at(pto.TileType.Right, xb[i], bt, K, N)
        if i:
            pto.TMATMUL_ACC(c, c, a, b)
        elif p.is_bias:
            bdt = _np_or_bf16(p.bias_type)
            bias = _tile_at(pto.TileType.Bias, _read(case_dir, "bias_gm.bin", bdt).reshape(1, N),
                            bdt, 1, N)
            pto.TMATMUL_BIAS(c, a, b, bias)
        else:
            pto.TMATMUL(c, a, b)
    return np.ascontiguousarray(c.valid).reshape(-1), golden, 1e-3


DRIVERS["tmatmul"] = _tmatmul


def _ttrans(case_dir, args, kwargs, ns):
    p = _param(args, kwargs)
    dt = _np_or_bf16(p.srctype)
    M, N = int(p.m), int(p.n)
    golden = _read(case_dir, "golden.bin", dt)
    s = _tile_from(_read(case_dir, "x1_gm.bin", dt).reshape(M, N), dt, M, N)
    d = _tile_from(np.zeros((N, M), dt), dt, N, M)
    pto.TTRANS(d, s)
    return np.ascontiguousarray(d.valid).reshape(-1), golden, 1e-3


DRIVERS["ttrans"] = _ttrans


def _tscatter(case_dir, args, kwargs, ns):
    p = _param(args, kwargs)
    kind = type(p).__name__
    if kind == "TScatterParams":            # index form: dst.storage[idx[i, j]] = src[i, j]
        dt, it = np.dtype(p.data_type), np.dtype(p.idx_type)
        golden = _read(case_dir, "golden.bin", dt)
        R, C = int(p.row), int(p.col)
        src = _tile_from(_read(case_dir, "input1.bin", dt).reshape(R, C), dt, R, C)
        ir, ic = int(p.idx_row), int(p.idx_col)
        idx = _tile_from(_read(case_dir, "input2.bin", it).reshape(ir, ic), it, ir, ic)
        d = pto.Tile(V, dt, R, C)
        pto.TSCATTER(d, src, idx)
        return d.buffer.copy(), golden, 1e-3
    dt = np.dtype(p.src_type)
    golden = _read(case_dir, "golden.bin", dt)
    x = _read(case_dir, "x1_gm.bin", dt)
    if kind.endswith("ColMasked"):
        SR, SC, DR, DC = int(p.src_row), int(p.src_col), int(p.dst_row), int(p.dst_col)
        src = _tile_from(x.reshape(SR, SC), dt, SR, SC)
        d = _tile_from(np.zeros((DR, DC), dt), dt, DR, DC)
        pto.TSCATTER(d, src, maskPattern=int(p.pattern), axis="col")
    else:
        DR, DC = int(p.row), int(p.dst_col)
        sc = x.size // DR
        src = pto.Tile(V, dt, DR, sc, valid_row=DR, valid_col=sc)
        src.data[...] = x.reshape(DR, sc)
        d = _tile_from(np.zeros((DR, DC), dt), dt, DR, DC)
        pto.TSCATTER(d, src, maskPattern=int(p.pattern))
    return np.ascontiguousarray(d.valid).reshape(-1), golden, 1e-3


DRIVERS["tscatter"] = _tscatter
WHY_NOT.pop("tscatter", None)


def _trowexpand(case_dir, args, kwargs, ns):
    golden = _read(case_dir, "golden.bin", np.float32)
    x = _read(case_dir, "input.bin", np.float32)
    n = int(round(x.size ** 0.5))
    s = _tile_from(x.reshape(n, x.size // n), np.dtype(np.float32), n, x.size // n)
    d = _tile_from(np.zeros((n, x.size // n), np.float32), np.dtype(np.float32), n, x.size // n)
    pto.TROWEXPAND(d, s)
    return np.ascontiguousarray(d.valid).reshape(-1), golden, 1e-3


DRIVERS["trowexpand"] = _trowexpand


def _tsels(case_dir, args, kwargs, ns):
    p = _param(args, kwargs)
    dt = _dtype(p)
    golden = _read(case_dir, "golden.bin", dt)
    H, W = int(p.tile_row), int(p.tile_col)
    vr, vc = int(p.valid_row), int(p.valid_col)
    src = _tile_from(_read(case_dir, "input.bin", dt).reshape(H, W), dt, vr, vc)
    words = _read(case_dir, "mask.bin", np.uint32)
    per = words.size // H
    m = _tile_from(words.reshape(H, per), np.dtype(np.uint32), H, per)
    s = _read(case_dir, "scalar.bin", dt)[0]
    s = int(s) if dt.kind in "iu" else float(s)
    d = _tile_from(np.zeros((H, W), dt), dt, vr, vc)
    pto.TSELS(d, m, src, None, s)
    out = np.zeros((H, W), dt)
    out[:vr, :vc] = d.valid
    return out.reshape(-1), golden, 1e-3


DRIVERS["tsels"] = _tsels


def _interleave(deinter):
    def drive(case_dir, args, kwargs, ns):
        p = _param(args, kwargs)
        dt = _dtype(p)
        R, C = int(p.row), int(p.col)
        g0, g1 = _read(case_dir, "dst0.bin", dt), _read(case_dir, "dst1.bin", dt)
        d0 = _tile_from(np.zeros((R, C), dt), dt, R, C)
        d1 = _tile_from(np.zeros((R, C), dt), dt, R, C)
        if deinter and int(getattr(p, "mode", 0)) != 0:
            src = _tile_from(_read(case_dir, "src.bin", dt).reshape(R, 2 * C), dt, R, 2 * C)
            pto.TDEINTERLEAVE(d1, d0, src)
        else:
            s0 = _tile_from(_read(case_dir, "input0.bin", dt).reshape(R, C), dt, R, C)
            s1 = _tile_from(_read(case_dir, "input1.bin", dt).reshape(R, C), dt, R, C)
            (pto.TDEINTERLEAVE if deinter else pto.TINTERLEAVE)(d1, d0, s1, s0)
        got = np.concatenate([np.ascontiguousarray(d0.valid).reshape(-1),
                              np.ascontiguousarray(d1.valid).reshape(-1)])
        return got, np.concatenate([g0, g1]), 1e-3
    return drive


DRIVERS["tinterleave"] = _interleave(False)
DRIVERS["tdeinterleave"] = _interleave(True)


# ---- issue 13, second round: partial arg-reductions, MSCATTER ---------------------------
def _partarg(api):
    def drive(case_dir, args, kwargs, ns):
        H, W = int(ns["H"]), int(ns["W"])
        vh, vw = int(ns["VALID_H"]), int(ns["VALID_W"])
        f4, u4 = np.dtype(np.float32), np.dtype(np.uint32)
        v0 = _tile_from(_read(case_dir, "input0_val.bin", f4).reshape(H, W), f4, H, W)
        i0 = _tile_from(_read(case_dir, "input0_idx.bin", u4).reshape(H, W), u4, H, W)
        # the C++ test loads src1 as a vh x vw global tensor with row stride W
        v1 = _tile_from(_read(case_dir, "input1_val.bin", f4).reshape(H, W)[:vh, :vw], f4, vh, vw)
        i1 = _tile_from(_read(case_dir, "input1_idx.bin", u4).reshape(H, W)[:vh, :vw], u4, vh, vw)
        dv = _tile_from(np.zeros((H, W), f4), f4, H, W)
        di = _tile_from(np.zeros((H, W), u4), u4, H, W)
        getattr(pto, api)(dv, v0, v1, di, i0, i1)
        gv, gi = _read(case_dir, "golden_val.bin", f4), _read(case_dir, "golden_idx.bin", u4)
        got = np.concatenate([dv.valid.reshape(-1), di.valid.reshape(-1).astype(np.float32)])
        return got, np.concatenate([gv, gi.astype(np.float32)]), 1e-3
    return drive


DRIVERS["tpartargmax"] = _partarg("TPARTARGMAX")
DRIVERS["tpartargmin"] = _partarg("TPARTARGMIN")


def _mscatter(case_dir, args, kwargs, ns):
    fn = ns["__case_fn__"]
    dt = np.dtype(args[1])
    kw = dict(kwargs)
    golden = _read(case_dir, "golden.bin", dt)
    src = _read(case_dir, "src.bin", dt)
    idx = _read(case_dir, "indices.bin", np.int32)
    oob = kw.get("oob", "undefined")
    atomic = kw.get("atomic", "none")
    if fn == "case_row":
        r, c, tr = (int(x) for x in args[2:5])
        st = _tile_from(src.reshape(r, c), dt, r, c)
        it = _tile_from(idx.reshape(r, 1), np.dtype(np.int32), r, 1)
        table = np.zeros((tr, c), dt)
        gm = pto.GlobalTensor(table, shape=(1, 1, 1, tr, c))
        pto.MSCATTER(gm, st, it, coalesce="row", atomic=atomic, oob=oob)
    else:
        if fn == "case_elem":
            r, c, ts = 1, int(args[2]), int(args[3])
        else:
            r, c, ts = (int(x) for x in args[2:5])
        st = _tile_from(src.reshape(r, c), dt, r, c)
        it = _tile_from(idx.reshape(r, c), np.dtype(np.int32), r, c)
        table = np.zeros(ts, dt)
        gm = pto.GlobalTensor(table, shape=(1, 1, 1, 1, ts))
        pto.MSCATTER(gm, st, it, coalesce="elem", atomic=atomic, oob=oob)
    return table.reshape(-1), golden, 1e-3


DRIVERS["mscatter"] = _mscatter
WHY_NOT.pop("mscatter", None)


def _tsubview(case_dir, args, kwargs, ns):
    p = _param(args, kwargs)
    dt = _dtype(p)
    R, C = int(p.tile_row), int(p.tile_col)
    x = _read(case_dir, "input.bin", dt).reshape(int(p.global_row), int(p.global_col))
    src = _tile_from(x[:R, :C], dt, R, C)
    sub = pto.Tile(V, dt, R, C, valid_row=int(p.sub_row), valid_col=int(p.sub_col))
    pto.TSUBVIEW(sub, src, 0, 0)
    return np.ascontiguousarray(sub.valid).reshape(-1), _read(case_dir, "golden.bin", dt), 1e-3


DRIVERS["tsubview"] = _tsubview


def _tpairreducesum(case_dir, args, kwargs, ns):
    p = _param(args, kwargs)
    dt = _dtype(p)
    R, C = int(p.row), int(p.col)
    src = _tile_from(_read(case_dir, "input.bin", dt).reshape(R, C), dt, R, C)
    dst = _tile_from(np.full((R, C), 7, dt), dt, R, C)
    pto.TPAIRREDUCESUM(dst, src)
    return np.ascontiguousarray(dst.valid).reshape(-1), _read(case_dir, "golden.bin", dt), 1e-3


DRIVERS["tpairreducesum"] = _tpairreducesum


def _tprefetch(case_dir, args, kwargs, ns):
    p = _param(args, kwargs)
    dt = _dtype(p)
    R, C = int(p.tile_row), int(p.tile_col)
    vr, vc = int(p.valid_row), int(p.valid_col)
    src = _tile_from(_read(case_dir, "input.bin", dt).reshape(R, C), dt, vr, vc)
    dst = _tile_from(np.zeros((R, C), dt), dt, vr, vc)
    pto.TPREFETCH(dst, src)
    out = np.ascontiguousarray(dst.data).reshape(-1)
    return out, _read(case_dir, "golden.bin", dt), 1e-3


DRIVERS["tprefetch"] = _tprefetch


def _tdequant(case_dir, args, kwargs, ns):
    p = _param(args, kwargs)
    st, dt = np.dtype(p.src_type), np.dtype(p.dst_type)
    R, C, vr, vc = int(p.row), int(p.col), int(p.valid_row), int(p.valid_col)
    src = _tile_from(_read(case_dir, "input.bin", st).reshape(R, C), st, vr, vc)
    par = []
    for name in ("scale.bin", "offset.bin"):
        t = pto.Tile(V, dt, R, 1, blayout=pto.BLayout.ColMajor, valid_row=vr, valid_col=1)
        t.data[:, 0] = _read(case_dir, name, dt)
        par.append(t)
    dst = _tile_from(np.zeros((R, C), dt), dt, vr, vc)
    pto.TDEQUANT(dst, src, par[0], par[1])
    return np.ascontiguousarray(dst.data).reshape(-1), _read(case_dir, "golden.bin", dt), 1e-3


DRIVERS["tdequant"] = _tdequant


def _tadddeqrelu(case_dir, args, kwargs, ns):
    p = _param(args, kwargs)
    i4, f2 = np.dtype(np.int32), np.dtype(np.float16)
    vr, vc = int(p.valid_row), int(p.valid_col)
    R, C = max(int(p.row), vr), max(int(p.col), vc)
    a = _tile_from(np.pad(_read(case_dir, "input0.bin", i4).reshape(vr, vc),
                          ((0, R - vr), (0, C - vc))), i4, vr, vc)
    b = _tile_from(np.pad(_read(case_dir, "input1.bin", i4).reshape(vr, vc),
                          ((0, R - vr), (0, C - vc))), i4, vr, vc)
    dst = _tile_from(np.zeros((R, C), f2), f2, vr, vc)
    tmp = _tile_from(np.zeros((R, C), i4), i4, vr, vc)
    pto.TADDDEQRELU(dst, a, b, float(p.deq_scale), tmp)
    return (np.ascontiguousarray(dst.valid).reshape(-1), _read(case_dir, "golden.bin", f2),
            1e-3)


DRIVERS["tadddeqrelu"] = _tadddeqrelu


def _tgatherb(case_dir, args, kwargs, ns):
    p = _param(args, kwargs)
    dt = np.dtype(p.dtype)
    src_a = _read(case_dir, "x.bin", dt).reshape(int(p.src_s1), int(p.src_s0))
    off_a = _read(case_dir, "offset.bin", np.uint32)
    R, C = int(p.dst_s1), int(p.dst_s0)
    nb = off_a.size // R
    src = _tile_from(src_a, dt, *src_a.shape)
    off = _tile_from(off_a.reshape(R, nb), np.dtype(np.uint32), R, nb)
    dst = _tile_from(np.zeros((R, C), dt), dt, R, C)
    pto.TGATHERB(dst, src, off)
    return np.ascontiguousarray(dst.valid).reshape(-1), _read(case_dir, "golden.bin", dt), 1e-3


DRIVERS["tgatherb"] = _tgatherb


def _hashfind(case_dir, args, kwargs, ns):
    """The hashfind test body (a linear-probing hash-table lookup written with tile
    instructions) as fastisa.pto calls: hash with shifts/xors/multiplies on uint32 tiles,
    MGATHER of keys and values per probe, TCMP/TSEL/TOR on packed masks."""
    R, C = int(kwargs["tile_rows"]), int(kwargs["tile_cols"])
    cap, max_probe = int(kwargs["cap"]), int(kwargs["max_probe"])
    i4, u4, u1 = np.dtype(np.int32), np.dtype(np.uint32), np.dtype(np.uint8)
    keys = pto.GlobalTensor(_read(case_dir, "input1.bin", i4))
    vals = pto.GlobalTensor(_read(case_dir, "input2.bin", i4))
    q = _tile_from(_read(case_dir, "input3.bin", i4).reshape(R, C), i4, R, C)

    def t(dt, cols=C):
        return _tile_from(np.zeros((R, cols), dt), dt, R, cols)
    qu, h, idx, tmp, sh16, sh15 = (t(u4) for _ in range(6))
    out, empty_key, key, val = (t(i4) for _ in range(4))
    pc = (C + 7) // 8
    mc = -(-pc // 32) * 32
    empty = _tile_from(np.zeros((R, mc), u1), u1, R, pc)     # packed masks: R x ceil(C/8)
    should = _tile_from(np.zeros((R, mc), u1), u1, R, pc)
    pto.TCVT(qu, q, pto.RoundMode.CAST_NONE, satMode=pto.SaturationMode.OFF)
    pto.TEXPANDS(out, -1)
    pto.TEXPANDS(empty_key, int(np.iinfo(np.int32).min))
    mask = cap - 1
    pto.TMOV(h, qu)
    pto.TEXPANDS(sh16, 16)
    pto.TEXPANDS(sh15, 15)
    for sh, mul in ((sh16, 0x7FEB352D), (sh15, 0x846CA68B), (sh16, None)):
        pto.TSHR(tmp, h, sh)
        pto.TXOR(h, h, tmp)
        if mul is not None:
            pto.TMULS(h, h, mul)
    pto.TANDS(h, h, mask)
    for probe in range(max_probe):
        pto.TMOV(idx, h)
        pto.TADDS(idx, idx, probe)
        pto.TANDS(idx, idx, mask)
        pto.MGATHER(key, keys, idx)
        pto.MGATHER(val, vals, idx)
        pto.TCMP(should, key, q, "EQ")
        pto.TCMP(empty, key, empty_key, "EQ")
        pto.TSEL(out, should, val, out)
        pto.TOR(should, should, empty)
        if (should.data[:, :pc] == 0xFF).all():
            break
    return np.ascontiguousarray(out.valid).reshape(-1), _read(case_dir, "golden.bin", i4), 1e-3


DRIVERS["hashfind"] = _hashfind


def _tget_scale_addr(case_dir, args, kwargs, ns):
    p = _param(args, kwargs)
    dt = _dtype(p)
    R, C = int(p.dst_row), int(p.dst_col)
    a = _read(case_dir, "input.bin", dt).reshape(int(p.src_row), int(p.src_col))
    src = pto.Tile(V, dt, R, C)
    dst = pto.Tile(V, dt, R, C)
    pto.TASSIGN(src, 0)                  # as the test: src at 0x0, dst at 0x1000
    pto.TASSIGN(dst, 0x1000)
    pto.TLOAD(src, pto.GlobalTensor(np.ascontiguousarray(a[:R, :C])))
    pto.TGET_SCALE_ADDR(dst, src)
    out = np.zeros((R, C), dt)
    pto.TSTORE(pto.GlobalTensor(out), dst)
    return out.reshape(-1), _read(case_dir, "golden.bin", dt), 1e-3


DRIVERS["tget_scale_addr"] = _tget_scale_addr


def _tflashattn(case_dir, args, kwargs, ns):
    """The tflashattn test body (one attention head: Q K^T, scale, row softmax, times V) as
    fastisa.pto calls on Vec, Left, Right and Acc tiles."""
    S, D = int(kwargs["seq_len"]), int(kwargs["head_dim"])
    f4 = np.dtype(np.float32)
    T = pto.TileType
    q, k, v = (_read(case_dir, f"x{i}_gm.bin", f4).reshape(S, D) for i in (1, 2, 3))

    def vec(r, c, lay=pto.BLayout.RowMajor):
        return pto.Tile(V, f4, r, c, blayout=lay)
    qt, kt, vt = vec(S, D), vec(S, D), vec(S, D)
    pto.TLOAD(qt, pto.GlobalTensor(q))
    pto.TLOAD(kt, pto.GlobalTensor(k))
    pto.TLOAD(vt, pto.GlobalTensor(v))
    q_left, k_right = pto.Tile(T.Left, f4, S, D), pto.Tile(T.Right, f4, D, S)
    ktt = vec(D, S)
    pto.TMOV(q_left, qt)
    pto.TTRANS(ktt, kt)
    pto.TMOV(k_right, ktt)
    sc_acc, scores = pto.Tile(T.Acc, f4, S, S), vec(S, S)
    pto.TMATMUL(sc_acc, q_left, k_right)
    pto.TMOV(scores, sc_acc)
    pto.TMULS(scores, scores, float(np.float32(1.0) / np.sqrt(np.float32(D))))
    rmax, rsum = vec(S, 1, pto.BLayout.ColMajor), vec(S, 1, pto.BLayout.ColMajor)
    cent, ex, probs = vec(S, S), vec(S, S), vec(S, S)
    pto.TROWMAX(rmax, scores)
    pto.TROWEXPANDSUB(cent, scores, rmax)
    pto.TEXP(ex, cent)
    pto.TROWSUM(rsum, ex)
    pto.TROWEXPANDDIV(probs, ex, rsum)
    p_left, v_right, out_acc = pto.Tile(T.Left, f4, S, S), pto.Tile(T.Right, f4, S, D), \
        pto.Tile(T.Acc, f4, S, D)
    pto.TMOV(p_left, probs)
    pto.TMOV(v_right, vt)
    pto.TMATMUL(out_acc, p_left, v_right)
    out = np.zeros((S, D), f4)
    pto.TSTORE(pto.GlobalTensor(out), out_acc)
    return out.reshape(-1), _read(case_dir, "golden.bin", f4), 1e-3


DRIVERS["tflashattn"] = _tflashattn


# ---- ptogold: tstore (a windowed 5-D GM tensor TLOADed and TSTOREd back) ----------------
def _tstore(case_dir, args, kwargs, ns):
    """tstore/tstore_kernel.cpp: the g0..g4 window (strides of the W0..W4 whole tensor; DN:
    the last two dims column-major) TLOADed into a row-major (ND) / column-major (DN) tile of
    the window's rows x cols, TSTOREd into a zeroed tensor of the whole shape."""
    g = next(x for x in args if hasattr(x, "gShape0"))
    dt = np.dtype(g.datatype)
    fmt = str(g.format)
    if dt.kind not in "iuf":
        raise NotImplementedError(f"{dt} tiles (the ptolowp branch's formats)")
    gs = tuple(int(getattr(g, f"gShape{i}")) for i in range(5))
    W = tuple(int(getattr(g, f"gWholeShape{i}")) for i in range(5))
    golden = _read(case_dir, "golden.bin", dt)
    src = _read(case_dir, "input.bin", dt)
    step = max(1, 32 // dt.itemsize)
    if fmt == "NZ":     # a boxed (NZ) tile of the window's S2*S3 x S0*S1*S4 values
        st = (W[1] * W[2] * W[3] * W[4], W[2] * W[3] * W[4], W[3] * W[4], W[4], 1)
        R, C = gs[2] * gs[3], gs[0] * gs[1] * gs[4]
        t = pto.Tile(V, dt, R, C, blayout=pto.BLayout.ColMajor, slayout=pto.SLayout.RowMajor,
                     valid_row=R, valid_col=C)
        lay = pto.Layout.NZ
    elif fmt == "ND":
        st = (W[1] * W[2] * W[3] * W[4], W[2] * W[3] * W[4], W[3] * W[4], W[4], 1)
        R, C = gs[0] * gs[1] * gs[2] * gs[3], gs[4]
        t = pto.Tile(V, dt, R, -(-C // step) * step, valid_row=R, valid_col=C)
        lay = pto.Layout.ND
    else:
        st = (W[1] * W[2] * W[3] * W[4], W[2] * W[3] * W[4], W[3] * W[4], 1, W[3])
        R, C = gs[3], gs[0] * gs[1] * gs[2] * gs[4]
        t = pto.Tile(V, dt, -(-R // step) * step, C, blayout=pto.BLayout.ColMajor, valid_row=R,
                     valid_col=C)
        lay = pto.Layout.DN
    out = np.zeros(golden.size, dt)
    pto.TLOAD(t, pto.GlobalTensor(src, shape=gs, strides=st, layout=lay))
    pto.TSTORE(pto.GlobalTensor(out, shape=gs, strides=st, layout=lay), t)
    return out, golden, 1e-3


DRIVERS["tstore"] = _tstore
