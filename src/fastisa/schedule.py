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
  DMA's result is visible a fixed latency plus its bytes over the bandwidth of the DMA
  engines it uses after it starts; its queue is busy only for the bytes part, so transfers
  in flight overlap their latency.

What it leaves out: caches (there are none on these chips for kernel data, but HBM page
effects are ignored), SBUF/PSUM bank conflicts, DMA descriptor generation beyond the fixed
start-up, the instruction-issue front end, and the semaphore latency of a cross-engine
dependency.  Results are **model estimates**, not measurements.
"""

from __future__ import annotations

import bisect
import contextvars
import sys
import weakref
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
#: latency of a transfer is not published; 2,000 ns is this model's assumption (the same
#: page says small transfers are latency-bound and 2 KiB per partition nearly saturates).
#: A queue is occupied only for the bytes / bandwidth part: transfers in flight overlap
#: their fixed latency, as the DMA engines' descriptor queues let them.
#: Achieved bandwidth falls with the bytes each partition row moves (the same page's graph
#: of throughput against free bytes, near peak from 2-4 KiB per partition); fastisa models
#: the efficiency as ``row / (row + row_overhead_bytes)`` -- 80% at 2 KiB, an assumption
#: fitted to that statement, not a published formula.
DMA_MODEL = {"engines": 16, "bytes_per_ns_per_engine": 23.0, "partitions_per_engine": 8,
             "fixed_ns": 2000.0, "row_overhead_bytes": 512}

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
    return engine.startswith(_DMA_ENGINES)


# ---- operand byte ranges ---------------------------------------------------------------
_ROOTS: dict = {}      # id(root array) -> (weakref to it, allocation serial)
_SERIAL = [0]


def _root_serial(root: np.ndarray) -> int:
    """A serial number per live host allocation: a new array is new memory even when the
    host allocator hands out a freed address again (so the schedule never invents a
    dependency from address reuse), while views of one allocation share it."""
    k = id(root)
    e = _ROOTS.get(k)
    if e is not None and e[0]() is root:
        return e[1]
    _SERIAL[0] += 1
    try:
        _ROOTS[k] = (weakref.ref(root, lambda _r, k=k: _ROOTS.pop(k, None)), _SERIAL[0])
    except TypeError:  # not weak-referenceable: fall back to the address space
        return 0
    return _SERIAL[0]


def _array_span(a: np.ndarray):
    """``(space, p_lo, p_hi, f_lo, f_hi, row_bytes)``: the rows (partitions) and the byte
    range within each row that a view of a >= 2-D allocation touches, so that slices of
    one tile along its free dimension are independent; ``row_bytes == 0`` means a flat
    byte range ``[f_lo, f_hi)`` (1-D allocations and views that are not row slices)."""
    if a.size == 0:
        return None
    root = a
    while isinstance(root.base, np.ndarray):
        root = root.base
    base = root.__array_interface__["data"][0]
    off = a.__array_interface__["data"][0] - base
    lo = hi = off
    for n, st in zip(a.shape, a.strides):
        if st < 0:
            lo += (n - 1) * st
        else:
            hi += (n - 1) * st
    hi += a.itemsize
    serial = _root_serial(root)
    space = ("host", serial) if serial else 0
    if not serial:
        lo, hi = lo + base, hi + base
    rb = root.strides[0] if root.ndim >= 2 and root.flags.c_contiguous else 0
    if rb > 0 and a.ndim >= 1 and (a.strides[0] == rb or a.shape[0] == 1) and off >= 0:
        inner = a.itemsize + sum((n - 1) * st for n, st in zip(a.shape[1:], a.strides[1:]))
        if all(st >= 0 for st in a.strides[1:]) and off % rb + inner <= rb:
            p0 = off // rb
            f0 = off % rb
            return (space, p0, p0 + a.shape[0], f0, f0 + inner, rb)
    return (space, 0, 1, lo, hi, 0)


_array_span_py = _array_span
try:   # the compiled twin (same tuples; issue 15: two per profiled instruction)
    from ._kernels.span import array_span as _array_span_c

    def _array_span(a: np.ndarray):  # noqa: F811
        return _array_span_c(a, _root_serial)
    _array_span.__doc__ = _array_span_py.__doc__
except ImportError:    # pragma: no cover - a build without the extension
    pass


def span_of(x):
    """The byte range ``(space, lo, hi)`` an operand occupies, or None when it has none.

    numpy arrays, NKI tensors, PTO tiles and global tensors are ranges of one host
    allocation (the space is that allocation, the range its byte offsets).  TIK tensors are ranges of their
    scope's buffer (the space is the tensor's instance and scope)."""
    if x is None:
        return None
    if isinstance(x, np.ndarray):
        return _array_span(x)
    f = getattr(x, "_fi_span", None)
    if f is not None:
        sp, lo, hi = f()
        return (sp, 0, 1, lo, hi, 0)
    for attr in ("_d", "data", "_buf", "array"):   # _d: an NkiTensor's storage, read
        # without waiting for an overlapped nc_matmul (only its address range is used)
        a = getattr(x, attr, None)
        if isinstance(a, np.ndarray):
            return _array_span(a)
    return None


def _spans_py(objs):
    out = []
    if objs is None:
        return out
    if not isinstance(objs, (list, tuple)):
        objs = (objs,)
    for o in objs:
        if isinstance(o, tuple) and len(o) == 3 and isinstance(o[1], int):
            out.append((o[0], 0, 1, o[1], o[2], 0))
            continue
        s = span_of(o)
        if s is not None:
            out.append(s)
    return out


_spans = _spans_py
try:   # the compiled twins (same values; issue 15: the spans of every profiled instruction)
    from ._kernels.span import spans as _spans_c

    def _spans(objs):  # noqa: F811
        return _spans_c(objs, _root_serial)
    _spans.__doc__ = _spans_py.__doc__
except ImportError:    # pragma: no cover - a build without the extension
    pass


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


#: Set by interpreters of text programs (PTO-AS): the program line being run, which is
#: the source of the instructions it records.
SOURCE: "contextvars.ContextVar[str]" = contextvars.ContextVar("fastisa_source", default="")


def user_source(frame) -> str:
    """``file:line`` of the first frame outside fastisa (the user's kernel line), or the
    text-program line being run (:data:`SOURCE`)."""
    src = SOURCE.get()
    if src:
        return src
    if _user_source_c is not None:
        return _user_source_c(frame)
    return _user_source_py(frame)


def _user_source_py(frame) -> str:
    f = frame
    while f is not None:
        mod = f.f_globals.get("__name__", "")
        if not (mod == "fastisa" or mod.startswith("fastisa.")) or \
                mod.startswith("fastisa.examples."):   # the bundled kernels are user code
            return f"{f.f_code.co_filename}:{f.f_lineno}"
        f = f.f_back
    return ""


try:
    from ._kernels.span import user_source_frames as _user_source_c
except ImportError:    # pragma: no cover - a build without the extension
    _user_source_c = None


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
    busy_ns: float = -1.0   # how long the engine is occupied (DMA: less than start..end; -1: all of it)
    pred: int = -1          # the instruction whose end fixed this one's start (-1: none)
    why: str = ""           # "engine" (in-order issue), "RAW", "WAR", "WAW" or "sync"
    deps: tuple = ()        # every instruction it waited on through data (RAW/WAR/WAW)

    @property
    def dur_ns(self) -> float:
        return self.end_ns - self.start_ns

    @property
    def occupancy_ns(self) -> float:
        return self.dur_ns if self.busy_ns < 0 else self.busy_ns


def _flat(r):
    _, p0, p1, f0, f1, rb = r
    return (f0, f1) if rb == 0 else (p0 * rb + f0, (p1 - 1) * rb + f1)


def _overlap(a, b) -> bool:
    if a[5] and a[5] == b[5]:
        return a[1] < b[2] and b[1] < a[2] and a[3] < b[4] and b[3] < a[4]
    (a0, a1), (b0, b1) = _flat(a), _flat(b)
    return a0 < b1 and b0 < a1


def _covers(a, b) -> bool:
    """Does range ``a`` contain range ``b``?"""
    if a[5] and a[5] == b[5]:
        return a[1] <= b[1] and b[2] <= a[2] and a[3] <= b[3] and b[4] <= a[4]
    if a[5] == 0 and b[5] == 0:
        return a[3] <= b[3] and b[4] <= a[4]
    return False


class _Space:
    """The byte ranges of one allocation that instructions wrote or read, each with the
    end time and index of its last writer or latest reader."""

    __slots__ = ("writes", "reads")

    def __init__(self):
        self.writes: list = []   # [range, end, idx]
        self.reads: list = []    # [range, end, idx]

    def read_deps(self, r):
        return [(e, i) for q, e, i in self.writes if _overlap(q, r)]

    def write_deps(self, r):
        return ([(e, i, "WAW") for q, e, i in self.writes if _overlap(q, r)]
                + [(e, i, "WAR") for q, e, i in self.reads if _overlap(q, r)])

    def add_read(self, r, end, idx):
        for ent in self.reads:
            if ent[0] == r:
                if end > ent[1]:
                    ent[1], ent[2] = end, idx
                return
        self.reads.append([r, end, idx])

    def add_write(self, r, end, idx):
        # a write supersedes what it covers: they ended before it started
        self.writes = [w for w in self.writes if not _covers(r, w[0])]
        self.reads = [w for w in self.reads if not _covers(r, w[0])]
        self.writes.append([r, end, idx])


@dataclass
class Schedule:
    """Start and end times of every recorded instruction (see the module docstring)."""

    slots: list[Slot] = field(default_factory=list)
    _free: dict = field(default_factory=dict, repr=False)      # (domain, engine) -> (ns, idx)
    _mem: dict = field(default_factory=dict, repr=False)       # space -> _Space
    _flags: dict = field(default_factory=dict, repr=False)     # (domain, src, dst, id) -> [(ns, idx)]
    _res: dict = field(default_factory=dict, repr=False)       # shared resource -> [starts], [ends]

    def add(self, domain: str, engine: str, instruction: str, cycles: int, dur_ns: float,
            reads=(), writes=(), source: str = "", busy_ns: float | None = None,
            shared: str | None = None) -> Slot:
        """Schedule one instruction lasting ``dur_ns`` from its start to its results being
        visible; its engine is occupied for ``busy_ns`` of that (default: all of it; a DMA
        queue takes the next transfer while one is still in flight).  ``shared`` names a
        resource several queues share (the DMA engines' bandwidth): the occupancy is placed
        in its earliest free gap at or after the start, so a transfer waiting for its data
        does not hold up a later independent one on another queue."""
        key = (domain, engine)
        start, pred, why = self._free.get(key, (0.0, -1))[0], self._free.get(key, (0.0, -1))[1], \
            "engine"
        deps = set()
        for r in reads:
            sp = self._mem.get(r[0])
            if sp is None:
                continue
            for e, i in sp.read_deps(r):
                deps.add(i)
                if e > start or (e == start and why == "engine" and e > 0):
                    start, pred, why = e, i, "RAW"
        for r in writes:
            sp = self._mem.get(r[0])
            if sp is None:
                continue
            for e, i, kind in sp.write_deps(r):
                deps.add(i)
                if e > start or (e == start and why == "engine" and e > 0):
                    start, pred, why = e, i, kind
        if pred < 0:
            why = ""
        idx = len(self.slots)
        dur = max(0.0, float(dur_ns))
        if shared is not None:
            occ0 = dur if busy_ns is None else min(float(busy_ns), dur)
            t = self._reserve(shared, start, occ0)
            if t > start:
                start, why = t, why or "engine"
        end = start + dur
        occ = end - start if busy_ns is None else min(float(busy_ns), end - start)
        slot = Slot(idx, domain, engine, instruction, int(cycles), start, end, source,
                    occ, pred, why,
                    tuple(sorted(d for d in deps if d != idx)))
        self.slots.append(slot)
        self._free[key] = (start + occ, idx)
        for r in reads:
            self._mem.setdefault(r[0], _Space()).add_read(r, end, idx)
        for r in writes:
            self._mem.setdefault(r[0], _Space()).add_write(r, end, idx)
        return slot

    def _reserve(self, name: str, t: float, occ: float) -> float:
        """Book ``occ`` ns of resource ``name`` in its earliest free gap at or after ``t``."""
        starts, ends = self._res.setdefault(name, ([], []))
        if occ <= 0:
            return t
        i = bisect.bisect_right(ends, t)
        while i < len(starts) and starts[i] < t + occ:
            t = max(t, ends[i])
            i += 1
        # insert [t, t + occ) at i, merging with touching neighbours
        if i > 0 and ends[i - 1] >= t:
            ends[i - 1] = max(ends[i - 1], t + occ)
            if i < len(starts) and starts[i] <= ends[i - 1]:
                ends[i - 1] = max(ends[i - 1], ends.pop(i))
                starts.pop(i)
        elif i < len(starts) and starts[i] <= t + occ:
            starts[i] = t
        else:
            starts.insert(i, t)
            ends.insert(i, t + occ)
        return t

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
            out[k] = out.get(k, 0.0) + s.occupancy_ns
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
        for name, (starts, ends) in self._res.items():   # queues sharing DMA bandwidth
            if sum(1 for k in busy if is_memory_engine(k.split(".")[-1])) > 1:
                busy["DMA engines"] = sum(
                    e - b for b, e in zip(starts, ends))
        top, tb = max(busy.items(), key=lambda kv: kv[1])
        util = tb / lat
        path = self.critical_path()
        on_path: dict = {}
        for s in path:
            on_path[self.track(s)] = on_path.get(self.track(s), 0.0) + s.dur_ns
        if util >= 0.6:
            kind = ("memory-bound" if is_memory_engine(top.split(".")[-1])
                    else "compute-bound")
            return (f"{kind} on {top}: busy {util:.0%} of the {lat:,.0f} ns estimate")
        gaps = lat - sum(on_path.values())
        return (f"latency-bound by dependencies: the busiest engine ({top}) is busy only "
                f"{util:.0%} of the {lat:,.0f} ns estimate; the critical path of {len(path)} "
                f"instructions crosses {len(on_path)} engine(s)"
                + (f" and waits {gaps:,.0f} ns" if gaps > 1 else ""))


def caller_frame(depth: int):
    return sys._getframe(depth + 1)
