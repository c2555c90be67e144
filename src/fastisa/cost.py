"""Engine-cycle accounting shared by the front-ends.

Instructions call :func:`record` with their engine, name and estimated cycles (the
spec's formulas, e.g. ``4*n + k`` GpSimd cycles for NKI topk).  Costs land in every
:class:`Profile` that is active in the current context (``with profiling() as p``);
profiles nest, so ``fastisa run --profile`` sees what ``nki.simulate`` records.
There is no process-global state: the active profiles live in a ContextVar.

Engines execute independently: each engine's events are laid end to end on its own
track, which is what the Chrome-trace / Perfetto export shows (one track per engine).
"""

from __future__ import annotations

import contextlib
import contextvars
import json
from dataclasses import dataclass, field
from typing import Iterator

__all__ = ["MIN_II", "Event", "Profile", "profiling", "record", "active_profiles"]

#: Minimum instruction initiation interval in engine cycles (NKI the NKI docs, page NKI ISA API Common Fields (github.com/aws-neuron/aws-neuron-sdk, nki/api/nki.api.shared.rst): "roughly 64").
MIN_II = 64


@dataclass(frozen=True)
class Event:
    engine: str
    instruction: str
    cycles: int
    start: int  # cycle at which the instruction starts on its engine's track


@dataclass
class Profile:
    """Per-engine cycle totals and the instruction timeline of one run."""

    events: list[Event] = field(default_factory=list)
    _clock: dict[str, int] = field(default_factory=dict, repr=False)

    def add(self, engine: str, instruction: str, cycles: int) -> None:
        cycles = int(cycles)
        start = self._clock.get(engine, 0)
        self._clock[engine] = start + cycles
        self.events.append(Event(engine, instruction, cycles, start))

    def totals(self) -> dict[str, int]:
        """Total estimated cycles per engine."""
        out: dict[str, int] = {}
        for e in self.events:
            out[e.engine] = out.get(e.engine, 0) + e.cycles
        return out

    def by_instruction(self) -> dict[tuple[str, str], tuple[int, int]]:
        """(engine, instruction) -> (count, total cycles)."""
        out: dict[tuple[str, str], tuple[int, int]] = {}
        for e in self.events:
            n, c = out.get((e.engine, e.instruction), (0, 0))
            out[(e.engine, e.instruction)] = (n + 1, c + e.cycles)
        return out

    @property
    def total(self) -> int:
        """Cycles of the busiest engine (engines run in parallel)."""
        return max(self.totals().values(), default=0)

    def summary(self) -> str:
        """A plain-text table: per-instruction, then per-engine totals."""
        lines = [f"{'engine':<8} {'instruction':<28} {'count':>7} {'cycles':>12}"]
        for (eng, ins), (n, c) in sorted(self.by_instruction().items()):
            lines.append(f"{eng:<8} {ins:<28} {n:>7} {c:>12}")
        lines.append("")
        lines.append(f"{'engine':<8} {'total cycles':>12}")
        for eng, c in sorted(self.totals().items()):
            lines.append(f"{eng:<8} {c:>12}")
        return "\n".join(lines)

    def to_chrome_trace(self) -> dict:
        """Chrome trace / Perfetto JSON: one thread (track) per engine.

        One unit throughout: every ``ts`` and ``dur`` is in engine cycles, which the trace
        format (and so the viewer's time axis) calls microseconds -- read "1 us" as "1
        cycle".  The file says so in ``otherData.time_unit`` and in the process name; no
        ``displayTimeUnit`` is set (it would relabel the axis in another unit)."""
        engines = sorted({e.engine for e in self.events})
        tid = {name: i + 1 for i, name in enumerate(engines)}
        trace = [{"ph": "M", "pid": 1, "tid": tid[n], "name": "thread_name", "args": {"name": n}}
                 for n in engines]
        trace.append({"ph": "M", "pid": 1, "name": "process_name",
                      "args": {"name": "fastisa (engine cycles: 1 us = 1 cycle)"}})
        for e in self.events:
            trace.append({"ph": "X", "pid": 1, "tid": tid[e.engine], "name": e.instruction,
                          "ts": e.start, "dur": e.cycles, "args": {"cycles": e.cycles}})
        return {"traceEvents": trace,
                "otherData": {"time_unit": "cycle (ts and dur are engine cycles; the viewer "
                                           "shows them as microseconds)"}}

    def write_chrome_trace(self, path) -> None:
        with open(path, "w") as f:
            json.dump(self.to_chrome_trace(), f)


_ACTIVE: contextvars.ContextVar[tuple[Profile, ...]] = contextvars.ContextVar(
    "fastisa_profiles", default=())


def active_profiles() -> tuple[Profile, ...]:
    return _ACTIVE.get()


#: Functions called as ``hook(engine, instruction, cycles)`` each time an instruction
#: completes (every instruction ends with :func:`record`).  The NKI front-end applies its
#: PSUM accumulation-state changes here, so a call that raises changes nothing.
RECORD_HOOKS: list = []


def record(engine: str, instruction: str, cycles: int) -> None:
    """Add one instruction's estimated cost to every active profile."""
    for p in _ACTIVE.get():
        p.add(engine, instruction, cycles)
    for h in RECORD_HOOKS:
        h(engine, instruction, cycles)


@contextlib.contextmanager
def profiling(profile: Profile | None = None) -> Iterator[Profile]:
    """Activate ``profile`` (a new one by default) for the duration of the block."""
    p = Profile() if profile is None else profile
    token = _ACTIVE.set(_ACTIVE.get() + (p,))
    try:
        yield p
    finally:
        _ACTIVE.reset(token)


from ._public import make_dir as _make_dir  # noqa: E402

__dir__ = _make_dir(globals())
