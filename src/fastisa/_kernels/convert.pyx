# cython: language_level=3
"""Format-conversion drivers: one nogil pass per call, writing straight into ``out``."""
from libc.stdint cimport uint16_t
from fastisa._kernels.capi cimport fi_f32_to_bf16, fi_bf16_to_f32, fi_f32_to_f16, fi_f16_to_f32


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
