"""PTO-AS parser: tokens -> :class:`Module` (see :mod:`fastisa.pto.asm_syntax`); the type
family is in :mod:`._asm_parse_types`, the operations in :mod:`._asm_parse_ops`, the type
checker in :mod:`._asm_check`."""

from __future__ import annotations

from ..errors import AsmSyntaxError
from ._asm_ast import (FuncOp, GenericOp, Module, ModuleInfo, Region, ReturnOp,
                       SetValidShapeOp, SyncOp, Value)
from ._asm_check import _check_func
from ._asm_lexer import Token, _join, tokenize
from ._asm_ops import _SYNC_OPS, ARITH_ALL, INSTRUCTIONS, KNOWN_OPS, PTOAS_OPS
from ._asm_parse_ops import MAX_NESTING, _OpParser  # noqa: F401  (public limit)
from ._asm_parse_types import _TypeParser


class _Parser(_TypeParser, _OpParser):
    """Token helpers, attributes and structure; the type and operation families are
    the mixins in :mod:`._asm_parse_types` and :mod:`._asm_parse_ops`."""

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

    # -- structure ----------------------------------------------------------------------
    def _module_body(self, funcs, nested, depth=0, mod=0):
        """Functions of a ``module { ... }`` body (modules nested or in sequence are
        flattened: PTOAS files hold several modules).  ``self.mods`` records the nesting
        (:class:`~fastisa.pto._asm_ast.ModuleInfo`, ``mod`` the index of this body's)."""
        if depth > 50:
            raise self.error("modules nested too deeply")
        while not self.at("}"):
            if self.tok.kind == "eof":
                raise self.error("expected '}' closing the module")
            if self.at("module"):
                start = self.next()
                if self.tok.kind == "at":
                    self.next()
                attrs = self.attr_dict() if self.accept("attributes") else ()
                nested.append(attrs)
                self.expect("{", "'{' opening the module body")
                child = self._new_mod(attrs, mod, start)
                self._module_body(funcs, nested, depth + 1, child)
                self.next()
                continue
            self.mods[mod]["items"].append(len(funcs))
            funcs.append(self.func())

    def _new_mod(self, attrs, parent, tok):
        self.mods.append({"attrs": attrs, "parent": parent, "items": [], "children": [],
                          "line": tok.line, "col": tok.col})
        k = len(self.mods) - 1
        if parent is not None:
            self.mods[parent]["children"].append(k)
        return k

    def module(self) -> Module:
        funcs = []
        attrs = ()
        wrapped = False
        self.mods = []
        if self.at("module"):
            wrapped = True
            start = self.next()
            if self.tok.kind == "at":
                self.next()
            if self.accept("attributes"):
                attrs = self.attr_dict()
            self.expect("{", "'{' opening the module body")
            nested = []
            # a file of several top-level modules is, as MLIR parses it, one implicit
            # module holding them; fixed below when a second one follows
            first = self._new_mod(attrs, None, start)
            self._module_body(funcs, nested, 0, first)
            self.next()
            while self.at("module"):       # further top-level modules
                if self.mods[0]["parent"] is None and first == 0:
                    self.mods.insert(0, {"attrs": (), "parent": None, "items": [],
                                         "children": [], "line": start.line,
                                         "col": start.col})
                    for m in self.mods[1:]:
                        m["parent"] = None if m["parent"] is None else m["parent"] + 1
                        m["children"] = [c + 1 for c in m["children"]]
                    self.mods[1]["parent"] = 0
                    self.mods[0]["children"].append(1)
                    first = 1
                tok = self.next()
                if self.tok.kind == "at":
                    self.next()
                more = self.attr_dict() if self.accept("attributes") else ()
                attrs = attrs or more
                self.expect("{", "'{' opening the module body")
                k = self._new_mod(more, 0, tok)
                self._module_body(funcs, nested, 0, k)
                self.next()
            if not attrs:
                attrs = next((a for a in nested if a), ())
        else:
            self._new_mod((), None, self.tok)
            while self.tok.kind != "eof":
                self.mods[0]["items"].append(len(funcs))
                funcs.append(self.func())
        if self.tok.kind != "eof":
            raise self.error(f"unexpected {self._desc(self.tok)} after the module")
        if not funcs:
            raise self.error("the program has no func.func")
        infos = tuple(ModuleInfo(tuple(m["attrs"]), m["parent"], tuple(m["items"]),
                                 tuple(m["children"]), m["line"], m["col"])
                      for m in self.mods)
        return Module(tuple(funcs), attrs, wrapped, self.text, infos)

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
            if name == "call" and nt.kind == "ident" and self.tok.kind == "at":
                name = "func.call"
            if len(results) == 1 and results[0][1] == 1 and nt.kind == "ident":
                r = results[0][0].name
                if name == "arith.constant" and not self.at("dense"):
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
        if name == "call" and t.kind == "ident" and self.peek().kind == "at":
            name = "func.call"     # the func dialect's own spelling inside func.func
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
                # an attribute dict on the line after the operands, ``{key = ...}``, is
                # still this op's (PTOAS prints long ops that way)
                # (ptoacc: also after a bare operand list, ``pto.bind_tile %a, %r, %c`` then
                # ``{config = ...}``: a ``{`` whose next token is a bare key, never a region's
                # ``%x = ...``)
                attr_dict_next = (t.text == "{" and t.kind == "punct"
                                  and (prev.text == ")" or prev.kind == "percent")
                                  and self.peek().line == t.line
                                  and (prev.text == ")" or self.peek().kind == "ident")
                                  and self.peek(2).text == "=")
                if t.line != prev.line and not (t.text in self._CONT_NEXT and t.text != "}"
                                                or prev.text in self._CONT_PREV
                                                or attr_dict_next):
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
