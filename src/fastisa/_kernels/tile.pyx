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


# matmul15 branch: the float matmul's instruction set (tests force each path)
cdef extern from "tile.h" nogil:
    int fi_tile_set_mm_isa(int level)


def set_matmul_isa(int level=-1):
    """The instruction set of matmul's float path: -1 the best the CPU has (the default),
    0 the portable build, 1 AVX2 + FMA, 2 AVX-512F + FMA (B packed in 64-column panels);
    a level the CPU lacks is lowered to the best it has.  Returns the level now in use.
    Every level computes the same fma chains: the same bits."""
    return fi_tile_set_mm_isa(level)


def cvt(int mode, unsigned char[::1] d, int dfmt, Py_ssize_t drs, Py_ssize_t dcs,
        const unsigned char[::1] s, int sfmt, Py_ssize_t srs, Py_ssize_t scs, int R, int C):
    """dst[r, c] = round_mode(src[r, c]) converted to dst's format."""
    cdef fi_tile_arg da = _arg(d, dfmt, drs, dcs)
    cdef fi_tile_arg sa = _arg(s, sfmt, srs, scs)
    with nogil:
        fi_tile_cvt(mode, da, sa, R, C)


def set_threads(int n):
    """Split large tiles by rows over n threads of fastisa's worker pool (1 =
    single-threaded, the default).  Results never depend on n."""
    fi_tile_set_threads(n)


# speed15 branch: the float32 exp's code choice
from fastisa._kernels.capi cimport fi_tile_set_exp_simd


def set_exp_simd(bint on):
    """Let the float32 exp (TEXP, EXPDIF) use its AVX-512F code on CPUs that have it (True,
    the default) or always run the portable code (False); the two give the same bits (for
    tests comparing them).  Returns whether the AVX-512F code was in use before."""
    return bool(fi_tile_set_exp_simd(on))


# ---- speed family (issue 15): per-signature plans of the elementwise tile instructions --
# fastisa.pto._ops stores, per signature (the instruction and, per tile, its type, location,
# format, layout, valid shape and strides), a TilePlan after the full path has checked
# every rule; the hit functions below run it.  What depends on values is checked on every
# call: where the tiles are in memory (a source overlapping dst in another layout takes
# the full path, which copies it) and the scalar (converted, range-checked).
cimport cython
cimport numpy as cnp
import numpy as np
from cpython.object cimport PyObject
from libc.string cimport memcpy
from libc.math cimport fabs, isfinite

from fastisa._kernels.capi cimport use_shared_pool
cnp.import_array()
use_shared_pool()  # the shared worker pool

cdef object _TILE_CLASS = None
cdef dict _TPLANS = None
cdef list _THOOKS = None
cdef object _TACTIVE = None, _SCALAR = None, _REPLAY = None
cdef int _F32 = -1


def set_plan_env(tile_class, dict plans, list hooks, active, scalar_array, int f32_code,
                 replay):
    """The Tile class, the plan cache, fastisa.cost's hooks and active profiles, the
    full path's scalar conversion, the float32 format code and the Python function that
    passes a record to fastisa.cost.record while a profile is active."""
    global _TILE_CLASS, _TPLANS, _THOOKS, _TACTIVE, _SCALAR, _F32, _REPLAY
    _TILE_CLASS, _TPLANS, _THOOKS, _TACTIVE, _SCALAR, _F32, _REPLAY = (
        tile_class, plans, hooks, active, scalar_array, f32_code, replay)


cdef inline Py_ssize_t _oid(object o):
    return <Py_ssize_t><PyObject *>o


cdef extern from "Python.h":
    PyObject *PyDict_GetItemWithError(object d, object k) except? NULL

cdef tuple _TILE_ATTRS = ("loc", "format", "blayout", "_vr", "_vc", "_rs", "_cs", "_buf")


# ---- speed3 branch (issue 15): each Tile caches its signature part ------------------------
# A Tile's part of a plan key depends on seven attributes (location, format identity,
# layout, valid shape, strides).  The first key built for a tile reads them, interns the
# seven words as a _Part (one per distinct form, numbered, never freed) and stores it on
# the tile (TileBase.pk, a C field); TileBase.__setattr__ / __delattr__ drop it whenever
# one of those attributes (or dtype) changes, so the next key reads them again.  A plan key is
# then the head's identities and one word per operand.
cdef dict _PARTS = {}           # the seven words (bytes) -> their _Part
cdef Py_ssize_t _PARTS_MAX = 1 << 16


cdef class _Part:
    """The interned signature part of a tile's form (see tile_part)."""
    cdef readonly bytes words
    cdef readonly Py_ssize_t serial

    def __reduce__(self):
        return (_part_of, (self.words,))


def _part_of(bytes words):
    """The _Part of ``words`` (unpickling and copies re-intern; None past the cap)."""
    return _intern(words)


cdef object _intern(bytes words):
    o = _PARTS.get(words)
    if o is not None:
        return o
    if len(_PARTS) >= _PARTS_MAX:
        return None
    cdef _Part p = _Part.__new__(_Part)
    p.words = words
    p.serial = len(_PARTS) + 1
    _PARTS[words] = p
    return p


cdef Py_ssize_t _tile_word(object t) except -2:
    """The key word of a Tile (odd: 2 * serial + 1 of its interned part), 0 when it misses
    one of the seven attributes or the interning table is full (no plan)."""
    cdef PyObject *v
    cdef Py_ssize_t ww[7]
    cdef int i
    cdef TileBase tb = <TileBase>t
    if tb.pk is not None:
        return 2 * (<_Part>tb.pk).serial + 1
    d = t.__dict__
    for i in range(7):
        v = PyDict_GetItemWithError(d, _TILE_ATTRS[i])
        if v is NULL:
            return 0
        if i == 1:
            ww[i] = <Py_ssize_t>v
        else:
            ww[i] = <Py_ssize_t>(<object>v)
    p = _intern((<char *>ww)[:7 * sizeof(Py_ssize_t)])
    if p is None:
        return 0
    tb.pk = p
    return 2 * (<_Part>p).serial + 1


cdef extern from "Python.h":
    int PyObject_GenericSetAttr(object o, object name, PyObject *value) except -1

cdef frozenset _SIG_ATTRS = frozenset(("loc", "format", "dtype", "blayout", "_vr", "_vc",
                                       "_rs", "_cs"))


@cython.auto_pickle(False)
cdef class TileBase:
    """The base class of fastisa.pto.Tile: holds the tile's cached signature part (never
    pickled or copied: a copy interns its own), and drops it whenever an attribute it
    depends on (loc, format, dtype, blayout, the valid shape, the strides) is set or
    deleted.  Other attribute writes are object's.  In C (a type slot)."""

    cdef object pk

    def __setattr__(self, name, value):
        if name in _SIG_ATTRS:
            self.pk = None
        PyObject_GenericSetAttr(self, name, <PyObject *>value)

    def __delattr__(self, name):
        if name in _SIG_ATTRS:
            self.pk = None
        PyObject_GenericSetAttr(self, name, NULL)

    def __reduce_ex__(self, protocol):
        # copy / deepcopy / pickle: the instance's __dict__, the cached part left behind
        return (_new_tile, (type(self),), self.__dict__.copy())


def _new_tile(cls):
    """An empty instance of a TileBase subclass (copies and unpickling fill __dict__)."""
    return cls.__new__(cls)


def tile_part(t):
    """The interned signature part of Tile ``t`` (cached on it), or None (see tile_key)."""
    if type(t) is not _TILE_CLASS or _tile_word(t) == 0:
        return None
    return (<TileBase>t).pk


def cached_part(t):
    """The part cached on TileBase ``t`` now (None: dropped or never computed)."""
    return (<TileBase?>t).pk


cdef inline int _put_tile(Py_ssize_t *w, int n, object t) except -2:
    """Append an operand's signature word to w[n:] (a Tile's part, anything else's type,
    an even address); -1 when a Tile has no part."""
    if type(t) is not _TILE_CLASS:
        w[n] = _oid(type(t))
        return n + 1
    w[n] = _tile_word(t)
    if w[n] == 0:
        return -1
    return n + 1


def tile_key(tuple head, a, b=None, c=None):
    """The signature of one call as bytes: the objects of ``head`` (the instruction name and
    options, by identity), then per operand a Tile's interned signature part (location,
    format identity, layout, valid shape, strides; cached on the tile until one of them
    changes), anything else's type.  A plan holds the objects whose identities the key
    uses; parts are never freed."""
    cdef Py_ssize_t w[24]
    cdef int n = 0, i
    if len(head) > 16:
        raise TypeError("tile_key: head too long")
    for i in range(len(head)):
        w[n] = _oid(head[i])
        n += 1
    n = _put_tile(w, n, a)
    if n >= 0:
        n = _put_tile(w, n, b)
    if n >= 0:
        n = _put_tile(w, n, c)
    if n < 0:
        return None
    return (<char *>w)[:n * sizeof(Py_ssize_t)]


cdef class TilePlan:
    """One signature of a unary (nsrc 1), binary (2) or tile-scalar (3: src and a scalar,
    ``rev`` puts the scalar first) instruction."""

    cdef int op, nsrc, rev, R, C, dfmt, sfmt[2]
    cdef Py_ssize_t drs, dcs, srs[2], scs[2]
    cdef bint same[2]
    cdef object rec, keep

    def __init__(self, int op, int nsrc, int rev, int R, int C, dst, srcs, tuple rec, keep):
        cdef int i
        self.op, self.nsrc, self.rev, self.R, self.C = op, nsrc, rev, R, C
        self.dfmt = dst.format.code
        self.drs, self.dcs = dst._rs, dst._cs
        for i in range(len(srcs)):
            s = srcs[i]
            self.sfmt[i] = s.format.code
            self.srs[i], self.scs[i] = s._rs, s._cs
            self.same[i] = (s.dtype == dst.dtype and s._rs == dst._rs and s._cs == dst._cs)
        self.rec = rec
        self.keep = keep

    @property
    def record(self):
        return self.rec


cdef inline bint _buf_of(object t, Py_ssize_t *p, Py_ssize_t *n):
    b = t._buf
    if type(b) is not np.ndarray:
        return False
    cdef cnp.ndarray a = <cnp.ndarray>b
    if not cnp.PyArray_IS_C_CONTIGUOUS(a):
        return False
    p[0] = <Py_ssize_t>cnp.PyArray_DATA(a)
    n[0] = cnp.PyArray_NBYTES(a)
    return True


cdef inline bint _clash(Py_ssize_t dp, Py_ssize_t dn, Py_ssize_t sp, Py_ssize_t sn, bint same):
    """The full path would copy the source: it shares dst's bytes and is not dst itself."""
    if dp + dn <= sp or sp + sn <= dp:
        return False
    return not (same and sp == dp)


# ---- speed2 branch (issue 15): fastisa.cost.record_idle, inlined for the plan hit path ----
from fastisa import cost as _fi_cost
from fastisa._kernels.span import idle_registry as _idle_registry
from fastisa._kernels.idle cimport record_idle as _record_idle

cdef list _I_HOOKS = _fi_cost.RECORD_HOOKS
cdef object _I_ACTIVE = _fi_cost._ACTIVE
cdef dict _I_IDLE = _idle_registry()


cdef inline bint _record_idle_c() except -1:
    return _record_idle(_I_HOOKS, _I_ACTIVE, _I_IDLE)



cdef bint _tdone(TilePlan p, dst, bint idle) except -1:
    if idle or _record_idle_c():
        return True     # no profile, every record hook idle: cost.record would do nothing
    eng, instr, cyc = p.rec
    # cost.record from a Python frame shaped like the full path's _record: the record
    # hooks and the profile read the operands from the frames above it
    _REPLAY(dst, eng, instr, cyc)
    return True


def hit_idle(tuple head, dst, a, b=None, scalar=None):
    """:func:`hit` for a caller whose frame is not the one the record hooks expect: runs
    the plan only while cost recording would do nothing (fastisa.cost.record_idle), and
    returns False otherwise (the caller then takes its usual path)."""
    if not _record_idle_c():
        return False
    return _hit(head, dst, a, b, scalar, True)


def hit(tuple head, dst, a, b=None, scalar=None):
    """Run the plan of ``head[0](dst, a[, b])`` (b None and ``scalar`` given for tile-scalar
    instructions), its cost record included.  False: no plan for the signature, or this
    call needs the full path (nothing was written)."""
    return _hit(head, dst, a, b, scalar, False)


# speed3 branch: plan hits on tiles of fewer elements run their kernel holding the GIL
# (the kernels are nogil C either way; releasing and taking the GIL back costs about as
# much as a 16x16 add, and a tile this small never uses the kernels' threads)
cdef enum:
    _NOGIL_MIN = 4096


cdef object _hit(tuple head, dst, a, b, scalar, bint idle):
    key = tile_key(head, dst, a, b)
    if key is None:
        return False
    pl = _TPLANS.get(key)
    if pl is None:
        return False
    cdef TilePlan p = <TilePlan>pl
    cdef Py_ssize_t dp, dn, ap, an, bp = 0, bn = 0
    cdef fi_tile_arg da, aa, ba
    cdef double v
    cdef float f
    cdef unsigned char sbuf[8]
    cdef cnp.ndarray arr
    if not _buf_of(dst, &dp, &dn) or not _buf_of(a, &ap, &an):
        return False
    if _clash(dp, dn, ap, an, p.same[0]):
        return False
    if p.nsrc == 2:
        if not _buf_of(b, &bp, &bn) or _clash(dp, dn, bp, bn, p.same[1]):
            return False
    da.p = <void *>dp
    da.fmt = p.dfmt
    da.rs = p.drs
    da.cs = p.dcs
    aa.p = <void *>ap
    aa.fmt = p.sfmt[0]
    aa.rs = p.srs[0]
    aa.cs = p.scs[0]
    if p.nsrc == 1:
        if p.R and p.C:
            if p.R * p.C < _NOGIL_MIN:      # a small tile: releasing the GIL costs more
                fi_tile_unary(p.op, da, aa, p.R, p.C)
            else:
                with nogil:
                    fi_tile_unary(p.op, da, aa, p.R, p.C)
        return _tdone(p, dst, idle)
    if p.nsrc == 2:
        ba.p = <void *>bp
        ba.fmt = p.sfmt[1]
        ba.rs = p.srs[1]
        ba.cs = p.scs[1]
    else:
        ts = type(scalar)
        if p.sfmt[0] == _F32 and (ts is float or ts is np.float32 or ts is np.float64 or
                                  (ts is int and -16777216 <= scalar <= 16777216)):
            v = <double>scalar
            if isfinite(v) and fabs(v) > 3.4028234663852886e38:
                return False            # numpy's conversion overflows (and warns)
            f = <float>v
            memcpy(sbuf, &f, 4)
        else:                           # the full path's conversion and checks
            arr = <cnp.ndarray>_SCALAR(head[0], "scalar", scalar, a.format)
            memcpy(sbuf, cnp.PyArray_DATA(arr), cnp.PyArray_ITEMSIZE(arr))
        ba.p = <void *>sbuf
        ba.fmt = p.sfmt[0]
        ba.rs = 0
        ba.cs = 0
        if p.rev:
            aa, ba = ba, aa
    if p.R and p.C:
        if p.R * p.C < _NOGIL_MIN:
            fi_tile_binary(p.op, da, aa, 1 << 30, ba, 1 << 30, p.R, p.C)
        else:
            with nogil:
                fi_tile_binary(p.op, da, aa, 1 << 30, ba, 1 << 30, p.R, p.C)
    return _tdone(p, dst, idle)
