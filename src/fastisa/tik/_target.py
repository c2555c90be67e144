"""``tik.target(name)``: select a chip for a block and restore the previous one after."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from . import platform as _platform

__all__ = ["target"]


@contextlib.contextmanager
def target(name: str | _platform.Target, *, ub_size: int | None = None,
           l1_size: int | None = None) -> Iterator[_platform.Target]:
    """``with tik.target("Ascend910B"):`` -- :func:`set_target` for the block only.

    Every ``Tik()`` created inside the block simulates ``name`` (and ``te_set_version`` /
    ``set_current_compile_soc_info`` calls inside it are undone too); on exit, normal or by
    an exception, the target in force before is restored.  Yields the selected
    ``Target``.  Raises ``ConstraintError`` for an unknown name (nothing changes then).
    """
    prev = _platform._current
    tg = _platform.set_target(name, ub_size=ub_size, l1_size=l1_size)
    try:
        yield tg
    finally:
        _platform._current = prev
