"""PTO-AS: run PTO assembly text (``.pto`` files) on fastisa.

``parse(text)`` reads a program into an AST (:mod:`fastisa.pto.asm_syntax`),
``format(module)`` prints it back, and ``run(text, inputs)`` executes it with the PTO
Python API (:mod:`fastisa.pto`), so every instruction in a text program does exactly what
the same call in Python does, bit for bit (the PTO ISA docs and CPU simulator (github.com/hw-native-sys/pto-isa, docs/isa/ and include/pto/cpu/); the PTO ISA docs, pages TRECIP and TROWEXPANDEXPDIF (github.com/hw-native-sys/pto-isa, docs/isa/),
"Assembly Syntax").

What a program may contain
--------------------------
* an optional ``module [attributes {pto.target_arch = "a5"}] { ... }`` wrapper (the
  target, ``a5`` or ``a2a3``/``a3``, is set for the run and restored afterwards);
* ``func.func @name(%arg0: !pto.ptr<f32>, %arg1: f32, ...) { ... }`` whose arguments are
  global-memory pointers or scalars (``f32``, ``f16``, ``bf16``, ``i32``, ``i16``, ``i8``,
  ``index``, ...);
* ``arith.constant``, ``pto.make_tensor_view``, ``pto.partition_view``, ``pto.alloc_tile``
  (with ``addr = %a`` -> ``TASSIGN`` and ``valid_row/valid_col = %v`` for ``?`` extents),
  ``pto.set_validshape``, ``pto.tload``, ``pto.tstore``;
* every instruction of :data:`fastisa.pto.asm_syntax.INSTRUCTIONS` in the DPS form
  ``pto.<op> ins(%a, ... : types) outs(%d : type) [{attrs}]`` or the SSA form
  ``%d = pto.<op> %a, ... : types -> type`` (the result tile is created from the result
  type); ``pto.tcvt`` takes ``{rmode = #pto<round_mode NAME>}`` on its operand or after
  ``outs``; ``pto.trecip`` takes ``{precision = #pto<recip_precision HIGH_PRECISION>}``
  (any attribute named ``precision``/``recip_precision`` whose value says
  ``high_precision``, or a unit attribute ``high_precision``);
* ``scf.for %i = %lb to %ub step %s { ... }`` (no ``iter_args``: tile instructions write
  their ``outs`` in place), scalar ``arith`` ops (integers wrap to their width, ``index`` is
  unbounded; floats are rounded once to their type) and casts, and
  ``%t2 = pto.tassign %t, %addr : !T -> !T`` (TASSIGN; ``%t2`` is ``%t``);
* synchronisation ops (``pto.set_flag``, ``pto.wait_flag``, ``pto.barrier``, ...) are
  accepted and do nothing: execution is synchronous, as on the reference CPU simulator.

Not supported (AsmSyntaxError): ``scf.if``, ``iter_args``/``scf.yield`` with values,
``func.call``, ``pto.subset``, the micro-instruction level (``pto.vecscope``, ``pto.vlds``).

Inputs and outputs of :func:`run`
---------------------------------
``inputs`` maps argument names (without ``%``) to numpy arrays (pointer arguments) or
numbers (scalar arguments).  A pointer argument's array must have the pointer's element
type (``!pto.ptr<bf16>`` needs an ``ml_dtypes.bfloat16`` array; no silent conversion; a
raw-bytes array of the same item size, as ``np.load`` returns for a saved bfloat16 array,
is taken bit for bit); the pointer addresses the array's elements in C order, as global
memory.  Inputs are copied,
never modified.  A pointer argument missing from ``inputs`` is an output-only buffer: it is
allocated zero-filled, just large enough for every tensor view made over it; a ``pto.tload``
from it before any ``pto.tstore`` reads those zeros and emits a RuntimeWarning (usually a
forgotten input).

``run`` returns ``{name: array}`` for every pointer argument that a ``pto.tstore`` wrote,
in argument order: the whole buffer after the run, with the input array's shape (or, for an
allocated buffer, the shape of its tensor view when there is exactly one dense view, else
1-D).

Errors
------
Syntax and type errors raise :class:`fastisa.errors.AsmSyntaxError` with the 1-based line
and column.  Errors found while running (an instruction's legality rules, out-of-bounds
views, bad inputs) keep their class (ConstraintError, AccessError, ...) and their message
is prefixed with ``line N, column C (pto.op):``; the original is chained as ``__cause__``
and the position is in the ``line``/``column`` attributes.
"""

from __future__ import annotations

from ..errors import constraint
from . import asm_syntax as syn
from ._asm_ast import Module
from ._asm_runner import run

__all__ = ["parse", "format", "run", "format_error", "Module", "INSTRUCTIONS"]

INSTRUCTIONS = syn.INSTRUCTIONS


def parse(text: str, *, arch: str | None = None, level: str | None = None) -> Module:
    """Parse and type-check PTO-AS ``text`` into a :class:`Module`.

    Raises AsmSyntaxError (with ``line``, ``column``, ``source_line``) on the first syntax
    or type error: unknown tokens/ops/types, wrong operand counts, undefined or redefined
    ``%values``, a value used with a type other than the one it was defined with, tiles
    where scalars belong and vice versa; and when the program breaks one of PTOAS's verifier
    rules (:mod:`fastisa.pto._asm_verify`).  ``arch`` (``"a3"``/``"a5"``) and ``level``
    (``"level3"``) are PTOAS's ``--pto-arch``/``--pto-level``; by default the module's
    ``pto.target_arch`` attribute, else ``a3``, as PTOAS.  ``text`` that is not a str is a
    ConstraintError.
    """
    if not isinstance(text, str):
        raise constraint("asm.parse", "text", "must be a str of PTO-AS source",
                         type(text).__name__)
    return syn.parse(text, arch=arch, level=level)


def format(module: Module) -> str:  # noqa: A001 - the documented name
    """PTO-AS text for ``module``; ``parse(format(m)) == m`` for every parsed ``m``."""
    return syn.format_module(module)


def format_error(exc, filename: str = "<pto>") -> str:
    """A compiler-style report of an error raised by :func:`parse` or :func:`run`::

        kernel.pto:12:5: error: use of undefined value %v
            pto.texp ins(%t : !T) outs(%v : !T)
                                       ^
    Errors without a position (e.g. bad inputs) give ``filename: error: message``.
    """
    line = getattr(exc, "line", 0) or 0
    col = getattr(exc, "column", 0) or 0
    msg = str(exc)
    prefix = f"line {line}, column {col}"
    if msg.startswith(prefix):
        msg = msg[len(prefix):].lstrip(" :")
    if not line:
        return f"{filename}: error: {msg}"
    out = f"{filename}:{line}:{col}: error: {msg}"
    src = getattr(exc, "source_line", "")
    if src:
        out += "\n    " + src + "\n    " + " " * max(col - 1, 0) + "^"
    return out
