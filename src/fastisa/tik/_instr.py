"""TIK instructions: validation at record time, one walker call at run time.

Every vector instruction is a row of :data:`VECTOR_OPS` (name -> op code and family);
all of them go through :class:`_Vector`, which validates its arguments (immediates when
recorded, Scalars/Exprs when run), then calls the ONE C walker
(``csrc/fastisa/walker.h``) with the instruction as data.  ``data_move`` is one call of
the DMA kernel.  Engine cycles recorded into :mod:`fastisa.cost` are ESTIMATES (the spec
gives no TIK timing): Vector = ``VECTOR_ISSUE_CYCLES + repeats``; MTE =
``MTE_ISSUE_CYCLES + 32-byte blocks moved``.
"""

from __future__ import annotations

from . import _program as P
from ._base import MTE_ISSUE_CYCLES, VECTOR_ISSUE_CYCLES, _reduce_stride_unit
from ._datamove import _DataMove
from ._reduce import _Reduce
from ._vector import ADD, MAX, MIN, VECTOR_OPS, _Vector

__all__ = ["Tik", "VECTOR_OPS", "VECTOR_ISSUE_CYCLES", "MTE_ISSUE_CYCLES"]


_COMMON = """

    Parameters (the TIK source and its CPU debugger (github.com/jizhuoran/caffe-huawei-atlas-convertor, convertor/huawei/te/tik/); the TIK docs, Vector-Scalar Instructions: General Definition (Ascend TIK API reference, hiascend.com) for the vector-scalar template):
    mask -- int in [1, lanes] (lanes 0..mask-1), ``[mask_h, mask_l]`` (bit i of mask_l =
        lane i, of mask_h = lane 64+i; mask_h must be 0 for 32-bit types; not [0, 0]), or
        with ``mask_mode="counter"`` (targets with counter mode) the element count in
        [1, 2**32-1].  lanes = 256 bytes / the largest element size.
    dst, src, src0, src1 -- UB Tensors or ``t[i]`` start elements (32-byte aligned).
        Lane i of repeat r of X is element ``start + r*rep_stride*B + (i//B)*blk_stride*B
        + i%B``, B = 32 / element size.
    repeat_times -- [1, 255] immediate, or a Scalar/Expr in [0, 255] (0: nothing).
    *_blk_stride -- legacy forms only, 32-byte blocks ([0, 65535]; two-tensor [0, 255]).
    *_rep_stride -- 32-byte blocks, [0, 255].
    stride_unit -- legacy forms only.  Ignored on Ascend 310/910 (TIK forces it to 0);
        elsewhere an int in [0, 3]: 0 as above; 1 makes rep_stride the gap in blocks
        after a repeat's last block (repeat r starts ``r*(7*blk_stride + 1 +
        rep_stride)`` blocks in); 2 and 3 (element units) raise NotImplementedError.

    Repeats run in order; masked-off lanes keep their contents.  Raises ConstraintError
    (ranges, dtypes, target), AccessError (past a tensor's end), AlignmentError (UB start
    not 32-byte aligned), OverlapError (the TIK docs, Vector-Scalar Instructions: General Definition (Ascend TIK API reference, hiascend.com)'s overlap rules).  Immediates are checked
    when recorded, Scalars/Exprs when run.
"""


class Tik(P.Tik):
    __doc__ = P.Tik.__doc__

    # ---- internal -------------------------------------------------------------------
    def _vec(self, name, mask, dst, srcs, scalar, repeat_times, blks, reps, mask_mode="normal",
             round_mode="", stride_unit=0):
        op, fam = VECTOR_OPS[name]
        self._record(_Vector(self, name, op, fam, mask, dst, srcs, scalar, repeat_times, blks,
                             reps, mask_mode, round_mode, stride_unit))

    # ---- vector-scalar (the TIK docs, Vector-Scalar Instructions: General Definition (Ascend TIK API reference, hiascend.com)) -----------------------------------------------------
    def vec_adds(self, mask, dst, src, scalar, repeat_times, dst_rep_stride, src_rep_stride,
                 mask_mode="normal"):
        """dst[lane] = src[lane] + scalar for every active lane of every repeat (the TIK docs, Vector-Scalar Instructions: General Definition (Ascend TIK API reference, hiascend.com)).

        mask: int (contiguous, [1, lanes]), [mask_h, mask_l] (bitwise) or, with
        ``mask_mode="counter"``, the element count in [1, 2**32-1].  dst/src: UB tensors
        (or ``t[i]`` start elements, 32-byte aligned) of one dtype; lanes per repeat =
        256 bytes / element size.  scalar: immediate or Scalar, converted to src's dtype
        first (RNE for floats, truncation for ints).  repeat_times: [1, 255] immediate
        (a runtime 0 does nothing).  *_rep_stride: [0, 255], 32-byte blocks.  Raises
        ConstraintError, AccessError, AlignmentError, OverlapError.
        """
        self._vec("vec_adds", mask, dst, [src], scalar, repeat_times, [1, 1],
                  [dst_rep_stride, src_rep_stride], mask_mode)

    def vec_muls(self, mask, dst, src, scalar, repeat_times, dst_rep_stride, src_rep_stride,
                 mask_mode="normal"):
        """dst = src * scalar per active lane (the TIK docs, Vector-Scalar Instructions: General Definition (Ascend TIK API reference, hiascend.com) template)."""
        self._vec("vec_muls", mask, dst, [src], scalar, repeat_times, [1, 1],
                  [dst_rep_stride, src_rep_stride], mask_mode)

    def vec_axpy(self, mask, dst, src, scalar, repeat_times, dst_rep_stride, src_rep_stride):
        """dst = src * scalar + dst (float32 product and sum, rounded once to dst; not
        fused).  fp16, fp32, and fmix: fp16 src/scalar with fp32 dst, 64 lanes."""
        self._vec("vec_axpy", mask, dst, [src], scalar, repeat_times, [1, 1],
                  [dst_rep_stride, src_rep_stride])

    def _legacy_vs(name):
        def f(self, mask, dst, src, scalar, repeat_times, dst_blk_stride, src_blk_stride,
              dst_rep_stride, src_rep_stride, stride_unit=0, round_en=False,
              mask_mode="normal"):
            self._vec(name, mask, dst, [src], scalar, repeat_times,
                      [dst_blk_stride, src_blk_stride], [dst_rep_stride, src_rep_stride],
                      mask_mode, stride_unit=stride_unit)
        f.__name__ = name
        f.__doc__ = (f"Legacy ``{name}``: dst = {name[1:-1]}(src, scalar) per active lane, with "
                     f"block strides; the scalar is converted to src's dtype first." + _COMMON)
        return f

    vadds = _legacy_vs("vadds")
    vmuls = _legacy_vs("vmuls")
    vmaxs = _legacy_vs("vmaxs")
    vmins = _legacy_vs("vmins")

    def vaxpy(self, mask, dst, src, scalar, repeat_times, dst_blk_stride, src_blk_stride,
              dst_rep_stride, src_rep_stride, stride_unit=0):
        """Legacy vec_axpy with block strides."""
        self._vec("vaxpy", mask, dst, [src], scalar, repeat_times,
                  [dst_blk_stride, src_blk_stride], [dst_rep_stride, src_rep_stride],
                  stride_unit=stride_unit)

    # ---- single-source ----------------------------------------------------------------
    def _unary(name, formula):
        def f(self, mask, dst, src, repeat_times, dst_rep_stride, src_rep_stride):
            self._vec(name, mask, dst, [src], None, repeat_times, [1, 1],
                      [dst_rep_stride, src_rep_stride])
        f.__name__ = name
        f.__doc__ = (f"dst = {formula} per active lane of every repeat." + _COMMON)
        return f

    vec_abs = _unary("vec_abs", "|src|")
    vec_exp = _unary("vec_exp", "exp(src) (float64, rounded once; hardware approximates)")
    vec_ln = _unary("vec_ln", "ln(src) (float64, rounded once; hardware approximates)")
    vec_rec = _unary("vec_rec", "1/src (float64, rounded once; hardware approximates)")
    vec_relu = _unary("vec_relu", "max(src, 0) (NaN -> 0)")
    vec_rsqrt = _unary("vec_rsqrt", "1/sqrt(src) (float64, rounded once)")
    vec_sqrt = _unary("vec_sqrt", "sqrt(src) (float64, rounded once)")
    vec_not = _unary("vec_not", "~src (bitwise)")

    def _legacy_un(name):
        def f(self, mask, dst, src, repeat_times, dst_blk_stride, src_blk_stride,
              dst_rep_stride, src_rep_stride, stride_unit=0):
            self._vec(name, mask, dst, [src], None, repeat_times,
                      [dst_blk_stride, src_blk_stride], [dst_rep_stride, src_rep_stride],
                      stride_unit=stride_unit)
        f.__name__ = name
        f.__doc__ = f"Legacy ``{name}``: the vec_ form with block strides." + _COMMON
        return f

    vabs = _legacy_un("vabs")
    vexp = _legacy_un("vexp")
    vln = _legacy_un("vln")
    vrec = _legacy_un("vrec")
    vrelu = _legacy_un("vrelu")
    vrsqrt = _legacy_un("vrsqrt")
    vsqrt = _legacy_un("vsqrt")
    vnot = _legacy_un("vnot")

    # ---- two-tensor -------------------------------------------------------------------
    def _binary(name, formula):
        def f(self, mask, dst, src0, src1, repeat_times, dst_rep_stride, src0_rep_stride,
              src1_rep_stride):
            self._vec(name, mask, dst, [src0, src1], None, repeat_times, [1, 1, 1],
                      [dst_rep_stride, src0_rep_stride, src1_rep_stride])
        f.__name__ = name
        f.__doc__ = (f"dst = {formula} per active lane (float16 via float32, rounded once); "
                     f"dst may be src1 with dst/src1 rep strides 0 (accumulate idiom)."
                     + _COMMON)
        return f

    vec_add = _binary("vec_add", "src0 + src1")
    vec_sub = _binary("vec_sub", "src0 - src1")
    vec_mul = _binary("vec_mul", "src0 * src1")
    vec_div = _binary("vec_div", "src0 / src1")
    vec_max = _binary("vec_max", "max(src0, src1)")
    vec_min = _binary("vec_min", "min(src0, src1)")
    vec_and = _binary("vec_and", "src0 & src1")
    vec_or = _binary("vec_or", "src0 | src1")

    def _legacy_bin(name):
        def f(self, mask, dst, src0, src1, repeat_times, dst_blk_stride, src0_blk_stride,
              src1_blk_stride, dst_rep_stride, src0_rep_stride, src1_rep_stride,
              stride_unit=0):
            self._vec(name, mask, dst, [src0, src1], None, repeat_times,
                      [dst_blk_stride, src0_blk_stride, src1_blk_stride],
                      [dst_rep_stride, src0_rep_stride, src1_rep_stride],
                      stride_unit=stride_unit)
        f.__name__ = name
        f.__doc__ = f"Legacy ``{name}``: the vec_ form with block strides." + _COMMON
        return f

    vadd = _legacy_bin("vadd")
    vsub = _legacy_bin("vsub")
    vmul = _legacy_bin("vmul")
    vdiv = _legacy_bin("vdiv")
    vmax = _legacy_bin("vmax")
    vmin = _legacy_bin("vmin")
    vand = _legacy_bin("vand")
    vor = _legacy_bin("vor")

    # ---- fill ------------------------------------------------------------------------
    def vec_dup(self, mask, dst, scalar, repeat_times, dst_rep_stride):
        """dst = scalar (converted to dst's dtype) per active lane."""
        self._vec("vec_dup", mask, dst, [], scalar, repeat_times, [1], [dst_rep_stride])

    def vector_dup(self, mask, dst, scalar, repeat_times, dst_blk_stride, dst_rep_stride,
                   stride_unit=0):
        """Legacy vec_dup with a block stride ([0, 65535])."""
        self._vec("vector_dup", mask, dst, [], scalar, repeat_times, [dst_blk_stride],
                  [dst_rep_stride], stride_unit=stride_unit)

    # ---- conversion --------------------------------------------------------------------
    def vec_conv(self, mask, round_mode, dst, src, repeat_times, dst_rep_stride,
                 src_rep_stride, deqscale=None, ldst_high_half=False):
        """dst = convert(src) with ``round_mode`` ('' / 'none' = RNE, 'round', 'floor',
        'ceil', 'away-zero', 'to-zero', 'odd'); float -> int saturates, NaN -> 0.
        Lanes = 256 / the larger element size."""
        if deqscale is not None or ldst_high_half:
            raise NotImplementedError("vec_conv: deqscale / ldst_high_half conversions are "
                                      "not implemented")
        self._vec("vec_conv", mask, dst, [src], None, repeat_times, [1, 1],
                  [dst_rep_stride, src_rep_stride], round_mode=round_mode)

    def vconv(self, mask, round_mode, dst, src, repeat_times, dst_blk_stride, src_blk_stride,
              dst_rep_stride, src_rep_stride, deqscale=None, ldst_high_half=False,
              stride_unit=0):
        """Legacy vec_conv with block strides."""
        if deqscale is not None or ldst_high_half:
            raise NotImplementedError("vconv: deqscale / ldst_high_half conversions are not "
                                      "implemented")
        self._vec("vconv", mask, dst, [src], None, repeat_times,
                  [dst_blk_stride, src_blk_stride], [dst_rep_stride, src_rep_stride],
                  round_mode=round_mode, stride_unit=stride_unit)

    # ---- reductions ----------------------------------------------------------------
    def vcadd(self, mask, dst, src, repeat_times, dst_rep_stride, src_blk_stride,
              src_rep_stride, stride_unit=0):
        """dst[r*dst_rep_stride] = sum of src's active lanes in repeat r (float64 sum,
        rounded once; exact for float16).  dst_rep_stride counts dst ELEMENTS."""
        _reduce_stride_unit("vcadd", self.target, stride_unit)
        self._record(_Reduce(self, "vcadd", ADD, mask, dst, src, repeat_times, dst_rep_stride,
                             src_blk_stride, src_rep_stride, whole=False))

    def vcmax(self, mask, dst, src, repeat_times, dst_rep_stride, src_blk_stride,
              src_rep_stride, stride_unit=0):
        """Per repeat r: ``dst[2*r*dst_rep_stride] = max`` of src's active lanes in repeat
        r and ``dst[2*r*dst_rep_stride + 1] = i``, the lane number (0..lanes-1 within the
        repeat) of that element, stored as the bit pattern of an unsigned integer of the
        element's width (uint16 for float16, uint32 for float32; read it with
        ``reinterpret_cast_to``/``.view``).  dtypes float16, float32 (dst == src dtype).

        dst_rep_stride counts [value, index] PAIRS (2 elements), as the dst extent
        ``repeat_times*dst_rep_stride*2*sizeof`` of TIK's _vector_whole_reduce_func;
        0 makes every repeat write the same pair (the last repeat's stays).  The value is
        the winning element's bits unchanged (no rounding, no saturation).  Ties (and
        -0 == +0): the lowest lane wins (first occurrence, as vec_reduce_max's
        cal_index documents).  NaN: the first NaN lane wins (NaN propagates, as in
        vec_reduce_max).  TIK's index_low (index before value) and max_cnt_index
        options and counter mode are not supported (as for vcadd).  dst must hold
        ``2*((repeat_times-1)*dst_rep_stride + 1)`` elements from its start."""
        _reduce_stride_unit("vcmax", self.target, stride_unit)
        self._record(_Reduce(self, "vcmax", MAX, mask, dst, src, repeat_times, dst_rep_stride,
                             src_blk_stride, src_rep_stride, whole=False, pair=True))

    def vcmin(self, mask, dst, src, repeat_times, dst_rep_stride, src_blk_stride,
              src_rep_stride, stride_unit=0):
        """As vcmax with the minimum: per repeat r, ``dst[2*r*dst_rep_stride] = min`` of
        src's active lanes and ``dst[2*r*dst_rep_stride + 1]`` = its lane number (uint16 /
        uint32 bit pattern); ties and -0/+0: lowest lane; NaN: first NaN lane wins;
        dst_rep_stride counts pairs."""
        _reduce_stride_unit("vcmin", self.target, stride_unit)
        self._record(_Reduce(self, "vcmin", MIN, mask, dst, src, repeat_times, dst_rep_stride,
                             src_blk_stride, src_rep_stride, whole=False, pair=True))

    def _reduce_whole(self, name, op, mask, dst, src, work_tensor, repeat_times,
                      src_rep_stride, cal_index=False):
        if cal_index:
            raise NotImplementedError(f"{name}: cal_index=True is not implemented")
        self._record(_Reduce(self, name, op, mask, dst, src, repeat_times, 0, 1,
                             src_rep_stride, whole=True, work=work_tensor))

    def vec_reduce_add(self, mask, dst, src, work_tensor, repeat_times, src_rep_stride):
        """dst[0] = sum over every active lane of every repeat: each repeat's sum is
        rounded to the dtype, then those are summed PAR at a time (vcadd rounds)."""
        self._reduce_whole("vec_reduce_add", ADD, mask, dst, src, work_tensor, repeat_times,
                           src_rep_stride)

    def vec_reduce_max(self, mask, dst, src, work_tensor, repeat_times, src_rep_stride,
                       cal_index=False):
        """dst[0] = max over every active lane of every repeat (NaN propagates)."""
        self._reduce_whole("vec_reduce_max", MAX, mask, dst, src, work_tensor, repeat_times,
                           src_rep_stride, cal_index)

    def vec_reduce_min(self, mask, dst, src, work_tensor, repeat_times, src_rep_stride,
                       cal_index=False):
        """dst[0] = min over every active lane of every repeat (NaN propagates)."""
        self._reduce_whole("vec_reduce_min", MIN, mask, dst, src, work_tensor, repeat_times,
                           src_rep_stride, cal_index)

    # ---- data movement --------------------------------------------------------------
    def data_move(self, dst, src, sid, nburst, burst, src_stride, dst_stride, *args, **kwargs):
        """Copy ``nburst`` bursts of ``burst`` 32-byte blocks: burst k from
        ``src + k*(burst+src_stride)*32`` to ``dst + k*(burst+dst_stride)*32`` bytes
        (strides are tail-to-head gaps in 32-byte blocks).  Paths GM->UB, UB->GM, UB->UB,
        GM->L1, L1->UB (L1->GM on A2/A3).  sid [0, 15], nburst [1, 4095], burst
        [1, 65535], strides [0, 65535].  UB/L1 addresses 32-byte aligned; a tensor may be
        accessed up to its size rounded up to 32 bytes.  Raises ConstraintError,
        AccessError, AlignmentError."""
        self._record(_DataMove(self, dst, src, sid, nburst, burst, src_stride, dst_stride))

    for _f in (vec_muls, vec_axpy, vaxpy, vec_dup, vector_dup, vec_conv, vconv, vcadd, vcmax,
               vcmin,
               vec_reduce_add, vec_reduce_max, vec_reduce_min):
        _f.__doc__ = (_f.__doc__ or "") + _COMMON
    del _legacy_vs, _unary, _legacy_un, _binary, _legacy_bin, _f