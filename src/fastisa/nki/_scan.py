"""NKI scan-shaped instructions (SDK 2.33 signatures), re-exported by ``nki.isa``.

``tensor_tensor_scan``, ``tensor_scalar_cumulative`` and ``tensor_scalar_reduce``: a value
carried along the free axis of each partition, on the C kernels of
``csrc/fastisa/scan.h`` (driver ``fastisa._kernels.scan``).  Every input element is
converted to float32 (floats exactly, int32/uint32 RNE), every operator is computed in
float32 with one rounding (the NKI docs, page NKI ISA API Common Fields (github.com/aws-neuron/aws-neuron-sdk, nki/api/nki.api.shared.rst) "Supported Math Operators"), the carry stays float32,
and each result is rounded ONCE to ``dst.dtype`` (RNE; integers saturate, NaN -> 0).

Source: aws-neuron-sdk ``nki/api/nki/isa/__init__.py`` (SDK 2.33 docstrings of the three
instructions); costs from the pre-0.3 docstrings (the NKI docs and simulator guide (github.com/aws-neuron/aws-neuron-sdk, nki/api/ and nki/guides/nki_simulator.rst)).

=========================  ========  ===========================================
instruction                engine    cycles (N = elements per partition)
=========================  ========  ===========================================
tensor_tensor_scan         Vector    ``max(MIN_II, 2N)``
tensor_scalar_cumulative   Vector    ``max(MIN_II, 2N)`` (fastisa's estimate)
tensor_scalar_reduce       Vector    ``max(MIN_II, N) + MIN_II``
=========================  ========  ===========================================
"""

from __future__ import annotations

import numpy as np

from .. import cost as _cost
from ..errors import ConstraintError
from . import _compute as _c
from . import ops as _ops
from .tensor import NkiTensor

import typing as _typing

if _typing.TYPE_CHECKING:
    from .._types import EnumLike, OpLike, Real

__all__ = ["tensor_tensor_scan", "tensor_scalar_cumulative", "tensor_scalar_reduce"]

MIN_II = _cost.MIN_II

#: dtypes tensor_scalar_cumulative accepts (its docstring: no int32 / uint32).
_CUMULATIVE_DTYPES = ("bfloat16", "float16", "float32", "float8_e4m3", "float8_e5m2",
                      "float8_e4m3fn", "uint8", "uint16", "int8", "int16")
_CUMULATIVE_OP1 = ("add", "subtract", "multiply", "maximum", "minimum")
_REDUCE_OPS = ("add", "multiply", "maximum", "minimum")
_IDENTITY = {"add": 0.0, "subtract": 0.0, "multiply": 1.0, "maximum": -np.inf,
             "minimum": np.inf}


def _k():
    from fastisa._kernels import scan
    return scan


def _arith(instr, param, op, *, binary=True):
    _c._op(instr, param, op)
    if op.is_bitvec:
        raise ConstraintError(f"{instr}: {param} must be an arithmetic operator, got bitvec "
                              f"{op!r}")
    if binary and op.kind == _ops.UNARY:
        raise ConstraintError(f"{instr}: {param} must be a binary arithmetic operator, got "
                              f"unary {op!r}")
    return op


def _operand_tensor(instr, param, t):
    _c._tensor(instr, param, t)
    _c._onchip(instr, param, t)
    _c._computable(instr, param, t)


def _in_rows(t: NkiTensor, d: np.ndarray) -> np.ndarray:
    return _c._unalias(_c._rows(t), d)


def _bool(instr, param, v) -> int:
    if not isinstance(v, (bool, np.bool_)):
        raise ConstraintError(f"{instr}: {param} must be a bool, got {v!r}")
    return int(bool(v))


def tensor_tensor_scan(dst: NkiTensor, data0: NkiTensor, data1: NkiTensor,
                       initial: NkiTensor | Real, op0: OpLike, op1: OpLike | None,
                       reverse0: bool = False, reverse1: bool = False,
                       name: str | None = None) -> None:
    """Per partition: ``r[i] = op1(op0(data0[i], r[i-1]), data1[i])``, ``r[-1] = initial``.

    ``reverse0`` computes ``op0(r[i-1], data0[i])``; ``reverse1`` computes
    ``op1(data1[i], t)``.  Free dimensions are flattened in C order; the carry is float32
    and each ``r[i]`` is rounded once to ``dst.dtype``.

    Parameters
    ----------
    dst, data0, data1 : NkiTensor [P, ...] in SBUF or PSUM, P <= 128, the same partitions
        and elements per partition, any non-packed dtype; data0 and data1 not both in PSUM.
    initial : float32 scalar constant, or a [P, 1] tensor in SBUF / PSUM.
    op0, op1 : binary arithmetic operators (the NKI docs, page NKI ISA API Common Fields (github.com/aws-neuron/aws-neuron-sdk, nki/api/nki.api.shared.rst) Table 8).
    reverse0, reverse1 : bool.

    Raises
    ------
    ConstraintError : a rule above is broken.

    Cost: Vector ``max(MIN_II, 2N)``.  Source: aws-neuron-sdk
    ``nki/api/nki/isa/__init__.py``, ``tensor_tensor_scan``.
    """
    instr = "tensor_tensor_scan"
    for pname, t in (("dst", dst), ("data0", data0), ("data1", data1)):
        _operand_tensor(instr, pname, t)
    _c._same_shape(instr, "dst", dst, "data0", data0)
    _c._same_shape(instr, "data0", data0, "data1", data1)
    if data0.buffer.name == "psum" and data1.buffer.name == "psum":
        raise ConstraintError(f"{instr}: data0 and data1 must not both be in psum")
    _arith(instr, "op0", op0)
    _arith(instr, "op1", op1)
    rev0 = _bool(instr, "reverse0", reverse0)
    rev1 = _bool(instr, "reverse1", reverse1)
    P = data0.partitions
    init, _ = _c._scalar_operand(instr, "initial", initial, P)
    d, commit = _c._dst_rows(dst)
    _k().tensor_tensor(d, dst.dtype.code, _in_rows(data0, d), data0.dtype.code,
                       _in_rows(data1, d), data1.dtype.code, init, op0.alu, rev0, op1.alu, rev1)
    if commit is not None:
        commit()
    _cost.record("Vector", instr, max(MIN_II, 2 * data0.free_size))


def _acc_start(instr, cmd, op_name, load, load_param, P):
    """The accumulator's value before the instruction ([P] float32), per reduce_cmd."""
    regs = _c._regs("vector")
    if cmd == "reset_reduce":
        return np.full(P, _IDENTITY[op_name], np.float32)
    if cmd == "reduce":
        return np.array(regs[:P], np.float32)
    if cmd == "load_reduce":
        if load is None:
            raise ConstraintError(f"{instr}: {load_param} must be given when reduce_cmd is "
                                  f"load_reduce")
        v, _ = _c._scalar_operand(instr, load_param, load, P)
        return np.array(np.broadcast_to(v, (P,)), np.float32)
    raise ConstraintError(f"{instr}: reduce_cmd must be reset_reduce, reduce or load_reduce, "
                          f"got {cmd}")


def tensor_scalar_cumulative(dst: NkiTensor, src: NkiTensor, op0: OpLike, op1: OpLike | None,
                             imm0: NkiTensor | Real | None, imm1: NkiTensor | Real | None = None,
                             reduce_cmd: EnumLike | None = None, name: str | None = None) -> None:
    """Per partition: ``reg = op1(op0(src[i], imm0), reg); dst[i] = reg`` (Vector engine).

    The starting ``reg`` follows ``reduce_cmd``: ``reset_reduce`` (default) the identity
    of op1 (0 for add / subtract, 1 for multiply, -inf for maximum, +inf for minimum),
    ``reduce`` the VectorE accumulator left by the previous accumulating instruction,
    ``load_reduce`` ``imm1``.  The accumulator keeps the last ``reg`` of each partition
    (shared with exponential, select_reduce, range_select, tensor_scalar_reduce).  As
    documented, op1 takes the new term first: with ``subtract``, ``reg = t - reg``.

    Parameters
    ----------
    dst, src : NkiTensor [P, ...] in SBUF / PSUM, same partitions and elements per
        partition; dtypes bfloat16, float16, float32, float8 (e4m3, e5m2, e4m3fn), uint8,
        uint16, int8, int16 (not int32 / uint32: "ISA limitation").
    op0 : an arithmetic operator; op1 : add, subtract, multiply, maximum or minimum.
    imm0 : float32 scalar or [P, 1] tensor; imm1 : the same, read by ``load_reduce`` only
        (accepted and ignored with the other commands, as the docs' pseudocode reads it).
    reduce_cmd : ``nisa.reduce_cmd`` reset_reduce (default), reduce or load_reduce.

    Raises
    ------
    ConstraintError : a rule above is broken.

    Cost: Vector ``max(MIN_II, 2N)`` (fastisa's estimate).  Source: aws-neuron-sdk
    ``nki/api/nki/isa/__init__.py``, ``tensor_scalar_cumulative``.
    """
    instr = "tensor_scalar_cumulative"
    for pname, t in (("dst", dst), ("src", src)):
        _operand_tensor(instr, pname, t)
        if t.dtype.name not in _CUMULATIVE_DTYPES:
            raise ConstraintError(f"{instr}: {pname} dtype must be one of "
                                  f"{', '.join(_CUMULATIVE_DTYPES)}, got {t.dtype.name}")
    _c._same_shape(instr, "dst", dst, "src", src)
    _arith(instr, "op0", op0, binary=False)
    _arith(instr, "op1", op1)
    if op1.name not in _CUMULATIVE_OP1:
        raise ConstraintError(f"{instr}: op1 must be one of {', '.join(_CUMULATIVE_OP1)}, got "
                              f"{op1.name}")
    P = src.partitions
    if op0.kind == _ops.UNARY:
        if not _c._unary_operand_ok(imm0):
            raise ConstraintError(f"{instr}: imm0 must be None or 0 for unary op0 {op0.name}, "
                                  f"got {imm0!r}")
        imm = np.zeros(1, np.float32)
    else:
        imm, _ = _c._scalar_operand(instr, "imm0", imm0, P)
    cmd = "reset_reduce" if reduce_cmd is None else _c._cmd_name(instr, reduce_cmd)
    if cmd != "load_reduce" and imm1 is not None:
        # the docs' pseudocode reads imm1 only for load_reduce; with reset_reduce / reduce
        # it is ignored (the SDK's own chained test passes it to both calls) -- still a
        # valid operand
        _c._scalar_operand(instr, "imm1", imm1, P)
    acc = _acc_start(instr, cmd, op1.name, imm1, "imm1", P)
    d, commit = _c._dst_rows(dst)
    _k().cumulative(d, dst.dtype.code, _in_rows(src, d), src.dtype.code, imm, op0.alu, op1.alu,
                    acc, _c._threads())
    if commit is not None:
        commit()
    _c._regs("vector")[:P] = acc
    _cost.record("Vector", instr, max(MIN_II, 2 * src.free_size))


def tensor_scalar_reduce(dst: NkiTensor, data: NkiTensor, op0: OpLike, operand0: NkiTensor | Real,
                         reduce_op: OpLike | None, reduce_res: NkiTensor | None = None,
                         reverse0: bool = False, reduce_cmd: EnumLike | None = None,
                         reduce_init: Real | None = None, reduce_res_negate: bool = False,
                         name: str | None = None) -> None:
    """``dst = data op0 operand0``; the VectorE accumulator folds the results with reduce_op.

    Per partition: ``t[i] = op0(data[i], operand0)`` in float32 (``reverse0``:
    ``op0(operand0, data[i])``), ``dst[i] = t[i]`` rounded once to dst.dtype, and
    ``acc = reduce_op(acc, t[i])`` left to right over every free element, in float32 (the
    unrounded t, as the engine's pipeline reduces before the output cast).  ``acc``
    starts per ``reduce_cmd``: ``reset_reduce`` (default) the identity (0 / 1 / -inf /
    +inf), ``reduce`` the accumulator's value, ``load_reduce`` ``reduce_init``.
    ``reduce_res`` (optional) receives ``acc`` (negated when ``reduce_res_negate``; the
    registers keep the un-negated value).

    Parameters
    ----------
    dst, data : NkiTensor [P, ...] in SBUF / PSUM, same partitions and elements per
        partition, any non-packed dtype.
    op0 : arithmetic operator (unary ops take operand0 None or 0); bitvec is an error.
    operand0 : float32 scalar or [P, 1] tensor.
    reduce_op : add, multiply, maximum or minimum.
    reduce_res : optional [P, 1] tensor in SBUF / PSUM.
    reverse0 : bool (documented as "not supported yet" on hardware; fastisa computes it).
    reduce_cmd : reset_reduce, reduce or load_reduce; reduce_init : float32 scalar or
        [P, 1] tensor, only with load_reduce.

    Raises
    ------
    ConstraintError : a rule above is broken.

    Cost: Vector ``max(MIN_II, N) + MIN_II``.  Source: aws-neuron-sdk
    ``nki/api/nki/isa/__init__.py``, ``tensor_scalar_reduce``.
    """
    instr = "tensor_scalar_reduce"
    for pname, t in (("dst", dst), ("data", data)):
        _operand_tensor(instr, pname, t)
    _c._same_shape(instr, "dst", dst, "data", data)
    _arith(instr, "op0", op0, binary=False)
    _c._op(instr, "reduce_op", reduce_op)
    if reduce_op.name not in _REDUCE_OPS:
        raise ConstraintError(f"{instr}: reduce_op must be one of {', '.join(_REDUCE_OPS)}, "
                              f"got {reduce_op.name}")
    rev0 = _bool(instr, "reverse0", reverse0)
    neg = _bool(instr, "reduce_res_negate", reduce_res_negate)
    P = data.partitions
    if op0.kind == _ops.UNARY:
        if not _c._unary_operand_ok(operand0):
            raise ConstraintError(f"{instr}: operand0 must be None or 0 for unary op0 "
                                  f"{op0.name}, got {operand0!r}")
        imm = np.zeros(1, np.float32)
    else:
        imm, _ = _c._scalar_operand(instr, "operand0", operand0, P)
    _c._check_reduce_res(instr, reduce_res, P)
    cmd = "reset_reduce" if reduce_cmd is None else _c._cmd_name(instr, reduce_cmd)
    if cmd != "load_reduce" and reduce_init is not None:
        raise ConstraintError(f"{instr}: reduce_init must only be set when reduce_cmd is "
                              f"load_reduce, got reduce_cmd {cmd}")
    acc = _acc_start(instr, cmd, reduce_op.name, reduce_init, "reduce_init", P)
    d, commit = _c._dst_rows(dst)
    _k().reduce(d, dst.dtype.code, _in_rows(data, d), data.dtype.code, imm, op0.alu, rev0,
                reduce_op.alu, acc)
    if commit is not None:
        commit()
    _c._regs("vector")[:P] = acc
    if reduce_res is not None:
        _c._write_vec(instr, "reduce_res", reduce_res, -acc if neg else acc, P)
    _cost.record("Vector", instr, max(MIN_II, data.free_size) + MIN_II)
