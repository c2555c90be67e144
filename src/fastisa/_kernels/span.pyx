# cython: language_level=3, boundscheck=False, wraparound=False
"""The byte range an operand view touches, for the dependency-aware schedule
(:func:`fastisa.schedule._array_span`, of which this is the compiled twin: the same tuple
for every view; ``tests/test_plans.py`` compares the two).  Issue 15: the cost profile of
``nki.simulate`` computes two of these per instruction."""
cimport numpy as cnp
import numpy as np

cnp.import_array()


def array_span(a, serial_of):
    """``(space, p_lo, p_hi, f_lo, f_hi, row_bytes)`` of the numpy view ``a`` (None when
    empty); ``serial_of(root)`` gives the allocation serial of the array owning the
    memory (0: use addresses)."""
    cdef cnp.ndarray v = <cnp.ndarray>a
    cdef cnp.ndarray root = v
    cdef int nd = cnp.PyArray_NDIM(v), i, rnd
    cdef Py_ssize_t base, off, lo, hi, n, st, rb, inner, p0, f0
    cdef Py_ssize_t it = cnp.PyArray_ITEMSIZE(v)
    cdef bint ok
    cdef object b
    if cnp.PyArray_SIZE(v) == 0:
        return None
    while True:
        b = (<object>root).base
        if isinstance(b, np.ndarray):
            root = <cnp.ndarray>b
        else:
            break
    base = <Py_ssize_t>cnp.PyArray_DATA(root)
    off = <Py_ssize_t>cnp.PyArray_DATA(v) - base
    lo = hi = off
    for i in range(nd):
        n = cnp.PyArray_DIMS(v)[i]
        st = cnp.PyArray_STRIDES(v)[i]
        if st < 0:
            lo += (n - 1) * st
        else:
            hi += (n - 1) * st
    hi += it
    serial = serial_of(root)
    space = ("host", serial) if serial else 0
    if not serial:
        lo, hi = lo + base, hi + base
    rnd = cnp.PyArray_NDIM(root)
    rb = cnp.PyArray_STRIDES(root)[0] if rnd >= 2 and cnp.PyArray_IS_C_CONTIGUOUS(root) else 0
    if rb > 0 and nd >= 1 and (cnp.PyArray_STRIDES(v)[0] == rb or cnp.PyArray_DIMS(v)[0] == 1) \
            and off >= 0:
        inner = it
        ok = True
        for i in range(1, nd):
            n = cnp.PyArray_DIMS(v)[i]
            st = cnp.PyArray_STRIDES(v)[i]
            inner += (n - 1) * st
            if st < 0:
                ok = False
        if ok and off % rb + inner <= rb:
            p0 = off // rb
            f0 = off % rb
            return (space, p0, p0 + cnp.PyArray_DIMS(v)[0], f0, f0 + inner, rb)
    return (space, 0, 1, lo, hi, 0)


# ---- speed2 branch (issue 15): is recording a cost a no-op right now? -------------------
cdef list _HOOKS = []
cdef object _ACTIVE = None
cdef dict _IDLE = {}


def set_record_env(list hooks, active):
    """fastisa.cost's RECORD_HOOKS list and its ContextVar of active profiles."""
    global _HOOKS, _ACTIVE
    _HOOKS, _ACTIVE = hooks, active


def idle_registry():
    """The dict hook -> (context, pending) :func:`idle_when` fills (the compiled plan paths
    read it directly)."""
    return _IDLE


def idle_when(hook, context=None, pending=None):
    """Declare that ``hook`` does nothing while ``context.get()`` is None (a ContextVar)
    and ``pending.items`` is empty (a thread-local holder)."""
    _IDLE[hook] = (context, pending)


def record_idle():
    """True when fastisa.cost.record would do nothing: no profile is active and every
    record hook is declared idle (:func:`idle_when`) and is idle now."""
    cdef tuple e
    if _ACTIVE is None or _ACTIVE.get():
        return False
    for h in _HOOKS:
        o = _IDLE.get(h)
        if o is None:
            return False
        e = <tuple>o
        if e[0] is not None and e[0].get() is not None:
            return False
        if e[1] is not None and e[1].items:
            return False
    return True
