"""PTO image-to-column and cube-side ConvTile moves (branch ptoisa2, issue 13): TIMG2COL,
SETFMATRIX, SET_IMG2COL_PADDING, SET_IMG2COL_RPT, the ConvTile's IMG2COL configuration and
TEXTRACT from a FRACTAL_Z ConvTile (pto-isa docs/isa/TIMG2COL.md, SETFMATRIX.md,
SET_IMG2COL_PADDING.md, SET_IMG2COL_RPT.md, TEXTRACT.md; the docs give no formula, so the
semantics are the CPU simulator's: include/pto/cpu/TImg2col.hpp, SetFmatrix.hpp,
SetImg2colPadding.hpp, SetImg2colRpt.hpp, TExtract.hpp ``TEXTRACT_CONVTILE_IMPL``).

**Configuration.**  As in the C++ ``ConvTile`` (include/pto/common/pto_tile.hpp), the IMG2COL
parameters are fields of the source ConvTile, set with ``SetFmapH``/``SetFmapW``,
``SetFilterH``/``SetFilterW``, ``SetStrideH``/``SetStrideW``, ``SetDilationH``/``SetDilationW``,
``SetPadList(i, v)``/``SetPadListArray([left, right, top, bottom])``, ``SetPadValue``,
``SetChannelSize``, ``SetRepeatStride``, ``SetRepeatTime``, ``SetRepeatMode``, ``SetDstStride``,
``SetDstMposition``, ``SetTranspose`` (and the matching ``Get...``), with the C++ defaults (fmap
0 x 0, filter/stride/dilation 1, pads 0, pad value 0, repeat time 1, the rest 0).  TIMG2COL
reads them from the ConvTile as the simulator does, so SETFMATRIX / SET_IMG2COL_PADDING /
SET_IMG2COL_RPT change no state: they check what the simulator asserts (SETFMATRIX: fmap
height and width > 0).

**TIMG2COL(dst, src, posM=0, posK=0)**, src a Mat ConvTile in NC1HWC0 ``[N, C1, H, W, C0]``
or NDC1HWC0 ``[N, D, C1, H, W, C0]`` (D = 1 for NC1HWC0), dst a Left tile (BLayout ColMajor,
SLayout RowMajor) of src's dtype.  With pads (l, r, t, b), filter (fh, fw), stride (sh, sw),
dilation (dh, dw), the shape's H and W::

    outH = (H + t + b - dh*(fh-1) - 1) // sh + 1        outW likewise with l, r, dw, fw, sw
    for i < dst.validRow, j < dst.validCol:  m = posM + i,  k = posK + j
        n, d, oh, ow = m // (D*outH*outW), (m // (outH*outW)) % D, (m // outW) % outH, m % outW
        c1, (kh, kw), c0 = k // (C0*fh*fw), divmod((k % (C0*fh*fw)) // C0, fw), k % C0
        h, w = oh*sh + kh*dh - t,  ow*sw + kw*dw - l
        dst[i, j] = src[n, d, c1, h, w, c0]   if n < N, c1 < C1, 0 <= h < H, 0 <= w < W
                    padValue                   otherwise

(the M axis runs over output pixels, the K axis over (c1, kh, kw, c0) with c0 innermost).
The fmap size fields and ChannelSize do not enter the result (the simulator reads H and W
from the ConvTile's shape); the repeat fields and the FmatrixMode are accepted and have no
effect (single issue).  dtypes: A2/A3 int8, float16, bfloat16, float32; A5 also uint8,
int16, uint16, int32, uint32 (docs/isa/TIMG2COL.md, Constraints).

**TEXTRACT(dst, src, indexRow, indexCol)** with src a Mat ConvTile in FRACTAL_Z ``[C1HW, N1,
16, C0]`` (or ``[C1, H, W, N, C0]``) or FRACTAL_Z_3D ``[D*C1*H*W, N1, 16, C0]``, C0 = 32 /
sizeof(T), and dst a Right tile (BLayout RowMajor, SLayout ColMajor) of a same-size dtype:
the source is the K x N matrix ``B[k, n] = src[k // C0, n // 16, n % 16, k % C0]`` (K = C1HW*C0,
N = N1*16) and ``dst[i, j] = B[indexRow + i, indexCol + j]`` over dst's valid region (bits
copied).  The simulator copies whole 16 x C0 fractals addressed in fractal units
(``(indexRow * sizeof(T)) >> 5``, ``indexCol >> 4``): fastisa requires indexRow % C0 == 0 and
indexCol % 16 == 0 (an unaligned index would be floored silently) and writes only dst's
valid region (the simulator also fills the rest of partly valid fractals).
"""

from __future__ import annotations

import enum
import math

import numpy as np

from .. import cost
from ..errors import ConstraintError, constraint
from ._conv import ConvTile
from ._ops import _scalar_array
from ._tile import BLayout, Layout, SLayout, Tile, TileType, _State

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .._types import Int, Real

__all__ = ["SetFmatrixMode", "TIMG2COL", "SETFMATRIX", "SET_IMG2COL_PADDING", "SET_IMG2COL_RPT"]


class SetFmatrixMode(enum.IntEnum):
    """Which FMATRIX register set an IMG2COL configuration targets (type.hpp)."""
    FMATRIX_A_AUTO = 0
    FMATRIX_B_AUTO = 1
    FMATRIX_A_MANUAL = 2
    FMATRIX_B_MANUAL = 3


#: setter -> the C++ setter's parameter width (values outside raise ConstraintError)
_FIELDS = {"FmapH": 16, "FmapW": 16, "FilterH": 16, "FilterW": 16, "DilationH": 8,
           "DilationW": 8, "StrideH": 8, "StrideW": 8, "ChannelSize": 16, "RepeatStride": 16,
           "RepeatTime": 8, "RepeatMode": 8, "DstStride": 16, "DstMposition": 16}


def _uint(where, name, v, bits):
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not 0 <= v < 1 << bits:
        raise constraint(where, name, f"must be an integer in [0, {(1 << bits) - 1}]", v)
    return int(v)


def _field(name, bits):
    def setter(self, value: Int) -> None:
        self._i2c[name] = _uint(f"ConvTile.Set{name}", name[0].lower() + name[1:], value, bits)

    def getter(self) -> int:
        return self._i2c[name]
    setter.__name__, getter.__name__ = f"Set{name}", f"Get{name}"
    setter.__doc__ = (f"Sets the IMG2COL field {name} (an unsigned {bits}-bit value; C++ "
                      f"ConvTile::Set{name}).  Raises ConstraintError out of range.")
    getter.__doc__ = f"The IMG2COL field {name} (C++ ConvTile::Get{name})."
    return setter, getter


for _n, _b in _FIELDS.items():
    _s, _g = _field(_n, _b)
    setattr(ConvTile, _s.__name__, _s)
    setattr(ConvTile, _g.__name__, _g)


def _set_pad_list(self, index: Int, value: Int) -> None:
    """Sets pad ``index`` (0 left, 1 right, 2 top, 3 bottom) to an 8-bit value."""
    i = _uint("ConvTile.SetPadList", "index", index, 2)
    self._pad_list[i] = _uint("ConvTile.SetPadList", "value", value, 8)


def _get_pad_list(self, index: Int) -> int:
    """Pad ``index`` (0 left, 1 right, 2 top, 3 bottom)."""
    return self._pad_list[_uint("ConvTile.GetPadList", "index", index, 2)]


def _set_pad_list_array(self, values) -> None:
    """Sets the four pads [left, right, top, bottom] (8-bit values)."""
    vals = list(values)
    if len(vals) != 4:
        raise constraint("ConvTile.SetPadListArray", "values", "must hold 4 pads", len(vals))
    new = [_uint("ConvTile.SetPadListArray", f"values[{i}]", v, 8) for i, v in enumerate(vals)]
    self._pad_list[:] = new


def _get_pad_list_array(self) -> list:
    """The four pads [left, right, top, bottom]."""
    return list(self._pad_list)


def _set_pad_value(self, value: Real) -> None:
    """Sets the value TIMG2COL writes for padded positions, converted to the ConvTile's dtype
    (floats round to nearest even; integers must be representable)."""
    if self.format.lanes != 1:
        raise constraint("ConvTile.SetPadValue", "dtype", "must not be a packed x2 format",
                         self.format.name)
    self._pad_value = _scalar_array("ConvTile.SetPadValue", "value", value, self.format)[0]


def _get_pad_value(self):
    """The pad value (a numpy scalar of the ConvTile's dtype)."""
    return self._pad_value.copy()


def _set_transpose(self, value: bool) -> None:
    """Sets the transpose flag (accepted; TIMG2COL on the CPU simulator ignores it)."""
    self._transpose = bool(value)


def _get_transpose(self) -> bool:
    """The transpose flag."""
    return self._transpose


for _f, _nm in ((_set_pad_list, "SetPadList"), (_get_pad_list, "GetPadList"),
                (_set_pad_list_array, "SetPadListArray"), (_get_pad_list_array, "GetPadListArray"),
                (_set_pad_value, "SetPadValue"), (_get_pad_value, "GetPadValue"),
                (_set_transpose, "SetTranspose"), (_get_transpose, "GetTranspose")):
    _f.__name__ = _nm
    setattr(ConvTile, _nm, _f)


# ---- validation helpers -------------------------------------------------------------------
_I2C_DTYPES = {"A2A3": ("int8", "float16", "bfloat16", "float32"),
               "A5": ("int8", "uint8", "int16", "uint16", "int32", "uint32", "float16",
                      "bfloat16", "float32")}


def _conv_src(instr, src, layouts):
    if not isinstance(src, ConvTile):
        raise constraint(instr, "src", "must be a ConvTile", type(src).__name__)
    if src.loc != TileType.Mat:
        raise constraint(instr, "src.loc", "must be TileType.Mat", src.loc.name)
    if src.layout.name not in layouts:
        raise constraint(instr, "src.layout", f"must be one of {list(layouts)}", src.layout.name)


def _mode(instr, mode):
    try:
        return SetFmatrixMode(mode)
    except ValueError:
        raise constraint(instr, "fmatrixMode", "must be a SetFmatrixMode", mode) from None


def _i2c_params(instr, src):
    """(N, D, C1, H, W, C0, outH, outW) of an NC1HWC0 / NDC1HWC0 ConvTile's configuration."""
    want = 5 if src.layout == Layout.NC1HWC0 else 6
    if len(src.shape) != want:
        raise constraint(instr, "src.shape", f"must have {want} dimensions for "
                         f"{src.layout.name}", src.shape)
    N, D, C1, H, W, C0 = src.shape if want == 6 else src.shape[:1] + (1,) + src.shape[1:]
    f = src._i2c
    for name in ("FilterH", "FilterW", "StrideH", "StrideW", "DilationH", "DilationW"):
        if f[name] < 1:
            raise constraint(instr, f"src.{name}", "must be >= 1", f[name])
    left, right, top, bottom = src._pad_list
    outs = []
    for axis, size, p0, p1, d, k, s in (("H", H, top, bottom, f["DilationH"], f["FilterH"],
                                         f["StrideH"]),
                                        ("W", W, left, right, f["DilationW"], f["FilterW"],
                                         f["StrideW"])):
        span = size + p0 + p1 - d * (k - 1) - 1
        if span < 0:
            raise constraint(instr, f"src output {axis}", f"must be >= 1 (the dilated filter "
                             f"{d * (k - 1) + 1} exceeds the padded input {size + p0 + p1})",
                             span // s + 1)
        outs.append(span // s + 1)
    return N, D, C1, H, W, C0, outs[0], outs[1]


def SETFMATRIX(src: ConvTile, fmatrixMode: SetFmatrixMode | int = SetFmatrixMode.FMATRIX_A_MANUAL  # noqa: N802,N803
               ) -> None:
    """Load the FMATRIX registers from ``src``'s IMG2COL configuration (docs/isa/SETFMATRIX.md).
    fastisa's TIMG2COL reads the configuration from the ConvTile (module doc), so this changes
    no state; it checks what the CPU simulator asserts (include/pto/cpu/SetFmatrix.hpp):
    ``src.GetFmapH() > 0 and src.GetFmapW() > 0``.  src: a Mat ConvTile (NC1HWC0 /
    NDC1HWC0).  Raises ConstraintError."""
    instr = "SETFMATRIX"
    _conv_src(instr, src, ("NC1HWC0", "NDC1HWC0"))
    _mode(instr, fmatrixMode)
    for name in ("FmapH", "FmapW"):
        if src._i2c[name] <= 0:
            raise constraint(instr, f"src.{name}", "must be > 0 (set it with Set"
                             f"{name})", src._i2c[name])


def SET_IMG2COL_PADDING(src: ConvTile,  # noqa: N802
                        fmatrixMode: SetFmatrixMode | int = SetFmatrixMode.FMATRIX_A_MANUAL  # noqa: N803
                        ) -> None:
    """Load the IMG2COL padding state from ``src`` (docs/isa/SET_IMG2COL_PADDING.md: "no
    direct tensor arithmetic"); no state in fastisa (module doc) and no check in the CPU
    simulator (include/pto/cpu/SetImg2colPadding.hpp).  src: a Mat ConvTile (NC1HWC0 /
    NDC1HWC0).  Raises ConstraintError for another operand."""
    instr = "SET_IMG2COL_PADDING"
    _conv_src(instr, src, ("NC1HWC0", "NDC1HWC0"))
    _mode(instr, fmatrixMode)


def SET_IMG2COL_RPT(src: ConvTile,  # noqa: N802
                    fmatrixMode: SetFmatrixMode | int = SetFmatrixMode.FMATRIX_A_MANUAL  # noqa: N803
                    ) -> None:
    """Load the IMG2COL repeat state from ``src`` (docs/isa/SET_IMG2COL_RPT.md); no state in
    fastisa (module doc).  The CPU simulator asserts ``GetRepeatTime() >= 0``, which its
    unsigned field always meets (include/pto/cpu/SetImg2colRpt.hpp).  src: a Mat ConvTile
    (NC1HWC0 / NDC1HWC0).  Raises ConstraintError for another operand."""
    instr = "SET_IMG2COL_RPT"
    _conv_src(instr, src, ("NC1HWC0", "NDC1HWC0"))
    _mode(instr, fmatrixMode)


def TIMG2COL(dst: Tile, src: ConvTile, posM: Int = 0, posK: Int = 0,  # noqa: N802,N803
             fmatrixMode: SetFmatrixMode | int = SetFmatrixMode.FMATRIX_A_MANUAL) -> None:  # noqa: N803
    """Image-to-column: ``dst[i, j] = src[n, d, c1, oh*sh + kh*dh - padTop, ow*sw + kw*dw -
    padLeft, c0]`` (src's pad value where that lies outside the map, n >= N or c1 >= C1) with
    ``(n, d, oh, ow)`` the output pixel ``posM + i`` and ``(c1, kh, kw, c0)`` the tap and
    channel ``posK + j`` (c0 innermost; full formula in the module doc).  Source: the CPU
    simulator, include/pto/cpu/TImg2col.hpp (docs/isa/TIMG2COL.md gives no formula).

    dst: Left tile (BLayout ColMajor, SLayout RowMajor), only its valid region written.
    src: Mat ConvTile, NC1HWC0 ``[N, C1, H, W, C0]`` or NDC1HWC0 ``[N, D, C1, H, W, C0]``, of
    dst's dtype (A2/A3: int8, float16, bfloat16, float32; A5 adds uint8, int16, uint16, int32,
    uint32), its IMG2COL fields set (filter, stride, dilation >= 1; the dilated filter must fit
    the padded input).  posM, posK: uint16 offsets along M (output pixels) and K (taps x
    channels).  Raises ConstraintError; nothing is written then."""
    instr = "TIMG2COL"
    if not isinstance(dst, Tile):
        raise constraint(instr, "dst", "must be a Tile", type(dst).__name__)
    _conv_src(instr, src, ("NC1HWC0", "NDC1HWC0"))
    if dst.loc != TileType.Left:
        raise constraint(instr, "dst.loc", "must be TileType.Left", dst.loc.name)
    if dst.blayout != BLayout.ColMajor or dst.slayout != SLayout.RowMajor:
        raise constraint(instr, "dst layout", "must be BLayout.ColMajor with SLayout.RowMajor",
                         f"{dst.blayout.name}/{dst.slayout.name}")
    if dst.format.name != src.format.name:
        raise constraint(instr, "dst.dtype", f"must equal src.dtype ({src.format.name})",
                         dst.format.name)
    allowed = _I2C_DTYPES["A5" if _State.target == "A5" else "A2A3"]
    if dst.format.name not in allowed:
        raise constraint(instr, "dtype", f"must be one of {list(allowed)} on {_State.target}",
                         dst.format.name)
    pm = _uint(instr, "posM", posM, 16)
    pk = _uint(instr, "posK", posK, 16)
    _mode(instr, fmatrixMode)
    N, D, C1, H, W, C0, oH, oW = _i2c_params(instr, src)
    f = src._i2c
    left, _right, top, _bottom = src._pad_list
    R, C = dst.valid_shape
    if R and C:
        m = pm + np.arange(R, dtype=np.int64)[:, None]
        k = pk + np.arange(C, dtype=np.int64)[None, :]
        n, rem = np.divmod(m, D * oH * oW)
        d, rem = np.divmod(rem, oH * oW)
        oh, ow = np.divmod(rem, oW)
        kc = C0 * f["FilterH"] * f["FilterW"]
        c1 = k // kc
        kh, kw = np.divmod((k % kc) // C0, f["FilterW"])
        c0 = k % C0
        h = oh * f["StrideH"] + kh * f["DilationH"] - top
        w = ow * f["StrideW"] + kw * f["DilationW"] - left
        ok = (n < N) & (c1 < C1) & (h >= 0) & (h < H) & (w >= 0) & (w < W)
        flat = (((((n * D + d) * C1 + c1) * H + h) * W + w) * C0 + c0)
        vals = src.buffer[np.where(ok, flat, 0)]
        vals[~ok] = src._pad_value
        dst.data[:R, :C] = vals
    cost.record("MTE1", instr, 32 + math.ceil(R * C * dst.dtype.itemsize / 64))


# ---- TEXTRACT from a FRACTAL_Z ConvTile (dispatched from _layout.TEXTRACT) ----------------
_XC_DTYPES = ("int8", "uint8", "int16", "uint16", "int32", "uint32", "float16", "bfloat16",
              "float32")


def fractal_matrix(src: ConvTile) -> np.ndarray:
    """The K x N matrix a FRACTAL_Z / FRACTAL_Z_3D ConvTile holds (module doc), a view."""
    isz = src.dtype.itemsize
    c0 = 32 // isz
    s = src.shape
    if len(s) == 4:
        kb, nb, n0, cc = s
    elif len(s) == 5 and src.layout == Layout.FRACTAL_Z:
        kb, nb, n0, cc = s[0] * s[1] * s[2], s[3] // 16, 16, s[4]
        if s[3] % 16:
            raise constraint("TEXTRACT", "src.shape", "must have N % 16 == 0 ([C1, H, W, N, "
                             "C0])", s)
    else:
        raise constraint("TEXTRACT", "src.shape", "must be [C1HW, N1, 16, C0] or [C1, H, W, N, "
                         "C0]", s)
    if n0 != 16 or cc != c0:
        raise constraint("TEXTRACT", "src.shape", f"must end in the 16 x C0 fractal (16, {c0})",
                         s)
    return src.buffer.reshape(kb, nb, 16, c0).transpose(0, 3, 1, 2).reshape(kb * c0, nb * 16)


def textract(dst: Tile, src: ConvTile, indexRow, indexCol) -> None:
    instr = "TEXTRACT"
    _conv_src(instr, src, ("FRACTAL_Z", "FRACTAL_Z_3D"))
    if not isinstance(dst, Tile):
        raise constraint(instr, "dst", "must be a Tile", type(dst).__name__)
    if dst.loc != TileType.Right:
        raise constraint(instr, "dst.loc", "must be TileType.Right for a ConvTile src",
                         dst.loc.name)
    if dst.blayout != BLayout.RowMajor or dst.slayout != SLayout.ColMajor:
        raise constraint(instr, "dst layout", "must be BLayout.RowMajor with SLayout.ColMajor "
                         "for a ConvTile src", f"{dst.blayout.name}/{dst.slayout.name}")
    for name, t in (("dst", dst), ("src", src)):
        if t.format.name not in _XC_DTYPES:
            raise constraint(instr, f"{name}.dtype", f"must be one of {list(_XC_DTYPES)} for a "
                             "ConvTile src", t.format.name)
    if dst.dtype.itemsize != src.dtype.itemsize:
        raise constraint(instr, "dst.dtype", f"must have src's element size "
                         f"({src.dtype.itemsize} bytes)", dst.format.name)
    B = fractal_matrix(src)
    c0 = 32 // src.dtype.itemsize
    r0 = _uint(instr, "indexRow", indexRow, 16)
    cc = _uint(instr, "indexCol", indexCol, 16)
    if r0 % c0 or cc % 16:
        raise constraint(instr, "indexRow/indexCol", f"must be multiples of C0 = {c0} and 16 "
                         "(whole fractals)", (r0, cc))
    R, C = dst.valid_shape
    if r0 + R > B.shape[0] or cc + C > B.shape[1]:
        raise ConstraintError(f"{instr}: dst's valid region {(R, C)} at ({r0}, {cc}) must lie "
                              f"inside src's {B.shape[0]} x {B.shape[1]} fractal matrix")
    if R and C:
        dst.data[:R, :C] = B[r0:r0 + R, cc:cc + C].view(dst.dtype)
    cost.record("MTE1", instr, 32 + math.ceil(R * C * dst.dtype.itemsize / 64))
