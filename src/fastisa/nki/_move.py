"""NKI on-chip data movement (SDK 2.33), re-exported by ``nki.isa``.

``nc_stream_shuffle``, ``tensor_copy_predicated``, ``nc_n_gather``, ``local_gather``,
``nonzero_with_count`` and ``sequence_bounds``.  None of them converts a value (dst has
src's dtype), so they run on the bit-copy kernels of ``csrc/fastisa/move.h`` (driver
``fastisa._kernels.move``): every element moves as its bit pattern, NaN payloads and
packed x4 containers included.

Source: aws-neuron-sdk ``nki/api/nki/isa/__init__.py`` (SDK 2.33 docstrings of each
instruction); costs from the pre-0.3 docstrings (the NKI docs and simulator guide (github.com/aws-neuron/aws-neuron-sdk, nki/api/ and nki/guides/nki_simulator.rst)).

=======================  ========  ============================================================
instruction              engine    cycles (N = elements per partition)
=======================  ========  ============================================================
nc_stream_shuffle        Vector    ``max(MIN_II, N)``
tensor_copy_predicated   Vector    ``max(MIN_II, N)`` (one operand in PSUM) else ``max(MIN_II, 2N)``
nc_n_gather              GpSimd    ``150 + N`` of dst (fastisa's estimate)
local_gather             GpSimd    ``150 + valid * num_elem_per_idx / 16``
nonzero_with_count       GpSimd    ``150 + N`` (fastisa's estimate)
sequence_bounds          GpSimd    ``150 + N`` (fastisa's estimate)
=======================  ========  ============================================================
"""

from __future__ import annotations

import functools
import math

import numpy as np

from .. import cost as _cost
from ..errors import AccessError, ConstraintError
from . import _compute as _c
from . import _isaplan as _pl
from .tensor import NkiTensor

import typing as _typing

if _typing.TYPE_CHECKING:
    from collections.abc import Sequence

    from .._types import Int, Real

__all__ = ["nc_stream_shuffle", "tensor_copy_predicated", "nc_n_gather", "local_gather",
           "nonzero_with_count", "sequence_bounds", "start_partition"]

MIN_II = _cost.MIN_II
GPSIMD_START = 150
QUADRANT = 32


_K = []


def _k():
    if not _K:                      # imported once (the per-call import machinery is ~us)
        from fastisa._kernels import move
        _K.append(move)
    return _K[0]


_HEAD_S = _pl.HEAD_S
_knki = _pl._knki
_hit_s = _knki.hit_shuffle          # speed14: the compiled plan hit path
_threads = _c._threads     # worker-pool threads for large tiles (the compute kernels' setting)


def start_partition(t: NkiTensor) -> int:
    """The first partition of an on-chip view within its allocation (0 for a whole tensor).

    Found from the byte offset of the view into the root numpy allocation, divided by the
    allocation's partition stride (``nl.ndarray`` allocations are C-contiguous,
    partition-major).
    """
    root = t.data
    while isinstance(root.base, np.ndarray):
        root = root.base
    if root is t.data or t.data.ndim == 0:
        return 0
    off = t.data.__array_interface__["data"][0] - root.__array_interface__["data"][0]
    pstride = root.strides[0] if root.ndim > 1 and root.flags.c_contiguous else t.data.strides[0]
    if off <= 0 or pstride <= 0:
        return 0
    return int(off // pstride)


def _rows2(t: NkiTensor):
    """[P, F] view of t's storage in its container dtype (writes go through when a view)."""
    return _c._dst_rows(t)


def _bitrows(t: NkiTensor) -> np.ndarray:
    a = _c._rows(t)
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32}[a.itemsize])


def _same_dtype(instr, a_name, a, b_name, b):
    if a.dtype is not b.dtype:
        raise ConstraintError(f"{instr}: {a_name} and {b_name} must have the same dtype, got "
                              f"{a.dtype.name} and {b.dtype.name}")


def _tensor_any(instr, param, t, buffers=("sbuf", "psum")):
    _c._tensor(instr, param, t)
    if t.buffer.name not in buffers:
        raise ConstraintError(f"{instr}: {param} must be in {' or '.join(buffers)}, got "
                              f"{t.buffer.name}")


def _int(instr, param, v, lo=None, hi=None):
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise ConstraintError(f"{instr}: {param} must be an integer, got {v!r}")
    v = int(v)
    if lo is not None and not lo <= v <= hi:
        raise ConstraintError(f"{instr}: {param} must be in [{lo}, {hi}], got {v}")
    return v


# ---- nc_stream_shuffle -----------------------------------------------------------------
@functools.lru_cache(maxsize=256)
def _shuffle_rowmap(instr, mask, Pd, Ps):
    """nc_stream_shuffle's checks of a mask (a tuple of ints) and its row map (dst row r <-
    src row rowmap[r], -1 = unmodified); cached per (mask, Pd, Ps): the checks depend on
    nothing else.  Errors are raised in the uncached order (mask length, each entry, then
    the selected source rows, whose message is returned for the caller to raise after its
    start-partition checks)."""
    if len(mask) != QUADRANT:
        raise ConstraintError(f"{instr}: shuffle_mask must have 32 elements, got {len(mask)}")
    for i, m in enumerate(mask):
        if not (0 <= m < QUADRANT or m == 255):
            raise ConstraintError(f"{instr}: shuffle_mask[{i}] must be in [0, 31] or 255, got {m}")
    rowmap = np.full(Pd, -1, np.int32)
    for r in range(Pd):
        q, i = divmod(r, QUADRANT)
        m = mask[i]
        if m == 255:
            continue
        s = q * QUADRANT + m
        if s >= Ps:
            return None, (f"{instr}: shuffle_mask[{i}] = {m} selects src partition {s} "
                          f"for dst partition {r}, but src has {Ps} partitions")
        rowmap[r] = s
    rowmap.flags.writeable = False
    return rowmap, None


def _same_rows(d: np.ndarray, s: np.ndarray) -> bool:
    """d and s ([R, F] row views) are the same rows, which do not overlap one another (the
    in-place form ``nc_stream_shuffle(t, t, mask)``); the addresses alone decide, no
    element is read.  Mirrored by ShufflePlan (fastisa._kernels.nki) on the plan path."""
    if d.shape != s.shape or d.strides != s.strides or d.ctypes.data != s.ctypes.data:
        return False
    sp, sf = d.strides
    return sp != 0 and (d.shape[1] <= 1 or abs(sp) >= d.shape[1] * abs(sf))


def nc_stream_shuffle(dst: NkiTensor, src: NkiTensor, shuffle_mask: Sequence[Int],
                      name: str | None = None) -> None:
    """Within each 32-partition quadrant: ``dst[32q + i] = src[32q + shuffle_mask[i]]``.

    ``shuffle_mask[i] == 255`` leaves dst partition i of every quadrant unmodified.  The
    same mask applies to every quadrant; quadrant q covers partitions 32q .. 32q+31 of the
    accessed tiles (a tile of fewer than 32 partitions is one partial quadrant, so
    ``src`` of 1 partition with mask ``[0] * 32`` broadcasts it).  In place (dst is src)
    is allowed: every source row is read before any is written.  Elements move as bit
    patterns.

    Parameters
    ----------
    dst, src : NkiTensor [P, ...] in SBUF / PSUM, the same dtype and elements per
        partition.  With ``A = ceil(max(Pdst, Psrc) / 32) * 32`` active partitions, each
        start partition must be 0 (A = 96 / 128), 0 or 64 (A = 64), a multiple of 32
        (A = 32).
    shuffle_mask : 32 ints, each in [0, 31] or 255; a selected source partition must exist.

    Raises
    ------
    ConstraintError : a rule above is broken.

    Cost: Vector ``max(MIN_II, N)``.  Source: aws-neuron-sdk ``nki/api/nki/isa/__init__.py``,
    ``nc_stream_shuffle``.
    """
    instr = "nc_stream_shuffle"
    key = None
    if _pl.ON[0]:      # a validated signature: the start partitions depend on values
        # the mask by value: the full path reads each entry as int(m), so equal masks give
        # equal outcomes
        try:
            r = _hit_s(dst, src, shuffle_mask)          # compiled (speed14)
        except TypeError:               # an unhashable entry: the full path reports it
            r = False
        if r is True:
            return
        if r is not None and r is not False:
            _cost.record(*r)
            return
        if r is None and shuffle_mask.__class__ in (list, tuple) and \
                _pl.key(_HEAD_S, (dst, src)) is not None:
            key = _knki.shuffle_key(dst, src, tuple(shuffle_mask))
    _tensor_any(instr, "dst", dst)
    _tensor_any(instr, "src", src)
    _same_dtype(instr, "dst", dst, "src", src)
    if dst.free_size != src.free_size:
        raise ConstraintError(f"{instr}: dst and src must have the same number of elements per "
                              f"partition, got {dst.free_size} and {src.free_size}")
    try:
        mask = tuple(int(m) for m in shuffle_mask)
    except (TypeError, ValueError):
        raise ConstraintError(f"{instr}: shuffle_mask must be a list of 32 ints, got "
                              f"{shuffle_mask!r}") from None
    active = math.ceil(max(dst.partitions, src.partitions) / QUADRANT) * QUADRANT
    allowed = {32: (0, 32, 64, 96), 64: (0, 64), 96: (0,), 128: (0,)}.get(active, (0,))
    rowmap, err = _shuffle_rowmap(instr, mask, dst.partitions, src.partitions)
    for pname, t in (("src", src), ("dst", dst)):
        sp = start_partition(t)
        if sp not in allowed:
            raise ConstraintError(f"{instr}: {pname} start partition must be one of {allowed} "
                                  f"with {active} active partitions, got {sp}")
    if err is not None:
        raise ConstraintError(err)
    d, commit = _rows2(dst)
    s_rows = _c._rows(src)
    if np.may_share_memory(s_rows, d):
        if _same_rows(d, s_rows):       # dst is src: moved in place, no copy (speed14b)
            _k().rows_inplace(d, rowmap, _threads())
        else:                           # rows are read before any is written
            _k().rows(d, np.array(s_rows, copy=True), rowmap, _threads())
    else:
        _k().rows(d, s_rows, rowmap, _threads())
    if commit is not None:
        commit()
    _cost.record("Vector", instr, max(MIN_II, dst.free_size))
    if key is not None and commit is None and _pl.plannable(dst, src) and d.size:
        try:                            # (the plan runs on the rows viewed in place)
            plan = _knki.ShufflePlan(rowmap, allowed, d, s_rows, dst.data, src.data,
                                     ("Vector", instr, max(MIN_II, dst.free_size)))
        except ValueError:              # a copied row view (not at its storage's start)
            plan = None
        if plan is not None:
            _pl.store(key, plan)


# ---- tensor_copy_predicated ------------------------------------------------------------
#: bool_ is "boolean stored as uint8" (nki.api.shared.rst, data types): a uint8 predicate
#: (a host numpy bool array passed to a kernel arrives as bool_, as in the SDK's own tests)
_PRED_DTYPES = ("uint8", "uint16", "uint32", "bool_")


def tensor_copy_predicated(dst: NkiTensor, src: NkiTensor | Real, predicate: NkiTensor,
                           reverse_pred: bool = False, name: str | None = None) -> None:
    """``dst[p, i] = src[p, i]`` where ``predicate[p, i] != 0`` (xor reverse_pred); else kept.

    The copy is bit-exact (src and dst share a dtype).  A scalar ``src`` is rounded once
    from float32 to dst.dtype (integers: RNE, saturate, NaN -> 0) and copied where the
    predicate holds.

    Parameters
    ----------
    dst : NkiTensor [P, ...] in SBUF / PSUM, any dtype.
    src : NkiTensor with dst's dtype, partitions and elements per partition, or a number.
    predicate : NkiTensor uint8 / uint16 / uint32 (or bool_, stored as uint8) with dst's
        partitions and elements per partition; src and predicate not both in PSUM.
    reverse_pred : bool, copy where the predicate is 0 instead.

    Raises
    ------
    ConstraintError : a rule above is broken.

    Cost: Vector ``max(MIN_II, N)`` when src or predicate is in PSUM, else
    ``max(MIN_II, 2N)``.  Source: aws-neuron-sdk ``nki/api/nki/isa/__init__.py``,
    ``tensor_copy_predicated``.
    """
    instr = "tensor_copy_predicated"
    _tensor_any(instr, "dst", dst)
    _tensor_any(instr, "predicate", predicate)
    if predicate.dtype.name not in _PRED_DTYPES:
        raise ConstraintError(f"{instr}: predicate dtype must be uint8, uint16, uint32 or bool_, got "
                              f"{predicate.dtype.name}")
    _c._same_shape(instr, "dst", dst, "predicate", predicate)
    if not isinstance(reverse_pred, (bool, np.bool_)):
        raise ConstraintError(f"{instr}: reverse_pred must be a bool, got {reverse_pred!r}")
    P, F = dst.partitions, dst.free_size
    psum = predicate.buffer.name == "psum"
    if isinstance(src, NkiTensor):
        _tensor_any(instr, "src", src)
        _same_dtype(instr, "src", src, "dst", dst)
        _c._same_shape(instr, "src", src, "dst", dst)
        if src.buffer.name == "psum" and psum:
            raise ConstraintError(f"{instr}: src and predicate must not both be in psum")
        psum = psum or src.buffer.name == "psum"
        s_rows = _bitrows(src)
    else:
        if isinstance(src, (bool, np.bool_)) or not isinstance(src, (int, float, np.integer,
                                                                      np.floating)):
            raise ConstraintError(f"{instr}: src must be an NkiTensor or a number, got "
                                  f"{type(src).__name__}")
        if dst.dtype.kind == "packed":
            raise ConstraintError(f"{instr}: a scalar src needs an unpacked dst dtype, got "
                                  f"{dst.dtype.name}")
        from fastisa.nki._cast import from_f32
        v = from_f32(np.array([src], np.float32), dst.dtype)
        v = v.view({1: np.uint8, 2: np.uint16, 4: np.uint32}[v.itemsize])
        s_rows = np.broadcast_to(v.reshape(1, 1), (P, F))
    d, commit = _rows2(dst)
    db = d.view({1: np.uint8, 2: np.uint16, 4: np.uint32}[d.itemsize])
    q = _bitrows(predicate)
    if np.may_share_memory(s_rows, db):
        s_rows = np.array(s_rows, copy=True)
    if np.may_share_memory(q, db):
        q = np.array(q, copy=True)
    _k().predicated(db, s_rows, q, int(bool(reverse_pred)))
    if commit is not None:
        commit()
    _cost.record("Vector", instr, max(MIN_II, F) if psum else max(MIN_II, 2 * F))


# ---- gathers -----------------------------------------------------------------------------
def nc_n_gather(dst: NkiTensor, data: NkiTensor, indices: NkiTensor,
                name: str | None = None) -> None:
    """``dst[p, j] = data[p, indices[p, j]]`` over data's flattened free dims (GpSimd).

    Parameters
    ----------
    dst : NkiTensor in SBUF with data's dtype and partitions, indices' elements per
        partition.
    data : NkiTensor [P, ...] in SBUF, P <= 128, any dtype (elements move as bit patterns).
    indices : NkiTensor uint32 in SBUF, [P, ...]; every value in [0, data elements per
        partition).

    Raises
    ------
    ConstraintError : bad buffer / dtype / shape.
    AccessError : an index is out of range (nothing is written).

    Cost: GpSimd ``150 + N`` of dst (fastisa's estimate; the ISA issues
    ``ceil(N / 512)`` instructions).  Source: aws-neuron-sdk ``nki/api/nki/isa/__init__.py``,
    ``nc_n_gather``.
    """
    instr = "nc_n_gather"
    for pname, t in (("dst", dst), ("data", data), ("indices", indices)):
        _tensor_any(instr, pname, t, ("sbuf",))
    _same_dtype(instr, "dst", dst, "data", data)
    if indices.dtype.name != "uint32":
        raise ConstraintError(f"{instr}: indices dtype must be uint32, got {indices.dtype.name}")
    if not dst.partitions == data.partitions == indices.partitions:
        raise ConstraintError(f"{instr}: dst, data and indices must have the same partition "
                              f"dimension, got {dst.partitions}, {data.partitions} and "
                              f"{indices.partitions}")
    if dst.free_size != indices.free_size:
        raise ConstraintError(f"{instr}: dst must have indices' {indices.free_size} elements per "
                              f"partition, got {dst.free_size}")
    src = np.ascontiguousarray(_bitrows(data))
    idx = _c._rows(indices).view(np.uint32)
    d, commit = _rows2(dst)
    db = d.view({1: np.uint8, 2: np.uint16, 4: np.uint32}[d.itemsize])
    if np.may_share_memory(idx, db):
        idx = np.array(idx, copy=True)
    if _k().gather(db, src, idx):
        bad = idx[idx >= data.free_size]
        raise AccessError(f"{instr}: indices must be in [0, {data.free_size}) (data elements "
                          f"per partition), got {int(bad.flat[0])}")
    if commit is not None:
        commit()
    _cost.record("GpSimd", instr, GPSIMD_START + dst.free_size)


def local_gather(dst: NkiTensor, src_buffer: NkiTensor, index: NkiTensor,
                 num_elem_per_idx: Int = 1, num_valid_indices: Int | None = None,
                 name: str | None = None) -> None:
    """Gather within each partition, with the indices of its GpSimd core (16 partitions).

    For core c (partitions 16c .. 16c+15) the indices of ``index[16c:16c+16]`` are
    flattened partition first (``idx1d = index[16c:16c+16].flatten(order="F")``) and the
    first ``num_valid_indices`` are used.  Every partition p of the core then gathers from
    its own row: ``dst[p, j * ne + e] = src_buffer[p, idx1d[j] + e]`` for
    ``e < ne = num_elem_per_idx`` (free dims flattened; an index is an element offset,
    which is why the SDK example scales its indices by ``num_elem_per_idx``).  Elements
    move as bit patterns.

    Parameters
    ----------
    dst : NkiTensor in SBUF, src_buffer's dtype and partitions, exactly
        ``num_valid_indices * num_elem_per_idx`` elements per partition.
    src_buffer : NkiTensor [P, ...] in SBUF, P a multiple of 16.
    index : NkiTensor uint16 in SBUF with src_buffer's partitions.
    num_elem_per_idx : 1, 2, 4, 8, 16 or 32.
    num_valid_indices : indices used per core, 1 .. 16 * index elements per partition
        (default all), at most 4096.

    Raises
    ------
    ConstraintError : a rule above is broken.
    AccessError : ``idx1d[j] + num_elem_per_idx`` exceeds the row (the docs call
        out-of-bound access undefined; fastisa refuses it and writes nothing).

    Cost: GpSimd ``150 + valid * num_elem_per_idx / 16``.  Source: aws-neuron-sdk
    ``nki/api/nki/isa/__init__.py``, ``local_gather``, and the NumPy semantics of
    ``nki/test/test_nki_isa_local_gather.py``.
    """
    instr = "local_gather"
    for pname, t in (("dst", dst), ("src_buffer", src_buffer), ("index", index)):
        _tensor_any(instr, pname, t, ("sbuf",))
    _same_dtype(instr, "dst", dst, "src_buffer", src_buffer)
    if index.dtype.name != "uint16":
        raise ConstraintError(f"{instr}: index dtype must be uint16, got {index.dtype.name}")
    P = src_buffer.partitions
    if P % 16 or index.partitions != P or dst.partitions != P:
        raise ConstraintError(f"{instr}: src_buffer, index and dst must have the same partition "
                              f"dimension, a multiple of 16; got {src_buffer.partitions}, "
                              f"{index.partitions} and {dst.partitions}")
    ne = _int(instr, "num_elem_per_idx", num_elem_per_idx)
    if ne not in (1, 2, 4, 8, 16, 32):
        raise ConstraintError(f"{instr}: num_elem_per_idx must be one of 1, 2, 4, 8, 16, 32, "
                              f"got {ne}")
    per_core = 16 * index.free_size
    nv = per_core if num_valid_indices is None else _int(instr, "num_valid_indices",
                                                         num_valid_indices, 1, per_core)
    if nv > 4096:
        raise ConstraintError(f"{instr}: at most 4096 indices per core, got {nv}")
    if dst.free_size != nv * ne:
        raise ConstraintError(f"{instr}: dst must have num_valid_indices * num_elem_per_idx = "
                              f"{nv * ne} elements per partition, got {dst.free_size}")
    cores = P // 16
    F = src_buffer.free_size
    idx = _c._rows(index).view(np.uint16)
    flat = idx.reshape(cores, 16, -1).transpose(0, 2, 1).reshape(cores, -1)[:, :nv]
    flat = flat.astype(np.int64)
    if (flat + ne > F).any():
        bad = int(flat[flat + ne > F][0])
        raise AccessError(f"{instr}: index {bad} + num_elem_per_idx {ne} exceeds src_buffer's "
                          f"{F} elements per partition")
    table = (flat[:, :, None] + np.arange(ne)[None, None, :]).reshape(cores, 1, nv * ne)
    table = np.ascontiguousarray(np.broadcast_to(table, (cores, 16, nv * ne)).reshape(
        P, nv * ne).astype(np.uint32))
    src = np.ascontiguousarray(_bitrows(src_buffer))
    d, commit = _rows2(dst)
    db = d.view({1: np.uint8, 2: np.uint16, 4: np.uint32}[d.itemsize])
    if np.may_share_memory(src, db):
        src = np.array(src, copy=True)
    _k().gather(db, src, table)
    if commit is not None:
        commit()
    _cost.record("GpSimd", instr, GPSIMD_START + (nv * ne) // 16)


# ---- nonzero_with_count / sequence_bounds -------------------------------------------------
def nonzero_with_count(dst: NkiTensor, src: NkiTensor, index_offset: Int = 0,
                       padding_val: Real = -1, name: str | None = None) -> None:
    """Per GpSimd core (partitions 0, 16, ..., 112 only): nonzero indices, padding, count.

    For each partition p that is a multiple of 16: ``dst[p, :k] = index_offset + i`` for
    the k indices i (ascending) with ``src[p, i] != 0`` (float32: -0 is zero, NaN is
    nonzero), ``dst[p, k:T] = padding_val`` and ``dst[p, T] = k`` (T = src elements per
    partition).  Every other partition of dst is left unmodified.  Index arithmetic wraps
    modulo 2**32.

    Parameters
    ----------
    dst : NkiTensor int32 in SBUF, src's partitions, T + 1 elements per partition.
    src : NkiTensor float32 or int32 in SBUF.
    index_offset, padding_val : int32.

    Raises
    ------
    ConstraintError : a rule above is broken.

    Cost: GpSimd ``150 + T`` (fastisa's estimate).  Source: aws-neuron-sdk
    ``nki/api/nki/isa/__init__.py``, ``nonzero_with_count`` (NeuronCore-v3+).
    """
    instr = "nonzero_with_count"
    _tensor_any(instr, "dst", dst, ("sbuf",))
    _tensor_any(instr, "src", src, ("sbuf",))
    if src.dtype.name not in ("float32", "int32"):
        raise ConstraintError(f"{instr}: src dtype must be float32 or int32, got {src.dtype.name}")
    if dst.dtype.name != "int32":
        raise ConstraintError(f"{instr}: dst dtype must be int32, got {dst.dtype.name}")
    if dst.partitions != src.partitions:
        raise ConstraintError(f"{instr}: dst and src must have the same partition dimension, "
                              f"got {dst.partitions} and {src.partitions}")
    T = src.free_size
    if dst.free_size != T + 1:
        raise ConstraintError(f"{instr}: dst must have exactly one more element per partition "
                              f"than src ({T + 1}), got {dst.free_size}")
    off = _int(instr, "index_offset", index_offset, -2**31, 2**31 - 1)
    pad = _int(instr, "padding_val", padding_val, -2**31, 2**31 - 1)
    from fastisa.nki import language
    if language.target() == "trn1":
        raise ConstraintError(f"{instr}: requires NeuronCore-v3 or newer (target trn2 / trn3), "
                              f"got trn1")
    sel = np.arange(0, src.partitions, 16)
    s = np.ascontiguousarray(_c._rows(src)[sel])
    out = np.empty((len(sel), T + 1), np.int32)
    _k().nonzero(out, s, int(src.dtype.name == "float32"), off, pad)
    d, commit = _rows2(dst)
    d[sel] = out
    if commit is not None:
        commit()
    _cost.record("GpSimd", instr, GPSIMD_START + T)


def sequence_bounds(dst: NkiTensor, segment_ids: NkiTensor, name: str | None = None) -> None:
    """Per element, the [start, end] of the segment it belongs to (GpSimd engine).

    ``segment_ids`` is [1, n]; the segment of element i is the maximal run of equal ids
    containing i.  ``dst[0, 0, i]`` = the run's first index, ``dst[0, 1, i]`` = one past its
    last index (exclusive, as Python ranges); an element with id 0 (padding) gets start
    ``n`` and end ``-1``.
    Values are written in dst.dtype (float32 exactly, as n < 2**24 is required).

    Parameters
    ----------
    dst : NkiTensor float32 or int32 in SBUF, shape [1, 2, n].
    segment_ids : NkiTensor float32 or int32 in SBUF, shape [1, n], values >= 0.

    Raises
    ------
    ConstraintError : a rule above is broken (including a negative id).

    Cost: GpSimd ``150 + n`` (fastisa's estimate).  Source: aws-neuron-sdk
    ``nki/api/nki/isa/__init__.py``, ``sequence_bounds`` (the docstring does not say
    whether the end is inclusive; the NumPy equivalent it cites, in the SDK's
    ``nki/test/test_nki_isa_sequence_bounds.py``, and that test's example
    ``[0, 1, 1, 2, 2, 2, 0, 3, 3] -> starts [9, 1, 1, 3, 3, 3, 9, 7, 7], ends [-1, 3, 3, 6,
    6, 6, -1, 9, 9]`` make it exclusive; fastisa read it as inclusive before, off by one).
    """
    instr = "sequence_bounds"
    _tensor_any(instr, "dst", dst, ("sbuf",))
    _tensor_any(instr, "segment_ids", segment_ids, ("sbuf",))
    for pname, t in (("dst", dst), ("segment_ids", segment_ids)):
        if t.dtype.name not in ("float32", "int32"):
            raise ConstraintError(f"{instr}: {pname} dtype must be float32 or int32, got "
                                  f"{t.dtype.name}")
    if segment_ids.partitions != 1 or segment_ids.ndim != 2:
        raise ConstraintError(f"{instr}: segment_ids must have shape [1, n], got "
                              f"{segment_ids.shape}")
    n = segment_ids.shape[1]
    if dst.shape != (1, 2, n):
        raise ConstraintError(f"{instr}: dst must have shape (1, 2, {n}), got {dst.shape}")
    if n >= 1 << 24:
        raise ConstraintError(f"{instr}: n must be < 2**24, got {n}")
    ids = segment_ids.data.reshape(n)
    if segment_ids.dtype.name == "float32":
        if np.isnan(ids).any() or (ids < 0).any():
            raise ConstraintError(f"{instr}: segment ids must be non-negative numbers")
    elif (ids < 0).any():
        raise ConstraintError(f"{instr}: segment ids must be non-negative, got "
                              f"{int(ids[ids < 0][0])}")
    change = np.ones(n, bool)
    change[1:] = ids[1:] != ids[:-1]
    run = np.cumsum(change) - 1
    starts = np.nonzero(change)[0]
    ends = np.append(starts[1:], n)          # one past the run's last index
    st = starts[run].astype(np.int64)
    en = ends[run].astype(np.int64)
    pad = ids == 0
    st[pad] = n
    en[pad] = -1
    res = np.stack([st, en]).reshape(1, 2, n)
    dst.data[...] = res.astype(dst.dtype.np_dtype)
    _cost.record("GpSimd", instr, GPSIMD_START + n)
