"""PTO-AS lexer: text -> tokens with 1-based line/column (see :mod:`fastisa.pto.asm_syntax`)."""

from __future__ import annotations

import re
from typing import NamedTuple

from ..errors import AsmSyntaxError

_TOKEN_RE = re.compile(r"""
  (?P<ws>[ \t\r\f\v]+)
| (?P<nl>\n)
| (?P<comment>//[^\n]*|\#(?=[ \t\n]|$)[^\n]*)
| (?P<string>"(?:[^"\\\n]|\\.)*")
| (?P<percent>%[A-Za-z0-9_$.\-]+(?:\#[0-9]+)?)
| (?P<caret>\^[A-Za-z0-9_$.]+)
| (?P<at>@[A-Za-z_$.][A-Za-z0-9_$.]*)
| (?P<bang>![A-Za-z_][A-Za-z0-9_$.]*)
| (?P<hash>\#[A-Za-z_][A-Za-z0-9_$.]*)
| (?P<hex>[-+]?0x[0-9A-Fa-f]+(?![A-Za-z0-9_]))      # before shape: 0xFC00 is a number
| (?P<shape>(?:[0-9]+|\?)(?:x(?:[0-9]+|\?))*x(?=[A-Za-z_])[A-Za-z_][A-Za-z0-9_]*)
| (?P<hex2>[-+]?0x[0-9A-Fa-f]+)
| (?P<dims>(?:[0-9]+|\?)(?:x(?:[0-9]+|\?))+)
| (?P<float>[-+]?(?:[0-9]+\.[0-9]*(?:[eE][-+]?[0-9]+)?|[0-9]+[eE][-+]?[0-9]+))
| (?P<int>[-+]?[0-9]+)
| (?P<ident>[A-Za-z_][A-Za-z0-9_$.]*)
| (?P<punct>->|[(){}\[\]<>,:=?*])
""", re.VERBOSE)


#: Longest numeric literal (int, hex, float, dims) the lexer accepts: far beyond any i64,
#: index or float spelling, and below Python's 4300-digit int() limit.
MAX_LITERAL = 400
_NUMERIC = frozenset({"int", "hex", "float", "dims", "shape"})


class Token(NamedTuple):
    """One token: ``kind`` (a group name of the lexer), ``text``, 1-based ``line``/``col``."""

    kind: str
    text: str
    line: int
    col: int


def tokenize(text: str) -> list[Token]:
    """Split PTO-AS ``text`` into tokens (comments and blanks dropped), ending with ``eof``."""
    lines = text.split("\n")
    out = []
    append = out.append
    match = _TOKEN_RE.match
    pos, line, line_start = 0, 1, 0
    n = len(text)
    while pos < n:
        m = match(text, pos)
        if m is None:
            col = pos - line_start + 1
            if text.startswith("...", pos):
                raise AsmSyntaxError("'...' is a placeholder in the spec's examples; write the "
                                     "type out, e.g. !pto.tile<16x16xf32> or "
                                     "!pto.tile_buf<vec, 16x16xf32>", line, col, lines[line - 1])
            raise AsmSyntaxError(f"unexpected character {text[pos]!r}", line, col,
                                 lines[line - 1])
        kind = m.lastgroup
        if kind == "nl":
            line += 1
            line_start = m.end()
        elif kind != "ws" and kind != "comment":
            if kind == "hex2":
                kind = "hex"
            if kind in _NUMERIC and m.end() - m.start() > MAX_LITERAL:
                raise AsmSyntaxError(f"numeric literal of {m.end() - m.start()} characters is "
                                     f"too long (at most {MAX_LITERAL})", line,
                                     pos - line_start + 1, lines[line - 1])
            append(Token(kind, m.group(), line, pos - line_start + 1))
        pos = m.end()
    out.append(Token("eof", "", line, pos - line_start + 1))
    return out


# -- token text ----------------------------------------------------------------------
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
