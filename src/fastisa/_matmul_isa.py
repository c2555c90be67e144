"""The matmul kernels' instruction-set names, shared by the front-ends (NKI nc_matmul,
PTO TMATMUL): ``"auto"`` (the best the CPU has, the default), ``"avx512"``, ``"avx2"``,
``"scalar"`` (the portable build), as the levels of ``csrc/fastisa/cpu.h``; and the
``FASTISA_MATMUL_ISA`` environment variable that forces one at import.  Every level gives
the same bits; tests force each one."""

from __future__ import annotations

import os

#: name -> level of cpu.h (FI_MM_ISA_AUTO, FI_MM_ISA_SCALAR, ...)
LEVELS = {"auto": -1, "scalar": 0, "avx2": 1, "avx512": 2}


def set_level(setter, name: str, bad) -> str:
    """Force level ``name`` through the kernel module's ``setter`` (which lowers it to what
    the CPU has and returns the level in use); the name of the level now in use.  An
    unknown name raises ``bad(name)`` (the front-end's own error)."""
    if name not in LEVELS:
        raise bad(name)
    got = setter(LEVELS[name])
    return next(n for n, v in LEVELS.items() if v == got)


def from_env() -> str | None:
    """``FASTISA_MATMUL_ISA`` (stripped, lower case), or None when unset or empty."""
    env = os.environ.get("FASTISA_MATMUL_ISA", "").strip().lower()
    return env or None
