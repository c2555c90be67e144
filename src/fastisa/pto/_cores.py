"""Simulated PTO ranks and cores: ``launch`` runs one function per rank (or per AIC/AIV core)
in turn-taking threads (:mod:`fastisa._turns`), so a TWAIT, a TPOP from an empty pipe or a
TPUSH into a full one lets the other ranks/cores run until what it waits for happens.

Deterministic: ranks run in index order, each until it finishes or waits; a wait nobody can
end raises :class:`~fastisa.errors.ConstraintError` ("deadlock") naming who waits where.
Outside ``launch`` there is one rank and one core: a wait whose condition does not hold at
once can never end and raises the same error.  (pto-isa's CPU simulator runs ranks and
cores as ``std::thread``s and detects a deadlock by a spin limit, include/pto/cpu/comm/
TWait.hpp; fastisa takes turns instead, so results never depend on the host's timing.)
"""

from __future__ import annotations

import contextvars
from typing import Callable, Sequence

from .._turns import Turns
from ..errors import ConstraintError

__all__ = ["launch", "ScopedExecutionContext", "get_rank", "get_rank_size", "get_block_idx", "get_subblock_idx",
           "get_subblock_num"]


class _Cores(Turns):
    noun = "rank"

    def __init__(self, n, names, noun, roles):
        super().__init__(n, names)
        self.noun = noun
        self.roles = roles            # per index: (block, subblock, subblock_num) or None


_CURRENT: contextvars.ContextVar = contextvars.ContextVar("fastisa_pto_core",
                                                          default=(None, 0))


def launch(n: int | Sequence[Callable], body: Callable | None = None, *, subblocks: int = 0):
    """Run ``body(i)`` for ``i`` in ``range(n)`` as ``n`` simulated ranks; returns their
    results in rank order.  Or ``launch([f0, f1, ...])``: one function per core, called with
    no argument (a mixed kernel: the cube function first, then the vector ones).
    ``subblocks`` (0, 1 or 2): the cores after the first are vector subblocks
    ``0..subblocks-1`` (``get_subblock_idx()``), the first is the cube core.

    Raises ConstraintError for n < 1 (or an empty list) and for a deadlock; re-raises the
    first exception a rank raised."""
    if body is None:
        fns = list(n)
        if not fns or not all(callable(f) for f in fns):
            raise ConstraintError("launch: expected a non-empty list of functions, got "
                                  f"{n!r}")
        count = len(fns)

        def body(i):                   # noqa: F811
            return fns[i]()
    else:
        if not isinstance(n, int) or isinstance(n, bool) or n < 1:
            raise ConstraintError(f"launch: n must be an int >= 1, got {n!r}")
        count = n
    if subblocks not in (0, 1, 2):
        raise ConstraintError(f"launch: subblocks must be 0, 1 or 2, got {subblocks!r}")
    if subblocks:
        if count != subblocks + 1:
            raise ConstraintError(f"launch: with subblocks={subblocks} there must be "
                                  f"{subblocks + 1} cores (one cube, {subblocks} vector), "
                                  f"got {count}")
        names = ["AIC"] + [f"AIV{k}" for k in range(subblocks)]
        roles = [(0, 0, subblocks)] + [(0, k, subblocks) for k in range(subblocks)]
        noun = "core"
    else:
        names, roles, noun = [str(i) for i in range(count)], [None] * count, "rank"
    return _run(count, body, names, noun, roles)


def _run(count, body, names, noun, roles):
    sched = _Cores(count, names, noun, roles)

    def run(i):
        _CURRENT.set((sched, i))
        return body(i)
    return sched.run(run)


def run_cores(fns, roles, names):
    """(For the PTO-AS runner.)  Run ``fns`` as cores with explicit ``roles`` (block,
    subblock, subblock_num) and ``names``; returns their results."""
    return _run(len(fns), lambda i: fns[i](), list(names), "core", list(roles))


def current():
    """(scheduler, index) of the running rank/core, or (None, 0) outside ``launch``."""
    return _CURRENT.get()


def wait_until(pred, what: str, instr: str) -> None:
    """Block the running rank/core until ``pred()`` holds (the others run meanwhile)."""
    sched, me = current()
    if sched is None:
        if not pred():
            raise ConstraintError(f"{instr}: waits for {what}, which can never happen: no "
                                  f"other rank or core runs (outside pto.launch) (deadlock)")
        return
    with sched.cond:
        sched.block(me, pred, what, instr)


def notify() -> None:
    """The running rank/core changed memory others may wait on: a waiter whose wait is now
    over runs at once (:meth:`fastisa._turns.Turns.wake`)."""
    sched, me = current()
    if sched is not None:
        with sched.cond:
            sched.wake(me)


def get_rank() -> int:
    """The running rank's index (0 outside ``launch``)."""
    return current()[1]


def get_rank_size() -> int:
    """The number of ranks of the running launch (1 outside ``launch``)."""
    sched = current()[0]
    return 1 if sched is None else sched.n


_ROLE: contextvars.ContextVar = contextvars.ContextVar("fastisa_pto_role", default=None)


class ScopedExecutionContext:
    """``with ScopedExecutionContext(block, subblock, subblock_num):`` -- the running code
    acts as vector subblock ``subblock`` of ``subblock_num`` (``subblock_num = 1``: the cube
    core or a lone vector core), as pto-isa's ``cpu_sim::ScopedExecutionContext`` does; for
    driving one side of a pipe after the other from one thread."""

    def __init__(self, block: int = 0, subblock: int = 0, subblock_num: int = 1) -> None:
        if subblock_num not in (1, 2) or not 0 <= subblock < subblock_num:
            raise ConstraintError(f"ScopedExecutionContext: need subblock_num in (1, 2) and 0 "
                                  f"<= subblock < subblock_num, got {subblock}, {subblock_num}")
        self.role = (int(block), int(subblock), int(subblock_num))

    def __enter__(self):
        self._token = _ROLE.set(self.role)
        return self

    def __exit__(self, *exc):
        _ROLE.reset(self._token)
        return False


def _role():
    r = _ROLE.get()
    if r is not None:
        return r
    sched, me = current()
    if sched is None or sched.roles[me] is None:
        return None
    return sched.roles[me]


def get_block_idx() -> int:
    """The AI-core block index (0: fastisa simulates one block, unless a
    ScopedExecutionContext says otherwise)."""
    r = _role()
    return 0 if r is None else r[0]


def get_subblock_idx() -> int:
    """The vector subblock index of the running core (0 for the cube core and outside a
    ``launch(..., subblocks=...)``)."""
    r = _role()
    return 0 if r is None else r[1]


def get_subblock_num() -> int:
    """The number of vector subblocks of the running mixed launch (1 outside one)."""
    r = _role()
    return 1 if r is None else max(1, r[2])


def is_cube() -> bool:
    sched, me = current()
    return sched is not None and sched.roles[me] is not None and me == 0
