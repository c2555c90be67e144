"""PTO gather / scatter instructions: TGATHER, TSCATTER (tile to tile) and MGATHER, MSCATTER
(global memory <-> tile), pto-isa docs/isa/TGATHER.md, TSCATTER.md, MGATHER.md, MSCATTER.md;
where the docs are silent the CPU simulator (include/pto/cpu/TGather.hpp, TScatter.hpp,
MGather.hpp, MScatter.hpp).

Forms:

* ``TGATHER(dst, src, indices)``: ``dst[r, c] = src.flat[indices[r, c]]`` over dst's valid
  region, the index counting row-major over src's whole physical ``Rows x Cols`` tile; an
  index outside ``[0, Rows * Cols)`` gives 0 (CPU simulator).
* ``TGATHER(dst, src, maskPattern=..., axis="row")``: the elements of src's valid region whose
  column index the pattern selects (P0101: even, P1010: odd, P0001/P0010/P0100/P1000: c % 4 ==
  0/1/2/3, P1111: all), in row-major order, packed consecutively into dst's storage from
  element 0; ``axis="col"`` keeps the selected rows instead (into dst rows 0, 1, ...).  dst and
  src element sizes must match (a different type of the same size is a bit copy).
* ``TSCATTER(dst, src, indexes)``: ``dst.storage[indexes[i, j]] = src[i, j]`` over the index
  tile's valid region in row-major order (a later write wins); an index outside dst's buffer
  is an AccessError (the simulator's behaviour is undefined).
* ``TSCATTER(dst, src, maskPattern=..., axis="row")``: dst's valid region gets src's elements,
  consumed in row-major order of src's physical tile, at the selected columns (0 at the
  others); ``axis="col"`` fills the selected rows with src's rows.
* ``MGATHER(dst, gm, indexes, coalesce="elem", oob="undefined")``: elem: ``dst[i, j] =
  gm.flat[indexes[i, j]]`` (flat over the GlobalTensor's element sequence, capacity the
  product of its shape); row: ``dst[i, j] = gm[indexes[i], j]`` (row ``indexes[i]`` of dim 3,
  capacity shape[3]).  oob: "clamp", "wrap", "zero" as the docs; "undefined" raises
  AccessError for an out-of-range index.
* ``MSCATTER(gm, src, indexes, coalesce="elem", atomic="none", oob="undefined")``: the
  inverse, with atomic "add"/"max"/"min" (computed in the element type) and oob "skip",
  "clamp", "wrap" ("undefined": AccessError).

* ``TGATHERB(dst, src, offset)`` (docs/isa/TGATHERB.md; the docs give the per-element
  formula ``dst = *(srcBase + offset)`` with bounds implementation-defined, the CPU simulator,
  include/pto/cpu/TGatherB.hpp, gathers 32-byte blocks): for each row r of dst's valid region
  and each 32-byte block b of it, the 32 bytes at byte offset ``offset[r, b]`` (read as
  uint32) of src's buffer; a block that would read past src's buffer is skipped (dst keeps
  those bytes), as the simulator does.

Inputs are never modified except the destination; a call that raises changes nothing.
"""

from __future__ import annotations

import enum

import numpy as np

from .._kernels import tilex as _kx
from ..errors import AccessError, constraint
from . import _xcommon as X
from ._ops import _dtype_in, _operand
from ._tile import GlobalTensor, Tile

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .._types import EnumLike

__all__ = ["MaskPattern", "TGATHER", "TGATHERB", "TSCATTER", "MGATHER", "MSCATTER"]


class MaskPattern(enum.IntEnum):
    """pto's MaskPattern (include/pto/common/type.hpp)."""
    P0101 = 1
    P1010 = 2
    P0001 = 3
    P0010 = 4
    P0100 = 5
    P1000 = 6
    P1111 = 7


def _pattern(instr, p):
    try:
        return MaskPattern[p] if isinstance(p, str) else MaskPattern(p)
    except (KeyError, ValueError):
        raise constraint(instr, "maskPattern", "must be a MaskPattern (P0101, P1010, P0001, "
                         "P0010, P0100, P1000, P1111)", p) from None


def _selected(p, n):
    i = np.arange(n)
    return {MaskPattern.P0101: i % 2 == 0, MaskPattern.P1010: i % 2 == 1,
            MaskPattern.P0001: i % 4 == 0, MaskPattern.P0010: i % 4 == 1,
            MaskPattern.P0100: i % 4 == 2, MaskPattern.P1000: i % 4 == 3,
            MaskPattern.P1111: np.ones(n, bool)}[p]


def _axis(instr, axis):
    a = str(getattr(axis, "name", axis)).lower()
    a = {"gather_row": "row", "gather_col": "col", "scatter_row": "row", "scatter_col": "col"}.get(a, a)
    if a not in ("row", "col"):
        raise constraint(instr, "axis", "must be 'row' or 'col'", axis)
    return a


def _storage(t: Tile, r, c):
    """Storage offsets (elements) of (r, c) in tile t."""
    return np.asarray(r, np.int64) * t._rs + np.asarray(c, np.int64) * t._cs


def _index_values(instr, name, t):
    X.tiles(instr, **{name: t})
    _dtype_in(instr, name, t, ("int32", "uint32", "int16", "uint16"))
    return t.valid.astype(np.int64)


def _run_gather(dst, src_buf, off, R, C):
    if R and C:
        _kx.gather(*_operand(dst), src_buf.view(np.uint8).reshape(-1),
                   np.ascontiguousarray(off, dtype=np.int64).reshape(-1), R, C)


def _same_size(instr, dst, src):
    if dst.dtype.itemsize != src.dtype.itemsize:
        raise constraint(instr, "dst.dtype", f"must have src's element size "
                         f"({src.dtype.itemsize} bytes)", dst.format.name)


def TGATHER(dst: Tile, src: Tile, indices: Tile | MaskPattern | str | None = None,  # noqa: N802
            tmp: Tile | None = None, maskPattern: MaskPattern | str | int | None = None,
            axis: EnumLike = "row") -> None:
    """Index or mask-pattern gather (forms in the module doc).  dst, src: Vec tiles with the
    same element size; indices: an int32/uint32/int16/uint16 Vec tile covering dst's valid
    region.  Raises ConstraintError on a bad operand."""
    instr = "TGATHER"
    if _byte_lowp(dst) and _byte_lowp(src):
        # (ptoacc) a 1-byte low-precision tile (float8 E4M3/E5M2, hifloat8) on A5: the gather
        # moves bytes, so it runs on uint8 views of the same storage (docs/isa/TGATHER.md
        # lists float8_e4m3_t, float8_e5m2_t and hifloat8_t for the A5 mask-pattern form;
        # PTOAS's A5 verifier takes them in the index form too)
        from ._tile import _State
        if _State.target != "A5":
            raise constraint(instr, "dst.dtype", "must not be a low-precision format on A2A3 "
                             "(A5 only)", dst.format.name)
        return TGATHER(_byte_alias(dst), _byte_alias(src), indices, tmp, maskPattern, axis)
    X.tiles(instr, dst=dst, src=src)
    _same_size(instr, dst, src)
    if isinstance(indices, (MaskPattern, str)) and maskPattern is None:
        indices, maskPattern = None, indices
    if maskPattern is None:
        if not isinstance(indices, Tile):
            raise constraint(instr, "indices", "must be a Tile (or give maskPattern)", indices)
        R, C = dst.valid_shape
        if indices.valid_row < R or indices.valid_col < C:
            raise constraint(instr, "indices valid shape", f"must cover dst's valid shape "
                             f"{dst.valid_shape}", indices.valid_shape)
        _dtype_in(instr, "indices", indices, ("int32", "uint32", "int16", "uint16"))
        if R and C:
            # offsets computed in C: index v -> src element (v // Cols, v % Cols), 0 outside
            sbuf = _operand(src, dst)[0]
            dense = src._rs == src.cols and src._cs == 1      # row-major: offset = v
            _kx.gather_idx(*_operand(dst), sbuf, *_operand(indices, dst),
                           _kx.INDEX_MODES["zero"], src.rows * src.cols,
                           0 if dense else src.cols, src._rs, src._cs, src._buf.size, R, C,
                           False)
        X.record(instr, dst)
        return
    p = _pattern(instr, maskPattern)
    ax = _axis(instr, axis)
    SR, SC = src.valid_shape
    if ax == "row":
        cols = np.nonzero(_selected(p, SC))[0]
        rr, cc = np.meshgrid(np.arange(SR), cols, indexing="ij")
        src_off = _storage(src, rr, cc).reshape(-1)
        n = src_off.size
        if n > dst.rows * dst.cols:
            raise constraint(instr, "dst", f"must hold the {n} selected elements", dst.shape)
        # packed consecutively into dst storage from offset 0: write through a 1 x n view
        out = np.empty(n, dtype=dst.dtype)
        flat = Tile.__new__(Tile)
        _as_flat(flat, out, dst)
        _run_gather(flat, src._buf, src_off.reshape(1, n), 1, n)
        dst._buf[:n] = out
        X.record(instr, dst, 1, SR, SC)
        return
    rows = np.nonzero(_selected(p, SR))[0]
    if len(rows) > dst.rows:
        raise constraint(instr, "dst.rows", f"must hold the {len(rows)} selected rows", dst.rows)
    C = min(SC, dst.cols)
    rr, cc = np.meshgrid(rows, np.arange(C), indexing="ij")
    _run_gather(dst, src._buf, _storage(src, rr, cc), len(rows), C)
    X.record(instr, dst, 1, SR, SC)


def _as_flat(t, buf, like):
    """Make t a 1 x n row-major view over buf with like's format (a kernel operand)."""
    t.format = like.format
    t.dtype = like.dtype
    t._buf = buf
    t._rs, t._cs = buf.size, 1


def TSCATTER(dst: Tile, src: Tile, indexes: Tile | MaskPattern | str | None = None,  # noqa: N802
             maskPattern: MaskPattern | str | int | None = None, axis: EnumLike = "row") -> None:
    """Index or mask-pattern scatter (forms in the module doc).  dst, src: Vec tiles with the
    same element size; indexes: an integer Vec tile.  An index outside dst's buffer raises
    AccessError before anything is written."""
    instr = "TSCATTER"
    X.tiles(instr, dst=dst, src=src)
    _same_size(instr, dst, src)
    if isinstance(indexes, (MaskPattern, str)) and maskPattern is None:
        indexes, maskPattern = None, indexes
    if maskPattern is None:
        X.tiles(instr, indexes=indexes)
        _dtype_in(instr, "indexes", indexes, ("int32", "uint32", "int16", "uint16"))
        R, C = indexes.valid_shape
        if src.rows < R or src.cols < C:
            raise constraint(instr, "src", f"must cover the index tile's valid shape {(R, C)}",
                             src.shape)
        n = dst.rows * dst.cols
        if R and C:
            # checked in C before anything is written: an index outside [0, n) raises
            bad = _kx.scatter_idx(0, dst.format.code, dst._buf.view(np.uint8),
                                  *_operand(indexes, dst), *_operand(src, dst),
                                  _kx.INDEX_MODES["undefined"], n, dst._buf.size, R, C)
            if bad is not None:
                raise AccessError(f"{instr}: index {bad} is outside dst's buffer of {n} elements")
        X.record(instr, dst, 1, R, C)
        return
    p = _pattern(instr, maskPattern)
    ax = _axis(instr, axis)
    R, C = dst.valid_shape
    if ax == "row":
        sel = _selected(p, C)
        k = np.cumsum(sel) - 1                     # position among the selected columns
        per_row = int(sel.sum())
        seq = np.arange(R)[:, None] * per_row + k[None, :]   # src element sequence number
        need = R * per_row
        if need > src.rows * src.cols:
            raise constraint(instr, "src", f"must hold {need} elements", src.shape)
        off = np.where(sel[None, :], _storage(src, seq // src.cols, seq % src.cols), -1)
    else:
        sel = _selected(p, R)
        k = np.cumsum(sel) - 1
        if int(sel.sum()) > src.rows or C > src.cols:
            raise constraint(instr, "src", f"must hold {int(sel.sum())} rows of {C}", src.shape)
        rr, cc = np.meshgrid(np.where(sel, k, 0), np.arange(C), indexing="ij")
        off = np.where(sel[:, None], _storage(src, rr, cc), -1)
    _run_gather(dst, src._buf, off, R, C)
    X.record(instr, dst)


_GOOB = ("undefined", "clamp", "wrap", "zero")
_SOOB = ("undefined", "skip", "clamp", "wrap")


def _enum_name(instr, name, v, allowed):
    s = str(getattr(v, "name", v)).lower()
    if s not in allowed:
        raise constraint(instr, name, f"must be one of {list(allowed)}", v)
    return s


def _gm_offsets(instr, gm, idx, coalesce, oob, ncols, skip_word):
    """Flat element offsets into gm's array for MGATHER/MSCATTER; -1 for zero/skip."""
    shape, strides = gm.shape, gm.strides
    if coalesce == "elem":
        cap = int(np.prod(shape))
        i = idx
    else:
        cap = shape[3]
        i = idx[:, :1]
    if cap == 0:
        raise constraint(instr, "gm", "must have a nonzero capacity", shape)
    if oob == "clamp":
        i = np.clip(i, 0, cap - 1)
    elif oob == "wrap":
        i = np.mod(i, cap)
    miss = (i < 0) | (i >= cap)
    if oob == "undefined" and miss.any():
        raise AccessError(f"{instr}: index {int(i[miss].flat[0])} is outside the global tensor's "
                          f"capacity {cap} (oob={skip_word!r} or clamp/wrap handle it)")
    i = np.where(miss, 0, i)
    if coalesce == "elem":
        off = i
    else:
        off = i * strides[3] + np.arange(ncols)[None, :] * strides[4]
        miss = np.broadcast_to(miss, off.shape)
    off = np.where(miss, -1, off)
    if (off >= gm.array.size).any():
        raise AccessError(f"{instr}: an addressed element lies outside the global tensor's "
                          f"array of {gm.array.size} elements")
    return off


def MGATHER(dst: Tile, gm: GlobalTensor, indexes: Tile, coalesce: EnumLike = "elem",  # noqa: N802
            oob: EnumLike = "undefined") -> None:
    """Gather from global memory into dst's valid region (module doc).  dst: a Vec tile with
    gm's element size; gm: a GlobalTensor; indexes: an integer tile (elem: covering dst's
    valid region; row: one index per row in column 0)."""
    instr = "MGATHER"
    X.tiles(instr, dst=dst)
    if not isinstance(gm, GlobalTensor):
        raise constraint(instr, "src", "must be a GlobalTensor", type(gm).__name__)
    if gm.array.dtype.itemsize != dst.dtype.itemsize:
        raise constraint(instr, "dst.dtype", "must have the global tensor's element size",
                         dst.format.name)
    co = _enum_name(instr, "coalesce", coalesce, ("elem", "row"))
    mode = _enum_name(instr, "oob", oob, _GOOB)
    R, C = dst.valid_shape
    if not isinstance(indexes, Tile):
        raise constraint(instr, "indexes", "must be a Tile", type(indexes).__name__)
    _dtype_in(instr, "indexes", indexes, ("int32", "uint32", "int16", "uint16"))
    idx = indexes.data[:R, : (C if co == "elem" else 1)]
    if idx.shape[0] < R or (co == "elem" and idx.shape[1] < C):
        raise constraint(instr, "indexes", f"must cover {R} x {C if co == 'elem' else 1}",
                         indexes.shape)
    flat = np.ascontiguousarray(gm.array.reshape(-1, order="A"))
    if co == "elem":
        _elem_gather(instr, dst, gm, flat, indexes, mode, R, C)
        X.record(instr, dst)
        return
    off = _gm_offsets(instr, gm, idx.astype(np.int64), co, mode, C, "zero")
    _run_gather(dst, flat, off, R, C)
    X.record(instr, dst)


def _cap_error(instr, gm, bad, cap, word):
    if 0 <= bad < cap:
        return AccessError(f"{instr}: an addressed element lies outside the global tensor's "
                           f"array of {gm.array.size} elements")
    return AccessError(f"{instr}: index {bad} is outside the global tensor's capacity {cap} "
                       f"(oob={word!r} or clamp/wrap handle it)")


def _elem_gather(instr, dst, gm, flat, indexes, mode, R, C):
    """MGATHER coalesce=elem with the index mapping (oob) done in the C kernel."""
    cap = int(np.prod(gm.shape))
    if cap == 0:
        raise constraint(instr, "gm", "must have a nonzero capacity", gm.shape)
    if not (R and C):
        return
    check = mode == "undefined" or cap > flat.size
    bad = _kx.gather_idx(*_operand(dst), flat.view(np.uint8), *_operand(indexes, dst),
                         _kx.INDEX_MODES[mode], cap, 0, 1, 1, flat.size, R, C, check)
    if bad is not None:
        raise _cap_error(instr, gm, bad, cap, "zero")


def MSCATTER(gm: GlobalTensor, src: Tile, indexes: Tile, coalesce: EnumLike = "elem",  # noqa: N802
             atomic: EnumLike = "none", oob: EnumLike = "undefined") -> None:
    """Scatter src's valid region into global memory (module doc).  gm: a GlobalTensor
    (written); src: a Vec tile of gm's dtype; indexes: an integer tile.  Elements are written
    in row-major order of src's valid region (a later write to the same address wins)."""
    instr = "MSCATTER"
    X.tiles(instr, src=src)
    if not isinstance(gm, GlobalTensor):
        raise constraint(instr, "dst", "must be a GlobalTensor", type(gm).__name__)
    if gm.array.dtype != src.dtype:
        raise constraint(instr, "src.dtype", f"must equal the global tensor's dtype "
                         f"({gm.array.dtype})", src.format.name)
    co = _enum_name(instr, "coalesce", coalesce, ("elem", "row"))
    at = _enum_name(instr, "atomic", atomic, ("none", "add", "max", "min"))
    mode = _enum_name(instr, "oob", oob, _SOOB)
    if mode == "skip":
        mode_g = "zero"
    else:
        mode_g = mode
    if not isinstance(indexes, Tile):
        raise constraint(instr, "indexes", "must be a Tile", type(indexes).__name__)
    _dtype_in(instr, "indexes", indexes, ("int32", "uint32", "int16", "uint16"))
    R, C = src.valid_shape
    idx = indexes.data[:R, : (C if co == "elem" else 1)]
    if idx.shape[0] < R or (co == "elem" and idx.shape[1] < C):
        raise constraint(instr, "indexes", f"must cover {R} x {C if co == 'elem' else 1}",
                         indexes.shape)
    if co == "elem":
        cap = int(np.prod(gm.shape))
        if cap == 0:
            raise constraint(instr, "gm", "must have a nonzero capacity", gm.shape)
        if not gm.array.flags.writeable:
            raise AccessError(f"{instr}: the global tensor's array is read-only")
        flat = gm.array.reshape(-1, order="A")
        if R and C:
            bad = _kx.scatter_idx(_kx.SCATTER_OPS[at], src.format.code, flat.view(np.uint8),
                                  *_operand(indexes), *_operand(src),
                                  _kx.INDEX_MODES[mode], cap, flat.size, R, C)
            if bad is not None:
                raise _cap_error(instr, gm, bad, cap, "skip")
        X.record(instr, src)
        return
    off = _gm_offsets(instr, gm, idx.astype(np.int64), co, mode_g, C, "skip")
    if not gm.array.flags.writeable:
        raise AccessError(f"{instr}: the global tensor's array is read-only")
    flat = gm.array.reshape(-1, order="A")
    if R and C:
        s = _operand(src)
        _kx.scatter(_kx.SCATTER_OPS[at], src.format.code, flat.view(np.uint8),
                    np.ascontiguousarray(off, np.int64).reshape(-1), *s, R, C)
    X.record(instr, src)


_GATHERB_DT = ("int8", "uint8", "int16", "uint16", "int32", "uint32", "float16", "bfloat16",
               "float32")


def TGATHERB(dst: Tile, src: Tile, offset: Tile) -> None:  # noqa: N802
    """32-byte block gather by byte offsets (module doc).

    dst: a row-major Vec tile whose valid row is a whole number of 32-byte blocks
    (``validCol * sizeof(T) % 32 == 0``); src: a Vec tile (the byte source, its whole buffer);
    dst and src int8/uint8/int16/uint16/int32/uint32/float16/bfloat16/float32; offset: an
    int32/uint32 Vec tile holding one byte offset per block, ``offset[r, b]`` for r < validRow,
    b < validCol * sizeof(T) / 32.  Raises ConstraintError on a bad operand (nothing written)."""
    instr = "TGATHERB"
    X.tiles(instr, dst=dst, src=src, offset=offset)
    _dtype_in(instr, "dst", dst, _GATHERB_DT)
    _dtype_in(instr, "src", src, _GATHERB_DT)
    _dtype_in(instr, "offset", offset, ("int32", "uint32"))
    from ._ops import _row_major
    _row_major(instr, "dst", dst)
    R, C = dst.valid_shape
    isz = dst.dtype.itemsize
    if (C * isz) % 32:
        raise constraint(instr, "dst.validCol", f"must make whole 32-byte blocks "
                         f"(validCol * {isz} % 32 == 0)", C)
    nb = C * isz // 32
    if offset.rows < R or offset.cols < nb:
        raise constraint(instr, "offset", f"must hold {R} x {nb} block offsets", offset.shape)
    if not (R and nb):
        X.record(instr, dst)
        return
    offs = offset.data[:R, :nb].astype(np.uint32).astype(np.int64)
    sbytes = src._buf.view(np.uint8)
    n_src = sbytes.size
    dbytes = dst._buf.view(np.uint8)
    row_b = dst._rs * isz
    ok = offs + 32 <= n_src
    lane = np.arange(32, dtype=np.int64)
    # a skipped block reads dst's own current bytes (appended after src's): unchanged
    own = (n_src + np.arange(R, dtype=np.int64)[:, None] * row_b
           + np.arange(nb, dtype=np.int64)[None, :] * 32)
    base = np.where(ok, offs, own)
    off = (base[:, :, None] + lane[None, None, :]).reshape(R, nb * 32)
    pool = np.concatenate([sbytes, dbytes])
    from ..dtypes import lookup
    _kx.gather(dbytes, lookup("uint8").code, row_b, 1, pool, np.ascontiguousarray(off).reshape(-1),
               R, nb * 32)
    X.record(instr, dst)


# ---- ptoacc branch (issue 13): byte views of 1-byte low-precision tiles ----
_BYTE_LOWP = ("float8_e4m3fn", "float8_e5m2", "hifloat8")


def _byte_lowp(t) -> bool:
    return isinstance(t, Tile) and t.format.name in _BYTE_LOWP


def _byte_alias(t: Tile) -> Tile:
    """A uint8 tile of t's shape, layout and valid shape over t's storage (writes go to t)."""
    from ._tile import DYNAMIC
    u = Tile(t.loc, "uint8", t.rows, t.cols, blayout=t.blayout, valid_row=DYNAMIC,
             valid_col=DYNAMIC)
    u.set_valid_row(t.valid_row)
    u.set_valid_col(t.valid_col)
    u._buf = t._buf.view(np.uint8)
    return u
