"""TIK scalar intrinsics (scalar_max/min/sqrt/abs/countbit0/countbit1/countleading0/conv)
and system control (set_atomic_add with data_move-to-GM accumulation,
set_overflow_status/get_overflow_status).

Semantics: CANN TIK API reference (scalar_*, set_atomic_add, *_overflow_status); the 2020
TIK source in caffe-huawei-atlas-convertor ``convertor/huawei/te/tik/api/
tik_scalar_api.py``, ``tik_lib/tik_system_control_api_.py`` and the debugger's
``debug/intrinsic.py`` (ScalarSingleOp, ScalarBinaryOp, ScalarConv):

* scalar_sqrt: sqrt(|src|) ("the absolute value must be obtained before the square
  root"), rounded once to dst's dtype (int64: truncated, as the debugger's int store);
* scalar_countbit0/1: zeros/ones among the 64 bits of src (two's complement);
  scalar_countleading0: leading zeros of the 64-bit pattern (64 for 0);
* scalar_conv: int32 -> float32 ('' / 'none', RNE), float32 -> int32 ('round', 'floor',
  'ceil'/'ceiling', 'away-zero', 'to-zero'; saturating, NaN -> 0), float16 -> float32
  (''), float32 -> float16 ('' RNE or 'odd').
* set_atomic_add(mode): 0 off, 1 float32, 2 float16 (not on Ascend 310; Ascend 910: 0, 1).
  While on, data_move to GM ADDS the moved data to GM, both read as the mode's dtype
  (float32: numpy's correctly rounded add; float16: the exact sum rounded once, RNE; IEEE
  inf/NaN, no saturation -- the saturation of atomic adds is not documented).
* set_overflow_status(0/1) / get_overflow_status(Scalar uint64): the status word (Ascend
  910 only).  fastisa's vector instructions do NOT set it on overflow (overflow detection
  is not simulated); it holds what set_overflow_status wrote (0 at run start).
"""

from __future__ import annotations

import math

import numpy as np

from .. import cost
from ..errors import ConstraintError
from . import _program as P
from ._program import Expr, Scalar, as_expr, cast_value

import typing as _typing

if _typing.TYPE_CHECKING:
    from .._types import Int
    from ._annot import IntArg, Operand, RealArg, TikScalar

__all__ = ["ScalarMixin"]

_U64 = 1 << 64
_CONV = {("int32", "float32"): ("", "none"), ("float16", "float32"): ("", "none"),
         ("float32", "float16"): ("", "none", "odd"),
         ("float32", "int32"): ("round", "floor", "ceil", "ceiling", "away-zero", "to-zero")}


def _f32_to_f16_odd(x: float) -> float:
    """float32 -> float16 rounding to odd (truncate, set the last bit when inexact)."""
    with np.errstate(over="ignore"):
        h = np.float16(x)
    if math.isnan(x) or math.isinf(x) or float(h) == x:
        return float(h)
    if abs(float(h)) > abs(x):
        h = np.nextafter(h, np.float16(0))
    b = np.array([h], dtype=np.float16).view(np.uint16) | np.uint16(1)
    return float(b.view(np.float16)[0])


def _round_int(x: float, mode: str) -> int:
    if math.isnan(x):
        return 0
    if math.isinf(x):
        return 2**31 - 1 if x > 0 else -2**31
    if mode == "round":
        y = round(x)                     # Python: ties to even
    elif mode == "floor":
        y = math.floor(x)
    elif mode in ("ceil", "ceiling"):
        y = math.ceil(x)
    elif mode == "away-zero":
        y = math.floor(abs(x) + 0.5) * (1 if x >= 0 else -1)
    else:
        y = math.trunc(x)
    return max(-2**31, min(2**31 - 1, int(y)))


class _ScalarOp:
    __slots__ = ("sid", "dtype", "fns", "f", "name")

    def __init__(self, tik, name, dst, srcs, f):
        if not isinstance(dst, Scalar):
            raise ConstraintError(f"{name}: dst should be a Scalar, input: {dst!r}")
        P.check_owner(tik, name, "dst", dst)
        for s in srcs:
            P.check_owner(tik, name, "src", s)
        self.name, self.sid, self.dtype, self.f = name, dst.sid, dst.dtype, f
        self.fns = [as_expr(s).fn for s in srcs]

    def run(self, st):
        env = st.env
        v = self.f(*[fn(env) for fn in self.fns])
        env[self.sid] = cast_value(self.dtype, v)


def _bits64(v) -> int:
    return int(v) & (_U64 - 1)


class _Atomic:
    """data_move to GM while atomic add is on: GM += moved data, in the mode's dtype."""

    _DT = {1: np.float32, 2: np.float16}

    def __init__(self, tik, op, inner):
        self.tik, self.op, self.inner = tik, op, inner

    def __call__(self, st):
        sid = getattr(self.tik, "_atomic_sid", None)
        mode = st.env[sid] if sid is not None else 0
        if not mode:
            return self.inner(st)
        op = self.op
        v = op._v if not op._dyn else op._resolve(st.env)
        doff, soff, nb, bl, sg, dg, cyc = v
        dt = np.dtype(self._DT[mode])
        gm, src = st.bufs[0], st.bufs[op.s.t.sidx]
        lib = np.lib.stride_tricks
        s = lib.as_strided(src[soff:], shape=(nb, bl), strides=(bl + sg, 1)).view(dt)
        d = lib.as_strided(gm[doff:], shape=(nb, bl), strides=(bl + dg, 1)).view(dt)
        with np.errstate(all="ignore"):
            if dt == np.float16:
                d[...] = (d.astype(np.float64) + s.astype(np.float64)).astype(np.float16)
            else:
                d[...] = d + s
        if cost._ACTIVE.get():
            cost.record("MTE", "data_move", cyc)


class _SetReg:
    """Record ``reg = value`` into a run-environment slot (atomic mode, overflow)."""

    def __init__(self, sid, value, check):
        self.sid, self.fn, self.check = sid, as_expr(value).fn, check

    def run(self, st):
        v = int(self.fn(st.env))
        self.check(v)
        st.env[self.sid] = v


class _GetReg:
    def __init__(self, sid, dst):
        self.sid, self.dst = sid, dst

    def run(self, st):
        st.env[self.dst.sid] = cast_value(self.dst.dtype, st.env[self.sid])


class ScalarMixin:
    """Scalar intrinsics and system control, mixed into :class:`fastisa.tik.Tik`."""

    def _sop(self, name, dst, srcs, f, dtypes):
        if dst.dtype not in dtypes:
            raise ConstraintError(f"{name}: dst dtype should be one of {list(dtypes)}, input "
                                  f"dtype: {dst.dtype}")
        for s in srcs:
            if isinstance(s, Expr) and s.const is None and s.dtype != dst.dtype and \
                    name not in ("scalar_conv",):
                raise ConstraintError(f"{name}: when src is a scalar, the data types of src "
                                      f"and dst must be the same, input: {s.dtype} vs "
                                      f"{dst.dtype}")
        self._record(_ScalarOp(self, name, dst, srcs, f))

    def scalar_max(self, dst: TikScalar, src0: RealArg, src1: RealArg) -> None:
        """``dst = max(src0, src1)``, recorded and evaluated when the program runs.

        dst -- Scalar of dtype int64, int32 or float32.
        src0, src1 -- Scalars/Exprs of dst's dtype or immediates (converted to dst's dtype).

        Raises ConstraintError (dst's dtype not allowed; a Scalar src of another dtype than
        dst).  The operation runs when the program runs (src Scalars read then).
        Source: CANN TIK API reference, scalar_max; TIK 2020 source
        ``api/tik_scalar_api.py`` (scalar_max) and its debugger ``debug/intrinsic.py``,
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        self._sop("scalar_max", dst, [src0, src1], max, ("int64", "float32", "int32"))

    def scalar_min(self, dst: TikScalar, src0: RealArg, src1: RealArg) -> None:
        """``dst = min(src0, src1)``, recorded and evaluated when the program runs.

        dst -- Scalar of dtype int64, int32 or float32.
        src0, src1 -- Scalars/Exprs of dst's dtype or immediates (converted to dst's dtype).

        Raises ConstraintError (dst's dtype not allowed; a Scalar src of another dtype than
        dst).  The operation runs when the program runs (src Scalars read then).
        Source: CANN TIK API reference, scalar_min; TIK 2020 source
        ``api/tik_scalar_api.py`` (scalar_min) and its debugger ``debug/intrinsic.py``,
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        self._sop("scalar_min", dst, [src0, src1], min, ("int64", "float32", "int32"))

    def scalar_sqrt(self, dst: TikScalar, src: RealArg) -> None:
        """``dst = sqrt(|src|)``: the absolute value first, as TIK documents.

        The root is computed in float64 and rounded once to dst's dtype (float32: RNE;
        int64: truncated toward zero, as the debugger stores it).

        dst -- Scalar of dtype int64 or float32.
        src -- Scalar/Expr of dst's dtype or an immediate.

        Raises ConstraintError (dst's dtype not allowed; a Scalar src of another dtype than
        dst).  The operation runs when the program runs (src Scalars read then).
        Source: CANN TIK API reference, scalar_sqrt; TIK 2020 source
        ``api/tik_scalar_api.py`` (scalar_sqrt) and its debugger ``debug/intrinsic.py``,
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        self._sop("scalar_sqrt", dst, [src], lambda x: math.sqrt(abs(x)),
                  ("int64", "float32"))

    def scalar_abs(self, dst: TikScalar, src: RealArg) -> None:
        """``dst = |src|``.

        dst -- Scalar of dtype int64 or float32.
        src -- Scalar/Expr of dst's dtype or an immediate.

        Raises ConstraintError (dst's dtype not allowed; a Scalar src of another dtype than
        dst).  The operation runs when the program runs (src Scalars read then).
        Source: CANN TIK API reference, scalar_abs; TIK 2020 source
        ``api/tik_scalar_api.py`` (scalar_abs) and its debugger ``debug/intrinsic.py``,
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        self._sop("scalar_abs", dst, [src], abs, ("int64", "float32"))

    def scalar_countbit0(self, dst: TikScalar, src: RealArg) -> None:
        """``dst = number of 0 bits`` among the 64 bits of src (two's complement).

        dst -- Scalar of dtype uint64 or int64.
        src -- Scalar/Expr or integer immediate, read as a 64-bit pattern.

        Raises ConstraintError (dst's dtype not allowed; a Scalar src of another dtype than
        dst).  The operation runs when the program runs (src Scalars read then).
        Source: CANN TIK API reference, scalar_countbit0; TIK 2020 source
        ``api/tik_scalar_api.py`` (scalar_countbit0) and its debugger
        ``debug/intrinsic.py``, github.com/jizhuoran/caffe-huawei-atlas-convertor
        convertor/huawei/te/tik/.
        """
        self._sop("scalar_countbit0", dst, [src], lambda x: 64 - bin(_bits64(x)).count("1"),
                  ("uint64", "int64"))

    def scalar_countbit1(self, dst: TikScalar, src: RealArg) -> None:
        """``dst = number of 1 bits`` among the 64 bits of src (two's complement).

        dst -- Scalar of dtype uint64 or int64.
        src -- Scalar/Expr or integer immediate, read as a 64-bit pattern.

        Raises ConstraintError (dst's dtype not allowed; a Scalar src of another dtype than
        dst).  The operation runs when the program runs (src Scalars read then).
        Source: CANN TIK API reference, scalar_countbit1; TIK 2020 source
        ``api/tik_scalar_api.py`` (scalar_countbit1) and its debugger
        ``debug/intrinsic.py``, github.com/jizhuoran/caffe-huawei-atlas-convertor
        convertor/huawei/te/tik/.
        """
        self._sop("scalar_countbit1", dst, [src], lambda x: bin(_bits64(x)).count("1"),
                  ("uint64", "int64"))

    def scalar_countleading0(self, dst: TikScalar, src: RealArg) -> None:
        """``dst = number of leading 0 bits`` of src's 64-bit pattern (64 when src is 0).

        dst -- Scalar of dtype uint64 or int64.
        src -- Scalar/Expr or integer immediate, read as a 64-bit pattern.

        Raises ConstraintError (dst's dtype not allowed; a Scalar src of another dtype than
        dst).  The operation runs when the program runs (src Scalars read then).
        Source: CANN TIK API reference, scalar_countleading0; TIK 2020 source
        ``api/tik_scalar_api.py`` (scalar_countleading0) and its debugger
        ``debug/intrinsic.py``, github.com/jizhuoran/caffe-huawei-atlas-convertor
        convertor/huawei/te/tik/.
        """
        self._sop("scalar_countleading0", dst, [src], lambda x: 64 - _bits64(x).bit_length(),
                  ("uint64", "int64"))

    def scalar_conv(self, round_mode: str | None, dst: TikScalar, src: Expr) -> None:
        """``dst = round_mode(src)`` converted to dst's dtype, when the program runs.

        Pairs and modes: int32 -> float32 ('' / 'none', RNE), float32 -> int32 ('round' =
        to nearest even, 'floor', 'ceil'/'ceiling', 'away-zero', 'to-zero'; saturating,
        NaN -> 0), float16 -> float32 (''), float32 -> float16 ('' RNE, or 'odd').

        round_mode -- one of the pair's modes; None means ''.
        dst -- Scalar of the target dtype.
        src -- Scalar/Expr; its dtype is the source type.

        Raises ConstraintError (dst or src not a Scalar, an unsupported pair or mode).
        Source: CANN TIK API reference, scalar_conv; TIK 2020 source
        ``api/tik_scalar_api.py`` (scalar_conv) and its debugger ``debug/intrinsic.py``,
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        if not isinstance(src, Expr) or not isinstance(dst, Scalar):
            raise ConstraintError(f"scalar_conv: dst and src should be Scalars, input: "
                                  f"{dst!r}, {src!r}")
        pair = (src.dtype, dst.dtype)
        rm = "" if round_mode is None else round_mode
        if pair not in _CONV:
            raise ConstraintError(f"scalar_conv: conversion {pair[0]} -> {pair[1]} is not "
                                  f"supported (supported: {sorted(_CONV)})")
        if rm not in _CONV[pair]:
            raise ConstraintError(f"scalar_conv: round_mode should be one of "
                                  f"{list(_CONV[pair])} for {pair[0]} -> {pair[1]}, input "
                                  f"round_mode: {round_mode!r}")
        if pair == ("float32", "int32"):
            f = lambda x: _round_int(x, rm)  # noqa: E731
        elif pair == ("float32", "float16") and rm == "odd":
            f = _f32_to_f16_odd
        else:
            f = float
        self._record(_ScalarOp(self, "scalar_conv", dst, [src], f))

    # ---- system control ----------------------------------------------------------
    def set_atomic_add(self, mode: IntArg) -> None:
        """``atomic_add_mode = mode``: while not 0, data_move to GM adds instead of copying.

        mode 1: GM += the moved data as float32 (numpy's correctly rounded add); mode 2:
        as float16 (the exact sum rounded once, RNE); IEEE inf/NaN, no saturation (the
        saturation of atomic adds is not documented).  0 turns it off.

        mode -- int 0, 1 or 2 (Ascend 910: 0 or 1; not on Ascend 310), or a uint64 Scalar
            (checked when the program runs).

        Raises ConstraintError (a mode out of range, a Scalar of another dtype, the target
        Ascend 310).
        Source: CANN TIK API reference, set_atomic_add; TIK 2020 source
        ``tik_lib/tik_system_control_api_.py`` (set_atomic_add) and its debugger
        ``debug/intrinsic.py``, github.com/jizhuoran/caffe-huawei-atlas-convertor
        convertor/huawei/te/tik/.
        """
        tg = self.target
        allowed = (0, 1) if tg.family == "v100" else (0, 1, 2)
        if tg.name == "Ascend310":
            raise ConstraintError("set_atomic_add: dtype  is not supported on Ascend310 "
                                  "(Instruction set_atomic_add)")
        if isinstance(mode, Scalar):
            if mode.dtype != "uint64":
                raise ConstraintError(f"set_atomic_add: scalar_mode should be a scalar of "
                                      f"uint64, input dtype: {mode.dtype}")
        elif isinstance(mode, bool) or not isinstance(mode, (int, np.integer)):
            raise ConstraintError(f"set_atomic_add: mode should be int or Scalar, input: "
                                  f"{mode!r}")
        elif int(mode) not in allowed:
            raise ConstraintError(f"set_atomic_add: mode should be in the range of "
                                  f"{allowed}, input mode: {int(mode)}")
        if getattr(self, "_atomic_sid", None) is None:
            self._atomic_sid = self._new_sid()

        def check(v):
            if v not in allowed:
                raise ConstraintError(f"set_atomic_add: mode should be in the range of "
                                      f"{allowed}, input mode: {v}")
        self._record(_SetReg(self._atomic_sid, mode, check))

    def data_move(self, dst: Operand, src: Operand, sid: IntArg, nburst: IntArg, burst: IntArg,
                  src_stride: IntArg, dst_stride: IntArg, *args: object, **kwargs: object) -> None:
        """Burst k < nburst of ``burst*32`` bytes: ``src + k*(burst+src_stride)*32`` ->
        ``dst + k*(burst+dst_stride)*32`` (added to GM while set_atomic_add is on).

        Paths GM -> UB, UB -> GM, UB -> UB, GM -> L1, L1 -> UB (L1 -> GM on A2/A3); the
        bytes are copied unchanged (dst and src dtypes may differ).  To GM with
        set_atomic_add on: GM += the moved data, both read in the atomic mode's dtype.

        dst, src -- Tensors or ``t[i]`` starts in GM, UB or L1; UB/L1 starts 32-byte
            aligned.  A tensor may be accessed up to its size rounded up to 32 bytes.
        sid -- [0, 15] (the SMMU id; no effect).
        nburst -- [1, 4095] bursts.
        burst -- [1, 65535], 32-byte blocks per burst.
        src_stride, dst_stride -- [0, 65535], 32-byte blocks from the end of one burst to
            the start of the next.
        args, kwargs -- TIK's further options, accepted and ignored.

        Raises ConstraintError (a range or an unsupported path), AccessError (a burst past a
        tensor's end), AlignmentError (a UB/L1 start not 32-byte aligned).  Immediates are
        checked when recorded, Scalars when the program runs.  Source: CANN TIK API
        reference, data_move; TIK 2020 source ``api/tik_data_operation_api.py``
        (data_move), github.com/jizhuoran/caffe-huawei-atlas-convertor
        convertor/huawei/te/tik/.
        """
        super().data_move(dst, src, sid, nburst, burst, src_stride, dst_stride, *args, **kwargs)
        op = self._stack[-1][-1]
        if op.d.t.sidx == 0:
            op.run = _Atomic(self, op, op.run)

    def tensor_mov(self, dst: Operand, src: Operand, block_mode: str | None, nburst: IntArg,
                   burst_len: IntArg, dst_stride: IntArg, src_stride: IntArg,
                   deqscale: RealArg | Operand | None = None, sid_store_mode: Int = 0,
                   relu: bool = False, pad_mode: object = None, pad_value: object = None,
                   onthefly_mode: Int = 0, src_onthefly: object = None,
                   src_onthefly_stride: Int = 0) -> None:
        """``block_mode=''`` (32-byte blocks) between GM, UB and L1: the same move as
        ``data_move(dst, src, 0, nburst, burst_len, src_stride, dst_stride)`` (note
        tensor_mov's order: dst_stride before src_stride), with data_move's paths, ranges
        and checks (and set_atomic_add when the destination is GM).  The L0C block modes
        ('m', 'v', 'sc', 'dp'), deqscale, relu, padding and on-the-fly modes raise
        NotImplementedError.  Source: CANN TIK API reference tensor_mov; TIK
        ``tik_data_operation_api_.py`` tensor_mov."""
        if block_mode not in ("", None):
            raise NotImplementedError(f"tensor_mov: block_mode {block_mode!r} (L0C matrix "
                                      f"modes) is not implemented by fastisa; '' is")
        for what, v, default in (("deqscale", deqscale, None), ("relu", relu, False),
                                 ("pad_mode", pad_mode, None), ("onthefly_mode",
                                                                onthefly_mode, 0),
                                 ("src_onthefly", src_onthefly, None)):
            if not (v is default or v == default):
                raise NotImplementedError(f"tensor_mov: {what}={v!r} is not implemented by "
                                          f"fastisa (plain 32-byte block moves are)")
        self.data_move(dst, src, 0, nburst, burst_len, src_stride, dst_stride)

    def _ov_target(self, name):
        if self.target.family != "v100" or self.target.name == "Ascend310":
            raise ConstraintError(f"{name}: this api doesn't support version: "
                                  f"{self.target.name}")
        if getattr(self, "_overflow_sid", None) is None:
            self._overflow_sid = self._new_sid()
        return self._overflow_sid

    def set_overflow_status(self, value: Int) -> None:
        """``overflow_status = value`` (the status word get_overflow_status reads).

        value -- int 0 or 1.  Ascend 910 only.

        Raises ConstraintError (another target, a value that is not 0 or 1 or not an int).
        Source: CANN TIK API reference, set_overflow_status; TIK 2020 source
        ``tik_lib/tik_system_control_api_.py`` (set_overflow_status) and its debugger
        ``debug/intrinsic.py``, github.com/jizhuoran/caffe-huawei-atlas-convertor
        convertor/huawei/te/tik/.
        """
        sid = self._ov_target("set_overflow_status")
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise ConstraintError(f"set_overflow_status: value should be Int, invalid type: "
                                  f"{type(value)}")
        if int(value) not in (0, 1):
            raise ConstraintError(f"set_overflow_status: value should be 0 or 1, invalid "
                                  f"value: {int(value)}")
        self._record(_SetReg(sid, int(value), lambda v: None))

    def get_overflow_status(self, status: TikScalar) -> None:
        """``status = overflow_status`` (Ascend 910 only).

        fastisa does not detect float overflow in the vector instructions: the word holds
        what set_overflow_status last wrote (0 when the program starts).

        status -- Scalar of dtype uint64 (written when the program runs).

        Raises ConstraintError (another target, status not a uint64 Scalar).
        Source: CANN TIK API reference, get_overflow_status; TIK 2020 source
        ``tik_lib/tik_system_control_api_.py`` (get_overflow_status) and its debugger
        ``debug/intrinsic.py``, github.com/jizhuoran/caffe-huawei-atlas-convertor
        convertor/huawei/te/tik/.
        """
        sid = self._ov_target("get_overflow_status")
        if not isinstance(status, Scalar):
            raise ConstraintError(f"get_overflow_status: variable should be Scalar, invalid "
                                  f"type for status: {type(status)}")
        if status.dtype != "uint64":
            raise ConstraintError(f"get_overflow_status: variable should be a Scalar of "
                                  f"uint64, invalid dtype for status: {status.dtype}")
        self._record(_GetReg(sid, status))
