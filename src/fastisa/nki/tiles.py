"""Tile-level ``nki.language`` functions (``nl.load``, ``nl.store``, ``nl.add(a, b)``, ``nl.exp(t)``,
``nl.matmul``, ``nl.transpose``, ``nl.sum`` ..., ``nl.arange``, ``nl.mgrid`` ...).

Each call allocates its result tile and runs one fastisa ``nki.isa`` instruction on it, as
the NKI compiler lowers these functions (SDK 2.33 ``nki/api/nki/language/__init__.py``;
the NKI Beta 1 ``neuronxcc.nki.language`` reference for the legacy names):

==============================  ===============================================================
function                        instruction
==============================  ===============================================================
``load(src)`` / ``store``       ``dma_copy`` (HBM <-> SBUF; ``mask=`` writes only where true)
binary ``add(x, y)`` ...        ``tensor_tensor`` (two tiles) or ``tensor_scalar`` (a scalar or
                                a ``[P, 1]`` column); other broadcasts are materialised first
unary ``exp(x)`` ...            ``activation`` (ScalarE functions) or ``tensor_scalar`` (ALU
                                unary ops: abs, square, relu, rsqrt, reciprocal)
``divide/mod/fmod``,            the elementwise kernel of ``tensor_tensor`` / ``tensor_scalar``
``floor/ceil/trunc``            with an nki.language-only operator (no nki.isa ``op=``; see
                                :func:`language_only`)
``copy`` / ``static_cast``      ``tensor_copy``
``sum/max/min/prod/mean``       ``tensor_reduce`` (mean: then ``tensor_scalar`` x 1/n); a
                                ``mask=`` over the input leaves masked-off elements out
``matmul(x, y, transpose_x)``   ``nc_transpose`` (unless transpose_x) + ``nc_matmul``, PSUM fp32
``transpose(x)``                ``nc_transpose``
``full/zeros/ones``             ``memset``
==============================  ===============================================================

Result dtype (when ``dtype=`` is not given): the input tiles' dtype of highest precision
(floats over integers, wider over narrower), as the NKI docs state for the element-wise
functions.  ``broadcast_to``, ``where`` and masked stores select or replicate stored
values without arithmetic (numpy, vectorised).
"""

from __future__ import annotations

import builtins as _b
import math
import os

import numpy as np

from .. import dtypes as _dt
from ..errors import ConstraintError
from . import ops as _ops
from .tensor import PMAX, PSUM, SBUF, SHARED_HBM, NkiTensor, _MaskedView

import typing as _typing

if _typing.TYPE_CHECKING:
    from collections.abc import Sequence

    from numpy.typing import ArrayLike

    from .._types import DTypeLike, Int, Real, Shape
    from .ops import Op
    from .tensor import Buffer

__all__ = ["load", "store", "copy_tile", "static_cast", "full", "ones", "zeros_like",
           "ones_like", "full_like", "empty_like", "matmul", "transpose", "sum", "max", "min",
           "prod", "mean", "all", "any", "broadcast_to", "where", "arange", "mgrid",
           "rand", "random_seed", "shared_constant", "shared_identity_matrix", "apply_binary",
           "apply_unary", "negative", "divide", "language_only", "gather_flattened", "invert_tile", "logical_not", "tensor"]


def _isa():
    from . import isa
    return isa


def _lang():
    from . import language
    return language


# ---- helpers ------------------------------------------------------------------------------
_FLOAT_RANK = {"float32": 6, "tfloat32": 5, "bfloat16": 4, "float16": 4, "float8_e4m3": 2,
               "float8_e5m2": 2, "float8_e4m3fn": 2}


def _rank(fmt) -> tuple:
    if fmt.kind == "float":
        return (1, _FLOAT_RANK.get(fmt.name, 1))
    return (0, fmt.itemsize)


def _result_fmt(tiles, dtype):
    if dtype is not None:
        return _dt.lookup(dtype)
    fmts = [t.dtype for t in tiles if isinstance(t, NkiTensor)]
    if not fmts:
        return _dt.FORMATS["float32"]
    best = fmts[0]
    for f in fmts[1:]:
        if _rank(f) > _rank(best):
            best = f
    if best.kind == "bool":
        return _dt.FORMATS["uint8"]
    return best


def _new_tile(shape, fmt, buffer=SBUF, name=""):
    return _lang().ndarray(tuple(shape), fmt, buffer=buffer, name=name)


def _as_tile(x, shape=None) -> NkiTensor:
    """An SBUF tile holding ``x`` (a tile; copied and broadcast to ``shape`` if needed)."""
    if shape is None or x.shape == tuple(shape):
        return x
    t = _new_tile(shape, x.dtype)
    try:
        t.data[...] = np.broadcast_to(x.data, tuple(shape))
    except ValueError:
        raise ConstraintError(f"broadcast: tile of shape {x.shape} cannot be broadcast to "
                              f"{tuple(shape)}") from None
    return t


def _is_scalar(x) -> bool:
    return isinstance(x, (int, float, np.integer, np.floating, bool, np.bool_))


def _apply_mask(dst, tmp, mask):
    """Copy ``tmp`` into ``dst`` where ``mask`` (broadcast to dst's shape) is true."""
    m = np.broadcast_to(np.asarray(mask, bool), dst.shape)
    np.copyto(dst.data, tmp.data, where=m)


def _finish(instr_fn, shape, fmt, mask, buffer=SBUF):
    dst = _new_tile(shape, fmt, buffer)
    if mask is None:
        instr_fn(dst)
        return dst
    tmp = _new_tile(shape, fmt, buffer)
    instr_fn(tmp)
    _apply_mask(dst, tmp, mask)
    return dst


def _on_chip(x, what):
    """Tiles the elementwise functions take: on-chip, or an HBM tensor (loaded first)."""
    if isinstance(x, NkiTensor) and not x.buffer.on_chip:
        return load(x)
    return x


# ---- load / store ---------------------------------------------------------------------------
def load(src: NkiTensor, mask: object = None, dtype: DTypeLike | None = None,
         **kwargs: object) -> NkiTensor:
    """``nl.load(src)``: a new SBUF tile holding ``src`` (an HBM or on-chip tensor view) by
    ``dma_copy``; ``dtype=`` converts on the way (src -> fp32 -> dtype)."""
    if not isinstance(src, NkiTensor):
        raise ConstraintError(f"load: src must be a tensor, got {type(src).__name__}")
    fmt = src.dtype if dtype is None else _dt.lookup(dtype)
    if isinstance(src, _MaskedView) and mask is not None:
        src = src.masked_read(mask)     # outside the tensor only where the mask is false
    return _finish(lambda d: _isa().dma_copy(dst=d, src=src), src.shape, fmt, mask)


def store(dst: NkiTensor, value: NkiTensor | Real, mask: object = None, **kwargs: object) -> None:
    """``nl.store(dst, value)``: write a tile (or a scalar) into ``dst`` by ``dma_copy``;
    with ``mask=`` only where the mask is true (other elements keep their contents)."""
    if not isinstance(dst, NkiTensor):
        raise ConstraintError(f"store: dst must be a tensor, got {type(dst).__name__}")
    if _is_scalar(value) and dst.ndim < 2:
        # one element (``t[i, j] = 5``): stored as dma_copy would, through float32
        v = np.asarray(value, np.float64).astype(np.float32)
        dst.data[...] = v.astype(dst.data.dtype) if dst.dtype.kind == "float" else \
            np.asarray(value).astype(dst.data.dtype)
        return None
    if _is_scalar(value):
        v = _new_tile(dst.shape, dst.dtype)
        _isa().memset(v, float(value))
        value = v
    if not isinstance(value, NkiTensor):
        raise ConstraintError(f"store: value must be a tile or a scalar, got "
                              f"{type(value).__name__}")
    if value.shape != dst.shape and value.size != dst.size:
        value = _as_tile(value, dst.shape)
    if isinstance(value, _MaskedView) and mask is not None:
        value = value.masked_read(mask)
    if isinstance(dst, _MaskedView) and mask is not None:
        # an index reaching outside dst: written only where the mask is true, which must
        # keep it inside (the indexing's AccessError otherwise, nothing written)
        dst._selected(mask)
        tmp = NkiTensor(np.empty(dst.shape, dst.dtype.np_dtype), dst.dtype, dst.buffer,
                        dst.name)
        _isa().dma_copy(dst=tmp, src=value)
        dst.masked_write(tmp.data, mask)
        return None
    if mask is None:
        _isa().dma_copy(dst=dst, src=value)
        return None
    tmp = NkiTensor(np.array(dst.data, copy=True), dst.dtype, dst.buffer, dst.name)
    _isa().dma_copy(dst=tmp, src=value)
    _apply_mask(dst, tmp, mask)
    return None


# ---- elementwise ------------------------------------------------------------------------------
def apply_binary(op: Op, x: NkiTensor | Real, y: NkiTensor | Real, dtype: DTypeLike | None = None,
                 mask: object = None, **kwargs: object) -> NkiTensor:
    """``nl.<op>(x, y)`` on tiles / scalars: ``tensor_tensor`` or ``tensor_scalar``."""
    return _apply_binary(op, x, y, dtype, mask, _isa())


def _apply_binary(op, x, y, dtype, mask, isa):
    x, y = _on_chip(x, "x"), _on_chip(y, "y")
    if _is_scalar(x) and _is_scalar(y):
        raise ConstraintError(f"{op.name}: at least one operand must be a tile")
    fmt = _result_fmt((x, y), dtype)
    if _is_scalar(y) or _is_scalar(x):
        t, s, rev = (x, y, False) if _is_scalar(y) else (y, x, True)
        return _finish(lambda d: isa.tensor_scalar(d, t, op, float(s), reverse0=rev),
                       t.shape, fmt, mask)
    shape = np.broadcast_shapes(x.shape, y.shape)
    # a [P, 1] column against a [P, F] tile: tensor_scalar with a vector operand
    for t, v, rev in ((x, y, False), (y, x, True)):
        if t.shape == shape and v.ndim == t.ndim and v.shape[0] == t.shape[0] and \
                _b.all(s == 1 for s in v.shape[1:]) and t.free_size > 1 and v.dtype.name == "float32":
            col = v.reshape(v.shape[0], 1)
            return _finish(lambda d: isa.tensor_scalar(d, t, op, col, reverse0=rev),
                           shape, fmt, mask)
    a, b = _as_tile(x, shape), _as_tile(y, shape)
    return _finish(lambda d: isa.tensor_tensor(d, a, b, op), shape, fmt, mask)


def apply_unary(op: Op, x: NkiTensor | Real, dtype: DTypeLike | None = None, mask: object = None,
                **kwargs: object) -> NkiTensor:
    """``nl.<fn>(x)``: ``activation`` for ScalarE functions, ``tensor_scalar`` for ALU unary ops."""
    return _apply_unary(op, x, dtype, mask, _isa())


def _apply_unary(op, x, dtype, mask, isa):
    x = _on_chip(x, "x")
    if not isinstance(x, NkiTensor):
        raise ConstraintError(f"{op.name}: x must be a tile, got {type(x).__name__}")
    fmt = _result_fmt((x,), dtype)
    if op.engines:
        return _finish(lambda d: isa.activation(d, op, x), x.shape, fmt, mask)
    return _finish(lambda d: isa.tensor_scalar(d, x, op, 0.0), x.shape, fmt, mask)


def negative(x: NkiTensor | Real, dtype: DTypeLike | None = None, mask: object = None,
             **kwargs: object) -> NkiTensor:
    """``nl.negative(x)`` = ``x * -1`` (tensor_scalar multiply)."""
    return apply_binary(_ops.multiply, x, -1.0, dtype=dtype, mask=mask)


def divide(x: NkiTensor | Real, y: NkiTensor | Real, dtype: DTypeLike | None = None,
           mask: object = None, **kwargs: object) -> NkiTensor:
    """``nl.divide(x, y)`` (and ``tile / tile``, ``tile / scalar``): ``x / y`` element-wise,
    IEEE float32 division (round to nearest even), the quotient rounded once to the
    result dtype.  See :func:`language_only`."""
    return language_only(_ops.divide, x, y, dtype=dtype, mask=mask, **kwargs)


def language_only(op: Op, *args: NkiTensor | Real, dtype: DTypeLike | None = None,
                  mask: object = None, **kwargs: object) -> NkiTensor:
    """The ``nki.language`` math functions with no ``nki.isa`` operator behind them:
    ``divide(x, y)``, ``mod(x, y)``, ``fmod(x, y)``, ``floor(x)``, ``ceil(x)``, ``trunc(x)``.

    SDK 2.33 documents them as tile functions (``nki/api/nki/language/__init__.py``:
    "Divide the inputs, element-wise. (Similar to numpy.divide)", "Floor of the input,
    element-wise", ``mod`` "complementary to the floor_divide function", ``fmod`` "The
    remainder has the same sign as the dividend x"; NKI Beta 1's ``neuronxcc.nki.language``
    the same), while its ALU table (``nki/api/nki.api.shared.rst``, "Supported Math
    Operators") lists no divide, remainder or rounding operator, and ``nki.language.rst``
    leaves divide out of its index ("not supported").  The docs give no lowering, so
    fastisa follows the official CPU simulator, which computes them with numpy on the
    float32 values: each input converted to float32 (as every NKI arithmetic operator
    does), then ``x / y`` IEEE float32 division (round to nearest even), ``mod`` numpy's
    float32 remainder (``fmod`` moved to the divisor's sign; a zero remainder takes the
    divisor's sign), ``fmod`` C ``fmodf`` (exact), ``floor``/``ceil``/``trunc`` exact, and
    the result rounded once to the result dtype.  They run on the elementwise kernel of
    ``tensor_tensor`` (two tiles) / ``tensor_scalar`` (a scalar or a ``[P, 1]`` column),
    as the other tile functions do, with Vector-engine costs.

    Result dtype when ``dtype=`` is not given: the inputs' dtype of highest precision, as
    for the other arithmetic functions, except that ``divide`` of integers only gives
    float32 (numpy's true division of integers is floating point, and kernels take
    ``nl.floor(i / n)`` of integer tiles).

    Parameters
    ----------
    x, y : tiles (SBUF / PSUM, or HBM tensors, loaded first) or scalars; ``y`` only for
        the binary functions; at least one must be a tile.
    dtype : result dtype (optional).
    mask : optional predicate; the result is written only where it is true.

    Raises ConstraintError for operands no tile function takes (two scalars, shapes that
    do not broadcast, a packed dtype).
    """
    from . import _compute as _c
    nargs = 1 if op.is_unary else 2
    names = ("x",) if nargs == 1 else ("x", "y")
    vals = list(args[:nargs])
    if len(args) > nargs:
        raise TypeError(f"{op.name}() takes {nargs} positional arguments but {len(args)} were "
                        f"given")
    for n in names[len(vals):]:
        if n not in kwargs:
            raise TypeError(f"{op.name}() missing required argument {n!r}")
        vals.append(kwargs.pop(n))
    if op.name == "divide" and dtype is None:
        tiles = [v for v in vals if isinstance(v, NkiTensor)]
        if tiles and _b.all(t.dtype.kind in ("int", "bool") for t in tiles):
            dtype = "float32"
    prev = getattr(_c._LANGUAGE, "on", False)
    _c._LANGUAGE.on = True
    try:
        if nargs == 1:
            return _apply_unary(op, vals[0], dtype, mask, _c)
        return _apply_binary(op, vals[0], vals[1], dtype, mask, _c)
    finally:
        _c._LANGUAGE.on = prev


def invert_tile(x: NkiTensor | Real, dtype: DTypeLike | None = None, mask: object = None,
                **kwargs: object) -> NkiTensor:
    return apply_unary(_ops.invert, x, dtype=dtype, mask=mask)


def logical_not(x: NkiTensor | Real, dtype: DTypeLike | None = None, mask: object = None,
                **kwargs: object) -> NkiTensor:
    """``nl.logical_not(x)`` = ``x == 0``."""
    return apply_binary(_ops.equal, x, 0.0, dtype=dtype, mask=mask)


def copy_tile(x: NkiTensor | Real, dtype: DTypeLike | None = None, mask: object = None,
              **kwargs: object) -> NkiTensor:
    """``nl.copy(x, dtype=)``: ``tensor_copy`` into a new tile."""
    x = _on_chip(x, "x")
    fmt = _result_fmt((x,), dtype)
    return _finish(lambda d: _isa().tensor_copy(dst=d, src=x), x.shape, fmt, mask)


def static_cast(x: NkiTensor | Real | np.ndarray, dtype: DTypeLike,
                **kwargs: object) -> NkiTensor | np.ndarray:
    """``nl.static_cast(x, dtype)``: ``tensor_copy`` converting to ``dtype``.  Given a host
    numpy array (test code preparing inputs, as Beta 1 allowed), numpy's ``astype`` to the
    dtype's numpy type (ml_dtypes rounding to nearest even)."""
    if isinstance(x, np.ndarray):
        return np.asarray(x).astype(np.dtype(_dt.lookup(dtype).np_dtype))
    return copy_tile(x, dtype=dtype)


# ---- creation ------------------------------------------------------------------------------
def full(shape: Shape, fill_value: Real, dtype: DTypeLike, buffer: Buffer | str | None = None,
         name: str = "", **kwargs: object) -> NkiTensor:
    """``nl.full(shape, value, dtype, buffer=nl.sbuf)``: a new tensor set by ``memset``."""
    t = _lang().ndarray(shape, dtype, buffer=buffer, name=name)
    if t.buffer.on_chip:
        _isa().memset(t, float(fill_value) if not isinstance(fill_value, (int, np.integer))
                      else int(fill_value))
    else:
        t.data[...] = np.asarray(fill_value).astype(np.float32).astype(t.data.dtype) \
            if t.dtype.kind == "float" else fill_value
    return t


def ones(shape: Shape, dtype: DTypeLike, buffer: Buffer | str | None = None, name: str = "",
         **kwargs: object) -> NkiTensor:
    return full(shape, 1, dtype, buffer=buffer, name=name)


def zeros_like(a: NkiTensor, dtype: DTypeLike | None = None, buffer: Buffer | str | None = None,
               name: str = "", **kwargs: object) -> NkiTensor:
    return _lang().zeros(a.shape, dtype or a.dtype, buffer=buffer or a.buffer, name=name)


def ones_like(a: NkiTensor, dtype: DTypeLike | None = None, buffer: Buffer | str | None = None,
              name: str = "", **kwargs: object) -> NkiTensor:
    return full(a.shape, 1, dtype or a.dtype, buffer=buffer or a.buffer, name=name)


def full_like(a: NkiTensor, fill_value: Real, dtype: DTypeLike | None = None,
              buffer: Buffer | str | None = None, name: str = "", **kwargs: object) -> NkiTensor:
    return full(a.shape, fill_value, dtype or a.dtype, buffer=buffer or a.buffer, name=name)


def empty_like(a: NkiTensor, dtype: DTypeLike | None = None, buffer: Buffer | str | None = None,
               name: str = "", **kwargs: object) -> NkiTensor:
    return _lang().ndarray(a.shape, dtype or a.dtype, buffer=buffer or a.buffer, name=name)


def shared_constant(constant: ArrayLike, dtype: DTypeLike | None = None,
                    **kwargs: object) -> NkiTensor:
    """``nl.shared_constant(constant, dtype)``: a shared-HBM tensor holding a compile-time
    constant.  ``constant`` is an array or, as SDK 2.33 documents ("the constant data. Can be
    a numpy array or a file path to a ``.npy`` file", aws-neuron-sdk
    ``nki/api/nki/language/__init__.py``), the path of a ``.npy`` file, read with
    ``numpy.load`` (nki-library's ``rotational_topk`` passes a path).

    Raises ConstraintError: an element type that is not an NKI data type; OSError / ValueError
    from ``numpy.load`` for a path that is not a readable ``.npy`` file."""
    if isinstance(constant, (str, bytes, os.PathLike)):
        arr = np.load(os.fsdecode(constant), allow_pickle=False)
    else:
        arr = np.asarray(constant)
    fmt = _dt.lookup(dtype if dtype is not None else arr.dtype)
    t = _lang().ndarray(arr.shape if arr.ndim else (1,), fmt, buffer=SHARED_HBM)
    t.data[...] = arr.astype(np.float32).astype(fmt.np_dtype) if fmt.kind == "float" \
        else arr.astype(fmt.np_dtype)
    return t


def shared_identity_matrix(n: Int, dtype: DTypeLike | None = None, dst: NkiTensor | None = None,
                           **kwargs: object) -> NkiTensor:
    """``nl.shared_identity_matrix(n, dtype=nl.uint8, dst=None)``: an ``n x n`` identity
    as an SBUF tile (partition = row), or written into ``dst`` (an ``[n, n]`` tensor).

    SDK 2.33 ``nki.language.shared_identity_matrix`` (aws-neuron-sdk
    ``nki/api/nki/language/__init__.py``): "Create an identity matrix in SBUF with the
    specified data type" (Beta 1 put it in HBM; ``nl.load`` of the SBUF tile still works,
    so Beta 1 kernels that load it run too).

    Raises ConstraintError: ``n`` not an integer in [1, 128] (SBUF has 128 partitions),
    ``dst`` not an ``[n, n]`` tensor.
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 1 <= int(n) <= 128:
        raise ConstraintError(f"shared_identity_matrix: n must be an integer in [1, 128] (the "
                              f"identity is an SBUF tile of n partitions), got {n!r}")
    n = int(n)
    if dst is not None:
        if not isinstance(dst, NkiTensor) or tuple(dst.shape) != (n, n):
            raise ConstraintError(f"shared_identity_matrix: dst must be an [{n}, {n}] tensor, "
                                  f"got {getattr(dst, 'shape', type(dst).__name__)}")
        t = dst
    else:
        fmt = _dt.lookup(dtype if dtype is not None else "uint8")
        t = _new_tile((n, n), fmt)
    _isa().memset(t, 0.0)
    eye = np.eye(n, dtype=np.float32)
    t.data[...] = eye.astype(t.data.dtype) if t.dtype.kind == "float" else eye.astype(t.data.dtype)
    return t


_RNG = [np.random.default_rng(0)]


def random_seed(seed: NkiTensor | Int, **kwargs: object) -> None:
    """``nl.random_seed(seed)``: reseed :func:`rand` (numpy's generator, not the hardware's)."""
    s = seed if _is_scalar(seed) else int(np.asarray(getattr(seed, "data", seed)).ravel()[0])
    _RNG[0] = np.random.default_rng(int(s))


def rand(shape: Shape, dtype: DTypeLike | None = None, **kwargs: object) -> NkiTensor:
    """``nl.rand(shape, dtype)``: uniform [0, 1) values (numpy's generator: the hardware's
    random sequence is not documented, so kernels can only rely on the distribution)."""
    fmt = _dt.lookup(dtype if dtype is not None else "float32")
    t = _lang().ndarray(shape, fmt)
    vals = _RNG[0].random(t.shape, dtype=np.float32)
    t.data[...] = vals.astype(fmt.np_dtype) if fmt.kind == "float" else \
        (vals * 2**31).astype(fmt.np_dtype)
    return t


# ---- matmul / transpose ----------------------------------------------------------------------
def transpose(x: NkiTensor | Real, dtype: DTypeLike | None = None, mask: object = None,
              **kwargs: object) -> NkiTensor:
    """``nl.transpose(x)``: ``nc_transpose`` of a 2-D tile (PSUM result on the Tensor engine
    unless both sides fit the Vector engine's 32 x 32)."""
    x = _on_chip(x, "x")
    if x.ndim != 2:
        raise ConstraintError(f"transpose: x must be 2-D, got shape {x.shape}")
    P, F = x.shape
    fmt = _result_fmt((x,), dtype)
    vec = P <= 32 and F <= 32
    buf = SBUF if vec else PSUM
    if not vec and x.buffer is PSUM:
        x = copy_tile(x)
    return _finish(lambda d: _isa().nc_transpose(d, x), (F, P), fmt, mask, buffer=buf)


def matmul(x: NkiTensor | Real, y: NkiTensor | Real, transpose_x: bool = False,
           mask: object = None, **kwargs: object) -> NkiTensor:
    """``nl.matmul(x, y, transpose_x=False)``: ``x @ y`` (``x.T @ y`` with transpose_x) in
    float32 PSUM: ``nc_transpose`` of x when needed, then ``nc_matmul``."""
    isa = _isa()
    x, y = _on_chip(x, "x"), _on_chip(y, "y")
    if x.buffer is PSUM:
        x = copy_tile(x)
    if y.buffer is PSUM:
        y = copy_tile(y)
    if not transpose_x:
        xt = transpose(x)                   # [K, M] in PSUM
        x = copy_tile(xt, dtype=x.dtype)
    K, M = x.shape
    N = y.shape[1]
    return _finish(lambda d: isa.nc_matmul(d, x, y, accumulate=False), (M, N),
                   _dt.FORMATS["float32"], mask, buffer=PSUM)


# ---- reductions ------------------------------------------------------------------------------
def _norm_axes(x, axis):
    if axis is None:
        axes = tuple(range(1, x.ndim))
    elif isinstance(axis, (list, tuple)):
        axes = tuple(int(a) for a in axis)
    else:
        axes = (int(axis),)
    return tuple(a + x.ndim if a < 0 else a for a in axes)


def _reduce_identity(op, fmt):
    """The value of ``fmt`` that leaves every element unchanged under ``op`` (``x op e ==
    x`` bit for bit): -0.0 for a float add (``+0 + -0 = +0``, ``-0 + -0 = -0``), 1 for
    multiply and logical and, 0 for logical or, -inf / +inf for max / min (the format's
    lowest / highest value when it has no infinity; no element is below / above it)."""
    npd = np.dtype(fmt.np_dtype)
    name = op.name
    if name == "add":
        v = -0.0 if fmt.kind == "float" else 0
    elif name in ("multiply", "logical_and"):
        v = 1
    elif name == "logical_or":
        v = 0
    else:
        big = name == "minimum"
        if fmt.kind == "float":
            v = np.array(np.inf if big else -np.inf, np.float32).astype(npd)
            if np.isnan(v.astype(np.float32)):
                import ml_dtypes
                fi = ml_dtypes.finfo(npd)
                v = fi.max if big else fi.min
        else:
            ii = np.iinfo(npd)
            v = ii.max if big else ii.min
    return np.array(v).astype(npd)


def _input_mask(mask, shape):
    """``mask`` as a boolean array over the reduction's input (its iteration space), or
    None when it does not have the input's rank and broadcast to ``shape`` (then it is a
    mask of the result)."""
    m = np.asarray(mask, bool)
    if m.ndim != len(shape):
        return None
    try:
        return np.broadcast_to(m, tuple(shape))
    except ValueError:
        return None


def _reduce(name, op, x, axis, dtype, keepdims, mask):
    x = _on_chip(x, "x")
    axes = _norm_axes(x, axis)
    m = None if mask is None else _input_mask(mask, x.shape)
    if m is not None:
        # a mask over the input (NKI Beta 1: the predicate of the instruction's iteration
        # space, nki.api.shared "Masking"): masked-off elements take no part in the
        # reduction -- they are replaced by the op's identity, which changes no partial
        # result -- and a result element none of whose inputs is active is not written
        xm = _new_tile(x.shape, x.dtype)
        xm.data[...] = np.where(m, x.data, _reduce_identity(op, x.dtype))
        r = _reduce(name, op, xm, axis, dtype, keepdims, None)
        written = m.any(axis=tuple(a for a in axes if a != 0), keepdims=True)
        if 0 in axes:
            written = written.any(axis=0, keepdims=True)
        out = _new_tile(r.shape, r.dtype, r.buffer)
        np.copyto(out.data, r.data, where=written.reshape(r.shape))
        return out
    if 0 in axes:
        raise NotImplementedError(f"{name}: reducing the partition axis (axis 0) is not "
                                  f"implemented by fastisa (tensor_reduce reduces free axes)")
    nd = len(x.shape)
    if tuple(sorted(axes)) != tuple(range(nd - len(axes), nd)):
        # reduced axes that are not the trailing ones (``axis=[2, 4]`` of a pooling window
        # view): the same elements through a permuted access pattern with the reduced axes
        # last, so tensor_reduce reduces trailing free axes; keepdims re-inserts the 1s
        if keepdims and mask is not None:
            raise NotImplementedError(f"{name}: mask= with keepdims over non-trailing axes is "
                                      f"not implemented by fastisa")
        kept = [i for i in range(nd) if i not in axes]
        perm = kept + sorted(axes)
        xv = NkiTensor(np.transpose(x.data, perm), x.dtype, x.buffer, x.name)
        r = _reduce(name, op, xv, tuple(range(len(kept), nd)), dtype, False, mask)
        if keepdims:
            r = r.reshape(tuple(1 if i in axes else n for i, n in enumerate(x.shape)))
        return r
    shape = tuple(1 if i in axes else s for i, s in enumerate(x.shape)) if keepdims else \
        tuple(s for i, s in enumerate(x.shape) if i not in axes)
    if len(shape) < 2:
        shape = shape + (1,) * (2 - len(shape))
        keep = True
    else:
        keep = keepdims
    fmt = _result_fmt((x,), dtype)
    out = _finish(lambda d: _isa().tensor_reduce(d, op, x, axes, keepdims=keep), shape,
                  fmt, mask)
    return out


def sum(x: NkiTensor | Real, axis: Int | Sequence[Int] | None = None,  # noqa: A001
        dtype: DTypeLike | None = None, keepdims: bool = False, mask: object = None,
        **kwargs: object) -> NkiTensor:
    return _reduce("sum", _ops.add, x, axis, dtype, keepdims, mask)


def max(x: NkiTensor | Real, axis: Int | Sequence[Int] | None = None,  # noqa: A001
        dtype: DTypeLike | None = None, keepdims: bool = False, mask: object = None,
        **kwargs: object) -> NkiTensor:
    return _reduce("max", _ops.maximum, x, axis, dtype, keepdims, mask)


def min(x: NkiTensor | Real, axis: Int | Sequence[Int] | None = None,  # noqa: A001
        dtype: DTypeLike | None = None, keepdims: bool = False, mask: object = None,
        **kwargs: object) -> NkiTensor:
    return _reduce("min", _ops.minimum, x, axis, dtype, keepdims, mask)


def prod(x: NkiTensor | Real, axis: Int | Sequence[Int] | None = None,
         dtype: DTypeLike | None = None, keepdims: bool = False, mask: object = None,
         **kwargs: object) -> NkiTensor:
    return _reduce("prod", _ops.multiply, x, axis, dtype, keepdims, mask)


def all(x: NkiTensor | Real, axis: Int | Sequence[Int] | None = None,  # noqa: A001
        dtype: DTypeLike | None = None, keepdims: bool = False, mask: object = None,
        **kwargs: object) -> NkiTensor:
    return _reduce("all", _ops.logical_and, x, axis, dtype, keepdims, mask)


def any(x: NkiTensor | Real, axis: Int | Sequence[Int] | None = None,  # noqa: A001
        dtype: DTypeLike | None = None, keepdims: bool = False, mask: object = None,
        **kwargs: object) -> NkiTensor:
    return _reduce("any", _ops.logical_or, x, axis, dtype, keepdims, mask)


def mean(x: NkiTensor | Real, axis: Int | Sequence[Int] | None = None,
         dtype: DTypeLike | None = None, keepdims: bool = False, mask: object = None,
         **kwargs: object) -> NkiTensor:
    """``nl.mean``: ``tensor_reduce`` add in float32, then ``tensor_scalar`` multiply by 1/n."""
    x = _on_chip(x, "x")
    axes = _norm_axes(x, axis)
    n = math.prod(x.shape[a] for a in axes)
    s = _reduce("mean", _ops.add, x, axis, "float32", keepdims, None)
    return apply_binary(_ops.multiply, s, 1.0 / n, dtype=_result_fmt((x,), dtype), mask=mask)


# ---- gather ----------------------------------------------------------------------------------
def gather_flattened(data: NkiTensor, indices: NkiTensor, axis: Int = 0,
                     dtype: DTypeLike | None = None, mask: object = None,
                     **kwargs: object) -> NkiTensor:
    """``nl.gather_flattened(data, indices)``: a new tile of ``indices``' shape with
    ``out[p, j] = data[p, indices[p, j]]`` over data's flattened free dimensions, by
    ``nc_n_gather`` (uint32 indices; SBUF); ``dtype=`` converts the result after (through
    float32, ``tensor_copy``).

    SDK 2.33 ``nki/api/nki/language/__init__.py`` and NKI Beta 1 ``gather_flattened``
    ("all free dimensions are flattened and indexed as the same row").  The docs say out
    of bounds indices "return garbage values"; fastisa raises AccessError instead (nothing
    written), as nc_n_gather does.  ``axis`` is accepted; the gather is always over the
    flattened free dimensions, as documented."""
    data, indices = _on_chip(data, "data"), _on_chip(indices, "indices")
    for pname, t in (("data", data), ("indices", indices)):
        if not isinstance(t, NkiTensor):
            raise ConstraintError(f"gather_flattened: {pname} must be a tile, got "
                                  f"{type(t).__name__}")
    if data.buffer is PSUM:
        data = copy_tile(data)
    if indices.buffer is PSUM:
        indices = copy_tile(indices)
    g = _finish(lambda d: _isa().nc_n_gather(d, data, indices), indices.shape, data.dtype,
                mask)
    if dtype is not None and _dt.lookup(dtype) is not data.dtype:
        return copy_tile(g, dtype=dtype)
    return g


# ---- broadcast / select ---------------------------------------------------------------------
def broadcast_to(x: NkiTensor, shape: Shape, **kwargs: object) -> NkiTensor:
    """``nl.broadcast_to(x, shape)``: a new tile with x's values replicated (no arithmetic)."""
    x = _on_chip(x, "x")
    return _as_tile(x, tuple(int(s) for s in shape)) if x.shape != tuple(shape) else \
        copy_tile(x)


def where(condition: NkiTensor | Real | np.ndarray, x: NkiTensor | Real, y: NkiTensor | Real,
          dtype: DTypeLike | None = None, mask: object = None, **kwargs: object) -> NkiTensor:
    """``nl.where(cond, x, y)``: elements of x where cond is non-zero, else of y (stored
    values selected, converted to the result dtype through float32 when dtypes differ)."""
    vals = []
    for v in (condition, x, y):
        v = _on_chip(v, "v")
        vals.append(v)
    cond, x, y = vals
    tiles = [v for v in (x, y) if isinstance(v, NkiTensor)]
    shape = np.broadcast_shapes(*(v.shape for v in vals if isinstance(v, NkiTensor)))
    fmt = _result_fmt(tiles, dtype)

    def as_fmt(v):
        if isinstance(v, NkiTensor):
            if v.dtype is not fmt:
                c = _new_tile(v.shape, fmt)
                _isa().tensor_copy(dst=c, src=v)
                v = c
            return np.broadcast_to(v.data, shape)
        return np.asarray(np.float32(v)).astype(fmt.np_dtype) if fmt.kind == "float" else \
            np.asarray(v).astype(fmt.np_dtype)

    c = np.asarray(cond.data if isinstance(cond, NkiTensor) else cond)
    if isinstance(cond, NkiTensor) and cond.dtype.kind == "float":
        c = c.astype(np.float32)
    out = _new_tile(shape, fmt)
    out.data[...] = np.where(np.broadcast_to(c != 0, shape), as_fmt(x), as_fmt(y))
    if mask is not None:
        res = _new_tile(shape, fmt)
        _apply_mask(res, out, mask)
        return res
    return out


# ---- index expressions -----------------------------------------------------------------------
class IndexArray(np.ndarray):
    """An ``nl.arange`` / ``nl.mgrid`` index expression: an int64 numpy array (arithmetic and
    comparisons stay IndexArrays).  As in the NKI simulator, where these are symbolic
    expressions, its Python truth value is True, so ``mask=(ix < a and iy < b)`` means what
    Python makes of it there: ``iy < b``."""

    def __bool__(self):
        return True if self.size != 1 else bool(self.reshape(-1)[0])


def arange(*args: Int) -> IndexArray:
    """``nl.arange(n)`` / ``(start, stop[, step])``: a 1-D int64 index vector; ``[:, None]`` /
    ``[None, :]`` make the partition / free index of legacy ``t[i_p, i_f]`` indexing."""
    return np.arange(*[int(a) for a in args], dtype=np.int64).view(IndexArray)


class _MGridResult:
    __slots__ = ("_grids",)

    def __init__(self, grids):
        self._grids = grids

    def __getattr__(self, name):
        idx = {"p": 0, "x": 1, "y": 2, "z": 3}.get(name)
        if idx is None or idx >= len(self._grids):
            raise AttributeError(f"mgrid: no index {name!r} (have p, x, y, z for "
                                 f"{len(self._grids)} dimensions)")
        return self._grids[idx]

    def __iter__(self):
        return iter(self._grids)

    def __getitem__(self, i):
        return self._grids[i]

    def __len__(self):
        return len(self._grids)


class _MGrid:
    """``nl.mgrid[0:128, 0:512]``: index grids ``.p``, ``.x`` (``.y``, ``.z``), open
    (broadcastable) like ``np.ogrid``; unpacks as ``i_p, i_f = nl.mgrid[...]``."""

    def __getitem__(self, key):
        if not isinstance(key, tuple):
            key = (key,)
        grids = np.ogrid[tuple(key)]
        if not isinstance(grids, (list, tuple)):
            grids = [grids]
        return _MGridResult([np.asarray(g, np.int64).view(IndexArray) for g in grids])


mgrid = _MGrid()


class tensor:  # noqa: N801
    """``nki.typing.tensor[128, 512]`` annotations (accepted, not checked)."""

    def __class_getitem__(cls, item):
        return cls
