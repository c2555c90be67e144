"""PTO layout instructions: TEXTRACT, TINSERT, TCONCAT, TRESHAPE, TFILLPAD (and
TFILLPAD_INPLACE, TFILLPAD_EXPAND), pto-isa docs/isa/TEXTRACT.md, TINSERT.md, TCONCAT.md,
TRESHAPE.md, TFILLPAD*.md; CPU simulator include/pto/cpu/TExtract.hpp, TInsert.hpp,
TConcat.hpp, TReshape.hpp, TFillPad.hpp where the docs are silent.

* ``TEXTRACT(dst, src, indexRow, indexCol, relu=False)``: ``dst[i, j] = src[indexRow + i,
  indexCol + j]`` over dst's valid region (converted to dst's dtype as TMOV does; ``relu``:
  ReluPreMode.NormalRelu), which must lie inside src's valid region.
* ``TINSERT(dst, src, indexRow, indexCol, relu=False)``: ``dst[indexRow + i, indexCol + j] =
  src[i, j]`` over src's valid region, which must land inside dst's valid region.
* ``TCONCAT(dst, src0, src1)``: each of dst's valid rows is src0's valid columns followed by
  src1's (dst.validCol == src0.validCol + src1.validCol, equal valid rows, one dtype).
* ``TRESHAPE(dst, src)``: the same bytes seen with dst's shape (equal byte sizes, both float
  or both integer dtypes, one tile location, both boxed or both unboxed).  dst is rebound to
  src's storage: the two alias afterwards, as on A2/A3 (docs/isa/TRESHAPE.md, Notes:
  ``TASSIGN_IMPL(dst, src.data())``) and in the current CPU simulator
  (include/pto/cpu/TReshape.hpp under ``__CPU_SIM``: ``dst.data() = src.data()``; the docs'
  note that the CPU simulation copies the bytes is older than that code, and the simulator's
  own test, tests/cpu/st/testcase/treshape, checks the aliasing).
* ``TFILLPAD(dst, src)``: the whole dst tile: src's element inside src's valid region, dst's
  pad value (``dst.pad``: Null/Zero 0, Max +inf / the integer maximum, Min -inf / the integer
  minimum) elsewhere; dst and src of one shape (TFILLPAD_EXPAND: dst at least src's shape;
  TFILLPAD_INPLACE: dst may be src).

* ``TINTERLEAVE(dst1, dst0, src1, src0)`` (C = dst0.validCol, even; m = C / 2):
  ``dst0[r, 2c] = src0[r, c]``, ``dst0[r, 2c+1] = src1[r, c]``, ``dst1[r, 2c] = src0[r, c+m]``,
  ``dst1[r, 2c+1] = src1[r, c+m]`` for c < m (docs/isa/TINTERLEAVE.md).
* ``TDEINTERLEAVE(dst1, dst0, src1, src0)``: the inverse (``dst0[r, c] = src0[r, 2c]``,
  ``dst1[r, c] = src0[r, 2c+1]``, ``dst0[r, c+m] = src1[r, 2c]``, ``dst1[r, c+m] =
  src1[r, 2c+1]``); ``TDEINTERLEAVE(dst1, dst0, src)``: ``dst0[r, c] = src[r, 2c]``,
  ``dst1[r, c] = src[r, 2c+1]`` for c < dst0.validCol.  All tiles row-major, one dtype.

* ``TPACK(dst, src)`` (branch ptogold): ``dst[i, j] = (T_dst) src[i, j]`` over src's valid
  region, the rest of dst kept.  docs/isa/tile/ops/layout-and-rearrangement/tpack.md says
  only "pack or convert tile elements into a narrower destination representation" (semantics
  instruction-specific); the CPU simulator of the checked-out pto-isa has no TPACK, and its
  test (tests/cpu/st/testcase/tpack) checks a valid-region copy with type conversion
  (int16 -> int32).  fastisa implements the conversions whose value is unambiguous: the same
  dtype (bit copy), integer to a wider integer that holds every source value, float16/
  bfloat16 -> float32 (exact) and float32 -> float16/bfloat16 (round to nearest even); other
  pairs raise ConstraintError (the narrowing rule is undocumented).

Quantising forms (TEXTRACT/TINSERT with a pre-quant scalar or an fp tile) raise
NotImplementedError.  Every copy runs on the tile copy kernel (csrc/fastisa/tile.h).
"""

from __future__ import annotations

import numpy as np

from ..errors import AccessError, constraint
from . import _xcommon as X
from . import _ops
from ._ops import _operand, _run_binary, _run_unary, _tile
from . import _lowp_formats as _lp
from ._tile import _LOC_BUFFER, PadCustom, SLayout, Tile, _as_int, _pad_value, _pool

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .._types import Int

__all__ = ["TSUBVIEW", "TEXTRACT", "TINSERT", "TEXTRACT_FP", "TINSERT_FP", "TCONCAT", "TRESHAPE",
           "TFILLPAD", "TFILLPAD_INPLACE", "TFILLPAD_EXPAND", "TINTERLEAVE", "TDEINTERLEAVE", "TPACK"]


def _at(t: Tile, r, c, dst=None):
    """Operand of t starting at element (r, c)."""
    buf, fmt, rs, cs = _operand(t, dst)
    isz = t.dtype.itemsize
    off = (r * t._rs + c * t._cs) * isz
    return buf[off:], fmt, rs, cs


def _index(instr, name, v):
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0:
        raise constraint(instr, name, "must be an integer >= 0", v)
    return int(v)


def _copy(dst_op, src_op, R, C, relu, dst):
    if not (R and C):
        return
    if relu:
        zero = X.scalar("TEXTRACT", "0", 0, dst.format)[1]
        # relu(x) = max(x, 0) computed in dst's dtype after the conversion
        _run_unary_to(dst_op, src_op, R, C)
        _run_binary_to("MAX", dst_op, dst_op, zero, R, C)
    else:
        _run_unary_to(dst_op, src_op, R, C)


def _run_unary_to(d, s, R, C):
    """Copy (same format) or convert as C++'s static_cast: round to nearest for a float
    destination, truncation toward zero (saturating) for an integer one from a float."""
    from .._kernels import tile as _k
    from ._ops import _OP, RoundMode
    if d[1] == s[1]:
        _k.unary(_OP["COPY"], d[0], d[1], d[2], d[3], *s, R, C)
        return
    from ..dtypes import by_code
    mode = RoundMode.CAST_RINT if by_code(d[1]).is_float else RoundMode.CAST_TRUNC
    _k.cvt(int(mode), d[0], d[1], d[2], d[3], *s, R, C)


def _run_binary_to(op, d, a, b, R, C):
    from .._kernels import tile as _k
    from ._ops import _BIG, _OP
    _k.binary(_OP[op], d[0], d[1], d[2], d[3], *a, _BIG, *b, _BIG, R, C)


def _quant_move(instr, dst, src, indexRow, indexCol, relu, pre, sat, into) -> None:
    """The pre-quant forms of TEXTRACT / TINSERT (branch ptolowp): the window moves through
    the fixpipe conversion of :mod:`fastisa.pto._fixpipe` (``pre``: the 64-bit scalar word,
    or a uint64 tile of words: for TEXTRACT word ``indexCol + j`` converts window column j,
    i.e. one word per src column; for TINSERT word j converts src column j).  Docs: pto-isa
    docs/isa/TEXTRACT.md, TINSERT.md (pairs); arithmetic: the CPU simulator."""
    from . import _fixpipe as F
    r0, c0 = _index(instr, "indexRow", indexRow), _index(instr, "indexCol", indexCol)
    R, C = src.valid_shape if into else dst.valid_shape
    big, small = (dst, src) if into else (src, dst)
    if r0 + R > big.valid_row or c0 + C > big.valid_col:
        raise constraint(instr, "indexRow/indexCol", f"the window {(R, C)} at ({r0}, {c0}) "
                         f"must lie inside the valid region {big.valid_shape}", (r0, c0))
    if isinstance(pre, Tile):
        q = F.fp_words(instr, "preQuant", pre, 0 if into else c0, C).reshape(1, C)
    else:
        word = _as_int(pre, "preQuant", instr)
        if not 0 <= word < 1 << 64:
            raise constraint(instr, "preQuant", "must be a 64-bit unsigned word", word)
        q = np.uint64(word)
    window = src.valid if into else src.data[r0:r0 + R, c0:c0 + C]
    out = F.convert(instr, window, src.format.name, dst.format.name, q, bool(relu), bool(sat))
    out = out.view(dst.dtype) if out.dtype != dst.dtype else out
    if into:
        np.copyto(dst.data[r0:r0 + R, c0:c0 + C], out)
    else:
        np.copyto(dst.valid, out)
    X.record(instr, dst, 1, R, C)


def TEXTRACT_FP(dst: Tile, src: Tile, fp: Tile, indexRow: Int = 0, indexCol: Int = 0,  # noqa: N802,N803
                relu: bool = False, saturateInf: bool = False) -> None:  # noqa: N803
    """TEXTRACT with a tile of 64-bit quantisation words (uint64, or any dtype read as words:
    :func:`fastisa.pto._fixpipe.fp_words`; see :func:`TEXTRACT`)."""
    for name, t in (("dst", dst), ("src", src), ("fp", fp)):
        _tile("TEXTRACT_FP", name, t, lowp=True)
    _quant_move("TEXTRACT_FP", dst, src, indexRow, indexCol, relu, fp, saturateInf, into=False)


def TINSERT_FP(dst: Tile, src: Tile, fp: Tile, indexRow: Int = 0, indexCol: Int = 0,  # noqa: N802,N803
               relu: bool = False, saturateInf: bool = False) -> None:  # noqa: N803
    """TINSERT with a tile of 64-bit quantisation words (uint64, or any dtype read as words:
    :func:`fastisa.pto._fixpipe.fp_words`; see :func:`TINSERT`)."""
    for name, t in (("dst", dst), ("src", src), ("fp", fp)):
        _tile("TINSERT_FP", name, t, lowp=True)
    _quant_move("TINSERT_FP", dst, src, indexRow, indexCol, relu, fp, saturateInf, into=True)


def _lowp_relu(instr, dst, src, relu) -> bool:
    """True (go on to the low-precision move) unless relu is asked of such a tile."""
    if relu and (dst.format.name in _lp.LOWP or src.format.name in _lp.LOWP):
        raise constraint(instr, "relu", "must be False for low-precision / 64-bit tiles", relu)
    return True


def TEXTRACT(dst: Tile, src: Tile, indexRow: Int = 0, indexCol: Int = 0,  # noqa: N802
             relu: bool = False, preQuant: Int | Tile | None = None,  # noqa: N803
             saturateInf: bool = False) -> None:  # noqa: N803
    """Copy the window of src at (indexRow, indexCol) into dst's valid region (module doc).
    Any tile locations; raises ConstraintError when the window leaves src's valid region.
    src may be a FRACTAL_Z ConvTile with dst a Right tile (fastisa.pto._img2col, branch
    ptoisa2)."""
    instr = "TEXTRACT"
    if type(src).__name__ == "ConvTile":     # branch ptoisa2: FRACTAL_Z -> Right (_img2col)
        if relu or preQuant is not None or saturateInf:
            raise constraint(instr, "relu/preQuant/saturateInf", "must be unset for a ConvTile "
                             "src", (relu, preQuant, saturateInf))
        from ._img2col import textract as _conv_textract
        return _conv_textract(dst, src, indexRow, indexCol)
    _tile(instr, "dst", dst, lowp=True)
    _tile(instr, "src", src, lowp=True)
    if preQuant is not None:
        return _quant_move("TEXTRACT", dst, src, indexRow, indexCol, relu, preQuant,
                           saturateInf, into=False)
    r0, c0 = _index(instr, "indexRow", indexRow), _index(instr, "indexCol", indexCol)
    R, C = dst.valid_shape
    if r0 + R > src.valid_row or c0 + C > src.valid_col:
        raise constraint(instr, "indexRow/indexCol", f"dst's valid region {(R, C)} at "
                         f"({r0}, {c0}) must lie inside src's valid region {src.valid_shape}",
                         (r0, c0))
    if _lowp_relu(instr, dst, src, relu) and _ops._lowp_move(instr, dst, src, r0, c0):
        X.record(instr, dst)
        return
    _copy(_operand(dst), _at(src, r0, c0, dst), R, C, relu, dst)
    X.record(instr, dst)


def TINSERT(dst: Tile, src: Tile, indexRow: Int = 0, indexCol: Int = 0,  # noqa: N802
            relu: bool = False, preQuant: Int | Tile | None = None,  # noqa: N803
            saturateInf: bool = False) -> None:  # noqa: N803
    """Copy src's valid region into dst at (indexRow, indexCol) (module doc)."""
    instr = "TINSERT"
    _tile(instr, "dst", dst, lowp=True)
    _tile(instr, "src", src, lowp=True)
    if preQuant is not None:
        return _quant_move("TINSERT", dst, src, indexRow, indexCol, relu, preQuant,
                           saturateInf, into=True)
    r0, c0 = _index(instr, "indexRow", indexRow), _index(instr, "indexCol", indexCol)
    R, C = src.valid_shape
    if r0 + R > dst.valid_row or c0 + C > dst.valid_col:
        raise constraint(instr, "indexRow/indexCol", f"src's valid region {(R, C)} at "
                         f"({r0}, {c0}) must lie inside dst's valid region {dst.valid_shape}",
                         (r0, c0))
    if _lowp_relu(instr, dst, src, relu) and _ops._lowp_move(instr, dst, src, r0, c0, into=True):
        X.record(instr, dst, 1, R, C)
        return
    src_op = _operand(src, dst)
    _copy(_at(dst, r0, c0), src_op, R, C, relu, dst)
    X.record(instr, dst, 1, R, C)


def TCONCAT(dst: Tile, src0: Tile, src1: Tile, *idx: Tile) -> None:  # noqa: N802
    """``dst[r, :] = src0[r, :c0] ++ src1[r, :c1]`` over dst's valid rows (module doc).

    Indexed forms ``TCONCAT(dst, src0, src1, src0Idx, src1Idx)`` and ``(dst, src0, src1,
    dstIdx, src0Idx, src1Idx)``: per row r, ``c0 = src0Idx[r, 0] // sizeof(idx dtype)``
    (likewise c1) -- a byte count divided by the index type's size, as the CPU simulator
    does (TConcat.hpp); the 6-argument form also writes ``dstIdx[r, 0] = src0Idx[r, 0] +
    src1Idx[r, 0]``.  Counts beyond a source's or dst's columns raise ConstraintError."""
    instr = "TCONCAT"
    X.tiles(instr, dst=dst, src0=src0, src1=src1)
    X._ops._same_dtype(instr, dst, "src0", src0)
    X._ops._same_dtype(instr, dst, "src1", src1)
    if idx:
        return _tconcat_idx(instr, dst, src0, src1, idx)
    R = dst.valid_row
    c0, c1 = src0.valid_col, src1.valid_col
    if src0.valid_row != R or src1.valid_row != R:
        raise constraint(instr, "valid rows", f"src0, src1 must have dst's valid rows ({R})",
                         (src0.valid_row, src1.valid_row))
    if dst.valid_col != c0 + c1:
        raise constraint(instr, "dst.validCol", f"must equal src0.validCol + src1.validCol "
                         f"({c0} + {c1})", dst.valid_col)
    a, b = _operand(src0, dst), _operand(src1, dst)
    _run_unary_to(_operand(dst), a, R, c0) if R and c0 else None
    _run_unary_to(_at(dst, 0, c0), b, R, c1) if R and c1 else None
    X.record(instr, dst)


def _tconcat_idx(instr, dst, src0, src1, idx):
    if len(idx) not in (2, 3):
        raise constraint(instr, "index tiles", "must be (src0Idx, src1Idx) or (dstIdx, "
                         "src0Idx, src1Idx)", len(idx))
    didx = idx[0] if len(idx) == 3 else None
    i0, i1 = idx[-2], idx[-1]
    for name, t in (("src0Idx", i0), ("src1Idx", i1)) + ((("dstIdx", didx),) if didx else ()):
        X.tiles(instr, **{name: t})
        X._dtype_in(instr, name, t, X.INTS)
    R = dst.valid_row
    if i0.rows < R or i1.rows < R:
        raise constraint(instr, "index tiles", f"must have >= {R} rows", (i0.rows, i1.rows))
    b0 = i0.data[:R, 0].astype(np.int64)
    b1 = i1.data[:R, 0].astype(np.int64)
    c0, c1 = b0 // i0.dtype.itemsize, b1 // i1.dtype.itemsize
    if (c0 > src0.cols).any() or (c1 > src1.cols).any() or (c0 + c1 > dst.cols).any() \
            or R > src0.rows or R > src1.rows:
        raise constraint(instr, "index tiles", "column counts must fit src0, src1 and dst",
                         (int(c0.max(initial=0)), int(c1.max(initial=0))))
    if didx is not None and didx.rows < R:
        raise constraint(instr, "dstIdx.rows", f"must be >= {R}", didx.rows)
    a, b = _operand(src0, dst), _operand(src1, dst)
    for r in range(R):                      # one kernel call per row and source
        if c0[r]:
            _run_unary_to(_at(dst, r, 0), _shift(a, src0, r), 1, int(c0[r]))
        if c1[r]:
            _run_unary_to(_at(dst, r, int(c0[r])), _shift(b, src1, r), 1, int(c1[r]))
    if didx is not None:
        didx.data[:R, 0] = (b0 + b1).astype(didx.dtype)
    X.record(instr, dst)


def _shift(op, t, r):
    buf, fmt, rs, cs = op
    return buf[r * t._rs * t.dtype.itemsize:], fmt, rs, cs


def TRESHAPE(dst: Tile, src: Tile) -> None:  # noqa: N802
    """Rebind dst to src's storage, the same bytes seen with dst's dtype and shape (module
    doc): dst and src alias afterwards.  dst, src: Tiles of one location and byte size, both
    float or both integer, both boxed or both unboxed; ConstraintError otherwise (nothing
    changes)."""
    instr = "TRESHAPE"
    _tile(instr, "dst", dst)
    _tile(instr, "src", src)
    if dst.nbytes != src.nbytes:
        raise constraint(instr, "dst size", f"must equal src's size ({src.nbytes} bytes)",
                         dst.nbytes)
    if dst.format.is_float != src.format.is_float:
        raise constraint(instr, "dst.dtype", "must be a float type exactly when src's is",
                         dst.format.name)
    if (dst.slayout == SLayout.NoneBox) != (src.slayout == SLayout.NoneBox):
        raise constraint(instr, "dst.slayout", "must be boxed exactly when src is",
                         dst.slayout.name)
    if dst.loc != src.loc:
        raise constraint(instr, "dst.loc", f"must equal src's tile type {src.loc.name}",
                         dst.loc.name)
    dst._buf = src._buf.view(np.uint8).view(dst.dtype)
    dst.addr = src.addr
    X.record(instr, dst, 1, dst.rows, dst.cols)


def _fillpad(instr, dst, src, rule):
    # ptoacc: the 1-byte low-precision formats too (docs/isa/TFILLPAD.md: "element size must
    # be 1, 2, or 4 bytes"; the A5 MX samples pad float8 Mat tiles); a byte copy, below
    lowp = (isinstance(dst, Tile) and dst.format.name not in _ops.KERNEL_FORMATS
            and dst.dtype.itemsize == 1)
    _tile(instr, "dst", dst, lowp=lowp)
    _tile(instr, "src", src, lowp=lowp)
    X._ops._same_dtype(instr, dst, "src", src)
    if rule == "same" and dst.shape != src.shape:
        raise constraint(instr, "dst shape", f"must equal src's shape {src.shape}", dst.shape)
    if rule == "expand" and (dst.rows < src.rows or dst.cols < src.cols):
        raise constraint(instr, "dst shape", f"must be at least src's shape {src.shape}",
                         dst.shape)
    if dst.valid_row == 0 or dst.valid_col == 0:
        return
    R, C = min(src.valid_row, dst.rows), min(src.valid_col, dst.cols)
    if lowp:
        # the pad of a low-precision format is code 0 for Null/Zero/Max/Min: pto-isa's A5
        # PadValueMap (include/pto/common/constants.hpp, PTO_NPU_ARCH_A5) maps every
        # PadValue of float8_e4m3/e5m2/e8m0, hifloat8 and the fp4 x2 types to 0, and the
        # CPU simulator's TFillPad takes numeric_limits<T>::max()/min(), which its MX types
        # do not specialise (T() = 0); a PadCustom keeps its low byte
        keep = src.data[:R, :C].copy()
        dst._buf.view(np.uint8)[...] = (int(dst.pad.bits) & 0xFF
                                        if isinstance(dst.pad, PadCustom) else 0)
        dst.data[:R, :C] = keep
        X.record(instr, dst, 1, dst.rows, dst.cols)
        return
    keep = _operand(src, dst)
    if src is not dst and np.may_share_memory(src._buf, dst._buf):
        keep = (src._buf.copy().view(np.uint8),) + keep[1:]
    elif src is dst:
        keep = (src._buf.copy().view(np.uint8),) + keep[1:]
    pad = X.scalar(instr, "pad", _pad_value(dst), dst.format)[1]
    _run_unary("COPY", _Whole(dst), pad, dst.rows, dst.cols)
    _run_unary_to(_operand(dst), keep, R, C)
    X.record(instr, dst, 1, dst.rows, dst.cols)


class _Whole:
    """dst seen with its whole physical shape as the valid region (for the pad fill)."""

    def __init__(self, t):
        self._buf, self.format, self.dtype = t._buf, t.format, t.dtype
        self._rs, self._cs = t._rs, t._cs


def TFILLPAD(dst: Tile, src: Tile) -> None:  # noqa: N802
    """Whole dst = src inside src's valid region, dst's pad value elsewhere (module doc);
    dst and src of one shape and dtype."""
    _fillpad("TFILLPAD", dst, src, "same")


def TFILLPAD_INPLACE(dst: Tile, src: Tile) -> None:  # noqa: N802
    """TFILLPAD where dst may be src (docs/isa/TFILLPAD_INPLACE.md)."""
    _fillpad("TFILLPAD_INPLACE", dst, src, "same")


def TFILLPAD_EXPAND(dst: Tile, src: Tile) -> None:  # noqa: N802
    """TFILLPAD into a dst at least src's shape (docs/isa/TFILLPAD_EXPAND.md)."""
    _fillpad("TFILLPAD_EXPAND", dst, src, "expand")


_ = (_run_binary,)


def _strided(op, t, r, c, step):
    """Operand of t from (r, c) whose column index advances ``step`` elements at a time."""
    buf, fmt, rs, cs = op
    off = (r * t._rs + c * t._cs) * t.dtype.itemsize
    return buf[off:], fmt, rs, cs * step


def _src_op(t, *dsts):
    """t's operand, from a copy when t shares memory with a destination (so the result does
    not depend on the order the copies run)."""
    buf, fmt, rs, cs = _operand(t)
    if any(np.may_share_memory(t._buf, d._buf) for d in dsts):
        buf = t._buf.copy().view(np.uint8)
    return buf, fmt, rs, cs


def _inter_check(instr, tiles):
    X.tiles(instr, **tiles)
    first = next(iter(tiles.values()))
    for name, t in tiles.items():
        if not t.is_row_major:
            raise constraint(instr, f"{name}.blayout", "must be BLayout.RowMajor", t.blayout.name)
        X._ops._same_dtype(instr, first, name, t)


def TINTERLEAVE(dst1: Tile, dst0: Tile, src1: Tile, src0: Tile) -> None:  # noqa: N802
    """Interleave two tiles' halves (module doc).  Equal valid shapes, an even validCol."""
    instr = "TINTERLEAVE"
    _inter_check(instr, {"dst1": dst1, "dst0": dst0, "src1": src1, "src0": src0})
    R, C = dst0.valid_shape
    for name, t in (("dst1", dst1), ("src1", src1), ("src0", src0)):
        if t.valid_shape != (R, C):
            raise constraint(instr, f"{name} valid shape", f"must equal dst0's {(R, C)}",
                             t.valid_shape)
    if C % 2:
        raise constraint(instr, "dst0.validCol", "must be even", C)
    m = C // 2
    a, b = _src_op(src0, dst0, dst1), _src_op(src1, dst0, dst1)
    if R and m:
        for d, half in ((dst0, 0), (dst1, m)):
            for k, s in ((0, a), (1, b)):
                _run_unary_to(_strided(_operand(d), d, 0, k, 2),
                              _strided(s, src0 if k == 0 else src1, 0, half, 1), R, m)
    X.record(instr, dst0, 2)


def TDEINTERLEAVE(dst1: Tile, dst0: Tile, *srcs: Tile) -> None:  # noqa: N802
    """De-interleave (module doc): ``(dst1, dst0, src1, src0)`` or ``(dst1, dst0, src)``."""
    instr = "TDEINTERLEAVE"
    R, C = dst0.valid_shape if isinstance(dst0, Tile) else (0, 0)
    if len(srcs) == 1:
        src = srcs[0]
        _inter_check(instr, {"dst1": dst1, "dst0": dst0, "src": src})
        if dst1.valid_shape != (R, C) or src.valid_row < R or src.cols < 2 * C:
            raise constraint(instr, "shapes", f"dst1 must match dst0 {(R, C)} and src hold "
                             f"{R} x {2 * C}", (dst1.valid_shape, src.valid_shape))
        s = _src_op(src, dst0, dst1)
        if R and C:
            _run_unary_to(_operand(dst0), _strided(s, src, 0, 0, 2), R, C)
            _run_unary_to(_operand(dst1), _strided(s, src, 0, 1, 2), R, C)
        X.record(instr, dst0, 2)
        return
    if len(srcs) != 2:
        raise constraint(instr, "operands", "must be (dst1, dst0, src1, src0) or "
                         "(dst1, dst0, src)", len(srcs) + 2)
    src1, src0 = srcs
    _inter_check(instr, {"dst1": dst1, "dst0": dst0, "src1": src1, "src0": src0})
    for name, t in (("dst1", dst1), ("src1", src1), ("src0", src0)):
        if t.valid_shape != (R, C):
            raise constraint(instr, f"{name} valid shape", f"must equal dst0's {(R, C)}",
                             t.valid_shape)
    if C % 2:
        raise constraint(instr, "dst0.validCol", "must be even", C)
    m = C // 2
    if R and m:
        for s_t, half in ((src0, 0), (src1, m)):
            s = _src_op(s_t, dst0, dst1)
            for d, k in ((dst0, 0), (dst1, 1)):
                _run_unary_to(_strided(_operand(d), d, 0, half, 1), _strided(s, s_t, 0, k, 2),
                              R, m)
    X.record(instr, dst0, 2)


def TSUBVIEW(dst: Tile, src: Tile, rowIdx: Int = 0, colIdx: Int = 0) -> None:  # noqa: N802,N803
    """Make dst a view of src starting at element (rowIdx, colIdx) (docs/isa/TSUBVIEW.md:
    ``dst[i, j] = src[rowIdx + i, colIdx + j]`` over dst's valid region; the CPU simulator,
    include/pto/cpu/TSubView.hpp, rebinds dst's storage to src's at offset ``rowIdx *
    RowStride + colIdx * ColStride``).  dst then aliases src: writes through either are seen by
    the other, as after TASSIGN to overlapping addresses.

    dst, src: tiles of one TileType, dtype and BLayout with the same row stride (row-major:
    the same cols; column-major: the same rows), so dst's element (i, j) is src's (rowIdx +
    i, colIdx + j); rowIdx + dst.validRow <= src.validRow and colIdx + dst.validCol <=
    src.validCol (the docs' auto-mode check, applied always).  dst's storage (rows x cols from
    the offset) must lie inside src's buffer, or inside the on-chip buffer when src was
    TASSIGNed.  Raises ConstraintError / AccessError otherwise, leaving dst unchanged."""
    instr = "TSUBVIEW"
    _tile(instr, "dst", dst)
    _tile(instr, "src", src)
    if dst.loc != src.loc:
        raise constraint(instr, "dst.loc", f"must equal src's TileType ({src.loc.name})",
                         dst.loc.name)
    X._ops._same_dtype(instr, src, "dst", dst)
    if dst.blayout != src.blayout or (dst._rs, dst._cs) != (src._rs, src._cs):
        raise constraint(instr, "dst layout", f"must have src's BLayout and strides ({src.blayout.name}, "
                         f"row stride {src._rs}, col stride {src._cs})",
                         f"{dst.blayout.name}, {dst._rs}, {dst._cs}")
    r0 = _as_int(rowIdx, "rowIdx", instr)
    c0 = _as_int(colIdx, "colIdx", instr)
    if r0 < 0 or r0 + dst.valid_row > src.valid_row:
        raise constraint(instr, "rowIdx", f"must be in [0, src.validRow - dst.validRow = "
                         f"{src.valid_row - dst.valid_row}]", r0)
    if c0 < 0 or c0 + dst.valid_col > src.valid_col:
        raise constraint(instr, "colIdx", f"must be in [0, src.validCol - dst.validCol = "
                         f"{src.valid_col - dst.valid_col}]", c0)
    off = r0 * src._rs + c0 * src._cs
    n = dst.rows * dst.cols
    if src.addr is not None:
        pool = _pool(_LOC_BUFFER[src.loc])
        start = src.addr + off * src.dtype.itemsize
        if start + n * dst.dtype.itemsize > pool.size:
            raise AccessError(f"{instr}: the view at element offset {off} of src runs past the "
                              f"on-chip buffer ({pool.size} bytes)")
        dst._buf = pool[start: start + n * dst.dtype.itemsize].view(dst.dtype)
        dst.addr = start if start % 32 == 0 else None
    else:
        if off + n > src._buf.size:
            raise AccessError(f"{instr}: dst's storage ({n} elements from offset {off}) runs past "
                              f"src's buffer of {src._buf.size} elements; TASSIGN both tiles "
                              f"(on-chip addresses) or give dst fewer rows")
        dst._buf = src._buf[off: off + n]
        dst.addr = None


# ---- TPACK (branch ptogold) ---------------------------------------------------------------
_PACK_FLOAT = {("float16", "float32"), ("bfloat16", "float32"), ("float32", "float16"),
               ("float32", "bfloat16")}


def TPACK(dst: Tile, src: Tile) -> None:  # noqa: N802
    """``dst[i, j] = (T_dst) src[i, j]`` for (i, j) in src's valid region (module doc); the
    rest of dst keeps its contents.  dst, src: row- or column-major tiles of one location
    with dst at least src's valid shape; dtype pairs: equal, integer -> wider integer whose
    range holds the source's, float16/bfloat16 <-> float32.  Raises ConstraintError
    otherwise (nothing written).  Source: docs tpack.md (no semantics given) and the CPU-sim
    test tests/cpu/st/testcase/tpack (module doc)."""
    instr = "TPACK"
    _tile(instr, "dst", dst)
    _tile(instr, "src", src)
    sn, dn = src.format.name, dst.format.name
    ok = sn == dn or (sn, dn) in _PACK_FLOAT
    if not ok and not src.format.is_float and not dst.format.is_float:
        si, di = np.iinfo(src.dtype), np.iinfo(dst.dtype)
        ok = di.min <= si.min and si.max <= di.max
    if not ok:
        raise constraint(instr, "dst.dtype", f"must be {sn}, a wider integer holding every "
                         f"{sn} value, or float16/bfloat16 <-> float32 (the narrowing rule is "
                         f"undocumented)", dn)
    if dst.loc != src.loc:
        raise constraint(instr, "dst.loc", f"must equal src's tile type {src.loc.name}",
                         dst.loc.name)
    R, C = src.valid_shape
    if dst.rows < R or dst.cols < C:
        raise constraint(instr, "dst shape", f"must hold src's valid shape {(R, C)}",
                         dst.shape)
    if R and C:
        _run_unary("COPY", dst, _operand(src, dst), R, C)
    X.record(instr, dst, 1, R, C)
