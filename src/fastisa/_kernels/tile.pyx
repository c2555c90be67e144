# cython: language_level=3, boundscheck=False, wraparound=False
"""PTO tile kernel drivers (csrc/fastisa/tile.h): one nogil call per instruction.

Each operand is passed as (uint8 view of its 1-D buffer, fi_format code, row stride, column
stride), strides in elements.  The Python front-end (fastisa.pto) has validated every
shape, stride and dtype; these drivers do not re-check.
"""
from fastisa._kernels.capi cimport (
    fi_tile_arg, fi_tile_unary, fi_tile_binary, fi_tile_rowreduce, fi_tile_colreduce,
    fi_tile_matmul, fi_tile_cvt, fi_tile_init, fi_tile_set_threads,
    FI_TOP_COPY, FI_TOP_ABS, FI_TOP_NEG, FI_TOP_RELU, FI_TOP_RECIP, FI_TOP_EXP, FI_TOP_LOG,
    FI_TOP_SQRT, FI_TOP_RSQRT, FI_TOP_ADD, FI_TOP_SUB, FI_TOP_MUL, FI_TOP_DIV, FI_TOP_MAX,
    FI_TOP_MIN, FI_TOP_EXPDIF, FI_TOP_SUM, FI_TILE_CHUNK)

OP_COPY = FI_TOP_COPY
OP_ABS = FI_TOP_ABS
OP_NEG = FI_TOP_NEG
OP_RELU = FI_TOP_RELU
OP_RECIP = FI_TOP_RECIP
OP_EXP = FI_TOP_EXP
OP_LOG = FI_TOP_LOG
OP_SQRT = FI_TOP_SQRT
OP_RSQRT = FI_TOP_RSQRT
OP_ADD = FI_TOP_ADD
OP_SUB = FI_TOP_SUB
OP_MUL = FI_TOP_MUL
OP_DIV = FI_TOP_DIV
OP_MAX = FI_TOP_MAX
OP_MIN = FI_TOP_MIN
OP_EXPDIF = FI_TOP_EXPDIF
OP_SUM = FI_TOP_SUM
fi_tile_init()   # fills the float16 exp table once, before any kernel runs

#: Largest column modulus a wrapping row-expand operand may have.
CHUNK = FI_TILE_CHUNK


cdef inline fi_tile_arg _arg(const unsigned char[::1] buf, int fmt, Py_ssize_t rs,
                             Py_ssize_t cs):
    cdef fi_tile_arg a
    a.p = <void *>&buf[0]
    a.fmt = fmt
    a.rs = rs
    a.cs = cs
    return a


def unary(int op, unsigned char[::1] d, int dfmt, Py_ssize_t drs, Py_ssize_t dcs,
          const unsigned char[::1] s, int sfmt, Py_ssize_t srs, Py_ssize_t scs, int R, int C):
    """dst[r, c] = op(src[r, c]) for r < R, c < C."""
    cdef fi_tile_arg da = _arg(d, dfmt, drs, dcs)
    cdef fi_tile_arg sa = _arg(s, sfmt, srs, scs)
    with nogil:
        fi_tile_unary(op, da, sa, R, C)


def binary(int op, unsigned char[::1] d, int dfmt, Py_ssize_t drs, Py_ssize_t dcs,
           const unsigned char[::1] a, int afmt, Py_ssize_t ars, Py_ssize_t acs, int avc,
           const unsigned char[::1] b, int bfmt, Py_ssize_t brs, Py_ssize_t bcs, int bvc,
           int R, int C):
    """dst[r, c] = op(a[r, c % avc], b[r, c % bvc]) for r < R, c < C."""
    cdef fi_tile_arg da = _arg(d, dfmt, drs, dcs)
    cdef fi_tile_arg aa = _arg(a, afmt, ars, acs)
    cdef fi_tile_arg ba = _arg(b, bfmt, brs, bcs)
    with nogil:
        fi_tile_binary(op, da, aa, avc, ba, bvc, R, C)


def rowreduce(int op, unsigned char[::1] d, int dfmt, Py_ssize_t drs,
              const unsigned char[::1] s, int sfmt, Py_ssize_t srs, Py_ssize_t scs, int R, int C):
    """dst[r * drs] = fold_{c < C} op(src[r, c]) for r < R."""
    cdef fi_tile_arg da = _arg(d, dfmt, drs, 0)
    cdef fi_tile_arg sa = _arg(s, sfmt, srs, scs)
    with nogil:
        fi_tile_rowreduce(op, da, sa, R, C)


def colreduce(int op, unsigned char[::1] d, int dfmt, Py_ssize_t dcs,
              const unsigned char[::1] s, int sfmt, Py_ssize_t srs, Py_ssize_t scs, int R, int C):
    """dst[c * dcs] = fold_{r < R} op(src[r, c]) for c < C."""
    cdef fi_tile_arg da = _arg(d, dfmt, 0, dcs)
    cdef fi_tile_arg sa = _arg(s, sfmt, srs, scs)
    with nogil:
        fi_tile_colreduce(op, da, sa, R, C)


def matmul(unsigned char[::1] d, int dfmt, Py_ssize_t drs, Py_ssize_t dcs,
           const unsigned char[::1] a, int afmt, Py_ssize_t ars, Py_ssize_t acs,
           const unsigned char[::1] b, int bfmt, Py_ssize_t brs, Py_ssize_t bcs,
           int M, int K, int N, c=None, int cfmt=0, Py_ssize_t crs=0, Py_ssize_t ccs=0):
    """dst[i, j] = c[i, j] (or 0) + sum_k a[i, k] * b[k, j] (float32 fma accumulation, or
    exact integers).  ``c``: optional uint8 view of the initial accumulator (rs may be 0)."""
    cdef fi_tile_arg da = _arg(d, dfmt, drs, dcs)
    cdef fi_tile_arg aa = _arg(a, afmt, ars, acs)
    cdef fi_tile_arg ba = _arg(b, bfmt, brs, bcs)
    cdef fi_tile_arg ca = da
    cdef int has = 0
    cdef const unsigned char[::1] cv
    if c is not None:
        cv = c
        ca = _arg(cv, cfmt, crs, ccs)
        has = 1
    with nogil:
        fi_tile_matmul(da, aa, ba, ca, has, M, K, N)


def cvt(int mode, unsigned char[::1] d, int dfmt, Py_ssize_t drs, Py_ssize_t dcs,
        const unsigned char[::1] s, int sfmt, Py_ssize_t srs, Py_ssize_t scs, int R, int C):
    """dst[r, c] = round_mode(src[r, c]) converted to dst's format."""
    cdef fi_tile_arg da = _arg(d, dfmt, drs, dcs)
    cdef fi_tile_arg sa = _arg(s, sfmt, srs, scs)
    with nogil:
        fi_tile_cvt(mode, da, sa, R, C)


def set_threads(int n):
    """Split large tiles by rows over n OpenMP threads (1 = single-threaded, the default).
    Results never depend on n; without OpenMP at build time n is ignored."""
    fi_tile_set_threads(n)
