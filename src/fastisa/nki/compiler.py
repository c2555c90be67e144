"""``nki.compiler``: compiler directives.  fastisa runs kernels eagerly, so the scheduling
hints are accepted and do nothing; explicit SBUF/PSUM allocators are not modelled and raise
NotImplementedError when used."""

from __future__ import annotations

import contextlib

__all__ = ["skip_middle_end_transformations", "no_reorder", "sbuf", "psum",
           "enable_stack_allocator", "force_auto_alloc"]


def skip_middle_end_transformations(func=None, **kwargs):
    """Decorator: accepted, does nothing on fastisa."""
    if func is None:
        return lambda f: f
    return func


def enable_stack_allocator(func=None, **kwargs):
    if func is None:
        return lambda f: f
    return func


def force_auto_alloc(func=None, **kwargs):
    if func is None:
        return lambda f: f
    return func


@contextlib.contextmanager
def no_reorder():
    """``with nki.compiler.no_reorder():`` -- instructions already run in program order."""
    yield


class _Allocator:
    def __init__(self, name):
        self._name = name

    def __getattr__(self, attr):
        if attr.startswith("_"):
            raise AttributeError(attr)

        def unsupported(*args, **kwargs):
            raise NotImplementedError(f"nki.compiler.{self._name}.{attr}: explicit allocators "
                                      f"are not implemented by fastisa; use nl.ndarray(..., "
                                      f"address=) or automatic allocation")
        return unsupported

    def __repr__(self):
        return f"nki.compiler.{self._name}"


sbuf = _Allocator("sbuf")
psum = _Allocator("psum")
