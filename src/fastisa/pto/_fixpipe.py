"""The fixpipe conversion of TSTORE / TSTORE_FP (branch ptolowp, issue 13): storing an Acc
(or Vec) tile to GM with a dtype change, an optional pre-quantisation scale and ReLU.

Sources: pto-isa docs/isa/TSTORE.md ("ACC-to-GM dtype support": the pairs and calling
conventions); the docs do not give the arithmetic or the layout of the 64-bit quantisation
word, so both follow the CPU simulator (include/pto/cpu/common.hpp ``quantize_element``,
``extract_m1_from_quant``; include/pto/cpu/TStore.hpp):

* the quantisation word ``q`` (uint64): scale M1 = the float32 of bits 0..31 for the scalar
  form (``preQuantScalar``); for the vector form (``TSTORE_FP``, one word per column of a
  row-major source, per row of a column-major one) M1 is the 19-bit float of bits 13..31
  (sign, 8 exponent bits, the top 10 mantissa bits: the float32 with its low 13 bits cut);
  offset = bits 37..45 (9 bits, unsigned), sign = bit 46 (1: int8 range, 0: uint8 range),
  shift = bits 32..35;
* ``v = float32(x) * M1`` (float32 arithmetic), then per destination:
  int8/uint8: ``clamp(nearbyint(v + offset), -128 or 0, 127 or 255)``;
  float16: ``clamp(v, -65504, 65504)`` for finite v (NaN -> 0 and +-inf -> +-65504 with
  ``saturate_inf``), rounded to nearest even; bfloat16: the same against float32's max;
  int16 (from int32): ``clamp(x >> (shift + 1), -32768, 32767)``; float32: v;
  hifloat8 / float8_e4m3 (A5): v rounded to nearest (even; HiF8 ties away);
* without quantisation: float32 -> float32/float16/bfloat16 rounded to nearest even,
  int32 -> int32;
* ReLU (``ReluPreMode.NormalRelu``) is ``max(v, 0)`` after the quantisation (before the
  cast without it).
"""

from __future__ import annotations

import enum

import ml_dtypes
import numpy as np

from ..errors import constraint
from . import _lowp_formats as L

__all__ = ["ReluPreMode", "QuantWord"]


class ReluPreMode(enum.IntEnum):
    """pto's ``ReluPreMode``: NoRelu, or NormalRelu (``max(x, 0)`` in the fixpipe)."""
    NoRelu = 0
    NormalRelu = 1


class QuantWord:
    """Helpers for the 64-bit fixpipe quantisation word (module doc)."""

    @staticmethod
    def pack(scale: float, offset: int = 0, signed: bool = True, shift: int = 0) -> int:
        """The word for ``scale`` (float32 bits 0..31), ``offset`` (9 bits), ``signed`` (bit
        46: int8 range) and ``shift`` (4 bits at 32)."""
        bits = int(np.float32(scale).view(np.uint32))
        return bits | (int(shift) & 0xF) << 32 | (int(offset) & 0x1FF) << 37 | int(bool(signed)) << 46


#: (source, destination) pairs: without quantisation and with it (docs/isa/TSTORE.md, A2A3
#: and A5 tables together; int32 -> int16 is the simulator's shift mode).
PLAIN = {("float32", "float32"), ("float32", "float16"), ("float32", "bfloat16"),
         ("int32", "int32")}
QUANT = {("float32", "int8"), ("float32", "uint8"), ("float32", "float16"),
         ("float32", "bfloat16"), ("float32", "hifloat8"), ("float32", "float8_e4m3fn"),
         ("float32", "float32"), ("int32", "int8"), ("int32", "uint8"), ("int32", "float16"),
         ("int32", "bfloat16"), ("int32", "int16")}


def _f32(a):
    return np.asarray(a, dtype=np.float32)


def convert(instr: str, x: np.ndarray, src: str, dst: str, q: np.ndarray | None, relu: bool,
            saturate_inf: bool = False) -> np.ndarray:
    """x (src values, [R, C]) -> dst values (dst's numpy dtype), q: None or uint64 words
    broadcastable to x (module doc).  Validates the pair."""
    if q is None:
        if (src, dst) not in PLAIN:
            raise constraint(instr, "(src.dtype, dst.dtype)", "must be one of "
                             f"{sorted(PLAIN)} without a quantisation parameter", (src, dst))
        v = x
        if relu:
            v = np.maximum(v, v.dtype.type(0))
        if dst == "bfloat16":
            return v.astype(ml_dtypes.bfloat16)
        return v.astype(np.dtype(dst))
    if (src, dst) not in QUANT:
        raise constraint(instr, "(src.dtype, dst.dtype)", f"must be one of {sorted(QUANT)} "
                         "with a quantisation parameter", (src, dst))
    q = np.asarray(q, dtype=np.uint64)
    if dst == "int16":
        shift = ((q >> np.uint64(32)) & np.uint64(0xF)).astype(np.int64) + 1
        v = np.clip(x.astype(np.int64) >> shift, -32768, 32767).astype(np.float32)
    else:
        m1 = (q & np.uint64(0xFFFFFFFF)).astype(np.uint32).view(np.float32)
        with np.errstate(all="ignore"):
            v = _f32(x) * m1
        if dst in ("int8", "uint8"):
            off = ((q >> np.uint64(37)) & np.uint64(0x1FF)).astype(np.float32)
            signed = ((q >> np.uint64(46)) & np.uint64(1)).astype(bool)
            with np.errstate(all="ignore"):
                r = np.rint(v + off)
            v = np.clip(r, np.where(signed, -128.0, 0.0), np.where(signed, 127.0, 255.0))
            v = np.where(np.isnan(r), 0.0, v).astype(np.float32)
        elif dst in ("float16", "bfloat16"):
            top = np.float32(65504.0) if dst == "float16" else np.finfo(np.float32).max
            fin = np.isfinite(v)
            if saturate_inf:
                v = np.where(np.isnan(v), np.float32(0), np.clip(v, -top, top))
            else:
                v = np.where(fin, np.clip(v, -top, top), v)
    if relu:
        v = np.where(v > 0, v, np.zeros_like(v))
    if dst in ("hifloat8", "float8_e4m3fn"):
        return L.encode(dst, v.astype(np.float64), 2 if dst == "hifloat8" else 1,
                        saturate=False).view(np.uint8 if dst == "hifloat8" else
                                             ml_dtypes.float8_e4m3fn)
    if dst == "bfloat16":
        return v.astype(ml_dtypes.bfloat16)
    with np.errstate(all="ignore"):
        return v.astype(np.dtype(dst))


def fp_words(instr: str, name: str, fp, first: int, n: int) -> np.ndarray:
    """Words ``first .. first + n - 1`` of an fp (Scaling) tile, cut to the vector form's
    19-bit scale.  The tile's storage holds 64-bit little-endian words in order whatever its
    declared element type (pto-isa's tests declare uint64; PTOAS programs declare f32)."""
    from ._tile import Tile
    if not isinstance(fp, Tile):
        raise constraint(instr, name, "must be a Tile of 64-bit quantisation words",
                         type(fp).__name__)
    raw = fp.buffer.view(np.uint8)
    if fp.format.name == "uint64":
        if fp.valid_row < 1 or fp.valid_col < first + n:
            raise constraint(instr, f"{name} valid shape", f"must hold {first + n} words in its "
                             "first row", fp.valid_shape)
        words = np.ascontiguousarray(fp.data[0, first:first + n])
    else:
        if not fp.is_row_major or raw.size < 8 * (first + n):
            raise constraint(instr, name, f"must be a row-major tile of at least {8 * (first + n)} "
                             "bytes (its storage read as 64-bit words)", fp.nbytes)
        words = raw[8 * first: 8 * (first + n)].copy().view(np.uint64)
    return vector_words(words)


def vector_words(q: np.ndarray) -> np.ndarray:
    """The vector form's words with M1 cut to its 19 bits (bits 13..31 of the word)."""
    q = np.asarray(q, dtype=np.uint64)
    return (q & ~np.uint64(0x1FFF)) if q.size else q


def store(instr, gt, tile, scalar, fp, relu, saturate_inf) -> None:
    """TSTORE / TSTORE_FP through the fixpipe (module doc)."""
    from .. import cost
    from ._tile import GlobalTensor, Tile, TileType, _as_int, _check_tile, _mte_cycles
    _check_tile(instr, "tile", tile)
    if not isinstance(gt, GlobalTensor):
        raise constraint(instr, "dst", "must be a GlobalTensor", type(gt).__name__)
    if tile.loc not in (TileType.Acc, TileType.Vec):
        raise constraint(instr, "tile.loc", "must be TileType.Acc or TileType.Vec for the "
                         "fixpipe forms", tile.loc.name)
    try:
        relu = ReluPreMode(relu)
    except ValueError:
        raise constraint(instr, "reluPreMode", "must be ReluPreMode.NoRelu or NormalRelu",
                         relu) from None
    from ._tile import _check_view_shape      # ptoacc: TSTORE's rule (view >= valid)
    _check_view_shape(instr, "dst", gt, tile)
    if not gt.array.flags.writeable:
        raise constraint(instr, "dst.array", "must be writeable", "read-only array")
    R, C = tile.valid_shape
    q = None
    if scalar is not None:
        word = _as_int(scalar, "preQuantScalar", instr)
        if not 0 <= word < 1 << 64:
            raise constraint(instr, "preQuantScalar", "must be a 64-bit unsigned word", word)
        q = np.uint64(word)
    elif fp is not None:
        n = C if tile.is_row_major else R
        words = fp_words(instr, "fp", fp, 0, n)
        q = words.reshape(1, C) if tile.is_row_major else words.reshape(R, 1)
    out = convert(instr, tile.valid, tile.format.name, gt.format.name, q,
                  relu == ReluPreMode.NormalRelu, bool(saturate_inf))
    if gt.format.np_dtype != out.dtype:
        out = out.view(gt.format.np_dtype)
    view = gt.view2d()
    if np.shares_memory(view, gt.array):
        np.copyto(view[:R, :C], out)
    else:
        if view.shape != (R, C):        # a larger view: keep its other elements
            view = view.copy()
            view[:R, :C] = out
            out = view
        gt._write2d(out)
    nbytes = R * C * gt.format.itemsize
    cost.record("MTE3", instr, _mte_cycles(nbytes), reads=[tile], writes=[gt], nbytes=nbytes)
