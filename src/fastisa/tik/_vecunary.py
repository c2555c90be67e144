"""TIK single-source vector instructions, ``Tik`` methods mixed into :class:`fastisa.tik.Tik`:
vec_abs, vec_exp, vec_ln, vec_rec, vec_relu, vec_rsqrt, vec_sqrt, vec_not and the legacy
vabs ... vnot.

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

__all__ = ["VecUnaryMixin"]


class VecUnaryMixin:
    """The single-source vector instructions."""

    if _typing.TYPE_CHECKING:
        def _vec(self, name: str, mask: Mask, dst: Operand, srcs: list[Operand],
                 scalar: object, repeat_times: IntArg, blks: list[IntArg],
                 reps: list[IntArg], mask_mode: str = "normal", round_mode: str = "",
                 stride_unit: Int = 0) -> None: ...

    def vec_abs(self, mask: Mask, dst: Operand, src: Operand, repeat_times: IntArg,
                dst_rep_stride: IntArg, src_rep_stride: IntArg) -> None:
        """``dst[l] = |src[l]|`` for every active lane l of every repeat.

        Exact: the sign bit cleared (NaN stays NaN).

        mask -- int in [1, L] (lanes 0..mask-1) or ``[mask_h, mask_l]`` (bit i of mask_l:
            lane i, of mask_h: lane 64+i; mask_h 0 when L = 64); a Scalar is read at run
            time. L = 256 / element bytes (128 lanes for 16-bit, 64 for 32-bit dtypes).
        dst, src -- UB Tensors or ``t[i]`` starts (32-byte aligned), one dtype: float16,
            float32. Lane l of repeat r is element ``start + r*rep_stride*B + l``, B = 32 /
            element bytes.
        repeat_times -- [1, 255]; a Scalar/Expr in [0, 255] at run time (0: nothing).
            Repeats run in order.
        dst_rep_stride, src_rep_stride -- [0, 255], 32-byte blocks from one repeat's start
            to the next.

        Raises ConstraintError (a range, dtype, mask or target rule), AccessError (a lane
        past a tensor's end), AlignmentError (a start not 32-byte aligned), OverlapError
        (dst partially overlapping a source). Immediates are checked when recorded, Scalars
        when the program runs. Source: CANN TIK API reference, vec_abs; TIK 2020 source
        ``api/tik_vector_api.py`` (vec_abs),
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        self._vec("vec_abs", mask, dst, [src], None, repeat_times, [1, 1],
                  [dst_rep_stride, src_rep_stride])

    def vec_exp(self, mask: Mask, dst: Operand, src: Operand, repeat_times: IntArg,
                dst_rep_stride: IntArg, src_rep_stride: IntArg) -> None:
        """``dst[l] = exp(src[l])`` for every active lane l of every repeat.

        Computed in float64, rounded once (RNE); the hardware approximates, its last bits
        may differ. float16 results saturate on Ascend 310/910/310P/310B (inf -> +-65504,
        NaN -> 0), IEEE on 910B/910_93.

        mask -- int in [1, L] (lanes 0..mask-1) or ``[mask_h, mask_l]`` (bit i of mask_l:
            lane i, of mask_h: lane 64+i; mask_h 0 when L = 64); a Scalar is read at run
            time. L = 256 / element bytes (128 lanes for 16-bit, 64 for 32-bit dtypes).
        dst, src -- UB Tensors or ``t[i]`` starts (32-byte aligned), one dtype: float16,
            float32 (Ascend 310: float16 only). Lane l of repeat r is element ``start +
            r*rep_stride*B + l``, B = 32 / element bytes.
        repeat_times -- [1, 255]; a Scalar/Expr in [0, 255] at run time (0: nothing).
            Repeats run in order.
        dst_rep_stride, src_rep_stride -- [0, 255], 32-byte blocks from one repeat's start
            to the next.

        Raises ConstraintError (a range, dtype, mask or target rule), AccessError (a lane
        past a tensor's end), AlignmentError (a start not 32-byte aligned), OverlapError
        (dst partially overlapping a source). Immediates are checked when recorded, Scalars
        when the program runs. Source: CANN TIK API reference, vec_exp; TIK 2020 source
        ``api/tik_vector_api.py`` (vec_exp),
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        self._vec("vec_exp", mask, dst, [src], None, repeat_times, [1, 1],
                  [dst_rep_stride, src_rep_stride])

    def vec_ln(self, mask: Mask, dst: Operand, src: Operand, repeat_times: IntArg,
               dst_rep_stride: IntArg, src_rep_stride: IntArg) -> None:
        """``dst[l] = ln(src[l])`` for every active lane l of every repeat.

        Computed in float64, rounded once (RNE); ln(0) = -inf, ln(x < 0) = NaN; the hardware
        approximates. float16 results saturate on Ascend 310/910/310P/310B (inf -> +-65504,
        NaN -> 0), IEEE on 910B/910_93.

        mask -- int in [1, L] (lanes 0..mask-1) or ``[mask_h, mask_l]`` (bit i of mask_l:
            lane i, of mask_h: lane 64+i; mask_h 0 when L = 64); a Scalar is read at run
            time. L = 256 / element bytes (128 lanes for 16-bit, 64 for 32-bit dtypes).
        dst, src -- UB Tensors or ``t[i]`` starts (32-byte aligned), one dtype: float16,
            float32. Lane l of repeat r is element ``start + r*rep_stride*B + l``, B = 32 /
            element bytes.
        repeat_times -- [1, 255]; a Scalar/Expr in [0, 255] at run time (0: nothing).
            Repeats run in order.
        dst_rep_stride, src_rep_stride -- [0, 255], 32-byte blocks from one repeat's start
            to the next.

        Raises ConstraintError (a range, dtype, mask or target rule), AccessError (a lane
        past a tensor's end), AlignmentError (a start not 32-byte aligned), OverlapError
        (dst partially overlapping a source). Immediates are checked when recorded, Scalars
        when the program runs. Source: CANN TIK API reference, vec_ln; TIK 2020 source
        ``api/tik_vector_api.py`` (vec_ln),
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        self._vec("vec_ln", mask, dst, [src], None, repeat_times, [1, 1],
                  [dst_rep_stride, src_rep_stride])

    def vec_rec(self, mask: Mask, dst: Operand, src: Operand, repeat_times: IntArg,
                dst_rep_stride: IntArg, src_rep_stride: IntArg) -> None:
        """``dst[l] = 1 / src[l]`` for every active lane l of every repeat.

        Computed in float64, rounded once (RNE); 1/0 = inf; the hardware approximates.
        float16 results saturate on Ascend 310/910/310P/310B (inf -> +-65504, NaN -> 0),
        IEEE on 910B/910_93.

        mask -- int in [1, L] (lanes 0..mask-1) or ``[mask_h, mask_l]`` (bit i of mask_l:
            lane i, of mask_h: lane 64+i; mask_h 0 when L = 64); a Scalar is read at run
            time. L = 256 / element bytes (128 lanes for 16-bit, 64 for 32-bit dtypes).
        dst, src -- UB Tensors or ``t[i]`` starts (32-byte aligned), one dtype: float16,
            float32. Lane l of repeat r is element ``start + r*rep_stride*B + l``, B = 32 /
            element bytes.
        repeat_times -- [1, 255]; a Scalar/Expr in [0, 255] at run time (0: nothing).
            Repeats run in order.
        dst_rep_stride, src_rep_stride -- [0, 255], 32-byte blocks from one repeat's start
            to the next.

        Raises ConstraintError (a range, dtype, mask or target rule), AccessError (a lane
        past a tensor's end), AlignmentError (a start not 32-byte aligned), OverlapError
        (dst partially overlapping a source). Immediates are checked when recorded, Scalars
        when the program runs. Source: CANN TIK API reference, vec_rec; TIK 2020 source
        ``api/tik_vector_api.py`` (vec_rec),
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        self._vec("vec_rec", mask, dst, [src], None, repeat_times, [1, 1],
                  [dst_rep_stride, src_rep_stride])

    def vec_relu(self, mask: Mask, dst: Operand, src: Operand, repeat_times: IntArg,
                 dst_rep_stride: IntArg, src_rep_stride: IntArg) -> None:
        """``dst[l] = max(src[l], 0)`` for every active lane l of every repeat.

        NaN and -0 give 0.

        mask -- int in [1, L] (lanes 0..mask-1) or ``[mask_h, mask_l]`` (bit i of mask_l:
            lane i, of mask_h: lane 64+i; mask_h 0 when L = 64); a Scalar is read at run
            time. L = 256 / element bytes (128 lanes for 16-bit, 64 for 32-bit dtypes).
        dst, src -- UB Tensors or ``t[i]`` starts (32-byte aligned), one dtype: float16;
            float32, int32 too except on Ascend 310/910. Lane l of repeat r is element
            ``start + r*rep_stride*B + l``, B = 32 / element bytes.
        repeat_times -- [1, 255]; a Scalar/Expr in [0, 255] at run time (0: nothing).
            Repeats run in order.
        dst_rep_stride, src_rep_stride -- [0, 255], 32-byte blocks from one repeat's start
            to the next.

        Raises ConstraintError (a range, dtype, mask or target rule), AccessError (a lane
        past a tensor's end), AlignmentError (a start not 32-byte aligned), OverlapError
        (dst partially overlapping a source). Immediates are checked when recorded, Scalars
        when the program runs. Source: CANN TIK API reference, vec_relu; TIK 2020 source
        ``api/tik_vector_api.py`` (vec_relu),
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        self._vec("vec_relu", mask, dst, [src], None, repeat_times, [1, 1],
                  [dst_rep_stride, src_rep_stride])

    def vec_rsqrt(self, mask: Mask, dst: Operand, src: Operand, repeat_times: IntArg,
                  dst_rep_stride: IntArg, src_rep_stride: IntArg) -> None:
        """``dst[l] = 1 / sqrt(src[l])`` for every active lane l of every repeat.

        Computed in float64, rounded once (RNE); the hardware approximates. float16 results
        saturate on Ascend 310/910/310P/310B (inf -> +-65504, NaN -> 0), IEEE on
        910B/910_93.

        mask -- int in [1, L] (lanes 0..mask-1) or ``[mask_h, mask_l]`` (bit i of mask_l:
            lane i, of mask_h: lane 64+i; mask_h 0 when L = 64); a Scalar is read at run
            time. L = 256 / element bytes (128 lanes for 16-bit, 64 for 32-bit dtypes).
        dst, src -- UB Tensors or ``t[i]`` starts (32-byte aligned), one dtype: float16,
            float32. Lane l of repeat r is element ``start + r*rep_stride*B + l``, B = 32 /
            element bytes.
        repeat_times -- [1, 255]; a Scalar/Expr in [0, 255] at run time (0: nothing).
            Repeats run in order.
        dst_rep_stride, src_rep_stride -- [0, 255], 32-byte blocks from one repeat's start
            to the next.

        Raises ConstraintError (a range, dtype, mask or target rule), AccessError (a lane
        past a tensor's end), AlignmentError (a start not 32-byte aligned), OverlapError
        (dst partially overlapping a source). Immediates are checked when recorded, Scalars
        when the program runs. Source: CANN TIK API reference, vec_rsqrt; TIK 2020 source
        ``api/tik_vector_api.py`` (vec_rsqrt),
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        self._vec("vec_rsqrt", mask, dst, [src], None, repeat_times, [1, 1],
                  [dst_rep_stride, src_rep_stride])

    def vec_sqrt(self, mask: Mask, dst: Operand, src: Operand, repeat_times: IntArg,
                 dst_rep_stride: IntArg, src_rep_stride: IntArg) -> None:
        """``dst[l] = sqrt(src[l])`` for every active lane l of every repeat.

        Computed in float64, rounded once (correctly rounded); sqrt(x < 0) = NaN. float16
        results saturate on Ascend 310/910/310P/310B (inf -> +-65504, NaN -> 0), IEEE on
        910B/910_93.

        mask -- int in [1, L] (lanes 0..mask-1) or ``[mask_h, mask_l]`` (bit i of mask_l:
            lane i, of mask_h: lane 64+i; mask_h 0 when L = 64); a Scalar is read at run
            time. L = 256 / element bytes (128 lanes for 16-bit, 64 for 32-bit dtypes).
        dst, src -- UB Tensors or ``t[i]`` starts (32-byte aligned), one dtype: float16,
            float32. Lane l of repeat r is element ``start + r*rep_stride*B + l``, B = 32 /
            element bytes.
        repeat_times -- [1, 255]; a Scalar/Expr in [0, 255] at run time (0: nothing).
            Repeats run in order.
        dst_rep_stride, src_rep_stride -- [0, 255], 32-byte blocks from one repeat's start
            to the next.

        Raises ConstraintError (a range, dtype, mask or target rule), AccessError (a lane
        past a tensor's end), AlignmentError (a start not 32-byte aligned), OverlapError
        (dst partially overlapping a source). Immediates are checked when recorded, Scalars
        when the program runs. Source: CANN TIK API reference, vec_sqrt; TIK 2020 source
        ``api/tik_vector_api.py`` (vec_sqrt),
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        self._vec("vec_sqrt", mask, dst, [src], None, repeat_times, [1, 1],
                  [dst_rep_stride, src_rep_stride])

    def vec_not(self, mask: Mask, dst: Operand, src: Operand, repeat_times: IntArg,
                dst_rep_stride: IntArg, src_rep_stride: IntArg) -> None:
        """``dst[l] = ~src[l]`` for every active lane l of every repeat.

        Bitwise NOT of the 16-bit pattern.

        mask -- int in [1, L] (lanes 0..mask-1) or ``[mask_h, mask_l]`` (bit i of mask_l:
            lane i, of mask_h: lane 64+i; mask_h 0 when L = 64); a Scalar is read at run
            time. L = 256 / element bytes (128 lanes for 16-bit, 64 for 32-bit dtypes).
        dst, src -- UB Tensors or ``t[i]`` starts (32-byte aligned), one dtype: uint16,
            int16. Lane l of repeat r is element ``start + r*rep_stride*B + l``, B = 32 /
            element bytes.
        repeat_times -- [1, 255]; a Scalar/Expr in [0, 255] at run time (0: nothing).
            Repeats run in order.
        dst_rep_stride, src_rep_stride -- [0, 255], 32-byte blocks from one repeat's start
            to the next.

        Raises ConstraintError (a range, dtype, mask or target rule), AccessError (a lane
        past a tensor's end), AlignmentError (a start not 32-byte aligned), OverlapError
        (dst partially overlapping a source). Immediates are checked when recorded, Scalars
        when the program runs. Source: CANN TIK API reference, vec_not; TIK 2020 source
        ``api/tik_vector_api.py`` (vec_not),
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        self._vec("vec_not", mask, dst, [src], None, repeat_times, [1, 1],
                  [dst_rep_stride, src_rep_stride])

    def vabs(self, mask: Mask, dst: Operand, src: Operand, repeat_times: IntArg,
             dst_blk_stride: IntArg, src_blk_stride: IntArg, dst_rep_stride: IntArg,
             src_rep_stride: IntArg, stride_unit: Int = 0) -> None:
        """``dst[l] = |src[l]|`` per active lane, with block strides (legacy vec_abs).

        Exact: the sign bit cleared (NaN stays NaN).

        mask -- int in [1, L] (lanes 0..mask-1) or ``[mask_h, mask_l]`` (bit i of mask_l:
            lane i, of mask_h: lane 64+i; mask_h 0 when L = 64); a Scalar is read at run
            time. L = 256 / element bytes (128 lanes for 16-bit, 64 for 32-bit dtypes).
        dst, src -- UB Tensors or ``t[i]`` starts (32-byte aligned), one dtype: float16,
            float32. Lane l of repeat r is element ``start + r*rep_stride*B +
            (l//B)*blk_stride*B + l%B``, B = 32 / element bytes.
        repeat_times -- [1, 255]; a Scalar/Expr in [0, 255] at run time (0: nothing).
            Repeats run in order.
        dst_blk_stride, src_blk_stride -- [0, 65535], 32-byte blocks from one block of a
            repeat to the next (1: contiguous).
        dst_rep_stride, src_rep_stride -- [0, 255], 32-byte blocks from one repeat's start
            to the next.
        stride_unit -- ignored on Ascend 310/910 (as TIK does); elsewhere 0 (as above) or 1
            (rep_stride = the gap in blocks after a repeat's last block); 2 and 3 raise
            NotImplementedError.

        Raises ConstraintError (a range, dtype, mask or target rule), AccessError (a lane
        past a tensor's end), AlignmentError (a start not 32-byte aligned), OverlapError
        (dst partially overlapping a source). Immediates are checked when recorded, Scalars
        when the program runs. Source: CANN TIK API reference, vabs; TIK 2020 source
        ``tik_lib/tik_vector_api_.py`` (vabs),
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        self._vec("vabs", mask, dst, [src], None, repeat_times,
                  [dst_blk_stride, src_blk_stride], [dst_rep_stride, src_rep_stride],
                  stride_unit=stride_unit)

    def vexp(self, mask: Mask, dst: Operand, src: Operand, repeat_times: IntArg,
             dst_blk_stride: IntArg, src_blk_stride: IntArg, dst_rep_stride: IntArg,
             src_rep_stride: IntArg, stride_unit: Int = 0) -> None:
        """``dst[l] = exp(src[l])`` per active lane, with block strides (legacy vec_exp).

        Computed in float64, rounded once (RNE); the hardware approximates, its last bits
        may differ. float16 results saturate on Ascend 310/910/310P/310B (inf -> +-65504,
        NaN -> 0), IEEE on 910B/910_93.

        mask -- int in [1, L] (lanes 0..mask-1) or ``[mask_h, mask_l]`` (bit i of mask_l:
            lane i, of mask_h: lane 64+i; mask_h 0 when L = 64); a Scalar is read at run
            time. L = 256 / element bytes (128 lanes for 16-bit, 64 for 32-bit dtypes).
        dst, src -- UB Tensors or ``t[i]`` starts (32-byte aligned), one dtype: float16,
            float32 (Ascend 310: float16 only). Lane l of repeat r is element ``start +
            r*rep_stride*B + (l//B)*blk_stride*B + l%B``, B = 32 / element bytes.
        repeat_times -- [1, 255]; a Scalar/Expr in [0, 255] at run time (0: nothing).
            Repeats run in order.
        dst_blk_stride, src_blk_stride -- [0, 65535], 32-byte blocks from one block of a
            repeat to the next (1: contiguous).
        dst_rep_stride, src_rep_stride -- [0, 255], 32-byte blocks from one repeat's start
            to the next.
        stride_unit -- ignored on Ascend 310/910 (as TIK does); elsewhere 0 (as above) or 1
            (rep_stride = the gap in blocks after a repeat's last block); 2 and 3 raise
            NotImplementedError.

        Raises ConstraintError (a range, dtype, mask or target rule), AccessError (a lane
        past a tensor's end), AlignmentError (a start not 32-byte aligned), OverlapError
        (dst partially overlapping a source). Immediates are checked when recorded, Scalars
        when the program runs. Source: CANN TIK API reference, vexp; TIK 2020 source
        ``tik_lib/tik_vector_api_.py`` (vexp),
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        self._vec("vexp", mask, dst, [src], None, repeat_times,
                  [dst_blk_stride, src_blk_stride], [dst_rep_stride, src_rep_stride],
                  stride_unit=stride_unit)

    def vln(self, mask: Mask, dst: Operand, src: Operand, repeat_times: IntArg,
            dst_blk_stride: IntArg, src_blk_stride: IntArg, dst_rep_stride: IntArg,
            src_rep_stride: IntArg, stride_unit: Int = 0) -> None:
        """``dst[l] = ln(src[l])`` per active lane, with block strides (legacy vec_ln).

        Computed in float64, rounded once (RNE); ln(0) = -inf, ln(x < 0) = NaN; the hardware
        approximates. float16 results saturate on Ascend 310/910/310P/310B (inf -> +-65504,
        NaN -> 0), IEEE on 910B/910_93.

        mask -- int in [1, L] (lanes 0..mask-1) or ``[mask_h, mask_l]`` (bit i of mask_l:
            lane i, of mask_h: lane 64+i; mask_h 0 when L = 64); a Scalar is read at run
            time. L = 256 / element bytes (128 lanes for 16-bit, 64 for 32-bit dtypes).
        dst, src -- UB Tensors or ``t[i]`` starts (32-byte aligned), one dtype: float16,
            float32. Lane l of repeat r is element ``start + r*rep_stride*B +
            (l//B)*blk_stride*B + l%B``, B = 32 / element bytes.
        repeat_times -- [1, 255]; a Scalar/Expr in [0, 255] at run time (0: nothing).
            Repeats run in order.
        dst_blk_stride, src_blk_stride -- [0, 65535], 32-byte blocks from one block of a
            repeat to the next (1: contiguous).
        dst_rep_stride, src_rep_stride -- [0, 255], 32-byte blocks from one repeat's start
            to the next.
        stride_unit -- ignored on Ascend 310/910 (as TIK does); elsewhere 0 (as above) or 1
            (rep_stride = the gap in blocks after a repeat's last block); 2 and 3 raise
            NotImplementedError.

        Raises ConstraintError (a range, dtype, mask or target rule), AccessError (a lane
        past a tensor's end), AlignmentError (a start not 32-byte aligned), OverlapError
        (dst partially overlapping a source). Immediates are checked when recorded, Scalars
        when the program runs. Source: CANN TIK API reference, vln; TIK 2020 source
        ``tik_lib/tik_vector_api_.py`` (vln),
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        self._vec("vln", mask, dst, [src], None, repeat_times,
                  [dst_blk_stride, src_blk_stride], [dst_rep_stride, src_rep_stride],
                  stride_unit=stride_unit)

    def vrec(self, mask: Mask, dst: Operand, src: Operand, repeat_times: IntArg,
             dst_blk_stride: IntArg, src_blk_stride: IntArg, dst_rep_stride: IntArg,
             src_rep_stride: IntArg, stride_unit: Int = 0) -> None:
        """``dst[l] = 1 / src[l]`` per active lane, with block strides (legacy vec_rec).

        Computed in float64, rounded once (RNE); 1/0 = inf; the hardware approximates.
        float16 results saturate on Ascend 310/910/310P/310B (inf -> +-65504, NaN -> 0),
        IEEE on 910B/910_93.

        mask -- int in [1, L] (lanes 0..mask-1) or ``[mask_h, mask_l]`` (bit i of mask_l:
            lane i, of mask_h: lane 64+i; mask_h 0 when L = 64); a Scalar is read at run
            time. L = 256 / element bytes (128 lanes for 16-bit, 64 for 32-bit dtypes).
        dst, src -- UB Tensors or ``t[i]`` starts (32-byte aligned), one dtype: float16,
            float32. Lane l of repeat r is element ``start + r*rep_stride*B +
            (l//B)*blk_stride*B + l%B``, B = 32 / element bytes.
        repeat_times -- [1, 255]; a Scalar/Expr in [0, 255] at run time (0: nothing).
            Repeats run in order.
        dst_blk_stride, src_blk_stride -- [0, 65535], 32-byte blocks from one block of a
            repeat to the next (1: contiguous).
        dst_rep_stride, src_rep_stride -- [0, 255], 32-byte blocks from one repeat's start
            to the next.
        stride_unit -- ignored on Ascend 310/910 (as TIK does); elsewhere 0 (as above) or 1
            (rep_stride = the gap in blocks after a repeat's last block); 2 and 3 raise
            NotImplementedError.

        Raises ConstraintError (a range, dtype, mask or target rule), AccessError (a lane
        past a tensor's end), AlignmentError (a start not 32-byte aligned), OverlapError
        (dst partially overlapping a source). Immediates are checked when recorded, Scalars
        when the program runs. Source: CANN TIK API reference, vrec; TIK 2020 source
        ``tik_lib/tik_vector_api_.py`` (vrec),
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        self._vec("vrec", mask, dst, [src], None, repeat_times,
                  [dst_blk_stride, src_blk_stride], [dst_rep_stride, src_rep_stride],
                  stride_unit=stride_unit)

    def vrelu(self, mask: Mask, dst: Operand, src: Operand, repeat_times: IntArg,
              dst_blk_stride: IntArg, src_blk_stride: IntArg, dst_rep_stride: IntArg,
              src_rep_stride: IntArg, stride_unit: Int = 0) -> None:
        """``dst[l] = max(src[l], 0)`` per active lane, with block strides (legacy vec_relu).

        NaN and -0 give 0.

        mask -- int in [1, L] (lanes 0..mask-1) or ``[mask_h, mask_l]`` (bit i of mask_l:
            lane i, of mask_h: lane 64+i; mask_h 0 when L = 64); a Scalar is read at run
            time. L = 256 / element bytes (128 lanes for 16-bit, 64 for 32-bit dtypes).
        dst, src -- UB Tensors or ``t[i]`` starts (32-byte aligned), one dtype: float16;
            float32, int32 too except on Ascend 310/910. Lane l of repeat r is element
            ``start + r*rep_stride*B + (l//B)*blk_stride*B + l%B``, B = 32 / element bytes.
        repeat_times -- [1, 255]; a Scalar/Expr in [0, 255] at run time (0: nothing).
            Repeats run in order.
        dst_blk_stride, src_blk_stride -- [0, 65535], 32-byte blocks from one block of a
            repeat to the next (1: contiguous).
        dst_rep_stride, src_rep_stride -- [0, 255], 32-byte blocks from one repeat's start
            to the next.
        stride_unit -- ignored on Ascend 310/910 (as TIK does); elsewhere 0 (as above) or 1
            (rep_stride = the gap in blocks after a repeat's last block); 2 and 3 raise
            NotImplementedError.

        Raises ConstraintError (a range, dtype, mask or target rule), AccessError (a lane
        past a tensor's end), AlignmentError (a start not 32-byte aligned), OverlapError
        (dst partially overlapping a source). Immediates are checked when recorded, Scalars
        when the program runs. Source: CANN TIK API reference, vrelu; TIK 2020 source
        ``tik_lib/tik_vector_api_.py`` (vrelu),
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        self._vec("vrelu", mask, dst, [src], None, repeat_times,
                  [dst_blk_stride, src_blk_stride], [dst_rep_stride, src_rep_stride],
                  stride_unit=stride_unit)

    def vrsqrt(self, mask: Mask, dst: Operand, src: Operand, repeat_times: IntArg,
               dst_blk_stride: IntArg, src_blk_stride: IntArg, dst_rep_stride: IntArg,
               src_rep_stride: IntArg, stride_unit: Int = 0) -> None:
        """``dst[l] = 1 / sqrt(src[l])`` per active lane, with block strides (legacy vec_rsqrt).

        Computed in float64, rounded once (RNE); the hardware approximates. float16 results
        saturate on Ascend 310/910/310P/310B (inf -> +-65504, NaN -> 0), IEEE on
        910B/910_93.

        mask -- int in [1, L] (lanes 0..mask-1) or ``[mask_h, mask_l]`` (bit i of mask_l:
            lane i, of mask_h: lane 64+i; mask_h 0 when L = 64); a Scalar is read at run
            time. L = 256 / element bytes (128 lanes for 16-bit, 64 for 32-bit dtypes).
        dst, src -- UB Tensors or ``t[i]`` starts (32-byte aligned), one dtype: float16,
            float32. Lane l of repeat r is element ``start + r*rep_stride*B +
            (l//B)*blk_stride*B + l%B``, B = 32 / element bytes.
        repeat_times -- [1, 255]; a Scalar/Expr in [0, 255] at run time (0: nothing).
            Repeats run in order.
        dst_blk_stride, src_blk_stride -- [0, 65535], 32-byte blocks from one block of a
            repeat to the next (1: contiguous).
        dst_rep_stride, src_rep_stride -- [0, 255], 32-byte blocks from one repeat's start
            to the next.
        stride_unit -- ignored on Ascend 310/910 (as TIK does); elsewhere 0 (as above) or 1
            (rep_stride = the gap in blocks after a repeat's last block); 2 and 3 raise
            NotImplementedError.

        Raises ConstraintError (a range, dtype, mask or target rule), AccessError (a lane
        past a tensor's end), AlignmentError (a start not 32-byte aligned), OverlapError
        (dst partially overlapping a source). Immediates are checked when recorded, Scalars
        when the program runs. Source: CANN TIK API reference, vrsqrt; TIK 2020 source
        ``tik_lib/tik_vector_api_.py`` (vrsqrt),
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        self._vec("vrsqrt", mask, dst, [src], None, repeat_times,
                  [dst_blk_stride, src_blk_stride], [dst_rep_stride, src_rep_stride],
                  stride_unit=stride_unit)

    def vsqrt(self, mask: Mask, dst: Operand, src: Operand, repeat_times: IntArg,
              dst_blk_stride: IntArg, src_blk_stride: IntArg, dst_rep_stride: IntArg,
              src_rep_stride: IntArg, stride_unit: Int = 0) -> None:
        """``dst[l] = sqrt(src[l])`` per active lane, with block strides (legacy vec_sqrt).

        Computed in float64, rounded once (correctly rounded); sqrt(x < 0) = NaN. float16
        results saturate on Ascend 310/910/310P/310B (inf -> +-65504, NaN -> 0), IEEE on
        910B/910_93.

        mask -- int in [1, L] (lanes 0..mask-1) or ``[mask_h, mask_l]`` (bit i of mask_l:
            lane i, of mask_h: lane 64+i; mask_h 0 when L = 64); a Scalar is read at run
            time. L = 256 / element bytes (128 lanes for 16-bit, 64 for 32-bit dtypes).
        dst, src -- UB Tensors or ``t[i]`` starts (32-byte aligned), one dtype: float16,
            float32. Lane l of repeat r is element ``start + r*rep_stride*B +
            (l//B)*blk_stride*B + l%B``, B = 32 / element bytes.
        repeat_times -- [1, 255]; a Scalar/Expr in [0, 255] at run time (0: nothing).
            Repeats run in order.
        dst_blk_stride, src_blk_stride -- [0, 65535], 32-byte blocks from one block of a
            repeat to the next (1: contiguous).
        dst_rep_stride, src_rep_stride -- [0, 255], 32-byte blocks from one repeat's start
            to the next.
        stride_unit -- ignored on Ascend 310/910 (as TIK does); elsewhere 0 (as above) or 1
            (rep_stride = the gap in blocks after a repeat's last block); 2 and 3 raise
            NotImplementedError.

        Raises ConstraintError (a range, dtype, mask or target rule), AccessError (a lane
        past a tensor's end), AlignmentError (a start not 32-byte aligned), OverlapError
        (dst partially overlapping a source). Immediates are checked when recorded, Scalars
        when the program runs. Source: CANN TIK API reference, vsqrt; TIK 2020 source
        ``tik_lib/tik_vector_api_.py`` (vsqrt),
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        self._vec("vsqrt", mask, dst, [src], None, repeat_times,
                  [dst_blk_stride, src_blk_stride], [dst_rep_stride, src_rep_stride],
                  stride_unit=stride_unit)

    def vnot(self, mask: Mask, dst: Operand, src: Operand, repeat_times: IntArg,
             dst_blk_stride: IntArg, src_blk_stride: IntArg, dst_rep_stride: IntArg,
             src_rep_stride: IntArg, stride_unit: Int = 0) -> None:
        """``dst[l] = ~src[l]`` per active lane, with block strides (legacy vec_not).

        Bitwise NOT of the 16-bit pattern.

        mask -- int in [1, L] (lanes 0..mask-1) or ``[mask_h, mask_l]`` (bit i of mask_l:
            lane i, of mask_h: lane 64+i; mask_h 0 when L = 64); a Scalar is read at run
            time. L = 256 / element bytes (128 lanes for 16-bit, 64 for 32-bit dtypes).
        dst, src -- UB Tensors or ``t[i]`` starts (32-byte aligned), one dtype: uint16,
            int16. Lane l of repeat r is element ``start + r*rep_stride*B +
            (l//B)*blk_stride*B + l%B``, B = 32 / element bytes.
        repeat_times -- [1, 255]; a Scalar/Expr in [0, 255] at run time (0: nothing).
            Repeats run in order.
        dst_blk_stride, src_blk_stride -- [0, 65535], 32-byte blocks from one block of a
            repeat to the next (1: contiguous).
        dst_rep_stride, src_rep_stride -- [0, 255], 32-byte blocks from one repeat's start
            to the next.
        stride_unit -- ignored on Ascend 310/910 (as TIK does); elsewhere 0 (as above) or 1
            (rep_stride = the gap in blocks after a repeat's last block); 2 and 3 raise
            NotImplementedError.

        Raises ConstraintError (a range, dtype, mask or target rule), AccessError (a lane
        past a tensor's end), AlignmentError (a start not 32-byte aligned), OverlapError
        (dst partially overlapping a source). Immediates are checked when recorded, Scalars
        when the program runs. Source: CANN TIK API reference, vnot; TIK 2020 source
        ``tik_lib/tik_vector_api_.py`` (vnot),
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        self._vec("vnot", mask, dst, [src], None, repeat_times,
                  [dst_blk_stride, src_blk_stride], [dst_rep_stride, src_rep_stride],
                  stride_unit=stride_unit)
