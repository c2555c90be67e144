"""``te.platform.cce_intrin`` (``get_bit_len``) and ``te.platform.cce_build``.

``get_bit_len(dtype)`` is the bit width of a dtype name ("float16" -> 16, "int8" -> 8,
"bool" -> 8), as the operators use it to count elements per 32-byte block.
``build_config``/``cce_build_code`` belong to TVM builds and raise NotImplementedError.
"""
from __future__ import annotations

import re

from ._notik import NoTik

__all__ = ["get_bit_len", "build_config", "cce_build_code"]


def get_bit_len(dtype) -> int:
    """Bits of ``dtype`` (the number in its name; "bool" is 8).  Raises ConstraintError
    for a name without a width."""
    s = str(dtype).lower()
    if s == "bool":
        return 8
    m = re.search(r"(\d+)$", s)
    if not m:
        from ...errors import ConstraintError
        raise ConstraintError(f"get_bit_len: dtype {dtype!r} has no bit width")
    return int(m.group(1))


build_config = NoTik("te.platform.cce_build.build_config")
cce_build_code = NoTik("te.platform.cce_build.cce_build_code")


#: ``te.platform.insn_cmd``: the emit_insn command names (used in TVM schedules only)
DMA_COPY = "dma_copy"
DMA_PADDING = "dma_padding"
PHONY_INSN = "phony_insn"

#: ``te.platform.cce_intrin_md`` / ``cce_runtime`` helpers: TVM IR builders
reset_mask_insn = NoTik("te.platform.cce_intrin_md.reset_mask_insn")


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return NoTik(f"te.platform.{name}", "it belongs to the TVM build")
