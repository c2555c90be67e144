"""``nki.compiler``: compiler directives.  fastisa runs kernels eagerly, so the scheduling
hints are accepted and do nothing.  The explicit SBUF/PSUM allocators ``sbuf.alloc(func)``,
``sbuf.mod_alloc(base_addr, ...)``, ``psum.alloc(func)``, ``psum.mod_alloc(base_addr=0,
base_bank=...)`` place a tensor's blocks at the addresses they give (see
:mod:`fastisa.nki._alloc`); other allocator attributes raise NotImplementedError."""

from __future__ import annotations

import contextlib

from . import _alloc
from ..errors import ConstraintError
from .tensor import _BUFFERS

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

    def alloc(self, func):
        """``buffer=`` for a tensor whose block ``idx`` is at ``func(idx, pdim_size,
        fdim_size)``: ``(partition, byte)`` in SBUF, ``(bank, partition, byte)`` in PSUM
        (``fdim_size`` = bytes per partition of one block)."""
        return _alloc.alloc(_BUFFERS[self._name], func)

    def mod_alloc(self, *args, **kwargs):
        """Modulo allocation: SBUF ``mod_alloc(base_addr, *, base_partition=0,
        num_par_tiles=(), num_free_tiles=())``; PSUM ``mod_alloc(base_addr=0, *,
        base_bank=0, num_bank_tiles=(), base_partition=0, num_par_tiles=(),
        num_free_tiles=())`` -- block ``idx`` at ``base + lin(idx % tiles) * tile size``
        (:mod:`fastisa.nki._alloc`)."""
        buf = _BUFFERS[self._name]
        f = _alloc.sbuf_mod_alloc if self._name == "sbuf" else _alloc.psum_mod_alloc
        try:
            return f(buf, *args, **kwargs)
        except TypeError as e:
            raise ConstraintError(f"{self._name}.mod_alloc: {e}") from None

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
