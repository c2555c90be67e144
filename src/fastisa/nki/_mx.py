"""NKI microscaling instructions (SDK 2.33, NeuronCore-v4): ``quantize_mx``, ``nc_matmul_mx``.

OCP MX v1.0 rules: a scaling group is 32 values -- 8 partitions x 4 consecutive free
elements (the 4 elements one x4 container holds) -- sharing one float8_e8m0fnu scale
byte s = 2^(s - 127) (255 = NaN).  Containers: ``float8_e5m2_x4`` / ``float8_e4m3fn_x4``
hold four fp8 codes in a little-endian uint32 (element i in byte i), ``float4_e2m1fn_x4``
four fp4 codes in a uint16 (element i in bits 4i..4i+3) -- the packing of the SDK's
``mx_cpu_utils.py`` (``pack_mx_data_into_x4``).

Scale tile layout (nki/deep-dives/mxfp-matmul.rst, "Scale Tensor"; ``mx_cpu_utils.py``
``get_p_contiguous_scale``): the scale of partition group g (partitions 8g .. 8g+7 of the
data) and container column j lives at row ``32 * (g // 4) + g % 4``, column j, of the
scale view -- in the quadrant its data came from.  A data tile of P <= 32 partitions needs
a scale view of P/8 rows, a larger one a view of P rows; a view may start 0, 4, 8 or 12
partitions into its quadrant (packing up to four scale sets in one tile).

The quantisation follows the quantize_mx docstring ("Scale calculation"), which
deliberately differs from ``mx_cpu_utils.quantize_mx_golden``: the block scale is
``2^(floor(log2(amax)) - (Emax - 1))``, two times the golden's (and OCP's sample
algorithm's) ``2^(floor(log2(amax)) - Emax)``; fastisa follows the instruction's
documentation.  Kernels: ``csrc/fastisa/mx.h`` (quantise; dequantise), then the float32
matmul kernel of ``csrc/fastisa/nki_matmul.h`` over the 4K contraction rows.

=============  ========  ===================================================
instruction    engine    cycles
=============  ========  ===================================================
quantize_mx    Vector    ``max(MIN_II, N)``, N = src elements per partition
nc_matmul_mx   Tensor    ``max(min(64, M), N)`` (fastisa's estimate: 4x the
                         contraction of a bf16 matmul in the same time)
=============  ========  ===================================================
"""

from __future__ import annotations

import numpy as np

from .. import cost as _cost
from .. import dtypes as _dt
from ..errors import ConstraintError
from . import _compute as _c
from . import _pe
from ._move import start_partition
from .tensor import NkiTensor, PSUM_GROUP

import typing as _typing

if _typing.TYPE_CHECKING:
    from collections.abc import Sequence

    from .._types import Int

__all__ = ["quantize_mx", "nc_matmul_mx"]

MIN_II = _cost.MIN_II
_X4_FP8 = {"float8_e5m2_x4": "float8_e5m2", "float8_e4m3fn_x4": "float8_e4m3fn"}
_X4_ALL = dict(_X4_FP8, float4_e2m1fn_x4="float4_e2m1fn")
_SCALE_DTYPES = ("float8_e8m0fnu", "uint8")


def _k():
    from fastisa._kernels import mx
    return mx


def _need_v4(instr):
    t = _c._target()
    if t != "trn3":
        raise ConstraintError(f"{instr}: available only on NeuronCore-v4 (target trn3), got "
                              f"target {t} (use nl.use_target('trn3'))")


def scale_rows(P: int) -> np.ndarray:
    """Row of the scale view holding partition group g's scales, for g = 0 .. P/8 - 1."""
    g = np.arange(P // 8)
    return 32 * (g // 4) + g % 4


def _scale_view(instr, param, t, P, cols):
    _c._tensor(instr, param, t)
    _c._onchip(instr, param, t, allow_psum=False)
    if t.dtype.name not in _SCALE_DTYPES:
        raise ConstraintError(f"{instr}: {param} dtype must be float8_e8m0fnu or uint8, got "
                              f"{t.dtype.name}")
    need = int(scale_rows(P)[-1]) + 1 if P >= 8 else 1
    if t.partitions < need:
        raise ConstraintError(f"{instr}: {param} must have at least {need} partitions for "
                              f"{P}-partition data (scales sit in rows 0-3 of each of their "
                              f"data's quadrants), got {t.partitions}")
    if t.free_size < cols:
        raise ConstraintError(f"{instr}: {param} must have at least {cols} elements per "
                              f"partition, got {t.free_size}")
    off = start_partition(t) % 32
    if off not in (0, 4, 8, 12):
        raise ConstraintError(f"{instr}: {param} must start 0, 4, 8 or 12 partitions into its "
                              f"quadrant, got {off}")
    return t.data.reshape(t.partitions, t.free_size).view(np.uint8)


def quantize_mx(dst: NkiTensor, src: NkiTensor, dst_scale: NkiTensor,
                name: str | None = None) -> None:
    """Quantise bf16 / fp16 ``src`` to MXFP8: fp8 data in x4 containers plus e8m0 scales.

    For each group of 8 partitions x 4 consecutive elements (one x4 column of 8
    partitions): ``amax = max |x|``, ``s = floor(log2(amax)) - (Emax - 1) + 127`` clamped to
    [0, 254] (Emax = 15 for e5m2, 8 for e4m3fn; an all-zero group gives s = 0, i.e.
    2^-127), each element ``RNE(x / 2^(s - 127))`` in the fp8 format (never saturates with
    this scale); a group holding Inf / NaN gets s = 255 (NaN) and NaN elements (fastisa's
    choice; the docs are silent).  Element e of container ``dst[p, j]`` is the code of
    ``src[p, 4j + e]``; the group's scale byte goes to ``dst_scale`` row
    ``32 * (g // 4) + g % 4`` (g = p // 8), column j; other rows are untouched.

    Parameters
    ----------
    dst : NkiTensor float8_e5m2_x4 or float8_e4m3fn_x4 in SBUF, [P, F/4].
    src : NkiTensor bfloat16 or float16 in SBUF, [P, F]; P a multiple of 32, <= 128; F a
        multiple of 4 (free dims flattened).
    dst_scale : NkiTensor float8_e8m0fnu or uint8 in SBUF covering row
        ``32 * (P/8 - 1) // 4 + 3`` (P/8 rows for P <= 32; 100 for P = 128, so a [P, F/4]
        allocation or its slice from partition 4, 8 or 12 fits) and F/4 elements per
        partition; starting 0, 4, 8 or 12 partitions into a quadrant.

    Raises
    ------
    ConstraintError : a rule above is broken, or the target is not trn3 (NeuronCore-v4).

    Cost: Vector ``max(MIN_II, F)``.  Source: aws-neuron-sdk ``nki/api/nki/isa/__init__.py``,
    ``quantize_mx``; ``nki/deep-dives/mxfp-matmul.rst``.
    """
    instr = "quantize_mx"
    for pname, t in (("dst", dst), ("src", src)):
        _c._tensor(instr, pname, t)
        _c._onchip(instr, pname, t, allow_psum=False)
    _need_v4(instr)
    if src.dtype.name not in ("bfloat16", "float16"):
        raise ConstraintError(f"{instr}: src dtype must be bfloat16 or float16, got "
                              f"{src.dtype.name}")
    if dst.dtype.name not in _X4_FP8:
        raise ConstraintError(f"{instr}: dst dtype must be float8_e5m2_x4 or float8_e4m3fn_x4, "
                              f"got {dst.dtype.name}")
    P, F = src.partitions, src.free_size
    if P % 32:
        raise ConstraintError(f"{instr}: src partition dimension must be a multiple of 32, got "
                              f"{P}")
    if F % 4:
        raise ConstraintError(f"{instr}: src elements per partition must be a multiple of 4, "
                              f"got {F}")
    if dst.partitions != P or dst.free_size != F // 4:
        raise ConstraintError(f"{instr}: dst must have shape [{P}, {F // 4}] (src's free size "
                              f"/ 4 x4 containers), got {dst.shape}")
    sc = _scale_view(instr, "dst_scale", dst_scale, P, F // 4)
    codes = np.empty((P, F), np.uint8)
    scales = np.empty((P // 8, F // 4), np.uint8)
    s16 = _c._rows(src).view(np.uint16)
    _k().quantize(s16, int(src.dtype.name == "bfloat16"),
                  _dt.lookup(_X4_FP8[dst.dtype.name]).code, codes, scales)
    packed = codes.reshape(P, F // 4, 4).view("<u4").reshape(P, F // 4)
    dst.data[...] = packed.reshape(dst.shape)
    sc[scale_rows(P), :F // 4] = scales
    _cost.record("Vector", instr, max(MIN_II, F))


def _tile_args(instr, tile_position, tile_size, K):
    if tile_position is None and tile_size is None:
        return
    try:
        pos = tuple(int(v) for v in (tile_position or ()))
        size = tuple(int(v) for v in (tile_size or ()))
    except (TypeError, ValueError):
        raise ConstraintError(f"{instr}: tile_position and tile_size must be pairs of ints, got "
                              f"{tile_position!r} and {tile_size!r}") from None
    if len(pos) != 2 or len(size) != 2:
        raise ConstraintError(f"{instr}: tile_position and tile_size must both be set, as "
                              f"(row, column) pairs, got {tile_position!r} and {tile_size!r}")
    if size[1] != 128 or pos[1] != 0:
        raise ConstraintError(f"{instr}: only row tiling: column_size must be 128 and "
                              f"start_column 0, got tile_size {size} and tile_position {pos}")
    if size[0] not in (32, 64, 128) or pos[0] % size[0] or not 0 <= pos[0] < 128:
        raise ConstraintError(f"{instr}: row_size must be 32, 64 or 128 and start_row a "
                              f"multiple of it below 128, got {size[0]} and {pos[0]}")
    if K > size[0]:
        raise ConstraintError(f"{instr}: the partition size {K} must not exceed row_size "
                              f"{size[0]}")


def nc_matmul_mx(dst: NkiTensor, stationary: NkiTensor, moving: NkiTensor,
                 stationary_scale: NkiTensor, moving_scale: NkiTensor,
                 tile_position: Sequence[Int] | None = None,
                 tile_size: Sequence[Int] | None = None, accumulate: bool | None = None,
                 name: str | None = None) -> None:
    """``dst = deq(stationary).T @ deq(moving)`` over the 4K contraction rows (Tensor engine).

    ``deq(x)[4k + q, j] = element q of x[k, j] * 2^(s - 127)``, s the scale of group
    (k // 8, j) read from row ``32 * (g // 4) + g % 4`` of the scale view (s = 255: NaN);
    exact in float32 unless it overflows.  Products are float32, summed in float32 in
    contraction order 4k + q onto the starting value that nc_matmul's accumulate rule gives
    (accumulate False / True / None, PSUM accumulation groups), and rounded once to
    dst.dtype -- the einsum of ``mx_cpu_utils.nc_matmul_mx_golden`` in a fixed order.

    Parameters
    ----------
    dst : NkiTensor [M, N] float32 or bfloat16 in PSUM.
    stationary : NkiTensor [K, M] float8_e5m2_x4 / float8_e4m3fn_x4 / float4_e2m1fn_x4 in
        SBUF; K a multiple of 32, <= 128; M even, <= 128.
    moving : NkiTensor [K, N] of those dtypes in SBUF; N <= 4096 (float32 dst) or 8192
        (bfloat16 dst).
    stationary_scale, moving_scale : NkiTensor float8_e8m0fnu or uint8 in SBUF, the quantize_mx
        layout, at least M / N elements per partition (extra columns are ignored).
    tile_position, tile_size : both None, or (start_row, 0) and (row_size, 128) with
        row_size 32 / 64 / 128 (row tiling only); they do not change results.
    accumulate : as nc_matmul.

    Raises
    ------
    ConstraintError : a rule above is broken, or the target is not trn3 (NeuronCore-v4).

    Cost: Tensor ``max(min(64, M), N)`` (fastisa's estimate).  Source: aws-neuron-sdk
    ``nki/api/nki/isa/__init__.py``, ``nc_matmul_mx``; ``nki/deep-dives/mxfp-matmul.rst``.
    """
    instr = "nc_matmul_mx"
    K, M, N = _pe.matmul_operands(
        instr, dst, stationary, moving, _X4_ALL, after_rank=_need_v4,
        dtype_rule="float8_e5m2_x4, float8_e4m3fn_x4 or float4_e2m1fn_x4")
    if K % 32 or K > 128:
        raise ConstraintError(f"{instr}: the partition size must be a multiple of 32 and <= "
                              f"128, got {K}")
    if M % 2 or M > 128:
        raise ConstraintError(f"{instr}: stationary free size must be even and <= 128, got {M}")
    nmax = 4096 if dst.dtype.name == "float32" else 8192
    if N > nmax:
        raise ConstraintError(f"{instr}: moving free size must be <= {nmax} for a "
                              f"{dst.dtype.name} dst, got {N}")
    if dst.shape != (M, N):
        raise ConstraintError(f"{instr}: dst must have shape {(M, N)}, got {dst.shape}")
    _tile_args(instr, tile_position, tile_size, K)
    ss = _scale_view(instr, "stationary_scale", stationary_scale, K, M)
    ms = _scale_view(instr, "moving_scale", moving_scale, K, N)
    rows = scale_rows(K)
    out, state = _pe._psum_start(instr, dst, accumulate)
    s32 = np.empty((4 * K, M), np.float32)
    m32 = np.empty((4 * K, N), np.float32)
    k = _k()
    k.dequant(_c._rows(stationary), _dt.lookup(_X4_ALL[stationary.dtype.name]).code,
              np.ascontiguousarray(ss[rows, :M]), s32)
    k.dequant(_c._rows(moving), _dt.lookup(_X4_ALL[moving.dtype.name]).code,
              np.ascontiguousarray(ms[rows, :N]), m32)
    _c._kernels().matmul_f32(out, s32, m32, _c._threads())
    _c._run_ew(instr, dst, NkiTensor(out, _dt.float32))
    state[...] = PSUM_GROUP
    _cost.record("Tensor", instr, max(min(64, M), N))
