"""NeuronCore-v4 two-stage activation (SDK 2.33 ``nki.isa.activate2``), re-exported by
``nki.isa``.

The SDK 2.33 docstring (aws-neuron-sdk ``nki/api/nki/isa/__init__.py``, ``activate2``,
"Behavior") fixes the per-element pipeline::

    val = data[i]
    if op0 is not bypass: val = op0(val, imm0)      # imm0 op0 val when reverse0
    if op1 is not bypass: val = op1(val, imm1)      # imm1 op1 val when reverse1
    dst[i] = op(val, relu_param=relu_param)
    if reduce_cmd in (reset_reduce, reduce): acc = reduce_op(acc, dst[i])

fastisa runs it on the elementwise kernel of ``csrc/fastisa/nki.h`` (the two ALU stages,
then the activation, then the accumulator), with ``nki.isa.activation``'s numerics: the
input and the ALU stages in float32 (one rounding each), the function in float64 (libm),
rounded once to dst.dtype; the accumulator folds the float32-rounded results left to
right (``add``: float32 sums; ``maximum`` / ``minimum``: IEEE 754-2019; ``abs_max`` /
``abs_min``: the signed operand of larger / smaller magnitude, as the SDK 2.33
``nki.language.abs_max`` / ``abs_min`` docstrings define them) into the Scalar engine's
registers, which ``activation`` shares.  A ``[P, 1]`` ``relu_param`` gives each partition
its own PReLU slope.
"""

from __future__ import annotations

import warnings

import numpy as np

from .. import cost as _cost
from ..errors import ConstraintError
from . import _compute as _c
from . import ops as _ops
from .enums import engine_name
from .tensor import NkiTensor

import typing as _typing

if _typing.TYPE_CHECKING:
    from .._types import EnumLike, OpLike, Real

__all__ = ["activate2"]

#: reduce_op -> (the accumulator kernel's fold code, the identity ``reduce_cmd.reset`` loads).
_FOLDS = {"add": (0, 0.0), "maximum": (1, -np.inf), "minimum": (2, np.inf),
          "abs_max": (3, 0.0), "abs_min": (4, np.inf)}

#: The six (op0, op1) combinations the docstring lists (None = nl.bypass).
_COMBOS = (("multiply", "add"), ("multiply", "subtract"), ("multiply", None), ("add", None),
           ("subtract", None), (None, None))


def _alu_name(instr, param, op):
    """None for bypass (None, "bypass" or an object named bypass), else the Op's name."""
    if op is None or op == "bypass" or getattr(op, "name", None) == "bypass":
        return None, None
    o = _ops.coerce(op)
    if not isinstance(o, _ops.Op) or not o.is_operator:
        raise ConstraintError(f"{instr}: {param} must be nl.multiply, nl.add, nl.subtract or "
                              f"nl.bypass, got {op!r}")
    return o.name, o


def activate2(dst: NkiTensor, op: OpLike, data: NkiTensor, imm0: NkiTensor | Real | None,
              imm1: NkiTensor | Real | None, op0: OpLike | str | None, op1: OpLike | str | None,
              relu_param: NkiTensor | Real = 0.0, reverse0: bool = False,
              reverse1: bool = False, reduce_op: OpLike | None = None,
              reduce_res: NkiTensor | None = None, reduce_cmd: EnumLike | None = None,
              engine: EnumLike | None = None, name: str | None = None) -> None:
    """``dst = op((data op0 imm0) op1 imm1; relu_param)``, optionally reduced per lane.

    Parameters
    ----------
    dst, data : NkiTensor [P, ...] in SBUF or PSUM (SBUF only on GpSimd), same partitions
        and elements per partition, any unpacked dtype.
    op : an activation function (``nl.prelu`` uses ``relu_param`` as its negative slope).
    imm0, imm1 : float32 scalars or [P, 1] tensors (both tensors: the same dtype).
    op0, op1 : one of the combinations (multiply, add), (multiply, subtract),
        (multiply, bypass), (add, bypass), (subtract, bypass), (bypass, bypass);
        ``None`` or ``"bypass"`` stands for ``nl.bypass``.
    relu_param : float32 scalar or a [P, 1] tensor (one PReLU slope per partition, read as
        float32); only ``nl.prelu`` uses it.
    reverse0, reverse1 : ``imm0 op0 val`` / ``imm1 op1 val``; each needs its op set.
    reduce_op : None, ``nl.add``, ``nl.maximum``, ``nl.minimum``, ``nl.abs_max`` or
        ``nl.abs_min``: ``acc = reduce_op(acc, y)`` per element, left to right, y the
        float32 result.  maximum / minimum are IEEE 754-2019 (NaN propagates, -0 < +0);
        abs_max / abs_min follow the SDK 2.33 ``nki.language`` docstrings: the *signed*
        operand of larger / smaller magnitude, ``acc if |acc| > |y| else y`` (a tie, or a
        NaN in the comparison, gives y).  A NaN register ends as the canonical quiet NaN.
        reduce_cmd: ``idle`` (default), ``reset`` (registers to the reduce_op identity:
        0, -inf, +inf, 0, +inf), ``reduce``, ``reset_reduce``.
    reduce_res : optional [P, 1] tensor receiving the registers afterwards.
    engine : ``nisa.engine.scalar`` (default) or ``gpsimd`` (no accumulator).

    Requires target trn3 (NeuronCore-v4).  Raises ConstraintError for a broken rule.
    Cost: Scalar ``max(MIN_II, N)`` (+``MIN_II`` with reduce_res); GpSimd
    ``4 * max(MIN_II, N)`` (fastisa's estimates, as ``activation``).
    Source: aws-neuron-sdk ``nki/api/nki/isa/__init__.py``, ``activate2`` (SDK 2.33).
    """
    instr = "activate2"
    _c._require_target(instr, "activate2", ("trn3",))
    _c._tensor(instr, "dst", dst)
    _c._tensor(instr, "data", data)
    _c._same_shape(instr, "dst", dst, "data", data)
    _c._computable(instr, "dst", dst)
    _c._computable(instr, "data", data)
    act = _c._op(instr, "op", op, activation=True)
    eng = engine_name(instr, engine, ("unknown", "scalar", "gpsimd"))
    if eng == "unknown":
        eng = "scalar"
    if eng not in act.engines:
        raise ConstraintError(f"{instr}: {act!r} is not implemented on the {eng} engine "
                              f"(engines: {', '.join(act.engines)})")
    _c._onchip(instr, "dst", dst, eng == "scalar")
    _c._onchip(instr, "data", data, eng == "scalar")
    n0, o0 = _alu_name(instr, "op0", op0)
    n1, o1 = _alu_name(instr, "op1", op1)
    if n1 is not None and n0 is None:
        raise ConstraintError(f"{instr}: op1 requires op0 to be set, got op0 bypass and op1 "
                              f"{n1}")
    if (n0, n1) not in _COMBOS:
        raise ConstraintError(f"{instr}: (op0, op1) must be one of (multiply, add), "
                              f"(multiply, subtract), (multiply, bypass), (add, bypass), "
                              f"(subtract, bypass), (bypass, bypass), got "
                              f"({n0 or 'bypass'}, {n1 or 'bypass'})")
    if reverse0 and n0 is None:
        raise ConstraintError(f"{instr}: reverse0 requires op0 to be set")
    if reverse1 and n1 is None:
        raise ConstraintError(f"{instr}: reverse1 requires op1 to be set")
    if isinstance(imm0, NkiTensor) and isinstance(imm1, NkiTensor) and \
            imm0.dtype is not imm1.dtype:
        raise ConstraintError(f"{instr}: imm0 and imm1 must have the same dtype when both are "
                              f"tensors, got {imm0.dtype.name} and {imm1.dtype.name}")
    P = data.partitions
    f0 = None if n0 is None else _c._scalar_operand(instr, "imm0", imm0, P)[0]
    f1 = None if n1 is None else _c._scalar_operand(instr, "imm1", imm1, P)[0]
    alpha, alpha_vec = 0.0, None
    if isinstance(relu_param, NkiTensor):       # one slope per partition
        alpha_vec = _c._scalar_operand(instr, "relu_param", relu_param, P)[0].astype(np.float64)
    elif isinstance(relu_param, bool) or not isinstance(relu_param, (int, float, np.integer,
                                                                     np.floating)):
        raise ConstraintError(f"{instr}: relu_param must be a float32 scalar or a [P, 1] "
                              f"tensor, got {relu_param!r}")
    else:
        alpha = float(np.float32(relu_param))
    red = _ops.coerce(reduce_op)
    rname = None if red is None else getattr(red, "name", None)
    if red is not None and rname not in _FOLDS:
        raise ConstraintError(f"{instr}: reduce_op must be nl.add, nl.maximum, nl.minimum, "
                              f"nl.abs_max or nl.abs_min, got {reduce_op!r}")
    cmd = _c._cmd_name(instr, reduce_cmd)
    if cmd == "load_reduce":
        raise ConstraintError(f"{instr}: reduce_cmd must be idle, reset, reduce or reset_reduce, "
                              f"got load_reduce")
    if eng == "gpsimd" and (cmd != "idle" or reduce_res is not None or red is not None):
        raise ConstraintError(f"{instr}: the accumulator is only available on the Scalar "
                              f"engine, got engine gpsimd with reduce_cmd {cmd}")
    _c._check_reduce_res(instr, reduce_res, P)
    mode, identity = _FOLDS.get(rname, _FOLDS["add"])
    stages = (_c._NO_STAGE if n0 is None else _c._stage(o0, reverse0, False, f0),
              _c._NO_STAGE if n1 is None else _c._stage(o1, reverse1, False, f1))
    regs = _c._regs("scalar")
    if cmd in ("reset", "reset_reduce"):
        regs[:P] = identity
    acc = np.array(regs[:P], copy=True) if cmd in ("reduce", "reset_reduce") else None
    oor = _c._run_ew(instr, dst, data, stages=stages, act=act,
                     scalar_engine=(eng == "scalar"), alpha=alpha, acc=acc, acc_max=mode,
                     lut_ok=act.name != "prelu", alpha_vec=alpha_vec)
    if acc is not None:
        regs[:P] = acc
    if oor and act.name != "sin":
        lo, hi, sym = act.scalar_range
        rng = f"+-[{lo:g}, {hi:g}]" if sym else f"[{lo:g}, {hi:g}]"
        warnings.warn(f"{instr}: {oor} input(s) of {act!r} outside the Scalar engine's valid "
                      f"range {rng} (hardware gives invalid results there); fastisa returns "
                      f"the accurate values", RuntimeWarning, stacklevel=2)
    if reduce_res is not None:
        _c._write_vec(instr, "reduce_res", reduce_res, regs[:P], P)
    n = data.free_size
    if eng == "gpsimd":
        _cost.record("GpSimd", instr, 4 * max(_c.MIN_II, n))
    else:
        _cost.record("Scalar", instr, max(_c.MIN_II, n) + (_c.MIN_II if reduce_res is not None
                                                            else 0))
