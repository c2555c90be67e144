"""``te.tvm`` for TIK operators: ``tvm.const`` and the names they only touch.

TIK takes ``tvm.const(value, dtype)`` wherever it takes an immediate
(caffe-huawei-atlas-convertor ``convertor/huawei/te/tik/api/tik_scalar.py``:
``Scalar.set_as`` wraps a Python number with ``tvm.const(value, self.dtype)``).  Here it is
the Python number converted to ``dtype`` as TIK converts immediates (floats round to
nearest even, float -> int truncates, ints wrap), an ``int`` for integer dtypes and a
``float`` for float dtypes.  ``tvm.placeholder`` gives an inert description (shape,
dtype, name).  Everything else TVM has (``compute``, ``extern``, ``call_extern``,
``ir_builder``, schedules, ...) raises ``NotImplementedError``.
"""
from __future__ import annotations

from .._program import _DTYPES, cast_value  # noqa: F401  (re-used conversion)
from ._notik import module_getattr

__all__ = ["const", "convert", "placeholder"]


def const(value, dtype=None):
    """``tvm.const(value, dtype)``: ``value`` as a ``dtype`` immediate (int or float).
    dtype defaults to int32 for ints and float32 for floats; "bool" gives a bool.
    Raises ConstraintError for a dtype TIK has no scalar of."""
    if dtype is None:
        dtype = "float32" if isinstance(value, float) else "int32"
    dtype = str(dtype)
    if dtype in ("bool", "uint1"):
        return bool(value)
    from ...errors import ConstraintError
    if dtype not in _DTYPES:
        raise ConstraintError(f"tvm.const: dtype should be one of {sorted(_DTYPES)}, "
                              f"got {dtype!r}")
    return cast_value(dtype, value)


class Placeholder:
    """What ``tvm.placeholder(shape, dtype, name)`` returns here: the description only
    (``shape``, ``dtype``, ``name``; ``.op`` is itself).  Operators whose TIK branch comes
    after building one (resize_nearest_neighbor_v2_d builds its ``image_data`` placeholder
    before choosing a TIK or a TVM kernel) run unchanged; anything that would compute with
    it (``tvm.extern``, ``tvm.compute``, schedules, arithmetic) raises
    ``NotImplementedError``."""

    def __init__(self, shape, dtype="float32", name="placeholder"):
        self.shape = tuple(shape)
        self.dtype = str(dtype)
        self.name = name
        self.op = self

    def _fail(self, *args, **kwargs):
        raise NotImplementedError(f"te.tvm.placeholder {self.name!r}: TVM compute on a "
                                  f"placeholder is not simulated by fastisa (it is TVM/DSL "
                                  f"compute, not TIK); only TIK programs run")

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = _fail
    __getitem__ = __call__ = _fail

    def __repr__(self):
        return f"<fastisa tvm.placeholder {self.name} {self.shape} {self.dtype}>"


def placeholder(shape, dtype="float32", name="placeholder", attrs=None):
    """``tvm.placeholder(shape, dtype, name)``: a :class:`Placeholder` (description only)."""
    return Placeholder(shape, dtype, name)


def convert(value):
    """``tvm.convert``: a Python number is already an immediate for fastisa."""
    return value


__getattr__ = module_getattr(__name__.replace("fastisa.tik.compat.", "te."), {
    "call_extern", "call_intrin", "call_pure_intrin", "compute", "extern",
    "ir_builder", "ir_builer", "select", "build", "create_schedule", "decl_buffer",
    "reduce_axis", "sum", "thread_axis", "var", "min", "max", "all", "any", "schedule",
    "tensor", "expr", "stmt", "ir_pass", "build_config", "min_value", "max_value", "exp",
    "log", "sqrt", "floor", "ceil", "round", "abs", "target", "context", "nd", "module",
    "api", "make", "intrin", "comm_reducer", "scan", "hybrid", "IterVar", "Tensor",
    "lower", "get_global_func", "register_func", "const_true", "truncdiv", "floordiv",
    "floormod", "truncmod", "div", "indexdiv", "indexmod", "Expr", "Var"})
