"""Engine-cycle accounting shared by the front-ends.

Instructions call :func:`record` with their engine, name and estimated cycles (the
spec's formulas, e.g. ``4*n + k`` GpSimd cycles for NKI topk).  Costs land in every
:class:`Profile` that is active in the current context (``with profiling() as p``);
profiles nest, so ``fastisa run --profile`` sees what ``nki.simulate`` records.
There is no process-global state: the active profiles live in a ContextVar.

Each profile also builds a dependency-aware schedule as instructions run
(:mod:`fastisa.schedule`): engines issue in program order, an instruction waits for the
instructions whose outputs it reads (or whose inputs it overwrites), explicit
synchronisation is honoured.  :meth:`Profile.latency`, :meth:`Profile.utilization`,
:meth:`Profile.critical_path` and :meth:`Profile.verdict` read it; the Chrome-trace /
Perfetto export shows it (one track per engine and queue, flow arrows for dependencies).
These are model estimates, not measurements.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import sys
from dataclasses import dataclass
from typing import Iterator

from . import schedule as _sched
from .schedule import Schedule

__all__ = ["MIN_II", "Event", "Latency", "Profile", "profiling", "record", "active_profiles",
           "barrier", "set_flag", "wait_flag", "transfer_ns", "idle_when", "record_idle"]

#: Minimum instruction initiation interval in engine cycles (NKI the NKI docs, page NKI ISA API Common Fields (github.com/aws-neuron/aws-neuron-sdk, nki/api/nki.api.shared.rst): "roughly 64").
MIN_II = 64


@dataclass(frozen=True)
class Event:
    engine: str
    instruction: str
    cycles: int
    start: int  # cycle at which the instruction starts on its engine's own track (legacy)


class Profile:
    """Per-engine cycle totals, the instruction list and the dependency-aware schedule of
    one run (:attr:`schedule`, see :mod:`fastisa.schedule` for the model).

    Recording is lazy (issue 15): :meth:`add` and the synchronisation calls append one
    compact tuple (the operands' byte ranges and the source line are taken when the
    instruction runs); :attr:`events` and :attr:`schedule` are built from those, in
    order, the first time they are read after new records -- the same events and the same
    schedule as building them as instructions run."""

    __slots__ = ("_events", "_clock", "_schedule", "_pending")

    def __init__(self, events: list[Event] | None = None, schedule: Schedule | None = None):
        self._events: list[Event] = [] if events is None else events
        self._clock: dict[str, int] = {}
        self._schedule = Schedule() if schedule is None else schedule
        self._pending: list = []

    def __repr__(self) -> str:
        return f"Profile(events={self.events!r}, schedule={self.schedule!r})"

    @property
    def events(self) -> list[Event]:
        """Every recorded instruction, in program order."""
        if self._pending:
            self._flush()
        return self._events

    @property
    def schedule(self) -> Schedule:
        """The dependency-aware schedule of every recorded instruction."""
        if self._pending:
            self._flush()
        return self._schedule

    def add(self, engine: str, instruction: str, cycles: int, *, domain: str = "",
            dur_ns: float | None = None, reads=(), writes=(), source: str = "",
            busy_ns: float | None = None, shared: str | None = None,
            queue: str | None = None) -> None:
        """Record one instruction (``reads`` / ``writes``: byte ranges as
        :func:`fastisa.schedule._spans` gives them)."""
        self._pending.append((engine, instruction, int(cycles), domain, dur_ns, reads, writes,
                              source, busy_ns, shared, queue))

    def _sync(self, *op) -> None:
        """Queue a synchronisation (``("barrier", domain, engines)``, ``("set_flag", ...)``,
        ``("wait_flag", ...)``) behind the instructions recorded so far."""
        self._pending.append(op)

    def _flush(self) -> None:
        pending, self._pending = self._pending, []
        sch, clock, events = self._schedule, self._clock, self._events
        for ent in pending:
            if len(ent) != 11:
                getattr(sch, ent[0])(*ent[1:])
                continue
            engine, instruction, cycles, domain, dur_ns, reads, writes, source, busy, shared, \
                queue = ent
            start = clock.get(engine, 0)
            clock[engine] = start + cycles
            events.append(Event(engine, instruction, cycles, start))
            if dur_ns is None:
                dur_ns = cycles / _sched.clock_ghz(domain, engine)
            sch.add(domain, queue or engine, instruction, cycles, dur_ns, reads, writes,
                    source, busy, shared)

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

    # -- the schedule -----------------------------------------------------------------
    def latency(self) -> Latency:
        """The estimated kernel time: ns, and cycles of each engine's clock."""
        ns = self.schedule.latency_ns
        clocks = {}
        for s in self.schedule.slots:
            if s.domain == "nki" and _sched.is_memory_engine(s.engine):
                continue  # DMA queues have no published clock: their time is in ns only
            clocks[self.schedule.track(s)] = _sched.clock_ghz(s.domain, s.engine)
        return Latency(ns, {k: int(round(ns * ghz)) for k, ghz in sorted(clocks.items())})

    def utilization(self) -> dict[str, float]:
        """Busy time of each engine / queue over the estimated kernel time."""
        lat = self.schedule.latency_ns
        return {k: (v / lat if lat else 0.0) for k, v in sorted(self.schedule.busy_ns().items())}

    def critical_path(self) -> list:
        """The instructions (:class:`fastisa.schedule.Slot`, with source lines) that fix the
        kernel's end, first to last."""
        return self.schedule.critical_path()

    def verdict(self) -> str:
        """One line: compute-bound on engine X / memory-bound / latency-bound."""
        return self.schedule.verdict()

    def report(self, path_items: int = 8) -> str:
        """The timeline report ``fastisa run --profile`` prints."""
        lat = self.latency()
        lines = [f"estimated latency: {lat.ns:,.0f} ns ("
                 + ", ".join(f"{c:,} {e} cycles" for e, c in lat.cycles.items()) + ")"]
        busy = self.schedule.busy_ns()
        util = self.utilization()
        lines.append(f"{'engine':<12} {'busy ns':>14} {'utilisation':>12}")
        for k in sorted(busy):
            lines.append(f"{k:<12} {busy[k]:>14,.0f} {util[k]:>11.0%}")
        path = self.critical_path()
        lines.append(f"critical path ({len(path)} instruction{'s' if len(path) != 1 else ''}"
                     + (f", last {path_items} shown" if len(path) > path_items else "") + "):")
        for s in path[-path_items:]:
            src = f"  {s.source}" if s.source else ""
            dep = f" after #{s.pred} ({s.why})" if s.pred >= 0 else ""
            lines.append(f"  #{s.index:<5} {self.schedule.track(s):<8} {s.instruction:<24} "
                         f"{s.start_ns:>12,.0f} .. {s.end_ns:>12,.0f} ns{dep}{src}")
        lines.append("verdict: " + self.verdict())
        return "\n".join(lines)

    def summary(self) -> str:
        """A plain-text table: per-instruction, then per-engine totals, then the schedule."""
        lines = [f"{'engine':<8} {'instruction':<28} {'count':>7} {'cycles':>12}"]
        for (eng, ins), (n, c) in sorted(self.by_instruction().items()):
            lines.append(f"{eng:<8} {ins:<28} {n:>7} {c:>12}")
        lines.append("")
        lines.append(f"{'engine':<8} {'total cycles':>12}")
        for eng, c in sorted(self.totals().items()):
            lines.append(f"{eng:<8} {c:>12}")
        if self.schedule.slots:
            lines.append("")
            lines.append(self.report())
        return "\n".join(lines)

    def to_chrome_trace(self) -> dict:
        """Perfetto / Chrome-trace JSON of the schedule: one track (thread) per engine and
        queue, slices at their scheduled start, flow arrows for the dependency that fixed
        each start, the kernel source line per slice.  Times are in microseconds, as the
        trace-event format defines ``ts`` and ``dur``; ``args`` gives ns and cycles."""
        sch = self.schedule
        tracks = sorted({sch.track(s) for s in sch.slots})
        tid = {name: i + 1 for i, name in enumerate(tracks)}
        trace = [{"ph": "M", "pid": 1, "tid": tid[n], "name": "thread_name", "args": {"name": n}}
                 for n in tracks]
        trace.append({"ph": "M", "pid": 1, "name": "process_name",
                      "args": {"name": "fastisa (model estimate)"}})
        for s in sch.slots:
            t = tid[sch.track(s)]
            args = {"cycles": s.cycles, "start_ns": s.start_ns, "dur_ns": s.dur_ns,
                    "index": s.index}
            if s.source:
                args["source"] = s.source
            if s.pred >= 0:
                args["after"] = f"#{s.pred} ({s.why})"
            trace.append({"ph": "X", "pid": 1, "tid": t, "name": s.instruction,
                          "ts": s.start_ns / 1000.0, "dur": s.dur_ns / 1000.0, "args": args})
            if s.pred >= 0 and s.why != "engine":
                p = sch.slots[s.pred]
                trace.append({"ph": "s", "pid": 1, "tid": tid[sch.track(p)], "id": s.index,
                              "name": s.why, "cat": "dependency", "ts": p.end_ns / 1000.0})
                trace.append({"ph": "f", "bp": "e", "pid": 1, "tid": t, "id": s.index,
                              "name": s.why, "cat": "dependency", "ts": s.start_ns / 1000.0})
        return {"traceEvents": trace,
                "otherData": {"time_unit": "ts and dur in microseconds (trace-event format)",
                              "model": "fastisa engine schedule: estimates, not measurements"}}

    def write_chrome_trace(self, path) -> None:
        with open(path, "w") as f:
            json.dump(self.to_chrome_trace(), f)


@dataclass(frozen=True)
class Latency:
    """An estimated kernel time: ``ns`` and, per engine, the same time in its clock's cycles."""

    ns: float
    cycles: dict

    def __str__(self) -> str:
        return f"{self.ns:,.0f} ns"


_ACTIVE: contextvars.ContextVar[tuple[Profile, ...]] = contextvars.ContextVar(
    "fastisa_profiles", default=())


def active_profiles() -> tuple[Profile, ...]:
    return _ACTIVE.get()


#: Functions called as ``hook(engine, instruction, cycles)`` each time an instruction
#: completes (every instruction ends with :func:`record`).  The NKI front-end applies its
#: PSUM accumulation-state changes here, so a call that raises changes nothing.
RECORD_HOOKS: list = []


def _python_idle() -> bool:  # pragma: no cover - a build without the extension
    return False


try:    # plan paths skip record() when it would do nothing (issue 15)
    from ._kernels.span import idle_when as _idle_when, record_idle, set_record_env
    set_record_env(RECORD_HOOKS, _ACTIVE)
except ImportError:         # pragma: no cover
    record_idle = _python_idle

    def _idle_when(hook, context=None, pending=None):
        pass


def idle_when(hook, context=None, pending=None) -> None:
    """Declare that record hook ``hook`` does nothing while the ContextVar ``context``
    holds None and the thread-local ``pending.items`` is empty.  While no profile is
    active and every hook is declared and idle, the instructions' plan paths skip
    :func:`record` (:func:`record_idle`); a hook not declared is always called."""
    _idle_when(hook, context, pending)


def record(engine: str, instruction: str, cycles: int, *, reads=None, writes=None,
           nbytes: int | None = None, partitions: int | None = None, source: str | None = None,
           domain: str | None = None, shared: str | None = None,
           queue: str | None = None) -> None:
    """Add one instruction's estimated cost to every active profile.

    ``reads`` / ``writes``: the operands (arrays, tensors, tiles, or ``(space, lo, hi)``
    byte ranges) the instruction reads and writes, for the dependency-aware schedule; when
    both are None they are inferred from the calling instruction's parameters (``dst``-like
    names are written).  ``nbytes`` (and ``partitions`` for NKI) time a DMA or MTE transfer
    from its size.  ``domain`` (``"nki"``, ``"tik"``, ``"pto"``) picks the engine clocks; by
    default the calling module's front-end.  ``shared`` names a resource several queues
    share (NKI's DMA bandwidth); ``queue`` the schedule track when it is not the engine's
    own (NKI DMA stores, ``"DMA-out"``; cycle totals stay under ``engine``).  Nothing is computed when no profile is active.
    """
    for h in RECORD_HOOKS:
        h(engine, instruction, cycles)
    profiles = _ACTIVE.get()
    if not profiles:
        return
    frame = sys._getframe(1)
    if domain is None:
        mod = frame.f_globals.get("__name__", "")
        parts = mod.split(".")
        domain = parts[1] if len(parts) > 1 and parts[0] == "fastisa" else ""
    if reads is None and writes is None:
        rs, ws = _sched.infer_operands(frame)
    else:
        rs, ws = _sched._spans(reads), _sched._spans(writes)
    if source is None:
        source = _sched.user_source(frame)
    dur = busy = None
    if nbytes is not None:
        dur, busy = transfer_ns(domain, engine, nbytes, partitions)
    ent = (engine, instruction, int(cycles), domain, dur, rs, ws, source, busy, shared, queue)
    for p in profiles:
        p._pending.append(ent)


def transfer_ns(domain: str, engine: str, nbytes: int,
                partitions: int | None = None) -> tuple[float, float]:
    """Modelled (latency, queue occupancy) in ns of a DMA / MTE transfer of ``nbytes``
    bytes (see :data:`fastisa.schedule.DMA_MODEL` and :data:`fastisa.schedule.MTE_MODEL`)."""
    if domain == "nki":
        m = _sched.DMA_MODEL
        used = m["engines"] if not partitions else max(
            1, min(m["engines"], -(-int(partitions) // m["partitions_per_engine"])))
        occ = nbytes / (used * m["bytes_per_ns_per_engine"])
        if partitions:
            row = nbytes / int(partitions)
            occ *= (row + m["row_overhead_bytes"]) / row if row > 0 else 1.0
        return m["fixed_ns"] + occ, occ
    m = _sched.MTE_MODEL
    cyc = m["startup_cycles"] + -(-int(nbytes) // m["bytes_per_cycle"])
    t = cyc / _sched.clock_ghz(domain, engine)
    return t, t


def barrier(engines=None, *, domain: str) -> None:
    """Every named engine (by default all engines of ``domain`` used so far) waits for all
    of them to finish what they issued (TIK/PTO ``PIPE_ALL`` barriers, NKI barriers)."""
    for p in _ACTIVE.get():
        p._sync("barrier", domain, engines)


def set_flag(src: str, dst: str, event_id, *, domain: str) -> None:
    """Pipe ``src`` signals pipe ``dst`` once all it issued so far has finished."""
    for p in _ACTIVE.get():
        p._sync("set_flag", domain, src, dst, event_id)


def wait_flag(src: str, dst: str, event_id, *, domain: str) -> None:
    """Pipe ``dst`` waits for the oldest pending ``set_flag`` from ``src``."""
    for p in _ACTIVE.get():
        p._sync("wait_flag", domain, src, dst, event_id)


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
