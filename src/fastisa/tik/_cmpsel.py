"""TIK compare/select: vcmp_* (-> the CMPMASK register), vcmpv_* / vcmpvs_* / vec_cmpv_*
(-> a bit tensor), vsel / vec_sel (bits -> select), mov_tensor_to_cmpmask and
mov_cmpmask_to_tensor.  One C kernel pair (``csrc/fastisa/cmpsel.h``): compare-to-bits
and select-by-bits, with the walker's lane addressing.

Semantics (CANN "TIK API reference" vcmp/vcmpv/vsel; CANN cceintrinsic reference vcmp,
vcmpv, vcmpvs, vsel; the 2020 TIK source in caffe-huawei-atlas-convertor
``convertor/huawei/te/tik/tik_lib/tik_cmp_api_.py``, ``tik_vector_api_.py`` (vsel,
mov_*cmpmask*) and its debugger ``debug/simd.py`` VCMP/VCMPV/VSEL):

* lanes: PAR = 256 bytes / element size (128 float16, 64 float32); lane i of repeat r of
  an operand is element ``start + r*rep*B + (i//B)*blk*B + i%B`` (B = 32/element size),
  as for every TIK vector instruction.
* bits: lane i of a repeat is bit i of a PAR-bit field stored little-endian (bit i%8 of
  byte i//8); repeat r's field starts ``r*PAR/8`` bytes in (16 bytes for float16, 8 for
  float32: "dst = dst + 16 Bytes" per repeat).
* compares are IEEE 754: NaN makes every comparison false except ``ne`` (true); -0 == +0.
* CMPMASK is one 128-bit register per run (0 when the run starts).  vcmp writes the bits
  of the active lanes and keeps the others ("if a MASK bit is 0 the CMPMASK bit is
  unchanged"); for float32 only bits 0..63 can change.  vsel mode 1 puts the scalar's
  bits, mode 2 the sel tensor's UB byte address into CMPMASK bits 0..63 (how the hardware
  is told them; the debugger's ``write_spr('CMPMASK0', ...)``), so a later mode-0 vsel
  sees that value.
"""

from __future__ import annotations

import numpy as np

from .. import cost
from .._kernels import cmpsel as _k
from ..errors import AccessError, AlignmentError, ConstraintError, OverlapError
from ._base import (VECTOR_ISSUE_CYCLES, _check_int, _check_repeat, _is_dyn, _Operand,
                    _s64, _static, _U64)
from ._vcmp import CompareMixin
from ._vector import _Vector
from . import _program as P
from ._program import Expr, Tensor, TensorView, cast_value, scope_ubuf

import typing as _typing

if _typing.TYPE_CHECKING:
    from .._types import Int
    from ._annot import IntArg, Mask, Operand, RealArg

__all__ = ["CmpMask", "CmpSelMixin", "CMP_OPS"]

#: compare name -> cmpsel.h fi_cmp_op
CMP_OPS = {"eq": 0, "ne": 1, "lt": 2, "gt": 3, "le": 4, "ge": 5}
_BIT_DTYPES = ("uint8", "uint16", "uint32", "uint64")
_UINT_OF = {2: np.uint16, 4: np.uint32}


class CmpMask:
    """The CMPMASK register of a Tik instance (TIK's ``CMPMASK_VAR``): returned by
    ``vcmp_*`` and ``mov_tensor_to_cmpmask`` and passed as ``sel`` to a mode-0 vsel."""

    __slots__ = ("tik",)

    def __init__(self, tik):
        self.tik = tik

    def __repr__(self):
        return "CMPMASK"


def _reg(tik) -> int:
    """The run-environment slot holding CMPMASK (a 128-bit Python int, 0 at run start)."""
    sid = getattr(tik, "_cmpmask_sid", None)
    if sid is None:
        sid = tik._cmpmask_sid = tik._new_sid()
        tik._cmpmask = CmpMask(tik)
    return sid


def _ub_operand(name, role, x, dtypes=None):
    o = _Operand(name, role, x)
    if o.t.scope != scope_ubuf:
        raise ConstraintError(f"{name}: {role} scope should be ub, input scope: {o.t.scope}")
    if dtypes is not None and o.t.dtype not in dtypes:
        raise ConstraintError(f"{name}: {role} dtype should be one of {list(dtypes)}, input "
                              f"dtype: {o.t.dtype}")
    return o


def _start(name, o, env, align=32):
    s = o.off if o.off is not None else int(o.off_fn(env))
    if s < 0:
        raise AccessError(f"{name}: {o.role} start element of tensor {o.t.name} must be "
                          f">= 0, got {s}")
    addr = o.t.byte_off + s * o.es
    if align and addr % align:
        raise AlignmentError(f"{name}: Address align error! {o.role} ({o.t.name}[{s}]) "
                             f"address {addr} is not {align} align")
    return s, addr


def _lanes(lo, hi, par):
    return np.array([i for i in range(par) if ((lo >> i) & 1 if i < 64 else
                                               (hi >> (i - 64)) & 1)], dtype=np.int64)


def _src_blocks(o, addr, lanes, blk, rep, nrep):
    """UB block indices (32-byte units) operand o reads over all repeats."""
    b = np.unique(lanes // o.B) * blk
    return (addr // 32 + np.arange(nrep)[:, None] * rep + b[None, :]).ravel()


def _check_extent(name, o, s, lanes, blk, rep, nrep, verb="read"):
    B = o.B
    mx = (nrep - 1) * rep * B + int(((lanes // B) * blk * B + lanes % B).max())
    if s + mx + 1 > o.t.size:
        raise AccessError(f"{name}: `{o.t.name}` tensor overflow, instruction need {verb} "
                          f"{s + mx + 1} elements but only {o.t.size} elements space")


def _ival(v, env):
    return int(v.fn(env) if isinstance(v, Expr) else v)


class _Compare:
    """vcmp_* (to_reg: one repeat, masked, into CMPMASK) and vcmpv_* / vcmpvs_* (every
    lane of every repeat into a bit tensor)."""

    def __init__(self, tik, name, cmp, mask, dst, src0, src1, scalar, repeat_times, blks,
                 reps, to_reg, blk_max):
        self.tik, self.name, self.to_reg = tik, name, to_reg
        for pn, x in (("dst", dst), ("src0", src0), ("src1", src1), ("scalar", scalar),
                      ("mask", mask), ("repeat_times", repeat_times), ("strides", blks + reps)):
            if x is not None:
                P.check_owner(tik, name, pn, x)
        tg = tik.target
        self.srcs = [_ub_operand(name, "src0" if src1 is not None or scalar is None else "src",
                                 src0)]
        if src1 is not None:
            self.srcs.append(_ub_operand(name, "src1", src1))
            if self.srcs[1].t.dtype != self.srcs[0].t.dtype:
                raise ConstraintError(f"{name}: Intrinsic {name}'s src0's dtype should be "
                                      f"equal to src1's dtype, input: {self.srcs[0].t.dtype} "
                                      f"vs {self.srcs[1].t.dtype}")
        d = self.srcs[0].t.dtype
        if not tg.supports(name, d):
            raise ConstraintError(f"{name}: dtype {d} is not supported on {tg.name} "
                                  f"(supported: {list(tg.dtypes.get(name, ()))})")
        self.dst = None if to_reg else _ub_operand(name, "dst", dst, _BIT_DTYPES)
        self.par = 256 // self.srcs[0].es
        self.cmp = CMP_OPS[cmp]
        self.fmt = self.srcs[0].code
        if to_reg:
            v = _Vector.__new__(_Vector)
            v.name, v.mask, v.par, v.counter, v.nrep = name, mask, self.par, False, 1
            v._check_mask_static()
            self.maskv = v
        else:
            _check_repeat(name, repeat_times)
        roles = [o.role for o in self.srcs]
        for v_, r in zip(blks, roles):
            _check_int(name, f"{r}_blk_stride", v_, 0, blk_max)
        for v_, r in zip(reps, roles):
            _check_int(name, f"{r}_rep_stride", v_, 0, 255)
        self.blks, self.reps, self.nrep = list(blks), list(reps), repeat_times
        self.scalar = scalar
        if scalar is not None:
            if isinstance(scalar, Expr):
                if scalar.dtype != d and scalar.const is None:
                    raise ConstraintError(f"{name}: Intrinsic {name}'s src's dtype should be "
                                          f"equal to scalar's dtype, input: {d} vs "
                                          f"{scalar.dtype}")
                if scalar.const is not None:
                    self.scalar = cast_value(d, scalar.const)
            elif isinstance(scalar, (int, float, np.integer, np.floating)) and not isinstance(
                    scalar, bool):
                self.scalar = cast_value(d, scalar)
            else:
                raise ConstraintError(f"{name}: scalar must be an int/float immediate or a "
                                      f"Scalar, got {scalar!r}")
        self.sid = _reg(tik) if to_reg else None
        dyn = (any(_is_dyn(x) for x in self.blks + self.reps + [repeat_times, scalar])
               or (isinstance(mask, (list, tuple)) and any(_is_dyn(m) for m in mask))
               or _is_dyn(mask) or any(o.off is None for o in self.srcs)
               or (self.dst is not None and self.dst.off is None))
        self._p = None if dyn else self._resolve(None)

    def _sbits(self, env):
        sc = self.scalar
        if isinstance(sc, Expr):
            sc = cast_value(self.srcs[0].t.dtype, sc.fn(env))
        dt = self.srcs[0].t.np_dtype
        return int(np.array([sc], dtype=dt).view(_UINT_OF[dt.itemsize])[0])

    def _resolve(self, env):
        name, par = self.name, self.par
        if self.to_reg:
            lo, hi, _, _, _ = self.maskv._mask_value(env)
            nrep = 1
        else:
            lo, hi = _U64 - 1, (_U64 - 1 if par > 64 else 0)
            nrep = _ival(self.nrep, env)
            if not 0 <= nrep <= 255:
                raise ConstraintError(f"{name}: repeat_times should be in the range of "
                                      f"[0, 255], input repeat_times: {nrep}")
        blks = [_ival(b, env) for b in self.blks]
        reps = [_ival(r, env) for r in self.reps] if not self.to_reg else [0] * len(blks)
        lanes = _lanes(lo, hi, par)
        p = np.zeros(_k.NPARAM, dtype=np.int64)
        p[0] = self.fmt
        p[10] = nrep
        p[11] = par
        p[12], p[13] = _s64(lo), _s64(hi)
        p[14] = self.cmp
        if nrep == 0:
            return p
        blocks = []
        for k, (o, b, r) in enumerate(zip(self.srcs, blks, reps)):
            s, addr = _start(name, o, env)
            _check_extent(name, o, s, lanes, b, r, nrep)
            p[2 + k] = addr
            p[5 + k] = b
            p[8 + k] = r
            blocks.append(_src_blocks(o, addr, lanes, b, r, nrep))
        if len(self.srcs) == 1:
            p[15] = 1
            p[16] = self._sbits(env)
        if self.dst is not None:
            d = self.dst
            s, addr = _start(name, d, env)
            nbytes = nrep * par // 8
            if s * d.es + nbytes > d.t.nbytes:
                need = -(-(s * d.es + nbytes) // d.es)
                raise AccessError(f"{name}: dst tensor overflow, expected dst shape: {need}, "
                                  f"actual dst shape: {d.t.size}")
            p[1] = addr
            dlo, dhi = addr // 32, (addr + nbytes - 1) // 32
            for o, blk_idx in zip(self.srcs, blocks):
                if ((blk_idx >= dlo) & (blk_idx <= dhi)).any():
                    raise OverlapError(f"{name}: dst and {o.role} address overlapping error: "
                                       f"the bits written must not overlap a block read")
        return p

    def run(self, st):
        p = self._p if self._p is not None else self._resolve(st.env)
        if p[10] == 0:
            return
        ub = st.bufs[1]
        if self.to_reg:
            lo, hi = _k.cmp_reg(p, ub)
            m = (int(p[12]) & (_U64 - 1)) | ((int(p[13]) & (_U64 - 1)) << 64)
            old = st.env[self.sid]
            st.env[self.sid] = (old & ~m) | ((lo | (hi << 64)) & m)
        else:
            _k.cmp_bits(p, ub)
        if cost._ACTIVE.get():
            cost.record("Vector", self.name, VECTOR_ISSUE_CYCLES + int(p[10]))


class _Select:
    """vsel / vec_sel, modes 0 (CMPMASK), 1 (sel tensor, scalar src1), 2 (sel tensor)."""

    def __init__(self, tik, name, mask, mode, dst, sel, src0, src1, repeat_times, blks, reps):
        self.tik, self.name = tik, name
        for pn, x in (("dst", dst), ("sel", sel), ("src0", src0), ("src1", src1),
                      ("mask", mask), ("repeat_times", repeat_times), ("strides", blks + reps)):
            if not isinstance(x, CmpMask):
                P.check_owner(tik, name, pn, x)
        tg = tik.target
        if isinstance(mode, bool) or not isinstance(mode, (int, np.integer)):
            raise ConstraintError(f"{name}: mode should be int, input mode: {mode!r}")
        mode = int(mode)
        if not 0 <= mode <= 2:
            raise ConstraintError(f"{name}: mode should be in the range of [0, 2], input "
                                  f"mode: {mode}")
        if tg.family == "v100" and mode != 0:
            raise ConstraintError(f"{name}: v100 doesn't support mode {mode} ({tg.name} has "
                                  f"only mode 0)")
        self.mode = mode
        for v_, n in zip(blks, ("dst_blk_stride", "src0_blk_stride", "src1_blk_stride")):
            _check_int(name, n, v_, 0, 255)
        if mode == 1:
            if isinstance(src1, (Tensor, TensorView)) or isinstance(src1, bool) or not \
                    isinstance(src1, (int, float, np.integer, np.floating, Expr)):
                raise ConstraintError(f"{name}: when mode is 1, src1 should be int, float or "
                                      f"Scalar, input src1: {src1!r}")
            self.v = _Vector(tik, name, 1, "vs", mask, dst, [src0], src1, repeat_times,
                             blks[:2], reps[:2])
        else:
            if not isinstance(src1, (Tensor, TensorView)):
                raise ConstraintError(f"{name}: when mode isn't 1, src1 should be tensor, "
                                      f"input src1: {src1!r}")
            self.v = _Vector(tik, name, 16, "bin", mask, dst, [src0, src1], None, repeat_times,
                             blks, reps)
        self.sel0 = None
        if mode == 0 and name == "vec_sel" and isinstance(sel, (Tensor, TensorView)):
            # vec_sel mode 0 takes a sel TENSOR: every repeat uses its first PAR bits
            # (CANN TIK API reference vec_sel), loaded into CMPMASK as TIK does
            self.sel0 = _ub_operand(name, "sel", sel, _BIT_DTYPES)
            self.sel = None
        elif mode == 0:
            if not isinstance(sel, CmpMask) or sel.tik is not tik:
                raise ConstraintError(f"{name}: Please assure sel is cmpmask (mode 0 selects "
                                      f"by CMPMASK, the value vcmp_*/mov_tensor_to_cmpmask "
                                      f"return), input sel: {sel!r}")
            self.sel = None
        else:
            if not isinstance(sel, (Tensor, TensorView)):
                raise ConstraintError(f"{name}: when mode is 1 or 2, sel should be tensor, "
                                      f"input sel: {sel!r}")
            self.sel = _ub_operand(name, "sel", sel, _BIT_DTYPES)
        self.sid = _reg(tik)
        self._p = None if self.v._dyn or (self.sel is not None and self.sel.off is None) \
            else self._resolve(None)

    def _resolve(self, env):
        v, name, mode = self.v, self.name, self.mode
        wp, _ = v._resolve(env) if v._dyn else (v._p, None)
        p = np.zeros(_k.NPARAM, dtype=np.int64)
        p[0] = v.ops[0].code
        p[1:4] = wp[4:7]
        p[4:7] = wp[7:10]
        p[7:10] = wp[10:13]
        p[10] = wp[13]
        p[11] = wp[14]
        p[12], p[13] = wp[15], wp[16]
        p[17] = mode
        nrep, par = int(wp[13]), int(wp[14])
        if mode == 1:
            p[15] = 1
            sc = v.scalar
            if isinstance(sc, Expr):
                sc = cast_value(v.scalar_dtype, sc.fn(env))
            dt = v.ops[0].t.np_dtype
            p[16] = int(np.array([sc], dtype=dt).view(_UINT_OF[dt.itemsize])[0])
        if mode and nrep:
            s_ = self.sel
            s, addr = _start(name, s_, env)
            lo, hi = int(wp[15]) & (_U64 - 1), int(wp[16]) & (_U64 - 1)
            top = (hi.bit_length() + 64) if hi else lo.bit_length()
            bits = (nrep - 1) * par + top
            bpe = s_.es * 8
            need = s + -(-bits // bpe)
            if need > s_.t.size:
                raise AccessError(f"{name}: sel tensor overflow, expected elements: {need}, "
                                  f"actual elements: {s_.t.size}")
            p[18] = addr
            # the sel bytes read must not be written by this vsel
            d = v.ops[0]
            lanes = _lanes(lo, hi, par)
            dblocks = _src_blocks(d, int(wp[4]), lanes, int(wp[7]), int(wp[10]), nrep)
            slo, shi = addr // 32, (addr + -(-bits // 8) - 1) // 32
            if ((dblocks >= slo) & (dblocks <= shi)).any():
                raise OverlapError(f"{name}: dst and sel address overlapping error: the "
                                   f"elements written must not overlap the sel bits read")
        return p

    def run(self, st):
        p = self._p if self._p is not None else self._resolve(st.env)
        env = st.env
        if p[10] == 0:
            return
        if self.sel0 is not None:
            o = self.sel0
            s, addr = _start(self.name, o, env)
            nb = int(p[11]) // 8
            if s * o.es + nb > o.t.nbytes:
                raise AccessError(f"{self.name}: sel tensor overflow, expected elements: "
                                  f"{s + -(-nb // o.es)}, actual elements: {o.t.size}")
            bits = int.from_bytes(st.bufs[1][addr:addr + nb].tobytes(), "little")
            keep = ~((1 << (8 * nb)) - 1)
            env[self.sid] = (env[self.sid] & keep) | bits
        if self.mode == 0:
            cm = env[self.sid]
            p = p.copy() if self._p is not None else p
            p[19] = _s64(cm & (_U64 - 1))
            p[20] = _s64(cm >> 64)
        _k.vsel(p, st.bufs[1])
        if self.mode:
            low = int(p[16]) if self.mode == 1 else int(p[18])
            env[self.sid] = (env[self.sid] & ~(_U64 - 1)) | (low & (_U64 - 1))
        if cost._ACTIVE.get():
            cost.record("Vector", self.name, VECTOR_ISSUE_CYCLES + int(p[10]))


class _CmpMaskMove:
    """mov_tensor_to_cmpmask (to_reg) / mov_cmpmask_to_tensor: 16 bytes (two uint64, the
    low 64 CMPMASK bits first) between UB and CMPMASK."""

    def __init__(self, tik, name, t, to_reg):
        self.name, self.to_reg = name, to_reg
        P.check_owner(tik, name, "src" if to_reg else "dst", t)
        self.o = _ub_operand(name, "src" if to_reg else "dst", t,
                             None if to_reg else _BIT_DTYPES)
        self.sid = _reg(tik)

    def run(self, st):
        o = self.o
        s, addr = _start(self.name, o, st.env, align=0)
        if s * o.es + 16 > o.t.nbytes:
            raise AccessError(f"{self.name}: `{o.t.name}` tensor overflow, instruction need "
                              f"{'read' if self.to_reg else 'write'} 16 bytes from element "
                              f"{s} but only {o.t.nbytes - s * o.es} bytes space")
        ub = st.bufs[1]
        if self.to_reg:
            st.env[self.sid] = int.from_bytes(ub[addr:addr + 16].tobytes(), "little")
        else:
            ub[addr:addr + 16] = np.frombuffer(st.env[self.sid].to_bytes(16, "little"),
                                               dtype=np.uint8)


class CmpSelMixin(CompareMixin):
    """The compare/select instructions, mixed into :class:`fastisa.tik.Tik`."""

    # ---- vcmp_*: into CMPMASK ----------------------------------------------------
    def _vcmp(self, name, mask, src0, src1, src0_stride, src1_stride):
        self._record(_Compare(self, name, name.split("_")[1], mask, None, src0, src1, None, 1,
                              [src0_stride, src1_stride], [0, 0], True, 65535))
        return self._cmpmask

    def _vcmpv(self, name, dst, src0, src1, repeat_times, blks, reps):
        self._record(_Compare(self, name, name.rsplit("_", 1)[1], None, dst, src0, src1, None,
                              repeat_times, blks, reps, False, 255))

    def _vcmpvs(self, name, dst, src, scalar, repeat_times, src_blk_stride, src_rep_stride):
        self._record(_Compare(self, name, name.rsplit("_", 1)[1], None, dst, src, None, scalar,
                              repeat_times, [src_blk_stride], [src_rep_stride], False, 65535))

    # ---- vsel -------------------------------------------------------------------
    def vsel(self, mask: Mask, mode: Int, dst: Operand, sel: Operand | CmpMask,
             src0: Operand, src1: Operand | RealArg, repeat_times: IntArg,
             dst_blk_stride: IntArg, src0_blk_stride: IntArg, src1_blk_stride: IntArg,
             dst_rep_stride: IntArg = 0, src0_rep_stride: IntArg = 0,
             src1_rep_stride: IntArg = 0, name: str = "vsel") -> None:
        """``dst[l] = sel bit l of repeat r ? src0[l] : src1[l]`` for every active lane l of
        every repeat r.

        A bit copy (no arithmetic); inactive lanes keep their contents.  mode 0: sel is
        CMPMASK (the handle vcmp_* / mov_tensor_to_cmpmask return), the same L bits every
        repeat.  mode 1: sel is a bit tensor consumed L bits per repeat and src1 a scalar
        (converted to dst's dtype).  mode 2: sel a bit tensor as in mode 1, src1 a tensor.
        Modes 1 and 2 do not exist on Ascend 310/910.  Mode 1 leaves the scalar's bits,
        mode 2 the sel address, in CMPMASK bits 0..63 (as the hardware is told them).

        mask -- int in [1, L] (lanes 0..mask-1) or ``[mask_h, mask_l]``; L = 128 (float16)
            or 64 (float32).
        mode -- 0, 1 or 2 (above).
        dst, src0, src1 -- UB Tensors or ``t[i]`` starts (32-byte aligned), one dtype:
            float16 or float32.  Lane l of repeat r is element ``start + r*rep_stride*B +
            (l//B)*blk_stride*B + l%B``, B = 32 / element bytes.  src1: a scalar in mode 1.
        sel -- mode 0: the CMPMASK handle; modes 1/2: a UB bit tensor (uint8..uint64,
            32-byte aligned) with ``(repeat_times-1)*L + (highest active lane + 1)`` bits;
            bit l of repeat r is bit (r*L + l) % 8 of byte (r*L + l) // 8.  Not written.
        repeat_times -- [1, 255]; a Scalar in [0, 255] at run time.
        *_blk_stride -- [0, 255], 32-byte blocks within a repeat.
        *_rep_stride -- [0, 255], 32-byte blocks between repeat starts.
        name -- the instruction name in messages.

        Raises ConstraintError (a range, mode, dtype or target rule), AccessError (past a
        tensor's end), AlignmentError (a start not 32-byte aligned), OverlapError (dst
        overlapping sel or a partially overlapping source).  Source: CANN TIK API reference,
        vsel; TIK 2020 source ``tik_lib/tik_vector_api_.py`` (vsel) and its debugger
        ``debug/simd.py``, github.com/jizhuoran/caffe-huawei-atlas-convertor
        convertor/huawei/te/tik/.
        """
        self._record(_Select(self, name, mask, mode, dst, sel, src0, src1, repeat_times,
                             [dst_blk_stride, src0_blk_stride, src1_blk_stride],
                             [dst_rep_stride, src0_rep_stride, src1_rep_stride]))

    def vec_sel(self, mask: Mask, mode: Int, dst: Operand, sel: Operand | CmpMask,
                src0: Operand, src1: Operand | RealArg, repeat_times: IntArg,
                dst_rep_stride: IntArg = 0, src0_rep_stride: IntArg = 0,
                src1_rep_stride: IntArg = 0) -> None:
        """``dst[l] = sel bit l ? src0[l] : src1[l]`` for every active lane l of every
        repeat (vsel with contiguous blocks).

        In every mode sel is a UB bit tensor (the CMPMASK handle is also accepted in mode
        0): mode 0 uses its first L bits in every repeat (loaded into CMPMASK bits
        0..L-1, the other CMPMASK bits kept); modes 1 (src1 a scalar) and 2 (src1 a tensor)
        consume L bits per repeat.  A bit copy; inactive lanes keep their contents.

        mask -- int in [1, L] (lanes 0..mask-1) or ``[mask_h, mask_l]``; L = 128 (float16)
            or 64 (float32).
        mode -- 0, 1 or 2 (modes 1 and 2 not on Ascend 310/910).
        dst, src0, src1 -- UB Tensors or ``t[i]`` starts (32-byte aligned), one dtype:
            float16 or float32; lane l of repeat r is element ``start + r*rep_stride*B +
            l``.  src1: a scalar (int/float/Scalar) in mode 1.
        sel -- UB bit tensor (uint8..uint64, 32-byte aligned), not written.
        repeat_times -- [1, 255]; a Scalar in [0, 255] at run time.
        dst_rep_stride, src0_rep_stride, src1_rep_stride -- [0, 255], 32-byte blocks
            between repeat starts.

        Raises ConstraintError, AccessError, AlignmentError, OverlapError (as vsel).
        Source: CANN TIK API reference, vec_sel; TIK 2020 source ``api/tik_vector_api.py``
        (vec_sel), github.com/jizhuoran/caffe-huawei-atlas-convertor
        convertor/huawei/te/tik/.
        """
        self._record(_Select(self, "vec_sel", mask, mode, dst, sel, src0, src1, repeat_times,
                             [1, 1, 1], [dst_rep_stride, src0_rep_stride, src1_rep_stride]))

    # ---- CMPMASK <-> tensor ----------------------------------------------------
    def mov_tensor_to_cmpmask(self, src: Operand) -> CmpMask:
        """``CMPMASK = the 16 bytes at src's start`` (two uint64, the low half first).

        src -- UB Tensor or ``t[i]`` start (32-byte aligned), any dtype, with at least 16
            bytes from its start.

        Returns the CMPMASK handle (for vsel mode 0).  Raises AccessError (fewer than 16
        bytes left), AlignmentError, ConstraintError (not a UB tensor).  Source: CANN TIK API
        reference, mov_tensor_to_cmpmask; TIK 2020 source ``tik_lib/tik_vector_api_.py``
        (mov_tensor_to_cmpmask), github.com/jizhuoran/caffe-huawei-atlas-convertor
        convertor/huawei/te/tik/.
        """
        self._record(_CmpMaskMove(self, "mov_tensor_to_cmpmask", src, True))
        return self._cmpmask

    def mov_cmpmask_to_tensor(self, dst: Operand, src_cmpmask: CmpMask) -> None:
        """``the 16 bytes at dst's start = CMPMASK`` (two uint64, the low half first).

        dst -- UB Tensor or ``t[i]`` start (32-byte aligned), uint8/16/32/64, with at least
            16 bytes from its start.
        src_cmpmask -- the CMPMASK handle (returned by vcmp_* / mov_tensor_to_cmpmask of
            this Tik instance).

        Raises ConstraintError (src_cmpmask is not this instance's CMPMASK, a bad dtype),
        AccessError (fewer than 16 bytes left), AlignmentError.  Source: CANN TIK API
        reference, mov_cmpmask_to_tensor; TIK 2020 source ``tik_lib/tik_vector_api_.py``
        (mov_cmpmask_to_tensor), github.com/jizhuoran/caffe-huawei-atlas-convertor
        convertor/huawei/te/tik/.
        """
        if not isinstance(src_cmpmask, CmpMask) or src_cmpmask.tik is not self:
            raise ConstraintError(f"mov_cmpmask_to_tensor: src_cmpmask is error (must be the "
                                  f"CMPMASK returned by vcmp_*/mov_tensor_to_cmpmask), input: "
                                  f"{src_cmpmask!r}")
        self._record(_CmpMaskMove(self, "mov_cmpmask_to_tensor", dst, False))
