"""``nki.isa.constants``: the enums instructions take (``oob_mode``, ``dge_mode``, ``engine``,
``reduce_cmd``, ``matmul_perf_mode``, ``nc_version``), as in SDK 2.33
(aws-neuron-sdk ``nki/api/nki/isa/__init__.py``)."""

from __future__ import annotations

import enum

from .enums import dge_mode, engine, oob_mode, reduce_cmd  # noqa: F401

__all__ = ["dge_mode", "engine", "oob_mode", "reduce_cmd", "matmul_perf_mode", "nc_version",
           "dma_engine"]


class matmul_perf_mode(enum.Enum):
    """``nc_matmul(perf_mode=)``: ``none`` or FP8 ``double_row`` (NeuronCore-v3+)."""

    none = 0
    double_row = 1
    double_row_gen3 = 2


class nc_version(enum.IntEnum):
    """NeuronCore generations (``nisa.get_nc_version()`` returns one)."""

    gen2 = 2
    gen3 = 3
    gen4 = 4


class dma_engine(enum.Enum):
    """DMA engine selection for ``dma_copy`` / ``dma_transpose`` (accepted; fastisa models
    one DMA queue)."""

    unknown = 0
    sync = 1
    act = 2
    pool = 3
    gpsimd = 4
