"""Conversions between the spec's number formats (the NKI docs, page NKI ISA API Common Fields (github.com/aws-neuron/aws-neuron-sdk, nki/api/nki.api.shared.rst) "Supported Data Types",
"Type Casting"; ml_dtypes (github.com/jax-ml/ml_dtypes) and the NKI docs (github.com/aws-neuron/aws-neuron-sdk, nki/api/nki.api.shared.rst)).

Every conversion goes through float32 and is one pass of C (``csrc/fastisa/convert.h``)
with the GIL released; no numpy arithmetic or ml_dtypes code runs in a conversion.

* :func:`convert` -- any format to any format, ``saturate=False`` (ml_dtypes / numpy
  ``astype`` bits), ``True`` (clamp to +-max finite) or ``"ascend"`` (Ascend saturation
  mode: also NaN -> 0).
* :func:`pack_x4` / :func:`unpack_x4` -- bit-level packing of float8 / float4 element
  codes into the x4 containers and back.
"""

from __future__ import annotations

import math

import numpy as np

from . import dtypes as _dt
from . import errors as _err
from ._kernels import convert as _k

__all__ = ["convert", "pack_x4", "unpack_x4", "SATURATE_MODES"]

#: Accepted ``saturate`` values and the C mode each selects (FI_SAT_NONE/MAX/ASCEND).
SATURATE_MODES = {False: 0, True: 1, "ascend": 2}


def _mode(saturate) -> int:
    if isinstance(saturate, str):
        if saturate == "ascend":
            return 2
    elif isinstance(saturate, (bool, np.bool_)):
        return 1 if saturate else 0
    raise _err.constraint("convert", "saturate", "must be False, True or 'ascend'", saturate)


def _source_format(x: np.ndarray, src_dtype, instr: str) -> _dt.Format:
    if src_dtype is not None:
        fmt = _dt.lookup(src_dtype)
        want = np.dtype(np.uint8) if fmt.name == "bool_" else fmt.np_dtype
        ok = x.dtype == want or (fmt.name == "bool_" and x.dtype == np.bool_)
        if not ok:
            raise _err.constraint(instr, "x", f"must be stored as {want} for src_dtype={fmt.name}",
                                  str(x.dtype))
        return fmt
    try:
        return _dt.lookup(x.dtype)
    except _err.ConstraintError:
        raise _err.constraint(
            instr, "x", "must have the dtype of a spec format (float32, bfloat16, float16, "
            "float8_*, float4_e2m1fn, int8..uint32, bool; cast float64 data to float32 first)",
            str(x.dtype)) from None


def _flat_bytes(a: np.ndarray) -> np.ndarray:
    return a.reshape(-1).view(np.uint8)


def convert(x, dtype, *, saturate=False, out=None, src_dtype=None):
    """``out[i] = encode_dtype(decode_src(x[i]))``: convert an array to format ``dtype``
    through float32, rounding once, to nearest with ties to even (the NKI docs, page NKI ISA API Common Fields (github.com/aws-neuron/aws-neuron-sdk, nki/api/nki.api.shared.rst) "Type Casting").

    Parameters
    ----------
    x : array_like
        Any shape, in a spec format: its dtype names the format (``float32``, ml_dtypes
        ``bfloat16``/``float8_*``/``float4_e2m1fn``, ``float16``, ``int8``..``uint32``,
        ``bool``).  Formats that share a container need ``src_dtype``: ``"tfloat32"``
        (float32 array), the x4 formats (uint32/uint16 arrays of containers).
    dtype : Format, name or numpy/ml_dtypes dtype
        Destination format.  For an x4 destination the last axis (4m elements) becomes m
        containers; for an x4 source the last axis of m containers becomes 4m elements.
    saturate : False, True or "ascend"
        Overflow rule for float destinations:

        * ``False`` (default): exactly ml_dtypes' ``astype`` (numpy's for float16):
          +-inf where the format has it; NaN (sign kept) for float8_e4m3fn; +-6 for
          float4_e2m1fn; 0xff (NaN) for float8_e8m0fnu.  NaN -> the format's canonical NaN
          with the input's sign (float16: numpy's payload rule; float4: a zero of the
          opposite sign, ml_dtypes' quirk).
        * ``True``: every non-NaN value, +-inf included, is clamped to +-max finite
          (float8_e8m0fnu: zero and negatives to 0x00); NaN as in the default.
        * ``"ascend"``: Ascend saturation mode (the TIK source and its CPU debugger (github.com/jizhuoran/caffe-huawei-atlas-convertor, convertor/huawei/te/tik/)): as ``True`` and
          NaN -> +0 (code 0).  For float16 this is ``fi_f16_saturate`` applied to the
          rounded result.

        Integer destinations always round to nearest even, saturate to their range and map
        NaN to 0, whatever ``saturate`` says; ``bool_`` is the integer range [0, 1] by
        the same rule (0.5 -> 0, 0.7 -> 1, 2 -> 1, -3 -> 0, NaN -> 0), as the NKI
        instructions write it.
    out : ndarray, optional
        Preallocated result: C-contiguous, aligned, writeable, dtype ``Format.np_dtype`` of
        ``dtype`` and the result's shape.  It may be ``x`` itself when both formats store
        the same bytes per element (e.g. float32 -> tfloat32 in place); any other overlap
        with ``x`` is an error.
    src_dtype : Format or name, optional
        The source format when ``x``'s dtype alone does not say it (see ``x``).

    Returns
    -------
    ndarray
        ``out`` if given, else a new array of ``dtype``'s ``np_dtype``.

    Raises
    ------
    ConstraintError
        unknown format, x's dtype not a spec format or not the container of ``src_dtype``,
        x4 last axis not a multiple of 4 (or 0-d), bad ``saturate``, ``out`` with the
        wrong dtype/shape/layout or read-only.
    OverlapError
        ``out`` overlaps ``x`` other than exactly in place.
    """
    mode = _mode(saturate)
    dst = _dt.lookup(dtype)
    xa = np.asarray(x)
    src = _source_format(xa, src_dtype, "convert")
    lshape = tuple(xa.shape)
    if src.lanes > 1:
        if xa.ndim == 0:
            raise _err.constraint("convert", "x", f"of packed format {src.name} must have at "
                                  "least one dimension", lshape)
        lshape = lshape[:-1] + (lshape[-1] * src.lanes,)
    oshape = lshape
    if dst.lanes > 1:
        if len(lshape) == 0 or lshape[-1] % dst.lanes:
            raise _err.constraint("convert", "x", f"last dimension must be a multiple of "
                                  f"{dst.lanes} to pack into {dst.name}", lshape)
        oshape = lshape[:-1] + (lshape[-1] // dst.lanes,)
    n = math.prod(lshape)
    flags = xa.flags
    xc = xa if (flags.c_contiguous and flags.aligned) else np.array(xa, order="C", copy=True)
    if xc.dtype == np.bool_:
        xc = xc.view(np.uint8)
    if out is None:
        res = np.empty(oshape, dst.np_dtype)
    else:
        res = out
        if not isinstance(res, np.ndarray):
            raise _err.constraint("convert", "out", "must be a numpy array", type(res).__name__)
        if res.dtype != dst.np_dtype:
            raise _err.constraint("convert", "out", f"must have dtype {dst.np_dtype} for "
                                  f"{dst.name}", str(res.dtype))
        if res.shape != oshape:
            raise _err.constraint("convert", "out", f"must have shape {oshape}", res.shape)
        if not (res.flags.c_contiguous and res.flags.aligned and res.flags.writeable):
            raise _err.constraint("convert", "out", "must be C-contiguous, aligned and writeable",
                                  "a view that is not")
        if n and np.may_share_memory(res, xc):
            same = _k.same_data(res, xc) and res.nbytes == xc.nbytes
            if not same:
                raise _err.OverlapError(
                    "convert: out must not overlap x except exactly in place with the same "
                    f"bytes per element, got {src.name} -> {dst.name} overlapping")
    if n:
        _k.convert_raw(src.code, xc, dst.code, res, n, mode)
    return res


def _packed_format(dtype, instr: str) -> _dt.Format:
    fmt = _dt.lookup(dtype)
    if fmt.kind != "packed":
        raise _err.constraint(instr, "dtype", "must be a packed x4 format (float8_e5m2_x4, "
                              "float8_e4m3fn_x4, float4_e2m1fn_x4)", fmt.name)
    return fmt


def pack_x4(x, dtype):
    """``w[..., j] = sum_i code(x[..., 4j+i]) << (i * b)``: pack element codes into x4
    containers, bit for bit (no rounding; ml_dtypes (github.com/jax-ml/ml_dtypes) and the NKI docs (github.com/aws-neuron/aws-neuron-sdk, nki/api/nki.api.shared.rst), AWS golden code).

    Parameters
    ----------
    x : array_like, shape (..., 4m)
        Element codes: an array of the element format (ml_dtypes ``float8_e5m2``,
        ``float8_e4m3fn`` or ``float4_e2m1fn``) or raw ``uint8`` codes.  For float4 only
        the low nibble of each byte is used.  To round other data into a packed format use
        ``convert(x, dtype)``.
    dtype : ``float8_e5m2_x4`` / ``float8_e4m3fn_x4`` (b = 8: element i is byte i of a
        little-endian uint32) or ``float4_e2m1fn_x4`` (b = 4: element i is bits 4i..4i+3 of
        a uint16).

    Returns
    -------
    ndarray, shape (..., m), dtype uint32 (fp8) or uint16 (fp4).

    Raises
    ------
    ConstraintError
        ``dtype`` not packed, ``x`` of another dtype, 0-d, or last axis not a multiple of 4.
    """
    fmt = _packed_format(dtype, "pack_x4")
    elem = _dt.lookup(fmt.element)
    xa = np.asarray(x)
    if xa.dtype not in (elem.np_dtype, np.dtype(np.uint8)):
        raise _err.constraint("pack_x4", "x", f"must hold {elem.name} codes ({elem.np_dtype} "
                              "or uint8); use convert() to round other data", str(xa.dtype))
    if xa.ndim == 0 or xa.shape[-1] % 4:
        raise _err.constraint("pack_x4", "x", "last dimension must be a multiple of 4",
                              tuple(xa.shape))
    xc = np.ascontiguousarray(xa)
    res = np.empty(xa.shape[:-1] + (xa.shape[-1] // 4,), fmt.np_dtype)
    _k.pack_raw(fmt.code, _flat_bytes(xc), _flat_bytes(res), xc.size)
    return res


def unpack_x4(words, dtype):
    """``x[..., 4j+i] = (w[..., j] >> (i * b)) & (2^b - 1)``: the inverse of :func:`pack_x4`.

    Parameters
    ----------
    words : array_like, shape (..., m), dtype uint32 (fp8 x4) or uint16 (fp4 x4)
    dtype : the packed format (see :func:`pack_x4`).

    Returns
    -------
    ndarray, shape (..., 4m), of the element format's ml_dtypes dtype (float4 codes in the
    low nibble, high nibble zero).

    Raises
    ------
    ConstraintError
        ``dtype`` not packed, ``words`` not of its container dtype, or 0-d.
    """
    fmt = _packed_format(dtype, "unpack_x4")
    elem = _dt.lookup(fmt.element)
    wa = np.asarray(words)
    if wa.dtype != fmt.np_dtype:
        raise _err.constraint("unpack_x4", "words", f"must have dtype {fmt.np_dtype} for "
                              f"{fmt.name}", str(wa.dtype))
    if wa.ndim == 0:
        raise _err.constraint("unpack_x4", "words", "must have at least one dimension", ())
    wc = np.require(wa, requirements=["C", "A"])
    res = np.empty(wa.shape[:-1] + (wa.shape[-1] * 4,), elem.np_dtype)
    _k.unpack_raw(fmt.code, _flat_bytes(wc), _flat_bytes(res), res.size)
    return res


from ._public import make_dir as _make_dir  # noqa: E402

__dir__ = _make_dir(globals())
