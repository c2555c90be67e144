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
                                    fi_nki_matmul_submit, fi_nki_matmul_join,
                                    fi_nki_matmul_attach_ew,
                                    fi_nki_matmul_can_submit,
                                    fi_nki_dma_sum, fi_nki_set_mm_isa, fi_nki_mm_isa,
                                    fi_nki_encode_f64_array)
from fastisa._kernels.capi cimport use_shared_pool, fi_par_threads, fi_par_install_async
cnp.import_array()
use_shared_pool()  # the shared worker pool
from cpython.pycapsule cimport PyCapsule_GetPointer as _capsule_ptr
from fastisa._kernels import par as _par
fi_par_install_async(_capsule_ptr(_par._submit, b"fastisa.par.submit"),   # matmul's overlap
                     _capsule_ptr(_par._join, b"fastisa.par.join"),
                     _capsule_ptr(_par._attach, b"fastisa.par.attach"))
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
                int intmode=0, alpha_vec=None):
    """Run one elementwise instruction; returns the count of inputs outside ScalarE's range.

    dst, in0, in1: 2-D arrays [P, F] (in1 may be None).  stages: two tuples
    ``(op, rev, tensor, fvec, uvec)`` where fvec is a float32 [P] (or [1]) array of
    per-partition operands and uvec a uint32 one (either may be None).  lutp: uint64 table
    indexed by in0's code (bits 0-31: the float32 result, 32-63: dst's code), or None.
    acc: float32 [P] accumulator, or None; acc_max: its fold (0 sum, 1 maximum, 2 minimum,
    3 abs_max, 4 abs_min).  alpha_vec: float64 [P] PReLU slopes (one per row), or None
    (``alpha`` for every row).
    """
    cdef fi_nki_ew a
    cdef const void *p
    cdef Py_ssize_t sp, sf
    cdef cnp.ndarray fv, uv, lt, ac, lf, av
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
    if alpha_vec is not None:
        av = np.ascontiguousarray(alpha_vec, dtype=np.float64)
        if av.shape[0] != a.P:
            raise ValueError("elementwise: alpha_vec must hold one slope per row")
        keep.append(av)
        a.alpha_v = <const double *>cnp.PyArray_DATA(av)
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
    rows (0: every CPU) without changing a bit."""
    cdef int K = s.shape[0], M = s.shape[1], N = v.shape[1]
    if out.shape[0] != M or out.shape[1] != N or v.shape[0] != K:
        raise ValueError(f"matmul_f32: shapes out ({out.shape[0]}, {out.shape[1]}), s ({K}, "
                         f"{M}), v ({v.shape[0]}, {v.shape[1]}) do not agree")
    with nogil:
        fi_nki_matmul_f32(&out[0, 0], &s[0, 0], &v[0, 0], K, M, N, threads)


# matmul15 branch: matmul's float32 operand buffers, kept between calls (a fresh 320 KB
# malloc per nc_matmul is an mmap and its page faults) and 64-byte aligned (a zmm load of
# a misaligned panel splits a cache line).  A call takes the buffer (under the GIL) and
# gives it back after the kernel, so concurrent calls from several threads each get
# their own; only the largest one is kept.
cdef void *_mm_mem = NULL
cdef size_t _mm_cap = 0


cdef inline void *_mm_take(size_t need, size_t *cap_out) except NULL:
    """The kept operand buffer (or a new one) of at least ``need`` bytes; its size in
    cap_out.  The caller gives it back with _mm_give."""
    global _mm_mem, _mm_cap
    cdef void *mem = _mm_mem
    cdef size_t cap = _mm_cap
    _mm_mem = NULL
    _mm_cap = 0
    if mem == NULL or cap < need:
        free(mem)
        mem = malloc(need)
        cap = need
        if mem == NULL:
            raise MemoryError("matmul: cannot allocate the float32 operand buffers")
    cap_out[0] = cap
    return mem


cdef inline void _mm_give(void *mem, size_t cap) noexcept:
    global _mm_mem, _mm_cap
    if _mm_mem == NULL or _mm_cap < cap:
        free(_mm_mem)
        _mm_mem = mem
        _mm_cap = cap
    else:
        free(mem)


# ---- nc_matmul overlapped with the caller's Python (issue 15) ---------------------------
# matmul(..., overlap=1) starts the threaded panel path on the pool's workers and returns
# before it finishes (nki_matmul.h fi_nki_matmul_submit); the pending call's operands and
# buffer are held here until join().  Every access to tensor elements joins first: the
# NkiTensor.data property, the plan paths' _data_of, every matmul call, nl.ndarray, and
# nki.simulate before it returns.  One call is pending at most (a second joins the first).
cdef bint _pend_on = False
cdef bint _epi_on = False           # an elementwise call is deferred behind it (EwPlan._run)
cdef object _pend_refs = None
cdef void *_pend_mem = NULL
cdef size_t _pend_cap = 0


cdef int _join() except -1:
    global _pend_on, _pend_refs, _pend_mem, _pend_cap, _epi_on
    if not _pend_on:
        return 0
    fi_nki_matmul_join()            # under the GIL: joins never run concurrently
    _pend_on = False
    _epi_on = False
    _mm_give(_pend_mem, _pend_cap)
    _pend_mem = NULL
    _pend_cap = 0
    _pend_refs = None               # the operands may be freed from here on
    return 0


def join():
    """Wait for the pending overlapped nc_matmul, if any (see matmul's ``overlap``)."""
    if _pend_on:
        _join()


def pending():
    """True while an overlapped nc_matmul may still be running."""
    return _pend_on


def can_overlap():
    """True when matmul's ``overlap`` can take effect: the build has the FMA panel path
    (not the portable or sanitizer build), the CPU runs it at the instruction-set level in
    use, and the pool is installed (a call must also use several threads)."""
    return fi_nki_matmul_can_submit() != 0


def matmul(float[:, ::1] out, s, int sfmt, v, int vfmt, int threads=1, int zero=0,
           int overlap=0):
    """out[M, N] += s[K, M].T @ v[K, N] with s / v 2-D arrays in their storage formats (any
    element strides): decoded to float32 in C, then the matmul_f32 kernel (same bits).
    zero=1: out = s.T @ v, every element starting from +0 (out's values are not read).
    overlap=1: when the threaded panel path applies, return while the pool's workers run
    it; the caller must not read or write out, s or v before join() (every element access
    of fastisa's NKI front-end joins).  A pending call is joined first either way."""
    global _pend_on, _pend_refs, _pend_mem, _pend_cap
    cdef const void *sp
    cdef const void *vp
    cdef Py_ssize_t s_sp, s_sf, v_sp, v_sf
    if _pend_on:
        _join()
    _view(s, &sp, &s_sp, &s_sf)
    _view(v, &vp, &v_sp, &v_sf)
    cdef int K = s.shape[0], M = s.shape[1], N = v.shape[1]
    cdef int sisz = (<cnp.ndarray>s).itemsize, visz = (<cnp.ndarray>v).itemsize
    if out.shape[0] != M or out.shape[1] != N or v.shape[0] != K:
        raise ValueError(f"matmul: shapes out ({out.shape[0]}, {out.shape[1]}), s ({K}, "
                         f"{M}), v ({v.shape[0]}, {v.shape[1]}) do not agree")
    cdef size_t ns = ((<size_t>max(1, K * M) + 15) // 16) * 16     # floats, 64-byte multiple
    # one float32 copy of s per thread (each thread decodes its own: fi_nki_mm_split_task)
    cdef int nsb = 1 if threads == 1 else min(64, max(1, fi_par_threads(threads)))
    cdef size_t need = (ns * nsb + <size_t>max(1, K * N)) * sizeof(float) + 64
    cdef size_t cap = 0
    cdef void *mem = _mm_take(need, &cap)
    cdef float *sbuf = <float *>(((<size_t>mem) + 63) & ~(<size_t>63))
    cdef float *vbuf = sbuf + ns * nsb
    cdef int r = 0
    if overlap:
        r = fi_nki_matmul_submit(&out[0, 0], sp, sfmt, sisz, s_sp, s_sf, vp, vfmt, visz,
                                 v_sp, v_sf, K, M, N, threads, sbuf, nsb, vbuf, zero)
        if r == 1:
            _pend_on = True
            _pend_refs = (out, s, v)
            _pend_mem = mem
            _pend_cap = cap
            return
    if r == 0:
        with nogil:
            fi_nki_matmul(&out[0, 0], sp, sfmt, sisz, s_sp, s_sf, vp, vfmt, visz, v_sp, v_sf,
                          K, M, N, threads, sbuf, nsb, vbuf, zero)
    _mm_give(mem, cap)


def set_matmul_isa(int level=-1):
    """matmul15 branch: the instruction set of the nc_matmul kernels (matmul, matmul_f32):
    -1 the best the CPU has (the default), 0 the baseline build, 1 AVX2 + FMA, 2 AVX-512F +
    FMA (each with its FMA kernel for exact products, mm256.h / fi_nki_mm_fma512_cols, and
    its multiply-then-add kernel otherwise); a level the CPU lacks is lowered to
    the best it has.  Returns the level now in use.  Results never depend on it."""
    return fi_nki_set_mm_isa(level)


def matmul_isa():
    """The level set_matmul_isa describes, in use now."""
    return fi_nki_mm_isa()


cdef extern from * nogil:
    """
    /* 1 when every one of the n words at w equals w[0] (n >= 1): nc_matmul's PSUM state
     * check, 256 KiB for a [128, 512] tile, compiled for AVX-512F / AVX2 too (chosen at load
     * time) */
    #if defined(__x86_64__) && defined(__GNUC__) && !defined(FASTISA_DEBUG)
    __attribute__((target_clones("avx512f", "avx2", "default")))
    #endif
    static int fi_nki_words_equal(const unsigned int *w, Py_ssize_t n) {
        unsigned int v = w[0], diff = 0;
        for (Py_ssize_t i = 0; i < n; i++) diff |= w[i] ^ v;
        return diff == 0;
    }
    """
    int fi_nki_words_equal(const unsigned int *w, Py_ssize_t n)


def uniform_u32(const unsigned int[::1] w):
    """w[0] when every word of w equals it, else -1 (also for an empty w): one pass, no
    temporaries (nc_matmul's PSUM state check)."""
    cdef Py_ssize_t n = w.shape[0]
    cdef int same
    if n == 0:
        return -1
    with nogil:
        same = fi_nki_words_equal(&w[0], n)
    return <long long>w[0] if same else -1


def dma_sum(dst, int dfmt, srcs, fmts, int threads=1):
    """dst[i] = ((srcs[0][i] + srcs[1][i]) + ...) in float32, rounded once to format dfmt.
    dst and every source: C-contiguous arrays with the same element count (at most 16
    sources; fmts their format codes).  threads: worker-pool threads for a sum of >= 2^16
    elements, any formats (0: every CPU); the bits do not depend on it."""
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
        fi_nki_dma_sum(dp, dfmt, disz, sp, fm, isz, ns, n, threads)


def encode_f64(int fmt, const double[::1] x, out):
    """out[i] = x[i] rounded once to format ``fmt`` (out: 1-D contiguous storage array)."""
    cdef cnp.ndarray o = <cnp.ndarray>out
    cdef int n = x.shape[0]
    cdef void *d = cnp.PyArray_DATA(o)
    with nogil:
        fi_nki_encode_f64_array(fmt, d, &x[0], n)


# ---- speed family (issue 15): per-signature plans --------------------------------------
# A plan is what fastisa.nki._plan derived from one validated call: the kernel arguments
# that depend only on the operands' shapes, strides, dtypes, buffers and options.  Running
# it fills in what depends on values (data pointers, scalar operands) and checks the one
# value-dependent rule that matters here: where the arrays are in memory.
from cpython.object cimport PyObject
from libc.math cimport fabs, isfinite

cdef extern from "numpy/arrayobject.h":
    int NPY_ARRAY_WRITEABLE


cdef inline Py_ssize_t _addr(object arr):
    return <Py_ssize_t>cnp.PyArray_DATA(<cnp.ndarray>arr)


cdef inline bint _apart(Py_ssize_t a, Py_ssize_t alo, Py_ssize_t ahi,
                        Py_ssize_t b, Py_ssize_t blo, Py_ssize_t bhi):
    """Byte ranges [a + alo, a + ahi) and [b + blo, b + bhi) do not meet."""
    return a + ahi <= b + blo or b + bhi <= a + alo


def tensor_sig(t):
    """(ndim, shape, strides, storage type, writeable) of an NkiTensor's numpy storage, the
    part of a plan key that describes one tensor operand; None when ``t.data`` is not a
    numpy array."""
    cdef cnp.ndarray a
    d = t.data
    if type(d) is not np.ndarray:
        return None
    a = <cnp.ndarray>d
    cdef int nd = cnp.PyArray_NDIM(a), i
    cdef list out = [nd, <bint>(cnp.PyArray_FLAGS(a) & NPY_ARRAY_WRITEABLE)]
    for i in range(nd):
        out.append(cnp.PyArray_DIMS(a)[i])
        out.append(cnp.PyArray_STRIDES(a)[i])
    return tuple(out)


cdef class EwPlan:
    """One elementwise signature: ``run(dst, in0, in1, v0, v1, threads)`` takes the numpy
    storage of the operands (any N-D shape with the planned strides; the plan holds the
    [P, F] strides) and the stage operands (a Python number, or the storage of a float32
    [P, 1] tensor), and runs the kernel.  Returns the kernel's out-of-range count, or None
    (nothing written) when the call must take the full path: a source overlapping dst in
    another layout, an operand tensor overlapping dst, a scalar outside float32's range."""

    cdef fi_nki_ew a
    cdef Py_ssize_t dlo, dhi, s0lo, s0hi, s1lo, s1hi
    cdef bint same0, same1, has_in1, flat
    cdef bint big               # >= 2^16 elements: the kernel splits rows over threads
    cdef int kind[2]            # 0: no operand, 1: scalar, 2: float32 [P, 1] tensor
    cdef Py_ssize_t vsp[2], vlo[2], vhi[2]
    cdef readonly object keep   # objects whose ids are part of the key
    cdef bint conv[2]           # operand tensor converted to float32 on each call
    cdef bint psum              # a tensor operand is in PSUM (note its access)
    cdef object rec             # (engine, instruction, cycles) for fastisa.cost.record

    def __init__(self, int P, int F, int dst_fmt, int itemsize, tuple dst_st, int in0_fmt,
                 tuple in0_st, int in0_item, in1_fmt, in1_st, int in1_item, tuple stages,
                 int raw, int intmode, keep):
        cdef int s
        memset(&self.a, 0, sizeof(self.a))
        self.a.P = P
        self.a.F = F
        self.a.dst_fmt = dst_fmt
        self.a.itemsize = itemsize
        self.a.dst_sp, self.a.dst_sf = dst_st
        self.a.in0.fmt = in0_fmt
        self.a.in0.sp, self.a.in0.sf = in0_st
        self.dlo, self.dhi = _extent(P, F, dst_st, itemsize)
        self.s0lo, self.s0hi = _extent(P, F, in0_st, in0_item)
        self.same0 = in0_st == dst_st and in0_item == itemsize
        self.has_in1 = in1_fmt is not None
        if self.has_in1:
            self.a.in1.fmt = in1_fmt
            self.a.in1.sp, self.a.in1.sf = in1_st
            self.s1lo, self.s1hi = _extent(P, F, in1_st, in1_item)
            self.same1 = in1_st == dst_st and in1_item == itemsize
        for s in range(2):
            op, rev, tensor, kind, vsp = stages[s]
            self.a.st[s].op = op
            self.a.st[s].rev = rev
            self.a.st[s].tensor = tensor
            self.kind[s] = kind
            self.vsp[s] = vsp if P > 1 else 0
            self.vlo[s], self.vhi[s] = _extent(P, 1, (vsp, 1), 4)
        self.a.raw = raw
        self.a.intmode = intmode
        self.keep = keep
        # a small tile whose rows are back to back in every operand, with scalar operands
        # only, is one row of P * F elements: elementwise, so the same bits, without the
        # per-row overhead (tiles of >= 2^16 elements keep their rows for the threads)
        self.big = P * F >= (1 << 16)
        self.flat = (P * F < (1 << 16) and dst_st == (F, 1) and in0_st == (F, 1)
                     and (not self.has_in1 or in1_st == (F, 1))
                     and self.kind[0] != 2 and self.kind[1] != 2)
        if self.flat:
            self.a.P = 1
            self.a.F = P * F

    def finish(self, bint conv0, bint conv1, bint psum, tuple rec, tuple head):
        """What the call does besides the kernel: operand conversions, PSUM, the cost;
        ``head``: the objects whose identities the key holds."""
        self.keep = (self.keep, head)
        self.conv[0] = conv0
        self.conv[1] = conv1
        self.psum = psum
        self.rec = rec

    @property
    def record(self):
        return self.rec

    def run(self, dst, in0, in1, v0, v1, int threads):
        return self._run(dst, in0, in1, v0, v1, threads, 0)

    cdef object _run(self, object dst, object in0, object in1, object v0, object v1,
                     int threads, int defer):
        global _epi_on, _pend_refs
        cdef fi_nki_ew a = self.a
        cdef float fv[2]
        cdef double d
        cdef Py_ssize_t pd = _addr(dst), p0 = _addr(in0), p1 = 0, pv
        cdef int s
        cdef int64_t r
        if not (self.same0 and pd == p0) and not _apart(pd, self.dlo, self.dhi, p0, self.s0lo,
                                                        self.s0hi):
            return None
        a.dst = <void *>pd
        a.in0.ptr = <const void *>p0
        if self.has_in1:
            p1 = _addr(in1)
            if not (self.same1 and pd == p1) and not _apart(pd, self.dlo, self.dhi, p1,
                                                            self.s1lo, self.s1hi):
                return None
            a.in1.ptr = <const void *>p1
        for s in range(2):
            v = v0 if s == 0 else v1
            if self.kind[s] == 1:
                if type(v) is int and not -16777216 <= v <= 16777216:
                    return None          # exactness of int -> float32 not assumed: full path
                d = <double>v
                if isfinite(d) and fabs(d) > 3.4028234663852886e38:
                    return None          # np.float32 would overflow (and warn): full path
                fv[s] = <float>d
                a.st[s].f = &fv[s]
                a.st[s].fsp = 0
            elif self.kind[s] == 2:
                pv = _addr(v)
                if not _apart(pd, self.dlo, self.dhi, pv, self.vlo[s], self.vhi[s]):
                    return None
                a.st[s].f = <const float *>pv
                a.st[s].fsp = self.vsp[s]
        a.threads = threads
        if defer:
            # the operands were taken without waiting for the pending overlapped nc_matmul
            # (hit_tt): run after it, on the pool, if it is still open -- else wait, then
            # run here.  The deferred call's out-of-range count is not returned (the hit
            # paths do not use it); nothing else reads a's arrays before the join.
            if a.acc == NULL and fi_nki_matmul_attach_ew(&a, fv) == 1:
                _epi_on = True
                _pend_refs = (_pend_refs, self, dst, in0, in1, v0, v1)
                return 0
            _join()
        if a.P * a.F < 4096:     # speed3: a small tile's plan keeps the GIL (releasing and
            r = fi_nki_elementwise(&a)     # retaking it costs about as much as the work)
        else:
            with nogil:
                r = fi_nki_elementwise(&a)
        return r


cdef tuple _extent(int P, int F, tuple st, Py_ssize_t item):
    """(lo, hi) byte offsets, relative to the first element, of a [P, F] view with element
    strides ``st`` (sp, sf)."""
    cdef Py_ssize_t sp = st[0], sf = st[1], lo = 0, hi = 0
    if P > 1:
        if sp < 0:
            lo += sp * (P - 1) * item
        else:
            hi += sp * (P - 1) * item
    if F > 1:
        if sf < 0:
            lo += sf * (F - 1) * item
        else:
            hi += sf * (F - 1) * item
    return lo, hi + item


cdef object _TENSOR_CLASS = None


# speed15b branch (issue 15): the byte offsets of NkiTensor's ``data`` / ``dtype`` /
# ``buffer`` slots (its __slots__ member descriptors), so the key of an operand of exactly
# that class reads them without three attribute lookups; -1 when the class has no such slot.
cdef Py_ssize_t _OFF_DATA = -1, _OFF_DTYPE = -1, _OFF_BUFFER = -1

cdef extern from "Python.h":
    """
    #include "structmember.h"
    static Py_ssize_t fi_member_offset(PyObject *cls, const char *name) {
        PyObject *d = PyDict_GetItemString(((PyTypeObject *)cls)->tp_dict, name);
        if (d == NULL || Py_TYPE(d) != &PyMemberDescr_Type) return -1;
        PyMemberDef *m = ((PyMemberDescrObject *)d)->d_member;
        if (m->type != T_OBJECT_EX || (m->flags & READONLY)) return -1;
        return m->offset;
    }
    static inline PyObject *fi_slot(PyObject *o, Py_ssize_t off) {
        return *(PyObject **)((char *)o + off);        /* borrowed; NULL when unset */
    }
    """
    Py_ssize_t fi_member_offset(object cls, const char *name)
    PyObject *fi_slot(object o, Py_ssize_t off)

cdef object _NDARRAY = np.ndarray


def set_tensor_class(cls):
    """The NkiTensor class :func:`plan_key` describes by signature (others by type)."""
    global _TENSOR_CLASS, _OFF_DATA, _OFF_DTYPE, _OFF_BUFFER
    _TENSOR_CLASS = cls
    _OFF_DATA = fi_member_offset(cls, b"_d")
    _OFF_DTYPE = fi_member_offset(cls, b"dtype")
    _OFF_BUFFER = fi_member_offset(cls, b"buffer")
    if _OFF_DATA < 0 or _OFF_DTYPE < 0 or _OFF_BUFFER < 0:
        _OFF_DATA = _OFF_DTYPE = _OFF_BUFFER = -1


cdef inline Py_ssize_t _oid(object o):
    return <Py_ssize_t><PyObject *>o


# nkiattn branch: the signature covers NkiTensor subclasses too.  It used to describe only
# objects of exactly the NkiTensor class and any other object by its type alone, so every
# access-pattern view (``t.ap(...)``, an NkiTensor subclass; nki-library's TensorView makes
# every operand one) had the same key whatever its shape, strides, dtype or buffer: an
# nc_matmul plan stored for a contiguous ``.ap`` dst was hit by a strided one, and one stored
# for a bfloat16 ``.ap`` operand decoded a float16 one as bfloat16 (a silent wrong result).
# The tag word also mixed rank and writeability (1 + 2 * ndim + 4 * writeable: rank 2
# writeable == rank 4 read-only), and nothing bounded the words a high-rank operand wrote.
cdef enum:
    _KEY_WORDS = 128            # words of a key: head (<= 24) + 4 operands (rank <= 12 each)


cdef inline int _put_array(Py_ssize_t *w, int n, cnp.ndarray a, Py_ssize_t fmt,
                           Py_ssize_t buf, Py_ssize_t cls) except -1:
    """_put_sig's words for a tensor over numpy array ``a``: the tag, the format, buffer
    and class words, then shape and strides."""
    cdef int nd = cnp.PyArray_NDIM(a), i
    if n + 4 + 2 * nd > _KEY_WORDS:
        raise TypeError("plan_key: operand rank too high for a key")
    w[n] = 1 | (4 * <bint>(cnp.PyArray_FLAGS(a) & NPY_ARRAY_WRITEABLE)) | (8 * nd)
    w[n + 1] = fmt
    w[n + 2] = buf
    w[n + 3] = cls
    n += 4
    for i in range(nd):
        w[n] = cnp.PyArray_DIMS(a)[i]
        w[n + 1] = cnp.PyArray_STRIDES(a)[i]
        n += 2
    return n


cdef int _put_sig(Py_ssize_t *w, int n, object t) except -1:
    """Append one operand's signature to w[n:] and return the new length: for an NkiTensor
    (or subclass: views) over a numpy array the tag ``1 | 4 * writeable | 8 * ndim``, its
    format, buffer and class (by identity), then shape and strides; over anything else the
    tag 2 and both types; for any other object the tag 3 and its type.  Tags have non-zero
    low bits (the head's object addresses have none), so keys parse one way only.  Raises
    TypeError (the caller takes the full path, no plan) when the key would not fit or a
    view's elements cannot be resolved (the full path raises the view's own error)."""
    cdef PyObject *pd
    cdef PyObject *pt
    cdef PyObject *pb
    tp = type(t)
    if tp is _TENSOR_CLASS and _OFF_DATA >= 0:
        # speed15b: the slots read in place (the same values t.data / t.dtype / t.buffer give)
        pd = fi_slot(t, _OFF_DATA)
        pt = fi_slot(t, _OFF_DTYPE)
        pb = fi_slot(t, _OFF_BUFFER)
        if pd != NULL and pt != NULL and pb != NULL and \
                type(<object>pd) is _NDARRAY:
            return _put_array(w, n, <cnp.ndarray><object>pd, <Py_ssize_t>pt, <Py_ssize_t>pb,
                              _oid(tp))
    if tp is _TENSOR_CLASS or (_TENSOR_CLASS is not None and isinstance(t, _TENSOR_CLASS)):
        if tp is _TENSOR_CLASS:
            d = t.data
        else:
            try:
                d = t.data              # an .ap view resolves (and bounds-checks) here
            except Exception:
                raise TypeError("plan_key: an operand view that does not resolve") from None
        if type(d) is np.ndarray:
            return _put_array(w, n, <cnp.ndarray>d, _oid(t.dtype), _oid(t.buffer), _oid(tp))
        if n + 3 > _KEY_WORDS:
            raise TypeError("plan_key: too many words for a key")
        w[n] = 2
        w[n + 1] = _oid(type(d))
        w[n + 2] = _oid(tp)
        return n + 3
    if n + 2 > _KEY_WORDS:
        raise TypeError("plan_key: too many words for a key")
    w[n] = 3
    w[n + 1] = _oid(tp)
    return n + 2


def plan_key(tuple head, a, b, c=None, d=None):
    """The signature of one call as bytes: the identities of the objects in ``head`` (the
    instruction name and its options), then per operand: an NkiTensor's (or an NkiTensor
    view's) format, buffer and class (by identity), its storage's rank, writeability,
    shape and strides; anything else its type.  Identities stay unique while a plan holds
    the objects (:attr:`EwPlan.keep`).  Raises TypeError when no key can be built (the
    callers then take the full path)."""
    cdef Py_ssize_t w[_KEY_WORDS]
    cdef int n = 0, i, nh = len(head)
    if nh > 24:
        raise TypeError("plan_key: head too long")
    for i in range(nh):
        w[n] = _oid(head[i])
        n += 1
    for t in (a, b, c, d):
        n = _put_sig(w, n, t)
    return (<char *>w)[:n * sizeof(Py_ssize_t)]


# The hit path of fastisa.nki._plan in C: key, lookup, run, PSUM notes, cost hooks.
cdef dict _PLANS = None
cdef list _HOOKS = None
cdef object _ACTIVE = None, _NOTE = None, _PSUM = None, _F32VEC = None, _THREADS = None
def set_plan_env(dict plans, list hooks, active, note, psum, f32vec, threads):
    """The cache, fastisa.cost's hooks and active profiles, note_access, nl.psum, the
    operand conversion and the thread-count function the hit path uses."""
    global _PLANS, _HOOKS, _ACTIVE, _NOTE, _PSUM, _F32VEC, _THREADS
    _PLANS, _HOOKS, _ACTIVE, _NOTE, _PSUM, _F32VEC, _THREADS = (plans, hooks, active, note, psum,
                                                              f32vec, threads)


# ---- speed2 branch (issue 15): fastisa.cost.record_idle, inlined for the plan hit path ----
from fastisa import cost as _fi_cost
from fastisa._kernels.span import idle_registry as _idle_registry
from fastisa._kernels.idle cimport record_idle as _record_idle

cdef list _I_HOOKS = _fi_cost.RECORD_HOOKS
cdef object _I_ACTIVE = _fi_cost._ACTIVE
cdef dict _I_IDLE = _idle_registry()


cdef inline bint _record_idle_c() except -1:
    return _record_idle(_I_HOOKS, _I_ACTIVE, _I_IDLE)



cdef object _finish(EwPlan p, tuple names, tuple ts):
    cdef int i
    if p.psum:
        for i in range(len(ts)):
            if ts[i].buffer is _PSUM:
                _NOTE(names[i], ts[i])
    elif _record_idle_c():
        return True   # no profile, every record hook idle: cost.record would do nothing
    return p.rec      # the caller passes it to cost.record from the instruction's frame,
                      # where the record hooks and the profile look for the operands


cdef inline object _val(EwPlan p, int s, object v):
    if type(v) is _TENSOR_CLASS:
        return _F32VEC(v) if p.conv[s] else v.data
    return v


# ---- speed15b branch (issue 15): the hit paths' lookup without a bytes key -------------------
# A direct-mapped memo of recent signatures in front of the plan dict: the key words are
# hashed in C and compared word for word with the memo entry's; the entry keeps the dict's
# own key (bytes, its hash cached) and its value, and counts as a hit only while the dict
# still maps that key to that very value (so plans.clear(), a full cache emptied by
# plans.store, or any other change of the dict is seen on the next call).  The entry holds
# the plan, whose ``keep`` holds the objects the key's identities name, so those cannot be
# reused by other objects while the entry exists.  A miss builds the bytes key as before.
cdef enum:
    _MEMO_SLOTS = 256
    _MEMO_WORDS = 64

cdef struct _MemoEntry:
    int n
    PyObject *key             # owned: the dict's key (bytes)
    PyObject *val             # owned: the value it mapped to (a plan, or False)
    Py_ssize_t w[_MEMO_WORDS]

cdef _MemoEntry _MEMO[_MEMO_SLOTS]

from cpython.ref cimport Py_XINCREF, Py_XDECREF
from cpython.dict cimport PyDict_GetItem
from libc.string cimport memcmp, memcpy


cdef inline size_t _hash_words(const Py_ssize_t *w, int n) noexcept nogil:
    cdef uint64_t h = 0x9E3779B97F4A7C15ULL ^ <uint64_t>n
    cdef int i
    for i in range(n):
        h = (h ^ <uint64_t>w[i]) * 0xFF51AFD7ED558CCDULL
        h ^= h >> 29
    return <size_t>(h % _MEMO_SLOTS)


cdef object _lookup(Py_ssize_t *w, int n):
    """The value _PLANS holds for the key of words w[:n], or None."""
    cdef _MemoEntry *e
    cdef PyObject *cur
    cdef size_t slot = 0
    if n <= _MEMO_WORDS:
        slot = _hash_words(w, n)
        e = &_MEMO[slot]
        if e.n == n and e.key != NULL and memcmp(e.w, w, n * sizeof(Py_ssize_t)) == 0:
            cur = PyDict_GetItem(_PLANS, <object>e.key)
            if cur != NULL and cur == e.val:
                return <object>cur
    key = (<char *>w)[:n * sizeof(Py_ssize_t)]
    p = _PLANS.get(key)
    if p is not None and n <= _MEMO_WORDS:
        e = &_MEMO[slot]
        Py_XDECREF(e.key)
        Py_XDECREF(e.val)
        e.key = <PyObject *>key
        e.val = <PyObject *>p
        Py_XINCREF(e.key)
        Py_XINCREF(e.val)
        e.n = n
        memcpy(e.w, w, n * sizeof(Py_ssize_t))
    return p


def memo_clear():
    """Drop every memo entry (the plans themselves stay in their dict)."""
    cdef int i
    for i in range(_MEMO_SLOTS):
        Py_XDECREF(_MEMO[i].key)
        Py_XDECREF(_MEMO[i].val)
        _MEMO[i].key = NULL
        _MEMO[i].val = NULL
        _MEMO[i].n = 0


cdef inline object _data_of(object t):
    """t.data, read in place for an NkiTensor (see _put_sig), after joining a pending
    overlapped nc_matmul (the caller accesses the elements)."""
    cdef PyObject *pd
    if _pend_on:
        _join()
    if _OFF_DATA >= 0 and type(t) is _TENSOR_CLASS:
        pd = fi_slot(t, _OFF_DATA)
        if pd != NULL:
            return <object>pd
    return t.data


def hit_ts(dst, data, op0, operand0, reverse0, op1, operand1, reverse1, engine):
    """tensor_scalar through its plan: None (no plan: take the full path, which stores the
    signature's plan), False (the signature has no plan, or this call needs the full path;
    nothing was written), or, when the plan ran, the (engine, instruction, cycles) the
    caller passes to cost.record -- True instead when recording would do nothing
    (fastisa.cost.record_idle)."""
    cdef Py_ssize_t w[_KEY_WORDS]
    w[0] = _oid("tensor_scalar")
    w[1] = _oid(op0)
    w[2] = _oid(reverse0)
    w[3] = _oid(op1)
    w[4] = _oid(reverse1)
    w[5] = _oid(engine)
    cdef int n = _put_sig(w, 6, dst)
    n = _put_sig(w, n, data)
    n = _put_sig(w, n, operand0)
    n = _put_sig(w, n, operand1)
    p = _lookup(w, n)
    if p is None or p is False:
        return p
    cdef EwPlan ep = <EwPlan>p
    if ep._run(_data_of(dst), _data_of(data), None, _val(ep, 0, operand0), _val(ep, 1, operand1),
               _THREADS() if ep.big else 1, 0) is None:
        return False
    return _finish(ep, ("dst", "data"), (dst, data))


cdef inline object _raw_of(object t):
    """t's storage for a deferred call (EwPlan._run's defer): _data_of without the join."""
    cdef PyObject *pd
    if _OFF_DATA >= 0 and type(t) is _TENSOR_CLASS:
        pd = fi_slot(t, _OFF_DATA)
        if pd != NULL:
            return <object>pd
    return t.data


def hit_tt(dst, data1, data2, op, engine, int defer=0):
    """tensor_tensor through its plan (returns as :func:`hit_ts`).  defer=1 (the caller is
    kernel code inside nki.simulate, see fastisa.nki._pe._overlap_ok): while an overlapped
    nc_matmul is pending, the call runs after it on the pool instead of waiting for it."""
    cdef Py_ssize_t w[_KEY_WORDS]
    w[0] = _oid("tensor_tensor")
    w[1] = _oid(op)
    w[2] = _oid(engine)
    cdef int n = _put_sig(w, 3, dst)
    n = _put_sig(w, n, data1)
    n = _put_sig(w, n, data2)
    n = _put_sig(w, n, None)
    p = _lookup(w, n)
    if p is None or p is False:
        return p
    cdef EwPlan ep = <EwPlan>p
    if defer and _pend_on and not _epi_on:
        if ep._run(_raw_of(dst), _raw_of(data1), _raw_of(data2), None, None, 1, 1) is None:
            return False
    elif ep._run(_data_of(dst), _data_of(data1), _data_of(data2), None, None,
                 _THREADS() if ep.big else 1, 0) is None:
        return False
    return _finish(ep, ("dst", "data1", "data2"), (dst, data1, data2))


def hit_tc(dst, src, engine):
    """tensor_copy through its plan (returns as :func:`hit_ts`)."""
    cdef Py_ssize_t w[_KEY_WORDS]
    w[0] = _oid("tensor_copy")
    w[1] = _oid(engine)
    cdef int n = _put_sig(w, 2, dst)
    n = _put_sig(w, n, src)
    n = _put_sig(w, n, None)
    n = _put_sig(w, n, None)
    p = _lookup(w, n)
    if p is None or p is False:
        return p
    cdef EwPlan ep = <EwPlan>p
    if ep._run(_data_of(dst), _data_of(src), None, None, None, _THREADS() if ep.big else 1,
               0) is None:
        return False
    return _finish(ep, ("dst", "src"), (dst, src))


# ---- speed family (issue 15): nc_matmul's plan path -------------------------------------
cdef inline unsigned int *_state_ptr(cnp.ndarray d, cnp.ndarray own, cnp.ndarray st,
                                     Py_ssize_t *n):
    """The uint32 words of ``st`` (an owner's state bytes) under the bytes of the
    C-contiguous view d of own; NULL when d is not inside own or not 4-byte aligned."""
    cdef Py_ssize_t off = <char *>cnp.PyArray_DATA(d) - <char *>cnp.PyArray_DATA(own)
    cdef Py_ssize_t nb = cnp.PyArray_NBYTES(d)
    cdef char *base = <char *>cnp.PyArray_DATA(st)
    if (off < 0 or nb <= 0 or off + nb > cnp.PyArray_NBYTES(st) or off % 4 or nb % 4
            or (<Py_ssize_t>base) % 4):
        return NULL
    n[0] = nb // 4
    return <unsigned int *>(base + off)


def psum_words_ok(d, own):
    """True when the C-contiguous view ``d`` is a whole-word range of ``own``: what
    :func:`psum_uniform` and :func:`psum_mark` need of ``d`` (checked before ``own`` has
    state bytes: they are as long as ``own`` and at least 4-byte aligned)."""
    cdef Py_ssize_t off = <char *>cnp.PyArray_DATA(<cnp.ndarray>d) - <char *>cnp.PyArray_DATA(<cnp.ndarray>own)
    cdef Py_ssize_t nb = cnp.PyArray_NBYTES(<cnp.ndarray>d)
    return not (off < 0 or nb <= 0 or off + nb > cnp.PyArray_NBYTES(<cnp.ndarray>own) or off % 4
                or nb % 4)


def psum_uniform(d, own, st):
    """nc_matmul's PSUM state check on its plan path: the state word of every element of
    the C-contiguous 4-byte view ``d`` of ``own`` (state bytes ``st``, uint8 of
    own.nbytes) when they are all equal (the element's state in the low byte), else -1;
    -2 when ``d`` is not a whole-word range of ``own``."""
    cdef Py_ssize_t n
    cdef unsigned int *w = _state_ptr(<cnp.ndarray>d, <cnp.ndarray>own, <cnp.ndarray>st, &n)
    cdef int same
    if w == NULL:
        return -2
    if n == 0:
        return -1
    with nogil:
        same = fi_nki_words_equal(w, n)
    return <long long>w[0] if same else -1


def psum_mark(d, own, st, unsigned int value):
    """Set the state word of every element of ``d`` (as :func:`psum_uniform`) to value."""
    cdef Py_ssize_t n, i
    cdef unsigned int *w = _state_ptr(<cnp.ndarray>d, <cnp.ndarray>own, <cnp.ndarray>st, &n)
    if w == NULL:
        raise ValueError("psum_mark: d is not a whole-word range of its owner")
    with nogil:
        for i in range(n):
            w[i] = value


def psum_replace(d, own, st, int old, unsigned int new):
    """In the state bytes of the C-contiguous 4-byte view ``d`` (as :func:`psum_uniform`):
    each element's state (the low byte of its word) becomes ``new`` where it is ``old``
    (``old`` < 0: everywhere); the other bytes are kept.  False (nothing changed) when d
    is not a whole-word range of own."""
    cdef Py_ssize_t n, i
    cdef unsigned int *w = _state_ptr(<cnp.ndarray>d, <cnp.ndarray>own, <cnp.ndarray>st, &n)
    cdef unsigned int o = <unsigned int>old, x
    if w == NULL:
        return False
    with nogil:
        if old < 0:
            for i in range(n):
                w[i] = (w[i] & 0xFFFFFF00u) | new
        else:
            # matmul15 branch: every word is stored (unchanged where the state is not
            # old), a select the compiler vectorises; a conditional store it could not
            # (2x the tutorial's [128, 512] float32 add before)
            for i in range(n):
                x = w[i]
                w[i] = ((x & 0xFFFFFF00u) | new) if (x & 0xFFu) == o else x
    return True


# ---- speed14 branch (issue 14): plan hit paths of dma_transpose, nc_stream_shuffle and ---
# dma_compute (fastisa.nki._dma / _move; cache fastisa.nki._isaplan.CACHE).  Each plan holds
# what the full path derived from the call's signature (kernel strides and shapes, the
# byte extents of the operands relative to their first element, the cost); running it
# fills in the data pointers, checks what depends on where the operands are in memory
# (an overlap, the start partitions) and hands a call that fails such a check back to the
# full path, which raises or copies exactly as it always does.
from fastisa._kernels.capi cimport fi_move_strided, fi_move_rows, fi_move_rows_inplace
from libc.stdint cimport int32_t

cdef dict _ISA_PLANS = None
cdef object _T_HEAD = None, _S_HEAD = None, _C_NAME = None, _ISA_THREADS = None


def set_isa_plan_env(dict plans, tuple head_t, tuple head_s, tuple head_c, threads):
    """fastisa.nki._isaplan.CACHE, the key heads of dma_transpose, nc_stream_shuffle and
    dma_compute (the same objects the full paths use, so the keys agree) and the
    thread-count function of the NKI kernels (fastisa.nki._compute._threads)."""
    global _ISA_PLANS, _T_HEAD, _S_HEAD, _C_NAME, _ISA_THREADS
    _ISA_PLANS, _T_HEAD, _S_HEAD, _C_NAME = plans, head_t, head_s, head_c[0]
    _ISA_THREADS = threads


cdef inline void _nd_extent(cnp.ndarray a, Py_ssize_t *lo, Py_ssize_t *hi):
    """Byte offsets [lo, hi) of every element of a, relative to its first element."""
    cdef int i
    cdef Py_ssize_t n, st
    lo[0] = 0
    hi[0] = cnp.PyArray_ITEMSIZE(a)
    for i in range(cnp.PyArray_NDIM(a)):
        n = cnp.PyArray_DIMS(a)[i]
        st = cnp.PyArray_STRIDES(a)[i]
        if n > 1:
            if st < 0:
                lo[0] += (n - 1) * st
            else:
                hi[0] += (n - 1) * st


cdef inline object _ran(object rec):
    """What a hit returns once its kernel ran: True when cost.record would do nothing."""
    if _record_idle_c():
        return True
    return rec


cdef class TransposePlan:
    """dma_transpose of one signature: ``dst[...] = src.transpose(perm)`` by
    fi_move_strided with the permuted source strides (rank <= 4, so <= 5 axes)."""
    cdef Py_ssize_t ds[5]
    cdef Py_ssize_t ss[5]
    cdef Py_ssize_t shape[5]
    cdef int itemsize
    cdef bint big
    cdef Py_ssize_t dlo, dhi, slo, shi
    cdef readonly object perm, rec

    def __init__(self, dst, src, tuple perm, tuple rec):
        """dst, src: the numpy storage of a validated call (src not yet transposed)."""
        cdef cnp.ndarray d = <cnp.ndarray>dst
        cdef cnp.ndarray s = <cnp.ndarray>src
        cdef int nd = cnp.PyArray_NDIM(d), k, off = 5 - nd
        if nd > 5 or cnp.PyArray_NDIM(s) != nd or len(perm) != nd:
            raise ValueError("TransposePlan: rank mismatch")
        for k in range(5):
            self.ds[k] = 0
            self.ss[k] = 0
            self.shape[k] = 1
        for k in range(nd):
            self.shape[off + k] = cnp.PyArray_DIMS(d)[k]
            self.ds[off + k] = cnp.PyArray_STRIDES(d)[k]
            self.ss[off + k] = cnp.PyArray_STRIDES(s)[<int>perm[k]]
            if cnp.PyArray_DIMS(s)[<int>perm[k]] != cnp.PyArray_DIMS(d)[k]:
                raise ValueError("TransposePlan: shape mismatch")
        self.itemsize = cnp.PyArray_ITEMSIZE(d)
        self.big = cnp.PyArray_SIZE(d) >= 4096
        _nd_extent(d, &self.dlo, &self.dhi)
        _nd_extent(s, &self.slo, &self.shi)
        self.perm = perm
        self.rec = rec

    cdef bint _run(self, object dst, object src):
        cdef Py_ssize_t pd = _addr(dst), ps = _addr(src)
        if not _apart(pd, self.dlo, self.dhi, ps, self.slo, self.shi):
            return False             # the full path checks the overlap exactly
        if self.big:
            with nogil:
                fi_move_strided(<char *>pd, self.ds, <const char *>ps, self.ss, self.shape,
                                self.itemsize)
        else:
            fi_move_strided(<char *>pd, self.ds, <const char *>ps, self.ss, self.shape,
                            self.itemsize)
        return True

    def run(self, dst, src):
        """Run on the numpy storage of dst and src; False (nothing written) when their
        byte ranges meet (the full path decides)."""
        return self._run(dst, src)


def hit_transpose(dst, src):
    """dma_transpose without options through its plan: None (no plan: the full path,
    which stores one), False (this call needs the full path; nothing was written), or,
    when the plan ran, the (engine, instruction, cycles) the caller passes to cost.record
    -- True instead when recording would do nothing (fastisa.cost.record_idle)."""
    p = _ISA_PLANS.get(plan_key(_T_HEAD, dst, src))
    if p is None or type(p) is not TransposePlan:
        return None
    if not (<TransposePlan>p)._run(dst.data, src.data):
        return False
    return _ran((<TransposePlan>p).rec)


cdef inline Py_ssize_t _start_partition(object arr):
    """fastisa.nki._move.start_partition of a tensor whose storage is ``arr``."""
    cdef cnp.ndarray v = <cnp.ndarray>arr
    cdef cnp.ndarray root = v
    cdef object b
    cdef Py_ssize_t off, pstride
    while True:
        b = (<object>root).base
        if type(b) is np.ndarray or isinstance(b, np.ndarray):
            root = <cnp.ndarray>b
        else:
            break
    if root is v or cnp.PyArray_NDIM(v) == 0:
        return 0
    off = <Py_ssize_t>cnp.PyArray_DATA(v) - <Py_ssize_t>cnp.PyArray_DATA(root)
    if cnp.PyArray_NDIM(root) > 1 and cnp.PyArray_IS_C_CONTIGUOUS(root):
        pstride = cnp.PyArray_STRIDES(root)[0]
    else:
        pstride = cnp.PyArray_STRIDES(v)[0]
    if off <= 0 or pstride <= 0:
        return 0
    return off // pstride


def start_partition_of(arr):
    """The compiled fastisa.nki._move.start_partition (of a tensor's numpy storage)."""
    return _start_partition(arr)


cdef class ShufflePlan:
    """nc_stream_shuffle of one signature and mask: row r of dst ([R, F] view) = row
    rowmap[r] of src ([Rs, F] view); rowmap[r] < 0 leaves row r.  dst and src the same
    rows (in place): fi_move_rows_inplace (speed14b), no copy of src."""
    cdef cnp.ndarray rowmap
    cdef tuple allowed
    cdef int R, Rs, itemsize
    cdef Py_ssize_t F, dsp, dsf, ssp, ssf
    cdef Py_ssize_t dlo, dhi, slo, shi
    cdef bint big, inplace_ok
    cdef readonly object rec

    def __init__(self, rowmap, tuple allowed, d_rows, s_rows, dst, src, tuple rec):
        """d_rows / s_rows: the [R, F] / [Rs, F] views the full path ran on, views of the
        storage ``dst`` / ``src`` (numpy arrays) of the tensors."""
        cdef cnp.ndarray d = <cnp.ndarray>d_rows
        cdef cnp.ndarray s = <cnp.ndarray>s_rows
        self.rowmap = np.ascontiguousarray(rowmap, dtype=np.int32)
        self.allowed = allowed
        self.R = cnp.PyArray_DIMS(d)[0]
        self.Rs = cnp.PyArray_DIMS(s)[0]
        self.F = cnp.PyArray_DIMS(d)[1]
        self.dsp, self.dsf = cnp.PyArray_STRIDES(d)[0], cnp.PyArray_STRIDES(d)[1]
        self.ssp, self.ssf = cnp.PyArray_STRIDES(s)[0], cnp.PyArray_STRIDES(s)[1]
        self.itemsize = cnp.PyArray_ITEMSIZE(d)
        if (cnp.PyArray_DATA(d) != cnp.PyArray_DATA(<cnp.ndarray>dst)
                or cnp.PyArray_DATA(s) != cnp.PyArray_DATA(<cnp.ndarray>src)
                or self.rowmap.shape[0] != self.R):
            raise ValueError("ShufflePlan: the row views must start at their storage")
        _nd_extent(<cnp.ndarray>dst, &self.dlo, &self.dhi)
        _nd_extent(<cnp.ndarray>src, &self.slo, &self.shi)
        self.big = self.R * self.F >= (1 << 16)    # the compute kernels' policy
        # a call with dst and src at one address is in place when the two views are the
        # same rows that do not overlap one another (fastisa.nki._move._same_rows)
        self.inplace_ok = (self.R == self.Rs and self.dsp == self.ssp and self.dsf == self.ssf
                           and (self.F <= 1 or abs(self.dsp) >= self.F * abs(self.dsf))
                           and self.dsp != 0)
        self.rec = rec

    cdef bint _run(self, object dst, object src):
        cdef Py_ssize_t pd = _addr(dst), ps = _addr(src)
        cdef int nt = 1
        if _start_partition(src) not in self.allowed or \
                _start_partition(dst) not in self.allowed:
            return False             # the full path raises the start-partition error
        cdef const int32_t *m = <const int32_t *>cnp.PyArray_DATA(self.rowmap)
        cdef int st = 0
        if not _apart(pd, self.dlo, self.dhi, ps, self.slo, self.shi):
            if not (pd == ps and self.inplace_ok):
                return False         # the full path copies src first
            if self.big:
                nt = _ISA_THREADS()
            with nogil:              # dst is src: the same rows, no copy (speed14b)
                st = fi_move_rows_inplace(<char *>pd, self.dsp, self.dsf, m, self.R, self.F,
                                          self.itemsize, nt)
            return st == 0           # (no scratch memory: the full path raises)
        if self.big:
            nt = _ISA_THREADS()
        with nogil:
            fi_move_rows(<char *>pd, self.dsp, self.dsf, <const char *>ps, self.ssp, self.ssf,
                         m, self.R, self.F, self.itemsize, nt)
        return True


def hit_shuffle(dst, src, shuffle_mask):
    """nc_stream_shuffle through its plan (returns as :func:`hit_transpose`); the key
    holds the mask by value."""
    cdef object m
    if type(shuffle_mask) is list or type(shuffle_mask) is tuple:
        m = tuple(shuffle_mask)
    else:
        return None
    p = _ISA_PLANS.get((plan_key(_S_HEAD, dst, src), m))    # TypeError: unhashable entry
    if p is None or type(p) is not ShufflePlan:
        return None
    if not (<ShufflePlan>p)._run(dst.data, src.data):
        return False
    return _ran((<ShufflePlan>p).rec)


def shuffle_key(dst, src, tuple mask):
    """The key :func:`hit_shuffle` looks up (the full path stores its plan under it)."""
    return (plan_key(_S_HEAD, dst, src), mask)


cdef class DmaSumPlan:
    """dma_compute (add) of one signature with 1 to 3 C-contiguous sources and a
    C-contiguous writeable dst: one fi_nki_dma_sum call."""
    cdef int ns, dfmt, disz
    cdef int fm[3]
    cdef int isz[3]
    cdef bint same[3]
    cdef Py_ssize_t n, dlo, dhi
    cdef Py_ssize_t slo[3]
    cdef Py_ssize_t shi[3]
    cdef readonly object rec, keep

    def __init__(self, dst, int dfmt, srcs, fmts, tuple rec, keep):
        cdef cnp.ndarray d = <cnp.ndarray>dst
        cdef cnp.ndarray a
        cdef int i
        self.ns = len(srcs)
        if not 1 <= self.ns <= 3 or len(fmts) != self.ns:
            raise ValueError("DmaSumPlan: 1 to 3 sources, one format each")
        if not (cnp.PyArray_IS_C_CONTIGUOUS(d) and cnp.PyArray_ISWRITEABLE(d)):
            raise ValueError("DmaSumPlan: dst must be a writeable C-contiguous array")
        self.n = cnp.PyArray_SIZE(d)
        self.dfmt = dfmt
        self.disz = cnp.PyArray_ITEMSIZE(d)
        self.dlo, self.dhi = 0, self.n * self.disz
        for i in range(self.ns):
            a = <cnp.ndarray>srcs[i]
            if not cnp.PyArray_IS_C_CONTIGUOUS(a) or cnp.PyArray_SIZE(a) != self.n:
                raise ValueError("DmaSumPlan: C-contiguous sources of dst's size")
            self.fm[i] = fmts[i]
            self.isz[i] = cnp.PyArray_ITEMSIZE(a)
            self.same[i] = self.isz[i] == self.disz
            self.slo[i], self.shi[i] = 0, self.n * self.isz[i]
        self.rec = rec
        self.keep = keep

    cdef bint _run(self, object dst, object srcs):
        cdef const void *sp[3]
        cdef Py_ssize_t pd = _addr(dst), ps
        cdef int i, nt
        for i in range(self.ns):
            ps = _addr(srcs[i].data)
            if not (self.same[i] and ps == pd) and not _apart(pd, self.dlo, self.dhi, ps,
                                                              self.slo[i], self.shi[i]):
                return False         # a source overlapping dst in another layout: copied
            sp[i] = <const void *>ps
        nt = _ISA_THREADS() if self.n >= (1 << 16) else 1
        with nogil:
            fi_nki_dma_sum(<void *>pd, self.dfmt, self.disz, sp, self.fm, self.isz, self.ns,
                           self.n, nt)
        return True


def dma_sum_key(dst, srcs, reduce_op):
    """The key :func:`hit_dma_sum` looks up for dma_compute(dst, srcs, reduce_op) with 1
    to 3 sources and no other option."""
    cdef int n = len(srcs)
    if n == 1:
        return plan_key((_C_NAME, reduce_op), dst, srcs[0])
    if n == 2:
        return plan_key((_C_NAME, reduce_op), dst, srcs[0], srcs[1])
    return plan_key((_C_NAME, reduce_op), dst, srcs[0], srcs[1], srcs[2])


def hit_dma_sum(dst, srcs, reduce_op):
    """dma_compute with 1 to 3 sources and no other option through its plan (returns as
    :func:`hit_transpose`)."""
    p = _ISA_PLANS.get(dma_sum_key(dst, srcs, reduce_op))
    if p is None or type(p) is not DmaSumPlan:
        return None
    if not (<DmaSumPlan>p)._run(dst.data, srcs):
        return False
    return _ran((<DmaSumPlan>p).rec)


# ---- issue 15: NkiTensor.__getitem__'s common form, compiled ----------------------------
cdef inline bint _slice_bound(object s, Py_ssize_t dflt, Py_ssize_t *out):
    """A slice field as plain_view takes it: None -> dflt; an int (not bool, not numpy)
    within +-2**62; anything else False (the general path)."""
    if s is None:
        out[0] = dflt
        return True
    if type(s) is not int or not -(1 << 62) < s < (1 << 62):
        return False
    out[0] = s
    return True


def plain_view(cnp.ndarray d, key, bint ints=True):
    """fastisa.nki.tensor._plain_view_py's compiled twin (the same view or None):
    ``d[key]`` when ``key`` is an int, a slice or a tuple of them (ints and None as the
    slices' fields, positive steps) in range; on chip (``ints=False``) integers only on
    free dims and only while the view keeps at least two sliced dims."""
    cdef tuple kt
    if type(key) is tuple:
        kt = <tuple>key
    else:
        kt = (key,)
    cdef int nd = cnp.PyArray_NDIM(d), nk = len(kt), ax, nsl
    cdef Py_ssize_t dim, a, b, st, i
    cdef bint all_ints = True
    cdef object k
    if nk > nd:
        return None
    for ax in range(nk):
        k = kt[ax]
        dim = cnp.PyArray_DIMS(d)[ax]
        if type(k) is slice:
            all_ints = False
            s = (<slice>k).step
            if s is not None:
                if type(s) is not int:
                    return None
                st = s
                if st <= 0:
                    return None
            if not _slice_bound((<slice>k).start, 0, &a) or \
                    not _slice_bound((<slice>k).stop, dim, &b):
                return None
            if not (0 <= a <= b <= dim):
                return None
        elif type(k) is int and (ints or ax):
            if not -(1 << 62) < k < (1 << 62):
                return None
            i = k
            if not -dim <= i < dim:
                return None
        else:
            return None
    if not ints:
        nsl = nd - nk
        for ax in range(nk):
            nsl += type(kt[ax]) is slice
        if nsl < 2:
            return None
    return d[kt + (Ellipsis,)] if all_ints else d[kt]
