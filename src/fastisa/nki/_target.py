"""``nki.target(name)``: the NeuronCore generation for a block, restored after."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from . import language as _nl

__all__ = ["target"]


@contextlib.contextmanager
def target(name: str) -> Iterator[str]:
    """``with nki.target("trn3"):`` -- every ``nki.simulate(kernel)`` run inside the block
    without its own ``target=`` simulates ``name`` (``"trn1"``, ``"trn2"``, ``"trn3"`` or
    ``gen2``/``gen3``/``gen4``), and so do ``nl`` allocations made directly in the block
    (fresh SBUF/PSUM accounting, as ``nl.use_target``).  ``target=`` given to
    ``nki.simulate`` still wins.  On exit the previous default comes back.  Yields the
    target's name.  Raises ``ConstraintError`` for an unknown name.
    """
    tg = _nl._lookup_target(name)
    token = _nl._TARGET_OVERRIDE.set(tg)
    try:
        with _nl._instance(tg):
            yield tg.name
    finally:
        _nl._TARGET_OVERRIDE.reset(token)
