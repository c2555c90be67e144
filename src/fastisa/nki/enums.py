"""Enumerations of ``nki.isa``: engines, accumulator commands, DMA modes.

Re-exported by :mod:`fastisa.nki.isa` (``nisa.engine.vector``, ``nisa.vector_engine``,
``nisa.reduce_cmd.reset_reduce``, ``nisa.oob_mode.skip`` ...).  Instructions accept a
member of these enums, an equivalent object with the same ``.name``, or the name as a
string; :func:`engine_name` normalises.
"""

from __future__ import annotations

import enum

from ..errors import ConstraintError

__all__ = ["engine", "reduce_cmd", "oob_mode", "dge_mode", "matmul_perf_mode", "dma_engine",
           "nc_version", "tensor_engine", "vector_engine",
           "scalar_engine", "gpsimd_engine", "unknown_engine", "engine_name", "ENGINE_COST_NAME"]


class engine(enum.Enum):
    """The NeuronCore compute engines an instruction can be mapped to."""

    unknown = 0
    tensor = 1
    vector = 2
    scalar = 3
    gpsimd = 4
    sync = 5
    dma = 6


class reduce_cmd(enum.Enum):
    """Commands for the per-lane accumulation registers (activation, exponential, ...)."""

    idle = 0
    reset = 1
    reduce = 2
    reset_reduce = 3
    load_reduce = 4


class oob_mode(enum.Enum):
    error = 0
    skip = 1


class dge_mode(enum.Enum):
    """Descriptor generation engine mode; the values are SDK 2.33's (aws-neuron-sdk
    ``nki/api/nki/isa/__init__.py``: unknown 0, swdge 1, hwdge 2, none 3), so kernels that
    pass the integer get the same mode."""
    unknown = 0
    swdge = 1
    hwdge = 2
    none = 3


class matmul_perf_mode(enum.Enum):
    """nc_matmul performance mode (SDK 2.33): ``double_row`` is the FP8 double-rate mode."""

    none = "none"
    double_row = "double_row"


class dma_engine(enum.Enum):
    """DMA transfer engine of ``sendrecv`` (SDK 2.33)."""

    dma = 1
    gpsimd_dma = 2


class nc_version(enum.IntEnum):
    """NeuronCore version: gen2 = Trn1/Inf2, gen3 = Trn2, gen4 = Trn3 (SDK 2.33).  Ordered
    (kernels test ``nisa.get_nc_version() >= nisa.nc_version.gen3``), and equal to the
    generation number, so it compares with ``nki.isa.constants.nc_version`` too."""

    gen2 = 2
    gen3 = 3
    gen4 = 4


tensor_engine = engine.tensor
vector_engine = engine.vector
scalar_engine = engine.scalar
gpsimd_engine = engine.gpsimd
unknown_engine = engine.unknown

#: engine name -> the engine name fastisa.cost.record uses.
ENGINE_COST_NAME = {"tensor": "Tensor", "vector": "Vector", "scalar": "Scalar",
                    "gpsimd": "GpSimd", "sync": "DMA", "dma": "DMA"}


def engine_name(instr: str, value, allowed=None) -> str:
    """Normalise an ``engine=`` argument to its lower-case name, checking ``allowed``.

    ``None`` means ``unknown``.  Raises ConstraintError for anything else.
    """
    if value is None:
        name = "unknown"
    elif isinstance(value, str):
        name = value.lower().removesuffix("_engine")
    else:
        name = str(getattr(value, "name", value)).lower().removesuffix("_engine")
    if name not in engine.__members__:
        raise ConstraintError(f"{instr}: engine must be one of {sorted(engine.__members__)}, "
                              f"got {value!r}")
    if allowed is not None and name not in allowed:
        raise ConstraintError(f"{instr}: engine must be {' or '.join(allowed)}, got {name}")
    return name
