"""The programs of one SPMD / LNC launch (``kernel[n]``): threads that take turns.

Every program of a launch with more than one program runs in its own thread (as the
official simulator runs the two programs of an LNC2 launch; the NKI simulator guide,
github.com/aws-neuron/aws-neuron-sdk ``nki/guides/nki_simulator.rst``: "LNC2: two Python
threads ... sendrecv / core_barrier use thread sync"), but only one program runs at a
time: the one holding the launch's *turn*.  A program keeps the turn until it finishes or
waits for another program (``core_barrier``, ``sendrecv``), and then hands it to the next
program, in program order, that can run.  So

* programs that never synchronise run one after the other, in program order (program 0
  to its end, then program 1 ...), exactly as a sequential launch: deterministic;
* programs that synchronise run concurrently: each runs up to its barrier, the turn
  passes, and all continue once every one arrived; the interleaving is deterministic too;
* a program that waits for a partner that never comes (it finished, failed, or waits for
  something else) is found the moment no program can run, and every waiting program
  raises ConstraintError saying which program is where: no hang, no timeout.

The launch also watches shared HBM (``nl.shared_hbm``, the inputs and outputs every program
sees) for a write-after-write race between programs: when a program writes bytes another
program wrote since the last synchronisation of the two (a completed ``core_barrier`` or
``sendrecv``), the order of the two writes on hardware depends on the cores' timing, and
fastisa's result (the later program's bytes, as the programs run in order) is only one of
the possible ones; :class:`~fastisa.errors.UndefinedBehaviorWarning` says so, once per
tensor and pair of programs.
"""

from __future__ import annotations

import sys
import warnings
import weakref

import numpy as np

from .. import cost as _cost
from .. import schedule as _sched
from .._turns import Turns
from ..errors import ConstraintError, UndefinedBehaviorWarning

__all__ = ["Launch", "current"]


class Launch(Turns):
    """Turn-taking scheduler (:class:`fastisa._turns.Turns`) and shared-HBM race detector of
    one launch of ``n`` programs."""

    noun = "program"

    def __init__(self, n: int, program_ids=None, labels=None):
        program_ids = list(program_ids) if program_ids is not None else \
            [(i,) for i in range(n)]
        super().__init__(n, [str(p[0]) if len(p) == 1 else str(p) for p in program_ids])
        self.program_ids = program_ids
        #: how errors and warnings name program i ("program 1", "rank 2 core 0")
        self.labels = list(labels) if labels is not None else \
            [f"program {p[0] if len(p) == 1 else p}" for p in program_ids]
        self.rendezvous = {}               # rank -> fastisa.nki._multicore's meeting point
        # shared-HBM write-after-write detection
        self._writers: dict = {}           # id(owner) -> (weakref(owner), int16[nbytes])
        self._warned: set = set()

    def label(self, i: int) -> str:
        return self.labels[i]

    def _describe(self) -> str:
        parts = self._states()
        return ("the partner core never arrives (" + "; ".join(parts) + "): every program "
                "of the launch must issue matching core_barrier / sendrecv / collective calls")

    # ---- shared-HBM races ---------------------------------------------------------------
    def synchronised(self) -> None:
        """The programs synchronised (a barrier or exchange completed): earlier writes are
        ordered before later ones."""
        self._writers.clear()

    def _entry(self, t):
        """t's storage, its owner, the owner's key, the owner's (ref, programs, seen) byte
        record (made on first use) and t's byte offset in the owner."""
        from .tensor import _owner
        d = t.data
        own = _owner(d)
        key = id(own)
        ent = self._writers.get(key)
        if ent is None or ent[0]() is not own:
            n = max(own.nbytes, 1)
            ent = (weakref.ref(own), np.zeros(n, np.int16), np.zeros(n, np.uint8))
            self._writers[key] = ent
        off = d.__array_interface__["data"][0] - own.__array_interface__["data"][0]
        return d, own, key, ent, off

    def note_write(self, me: int, t) -> None:
        """Program ``me`` wrote shared-HBM tensor ``t``: warn when it overwrote bytes another
        program wrote since the last synchronisation."""
        d, own, key, ent, off = self._entry(t)
        shape = d.shape + (d.itemsize,)

        def view(arr):                     # one entry per byte of the owner, shaped like d
            w = arr.itemsize
            return np.lib.stride_tricks.as_strided(arr[off:], shape=shape,
                                                   strides=tuple(w * s for s in d.strides) + (w,))
        st, seen = view(ent[1]), view(ent[2])
        now = _bytes_of(d)
        self._check(me, t, own, key, st, seen, now)

    def note_write_elements(self, me: int, t, base, elems: np.ndarray) -> None:
        """Program ``me`` wrote elements ``elems`` (flat indices into ``base``'s
        C-contiguous data, elements of ``t.dtype``) of shared-HBM tensor ``base`` through
        the dynamic (``vector_offset`` / ``scalar_offset``) view ``t``: the same race check
        as :meth:`note_write`, on the bytes those elements cover."""
        d, own, key, ent, off = self._entry(base)
        it = t.dtype.itemsize
        rel = (elems.reshape(-1).astype(np.int64)[:, None] * it
               + np.arange(it, dtype=np.int64)).reshape(-1)    # bytes of base (contiguous)
        b = off + rel                                          # bytes of the owner
        now = d.reshape(-1).view(np.uint8)[rel]
        st, seen = ent[1][b], ent[2][b]
        self._check(me, t, own, key, st, seen, now)
        ent[1][b] = st
        ent[2][b] = seen

    def _check(self, me, t, own, key, st, seen, now) -> None:
        mine = me + 1
        # a race that changes bytes: written by another program since the last sync, and
        # now different (both writing the same bytes is benign)
        hit = (st != 0) & (st != mine) & (seen != now)
        if hit.any():
            for o in np.unique(st[hit]):
                k = (key, int(o) - 1, me)
                if k in self._warned:
                    continue
                self._warned.add(k)
                a, b = self.labels[int(o) - 1], self.labels[me]
                what = f"{t.name!r}" if getattr(t, "name", "") else \
                    f"of shape {tuple(own.shape)} {getattr(t.dtype, 'name', t.dtype)}"
                warnings.warn(
                    f"nki launch: {b} overwrote bytes of shared_hbm tensor {what} "
                    f"that {a} wrote with other values, with no core_barrier/sendrecv "
                    f"between them: a write-after-write race between cores (on hardware the "
                    f"result depends on their timing; fastisa runs the programs in order, so "
                    f"{b}'s bytes are kept)",
                    UndefinedBehaviorWarning, stacklevel=5)
        st[...] = mine
        seen[...] = now


def _bytes_of(d: np.ndarray) -> np.ndarray:
    """The bytes of the view ``d``, shaped ``d.shape + (itemsize,)`` (a copy)."""
    c = np.ascontiguousarray(d).reshape(-1)
    return c.view(np.uint8).reshape(d.shape + (d.itemsize,))


def current():
    """(Launch, program index) of the running program, or (None, 0)."""
    # (sys.modules, not an import statement: this runs after every instruction, issue 15)
    language = sys.modules.get("fastisa.nki.language")
    if language is None:            # never imported: no kernel instance, no launch
        return None, 0
    m = language._MACHINE.get()
    if m is None:
        return None, 0
    return getattr(m, "launch", None), getattr(m, "launch_index", 0)


def _dynamic_view(v) -> bool:
    """An ``.ap(vector_offset= / scalar_offset=)`` view: its elements depend on runtime
    indices (and with ``oob_mode.skip`` may lie partly outside its tensor): tracked for
    races through the element indices it reaches (:meth:`Launch.note_write_elements`)."""
    spec = getattr(v, "_spec", None)
    return spec is not None and (spec[4] is not None or spec[3] is not None
                                 or bool(getattr(v, "_scalar_dyn", False)))


def _record_hook(engine, instruction, cycles) -> None:
    """After each instruction of a multi-program launch: the shared-HBM tensors it wrote
    (its ``dst``-like parameters, as the engine schedule infers them)."""
    launch, me = current()
    if launch is None or launch.n < 2:
        return
    if launch.aborted is not None:
        raise ConstraintError(f"{instruction}: {launch.aborted}")
    from .tensor import NkiTensor
    f = sys._getframe(2)                   # hook <- cost.record <- the instruction
    while f is not None:
        code = f.f_code
        loc = f.f_locals
        for k in code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]:
            if k in _sched._WRITE_NAMES:
                v = loc.get(k)
                if isinstance(v, NkiTensor) and v.buffer.name == "shared_hbm":
                    if not _dynamic_view(v):
                        launch.note_write(me, v)
                    else:
                        got = v._written_elements()
                        if got is not None:
                            launch.note_write_elements(me, v, *got)
        if not code.co_name.startswith("_"):
            break
        f = f.f_back
        if f is None or not f.f_globals.get("__name__", "").startswith("fastisa."):
            break


if _record_hook not in _cost.RECORD_HOOKS:
    _cost.RECORD_HOOKS.append(_record_hook)
