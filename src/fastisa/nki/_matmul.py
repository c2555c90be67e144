"""Tensor-engine modes of ``nc_matmul`` beyond the plain float32 matmul (SDK 2.33).

* ``is_transpose=True`` -- transpose mode: with the [K, K] identity as ``moving`` the
  Tensor engine writes ``dst[m, k] = stationary[k, m]`` bit-accurately (NeuronCore-v3+,
  "can transpose tensors with NaN/Inf values properly").  fastisa copies the bits when
  dst has stationary's dtype, else converts each element through float32 (the NKI docs, page NKI ISA API Common Fields (github.com/aws-neuron/aws-neuron-sdk, nki/api/nki.api.shared.rst) "Type
  Casting").  On NeuronCore-v2 the docs say the flag only labels the instruction for the
  profiler, and the ordinary matmul runs; fastisa does the same on trn1.
* ``perf_mode=matmul_perf_mode.double_row`` -- FP8 double-rate mode: the contraction is
  split over the partition dim and a first free dim of size 2 ([K, 2, M] and [K, 2, N]);
  the result is the same matmul over the 2K contraction rows, so fastisa folds the
  operands to [2K, M] / [2K, N] (row 2k + j) and runs the ordinary matmul (summation in
  that row order).  A performance mode, not a numerics change.

Source: aws-neuron-sdk ``nki/api/nki/isa/__init__.py``, ``nc_matmul`` ("Transpose mode",
"Performance mode", "Layout").  Cost: Tensor ``max(P, min(64, F))`` for the transpose
(as nc_transpose on the Tensor engine); double_row halves the matmul estimate.
"""

from __future__ import annotations

import numpy as np

from .. import cost as _cost
from ..errors import ConstraintError
from .enums import matmul_perf_mode
from .tensor import NkiTensor

__all__ = ["transpose_mode", "perf_mode_name", "fold_double_row"]

_FP8 = ("float8_e4m3", "float8_e5m2", "float8_e4m3fn")


def perf_mode_name(instr, perf_mode) -> str:
    if perf_mode is None:
        return "none"
    name = perf_mode if isinstance(perf_mode, str) else getattr(perf_mode, "name", None)
    if name not in matmul_perf_mode.__members__:
        raise ConstraintError(f"{instr}: perf_mode must be nisa.matmul_perf_mode.none or "
                              f"double_row, got {perf_mode!r}")
    return name


def fold_double_row(instr, stationary, moving, tile_position, tile_size, target):
    """[K, 2, M] / [K, 2, N] fp8 operands as [2K, M] / [2K, N] tensors (row 2k + j)."""
    if target == "trn1":
        raise ConstraintError(f"{instr}: perf_mode double_row needs NeuronCore-v3 or newer, got "
                              f"target trn1")
    for pname, t in (("stationary", stationary), ("moving", moving)):
        if not isinstance(t, NkiTensor):
            raise ConstraintError(f"{instr}: {pname} must be an NkiTensor, got "
                                  f"{type(t).__name__}")
        if t.dtype.name not in _FP8:
            raise ConstraintError(f"{instr}: perf_mode double_row needs float8 operands "
                                  f"(float8_e4m3, float8_e5m2, float8_e4m3fn), {pname} is "
                                  f"{t.dtype.name}")
        if t.ndim != 3 or t.shape[1] != 2:
            raise ConstraintError(f"{instr}: perf_mode double_row needs {pname} of shape "
                                  f"[K, 2, F] (first free dim 2), got {t.shape}")
    if tile_size and len(tile_size) == 2 and int(tile_size[1]) != 128:
        raise ConstraintError(f"{instr}: perf_mode double_row cannot be combined with column "
                              f"tiling (tile_size column_size {tile_size[1]})")
    names = {stationary.dtype.name, moving.dtype.name}
    if {"float8_e4m3", "float8_e4m3fn"} <= names:
        raise ConstraintError(f"{instr}: float8_e4m3 and float8_e4m3fn cannot be mixed in one "
                              f"matmul")

    def fold(t):
        K, _, F = t.shape
        return NkiTensor(np.ascontiguousarray(t.data).reshape(2 * K, F), t.dtype, t.buffer, t.name)

    return fold(stationary), fold(moving)


def transpose_mode(instr, dst, stationary, moving, target):
    """Run nc_matmul's transpose mode; returns False on trn1 (plain matmul runs instead)."""
    if target == "trn1":
        return False
    from fastisa.nki import _compute as _c
    from fastisa.nki._cast import from_f32, to_f32
    for pname, t in (("dst", dst), ("stationary", stationary), ("moving", moving)):
        _c._tensor(instr, pname, t, note=False)
        if t.ndim != 2:
            raise ConstraintError(f"{instr}: {pname} must be 2-D, got shape {t.shape}")
    _c._onchip(instr, "stationary", stationary, allow_psum=False)
    _c._onchip(instr, "moving", moving, allow_psum=False)
    if dst.buffer.name != "psum":
        raise ConstraintError(f"{instr}: dst must be in psum, got {dst.buffer.name}")
    K, M = stationary.shape
    if moving.shape != (K, K):
        raise ConstraintError(f"{instr}: is_transpose=True needs moving to be the [{K}, {K}] "
                              f"identity, got shape {moving.shape}")
    if dst.shape != (M, K):
        raise ConstraintError(f"{instr}: dst must have shape {(M, K)} (stationary transposed), "
                              f"got {dst.shape}")
    if M > 128:
        raise ConstraintError(f"{instr}: stationary free size must be <= 128, got {M}")
    mv = moving.data.astype(np.float32) if moving.dtype.kind != "packed" else None
    if mv is None or not np.array_equal(mv, np.eye(K, dtype=np.float32)):
        raise ConstraintError(f"{instr}: is_transpose=True needs moving to be the identity "
                              f"matrix (the documented transpose idiom); other moving values "
                              f"have no documented result in transpose mode")
    if dst.dtype is stationary.dtype:
        from fastisa._kernels import move
        move.strided(dst.data, stationary.data.T)
    else:
        _c._computable(instr, "stationary", stationary)
        _c._computable(instr, "dst", dst)
        dst.data[...] = from_f32(to_f32(stationary.data, stationary.dtype), dst.dtype).T
    from fastisa.nki.tensor import PSUM_GROUP, psum_state
    psum_state(dst)[...] = PSUM_GROUP
    _cost.record("Tensor", instr, max(K, min(64, M)))
    return True
