"""NKI compute instructions (NKI 0.7 signatures, destination first), re-exported by ``nki.isa``.

Every instruction validates all of its documented constraints first (raising
:mod:`fastisa.errors` exceptions naming the instruction, the parameter, the rule and the
value), then runs ONE C kernel (``csrc/fastisa/nki.h``: the elementwise shape or the
reduce shape, with the op passed as data), then adds its estimated cost with
:func:`fastisa.cost.record`.

Numerics (the NKI docs, page NKI ISA API Common Fields (github.com/aws-neuron/aws-neuron-sdk, nki/api/nki.api.shared.rst) "Type Casting", "Supported Math Operators"; the NKI docs and simulator guide (github.com/aws-neuron/aws-neuron-sdk, nki/api/ and nki/guides/nki_simulator.rst)):

* arithmetic operators: every input converted to float32 (floats exactly; int32/uint32
  RNE), computed in float32, the result rounded ONCE to ``dst.dtype`` (RNE; integers
  RNE + saturation, NaN -> 0; ``bool_`` saturates to [0, 1]).  ``maximum``/``minimum``
  are IEEE 754-2019 maximum/minimum (NaN-propagating, -0 < +0); ``power`` is
  ``pow`` in float64 rounded to float32; ``rsqrt`` is ``1/sqrt`` in float64 rounded to
  float32; comparisons and logical ops give 1.0 / 0.0.
* bitvec operators: integer dtypes only (a float tensor is a ConstraintError); each
  element is its bit pattern zero-extended to 32 bits, shifts by >= 32 give 0, the result
  is truncated to dst's width.  Scalar operands are Python ints (two's complement).
* activation functions: ``op(data * scale + bias)`` -- the affine part in float32 (a
  multiply then an add, two roundings), the function in float64 (libm), rounded ONCE to
  ``dst.dtype``.  On ScalarE an input outside the function's valid range gives the
  accurate value plus a RuntimeWarning, except ``sin``, which follows ScalarE's cubic
  (``nl.sin.out_of_range``).  The accumulator adds the float32-rounded results, left to
  right along the free axis, in float32.
* same-dtype copies are bit copies; dtype-changing copies go through float32.

Accumulator registers (128 per-lane float32 registers for ScalarE, another 128 for
VectorE) belong to the current kernel instance (``nki.simulate`` starts each instance
with fresh registers, all zero); lane i is partition i of the instruction's tile.

Engine costs (cycles; N = elements per partition, MIN_II = 64; the NKI docs, page NKI ISA API Common Fields (github.com/aws-neuron/aws-neuron-sdk, nki/api/nki.api.shared.rst) and
the NKI docs and simulator guide (github.com/aws-neuron/aws-neuron-sdk, nki/api/ and nki/guides/nki_simulator.rst)):

========================  ========  ========================================================
instruction               engine    cycles
========================  ========  ========================================================
tensor_scalar             Vector    ``max(MIN_II, N)`` (Scalar / GpSimd when mapped there;
                                    GpSimd rsqrt ``4 * max(MIN_II, N)``)
tensor_tensor             Vector    ``max(MIN_II, N)`` if one input is in PSUM, or both in
                                    SBUF, bf16 and op in {add, subtract, multiply};
                                    else ``max(MIN_II, 2N)`` (GpSimd for power and the
                                    native int32/uint32 path)
scalar_tensor_tensor      Vector    ``N`` (bf16, subtract then multiply, N even) else ``2N``
activation                Scalar    ``max(MIN_II, N)`` (+ ``MIN_II`` when reading
                                    reduce_res); GpSimd ``4 * max(MIN_II, N)``
activation_reduce         Scalar    ``max(MIN_II, N) + MIN_II``
reciprocal                Vector    ``max(MIN_II, 8N)``
exponential               Vector    ``max(MIN_II, N)`` (fastisa's estimate)
tensor_copy               Vector    ``max(MIN_II, N)`` (or the engine given)
tensor_reduce             Vector    ``N/2`` (bf16 in and out, add or maximum) else ``N``
select_reduce             Vector    ``max(MIN_II, N)`` (fastisa's estimate)
range_select              Vector    ``max(MIN_II, N)``
affine_select             GpSimd    ``150 + N``
nc_transpose              Vector    ``max(MIN_II, N)``; Tensor ``max(P, min(64, F))``
nc_matmul                 Tensor    ``max(min(64, M), N)`` (x4 for float32 inputs)
========================  ========  ========================================================

The select family (select_reduce, range_select, affine_select) is in
:mod:`fastisa.nki._select` and the Tensor-engine pair (nc_transpose, nc_matmul) in
:mod:`fastisa.nki._pe`; both use this module's validation helpers and kernels.
"""

from __future__ import annotations

import math
import os
import threading
import warnings

import numpy as np

from .. import cost as _cost
from .. import dtypes as _dt
from ..errors import ConstraintError
from . import ops as _ops
from .enums import engine_name, reduce_cmd as _reduce_cmd
from ..errors import UndefinedBehaviorWarning
from .tensor import (DST_PARAMS, NkiTensor, PMAX, PSUM, PSUM_DONE, PSUM_FRESH, PSUM_GROUP, PSUM_INIT,
                     discard_pending, note_access, psum_state, require_dst)

import typing as _typing

if _typing.TYPE_CHECKING:
    from collections.abc import Sequence

    from .._types import EnumLike, Int, OpLike, Real

__all__ = ["tensor_scalar", "tensor_tensor", "scalar_tensor_tensor", "activation",
           "activation_reduce", "reciprocal", "exponential", "tensor_copy", "tensor_reduce",
           "fp32"]
# select_reduce / range_select / affine_select live in ._select, nc_transpose / nc_matmul in
# ._pe (split along the families); ``_compute.<name>`` still finds them (module __getattr__).

MIN_II = _cost.MIN_II
GPSIMD_START = 150
#: Threads of the compute kernels for tiles of >= 2^16 elements and matmuls of >= 2^21
#: multiply-adds: None (default) = every CPU this process may run on (``FASTISA_THREADS``
#: when set), decided once, at the first instruction; 1 = single-threaded; 0 = the OpenMP
#: default (OMP_NUM_THREADS); n = n threads.  The threads are fastisa's persistent pool
#: (``fastisa._kernels.par``): the calling thread is one of them and takes over the tasks
#: another has not started, so a CPU the machine's load holds back delays an instruction
#: by at most the task it has begun.  Set it (or call :func:`set_num_threads`) at any time;
#: results never depend on it.
THREADS = None
_DEFAULT_THREADS = []      # the default, decided once


def _default_threads() -> int:
    env = os.environ.get("FASTISA_THREADS", "").strip()
    if env.isdigit():
        return int(env)
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _threads() -> int:
    if THREADS is not None:
        return int(THREADS)
    if not _DEFAULT_THREADS:
        _DEFAULT_THREADS.append(_default_threads())
    return _DEFAULT_THREADS[0]


#: nc_matmul's threads: the same policy (one name kept for its callers)
_mm_threads = _threads


def set_num_threads(n) -> None:
    """Threads of the NKI compute kernels (see :data:`THREADS`): None = the default (decided
    again, once), 0 = OpenMP's default, n >= 1 = n threads.  Results never depend on it."""
    global THREADS
    if n is not None and (isinstance(n, bool) or not isinstance(n, (int, np.integer))
                          or n < 0):
        raise ConstraintError(f"set_num_threads: n must be None or an integer >= 0, got {n!r}")
    THREADS = None if n is None else int(n)
    _DEFAULT_THREADS.clear()

#: -3.4028235e38, the most negative finite float32 (``nisa.fp32.min``).
FP32_MIN = float(np.finfo(np.float32).min)


class _Fp32:
    """``nisa.fp32.min``: the bit pattern 0xff7fffff (most negative finite float32)."""

    min = FP32_MIN


fp32 = _Fp32()

_UNSUPPORTED = ("float8_e8m0fnu", "float4_e2m1fn")
_CMP_OPS = ("equal", "less", "less_equal", "greater", "greater_equal")
_INT_OPS = ("add", "subtract", "multiply", "maximum", "minimum", "equal", "not_equal",
            "greater_equal", "greater", "less_equal", "less", "logical_and", "logical_or",
            "logical_xor")


_KMOD = [None]


def _kernels():
    k = _KMOD[0]          # imported on first use (the module imports fastisa.nki parts)
    if k is None:
        from .._kernels import nki as k
        _KMOD[0] = k
    return k


# ---- validation helpers ------------------------------------------------------------------
def _tensor(instr, param, x, note=True, allow_repeats=False) -> NkiTensor:
    if not isinstance(x, NkiTensor):
        raise ConstraintError(f"{instr}: {param} must be an NkiTensor, got {type(x).__name__}")
    if x.ndim < 2:
        raise ConstraintError(f"{instr}: {param} must have a partition and a free dimension, "
                              f"got shape {x.shape}")
    if x.ndim > 5:
        raise ConstraintError(f"{instr}: {param} must have rank <= 5 (at most four free "
                              f"dimensions), got rank {x.ndim}")
    if x.partitions > PMAX:
        raise ConstraintError(f"{instr}: {param} partition dimension must be <= {PMAX}, got "
                              f"{x.partitions}")
    if param in DST_PARAMS:
        require_dst(instr, param, x, allow_repeats)
    if note and x.buffer is PSUM:
        note_access(param, x)
    return x


def _onchip(instr, param, t, allow_psum=True):
    allowed = ("sbuf", "psum") if allow_psum else ("sbuf",)
    if t.buffer.name not in allowed:
        raise ConstraintError(f"{instr}: {param} must be in {' or '.join(allowed)}, got "
                              f"{t.buffer.name}")


def _computable(instr, param, t):
    fmt = t.dtype
    if fmt.kind == "packed":
        raise ConstraintError(f"{instr}: {param} dtype must not be a packed x4 type, got "
                              f"{fmt.name}")
    if fmt.name in _UNSUPPORTED:
        raise NotImplementedError(f"{instr}: {param} dtype {fmt.name} is not implemented by "
                                  f"fastisa's compute instructions")


def _same_shape(instr, a_name, a, b_name, b):
    if a.partitions != b.partitions:
        raise ConstraintError(f"{instr}: {a_name} and {b_name} must have the same partition "
                              f"dimension, got {a.partitions} and {b.partitions}")
    if a.free_size != b.free_size:
        raise ConstraintError(f"{instr}: {a_name} and {b_name} must have the same number of "
                              f"elements per partition, got {a.free_size} and {b.free_size}")


def _op(instr, param, op, *, kinds=None, activation=False):
    op = _ops.coerce(op)
    if not isinstance(op, _ops.Op):
        raise ConstraintError(f"{instr}: {param} must be an nki.language operator, got {op!r}")
    if activation and not op.is_activation:
        raise ConstraintError(f"{instr}: {param} must be an activation function (the NKI docs, page NKI ISA API Common Fields (github.com/aws-neuron/aws-neuron-sdk, nki/api/nki.api.shared.rst) "
                              f"Table 9), got {op!r}")
    if not op.isa and not getattr(_LANGUAGE, "on", False):
        raise ConstraintError(f"{instr}: {param} {op!r} is an nki.language function, not an "
                              f"nki.isa operator (SDK 2.33's Table 8, nki/api/nki.api.shared.rst, "
                              f"lists no such ALU op); call {op!r}(x, ...) on tiles instead")
    if not activation and not op.is_operator:
        raise ConstraintError(f"{instr}: {param} must be a math operator (the NKI docs, page NKI ISA API Common Fields (github.com/aws-neuron/aws-neuron-sdk, nki/api/nki.api.shared.rst) Table 8), "
                              f"got {op!r}")
    return op


def _target():
    cap = getattr(_PLAN_CAPTURE, "calls", None)
    if cap is not None:     # a check that depends on the target: no per-signature plan
        cap.append("target")
    from . import language
    return language.target()


def _require_target(instr, what, targets):
    t = _target()
    if t not in targets:
        raise ConstraintError(f"{instr}: {what} requires target {' or '.join(targets)}, got "
                              f"{t}")


def _is_int(fmt) -> bool:
    return fmt.kind in ("int", "bool")


def _rows(t: NkiTensor) -> np.ndarray:
    """[P, F] view of a tensor's storage (a copy when strides do not allow a view)."""
    return t.data.reshape(t.partitions, t.free_size)


def _dst_rows(t: NkiTensor):
    """([P, F] view to write, or a temporary) and a function that commits the temporary.
    A dst repeating elements (zero steps) gets a temporary whose commit keeps, for each
    element, the last write in access order."""
    zero = tuple(d for d, (st, n) in enumerate(zip(t.data.strides, t.data.shape))
                 if st == 0 and n > 1)
    if zero:
        tmp = np.empty((t.partitions, t.free_size), t.data.dtype)
        last = tuple(-1 if d in zero else slice(None) for d in range(t.data.ndim))
        first = tuple(0 if d in zero else slice(None) for d in range(t.data.ndim))
        return tmp, lambda: t.data[first].__setitem__(Ellipsis, tmp.reshape(t.shape)[last])
    v = t.data.view()
    try:
        v.shape = (t.partitions, t.free_size)
        return v, None
    except (AttributeError, ValueError):
        tmp = np.array(t.data.reshape(t.partitions, t.free_size), copy=True)
        return tmp, lambda: t.data.__setitem__(Ellipsis, tmp.reshape(t.shape))


def _unalias(src_rows, dst_rows):
    """A copy of src_rows when it shares memory with dst_rows in a different layout."""
    if np.may_share_memory(src_rows, dst_rows) and np.shares_memory(src_rows, dst_rows):
        same = (src_rows.__array_interface__["data"][0] == dst_rows.__array_interface__["data"][0]
                and src_rows.strides == dst_rows.strides and src_rows.itemsize == dst_rows.itemsize)
        if not same:
            return np.array(src_rows, copy=True)
    return src_rows


def _f32_vec(t: NkiTensor) -> np.ndarray:
    """A [P, 1] tensor's values as float32 [P] (exact for floats; integers RNE)."""
    from ._cast import to_f32
    return np.ascontiguousarray(to_f32(t.data, t.dtype).reshape(t.partitions))


def _scalar_operand(instr, param, value, P, *, bitvec=False, allow_none=False):
    """(float32 [P] or [1] array, uint32 array or None) for a scalar / [P, 1] operand."""
    if value is None:
        if allow_none:
            return None, None
        raise ConstraintError(f"{instr}: {param} must be a scalar or a [P, 1] tensor, got None")
    if isinstance(value, NkiTensor):
        if value.partitions != P or value.free_size != 1:
            raise ConstraintError(f"{instr}: {param} must be a scalar or a [{P}, 1] tensor "
                                  f"(one value per partition), got shape {value.shape}")
        _onchip(instr, param, value)
        _computable(instr, param, value)
        if bitvec:
            if not _is_int(value.dtype):
                raise ConstraintError(f"{instr}: {param} of a bitvec op must have an integer "
                                      f"dtype, got {value.dtype.name}")
            bits = value.data.reshape(P)
            width = value.dtype.itemsize * 8
            u = (bits.astype(np.int64) & ((1 << width) - 1)).astype(np.uint32)
            return None, u
        return _f32_vec(value), None
    if isinstance(value, (bool, np.bool_)):
        value = int(value)
    if bitvec:
        if isinstance(value, (float, np.floating)):
            if not float(value).is_integer():
                raise ConstraintError(f"{instr}: {param} of a bitvec op must be an integer, got "
                                      f"{value!r}")
            value = int(value)
        if not isinstance(value, (int, np.integer)):
            raise ConstraintError(f"{instr}: {param} must be an int or a [P, 1] tensor, got "
                                  f"{type(value).__name__}")
        v = int(value)
        if not -(1 << 31) <= v < (1 << 32):
            raise ConstraintError(f"{instr}: {param} of a bitvec op must fit in 32 bits, got "
                                  f"{v}")
        return None, np.array([v & 0xFFFFFFFF], np.uint32)
    if not isinstance(value, (int, float, np.integer, np.floating)):
        raise ConstraintError(f"{instr}: {param} must be a float32 scalar or a [P, 1] tensor, "
                              f"got {type(value).__name__}")
    return np.array([np.float32(value)], np.float32), None


def _stage(op, rev=False, tensor=False, fvec=None, uvec=None):
    return (0 if op is None else op.alu, int(bool(rev)), int(bool(tensor)), fvec, uvec)


_NO_STAGE = (0, 0, 0, None, None)


#: Per thread: ``on`` while fastisa.nki.tiles runs an nki.language-only function
#: (``nl.divide`` ...) on tensor_scalar / tensor_tensor (see fastisa.nki.ops.LANGUAGE_ONLY).
_LANGUAGE = threading.local()

#: Per thread: a list while fastisa.nki._plan records the kernel calls of one instruction.
_PLAN_CAPTURE = threading.local()


def _run_ew(instr, dst, in0, *, in1=None, stages=(_NO_STAGE, _NO_STAGE), raw=False,
            bitvec=False, act=None, scalar_engine=False, alpha=0.0, acc=None, acc_max=False,
            lut_ok=False, intmode=False, alpha_vec=None):
    """Run the elementwise kernel on NkiTensors (any free rank).  Returns #out-of-range."""
    cap = getattr(_PLAN_CAPTURE, "calls", None)
    if cap is not None:     # fastisa.nki._plan is recording this call's plan
        cap.append((dst, in0, in1, stages, raw, bitvec, act, acc, lut_ok, intmode))
    k = _kernels()
    d, commit = _dst_rows(dst)
    s0 = _unalias(_rows(in0), d)
    s1 = None if in1 is None else _unalias(_rows(in1), d)
    lutp = None
    act_code = 0 if act is None else act.act
    if (act is not None and lut_ok and alpha_vec is None and in0.dtype.itemsize <= 2 and in0.dtype.kind != "packed"
            and d.size >= (1 << 17) and stages[0][0] == 0 and stages[1][0] == 0
            and not acc_max and dst.dtype.kind != "packed"
            and not (scalar_engine and act.scalar_range != (-math.inf, math.inf, False))):
        lutp = _act_table(act, in0.dtype, dst.dtype, alpha, scalar_engine)
    oor = k.elementwise(d, dst.dtype.code, s0, in0.dtype.code, s1,
                        0 if in1 is None else in1.dtype.code, stages, raw=int(raw),
                        bitvec=int(bitvec), act=act_code, scalar_engine=int(scalar_engine),
                        alpha=float(alpha), acc=acc, acc_max=int(acc_max),
                        threads=_threads(), lutp=lutp, intmode=int(intmode),
                        alpha_vec=alpha_vec)
    if commit is not None:
        commit()
    return oor


_LUTS: dict = {}


def _act_table(act, fmt, dst_fmt, alpha, scalar_engine):
    """Table over every code of a <=16-bit input format (cached per process): uint64
    entries, bits 0-31 the float32 result of the activation, bits 32-63 dst's encoding.

    Built with the same C functions the kernel calls per element (fi_nki_act, then one
    rounding), so a lookup gives exactly the bits of the direct path.
    """
    key = (act.name, fmt.name, dst_fmt.name, float(alpha), bool(scalar_engine))
    t = _LUTS.get(key)
    if t is None:
        bits = fmt.itemsize * 8
        codes = np.arange(1 << bits, dtype=np.uint8 if bits == 8 else np.uint16)
        with np.errstate(invalid="ignore"):
            x = codes.view(fmt.np_dtype).astype(np.float32).astype(np.float64)
        y = np.empty(1 << bits, np.float64)
        k = _kernels()
        k.act_table(act.act, float(alpha), int(scalar_engine), x, y)
        with np.errstate(over="ignore", invalid="ignore"):
            yf = y.astype(np.float32)
        yd = np.empty(1 << bits, dst_fmt.np_dtype)
        k.encode_f64(dst_fmt.code, y, yd)
        code = yd.view({1: np.uint8, 2: np.uint16, 4: np.uint32}[yd.itemsize]).astype(np.uint64)
        t = (code << np.uint64(32)) | yf.view(np.uint32).astype(np.uint64)
        _LUTS[key] = t
    return t


def _regs(engine: str) -> np.ndarray:
    """The 128 float32 accumulator registers of ``engine`` for the current kernel instance."""
    from . import language
    m = language._machine()
    attr = "_fastisa_acc_" + engine
    r = getattr(m, attr, None)
    if r is None:
        r = np.zeros(PMAX, np.float32)
        setattr(m, attr, r)
    return r


def _cmd_name(instr, value) -> str:
    if value is None:
        return "idle"
    name = value if isinstance(value, str) else getattr(value, "name", None)
    if name not in _reduce_cmd.__members__:
        raise ConstraintError(f"{instr}: reduce_cmd must be one of "
                              f"{sorted(_reduce_cmd.__members__)}, got {value!r}")
    return name


def _write_vec(instr, param, t, values, P):
    """Write float32 values [P] into a [P, 1] tensor (rounded once to its dtype)."""
    if not isinstance(t, NkiTensor):
        raise ConstraintError(f"{instr}: {param} must be an NkiTensor, got {type(t).__name__}")
    if t.partitions != P or t.free_size != 1:
        raise ConstraintError(f"{instr}: {param} must have shape [{P}, 1] (one element per "
                              f"partition), got {t.shape}")
    _onchip(instr, param, t)
    _computable(instr, param, t)
    require_dst(instr, param, t)
    src = NkiTensor(np.ascontiguousarray(values, np.float32).reshape(P, 1), _dt.float32)
    _run_ew(instr, t, src)


def _check_reduce_res(instr, reduce_res, P):
    if reduce_res is None:
        return
    if not isinstance(reduce_res, NkiTensor):
        raise ConstraintError(f"{instr}: reduce_res must be an NkiTensor, got "
                              f"{type(reduce_res).__name__}")
    if reduce_res.partitions != P or reduce_res.free_size != 1:
        raise ConstraintError(f"{instr}: reduce_res must have shape [{P}, 1] (one element per "
                              f"partition), got {reduce_res.shape}")
    _onchip(instr, "reduce_res", reduce_res)
    _computable(instr, "reduce_res", reduce_res)
    require_dst(instr, "reduce_res", reduce_res)


def _unary_operand_ok(value) -> bool:
    if value is None:
        return True
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
        return float(value) == 0.0
    return False


# ---- tensor_scalar -------------------------------------------------------------------------
def tensor_scalar(dst: NkiTensor, data: NkiTensor, op0: OpLike, operand0: NkiTensor | Real | None,
                  reverse0: bool = False, op1: OpLike | None = None,
                  operand1: NkiTensor | Real | None = None, reverse1: bool = False,
                  engine: EnumLike | None = None, name: str | None = None) -> None:
    """``dst = (data op0 operand0) op1 operand1`` with operands broadcast along the free axis.

    ``reverse0`` computes ``operand0 op0 data``; ``reverse1`` computes ``operand1 op1 t``.

    Parameters
    ----------
    dst, data : NkiTensor [P, ...] in SBUF or PSUM, P <= 128, same partitions and elements
        per partition; any unpacked dtype (arithmetic) or integer dtypes (bitvec).
    op0, op1 : nki.language operators (the NKI docs, page NKI ISA API Common Fields (github.com/aws-neuron/aws-neuron-sdk, nki/api/nki.api.shared.rst) Table 8), both arithmetic or both bitvec.
        Unary ops (abs, square, relu, rsqrt, reciprocal, invert) take operand None or 0.
    operand0, operand1 : float32 scalar (int for bitvec) or a [P, 1] tensor (one value per
        partition) in SBUF / PSUM.
    engine : nisa.engine (unknown -> Vector).  ScalarE supports only (multiply, add),
        (multiply, None), (add, None); GpSimd only rsqrt (SBUF only); bitvec only Vector.

    Raises ConstraintError for any violated rule above; NotImplementedError for
    float8_e8m0fnu.  Cost: ``max(MIN_II, N)`` on the engine (GpSimd ``4*max(MIN_II, N)``).
    Reference: the NKI docs and simulator guide (github.com/aws-neuron/aws-neuron-sdk, nki/api/ and nki/guides/nki_simulator.rst); the NKI docs, page NKI ISA API Common Fields (github.com/aws-neuron/aws-neuron-sdk, nki/api/nki.api.shared.rst) Table 8.
    """
    instr = "tensor_scalar"
    _tensor(instr, "dst", dst)
    _tensor(instr, "data", data)
    _onchip(instr, "dst", dst)
    _onchip(instr, "data", data)
    _same_shape(instr, "dst", dst, "data", data)
    _computable(instr, "dst", dst)
    _computable(instr, "data", data)
    op0 = _op(instr, "op0", op0)
    if op1 is not None:
        op1 = _op(instr, "op1", op1)
        if op0.is_bitvec != op1.is_bitvec:
            raise ConstraintError(f"{instr}: op0 and op1 must both be bitvec or both arithmetic, "
                                  f"got {op0!r} ({op0.kind}) and {op1!r} ({op1.kind})")
    bitvec = op0.is_bitvec
    if bitvec:
        for pname, t in (("data", data), ("dst", dst)):
            if not _is_int(t.dtype):
                raise ConstraintError(f"{instr}: bitvec op {op0!r} needs integer dtypes; {pname} "
                                      f"is {t.dtype.name}")
    eng = engine_name(instr, engine, ("unknown", "vector", "scalar", "gpsimd"))
    if eng == "unknown":
        eng = "vector"
    if bitvec and eng != "vector":
        raise ConstraintError(f"{instr}: bitvec ops run on the Vector engine only, got engine "
                              f"{eng}")
    if eng == "scalar":
        pair = (op0.name, None if op1 is None else op1.name)
        if pair not in (("multiply", "add"), ("multiply", None), ("add", None)):
            raise ConstraintError(f"{instr}: the Scalar engine supports only (multiply, add), "
                                  f"(multiply, None) and (add, None), got {pair}")
    if eng == "gpsimd":
        if op0.name != "rsqrt" or op1 is not None:
            raise ConstraintError(f"{instr}: the GpSimd engine supports only op0=nl.rsqrt with "
                                  f"op1=None, got ({op0!r}, {op1!r})")
        _onchip(instr, "dst", dst, allow_psum=False)
        _onchip(instr, "data", data, allow_psum=False)
    for o in (op0, op1):
        if o is not None and o.name in ("abs_max", "abs_min"):
            _require_target(instr, f"{o!r}", ("trn3",))
    P = data.partitions
    stages = []
    for i, (o, operand, rev) in enumerate(((op0, operand0, reverse0), (op1, operand1, reverse1))):
        pname = f"operand{i}"
        if o is None:
            stages.append(_NO_STAGE)
            continue
        if o.is_unary:
            if not _unary_operand_ok(operand):
                raise ConstraintError(f"{instr}: {pname} of the unary op {o!r} must be None or 0, "
                                      f"got {operand!r}")
            stages.append(_stage(o))
            continue
        fv, uv = _scalar_operand(instr, pname, operand, P, bitvec=bitvec)
        stages.append(_stage(o, rev, False, fv, uv))
    _run_ew(instr, dst, data, stages=tuple(stages), bitvec=bitvec)
    n = data.free_size
    cyc = max(MIN_II, n) * (4 if eng == "gpsimd" else 1)
    _cost.record({"vector": "Vector", "scalar": "Scalar", "gpsimd": "GpSimd"}[eng], instr, cyc)


# ---- tensor_tensor -------------------------------------------------------------------------
def tensor_tensor(dst: NkiTensor, data1: NkiTensor, data2: NkiTensor, op: OpLike,
                  engine: EnumLike | None = None, name: str | None = None) -> None:
    """``dst = data1 op data2`` element-wise.

    Parameters
    ----------
    dst, data1, data2 : NkiTensor [P, ...] in SBUF or PSUM (not both inputs in PSUM), same
        partitions and elements per partition.
    op : a binary operator of the NKI docs, page NKI ISA API Common Fields (github.com/aws-neuron/aws-neuron-sdk, nki/api/nki.api.shared.rst) Table 8 (unary ops are rejected); bitvec ops need
        integer dtypes everywhere.  ``nl.power`` runs on GpSimd (SBUF only).
    engine : unknown (Vector; GpSimd for power), vector or gpsimd.

    Arithmetic is float32, except when dst, data1 and data2 are all int32/uint32 and the op
    is add, subtract, multiply, maximum, minimum, a comparison or a logical op: then the
    default engine is GpSimd (Vector when a tensor is in PSUM) and GpSimd computes exactly
    in integers, the result wrapped to dst's 32 bits (two's complement); ``engine=vector``
    keeps the float32 path.  Raises ConstraintError.
    Cost: ``max(MIN_II, N)`` if one input is in PSUM, or both are bf16 in SBUF and op is
    add/subtract/multiply; otherwise ``max(MIN_II, 2N)``.  Reference: the NKI docs and simulator guide (github.com/aws-neuron/aws-neuron-sdk, nki/api/ and nki/guides/nki_simulator.rst).
    """
    instr = "tensor_tensor"
    for pname, t in (("dst", dst), ("data1", data1), ("data2", data2)):
        _tensor(instr, pname, t)
        _onchip(instr, pname, t)
        _computable(instr, pname, t)
    _same_shape(instr, "dst", dst, "data1", data1)
    _same_shape(instr, "data1", data1, "data2", data2)
    if data1.buffer.name == "psum" and data2.buffer.name == "psum":
        raise ConstraintError(f"{instr}: data1 and data2 must not both be in psum, got psum and "
                              f"psum")
    op = _op(instr, "op", op)
    if op.is_unary:
        raise ConstraintError(f"{instr}: op must be a binary operator, got the unary {op!r}")
    if op.is_bitvec:
        for pname, t in (("dst", dst), ("data1", data1), ("data2", data2)):
            if not _is_int(t.dtype):
                raise ConstraintError(f"{instr}: bitvec op {op!r} needs integer dtypes; {pname} "
                                      f"is {t.dtype.name}")
    eng = engine_name(instr, engine, ("unknown", "vector", "gpsimd"))
    all_i32 = all(t.dtype.name in ("int32", "uint32") for t in (dst, data1, data2))
    any_psum = any(t.buffer.name == "psum" for t in (dst, data1, data2))
    native_int = all_i32 and op.name in _INT_OPS
    if eng == "unknown":
        eng = "gpsimd" if op.name == "power" or (native_int and not any_psum) else "vector"
    if op.is_bitvec and eng != "vector":
        raise ConstraintError(f"{instr}: bitvec ops run on the Vector engine only, got {eng}")
    if op.name == "power" and eng != "gpsimd":
        raise ConstraintError(f"{instr}: nl.power runs on the GpSimd engine only, got {eng}")
    if eng == "gpsimd":
        for pname, t in (("dst", dst), ("data1", data1), ("data2", data2)):
            _onchip(instr, pname, t, allow_psum=False)
    _run_ew(instr, dst, data1, in1=data2, stages=(_stage(op, tensor=True), _NO_STAGE),
            bitvec=op.is_bitvec, intmode=native_int and eng == "gpsimd")
    n = data1.free_size
    one_psum = (data1.buffer.name == "psum") != (data2.buffer.name == "psum")
    fast = one_psum or (data1.dtype.name == data2.dtype.name == "bfloat16"
                        and op.name in ("add", "subtract", "multiply"))
    _cost.record("GpSimd" if eng == "gpsimd" else "Vector", instr,
                 max(MIN_II, n if fast else 2 * n))


# ---- scalar_tensor_tensor ------------------------------------------------------------------
def scalar_tensor_tensor(dst: NkiTensor, data: NkiTensor, op0: OpLike, operand0: NkiTensor | Real,
                         op1: OpLike | None, operand1: NkiTensor | Real | None,
                         reverse0: bool = False, reverse1: bool = False,
                         reduce_cmd: EnumLike | None = None, reduce_op: OpLike | None = None,
                         reduce_res: NkiTensor | None = None, name: str | None = None) -> None:
    """``dst = (data op0 operand0) op1 operand1`` on the Vector engine.

    Parameters
    ----------
    dst, data, operand1 : NkiTensor [P, ...] in SBUF or PSUM (data and operand1 not both in
        PSUM), same partitions and elements per partition.
    op0, op1 : binary ARITHMETIC operators of the NKI docs, page NKI ISA API Common Fields (github.com/aws-neuron/aws-neuron-sdk, nki/api/nki.api.shared.rst) Table 8 (bitvec ops are rejected).
    operand0 : float32 scalar or [P, 1] tensor.
    reverse0 : ``operand0 op0 data``; reverse1 : ``operand1 op1 t``.
    reduce_op : None (no accumulation; the default), nl.add or nl.maximum: fold the
        float32 results of each partition into the Vector engine's registers per
        ``reduce_cmd`` (``reset_reduce`` by default when reduce_op is given; ``reduce``,
        ``reset``, ``idle``); reduce_res: optional [P, 1] tensor receiving the registers.

    Raises ConstraintError.  Cost: ``N`` when data/operand1 are bf16, op0 is subtract,
    op1 multiply and N is even, else ``2N`` (Vector).  Reference: the NKI docs and simulator guide (github.com/aws-neuron/aws-neuron-sdk, nki/api/ and nki/guides/nki_simulator.rst);
    NKI 0.7 ``scalar_tensor_tensor``.
    """
    instr = "scalar_tensor_tensor"
    for pname, t in (("dst", dst), ("data", data), ("operand1", operand1)):
        _tensor(instr, pname, t)
        _onchip(instr, pname, t)
        _computable(instr, pname, t)
    _same_shape(instr, "dst", dst, "data", data)
    _same_shape(instr, "data", data, "operand1", operand1)
    if data.buffer.name == "psum" and operand1.buffer.name == "psum":
        raise ConstraintError(f"{instr}: data and operand1 must not both be in psum")
    op0 = _op(instr, "op0", op0)
    op1 = _op(instr, "op1", op1)
    for pname, o in (("op0", op0), ("op1", op1)):
        if o.is_bitvec:
            raise ConstraintError(f"{instr}: {pname} must be an arithmetic operator (bitvec ops "
                                  f"are not supported), got {o!r}")
        if o.is_unary:
            raise ConstraintError(f"{instr}: {pname} must be a binary operator, got the unary "
                                  f"{o!r}")
    P = data.partitions
    if reduce_op is Ellipsis:
        reduce_op = None
    reduce_op = _ops.coerce(reduce_op)
    if reduce_op is not None and not (isinstance(reduce_op, _ops.Op) and
                                      reduce_op.name in ("add", "maximum")):
        raise ConstraintError(f"{instr}: reduce_op must be nl.add or nl.maximum, got "
                              f"{reduce_op!r}")
    cmd = _cmd_name(instr, reduce_cmd) if reduce_cmd is not None else \
        ("reset_reduce" if reduce_op is not None else "idle")
    if cmd == "load_reduce":
        raise ConstraintError(f"{instr}: reduce_cmd must be idle, reset, reduce or "
                              f"reset_reduce, got load_reduce")
    if cmd in ("reduce", "reset_reduce") and reduce_op is None:
        raise ConstraintError(f"{instr}: reduce_cmd {cmd} needs reduce_op (nl.add or "
                              f"nl.maximum), got None")
    _check_reduce_res(instr, reduce_res, P)
    fv, _ = _scalar_operand(instr, "operand0", operand0, P)
    is_max = reduce_op is not None and reduce_op.name == "maximum"
    regs = _regs("vector")
    if cmd in ("reset", "reset_reduce"):
        regs[:P] = -np.inf if is_max else 0.0
    acc = np.array(regs[:P], copy=True) if cmd in ("reduce", "reset_reduce") else None
    _run_ew(instr, dst, data, in1=operand1,
            stages=(_stage(op0, reverse0, False, fv), _stage(op1, reverse1, True)),
            acc=acc, acc_max=is_max)
    if acc is not None:
        regs[:P] = acc
    if reduce_res is not None:
        _write_vec(instr, "reduce_res", reduce_res, regs[:P], P)
    n = data.free_size
    fast = (data.dtype.name == operand1.dtype.name == "bfloat16" and op0.name == "subtract"
            and op1.name == "multiply" and n % 2 == 0)
    _cost.record("Vector", instr, n if fast else 2 * n)


# ---- activation ------------------------------------------------------------------------------
def activation(dst: NkiTensor, op: OpLike, data: NkiTensor, bias: NkiTensor | Real | None = None,
               scale: NkiTensor | Real = 1.0, reduce_op: OpLike | None = None,
               reduce_res: NkiTensor | None = None, reduce_cmd: EnumLike | None = None,
               engine: EnumLike | None = None, name: str | None = None):
    """``dst = op(data * scale + bias)``, optionally accumulating per lane.

    Parameters
    ----------
    dst, data : NkiTensor [P, ...] in SBUF or PSUM (SBUF only on GpSimd), same partitions
        and elements per partition, any unpacked dtype.
    op : an activation function of the NKI docs, page NKI ISA API Common Fields (github.com/aws-neuron/aws-neuron-sdk, nki/api/nki.api.shared.rst) Table 9 implemented on ``engine``.
    bias : None, a float32 scalar, or a [P, 1] tensor (any dtype but tfloat32).  On trn1
        (NC-v2) bias must be a [P, 1] tensor and op=reciprocal takes no bias.
    scale : float32 scalar or [P, 1] tensor.
    reduce_op : None or nl.add (the ScalarE registers only sum).
    reduce_cmd : nisa.reduce_cmd: ``idle`` (registers untouched), ``reset`` (set to 0),
        ``reduce`` (add this instruction's per-lane sum), ``reset_reduce`` (0, then add).
    reduce_res : optional [P, 1] tensor that receives the registers after the instruction.
    engine : nisa.engine.scalar (default) or gpsimd (trn3 / NeuronCore-v4+ only; no
        accumulator).

    ``data*scale`` and ``+bias`` are float32 operations; the function is evaluated in
    float64 and rounded once to dst.dtype; on ScalarE an input outside the valid range
    gives a RuntimeWarning and the accurate value, except sin (ScalarE's cubic).  The
    registers sum the float32-rounded results left to right.

    Raises ConstraintError.  Cost: Scalar ``max(MIN_II, N)`` (+``MIN_II`` with reduce_res);
    GpSimd ``4*max(MIN_II, N)`` (fastisa's estimate, from the NKI docs, page NKI ISA API Common Fields (github.com/aws-neuron/aws-neuron-sdk, nki/api/nki.api.shared.rst)'s rsqrt ratio).
    Reference: the NKI docs, page NKI ISA API Common Fields (github.com/aws-neuron/aws-neuron-sdk, nki/api/nki.api.shared.rst) Table 9; the NKI docs and simulator guide (github.com/aws-neuron/aws-neuron-sdk, nki/api/ and nki/guides/nki_simulator.rst).
    """
    return _activation("activation", dst, op, data, bias, scale, reduce_op, reduce_res,
                       reduce_cmd, engine)


def _activation(instr, dst, op, data, bias, scale, reduce_op, reduce_res, reduce_cmd, engine):
    # a dst that repeats elements (``act.ap([[1, n], [0, H]])``: nki-library's qkv_cte
    # keeps only reduce_res and points dst at one column) is written in access order
    _tensor(instr, "dst", dst, allow_repeats=True)
    _tensor(instr, "data", data)
    _same_shape(instr, "dst", dst, "data", data)
    _computable(instr, "dst", dst)
    _computable(instr, "data", data)
    op = _op(instr, "op", op, activation=True)
    eng = engine_name(instr, engine, ("unknown", "scalar", "gpsimd"))
    if eng == "unknown":
        eng = "scalar"
    if eng not in op.engines:
        raise ConstraintError(f"{instr}: {op!r} is not implemented on the {eng} engine "
                              f"(the NKI docs, page NKI ISA API Common Fields (github.com/aws-neuron/aws-neuron-sdk, nki/api/nki.api.shared.rst) Table 9: {', '.join(op.engines)})")
    if eng == "gpsimd":
        _require_target(instr, "engine=gpsimd", ("trn3",))
    allow_psum = eng == "scalar"
    _onchip(instr, "dst", dst, allow_psum)
    _onchip(instr, "data", data, allow_psum)
    P = data.partitions
    cmd = _cmd_name(instr, reduce_cmd)
    reduce_op = _ops.coerce(reduce_op)
    if reduce_op is not None and not (isinstance(reduce_op, _ops.Op) and reduce_op.name == "add"):
        raise ConstraintError(f"{instr}: reduce_op must be nl.add (the Scalar engine registers "
                              f"only sum), got {reduce_op!r}")
    if cmd == "load_reduce":
        raise ConstraintError(f"{instr}: reduce_cmd must be idle, reset, reduce or reset_reduce, "
                              f"got load_reduce")
    if eng == "gpsimd" and (cmd != "idle" or reduce_res is not None or reduce_op is not None):
        raise ConstraintError(f"{instr}: the accumulator is only available on the Scalar "
                              f"engine, got engine gpsimd with reduce_cmd {cmd}")
    _check_reduce_res(instr, reduce_res, P)
    target = _target()
    if isinstance(bias, NkiTensor) and bias.dtype.name == "tfloat32":
        raise ConstraintError(f"{instr}: bias dtype must not be tfloat32, got tfloat32")
    if target == "trn1" and bias is not None:
        if not isinstance(bias, NkiTensor):
            raise ConstraintError(f"{instr}: on trn1 (NeuronCore-v2) bias must be a [P, 1] "
                                  f"tensor, got {bias!r}")
        if op.name == "reciprocal":
            raise ConstraintError(f"{instr}: nl.reciprocal does not support bias on trn1 "
                                  f"(NeuronCore-v2)")
    fs, _ = _scalar_operand(instr, "scale", scale, P)
    fb, _ = _scalar_operand(instr, "bias", bias, P, allow_none=True)
    unit_scale = fs.shape[0] == 1 and fs[0] == np.float32(1.0)
    stages = (_NO_STAGE if unit_scale else _stage(_ops.multiply, False, False, fs),
              _NO_STAGE if fb is None else _stage(_ops.add, False, False, fb))
    regs = _regs("scalar")
    if cmd in ("reset", "reset_reduce"):
        regs[:P] = 0.0
    acc = None
    if cmd in ("reduce", "reset_reduce"):
        acc = np.array(regs[:P], copy=True)
    oor = _run_ew(instr, dst, data, stages=stages, act=op, scalar_engine=(eng == "scalar"),
                  acc=acc, lut_ok=True)
    if acc is not None:
        regs[:P] = acc
    if oor and op.name != "sin":
        lo, hi, sym = op.scalar_range
        rng = f"+-[{lo:g}, {hi:g}]" if sym else f"[{lo:g}, {hi:g}]"
        warnings.warn(f"{instr}: {oor} input(s) of {op!r} outside the Scalar engine's valid "
                      f"range {rng} (hardware gives invalid results there); fastisa returns "
                      f"the accurate values", RuntimeWarning, stacklevel=3)
    if reduce_res is not None:
        _write_vec(instr, "reduce_res", reduce_res, regs[:P], P)
    n = data.free_size
    if eng == "gpsimd":
        _cost.record("GpSimd", instr, 4 * max(MIN_II, n))
    else:
        _cost.record("Scalar", instr, max(MIN_II, n) + (MIN_II if reduce_res is not None else 0))


def activation_reduce(dst: NkiTensor, op: OpLike, data: NkiTensor, reduce_op: OpLike,
                      reduce_res: NkiTensor, bias: NkiTensor | Real | None = None,
                      scale: NkiTensor | Real = 1.0, name: str | None = None):
    """``activation`` with ``reduce_cmd=reset_reduce``: ``reduce_res[p] = sum_f dst_f32[p, f]``.

    Same parameters and rules as :func:`activation`; ``reduce_op`` must be nl.add and
    ``reduce_res`` a [P, 1] tensor.  Cost: Scalar ``max(MIN_II, N) + MIN_II``.
    Reference: the NKI docs and simulator guide (github.com/aws-neuron/aws-neuron-sdk, nki/api/ and nki/guides/nki_simulator.rst).
    """
    instr = "activation_reduce"
    if reduce_res is None:
        raise ConstraintError(f"{instr}: reduce_res must be a [P, 1] tensor, got None")
    if reduce_op is None:
        raise ConstraintError(f"{instr}: reduce_op must be nl.add, got None")
    return _activation(instr, dst, op, data, bias, scale, reduce_op, reduce_res,
                       "reset_reduce", "scalar")


# ---- reciprocal / exponential ---------------------------------------------------------------
def reciprocal(dst: NkiTensor, data: NkiTensor, name: str | None = None) -> None:
    """``dst = 1 / data`` on the Vector engine: float32 division, rounded once to dst.dtype.

    dst, data : NkiTensor [P, ...] in SBUF or PSUM, same partitions and elements per
    partition, any unpacked dtype.  Raises ConstraintError.
    Cost: ``max(MIN_II, 8*N)`` Vector cycles (the NKI docs, page NKI ISA API Common Fields (github.com/aws-neuron/aws-neuron-sdk, nki/api/nki.api.shared.rst) "NKI Engine Selection").
    """
    instr = "reciprocal"
    for pname, t in (("dst", dst), ("data", data)):
        _tensor(instr, pname, t)
        _onchip(instr, pname, t)
        _computable(instr, pname, t)
    _same_shape(instr, "dst", dst, "data", data)
    _run_ew(instr, dst, data, stages=(_stage(_ops.reciprocal), _NO_STAGE))
    _cost.record("Vector", instr, max(MIN_II, 8 * data.free_size))


_EXP_DST = ("float8_e4m3", "float8_e5m2", "float16", "bfloat16", "float32", "tfloat32",
            "int8", "int16", "int32", "uint8", "uint16")


def exponential(dst: NkiTensor, src: NkiTensor, max_value: Real = 0.0,
                reduce_res: NkiTensor | None = None, reduce_cmd: EnumLike | None = None,
                reduce_init: Real | None = 0.0, name: str | None = None) -> None:
    """``dst = exp(src - max_value)`` on the Vector engine (trn3 / NeuronCore-v4+ only).

    Parameters
    ----------
    dst, src : NkiTensor [P, ...] in SBUF or PSUM, same partitions and elements per
        partition; dst dtype one of fp8_e4m3, fp8_e5m2, fp16, bf16, fp32, tf32, int8/16/32,
        uint8/16.
    max_value : float32 scalar or [P, 1] tensor (subtracted in float32).
    reduce_cmd : VectorE accumulator: ``idle`` (untouched), ``reset`` (0), ``reduce``
        (add the row sums), ``reset_reduce`` (0 then add), ``load_reduce`` (reduce_init then
        add).  reduce_res: optional [P, 1] tensor receiving the registers.

    exp is evaluated in float64 and rounded once; the registers sum the float32-rounded
    results.  Raises ConstraintError.  Cost: ``max(MIN_II, N)`` Vector (fastisa's estimate).
    Reference: the NKI docs and simulator guide (github.com/aws-neuron/aws-neuron-sdk, nki/api/ and nki/guides/nki_simulator.rst).
    """
    instr = "exponential"
    _require_target(instr, "exponential", ("trn3",))
    for pname, t in (("dst", dst), ("src", src)):
        _tensor(instr, pname, t)
        _onchip(instr, pname, t)
        _computable(instr, pname, t)
    _same_shape(instr, "dst", dst, "src", src)
    if dst.dtype.name not in _EXP_DST:
        raise ConstraintError(f"{instr}: dst dtype must be one of {', '.join(_EXP_DST)}, got "
                              f"{dst.dtype.name}")
    P = src.partitions
    cmd = _cmd_name(instr, reduce_cmd)
    _check_reduce_res(instr, reduce_res, P)
    fm, _ = _scalar_operand(instr, "max_value", max_value, P)
    if not isinstance(reduce_init, (int, float, np.integer, np.floating)) or \
            isinstance(reduce_init, bool):
        raise ConstraintError(f"{instr}: reduce_init must be a float32 scalar, got "
                              f"{reduce_init!r}")
    regs = _regs("vector")
    if cmd in ("reset", "reset_reduce"):
        regs[:P] = 0.0
    elif cmd == "load_reduce":
        regs[:P] = np.float32(reduce_init)
    acc = np.array(regs[:P], copy=True) if cmd in ("reduce", "reset_reduce", "load_reduce") \
        else None
    zero = fm.shape[0] == 1 and fm[0] == 0 and not np.signbit(fm[0])
    _run_ew(instr, dst, src, stages=(_NO_STAGE if zero else _stage(_ops.subtract, False, False, fm),
                                     _NO_STAGE), act=_ops.exp, acc=acc, lut_ok=True)
    if acc is not None:
        regs[:P] = acc
    if reduce_res is not None:
        _write_vec(instr, "reduce_res", reduce_res, regs[:P], P)
    _cost.record("Vector", instr, max(MIN_II, src.free_size))


# ---- tensor_copy -------------------------------------------------------------------------------
def tensor_copy_dtype(dst, src, dtype, engine=None):
    """``tensor_copy(..., dtype=)``: not in SDK 2.33's signature, but nki-samples'
    tutorials pass it.  It keeps Beta 1's meaning (the tile-returning form produced a
    ``dtype`` tile that the kernel then assigned into its destination): ``src`` is first
    copied into a ``dtype`` SBUF tile, and that tile is the source of the copy into
    ``dst`` (two tensor_copy instructions).  Returns the source to copy from."""
    fmt = _dt.lookup(dtype)
    if not isinstance(dst, NkiTensor) or fmt.name == dst.dtype.name:
        return src
    from . import language
    tmp = language.ndarray(tuple(dst.shape), fmt, buffer=language.sbuf)
    from . import isa
    isa.tensor_copy(dst=tmp, src=src, engine=engine)
    return tmp


def tensor_copy(dst: NkiTensor, src: NkiTensor, engine: EnumLike | None = None,
                name: str | None = None) -> None:
    """``dst = src``: a bit copy when dtypes match, else through float32 (one rounding).

    dst, src : NkiTensor [P, ...] in SBUF or PSUM (SBUF only on GpSimd), same partitions and
    elements per partition.  engine : unknown (Vector), vector, scalar (not on trn1:
    use activation(nl.copy)) or gpsimd.  Packed x4 dtypes copy only to the same dtype.
    Raises ConstraintError.  Cost: ``max(MIN_II, N)`` on the engine.
    Reference: the NKI docs and simulator guide (github.com/aws-neuron/aws-neuron-sdk, nki/api/ and nki/guides/nki_simulator.rst); the NKI docs, page NKI ISA API Common Fields (github.com/aws-neuron/aws-neuron-sdk, nki/api/nki.api.shared.rst) "Type Casting".
    """
    instr = "tensor_copy"
    _tensor(instr, "dst", dst)
    _tensor(instr, "src", src)
    _same_shape(instr, "dst", dst, "src", src)
    eng = engine_name(instr, engine, ("unknown", "vector", "scalar", "gpsimd"))
    if eng == "unknown":
        eng = "vector"
    if eng == "scalar" and _target() == "trn1":
        raise ConstraintError(f"{instr}: the Scalar engine cannot run tensor_copy on trn1 "
                              f"(NeuronCore-v2); use activation(op=nl.copy)")
    allow_psum = eng != "gpsimd"
    _onchip(instr, "dst", dst, allow_psum)
    _onchip(instr, "src", src, allow_psum)
    same = dst.dtype is src.dtype
    if not same:
        _computable(instr, "dst", dst)
        _computable(instr, "src", src)
    _run_ew(instr, dst, src, raw=same)
    _cost.record({"vector": "Vector", "scalar": "Scalar", "gpsimd": "GpSimd"}[eng], instr,
                 max(MIN_II, src.free_size))


# ---- tensor_reduce -------------------------------------------------------------------------
def tensor_reduce(dst: NkiTensor, op: OpLike, data: NkiTensor, axis: Int | Sequence[Int],
                  negate: bool = False, keepdims: bool = False, name: str | None = None) -> None:
    """``dst = op-fold of data over the trailing free axes`` (``-`` that when ``negate``).

    Parameters
    ----------
    dst : NkiTensor in SBUF or PSUM, same partitions as data, one element per kept
        position (shape data.shape without ``axis``, or with 1s there when ``keepdims``).
    op : a legal reduction operator (the NKI docs, page NKI ISA API Common Fields (github.com/aws-neuron/aws-neuron-sdk, nki/api/nki.api.shared.rst) Table 8 "Legal Reduction op" = Y):
        bitwise_and/or/xor (integer dtypes, bit patterns), add, subtract, multiply,
        maximum, minimum, logical_and/or/xor (float32).
    data : NkiTensor [P, ...] in SBUF or PSUM.
    axis : int or tuple of ints: free axes (>= 1) that end at the last axis and are
        consecutive.
    negate : multiply the float32 result by -1 (arithmetic ops only).

    The fold runs left to right in float32 (add/subtract/multiply in that order;
    maximum/minimum are order-independent IEEE 754-2019 maximum/minimum), rounded once to
    dst.dtype.  Raises ConstraintError.  Cost: ``N/2`` Vector cycles when data and dst are
    bf16 and op is add or maximum, else ``N``.  Reference: the NKI docs and simulator guide (github.com/aws-neuron/aws-neuron-sdk, nki/api/ and nki/guides/nki_simulator.rst).
    """
    instr = "tensor_reduce"
    if not isinstance(dst, NkiTensor):
        raise ConstraintError(f"{instr}: dst must be an NkiTensor, got {type(dst).__name__}")
    _tensor(instr, "data", data)
    _onchip(instr, "dst", dst)
    _onchip(instr, "data", data)
    _computable(instr, "dst", dst)
    _computable(instr, "data", data)
    require_dst(instr, "dst", dst)
    op = _op(instr, "op", op)
    if not op.reducible:
        raise ConstraintError(f"{instr}: op must be a legal reduction op (the NKI docs, page NKI ISA API Common Fields (github.com/aws-neuron/aws-neuron-sdk, nki/api/nki.api.shared.rst) Table 8), got "
                              f"{op!r}")
    if op.is_bitvec:
        for pname, t in (("dst", dst), ("data", data)):
            if not _is_int(t.dtype):
                raise ConstraintError(f"{instr}: bitvec op {op!r} needs integer dtypes; {pname} "
                                      f"is {t.dtype.name}")
        if negate:
            raise ConstraintError(f"{instr}: negate applies to arithmetic ops only, got "
                                  f"negate=True with {op!r}")
    axes = (axis,) if isinstance(axis, (int, np.integer)) and not isinstance(axis, bool) \
        else axis
    if isinstance(axes, (str, bytes)) or not isinstance(axes, (tuple, list)) or not all(
            isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in axes):
        raise ConstraintError(f"{instr}: axis must be an int or a tuple of ints, got "
                              f"{axis!r}")
    axes = tuple(int(a) for a in axes)
    nd = data.ndim
    axes = tuple(a + nd if a < 0 else a for a in axes)
    if not axes or any(a < 1 or a >= nd for a in axes):
        raise ConstraintError(f"{instr}: axis must name free axes (1..{nd - 1}), got {axis!r}")
    if sorted(axes) != list(range(nd - len(axes), nd)):
        raise ConstraintError(f"{instr}: axis must be the last consecutive free axes "
                              f"(ending at {nd - 1}), got {axis!r}")
    kept = data.shape[:nd - len(axes)]
    want = kept + (1,) * len(axes) if keepdims else kept
    if dst.partitions != data.partitions or dst.size != math.prod(want):
        raise ConstraintError(f"{instr}: dst must have shape {want} (data {data.shape} reduced "
                              f"over {axes}), got {dst.shape}")
    R = math.prod(kept)
    F = math.prod(data.shape[nd - len(axes):])
    inp = data.data.reshape(R, F)
    out = dst.data.view()
    commit = None
    try:
        out.shape = (R,)
    except (AttributeError, ValueError):
        out = np.empty(R, dst.dtype.np_dtype)
        commit = lambda: dst.data.__setitem__(Ellipsis, out.reshape(dst.shape))  # noqa: E731
    k = _kernels()
    k.reduce(out, dst.dtype.code, inp, data.dtype.code, op.alu, bitvec=int(op.is_bitvec),
             negate=int(bool(negate)), threads=_threads())
    if commit is not None:
        commit()
    n = data.free_size
    half = (data.dtype.name == dst.dtype.name == "bfloat16" and op.name in ("add", "maximum"))
    _cost.record("Vector", instr, n // 2 if half else n)


# ---- moved instruction families: the old import path keeps working ------------------------
_MOVED = {"select_reduce": "_select", "range_select": "_select", "affine_select": "_select",
          "_select": "_select", "_stage_sel": "_select", "_PRED_DTYPES": "_select",
          "nc_transpose": "_pe", "nc_matmul": "_pe", "_psum_start": "_pe",
          "matmul_operands": "_pe", "_MM_DTYPES": "_pe"}


def __getattr__(name):
    mod = _MOVED.get(name)
    if mod is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib
    return getattr(importlib.import_module(f"{__package__}.{mod}"), name)
