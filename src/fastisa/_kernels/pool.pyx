# cython: language_level=3, boundscheck=False, wraparound=False
"""Recycled storage for new simulated tensors (issue 15): a numpy memory handler
(``PyDataMem_Handler``, NEP 49) that keeps the memory of freed arrays for the next array
of the same byte size.

A kernel that allocates its tiles inside a loop (``nl.ndarray`` per iteration, as the
public NKI samples do) otherwise gets fresh pages from the OS for each large tile while
others are live: glibc returns the memory of large freed blocks to the OS, and touching
a fresh page costs a page fault, about ten times the fill itself.  Arrays made by
:func:`empty` are ordinary numpy arrays that own their memory (``base`` is None, views
work as usual); when numpy frees one, its block is kept here (at most :func:`capacity`
bytes in all, blocks of at least 64 KiB) and handed to the next :func:`empty` of that
exact byte size.  Contents are not cleared: the caller fills every byte
(``fastisa.nki.language._filled`` writes the documented sentinel over the whole array).

:func:`filled` (speed15b branch) is :func:`empty` plus the fill, in C, and skips the fill
when the block it got was freed still holding exactly that fill (see the block header
below): ``nl.ndarray`` allocates through it.

The handler is active only inside :func:`empty` and :func:`filled` (numpy keeps it in a context variable and
each array remembers the handler that allocated it, so arrays made elsewhere are
untouched).  Numpy calls the handler with the GIL held; a lock guards the pool anyway.
"""
from libc.stdint cimport uint8_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc, realloc
from libc.string cimport strncpy
from cpython.pycapsule cimport PyCapsule_New
from cpython.pythread cimport (PyThread_type_lock, PyThread_allocate_lock,
                               PyThread_acquire_lock, PyThread_release_lock, WAIT_LOCK)
cimport numpy as cnp
import numpy as np
import os
from fastisa._kernels.capi cimport use_shared_pool

cnp.import_array()
use_shared_pool()  # the shared worker pool

cdef extern from "numpy/arrayobject.h":
    ctypedef struct PyDataMemAllocator:
        void *ctx
        void *(*malloc)(void *ctx, size_t size) noexcept nogil
        void *(*calloc)(void *ctx, size_t nelem, size_t elsize) noexcept nogil
        void *(*realloc)(void *ctx, void *ptr, size_t new_size) noexcept nogil
        void (*free)(void *ctx, void *ptr, size_t size) noexcept nogil
    ctypedef struct PyDataMem_Handler:
        char name[127]
        uint8_t version
        PyDataMemAllocator allocator
    object PyDataMem_SetHandler(object handler)

cdef enum:
    _NSIZES = 32        # distinct byte sizes kept
    _DEPTH = 64         # blocks kept per size
    _MIN_BYTES = 65536  # smaller arrays: numpy's own allocator is fast enough

cdef size_t _size[_NSIZES]
cdef int _count[_NSIZES]
cdef void *_blocks[_NSIZES][_DEPTH]
cdef size_t _pooled = 0
cdef size_t _cap = 256 * 1024 * 1024
cdef PyThread_type_lock _lock = PyThread_allocate_lock()
cdef PyDataMem_Handler _handler

_env = os.environ.get("FASTISA_POOL_BYTES", "").strip()
if _env.isdigit():
    _cap = <size_t>int(_env)


cdef extern from *:
    """
    #if defined(__linux__)
    #include <sys/mman.h>
    #endif
    /* as numpy's default allocator does for blocks of >= 4 MiB: ask Linux for transparent
     * huge pages over the block's whole pages (fewer page faults and TLB misses) */
    static void fi_pool_hugepages(void *p, size_t size) {
    #if defined(__linux__) && defined(MADV_HUGEPAGE)
        size_t off = 4096u - ((size_t)p % 4096u);
        if (off == 4096u) off = 0;
        if (size > off) madvise((char *)p + off, (size - off) & ~(size_t)4095u, MADV_HUGEPAGE);
    #else
        (void)p; (void)size;
    #endif
    }
    /* size bytes on a 2 MiB boundary (free() releases them): 0, else nonzero */
    static int fi_pool_aligned_alloc2m(void **p, size_t size) {
        return posix_memalign(p, (size_t)1 << 21, size);
    }
    """
    void _hugepages "fi_pool_hugepages"(void *p, size_t size) nogil
    int _aligned_alloc2m "fi_pool_aligned_alloc2m"(void **p, size_t size) nogil

cdef size_t _HUGE_MIN = 1 << 20


# speed15b branch (issue 15): every block of this handler carries a 64-byte header in
# front of the memory numpy sees.  ``filled`` sets it when it hands out a block whose every
# byte it knows to hold a fill pattern (``_H_ARMED`` and the pattern, replicated to 8
# bytes).  When numpy frees such a block it is compared with the pattern, from the front
# up to the first 4 KiB chunk that differs and from the back down to the last one (a read
# pass over the bytes still holding the fill, about half the cost of writing them), and it
# is kept as a block of known pattern with that *dirty range* in its header: the next
# ``filled`` of that size and pattern writes the fill over the dirty range only (nothing
# for a block that still holds it everywhere, the whole block for one written from its
# first chunk to its last).
cdef enum:
    _HDR = 64
    _H_ARMED = 1

ctypedef struct _hdr_t:
    uint64_t pattern
    uint32_t flags
    size_t lo           # the dirty range [lo, hi) of an armed block (bytes; lo == hi: clean)
    size_t hi
    int nthreads        # the threads filled() was given: also the dirty-range check's

cdef inline _hdr_t *_hdr(void *p) noexcept nogil:
    return <_hdr_t *>(<char *>p - _HDR)


cdef uint64_t _clean_pat[_NSIZES]    # the pattern of a slot's blocks when _clean[i]
cdef bint _clean[_NSIZES]
cdef bint _want = False              # filled() is allocating: prefer a clean block of ...
cdef uint64_t _want_pat = 0          # ... this pattern (a hint; filled() checks the header)


cdef inline int _take(size_t size, int clean, uint64_t pat) noexcept nogil:
    """Index of a slot with a block of ``size`` (clean 1: clean with ``pat``; 0: dirty;
    -1: either, dirty first), or -1.  Caller holds the lock."""
    cdef int i, alt = -1
    for i in range(_NSIZES):
        if _count[i] and _size[i] == size:
            if clean == 1:
                if _clean[i] and _clean_pat[i] == pat:
                    return i
            elif not _clean[i]:
                return i
            elif clean == -1 and alt < 0:
                alt = i
    return alt


cdef void *_p_malloc(void *ctx, size_t size) noexcept nogil:
    global _pooled
    cdef int i
    cdef void *p = NULL
    cdef char *raw
    cdef bint clean = False
    if size >= _MIN_BYTES:
        PyThread_acquire_lock(_lock, WAIT_LOCK)
        i = _take(size, 1, _want_pat) if _want else -1
        if i < 0:
            i = _take(size, -1, 0)       # a dirty block first (clean ones serve filled())
        if i >= 0:
            _count[i] -= 1
            p = _blocks[i][_count[i]]
            clean = _clean[i]
            _pooled -= size
        PyThread_release_lock(_lock)
        if p != NULL:
            if not (clean and _want):    # a clean block for filled() keeps its verified
                _hdr(p).flags = 0        # header; anyone else overwrites it anyway
            return p
    if size >= _HUGE_MIN:
        # a block of 1 MiB or more starts on a 2 MiB boundary, so transparent huge pages
        # cover it from its first byte (a kernel's strided reads of a large SBUF tensor
        # touch one 4 KiB page per partition row: TLB misses on every row otherwise)
        if _aligned_alloc2m(<void **>&raw, size + _HDR) != 0:
            return NULL
        _hugepages(raw, size + _HDR)
    else:
        raw = <char *>malloc(size + _HDR)
        if raw == NULL:
            return NULL
    p = raw + _HDR
    _hdr(p).flags = 0
    return p


cdef void *_p_calloc(void *ctx, size_t nelem, size_t elsize) noexcept nogil:
    cdef size_t n = (nelem if nelem else 1) * (elsize if elsize else 1)
    cdef char *raw = <char *>calloc(n + _HDR, 1)
    if raw == NULL:
        return NULL
    return raw + _HDR


cdef void *_p_realloc(void *ctx, void *ptr, size_t new_size) noexcept nogil:
    cdef char *raw
    if ptr == NULL:
        return _p_malloc(ctx, new_size)
    raw = <char *>realloc(<char *>ptr - _HDR, new_size + _HDR)
    if raw == NULL:
        return NULL
    (<_hdr_t *>raw).flags = 0
    return raw + _HDR


cdef extern from *:
    """
    #include <stdint.h>
    #include <string.h>
    /* the dirty range of p[0..n) against the 8-byte little-endian pattern repeated from
     * p: [*lo, *hi) spans every 4 KiB chunk holding a byte that differs (*lo == *hi == 0
     * when none does; *lo a multiple of 8).  Chunks are compared by a branch-free OR of
     * differences the compiler vectorises, from the front up to the first dirty chunk and
     * from the back down to the last; compiled for AVX-512F and AVX2 too and chosen at run
     * time (reading is bound by the vector width here: 1 MiB in cache takes 20 us with
     * SSE2, 10 us with AVX-512) */
    #define FI_POOL_CHUNK 512                     /* words: 4 KiB */
    #define FI_POOL_DIRTY_BODY                                                      \
        const uint64_t *w = (const uint64_t *)p;                                    \
        const unsigned char *c = (const unsigned char *)p;                          \
        size_t m = n / 8, nch = (m + FI_POOL_CHUNK - 1) / FI_POOL_CHUNK, k, first = nch;     \
        int tail = 0;                                                               \
        for (size_t b = 8 * m; b < n; b++)                                          \
            tail |= c[b] != (unsigned char)(pat >> (8 * (b % 8)));                  \
        for (k = 0; k < nch; k++) {                                                 \
            size_t i0 = k * FI_POOL_CHUNK, i1 = i0 + FI_POOL_CHUNK < m ? i0 + FI_POOL_CHUNK : m; \
            uint64_t acc = 0;                                                       \
            for (size_t i = i0; i < i1; i++) acc |= w[i] ^ pat;                     \
            if (acc) { first = k; break; }                                          \
        }                                                                           \
        if (first == nch) {                                                         \
            *lo = tail ? 8 * m : 0;                                                 \
            *hi = tail ? n : 0;                                                     \
            return;                                                                 \
        }                                                                           \
        *lo = first * FI_POOL_CHUNK * 8;                                            \
        if (tail) { *hi = n; return; }                                              \
        for (k = nch; k-- > first;) {                                               \
            size_t i0 = k * FI_POOL_CHUNK, i1 = i0 + FI_POOL_CHUNK < m ? i0 + FI_POOL_CHUNK : m; \
            uint64_t acc = 0;                                                       \
            for (size_t i = i0; i < i1; i++) acc |= w[i] ^ pat;                     \
            if (acc) { *hi = 8 * i1; return; }                                      \
        }                                                                           \
        *hi = 8 * m;
    static void fi_pool_dirty_base(const void *p, size_t n, uint64_t pat, size_t *lo,
                                   size_t *hi) { FI_POOL_DIRTY_BODY }
    #if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    __attribute__((target("avx2")))
    static void fi_pool_dirty_avx2(const void *p, size_t n, uint64_t pat, size_t *lo,
                                   size_t *hi) { FI_POOL_DIRTY_BODY }
    __attribute__((target("avx512f")))
    static void fi_pool_dirty_avx512(const void *p, size_t n, uint64_t pat, size_t *lo,
                                     size_t *hi) { FI_POOL_DIRTY_BODY }
    #endif
    static void (*fi_pool_dirty_impl)(const void *, size_t, uint64_t, size_t *, size_t *) = 0;
    static void fi_pool_dirty(const void *p, size_t n, uint64_t pat, size_t *lo, size_t *hi) {
        if (!fi_pool_dirty_impl) {
            fi_pool_dirty_impl = fi_pool_dirty_base;
    #if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
            __builtin_cpu_init();
            if (__builtin_cpu_supports("avx512f")) fi_pool_dirty_impl = fi_pool_dirty_avx512;
            else if (__builtin_cpu_supports("avx2")) fi_pool_dirty_impl = fi_pool_dirty_avx2;
    #endif
        }
        fi_pool_dirty_impl(p, n, pat, lo, hi);
    }
    /* the fill: whole 8-byte words (p is 16-byte aligned: numpy's data, the pool's blocks
     * after their 64-byte header) in a loop the compiler vectorises, compiled for AVX-512F
     * and AVX2 too and chosen at load time (1 MiB: 32 us with the 8-byte stores of the
     * baseline build, against np.full's 24 us) */
    #if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__)) && !defined(FASTISA_DEBUG)
    __attribute__((target_clones("avx512f", "avx2", "default")))
    #endif
    static void fi_pool_fill(void *p, size_t n, uint64_t pat) {
        unsigned char *c = (unsigned char *)p;
        uint64_t *w = (uint64_t *)p;
        size_t i = 0, m = n / 8;
        for (; i < m; i++) w[i] = pat;
        for (i = 8 * m; i < n; i++) c[i] = (unsigned char)(pat >> (8 * (i % 8)));
    }
    """
    void _dirty "fi_pool_dirty"(const void *p, size_t n, uint64_t pat, size_t *lo, size_t *hi) nogil

cdef extern from *:
    """
    #include "par.h"
    /* fills of >= 256 KiB over fastisa's worker pool: contiguous pieces, two per thread, on
     * 64-byte boundaries (every piece starts on a whole pattern word).  The pieces are the
     * pool's preferred split, as a threaded instruction's rows are: the tensor's first
     * half lands in the caller's cache and its second half in the worker's, where the
     * instruction that writes the tensor next will write them. */
    typedef struct { char *p; size_t n; uint64_t pat; int nt; } fi_pool_fill_job_t;
    static void fi_pool_fill_task(void *ctx, int t) {
        const fi_pool_fill_job_t *j = (const fi_pool_fill_job_t *)ctx;
        size_t a = t ? (j->n * (size_t)t / (size_t)j->nt) & ~(size_t)63 : 0;
        size_t b = t == j->nt - 1 ? j->n : (j->n * (size_t)(t + 1) / (size_t)j->nt) & ~(size_t)63;
        if (a < b) fi_pool_fill(j->p + a, b - a, j->pat);
    }
    static void fi_pool_fill_par(void *p, size_t n, uint64_t pat, int nt) {
        int T = nt == 1 ? 1 : fi_par_threads(nt);
        if (n < ((size_t)1 << 18) || T <= 1) { fi_pool_fill(p, n, pat); return; }
        fi_pool_fill_job_t job = {(char *)p, n, pat, 2 * T};
        fi_par_for(T, 2 * T, fi_pool_fill_task, &job);
    }
    /* the dirty range of a block of >= 256 KiB over the pool: pieces on 4 KiB chunk
     * boundaries, each task the range of its piece (a clean piece is read whole, a
     * written one from both ends), combined as the lowest lo / highest hi */
    typedef struct { const char *p; size_t n; uint64_t pat; int nt; size_t lo[128], hi[128]; }
        fi_pool_dirty_job_t;
    static void fi_pool_dirty_task(void *ctx, int t) {
        fi_pool_dirty_job_t *j = (fi_pool_dirty_job_t *)ctx;
        size_t nch = (j->n + 4095) / 4096;
        size_t a = nch * (size_t)t / (size_t)j->nt * 4096, b = nch * (size_t)(t + 1) / (size_t)j->nt * 4096;
        if (b > j->n) b = j->n;
        j->lo[t] = j->hi[t] = 0;
        if (a >= b) return;
        fi_pool_dirty(j->p + a, b - a, j->pat, &j->lo[t], &j->hi[t]);
        if (j->hi[t] > j->lo[t]) { j->lo[t] += a; j->hi[t] += a; }
    }
    static void fi_pool_dirty_par(const void *p, size_t n, uint64_t pat, int nt, size_t *lo,
                                  size_t *hi) {
        int T = nt == 1 ? 1 : fi_par_threads(nt);
        if (T > 64) T = 64;
        if (n < ((size_t)1 << 18) || T <= 1) { fi_pool_dirty(p, n, pat, lo, hi); return; }
        fi_pool_dirty_job_t job;
        job.p = (const char *)p; job.n = n; job.pat = pat; job.nt = 2 * T;
        fi_par_for(T, 2 * T, fi_pool_dirty_task, &job);
        size_t l = 0, h = 0;
        for (int t = 0; t < 2 * T; t++)
            if (job.hi[t] > job.lo[t]) {
                if (h == 0) l = job.lo[t];
                h = job.hi[t];
            }
        *lo = l;
        *hi = h;
    }
    """
    void _fill_par "fi_pool_fill_par"(void *p, size_t n, uint64_t pat, int nt) nogil
    void _dirty_par "fi_pool_dirty_par"(const void *p, size_t n, uint64_t pat, int nt, size_t *lo,
                                        size_t *hi) nogil
    void _fill "fi_pool_fill"(void *p, size_t n, uint64_t pat) nogil



cdef void _p_free(void *ctx, void *ptr, size_t size) noexcept nogil:
    global _pooled
    cdef int i, slot = -1
    cdef bint clean = False
    cdef uint64_t pat = 0
    if ptr == NULL:
        return
    if size >= _MIN_BYTES and _pooled + size <= _cap:
        if _hdr(ptr).flags & _H_ARMED:   # a block of known pattern: its dirty range
            pat = _hdr(ptr).pattern
            _dirty_par(ptr, size, pat, _hdr(ptr).nthreads, &_hdr(ptr).lo, &_hdr(ptr).hi)
            clean = True                 # kept with its header (armed, pattern, range)
        PyThread_acquire_lock(_lock, WAIT_LOCK)
        for i in range(_NSIZES):
            if _size[i] == size and _count[i] and _clean[i] == clean and \
                    (not clean or _clean_pat[i] == pat):
                slot = i
                break
            if slot < 0 and _count[i] == 0:
                slot = i                 # an empty slot, unless a later one has the size
        if slot >= 0 and _count[slot] < _DEPTH and _pooled + size <= _cap:
            _size[slot] = size
            _clean[slot] = clean
            _clean_pat[slot] = pat
            _blocks[slot][_count[slot]] = ptr
            _count[slot] += 1
            _pooled += size
            ptr = NULL
        PyThread_release_lock(_lock)
    if ptr != NULL:
        free(<char *>ptr - _HDR)


strncpy(_handler.name, b"fastisa_pool", 126)
_handler.version = 1
_handler.allocator.ctx = NULL
_handler.allocator.malloc = _p_malloc
_handler.allocator.calloc = _p_calloc
_handler.allocator.realloc = _p_realloc
_handler.allocator.free = _p_free
_HANDLER = PyCapsule_New(<void *>&_handler, b"mem_handler", NULL)


def empty(shape, dtype):
    """``np.empty(shape, dtype)`` whose memory comes from (and, once numpy frees the array,
    goes back to) the pool.  The contents are whatever the block held: fill it."""
    old = PyDataMem_SetHandler(_HANDLER)
    try:
        return np.empty(shape, dtype)
    finally:
        PyDataMem_SetHandler(old)


cdef object _NEW = np.empty


def filled(shape, dtype, uint64_t pattern, int threads=1):
    """``np.full(shape, v, dtype)`` for an unsigned-integer ``dtype`` of 1, 2, 4 or 8
    bytes, ``pattern`` being v's bytes repeated to 8 (little-endian: v * 0x0101... for one
    byte, v * 0x0001_0001_0001_0001 for two, ...); ``threads`` (0: every CPU) fill a block
    of >= 256 KiB in pieces over fastisa's worker pool.  Every element holds v when it is
    returned: a block of at least 64 KiB that was handed out filled with that pattern is
    refilled over the 4 KiB chunks that differed from it when numpy freed it (compared
    then: none for a block that still held it), any other block is filled whole."""
    cdef cnp.ndarray a
    cdef size_t nbytes
    cdef void *p
    cdef _hdr_t *h
    global _want, _want_pat
    old = PyDataMem_SetHandler(_HANDLER)
    _want, _want_pat = True, pattern
    try:
        a = <cnp.ndarray>_NEW(shape, dtype)
    finally:
        _want = False
        PyDataMem_SetHandler(old)
    nbytes = <size_t>cnp.PyArray_NBYTES(a)
    p = cnp.PyArray_DATA(a)
    if nbytes >= _MIN_BYTES and _hdr(p).flags & _H_ARMED and _hdr(p).pattern == pattern:
        h = _hdr(p)                      # a block of this pattern: refill its dirty range
        if h.hi > h.lo:
            with nogil:
                _fill_par(<char *>p + h.lo, h.hi - h.lo, pattern, threads)
        h.lo = h.hi = 0
        h.nthreads = threads
        return a
    with nogil:
        _fill_par(p, nbytes, pattern, threads)
    if nbytes >= _MIN_BYTES:
        _hdr(p).pattern = pattern
        _hdr(p).flags = _H_ARMED
        _hdr(p).lo = _hdr(p).hi = 0
        _hdr(p).nthreads = threads
    return a


def fill_array(a, uint64_t pattern, int threads=1):
    """Fill the C-contiguous array ``a`` with the 64-bit ``pattern`` repeated over its
    bytes (the caller repeats one element's bits to 64 bits), over the shared pool for
    arrays of 256 KiB or more (threads: 0 every CPU).  nki.isa.memset on large tensors
    (issue 15): the same bits as ``a[...] = value``, split across cores the way the
    elementwise kernels split rows.  Raises ValueError for another layout or storage not
    8-byte aligned."""
    cdef cnp.ndarray v = <cnp.ndarray?>a
    if not cnp.PyArray_IS_C_CONTIGUOUS(v) or not (cnp.PyArray_FLAGS(v) & cnp.NPY_ARRAY_WRITEABLE):
        raise ValueError("fill_array: a must be a writable C-contiguous array")
    cdef size_t n = <size_t>cnp.PyArray_NBYTES(v)
    cdef void *p = cnp.PyArray_DATA(v)
    if (<size_t>p) % 8:
        raise ValueError("fill_array: a's storage is not 8-byte aligned")
    with nogil:
        _fill_par(p, n, pattern, threads)


def release():
    """Give every kept block back to the system allocator."""
    cdef int i
    global _pooled
    PyThread_acquire_lock(_lock, WAIT_LOCK)
    for i in range(_NSIZES):
        while _count[i]:
            _count[i] -= 1
            free(<char *>_blocks[i][_count[i]] - _HDR)
    _pooled = 0
    PyThread_release_lock(_lock)


def capacity():
    """Most bytes the pool keeps (256 MiB unless ``FASTISA_POOL_BYTES`` or
    :func:`set_capacity` says otherwise; 0 = keep nothing)."""
    return _cap


def set_capacity(size_t nbytes):
    """Keep at most ``nbytes`` of freed blocks (0 turns recycling off); blocks over the new
    limit are released.  Returns the previous capacity."""
    global _cap
    old = _cap
    _cap = nbytes
    if _pooled > _cap:
        release()
    return old


def pooled():
    """(bytes kept, blocks kept)."""
    cdef int i, n = 0
    for i in range(_NSIZES):
        n += _count[i]
    return int(_pooled), n
