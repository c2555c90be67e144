"""Cross-core pipes: ``TPipe`` FIFOs between the cube core (AIC) and the vector cores (AIV),
with ``TPUSH`` / ``TPOP`` / ``TFREE`` (pto-isa docs/isa/TPUSH.md, TPOP.md, TFREE.md;
include/pto/common/fifo.hpp for the enums; where the docs are silent, the CPU simulator
include/pto/cpu/TPush.hpp, TPop.hpp, hw-native-sys/pto-isa).

A pipe has ``slot_num`` slots in one ring (both directions of a ``DIR_BOTH`` pipe share
it, as in the CPU simulator: a producer waits for the slot at the ring's producer cursor, a
consumer takes the next slot of its direction from its own cursor).  ``TPUSH`` waits for a free slot, stores a copy of the
producer tile's valid region and marks it ready; ``TPOP`` waits for the oldest ready slot,
loads it into the consumer tile's valid region.  The slot is free again once every
consumer lane took its part: at the TPOP on A2/A3 (docs/isa/TFREE.md: "TPOP already
performs the free-space notification", ``TFREE(pipe)`` is a no-op there), at each lane's
``TFREE`` on A5 (``pto.target("A5")``; the docs: the A5 TFREE "performs the actual
free-space notification"; the CPU simulator frees at TFREE too).
Direction: a Mat/Acc producer (or a Vec consumer) is cube -> vector (``DIR_C2V``), a Vec
producer (or a Mat consumer) vector -> cube (``DIR_V2C``); a ``DIR_BOTH`` pipe has one FIFO
per direction.  Split (``TileSplitAxis``), with the vector subblocks of
``pto.launch(..., subblocks=2)``:

* ``TILE_NO_SPLIT``: vector subblock 0 receives the whole tile (C2V); subblock 1 gets a
  zero-filled tile and pops nothing (the CPU simulator's inactive lane), unless the pipe
  was made with ``no_split=True`` (``TPipe<..., IsNoSplit = true>``): then both receive it;
  on V2C one subblock's push is one slot;
* ``TILE_UP_DOWN`` / ``TILE_LEFT_RIGHT``: subblock k receives row (column) half k of a
  cube tile (the half the *pop's* split names; the slot is released when both subblocks
  took theirs); on V2C each subblock pushes its half and the cube pops the two halves
  joined (``_ODD`` variants: subblock 0 gets the larger half).

Waits let the other cores run (:mod:`fastisa.pto._cores`); a wait no core can end raises
ConstraintError ("deadlock").  The same FIFOs carry PTO-AS ``pto.tpush_to_aiv`` & co.
"""

from __future__ import annotations

import enum
from collections import deque

import numpy as np

from ..errors import ConstraintError
from . import _cores
from ._tile import Tile, TileType

__all__ = ["Direction", "TileSplitAxis", "TPipe", "TPUSH", "TPOP", "TFREE", "QuantMode"]
# push / pop (data level) are used by fastisa.pto._asm_generic too


class Direction(enum.IntEnum):
    """include/pto/common/fifo.hpp ``Direction``."""
    DIR_C2V = 1
    DIR_V2C = 2
    DIR_BOTH = 3
    DIR_V2C_CTRL = 4


class TileSplitAxis(enum.IntEnum):
    """include/pto/common/fifo.hpp ``TileSplitAxis``."""
    TILE_NO_SPLIT = 0
    TILE_UP_DOWN = 1
    TILE_LEFT_RIGHT = 2
    TILE_UP_DOWN_ODD = 3
    TILE_LEFT_RIGHT_ODD = 4


def _split_parts(data: np.ndarray, split: TileSplitAxis, n: int):
    if split == TileSplitAxis.TILE_NO_SPLIT or n == 1:
        return [data] * max(n, 1)
    axis = 0 if split in (TileSplitAxis.TILE_UP_DOWN, TileSplitAxis.TILE_UP_DOWN_ODD) else 1
    size = data.shape[axis]
    odd = split in (TileSplitAxis.TILE_UP_DOWN_ODD, TileSplitAxis.TILE_LEFT_RIGHT_ODD)
    if odd != (size % 2 == 1):
        raise ConstraintError(f"TPUSH: {split.name} needs an {'odd' if odd else 'even'} "
                              f"{'row' if axis == 0 else 'column'} count, got {size}")
    h = (size + 1) // 2
    return [data[:h] if axis == 0 else data[:, :h], data[h:] if axis == 0 else data[:, h:]]


class _Ring:
    """The pipe's ``slot_num`` slots, shared by both directions of a DIR_BOTH pipe (as the
    CPU simulator's one ring per pipe): producers fill the slot at the producer cursor once
    it is free; a consumer takes the next slot of its direction from its own cursor."""

    def __init__(self, depth):
        self.depth = depth
        self.slots = [None] * depth   # None (free) or {"dir", "data", "popped", "freed", "need"}
        self.prod = 0
        self.cons = {}                # (direction, lane) -> cursor
        self.partial = {}             # V2C split: lane -> halves pushed, waiting for the pair

    def used(self):
        return sum(s is not None for s in self.slots)

    def put(self, direction, data, instr):
        _cores.wait_until(lambda: self.slots[self.prod] is None, "a free pipe slot", instr)
        self.slots[self.prod] = {"dir": direction, "data": data, "popped": set(),
                                 "freed": set(), "need": {0}}
        self.prod = (self.prod + 1) % self.depth
        _cores.notify()

    def find(self, direction, key):
        start = self.cons.get((direction, key), 0)
        for k in range(self.depth):
            i = (start + k) % self.depth
            s = self.slots[i]
            if s is not None and s["dir"] == direction and key not in s["popped"]:
                return i
        return None


class TPipe:
    """``TPipe<FlagID, DirType, SlotSize, SlotNum, LocalSlotNum = 2>(fifo_mem, ...)``.

    ``direction``: a :class:`Direction`; ``slot_size``: bytes per slot (a pushed tile's
    valid region must fit); ``slot_num`` >= 1 slots.  ``flag_id`` and ``local_slot_num``
    are accepted (they select hardware flags and local buffers).  Raises ConstraintError."""

    def __init__(self, flag_id: int = 0, direction: Direction | int = Direction.DIR_C2V,
                 slot_size: int = 0, slot_num: int = 2, local_slot_num: int = 2,
                 no_split: bool = False) -> None:
        try:
            self.direction = Direction(int(direction))
        except ValueError:
            raise ConstraintError(f"TPipe: direction must be a Direction, got "
                                  f"{direction!r}") from None
        if int(slot_num) < 1:
            raise ConstraintError(f"TPipe: slot_num must be >= 1, got {slot_num}")
        if int(slot_size) < 0:
            raise ConstraintError(f"TPipe: slot_size must be >= 0 bytes, got {slot_size}")
        self.flag_id = int(flag_id)
        self.slot_size = int(slot_size)
        self.slot_num = int(slot_num)
        self.local_slot_num = int(local_slot_num)
        self.no_split = bool(no_split)
        self._ring = _Ring(self.slot_num)
        self._pending = {}            # A5: core -> slots popped, not yet TFREEd (in order)

    @property
    def occupied(self) -> int:
        """Slots taken: pushed and not yet released by every consumer lane (both directions)."""
        return self._ring.used()

    def _dir(self, instr, want):
        allowed = {Direction.DIR_C2V: ("c2v",), Direction.DIR_V2C: ("v2c",),
                   Direction.DIR_BOTH: ("c2v", "v2c"), Direction.DIR_V2C_CTRL: ("v2c",)}
        if want not in allowed[self.direction]:
            raise ConstraintError(f"{instr}: a {'cube -> vector' if want == 'c2v' else 'vector -> cube'}"
                                  f" transfer on a {self.direction.name} pipe")
        return self._ring


def _one_way(pipe):
    return {Direction.DIR_C2V: "c2v", Direction.DIR_V2C: "v2c",
            Direction.DIR_V2C_CTRL: "v2c"}.get(pipe.direction)


def _lanes():
    """(this core's vector lane, number of vector lanes)."""
    n = _cores.get_subblock_num()
    return _cores.get_subblock_idx(), n


def _args(instr, a, b):
    if isinstance(a, TPipe) and isinstance(b, Tile):
        return a, b
    if isinstance(b, TPipe) and isinstance(a, Tile):
        return b, a
    raise ConstraintError(f"{instr}: expected (pipe, tile) or (tile, pipe), got "
                          f"({type(a).__name__}, {type(b).__name__})")


def _split(instr, split):
    try:
        return TileSplitAxis(int(split))
    except (ValueError, TypeError):
        raise ConstraintError(f"{instr}: split must be a TileSplitAxis, got {split!r}") from None


def push(pipe: TPipe, data: np.ndarray, want: str, split: TileSplitAxis,
         instr: str = "TPUSH") -> None:
    """Push ``data`` (a 2-D array, copied) in direction ``want`` ("c2v" / "v2c") from the
    running core; the data-level TPUSH (PTO-AS's ``pto.tpush_to_aiv`` & co use it too)."""
    ring = pipe._dir(instr, want)
    data = np.array(data, copy=True)
    lane, nlanes = _lanes()
    if want == "c2v":
        if split != TileSplitAxis.TILE_NO_SPLIT:   # the split's size rule; a slot holds
            _fit(pipe, _split_parts(data, split, 2)[0], instr)    # one consumer's half
        else:
            _fit(pipe, data, instr)
        ring.put(want, data, instr)
        return
    if split == TileSplitAxis.TILE_NO_SPLIT or nlanes == 1:
        if split == TileSplitAxis.TILE_NO_SPLIT and nlanes >= 2 and lane > 0:
            return                     # the inactive lane of a no-split pipe: no effect
        _fit(pipe, data, instr)
        ring.put(want, data, instr)
        return
    axis = 0 if split in (TileSplitAxis.TILE_UP_DOWN, TileSplitAxis.TILE_UP_DOWN_ODD) else 1
    other = ring.partial.get(1 - lane)
    if other:
        halves = [other.popleft(), data] if lane == 1 else [data, other.popleft()]
        if halves[0].shape[1 - axis] != halves[1].shape[1 - axis]:
            raise ConstraintError(f"{instr}: the two lanes' halves {halves[0].shape} and "
                                  f"{halves[1].shape} do not join along the split")
        joined = np.concatenate(halves, axis=axis)
        _fit(pipe, joined, instr)
        ring.put(want, joined, instr)
    else:
        ring.partial.setdefault(lane, deque()).append(data)   # waits for the other half


def _fit(pipe, data, instr):
    if pipe.slot_size and data.nbytes > pipe.slot_size:
        raise ConstraintError(f"{instr}: the tile's valid region ({data.nbytes} bytes) does "
                              f"not fit a {pipe.slot_size}-byte slot")


def pop(pipe: TPipe, want: str, split: TileSplitAxis, instr: str = "TPOP"):
    """The data-level TPOP: the running core's part of the next slot in direction ``want``
    (waiting for it), or None for a vector lane that receives zeros (the second lane of a
    no-split C2V pipe: it takes part in the protocol only on a ``no_split`` pipe, as the
    CPU simulator's inactive lane).  A C2V consumer takes the half its own ``split`` names
    (the CPU simulator offsets the consumer by its split and subblock); the slot is released
    once every consumer lane took (A2/A3) or TFREEd (A5) its part."""
    ring = pipe._dir(instr, want)
    lane, nlanes = _lanes()
    key = lane if want == "c2v" else 0
    nosplit = split == TileSplitAxis.TILE_NO_SPLIT
    if want == "c2v" and nosplit and key > 0 and not pipe.no_split:
        return None
    _cores.wait_until(lambda: ring.find(want, key) is not None, "data in the pipe", instr)
    i = ring.find(want, key)
    ring.cons[(want, key)] = (i + 1) % ring.depth
    slot = ring.slots[i]
    data = slot["data"]
    if want == "c2v" and not nosplit:
        data = _split_parts(data, split, 2)[min(key, 1)]
    elif want == "c2v" and key > 0:
        data = None                    # a no-split pipe's second lane: zeros
    slot["popped"].add(key)
    both = want == "c2v" and nlanes >= 2 and (not nosplit or pipe.no_split)
    slot["need"] = set(range(nlanes)) if both else {0}
    if _free_at_tfree():               # A5: the slot stays taken until this lane's TFREE
        pipe._pending.setdefault(_identity(), deque()).append((ring, i, slot, key))
    else:
        _release(ring, i, slot, key)
    return data


def _free_at_tfree() -> bool:
    from ._tile import _State
    return _State.target == "A5"


def _identity():
    """The running core as TFREE sees it (its launch index and its execution context)."""
    return (_cores.current()[1], _cores._role())


def _release(ring, i, slot, key):
    slot["freed"].add(key)
    if slot["need"] <= slot["freed"] and ring.slots[i] is slot:
        ring.slots[i] = None
        _cores.notify()


class QuantMode(enum.IntEnum):
    """The fixpipe ``QuantPre`` modes a ``TPUSH`` of an Acc tile applies (pto-isa
    include/pto/cpu/common.hpp ``QuantMode_t``; the values are its)."""
    NoQuant = 0
    F322F16 = 1
    F322BF16 = 16
    DEQF16 = 5
    VDEQF16 = 4
    QF322F16_PRE = 32
    QF322BF16_PRE = 34
    QF322B8_PRE = 24
    VQF322B8_PRE = 23


_F16_MAX = np.float32(65504.0)
_QUANT_DST = {QuantMode.F322F16: np.float16, QuantMode.DEQF16: np.float16,
              QuantMode.VDEQF16: np.float16, QuantMode.QF322F16_PRE: np.float16}


def _deq_scale(words: np.ndarray) -> np.ndarray:
    """The per-column scale of a vector quant word: bits 13..31 as sign, 8-bit exponent
    (bias 127) and 10-bit mantissa (include/pto/cpu/common.hpp ``extract_m1_from_quant``)."""
    w = words.astype(np.uint64)
    m1 = (w >> np.uint64(13)) & np.uint64(0x7FFFF)
    sign = ((m1 >> np.uint64(18)) & np.uint64(1)).astype(np.int64)
    exp = ((m1 >> np.uint64(10)) & np.uint64(0xFF)).astype(np.int64)
    man = (m1 & np.uint64(0x3FF)).astype(np.int64)
    val = (1.0 + man / 1024.0) * np.exp2(exp.astype(np.float64) - 127.0)
    val = np.where(sign == 1, -val, val)
    return np.where((exp == 0) & (man == 0), 0.0, val).astype(np.float32)


def _b8(instr, x, quant, relu, scalar_word, words, dst_dtype):
    """QF322B8_PRE / VQF322B8_PRE: ``nearbyint(x * scale + offset)`` clamped to [-128, 127]
    (the word's sign bit 46 set) or [0, 255], ReLU, then the C++ float -> int8/uint8 cast
    (for uint8 ranges into int8, x86's conversion through int32 and truncation); scale and
    offset (bits 37..45) from the 64-bit word: the low 32 bits as a float (scalar), or the
    19-bit s|e8|m10 field (vector, per column)."""
    C = x.shape[1]
    if quant == QuantMode.VQF322B8_PRE:
        if words is None:
            raise ConstraintError(f"{instr}: VQF322B8_PRE needs quant_vector (one word per column)")
        w = np.asarray(words, np.uint64).reshape(-1)[:C]
        scale = _deq_scale(w)[None, :]
    else:
        w = np.full(C, int(scalar_word or 0) & 0xFFFFFFFFFFFFFFFF, np.uint64)
        scale = np.array([int(w[0]) & 0xFFFFFFFF], np.uint32).view(np.float32)[0]
    off = ((w >> np.uint64(37)) & np.uint64(0x1FF)).astype(np.float32)[None, :]
    signed = ((w >> np.uint64(46)) & np.uint64(1)).astype(bool)[None, :]
    with np.errstate(over="ignore", invalid="ignore"):
        y = np.rint((x * scale).astype(np.float32) + off).astype(np.float32)
        y = np.where(signed, np.clip(y, -128, 127), np.clip(y, 0, 255)).astype(np.float32)
        if relu:
            y = np.where(y > 0, y, np.float32(0))
    dt = np.dtype(dst_dtype or np.int8)
    if dt.name not in ("int8", "uint8"):
        raise ConstraintError(f"{instr}: {quant.name} converts to int8/uint8, got {dt.name}")
    return y.astype(np.int32).astype(np.uint8).view(np.int8).astype(dt) if dt.name == "int8" \
        else y.astype(np.int32).astype(np.uint8)


def fixpipe(instr, data, quant, relu, quant_scalar, quant_vector, b8_dtype=None):
    """The fixpipe conversion of an Acc tile on its way out (CPU simulator
    ``quantize_element`` / ``ConvertStoreValue``, include/pto/cpu/common.hpp: ``x * scale``
    in float32, the mode's clamp, then ReLU ``x > 0 ? x : 0``, then the C++ cast, round to
    nearest even)."""
    try:
        quant = QuantMode(int(quant))
    except (ValueError, TypeError):
        raise ConstraintError(f"{instr}: quant must be a QuantMode, got {quant!r}") from None
    if quant == QuantMode.NoQuant:
        if not relu:
            return data
        out = np.where(data > 0, data, 0).astype(data.dtype)
        return out
    if data.dtype.name not in ("float32", "int32"):
        raise ConstraintError(f"{instr}: fixpipe quantisation needs a float32 or int32 Acc tile, "
                              f"got {data.dtype.name}")
    if quant in (QuantMode.DEQF16, QuantMode.VDEQF16) and data.dtype.name != "int32":
        raise ConstraintError(f"{instr}: {quant.name} converts int32, got {data.dtype.name}")
    if quant not in (QuantMode.DEQF16, QuantMode.VDEQF16) and data.dtype.name != "float32":
        raise ConstraintError(f"{instr}: {quant.name} converts float32, got {data.dtype.name}")
    x = data.astype(np.float32)
    if quant in (QuantMode.QF322B8_PRE, QuantMode.VQF322B8_PRE):
        return _b8(instr, x, quant, relu, quant_scalar, quant_vector, b8_dtype)
    if quant == QuantMode.VDEQF16:
        if quant_vector is None:
            raise ConstraintError(f"{instr}: VDEQF16 needs quant_vector (one 64-bit quant word "
                                  f"per column)")
        qv = np.asarray(quant_vector).reshape(-1)
        if qv.size < x.shape[1]:
            raise ConstraintError(f"{instr}: quant_vector has {qv.size} words for "
                                  f"{x.shape[1]} columns")
        scale = _deq_scale(qv[:x.shape[1]].view(np.uint64) if qv.dtype.itemsize == 8
                           else qv[:x.shape[1]].astype(np.uint64))[None, :]
    else:
        scale = np.float32(1.0 if quant_scalar is None else quant_scalar)
    with np.errstate(over="ignore", invalid="ignore"):
        y = (x * scale).astype(np.float32)
        if quant in (QuantMode.DEQF16, QuantMode.VDEQF16, QuantMode.QF322F16_PRE):
            y = np.where(np.isnan(y), y, np.clip(y, -_F16_MAX, _F16_MAX)) \
                if quant != QuantMode.QF322F16_PRE else \
                np.where(np.isfinite(y), np.clip(y, -_F16_MAX, _F16_MAX), y)
        if relu:
            y = np.where(y > 0, y, np.float32(0))
        if quant in _QUANT_DST:
            return y.astype(np.float16)
        import ml_dtypes
        return y.astype(ml_dtypes.bfloat16)


def TPUSH(a, b, split: TileSplitAxis | int = TileSplitAxis.TILE_NO_SPLIT, *,  # noqa: N802
          quant: QuantMode | int = QuantMode.NoQuant, relu: bool = False,
          quant_scalar: float | None = None, quant_vector=None) -> None:
    """Push ``tile``'s valid region into ``pipe`` (``TPUSH(pipe, tile)`` or the simplified
    ``TPUSH(tile, pipe)``): wait for a free slot, store, mark ready (module doc).  ``tile``:
    an Acc/Mat tile (cube -> vector) or a Vec tile (vector -> cube).  An Acc tile may pass
    the fixpipe on the way (the ``TConfig`` overload, ``FixpipeParams<..., QuantPre,
    ReluMode>``): ``quant`` (F322F16 / F322BF16 / QF322*_PRE: float32 -> float16/bfloat16
    times ``quant_scalar``; DEQF16: int32 times ``quant_scalar`` -> float16; VDEQF16: int32
    times each column's scale from ``quant_vector``'s 64-bit words), ``relu`` (NormalRelu);
    the semantics are the CPU simulator's (docs/isa/TPUSH.md defers QuantPre to CANN).
    Raises ConstraintError (tile type, direction, slot too small, an odd/even split of the
    wrong size, quant rules, deadlock)."""
    pipe, tile = _args("TPUSH", a, b)
    split = _split("TPUSH", split)
    if tile.loc not in (TileType.Acc, TileType.Mat, TileType.Vec):
        raise ConstraintError(f"TPUSH: the producer tile must be Acc, Mat or Vec, got "
                              f"{tile.loc.name}")
    # a one-way pipe fixes the direction (the CPU simulator pushes a Vec tile into a C2V
    # pipe too); on DIR_BOTH the tile says which way: Acc/Mat from the cube, Vec from a
    # vector core
    want = _one_way(pipe) or ("v2c" if tile.loc == TileType.Vec else "c2v")
    data = tile.valid
    if int(quant) != QuantMode.NoQuant or relu:
        if tile.loc != TileType.Acc:
            raise ConstraintError(f"TPUSH: quant / relu are fixpipe options of an Acc tile, "
                                  f"got a {tile.loc.name} tile")
        # an unset quant register (0) reads as 1.0 (CPU simulator InitializeQuantScalars)
        data = fixpipe("TPUSH", np.asarray(data), quant, relu, quant_scalar or None,
                       quant_vector)
    push(pipe, data, want, split)


def TPOP(a, b, split: TileSplitAxis | int = TileSplitAxis.TILE_NO_SPLIT) -> None:  # noqa: N802
    """Pop the oldest ready slot of ``pipe`` into ``tile``'s valid region (``TPOP(pipe,
    tile)`` or ``TPOP(tile, pipe)``), waiting for a producer; a DYNAMIC valid shape is set
    to the popped data's.  ``tile``: Vec (cube -> vector) or Mat (vector -> cube).  Raises
    ConstraintError (tile type, dtype or shape mismatch, deadlock)."""
    pipe, tile = _args("TPOP", a, b)
    split = _split("TPOP", split)
    if tile.loc not in (TileType.Vec, TileType.Mat):
        raise ConstraintError(f"TPOP: the consumer tile must be Vec or Mat, got {tile.loc.name}")
    want = _one_way(pipe) or ("c2v" if tile.loc == TileType.Vec else "v2c")
    data = pop(pipe, want, split)
    if data is None:
        tile.data[...] = 0             # the inactive lane: zeros, nothing popped
        return
    _load(tile, data)


def _load(tile, data):
    if data.dtype != tile.data.dtype:
        raise ConstraintError(f"TPOP: the popped data is {data.dtype}, the tile "
                              f"{tile.dtype.name}: the element types must match (a fixpipe "
                              f"conversion is a TPUSH option fastisa does not model)")
    r, c = data.shape
    if (tile.valid_row, tile.valid_col) != (r, c):
        dr, dc = tile.dynamic_valid if hasattr(tile, "dynamic_valid") else (tile._dyn_row,
                                                                           tile._dyn_col)
        if (tile.valid_row != r and not dr) or (tile.valid_col != c and not dc) \
                or r > tile.rows or c > tile.cols:
            raise ConstraintError(f"TPOP: popped {r}x{c} data but the tile's valid shape is "
                                  f"{tile.valid_row}x{tile.valid_col} (static)")
        if tile.valid_row != r:
            tile.set_valid_row(r)
        if tile.valid_col != c:
            tile.set_valid_col(c)
    tile.valid[...] = data


def TFREE(pipe: TPipe, split: TileSplitAxis | int = TileSplitAxis.TILE_NO_SPLIT) -> None:  # noqa: N802
    """Release the oldest slot this core popped and has not released.  A2/A3: no effect,
    TPOP already released it (docs/isa/TFREE.md: the A2A3 overload is empty).  A5 (``with
    pto.target("A5")``): the slot stays occupied from TPOP to this TFREE, as the docs say
    of include/pto/npu/a5/TPop.hpp and as the CPU simulator does; a TFREE with nothing
    popped does nothing.  Raises ConstraintError for a non-pipe or a bad split."""
    if not isinstance(pipe, TPipe):
        raise ConstraintError(f"TFREE: pipe must be a TPipe, got {type(pipe).__name__}")
    _split("TFREE", split)
    q = pipe._pending.get(_identity())
    if q:
        ring, i, slot, key = q.popleft()
        _release(ring, i, slot, key)
