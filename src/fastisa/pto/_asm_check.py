"""PTO-AS type checker: name resolution and type agreement over a parsed module, like MLIR's
verifier (run by :func:`fastisa.pto._asm_parser.parse` after parsing)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import AsmSyntaxError
from ._asm_ast import (AllocTileOp, ArithOp, ConstantOp, DpsOp, ForOp, FuncOp, GenericOp,
                       MakeTensorViewOp, MemRefType, OpaqueType, PartitionViewOp, PtrType,
                       ReturnOp, ScalarType, SetValidShapeOp, SsaOp, TAssignOp, TileBufType,
                       Value, ViewType, same_type)
from ._asm_ops import INSTRUCTIONS
from ._asm_printer import format_type

if TYPE_CHECKING:
    from ._asm_parser import _Parser


def _check_func(p: _Parser, func: FuncOp):
    def err(msg, v):
        src = p.lines[v.line - 1] if 0 < v.line <= len(p.lines) else ""
        return AsmSyntaxError(msg, v.line, v.col, src)

    def define(env, name, ty, at):
        if name in env:
            raise err(f"redefinition of %{name}", at)
        env[name] = ty

    def use(env, v: Value, want=None, what=""):
        if v.name not in env:
            raise err(f"use of undefined value %{v.name}", v)
        ty = env[v.name]
        if want is not None and ty is not None and not same_type(ty, want) \
                and not _compatible(ty, want):
            raise err(f"%{v.name} has type {format_type(ty)} but is used as {format_type(want)}"
                      + (f" ({what})" if what else ""), v)
        return ty

    def use_index(env, v: Value, what):
        ty = use(env, v)
        if ty is None:
            return
        if not (isinstance(ty, ScalarType) and ty.name in ("index", "i64", "i32", "i16", "i8")):
            raise err(f"{what} %{v.name} must be an index (or integer) value, "
                      f"got {format_type(ty)}", v)

    env = {}
    for name, ty in func.args:
        if name in env:
            raise AsmSyntaxError(f"duplicate argument %{name}", func.line, func.col,
                                 p.lines[func.line - 1])
        env[name] = ty
    def check(ops, env, depth=0):
        for op in ops:
            here = Value("", op.line, op.col)
            if isinstance(op, ConstantOp):
                define(env, op.result, op.type, here)
            elif isinstance(op, MakeTensorViewOp):
                pty = use(env, op.ptr)
                if not isinstance(pty, PtrType):
                    raise err(f"pto.make_tensor_view: %{op.ptr.name} must be a !pto.ptr<...>, got "
                              f"{format_type(pty)}", op.ptr)
                if pty.elem != op.type.elem:
                    raise err(f"pto.make_tensor_view: pointer element type {pty.elem} does not "
                              f"match the view's {op.type.elem}", op.ptr)
                for v in op.shape:
                    use_index(env, v, "shape operand")
                for v in op.strides:
                    use_index(env, v, "stride operand")
                define(env, op.result, op.type, here)
            elif isinstance(op, PartitionViewOp):
                use(env, op.source, op.source_type, "partition_view source")
                for v in op.offsets:
                    use_index(env, v, "offset operand")
                for v in op.sizes:
                    use_index(env, v, "size operand")
                define(env, op.result, op.type, here)
            elif isinstance(op, AllocTileOp):
                for v in (op.addr, op.valid_row, op.valid_col):
                    if v is not None:
                        use_index(env, v, "alloc_tile operand")
                define(env, op.result, op.type, here)
            elif isinstance(op, SetValidShapeOp):
                use(env, op.tile, op.type, "set_validshape")
                if not isinstance(op.type, TileBufType):   # e.g. a mistyped !pto.uf<...>
                    raise err("pto.set_validshape needs a !pto.tile_buf type", op.tile)
                if op.type.v_row is not None or op.type.v_col is not None:
                    raise err("pto.set_validshape needs a tile with a dynamic valid shape "
                              "(valid=?x?)", op.tile)
                use_index(env, op.valid_row, "valid row")
                use_index(env, op.valid_col, "valid col")
            elif isinstance(op, DpsOp):
                kind = INSTRUCTIONS.get(op.name, "any")
                for o, ty in zip(op.ins, op.in_types):
                    use(env, o.value, ty, f"operand of pto.{op.name}")
                for v, ty in zip(op.outs, op.out_types):
                    use(env, v, ty, f"result of pto.{op.name}")
                _check_operand_kinds(op.name, kind, op.in_types, op.out_types,
                                     [o.value for o in op.ins], op.outs, err)
            elif isinstance(op, SsaOp):
                kind = INSTRUCTIONS[op.name]
                for o, ty in zip(op.operands, op.in_types):
                    use(env, o.value, ty, f"operand of pto.{op.name}")
                _check_operand_kinds(op.name, kind, op.in_types, op.out_types,
                                     [o.value for o in op.operands], [here], err)
                define(env, op.results[0], op.out_types[0], here)
            elif isinstance(op, TAssignOp):
                use(env, op.tile, op.tile_type, "pto.tassign tile")
                use_index(env, op.addr, "pto.tassign address")
                define(env, op.result, op.type, here)
            elif isinstance(op, ArithOp):
                want = op.src_type or op.type
                for k, v in enumerate(op.operands):
                    w = ScalarType("i1") if op.name == "select" and k == 0 else want
                    use(env, v, w, f"operand of arith.{op.name}")
                define(env, op.result, op.type, here)
            elif isinstance(op, ForOp):
                for v in (op.lb, op.ub, op.step):
                    use(env, v, op.type or ScalarType("index"), "scf.for bound")
                inner = dict(env)
                define(inner, op.iv, op.type or ScalarType("index"), here)
                check(op.body, inner, depth + 1)
            elif isinstance(op, ReturnOp):
                if depth > 0:
                    raise err("return inside a loop body", here)
                for v, ty in zip(op.values, op.types):
                    use(env, v, ty, "returned value")
                if func.results and len(op.values) != len(func.results):
                    raise err(f"@{func.name} returns {len(func.results)} values, this return "
                              f"gives {len(op.values)}", here)
            elif isinstance(op, GenericOp):
                defined_here = set()
                toks = op.toks
                for k, tk in enumerate(toks):
                    if tk.kind != "percent":
                        continue
                    nxt = toks[k + 1].text if k + 1 < len(toks) else ""
                    if nxt == "=" and k > 0 and toks[k - 1].text in ("(", ",", "scf.for") \
                            or op.name == "scf.for" and k == 0:
                        defined_here.add(tk.text[1:])
                        continue
                    name = tk.text[1:]
                    base = name.split("#")[0]
                    if name not in env and base not in env and name not in defined_here:
                        raise err(f"use of undefined value %{name}",
                                  Value(name, tk.line, tk.col))
                _check_yields(op, err)
                for reg in op.regions:
                    inner = dict(env)
                    for n in defined_here:
                        inner[n] = None
                    for n, ty in reg.args:
                        inner[n] = ty
                    check(reg.ops, inner, depth + 1 if op.name.startswith("scf.") else depth)
                for n in op.result_names():
                    define(env, n, None, here)
                for n, _k in op.results:
                    env.setdefault(n, None)

    if func.body is not None:
        check(func.body, env)


def _yield_count(region):
    """Values the region's terminator yields (None if it has no scf.yield)."""
    if not region.ops or not isinstance(region.ops[-1], GenericOp) \
            or region.ops[-1].name != "scf.yield":
        return None
    return sum(1 for t in region.ops[-1].toks if t.kind == "percent")


def _check_yields(op, err):
    """scf.for/scf.if/scf.while: the regions yield as many values as the op produces
    (MLIR's SCF verifier, which PTOAS runs)."""
    if op.name == "scf.for":
        toks = op.toks
        k = next((i for i, t in enumerate(toks) if t.text == "iter_args"), None)
        if k is None:
            return
        n = sum(1 for i in range(k, len(toks) - 1)
                if toks[i].kind == "percent" and toks[i + 1].text == "=")
        got = _yield_count(op.regions[0]) if op.regions else None
        if (got or 0) != n:
            raise err(f"scf.for has {n} iter_args but its body yields {got or 0} values",
                      Value("", toks[k].line, toks[k].col))
    elif op.name == "scf.if":
        n = sum(k for _n, k in op.results)
        for reg in op.regions:
            got = _yield_count(reg) or 0
            if got != n:
                raise err(f"scf.if produces {n} values but a branch yields {got}",
                          Value("", op.line, op.col))
        if n and len(op.regions) < 2:
            raise err("scf.if with results needs an else region", Value("", op.line, op.col))


def _compatible(have, want) -> bool:
    """A memref standing where a tile type is written (and vice versa), an opaque type, or a
    tile whose dynamic valid extents are written statically: accepted like PTOAS does."""
    if isinstance(have, (OpaqueType, MemRefType)) or isinstance(want, (OpaqueType, MemRefType)):
        return True
    if isinstance(have, ViewType) and isinstance(want, ViewType) and have.inferred:
        return (have.kind, have.elem, len(have.shape)) == (want.kind, want.elem,
                                                          len(want.shape))
    if isinstance(have, TileBufType) and isinstance(want, TileBufType):
        return (have.loc, have.dtype, have.rows, have.cols) == (want.loc, want.dtype,
                                                               want.rows, want.cols) and (
            None in (have.v_row, have.v_col, want.v_row, want.v_col))
    return False


def _check_operand_kinds(name, kind, in_types, out_types, ins, outs, err):
    """Tiles where tiles go, scalars where scalars go, views for tload/tstore."""
    if kind == "any":
        return

    def want(ty, cls, v, role):
        if isinstance(ty, (MemRefType, OpaqueType)) or ty is None:
            return
        if not isinstance(ty, cls):
            what = {TileBufType: "a tile (!pto.tile_buf<...>)", ScalarType: "a scalar",
                    ViewType: "a !pto.partition_tensor_view<...>"}[cls]
            raise err(f"pto.{name}: {role} must be {what}, got {format_type(ty)}", v)

    if kind == "load":
        want(in_types[0], ViewType, ins[0], "the source")
        if isinstance(in_types[0], ViewType) and in_types[0].kind != "partition_tensor_view":
            raise err(f"pto.{name}: the source must be a !pto.partition_tensor_view<...>", ins[0])
        want(out_types[0], TileBufType, outs[0], "the destination")
        return
    if kind == "store":
        want(in_types[0], TileBufType, ins[0], "the source")
        want(out_types[0], ViewType, outs[0], "the destination")
        if isinstance(out_types[0], ViewType) and out_types[0].kind != "partition_tensor_view":
            raise err(f"pto.{name}: the destination must be a !pto.partition_tensor_view<...>",
                      outs[0])
        return
    want(out_types[0], TileBufType, outs[0], "the destination")
    if kind == "gather":   # index form (src, indices) or compare form (src, scalar k, tmp)
        want(in_types[0], TileBufType, ins[0], "the source")
        if len(in_types) == 1:         # mask form: the pattern is an attribute
            return
        if len(in_types) == 3 and not isinstance(in_types[1], TileBufType):
            want(in_types[1], ScalarType, ins[1], "the compare-form scalar")
            want(in_types[2], TileBufType, ins[2], "the compare-form tmp tile")
        else:
            want(in_types[1], TileBufType, ins[1], "the index tile")
        return
    if kind == "sels":      # (mask, src, tmp, scalar)
        for i in range(3):
            want(in_types[i], TileBufType, ins[i], f"operand {i + 1}")
        want(in_types[3], ScalarType, ins[3], "the scalar operand")
        return
    if kind == "expands":
        want(in_types[0], ScalarType, ins[0], "the operand")
        return
    if kind == "scalar":
        tiles = [isinstance(t, TileBufType) for t in in_types]
        if name == "tdivs" and tiles == [False, True]:
            want(in_types[0], ScalarType, ins[0], "the scalar operand")
            return
        want(in_types[0], TileBufType, ins[0], "the first operand")
        want(in_types[1], ScalarType, ins[1], "the second operand")
        return
    for i, (ty, v) in enumerate(zip(in_types, ins)):
        want(ty, TileBufType, v, f"operand {i + 1}")
