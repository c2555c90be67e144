"""vconv / vec_conv with ``deqscale``: the int32 -> float16 dequantising conversion
("deq" mode of TIK's ``vconv``: ``dst = float16(src * deqscale)``).

Semantics: CANN TIK API reference vconv (deqscale: "immediate/Scalar(float16) for
deq-mode", s32 -> f16 only; for s16 -> s8/u8 a uint64 Tensor/Scalar selects vdeq8/deq8);
the 2020 TIK source caffe-huawei-atlas-convertor ``convertor/huawei/te/tik/tik_lib/
tik_vector_api_.py`` (vconv: "deqscale should be None for current conv" for every other
pair).  With ``deqscale == 1.0`` -- every public operator seen calls it so (psroipooling,
to_absolute_bbox, util_tik_comm_func) -- the result is the int32 value rounded once to
float16 (RNE; saturating on saturation-mode targets), which is what fastisa computes.
How the hardware rounds ``src * deqscale`` for other scales is not documented (nor
visible in the debugger, which runs a binary model), so other scales, Scalar scales and
the deq8/vdeq8 modes raise NotImplementedError rather than guess.
"""

from __future__ import annotations

from ..errors import ConstraintError
from ._instr import Tik as _Core
from ._program import Expr, Tensor, TensorView

import typing as _typing

if _typing.TYPE_CHECKING:
    from .._types import Int
    from ._annot import IntArg, Mask, Operand, RealArg

__all__ = ["DeqConvMixin"]


def _src_dst(name, dst, src):
    def dt(x):
        return x.dtype if isinstance(x, (Tensor, TensorView)) else None
    return dt(src), dt(dst)


def _deq(name, dst, src, deqscale, ldst_high_half):
    """-> True when the call is the deq mode with scale 1.0 (run as the plain int32 ->
    float16 conversion); raises for the rest."""
    if deqscale is None:
        return False
    s, d = _src_dst(name, dst, src)
    if (s, d) == ("int32", "float16"):
        if isinstance(deqscale, Expr) and deqscale.const is None:
            raise NotImplementedError(f"{name}: a Scalar deqscale is not implemented by "
                                      f"fastisa (only the immediate 1.0)")
        if isinstance(deqscale, bool) or not isinstance(deqscale, (float, int, Expr)):
            raise ConstraintError(f"{name}: Please specify your deqscale: immediate/Scalar"
                                  f"(float16) for deq-mode, input: {deqscale!r}")
        v = float(deqscale.const if isinstance(deqscale, Expr) else deqscale)
        if v != 1.0:
            raise NotImplementedError(f"{name}: deqscale {v} is not implemented by fastisa: "
                                      f"the rounding of int32*deqscale is not documented "
                                      f"(deqscale 1.0 is)")
        if ldst_high_half:
            raise NotImplementedError(f"{name}: ldst_high_half is not implemented")
        return True
    if s == "int16" and d in ("int8", "uint8"):
        raise NotImplementedError(f"{name}: the deq8/vdeq8 int16 -> {d} conversion is not "
                                  f"implemented by fastisa")
    raise ConstraintError(f"{name}: deqscale should be None for current conv ({s} -> {d}), "
                          f"input deqscale: {deqscale!r}")


class DeqConvMixin:
    """vconv / vec_conv accepting ``deqscale`` (mixed into :class:`fastisa.tik.Tik`)."""

    def vconv(self, mask: Mask, round_mode: str | None, dst: Operand, src: Operand,
              repeat_times: IntArg, dst_blk_stride: IntArg, src_blk_stride: IntArg,
              dst_rep_stride: IntArg, src_rep_stride: IntArg,
              deqscale: RealArg | Operand | None = None, ldst_high_half: bool = False,
              stride_unit: Int = 0) -> None:
        if _deq("vconv", dst, src, deqscale, ldst_high_half):
            deqscale = None
        super().vconv(mask, round_mode, dst, src, repeat_times, dst_blk_stride,
                      src_blk_stride, dst_rep_stride, src_rep_stride, deqscale,
                      ldst_high_half, stride_unit)

    def vec_conv(self, mask: Mask, round_mode: str | None, dst: Operand, src: Operand,
                 repeat_times: IntArg, dst_rep_stride: IntArg, src_rep_stride: IntArg,
                 deqscale: RealArg | Operand | None = None, ldst_high_half: bool = False) -> None:
        if _deq("vec_conv", dst, src, deqscale, ldst_high_half):
            deqscale = None
        super().vec_conv(mask, round_mode, dst, src, repeat_times, dst_rep_stride,
                         src_rep_stride, deqscale, ldst_high_half)


for _n in ("vconv", "vec_conv"):      # the core docstrings describe deqscale too
    getattr(DeqConvMixin, _n).__doc__ = getattr(_Core, _n).__doc__
del _n
