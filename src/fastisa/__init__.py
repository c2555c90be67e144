"""fastisa: a fast, bit-exact CPU simulator of accelerator instructions.

Front-ends (imported on first use):

* :mod:`fastisa.nki` -- AWS Trainium NKI (``nki.jit``, ``nki.simulate``, ``nki.isa``, ``nki.language``)
* :mod:`fastisa.tik` -- Huawei Ascend TIK (``tik.Tik``, vector instructions, ``tikdb.start_debug``)
* :mod:`fastisa.pto` -- Huawei Ascend PTO tile ISA (``Tile``, ``TRECIP``, ..., PTO-AS text)

Number formats: :mod:`fastisa.dtypes`, :func:`convert`, :func:`pack_x4`, :func:`unpack_x4`.
:mod:`fastisa.shim` makes the vendors' import names (``import nki``, ``from tbe import tik``)
resolve to these front-ends.
"""

from __future__ import annotations

import importlib

from . import dtypes, errors
from .errors import AccessError, AlignmentError, ConstraintError, FastisaError, OverlapError
from .numerics import convert, pack_x4, unpack_x4

__version__ = "0.1.0"

__all__ = [
    "__version__", "dtypes", "errors", "convert", "pack_x4", "unpack_x4",
    "FastisaError", "ConstraintError", "AccessError", "OverlapError", "AlignmentError",
    "nki", "tik", "pto", "shim", "cost",
]

_LAZY = {"nki", "tik", "pto", "shim", "cost", "examples"}


def __getattr__(name):
    if name in _LAZY:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


from ._public import make_dir as _make_dir  # noqa: E402

__dir__ = _make_dir(globals(), _LAZY)
