"""TRANDOM: counter-based random numbers (pto-isa docs/isa/TRANDOM.md: "128-bit state (4 x
32-bit counters), 64-bit key (2 x 32-bit words)", ``Rounds`` 7 or 10; the bits are those of
the CPU simulator, include/pto/cpu/TRandom.hpp, hw-native-sys/pto-isa, which the docs do not
spell out -- a Philox-4x32 round function).

One round maps counter ``(c0, c1, c2, c3)`` and key ``(k0, k1)`` to::

    hi0:lo0 = c0 * 0xD2511F53      hi1:lo1 = c2 * 0xCD9E8D57     (32 x 32 -> 64 bits)
    (hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0),   k0 += 0x9E3779B9, k1 += 0xBB67AE85

Element ``(r, col)`` of the valid region, with ``E = 256 / sizeof(T) = 64`` lanes per repeat
and 4 repeats per block: ``loop = col // (4E)``, ``rep = (col % (4E)) // E``, ``lane = col % E``;
its value is word ``rep`` of ``Rounds`` rounds applied to the 128-bit counter ``counter +
(r * L + loop) * (RowStride / 4) + lane``, ``L = ceil(validCol / (4E))`` (the counter advances
by ``RowStride / 4`` per block of a row, RowStride = the tile's columns).
"""

from __future__ import annotations

import numpy as np

from ..errors import ConstraintError
from ._tile import BLayout, Tile

__all__ = ["TRANDOM", "TRandomKey", "TRandomCounter"]

_M0, _M1 = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
_KA0, _KA1 = 0x9E3779B9, 0xBB67AE85
_MASK = np.uint64(0xFFFFFFFF)


def TRandomKey(k0: int, k1: int) -> tuple:  # noqa: N802
    """``TRandomKey = {k0, k1}`` (two uint32 words)."""
    return (int(k0) & 0xFFFFFFFF, int(k1) & 0xFFFFFFFF)


def TRandomCounter(c0: int, c1: int, c2: int, c3: int) -> tuple:  # noqa: N802
    """``TRandomCounter = {c0, c1, c2, c3}`` (word 0 least significant)."""
    return tuple(int(c) & 0xFFFFFFFF for c in (c0, c1, c2, c3))


def _words(instr, name, v, n):
    try:
        vals = [int(x) for x in v]
    except TypeError:
        raise ConstraintError(f"{instr}: {name} must be a sequence of {n} uint32 words, got "
                              f"{v!r}") from None
    if len(vals) != n or any(not 0 <= x < 2**32 for x in vals):
        raise ConstraintError(f"{instr}: {name} must be {n} words in [0, 2**32), got {vals}")
    return vals


def philox_rounds(counter: np.ndarray, key, rounds: int) -> np.ndarray:
    """``rounds`` rounds over counters ``[n, 4]`` (uint32) with key ``(k0, k1)``."""
    c = counter.astype(np.uint64)
    k0, k1 = int(key[0]), int(key[1])
    for _ in range(rounds):
        m0 = c[:, 0] * _M0
        m1 = c[:, 2] * _M1
        n0 = (m1 >> np.uint64(32)) ^ c[:, 1] ^ np.uint64(k0)
        n2 = (m0 >> np.uint64(32)) ^ c[:, 3] ^ np.uint64(k1)
        c = np.stack([n0, m1 & _MASK, n2, m0 & _MASK], axis=1)
        k0 = (k0 + _KA0) & 0xFFFFFFFF
        k1 = (k1 + _KA1) & 0xFFFFFFFF
    return c.astype(np.uint32)


def TRANDOM(dst: Tile, key, counter, rounds: int = 10) -> None:  # noqa: N802
    """``dst[r, col] = Philox(counter + offset(r, col), key)`` over dst's valid region (module
    doc for the counter layout).  ``dst``: a row-major int32/uint32 tile; ``key``: two uint32
    words; ``counter``: four (word 0 least significant); ``rounds``: 7 or 10.  ``key`` and
    ``counter`` are not changed.  Raises ConstraintError (dtype, layout, rounds, words)."""
    if not isinstance(dst, Tile):
        raise ConstraintError(f"TRANDOM: dst must be a Tile, got {type(dst).__name__}")
    if dst.dtype.name not in ("int32", "uint32"):
        raise ConstraintError(f"TRANDOM: dst dtype must be int32 or uint32, got {dst.dtype.name}")
    if dst.blayout != BLayout.RowMajor:
        raise ConstraintError(f"TRANDOM: dst must be row-major, got {dst.blayout.name}")
    if rounds not in (7, 10):
        raise ConstraintError(f"TRANDOM: rounds must be 7 or 10, got {rounds!r}")
    if key is None or counter is None:
        raise ConstraintError("TRANDOM: key and counter must be provided")
    key = _words("TRANDOM", "key", key, 2)
    counter = _words("TRANDOM", "counter", counter, 4)
    vr, vc = dst.valid_row, dst.valid_col
    if vr == 0 or vc == 0:
        return
    lanes = 256 // 4
    block = 4 * lanes
    loops = -(-vc // block)
    step = dst.cols // 4
    base = counter[0] | counter[1] << 32 | counter[2] << 64 | counter[3] << 96
    # the 128-bit counter of lane 0 of each (row, block): base + (r*loops + loop) * step
    nb = vr * loops
    starts = _starts(base, step, nb)
    # + lane, with the carry through the four words
    lane = np.arange(lanes, dtype=np.uint64)
    ctr = np.repeat(starts[:, None, :], lanes, axis=1).reshape(-1, 4)
    carry = np.tile(lane, nb)
    for w in range(4):
        s = ctr[:, w] + carry
        ctr[:, w] = s & _MASK
        carry = s >> np.uint64(32)
    out = philox_rounds(ctr.astype(np.uint32), key, rounds).reshape(vr, loops, lanes, 4)
    # column = loop*block + rep*lanes + lane
    cols = out.transpose(0, 1, 3, 2).reshape(vr, loops * block)[:, :vc]
    dst.data[:vr, :vc] = cols.view(dst.data.dtype) if dst.data.dtype != np.uint32 else cols


def _starts(base, step, nb):
    """(Many blocks.)  The 128-bit ``base + i*step`` split into words, vectorised."""
    i = np.arange(nb, dtype=np.uint64)
    words = [(base >> (32 * w)) & 0xFFFFFFFF for w in range(4)]
    s0 = i * np.uint64(step) + np.uint64(words[0])       # < 2**64 for any tile size
    out = np.empty((nb, 4), np.uint64)
    out[:, 0] = s0 & _MASK
    carry = s0 >> np.uint64(32)
    for w in range(1, 4):
        s = carry + np.uint64(words[w])
        out[:, w] = s & _MASK
        carry = s >> np.uint64(32)
    return out
