"""TMATMUL_MX, TMATMUL_MX_ACC, TMATMUL_MX_BIAS: the A5 microscaling matmul (branch ptolowp,
issue 13).

    C[i, j] = init[i, j] + sum_k (A[i, k] * 2^(sa[i, k // 32] - 127)) *
                               (B[k, j] * 2^(sb[k // 32, j] - 127))

pto-isa docs/isa/TMATMUL_MX.md gives the dtype triples (C float32; A, B fp8 E4M3/E5M2 or
fp4 E2M1/E1M2 x2; scales float8_e8m0) and says the role of the scale tiles is
"target-defined"; fastisa follows the OCP Microscaling Formats spec v1.0 §5 (a shared
E8M0 exponent per block of 32 elements along K; code 0xFF is NaN), which is also what the
CPU simulator's tests compute (tests/cpu/st/testcase/tmatmul_mx/gen_data.py).  The products
and their sum are formed in float64 and rounded once to float32 (exact for every sum whose
magnitude range fits 53 bits; the docs do not give the accumulation order).

Tiles: ``a`` Left [M, K] (x2 formats: [M, K/2] containers), ``b`` Right [K, N] (x2: [K, N/2]
containers, two codes of adjacent columns per byte), ``a_scale`` ScaleLeft [M, ceil(K/32)],
``b_scale`` ScaleRight [ceil(K/32), N], ``dst`` Acc float32 [M, N]; ``bias`` a Bias float32
[1, N] tile; ``acc`` the Acc tile accumulated into.
"""

from __future__ import annotations

import numpy as np

from .. import cost
from ..errors import constraint
from . import _lowp_formats as L
from ._ops import _tile, cube_cycles
from ._tile import Tile, TileType

__all__ = ["TMATMUL_MX", "TMATMUL_MX_ACC", "TMATMUL_MX_BIAS"]

_DATA = ("float8_e4m3fn", "float8_e5m2", "float4_e2m1x2", "float4_e1m2x2")
_FP8 = _DATA[:2]


def _values(t: Tile, rows: int, cols: int) -> np.ndarray:
    raw = np.ascontiguousarray(t.data[:rows, :cols])
    return L.decode(t.format.name, raw.view(np.uint8))


def _mx(instr, dst, a, a_scale, b, b_scale, init=None):
    for name, t, loc in (("dst", dst, TileType.Acc), ("a", a, TileType.Left),
                         ("a_scale", a_scale, TileType.ScaleLeft), ("b", b, TileType.Right),
                         ("b_scale", b_scale, TileType.ScaleRight)):
        _tile(instr, name, t, lowp=True)
        if t.loc != loc:
            hint = ""
            if t.loc == TileType.Scaling and name.endswith("scale"):
                # (branch ptomg) PTOAS lowers a loc=scaling tile to ScaleLeft/ScaleRight
                # only when it is f8E8M0 with matching layouts (PTOToEmitC scalingRoleToken)
                hint = (" (an MX scale tile is float8_e8m0fnu: ScaleLeft row-major with "
                        "row-major boxes, ScaleRight column-major with column-major boxes)")
            raise constraint(instr, f"{name}.loc", f"must be TileType.{loc.name}{hint}",
                             t.loc.name)
    an, bn = a.format.name, b.format.name
    if an not in _DATA or bn not in _DATA or (an in _FP8) != (bn in _FP8):
        raise constraint(instr, "(a.dtype, b.dtype)", "must be two fp8 (float8_e4m3fn / "
                         "float8_e5m2) or two fp4 x2 (float4_e2m1x2 / float4_e1m2x2) formats",
                         (an, bn))
    if dst.format.name != "float32":
        raise constraint(instr, "dst.dtype", "must be float32", dst.format.name)
    for name, t in (("a_scale", a_scale), ("b_scale", b_scale)):
        if t.format.name != "float8_e8m0fnu":
            raise constraint(instr, f"{name}.dtype", "must be float8_e8m0fnu (E8M0)",
                             t.format.name)
    for name, t in (("a", a), ("b", b)):
        if t.format.lanes == 2 and not t.is_row_major:
            raise constraint(instr, f"{name}.blayout", "must be RowMajor for an x2 format "
                             "(two codes of adjacent columns per byte)", t.blayout.name)
    M, K = a.valid_row, a.valid_col * a.format.lanes
    N = b.valid_col * b.format.lanes
    if b.valid_row != K:
        raise constraint(instr, "b.valid_row", f"must equal K = {K}", b.valid_row)
    G = -(-K // 32)
    if a_scale.valid_shape != (M, G):
        raise constraint(instr, "a_scale valid shape", f"must be (M, ceil(K/32)) = {(M, G)}",
                         a_scale.valid_shape)
    if b_scale.valid_shape != (G, N):
        raise constraint(instr, "b_scale valid shape", f"must be (ceil(K/32), N) = {(G, N)}",
                         b_scale.valid_shape)
    if dst.valid_shape != (M, N):
        raise constraint(instr, "dst valid shape", f"must be (M, N) = {(M, N)}", dst.valid_shape)
    base = None
    if init is not None:
        kind, t = init
        if kind == "bias":
            if t.loc != TileType.Bias or t.format.name != "float32" or t.valid_row != 1 or \
                    t.valid_col != N:
                raise constraint(instr, "bias", f"must be a Bias float32 tile of valid shape "
                                 f"(1, {N})", repr(t))
            base = np.broadcast_to(t.data[:1, :N].astype(np.float64), (M, N))
        else:
            if t.loc != TileType.Acc or t.format.name != "float32" or t.valid_shape != (M, N):
                raise constraint(instr, "acc", f"must be an Acc float32 tile of valid shape "
                                 f"{(M, N)}", repr(t))
            base = t.valid.astype(np.float64)
    if not (M and N):
        return
    av = _values(a, M, a.valid_col)
    bv = _values(b, K, b.valid_col)
    sa = L.decode("float8_e8m0fnu", np.ascontiguousarray(a_scale.data[:M, :G]).view(np.uint8))
    sb = L.decode("float8_e8m0fnu", np.ascontiguousarray(b_scale.data[:G, :N]).view(np.uint8))
    ka = np.repeat(sa, 32, axis=1)[:, :K]
    kb = np.repeat(sb, 32, axis=0)[:K, :]
    with np.errstate(all="ignore"):
        c = (av * ka) @ (bv * kb)
        if base is not None:
            c = c + base
    np.copyto(dst.valid, c.astype(np.float32))
    cost.record("Cube", instr, cube_cycles(M, K, N, 1))


def TMATMUL_MX(dst: Tile, a: Tile, a_scale: Tile, b: Tile, b_scale: Tile) -> None:  # noqa: N802
    """``dst = (A * 2^(sa-127)) @ (B * 2^(sb-127))`` (module doc).  Raises ConstraintError."""
    _mx("TMATMUL_MX", dst, a, a_scale, b, b_scale)


def TMATMUL_MX_ACC(dst: Tile, acc: Tile, a: Tile, a_scale: Tile, b: Tile,  # noqa: N802
                   b_scale: Tile) -> None:
    """``dst = acc + TMATMUL_MX(...)`` (module doc).  Raises ConstraintError."""
    _mx("TMATMUL_MX_ACC", dst, a, a_scale, b, b_scale, ("acc", acc))


def TMATMUL_MX_BIAS(dst: Tile, a: Tile, a_scale: Tile, b: Tile, b_scale: Tile,  # noqa: N802
                    bias: Tile) -> None:
    """``dst = bias (broadcast over rows) + TMATMUL_MX(...)`` (module doc).  Raises
    ConstraintError."""
    _mx("TMATMUL_MX_BIAS", dst, a, a_scale, b, b_scale, ("bias", bias))


def _gemv(instr, a):
    if isinstance(a, Tile) and a.valid_row != 1:
        raise constraint(instr, "aMatrix.validRow", "must be 1 (m = 1 for a GEMV)", a.valid_row)


def TGEMV_MX(dst: Tile, a: Tile, a_scale: Tile, b: Tile, b_scale: Tile) -> None:  # noqa: N802
    """TMATMUL_MX with m = 1 (pto-isa docs/isa/TGEMV_MX.md).  Raises ConstraintError."""
    _gemv("TGEMV_MX", a)
    _mx("TGEMV_MX", dst, a, a_scale, b, b_scale)


def TGEMV_MX_ACC(dst: Tile, acc: Tile, a: Tile, a_scale: Tile, b: Tile,  # noqa: N802
                 b_scale: Tile) -> None:
    """TMATMUL_MX_ACC with m = 1 (docs/isa/TGEMV_MX.md, the cOut/cIn overload)."""
    _gemv("TGEMV_MX_ACC", a)
    _mx("TGEMV_MX_ACC", dst, a, a_scale, b, b_scale, ("acc", acc))


def TGEMV_MX_BIAS(dst: Tile, a: Tile, a_scale: Tile, b: Tile, b_scale: Tile,  # noqa: N802
                  bias: Tile) -> None:
    """TMATMUL_MX_BIAS with m = 1 (docs/isa/TGEMV_MX.md, the biasData overload)."""
    _gemv("TGEMV_MX_BIAS", a)
    _mx("TGEMV_MX_BIAS", dst, a, a_scale, b, b_scale, ("bias", bias))


__all__ += ["TGEMV_MX", "TGEMV_MX_ACC", "TGEMV_MX_BIAS"]
