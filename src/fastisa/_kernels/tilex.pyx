# cython: language_level=3, boundscheck=False, wraparound=False
"""PTO tile kernel drivers, second set (csrc/fastisa/tilex.h): bitwise / remainder / power
binaries, ternaries (ADDC, fused multiply-add forms), compare, select, products, arg-reduce
and iota.  Operands as in fastisa._kernels.tile: (uint8 view of the 1-D buffer, fi_format
code, row stride, column stride), strides in elements.  The Python front-end (fastisa.pto)
has validated every shape, stride and dtype; these drivers do not re-check.
"""
from libc.stdint cimport int64_t, uint8_t


cdef extern from "tilex.h" nogil:
    ctypedef struct fi_tile_arg:
        void *p
        int fmt
        Py_ssize_t rs
        Py_ssize_t cs
    void fi_tx_binary(int op, fi_tile_arg d, fi_tile_arg a, fi_tile_arg b, int R, int C)
    void fi_tx_ternary(int op, fi_tile_arg d, fi_tile_arg a, fi_tile_arg b, fi_tile_arg c,
                       int R, int C)
    void fi_tx_cmp(int mode, uint8_t *m, fi_tile_arg a, fi_tile_arg b, int R, int C)
    void fi_tx_select(fi_tile_arg d, const uint8_t *m, fi_tile_arg a, fi_tile_arg b, int R, int C)
    void fi_tx_prod(int cols, fi_tile_arg d, fi_tile_arg s, int R, int C)
    void fi_tx_argreduce(int cols, int is_max, fi_tile_arg idx, int has_val, fi_tile_arg val,
                         fi_tile_arg s, int R, int C)
    void fi_tx_iota(fi_tile_arg d, int64_t start, int descending, int C)
    void fi_tx_cvt_sat(int mode, int sat, fi_tile_arg d, fi_tile_arg s, int R, int C)
    int FI_TX_AND, FI_TX_OR, FI_TX_XOR, FI_TX_SHL, FI_TX_SHR, FI_TX_REM, FI_TX_FMOD
    int FI_TX_PRELU, FI_TX_POW, FI_TX_SUBRELU, FI_TX_NOT
    int FI_T3_ADDC, FI_T3_SUBC, FI_T3_FMA, FI_T3_MULADD_R, FI_T3_MULADD_R_RELU

#: fi_tx_binary ops
BIN = {"AND": FI_TX_AND, "OR": FI_TX_OR, "XOR": FI_TX_XOR, "SHL": FI_TX_SHL, "SHR": FI_TX_SHR,
       "REM": FI_TX_REM, "FMOD": FI_TX_FMOD, "PRELU": FI_TX_PRELU, "POW": FI_TX_POW,
       "SUBRELU": FI_TX_SUBRELU, "NOT": FI_TX_NOT}
#: fi_tx_ternary ops
TER = {"ADDC": FI_T3_ADDC, "SUBC": FI_T3_SUBC, "FMA": FI_T3_FMA, "MULADD_R": FI_T3_MULADD_R,
       "MULADD_R_RELU": FI_T3_MULADD_R_RELU}
#: fi_tx_cmp modes, in pto's CmpMode names
CMP = {"EQ": 0, "NE": 1, "LT": 2, "GT": 3, "GE": 4, "LE": 5, "EQ_EPS": 6, "NE_EPS": 7}


cdef inline fi_tile_arg _arg(const unsigned char[::1] buf, int fmt, Py_ssize_t rs,
                             Py_ssize_t cs):
    cdef fi_tile_arg a
    a.p = <void *>&buf[0]
    a.fmt = fmt
    a.rs = rs
    a.cs = cs
    return a


def binary(int op, unsigned char[::1] d, int dfmt, Py_ssize_t drs, Py_ssize_t dcs,
           const unsigned char[::1] a, int afmt, Py_ssize_t ars, Py_ssize_t acs,
           const unsigned char[::1] b, int bfmt, Py_ssize_t brs, Py_ssize_t bcs, int R, int C):
    """dst[r, c] = op(a[r, c], b[r, c]) for r < R, c < C."""
    cdef fi_tile_arg da = _arg(d, dfmt, drs, dcs)
    cdef fi_tile_arg aa = _arg(a, afmt, ars, acs)
    cdef fi_tile_arg ba = _arg(b, bfmt, brs, bcs)
    with nogil:
        fi_tx_binary(op, da, aa, ba, R, C)


def ternary(int op, unsigned char[::1] d, int dfmt, Py_ssize_t drs, Py_ssize_t dcs,
            const unsigned char[::1] a, int afmt, Py_ssize_t ars, Py_ssize_t acs,
            const unsigned char[::1] b, int bfmt, Py_ssize_t brs, Py_ssize_t bcs,
            const unsigned char[::1] c, int cfmt, Py_ssize_t crs, Py_ssize_t ccs, int R, int C):
    """dst[r, c] = op(a[r, c], b[r, c], c[r, c]) for r < R, c < C."""
    cdef fi_tile_arg da = _arg(d, dfmt, drs, dcs)
    cdef fi_tile_arg aa = _arg(a, afmt, ars, acs)
    cdef fi_tile_arg ba = _arg(b, bfmt, brs, bcs)
    cdef fi_tile_arg ca = _arg(c, cfmt, crs, ccs)
    with nogil:
        fi_tx_ternary(op, da, aa, ba, ca, R, C)


def cmp(int mode, unsigned char[::1] m, const unsigned char[::1] a, int afmt, Py_ssize_t ars,
        Py_ssize_t acs, const unsigned char[::1] b, int bfmt, Py_ssize_t brs, Py_ssize_t bcs,
        int R, int C):
    """m[r * C + c] = a[r, c] mode b[r, c] (0/1 bytes; m holds at least R * C bytes)."""
    cdef fi_tile_arg aa = _arg(a, afmt, ars, acs)
    cdef fi_tile_arg ba = _arg(b, bfmt, brs, bcs)
    with nogil:
        fi_tx_cmp(mode, &m[0], aa, ba, R, C)


def select(unsigned char[::1] d, int dfmt, Py_ssize_t drs, Py_ssize_t dcs,
           const unsigned char[::1] m, const unsigned char[::1] a, int afmt, Py_ssize_t ars,
           Py_ssize_t acs, const unsigned char[::1] b, int bfmt, Py_ssize_t brs, Py_ssize_t bcs,
           int R, int C):
    """dst[r, c] = m[r * C + c] ? a[r, c] : b[r, c]."""
    cdef fi_tile_arg da = _arg(d, dfmt, drs, dcs)
    cdef fi_tile_arg aa = _arg(a, afmt, ars, acs)
    cdef fi_tile_arg ba = _arg(b, bfmt, brs, bcs)
    with nogil:
        fi_tx_select(da, &m[0], aa, ba, R, C)


def prod(int cols, unsigned char[::1] d, int dfmt, Py_ssize_t drs, Py_ssize_t dcs,
         const unsigned char[::1] s, int sfmt, Py_ssize_t srs, Py_ssize_t scs, int R, int C):
    """Row (cols=0) or column (cols=1) products of src's R x C region."""
    cdef fi_tile_arg da = _arg(d, dfmt, drs, dcs)
    cdef fi_tile_arg sa = _arg(s, sfmt, srs, scs)
    with nogil:
        fi_tx_prod(cols, da, sa, R, C)


def argreduce(int cols, int is_max, unsigned char[::1] i, int ifmt, Py_ssize_t irs,
              Py_ssize_t ics, v, int vfmt, Py_ssize_t vrs, Py_ssize_t vcs,
              const unsigned char[::1] s, int sfmt, Py_ssize_t srs, Py_ssize_t scs, int R, int C):
    """Index (and, when v is not None, value) of the first max/min of each row/column."""
    cdef fi_tile_arg ia = _arg(i, ifmt, irs, ics)
    cdef fi_tile_arg va = ia
    cdef fi_tile_arg sa = _arg(s, sfmt, srs, scs)
    cdef unsigned char[::1] vv
    cdef int has = 0
    if v is not None:
        vv = v
        va = _arg(vv, vfmt, vrs, vcs)
        has = 1
    with nogil:
        fi_tx_argreduce(cols, is_max, ia, has, va, sa, R, C)


def iota(unsigned char[::1] d, int dfmt, Py_ssize_t drs, Py_ssize_t dcs, int64_t start,
         int descending, int C):
    """dst[0, c] = start + c (start - c when descending), wrapping to the dtype."""
    cdef fi_tile_arg da = _arg(d, dfmt, drs, dcs)
    with nogil:
        fi_tx_iota(da, start, descending, C)


# ---- gather.h (TGATHER / TSCATTER / MGATHER / MSCATTER) ------------------------------
cdef extern from "gather.h" nogil:
    void fi_gx_gather(fi_tile_arg d, const char *src, const int64_t *off, int R, int C)
    void fi_gx_scatter(int op, int fmt, char *dst, const int64_t *off, fi_tile_arg s, int R,
                       int C)

    ctypedef struct fi_gx_map:
        int mode
        int64_t cap, scols, srs, scs, limit
    int fi_gx_gather_idx(fi_tile_arg d, const char *src, const fi_gx_map *m, fi_tile_arg ix,
                         int R, int C, int check, int64_t *bad)
    int fi_gx_scatter_idx(int op, int fmt, char *dst, const fi_gx_map *m, fi_tile_arg ix,
                          fi_tile_arg s, int R, int C, int64_t *bad)

#: fi_gx_map index modes
INDEX_MODES = {"undefined": 0, "zero": 1, "skip": 1, "clamp": 2, "wrap": 3}

#: fi_gx_scatter ops
SCATTER_OPS = {"none": 0, "add": 1, "max": 2, "min": 3}


def gather(unsigned char[::1] d, int dfmt, Py_ssize_t drs, Py_ssize_t dcs,
           const unsigned char[::1] src, const int64_t[::1] off, int R, int C):
    """dst[r, c] = src[off[r*C + c]] (0 when off < 0); offsets in elements, validated."""
    cdef fi_tile_arg da = _arg(d, dfmt, drs, dcs)
    with nogil:
        fi_gx_gather(da, <const char *>&src[0], &off[0], R, C)


def scatter(int op, int fmt, unsigned char[::1] dst, const int64_t[::1] off,
            const unsigned char[::1] s, int sfmt, Py_ssize_t srs, Py_ssize_t scs, int R, int C):
    """dst[off[r*C + c]] (op)= src[r, c] in row-major order (off < 0: skipped)."""
    cdef fi_tile_arg sa = _arg(s, sfmt, srs, scs)
    with nogil:
        fi_gx_scatter(op, fmt, <char *>&dst[0], &off[0], sa, R, C)


cdef inline fi_gx_map _map(int mode, int64_t cap, int64_t scols, int64_t srs, int64_t scs,
                           int64_t limit):
    cdef fi_gx_map m
    m.mode = mode
    m.cap = cap
    m.scols = scols
    m.srs = srs
    m.scs = scs
    m.limit = limit
    return m


def gather_idx(unsigned char[::1] d, int dfmt, Py_ssize_t drs, Py_ssize_t dcs,
               const unsigned char[::1] src, const unsigned char[::1] ix, int ifmt,
               Py_ssize_t irs, Py_ssize_t ics, int mode, int64_t cap, int64_t scols,
               int64_t srs, int64_t scs, int64_t limit, int R, int C, bint check):
    """dst[r, c] = src[offset(ix[r, c])] with the offsets mapped in C (gather.h); returns
    None, or the first index that is an error (nothing written then)."""
    cdef fi_tile_arg da = _arg(d, dfmt, drs, dcs)
    cdef fi_tile_arg ia = _arg(ix, ifmt, irs, ics)
    cdef fi_gx_map m = _map(mode, cap, scols, srs, scs, limit)
    cdef int64_t bad = 0
    cdef int rc
    with nogil:
        rc = fi_gx_gather_idx(da, <const char *>&src[0], &m, ia, R, C, check, &bad)
    return bad if rc else None


def scatter_idx(int op, int fmt, unsigned char[::1] dst, const unsigned char[::1] ix, int ifmt,
                Py_ssize_t irs, Py_ssize_t ics, const unsigned char[::1] s, int sfmt,
                Py_ssize_t srs, Py_ssize_t scs, int mode, int64_t cap, int64_t limit, int R,
                int C):
    """dst[offset(ix[r, c])] (op)= src[r, c] with offsets = the mapped index; returns None, or
    the first index that is an error (nothing written then)."""
    cdef fi_tile_arg ia = _arg(ix, ifmt, irs, ics)
    cdef fi_tile_arg sa = _arg(s, sfmt, srs, scs)
    cdef fi_gx_map m = _map(mode, cap, 0, 1, 1, limit)
    cdef int64_t bad = 0
    cdef int rc
    with nogil:
        rc = fi_gx_scatter_idx(op, fmt, <char *>&dst[0], &m, ia, sa, R, C, &bad)
    return bad if rc else None


# ---- sort.h (TSORT32 / TMRGSORT) -----------------------------------------------------
cdef extern from "sort.h" nogil:
    void fi_sort32(fi_tile_arg d, fi_tile_arg s, fi_tile_arg idx, int R, int C)
    int fi_sort_merge(int fmt, char *dst, const char *const *src, const int *n, int nl, int out,
                      int exhausted, int *done)


def sort32(unsigned char[::1] d, int dfmt, Py_ssize_t drs, Py_ssize_t dcs,
           const unsigned char[::1] s, int sfmt, Py_ssize_t srs, Py_ssize_t scs,
           const unsigned char[::1] i, int ifmt, Py_ssize_t irs, Py_ssize_t ics, int R, int C):
    """Sorts each row's 32-element blocks into 8-byte value-index structs."""
    cdef fi_tile_arg da = _arg(d, dfmt, drs, dcs)
    cdef fi_tile_arg sa = _arg(s, sfmt, srs, scs)
    cdef fi_tile_arg ia = _arg(i, ifmt, irs, ics)
    with nogil:
        fi_sort32(da, sa, ia, R, C)


def merge(int fmt, unsigned char[::1] dst, srcs, counts, int out, int exhausted):
    """Merges 2-4 struct lists (uint8 buffers holding counts[l] 8-byte structs) into dst;
    returns (structs written, [taken from each list])."""
    cdef const char *p[4]
    cdef int n[4]
    cdef int done[4]
    cdef int nl = len(srcs), l, w
    cdef const unsigned char[::1] v0, v1, v2, v3
    v0 = srcs[0]
    v1 = srcs[1]
    v2 = srcs[2] if nl > 2 else srcs[0]
    v3 = srcs[3] if nl > 3 else srcs[0]
    p[0] = <const char *>&v0[0]
    p[1] = <const char *>&v1[0]
    p[2] = <const char *>&v2[0]
    p[3] = <const char *>&v3[0]
    for l in range(4):
        n[l] = counts[l] if l < nl else 0
    with nogil:
        w = fi_sort_merge(fmt, <char *>&dst[0], p, n, nl, out, exhausted, done)
    return w, [done[0], done[1], done[2], done[3]][:nl]


def cvt_sat(int mode, int sat, unsigned char[::1] d, int dfmt, Py_ssize_t drs, Py_ssize_t dcs,
            const unsigned char[::1] s, int sfmt, Py_ssize_t srs, Py_ssize_t scs, int R, int C):
    """TCVT with an explicit SaturationMode (sat 1 = ON, 0 = OFF), the CPU simulator's result."""
    cdef fi_tile_arg da = _arg(d, dfmt, drs, dcs)
    cdef fi_tile_arg sa = _arg(s, sfmt, srs, scs)
    with nogil:
        fi_tx_cvt_sat(mode, sat, da, sa, R, C)
