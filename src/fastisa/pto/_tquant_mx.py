"""TQUANT, microscaling forms MXFP8 (e4m3) and MXFP4 (e2m1) (branch ptoisa2, issue 13).

pto-isa docs/isa/TQUANT.md, "MX formats (3 stages, group size G = 32)": for groups g of 32
consecutive elements along ``grpAxis`` (1, ND: columns; 0, DN: rows),

1. group max ``m_g = max |x_i|`` (the ``max`` scratch tile),
2. shared exponent ``s_g = biasedExp(m_g) - e_max`` (E8M0, the ``exp`` tile) and scaling
   ``alpha_g = 2^(254 - s_g)`` read as float32 bits, i.e. ``2^(127 - s_g)`` (the
   ``scaling`` scratch tile) -- "exact IEEE-754 bit manipulation",
3. ``q_i = clip(x_i * alpha_g, -Vmax, Vmax)`` cast to e4m3 (Vmax 448) or e2m1 (Vmax 6)
   "with stochastic rounding (SPR.CTRL[50]=1)".

Where the docs are silent fastisa follows the CPU simulator (include/pto/cpu/TQuant.hpp):

* the max ignores NaN elements for MXFP8 (``std::max`` from 0), is NaN for MXFP4/NV when a
  group holds a NaN, and for MXFP4/OCP is taken over the bfloat16-truncated magnitudes
  (``(bits >> 16) & 0x7FFF``, so a NaN wins);
* the exponent: OCP ``E - 8`` (MXFP8) / ``E - 2`` (MXFP4) of the max's biased exponent E
  (0 when E is at most that, 0xFF for NaN); NV: with ``d = float32(m * (1/448 or 1/6))``,
  0 for m = 0, 0xFE / 0xFF for an infinite / NaN d, else ``E(d)`` plus one when d's
  mantissa is non-zero (and E(d) != 0xFE, and d is not a subnormal of mantissa <= 2^22);
* the scaling: the max itself for exponent 0xFF; NV 0xFE gives 2^-127; otherwise the float32
  with bits ``(254 - s) << 23`` (2^-127 where that is 0);
* the max and scaling tiles are written flat: group ``(a, b)`` of the A x B exponent grid
  (ND: A = rows, B = cols / 32; DN: A = rows / 32, B = cols) at storage element ``a*B + b``,
  converted to the tiles' float dtype; ``exp[a, b]`` is the exponent (an exp tile of one
  row holding A * B exponents: ``exp[0, a*B + b]``, the flat order the A5 implementation
  stores, include/pto/npu/a5/TQuant.hpp);
* the product ``x * alpha`` is float32 (a bfloat16 source's product rounds to bfloat16
  first, for MXFP4); MXFP4 writes code 7 (+6) for a NaN element or a NaN group scaling and
  +-6 for +-inf.

**Stage 3 is stochastic**, as documented: each finite ``y = clip(x * alpha, -Vmax, Vmax)``
between two neighbouring representable magnitudes ``lo <= |y| < hi`` becomes ``hi`` with
probability ``(|y| - lo) / (hi - lo)`` and ``lo`` otherwise (sign kept; exactly
representable values are unchanged), one uniform draw per element of the valid region in
row-major order from ``rng`` (a numpy Generator or seed; ``None`` means
``numpy.random.default_rng(0)`` for that call).  The hardware's random source is not
documented, so fastisa's codes are a model of the distribution, not the device's bits;
stages 1 and 2 are exact.  (The CPU simulator rounds to nearest even instead.)
MXFP8 NaN elements give 0x7F.

Tiles: src a row-major Vec tile (MXFP8: float32, float16, bfloat16; MXFP4: float16 or
bfloat16, the docs' input restriction), the grouped axis fully valid and a multiple of 32;
dst a row-major Vec tile of src's shape and valid shape (MXFP8: int8 or float8_e4m3fn bytes;
MXFP4: float4_e2m1x2, half the columns in bytes); exp a uint8 / float8_e8m0fnu Vec tile
whose valid region holds the A x B grid; max and scaling float Vec tiles of at least A * B
elements.  A5 only (docs/isa/TQUANT.md: "Microscaling ... is supported on A5 only").
"""

from __future__ import annotations

import enum

import numpy as np

from .. import cost
from ..errors import constraint
from . import _lowp_formats as L
from ._ops import _tile, _vec, vector_cycles
from ._tile import BLayout, Tile, _State

__all__ = ["QuantScaleAlg", "MxQuantAlg", "VecStoreMode"]


class QuantScaleAlg(enum.IntEnum):
    """The MX shared-exponent algorithm (include/pto/common/type.hpp)."""
    OCP = 0
    NV = 1


class MxQuantAlg(enum.IntEnum):
    """Format and scale algorithm of the grouped MX TQUANT form (type.hpp)."""
    OcpMxFp8E4M3 = 0
    NvMxFp8E4M3 = 1
    OcpMxFp4E2M1 = 2
    NvMxFp4E2M1 = 3
    Hif4 = 4


class VecStoreMode(enum.IntEnum):
    """TQUANT's exponent store mode (type.hpp): ND only, or also the ZZ-reordered copy."""
    ND = 0
    NZ = 1


_F32 = np.float32
#: (e_max offset of the OCP exponent, Vmax, NV descale multiplier, destination format)
_SPEC = {"MXFP8": (8, 448.0, _F32(1.0) / _F32(448.0), "float8_e4m3fn"),
         "MXFP4_E2M1": (2, 6.0, _F32(1.0) / _F32(6.0), "float4_e2m1x2")}


def _magnitudes(fmt):
    """The non-negative finite values of ``fmt`` by code (codes 0 .. n-1 ascending)."""
    t = L.table(fmt)
    n = 0x7F if fmt == "float8_e4m3fn" else 8
    return t[:n]


def group_max(g: np.ndarray, qt: str, alg: QuantScaleAlg) -> np.ndarray:
    """Stage 1 over the last axis (32) of float32 groups ``g`` (module doc)."""
    if qt == "MXFP4_E2M1" and alg == QuantScaleAlg.OCP:
        b = (g.view(np.uint32) >> 16).astype(np.uint16) & np.uint16(0x7FFF)
        return (b.max(axis=-1).astype(np.uint32) << 16).view(_F32)
    m = np.fmax.reduce(np.abs(g), axis=-1, initial=_F32(0.0))
    if qt == "MXFP4_E2M1":
        m = np.where(np.isnan(g).any(axis=-1), _F32(np.nan), m)
    return m.astype(_F32)


def shared_exponent(m: np.ndarray, qt: str, alg: QuantScaleAlg) -> np.ndarray:
    """Stage 2's E8M0 exponent of group maxima ``m`` (float32)."""
    off, _vmax, desc_mul, _fmt = _SPEC[qt]
    if alg == QuantScaleAlg.OCP:
        bits = m.view(np.uint32)
        E, man = (bits >> 23) & 0xFF, bits & 0x7FFFFF
        e = np.where(E <= off, 0, E.astype(np.int64) - off)
        return np.where((E == 0xFF) & (man != 0), 0xFF, e).astype(np.uint8)
    with np.errstate(over="ignore", invalid="ignore"):
        d = (m * desc_mul).astype(_F32)
    bits = d.view(np.uint32)
    E, man = ((bits >> 23) & 0xFF).astype(np.int64), bits & 0x7FFFFF
    up = (man > 0) & (E != 0xFE) & ~((E == 0) & (man <= 0x400000))
    e = np.where(E == 0xFF, np.where(man == 0, 0xFE, 0xFF), E + up)
    return np.where(m == 0, 0, e).astype(np.uint8)


def group_scaling(m: np.ndarray, e: np.ndarray, alg: QuantScaleAlg) -> np.ndarray:
    """Stage 2's scaling (float32) from the maxima and exponents."""
    sbits = ((254 - e.astype(np.int64)).clip(0) << 23).astype(np.uint32)
    s = sbits.view(_F32).copy()
    s[s == 0] = np.ldexp(_F32(1.0), -127)
    if alg == QuantScaleAlg.NV:
        s[e == 0xFE] = np.ldexp(_F32(1.0), -127)
    return np.where(e == 0xFF, m, s).astype(_F32)


def stochastic_codes(y: np.ndarray, fmt: str, vmax: float, u: np.ndarray) -> np.ndarray:
    """Stage 3: codes of ``fmt`` for float values ``y`` by stochastic rounding with uniform
    draws ``u`` in [0, 1) (module doc); NaN gives 0x7F (e4m3) / 7 (e2m1)."""
    mags = _magnitudes(fmt)
    sign_bit = 0x80 if fmt == "float8_e4m3fn" else 0x8
    y = np.asarray(y, np.float64)
    nan = np.isnan(y)
    a = np.minimum(np.abs(np.where(nan, 0.0, y)), vmax)
    lo_i = np.searchsorted(mags, a, side="right") - 1
    lo = mags[lo_i]
    hi_i = np.minimum(lo_i + 1, mags.size - 1)
    hi = mags[hi_i]
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.where(hi > lo, (a - lo) / (hi - lo), 0.0)
    code = np.where(u < p, hi_i, lo_i).astype(np.uint8)
    code = np.where(np.signbit(y), code | sign_bit, code)
    return np.where(nan, 0x7F if fmt == "float8_e4m3fn" else 0x7, code).astype(np.uint8)


def _rng(instr, rng):
    if rng is None:
        return np.random.default_rng(0)
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool) and rng >= 0:
        return np.random.default_rng(int(rng))
    raise constraint(instr, "rng", "must be a numpy Generator, a seed >= 0 or None", rng)


def zz_order(e: np.ndarray) -> np.ndarray:
    """The ZZ order of an [A, B] exponent grid: [16 x 2] boxes, box rows outer, then box
    columns, each box row-major (docs/isa/TQUANT.md "ZZ (zigzag, [16,2] boxes)"; the CPU
    simulator's ReorderExponentZZ)."""
    A, B = e.shape
    return e.reshape(A // 16, 16, B // 2, 2).transpose(0, 2, 1, 3).reshape(-1)


def tquant_mx(dst, src, exp, max_, scaling, qt: str, alg, grp_axis, rng,
              store_mode=VecStoreMode.ND, exp_zz=None) -> None:
    """The MX TQUANT (module doc); called by fastisa.pto.TQUANT.  ``store_mode`` NZ (MXFP8,
    ND groups) also writes the exponents in ZZ order to the first A*B elements of
    ``exp_zz`` (rows a multiple of 16, an even number of groups a row: docs/isa/TQUANT.md
    Constraints)."""
    instr = "TQUANT"
    try:
        store_mode = VecStoreMode(store_mode)
    except ValueError:
        raise constraint(instr, "storeMode", "must be a VecStoreMode", store_mode) from None
    try:
        alg = QuantScaleAlg(alg)
    except ValueError:
        raise constraint(instr, "scaleAlg", "must be a QuantScaleAlg", alg) from None
    if isinstance(grp_axis, bool) or grp_axis not in (0, 1):
        raise constraint(instr, "grpAxis", "must be 0 (DN) or 1 (ND)", grp_axis)
    if _State.target != "A5":
        raise constraint(instr, "target", f"must be A5 for {qt} (docs/isa/TQUANT.md: MX is "
                         "A5 only)", _State.target)
    for name, t in (("exp", exp), ("max", max_), ("scaling", scaling)):
        if t is None:
            raise constraint(instr, name, f"is required for {qt}", None)
    for name, t in (("dst", dst), ("src", src), ("exp", exp), ("max", max_),
                    ("scaling", scaling)):
        _tile(instr, name, t, lowp=True)
        _vec(instr, name, t)
    srcs = ("float32", "float16", "bfloat16") if qt == "MXFP8" else ("float16", "bfloat16")
    if src.format.name not in srcs:
        raise constraint(instr, "src.dtype", f"must be one of {list(srcs)} for {qt}",
                         src.format.name)
    dsts = ("int8", "float8_e4m3fn") if qt == "MXFP8" else ("float4_e2m1x2",)
    if dst.format.name not in dsts:
        raise constraint(instr, "dst.dtype", f"must be one of {list(dsts)} for {qt}",
                         dst.format.name)
    for name, t in (("dst", dst), ("src", src)):
        if t.blayout != BLayout.RowMajor:
            raise constraint(instr, f"{name}.blayout", "must be RowMajor", t.blayout.name)
    lanes = dst.format.lanes
    R, C = src.valid_shape
    # (branch ptomg) only the valid shapes must agree: dst is written through its own layout
    # (the CPU simulator's GetTileElementOffset<TileDataOut>), so a dst padded to 32-byte rows
    # (an fp4 x2 dst of 16 x 32 bytes for a 16 x 32 src, as PTOAS programs declare) is fine
    if (dst.valid_row, dst.valid_col * lanes) != (R, C):
        raise constraint(instr, "dst valid shape", f"must equal src's valid shape "
                         f"{src.valid_shape} (in elements)", dst.valid_shape)
    full = C == src.cols if grp_axis == 1 else R == src.rows
    ext = C if grp_axis == 1 else R
    if not full or ext % 32:
        axis = "cols" if grp_axis else "rows"
        raise constraint(instr, "src valid shape", f"must cover the grouped axis ({axis}) "
                         "fully, a multiple of 32 (the hardware zero-pads a partial one)",
                         src.valid_shape)
    A, B = (R, C // 32) if grp_axis == 1 else (R // 32, C)
    if exp.format.name not in ("uint8", "float8_e8m0fnu"):
        raise constraint(instr, "exp.dtype", "must be uint8 or float8_e8m0fnu", exp.format.name)
    # (branch ptomg) a one-row exp tile holding A * B exponents gets them flat, in the grid's
    # row-major order: the A5 implementation stores the shared exponents at consecutive UB
    # bytes (include/pto/npu/a5/TQuant.hpp, vsts to expPtr), which PTOAS's TquantMx sample
    # relies on; the CPU simulator's 2-D exp[a, b] would run past a one-row tile
    flat_exp = A > 1 and exp.valid_row == 1 and exp.valid_col >= A * B
    if not flat_exp and (exp.valid_row < A or exp.valid_col < B):
        raise constraint(instr, "exp valid shape", f"must hold the {A} x {B} exponent grid "
                         f"(or {A * B} exponents in one row)", exp.valid_shape)
    for name, t in (("max", max_), ("scaling", scaling)):
        if t.format.name not in ("float32", "float16", "bfloat16"):
            raise constraint(instr, f"{name}.dtype", "must be float32, float16 or bfloat16",
                             t.format.name)
        if t.rows * t.cols < A * B:
            raise constraint(instr, f"{name} size", f"must hold the {A * B} group values",
                             t.rows * t.cols)
    if store_mode == VecStoreMode.NZ:
        if qt != "MXFP8" or grp_axis != 1:
            raise constraint(instr, "storeMode", "NZ (the ZZ exponent store) is for MXFP8 with "
                             "ND groups (grpAxis 1)", (qt, grp_axis))
        if exp_zz is None:
            raise constraint(instr, "expZZ", "is required for storeMode NZ", None)
        _tile(instr, "expZZ", exp_zz, lowp=True)
        _vec(instr, "expZZ", exp_zz)
        if exp_zz.format.name not in ("uint8", "float8_e8m0fnu"):
            raise constraint(instr, "expZZ.dtype", "must be uint8 or float8_e8m0fnu",
                             exp_zz.format.name)
        if A % 16 or B % 2:
            raise constraint(instr, "exponent grid", "must have rows % 16 == 0 and an even "
                             "number of groups a row for the ZZ store", (A, B))
        if exp_zz.rows * exp_zz.cols < A * B:
            raise constraint(instr, "expZZ size", f"must hold the {A * B} exponents",
                             exp_zz.rows * exp_zz.cols)
    elif exp_zz is not None:
        raise constraint(instr, "expZZ", "must be None unless storeMode is NZ", "a tile")
    gen = _rng(instr, rng)
    if not (R and C):
        return
    off, vmax, _d, fmt = _SPEC[qt]
    x = src.valid.astype(_F32)
    g = x.reshape(R, C // 32, 32) if grp_axis == 1 else \
        x.reshape(R // 32, 32, C).transpose(0, 2, 1)
    m = group_max(np.ascontiguousarray(g), qt, alg)
    e = shared_exponent(m, qt, alg)
    s = group_scaling(m, e, alg)
    per = np.repeat(s, 32, axis=1) if grp_axis == 1 else np.repeat(s, 32, axis=0)
    with np.errstate(all="ignore"):
        y = (x * per).astype(_F32)
        if qt == "MXFP4_E2M1" and src.format.name == "bfloat16":
            y = y.astype(src.dtype).astype(_F32)
    codes = stochastic_codes(y, fmt, vmax, gen.random((R, C)))
    if qt == "MXFP4_E2M1":
        codes = np.where(np.isnan(per), 0x7, codes).astype(np.uint8)
        dst.valid.view(np.uint8)[...] = L.pack_codes(fmt, codes)
    else:
        dst.valid.view(np.uint8)[...] = codes
    if flat_exp:
        exp.data[0, :A * B].view(np.uint8)[...] = np.asarray(e).reshape(-1)
    else:
        exp.data[:A, :B].view(np.uint8)[...] = e
    if exp_zz is not None:
        exp_zz.buffer.view(np.uint8)[:A * B] = zz_order(e)
    max_.buffer[:A * B] = m.reshape(-1).astype(max_.dtype)
    scaling.buffer[:A * B] = s.reshape(-1).astype(scaling.dtype)
    cost.record("Vector", instr, vector_cycles(R, C, 4, 4))

