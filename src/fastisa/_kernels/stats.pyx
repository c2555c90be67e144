# cython: language_level=3
"""Statistics drivers over csrc/fastisa/stats.h (bn_stats, bn_aggr, tensor_partition_reduce).

Inputs are 2-D numpy arrays [partition, free] (any strides, storage dtype of their
format, ``fmt`` its ``fi_format`` code); outputs are contiguous float32 (or uint32) arrays
that the front-end (fastisa.nki._stats) rounds to the destination.  One ``with nogil:``.
"""
cimport numpy as cnp
import numpy as np

from fastisa._kernels.capi cimport (fi_stats_bn_stats, fi_stats_bn_aggr,
                                    fi_stats_partition_reduce, fi_nki_init)

cnp.import_array()
fi_nki_init()


def bn_stats(src, int fmt, float[:, ::1] out):
    """out[p, :6] = (n_even, mean_even, m2_even, n_odd, mean_odd, m2_odd) of src[p, :]."""
    cdef cnp.ndarray s = <cnp.ndarray>src
    cdef int it = cnp.PyArray_ITEMSIZE(s)
    cdef const void *p = cnp.PyArray_DATA(s)
    cdef Py_ssize_t sp = cnp.PyArray_STRIDES(s)[0] // it, sf = cnp.PyArray_STRIDES(s)[1] // it
    cdef int P = s.shape[0], F = s.shape[1]
    with nogil:
        fi_stats_bn_stats(p, fmt, it, sp, sf, P, F, &out[0, 0])


def bn_aggr(const float[:, ::1] inp, float[:, ::1] out):
    """out[p, :2] = (mean, variance) aggregated from the (count, mean, m2) triples of inp[p]."""
    cdef int P = inp.shape[0], k = inp.shape[1] // 3
    with nogil:
        fi_stats_bn_aggr(&inp[0, 0], P, k, &out[0, 0])


def partition_reduce(src, int fmt, int op, float[::1] out, unsigned int[::1] out_bits):
    """out[j] = fold over partitions of src[:, j] (op codes: add, max, min, average, or, and)."""
    cdef cnp.ndarray s = <cnp.ndarray>src
    cdef int it = cnp.PyArray_ITEMSIZE(s)
    cdef const void *p = cnp.PyArray_DATA(s)
    cdef Py_ssize_t sp = cnp.PyArray_STRIDES(s)[0] // it, sf = cnp.PyArray_STRIDES(s)[1] // it
    cdef int P = s.shape[0], F = s.shape[1]
    with nogil:
        fi_stats_partition_reduce(p, fmt, it, sp, sf, P, F, op, &out[0], &out_bits[0])
