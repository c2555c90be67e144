"""TIK two-source vector instructions, ``Tik`` methods mixed into :class:`fastisa.tik.Tik`:
vec_add, vec_sub, vec_mul, vec_div, vec_max, vec_min, vec_and, vec_or and the legacy
vadd ... vor, and vmla (dst = src0*src1 + dst).

Each method records one vector instruction through ``Tik._vec`` (:mod:`fastisa.tik._vector`:
validation when recorded, one walker call when run).  Lanes, masks, strides and repeats are
described per method.  Semantics: the CANN TIK API reference and the 2020 TIK source with
its CPU debugger (github.com/jizhuoran/caffe-huawei-atlas-convertor,
convertor/huawei/te/tik/api/tik_vector_api.py and tik_lib/tik_vector_api_.py).
"""

from __future__ import annotations

import typing as _typing

if _typing.TYPE_CHECKING:
    from .._types import Int
    from ._annot import IntArg, Mask, Operand

__all__ = ["VecBinaryMixin"]


class VecBinaryMixin:
    """The two-source vector instructions."""

    if _typing.TYPE_CHECKING:
        def _vec(self, name: str, mask: Mask, dst: Operand, srcs: list[Operand],
                 scalar: object, repeat_times: IntArg, blks: list[IntArg],
                 reps: list[IntArg], mask_mode: str = "normal", round_mode: str = "",
                 stride_unit: Int = 0) -> None: ...

    def vec_add(self, mask: Mask, dst: Operand, src0: Operand, src1: Operand, repeat_times: IntArg,
                dst_rep_stride: IntArg, src0_rep_stride: IntArg, src1_rep_stride: IntArg) -> None:
        """``dst[l] = src0[l] + src1[l]`` for every active lane l of every repeat.

        float16 in float32, rounded once (RNE; exact); integers wrap. float16 results
        saturate on Ascend 310/910/310P/310B (inf -> +-65504, NaN -> 0), IEEE on
        910B/910_93. dst may be src1 with dst_rep_stride = src1_rep_stride = 0 (the
        accumulate idiom).

        mask -- int in [1, L] (lanes 0..mask-1) or ``[mask_h, mask_l]`` (bit i of mask_l:
            lane i, of mask_h: lane 64+i; mask_h 0 when L = 64); a Scalar is read at run
            time. L = 256 / element bytes (128 lanes for 16-bit, 64 for 32-bit dtypes).
        dst, src0, src1 -- UB Tensors or ``t[i]`` starts (32-byte aligned), one dtype:
            float16, float32, int32; int16 too except on Ascend 310/910. Lane l of repeat r
            is element ``start + r*rep_stride*B + l``, B = 32 / element bytes.
        repeat_times -- [1, 255]; a Scalar/Expr in [0, 255] at run time (0: nothing).
            Repeats run in order.
        dst_rep_stride, src0_rep_stride, src1_rep_stride -- [0, 255], 32-byte blocks from
            one repeat's start to the next.

        Raises ConstraintError (a range, dtype, mask or target rule), AccessError (a lane
        past a tensor's end), AlignmentError (a start not 32-byte aligned), OverlapError
        (dst partially overlapping a source). Immediates are checked when recorded, Scalars
        when the program runs. Source: CANN TIK API reference, vec_add; TIK 2020 source
        ``api/tik_vector_api.py`` (vec_add),
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        self._vec("vec_add", mask, dst, [src0, src1], None, repeat_times, [1, 1, 1],
                  [dst_rep_stride, src0_rep_stride, src1_rep_stride])

    def vec_sub(self, mask: Mask, dst: Operand, src0: Operand, src1: Operand, repeat_times: IntArg,
                dst_rep_stride: IntArg, src0_rep_stride: IntArg, src1_rep_stride: IntArg) -> None:
        """``dst[l] = src0[l] - src1[l]`` for every active lane l of every repeat.

        float16 in float32, rounded once (RNE; exact); integers wrap. float16 results
        saturate on Ascend 310/910/310P/310B (inf -> +-65504, NaN -> 0), IEEE on
        910B/910_93. dst may be src1 with dst_rep_stride = src1_rep_stride = 0 (the
        accumulate idiom).

        mask -- int in [1, L] (lanes 0..mask-1) or ``[mask_h, mask_l]`` (bit i of mask_l:
            lane i, of mask_h: lane 64+i; mask_h 0 when L = 64); a Scalar is read at run
            time. L = 256 / element bytes (128 lanes for 16-bit, 64 for 32-bit dtypes).
        dst, src0, src1 -- UB Tensors or ``t[i]`` starts (32-byte aligned), one dtype:
            float16, float32, int32; int16 too except on Ascend 310/910. Lane l of repeat r
            is element ``start + r*rep_stride*B + l``, B = 32 / element bytes.
        repeat_times -- [1, 255]; a Scalar/Expr in [0, 255] at run time (0: nothing).
            Repeats run in order.
        dst_rep_stride, src0_rep_stride, src1_rep_stride -- [0, 255], 32-byte blocks from
            one repeat's start to the next.

        Raises ConstraintError (a range, dtype, mask or target rule), AccessError (a lane
        past a tensor's end), AlignmentError (a start not 32-byte aligned), OverlapError
        (dst partially overlapping a source). Immediates are checked when recorded, Scalars
        when the program runs. Source: CANN TIK API reference, vec_sub; TIK 2020 source
        ``api/tik_vector_api.py`` (vec_sub),
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        self._vec("vec_sub", mask, dst, [src0, src1], None, repeat_times, [1, 1, 1],
                  [dst_rep_stride, src0_rep_stride, src1_rep_stride])

    def vec_mul(self, mask: Mask, dst: Operand, src0: Operand, src1: Operand, repeat_times: IntArg,
                dst_rep_stride: IntArg, src0_rep_stride: IntArg, src1_rep_stride: IntArg) -> None:
        """``dst[l] = src0[l] * src1[l]`` for every active lane l of every repeat.

        float16 in float32, rounded once (RNE; exact); integers wrap. float16 results
        saturate on Ascend 310/910/310P/310B (inf -> +-65504, NaN -> 0), IEEE on
        910B/910_93. dst may be src1 with dst_rep_stride = src1_rep_stride = 0 (the
        accumulate idiom).

        mask -- int in [1, L] (lanes 0..mask-1) or ``[mask_h, mask_l]`` (bit i of mask_l:
            lane i, of mask_h: lane 64+i; mask_h 0 when L = 64); a Scalar is read at run
            time. L = 256 / element bytes (128 lanes for 16-bit, 64 for 32-bit dtypes).
        dst, src0, src1 -- UB Tensors or ``t[i]`` starts (32-byte aligned), one dtype:
            float16, float32, int32; int16 too except on Ascend 310/910. Lane l of repeat r
            is element ``start + r*rep_stride*B + l``, B = 32 / element bytes.
        repeat_times -- [1, 255]; a Scalar/Expr in [0, 255] at run time (0: nothing).
            Repeats run in order.
        dst_rep_stride, src0_rep_stride, src1_rep_stride -- [0, 255], 32-byte blocks from
            one repeat's start to the next.

        Raises ConstraintError (a range, dtype, mask or target rule), AccessError (a lane
        past a tensor's end), AlignmentError (a start not 32-byte aligned), OverlapError
        (dst partially overlapping a source). Immediates are checked when recorded, Scalars
        when the program runs. Source: CANN TIK API reference, vec_mul; TIK 2020 source
        ``api/tik_vector_api.py`` (vec_mul),
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        self._vec("vec_mul", mask, dst, [src0, src1], None, repeat_times, [1, 1, 1],
                  [dst_rep_stride, src0_rep_stride, src1_rep_stride])

    def vec_div(self, mask: Mask, dst: Operand, src0: Operand, src1: Operand, repeat_times: IntArg,
                dst_rep_stride: IntArg, src0_rep_stride: IntArg, src1_rep_stride: IntArg) -> None:
        """``dst[l] = src0[l] / src1[l]`` for every active lane l of every repeat.

        IEEE division (float16 in float32, rounded once, RNE); x/0 = +-inf, 0/0 = NaN.
        float16 results saturate on Ascend 310/910/310P/310B (inf -> +-65504, NaN -> 0),
        IEEE on 910B/910_93.

        mask -- int in [1, L] (lanes 0..mask-1) or ``[mask_h, mask_l]`` (bit i of mask_l:
            lane i, of mask_h: lane 64+i; mask_h 0 when L = 64); a Scalar is read at run
            time. L = 256 / element bytes (128 lanes for 16-bit, 64 for 32-bit dtypes).
        dst, src0, src1 -- UB Tensors or ``t[i]`` starts (32-byte aligned), one dtype:
            float16, float32. Lane l of repeat r is element ``start + r*rep_stride*B + l``,
            B = 32 / element bytes.
        repeat_times -- [1, 255]; a Scalar/Expr in [0, 255] at run time (0: nothing).
            Repeats run in order.
        dst_rep_stride, src0_rep_stride, src1_rep_stride -- [0, 255], 32-byte blocks from
            one repeat's start to the next.

        Raises ConstraintError (a range, dtype, mask or target rule), AccessError (a lane
        past a tensor's end), AlignmentError (a start not 32-byte aligned), OverlapError
        (dst partially overlapping a source). Immediates are checked when recorded, Scalars
        when the program runs. Source: CANN TIK API reference, vec_div; TIK 2020 source
        ``api/tik_vector_api.py`` (vec_div),
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        self._vec("vec_div", mask, dst, [src0, src1], None, repeat_times, [1, 1, 1],
                  [dst_rep_stride, src0_rep_stride, src1_rep_stride])

    def vec_max(self, mask: Mask, dst: Operand, src0: Operand, src1: Operand, repeat_times: IntArg,
                dst_rep_stride: IntArg, src0_rep_stride: IntArg, src1_rep_stride: IntArg) -> None:
        """``dst[l] = max(src0[l], src1[l])`` for every active lane l of every repeat.

        NaN propagates; on a tie src0's value is kept. dst may be src1 with dst_rep_stride =
        src1_rep_stride = 0 (the accumulate idiom).

        mask -- int in [1, L] (lanes 0..mask-1) or ``[mask_h, mask_l]`` (bit i of mask_l:
            lane i, of mask_h: lane 64+i; mask_h 0 when L = 64); a Scalar is read at run
            time. L = 256 / element bytes (128 lanes for 16-bit, 64 for 32-bit dtypes).
        dst, src0, src1 -- UB Tensors or ``t[i]`` starts (32-byte aligned), one dtype:
            float16, float32, int32; int16 too except on Ascend 310/910. Lane l of repeat r
            is element ``start + r*rep_stride*B + l``, B = 32 / element bytes.
        repeat_times -- [1, 255]; a Scalar/Expr in [0, 255] at run time (0: nothing).
            Repeats run in order.
        dst_rep_stride, src0_rep_stride, src1_rep_stride -- [0, 255], 32-byte blocks from
            one repeat's start to the next.

        Raises ConstraintError (a range, dtype, mask or target rule), AccessError (a lane
        past a tensor's end), AlignmentError (a start not 32-byte aligned), OverlapError
        (dst partially overlapping a source). Immediates are checked when recorded, Scalars
        when the program runs. Source: CANN TIK API reference, vec_max; TIK 2020 source
        ``api/tik_vector_api.py`` (vec_max),
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        self._vec("vec_max", mask, dst, [src0, src1], None, repeat_times, [1, 1, 1],
                  [dst_rep_stride, src0_rep_stride, src1_rep_stride])

    def vec_min(self, mask: Mask, dst: Operand, src0: Operand, src1: Operand, repeat_times: IntArg,
                dst_rep_stride: IntArg, src0_rep_stride: IntArg, src1_rep_stride: IntArg) -> None:
        """``dst[l] = min(src0[l], src1[l])`` for every active lane l of every repeat.

        NaN propagates; on a tie src0's value is kept. dst may be src1 with dst_rep_stride =
        src1_rep_stride = 0 (the accumulate idiom).

        mask -- int in [1, L] (lanes 0..mask-1) or ``[mask_h, mask_l]`` (bit i of mask_l:
            lane i, of mask_h: lane 64+i; mask_h 0 when L = 64); a Scalar is read at run
            time. L = 256 / element bytes (128 lanes for 16-bit, 64 for 32-bit dtypes).
        dst, src0, src1 -- UB Tensors or ``t[i]`` starts (32-byte aligned), one dtype:
            float16, float32, int32; int16 too except on Ascend 310/910. Lane l of repeat r
            is element ``start + r*rep_stride*B + l``, B = 32 / element bytes.
        repeat_times -- [1, 255]; a Scalar/Expr in [0, 255] at run time (0: nothing).
            Repeats run in order.
        dst_rep_stride, src0_rep_stride, src1_rep_stride -- [0, 255], 32-byte blocks from
            one repeat's start to the next.

        Raises ConstraintError (a range, dtype, mask or target rule), AccessError (a lane
        past a tensor's end), AlignmentError (a start not 32-byte aligned), OverlapError
        (dst partially overlapping a source). Immediates are checked when recorded, Scalars
        when the program runs. Source: CANN TIK API reference, vec_min; TIK 2020 source
        ``api/tik_vector_api.py`` (vec_min),
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        self._vec("vec_min", mask, dst, [src0, src1], None, repeat_times, [1, 1, 1],
                  [dst_rep_stride, src0_rep_stride, src1_rep_stride])

    def vec_and(self, mask: Mask, dst: Operand, src0: Operand, src1: Operand, repeat_times: IntArg,
                dst_rep_stride: IntArg, src0_rep_stride: IntArg, src1_rep_stride: IntArg) -> None:
        """``dst[l] = src0[l] & src1[l]`` for every active lane l of every repeat.

        Bitwise AND of the 16-bit patterns. dst may be src1 with dst_rep_stride =
        src1_rep_stride = 0 (the accumulate idiom).

        mask -- int in [1, L] (lanes 0..mask-1) or ``[mask_h, mask_l]`` (bit i of mask_l:
            lane i, of mask_h: lane 64+i; mask_h 0 when L = 64); a Scalar is read at run
            time. L = 256 / element bytes (128 lanes for 16-bit, 64 for 32-bit dtypes).
        dst, src0, src1 -- UB Tensors or ``t[i]`` starts (32-byte aligned), one dtype:
            uint16, int16. Lane l of repeat r is element ``start + r*rep_stride*B + l``, B =
            32 / element bytes.
        repeat_times -- [1, 255]; a Scalar/Expr in [0, 255] at run time (0: nothing).
            Repeats run in order.
        dst_rep_stride, src0_rep_stride, src1_rep_stride -- [0, 255], 32-byte blocks from
            one repeat's start to the next.

        Raises ConstraintError (a range, dtype, mask or target rule), AccessError (a lane
        past a tensor's end), AlignmentError (a start not 32-byte aligned), OverlapError
        (dst partially overlapping a source). Immediates are checked when recorded, Scalars
        when the program runs. Source: CANN TIK API reference, vec_and; TIK 2020 source
        ``api/tik_vector_api.py`` (vec_and),
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        self._vec("vec_and", mask, dst, [src0, src1], None, repeat_times, [1, 1, 1],
                  [dst_rep_stride, src0_rep_stride, src1_rep_stride])

    def vec_or(self, mask: Mask, dst: Operand, src0: Operand, src1: Operand, repeat_times: IntArg,
               dst_rep_stride: IntArg, src0_rep_stride: IntArg, src1_rep_stride: IntArg) -> None:
        """``dst[l] = src0[l] | src1[l]`` for every active lane l of every repeat.

        Bitwise OR of the 16-bit patterns. dst may be src1 with dst_rep_stride =
        src1_rep_stride = 0 (the accumulate idiom).

        mask -- int in [1, L] (lanes 0..mask-1) or ``[mask_h, mask_l]`` (bit i of mask_l:
            lane i, of mask_h: lane 64+i; mask_h 0 when L = 64); a Scalar is read at run
            time. L = 256 / element bytes (128 lanes for 16-bit, 64 for 32-bit dtypes).
        dst, src0, src1 -- UB Tensors or ``t[i]`` starts (32-byte aligned), one dtype:
            uint16, int16. Lane l of repeat r is element ``start + r*rep_stride*B + l``, B =
            32 / element bytes.
        repeat_times -- [1, 255]; a Scalar/Expr in [0, 255] at run time (0: nothing).
            Repeats run in order.
        dst_rep_stride, src0_rep_stride, src1_rep_stride -- [0, 255], 32-byte blocks from
            one repeat's start to the next.

        Raises ConstraintError (a range, dtype, mask or target rule), AccessError (a lane
        past a tensor's end), AlignmentError (a start not 32-byte aligned), OverlapError
        (dst partially overlapping a source). Immediates are checked when recorded, Scalars
        when the program runs. Source: CANN TIK API reference, vec_or; TIK 2020 source
        ``api/tik_vector_api.py`` (vec_or),
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        self._vec("vec_or", mask, dst, [src0, src1], None, repeat_times, [1, 1, 1],
                  [dst_rep_stride, src0_rep_stride, src1_rep_stride])

    def vadd(self, mask: Mask, dst: Operand, src0: Operand, src1: Operand, repeat_times: IntArg,
             dst_blk_stride: IntArg, src0_blk_stride: IntArg, src1_blk_stride: IntArg,
             dst_rep_stride: IntArg, src0_rep_stride: IntArg, src1_rep_stride: IntArg,
             stride_unit: Int = 0) -> None:
        """``dst[l] = src0[l] + src1[l]`` per active lane, with block strides (legacy vec_add).

        float16 in float32, rounded once (RNE; exact); integers wrap. float16 results
        saturate on Ascend 310/910/310P/310B (inf -> +-65504, NaN -> 0), IEEE on
        910B/910_93. dst may be src1 with dst_rep_stride = src1_rep_stride = 0 (the
        accumulate idiom).

        mask -- int in [1, L] (lanes 0..mask-1) or ``[mask_h, mask_l]`` (bit i of mask_l:
            lane i, of mask_h: lane 64+i; mask_h 0 when L = 64); a Scalar is read at run
            time. L = 256 / element bytes (128 lanes for 16-bit, 64 for 32-bit dtypes).
        dst, src0, src1 -- UB Tensors or ``t[i]`` starts (32-byte aligned), one dtype:
            float16, float32, int32; int16 too except on Ascend 310/910. Lane l of repeat r
            is element ``start + r*rep_stride*B + (l//B)*blk_stride*B + l%B``, B = 32 /
            element bytes.
        repeat_times -- [1, 255]; a Scalar/Expr in [0, 255] at run time (0: nothing).
            Repeats run in order.
        dst_blk_stride, src0_blk_stride, src1_blk_stride -- [0, 255], 32-byte blocks from
            one block of a repeat to the next (1: contiguous).
        dst_rep_stride, src0_rep_stride, src1_rep_stride -- [0, 255], 32-byte blocks from
            one repeat's start to the next.
        stride_unit -- ignored on Ascend 310/910 (as TIK does); elsewhere 0 (as above) or 1
            (rep_stride = the gap in blocks after a repeat's last block); 2 and 3 raise
            NotImplementedError.

        Raises ConstraintError (a range, dtype, mask or target rule), AccessError (a lane
        past a tensor's end), AlignmentError (a start not 32-byte aligned), OverlapError
        (dst partially overlapping a source). Immediates are checked when recorded, Scalars
        when the program runs. Source: CANN TIK API reference, vadd; TIK 2020 source
        ``tik_lib/tik_vector_api_.py`` (vadd),
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        self._vec("vadd", mask, dst, [src0, src1], None, repeat_times,
                  [dst_blk_stride, src0_blk_stride, src1_blk_stride],
                  [dst_rep_stride, src0_rep_stride, src1_rep_stride],
                  stride_unit=stride_unit)

    def vsub(self, mask: Mask, dst: Operand, src0: Operand, src1: Operand, repeat_times: IntArg,
             dst_blk_stride: IntArg, src0_blk_stride: IntArg, src1_blk_stride: IntArg,
             dst_rep_stride: IntArg, src0_rep_stride: IntArg, src1_rep_stride: IntArg,
             stride_unit: Int = 0) -> None:
        """``dst[l] = src0[l] - src1[l]`` per active lane, with block strides (legacy vec_sub).

        float16 in float32, rounded once (RNE; exact); integers wrap. float16 results
        saturate on Ascend 310/910/310P/310B (inf -> +-65504, NaN -> 0), IEEE on
        910B/910_93. dst may be src1 with dst_rep_stride = src1_rep_stride = 0 (the
        accumulate idiom).

        mask -- int in [1, L] (lanes 0..mask-1) or ``[mask_h, mask_l]`` (bit i of mask_l:
            lane i, of mask_h: lane 64+i; mask_h 0 when L = 64); a Scalar is read at run
            time. L = 256 / element bytes (128 lanes for 16-bit, 64 for 32-bit dtypes).
        dst, src0, src1 -- UB Tensors or ``t[i]`` starts (32-byte aligned), one dtype:
            float16, float32, int32; int16 too except on Ascend 310/910. Lane l of repeat r
            is element ``start + r*rep_stride*B + (l//B)*blk_stride*B + l%B``, B = 32 /
            element bytes.
        repeat_times -- [1, 255]; a Scalar/Expr in [0, 255] at run time (0: nothing).
            Repeats run in order.
        dst_blk_stride, src0_blk_stride, src1_blk_stride -- [0, 255], 32-byte blocks from
            one block of a repeat to the next (1: contiguous).
        dst_rep_stride, src0_rep_stride, src1_rep_stride -- [0, 255], 32-byte blocks from
            one repeat's start to the next.
        stride_unit -- ignored on Ascend 310/910 (as TIK does); elsewhere 0 (as above) or 1
            (rep_stride = the gap in blocks after a repeat's last block); 2 and 3 raise
            NotImplementedError.

        Raises ConstraintError (a range, dtype, mask or target rule), AccessError (a lane
        past a tensor's end), AlignmentError (a start not 32-byte aligned), OverlapError
        (dst partially overlapping a source). Immediates are checked when recorded, Scalars
        when the program runs. Source: CANN TIK API reference, vsub; TIK 2020 source
        ``tik_lib/tik_vector_api_.py`` (vsub),
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        self._vec("vsub", mask, dst, [src0, src1], None, repeat_times,
                  [dst_blk_stride, src0_blk_stride, src1_blk_stride],
                  [dst_rep_stride, src0_rep_stride, src1_rep_stride],
                  stride_unit=stride_unit)

    def vmul(self, mask: Mask, dst: Operand, src0: Operand, src1: Operand, repeat_times: IntArg,
             dst_blk_stride: IntArg, src0_blk_stride: IntArg, src1_blk_stride: IntArg,
             dst_rep_stride: IntArg, src0_rep_stride: IntArg, src1_rep_stride: IntArg,
             stride_unit: Int = 0) -> None:
        """``dst[l] = src0[l] * src1[l]`` per active lane, with block strides (legacy vec_mul).

        float16 in float32, rounded once (RNE; exact); integers wrap. float16 results
        saturate on Ascend 310/910/310P/310B (inf -> +-65504, NaN -> 0), IEEE on
        910B/910_93. dst may be src1 with dst_rep_stride = src1_rep_stride = 0 (the
        accumulate idiom).

        mask -- int in [1, L] (lanes 0..mask-1) or ``[mask_h, mask_l]`` (bit i of mask_l:
            lane i, of mask_h: lane 64+i; mask_h 0 when L = 64); a Scalar is read at run
            time. L = 256 / element bytes (128 lanes for 16-bit, 64 for 32-bit dtypes).
        dst, src0, src1 -- UB Tensors or ``t[i]`` starts (32-byte aligned), one dtype:
            float16, float32, int32; int16 too except on Ascend 310/910. Lane l of repeat r
            is element ``start + r*rep_stride*B + (l//B)*blk_stride*B + l%B``, B = 32 /
            element bytes.
        repeat_times -- [1, 255]; a Scalar/Expr in [0, 255] at run time (0: nothing).
            Repeats run in order.
        dst_blk_stride, src0_blk_stride, src1_blk_stride -- [0, 255], 32-byte blocks from
            one block of a repeat to the next (1: contiguous).
        dst_rep_stride, src0_rep_stride, src1_rep_stride -- [0, 255], 32-byte blocks from
            one repeat's start to the next.
        stride_unit -- ignored on Ascend 310/910 (as TIK does); elsewhere 0 (as above) or 1
            (rep_stride = the gap in blocks after a repeat's last block); 2 and 3 raise
            NotImplementedError.

        Raises ConstraintError (a range, dtype, mask or target rule), AccessError (a lane
        past a tensor's end), AlignmentError (a start not 32-byte aligned), OverlapError
        (dst partially overlapping a source). Immediates are checked when recorded, Scalars
        when the program runs. Source: CANN TIK API reference, vmul; TIK 2020 source
        ``tik_lib/tik_vector_api_.py`` (vmul),
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        self._vec("vmul", mask, dst, [src0, src1], None, repeat_times,
                  [dst_blk_stride, src0_blk_stride, src1_blk_stride],
                  [dst_rep_stride, src0_rep_stride, src1_rep_stride],
                  stride_unit=stride_unit)

    def vdiv(self, mask: Mask, dst: Operand, src0: Operand, src1: Operand, repeat_times: IntArg,
             dst_blk_stride: IntArg, src0_blk_stride: IntArg, src1_blk_stride: IntArg,
             dst_rep_stride: IntArg, src0_rep_stride: IntArg, src1_rep_stride: IntArg,
             stride_unit: Int = 0) -> None:
        """``dst[l] = src0[l] / src1[l]`` per active lane, with block strides (legacy vec_div).

        IEEE division (float16 in float32, rounded once, RNE); x/0 = +-inf, 0/0 = NaN.
        float16 results saturate on Ascend 310/910/310P/310B (inf -> +-65504, NaN -> 0),
        IEEE on 910B/910_93.

        mask -- int in [1, L] (lanes 0..mask-1) or ``[mask_h, mask_l]`` (bit i of mask_l:
            lane i, of mask_h: lane 64+i; mask_h 0 when L = 64); a Scalar is read at run
            time. L = 256 / element bytes (128 lanes for 16-bit, 64 for 32-bit dtypes).
        dst, src0, src1 -- UB Tensors or ``t[i]`` starts (32-byte aligned), one dtype:
            float16, float32. Lane l of repeat r is element ``start + r*rep_stride*B +
            (l//B)*blk_stride*B + l%B``, B = 32 / element bytes.
        repeat_times -- [1, 255]; a Scalar/Expr in [0, 255] at run time (0: nothing).
            Repeats run in order.
        dst_blk_stride, src0_blk_stride, src1_blk_stride -- [0, 255], 32-byte blocks from
            one block of a repeat to the next (1: contiguous).
        dst_rep_stride, src0_rep_stride, src1_rep_stride -- [0, 255], 32-byte blocks from
            one repeat's start to the next.
        stride_unit -- ignored on Ascend 310/910 (as TIK does); elsewhere 0 (as above) or 1
            (rep_stride = the gap in blocks after a repeat's last block); 2 and 3 raise
            NotImplementedError.

        Raises ConstraintError (a range, dtype, mask or target rule), AccessError (a lane
        past a tensor's end), AlignmentError (a start not 32-byte aligned), OverlapError
        (dst partially overlapping a source). Immediates are checked when recorded, Scalars
        when the program runs. Source: CANN TIK API reference, vdiv; TIK 2020 source
        ``tik_lib/tik_vector_api_.py`` (vdiv),
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        self._vec("vdiv", mask, dst, [src0, src1], None, repeat_times,
                  [dst_blk_stride, src0_blk_stride, src1_blk_stride],
                  [dst_rep_stride, src0_rep_stride, src1_rep_stride],
                  stride_unit=stride_unit)

    def vmax(self, mask: Mask, dst: Operand, src0: Operand, src1: Operand, repeat_times: IntArg,
             dst_blk_stride: IntArg, src0_blk_stride: IntArg, src1_blk_stride: IntArg,
             dst_rep_stride: IntArg, src0_rep_stride: IntArg, src1_rep_stride: IntArg,
             stride_unit: Int = 0) -> None:
        """``dst[l] = max(src0[l], src1[l])`` per active lane, with block strides (legacy vec_max).

        NaN propagates; on a tie src0's value is kept. dst may be src1 with dst_rep_stride =
        src1_rep_stride = 0 (the accumulate idiom).

        mask -- int in [1, L] (lanes 0..mask-1) or ``[mask_h, mask_l]`` (bit i of mask_l:
            lane i, of mask_h: lane 64+i; mask_h 0 when L = 64); a Scalar is read at run
            time. L = 256 / element bytes (128 lanes for 16-bit, 64 for 32-bit dtypes).
        dst, src0, src1 -- UB Tensors or ``t[i]`` starts (32-byte aligned), one dtype:
            float16, float32, int32; int16 too except on Ascend 310/910. Lane l of repeat r
            is element ``start + r*rep_stride*B + (l//B)*blk_stride*B + l%B``, B = 32 /
            element bytes.
        repeat_times -- [1, 255]; a Scalar/Expr in [0, 255] at run time (0: nothing).
            Repeats run in order.
        dst_blk_stride, src0_blk_stride, src1_blk_stride -- [0, 255], 32-byte blocks from
            one block of a repeat to the next (1: contiguous).
        dst_rep_stride, src0_rep_stride, src1_rep_stride -- [0, 255], 32-byte blocks from
            one repeat's start to the next.
        stride_unit -- ignored on Ascend 310/910 (as TIK does); elsewhere 0 (as above) or 1
            (rep_stride = the gap in blocks after a repeat's last block); 2 and 3 raise
            NotImplementedError.

        Raises ConstraintError (a range, dtype, mask or target rule), AccessError (a lane
        past a tensor's end), AlignmentError (a start not 32-byte aligned), OverlapError
        (dst partially overlapping a source). Immediates are checked when recorded, Scalars
        when the program runs. Source: CANN TIK API reference, vmax; TIK 2020 source
        ``tik_lib/tik_vector_api_.py`` (vmax),
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        self._vec("vmax", mask, dst, [src0, src1], None, repeat_times,
                  [dst_blk_stride, src0_blk_stride, src1_blk_stride],
                  [dst_rep_stride, src0_rep_stride, src1_rep_stride],
                  stride_unit=stride_unit)

    def vmin(self, mask: Mask, dst: Operand, src0: Operand, src1: Operand, repeat_times: IntArg,
             dst_blk_stride: IntArg, src0_blk_stride: IntArg, src1_blk_stride: IntArg,
             dst_rep_stride: IntArg, src0_rep_stride: IntArg, src1_rep_stride: IntArg,
             stride_unit: Int = 0) -> None:
        """``dst[l] = min(src0[l], src1[l])`` per active lane, with block strides (legacy vec_min).

        NaN propagates; on a tie src0's value is kept. dst may be src1 with dst_rep_stride =
        src1_rep_stride = 0 (the accumulate idiom).

        mask -- int in [1, L] (lanes 0..mask-1) or ``[mask_h, mask_l]`` (bit i of mask_l:
            lane i, of mask_h: lane 64+i; mask_h 0 when L = 64); a Scalar is read at run
            time. L = 256 / element bytes (128 lanes for 16-bit, 64 for 32-bit dtypes).
        dst, src0, src1 -- UB Tensors or ``t[i]`` starts (32-byte aligned), one dtype:
            float16, float32, int32; int16 too except on Ascend 310/910. Lane l of repeat r
            is element ``start + r*rep_stride*B + (l//B)*blk_stride*B + l%B``, B = 32 /
            element bytes.
        repeat_times -- [1, 255]; a Scalar/Expr in [0, 255] at run time (0: nothing).
            Repeats run in order.
        dst_blk_stride, src0_blk_stride, src1_blk_stride -- [0, 255], 32-byte blocks from
            one block of a repeat to the next (1: contiguous).
        dst_rep_stride, src0_rep_stride, src1_rep_stride -- [0, 255], 32-byte blocks from
            one repeat's start to the next.
        stride_unit -- ignored on Ascend 310/910 (as TIK does); elsewhere 0 (as above) or 1
            (rep_stride = the gap in blocks after a repeat's last block); 2 and 3 raise
            NotImplementedError.

        Raises ConstraintError (a range, dtype, mask or target rule), AccessError (a lane
        past a tensor's end), AlignmentError (a start not 32-byte aligned), OverlapError
        (dst partially overlapping a source). Immediates are checked when recorded, Scalars
        when the program runs. Source: CANN TIK API reference, vmin; TIK 2020 source
        ``tik_lib/tik_vector_api_.py`` (vmin),
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        self._vec("vmin", mask, dst, [src0, src1], None, repeat_times,
                  [dst_blk_stride, src0_blk_stride, src1_blk_stride],
                  [dst_rep_stride, src0_rep_stride, src1_rep_stride],
                  stride_unit=stride_unit)

    def vand(self, mask: Mask, dst: Operand, src0: Operand, src1: Operand, repeat_times: IntArg,
             dst_blk_stride: IntArg, src0_blk_stride: IntArg, src1_blk_stride: IntArg,
             dst_rep_stride: IntArg, src0_rep_stride: IntArg, src1_rep_stride: IntArg,
             stride_unit: Int = 0) -> None:
        """``dst[l] = src0[l] & src1[l]`` per active lane, with block strides (legacy vec_and).

        Bitwise AND of the 16-bit patterns. dst may be src1 with dst_rep_stride =
        src1_rep_stride = 0 (the accumulate idiom).

        mask -- int in [1, L] (lanes 0..mask-1) or ``[mask_h, mask_l]`` (bit i of mask_l:
            lane i, of mask_h: lane 64+i; mask_h 0 when L = 64); a Scalar is read at run
            time. L = 256 / element bytes (128 lanes for 16-bit, 64 for 32-bit dtypes).
        dst, src0, src1 -- UB Tensors or ``t[i]`` starts (32-byte aligned), one dtype:
            uint16, int16. Lane l of repeat r is element ``start + r*rep_stride*B +
            (l//B)*blk_stride*B + l%B``, B = 32 / element bytes.
        repeat_times -- [1, 255]; a Scalar/Expr in [0, 255] at run time (0: nothing).
            Repeats run in order.
        dst_blk_stride, src0_blk_stride, src1_blk_stride -- [0, 255], 32-byte blocks from
            one block of a repeat to the next (1: contiguous).
        dst_rep_stride, src0_rep_stride, src1_rep_stride -- [0, 255], 32-byte blocks from
            one repeat's start to the next.
        stride_unit -- ignored on Ascend 310/910 (as TIK does); elsewhere 0 (as above) or 1
            (rep_stride = the gap in blocks after a repeat's last block); 2 and 3 raise
            NotImplementedError.

        Raises ConstraintError (a range, dtype, mask or target rule), AccessError (a lane
        past a tensor's end), AlignmentError (a start not 32-byte aligned), OverlapError
        (dst partially overlapping a source). Immediates are checked when recorded, Scalars
        when the program runs. Source: CANN TIK API reference, vand; TIK 2020 source
        ``tik_lib/tik_vector_api_.py`` (vand),
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        self._vec("vand", mask, dst, [src0, src1], None, repeat_times,
                  [dst_blk_stride, src0_blk_stride, src1_blk_stride],
                  [dst_rep_stride, src0_rep_stride, src1_rep_stride],
                  stride_unit=stride_unit)

    def vor(self, mask: Mask, dst: Operand, src0: Operand, src1: Operand, repeat_times: IntArg,
            dst_blk_stride: IntArg, src0_blk_stride: IntArg, src1_blk_stride: IntArg,
            dst_rep_stride: IntArg, src0_rep_stride: IntArg, src1_rep_stride: IntArg,
            stride_unit: Int = 0) -> None:
        """``dst[l] = src0[l] | src1[l]`` per active lane, with block strides (legacy vec_or).

        Bitwise OR of the 16-bit patterns. dst may be src1 with dst_rep_stride =
        src1_rep_stride = 0 (the accumulate idiom).

        mask -- int in [1, L] (lanes 0..mask-1) or ``[mask_h, mask_l]`` (bit i of mask_l:
            lane i, of mask_h: lane 64+i; mask_h 0 when L = 64); a Scalar is read at run
            time. L = 256 / element bytes (128 lanes for 16-bit, 64 for 32-bit dtypes).
        dst, src0, src1 -- UB Tensors or ``t[i]`` starts (32-byte aligned), one dtype:
            uint16, int16. Lane l of repeat r is element ``start + r*rep_stride*B +
            (l//B)*blk_stride*B + l%B``, B = 32 / element bytes.
        repeat_times -- [1, 255]; a Scalar/Expr in [0, 255] at run time (0: nothing).
            Repeats run in order.
        dst_blk_stride, src0_blk_stride, src1_blk_stride -- [0, 255], 32-byte blocks from
            one block of a repeat to the next (1: contiguous).
        dst_rep_stride, src0_rep_stride, src1_rep_stride -- [0, 255], 32-byte blocks from
            one repeat's start to the next.
        stride_unit -- ignored on Ascend 310/910 (as TIK does); elsewhere 0 (as above) or 1
            (rep_stride = the gap in blocks after a repeat's last block); 2 and 3 raise
            NotImplementedError.

        Raises ConstraintError (a range, dtype, mask or target rule), AccessError (a lane
        past a tensor's end), AlignmentError (a start not 32-byte aligned), OverlapError
        (dst partially overlapping a source). Immediates are checked when recorded, Scalars
        when the program runs. Source: CANN TIK API reference, vor; TIK 2020 source
        ``tik_lib/tik_vector_api_.py`` (vor),
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        self._vec("vor", mask, dst, [src0, src1], None, repeat_times,
                  [dst_blk_stride, src0_blk_stride, src1_blk_stride],
                  [dst_rep_stride, src0_rep_stride, src1_rep_stride],
                  stride_unit=stride_unit)

    def vmla(self, mask: Mask, dst: Operand, src0: Operand, src1: Operand, repeat_times: IntArg,
             dst_blk_stride: IntArg, src0_blk_stride: IntArg, src1_blk_stride: IntArg,
             dst_rep_stride: IntArg, src0_rep_stride: IntArg, src1_rep_stride: IntArg,
             stride_unit: Int = 0) -> None:
        """``dst[l] = src0[l] * src1[l] + dst[l]`` per active lane, with block strides (dst is
        read and written).

        float16: the product and the sum in float32, rounded once to float16 (as vec_axpy);
        float32: the product rounded, then the sum (not fused). float16 results saturate on
        Ascend 310/910/310P/310B, IEEE on 910B/910_93. TIK's mixed form (float32 dst,
        float16 sources) is not implemented: its dtype check raises ConstraintError.

        mask -- int in [1, L] (lanes 0..mask-1) or ``[mask_h, mask_l]`` (bit i of mask_l:
            lane i, of mask_h: lane 64+i; mask_h 0 when L = 64); a Scalar is read at run
            time. L = 256 / element bytes (128 lanes for float16, 64 for float32).
        dst, src0, src1 -- UB Tensors or ``t[i]`` starts (32-byte aligned), one dtype:
            float16, float32. Lane l of repeat r is element ``start + r*rep_stride*B +
            (l//B)*blk_stride*B + l%B``, B = 32 / element bytes.
        repeat_times -- [1, 255]; a Scalar/Expr in [0, 255] at run time (0: nothing).
            Repeats run in order.
        dst_blk_stride, src0_blk_stride, src1_blk_stride -- [0, 255], 32-byte blocks from
            one block of a repeat to the next (1: contiguous).
        dst_rep_stride, src0_rep_stride, src1_rep_stride -- [0, 255], 32-byte blocks from
            one repeat's start to the next.
        stride_unit -- ignored on Ascend 310/910 (as TIK does); elsewhere 0 or 1 (rep_stride
            = the gap in blocks after a repeat's last block); 2 and 3 raise
            NotImplementedError.

        Raises ConstraintError (a range, dtype, mask or target rule), AccessError (a lane
        past a tensor's end), AlignmentError (a start not 32-byte aligned), OverlapError
        (dst partially overlapping a source). Immediates are checked when recorded, Scalars
        when the program runs. Source: CANN TIK API reference, vmla; TIK 2020 source
        ``tik_lib/tik_vector_api_.py`` (vmla: dst accessed "rw"; platform_config
        Intrinsic_vmla f16f16f16, f32f32f32, f32f16f16),
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        self._vec("vmla", mask, dst, [src0, src1], None, repeat_times,
                  [dst_blk_stride, src0_blk_stride, src1_blk_stride],
                  [dst_rep_stride, src0_rep_stride, src1_rep_stride],
                  stride_unit=stride_unit)
