"""PTO-AS verifier, per-op rules of the 2026-07 PTOAS (wang-chonghao/PTOAS, a fork of
hw-native-sys/PTOAS): the tmp / parameter-tile contracts and valid-shape rules its op
verifiers in ``lib/PTO/IR/PTO.cpp`` check, called from :func:`fastisa.pto._asm_verify.verify`
for every ``ins(...) outs(...)`` op.

Each rule names the PTOAS verifier it follows.  A dynamic (``?``) extent never breaks a
rule (PTOAS skips ``ShapedType::kDynamic``).  Violations raise
:class:`fastisa.errors.AsmSyntaxError` with the op's line and column, worded as PTOAS words
them (``'pto.trem' op expects A2/A3 tmp valid_shape[0] to be at least 2``).
"""

from __future__ import annotations

_BITS = {"f32": 32, "f16": 16, "bf16": 16, "i32": 32, "i16": 16, "i8": 8, "ui32": 32,
         "ui16": 16, "ui8": 8, "si32": 32, "si16": 16, "si8": 8, "u32": 32, "u16": 16,
         "u8": 8, "i64": 64, "ui64": 64, "si64": 64, "u64": 64}


def _bits(dtype):
    return _BITS.get(dtype, 8 if isinstance(dtype, str) and dtype.startswith(
        ("f8", "!pto.hif8", "!pto.f8")) else 0)


def _cdiv(a, b):
    return -(-a // b)


def arg_reduction_tmp_min_cols(dtype, src_valid_cols):
    """PTOAS getArgReductionTmpMinStride: the A2/A3 tmp columns an arg reduction
    (trowargmax/min, tcolargmax/min) needs for ``src_valid_cols`` source columns:
    ``(ceil(2 r / B) + ceil(r / B)) * B`` with ``r = ceil(cols / R)`` repeats, R the
    elements of one 256-byte repeat and B of one 32-byte block.  None when unknown."""
    bits = _bits(dtype)
    if not bits or src_valid_cols is None or src_valid_cols < 0 or 2048 % bits:
        return None
    rep, blk = 2048 // bits, 256 // bits
    r = _cdiv(src_valid_cols, rep)
    return (_cdiv(2 * r, blk) + _cdiv(r, blk)) * blk


def _lt(a, b):
    """``a < b`` with None (dynamic) on either side never true."""
    return a is not None and b is not None and a < b


def _valid(t):
    return (t.v_row, t.v_col)


def verify_op(op, ins, outs, a5, err):
    """Raise ``err(...)`` for the first rule below ``op`` breaks (``ins`` / ``outs``: the
    operand tile types, None for a non-tile operand)."""
    name = op.name
    q = f"'pto.{name}' op "
    src = ins[0] if ins else None
    dst = outs[0] if outs else None
    if name in ("trowargmax", "trowargmin", "tcolargmax", "tcolargmin") \
            and src is not None and dst is not None:
        tmp = ins[1] if len(ins) > 1 else None
        col = name.startswith("tcol")
        if col and dst.v_row is not None and dst.v_row != 1:
            # verifyColArgReductionDstLayout (both targets)
            raise err(q + "expects dst valid_shape[0] to be 1", op)
        if not a5 and tmp is not None and _valid(src) != _valid(tmp):
            # verifyTColArgTmpA2A3 / verifyTRowArgTmpA2A3
            if col and tmp.v_row is not None and tmp.v_row < 1:
                raise err(q + "expects A2/A3 tmp valid_shape[0] to be at least 1", op)
            rep = 2048 // _bits(src.dtype) if _bits(src.dtype) else None
            small = (not col and rep is not None and src.v_col is not None
                     and src.v_col <= rep)
            if not col and not small:
                if tmp.rows != src.rows:
                    raise err(q + "expects A2/A3 tmp shape[0] to match src shape[0]", op)
                if _lt(tmp.v_row, src.v_row):
                    raise err(q + "expects A2/A3 tmp valid_shape[0] to cover src valid "
                              "rows", op)
            if not small:
                need = arg_reduction_tmp_min_cols(src.dtype, src.v_col)
                if _lt(tmp.v_col, need):
                    raise err(q + f"expects A2/A3 tmp valid_shape[1] to be at least {need} "
                              f"for src valid_shape[1] = {src.v_col}", op)
    if name in ("trem", "trems") and not a5 and dst is not None:
        # TRemOp::verify / TRemSOp::verify, A2/A3
        tmp = ins[2] if len(ins) > 2 else None
        if tmp is not None:
            if tmp.dtype != dst.dtype:
                raise err(q + "expects tmp and dst to have the same element type", op)
            least = 2 if name == "trem" else 1
            if _lt(tmp.v_row, least):
                raise err(q + f"expects A2/A3 tmp valid_shape[0] to be at least {least}", op)
            if _lt(tmp.v_col, dst.v_col):
                raise err(q + "expects A2/A3 tmp valid columns to cover dst valid columns",
                          op)
    if name == "tquant" and not a5 and src is not None and dst is not None \
            and len(ins) >= 2 and ins[1] is not None:
        _verify_tquant_a2a3(op, ins, outs, q, err)
    if name == "trowexpand" and src is not None and dst is not None \
            and not (dst.v_row == 0 and dst.v_col == 0):
        # TRowExpandOp::verify: a 0 x 0 dst is the dual-AIV no-op marker; one-sided
        # empty regions are rejected
        for what, t in (("src", src), ("dst", dst)):
            for k, v in enumerate(_valid(t)):
                if v == 0:
                    raise err(q + f"expects {what} valid_shape[{k}] to be non-zero", op)


def _verify_tquant_a2a3(op, ins, outs, q, err):
    """TQuantOp::verify, A2/A3 (INT8_SYM / INT8_ASYM): src, dst row-major; tmp row-major
    with src's shape and valid shape; fp and offset non-row-major, one valid column,
    dst's valid rows."""
    src, fp = ins[0], ins[1]
    offset = ins[2] if len(ins) > 2 else None
    dst = outs[0]
    tmp = outs[1] if len(outs) > 1 else None
    if src.blayout != "row_major" or dst.blayout != "row_major":
        raise err(q + "expects A2/A3 src and dst to use row-major layout", op)
    if tmp is not None:
        if tmp.dtype != src.dtype:
            raise err(q + "expects src and tmp to have the same element type", op)
        if tmp.blayout != "row_major":
            raise err(q + "expects A2/A3 tmp to use row-major layout", op)
        if (tmp.rows, tmp.cols) != (src.rows, src.cols):
            raise err(q + "expects A2/A3 tmp to have the same shape as src", op)
        if _valid(tmp) != _valid(src):
            raise err(q + "expects src and tmp to have the same valid_shape", op)
    for pname, p in (("fp", fp), ("offset", offset)):
        if p is None:
            continue
        if p.blayout == "row_major":
            raise err(q + f"expects A2/A3 {pname} to use non-row-major layout", op)
        if p.v_row is not None and dst.v_row is not None and p.v_row != dst.v_row:
            raise err(q + f"expects A2/A3 {pname} valid_shape[0] to equal dst "
                      f"valid_shape[0]", op)
        if p.v_col is not None and p.v_col != 1:
            raise err(q + f"expects A2/A3 {pname} valid_shape[1] to be 1", op)


#: PTOAS's arithmetic binary / scalar ops checked by verifyArithmeticElemTypeForArch:
#: ``{op: (i8 allowed on A5, bf16 allowed on A5)}`` (TMaxOp ... TSubSOp::verify); every
#: target allows 16- and 32-bit integers, f16 and f32
ARITH_ELEM_RULES = {
    "tmax": (True, False), "tmaxs": (True, True), "tmin": (True, True),
    "tmins": (True, True), "tmul": (False, False), "tmuls": (True, True),
    "tfmod": (False, False), "tsub": (True, False), "tsubs": (True, True),
}

_I8 = ("i8", "si8", "ui8", "u8")
_I16_32 = ("i16", "si16", "ui16", "u16", "i32", "si32", "ui32", "u32")
_I32 = ("i32", "si32", "ui32", "u32")
_F8E4M3 = ("f8E4M3", "f8E4M3FN", "f8E4M3FNUZ", "f8E4M3B11FNUZ")


def _arith_elem_ok(elem, a5, i8, bf16):
    return (elem in _I16_32 or elem in ("f16", "f32")
            or (a5 and i8 and elem in _I8) or (a5 and bf16 and elem == "bf16"))


def verify_op_2(op, ins, outs, a5, err):
    """The second group of rules (arithmetic element types, tcolsum's binary tmp,
    tmrgsort's format2 tmp, the A5 tload vec layouts, acc tstore destinations,
    tscatter's two forms)."""
    from ._asm_ast import TileBufType
    name = op.name
    q = f"'pto.{name}' op "
    src = ins[0] if ins else None
    dst = outs[0] if outs else None
    rule = ARITH_ELEM_RULES.get(name)
    if rule is not None and src is not None and isinstance(op.in_types[0], TileBufType):
        if not _arith_elem_ok(src.dtype, a5, *rule):
            allowed = "i32/i16/" + ("i8/" if a5 and rule[0] else "") + "f16/" + (
                "bf16/" if a5 and rule[1] else "") + "f32"
            raise err(q + f"expects {'A5' if a5 else 'A2/A3'} {name} element type to be "
                      f"{allowed}", op)
    if name == "tcolsum" and len(ins) > 1 and src is not None and ins[1] is not None:
        # verifyTColSumTmpStride
        attrs = list(op.attrs) + [kv for o in op.ins for kv in o.attrs]
        binary = any(k == "isBinary" and v.strip().startswith("true") for k, v in attrs)
        if binary and _lt(ins[1].cols, src.v_col):
            raise err(q + f"expects tmp shape[1] to be at least src valid_shape[1] when "
                      f"isBinary is true; got {ins[1].cols} vs {src.v_col}", op)
    if name == "tmrgsort" and len(ins) >= 3 and len(op.out_types) == 2 and dst is not None \
            and ins[-1] is not None:
        # TMrgSortOp::verify, format2: ins(srcs..., tmp) outs(dst, executed)
        if _lt(ins[-1].cols, dst.cols):
            raise err(q + "format2 expects tmp.cols >= dst.cols", op)
    if name == "tload" and a5 and dst is not None and dst.loc == "vec" \
            and isinstance(op.out_types[0], TileBufType):
        # TLoadOp::verify, A5: a vec destination is ND, DN or NZ
        if (dst.blayout, dst.slayout) not in (("row_major", "none_box"),
                                              ("col_major", "none_box"),
                                              ("col_major", "row_major")):
            raise err(q + "expects A5 tload vec dst layout to be ND, DN, or NZ", op)
    if name == "tstore" and src is not None and src.loc == "acc" and op.out_types:
        _verify_acc_tstore(op, src, op.out_types[0], len(op.in_types) > 1, a5, q, err)
    if name == "tfillpad" and src is not None and dst is not None \
            and src.loc == dst.loc == "mat" and src.key() != dst.key():
        # verifyTFillPadLike: pto-isa has only the homogeneous TFILLPAD for loc=mat
        v = lambda x: "?" if x is None else str(x)  # noqa: E731
        fields = [f"{f} ({v(a)} vs {v(b)})" for f, a, b in (
            ("v_row", src.v_row, dst.v_row), ("v_col", src.v_col, dst.v_col),
            ("pad", src.pad, dst.pad)) if a != b]
        raise err("expects src/dst tile types to be lowerable to TFILLPAD for loc=mat"
                  + ("; mismatching fields: " + ", ".join(fields) if fields else ""), op)
    if name == "textract" and a5 and src is not None and dst is not None:
        # TExtractOp::verify, A5 (the element type rule precedes the loc pairs that
        # fastisa.pto._asm_verify._verify_textract checks)
        d = dst.dtype
        if not (d in _I8 or d in ("f16", "bf16", "f32") or d.startswith(("f8", "f4"))
                or d in ("!pto.hif8", "!pto.f8E8M0", "!pto.f4E2M1x2", "!pto.f4E1M2x2")):
            raise err(q + "expects A5 textract element type to be an fp8/f16/bf16/f32 or int8 "
                      "family type", op)
        if src.loc == "mat" and dst.loc == "right" \
                and (dst.blayout, dst.slayout) != ("row_major", "col_major"):
            raise err(q + "expects A5 right dst to use row_major blayout and col_major "
                      "slayout", op)
    if name == "tscatter":
        # TScatterOp::verify: exactly one of the indexes operand and maskPattern
        mask = any(k == "maskPattern" for k, _v in
                   list(op.attrs) + [kv for o in op.ins for kv in o.attrs])
        if (len(op.in_types) >= 2) == mask:
            raise err(q + "expects exactly one of indexes operand or maskPattern attribute",
                      op)


def _verify_acc_tstore(op, src, out_ty, pre, a5, q, err):
    """TStoreOp::verify for an acc source: i32/f32 source; the destination types each
    target's fixpipe writes, with and without a pre-quantisation scalar."""
    d = getattr(out_ty, "elem", None)
    s = src.dtype
    if d is None:
        return
    tgt = "A5" if a5 else "A2/A3"
    if s not in _I32 and s != "f32":
        raise err(q + f"expects {tgt} acc tstore src element type to be i32 or f32", op)
    if not pre:
        if d not in _I32 and d not in ("f32", "f16", "bf16"):
            raise err(q + f"expects {tgt} acc tstore dst element type to be i32/f32/f16/bf16",
                      op)
        return
    if a5:
        ok = (d in _I8 or d in ("f16", "bf16")) if s in _I32 else (
            d in _I8 or d in ("f16", "bf16", "f32", "!pto.hif8") or d in _F8E4M3)
        if not ok:
            raise err(q + "expects A5 acc preQuantScalar tstore dst type to be "
                      "i8/ui8/f16/bf16/f32/hif8/f8E4M3", op)
    elif s in _I32 and not (d in _I8 or d == "f16"):
        raise err(q + "expects A2/A3 acc preQuantScalar tstore dst type to be i8/ui8/f16", op)
    elif s == "f32" and d not in _I8:
        raise err(q + "expects A2/A3 acc preQuantScalar tstore dst type to be i8/ui8", op)


def verify_generic(op, err):
    """Rules for ops kept in MLIR's generic form (``"pto.tscatter"(%a, %b) <{...}> : ...``)."""
    if op.name == "pto.tscatter":
        text = op.text
        try:
            close = text.index(")")
        except ValueError:
            return
        n = sum(1 for t in text[:close] if t.startswith("%"))
        mask = "maskPattern" in text
        if (n >= 3) == mask:
            raise err("'pto.tscatter' op expects exactly one of indexes operand or "
                      "maskPattern attribute", op)
