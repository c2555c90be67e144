"""PTO sort instructions: TSORT32 and TMRGSORT (pto-isa docs/isa/TSORT32.md, TMRGSORT.md; CPU
simulator include/pto/cpu/TSort32.hpp, TMrgSort.hpp where the docs are silent).

Value-index pairs are 8-byte structs: float32 ``[value, index:u32]`` (2 float slots),
float16 ``[value, 0x0000, index:u32]`` (4 half slots), as TSORT32.md's table says.

* ``TSORT32(dst, src, idx[, tmp])``: for each row of src's valid region and each 32-column
  block b (the last one may be shorter), the pairs ``(src[r, 32b + k], idx[r, 32b + k])``
  sorted by value descending, ties by index ascending (a stable sort), written as structs from
  ``dst[r, coef * 32b]`` (coef = 2 float32, 4 float16); only the block's valid count of
  structs is written (the docs' -inf tail padding never reaches dst).  For float16 with more
  than 32 columns the CPU simulator places block b at column 2 * 32b (overlapping blocks);
  fastisa follows the documented ``R x 4C`` layout.
* ``TMRGSORT(dst, executed, tmp, src0, src1[, src2[, src3]], exhausted=False)``: merges the
  descending struct lists in row 0 of each source (``validCol / coef`` structs) into row 0 of
  dst, at most ``dst.validCol / coef`` structs, taking at each step the head with the strictly
  greatest value (lowest source on ties); with ``exhausted`` it stops when one list runs out.
  ``executed`` (a :class:`MrgSortExecutedNumList` or None) receives how many structs each
  list gave.  ``TMRGSORT(dst, src, blockLen)``: src's row 0 as groups of 4 consecutive
  sorted blocks of ``blockLen`` elements (a multiple of 64), each group 4-way merged into the
  same columns of dst, for every whole group inside dst's valid columns.

NaN values compare false, so they never win a merge step and keep their relative order.
"""

from __future__ import annotations

import enum

import numpy as np

from .._kernels import tilex as _kx
from ..errors import constraint
from . import _xcommon as X
from ._ops import _dtype_in, _operand
from ._tile import BLayout, Tile

__all__ = ["MrgSortExecutedNumList", "TSORT32", "TMRGSORT", "HistByte", "THISTOGRAM"]


class MrgSortExecutedNumList:
    """``MrgSortExecutedNumList``: structs taken from each list by the last TMRGSORT."""

    def __init__(self):
        self.mrgSortList0 = self.mrgSortList1 = self.mrgSortList2 = self.mrgSortList3 = 0

    def __repr__(self):
        return (f"MrgSortExecutedNumList({self.mrgSortList0}, {self.mrgSortList1}, "
                f"{self.mrgSortList2}, {self.mrgSortList3})")


def _rm(instr, name, t):
    if t.blayout != BLayout.RowMajor:
        raise constraint(instr, f"{name}.blayout", "must be BLayout.RowMajor", t.blayout.name)


def TSORT32(dst: Tile, src: Tile, idx: Tile, tmp: Tile | None = None) -> None:  # noqa: N802
    """Sort 32-element blocks into value-index structs (module doc).  dst, src: float32 or
    float16 row-major Vec tiles of one dtype, dst with at least ``coef * src.validCol``
    columns and src.validRow rows; idx: a uint32 (or int32) row-major tile covering src's
    valid region.  ``tmp`` accepted, not written."""
    instr = "TSORT32"
    X.tiles(instr, dst=dst, src=src, idx=idx)
    for n, t in (("dst", dst), ("src", src), ("idx", idx)):
        _rm(instr, n, t)
    _dtype_in(instr, "src", src, ("float32", "float16"))
    X._ops._same_dtype(instr, src, "dst", dst)
    _dtype_in(instr, "idx", idx, ("uint32", "int32"))
    R, C = src.valid_shape
    coef = 8 // src.dtype.itemsize
    if idx.valid_row < R or idx.valid_col < C:
        raise constraint(instr, "idx valid shape", f"must cover src's valid shape {(R, C)}",
                         idx.valid_shape)
    if dst.rows < R or dst.cols < coef * C:
        raise constraint(instr, "dst", f"must have >= {R} rows and >= {coef * C} columns "
                         f"({coef} per source column)", dst.shape)
    if R and C:
        _kx.sort32(*_operand(dst), *_operand(src, dst), *_operand(idx, dst), R, C)
    X.record(instr, dst, 2, R, C)


def _row0_bytes(t, nstructs):
    return np.ascontiguousarray(t._buf.view(np.uint8)[: nstructs * 8])


def TMRGSORT(dst: Tile, *args: Tile | int | MrgSortExecutedNumList | None,  # noqa: N802
             exhausted: bool = False) -> None:
    """Merge sorted value-index struct lists (both forms in the module doc).  Tiles: float32
    or float16 row-major Vec tiles of one dtype; lists are read from row 0."""
    instr = "TMRGSORT"
    X.tiles(instr, dst=dst)
    _rm(instr, "dst", dst)
    _dtype_in(instr, "dst", dst, ("float32", "float16"))
    coef = 8 // dst.dtype.itemsize
    if len(args) == 2 and not isinstance(args[1], Tile):
        src, block = args
        X.tiles(instr, src=src)
        _rm(instr, "src", src)
        X._ops._same_dtype(instr, dst, "src", src)
        if isinstance(block, bool) or not isinstance(block, (int, np.integer)) or block <= 0 \
                or block % 64:
            raise constraint(instr, "blockLen", "must be a positive multiple of 64", block)
        block = int(block)
        maxc = dst.valid_col
        if src.cols < maxc:
            raise constraint(instr, "src.cols", f"must be >= dst.validCol ({maxc})", src.cols)
        sb = src._buf.view(np.uint8)
        db = dst._buf.view(np.uint8)
        isz = dst.dtype.itemsize
        per = block // coef
        for base in range(0, maxc - 4 * block + 1, 4 * block):
            lists = [np.ascontiguousarray(sb[(base + b * block) * isz:(base + (b + 1) * block) * isz])
                     for b in range(4)]
            out = np.zeros(4 * per * 8, np.uint8)
            w, _ = _kx.merge(dst.format.code, out, lists, [per] * 4, 4 * per, 0)
            db[base * isz: base * isz + w * 8] = out[: w * 8]
        X.record(instr, dst, 2, 1, maxc)
        return
    if len(args) < 4 or len(args) > 6:
        raise constraint(instr, "operands", "must be (dst, src, blockLen) or (dst, executed, "
                         "tmp, src0, src1[, src2[, src3]])", len(args) + 1)
    executed, tmp, srcs = args[0], args[1], list(args[2:])
    if executed is not None and not isinstance(executed, MrgSortExecutedNumList):
        raise constraint(instr, "executedNumList", "must be a MrgSortExecutedNumList or None",
                         type(executed).__name__)
    if tmp is not None:
        X.tiles(instr, tmp=tmp)
    counts = []
    for k, s in enumerate(srcs):
        X.tiles(instr, **{f"src{k}": s})
        _rm(instr, f"src{k}", s)
        X._ops._same_dtype(instr, dst, f"src{k}", s)
        counts.append(s.valid_col // coef)
    out_n = dst.valid_col // coef
    out = np.zeros(max(1, out_n) * 8, np.uint8)
    w, done = _kx.merge(dst.format.code, out, [_row0_bytes(s, max(1, c)) for s, c in
                                               zip(srcs, counts)], counts, out_n,
                        1 if exhausted else 0)
    dst._buf.view(np.uint8)[: w * 8] = out[: w * 8]
    if executed is not None:
        done = done + [0] * (4 - len(done))
        (executed.mrgSortList0, executed.mrgSortList1, executed.mrgSortList2,
         executed.mrgSortList3) = done
    X.record(instr, dst, 2, 1, dst.valid_col)


class HistByte(enum.IntEnum):
    """pto's HistByte (include/pto/common/type.hpp): the byte THISTOGRAM counts."""
    BYTE_0 = 0
    BYTE_1 = 1
    BYTE_2 = 2
    BYTE_3 = 3


def THISTOGRAM(dst, src, idx, byte, cumulative=False) -> None:  # noqa: N802
    """Byte histogram, the radix-sort counting step (docs/isa/THISTOGRAM.md).

    For each row r of src's valid region (R x C) and bin b < 256: ``dst[r, b] = |{j < C :
    byte_k(src[r, j]) == b and F_k(r, j)}|`` with the docs' cascaded MSB-first filter F_k:
    uint16 src, k = 1: none; k = 0: the upper byte equals ``idx[r, 0]`` (one match byte per
    row).  uint32 src, k = 3: none; k = 2, 1, 0: bytes 3, 2, 1 (as many as lie above k) equal
    ``idx[0, 0]``, ``idx[1, 0]``, ``idx[2, 0]`` -- the docs' ``idx_{r,i}`` notation does not fit
    their (3 - k) x C idx shape, so the filter bytes are read as the CPU simulator reads them
    (include/pto/cpu/THistogram.hpp: row i, column 0, one filter for every row).

    The docs define per-bin counts; the CPU simulator stores the running (cumulative) sum over
    the bins instead.  fastisa gives the docs' counts, or the simulator's prefix sums with
    ``cumulative=True``.

    dst: uint32 row-major Vec tile with validCol >= 256 (bins 0..255 of rows < R written);
    src: uint16 or uint32 row-major Vec tile; idx: uint8 Vec tile (uint16: one column, R rows;
    uint32: 3 - k rows, none for k = 3); byte: a HistByte (uint16 allows BYTE_0/BYTE_1).
    Raises ConstraintError otherwise (nothing written)."""
    instr = "THISTOGRAM"
    X.tiles(instr, dst=dst, src=src)
    _dtype_in(instr, "dst", dst, ("uint32",))
    _dtype_in(instr, "src", src, ("uint16", "uint32"))
    _rm(instr, "dst", dst)
    _rm(instr, "src", src)
    try:
        k = HistByte(byte)
    except ValueError:
        raise constraint(instr, "byte", "must be a HistByte (BYTE_0 .. BYTE_3)", byte) from None
    R, C = src.valid_shape
    u16 = src.format.name == "uint16"
    if u16 and k > HistByte.BYTE_1:
        raise constraint(instr, "byte", "must be BYTE_0 or BYTE_1 for a uint16 src", k.name)
    if dst.valid_col < 256:
        raise constraint(instr, "dst.validCol", "must be >= 256 (one bin per byte value)",
                         dst.valid_col)
    if dst.rows < R:
        raise constraint(instr, "dst.rows", f"must be >= src.validRow ({R})", dst.rows)
    need_idx = (u16 and k == HistByte.BYTE_0) or (not u16 and k < HistByte.BYTE_3)
    if need_idx:
        X.tiles(instr, idx=idx)
        _dtype_in(instr, "idx", idx, ("uint8",))
        rows = R if u16 else 3 - int(k)
        if idx.rows < rows:
            raise constraint(instr, "idx.rows", f"must be >= {rows}", idx.rows)
    x = src.valid.astype(np.uint32)
    sel = (x >> np.uint32(8 * int(k))) & np.uint32(0xFF)
    keep = np.ones((R, C), bool)
    if need_idx:
        if u16:
            keep &= (x >> np.uint32(8)) == idx.data[:R, 0].astype(np.uint32)[:, None]
        else:
            for level, hb in enumerate(range(3, int(k), -1)):
                keep &= ((x >> np.uint32(8 * hb)) & np.uint32(0xFF)) == np.uint32(idx.data[level, 0])
    rows_i = np.broadcast_to(np.arange(R)[:, None], (R, C))
    counts = np.bincount((rows_i * 256 + sel.astype(np.int64))[keep], minlength=R * 256)
    counts = counts.reshape(R, 256).astype(np.uint32)
    if cumulative:
        counts = np.cumsum(counts, axis=1, dtype=np.uint32)
    if R:
        dst.data[:R, :256] = counts
    X.record(instr, src)
