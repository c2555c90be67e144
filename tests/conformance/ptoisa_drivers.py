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
# ptoisa2: the directories that stay without a driver, and why
WHY_NOT.update({
    "tmatmul_layout": "its TGEMV case uses a 16-row Left tile: docs/isa/TGEMV.md has M = 1 and "
                      "PTOAS rejects lhs valid_shape[0] != 1 (fastisa too); the simulator "
                      "computes a full TMATMUL",
    "ttrace": "tests the simulator's instruction-trace API (cpu_sim trace records, JSON dump), "
              "not instruction results",
    "tisa_coverage": "3 of its 26 tests scan pto-isa's own sources and CMake lists (nothing "
                     "to simulate); others use TGEMV on a 16-row Left tile (docs: M = 1) and "
                     "TMATMUL_MX / TGEMV_MX on float32 tiles (docs: fp8 / fp4)",
})

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


# ---- branch ptolowp: low-precision formats (tcvt int4/fp4, ttrans hifloat8, tstore, ...) ----

#: gen_data.py's stand-in classes / en_dtypes dtypes -> fastisa.pto format names.
_LOWP_NAMES = {"Int4": "int4", "Float4E2M1": "float4_e2m1x2", "Float4E1M2": "float4_e1m2x2",
               "float4_e2m1": "float4_e2m1x2", "float4_e1m2": "float4_e1m2x2",
               "hifloat8": "hifloat8"}


def _lowp_fmt(t):
    """(fastisa format name or numpy dtype, storage dtype, elements per stored item)."""
    name = getattr(t, "__name__", "")
    if name not in _LOWP_NAMES:
        try:
            name = np.dtype(t).name
        except TypeError:
            pass
    if name in _LOWP_NAMES:
        f = _LOWP_NAMES[name]
        return f, np.dtype(np.uint8), 2 if f.startswith("float4") else 1
    dt = _np_or_bf16(t)
    return dt, dt, 1


def _tcvt_lowp(case_dir, args, kwargs, ns):
    p = _param(args, kwargs)
    (sf, sdt, sl), (df, ddt, dl) = _lowp_fmt(p.srctype), _lowp_fmt(p.dsttype)
    M, N = int(p.m), int(p.n)
    golden = _read(case_dir, "golden.bin", ddt)
    x = _read(case_dir, "x1_gm.bin", sdt).reshape(M, N // sl)
    src = pto.Tile(V, sf, M, N // sl)
    src.data[:] = x
    d = pto.Tile(V, df, M, N // dl)
    mode = str(p.mode).split("::")[-1]
    pto.TCVT(d, src, mode, satMode=str(p.saturation_mode).split("::")[-1])
    return np.ascontiguousarray(d.valid).view(ddt).reshape(-1), golden, 1e-3


DRIVERS["tcvt"] = _tcvt_lowp


def _ttrans_lowp(case_dir, args, kwargs, ns):
    p = _param(args, kwargs)
    f, dt, _ = _lowp_fmt(p.srctype)
    if isinstance(f, np.dtype):
        return _ttrans(case_dir, args, kwargs, ns)
    gdt = np.dtype(p.srctype)                  # en_dtypes.hifloat8 (one byte)
    M, N = int(p.m), int(p.n)
    golden = _read(case_dir, "golden.bin", gdt)
    s = pto.Tile(V, f, M, N)
    s.data[:] = _read(case_dir, "x1_gm.bin", dt).reshape(M, N)
    d = pto.Tile(V, f, N, M)
    pto.TTRANS(d, s)
    return np.ascontiguousarray(d.valid).view(gdt).reshape(-1), golden, 1e-3


DRIVERS["ttrans"] = _ttrans_lowp




# ---- ptogold: tstore (a windowed 5-D GM tensor TLOADed and TSTOREd back) ----------------
def _tstore(case_dir, args, kwargs, ns):
    """tstore_kernel.cpp: TLOAD a GM tensor (ND, DN or NZ, a window of a larger whole
    tensor) into a Vec tile and TSTORE it back into a zeroed tensor of the whole shape.  fp4
    data is handled in x2 containers (bytes) along the contiguous axis."""
    p = _param(args, kwargs)
    f, dt, lanes = _lowp_fmt(p.datatype)
    g = [int(getattr(p, f"gShape{i}")) for i in range(5)]
    w = [int(getattr(p, f"gWholeShape{i}")) for i in range(5)]
    fmt = p.format
    if lanes == 2:                      # x2: the contiguous axis counts bytes
        k = 4 if fmt == "ND" else 3
        g[k] //= 2
        w[k] //= 2
    golden = _read(case_dir, "golden.bin", dt)
    src = _read(case_dir, "input.bin", dt)
    out = np.zeros_like(src)
    isz = dt.itemsize
    block = 32 // isz
    if fmt == "DN":
        strides = (w[1] * w[2] * w[3] * w[4], w[2] * w[3] * w[4], w[3] * w[4], 1, w[3])
        lay, R = pto.Layout.DN, -(-g[3] // block) * block
        C = g[0] * g[1] * g[2] * g[4]
        tile = pto.Tile(V, f, R, C, blayout=pto.BLayout.ColMajor, valid_row=g[3], valid_col=C)
    else:
        strides = (w[1] * w[2] * w[3] * w[4], w[2] * w[3] * w[4], w[3] * w[4], w[4], 1)
        if fmt == "NZ":
            lay, R, C = pto.Layout.NZ, g[2] * g[3], g[0] * g[1] * g[4]
            tile = pto.Tile(V, f, R, C, blayout=pto.BLayout.ColMajor,
                            slayout=pto.SLayout.RowMajor, fractal=512)
        else:
            lay, R = pto.Layout.ND, g[0] * g[1] * g[2] * g[3]
            C = -(-g[4] // block) * block
            tile = pto.Tile(V, f, R, C, valid_row=R, valid_col=g[4])
    kw = {} if isinstance(f, np.dtype) else {"dtype": f}
    pto.TLOAD(tile, pto.GlobalTensor(src, g, strides, lay, **kw))
    pto.TSTORE(pto.GlobalTensor(out, g, strides, lay, **kw), tile)
    return out, golden, 1e-3


DRIVERS["tstore"] = _tstore


def _tstore_quant(case_dir, args, kwargs, ns):
    """tstore_quant_kernel.cpp: TLOAD a Vec tile (ND, DN or NZ window), then TSTORE (scalar
    word) or TSTORE_FP (a uint64 tile of words) with ReLU, into a zeroed tensor."""
    p = _param(args, kwargs)
    sdt, ddt = np.dtype(p.src_type), _np_or_bf16(p.dst_type)
    g = [int(getattr(p, f"g_shape_{i}")) for i in range(5)]
    w = [int(getattr(p, f"g_whole_shape_{i}")) for i in range(5)]
    golden = _read(case_dir, "golden.bin", ddt)
    src = _read(case_dir, "input.bin", sdt)
    quant = _read(case_dir, "quant.bin", np.uint64)
    out = np.zeros(golden.size, ddt)
    block = 32 // sdt.itemsize
    if p.format == "DN":
        strides = (w[1] * w[2] * w[3] * w[4], w[2] * w[3] * w[4], w[3] * w[4], 1, w[3])
        lay, R, C = pto.Layout.DN, -(-g[3] // block) * block, g[0] * g[1] * g[2] * g[4]
        tile = pto.Tile(V, sdt, R, C, blayout=pto.BLayout.ColMajor, valid_row=g[3], valid_col=C)
    else:
        strides = (w[1] * w[2] * w[3] * w[4], w[2] * w[3] * w[4], w[3] * w[4], w[4], 1)
        lay, R = pto.Layout.ND, g[0] * g[1] * g[2] * g[3]
        tile = pto.Tile(V, sdt, R, -(-g[4] // block) * block, valid_row=R, valid_col=g[4])
    pto.TLOAD(tile, pto.GlobalTensor(src, g, strides, lay))
    dst = pto.GlobalTensor(out, g, strides, lay)
    relu = pto.ReluPreMode.NormalRelu if p.use_relu else pto.ReluPreMode.NoRelu
    if p.is_v_quant:
        # the test's quant tile: one word per column (ND) / row (DN) of the tile, word j
        # for index j of the whole tensor's contiguous axis as gen_data quantises it
        n = quant.size
        fp = pto.Tile(V, np.uint64, 1, -(-n // 4) * 4, valid_col=n)
        fp.data[0, :n] = quant
        pto.TSTORE_FP(dst, tile, fp, reluPreMode=relu, saturateInf=bool(p.saturate_inf))
    else:
        pto.TSTORE(dst, tile, int(quant[0]), reluPreMode=relu, saturateInf=bool(p.saturate_inf))
    return out, golden, 1e-3


DRIVERS["tstore_quant"] = _tstore_quant


def _tstore_acc2gm(case_dir, args, kwargs, ns):
    """tstore_acc2gm_kernel.cpp: TLOAD A and B, TMOV to Left/Right, TMATMUL into an Acc tile
    (float32, int32 for int8 inputs), then TSTORE the Acc tile to an ND tensor of the
    destination dtype: plain, with the scalar quantisation word (the float32 bits of the
    scale, bit 46 set for an int8 destination) and/or ReLU."""
    p = _param(args, kwargs)
    sdt, ddt = _np_or_bf16(p.src_data_type), _np_or_bf16(p.dst_data_type)
    M, N, K = int(p.m), int(p.n), int(p.k)
    golden = _read(case_dir, "golden.bin", ddt)
    a = _read(case_dir, "x1_gm.bin", sdt).reshape(M, K)
    b = _read(case_dir, "x2_gm.bin", sdt).reshape(K, N)
    T = pto.TileType
    acc_dt = np.dtype(np.int32) if sdt == np.int8 else np.dtype(np.float32)
    lt, rt = _tile_at(T.Left, a, sdt, M, K), _tile_at(T.Right, b, sdt, K, N)
    c = _tile_at(T.Acc, np.zeros((M, N), acc_dt), acc_dt, M, N)
    pto.TMATMUL(c, lt, rt)
    out = np.zeros((M, N), ddt)
    relu = pto.ReluPreMode.NormalRelu if int(p.relu_mode) == 1 else pto.ReluPreMode.NoRelu
    if int(p.quant_mode) == 1:
        word = int(np.float32(p.scalar).view(np.uint32))
        if ddt.itemsize == 1:
            word |= int(ddt == np.int8) << 46
        pto.TSTORE(pto.GlobalTensor(out), c, word, reluPreMode=relu)
    else:
        pto.TSTORE(pto.GlobalTensor(out), c, reluPreMode=relu)
    return out.reshape(-1), golden, 1e-3


DRIVERS["tstore_acc2gm"] = _tstore_acc2gm


def _quant_move_driver(extract):
    """textract_quant / tinsert_quant main.cpp: TLOAD a Mat tile, TEXTRACT (or TINSERT) with
    the scalar word or a uint64 tile of words (the _FP form), ReLU, and the task cookie's
    saturation bit (``saturateInf``), then TSTORE the destination."""
    def drive(case_dir, args, kwargs, ns):
        p = _param(args, kwargs)
        sdt, ddt = _np_or_bf16(p.src_dtype), _np_or_bf16(p.dst_dtype)
        golden = _read(case_dir, "golden.bin", ddt)
        sR, sC = int(p.src_valid_rows), int(p.src_valid_cols)
        dR, dC = int(p.dst_valid_rows), int(p.dst_valid_cols)
        M = pto.TileType.Mat
        src = _tile_at(M, _read(case_dir, "input.bin", sdt).reshape(sR, sC), sdt, sR, sC)
        dst = _tile_at(M, np.zeros((dR, dC), ddt), ddt, dR, dC)
        quant = _read(case_dir, "quant.bin", np.uint64)
        if p.is_v_quant:
            pre = pto.Tile(M, np.uint64, 1, -(-quant.size // 4) * 4, valid_col=quant.size)
            pre.data[0, :quant.size] = quant
        else:
            pre = int(quant[0])
        fn = pto.TEXTRACT if extract else pto.TINSERT
        fn(dst, src, int(p.idx_row), int(p.idx_col), relu=bool(p.use_relu), preQuant=pre,
           saturateInf=bool(p.saturate_inf))
        out = np.ascontiguousarray(dst.valid)
        if not extract and out.size != golden.size:
            # gen_data writes the quantised source (the inserted window) as golden.bin
            r0, c0 = int(p.idx_row), int(p.idx_col)
            out = np.ascontiguousarray(dst.data[r0:r0 + sR, c0:c0 + sC])
        return out.reshape(-1), golden, 1e-3
    return drive


DRIVERS["textract_quant"] = _quant_move_driver(True)
DRIVERS["tinsert_quant"] = _quant_move_driver(False)


_MX_A = {"zz": pto.Layout.MX_A_ZZ, "nd": pto.Layout.MX_A_ND, "dn": pto.Layout.MX_A_DN}
_MX_B = {"nn": pto.Layout.MX_B_NN, "nd": pto.Layout.MX_B_ND, "dn": pto.Layout.MX_B_DN}


def _tmatmul_mx(case_dir, args, kwargs, ns):
    """tmatmul_mx(_nddn)_kernel.cpp: TLOAD A, B (fp8, or fp4 x2 containers) and the E8M0 scale
    tensors (in the test's GM scale layout) into Mat tiles, TMOV them to Left / Right /
    ScaleLeft / ScaleRight, TMATMUL_MX (or _BIAS) into an Acc float32 tile."""
    p = _param(args, kwargs)
    (af, adt, al), (bf, bdt, bl) = _lowp_fmt(p.atype), _lowp_fmt(p.btype)
    if isinstance(af, np.dtype):
        af, bf = af.name, bf.name
        adt = bdt = np.dtype(np.uint8)
    M, K, N = int(p.m), int(p.k), int(p.n)
    G = -(-K // 32)
    golden = _read(case_dir, "golden.bin", np.float32)
    T = pto.TileType
    u8 = np.dtype(np.uint8)

    def load(loc, fmt, arr2d, rows, cols, lay=pto.Layout.ND, gshape=None):
        step = 32
        t = pto.Tile(T.Mat, fmt, rows, -(-cols // step) * step, valid_row=rows, valid_col=cols)
        pto.TLOAD(t, pto.GlobalTensor(arr2d, gshape or (1, 1, 1, rows, cols), layout=lay,
                                      dtype=fmt))
        out = pto.Tile(loc, fmt, t.rows, t.cols, valid_row=rows, valid_col=cols)
        pto.TMOV(out, t)
        return out

    a = load(T.Left, af, _read(case_dir, "x1_gm.bin", u8).reshape(M, K // al), M, K // al)
    b = load(T.Right, bf, _read(case_dir, "x2_gm.bin", u8).reshape(K, N // bl), K, N // bl)
    # tmatmul_mx_nddn: plain row-major [M, G] / [G, N] scale tensors (Layout.ND)
    fa = _MX_A[p.scale_a_format] if hasattr(p, "scale_a_format") else pto.Layout.ND
    fb = _MX_B[p.scale_b_format] if hasattr(p, "scale_b_format") else pto.Layout.ND
    e8 = "float8_e8m0fnu"
    sa = load(T.ScaleLeft, e8, _read(case_dir, "x1_mx_gm.bin", u8), M, G, fa)
    sb = load(T.ScaleRight, e8, _read(case_dir, "x2_mx_gm.bin", u8), G, N, fb)
    c = pto.Tile(T.Acc, np.float32, M, -(-N // 8) * 8, valid_row=M, valid_col=N)
    if p.is_bias:
        bias = _tile_at(T.Bias, _read(case_dir, "bias_gm.bin", np.dtype(p.bias_type)).reshape(
            1, N).astype(np.float32), np.dtype(np.float32), 1, N)
        pto.TMATMUL_MX_BIAS(c, a, sa, b, sb, bias)
    else:
        pto.TMATMUL_MX(c, a, sa, b, sb)
    return np.ascontiguousarray(c.valid).reshape(-1), golden, 1e-3


DRIVERS["tmatmul_mx"] = _tmatmul_mx
DRIVERS["tmatmul_mx_nddn"] = _tmatmul_mx


def _flat_tile(dt, n):
    isz = np.dtype(dt).itemsize if isinstance(dt, np.dtype) else 1
    step = 32 // isz
    return pto.Tile(V, dt, 1, -(-n // step) * step, valid_row=1, valid_col=n)


def _ttrans_conv(case_dir, args, kwargs, ns):
    """ttrans_conv_kernel.cpp: TLOAD a flat Vec tile, view it as a ConvTile of the source
    layout, TTRANS into a ConvTile of the destination layout over a second flat tile, TSTORE
    that tile (the fp4 case in x2 containers)."""
    p = _param(args, kwargs)
    s = [int(getattr(p, f"src_shape_{i}")) for i in range(5)]
    d = [int(getattr(p, f"dst_shape_{i}")) for i in range(5)] + [int(p.dst_shape_5)]
    g = int(p.group_n)
    mode = int(p.shape)
    Lo = pto.Layout
    if mode == 1:
        sl, ss, dl, ds = Lo.NCHW, s[:4], Lo.NC1HWC0, d[:5]
    elif mode == 2:
        sl, ss, dl, ds = Lo.NC1HWC0, s, Lo.NCHW, d[:4]
    elif mode == 3:
        sl, ss, dl, ds = Lo.NC1HWC0, s, Lo.FRACTAL_Z, d[:5] + [s[4]]
    elif mode == 4:
        sl, ss, dl, ds = Lo.GNCHW, [g] + s[:4], Lo.GNC1HWC0, [g] + d[:5]
    elif mode == 5:
        sl, ss, dl, ds = Lo.GNC1HWC0, [g] + s, Lo.FRACTAL_Z, [g * d[0]] + d[1:5] + [s[4]]
    else:
        sl, ss, dl, ds = Lo.NCDHW, s, Lo.FRACTAL_Z_3D, d[:4]
    if "MXFP4" in p.case_name:
        f, raw = "float4_e2m1x2", np.dtype(np.uint8)
        lanes = 2
    else:
        f = raw = np.dtype(p.data_type)
        lanes = 1
    golden = _read(case_dir, "golden.bin", raw)
    x = _read(case_dir, "input.bin", raw)
    st = _flat_tile(f, x.size)
    pto.TLOAD(st, pto.GlobalTensor(x.reshape(1, -1), dtype=f if lanes == 2 else None))
    nd = int(np.prod(ds)) // lanes
    dt_ = _flat_tile(f, nd)
    src = pto.ConvTile(V, f, ss, sl, buffer=st)
    dst = pto.ConvTile(V, f, ds, dl, buffer=dt_)
    pto.TTRANS(dst, src, _flat_tile(raw, 32 // raw.itemsize))
    out = np.zeros((1, nd), raw)
    pto.TSTORE(pto.GlobalTensor(out, dtype=f if lanes == 2 else None), dt_)
    return out.reshape(-1), golden, 1e-3


DRIVERS["ttrans_conv"] = _ttrans_conv


def _tstore_conv(case_dir, args, kwargs, ns):
    """tstore_conv_kernel.cpp: TLOAD an NDC1HWC0 GlobalTensor (shape N, D, C1, H, W; the C0
    axis implicit) into a 6-D ConvTile and TSTORE it back."""
    p = _param(args, kwargs)
    dt = np.dtype(p.datatype)
    c0 = 32 // dt.itemsize
    sh = [int(getattr(p, f"g_shape{i}")) for i in range(5)]
    w = [int(getattr(p, f"g_whole_shape{i}")) for i in range(5)]
    strides = (w[1] * w[2] * w[3] * w[4] * c0, w[2] * w[3] * w[4] * c0, w[3] * w[4] * c0,
               w[4] * c0, c0)
    golden = _read(case_dir, "golden.bin", dt)
    x = _read(case_dir, "input.bin", dt)
    t = pto.ConvTile(pto.TileType.Mat, dt, sh + [c0], pto.Layout.NDC1HWC0)
    pto.TLOAD(t, pto.GlobalTensor(x, sh, strides, pto.Layout.NDC1HWC0))
    out = np.zeros_like(x)
    pto.TSTORE(pto.GlobalTensor(out, sh, strides, pto.Layout.NDC1HWC0), t)
    return out, golden, 1e-3


DRIVERS["tstore_conv"] = _tstore_conv


def expand_calls(calls, tmp):
    """A generator that writes every case directory in one call (tloadconv's
    ``generate_cpu_test_suite(prefix, cases)``) is recorded once with the temporary directory
    as its working directory; it stands for each case directory it made (those with a
    golden.bin no other call claims), with the same arguments."""
    out = []
    claimed = {os.path.realpath(c[0]) for c in calls
               if os.path.realpath(c[0]) != os.path.realpath(tmp)}
    for c in calls:
        if os.path.realpath(c[0]) == os.path.realpath(tmp) and len(calls) == 1:
            subs = sorted(d for d in os.listdir(tmp)
                          if os.path.exists(os.path.join(tmp, d, "golden.bin"))
                          and os.path.realpath(os.path.join(tmp, d)) not in claimed)
            if len(subs) > 1 and not any(isinstance(a, str) and a in subs for a in c[2]):
                out.extend((os.path.join(tmp, d),) + tuple(c[1:]) for d in subs)
                continue
        out.append(c)
    return out


def _tloadconv(case_dir, args, kwargs, ns):
    """tloadconv_kernel.cpp: TLOAD a GM tensor in a convolution layout into a Mat ConvTile and
    copy the tile's storage out.  The case's (suffix, shape, dtype) tuple comes from the one
    generator call; the kernel's template arguments per case are launch_1 .. launch_4."""
    suffix = os.path.basename(case_dir).split(".", 1)[1]
    shape, dts = next((s, d) for n, s, d in args[1] if n == suffix)
    dt = _np_or_bf16({"float16": np.float16, "half": np.float16, "float32": np.float32,
                      "float": np.float32, "int8": np.int8, "int32": np.int32}.get(dts, dts))
    c0 = 32 // dt.itemsize
    x = _read(case_dir, "input.bin", dt)
    Lo = pto.Layout
    if "5HD" in suffix:                       # NC1HWC0: Shape<N, C1, H, W, C0>
        gshape, lay, tshape = tuple(shape), Lo.NC1HWC0, tuple(shape)
        strides = None
    elif "4D" in suffix:                      # FRACTAL_Z: Shape<C1, H, W, N, C0>, tile 4-D
        N, C1, H, W = shape[:4]
        gshape, lay = (C1, H, W, N, c0), Lo.FRACTAL_Z
        strides = (H * W * N * c0, W * N * c0, N * c0, c0, 1)
        tshape = (C1 * H * W, N // 16, 16, c0)
    else:                                     # FRACTAL_Z 5-D: Shape<C1, H, W, N, C0>
        gshape, lay, tshape = tuple(shape[:4]) + (c0,), Lo.FRACTAL_Z, tuple(shape[:4]) + (c0,)
        strides = None
    t = pto.ConvTile(pto.TileType.Mat, dt, tshape, lay)
    pto.TLOAD(t, pto.GlobalTensor(x, gshape, strides, lay))
    return np.ascontiguousarray(t.buffer).copy(), _read(case_dir, "golden.bin", dt), 1e-3


DRIVERS["tloadconv"] = _tloadconv


# ---- ptoisa2: textract_conv (TEXTRACT from a FRACTAL_Z ConvTile into a Right tile) -------
def _textract_conv(case_dir, args, kwargs, ns):
    """textract_conv/main.cpp: TLOAD the weights into a Vec tile [1, C1HW*N1*16*C0], see its
    bytes as a FRACTAL_Z ConvTile [C1HW, N1, 16, C0] (``srcTile.data() = src0Tile.data()``),
    TEXTRACT a dst_row x dst_col window at (idx_row, idx_col) into a Right tile (BLayout
    RowMajor, SLayout ColMajor) and TSTORE the Vec tile aliasing the Right tile's storage.
    fastisa keeps boxed tiles' values unboxed, so the driver writes dst's values in the
    ZN fractal order (16 x C0 fractals row by row, each column-major) that aliasing tile
    holds on the simulator."""
    T = pto.TileType
    p = args[0]
    dt = _dtype(p)
    c0 = 32 // dt.itemsize
    c1hw = p.shape_0 * p.shape_1 * p.shape_2
    n1 = -(-p.shape_3 // 16)
    n = c1hw * n1 * 16 * c0
    x = _read(case_dir, "input.bin", dt)
    vec = pto.Tile(V, dt, 1, n)
    pto.TASSIGN(vec, 0)
    pto.TLOAD(vec, pto.GlobalTensor(x, (1, 1, 1, 1, n)))
    conv = pto.ConvTile(T.Mat, dt, (c1hw, n1, 16, c0), pto.Layout.FRACTAL_Z, buffer=vec)
    R, Cc = p.dst_row, p.dst_col
    dst = pto.Tile(T.Right, dt, R, Cc, blayout=pto.BLayout.RowMajor,
                   slayout=pto.SLayout.ColMajor)
    pto.TEXTRACT(dst, conv, p.idx_row, p.idx_col)
    boxed = dst.data.reshape(R // c0, c0, Cc // 16, 16).transpose(0, 2, 3, 1)
    return np.ascontiguousarray(boxed).reshape(-1), _read(case_dir, "golden.bin", dt), 1e-3


DRIVERS["textract_conv"] = _textract_conv


# ---- ptocomm branch: communication, signals, pipes, TRANDOM, TPRINT ---------------------
# Several of these directories have no golden.bin (the C++ test checks values itself):
# their drivers compute what the test checks from the inputs (or, for directories without
# a gen_data.py, from the inputs the C++ test builds) and return those checks as booleans
# against an all-True "golden".  SELF_CHECKS[name]() -> [(case, got, golden, eps)] runs the
# directories that have no gen_data case at all.
from fastisa.pto import comm as _comm  # noqa: E402

SELF_CHECKS = {}


def _gm2d(arr, rows, cols):
    return pto.GlobalTensor(arr, (1, 1, 1, rows, cols), (1, 1, 1, cols, 1))


def _copy_driver(kind):
    """tget / tput / tget_async / tput_async: dst (zeros) <- src (input.bin) through the
    comm instruction; the golden is the input."""
    def drive(case_dir, args, kwargs, ns):
        p = _param(args, kwargs)
        dt = _dtype(p)
        R = _first(p, "global_row", "row", "tile_row")
        C = _first(p, "global_col", "col", "tile_col")
        src = _read(case_dir, "input.bin", dt)[:R * C].copy()
        dst = np.zeros(R * C, dt)
        g_src, g_dst = _gm2d(src, R, C), _gm2d(dst, R, C)
        tile = pto.Tile(V, dt, _first(p, "tile_row", "row") or R,
                        _first(p, "tile_col", "col") or C)
        if kind == "tget":
            _comm.TGET(g_dst, g_src, tile)
        elif kind == "tput":
            _comm.TPUT(g_dst, g_src, tile)
        else:
            ev = (_comm.TGET_ASYNC if kind == "tget_async" else _comm.TPUT_ASYNC)(
                g_dst, g_src, _comm.AsyncSession())
            assert ev.wait()
        return dst, _read(case_dir, "golden.bin", dt), 1e-3
    return drive


for _k in ("tget", "tput", "tget_async", "tput_async"):
    DRIVERS[_k] = _copy_driver(_k)


def _tnotify(case_dir, args, kwargs, ns):
    p = _param(args, kwargs)
    shared = _read(case_dir, "sharedMemory.bin", np.int32).copy()
    value = int(_read(case_dir, "signal.bin", np.int32)[0])
    op = _comm.NotifyOp.AtomicAdd if p.operation_type == "Add" else _comm.NotifyOp.Set
    _comm.TNOTIFY(_comm.Signal(shared), value, op)
    return shared[:1], _read(case_dir, "golden.bin", np.int32), 1e-3


DRIVERS["tnotify"] = _tnotify


def _ttest(case_dir, args, kwargs, ns):
    p = _param(args, kwargs)
    sig = _read(case_dir, "input.bin", np.int32).copy()
    t, f = (int(x) for x in _read(case_dir, "cmp_file.bin", np.int32)[:2])
    cmp = _comm.WaitCmp[p.cmp]
    s = _comm.Signal(sig)                    # the test's comm::Signal: one int32
    got = np.array([_comm.TTEST(s, t, cmp), _comm.TTEST(s, f, cmp)], np.bool_)
    return got, _read(case_dir, "golden.bin", np.bool_), 0.0


DRIVERS["ttest"] = _ttest


def _tbroadcast(case_dir, args, kwargs, ns):
    p = _param(args, kwargs)
    dt = _dtype(p)
    shape = tuple(int(x) for x in p.shape)
    n = int(np.prod(shape))
    kn = int(p.rank)
    src = _read(case_dir, "input.bin", dt)[:n].copy()
    out = np.zeros(n * kn, dt)
    strides = (shape[1] * shape[2] * shape[3] * shape[4], shape[2] * shape[3] * shape[4],
               shape[3] * shape[4], shape[4], 1)
    members = [pto.GlobalTensor(out[i * n:], shape, strides) for i in range(kn)]
    group = _comm.ParallelGroup(members, kn, 0)
    tile = pto.Tile(V, dt, shape[3], shape[4], valid_row=pto.DYNAMIC, valid_col=pto.DYNAMIC)
    _comm.TBROADCAST(group, pto.GlobalTensor(src, shape, strides), tile)
    return out, _read(case_dir, "golden.bin", dt), 1e-3


DRIVERS["tbroadcast"] = _tbroadcast


def _treduce(case_dir, args, kwargs, ns):
    p = _param(args, kwargs)
    dt = _dtype(p)
    R, C = int(p.global_row), int(p.global_col)
    a = _read(case_dir, "input0.bin", dt)[:R * C].copy()
    b = _read(case_dir, "input1.bin", dt)[:R * C].copy()
    out = np.zeros(R * C, dt)
    op = _comm.ReduceOp.Max if p.op is np.maximum else _comm.ReduceOp.Sum
    group = _comm.ParallelGroup([_gm2d(a, R, C), _gm2d(b, R, C)], 2, 0)
    acc = pto.Tile(V, dt, int(p.tile_row), C, valid_row=pto.DYNAMIC, valid_col=pto.DYNAMIC)
    recv = pto.Tile(V, dt, int(p.tile_row), C, valid_row=pto.DYNAMIC, valid_col=pto.DYNAMIC)
    _comm.TREDUCE(group, _gm2d(out, R, C), acc, recv, op)
    return out, _read(case_dir, "golden.bin", dt), 1e-3


DRIVERS["treduce"] = _treduce


def _trandom(case_dir, args, kwargs, ns):
    """The test checks that the output is neither all zero nor constant; fastisa's bits are
    the CPU simulator's Philox (tests/test_pto_comm.py pins them)."""
    p = _param(args, kwargs)
    key = _read(case_dir, "key.bin", np.uint32)[:2]
    ctr = _read(case_dir, "counter.bin", np.uint32)[:4]
    t = pto.Tile(V, np.uint32, int(p.row), int(p.col), valid_row=int(p.valid_row),
                 valid_col=int(p.valid_col))
    pto.TRANDOM(t, key, ctr)
    out = np.zeros((int(p.row), int(p.col)), np.uint32)
    pto.TSTORE(pto.GlobalTensor(out), t)
    got = np.array([out.any(), (out != out.flat[0]).any()], np.bool_)
    return got, np.ones(2, np.bool_), 0.0


DRIVERS["trandom"] = _trandom


def _twait_checks():
    """tests/cpu/st/testcase/twait: a notifier rank changes the signal, the waiting rank's
    TWAIT returns once the condition holds (run as two fastisa ranks)."""
    out = []

    def case(name, initial, steps, waits):
        """steps: the notifier's (offset, value, op) writes; waits: the waiter's (cmp value,
        WaitCmp, check) in order; the check gets the signal array after the wait."""
        sig = np.array(initial, np.int32).reshape(-1).copy()
        results = []

        def body(rank):
            if rank == 0:
                for value, cmp, shape_fn, check in waits:
                    _comm.TWAIT(shape_fn(sig), value, cmp)
                    results.append(bool(check(sig)))
            else:
                for off, value, op in steps:
                    _comm.TNOTIFY(_comm.Signal(sig, off), value, op)
        pto.launch(2, body)
        out.append((name, np.array(results, np.bool_), np.ones(len(waits), np.bool_), 0.0))

    W, N = _comm.WaitCmp, _comm.NotifyOp
    one = _comm.Signal
    case("basic", [0], [(0, 42, N.Set)], [(42, W.EQ, one, lambda s: s[0] == 42)])
    for init, stored, thr, cmp, chk in [(0, 150, 100, W.GE, lambda v: v >= 100),
                                        (0, 1, 0, W.NE, lambda v: v != 0),
                                        (0, 51, 50, W.GT, lambda v: v > 50),
                                        (100, 10, 20, W.LE, lambda v: v <= 20),
                                        (100, 5, 10, W.LT, lambda v: v < 10)]:
        case(f"compare_{cmp.name}", [init], [(0, stored, N.Set)],
             [(thr, cmp, one, lambda s, c=chk: c(int(s[0])))])
    for threads in (1, 4):     # worker threads' atomic increments, interleaved as one rank
        case(f"atomic_{threads}", [0], [(0, 1, N.AtomicAdd)] * (25 * threads),
             [(25 * threads, W.GE, one, lambda s, k=threads: s[0] >= 25 * k)])
    for rows, cols in ((4, 8), (7, 13)):
        case(f"matrix_{rows}x{cols}", [0] * (rows * cols),
             [(k, 1, N.Set) for k in range(rows * cols)],
             [(1, W.EQ, lambda s, r=rows, c=cols: _comm.Signal2D(s, r, c),
               lambda s: (s == 1).all())])
    case("multiphase", [0], [(0, 1, N.Set), (0, 3, N.Set), (0, 5, N.Set)],
         [(1, W.EQ, one, lambda s: s[0] >= 1), (3, W.GE, one, lambda s: s[0] >= 3),
          (5, W.EQ, one, lambda s: s[0] == 5)])
    full_cols, sub_r, sub_c, r0, c0 = 16, 4, 8, 2, 5
    idx = [(r0 + r) * full_cols + c0 + c for r in range(sub_r) for c in range(sub_c)]
    case("subregion", [0] * (8 * full_cols), [(k, 1, N.Set) for k in idx],
         [(1, W.EQ, lambda s: _comm.Signal2D(s, sub_r, sub_c, full_cols, r0 * full_cols + c0),
           lambda s: (s[idx] == 1).all() and (np.delete(s, idx) == 0).all())])
    return out


SELF_CHECKS["twait"] = _twait_checks


def _tprint_checks():
    """tests/cpu/st/testcase/tprint: the substrings the test looks for in TPRINT's output."""
    import contextlib
    import io

    def show(tile, fmt=pto.PrintFormat.Width8_Precision4, tmp=None):
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            pto.TPRINT(tile, tmp, format=fmt)
        return buf.getvalue()
    F = pto.PrintFormat
    out = []

    def check(name, text, wanted):
        got = np.array([w in text for w in wanted], np.bool_)
        out.append((name, got, np.ones(len(wanted), np.bool_), 0.0))
    t = pto.Tile(V, np.float32, 1, 8)
    t.data[0, :2] = [1.234567, -3.456789]
    check("float_default", show(t), ["1.2346", "-3.4568"])
    check("float_p2", show(t, F.Width8_Precision2), ["1.23", "-3.46"])
    check("float_p6", show(t, F.Width10_Precision6), ["1.234567", "-3.456789"])
    t = pto.Tile(V, np.int32, 1, 8)
    t.data[0, :4] = [42, -17, 1024, -9999]
    check("int_w8", show(t), ["42", "-17", "1024", "-9999"])
    check("int_w10", show(t, F.Width10_Precision6), ["42", "-17", "1024", "-9999"])
    t = pto.Tile(V, np.uint32, 1, 8)
    t.data[0, :4] = [0, 17, 65535, 123456]
    check("uint", show(t), ["0", "17", "65535", "123456"])
    a, b = pto.Tile(V, np.int8, 1, 32), pto.Tile(V, np.uint8, 1, 32)
    a.data[0, :2] = [-12, 65]
    b.data[0, :2] = [255, 127]
    check("int8", show(a), ["-12", "65"])
    check("uint8", show(b), ["255", "127"])
    check("header", show(pto.Tile(V, np.float32, 2, 8)), ["TPRINT 2x8"])
    t, tmp = pto.Tile(V, np.float32, 1, 8), pto.Tile(V, np.float32, 1, 8)
    t.data[0, 0] = 3.141592
    check("tmp", show(t, F.Width10_Precision6, tmp), ["3.141592"])
    return out


SELF_CHECKS["tprint"] = _tprint_checks


def _tpushpop_cv_checks():
    """tests/cpu/st/testcase/tpushpop_cv: a Mat tile pushed by the cube, popped by the vector
    core, single-shot and a 10-tile stream through a 4-slot pipe on two cores."""
    rows, cols, depth = 64, 128, 4
    f4 = np.dtype(np.float32)

    def expected(it):
        return (it * 1000 + np.arange(rows * cols) + 1).astype(f4).reshape(rows, cols)
    out = []
    pipe = pto.TPipe(5, pto.Direction.DIR_C2V, f4.itemsize * rows * cols, depth)
    cube, vec = pto.Tile(pto.TileType.Mat, f4, rows, cols), pto.Tile(V, f4, rows, cols)
    cube.data[...] = expected(0)
    pto.TPUSH(cube, pipe)
    pto.TPOP(vec, pipe)
    pto.TFREE(pipe)
    out.append(("single_tile", np.array([np.array_equal(vec.data, expected(0))]),
                np.ones(1, np.bool_), 0.0))
    pipe = pto.TPipe(6, pto.Direction.DIR_C2V, f4.itemsize * rows * cols, depth)
    got = []

    def cube_core():
        for it in range(10):
            t = pto.Tile(pto.TileType.Mat, f4, rows, cols)
            t.data[...] = expected(it)
            pto.TPUSH(t, pipe)

    def vector_core():
        for it in range(10):
            t = pto.Tile(V, f4, rows, cols)
            pto.TPOP(t, pipe)
            pto.TFREE(pipe)
            got.append(np.array_equal(t.data, expected(it)))
    pto.launch([cube_core, vector_core])
    out.append(("multicore_stream", np.array(got, np.bool_), np.ones(10, np.bool_), 0.0))
    return out


SELF_CHECKS["tpushpop_cv"] = _tpushpop_cv_checks


def _mixed_matmul(a, b, c, split, add=1.0):
    """The mixed AIC/AIV kernel of tpush_a3 / tpush_a5 (cases 1, 2): for each 64-column block
    j of C, the two vector cores each take their half of A (columns for LEFT_RIGHT, rows for
    UP_DOWN), add 1 and push it to the cube (V2C, joined); the cube pops A+1 (32x64), loads
    B[:, 64j:64j+64] and pushes the 32x64 product back split the same way (C2V); each vector
    core adds its half to its C chunk and stores it.  One DIR_BOTH pipe of 4 slots, run as
    three fastisa cores (pto.launch(..., subblocks=2))."""
    f4 = np.dtype(np.float32)
    T = pto.TileType
    M, K = a.shape
    N = c.shape[1]
    lr = split == pto.TileSplitAxis.TILE_LEFT_RIGHT
    pipe = pto.TPipe(0, pto.Direction.DIR_BOTH, 8192, 4, 4)
    cg = c.copy()
    hr, hc = (M, K // 2) if lr else (M // 2, K)         # a vector core's share of A
    cr, cc = (M, 32) if lr else (M // 2, 64)            # ... and of a C block

    def cube():
        for j in range(N // 64):
            bmat = pto.Tile(T.Mat, f4, K, 64)
            pto.TLOAD(bmat, pto.GlobalTensor(b, (1, 1, 1, K, 64), (1, 1, 1, N, 1))
                      if j == 0 else pto.GlobalTensor(b.reshape(-1)[64 * j:], (1, 1, 1, K, 64),
                                                      (1, 1, 1, N, 1)))
            amat = pto.Tile(T.Mat, f4, M, K)
            pto.TPOP(pipe, amat, split)
            left, right = pto.Tile(T.Left, f4, M, K), pto.Tile(T.Right, f4, K, 64)
            pto.TMOV(left, amat)
            pto.TFREE(pipe, split)
            pto.TMOV(right, bmat)
            acc = pto.Tile(T.Acc, f4, M, 64)
            pto.TMATMUL(acc, left, right)
            pto.TPUSH(pipe, acc, split)

    def vector():
        sb = pto.get_subblock_idx()
        r0, c0 = (0, sb * hc) if lr else (sb * hr, 0)
        ah = pto.Tile(V, f4, hr, hc)
        pto.TLOAD(ah, pto.GlobalTensor(a.reshape(-1)[r0 * K + c0:], (1, 1, 1, hr, hc),
                                       (1, 1, 1, K, 1)))
        for j in range(N // 64):
            off = (r0 if not lr else 0) * N + 64 * j + (sb * cc if lr else 0)
            view = pto.GlobalTensor(cg.reshape(-1)[off:], (1, 1, 1, cr, cc), (1, 1, 1, N, 1))
            ct = pto.Tile(V, f4, cr, cc)
            pto.TLOAD(ct, view)
            a1 = pto.Tile(V, f4, hr, hc)
            pto.TADDS(a1, ah, add)
            pto.TPUSH(pipe, a1, split)
            prod = pto.Tile(V, f4, cr, cc)
            pto.TPOP(pipe, prod, split)
            res = pto.Tile(V, f4, cr, cc)
            pto.TADD(res, ct, prod)
            pto.TFREE(pipe, split)
            pto.TSTORE(view, res)
    pto.launch([cube, vector, vector], subblocks=2)
    return cg


def _tpush_module_cases(prefix, splits):
    def run(tmp):
        out = []
        f4 = np.float32
        for k, split in splits.items():
            d = os.path.join(tmp, f"{prefix}.case_{k}")
            a = _read(d, "a.bin", f4).reshape(32, 64)
            b = _read(d, "b.bin", f4).reshape(64, 512)
            c = _read(d, "c.bin", f4).reshape(32, 512)
            got = _mixed_matmul(a, b, c, split)
            out.append((f"case_{k}", got.reshape(-1), _read(d, "golden.bin", f4), 1e-3))
        return out
    return run


#: directories whose gen_data.py writes its cases at module level (no generator function):
#: MODULE_CASES[name](tmpdir) -> [(case, got, golden, eps)] after gen_data.py ran in tmpdir.
MODULE_CASES = {
    "tpush_a3": _tpush_module_cases("TPUSH_A3Test", {1: pto.TileSplitAxis.TILE_LEFT_RIGHT}),
    # the C++ test runs cases 1 (LEFT_RIGHT) and 2 (UP_DOWN); gen_data also writes 3 and 4
    "tpush_a5": _tpush_module_cases("TPUSH_A5Test", {1: pto.TileSplitAxis.TILE_LEFT_RIGHT,
                                                     2: pto.TileSplitAxis.TILE_UP_DOWN}),
}


def _ctx(sub, num):
    return pto.ScopedExecutionContext(0, sub, num)


def _tpushpop_vc_nosplit_checks():
    """tests/cpu/st/testcase/tpushpop_vc_nosplit: vector -> cube, no split, 16x32 float, a
    2-slot pipe: single tile, 5 tiles wrapping the ring, and the inactive lane 1's push
    being a no-op (the pipe stays empty)."""
    rows, cols, depth = 16, 32, 2
    f4 = np.dtype(np.float32)

    def fill(it):
        return (it * 1000 + np.arange(rows * cols) + 1).astype(f4).reshape(rows, cols)
    ok = lambda name, flags: (name, np.array(flags, np.bool_), np.ones(len(flags), np.bool_), 0.0)  # noqa: E731
    out = []
    pipe = pto.TPipe(12, pto.Direction.DIR_V2C, f4.itemsize * rows * cols, depth)
    with _ctx(0, 1):
        v = pto.Tile(V, f4, rows, cols)
        v.data[...] = fill(0)
        pto.TPUSH(pipe, v)
        m = pto.Tile(pto.TileType.Mat, f4, rows, cols)
        pto.TPOP(pipe, m)
        pto.TFREE(pipe)
    out.append(ok("single_tile", [np.array_equal(m.data, fill(0))]))
    pipe = pto.TPipe(13, pto.Direction.DIR_V2C, f4.itemsize * rows * cols, depth)
    got = [None] * 5

    def push(it):
        t = pto.Tile(V, f4, rows, cols)
        t.data[...] = fill(it)
        pto.TPUSH(pipe, t)

    def pop(it):
        t = pto.Tile(pto.TileType.Mat, f4, rows, cols)
        pto.TPOP(pipe, t)
        got[it] = t.data.copy()
        pto.TFREE(pipe)
    with _ctx(0, 1):
        for it in range(min(depth, 5)):
            push(it)
        for it in range(5):
            pop(it)
            if it + depth < 5:
                push(it + depth)
    out.append(ok("fifo_wraparound", [np.array_equal(got[i], fill(i)) for i in range(5)]))
    pipe = pto.TPipe(14, pto.Direction.DIR_V2C, f4.itemsize * rows * cols, depth)
    with _ctx(1, 2):
        t = pto.Tile(V, f4, rows, cols)
        t.data[...] = fill(7)
        pto.TPUSH(pipe, t)
    empty_after_inactive = pipe.occupied == 0
    with _ctx(0, 2):
        t = pto.Tile(V, f4, rows, cols)
        t.data[...] = fill(0)
        pto.TPUSH(pipe, t)
    with _ctx(0, 1):
        m = pto.Tile(pto.TileType.Mat, f4, rows, cols)
        pto.TPOP(pipe, m)
        pto.TFREE(pipe)
    out.append(ok("inactive_aiv1_is_noop", [empty_after_inactive, np.array_equal(m.data, fill(0)),
                                            pipe.occupied == 0]))
    return out


SELF_CHECKS["tpushpop_vc_nosplit"] = _tpushpop_vc_nosplit_checks


def _tpushpop_vc_checks():
    """tests/cpu/st/testcase/tpushpop_vc: vector -> cube with UP_DOWN / LEFT_RIGHT split: the
    two lanes' halves joined, single tile and ring wrap-around with two pops in flight, on a
    DIR_V2C and a DIR_BOTH pipe; and a DIR_BOTH pipe interleaving C2V (split to the lanes)
    and V2C (joined) traffic in order."""
    f4 = np.dtype(np.float32)
    rows, cols = 16, 32
    S = pto.TileSplitAxis
    out = []

    def cell(it, lane, n):
        return (it * 100000 + lane * 1000 + np.arange(n) + 1).astype(f4)

    def expected(it, split):
        if split == S.TILE_UP_DOWN:
            return np.concatenate([cell(it, k, rows * cols // 2).reshape(rows // 2, cols)
                                   for k in (0, 1)], axis=0)
        return np.concatenate([cell(it, k, rows * cols // 2).reshape(rows, cols // 2)
                               for k in (0, 1)], axis=1)

    def push_lane(pipe, it, lane, split):
        shape = (rows // 2, cols) if split == S.TILE_UP_DOWN else (rows, cols // 2)
        with _ctx(lane, 2):
            t = pto.Tile(V, f4, *shape)
            t.data[...] = cell(it, lane, shape[0] * shape[1]).reshape(shape)
            pto.TPUSH(pipe, t, split)

    def pop(pipe, split, free=True):
        with _ctx(0, 1):
            m = pto.Tile(pto.TileType.Mat, f4, rows, cols)
            pto.TPOP(pipe, m, split)
            if free:
                pto.TFREE(pipe, split)
            return m.data.copy()

    def free(pipe, split):
        with _ctx(0, 1):
            pto.TFREE(pipe, split)

    def check(name, flags):
        out.append((name, np.array(flags, np.bool_), np.ones(len(flags), np.bool_), 0.0))
    for split in (S.TILE_UP_DOWN, S.TILE_LEFT_RIGHT):
        nm = split.name.lower()
        pipe = pto.TPipe(12, pto.Direction.DIR_V2C, f4.itemsize * rows * cols, 2)
        push_lane(pipe, 0, 0, split)
        push_lane(pipe, 0, 1, split)
        check(f"{nm}_single_tile", [np.array_equal(pop(pipe, split), expected(0, split))])
        for direction, depth, iters in ((pto.Direction.DIR_V2C, 2, 5),
                                        (pto.Direction.DIR_BOTH, 4, 6)):
            pipe = pto.TPipe(13, direction, f4.itemsize * rows * cols, depth, depth)
            got = [None] * iters
            for it in range(min(depth, iters)):
                push_lane(pipe, it, 0, split)
                push_lane(pipe, it, 1, split)
            got[0] = pop(pipe, split, free=False)
            for it in range(iters):
                if it + 1 < iters:
                    got[it + 1] = pop(pipe, split, free=False)
                free(pipe, split)
                if it + depth < iters:
                    push_lane(pipe, it + depth, 0, split)
                    push_lane(pipe, it + depth, 1, split)
            flags = [np.array_equal(got[i], expected(i, split)) for i in range(iters)]
            if direction == pto.Direction.DIR_BOTH:
                flags.append(pipe.occupied == 0)
            check(f"{nm}_wraparound_{direction.name}", flags)
    # DIR_BOTH, UP_DOWN: C2V 16x128 tiles split to the lanes, V2C halves joined, interleaved
    R, C, L = 16, 128, 8
    pipe = pto.TPipe(30, pto.Direction.DIR_BOTH, 8192, 4, 4)
    flags = []

    def lin(base, r0, n):
        return (base + np.arange(r0 * C, (r0 + n) * C) + 1).astype(f4).reshape(n, C)

    def push_c2v(base):
        with _ctx(0, 1):
            t = pto.Tile(pto.TileType.Acc, f4, R, C, valid_row=pto.DYNAMIC, valid_col=pto.DYNAMIC)
            t.data[...] = lin(base, 0, R)
            pto.TPUSH(pipe, t, S.TILE_UP_DOWN)

    def pop_c2v(base):
        for lane in (0, 1):
            with _ctx(lane, 2):
                t = pto.Tile(V, f4, L, C)
                pto.TPOP(pipe, t, S.TILE_UP_DOWN)
                flags.append(np.array_equal(t.data, lin(base, lane * L, L)))
                pto.TFREE(pipe, S.TILE_UP_DOWN)

    def push_v2c():
        for lane in (0, 1):
            with _ctx(lane, 2):
                t = pto.Tile(V, f4, L, C)
                t.data[...] = lin(7000 + lane * 1000, 0, L)
                pto.TPUSH(pipe, t, S.TILE_UP_DOWN)

    def pop_v2c():
        with _ctx(0, 1):
            t = pto.Tile(pto.TileType.Mat, f4, R, C, valid_row=pto.DYNAMIC, valid_col=pto.DYNAMIC)
            pto.TPOP(pipe, t, S.TILE_UP_DOWN)
            flags.append(np.array_equal(t.valid, np.concatenate([lin(7000, 0, L),
                                                                 lin(8000, 0, L)])))
            pto.TFREE(pipe, S.TILE_UP_DOWN)
    push_c2v(1000)
    push_c2v(2000)
    pop_c2v(1000)
    push_v2c()
    pop_v2c()
    push_c2v(3000)
    pop_c2v(2000)
    pop_c2v(3000)
    flags.append(pipe.occupied == 0)
    check("both_dir_gm_fifo_keeps_c2v_order", flags)
    return out


SELF_CHECKS["tpushpop_vc"] = _tpushpop_vc_checks


def _tpushpop_cv_nosplit_checks():
    """tests/cpu/st/testcase/tpushpop_cv_nosplit (A5 context, as its SetUp): cube -> vector
    without split, 16x32 float: single tile, ring wrap-around, delayed frees, the inactive
    second lane of an ordinary pipe (zeros, no protocol), the participating second lane of
    a no-split pipe (zeros, but its TFREE is needed), a fast lane waiting for the slow one,
    valid shapes (static and dynamic) of the pushed Acc tile, DIR_BOTH traffic in both
    directions and the producer waiting for the slot at its cursor, one lane on a dual-lane
    pipe.  Each case returns the test's checks (the SharedState fields the test reads that
    fastisa has are ``TPipe.occupied``; ``next_c2v_consumer_slot`` is not modelled)."""
    f4 = np.dtype(np.float32)
    R, C = 16, 32
    T = pto.TileType
    D = pto.Direction
    out = []

    def fill(it):
        return (it * 1000 + np.arange(R * C) + 1).astype(f4).reshape(R, C)

    def check(name, flags):
        out.append((name, np.array(flags, np.bool_), np.ones(len(flags), np.bool_), 0.0))

    def mat(it):
        t = pto.Tile(T.Mat, f4, R, C)
        t.data[...] = fill(it)
        return t

    def pop_vec(pipe):
        t = pto.Tile(V, f4, R, C)
        pto.TPOP(pipe, t)
        return t.data.copy()
    size = f4.itemsize * R * C
    with pto.target("A5"):
        pipe = pto.TPipe(0, D.DIR_C2V, size, 2)
        with _ctx(0, 1):
            pto.TPUSH(pipe, mat(0))
            got = pop_vec(pipe)
            pto.TFREE(pipe)
        check("single_tile", [np.array_equal(got, fill(0))])

        pipe = pto.TPipe(1, D.DIR_C2V, size, 2)
        got = [None] * 5
        with _ctx(0, 1):
            for it in range(2):
                pto.TPUSH(pipe, mat(it))
            for it in range(5):
                got[it] = pop_vec(pipe)
                pto.TFREE(pipe)
                if it + 2 < 5:
                    pto.TPUSH(pipe, mat(it + 2))
        check("fifo_wraparound", [np.array_equal(got[i], fill(i)) for i in range(5)])

        pipe = pto.TPipe(2, D.DIR_C2V, size, 2)
        with _ctx(0, 1):
            for it in range(2):
                pto.TPUSH(pipe, mat(it))
            got = [pop_vec(pipe) for _ in range(2)]
            full = pipe.occupied == 2
            for _ in range(2):
                pto.TFREE(pipe)
        check("delayed_free", [np.array_equal(got[i], fill(i)) for i in range(2)]
              + [full, pipe.occupied == 0])

        pipe = pto.TPipe(3, D.DIR_C2V, size, 2)
        with _ctx(0, 1):
            pto.TPUSH(pipe, mat(0))
        with _ctx(1, 2):
            pop_vec(pipe)
            pto.TFREE(pipe)
        still = pipe.occupied == 1
        with _ctx(0, 2):
            got = pop_vec(pipe)
            pto.TFREE(pipe)
        check("inactive_lane_skips_protocol", [still, np.array_equal(got, fill(0)),
                                               pipe.occupied == 0])

        pipe = pto.TPipe(4, D.DIR_C2V, size, 2, 2, no_split=True)
        with _ctx(0, 1):
            for it in range(2):
                pto.TPUSH(pipe, mat(it))
        with _ctx(0, 2):
            l0 = [pop_vec(pipe) for _ in range(2)]
            for _ in range(2):
                pto.TFREE(pipe)
        held = pipe.occupied == 2
        with _ctx(1, 2):
            l1 = [pop_vec(pipe) for _ in range(2)]
            for _ in range(2):
                pto.TFREE(pipe)
        check("no_split_dual_lane_delayed_free",
              [np.array_equal(l0[i], fill(i)) for i in range(2)]
              + [not l1[i].any() for i in range(2)] + [held, pipe.occupied == 0])

        pipe = pto.TPipe(5, D.DIR_C2V, size, 2, 2, no_split=True)
        l0, l1, third, flags = [], [], [], []
        with _ctx(0, 1):
            for it in range(2):
                pto.TPUSH(pipe, mat(it))
        with _ctx(0, 2):
            l0 = [pop_vec(pipe) for _ in range(2)]
            for _ in range(2):
                pto.TFREE(pipe)

        def fast_lane():               # lane 0's third pop: waits for lane 1 and the push
            with _ctx(0, 2):
                third.append(pop_vec(pipe))
                pto.TFREE(pipe)

        def main():
            flags.append(not third)    # the third pop has not completed
            with _ctx(1, 2):
                for _ in range(2):
                    l1.append(pop_vec(pipe))
                    pto.TFREE(pipe)
            with _ctx(0, 1):
                pto.TPUSH(pipe, mat(2))
        pto.launch([fast_lane, main])
        check("no_split_fast_lane_wrap_waits",
              flags + [bool(third)] + [np.array_equal(x, fill(i)) for i, x in enumerate(l0 + third)]
              + [not x.any() for x in l1] + [pipe.occupied == 1])

        for name, dyn in (("gm_slot_uses_valid_shape", False),
                          ("gm_slot_uses_dynamic_valid_shape", True)):
            rows, cols, vr, vc = (128, 128, 64, 128) if not dyn else (16, 32, 8, 16)
            dt = np.dtype(np.int32) if not dyn else f4
            pipe = pto.TPipe(6, D.DIR_C2V if not dyn else D.DIR_BOTH, dt.itemsize * vr * vc, 2,
                             2, no_split=True)
            acc = pto.Tile(T.Acc, dt, rows, cols, valid_row=vr if not dyn else pto.DYNAMIC,
                           valid_col=cols if not dyn else pto.DYNAMIC)
            if dyn:
                acc.set_valid_row(vr)
                acc.set_valid_col(vc)
            acc.data[...] = (np.arange(rows * cols) + 1).reshape(rows, cols).astype(dt)
            with _ctx(0, 1):
                pto.TPUSH(pipe, acc)
            v = pto.Tile(V, dt, vr, vc)
            with _ctx(0, 2):
                pto.TPOP(pipe, v)
                pto.TFREE(pipe)
            with _ctx(1, 2):
                pto.TPOP(pipe, pto.Tile(V, dt, vr, vc))
                pto.TFREE(pipe)
            want = (np.arange(rows * cols) + 1).reshape(rows, cols)[:vr, :vc].astype(dt)
            check(name, [np.array_equal(v.data, want), pipe.occupied == 0])

        pipe = pto.TPipe(8, D.DIR_BOTH, size, 4, 2, no_split=True)

        def push_acc(base, p=None):
            t = pto.Tile(T.Acc, f4, R, C, valid_row=pto.DYNAMIC, valid_col=pto.DYNAMIC)
            t.data[...] = (base + np.arange(R * C)).reshape(R, C).astype(f4)
            with _ctx(0, 1):
                pto.TPUSH(p or pipe, t)

        def pop_lanes(p, keep=True):
            res = None
            for ln in (0, 1):
                with _ctx(ln, 2):
                    x = pop_vec(p)
                    pto.TFREE(p)
                    if ln == 0:
                        res = x
            return res
        push_acc(1)
        first = pop_lanes(pipe)
        with _ctx(0, 2):
            t = pto.Tile(V, f4, R, C)
            t.data[...] = (1001 + np.arange(R * C)).reshape(R, C)
            pto.TPUSH(pipe, t)
        push_acc(1001)
        second = pop_lanes(pipe)
        with _ctx(0, 1):
            m = pto.Tile(T.Mat, f4, R, C, valid_row=pto.DYNAMIC, valid_col=pto.DYNAMIC)
            pto.TPOP(pipe, m)
            pto.TFREE(pipe)
        lin = lambda b: (b + np.arange(R * C)).reshape(R, C).astype(f4)  # noqa: E731
        check("both_direction_c2v_then_v2c",
              [np.array_equal(first, lin(1)), np.array_equal(second, lin(1001)),
               np.array_equal(m.data, lin(1001)), pipe.occupied == 0])

        pipe = pto.TPipe(9, D.DIR_BOTH, size, 2, 2, no_split=True)
        with _ctx(0, 2):
            t = pto.Tile(V, f4, R, C)
            t.data[...] = lin(5000)
            pto.TPUSH(pipe, t)
        with _ctx(0, 1):
            m = pto.Tile(T.Mat, f4, R, C, valid_row=pto.DYNAMIC, valid_col=pto.DYNAMIC)
            pto.TPOP(pipe, m)
            pto.TFREE(pipe)
        push_acc(1)                    # X -> slot 1
        push_acc(1001)                 # Y -> slot 0: the ring is full
        res, flags = {}, []

        def z_push():
            push_acc(2001)             # Z waits for slot 1 (X)
            res["z_done"] = True

        def main2():
            flags.append("z_done" not in res)
            res["y"] = pop_lanes(pipe)
            flags.append("z_done" not in res)      # slot 0 freed: Z still waits for slot 1
            res["x"] = pop_lanes(pipe)
        pto.launch([z_push, main2])
        res["z"] = pop_lanes(pipe)
        check("producer_waits_for_out_of_order_slot",
              flags + ["z_done" in res, np.array_equal(res["y"], lin(1001)),
                       np.array_equal(res["x"], lin(1)), np.array_equal(res["z"], lin(2001)),
                       pipe.occupied == 0])

        pipe = pto.TPipe(10, D.DIR_C2V, size, 2, 2, no_split=True)
        with _ctx(0, 1):
            for it in range(2):
                pto.TPUSH(pipe, mat(it))
            occ, got = [], []
            for it in range(2):
                got.append(pop_vec(pipe))
                pto.TFREE(pipe)
                occ.append(pipe.occupied == 1 - it)
        check("single_subblock_on_dual_lane_pipe",
              occ + [np.array_equal(got[i], fill(i)) for i in range(2)])
    return out


SELF_CHECKS["tpushpop_cv_nosplit"] = _tpushpop_cv_nosplit_checks


def _on_a5(fn):
    def run(*a):
        with pto.target("A5"):          # the tests' SetUp: NPU_MEMORY_INIT(NPUArch::A5)
            return fn(*a)
    return run


SELF_CHECKS["tpushpop_vc"] = _on_a5(_tpushpop_vc_checks)
SELF_CHECKS["tpushpop_vc_nosplit"] = _on_a5(_tpushpop_vc_nosplit_checks)
MODULE_CASES["tpush_a5"] = _on_a5(MODULE_CASES["tpush_a5"])


def _tpushpop_fixpipe(case_dir, args, kwargs, ns):
    """tpushpop_fixpipe: the cube's matmul pushed through the fixpipe (F322F16 / DEQF16 with
    the scalar 2.0 / VDEQF16 with quant_gm.bin's per-column words) to the vector core, which
    adds 1 (TADDS in float16) and stores (one core each, as the C++ kernel on subblock 0)."""
    fn = ns["__case_fn__"]
    T = pto.TileType
    f16 = np.dtype(np.float16)
    if fn == "gen_case1_golden_data":
        M = K = N = 64
        a_dt, acc_dt, quant, scalar, vector = f16, np.dtype(np.float32), pto.QuantMode.F322F16, None, None
    else:
        M = K = N = 128
        a_dt, acc_dt = np.dtype(np.int8), np.dtype(np.int32)
        if fn == "gen_case3_golden_data":
            quant, scalar, vector = pto.QuantMode.DEQF16, 2.0, None
        else:
            quant, scalar = pto.QuantMode.VDEQF16, None
            vector = _read(case_dir, "quant_gm.bin", np.uint64)[:N]
    x1 = _read(case_dir, "x1_gm.bin", a_dt).reshape(M, K)
    x2 = _read(case_dir, "x2_gm.bin", a_dt).reshape(K, N)
    pipe = pto.TPipe(0, pto.Direction.DIR_C2V, f16.itemsize * M * N, 2, 2, no_split=True)
    left = _tile_at(T.Left, x1, a_dt, M, K)
    right = _tile_at(T.Right, x2, a_dt, K, N)
    acc = _tile_at(T.Acc, np.zeros((M, N), acc_dt), acc_dt, M, N)
    pto.TMATMUL(acc, left, right)
    pto.TPUSH(pipe, acc, quant=quant, quant_scalar=scalar, quant_vector=vector)
    v, o = pto.Tile(V, f16, M, N), pto.Tile(V, f16, M, N)
    pto.TPOP(pipe, v)
    pto.TADDS(o, v, 1.0)
    pto.TFREE(pipe)
    out = np.zeros((M, N), f16)
    pto.TSTORE(pto.GlobalTensor(out), o)
    return out.reshape(-1), _read(case_dir, "golden.bin", f16), 1e-3


DRIVERS["tpushpop_fixpipe"] = _tpushpop_fixpipe


def _tpushpop_checks():
    """tests/cpu/st/testcase/tpushpop: the simplified TPUSH(tile, pipe)/TPOP(tile, pipe) of
    Vec and Mat tiles (float32 / uint32, 64x128 and 128x128, an 8-slot C2V pipe), a 12-tile
    stream between two cores, V2C split halves joined in the cube's tile, C2V split halves
    for one and for two subblocks, V2C halves published only once both lanes pushed, and a
    DIR_BOTH pipe whose vector consumers wait for cube data while vector data is queued.
    The C++ test ``cpu_stub_prefers_injected_hooks_for_subblock_and_pipe_state`` tests the
    CPU simulator's hook-injection API (``cpu_sim::register_hooks``), which has no fastisa
    counterpart: not transliterated, and said so in the README; the hook counters of
    ``v2c_split_with_injected_pipe_hook...`` likewise (its pipe-state checks are)."""
    T = pto.TileType
    S = pto.TileSplitAxis
    D = pto.Direction
    f4 = np.dtype(np.float32)
    out = []

    def check(name, flags):
        out.append((name, np.array(flags, np.bool_), np.ones(len(flags), np.bool_), 0.0))

    def seq(shape, start, dt=f4):
        return (start + np.arange(int(np.prod(shape)))).reshape(shape).astype(dt)
    for dt in (np.dtype(np.float32), np.dtype(np.uint32)):
        for rows in (64, 128):
            for loc in (T.Vec, T.Mat):
                pipe = pto.TPipe(0, D.DIR_C2V, dt.itemsize * rows * 128, 8, 2)
                src, dst = pto.Tile(loc, dt, rows, 128), pto.Tile(loc, dt, rows, 128)
                src.data[...] = seq((rows, 128), 1, dt)
                pto.TPUSH(src, pipe)
                pto.TPOP(dst, pipe)
                pto.TFREE(pipe)
                check(f"{dt.name}_{rows}_128_{loc.name}", [np.array_equal(dst.data, src.data)])
    pipe = pto.TPipe(1, D.DIR_C2V, f4.itemsize * 64 * 128, 4, 0)
    got = []

    def producer():
        for it in range(12):
            t = pto.Tile(V, f4, 64, 128)
            t.data[...] = seq((64, 128), it * 1000 + 1)
            pto.TPUSH(t, pipe)

    def consumer():
        for it in range(12):
            t = pto.Tile(V, f4, 64, 128)
            pto.TPOP(t, pipe)
            pto.TFREE(pipe)
            got.append(np.array_equal(t.data, seq((64, 128), it * 1000 + 1)))
    pto.launch([producer, consumer])
    check("multicore_float_64_128_Vec", got)
    flags = []
    for split in (S.TILE_UP_DOWN, S.TILE_LEFT_RIGHT):
        shape = (8, 16) if split == S.TILE_UP_DOWN else (16, 8)
        pipe = pto.TPipe(10, D.DIR_V2C, f4.itemsize * 256, 2)
        halves = [seq(shape, 1), seq(shape, 1001)]
        for lane in (0, 1):
            with _ctx(lane, 2):
                t = pto.Tile(V, f4, *shape)
                t.data[...] = halves[lane]
                pto.TPUSH(pipe, t, split)
        with _ctx(0, 1):
            m = pto.Tile(T.Mat, f4, 16, 16)
            pto.TPOP(pipe, m, split)
        flags.append(np.array_equal(m.data, np.concatenate(
            halves, axis=0 if split == S.TILE_UP_DOWN else 1)))
    check("v2c_gm_fifo_preserves_updown_and_leftright_layout", flags)
    pipe = pto.TPipe(2, D.DIR_C2V, f4.itemsize * 128, 2)
    acc = pto.Tile(T.Acc, f4, 16, 16)
    acc.data[...] = seq((16, 16), 1)
    dst = pto.Tile(V, f4, 8, 16)
    ctx_ok = pto.get_subblock_idx() == 0 and pto.get_subblock_num() == 1
    pto.TPUSH(pipe, acc, S.TILE_UP_DOWN)
    pto.TPOP(pipe, dst, S.TILE_UP_DOWN)
    pto.TFREE(pipe, S.TILE_UP_DOWN)
    check("a5_style_c2v_local_split_push_pop", [ctx_ok, np.array_equal(dst.data, acc.data[:8])])
    pipe = pto.TPipe(4, D.DIR_C2V, f4.itemsize * 128, 1)
    flags = []
    for it in range(2):
        acc = pto.Tile(T.Acc, f4, 16, 16)
        acc.data[...] = seq((16, 16), it * 1000 + 1)
        with _ctx(0, 1):
            pto.TPUSH(pipe, acc, S.TILE_UP_DOWN)
        halves = []
        for lane in (0, 1):
            with _ctx(lane, 2):
                t = pto.Tile(V, f4, 8, 16)
                pto.TPOP(pipe, t, S.TILE_UP_DOWN)
                halves.append(t.data.copy())
        for lane in (0, 1):
            with _ctx(lane, 2):
                pto.TFREE(pipe, S.TILE_UP_DOWN)
        flags += [np.array_equal(halves[0], acc.data[:8]), np.array_equal(halves[1], acc.data[8:])]
    check("a5_style_c2v_dual_subblock_split_push_pop", flags)
    pipe = pto.TPipe(9, D.DIR_V2C, f4.itemsize * 256, 2)
    top, bottom = seq((8, 16), 1), seq((8, 16), 1001)
    with _ctx(0, 2):
        t = pto.Tile(V, f4, 8, 16)
        t.data[...] = top
        pto.TPUSH(pipe, t, S.TILE_UP_DOWN)
    flags = [pipe.occupied == 0]
    with _ctx(1, 2):
        t = pto.Tile(V, f4, 8, 16)
        t.data[...] = bottom
        pto.TPUSH(pipe, t, S.TILE_UP_DOWN)
    flags.append(pipe.occupied == 1)
    with _ctx(0, 1):
        m = pto.Tile(T.Mat, f4, 16, 16)
        pto.TPOP(pipe, m, S.TILE_UP_DOWN)
        pto.TFREE(pipe, S.TILE_UP_DOWN)
    flags.append(np.array_equal(m.data, np.concatenate([top, bottom])))
    check("v2c_split_waits_for_both_lanes_before_publish", flags)
    for split in (S.TILE_UP_DOWN, S.TILE_LEFT_RIGHT):
        shape = (8, 16) if split == S.TILE_UP_DOWN else (16, 8)
        axis = 0 if split == S.TILE_UP_DOWN else 1
        pipe = pto.TPipe(7, D.DIR_BOTH, f4.itemsize * 256, 2)
        srcs = [seq(shape, 1), seq(shape, 1001)]
        for lane in (0, 1):
            with _ctx(lane, 2):
                t = pto.Tile(V, f4, *shape)
                t.data[...] = srcs[lane]
                pto.TPUSH(pipe, t, split)
        acc = pto.Tile(T.Acc, f4, 16, 16)
        acc.data[...] = seq((16, 16), 2001)
        res, flags = {}, []

        def lane_pop(lane):
            def run():
                with _ctx(lane, 2):
                    t = pto.Tile(V, f4, *shape)
                    pto.TPOP(pipe, t, split)
                    res[lane] = t.data.copy()
            return run

        def cube():
            flags.append(not res)              # both consumers still wait
            with _ctx(0, 1):
                m = pto.Tile(T.Mat, f4, 16, 16)
                pto.TPOP(pipe, m, split)
                pto.TFREE(pipe, split)
                res["mat"] = m.data.copy()
                pto.TPUSH(pipe, acc, split)
        pto.launch([lane_pop(0), lane_pop(1), cube])
        for lane in (0, 1):
            with _ctx(lane, 2):
                pto.TFREE(pipe, split)
        parts = np.split(acc.data, 2, axis=axis)
        flags += [np.array_equal(res["mat"], np.concatenate(srcs, axis=axis)),
                  np.array_equal(res[0], parts[0]), np.array_equal(res[1], parts[1])]
        check(f"a5_style_dir_both_{split.name.lower()}_waits_for_matching_direction", flags)
    return out


SELF_CHECKS["tpushpop"] = _tpushpop_checks
