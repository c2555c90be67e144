# cython: language_level=3
"""OCP MX drivers over csrc/fastisa/mx.h (quantize_mx, nc_matmul_mx's dequantisation).

fastisa.nki._mx validates shapes, dtypes and layouts first; each call is one
``with nogil:``.
"""
from libc.stdint cimport uint8_t, uint16_t
cimport numpy as cnp
import numpy as np

from fastisa._kernels.capi cimport fi_mx_quantize, fi_mx_dequant, fi_nki_init

cnp.import_array()
fi_nki_init()


def quantize(const uint16_t[:, :] src, int is_bf16, int dst_fmt, uint8_t[:, ::1] codes,
             uint8_t[:, ::1] scales):
    """codes[P, F] (fp8 codes) and scales[P/8, F/4] (e8m0 bytes) of bf16 / fp16 src[P, F]."""
    cdef int P = src.shape[0], F = src.shape[1]
    cdef Py_ssize_t sp = src.strides[0] // 2, sf = src.strides[1] // 2
    if P == 0 or F == 0:
        return
    with nogil:
        fi_mx_quantize(&src[0, 0], is_bf16, sp, sf, P, F, dst_fmt, &codes[0, 0], &scales[0, 0])


def dequant(x4, int elem_fmt, const uint8_t[:, :] scale, float[:, ::1] out):
    """out[4k + q, j] = element q of x4[k, j] * 2^(scale[k/8, j] - 127), float32."""
    cdef cnp.ndarray a = <cnp.ndarray>x4
    cdef Py_ssize_t it = cnp.PyArray_ITEMSIZE(a)
    cdef const void *p = cnp.PyArray_DATA(a)
    cdef Py_ssize_t sp = cnp.PyArray_STRIDES(a)[0] // it, sf = cnp.PyArray_STRIDES(a)[1] // it
    cdef int K = a.shape[0], J = a.shape[1]
    cdef Py_ssize_t ssp = scale.strides[0], ssf = scale.strides[1]
    if K == 0 or J == 0:
        return
    with nogil:
        fi_mx_dequant(p, elem_fmt, sp, sf, K, J, &scale[0, 0], ssp, ssf, &out[0, 0])
