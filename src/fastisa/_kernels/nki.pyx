# cython: language_level=3
"""NKI compute drivers over csrc/fastisa/nki.h: one elementwise and one reduce entry point.

Arrays are 2-D numpy arrays ([partition, free], any strides, storage dtype of their
format); formats are ``fi_format`` codes.  Python (fastisa.nki._compute) has validated
everything; these drivers only take pointers and strides and run one ``with nogil:``.
"""
from libc.stdint cimport uint32_t, int64_t, uint64_t
from libc.string cimport memset
from libc.stdlib cimport malloc, free
cimport numpy as cnp
import numpy as np

from fastisa._kernels.capi cimport (fi_nki_ew, fi_nki_reduce_args, fi_nki_init,
                                    fi_nki_elementwise, fi_nki_reduce, fi_nki_act,
                                    fi_nki_sin_scalar, fi_nki_matmul_f32, fi_nki_matmul,
                                    fi_nki_dma_sum,
                                    fi_nki_encode_f64_array)

cnp.import_array()
fi_nki_init()


cdef inline void _view(object arr, const void **ptr, Py_ssize_t *sp, Py_ssize_t *sf):
    cdef cnp.ndarray a = <cnp.ndarray>arr
    cdef Py_ssize_t it = cnp.PyArray_ITEMSIZE(a)
    ptr[0] = cnp.PyArray_DATA(a)
    sp[0] = cnp.PyArray_STRIDES(a)[0] // it
    sf[0] = cnp.PyArray_STRIDES(a)[1] // it


def elementwise(dst, int dst_fmt, in0, int in0_fmt, in1, int in1_fmt, stages,
                int raw=0, int bitvec=0, int act=0, int scalar_engine=0, double alpha=0.0,
                lut=None, acc=None, int acc_max=0, int threads=0, lutp=None,
                int intmode=0):
    """Run one elementwise instruction; returns the count of inputs outside ScalarE's range.

    dst, in0, in1: 2-D arrays [P, F] (in1 may be None).  stages: two tuples
    ``(op, rev, tensor, fvec, uvec)`` where fvec is a float32 [P] (or [1]) array of
    per-partition operands and uvec a uint32 one (either may be None).  lutp: uint64 table
    indexed by in0's code (bits 0-31: the float32 result, 32-63: dst's code), or None.
    acc: float32 [P] accumulator, or None.
    """
    cdef fi_nki_ew a
    cdef const void *p
    cdef Py_ssize_t sp, sf
    cdef cnp.ndarray fv, uv, lt, ac, lf
    cdef int64_t r
    memset(&a, 0, sizeof(a))
    a.P = dst.shape[0]
    a.F = dst.shape[1]
    _view(dst, &p, &sp, &sf)
    a.dst = <void *>p
    a.dst_fmt = dst_fmt
    a.dst_sp = sp
    a.dst_sf = sf
    a.itemsize = dst.itemsize
    _view(in0, &p, &sp, &sf)
    a.in0.ptr = p
    a.in0.fmt = in0_fmt
    a.in0.sp = sp
    a.in0.sf = sf
    if in1 is not None:
        _view(in1, &p, &sp, &sf)
        a.in1.ptr = p
        a.in1.fmt = in1_fmt
        a.in1.sp = sp
        a.in1.sf = sf
    keep = []
    for s in range(2):
        op, rev, tensor, fvec, uvec = stages[s]
        a.st[s].op = op
        a.st[s].rev = rev
        a.st[s].tensor = tensor
        if fvec is not None:
            fv = np.ascontiguousarray(fvec, dtype=np.float32)
            keep.append(fv)
            a.st[s].f = <const float *>cnp.PyArray_DATA(fv)
            a.st[s].fsp = 1 if fv.shape[0] > 1 else 0
        if uvec is not None:
            uv = np.ascontiguousarray(uvec, dtype=np.uint32)
            keep.append(uv)
            a.st[s].u = <const uint32_t *>cnp.PyArray_DATA(uv)
            a.st[s].usp = 1 if uv.shape[0] > 1 else 0
    a.raw = raw
    a.bitvec = bitvec
    a.intmode = intmode
    a.act = act
    a.scalar_engine = scalar_engine
    a.alpha = alpha
    if lut is not None:
        lt = <cnp.ndarray>lut
        a.lut = <const double *>cnp.PyArray_DATA(lt)
    if lutp is not None:
        lf = <cnp.ndarray>lutp
        a.lutp = <const uint64_t *>cnp.PyArray_DATA(lf)
    if acc is not None:
        ac = <cnp.ndarray>acc
        a.acc = <float *>cnp.PyArray_DATA(ac)
        a.acc_sp = 1
        a.acc_max = acc_max
    a.threads = threads
    with nogil:
        r = fi_nki_elementwise(&a)
    return r


def reduce(out, int out_fmt, inp, int in_fmt, int op, int bitvec=0, int negate=0,
           int threads=0):
    """out[p] = fold(op, inp[p, :]) rounded once to out's format.  out: 1-D [P]."""
    cdef fi_nki_reduce_args a
    cdef const void *p
    cdef Py_ssize_t sp, sf
    cdef cnp.ndarray o = <cnp.ndarray>out
    memset(&a, 0, sizeof(a))
    a.P = inp.shape[0]
    a.F = inp.shape[1]
    _view(inp, &p, &sp, &sf)
    a.inp.ptr = p
    a.inp.fmt = in_fmt
    a.inp.sp = sp
    a.inp.sf = sf
    a.out = cnp.PyArray_DATA(o)
    a.out_fmt = out_fmt
    a.out_sp = cnp.PyArray_STRIDES(o)[0] // cnp.PyArray_ITEMSIZE(o)
    a.op = op
    a.bitvec = bitvec
    a.negate = negate
    a.threads = threads
    with nogil:
        fi_nki_reduce(&a)


def act_table(int act, double alpha, int scalar_engine, double[::1] x, double[::1] out):
    """out[i] = activation ``act`` at x[i] (float64; ScalarE's sin cubic when scalar_engine)."""
    cdef Py_ssize_t i, n = x.shape[0]
    with nogil:
        for i in range(n):
            if scalar_engine and act == 21:
                out[i] = fi_nki_sin_scalar(x[i])
            else:
                out[i] = fi_nki_act(act, x[i], alpha)


def matmul_f32(float[:, ::1] out, const float[:, ::1] s, const float[:, ::1] v, int threads=1):
    """out[M, N] += s[K, M].T @ v[K, N], float32, k ascending, no FMA; ``threads`` split the
    rows (0: OpenMP's default) without changing a bit."""
    cdef int K = s.shape[0], M = s.shape[1], N = v.shape[1]
    if out.shape[0] != M or out.shape[1] != N or v.shape[0] != K:
        raise ValueError(f"matmul_f32: shapes out ({out.shape[0]}, {out.shape[1]}), s ({K}, "
                         f"{M}), v ({v.shape[0]}, {v.shape[1]}) do not agree")
    with nogil:
        fi_nki_matmul_f32(&out[0, 0], &s[0, 0], &v[0, 0], K, M, N, threads)


def matmul(float[:, ::1] out, s, int sfmt, v, int vfmt, int threads=1):
    """out[M, N] += s[K, M].T @ v[K, N] with s / v 2-D arrays in their storage formats (any
    element strides): decoded to float32 in C, then the matmul_f32 kernel (same bits)."""
    cdef const void *sp
    cdef const void *vp
    cdef Py_ssize_t s_sp, s_sf, v_sp, v_sf
    _view(s, &sp, &s_sp, &s_sf)
    _view(v, &vp, &v_sp, &v_sf)
    cdef int K = s.shape[0], M = s.shape[1], N = v.shape[1]
    cdef int sisz = (<cnp.ndarray>s).itemsize, visz = (<cnp.ndarray>v).itemsize
    if out.shape[0] != M or out.shape[1] != N or v.shape[0] != K:
        raise ValueError(f"matmul: shapes out ({out.shape[0]}, {out.shape[1]}), s ({K}, "
                         f"{M}), v ({v.shape[0]}, {v.shape[1]}) do not agree")
    cdef float *sbuf = <float *>malloc(max(1, K * M) * sizeof(float))
    cdef float *vbuf = <float *>malloc(max(1, K * N) * sizeof(float))
    if sbuf == NULL or vbuf == NULL:
        free(sbuf)
        free(vbuf)
        raise MemoryError("matmul: cannot allocate the float32 operand buffers")
    with nogil:
        fi_nki_matmul(&out[0, 0], sp, sfmt, sisz, s_sp, s_sf, vp, vfmt, visz, v_sp, v_sf,
                      K, M, N, threads, sbuf, vbuf)
    free(sbuf)
    free(vbuf)


def dma_sum(dst, int dfmt, srcs, fmts):
    """dst[i] = ((srcs[0][i] + srcs[1][i]) + ...) in float32, rounded once to format dfmt.
    dst and every source: C-contiguous arrays with the same element count (at most 16
    sources; fmts their format codes)."""
    cdef const void *sp[16]
    cdef int fm[16]
    cdef int isz[16]
    cdef int ns = len(srcs), i
    cdef cnp.ndarray a
    cdef cnp.ndarray d = <cnp.ndarray>dst
    if ns < 1 or ns > 16 or len(fmts) != ns:
        raise ValueError("dma_sum: 1 to 16 sources, one format each")
    if not d.flags.c_contiguous or not d.flags.writeable:
        raise ValueError("dma_sum: dst must be a writeable C-contiguous array")
    cdef Py_ssize_t n = d.size
    for i in range(ns):
        a = <cnp.ndarray>srcs[i]
        if not a.flags.c_contiguous or a.size != n:
            raise ValueError("dma_sum: every source must be C-contiguous with dst's size")
        sp[i] = cnp.PyArray_DATA(a)
        fm[i] = fmts[i]
        isz[i] = cnp.PyArray_ITEMSIZE(a)
    cdef void *dp = cnp.PyArray_DATA(d)
    cdef int disz = cnp.PyArray_ITEMSIZE(d)
    with nogil:
        fi_nki_dma_sum(dp, dfmt, disz, sp, fm, isz, ns, n)


def encode_f64(int fmt, const double[::1] x, out):
    """out[i] = x[i] rounded once to format ``fmt`` (out: 1-D contiguous storage array)."""
    cdef cnp.ndarray o = <cnp.ndarray>out
    cdef int n = x.shape[0]
    cdef void *d = cnp.PyArray_DATA(o)
    with nogil:
        fi_nki_encode_f64_array(fmt, d, &x[0], n)
