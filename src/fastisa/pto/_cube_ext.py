"""PTO matrix-vector instructions (issue 13): TGEMV, TGEMV_ACC, TGEMV_BIAS (pto-isa
docs/isa/TGEMV.md).  The docs define them as TMATMUL / TMATMUL_ACC / TMATMUL_BIAS with
``M = 1``: ``C[0, j] = sum_k A[0, k] * B[k, j]`` (``+ Cin[0, j]``, ``+ bias[0, j]``), K and
N taken from bMatrix's valid shape and each in [1, 4095].  The arithmetic is TMATMUL's (the
fma chain per k of fastisa.pto.TMATMUL, then one addition of Cin or the bias, as
TMATMUL_ACC / TMATMUL_BIAS); the dtype triples are TMATMUL's A2/A3 set, the docs' TGEMV
list.
"""

from __future__ import annotations

from ..errors import constraint
from ._ops import _matmul, _same_dtype, _same_valid, _tile
from ._tile import TileType

import typing as _typing

if _typing.TYPE_CHECKING:
    from ._tile import Tile

__all__ = ["TGEMV", "TGEMV_ACC", "TGEMV_BIAS"]


def _gemv_shape(instr, c, a, b):
    for name, t in (("cMatrix", c), ("aMatrix", a), ("bMatrix", b)):
        _tile(instr, name, t)
    if a.valid_row != 1:
        raise constraint(instr, "aMatrix.validRow", "must be 1 (m = 1 for a GEMV)", a.valid_row)
    for what, v in (("k", b.valid_row), ("n", b.valid_col)):
        if not 1 <= v <= 4095:
            raise constraint(instr, f"bMatrix valid shape ({what})", "must be in [1, 4095]", v)


def TGEMV(cMatrix: Tile, aMatrix: Tile, bMatrix: Tile) -> None:  # noqa: N802,N803
    """``C[0, j] = sum_k A[0, k] * B[k, j]`` (module doc).  cMatrix: Acc tile [1, N]; aMatrix:
    Left tile with validRow 1 and validCol K; bMatrix: Right tile [K, N].  (A, B) -> C dtypes:
    (int8, int8) -> int32, (float16, float16), (bfloat16, bfloat16), (float32, float32) ->
    float32.  Raises ConstraintError otherwise."""
    _gemv_shape("TGEMV", cMatrix, aMatrix, bMatrix)
    _matmul("TGEMV", cMatrix, aMatrix, bMatrix)


def TGEMV_ACC(cOutMatrix: Tile, cInMatrix: Tile, aMatrix: Tile,  # noqa: N802,N803
              bMatrix: Tile) -> None:
    """``Cout[0, j] = Cin[0, j] + sum_k A[0, k] * B[k, j]``: as TGEMV, the chain starting from
    cInMatrix (an Acc tile of cOutMatrix's dtype and valid shape; it may be cOutMatrix)."""
    instr = "TGEMV_ACC"
    _gemv_shape(instr, cOutMatrix, aMatrix, bMatrix)
    _tile(instr, "cInMatrix", cInMatrix)
    if cInMatrix.loc != TileType.Acc:
        raise constraint(instr, "cInMatrix.loc", "must be TileType.Acc", cInMatrix.loc.name)
    _same_dtype(instr, cOutMatrix, "cInMatrix", cInMatrix)
    _same_valid(instr, cOutMatrix, "cInMatrix", cInMatrix)
    _matmul(instr, cOutMatrix, aMatrix, bMatrix, init=cInMatrix)


def TGEMV_BIAS(cMatrix: Tile, aMatrix: Tile, bMatrix: Tile,  # noqa: N802,N803
               biasData: Tile) -> None:
    """``C[0, j] = bias[0, j] + sum_k A[0, k] * B[k, j]``: as TGEMV; biasData a Bias tile of
    cMatrix's dtype, one row, valid shape [1, N]."""
    instr = "TGEMV_BIAS"
    _gemv_shape(instr, cMatrix, aMatrix, bMatrix)
    _tile(instr, "biasData", biasData)
    if biasData.loc != TileType.Bias:
        raise constraint(instr, "biasData.loc", "must be TileType.Bias", biasData.loc.name)
    _same_dtype(instr, cMatrix, "biasData", biasData)
    if biasData.valid_row != 1 or biasData.valid_col != bMatrix.valid_col:
        raise constraint(instr, "biasData valid shape", f"must be (1, N) = (1, "
                         f"{bMatrix.valid_col})", biasData.valid_shape)
    _matmul(instr, cMatrix, aMatrix, bMatrix, init=biasData, init_rs=0)
