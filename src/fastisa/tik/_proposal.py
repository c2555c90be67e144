"""TIK region-proposal field moves: vconcat (16 values into one field of 16 proposals per
repeat) and vextract (one field of 16 proposals out into 16 values per repeat).

A region proposal is 8 consecutive elements; field ``mode_number`` is 0 x1, 1 y1, 2 x2,
3 y2, 4 score, 5 label.  Repeat r, k < 16 (CANN TIK API reference vconcat/vextract; the
2020 TIK source caffe-huawei-atlas-convertor ``convertor/huawei/te/tik/tik_lib/
tik_proposal_api_.py``: src/dst extents ``repeat_times*16`` values and
``repeat_times*16*8`` proposal elements, both contiguous):

    vconcat:  dst[(16*r + k)*8 + mode_number] = src[16*r + k]
    vextract: dst[16*r + k] = src[(16*r + k)*8 + mode_number]

The other proposal fields keep their contents.  A bit copy of the elements (float16;
float32 not on Ascend 310/910).  The whole source is read before anything is written.
The copy is one strided numpy assignment over the UB bytes (no per-element Python loop).
"""

from __future__ import annotations

import numpy as np

from .. import cost
from ..errors import AccessError, AlignmentError, ConstraintError
from . import _program as P
from ._base import VECTOR_ISSUE_CYCLES, _check_int, _check_repeat, _is_dyn, _Operand
from ._program import Expr, scope_ubuf

__all__ = ["ProposalMixin"]

_UT = {2: np.uint16, 4: np.uint32}


def _ival(v, env):
    return int(v.fn(env) if isinstance(v, Expr) else v)


class _FieldMove:
    def __init__(self, tik, name, dst, src, repeat_times, mode_number):
        self.name = name
        for pn, x in (("dst", dst), ("src", src), ("repeat_times", repeat_times),
                      ("mode_number", mode_number)):
            P.check_owner(tik, name, pn, x)
        self.d, self.s = _Operand(name, "dst", dst), _Operand(name, "src", src)
        for o in (self.d, self.s):
            if o.t.scope != scope_ubuf:
                raise ConstraintError(f"{name}: {o.role}'s scope must be UB, input scope: "
                                      f"{o.t.scope}")
        if self.d.t.dtype != self.s.t.dtype:
            raise ConstraintError(f"{name}: Intrinsic {name}'s src's dtype should be equal to "
                                  f"dst's dtype, input: {self.s.t.dtype} vs {self.d.t.dtype}")
        tg = tik.target
        if not tg.supports(name, self.d.t.dtype):
            raise ConstraintError(f"{name}: dtype {self.d.t.dtype} is not supported on "
                                  f"{tg.name} (supported: {list(tg.dtypes.get(name, ()))})")
        _check_repeat(name, repeat_times)
        _check_int(name, "mode_number", mode_number, 0, 5)
        self.args = (repeat_times, mode_number)
        self.concat = name == "vconcat"
        self.dyn = any(_is_dyn(a) for a in self.args) or self.d.off is None or \
            self.s.off is None
        self._v = None if self.dyn else self._resolve(None)

    def _resolve(self, env):
        name = self.name
        nrep, mode = (_ival(a, env) for a in self.args)
        if not 0 <= nrep <= 255:
            raise ConstraintError(f"{name}: repeat_times should be in the range of [0, 255], "
                                  f"input repeat_times: {nrep}")
        if not 0 <= mode <= 5:
            raise ConstraintError(f"{name}: mode_number should be in the range of [0, 5], "
                                  f"input value is {mode}")
        n = nrep * 16
        out = []
        for o, need in ((self.d, n * 8 if self.concat else n),
                        (self.s, n if self.concat else n * 8)):
            st = o.off if o.off is not None else int(o.off_fn(env))
            if st < 0:
                raise AccessError(f"{name}: {o.role} start element must be >= 0, got {st}")
            addr = o.t.byte_off + st * o.es
            if addr % 32:
                raise AlignmentError(f"{name}: Address align error! {o.role} ({o.t.name}[{st}])"
                                     f" address {addr} is not 32 align")
            if st + need > o.t.size:
                raise AccessError(f"{name}: `{o.t.name}` tensor overflow, instruction need "
                                  f"{'write' if o is self.d else 'read'} {st + need} elements "
                                  f"but only {o.t.size} elements space")
            out.append(addr)
        return out[0], out[1], n, mode

    def run(self, st):
        v = self._v if self._v is not None else self._resolve(st.env)
        da, sa, n, mode = v
        if n == 0:
            return
        es = self.d.es
        ub = st.bufs[1]
        ut = _UT[es]
        if self.concat:
            src = ub[sa:sa + n * es].view(ut).copy()
            ub[da:da + n * 8 * es].view(ut)[mode::8] = src
        else:
            src = ub[sa:sa + n * 8 * es].view(ut)[mode::8].copy()
            ub[da:da + n * es].view(ut)[:] = src
        if cost._ACTIVE.get():
            cost.record("Vector", self.name, VECTOR_ISSUE_CYCLES + n // 16)


class ProposalMixin:
    """vconcat / vextract, mixed into :class:`fastisa.tik.Tik`."""

    def vconcat(self, dst, src, repeat_times, mode_number):
        """Per repeat r, k < 16: dst[(16r+k)*8 + mode_number] = src[16r+k] (the field
        ``mode_number`` of 16 proposals; 0 x1, 1 y1, 2 x2, 3 y2, 4 score, 5 label; the
        other fields kept).  dst/src: UB, one dtype (float16; float32 not on Ascend
        310/910), 32-byte aligned; dst needs repeat_times*128, src repeat_times*16
        elements.  repeat_times [1, 255] (Scalar [0, 255]); mode_number [0, 5].  Raises
        ConstraintError, AccessError, AlignmentError."""
        self._record(_FieldMove(self, "vconcat", dst, src, repeat_times, mode_number))

    def vextract(self, dst, src, repeat_times, mode_number):
        """Per repeat r, k < 16: dst[16r+k] = src[(16r+k)*8 + mode_number] (the inverse of
        vconcat; same rules, src needs repeat_times*128 and dst repeat_times*16
        elements)."""
        self._record(_FieldMove(self, "vextract", dst, src, repeat_times, mode_number))
