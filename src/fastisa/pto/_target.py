"""``pto.target(name)``: select the PTO target for a block and restore it after."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from . import _tile

__all__ = ["target"]


@contextlib.contextmanager
def target(name: str) -> Iterator[str]:
    """``with pto.target("A5"):`` -- :func:`set_target` for the block only.

    The target's rules (TRECIP same-memory rule, TROWEXPANDEXPDIF tmp rule, on-chip
    buffer sizes) apply inside the block; on exit, normal or by an exception, the previous
    target and its TASSIGN buffer state come back.  Yields the canonical name (``"A2A3"``
    or ``"A5"``).  Raises ``ConstraintError`` for an unknown name (nothing changes then).
    """
    prev, prev_pools = _tile._State.target, _tile._State.pools
    _tile.set_target(name)
    try:
        yield _tile._State.target
    finally:
        _tile._State.target, _tile._State.pools = prev, prev_pools
