"""TIK instructions: validation at record time, one walker call at run time.

Every vector instruction is a row of :data:`VECTOR_OPS` (name -> op code and family);
all of them go through :class:`_Vector`, which validates its arguments (immediates when
recorded, Scalars/Exprs when run), then calls the ONE C walker
(``csrc/fastisa/walker.h``) with the instruction as data.  ``data_move`` is one call of
the DMA kernel.  Engine cycles recorded into :mod:`fastisa.cost` are ESTIMATES (the spec
gives no TIK timing): Vector = ``VECTOR_ISSUE_CYCLES + repeats``; MTE =
``MTE_ISSUE_CYCLES + 32-byte blocks moved``.

The vector-scalar, single-source and two-source instructions are methods of the mixins in
:mod:`fastisa.tik._vecscalar`, :mod:`fastisa.tik._vecunary` and :mod:`fastisa.tik._vecbinary`;
this module holds the fill, conversion, reduction and data-move methods.
"""

from __future__ import annotations

from . import _program as P
from ._base import MTE_ISSUE_CYCLES, VECTOR_ISSUE_CYCLES, _reduce_stride_unit
from ._datamove import _DataMove
from ._reduce import _Reduce
from ._vecbinary import VecBinaryMixin
from ._vecscalar import VecScalarMixin
from ._vector import ADD, MAX, MIN, VECTOR_OPS, _Vector
from ._vecunary import VecUnaryMixin

import typing as _typing

if _typing.TYPE_CHECKING:
    from .._types import Int
    from ._annot import IntArg, Mask, Operand, RealArg

__all__ = ["Tik", "VECTOR_OPS", "VECTOR_ISSUE_CYCLES", "MTE_ISSUE_CYCLES"]


class Tik(VecScalarMixin, VecUnaryMixin, VecBinaryMixin, P.Tik):
    __doc__ = P.Tik.__doc__

    # ---- internal -------------------------------------------------------------------
    def _vec(self, name, mask, dst, srcs, scalar, repeat_times, blks, reps, mask_mode="normal",
             round_mode="", stride_unit=0):
        op, fam = VECTOR_OPS[name]
        self._record(_Vector(self, name, op, fam, mask, dst, srcs, scalar, repeat_times, blks,
                             reps, mask_mode, round_mode, stride_unit))

    # ---- fill ------------------------------------------------------------------------
    def vec_dup(self, mask: Mask, dst: Operand, scalar: RealArg, repeat_times: IntArg,
                dst_rep_stride: IntArg) -> None:
        """``dst[l] = scalar`` for every active lane l of every repeat.

        The scalar is converted to dst's dtype once (RNE for floats, truncation for
        integers) and its bits stored in every active lane.

        mask -- int in [1, L] (lanes 0..mask-1) or ``[mask_h, mask_l]`` (bit i of mask_l:
            lane i, of mask_h: lane 64+i; mask_h 0 when L = 64); a Scalar is read at run
            time.  L = 256 / element bytes (128 lanes for 16-bit, 64 for 32-bit dtypes).
        dst -- UB Tensor or ``t[i]`` start (32-byte aligned): uint16, int16, float16,
            uint32, int32 or float32.  Lane l of repeat r is element
            ``start + r*dst_rep_stride*B + l``, B = 32 / element bytes.
        scalar -- int/float immediate, Scalar/Expr or tensor element.
        repeat_times -- [1, 255]; a Scalar/Expr in [0, 255] at run time (0: nothing).
            Repeats run in order.
        dst_rep_stride -- [0, 255], 32-byte blocks from one repeat's start to the next.

        Raises ConstraintError (a range, dtype, mask or target rule), AccessError (a lane
        past a tensor's end), AlignmentError (a start not 32-byte aligned), OverlapError
        (dst partially overlapping a source).  Immediates are checked when recorded,
        Scalars when the program runs.
        Source: CANN TIK API reference, vec_dup; TIK 2020 source
        ``api/tik_data_operation_api.py`` (vec_dup),
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        self._vec("vec_dup", mask, dst, [], scalar, repeat_times, [1], [dst_rep_stride])

    def vector_dup(self, mask: Mask, dst: Operand, scalar: RealArg, repeat_times: IntArg,
                   dst_blk_stride: IntArg, dst_rep_stride: IntArg, stride_unit: Int = 0) -> None:
        """``dst[l] = scalar`` per active lane, with a block stride (legacy vec_dup).

        The scalar is converted to dst's dtype once (RNE for floats, truncation for
        integers).

        mask -- int in [1, L] (lanes 0..mask-1) or ``[mask_h, mask_l]`` (bit i of mask_l:
            lane i, of mask_h: lane 64+i; mask_h 0 when L = 64); a Scalar is read at run
            time.  L = 256 / element bytes (128 lanes for 16-bit, 64 for 32-bit dtypes).
        dst -- UB Tensor or ``t[i]`` start (32-byte aligned): uint16, int16, float16,
            uint32, int32 or float32.  Lane l of repeat r is element ``start +
            r*dst_rep_stride*B + (l//B)*dst_blk_stride*B + l%B``, B = 32 / element bytes.
        scalar -- int/float immediate, Scalar/Expr or tensor element.
        repeat_times -- [1, 255]; a Scalar/Expr in [0, 255] at run time (0: nothing).
            Repeats run in order.
        dst_blk_stride -- [0, 65535], 32-byte blocks from one block of a repeat to the next.
        dst_rep_stride -- [0, 255], 32-byte blocks from one repeat's start to the next.
        stride_unit -- ignored on Ascend 310/910 (as TIK does); elsewhere 0 (as above) or 1
            (rep_stride = the gap in blocks after a repeat's last block); 2 and 3 raise
            NotImplementedError.

        Raises ConstraintError (a range, dtype, mask or target rule), AccessError (a lane
        past a tensor's end), AlignmentError (a start not 32-byte aligned), OverlapError
        (dst partially overlapping a source).  Immediates are checked when recorded,
        Scalars when the program runs.
        Source: CANN TIK API reference, vector_dup; TIK 2020 source
        ``tik_lib/tik_data_operation_api_.py`` (vector_dup),
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        self._vec("vector_dup", mask, dst, [], scalar, repeat_times, [dst_blk_stride],
                  [dst_rep_stride], stride_unit=stride_unit)

    # ---- conversion --------------------------------------------------------------------
    def vec_conv(self, mask: Mask, round_mode: str | None, dst: Operand, src: Operand,
                 repeat_times: IntArg, dst_rep_stride: IntArg, src_rep_stride: IntArg,
                 deqscale: RealArg | Operand | None = None,
                 ldst_high_half: bool = False) -> None:
        """``dst[l] = round_mode(src[l])`` converted to dst's dtype, every active lane l.

        The source value is exact in float64 and rounded once to dst's format.  Pairs and
        modes: float16 <-> float32 ('' / 'none': RNE; float32 -> float16 also 'odd'),
        float16/float32 -> int32 ('round' = to nearest even, 'floor', 'ceil'/'ceiling',
        'away-zero', 'to-zero'), int32 -> float16/float32 (''), float16 -> int8/uint8 (''
        or a rounding mode), int8/uint8 -> float16 ('').  Float -> integer saturates, NaN
        -> 0.  L = 256 / the larger element size.

        mask -- int in [1, L] (lanes 0..mask-1) or ``[mask_h, mask_l]`` (bit i of mask_l:
            lane i, of mask_h: lane 64+i; mask_h 0 when L = 64); a Scalar is read at run
            time.  L = 256 / element bytes (128 lanes for 16-bit, 64 for 32-bit dtypes).
        round_mode -- one of the modes above for the (src, dst) pair; None means ''.
        dst, src -- UB Tensors or ``t[i]`` starts (32-byte aligned) of the pair's dtypes.
            Lane l of repeat r of X is element ``start + r*X_rep_stride*B + l`` (B = 32 /
            X's element bytes).
        repeat_times -- [1, 255]; a Scalar/Expr in [0, 255] at run time (0: nothing).
            Repeats run in order.
        dst_rep_stride, src_rep_stride -- [0, 255], 32-byte blocks between repeat starts.
        deqscale -- int32 -> float16 (deq mode) takes the immediate 1.0 (the value rounded
            once); other scales, Scalar scales and deq8/vdeq8 raise NotImplementedError,
            any other pair with a deqscale ConstraintError.
        ldst_high_half -- True (the 8-bit high-half forms) raises NotImplementedError.

        Raises ConstraintError (a range, dtype, mask or target rule), AccessError (a lane
        past a tensor's end), AlignmentError (a start not 32-byte aligned), OverlapError
        (dst partially overlapping a source).  Immediates are checked when recorded,
        Scalars when the program runs.
        Source: CANN TIK API reference, vec_conv; TIK 2020 source ``api/tik_vector_api.py``
        (vec_conv), github.com/jizhuoran/caffe-huawei-atlas-convertor
        convertor/huawei/te/tik/.
        """
        if deqscale is not None or ldst_high_half:
            raise NotImplementedError("vec_conv: deqscale / ldst_high_half conversions are "
                                      "not implemented")
        self._vec("vec_conv", mask, dst, [src], None, repeat_times, [1, 1],
                  [dst_rep_stride, src_rep_stride], round_mode=round_mode)

    def vconv(self, mask: Mask, round_mode: str | None, dst: Operand, src: Operand,
              repeat_times: IntArg, dst_blk_stride: IntArg, src_blk_stride: IntArg,
              dst_rep_stride: IntArg, src_rep_stride: IntArg,
              deqscale: RealArg | Operand | None = None, ldst_high_half: bool = False,
              stride_unit: Int = 0) -> None:
        """``dst[l] = round_mode(src[l])`` per active lane, with block strides (legacy vec_conv).

        Pairs, modes and rounding as vec_conv: the exact source value rounded once to dst's
        format; float -> integer saturates, NaN -> 0.  L = 256 / the larger element size.

        mask -- int in [1, L] (lanes 0..mask-1) or ``[mask_h, mask_l]`` (bit i of mask_l:
            lane i, of mask_h: lane 64+i; mask_h 0 when L = 64); a Scalar is read at run
            time.  L = 256 / element bytes (128 lanes for 16-bit, 64 for 32-bit dtypes).
        round_mode -- the pair's mode ('' / 'none' RNE, 'round', 'floor', 'ceil'/'ceiling',
            'away-zero', 'to-zero', 'odd'); None means ''.
        dst, src -- UB Tensors or ``t[i]`` starts (32-byte aligned) of the pair's dtypes;
            lane l of repeat r of X is element ``start + r*X_rep_stride*B +
            (l//B)*X_blk_stride*B + l%B``, B = 32 / X's element bytes.
        repeat_times -- [1, 255]; a Scalar/Expr in [0, 255] at run time (0: nothing).
            Repeats run in order.
        dst_blk_stride, src_blk_stride -- [0, 65535], 32-byte blocks within a repeat.
        dst_rep_stride, src_rep_stride -- [0, 255], 32-byte blocks between repeat starts.
        deqscale -- int32 -> float16 takes the immediate 1.0; others raise
            NotImplementedError (other pairs: ConstraintError).
        ldst_high_half -- True raises NotImplementedError.
        stride_unit -- ignored on Ascend 310/910 (as TIK does); elsewhere 0 (as above) or 1
            (rep_stride = the gap in blocks after a repeat's last block); 2 and 3 raise
            NotImplementedError.

        Raises ConstraintError (a range, dtype, mask or target rule), AccessError (a lane
        past a tensor's end), AlignmentError (a start not 32-byte aligned), OverlapError
        (dst partially overlapping a source).  Immediates are checked when recorded,
        Scalars when the program runs.
        Source: CANN TIK API reference, vconv; TIK 2020 source
        ``tik_lib/tik_vector_api_.py`` (vconv),
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        if deqscale is not None or ldst_high_half:
            raise NotImplementedError("vconv: deqscale / ldst_high_half conversions are not "
                                      "implemented")
        self._vec("vconv", mask, dst, [src], None, repeat_times,
                  [dst_blk_stride, src_blk_stride], [dst_rep_stride, src_rep_stride],
                  round_mode=round_mode, stride_unit=stride_unit)

    # ---- reductions ----------------------------------------------------------------
    def vcadd(self, mask: Mask, dst: Operand, src: Operand, repeat_times: IntArg,
              dst_rep_stride: IntArg, src_blk_stride: IntArg, src_rep_stride: IntArg,
              stride_unit: Int = 0) -> None:
        """``dst[r*dst_rep_stride] = sum(src[l] for the active lanes l of repeat r)``.

        The sum is computed in float64 and rounded once to the dtype (exact for float16
        inputs); float16 saturates on the saturation-mode targets.  No counter mode.

        mask -- int in [1, L] (lanes 0..mask-1) or ``[mask_h, mask_l]`` (bit i of mask_l:
            lane i, of mask_h: lane 64+i; mask_h 0 when L = 64); a Scalar is read at run
            time.  L = 256 / element bytes (128 lanes for 16-bit, 64 for 32-bit dtypes).
        dst -- UB Tensor or ``t[i]`` start (element-aligned), src's dtype; needs
            ``(repeat_times-1)*dst_rep_stride + 1`` elements.
        src -- UB Tensor or ``t[i]`` start (32-byte aligned), float16 or float32; lane l of
            repeat r is element ``start + r*src_rep_stride*B + (l//B)*src_blk_stride*B +
            l%B``, B = 32 / element bytes.
        repeat_times -- [1, 255]; a Scalar/Expr in [0, 255] at run time (0: nothing).
            Repeats run in order.
        dst_rep_stride -- [0, 255] dst ELEMENTS between consecutive results.
        src_blk_stride -- [0, 65535], src_rep_stride -- [0, 255]: 32-byte blocks.
        stride_unit -- ignored on Ascend 310/910; elsewhere only 0 is implemented (1, 2, 3
            raise NotImplementedError).

        Raises ConstraintError (a range, dtype, mask or target rule), AccessError (a lane
        past a tensor's end), AlignmentError (a start not 32-byte aligned), OverlapError
        (dst partially overlapping a source).  Immediates are checked when recorded,
        Scalars when the program runs.
        Source: CANN TIK API reference, vcadd; TIK 2020 source
        ``tik_lib/tik_reduce_api_.py`` (vcadd),
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        _reduce_stride_unit("vcadd", self.target, stride_unit)
        self._record(_Reduce(self, "vcadd", ADD, mask, dst, src, repeat_times, dst_rep_stride,
                             src_blk_stride, src_rep_stride, whole=False))

    def vcmax(self, mask: Mask, dst: Operand, src: Operand, repeat_times: IntArg,
              dst_rep_stride: IntArg, src_blk_stride: IntArg, src_rep_stride: IntArg,
              stride_unit: Int = 0) -> None:
        """``dst[2*r*s] = max(src lanes of repeat r)``, ``dst[2*r*s + 1] = its lane``
        (s = dst_rep_stride).

        The value is the winning element's bits unchanged; the index (0..L-1 within the
        repeat) is stored as the bit pattern of an unsigned integer of the element's width
        (uint16 for float16, uint32 for float32: read it with ``reinterpret_cast_to``).
        Ties (and -0 == +0): the lowest lane wins; NaN: the first NaN lane wins.  TIK's
        index_low and max_cnt_index options and counter mode are not supported.

        mask -- int in [1, L] (lanes 0..mask-1) or ``[mask_h, mask_l]`` (bit i of mask_l:
            lane i, of mask_h: lane 64+i; mask_h 0 when L = 64); a Scalar is read at run
            time.  L = 256 / element bytes (128 lanes for 16-bit, 64 for 32-bit dtypes).
        dst -- UB Tensor or ``t[i]`` start, src's dtype; needs
            ``2*((repeat_times-1)*dst_rep_stride + 1)`` elements.
        src -- UB Tensor or ``t[i]`` start (32-byte aligned), float16 or float32; lanes as
            in vcadd.
        repeat_times -- [1, 255]; a Scalar/Expr in [0, 255] at run time (0: nothing).
            Repeats run in order.
        dst_rep_stride -- [0, 255] [value, index] PAIRS between repeats (TIK's
            ``repeat_times*dst_rep_stride*2*sizeof`` extent); 0: every repeat writes the
            same pair, the last stays.
        src_blk_stride -- [0, 65535], src_rep_stride -- [0, 255]: 32-byte blocks.
        stride_unit -- ignored on Ascend 310/910; elsewhere only 0 is implemented (1, 2, 3
            raise NotImplementedError).

        Raises ConstraintError (a range, dtype, mask or target rule), AccessError (a lane
        past a tensor's end), AlignmentError (a start not 32-byte aligned), OverlapError
        (dst partially overlapping a source).  Immediates are checked when recorded,
        Scalars when the program runs.
        Source: CANN TIK API reference, vcmax; TIK 2020 source
        ``tik_lib/tik_reduce_api_.py`` (vcmax),
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        _reduce_stride_unit("vcmax", self.target, stride_unit)
        self._record(_Reduce(self, "vcmax", MAX, mask, dst, src, repeat_times, dst_rep_stride,
                             src_blk_stride, src_rep_stride, whole=False, pair=True))

    def vcmin(self, mask: Mask, dst: Operand, src: Operand, repeat_times: IntArg,
              dst_rep_stride: IntArg, src_blk_stride: IntArg, src_rep_stride: IntArg,
              stride_unit: Int = 0) -> None:
        """``dst[2*r*s] = min(src lanes of repeat r)``, ``dst[2*r*s + 1] = its lane``
        (s = dst_rep_stride).

        As vcmax with the minimum: the value's bits unchanged, the lane number as a
        uint16 / uint32 bit pattern; ties and -0/+0: the lowest lane; NaN: the first NaN
        lane wins.

        mask -- int in [1, L] (lanes 0..mask-1) or ``[mask_h, mask_l]`` (bit i of mask_l:
            lane i, of mask_h: lane 64+i; mask_h 0 when L = 64); a Scalar is read at run
            time.  L = 256 / element bytes (128 lanes for 16-bit, 64 for 32-bit dtypes).
        dst -- UB Tensor or ``t[i]`` start, src's dtype; needs
            ``2*((repeat_times-1)*dst_rep_stride + 1)`` elements.
        src -- UB Tensor or ``t[i]`` start (32-byte aligned), float16 or float32.
        repeat_times -- [1, 255]; a Scalar/Expr in [0, 255] at run time (0: nothing).
            Repeats run in order.
        dst_rep_stride -- [0, 255] [value, index] pairs between repeats.
        src_blk_stride -- [0, 65535], src_rep_stride -- [0, 255]: 32-byte blocks.
        stride_unit -- ignored on Ascend 310/910; elsewhere only 0 is implemented (1, 2, 3
            raise NotImplementedError).

        Raises ConstraintError (a range, dtype, mask or target rule), AccessError (a lane
        past a tensor's end), AlignmentError (a start not 32-byte aligned), OverlapError
        (dst partially overlapping a source).  Immediates are checked when recorded,
        Scalars when the program runs.
        Source: CANN TIK API reference, vcmin; TIK 2020 source
        ``tik_lib/tik_reduce_api_.py`` (vcmin),
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        _reduce_stride_unit("vcmin", self.target, stride_unit)
        self._record(_Reduce(self, "vcmin", MIN, mask, dst, src, repeat_times, dst_rep_stride,
                             src_blk_stride, src_rep_stride, whole=False, pair=True))

    def _reduce_whole(self, name, op, mask, dst, src, work_tensor, repeat_times,
                      src_rep_stride, cal_index=False):
        if cal_index:
            raise NotImplementedError(f"{name}: cal_index=True is not implemented")
        self._record(_Reduce(self, name, op, mask, dst, src, repeat_times, 0, 1,
                             src_rep_stride, whole=True, work=work_tensor))

    def vec_reduce_add(self, mask: Mask, dst: Operand, src: Operand, work_tensor: Operand,
                       repeat_times: IntArg, src_rep_stride: IntArg) -> None:
        """``dst[0] = sum(src[l] for every active lane l of every repeat)``.

        As TIK builds it from vcadd: each repeat's sum is rounded to the dtype, then those
        partial sums are reduced L at a time (each step rounded) until one is left.

        mask -- int in [1, L] (lanes 0..mask-1) or ``[mask_h, mask_l]`` (bit i of mask_l:
            lane i, of mask_h: lane 64+i; mask_h 0 when L = 64); a Scalar is read at run
            time.  L = 256 / element bytes (128 lanes for 16-bit, 64 for 32-bit dtypes).
        dst -- UB Tensor or ``t[i]`` start, src's dtype (one element written).
        src -- UB Tensor or ``t[i]`` start (32-byte aligned), float16 or float32; lane l of
            repeat r is element ``start + r*src_rep_stride*B + l``.
        work_tensor -- UB Tensor of src's dtype (accepted; fastisa keeps the partial sums
            in its own scratch, work_tensor is not written).
        repeat_times -- [1, 255]; a Scalar/Expr in [0, 255] at run time (0: nothing).
            Repeats run in order.
        src_rep_stride -- [0, 255], 32-byte blocks between repeat starts.

        Raises ConstraintError (a range, dtype, mask or target rule), AccessError (a lane
        past a tensor's end), AlignmentError (a start not 32-byte aligned), OverlapError
        (dst partially overlapping a source).  Immediates are checked when recorded,
        Scalars when the program runs.
        Source: CANN TIK API reference, vec_reduce_add; TIK 2020 source
        ``api/tik_reduce_api.py`` (vec_reduce_add),
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        self._reduce_whole("vec_reduce_add", ADD, mask, dst, src, work_tensor, repeat_times,
                           src_rep_stride)

    def vec_reduce_max(self, mask: Mask, dst: Operand, src: Operand, work_tensor: Operand,
                       repeat_times: IntArg, src_rep_stride: IntArg,
                       cal_index: bool = False) -> None:
        """``dst[0] = max(src[l] for every active lane l of every repeat)``.

        The value's bits unchanged; NaN propagates (the first NaN wins).

        mask -- int in [1, L] (lanes 0..mask-1) or ``[mask_h, mask_l]`` (bit i of mask_l:
            lane i, of mask_h: lane 64+i; mask_h 0 when L = 64); a Scalar is read at run
            time.  L = 256 / element bytes (128 lanes for 16-bit, 64 for 32-bit dtypes).
        dst -- UB Tensor or ``t[i]`` start, src's dtype (one element written).
        src -- UB Tensor or ``t[i]`` start (32-byte aligned), float16 or float32.
        work_tensor -- UB Tensor of src's dtype (accepted, not written).
        repeat_times -- [1, 255]; a Scalar/Expr in [0, 255] at run time (0: nothing).
            Repeats run in order.
        src_rep_stride -- [0, 255], 32-byte blocks between repeat starts.
        cal_index -- True (also return the index) raises NotImplementedError.

        Raises ConstraintError (a range, dtype, mask or target rule), AccessError (a lane
        past a tensor's end), AlignmentError (a start not 32-byte aligned), OverlapError
        (dst partially overlapping a source).  Immediates are checked when recorded,
        Scalars when the program runs.
        Source: CANN TIK API reference, vec_reduce_max; TIK 2020 source
        ``api/tik_reduce_api.py`` (vec_reduce_max),
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        self._reduce_whole("vec_reduce_max", MAX, mask, dst, src, work_tensor, repeat_times,
                           src_rep_stride, cal_index)

    def vec_reduce_min(self, mask: Mask, dst: Operand, src: Operand, work_tensor: Operand,
                       repeat_times: IntArg, src_rep_stride: IntArg,
                       cal_index: bool = False) -> None:
        """``dst[0] = min(src[l] for every active lane l of every repeat)``.

        The value's bits unchanged; NaN propagates (the first NaN wins).

        mask -- int in [1, L] (lanes 0..mask-1) or ``[mask_h, mask_l]`` (bit i of mask_l:
            lane i, of mask_h: lane 64+i; mask_h 0 when L = 64); a Scalar is read at run
            time.  L = 256 / element bytes (128 lanes for 16-bit, 64 for 32-bit dtypes).
        dst -- UB Tensor or ``t[i]`` start, src's dtype (one element written).
        src -- UB Tensor or ``t[i]`` start (32-byte aligned), float16 or float32.
        work_tensor -- UB Tensor of src's dtype (accepted, not written).
        repeat_times -- [1, 255]; a Scalar/Expr in [0, 255] at run time (0: nothing).
            Repeats run in order.
        src_rep_stride -- [0, 255], 32-byte blocks between repeat starts.
        cal_index -- True raises NotImplementedError.

        Raises ConstraintError (a range, dtype, mask or target rule), AccessError (a lane
        past a tensor's end), AlignmentError (a start not 32-byte aligned), OverlapError
        (dst partially overlapping a source).  Immediates are checked when recorded,
        Scalars when the program runs.
        Source: CANN TIK API reference, vec_reduce_min; TIK 2020 source
        ``api/tik_reduce_api.py`` (vec_reduce_min),
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        self._reduce_whole("vec_reduce_min", MIN, mask, dst, src, work_tensor, repeat_times,
                           src_rep_stride, cal_index)

    # ---- data movement --------------------------------------------------------------
    def data_move(self, dst: Operand, src: Operand, sid: IntArg, nburst: IntArg, burst: IntArg,
                  src_stride: IntArg, dst_stride: IntArg, *args: object,
                  **kwargs: object) -> None:
        """Burst k < nburst of ``burst*32`` bytes: ``src + k*(burst+src_stride)*32`` ->
        ``dst + k*(burst+dst_stride)*32``.

        Paths GM -> UB, UB -> GM, UB -> UB, GM -> L1, L1 -> UB (L1 -> GM on A2/A3).  The
        bytes are copied unchanged (dst and src dtypes may differ).  While
        ``set_atomic_add`` is on, a move to GM adds instead (see set_atomic_add).

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
        checked when recorded, Scalars when the program runs.
        Source: CANN TIK API reference, data_move; TIK 2020 source
        ``api/tik_data_operation_api.py`` (data_move),
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        self._record(_DataMove(self, dst, src, sid, nburst, burst, src_stride, dst_stride))
