"""Per-signature plans of the NKI elementwise instructions (issue 15; see :mod:`fastisa.plans`).

``tensor_scalar``, ``tensor_tensor`` and ``tensor_copy`` are re-exported by ``nki.isa``
from here.  Each call builds its signature (the instruction, every option, and for every
tensor operand its type, storage shape, strides, writeability, dtype and buffer; for a
scalar operand its Python type) and looks it up:

* a miss runs the instruction in :mod:`fastisa.nki._compute`, which checks every
  documented rule; when it succeeds the kernel call it made (recorded by ``_run_ew``) and
  the cost it recorded become the signature's plan, if the plan can reproduce them
  (float arithmetic or a copy, one kernel call, no activation table or accumulator, the
  operands viewable as [P, F] without a copy);
* a hit runs the plan: the elementwise C kernel with the stored arguments, the data
  pointers and scalar operands of this call, then the same PSUM bookkeeping and the same
  :func:`fastisa.cost.record` call.  The plan itself checks what depends on values (a
  source that overlaps dst in another layout, an operand tensor overlapping dst, a scalar
  beyond float32's range) and hands such a call to the full path, which copies or warns
  exactly as it always does.

Signatures the plan cannot reproduce (bitvec ops, whose integer scalars are range-checked
per value; unary ops given an operand; ops that depend on the target) always take the full
path.
"""

from __future__ import annotations

import threading

import numpy as np

from .. import cost as _cost
from .. import plans as _plans
from .._kernels import nki as _k
from sys import _getframe

from . import _compute as _c
from . import _pe
from .tensor import PSUM, NkiTensor, note_access

__all__ = ["tensor_scalar", "tensor_tensor", "tensor_copy"]

_CACHE: dict = _plans.register({})
_ON = _plans.ON
_sig = _k.tensor_sig
_key = _k.plan_key
_k.set_tensor_class(NkiTensor)
_k_pending = _k.pending
_ACTIVE = _cost._ACTIVE
_k.set_plan_env(_CACHE, _cost.RECORD_HOOKS, _cost._ACTIVE, note_access, PSUM, _c._f32_vec,
                _c._threads)
_SCALARS = (float, int, np.float32, np.float64)
_NOPLAN = False         # a signature the plan cannot reproduce: always the full path


class _Capture:
    """Record the kernel calls and cost records of one full-path call (this thread)."""

    def __enter__(self):
        self.calls = _c._PLAN_CAPTURE.calls = []
        self.records = []
        self.thread = threading.get_ident()
        _cost.RECORD_HOOKS.insert(0, self._hook)
        return self

    def _hook(self, engine, instruction, cycles):
        if threading.get_ident() == self.thread:     # not another thread's instruction
            self.records.append((engine, instruction, cycles))

    def __exit__(self, *exc):
        _c._PLAN_CAPTURE.calls = None
        try:
            _cost.RECORD_HOOKS.remove(self._hook)
        except ValueError:
            pass
        return False


def _view2(t):
    """[P, F] strides (elements) of t's storage when it is a view without a copy."""
    d = t.data
    v = d.view()
    try:
        v.shape = (t.partitions, t.free_size)
    except (AttributeError, ValueError):
        return None
    it = d.itemsize
    return (v.strides[0] // it, v.strides[1] // it)


def _build(cap, psum_params, operands, head):
    """The plan of a successful full-path call, or _NOPLAN."""
    if len(cap.calls) != 1 or len(cap.records) != 1 or type(cap.calls[0]) is not tuple:
        return _NOPLAN          # several kernel calls, or a check that read the target
    dst, in0, in1, stages, raw, bitvec, act, acc, lut_ok, intmode = cap.calls[0]
    if bitvec or act is not None or acc is not None:
        return _NOPLAN
    ts = [t for t in (dst, in0, in1) if t is not None]
    if any(type(t) is not NkiTensor or type(t.data) is not np.ndarray for t in ts):
        return _NOPLAN
    sts = [_view2(t) for t in ts]
    if any(s is None for s in sts):
        return _NOPLAN
    pst = []
    conv = []
    for (alu, rev, tensor, fvec, uvec), v in zip(stages, operands):
        if uvec is not None:
            return _NOPLAN
        if fvec is None:
            if v is not None:
                return _NOPLAN          # a unary op's operand is checked per value
            pst.append((alu, rev, tensor, 0, 0))
            conv.append(False)
        elif type(v) is NkiTensor:
            if type(v.data) is not np.ndarray:
                return _NOPLAN
            if v.dtype.name == "float32":
                pst.append((alu, rev, tensor, 2, v.data.strides[0] // 4))
                conv.append(False)
            else:                        # converted to float32 on each call
                pst.append((alu, rev, tensor, 2, 1))
                conv.append(True)
        elif type(v) in _SCALARS:
            if type(v) is int and not -(1 << 24) <= v <= (1 << 24):
                return _NOPLAN          # exactness of the int -> float32 path not assumed
            pst.append((alu, rev, tensor, 1, 0))
            conv.append(False)
        else:
            return _NOPLAN
    P, F = dst.partitions, dst.free_size
    plan = _k.EwPlan(P, F, dst.dtype.code, dst.dtype.itemsize, sts[0], in0.dtype.code, sts[1],
                     in0.dtype.itemsize, None if in1 is None else in1.dtype.code,
                     None if in1 is None else sts[2],
                     0 if in1 is None else in1.dtype.itemsize, tuple(pst), int(raw),
                     int(intmode), [(t.dtype, t.buffer) for t in ts + [v for v in operands
                                                                       if type(v) is NkiTensor]])
    plan.finish(conv[0], conv[1], psum_params, cap.records[0], head)
    return plan


# The public functions keep the parameter names of the full path.  While a cost profile is
# active, the plan path names the operands the full path's record infers from its frame
# (fastisa.schedule.infer_operands: the tensor parameters, dst written, in order), which
# saves reading the frame.

def tensor_scalar(dst, data, op0, operand0, reverse0=False, op1=None, operand1=None,
                  reverse1=False, engine=None, name=None):
    if _ON[0]:
        try:
            r = _k.hit_ts(dst, data, op0, operand0, reverse0, op1, operand1, reverse1, engine)
        except TypeError:               # an unhashable argument: never cached
            r = False
        if r is True:                   # ran; recording would do nothing
            return None
        if r is None:
            head = ("tensor_scalar", op0, reverse0, op1, reverse1, engine)
            key = _key(head, dst, data, operand0, operand1)
            with _Capture() as cap:
                _c.tensor_scalar(dst, data, op0, operand0, reverse0, op1, operand1, reverse1,
                                 engine, name)
            _plans.store(_CACHE, key, _build(cap, dst.buffer is PSUM or data.buffer is PSUM,
                                             (operand0, operand1), head))
            return None
        if r is not False:
            if _ACTIVE.get():
                _cost.record(*r, reads=[t for t in (data, operand0, operand1)
                                        if t.__class__ is NkiTensor], writes=[dst],
                             domain="nki")
            else:
                _cost.record(*r)
            return None
    return _c.tensor_scalar(dst, data, op0, operand0, reverse0, op1, operand1, reverse1,
                            engine, name)


def tensor_tensor(dst, data1, data2, op, engine=None, name=None):
    if _ON[0]:
        try:
            # behind an overlapped nc_matmul (kernel code in nki.simulate): deferred
            r = _k.hit_tt(dst, data1, data2, op, engine,
                          1 if _k_pending() and _pe._overlap_ok(_getframe(1)) else 0)
        except TypeError:
            r = False
        if r is True:                   # ran; recording would do nothing
            return None
        if r is None:
            head = ("tensor_tensor", op, engine)
            key = _key(head, dst, data1, data2)
            with _Capture() as cap:
                _c.tensor_tensor(dst, data1, data2, op, engine, name)
            _plans.store(_CACHE, key, _build(cap, any(t.buffer is PSUM
                                                      for t in (dst, data1, data2)),
                                             (None, None), head))
            return None
        if r is not False:
            if _ACTIVE.get():
                _cost.record(*r, reads=[data1, data2], writes=[dst], domain="nki")
            else:
                _cost.record(*r)
            return None
    return _c.tensor_tensor(dst, data1, data2, op, engine, name)


def tensor_copy(dst, src, engine=None, name=None, dtype=None):
    if dtype is not None:
        src = _c.tensor_copy_dtype(dst, src, dtype, engine)
    if _ON[0]:
        try:
            r = _k.hit_tc(dst, src, engine)
        except TypeError:
            r = False
        if r is True:                   # ran; recording would do nothing
            return None
        if r is None:
            head = ("tensor_copy", engine)
            key = _key(head, dst, src)
            with _Capture() as cap:
                _c.tensor_copy(dst, src, engine, name)
            _plans.store(_CACHE, key, _build(cap, dst.buffer is PSUM or src.buffer is PSUM,
                                             (None, None), head))
            return None
        if r is not False:
            if _ACTIVE.get():
                _cost.record(*r, reads=[src], writes=[dst], domain="nki")
            else:
                _cost.record(*r)
            return None
    return _c.tensor_copy(dst, src, engine, name)


for _f in (tensor_scalar, tensor_tensor, tensor_copy):   # the full path's documentation
    _f.__doc__ = getattr(_c, _f.__name__).__doc__
    _f.__wrapped__ = getattr(_c, _f.__name__)
del _f
