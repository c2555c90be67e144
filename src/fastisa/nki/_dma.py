"""NKI DMA instructions beyond ``dma_copy`` (SDK 2.33), re-exported by ``nki.isa``.

``dma_transpose`` (a permuted bit copy on ``fi_move_strided`` of ``csrc/fastisa/move.h``,
tiled 32 x 32 for cache locality) and ``dma_compute`` (a float32 sum of up to 16 sources
on the elementwise kernel of ``csrc/fastisa/nki.h``).  Indirect sources
(``.ap(vector_offset=..., indirect_dim=...)``, the gather-transpose and the scatter /
gather read-modify-write forms) need access patterns with vector offsets, which
fastisa's tensors do not have yet: these forms are not reachable.

Source: aws-neuron-sdk ``nki/api/nki/isa/__init__.py`` (``dma_transpose``,
``dma_compute``).  No cycle formula is published for either; fastisa records DMA
``max(MIN_II, N)`` (N = dst elements per partition), as for ``dma_copy``, and
``max(MIN_II, N * len(srcs))`` for dma_compute.
"""

from __future__ import annotations

import numpy as np

from .. import cost as _cost
from .. import dtypes as _dt
from ..errors import ConstraintError, OverlapError
from . import _compute as _c
from .enums import dge_mode as _dge_mode, oob_mode as _oob_mode
from .tensor import NkiTensor, require_tensor

__all__ = ["dma_transpose", "dma_compute", "TRANSPOSE_AXES"]

MIN_II = _cost.MIN_II
#: The permutation dma_transpose applies for each source rank.
TRANSPOSE_AXES = {2: (1, 0), 3: (2, 1, 0), 4: (3, 1, 2, 0)}


def _k():
    from .._kernels import move
    return move


def _enum_name(instr, param, value, enum_cls, default):
    if value is None:
        return default
    name = value if isinstance(value, str) else getattr(value, "name", None)
    if name not in enum_cls.__members__:
        raise ConstraintError(f"{instr}: {param} must be one of "
                              f"{sorted(enum_cls.__members__)}, got {value!r}")
    return name


def _priority(instr, priority):
    if priority is None:
        return
    if isinstance(priority, bool) or not isinstance(priority, (int, np.integer)) or \
            not 0 <= int(priority) <= 3:
        raise ConstraintError(f"{instr}: priority must be an integer in [0, 3], got {priority!r}")


def dma_transpose(dst, src, axes=None, priority=None, dge_mode=None, oob_mode=None, name=None):
    """``dst = src.transpose(axes)`` by DMA: ``dst[i_0, ..] = src[i_axes^-1 ...]``, bit-exact.

    The permutation is fixed per rank: (1, 0) for 2-d, (2, 1, 0) for 3-d, (3, 1, 2, 0) for
    4-d sources; ``axes`` may be given (it must be that permutation) or left None.  The
    i-th axis of dst is axis ``axes[i]`` of src, so ``dst.shape[i] == src.shape[axes[i]]``.
    Elements move as bit patterns (dst has src's dtype).

    Parameters
    ----------
    dst : NkiTensor in SBUF, src's dtype, shape ``[src.shape[a] for a in axes]``.
    src : NkiTensor in HBM or SBUF, rank 2 to 4, a 2-byte dtype, last dim <= 128.
    axes : None or the permutation above.
    priority : None or 0 .. 3.
    dge_mode : ``nisa.dge_mode.unknown`` (default) or ``hwdge`` (then: 2-d sources have
        ``src.shape[0] == 16``; 3-d / 4-d have ``src.shape[0]`` in {1, 2, 4, 8, 16} and
        ``src.shape[0] * src.shape[-2]`` a multiple of 16).  ``swdge`` is the indirect
        (gather-transpose) lowering, which needs an indirect source.
    oob_mode : ``error`` (default); ``skip`` is only valid with an indirect source.

    Raises
    ------
    ConstraintError : a rule above is broken.
    OverlapError : dst shares memory with src.

    Cost: DMA ``max(MIN_II, N)``, N = dst elements per partition (fastisa's estimate).
    Source: aws-neuron-sdk ``nki/api/nki/isa/__init__.py``, ``dma_transpose``.
    """
    instr = "dma_transpose"
    require_tensor(instr, "dst", dst)
    require_tensor(instr, "src", src)
    if dst.buffer.name != "sbuf":
        raise ConstraintError(f"{instr}: dst must be in sbuf, got {dst.buffer.name}")
    if src.buffer.name == "psum":
        raise ConstraintError(f"{instr}: src must be in hbm or sbuf, got psum")
    if dst.dtype is not src.dtype:
        raise ConstraintError(f"{instr}: dst and src must have the same dtype, got "
                              f"{dst.dtype.name} and {src.dtype.name}")
    r = src.ndim
    if r not in TRANSPOSE_AXES:
        raise ConstraintError(f"{instr}: src must have rank 2, 3 or 4, got rank {r} "
                              f"(shape {src.shape})")
    perm = TRANSPOSE_AXES[r]
    if axes is not None:
        try:
            ax = tuple(int(a) for a in axes)
        except (TypeError, ValueError):
            raise ConstraintError(f"{instr}: axes must be a tuple of ints, got {axes!r}") from None
        if ax != perm:
            raise ConstraintError(f"{instr}: axes must be {perm} for a rank-{r} src (supported: "
                                  f"(1, 0), (2, 1, 0), (3, 1, 2, 0)), got {ax}")
    _priority(instr, priority)
    mode = _enum_name(instr, "dge_mode", dge_mode, _dge_mode, "unknown")
    oob = _enum_name(instr, "oob_mode", oob_mode, _oob_mode, "error")
    if mode == "none":
        raise ConstraintError(f"{instr}: dge_mode must be unknown, hwdge or swdge, got none")
    if mode == "swdge":
        raise ConstraintError(f"{instr}: dge_mode swdge is the indirect (gather) transpose and "
                              f"needs a src with vector_offset, which this src does not have")
    if oob == "skip":
        raise ConstraintError(f"{instr}: oob_mode skip is only valid when src uses indirect "
                              f"indexing")
    if src.itemsize != 2:
        raise ConstraintError(f"{instr}: src dtype must be 2 bytes, got {src.dtype.name} "
                              f"({src.itemsize} bytes)")
    if src.shape[-1] > 128:
        raise ConstraintError(f"{instr}: src.shape[-1] must be <= 128, got {src.shape[-1]}")
    if mode == "hwdge":
        p0 = src.shape[0]
        if r == 2 and p0 != 16:
            raise ConstraintError(f"{instr}: with dge_mode hwdge a 2-d src must have "
                                  f"src.shape[0] == 16, got {p0}")
        if r > 2:
            if p0 not in (1, 2, 4, 8, 16):
                raise ConstraintError(f"{instr}: with dge_mode hwdge src.shape[0] must be in "
                                      f"{{1, 2, 4, 8, 16}}, got {p0}")
            if (p0 * src.shape[-2]) % 16:
                raise ConstraintError(f"{instr}: with dge_mode hwdge src.shape[0] * "
                                      f"src.shape[-2] must be a multiple of 16, got "
                                      f"{p0} * {src.shape[-2]}")
    want = tuple(src.shape[a] for a in perm)
    if dst.shape != want:
        raise ConstraintError(f"{instr}: dst must have shape {want} (src {src.shape} "
                              f"transposed by {perm}), got {dst.shape}")
    if np.may_share_memory(dst.data, src.data) and np.shares_memory(dst.data, src.data):
        raise OverlapError(f"{instr}: dst must not overlap src ({dst.name!r} and {src.name!r} "
                           f"share memory)")
    _k().strided(dst.data, src.data.transpose(perm))
    _cost.record("DMA", instr, max(MIN_II, dst.free_size))


def dma_compute(dst, srcs, reduce_op, scales=None, unique_indices=True, oob_mode=None,
                name=None):
    """``dst = srcs[0] + srcs[1] + ...`` element by element, computed by the DMA engines.

    Each source element is converted to float32, the sum is formed in float32 left to
    right (``((s0 + s1) + s2) + ...``, one rounding per addition) and rounded once to
    dst.dtype.  Elements are matched in C order (shapes may differ; element counts may
    not).  dst may be one of the sources.

    Parameters
    ----------
    dst : NkiTensor in HBM or SBUF, any non-packed dtype.
    srcs : list of 1 .. 16 NkiTensors in HBM or SBUF with dst's element count, any
        non-packed dtypes.
    reduce_op : ``nl.add`` (the only one supported).
    scales : None or a list of len(srcs) values, all 1.0.
    unique_indices : bool (used only by the indirect read-modify-write forms).
    oob_mode : ``error`` (default) or ``skip`` (meaningful only with indirect sources).

    Raises
    ------
    ConstraintError : a rule above is broken.

    Cost: DMA ``max(MIN_II, N * len(srcs))`` (fastisa's estimate).  Source: aws-neuron-sdk
    ``nki/api/nki/isa/__init__.py``, ``dma_compute``.
    """
    instr = "dma_compute"
    require_tensor(instr, "dst", dst)
    if not isinstance(srcs, (list, tuple)) or not srcs:
        raise ConstraintError(f"{instr}: srcs must be a non-empty list of tensors, got {srcs!r}")
    if len(srcs) > 16:
        raise ConstraintError(f"{instr}: at most 16 source tensors, got {len(srcs)}")
    for t in [dst, *srcs]:
        pname = "dst" if t is dst else f"srcs[{srcs.index(t)}]"
        require_tensor(instr, pname, t)
        if t.buffer.name == "psum":
            raise ConstraintError(f"{instr}: {pname} must be in hbm or sbuf, got psum")
        _c._computable(instr, pname, t)
        if t.size != dst.size:
            raise ConstraintError(f"{instr}: {pname} must have dst's {dst.size} elements, got "
                                  f"{t.size} (shape {t.shape})")
    if getattr(reduce_op, "name", None) != "add":
        raise ConstraintError(f"{instr}: reduce_op must be nl.add (the only supported one), got "
                              f"{reduce_op!r}")
    if scales is not None:
        try:
            sc = [float(s) for s in scales]
        except (TypeError, ValueError):
            raise ConstraintError(f"{instr}: scales must be a list of numbers, got "
                                  f"{scales!r}") from None
        if len(sc) != len(srcs):
            raise ConstraintError(f"{instr}: scales must have one value per source "
                                  f"({len(srcs)}), got {len(sc)}")
        if any(s != 1.0 for s in sc):
            raise ConstraintError(f"{instr}: every scale must be 1.0, got {sc}")
    if not isinstance(unique_indices, (bool, np.bool_)):
        raise ConstraintError(f"{instr}: unique_indices must be a bool, got {unique_indices!r}")
    _enum_name(instr, "oob_mode", oob_mode, _oob_mode, "error")
    n = dst.size

    def flat(t):
        return NkiTensor(t.data.reshape(1, n), t.dtype, t.buffer, t.name)

    views = [flat(t) for t in srcs]
    out = NkiTensor(np.empty((1, n), np.float32), _dt.float32)
    add = _c._stage(_ops_add(), tensor=True)
    if len(views) == 1:
        _c._run_ew(instr, out, views[0])
    else:
        _c._run_ew(instr, out, views[0], in1=views[1], stages=(add, _c._NO_STAGE))
        for v in views[2:]:
            _c._run_ew(instr, out, out, in1=v, stages=(add, _c._NO_STAGE))
    target = NkiTensor(dst.data.reshape(1, n) if dst.data.flags.c_contiguous else
                       np.empty((1, n), dst.dtype.np_dtype), dst.dtype)
    _c._run_ew(instr, target, out)
    if not dst.data.flags.c_contiguous:
        dst.data[...] = target.data.reshape(dst.shape)
    _cost.record("DMA", instr, max(MIN_II, (n // max(dst.partitions, 1)) * len(srcs)))


def _ops_add():
    from . import ops
    return ops.add
