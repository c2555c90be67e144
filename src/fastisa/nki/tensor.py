"""The NKI tensor model: :class:`NkiTensor` (a typed view of simulated memory) and buffers.

An :class:`NkiTensor` is what ``nl.ndarray`` returns and what every ``nki.isa``
instruction takes.  It is a thin wrapper over a numpy array:

* ``.data`` -- the storage, a numpy array (possibly a strided view of a larger
  allocation) of dtype ``dtype.np_dtype`` (the ml_dtypes dtype for bf16/fp8, the
  container -- uint32 / uint16 -- for the packed x4 types, uint8 for ``bool_``).
  Instructions write through it, so views alias their parent as on hardware.
* ``.shape`` -- a tuple; axis 0 is the **partition dimension** (at most 128 for
  SBUF and PSUM tensors), the remaining axes are the **free dimensions**.
* ``.dtype`` -- a :class:`fastisa.dtypes.Format`; ``.buffer`` -- one of the
  :class:`Buffer` objects (``nl.sbuf``, ``nl.psum``, ``nl.hbm``/``nl.private_hbm``,
  ``nl.shared_hbm``); ``.name``.

Indexing (``t[0:64, nl.ds(128, 256)]``, integers, ``...``) returns a view; every index
is bounds-checked (an access outside the tensor raises :class:`~fastisa.errors.AccessError`
instead of numpy's silent clipping).  ``reshape`` never copies.
"""

from __future__ import annotations

import math
import operator
import threading as _threading
import weakref as _weakref
from typing import Any

import numpy as np

from .. import cost as _cost
from .._kernels.nki import join as _mm_join   # waits for an overlapped nc_matmul, if any
from .. import dtypes as _dt
from ..errors import AccessError, ConstraintError, OverlapError
from .._kernels import pool as _pool   # speed15 branch: recycled storage
from . import _alloc

__all__ = ["Buffer", "NkiTensor", "PMAX", "is_tensor", "require_tensor", "require_buffer",
           "require_dtype", "require_dst", "free_size", "DST_PARAMS"]

#: Maximum partition dimension of an on-chip (SBUF / PSUM) tensor.
PMAX = 128


class Buffer:
    """A memory a tensor lives in: ``sbuf``, ``psum``, ``private_hbm`` or ``shared_hbm``."""

    __slots__ = ("name", "on_chip")

    def __init__(self, name: str, on_chip: bool):
        self.name = name
        self.on_chip = on_chip

    def __repr__(self) -> str:
        return f"nl.{self.name}"

    def __reduce__(self):  # buffers are singletons
        return (_buffer_by_name, (self.name,))

    def alloc(self, func):
        """``buffer=nl.sbuf.alloc(func)``: see ``nki.compiler.sbuf.alloc``."""
        if not self.on_chip:
            raise ConstraintError(f"{self.name}.alloc: explicit allocation is for nl.sbuf "
                                  f"and nl.psum, got nl.{self.name}")
        return _alloc.alloc(self, func)

    def mod_alloc(self, *args, **kwargs):
        """``buffer=nl.sbuf.mod_alloc(...)``: see ``nki.compiler.sbuf.mod_alloc``."""
        if not self.on_chip:
            raise ConstraintError(f"{self.name}.mod_alloc: explicit allocation is for "
                                  f"nl.sbuf and nl.psum, got nl.{self.name}")
        f = _alloc.sbuf_mod_alloc if self is SBUF else _alloc.psum_mod_alloc
        try:
            return f(self, *args, **kwargs)
        except TypeError as e:
            raise ConstraintError(f"{self.name}.mod_alloc: {e}") from None


SBUF = Buffer("sbuf", True)
PSUM = Buffer("psum", True)
PRIVATE_HBM = Buffer("private_hbm", False)
SHARED_HBM = Buffer("shared_hbm", False)
_BUFFERS = {b.name: b for b in (SBUF, PSUM, PRIVATE_HBM, SHARED_HBM)}
_BUFFERS["hbm"] = PRIVATE_HBM


def _buffer_by_name(name: str) -> Buffer:
    return _BUFFERS[name]


#: storage arrays of Beta 1 block tensors ``nl.ndarray((B, nl.par_dim(P), F), ...)`` and of
#: views that keep block dims -> the index of their partition axis (> 0); indexing them
#: follows Beta 1 (an integer drops a block dim) instead of SDK 2.33's on-chip rule
class _ArrayTags:
    """``{ndarray: int}`` by identity, entries dropped when the array is collected (numpy
    arrays are not hashable, so a WeakKeyDictionary cannot hold them)."""

    def __init__(self):
        self._d = {}

    def get(self, a, default=0):
        e = self._d.get(id(a))
        return e[1] if e is not None and e[0]() is a else default

    def __setitem__(self, a, value):
        k = id(a)
        self._d[k] = (_weakref.ref(a), value)
        _weakref.finalize(a, self._d.pop, k, None)


BLOCK_PDIM = _ArrayTags()
#: storage of the PSUM tiles Beta 1's tile-returning ``nisa.nc_matmul`` returns: ``psum +=
#: nc_matmul(...)`` is the matmul accumulating into ``psum`` (see NkiTensor._inplace)
MATMUL_TILE = _ArrayTags()


class NkiTensor:
    """A typed, bounds-checked view of simulated memory (see the module docstring).

    Parameters
    ----------
    data : numpy.ndarray
        Storage of dtype ``dtype.np_dtype`` (not copied; writes go through it).
    dtype : Format or anything :func:`fastisa.dtypes.lookup` accepts.
    buffer : Buffer
    name : str
    """

    # ``data`` is a property over the ``_d`` slot: reading or setting it first waits for an
    # overlapped nc_matmul (fastisa._kernels.nki.matmul's ``overlap``; issue 15), so no
    # element access can see a matmul's output before it is complete.  ``_d`` itself is
    # for metadata only (shape, strides, views).
    __slots__ = ("_d", "dtype", "buffer", "name", "__weakref__")

    def __init__(self, data: np.ndarray, dtype, buffer: Buffer = SBUF, name: str = ""):
        fmt = _dt.lookup(dtype)
        if not isinstance(data, np.ndarray):
            raise TypeError(f"NkiTensor: data must be a numpy array, got {type(data).__name__}")
        if data.dtype != fmt.np_dtype:
            if data.dtype.itemsize != fmt.np_dtype.itemsize:
                raise ConstraintError(
                    f"NkiTensor: data dtype {data.dtype} cannot hold {fmt.name} "
                    f"(storage dtype {fmt.np_dtype})")
            data = data.view(fmt.np_dtype)
        if not isinstance(buffer, Buffer):
            raise ConstraintError(f"NkiTensor: buffer must be one of nl.sbuf, nl.psum, nl.hbm, "
                                  f"nl.shared_hbm, got {buffer!r}")
        self._d = data
        self.dtype = fmt
        self.buffer = buffer
        self.name = name

    @property
    def data(self) -> np.ndarray:
        """The storage (a numpy array of ``dtype.np_dtype``), once any overlapped
        nc_matmul has completed."""
        _mm_join()
        return self._d

    @data.setter
    def data(self, value: np.ndarray) -> None:
        _mm_join()
        self._d = value

    def __getstate__(self):
        # copy / deepcopy / pickle read the storage's elements: after any overlapped matmul
        _mm_join()
        slots = {}
        for c in type(self).__mro__:
            for k in c.__dict__.get("__slots__", ()):
                if k != "__weakref__" and hasattr(self, k):
                    slots[k] = getattr(self, k)
        return None, slots

    # -- shape ----------------------------------------------------------------------
    @property
    def shape(self) -> tuple:
        return tuple(self._d.shape)

    @property
    def ndim(self) -> int:
        return self._d.ndim

    @property
    def size(self) -> int:
        return int(self._d.size)

    @property
    def partitions(self) -> int:
        """Size of the partition dimension (axis 0); 1 for a 0-d tensor."""
        return int(self._d.shape[0]) if self._d.ndim else 1

    @property
    def free_size(self) -> int:
        """Elements per partition (product of the free dimensions)."""
        return int(math.prod(self._d.shape[1:])) if self._d.ndim else 1

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    # -- views ----------------------------------------------------------------------
    def __getitem__(self, key) -> "NkiTensor":
        if self.__class__ is NkiTensor:  # the common form first (issue 15): in-range slices
            # (and, in HBM, integers: on-chip integers keep the partition dim, and Beta 1
            # block tensors have their own rule -- the general path does those)
            onchip = self.buffer.on_chip
            d = self._d         # metadata only: a view touches no element
            if not onchip or (d.ndim >= 2 and not (BLOCK_PDIM._d and BLOCK_PDIM.get(d, 0))):
                v = _plain_view(d, key, not onchip)
                if v is not None:
                    t = _new_tensor(NkiTensor)
                    t._d, t.dtype, t.buffer, t.name = v, self.dtype, self.buffer, self.name
                    return t
        try:
            return self._getitem(key)
        except AccessError as e:
            # an index outside the tensor: an error when the view is accessed, unless a
            # mask= keeps the access inside (see _MaskedView)
            v = _MaskedView.build(self, key, e)
            if v is None:
                raise
            return v

    def _getitem(self, key) -> "NkiTensor":
        key, gather, target = _index_arrays(key, self.data.shape, self.name)
        if gather is not None:
            v = _strided_view(self.data, gather)
            if v is not None:       # every index affine in the result's coordinates: a view
                return NkiTensor(v, self.dtype, self.buffer, self.name)
            # a non-affine (indirect) index: the elements gathered into a read-only copy
            v = self.data[gather]
            v.flags.writeable = False
            return NkiTensor(v, self.dtype, self.buffer, self.name)
        key = _normalize_key(key, self.data.shape, self.name)
        bpdim = BLOCK_PDIM.get(self.data, 0) if self.buffer.on_chip else 0
        if bpdim:
            # a Beta 1 block tensor ``(B, nl.par_dim(P), F)``: integers on the block dims
            # drop them (numpy semantics), the partition axis moves left by as many
            v = self.data[key + (Ellipsis,) if all(isinstance(k, int) for k in key) else key]
            axis, left = 0, bpdim
            for k in key:
                if k is None:
                    continue
                if axis < bpdim and isinstance(k, int):
                    left -= 1
                axis += 1
            if left > 0 and v.ndim > left:
                BLOCK_PDIM[v] = left
            return NkiTensor(v, self.dtype, self.buffer, self.name)
        onchip = self.buffer.on_chip and self.data.ndim >= 1
        if onchip and self.data.ndim >= 2:
            key = _onchip_key(key, self.data.shape)
        elif onchip and key \
                and isinstance(key[0], (int, np.integer)):
            # SDK 2.33 NkiTensor.__getitem__: "On-chip tensors (SBUF, PSUM): integer indexing
            # on dim 0 produces a size-1 slice (partition dim is preserved, not removed)"
            i = key[0] % self.data.shape[0]
            key = (slice(i, i + 1, 1),) + key[1:]
        if all(isinstance(k, (int, np.integer)) for k in key):
            key = key + (Ellipsis,)             # one element: a 0-d view, not a scalar
        v = self.data[key]
        if onchip and v.ndim < 2:
            # "... Result is always at least 2D": t[:, j] of a [P, F] tile is [P, 1]
            v = v.reshape(v.shape + (1,) * (2 - v.ndim))
        if target is not None and v.shape != tuple(target):
            r = v.reshape(target)
            if not np.shares_memory(r, v):
                r.flags.writeable = False
            v = r
        return NkiTensor(v, self.dtype, self.buffer, self.name)

    def __setitem__(self, key, value) -> None:
        """``t[i_p, i_f] = tile`` (legacy NKI): store ``value`` into the view by ``dma_copy``
        (``tensor_copy`` semantics: converted through float32 when dtypes differ)."""
        from . import tiles
        dst = self[key]
        if (isinstance(value, NkiTensor) and value.data.shape == dst.data.shape
                and value.data.strides == dst.data.strides and value.dtype is dst.dtype
                and value.data.__array_interface__["data"][0]
                == dst.data.__array_interface__["data"][0]):
            return      # ``t[i] += x`` stores t[i] back onto itself: nothing to copy
        tiles.store(dst, value)

    # legacy tile arithmetic: ``a + b``, ``t * 2.0``, ``psum_tile += nisa.nc_matmul(...)``
    def _binop(self, other, opname, reverse=False):
        from . import ops, tiles
        op = getattr(ops, opname)
        return tiles.apply_binary(op, other, self) if reverse else \
            tiles.apply_binary(op, self, other)

    def __add__(self, o):
        return self._binop(o, "add")

    def __radd__(self, o):
        return self._binop(o, "add", True)

    def __sub__(self, o):
        return self._binop(o, "subtract")

    def __rsub__(self, o):
        return self._binop(o, "subtract", True)

    def __mul__(self, o):
        return self._binop(o, "multiply")

    def __rmul__(self, o):
        return self._binop(o, "multiply", True)

    def __neg__(self):
        return self._binop(-1.0, "multiply")

    def broadcast_to(self, shape) -> "NkiTensor":
        """``t.broadcast_to(shape)``: :func:`nki.language.broadcast_to` (a new tile)."""
        from . import tiles
        return tiles.broadcast_to(self, shape)

    def __truediv__(self, o):
        from . import tiles
        return tiles.divide(self, o)

    def __rtruediv__(self, o):
        from . import tiles
        return tiles.divide(o, self)

    def __mod__(self, o):
        from . import ops, tiles
        return tiles.language_only(ops.mod, self, o)

    def __rmod__(self, o):
        from . import ops, tiles
        return tiles.language_only(ops.mod, o, self)

    def _inplace(self, other, opname):
        from . import isa, ops, tiles
        op = getattr(ops, opname)
        mm = (MATMUL_TILE.get(other.data, 0) if opname == "add" and self.buffer is PSUM
              and isinstance(other, NkiTensor) and other.shape == self.shape else 0)
        if mm and (psum_state(self) == PSUM_INIT).any():
            mm = 0     # onto a memset / copied tile (Beta 1's nl.zeros then +=): an add
        if mm:
            # Beta 1 ``psum[...] += nisa.nc_matmul(s, m)``: the matmul accumulating into
            # psum (SDK 2.33 nc_matmul accumulate=None: the first write of an accumulation
            # group overwrites -- the compiler's start flag -- later ones add), so it is
            # rerun as nc_matmul(dst=psum) on the same operands, the current API's bits
            fn, args, kwargs, mask = mm
            if mask is None or (isinstance(mask, (bool, np.bool_)) and mask):
                fn(self, *args, **kwargs)
                return self
            if isinstance(mask, (bool, np.bool_)):       # masked off: nothing is written
                return self
            # an element mask: nc_matmul(dst=psum) has no element mask, and adding the
            # masked product once would round differently from nc_matmul's documented
            # k-by-k order, so this form is refused rather than approximated
            raise NotImplementedError(
                "psum += nisa.nc_matmul(..., mask=<element mask>): fastisa accumulates a "
                "Beta 1 matmul tile into PSUM only unmasked or with a scalar mask (an element "
                "mask would not give nc_matmul's k-by-k rounding)")
        if isinstance(other, NkiTensor):
            if other.buffer is PSUM and self.buffer is PSUM:
                other = tiles.copy_tile(other)
            if other.shape != self.shape:
                other = tiles._as_tile(other, self.shape)
            isa.tensor_tensor(self, self, other, op)
        else:
            isa.tensor_scalar(self, self, op, float(other))
        return self

    def __iadd__(self, o):
        return self._inplace(o, "add")

    def __isub__(self, o):
        return self._inplace(o, "subtract")

    def __imul__(self, o):
        return self._inplace(o, "multiply")

    def reshape(self, *shape, **kw) -> "NkiTensor":
        """A view with a new shape (same elements, C order).  Never copies.
        ``t.reshape((a, b))``, ``t.reshape(a, b)`` or ``t.reshape(shape=(a, b))``.

        Raises ConstraintError when the element count differs or when the view's
        strides do not allow the new shape without a copy.
        """
        if "shape" in kw:
            if shape:
                raise TypeError("reshape: shape given both positionally and as a keyword")
            shape = (kw.pop("shape"),)
        if kw:
            raise TypeError(f"reshape: unexpected keyword argument {next(iter(kw))!r}")
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        shape = tuple(int(s) for s in shape)
        v = self.data.view()
        try:
            v.shape = shape
        except (AttributeError, ValueError) as e:
            raise ConstraintError(
                f"reshape: shape {shape} is not a view of tensor {self.name!r} of shape "
                f"{self.shape} (element count or strides do not allow it): {e}") from None
        return NkiTensor(v, self.dtype, self.buffer, self.name)

    def view(self, dtype) -> "NkiTensor":
        """Reinterpret the storage as another format of the same item size."""
        fmt = _dt.lookup(dtype)
        if fmt.itemsize != self.dtype.itemsize:
            raise ConstraintError(f"view: {fmt.name} has item size {fmt.itemsize}, tensor "
                                  f"{self.name!r} is {self.dtype.name} ({self.dtype.itemsize})")
        return NkiTensor(self.data.view(fmt.np_dtype), fmt, self.buffer, self.name)

    def ap(self, pattern, offset=0, dtype=None, scalar_offset=None, vector_offset=None,
           indirect_dim=0, **kwargs) -> "NkiTensor":
        """Access-pattern view (SDK 2.33 ``NkiTensor.ap``):
        ``element[i0, i1, ...] = flat[offset + scalar_offset * prod(self.shape[indirect_dim+1:])
        + sum_d i_d * step_d]`` with ``pattern = [[partition_step, num_partitions], [step,
        num], ...]``.

        Parameters
        ----------
        pattern : list of [step, num] pairs, steps and ``offset`` in elements of the
            underlying contiguous allocation (in units of ``dtype`` when given).
        offset : int, elements.
        dtype : reinterpret the storage bytes as this data type first (``t.ap(...,
            dtype=nl.uint8)``); the allocation's byte size must be a multiple of its size.
        scalar_offset : int, a ``VirtualRegister``, or a one-element tensor whose value is
            read when the view is accessed: a runtime INDEX along dimension ``indirect_dim``
            of this (base) tensor, not of the pattern, so the access starts
            ``scalar_offset * prod(self.shape[indirect_dim + 1:])`` elements further on
            (aws-neuron-sdk ``nki/migration/index.rst``, "Scalar dynamic access": "offset +
            scalar_offset * prod(A.shape[indirect_dim+1:])"; ``nki/deep-dives/nki-aps.rst``).
        vector_offset : tensor of per-index ROW INDICES along ``indirect_dim`` (an indirect
            access): index ``i`` of that pattern dimension reads at ``vector_offset[i] *
            prod(self.shape[indirect_dim + 1:])`` instead of ``i * step`` (the pattern's step
            there is ignored; aws-neuron-sdk ``nki/migration/index.rst``, "Vector dynamic
            access": ``offset + 1 * z + 512 * dynamic_idx`` for a (128, 512) base;
            ``nki/api/nki/isa/__init__.py`` ``dma_copy``: "one row index per partition").
            The view is a read-only gather.
        indirect_dim : int, the dimension of this tensor the scalar/vector index counts
            along (ConstraintError outside ``[0, ndim)``); with ``vector_offset`` also the
            pattern dimension the indices replace.

        The pattern is checked (ints, num >= 1) when the view is built; whether every
        element it reaches lies inside the tensor is checked when the view is accessed
        (AccessError), as the hardware checks an access pattern when it is used.
        """
        def ints(v, what):
            if hasattr(type(v), "__index__") and not isinstance(v, (int, np.integer)):
                v = operator.index(v)   # a dynamic offset: nisa.VirtualRegister's value
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise ConstraintError(f"ap: {what} must be an integer, got {v!r}")
            return int(v)

        try:
            pairs = [tuple(p) for p in pattern]
        except TypeError:
            raise ConstraintError(f"ap: pattern must be a list of [step, num] pairs, got "
                                  f"{pattern!r}") from None
        if not pairs or any(len(p) != 2 for p in pairs):
            raise ConstraintError(f"ap: pattern must be a list of [step, num] pairs, got {pattern!r}")
        pairs = [(ints(st, "a pattern step"), ints(n, "a pattern num")) for st, n in pairs]
        if any(num <= 0 for _, num in pairs):
            raise ConstraintError(f"ap: every num must be positive, got {pattern!r}")
        offset = ints(offset, "offset")
        if not self.data.flags.c_contiguous and _partition_rows(self.data) is None:
            raise ConstraintError(f"ap: tensor {self.name!r} must be contiguous (or contiguous "
                                  f"within each partition) to take an access pattern, got "
                                  f"strides {self.data.strides}")
        fmt = self.dtype if dtype is None else _dt.lookup(dtype)
        nbytes = self.data.nbytes
        if nbytes % fmt.itemsize:
            raise ConstraintError(f"ap: dtype {fmt.name} ({fmt.itemsize} bytes) does not divide "
                                  f"tensor {self.name!r} of {nbytes} bytes")
        scalar_scale = 1
        if scalar_offset is not None or vector_offset is not None:
            # the runtime index counts along the base tensor's dimension indirect_dim, so it
            # is scaled by the elements to the right of it (not by the pattern's step)
            indirect_dim = ints(indirect_dim, "indirect_dim")
            if not 0 <= indirect_dim < self.ndim:
                raise ConstraintError(f"ap: indirect_dim must be in [0, {self.ndim - 1}] (a "
                                      f"dimension of tensor {self.name!r} of shape "
                                      f"{self.shape}), got {indirect_dim}")
            scalar_scale = int(math.prod(self.shape[indirect_dim + 1:]))
            if fmt.itemsize != self.dtype.itemsize:   # the scale counts elements of ``dtype``
                nb = scalar_scale * self.dtype.itemsize
                if nb % fmt.itemsize:
                    raise ConstraintError(f"ap: with dtype {fmt.name} an offset step along "
                                          f"indirect_dim {indirect_dim} of tensor {self.name!r} "
                                          f"({nb} bytes) is not a whole number of elements")
                scalar_scale = nb // fmt.itemsize
        dyn = scalar_offset is not None
        if scalar_offset is not None and not isinstance(scalar_offset, NkiTensor):
            offset += ints(scalar_offset, "scalar_offset") * scalar_scale
            scalar_offset = None
        if vector_offset is not None:
            if not isinstance(vector_offset, NkiTensor):
                raise ConstraintError(f"ap: vector_offset must be a tensor, got "
                                      f"{type(vector_offset).__name__}")
            indirect_dim = ints(indirect_dim, "indirect_dim")
            if not 0 <= indirect_dim < len(pairs):
                raise ConstraintError(f"ap: indirect_dim must be in [0, {len(pairs) - 1}], got "
                                      f"{indirect_dim}")
            if vector_offset.size != pairs[indirect_dim][1]:
                raise ConstraintError(f"ap: vector_offset must have {pairs[indirect_dim][1]} "
                                      f"elements (num of dimension {indirect_dim}), got "
                                      f"{vector_offset.size}")
        v = _APView(self, fmt, pairs, offset, scalar_offset, vector_offset, indirect_dim,
                    scalar_scale)
        v._scalar_dyn = dyn
        return v

    # -- conveniences ---------------------------------------------------------------
    def numpy(self) -> np.ndarray:
        """A copy of the contents as a numpy array (storage dtype)."""
        return np.array(self.data, copy=True)

    def __len__(self) -> int:
        return self.partitions

    def __repr__(self) -> str:
        return (f"NkiTensor(name={self.name!r}, shape={self.shape}, dtype={self.dtype.name}, "
                f"buffer={self.buffer.name})")


class _APView(NkiTensor):
    """An access-pattern view whose elements are resolved (and bounds-checked) on first
    access of ``.data``; see :meth:`NkiTensor.ap`."""

    __slots__ = ("_data", "_spec", "_scalar_scale", "_scalar_dyn")

    def __init__(self, base, fmt, pairs, offset, scalar_offset, vector_offset, indirect_dim,
                 scalar_scale=1):
        self._data = None
        self._scalar_dyn = False      # built with a scalar_offset (oob_mode.skip may apply)
        self._spec = (base, pairs, offset, scalar_offset, vector_offset, indirect_dim)
        self._scalar_scale = scalar_scale
        self.dtype = fmt
        self.buffer = base.buffer
        self.name = base.name

    @property
    def data(self):
        _mm_join()
        if self._data is None:
            self._data = self._resolve()
        return self._data

    @data.setter
    def data(self, value):
        _mm_join()
        self._data = value

    @property
    def shape(self) -> tuple:
        return tuple(n for _, n in self._spec[1])

    @property
    def ndim(self) -> int:
        return len(self._spec[1])

    @property
    def size(self) -> int:
        return int(math.prod(self.shape))

    @property
    def partitions(self) -> int:
        return self.shape[0]

    @property
    def free_size(self) -> int:
        return int(math.prod(self.shape[1:]))

    def _resolve(self):
        base, pairs, offset, scalar_offset, vector_offset, indirect_dim = self._spec
        fmt = self.dtype
        if scalar_offset is not None:
            v = np.asarray(scalar_offset.data).reshape(-1)
            if v.size != 1:
                raise AccessError(f"ap: scalar_offset must hold one value, got "
                                  f"{scalar_offset.size}")
            idx = int(np.asarray(v[0], np.float64)) if scalar_offset.dtype.kind == "float" \
                else int(v[0])
            offset += idx * self._scalar_scale
        if not base.data.flags.c_contiguous:
            return self._resolve_rows(base, pairs, offset, vector_offset, fmt)
        raw = base.data.reshape(-1).view(np.uint8)
        n_el = raw.size // fmt.itemsize
        lo = offset + sum(min(0, st * (n - 1)) for st, n in pairs)
        hi = offset + sum(max(0, st * (n - 1)) for st, n in pairs)
        if vector_offset is not None:
            vo = np.asarray(vector_offset.data).reshape(-1).astype(np.int64) * self._scalar_scale
            st, n = pairs[indirect_dim]
            lo += int(vo.min()) - min(0, st * (n - 1))
            hi += int(vo.max()) - max(0, st * (n - 1))
        if lo < 0 or hi >= n_el:
            raise AccessError(f"ap: pattern {[list(p) for p in pairs]} with offset {offset} "
                              f"reaches elements [{lo}, {hi}], outside tensor {base.name!r} of "
                              f"{n_el} {fmt.name} elements")
        flat = raw.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[fmt.itemsize])
        it = fmt.itemsize
        shape = [n for _, n in pairs]
        strides = [(st if n > 1 else 0) * it for st, n in pairs]
        if vector_offset is None:
            v = np.lib.stride_tricks.as_strided(flat[offset:], shape=shape, strides=strides)
            return v.view(fmt.np_dtype)
        idx = np.full([1] * len(pairs), offset, np.int64)
        for d, (st, n) in enumerate(pairs):
            shp = [1] * len(pairs)
            shp[d] = n
            step = vo if d == indirect_dim else np.arange(n, dtype=np.int64) * st
            idx = idx + step.reshape(shp)
        g = flat[idx].view(fmt.np_dtype)
        g.flags.writeable = False
        return g

    def _written_elements(self):
        """(base, flat element indices) this view reaches, for the shared-HBM race check of
        a multi-program launch, or None when they cannot be computed (a base that is not
        C-contiguous, a malformed offset).  Indices outside the base (``oob_mode.skip``)
        are dropped by the caller."""
        base, pairs, offset, scalar_offset, vector_offset, indirect_dim = self._spec
        try:
            if not base.data.flags.c_contiguous:
                return None
            if scalar_offset is not None:
                v = np.asarray(scalar_offset.data).reshape(-1)
                if v.size != 1:
                    return None
                idx0 = int(np.asarray(v[0], np.float64)) if scalar_offset.dtype.kind == \
                    "float" else int(v[0])
                offset += idx0 * self._scalar_scale
            idx = np.full([1] * len(pairs), offset, np.int64)
            vo = None if vector_offset is None else \
                np.asarray(vector_offset.data).reshape(-1).astype(np.int64) * self._scalar_scale
            for d, (st, n) in enumerate(pairs):
                shp = [1] * len(pairs)
                shp[d] = n
                step = vo if (vo is not None and d == indirect_dim) else \
                    np.arange(n, dtype=np.int64) * st
                idx = idx + step.reshape(shp)
            n_el = base.data.nbytes // self.dtype.itemsize
            idx = idx.reshape(-1)
            return base, idx[(idx >= 0) & (idx < n_el)]
        except (AccessError, ValueError, TypeError, OverflowError):
            return None

    def _resolve_rows(self, base, pairs, offset, vector_offset, fmt):
        """An on-chip tensor whose partitions are rows of a larger memory (``address=``
        placement): element ``k`` of the tensor is byte ``(k % F) * size`` of partition
        ``k // F``.  The first pattern pair steps over partitions (its step a multiple of
        F), the others stay inside one partition."""
        rows = _partition_rows(base.data)
        P, rb = rows.shape
        it = fmt.itemsize
        F = rb // it
        if vector_offset is not None:
            raise NotImplementedError("ap: vector_offset on a tensor placed with address= is "
                                      "not implemented by fastisa")
        (ps, pn), rest = pairs[0], pairs[1:]
        p0, f0 = divmod(offset, F)
        if ps % F:
            raise NotImplementedError(f"ap: on a tensor placed with address=, the partition "
                                      f"step must be a multiple of the {F} elements per "
                                      f"partition, got {ps}")
        plo = p0 + min(0, (ps // F) * (pn - 1))
        phi = p0 + max(0, (ps // F) * (pn - 1))
        flo = f0 + sum(min(0, st * (n - 1)) for st, n in rest)
        fhi = f0 + sum(max(0, st * (n - 1)) for st, n in rest)
        if plo < 0 or phi >= P or flo < 0 or fhi >= F:
            raise AccessError(f"ap: pattern {[list(p) for p in pairs]} with offset {offset} "
                              f"reaches partitions [{plo}, {phi}] and elements [{flo}, {fhi}] "
                              f"per partition, outside tensor {base.name!r} of {P} x {F} "
                              f"{fmt.name} elements")
        start = rows[p0, f0 * it:]
        shape = [pn] + [n for _, n in rest]
        strides = [(ps // F) * rows.strides[0] if pn > 1 else 0] + \
            [(st if n > 1 else 0) * it for st, n in rest]
        u = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[it]
        v = np.lib.stride_tricks.as_strided(start.view(u), shape=shape, strides=strides)
        return v.view(fmt.np_dtype)


class _MaskedView(NkiTensor):
    """A legacy index expression that reaches outside its tensor (``t[256:384]`` of a
    288-row tensor, ``t[i_p, i_f]`` with ``i_p < 128`` on a 64-row tensor).

    NKI Beta 1 masks (nki.api.shared, "Masking": "a compile-time constant predicate that
    controls whether/how this instruction is executed"; the tiling factor that does not
    divide a dimension is its first use case) keep such an access inside the tensor: the
    masked-off iterations are not executed.  So the bounds are checked when the view is
    accessed, against the mask of the instruction that accesses it: ``nl.load``,
    ``nl.store`` and Beta 1's ``nisa.dma_copy`` read / write the elements the mask
    selects (:meth:`masked_read` / :meth:`masked_write`) and raise the indexing's
    :class:`~fastisa.errors.AccessError` when a selected element is outside the tensor.
    Any other use (``.data``: every instruction, a load without a mask) raises it too.
    """

    __slots__ = ("_base", "_idx", "_valid", "_err", "_shape")

    def __init__(self, base, idx, valid, err, shape):
        self._base = base
        self._idx = idx
        self._valid = valid
        self._err = err
        self._shape = tuple(shape)
        self.dtype = base.dtype
        self.buffer = base.buffer
        self.name = base.name

    @classmethod
    def build(cls, base, key, err):
        """The view for ``base[key]``, or None when ``key`` is not a form this covers
        (integers, slices with positive steps and ``...`` only; or integers and index
        arrays only)."""
        if isinstance(base, (_MaskedView, _APView)):
            return None
        shape = base.data.shape
        if type(key).__name__ == "_MGridResult":
            key = tuple(key)
        if not isinstance(key, tuple):
            key = (key,)
        flat = []
        for k in key:
            flat.extend(k) if type(k).__name__ == "_MGridResult" else flat.append(k)
        if sum(1 for k in flat if k is Ellipsis) == 1:
            i = flat.index(Ellipsis)
            flat = flat[:i] + [slice(None)] * (len(shape) - len(flat) + 1) + flat[i + 1:]
        if len(flat) != len(shape) or any(k is Ellipsis or k is None for k in flat):
            return None
        comps = []
        if all(isinstance(k, (slice, int, np.integer)) and not isinstance(k, bool)
               for k in flat):
            nres = sum(isinstance(k, slice) for k in flat)
            if base.buffer.on_chip and (not isinstance(flat[0], slice) or nres < 2):
                return None     # on-chip integer indexing keeps dims (_onchip_key): not here
            j = 0
            target = []
            for axis, k in enumerate(flat):
                if isinstance(k, slice):
                    step = 1 if k.step is None else int(k.step)
                    start = 0 if k.start is None else int(k.start)
                    stop = shape[axis] if k.stop is None else int(k.stop)
                    if step <= 0 or start < 0 or stop < start:
                        return None
                    ar = np.arange(start, stop, step, dtype=np.int64)
                    comps.append(ar.reshape((1,) * j + (ar.size,) + (1,) * (nres - j - 1)))
                    target.append(ar.size)
                    j += 1
                else:
                    if int(k) < 0:
                        return None
                    comps.append(np.array(int(k), np.int64))
            target = tuple(target)
        else:
            for k in flat:
                if isinstance(k, NkiTensor):
                    k = np.asarray(k.data).astype(np.int64) if k.dtype.kind != "float" else \
                        np.asarray(k.data, np.float32).astype(np.int64)
                if isinstance(k, (int, np.integer)) and not isinstance(k, bool):
                    k = np.array(int(k), np.int64)
                if not isinstance(k, np.ndarray) or not np.issubdtype(k.dtype, np.integer):
                    return None
                comps.append(np.asarray(k, np.int64))
            try:
                target = np.broadcast_shapes(*[c.shape for c in comps])
            except ValueError:
                return None
        if len(target) < 1:
            return None
        valid = np.ones(target, bool)
        for c, n in zip(comps, shape):
            valid &= np.broadcast_to((c >= 0) & (c < n), target)
        return cls(base, tuple(comps), valid, err, target)

    def _raise(self):
        raise AccessError(str(self._err)) from None

    @property
    def data(self):
        self._raise()

    @data.setter
    def data(self, value):
        self._raise()

    @property
    def shape(self) -> tuple:
        return self._shape

    @property
    def ndim(self) -> int:
        return len(self._shape)

    @property
    def size(self) -> int:
        return int(math.prod(self._shape))

    @property
    def partitions(self) -> int:
        return self._shape[0]

    @property
    def free_size(self) -> int:
        return int(math.prod(self._shape[1:]))

    def _selected(self, mask):
        m = np.broadcast_to(np.asarray(mask, bool), self._shape) if mask is not None else \
            np.ones(self._shape, bool)
        if (m & ~self._valid).any():
            self._raise()
        return m

    def masked_read(self, mask) -> NkiTensor:
        """A read-only copy of the view's elements where ``mask`` holds (elements outside
        the mask hold the tensor's element at the nearest valid index, never read by a
        masked instruction).  Raises the indexing's AccessError when ``mask`` selects an
        element outside the tensor."""
        self._selected(mask)
        shp = self._base.data.shape
        idx = tuple(np.broadcast_to(np.clip(c, 0, n - 1), self._shape) for c, n in zip(self._idx, shp))
        v = self._base.data[idx]
        v.flags.writeable = False
        return NkiTensor(v, self.dtype, self.buffer, self.name)

    def masked_write(self, values: np.ndarray, mask) -> None:
        """Write ``values`` (the view's shape, its storage dtype) where ``mask`` holds.
        Raises the indexing's AccessError when ``mask`` selects an element outside the
        tensor (then nothing is written)."""
        m = self._selected(mask)
        idx = tuple(np.broadcast_to(c, self._shape)[m] for c in self._idx)
        self._base.data[idx] = np.broadcast_to(values, self._shape)[m]


def _partition_rows(a: np.ndarray):
    """``a`` as a [partitions, bytes] uint8 view when each partition's elements are
    contiguous (an ``address=``-placed tile); None otherwise."""
    if a.ndim < 1 or a.size == 0:
        return None
    P = a.shape[0]
    r = a.reshape(P, -1)
    if not np.shares_memory(r, a):
        return None
    if r.shape[1] > 1 and r.strides[1] != r.itemsize:
        return None
    u = r.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[r.itemsize])
    return np.lib.stride_tricks.as_strided(u, shape=(P, r.shape[1]), strides=(
        r.strides[0], r.itemsize)).view(np.uint8)


def _affine(a: np.ndarray):
    """(start, step, n, axis) when the integer array ``a`` varies along at most one axis as
    an arithmetic progression with positive step; None otherwise."""
    if a.size == 0:
        return None
    var = [i for i, n in enumerate(a.shape) if n > 1]
    if len(var) > 1:
        return None
    flat = a.reshape(-1)
    if flat.size == 1:
        return int(flat[0]), 1, 1, None
    d = np.diff(flat)
    if d[0] <= 0 or not (d == d[0]).all():
        return None
    return int(flat[0]), int(d[0]), int(flat.size), var[0]


_new_tensor = object.__new__


def _plain_view_py(d, key, ints=True):
    """``d[key]`` when ``key`` is an int, a slice or a tuple of them (ints and None as the
    slices' fields, positive steps) whose every bound :func:`_normalize_key` accepts
    unchanged; else None (the general path then checks, explains or raises AccessError).
    ``ints=False`` (on-chip tensors) takes slices on the partition dim and integers on free
    dims only while the view keeps at least two sliced dims.  The same view as the general path:
    a tuple of ints gets ``...`` appended (a 0-d view, not a scalar)."""
    if key.__class__ is not tuple:
        key = (key,)
    shape = d.shape
    if len(key) > len(shape):
        return None
    all_ints = True
    for ax, k in enumerate(key):
        c = k.__class__
        if c is slice:
            all_ints = False
            st = k.step
            if st is not None and (st.__class__ is not int or st <= 0):
                return None
            a, b = k.start, k.stop
            dim = shape[ax]
            if a is None:
                a = 0
            elif a.__class__ is not int:
                return None
            if b is None:
                b = dim
            elif b.__class__ is not int:
                return None
            if not 0 <= a <= b <= dim:
                return None
        elif c is int and (ints or ax):
            if not -shape[ax] <= k < shape[ax]:
                return None
        else:
            return None
    if not ints:
        # speed15 branch: on chip, integers on free dims drop them as in numpy while the
        # view keeps >= 2 sliced dims (the tutorial's a[0:128, kt, m0:m1]); otherwise
        # _onchip_key's size-1 rule applies (the general path)
        nsl = len(shape) - len(key)
        for k in key:
            nsl += k.__class__ is slice
        if nsl < 2:
            return None
    return d[key + (Ellipsis,)] if all_ints else d[key]


try:    # the compiled twin (the same views; issue 15: two per nc_matmul in a tiled kernel)
    from .._kernels.nki import plain_view as _plain_view
except ImportError:     # pragma: no cover - a build without the extension
    _plain_view = _plain_view_py


def _index_arrays(key, shape, name):
    """Legacy NKI index expressions (``nl.arange`` / ``nl.mgrid`` arrays, tiles as indices).

    Returns ``(key, gather, result_shape)``.  Affine index arrays laid out one per axis
    (``t[i_p, i_f]`` with ``i_p`` [P, 1] and ``i_f`` [1, F]) become slices, so the result is
    a view (writes go through), reshaped to the indices' broadcast shape as numpy's indexing
    would give.  Anything else (a permuted layout, a non-affine or tile index) returns a
    numpy advanced index in ``gather`` to read a copy.
    """
    if type(key).__name__ == "_MGridResult":
        key = tuple(key)
    if not isinstance(key, tuple):
        key = (key,)
    if not any(isinstance(k, (np.ndarray, NkiTensor)) or type(k).__name__ == "_MGridResult"
               for k in key):
        return key, None, None
    flat = []
    for k in key:
        if type(k).__name__ == "_MGridResult":
            flat.extend(k)
        else:
            flat.append(k)
    arrs = []
    for k in flat:
        if isinstance(k, NkiTensor):
            k = np.asarray(k.data).astype(np.int64) if k.dtype.kind != "float" else \
                np.asarray(k.data, np.float32).astype(np.int64)
        if isinstance(k, np.ndarray):
            if k.dtype == np.bool_ or not np.issubdtype(k.dtype, np.integer):
                raise AccessError(f"index: tensor {name!r}: index arrays must hold integers, "
                                  f"got {k.dtype}")
            k = np.asarray(k)
        arrs.append(k)
    no_slices = all(isinstance(k, (np.ndarray, int, np.integer)) for k in arrs)
    target = np.broadcast_shapes(*[np.shape(k) for k in arrs]) if no_slices else None
    n_arr = sum(isinstance(k, np.ndarray) for k in arrs)
    out = []
    ok = True
    for pos, k in enumerate(arrs):
        if isinstance(k, np.ndarray):
            aff = _affine(k)
            if aff is None:
                ok = False
                break
            start, step, n, ax = aff
            if ax is not None and target is not None and k.ndim == len(target) and \
                    n_arr == len(arrs) and ax != pos:
                ok = False          # a permuted (transposing) layout
                break
            out.append(slice(start, start + step * (n - 1) + 1, step))
        else:
            out.append(k)
    if ok:
        return tuple(out), None, target
    for axis, k in enumerate(arrs):
        if isinstance(k, np.ndarray):
            if axis >= len(shape) or k.min() < 0 or k.max() >= shape[axis]:
                raise AccessError(f"index: axis {axis} of tensor {name!r} has size "
                                  f"{shape[axis] if axis < len(shape) else 0}; index array "
                                  f"reaches [{k.min()}, {k.max()}]")
    return tuple(arrs), tuple(arrs), None


def _strided_view(d: np.ndarray, arrs):
    """A view of ``d`` for legacy index expressions whose every index is an integer or an
    integer array that is an affine function of the result's coordinates (``t[i_p,
    i_f2 * F1 + i_f1]``, ``t[i0, 2 * i1 + i2, 2 * i3 + i4]`` from ``nl.mgrid``: transposing
    and windowed layouts of the free axes; the result's partition axis must come from
    ``d``'s partition axis alone), so that writes through it go to ``d`` as the hardware's
    access pattern would; None otherwise (the caller gathers a read-only copy).  The indices were
    bounds-checked by :func:`_index_arrays`."""
    if len(arrs) != d.ndim or not all(isinstance(k, (np.ndarray, int, np.integer))
                                      for k in arrs):
        return None
    try:
        target = np.broadcast_shapes(*[np.shape(k) for k in arrs])
    except ValueError:
        return None
    if not target or 0 in target:
        return None
    nd = len(target)
    coords = [np.arange(n, dtype=np.int64).reshape((1,) * j + (n,) + (1,) * (nd - j - 1))
              for j, n in enumerate(target)]
    starts = []
    strides = [0] * nd
    for axis, k in enumerate(arrs):
        k = np.broadcast_to(np.asarray(k, np.int64), target)
        start = int(k[(0,) * nd])
        pred = np.full((1,) * nd, start, np.int64)
        for j, n in enumerate(target):
            if n == 1:
                continue
            e = [0] * nd
            e[j] = 1
            c = int(k[tuple(e)]) - start
            if c and (axis == 0) != (j == 0):
                return None     # the partition axis stays the partition axis (an access
                #                 pattern cannot move free elements across partitions)
            if c:
                pred = pred + c * coords[j]
                strides[j] += c * d.strides[axis]
        if not np.array_equal(np.broadcast_to(pred, target), k):
            return None
        starts.append(start)
    first = d[tuple(slice(i, i + 1) for i in starts)]     # the element at the origin
    return np.lib.stride_tricks.as_strided(first, shape=tuple(target), strides=tuple(strides),
                                           writeable=d.flags.writeable)


def _onchip_key(key, shape):
    """SBUF / PSUM views stay at least 2-D (SDK 2.33 ``nki/get-started/nki-language-guide.rst``,
    "The partition dimension is special" and the indexing rules): an integer index on the
    partition dim keeps it at size 1; an integer on a free dim drops it unless the result
    would be < 2-D, then the last integer-indexed free dim is kept at size 1
    (``t[0, :]`` of a ``(128, 64)`` tile is ``(1, 64)``, ``t[:, 0]`` is ``(128, 1)``,
    ``t[0, 0, 10]`` of a 3-D one ``(1, 1)``).  HBM tensors drop indexed dims as numpy does."""
    if any(k is None for k in key):
        return key
    key = list(key) + [slice(None)] * (len(shape) - len(key))

    def keep(i):
        j = key[i] % shape[i]
        key[i] = slice(j, j + 1, 1)

    if isinstance(key[0], (int, np.integer)):
        keep(0)
    if sum(isinstance(k, slice) for k in key) < 2:
        ints = [i for i in range(1, len(key)) if isinstance(key[i], (int, np.integer))]
        if ints:
            keep(ints[-1])
    return tuple(key)


def _normalize_key(key, shape, name):
    """Bounds-check a basic index; return a tuple numpy can apply as a view."""
    if not isinstance(key, tuple):
        key = (key,)
    n_ell = sum(1 for k in key if k is Ellipsis)
    if n_ell > 1:
        raise AccessError(f"index: at most one '...' allowed, got {key!r}")
    n_real = sum(1 for k in key if k is not Ellipsis and k is not None)
    if n_real > len(shape):
        raise AccessError(f"index: {n_real} indices for tensor {name!r} of rank {len(shape)}")
    if n_ell:
        i = next(i for i, k in enumerate(key) if k is Ellipsis)
        key = key[:i] + (slice(None),) * (len(shape) - n_real) + key[i + 1:]
    out = []
    axis = 0
    for k in key:
        if k is None:
            out.append(None)
            continue
        if hasattr(type(k), "__index__") and not isinstance(k, (int, np.integer)):
            k = operator.index(k)       # a dynamic offset: nisa.VirtualRegister's value
        dim = shape[axis]
        if isinstance(k, slice):
            start, stop, step = k.start, k.stop, k.step
            step = 1 if step is None else int(step)
            if step <= 0:
                raise AccessError(f"index: axis {axis} of tensor {name!r}: step must be positive, "
                                  f"got {step}")
            start = 0 if start is None else int(start)
            stop = dim if stop is None else int(stop)
            if not (0 <= start <= dim) or not (start <= stop <= dim):
                raise AccessError(f"index: axis {axis} of tensor {name!r} has size {dim}; slice "
                                  f"[{start}:{stop}] is outside it")
            out.append(slice(start, stop, step))
        elif isinstance(k, (int, np.integer)) and not isinstance(k, bool):
            i = int(k)
            if not -dim <= i < dim:
                raise AccessError(f"index: axis {axis} of tensor {name!r} has size {dim}; "
                                  f"index {i} is outside it")
            out.append(i)
        else:
            raise AccessError(f"index: axis {axis} of tensor {name!r}: only integers, slices and "
                              f"nl.ds(start, size) are supported, got {k!r}")
        axis += 1
    return tuple(out)


# ---- validation helpers shared by the instructions ----------------------------------

def is_tensor(x: Any) -> bool:
    return isinstance(x, NkiTensor)


#: Parameter names of the tensors an instruction writes (checked by :func:`require_dst`
#: wherever :func:`require_tensor` or the compute instructions' operand check sees them).
DST_PARAMS = frozenset({"dst", "val_dst", "idx_dst", "dst_idx", "reduce_res"})


def require_tensor(instr: str, param: str, x) -> NkiTensor:
    """``x`` must be an NkiTensor (ConstraintError otherwise).  An on-chip tensor has at
    most :data:`PMAX` partitions; a destination (``param`` in :data:`DST_PARAMS`) must be
    writable and free of self-overlap (:func:`require_dst`)."""
    if not isinstance(x, NkiTensor):
        raise ConstraintError(f"{instr}: {param} must be an NkiTensor, got {type(x).__name__}")
    if x.buffer.on_chip and x.partitions > PMAX:
        raise ConstraintError(f"{instr}: {param} partition dimension must be <= {PMAX} "
                              f"({x.buffer.name} has {PMAX} partitions), got {x.partitions}")
    if param in DST_PARAMS:
        require_dst(instr, param, x)
    if x.buffer is PSUM:
        note_access(param, x)
    return x


def _self_overlaps(a: np.ndarray) -> bool:
    """Do two elements of the view ``a`` share a byte?  A quick sufficient test of
    disjointness first (the axes sorted by stride, each stride past the span of the
    smaller ones), then an exact test over the elements' byte offsets."""
    if a.flags.c_contiguous:        # speed15b: C order, no element shares a byte
        return False
    dims = [(abs(st), n) for st, n in zip(a.strides, a.shape) if n > 1]
    if a.size <= 1:
        return False
    if any(st == 0 for st, _ in dims):
        return True
    dims.sort()
    span = a.itemsize
    for st, n in dims:
        if st < span:
            break
        span += st * (n - 1)
    else:
        return False
    offs = np.zeros(1, dtype=np.int64)
    for st, n in dims:
        offs = (offs[:, None] + np.arange(n, dtype=np.int64) * st).ravel()
    offs.sort()
    return bool((np.diff(offs) < a.itemsize).any())


def repeats_only(a: np.ndarray) -> bool:
    """Is every self-overlap of the on-chip view ``a`` a zero step along a FREE dimension
    (each partition repeating its own elements, ``ap([[1, n], [0, H]])``), the rest of it
    disjoint?  (A zero partition step -- several lanes writing one partition -- is not.)"""
    if a.ndim < 2 or (a.strides[0] == 0 and a.shape[0] > 1):
        return False
    zero = [d for d in range(1, a.ndim) if a.strides[d] == 0 and a.shape[d] > 1]
    keep = tuple(0 if d in zero else slice(None) for d in range(a.ndim))
    return bool(zero) and not _self_overlaps(a[keep])


def require_dst(instr: str, param: str, t: NkiTensor, allow_repeats: bool = False) -> None:
    """A tensor an instruction writes: its storage must be writable (a tensor over
    ``np.frombuffer(bytes)`` or a broadcast view is not: ConstraintError), and no two of
    its elements may share memory (an access pattern such as ``ap([[0, 128], [1, n]])`` --
    every partition the same row -- is fine to read but as a destination the result would
    depend on the write order: OverlapError).  Issue 12."""
    d = t.data
    if not d.flags.writeable:
        raise ConstraintError(f"{instr}: {param} must be writable, got tensor {t.name!r} over "
                              f"read-only memory")
    if _self_overlaps(d):
        if allow_repeats and repeats_only(d):
            import warnings
            from ..errors import UndefinedBehaviorWarning
            warnings.warn(f"{instr}: {param} repeats elements (a zero step in its access "
                          f"pattern, strides {tuple(s // d.itemsize for s in d.strides)} "
                          f"elements): each is written several times and fastisa keeps the "
                          f"last write in access order (the docs give no order)",
                          UndefinedBehaviorWarning, stacklevel=4)
            return
        raise OverlapError(f"{instr}: {param} elements must not overlap each other, got "
                           f"tensor {t.name!r} of shape {t.shape} with strides "
                           f"{tuple(s // d.itemsize for s in d.strides)} elements, where "
                           f"several elements share memory")


def require_buffer(instr: str, param: str, t: NkiTensor, allowed) -> None:
    """``t.buffer`` must be one of ``allowed`` (Buffer objects or names)."""
    names = _ALLOWED_BUFFERS.get(allowed) if allowed.__class__ is tuple else None
    if names is None:
        names = {b.name if isinstance(b, Buffer) else _BUFFERS[b].name for b in allowed}
        if allowed.__class__ is tuple and all(b.__class__ is str for b in allowed):
            _ALLOWED_BUFFERS[allowed] = names       # speed15b: names resolved once
    if t.buffer.name not in names:
        raise ConstraintError(f"{instr}: {param} must be in {' or '.join(sorted(names))}, "
                              f"got {t.buffer.name}")


_ALLOWED_BUFFERS: dict = {}
_ALLOWED_DTYPES: dict = {}


def require_dtype(instr: str, param: str, t: NkiTensor, allowed) -> None:
    names = _ALLOWED_DTYPES.get(allowed) if allowed.__class__ is tuple else None
    if names is None:
        names = {_dt.lookup(a).name for a in allowed}
        if allowed.__class__ is tuple and all(a.__class__ is str for a in allowed):
            _ALLOWED_DTYPES[allowed] = names        # speed15b: names resolved once
    if t.dtype.name not in names:
        raise ConstraintError(f"{instr}: {param} dtype must be {' or '.join(sorted(names))}, "
                              f"got {t.dtype.name}")


def free_size(t: NkiTensor) -> int:
    return t.free_size


# ---- PSUM accumulation state (nc_matmul's accumulate=None) -----------------------------
#
# SDK 2.33 nki.isa.nc_matmul docstring ("Accumulation mode"; aws-neuron-sdk
# nki/api/nki/isa/__init__.py): accumulate=False overwrites and starts an accumulation
# group, True accumulates onto the PSUM content, None lets the compiler infer the flag:
# "first write overwrites, subsequent writes accumulate" / "auto-detect based on whether
# this PSUM location was previously written".  fastisa keeps one state byte per PSUM
# element (per allocation, shared by every view of it):
#
#   PSUM_FRESH  never written                    None -> overwrite
#   PSUM_GROUP  written by a matmul since the    None -> accumulate
#               last non-matmul access
#   PSUM_DONE   a group read by a non-matmul     None -> overwrite (a new group: a PSUM tile
#               instruction (its result consumed)       reused for the next output tile)
#   PSUM_INIT   written by a non-matmul          None -> accumulate onto the value; the docs
#               instruction (memset, copy ...)          call this undefined on NeuronCore-v2/v3,
#                                                       so fastisa warns on trn1/trn2
#
# Non-matmul instructions report the PSUM tensors they touch through note_access() while
# they validate; the changes apply only when the instruction completes (cost.record), so a
# call that raises leaves the state as it was.

PSUM_FRESH, PSUM_GROUP, PSUM_DONE, PSUM_INIT = 0, 1, 2, 3


_PSUM_STATE: dict = {}          # id(owner ndarray) -> (weakref(owner), uint8[owner.nbytes])
class _Pending(_threading.local):
    """Per thread: ``items``, [(is_write, NkiTensor), ...] of the running instruction.  The
    list exists from a thread's first look (a missing attribute would make every
    ``getattr(_PENDING, "items", None)`` raise and catch an AttributeError: 0.3 us on each
    instruction's cost hook, issue 15)."""

    def __init__(self):
        self.items = []


_PENDING = _Pending()
_WRITE_PARAMS = ("dst", "out", "reduce_res", "val_dst", "idx_dst")


def meta_array(t) -> np.ndarray:
    """``t.data`` for metadata only (shape, strides, address, owner): read without waiting
    for an overlapped nc_matmul, whose operands' metadata never changes.  Never for element
    access."""
    if t.__class__ is NkiTensor:
        return t._d
    return t.data


def _owner(a: np.ndarray) -> np.ndarray:
    """The ndarray that owns the memory ``a`` views (through slices, reshapes, as_strided)."""
    while True:
        b = a.base
        if b is None:
            return a
        if isinstance(b, np.ndarray):
            a = b
            continue
        bb = getattr(b, "base", None)       # as_strided's DummyArray
        if isinstance(bb, np.ndarray):
            a = bb
            continue
        return a


def _zeros_u8(n: int) -> np.ndarray:
    """``np.zeros(n, np.uint8)``; from fastisa._kernels.pool when large (speed15 branch: a
    kernel's PSUM tiles, allocated per loop iteration, otherwise fault in fresh zero pages
    for their state bytes each time)."""
    if n < 65536:
        return np.zeros(n, np.uint8)
    z = _pool.empty(n, np.uint8)
    z.fill(0)
    return z


def psum_state(t: "NkiTensor") -> np.ndarray:
    """A writable uint8 view, shaped like ``t``, of the state bytes of ``t``'s elements."""
    own = _owner(meta_array(t))
    key = id(own)
    ent = _PSUM_STATE.get(key)
    if ent is None or ent[0]() is not own:
        ent = (_weakref.ref(own), _zeros_u8(max(own.nbytes, 1)))
        _PSUM_STATE[key] = ent
        _weakref.finalize(own, _PSUM_STATE.pop, key, None)
    arr = ent[1]
    d = meta_array(t)
    off = d.__array_interface__["data"][0] - own.__array_interface__["data"][0]
    return np.lib.stride_tricks.as_strided(arr[off:], shape=d.shape, strides=d.strides)


def _pending() -> list:
    p = getattr(_PENDING, "items", None)
    if p is None:
        p = _PENDING.items = []
    return p


def note_access(param: str, t) -> None:
    """Record that the running (non-matmul) instruction touches PSUM tensor ``t``."""
    if isinstance(t, NkiTensor) and t.buffer is PSUM:
        is_write = param.startswith("dst") or param.endswith("_dst") or param in _WRITE_PARAMS
        _pending().append((is_write, t))


def discard_pending() -> None:
    """Forget the accesses noted so far (nc_matmul keeps its own state)."""
    _pending().clear()


def apply_pending(engine=None, instruction=None, cycles=None) -> None:
    """The running instruction completed: reads close open groups, writes mark PSUM_INIT."""
    p = getattr(_PENDING, "items", None)
    if not p:
        return
    items = list(p)
    p.clear()
    for is_write, t in items:           # reads first: an in-place op ends up PSUM_INIT
        if not is_write and not _state_words_set(t, PSUM_GROUP, PSUM_DONE):
            st = psum_state(t)
            st[st == PSUM_GROUP] = PSUM_DONE
    for is_write, t in items:
        if is_write and not _state_words_set(t, -1, PSUM_INIT):
            psum_state(t)[...] = PSUM_INIT


def _state_words_set(t, old, new) -> bool:
    """The C path of apply_pending (issue 15) for a C-contiguous 4-byte tensor whose state
    bytes exist: each element's state ``old`` (< 0: any) becomes ``new``; False when it
    does not apply (the caller then uses psum_state).  State bytes only: the tensor's
    storage is read for its address and layout (no wait for an overlapped nc_matmul)."""
    d = meta_array(t)
    if not (_LITTLE and type(d) is np.ndarray and d.itemsize == 4 and d.flags.c_contiguous
            and d.size):
        return False
    own = _owner(d)
    ent = _PSUM_STATE.get(id(own))
    if ent is None or ent[0]() is not own:
        return False
    from .._kernels import nki as _k
    return _k.psum_replace(d, own, ent[1], old, new)


_LITTLE = np.little_endian


if apply_pending not in _cost.RECORD_HOOKS:
    _cost.RECORD_HOOKS.append(apply_pending)
_cost.idle_when(apply_pending, pending=_PENDING)     # nothing to apply: nothing to do
