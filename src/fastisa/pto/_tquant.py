"""TQUANT, integer forms (INT8_SYM / INT8_ASYM) (branch ptolowp, issue 13).

pto-isa docs/isa/TQUANT.md "Integer INT8" writes

    q = round(x / scale) + offset,   q in [-128, 127]  (SYM, int8)  or  [0, 255]  (ASYM, uint8)

while both implementations multiply by the tile passed as ``scale`` and add the offset
*before* rounding: the A2/A3 kernel (include/pto/npu/a2a3/TQuant.hpp: TROWEXPANDMUL by
``scale``, TROWEXPANDADD ``offset``, then float32 -> int32 -> float16 -> int8 with CAST_RINT
and saturation) and the CPU simulator (include/pto/cpu/TQuant.hpp, whose variable is named
``invScale``: ``nearbyint(x * scale + offset)``).

fastisa follows the documented formula with this reading of its ambiguous ``scale``: **the
``scale`` tile holds the reciprocal of the docs' scale** (as both implementations and the
simulator's own naming say), so

    q[r, c] = sat( rint(float32(x[r, c] * scale[r])) + offset[r] )

rounding to nearest even (CAST_RINT, the kernel's mode) and then adding the offset, per row
(``scale`` / ``offset``: float32 tiles with one value per row in column 0, a row past their
valid rows uses the last one, as the simulator's GetParamValue).  This differs from the
implementations' ``nearbyint(x * scale + offset)`` where ``x * scale`` lies exactly half-way
between integers and the offset is odd (ties go to the even neighbour before the offset is
added here, after it there: 3.5 + 121 gives 125 here, 124 there; the C++ test's own
INT8_ASYM pattern has 18 such elements of 128), and where ``float32(x * scale) + offset``
itself rounds; for a non-integral offset the docs' ``round(..) + offset`` is not an integer
and fastisa rounds it once more (to nearest even) before saturating.  NaN -> 0.  ``tmp`` (A2/A3 interface
parity) is accepted, checked to be a float32 tile of src's size, and unused.

The MX forms (MXFP8 / MXFP4 with shared exponents; branch ptoisa2) are in
:mod:`fastisa.pto._tquant_mx`: exact shared exponents and scalings, and the documented
stochastic rounding of the final cast (``SPR.CTRL[50]=1``) modelled with a seeded generator.
"""

from __future__ import annotations

import enum

import numpy as np

from .. import cost
from ..errors import constraint
from ._ops import _tile, _vec, vector_cycles
from ._tile import Tile
from ._tquant_mx import MxQuantAlg, QuantScaleAlg, VecStoreMode, tquant_mx

__all__ = ["QuantType", "TQUANT", "QuantScaleAlg", "MxQuantAlg", "VecStoreMode"]


class QuantType(enum.IntEnum):
    """pto's ``QuantType`` (include/pto/common/type.hpp)."""
    MXFP8 = 0
    MXFP4_E2M1 = 1
    INT8_SYM = 2
    INT8_ASYM = 3


def _per_row(instr, name, t, R):
    _tile(instr, name, t)
    if t.format.name != "float32":
        raise constraint(instr, f"{name}.dtype", "must be float32", t.format.name)
    if t.valid_row < 1 or t.valid_col < 1:
        raise constraint(instr, f"{name} valid shape", "must hold at least one value",
                         t.valid_shape)
    rows = np.minimum(np.arange(R), t.valid_row - 1)
    return t.data[rows, 0].astype(np.float32).reshape(R, 1)


def TQUANT(dst: Tile, src: Tile, scale: Tile | None = None,  # noqa: N802
           offset: Tile | None = None, tmp: Tile | None = None,
           quantType: QuantType | int | None = None, *,  # noqa: N803
           exp: Tile | None = None, max: Tile | None = None,  # noqa: A002
           scaling: Tile | None = None, grpAxis: int = 1,  # noqa: N803
           scaleAlg: QuantScaleAlg | int = QuantScaleAlg.OCP,  # noqa: N803
           mxAlg: MxQuantAlg | int | None = None, rng=None,  # noqa: N803
           storeMode: VecStoreMode | int = VecStoreMode.ND,  # noqa: N803
           expZZ: Tile | None = None) -> None:  # noqa: N803
    """INT8: ``dst = sat(rint(src * scale[row]) + offset[row])`` (module doc: the docs' formula
    with ``scale`` read as the reciprocal).  ``quantType`` INT8_SYM (no offset, int8 dst) or
    INT8_ASYM (offset, uint8 dst); by default ASYM when ``offset`` is given.  src: float32
    Vec tile; dst: equal valid shape.

    MX (branch ptoisa2; docs/isa/TQUANT.md "MX formats", fastisa.pto._tquant_mx): ``q =
    cast(clip(x * 2^(127 - s_g), -Vmax, Vmax))`` per group g of 32 along ``grpAxis`` (1 ND,
    0 DN) with ``s_g`` the E8M0 shared exponent of the group max (OCP or NV ``scaleAlg``) and
    the cast stochastically rounded (seeded by ``rng``).  ``quantType`` MXFP8 or MXFP4_E2M1,
    or ``mxAlg`` (the C++ grouped form's MxQuantAlg: format and scale algorithm); ``exp``,
    ``max``, ``scaling`` are the exponent and scratch tiles (also accepted positionally in the
    C++ order ``TQUANT(dst, src, exp, max, scaling, quantType=...)``); ``storeMode``
    VecStoreMode.NZ (MXFP8, ND) also writes the exponents in ZZ order ([16 x 2] boxes) to
    ``expZZ``.  A5 only.  Raises ConstraintError; NotImplementedError for MxQuantAlg.Hif4."""
    instr = "TQUANT"
    if mxAlg is not None:
        try:
            ma = MxQuantAlg(mxAlg)
        except ValueError:
            raise constraint(instr, "mxAlg", "must be a MxQuantAlg", mxAlg) from None
        if ma == MxQuantAlg.Hif4:
            raise NotImplementedError("TQUANT: MxQuantAlg.Hif4 (HiFloat4) is not implemented "
                                      "in fastisa")
        if quantType is not None:
            raise constraint(instr, "quantType", "must be None when mxAlg is given", quantType)
        quantType = QuantType.MXFP8 if ma in (MxQuantAlg.OcpMxFp8E4M3,
                                              MxQuantAlg.NvMxFp8E4M3) else QuantType.MXFP4_E2M1
        scaleAlg = QuantScaleAlg.OCP if ma in (MxQuantAlg.OcpMxFp8E4M3,
                                               MxQuantAlg.OcpMxFp4E2M1) else QuantScaleAlg.NV
    if quantType is None:
        quantType = QuantType.INT8_SYM if offset is None else QuantType.INT8_ASYM
    try:
        qt = QuantType(quantType)
    except ValueError:
        raise constraint(instr, "quantType", "must be a QuantType", quantType) from None
    if qt in (QuantType.MXFP8, QuantType.MXFP4_E2M1):
        return tquant_mx(dst, src, scale if exp is None else exp,
                         offset if max is None else max, tmp if scaling is None else scaling,
                         qt.name, scaleAlg, grpAxis, rng, storeMode, expZZ)
    if exp is not None or max is not None or scaling is not None or expZZ is not None or \
            storeMode != VecStoreMode.ND:
        raise constraint(instr, "exp/max/scaling/expZZ/storeMode", f"must be unset for "
                         f"{qt.name}", "a tile or mode")
    if scale is None:
        raise constraint(instr, "scale", f"is required for {qt.name}", None)
    for name, t in (("dst", dst), ("src", src)):
        _tile(instr, name, t)
        _vec(instr, name, t)
    if src.format.name != "float32":
        raise constraint(instr, "src.dtype", "must be float32", src.format.name)
    want = "int8" if qt == QuantType.INT8_SYM else "uint8"
    if dst.format.name != want:
        raise constraint(instr, "dst.dtype", f"must be {want} for {qt.name}", dst.format.name)
    if dst.valid_shape != src.valid_shape:
        raise constraint(instr, "src valid shape", f"must equal dst's valid shape "
                         f"{dst.valid_shape}", src.valid_shape)
    if qt == QuantType.INT8_ASYM and offset is None:
        raise constraint(instr, "offset", "is required for INT8_ASYM", None)
    if qt == QuantType.INT8_SYM and offset is not None:
        raise constraint(instr, "offset", "must be None for INT8_SYM", "a tile")
    if tmp is not None:
        _tile(instr, "tmp", tmp)
        if tmp.format.name != "float32" or tmp.rows * tmp.cols < src.valid_row * src.valid_col:
            raise constraint(instr, "tmp", "must be a float32 tile of at least src's valid size",
                             repr(tmp))
    R, C = dst.valid_shape
    s = _per_row(instr, "scale", scale, R)
    off = _per_row(instr, "offset", offset, R) if offset is not None else None
    if not (R and C):
        return
    with np.errstate(all="ignore"):
        q = np.rint(src.valid.astype(np.float32) * s)
        if off is not None:
            q = np.rint(q + off)
    lo, hi = (-128.0, 127.0) if qt == QuantType.INT8_SYM else (0.0, 255.0)
    q = np.where(np.isnan(q), 0.0, np.clip(q, lo, hi))
    np.copyto(dst.valid, q.astype(dst.dtype))
    cost.record("Vector", instr, vector_cycles(R, C, 4, 3))
