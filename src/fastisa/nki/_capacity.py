"""SBUF / PSUM capacity of a simulated kernel, with the compiler's liveness.

The NKI compiler places automatically allocated tensors (``nl.ndarray`` without
``address=``) and reuses a tensor's bytes once it is no longer used (its *last use*), so
a kernel fits when the tensors *in use at the same time* fit -- not every tensor a Python
variable still holds.  fastisa counts every live allocation (a tensor's bytes return when
Python frees it) and, inside ``nki.simulate``, treats an allocation that does not fit
that way as a *checkpoint* rather than an error: the run goes on, and the tensors that
were allocated at that moment and are used again later (as an operand of an instruction)
are the ones that really had to be there together with the new tensor.  When those, plus
the new tensor, exceed the capacity, the kernel does not fit: the kernel call raises
AccessError at the end of the program, naming the allocation, the bytes and the tensors.
Fragmentation is not modelled (a perfect allocator is assumed), so fastisa never reports
an overflow that a placement with the compiler's liveness would avoid.

A tensor of P partitions counts ``ceil(P / 32) / 4`` of its bytes per partition: the
allocator can place it in any ``ceil(P / 32)`` of the four 32-partition quadrants, so two
32-partition tiles can share a byte range (nki-library's ``rope`` keeps five
[32, ...] half-head buffers next to two [64, ...] ones).  This is an area bound (the
bytes of all partitions together), again never an overflow a placement would avoid.

Eager calls (outside ``nki.simulate``) keep the immediate check: there is no end of the
program to wait for.  A single tensor larger than the capacity is always an immediate
error.
"""

from __future__ import annotations

import gc
import sys
import functools
import weakref

from .. import cost as _cost
from ..errors import AccessError

#: partitions per SBUF / PSUM quadrant (the granularity a tensor's partitions are placed at)
QUADRANT = 32

#: Open checkpoints per machine at most; later overflows of the program are not followed
#: (no error is invented for them).
MAX_CHECKPOINTS = 256


class _Checkpoint:
    __slots__ = ("buffer", "message", "need", "cap", "pending", "confirmed", "names",
                 "violated")

    def __init__(self, buffer, message, need, cap, live):
        self.buffer = buffer
        self.message = message
        self.need = need                 # the new tensor's bytes per partition
        self.cap = cap
        self.pending = live              # id(data) -> (weakref, bytes, description)
        self.confirmed = 0
        self.names: list = []
        self.violated = False


def _describe(data, nbytes) -> str:
    return f"{tuple(data.shape)} {data.dtype} ({nbytes} B/partition)"


def overflow(m, buffer: str, message: str, need: int) -> None:
    """An automatic allocation of ``need`` bytes per partition did not fit.  Inside a
    simulated program: record a checkpoint (the caller then reserves the bytes anyway);
    otherwise raise AccessError(message)."""
    if not getattr(m, "deferred_capacity", False):
        raise AccessError(message)
    cps = m.__dict__.setdefault("_checkpoints", [])
    _expire(cps)
    if len(cps) >= MAX_CHECKPOINTS:
        return
    live = {}
    for key, (ref, nbytes, buf, desc) in list(m.__dict__.get("_live", {}).items()):
        if ref() is not None and buf == buffer:
            live[key] = (ref, nbytes, desc)
    cp = _Checkpoint(buffer, message, need, m.capacity(buffer), live)
    cps.append(cp)
    # the reverse index _note_uses reads: storage key -> the checkpoints (in creation
    # order) that may hold it pending, so an instruction's operands touch only those,
    # not every open checkpoint (up to MAX_CHECKPOINTS of them after every instruction)
    index = m.__dict__.setdefault("_cp_index", {})
    for key in live:
        lst = index.get(key)
        if lst is None:
            index[key] = [cp]
        else:
            lst.append(cp)


def _expire(cps) -> None:
    """Drop checkpoints whose undecided tensors are all gone (nothing can confirm more)."""
    keep = []
    for cp in cps:
        if cp.violated:
            keep.append(cp)
            continue
        cp.pending = {k: v for k, v in cp.pending.items() if v[0]() is not None}
        if cp.pending:
            keep.append(cp)
    cps[:] = keep


def track(m, own, nbytes: int, buffer: str, view=None) -> None:
    """Remember an automatic on-chip allocation (its storage owner ``own``, until Python
    frees it; ``view``: the tensor's typed data, for the messages)."""
    live = m.__dict__.setdefault("_live", {})
    key = id(own)
    v = view if view is not None else own
    # the description is formatted only when a message needs it (issue 15: every
    # allocation of a simulated kernel comes here)
    live[key] = (weakref.ref(own), nbytes, buffer, (tuple(v.shape), v.dtype))
    weakref.finalize(own, live.pop, key, None)


def track_and_release(m, own, nbytes: int, buffer: str, view=None) -> None:
    """:func:`track`, and ``m.release(buffer, nbytes)`` when Python frees ``own``: one
    finalizer for both (each costs microseconds)."""
    live = m.__dict__.setdefault("_live", {})
    key = id(own)
    v = view if view is not None else own
    # the entry's weak reference carries the callback (a weakref.finalize costs several
    # times more); it lives as long as the entry, which the callback removes
    # (the callback holds the instance's counters, not the instance: no cycle keeps the
    # instance, and its memory, alive after the run)
    live[key] = (weakref.ref(own, functools.partial(_freed, m.used, m.lock, live, key, buffer,
                                                    nbytes)),
                 nbytes, buffer, (tuple(v.shape), v.dtype))


def _freed(used, lock, live, key, buffer, nbytes, ref=None) -> None:
    """``Machine.release`` of a tracked allocation Python freed; its entry goes too."""
    ent = live.get(key)
    if ent is not None and ent[0] is ref:
        del live[key]
    with lock:
        used[buffer] -= nbytes


def _text(desc, nbytes) -> str:
    if isinstance(desc, str):
        return desc
    return f"{desc[0]} {desc[1]} ({nbytes} B/partition)"


def reserve_or_collect(m, buffer: str, nbytes: int):
    """``m.reserve`` after a garbage collection if the first try does not fit (tensors in
    reference cycles are freed only by the collector)."""
    used = m.reserve(buffer, nbytes)
    if used is not None:
        n = m.__dict__.get("_overflows", 0)
        m._overflows = n + 1
        if n % 100 == 0:                   # a collection costs milliseconds: not every time
            gc.collect()
            used = m.reserve(buffer, nbytes)
    return used


def force_reserve(m, buffer: str, nbytes: int) -> None:
    """Count an over-committed allocation (a checkpoint decides whether it fits)."""
    with m.lock:
        m.used[buffer] += nbytes


def check(m) -> None:
    """End of a simulated program: raise for the first checkpoint whose tensors used
    after it, plus its new tensor, exceed the capacity."""
    for cp in m.__dict__.get("_checkpoints", ()):
        if cp.violated:
            used = ", ".join(cp.names[:6]) + (" ..." if len(cp.names) > 6 else "")
            raise AccessError(
                f"{cp.message}; counting the tensors never used again as freed (the "
                f"compiler's liveness), {cp.confirmed} bytes per partition of tensors used "
                f"later are still needed at that point ({used}), so "
                f"{cp.confirmed + cp.need} of {cp.cap} do not fit")


def _note_uses(m, tensors) -> None:
    """The tensors were used by an instruction: each open checkpoint still waiting for one
    of them counts its bytes (in checkpoint order, per tensor).  Only the checkpoints the
    reverse index lists for a tensor's storage are looked at; an entry a checkpoint no
    longer holds (expired with its tensor, or a dropped checkpoint) is skipped, exactly as
    a pop from every checkpoint's pending table would find nothing there.  A pending entry
    whose tensor Python has since freed is dropped unconfirmed: a new tensor can have the
    freed one's ``id``, and its use is not a use of the freed tensor (counting it made
    PSUM/SBUF overflows out of tensors that were dead, e.g. in nki-library's moe_block_tkg)."""
    cps = m.__dict__.get("_checkpoints")
    if not cps:
        return
    index = m.__dict__.get("_cp_index")
    if not index:
        return
    from .tensor import _owner
    for t in tensors:
        own = _owner(t.data)
        key = id(own)
        lst = index.pop(key, None)
        if lst is None:
            continue
        for cp in lst:
            ent = cp.pending.pop(key, None)
            if ent is None:
                continue
            if ent[0]() is not own:
                # the pending tensor was freed (never used again: its bytes were free) and
                # this is a new allocation Python gave the same id: not a later use of it
                continue
            cp.confirmed += ent[1]
            cp.names.append(_text(ent[2], ent[1]))
            if cp.confirmed + cp.need > cp.cap:
                cp.violated = True


def _record_hook(engine, instruction, cycles) -> None:
    """After each instruction while a checkpoint is open: its tensor operands are used."""
    # (sys.modules, not an import statement: this runs after every instruction, issue 15)
    language = sys.modules.get("fastisa.nki.language")
    if language is None:            # never imported: no kernel instance, no checkpoint
        return
    m = language._MACHINE.get()
    if m is None or not m.__dict__.get("_checkpoints"):
        return
    from .tensor import NkiTensor
    found = []
    f = sys._getframe(2)                   # hook <- cost.record <- the instruction
    while f is not None:
        code = f.f_code
        loc = f.f_locals
        for k in code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]:
            v = loc.get(k)
            if isinstance(v, NkiTensor) and v.buffer.on_chip:
                found.append(v)
            elif isinstance(v, (list, tuple)):
                found.extend(x for x in v if isinstance(x, NkiTensor) and x.buffer.on_chip)
        if not code.co_name.startswith("_"):
            break
        f = f.f_back
        if f is None or not f.f_globals.get("__name__", "").startswith("fastisa."):
            break
    if found:
        _note_uses(m, found)


if _record_hook not in _cost.RECORD_HOOKS:
    _cost.RECORD_HOOKS.append(_record_hook)
