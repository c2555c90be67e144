"""``nki.language`` for fastisa: data types, buffers, tensor allocation, SPMD ids, tile sizes.

* Every the NKI docs, page NKI ISA API Common Fields (github.com/aws-neuron/aws-neuron-sdk, nki/api/nki.api.shared.rst) data type as ``nl.<name>`` (the :class:`fastisa.dtypes.Format` objects):
  ``uint8 int8 uint16 int16 uint32 int32 float8_e4m3 float8_e5m2 float8_e4m3fn
  float8_e8m0fnu float16 bfloat16 tfloat32 float32 float8_e5m2_x4 float8_e4m3fn_x4
  float4_e2m1fn_x4 bool_``.
* Buffers ``nl.sbuf``, ``nl.psum``, ``nl.hbm`` (= ``nl.private_hbm``), ``nl.shared_hbm``.
* ``nl.ndarray(shape, dtype, buffer=nl.sbuf, name='')`` allocates a tensor filled the way
  the official simulator fills new memory: **NaN for float dtypes, 4 for integer dtypes**
  (bool_ too), so reading unwritten memory is visible.  Packed x4 containers: every fp8
  lane holds the NaN code 0x7F; float4_e2m1fn has no NaN, its lanes hold code 0x7 (6.0).
* SBUF / PSUM capacity per partition is tracked per kernel instance for the target
  (``trn2`` by default; ``trn3`` / ``trn1`` with :func:`use_target`, ``nki.simulate(...,
  target=)`` or ``NEURON_PLATFORM_TARGET_OVERRIDE``); an allocation that does not fit
  raises :class:`~fastisa.errors.AccessError`.  Memory is released when the tensor (and
  every view of it) is garbage-collected.
* ``nl.tile_size`` (``pmax`` 128, ``psum_fmax`` 512, ...), ``nl.ds(start, size)``,
  ``nl.program_id(axis)``, ``nl.num_programs(axes)``, ``nl.program_ndim()``.
* The operator and activation tables (``nl.add`` ..., ``nl.exp`` ...) come from
  :mod:`fastisa.nki.ops` (re-exported at the end of this module).
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses as _dataclasses
import threading
import math
import operator
import os
import weakref
from dataclasses import dataclass, field

import numpy as np

from .._kernels.nki import join as _mm_join   # waits for an overlapped nc_matmul, if any

from .. import dtypes as _dt
from ..errors import AccessError, ConstraintError
from .tensor import PMAX, PRIVATE_HBM, PSUM, SBUF, SHARED_HBM, Buffer, NkiTensor
from . import _alloc, _capacity
from .._kernels import pool as _pool   # speed15 branch: recycled tensor storage

import typing as _typing

if _typing.TYPE_CHECKING:
    from collections.abc import Iterator, Sequence
    from typing import SupportsIndex

    from .._types import DTypeLike, Int, Shape

# ---- data types (the NKI docs, page NKI ISA API Common Fields (github.com/aws-neuron/aws-neuron-sdk, nki/api/nki.api.shared.rst), Table 7) ------------------------------------------------------
SPEC_DTYPES = ("uint8", "int8", "uint16", "int16", "uint32", "int32",
               "float8_e4m3", "float8_e5m2", "float8_e4m3fn", "float8_e8m0fnu",
               "float16", "bfloat16", "tfloat32", "float32",
               "float8_e5m2_x4", "float8_e4m3fn_x4", "float4_e2m1fn_x4", "bool_")

uint8 = _dt.FORMATS["uint8"]
int8 = _dt.FORMATS["int8"]
uint16 = _dt.FORMATS["uint16"]
int16 = _dt.FORMATS["int16"]
uint32 = _dt.FORMATS["uint32"]
int32 = _dt.FORMATS["int32"]
float8_e4m3 = _dt.FORMATS["float8_e4m3"]
float8_e5m2 = _dt.FORMATS["float8_e5m2"]
float8_e4m3fn = _dt.FORMATS["float8_e4m3fn"]
float8_e8m0fnu = _dt.FORMATS["float8_e8m0fnu"]
float16 = _dt.FORMATS["float16"]
bfloat16 = _dt.FORMATS["bfloat16"]
tfloat32 = _dt.FORMATS["tfloat32"]
float32 = _dt.FORMATS["float32"]
float8_e5m2_x4 = _dt.FORMATS["float8_e5m2_x4"]
float8_e4m3fn_x4 = _dt.FORMATS["float8_e4m3fn_x4"]
float4_e2m1fn_x4 = _dt.FORMATS["float4_e2m1fn_x4"]
bool_ = _dt.FORMATS["bool_"]

# ---- buffers -------------------------------------------------------------------------
sbuf = SBUF
psum = PSUM
private_hbm = PRIVATE_HBM
hbm = PRIVATE_HBM
shared_hbm = SHARED_HBM


# ---- targets and on-chip capacity ---------------------------------------------------------
@dataclass(frozen=True)
class Target:
    """A NeuronCore generation: SBUF and PSUM bytes per partition.

    trn1 (NC-v2): SBUF 24 MiB = 128 x 192 KiB; trn2 (NC-v3): SBUF 28 MiB = 128 x 224 KiB;
    PSUM 2 MiB = 128 x 16 KiB (the NKI docs and simulator guide (github.com/aws-neuron/aws-neuron-sdk, nki/api/ and nki/guides/nki_simulator.rst)).  trn3 (NC-v4) sizes are not
    in the reference: fastisa assumes SBUF 32 MiB = 128 x 256 KiB and PSUM 128 x 16 KiB.
    """

    name: str
    sbuf_bytes: int
    psum_bytes: int


TARGETS = {
    "trn1": Target("trn1", 192 * 1024, 16 * 1024),
    "trn2": Target("trn2", 224 * 1024, 16 * 1024),
    "trn3": Target("trn3", 256 * 1024, 16 * 1024),
}
_TARGET_ALIASES = {"gen2": "trn1", "gen3": "trn2", "gen4": "trn3", "inf2": "trn1"}


def _lookup_target(name) -> Target:
    if isinstance(name, Target):
        return name
    key = _TARGET_ALIASES.get(str(name).lower(), str(name).lower())
    if key not in TARGETS:
        raise ConstraintError(f"target: must be one of {sorted(TARGETS)}, got {name!r}")
    return TARGETS[key]


#: set by ``nki.target(name)`` (fastisa.nki._target): the target of runs without target=
_TARGET_OVERRIDE: contextvars.ContextVar[Target | None] = contextvars.ContextVar(
    "fastisa_nki_target_override", default=None)


def _default_target() -> Target:
    over = _TARGET_OVERRIDE.get()
    if over is not None:
        return over
    env = os.environ.get("NEURON_PLATFORM_TARGET_OVERRIDE")
    return _lookup_target(env) if env else TARGETS["trn2"]


@dataclass
class _Machine:
    """Per-kernel-instance state: target, SPMD ids, on-chip bytes in use per partition."""

    target: Target
    program_id: tuple = (0,)
    grid: tuple = (1,)
    used: dict = field(default_factory=lambda: {"sbuf": 0, "psum": 0})
    shared: list = field(default_factory=list)   # shared_hbm allocations of an SPMD launch
    n_shared: int = 0                            # this instance's shared_hbm allocations so far
    mm_overlap: bool = False    # nc_matmul may overlap the kernel's Python (nki.simulate)

    def capacity(self, buffer: str) -> int:
        return self.target.sbuf_bytes if buffer == "sbuf" else self.target.psum_bytes

    lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def reserve(self, buffer: str, nbytes: int) -> int | None:
        """Account ``nbytes`` per partition in ``buffer``: None when done, else the bytes
        in use (the tensor does not fit).  Atomic: a tensor's finalizer may release
        memory from another thread (the garbage collector runs anywhere)."""
        with self.lock:
            used = self.used[buffer]
            if used + nbytes > self.capacity(buffer):
                return used
            self.used[buffer] = used + nbytes
            return None

    def release(self, buffer: str, nbytes: int) -> None:
        with self.lock:
            self.used[buffer] -= nbytes

    def memory(self, buffer: str) -> np.ndarray:
        """This instance's SBUF / PSUM bytes, ``[128, capacity]`` uint8, for tensors placed
        with ``address=`` (created on first use; never-written bytes are 0xFF: NaN in every
        float format of 16 or 32 bits, -1 in integers)."""
        mems = self.__dict__.setdefault("_mem", {})
        if buffer not in mems:
            mems[buffer] = np.full((PMAX, self.capacity(buffer)), 0xFF, np.uint8)
        return mems[buffer]


#: guards the shared_hbm allocations of one SPMD launch (see ndarray)
_SHARED_LOCK = threading.Lock()

_MACHINE: contextvars.ContextVar[_Machine | None] = contextvars.ContextVar(
    "fastisa_nki_machine", default=None)
#: Eager calls outside any kernel instance run on a default machine of their THREAD
#: (issue 12): threads calling nki.isa / nl.ndarray directly do not share SBUF/PSUM
#: accounting or accumulator registers, as two NeuronCores would not.
_DEFAULT_MACHINE = threading.local()


def _machine() -> _Machine:
    m = _MACHINE.get()
    if m is None:
        m = getattr(_DEFAULT_MACHINE, "machine", None)
        if m is None:
            m = _DEFAULT_MACHINE.machine = _Machine(_default_target())
    return m


@contextlib.contextmanager
def _instance(target, program_id=(0,), grid=(1,), shared=None):
    """Run a block as one kernel instance (fresh SBUF/PSUM accounting)."""
    m = _Machine(_lookup_target(target) if target is not None else _default_target(),
                 tuple(program_id), tuple(grid), shared=[] if shared is None else shared)
    token = _MACHINE.set(m)
    try:
        yield m
    finally:
        _MACHINE.reset(token)


@contextlib.contextmanager
def use_target(name: str) -> Iterator[None]:
    """Run the block on target ``name`` (``"trn2"``, ``"trn3"``, ``"trn1"``, or gen2/3/4)."""
    with _instance(name):
        yield


def target() -> str:
    """Name of the current target (``"trn2"`` unless selected otherwise)."""
    return _machine().target.name


def sbuf_capacity() -> int:
    """SBUF bytes per partition of the current target."""
    return _machine().target.sbuf_bytes


def psum_capacity() -> int:
    """PSUM bytes per partition of the current target."""
    return _machine().target.psum_bytes


def sbuf_usage() -> int:
    """SBUF bytes per partition currently allocated by live tensors of this instance."""
    return _machine().used["sbuf"]


def psum_usage() -> int:
    return _machine().used["psum"]


class _TileSize:
    """``nl.tile_size``: hardware tile limits (elements)."""

    pmax = PMAX                   #: max partition dimension
    psum_fmax = 512               #: max free size of a PSUM tile (one 2 KiB bank of fp32)
    psum_bank_fmax = 512
    gemm_stationary_fmax = 128    #: max free size of nc_matmul's stationary operand
    gemm_moving_fmax = 512        #: max free size of nc_matmul's moving operand
    bn_stats_fmax = 512

    @property
    def total_available_sbuf_size(self) -> int:
        return sbuf_capacity()

    def __repr__(self) -> str:
        return (f"tile_size(pmax={self.pmax}, psum_fmax={self.psum_fmax}, "
                f"gemm_stationary_fmax={self.gemm_stationary_fmax}, "
                f"gemm_moving_fmax={self.gemm_moving_fmax})")


tile_size = _TileSize()


# ---- allocation ------------------------------------------------------------------------
def _fill_value(fmt):
    if fmt.kind == "float":
        return np.nan
    if fmt.kind in ("int", "bool"):
        return 4
    if fmt.name == "float4_e2m1fn_x4":
        return 0x7777
    return 0x7F7F7F7F  # fp8 x4: NaN code 0x7F in every lane


_FILL_BITS: dict = {}


def _fill_bits(fmt):
    """(unsigned storage dtype, fill bits, the bits repeated to 8 bytes) of ``fmt``."""
    bits = _FILL_BITS.get(fmt.name)
    if bits is None:
        one = np.full(1, _fill_value(fmt), fmt.np_dtype)
        u = one.view(f"u{one.itemsize}")
        v = int(u[0])
        pat = 0
        for i in range(0, 8, one.itemsize):
            pat |= v << (8 * i)
        bits = _FILL_BITS[fmt.name] = (u.dtype, v, pat)
    return bits


def _filled(shape, fmt) -> np.ndarray:
    """New storage of ``shape`` holding :func:`_fill_value` in every element: the same bits
    as ``np.full(shape, _fill_value(fmt), fmt.np_dtype)`` (the fill value converted once, per
    format), written by an unsigned-integer fill -- memset speed, where ``np.full`` on an
    ml_dtypes dtype converts element by element (issue 15)."""
    bits = _FILL_BITS.get(fmt.name) or _fill_bits(fmt)
    # speed15 / speed15b branches: the storage comes from fastisa._kernels.pool, which
    # fills it in C -- or, for a block of >= 64 KiB freed still holding exactly these bits
    # (compared byte for byte when it was freed), hands it back without writing it again
    return _pool.filled(shape, bits[0], bits[2], _threads()).view(fmt.np_dtype)


def _check_shape(shape) -> tuple:
    if type(shape) is tuple and shape:      # speed15 branch: the common form, no generators
        for s in shape:
            if type(s) is not int or s <= 0:
                break
        else:
            return shape
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    try:
        items = tuple(shape)
    except TypeError:
        raise ConstraintError(f"ndarray: shape must be a tuple of ints, got {shape!r}") from None
    if any(isinstance(s, bool) or not isinstance(s, (int, np.integer)) for s in items):
        raise ConstraintError(f"ndarray: shape must be a tuple of ints, got {shape!r}")
    shape = tuple(int(s) for s in items)
    if not shape:
        raise ConstraintError("ndarray: shape must have at least one dimension (the partition "
                              "dimension), got ()")
    if any(s <= 0 for s in shape):
        raise ConstraintError(f"ndarray: every dimension must be positive, got {shape}")
    return shape


def ndarray(shape: Shape, dtype: DTypeLike, buffer: Buffer | str | None = None, name: str = "",
            address: object = None, **kwargs: object) -> NkiTensor:
    """Allocate a tensor of ``shape`` (axis 0 = partition dimension) and ``dtype`` in ``buffer``.

    New memory is filled NaN (float dtypes) or 4 (integer dtypes), like ``nki.simulate``.

    Parameters
    ----------
    shape : tuple of int
        ``shape[0]`` is the partition dimension: at most 128 (``nl.tile_size.pmax``) for
        ``nl.sbuf`` / ``nl.psum``.  Packed x4 dtypes count containers (4 elements each).
    dtype : an ``nl`` data type (or a numpy dtype / format name).
    buffer : ``nl.sbuf`` (default), ``nl.psum``, ``nl.hbm``/``nl.private_hbm``, ``nl.shared_hbm``.
    name : str
    address : ``(start_partition, byte_offset)`` (or a byte offset) for ``nl.sbuf`` /
        ``nl.psum``: the tensor is placed there in this instance's memory, so tensors
        placed at overlapping addresses alias (share bytes) as on hardware, and the
        memory keeps its contents (never-written bytes read as 0xFF).  It must fit the
        partitions and the target's bytes per partition; placed tensors are not counted
        against the automatic allocations' capacity (the address range is the check).

    Raises
    ------
    ConstraintError
        Bad shape, unknown dtype, partition dimension > 128 on chip.
    AccessError
        The allocation does not fit the target's SBUF / PSUM bytes per partition.
    """
    # (no wait for an overlapped nc_matmul here: a fresh tensor is new memory -- the pending
    # call holds its operands' storage, so no block of theirs is reused -- and only its
    # own bytes are filled; the aliasing forms, _allocated and _placed, wait first)
    pdim = 0
    if isinstance(shape, (tuple, list)):
        for d in shape:     # speed15b: a loop, not a list comprehension (a frame per call)
            if d.__class__ is not int:
                for i, d in enumerate(shape):
                    if isinstance(d, _ParDim):
                        pdim = i
                        break
                break
    shape = _check_shape(shape)
    fmt = _dt.lookup(dtype)
    if isinstance(buffer, _alloc.Allocation):
        return _allocated(shape, fmt, buffer, name, address, pdim)
    if buffer is None:
        buffer = SBUF
    if isinstance(buffer, str):
        from .tensor import _BUFFERS
        if buffer not in _BUFFERS:
            raise ConstraintError(f"ndarray: buffer must be nl.sbuf, nl.psum, nl.hbm or "
                                  f"nl.shared_hbm, got {buffer!r}")
        buffer = _BUFFERS[buffer]
    if not isinstance(buffer, Buffer):
        raise ConstraintError(f"ndarray: buffer must be nl.sbuf, nl.psum, nl.hbm or "
                              f"nl.shared_hbm, got {buffer!r}")
    m = _machine()
    if buffer is SHARED_HBM and len(m.grid) and math.prod(m.grid) > 1:
        # one shared tensor per SPMD launch: the i-th shared_hbm allocation of every
        # instance is the same memory (each program writes its part of the output).
        # (under a lock: the programs of a grid that synchronise run as concurrent threads,
        # and two of them reaching their i-th allocation together must get one tensor, not
        # one each -- seen as a flaky sendrecv/core_barrier test on a loaded machine)
        i = m.n_shared
        m.n_shared += 1
        with _SHARED_LOCK:
            if i < len(m.shared):
                t = m.shared[i]
                if t.shape == shape and t.dtype is fmt:
                    return t
            t = NkiTensor(_filled(shape, fmt), fmt, buffer, name)
            if i < len(m.shared):
                m.shared[i] = t
            else:
                m.shared.append(t)
            return t
    if address is not None and buffer.on_chip:
        return _placed(shape, fmt, buffer, name, address, pdim, m)
    if buffer.on_chip:
        if shape[pdim] > PMAX:
            raise ConstraintError(f"ndarray: partition dimension must be <= {PMAX} for "
                                  f"{buffer.name}, got {shape[pdim]} (shape {shape})")
        per_part = math.prod(shape) // shape[pdim] * fmt.itemsize
        cap = m.capacity(buffer.name)
        if per_part > cap:
            raise AccessError(
                f"ndarray: {buffer.name} capacity exceeded on {m.target.name}: tensor {name!r} "
                f"{shape} {fmt.name} needs {per_part} bytes per partition, more than the "
                f"{cap} there are")
        # the allocator places a tensor of fewer partitions in as many 32-partition
        # quadrants as it needs (``address=(start_partition, byte)``): it takes that share
        # of every partition's bytes (fastisa._capacity: an area bound, no fragmentation)
        quads = -(-shape[pdim] // _capacity.QUADRANT)
        charge = -(-per_part * quads // (PMAX // _capacity.QUADRANT))
        where = "" if charge == per_part else \
            f" on {shape[pdim]} partitions ({charge} averaged over the {PMAX})"
    data = _filled(shape, fmt)
    if buffer.on_chip:
        used = _capacity.reserve_or_collect(m, buffer.name, charge)
        over = None
        if used is not None:     # an error now, or (in nki.simulate) decided later
            over = (f"ndarray: {buffer.name} capacity exceeded on {m.target.name}: tensor "
                    f"{name!r} {shape} {fmt.name} needs {per_part} bytes per partition{where}, "
                    f"{used} of {cap} are in use")
            _capacity.overflow(m, buffer.name, over, charge)
            _capacity.force_reserve(m, buffer.name, charge)
        own = data if data.base is None else data.base   # _filled's storage owner: views
        if getattr(m, "deferred_capacity", False):          # of it keep it in use
            _capacity.track_and_release(m, own, charge, buffer.name, data,
                                        fill=_FILL_BITS[fmt.name][1] if own is not data else None)
            if over is not None:        # placed at its first write (fastisa.nki._capacity)
                _capacity.defer(m, own, over)
        else:       # speed15b: a weak reference's callback, not weakref.finalize (4x less)
            r = weakref.ref(own, _released)
            _RELEASE[id(r)] = (r, m, buffer.name, charge)
        if pdim:
            from .tensor import BLOCK_PDIM
            BLOCK_PDIM[data] = pdim
    # speed15b: the slots set directly -- what NkiTensor.__init__ checks holds by
    # construction (data is a numpy array of fmt's storage dtype, buffer a Buffer)
    t = _new_object(NkiTensor)
    t._d, t.dtype, t.buffer, t.name = data, fmt, buffer, name   # _d: new storage, no wait
    return t


_new_object = object.__new__


#: id of a weak reference to the storage of a live on-chip tensor made outside
#: nki.simulate -> (the reference, the machine, buffer, bytes per partition) to release
#: when Python frees the storage
_RELEASE: dict = {}


def _released(r) -> None:
    ent = _RELEASE.pop(id(r), None)
    if ent is not None:
        ent[1].release(ent[2], ent[3])


def _allocated(shape, fmt, al, name, address, pdim) -> NkiTensor:
    """A tensor placed by an explicit allocator (``buffer=ncc.sbuf.mod_alloc(...)`` etc.,
    see :mod:`fastisa.nki._alloc`): its blocks alias wherever their addresses overlap."""
    from .tensor import BLOCK_PDIM, PSUM_FRESH, psum_state
    _mm_join()      # its blocks may alias an overlapped nc_matmul's operands
    if address is not None:
        raise ConstraintError(f"ndarray: address= cannot be combined with an explicit "
                              f"allocator ({al.instr}), got address={address!r}")
    data = _alloc.place(shape, fmt, al, name, pdim, _machine())
    if pdim:
        BLOCK_PDIM[data] = pdim
    t = NkiTensor(data, fmt, al.buffer, name)
    if al.buffer is PSUM:   # a new tensor: a new accumulation context (as in _placed)
        psum_state(t)[...] = PSUM_FRESH
    return t


def _placed(shape, fmt, buffer, name, address, pdim, m) -> NkiTensor:
    """A tensor at an explicit on-chip address (see :func:`ndarray`)."""
    _mm_join()      # its bytes may alias an overlapped nc_matmul's operands
    if isinstance(address, (tuple, list)):
        if len(address) != 2:
            raise ConstraintError(f"ndarray: address must be (start_partition, byte_offset), "
                                  f"got {address!r}")
        p0, off = address
    else:
        p0, off = 0, address
    for what, v in (("start partition", p0), ("byte offset", off)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise ConstraintError(f"ndarray: address {what} must be an integer, got {v!r}")
    p0, off = int(p0), int(off)
    if pdim != 0:
        raise NotImplementedError("ndarray: address= with a par_dim block shape is not "
                                  "implemented by fastisa")
    P = shape[0]
    cap = m.capacity(buffer.name)
    nbytes = math.prod(shape[1:]) * fmt.itemsize
    if not (0 <= p0 and p0 + P <= PMAX):
        raise AccessError(f"ndarray: address partitions [{p0}, {p0 + P}) of tensor {name!r} "
                          f"are outside the {PMAX} partitions of {buffer.name}")
    if not (0 <= off and off + nbytes <= cap):
        raise AccessError(f"ndarray: address bytes [{off}, {off + nbytes}) of tensor {name!r} "
                          f"{shape} {fmt.name} are outside {buffer.name}'s {cap} bytes per "
                          f"partition on {m.target.name}")
    if off % fmt.itemsize:
        raise ConstraintError(f"ndarray: address byte offset must be a multiple of the "
                              f"{fmt.name} item size {fmt.itemsize}, got {off}")
    raw = m.memory(buffer.name)[p0:p0 + P, off:off + nbytes]
    data = raw.view(fmt.np_dtype).reshape(shape)
    t = NkiTensor(data, fmt, buffer, name)
    if buffer is PSUM:
        # a new tensor starts a new accumulation context: nc_matmul(accumulate=None) is
        # inferred by the compiler per tensor ("first write overwrites"), so the first matmul
        # into a freshly declared tile overwrites even where an earlier tensor placed at the
        # same bytes left an open group (nki-library's attention_tkg reuses PSUM banks by
        # address= for every reduction tile)
        from .tensor import PSUM_FRESH, psum_state
        psum_state(t)[...] = PSUM_FRESH
    return t


def zeros(shape: Shape, dtype: DTypeLike, buffer: Buffer | str | None = None, name: str = "",
          address: object = None, **kwargs: object) -> NkiTensor:
    """Like :func:`ndarray` but filled with zeros (no engine cycles are counted)."""
    t = ndarray(shape, dtype, buffer=buffer, name=name, address=address)
    t.data[...] = 0
    if t.buffer is PSUM:    # a memset: a non-matmul write (nc_matmul accumulation state)
        from .tensor import PSUM_INIT, psum_state
        psum_state(t)[...] = PSUM_INIT
    return t


class _ParDim(int):
    """An int marking the partition dimension of a legacy block-tensor shape."""


def par_dim(size: Int) -> int:
    """Legacy partition-dimension marker: ``nl.ndarray((4, nl.par_dim(128), 512), ...)`` is
    4 blocks of [128, 512] tiles; the marked axis is the partition axis for the SBUF/PSUM
    capacity (4 x 512 elements per partition here).  Behaves as the int ``size``."""
    return _ParDim(int(size))


def ds(start: SupportsIndex, size: Int) -> slice:
    """Dynamic slice ``[start, start + size)`` for tensor indexing: ``t[:, nl.ds(64, 128)]``."""
    if hasattr(type(start), "__index__") and not isinstance(start, (int, np.integer)):
        start = operator.index(start)   # a dynamic offset: nisa.VirtualRegister's value
    for what, v in (("start", start), ("size", size)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise ConstraintError(f"ds: {what} must be an integer, got {v!r}")
    start, size = int(start), int(size)
    if size < 0:
        raise ConstraintError(f"ds: size must be >= 0, got {size}")
    return slice(start, start + size)


# ---- SPMD ------------------------------------------------------------------------------
def program_id(axis: int = 0) -> int:
    """Index of this kernel instance along launch-grid ``axis`` (``kernel[n]`` / ``kernel[n, m]``)."""
    m = _machine()
    axis = int(axis)
    if not 0 <= axis < len(m.grid):
        raise ConstraintError(f"program_id: axis must be in [0, {len(m.grid) - 1}], got {axis}")
    return m.program_id[axis]


def num_programs(axes: Int | Sequence[Int] | None = None) -> int | tuple[int, ...]:
    """Launch-grid size along ``axes`` (an int, a tuple of ints, or None for the whole grid)."""
    m = _machine()
    if axes is None:
        return m.grid[0] if len(m.grid) == 1 else tuple(m.grid)
    if isinstance(axes, (tuple, list)):
        return tuple(num_programs(a) for a in axes)
    axes = int(axes)
    if not 0 <= axes < len(m.grid):
        raise ConstraintError(f"num_programs: axes must be in [0, {len(m.grid) - 1}], got {axes}")
    return m.grid[axes]


def program_ndim() -> int:
    """Number of dimensions of the launch grid."""
    return len(_machine().grid)


# ---- loop ranges -------------------------------------------------------------------------
def _range(name, args, kwargs):
    """Iterations of a NKI loop: the kernel runs eagerly, so every range is Python's range
    (iterations in order; ``affine_range``'s freedom to reorder changes nothing here because
    each iteration's instructions run to completion before the next)."""
    for k in kwargs:
        if k not in ("start", "stop", "step", "unroll", "directive", "name", "lower_bound",
                     "upper_bound"):
            raise ConstraintError(f"{name}: unexpected keyword argument {k!r}")
    vals = list(args)
    for key in ("start", "stop", "step"):
        if key in kwargs:
            vals.append(kwargs[key])
    out = []
    for i, v in enumerate(vals):
        if hasattr(type(v), "__index__") and not isinstance(v, (int, np.integer)):
            v = operator.index(v)     # a dynamic bound: nisa.VirtualRegister's value
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise ConstraintError(f"{name}: bounds must be integers, got {v!r}")
        out.append(int(v))
    if not 1 <= len(out) <= 3:
        raise ConstraintError(f"{name}: takes 1 to 3 bounds (stop | start, stop[, step]), got "
                              f"{len(out)}")
    if len(out) == 3 and out[2] == 0:
        raise ConstraintError(f"{name}: step must not be 0")
    return range(*out)


def affine_range(*args: SupportsIndex, **kwargs: object) -> range:
    """``nl.affine_range(stop)`` / ``(start, stop[, step])``: a loop whose iterations do not
    depend on each other (except accumulation into PSUM).  Runs in order on fastisa."""
    return _range("affine_range", args, kwargs)


def sequential_range(*args: SupportsIndex, **kwargs: object) -> range:
    """``nl.sequential_range(...)``: a loop with a loop-carried dependency, run in order."""
    return _range("sequential_range", args, kwargs)


def static_range(*args: SupportsIndex, **kwargs: object) -> range:
    """``nl.static_range(...)``: a loop the compiler fully unrolls; runs in order."""
    return _range("static_range", args, kwargs)


def tile_range(*args: SupportsIndex, **kwargs: object) -> range:
    """``nl.tile_range(...)``: as :func:`affine_range` (legacy name)."""
    return _range("tile_range", args, kwargs)


def dynamic_range(*args: SupportsIndex, **kwargs: object) -> range:
    """``nl.dynamic_range(...)``: a loop with runtime bounds; here the bounds are ints."""
    return _range("dynamic_range", args, kwargs)



# ---- legacy helpers ---------------------------------------------------------------------------
class fp32:  # noqa: N801
    """``nl.fp32.min`` / ``.max``: the float32 limits (legacy NKI)."""

    min = float(np.finfo(np.float32).min)
    max = float(np.finfo(np.float32).max)


def device_print(prefix: str, x: object = None, **kwargs: object) -> None:
    """``nl.device_print(prefix, tile)``: print the tile's values (numpy) on the host."""
    from .tensor import NkiTensor as _T
    val = x.data if isinstance(x, _T) else x
    print(prefix, val)


def load_transpose2d(src: NkiTensor, dtype: DTypeLike | None = None, mask: object = None,
                     **kwargs: object) -> NkiTensor:
    """``nl.load_transpose2d(src)``: a 2-D HBM tensor ``[F, P]`` read into an SBUF tile
    ``[P, F]`` (a transposing DMA: elements moved, values unchanged)."""
    from .tensor import NkiTensor as _T
    from . import tiles as _tiles
    if not isinstance(src, _T) or src.ndim != 2:
        raise ConstraintError(f"load_transpose2d: src must be a 2-D tensor, got "
                              f"{getattr(src, 'shape', type(src).__name__)}")
    view = _T(src.data.T, src.dtype, src.buffer, src.name)
    return _tiles.load(view, mask=mask, dtype=dtype)


def nc(n: Int) -> int:
    """``nl.nc(n)``: the number of NeuronCores of a launch-grid dimension (``spmd_dim``)."""
    return int(n)


def spmd_dim(*dims: Int) -> int:
    """``nl.spmd_dim(nl.nc(2), 2)``: a launch-grid dimension spread over cores; on fastisa
    its size (the product) -- the programs run one after the other."""
    return math.prod(int(d) for d in dims)


# ---- buffer predicates, expand_dims (SDK 2.33 nki/api/nki/language/__init__.py) ---------------
def _buffer_of(buffer) -> Buffer:
    if isinstance(buffer, NkiTensor):
        return buffer.buffer
    if isinstance(buffer, Buffer):
        return buffer
    raise ConstraintError(f"buffer: must be a buffer (nl.sbuf, nl.psum, nl.hbm, "
                          f"nl.shared_hbm) or a tensor, got {buffer!r}")


def is_hbm(buffer: Buffer | NkiTensor) -> bool:
    """``nl.is_hbm(buffer)``: "Check if buffer is any HBM type" (private or shared HBM);
    a tensor stands for its buffer."""
    return not _buffer_of(buffer).on_chip


def is_on_chip(buffer: Buffer | NkiTensor) -> bool:
    """``nl.is_on_chip(buffer)``: "Check if buffer is on-chip (SBUF or PSUM)"."""
    return _buffer_of(buffer).on_chip


def is_psum(buffer: Buffer | NkiTensor) -> bool:
    """``nl.is_psum(buffer)``: "Check if buffer is PSUM"."""
    return _buffer_of(buffer) is PSUM


def is_sbuf(buffer: Buffer | NkiTensor) -> bool:
    """``nl.is_sbuf(buffer)``: "Check if buffer is SBUF"."""
    return _buffer_of(buffer) is SBUF


def expand_dims(x: NkiTensor, axis: Int) -> NkiTensor:
    """``nl.expand_dims(x, axis)``: "a tile with view of input data with the number of
    dimensions increased" -- a new size-1 axis at ``axis`` (numpy's rule, negative axes
    counted from the end of the result), a view sharing ``x``'s memory.

    Raises ConstraintError: ``x`` not a tensor, ``axis`` outside ``[-ndim-1, ndim]``."""
    if not isinstance(x, NkiTensor):
        raise ConstraintError(f"expand_dims: x must be a tensor, got {type(x).__name__}")
    n = x.ndim + 1
    a = operator.index(axis)
    if not -n <= a < n:
        raise ConstraintError(f"expand_dims: axis must be in [{-n}, {n - 1}] for a rank-{x.ndim} "
                              f"tile, got {a}")
    return NkiTensor(np.expand_dims(x.data, a % n), x.dtype, x.buffer, x.name)


# ---- NKIObject ------------------------------------------------------------------------------
def _own_annotations(klass):
    """The names a class itself annotates (Python 3.14 evaluates them lazily)."""
    ann = klass.__dict__.get("__annotations__")
    if ann is None and "__annotate__" in klass.__dict__:
        import inspect
        ann = inspect.get_annotations(klass, format=inspect.Format.FORWARDREF)
    return tuple(ann or ())


def _nki_fields(cls):
    """``[(name, default maker)]`` of an NKIObject class's fields (see :class:`NKIObject`)."""
    if _dataclasses.is_dataclass(cls):
        out = []
        for f in _dataclasses.fields(cls):
            if not f.init:
                continue
            if f.default is not _dataclasses.MISSING:
                out.append((f.name, lambda d=f.default: d))
            elif f.default_factory is not _dataclasses.MISSING:
                out.append((f.name, f.default_factory))
            else:
                out.append((f.name, lambda: None))
        return out
    out, seen = [], set()
    for klass in reversed(cls.__mro__):
        for name in _own_annotations(klass):
            if name in seen or name.startswith("__"):
                continue
            seen.add(name)
            out.append((name, lambda n=name: getattr(cls, n, None)))
    return out


class NKIObject:
    """``nl.NKIObject``: the base class kernels derive their configuration objects from
    (often ``@dataclass`` classes).  The SDK's language guide ("Class Support",
    ``nki/get-started/nki-language-guide.rst``): with or without ``@dataclass``, a class
    is compiled like a data class, and the compiler's default initializer gives *every*
    field a default -- for ``x: int`` and ``y: bool = False`` it is
    ``def __init__(self, x=None, y=False)`` followed by ``__post_init__()``.  So here the
    fields (a dataclass's init fields, else the class's annotated attributes, in
    declaration order, base classes first) are taken positionally or as keywords; a field
    not given takes its default, its default factory's value, or ``None``; unannotated
    class attributes (``section_idx = None``) may be set by keyword too.  A subclass that
    defines its own ``__init__`` keeps it."""

    def __init__(self, *args, **kwargs):
        cls = type(self)
        fields = _nki_fields(cls)
        if len(args) > len(fields):
            raise TypeError(f"{cls.__name__}() takes {len(fields)} positional arguments but "
                            f"{len(args)} were given")
        names = {name for name, _ in fields}
        vals = {}
        for (name, _), a in zip(fields, args):
            vals[name] = a
        for k, v in kwargs.items():
            if k in vals:
                raise TypeError(f"{cls.__name__}() got multiple values for argument {k!r}")
            if k not in names and not hasattr(cls, k) and fields:
                raise TypeError(f"{cls.__name__}() got an unexpected keyword argument {k!r}")
            vals[k] = v
        for name, default in fields:
            if name not in vals:
                vals[name] = default()
        for k, v in vals.items():
            object.__setattr__(self, k, v)
        post = getattr(self, "__post_init__", None)
        if post is not None:
            post()

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        # install the keyword constructor in the subclass itself, so that a @dataclass
        # applied to it afterwards keeps it instead of generating its own
        if "__init__" not in cls.__dict__:
            cls.__init__ = NKIObject.__init__


from .ops import *  # noqa: F401,F403,E402
from .tiles import (load, store, static_cast, full, ones, zeros_like, ones_like,  # noqa: E402,F401
                    full_like, empty_like, matmul, transpose, prod, mean, broadcast_to, where, arange, mgrid, rand, random_seed, shared_constant,
                    shared_identity_matrix, negative, divide, logical_not, gather_flattened)
from .tiles import invert_tile as bitwise_not  # noqa: E402,F401
from ._compute import _threads  # noqa: E402  (large fills: the kernels' thread count)


_SHADOWING = ("sum", "max", "min", "all", "any", "range")   # builtins this module still uses


def _loop_range(*args: SupportsIndex, **kwargs: object) -> range:
    """``nl.range(...)``: a loop iterator, as :func:`static_range`.  Not in the SDK 2.33
    reference, whose loop iterators are "an alias for Python's range()" (``nki/api/nki/
    language/__init__.py``, ``affine_range``); nki-library's kernels call it
    (``nkilib/experimental/mxfp_subkernels/mxfp_load_utils.py``)."""
    return _range("range", args, kwargs)


def __getattr__(name):
    """``nl.sum`` / ``nl.max`` / ``nl.min`` / ``nl.all`` / ``nl.any`` / ``nl.range`` (kept
    out of the module namespace so the builtins stay usable here)."""
    if name == "range":
        return _loop_range
    if name in _SHADOWING:
        from . import tiles
        return getattr(tiles, name)
    raise AttributeError(f"module 'nki.language' has no attribute {name!r}")


# ---- public names: dir(nl) lists the API only ---------------------------------------------
from .._public import make_dir as _make_dir, public_names as _public_names  # noqa: E402

__all__ = _public_names(globals(), exclude=("annotations", "AccessError", "ConstraintError"))
__dir__ = _make_dir(globals(), _SHADOWING)   # nl.sum, nl.max, ... via __getattr__
