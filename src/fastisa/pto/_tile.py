"""PTO tiles, global tensors, the simulated on-chip buffers and the target/debug settings.

Mirrors ``Tile<TileType, T, Rows, Cols, BLayout, ValidRow, ValidCol, SLayout,
SFractalSize, PadVal>`` and ``GlobalTensor<T, Shape, Stride, Layout>`` of the PTO C++
API (the PTO ISA docs and CPU simulator (github.com/hw-native-sys/pto-isa, docs/isa/ and include/pto/cpu/)).
"""

from __future__ import annotations

import enum
import math
import os

import numpy as np

from .. import cost, dtypes
from .._kernels import tile as _ktile
from . import _lowp_formats as _lp
from ..errors import AccessError, AlignmentError, ConstraintError, constraint

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

    from .._types import DTypeLike, Int, Real

__all__ = [
    "TileType", "BLayout", "SLayout", "PadValue", "PadCustom", "PadValueCustom",
    "PadValueCustom16", "Layout", "DYNAMIC", "Tile", "GlobalTensor",
    "TLOAD", "TSTORE", "TASSIGN", "set_target", "get_target", "set_debug", "get_debug",
    "BUFFER_BYTES", "PTO_DTYPE_NAMES", "MAX_TILE_BYTES", "TSTORE_FP",
]

#: A valid row/column count fixed at run time (``pto::DYNAMIC``, -1 in C++).
DYNAMIC = -1


class TileType(enum.IntEnum):
    """Where a tile lives: ``Vec`` (UB), ``Mat`` (L1), ``Left`` (L0A), ``Right`` (L0B),
    ``Acc`` (L0C), ``Bias`` (bias table), ``Scaling`` (fixpipe buffer), ...  (type.hpp)."""
    Vec = 0
    Mat = 1
    Left = 2
    Right = 3
    Acc = 4
    Bias = 5
    Scaling = 6
    ScaleLeft = 7
    ScaleRight = 8
    Ctrl = 9


class BLayout(enum.IntEnum):
    """Base layout of a tile: row-major (``r*Cols + c``) or column-major (``c*Rows + r``)."""
    RowMajor = 0
    ColMajor = 1


class SLayout(enum.IntEnum):
    """Layout inside a fractal box; ``NoneBox`` means the tile is not boxed."""
    NoneBox = 0
    RowMajor = 1
    ColMajor = 2


class PadValue(enum.IntEnum):
    """The value TLOAD writes outside the loaded region: Null and Zero give 0, Max gives
    +inf (the type's maximum for integers), Min gives -inf (the type's minimum); in the A5
    low-precision float formats (fp8 e4m3/e5m2/e8m0, hifloat8, fp4 x2) every PadValue is
    code 0 (pto-isa include/pto/common/constants.hpp ``PadValueMap``, PTO_NPU_ARCH_A5)."""
    Null = 0
    Zero = 1
    Max = 2
    Min = 3


class PadCustom:
    """A custom pad value (branch ptogold): pto-isa include/pto/common/constants.hpp
    ``PadValueCustom(v)`` / ``PadValueCustom16(bits)``, a PadValue with bit 32 set and 32
    bits of payload.  ``bits``: the payload (float32 bits for a float, the two's-complement
    bits for an integer, raw 16 bits from PadValueCustom16).  TFILLPAD fills with it as the
    CPU simulator decodes it (include/pto/cpu/TFillPad.hpp): a float32 tile reads the 32 bits
    as float32, a 2-byte tile the low 16 bits as its own type, a 1-byte tile the low 8 bits
    converted, a 4-byte integer tile the 32 bits; TLOAD pads with 0 (its getPadValue,
    include/pto/cpu/TLoad.hpp, has no custom case)."""

    __slots__ = ("bits",)

    def __init__(self, bits: Int):
        if isinstance(bits, bool) or not isinstance(bits, (int, np.integer)) \
                or not 0 <= int(bits) <= 0xFFFFFFFF:
            raise constraint("PadCustom", "bits", "must be an integer in [0, 2**32)", bits)
        self.bits = int(bits)

    @property
    def name(self) -> str:
        return f"Custom(0x{self.bits:08x})"

    def __eq__(self, other):
        return isinstance(other, PadCustom) and other.bits == self.bits

    def __hash__(self):
        return hash(("PadCustom", self.bits))

    def __repr__(self):
        return f"PadCustom(0x{self.bits:08x})"

    def value_for(self, dtype) -> np.ndarray:
        """The pad element for a tile of ``dtype`` (a 0-d array), the simulator's decoding."""
        dt = np.dtype(dtype)
        b = np.array(self.bits, np.uint32)
        if dt.itemsize == 4:
            return b.view(dt)[()]
        if dt.itemsize == 2:
            return np.array(self.bits & 0xFFFF, np.uint16).view(dt)[()]
        if dt.itemsize == 1:
            return np.array(self.bits & 0xFF, np.uint8).view(dt)[()]
        raise constraint("PadCustom", "tile dtype", "must be 1, 2 or 4 bytes wide", dt.name)


def PadValueCustom(value: Real) -> PadCustom:  # noqa: N802
    """``PadValueCustom(v)`` (constants.hpp): a Python float gives its float32 bits, an
    integer its 32-bit two's-complement bits (ConstraintError outside int32/uint32 range)."""
    if isinstance(value, (float, np.floating)):
        return PadCustom(int(np.array(value, np.float32).view(np.uint32)))
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) \
            or not -2**31 <= int(value) < 2**32:
        raise constraint("PadValueCustom", "value", "must be a float or a 32-bit integer", value)
    return PadCustom(int(value) & 0xFFFFFFFF)


def PadValueCustom16(bits16: Int) -> PadCustom:  # noqa: N802
    """``PadValueCustom16(bits)`` (constants.hpp): raw float16/bfloat16 bits."""
    if isinstance(bits16, bool) or not isinstance(bits16, (int, np.integer)) \
            or not 0 <= int(bits16) <= 0xFFFF:
        raise constraint("PadValueCustom16", "bits16", "must be an integer in [0, 65535]", bits16)
    return PadCustom(int(bits16))


class Layout(enum.IntEnum):
    """GlobalTensor layout: ND (row-major), DN (column-major) or NZ (fractal: dims 0-1 count
    column blocks, dim 2 row blocks, dims 3-4 the 16 x C0 block; pto-isa
    include/pto/common/pto_tile.hpp ``Layout::NZ``, docs/isa/TLOAD.md)."""
    ND = 0
    DN = 1
    NZ = 2
    # convolution layouts (branch ptolowp): GM tensors for ConvTile TLOAD/TSTORE
    NCHW = 3
    NC1HWC0 = 4
    FRACTAL_Z = 5
    GNCHW = 6
    GNC1HWC0 = 7
    NCDHW = 8
    FRACTAL_Z_3D = 9
    NDC1HWC0 = 16  #: shape (N, D, C1, H, W) with an implicit innermost C0 = 32 / sizeof(T)
    # MX scale layouts of TMATMUL_MX's e8m0 scale tensors (branch ptolowp; TLOAD only).  The
    # tensor's logical [rows, cols] is shape[3] x shape[4]; the array holds, in order:
    MX_A_ZZ = 10   #: A scales [M, Kmx] padded to 16 x 2 blocks, blocks row-major (16 x 2 each)
    MX_A_ND = 11   #: A scales row-major
    MX_A_DN = 12   #: A scales as [Kmx/2][M][2] (pairs of K groups per row)
    MX_B_NN = 13   #: B scales [Kmx, N] padded to 2 x 16 blocks, N blocks outer, each 16 x 2
    MX_B_ND = 14   #: B scales as [Kmx/2][N][2]
    MX_B_DN = 15   #: B scales column-major ([N][Kmx])


#: Simulated on-chip buffer capacities in bytes per target (the PTO ISA docs and CPU simulator (github.com/hw-native-sys/pto-isa, docs/isa/ and include/pto/cpu/),
#: ``NPUMemoryModel.hpp``).  Bias (1 KiB) and Scaling (2 KiB) are our assumption: the
#: reference does not give them.
BUFFER_BYTES = {
    "A2A3": {"UB": 192 * 1024, "L1": 512 * 1024, "L0A": 64 * 1024, "L0B": 64 * 1024,
             "L0C": 128 * 1024, "BT": 1024, "FB": 2048},
    "A5": {"UB": 256 * 1024, "L1": 512 * 1024, "L0A": 64 * 1024, "L0B": 64 * 1024,
           "L0C": 256 * 1024, "BT": 1024, "FB": 2048},
}

#: fastisa's bound on one tile's storage in bytes (1 GiB).  Tiles that are not TASSIGNed
#: to an on-chip buffer are plain host arrays and may be larger than any real buffer (the
#: benchmarks use such tiles); this bound only turns absurd shapes into a ConstraintError.
MAX_TILE_BYTES = 1 << 30

_CONV_LAYOUTS = frozenset(range(3, 10)) | {16}

_LOC_BUFFER = {TileType.Vec: "UB", TileType.Mat: "L1", TileType.Left: "L0A",
               TileType.Right: "L0B", TileType.Acc: "L0C", TileType.Bias: "BT",
               TileType.Scaling: "FB", TileType.ScaleLeft: "L0A", TileType.ScaleRight: "L0B",
               TileType.Ctrl: "UB"}

#: Element formats the C tile kernels handle (every vector instruction accepts only these).
KERNEL_FORMATS = ("float32", "float16", "bfloat16", "int32", "int16", "int8", "uint8", "uint16",
                  "uint32")
#: Element formats a tile may hold: the kernel formats and (branch ptolowp, issue 13) the
#: low-precision and 64-bit formats the PTO docs list (fastisa.pto._lowp_formats), which only
#: data-movement and conversion instructions accept.
TILE_FORMATS = KERNEL_FORMATS + _lp.LOWP

_TARGETS = {"A2A3": "A2A3", "A2": "A2A3", "A3": "A2A3", "A2/A3": "A2A3", "A5": "A5"}


class _State:
    target = "A2A3"
    debug = os.environ.get("FASTISA_PTO_DEBUG", "") not in ("", "0")
    pools: dict = {}


def set_target(target: str) -> None:
    """Select the target whose rules apply: ``"A2A3"`` (Atlas A2/A3, the default) or ``"A5"``
    (Ascend 950).  Decides the TRECIP same-memory rule, the TROWEXPANDEXPDIF tmp rule and
    the on-chip buffer sizes TASSIGN checks against.  Raises ConstraintError otherwise."""
    key = _TARGETS.get(str(target).upper())
    if key is None:
        raise constraint("set_target", "target", "must be 'A2A3' or 'A5'", target)
    if key != _State.target:
        _State.pools = {}
    _State.target = key


def get_target() -> str:
    """The current target, ``"A2A3"`` or ``"A5"``."""
    return _State.target


def set_debug(on: bool) -> None:
    """Debug mode: division by zero (TDIV, TDIVS, TRECIP, TRSQRT, the row/column-expand DIV
    forms) raises ConstraintError, as the reference CPU simulator's debug builds assert.
    Off by default, where float division by zero gives the IEEE result (+-inf or NaN).  The
    environment variable ``FASTISA_PTO_DEBUG=1`` switches it on at import."""
    _State.debug = bool(on)


def get_debug() -> bool:
    return _State.debug


def _pool(name: str) -> np.ndarray:
    p = _State.pools.get(name)
    if p is None:
        p = np.zeros(BUFFER_BYTES[_State.target][name], dtype=np.uint8)
        _State.pools[name] = p
    return p


#: PTO-AS element type names (``!pto.tile_buf<..., dtype=f32, ...>``) -> format names.
PTO_DTYPE_NAMES = {"f32": "float32", "f16": "float16", "bf16": "bfloat16", "i32": "int32",
                   "i16": "int16", "i8": "int8", "ui8": "uint8", "u8": "uint8",
                   "ui16": "uint16", "u16": "uint16", "ui32": "uint32", "u32": "uint32",
                   "half": "float16", "float": "float32",
                   # branch ptolowp: the low-precision and 64-bit element types
                   "f8E4M3FN": "float8_e4m3fn", "f8E5M2": "float8_e5m2",
                   "f8E8M0FNU": "float8_e8m0fnu", "hif8": "hifloat8", "i64": "int64",
                   "ui64": "uint64", "u64": "uint64", "i4": "int4"}


def _fmt_of(dtype, where: str):
    if isinstance(dtype, str):
        dtype = PTO_DTYPE_NAMES.get(dtype, dtype)
    lp = _lp.tile_format(dtype, where)
    if lp is not None:
        return lp
    try:
        fmt = dtypes.lookup(dtype)
    except ConstraintError:
        try:  # name numpy types by their dtype name ('float64', not <class ...>)
            shown = np.dtype(dtype).name
        except TypeError:
            shown = dtype
        raise constraint(where, "dtype", f"must be one of {list(TILE_FORMATS)}", shown) from None
    if fmt.name not in TILE_FORMATS:
        raise constraint(where, "dtype", f"must be one of {list(TILE_FORMATS)}", fmt.name)
    return fmt


def _as_int(x, what: str, where: str) -> int:
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer)):
        raise constraint(where, what, "must be an integer", x)
    return int(x)


def inner_shape(itemsize: int, slayout, fractal: int) -> tuple[int, int]:
    """(InnerRows, InnerCols) of a tile's fractal box in elements, pto-isa's
    ``Tile::getInnerRow`` / ``getInnerCol`` (include/pto/common/pto_tile.hpp, TileConfig):
    unboxed (1, 1); the 1024-byte C box 16 x 16; the 32-byte MX box 16 x 2 with a row-major
    inner layout and 2 x 16 with a column-major one (fixedMxRowSize / fixedMxColSize); the
    512-byte box 16 x (32 / sizeof(T)) row-major and (32 / sizeof(T)) x 16 column-major."""
    slayout = SLayout(slayout)
    if slayout == SLayout.NoneBox:
        return (1, 1)
    if fractal == 1024:
        return (16, 16)
    if fractal == 32:
        return (16, 2) if slayout == SLayout.RowMajor else (2, 16)
    if slayout == SLayout.ColMajor:
        return (max(1, 32 // itemsize), 16)
    return (16, max(1, 32 // itemsize))


# speed3 branch (issue 15): the plan key's part of a tile is cached on it (TileBase.pk, see
# fastisa._kernels.tile.tile_part); TileBase's __setattr__ / __delattr__ (in C) drop it
# whenever an attribute it depends on (loc, format, dtype, blayout, the valid shape, the
# strides) is set or deleted, so the next instruction reads the tile's form again.
class Tile(_ktile.TileBase):
    """A tile: ``Tile<loc, dtype, rows, cols, blayout, valid_row, valid_col, slayout,
    fractal, pad>`` (the PTO ISA docs and CPU simulator (github.com/hw-native-sys/pto-isa, docs/isa/ and include/pto/cpu/)).

    Parameters
    ----------
    loc : TileType
        Where the tile lives (Vec = UB, Mat = L1, Left/Right/Acc = L0A/L0B/L0C, ...).
    dtype : format name, numpy/ml_dtypes dtype or :class:`fastisa.dtypes.Format`
        One of float32, float16, bfloat16, int32, int16, int8, uint8, uint16, uint32 (the
        vector instructions' formats), or one of the low-precision / 64-bit formats
        float8_e4m3fn, float8_e5m2, float8_e8m0fnu, hifloat8, int4, float4_e2m1x2,
        float4_e1m2x2, int64, uint64 (:mod:`fastisa.pto._lowp_formats`: storage, and which
        instructions accept them; an x2 tile's cols count bytes of two codes).
    rows, cols : int
        Physical shape in elements.  Unboxed row-major tiles need ``cols * itemsize % 32
        == 0`` and column-major ones ``rows * itemsize % 32 == 0`` (32-byte rule); boxed
        tiles need ``cols % InnerCols == 0`` and, unless Vec, one row or the 32-byte MX box,
        ``rows % InnerRows == 0`` (pto_tile.hpp's static_asserts; :func:`inner_shape`).
    blayout : BLayout
        Row-major (``r*cols + c``) or column-major (``c*rows + r``) storage.
    valid_row, valid_col : int, DYNAMIC or None
        The valid region ``[0, valid_row) x [0, valid_col)`` (a prefix, never larger than
        the tile).  ``None`` means the full shape; ``DYNAMIC`` makes it settable at run time
        (:meth:`set_valid_row`, :meth:`set_valid_col`), starting at the full shape.
    slayout : SLayout
        Fractal box layout (``NoneBox``: unboxed).  Boxed tiles are validated; their values
        are stored in ``blayout`` order (fastisa does not model the in-box byte order).
    fractal : int
        Box size in bytes: 512 (16 x 32 bytes), 1024 or 32.
    pad : PadValue
        The value TLOAD fills outside the loaded region.

    Attributes: ``data`` is the numpy view ``[rows, cols]`` of the physical buffer and
    ``valid`` the view ``[valid_row, valid_col]`` of the valid region; writing to them
    writes the tile.  A new tile's buffer is zero.  Raises ConstraintError (shape, dtype,
    valid region) or AlignmentError (32-byte rule).
    """

    def __init__(self, loc: TileType | int, dtype: DTypeLike, rows: Int, cols: Int,
                 blayout: BLayout | int = BLayout.RowMajor, valid_row: Int | None = None,
                 valid_col: Int | None = None, slayout: SLayout | int = SLayout.NoneBox,
                 fractal: Int = 512, pad: PadValue | int = PadValue.Null) -> None:
        where = "Tile"
        try:
            self.loc = TileType(loc)
        except ValueError:
            raise constraint(where, "loc", "must be a TileType", loc) from None
        self.format = _fmt_of(dtype, where)
        self.dtype = self.format.np_dtype
        rows = _as_int(rows, "rows", where)
        cols = _as_int(cols, "cols", where)
        if rows <= 0:
            raise constraint(where, "rows", "must be > 0", rows)
        if cols <= 0:
            raise constraint(where, "cols", "must be > 0", cols)
        self.rows, self.cols = rows, cols
        try:
            self.blayout = BLayout(blayout)
        except ValueError:
            raise constraint(where, "blayout", "must be a BLayout", blayout) from None
        try:
            self.slayout = SLayout(slayout)
        except ValueError:
            raise constraint(where, "slayout", "must be an SLayout", slayout) from None
        if isinstance(pad, PadCustom):
            self.pad = pad
        else:
            try:
                self.pad = PadValue(pad)
            except ValueError:
                raise constraint(where, "pad", "must be a PadValue (Null, Zero, Max, Min) or a "
                                 "PadCustom", pad) from None
        fractal = _as_int(fractal, "fractal", where)
        if fractal not in (32, 512, 1024):
            raise constraint(where, "fractal", "must be 32, 512 or 1024 bytes", fractal)
        self.fractal = fractal
        isz = self.dtype.itemsize
        # (branch ptoisa2) pto_tile.hpp checks ``Cols * sizeof(DType) % 32`` with Cols in
        # elements and sizeof(float4_e2m1x2_t) == 1: an x2 row-major tile needs 32 elements
        # (16 bytes) a row
        ecols = cols * self.format.lanes if self.format.lanes == 2 else cols
        if self.slayout == SLayout.NoneBox:
            if self.blayout == BLayout.RowMajor and (ecols * isz) % 32:
                if ecols != cols:
                    raise AlignmentError(
                        f"{where}: a row-major x2 tile needs a multiple of 32 elements (16 "
                        f"bytes) a row, got cols={cols} bytes = {ecols} elements")
                raise AlignmentError(
                    f"{where}: a row-major tile needs cols * sizeof(T) % 32 == 0 (32-byte rows), "
                    f"got cols={cols} x {isz} bytes = {cols * isz}")
            if self.blayout == BLayout.ColMajor and (rows * isz) % 32:
                raise AlignmentError(
                    f"{where}: a column-major tile needs rows * sizeof(T) % 32 == 0 (32-byte "
                    f"columns), got rows={rows} x {isz} bytes = {rows * isz}")
        else:
            ir, ic = self.inner_shape
            if cols % ic:
                raise AlignmentError(f"{where}: a boxed tile needs cols % InnerCols ({ic}) == 0, "
                                     f"got cols={cols}")
            # pto_tile.hpp: Vec tiles, one-row tiles and the 32-byte MX box are exempt
            if self.loc != TileType.Vec and rows != 1 and fractal != 32 and rows % ir:
                raise AlignmentError(f"{where}: a boxed tile needs rows % InnerRows ({ir}) == 0, "
                                     f"got rows={rows}")
        self._dyn_row = valid_row is not None and _as_int(valid_row, "valid_row", where) == DYNAMIC
        self._dyn_col = valid_col is not None and _as_int(valid_col, "valid_col", where) == DYNAMIC
        self._vr = rows if (valid_row is None or self._dyn_row) else self._check_valid(
            valid_row, rows, "valid_row", "rows", where)
        self._vc = cols if (valid_col is None or self._dyn_col) else self._check_valid(
            valid_col, cols, "valid_col", "cols", where)
        if self.blayout == BLayout.RowMajor:
            self._rs, self._cs = cols, 1
        else:
            self._rs, self._cs = 1, rows
        # A free-standing tile is host memory (TASSIGN checks the on-chip capacity); fastisa
        # bounds it at MAX_TILE_BYTES so a typo (100000 x 100000) is a clear error, not a
        # MemoryError or an exhausted machine (issue 12).
        if rows * cols * isz > MAX_TILE_BYTES:
            raise constraint(where, "rows * cols * sizeof(T)", f"must be <= MAX_TILE_BYTES = "
                             f"{MAX_TILE_BYTES} (fastisa's bound on a tile's storage; a real "
                             f"tile must fit its on-chip buffer, see TASSIGN)",
                             rows * cols * isz)
        self._buf = np.zeros(rows * cols, dtype=self.dtype)
        self.addr = None

    @staticmethod
    def _check_valid(v, cap, what, capname, where) -> int:
        v = _as_int(v, what, where)
        if v < 0 or v > cap:
            raise constraint(where, what, f"must be in [0, {capname}={cap}] (the valid region "
                             "never exceeds the tile)", v)
        return v

    # ---- shape information -------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, int]:
        return (self.rows, self.cols)

    @property
    def valid_shape(self) -> tuple[int, int]:
        return (self._vr, self._vc)

    @property
    def valid_row(self) -> int:
        return self._vr

    @property
    def valid_col(self) -> int:
        return self._vc

    @property
    def is_row_major(self) -> bool:
        return self.blayout == BLayout.RowMajor

    @property
    def is_dynamic(self) -> tuple[bool, bool]:
        """(valid_row is DYNAMIC, valid_col is DYNAMIC)."""
        return (self._dyn_row, self._dyn_col)

    @property
    def inner_shape(self) -> tuple[int, int]:
        """(InnerRows, InnerCols): the fractal box in elements; (1, 1) when unboxed
        (:func:`inner_shape`)."""
        return inner_shape(self.dtype.itemsize, self.slayout, self.fractal)

    @property
    def nbytes(self) -> int:
        return self.rows * self.cols * self.dtype.itemsize

    def set_valid_row(self, n: Int) -> None:
        """Set a DYNAMIC valid row count (0 <= n <= rows).  ConstraintError if static."""
        if not self._dyn_row:
            raise constraint("Tile.set_valid_row", "valid_row", "is static (declare it DYNAMIC "
                             "to set it at run time)", n)
        self._vr = self._check_valid(n, self.rows, "valid_row", "rows", "Tile.set_valid_row")

    def set_valid_col(self, n: Int) -> None:
        """Set a DYNAMIC valid column count (0 <= n <= cols).  ConstraintError if static."""
        if not self._dyn_col:
            raise constraint("Tile.set_valid_col", "valid_col", "is static (declare it DYNAMIC "
                             "to set it at run time)", n)
        self._vc = self._check_valid(n, self.cols, "valid_col", "cols", "Tile.set_valid_col")

    # C++ spellings
    def GetValidRow(self) -> int:  # noqa: N802
        return self._vr

    def GetValidCol(self) -> int:  # noqa: N802
        return self._vc

    SetValidRow = set_valid_row
    SetValidCol = set_valid_col

    # ---- numpy views -------------------------------------------------------------------
    @property
    def buffer(self) -> np.ndarray:
        """The physical buffer, 1-D, ``rows*cols`` elements in storage order."""
        return self._buf

    @property
    def data(self) -> np.ndarray:
        """View ``[rows, cols]`` of the whole physical tile (writes go to the tile)."""
        if self.blayout == BLayout.RowMajor:
            return self._buf.reshape(self.rows, self.cols)
        return self._buf.reshape(self.cols, self.rows).T

    @property
    def valid(self) -> np.ndarray:
        """View ``[valid_row, valid_col]`` of the valid region (writes go to the tile)."""
        return self.data[: self._vr, : self._vc]

    def fill(self, value: Real) -> None:
        """Set every element of the physical buffer (a convenience, not an instruction)."""
        self._buf[...] = value

    # ---- Tile::SetValue / Tile::GetValue (branch ptogold) ----------------------------------
    def _scalar_offset(self, name: str, offset) -> int:
        if self.loc != TileType.Vec:
            raise constraint(name, "tile.loc", "must be TileType.Vec", self.loc.name)
        if isinstance(offset, bool) or not isinstance(offset, (int, np.integer)):
            raise constraint(name, "offset", "must be an integer", type(offset).__name__)
        offset = int(offset)
        if not 0 <= offset < self._buf.size:
            raise AccessError(f"{name}: offset must be in [0, {self._buf.size}) (the tile's "
                              f"{self.rows} x {self.cols} storage), got {offset}")
        return offset

    def SetValue(self, offset: Int, value: Real) -> None:  # noqa: N802
        """``Tile::SetValue(offset, val)``: store ``value`` converted to the tile's dtype at
        element ``offset`` of the tile's storage (storage order: the layout's, not the valid
        region's), as include/pto/common/pto_tile.hpp ``*(data + offset) = val`` (C++'s
        conversion: a float dtype rounds to nearest; an integer dtype takes an integer value
        in its range).  Vec tiles only.  Raises ConstraintError (not Vec, a non-integer
        offset, an integer dtype given a non-integral or out-of-range value) or AccessError
        (offset outside the storage); nothing changes then."""
        offset = self._scalar_offset("Tile.SetValue", offset)
        dt = self._buf.dtype
        if self.format.is_float:
            v = np.asarray(float(value), np.float64).astype(dt)
        else:
            if isinstance(value, bool) or not float(value).is_integer():
                raise constraint("Tile.SetValue", "value", f"must be an integer for a "
                                 f"{self.format.name} tile", value)
            info = np.iinfo(dt)
            if not info.min <= int(value) <= info.max:
                raise constraint("Tile.SetValue", "value", f"must be in [{info.min}, "
                                 f"{info.max}] for a {self.format.name} tile", value)
            v = np.asarray(int(value)).astype(dt)
        self._buf[offset] = v

    def GetValue(self, offset: Int):  # noqa: N802
        """``Tile::GetValue(offset)``: element ``offset`` of the tile's storage as a numpy
        scalar of the tile's dtype (pto_tile.hpp ``*(data + offset)``).  Vec tiles only;
        raises as SetValue."""
        offset = self._scalar_offset("Tile.GetValue", offset)
        return self._buf[offset].copy()

    def __repr__(self) -> str:
        vr = "?" if self._dyn_row else ""
        vc = "?" if self._dyn_col else ""
        return (f"Tile<{self.loc.name}, {self.format.name}, {self.rows}, {self.cols}, "
                f"{self.blayout.name}, valid={vr}{self._vr}x{vc}{self._vc}, "
                f"{self.slayout.name}, {self.fractal}, {self.pad.name}>")


class GlobalTensor:
    """A global-memory (GM) tensor: ``GlobalTensor<T, Shape<N1..N5>, Stride<S1..S5>, Layout>``.

    ``array`` is the numpy array holding GM (its dtype is the element type, it is written by
    TSTORE).  ``shape`` and ``strides`` (in elements, up to 5 dims, left-padded to 5 with
    shape 1) default to the array's own.  Every addressed element must lie inside ``array``
    (AccessError otherwise).  ``layout`` is ND (row-major: rows are dims 0-3, columns dim 4)
    or DN (column-major: rows are dim 3, columns dims 0,1,2,4), NZ (16 x C0 fractals: rows
    dims 2-3, columns dims 0,1,4), an MX scale layout (TLOAD of TMATMUL_MX scales) or a
    convolution layout (TLOAD/TSTORE with a ConvTile).  ``dtype`` names the element format
    when ``array`` holds only its container (uint8 codes of hifloat8, int4, float4_*x2 or an
    fp8 format); an en_dtypes ``hifloat8`` array is taken as its codes.
    """

    def __init__(self, array: np.ndarray, shape: Sequence[Int] | None = None,
                 strides: Sequence[Int] | None = None, layout: Layout | int = Layout.ND,
                 dtype: DTypeLike | None = None) -> None:
        if not isinstance(array, np.ndarray):
            raise constraint("GlobalTensor", "array", "must be a numpy array", type(array).__name__)
        if dtype is not None:
            # the element format when the array holds only its container (branch ptolowp):
            # uint8 bytes of hifloat8 / int4 / float4_*x2 codes; the itemsize must match
            fmt = _fmt_of(dtype, "GlobalTensor")
            if array.dtype.itemsize != fmt.itemsize or array.dtype.kind not in "uif" and \
                    array.dtype.name != fmt.np_dtype.name:
                raise constraint("GlobalTensor", "array", f"must hold {fmt.name}'s container "
                                 f"{fmt.np_dtype} ({fmt.itemsize} bytes per item)", array.dtype)
            self.format = fmt
            if array.dtype != fmt.np_dtype:
                array = array.view(fmt.np_dtype)
        else:
            self.format = _fmt_of(array.dtype, "GlobalTensor")
            if array.dtype != self.format.np_dtype:      # en_dtypes.hifloat8 -> its codes
                array = array.view(self.format.np_dtype)
        self.array = array
        isz = array.dtype.itemsize
        if shape is None:
            shape = array.shape
        shape = tuple(_as_int(s, "shape", "GlobalTensor") for s in shape)
        if not 1 <= len(shape) <= 5:
            raise constraint("GlobalTensor", "shape", "must have 1 to 5 dimensions", shape)
        if any(s < 0 for s in shape):
            raise constraint("GlobalTensor", "shape", "must be >= 0 in every dimension", shape)
        if strides is None:
            if shape == tuple(array.shape):
                strides = tuple(s // isz for s in array.strides)
            else:
                strides = []
                acc = 1
                for s in reversed(shape):
                    strides.insert(0, acc)
                    acc *= s
                strides = tuple(strides)
        strides = tuple(_as_int(s, "strides", "GlobalTensor") for s in strides)
        if len(strides) != len(shape):
            raise constraint("GlobalTensor", "strides", f"must have {len(shape)} entries like "
                             "shape", strides)
        if any(s < 0 for s in strides):
            raise constraint("GlobalTensor", "strides", "must be >= 0 elements", strides)
        # a stride past the end of any array numpy can hold cannot address anything
        # (issue 12: as_strided then raised a raw OverflowError inside TLOAD)
        if any(s * isz >= 1 << 62 for s in strides) or any(s >= 1 << 62 for s in shape):
            raise constraint("GlobalTensor", "strides", "must be < 2**62 bytes (and shape < "
                             "2**62) in every dimension", strides)
        self.shape = (1,) * (5 - len(shape)) + shape
        self.strides = (0,) * (5 - len(strides)) + strides
        try:
            self.layout = Layout(layout)
        except ValueError:
            raise constraint("GlobalTensor", "layout", "must be a Layout", layout) from None
        if self.layout >= Layout.MX_A_ZZ and self.layout not in _CONV_LAYOUTS:
            up = lambda x, m: -(-x // m) * m  # noqa: E731
            R, C = self.shape[3], self.shape[4]
            pad = {Layout.MX_A_ZZ: (16, 2), Layout.MX_A_DN: (1, 2), Layout.MX_B_NN: (2, 16),
                   Layout.MX_B_ND: (2, 1)}.get(self.layout, (1, 1))
            need = up(R, pad[0]) * up(C, pad[1])
            if self.shape[:3] != (1, 1, 1) or array.size < need:
                raise constraint("GlobalTensor", "shape", f"of an {self.layout.name} tensor must "
                                 f"be (1, 1, 1, rows, cols) over an array of >= {need} elements "
                                 "(the padded scale blocks)", self.shape)
        if self.layout == Layout.NZ and 0 not in self.shape and (
                self.shape[3] != 16 or self.shape[4] * isz != 32):
            raise constraint("GlobalTensor", "shape", "of an NZ tensor must end in the 16 x C0 "
                             f"fractal (dim 3 = 16, dim 4 = 32 / sizeof(T) = {32 // isz})",
                             self.shape)
        # The whole array as one flat element sequence (no copy when contiguous).
        if not (array.flags.c_contiguous or array.flags.f_contiguous):
            raise constraint("GlobalTensor", "array", "must be contiguous (GM is flat memory)",
                             "a strided view")
        if 0 in self.shape:
            hi = -1
        else:
            hi = sum((n - 1) * s for n, s in zip(self.shape, self.strides))
        if self.layout == Layout.NDC1HWC0 and hi >= 0:
            hi += 32 // isz - 1                 # the implicit innermost C0
        if hi >= array.size:
            raise AccessError(f"GlobalTensor: shape {self.shape} with strides {self.strides} "
                              f"reaches element {hi}, outside the array of {array.size} elements")

    def _view5(self) -> np.ndarray:
        flat = self.array.reshape(-1, order="A")
        isz = flat.dtype.itemsize
        dt = flat.dtype
        if dt.kind == "V" or dt.name.startswith(("float8", "float4", "bfloat")):
            # as_strided cannot rebuild ml_dtypes arrays from their array interface: stride
            # an unsigned integer view of the same width and view the result back
            flat = flat.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[isz])
        v = np.lib.stride_tricks.as_strided(
            flat, shape=self.shape, strides=tuple(s * isz for s in self.strides),
            writeable=self.array.flags.writeable)
        return v if v.dtype == dt else v.view(dt)

    def view2d(self) -> np.ndarray:
        """The tensor as ``[rows, cols]`` (ND: rows = dims 0-3; DN: rows = dim 3)."""
        if self.layout in _CONV_LAYOUTS:
            raise constraint("GlobalTensor", "layout", "is a convolution layout: TLOAD/TSTORE it "
                             "with a ConvTile", self.layout.name)
        if self.layout >= Layout.MX_A_ZZ:
            return self._mx_view()
        v = self._view5()
        n = self.shape
        if self.layout == Layout.ND:
            return v.reshape(n[0] * n[1] * n[2] * n[3], n[4])
        if self.layout == Layout.NZ:    # element (i2*n3 + i3, (i0*n1 + i1)*n4 + i4)
            return v.transpose(2, 3, 0, 1, 4).reshape(n[2] * n[3], n[0] * n[1] * n[4])
        return v.transpose(3, 0, 1, 2, 4).reshape(n[3], n[0] * n[1] * n[2] * n[4])

    def _mx_view(self) -> np.ndarray:
        """The logical [rows, cols] of an MX scale layout (a copy; see Layout)."""
        R, C = self.shape[3], self.shape[4]
        a = self.array.reshape(-1, order="A")
        up = lambda x, m: -(-x // m) * m  # noqa: E731
        L = self.layout
        if L == Layout.MX_A_ND:
            return a[:R * C].reshape(R, C).copy()
        if L == Layout.MX_B_DN:
            return a[:R * C].reshape(C, R).T.copy()
        if L == Layout.MX_A_ZZ:
            Rp, Cp = up(R, 16), up(C, 2)
            g = a[:Rp * Cp].reshape(Rp // 16, Cp // 2, 16, 2).transpose(0, 2, 1, 3)
        elif L == Layout.MX_A_DN:
            Rp, Cp = R, up(C, 2)
            g = a[:Rp * Cp].reshape(Cp // 2, R, 2).transpose(1, 0, 2)
        elif L == Layout.MX_B_NN:
            Rp, Cp = up(R, 2), up(C, 16)
            g = a[:Rp * Cp].reshape(Cp // 16, Rp // 2, 16, 2).transpose(1, 3, 0, 2)
        else:                                   # MX_B_ND
            Rp, Cp = up(R, 2), C
            g = a[:Rp * Cp].reshape(Rp // 2, C, 2).transpose(0, 2, 1)
        return g.reshape(Rp, Cp)[:R, :C].copy()

    def _write2d(self, src2d: np.ndarray) -> None:
        """Writes a [rows, cols] array through the 5-D view (the inverse of view2d)."""
        v5 = self._view5()
        n = self.shape
        if self.layout == Layout.ND:
            v5[...] = src2d.reshape(n)
        elif self.layout == Layout.NZ:
            v5[...] = src2d.reshape(n[2], n[3], n[0], n[1], n[4]).transpose(2, 3, 0, 1, 4)
        else:
            v5[...] = src2d.reshape(n[3], n[0], n[1], n[2], n[4]).transpose(1, 2, 3, 0, 4)

    @property
    def rows(self) -> int:
        n = self.shape
        if self.layout == Layout.NZ:
            return n[2] * n[3]
        return n[0] * n[1] * n[2] * n[3] if self.layout == Layout.ND else n[3]

    @property
    def cols(self) -> int:
        n = self.shape
        if self.layout == Layout.NZ:
            return n[0] * n[1] * n[4]
        return n[4] if self.layout == Layout.ND else n[0] * n[1] * n[2] * n[4]

    def __repr__(self) -> str:
        return (f"GlobalTensor<{self.format.name}, Shape{self.shape}, Stride{self.strides}, "
                f"{self.layout.name}>")


def _check_tile(instr: str, name: str, t) -> Tile:
    if not isinstance(t, Tile):
        raise constraint(instr, name, "must be a Tile", type(t).__name__)
    return t


# ptoacc2 (issue 13): the pad code of the low-precision float formats.  pto-isa's A5
# ``PadValueMap`` (include/pto/common/constants.hpp, under PTO_NPU_ARCH_A5), which the A5
# TLOAD (include/pto/npu/a5/TLoad.hpp, ``pto_set_tload_pad_val(GetPadValue<TileData>())``)
# and TFILLPAD (include/pto/npu/a5/TFillPad.hpp) program, maps Null, Zero, Max and Min of
# float8_e4m3/e5m2/e8m0, hifloat8 and float4_e2m1x2/e1m2x2 all to byte 0.  The CPU
# simulator (include/pto/cpu/TLoad.hpp ``getPadValue``) agrees for the fp8 formats and
# hifloat8 (their numeric_limits are not specialised: max()/min() are T() = 0) and differs
# for fp4 (include/pto/cpu/MXTypes.hpp: max() 0x7, min() 0x1 per nibble); fastisa follows
# the hardware.  (The +-inf codes used before were NaN for e4m3fn and e8m0.)
_LOWP_PAD_ZERO = frozenset(("float8_e4m3fn", "float8_e5m2", "float8_e8m0fnu", "hifloat8",
                            "float4_e2m1x2", "float4_e1m2x2"))


def _pad_value(tile: Tile, load: bool = False):
    fmt = tile.format
    if isinstance(tile.pad, PadCustom):        # TLOAD: 0; TFILLPAD: the decoded payload
        return 0 if load else tile.pad.value_for(tile.dtype)
    if fmt.name in _LOWP_PAD_ZERO:
        # ptoacc2 (issue 13): every PadValue of the A5 low-precision float formats is code 0
        # (the code, not the value: float8_e8m0 has no zero, value 0 would store its NaN)
        return np.array(0, np.uint8).view(tile.dtype)[()]
    if tile.pad in (PadValue.Null, PadValue.Zero):
        return 0
    if fmt.name in _lp.LOWP and fmt.name not in ("int64", "uint64"):
        # int4: the code of the integer maximum / minimum
        code = int(_lp.encode(_lp.ALIASES.get(fmt.name, fmt.name),
                              np.array([np.inf if tile.pad == PadValue.Max else -np.inf]),
                              saturate=False)[0])
        if fmt.lanes == 2:
            code = code | code << 4
        return np.array(code, np.uint8).view(tile.dtype)
    if fmt.is_float:
        return np.inf if tile.pad == PadValue.Max else -np.inf
    info = np.iinfo(tile.dtype)
    return info.max if tile.pad == PadValue.Max else info.min


def _mte_cycles(nbytes: int) -> int:
    # Estimate: 64 cycles of DMA start-up plus 64 bytes per cycle.
    return 64 + math.ceil(nbytes / 64)


# ptoacc branch (issue 13): the view may be larger than the valid region
def _check_view_shape(instr: str, name: str, gt: GlobalTensor, tile: Tile) -> None:
    """TLOAD/TSTORE's shape rule.  pto-isa's docs (docs/isa/TLOAD.md "Valid region": "The
    implementation uses dst.GetValidRow() / GetValidCol() as the transfer size") and its
    CPU simulator (include/pto/cpu/TLoad.hpp / TStore.hpp: the loop runs over the tile's
    valid region and maps (row, col) through the tensor's shape and strides; the shape
    equality there is an ``assert``) move the valid region; PTOAS accepts an ND/DN view
    larger than the valid shape (its A5 TLOAD template's precondition is valid <= view <=
    tile: lib/TileOps/tload_template.py ``_check_load_bounds``; e.g. an 8 x 48 view loaded
    into an 8 x 48 tile with valid 8 x 16).  So an ND/DN view needs rows >= valid_row and
    cols >= valid_col, and the valid region moves to / from the view's top-left
    ``[:valid_row, :valid_col]`` (elements (row, col) of the view's 2-D form); a smaller view
    (the simulator would read outside it) and an NZ / MX view of another shape (the
    simulator's NZ check is an equality) raise ConstraintError."""
    vr, vc = tile.valid_shape
    if gt.layout not in (Layout.ND, Layout.DN):
        if (gt.rows, gt.cols) != (vr, vc):
            raise constraint(instr, f"{name} shape", f"(rows, cols) must equal the tile valid "
                             f"shape {tile.valid_shape} for a {gt.layout.name} tensor",
                             (gt.rows, gt.cols))
    elif gt.rows < vr or gt.cols < vc:
        raise constraint(instr, f"{name} shape", f"(rows, cols) must be at least the tile valid "
                         f"shape {tile.valid_shape} (the valid region is what moves)",
                         (gt.rows, gt.cols))


def TLOAD(tile: Tile, gt: GlobalTensor) -> None:  # noqa: N802
    """``tile[valid] = gt``: load a GM tensor into a tile's valid region (MTE2).

    The whole tile capacity is first filled with the tile's pad value (Null/Zero: 0, Max:
    +inf or the integer maximum, Min: -inf or the integer minimum; every PadValue of an fp8,
    hifloat8 or fp4 tile: code 0, pto-isa's A5 PadValueMap), as the reference CPU
    simulator does (the PTO ISA docs and CPU simulator (github.com/hw-native-sys/pto-isa, docs/isa/ and include/pto/cpu/)), then the valid region is copied.  The tensor's
    rows x cols (ND: dims 0-3 x dim 4; DN: dim 3 x dims 0,1,2,4; NZ: dims 2,3 x dims
    0,1,4) must be at least the tile's valid shape (ND/DN: its top-left valid_row x
    valid_col elements are loaded, as the CPU simulator; NZ/MX: equal, see
    :func:`_check_view_shape`) and its dtype the tile's.  Raises ConstraintError.
    """
    if type(tile).__name__ == "ConvTile":
        from ._conv import load
        return load(tile, gt)
    _check_tile("TLOAD", "tile", tile)
    if not isinstance(gt, GlobalTensor):
        raise constraint("TLOAD", "src", "must be a GlobalTensor", type(gt).__name__)
    if gt.format.name != tile.format.name:
        raise constraint("TLOAD", "src.dtype", f"must equal the tile dtype {tile.format.name}",
                         gt.format.name)
    _check_view_shape("TLOAD", "src", gt, tile)
    src = gt.view2d()          # every check (and the view) before the first write
    tile._buf[...] = _pad_value(tile, load=True)
    np.copyto(tile.valid, src[:tile.valid_row, :tile.valid_col])
    nbytes = tile.valid_row * tile.valid_col * tile.dtype.itemsize
    cost.record("MTE2", "TLOAD", _mte_cycles(nbytes), reads=[gt], writes=[tile], nbytes=nbytes)


def TSTORE(gt: GlobalTensor, tile: Tile, preQuantScalar: Int | None = None,  # noqa: N802,N803
           reluPreMode: int = 0, saturateInf: bool = False) -> None:  # noqa: N803
    """``gt = tile[valid]``: store a tile's valid region to a GM tensor (MTE3); nothing else
    of ``gt.array`` is written.  Shapes and dtypes as TLOAD.  Raises ConstraintError.

    The fixpipe forms (pto-isa docs/isa/TSTORE.md; arithmetic: :mod:`fastisa.pto._fixpipe`):
    a dtype change from an Acc tile (float32 -> float16/bfloat16), ``preQuantScalar`` (the
    64-bit quantisation word, e.g. ``QuantWord.pack(scale, offset)``) for the quantising
    pairs (float32/int32 -> int8/uint8/float16/bfloat16/int16/...), ``reluPreMode``
    (ReluPreMode.NormalRelu: ReLU in the fixpipe) and ``saturateInf`` (the CTRL bit that
    makes float16/bfloat16 results saturate inf and zero NaN)."""
    if type(tile).__name__ == "ConvTile" and preQuantScalar is None and not reluPreMode:
        from ._conv import store as _conv_store
        return _conv_store(gt, tile)
    if preQuantScalar is not None or reluPreMode or gt_needs_fixpipe(gt, tile):
        from ._fixpipe import store
        return store("TSTORE", gt, tile, preQuantScalar, None, reluPreMode, saturateInf)
    _check_tile("TSTORE", "tile", tile)
    if not isinstance(gt, GlobalTensor):
        raise constraint("TSTORE", "dst", "must be a GlobalTensor", type(gt).__name__)
    if gt.format.name != tile.format.name:
        raise constraint("TSTORE", "dst.dtype", f"must equal the tile dtype {tile.format.name}",
                         gt.format.name)
    _check_view_shape("TSTORE", "dst", gt, tile)
    if not gt.array.flags.writeable:
        raise constraint("TSTORE", "dst.array", "must be writeable", "read-only array")
    if gt.layout >= Layout.MX_A_ZZ:
        raise constraint("TSTORE", "dst.layout", "must not be an MX scale layout (TLOAD only)",
                         gt.layout.name)
    view = gt.view2d()
    vr, vc = tile.valid_shape
    if not np.shares_memory(view, gt.array):
        # ND/DN reshape had to copy: write through the 5-D view instead.
        if view.shape != (vr, vc):      # a larger view: keep its other elements
            view = view.copy()
            view[:vr, :vc] = tile.valid
            gt._write2d(view)
        else:
            gt._write2d(tile.valid)
    else:
        np.copyto(view[:vr, :vc], tile.valid)
    nbytes = tile.valid_row * tile.valid_col * tile.dtype.itemsize
    cost.record("MTE3", "TSTORE", _mte_cycles(nbytes), reads=[tile], writes=[gt], nbytes=nbytes)


def gt_needs_fixpipe(gt, tile) -> bool:
    """An Acc tile stored to a GM tensor of another dtype goes through the fixpipe."""
    return (isinstance(gt, GlobalTensor) and isinstance(tile, Tile)
            and tile.loc == TileType.Acc and gt.format.name != tile.format.name)


def TSTORE_FP(gt: GlobalTensor, tile: Tile, fp: Tile, reluPreMode: int = 0,  # noqa: N802,N803
              saturateInf: bool = False) -> None:  # noqa: N803
    """TSTORE with a vector of quantisation words: ``fp`` is a uint64 tile holding one word
    per column of the stored region (per row for a column-major tile); each word's scale is
    cut to its 19-bit form (pto-isa docs/isa/TSTORE.md ``TSTORE_FP``; arithmetic and word
    layout: :mod:`fastisa.pto._fixpipe`).  Raises ConstraintError."""
    from ._fixpipe import store
    return store("TSTORE_FP", gt, tile, None, fp, reluPreMode, saturateInf)


def TASSIGN(tile: Tile, addr: Int) -> None:  # noqa: N802
    """Bind ``tile`` to byte offset ``addr`` of its on-chip buffer (Vec: UB, Mat: L1,
    Left: L0A, Right: L0B, Acc: L0C, Bias: BT, Scaling: FB), sized per target (A2/A3 UB
    192 KiB, A5 256 KiB; see BUFFER_BYTES).  The tile then reads and writes that memory:
    tiles assigned overlapping addresses alias.  The previous contents of the tile are not
    copied.  Raises AlignmentError (addr % 32 != 0) or AccessError (outside the buffer)."""
    _check_tile("TASSIGN", "tile", tile)
    addr = _as_int(addr, "addr", "TASSIGN")
    name = _LOC_BUFFER[tile.loc]
    cap = BUFFER_BYTES[_State.target][name]
    if addr < 0:
        raise AccessError(f"TASSIGN: addr must be >= 0, got {addr}")
    if addr % 32:
        raise AlignmentError(f"TASSIGN: addr must be a multiple of 32 bytes, got {addr}")
    if addr + tile.nbytes > cap:
        raise AccessError(f"TASSIGN: addr {addr} + tile size {tile.nbytes} bytes exceeds the "
                          f"{name} capacity of {cap} bytes on {_State.target}")
    tile._buf = _pool(name)[addr: addr + tile.nbytes].view(tile.dtype)
    tile.addr = addr
