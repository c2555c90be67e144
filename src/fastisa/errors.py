"""Exception classes raised by fastisa (see DESIGN.md "Errors").

Every class derives from :class:`FastisaError` and from the built-in exception a
Python user would catch, so ``except ValueError`` keeps working.  Messages name the
instruction, the parameter, the rule and the value given, e.g.
``vec_adds: repeat_times must be in [0, 255], got 300``.
"""

from __future__ import annotations

__all__ = [
    "FastisaError",
    "ConstraintError",
    "AccessError",
    "OverlapError",
    "AlignmentError",
    "AsmSyntaxError",
    "UndefinedBehaviorWarning",
    "constraint",
]


class FastisaError(Exception):
    """Base class of every error fastisa raises on purpose."""


class ConstraintError(FastisaError, ValueError):
    """An instruction's documented constraint is violated (range, dtype, shape, ...)."""


class AccessError(FastisaError, IndexError):
    """An access would fall outside a tensor, tile or on-chip buffer."""


class OverlapError(FastisaError, ValueError):
    """The spec's address-overlap rules are broken."""


class AlignmentError(FastisaError, ValueError):
    """A 32-byte (or other documented) alignment rule is broken."""


class UndefinedBehaviorWarning(RuntimeWarning):
    """A program does something the vendor documents as undefined on the hardware; fastisa
    computes the natural result and says so (e.g. nc_matmul accumulating onto PSUM that a
    non-matmul instruction initialised, on NeuronCore-v2/v3)."""


class AsmSyntaxError(FastisaError, SyntaxError):
    """A PTO-AS text program has a syntax or type error at ``line``:``column`` (1-based)."""

    def __init__(self, message: str, line: int = 0, column: int = 0, source_line: str = ""):
        self.line = line
        self.column = column
        self.source_line = source_line
        where = f"line {line}, column {column}: " if line else ""
        super().__init__(where + message)

    def __str__(self) -> str:  # SyntaxError.__str__ would print "(<unknown>, line N)"
        return self.args[0] if self.args else ""


def constraint(instruction: str, parameter: str, rule: str, value) -> ConstraintError:
    """Build the uniform message ``<instruction>: <parameter> <rule>, got <value>``."""
    return ConstraintError(f"{instruction}: {parameter} {rule}, got {value!r}")
