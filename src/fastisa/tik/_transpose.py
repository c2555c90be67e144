"""TIK transposes: vnchwconv / vec_trans_scatter (16 block addresses per operand) and
vtranspose / vec_trans (contiguous 16x16 blocks of 16-bit elements), on one C kernel
shape (``csrc/fastisa/transpose.h``).

Semantics: CANN TIK API reference (vnchwconv, vec_trans_scatter, vtranspose, vec_trans)
and Ascend C TransDataTo5HD ("conversion rule per repeat", the same hardware instruction);
argument rules from the 2020 TIK source, caffe-huawei-atlas-convertor
``convertor/huawei/te/tik/tik_lib/tik_data_operation_api_.py`` (vnchwconv, vtranspose),
``api/tik_data_operation_api.py`` (vec_trans_scatter, vec_trans) and ``common/util.py``
(check_vnchwconv_overflow).  One repeat of vnchwconv:

* 16-bit: dst block j, element i = src block i, element j (a 16x16 transpose);
* 32-bit: dst block 2c+h, element k = src block 8h+k, element c;
* 8-bit: dst block j, byte 16*dst_high_half + i = src block i, byte 16*src_high_half + j
  (the other half of each dst block keeps its contents).

Repeat r reads src block i at ``src_list[i] + r*src_rep_stride`` blocks and writes dst
block j at ``dst_list[j] + r*dst_rep_stride`` blocks; with ``repeat_times == 1`` the
operands start at ``list[i] + rep_stride`` blocks, as vec_trans_scatter's documentation
states ("when repeat_times=1, the valid start ... is the start of dst_list or src_list
plus dst_rep_stride or src_rep_stride"; TIK's overflow check counts it the same way).
"""

from __future__ import annotations

import numpy as np

from .. import cost
from .._kernels import transpose as _k
from ..errors import AccessError, AlignmentError, ConstraintError, OverlapError
from ._base import VECTOR_ISSUE_CYCLES, _check_int, _check_repeat, _is_dyn, _Operand
from . import _program as P
from ._program import Expr, scope_ubuf

import typing as _typing

if _typing.TYPE_CHECKING:
    from collections.abc import Sequence

    from ._annot import IntArg, Operand

__all__ = ["TransposeMixin"]


def _ival(v, env):
    return int(v.fn(env) if isinstance(v, Expr) else v)


def _ub(name, role, x):
    o = _Operand(name, role, x)
    if o.t.scope != scope_ubuf:
        raise ConstraintError(f"{name}: {role} scope should be ub, input scope: {o.t.scope}")
    return o


def _addr(name, o, env, what):
    s = o.off if o.off is not None else int(o.off_fn(env))
    if s < 0:
        raise AccessError(f"{name}: {what} start element of tensor {o.t.name} must be >= 0, "
                          f"got {s}")
    a = o.t.byte_off + s * o.es
    if a % 32:
        raise AlignmentError(f"{name}: Address align error! {what} ({o.t.name}[{s}]) address "
                             f"{a} is not 32 align")
    return s, a


class _NchwConv:
    def __init__(self, tik, name, dst_high_half, src_high_half, dst_list, src_list,
                 repeat_times, dst_rep_stride, src_rep_stride):
        self.name = name
        for pn, x in (("dst_list", dst_list), ("src_list", src_list),
                      ("repeat_times", repeat_times), ("dst_rep_stride", dst_rep_stride),
                      ("src_rep_stride", src_rep_stride)):
            P.check_owner(tik, name, pn, x)
        for v, n in ((dst_high_half, "dst_high_half"), (src_high_half, "src_high_half")):
            if not isinstance(v, bool):
                raise ConstraintError(f"{name}: {n} should be bool, input type: {type(v)}")
        _check_repeat(name, repeat_times)
        _check_int(name, "dst_rep_stride", dst_rep_stride, 0, 65535)
        _check_int(name, "src_rep_stride", src_rep_stride, 0, 65535)
        for lst, n in ((dst_list, "dst_list"), (src_list, "src_list")):
            if not isinstance(lst, (list, tuple)):
                raise ConstraintError(f"{name}: {n} should be tuple or list, input: {lst!r}")
            if len(lst) != 16:
                raise ConstraintError(f"{name}: there should be 16 addresses in {n}, input "
                                      f"{len(lst)}")
        self.dst = [_ub(name, "dst_list", x) for x in dst_list]
        self.src = [_ub(name, "src_list", x) for x in src_list]
        dt = self.dst[0].t.dtype
        for o in self.dst + self.src:
            if o.t.dtype != dt:
                raise ConstraintError(f"{name}: Intrinsic {name}'s src's dtype should be equal "
                                      f"to dst's dtype, input: {o.t.dtype} vs {dt}")
        if not tik.target.supports(name, dt):
            raise ConstraintError(f"{name}: dtype {dt} is not supported on {tik.target.name} "
                                  f"(supported: {list(tik.target.dtypes.get(name, ()))})")
        self.es = self.dst[0].es
        self.dh, self.sh = (int(dst_high_half), int(src_high_half)) if self.es == 1 else (0, 0)
        self.args = (repeat_times, dst_rep_stride, src_rep_stride)
        dyn = any(_is_dyn(a) for a in self.args) or any(o.off is None for o in
                                                        self.dst + self.src)
        self._v = None if dyn else self._resolve(None)

    def _resolve(self, env):
        name = self.name
        nrep, drep, srep = (_ival(a, env) for a in self.args)
        if not 0 <= nrep <= 255:
            raise ConstraintError(f"{name}: repeat_times should be in the range of [0, 255], "
                                  f"input value is {nrep}")
        for v, n in ((drep, "dst_rep_stride"), (srep, "src_rep_stride")):
            if not 0 <= v <= 65535:
                raise ConstraintError(f"{name}: {n} should be in the range of [0, 65535], "
                                      f"input {n}: {v}")
        if nrep == 0:
            return None
        shift = 1 if nrep == 1 else 0   # documented: repeat 1 starts at list + rep_stride
        offs = []
        gran = []
        for lst, rep, half, what, verb in ((self.dst, drep, self.dh, "dst_list", "write"),
                                           (self.src, srep, self.sh, "src_list", "read")):
            a = np.empty(16, dtype=np.int64)
            for i, o in enumerate(lst):
                s, addr = _addr(name, o, env, f"{what}[{i}]")
                addr += shift * rep * 32
                last = addr + (nrep - 1) * rep * 32
                end = last + (16 * half + 16 if self.es == 1 else 32)
                if end > o.t.byte_off + o.t.nbytes:
                    need = -(-(end - o.t.byte_off) // o.es)
                    raise AccessError(f"{name}: {what}[{i}] tensor {o.t.name} overflow, "
                                      f"instruction need {verb} {need} elements but only "
                                      f"{o.t.size} elements space")
                a[i] = addr
            offs.append(a)
            # 16-byte granules touched per repeat: (nrep, 16 or 32)
            g0 = (a // 16)[None, :] + 2 * rep * np.arange(nrep)[:, None]
            gran.append(g0 + half if self.es == 1 else
                        np.concatenate([g0, g0 + 1], axis=1))
        self._check_overlap(gran[0], gran[1], nrep)
        return (offs[0], offs[1], nrep, drep * 32, srep * 32,
                VECTOR_ISSUE_CYCLES + nrep)

    def _check_overlap(self, dg, sg, nrep):
        """TIK vec_trans_scatter restrictions: with one repeat the dst and src sequences
        are the same blocks or disjoint; with more, no repeat reads what an earlier repeat
        wrote, and within a repeat they are the same blocks or disjoint."""
        name = self.name
        for r in range(nrep):
            d, s = dg[r], sg[r]
            if np.isin(d, s).any() and not np.array_equal(d, s):
                raise OverlapError(f"{name}: dst_list and src_list address overlapping error: "
                                   f"within a repeat they must be the same blocks (in place) "
                                   f"or disjoint (repeat {r})")
        if nrep > 1:
            first = {}
            for r in range(nrep):
                for g in dg[r]:
                    first.setdefault(int(g), r)
            for r in range(1, nrep):
                for g in sg[r]:
                    w = first.get(int(g))
                    if w is not None and w < r:
                        raise OverlapError(
                            f"{name}: dst_list and src_list address overlapping error. When "
                            f"repeat_times>1, it is not supported that iteration N's "
                            f"destination is the source of a later iteration")

    def run(self, st):
        v = self._v if self._v is not None else self._resolve(st.env)
        if v is None:
            return
        do, so, nrep, drep, srep, cyc = v
        _k.nchwconv(st.bufs[1], do, so, self.es, nrep, drep, srep, self.dh, self.sh)
        if cost._ACTIVE.get():
            cost.record("Vector", self.name, cyc)


class _Trans16:
    """vtranspose (one 16x16 block) and vec_trans (repeated, strides in 512-byte units)."""

    def __init__(self, tik, name, dst, src, repeat_times, dst_rep, src_rep):
        self.name = name
        for pn, x in (("dst", dst), ("src", src), ("repeat_times", repeat_times),
                      ("dst_rep_stride", dst_rep), ("src_rep_stride", src_rep)):
            P.check_owner(tik, name, pn, x)
        self.d, self.s = _ub(name, "dst", dst), _ub(name, "src", src)
        for o in (self.d, self.s):
            if o.t.dtype not in ("uint16", "int16", "float16"):
                raise ConstraintError(f"{name}: dtype of dst and src should be u16u16, s16s16 "
                                      f"or f16f16, input: {self.d.t.dtype}, {self.s.t.dtype}")
        if self.d.t.dtype != self.s.t.dtype:
            raise ConstraintError(f"{name}: dtype of dst and src should be u16u16, s16s16 or "
                                  f"f16f16, input: {self.d.t.dtype}, {self.s.t.dtype}")
        if name == "vec_trans":
            _check_int(name, "repeat_times", repeat_times, 1, 4095)
            _check_int(name, "dst_rep_stride", dst_rep, 0, 4095)
            _check_int(name, "src_rep_stride", src_rep, 0, 4095)
        self.args = (repeat_times, dst_rep, src_rep)
        dyn = any(_is_dyn(a) for a in self.args) or self.d.off is None or self.s.off is None
        self._v = None if dyn else self._resolve(None)

    def _resolve(self, env):
        name = self.name
        nrep, drep, srep = (_ival(a, env) for a in self.args)
        if name == "vec_trans":
            for v, n, lo in ((nrep, "repeat_times", 1), (drep, "dst_rep_stride", 0),
                             (srep, "src_rep_stride", 0)):
                if not lo <= v <= 4095:
                    raise ConstraintError(f"{name}: {n} should be in the range of [{lo}, "
                                          f"4095], input {n}: {v}")
        starts = []
        for o, rep, verb in ((self.d, drep, "write"), (self.s, srep, "read")):
            s, a = _addr(name, o, env, o.role)
            need = s + ((nrep - 1) * rep + 1) * 256
            if need > o.t.size:
                raise AccessError(f"{name}: `{o.t.name}` tensor overflow, instruction need "
                                  f"{verb} {need} elements but only {o.t.size} elements space")
            starts.append(a)
        da, sa = starts
        if self.d.t.sidx == self.s.t.sidx and not (da == sa and (drep == srep or nrep == 1)):
            # same buffer, not the same blocks: the spans must not meet
            d_r = da + np.arange(nrep) * drep * 512
            s_r = sa + np.arange(nrep) * srep * 512
            if ((d_r[:, None] < s_r[None, :] + 512) & (s_r[None, :] < d_r[:, None] + 512)).any():
                raise OverlapError(f"{name} not support partially address overlapping: dst and "
                                   f"src must be the same 512 bytes (in place) or disjoint")
        return da, sa, nrep, drep * 512, srep * 512, VECTOR_ISSUE_CYCLES + nrep

    def run(self, st):
        da, sa, nrep, drep, srep, cyc = self._v if self._v is not None else \
            self._resolve(st.env)
        _k.transpose16(st.bufs[1], da, sa, nrep, drep, srep)
        if cost._ACTIVE.get():
            cost.record("Vector", self.name, cyc)


class TransposeMixin:
    """The transpose instructions, mixed into :class:`fastisa.tik.Tik`."""

    def vnchwconv(self, dst_high_half: bool, src_high_half: bool, dst_list: Sequence[Operand],
                  src_list: Sequence[Operand], repeat_times: IntArg, dst_rep_stride: IntArg,
                  src_rep_stride: IntArg, name: str | None = None) -> None:
        """NCHW -> NC1HWC0 block transpose over 16 source and 16 destination 32-byte
        blocks (see the module docstring for the per-repeat rule of each width).

        dst_list / src_list: 16 UB tensors or ``t[i]`` starts each (32-byte aligned), one
        dtype (int8/uint8/int16/uint16/float16; 32-bit types not on Ascend 310/910).
        dst_high_half / src_high_half: bool; for 8-bit types the upper (True) or lower
        16 bytes of each dst / src block (ignored otherwise).  repeat_times [1, 255]
        (Scalar: [0, 255]); *_rep_stride [0, 65535] blocks.  With repeat_times 1 each
        address is offset by its rep stride (documented).  Overlap (vec_trans_scatter
        restrictions): within a repeat dst and src are the same blocks or disjoint; a
        repeat may not read what an earlier one wrote.  Raises ConstraintError,
        AccessError, AlignmentError, OverlapError.  Source: CANN TIK API reference
        vnchwconv / vec_trans_scatter; Ascend C TransDataTo5HD."""
        self._record(_NchwConv(self, name or "vnchwconv", dst_high_half, src_high_half,
                               dst_list, src_list, repeat_times, dst_rep_stride,
                               src_rep_stride))

    def vec_trans_scatter(self, dst_high_half: bool, src_high_half: bool,
                          dst_list: Sequence[Operand], src_list: Sequence[Operand],
                          repeat_times: IntArg, dst_rep_stride: IntArg,
                          src_rep_stride: IntArg) -> None:
        """NCHW -> NC1HWC0 block transpose over 16 source and 16 destination 32-byte
        blocks per repeat (the vec_ name of vnchwconv: the same rule and checks).

        dst_list / src_list -- 16 UB Tensors or ``t[i]`` starts each (32-byte aligned), one
            dtype: int8/uint8/int16/uint16/float16 (32-bit types not on Ascend 310/910).
        dst_high_half / src_high_half -- bool; for 8-bit types the upper (True) or lower 16
            bytes of each dst / src block (ignored otherwise).
        repeat_times -- [1, 255]; a Scalar in [0, 255] at run time.
        dst_rep_stride, src_rep_stride -- [0, 65535] 32-byte blocks between repeats (with
            repeat_times 1 each address is offset by its rep stride, as documented).

        Raises ConstraintError, AccessError, AlignmentError, OverlapError (dst and src
        blocks of a repeat neither the same nor disjoint; a repeat reading what an earlier
        one wrote).  Source: CANN TIK API reference, vec_trans_scatter; TIK 2020 source
        ``api/tik_data_operation_api.py`` (vec_trans_scatter),
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        self._record(_NchwConv(self, "vec_trans_scatter", dst_high_half, src_high_half,
                               dst_list, src_list, repeat_times, dst_rep_stride,
                               src_rep_stride))

    def vtranspose(self, dst: Operand, src: Operand) -> None:
        """dst[i*16 + j] = src[j*16 + i] for i, j < 16 (256 contiguous 16-bit elements
        from each start; uint16/int16/float16, one dtype; UB, 32-byte aligned).  dst and
        src are the same 512 bytes or disjoint.  Raises ConstraintError, AccessError,
        AlignmentError, OverlapError.  Source: CANN TIK API reference vtranspose; TIK
        ``tik_data_operation_api_.py`` vtranspose."""
        self._record(_Trans16(self, "vtranspose", dst, src, 1, 0, 0))

    def vec_trans(self, dst: Operand, src: Operand, repeat_times: IntArg, dst_rep_stride: IntArg,
                  src_rep_stride: IntArg) -> None:
        """vtranspose repeated: repeat r transposes the 16x16 block at src +
        r*src_rep_stride*512 bytes into dst + r*dst_rep_stride*512 bytes.  repeat_times
        [1, 4095], strides [0, 4095] (512-byte units).  dst and src are the same blocks
        with the same stride (in place) or never meet."""
        self._record(_Trans16(self, "vec_trans", dst, src, repeat_times, dst_rep_stride,
                              src_rep_stride))
