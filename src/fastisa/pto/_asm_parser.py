"""PTO-AS parser and type checker: tokens -> :class:`Module` (see :mod:`fastisa.pto.asm_syntax`)."""

from __future__ import annotations

import re

import numpy as np

from ..errors import AsmSyntaxError
from ._asm_ast import (  # noqa: F401
    BLAYOUTS, ELEMENT_TYPES, GenericOp, MemRefType, OpaqueType, Region, LOCS, PAD_NAMES, SCALAR_TYPES, SLAYOUTS, AllocTileOp, ArithOp, ConstantOp, DpsOp, ForOp, FuncOp, InOperand, MakeTensorViewOp, Module, PartitionViewOp, PtrType, ReturnOp, ScalarType, SetValidShapeOp, SsaOp, SyncOp, TAssignOp, TileBufType, Value, ViewType, _bits_float, _float_bits, _is_float, _np_dtype, same_type,
)
from ._asm_lexer import Token, tokenize
from ._asm_ops import (_ARITY, _SYNC_OPS, ARITH_ALL, ARITH_CAST, ARITH_CMP,
                       ARITH_FLOAT_OPS, ARITH_INT_OPS, ARITH_UNARY, INSTRUCTIONS, KNOWN_OPS,
                       PTOAS_OPS, _CMPF_PREDICATES, _CMPI_PREDICATES)
from ._asm_printer import format_type

#: Deepest scf.for nesting the parser accepts (the checker, printer and runner recurse per
#: level; 600 levels ran out of Python stack).
MAX_NESTING = 100


class _Parser:
    def __init__(self, text: str):
        self.depth = 0
        self.text = text
        self.lines = text.split("\n")
        self.toks = tokenize(text)
        self.i = 0

    # -- token helpers ------------------------------------------------------------------
    @property
    def tok(self) -> Token:
        return self.toks[self.i]

    def peek(self, k=1) -> Token:
        return self.toks[min(self.i + k, len(self.toks) - 1)]

    def error(self, msg, tok: Token | None = None):
        tok = tok or self.tok
        src = self.lines[tok.line - 1] if 0 < tok.line <= len(self.lines) else ""
        return AsmSyntaxError(msg, tok.line, tok.col, src)

    def _desc(self, tok):
        return "end of input" if tok.kind == "eof" else repr(tok.text)

    def next(self) -> Token:
        t = self.tok
        if t.kind != "eof":
            self.i += 1
        return t

    def at(self, text) -> bool:
        return self.tok.text == text and self.tok.kind in ("punct", "ident")

    def accept(self, text) -> Token | None:
        if self.at(text):
            return self.next()
        return None

    def expect(self, text, what=None) -> Token:
        if not self.at(text):
            raise self.error(f"expected {what or repr(text)}, got {self._desc(self.tok)}")
        return self.next()

    def expect_kind(self, kind, what) -> Token:
        if self.tok.kind != kind:
            raise self.error(f"expected {what}, got {self._desc(self.tok)}")
        return self.next()

    def value(self) -> Value:
        t = self.expect_kind("percent", "an SSA value (%name)")
        return Value(t.text[1:], t.line, t.col)

    def int_lit(self, what="an integer") -> int:
        t = self.tok
        if t.kind == "int":
            self.next()
            return int(t.text)
        if t.kind == "hex":
            self.next()
            return int(t.text, 16)
        raise self.error(f"expected {what}, got {self._desc(t)}")

    # -- attributes ---------------------------------------------------------------------
    def attr_value(self) -> str:
        """Balanced tokens up to ``,`` or ``}`` at depth 0, normalised to text."""
        parts = []
        depth = 0
        start = self.tok
        while True:
            t = self.tok
            if t.kind == "eof":
                raise self.error("unterminated attribute value", start)
            if depth == 0 and t.text in (",", "}") and t.kind == "punct":
                break
            if t.text in ("<", "(", "[", "{") and t.kind == "punct":
                depth += 1
            elif t.text in (">", ")", "]", "}") and t.kind == "punct":
                depth -= 1
            parts.append(t.text)
            self.next()
        if not parts:
            raise self.error("expected an attribute value")
        return _join(parts)

    def attr_dict(self) -> tuple:
        self.expect("{")
        items = []
        if self.accept("}"):
            return ()
        while True:
            t = self.tok
            if t.kind == "string":
                key = t.text[1:-1]
            elif t.kind == "ident":
                key = t.text
            else:
                raise self.error(f"expected an attribute name, got {self._desc(t)}")
            self.next()
            if self.accept("="):
                items.append((key, self.attr_value()))
            else:
                items.append((key, "unit"))
            if self.accept("}"):
                return tuple(items)
            self.expect(",", "',' or '}' in attribute dictionary")

    # -- types --------------------------------------------------------------------------
    def elem_type(self, tok=None) -> str:
        t = tok or self.tok
        if t.kind != "ident" or t.text not in ELEMENT_TYPES:
            raise self.error(f"expected an element type ({', '.join(sorted(ELEMENT_TYPES))}), "
                             f"got {self._desc(t)}", t)
        if tok is None:
            self.next()
        return t.text

    def balanced_text(self, start):
        """Tokens of a balanced ``<...>`` group (the current token is ``<``) as text."""
        parts = []
        depth = 0
        while True:
            t = self.tok
            if t.kind == "eof":
                raise self.error("unterminated '<' in type", start)
            if t.kind == "punct" and t.text in "<([{":
                depth += 1
            elif t.kind == "punct" and t.text in ">)]}":
                depth -= 1
            parts.append(t.text)
            self.next()
            if depth == 0:
                return _join(parts)

    def memref_type(self, start):
        self.expect("<")
        shape, elem = self.shape_with_elem(allow_dynamic=True)
        space = None
        rest = []
        while self.accept(","):
            t = self.tok
            if t.kind == "hash" and t.text == "#pto.address_space":
                self.next()
                self.expect("<")
                space = self.expect_kind("ident", "an address space").text.lower()
                self.expect(">")
                if space == "ub":
                    space = "vec"
                continue
            part = [t.text]
            self.next()
            if self.at("<") or self.at("("):
                part.append(self.balanced_text(t))
            rest.append(_join(part))
        self.expect(">", "'>' closing the memref type")
        return MemRefType(shape, elem, space, ", ".join(rest))

    def type_(self):
        t = self.tok
        if t.kind == "ident":
            if t.text == "memref":
                self.next()
                return self.memref_type(t)
            if t.text in ("vector", "tensor", "complex"):
                self.next()
                return OpaqueType(t.text + self.balanced_text(t))
            if t.text not in SCALAR_TYPES and t.text != "f64":
                raise self.error(f"unknown type {t.text!r}")
            self.next()
            return ScalarType(t.text)
        if t.kind == "punct" and t.text == "<":      # pto.subset's short form <32x64xf32, ...>
            return OpaqueType(self.balanced_text(t))
        if t.kind != "bang":
            raise self.error(f"expected a type, got {self._desc(t)}")
        name = t.text
        self.next()
        if name == "!pto.ptr":
            self.expect("<")
            elem = self.elem_type()
            space = None
            if self.accept(","):
                space = self.expect_kind("ident", "a memory space (gm, vec)").text
            self.expect(">")
            return PtrType(elem, space)
        if name in ("!pto.tensor_view", "!pto.partition_tensor_view"):
            self.expect("<")
            shape, elem = self.shape_with_elem(allow_dynamic=True)
            self.expect(">")
            return ViewType(name[5:], shape, elem)
        if name == "!pto.tile_buf":
            return self.tile_buf_body(t)
        if name == "!pto.tile":
            return self.tile_body(t)
        if name.startswith("!pto."):
            return OpaqueType(name + (self.balanced_text(t) if self.at("<") else ""))
        raise self.error(f"unknown type {name!r}", t)

    def shape_with_elem(self, allow_dynamic):
        t = self.tok
        if t.kind == "shape":
            self.next()
            m = re.match(r"((?:(?:[0-9]+|\?)x)+)(.*)", t.text)
            dims, elem = m.group(1)[:-1].split("x"), m.group(2)
        elif t.kind == "ident":        # rank-0 view: just the element type
            self.next()
            dims, elem = [], t.text
        else:
            raise self.error(f"expected a shape like 16x128xf32, got {self._desc(t)}")
        shape = []
        for d in dims:
            if d == "?":
                if not allow_dynamic:
                    raise self.error("dynamic dimension '?' is not allowed here", t)
                shape.append(None)
            else:
                shape.append(int(d))
        if elem not in ELEMENT_TYPES:
            raise self.error(f"unknown element type {elem!r} in {t.text!r}", t)
        return tuple(shape), elem

    def dims(self):
        t = self.tok
        ok = t.kind == "dims" or (t.kind == "hex" and re.fullmatch(r"0x[0-9]+", t.text))
        if not ok:             # ("0x16" lexes as hexadecimal; as dimensions it is 0 x 16)
            raise self.error(f"expected dimensions like 16x?, got {self._desc(t)}")
        self.next()
        return tuple(None if d == "?" else int(d) for d in t.text.split("x"))

    def dyn_int(self, what):
        if self.accept("?"):
            return None
        t = self.tok
        v = self.int_lit(what)
        if v == -1:
            return None
        if v < 0:
            raise self.error(f"{what} must be '?', -1 or a non-negative integer, got {v}", t)
        return v

    def _keyword_value(self, key, allowed):
        t = self.tok
        if t.kind == "string":
            v = t.text[1:-1]
        elif t.kind == "ident":
            v = t.text
        else:
            raise self.error(f"expected {key} ({' | '.join(allowed)}), got {self._desc(t)}")
        v = v.lower()
        if key == "loc" and v in ("ub",):
            v = "vec"
        if v not in allowed:
            raise self.error(f"unknown {key} {t.text!r}; expected {' | '.join(allowed)}", t)
        self.next()
        return v

    def _pad_value(self):
        t = self.tok
        if t.kind == "ident" and t.text.lower() in PAD_NAMES:
            self.next()
            return PAD_NAMES.index(t.text.lower())
        v = self.int_lit("a pad value (0..3 or null/zero/max/min)")
        if not 0 <= v <= 3:
            raise self.error(f"unknown pad {v}; expected 0 (null), 1 (zero), 2 (max) or 3 (min)", t)
        return v

    def _options(self, fields, seen, allow_valid):
        """Parse ``, key=value`` options into ``fields`` until ``>``."""
        while self.accept(","):
            kt = self.expect_kind("ident", "a tile_buf field name")
            key = kt.text
            if key in seen:
                raise self.error(f"duplicate {key} in tile type", kt)
            seen.add(key)
            self.expect("=")
            if key == "valid" and allow_valid:
                vt = self.tok
                d = self.dims()
                if len(d) != 2:
                    raise self.error("tile valid must have exactly two dims", vt)
                fields["v_row"], fields["v_col"] = d
            elif key == "blayout":
                fields["blayout"] = self._keyword_value("blayout", BLAYOUTS)
            elif key == "slayout":
                fields["slayout"] = self._keyword_value("slayout", SLAYOUTS)
            elif key == "fractal":
                fields["fractal"] = self.int_lit("a fractal size")
            elif key == "pad":
                fields["pad"] = self._pad_value()
            elif key == "compact":
                fields["compact"] = self.int_lit("a compact mode")
            else:
                raise self.error(f"unknown key in tile type: {key}", kt)
        self.expect(">", "',' or '>' in tile type")

    def _check_tile(self, tt: TileBufType, tok) -> TileBufType:
        for what, v, lim in (("v_row", tt.v_row, tt.rows), ("v_col", tt.v_col, tt.cols)):
            if v is not None and v > lim:
                raise self.error(f"tile {what}={v} is larger than the tile "
                                 f"({'rows' if what == 'v_row' else 'cols'}={lim})", tok)
        if tt.rows <= 0 or tt.cols <= 0:
            raise self.error(f"tile rows and cols must be positive, got {tt.rows}x{tt.cols}", tok)
        return tt

    def tile_buf_body(self, start) -> TileBufType:
        self.expect("<")
        if self.at("loc") and self.peek().text == "=":
            # legacy: loc=, dtype=, rows=, cols=, v_row=, v_col= in this order
            self.next()
            self.expect("=")
            loc = self._keyword_value("loc", LOCS)
            vals = {}
            for key in ("dtype", "rows", "cols", "v_row", "v_col"):
                self.expect(",", f"',' before {key}=")
                self.expect(key, f"{key}=")
                self.expect("=")
                if key == "dtype":
                    vals[key] = self.elem_type()
                elif key in ("rows", "cols"):
                    vals[key] = self.int_lit(key)
                else:
                    vals[key] = self.dyn_int(key)
            fields = {}
            self._options(fields, set(), allow_valid=False)
            tt = TileBufType(loc, vals["dtype"], vals["rows"], vals["cols"], vals["v_row"],
                             vals["v_col"], form="legacy", **fields)
            return self._check_tile(tt, start)
        loc = self._keyword_value("loc", LOCS)
        self.expect(",", "',' after the tile location")
        return self._compact_rest(loc, "compact", start)

    def _compact_rest(self, loc, form, start):
        st = self.tok
        shape, elem = self.shape_with_elem(allow_dynamic=False)
        if len(shape) != 2:
            raise self.error("tile type expects exactly two shape dims (RxCxT)", st)
        fields = {"v_row": shape[0], "v_col": shape[1]}
        self._options(fields, set(), allow_valid=True)
        v_row = fields.pop("v_row")
        v_col = fields.pop("v_col")
        tt = TileBufType(loc, elem, shape[0], shape[1], v_row, v_col, form=form, **fields)
        return self._check_tile(tt, start)

    def tile_body(self, start) -> TileBufType:
        self.expect("<")
        loc = "vec"
        if self.tok.kind == "ident" and self.tok.text in LOCS and self.peek().text == ",":
            loc = self.next().text
            self.next()
        elif self.at("loc") and self.peek().text == "=":
            self.next()
            self.next()
            loc = self._keyword_value("loc", LOCS)
            self.expect(",")
        return self._compact_rest(loc, "tile", start)

    # -- structure ----------------------------------------------------------------------
    def _module_body(self, funcs, nested, depth=0):
        """Functions of a ``module { ... }`` body (modules nested or in sequence are
        flattened: PTOAS files hold several modules)."""
        if depth > 50:
            raise self.error("modules nested too deeply")
        while not self.at("}"):
            if self.tok.kind == "eof":
                raise self.error("expected '}' closing the module")
            if self.at("module"):
                self.next()
                if self.tok.kind == "at":
                    self.next()
                attrs = self.attr_dict() if self.accept("attributes") else ()
                nested.append(attrs)
                self.expect("{", "'{' opening the module body")
                self._module_body(funcs, nested, depth + 1)
                self.next()
                continue
            funcs.append(self.func())

    def module(self) -> Module:
        funcs = []
        attrs = ()
        wrapped = False
        if self.at("module"):
            wrapped = True
            self.next()
            if self.tok.kind == "at":
                self.next()
            if self.accept("attributes"):
                attrs = self.attr_dict()
            self.expect("{", "'{' opening the module body")
            nested = []
            self._module_body(funcs, nested)
            self.next()
            while self.at("module"):       # further top-level modules
                self.next()
                if self.tok.kind == "at":
                    self.next()
                more = self.attr_dict() if self.accept("attributes") else ()
                attrs = attrs or more
                self.expect("{", "'{' opening the module body")
                self._module_body(funcs, nested)
                self.next()
            if not attrs:
                attrs = next((a for a in nested if a), ())
        else:
            while self.tok.kind != "eof":
                funcs.append(self.func())
        if self.tok.kind != "eof":
            raise self.error(f"unexpected {self._desc(self.tok)} after the module")
        if not funcs:
            raise self.error("the program has no func.func")
        return Module(tuple(funcs), attrs, wrapped, self.text)

    def func(self) -> FuncOp:
        start = self.expect("func.func", "'func.func'")
        visibility = None
        if self.tok.kind == "ident" and self.tok.text in ("private", "public", "nested"):
            visibility = self.next().text
        name = self.expect_kind("at", "a function name (@name)").text[1:]
        self.expect("(")
        args = []
        if not self.accept(")"):
            while True:
                v = self.value()
                self.expect(":")
                args.append((v.name, self.type_()))
                if self.at("{"):               # argument attributes
                    self.attr_dict()
                self._skip_loc()
                if self.accept(")"):
                    break
                self.expect(",", "',' or ')' in the argument list")
        results = ()
        if self.accept("->"):
            if self.accept("("):
                res = []
                if not self.accept(")"):
                    res = self._type_list(")")
                results = tuple(res)
            else:
                results = (self.type_(),)
        attrs = ()
        if self.accept("attributes"):
            attrs = self.attr_dict()
        if not self.at("{"):
            if visibility == "private":        # an external declaration
                return FuncOp(name, tuple(args), None, attrs, results, visibility,
                              start.line, start.col)
            self.expect("{", "'{' opening the function body")
        self.expect("{", "'{' opening the function body")
        body = []
        while not self.at("}"):
            if self.tok.kind == "eof":
                raise self.error("expected '}' closing the function body")
            body.append(self.op())
        self.next()
        return FuncOp(name, tuple(args), tuple(body), attrs, results, visibility,
                      start.line, start.col)

    def _skip_loc(self):
        if self.at("loc") and self.peek().text == "(":
            self.next()
            self.balanced_text_paren()

    def balanced_text_paren(self):
        depth = 0
        while True:
            t = self.next()
            if t.kind == "eof":
                raise self.error("unbalanced '('", t)
            if t.text == "(":
                depth += 1
            elif t.text == ")":
                depth -= 1
                if depth == 0:
                    return

    def op(self):
        t = self.tok
        if t.kind == "percent":
            results = []
            while True:
                v = self.value()
                count = 1
                if self.at(":") and self.peek().kind == "int" and self.peek().line == v.line:
                    self.next()
                    count = int(self.next().text)
                    if count < 1:
                        raise self.error("a result group needs at least one value", v)
                results.append((v, count))
                if not self.accept(","):
                    break
            self.expect("=", "'=' after the result names")
            nt = self.tok
            if nt.kind not in ("ident", "string"):
                raise self.error(f"expected an operation name, got {self._desc(nt)}")
            self.next()
            name = nt.text
            if len(results) == 1 and results[0][1] == 1 and nt.kind == "ident":
                r = results[0][0].name
                if name == "arith.constant":
                    return self.constant(r, t)
                if name == "pto.make_tensor_view":
                    return self.make_tensor_view(r, t)
                if name == "pto.partition_view":
                    return self.partition_view(r, t)
                if name == "pto.alloc_tile":
                    return self.alloc_tile(r, t)
                if name == "pto.tassign":
                    return self.tassign(r, t)
                if name.startswith("arith.") and name[6:] in ARITH_ALL:
                    return self.arith(r, name, nt, t)
                short = name[4:] if name.startswith("pto.") else name
                if short in INSTRUCTIONS and INSTRUCTIONS[short] not in ("load", "store") \
                        and self.tok.kind == "percent":
                    return self.ssa(r, name, nt, t)
            self._known_or_error(name, nt)
            return self.generic(tuple((v.name, k) for v, k in results), name, nt, t)
        if t.kind not in ("ident", "string"):
            raise self.error(f"expected an operation, got {self._desc(t)}")
        name = t.text
        if name in ("return", "func.return"):
            self.next()
            return self.return_op(t)
        if name == "scf.for" and not self._has_iter_args():
            self.next()
            return self.for_loop(t)
        if name == "pto.set_validshape":
            self.next()
            tile = self.value()
            self.expect(",")
            vr = self.value()
            self.expect(",")
            vc = self.value()
            self.expect(":")
            ty = self.type_()
            return SetValidShapeOp(tile, vr, vc, ty, t.line, t.col)
        short = name[4:] if name.startswith("pto.") else None
        if short in _SYNC_OPS and not self.peek().text == "ins":
            parts = []
            while self.tok.line == t.line and self.tok.kind != "eof":
                parts.append(self.next().text)
            return SyncOp(short, _join(parts[1:]), t.line, t.col)
        if short is not None and self.peek().text == "ins" and (
                short in INSTRUCTIONS or short in PTOAS_OPS):
            self.next()
            return self.dps(short, t)
        self._known_or_error(name, t)
        self.next()
        return self.generic((), name, t, t)

    def _known_or_error(self, name, tok):
        bare = name.strip('"')
        if bare in KNOWN_OPS or (bare.startswith("pto.") and bare[4:] in PTOAS_OPS):
            return
        short = bare[4:] if bare.startswith("pto.") else None
        if short is not None and short.startswith("v"):
            raise self.error(f"{bare} is a VPTO micro-instruction; fastisa runs the tile "
                             f"level only", tok)
        raise self.error(f"unknown operation {bare!r}"
                         + (f"; fastisa runs {', '.join('pto.' + k for k in INSTRUCTIONS)}"
                            if short is not None else ""), tok)

    def _has_iter_args(self):
        j = self.i
        depth = 0
        while j < len(self.toks):
            t = self.toks[j]
            if t.kind == "eof":
                return False
            if t.text == "iter_args":
                return True
            if t.text == "{" and t.kind == "punct":
                return False
            j += 1
        del depth
        return False

    def return_op(self, t):
        values = []
        types = []
        if self.tok.kind == "percent" and self.tok.line == t.line:
            values.append(self.value())
            while self.accept(","):
                values.append(self.value())
            self.expect(":", "':' and the returned values' types")
            types = [self.type_()]
            while self.accept(","):
                types.append(self.type_())
            if len(types) != len(values):
                raise self.error(f"return: {len(values)} values but {len(types)} types", t)
        return ReturnOp(tuple(values), tuple(types), t.line, t.col)

    # -- generic operations -------------------------------------------------------------
    _CONT_NEXT = frozenset((":", "->", "outs", "ins", ",", "(", "[", "to", "step", "iter_args", "else",
                            "do", "attributes", "sizes", "strides", "shape", "offsets", "=",
                            ")", "]", ">", "}"))
    _CONT_PREV = frozenset((",", "=", ":", "->", "(", "[", "<", "{", "ins", "outs", "to",
                            "step"))

    def _is_region(self):
        """Is the ``{`` at the cursor a region (ops on the next lines) or an attribute dict?"""
        lb = self.tok
        nx = self.peek()
        if nx.line == lb.line:
            return False
        if nx.kind in ("percent", "caret"):
            return True
        if nx.text == "}":
            return True
        if nx.kind in ("ident", "string"):
            after = self.peek(2)
            return not (after.text in ("=", ":") or after.text == "}" or after.text == ",")
        return False

    def generic(self, results, name, nt, start):
        text = []
        toks = []
        regions = []
        depth = 0
        prev = nt
        while True:
            t = self.tok
            if t.kind == "eof":
                if depth:
                    raise self.error(f"unbalanced brackets in {name}", nt)
                break
            if depth == 0:
                if t.line != prev.line and not (t.text in self._CONT_NEXT and t.text != "}"
                                                or prev.text in self._CONT_PREV):
                    break
                if t.text == "}" and t.kind == "punct":
                    break
                if t.kind == "punct" and t.text == "{" and self._is_region():
                    text.append(f"\x00{len(regions)}")
                    toks.append(t)
                    regions.append(self.region())
                    prev = self.toks[self.i - 1]
                    continue
            if t.kind == "punct" and t.text in "([<{":
                depth += 1
            elif t.kind == "punct" and t.text in ")]>}":
                depth -= 1
                if depth < 0:
                    raise self.error(f"unbalanced {t.text!r}", t)
            text.append(t.text)
            toks.append(t)
            self.next()
            prev = t
        return GenericOp(name.strip('"'), results, tuple(text), tuple(regions), tuple(toks),
                         start.line, start.col)

    def region(self):
        lb = self.expect("{")
        args = []
        label = None
        if self.tok.kind == "caret":
            label = self.next().text
            if self.accept("("):
                if not self.accept(")"):
                    while True:
                        v = self.value()
                        self.expect(":")
                        args.append((v.name, self.type_()))
                        self._skip_loc()
                        if self.accept(")"):
                            break
                        self.expect(",", "',' or ')' in the block arguments")
            self.expect(":", "':' after the block label")
        ops = []
        while not self.at("}"):
            if self.tok.kind == "eof":
                raise self.error("expected '}' closing the region", lb)
            if self.tok.kind == "caret":
                raise self.error("regions with several blocks are not supported")
            ops.append(self.op())
        self.next()
        return Region(tuple(ops), tuple(args), label)

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

    def dps(self, name, start):
        self.expect("ins", "'ins('")
        self.expect("(")
        ins = []
        in_types = []
        if not self.accept(")"):
            ins.append(self.in_operand())
            while self.accept(","):
                ins.append(self.in_operand())
            ct = self.expect(":", "':' and the operand types")
            in_types = self._type_list(")")
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
        lo, hi = _ARITY[INSTRUCTIONS[name]]
        if not lo <= n_in <= hi:
            want = str(lo) if lo == hi else f"{lo} or {hi}"
            raise self.error(f"pto.{name} takes {want} input operand{'s' if hi > 1 else ''}, "
                             f"got {n_in}", tok)
        if n_out != 1:
            raise self.error(f"pto.{name} takes exactly 1 output operand, got {n_out}", tok)

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


_NO_SPACE_AFTER = {"<", "(", "[", "{"}
_NO_SPACE_BEFORE = {">", ")", "]", "}", ",", "<", "(", "["}


def _join(parts):
    out = ""
    prev = None
    for p in parts:
        if prev is None:
            out = p
        elif prev in _NO_SPACE_AFTER or p in _NO_SPACE_BEFORE or prev.startswith("#"):
            out += p
        else:
            out += " " + p
        prev = p
    return out


# --------------------------------------------------------------------------------------
# Type checker (name resolution and type agreement, like MLIR's verifier)
# --------------------------------------------------------------------------------------

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


def _rank_form(ty, n):
    """The older PTOAS spells a rank-``n`` dynamic view ``!pto.tensor_view<Nxf32>`` (the
    one number is the rank): read it as ``?x...x?``."""
    if len(ty.shape) == 1 and n > 1 and ty.shape[0] == n:
        return ViewType(ty.kind, (None,) * n, ty.elem)
    return ty


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
        if len(in_types) == 3:
            want(in_types[1], ScalarType, ins[1], "the compare-form scalar")
            want(in_types[2], TileBufType, ins[2], "the compare-form tmp tile")
        else:
            want(in_types[1], TileBufType, ins[1], "the index tile")
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


def parse(text: str, *, arch: str | None = None, level: str | None = None) -> Module:
    """Parse, type-check and verify PTO-AS ``text``; raise AsmSyntaxError(line, column) on
    errors.  ``arch``/``level``: PTOAS's ``--pto-arch``/``--pto-level`` for the verifier
    rules that depend on them (:mod:`fastisa.pto._asm_verify`)."""
    from ._asm_verify import verify
    p = _Parser(text)
    module = p.module()
    for f in module.funcs:
        _check_func(p, f)
    verify(module, p.lines, arch, level)
    return module
