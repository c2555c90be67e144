"""PTO-AS verifier: PTOAS's rules for programs it rejects, checked after parsing.

Each rule is one PTOAS op verifier (hw-native-sys/PTOAS ``lib/PTO/IR/PTO.cpp`` and the
passes it runs before code generation); the negative lit tests of ``test/basic``
(``// RUN: not ptoas ...``) are the catalogue.  Every violation raises
:class:`fastisa.errors.AsmSyntaxError` with the line and column of the op, worded as
PTOAS words it (``'pto.tinsert' op expects ...``).

Rules that depend on the target take it from ``parse(text, arch=...)``, else from the
module's ``pto.target_arch`` attribute, else PTOAS's default ``a3``; ``level`` is PTOAS's
``--pto-level`` (``level3``: every ``pto.alloc_tile`` names its ``addr``).

The rules of the 2026-07 PTOAS fork (wang-chonghao/PTOAS, its negative lit tests of
``test/lit``) live beside this module: per-op tmp / parameter / element-type rules in
:mod:`fastisa.pto._asm_verify_ops`, module-structure and pass rules (``pto.backend``
partitions, peer lookups, uncovered sections, PTODSL subkernel contracts, frontend pipe
kernel kinds) in :mod:`fastisa.pto._asm_verify_modules`; the pipe components and flag ids
of PTOResolveReservedBuffersPass are :func:`_verify_pipe_components` here.
"""

from __future__ import annotations

import numpy as np

from ..errors import AsmSyntaxError
from ._asm_verify_modules import (_attr_value, _walk, verify_frontend_kinds,
                                  verify_modules, verify_subkernel_contracts,
                                  verify_vpto_container)
from ._asm_verify_ops import verify_generic, verify_op, verify_op_2
from ._asm_ast import (AllocTileOp, ConstantOp, DpsOp, ForOp, GenericOp, MemRefType, TAssignOp,
                       TileBufType, ViewType)

_FLOATS_16_32 = ("f16", "f32")




def _is_a5(arch):
    return arch.lower() in ("a5", "ascend950", "950")


def verify(module, lines, arch=None, level=None):
    """Raise AsmSyntaxError for the first PTOAS verifier rule ``module`` breaks."""
    arch = (arch or module.target_arch or "a3").lower()

    def err(msg, op):
        src = lines[op.line - 1] if 0 < op.line <= len(lines) else ""
        return AsmSyntaxError(msg, op.line, op.col, src)

    pipe_users = []      # (op, split)
    pipe_inits = []
    for f in module.funcs:
        if any(k == "pto.entry" for k, _ in f.attrs) and f.results:
            raise err(f"'func.func' op @{f.name}: PTO entry functions must return void", f)
        if f.body is None:
            continue
        consts = {op.result: op.value for op in _walk(f.body) if isinstance(op, ConstantOp)}
        for op in _walk(f.body):
            if isinstance(op, TAssignOp) and level is not None and level != "level3":
                raise err("pto.tassign is only supported when --pto-level=level3.", op)
            if isinstance(op, AllocTileOp) and level == "level3" and op.addr is None:
                raise err("'pto.alloc_tile' op requires 'addr' operand when "
                          "--pto-level=level3", op)
            if isinstance(op, DpsOp):
                _verify_dps(op, arch, err)
            elif isinstance(op, GenericOp):
                short = op.name[4:] if op.name.startswith("pto.") else None
                verify_generic(op, err)
                if short in ("tpop_from_aic", "tpop_from_aiv"):
                    _verify_tpop(op, err)
                if short in ("tpush_to_aiv", "tpush_to_aic", "tpop_from_aic", "tpop_from_aiv",
                             "tfree_from_aic", "tfree_from_aiv"):
                    pipe_users.append((op, _split(op)))
                if short in ("aic_initialize_pipe", "aiv_initialize_pipe"):
                    pipe_inits.append(op)
                    _verify_pipe_slots(op, arch, err)
                if short in ("tput_async", "comm.tput_async", "comm.tget_async",
                             "tprefetch_async"):
                    _verify_tput_async(op, err)
                if short == "alloc_multi_tile":
                    _verify_alloc_multi_tile(op, level, err)
                if short == "subview":
                    _verify_tile_subview(op, consts, err)
        _verify_gm_pipe_entries(f, err)
    _verify_reserved_buffers(module, level, err)
    verify_modules(module, err)
    splits = {s for _op, s in pipe_users}
    if pipe_inits and len(splits) > 1:
        raise err("'pto.initialize_l2l_pipe' op conflicting pipe split usage across peer "
                  "pipe init ops", pipe_inits[0])
    for init in pipe_inits:
        if _attr_value(init, "nosplit") == "false" and splits == {0}:
            raise err("'pto.initialize_l2l_pipe' op explicit 'nosplit = false' conflicts "
                      "with downstream users that require split = 0", init)
    verify_frontend_kinds(module, err)
    verify_subkernel_contracts(module, err)
    verify_vpto_container(module, err)


def _split(op):
    v = _attr_value(op, "split")
    try:
        return int(v) if v is not None else 0
    except ValueError:
        return 0


def _tile(ty):
    if isinstance(ty, MemRefType):
        return ty.tile_type()
    return ty if isinstance(ty, TileBufType) else None


def _verify_tpop(op, err):
    """``tpop_from_*(%vr, %vc)`` needs a result tile with a dynamic valid shape."""
    from ._asm_generic import _result_type, _top
    header = [t for t, d in _top(op) if t.kind == "percent" and d == 1]
    if not header:
        return
    ty = _result_type(op)
    if isinstance(ty, TileBufType) and (ty.v_row is not None or ty.v_col is not None):
        raise err(f"'{op.name}' op expects tile result to have dynamic validShape (?, ?) "
                  f"when valid_row/valid_col operands are provided", op)


def _verify_tput_async(op, err):
    """The destination (first operand) must be a flat 1-D static GM memref (tprefetch_async:
    its source, branch ptomg)."""
    from ._asm_lexer import Token
    from ._asm_parser import _Parser
    toks = list(op.toks)
    k = next((i for i, t in enumerate(toks) if t.text == ":"), None)
    if k is None:
        return
    p = _Parser.__new__(_Parser)
    p.text, p.lines, p.i = "", [], 0
    p.toks = toks[k + 1:] + [Token("eof", "", toks[-1].line, toks[-1].col + 1)]
    try:
        tys = [p.type_()]
    except AsmSyntaxError:
        return
    for ty in tys:
        if isinstance(ty, MemRefType) and (ty.space in (None, "gm")) and (
                len([d for d in ty.shape if d != 1]) > 1 or None in ty.shape):
            what = "src" if op.name.endswith("tprefetch_async") else "dst"
            raise err(f"'{op.name}' op expects {what} to be a static flat contiguous "
                      "logical 1D GM memref", op)
        break


def _verify_dps(op, arch, err):
    name = op.name
    ins = [_tile(t) for t in op.in_types]
    outs = [_tile(t) for t in op.out_types]
    a5 = _is_a5(arch)
    _verify_tmp_forms(op, ins, outs, a5, err)
    verify_op(op, ins, outs, a5, err)
    verify_op_2(op, ins, outs, a5, err)
    if name == "tinsert" and ins and outs and ins[0] and outs[0]:
        _verify_tinsert(op, ins[0], outs[0], a5, err)
    if name == "textract" and ins and outs and ins[0] and outs[0]:
        _verify_textract(op, ins[0], outs[0], a5, err)
    if name in ("mgather", "mscatter"):
        _verify_mgather_mscatter(op, ins, outs, err)
    if name == "tsel" and not a5:
        # (ptoacc) the 2026-07 PTOAS TSelOp::verify adds bf16 to the A2/A3 list
        tiles = [t for t in ins[1:3] + outs[:1] if t is not None]
        # integers of 16 and 32 bits of any signedness
        ok = ("i16", "i32", "si16", "si32", "ui16", "ui32", "u16", "u32", "f16", "bf16", "f32")
        if any(t.dtype not in ok for t in tiles):
            raise err("'pto.tsel' op expects A2/A3 tsel src0, src1, and dst element type to "
                      "be i16/i32/f16/bf16/f32", op)
    if name == "tgather" and not a5 and len(op.in_types) >= 2 and ins[0] is not None \
            and ins[1] is None:           # compare form: tgather ins(src, scalar, tmp)
        attrs = list(op.attrs) + [kv for o in op.ins for kv in o.attrs]
        cmp_eq = any(k.lower() in ("cmpmode", "cmp_mode") and "eq" in v.lower()
                     for k, v in attrs)
        ok = ins[0].dtype in _FLOATS_16_32 or (ins[0].dtype == "i32" and cmp_eq)
        if not ok:
            raise err("'pto.tgather' op expects A2/A3 compare-form tgather src element type "
                      "to be f16/f32, or i32 when cmpMode=eq", op)


# ---- ptomg: the !pto.tensor_view pipe entries (lib/PTO/IR/PTO.cpp
# verifyFrontendTensorEntryMatchesInit and TAllocOp's check against initialize_l2g2l_pipe) ----
def _tensor_view_of(op):
    """(dims, elem) of the first !pto.tensor_view<...> in op's text (None dims: ``?``)."""
    import re
    m = re.search(r"!pto\.tensor_view<([^>]*)>", " ".join(t.text for t in op.toks)
                  .replace(" ", ""))
    if m is None:
        return None
    parts = m.group(1).split("x")
    dims = tuple(None if d == "?" else int(d) for d in parts[:-1] if d == "?" or d.isdigit())
    return dims, parts[-1]


def _verify_gm_pipe_entries(f, err):
    from ._asm_generic import _percents
    inits, l2g2l = {}, {}
    for op in _walk(f.body):
        if not isinstance(op, GenericOp):
            continue
        short = op.name[4:] if op.name.startswith("pto.") else op.name
        if short in ("aic_initialize_pipe", "aiv_initialize_pipe"):
            tv = _tensor_view_of(op)
            if tv is not None:
                inits[_int_of(_attr_value(op, "id") or "0") or 0] = tv
        elif short == "initialize_l2g2l_pipe" and op.results:
            tv = _tensor_view_of(op)
            if tv is not None:
                l2g2l[op.results[0][0]] = tv
    for op in _walk(f.body):
        if not isinstance(op, GenericOp):
            continue
        short = op.name[4:] if op.name.startswith("pto.") else op.name
        slot, what = None, None
        if short in ("talloc_to_aiv", "talloc_to_aic", "tpush_to_aiv", "tpush_to_aic",
                     "tpop_from_aic", "tpop_from_aiv", "tfree_from_aic", "tfree_from_aiv"):
            slot = inits.get(_int_of(_attr_value(op, "id") or "0") or 0)
            what = "gm_slot_tensor"
        elif short == "talloc":
            ps = _percents(op)
            slot = l2g2l.get(ps[1].text[1:]) if len(ps) > 1 else None
            what = "initialize_l2g2l_pipe gm_addr"
        entry = _tensor_view_of(op) if slot is not None else None
        if entry is None:
            continue
        (sd, se), (ed, ee) = slot, entry
        q = f"'{op.name}' op expects pipe entry "
        if se != ee:
            raise err(q + f"element type to match {what} element type", op)
        if len(sd) != len(ed):
            raise err(q + f"rank to match {what} rank", op)
        for k, (a, b) in enumerate(zip(ed, sd)):
            if a is not None and b is not None and a != b:
                raise err(q + f"dimension {k} to match {what} dimension {b}", op)


# ---- ptomg: MGatherOp / MScatterOp (lib/PTO/IR/PTO.cpp MGatherOp::verify,
# MScatterOp::verify, verifyMGatherMScatterTileShape) ----
def _verify_mgather_mscatter(op, ins, outs, err):
    q = f"'pto.{op.name}' op "
    coalesce = _attr_of(op, "coalesce")
    if op.name == "mgather":
        if coalesce is None:
            raise err(q + "requires attribute 'coalesce'", op)
        data, idx, dname = (outs[0] if outs else None), (ins[1] if len(ins) > 1 else None), "dst"
        word = coalesce.split()[-1].strip(">").split("<")[-1]
        if data is not None and data.loc == "mat":     # the GM -> L1 form (verifyMGatherGm2L1)
            raw = op.in_types[1] if len(op.in_types) > 1 else None
            if isinstance(raw, TileBufType) or (isinstance(raw, MemRefType) and
                                                raw.space not in (None, "gm")):
                raise err(q + "expects GM->L1 mgather idx to be a GM tensor (memref / "
                          "partition_tensor_view), not a tile_buf", op)
            if data.blayout != "col_major" or data.slayout != "row_major":
                raise err(q + "expects GM->L1 mgather dst (loc=mat) to use "
                          "blayout=col_major and slayout=row_major (NZ)", op)
            if data.fractal != 512:
                raise err(q + "expects GM->L1 mgather dst fractal size to be 512", op)
            if word == "elem" and len(op.in_types) < 3:
                raise err(q + "expects GM->L1 mgather with coalesce=elem to provide a GM "
                          "scratch operand", op)
            if word == "row" and len(op.in_types) > 2:
                raise err(q + "expects GM->L1 mgather with coalesce=row to omit the scratch "
                          "operand", op)
            return
        if len(op.in_types) > 2:
            raise err(q + "expects scratch operand only on GM->L1 (loc=mat) mgather", op)
    else:
        if coalesce is None and any(_attr_of(op, k) is not None for k in (
                "scatterAtomicOp", "scatterOob", "scatterConflict")):
            raise err(q + "expects coalesce when scatterAtomicOp/scatterOob/scatterConflict "
                      "is specified", op)
        data, idx, dname = (ins[0] if ins else None), (ins[1] if len(ins) > 1 else None), "src"
    if data is None or idx is None:
        return
    word = None if coalesce is None else coalesce.split()[-1].strip(">").split("<")[-1]

    def compat(a, b):
        return a is None or b is None or a == b

    def unit(a):
        return a is None or a in (0, 1)

    dr, dc, ir, ic = data.v_row, data.v_col, idx.v_row, idx.v_col
    rm, cm = idx.blayout == "row_major", idx.blayout == "col_major"
    row_1xr = rm and unit(ir) and compat(ic, dr)
    row_rx1 = cm and compat(ir, dr) and unit(ic)
    base_row = rm and compat(ir, dr) and unit(ic)
    elem = compat(ir, dr) and compat(ic, dc)
    if word is None:
        if not (base_row or elem):
            raise err(q + f"expects idx valid_shape to be [{dname}.valid_row, 0|1] or match "
                      f"{dname} valid_shape when coalesce is omitted", op)
    elif word == "row" and not (row_1xr or row_rx1):
        raise err(q + f"expects row-coalesce idx valid_shape to be [0|1, {dname}.valid_row] "
                  f"or [{dname}.valid_row, 0|1]", op)
    elif word == "elem" and not elem:
        raise err(q + f"expects elem-coalesce idx valid_shape to match {dname} valid_shape",
                  op)


# ---- ptoseek: the scratch-operand rules of the 2026-07 PTOAS (lib/PTO/IR/PTO.cpp
# TPowOp::verify / TPowSOp::verify / verifyTPowTmpShape, TXorSOp::verify, TPReluOp's A2/A3
# tmp contract) ----
_INT_8_16_32 = ("i8", "i16", "i32", "si8", "si16", "si32", "ui8", "ui16", "ui32")
_FP_POW = ("f16", "f32", "bf16")


def _attr_text(op):
    return " ".join(f"{k}={v}" for k, v in list(op.attrs) + [kv for o in op.ins
                                                               for kv in o.attrs])


def _is_lowp(elem):
    """PTOAS's isPTOLowPrecisionType: the fp8 / hifloat8 / fp4 element types."""
    return isinstance(elem, str) and (elem.startswith(("f8", "f4", "!pto.")))


def _elem_of(ty):
    return getattr(ty, "elem", None) or getattr(ty, "dtype", None)


def _attr_of(op, key):
    for k, v in list(op.attrs) + [kv for o in op.ins for kv in o.attrs]:
        if k == key:
            return v
    return None


def _int_of(text):
    try:
        return int(str(text).split(":")[0].strip(), 0)
    except ValueError:
        return None


def _verify_tmp_forms(op, ins, outs, a5, err):
    name = op.name
    q = f"'pto.{name}' op "
    if name == "thistogram":
        # THistogramOp::verify
        byte_t, msb_t = _attr_of(op, "byte"), _attr_of(op, "isMSB")
        byte = _int_of(byte_t) if byte_t is not None else 1
        if msb_t is not None:
            legacy = 1 if msb_t.strip() == "true" else 0
            if byte_t is not None and byte != legacy:
                raise err(q + "does not allow conflicting 'byte' and legacy 'isMSB' "
                          "attributes", op)
            byte = legacy
        if byte is not None and not 0 <= byte <= 3:
            raise err(q + "expects byte to be in range [0, 3]", op)
        if not a5:
            raise err(q + "thistogram is only supported on A5", op)
        if ins and ins[0] is not None and ins[0].dtype in ("ui16", "u16", "i16") \
                and byte not in (0, 1):
            raise err(q + "expects byte to be 0 or 1 when src element type is ui16", op)
    if name in ("trsqrt", "trowexpanddiv") and "high_precision" in _attr_text(op):
        need = 2 if name == "trsqrt" else 3
        if len(op.in_types) < need:
            raise err(q + "expects tmp when precisionType is high_precision", op)
    if name == "tstore" and a5 and ins and ins[0] is not None \
            and ins[0].loc not in ("vec", "acc"):
        raise err(q + "expects A5 tstore src to use loc=vec or loc=acc", op)
    if name == "tstore" and ins and ins[0] is not None and op.out_types:
        # ptoacc: TStoreOp::verify (lib/PTO/IR/PTO.cpp): when the partition view's shape and
        # the tile's valid shape are both static (and positive), their element counts match
        # (a larger view is PTOAS's error; fastisa's TSTORE API would write the valid part)
        vt = op.out_types[0]
        tv = ins[0]
        if isinstance(vt, ViewType) and vt.kind == "partition_tensor_view" \
                and not vt.inferred and vt.shape and None not in vt.shape \
                and tv.v_row is not None and tv.v_col is not None \
                and min(vt.shape) > 0 and tv.v_row > 0 and tv.v_col > 0:
            n = 1
            for d in vt.shape:
                n *= d
            if n != tv.v_row * tv.v_col:
                raise err(q + f"expects dst static element count ({n}) to match src "
                          f"valid_shape static element count ({tv.v_row * tv.v_col})", op)
    if name == "tprint":
        has_tmp = len(op.in_types) > 1
        if _attr_of(op, "printFormat") is not None and not has_tmp:
            raise err(q + "expects printFormat only when tmp is present", op)
        if has_tmp and (not ins or ins[0] is None):
            raise err(q + "expects tmp only when src is a tile_buf", op)
    if not a5 and name in ("tload", "tprefetch", "tcvt", "tstore"):
        # lib/PTO/IR/PTO.cpp TLoadOp / TPrefetchOp / TCvtOp / TStoreOp verifyA2A3
        elems = [_elem_of(t) for t in list(op.in_types) + list(op.out_types)]
        if name == "tstore":
            elems = [_elem_of(t) for t in op.out_types]
        if any(_is_lowp(e) for e in elems):
            what = "vec/mat tstore low-precision dst" if name == "tstore" else (
                f"{name} low-precision")
            raise err(q + f"expects A2/A3 {what} element types to be unsupported", op)
    if name in ("tpow", "tpows") and ins and ins[0] is not None:
        elem = ins[0].dtype
        is_int, is_fp = elem in _INT_8_16_32, elem in _FP_POW
        hp = "high_precision" in _attr_text(op)
        if not a5 and hp:
            raise err(q + "A2/A3 does not support precisionType=high_precision", op)
        if a5 and hp and not is_fp:
            raise err(q + f"expects A5 {name} element type to be f16/f32/bf16 when "
                      f"precisionType=high_precision", op)
        tmp = ins[2] if len(op.in_types) == 3 else None
        has_tmp = len(op.in_types) == 3
        if is_fp and not has_tmp:
            raise err(q + "expects tmp when element type is floating-point (required by "
                      f"the floating-point pow lowering)", op)
        if is_int and has_tmp:
            raise err(q + "does not accept tmp when element type is integer", op)
        dst = outs[0] if outs else None
        if tmp is not None and dst is not None:
            if tmp.dtype != dst.dtype:
                raise err(q + "expects tmp and dst to have the same element type", op)
            if tmp.blayout != "row_major":
                raise err(q + "expects tmp to use row-major layout", op)
            if (tmp.v_row, tmp.v_col) != (dst.v_row, dst.v_col):
                raise err(q + "expects tmp and dst to have the same valid_shape", op)
    if name == "txors" and len(op.in_types) == 3 and ins[0] is not None \
            and ins[2] is not None:
        src, tmp = ins[0], ins[2]
        if tmp.dtype != src.dtype:
            raise err(q + "expects tmp to have the same element type as src and dst", op)
        if tmp.blayout != "row_major":
            raise err(q + "expects tmp to use row-major layout", op)
    if name == "tprelu" and not a5 and len(op.in_types) == 3 and ins[2] is not None \
            and outs and outs[0] is not None:
        tmp, dst = ins[2], outs[0]
        if dst.v_row is not None and tmp.rows < dst.v_row + 1:
            raise err(q + f"expects A2/A3 tmp shape[0] to be at least dst valid_shape[0] + 1 "
                      f"({dst.v_row + 1})", op)
        if dst.v_col is not None and tmp.v_col is not None \
                and tmp.v_col < -(-dst.v_col // 8):
            raise err(q + f"expects A2/A3 tmp valid_shape[1] to be at least ceil(dst "
                      f"valid_shape[1] / 8) ({-(-dst.v_col // 8)})", op)


def _verify_pipe_slots(op, arch, err):
    """PTOAS's frontend pipe-init verifier (lib/PTO/IR/PTO.cpp): ``slot_num`` > 0 (default
    4 for dir_mask = 3, else 8); ``local_slot_num`` only on A2/A3, in [1, slot_num]."""
    q = f"'{op.name}' op "
    dir_mask = _int_of(_attr_value(op, "dir_mask") or "0")
    sn = _attr_value(op, "slot_num")
    slot_num = _int_of(sn) if sn is not None else (4 if dir_mask == 3 else 8)
    if slot_num is not None and slot_num <= 0:
        raise err(q + "expects 'slot_num' to be greater than 0", op)
    ln = _attr_value(op, "local_slot_num")
    if ln is None:
        return
    if _is_a5(arch):
        raise err(q + "'local_slot_num' is only supported for a2/a3 frontend pipe lowering",
                  op)
    local = _int_of(ln)
    if local is not None and local <= 0:
        raise err(q + "expects 'local_slot_num' to be greater than 0", op)
    if local is not None and slot_num is not None and local > slot_num:
        raise err(q + f"expects 'local_slot_num' to be less than or equal to slot_num "
                  f"({slot_num}) for dir_mask = {dir_mask}", op)


def _verify_tile_subview(op, consts, err):
    """PTOAS SubViewOp::verify for a tile source: sizes > 0; explicit ``valid [%r, %c]``
    give the result's valid dims (a constant clipped to the size; a runtime value: ``?``);
    without them the result may declare any static valid dim in [0, size] but not ``?``."""
    from ._asm_generic import _bracket_list, _result_type, _types
    src = _types(op, ":")
    src = src[0] if src else None
    dst = _result_type(op)
    if not isinstance(src, TileBufType) or not isinstance(dst, TileBufType) or dst is src:
        return
    q = "'pto.subview' op "
    sizes = [t for t in (_bracket_list(op, "sizes") or []) if t.kind == "int"]
    if len(sizes) != 2:
        return
    h, w = (int(t.text) for t in sizes)
    if h <= 0 or w <= 0:
        raise err(q + "subview sizes must be positive", op)
    if (dst.rows, dst.cols) != (h, w):
        raise err(q + "expects result shape to match subview sizes", op)
    valid = _bracket_list(op, "valid")
    for k, (size, declared) in enumerate(((h, dst.v_row), (w, dst.v_col))):
        if valid:
            t = valid[k]
            c = consts.get(t.text[1:]) if t.kind == "percent" else int(t.text, 0)
            want = min(int(c), size) if isinstance(c, (int, np.integer)) else None
            if declared != want:
                raise err(q + f"expects result valid_shape[{k}] to match inferred/explicit "
                          f"valid_{'row' if k == 0 else 'col'}", op)
        elif declared is None or not 0 <= declared <= size:
            raise err(q + f"expects result valid_shape[{k}] to match inferred/explicit "
                      f"valid_{'row' if k == 0 else 'col'}", op)


def _verify_alloc_multi_tile(op, level, err):
    """PTOAS AllocMultiTileOp::verify and the level checks of PTOViewToMemref: count >= 2;
    ``addr`` only, and then always, at ``--pto-level=level3``."""
    import re
    text = " ".join(t.text for t in op.toks)
    m = re.search(r"count\s*=\s*(\d+)", text)
    if m and int(m.group(1)) < 2:
        raise err("multi_tile_buf count must be >= 2", op)
    has_addr = any(t.text == "addr" for t in op.toks)
    if level == "level3" and not has_addr:
        raise err("pto.alloc_multi_tile requires a base 'addr' operand when "
                  "--pto-level=level3", op)
    if has_addr and level is not None and level != "level3":
        raise err("unexpected 'addr' operand on pto.alloc_multi_tile: only supported when "
                  "--pto-level=level3", op)


def _verify_tinsert(op, src, dst, a5, err):
    """PTOAS TInsertOp::verify (lib/PTO/IR/PTO.cpp of the 2026-07 PTOAS; the 2026-04 one
    allowed fewer pairs, and rejects every program the newer one rejects): A2/A3
    acc->mat (f32 -> f16/bf16 without a pre-quantisation scalar) or vec->vec of one dtype;
    A5 acc->mat, acc->vec, vec->mat or vec->vec (one dtype, matching ND/NZ layouts)."""
    q = "'pto.tinsert' op "
    nd = lambda t: (t.blayout, t.slayout) == ("row_major", "none_box")   # noqa: E731
    nz = lambda t: (t.blayout, t.slayout) == ("col_major", "row_major")  # noqa: E731
    has_pre = len(op.in_types) > 3
    if not a5:
        if (src.loc, dst.loc) == ("vec", "vec"):
            if src.dtype != dst.dtype or src.dtype not in ("i8", "f16", "bf16", "f32"):
                raise err(q + "expects A2/A3 vec->vec tinsert src/dst to have same supported "
                          "dtype (i8/f16/bf16/f32)", op)
            return
        if (src.loc, dst.loc) != ("acc", "mat"):
            raise err(q + "expects A2/A3 tinsert to use acc->mat or vec->vec", op)
        if not has_pre and not (src.dtype == "f32" and dst.dtype in ("f16", "bf16")):
            raise err(q + "expects A2/A3 tinsert element types to be src=f32, dst=f16/bf16",
                      op)
        return
    pair = (src.loc, dst.loc)
    if pair not in (("acc", "mat"), ("acc", "vec"), ("vec", "mat"), ("vec", "vec")):
        raise err(q + "expects A5 tinsert to use a supported src/dst loc pair: acc->mat, "
                  "acc->vec, vec->mat, or vec->vec", op)
    if pair == ("vec", "vec"):
        if not ((nd(src) and nd(dst)) or (nz(src) and nz(dst))):
            raise err(q + "expects A5 vec->vec tinsert src/dst layouts to match: both "
                      "ND(row_major/none_box) or both NZ(col_major/row_major)", op)
        if src.dtype != dst.dtype:
            raise err(q + "expects A5 vec->vec tinsert src/dst to have same supported dtype "
                      "(fp8/f16/bf16/f32/i8/i32)", op)


def _verify_textract(op, src, dst, a5, err):
    """PTOAS TExtractOp::verify (lib/PTO/IR/PTO.cpp): the element types, the src/dst
    location pairs and the layouts each pair needs, per target."""
    q = "'pto.textract' op "
    rm, cm, nb = "row_major", "col_major", "none_box"
    sl, dl = (src.blayout, src.slayout), (dst.blayout, dst.slayout)
    has_pre = len(op.in_types) > 3
    if src.loc != "acc" and src.dtype != dst.dtype:
        raise err(q + "expects src and dst to have the same element type", op)
    if a5:
        ok = ((src.loc == "mat" and dst.loc in ("left", "right", "scaling"))
              or (src.loc == "vec" and dst.loc in ("mat", "vec"))
              or (src.loc == "acc" and dst.loc in ("mat", "vec")))
        if not ok:
            raise err(q + "expects A5 textract to use a supported src/dst loc pair", op)
        if src.loc == "mat":
            good = (sl == (rm, cm) or (src.blayout != rm and src.slayout == rm)
                    or (dst.loc == "left" and src.blayout == rm))
            if not good:
                raise err(q + "expects A5 textract src to use a supported mat "
                          "blayout/slayout combination", op)
            # PTOAS's verifier also asks A5 left dst for col_major/row_major and right dst
            # for row_major/col_major, but its own pypto samples (Qwen3DecodeA5: left
            # row_major/row_major) compile, so fastisa does not enforce those two
        elif src.loc == "vec" and dst.loc == "vec":
            if sl != (rm, nb) or dl != (rm, nb):
                raise err(q + "expects A5 vec->vec textract src/dst to use ND layout "
                          "(blayout=row_major, slayout=none_box)", op)
        elif src.loc == "acc":
            if sl != (cm, rm):
                raise err(q + "expects A5 acc-source textract src to use blayout=col_major "
                          "and slayout=row_major", op)
            if dst.loc == "mat" and dl != (cm, rm):
                raise err(q + "expects A5 acc-source textract dst to use blayout=col_major "
                          "and slayout=row_major", op)
            if dst.loc == "vec" and dl != (rm, nb):
                raise err(q + "expects A5 acc->vec textract dst to use ND layout "
                          "(blayout=row_major, slayout=none_box)", op)
        return
    if src.loc == "vec" and dst.loc == "vec":
        return
    if src.loc == "acc":
        if dst.loc != "mat":
            raise err(q + "expects A2/A3 acc-source textract dst to use loc=mat", op)
        return
    if src.loc != "mat":
        raise err(q + "expects A2/A3 textract src to use loc=mat, loc=acc, or loc=vec", op)
    if dst.loc not in ("left", "right"):
        raise err(q + "expects A2/A3 textract dst to use loc=left, loc=right, loc=mat, or "
                  "loc=vec", op)
    del has_pre


def _verify_reserved_buffers(module, level, err):
    """PTOAS's reserve-buffer rules (hw-native-sys/PTOAS lib/PTO/Transforms/):

    * PTOPlanMemory.cpp (run unless ``--pto-level=level3``): a ``pto.reserve_buffer`` with
      ``auto = false`` (an explicit base) is rejected;
    * PTOResolveReservedBuffersPass.cpp (2026-07 fork): a ``pto.initialize_l2l_pipe`` /
      ``initialize_l2g2l_pipe`` without ``flag_base`` needs its local address from
      ``pto.reserve_buffer`` / ``pto.import_reserved_buffer``; the pipe inits (these and
      the frontend ``pto.aic/aiv_initialize_pipe``, whose consumer buffers are their local
      addresses) joined by one logical pipe (the reserving function, the buffer name, the
      direction) form components of exactly two inits in two functions that agree on
      direction and slot shape, and each function's components fit within 16 hardware
      flag ids (2 per one-way pipe, 4 per two-way pipe, at even bases)."""
    from ._asm_generic import _percents
    inits = []           # [op, func name, dir_mask, signature, flag_base]
    keyed = {}           # (owner, name, dir) -> [init index]
    for f in module.funcs:
        if f.body is None:
            continue
        origin = {}      # SSA name -> (owner function, buffer name)
        for op in _walk(f.body):
            if not isinstance(op, GenericOp):
                continue
            names = op.result_names()
            if op.name == "pto.reserve_buffer":
                if (_attr_value(op, "auto") == "false" and level != "level3"):
                    raise err("'pto.reserve_buffer' op pto.reserve_buffer with explicit "
                              "'base' (auto = false) is not supported in PlanMemory; use "
                              "--pto-level=level3 or set auto = true", op)
                if names:
                    origin[names[0]] = (f.name, (_attr_value(op, "name") or "").strip('"'))
            elif op.name == "pto.import_reserved_buffer" and names:
                peer = (_attr_value(op, "peer_func") or "").lstrip("@")
                origin[names[0]] = (peer, (_attr_value(op, "name") or "").strip('"'))
            elif op.name in ("pto.initialize_l2l_pipe", "pto.initialize_l2g2l_pipe",
                             "pto.aic_initialize_pipe", "pto.aiv_initialize_pipe"):
                frontend = op.name in ("pto.aic_initialize_pipe", "pto.aiv_initialize_pipe")
                dir_mask = _int_of(_attr_value(op, "dir_mask") or "0") or 0
                if frontend:
                    if any(t.text == "gm_slot_tensor" for t in op.toks):
                        continue
                    c2v = _attr_value(op, "c2v_consumer_buf")
                    v2c = _attr_value(op, "v2c_consumer_buf")
                    c2v = c2v[1:] if c2v and c2v.startswith("%") else None
                    v2c = v2c[1:] if v2c and v2c.startswith("%") else None
                    addrs = [c2v, v2c] if dir_mask == 3 else [c2v] if dir_mask == 1 else [v2c]
                else:
                    addrs = [t.text[1:] for t in _percents(op, 1)]
                    if op.name == "pto.initialize_l2g2l_pipe":
                        addrs = addrs[1:]                    # after gm_addr
                pairs = ([(addrs[0], 1)] + ([(addrs[1], 2)] if len(addrs) > 1 else [])
                         if dir_mask == 3 else [(addrs[0], dir_mask)] if addrs else [])
                slot_num = _attr_value(op, "slot_num")
                sig = (dir_mask, _attr_value(op, "slot_size"),
                       _int_of(slot_num) if slot_num is not None else (
                           (4 if dir_mask == 3 else 8) if frontend else None),
                       _attr_value(op, "local_slot_num"))
                fb = _attr_value(op, "flag_base")
                idx = len(inits)
                recorded = False
                for a, d in pairs:
                    if a is not None and a in origin:
                        keyed.setdefault(origin[a] + (d,), []).append(idx)
                        recorded = True
                if recorded:
                    inits.append((op, f.name, dir_mask, sig, _int_of(fb) if fb else None))
                elif fb is None and not frontend:
                    raise err(f"'{op.name}' op requires local_addr to come from "
                              f"pto.reserve_buffer or pto.import_reserved_buffer when "
                              f"'flag_base' is not explicit", op)
    _verify_pipe_components(inits, keyed, err)


def _verify_pipe_components(inits, keyed, err):
    """buildPeerAwareComponents / chooseFlagBaseForComponent of the 2026-07 PTOAS's
    PTOResolveReservedBuffersPass.cpp, over the inits :func:`_verify_reserved_buffers`
    collected."""
    adj = {k: set() for k in range(len(inits))}
    for members in keyed.values():
        for a in members:
            adj[a] |= set(members) - {a}
    pair_msg = ("'pto.initialize_l2l_pipe' op requires a complete compatible peer init pair "
                "when local_addr comes from pto.reserve_buffer or pto.import_reserved_buffer")
    seen = set()
    comps = []
    for root in range(len(inits)):
        if root in seen:
            continue
        seen.add(root)
        stack, comp = [root], []
        while stack:
            k = stack.pop()
            comp.append(k)
            for n in sorted(adj[k]):
                if n not in seen:
                    seen.add(n)
                    stack.append(n)
        if len(comp) != 2:
            raise err(pair_msg, inits[root][0])
        if inits[comp[0]][3] != inits[comp[1]][3]:
            raise err("'pto.initialize_l2l_pipe' op requires peer pipe init ops to agree on "
                      "direction and pipe shape", inits[comp[0]][0])
        if len({inits[k][1] for k in comp}) != 2:
            raise err(pair_msg, inits[comp[0]][0])
        bases = {inits[k][4] for k in comp} - {None}
        if len(bases) > 1:
            raise err("'pto.initialize_l2l_pipe' op conflicting explicit flag_base across "
                      "peer pipe inits", inits[comp[1]][0])
        comps.append((comp, bases.pop() if bases else None))
    used = {}            # function -> [(begin, end)]
    for comp, base in comps:
        width = 4 if inits[comp[0]][2] == 3 else 2
        funcs = {inits[k][1] for k in comp}
        op = inits[comp[0]][0]
        if base is None:
            base = 0
            while True:
                base += base % 2
                clash = [e for fn in funcs for b, e in used.get(fn, ())
                         if base < e and b < base + width]
                if not clash:
                    break
                base = max([base + 2] + [e + e % 2 for e in clash])
        if base + width > 16:
            raise err("'pto.initialize_l2l_pipe' op requires all pipe components in a "
                      "function to fit within 16 hardware flag ids", op)
        if any(base < e and b < base + width for fn in funcs for b, e in used.get(fn, ())):
            raise err("'pto.initialize_l2l_pipe' op conflicting flag_base across peer pipe "
                      "init components in the same function", op)
        for fn in funcs:
            used.setdefault(fn, []).append((base, base + width))
