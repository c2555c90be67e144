"""NKI operator and activation-function objects (``nl.add`` ... ``nl.reciprocal``, ``nl.exp`` ...).

Re-exported by :mod:`fastisa.nki.language`.  Each name is one :class:`Op` object that
knows every role it has (the NKI docs, page NKI ISA API Common Fields (github.com/aws-neuron/aws-neuron-sdk, nki/api/nki.api.shared.rst), "Supported Math Operators" Table 8 and "Supported
Activation Functions" Table 9):

* as an ``op=`` of ``tensor_scalar`` / ``tensor_tensor`` / ``tensor_reduce`` ...:
  its class (``"bitvec"``, ``"arithmetic"`` or ``"arithmetic unary"``) and whether it is
  a legal reduction op;
* as an ``op=`` of ``activation``: the engines that implement it (``"scalar"``,
  ``"gpsimd"``), the ScalarE valid input range and the documented ULP per engine.

Some names have both roles (``nl.abs``, ``nl.square``, ``nl.relu``, ``nl.rsqrt``,
``nl.reciprocal``).  Arithmetic operators compute in float32 (inputs converted to
float32, result rounded once to the destination dtype); bitvec operators work on the
integer bit patterns.  Activation functions are computed accurately in float64 and
rounded once, except ScalarE's ``sin`` outside [-pi, pi] (see ``out_of_range``).
"""

from __future__ import annotations

import math
import typing as _typing

if _typing.TYPE_CHECKING:
    from .._types import Real
    from .tensor import NkiTensor

__all__ = ["Op", "OPERATORS", "ACTIVATIONS", "LANGUAGE_ONLY",
           # nki.language-only math functions
           "divide", "mod", "fmod", "floor", "ceil", "trunc",
           # bitvec
           "invert", "bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift",
           # arithmetic
           "add", "subtract", "multiply", "maximum", "minimum", "equal", "not_equal",
           "greater_equal", "greater", "less_equal", "less", "logical_and", "logical_or",
           "logical_xor", "power", "abs_max", "abs_min",
           # arithmetic unary (also activations)
           "abs", "square", "relu", "rsqrt", "reciprocal",
           # activation functions
           "copy", "sigmoid", "prelu", "gelu", "gelu_dx", "gelu_apprx_tanh",
           "gelu_apprx_sigmoid", "gelu_apprx_sigmoid_dx", "silu", "silu_dx", "tanh", "softplus",
           "mish", "erf", "erf_dx", "exp", "log", "log1p", "sin", "arctan", "sqrt", "sign"]

BITVEC = "bitvec"
ARITHMETIC = "arithmetic"
UNARY = "arithmetic unary"

_INF = math.inf


class Op:
    """One ``nki.language`` operator / activation function.

    Attributes
    ----------
    name : str
        The ``nki.language`` name (``"add"``, ``"exp"`` ...).
    kind : str or None
        Operator class: ``"bitvec"``, ``"arithmetic"``, ``"arithmetic unary"``; None when
        the name is only an activation function.
    reducible : bool
        Legal as a reduction op (``tensor_reduce`` ...), the NKI docs, page NKI ISA API Common Fields (github.com/aws-neuron/aws-neuron-sdk, nki/api/nki.api.shared.rst) Table 8.
    engines : tuple of str
        Engines implementing it as an activation function (``"scalar"``, ``"gpsimd"``);
        empty when it is not an activation function.
    scalar_range : tuple (lo, hi, symmetric) or None
        ScalarE valid input range; ``symmetric`` means ``lo <= |x| <= hi``.  None when
        ScalarE does not implement it.
    scalar_ulp, gpsimd_ulp : int or None
        Documented ULP error of the hardware per engine (the NKI docs, page NKI ISA API Common Fields (github.com/aws-neuron/aws-neuron-sdk, nki/api/nki.api.shared.rst) Table 9).  fastisa
        computes every activation in float64 and rounds once (0 ULP from the exact value,
        up to libm's error), whatever the engine.
    out_of_range : str
        What fastisa does with ScalarE inputs outside ``scalar_range``.
    isa : bool
        False for the ``nki.language``-only functions (``divide``, ``mod``, ``fmod``,
        ``floor``, ``ceil``, ``trunc``): SDK 2.33's Table 8 lists no such ALU operator, so
        the ``nki.isa`` instructions reject them as ``op=``; the tile-level functions
        compute them on the same elementwise kernel.
    alu, act : int
        Codes of the C kernels (``FI_ALU_*`` / ``FI_ACT_*`` in csrc/fastisa/nki.h).
    """

    __slots__ = ("name", "kind", "reducible", "engines", "scalar_range", "scalar_ulp",
                 "gpsimd_ulp", "out_of_range", "alu", "act", "isa")

    def __init__(self, name, kind=None, reducible=False, alu=0, act=0, engines=(),
                 scalar_range=None, scalar_ulp=None, gpsimd_ulp=None, out_of_range="",
                 isa=True):
        self.name = name
        self.isa = isa
        self.kind = kind
        self.reducible = reducible
        self.alu = alu
        self.act = act
        self.engines = tuple(engines)
        self.scalar_range = scalar_range
        self.scalar_ulp = scalar_ulp
        self.gpsimd_ulp = gpsimd_ulp
        self.out_of_range = out_of_range

    @property
    def is_operator(self) -> bool:
        return self.kind is not None

    @property
    def is_bitvec(self) -> bool:
        return self.kind == BITVEC

    @property
    def is_arithmetic(self) -> bool:
        return self.kind in (ARITHMETIC, UNARY)

    @property
    def is_unary(self) -> bool:
        """Arithmetic unary (abs, square, relu, rsqrt, reciprocal) or bitwise not."""
        return self.kind == UNARY or self.name == "invert"

    @property
    def is_activation(self) -> bool:
        return bool(self.engines)

    def in_scalar_range(self, x: float) -> bool:
        """Whether ``x`` lies in ScalarE's valid input range (NaN counts as inside)."""
        if self.scalar_range is None:
            return False
        lo, hi, sym = self.scalar_range
        v = math.fabs(x) if sym else x
        return not (v < lo or v > hi)

    def __call__(self, *args: NkiTensor | Real, **kwargs: object) -> NkiTensor:
        """``nl.add(x, y)`` / ``nl.exp(x)`` on tiles: the tile-level ``nki.language`` form,
        lowered to one instruction by :mod:`fastisa.nki.tiles`."""
        from . import tiles
        if not self.isa:
            return tiles.language_only(self, *args, **kwargs)
        if self.name == "copy":
            return tiles.copy_tile(*args, **kwargs)
        if self.is_unary or self.kind is None:
            return tiles.apply_unary(self, *args, **kwargs)
        return tiles.apply_binary(self, *args, **kwargs)

    def __repr__(self) -> str:
        return f"nl.{self.name}"

    def __reduce__(self):
        return (_by_name, (self.name,))


def _by_name(name: str) -> Op:
    return globals()[name]


_ACCURATE = "fastisa returns the accurate value and emits a RuntimeWarning"
_SIN = ("fastisa evaluates ScalarE's cubic directly (no range reduction): for x > pi, "
        "sin(x) ~ -(x-pi) + (x-pi)^3/6, odd-symmetric below -pi (sin(9.0) ~ 27.65); no warning")
_ALL = (-_INF, _INF, False)

# ---- Table 8: operators --------------------------------------------------------------------
# alu codes follow the FI_ALU_* enum of csrc/fastisa/nki.h.
invert = Op("invert", BITVEC, False, alu=23)
bitwise_and = Op("bitwise_and", BITVEC, True, alu=24)
bitwise_or = Op("bitwise_or", BITVEC, True, alu=25)
bitwise_xor = Op("bitwise_xor", BITVEC, True, alu=26)
left_shift = Op("left_shift", BITVEC, False, alu=27)
right_shift = Op("right_shift", BITVEC, False, alu=28)

add = Op("add", ARITHMETIC, True, alu=1)
subtract = Op("subtract", ARITHMETIC, True, alu=2)
multiply = Op("multiply", ARITHMETIC, True, alu=3)
maximum = Op("maximum", ARITHMETIC, True, alu=4)
minimum = Op("minimum", ARITHMETIC, True, alu=5)
equal = Op("equal", ARITHMETIC, False, alu=6)
not_equal = Op("not_equal", ARITHMETIC, False, alu=7)
greater_equal = Op("greater_equal", ARITHMETIC, False, alu=8)
greater = Op("greater", ARITHMETIC, False, alu=9)
less_equal = Op("less_equal", ARITHMETIC, False, alu=10)
less = Op("less", ARITHMETIC, False, alu=11)
logical_and = Op("logical_and", ARITHMETIC, True, alu=12)
logical_or = Op("logical_or", ARITHMETIC, True, alu=13)
logical_xor = Op("logical_xor", ARITHMETIC, True, alu=14)
power = Op("power", ARITHMETIC, False, alu=15)
abs_max = Op("abs_max", ARITHMETIC, False, alu=16)
abs_min = Op("abs_min", ARITHMETIC, False, alu=17)

# ---- operators that are also activation functions (Table 8 "Arithmetic Unary" + Table 9) ---
abs = Op("abs", UNARY, False, alu=18, act=27, engines=("scalar",), scalar_range=_ALL,  # noqa: A001
         scalar_ulp=1)
square = Op("square", UNARY, False, alu=19, act=2, engines=("scalar",), scalar_range=_ALL,
            scalar_ulp=1)
relu = Op("relu", UNARY, False, alu=20, act=4, engines=("scalar",), scalar_range=_ALL,
          scalar_ulp=1)
rsqrt = Op("rsqrt", UNARY, False, alu=21, act=24, engines=("scalar", "gpsimd"),
           scalar_range=(2.0**-87, 2.0**97, False), scalar_ulp=40000, gpsimd_ulp=1,
           out_of_range=_ACCURATE)
reciprocal = Op("reciprocal", UNARY, False, alu=22, act=25, engines=("scalar",),
                scalar_range=(2.0**-42, 2.0**42, True), scalar_ulp=400, out_of_range=_ACCURATE)

# ---- Table 9: activation functions -----------------------------------------------------
# act codes follow the FI_ACT_* enum of csrc/fastisa/nki.h.
copy = Op("copy", act=1, engines=("scalar",), scalar_range=_ALL, scalar_ulp=1)
sigmoid = Op("sigmoid", act=3, engines=("scalar", "gpsimd"), scalar_range=_ALL, scalar_ulp=40,
             gpsimd_ulp=3)
prelu = Op("prelu", act=5, engines=("scalar",), scalar_range=_ALL, scalar_ulp=1)
gelu = Op("gelu", act=6, engines=("scalar",), scalar_range=_ALL, scalar_ulp=4)
gelu_dx = Op("gelu_dx", act=7, engines=("scalar",), scalar_range=_ALL, scalar_ulp=40)
gelu_apprx_tanh = Op("gelu_apprx_tanh", act=8, engines=("scalar",), scalar_range=_ALL,
                     scalar_ulp=40)
gelu_apprx_sigmoid = Op("gelu_apprx_sigmoid", act=9, engines=("scalar",), scalar_range=_ALL,
                        scalar_ulp=40)
gelu_apprx_sigmoid_dx = Op("gelu_apprx_sigmoid_dx", act=10, engines=("scalar",),
                           scalar_range=_ALL, scalar_ulp=4096)
silu = Op("silu", act=11, engines=("scalar", "gpsimd"), scalar_range=_ALL, scalar_ulp=32,
          gpsimd_ulp=4)
silu_dx = Op("silu_dx", act=12, engines=("scalar",), scalar_range=_ALL, scalar_ulp=32)
tanh = Op("tanh", act=13, engines=("scalar",), scalar_range=_ALL, scalar_ulp=4)
softplus = Op("softplus", act=14, engines=("scalar", "gpsimd"), scalar_range=_ALL,
              scalar_ulp=40, gpsimd_ulp=3)
mish = Op("mish", act=15, engines=("scalar",), scalar_range=_ALL, scalar_ulp=4)
erf = Op("erf", act=16, engines=("scalar",), scalar_range=_ALL, scalar_ulp=4)
erf_dx = Op("erf_dx", act=17, engines=("scalar",), scalar_range=_ALL, scalar_ulp=400)
exp = Op("exp", act=18, engines=("scalar", "gpsimd"), scalar_range=_ALL, scalar_ulp=400,
         gpsimd_ulp=1)
log = Op("log", act=19, engines=("scalar", "gpsimd"), scalar_range=(2.0**-64, 2.0**64, False),
         scalar_ulp=40, gpsimd_ulp=2, out_of_range=_ACCURATE)
log1p = Op("log1p", act=20, engines=("gpsimd",), gpsimd_ulp=2)
sin = Op("sin", act=21, engines=("scalar",), scalar_range=(-math.pi, math.pi, False),
         scalar_ulp=4, out_of_range=_SIN)
arctan = Op("arctan", act=22, engines=("scalar",), scalar_range=(-math.pi / 2, math.pi / 2, False),
            scalar_ulp=4, out_of_range=_ACCURATE)
sqrt = Op("sqrt", act=23, engines=("scalar", "gpsimd"), scalar_range=(2.0**-116, 2.0**118, False),
          scalar_ulp=65536, gpsimd_ulp=0, out_of_range=_ACCURATE)
sign = Op("sign", act=26, engines=("scalar",), scalar_range=_ALL, scalar_ulp=1)

# ---- nki.language-only math functions (not nki.isa operators) ---------------------------
# The tile-level nki.language functions of SDK 2.33 (``nki/api/nki/language/__init__.py``:
# divide, mod, fmod, floor, ceil, trunc) and NKI Beta 1 (``neuronxcc.nki.language``), each
# "similar to" its numpy function.  Table 8 lists no ALU operator for them, so they are no
# ``op=`` of nki.isa instructions (isa=False); fastisa.nki.tiles computes them on the
# elementwise kernel (alu codes FI_ALU_DIV ... of csrc/fastisa/nki.h), in float32 with one
# rounding to the destination: x / y is IEEE float32 division (round to nearest even, as
# the NKI CPU simulator's numpy float32 computes it), mod is numpy's float32 remainder (the
# divisor's sign), fmod C's fmodf (the dividend's sign), floor/ceil/trunc are exact.
divide = Op("divide", ARITHMETIC, False, alu=30, isa=False)
mod = Op("mod", ARITHMETIC, False, alu=31, isa=False)
fmod = Op("fmod", ARITHMETIC, False, alu=32, isa=False)
floor = Op("floor", UNARY, False, alu=33, isa=False)
ceil = Op("ceil", UNARY, False, alu=34, isa=False)
trunc = Op("trunc", UNARY, False, alu=35, isa=False)

#: nki.language-only functions: name -> Op.
LANGUAGE_ONLY = {o.name: o for o in (divide, mod, fmod, floor, ceil, trunc)}

#: Table 8 in order: name -> Op.
OPERATORS = {o.name: o for o in (
    invert, bitwise_and, bitwise_or, bitwise_xor, left_shift, right_shift,
    add, subtract, multiply, maximum, minimum, equal, not_equal, greater_equal, greater,
    less_equal, less, logical_and, logical_or, logical_xor, power, abs_max, abs_min,
    abs, square, relu, rsqrt, reciprocal)}

#: Table 9 in order: name -> Op.
ACTIVATIONS = {o.name: o for o in (
    copy, square, sigmoid, relu, prelu, gelu, gelu_dx, gelu_apprx_tanh, gelu_apprx_sigmoid,
    gelu_apprx_sigmoid_dx, silu, silu_dx, tanh, softplus, mish, erf, erf_dx, exp, log, log1p,
    sin, arctan, sqrt, rsqrt, reciprocal, sign, abs)}


#: numpy ufunc / builtin names kernels pass as ``op=`` (legacy NKI accepted ``np.add``,
#: ``np.square`` ...), and nki.language reduction functions passed as a reduce op.
_NUMPY_NAMES = {"remainder": "mod", "absolute": "abs", "fabs": "abs", "true_divide": "divide", "max": "maximum",
                "min": "minimum", "sum": "add", "amax": "maximum", "amin": "minimum",
                "prod": "multiply", "arctan": "arctan"}


def coerce(op):
    """``op`` as an :class:`Op`: an Op, a numpy ufunc (``np.add``) or an ``nl`` reduction
    function (``nl.max``) of the same meaning; anything else is returned unchanged."""
    if isinstance(op, Op):
        return op
    name = getattr(op, "__name__", None)
    mod = getattr(op, "__module__", "") or ""
    if name is None or not (type(op).__name__ == "ufunc" or mod.startswith("numpy")
                            or mod.startswith("fastisa.nki")):
        return op
    name = _NUMPY_NAMES.get(name, name)
    return OPERATORS.get(name) or ACTIVATIONS.get(name) or LANGUAGE_ONLY.get(name) or op
