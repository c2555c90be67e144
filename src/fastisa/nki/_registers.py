"""NKI virtual registers and the target queries (SDK 2.33), re-exported by ``nki.isa``.

``register_alloc`` / ``register_move`` / ``register_load`` / ``register_store`` and
:class:`VirtualRegister`; ``get_nc_version`` / ``get_nc_sub_version``; the
:class:`NkiInstruction` handle.  fastisa executes eagerly, so a register simply holds a
32-bit two's-complement integer that the next instruction can read: ``int(reg)``,
``bool(reg)`` (``while reg:``), ``range(reg)`` / ``nl.dynamic_range(reg)``, and dynamic
offsets -- ``t[reg]``, ``t[nl.ds(reg, n)]``, ``t.ap(pattern, offset=reg)`` -- all read the
current value (``__index__``).  Reading a register nothing was written to raises
ConstraintError (on hardware it holds whatever the physical register held).

Register instructions run on the engine sequencers, which have no cycle model here: they
record no engine cycles.

Source: aws-neuron-sdk ``nki/api/nki/isa/__init__.py`` (``VirtualRegister``,
``register_alloc``, ``register_move``, ``register_load``, ``register_store``,
``get_nc_version``, ``get_nc_sub_version``, ``NkiInstruction``).
"""

from __future__ import annotations

import numpy as np

from ..errors import ConstraintError
from .enums import nc_version
from .tensor import NkiTensor

import typing as _typing

if _typing.TYPE_CHECKING:
    from .._types import Int

__all__ = ["VirtualRegister", "NkiInstruction", "register_alloc", "register_move",
           "register_load", "register_store", "get_nc_version", "get_nc_sub_version"]

_TARGET_VERSION = {"trn1": nc_version.gen2, "trn2": nc_version.gen3, "trn3": nc_version.gen4}


def _wrap32(v: int) -> int:
    return ((int(v) + 2**31) % 2**32) - 2**31


class VirtualRegister:
    """A 32-bit engine-sequencer register (signed two's complement), see the module doc.

    ``reg.value`` is the integer it holds (None until written).  ``frozen`` registers
    (none are created by fastisa's instructions) reject writes.
    """

    __slots__ = ("_value", "frozen", "name")
    _count = 0

    def __init__(self, state=None, frozen=False):
        VirtualRegister._count += 1
        self.name = f"reg{VirtualRegister._count}"
        self._value = None if state is None else _wrap32(state)
        self.frozen = bool(frozen)

    @property
    def value(self):
        return self._value

    def _read(self) -> int:
        if self._value is None:
            raise ConstraintError(f"VirtualRegister: {self.name} is read before any value was "
                                  f"written to it (register_alloc(None) leaves it "
                                  f"uninitialised; use register_move / register_load first)")
        return self._value

    def _write(self, instr, v: int) -> None:
        if self.frozen:
            raise ConstraintError(f"{instr}: register {self.name} is frozen (read-only)")
        self._value = _wrap32(v)

    def __index__(self) -> int:
        return self._read()

    __int__ = __index__

    def __bool__(self) -> bool:
        return self._read() != 0

    def __eq__(self, other):
        return self._read() == int(other)

    def __hash__(self):
        return id(self)

    def __repr__(self) -> str:
        return f"VirtualRegister({self.name}={self._value!r})"


class NkiInstruction:
    """Handle to an issued instruction; ``depends_on`` adds scheduling edges.

    fastisa executes instructions eagerly in program order, so every dependency is
    already satisfied: ``depends_on`` only checks its arguments and returns self.
    """

    __slots__ = ("name",)

    def __init__(self, handle=None):
        self.name = handle

    def depends_on(self, *producers) -> "NkiInstruction":
        for p in producers:
            if not isinstance(p, NkiInstruction):
                raise ConstraintError(f"depends_on: producers must be NkiInstruction handles, "
                                      f"got {type(p).__name__}")
        return self


def _reg(instr, param, r) -> VirtualRegister:
    if not isinstance(r, VirtualRegister):
        raise ConstraintError(f"{instr}: {param} must be a VirtualRegister (from "
                              f"nisa.register_alloc), got {type(r).__name__}")
    return r


def _int32(instr, param, v) -> int:
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
        raise ConstraintError(f"{instr}: {param} must be an integer or a VirtualRegister, got "
                              f"{v!r}")
    v = int(v)
    if not -2**31 <= v < 2**32:
        raise ConstraintError(f"{instr}: {param} must fit in 32 bits, got {v}")
    return v


def register_alloc(x: Int | VirtualRegister | None = None) -> VirtualRegister:
    """A new register, uninitialised (``x=None``) or holding the 32-bit integer ``x``.

    Raises ConstraintError when x is not an integer or does not fit in 32 bits (values
    in [2**31, 2**32) are stored as their two's-complement int32).
    """
    if x is None:
        return VirtualRegister()
    if isinstance(x, VirtualRegister):
        return VirtualRegister(x._read())
    return VirtualRegister(_int32("register_alloc", "x", x))


def register_move(dst: VirtualRegister, src: VirtualRegister | Int) -> None:
    """``dst = src``: a 32-bit integer constant or another register's value."""
    instr = "register_move"
    _reg(instr, "dst", dst)
    v = _reg(instr, "src", src)._read() if isinstance(src, VirtualRegister) else \
        _int32(instr, "src", src)
    dst._write(instr, v)


def _scalar_tensor(instr, param, t) -> NkiTensor:
    if not isinstance(t, NkiTensor):
        raise ConstraintError(f"{instr}: {param} must be an NkiTensor, got {type(t).__name__}")
    if t.size != 1:
        raise ConstraintError(f"{instr}: {param} must hold exactly one element (shape [1] or "
                              f"[1, 1]), got shape {t.shape}")
    if t.buffer.name == "psum":
        raise ConstraintError(f"{instr}: {param} must be in hbm or sbuf, got psum")
    if t.dtype.kind == "packed" or t.itemsize > 4:
        raise ConstraintError(f"{instr}: {param} must be a scalar of at most 32 bits, got "
                              f"{t.dtype.name}")
    return t


def register_load(dst: VirtualRegister, src: NkiTensor) -> None:
    """``dst = src[0]``: load one scalar (up to 32 bits) from HBM / SBUF into a register.

    Integer dtypes load their value (sign- or zero-extended); float and bool_ dtypes load
    their bit pattern zero-extended to 32 bits (a raw 32-bit load; fastisa's reading).
    """
    instr = "register_load"
    _reg(instr, "dst", dst)
    t = _scalar_tensor(instr, "src", src)
    if t.dtype.kind == "int":
        v = int(t.data.reshape(-1)[0])
    else:
        v = int(t.data.reshape(-1).view({1: np.uint8, 2: np.uint16, 4: np.uint32}[t.itemsize])[0])
    dst._write(instr, v)


def register_store(dst: NkiTensor, src: VirtualRegister) -> None:
    """``dst[0] = src``: the register's low ``8 * itemsize`` bits into a one-element tensor."""
    instr = "register_store"
    t = _scalar_tensor(instr, "dst", dst)
    v = _reg(instr, "src", src)._read()
    bits = {1: np.uint8, 2: np.uint16, 4: np.uint32}[t.itemsize]
    t.data.reshape(-1).view(bits)[0] = v & ((1 << (8 * t.itemsize)) - 1)


def get_nc_version() -> nc_version:
    """The ``nc_version`` of the current target: trn1 -> gen2, trn2 -> gen3, trn3 -> gen4."""
    from fastisa.nki import language
    return _TARGET_VERSION[language.target()]


def get_nc_sub_version() -> int:
    """Silicon revision within the generation: fastisa models the first (0)."""
    return 0
