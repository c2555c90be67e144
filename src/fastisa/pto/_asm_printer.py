"""PTO-AS printer: :class:`Module` -> text; ``parse(format_module(m)) == m``."""

from __future__ import annotations

import re

import numpy as np

from ._asm_ast import (
    AllocTileOp, ArithOp, ConstantOp, DpsOp, ForOp, InOperand, MakeTensorViewOp, Module,
    PartitionViewOp, PtrType, ReturnOp, ScalarType, SetValidShapeOp, SsaOp, SyncOp, TAssignOp,
    TileBufType, ViewType, _float_bits, _is_float, _np_dtype,
    GenericOp, MemRefType, OpaqueType,
)

def _dim(d):
    return "?" if d is None else str(d)


def format_type(ty) -> str:
    """The PTO-AS spelling of a type (tiles in the form they were written)."""
    if isinstance(ty, ScalarType):
        return ty.name
    if isinstance(ty, PtrType):
        return f"!pto.ptr<{ty.elem}" + (f", {ty.space}>" if ty.space else ">")
    if isinstance(ty, ViewType):
        dims = "".join(_dim(d) + "x" for d in ty.shape)
        return f"!pto.{ty.kind}<{dims}{ty.elem}>"
    if isinstance(ty, OpaqueType):
        return ty.text
    if isinstance(ty, MemRefType):
        dims = "".join(_dim(d) + "x" for d in ty.shape)
        s = f"memref<{dims}{ty.elem}"
        if ty.rest:
            s += ", " + ty.rest
        if ty.space:
            s += f", #pto.address_space<{ty.space}>"
        return s + ">"
    if isinstance(ty, TileBufType):
        if ty.form == "legacy":
            s = (f"!pto.tile_buf<loc={ty.loc}, dtype={ty.dtype}, rows={ty.rows}, "
                 f"cols={ty.cols}, v_row={_dim(ty.v_row)}, v_col={_dim(ty.v_col)}, "
                 f"blayout={ty.blayout}, slayout={ty.slayout}, fractal={ty.fractal}, "
                 f"pad={ty.pad}")
            if ty.compact:
                s += f", compact={ty.compact}"
            return s + ">"
        head = "!pto.tile_buf<" + ty.loc + ", " if ty.form == "compact" else (
            "!pto.tile<" + ("" if ty.loc == "vec" else ty.loc + ", "))
        s = f"{head}{ty.rows}x{ty.cols}x{ty.dtype}"
        if (ty.v_row, ty.v_col) != (ty.rows, ty.cols):
            s += f", valid={_dim(ty.v_row)}x{_dim(ty.v_col)}"
        if ty.blayout != "row_major":
            s += f", blayout={ty.blayout}"
        if ty.slayout != "none_box":
            s += f", slayout={ty.slayout}"
        if ty.fractal != 512:
            s += f", fractal={ty.fractal}"
        if ty.pad:
            s += f", pad={ty.pad}"
        if ty.compact:
            s += f", compact={ty.compact}"
        return s + ">"
    raise TypeError(f"not a PTO-AS type: {ty!r}")


def _attrs(attrs) -> str:
    if not attrs:
        return ""
    items = []
    for k, v in attrs:
        key = k if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_$]*", k) else f'"{k}"'
        items.append(key if v == "unit" else f"{key} = {v}")
    return "{" + ", ".join(items) + "}"


def _const_text(op: ConstantOp) -> str:
    if _is_float(op.type.name):
        v = op.value
        if not np.isfinite(v) or _float_bits(v, op.type.name) != op.bits:
            width = _np_dtype(op.type.name).itemsize * 2
            return f"0x{op.bits:0{width}X}"
        s = repr(float(v))
        if "e" in s and "." not in s:
            s = s.replace("e", ".0e")
        return s
    return str(op.value)


def _vals(vs) -> str:
    return ", ".join("%" + v.name for v in vs)


def _in(o: InOperand) -> str:
    return "%" + o.value.name + _attrs(o.attrs)


def format_op(op) -> str:
    """One operation as PTO-AS text (no indentation)."""
    if isinstance(op, ConstantOp):
        return f"%{op.result} = arith.constant {_const_text(op)} : {op.type.name}"
    if isinstance(op, MakeTensorViewOp):
        a = (" " + _attrs(op.attrs)) if op.attrs else ""
        return (f"%{op.result} = pto.make_tensor_view %{op.ptr.name}, shape = [{_vals(op.shape)}]"
                f", strides = [{_vals(op.strides)}]{a} : {format_type(op.type)}")
    if isinstance(op, PartitionViewOp):
        return (f"%{op.result} = pto.partition_view %{op.source.name}, offsets = "
                f"[{_vals(op.offsets)}], sizes = [{_vals(op.sizes)}] : "
                f"{format_type(op.source_type)}"
                + ("" if op.type.inferred else f" -> {format_type(op.type)}"))
    if isinstance(op, AllocTileOp):
        s = f"%{op.result} = pto.alloc_tile"
        for k in ("addr", "valid_row", "valid_col"):
            v = getattr(op, k)
            if v is not None:
                s += f" {k} = %{v.name}"
        return s + f" : {format_type(op.type)}"
    if isinstance(op, SetValidShapeOp):
        return (f"pto.set_validshape %{op.tile.name}, %{op.valid_row.name}, "
                f"%{op.valid_col.name} : {format_type(op.type)}")
    if isinstance(op, DpsOp):
        ins = ", ".join(_in(o) for o in op.ins)
        its = ", ".join(format_type(t) for t in op.in_types)
        ots = ", ".join(format_type(t) for t in op.out_types)
        s = f"pto.{op.name} ins({ins} : {its})" if op.ins else f"pto.{op.name} ins()"
        if op.outs:
            s += f" outs({_vals(op.outs)} : {ots})"
        if op.attrs:
            s += " " + _attrs(op.attrs)
        return s
    if isinstance(op, SsaOp):
        name = ("pto." if op.prefixed else "") + op.name
        s = f"%{op.results[0]} = {name} " + ", ".join(_in(o) for o in op.operands)
        if op.attrs:
            s += " " + _attrs(op.attrs)
        if not op.arrow:
            return s + f" : {format_type(op.in_types[0])}"
        its = ", ".join(format_type(t) for t in op.in_types)
        if op.paren:
            its = f"({its})"
        return s + f" : {its} -> {format_type(op.out_types[0])}"
    if isinstance(op, SyncOp):
        return f"pto.{op.name}" + ("" if op.text.startswith(("[", "(")) or not op.text
                                    else " ") + op.text
    if isinstance(op, TAssignOp):
        return (f"%{op.result} = pto.tassign %{op.tile.name}, %{op.addr.name} : "
                f"{format_type(op.tile_type)} -> {format_type(op.type)}")
    if isinstance(op, ArithOp):
        pred = f"{op.predicate}, " if op.predicate else ""
        s = f"%{op.result} = arith.{op.name} {pred}{_vals(op.operands)} : "
        if op.predicate:
            return s + op.src_type.name
        if op.src_type is not None:
            return s + f"{op.src_type.name} to {op.type.name}"
        return s + op.type.name
    if isinstance(op, ReturnOp):
        if op.values:
            return (f"return {_vals(op.values)} : "
                    + ", ".join(format_type(t) for t in op.types))
        return "return"
    raise TypeError(f"not a PTO-AS operation: {op!r}")


def _generic_lines(op: GenericOp, ind) -> list:
    from ._asm_lexer import _join

    head = ""
    if op.results:
        head = ", ".join("%" + n + (f":{k}" if k > 1 else "") for n, k in op.results) + " = "
    name = op.name if "." in op.name or op.name.isidentifier() else f'"{op.name}"'
    lines = []
    cur = ind + head + name
    parts = []
    for t in op.text:
        if t.startswith("\x00"):
            reg = op.regions[int(t[1:])]
            cur += (" " + _join(parts) if parts else "") + " {"
            parts = []
            lines.append(cur)
            if reg.label is not None:
                args = ", ".join(f"%{n}: {format_type(ty)}" for n, ty in reg.args)
                lines.append(ind + f"{reg.label}" + (f"({args})" if reg.args else "") + ":")
            lines += _format_ops(reg.ops, ind + "  ")
            cur = ind + "}"
        else:
            parts.append(t)
    if parts:
        joined = _join(parts)
        cur += ("" if joined.startswith(("(", "[", "<", ",", ":")) and cur.endswith(name)
                and joined.startswith(("(",)) else " ") + joined
    lines.append(cur)
    return lines


def _format_ops(ops, ind) -> list:
    lines = []
    for op in ops:
        if isinstance(op, GenericOp):
            lines += _generic_lines(op, ind)
            continue
        if isinstance(op, ForOp):
            t = f" : {op.type.name}" if op.type is not None else ""
            lines.append(f"{ind}scf.for %{op.iv} = %{op.lb.name} to %{op.ub.name} step "
                         f"%{op.step.name}{t} {{")
            lines += _format_ops(op.body, ind + "  ")
            lines.append(ind + "}")
        else:
            lines.append(ind + format_op(op))
    return lines


def format_module(module: Module) -> str:
    """PTO-AS text for ``module``; ``parse(format_module(m)) == m``."""
    lines = []
    ind = ""
    if module.wrapped:
        lines.append("module" + (f" attributes {_attrs(module.attrs)}" if module.attrs else "")
                     + " {")
        ind = "  "
    for f in module.funcs:
        args = ", ".join(f"%{n}: {format_type(t)}" for n, t in f.args)
        vis = f"{f.visibility} " if f.visibility else ""
        head = f"{ind}func.func {vis}@{f.name}({args})"
        if f.results:
            head += " -> (" + ", ".join(format_type(t) for t in f.results) + ")"
        if f.attrs:
            head += f" attributes {_attrs(f.attrs)}"
        if f.body is None:
            lines.append(head)
            continue
        lines.append(head + " {")
        lines += _format_ops(f.body, ind + "  ")
        lines.append(ind + "}")
    if module.wrapped:
        lines.append("}")
    return "\n".join(lines) + "\n"

