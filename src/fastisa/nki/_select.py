"""NKI select instructions (NKI 0.7 signatures, destination first), re-exported by ``nki.isa``:
``select_reduce``, ``range_select``, ``affine_select``.

Split out of :mod:`fastisa.nki._compute` (the file passed the project's ~1,000-line limit);
they share its validation helpers and run its elementwise C kernel (``csrc/fastisa/nki.h``)
with the select stage (stage op 29) and a uint8 predicate operand.  Numerics and costs: see
the module docstring of :mod:`fastisa.nki._compute`.  Source: the NKI docs and simulator guide
(github.com/aws-neuron/aws-neuron-sdk, nki/api/ and nki/guides/nki_simulator.rst).
"""

from __future__ import annotations

import math

import numpy as np

from .. import cost as _cost
from .. import dtypes as _dt
from ..errors import ConstraintError
from . import ops as _ops
from ._compute import (FP32_MIN, GPSIMD_START, MIN_II, _CMP_OPS, _NO_STAGE, _check_reduce_res,
                       _cmd_name, _computable, _onchip, _regs, _run_ew, _same_shape,
                       _scalar_operand, _target, _tensor, _write_vec)
from .tensor import NkiTensor

import typing as _typing

if _typing.TYPE_CHECKING:
    from collections.abc import Sequence

    from .._types import EnumLike, Int, OpLike, Real

__all__ = ["select_reduce", "range_select", "affine_select"]

# ---- select family -----------------------------------------------------------------------
_PRED_DTYPES = ("int8", "uint8", "int16", "uint16", "bool_")


def select_reduce(dst: NkiTensor, predicate: NkiTensor, on_true: NkiTensor | Real,
                  on_false: NkiTensor | Real, reduce_res: NkiTensor | None = None,
                  reduce_cmd: EnumLike | None = None, reduce_op: OpLike | None = None,
                  reverse_pred: bool = False, name: str | None = None) -> None:
    """``dst = predicate != 0 ? on_true : on_false`` (``== 0`` when reverse_pred), with an
    optional per-lane maximum into the Vector engine's registers.

    Parameters
    ----------
    dst, on_true : NkiTensor [P, ...] in SBUF or PSUM, same partitions and elements per
        partition; on_true any dtype but tfloat32 / int32 / uint32.
    predicate : NkiTensor of the same shape, dtype int8/uint8/int16/uint16/bool_ (not in
        PSUM together with on_true).
    on_false : float32 scalar or [P, 1] tensor.
    reduce_cmd : ``idle``, ``reset`` (registers to -inf), ``reduce`` (maximum with the row
        maxima of the float32 selected values, before rounding to dst.dtype),
        ``reset_reduce`` (-inf then reduce).
    reduce_op : nl.maximum (the default) only.  reduce_res: optional [P, 1] float tensor.

    The selected value goes through float32 and is rounded once to dst.dtype.  Raises
    ConstraintError.  Cost: ``max(MIN_II, N)`` Vector (fastisa's estimate).
    Reference: the NKI docs and simulator guide (github.com/aws-neuron/aws-neuron-sdk, nki/api/ and nki/guides/nki_simulator.rst).
    """
    instr = "select_reduce"
    for pname, t in (("dst", dst), ("predicate", predicate), ("on_true", on_true)):
        _tensor(instr, pname, t)
        _onchip(instr, pname, t)
        _computable(instr, pname, t)
    _same_shape(instr, "dst", dst, "on_true", on_true)
    _same_shape(instr, "predicate", predicate, "on_true", on_true)
    if predicate.dtype.name not in _PRED_DTYPES:
        raise ConstraintError(f"{instr}: predicate dtype must be one of "
                              f"{', '.join(_PRED_DTYPES)}, got {predicate.dtype.name}")
    if on_true.dtype.name in ("tfloat32", "int32", "uint32"):
        raise ConstraintError(f"{instr}: on_true dtype must not be tfloat32, int32 or uint32, "
                              f"got {on_true.dtype.name}")
    if predicate.buffer.name == "psum" and on_true.buffer.name == "psum":
        raise ConstraintError(f"{instr}: predicate and on_true must not both be in psum")
    reduce_op = _ops.coerce(reduce_op)
    if reduce_op is not None and not (isinstance(reduce_op, _ops.Op) and
                                      reduce_op.name == "maximum"):
        raise ConstraintError(f"{instr}: reduce_op must be nl.maximum, got {reduce_op!r}")
    P = on_true.partitions
    _check_reduce_res(instr, reduce_res, P)
    if reduce_res is not None and reduce_res.dtype.kind != "float":
        raise ConstraintError(f"{instr}: reduce_res dtype must be a float type, got "
                              f"{reduce_res.dtype.name}")
    cmd = _cmd_name(instr, reduce_cmd)
    if cmd == "load_reduce":
        raise ConstraintError(f"{instr}: reduce_cmd must be idle, reset, reduce or "
                              f"reset_reduce, got load_reduce")
    fo, _ = _scalar_operand(instr, "on_false", on_false, P)
    _select(instr, dst, on_true, predicate, fo, bool(reverse_pred), cmd, reduce_res, P)
    _cost.record("Vector", instr, max(MIN_II, on_true.free_size))


def _select(instr, dst, on_true, pred, fo, rev, cmd, reduce_res, P):
    regs = _regs("vector")
    if cmd in ("reset", "reset_reduce"):
        regs[:P] = -np.inf
    acc = np.array(regs[:P], copy=True) if cmd in ("reduce", "reset_reduce") else None
    _run_ew(instr, dst, on_true, in1=pred, stages=(_stage_sel(fo, rev), _NO_STAGE),
            acc=acc, acc_max=True)
    if acc is not None:
        regs[:P] = acc
    if reduce_res is not None:
        _write_vec(instr, "reduce_res", reduce_res, regs[:P], P)


def _stage_sel(fo, rev):
    return (29, int(rev), 1, fo, None)


def range_select(dst: NkiTensor, on_true_tile: NkiTensor, comp_op0: OpLike, comp_op1: OpLike,
                 bound0: NkiTensor | Real, bound1: NkiTensor | Real,
                 reduce_cmd: EnumLike | None = None, reduce_res: NkiTensor | None = None,
                 reduce_op: OpLike | None = None, range_start: Int = 0,
                 on_false_value: Real = FP32_MIN, name: str | None = None) -> None:
    """Keep ``on_true_tile[p, i]`` where ``comp_op0(idx, bound0[p]) and comp_op1(idx,
    bound1[p])`` with ``idx = range_start + i`` (float32), else ``on_false_value``; optional
    per-lane maximum into the Vector registers (reduce_cmd defaults to reset_reduce).

    Parameters
    ----------
    dst, on_true_tile : NkiTensor [P, ...] in SBUF or PSUM; on_true_tile a float dtype.
    comp_op0, comp_op1 : nl.equal, less, less_equal, greater or greater_equal.
    bound0, bound1 : [P, 1] tensors or float32 scalars.
    range_start : int; ``range_start + N - 1`` must stay below 2^24 (exact in float32).
    on_false_value : must be FP32_MIN (-3.4028235e38, ``nisa.fp32.min``); it becomes
        -inf in bf16/fp16/fp8 destinations.
    reduce_op : nl.maximum only.  trn2 (NeuronCore-v3) or newer.

    Raises ConstraintError.  Cost: ``max(MIN_II, N)`` Vector.  Reference: the NKI docs and simulator guide (github.com/aws-neuron/aws-neuron-sdk, nki/api/ and nki/guides/nki_simulator.rst).
    """
    instr = "range_select"
    if _target() == "trn1":
        raise ConstraintError(f"{instr}: requires NeuronCore-v3 or newer (trn2, trn3), got trn1")
    for pname, t in (("dst", dst), ("on_true_tile", on_true_tile)):
        _tensor(instr, pname, t)
        _onchip(instr, pname, t)
        _computable(instr, pname, t)
    _same_shape(instr, "dst", dst, "on_true_tile", on_true_tile)
    if on_true_tile.dtype.kind != "float":
        raise ConstraintError(f"{instr}: on_true_tile dtype must be a float type, got "
                              f"{on_true_tile.dtype.name}")
    comp_op0, comp_op1 = _ops.coerce(comp_op0), _ops.coerce(comp_op1)
    for pname, o in (("comp_op0", comp_op0), ("comp_op1", comp_op1)):
        if not isinstance(o, _ops.Op) or o.name not in _CMP_OPS:
            raise ConstraintError(f"{instr}: {pname} must be one of "
                                  f"{', '.join('nl.' + c for c in _CMP_OPS)}, got {o!r}")
    if float(np.float32(on_false_value)) != FP32_MIN:
        raise ConstraintError(f"{instr}: on_false_value must be FP32_MIN (-3.4028235e38), got "
                              f"{on_false_value!r}")
    reduce_op = _ops.coerce(reduce_op)
    if reduce_op is not None and not (isinstance(reduce_op, _ops.Op) and
                                      reduce_op.name == "maximum"):
        raise ConstraintError(f"{instr}: reduce_op must be nl.maximum, got {reduce_op!r}")
    if isinstance(range_start, bool) or not isinstance(range_start, (int, np.integer)):
        raise ConstraintError(f"{instr}: range_start must be an int, got {range_start!r}")
    P, N = on_true_tile.partitions, on_true_tile.free_size
    if not (-(1 << 24) < int(range_start) and int(range_start) + N - 1 < (1 << 24)):
        raise ConstraintError(f"{instr}: range_start + free index must stay within (-2^24, 2^24) "
                              f"(exact in float32), got range_start {range_start} with {N} "
                              f"elements per partition")
    cmd = _cmd_name(instr, "reset_reduce" if reduce_cmd is None else reduce_cmd)
    if cmd == "load_reduce":
        raise ConstraintError(f"{instr}: reduce_cmd must be idle, reset, reduce or "
                              f"reset_reduce, got load_reduce")
    _check_reduce_res(instr, reduce_res, P)
    b0, _ = _scalar_operand(instr, "bound0", bound0, P)
    b1, _ = _scalar_operand(instr, "bound1", bound1, P)
    # predicate[p, i] from the float32 index and bounds (one [P, N] comparison each)
    idx = (np.float32(range_start) + np.arange(N, dtype=np.float32))[None, :]
    cmp = {"equal": np.equal, "less": np.less, "less_equal": np.less_equal,
           "greater": np.greater, "greater_equal": np.greater_equal}
    pred = (cmp[comp_op0.name](idx, b0[:, None]) & cmp[comp_op1.name](idx, b1[:, None]))
    pred_t = NkiTensor(np.ascontiguousarray(np.broadcast_to(pred, (P, N))).view(np.uint8),
                       _dt.uint8)
    fo = np.array([np.float32(FP32_MIN)], np.float32)
    _select(instr, dst, on_true_tile, pred_t, fo, False, cmd, reduce_res, P)
    _cost.record("Vector", instr, max(MIN_II, N))


def affine_select(dst: NkiTensor, pattern: Sequence[Sequence[Int]], channel_multiplier: Int,
                  on_true_tile: NkiTensor, on_false_value: Real, cmp_op: OpLike | None = None,
                  offset: Int = 0, name: str | None = None) -> None:
    """``dst[p, i] = on_true_tile[p, i] if cmp_op(affine(p, i), 0) else on_false_value`` with
    ``affine = offset + p*channel_multiplier + sum_d idx_d*step_d`` (int32, like iota).

    Parameters
    ----------
    dst, on_true_tile : NkiTensor [P, ...] in SBUF, same partitions and elements per
        partition.
    pattern : [[step, num], ...] (up to 4 free dims) with prod(num) = elements per partition.
    channel_multiplier, offset : ints.
    on_false_value : float32 scalar.
    cmp_op : nl.equal (default), not_equal, less, less_equal, greater, greater_equal.

    The selected value goes through float32 and is rounded once to dst.dtype.  Raises
    ConstraintError.  Cost: ``150 + N`` GpSimd cycles.  Reference: the NKI docs and simulator guide (github.com/aws-neuron/aws-neuron-sdk, nki/api/ and nki/guides/nki_simulator.rst).
    """
    instr = "affine_select"
    for pname, t in (("dst", dst), ("on_true_tile", on_true_tile)):
        _tensor(instr, pname, t)
        _onchip(instr, pname, t, allow_psum=False)
        _computable(instr, pname, t)
    _same_shape(instr, "dst", dst, "on_true_tile", on_true_tile)
    cmp_op = _ops.equal if cmp_op is None else cmp_op
    cmp_names = _CMP_OPS + ("not_equal",)
    cmp_op = _ops.coerce(cmp_op)
    if not isinstance(cmp_op, _ops.Op) or cmp_op.name not in cmp_names:
        raise ConstraintError(f"{instr}: cmp_op must be one of "
                              f"{', '.join('nl.' + c for c in cmp_names)}, got {cmp_op!r}")
    for pname, v in (("channel_multiplier", channel_multiplier), ("offset", offset)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise ConstraintError(f"{instr}: {pname} must be an int, got {v!r}")
    if not isinstance(on_false_value, (int, float, np.integer, np.floating)) or \
            isinstance(on_false_value, bool):
        raise ConstraintError(f"{instr}: on_false_value must be a float32 scalar, got "
                              f"{on_false_value!r}")
    try:
        pairs = [(int(s), int(n)) for s, n in pattern]
    except (TypeError, ValueError):
        raise ConstraintError(f"{instr}: pattern must be a list of [step, num] pairs, got "
                              f"{pattern!r}") from None
    if not 1 <= len(pairs) <= 4 or any(n < 1 for _, n in pairs):
        raise ConstraintError(f"{instr}: pattern must have 1 to 4 [step, num] pairs with num >= 1, "
                              f"got {pattern!r}")
    P, N = on_true_tile.partitions, on_true_tile.free_size
    if math.prod(n for _, n in pairs) != N:
        raise ConstraintError(f"{instr}: the product of pattern nums must equal the elements per "
                              f"partition ({N}), got {pattern!r}")
    val = np.full((P,) + tuple(n for _, n in pairs), int(offset), np.int64)
    val += (np.arange(P, dtype=np.int64) * int(channel_multiplier)).reshape((P,) + (1,) * len(pairs))
    for d, (s, n) in enumerate(pairs):
        shp = [1] * (len(pairs) + 1)
        shp[d + 1] = n
        val += (np.arange(n, dtype=np.int64) * s).reshape(shp)
    val = val.reshape(P, N).astype(np.int32)   # int32 arithmetic (wraps like the hardware)
    cmp = {"equal": np.equal, "not_equal": np.not_equal, "less": np.less,
           "less_equal": np.less_equal, "greater": np.greater, "greater_equal": np.greater_equal}
    pred = NkiTensor(cmp[cmp_op.name](val, 0).view(np.uint8), _dt.uint8)
    fo = np.array([np.float32(on_false_value)], np.float32)
    _run_ew(instr, dst, on_true_tile, in1=pred, stages=(_stage_sel(fo, False), _NO_STAGE))
    _cost.record("GpSimd", instr, GPSIMD_START + N)

