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

The handler is active only inside :func:`empty` (numpy keeps it in a context variable and
each array remembers the handler that allocated it, so arrays made elsewhere are
untouched).  Numpy calls the handler with the GIL held; a lock guards the pool anyway.
"""
from libc.stdint cimport uint8_t
from libc.stdlib cimport calloc, free, malloc, realloc
from libc.string cimport strncpy
from cpython.pycapsule cimport PyCapsule_New
from cpython.pythread cimport (PyThread_type_lock, PyThread_allocate_lock,
                               PyThread_acquire_lock, PyThread_release_lock, WAIT_LOCK)
cimport numpy as cnp
import numpy as np
import os

cnp.import_array()

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
    """
    void _hugepages "fi_pool_hugepages"(void *p, size_t size) nogil


cdef void *_p_malloc(void *ctx, size_t size) noexcept nogil:
    global _pooled
    cdef int i
    cdef void *p = NULL
    if size >= _MIN_BYTES:
        PyThread_acquire_lock(_lock, WAIT_LOCK)
        for i in range(_NSIZES):
            if _count[i] and _size[i] == size:
                _count[i] -= 1
                p = _blocks[i][_count[i]]
                _pooled -= size
                break
        PyThread_release_lock(_lock)
        if p != NULL:
            return p
    p = malloc(size if size else 1)
    if p != NULL and size >= (1 << 22):
        _hugepages(p, size)
    return p


cdef void *_p_calloc(void *ctx, size_t nelem, size_t elsize) noexcept nogil:
    return calloc(nelem if nelem else 1, elsize if elsize else 1)


cdef void *_p_realloc(void *ctx, void *ptr, size_t new_size) noexcept nogil:
    return realloc(ptr, new_size if new_size else 1)


cdef void _p_free(void *ctx, void *ptr, size_t size) noexcept nogil:
    global _pooled
    cdef int i, slot = -1
    if ptr == NULL:
        return
    if size >= _MIN_BYTES and _pooled + size <= _cap:
        PyThread_acquire_lock(_lock, WAIT_LOCK)
        for i in range(_NSIZES):
            if _size[i] == size and _count[i]:
                slot = i
                break
            if slot < 0 and _count[i] == 0:
                slot = i                 # an empty slot, unless a later one has the size
        if slot >= 0 and _count[slot] < _DEPTH and _pooled + size <= _cap:
            _size[slot] = size
            _blocks[slot][_count[slot]] = ptr
            _count[slot] += 1
            _pooled += size
            ptr = NULL
        PyThread_release_lock(_lock)
    if ptr != NULL:
        free(ptr)


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


def release():
    """Give every kept block back to the system allocator."""
    cdef int i
    global _pooled
    PyThread_acquire_lock(_lock, WAIT_LOCK)
    for i in range(_NSIZES):
        while _count[i]:
            _count[i] -= 1
            free(_blocks[i][_count[i]])
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
