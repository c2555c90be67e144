"""The number-format registry: one :class:`Format` entry per spec data type.

Names follow the NKI docs, page NKI ISA API Common Fields (github.com/aws-neuron/aws-neuron-sdk, nki/api/nki.api.shared.rst) ("Supported Data Types").  Each entry is data (bits, exponent
bias, limits, inf/NaN policy, overflow rule) mirrored one-to-one by the C traits table
in ``csrc/fastisa/convert.h``; ``tests/test_dtypes.py`` checks that the two agree.

Arrays carry the entry's ``np_dtype``: the ml_dtypes dtype where ml_dtypes has the
format, numpy's own otherwise.  Three formats have no ml_dtypes type and are stored in
a container instead:

* ``tfloat32``: a float32 container whose low 13 mantissa bits are zero;
* ``float8_e5m2_x4`` / ``float8_e4m3fn_x4``: four fp8 codes in a little-endian uint32,
  element i in byte i;
* ``float4_e2m1fn_x4``: four fp4 codes in a uint16, element i in bits 4i..4i+3.

``bool_`` is stored as uint8.
"""

from __future__ import annotations

from dataclasses import dataclass

import ml_dtypes
import numpy as np

__all__ = ["Format", "FORMATS", "lookup", "by_code"]


@dataclass(frozen=True)
class Format:
    """One number format.  Float limits are Python floats (exact for every format)."""

    name: str
    code: int              #: fi_format code in csrc/fastisa/formats.h
    kind: str              #: "int", "float", "packed" or "bool"
    bits: int              #: bits per element (per packed element for x4 types)
    exp_bits: int = 0
    man_bits: int = 0
    bias: int = 0
    signed: bool = True
    max_finite: float = 0.0
    min_normal: float = 0.0
    min_subnormal: float = 0.0   #: 0.0 when the format has no subnormals
    has_inf: bool = False
    nan_codes: tuple = ()        #: every NaN code (for >8-bit formats: the canonical quiet NaNs)
    overflow: str = "none"       #: default (ml_dtypes) overflow: "inf", "nan", "saturate", "wrap"/"none"
    np_dtype: np.dtype = np.dtype(np.uint8)  #: dtype of arrays holding this format
    container: str | None = None  #: for packed types and tfloat32: what the storage is
    element: str | None = None    #: for packed types: the unpacked element format
    lanes: int = 1                #: elements per container (4 for x4 types)

    @property
    def itemsize(self) -> int:
        """Bytes per stored array item (per container for packed types)."""
        return self.np_dtype.itemsize

    @property
    def is_float(self) -> bool:
        return self.kind == "float"

    @property
    def is_int(self) -> bool:
        return self.kind in ("int", "bool")

    def __repr__(self) -> str:
        return f"fastisa.dtypes.{self.name}"

    # -- numpy interoperability (nki-lang): ``nl.float32`` is this object, and NKI kernels use
    # it where numpy expects a dtype (``np.zeros(n, dtype=nl.float32)``, ``x.astype(
    # nl.bfloat16)``, ``t.dtype == np.float32``, ``str(nl.float32) == 'float32'``), as the
    # official package's dtypes are numpy / ml_dtypes dtypes.
    @property
    def dtype(self) -> np.dtype:
        """The numpy dtype of this format's arrays (what ``np.dtype(fmt)`` returns): the
        ml_dtypes / numpy dtype, ``bool`` for bool_; tfloat32 and the packed x4 types
        their container (float32 / uint32 / uint16), which numpy cannot tell apart."""
        if self.kind == "bool":
            return np.dtype(np.bool_)
        return self.np_dtype

    def __str__(self) -> str:
        return self.name

    def __eq__(self, other) -> bool:
        if isinstance(other, Format):
            return self is other or self.name == other.name
        if self.kind == "packed" or self.container is not None:
            return False      # tfloat32 / x4 have no numpy dtype of their own
        if isinstance(other, str):
            return other == self.name or (self.kind == "bool" and other in ("bool", "bool_"))
        try:
            return np.dtype(other) == self.dtype
        except TypeError:
            return NotImplemented

    def __ne__(self, other) -> bool:
        r = self.__eq__(other)
        return r if r is NotImplemented else not r

    def __hash__(self) -> int:
        return hash(self.name)

    # one object per format: copies (copy.deepcopy, pickle) are the format itself, so
    # ``t.dtype is nl.float32`` holds after a kernel's configuration object was copied
    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __reduce__(self):
        return (lookup, (self.name,))


# A format is an atom, not a record, to code that walks dataclasses: the official package's
# nl.bfloat16 is a numpy / ml_dtypes type, and nki-library builds its test parameters with
# ``dataclasses.asdict(cfg)``, which turned a dataclass Format into a dict of its fields
# (``np.issubdtype`` then failed).  The generated __init__/__setattr__ stay.
del Format.__dataclass_fields__, Format.__dataclass_params__


def _f(name, code, bits, e, m, bias, maxf, minn, mins, inf, nans, ovf, npdt, **kw):
    return Format(name, code, "float", bits, e, m, bias, kw.pop("signed", True), maxf, minn, mins,
                  inf, nans, ovf, np.dtype(npdt), **kw)


def _i(name, code, npdt, signed):
    dt = np.dtype(npdt)
    info = np.iinfo(dt)
    return Format(name, code, "int", dt.itemsize * 8, signed=signed, max_finite=float(info.max),
                  overflow="saturate", np_dtype=dt)


_LIST = [
    _i("uint8", 0, np.uint8, False),
    _i("int8", 1, np.int8, True),
    _i("uint16", 2, np.uint16, False),
    _i("int16", 3, np.int16, True),
    _i("uint32", 4, np.uint32, False),
    _i("int32", 5, np.int32, True),
    _f("float8_e4m3", 6, 8, 4, 3, 7, 240.0, 2.0**-6, 2.0**-9, True,
       tuple(range(0x79, 0x80)) + tuple(range(0xF9, 0x100)), "inf", ml_dtypes.float8_e4m3),
    _f("float8_e5m2", 7, 8, 5, 2, 15, 57344.0, 2.0**-14, 2.0**-16, True,
       (0x7D, 0x7E, 0x7F, 0xFD, 0xFE, 0xFF), "inf", ml_dtypes.float8_e5m2),
    _f("float8_e4m3fn", 8, 8, 4, 3, 7, 448.0, 2.0**-6, 2.0**-9, False, (0x7F, 0xFF), "nan",
       ml_dtypes.float8_e4m3fn),
    _f("float8_e8m0fnu", 9, 8, 8, 0, 127, 2.0**127, 2.0**-127, 0.0, False, (0xFF,), "nan",
       ml_dtypes.float8_e8m0fnu, signed=False),
    _f("float16", 10, 16, 5, 10, 15, 65504.0, 2.0**-14, 2.0**-24, True, (0x7E00, 0xFE00), "inf",
       np.float16),
    _f("bfloat16", 11, 16, 8, 7, 127, float(ml_dtypes.finfo(ml_dtypes.bfloat16).max), 2.0**-126,
       2.0**-133, True, (0x7FC0, 0xFFC0), "inf", ml_dtypes.bfloat16),
    _f("tfloat32", 12, 19, 8, 10, 127, (2 - 2.0**-10) * 2.0**127, 2.0**-126, 2.0**-136, True,
       (0x7FC00000, 0xFFC00000), "inf", np.float32, container="float32 (low 13 mantissa bits zero)"),
    _f("float32", 13, 32, 8, 23, 127, float(np.finfo(np.float32).max), 2.0**-126, 2.0**-149, True,
       (0x7FC00000, 0xFFC00000), "inf", np.float32),
    Format("float8_e5m2_x4", 14, "packed", 8, 5, 2, 15, True, 57344.0, 2.0**-14, 2.0**-16, True,
           (0x7D, 0x7E, 0x7F, 0xFD, 0xFE, 0xFF), "inf", np.dtype(np.uint32),
           container="uint32, element i = byte i (little-endian)", element="float8_e5m2", lanes=4),
    Format("float8_e4m3fn_x4", 15, "packed", 8, 4, 3, 7, True, 448.0, 2.0**-6, 2.0**-9, False,
           (0x7F, 0xFF), "nan", np.dtype(np.uint32),
           container="uint32, element i = byte i (little-endian)", element="float8_e4m3fn", lanes=4),
    Format("float4_e2m1fn_x4", 16, "packed", 4, 2, 1, 1, True, 6.0, 1.0, 0.5, False, (),
           "saturate", np.dtype(np.uint16),
           container="uint16, element i = bits 4i..4i+3", element="float4_e2m1fn", lanes=4),
    Format("bool_", 17, "bool", 8, signed=False, max_finite=1.0, overflow="saturate",
           np_dtype=np.dtype(np.uint8), container="uint8 (0 or 1)"),
    _f("float4_e2m1fn", 18, 4, 2, 1, 1, 6.0, 1.0, 0.5, False, (), "saturate",
       ml_dtypes.float4_e2m1fn),
]

#: name -> Format, in code order.
FORMATS: dict[str, Format] = {f.name: f for f in _LIST}
_BY_CODE = {f.code: f for f in _LIST}
# numpy dtype -> Format for dtypes that identify a format unambiguously.
_BY_NP = {f.np_dtype: f for f in _LIST
          if f.kind in ("int", "float") and f.name != "tfloat32"}
_ALIASES = {"bool": "bool_", "half": "float16", "float": "float32", "bf16": "bfloat16",
            "fp16": "float16", "fp32": "float32"}

for _fmt in _LIST:
    globals()[_fmt.name] = _fmt
__all__ += [f.name for f in _LIST]


def by_code(code: int) -> Format:
    return _BY_CODE[code]


def lookup(dtype) -> Format:
    """The :class:`Format` for a Format, a name (``"bfloat16"``), or a numpy/ml_dtypes dtype.

    Raises ConstraintError (a ValueError) for anything that is not a spec format.
    """
    if isinstance(dtype, Format):
        return dtype
    if isinstance(dtype, str):
        key = _ALIASES.get(dtype, dtype)
        if key in FORMATS:
            return FORMATS[key]
    else:
        try:
            dt = np.dtype(dtype)
        except TypeError:
            dt = None
        if dt is not None:
            if dt == np.bool_:
                return FORMATS["bool_"]
            if dt in _BY_NP:
                return _BY_NP[dt]
    from .errors import ConstraintError
    raise ConstraintError(f"dtype: must be one of the spec formats {sorted(FORMATS)}, got {dtype!r}")


from ._public import make_dir as _make_dir  # noqa: E402

__dir__ = _make_dir(globals())
