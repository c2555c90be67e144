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
import threading as _threading
import weakref as _weakref
from typing import Any

import numpy as np

from .. import cost as _cost
from .. import dtypes as _dt
from ..errors import AccessError, ConstraintError

__all__ = ["Buffer", "NkiTensor", "PMAX", "is_tensor", "require_tensor", "require_buffer",
           "require_dtype", "free_size"]

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


SBUF = Buffer("sbuf", True)
PSUM = Buffer("psum", True)
PRIVATE_HBM = Buffer("private_hbm", False)
SHARED_HBM = Buffer("shared_hbm", False)
_BUFFERS = {b.name: b for b in (SBUF, PSUM, PRIVATE_HBM, SHARED_HBM)}
_BUFFERS["hbm"] = PRIVATE_HBM


def _buffer_by_name(name: str) -> Buffer:
    return _BUFFERS[name]


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

    __slots__ = ("data", "dtype", "buffer", "name", "__weakref__")

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
        self.data = data
        self.dtype = fmt
        self.buffer = buffer
        self.name = name

    # -- shape ----------------------------------------------------------------------
    @property
    def shape(self) -> tuple:
        return tuple(self.data.shape)

    @property
    def ndim(self) -> int:
        return self.data.ndim

    @property
    def size(self) -> int:
        return int(self.data.size)

    @property
    def partitions(self) -> int:
        """Size of the partition dimension (axis 0); 1 for a 0-d tensor."""
        return int(self.data.shape[0]) if self.data.ndim else 1

    @property
    def free_size(self) -> int:
        """Elements per partition (product of the free dimensions)."""
        return int(math.prod(self.data.shape[1:])) if self.data.ndim else 1

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    # -- views ----------------------------------------------------------------------
    def __getitem__(self, key) -> "NkiTensor":
        key = _normalize_key(key, self.data.shape, self.name)
        return NkiTensor(self.data[key], self.dtype, self.buffer, self.name)

    def reshape(self, *shape) -> "NkiTensor":
        """A view with a new shape (same elements, C order).  Never copies.

        Raises ConstraintError when the element count differs or when the view's
        strides do not allow the new shape without a copy.
        """
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

    def ap(self, pattern, offset: int = 0) -> "NkiTensor":
        """Access-pattern view: ``pattern=[[partition_step, num_partitions], [step, num], ...]``.

        Steps are in elements of the underlying contiguous allocation, ``offset`` too.
        The tensor must be C-contiguous (a whole allocation or a reshape of one); every
        element the pattern reaches must lie inside it (else AccessError).
        """
        if not self.data.flags.c_contiguous:
            raise ConstraintError(f"ap: tensor {self.name!r} must be contiguous to take an "
                                  f"access pattern, got strides {self.data.strides}")
        pairs = [tuple(int(v) for v in p) for p in pattern]
        if not pairs or any(len(p) != 2 for p in pairs):
            raise ConstraintError(f"ap: pattern must be a list of [step, num] pairs, got {pattern!r}")
        if any(num <= 0 for _, num in pairs):
            raise ConstraintError(f"ap: every num must be positive, got {pattern!r}")
        offset = int(offset)
        lo = offset + sum(min(0, s * (n - 1)) for s, n in pairs)
        hi = offset + sum(max(0, s * (n - 1)) for s, n in pairs)
        if lo < 0 or hi >= self.size:
            raise AccessError(f"ap: pattern {pattern!r} with offset {offset} reaches elements "
                              f"[{lo}, {hi}], outside tensor {self.name!r} of {self.size} elements")
        flat = self.data.reshape(-1)
        it = flat.itemsize
        v = np.lib.stride_tricks.as_strided(flat[offset:], shape=[n for _, n in pairs],
                                            strides=[s * it for s, _ in pairs])
        return NkiTensor(v, self.dtype, self.buffer, self.name)

    # -- conveniences ---------------------------------------------------------------
    def numpy(self) -> np.ndarray:
        """A copy of the contents as a numpy array (storage dtype)."""
        return np.array(self.data, copy=True)

    def __len__(self) -> int:
        return self.partitions

    def __repr__(self) -> str:
        return (f"NkiTensor(name={self.name!r}, shape={self.shape}, dtype={self.dtype.name}, "
                f"buffer={self.buffer.name})")


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


def require_tensor(instr: str, param: str, x) -> NkiTensor:
    """``x`` must be an NkiTensor (ConstraintError otherwise)."""
    if not isinstance(x, NkiTensor):
        raise ConstraintError(f"{instr}: {param} must be an NkiTensor, got {type(x).__name__}")
    if x.buffer is PSUM:
        note_access(param, x)
    return x


def require_buffer(instr: str, param: str, t: NkiTensor, allowed) -> None:
    """``t.buffer`` must be one of ``allowed`` (Buffer objects or names)."""
    names = {b.name if isinstance(b, Buffer) else _BUFFERS[b].name for b in allowed}
    if t.buffer.name not in names:
        raise ConstraintError(f"{instr}: {param} must be in {' or '.join(sorted(names))}, "
                              f"got {t.buffer.name}")


def require_dtype(instr: str, param: str, t: NkiTensor, allowed) -> None:
    names = {_dt.lookup(a).name for a in allowed}
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
_PENDING = _threading.local()   # per thread: [(is_write, NkiTensor), ...] of the running instr
_WRITE_PARAMS = ("dst", "out", "reduce_res", "val_dst", "idx_dst")


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


def psum_state(t: "NkiTensor") -> np.ndarray:
    """A writable uint8 view, shaped like ``t``, of the state bytes of ``t``'s elements."""
    own = _owner(t.data)
    key = id(own)
    ent = _PSUM_STATE.get(key)
    if ent is None or ent[0]() is not own:
        ent = (_weakref.ref(own), np.zeros(max(own.nbytes, 1), np.uint8))
        _PSUM_STATE[key] = ent
        _weakref.finalize(own, _PSUM_STATE.pop, key, None)
    arr = ent[1]
    off = t.data.__array_interface__["data"][0] - own.__array_interface__["data"][0]
    return np.lib.stride_tricks.as_strided(arr[off:], shape=t.data.shape,
                                           strides=t.data.strides)


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
        if not is_write:
            st = psum_state(t)
            st[st == PSUM_GROUP] = PSUM_DONE
    for is_write, t in items:
        if is_write:
            psum_state(t)[...] = PSUM_INIT


if apply_pending not in _cost.RECORD_HOOKS:
    _cost.RECORD_HOOKS.append(apply_pending)
