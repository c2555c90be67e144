"""PTO tile instructions: validation in Python, one C kernel per operation shape.

Every instruction iterates over dst's valid region ``R x C`` and leaves the rest of dst
untouched (the PTO ISA docs and CPU simulator (github.com/hw-native-sys/pto-isa, docs/isa/ and include/pto/cpu/)).  Kernels: ``fastisa._kernels.tile`` over
``csrc/fastisa/tile.h``.  Engine cycles recorded into :mod:`fastisa.cost` are estimates
(see :func:`vector_cycles`, :func:`cube_cycles`), not measurements.
"""

from __future__ import annotations

import enum
import math
import numbers
import os

import numpy as np

from .. import cost
from .. import dtypes as _dt
from .. import plans as _plans
from .. import _matmul_isa as _mm_isa
from .._kernels import tile as _k
from ..errors import ConstraintError, OverlapError, constraint
from ._tile import KERNEL_FORMATS, BLayout, Tile, TileType, _State

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .._types import Real
    from ._convert import SaturationMode

__all__ = [
    "RecipAlgorithm", "RoundMode", "vector_cycles", "cube_cycles",
    "TRECIP", "TEXP", "TLOG", "TSQRT", "TRSQRT", "TABS", "TNEG", "TRELU",
    "TADD", "TSUB", "TMUL", "TDIV", "TMAX", "TMIN",
    "TADDS", "TSUBS", "TMULS", "TDIVS", "TMAXS", "TMINS", "TEXPANDS",
    "TROWMAX", "TROWMIN", "TROWSUM", "TCOLMAX", "TCOLMIN", "TCOLSUM",
    "TROWEXPAND", "TROWEXPANDADD", "TROWEXPANDSUB", "TROWEXPANDMUL", "TROWEXPANDDIV",
    "TROWEXPANDMAX", "TROWEXPANDMIN", "TROWEXPANDEXPDIF",
    "TCOLEXPAND", "TCOLEXPANDADD", "TCOLEXPANDSUB", "TCOLEXPANDMUL", "TCOLEXPANDDIV",
    "TCOLEXPANDMAX", "TCOLEXPANDMIN", "TCOLEXPANDEXPDIF",
    "TCVT", "TMATMUL", "TMATMUL_ACC", "TMATMUL_BIAS", "TMOV", "TTRANS",
    "set_num_threads", "get_num_threads",
]

_THREADS = [1]


def set_num_threads(n: int) -> None:
    """Split tiles of at least 65536 elements into ``n`` bands of rows run on ``n`` threads
    (elementwise, row-expand, row reductions, TCVT).  Results never depend on ``n``.  The
    default is ``FASTISA_THREADS`` if set, else min(4, number of CPUs)."""
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)):
        raise constraint("set_num_threads", "n", "must be an integer >= 1", n)
    n = int(n)
    if not 1 <= n <= 1024:
        raise constraint("set_num_threads", "n", "must be in [1, 1024]", n)
    _THREADS[0] = n
    _k.set_threads(n)


def get_num_threads() -> int:
    return _THREADS[0]


set_num_threads(int(os.environ.get("FASTISA_THREADS", "0") or 0) or min(4, os.cpu_count() or 1))

# matmul15 branch: TMATMUL's instruction set, forced by tests or FASTISA_MATMUL_ISA
def _set_matmul_isa(name: str = "auto") -> str:
    """The instruction set of TMATMUL's float kernel (``csrc/fastisa/tile.h``,
    fi_tile_set_mm_isa): ``"auto"`` (the best the CPU has), ``"avx512"``, ``"avx2"`` or
    ``"scalar"`` (the portable build); lowered to what the CPU has; returns the level in
    use.  Every level gives the same bits (one fma chain per element, k ascending)."""
    return _mm_isa.set_level(_k.set_matmul_isa, name, lambda n: constraint(
        "set_matmul_isa", "name", f"must be one of {sorted(_mm_isa.LEVELS)}", n))


if _mm_isa.from_env():
    _set_matmul_isa(_mm_isa.from_env())


class RecipAlgorithm(enum.IntEnum):
    """TRECIP's ``PrecisionType`` (the PTO ISA docs, page TRECIP (github.com/hw-native-sys/pto-isa, docs/isa/TRECIP.md)).  HIGH_PRECISION has effect only on A5
    (Ascend 950); fastisa computes the correctly rounded reciprocal for both."""
    DEFAULT = 0
    HIGH_PRECISION = 1


class RoundMode(enum.IntEnum):
    """TCVT rounding modes.  CAST_NONE and CAST_RINT: round to nearest, ties to even;
    CAST_ROUND: nearest, ties away from zero; CAST_FLOOR: toward -inf; CAST_CEIL: toward
    +inf; CAST_TRUNC: toward zero; CAST_ODD: round to odd (inexact results get an odd last
    bit)."""
    CAST_NONE = 0
    CAST_RINT = 1
    CAST_ROUND = 2
    CAST_FLOOR = 3
    CAST_CEIL = 4
    CAST_TRUNC = 5
    CAST_ODD = 6

    @classmethod
    def from_name(cls, name: str) -> "RoundMode":
        """``"ROUND"``, ``"CAST_ROUND"`` or ``"round"`` -> RoundMode.CAST_ROUND."""
        key = str(name).strip().upper()
        if not key.startswith("CAST_"):
            key = "CAST_" + key
        try:
            return cls[key]
        except KeyError:
            raise constraint("TCVT", "mode", f"must be one of {[m.name for m in cls]}", name) from None


# ---- kernel op codes (mirror enum fi_tile_op in tile.h) ----------------------------------
_OP = {n: getattr(_k, "OP_" + n) for n in (
    "COPY", "ABS", "NEG", "RELU", "RECIP", "EXP", "LOG", "SQRT", "RSQRT",
    "ADD", "SUB", "MUL", "DIV", "MAX", "MIN", "EXPDIF", "SUM")}

_F = ("float32", "float16")
_FB = ("float32", "float16", "bfloat16")
_SIGNED = ("float32", "float16", "bfloat16", "int32", "int16", "int8")
_ALL = ("float32", "float16", "bfloat16", "int32", "int16", "int8", "uint8", "uint16", "uint32")
_ROWEXP = ("float32", "float16", "int32", "int16", "uint32", "uint16")

#: Estimated cost factor per op (vector repeats per 256 bytes).
_FACTOR = {"COPY": 1, "ABS": 1, "NEG": 1, "RELU": 1, "ADD": 1, "SUB": 1, "MUL": 1, "MAX": 1,
           "MIN": 1, "SUM": 1, "RECIP": 2, "DIV": 2, "EXP": 2, "LOG": 2, "SQRT": 2, "RSQRT": 2,
           "EXPDIF": 3}
VECTOR_STARTUP = 14


def vector_cycles(rows: int, cols: int, itemsize: int, factor: int = 1) -> int:
    """Estimated Vector-engine cycles (an estimate, not a measurement): a start-up of 14
    cycles plus ``factor`` cycles per 256-byte repeat, one repeat per 256 bytes of each row
    (``rows * ceil(cols * itemsize / 256)``); factor 1 for arithmetic, 2 for division and
    transcendentals, 3 for EXPDIF (a SUB and an EXP)."""
    return VECTOR_STARTUP + factor * rows * max(1, math.ceil(cols * itemsize / 256))


def cube_cycles(m: int, k: int, n: int, itemsize: int) -> int:
    """Estimated Cube-engine cycles for an M x K x N matmul (an estimate): a start-up of 32
    plus one cycle per 16 x 16 x (32 / itemsize) fractal step."""
    kstep = max(1, 32 // itemsize)
    return 32 + math.ceil(m / 16) * math.ceil(n / 16) * math.ceil(k / kstep)


# ---- validation helpers -----------------------------------------------------------------
def _tile(instr, name, t, lowp: bool = False) -> Tile:
    """t must be a Tile; unless ``lowp``, of one of the C tile kernels' formats (the
    low-precision and 64-bit formats reach only the instructions that opt in: branch
    ptolowp's memory-safety rule, fastisa.pto._lowp_formats)."""
    if not isinstance(t, Tile):
        raise constraint(instr, name, "must be a Tile", type(t).__name__)
    if not lowp and t.format.name not in KERNEL_FORMATS:
        raise constraint(instr, f"{name}.dtype", f"must be one of {list(KERNEL_FORMATS)} "
                         "(low-precision and 64-bit tiles are for TLOAD/TSTORE, TMOV, TTRANS, "
                         "TEXTRACT, TINSERT, TCVT and the MX/quantising instructions)",
                         t.format.name)
    return t


def _vec(instr, name, t) -> None:
    if t.loc != TileType.Vec:
        raise constraint(instr, f"{name}.loc", "must be TileType.Vec", t.loc.name)


def _row_major(instr, name, t) -> None:
    if t.blayout != BLayout.RowMajor:
        raise constraint(instr, f"{name}.blayout", "must be BLayout.RowMajor", t.blayout.name)


def _dtype_in(instr, name, t, allowed) -> None:
    if t.format.name not in allowed:
        raise constraint(instr, f"{name}.dtype", f"must be one of {list(allowed)}", t.format.name)


def _same_dtype(instr, dst, name, src) -> None:
    if src.format.name != dst.format.name:
        raise constraint(instr, f"{name}.dtype", f"must equal dst.dtype ({dst.format.name})",
                         src.format.name)


def _same_valid(instr, dst, name, src) -> None:
    if src.valid_shape != dst.valid_shape:
        raise constraint(instr, f"{name} valid shape", f"must equal dst's valid shape "
                         f"{dst.valid_shape}", src.valid_shape)


def _ptr(t: Tile) -> int:
    return t._buf.__array_interface__["data"][0]


def _same_memory(a: Tile, b: Tile) -> bool:
    return np.may_share_memory(a._buf, b._buf)


def _operand(t: Tile, dst: Tile | None = None, rs=None, cs=None):
    """(uint8 buffer, format code, row stride, col stride) of a tile, in elements.  A source
    that overlaps dst without being exactly dst's storage is copied first, so the result
    never depends on the order the kernel walks the tile."""
    if t.format.name not in KERNEL_FORMATS:
        # never let a format the C kernels do not know reach them (they would read it with
        # the wrong element width); instructions validate first, this is the last guard
        raise ConstraintError(f"fastisa.pto: a {t.format.name} tile cannot be passed to a C "
                              f"tile kernel (formats {list(KERNEL_FORMATS)})")
    buf = t._buf
    rs = t._rs if rs is None else rs
    cs = t._cs if cs is None else cs
    # (t may be dst itself, read in another order: TTRANS(x, x) needs the copy too)
    if dst is not None and np.may_share_memory(buf, dst._buf):
        same = (_ptr(t) == _ptr(dst) and t.dtype == dst.dtype and rs == dst._rs
                and cs == dst._cs)
        if not same:
            buf = buf.copy()
    return buf.view(np.uint8), t.format.code, rs, cs


def _scalar_array(instr, name, value, fmt):
    """The scalar converted to the tile's element type (``TileSrc::DType``), as a
    1-element array; floats round to nearest even, integers must be representable."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Real, np.generic)):
        raise constraint(instr, name, "must be a real number", value)
    if fmt.is_float:
        v = np.array([value], dtype=np.float64)
        if fmt.name == "bfloat16":
            # one rounding from double: round to odd in float32 (24 >= 8 + 2 bits), then RNE
            f = v.astype(np.float32)
            if np.isfinite(f[0]) and float(f[0]) != v[0] and (f.view(np.uint32)[0] & 1) == 0:
                f = np.nextafter(f, np.float32(np.inf) if v[0] > f[0] else np.float32(-np.inf))
            return f.astype(fmt.np_dtype)
        return v.astype(fmt.np_dtype)   # numpy rounds double -> float16/float32 once
    v = float(value)
    if not v.is_integer():
        raise constraint(instr, name, f"must be an integer for a {fmt.name} tile", value)
    info = np.iinfo(fmt.np_dtype)
    if not info.min <= int(v) <= info.max:
        raise constraint(instr, name, f"must be in [{info.min}, {info.max}] for {fmt.name}", value)
    return np.array([int(v)], dtype=fmt.np_dtype)


def _scalar_operand(arr, fmt):
    return arr.view(np.uint8), fmt.code, 0, 0


def _check_div(instr, name, arr, fmt, scalar=False) -> None:
    """Integer division by zero is always an error (no IEEE result); float division by zero
    is an error only in debug mode (set_debug / FASTISA_PTO_DEBUG)."""
    if not fmt.is_float or _State.debug:
        a = np.asarray(arr)
        if a.size and not np.all(a != 0):
            what = "scalar" if scalar else f"{int(np.count_nonzero(a == 0))} element(s) of {name}"
            why = ("integer division by zero" if not fmt.is_float
                   else "division by zero (debug mode)")
            raise ConstraintError(f"{instr}: {name} must be nonzero ({why}), got 0 in {what}")


def _record(instr, dst: Tile, op: str, rows=None, cols=None) -> None:
    r = dst.valid_row if rows is None else rows
    c = dst.valid_col if cols is None else cols
    cost.record("Vector", instr, vector_cycles(r, c, dst.dtype.itemsize, _FACTOR[op]))


def _run_unary(op, dst, src_op, R, C):
    if R and C:
        d = _operand(dst)
        _k.unary(_OP[op], d[0], d[1], d[2], d[3], *src_op, R, C)


def _run_binary(op, dst, a_op, a_vc, b_op, b_vc, R, C):
    if R and C:
        d = _operand(dst)
        _k.binary(_OP[op], d[0], d[1], d[2], d[3], *a_op, a_vc, *b_op, b_vc, R, C)


# ---- per-signature plans (issue 15, speed family; see fastisa.plans) ----------------------
# The elementwise helpers below first try the plan of their signature (fastisa._kernels.tile
# .hit, False when there is none or the call needs the full path); a miss runs every
# check, and a call that passed them stores the plan.  Hashing cannot fail: the key is
# bytes of identities and integers.  Division
# (zero divisors are checked per value, float ones only in debug mode) and TRECIP/TRSQRT
# never have plans.
_PLANS: dict = _plans.register({})
_PLAN_ON = _plans.ON
_NO_PLAN_OPS = ("DIV", "RECIP", "RSQRT")


def _replay(dst, engine, instr, cycles):
    """cost.record from a frame shaped like _record's (the profile infers operands from it)."""
    cost.record(engine, instr, cycles)


def _plan_store(head, op, nsrc, rev, dst, srcs):
    """After a successful full-path call: store the signature's plan."""
    if op in _NO_PLAN_OPS or type(dst) is not Tile or any(type(s) is not Tile for s in srcs):
        return
    R, C = dst.valid_shape
    rec = ("Vector", head[0], vector_cycles(R, C, dst.dtype.itemsize, _FACTOR[op]))
    key = _k.tile_key(head, dst, *srcs)
    plan = _k.TilePlan(_OP[op], nsrc, int(rev), R, C, dst, srcs, rec,
                       (head, dst.format, [s.format for s in srcs]))
    _plans.store(_PLANS, key, plan)


_k.set_plan_env(Tile, _PLANS, cost.RECORD_HOOKS, cost._ACTIVE, _scalar_array,
                _dt.lookup("float32").code, _replay)


# Plan heads of the public instructions (speed2 branch, issue 15): the same objects on every
# call, since plan keys hold the head's objects by identity; with cost recording idle the
# public function runs the plan itself (fastisa._kernels.tile.hit_idle), saving a frame.
_F_BF16 = _F + ("bfloat16",)
_H_TSQRT = ("TSQRT", "SQRT", _F_BF16, False)
_H_TEXP = ("TEXP", "EXP", _F, True)
_H_TLOG = ("TLOG", "LOG", _F, False)
_H_TABS = ("TABS", "ABS", _SIGNED, False)
_H_TNEG = ("TNEG", "NEG", _SIGNED, False)
_H_TRELU = ("TRELU", "RELU", _SIGNED, False)
_H_TADD = ("TADD", "ADD", _ALL)
_H_TSUB = ("TSUB", "SUB", _ALL)
_H_TMUL = ("TMUL", "MUL", _ALL)
_H_TMAX = ("TMAX", "MAX", _ALL)
_H_TMIN = ("TMIN", "MIN", _ALL)
_H_TADDS = ("TADDS", "ADD", True, False)
_H_TSUBS = ("TSUBS", "SUB", False, False)
_H_TMULS = ("TMULS", "MUL", True, False)
_H_TMAXS = ("TMAXS", "MAX", True, False)
_H_TMINS = ("TMINS", "MIN", False, False)


# ---- elementwise unary --------------------------------------------------------------------
def _unary(instr, op, dst, src, allowed, row_major=False):
    if _PLAN_ON[0] and op not in _NO_PLAN_OPS and _k.hit((instr, op, allowed, row_major), dst,
                                                         src):
        return
    _tile(instr, "dst", dst)
    _tile(instr, "src", src)
    _vec(instr, "dst", dst)
    _vec(instr, "src", src)
    _dtype_in(instr, "dst", dst, allowed)
    _same_dtype(instr, dst, "src", src)
    if row_major:
        _row_major(instr, "dst", dst)
        _row_major(instr, "src", src)
    _same_valid(instr, dst, "src", src)
    if op == "RSQRT":
        _check_div(instr, "src", src.valid, src.format)
    R, C = dst.valid_shape
    _run_unary(op, dst, _operand(src, dst), R, C)
    _record(instr, dst, op)
    if _PLAN_ON[0]:
        _plan_store((instr, op, allowed, row_major), op, 1, False, dst, (src,))


def TRECIP(dst: Tile, src: Tile,  # noqa: N802
           precision: RecipAlgorithm | int = RecipAlgorithm.DEFAULT) -> None:
    """``dst[i, j] = 1 / src[i, j]`` over dst's valid region (the PTO ISA docs, page TRECIP (github.com/hw-native-sys/pto-isa, docs/isa/TRECIP.md)).

    dst, src: Vec tiles, row-major, the same dtype (float32, float16, int32 or int16) and
    equal valid shapes.  Floats: the correctly rounded IEEE reciprocal (1/0 = +inf,
    1/-0 = -inf; ConstraintError in debug mode).  Integers: ``TDIVS(dst, 1, src)``, integer
    division truncating toward zero (0 for |x| > 1); a zero element is a ConstraintError.
    ``precision``: RecipAlgorithm.DEFAULT or HIGH_PRECISION; accepted on every target and
    documented as having effect only on A5 (Ascend 950PR/950DT); fastisa gives the same
    correctly rounded result for both.  On A2/A3 (the default target) dst and src may not be
    the same memory (OverlapError).  Raises ConstraintError for any other violation.
    """
    instr = "TRECIP"
    _tile(instr, "dst", dst)
    _tile(instr, "src", src)
    try:
        RecipAlgorithm(precision)
    except ValueError:
        raise constraint(instr, "precision", "must be RecipAlgorithm.DEFAULT or HIGH_PRECISION",
                         precision) from None
    for name, t in (("dst", dst), ("src", src)):
        _vec(instr, name, t)
        _row_major(instr, name, t)
    _dtype_in(instr, "dst", dst, ("float32", "float16", "int32", "int16"))
    _same_dtype(instr, dst, "src", src)
    _same_valid(instr, dst, "src", src)
    if _State.target == "A2A3" and _same_memory(dst, src):
        raise OverlapError(f"{instr}: dst and src must not be the same memory on A2/A3 "
                           f"(the PTO ISA docs, page TRECIP (github.com/hw-native-sys/pto-isa, docs/isa/TRECIP.md)), got overlapping tiles")
    _check_div(instr, "src", src.valid, src.format)
    R, C = dst.valid_shape
    if dst.format.is_float:
        _run_unary("RECIP", dst, _operand(src, dst), R, C)
    else:
        one = _scalar_array(instr, "1", 1, dst.format)
        _run_binary("DIV", dst, _scalar_operand(one, dst.format), 1 << 30,
                    _operand(src, dst), 1 << 30, R, C)
    _record(instr, dst, "RECIP")


def TEXP(dst: Tile, src: Tile) -> None:  # noqa: N802
    """``dst = exp(src)`` over dst's valid region, computed in float64 and rounded once to
    the dtype (float32 or float16).  Vec, row-major, equal valid shapes."""
    if _PLAN_ON[0] and _k.hit_idle(_H_TEXP, dst, src):   # no frame needed
        return
    _unary("TEXP", "EXP", dst, src, _F, row_major=True)


_LOG_INTS = ("int32", "int16", "int8", "uint32", "uint16", "uint8")


def TLOG(dst: Tile, src: Tile) -> None:  # noqa: N802
    """``dst = ln(src)`` (float64, rounded once); float32/float16 Vec tiles, equal valid
    shapes.  ln(0) = -inf, ln(x<0) = NaN.

    Integer tiles (int32/int16/int8/uint32/uint16/uint8): the docs (docs/isa/TLOG.md) list
    float/half as the NPU implementations' check; pto-isa's CPU simulator also takes integers
    (include/pto/cpu/ElementOp.h: ``static_cast<T>(std::log((double)x))``, truncation toward
    zero) and its own TLOG test uses int32, so fastisa accepts them with that rule.  An
    element <= 0 has no integer logarithm (the cast is undefined in C++): ConstraintError,
    nothing written."""
    if isinstance(dst, Tile) and isinstance(src, Tile) and dst.format.name in _LOG_INTS:
        _same_dtype("TLOG", dst, "src", src)
        _same_valid("TLOG", dst, "src", src)
        v = src.valid
        if v.size and not (v > 0).all():
            raise constraint("TLOG", "src", "integer elements must be > 0 (the log of x <= 0 "
                             "has no integer value)", int(v[v <= 0].flat[0]))
        _unary("TLOG", "LOG", dst, src, _LOG_INTS)
        return
    if _PLAN_ON[0] and _k.hit_idle(_H_TLOG, dst, src):   # no frame needed
        return
    _unary("TLOG", "LOG", dst, src, _F)


def TSQRT(dst: Tile, src: Tile) -> None:  # noqa: N802
    """``dst = sqrt(src)`` (correctly rounded: sqrt in float64 rounded once); float32/float16
    Vec tiles, and bfloat16 (the docs, docs/isa/TSQRT.md, list float/half as the NPU check;
    the CPU simulator's TSQRT, include/pto/cpu/TSqrt.hpp, also accepts bfloat16 and pto-isa's
    TSQRT test uses it)."""
    if _PLAN_ON[0] and _k.hit_idle(_H_TSQRT, dst, src):   # no frame needed
        return
    _unary("TSQRT", "SQRT", dst, src, _F_BF16)


def TRSQRT(dst: Tile, src: Tile, tmp: Tile | None = None) -> None:  # noqa: N802
    """``dst = 1 / sqrt(src)`` (float64, rounded once); float32/float16 Vec tiles.  A zero
    element is a ConstraintError in debug mode (+inf otherwise).  ``tmp``: the 3-argument
    form's scratch tile (docs/isa/TRSQRT.md: accepted by the interface, not used); a Vec
    Tile when given, never written."""
    if tmp is not None:
        _tile("TRSQRT", "tmp", tmp)
        _vec("TRSQRT", "tmp", tmp)
    _unary("TRSQRT", "RSQRT", dst, src, _F)


def TABS(dst: Tile, src: Tile) -> None:  # noqa: N802
    """``dst = |src|`` (exact; integers wrap, so |INT_MIN| = INT_MIN)."""
    if _PLAN_ON[0] and _k.hit_idle(_H_TABS, dst, src):   # no frame needed
        return
    _unary("TABS", "ABS", dst, src, _SIGNED)


def TNEG(dst: Tile, src: Tile) -> None:  # noqa: N802
    """``dst = -src`` (exact; integers wrap)."""
    if _PLAN_ON[0] and _k.hit_idle(_H_TNEG, dst, src):   # no frame needed
        return
    _unary("TNEG", "NEG", dst, src, _SIGNED)


def TRELU(dst: Tile, src: Tile) -> None:  # noqa: N802
    """``dst = src > 0 ? src : 0`` (so -0 and NaN give +0)."""
    if _PLAN_ON[0] and _k.hit_idle(_H_TRELU, dst, src):   # no frame needed
        return
    _unary("TRELU", "RELU", dst, src, _SIGNED)


# ---- elementwise binary -------------------------------------------------------------------
_BIG = 1 << 30   # "column modulus" meaning no wrap


def _binary(instr, op, dst, src0, src1, allowed=_ALL):
    if _PLAN_ON[0] and op not in _NO_PLAN_OPS and _k.hit((instr, op, allowed), dst, src0, src1):
        return
    for name, t in (("dst", dst), ("src0", src0), ("src1", src1)):
        _tile(instr, name, t)
        _vec(instr, name, t)
    _dtype_in(instr, "dst", dst, allowed)
    _same_dtype(instr, dst, "src0", src0)
    _same_dtype(instr, dst, "src1", src1)
    _same_valid(instr, dst, "src0", src0)
    _same_valid(instr, dst, "src1", src1)
    if op == "DIV":
        _check_div(instr, "src1", src1.valid, src1.format)
    R, C = dst.valid_shape
    _run_binary(op, dst, _operand(src0, dst), _BIG, _operand(src1, dst), _BIG, R, C)
    _record(instr, dst, op)
    if _PLAN_ON[0]:
        _plan_store((instr, op, allowed), op, 2, False, dst, (src0, src1))


def TADD(dst: Tile, src0: Tile, src1: Tile) -> None:  # noqa: N802
    """``dst = src0 + src1`` over dst's valid region; Vec tiles, one dtype, equal valid shapes.
    Floats are correctly rounded in the dtype (float16/bfloat16 through float32, rounded
    once); integers wrap."""
    if _PLAN_ON[0] and _k.hit_idle(_H_TADD, dst, src0, src1):   # no frame needed
        return
    _binary("TADD", "ADD", dst, src0, src1)


def TSUB(dst: Tile, src0: Tile, src1: Tile) -> None:  # noqa: N802
    """``dst = src0 - src1`` (as TADD)."""
    if _PLAN_ON[0] and _k.hit_idle(_H_TSUB, dst, src0, src1):   # no frame needed
        return
    _binary("TSUB", "SUB", dst, src0, src1)


def TMUL(dst: Tile, src0: Tile, src1: Tile) -> None:  # noqa: N802
    """``dst = src0 * src1`` (as TADD)."""
    if _PLAN_ON[0] and _k.hit_idle(_H_TMUL, dst, src0, src1):   # no frame needed
        return
    _binary("TMUL", "MUL", dst, src0, src1)


def TDIV(dst: Tile, src0: Tile, src1: Tile) -> None:  # noqa: N802
    """``dst = src0 / src1`` (floats: IEEE, x/0 = +-inf or NaN, ConstraintError in debug mode;
    integers: truncating, a zero divisor is a ConstraintError)."""
    _binary("TDIV", "DIV", dst, src0, src1)


def TMAX(dst: Tile, src0: Tile, src1: Tile) -> None:  # noqa: N802
    """``dst = std::max(src0, src1)`` = ``src0 < src1 ? src1 : src0``."""
    if _PLAN_ON[0] and _k.hit_idle(_H_TMAX, dst, src0, src1):   # no frame needed
        return
    _binary("TMAX", "MAX", dst, src0, src1)


def TMIN(dst: Tile, src0: Tile, src1: Tile) -> None:  # noqa: N802
    """``dst = std::min(src0, src1)`` = ``src1 < src0 ? src1 : src0``."""
    if _PLAN_ON[0] and _k.hit_idle(_H_TMIN, dst, src0, src1):   # no frame needed
        return
    _binary("TMIN", "MIN", dst, src0, src1)


# ---- tile / scalar ------------------------------------------------------------------------
def _tile_scalar(instr, op, dst, src, scalar, row_major, reverse=False):
    if _PLAN_ON[0] and op not in _NO_PLAN_OPS and _k.hit((instr, op, row_major, reverse), dst,
                                                         src, None, scalar):
        return
    _tile(instr, "dst", dst)
    _tile(instr, "src", src)
    _vec(instr, "dst", dst)
    _vec(instr, "src", src)
    if row_major:
        _row_major(instr, "dst", dst)
        _row_major(instr, "src", src)
    _dtype_in(instr, "dst", dst, _ALL)
    _same_dtype(instr, dst, "src", src)
    _same_valid(instr, dst, "src", src)
    s = _scalar_array(instr, "scalar", scalar, src.format)
    if op == "DIV":
        if reverse:
            _check_div(instr, "src", src.valid, src.format)
        else:
            _check_div(instr, "scalar", s, src.format, scalar=True)
    R, C = dst.valid_shape
    sop = _scalar_operand(s, src.format)
    top = _operand(src, dst)
    if reverse:
        _run_binary(op, dst, sop, _BIG, top, _BIG, R, C)
    else:
        _run_binary(op, dst, top, _BIG, sop, _BIG, R, C)
    _record(instr, dst, op)
    if _PLAN_ON[0]:
        _plan_store((instr, op, row_major, reverse), op, 3, reverse, dst, (src,))


def TADDS(dst: Tile, src: Tile, scalar: Real) -> None:  # noqa: N802
    """``dst = src + scalar``; the scalar is first converted to src's dtype (RNE).  Vec,
    row-major, equal valid shapes."""
    if _PLAN_ON[0] and _k.hit_idle(_H_TADDS, dst, src, None, scalar):   # no frame needed
        return
    _tile_scalar("TADDS", "ADD", dst, src, scalar, True)


def TSUBS(dst: Tile, src: Tile, scalar: Real) -> None:  # noqa: N802
    """``dst = src - scalar`` (Vec; any layout)."""
    if _PLAN_ON[0] and _k.hit_idle(_H_TSUBS, dst, src, None, scalar):   # no frame needed
        return
    _tile_scalar("TSUBS", "SUB", dst, src, scalar, False)


def TMULS(dst: Tile, src: Tile, scalar: Real) -> None:  # noqa: N802
    """``dst = src * scalar`` (Vec, row-major)."""
    if _PLAN_ON[0] and _k.hit_idle(_H_TMULS, dst, src, None, scalar):   # no frame needed
        return
    _tile_scalar("TMULS", "MUL", dst, src, scalar, True)


def TDIVS(dst: Tile, a: Tile | Real, b: Tile | Real) -> None:  # noqa: N802
    """Tile/scalar ``TDIVS(dst, src, scalar)``: ``dst = src / scalar``; scalar/tile
    ``TDIVS(dst, scalar, src)``: ``dst = scalar / src``.  Vec, row-major.  Division by zero
    as TDIV."""
    if isinstance(a, Tile):
        _tile_scalar("TDIVS", "DIV", dst, a, b, True)
    else:
        _tile_scalar("TDIVS", "DIV", dst, b, a, True, reverse=True)


def TMAXS(dst: Tile, src: Tile, scalar: Real) -> None:  # noqa: N802
    """``dst = std::max(src, scalar)`` (Vec, row-major)."""
    if _PLAN_ON[0] and _k.hit_idle(_H_TMAXS, dst, src, None, scalar):   # no frame needed
        return
    _tile_scalar("TMAXS", "MAX", dst, src, scalar, True)


def TMINS(dst: Tile, src: Tile, scalar: Real) -> None:  # noqa: N802
    """``dst = std::min(src, scalar)`` (Vec; any layout)."""
    if _PLAN_ON[0] and _k.hit_idle(_H_TMINS, dst, src, None, scalar):   # no frame needed
        return
    _tile_scalar("TMINS", "MIN", dst, src, scalar, False)


def TEXPANDS(dst: Tile, scalar: Real) -> None:  # noqa: N802
    """``dst[i, j] = scalar`` (the scalar converted to dst's dtype): a Vec tile over its valid
    region; a Mat tile over its whole ``Rows x Cols``, whose ``Rows * Cols * sizeof(T) / 32``
    must be in [1, 32767] (pto-isa docs/isa/TEXPANDS.md "Valid region": "For TileType::Mat:
    The op fills dst over TileData::Rows / TileData::Cols"; ptoacc branch)."""
    instr = "TEXPANDS"
    _tile(instr, "dst", dst)
    if dst.loc == TileType.Mat:
        _dtype_in(instr, "dst", dst, _EXPANDS_MAT)
        n = dst.rows * dst.cols * dst.dtype.itemsize // 32
        if not 1 <= n <= 32767:
            raise constraint(instr, "dst", "must have Rows * Cols * sizeof(T) / 32 in [1, "
                             "32767] for a Mat tile", n)
        s = _scalar_array(instr, "scalar", scalar, dst.format)
        dst._buf[...] = s[0]
        _record(instr, dst, "COPY", dst.rows, dst.cols)
        return
    _vec(instr, "dst", dst)
    s = _scalar_array(instr, "scalar", scalar, dst.format)
    R, C = dst.valid_shape
    _run_unary("COPY", dst, _scalar_operand(s, dst.format), R, C)
    _record(instr, dst, "COPY")


#: TEXPANDS's Mat dtypes (pto-isa docs/isa/TEXPANDS.md; int64/uint64 on A5 only are not
#: tile formats of the vector kernels)
_EXPANDS_MAT = ("uint8", "int8", "uint16", "int16", "uint32", "int32", "float16", "bfloat16",
                "float32")


# ---- reductions ---------------------------------------------------------------------------
_SUM_PAIRS = {("float16", "float16"), ("bfloat16", "bfloat16"), ("float16", "float32"),
              ("bfloat16", "float32"), ("float32", "float32"), ("int16", "int16"),
              ("int16", "int32"), ("int32", "int32")}
_MAXMIN = ("float32", "float16", "bfloat16", "int32", "int16", "int8", "uint8", "uint16", "uint32")


def _reduce_dtypes(instr, op, dst, src):
    if op == "SUM":
        if (src.format.name, dst.format.name) not in _SUM_PAIRS:
            raise constraint(instr, "(src.dtype, dst.dtype)",
                             f"must be one of {sorted(_SUM_PAIRS)}",
                             (src.format.name, dst.format.name))
    else:
        _dtype_in(instr, "src", src, _MAXMIN)
        if dst.format.name != src.format.name:
            raise constraint(instr, "dst.dtype", f"must equal src.dtype ({src.format.name})",
                             dst.format.name)


def _check_tmp(instr, tmp):
    if tmp is not None:
        _tile(instr, "tmp", tmp)


def _row_reduce(instr, op, dst, src, tmp):
    _tile(instr, "dst", dst)
    _tile(instr, "src", src)
    _check_tmp(instr, tmp)
    _vec(instr, "dst", dst)
    _vec(instr, "src", src)
    _reduce_dtypes(instr, op, dst, src)
    if dst.valid_col != 1:
        raise constraint(instr, "dst.valid_col", "must be 1 (the result goes to dst[i, 0])",
                         dst.valid_col)
    if dst.valid_row != src.valid_row:
        raise constraint(instr, "dst.valid_row", f"must equal src.valid_row ({src.valid_row})",
                         dst.valid_row)
    R, C = src.valid_shape
    if op != "SUM" and R and C == 0:
        raise constraint(instr, "src.valid_col", "must be >= 1", C)
    if R:
        d = _operand(dst)
        _k.rowreduce(_OP[op], d[0], d[1], d[2], *_operand(src, dst), R, C)
    cost.record("Vector", instr, vector_cycles(R, C, src.dtype.itemsize, 1))


def TROWMAX(dst: Tile, src: Tile, tmp: Tile | None = None) -> None:  # noqa: N802
    """``dst[i, 0] = max_j src[i, j]`` over src's valid columns, folded left to right with
    ``std::max`` (exact).  dst: valid shape [src.valid_row, 1] (a ColMajor [R, 1] column, or a
    row-major tile with valid_col 1), same dtype.  ``tmp`` is accepted and unused, as on the
    reference CPU simulator."""
    _row_reduce("TROWMAX", "MAX", dst, src, tmp)


def TROWMIN(dst: Tile, src: Tile, tmp: Tile | None = None) -> None:  # noqa: N802
    """``dst[i, 0] = min_j src[i, j]`` (as TROWMAX)."""
    _row_reduce("TROWMIN", "MIN", dst, src, tmp)


def TROWSUM(dst: Tile, src: Tile, tmp: Tile | None = None) -> None:  # noqa: N802
    """``dst[i, 0] = sum_j src[i, j]``, accumulated left to right from 0 in float32 for
    float16/bfloat16/float32 sources (rounded once to dst's dtype) and in wide integers for
    int16/int32 (wrapping to dst's dtype).  (src, dst) dtypes: f16->f16, bf16->bf16, f16->f32,
    bf16->f32, f32->f32, i16->i16, i16->i32, i32->i32."""
    _row_reduce("TROWSUM", "SUM", dst, src, tmp)


def _col_reduce(instr, op, dst, src, tmp):
    _tile(instr, "dst", dst)
    _tile(instr, "src", src)
    _check_tmp(instr, tmp)
    _vec(instr, "dst", dst)
    _vec(instr, "src", src)
    _reduce_dtypes(instr, op, dst, src)
    if dst.valid_row != 1:
        raise constraint(instr, "dst.valid_row", "must be 1 (the result goes to dst[0, j])",
                         dst.valid_row)
    if dst.valid_col != src.valid_col:
        raise constraint(instr, "dst.valid_col", f"must equal src.valid_col ({src.valid_col})",
                         dst.valid_col)
    R, C = src.valid_shape
    if op != "SUM" and C and R == 0:
        raise constraint(instr, "src.valid_row", "must be >= 1", R)
    if C:
        d = _operand(dst)
        _k.colreduce(_OP[op], d[0], d[1], d[3], *_operand(src, dst), R, C)
    cost.record("Vector", instr, vector_cycles(R, C, src.dtype.itemsize, 1))


def TCOLMAX(dst: Tile, src: Tile, tmp: Tile | None = None) -> None:  # noqa: N802
    """``dst[0, j] = max_i src[i, j]`` over src's valid rows, top to bottom (exact)."""
    _col_reduce("TCOLMAX", "MAX", dst, src, tmp)


def TCOLMIN(dst: Tile, src: Tile, tmp: Tile | None = None) -> None:  # noqa: N802
    """``dst[0, j] = min_i src[i, j]`` (exact)."""
    _col_reduce("TCOLMIN", "MIN", dst, src, tmp)


def TCOLSUM(dst: Tile, src: Tile, tmp: Tile | None = None) -> None:  # noqa: N802
    """``dst[0, j] = sum_i src[i, j]``, top to bottom, accumulation as TROWSUM."""
    _col_reduce("TCOLSUM", "SUM", dst, src, tmp)


# ---- row / column expand ------------------------------------------------------------------
def TROWEXPAND(dst: Tile, src: Tile) -> None:  # noqa: N802
    """``dst[i, j] = src[i, 0]`` over dst's valid region; src any layout with
    ``valid_row == dst.valid_row`` and valid_col >= 1; same dtype."""
    instr = "TROWEXPAND"
    _tile(instr, "dst", dst)
    _tile(instr, "src", src)
    _vec(instr, "dst", dst)
    _vec(instr, "src", src)
    _same_dtype(instr, dst, "src", src)
    if src.valid_row != dst.valid_row:
        raise constraint(instr, "src.valid_row", f"must equal dst.valid_row ({dst.valid_row})",
                         src.valid_row)
    R, C = dst.valid_shape
    if R and C and src.valid_col < 1:
        raise constraint(instr, "src.valid_col", "must be >= 1", src.valid_col)
    _run_unary("COPY", dst, _operand(src, dst, cs=0), R, C)
    _record(instr, dst, "COPY")


def _per_row_ok(t: Tile, R: int) -> bool:
    if t.valid_row != R:
        return False
    if t.blayout == BLayout.RowMajor:
        return t.valid_col == 32 // t.dtype.itemsize
    return t.valid_col == 1


def _full_ok(t: Tile, dst: Tile) -> bool:
    return t.valid_shape == dst.valid_shape and t.blayout == BLayout.RowMajor


def _row_expand_common(instr, dst, src0, src1, allowed):
    for name, t in (("dst", dst), ("src0", src0), ("src1", src1)):
        _tile(instr, name, t)
        _vec(instr, name, t)
    _row_major(instr, "dst", dst)
    _dtype_in(instr, "dst", dst, allowed)
    _same_dtype(instr, dst, "src0", src0)
    _same_dtype(instr, dst, "src1", src1)


def _per_row_error(instr, name, t, R):
    w = 32 // t.dtype.itemsize
    return constraint(instr, name, f"must be the per-row operand: valid_row == {R} and either "
                      f"ColMajor with valid_col == 1 (mode 1) or RowMajor with valid_col == {w} "
                      f"(mode 2, 32 bytes per row)",
                      f"{t.blayout.name} valid {t.valid_shape}")


def _row_expand(instr, op, dst, src0, src1, tmp=None, allowed=_ROWEXP):
    _row_expand_common(instr, dst, src0, src1, allowed)
    _check_tmp(instr, tmp)
    R, C = dst.valid_shape
    if _full_ok(src0, dst) and _per_row_ok(src1, R):
        row = src1
    elif _full_ok(src1, dst) and _per_row_ok(src0, R):
        row = src0
    elif _full_ok(src0, dst):
        raise _per_row_error(instr, "src1", src1, R)
    elif _full_ok(src1, dst):
        raise _per_row_error(instr, "src0", src0, R)
    else:
        raise constraint(instr, "src0/src1", f"one must be RowMajor with dst's valid shape "
                         f"{dst.valid_shape}", (src0.valid_shape, src1.valid_shape))
    if op == "DIV":
        _check_div(instr, "src1", src1.valid, src1.format)
    _run_binary(op, dst, _operand(src0, dst), src0.valid_col or 1,
                _operand(src1, dst), src1.valid_col or 1, R, C)
    _record(instr, dst, op)
    return row


def TROWEXPANDADD(dst: Tile, src0: Tile, src1: Tile,  # noqa: N802
                  tmp: Tile | None = None) -> None:
    """``dst[i, j] = src0[i, j % vc0] + src1[i, j % vc1]``: one operand full (RowMajor, dst's
    valid shape), the other per-row (ColMajor [R, 1] or RowMajor [R, 32/sizeof]); operand
    order is kept.  dst RowMajor.  Dtypes f32, f16, i32, i16, u32, u16.  ``tmp`` is accepted
    and unused (as on the reference CPU simulator)."""
    _row_expand("TROWEXPANDADD", "ADD", dst, src0, src1, tmp)


def TROWEXPANDSUB(dst: Tile, src0: Tile, src1: Tile,  # noqa: N802
                  tmp: Tile | None = None) -> None:
    """``dst = src0 - src1`` with one operand per-row (``full - s_i`` or ``s_i - full``)."""
    _row_expand("TROWEXPANDSUB", "SUB", dst, src0, src1, tmp)


def TROWEXPANDMUL(dst: Tile, src0: Tile, src1: Tile,  # noqa: N802
                  tmp: Tile | None = None) -> None:
    """``dst = src0 * src1`` with one operand per-row (also uint8)."""
    _row_expand("TROWEXPANDMUL", "MUL", dst, src0, src1, tmp, allowed=_ROWEXP + ("uint8",))


# ptoacc branch (issue 13): pto-isa docs/isa/TROWEXPANDDIV.md / TCOLEXPANDDIV.md list
# bfloat16_t, int8 and uint8 (with int16/int32/uint16/uint32) "for A5"
_EXPDIV_A5 = ("bfloat16", "int8", "uint8")


def _expdiv_dtypes():
    return _ROWEXP + (_EXPDIV_A5 if _State.target == "A5" else ())


def TROWEXPANDDIV(dst: Tile, src0: Tile, src1: Tile,  # noqa: N802
                  tmp: Tile | None = None) -> None:
    """``dst = src0 / src1`` with one operand per-row; division by zero as TDIV (integers
    truncate).  Dtypes f32, f16, i32, i16, u32, u16; on A5 also bf16, i8, u8 (pto-isa
    docs/isa/TROWEXPANDDIV.md)."""
    _row_expand("TROWEXPANDDIV", "DIV", dst, src0, src1, tmp, allowed=_expdiv_dtypes())


def TROWEXPANDMAX(dst: Tile, src0: Tile, src1: Tile,  # noqa: N802
                  tmp: Tile | None = None) -> None:
    """``dst = std::max(src0, src1)`` with one operand per-row."""
    _row_expand("TROWEXPANDMAX", "MAX", dst, src0, src1, tmp)


def TROWEXPANDMIN(dst: Tile, src0: Tile, src1: Tile,  # noqa: N802
                  tmp: Tile | None = None) -> None:
    """``dst = std::min(src0, src1)`` with one operand per-row."""
    _row_expand("TROWEXPANDMIN", "MIN", dst, src0, src1, tmp)


def expdif_tmp_bytes(rows: int) -> int:
    """Minimum TROWEXPANDEXPDIF tmp size on A2/A3 (the PTO ISA docs, page TROWEXPANDEXPDIF (github.com/hw-native-sys/pto-isa, docs/isa/TROWEXPANDEXPDIF.md)): ``ceil(R/8) * 256`` bytes for
    R < 256, else 7680 bytes (30 repeats of 256 bytes reused per loop)."""
    return math.ceil(rows / 8) * 256 if rows < 256 else 30 * 256


def TROWEXPANDEXPDIF(dst: Tile, src0: Tile, src1: Tile,  # noqa: N802
                     tmp: Tile | None = None) -> None:
    """``dst[i, j] = exp(src0[i, j] - s_i)`` over dst's valid region ``R x C`` (the PTO ISA docs, page TROWEXPANDEXPDIF (github.com/hw-native-sys/pto-isa, docs/isa/TROWEXPANDEXPDIF.md)).

    dst, src0: RowMajor, same valid shape; dtype float16 or float32 for all operands.
    src1 gives the per-row scalar s_i: mode 1, a ColMajor tile with valid shape [R, 1]
    (``s_i = src1[i, 0]``); mode 2, a RowMajor tile with 32 bytes per row (valid shape
    [R, 32/sizeof(T)]), element j reading ``src1[i, j % (32/sizeof(T))]``.  The difference
    is rounded to T first (as the reference CPU simulator does), then exp is computed in
    float64 and rounded once to T.

    ``tmp`` (optional): allowed only in mode 1.  On A2/A3 its size (``rows * cols *
    sizeof``) must be at least ``ceil(R/8) * 256`` bytes for R < 256 and 7680 bytes for
    R >= 256 (:func:`expdif_tmp_bytes`); on A5 it is accepted and unused.  Raises
    ConstraintError.
    """
    instr = "TROWEXPANDEXPDIF"
    _row_expand_common(instr, dst, src0, src1, _F)
    R, C = dst.valid_shape
    if not _full_ok(src0, dst):
        raise constraint(instr, "src0", f"must be RowMajor with dst's valid shape "
                         f"{dst.valid_shape}", f"{src0.blayout.name} valid {src0.valid_shape}")
    if not _per_row_ok(src1, R):
        raise _per_row_error(instr, "src1", src1, R)
    if tmp is not None:
        _tile(instr, "tmp", tmp)
        _vec(instr, "tmp", tmp)
        if src1.blayout == BLayout.RowMajor:
            raise constraint(instr, "src1", "must be the mode-1 ColMajor [R, 1] operand when tmp "
                             "is given (the tmp overload supports only mode 1)",
                             f"{src1.blayout.name} valid {src1.valid_shape}")
        if _State.target == "A2A3":
            need = expdif_tmp_bytes(R)
            if tmp.nbytes < need:
                raise constraint(instr, "tmp size", f"must be >= {need} bytes for R={R} on A2/A3 "
                                 "(ceil(R/8)*256 for R < 256, 7680 for R >= 256)",
                                 f"{tmp.nbytes} bytes")
    _run_binary("EXPDIF", dst, _operand(src0, dst), _BIG, _operand(src1, dst),
                src1.valid_col or 1, R, C)
    _record(instr, dst, "EXPDIF")


def TCOLEXPAND(dst: Tile, src: Tile) -> None:  # noqa: N802
    """``dst[i, j] = src[0, j]`` over dst's valid region; src valid_col == dst.valid_col,
    valid_row >= 1; same dtype."""
    instr = "TCOLEXPAND"
    _tile(instr, "dst", dst)
    _tile(instr, "src", src)
    _vec(instr, "dst", dst)
    _vec(instr, "src", src)
    _same_dtype(instr, dst, "src", src)
    if src.valid_col != dst.valid_col:
        raise constraint(instr, "src.valid_col", f"must equal dst.valid_col ({dst.valid_col})",
                         src.valid_col)
    R, C = dst.valid_shape
    if R and C and src.valid_row < 1:
        raise constraint(instr, "src.valid_row", "must be >= 1", src.valid_row)
    _run_unary("COPY", dst, _operand(src, dst, rs=0), R, C)
    _record(instr, dst, "COPY")


def _col_expand(instr, op, dst, src0, src1, allowed=_ROWEXP):
    for name, t in (("dst", dst), ("src0", src0), ("src1", src1)):
        _tile(instr, name, t)
        _vec(instr, name, t)
    _row_major(instr, "dst", dst)
    _dtype_in(instr, "dst", dst, allowed)
    _same_dtype(instr, dst, "src0", src0)
    _same_dtype(instr, dst, "src1", src1)
    R, C = dst.valid_shape

    def per_col(t):
        return t.valid_row == 1 and t.valid_col == C

    if src0.valid_shape == dst.valid_shape and per_col(src1):
        a, b = _operand(src0, dst), _operand(src1, dst, rs=0)
    elif src1.valid_shape == dst.valid_shape and per_col(src0):
        a, b = _operand(src0, dst, rs=0), _operand(src1, dst)
    else:
        raise constraint(instr, "src0/src1", f"one must have dst's valid shape {dst.valid_shape} "
                         f"and the other valid shape (1, {C})",
                         (src0.valid_shape, src1.valid_shape))
    if op == "DIV":
        _check_div(instr, "src1", src1.valid, src1.format)
    _run_binary(op, dst, a, _BIG, b, _BIG, R, C)
    _record(instr, dst, op)


def TCOLEXPANDADD(dst: Tile, src0: Tile, src1: Tile) -> None:  # noqa: N802
    """``dst[i, j] = src0 + src1`` where one operand is per-column (valid shape [1, C], read at
    ``[0, j]``) and the other has dst's valid shape; operand order kept; dst RowMajor."""
    _col_expand("TCOLEXPANDADD", "ADD", dst, src0, src1)


def TCOLEXPANDSUB(dst: Tile, src0: Tile, src1: Tile) -> None:  # noqa: N802
    """``dst = src0 - src1`` with one per-column operand."""
    _col_expand("TCOLEXPANDSUB", "SUB", dst, src0, src1)


def TCOLEXPANDMUL(dst: Tile, src0: Tile, src1: Tile) -> None:  # noqa: N802
    """``dst = src0 * src1`` with one per-column operand."""
    _col_expand("TCOLEXPANDMUL", "MUL", dst, src0, src1, _ROWEXP + ("uint8",))


def TCOLEXPANDDIV(dst: Tile, src0: Tile, src1: Tile) -> None:  # noqa: N802
    """``dst = src0 / src1`` with one per-column operand (division by zero as TDIV; integers
    truncate).  Dtypes f32, f16, i32, i16, u32, u16; on A5 also bf16, i8, u8 (pto-isa
    docs/isa/TCOLEXPANDDIV.md)."""
    _col_expand("TCOLEXPANDDIV", "DIV", dst, src0, src1, _expdiv_dtypes())


def TCOLEXPANDMAX(dst: Tile, src0: Tile, src1: Tile) -> None:  # noqa: N802
    """``dst = std::max(src0, src1)`` with one per-column operand."""
    _col_expand("TCOLEXPANDMAX", "MAX", dst, src0, src1)


def TCOLEXPANDMIN(dst: Tile, src0: Tile, src1: Tile) -> None:  # noqa: N802
    """``dst = std::min(src0, src1)`` with one per-column operand."""
    _col_expand("TCOLEXPANDMIN", "MIN", dst, src0, src1)


def TCOLEXPANDEXPDIF(dst: Tile, src0: Tile, src1: Tile) -> None:  # noqa: N802
    """``dst = exp(src0 - src1)`` with one per-column operand; float16/float32; the
    difference rounded to T, exp in float64 rounded once."""
    _col_expand("TCOLEXPANDEXPDIF", "EXPDIF", dst, src0, src1, _F)


# ---- conversion, matmul, moves ------------------------------------------------------------
_CVT = ("float32", "float16", "bfloat16", "int32", "int16", "int8", "uint8")


def TCVT(dst: Tile, src: Tile, mode: RoundMode | str = RoundMode.CAST_RINT,  # noqa: N802
         satMode: SaturationMode | str | None = None) -> None:
    """``dst = round_mode(src)`` converted to dst's dtype, over dst's valid region.

    dtypes: any of float32, float16, bfloat16, int32, int16, int8, uint8 to any.  The source
    value is exact in float64; it is rounded once to dst's format with ``mode``
    (:class:`RoundMode`).  Float targets overflow to +-inf when rounding to nearest (RINT,
    ROUND, NONE) and to the largest finite value when rounding toward zero (TRUNC, ODD) or
    away from that infinity (FLOOR for +, CEIL for -).  Integer targets saturate, NaN -> 0.
    Equal valid shapes.  Raises ConstraintError.  ``satMode`` (SaturationMode.ON/OFF): the
    CPU simulator's conversion instead (:mod:`fastisa.pto._convert`), for more dtype pairs.
    The low-precision and 64-bit formats (fp8 E4M3/E5M2, hifloat8, int4, float4 E2M1/E1M2
    x2, int64/uint64) convert along the pairs pto-isa docs/isa/TCVT.md lists, with the rules
    of :mod:`fastisa.pto._cvt_lowp`.
    """
    instr = "TCVT"
    _tile(instr, "dst", dst, lowp=True)
    _tile(instr, "src", src, lowp=True)
    if isinstance(mode, str):
        mode = RoundMode.from_name(mode)
    try:
        mode = RoundMode(mode)
    except ValueError:
        raise constraint(instr, "mode", "must be a RoundMode", mode) from None
    if dst.format.name not in KERNEL_FORMATS or src.format.name not in KERNEL_FORMATS:
        from ._cvt_lowp import tcvt as _tcvt_lowp
        return _tcvt_lowp(dst, src, mode, satMode)
    if satMode is not None:
        from ._convert import tcvt_sat
        return tcvt_sat(dst, src, mode, satMode)
    _dtype_in(instr, "dst", dst, _CVT)
    _dtype_in(instr, "src", src, _CVT)
    _same_valid(instr, dst, "src", src)
    R, C = dst.valid_shape
    if R and C:
        d = _operand(dst)
        _k.cvt(int(mode), d[0], d[1], d[2], d[3], *_operand(src, dst), R, C)
    cost.record("Vector", instr, vector_cycles(R, C, max(dst.dtype.itemsize,
                                                        src.dtype.itemsize), 1))


_MM_TYPES = {("float16", "float16"): "float32", ("bfloat16", "bfloat16"): "float32",
             ("float32", "float32"): "float32", ("int8", "int8"): "int32"}


#: (ptoacc) A5's fp8 / hifloat8 pairs of plain TMATMUL (-> float32): pto-isa
#: include/pto/npu/a5/TMatmul.hpp ``isSupportedFp8Combo`` and the hifloat8 x hifloat8 pair,
#: docs/isa/TMATMUL.md "selected fp8 pairs, and hifloat8_t/hifloat8_t"
_MM_LOWP_A5 = {("float8_e4m3fn", "float8_e4m3fn"), ("float8_e4m3fn", "float8_e5m2"),
               ("float8_e5m2", "float8_e4m3fn"), ("float8_e5m2", "float8_e5m2"),
               ("hifloat8", "hifloat8")}


def _as_f32_operand(t):
    """A float32 tile of t's shape, layout and valid shape holding t's values exactly (every
    fp8 / hifloat8 value is a float32)."""
    from . import _lowp_formats as L
    f = Tile(t.loc, "float32", t.rows, t.cols, blayout=t.blayout, valid_row=t.valid_row,
             valid_col=t.valid_col, slayout=t.slayout, fractal=t.fractal)
    raw = np.ascontiguousarray(t.data).view(np.uint8)
    f.data[...] = L.decode(t.format.name, raw).reshape(t.rows, t.cols).astype(np.float32)
    return f


def _matmul(instr, dst, a, b, init=None, init_rs=None):
    if isinstance(a, Tile) and isinstance(b, Tile) and (a.format.name,
                                                        b.format.name) in _MM_LOWP_A5:
        # the CPU simulator's TMatmulNzZn: static_cast<float> of each element, then the
        # same fma chain as float32 x float32 (include/pto/cpu/TMatmul.hpp)
        if _State.target != "A5":
            raise constraint(instr, "(a.dtype, b.dtype)", "must not be a float8/hifloat8 pair "
                             "on A2A3 (A5 only, docs/isa/TMATMUL.md)",
                             (a.format.name, b.format.name))
        for name, t, loc in (("a", a, TileType.Left), ("b", b, TileType.Right)):
            if t.loc != loc:
                raise constraint(instr, f"{name}.loc", f"must be TileType.{loc.name}",
                                 t.loc.name)
        a, b = _as_f32_operand(a), _as_f32_operand(b)
    for name, t, loc in (("dst", dst, TileType.Acc), ("a", a, TileType.Left),
                         ("b", b, TileType.Right)):
        _tile(instr, name, t)
        if t.loc != loc:
            raise constraint(instr, f"{name}.loc", f"must be TileType.{loc.name}", t.loc.name)
    pair = (a.format.name, b.format.name)
    if pair not in _MM_TYPES:
        raise constraint(instr, "(a.dtype, b.dtype)", f"must be one of {sorted(_MM_TYPES)}", pair)
    if dst.format.name != _MM_TYPES[pair]:
        raise constraint(instr, "dst.dtype", f"must be {_MM_TYPES[pair]} for {pair}",
                         dst.format.name)
    M, K = a.valid_shape
    if b.valid_row != K:
        raise constraint(instr, "b.valid_row", f"must equal a.valid_col (K={K})", b.valid_row)
    N = b.valid_col
    if dst.valid_shape != (M, N):
        raise constraint(instr, "dst valid shape", f"must be (M, N) = {(M, N)}", dst.valid_shape)
    if M and N:
        d = _operand(dst)
        extra = ()
        if init is not None:
            c = _operand(init, dst, rs=init_rs)
            extra = (c[0], c[1], c[2], c[3])
        _k.matmul(d[0], d[1], d[2], d[3], *_operand(a, dst), *_operand(b, dst), M, K, N, *extra)
    cost.record("Cube", instr, cube_cycles(M, K, N, a.dtype.itemsize))


def TMATMUL(dst: Tile, a: Tile, b: Tile) -> None:  # noqa: N802
    """``dst[i, j] = sum_k a[i, k] * b[k, j]`` with M = a.valid_row, K = a.valid_col =
    b.valid_row, N = b.valid_col.

    a: Left tile, b: Right tile, dst: Acc tile with valid shape [M, N].  (a, b) -> dst
    dtypes: (f16, f16), (bf16, bf16), (f32, f32) -> float32, accumulated in float32 with a
    fused multiply-add per k, sequentially from k = 0 (starting at +0), as the reference
    CPU simulator does; on A5 also the fp8 pairs (E4M3/E5M2 either way) and (hifloat8,
    hifloat8) -> float32, the same chain over the exact values; (i8, i8) -> int32, exact
    (wrapping).  Raises ConstraintError.
    """
    _matmul("TMATMUL", dst, a, b)


def TMATMUL_ACC(dst: Tile, acc: Tile, a: Tile, b: Tile) -> None:  # noqa: N802
    """``dst[i, j] = acc[i, j] + sum_k a[i, k] * b[k, j]`` (docs/isa/TMATMUL_ACC.md): the sum
    as TMATMUL's fma chain from +0, then one float32 addition of ``acc`` (an Acc tile with
    dst's dtype and valid shape; it may be dst itself), the order of the formula and of
    include/pto/cpu/TMatmul.hpp (int32: exact, wrapping)."""
    instr = "TMATMUL_ACC"
    _tile(instr, "acc", acc)
    if acc.loc != TileType.Acc:
        raise constraint(instr, "acc.loc", "must be TileType.Acc", acc.loc.name)
    _same_dtype(instr, dst, "acc", acc)
    _same_valid(instr, dst, "acc", acc)
    _matmul(instr, dst, a, b, init=acc)


def TMATMUL_BIAS(dst: Tile, a: Tile, b: Tile, bias: Tile) -> None:  # noqa: N802
    """``dst[i, j] = sum_k a[i, k] * b[k, j] + bias[0, j]`` (docs/isa/TMATMUL_BIAS.md): TMATMUL's
    fma chain from +0, then one float32 addition of the bias row (a Bias tile of dst's dtype
    with valid shape [1, N]), as include/pto/cpu/TMatmul.hpp computes it."""
    instr = "TMATMUL_BIAS"
    _tile(instr, "bias", bias)
    if bias.loc != TileType.Bias:
        raise constraint(instr, "bias.loc", "must be TileType.Bias", bias.loc.name)
    _same_dtype(instr, dst, "bias", bias)
    if bias.valid_row != 1 or bias.valid_col != b.valid_col:
        raise constraint(instr, "bias valid shape", f"must be (1, N) = (1, {b.valid_col})",
                         bias.valid_shape)
    _matmul(instr, dst, a, b, init=bias, init_rs=0)


def _tmov_fixpipe(instr, dst, src, pre, relu, sat) -> None:
    from . import _fixpipe as F
    if src.loc != TileType.Acc:
        raise constraint(instr, "src.loc", "must be TileType.Acc for the relu / quant forms",
                         src.loc.name)
    try:
        relu = F.ReluPreMode(relu)
    except ValueError:
        raise constraint(instr, "reluMode", "must be ReluPreMode.NoRelu or NormalRelu",
                         relu) from None
    _same_valid(instr, dst, "src", src)
    R, C = dst.valid_shape
    if isinstance(pre, Tile):
        q = F.fp_words(instr, "preQuant", pre, 0, C).reshape(1, C)
    elif pre is not None:
        if isinstance(pre, bool) or not isinstance(pre, (int, np.integer)) or \
                not 0 <= int(pre) < 1 << 64:
            raise constraint(instr, "preQuant", "must be a 64-bit unsigned word or a uint64 "
                             "Tile", pre)
        q = np.uint64(int(pre))
    else:
        q = None
    out = F.convert(instr, src.valid, src.format.name, dst.format.name, q,
                    relu == F.ReluPreMode.NormalRelu, bool(sat))
    np.copyto(dst.valid, out.view(dst.dtype) if out.dtype != dst.dtype else out)
    cost.record("MTE1", instr, vector_cycles(R, C, dst.dtype.itemsize, 1))


def _lowp_move(instr, dst, src, r0=0, c0=0, into=False) -> bool:
    """The element move of TMOV/TEXTRACT/TINSERT for the low-precision and 64-bit formats
    (branch ptolowp): a bit copy in numpy, same dtype required.  False when both tiles have
    kernel formats (the C path runs)."""
    if dst.format.name in KERNEL_FORMATS and src.format.name in KERNEL_FORMATS:
        return False
    if src.format.name != dst.format.name:
        raise constraint(instr, "dst.dtype", f"must equal src.dtype ({src.format.name}) for "
                         "low-precision / 64-bit tiles (a bit copy)", dst.format.name)
    if into:
        R, C = src.valid_shape
        np.copyto(dst.data[r0:r0 + R, c0:c0 + C], src.valid.copy())
    else:
        R, C = dst.valid_shape
        np.copyto(dst.valid, src.data[r0:r0 + R, c0:c0 + C].copy())
    cost.record("Vector" if dst.loc == TileType.Vec else "MTE1", instr,
                vector_cycles(R, C, dst.dtype.itemsize, 1))
    return True


def TMOV(dst: Tile, src: Tile, preQuant=None, reluMode: int = 0,  # noqa: N802,N803
         saturateInf: bool = False) -> None:  # noqa: N803
    """``dst[i, j] = src[i, j]`` over dst's valid region, between any tile locations and
    layouts (e.g. Mat -> Left/Right, Acc -> Vec).  Same dtype (bit copy), except from an
    Acc float32 tile to float16/bfloat16 (rounded to nearest even).  Equal valid shapes.

    The fixpipe forms from an Acc tile (pto-isa docs/isa/TMOV.md: relu, scalar-quant and
    vector-quant forms): ``preQuant`` a 64-bit quantisation word or a uint64 tile of words
    (one per column), ``reluMode`` ReluPreMode.NormalRelu, ``saturateInf``; the conversion of
    :mod:`fastisa.pto._fixpipe` (TSTORE's)."""
    instr = "TMOV"
    _tile(instr, "dst", dst, lowp=True)
    _tile(instr, "src", src, lowp=True)
    if preQuant is not None or reluMode:
        return _tmov_fixpipe(instr, dst, src, preQuant, reluMode, saturateInf)
    if _lowp_move(instr, dst, src):
        return
    if src.format.name != dst.format.name:
        if not (src.loc == TileType.Acc and src.format.name == "float32"
                and dst.format.name in ("float16", "bfloat16")):
            raise constraint(instr, "dst.dtype", f"must equal src.dtype ({src.format.name}) "
                             "(only Acc float32 -> float16/bfloat16 converts)", dst.format.name)
    _same_valid(instr, dst, "src", src)
    R, C = dst.valid_shape
    _run_unary("COPY", dst, _operand(src, dst), R, C)
    cost.record("Vector" if dst.loc == TileType.Vec else "MTE1", instr,
                vector_cycles(R, C, dst.dtype.itemsize, 1))


def TTRANS(dst: Tile, src: Tile, tmp: Tile | None = None) -> None:  # noqa: N802
    """``dst[j, i] = src[i, j]``: dst's valid shape must be (src.valid_col, src.valid_row);
    same dtype.  ``tmp`` is accepted and unused."""
    instr = "TTRANS"
    if type(dst).__name__ == "ConvTile" or type(src).__name__ == "ConvTile":
        from ._conv import ttrans as _conv_ttrans
        return _conv_ttrans(dst, src)
    _tile(instr, "dst", dst, lowp=True)
    _tile(instr, "src", src, lowp=True)
    _check_tmp(instr, tmp)
    _same_dtype(instr, dst, "src", src)
    if dst.valid_shape != (src.valid_col, src.valid_row):
        raise constraint(instr, "dst valid shape", f"must be src's transposed "
                         f"{(src.valid_col, src.valid_row)}", dst.valid_shape)
    R, C = dst.valid_shape
    if dst.format.name not in KERNEL_FORMATS:
        # one-byte / 64-bit element formats: the same element move in numpy (the x2 formats
        # would need nibble moves across bytes: refused)
        if dst.format.lanes != 1:
            raise constraint(instr, "src.dtype", "must not be a packed x2 format (two fp4 "
                             "codes per byte)", src.format.name)
        np.copyto(dst.valid, src.valid.T.copy())
        _record(instr, dst, "COPY")
        return
    _run_unary("COPY", dst, _operand(src, dst, rs=src._cs, cs=src._rs), R, C)
    _record(instr, dst, "COPY")
