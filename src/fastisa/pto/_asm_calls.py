"""PTO-AS runner, PTOAS's operand forms and attributes mapped onto :mod:`fastisa.pto` calls.

The runner calls an instruction ``pto.NAME ins(a, b, ...) outs(d)`` as ``NAME(d, a, b, ...)``
(:meth:`fastisa.pto._asm_runner._Runner.call`).  This module handles the instructions whose
PTOAS form differs from that: attributes that are parameters (``cmpMode``, ``descending``,
``upperOrLower``, ``sat_mode``, ``maskPattern``, ``exhausted``), scratch ``tmp`` operands the
API does not take, several results, and attributes fastisa does not simulate (raised as
NotImplementedError rather than ignored: an ignored ``atomicType = atomic_add`` would be a
silent wrong result).  Operand orders and attribute names: PTOAS
``include/PTO/IR/PTOOps.td`` (hw-native-sys/PTOAS), the op definitions ``TCmpOp``,
``TCmpSOp``, ``TCIOp``, ``TTriOp``, ``TCvtOp``, ``TRsqrtOp``, ``TGatherOp``, ``TMrgSortOp``,
``TRowArgMaxOp`` ..., ``TStoreOp``, ``TMovOp``.
"""

from __future__ import annotations

import contextlib

import numpy as np


def attr_word(text):
    """The enum case of an attribute value: ``#pto<cmp gt>`` / ``#pto.cmp<gt>`` /
    ``#pto.mask_pattern<P0010>`` / ``"GT"`` / ``gt`` -> ``"gt"`` (case kept)."""
    if text is None:
        return None
    t = text.strip()
    if t.startswith("#") and "<" in t:
        t = t[t.index("<") + 1:t.rindex(">")].split()[-1]
    return t.strip('"')


def attr_int(text):
    """``7 : i32`` / ``7`` -> 7; ``true``/``false``/``unit`` -> 1/0/1."""
    t = text.split(":")[0].strip()
    if t in ("true", "unit"):
        return 1
    if t == "false":
        return 0
    return int(t, 0)


def merged_attrs(operands, attrs):
    """Attributes written on the operands inside ``ins(...)`` and after the op, as a dict
    (PTOAS's custom printers put the attr-dict inside ``ins(...)``)."""
    out = {}
    for o in operands:
        for k, v in getattr(o, "attrs", ()):
            out[k] = v
    for k, v in attrs:
        out[k] = v
    return out


def _unsupported(name, key, value):
    return NotImplementedError(f"pto.{name}: {key} = {value} is not simulated by fastisa, so "
                               f"this program cannot run")


def _cmp_mode(text):
    w = attr_word(text)
    return "EQ" if w is None else w.upper()


def _tcmp(P, name, outs, ins, a):
    with _signless_mask(P, outs[0]) as dst:
        P.TCMP(dst, ins[0], ins[1], cmpMode=_cmp_mode(a.get("cmpMode")))


def _tcmps(P, name, outs, ins, a):
    with _signless_mask(P, outs[0]) as dst:
        P.TCMPS(dst, ins[0], ins[1], cmpMode=_cmp_mode(a.get("cmpMode")))


@contextlib.contextmanager
def _signless_mask(P, dst):
    """(ptoacc) The mask tile of pto.tcmp / tcmps.  pto-isa's TCMP writes a uint8_t mask
    (docs/isa/TCMP.md "Output type must be uint8_t"); MLIR's ``i8`` is signless, and PTOAS
    accepts an ``i8`` mask tile (test/tilelang_st/.../tcmp.pto: the golden is the packed
    uint8 mask bytes cast to int8).  So an ``i8`` (fastisa int8) destination gets the
    uint8 mask's bits: the instruction runs on a uint8 tile holding dst's bits, which are
    then written back (elements it does not write keep their contents)."""
    if not isinstance(dst, P.Tile) or dst.dtype != np.int8:
        yield dst
        return
    u = P.Tile(dst.loc, "uint8", dst.rows, dst.cols, blayout=dst.blayout,
               valid_row=P.DYNAMIC, valid_col=P.DYNAMIC)
    u.set_valid_row(dst.valid_row)
    u.set_valid_col(dst.valid_col)
    u.data[...] = dst.data.view(np.uint8)
    yield u
    dst.data[...] = u.data.view(np.int8)


def _tci(P, name, outs, ins, a):
    P.TCI(outs[0], ins[0], descending=bool(attr_int(a.get("descending", "false"))))


def _ttri(P, name, outs, ins, a):
    mode = attr_int(a.get("upperOrLower", "0"))
    if mode not in (0, 1):
        from ..errors import ConstraintError
        raise ConstraintError(f"pto.ttri: upperOrLower must be 0 (lower) or 1 (upper), got "
                              f"{mode}")
    P.TTRI(outs[0], ins[0], upper=bool(mode))


def _tcvt(P, name, outs, ins, a):
    from ._asm_runner import _round_mode
    sat = attr_word(a.get("sat_mode"))
    kw = {}
    if sat is not None:
        kw["satMode"] = P.SaturationMode[sat.upper()]
    # ins(src[, tmp]): tmp is the scratch tile of the f32 -> i16 path; the result does not
    # depend on it
    P.TCVT(outs[0], ins[0], _round_mode(P, a.get("rmode")), **kw)


def _drop_tmp(api, n_keep):
    def run(P, name, outs, ins, a):
        getattr(P, api)(outs[0], *ins[:n_keep])
    return run


def _tgather(P, name, outs, ins, a):
    mask = attr_word(a.get("maskPattern"))
    if mask is not None:                         # mask form: ins(src {maskPattern})
        P.TGATHER(outs[0], ins[0], maskPattern=mask)
        return
    if len(outs) == 2 or (len(ins) == 3 and not isinstance(ins[1], P.Tile)):
        raise NotImplementedError("pto.tgather: the compare form (src, kValue, tmp -> dst, "
                                  "cdst) has no fastisa.pto API yet, so this program cannot "
                                  "run")
    P.TGATHER(outs[0], ins[0], ins[1], ins[2] if len(ins) > 2 else None)


def _tmrgsort(P, name, outs, ins, a):
    exhausted = bool(attr_int(a.get("exhausted", "false")))
    if len(ins) == 2 and not isinstance(ins[1], P.Tile):     # ins(src, blockLen) outs(dst)
        P.TMRGSORT(outs[0], ins[0], int(ins[1]))
        return
    # ins(src0, src1[, src2[, src3]], tmp) outs(dst[, executed : vector<4xi16>])
    *srcs, tmp = ins
    executed = P.MrgSortExecutedNumList()
    P.TMRGSORT(outs[0], executed, tmp, *srcs, exhausted=exhausted)
    return np.array([executed.mrgSortList0, executed.mrgSortList1, executed.mrgSortList2,
                     executed.mrgSortList3], np.int16)


def _tinterleave(P, name, outs, ins, a):
    getattr(P, name.upper())(outs[0], outs[1], *ins)


def _tstore_check(P, name, outs, ins, a):
    atomic = attr_word(a.get("atomicType"))
    if atomic not in (None, "atomic_none", "atomic_add"):
        raise _unsupported(name, "atomicType", a["atomicType"])
    relu = attr_word(a.get("reluPreMode"))
    if relu not in (None, "no_relu", "normal_relu"):
        raise _unsupported(name, "reluPreMode", a["reluPreMode"])
    if relu == "normal_relu" or len(ins) > 1:
        return _tstore_fixpipe(P, name, outs[0], ins, relu == "normal_relu",
                               atomic == "atomic_add")
    if atomic == "atomic_add":
        return _tstore_atomic_add(P, name, outs[0], ins[0])
    return False        # the ordinary path runs it


def _tstore_atomic_add(P, name, pv, tile):
    """``TSTORE<AtomicType::AtomicAdd>``: ``gm[i, j] = gm[i, j] + tile[i, j]`` over the valid
    region, the sum in the global dtype (pto-isa include/pto/cpu/TStore.hpp,
    ``dst.AddToElement``; integers wrap).  A tile of the global tensor's dtype only: the
    converting forms (an accumulator tile stored to another dtype) raise
    NotImplementedError."""
    from ..errors import ConstraintError
    v = pv.global_tensor(P).view2d()
    src = tile.valid
    if v.dtype != src.dtype:
        raise NotImplementedError(f"pto.{name}: atomicType = atomic_add with a dtype "
                                  f"conversion ({src.dtype} tile to {v.dtype} global memory) "
                                  f"is not simulated by fastisa, so this program cannot run")
    if v.shape != src.shape:
        raise ConstraintError(f"pto.{name}: the destination's (rows, cols) {v.shape} must "
                              f"equal the tile's valid shape {src.shape}")
    with np.errstate(all="ignore"):
        v[...] = v + src
    pv.tv.ptr.written = True
    return None


#: GetScalarPreQuantMode (pto-isa include/pto/cpu/common.hpp): (tile dtype, GM dtype) ->
#: the fixpipe mode a TSTORE with a preQuantScalar applies (the ones fastisa runs).
_PRE_QUANT = {("int32", "float16"): "DEQF16", ("float32", "float16"): "QF322F16_PRE",
              ("float32", "bfloat16"): "QF322BF16_PRE"}


def _tstore_fixpipe(P, name, pv, ins, relu, atomic):
    """``TSTORE<..., AtomicType, ReluPreMode>(dst, src[, preQuantScalar])`` of an Acc tile:
    each element through the CPU simulator's ``ConvertStoreValue`` (include/pto/cpu/
    TStore.hpp, common.hpp): with the scalar, the mode ``GetScalarPreQuantMode<tile, GM>``
    gives (scale = the float in the word's low 32 bits), without it ReLU and the C++ cast;
    then stored, or added in the GM dtype (``AtomicAdd``).  The conversion is the one the
    API's TPUSH fixpipe uses (``fastisa.pto._pipes.fixpipe``)."""
    from ..errors import ConstraintError
    from ._pipes import QuantMode, fixpipe
    tile = ins[0]
    v = pv.global_tensor(P).view2d()
    src = np.asarray(tile.valid)
    if v.shape != src.shape:
        raise ConstraintError(f"pto.{name}: the destination's (rows, cols) {v.shape} must "
                              f"equal the tile's valid shape {src.shape}")
    if tile.loc != P.TileType.Acc:
        raise NotImplementedError(f"pto.{name}: reluPreMode / a pre-quantisation scalar on a "
                                  f"{tile.loc.name} tile is not simulated by fastisa, so this "
                                  f"program cannot run")
    pair = (src.dtype.name, v.dtype.name)
    if len(ins) > 1:
        mode = _PRE_QUANT.get(pair)
        if mode is None:
            raise NotImplementedError(f"pto.{name}: the pre-quantisation of a {pair[0]} tile "
                                      f"to {pair[1]} global memory is not simulated by fastisa, "
                                      f"so this program cannot run")
        word = int(ins[1]) & 0xFFFFFFFF
        scale = float(np.array([word], np.uint32).view(np.float32)[0])
        conv = fixpipe(f"pto.{name}", src, QuantMode[mode], relu, scale, None)
    else:
        if src.dtype.kind not in "fi" or v.dtype.kind not in "f" and v.dtype.name != "bfloat16" \
                and v.dtype != src.dtype:
            raise NotImplementedError(f"pto.{name}: reluPreMode from a {pair[0]} tile to "
                                      f"{pair[1]} global memory is not simulated by fastisa, so "
                                      f"this program cannot run")
        x = np.where(src > 0, src, np.zeros((), src.dtype)) if relu else src
        # the C++ static_cast: int32 -> float through float64 (exact) then one rounding
        conv = x.astype(np.float64).astype(v.dtype) if src.dtype.kind == "i" and \
            v.dtype.kind == "f" else x.astype(v.dtype)
    conv = np.asarray(conv).astype(v.dtype)
    with np.errstate(all="ignore"):
        if atomic:
            v[...] = (v + conv).astype(v.dtype)
        else:
            v[...] = conv
    pv.tv.ptr.written = True
    return None


def _tmov_check(P, name, outs, ins, a):
    relu = attr_word(a.get("reluPreMode"))
    if relu not in (None, "no_relu", "normal_relu"):
        raise _unsupported(name, "reluPreMode", a["reluPreMode"])
    # accToVecMode (single_mode_vec0/vec1, dual_mode_split_m/n) picks the vector core(s)
    # the accumulator goes to; pto-isa's CPU simulator ignores it (include/pto/cpu/TMov.hpp,
    # ``(void)mode``) and moves the whole tile, and so does fastisa.
    if len(ins) > 1:
        return _tmov_quant(P, name, outs[0], ins, relu == "normal_relu")
    if relu == "normal_relu":
        return _tmov_relu(P, name, outs[0], ins[0])
    return False


def _tmov_relu(P, name, dst, src):
    """``TMOV<..., ReluPreMode::NormalRelu>`` from an Acc tile: ``x > 0 ? x : 0`` before the
    move's conversion (the CPU simulator's ``ConvertStoreValue`` order), then TMOV."""
    if src.loc != P.TileType.Acc:
        raise NotImplementedError(f"pto.{name}: reluPreMode from a {src.loc.name} tile is not "
                                  f"simulated by fastisa, so this program cannot run")
    tmp = P.Tile(src.loc, src.dtype.name, src.rows, src.cols, blayout=src.blayout,
                 valid_row=src.valid_row, valid_col=src.valid_col, slayout=src.slayout,
                 fractal=src.fractal)
    v = np.asarray(src.valid)
    tmp.valid[...] = np.where(v > 0, v, np.zeros((), v.dtype))
    P.TMOV(dst, tmp)
    return None


_PRE_QUANT_MOV = {("float32", "int8"): "QF322B8_PRE", ("float32", "uint8"): "QF322B8_PRE",
                  ("float32", "float16"): "QF322F16_PRE", ("float32", "bfloat16"): "QF322BF16_PRE",
                  ("int32", "float16"): "DEQF16"}


def _tmov_quant(P, name, dst, ins, relu):
    """``TMOV(dst, src, preQuantScalar)`` / ``TMOV(dst, src, fp)`` from an Acc tile: the
    fixpipe conversion (CPU simulator include/pto/cpu/TMov.hpp through ``ConvertStoreValue``;
    the mode from ``GetScalarPreQuantMode`` / ``GetVectorPreQuantMode``; an ``fp`` tile's
    element ``fp[0, c]`` converted to a 64-bit integer is column c's quant word, as the
    simulator reads it)."""
    from ._pipes import QuantMode, fixpipe
    src, q = ins[0], ins[1]
    if src.loc != P.TileType.Acc:
        raise NotImplementedError(f"pto.{name}: a quantising move from a {src.loc.name} tile "
                                  f"is not simulated by fastisa, so this program cannot run")
    pair = (src.dtype.name, dst.dtype.name)
    x = np.asarray(src.valid)
    if isinstance(q, P.Tile):
        modes = {("float32", "int8"): "VQF322B8_PRE", ("float32", "uint8"): "VQF322B8_PRE",
                 ("int32", "float16"): "VDEQF16"}
        mode = modes.get(pair)
        words = np.asarray(q.valid)[0].astype(np.float64)
        words = np.where(np.isfinite(words) & (words >= 0), words, 0).astype(np.uint64)
        scalar = None
    else:
        mode = _PRE_QUANT_MOV.get(pair)
        words, scalar = None, int(q)
    if mode is None:
        raise NotImplementedError(f"pto.{name}: the quantising move of a {pair[0]} tile to "
                                  f"{pair[1]} is not simulated by fastisa, so this program "
                                  f"cannot run")
    if (dst.valid_row, dst.valid_col) != x.shape:
        from ..errors import ConstraintError
        raise ConstraintError(f"pto.{name}: dst's valid shape {(dst.valid_row, dst.valid_col)} "
                              f"must equal src's {x.shape}")
    if mode.endswith("B8_PRE"):
        conv = fixpipe(f"pto.{name}", x, QuantMode[mode], relu, scalar, words,
                       b8_dtype=dst.dtype)
    else:
        s = None if scalar is None else float(
            np.array([scalar & 0xFFFFFFFF], np.uint32).view(np.float32)[0])
        conv = fixpipe(f"pto.{name}", x, QuantMode[mode], relu, s, words)
    dst.valid[...] = np.asarray(conv).astype(dst.valid.dtype)
    return None


def _tprint(P, name, outs, ins, a):
    from ._asm_runner import _PartView
    src = ins[0]
    if isinstance(src, _PartView):
        src = src.global_tensor(P)
    P.TPRINT(src)


#: Attributes of PTOAS ops (PTOOps.td) that change the result and that fastisa does not map
#: yet: ``{op: {attribute: accepted values (the default)}}``; another value raises
#: NotImplementedError instead of being ignored.
UNSIMULATED = {
    "tcolsum": {"isBinary": ("false",)},
    "thistogram": {"isMSB": ("true",)},
    "tload": {"pad_mode": ("null", "padnull", "pad_null"), "init_out_buffer": ("false",)},
}


def check_unsimulated(name, a):
    for key, ok in UNSIMULATED.get(name, {}).items():
        if key in a:
            w = attr_word(a[key])
            if w is None or w.lower() not in ok:
                raise _unsupported(name, key, a[key])


#: name -> handler(P, name, outs, ins, attrs) returning None (done), False (run the
#: ordinary path) or a value for the second result (tmrgsort's executed counts).
HANDLERS = {
    "tcmp": _tcmp, "tcmps": _tcmps, "tci": _tci, "ttri": _ttri, "tcvt": _tcvt,
    # TRSQRT(dst, src, tmp): "tmp is accepted by the interface but not used"
    # (pto-isa docs/isa/TRSQRT.md); TROW/TCOLARGMAX's tmp is scratch
    "trsqrt": _drop_tmp("TRSQRT", 1),
    "trowargmax": _drop_tmp("TROWARGMAX", 1), "trowargmin": _drop_tmp("TROWARGMIN", 1),
    "tcolargmax": _drop_tmp("TCOLARGMAX", 1), "tcolargmin": _drop_tmp("TCOLARGMIN", 1),
    "tgather": _tgather, "tmrgsort": _tmrgsort,
    "tinterleave": _tinterleave, "tdeinterleave": _tinterleave,
    "tprint": _tprint,
    "tstore": _tstore_check, "tmov": _tmov_check,
}


# ---- ptocomm helper: pto.trandom ins(%k0, %k1, %c0..%c3 {rounds}) outs(%dst) ----
def _trandom(P, name, outs, ins, a):
    """TRandomOp (PTOAS include/PTO/IR/PTOOps.td): two key words, four counter words (any
    signless integers, taken modulo 2**32), ``rounds`` (default 10)."""
    if len(ins) != 6:
        raise ValueError(f"pto.trandom: expected 6 scalar operands (key0, key1, counter0..3), "
                         f"got {len(ins)}")
    words = [int(v) & 0xFFFFFFFF for v in ins]
    rounds = attr_int(a["rounds"]) if "rounds" in a else 10
    P.TRANDOM(outs[0], words[:2], words[2:], rounds=rounds)


HANDLERS["trandom"] = _trandom


# ---- ptomg: pto.mgather / pto.mscatter with their coalesce / oob / atomic attributes ----
def _gm_operand(P, v):
    from ._asm_runner import _PartView
    return v.global_tensor(P) if isinstance(v, _PartView) else v


def _coalesce(a, data, idx):
    """PTOAS's coalesce attribute; absent, the form the verifier infers (MGatherOp /
    MScatterOp verify, lib/PTO/IR/PTO.cpp): an index tile matching the data tile's valid
    shape is elem, a [valid_row, 1] one is row."""
    from ._tile import Tile
    w = attr_word(a.get("coalesce"))
    if w is not None:
        return w.lower()
    if isinstance(idx, Tile) and idx.valid_shape != data.valid_shape:
        return "row"
    return "elem"


def _mgather(P, name, outs, ins, a):
    """MGatherOp ``ins(%mem, %idx[, %scratch]) outs(%dst) {coalesce, gatherOob}``
    (PTOAS include/PTO/IR/PTOOps.td): MGATHER(dst, mem, idx, coalesce, oob, scratch)."""
    from ._asm_runner import _PartView
    dst = outs[0]
    mem, idx = _gm_operand(P, ins[0]), _gm_operand(P, ins[1])
    scratch = _gm_operand(P, ins[2]) if len(ins) > 2 else None
    oob = (attr_word(a.get("gatherOob")) or "undefined").lower()
    P.MGATHER(dst, mem, idx, coalesce=_coalesce(a, dst, idx), oob=oob, scratch=scratch)
    if len(ins) > 2 and isinstance(ins[2], _PartView):
        ins[2].tv.ptr.written = True


def _mscatter(P, name, outs, ins, a):
    """MScatterOp ``ins(%src, %idx) outs(%mem) {coalesce, scatterAtomicOp, scatterOob,
    scatterConflict}``: MSCATTER(mem, src, idx, coalesce, atomic, oob).  scatterConflict
    (default / last) changes nothing here: elements are written in row-major order, so the
    last write wins, as the CPU simulator's sequential loop does (include/pto/cpu/
    MScatter.hpp)."""
    from ._asm_runner import _PartView
    mem = outs[0]
    src, idx = ins
    atomic = (attr_word(a.get("scatterAtomicOp")) or "none").lower()
    oob = (attr_word(a.get("scatterOob")) or "undefined").lower()
    P.MSCATTER(_gm_operand(P, mem), src, idx, coalesce=_coalesce(a, src, idx),
               atomic=atomic, oob=oob)
    if isinstance(mem, _PartView):
        mem.tv.ptr.written = True


def _tquant_mx(P, name, outs, ins, a):
    """TQuantMxOp ``ins(%src) outs(%dst, %exp, %max, %scaling[, %exp_zz]) {quant_type,
    quantScaleAlg, storeMode}`` (PTOAS include/PTO/IR/PTOOps.td): the MX form of TQUANT
    (fastisa.pto.TQUANT, pto-isa docs/isa/TQUANT.md)."""
    qt = (attr_word(a.get("quant_type")) or "").upper()
    if qt not in ("MXFP8", "MXFP4_E2M1"):
        raise ValueError(f"pto.tquant.mx: quant_type must be MXFP8 or MXFP4_E2M1, got "
                         f"{a.get('quant_type')}")
    alg = (attr_word(a.get("quantScaleAlg")) or "ocp").upper()
    mode = (attr_word(a.get("storeMode")) or "nd").upper()
    dst, exp, mx, scaling = outs[:4]
    zz = outs[4] if len(outs) > 4 else None
    P.TQUANT(dst, ins[0], quantType=P.QuantType[qt], exp=exp, max=mx, scaling=scaling,
             scaleAlg=P.QuantScaleAlg[alg], storeMode=P.VecStoreMode[mode], expZZ=zz)


HANDLERS["tquant.mx"] = _tquant_mx
HANDLERS["mgather"] = _mgather
HANDLERS["mscatter"] = _mscatter


def _thistogram(P, name, outs, ins, a):
    """THistogramOp: ``ins(%src, %idx) outs(%dst) {isMSB = true}`` -- the C++
    ``THISTOGRAM<isMSB>``: for uint16 sources the high byte (isMSB) or the low byte
    filtered by ``idx`` (pto-isa docs/isa/THISTOGRAM.md, HistByte BYTE_1 / BYTE_0)."""
    src, idx = ins
    msb = attr_int(a["isMSB"]) if "isMSB" in a else 1
    if src.dtype.name != "uint16":
        raise NotImplementedError("pto.thistogram: isMSB selects a byte of a uint16 source; "
                                  f"a {src.dtype.name} source needs the byte index, which "
                                  "PTOAS's form does not carry, so this program cannot run")
    P.THISTOGRAM(outs[0], src, None if msb else idx, P.HistByte.BYTE_1 if msb else
                 P.HistByte.BYTE_0)


def _tpartarg(api):
    def run(P, name, outs, ins, a):
        dv, di = outs
        s0v, s1v, s0i, s1i = ins
        getattr(P, api)(dv, s0v, s1v, di, s0i, s1i)
    return run


def _tsubview(P, name, outs, ins, a):
    src = ins[0]
    r = int(ins[1]) if len(ins) > 1 else 0
    c = int(ins[2]) if len(ins) > 2 else 0
    P.TSUBVIEW(outs[0], src, r, c)


UNSIMULATED.pop("thistogram", None)     # isMSB is mapped now (ptocomm)
HANDLERS.update({"thistogram": _thistogram, "tpartargmax": _tpartarg("TPARTARGMAX"),
                 "tpartargmin": _tpartarg("TPARTARGMIN"), "tsubview": _tsubview})


# ---- ptoseek: textract / tinsert with their fixpipe options (PTOAS TExtractOp / TInsertOp:
# ins(src, row, col[, preQuantScalar]) {reluPreMode}, textract_fp / tinsert_fp ins(src, fp,
# row, col) {reluPreMode}); reluPreMode used to be dropped on the ordinary path ----
def _extract_insert(P, name, outs, ins, a):
    relu = attr_word(a.get("reluPreMode"))
    if relu not in (None, "no_relu", "normal_relu"):
        raise _unsupported(name, "reluPreMode", a["reluPreMode"])
    fn = getattr(P, name.upper())
    if name.endswith("_fp"):
        fn(outs[0], ins[0], ins[1], int(ins[2]), int(ins[3]), relu=relu == "normal_relu")
        return None
    kw = {"relu": relu == "normal_relu"}
    if len(ins) > 3:
        q = ins[3]
        kw["preQuant"] = q if isinstance(q, P.Tile) else int(q)
    fn(outs[0], ins[0], int(ins[1]), int(ins[2]), **kw)
    return None


HANDLERS.update({"textract": _extract_insert, "tinsert": _extract_insert,
                 "textract_fp": _extract_insert, "tinsert_fp": _extract_insert})


# ---- ptoseek: thistogram's ``byte`` attribute (2026-07 PTOAS THistogramOp: byte in [0, 3],
# default 1; the legacy isMSB = true/false means byte 1/0); the isMSB-only handler above
# ignored ``byte``, so byte = 0 ran as byte 1 ----
def _thistogram_byte(P, name, outs, ins, a):
    src, idx = ins
    byte = attr_int(a["byte"]) if "byte" in a else (
        attr_int(a["isMSB"]) if "isMSB" in a else 1)
    k = P.HistByte(byte)
    needs_idx = (src.dtype.name == "uint16" and byte == 0) or (
        src.dtype.name == "uint32" and byte < 3)
    P.THISTOGRAM(outs[0], src, idx if needs_idx else None, k)


HANDLERS["thistogram"] = _thistogram_byte


# ---- ptoseek: tscatter's mask-pattern form (PTOAS TScatterOp: ins(src {maskPattern})
# outs(dst), the indexes operand Optional) ----
def _tscatter(P, name, outs, ins, a):
    mask = attr_word(a.get("maskPattern"))
    if mask is not None:
        if len(ins) != 1:
            raise ValueError("pto.tscatter: the maskPattern form takes one input (src), got "
                             f"{len(ins)}")
        P.TSCATTER(outs[0], ins[0], maskPattern=mask)
        return None
    return False


HANDLERS["tscatter"] = _tscatter


# ---- ptoacc branch (issue 13): trowexpand* with a row-major one-column per-row operand ----
def _row_operand_block(P, t, R):
    """A RowMajor ``R x 32/sizeof(T)`` tile whose 32-byte block per row repeats ``t[i, 0]``:
    the mode-2 operand pto-isa's TROWEXPAND* take (docs/isa/TROWEXPANDMUL.md)."""
    w = 32 // t.dtype.itemsize
    blk = P.Tile(P.TileType.Vec, t.format, max(R, 1), w, valid_row=R, valid_col=w)
    blk.valid[...] = np.repeat(t.valid[:, :1], w, axis=1)
    return blk


def _trowexpand(P, name, outs, ins, a):
    """pto.trowexpand{add,sub,mul,div,max,min,expdif} whose per-row operand is a RowMajor
    tile with one valid column (``!pto.tile_buf<vec, 32x1xf32>``).  PTOAS accepts it: its
    verifier (lib/PTO/IR/PTO.cpp ``verifyTRowExpandBinaryCore``) does not constrain the
    expanded operand's shape, and its A5 TileLang template (lib/TileOps/
    trowexpandmul_template.py) computes ``dst[r, c] = src0[r, c] op src1[r, 0]``.  pto-isa's
    documented modes are a ColMajor ``[R, 1]`` operand or a RowMajor 32-byte block per row;
    the CPU simulator's loop (include/pto/cpu/TRowExpandOp.hpp, ``c % src1.GetValidCol()``)
    also reads ``src1[r, 0]`` for a one-column operand.  fastisa's Python API keeps the
    documented modes; PTO-AS runs this form as mode 2 with the block ``src1[r, 0]`` repeated,
    which is the same value.  Any other form takes the ordinary path."""
    dst = outs[0]
    if not isinstance(dst, P.Tile) or len(ins) < 2 or not all(isinstance(t, P.Tile)
                                                           for t in ins[:2]):
        return False
    R, C = dst.valid_shape
    src = list(ins[:2])
    for k in (1, 0):
        t, other = src[k], src[1 - k]
        if (t.blayout == P.BLayout.RowMajor and t.valid_shape == (R, 1) and C != 1
                and other.valid_shape == (R, C) and 32 // t.dtype.itemsize != 1):
            src[k] = _row_operand_block(P, t, R)
            getattr(P, name.upper())(dst, *src, *ins[2:])
            return None
    return False


for _n in ("add", "sub", "mul", "div", "max", "min", "expdif"):
    HANDLERS.setdefault("trowexpand" + _n, _trowexpand)


#: Ops whose 0 x 0 destination valid region PTOAS accepts as "PyPTO's dual-AIV no-op replay
#: marker: the op writes no elements" (lib/PTO/IR/PTO.cpp verifyRowReductionValidRegion
#: with allowEmptyMarker, verifyColReductionValidRegion, TRowExpandOp and the
#: trowexpand* binary verifier): PTO-AS runs them as no-ops, whatever the sources' shapes.
#: The arg reductions (trowargmax ...) stay strict, as in PTOAS.
EMPTY_MARKER_OPS = frozenset(
    ["trowsum", "trowmax", "trowmin", "trowprod", "tcolsum", "tcolmax", "tcolmin", "tcolprod",
     "trowexpand"] + ["trowexpand" + n for n in ("add", "sub", "mul", "div", "max", "min",
                                                  "expdif")])
# ---- end ptoacc ----


# ---- ptoacc2 (issue 13): pto.tconcatidx ins(%src0, %src1, %src0Idx, %src1Idx) outs(%dst) ----
def _tconcatidx(P, name, outs, ins, a):
    """PTOAS's indexed concat (docs/PTO_IR_manual.md "pto.tconcatidx"; include/PTO/IR/
    PTOOps.td TConcatidxOp): per dst valid row r, ``n0 = min(src0Idx[r, 0], src0 valid_col,
    dst valid_col)`` columns of src0, then ``n1 = min(src1Idx[r, 0], src1 valid_col, dst
    valid_col - n0)`` of src1.  PTOAS reads the index entries as element counts, where
    pto-isa's CPU simulator TCONCAT (include/pto/cpu/TConcat.hpp) reads byte counts: the
    PTO-AS op follows PTOAS's manual (a negative count copies nothing) and runs as
    ``fastisa.pto.TCONCAT`` with the clamped counts as byte counts of int32 index tiles."""
    if len(ins) != 4 or not all(isinstance(t, P.Tile) for t in ins) \
            or not isinstance(outs[0], P.Tile):
        raise ConstraintError(f"pto.tconcatidx: expected ins(src0, src1, src0Idx, src1Idx) tiles "
                         f"and outs(dst), got {len(ins)} ins")
    dst, (s0, s1, i0, i1) = outs[0], ins
    R, C = dst.valid_shape
    for nm, t in (("src0Idx", i0), ("src1Idx", i1)):
        if t.format.is_float:
            raise ConstraintError(f"pto.tconcatidx: {nm} must be an integer tile, "
                                  f"got {t.format.name}")
        if t.valid_row < R or t.valid_col < 1:
            raise ConstraintError(f"pto.tconcatidx: {nm} valid shape must be at least ({R}, 1), "
                             f"got {t.valid_shape}")
    if R == 0:
        return None
    n0 = np.clip(i0.data[:R, 0].astype(np.int64), 0, min(s0.valid_col, C))
    n1 = np.clip(i1.data[:R, 0].astype(np.int64), 0, None)
    n1 = np.minimum(n1, np.minimum(s1.valid_col, C - n0))
    b0 = P.Tile(P.TileType.Vec, "int32", R, 8)
    b1 = P.Tile(P.TileType.Vec, "int32", R, 8)
    b0.data[:, 0] = n0 * 4
    b1.data[:, 0] = n1 * 4
    P.TCONCAT(dst, s0, s1, b0, b1)
    return None


from ..errors import ConstraintError  # noqa: E402

HANDLERS["tconcatidx"] = _tconcatidx
# ---- end ptoacc2 ----
