"""Per-signature plans of the SDK 2.33 data-movement and statistics instructions
(``dma_transpose``, ``dma_compute``, ``nc_stream_shuffle``, ``bn_stats``, ``bn_aggr``);
see :mod:`fastisa.plans` for the scheme.

Each of those instructions starts by building its signature here: the instruction's name,
per tensor operand its format and buffer (by identity), its storage's rank, writeability,
shape and strides (``fastisa._kernels.nki.plan_key``), and its options by type and value.
A call whose signature has a plan skips the checks that depend only on the signature and
runs the kernel with the plan's derived arguments; what depends on values -- where the
operands are in memory (overlap, the start partition) -- is checked again on every call,
and a call that fails such a check takes the full path, which raises or copies exactly as
it always does.  A plan is stored only after the full path succeeded, and only for
operands the plan can reproduce: exact :class:`NkiTensor` objects over numpy arrays,
none in PSUM (whose accesses the full path notes).  The instruction records its cost
from its own frame on both paths, so profiles and record hooks see the same operands.
"""

from __future__ import annotations

import enum

import numpy as np

from .. import plans as _plans
from .._kernels import nki as _knki
from . import ops as _ops
from ._compute import _threads
from .tensor import PSUM, NkiTensor

__all__ = ["CACHE", "ON", "key", "plannable"]

CACHE: dict = _plans.register({})
ON = _plans.ON
_plan_key = _knki.plan_key
_knki.set_tensor_class(NkiTensor)

# speed14 branch (issue 14): the key heads of the instructions whose plan hit paths are
# compiled (fastisa._kernels.nki.hit_transpose / hit_shuffle / hit_dma_sum), handed to
# them once so that both paths build the same keys.
HEAD_T = ("dma_transpose",)
HEAD_S = ("nc_stream_shuffle",)
HEAD_C = ("dma_compute",)
_knki.set_isa_plan_env(CACHE, HEAD_T, HEAD_S, HEAD_C, _threads)
_ND = np.ndarray
_ATOMS = (int, bool, str, float, type(None))


def _opt(v):
    """(type, value) of an option, or raise TypeError when it cannot be part of a key."""
    c = v.__class__
    if c in _ATOMS or isinstance(v, (enum.Enum, _ops.Op)):
        return c, v
    if c is tuple or c is list:
        if all(e.__class__ in _ATOMS for e in v):
            return c, tuple(v)
    raise TypeError("not a plan option")


def key(head: tuple, tensors, opts=()):
    """The signature of one call (hashable), or None when an operand is not an exact
    NkiTensor over a numpy array or an option cannot be part of a key (no plan)."""
    for t in tensors:
        if t.__class__ is not NkiTensor or t.data.__class__ is not _ND:
            return None
    n = len(tensors)
    try:                    # TypeError: no key (a view that does not resolve, rank too high)
        if n == 2:
            k = _plan_key(head, tensors[0], tensors[1])
        elif n <= 4:
            k = _plan_key(head, *tensors) if n > 1 else _plan_key(head, tensors[0], None)
        else:
            k = (n, *[_plan_key(head if i == 0 else (), *tensors[i:i + 4], *(None,) * (
                4 - len(tensors[i:i + 4]))) for i in range(0, n, 4)])
    except TypeError:
        return None
    for v in opts:
        if v is not None:
            try:
                return k, tuple(map(_opt, opts))
            except TypeError:
                return None
    return k


def plannable(*tensors) -> bool:
    """No operand in PSUM (the full path notes each PSUM access)."""
    return all(t.buffer is not PSUM for t in tensors)


def store(k, plan) -> None:
    _plans.store(CACHE, k, plan)
