"""TIK compare instructions, ``Tik`` methods mixed into :class:`fastisa.tik.Tik` through
:class:`fastisa.tik._cmpsel.CmpSelMixin`: vcmp_* (into the CMPMASK register), vcmpv_* and
vec_cmpv_* (tensor against tensor, into a bit tensor) and vcmpvs_* (tensor against a scalar),
for eq, ne, lt, gt, le, ge.

The recording, validation and the C kernel are in :mod:`fastisa.tik._cmpsel` (its module
docstring gives the lane, bit and CMPMASK rules).  Semantics: the CANN TIK API reference and
the 2020 TIK source with its debugger (github.com/jizhuoran/caffe-huawei-atlas-convertor,
convertor/huawei/te/tik/tik_lib/tik_cmp_api_.py, api/tik_cmp_api.py, debug/simd.py).
"""

from __future__ import annotations

import typing as _typing

if _typing.TYPE_CHECKING:
    from ._annot import IntArg, Mask, Operand, RealArg
    from ._cmpsel import CmpMask

__all__ = ["CompareMixin"]


class CompareMixin:
    """The compare instructions (methods of :class:`fastisa.tik.Tik`)."""

    if _typing.TYPE_CHECKING:
        def _vcmp(self, name: str, mask: Mask, src0: Operand, src1: Operand,
                  src0_stride: IntArg, src1_stride: IntArg) -> CmpMask: ...

        def _vcmpv(self, name: str, dst: Operand, src0: Operand, src1: Operand,
                   repeat_times: IntArg, blks: list[IntArg], reps: list[IntArg]) -> None: ...

        def _vcmpvs(self, name: str, dst: Operand, src: Operand, scalar: RealArg,
                    repeat_times: IntArg, src_blk_stride: IntArg,
                    src_rep_stride: IntArg) -> None: ...

    def vcmp_eq(self, mask: Mask, src0: Operand, src1: Operand, src0_stride: IntArg,
                src1_stride: IntArg) -> CmpMask:
        """``CMPMASK bit l = (src0[l] == src1[l])`` for every active lane l of one repeat.

        Inactive lanes keep their CMPMASK bit; for float32 only bits 0..63 change. IEEE
        comparison: NaN makes it false except for ne (true); -0 == +0. Returns the CMPMASK
        handle (for vsel mode 0 and mov_cmpmask_to_tensor).

        mask -- int in [1, L] (lanes 0..mask-1) or ``[mask_h, mask_l]`` (bit i of mask_l:
            lane i, of mask_h: lane 64+i); a Scalar is read at run time.
        src0, src1 -- UB Tensors or ``t[i]`` starts (32-byte aligned), one dtype: float16,
            float32 (Ascend 310: float16). Lane l is element ``start + (l//B)*stride*B +
            l%B``, B = 32 / element bytes.
        src0_stride, src1_stride -- [0, 65535], 32-byte blocks between the blocks of the
            repeat.

        Raises ConstraintError (a range, dtype or target rule), AccessError (past a tensor's
        end), AlignmentError (a start not 32-byte aligned), OverlapError (dst overlapping a
        block that is read). Immediates are checked when recorded, Scalars when run. Source:
        CANN TIK API reference, vcmp_eq; TIK 2020 source ``tik_lib/tik_cmp_api_.py``
        (vcmp_eq) and its debugger ``debug/simd.py``,
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        return self._vcmp("vcmp_eq", mask, src0, src1, src0_stride, src1_stride)

    def vcmp_ne(self, mask: Mask, src0: Operand, src1: Operand, src0_stride: IntArg,
                src1_stride: IntArg) -> CmpMask:
        """``CMPMASK bit l = (src0[l] != src1[l])`` for every active lane l of one repeat.

        Inactive lanes keep their CMPMASK bit; for float32 only bits 0..63 change. IEEE
        comparison: NaN makes it false except for ne (true); -0 == +0. Returns the CMPMASK
        handle (for vsel mode 0 and mov_cmpmask_to_tensor).

        mask -- int in [1, L] (lanes 0..mask-1) or ``[mask_h, mask_l]`` (bit i of mask_l:
            lane i, of mask_h: lane 64+i); a Scalar is read at run time.
        src0, src1 -- UB Tensors or ``t[i]`` starts (32-byte aligned), one dtype: float16,
            float32 (Ascend 310: float16). Lane l is element ``start + (l//B)*stride*B +
            l%B``, B = 32 / element bytes.
        src0_stride, src1_stride -- [0, 65535], 32-byte blocks between the blocks of the
            repeat.

        Raises ConstraintError (a range, dtype or target rule), AccessError (past a tensor's
        end), AlignmentError (a start not 32-byte aligned), OverlapError (dst overlapping a
        block that is read). Immediates are checked when recorded, Scalars when run. Source:
        CANN TIK API reference, vcmp_ne; TIK 2020 source ``tik_lib/tik_cmp_api_.py``
        (vcmp_ne) and its debugger ``debug/simd.py``,
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        return self._vcmp("vcmp_ne", mask, src0, src1, src0_stride, src1_stride)

    def vcmp_lt(self, mask: Mask, src0: Operand, src1: Operand, src0_stride: IntArg,
                src1_stride: IntArg) -> CmpMask:
        """``CMPMASK bit l = (src0[l] < src1[l])`` for every active lane l of one repeat.

        Inactive lanes keep their CMPMASK bit; for float32 only bits 0..63 change. IEEE
        comparison: NaN makes it false except for ne (true); -0 == +0. Returns the CMPMASK
        handle (for vsel mode 0 and mov_cmpmask_to_tensor).

        mask -- int in [1, L] (lanes 0..mask-1) or ``[mask_h, mask_l]`` (bit i of mask_l:
            lane i, of mask_h: lane 64+i); a Scalar is read at run time.
        src0, src1 -- UB Tensors or ``t[i]`` starts (32-byte aligned), one dtype: float16,
            float32 (Ascend 310: float16). Lane l is element ``start + (l//B)*stride*B +
            l%B``, B = 32 / element bytes.
        src0_stride, src1_stride -- [0, 65535], 32-byte blocks between the blocks of the
            repeat.

        Raises ConstraintError (a range, dtype or target rule), AccessError (past a tensor's
        end), AlignmentError (a start not 32-byte aligned), OverlapError (dst overlapping a
        block that is read). Immediates are checked when recorded, Scalars when run. Source:
        CANN TIK API reference, vcmp_lt; TIK 2020 source ``tik_lib/tik_cmp_api_.py``
        (vcmp_lt) and its debugger ``debug/simd.py``,
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        return self._vcmp("vcmp_lt", mask, src0, src1, src0_stride, src1_stride)

    def vcmp_gt(self, mask: Mask, src0: Operand, src1: Operand, src0_stride: IntArg,
                src1_stride: IntArg) -> CmpMask:
        """``CMPMASK bit l = (src0[l] > src1[l])`` for every active lane l of one repeat.

        Inactive lanes keep their CMPMASK bit; for float32 only bits 0..63 change. IEEE
        comparison: NaN makes it false except for ne (true); -0 == +0. Returns the CMPMASK
        handle (for vsel mode 0 and mov_cmpmask_to_tensor).

        mask -- int in [1, L] (lanes 0..mask-1) or ``[mask_h, mask_l]`` (bit i of mask_l:
            lane i, of mask_h: lane 64+i); a Scalar is read at run time.
        src0, src1 -- UB Tensors or ``t[i]`` starts (32-byte aligned), one dtype: float16,
            float32 (Ascend 310: float16). Lane l is element ``start + (l//B)*stride*B +
            l%B``, B = 32 / element bytes.
        src0_stride, src1_stride -- [0, 65535], 32-byte blocks between the blocks of the
            repeat.

        Raises ConstraintError (a range, dtype or target rule), AccessError (past a tensor's
        end), AlignmentError (a start not 32-byte aligned), OverlapError (dst overlapping a
        block that is read). Immediates are checked when recorded, Scalars when run. Source:
        CANN TIK API reference, vcmp_gt; TIK 2020 source ``tik_lib/tik_cmp_api_.py``
        (vcmp_gt) and its debugger ``debug/simd.py``,
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        return self._vcmp("vcmp_gt", mask, src0, src1, src0_stride, src1_stride)

    def vcmp_le(self, mask: Mask, src0: Operand, src1: Operand, src0_stride: IntArg,
                src1_stride: IntArg) -> CmpMask:
        """``CMPMASK bit l = (src0[l] <= src1[l])`` for every active lane l of one repeat.

        Inactive lanes keep their CMPMASK bit; for float32 only bits 0..63 change. IEEE
        comparison: NaN makes it false except for ne (true); -0 == +0. Returns the CMPMASK
        handle (for vsel mode 0 and mov_cmpmask_to_tensor).

        mask -- int in [1, L] (lanes 0..mask-1) or ``[mask_h, mask_l]`` (bit i of mask_l:
            lane i, of mask_h: lane 64+i); a Scalar is read at run time.
        src0, src1 -- UB Tensors or ``t[i]`` starts (32-byte aligned), one dtype: float16,
            float32 (Ascend 310: float16). Lane l is element ``start + (l//B)*stride*B +
            l%B``, B = 32 / element bytes.
        src0_stride, src1_stride -- [0, 65535], 32-byte blocks between the blocks of the
            repeat.

        Raises ConstraintError (a range, dtype or target rule), AccessError (past a tensor's
        end), AlignmentError (a start not 32-byte aligned), OverlapError (dst overlapping a
        block that is read). Immediates are checked when recorded, Scalars when run. Source:
        CANN TIK API reference, vcmp_le; TIK 2020 source ``tik_lib/tik_cmp_api_.py``
        (vcmp_le) and its debugger ``debug/simd.py``,
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        return self._vcmp("vcmp_le", mask, src0, src1, src0_stride, src1_stride)

    def vcmp_ge(self, mask: Mask, src0: Operand, src1: Operand, src0_stride: IntArg,
                src1_stride: IntArg) -> CmpMask:
        """``CMPMASK bit l = (src0[l] >= src1[l])`` for every active lane l of one repeat.

        Inactive lanes keep their CMPMASK bit; for float32 only bits 0..63 change. IEEE
        comparison: NaN makes it false except for ne (true); -0 == +0. Returns the CMPMASK
        handle (for vsel mode 0 and mov_cmpmask_to_tensor).

        mask -- int in [1, L] (lanes 0..mask-1) or ``[mask_h, mask_l]`` (bit i of mask_l:
            lane i, of mask_h: lane 64+i); a Scalar is read at run time.
        src0, src1 -- UB Tensors or ``t[i]`` starts (32-byte aligned), one dtype: float16,
            float32 (Ascend 310: float16). Lane l is element ``start + (l//B)*stride*B +
            l%B``, B = 32 / element bytes.
        src0_stride, src1_stride -- [0, 65535], 32-byte blocks between the blocks of the
            repeat.

        Raises ConstraintError (a range, dtype or target rule), AccessError (past a tensor's
        end), AlignmentError (a start not 32-byte aligned), OverlapError (dst overlapping a
        block that is read). Immediates are checked when recorded, Scalars when run. Source:
        CANN TIK API reference, vcmp_ge; TIK 2020 source ``tik_lib/tik_cmp_api_.py``
        (vcmp_ge) and its debugger ``debug/simd.py``,
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        return self._vcmp("vcmp_ge", mask, src0, src1, src0_stride, src1_stride)

    def vcmpv_eq(self, dst: Operand, src0: Operand, src1: Operand, repeat_times: IntArg,
                 src0_blk_stride: IntArg, src1_blk_stride: IntArg, src0_rep_stride: IntArg,
                 src1_rep_stride: IntArg) -> None:
        """``dst bit (r*L + l) = (src0[l] == src1[l])`` for every lane l of every repeat r.

        No mask: every lane is compared. Bit i of a repeat's field is bit i%8 of byte i//8;
        repeat r's field starts r*L/8 bytes in (L = 128 lanes for float16, 64 for float32).
        IEEE comparison: NaN makes it false except for ne (true); -0 == +0.

        dst -- UB Tensor or ``t[i]`` start (32-byte aligned), uint8/16/32/64, with
            repeat_times*L/8 bytes; it may not overlap a block read.
        src0, src1 -- UB Tensors or ``t[i]`` starts (32-byte aligned), one dtype: float16,
            float32 (Ascend 310: float16). Lane l of repeat r is element ``start +
            r*rep_stride*B + (l//B)*blk_stride*B + l%B``, B = 32 / element bytes.
        repeat_times -- [1, 255]; a Scalar in [0, 255] at run time.
        src0_blk_stride, src1_blk_stride -- [0, 255], 32-byte blocks within a repeat.
        src0_rep_stride, src1_rep_stride -- [0, 255], 32-byte blocks between repeat starts.

        Raises ConstraintError (a range, dtype or target rule), AccessError (past a tensor's
        end), AlignmentError (a start not 32-byte aligned), OverlapError (dst overlapping a
        block that is read). Immediates are checked when recorded, Scalars when run. Source:
        CANN TIK API reference, vcmpv_eq; TIK 2020 source ``tik_lib/tik_cmp_api_.py``
        (vcmpv_eq) and its debugger ``debug/simd.py``,
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        self._vcmpv("vcmpv_eq", dst, src0, src1, repeat_times,
                    [src0_blk_stride, src1_blk_stride],
                    [src0_rep_stride, src1_rep_stride])

    def vcmpv_ne(self, dst: Operand, src0: Operand, src1: Operand, repeat_times: IntArg,
                 src0_blk_stride: IntArg, src1_blk_stride: IntArg, src0_rep_stride: IntArg,
                 src1_rep_stride: IntArg) -> None:
        """``dst bit (r*L + l) = (src0[l] != src1[l])`` for every lane l of every repeat r.

        No mask: every lane is compared. Bit i of a repeat's field is bit i%8 of byte i//8;
        repeat r's field starts r*L/8 bytes in (L = 128 lanes for float16, 64 for float32).
        IEEE comparison: NaN makes it false except for ne (true); -0 == +0.

        dst -- UB Tensor or ``t[i]`` start (32-byte aligned), uint8/16/32/64, with
            repeat_times*L/8 bytes; it may not overlap a block read.
        src0, src1 -- UB Tensors or ``t[i]`` starts (32-byte aligned), one dtype: float16,
            float32 (Ascend 310: float16). Lane l of repeat r is element ``start +
            r*rep_stride*B + (l//B)*blk_stride*B + l%B``, B = 32 / element bytes.
        repeat_times -- [1, 255]; a Scalar in [0, 255] at run time.
        src0_blk_stride, src1_blk_stride -- [0, 255], 32-byte blocks within a repeat.
        src0_rep_stride, src1_rep_stride -- [0, 255], 32-byte blocks between repeat starts.

        Raises ConstraintError (a range, dtype or target rule), AccessError (past a tensor's
        end), AlignmentError (a start not 32-byte aligned), OverlapError (dst overlapping a
        block that is read). Immediates are checked when recorded, Scalars when run. Source:
        CANN TIK API reference, vcmpv_ne; TIK 2020 source ``tik_lib/tik_cmp_api_.py``
        (vcmpv_ne) and its debugger ``debug/simd.py``,
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        self._vcmpv("vcmpv_ne", dst, src0, src1, repeat_times,
                    [src0_blk_stride, src1_blk_stride],
                    [src0_rep_stride, src1_rep_stride])

    def vcmpv_lt(self, dst: Operand, src0: Operand, src1: Operand, repeat_times: IntArg,
                 src0_blk_stride: IntArg, src1_blk_stride: IntArg, src0_rep_stride: IntArg,
                 src1_rep_stride: IntArg) -> None:
        """``dst bit (r*L + l) = (src0[l] < src1[l])`` for every lane l of every repeat r.

        No mask: every lane is compared. Bit i of a repeat's field is bit i%8 of byte i//8;
        repeat r's field starts r*L/8 bytes in (L = 128 lanes for float16, 64 for float32).
        IEEE comparison: NaN makes it false except for ne (true); -0 == +0.

        dst -- UB Tensor or ``t[i]`` start (32-byte aligned), uint8/16/32/64, with
            repeat_times*L/8 bytes; it may not overlap a block read.
        src0, src1 -- UB Tensors or ``t[i]`` starts (32-byte aligned), one dtype: float16,
            float32 (Ascend 310: float16). Lane l of repeat r is element ``start +
            r*rep_stride*B + (l//B)*blk_stride*B + l%B``, B = 32 / element bytes.
        repeat_times -- [1, 255]; a Scalar in [0, 255] at run time.
        src0_blk_stride, src1_blk_stride -- [0, 255], 32-byte blocks within a repeat.
        src0_rep_stride, src1_rep_stride -- [0, 255], 32-byte blocks between repeat starts.

        Raises ConstraintError (a range, dtype or target rule), AccessError (past a tensor's
        end), AlignmentError (a start not 32-byte aligned), OverlapError (dst overlapping a
        block that is read). Immediates are checked when recorded, Scalars when run. Source:
        CANN TIK API reference, vcmpv_lt; TIK 2020 source ``tik_lib/tik_cmp_api_.py``
        (vcmpv_lt) and its debugger ``debug/simd.py``,
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        self._vcmpv("vcmpv_lt", dst, src0, src1, repeat_times,
                    [src0_blk_stride, src1_blk_stride],
                    [src0_rep_stride, src1_rep_stride])

    def vcmpv_gt(self, dst: Operand, src0: Operand, src1: Operand, repeat_times: IntArg,
                 src0_blk_stride: IntArg, src1_blk_stride: IntArg, src0_rep_stride: IntArg,
                 src1_rep_stride: IntArg) -> None:
        """``dst bit (r*L + l) = (src0[l] > src1[l])`` for every lane l of every repeat r.

        No mask: every lane is compared. Bit i of a repeat's field is bit i%8 of byte i//8;
        repeat r's field starts r*L/8 bytes in (L = 128 lanes for float16, 64 for float32).
        IEEE comparison: NaN makes it false except for ne (true); -0 == +0.

        dst -- UB Tensor or ``t[i]`` start (32-byte aligned), uint8/16/32/64, with
            repeat_times*L/8 bytes; it may not overlap a block read.
        src0, src1 -- UB Tensors or ``t[i]`` starts (32-byte aligned), one dtype: float16,
            float32 (Ascend 310: float16). Lane l of repeat r is element ``start +
            r*rep_stride*B + (l//B)*blk_stride*B + l%B``, B = 32 / element bytes.
        repeat_times -- [1, 255]; a Scalar in [0, 255] at run time.
        src0_blk_stride, src1_blk_stride -- [0, 255], 32-byte blocks within a repeat.
        src0_rep_stride, src1_rep_stride -- [0, 255], 32-byte blocks between repeat starts.

        Raises ConstraintError (a range, dtype or target rule), AccessError (past a tensor's
        end), AlignmentError (a start not 32-byte aligned), OverlapError (dst overlapping a
        block that is read). Immediates are checked when recorded, Scalars when run. Source:
        CANN TIK API reference, vcmpv_gt; TIK 2020 source ``tik_lib/tik_cmp_api_.py``
        (vcmpv_gt) and its debugger ``debug/simd.py``,
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        self._vcmpv("vcmpv_gt", dst, src0, src1, repeat_times,
                    [src0_blk_stride, src1_blk_stride],
                    [src0_rep_stride, src1_rep_stride])

    def vcmpv_le(self, dst: Operand, src0: Operand, src1: Operand, repeat_times: IntArg,
                 src0_blk_stride: IntArg, src1_blk_stride: IntArg, src0_rep_stride: IntArg,
                 src1_rep_stride: IntArg) -> None:
        """``dst bit (r*L + l) = (src0[l] <= src1[l])`` for every lane l of every repeat r.

        No mask: every lane is compared. Bit i of a repeat's field is bit i%8 of byte i//8;
        repeat r's field starts r*L/8 bytes in (L = 128 lanes for float16, 64 for float32).
        IEEE comparison: NaN makes it false except for ne (true); -0 == +0.

        dst -- UB Tensor or ``t[i]`` start (32-byte aligned), uint8/16/32/64, with
            repeat_times*L/8 bytes; it may not overlap a block read.
        src0, src1 -- UB Tensors or ``t[i]`` starts (32-byte aligned), one dtype: float16,
            float32 (Ascend 310: float16). Lane l of repeat r is element ``start +
            r*rep_stride*B + (l//B)*blk_stride*B + l%B``, B = 32 / element bytes.
        repeat_times -- [1, 255]; a Scalar in [0, 255] at run time.
        src0_blk_stride, src1_blk_stride -- [0, 255], 32-byte blocks within a repeat.
        src0_rep_stride, src1_rep_stride -- [0, 255], 32-byte blocks between repeat starts.

        Raises ConstraintError (a range, dtype or target rule), AccessError (past a tensor's
        end), AlignmentError (a start not 32-byte aligned), OverlapError (dst overlapping a
        block that is read). Immediates are checked when recorded, Scalars when run. Source:
        CANN TIK API reference, vcmpv_le; TIK 2020 source ``tik_lib/tik_cmp_api_.py``
        (vcmpv_le) and its debugger ``debug/simd.py``,
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        self._vcmpv("vcmpv_le", dst, src0, src1, repeat_times,
                    [src0_blk_stride, src1_blk_stride],
                    [src0_rep_stride, src1_rep_stride])

    def vcmpv_ge(self, dst: Operand, src0: Operand, src1: Operand, repeat_times: IntArg,
                 src0_blk_stride: IntArg, src1_blk_stride: IntArg, src0_rep_stride: IntArg,
                 src1_rep_stride: IntArg) -> None:
        """``dst bit (r*L + l) = (src0[l] >= src1[l])`` for every lane l of every repeat r.

        No mask: every lane is compared. Bit i of a repeat's field is bit i%8 of byte i//8;
        repeat r's field starts r*L/8 bytes in (L = 128 lanes for float16, 64 for float32).
        IEEE comparison: NaN makes it false except for ne (true); -0 == +0.

        dst -- UB Tensor or ``t[i]`` start (32-byte aligned), uint8/16/32/64, with
            repeat_times*L/8 bytes; it may not overlap a block read.
        src0, src1 -- UB Tensors or ``t[i]`` starts (32-byte aligned), one dtype: float16,
            float32 (Ascend 310: float16). Lane l of repeat r is element ``start +
            r*rep_stride*B + (l//B)*blk_stride*B + l%B``, B = 32 / element bytes.
        repeat_times -- [1, 255]; a Scalar in [0, 255] at run time.
        src0_blk_stride, src1_blk_stride -- [0, 255], 32-byte blocks within a repeat.
        src0_rep_stride, src1_rep_stride -- [0, 255], 32-byte blocks between repeat starts.

        Raises ConstraintError (a range, dtype or target rule), AccessError (past a tensor's
        end), AlignmentError (a start not 32-byte aligned), OverlapError (dst overlapping a
        block that is read). Immediates are checked when recorded, Scalars when run. Source:
        CANN TIK API reference, vcmpv_ge; TIK 2020 source ``tik_lib/tik_cmp_api_.py``
        (vcmpv_ge) and its debugger ``debug/simd.py``,
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        self._vcmpv("vcmpv_ge", dst, src0, src1, repeat_times,
                    [src0_blk_stride, src1_blk_stride],
                    [src0_rep_stride, src1_rep_stride])

    def vec_cmpv_eq(self, dst: Operand, src0: Operand, src1: Operand, repeat_times: IntArg,
                    src0_rep_stride: IntArg, src1_rep_stride: IntArg) -> None:
        """``dst bit (r*L + l) = (src0[l] == src1[l])`` for every lane l of every repeat r.

        vcmpv_eq with contiguous blocks (block strides 1). Bit i of a repeat's field is bit
        i%8 of byte i//8; repeat r's field starts r*L/8 bytes in (L = 128 lanes for float16,
        64 for float32). IEEE comparison: NaN makes it false except for ne (true); -0 == +0.

        dst -- UB Tensor or ``t[i]`` start (32-byte aligned), uint8/16/32/64, with
            repeat_times*L/8 bytes; it may not overlap a block read.
        src0, src1 -- UB Tensors or ``t[i]`` starts (32-byte aligned), one dtype: float16,
            float32 (Ascend 310: float16). Lane l of repeat r is element ``start +
            r*rep_stride*B + l``, B = 32 / element bytes.
        repeat_times -- [1, 255]; a Scalar in [0, 255] at run time.
        src0_rep_stride, src1_rep_stride -- [0, 255], 32-byte blocks between repeat starts.

        Raises ConstraintError (a range, dtype or target rule), AccessError (past a tensor's
        end), AlignmentError (a start not 32-byte aligned), OverlapError (dst overlapping a
        block that is read). Immediates are checked when recorded, Scalars when run. Source:
        CANN TIK API reference, vec_cmpv_eq; TIK 2020 source ``api/tik_cmp_api.py``
        (vec_cmpv_eq) and its debugger ``debug/simd.py``,
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        self._vcmpv("vec_cmpv_eq", dst, src0, src1, repeat_times, [1, 1],
                    [src0_rep_stride, src1_rep_stride])

    def vec_cmpv_ne(self, dst: Operand, src0: Operand, src1: Operand, repeat_times: IntArg,
                    src0_rep_stride: IntArg, src1_rep_stride: IntArg) -> None:
        """``dst bit (r*L + l) = (src0[l] != src1[l])`` for every lane l of every repeat r.

        vcmpv_ne with contiguous blocks (block strides 1). Bit i of a repeat's field is bit
        i%8 of byte i//8; repeat r's field starts r*L/8 bytes in (L = 128 lanes for float16,
        64 for float32). IEEE comparison: NaN makes it false except for ne (true); -0 == +0.

        dst -- UB Tensor or ``t[i]`` start (32-byte aligned), uint8/16/32/64, with
            repeat_times*L/8 bytes; it may not overlap a block read.
        src0, src1 -- UB Tensors or ``t[i]`` starts (32-byte aligned), one dtype: float16,
            float32 (Ascend 310: float16). Lane l of repeat r is element ``start +
            r*rep_stride*B + l``, B = 32 / element bytes.
        repeat_times -- [1, 255]; a Scalar in [0, 255] at run time.
        src0_rep_stride, src1_rep_stride -- [0, 255], 32-byte blocks between repeat starts.

        Raises ConstraintError (a range, dtype or target rule), AccessError (past a tensor's
        end), AlignmentError (a start not 32-byte aligned), OverlapError (dst overlapping a
        block that is read). Immediates are checked when recorded, Scalars when run. Source:
        CANN TIK API reference, vec_cmpv_ne; TIK 2020 source ``api/tik_cmp_api.py``
        (vec_cmpv_ne) and its debugger ``debug/simd.py``,
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        self._vcmpv("vec_cmpv_ne", dst, src0, src1, repeat_times, [1, 1],
                    [src0_rep_stride, src1_rep_stride])

    def vec_cmpv_lt(self, dst: Operand, src0: Operand, src1: Operand, repeat_times: IntArg,
                    src0_rep_stride: IntArg, src1_rep_stride: IntArg) -> None:
        """``dst bit (r*L + l) = (src0[l] < src1[l])`` for every lane l of every repeat r.

        vcmpv_lt with contiguous blocks (block strides 1). Bit i of a repeat's field is bit
        i%8 of byte i//8; repeat r's field starts r*L/8 bytes in (L = 128 lanes for float16,
        64 for float32). IEEE comparison: NaN makes it false except for ne (true); -0 == +0.

        dst -- UB Tensor or ``t[i]`` start (32-byte aligned), uint8/16/32/64, with
            repeat_times*L/8 bytes; it may not overlap a block read.
        src0, src1 -- UB Tensors or ``t[i]`` starts (32-byte aligned), one dtype: float16,
            float32 (Ascend 310: float16). Lane l of repeat r is element ``start +
            r*rep_stride*B + l``, B = 32 / element bytes.
        repeat_times -- [1, 255]; a Scalar in [0, 255] at run time.
        src0_rep_stride, src1_rep_stride -- [0, 255], 32-byte blocks between repeat starts.

        Raises ConstraintError (a range, dtype or target rule), AccessError (past a tensor's
        end), AlignmentError (a start not 32-byte aligned), OverlapError (dst overlapping a
        block that is read). Immediates are checked when recorded, Scalars when run. Source:
        CANN TIK API reference, vec_cmpv_lt; TIK 2020 source ``api/tik_cmp_api.py``
        (vec_cmpv_lt) and its debugger ``debug/simd.py``,
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        self._vcmpv("vec_cmpv_lt", dst, src0, src1, repeat_times, [1, 1],
                    [src0_rep_stride, src1_rep_stride])

    def vec_cmpv_gt(self, dst: Operand, src0: Operand, src1: Operand, repeat_times: IntArg,
                    src0_rep_stride: IntArg, src1_rep_stride: IntArg) -> None:
        """``dst bit (r*L + l) = (src0[l] > src1[l])`` for every lane l of every repeat r.

        vcmpv_gt with contiguous blocks (block strides 1). Bit i of a repeat's field is bit
        i%8 of byte i//8; repeat r's field starts r*L/8 bytes in (L = 128 lanes for float16,
        64 for float32). IEEE comparison: NaN makes it false except for ne (true); -0 == +0.

        dst -- UB Tensor or ``t[i]`` start (32-byte aligned), uint8/16/32/64, with
            repeat_times*L/8 bytes; it may not overlap a block read.
        src0, src1 -- UB Tensors or ``t[i]`` starts (32-byte aligned), one dtype: float16,
            float32 (Ascend 310: float16). Lane l of repeat r is element ``start +
            r*rep_stride*B + l``, B = 32 / element bytes.
        repeat_times -- [1, 255]; a Scalar in [0, 255] at run time.
        src0_rep_stride, src1_rep_stride -- [0, 255], 32-byte blocks between repeat starts.

        Raises ConstraintError (a range, dtype or target rule), AccessError (past a tensor's
        end), AlignmentError (a start not 32-byte aligned), OverlapError (dst overlapping a
        block that is read). Immediates are checked when recorded, Scalars when run. Source:
        CANN TIK API reference, vec_cmpv_gt; TIK 2020 source ``api/tik_cmp_api.py``
        (vec_cmpv_gt) and its debugger ``debug/simd.py``,
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        self._vcmpv("vec_cmpv_gt", dst, src0, src1, repeat_times, [1, 1],
                    [src0_rep_stride, src1_rep_stride])

    def vec_cmpv_le(self, dst: Operand, src0: Operand, src1: Operand, repeat_times: IntArg,
                    src0_rep_stride: IntArg, src1_rep_stride: IntArg) -> None:
        """``dst bit (r*L + l) = (src0[l] <= src1[l])`` for every lane l of every repeat r.

        vcmpv_le with contiguous blocks (block strides 1). Bit i of a repeat's field is bit
        i%8 of byte i//8; repeat r's field starts r*L/8 bytes in (L = 128 lanes for float16,
        64 for float32). IEEE comparison: NaN makes it false except for ne (true); -0 == +0.

        dst -- UB Tensor or ``t[i]`` start (32-byte aligned), uint8/16/32/64, with
            repeat_times*L/8 bytes; it may not overlap a block read.
        src0, src1 -- UB Tensors or ``t[i]`` starts (32-byte aligned), one dtype: float16,
            float32 (Ascend 310: float16). Lane l of repeat r is element ``start +
            r*rep_stride*B + l``, B = 32 / element bytes.
        repeat_times -- [1, 255]; a Scalar in [0, 255] at run time.
        src0_rep_stride, src1_rep_stride -- [0, 255], 32-byte blocks between repeat starts.

        Raises ConstraintError (a range, dtype or target rule), AccessError (past a tensor's
        end), AlignmentError (a start not 32-byte aligned), OverlapError (dst overlapping a
        block that is read). Immediates are checked when recorded, Scalars when run. Source:
        CANN TIK API reference, vec_cmpv_le; TIK 2020 source ``api/tik_cmp_api.py``
        (vec_cmpv_le) and its debugger ``debug/simd.py``,
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        self._vcmpv("vec_cmpv_le", dst, src0, src1, repeat_times, [1, 1],
                    [src0_rep_stride, src1_rep_stride])

    def vec_cmpv_ge(self, dst: Operand, src0: Operand, src1: Operand, repeat_times: IntArg,
                    src0_rep_stride: IntArg, src1_rep_stride: IntArg) -> None:
        """``dst bit (r*L + l) = (src0[l] >= src1[l])`` for every lane l of every repeat r.

        vcmpv_ge with contiguous blocks (block strides 1). Bit i of a repeat's field is bit
        i%8 of byte i//8; repeat r's field starts r*L/8 bytes in (L = 128 lanes for float16,
        64 for float32). IEEE comparison: NaN makes it false except for ne (true); -0 == +0.

        dst -- UB Tensor or ``t[i]`` start (32-byte aligned), uint8/16/32/64, with
            repeat_times*L/8 bytes; it may not overlap a block read.
        src0, src1 -- UB Tensors or ``t[i]`` starts (32-byte aligned), one dtype: float16,
            float32 (Ascend 310: float16). Lane l of repeat r is element ``start +
            r*rep_stride*B + l``, B = 32 / element bytes.
        repeat_times -- [1, 255]; a Scalar in [0, 255] at run time.
        src0_rep_stride, src1_rep_stride -- [0, 255], 32-byte blocks between repeat starts.

        Raises ConstraintError (a range, dtype or target rule), AccessError (past a tensor's
        end), AlignmentError (a start not 32-byte aligned), OverlapError (dst overlapping a
        block that is read). Immediates are checked when recorded, Scalars when run. Source:
        CANN TIK API reference, vec_cmpv_ge; TIK 2020 source ``api/tik_cmp_api.py``
        (vec_cmpv_ge) and its debugger ``debug/simd.py``,
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        self._vcmpv("vec_cmpv_ge", dst, src0, src1, repeat_times, [1, 1],
                    [src0_rep_stride, src1_rep_stride])

    def vcmpvs_eq(self, dst: Operand, src: Operand, scalar: RealArg, repeat_times: IntArg,
                  src_blk_stride: IntArg, src_rep_stride: IntArg) -> None:
        """``dst bit (r*L + l) = (src[l] == scalar)`` for every lane l of every repeat r.

        The scalar is converted to src's dtype first. Not on Ascend 310/910. Bit i of a
        repeat's field is bit i%8 of byte i//8; repeat r's field starts r*L/8 bytes in (L =
        128 lanes for float16, 64 for float32). IEEE comparison: NaN makes it false except
        for ne (true); -0 == +0.

        dst -- UB Tensor or ``t[i]`` start (32-byte aligned), uint8/16/32/64, with
            repeat_times*L/8 bytes.
        src -- UB Tensor or ``t[i]`` start (32-byte aligned), float16 or float32. Lane l of
            repeat r is element ``start + r*src_rep_stride*B + (l//B)*src_blk_stride*B +
            l%B``.
        scalar -- int/float immediate or Scalar/Expr.
        repeat_times -- [1, 255]; a Scalar in [0, 255] at run time.
        src_blk_stride -- [0, 65535], 32-byte blocks within a repeat.
        src_rep_stride -- [0, 255], 32-byte blocks between repeat starts.

        Raises ConstraintError (a range, dtype or target rule), AccessError (past a tensor's
        end), AlignmentError (a start not 32-byte aligned), OverlapError (dst overlapping a
        block that is read). Immediates are checked when recorded, Scalars when run. Source:
        CANN TIK API reference, vcmpvs_eq; TIK 2020 source ``tik_lib/tik_cmp_api_.py``
        (vcmpvs_eq) and its debugger ``debug/simd.py``,
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        self._vcmpvs("vcmpvs_eq", dst, src, scalar, repeat_times, src_blk_stride, src_rep_stride)

    def vcmpvs_ne(self, dst: Operand, src: Operand, scalar: RealArg, repeat_times: IntArg,
                  src_blk_stride: IntArg, src_rep_stride: IntArg) -> None:
        """``dst bit (r*L + l) = (src[l] != scalar)`` for every lane l of every repeat r.

        The scalar is converted to src's dtype first. Not on Ascend 310/910. Bit i of a
        repeat's field is bit i%8 of byte i//8; repeat r's field starts r*L/8 bytes in (L =
        128 lanes for float16, 64 for float32). IEEE comparison: NaN makes it false except
        for ne (true); -0 == +0.

        dst -- UB Tensor or ``t[i]`` start (32-byte aligned), uint8/16/32/64, with
            repeat_times*L/8 bytes.
        src -- UB Tensor or ``t[i]`` start (32-byte aligned), float16 or float32. Lane l of
            repeat r is element ``start + r*src_rep_stride*B + (l//B)*src_blk_stride*B +
            l%B``.
        scalar -- int/float immediate or Scalar/Expr.
        repeat_times -- [1, 255]; a Scalar in [0, 255] at run time.
        src_blk_stride -- [0, 65535], 32-byte blocks within a repeat.
        src_rep_stride -- [0, 255], 32-byte blocks between repeat starts.

        Raises ConstraintError (a range, dtype or target rule), AccessError (past a tensor's
        end), AlignmentError (a start not 32-byte aligned), OverlapError (dst overlapping a
        block that is read). Immediates are checked when recorded, Scalars when run. Source:
        CANN TIK API reference, vcmpvs_ne; TIK 2020 source ``tik_lib/tik_cmp_api_.py``
        (vcmpvs_ne) and its debugger ``debug/simd.py``,
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        self._vcmpvs("vcmpvs_ne", dst, src, scalar, repeat_times, src_blk_stride, src_rep_stride)

    def vcmpvs_lt(self, dst: Operand, src: Operand, scalar: RealArg, repeat_times: IntArg,
                  src_blk_stride: IntArg, src_rep_stride: IntArg) -> None:
        """``dst bit (r*L + l) = (src[l] < scalar)`` for every lane l of every repeat r.

        The scalar is converted to src's dtype first. Not on Ascend 310/910. Bit i of a
        repeat's field is bit i%8 of byte i//8; repeat r's field starts r*L/8 bytes in (L =
        128 lanes for float16, 64 for float32). IEEE comparison: NaN makes it false except
        for ne (true); -0 == +0.

        dst -- UB Tensor or ``t[i]`` start (32-byte aligned), uint8/16/32/64, with
            repeat_times*L/8 bytes.
        src -- UB Tensor or ``t[i]`` start (32-byte aligned), float16 or float32. Lane l of
            repeat r is element ``start + r*src_rep_stride*B + (l//B)*src_blk_stride*B +
            l%B``.
        scalar -- int/float immediate or Scalar/Expr.
        repeat_times -- [1, 255]; a Scalar in [0, 255] at run time.
        src_blk_stride -- [0, 65535], 32-byte blocks within a repeat.
        src_rep_stride -- [0, 255], 32-byte blocks between repeat starts.

        Raises ConstraintError (a range, dtype or target rule), AccessError (past a tensor's
        end), AlignmentError (a start not 32-byte aligned), OverlapError (dst overlapping a
        block that is read). Immediates are checked when recorded, Scalars when run. Source:
        CANN TIK API reference, vcmpvs_lt; TIK 2020 source ``tik_lib/tik_cmp_api_.py``
        (vcmpvs_lt) and its debugger ``debug/simd.py``,
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        self._vcmpvs("vcmpvs_lt", dst, src, scalar, repeat_times, src_blk_stride, src_rep_stride)

    def vcmpvs_gt(self, dst: Operand, src: Operand, scalar: RealArg, repeat_times: IntArg,
                  src_blk_stride: IntArg, src_rep_stride: IntArg) -> None:
        """``dst bit (r*L + l) = (src[l] > scalar)`` for every lane l of every repeat r.

        The scalar is converted to src's dtype first. Not on Ascend 310/910. Bit i of a
        repeat's field is bit i%8 of byte i//8; repeat r's field starts r*L/8 bytes in (L =
        128 lanes for float16, 64 for float32). IEEE comparison: NaN makes it false except
        for ne (true); -0 == +0.

        dst -- UB Tensor or ``t[i]`` start (32-byte aligned), uint8/16/32/64, with
            repeat_times*L/8 bytes.
        src -- UB Tensor or ``t[i]`` start (32-byte aligned), float16 or float32. Lane l of
            repeat r is element ``start + r*src_rep_stride*B + (l//B)*src_blk_stride*B +
            l%B``.
        scalar -- int/float immediate or Scalar/Expr.
        repeat_times -- [1, 255]; a Scalar in [0, 255] at run time.
        src_blk_stride -- [0, 65535], 32-byte blocks within a repeat.
        src_rep_stride -- [0, 255], 32-byte blocks between repeat starts.

        Raises ConstraintError (a range, dtype or target rule), AccessError (past a tensor's
        end), AlignmentError (a start not 32-byte aligned), OverlapError (dst overlapping a
        block that is read). Immediates are checked when recorded, Scalars when run. Source:
        CANN TIK API reference, vcmpvs_gt; TIK 2020 source ``tik_lib/tik_cmp_api_.py``
        (vcmpvs_gt) and its debugger ``debug/simd.py``,
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        self._vcmpvs("vcmpvs_gt", dst, src, scalar, repeat_times, src_blk_stride, src_rep_stride)

    def vcmpvs_le(self, dst: Operand, src: Operand, scalar: RealArg, repeat_times: IntArg,
                  src_blk_stride: IntArg, src_rep_stride: IntArg) -> None:
        """``dst bit (r*L + l) = (src[l] <= scalar)`` for every lane l of every repeat r.

        The scalar is converted to src's dtype first. Not on Ascend 310/910. Bit i of a
        repeat's field is bit i%8 of byte i//8; repeat r's field starts r*L/8 bytes in (L =
        128 lanes for float16, 64 for float32). IEEE comparison: NaN makes it false except
        for ne (true); -0 == +0.

        dst -- UB Tensor or ``t[i]`` start (32-byte aligned), uint8/16/32/64, with
            repeat_times*L/8 bytes.
        src -- UB Tensor or ``t[i]`` start (32-byte aligned), float16 or float32. Lane l of
            repeat r is element ``start + r*src_rep_stride*B + (l//B)*src_blk_stride*B +
            l%B``.
        scalar -- int/float immediate or Scalar/Expr.
        repeat_times -- [1, 255]; a Scalar in [0, 255] at run time.
        src_blk_stride -- [0, 65535], 32-byte blocks within a repeat.
        src_rep_stride -- [0, 255], 32-byte blocks between repeat starts.

        Raises ConstraintError (a range, dtype or target rule), AccessError (past a tensor's
        end), AlignmentError (a start not 32-byte aligned), OverlapError (dst overlapping a
        block that is read). Immediates are checked when recorded, Scalars when run. Source:
        CANN TIK API reference, vcmpvs_le; TIK 2020 source ``tik_lib/tik_cmp_api_.py``
        (vcmpvs_le) and its debugger ``debug/simd.py``,
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        self._vcmpvs("vcmpvs_le", dst, src, scalar, repeat_times, src_blk_stride, src_rep_stride)

    def vcmpvs_ge(self, dst: Operand, src: Operand, scalar: RealArg, repeat_times: IntArg,
                  src_blk_stride: IntArg, src_rep_stride: IntArg) -> None:
        """``dst bit (r*L + l) = (src[l] >= scalar)`` for every lane l of every repeat r.

        The scalar is converted to src's dtype first. Not on Ascend 310/910. Bit i of a
        repeat's field is bit i%8 of byte i//8; repeat r's field starts r*L/8 bytes in (L =
        128 lanes for float16, 64 for float32). IEEE comparison: NaN makes it false except
        for ne (true); -0 == +0.

        dst -- UB Tensor or ``t[i]`` start (32-byte aligned), uint8/16/32/64, with
            repeat_times*L/8 bytes.
        src -- UB Tensor or ``t[i]`` start (32-byte aligned), float16 or float32. Lane l of
            repeat r is element ``start + r*src_rep_stride*B + (l//B)*src_blk_stride*B +
            l%B``.
        scalar -- int/float immediate or Scalar/Expr.
        repeat_times -- [1, 255]; a Scalar in [0, 255] at run time.
        src_blk_stride -- [0, 65535], 32-byte blocks within a repeat.
        src_rep_stride -- [0, 255], 32-byte blocks between repeat starts.

        Raises ConstraintError (a range, dtype or target rule), AccessError (past a tensor's
        end), AlignmentError (a start not 32-byte aligned), OverlapError (dst overlapping a
        block that is read). Immediates are checked when recorded, Scalars when run. Source:
        CANN TIK API reference, vcmpvs_ge; TIK 2020 source ``tik_lib/tik_cmp_api_.py``
        (vcmpvs_ge) and its debugger ``debug/simd.py``,
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        self._vcmpvs("vcmpvs_ge", dst, src, scalar, repeat_times, src_blk_stride, src_rep_stride)
