"""Explicit SBUF / PSUM allocators of NKI Beta 1 (``nki.compiler.sbuf.alloc`` /
``mod_alloc``, ``nki.compiler.psum.alloc`` / ``mod_alloc``) built on fastisa's address
placement (``nl.ndarray(..., address=)``).

An allocator maps each block index of a tensor ``nl.ndarray((B0, ..., nl.par_dim(P), F...),
buffer=allocator)`` to an on-chip address; every block is then placed at that address in the
instance's memory, so blocks and tensors whose addresses overlap share bytes exactly as on
hardware.

Modulo allocation (``mod_alloc``): block ``idx`` of a tensor whose tile (one block) has
``pdim_size`` partitions and ``fdim_size`` bytes per partition is at

- partition ``base_partition + lin(idx % num_par_tiles) * pdim_size``,
- byte ``base_addr + lin(idx % num_free_tiles) * fdim_size``,
- PSUM bank ``base_bank + lin(idx % num_bank_tiles)`` (byte offsets are within the bank),

where ``lin`` linearises row-major over the tiles shape and an omitted (empty) tiles shape is
all ones (every block at the base).  A custom allocator ``alloc(func)`` calls
``func(idx, pdim_size, fdim_size)`` and takes ``(partition, byte)`` for SBUF and
``(bank, partition, byte)`` for PSUM.

Sources: aws-neuron/aws-neuron-sdk ``nki/test/test_sbuf_modulo_alloc.py`` and
``nki/test/test_psum_modulo_alloc.py`` (the allocator functions they document between
``NKI_EXAMPLE_0_BEGIN``/``END``), ``nki/migration/index.rst`` ("uses block dimension and mod
allocator": block ``i`` at ``base + (i % n) * n_k * 2`` bytes for bf16).  A PSUM bank is 2 KiB
per partition and a tile must not cross a bank ("partial bank allocation is not allowed").

Limitation: fastisa stores a block tensor as one strided view, so the block-to-address map
must be affine in each block index (a modulo count of 1 or at least the block count, the
patterns kernels use); other maps raise NotImplementedError.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from ..errors import AccessError, ConstraintError

PSUM_BANK_BYTES = 2048


def _int(instr, param, v):
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise ConstraintError(f"{instr}: {param} must be an integer, got {v!r}")
    return int(v)


def _tiles(instr, param, v):
    if v is None:
        return ()
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        v = (v,)
    if not isinstance(v, (tuple, list)):
        raise ConstraintError(f"{instr}: {param} must be a tuple of positive integers, "
                              f"got {v!r}")
    out = tuple(_int(instr, param, x) for x in v)
    if any(x <= 0 for x in out):
        raise ConstraintError(f"{instr}: {param} must be a tuple of positive integers, "
                              f"got {v!r}")
    return out


def _modulo(base, tiles, scale, idx):
    shape = tiles if tiles else (1,) * len(idx)
    lin = 0
    for i, s in zip(idx, shape):
        lin = lin * s + (i % s)
    for s in shape[len(idx):]:     # a tiles shape longer than the block index: zeros
        lin = lin * s
    return base + lin * scale


class Allocation:
    """``buffer=`` value of an explicitly allocated tensor: ``buffer`` (nl.sbuf / nl.psum)
    and ``func(idx, pdim_size, fdim_size)`` -> ``(partition, byte)`` (SBUF) or
    ``(bank, partition, byte)`` (PSUM)."""

    __slots__ = ("buffer", "func", "instr")

    def __init__(self, buffer, func, instr):
        self.buffer = buffer
        self.func = func
        self.instr = instr

    def __repr__(self):
        return f"{self.instr}(...)"


def alloc(buffer, func) -> Allocation:
    instr = f"{buffer.name}.alloc"
    if not callable(func):
        raise ConstraintError(f"{instr}: func must be a callable (idx, pdim_size, fdim_size) "
                              f"-> address, got {func!r}")
    return Allocation(buffer, func, instr)


def sbuf_mod_alloc(buffer, base_addr=0, *, base_partition=0, num_par_tiles=(),
                   num_free_tiles=()) -> Allocation:
    instr = "sbuf.mod_alloc"
    base_addr = _int(instr, "base_addr", base_addr)
    base_partition = _int(instr, "base_partition", base_partition)
    npar = _tiles(instr, "num_par_tiles", num_par_tiles)
    nfree = _tiles(instr, "num_free_tiles", num_free_tiles)
    for what, v in (("base_addr", base_addr), ("base_partition", base_partition)):
        if v < 0:
            raise ConstraintError(f"{instr}: {what} must be >= 0, got {v}")

    def func(idx, pdim_size, fdim_size):
        return (_modulo(base_partition, npar, pdim_size, idx),
                _modulo(base_addr, nfree, fdim_size, idx))
    return Allocation(buffer, func, instr)


def psum_mod_alloc(buffer, base_addr=0, *, base_bank=0, num_bank_tiles=(), base_partition=0,
                   num_par_tiles=(), num_free_tiles=()) -> Allocation:
    instr = "psum.mod_alloc"
    base_addr = _int(instr, "base_addr", base_addr)
    base_bank = _int(instr, "base_bank", base_bank)
    base_partition = _int(instr, "base_partition", base_partition)
    nbank = _tiles(instr, "num_bank_tiles", num_bank_tiles)
    npar = _tiles(instr, "num_par_tiles", num_par_tiles)
    nfree = _tiles(instr, "num_free_tiles", num_free_tiles)
    for what, v in (("base_addr", base_addr), ("base_bank", base_bank),
                    ("base_partition", base_partition)):
        if v < 0:
            raise ConstraintError(f"{instr}: {what} must be >= 0, got {v}")

    def func(idx, pdim_size, fdim_size):
        return (_modulo(base_bank, nbank, 1, idx),
                _modulo(base_partition, npar, pdim_size, idx),
                _modulo(base_addr, nfree, fdim_size, idx))
    return Allocation(buffer, func, instr)


def _address(al, idx, P, F, cap, itemsize, name, m):
    """(partition, byte offset in the buffer) of block ``idx``, checked."""
    instr = al.instr
    got = al.func(idx, P, F)
    psum = al.buffer.name == "psum"
    want = 3 if psum else 2
    if not isinstance(got, (tuple, list)) or len(got) != want:
        form = "(bank, partition, byte)" if psum else "(partition, byte)"
        raise ConstraintError(f"{instr}: the allocator must return {form} for block {idx}, "
                              f"got {got!r}")
    vals = [_int(instr, "address", v) for v in got]
    if psum:
        bank, p0, off = vals
        nbanks = cap // PSUM_BANK_BYTES
        if not 0 <= bank < nbanks:
            raise AccessError(f"{instr}: bank of block {idx} of tensor {name!r} must be in "
                              f"[0, {nbanks - 1}] on {m.target.name}, got {bank}")
        if not (0 <= off and off + F <= PSUM_BANK_BYTES):
            raise AccessError(f"{instr}: bytes [{off}, {off + F}) of block {idx} of tensor "
                              f"{name!r} must lie within one {PSUM_BANK_BYTES}-byte PSUM bank "
                              f"(partial bank allocation is not allowed)")
        off += bank * PSUM_BANK_BYTES
    else:
        p0, off = vals
        if not (0 <= off and off + F <= cap):
            raise AccessError(f"{instr}: bytes [{off}, {off + F}) of block {idx} of tensor "
                              f"{name!r} are outside sbuf's {cap} bytes per partition on "
                              f"{m.target.name}")
    if not (0 <= p0 and p0 + P <= 128):
        raise AccessError(f"{instr}: partitions [{p0}, {p0 + P}) of block {idx} of tensor "
                          f"{name!r} are outside the 128 partitions of {al.buffer.name}")
    if off % itemsize:
        raise ConstraintError(f"{instr}: byte address of block {idx} must be a multiple of "
                              f"the item size {itemsize}, got {off}")
    return p0, off


def place(shape, fmt, al: Allocation, name, pdim, m):
    """The numpy view of ``m``'s memory holding tensor ``shape`` allocated by ``al``."""
    blocks, tile = shape[:pdim], shape[pdim:]
    P = tile[0]
    if P > 128:
        raise ConstraintError(f"ndarray: partition dimension must be <= 128 for "
                              f"{al.buffer.name}, got {P} (shape {shape})")
    F = math.prod(tile[1:]) * fmt.itemsize
    cap = m.capacity(al.buffer.name)
    mem = m.memory(al.buffer.name)
    row = mem.strides[0]
    addr = {}
    for idx in itertools.product(*(range(b) for b in blocks)):
        addr[idx] = _address(al, idx, P, F, cap, fmt.itemsize, name, m)
    origin = (0,) * len(blocks)
    p0, a0 = addr[origin]
    bstrides = []
    for k in range(len(blocks)):
        if blocks[k] == 1:
            bstrides.append((0, 0))
            continue
        unit = tuple(1 if j == k else 0 for j in range(len(blocks)))
        bstrides.append((addr[unit][0] - p0, addr[unit][1] - a0))
    for idx, (p, a) in addr.items():
        ep = p0 + sum(i * s[0] for i, s in zip(idx, bstrides))
        ea = a0 + sum(i * s[1] for i, s in zip(idx, bstrides))
        if (p, a) != (ep, ea):
            raise NotImplementedError(
                f"{al.instr}: tensor {name!r} {shape}: block {idx} is at (partition {p}, byte "
                f"{a}), not on the affine pattern of its neighbours; fastisa implements block "
                f"maps that are affine in each block index (modulo counts of 1 or at least the "
                f"number of blocks)")
    item = fmt.itemsize
    tstr, acc = [], item
    for d in reversed(tile[1:]):
        tstr.append(acc)
        acc *= d
    strides = tuple(sp * row + sa for sp, sa in bstrides) + (row,) + tuple(reversed(tstr))
    try:
        return np.ndarray(shape, dtype=fmt.np_dtype, buffer=mem, offset=p0 * row + a0,
                          strides=strides)
    except ValueError:      # a decreasing block map (negative strides)
        raise NotImplementedError(f"{al.instr}: tensor {name!r} {shape}: block addresses "
                                  f"that decrease with the block index are not implemented "
                                  f"by fastisa") from None
