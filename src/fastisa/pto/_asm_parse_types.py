"""PTO-AS parser, the type family: ``!pto.tile_buf``, ``!pto.tile``, views, pointers, memrefs
and scalar types (a mixin of :class:`fastisa.pto._asm_parser._Parser`)."""

from __future__ import annotations

import re

from ._asm_ast import (BLAYOUTS, ELEMENT_TYPES, LOCS, PAD_NAMES, SCALAR_TYPES, SLAYOUTS,
                       MemRefType, OpaqueType, PtrType, ScalarType, TileBufType, ViewType)
from ._asm_lexer import _join


class _TypeParser:
    def elem_type(self, tok=None) -> str:
        t = tok or self.tok
        if t.kind not in ("ident", "bang") or t.text not in ELEMENT_TYPES:
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
        elif t.kind == "dims" and self.peek().text == "x" and self.peek(2).kind == "bang":
            # 16x16x!pto.hif8: a PTO dialect element type after the dimensions
            self.next()
            self.next()
            dims, elem = t.text.split("x"), self.tok.text
            self.next()
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
