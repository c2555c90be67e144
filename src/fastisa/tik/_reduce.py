"""TIK reductions (vcadd, vcmax, vcmin, vec_reduce_add/max/min) on the walker's reduce
entry (``csrc/fastisa/walker.h``)."""

from __future__ import annotations

import numpy as np

from .._kernels import walker as _w
from ..errors import AccessError, AlignmentError, ConstraintError
from . import _program as P
from ._base import (VECTOR_ISSUE_CYCLES, _Operand, _check_int, _check_repeat, _s64,
                    _timed)
from ._program import Expr, scope_ubuf
from ._vector import _Vector

class _Reduce:
    """vcadd/vcmax/vcmin (per repeat) and vec_reduce_add/max/min (whole) -- one C
    reduction kernel over the same lane addressing as the walker."""

    def __init__(self, tik, name, op, mask, dst, src, repeat_times, dst_rep, src_blk,
                 src_rep, whole, work=None, pair=False):
        self.name = name
        self.whole = whole
        self.pair = pair  # vcmax/vcmin: [value, index] pairs, dst_rep_stride in pairs
        for pname, x in (("dst", dst), ("src", src), ("work_tensor", work), ("mask", mask),
                         ("repeat_times", repeat_times), ("dst_rep_stride", dst_rep),
                         ("src_blk_stride", src_blk), ("src_rep_stride", src_rep)):
            P.check_owner(tik, name, pname, x)
        # reuse _Vector's validation of mask/repeat/strides with dst treated as 1 lane
        self.v = _Vector.__new__(_Vector)
        v = self.v
        v.tik, v.name, v.op, v.family = tik, name, op, "un"
        v.ops = [_Operand(name, "dst", dst), _Operand(name, "src", src)]
        for o in v.ops:
            if o.t.scope != scope_ubuf:
                raise ConstraintError(f"{name}: {o.role} scope should be ub, input scope: "
                                      f"{o.t.scope}")
        d = v.ops[0].t.dtype
        if v.ops[1].t.dtype != d:
            raise ConstraintError(f"{name}: Intrinsic {name}'s src's dtype should be equal to "
                                  f"dst's dtype, input: {v.ops[1].t.dtype} vs {d}")
        if not tik.target.supports(name, d):
            raise ConstraintError(f"{name}: dtype {d} is not supported on {tik.target.name}")
        v.par = 256 // v.ops[1].es
        v.counter = False
        v.mask = mask
        v._check_mask_static()
        _check_repeat(name, repeat_times)
        _check_int(name, "dst_rep_stride", dst_rep, 0, 255)
        _check_int(name, "src_blk_stride", src_blk, 0, 65535)
        _check_int(name, "src_rep_stride", src_rep, 0, 255)
        v.nrep = repeat_times
        v.sat = 1 if tik.target.saturation else 0
        self.work = _Operand(name, "work_tensor", work) if work is not None else None
        self.args = (dst_rep, src_blk, src_rep)

    def run(self, st):
        v = self.v
        env = st.env
        lo, hi, counter, nrep, tail = v._mask_value(env)
        if nrep == 0:
            return
        dst_rep, src_blk, src_rep = (int(a.fn(env) if isinstance(a, Expr) else a)
                                     for a in self.args)
        for n, x, hi_ in (("dst_rep_stride", dst_rep, 255), ("src_blk_stride", src_blk, 65535),
                          ("src_rep_stride", src_rep, 255)):
            if not 0 <= x <= hi_:
                raise ConstraintError(f"{self.name}: {n} should be in the range of [0, {hi_}], "
                                      f"input {n}: {x}")
        d, s = v.ops
        ds = d.off if d.off is not None else int(d.off_fn(env))
        ss = s.off if s.off is not None else int(s.off_fn(env))
        for o, st_ in ((d, ds), (s, ss)):
            if st_ < 0:
                raise AccessError(f"{self.name}: {o.role} start must be >= 0, got {st_}")
            # vcadd's dst needs element alignment only (TIK debugger simd.py: dst_align =
            # the dtype size), which t[i] always has
            if (o.t.byte_off + st_ * o.es) % (o.es if o is d and self.name == "vcadd" else 32):
                raise AlignmentError(f"{self.name}: Address align error! {o.role} address "
                                     f"{o.t.byte_off + st_ * o.es} is not 32 align")
        v.ops_src = [s]
        B = s.B
        bits = np.array([(lo >> i) & 1 if i < 64 else (hi >> (i - 64)) & 1
                         for i in range(v.par)], dtype=bool)
        lanes = np.arange(v.par)[bits]
        mx = (nrep - 1) * src_rep * B + int(((lanes // B) * src_blk * B + lanes % B).max())
        if ss + mx + 1 > s.t.size:
            raise AccessError(f"{self.name}: `{s.t.name}` tensor overflow, instruction need "
                              f"read {ss + mx + 1} elements but only {s.t.size} elements space")
        if self.pair:
            dlast = ds + (nrep - 1) * dst_rep * 2 + 1
        else:
            dlast = ds + (0 if self.whole else (nrep - 1) * dst_rep)
        if dlast + 1 > d.t.size:
            raise AccessError(f"{self.name}: `{d.t.name}` tensor overflow, instruction need "
                              f"write {dlast + 1} elements but only {d.t.size} elements space")
        p = np.zeros(_w.NPARAM, dtype=np.int64)
        p[0] = v.op
        p[1] = p[2] = s.code
        p[3] = -1
        p[8] = src_blk
        p[11] = src_rep
        p[13] = nrep
        p[14] = v.par
        p[15] = _s64(lo)
        p[16] = _s64(hi)
        p[19] = v.sat
        b = st.bufs
        p[5] = s.t.byte_off + ss * s.es
        if self.pair:
            p[4] = d.t.byte_off + ds * d.es
            p[10] = dst_rep * 2
            _w.reduce_arg(p, b[1], b[1])
            _timed(self, "Vector", self.name, VECTOR_ISSUE_CYCLES + nrep, v.ops[1:], v.ops[:1])
            return
        if not self.whole:
            p[4] = d.t.byte_off + ds * d.es
            p[10] = dst_rep
            _w.reduce(p, b[1], b[1])
            _timed(self, "Vector", self.name, VECTOR_ISSUE_CYCLES + nrep, v.ops[1:], v.ops[:1])
            return
        # whole reduction: per-repeat results (rounded to the dtype) into a scratch row,
        # then reduce those PAR at a time (counter-style) until one value is left; this is
        # how TIK builds vec_reduce_* from vcadd/vcmax/vcmin.
        es = s.es
        scratch = np.zeros(((nrep + v.par - 1) // v.par * v.par) * es + 32, dtype=np.uint8)
        p[4] = 0
        p[10] = 1
        _w.reduce(p, scratch, b[1])
        cyc = VECTOR_ISSUE_CYCLES + nrep
        n = nrep
        while n > 1:
            q = p.copy()
            q[5] = 0
            q[8] = 1
            q[11] = 8
            q[13] = -(-n // v.par)
            q[15] = q[16] = -1
            q[17] = 1
            q[18] = n - (q[13] - 1) * v.par
            tmp = scratch.copy()
            _w.reduce(q, scratch, tmp)
            cyc += VECTOR_ISSUE_CYCLES + int(q[13])
            n = int(q[13])
        b[1][d.t.byte_off + ds * es:d.t.byte_off + ds * es + es] = scratch[:es]
        _timed(self, "Vector", self.name, cyc, v.ops[1:], v.ops[:1])
