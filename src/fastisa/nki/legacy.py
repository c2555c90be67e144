"""``neuronxcc.nki`` (NKI Beta 1) names over fastisa: ``@nki.jit(mode="simulation")``,
``nki.simulate_kernel(kernel, *args)``, ``@nki.baremetal`` / ``@nki.benchmark`` /
``@nki.profile`` (all simulate on fastisa), ``nki.language`` (the same module as the
current API, with the tile-level functions), ``nki.isa`` (tile-returning forms,
:mod:`fastisa.nki.legacy_isa`), ``nki.typing``."""

from __future__ import annotations

from ..errors import AccessError
from . import Kernel, simulate
from . import compiler, language, typing  # noqa: F401
from . import legacy_isa as isa  # noqa: F401

__all__ = ["jit", "simulate_kernel", "baremetal", "benchmark", "profile", "trace", "language",
           "isa", "typing", "compiler"]


def _as_index_error(exc: AccessError) -> IndexError:
    """The Beta 1 simulator's out-of-bounds exception: the built-in ``IndexError`` itself
    (the SDK's ``nki/test/test_nki_isa_dma_copy.py`` asserts ``type(exc) == IndexError``
    for ``dma_copy(..., oob_mode=nisa.oob_mode.error)``), with fastisa's message; the
    :class:`~fastisa.errors.AccessError` stays attached as ``__cause__``."""
    err = IndexError(str(exc))
    err.__cause__ = exc
    return err


class LegacyKernel(Kernel):
    """A kernel made by a ``neuronxcc.nki`` decorator (``@nki.jit``, ``@nki.jit(mode=
    "simulation")``, ``@nki.baremetal`` ...): simulated like :class:`fastisa.nki.Kernel`,
    except that an out-of-bounds access of a host-level call raises the built-in
    ``IndexError`` as the Beta 1 simulator does (see :func:`_as_index_error`); the current
    API (``import nki``) keeps :class:`~fastisa.errors.AccessError` (an ``IndexError``
    subclass)."""

    __test__ = False

    def __getitem__(self, grid) -> "LegacyKernel":
        k = super().__getitem__(grid)
        return LegacyKernel(k.func, k.grid, k.options, parent=self)

    def __call__(self, *args, **kwargs):
        host = language._MACHINE.get() is None
        try:
            return super().__call__(*args, **kwargs)
        except AccessError as exc:
            if not host:
                raise               # a sub-kernel: the host-level call decides
            raise _as_index_error(exc) from exc


def jit(func=None, **options):
    """``@nki.jit`` / ``@nki.jit(mode="simulation", ...)`` of ``neuronxcc.nki``: a
    :class:`LegacyKernel` (options accepted and kept)."""
    if func is None:
        return lambda f: LegacyKernel(f, options=options)
    return LegacyKernel(func, options=options)


def simulate_kernel(kernel, *args, **kwargs):
    """``nki.simulate_kernel(kernel[grid], *arrays)``: run the kernel on fastisa; an
    out-of-bounds access raises the built-in ``IndexError`` (see :class:`LegacyKernel`)."""
    try:
        return simulate(kernel)(*args, **kwargs)
    except AccessError as exc:
        raise _as_index_error(exc) from exc


def _simulating_decorator(name):
    def deco(func=None, **options):
        if func is None:
            return lambda f: LegacyKernel(f, options=dict(options, mode=name))
        return LegacyKernel(func, options={"mode": name})
    deco.__name__ = name
    deco.__doc__ = (f"``@nki.{name}``: on fastisa the kernel is simulated when called with "
                    f"numpy arrays (options accepted and kept).")
    return deco


baremetal = _simulating_decorator("baremetal")
benchmark = _simulating_decorator("benchmark")
profile = _simulating_decorator("profile")
trace = _simulating_decorator("trace")
