"""TPRINT: print a tile's valid region (pto-isa docs/isa/TPRINT.md; the text format is the
CPU simulator's, include/pto/cpu/TPrint.hpp, hw-native-sys/pto-isa).

``TPRINT(src[, tmp], format=PrintFormat.Width8_Precision4)`` writes to ``sys.stdout``::

    TPRINT <validRow>x<validCol>
    <row 0: the valid columns, separated by one space>
    ...

Each value is right-aligned in ``width`` characters; floating-point values (float32,
float16, bfloat16) in fixed notation with ``precision`` digits, integers in decimal (int8
and uint8 as numbers, not characters).  ``format``: ``Width8_Precision4`` (8, 4),
``Width8_Precision2`` (8, 2), ``Width10_Precision6`` (10, 6).  The CPU simulator streams
``half``/``bfloat16`` values through ``operator<<`` without the width; fastisa prints them
like float32 (the docs say TPRINT supports ``half`` and give no separate format).  ``tmp``
(the GlobalTensor scratch of the A5 device path) is accepted and unused, as on the CPU
simulator.  A GlobalTensor ``src`` prints its 2-D view the same way (``TPRINT RxC``).
Printing changes no data.
"""

from __future__ import annotations

import enum
import sys

import numpy as np

from ..errors import ConstraintError
from ._tile import GlobalTensor, Tile

__all__ = ["PrintFormat", "TPRINT"]


class PrintFormat(enum.IntEnum):
    """pto's ``PrintFormat`` (include/pto/common/type.hpp)."""

    Width8_Precision4 = 0
    Width8_Precision2 = 1
    Width10_Precision6 = 2


_WIDTH_PRECISION = {PrintFormat.Width8_Precision4: (8, 4),
                    PrintFormat.Width8_Precision2: (8, 2),
                    PrintFormat.Width10_Precision6: (10, 6)}


def _text(values: np.ndarray, width: int, precision: int) -> str:
    if values.dtype.kind == "f" or values.dtype.name == "bfloat16":
        cells = [f"{v:{width}.{precision}f}" for v in values.astype(np.float64).ravel()]
    else:
        cells = [f"{int(v):{width}d}" for v in values.ravel()]
    return " ".join(cells)


def TPRINT(src: Tile | GlobalTensor, tmp: Tile | None = None,  # noqa: N802,A002
           format: PrintFormat | int = PrintFormat.Width8_Precision4) -> None:
    """Print ``src``'s valid region (a Tile) or 2-D view (a GlobalTensor) to stdout in the
    CPU simulator's format (module doc).  Raises ConstraintError for another ``src`` or
    ``format``."""
    try:
        width, precision = _WIDTH_PRECISION[PrintFormat(format)]
    except (ValueError, KeyError):
        raise ConstraintError(f"TPRINT: format must be a PrintFormat, got {format!r}") from None
    if isinstance(src, Tile):
        data = src.valid
    elif isinstance(src, GlobalTensor):
        data = src.view2d()
    else:
        raise ConstraintError(f"TPRINT: src must be a Tile or a GlobalTensor, got "
                              f"{type(src).__name__}")
    rows, cols = data.shape
    out = [f"TPRINT {rows}x{cols}"]
    out += [_text(data[r], width, precision) for r in range(rows)]
    sys.stdout.write("\n".join(out) + "\n")
