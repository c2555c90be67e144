"""Type aliases the public front-ends annotate their signatures with.

Annotations only: fastisa validates every argument at run time (and raises
:mod:`fastisa.errors` exceptions naming the instruction and the parameter); these aliases
let a type checker report a wrong argument type in a user kernel before it runs.  Each
alias is as wide as what the front-ends accept at run time.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from typing import Any, Union

import numpy as np

from .dtypes import Format

__all__ = ["Int", "Real", "DTypeLike", "EnumLike", "Shape", "OpLike"]

#: an integer immediate: a Python int or a numpy integer scalar (bool is rejected at run time)
Int = Union[int, np.integer]

#: a real immediate: Python int/float or a numpy integer/floating scalar
Real = Union[int, float, np.integer, np.floating]

#: a data type: a name (``"float16"``), a numpy dtype or scalar type, or a
#: :class:`fastisa.dtypes.Format`
DTypeLike = Union[str, np.dtype, type, Format]

#: an enumeration member or its name
EnumLike = Union[str, enum.Enum]

#: a tensor shape: a sequence of integers (or one integer for a 1-D shape)
Shape = Union[int, np.integer, Sequence[Union[int, np.integer]]]

#: an NKI operator or activation function: ``nl.add``, ``nl.exp`` (an Op), or a numpy
#: function of the same meaning (``np.add``), checked at run time
OpLike = Callable[..., Any]
