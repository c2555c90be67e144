"""Per-signature plan caches (issue 15): validate an instruction's operands once per form.

An instruction's documented checks depend on its operands' *form* -- shapes, strides,
dtypes, buffers, options -- and, for a few, on *values* (runtime offsets, registers,
scalar operands, where the operands are in memory).  A kernel issues the same form
thousands of times, so the front-ends keep, per instruction, a cache from the form (the
*signature*) to a *plan*: what the checks derived (kernel arguments, cycle estimate).  The
first call with a new signature runs every documented check (the full path) and, when it
succeeds, stores the plan; later calls with that signature run the plan, which still runs
every value-dependent check (an overlap between a source and the destination, a scalar
outside the destination's range, ...) and falls back to the full path whenever one of
them needs the full path's handling.  Results, errors and cost records are the same with
or without the cache (``tests/test_plans.py`` runs both and compares bits and messages).

Switches:

* ``FASTISA_PLAN_CACHE=0`` in the environment turns every cache off for the process;
* :func:`set_enabled` turns them on or off (and empties them);
* ``with disabled(): ...`` runs a block on the full path only; ``with enabled_as(True):``
  runs one with the caches on even when the environment turned them off.

Each cache holds at most :data:`MAX_ENTRIES` signatures and is emptied when it is full.
"""

from __future__ import annotations

import contextlib
import os

__all__ = ["enabled", "set_enabled", "disabled", "enabled_as", "clear", "register",
           "MAX_ENTRIES"]

#: One flag shared by every front-end (a list, so hot paths read ``ON[0]``).
ON = [os.environ.get("FASTISA_PLAN_CACHE", "1").strip().lower() not in ("0", "false", "no",
                                                                          "off")]
MAX_ENTRIES = 4096
_CACHES: list[dict] = []


def register(cache: dict) -> dict:
    """Add a front-end's cache to the set :func:`clear` empties; returns it."""
    _CACHES.append(cache)
    return cache


def enabled() -> bool:
    """Whether instructions reuse plans of signatures they have validated."""
    return ON[0]


def set_enabled(flag: bool) -> None:
    """Turn the plan caches on or off; either way they are emptied."""
    ON[0] = bool(flag)
    clear()


def clear() -> None:
    """Forget every plan (the next call of each signature runs every check again)."""
    for c in _CACHES:
        c.clear()


@contextlib.contextmanager
def enabled_as(flag: bool):
    """Run the block with the plan caches on (``flag`` true) or off, whatever the
    environment says; the caches keep their plans."""
    prev = ON[0]
    ON[0] = bool(flag)
    try:
        yield
    finally:
        ON[0] = prev


def disabled():
    """Run the block with the plan caches off (the full path for every call)."""
    return enabled_as(False)


def store(cache: dict, key, plan) -> None:
    """``cache[key] = plan``, emptying the cache first when it is full."""
    if len(cache) >= MAX_ENTRIES:
        cache.clear()
    cache[key] = plan
