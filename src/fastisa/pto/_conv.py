"""ConvTile and TTRANS between convolution layouts (branch ptolowp, issue 13).

``ConvTile<TileType, T, BufferSize, Layout, ConvTileShape<...>>`` of the PTO C++ API
(include/pto/common/pto_tile.hpp): a tile of up to six dimensions in a convolution layout,
its elements stored densely in C order of its shape.  fastisa's ``ConvTile(loc, dtype,
shape, layout, buffer=None)`` owns zeroed storage, or aliases the bytes of a Tile given as
``buffer`` (the C++ tests' ``convTile.data() = tile.data()``).  x2 formats (fp4) store two
codes per byte in element order (element 2j in the low nibble).

TTRANS(dst, src) converts between the layout pairs of pto-isa docs/isa/TTRANS.md's
convolution forms (values per the CPU simulator's tests, tests/cpu/st/testcase/ttrans_conv;
the docs give the layouts, not the padding): channels or batch padded to whole C0 / N0
blocks with zeros.

==================  =======================  =========================================
src layout          dst layout               dst[...] (C = C1*C0 padded, N = N1*N0 padded)
==================  =======================  =========================================
NCHW [N,C,H,W]      NC1HWC0 [N,C1,H,W,C0]    x[n, c1*C0 + c0, h, w]
NC1HWC0             NCHW                     x[n, c // C0, h, w, c % C0]
NC1HWC0             FRACTAL_Z [C1,H,W,N1,N0,C0]  x[n1*N0 + n0, c1, h, w, c0]
GNCHW [G,N,C,H,W]   GNC1HWC0 [G,N,C1,H,W,C0] per group as NCHW -> NC1HWC0
GNC1HWC0            FRACTAL_Z [G*C1,H,W,N1,N0,C0]  per group as NC1HWC0 -> FRACTAL_Z
NCDHW [N,C,D,H,W]   FRACTAL_Z_3D [D*C1*H*W,N1,N0,C0]  x[n, c, d, h, w] at (d, c1, h, w)
==================  =======================  =========================================

(FRACTAL_Z_3D's first axis runs D outermost, as the simulator's golden data does.)

Branch ptoisa2 adds the image-to-column path (module ``_img2col``): the ConvTile's IMG2COL
configuration fields (``SetFmapH``, ``SetPadListArray``, ... as in the C++ ConvTile),
``TIMG2COL``, ``SETFMATRIX``, ``SET_IMG2COL_PADDING``, ``SET_IMG2COL_RPT``, and TEXTRACT from a
FRACTAL_Z ConvTile into a Right tile.
"""

from __future__ import annotations

import math

import numpy as np

from .. import cost
from ..errors import constraint
from . import _lowp_formats as L
from ._tile import Layout, Tile, TileType, _fmt_of

__all__ = ["ConvTile"]

_CONV = ("NCHW", "NC1HWC0", "FRACTAL_Z", "GNCHW", "GNC1HWC0", "NCDHW", "FRACTAL_Z_3D",
         "NDC1HWC0")


class ConvTile:
    """A convolution-layout tile (module doc).  ``shape``: 4 to 6 positive dims; ``layout``: a
    conv Layout (NCHW, NC1HWC0, FRACTAL_Z, GNCHW, GNC1HWC0, NCDHW, FRACTAL_Z_3D, NDC1HWC0);
    ``buffer``: a Tile whose storage this one aliases (it must hold the elements).  Raises
    ConstraintError."""

    def __init__(self, loc, dtype, shape, layout, buffer: Tile | None = None) -> None:
        where = "ConvTile"
        try:
            self.loc = TileType(loc)
        except ValueError:
            raise constraint(where, "loc", "must be a TileType", loc) from None
        self.format = _fmt_of(dtype, where)
        self.dtype = self.format.np_dtype
        try:
            self.layout = Layout(layout)
        except ValueError:
            raise constraint(where, "layout", "must be a Layout", layout) from None
        if self.layout.name not in _CONV:
            raise constraint(where, "layout", f"must be one of {list(_CONV)}", self.layout.name)
        shape = tuple(int(s) for s in shape)
        if not 4 <= len(shape) <= 6 or any(s <= 0 for s in shape):
            raise constraint(where, "shape", "must have 4 to 6 dimensions, each > 0", shape)
        self.shape = shape
        n = math.prod(shape)
        lanes = self.format.lanes
        if n % lanes:
            raise constraint(where, "shape", f"must hold a multiple of {lanes} elements for "
                             f"{self.format.name}", shape)
        self.nbytes = n // lanes * self.dtype.itemsize
        if buffer is None:
            self._buf = np.zeros(n // lanes, self.dtype)
        else:
            if not isinstance(buffer, Tile):
                raise constraint(where, "buffer", "must be a Tile", type(buffer).__name__)
            if buffer.nbytes < self.nbytes:
                raise constraint(where, "buffer", f"must hold {self.nbytes} bytes",
                                 buffer.nbytes)
            self._buf = buffer.buffer.view(np.uint8)[: self.nbytes].view(self.dtype)
        # branch ptoisa2: the IMG2COL configuration (include/pto/common/pto_tile.hpp ConvTile's
        # fields and defaults; setters in _img2col)
        self._i2c = {"FmapH": 0, "FmapW": 0, "FilterH": 1, "FilterW": 1, "DilationH": 1,
                     "DilationW": 1, "StrideH": 1, "StrideW": 1, "ChannelSize": 0,
                     "RepeatStride": 0, "RepeatTime": 1, "RepeatMode": 0, "DstStride": 0,
                     "DstMposition": 0}
        self._pad_list = [0, 0, 0, 0]
        self._pad_value = np.zeros((), self.dtype)
        self._transpose = False

    @property
    def buffer(self) -> np.ndarray:
        return self._buf

    def codes(self) -> np.ndarray:
        """The elements in ``shape`` (x2 formats: one code per element)."""
        if self.format.lanes == 2:
            return L.unpack_codes(self.format.name, self._buf.view(np.uint8)).reshape(self.shape)
        return self._buf.reshape(self.shape)

    def _write(self, elems: np.ndarray) -> None:
        flat = np.ascontiguousarray(elems).reshape(-1)
        if self.format.lanes == 2:
            self._buf.view(np.uint8)[:] = L.pack_codes(self.format.name, flat.astype(np.uint8))
        else:
            self._buf[:] = flat

    def __repr__(self) -> str:
        return f"ConvTile<{self.loc.name}, {self.format.name}, {self.layout.name}, {self.shape}>"


def conv_view(gt) -> np.ndarray:
    """The GM elements of a conv-layout GlobalTensor in index order: its 5-D view, and for
    NDC1HWC0 the implicit innermost C0 = 32 / sizeof(T) contiguous elements."""
    v = gt._view5()
    if gt.layout == Layout.NDC1HWC0:
        c0 = 32 // gt.array.dtype.itemsize
        isz = v.dtype.itemsize
        base = gt.array.reshape(-1, order="A")
        if base.dtype.kind == "V" or base.dtype.name.startswith(("float8", "bfloat")):
            base = base.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[isz])
        w = np.lib.stride_tricks.as_strided(base, shape=gt.shape + (c0,),
                                            strides=tuple(x * isz for x in gt.strides) + (isz,),
                                            writeable=gt.array.flags.writeable)
        return w if w.dtype == gt.array.dtype else w.view(gt.array.dtype)
    return v


def load(tile: ConvTile, gt) -> None:
    """TLOAD into a ConvTile: the tensor's elements in index order (conv_view), same layout,
    same element count and dtype."""
    _same_conv("TLOAD", tile, gt)
    tile._write(np.array(conv_view(gt)).reshape(tile.shape))
    cost.record("MTE2", "TLOAD", 64 + math.ceil(tile.nbytes / 64), nbytes=tile.nbytes)


def store(gt, tile: ConvTile) -> None:
    """TSTORE from a ConvTile (the inverse of :func:`load`)."""
    _same_conv("TSTORE", tile, gt)
    if not gt.array.flags.writeable:
        raise constraint("TSTORE", "dst.array", "must be writeable", "read-only array")
    v = conv_view(gt)
    v[...] = tile.codes().reshape(v.shape)
    cost.record("MTE3", "TSTORE", 64 + math.ceil(tile.nbytes / 64), nbytes=tile.nbytes)


def _same_conv(instr, tile, gt):
    if gt.layout != tile.layout:
        raise constraint(instr, "GlobalTensor layout", f"must equal the ConvTile's layout "
                         f"{tile.layout.name}", gt.layout.name)
    if gt.format.name != tile.format.name or tile.format.lanes != 1:
        raise constraint(instr, "GlobalTensor dtype", f"must equal the ConvTile's dtype "
                         f"{tile.format.name} (not a packed x2 format)", gt.format.name)
    n = conv_view(gt).size
    if n != math.prod(tile.shape):
        raise constraint(instr, "GlobalTensor shape", f"must address the ConvTile's "
                         f"{math.prod(tile.shape)} elements", n)


def _pad(x, axis, to):
    if x.shape[axis] == to:
        return x
    pad = [(0, 0)] * x.ndim
    pad[axis] = (0, to - x.shape[axis])
    return np.pad(x, pad)


def _bad(instr, what, want, got):
    raise constraint(instr, what, f"must be {want}", got)


def ttrans(dst: ConvTile, src: ConvTile) -> None:
    instr = "TTRANS"
    for name, t in (("dst", dst), ("src", src)):
        if not isinstance(t, ConvTile):
            raise constraint(instr, name, "must be a ConvTile when the other operand is one",
                             type(t).__name__)
    if dst.format.name != src.format.name:
        raise constraint(instr, "dst.dtype", f"must equal src.dtype ({src.format.name})",
                         dst.format.name)
    pair = (src.layout.name, dst.layout.name)
    x = src.codes()
    s, d = src.shape, dst.shape
    if pair == ("NCHW", "NC1HWC0") and len(s) == 4 and len(d) == 5:
        N, C, H, W = s
        _, C1, _, _, C0 = d
        if d != (N, C1, H, W, C0) or C1 * C0 < C or (C1 - 1) * C0 >= C:
            _bad(instr, "dst shape", f"(N, ceil(C/C0), H, W, C0) for src {s}", d)
        out = _pad(x, 1, C1 * C0).reshape(N, C1, C0, H, W).transpose(0, 1, 3, 4, 2)
    elif pair == ("NC1HWC0", "NCHW") and len(s) == 5 and len(d) == 4:
        N, C1, H, W, C0 = s
        if d[0] != N or d[2:] != (H, W) or d[1] > C1 * C0:
            _bad(instr, "dst shape", f"(N, C <= C1*C0, H, W) for src {s}", d)
        out = x.transpose(0, 1, 4, 2, 3).reshape(N, C1 * C0, H, W)[:, : d[1]]
    elif pair == ("NC1HWC0", "FRACTAL_Z") and len(s) == 5 and len(d) == 6:
        N, C1, H, W, C0 = s
        N1, N0 = d[3], d[4]
        if d != (C1, H, W, N1, N0, C0) or N1 * N0 < N or (N1 - 1) * N0 >= N:
            _bad(instr, "dst shape", f"(C1, H, W, ceil(N/N0), N0, C0) for src {s}", d)
        out = _pad(x, 0, N1 * N0).reshape(N1, N0, C1, H, W, C0).transpose(2, 3, 4, 0, 1, 5)
    elif pair == ("GNCHW", "GNC1HWC0") and len(s) == 5 and len(d) == 6:
        G, N, C, H, W = s
        C1, C0 = d[2], d[5]
        if d != (G, N, C1, H, W, C0) or C1 * C0 < C or (C1 - 1) * C0 >= C:
            _bad(instr, "dst shape", f"(G, N, ceil(C/C0), H, W, C0) for src {s}", d)
        out = _pad(x, 2, C1 * C0).reshape(G, N, C1, C0, H, W).transpose(0, 1, 2, 4, 5, 3)
    elif pair == ("GNC1HWC0", "FRACTAL_Z") and len(s) == 6 and len(d) == 6:
        G, N, C1, H, W, C0 = s
        N1, N0 = d[3], d[4]
        if d != (G * C1, H, W, N1, N0, C0) or N1 * N0 < N or (N1 - 1) * N0 >= N:
            _bad(instr, "dst shape", f"(G*C1, H, W, ceil(N/N0), N0, C0) for src {s}", d)
        out = _pad(x, 1, N1 * N0).reshape(G, N1, N0, C1, H, W, C0).transpose(0, 3, 4, 5, 1, 2, 6)
    elif pair == ("NCDHW", "FRACTAL_Z_3D") and len(s) == 5 and len(d) == 4:
        N, C, D, H, W = s
        N1, N0, C0 = d[1], d[2], d[3]
        C1 = -(-C // C0)
        if d != (D * C1 * H * W, N1, N0, C0) or N1 * N0 < N or (N1 - 1) * N0 >= N:
            _bad(instr, "dst shape", f"(D*ceil(C/C0)*H*W, ceil(N/N0), N0, C0) for src {s}", d)
        y = _pad(_pad(x, 0, N1 * N0), 1, C1 * C0)
        out = y.reshape(N1, N0, C1, C0, D, H, W).transpose(4, 2, 5, 6, 0, 1, 3)
    else:
        raise constraint(instr, "(src.layout, dst.layout)", "must be one of NCHW->NC1HWC0, "
                         "NC1HWC0->NCHW, NC1HWC0->FRACTAL_Z, GNCHW->GNC1HWC0, GNC1HWC0->"
                         "FRACTAL_Z, NCDHW->FRACTAL_Z_3D with matching shapes", pair)
    dst._write(np.array(out.reshape(d), copy=True))   # (src may alias dst)
    cost.record("Vector", instr, 32 + math.ceil(dst.nbytes / 256))
