"""PTO-AS parser, the operation family: arith, constants, scf.for, views, tiles and the
tile instructions' DPS and SSA forms (a mixin of :class:`fastisa.pto._asm_parser._Parser`)."""

from __future__ import annotations

import numpy as np

from ._asm_ast import (AllocTileOp, ArithOp, ConstantOp, DpsOp, ForOp, InOperand,
                       MakeTensorViewOp, PartitionViewOp, ScalarType, SsaOp, TAssignOp,
                       TileBufType, ViewType, _bits_float, _float_bits, _is_float, _np_dtype)
from ._asm_ops import (_ARITY, _ARITY_BY_NAME, _OUTS_BY_NAME, ARITH_CAST, ARITH_CMP,
                       ARITH_FLOAT_OPS, ARITH_INT_OPS, ARITH_UNARY, INSTRUCTIONS,
                       _CMPF_PREDICATES, _CMPI_PREDICATES)
from ._asm_printer import format_type


#: Deepest scf.for nesting the parser accepts (the checker, printer and runner recurse per
#: level; 600 levels ran out of Python stack).
MAX_NESTING = 100


class _OpParser:
    def tassign(self, r, start):
        tile = self.value()
        self.expect(",")
        addr = self.value()
        self.expect(":")
        tt = self.tok
        in_ty = self.type_()
        self.expect("->")
        ot = self.tok
        ty = self.type_()
        for tok, x in ((tt, in_ty), (ot, ty)):
            if not isinstance(x, TileBufType):
                raise self.error("pto.tassign takes and returns a tile type", tok)
        if not in_ty.same(ty):
            raise self.error("pto.tassign must return the type of its tile operand", ot)
        return TAssignOp(r, tile, addr, in_ty, ty, start.line, start.col)

    def arith(self, r, name, nt, start):
        op = name[len("arith."):]
        pred = None
        if op in ARITH_CMP:
            pt = self.tok
            if pt.kind == "string":
                pred = pt.text[1:-1]
            else:
                pred = self.expect_kind("ident", "a comparison predicate (eq, slt, ...)").text
                pt = self.toks[self.i - 1]
            if pt.kind == "string":
                self.next()
            allowed = _CMPI_PREDICATES if op == "cmpi" else _CMPF_PREDICATES
            if pred not in allowed:
                raise self.error(f"arith.{op}: unknown predicate {pred!r}; expected one of "
                                 f"{', '.join(allowed)}", pt)
            self.expect(",", "',' after the predicate")
        n = 3 if op == "select" else 1 if (op in ARITH_CAST or op in ARITH_UNARY) else 2
        operands = [self.value()]
        for _ in range(n - 1):
            self.expect(",", "',' and the next operand")
            operands.append(self.value())
        if self.at("{"):                 # fastmath / overflow flags
            self.attr_dict()
        self.expect(":", "':' and the type")
        tt = self.tok
        ty = self.type_()
        if not isinstance(ty, ScalarType):
            raise self.error(f"{name} works on scalars, got {format_type(ty)}", tt)
        src = None
        if op == "select" and self.accept(","):     # "i1, T" spelling
            tt = self.tok
            ty = self.type_()
            if not isinstance(ty, ScalarType):
                raise self.error(f"{name} works on scalars, got {format_type(ty)}", tt)
        if op in ARITH_CAST:
            self.expect("to", "'to' and the result type")
            src = ty
            tt = self.tok
            ty = self.type_()
            if not isinstance(ty, ScalarType):
                raise self.error(f"{name} works on scalars, got {format_type(ty)}", tt)
        fl = _is_float(ty.name)
        if op in ARITH_FLOAT_OPS and not fl or op in ARITH_INT_OPS and fl:
            raise self.error(f"{name} needs {'a float' if op in ARITH_FLOAT_OPS else 'an integer'}"
                             f" type, got {ty.name}", tt)
        if op in ARITH_CMP:
            src, ty = ty, ScalarType("i1")
        return ArithOp(r, op, tuple(operands), ty, src, start.line, start.col, pred)

    def for_loop(self, start):
        iv = self.value()
        self.expect("=")
        lb = self.value()
        self.expect("to")
        ub = self.value()
        self.expect("step")
        step = self.value()
        ty = None
        if self.accept(":"):
            tt = self.tok
            ty = self.type_()
            if not isinstance(ty, ScalarType) or _is_float(ty.name):
                raise self.error("scf.for needs an index or integer induction variable", tt)
        if self.at("iter_args"):
            raise self.error("scf.for with iter_args is not supported (tile ops write their "
                             "outs in place, so loops need no loop-carried values)")
        self.expect("{", "'{' opening the loop body")
        if self.depth >= MAX_NESTING:
            raise self.error(f"scf.for nested more than {MAX_NESTING} levels deep", start)
        self.depth += 1
        body = []
        while not self.at("}"):
            if self.tok.kind == "eof":
                raise self.error("expected '}' closing the loop body")
            if self.at("scf.yield"):
                yt = self.next()
                if self.tok.kind == "percent" and self.tok.line == yt.line:
                    raise self.error("scf.yield with values is not supported")
                continue
            body.append(self.op())
        self.next()
        self.depth -= 1
        return ForOp(iv.name, lb, ub, step, tuple(body), ty, start.line, start.col)

    def constant(self, r, start):
        t = self.tok
        neg = False
        if t.kind in ("int", "float", "hex"):
            self.next()
        elif t.kind == "ident" and t.text in ("true", "false"):
            self.next()
        else:
            raise self.error(f"expected a constant value, got {self._desc(t)}")
        if t.kind == "ident" and not self.at(":"):        # "arith.constant true": i1
            value = 1 if t.text == "true" else 0
            return ConstantOp(r, value, ScalarType("i1"), value, start.line, start.col)
        self.expect(":", "':' and the constant's type")
        tt = self.tok
        ty = self.type_()
        if not isinstance(ty, ScalarType):
            raise self.error("arith.constant needs a scalar type", tt)
        del neg
        if t.kind == "ident":
            if ty.name != "i1":
                raise self.error(f"{t.text} is an i1 constant, not {ty.name}", t)
            value = 1 if t.text == "true" else 0
            return ConstantOp(r, value, ty, value, start.line, start.col)
        if _is_float(ty.name):
            if t.kind == "hex":
                bits = int(t.text, 16)
                width = _np_dtype(ty.name).itemsize * 8
                if not 0 <= bits < (1 << width):
                    raise self.error(f"hexadecimal {ty.name} constant must be a {width}-bit "
                                     f"pattern, got {t.text}", t)
                value = _bits_float(bits, ty.name)
            else:
                value = float(t.text)
                bits = _float_bits(value, ty.name)
                value = _bits_float(bits, ty.name)
            return ConstantOp(r, value, ty, bits, start.line, start.col)
        if t.kind == "float":
            raise self.error(f"{t.text} is not an integer constant of type {ty.name}", t)
        value = int(t.text, 16) if t.kind == "hex" else int(t.text)
        if ty.name not in ("index",):
            width = {"i64": 64, "i1": 1}.get(ty.name)
            if width is None:
                info = np.iinfo(_np_dtype(ty.name))
                lo, hi = int(info.min), int(info.max)
                if ty.name.startswith("i"):   # signless: accept the unsigned spelling too
                    hi = (1 << (info.bits)) - 1
            else:
                lo, hi = -(1 << (width - 1)) if width > 1 else 0, (1 << width) - 1
            if not lo <= value <= hi:
                raise self.error(f"constant {value} does not fit in {ty.name}", t)
        return ConstantOp(r, value, ty, value, start.line, start.col)

    def _value_list(self):
        self.expect("[")
        vals = []
        if self.accept("]"):
            return ()
        while True:
            vals.append(self.value())
            if self.accept("]"):
                return tuple(vals)
            self.expect(",", "',' or ']'")

    def make_tensor_view(self, r, start):
        ptr = self.value()
        self.expect(",")
        self.expect("shape")
        self.expect("=")
        shape = self._value_list()
        self.accept(",")            # the older PTOAS omits it
        self.expect("strides")
        self.expect("=")
        strides = self._value_list()
        attrs = ()
        if self.at("{"):
            attrs = self.attr_dict()
        self.expect(":")
        tt = self.tok
        ty = self.type_()
        if not isinstance(ty, ViewType) or ty.kind != "tensor_view":
            raise self.error("pto.make_tensor_view must have a !pto.tensor_view<...> type", tt)
        ty = _rank_form(ty, len(shape))
        if len(shape) != len(ty.shape) or len(strides) != len(ty.shape):
            raise self.error(f"pto.make_tensor_view: shape and strides need {len(ty.shape)} "
                             f"operands each (the rank of the view), got {len(shape)} and "
                             f"{len(strides)}", tt)
        return MakeTensorViewOp(r, ptr, shape, strides, ty, attrs, start.line, start.col)

    def partition_view(self, r, start):
        src = self.value()
        self.expect(",")
        self.expect("offsets")
        self.expect("=")
        offsets = self._value_list()
        self.expect(",")
        self.expect("sizes")
        self.expect("=")
        sizes = self._value_list()
        self.expect(":")
        st = self.tok
        sty = self.type_()
        if not isinstance(sty, ViewType) or sty.kind != "tensor_view":
            raise self.error("pto.partition_view's source must be a !pto.tensor_view<...>", st)
        sty = _rank_form(sty, len(offsets))
        tt = self.tok
        if not self.at("->"):
            # the result type may be left out (PTOAS PartitionViewOp's parser infers it, see
            # its test/lit/pto/issue31_partition_view_parser_compat.pto): the sizes are known
            # when the op runs
            ty = ViewType("partition_tensor_view", (None,) * len(sty.shape), sty.elem,
                          inferred=True)
            return PartitionViewOp(r, src, offsets, sizes, sty, ty, start.line, start.col)
        self.expect("->")
        tt = self.tok
        ty = self.type_()
        if not isinstance(ty, ViewType) or ty.kind != "partition_tensor_view":
            raise self.error("pto.partition_view must have a !pto.partition_tensor_view<...> "
                             "result type", tt)
        if len(offsets) != len(sty.shape) or len(sizes) != len(sty.shape):
            raise self.error(f"pto.partition_view: offsets and sizes need {len(sty.shape)} "
                             f"operands each (the rank of the source), got {len(offsets)} and "
                             f"{len(sizes)}", st)
        if len(ty.shape) != len(sty.shape) or ty.elem != sty.elem:
            raise self.error("pto.partition_view: the result must have the source's rank and "
                             "element type", tt)
        return PartitionViewOp(r, src, offsets, sizes, sty, ty, start.line, start.col)

    def alloc_tile(self, r, start):
        opts = {}
        while self.tok.kind == "ident" and self.tok.text in ("addr", "valid_row", "valid_col"):
            kt = self.next()
            if kt.text in opts:
                raise self.error(f"duplicate {kt.text}", kt)
            self.expect("=")
            opts[kt.text] = self.value()
        self.expect(":", "':' and the tile type")
        tt = self.tok
        ty = self.type_()
        if not isinstance(ty, TileBufType):
            raise self.error("pto.alloc_tile must have a !pto.tile_buf<...> type", tt)
        for key, v in (("valid_row", ty.v_row), ("valid_col", ty.v_col)):
            if v is None and key not in opts:
                raise self.error(f"pto.alloc_tile: the type has a dynamic {key[6:]} extent "
                                 f"('?'), so {key} = %value is required", tt)
            if v is not None and key in opts:
                raise self.error(f"pto.alloc_tile: {key} given but the type's "
                                 f"v_{key[6:]} is static ({v})", opts[key])
        return AllocTileOp(r, opts.get("addr"), opts.get("valid_row"), opts.get("valid_col"),
                           ty, start.line, start.col)

    def in_operand(self) -> InOperand:
        v = self.value()
        attrs = ()
        if self.at("{"):
            attrs = self.attr_dict()
        return InOperand(v, attrs)

    def _type_list(self, close):
        types = [self.type_()]
        while self.accept(","):
            types.append(self.type_())
        self.expect(close, f"{close!r}")
        return types

    def _dps_ins(self, ins, in_types):
        """The operands and types of ``ins(...)`` (after the ``(``, through the ``)``):
        ``%a, %b : T1, T2``, the interleaved ``%a : T1, %b : T2`` PTOAS prints for ops
        with optional operands (``pto.tstore ins(%acc : T, %pre : i64)``), and a bare
        attribute dict in the operand list (``ins(%src, {maskPattern = ...} : T)``), which
        belongs to the operand before it.  Returns the ':' token."""
        ct = None
        while True:
            while True:
                if self.at("{") and ins:
                    prev = ins[-1]
                    ins[-1] = InOperand(prev.value, prev.attrs + self.attr_dict())
                else:
                    ins.append(self.in_operand())
                if not self.accept(","):
                    break
            t = self.expect(":", "':' and the operand types")
            ct = ct or t
            in_types.append(self.type_())
            while True:
                if self.accept(")"):
                    return ct
                self.expect(",", "',' or ')'")
                if self.tok.kind == "percent":
                    break                    # the interleaved form: the next operand
                in_types.append(self.type_())

    def dps(self, name, start):
        self.expect("ins", "'ins('")
        self.expect("(")
        ins = []
        in_types = []
        if not self.accept(")"):
            ct = self._dps_ins(ins, in_types)
            if len(in_types) != len(ins):
                raise self.error(f"pto.{name}: {len(ins)} operands in ins(...) but "
                                 f"{len(in_types)} types", ct)
        outs = []
        out_types = []
        if name in INSTRUCTIONS or self.at("outs"):
            self.expect("outs", "'outs('")
            self.expect("(")
            outs = [self.value()]
            while self.accept(","):
                outs.append(self.value())
            ct = self.expect(":", "':' and the result types")
            out_types = self._type_list(")")
        if len(out_types) != len(outs):
            raise self.error(f"pto.{name}: {len(outs)} operands in outs(...) but "
                             f"{len(out_types)} types", ct)
        attrs = ()
        if self.at("{"):
            attrs = self.attr_dict()
        op = DpsOp(name, tuple(ins), tuple(in_types), tuple(outs), tuple(out_types), attrs,
                   start.line, start.col)
        self._check_arity(name, len(ins), len(outs), start)
        return op

    def _check_arity(self, name, n_in, n_out, tok):
        if name not in INSTRUCTIONS:
            return
        lo, hi = _ARITY_BY_NAME.get(name) or _ARITY[INSTRUCTIONS[name]]
        if not lo <= n_in <= hi:
            want = str(lo) if lo == hi else f"{lo} or {hi}"
            raise self.error(f"pto.{name} takes {want} input operand{'s' if hi > 1 else ''}, "
                             f"got {n_in}", tok)
        olo, ohi = _OUTS_BY_NAME.get(name, (1, 1))
        if not olo <= n_out <= ohi:
            want = "exactly 1 output operand" if ohi == 1 else f"{olo} or {ohi} output operands"
            raise self.error(f"pto.{name} takes {want}, got {n_out}", tok)

    def ssa(self, r, name, nt, start):
        prefixed = name.startswith("pto.")
        short = name[4:] if prefixed else name
        if short not in INSTRUCTIONS or INSTRUCTIONS[short] in ("load", "store"):
            raise self.error(f"unknown operation {name!r}", nt)
        # operands are plain values here; a following {...} is the op's attribute dict
        operands = [InOperand(self.value())]
        while self.accept(","):
            operands.append(InOperand(self.value()))
        attrs = ()
        if self.at("{"):
            attrs = self.attr_dict()
        ct = self.expect(":", "':' and the operand types")
        paren = bool(self.accept("("))
        in_types = self._type_list(")") if paren else [self.type_()]
        if not paren:
            while self.accept(","):
                in_types.append(self.type_())
        arrow = bool(self.accept("->"))
        if arrow:
            out_types = [self.type_()]
        elif paren:
            raise self.error("expected '->' and the result type", self.tok)
        else:
            out_types = []
        if not arrow:
            # synchronous form "%d = trecip %s : T": one type for every tile
            if len(in_types) != 1:
                raise self.error("expected '->' and the result type", self.tok)
            t0 = in_types[0]
            in_types = [t0] * len(operands)
            out_types = [t0]
        elif len(in_types) == 1 and len(operands) > 1:
            in_types = in_types * len(operands)
        if len(in_types) != len(operands):
            raise self.error(f"{name}: {len(operands)} operands but {len(in_types)} types", ct)
        op = SsaOp((r,), short, tuple(operands), tuple(in_types), tuple(out_types), attrs,
                   prefixed, paren, arrow, start.line, start.col)
        self._check_arity(short, len(operands), 1, nt)
        return op


def _rank_form(ty, n):
    """The older PTOAS spells a rank-``n`` dynamic view ``!pto.tensor_view<Nxf32>`` (the
    one number is the rank): read it as ``?x...x?``."""
    if len(ty.shape) == 1 and n > 1 and ty.shape[0] == n:
        return ViewType(ty.kind, (None,) * n, ty.elem)
    return ty
