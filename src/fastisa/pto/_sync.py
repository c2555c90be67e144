"""PTO synchronisation between pipes, for the engine schedule (:mod:`fastisa.schedule`).

Functionally every PTO instruction completes before the next one starts in fastisa, so
these change no data; they order the estimated timeline the way the hardware's event
flags and barriers order its pipes (pto-isa ``docs/isa`` synchronisation: ``set_flag`` /
``wait_flag`` between a source and a destination pipe with an event id, ``pipe_barrier``).
"""

from __future__ import annotations

from .. import cost
from ..errors import ConstraintError

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .._types import EnumLike, Int

__all__ = ["PIPES", "set_flag", "wait_flag", "pipe_barrier", "apply_sync_text"]

#: PTO / Ascend pipe names -> the schedule's engine tracks.
PIPES = {"PIPE_MTE1": "MTE1", "PIPE_MTE2": "MTE2", "PIPE_MTE3": "MTE3", "PIPE_V": "Vector",
         "PIPE_M": "Cube", "PIPE_S": "Scalar", "PIPE_FIX": "FIXPIPE"}


def _pipe(instr: str, param: str, p) -> str:
    name = getattr(p, "name", p)
    if name not in PIPES:
        raise ConstraintError(f"{instr}: {param} must be one of {', '.join(PIPES)}, got {p!r}")
    return PIPES[name]


def set_flag(src: EnumLike, dst: EnumLike, event_id: Int = 0) -> None:
    """Pipe ``src`` raises event ``event_id`` for pipe ``dst`` once all it issued has finished."""
    cost.set_flag(_pipe("set_flag", "src", src), _pipe("set_flag", "dst", dst), event_id,
                  domain="pto")


def wait_flag(src: EnumLike, dst: EnumLike, event_id: Int = 0) -> None:
    """Pipe ``dst`` waits for the oldest pending event ``event_id`` from pipe ``src``."""
    cost.wait_flag(_pipe("wait_flag", "src", src), _pipe("wait_flag", "dst", dst), event_id,
                   domain="pto")


def pipe_barrier(pipe: EnumLike = "PIPE_ALL") -> None:
    """``PIPE_ALL``: every pipe waits for all pipes; a single pipe: a no-op for the schedule
    (a pipe already issues in order)."""
    if getattr(pipe, "name", pipe) == "PIPE_ALL":
        cost.barrier(domain="pto")
    else:
        _pipe("pipe_barrier", "pipe", pipe)


def apply_sync_text(name: str, text: str) -> None:
    """Apply a PTO-AS synchronisation op (``pto.set_flag ["PIPE_MTE2", "PIPE_V",
    "EVENT_ID0"]``, ``pto.wait_flag [...]``, ``pto.barrier [...]``) to the schedule; other
    synchronisation ops (events, fences) do not constrain it."""
    if not cost.active_profiles():
        return
    words = [w.strip(' "[]()') for w in text.replace(",", " ").split()]
    words = [w for w in words if w]
    pipes = [w for w in words if w.startswith("PIPE_")]
    if name in ("set_flag", "wait_flag") and len(pipes) >= 2 and all(p in PIPES for p in pipes[:2]):
        ev = next((w for w in words if w.startswith("EVENT_ID")), "EVENT_ID0")
        (set_flag if name == "set_flag" else wait_flag)(pipes[0], pipes[1], ev)
    elif name in ("barrier", "pipe_barrier") and (not pipes or pipes[0] == "PIPE_ALL"):
        cost.barrier(domain="pto")
