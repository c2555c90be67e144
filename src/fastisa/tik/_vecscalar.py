"""TIK vector-scalar instructions, ``Tik`` methods mixed into :class:`fastisa.tik.Tik`:
vec_adds, vec_muls, vec_axpy and the legacy vadds, vmuls, vmaxs, vmins, vaxpy.

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
    from ._annot import IntArg, Mask, Operand, RealArg

__all__ = ["VecScalarMixin"]


class VecScalarMixin:
    """The vector-scalar instructions."""

    if _typing.TYPE_CHECKING:
        def _vec(self, name: str, mask: Mask, dst: Operand, srcs: list[Operand],
                 scalar: object, repeat_times: IntArg, blks: list[IntArg],
                 reps: list[IntArg], mask_mode: str = "normal", round_mode: str = "",
                 stride_unit: Int = 0) -> None: ...

    def vec_adds(self, mask: Mask, dst: Operand, src: Operand, scalar: RealArg,
                 repeat_times: IntArg, dst_rep_stride: IntArg, src_rep_stride: IntArg,
                 mask_mode: str = "normal") -> None:
        """``dst[l] = src[l] + scalar`` for every active lane l of every repeat.

        float16 is computed in float32 and rounded once (RNE); integers wrap. float16
        results saturate on Ascend 310/910/310P/310B (inf -> +-65504, NaN -> 0), IEEE on
        910B/910_93.

        mask -- int in [1, L] (lanes 0..mask-1) or ``[mask_h, mask_l]`` (bit i of mask_l:
            lane i, of mask_h: lane 64+i; mask_h 0 when L = 64); a Scalar is read at run
            time. L = 256 / element bytes (128 lanes for 16-bit, 64 for 32-bit dtypes). With
            ``mask_mode='counter'`` (not on Ascend 310/910, where it is ignored): the
            element count, [1, 2**32-1].
        dst, src -- UB Tensors or ``t[i]`` starts (32-byte aligned), one dtype: float16,
            float32; int16, int32 too except on Ascend 310/910. Lane l of repeat r is
            element ``start + r*rep_stride*B + l``, B = 32 / element bytes.
        scalar -- int/float immediate, Scalar/Expr or tensor element, converted to src's
            dtype first (RNE for floats, truncation for integers).
        repeat_times -- [1, 255]; a Scalar/Expr in [0, 255] at run time (0: nothing).
            Repeats run in order.
        dst_rep_stride, src_rep_stride -- [0, 255], 32-byte blocks from one repeat's start
            to the next.
        mask_mode -- ``'normal'`` (mask selects lanes) or ``'counter'``.

        Raises ConstraintError (a range, dtype, mask or target rule), AccessError (a lane
        past a tensor's end), AlignmentError (a start not 32-byte aligned), OverlapError
        (dst partially overlapping a source). Immediates are checked when recorded, Scalars
        when the program runs. Source: CANN TIK API reference, vec_adds; TIK 2020 source
        ``api/tik_vector_api.py`` (vec_adds),
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        self._vec("vec_adds", mask, dst, [src], scalar, repeat_times, [1, 1],
                  [dst_rep_stride, src_rep_stride], mask_mode)

    def vec_muls(self, mask: Mask, dst: Operand, src: Operand, scalar: RealArg,
                 repeat_times: IntArg, dst_rep_stride: IntArg, src_rep_stride: IntArg,
                 mask_mode: str = "normal") -> None:
        """``dst[l] = src[l] * scalar`` for every active lane l of every repeat.

        float16 is computed in float32 and rounded once (RNE); integers wrap. float16
        results saturate on Ascend 310/910/310P/310B (inf -> +-65504, NaN -> 0), IEEE on
        910B/910_93.

        mask -- int in [1, L] (lanes 0..mask-1) or ``[mask_h, mask_l]`` (bit i of mask_l:
            lane i, of mask_h: lane 64+i; mask_h 0 when L = 64); a Scalar is read at run
            time. L = 256 / element bytes (128 lanes for 16-bit, 64 for 32-bit dtypes). With
            ``mask_mode='counter'`` (not on Ascend 310/910, where it is ignored): the
            element count, [1, 2**32-1].
        dst, src -- UB Tensors or ``t[i]`` starts (32-byte aligned), one dtype: float16,
            float32; int16, int32 too except on Ascend 310/910. Lane l of repeat r is
            element ``start + r*rep_stride*B + l``, B = 32 / element bytes.
        scalar -- int/float immediate, Scalar/Expr or tensor element, converted to src's
            dtype first (RNE for floats, truncation for integers).
        repeat_times -- [1, 255]; a Scalar/Expr in [0, 255] at run time (0: nothing).
            Repeats run in order.
        dst_rep_stride, src_rep_stride -- [0, 255], 32-byte blocks from one repeat's start
            to the next.
        mask_mode -- ``'normal'`` (mask selects lanes) or ``'counter'``.

        Raises ConstraintError (a range, dtype, mask or target rule), AccessError (a lane
        past a tensor's end), AlignmentError (a start not 32-byte aligned), OverlapError
        (dst partially overlapping a source). Immediates are checked when recorded, Scalars
        when the program runs. Source: CANN TIK API reference, vec_muls; TIK 2020 source
        ``api/tik_vector_api.py`` (vec_muls),
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        self._vec("vec_muls", mask, dst, [src], scalar, repeat_times, [1, 1],
                  [dst_rep_stride, src_rep_stride], mask_mode)

    def vec_axpy(self, mask: Mask, dst: Operand, src: Operand, scalar: RealArg,
                 repeat_times: IntArg, dst_rep_stride: IntArg, src_rep_stride: IntArg) -> None:
        """``dst[l] = src[l] * scalar + dst[l]`` for every active lane l of every repeat.

        Product and sum in float32, the result rounded once to dst's dtype (not a fused
        multiply-add). fmix form: float16 src and scalar with a float32 dst (64 lanes).
        float16 results saturate on Ascend 310/910/310P/310B (inf -> +-65504, NaN -> 0),
        IEEE on 910B/910_93.

        mask -- int in [1, L] (lanes 0..mask-1) or ``[mask_h, mask_l]`` (bit i of mask_l:
            lane i, of mask_h: lane 64+i; mask_h 0 when L = 64); a Scalar is read at run
            time. L = 256 / element bytes (128 lanes for 16-bit, 64 for 32-bit dtypes).
        dst, src -- UB Tensors or ``t[i]`` starts (32-byte aligned), one dtype: float16 or
            float32 (or float16 src with a float32 dst: fmix). Lane l of repeat r is element
            ``start + r*rep_stride*B + l``, B = 32 / element bytes.
        scalar -- float immediate, Scalar/Expr or tensor element, converted to src's dtype
            first (RNE).
        repeat_times -- [1, 255]; a Scalar/Expr in [0, 255] at run time (0: nothing).
            Repeats run in order.
        dst_rep_stride, src_rep_stride -- [0, 255], 32-byte blocks from one repeat's start
            to the next.

        Raises ConstraintError (a range, dtype, mask or target rule), AccessError (a lane
        past a tensor's end), AlignmentError (a start not 32-byte aligned), OverlapError
        (dst partially overlapping a source). Immediates are checked when recorded, Scalars
        when the program runs. Source: CANN TIK API reference, vec_axpy; TIK 2020 source
        ``api/tik_vector_api.py`` (vec_axpy),
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        self._vec("vec_axpy", mask, dst, [src], scalar, repeat_times, [1, 1],
                  [dst_rep_stride, src_rep_stride])

    def vadds(self, mask: Mask, dst: Operand, src: Operand, scalar: RealArg, repeat_times: IntArg,
              dst_blk_stride: IntArg, src_blk_stride: IntArg, dst_rep_stride: IntArg,
              src_rep_stride: IntArg, stride_unit: Int = 0, round_en: bool = False,
              mask_mode: str = "normal") -> None:
        """``dst[l] = src[l] + scalar`` per active lane, with block strides (legacy vec_adds).

        float16 is computed in float32 and rounded once (RNE); integers wrap. float16
        results saturate on Ascend 310/910/310P/310B (inf -> +-65504, NaN -> 0), IEEE on
        910B/910_93.

        mask -- int in [1, L] (lanes 0..mask-1) or ``[mask_h, mask_l]`` (bit i of mask_l:
            lane i, of mask_h: lane 64+i; mask_h 0 when L = 64); a Scalar is read at run
            time. L = 256 / element bytes (128 lanes for 16-bit, 64 for 32-bit dtypes). With
            ``mask_mode='counter'`` (not on Ascend 310/910, where it is ignored): the
            element count, [1, 2**32-1].
        dst, src -- UB Tensors or ``t[i]`` starts (32-byte aligned), one dtype: float16,
            float32; int16, int32 too except on Ascend 310/910. Lane l of repeat r is
            element ``start + r*rep_stride*B + (l//B)*blk_stride*B + l%B``, B = 32 / element
            bytes.
        scalar -- int/float immediate, Scalar/Expr or tensor element, converted to src's
            dtype first (RNE for floats, truncation for integers).
        repeat_times -- [1, 255]; a Scalar/Expr in [0, 255] at run time (0: nothing).
            Repeats run in order.
        dst_blk_stride, src_blk_stride -- [0, 65535], 32-byte blocks from one block of a
            repeat to the next (1: contiguous).
        dst_rep_stride, src_rep_stride -- [0, 255], 32-byte blocks from one repeat's start
            to the next.
        stride_unit -- ignored on Ascend 310/910 (as TIK does); elsewhere 0 (as above) or 1
            (rep_stride = the gap in blocks after a repeat's last block); 2 and 3 raise
            NotImplementedError.
        round_en -- accepted and ignored (results are rounded to nearest even).
        mask_mode -- ``'normal'`` or ``'counter'``.

        Raises ConstraintError (a range, dtype, mask or target rule), AccessError (a lane
        past a tensor's end), AlignmentError (a start not 32-byte aligned), OverlapError
        (dst partially overlapping a source). Immediates are checked when recorded, Scalars
        when the program runs. Source: CANN TIK API reference, vadds; TIK 2020 source
        ``tik_lib/tik_vector_api_.py`` (vadds),
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        self._vec("vadds", mask, dst, [src], scalar, repeat_times,
                  [dst_blk_stride, src_blk_stride], [dst_rep_stride, src_rep_stride],
                  mask_mode, stride_unit=stride_unit)

    def vmuls(self, mask: Mask, dst: Operand, src: Operand, scalar: RealArg, repeat_times: IntArg,
              dst_blk_stride: IntArg, src_blk_stride: IntArg, dst_rep_stride: IntArg,
              src_rep_stride: IntArg, stride_unit: Int = 0, round_en: bool = False,
              mask_mode: str = "normal") -> None:
        """``dst[l] = src[l] * scalar`` per active lane, with block strides (legacy vec_muls).

        float16 is computed in float32 and rounded once (RNE); integers wrap. float16
        results saturate on Ascend 310/910/310P/310B (inf -> +-65504, NaN -> 0), IEEE on
        910B/910_93.

        mask -- int in [1, L] (lanes 0..mask-1) or ``[mask_h, mask_l]`` (bit i of mask_l:
            lane i, of mask_h: lane 64+i; mask_h 0 when L = 64); a Scalar is read at run
            time. L = 256 / element bytes (128 lanes for 16-bit, 64 for 32-bit dtypes). With
            ``mask_mode='counter'`` (not on Ascend 310/910, where it is ignored): the
            element count, [1, 2**32-1].
        dst, src -- UB Tensors or ``t[i]`` starts (32-byte aligned), one dtype: float16,
            float32; int16, int32 too except on Ascend 310/910. Lane l of repeat r is
            element ``start + r*rep_stride*B + (l//B)*blk_stride*B + l%B``, B = 32 / element
            bytes.
        scalar -- int/float immediate, Scalar/Expr or tensor element, converted to src's
            dtype first (RNE for floats, truncation for integers).
        repeat_times -- [1, 255]; a Scalar/Expr in [0, 255] at run time (0: nothing).
            Repeats run in order.
        dst_blk_stride, src_blk_stride -- [0, 65535], 32-byte blocks from one block of a
            repeat to the next (1: contiguous).
        dst_rep_stride, src_rep_stride -- [0, 255], 32-byte blocks from one repeat's start
            to the next.
        stride_unit -- ignored on Ascend 310/910 (as TIK does); elsewhere 0 (as above) or 1
            (rep_stride = the gap in blocks after a repeat's last block); 2 and 3 raise
            NotImplementedError.
        round_en -- accepted and ignored (results are rounded to nearest even).
        mask_mode -- ``'normal'`` or ``'counter'``.

        Raises ConstraintError (a range, dtype, mask or target rule), AccessError (a lane
        past a tensor's end), AlignmentError (a start not 32-byte aligned), OverlapError
        (dst partially overlapping a source). Immediates are checked when recorded, Scalars
        when the program runs. Source: CANN TIK API reference, vmuls; TIK 2020 source
        ``tik_lib/tik_vector_api_.py`` (vmuls),
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        self._vec("vmuls", mask, dst, [src], scalar, repeat_times,
                  [dst_blk_stride, src_blk_stride], [dst_rep_stride, src_rep_stride],
                  mask_mode, stride_unit=stride_unit)

    def vmaxs(self, mask: Mask, dst: Operand, src: Operand, scalar: RealArg, repeat_times: IntArg,
              dst_blk_stride: IntArg, src_blk_stride: IntArg, dst_rep_stride: IntArg,
              src_rep_stride: IntArg, stride_unit: Int = 0, round_en: bool = False,
              mask_mode: str = "normal") -> None:
        """``dst[l] = max(src[l], scalar)`` per active lane, with block strides.

        NaN propagates (a NaN operand gives NaN); on a tie src's value is kept. float16
        results saturate on Ascend 310/910/310P/310B (inf -> +-65504, NaN -> 0), IEEE on
        910B/910_93.

        mask -- int in [1, L] (lanes 0..mask-1) or ``[mask_h, mask_l]`` (bit i of mask_l:
            lane i, of mask_h: lane 64+i; mask_h 0 when L = 64); a Scalar is read at run
            time. L = 256 / element bytes (128 lanes for 16-bit, 64 for 32-bit dtypes). With
            ``mask_mode='counter'`` (not on Ascend 310/910, where it is ignored): the
            element count, [1, 2**32-1].
        dst, src -- UB Tensors or ``t[i]`` starts (32-byte aligned), one dtype: float16,
            int16, float32, int32 (not on Ascend 310/910). Lane l of repeat r is element
            ``start + r*rep_stride*B + (l//B)*blk_stride*B + l%B``, B = 32 / element bytes.
        scalar -- int/float immediate, Scalar/Expr or tensor element, converted to src's
            dtype first (RNE for floats, truncation for integers).
        repeat_times -- [1, 255]; a Scalar/Expr in [0, 255] at run time (0: nothing).
            Repeats run in order.
        dst_blk_stride, src_blk_stride -- [0, 65535], 32-byte blocks from one block of a
            repeat to the next (1: contiguous).
        dst_rep_stride, src_rep_stride -- [0, 255], 32-byte blocks from one repeat's start
            to the next.
        stride_unit -- ignored on Ascend 310/910 (as TIK does); elsewhere 0 (as above) or 1
            (rep_stride = the gap in blocks after a repeat's last block); 2 and 3 raise
            NotImplementedError.
        round_en -- accepted and ignored (results are rounded to nearest even).
        mask_mode -- ``'normal'`` or ``'counter'``.

        Raises ConstraintError (a range, dtype, mask or target rule), AccessError (a lane
        past a tensor's end), AlignmentError (a start not 32-byte aligned), OverlapError
        (dst partially overlapping a source). Immediates are checked when recorded, Scalars
        when the program runs. Source: CANN TIK API reference, vmaxs; TIK 2020 source
        ``tik_lib/tik_vector_api_.py`` (vmaxs),
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        self._vec("vmaxs", mask, dst, [src], scalar, repeat_times,
                  [dst_blk_stride, src_blk_stride], [dst_rep_stride, src_rep_stride],
                  mask_mode, stride_unit=stride_unit)

    def vmins(self, mask: Mask, dst: Operand, src: Operand, scalar: RealArg, repeat_times: IntArg,
              dst_blk_stride: IntArg, src_blk_stride: IntArg, dst_rep_stride: IntArg,
              src_rep_stride: IntArg, stride_unit: Int = 0, round_en: bool = False,
              mask_mode: str = "normal") -> None:
        """``dst[l] = min(src[l], scalar)`` per active lane, with block strides.

        NaN propagates (a NaN operand gives NaN); on a tie src's value is kept. float16
        results saturate on Ascend 310/910/310P/310B (inf -> +-65504, NaN -> 0), IEEE on
        910B/910_93.

        mask -- int in [1, L] (lanes 0..mask-1) or ``[mask_h, mask_l]`` (bit i of mask_l:
            lane i, of mask_h: lane 64+i; mask_h 0 when L = 64); a Scalar is read at run
            time. L = 256 / element bytes (128 lanes for 16-bit, 64 for 32-bit dtypes). With
            ``mask_mode='counter'`` (not on Ascend 310/910, where it is ignored): the
            element count, [1, 2**32-1].
        dst, src -- UB Tensors or ``t[i]`` starts (32-byte aligned), one dtype: float16,
            int16, float32, int32 (not on Ascend 310/910). Lane l of repeat r is element
            ``start + r*rep_stride*B + (l//B)*blk_stride*B + l%B``, B = 32 / element bytes.
        scalar -- int/float immediate, Scalar/Expr or tensor element, converted to src's
            dtype first (RNE for floats, truncation for integers).
        repeat_times -- [1, 255]; a Scalar/Expr in [0, 255] at run time (0: nothing).
            Repeats run in order.
        dst_blk_stride, src_blk_stride -- [0, 65535], 32-byte blocks from one block of a
            repeat to the next (1: contiguous).
        dst_rep_stride, src_rep_stride -- [0, 255], 32-byte blocks from one repeat's start
            to the next.
        stride_unit -- ignored on Ascend 310/910 (as TIK does); elsewhere 0 (as above) or 1
            (rep_stride = the gap in blocks after a repeat's last block); 2 and 3 raise
            NotImplementedError.
        round_en -- accepted and ignored (results are rounded to nearest even).
        mask_mode -- ``'normal'`` or ``'counter'``.

        Raises ConstraintError (a range, dtype, mask or target rule), AccessError (a lane
        past a tensor's end), AlignmentError (a start not 32-byte aligned), OverlapError
        (dst partially overlapping a source). Immediates are checked when recorded, Scalars
        when the program runs. Source: CANN TIK API reference, vmins; TIK 2020 source
        ``tik_lib/tik_vector_api_.py`` (vmins),
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        self._vec("vmins", mask, dst, [src], scalar, repeat_times,
                  [dst_blk_stride, src_blk_stride], [dst_rep_stride, src_rep_stride],
                  mask_mode, stride_unit=stride_unit)

    def vaxpy(self, mask: Mask, dst: Operand, src: Operand, scalar: RealArg, repeat_times: IntArg,
              dst_blk_stride: IntArg, src_blk_stride: IntArg, dst_rep_stride: IntArg,
              src_rep_stride: IntArg, stride_unit: Int = 0) -> None:
        """``dst[l] = src[l] * scalar + dst[l]`` per active lane, block strides (legacy vec_axpy).

        Product and sum in float32, the result rounded once to dst's dtype (not a fused
        multiply-add). fmix form: float16 src and scalar with a float32 dst (64 lanes).
        float16 results saturate on Ascend 310/910/310P/310B (inf -> +-65504, NaN -> 0),
        IEEE on 910B/910_93.

        mask -- int in [1, L] (lanes 0..mask-1) or ``[mask_h, mask_l]`` (bit i of mask_l:
            lane i, of mask_h: lane 64+i; mask_h 0 when L = 64); a Scalar is read at run
            time. L = 256 / element bytes (128 lanes for 16-bit, 64 for 32-bit dtypes).
        dst, src -- UB Tensors or ``t[i]`` starts (32-byte aligned), one dtype: float16 or
            float32 (or float16 src with a float32 dst: fmix). Lane l of repeat r is element
            ``start + r*rep_stride*B + (l//B)*blk_stride*B + l%B``, B = 32 / element bytes.
        scalar -- int/float immediate, Scalar/Expr or tensor element, converted to src's
            dtype first (RNE for floats, truncation for integers).
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
        when the program runs. Source: CANN TIK API reference, vaxpy; TIK 2020 source
        ``tik_lib/tik_vector_api_.py`` (vaxpy),
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        self._vec("vaxpy", mask, dst, [src], scalar, repeat_times,
                  [dst_blk_stride, src_blk_stride], [dst_rep_stride, src_rep_stride],
                  stride_unit=stride_unit)
