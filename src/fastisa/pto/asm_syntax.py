"""PTO-AS text: lexer, AST, parser, type checker and printer.

This module only reads and writes text; :mod:`fastisa.pto.asm` executes the AST with the
PTO Python API.  The grammar is the one the PTO assembler (PTOAS) accepts for the subset
fastisa runs (the PTO ISA docs and CPU simulator (github.com/hw-native-sys/pto-isa, docs/isa/ and include/pto/cpu/)):

.. code-block:: text

    module      ::= ("module" ["attributes" attr-dict] "{" func* "}") | func*
    func        ::= "func.func" @name "(" [arg ("," arg)*] ")" ["attributes" attr-dict]
                    "{" op* "}"
    arg         ::= %name ":" type
    op          ::= %c = "arith.constant" literal ":" scalar-type
                  | %v = "pto.make_tensor_view" %ptr "," "shape" "=" "[" %i, ... "]" ","
                         "strides" "=" "[" %i, ... "]" [attr-dict] ":" tensor-view-type
                  | %p = "pto.partition_view" %v "," "offsets" "=" "[" ... "]" ","
                         "sizes" "=" "[" ... "]" ":" tensor-view-type "->" partition-view-type
                  | %t = "pto.alloc_tile" ["addr" "=" %a] ["valid_row" "=" %r]
                         ["valid_col" "=" %c] ":" tile-buf-type
                  | "pto.set_validshape" %t "," %r "," %c ":" tile-buf-type
                  | "pto." OP "ins" "(" operand, ... ":" type, ... ")"
                         "outs" "(" %d ":" type ")" [attr-dict]            # DPS (AS level 2)
                  | %d = ["pto."] OP operand, ... [attr-dict] ":" types ["->" type]   # SSA
                  | "pto.set_flag" ... | "pto.wait_flag" ... | "pto.barrier" ...  (one line,
                         kept verbatim; execution is synchronous so they do nothing)
                  | %t2 = "pto.tassign" %t "," %addr ":" tile-type "->" tile-type
                  | %r = "arith." OP %a ["," %b] ":" T ["to" T]       # scalar ops and casts
                  | "scf.for" %i "=" %lb "to" %ub "step" %s [":" T] "{" op* ["scf.yield"] "}"
                  | "return" | "func.return"
    operand     ::= %name [attr-dict]          # e.g. %x{rmode = #pto<round_mode ROUND>}
    tile-buf-type ::= "!pto.tile_buf<" "loc" "=" LOC "," "dtype" "=" T "," "rows" "=" N ","
                         "cols" "=" N "," "v_row" "=" (N|"?") "," "v_col" "=" (N|"?")
                         ("," KEY "=" VALUE)* ">"                              # legacy form
                    | "!pto.tile_buf<" LOC "," RxCxT ("," KEY "=" VALUE)* ">"  # compact form
                    | "!pto.tile<" [LOC ","] RxCxT ("," KEY "=" VALUE)* ">"   # AS level 1
         KEY ::= valid (=RxC, "?" allowed) | blayout | slayout | fractal | pad | compact

Comments run from ``//`` to the end of the line, and from a ``#`` that is followed by a
space (``# pto.tassign ...`` in the spec's examples) to the end of the line; ``#pto<...>``
is an attribute.  Every syntax or type error raises :class:`fastisa.errors.AsmSyntaxError`
with the 1-based line and column of the offending token.
"""

from __future__ import annotations

# The implementation is split along its natural parts; this module is the public face.
from ._asm_ast import (  # noqa: F401
    BLAYOUTS, ELEMENT_TYPES, LOCS, PAD_NAMES, SCALAR_TYPES, SLAYOUTS,
    AllocTileOp, ArithOp, ConstantOp, DpsOp, ForOp, FuncOp, InOperand, MakeTensorViewOp,
    Module, PartitionViewOp, PtrType, ReturnOp, ScalarType, SetValidShapeOp, SsaOp, SyncOp,
    TAssignOp, TileBufType, Value, ViewType, same_type,
)
from ._asm_lexer import Token, tokenize  # noqa: F401
from ._asm_ops import ARITH_BINARY, ARITH_CAST, INSTRUCTIONS  # noqa: F401
from ._asm_parser import parse  # noqa: F401
from ._asm_printer import format_module, format_op, format_type  # noqa: F401

__all__ = [
    "Token", "tokenize",
    "ScalarType", "PtrType", "ViewType", "TileBufType",
    "Value", "InOperand", "ConstantOp", "MakeTensorViewOp", "PartitionViewOp", "AllocTileOp",
    "SetValidShapeOp", "DpsOp", "SsaOp", "SyncOp", "TAssignOp", "ArithOp", "ForOp", "ReturnOp",
    "FuncOp", "Module",
    "INSTRUCTIONS", "parse", "format_module", "format_type",
]
