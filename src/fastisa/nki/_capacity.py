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

A tensor's live range starts at its first write: at a checkpoint, a tensor no instruction
has written yet (its memory still holds the allocation's fill bits; for PSUM also every
accumulation state "never written") is not counted, however soon it is used (nki-library's
moe_cte allocates a list of PSUM tiles larger than PSUM up front and fills and reads out a
few at a time).  The check is therefore a lower bound: tensors allocated before a checkpoint
and first written after it are not checked against each other later (no error is invented
for them, and none is found).  A storage owner's ``id`` Python reuses for a new allocation
is not a use of the freed tensor (see :func:`_note_uses`).

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
    simulated program nothing is decided yet (the caller reserves the bytes anyway and
    then calls :func:`defer` with the new tensor): every tracked tensor of ``buffer`` no
    instruction has written yet becomes *unborn* -- placed, as the compiler places it, at
    its first write, where :func:`_born` checks that it fits beside the tensors live then.
    Outside a simulated program: raise AccessError(message)."""
    if not getattr(m, "deferred_capacity", False):
        raise AccessError(message)
    unborn = m.__dict__.setdefault("_unborn", {})
    for key, ent in list(unborn.items()):              # freed, never written: gone
        if ent[0]() is None:
            del unborn[key]
    for key, (ref, nbytes, buf, desc) in list(m.__dict__.get("_live", {}).items()):
        obj = ref()
        if obj is None or buf != buffer or key in unborn:
            continue
        if not _written(m, key, obj, buf, desc):
            unborn[key] = (ref, nbytes, buf, desc, None)


def defer(m, own, message: str) -> None:
    """The over-committed allocation ``own`` (just tracked) is unborn too, with the
    message of its allocation (see :func:`overflow`)."""
    ent = m.__dict__.get("_live", {}).get(id(own))
    if ent is not None and ent[0]() is own:
        m.__dict__.setdefault("_unborn", {})[id(own)] = (*ent, message)


def _add_checkpoint(m, buffer, message, need, live) -> None:
    cps = m.__dict__.setdefault("_checkpoints", [])
    _expire(cps)
    if len(cps) >= MAX_CHECKPOINTS:
        return
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


def _born(m, key, own, ent, instruction) -> None:
    """Unborn tensor ``own`` is used (first written) by ``instruction``: it must fit beside
    the written tensors still referenced then; if they and it exceed the capacity, a
    checkpoint (the ones of them used later decide, :func:`check`)."""
    ref, nbytes, buf, desc, message = ent
    unborn = m.__dict__.get("_unborn", {})
    live = {}
    total = 0
    for k, (r, nb, b, d) in list(m.__dict__.get("_live", {}).items()):
        if b != buf or k == key:
            continue
        o = r()
        if o is None:
            continue
        u = unborn.get(k)
        if u is not None and u[0]() is o:
            continue
        if _written(m, k, o, b, d):
            live[k] = (r, nb, d)
            total += nb
    cap = m.capacity(buf)
    if total + nbytes <= cap:
        return
    if message is None:
        message = (f"{instruction}: {buf} capacity exceeded on {m.target.name}: tensor "
                   f"{desc[0]} {desc[1]} needs {nbytes} bytes per partition")
    _add_checkpoint(m, buf, f"{message}; it is first written by {instruction}, with {total} "
                    f"of {cap} bytes per partition held by written tensors then", nbytes, live)


def _written(m, key, own, buffer, desc) -> bool:
    """Has an instruction written the tracked allocation ``own`` yet?  A tensor's live range
    starts at its first write, not at ``nl.ndarray``: nki-library's moe_cte allocates a list
    of [128, 512] PSUM tiles (24 KiB of the 16) up front and accumulates into and reads out a
    few at a time; the compiler places them by live range.  Not written: every element still
    holds the allocation's fill bits and (PSUM) every accumulation state is "never
    written".  Once True, remembered (a write is never undone).  Without fill bits
    (unknown): True, the former rule."""
    done = m.__dict__.setdefault("_written", {})
    w = done.get(key)
    if w is not None and w() is own:
        return True
    fill = desc[2] if isinstance(desc, tuple) and len(desc) > 2 else None
    hit = fill is None
    if not hit and buffer == "psum":
        from .tensor import _PSUM_STATE
        ent = _PSUM_STATE.get(key)
        hit = ent is not None and ent[0]() is own and bool(ent[1].any())
    if not hit:
        hit = bool((own != fill).any())
    if hit:
        done[key] = weakref.ref(own)
    return hit


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


def track_and_release(m, own, nbytes: int, buffer: str, view=None, fill=None) -> None:
    """:func:`track`, and ``m.release(buffer, nbytes)`` when Python frees ``own``: one
    finalizer for both (each costs microseconds).  ``fill``: the bits every element of the
    new storage ``own`` (an unsigned-integer array) was filled with, so that a checkpoint
    can tell a tensor nothing has written yet (see :func:`_written`)."""
    live = m.__dict__.setdefault("_live", {})
    key = id(own)
    v = view if view is not None else own
    # the entry's weak reference carries the callback (a weakref.finalize costs several
    # times more); it lives as long as the entry, which the callback removes
    # (the callback holds the instance's counters, not the instance: no cycle keeps the
    # instance, and its memory, alive after the run)
    live[key] = (weakref.ref(own, functools.partial(_freed, m.used, m.lock, live, key, buffer,
                                                    nbytes)),
                 nbytes, buffer, (tuple(v.shape), v.dtype, fill))


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


def _note_uses(m, tensors, instruction="") -> None:
    """The tensors were used by an instruction: each open checkpoint still waiting for one
    of them counts its bytes (in checkpoint order, per tensor).  Only the checkpoints the
    reverse index lists for a tensor's storage are looked at; an entry a checkpoint no
    longer holds (expired with its tensor, or a dropped checkpoint) is skipped, exactly as
    a pop from every checkpoint's pending table would find nothing there.  A pending entry
    whose tensor Python has since freed is dropped unconfirmed: a new tensor can have the
    freed one's ``id``, and its use is not a use of the freed tensor (counting it made
    PSUM/SBUF overflows out of tensors that were dead, e.g. in nki-library's moe_block_tkg)."""
    from .tensor import _owner, meta_array
    unborn = m.__dict__.get("_unborn")
    if unborn:                      # first writes of unborn tensors, before the confirmations
        for t in tensors:
            own = _owner(meta_array(t))
            ent = unborn.pop(id(own), None)
            if ent is not None and ent[0]() is own:
                _born(m, id(own), own, ent, instruction)
    cps = m.__dict__.get("_checkpoints")
    if not cps:
        return
    index = m.__dict__.get("_cp_index")
    if not index:
        return
    for t in tensors:
        own = _owner(meta_array(t))
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
    if m is None:
        return
    d = m.__dict__
    if not d.get("_checkpoints") and not d.get("_unborn"):
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
        _note_uses(m, found, instruction)


if _record_hook not in _cost.RECORD_HOOKS:
    _cost.RECORD_HOOKS.append(_record_hook)
