"""NKI statistics and cross-partition reductions (SDK 2.33), re-exported by ``nki.isa``.

``bn_stats``, ``bn_aggr`` (Vector engine) and ``tensor_partition_reduce`` (GpSimd) on the
C kernels of ``csrc/fastisa/stats.h`` (driver ``fastisa._kernels.stats``).  The vendor
documents only "computed in float32"; the exact order of operations is fastisa's and is
written out in stats.h and in each docstring (an independent float32 implementation may
differ in the last bits of the variance).

Source: aws-neuron-sdk ``nki/api/nki/isa/__init__.py`` (``bn_stats``, ``bn_aggr``,
``tensor_partition_reduce``); costs from the pre-0.3 docstrings (the NKI docs and simulator guide (github.com/aws-neuron/aws-neuron-sdk, nki/api/ and nki/guides/nki_simulator.rst)).

========================  ========  ===========================================
instruction               engine    cycles (N = elements per partition of the input)
========================  ========  ===========================================
bn_stats                  Vector    ``max(MIN_II, N)``
bn_aggr                   Vector    ``max(MIN_II, 13*N/3)``
tensor_partition_reduce   GpSimd    ``150 + N`` (fastisa's estimate, GPSIMD_START + N)
========================  ========  ===========================================
"""

from __future__ import annotations

import numpy as np

from .. import cost as _cost
from .. import dtypes as _dt
from ..errors import ConstraintError
from . import _compute as _c
from . import _isaplan as _pl
from ._cast import to_f32
from .tensor import NkiTensor

import typing as _typing

if _typing.TYPE_CHECKING:
    from .._types import OpLike

__all__ = ["bn_stats", "bn_aggr", "tensor_partition_reduce"]

MIN_II = _cost.MIN_II
GPSIMD_START = 150
#: nl.tile_size.bn_stats_fmax
BN_STATS_FMAX = 512
_PRED = {"add": 0, "maximum": 1, "max": 1, "minimum": 2, "min": 2, "average": 3,
         "bitwise_or": 4, "bitwise_and": 5}


_K = []


def _k():
    if not _K:                      # imported once (the per-call import machinery is ~us)
        from fastisa._kernels import stats
        _K.append(stats)
    return _K[0]


_HEAD_S = ("bn_stats",)
_HEAD_A = ("bn_aggr",)
_F32 = _dt.float32


def _operand(instr, param, t):
    _c._tensor(instr, param, t)
    _c._onchip(instr, param, t)
    _c._computable(instr, param, t)


def _store(dst: NkiTensor, values_f32: np.ndarray) -> None:
    if dst.dtype.name == "float32":     # a bit copy: skip the elementwise kernel's set-up
        d, commit = _c._dst_rows(dst)
        d[...] = values_f32.reshape(d.shape)
        if commit is not None:
            commit()
        return
    src = NkiTensor(np.ascontiguousarray(values_f32, np.float32).reshape(dst.partitions, -1),
                    _dt.float32)
    _c._run_ew("store", dst, src)


def _viewable(dst, data) -> bool:
    """A plan can reproduce the call: float32 dst writable as a [P, k] view (the full path's
    bit copy in _store), no operand in PSUM."""
    if dst.dtype is not _F32 or not _pl.plannable(dst, data):
        return False
    v = dst.data.view()
    try:
        v.shape = (dst.partitions, dst.free_size)
    except (AttributeError, ValueError):
        return False
    return True


def bn_stats(dst: NkiTensor, data: NkiTensor, name: str | None = None) -> None:
    """Per partition, 6 statistics of the even- and odd-indexed elements of ``data``.

    ``dst[p] = [n_e, mean_e, n_e * var_e, n_o, mean_o, n_o * var_o]`` where the even half
    is elements 0, 2, 4, ... of the flattened free dims and the odd half 1, 3, 5, ...
    In float32, in this order: ``mean = (x_0 + x_2 + ...) / n`` (left to right), then
    ``m2 = sum((x - mean) * (x - mean))`` left to right; an empty half (one element) gives
    0, 0, 0.  Results are rounded once to dst.dtype.

    Parameters
    ----------
    dst : NkiTensor [P, 6] (6 elements per partition) in SBUF / PSUM, non-packed dtype.
    data : NkiTensor [P, ...] in SBUF / PSUM, 1 .. 512 elements per partition
        (``nl.tile_size.bn_stats_fmax``), any non-packed dtype.

    Raises
    ------
    ConstraintError : bad buffer / dtype, partitions differ, dst not 6 per partition,
        more than 512 elements per partition.

    Cost: Vector ``max(MIN_II, N)``.  Source: aws-neuron-sdk
    ``nki/api/nki/isa/__init__.py``, ``bn_stats``.
    """
    instr = "bn_stats"
    key = None
    if _pl.ON[0]:      # a validated signature (nothing here depends on values)
        key = _pl.key(_HEAD_S, (dst, data))
        plan = _pl.CACHE.get(key)
        if plan is not None:
            out = np.empty(plan[1], np.float32)
            _K[0].bn_stats(data.data.reshape(plan[3]), plan[2], out)
            v = dst.data.view()
            v.shape = plan[1]
            v[...] = out
            _cost.record("Vector", instr, plan[0])
            return
    _operand(instr, "dst", dst)
    _operand(instr, "data", data)
    if dst.partitions != data.partitions:
        raise ConstraintError(f"{instr}: dst and data must have the same partition dimension, "
                              f"got {dst.partitions} and {data.partitions}")
    if dst.free_size != 6:
        raise ConstraintError(f"{instr}: dst must have 6 elements per partition, got "
                              f"{dst.free_size} (shape {dst.shape})")
    F = data.free_size
    if not 1 <= F <= BN_STATS_FMAX:
        raise ConstraintError(f"{instr}: data must have 1 to {BN_STATS_FMAX} elements per "
                              f"partition (nl.tile_size.bn_stats_fmax), got {F}")
    out = np.empty((data.partitions, 6), np.float32)
    _k().bn_stats(_c._rows(data), data.dtype.code, out)
    _store(dst, out)
    _cost.record("Vector", instr, max(MIN_II, F))
    if key is not None and _viewable(dst, data):
        _pl.store(key, (max(MIN_II, F), out.shape, data.dtype.code,
                        (data.partitions, F)))


def bn_aggr(dst: NkiTensor, data: NkiTensor, name: str | None = None) -> None:
    """Per partition, the mean and variance from ``(count, mean, m2)`` triples.

    ``data[p]`` holds k triples (e.g. several ``bn_stats`` outputs side by side).  They are
    combined left to right in float32 with Chan et al.'s pairwise update, skipping
    count-0 triples: ``n = na + nb; d = mb - ma; mean = ma + d * (nb / n);
    m2 = (m2a + m2b) + (d * d) * ((na * nb) / n)``; then ``dst[p] = [mean, m2 / n]``
    (``[0, 0]`` when every count is 0), rounded once to dst.dtype.

    Parameters
    ----------
    dst : NkiTensor [P, 2] in SBUF / PSUM, non-packed dtype.
    data : NkiTensor [P, 3k] in SBUF / PSUM (elements per partition a multiple of 3).

    Raises
    ------
    ConstraintError : bad buffer / dtype, partitions differ, dst not 2 per partition, data's
        elements per partition not a positive multiple of 3.

    Cost: Vector ``max(MIN_II, 13*N/3)``.  Source: aws-neuron-sdk
    ``nki/api/nki/isa/__init__.py``, ``bn_aggr``.
    """
    instr = "bn_aggr"
    key = None
    if _pl.ON[0]:      # a validated signature (nothing here depends on values)
        key = _pl.key(_HEAD_A, (dst, data))
        plan = _pl.CACHE.get(key)
        if plan is not None:
            rows = data.data.reshape(plan[2])
            if data.dtype is not _F32 or not rows.flags.c_contiguous:
                rows = np.ascontiguousarray(to_f32(rows, data.dtype))
            out = np.empty(plan[1], np.float32)
            _K[0].bn_aggr(rows, out)
            v = dst.data.view()
            v.shape = plan[1]
            v[...] = out
            _cost.record("Vector", instr, plan[0])
            return
    _operand(instr, "dst", dst)
    _operand(instr, "data", data)
    if dst.partitions != data.partitions:
        raise ConstraintError(f"{instr}: dst and data must have the same partition dimension, "
                              f"got {dst.partitions} and {data.partitions}")
    if dst.free_size != 2:
        raise ConstraintError(f"{instr}: dst must have 2 elements per partition (mean, "
                              f"variance), got {dst.free_size} (shape {dst.shape})")
    F = data.free_size
    if F == 0 or F % 3:
        raise ConstraintError(f"{instr}: data's elements per partition must be a positive "
                              f"multiple of 3 (count, mean, variance*count), got {F}")
    rows = np.ascontiguousarray(to_f32(_c._rows(data), data.dtype))
    out = np.empty((data.partitions, 2), np.float32)
    _k().bn_aggr(rows, out)
    _store(dst, out)
    _cost.record("Vector", instr, max(MIN_II, 13 * F // 3))
    if key is not None and _viewable(dst, data):
        _pl.store(key, (max(MIN_II, 13 * F // 3), out.shape, rows.shape))


def tensor_partition_reduce(dst: NkiTensor, op: OpLike, data: NkiTensor,
                            name: str | None = None) -> None:
    """``dst[0, j] = op over p of data[p, j]``: reduce across partitions (GpSimd engine).

    Arithmetic ops (add, maximum, minimum, average) fold partitions 0, 1, ... P-1 in
    float32 (``average`` = the sum divided by P, one rounding each) and round once to
    dst.dtype; ``bitwise_or`` / ``bitwise_and`` combine the bit patterns of an integer
    ``data`` (zero-extended, truncated to dst's width).  ``maximum`` / ``minimum`` are
    IEEE 754-2019 (NaN propagates, -0 < +0).

    Parameters
    ----------
    dst : NkiTensor [1, ...] in SBUF with data's elements per partition.
    op : ``nl.add``, ``nl.maximum``, ``nl.minimum``, ``nl.bitwise_or``, ``nl.bitwise_and``
        or the name ``"average"`` (``nl`` has no average operator object).
    data : NkiTensor [P, ...] in SBUF, P <= 128, any non-packed dtype (integer for the
        bitwise ops).

    Raises
    ------
    ConstraintError : bad buffer / dtype / op, dst not one partition, counts differ.

    Cost: GpSimd ``150 + N`` (fastisa's estimate).  Source: aws-neuron-sdk
    ``nki/api/nki/isa/__init__.py``, ``tensor_partition_reduce``.
    """
    instr = "tensor_partition_reduce"
    _operand(instr, "dst", dst)
    _operand(instr, "data", data)
    _c._onchip(instr, "dst", dst, allow_psum=False)
    _c._onchip(instr, "data", data, allow_psum=False)
    opname = op if isinstance(op, str) else getattr(op, "name", None)
    if opname not in _PRED:
        raise ConstraintError(f"{instr}: op must be add, average, maximum, minimum, "
                              f"bitwise_or or bitwise_and, got {op!r}")
    code = _PRED[opname]
    if dst.partitions != 1:
        raise ConstraintError(f"{instr}: dst must have one partition, got shape {dst.shape}")
    if dst.free_size != data.free_size:
        raise ConstraintError(f"{instr}: dst and data must have the same number of elements "
                              f"per partition, got {dst.free_size} and {data.free_size}")
    bitwise = code >= 4
    if bitwise and not (_c._is_int(data.dtype) and _c._is_int(dst.dtype)):
        raise ConstraintError(f"{instr}: {opname} needs integer dtypes, got data "
                              f"{data.dtype.name} and dst {dst.dtype.name}")
    F = data.free_size
    out = np.empty(max(F, 1), np.float32)
    bits = np.empty(max(F, 1), np.uint32)
    _k().partition_reduce(_c._rows(data), data.dtype.code, code, out, bits)
    if bitwise:
        w = dst.dtype.itemsize * 8
        vals = (bits[:F].astype(np.uint64) & ((1 << w) - 1)).astype(
            {8: np.uint8, 16: np.uint16, 32: np.uint32}[w])
        dst.data[...] = vals.view(dst.dtype.np_dtype).reshape(dst.shape)
    else:
        _store(dst, out[:F])
    _cost.record("GpSimd", instr, GPSIMD_START + F)
