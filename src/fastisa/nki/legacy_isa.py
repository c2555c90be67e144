"""``neuronxcc.nki.isa`` (NKI Beta 1): the tile-returning forms of the ``nki.isa`` instructions.

Beta 1 instructions return their result instead of taking ``dst``:
``c = nisa.tensor_tensor(a, b, op=nl.add)``, ``p = nisa.nc_matmul(s, m)``.  Each name here
allocates the result tile (shape, buffer and dtype as the Beta 1 reference gives them:
the data operand's shape, SBUF, the inputs' highest-precision dtype unless ``dtype=``;
``nc_matmul`` a float32 PSUM tile ``[M, N]``; ``nc_transpose`` ``[F, P]``; reductions
the reduced shape), runs the current fastisa instruction on it and returns it.
``mask=`` writes the result only where the mask is true.  A call that passes ``dst=``
runs the current form unchanged.
"""

from __future__ import annotations

import functools
import inspect

import numpy as np

from .. import dtypes as _dt
from . import isa as _isa
from . import ops as _ops
from . import tiles as _tiles
from ..errors import ConstraintError
from .tensor import PSUM, SBUF, NkiTensor

_DATA_PARAMS = ("data", "data1", "src", "on_true_tile", "on_true", "predicate", "x")


def _bind(fn, args, kwargs):
    sig = inspect.signature(fn)
    return sig.bind_partial(None, *args, **kwargs).arguments


def _shape_rule(name, a):
    f32 = _dt.FORMATS["float32"]
    if name == "nc_matmul":
        s, m = a["stationary"], a["moving"]
        return (s.shape[-1], m.shape[-1]), PSUM, f32      # [K, (2,) M] @ [K, (2,) N]
    if name == "nc_transpose":
        d = a["data"]
        eng = getattr(a.get("engine"), "name", a.get("engine"))
        vec = eng == "vector" or (eng in (None, "unknown") and d.shape[0] <= 32 and d.shape[1] <= 32)
        return (d.shape[1], d.shape[0]), (SBUF if vec else PSUM), d.dtype
    if name == "tensor_reduce":
        d = a["data"]
        axis = a["axis"]
        axes = tuple(axis) if isinstance(axis, (list, tuple)) else (axis,)
        axes = tuple(int(x) % d.ndim for x in axes)
        if a.get("keepdims"):
            shape = tuple(1 if i in axes else n for i, n in enumerate(d.shape))
        else:
            shape = tuple(n for i, n in enumerate(d.shape) if i not in axes)
            if len(shape) < 2:
                shape = shape + (1,)
        return shape, SBUF, d.dtype
    if name == "dma_transpose":     # Beta 1: the source transposed, in SBUF
        from ._dma import TRANSPOSE_AXES
        src = a["src"]
        perm = a.get("axes") or TRANSPOSE_AXES.get(src.ndim, tuple(range(src.ndim))[::-1])
        return tuple(src.shape[int(i)] for i in perm), SBUF, src.dtype
    if name == "tensor_partition_reduce":   # Beta 1: (P, f1, ...) -> (1, f1, ...)
        d = a["data"]
        return (1,) + tuple(d.shape[1:]), SBUF, d.dtype
    if name == "bn_stats":      # Beta 1: "[P, 6]" statistics per call
        d = a["data"]
        return (d.partitions, 6), SBUF, d.dtype
    if name == "bn_aggr":       # Beta 1: [P, 2] mean and variance
        d = a["data"]
        return (d.partitions, 2), SBUF, d.dtype
    if name == "local_gather":  # Beta 1: num_valid_indices x num_elem_per_idx per partition
        src, idx = a["src_buffer"], a["index"]
        ne = int(a.get("num_elem_per_idx") or 1)
        nv = a.get("num_valid_indices")
        nv = 16 * idx.free_size if nv is None else int(nv)
        return (src.partitions, nv * ne), SBUF, src.dtype
    if name == "sequence_bounds":   # Beta 1: "(1, 512) -> (1, 2, 512)"
        ids = a["segment_ids"]
        return (ids.partitions, 2, ids.free_size), SBUF, ids.dtype
    if name == "max8":
        d = a["src"]
        return (d.shape[0], 8), SBUF, d.dtype
    if name == "nc_find_index8":
        d = a["data"]
        return (d.shape[0], 8), SBUF, _dt.FORMATS["uint32"]
    tensors = [a[p] for p in _DATA_PARAMS if isinstance(a.get(p), NkiTensor)]
    if not tensors:
        raise NotImplementedError(f"neuronxcc.nki.isa.{name}: the tile-returning form needs a "
                                  f"tensor operand fastisa can take the shape from")
    others = [a[p] for p in ("data", "data1", "data2", "src") if isinstance(a.get(p), NkiTensor)]
    return tensors[0].shape, SBUF, _tiles._result_fmt(others or tensors, None)


def _is_fn(v) -> bool:
    return callable(v) and not isinstance(v, (NkiTensor, type, _ops.Op))


def _legacy(name, fn):
    @functools.wraps(fn)
    def call(*args, dtype=None, mask=None, **kwargs):
        args = tuple(_ops.coerce(a) if _is_fn(a) else a for a in args)
        kwargs = {k: (_ops.coerce(v) if _is_fn(v) else v) for k, v in kwargs.items()}
        if name == "nc_matmul" and kwargs.get("perf_mode") == "double_row_gen3":
            # Beta 1's name of the NeuronCore-v3 (gen3) double FP8 row mode: the SDK's
            # test_nki_isa_nc_matmul.py runs it on trn2 and checks the double_row
            # contraction (sum over k and the row pair); SDK 2.33 calls it double_row
            kwargs["perf_mode"] = "double_row"
        if name == "dma_copy" and "dst_rmw_op" in kwargs:
            rmw = kwargs.pop("dst_rmw_op")
            if rmw is not None:
                return _dma_copy_rmw(rmw, mask, **kwargs)
        if "dst" in kwargs:
            if mask is None:
                return fn(*args, **kwargs)
            return _masked_dst(fn, args, kwargs, mask)
        a = _bind(fn, args, kwargs)
        shape, buf, fmt = _shape_rule(name, a)
        if dtype is not None:
            fmt = _dt.lookup(dtype)
        if mask is not None and name in _INPUT_MASKED:
            r = _input_masked(name, fn, a, mask, shape, fmt, buf)
            if r is not None:
                return r
        return _tiles._finish(lambda d: fn(d, *args, **kwargs), shape, fmt, mask, buffer=buf)
    return call


#: Instructions whose Beta 1 ``mask=`` selects the elements of their data operand that
#: take part (the predicate of the instruction's iteration space, nki.api.shared
#: "Masking"): the operand's name and the value a masked-off element is replaced by.
_INPUT_MASKED = {"max8": "src", "nc_match_replace8": "data", "nc_find_index8": "data"}


def _input_masked(name, fn, a, mask, shape, fmt, buf):
    """A mask over the data operand of max8 / nc_match_replace8 / nc_find_index8 (None
    when it does not broadcast to that operand: then it masks the result).  Masked-off
    elements take no part: for max8 they are replaced by the format's lowest value (never
    above an active element; -inf where the format has it), for the match instructions
    by NaN (which never matches).  A result element with no active input is not written:
    max8 / find_index8 rows with no active element, nc_match_replace8's replaced copy
    where the mask is false."""
    pname = _INPUT_MASKED[name]
    data = a.get(pname)
    if not isinstance(data, NkiTensor):
        return None
    m = _tiles._input_mask(mask, data.shape)
    if m is None:
        return None
    if name == "max8":
        fill = _tiles._reduce_identity(_ops.maximum, data.dtype)
    elif data.dtype.kind == "float":
        fill = np.array(np.nan, np.float32).astype(data.dtype.np_dtype)
    else:
        raise NotImplementedError(f"neuronxcc.nki.isa.{name}: mask= over {data.dtype.name} "
                                  f"data is not implemented by fastisa (no value of the "
                                  f"format is guaranteed never to match)")
    masked = NkiTensor(np.where(m, data.data, fill), data.dtype, data.buffer, data.name)
    first = next(iter(a))
    kw = {k: v for k, v in a.items() if k != first}
    kw[pname] = masked
    out = _tiles._new_tile(shape, fmt, buf)
    tmp = _tiles._new_tile(shape, fmt, buf)
    fn(tmp, **kw)
    if name == "nc_match_replace8":
        written = m
    else:
        written = m.reshape(m.shape[0], -1).any(axis=1).reshape(-1, 1)
    np.copyto(out.data, tmp.data, where=np.broadcast_to(written, shape))
    return out


def _dma_copy_rmw(rmw, mask, dst=None, src=None, oob_mode=None, **kwargs):
    """Beta 1 ``nisa.dma_copy(dst=, src=, dst_rmw_op=np.add)``: "the read-modify-write
    operation to be performed at the destination. Currently only np.add is supported,
    which adds the source data to the existing destination data" and "only
    oob_mode=oob_mode.error is allowed" (the Beta 1 ``neuronxcc.nki.isa.dma_copy``
    docstring).  Computed as SDK 2.33's ``dma_compute(dst, [dst, src], nl.add)``: both in
    float32, added, rounded once to dst's dtype."""
    from ._dma import _enum_name
    from .enums import oob_mode as _oob
    if _ops.coerce(rmw) is not _ops.add:
        raise ConstraintError(f"dma_copy: dst_rmw_op must be np.add / nl.add (the only "
                              f"read-modify-write operation documented), got {rmw!r}")
    if _enum_name("dma_copy", "oob_mode", oob_mode, _oob, "error") != "error":
        raise ConstraintError(f"dma_copy: with dst_rmw_op only oob_mode=oob_mode.error is "
                              f"allowed, got {oob_mode!r}")
    if mask is not None:
        raise NotImplementedError("dma_copy: dst_rmw_op with mask= is not implemented by "
                                  "fastisa")
    kwargs.pop("dge_mode", None)
    _isa.dma_compute(dst, [dst, src], _ops.add, **{k: v for k, v in kwargs.items()
                                                 if k in ("name",)})


def _masked_dst(fn, args, kwargs, mask):
    """A Beta 1 call with ``dst=`` and ``mask=`` (``nisa.dma_copy(dst=t[...], src=...,
    mask=...)``): the instruction runs into a temporary of dst's shape and dtype, which
    is copied into dst only where the mask is true (other elements keep their contents).
    Operand views reaching outside their tensor (:class:`~fastisa.nki.tensor._MaskedView`)
    are read / written where the mask selects them."""
    from .tensor import _MaskedView
    dst = kwargs.pop("dst")
    kwargs = {k: (v.masked_read(mask) if isinstance(v, _MaskedView) else v)
              for k, v in kwargs.items()}
    args = tuple(a.masked_read(mask) if isinstance(a, _MaskedView) else a for a in args)
    if not isinstance(dst, NkiTensor):
        raise TypeError(f"dst must be a tensor, got {type(dst).__name__}")
    if dst.buffer is PSUM:
        raise NotImplementedError("mask= with a dst= in PSUM is not implemented by fastisa's "
                                  "Beta 1 forms (the PSUM accumulation state of a masked "
                                  "write is not modelled)")
    # the temporary starts as dst's current contents: instructions that keep dst elements
    # (tensor_copy_predicated where the predicate is false ...) see the real ones
    cur = dst.masked_read(mask).data if isinstance(dst, _MaskedView) else dst.data
    tmp = NkiTensor(np.array(cur, copy=True), dst.dtype, SBUF, dst.name)
    fn(*args, dst=tmp, **kwargs)
    if isinstance(dst, _MaskedView):
        dst.masked_write(tmp.data, mask)
    else:
        _tiles._apply_mask(dst, tmp, mask)


def memset(shape, value, dtype, mask=None, engine=None, **kwargs):
    """Beta 1 ``nisa.memset(shape, value, dtype)``: a new SBUF tile set to ``value``."""
    return _tiles._finish(lambda d: _isa.memset(d, value, engine=engine), tuple(shape),
                          _dt.lookup(dtype), mask)


def iota(expr, dtype, mask=None, **kwargs):
    """Beta 1 ``nisa.iota(expr, dtype)``: a tile holding the index expression's values
    (``nl.arange`` / ``nl.mgrid`` arithmetic, int64 here, converted to ``dtype``)."""
    vals = np.asarray(expr)
    if vals.ndim < 2:
        vals = vals.reshape(vals.shape[0] if vals.ndim else 1, 1)
    fmt = _dt.lookup(dtype)
    src = NkiTensor(np.ascontiguousarray(vals.astype(np.int32)), _dt.FORMATS["int32"])
    return _tiles._finish(lambda d: _isa.tensor_copy(dst=d, src=src), vals.shape, fmt, mask)


def affine_select(pred, on_true_tile, on_false_value, dtype=None, mask=None, **kwargs):
    """Beta 1 ``nisa.affine_select(pred, on_true_tile, on_false_value)``: ``pred`` is an
    affine expression of ``nl.arange`` / ``nl.mgrid`` indices (``iy < ix``); elements of
    on_true_tile where it holds, on_false_value elsewhere (values selected, no arithmetic)."""
    return _tiles.where(np.asarray(pred), on_true_tile, on_false_value, dtype=dtype, mask=mask)


_SPECIAL = {"memset": memset, "iota": iota, "affine_select": affine_select}


def __getattr__(name):
    if name in _SPECIAL:
        return _SPECIAL[name]
    fn = getattr(_isa, name)
    if not callable(fn) or isinstance(fn, type) or name.startswith("_"):
        return fn
    try:
        params = list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return fn
    if not params or params[0] not in ("dst", "dst_tensor"):
        return fn
    w = _legacy(name, fn)
    globals()[name] = w
    return w
