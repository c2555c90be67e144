"""NKI LNC2 (two NeuronCores) instructions: ``core_barrier`` and ``sendrecv`` (SDK 2.33).

The instruction side of multi-core execution.  The two programs of an LNC2 launch
(``kernel[2]``) are the two cores, rank = ``nl.program_id(0)``.  They meet in a
rendezvous object shared by every instance of one launch.  ``nki.simulate`` runs the
programs of a launch as turn-taking threads (:mod:`fastisa.nki._launch`): a core that
waits here hands the turn to its partner, and a partner that can never arrive (it ended
or waits elsewhere) is detected at once -- every waiting core raises ConstraintError.
Programs started by other means (plain threads, each in ``language._instance``) meet
through the launch's shared-HBM list instead, and a core whose partner has not arrived
within :data:`TIMEOUT` seconds raises ConstraintError and marks the rendezvous broken, so
later calls of that launch fail at once instead of hanging.

Sources: aws-neuron-sdk ``nki/api/nki/isa/__init__.py`` (``core_barrier``, ``sendrecv``);
the NKI docs and simulator guide (github.com/aws-neuron/aws-neuron-sdk, nki/api/ and nki/guides/nki_simulator.rst) ("LNC2: two Python threads ... sendrecv / core_barrier use thread
sync").  Costs (fastisa's estimates): sendrecv DMA ``max(MIN_II, N)``, core_barrier
``MIN_II`` on its engine.
"""

from __future__ import annotations

import threading

import numpy as np

from .. import cost as _cost
from ..errors import ConstraintError
from .enums import dma_engine as _dma_engine, engine_name, ENGINE_COST_NAME
from .tensor import NkiTensor

import typing as _typing

if _typing.TYPE_CHECKING:
    from collections.abc import Sequence

    from .._types import EnumLike, Int

__all__ = ["core_barrier", "sendrecv"]

MIN_II = _cost.MIN_II
#: Seconds a core waits for its partner before raising (deadlock-free errors).
TIMEOUT = 10.0

_GROUPS: dict = {}
_GROUPS_LOCK = threading.Lock()


class _Rendezvous:
    """Meeting point of the cores of one launch: a barrier and per-pipe mailboxes."""

    def __init__(self, n, launch=None):
        self.n = n
        self.launch = launch                 # fastisa.nki._launch.Launch, when launched
        self.cond = launch.cond if launch is not None else threading.Condition()
        self.broken = None                   # the reason, once a wait timed out
        self.barrier_gen = 0
        self.barrier_count = 0
        self.mail: dict = {}                 # (pipe, sender, receiver) -> list of arrays

    def fail(self, why):
        self.broken = why
        self.cond.notify_all()

    def wait_for(self, instr, pred, what):
        if self.broken:
            raise ConstraintError(f"{instr}: {self.broken}")
        if self.launch is not None:          # turn-taking programs: no timeout needed
            from ._launch import current
            self.launch.block(current()[1], pred, what, instr)
            return
        if not self.cond.wait_for(lambda: pred() or self.broken, timeout=TIMEOUT):
            self.fail(f"the partner core never arrived ({what}) within {TIMEOUT} s: both "
                      f"programs of the LNC2 launch must run concurrently and issue matching "
                      f"calls")
        if self.broken and not pred():
            raise ConstraintError(f"{instr}: {self.broken}")


def _group(instr):
    from fastisa.nki import language
    m = language._machine()
    n = int(np.prod(m.grid))
    if n != 2:
        raise ConstraintError(f"{instr}: needs an LNC2 launch of 2 programs (kernel[2]), got "
                              f"a grid of {m.grid}")
    if m.target.name == "trn1":
        raise ConstraintError(f"{instr}: available only on NeuronCore-v3 or newer, got target "
                              f"trn1")
    launch = getattr(m, "launch", None)
    if launch is not None:                   # the cores of one rank meet
        rank = getattr(m, "rank", 0)
        with launch.cond:
            if rank not in launch.rendezvous:
                launch.rendezvous[rank] = _Rendezvous(n, launch)
        return launch.rendezvous[rank], int(m.program_id[0])
    key = id(m.shared)
    with _GROUPS_LOCK:
        g = _GROUPS.get(key)
        if g is None or g[0] is not m.shared:
            g = (m.shared, _Rendezvous(n))
            _GROUPS[key] = g
    return g[1], int(m.program_id[0])


def core_barrier(data: NkiTensor, cores: Sequence[Int], engine: EnumLike | None = None,
                 name: str | None = None) -> None:
    """Block until both cores of the LNC2 launch reach this barrier.

    Parameters
    ----------
    data : NkiTensor in shared HBM (``nl.shared_hbm``): the data the cores synchronise on.
        The SDK 2.33 docstring says it must be in shared HBM; nki-library's own
        ``bwmm_shard_on_I`` (moe_cte, dynamic block loop) passes an SBUF tensor (its block
        counter), so an on-chip tensor is accepted too: the barrier's effect, both cores
        waiting for each other, does not depend on where ``data`` is.  Private HBM (one
        core's own memory) stays an error.
    cores : ``(0, 1)`` (the only supported value).
    engine : the engine that waits (default GpSimd); accepted for the cost record.

    Raises
    ------
    ConstraintError : bad arguments, not an LNC2 launch, target trn1, or the partner core
        did not arrive within ``TIMEOUT`` seconds.

    Cost: ``MIN_II`` on the engine.
    """
    instr = "core_barrier"
    if not isinstance(data, NkiTensor):
        raise ConstraintError(f"{instr}: data must be an NkiTensor, got {type(data).__name__}")
    if data.buffer.name not in ("shared_hbm", "sbuf", "psum"):
        raise ConstraintError(f"{instr}: data must be in shared_hbm (or on chip), got "
                              f"{data.buffer.name}")
    try:
        cs = tuple(int(c) for c in cores)
    except (TypeError, ValueError):
        raise ConstraintError(f"{instr}: cores must be the tuple (0, 1), got {cores!r}") from None
    if cs != (0, 1):
        raise ConstraintError(f"{instr}: cores must be (0, 1) (the only supported value with "
                              f"LNC2), got {cs}")
    eng = engine_name(instr, engine)
    eng = "gpsimd" if eng == "unknown" else eng
    g, _ = _group(instr)
    with g.cond:
        gen = g.barrier_gen
        g.barrier_count += 1
        if g.barrier_count == g.n:
            g.barrier_count = 0
            g.barrier_gen += 1
            if g.launch is not None:
                g.launch.synchronised()
            g.cond.notify_all()
        else:
            g.wait_for(instr, lambda: g.barrier_gen != gen, "core_barrier")
    _cost.record(ENGINE_COST_NAME.get(eng, "GpSimd"), instr, MIN_II)
    _cost.barrier(domain="nki")   # the engine schedule: every engine waits at the barrier


_GPSIMD_DMA_LIMIT = {4: 1024, 2: 512, 1: 256}


def sendrecv(src: NkiTensor, dst: NkiTensor, send_to_rank: Int, recv_from_rank: Int, pipe_id: Int,
             dma_engine: EnumLike | None = None, name: str | None = None) -> None:
    """Send ``src`` to core ``send_to_rank``'s ``dst``; receive ``recv_from_rank``'s ``src``
    into this core's ``dst`` (bit copies), then wait until the pipe's exchange completes.

    Calls pair up per ``pipe_id`` in program order: the k-th call on a pipe of core a that
    sends to b is received by b's k-th call on that pipe receiving from a.  ``dst`` is
    written only after the data arrived (src is copied when sent, so ``dst`` may be
    ``src``).

    Parameters
    ----------
    src, dst : NkiTensor in SBUF, the same dtype and shape.
    send_to_rank, recv_from_rank : 0 or 1.
    pipe_id : int, the synchronisation group.
    dma_engine : ``nisa.dma_engine.dma`` (default) or ``gpsimd_dma`` (then at most 1024 /
        512 / 256 bytes per partition for 32 / 16 / 8-bit types).

    Raises
    ------
    ConstraintError : bad arguments, not an LNC2 launch, target trn1, or the partner did
        not arrive within ``TIMEOUT`` seconds.

    Cost: DMA ``max(MIN_II, N)``, N = elements per partition.
    """
    instr = "sendrecv"
    for pname, t in (("src", src), ("dst", dst)):
        if not isinstance(t, NkiTensor):
            raise ConstraintError(f"{instr}: {pname} must be an NkiTensor, got "
                                  f"{type(t).__name__}")
        if t.buffer.name != "sbuf":
            raise ConstraintError(f"{instr}: {pname} must be in sbuf, got {t.buffer.name}")
    if src.dtype is not dst.dtype:
        raise ConstraintError(f"{instr}: src and dst must have the same dtype, got "
                              f"{src.dtype.name} and {dst.dtype.name}")
    if src.shape != dst.shape:
        raise ConstraintError(f"{instr}: src and dst must have the same shape, got {src.shape} "
                              f"and {dst.shape}")
    ranks = []
    for pname, r in (("send_to_rank", send_to_rank), ("recv_from_rank", recv_from_rank)):
        if isinstance(r, bool) or not isinstance(r, (int, np.integer)) or int(r) not in (0, 1):
            raise ConstraintError(f"{instr}: {pname} must be 0 or 1, got {r!r}")
        ranks.append(int(r))
    if isinstance(pipe_id, bool) or not isinstance(pipe_id, (int, np.integer)):
        raise ConstraintError(f"{instr}: pipe_id must be an integer, got {pipe_id!r}")
    mode = "dma" if dma_engine is None else getattr(dma_engine, "name", dma_engine)
    if mode not in _dma_engine.__members__:
        raise ConstraintError(f"{instr}: dma_engine must be nisa.dma_engine.dma or gpsimd_dma, "
                              f"got {dma_engine!r}")
    nbytes = src.free_size * src.itemsize
    if mode == "gpsimd_dma" and nbytes > _GPSIMD_DMA_LIMIT.get(src.itemsize, 1024):
        raise ConstraintError(f"{instr}: with dma_engine gpsimd_dma at most "
                              f"{_GPSIMD_DMA_LIMIT.get(src.itemsize, 1024)} bytes per partition "
                              f"for {8 * src.itemsize}-bit types, got {nbytes}")
    to, frm = ranks
    g, me = _group(instr)
    pipe = int(pipe_id)
    payload = np.array(src.data, copy=True)
    with g.cond:
        if g.broken:
            raise ConstraintError(f"{instr}: {g.broken}")
        g.mail.setdefault((pipe, me, to), []).append(payload)
        g.cond.notify_all()
        box = g.mail.setdefault((pipe, frm, me), [])
        if box and g.launch is not None:     # the partner is here: the two meet now
            g.launch.synchronised()
        g.wait_for(instr, lambda: len(box) > 0, f"sendrecv on pipe {pipe}")
        got = box.pop(0)
    if got.shape != dst.shape or got.dtype != dst.data.dtype:
        raise ConstraintError(f"{instr}: core {frm} sent shape {got.shape} {got.dtype}, but "
                              f"this core's dst is {dst.shape} {dst.dtype.name}")
    dst.data[...] = got
    _cost.record("DMA", instr, max(MIN_II, src.free_size))
