"""Type aliases for the TIK front-end's annotations (imported under TYPE_CHECKING only).

The names differ from ``Tensor`` / ``Scalar`` on purpose: inside ``class Tik`` those names
are the methods ``Tik.Tensor`` / ``Tik.Scalar``, so annotations there use these aliases.
Each is as wide as what the instructions accept at run time (which validates every value).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Union

import numpy as np

from .._types import Int, Real
from ._program import Expr, InputScalar, Scalar, Tensor, TensorView

__all__ = ["TikTensor", "TikScalar", "TikInputScalar", "TikDType", "Operand", "IntArg", "RealArg", "Mask"]

TikTensor = Tensor
TikScalar = Scalar
TikInputScalar = InputScalar

#: a TIK data type: its name (``"float16"``) or a numpy dtype / scalar type
TikDType = Union[str, np.dtype, type]

#: a tensor operand: a Tensor (its element 0) or a start element ``t[i]``
Operand = Union[Tensor, TensorView]

#: an integer argument: an immediate or a Scalar / Expr evaluated when the program runs
IntArg = Union[Int, Expr]

#: a number argument: an immediate, a Scalar / Expr, or a tensor element ``t[i]``
RealArg = Union[Real, Expr, TensorView]

#: a vector mask: an int (lanes 0..mask-1, or an element count in counter mode), a
#: Scalar, or ``[mask_h, mask_l]`` (bitwise, 64 lanes each)
Mask = Union[Int, Expr, Sequence[Union[Int, Expr]]]
