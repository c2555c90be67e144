# cython: language_level=3
"""Format-conversion drivers over csrc/fastisa/convert.h.

``convert_raw`` takes the arrays themselves (C-contiguous and aligned), the others flat
C-contiguous byte views (``arr.reshape(-1).view(np.uint8)``), all with element counts; the Python layer (:mod:`fastisa.numerics`) validates shapes, dtypes,
alignment and overlap before calling.  One ``with nogil:`` per call, no allocation.
"""
from libc.stdint cimport uint8_t, uint16_t, uint32_t
cimport numpy as cnp
from fastisa._kernels.capi cimport (
    fi_format_traits, fi_encode_f32, fi_decode_f32, fi_convert_array, fi_pack_x4, fi_unpack_x4,
    fi_f32_to_bf16, fi_bf16_to_f32, fi_f32_to_f16, fi_f16_to_f32, FI_NUM_FORMATS,
    fi_f64_to_f16, fi_f64_to_bf16, fi_f16_saturate,
)

cnp.import_array()


def convert_raw(int sfmt, cnp.ndarray src, int dfmt, cnp.ndarray dst, Py_ssize_t n, int mode):
    """Convert n logical elements of format ``sfmt`` (C-contiguous, aligned ``src``) to
    format ``dfmt`` (C-contiguous, aligned, writeable ``dst``) through float32; ``mode`` is
    FI_SAT_NONE/MAX/ASCEND (0/1/2).  The caller (fastisa.numerics.convert) has checked
    the layouts and that both arrays hold n elements of their formats."""
    cdef const void *s = cnp.PyArray_DATA(src)
    cdef void *d = cnp.PyArray_DATA(dst)
    if n <= 0:
        return
    with nogil:
        fi_convert_array(sfmt, s, dfmt, d, n, mode)


def same_data(cnp.ndarray a, cnp.ndarray b):
    """True when both arrays start at the same address."""
    return cnp.PyArray_DATA(a) == cnp.PyArray_DATA(b)


def pack_raw(int fmt, const uint8_t[::1] src, uint8_t[::1] dst, Py_ssize_t n):
    """Pack n element codes (one per byte) into n/4 containers of x4 format ``fmt``."""
    if n <= 0:
        return
    with nogil:
        fi_pack_x4(fmt, &src[0], &dst[0], n)


def unpack_raw(int fmt, const uint8_t[::1] src, uint8_t[::1] dst, Py_ssize_t n):
    """Unpack n/4 containers of x4 format ``fmt`` into n element codes (one per byte)."""
    if n <= 0:
        return
    with nogil:
        fi_unpack_x4(fmt, &src[0], &dst[0], n)


def encode_scalar(int fmt, float x, int mode=0):
    """fi_encode_f32: the code (storage bits, zero-extended) of float32 ``x`` in ``fmt``."""
    return fi_encode_f32(fmt, x, mode)


def decode_scalar(int fmt, uint32_t code):
    """fi_decode_f32: the float32 value of ``code`` in ``fmt``."""
    return fi_decode_f32(fmt, code)


def traits():
    """The C table ``fi_format_traits`` as a list of dicts, in fi_format code order."""
    cdef int i, k
    res = []
    for i in range(FI_NUM_FORMATS):
        t = fi_format_traits[i]
        res.append(dict(
            name=t.name.decode(), code=t.code, kind=t.kind, bits=t.bits,
            exp_bits=t.exp_bits, man_bits=t.man_bits, bias=t.bias, is_signed=bool(t.is_signed),
            max_finite=t.max_finite, min_normal=t.min_normal, min_subnormal=t.min_subnormal,
            has_inf=bool(t.has_inf),
            nan_codes=tuple(int(t.nan_codes[k]) for k in range(t.n_nan_codes)),
            overflow=t.overflow, container_bits=t.container_bits, lanes=t.lanes,
            element=t.element))
    return res


# Kept from the skeleton (other branches may call them): flat 1-D f32 <-> bf16/f16.
def f32_to_bf16(const float[::1] src, uint16_t[::1] dst):
    """dst[i] = bfloat16 bits of RNE(src[i]).  Both 1-D contiguous, same length."""
    cdef Py_ssize_t i, n = src.shape[0]
    with nogil:
        for i in range(n):
            dst[i] = fi_f32_to_bf16(src[i])


def bf16_to_f32(const uint16_t[::1] src, float[::1] dst):
    cdef Py_ssize_t i, n = src.shape[0]
    with nogil:
        for i in range(n):
            dst[i] = fi_bf16_to_f32(src[i])


def f32_to_f16(const float[::1] src, uint16_t[::1] dst):
    cdef Py_ssize_t i, n = src.shape[0]
    with nogil:
        for i in range(n):
            dst[i] = fi_f32_to_f16(src[i])


def f16_to_f32(const uint16_t[::1] src, float[::1] dst):
    cdef Py_ssize_t i, n = src.shape[0]
    with nogil:
        for i in range(n):
            dst[i] = fi_f16_to_f32(src[i])


# formats.h scalar primitives over arrays (used by tests/test_convert.py to check them).
def f64_to_f16(const double[::1] src, uint16_t[::1] dst):
    """dst[i] = fi_f64_to_f16(src[i]): one RNE rounding from double."""
    cdef Py_ssize_t i, n = src.shape[0]
    with nogil:
        for i in range(n):
            dst[i] = fi_f64_to_f16(src[i])


def f64_to_bf16(const double[::1] src, uint16_t[::1] dst):
    """dst[i] = fi_f64_to_bf16(src[i]): one RNE rounding from double."""
    cdef Py_ssize_t i, n = src.shape[0]
    with nogil:
        for i in range(n):
            dst[i] = fi_f64_to_bf16(src[i])


def f16_saturate(const uint16_t[::1] src, uint16_t[::1] dst):
    """dst[i] = fi_f16_saturate(src[i]) (Ascend saturation mode on float16 bits)."""
    cdef Py_ssize_t i, n = src.shape[0]
    with nogil:
        for i in range(n):
            dst[i] = fi_f16_saturate(src[i])
