"""Assertions for bit-exact simulation results, in the style of :mod:`numpy.testing`.

* :func:`assert_bits_equal` -- the two arrays hold the same bit patterns, element for
  element (NaN payloads and the sign of zero included).
* :func:`assert_ulp_close` -- every element is within ``maxulp`` units in the last place
  of the format the array holds (bfloat16, float16, every float8, float4, tfloat32,
  float32, the packed x4 formats).

Both take any fastisa number format (``fastisa.dtypes``): an ml_dtypes array names its
own format; the formats stored in a container of another dtype (``tfloat32`` in float32,
``float8_e5m2_x4`` / ``float8_e4m3fn_x4`` in uint32, ``float4_e2m1fn_x4`` in uint16,
``bool_`` in uint8) are named with ``dtype=``.  Packed containers are compared element by
element (four codes per container).  On failure an ``AssertionError`` reports how many
elements differ and the first ones, with their indices, bit patterns and values::

    AssertionError:
    Arrays are not bit-identical (bfloat16)
    Mismatched elements: 1 / 4 (25%)
    First mismatches (index: actual | desired):
      [2]: 0x3f81 (1.0078125) | 0x3f80 (1.0)

NKI tensors (``NkiTensor``) and PTO tiles may be passed directly: their ``.data`` is used.
"""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

from . import dtypes as _dt

__all__ = ["assert_bits_equal", "assert_ulp_close", "ulp_distance"]

_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def _as_array(x: Any) -> np.ndarray:
    if not isinstance(x, np.ndarray) and hasattr(x, "data") and isinstance(
            getattr(x, "data"), np.ndarray):
        return x.data
    return np.asarray(x)


def _format_of(a: np.ndarray, dtype) -> _dt.Format | None:
    """The fastisa format of ``a`` (``dtype`` wins), or None for other numpy dtypes."""
    if dtype is not None:
        fmt = _dt.lookup(dtype)
        if fmt.np_dtype.itemsize != a.dtype.itemsize:
            raise TypeError(f"dtype={fmt.name!r} is stored as {fmt.np_dtype}, but the array "
                            f"has dtype {a.dtype}")
        return fmt
    try:
        return _dt.lookup(a.dtype)
    except ValueError:
        return None


def _prepare(actual, desired, dtype, func: str):
    a = _as_array(actual)
    d_in = desired
    d = _as_array(desired)
    fmt = _format_of(a, dtype)
    if not isinstance(d_in, np.ndarray) and not isinstance(d_in, np.generic) and \
            not hasattr(d_in, "data"):
        # Python scalars and lists are values: rounded into actual's storage dtype first.
        if fmt is not None and fmt.kind == "packed":
            raise TypeError(f"desired for {fmt.name} must be an array of its containers "
                            f"({fmt.np_dtype}), got {type(d_in).__name__}")
        d = np.asarray(d_in).astype(a.dtype)
    if d.shape != a.shape:
        try:
            d = np.broadcast_to(d, a.shape)
        except ValueError:
            raise AssertionError(f"\n(shapes {a.shape}, {d.shape} mismatch)") from None
    return a, d, fmt


def _elements(a: np.ndarray, fmt: _dt.Format | None):
    """(codes, element format, lanes): unsigned element codes, packed containers unpacked."""
    if fmt is not None and fmt.kind == "packed":
        from .numerics import unpack_x4
        if a.ndim == 0:
            a = a.reshape(1)
        codes = unpack_x4(np.ascontiguousarray(a), fmt).view(np.uint8)
        return codes, _dt.lookup(fmt.element), 4
    a = np.ascontiguousarray(a)
    return a.view(_UINT[a.dtype.itemsize]), fmt, 1


def _hex(code: int, bits: int) -> str:
    return "0x%0*x" % (max(1, (bits + 3) // 4), int(code))


def _value(code: int, fmt: _dt.Format | None, store: np.dtype) -> str:
    if fmt is None:
        return repr(np.array([code], _UINT[store.itemsize]).view(store)[0].item())
    if fmt.kind in ("int", "bool"):
        return str(np.array([code], _UINT[fmt.np_dtype.itemsize]).view(fmt.np_dtype)[0])
    if fmt.name == "tfloat32":
        v = np.array([code], np.uint32).view(np.float32)[0]
    elif fmt.np_dtype.itemsize == 1 and fmt.np_dtype != np.uint8:
        v = np.array([code], np.uint8).view(fmt.np_dtype)[0]
    else:
        v = np.array([code], _UINT[fmt.np_dtype.itemsize]).view(fmt.np_dtype)[0]
    return repr(float(v))


def _index(flat: int, shape: tuple, lanes: int) -> str:
    if lanes > 1:
        cont, lane = divmod(flat, lanes)
        idx = np.unravel_index(cont, shape) if shape else ()
        return "[%s] lane %d" % (", ".join(str(int(i)) for i in idx), lane)
    idx = np.unravel_index(flat, shape) if shape else ()
    return "[%s]" % ", ".join(str(int(i)) for i in idx)


def _report(title: str, bad: np.ndarray, ca: np.ndarray, cd: np.ndarray, efmt, store, shape,
            lanes, err_msg: str, extra: str = "", dist: np.ndarray | None = None,
            max_report: int = 10) -> str:
    n_bad = int(bad.sum())
    n = bad.size
    bits = efmt.bits if efmt is not None and efmt.kind != "packed" else ca.dtype.itemsize * 8
    if efmt is not None and efmt.name == "tfloat32":
        bits = 32
    lines = ["", title]
    if err_msg:
        lines.append(err_msg)
    lines.append("Mismatched elements: %d / %d (%.3g%%)" % (n_bad, n, 100.0 * n_bad / n))
    if extra:
        lines.append(extra)
    lines.append("First mismatches (index: actual | desired%s):" %
                 (" | ulp" if dist is not None else ""))
    where = np.flatnonzero(bad.reshape(-1))[:max_report]
    fa, fd = ca.reshape(-1), cd.reshape(-1)
    for i in where:
        s = "  %s: %s (%s) | %s (%s)" % (
            _index(int(i), shape, lanes), _hex(fa[i], bits), _value(fa[i], efmt, store),
            _hex(fd[i], bits), _value(fd[i], efmt, store))
        if dist is not None:
            dv = dist.reshape(-1)[i]
            s += " | %s" % ("inf/nan" if dv < 0 else int(dv))
        lines.append(s)
    if n_bad > len(where):
        lines.append("  ... %d more" % (n_bad - len(where)))
    return "\n".join(lines)


def _name(fmt, a) -> str:
    return fmt.name if fmt is not None else str(a.dtype)


def assert_bits_equal(actual, desired, dtype=None, *, err_msg: str = "",
                      max_report: int = 10) -> None:
    """Raise AssertionError unless ``actual`` and ``desired`` hold the same bits.

    ``actual[i]`` and ``desired[i]`` must have identical bit patterns for every ``i``:
    NaNs compare by payload and sign, ``-0.0 != +0.0``.

    Parameters
    ----------
    actual : array_like (or an NkiTensor / PTO Tile: its ``.data``)
        The result.  Its dtype names its format: an ml_dtypes / numpy dtype, or a container
        named by ``dtype``.
    desired : array_like, broadcastable to ``actual.shape``
        The expected result, of actual's storage dtype.  Python scalars, lists and float64
        arrays are values: they are first converted to actual's dtype with numpy/ml_dtypes
        ``astype`` (round to nearest even).
    dtype : str or fastisa.dtypes.Format, optional
        The format when the array dtype does not say it: ``"tfloat32"`` (float32),
        ``"float8_e5m2_x4"``, ``"float8_e4m3fn_x4"`` (uint32), ``"float4_e2m1fn_x4"``
        (uint16), ``"bool_"`` (uint8).  Packed containers are compared and reported per
        element (index and lane).
    err_msg : str
        Printed with the report.
    max_report : int
        How many mismatching elements the report lists (the first, in C order).

    Raises
    ------
    AssertionError
        The shapes do not broadcast, the storage dtypes differ, or any element's bits
        differ; the message lists the first mismatches with bit patterns and values.
    TypeError
        ``dtype`` is stored in a different item size than the array's dtype.
    """
    a, d, fmt = _prepare(actual, desired, dtype, "bits")
    if a.dtype != d.dtype:
        raise AssertionError(f"\nArrays have different dtypes: {a.dtype} (actual) and "
                             f"{d.dtype} (desired); compare like with like\n{err_msg}")
    ca, efmt, lanes = _elements(a, fmt)
    cd, _, _ = _elements(np.array(d), fmt)
    bad = ca != cd
    if not bad.any():
        return
    raise AssertionError(_report("Arrays are not bit-identical (%s)" % _name(fmt, a), bad,
                                 ca, cd, efmt, a.dtype, a.shape, lanes, err_msg,
                                 max_report=max_report))


def _ordered(codes: np.ndarray, fmt: _dt.Format | None, store: np.dtype):
    """(key, special): an integer key monotonic in the value (+0 and -0 both 0), and a mask
    of NaN / inf codes (which only equal themselves)."""
    c = codes.astype(np.int64)
    if fmt is None or fmt.kind in ("int", "bool"):
        dt = fmt.np_dtype if fmt is not None else store
        if dt.kind in "iub":
            v = np.ascontiguousarray(codes).view(dt if dt.kind != "b" else np.uint8).astype(
                np.int64 if dt.itemsize < 8 or dt.kind == "i" else np.uint64)
            return v.astype(np.float64) if v.dtype == np.uint64 else v, np.zeros(c.shape, bool)
        fmt = {2: _dt.float16, 4: _dt.float32}.get(dt.itemsize)
        if fmt is None:           # float64: through its own bits
            c = codes.view(np.int64)
            special = ~np.isfinite(codes.view(np.float64))
            key = np.where(c < 0, -(c & 0x7FFFFFFFFFFFFFFF), c)
            return key, special
    bits = 32 if fmt.name == "tfloat32" else fmt.bits
    if fmt.name == "float8_e8m0fnu":         # unsigned exponent only; 0xff is NaN
        return c, c == 0xFF
    sign = 1 << (bits - 1)
    mag = c & (sign - 1)
    if fmt.name == "tfloat32":
        key_mag = mag >> 13
        exp_all = (mag >> 23) == 0xFF
        special = exp_all
    else:
        exp_all = (mag >> fmt.man_bits) == (1 << fmt.exp_bits) - 1
        if fmt.has_inf:
            special = exp_all
        elif fmt.nan_codes:
            special = np.isin(c, np.array(fmt.nan_codes))
        else:
            special = np.zeros(c.shape, bool)
        key_mag = mag
    key = np.where(c & sign, -key_mag, key_mag)
    return key, special


def ulp_distance(actual, desired, dtype=None) -> np.ndarray:
    """Per-element distance in units in the last place of actual's format.

    The distance counts representable values of the format between the two (so ``+0`` and
    ``-0`` are 0 apart, the largest subnormal and the smallest normal 1 apart); ``desired``
    in another dtype (float64 reference data, for example) is first rounded to actual's
    format (nearest even), so a distance of 0 means "correctly rounded".  NaN and inf
    elements get -1 unless both sides are the same kind (two NaNs of any payload, or the
    same infinity), which get 0.  Packed containers give one distance per element, shape
    ``(..., 4m)``.
    """
    a = _as_array(actual)
    fmt = _format_of(a, dtype)
    d = _as_array(desired)
    if d.dtype != a.dtype:
        d = _round_to(np.asarray(d), a, fmt)
    d = np.broadcast_to(d, a.shape)
    ca, efmt, _ = _elements(a, fmt)
    cd, _, _ = _elements(np.array(d), fmt)
    ka, sa = _ordered(ca, efmt, a.dtype)
    kd, sd = _ordered(cd, efmt, a.dtype)
    dist = np.abs(ka - kd)
    if sa.any() or sd.any():
        nan_a = _isnan(ca, efmt, a.dtype) & sa
        nan_d = _isnan(cd, efmt, a.dtype) & sd
        same = (nan_a & nan_d) | ((sa & ~nan_a) & (sd & ~nan_d) & (ca == cd))
        dist = np.where(sa | sd, np.where(same, 0, -1), dist)
    return dist


def _isnan(codes, fmt, store) -> np.ndarray:
    if fmt is None or fmt.kind in ("int", "bool"):
        if store.kind == "f":
            return np.isnan(np.ascontiguousarray(codes).view(store))
        return np.zeros(codes.shape, bool)
    c = codes.astype(np.int64)
    if fmt.name == "float8_e8m0fnu":
        return c == 0xFF
    bits = 32 if fmt.name == "tfloat32" else fmt.bits
    mag = c & ((1 << (bits - 1)) - 1)
    if fmt.has_inf:
        man = 23 if fmt.name == "tfloat32" else fmt.man_bits
        return ((mag >> man) == (1 << fmt.exp_bits) - 1) & ((mag & ((1 << man) - 1)) != 0)
    return np.isin(c, np.array(fmt.nan_codes or (-1,)))


def _round_to(d: np.ndarray, a: np.ndarray, fmt) -> np.ndarray:
    """desired values rounded (nearest even) into actual's storage."""
    if fmt is not None and fmt.kind == "packed":
        if d.dtype == a.dtype:
            return d
        from .numerics import pack_x4
        elem = _dt.lookup(fmt.element)
        return pack_x4(d.astype(np.float64).astype(elem.np_dtype), fmt)
    if fmt is not None and fmt.name == "tfloat32":
        from .numerics import convert
        return convert(d.astype(np.float32), "tfloat32")
    return d.astype(a.dtype)


def assert_ulp_close(actual, desired, maxulp: int = 1, dtype=None, *, err_msg: str = "",
                     max_report: int = 10) -> None:
    """Raise AssertionError unless every element is within ``maxulp`` ULP of desired.

    ``|key(actual[i]) - key(desired[i])| <= maxulp`` for every ``i``, where ``key`` numbers
    the values of actual's format in order (see :func:`ulp_distance`): the distance is
    counted in the format's own representable values, so one ULP of bfloat16 is 2^-7
    relative, of float8_e4m3fn 2^-3.  NaN matches any NaN (payloads ignored: use
    :func:`assert_bits_equal` for payloads); an infinity matches only itself (never
    "1 ULP from the largest finite value").

    Parameters
    ----------
    actual : array_like (or an NkiTensor / PTO Tile)
        The result, in any float format (integers: ULP = 1).
    desired : array_like, broadcastable to ``actual.shape``
        Expected values: of actual's dtype, or another float dtype (e.g. a float64
        reference), which is rounded to actual's format first (nearest even; through
        float32 for tfloat32).
    maxulp : int
        Largest allowed distance (0: equal values, e.g. the correctly rounded result).
    dtype : str or Format, optional
        The format of a container (``"tfloat32"``, the ``*_x4`` formats), as in
        :func:`assert_bits_equal`.
    err_msg, max_report
        As in :func:`assert_bits_equal`.

    Raises
    ------
    AssertionError
        Shapes do not broadcast, or some element is farther than ``maxulp``; the report
        lists the largest distance and the first offending elements with their bits.
    """
    a = _as_array(actual)
    fmt = _format_of(a, dtype)
    d = _as_array(desired)
    if d.dtype != a.dtype:
        d = _round_to(np.asarray(d), a, fmt)
    if d.shape != a.shape:
        try:
            d = np.broadcast_to(d, a.shape)
        except ValueError:
            raise AssertionError(f"\n(shapes {a.shape}, {d.shape} mismatch)") from None
    dist = ulp_distance(a, d, fmt if dtype is not None else None)
    bad = (dist < 0) | (dist > maxulp)
    if not bad.any():
        return
    ca, efmt, lanes = _elements(a, fmt)
    cd, _, _ = _elements(np.array(d), fmt)
    finite = dist[dist >= 0]
    extra = "Max ULP difference: %s (allowed %d)%s" % (
        int(finite.max()) if finite.size else "-", maxulp,
        "; NaN/inf mismatches: %d" % int((dist < 0).sum()) if (dist < 0).any() else "")
    raise AssertionError(_report("Arrays are not within %d ULP (%s)" % (maxulp, _name(fmt, a)),
                                 bad, ca, cd, efmt, a.dtype, a.shape, lanes, err_msg, extra,
                                 dist, max_report))


# ml_dtypes is imported for its dtypes' registration with numpy (astype between them).
del ml_dtypes


from ._public import make_dir as _make_dir  # noqa: E402

__dir__ = _make_dir(globals())
