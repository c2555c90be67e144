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


# ---- issue 15: the operand spans and the source line of one profiled instruction -------
# (fastisa.schedule._spans / user_source, of which these are the compiled twins: the same
# values; tests/test_plans.py compares them)
cdef dict _HAS_FI_SPAN = {}         # type -> whether its objects have a _fi_span method
cdef tuple _ATTRS = ("_d", "data", "_buf", "array")


cdef object _span_of(object x, object serial_of):
    if x is None:
        return None
    if isinstance(x, np.ndarray):
        return array_span(x, serial_of)
    tp = type(x)
    has = _HAS_FI_SPAN.get(tp)
    if has is None:
        has = _HAS_FI_SPAN[tp] = hasattr(tp, "_fi_span")
    if has:
        f = getattr(x, "_fi_span", None)
        if f is not None:
            sp, lo, hi = f()
            return (sp, 0, 1, lo, hi, 0)
    for attr in _ATTRS:
        a = getattr(x, attr, None)
        if isinstance(a, np.ndarray):
            return array_span(a, serial_of)
    return None


def spans(objs, serial_of):
    """fastisa.schedule._spans's compiled twin: the spans of a list / tuple of operands
    (or of one operand), ``(space, lo, hi)`` triples taken as flat byte ranges."""
    cdef list out = []
    if objs is None:
        return out
    if not isinstance(objs, (list, tuple)):
        objs = (objs,)
    for o in objs:
        if isinstance(o, tuple) and len(<tuple>o) == 3 and isinstance((<tuple>o)[1], int):
            out.append(((<tuple>o)[0], 0, 1, (<tuple>o)[1], (<tuple>o)[2], 0))
            continue
        s = _span_of(o, serial_of)
        if s is not None:
            out.append(s)
    return out


cdef dict _SRC = {}                 # (code, instruction offset) -> "file:line"


def user_source_frames(frame):
    """The part of fastisa.schedule.user_source after its SOURCE check: ``file:line`` of
    the first frame outside fastisa (the bundled examples count as user code), else ""."""
    f = frame
    while f is not None:
        mod = f.f_globals.get("__name__", "")
        if not (mod == "fastisa" or mod.startswith("fastisa.")) or \
                mod.startswith("fastisa.examples."):
            code = f.f_code
            key = (code, f.f_lasti)     # (the line table is decoded once per offset)
            s = _SRC.get(key)
            if s is None:
                if len(_SRC) > 65536:
                    _SRC.clear()
                s = _SRC[key] = f"{code.co_filename}:{f.f_lineno}"
            return s
        f = f.f_back
    return ""
