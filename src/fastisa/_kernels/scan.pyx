# cython: language_level=3
"""Scan drivers over csrc/fastisa/scan.h (tensor_tensor_scan, tensor_scalar_cumulative,
tensor_scalar_reduce).

Arrays are 2-D numpy arrays ([partition, free], any strides, the storage dtype of their
format); formats are ``fi_format`` codes; ``vec`` is a contiguous float32 [P] or [1] array
(the initial carry, or imm0); ``acc`` a contiguous float32 [P] array updated in place.
fastisa.nki._scan has validated everything; each call is one ``with nogil:``.
"""
from libc.string cimport memset
cimport numpy as cnp

from fastisa._kernels.capi cimport (fi_scan_args, fi_scan_in, fi_scan_tensor_tensor,
                                    fi_scan_cumulative, fi_scan_reduce, fi_nki_init)

from fastisa._kernels.capi cimport use_shared_pool
cnp.import_array()
use_shared_pool()  # the shared worker pool
fi_nki_init()


cdef inline void _in(object arr, int fmt, fi_scan_in *v):
    cdef cnp.ndarray a = <cnp.ndarray>arr
    cdef Py_ssize_t it = cnp.PyArray_ITEMSIZE(a)
    v.ptr = cnp.PyArray_DATA(a)
    v.fmt = fmt
    v.sp = cnp.PyArray_STRIDES(a)[0] // it
    v.sf = cnp.PyArray_STRIDES(a)[1] // it


cdef inline void _common(fi_scan_args *a, object dst, int dst_fmt, object in0, int fmt0,
                         object vec):
    cdef cnp.ndarray d = <cnp.ndarray>dst
    cdef cnp.ndarray v = <cnp.ndarray>vec
    cdef Py_ssize_t it = cnp.PyArray_ITEMSIZE(d)
    memset(a, 0, sizeof(fi_scan_args))
    a.P = d.shape[0]
    a.F = d.shape[1]
    a.dst = cnp.PyArray_DATA(d)
    a.dst_fmt = dst_fmt
    a.itemsize = it
    a.dst_sp = cnp.PyArray_STRIDES(d)[0] // it
    a.dst_sf = cnp.PyArray_STRIDES(d)[1] // it
    _in(in0, fmt0, &a.in0)
    a.init = <const float *>cnp.PyArray_DATA(v)
    a.init_sp = 1 if v.shape[0] > 1 else 0


def tensor_tensor(dst, int dst_fmt, in0, int fmt0, in1, int fmt1, vec, int op0, int rev0,
                  int op1, int rev1):
    """dst[p, i] = r_i, r_i = op1(op0(in0[p, i], r_{i-1}), in1[p, i]), r_{-1} = vec[p]."""
    cdef fi_scan_args a
    _common(&a, dst, dst_fmt, in0, fmt0, vec)
    _in(in1, fmt1, &a.in1)
    a.op0 = op0
    a.rev0 = rev0
    a.op1 = op1
    a.rev1 = rev1
    with nogil:
        fi_scan_tensor_tensor(&a)


def cumulative(dst, int dst_fmt, in0, int fmt0, vec, int op0, int op1, float[::1] acc,
               int threads=1):
    """dst[p, i] = r_i, r_i = op1(op0(in0[p, i], vec[p]), r_{i-1}), r_{-1} = acc[p]; acc = last.
    ``threads``: rows in groups of 8 over fastisa's worker pool (0: every CPU); results do
    not depend on it."""
    cdef fi_scan_args a
    _common(&a, dst, dst_fmt, in0, fmt0, vec)
    a.op0 = op0
    a.op1 = op1
    a.acc = &acc[0]
    a.threads = threads
    with nogil:
        fi_scan_cumulative(&a)


def reduce(dst, int dst_fmt, in0, int fmt0, vec, int op0, int rev0, int op1, float[::1] acc):
    """dst[p, i] = t_i = op0(in0[p, i], vec[p]); acc[p] = op1-fold of acc[p], t_0, t_1, ..."""
    cdef fi_scan_args a
    _common(&a, dst, dst_fmt, in0, fmt0, vec)
    a.op0 = op0
    a.rev0 = rev0
    a.op1 = op1
    a.acc = &acc[0]
    with nogil:
        fi_scan_reduce(&a)
