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
        if "dst" in kwargs:
            if mask is None:
                return fn(*args, **kwargs)
            return _masked_dst(fn, args, kwargs, mask)
        a = _bind(fn, args, kwargs)
        shape, buf, fmt = _shape_rule(name, a)
        if dtype is not None:
            fmt = _dt.lookup(dtype)
        return _tiles._finish(lambda d: fn(d, *args, **kwargs), shape, fmt, mask, buffer=buf)
    return call


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
    tmp = NkiTensor(np.empty(dst.shape, dst.dtype.np_dtype), dst.dtype, SBUF, dst.name)
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
