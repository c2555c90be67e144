"""A dependency-aware engine schedule, built as instructions run (no second pass).

The model, stated once (every constant is in :data:`CLOCKS_GHZ`, :data:`DMA_MODEL` and
:data:`MTE_MODEL`, each with its public source):

* Every engine or queue (NKI: Tensor, Vector, Scalar, GpSimd and the DMA queues; TIK and PTO:
  Vector, Cube, Scalar, MTE1, MTE2, MTE3) issues its instructions **in program order**, one
  at a time.
* An instruction starts when its engine is free **and** every earlier instruction it depends
  on has finished.  Dependencies are found from the byte ranges each instruction reads and
  writes (tracked per tensor / tile / buffer byte range, so two halves of one tile are
  independent): read-after-write, write-after-write and write-after-read.
* Explicit synchronisation is honoured: :func:`set_flag` / :func:`wait_flag` (PTO and TIK
  events between pipes), :func:`barrier` (TIK ``pipe_barrier(PIPE_ALL)``, PTO
  ``pto.barrier``, NKI barriers).
* A compute instruction lasts its documented cycle estimate divided by its engine's clock.  A
  DMA lasts a fixed start-up plus its bytes over the bandwidth of the DMA engines it uses.

What it leaves out: caches (there are none on these chips for kernel data, but HBM page
effects are ignored), SBUF/PSUM bank conflicts, DMA descriptor generation beyond the fixed
start-up, the instruction-issue front end, and the semaphore latency of a cross-engine
dependency.  Results are **model estimates**, not measurements.
"""

from __future__ import annotations

import bisect
import sys
from dataclasses import dataclass, field

import numpy as np

__all__ = ["CLOCKS_GHZ", "DMA_MODEL", "MTE_MODEL", "Slot", "Schedule", "span_of"]

#: Engine clocks in GHz, per front-end domain.
CLOCKS_GHZ: dict[tuple[str, str], float] = {
    # AWS "Trainium2 Architecture Guide for NKI" (aws-neuron-sdk
    # nki/guides/architecture/trainium2_arch.rst): engine frequencies of NeuronCore-v3.
    ("nki", "Tensor"): 2.4,
    ("nki", "Vector"): 0.96,
    ("nki", "Scalar"): 1.2,
    ("nki", "GpSimd"): 1.2,
    # Ascend AI Core clock, 1.0 GHz: derived from Huawei's published Ascend 910 figures
    # (Hot Chips 31, 2019: 256 TFLOPS fp16 from 32 DaVinci AI Cores of 4096 fp16 MACs per
    # cycle -> 256e12 / (32 * 4096 * 2) = 0.98 GHz).  All AI Core pipes share it.
    ("tik", "*"): 1.0,
    ("pto", "*"): 1.0,
}

#: NKI DMA: aws-neuron-sdk nki/get-started/about/nki-dma-overview.rst ("Introduction to
#: Direct Memory Access (DMA) with NKI"): 16 DMA engines per NeuronCore, 23 B/ns each on
#: Trainium2 (368 GB/s aggregate), each engine serving 8 partition lanes.  The fixed
#: start-up of a transfer is not published; 2,000 ns is this model's assumption (the same
#: page says small transfers are latency-bound and 2 KiB per partition nearly saturates).
DMA_MODEL = {"engines": 16, "bytes_per_ns_per_engine": 23.0, "partitions_per_engine": 8,
             "fixed_ns": 2000.0}

#: TIK / PTO MTE queues: the front-ends' cycle estimate (64 cycles of start-up plus 64 bytes
#: per cycle) at the AI Core clock.  An assumption of fastisa, not a published figure.
MTE_MODEL = {"startup_cycles": 64, "bytes_per_cycle": 64}

_DMA_ENGINES = ("DMA", "MTE1", "MTE2", "MTE3", "MTE")


def clock_ghz(domain: str, engine: str) -> float:
    """The clock of ``engine`` in ``domain`` (1.0 GHz when no figure is known)."""
    c = CLOCKS_GHZ.get((domain, engine))
    if c is None:
        c = CLOCKS_GHZ.get((domain, "*"), 1.0)
    return c


def is_memory_engine(engine: str) -> bool:
    return engine.split(":")[0] in _DMA_ENGINES


# ---- operand byte ranges ---------------------------------------------------------------
def _array_span(a: np.ndarray):
    if a.size == 0:
        return None
    ptr = a.__array_interface__["data"][0]
    lo = hi = ptr
    for n, s in zip(a.shape, a.strides):
        if s < 0:
            lo += (n - 1) * s
        else:
            hi += (n - 1) * s
    return (0, lo, hi + a.itemsize)


def span_of(x):
    """The byte range ``(space, lo, hi)`` an operand occupies, or None when it has none.

    numpy arrays, NKI tensors, PTO tiles and global tensors are ranges of host memory
    (space 0: the address of the simulated bytes).  TIK tensors are ranges of their
    scope's buffer (the space is the tensor's instance and scope)."""
    if x is None:
        return None
    if isinstance(x, np.ndarray):
        return _array_span(x)
    f = getattr(x, "_fi_span", None)
    if f is not None:
        return f()
    for attr in ("data", "_buf", "array"):
        a = getattr(x, attr, None)
        if isinstance(a, np.ndarray):
            return _array_span(a)
    return None


def _spans(objs):
    out = []
    if objs is None:
        return out
    if not isinstance(objs, (list, tuple)):
        objs = (objs,)
    for o in objs:
        if isinstance(o, tuple) and len(o) == 3 and isinstance(o[1], int):
            out.append(o)
            continue
        s = span_of(o)
        if s is not None:
            out.append(s)
    return out


#: Local names that an instruction writes when operands are inferred from its frame.
_WRITE_NAMES = frozenset({"dst", "out", "reduce_res", "dst_idx", "accum", "res", "output"})
_SKIP_NAMES = frozenset({"self", "instr", "name", "engine", "op", "op0", "op1"})


def infer_operands(frame):
    """Operands of the instruction whose implementation ``frame`` is, for instructions that
    do not pass their reads and writes: the tensor-valued *parameters* of the calling
    function and, while that is a private helper (``_name``), of its callers up to the
    public instruction; ``dst``-like names are written, the others read."""
    reads, writes = [], []
    f = frame
    while f is not None:
        code = f.f_code
        nargs = code.co_argcount + code.co_kwonlyargcount
        loc = f.f_locals
        for k in code.co_varnames[:nargs]:
            if k in _SKIP_NAMES:
                continue
            v = loc.get(k)
            if v is None or isinstance(v, (int, float, str, bool)):
                continue
            s = span_of(v)
            if s is None:
                continue
            (writes if k in _WRITE_NAMES else reads).append(s)
        if not code.co_name.startswith("_"):
            break
        f = f.f_back
        if f is None or not f.f_globals.get("__name__", "").startswith("fastisa."):
            break
    return reads, writes


def user_source(frame) -> str:
    """``file:line`` of the first frame outside fastisa (the user's kernel line)."""
    f = frame
    while f is not None:
        mod = f.f_globals.get("__name__", "")
        if not (mod == "fastisa" or mod.startswith("fastisa.")):
            return f"{f.f_code.co_filename}:{f.f_lineno}"
        f = f.f_back
    return ""


# ---- the schedule ----------------------------------------------------------------------
@dataclass
class Slot:
    """One scheduled instruction."""

    index: int
    domain: str
    engine: str
    instruction: str
    cycles: int
    start_ns: float
    end_ns: float
    source: str = ""
    pred: int = -1          # the instruction whose end fixed this one's start (-1: none)
    why: str = ""           # "engine" (in-order issue), "RAW", "WAR", "WAW" or "sync"
    deps: tuple = ()        # every instruction it waited on through data (RAW/WAR/WAW)

    @property
    def dur_ns(self) -> float:
        return self.end_ns - self.start_ns


class _Segments:
    """Disjoint byte segments of one address space, each remembering its last writer and
    the latest-finishing reader since that write."""

    __slots__ = ("los", "seg")

    def __init__(self):
        self.los: list[int] = []
        self.seg: list[list] = []   # [lo, hi, w_end, w_idx, r_end, r_idx]

    def _cut(self, x: int) -> None:
        i = bisect.bisect_right(self.los, x) - 1
        if i >= 0:
            s = self.seg[i]
            if s[0] < x < s[1]:
                t = [x, s[1], s[2], s[3], s[4], s[5]]
                s[1] = x
                self.los.insert(i + 1, x)
                self.seg.insert(i + 1, t)

    def cover(self, lo: int, hi: int) -> list:
        """The segments exactly covering [lo, hi), creating empty ones for the gaps."""
        self._cut(lo)
        self._cut(hi)
        i = bisect.bisect_left(self.los, lo)
        out = []
        pos = lo
        while pos < hi:
            if i < len(self.seg) and self.seg[i][0] == pos:
                s = self.seg[i]
                out.append(s)
                pos = s[1]
                i += 1
            else:
                nxt = self.seg[i][0] if i < len(self.seg) else hi
                end = min(nxt, hi)
                s = [pos, end, 0.0, -1, 0.0, -1]
                self.los.insert(i, pos)
                self.seg.insert(i, s)
                out.append(s)
                pos = end
                i += 1
        return out

    def peek(self, lo: int, hi: int):
        """Segments overlapping [lo, hi) without changing the map."""
        i = max(0, bisect.bisect_right(self.los, lo) - 1)
        while i < len(self.seg) and self.seg[i][0] < hi:
            s = self.seg[i]
            if s[1] > lo:
                yield s
            i += 1


@dataclass
class Schedule:
    """Start and end times of every recorded instruction (see the module docstring)."""

    slots: list[Slot] = field(default_factory=list)
    _free: dict = field(default_factory=dict, repr=False)      # (domain, engine) -> (ns, idx)
    _mem: dict = field(default_factory=dict, repr=False)       # space -> _Segments
    _flags: dict = field(default_factory=dict, repr=False)     # (domain, src, dst, id) -> [(ns, idx)]

    def add(self, domain: str, engine: str, instruction: str, cycles: int, dur_ns: float,
            reads=(), writes=(), source: str = "") -> Slot:
        key = (domain, engine)
        start, pred, why = self._free.get(key, (0.0, -1))[0], self._free.get(key, (0.0, -1))[1], \
            "engine"
        deps = set()
        for space, lo, hi in reads:
            seg = self._mem.get(space)
            if seg is None:
                continue
            for s in seg.peek(lo, hi):
                if s[3] >= 0:
                    deps.add(s[3])
                    if s[2] > start:
                        start, pred, why = s[2], s[3], "RAW"
        for space, lo, hi in writes:
            seg = self._mem.get(space)
            if seg is None:
                continue
            for s in seg.peek(lo, hi):
                if s[3] >= 0:
                    deps.add(s[3])
                    if s[2] > start:
                        start, pred, why = s[2], s[3], "WAW"
                if s[5] >= 0:
                    deps.add(s[5])
                    if s[4] > start:
                        start, pred, why = s[4], s[5], "WAR"
        if pred < 0:
            why = ""
        idx = len(self.slots)
        end = start + max(0.0, float(dur_ns))
        slot = Slot(idx, domain, engine, instruction, int(cycles), start, end, source, pred, why,
                    tuple(sorted(d for d in deps if d != idx)))
        self.slots.append(slot)
        self._free[key] = (end, idx)
        for space, lo, hi in reads:
            for s in self._mem.setdefault(space, _Segments()).cover(lo, hi):
                if end > s[4]:
                    s[4], s[5] = end, idx
        for space, lo, hi in writes:
            for s in self._mem.setdefault(space, _Segments()).cover(lo, hi):
                s[2], s[3], s[4], s[5] = end, idx, 0.0, -1
        return slot

    # -- synchronisation --------------------------------------------------------------
    def engines(self, domain: str | None = None) -> list:
        return [k for k in self._free if domain is None or k[0] == domain]

    def barrier(self, domain: str, engines=None) -> None:
        """Every named engine (all of ``domain``'s so far by default) waits until all of
        them have finished what they issued."""
        keys = [(domain, e) for e in engines] if engines else self.engines(domain)
        if not keys:
            return
        t, idx = max((self._free.get(k, (0.0, -1)) for k in keys), key=lambda v: v[0])
        for k in keys:
            if self._free.get(k, (0.0, -1))[0] < t:
                self._free[k] = (t, idx)

    def set_flag(self, domain: str, src: str, dst: str, event_id) -> None:
        """``src`` signals ``dst``: the signal is raised once everything ``src`` issued so
        far has finished."""
        t = self._free.get((domain, src), (0.0, -1))
        self._flags.setdefault((domain, src, dst, event_id), []).append(t)

    def wait_flag(self, domain: str, src: str, dst: str, event_id) -> None:
        """``dst`` waits for the oldest pending signal from ``src`` (none pending: no wait)."""
        q = self._flags.get((domain, src, dst, event_id))
        if not q:
            return
        t, idx = q.pop(0)
        cur = self._free.get((domain, dst), (0.0, -1))
        if t > cur[0]:
            self._free[(domain, dst)] = (t, idx)

    # -- results ----------------------------------------------------------------------
    @property
    def latency_ns(self) -> float:
        return max((s.end_ns for s in self.slots), default=0.0)

    def busy_ns(self) -> dict:
        out: dict = {}
        for s in self.slots:
            k = s.engine if s.domain == self._one_domain() else f"{s.domain}.{s.engine}"
            out[k] = out.get(k, 0.0) + s.dur_ns
        return out

    def _one_domain(self):
        doms = {s.domain for s in self.slots}
        return next(iter(doms)) if len(doms) == 1 else None

    def track(self, s: Slot) -> str:
        return s.engine if s.domain == self._one_domain() else f"{s.domain}.{s.engine}"

    def critical_path(self) -> list[Slot]:
        """The chain of instructions that fixes the kernel's end, first to last: from the
        instruction that ends last, follow each one's binding predecessor."""
        if not self.slots:
            return []
        cur = max(self.slots, key=lambda s: (s.end_ns, s.index))
        path = [cur]
        while cur.pred >= 0:
            cur = self.slots[cur.pred]
            path.append(cur)
        path.reverse()
        return path

    def verdict(self) -> str:
        """One line: compute-bound on engine X / memory-bound / latency-bound."""
        lat = self.latency_ns
        if lat <= 0:
            return "empty: no instruction was timed"
        busy = self.busy_ns()
        top, tb = max(busy.items(), key=lambda kv: kv[1])
        util = tb / lat
        path = self.critical_path()
        on_path: dict = {}
        for s in path:
            on_path[self.track(s)] = on_path.get(self.track(s), 0.0) + s.dur_ns
        if util >= 0.6:
            kind = "memory-bound" if is_memory_engine(top.split(".")[-1]) else "compute-bound"
            return (f"{kind} on {top}: busy {util:.0%} of the {lat:,.0f} ns estimate")
        gaps = lat - sum(on_path.values())
        return (f"latency-bound by dependencies: the busiest engine ({top}) is busy only "
                f"{util:.0%} of the {lat:,.0f} ns estimate; the critical path of {len(path)} "
                f"instructions crosses {len(on_path)} engine(s)"
                + (f" and waits {gaps:,.0f} ns" if gaps > 1 else ""))


def caller_frame(depth: int):
    return sys._getframe(depth + 1)
