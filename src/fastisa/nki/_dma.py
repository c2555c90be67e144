"""NKI DMA instructions beyond ``dma_copy`` (SDK 2.33), re-exported by ``nki.isa``.

``dma_transpose`` (a permuted bit copy on ``fi_move_strided`` of ``csrc/fastisa/move.h``:
16-bit elements in SIMD passes that store whole dst rows, others tiled 32 x 32; an indirect ``.ap(vector_offset=..., indirect_dim=...)``
source is the gather-transpose, with ``oob_mode.skip`` dropping out-of-bounds indices) and
``dma_compute`` (a float32 sum of up to 16 sources in one pass of ``fi_nki_dma_sum``,
``csrc/fastisa/nki.h``); ``dma_copy``'s indirect gather / scatter forms are here too
(``dma_copy_modes``).  A signature validated before runs its plan through the compiled
hit paths ``fastisa._kernels.nki.hit_transpose`` / ``hit_dma_sum`` (speed14).

Source: aws-neuron-sdk ``nki/api/nki/isa/__init__.py`` (``dma_transpose``,
``dma_compute``).  No cycle formula is published for either; fastisa records DMA
``max(MIN_II, N)`` (N = dst elements per partition), as for ``dma_copy``, and
``max(MIN_II, N * len(srcs))`` for dma_compute.
"""

from __future__ import annotations

import numpy as np

from .. import cost as _cost
from ..errors import AccessError, ConstraintError, OverlapError
from . import _compute as _c
from . import _isaplan as _pl
from .enums import dge_mode as _dge_mode, oob_mode as _oob_mode
from .tensor import NkiTensor, require_tensor

import typing as _typing

if _typing.TYPE_CHECKING:
    from collections.abc import Sequence

    from .._types import EnumLike, Int, OpLike, Real

__all__ = ["dma_transpose", "dma_compute", "TRANSPOSE_AXES"]  # + dma_copy_modes, is_indirect (used by dma_copy)

MIN_II = _cost.MIN_II
#: The permutation dma_transpose applies for each source rank.
TRANSPOSE_AXES = {2: (1, 0), 3: (2, 1, 0), 4: (3, 1, 2, 0)}


_K = []


def _k():
    if not _K:                      # imported once (the per-call import machinery is ~us)
        from fastisa._kernels import move
        _K.append(move)
    return _K[0]


_HEAD_T = _pl.HEAD_T
_HEAD_C = _pl.HEAD_C
_may_share = np.may_share_memory
_plan_key = _pl._plan_key
_knki = _pl._knki
_hit_t = _knki.hit_transpose            # speed14: the compiled plan hit paths
_hit_c = _knki.hit_dma_sum


def _enum_name(instr, param, value, enum_cls, default):
    if value is None:
        return default
    name = value if isinstance(value, str) else getattr(value, "name", None)
    if name is None and isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        try:                            # the enum's integer value (as SDK 2.33 numbers it)
            name = enum_cls(int(value)).name
        except ValueError:
            name = None
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


def dma_transpose(dst: NkiTensor, src: NkiTensor, axes: Sequence[Int] | None = None,
                  priority: Int | None = None, dge_mode: EnumLike | None = None,
                  oob_mode: EnumLike | None = None, name: str | None = None) -> None:
    """``dst = src.transpose(axes)`` by DMA: ``dst[i_0, ..] = src[i_axes^-1 ...]``, bit-exact.

    The permutation is fixed per rank: (1, 0) for 2-d, (2, 1, 0) for 3-d, (3, 1, 2, 0) for
    4-d sources; ``axes`` may be given (it must be that permutation) or left None.  The
    i-th axis of dst is axis ``axes[i]`` of src, so ``dst.shape[i] == src.shape[axes[i]]``.
    Elements move as bit patterns (dst has src's dtype).

    Parameters
    ----------
    dst : NkiTensor in SBUF, src's dtype, shape ``[src.shape[a] for a in axes]``.
    src : NkiTensor in HBM or SBUF, rank 2 to 4; with ``hwdge`` or an indirect src a 2-byte
        dtype and last dim <= 128.
    axes : None or the permutation above.
    priority : None or 0 .. 3.
    dge_mode : ``nisa.dge_mode.unknown`` (default), ``none`` (descriptors generated ahead of
        time; the parameter list documents it, and nki-library's ``mlp_tkg`` transposes with
        it: the same data movement as ``unknown``) or ``hwdge`` (then: a 2-byte dtype, last
        dim <= 128, 2-d sources have ``src.shape[0] == 16``; 3-d / 4-d have ``src.shape[0]``
        in {1, 2, 4, 8, 16} and ``src.shape[0] * src.shape[-2]`` a multiple of 16 -- the
        docs list these as hwdge's "additional restrictions", so ``unknown``/``none`` move
        any dtype: nki-library's ``attention_cte`` transposes float32 ``q``).  ``swdge`` is the indirect
        (gather-transpose) lowering: src an ``.ap(vector_offset=..., indirect_dim=...)``
        view, whose gathered elements are transposed (an index out of bounds raises
        AccessError); the documented swdge shape rules are not checked.
    oob_mode : ``error`` (default); ``skip`` (only with an indirect source): indices of the
        indirect dim whose access leaves the source are skipped -- their dst positions
        (dst axis ``axes.index(indirect_dim)``) keep their contents.

    Raises
    ------
    ConstraintError : a rule above is broken.
    OverlapError : dst shares memory with src.

    Cost: DMA ``max(MIN_II, N)``, N = dst elements per partition (fastisa's estimate).
    Source: aws-neuron-sdk ``nki/api/nki/isa/__init__.py``, ``dma_transpose``.
    """
    instr = "dma_transpose"
    key = None
    if _pl.ON[0]:          # a signature validated before: only the overlap depends on values
        if axes is None and priority is None and dge_mode is None and oob_mode is None:
            try:
                r = _hit_t(dst, src)                 # the common call: no options (compiled)
            except TypeError:           # no key (a view that does not resolve): full path
                r = False
            if r is True:
                return
            if r is not None and r is not False:
                _cost.record(*r)
                return
            if r is None and dst.__class__ is NkiTensor and src.__class__ is NkiTensor:
                key = _plan_key(_HEAD_T, dst, src)
        else:
            key = _pl.key(_HEAD_T, (dst, src), (axes, priority, dge_mode, oob_mode))
            plan = _pl.CACHE.get(key)
            if plan is not None:
                if plan.run(dst.data, src.data):
                    _cost.record(*plan.rec)
                    return
                key = None                  # the full path decides; the plan stays
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
    indirect = is_indirect(src)
    if mode == "none" and indirect:
        raise ConstraintError(f"{instr}: an indirect src needs dge_mode swdge or unknown, got "
                              f"none")
    if mode == "swdge" and not indirect:
        raise ConstraintError(f"{instr}: dge_mode swdge is the indirect (gather) transpose and "
                              f"needs a src with vector_offset, which this src does not have")
    if indirect and mode == "hwdge":
        raise ConstraintError(f"{instr}: an indirect src needs dge_mode swdge or unknown, got "
                              f"hwdge")
    if oob == "skip" and not indirect:
        raise ConstraintError(f"{instr}: oob_mode skip is only valid when src uses indirect "
                              f"indexing")
    if (mode in ("hwdge", "swdge") or indirect) and src.itemsize != 2:
        raise ConstraintError(f"{instr}: with dge_mode {mode}{' (indirect)' if indirect else ''}"
                              f" src dtype must be 2 bytes, got {src.dtype.name} "
                              f"({src.itemsize} bytes)")
    if (mode in ("hwdge", "swdge") or indirect) and src.shape[-1] > 128:
        raise ConstraintError(f"{instr}: with dge_mode {mode}{' (indirect)' if indirect else ''}"
                              f" src.shape[-1] must be <= 128, got {src.shape[-1]}")
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
    mem = src._spec[0].data if indirect else src.data    # an indirect view: its base tensor
    if np.may_share_memory(dst.data, mem) and np.shares_memory(dst.data, mem):
        raise OverlapError(f"{instr}: dst must not overlap src ({dst.name!r} and {src.name!r} "
                           f"share memory)")
    if oob == "skip":     # only the in-bounds indices of the indirect dim are transposed
        keep, sub = _indirect_keep(instr, src)
        if sub is not None:
            j = perm.index(src._spec[5])          # dst axis that carries the indirect dim
            idx = [slice(None)] * r
            idx[j] = keep
            dst.data[tuple(idx)] = sub.data.transpose(perm)
    else:
        _k().strided(dst.data, src.data.transpose(perm))
    _cost.record("DMA", instr, max(MIN_II, dst.free_size))
    if key is not None and not indirect and _pl.plannable(dst, src) and \
            dst.data.__class__ is np.ndarray and src.data.__class__ is np.ndarray and \
            dst.data.size:
        _pl.store(key, _knki.TransposePlan(dst.data, src.data, perm,
                                           ("DMA", instr, max(MIN_II, dst.free_size))))


def dma_compute(dst: NkiTensor, srcs: Sequence[NkiTensor], reduce_op: OpLike,
                scales: Sequence[Real] | None = None, unique_indices: bool = True,
                oob_mode: EnumLike | None = None, name: str | None = None):
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
    key = None
    fast = None
    if _pl.ON[0] and srcs.__class__ in (list, tuple) and 0 < len(srcs) <= 16:
        if len(srcs) <= 3 and scales is None and unique_indices is True and oob_mode is None:
            try:
                r = _hit_c(dst, srcs, reduce_op)     # the common call (compiled)
            except TypeError:           # no key (a view that does not resolve): full path
                r = False
            if r is True:
                return
            if r is not None and r is not False:
                _cost.record(*r)
                return
            if r is None and _pl.key(_HEAD_C, (dst, *srcs)) is not None:
                fast = _knki.dma_sum_key(dst, srcs, reduce_op)
                plan = _pl.CACHE.get(fast)
                if plan is not None:        # a validated signature the compiled plan does
                    _dma_sum(dst, srcs)     # not take (a strided operand): copies here
                    _cost.record("DMA", instr, plan[0])
                    return
        else:
            key = _pl.key(_HEAD_C, (dst, *srcs), (reduce_op, scales, unique_indices, oob_mode))
            cycles = _pl.CACHE.get(key)
            if cycles is not None:  # a validated signature: only the aliasing is per call
                _dma_sum(dst, srcs)
                _cost.record("DMA", instr, cycles)
                return
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
    _dma_sum(dst, srcs)
    cycles = max(MIN_II, (dst.size // max(dst.partitions, 1)) * len(srcs))
    _cost.record("DMA", instr, cycles)
    if key is not None and _pl.plannable(dst, *srcs):
        _pl.store(key, cycles)
    elif fast is not None and _pl.plannable(dst, *srcs):
        d = dst.data
        if d.flags.c_contiguous and d.flags.writeable and d.size and \
                all(t.data.flags.c_contiguous for t in srcs):
            _pl.store(fast, _knki.DmaSumPlan(d, dst.dtype.code, [t.data for t in srcs],
                                             [t.dtype.code for t in srcs],
                                             ("DMA", instr, cycles), reduce_op))
        else:                   # (the plan holds reduce_op: its identity is in the key)
            _pl.store(fast, (cycles, reduce_op))


def _dma_sum(dst, srcs):
    """dma_compute's kernel call on validated operands: one pass of the dma_sum kernel
    (csrc/fastisa/nki.h), every source decoded to float32, added left to right, rounded
    once to dst.dtype.  Sources in C order; a source that shares memory with dst in another
    layout is copied first (dst may BE a source)."""
    d = dst.data
    direct = d.flags.c_contiguous and d.flags.writeable
    out = d if direct else np.empty(dst.shape, dst.dtype.np_dtype)
    flats = []
    for t in srcs:
        a = np.ascontiguousarray(t.data)
        if direct and a is not d and np.may_share_memory(a, d) and not (
                a.__array_interface__["data"][0] == d.__array_interface__["data"][0]
                and a.dtype.itemsize == d.dtype.itemsize):
            a = a.copy()
        flats.append(a)
    _c._kernels().dma_sum(out, dst.dtype.code, flats, [t.dtype.code for t in srcs],
                          _c._threads())
    if not direct:
        dst.data[...] = out


def is_indirect(t) -> bool:
    """An access-pattern view with a vector_offset (``.ap(vector_offset=..., indirect_dim=...)``)."""
    spec = getattr(t, "_spec", None)
    return isinstance(t, NkiTensor) and spec is not None and spec[4] is not None


def dma_copy_modes(instr, dst, src, oob_mode, dge_mode):
    """Validate dma_copy's ``oob_mode`` / ``dge_mode``; with ``oob_mode.skip`` and an
    indirect source (``.ap(vector_offset=..., indirect_dim=...)``) copy only the indices
    whose whole access lies inside the source and return True (dst positions of skipped
    indices keep their contents); otherwise return False (the ordinary copy runs, and an
    out-of-bounds index raises AccessError: ``oob_mode.error``).

    Source: aws-neuron-sdk ``nki/api/nki/isa/__init__.py``, ``dma_copy`` (oob_mode: "skip:
    silently skips any operations involving out-of-bounds indices"; the NKI docs and simulator guide (github.com/aws-neuron/aws-neuron-sdk, nki/api/ and nki/guides/nki_simulator.rst):
    the 0.4/0.5 fix "oob skip keeps integer bit patterns" -- a same-dtype copy is a bit copy).
    """
    mode = _enum_name(instr, "dge_mode", dge_mode, _dge_mode, "unknown")
    oob = _enum_name(instr, "oob_mode", oob_mode, _oob_mode, "error")
    from .tensor import _MaskedView
    if oob == "skip" and (isinstance(src, _MaskedView) or isinstance(dst, _MaskedView)):
        _skip_legacy(instr, dst, src, mode)
        return True
    if oob == "skip" and any(_scalar_view(t) for t in (dst, src)):
        return False                  # in bounds (dma_copy_scalar_skip ran first): a copy
    dspec = getattr(dst, "_spec", None)
    if dspec is not None and dspec[4] is not None:
        if mode == "hwdge":
            raise ConstraintError(f"{instr}: an indirect dst needs software DGE (dge_mode swdge "
                                  f"or unknown), got hwdge")
        _scatter(instr, dst, src, oob == "skip")
        return True
    spec = getattr(src, "_spec", None)
    indirect = spec is not None and spec[4] is not None
    if oob == "skip" and not indirect:
        # no dynamic address or index: skip has nothing to skip, the copy is the ordinary
        # one (static accesses are bounds-checked as always).  The docs scope skip to "a
        # given dynamic address or index" and do not forbid it otherwise; nki-library's
        # bwmm_shard_on_I passes oob_mode.skip to a static dst .ap() (skip_dma.skip_token)
        return False
    if indirect and mode == "hwdge":
        raise ConstraintError(f"{instr}: an indirect src needs software DGE (dge_mode swdge or "
                              f"unknown), got hwdge")
    if oob != "skip":
        return False
    dim = spec[5]
    keep, sub = _indirect_keep(instr, src)
    if dst.shape != src.shape:
        raise ConstraintError(f"{instr}: with oob_mode skip dst must have src's shape "
                              f"{src.shape}, got {dst.shape}")
    if sub is not None:
        vals = sub.data
        idx = [slice(None)] * len(spec[1])
        idx[dim] = keep
        if dst.dtype is src.dtype:
            dst.data[tuple(idx)] = vals
        else:
            from fastisa.nki._cast import from_f32, require_unpacked, to_f32
            require_unpacked(instr, "src", src.dtype)
            require_unpacked(instr, "dst", dst.dtype)
            dst.data[tuple(idx)] = from_f32(to_f32(vals, src.dtype), dst.dtype)
    # explicit operands: inferring them from this frame would resolve the whole indirect
    # view, out-of-bounds indices included (an AccessError after the skipping copy)
    _cost.record("DMA", instr, max(MIN_II, dst.free_size),
                 reads=[sub] if sub is not None else [], writes=[dst])
    return True


def _scalar_view(t) -> bool:
    """An ``.ap(scalar_offset=...)`` view without a vector_offset."""
    return bool(getattr(t, "_scalar_dyn", False)) and t._spec[4] is None


def dma_copy_scalar_skip(instr, dst, src, oob_mode) -> bool:
    """``oob_mode.skip`` with a scalar-offset src or dst whose access leaves its tensor:
    the copy is skipped (True; nothing read or written).  Runs before any access of the
    views (which would raise AccessError)."""
    if oob_mode is None or not any(_scalar_view(t) for t in (dst, src)):
        return False
    if _enum_name(instr, "oob_mode", oob_mode, _oob_mode, "error") != "skip":
        return False
    if dst.size != src.size:
        raise ConstraintError(f"{instr}: dst and src must have the same number of elements, got "
                              f"{dst.size} (shape {dst.shape}) and {src.size} (shape "
                              f"{src.shape})")
    if any(_scalar_view(t) and _scalar_oob(t) for t in (dst, src)):
        _cost.record("DMA", instr, max(MIN_II, dst.free_size), reads=[], writes=[])
        return True
    return False


def _scalar_oob(v) -> bool:
    """Whether an ``.ap(scalar_offset=...)`` view (no vector_offset) reaches outside its base
    tensor: with ``oob_mode.skip`` its single indirect index is then skipped -- the whole
    DMA, nothing read or written (the docs' "skips any operations involving out-of-bounds
    indices"; a scalar offset is one index of the indirect dim, so its access is skipped
    whole, fastisa's reading)."""
    base, pairs, offset, scalar_offset, _, _ = v._spec
    if scalar_offset is not None:
        offset += int(np.asarray(scalar_offset.data).reshape(-1)[0]) * v._scalar_scale
    n_el = base.data.size * base.itemsize // v.dtype.itemsize
    lo = offset + sum(min(0, s * (k - 1)) for s, k in pairs)
    hi = offset + sum(max(0, s * (k - 1)) for s, k in pairs)
    return lo < 0 or hi >= n_el


def _skip_legacy(instr, dst, src, mode):
    """``oob_mode.skip`` with a Beta 1 index expression reaching outside its tensor
    (``in_tensor[idx_tile, iy]`` with ``idx_tile`` a tile of row indices, a
    :class:`~fastisa.nki.tensor._MaskedView`): the elements whose index lies outside are
    skipped (their dst elements keep their contents), the others are copied as by
    ``oob_mode.error``.  Source: aws-neuron-sdk ``nki/api/nki/isa/__init__.py``,
    ``dma_copy`` (oob_mode "skip: silently skips any operations involving out-of-bounds
    indices")."""
    from .tensor import _MaskedView
    if dst.shape != src.shape:
        raise ConstraintError(f"{instr}: with oob_mode skip dst must have src's shape "
                              f"{src.shape}, got {dst.shape}")
    m = np.ones(dst.shape, bool)
    for t in (src, dst):
        if isinstance(t, _MaskedView):
            m &= t._valid
    if isinstance(src, _MaskedView):
        src = src.masked_read(m)
    tmp = NkiTensor(np.empty(dst.shape, dst.dtype.np_dtype), dst.dtype, dst.buffer, dst.name)
    from . import isa
    isa.dma_copy(dst=tmp, src=src, dge_mode=mode)
    if isinstance(dst, _MaskedView):
        dst.masked_write(tmp.data, m)
    else:
        np.copyto(dst.data, tmp.data, where=m)


def _indirect_keep(instr, src):
    """``oob_mode.skip`` on an indirect view: the indices of its indirect dim whose whole
    access lies inside the base tensor, and a view over just those (None if there are
    none).  Source: aws-neuron-sdk ``nki/api/nki/isa/__init__.py`` (oob_mode: "skip:
    silently skips any operations involving out-of-bounds indices")."""
    base, pairs, offset, scalar_offset, vector_offset, dim = src._spec
    if scalar_offset is not None:     # an index along the base's indirect_dim (NkiTensor.ap)
        offset += int(np.asarray(scalar_offset.data).reshape(-1)[0]) * src._scalar_scale
    vo = np.asarray(vector_offset.data).reshape(-1).astype(np.int64) * src._scalar_scale
    n_el = base.data.size * base.itemsize // src.dtype.itemsize
    st, n = pairs[dim]
    if vo.size != n:
        raise ConstraintError(f"{instr}: vector_offset must hold {n} offsets (indirect dim "
                              f"size), got {vo.size}")
    lo = offset + sum(min(0, s * (k - 1)) for d, (s, k) in enumerate(pairs) if d != dim) + vo
    hi = offset + sum(max(0, s * (k - 1)) for d, (s, k) in enumerate(pairs) if d != dim) + vo
    keep = np.nonzero((lo >= 0) & (hi < n_el))[0]
    if not keep.size:
        return keep, None
    sub_pairs = list(pairs)
    sub_pairs[dim] = (st, len(keep))
    sub = type(src)(base, src.dtype, sub_pairs, offset, None,
                    NkiTensor(vo[keep].reshape(-1, 1).astype(np.int32), "int32"), dim)
    return keep, sub


def _scatter(instr, dst, src, skip):
    """dma_copy into an indirect dst (``.ap(vector_offset=..., indirect_dim=...)``): element
    ``[i0, i1, ...]`` of dst is element ``offset + vo[i_d] + sum_{e != d} i_e * step_e`` of
    the base tensor (d = indirect_dim).  Indices whose access leaves the base raise
    AccessError (``oob_mode.error``, nothing written) or are skipped (``skip``: those base
    elements keep their contents).  Same dtype: bit copy; else through float32."""
    base, pairs, offset, scalar_offset, vector_offset, dim = dst._spec
    if scalar_offset is not None:     # an index along the base's indirect_dim (NkiTensor.ap)
        offset += int(np.asarray(scalar_offset.data).reshape(-1)[0]) * dst._scalar_scale
    if src.size != dst.size:
        raise ConstraintError(f"{instr}: dst and src must have the same number of elements, got "
                              f"{dst.size} and {src.size}")
    if not base.data.flags.c_contiguous:
        raise NotImplementedError(f"{instr}: an indirect dst over a non-contiguous tensor is not "
                                  f"implemented by fastisa")
    vo = np.asarray(vector_offset.data).reshape(-1).astype(np.int64) * dst._scalar_scale
    st, n = pairs[dim]
    if vo.size != n:
        raise ConstraintError(f"{instr}: vector_offset must hold {n} offsets (indirect dim "
                              f"size), got {vo.size}")
    fmt = dst.dtype
    flat = base.data.reshape(-1).view(np.uint8).view(
        {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[fmt.itemsize])
    idx = np.full([1] * len(pairs), offset, np.int64)
    for d, (s_, k) in enumerate(pairs):
        shp = [1] * len(pairs)
        shp[d] = k
        step = vo if d == dim else np.arange(k, dtype=np.int64) * s_
        idx = idx + step.reshape(shp)
    idx = np.broadcast_to(idx, dst.shape)
    bad = (idx < 0) | (idx >= flat.size)
    other = tuple(a for a in range(len(pairs)) if a != dim)
    bad_i = bad.any(axis=other) if other else bad
    if bad_i.any() and not skip:
        i = int(np.nonzero(bad_i)[0][0])
        raise AccessError(f"{instr}: indirect dst index {i} (vector_offset {int(vo[i])}) reaches "
                          f"outside tensor {base.name!r} of {flat.size} elements (use "
                          f"oob_mode=nisa.oob_mode.skip to skip it)")
    if src.dtype is fmt:
        vals = np.ascontiguousarray(src.data).reshape(dst.shape)
    else:
        from fastisa.nki._cast import from_f32, require_unpacked, to_f32
        require_unpacked(instr, "src", src.dtype)
        require_unpacked(instr, "dst", fmt)
        vals = from_f32(to_f32(src.data, src.dtype), fmt).reshape(dst.shape)
    vals = vals.view(flat.dtype)
    okm = ~np.broadcast_to(bad_i.reshape([-1 if a == dim else 1 for a in range(len(pairs))]),
                           dst.shape)
    flat[idx[okm]] = vals[okm]
    _cost.record("DMA", instr, max(MIN_II, dst.free_size), reads=[src], writes=[base])
