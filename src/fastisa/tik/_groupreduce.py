"""TIK group and pair reductions: vcgadd / vcgmax / vcgmin (one result per 32-byte block,
8 per repeat) and vcpadd (one result per pair of adjacent lanes, PAR/2 per repeat).

Semantics: CANN cceintrinsic reference vcgadd/vcgmax/vcgmin ("each repeat computes 8
blocks, one value per block, the 8 values written contiguously to dst; the MASK applies
to the input elements; a block whose mask bits are all 0 writes no dst element") and the
CANN TIK API reference vcpadd; dst repeat strides from the 2020 TIK source
(caffe-huawei-atlas-convertor ``convertor/huawei/te/tik/tik_lib/tik_reduce_api_.py``:
vcg* dst extent ``((repeat_times-1)*dst_rep_stride + 1) * 8`` elements, so
dst_rep_stride counts 8-element groups (16 bytes float16, 32 bytes float32); vcpadd dst
extent ``(repeat_times-1)*dst_rep_stride*128 + 128`` bytes, so dst_rep_stride counts
128-byte units = PAR/2 elements).

Arithmetic as vcadd (``fastisa.tik`` _Reduce, walker.h fi_tik_reduce): the active lanes
in lane order, summed in float64 and rounded once to the dtype (float16 saturating on
saturation-mode targets); max/min exact with NaN propagating (the first NaN).  vcpadd: a
pair with one active lane gives that lane's value (rounded as the sum), a pair with none
writes nothing.  Repeats run in order, each reading its lanes before writing (dst may
overlap src).  Lanes are gathered with numpy index arrays (no per-element Python loop).
"""

from __future__ import annotations

import numpy as np

from .. import cost
from ..errors import AccessError, AlignmentError, ConstraintError
from . import _program as P
from ._base import (VECTOR_ISSUE_CYCLES, _check_int, _check_repeat, _Operand,
                    _reduce_stride_unit)
from ._vector import _Vector
from ._program import Expr, scope_ubuf

import typing as _typing

if _typing.TYPE_CHECKING:
    from .._types import Int
    from ._annot import IntArg, Mask, Operand

__all__ = ["GroupReduceMixin"]


def _ival(v, env):
    return int(v.fn(env) if isinstance(v, Expr) else v)


def _f16_sat(h):
    a = h & 0x7FFF
    h = h.copy()
    h[a > 0x7C00] = 0
    inf = a == 0x7C00
    h[inf] = (h[inf] & 0x8000) | 0x7BFF
    return h


class _GroupReduce:
    def __init__(self, tik, name, op, mask, dst, src, repeat_times, dst_rep, src_blk, src_rep):
        self.name, self.op, self.tik = name, op, tik
        for pn, x in (("dst", dst), ("src", src), ("mask", mask),
                      ("repeat_times", repeat_times), ("dst_rep_stride", dst_rep),
                      ("src_blk_stride", src_blk), ("src_rep_stride", src_rep)):
            P.check_owner(tik, name, pn, x)
        self.d, self.s = _Operand(name, "dst", dst), _Operand(name, "src", src)
        for o in (self.d, self.s):
            if o.t.scope != scope_ubuf:
                raise ConstraintError(f"{name}: {o.role} scope should be ub, input scope: "
                                      f"{o.t.scope}")
        dt = self.s.t.dtype
        if self.d.t.dtype != dt:
            raise ConstraintError(f"{name}: Intrinsic {name}'s src's dtype should be equal to "
                                  f"dst's dtype, input: {dt} vs {self.d.t.dtype}")
        if not tik.target.supports(name, dt):
            raise ConstraintError(f"{name}: dtype {dt} is not supported on {tik.target.name} "
                                  f"(supported: {list(tik.target.dtypes.get(name, ()))})")
        v = _Vector.__new__(_Vector)
        v.name, v.mask, v.par, v.counter, v.nrep = name, mask, 256 // self.s.es, False, \
            repeat_times
        v._check_mask_static()
        self.v = v
        _check_repeat(name, repeat_times)
        _check_int(name, "dst_rep_stride", dst_rep, 0, 65535 if op != "pair" else 255)
        _check_int(name, "src_blk_stride", src_blk, 0, 65535)
        _check_int(name, "src_rep_stride", src_rep, 0, 255 if op != "pair" else 65535)
        self.args = (dst_rep, src_blk, src_rep)
        self.sat = tik.target.saturation

    def _plan(self, env):
        name, v, d, s = self.name, self.v, self.d, self.s
        lo, hi, _, nrep, _ = v._mask_value(env)
        drep, sblk, srep = (_ival(a, env) for a in self.args)
        par, B = v.par, s.B
        act = np.array([(lo >> i) & 1 if i < 64 else (hi >> (i - 64)) & 1
                        for i in range(par)], dtype=bool)
        out = []
        for o in (d, s):
            st = o.off if o.off is not None else int(o.off_fn(env))
            if st < 0:
                raise AccessError(f"{name}: {o.role} start element must be >= 0, got {st}")
            out.append(st)
        ds, ss = out
        if (s.t.byte_off + ss * s.es) % 32:
            raise AlignmentError(f"{name}: Address align error! src ({s.t.name}[{ss}]) "
                                 f"address {s.t.byte_off + ss * s.es} is not 32 align")
        lanes = np.arange(par)
        soff = ss + np.arange(nrep)[:, None] * srep * B + (lanes // B) * sblk * B + lanes % B
        if nrep and soff[:, act].max() + 1 > s.t.size:
            raise AccessError(f"{name}: `{s.t.name}` tensor overflow, instruction need read "
                              f"{int(soff[:, act].max()) + 1} elements but only {s.t.size} "
                              f"elements space")
        if self.op == "pair":
            gact = act.reshape(-1, 2).any(axis=1)
            per = par // 2
        else:
            gact = act.reshape(-1, B).any(axis=1)
            per = 8
        doff = ds + np.arange(nrep)[:, None] * drep * per + np.arange(len(gact))
        if nrep and gact.any() and doff[:, gact].max() + 1 > d.t.size:
            raise AccessError(f"{name}: `{d.t.name}` tensor overflow, instruction need write "
                              f"{int(doff[:, gact].max()) + 1} elements but only {d.t.size} "
                              f"elements space")
        return nrep, act, gact, soff, doff

    def run(self, st):
        nrep, act, gact, soff, doff = self._plan(st.env)
        if nrep == 0 or not gact.any():
            return
        d, s = self.d, self.s
        ub = st.bufs[1]
        dt = s.t.np_dtype
        sv = ub[s.t.byte_off:s.t.byte_off + s.t.nbytes].view(dt)
        dv = ub[d.t.byte_off:d.t.byte_off + d.t.nbytes].view(dt)
        same = d.t.sidx == s.t.sidx and d.t.byte_off < s.t.byte_off + s.t.nbytes and \
            s.t.byte_off < d.t.byte_off + d.t.nbytes
        rows = [slice(r, r + 1) for r in range(nrep)] if same else [slice(0, nrep)]
        g = 2 if self.op == "pair" else s.B
        for rs in rows:
            # inactive lanes may lie past the tensor: clip (their values are not used)
            with np.errstate(invalid="ignore"):    # signalling NaNs stay NaN
                x = sv[np.minimum(soff[rs], s.t.size - 1)].astype(np.float64)
            x = x.reshape(x.shape[0], -1, g)
            a = act.reshape(-1, g)
            res = np.zeros(x.shape[:2])
            seen = np.zeros(x.shape[:2], dtype=bool)
            with np.errstate(all="ignore"):
                for k in range(g):                          # lane order within a group
                    on = a[:, k][None, :]
                    v = x[:, :, k]
                    if self.op in ("add", "pair"):
                        new = np.where(seen, res + v, v)
                    elif self.op == "max":
                        new = np.where(seen & ((res >= v) | np.isnan(res)), res, v)
                    else:
                        new = np.where(seen & ((res <= v) | np.isnan(res)), res, v)
                    res = np.where(on, new, res)
                    seen = seen | on
                out = res.astype(dt)
            if dt == np.float16 and self.sat and self.op in ("add", "pair"):
                out = _f16_sat(out.view(np.uint16)).view(np.float16)
            idx = doff[rs][:, gact]
            dv[idx] = out[:, gact]
        if cost._ACTIVE.get():
            cost.record("Vector", self.name, VECTOR_ISSUE_CYCLES + nrep)


class GroupReduceMixin:
    """vcgadd / vcgmax / vcgmin / vcpadd, mixed into :class:`fastisa.tik.Tik`."""

    def _gred(self, name, op, mask, dst, src, repeat_times, dst_rep_stride, src_blk_stride,
              src_rep_stride, stride_unit):
        _reduce_stride_unit(name, self.target, stride_unit)
        self._record(_GroupReduce(self, name, op, mask, dst, src, repeat_times,
                                  dst_rep_stride, src_blk_stride, src_rep_stride))

    def vcgadd(self, mask: Mask, dst: Operand, src: Operand, repeat_times: IntArg,
               dst_rep_stride: IntArg, src_blk_stride: IntArg, src_rep_stride: IntArg,
               stride_unit: Int = 0) -> None:
        """dst[r*dst_rep_stride*8 + q] = sum of the active lanes of block q (q < 8) of
        repeat r of src (float64, rounded once); blocks with no active lane are not
        written.  dst_rep_stride in 8-element units; src strides in blocks.  float16
        (float32 not on Ascend 310/910).  mask as the vector instructions (no counter
        mode); repeat_times [1, 255].  Raises ConstraintError, AccessError,
        AlignmentError (src 32-byte aligned)."""
        self._gred("vcgadd", "add", mask, dst, src, repeat_times, dst_rep_stride,
                   src_blk_stride, src_rep_stride, stride_unit)

    def vcgmax(self, mask: Mask, dst: Operand, src: Operand, repeat_times: IntArg,
               dst_rep_stride: IntArg, src_blk_stride: IntArg, src_rep_stride: IntArg,
               stride_unit: Int = 0) -> None:
        """``dst[r*dst_rep_stride*8 + q] = max(active lanes of block q of repeat r)``, q < 8.

        The winning value's bits unchanged; NaN propagates; a block with no active lane is
        not written.

        mask -- int in [1, L] (lanes 0..mask-1) or ``[mask_h, mask_l]``; L = 128 (float16)
            or 64 (float32); no counter mode.
        dst -- UB Tensor or ``t[i]`` start, src's dtype; 8 results per repeat.
        src -- UB Tensor or ``t[i]`` start (32-byte aligned), float16 (float32 too except on
            Ascend 310/910); lane l of repeat r is element ``start + r*src_rep_stride*B +
            (l//B)*src_blk_stride*B + l%B``, B = 32 / element bytes.
        repeat_times -- [1, 255]; a Scalar in [0, 255] at run time.
        dst_rep_stride -- [0, 255], in 8-element units between repeats' results.
        src_blk_stride -- [0, 65535], src_rep_stride -- [0, 255]: 32-byte blocks.
        stride_unit -- ignored on Ascend 310/910; elsewhere only 0 is implemented.

        Raises ConstraintError, AccessError, AlignmentError (src not 32-byte aligned).
        Source: CANN TIK API reference, vcgmax; TIK 2020 source ``tik_lib/tik_reduce_api_.py``
        (vcgmax), github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        self._gred("vcgmax", "max", mask, dst, src, repeat_times, dst_rep_stride,
                   src_blk_stride, src_rep_stride, stride_unit)

    def vcgmin(self, mask: Mask, dst: Operand, src: Operand, repeat_times: IntArg,
               dst_rep_stride: IntArg, src_blk_stride: IntArg, src_rep_stride: IntArg,
               stride_unit: Int = 0) -> None:
        """``dst[r*dst_rep_stride*8 + q] = min(active lanes of block q of repeat r)``, q < 8.

        The winning value's bits unchanged; NaN propagates; a block with no active lane is
        not written.

        mask -- int in [1, L] (lanes 0..mask-1) or ``[mask_h, mask_l]``; L = 128 (float16)
            or 64 (float32); no counter mode.
        dst -- UB Tensor or ``t[i]`` start, src's dtype; 8 results per repeat.
        src -- UB Tensor or ``t[i]`` start (32-byte aligned), float16 (float32 too except on
            Ascend 310/910); lane l of repeat r is element ``start + r*src_rep_stride*B +
            (l//B)*src_blk_stride*B + l%B``, B = 32 / element bytes.
        repeat_times -- [1, 255]; a Scalar in [0, 255] at run time.
        dst_rep_stride -- [0, 255], in 8-element units between repeats' results.
        src_blk_stride -- [0, 65535], src_rep_stride -- [0, 255]: 32-byte blocks.
        stride_unit -- ignored on Ascend 310/910; elsewhere only 0 is implemented.

        Raises ConstraintError, AccessError, AlignmentError (src not 32-byte aligned).
        Source: CANN TIK API reference, vcgmin; TIK 2020 source ``tik_lib/tik_reduce_api_.py``
        (vcgmin), github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        self._gred("vcgmin", "min", mask, dst, src, repeat_times, dst_rep_stride,
                   src_blk_stride, src_rep_stride, stride_unit)

    def vcpadd(self, mask: Mask, dst: Operand, src: Operand, repeat_times: IntArg,
               dst_rep_stride: IntArg, src_blk_stride: IntArg, src_rep_stride: IntArg,
               stride_unit: Int = 0) -> None:
        """dst[r*dst_rep_stride*PAR/2 + i] = src lane 2i + src lane 2i+1 of repeat r (the
        active ones; a pair with none is not written), float64 sum rounded once.
        dst_rep_stride in 128-byte units [0, 255]; src_blk_stride [0, 65535],
        src_rep_stride [0, 65535]."""
        self._gred("vcpadd", "pair", mask, dst, src, repeat_times, dst_rep_stride,
                   src_blk_stride, src_rep_stride, stride_unit)
