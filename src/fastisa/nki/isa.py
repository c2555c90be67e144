"""``nki.isa`` for fastisa: NKI 0.7 instructions, destination first, executed eagerly.

This module holds the data-movement and selection instructions (``dma_copy``, ``memset``,
``iota``, ``topk``, ``max8``, ``nc_find_index8``, ``nc_match_replace8``); the compute
instructions (``tensor_scalar``, ``activation``, ...) come from :mod:`fastisa.nki._compute`
and are re-exported at the end.  Every instruction validates all of its documented
constraints before touching memory (raising :mod:`fastisa.errors` exceptions that name the
instruction, the parameter, the rule and the value), then runs one kernel, then adds its
estimated cost to its engine with :func:`fastisa.cost.record`.

Engine costs (cycles; N = elements per partition; MIN_II = 64):

=====================  ========  ===========================================================
instruction            engine    cycles
=====================  ========  ===========================================================
topk                   GpSimd    ``4*n + k`` (the NKI docs, page nki.isa.topk (github.com/aws-neuron/aws-neuron-sdk, nki/api/nki.isa.rst))
max8                   Vector    ``N`` of src (the NKI docs and simulator guide (github.com/aws-neuron/aws-neuron-sdk, nki/api/ and nki/guides/nki_simulator.rst))
nc_find_index8         Vector    ``N`` of data
nc_match_replace8      Vector    ``max(MIN_II, N)`` (the old table's ``min`` read as a typo)
memset                 Vector    ``max(MIN_II, N/2)`` for value 0 in bf16/fp16, else
                       /GpSimd   ``max(MIN_II, N)``
iota                   GpSimd    ``150 + N`` (GPSIMD_START + N)
dma_copy               DMA       ``max(MIN_II, N)`` of dst (fastisa's estimate: no formula
                                 is published)
=====================  ========  ===========================================================
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .. import cost as _cost
from .. import dtypes as _dt
from .. import plans as _plans
from ..errors import ConstraintError, OverlapError
from . import _isaplan as _pl
from ._cast import from_f32, require_unpacked, to_f32
from .enums import (dge_mode, engine, engine_name, gpsimd_engine, oob_mode, reduce_cmd,
                    scalar_engine, tensor_engine, unknown_engine, vector_engine)
from .tensor import NkiTensor, _MaskedView, require_buffer, require_dtype, require_tensor

import typing as _typing

if _typing.TYPE_CHECKING:
    from collections.abc import Sequence

    from .._types import EnumLike, Int, OpLike, Real

__all__ = ["dma_copy", "memset", "iota", "topk", "max8", "nc_find_index8",
           "nc_match_replace8", "engine", "reduce_cmd", "oob_mode", "dge_mode",
           "tensor_engine", "vector_engine", "scalar_engine", "gpsimd_engine",
           "unknown_engine", "NkiTensor"]

MIN_II = _cost.MIN_II
GPSIMD_START = 150

#: worker threads of the top-k kernel (0 = the NKI kernels' thread count,
#: :data:`fastisa.nki._compute.THREADS`).
TOPK_THREADS = 0


# ---- helpers -----------------------------------------------------------------------------
def _int_param(instr: str, param: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ConstraintError(f"{instr}: {param} must be an integer, got {value!r}")
    return int(value)


def _same_partitions(instr: str, a_name: str, a: NkiTensor, b_name: str, b: NkiTensor) -> None:
    if a.partitions != b.partitions:
        raise ConstraintError(f"{instr}: {a_name} and {b_name} must have the same partition "
                              f"dimension, got {a.partitions} and {b.partitions}")


def _max_rank(instr: str, param: str, t: NkiTensor, rank: int) -> None:
    if t.ndim > rank:
        raise ConstraintError(f"{instr}: {param} must have rank <= {rank} (at most {rank - 1} "
                              f"free dimensions), got rank {t.ndim} (shape {t.shape})")
    if t.ndim < 2:
        raise ConstraintError(f"{instr}: {param} must have a partition and a free dimension, "
                              f"got shape {t.shape}")


def _rows(t: NkiTensor) -> np.ndarray:
    """[partitions, elements per partition] view of the storage (a copy if strides demand)."""
    return t.data.reshape(t.partitions, t.free_size)


def _write(dst: NkiTensor, values: np.ndarray) -> None:
    """Store ``values`` (any shape with dst's element count, dst's storage dtype) into dst."""
    dst.data[...] = values.reshape(dst.shape)


def _no_overlap(instr: str, a_name: str, a: NkiTensor, b_name: str, b: NkiTensor) -> None:
    if np.may_share_memory(a.data, b.data) and np.shares_memory(a.data, b.data):
        raise OverlapError(f"{instr}: {a_name} must not overlap {b_name} "
                           f"({a.name!r} and {b.name!r} share memory)")


# ---- data movement ---------------------------------------------------------------------------
def _distinct_elements(a: np.ndarray) -> bool:
    """True when no two elements of ``a`` share a byte (no zero stride, no rows laid over
    each other): each dimension's stride, in increasing order of size, clears the extent of
    the dimensions inside it.  A copy into such an array may be split over threads."""
    if a.flags.c_contiguous or a.flags.f_contiguous:
        return True
    span = a.itemsize
    for n, st in sorted(((n, abs(st)) for n, st in zip(a.shape, a.strides) if n > 1),
                        key=lambda t: t[1]):
        if st < span:
            return False
        span = st * (n - 1) + span
    return True


def dma_copy(dst: NkiTensor, src: NkiTensor, priority: Int | None = None,
             oob_mode: EnumLike | None = None, dge_mode: EnumLike | None = None,
             engine: EnumLike | None = None, name: str | None = None) -> None:
    """``dst[...] = src[...]`` by DMA, elements in C order; a dtype change goes src -> fp32 -> dst.

    Parameters
    ----------
    dst, src : NkiTensor in any buffer (HBM <-> SBUF, SBUF -> SBUF, HBM -> HBM), same total
        element count (shapes may differ).  Same dtype: a bit-exact copy (packed x4 types
        included).  Different dtypes: each element is converted to float32 (exactly for
        floats; integers RNE) then rounded once to dst.dtype (integers: RNE + saturation,
        NaN -> 0) -- the NKI docs, page NKI ISA API Common Fields (github.com/aws-neuron/aws-neuron-sdk, nki/api/nki.api.shared.rst) "Type Casting".  Packed x4 types cannot change dtype.
    oob_mode : ``error`` (default: an out-of-bounds access raises AccessError) or ``skip``
        (with an indirect src or dst: out-of-bounds indices are skipped, their dst positions
        keep their contents; a ``.ap(scalar_offset=...)`` src or dst whose access leaves its
        tensor skips the whole copy; :func:`fastisa.nki._dma.dma_copy_modes`).
    dge_mode : none / swdge / hwdge / unknown (hwdge is refused for an indirect src).
    priority, engine : accepted.

    Raises
    ------
    ConstraintError : not tensors, element counts differ, packed dtype change.

    Cost: DMA ``max(MIN_II, N)`` cycles, N = dst elements per partition (fastisa's estimate);
    in the engine schedule a fixed start-up plus the bytes over the bandwidth of the DMA
    engines the transfer's partitions use (:data:`fastisa.schedule.DMA_MODEL`).
    Reference: the NKI docs and simulator guide (github.com/aws-neuron/aws-neuron-sdk, nki/api/ and nki/guides/nki_simulator.rst).
    """
    instr = "dma_copy"
    # speed15b branch: plain tensors without oob_mode / dge_mode (no access-pattern view,
    # no mode) have nothing for the _dma module's mode handling to do -- skipped
    plain = oob_mode is None and dge_mode is None and dst.__class__ is NkiTensor and \
        src.__class__ is NkiTensor
    if not plain and _dma_scalar_skip(instr, dst, src, oob_mode):
        return
    require_tensor(instr, "src", src)
    if plain or (not _is_indirect(dst) and not isinstance(dst, _MaskedView)):
        require_tensor(instr, "dst", dst)   # oob_mode / dge_mode / indirect: the _dma module
    if dst.size != src.size:
        raise ConstraintError(f"{instr}: dst and src must have the same number of elements, got "
                              f"{dst.size} (shape {dst.shape}) and {src.size} (shape {src.shape})")
    if priority is not None:
        p = _int_param(instr, "priority", priority)
        if not 0 <= p <= 3:
            raise ConstraintError(f"{instr}: priority must be in [0, 3], got {p}")
    if not plain and _dma_copy_modes(instr, dst, src, oob_mode, dge_mode):
        return
    same = dst.dtype is src.dtype
    if not same:
        require_unpacked(instr, "src", src.dtype)
        require_unpacked(instr, "dst", dst.dtype)
    if same:
        if dst.shape == src.shape:
            d, s = dst.data, src.data
            if (d.nbytes >= 262144 and d.ndim <= 5 and d.__class__ is np.ndarray
                    and s.__class__ is np.ndarray and d.flags.writeable
                    and _distinct_elements(d) and not np.may_share_memory(d, s)):
                # a large copy: row pieces over the worker pool (the same bytes; a single
                # core's memcpy of 1 MiB runs at about 20 GB/s here)
                _move_k.strided(d, s, _compute._threads())
            else:
                np.copyto(d, s)
        else:
            _write(dst, src.data.reshape(-1))
    else:
        _write(dst, from_f32(to_f32(src.data, src.dtype), dst.dtype))
    parts = [t.shape[0] for t in (dst, src) if t.buffer.on_chip and t.ndim]
    # queues: loads (dst on chip) and stores; both share the DMA engines' bandwidth
    _cost.record("DMA", instr, max(MIN_II, dst.free_size), reads=[src], writes=[dst],
                 nbytes=max(dst.data.nbytes, src.data.nbytes),
                 partitions=max(parts) if parts else None, shared="nki.dma",
                 queue="DMA" if dst.buffer.on_chip else "DMA-out")


def memset(dst: NkiTensor, value: Real, engine: EnumLike | None = None,
           name: str | None = None) -> None:
    """``dst[...] = value``: fill a tensor with a compile-time constant.

    Parameters
    ----------
    dst : NkiTensor in SBUF or PSUM (GpSimd: SBUF only), any dtype; packed x4 types only
        with ``value == 0``.
    value : int or float.  Float dst: value -> float32 -> dst.dtype (one RNE rounding from
        float32).  Integer dst: an integer value representable in dst.dtype is stored
        exactly; anything else goes through float32 (RNE, saturation, NaN -> 0).
    engine : ``nisa.vector_engine`` (default) or ``nisa.gpsimd_engine``.

    Raises
    ------
    ConstraintError : bad buffer, engine, packed dtype with a non-zero value, non-number.

    Cost: ``max(MIN_II, N/2)`` cycles when value is 0 and dst is bf16/fp16, else
    ``max(MIN_II, N)``, on the chosen engine.  Reference: the NKI docs and simulator guide (github.com/aws-neuron/aws-neuron-sdk, nki/api/ and nki/guides/nki_simulator.rst).
    """
    instr = "memset"
    require_tensor(instr, "dst", dst)
    eng = engine_name(instr, engine, ("unknown", "vector", "gpsimd"))
    if eng == "gpsimd":
        require_buffer(instr, "dst", dst, ("sbuf",))
    else:
        require_buffer(instr, "dst", dst, ("sbuf", "psum"))
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer,
                                                                     np.floating)):
        raise ConstraintError(f"{instr}: value must be an int or float constant, got {value!r}")
    fmt = dst.dtype
    if fmt.kind == "packed":
        if value != 0:
            raise ConstraintError(f"{instr}: value must be 0 for packed type {fmt.name}, "
                                  f"got {value!r}")
        dst.data[...] = 0
    elif fmt.kind in ("int", "bool") and isinstance(value, (int, np.integer)) and \
            _in_int_range(int(value), fmt):
        dst.data[...] = int(value)
    else:
        v = from_f32(np.array([value], dtype=np.float32), fmt)[0]
        d = dst.data
        if not _fill_large(d, v):
            d[...] = v
    n = dst.free_size
    cyc = max(MIN_II, n // 2) if (value == 0 and fmt.name in ("bfloat16", "float16")) \
        else max(MIN_II, n)
    _cost.record("GpSimd" if eng == "gpsimd" else "Vector", instr, cyc)


def _fill_large(d: np.ndarray, v) -> bool:
    """memset of a large C-contiguous, 8-byte aligned tensor (>= 256 KiB): ``d[...] = v``
    as a 64-bit pattern fill over the shared pool (the same bits; issue 15).  False (nothing
    written) for any other storage."""
    if not (d.nbytes >= 1 << 18 and type(d) is np.ndarray and d.flags.c_contiguous
            and d.flags.writeable and d.__array_interface__["data"][0] % 8 == 0
            and d.itemsize in (1, 2, 4, 8) and np.little_endian):
        return False
    one = np.empty(1, d.dtype)
    one[0] = v
    bits = int(one.view(np.dtype("u%d" % d.itemsize))[0])
    pat = 0
    for i in range(8 // d.itemsize):
        pat |= bits << (8 * d.itemsize * i)
    _pool.fill_array(d, pat, _compute._threads())
    return True


def _in_int_range(v: int, fmt) -> bool:
    if fmt.kind == "bool":
        return v in (0, 1)
    info = np.iinfo(fmt.np_dtype)
    return int(info.min) <= v <= int(info.max)


def iota(dst: NkiTensor, pattern: Sequence[Sequence[Int]], offset: Int = 0,
         channel_multiplier: Int = 0, name: str | None = None) -> None:
    """``dst[p, i] = offset + p*channel_multiplier + sum_d idx_d(i)*step_d`` (GpSimd).

    Parameters
    ----------
    dst : NkiTensor in SBUF, any non-packed dtype.
    pattern : list of up to 4 ``[step, num]`` pairs (outermost first); the product of the
        ``num`` must equal dst's elements per partition; element i of a partition has the
        multi-index ``idx(i)`` over the ``num`` (C order).
    offset, channel_multiplier : int.
    The value is computed in int32 (wrapping modulo 2**32); an int32 dst receives it
    exactly, any other dtype through float32 (the NKI docs, page NKI ISA API Common Fields (github.com/aws-neuron/aws-neuron-sdk, nki/api/nki.api.shared.rst) "Type Casting").

    Raises
    ------
    ConstraintError : bad buffer / dtype / pattern, counts not matching.

    Cost: GpSimd ``150 + N`` cycles.  Reference: the NKI docs and simulator guide (github.com/aws-neuron/aws-neuron-sdk, nki/api/ and nki/guides/nki_simulator.rst).
    """
    instr = "iota"
    require_tensor(instr, "dst", dst)
    require_buffer(instr, "dst", dst, ("sbuf",))
    require_unpacked(instr, "dst", dst.dtype)
    offset = _int_param(instr, "offset", offset)
    cm = _int_param(instr, "channel_multiplier", channel_multiplier)
    try:
        pairs = [(int(s), int(n)) for s, n in pattern]
    except (TypeError, ValueError):
        raise ConstraintError(f"{instr}: pattern must be a list of [step, num] pairs, "
                              f"got {pattern!r}") from None
    if not 1 <= len(pairs) <= 4:
        raise ConstraintError(f"{instr}: pattern must have 1 to 4 [step, num] pairs, got "
                              f"{len(pairs)}")
    if any(n < 1 for _, n in pairs):
        raise ConstraintError(f"{instr}: every num in pattern must be >= 1, got {pattern!r}")
    total = math.prod(n for _, n in pairs)
    if total != dst.free_size:
        raise ConstraintError(f"{instr}: pattern must cover dst's {dst.free_size} elements per "
                              f"partition (product of num), got {total}")
    v = np.full((dst.partitions, 1), offset, dtype=np.int64) + \
        np.arange(dst.partitions, dtype=np.int64)[:, None] * cm
    acc = np.zeros((1,), dtype=np.int64)
    for step, num in pairs:
        acc = (acc[:, None] + np.arange(num, dtype=np.int64)[None, :] * step).reshape(-1)
    v = v + acc[None, :]
    v32 = (v & 0xFFFFFFFF).astype(np.uint32).view(np.int32)
    if dst.dtype.name == "int32":
        _write(dst, v32)
    else:
        _write(dst, from_f32(v32.astype(np.float32), dst.dtype))
    _cost.record("GpSimd", instr, GPSIMD_START + dst.free_size)


# ---- selection -------------------------------------------------------------------------------
def topk(val_dst: NkiTensor, idx_dst: NkiTensor, src: NkiTensor, n: Int, sorted: bool = False,
         name: str | None = None) -> None:
    """Top-k per 16-partition group over a bf16 snake (the NKI docs, page nki.isa.topk (github.com/aws-neuron/aws-neuron-sdk, nki/api/nki.isa.rst)), on the GpSimd engine.

    Group g (partitions 16g .. 16g+15) holds one snake: element e at partition 16g + e % 16,
    free position e // 16 (free dims flattened in C order), e = 0 .. n-1; storage past n is
    ignored.  k = val_dst's elements per partition.  For each group the k largest values
    (bf16 bits copied from src) and their snake indices (uint32, 0 .. n-1) are written in the
    same snake layout: result j at partition 16g + j % 16, free position j // 16.  Only the
    k result slots are written: positions >= ceil(k/16) and the 16*ceil(k/16) - k
    unspecified slots of the last written position keep what they held.

    Selection: exactly the top-k by value; values compare as numbers (-0 == +0) and ties
    are broken by the lower snake index.  ``sorted=True``: descending by value (ties: lower
    index first), k <= 8192.  ``sorted=False``: the order is unspecified (fastisa writes the
    selected set in an order that depends only on the input).  NaN input is undefined in
    the spec: fastisa ranks a NaN by its bit pattern (positive NaN above +inf, negative
    NaN below -inf) and emits a RuntimeWarning.

    Parameters
    ----------
    val_dst : NkiTensor bf16 in SBUF, [P, k] (at most two free dims, rank <= 3).
    idx_dst : NkiTensor uint32 in SBUF, same partitions and k as val_dst (rank <= 3).
    src : NkiTensor bf16 in SBUF, [P, ...] with at most three free dims (rank <= 4) and at
        least ceil(n/16) elements per partition; P a multiple of 16.
    n : int, 8 <= n < 65536, active elements per snake.
    sorted : bool.

    Raises
    ------
    ConstraintError : any constraint of the NKI docs, page nki.isa.topk (github.com/aws-neuron/aws-neuron-sdk, nki/api/nki.isa.rst) (dtypes, buffers, ranks, 8 <= n < 65536,
        1 <= k <= 16384, k <= n, k <= 8192 when sorted, src free size >= ceil(n/16),
        partitions a multiple of 16 and equal across the three tensors).
    OverlapError : an output shares memory with src or with the other output.

    Cost: GpSimd ``4*n + k`` cycles (the groups run in parallel).
    """
    instr = "topk"
    # speed15b branch (issue 15): every check below depends only on the operands' forms
    # and on n and sorted, so a signature that passed them once runs _topk_run directly
    # (which checks where the operands are in memory, the overlaps, on every call)
    key = _pl.key(_TOPK_HEAD, (val_dst, idx_dst, src), (n, sorted)) if _pl.ON[0] else None
    plan = _TOPK_PLANS.get(key) if key is not None else None
    if plan is not None:
        status = _topk_run(instr, val_dst, idx_dst, src, plan[0], plan[1], plan[2], n, sorted)
    else:
        status = _topk_checked(instr, val_dst, idx_dst, src, n, sorted)
        if key is not None:
            _plans.store(_TOPK_PLANS, key, (src.partitions, val_dst.free_size, (n + 15) // 16))
    if status & 1:
        warnings.warn(f"{instr}: src holds NaN among the first n = {n} snake elements; NaN "
                      f"input is undefined behaviour (the NKI docs, page nki.isa.topk (github.com/aws-neuron/aws-neuron-sdk, nki/api/nki.isa.rst)): mask or replace it",
                      RuntimeWarning, stacklevel=2)
    # speed15 branch: the operands the record would infer from this frame (its tensor
    # parameters in order, none named as written: fastisa.schedule._WRITE_NAMES), given
    # directly -- the same events, without reading the frame's locals
    _cost.record("GpSimd", instr, 4 * n + val_dst.free_size, reads=[val_dst, idx_dst, src],
                 writes=[])


_TOPK_HEAD = ("topk",)
_TOPK_PLANS: dict = _plans.register({})


def _topk_checked(instr, val_dst, idx_dst, src, n, sorted):
    """topk's documented checks, then _topk_run; returns its status."""
    for pname, t in (("val_dst", val_dst), ("idx_dst", idx_dst), ("src", src)):
        require_tensor(instr, pname, t)
        require_buffer(instr, pname, t, ("sbuf",))
    require_dtype(instr, "src", src, ("bfloat16",))
    require_dtype(instr, "val_dst", val_dst, ("bfloat16",))
    require_dtype(instr, "idx_dst", idx_dst, ("uint32",))
    _max_rank(instr, "src", src, 4)
    _max_rank(instr, "val_dst", val_dst, 3)
    _max_rank(instr, "idx_dst", idx_dst, 3)
    P = src.partitions
    if P % 16 != 0 or P == 0:
        raise ConstraintError(f"{instr}: src partition dimension must be a positive multiple "
                              f"of 16, got {P}")
    _same_partitions(instr, "val_dst", val_dst, "src", src)
    _same_partitions(instr, "idx_dst", idx_dst, "src", src)
    n = _int_param(instr, "n", n)
    if not 8 <= n < 65536:
        raise ConstraintError(f"{instr}: n must satisfy 8 <= n < 65536, got {n}")
    if not isinstance(sorted, (bool, np.bool_)):
        raise ConstraintError(f"{instr}: sorted must be a bool, got {sorted!r}")
    k = val_dst.free_size
    if idx_dst.free_size != k:
        raise ConstraintError(f"{instr}: idx_dst must have the same free size k as val_dst "
                              f"({k}), got {idx_dst.free_size} (shape {idx_dst.shape})")
    if not 1 <= k <= 16384:
        raise ConstraintError(f"{instr}: k (val_dst free size) must satisfy 1 <= k <= 16384, "
                              f"got {k}")
    if k > n:
        raise ConstraintError(f"{instr}: k (val_dst free size) must be <= n ({n}), got {k}")
    if sorted and k > 8192:
        raise ConstraintError(f"{instr}: k (val_dst free size) must be <= 8192 when "
                              f"sorted=True, got {k}")
    cols = (n + 15) // 16
    if src.free_size < cols:
        raise ConstraintError(f"{instr}: src free size must be >= ceil(n/16) = {cols}, got "
                              f"{src.free_size} (shape {src.shape})")
    return _topk_run(instr, val_dst, idx_dst, src, P, k, cols, n, sorted)


def _topk_run(instr, val_dst, idx_dst, src, P, k, cols, n, sorted):
    """topk on checked operand forms: the overlap checks (values: where the operands are),
    the kernel; returns the kernel's status (bit 0: NaN seen)."""
    _no_overlap(instr, "val_dst", val_dst, "src", src)
    _no_overlap(instr, "idx_dst", idx_dst, "src", src)
    _no_overlap(instr, "val_dst", val_dst, "idx_dst", idx_dst)

    from .._kernels import select as _sel
    s2 = _rows(src).view(np.uint16)[:, :cols]
    if s2.strides[1] != 2:
        s2 = np.ascontiguousarray(s2)
    outs = []
    for t, sdt in ((val_dst, np.uint16), (idx_dst, np.uint32)):
        v = t.data.view(sdt).view()
        try:
            v.shape = (P, k)
            outs.append((v, None))
        except (AttributeError, ValueError):
            tmp = np.array(t.data.view(sdt).reshape(P, k))
            outs.append((tmp, t))
    status = _sel.topk_bf16(s2, n, bool(sorted), outs[0][0], outs[1][0],
                            TOPK_THREADS or _compute._threads())
    if status & 2:
        raise MemoryError(f"{instr}: scratch memory for n = {n}, k = {k} is not available")
    for arr, t in outs:
        if t is not None:
            t.data[...] = arr.view(t.dtype.np_dtype).reshape(t.shape)
    return status


def _vector_operand(instr, param, t, lo=None, hi=None, rank=None):
    require_tensor(instr, param, t)
    require_buffer(instr, param, t, ("sbuf", "psum"))
    require_unpacked(instr, param, t.dtype)
    if rank is not None:
        _max_rank(instr, param, t, rank)
    if t.partitions < 1:
        raise ConstraintError(f"{instr}: {param} must have at least one partition, got shape "
                              f"{t.shape}")
    if lo is not None and not lo <= t.free_size <= hi:
        raise ConstraintError(f"{instr}: {param} must have {lo} to {hi} elements per partition, "
                              f"got {t.free_size} (shape {t.shape})")


def _rows_f32(t: NkiTensor) -> np.ndarray:
    return np.ascontiguousarray(to_f32(_rows(t), t.dtype))


def max8(dst: NkiTensor, src: NkiTensor, name: str | None = None) -> None:
    """``dst[p, :] = the 8 largest of src[p, ...]``, descending, on the Vector engine.

    Elements are compared as float32 (-0 == +0; a NaN ranks above +inf; equal values keep
    their source order) and the selected values are rounded once to dst.dtype (bit-exact
    when dst.dtype == src.dtype, as every such value is exact in float32 except int32 /
    uint32 beyond 2**24).

    Parameters
    ----------
    dst : NkiTensor in SBUF/PSUM, exactly 8 elements per partition, rank <= 3.
    src : NkiTensor in SBUF/PSUM, 8 .. 16384 elements per partition, rank <= 5, any
        non-packed dtype; same partition dimension as dst.

    Raises
    ------
    ConstraintError : bad buffer, dtype, rank, element counts, partitions.

    Cost: Vector ``N`` cycles (N = src elements per partition).  Reference: nki.md 2.2.
    """
    instr = "max8"
    _vector_operand(instr, "dst", dst, 8, 8, rank=3)
    _vector_operand(instr, "src", src, 8, 16384, rank=5)
    _same_partitions(instr, "dst", dst, "src", src)
    from .._kernels import select as _sel
    rows = _rows_f32(src)
    val = np.empty((src.partitions, 8), np.float32)
    idx = np.empty((src.partitions, 8), np.uint32)
    _sel.max8_f32(rows, val, idx)
    if dst.dtype is src.dtype:
        picked = np.take_along_axis(_rows(src), idx.astype(np.intp), axis=1)
        _write(dst, picked)
    else:
        _write(dst, from_f32(val, dst.dtype))
    _cost.record("Vector", instr, src.free_size)


def nc_find_index8(dst: NkiTensor, data: NkiTensor, vals: NkiTensor,
                   name: str | None = None) -> None:
    """``dst[p, j] = first index i with data[p, i] == vals[p, j]`` (Vector engine).

    data's free dims are flattened (C order); data and vals are compared as float32
    (-0 == +0, NaN never matches).  A value that occurs several times in vals takes
    successive occurrences: each later copy searches after the index its previous copy
    found.  A value with no (further) occurrence gives all-ones (0xFFFFFFFF for uint32,
    0xFFFF for uint16) -- the NKI 0.6 behaviour (the NKI docs and simulator guide (github.com/aws-neuron/aws-neuron-sdk, nki/api/ and nki/guides/nki_simulator.rst)).

    Parameters
    ----------
    dst : NkiTensor uint32 or uint16 in SBUF/PSUM, 8 elements per partition.
    data : NkiTensor in SBUF/PSUM, 8 .. 16384 elements per partition, any non-packed dtype.
    vals : NkiTensor in SBUF/PSUM, exactly 8 elements per partition.

    Raises
    ------
    ConstraintError : bad dtype, buffer, element counts, partitions.

    Cost: Vector ``N`` cycles (N = data elements per partition).
    """
    instr = "nc_find_index8"
    _vector_operand(instr, "dst", dst, 8, 8, rank=3)
    require_dtype(instr, "dst", dst, ("uint32", "uint16"))
    _vector_operand(instr, "data", data, 8, 16384, rank=5)
    _vector_operand(instr, "vals", vals, 8, 8, rank=3)
    _same_partitions(instr, "dst", dst, "data", data)
    _same_partitions(instr, "vals", vals, "data", data)
    from .._kernels import select as _sel
    out = np.empty((data.partitions, 8), np.uint32)
    _sel.find_index8_f32(_rows_f32(data), _rows_f32(vals), out)
    _write(dst, out.astype(dst.dtype.np_dtype) if dst.dtype.name == "uint32"
           else (out & 0xFFFF).astype(np.uint16))
    _cost.record("Vector", instr, data.free_size)


def nc_match_replace8(dst: NkiTensor, data: NkiTensor, vals: NkiTensor, imm: Real,
                      dst_idx: NkiTensor | None = None, name: str | None = None) -> None:
    """Replace the first occurrence of each of the 8 vals in data by imm (Vector engine).

    Per partition, for i = 7 down to 0 (reverse order, NKI 0.6 behaviour): find the first
    element of the working copy equal to vals[i] (float32 compare, -0 == +0, NaN never
    matches), replace it by imm and record its index in dst_idx[i] (all-ones when there is
    none).  Searches are sequential: a later search sees earlier replacements, so with
    duplicate vals the earliest occurrence goes to the highest slot
    (data = [1,2,3,4,8,8,8,8,8,8,8], vals = [3,8,8,8,8,8,8,8] -> dst_idx = [2,10,9,8,7,6,5,4]).
    dst = data with the replacements; when dst.dtype == data.dtype the other elements are
    copied bit-exactly and imm is rounded once to dst.dtype, otherwise every element goes
    through float32.  dst may be data itself (in place).

    Parameters
    ----------
    dst : NkiTensor in SBUF/PSUM with data's partitions and elements per partition.
    data : NkiTensor in SBUF/PSUM, 8 .. 16384 elements per partition, any non-packed dtype.
    vals : NkiTensor in SBUF/PSUM, exactly 8 elements per partition.
    imm : float (a float32 constant).
    dst_idx : optional NkiTensor uint32 or uint16, 8 elements per partition.

    Raises
    ------
    ConstraintError : bad dtype, buffer, element counts, partitions, imm not a number.
    OverlapError : dst_idx overlapping data or dst.

    Cost: Vector ``max(MIN_II, N)`` cycles (N = data elements per partition).
    """
    instr = "nc_match_replace8"
    _vector_operand(instr, "data", data, 8, 16384, rank=5)
    _vector_operand(instr, "dst", dst, data.free_size, data.free_size, rank=5)
    _vector_operand(instr, "vals", vals, 8, 8, rank=3)
    _same_partitions(instr, "dst", dst, "data", data)
    _same_partitions(instr, "vals", vals, "data", data)
    if isinstance(imm, (bool, np.bool_)) or not isinstance(imm, (int, float, np.integer,
                                                                 np.floating)):
        raise ConstraintError(f"{instr}: imm must be a float constant, got {imm!r}")
    if dst_idx is not None:
        _vector_operand(instr, "dst_idx", dst_idx, 8, 8, rank=3)
        require_dtype(instr, "dst_idx", dst_idx, ("uint32", "uint16"))
        _same_partitions(instr, "dst_idx", dst_idx, "data", data)
        _no_overlap(instr, "dst_idx", dst_idx, "data", data)
        _no_overlap(instr, "dst_idx", dst_idx, "dst", dst)
    from .._kernels import select as _sel
    imm32 = np.float32(imm)
    work = _rows_f32(data)
    idx = np.empty((data.partitions, 8), np.uint32)
    _sel.match_replace8_f32(work, _rows_f32(vals), float(imm32), idx)
    if dst.dtype is data.dtype:
        res = np.array(_rows(data), copy=True)
        hit = idx != 0xFFFFFFFF
        rows = np.nonzero(hit)[0]
        res[rows, idx[hit].astype(np.intp)] = from_f32(np.array([imm32]), dst.dtype)[0]
        _write(dst, res)
    else:
        _write(dst, from_f32(work, dst.dtype))
    if dst_idx is not None:
        _write(dst_idx, idx if dst_idx.dtype.name == "uint32" else (idx & 0xFFFF).astype(np.uint16))
    _cost.record("Vector", instr, max(MIN_II, data.free_size))


from ._compute import *  # noqa: F401,F403,E402
from . import _compute  # noqa: E402
from .._kernels import move as _move_k  # noqa: E402
from .._kernels import pool as _pool  # noqa: E402
from ._select import *  # noqa: F401,F403,E402
from ._pe import *  # noqa: F401,F403,E402
# the elementwise instructions through their per-signature plans (issue 15, speed family)
from ._plan import tensor_copy, tensor_scalar, tensor_tensor  # noqa: F401,E402

# ---- nki-isa family: SDK 2.33 instructions beyond NKI 0.7's core set ------------------------
from .enums import dma_engine, matmul_perf_mode, nc_version  # noqa: F401,E402
from ._dma import *  # noqa: F401,F403,E402
from ._dma import dma_copy_modes as _dma_copy_modes, is_indirect as _is_indirect  # noqa: E402
from ._dma import dma_copy_scalar_skip as _dma_scalar_skip  # noqa: E402
from ._move import *  # noqa: F401,F403,E402
from ._multicore import *  # noqa: F401,F403,E402
from ._mx import *  # noqa: F401,F403,E402
from ._random import *  # noqa: F401,F403,E402
from ._registers import *  # noqa: F401,F403,E402
from ._scan import *  # noqa: F401,F403,E402
from ._stats import *  # noqa: F401,F403,E402


from ._act2 import *  # noqa: F401,F403,E402


# ---- public names: every instruction, whichever module defines it --------------------------
from .._public import make_dir as _make_dir, public_names as _public_names  # noqa: E402

__all__ = [n for n in _public_names(globals(), exclude=(
    "annotations", "AccessError", "AlignmentError", "ConstraintError", "OverlapError",
    "to_f32", "from_f32", "engine_name")) if not n.startswith("require_")]
__dir__ = _make_dir(globals())
