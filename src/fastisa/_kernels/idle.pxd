# cython: language_level=3
"""fastisa.cost.record_idle for the plan hit paths of the kernel drivers, without a Python
call (speed2 branch, issue 15): no active profile, and every cost-record hook registered as
idle (``fastisa.cost.idle_when``) with its context unset and nothing pending."""

from cpython.contextvars cimport get_value as _cv_get


cdef inline bint record_idle(list hooks, object active, dict idle) except -1:
    """``hooks``: fastisa.cost.RECORD_HOOKS; ``active``: its profile ContextVar;
    ``idle``: fastisa._kernels.span.idle_registry()."""
    cdef tuple e
    if _cv_get(active, ()):
        return False
    for h in hooks:
        o = idle.get(h)
        if o is None:
            return False
        e = <tuple>o
        if e[0] is not None and _cv_get(e[0], None) is not None:
            return False
        if e[1] is not None and e[1].items:
            return False
    return True
