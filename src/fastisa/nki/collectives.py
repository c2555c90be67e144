"""``nki.collectives`` (SDK 2.33): collective communication between ranks.

A *rank* is one logical NeuronCore running the whole kernel (with ``kernel[lnc]`` each rank
runs ``lnc`` programs, its physical cores).  ``nki.simulate(kernel, ranks=R)`` runs ``R``
ranks, each with its own inputs, HBM, SBUF and PSUM, as programs of one turn-taking launch
(:mod:`fastisa.nki._launch`); without ``ranks=`` a kernel is a world of one rank
(``rank_id() == 0``, and a collective over the group ``[[0]]`` is a copy).

**Matching.**  Every program counts its collective calls.  The ``k``-th collective call of
core ``c`` of rank ``r`` meets the ``k``-th call of core ``c`` of every other rank of
``r``'s replica sub-group (its list in ``ReplicaGroup``; ``collective_permute``: every rank
of the world), so with LNC2 the two cores of each rank run two independent collectives
(nki-library's tiled SBUF all-gather gives each core its own tiles this way).  A rank
whose partner never issues the matching call (it ended, failed or waits elsewhere) is
found as soon as no program can run: every waiting program raises ConstraintError naming
where each program is -- no hang, no timeout.  Two members that meet with different
collectives, groups or shapes raise ConstraintError, and nothing is written.

**Results** (the sub-group's ranks in list order ``g[0], g[1], ... g[n-1]``; position
``p`` of the calling rank):

* ``all_reduce``: ``dst = src(g[0]) op src(g[1]) op ... op src(g[n-1])``, folded left in
  list order; float types: each partial result computed in float32 and rounded once to
  the tensor dtype (as a chain of ``tensor_tensor`` instructions would), integer types:
  exact integer arithmetic, wrapped to the dtype's width.  The order is fastisa's choice
  (the docs give none; a ring on hardware may sum in another order, so float results can
  differ from the hardware's in the last bits).
* ``all_gather``: ``dst`` = the sources concatenated along ``collective_dim`` in list order.
* ``reduce_scatter``: ``dst`` = chunk ``p`` (along ``collective_dim``) of the all-reduce.
* ``all_to_all``: chunk ``j`` of ``dst`` = chunk ``p`` of ``src(g[j])``.
* ``collective_permute``: ``dst`` of rank ``t`` = ``src`` of ``s`` for the pair ``(s, t)``;
  a rank that is no pair's target keeps its ``dst``.
* ``collective_permute_implicit``: a ring in list order: ``dst`` = ``src`` of the rank before
  (``g[p-1]``); ``collective_permute_implicit_reduce`` sends ``op(src0, src1)`` instead.
* ``collective_permute_implicit_current_processing_rank_id(i)``: ``g[(p - i) mod n]``
  (iteration 0: the own rank, then the ranks whose data arrived around the ring).
* ``all_gather_v`` / ``all_to_all_v``: flat element copies driven by the uint32 metadata
  rows, as documented (``recv_counts_known=False`` writes row 2).

Sources are read when the call is issued and destinations written when every member
arrived (so a destination may be a source).  Documented restrictions enforced: tensors all
on HBM or all on SBUF, several tensors per call only on HBM, SBUF collectives on 2-D
tensors, ``collective_dim`` 0 (SBUF all-gather: 0 or 1), all-to-all and permutes on HBM
with one tensor per list, ``op`` one of ``nl.add`` / ``nl.minimum`` / ``nl.maximum``, srcs and
dsts of one dtype.  Not modelled: channels (``channel_ids`` is checked, the channels are
one), ``priority``, and the topology restrictions of the ``_v`` forms (LNC2, 4-rank
lists, NeuronSwitch).

Source: aws-neuron-sdk ``nki/api/nki/collectives/__init__.py`` and
``nki/api/nki.collectives.rst`` (the official CPU simulator does not implement them:
``nki/guides/nki_simulator.rst``, "Known Gaps").  Cost (fastisa's estimate): DMA
``max(MIN_II, N)``, N = destination elements per partition.
"""

from __future__ import annotations

import dataclasses as _dataclasses
import math
from typing import Any, List, Optional, Tuple

import numpy as np

from .. import cost as _cost
from .. import dtypes as _dt
from ..errors import ConstraintError
from . import ops as _ops
from ._cast import from_f32
from ._registers import VirtualRegister
from .language import NKIObject
from .tensor import NkiTensor

__all__ = ["ReplicaGroup", "all_reduce", "all_gather", "all_gather_v", "reduce_scatter",
           "all_to_all", "all_to_all_v", "collective_permute", "collective_permute_implicit",
           "collective_permute_implicit_reduce",
           "collective_permute_implicit_current_processing_rank_id", "rank_id"]

MIN_II = _cost.MIN_II


@_dataclasses.dataclass
class ReplicaGroup(NKIObject):
    """The ranks that take part in a collective: a list of sub-groups (lists of rank ids),
    e.g. ``ReplicaGroup([[0, 1], [2, 3]])``; sub-groups must not overlap."""

    replica_groups: Any = None

    def __post_init__(self):
        try:
            groups = [tuple(int(r) for r in g) for g in self.replica_groups]
        except TypeError:
            raise ConstraintError(f"ReplicaGroup: expected a list of lists of rank ids, got "
                                  f"{self.replica_groups!r}") from None
        seen = set()
        for g in groups:
            if not g:
                raise ConstraintError("ReplicaGroup: a sub-group is empty")
            for r in g:
                if r < 0:
                    raise ConstraintError(f"ReplicaGroup: rank ids must be >= 0, got {r}")
                if r in seen:
                    raise ConstraintError(f"ReplicaGroup: rank {r} is in more than one "
                                          f"sub-group (sub-groups must not overlap): {groups}")
                seen.add(r)
        self._groups = tuple(groups)

    @property
    def groups(self) -> tuple:
        return self._groups

    def group_of(self, instr: str, rank: int, world: int) -> tuple:
        for g in self._groups:
            if rank in g:
                bad = [r for r in g if r >= world]
                if bad:
                    raise ConstraintError(
                        f"{instr}: replica group {list(g)} names rank {bad[0]}, but the launch "
                        f"has {world} rank(s) (nki.simulate(kernel, ranks=N) runs N ranks)")
                return g
        raise ConstraintError(f"{instr}: rank {rank} is in no sub-group of the replica group "
                              f"{[list(g) for g in self._groups]}")


# ---- where the calling program is ---------------------------------------------------------
def _where():
    """(machine, launch, rank, world, core index, programs per rank)."""
    from . import language
    m = language._machine()
    return (m, getattr(m, "launch", None), int(getattr(m, "rank", 0)),
            int(getattr(m, "world", 1)), int(np.ravel_multi_index(m.program_id, m.grid)),
            int(math.prod(m.grid)))


def rank_id(name: Optional[str] = None) -> VirtualRegister:
    """The calling rank's id (a register holding it): ``0 .. ranks - 1``."""
    return VirtualRegister(_where()[2])


def collective_permute_implicit_current_processing_rank_id(
        iteration_id, replica_group: ReplicaGroup, channel_id: int = 0,
        name: Optional[str] = None) -> VirtualRegister:
    """The rank whose data ring step ``iteration_id`` processes: ``g[(p - i) mod n]`` for
    the calling rank at position ``p`` of its ring ``g`` (a register)."""
    instr = "collective_permute_implicit_current_processing_rank_id"
    _, _, rank, world, _, _ = _where()
    g = _group(instr, replica_group, rank, world)
    _channel(instr, channel_id)
    i = int(iteration_id)
    return VirtualRegister(g[(g.index(rank) - i) % len(g)])


def _group(instr, replica_group, rank, world):
    if not isinstance(replica_group, ReplicaGroup):
        if replica_group is None:
            raise ConstraintError(f"{instr}: replica_group is required (a nki.collectives."
                                  f"ReplicaGroup)")
        replica_group = ReplicaGroup(replica_group)
    return replica_group.group_of(instr, rank, world)


def _channel(instr, channel_id):
    if isinstance(channel_id, bool) or not isinstance(channel_id, (int, np.integer)) or \
            not 0 <= int(channel_id) < 4:
        raise ConstraintError(f"{instr}: channel_id must be an integer in [0, 3], got "
                              f"{channel_id!r}")


# ---- argument checks ----------------------------------------------------------------------
def _tensors(instr, pname, ts, min_n=1):
    if isinstance(ts, NkiTensor) or not isinstance(ts, (list, tuple)):
        raise ConstraintError(f"{instr}: {pname} must be a list of tensors, got "
                              f"{type(ts).__name__}")
    ts = list(ts)
    if len(ts) < min_n:
        raise ConstraintError(f"{instr}: {pname} must hold at least {min_n} tensor, got "
                              f"{len(ts)}")
    for i, t in enumerate(ts):
        if not isinstance(t, NkiTensor):
            raise ConstraintError(f"{instr}: {pname}[{i}] must be an NkiTensor, got "
                                  f"{type(t).__name__}")
        if t.buffer.name == "psum":
            raise ConstraintError(f"{instr}: {pname}[{i}] is in psum; collectives read and "
                                  f"write HBM or SBUF")
        if t.dtype.kind == "packed":
            raise ConstraintError(f"{instr}: {pname}[{i}] has packed type {t.dtype.name}")
    return ts


def _space(instr, srcs, dsts, hbm_only=False, single=False):
    spaces = {t.buffer.on_chip for t in srcs + dsts}
    if len(spaces) > 1:
        raise ConstraintError(f"{instr}: all tensors must be on HBM or all on SBUF (mixing "
                              f"memory spaces is not supported)")
    on_chip = spaces.pop()
    if on_chip and hbm_only:
        raise ConstraintError(f"{instr}: tensors must reside on HBM (SBUF is not supported)")
    if len(srcs) != len(dsts):
        raise ConstraintError(f"{instr}: srcs and dsts must hold the same number of tensors, "
                              f"got {len(srcs)} and {len(dsts)}")
    if (single or on_chip) and len(srcs) != 1:
        raise ConstraintError(f"{instr}: exactly one tensor per list is supported here "
                              f"(coalesced collectives only with HBM tensors), got {len(srcs)}")
    for i, (s, d) in enumerate(zip(srcs, dsts)):
        if s.dtype is not d.dtype:
            raise ConstraintError(f"{instr}: srcs[{i}] and dsts[{i}] must have the same dtype, "
                                  f"got {s.dtype.name} and {d.dtype.name}")
        if on_chip and (len(s.shape) != 2 or len(d.shape) != 2):
            raise ConstraintError(f"{instr}: SBUF collectives operate on 2-D tensors, got "
                                  f"shapes {s.shape} and {d.shape}")
    return on_chip


def _same_space(instr, ts):
    if len({t.buffer.on_chip for t in ts}) > 1:
        raise ConstraintError(f"{instr}: all tensors must be on HBM or all on SBUF (mixing "
                              f"memory spaces is not supported)")


_REDUCE_OPS = ("add", "minimum", "maximum")


def _op(instr, op):
    o = op if isinstance(op, _ops.Op) else getattr(_ops, str(getattr(op, "name", op)), None)
    if not isinstance(o, _ops.Op) or o.name not in _REDUCE_OPS:
        raise ConstraintError(f"{instr}: op must be nl.add, nl.minimum or nl.maximum, got "
                              f"{op!r}")
    return o.name


def _dim(instr, collective_dim, allowed):
    if isinstance(collective_dim, bool) or not isinstance(collective_dim, (int, np.integer)) \
            or int(collective_dim) not in allowed:
        raise ConstraintError(f"{instr}: collective_dim must be "
                              f"{' or '.join(map(str, allowed))} here, got {collective_dim!r}")
    return int(collective_dim)


# ---- reduction ----------------------------------------------------------------------------
def _combine(opname, a, b, fmt):
    """``a op b`` for arrays of storage type ``fmt`` (see the module doc)."""
    if fmt.kind in ("int", "bool"):
        x, y = a.astype(np.int64), b.astype(np.int64)
        r = x + y if opname == "add" else (np.minimum(x, y) if opname == "minimum"
                                           else np.maximum(x, y))
        return r.astype(a.dtype)          # wraps to the width (two's complement)
    x, y = a.astype(np.float32), b.astype(np.float32)
    with np.errstate(all="ignore"):
        r = x + y if opname == "add" else (np.minimum(x, y) if opname == "minimum"
                                           else np.maximum(x, y))
    return from_f32(r, fmt).astype(a.dtype, copy=False)


def _reduce(opname, arrays, fmt):
    acc = arrays[0]
    for a in arrays[1:]:
        acc = _combine(opname, acc, a, fmt)
    return acc


# ---- the meeting --------------------------------------------------------------------------
class _Meeting:
    def __init__(self, instr, members):
        self.instr = instr
        self.members = members            # program indices, in group order
        self.arrived: dict = {}           # program index -> payload
        self.results = None               # program index -> list of arrays
        self.error = None
        self.left = 0


def _meet(instr, members_ranks, payload, compute):
    """Deposit ``payload`` for the calling program and wait for the other members (the same
    core of every rank in ``members_ranks``).  ``compute({rank: payload}) -> {rank: [arrays]}``
    runs once, in the last member to arrive.  Returns the caller's arrays."""
    m, launch, rank, world, core, nprog = _where()
    seq = getattr(m, "cc_seq", 0)
    m.cc_seq = seq + 1
    members = tuple(r * nprog + core for r in members_ranks)
    me = rank * nprog + core
    if launch is None or len(members) == 1:
        if members != (me,):
            raise ConstraintError(f"{instr}: the group {list(members_ranks)} has other ranks, "
                                  f"but this kernel runs alone")
        return compute({rank: payload})[rank]
    key = (core, seq, members)
    with launch.cond:
        meets = launch.__dict__.setdefault("collectives", {})
        mt = meets.get(key)
        if mt is None:
            mt = meets[key] = _Meeting(instr, members)
        if mt.instr != instr:
            raise ConstraintError(
                f"{instr}: collective call #{seq} of rank {rank} (over ranks "
                f"{list(members_ranks)}) meets {mt.instr} issued by another rank of the group: "
                f"every rank of a group must issue the same collectives in the same order")
        mt.arrived[me] = payload
        if len(mt.arrived) == len(mt.members):
            try:
                by_rank = {p // nprog: mt.arrived[p] for p in mt.members}
                res = compute(by_rank)
                mt.results = {r * nprog + core: v for r, v in res.items()}
            except ConstraintError as exc:
                mt.error = exc
                mt.results = {}
            launch.synchronised()
            launch.cond.notify_all()
        else:
            launch.block(me, lambda: mt.results is not None,
                         f"{instr} (collective call #{seq}, with ranks {list(members_ranks)})",
                         instr)
        mt.left += 1
        if mt.left == len(mt.members):
            del meets[key]
        if mt.error is not None:
            raise ConstraintError(str(mt.error))
        return mt.results[me]


def _write(instr, dsts, arrays):
    for d, a in zip(dsts, arrays):
        d.data[...] = a.reshape(d.shape)
    n = max((d.free_size for d in dsts), default=1)
    _cost.record("DMA", instr, max(MIN_II, n))


def _shapes_agree(instr, by_rank, idx="srcs"):
    first = None
    for r, p in sorted(by_rank.items()):
        shp = tuple((a.shape, a.dtype) for a in p[idx])
        if first is None:
            first = (r, shp)
        elif shp != first[1]:
            raise ConstraintError(f"{instr}: rank {r}'s {idx} are {[s for s, _ in shp]} "
                                  f"{[str(t) for _, t in shp]}, rank {first[0]}'s "
                                  f"{[s for s, _ in first[1]]}: every rank of the group must "
                                  f"pass tensors of one shape and dtype")


def _payload(srcs, dsts):
    return {"srcs": [np.array(s.data, copy=True) for s in srcs],
            "dshapes": [d.shape for d in dsts]}


# ---- the collectives ----------------------------------------------------------------------
def all_reduce(srcs: List[NkiTensor], dsts: List[NkiTensor], replica_group: ReplicaGroup, op,
               priority: Optional[int] = None, name: Optional[str] = None) -> None:
    """``dsts[i] = op``-reduction over the sub-group's ranks of ``srcs[i]`` (list order, see
    the module doc).  srcs/dsts: lists of equally shaped tensors, all on HBM or all on SBUF
    (one 2-D tensor each on SBUF); op: ``nl.add``, ``nl.minimum`` or ``nl.maximum``."""
    instr = "all_reduce"
    srcs, dsts = _tensors(instr, "srcs", srcs), _tensors(instr, "dsts", dsts)
    _space(instr, srcs, dsts)
    opname = _op(instr, op)
    for i, (s, d) in enumerate(zip(srcs, dsts)):
        if s.shape != d.shape:
            raise ConstraintError(f"{instr}: srcs[{i}] and dsts[{i}] must have the same shape, "
                                  f"got {s.shape} and {d.shape}")
    _, _, rank, world, _, _ = _where()
    g = _group(instr, replica_group, rank, world)
    fmts = [s.dtype for s in srcs]

    def compute(by_rank):
        _shapes_agree(instr, by_rank)
        out = [_reduce(opname, [by_rank[r]["srcs"][i] for r in g], fmts[i])
               for i in range(len(fmts))]
        return {r: out for r in g}

    _write(instr, dsts, _meet(instr, g, _payload(srcs, dsts), compute))


def all_gather(srcs: List[NkiTensor], dsts: List[NkiTensor], replica_group: ReplicaGroup,
               collective_dim: int, priority: Optional[int] = None,
               name: Optional[str] = None) -> None:
    """``dsts[i]`` = every rank's ``srcs[i]`` concatenated along ``collective_dim`` in the
    sub-group's list order (HBM: dim 0; SBUF: 2-D tensors, dim 0 or 1)."""
    instr = "all_gather"
    srcs, dsts = _tensors(instr, "srcs", srcs), _tensors(instr, "dsts", dsts)
    on_chip = _space(instr, srcs, dsts)
    dim = _dim(instr, collective_dim, (0, 1) if on_chip else (0,))
    _, _, rank, world, _, _ = _where()
    g = _group(instr, replica_group, rank, world)
    n = len(g)
    for i, (s, d) in enumerate(zip(srcs, dsts)):
        want = s.shape[:dim] + (s.shape[dim] * n,) + s.shape[dim + 1:]
        if d.shape != want:
            raise ConstraintError(f"{instr}: dsts[{i}] must have shape {want} (srcs[{i}] "
                                  f"{s.shape} gathered from {n} ranks along dim {dim}), got "
                                  f"{d.shape}")

    def compute(by_rank):
        _shapes_agree(instr, by_rank)
        out = [np.concatenate([by_rank[r]["srcs"][i] for r in g], axis=dim)
               for i in range(len(srcs))]
        return {r: out for r in g}

    _write(instr, dsts, _meet(instr, g, _payload(srcs, dsts), compute))


def reduce_scatter(srcs: List[NkiTensor], dsts: List[NkiTensor], replica_group: ReplicaGroup,
                   collective_dim: int, op, priority: Optional[int] = None,
                   name: Optional[str] = None) -> None:
    """``dsts[i]`` of the rank at position ``p`` = chunk ``p`` along ``collective_dim`` (0)
    of the ``op``-reduction of ``srcs[i]`` over the sub-group (see :func:`all_reduce`)."""
    instr = "reduce_scatter"
    srcs, dsts = _tensors(instr, "srcs", srcs), _tensors(instr, "dsts", dsts)
    _space(instr, srcs, dsts)
    opname = _op(instr, op)
    dim = _dim(instr, collective_dim, (0,))
    _, _, rank, world, _, _ = _where()
    g = _group(instr, replica_group, rank, world)
    n = len(g)
    for i, (s, d) in enumerate(zip(srcs, dsts)):
        want = (d.shape[0] * n,) + d.shape[1:]
        if s.shape != want:
            raise ConstraintError(f"{instr}: srcs[{i}] must have shape {want} ({n} chunks of "
                                  f"dsts[{i}] {d.shape} along dim 0), got {s.shape}")
    fmts = [s.dtype for s in srcs]

    def compute(by_rank):
        _shapes_agree(instr, by_rank)
        red = [_reduce(opname, [by_rank[r]["srcs"][i] for r in g], fmts[i])
               for i in range(len(fmts))]
        return {r: [np.split(a, n, axis=0)[p] for a in red] for p, r in enumerate(g)}

    _write(instr, dsts, _meet(instr, g, _payload(srcs, dsts), compute))


def all_to_all(srcs: List[NkiTensor], dsts: List[NkiTensor], replica_group: ReplicaGroup,
               collective_dim: int, priority: Optional[int] = None,
               name: Optional[str] = None) -> None:
    """Chunk ``j`` (along ``collective_dim`` 0) of ``dsts[i]`` of the rank at position ``p``
    = chunk ``p`` of ``srcs[i]`` of the rank ``g[j]``.  HBM tensors only."""
    instr = "all_to_all"
    srcs, dsts = _tensors(instr, "srcs", srcs), _tensors(instr, "dsts", dsts)
    _space(instr, srcs, dsts, hbm_only=True)
    dim = _dim(instr, collective_dim, (0,))
    _, _, rank, world, _, _ = _where()
    g = _group(instr, replica_group, rank, world)
    n = len(g)
    for i, (s, d) in enumerate(zip(srcs, dsts)):
        if s.shape != d.shape or s.shape[0] % n:
            raise ConstraintError(f"{instr}: srcs[{i}] and dsts[{i}] must have one shape whose "
                                  f"dim 0 divides into {n} chunks, got {s.shape} and {d.shape}")

    def compute(by_rank):
        _shapes_agree(instr, by_rank)
        chunks = {r: [np.split(a, n, axis=0) for a in by_rank[r]["srcs"]] for r in g}
        return {r: [np.concatenate([chunks[q][i][p] for q in g], axis=0)
                    for i in range(len(srcs))] for p, r in enumerate(g)}

    _write(instr, dsts, _meet(instr, g, _payload(srcs, dsts), compute))


def collective_permute(srcs: List[NkiTensor], dsts: List[NkiTensor],
                       source_target_pairs: List[Tuple[int, int]],
                       priority: Optional[int] = None, name: Optional[str] = None) -> None:
    """For each pair ``(s, t)``: rank ``t``'s ``dsts[0]`` = rank ``s``'s ``srcs[0]``; every
    rank of the world takes part; a rank no pair targets keeps its dst.  HBM, one tensor."""
    instr = "collective_permute"
    srcs, dsts = _tensors(instr, "srcs", srcs), _tensors(instr, "dsts", dsts)
    _space(instr, srcs, dsts, hbm_only=True, single=True)
    _, _, rank, world, _, _ = _where()
    try:
        pairs = [(int(s), int(t)) for s, t in source_target_pairs]
    except (TypeError, ValueError):
        raise ConstraintError(f"{instr}: source_target_pairs must be (source, target) rank "
                              f"pairs, got {source_target_pairs!r}") from None
    for s, t in pairs:
        if not (0 <= s < world and 0 <= t < world):
            raise ConstraintError(f"{instr}: pair {(s, t)} names a rank outside the launch's "
                                  f"{world} rank(s)")
    targets = [t for _, t in pairs]
    if len(set(targets)) != len(targets):
        raise ConstraintError(f"{instr}: a rank is the target of more than one pair: {pairs}")
    if srcs[0].shape != dsts[0].shape:
        raise ConstraintError(f"{instr}: srcs[0] and dsts[0] must have the same shape, got "
                              f"{srcs[0].shape} and {dsts[0].shape}")
    everyone = tuple(range(world))
    cur = np.array(dsts[0].data, copy=True)

    def compute(by_rank):
        _shapes_agree(instr, by_rank)
        out = {r: [by_rank[r]["keep"]] for r in everyone}
        for s, t in pairs:
            out[t] = [by_rank[s]["srcs"][0]]
        return out

    p = _payload(srcs, dsts)
    p["keep"] = cur
    _write(instr, dsts, _meet(instr, everyone, p, compute))


def _by_channel(instr, pname, lists, nch):
    if not isinstance(lists, (list, tuple)) or len(lists) != nch:
        raise ConstraintError(f"{instr}: {pname} must be a list of {nch} tensor list(s), one "
                              f"per channel, got {lists!r}")
    out = []
    for c, ts in enumerate(lists):
        ts = _tensors(instr, f"{pname}[{c}]", ts)
        if len(ts) != 1:
            raise ConstraintError(f"{instr}: {pname}[{c}] must hold exactly one tensor "
                                  f"(coalesced collectives are not supported here), got "
                                  f"{len(ts)}")
        out.append(ts[0])
    return out


def _channels(instr, channel_ids):
    ids = [int(c) for c in channel_ids]
    if not ids or ids != list(range(len(ids))) or len(ids) > 4:
        raise ConstraintError(f"{instr}: channel_ids must be consecutive integers from 0 (at "
                              f"most 4), got {list(channel_ids)}")
    return len(ids)


def _ring(instr, srcs, dsts, replica_group, send):
    _, _, rank, world, _, _ = _where()
    g = _group(instr, replica_group, rank, world)
    n = len(g)
    for c, (s, d) in enumerate(zip(srcs, dsts)):
        if s.dtype is not d.dtype or s.shape != d.shape:
            raise ConstraintError(f"{instr}: channel {c}: src and dst must have one shape and "
                                  f"dtype, got {s.shape} {s.dtype.name} and {d.shape} "
                                  f"{d.dtype.name}")

    def compute(by_rank):
        _shapes_agree(instr, by_rank)
        return {r: by_rank[g[(p - 1) % n]]["srcs"] for p, r in enumerate(g)}

    payload = {"srcs": send, "dshapes": [d.shape for d in dsts]}
    _write(instr, dsts, _meet(instr, g, payload, compute))


def collective_permute_implicit(srcs_by_channel, dsts_by_channel, replica_group: ReplicaGroup,
                                channel_ids: List[int] = [0], priority: Optional[int] = None,
                                name: Optional[str] = None) -> None:
    """Ring step: each rank's ``dsts_by_channel[c][0]`` = the ``srcs_by_channel[c][0]`` of
    the rank before it in its sub-group's list (cyclic)."""
    instr = "collective_permute_implicit"
    nch = _channels(instr, channel_ids)
    srcs = _by_channel(instr, "srcs_by_channel", srcs_by_channel, nch)
    dsts = _by_channel(instr, "dsts_by_channel", dsts_by_channel, nch)
    _same_space(instr, srcs + dsts)
    _ring(instr, srcs, dsts, replica_group, [np.array(s.data, copy=True) for s in srcs])


def collective_permute_implicit_reduce(srcs0_by_channel, srcs1_by_channel, dsts_by_channel,
                                       replica_group: ReplicaGroup, op,
                                       channel_ids: List[int] = [0],
                                       priority: Optional[int] = None,
                                       name: Optional[str] = None) -> None:
    """Ring step with a reduction: each rank sends ``op(srcs0[c], srcs1[c])`` (computed in
    float32, rounded once) to the next rank; ``dsts[c]`` receives the previous rank's."""
    instr = "collective_permute_implicit_reduce"
    nch = _channels(instr, channel_ids)
    s0 = _by_channel(instr, "srcs0_by_channel", srcs0_by_channel, nch)
    s1 = _by_channel(instr, "srcs1_by_channel", srcs1_by_channel, nch)
    dsts = _by_channel(instr, "dsts_by_channel", dsts_by_channel, nch)
    opname = _op(instr, op)
    for c, (a, b) in enumerate(zip(s0, s1)):
        if a.shape != b.shape or a.dtype is not b.dtype:
            raise ConstraintError(f"{instr}: channel {c}: srcs0 and srcs1 must have one shape "
                                  f"and dtype, got {a.shape} {a.dtype.name} and {b.shape} "
                                  f"{b.dtype.name}")
    _same_space(instr, s0 + s1 + dsts)
    send = [_combine(opname, np.array(a.data), np.array(b.data), a.dtype)
            for a, b in zip(s0, s1)]
    _ring(instr, s0, dsts, replica_group, send)


def _metadata(instr, t, rows_needed, n):
    if not isinstance(t, NkiTensor) or _dt.lookup(t.dtype).name != "uint32":
        raise ConstraintError(f"{instr}: metadata_tensor must be a uint32 tensor, got "
                              f"{getattr(getattr(t, 'dtype', None), 'name', type(t).__name__)}")
    shp = t.shape[1:] if t.buffer.on_chip else t.shape
    if t.buffer.on_chip and t.shape[0] != 1:
        raise ConstraintError(f"{instr}: an SBUF metadata_tensor must be (1, rows, ranks), got "
                              f"{t.shape}")
    if len(shp) != 2 or shp[0] != rows_needed or shp[1] != n:
        raise ConstraintError(f"{instr}: metadata_tensor must be ({rows_needed}, {n}) "
                              f"(rows x ranks of the group), got {shp}")
    return t.data.reshape(rows_needed, n)


def _v(instr, srcs, dsts, replica_group, metadata_tensor, recv_counts_known, has_rdispls,
       gather):
    srcs, dsts = _tensors(instr, "srcs", srcs), _tensors(instr, "dsts", dsts)
    _space(instr, srcs, dsts, hbm_only=True, single=True)
    _, _, rank, world, _, _ = _where()
    g = _group(instr, replica_group, rank, world)
    n = len(g)
    rows = 4 if has_rdispls else 3
    meta = _metadata(instr, metadata_tensor, rows, n)
    md = np.array(meta, dtype=np.int64)
    src, dst = srcs[0], dsts[0]
    ssize, dsize = src.data.size, dst.data.size
    for j in range(n):
        cnt, disp = (md[0, 0], md[1, 0]) if gather else (md[0, j], md[1, j])
        if disp + cnt > ssize:
            raise ConstraintError(f"{instr}: send chunk [{disp}, {disp + cnt}) for position {j} "
                                  f"lies outside src ({ssize} elements)")
    payload = {"srcs": [np.array(src.data, copy=True).reshape(-1)], "meta": md,
               "dshapes": [dst.shape], "dsize": dsize,
               "cur": np.array(dst.data, copy=True).reshape(-1)}

    def compute(by_rank):
        out = {}
        for p, r in enumerate(g):
            buf = by_rank[r]["cur"].copy()
            rd = by_rank[r]["meta"]
            counts = []
            for q, s in enumerate(g):
                smd, flat = by_rank[s]["meta"], by_rank[s]["srcs"][0]
                cnt, disp = (smd[0, 0], smd[1, 0]) if gather else (smd[0, p], smd[1, p])
                at = rd[3, q] if has_rdispls else q * (by_rank[r]["dsize"] // n)
                if flat.dtype != buf.dtype:
                    raise ConstraintError(f"{instr}: rank {s} sends {flat.dtype}, rank {r} "
                                          f"receives {buf.dtype}")
                if at + cnt > buf.size:
                    raise ConstraintError(f"{instr}: the chunk from rank {s} ({cnt} elements "
                                          f"at {at}) does not fit rank {r}'s dst ({buf.size})")
                buf[at:at + cnt] = flat[disp:disp + cnt]
                counts.append(cnt)
            out[r] = [buf, np.array(counts, np.uint32)]
        return out

    got = _meet(instr, g, payload, compute)
    dst.data[...] = got[0].reshape(dst.shape)
    if not recv_counts_known:
        meta[2, :] = got[1]
    _cost.record("DMA", instr, max(MIN_II, dst.free_size))


def all_gather_v(srcs, dsts, replica_group: ReplicaGroup, metadata_tensor: NkiTensor,
                 recv_counts_known: bool = False, has_rdispls: bool = False,
                 priority: Optional[int] = None, name: Optional[str] = None) -> None:
    """Variable-length all-gather of flat element buffers: every rank sends
    ``src[send_displ : send_displ + send_count]`` (metadata rows 0/1, first column) to every
    rank; the chunk from position ``q`` lands at ``q * dst.size / n`` (or ``recv_displs[q]``,
    row 3, with ``has_rdispls``); row 2 receives the counts unless ``recv_counts_known``."""
    _v("all_gather_v", srcs, dsts, replica_group, metadata_tensor, recv_counts_known,
       has_rdispls, gather=True)


def all_to_all_v(srcs, dsts, replica_group: ReplicaGroup, metadata_tensor: NkiTensor,
                 recv_counts_known: bool = False, has_rdispls: bool = False,
                 priority: Optional[int] = None, name: Optional[str] = None) -> None:
    """Variable-length all-to-all of flat element buffers: position ``j`` receives
    ``src[send_displs[j] : send_displs[j] + send_counts[j]]`` (rows 0/1, column ``j``) of
    every rank, the chunk from position ``q`` at ``q * dst.size / n`` (or
    ``recv_displs[q]``); row 2 receives the counts unless ``recv_counts_known``."""
    _v("all_to_all_v", srcs, dsts, replica_group, metadata_tensor, recv_counts_known,
       has_rdispls, gather=False)


from .._public import make_dir as _make_dir  # noqa: E402

__dir__ = _make_dir(globals())
