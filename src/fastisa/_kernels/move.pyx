# cython: language_level=3
"""Data-movement drivers over csrc/fastisa/move.h: bit copies by strides, row maps,
predicates and index tables.

Arrays are numpy arrays of any strides (zero strides allowed for a broadcast source);
every element is copied as its bit pattern.  fastisa.nki._dma / _move have validated
shapes, dtypes and bounds; each call is one ``with nogil:``.
"""
from libc.stdint cimport int32_t, uint32_t
cimport numpy as cnp
import numpy as np

from fastisa._kernels.capi cimport (fi_move_strided, fi_move_copy, fi_move_rows, fi_move_predicated,
                                    fi_move_gather, fi_move_nonzero, fi_move_rows_inplace)

from fastisa._kernels.capi cimport use_shared_pool
cnp.import_array()
use_shared_pool()  # the shared worker pool

cdef extern from "move.h":
    int fi_move_simd_cap


def set_simd_cap(int cap):
    """Testing only: the widest SIMD path of this module's 16-bit transpose (0: the CPU's
    best, 1: SSE2, 2: AVX2 at most); returns the previous value.  Bits never depend on
    it."""
    global fi_move_simd_cap
    cdef int old = fi_move_simd_cap
    fi_move_simd_cap = cap
    return old


def strided(dst, src, int threads=1):
    """dst[...] = src[...] (same shape, rank <= 5, same itemsize), element bit patterns;
    dst and src do not overlap (or are the same view).  ``threads`` (0: every CPU) split a
    copy of >= 256 KiB along its first axis over fastisa's worker pool."""
    cdef cnp.ndarray d = <cnp.ndarray>dst
    cdef cnp.ndarray s = <cnp.ndarray>src
    cdef Py_ssize_t ds[5]
    cdef Py_ssize_t ss[5]
    cdef Py_ssize_t shape[5]
    cdef int nd = d.ndim, k, off = 5 - d.ndim
    cdef int it = cnp.PyArray_ITEMSIZE(d)
    for k in range(5):
        ds[k] = 0
        ss[k] = 0
        shape[k] = 1
    for k in range(nd):
        shape[off + k] = d.shape[k]
        ds[off + k] = cnp.PyArray_STRIDES(d)[k]
        ss[off + k] = cnp.PyArray_STRIDES(s)[k]
    if d.size == 0:
        return
    cdef char *dp = <char *>cnp.PyArray_DATA(d)
    cdef const char *sp = <const char *>cnp.PyArray_DATA(s)
    with nogil:
        fi_move_copy(dp, ds, sp, ss, shape, it, threads)


def rows(dst, src, const int32_t[::1] rowmap, int threads=1):
    """Row r of dst (2-D) = row rowmap[r] of src (2-D, same free size); rowmap[r] < 0 skips.
    threads: worker-pool threads when dst has at least 2^16 elements (0: every CPU); dst
    and src must not overlap (the caller copies src first, or runs :func:`rows_inplace`
    when they are the same rows)."""
    cdef cnp.ndarray d = <cnp.ndarray>dst
    cdef cnp.ndarray s = <cnp.ndarray>src
    cdef char *dp = <char *>cnp.PyArray_DATA(d)
    cdef const char *sp = <const char *>cnp.PyArray_DATA(s)
    cdef Py_ssize_t dsp = cnp.PyArray_STRIDES(d)[0], dsf = cnp.PyArray_STRIDES(d)[1]
    cdef Py_ssize_t ssp = cnp.PyArray_STRIDES(s)[0], ssf = cnp.PyArray_STRIDES(s)[1]
    cdef int R = d.shape[0]
    cdef Py_ssize_t F = d.shape[1]
    cdef int it = cnp.PyArray_ITEMSIZE(d)
    with nogil:
        fi_move_rows(dp, dsp, dsf, sp, ssp, ssf, &rowmap[0], R, F, it, threads)


def rows_inplace(arr, const int32_t[::1] rowmap, int threads=1):
    """Row r of arr (2-D) = the old row rowmap[r] of arr, rowmap[r] < 0 skips (every entry
    < arr.shape[0]); no copy of arr is made (each row moves once, in an order that reads
    every row before overwriting it).  threads: worker-pool threads when arr has at least
    2^16 elements (0: every CPU); the rows must not overlap each other.  Raises
    MemoryError (nothing written) when scratch memory cannot be allocated."""
    cdef cnp.ndarray a = <cnp.ndarray>arr
    cdef char *p = <char *>cnp.PyArray_DATA(a)
    cdef Py_ssize_t sp = cnp.PyArray_STRIDES(a)[0], sf = cnp.PyArray_STRIDES(a)[1]
    cdef int R = a.shape[0]
    cdef Py_ssize_t F = a.shape[1]
    cdef int it = cnp.PyArray_ITEMSIZE(a), st
    if rowmap.shape[0] != R:
        raise ValueError("rows_inplace: rowmap must have one entry per row")
    with nogil:
        st = fi_move_rows_inplace(p, sp, sf, &rowmap[0], R, F, it, threads)
    if st:
        raise MemoryError("rows_inplace: no scratch memory for the row order")


def predicated(dst, src, pred, int rev):
    """dst[p, i] = src[p, i] where (pred[p, i] != 0) != rev (all 2-D, same shape)."""
    cdef cnp.ndarray d = <cnp.ndarray>dst
    cdef cnp.ndarray s = <cnp.ndarray>src
    cdef cnp.ndarray q = <cnp.ndarray>pred
    cdef char *dp = <char *>cnp.PyArray_DATA(d)
    cdef const char *sp = <const char *>cnp.PyArray_DATA(s)
    cdef const char *qp = <const char *>cnp.PyArray_DATA(q)
    cdef Py_ssize_t dsp = cnp.PyArray_STRIDES(d)[0], dsf = cnp.PyArray_STRIDES(d)[1]
    cdef Py_ssize_t ssp = cnp.PyArray_STRIDES(s)[0], ssf = cnp.PyArray_STRIDES(s)[1]
    cdef Py_ssize_t psp = cnp.PyArray_STRIDES(q)[0], psf = cnp.PyArray_STRIDES(q)[1]
    cdef int P = d.shape[0], pw = cnp.PyArray_ITEMSIZE(q), it = cnp.PyArray_ITEMSIZE(d)
    cdef Py_ssize_t F = d.shape[1]
    with nogil:
        fi_move_predicated(dp, dsp, dsf, sp, ssp, ssf, qp, psp, psf, pw, rev, P, F, it)


def gather(dst, data, const uint32_t[:, :] idx):
    """dst[p, j] = data[p, idx[p, j]]; returns 1 (nothing written) if an index is out of range.

    data: 2-D with contiguous rows (free stride = itemsize)."""
    cdef cnp.ndarray d = <cnp.ndarray>dst
    cdef cnp.ndarray s = <cnp.ndarray>data
    cdef char *dp = <char *>cnp.PyArray_DATA(d)
    cdef const char *sp = <const char *>cnp.PyArray_DATA(s)
    cdef Py_ssize_t dsp = cnp.PyArray_STRIDES(d)[0], dsf = cnp.PyArray_STRIDES(d)[1]
    cdef Py_ssize_t ssp = cnp.PyArray_STRIDES(s)[0]
    cdef Py_ssize_t isp = idx.strides[0] // 4, isf = idx.strides[1] // 4
    cdef int P = d.shape[0], it = cnp.PyArray_ITEMSIZE(d), r
    cdef Py_ssize_t J = d.shape[1]
    cdef uint32_t n = <uint32_t>s.shape[1]
    if P == 0 or J == 0:
        return 0
    with nogil:
        r = fi_move_gather(dp, dsp, dsf, sp, ssp, &idx[0, 0], isp, isf, P, J, n, it)
    return r


def nonzero(int32_t[:, :] out, src, int is_float, int32_t offset, int32_t pad):
    """out[p, :n] = offset + nonzero indices of src[p, :], then pad, out[p, n] = count."""
    cdef cnp.ndarray s = <cnp.ndarray>src
    cdef const char *sp = <const char *>cnp.PyArray_DATA(s)
    cdef Py_ssize_t ssp = cnp.PyArray_STRIDES(s)[0], ssf = cnp.PyArray_STRIDES(s)[1]
    cdef Py_ssize_t osf = out.strides[1] // 4, n = s.shape[1]
    cdef int P = s.shape[0], p
    with nogil:
        for p in range(P):
            fi_move_nonzero(&out[p, 0], osf, sp + p * ssp, ssf, is_float, n, offset, pad)
