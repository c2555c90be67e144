"""``neuronxcc.nki`` (NKI Beta 1) names over fastisa: ``@nki.jit(mode="simulation")``,
``nki.simulate_kernel(kernel, *args)``, ``@nki.baremetal`` / ``@nki.benchmark`` /
``@nki.profile`` (all simulate on fastisa), ``nki.language`` (the same module as the
current API, with the tile-level functions), ``nki.isa`` (tile-returning forms,
:mod:`fastisa.nki.legacy_isa`), ``nki.typing``."""

from __future__ import annotations

from . import Kernel, jit, simulate  # noqa: F401
from . import compiler, language, typing  # noqa: F401
from . import legacy_isa as isa  # noqa: F401

__all__ = ["jit", "simulate_kernel", "baremetal", "benchmark", "profile", "trace", "language",
           "isa", "typing", "compiler"]


def simulate_kernel(kernel, *args, **kwargs):
    """``nki.simulate_kernel(kernel[grid], *arrays)``: run the kernel on fastisa."""
    return simulate(kernel)(*args, **kwargs)


def _simulating_decorator(name):
    def deco(func=None, **options):
        if func is None:
            return lambda f: Kernel(f, options=dict(options, mode=name))
        return Kernel(func, options={"mode": name})
    deco.__name__ = name
    deco.__doc__ = (f"``@nki.{name}``: on fastisa the kernel is simulated when called with "
                    f"numpy arrays (options accepted and kept).")
    return deco


baremetal = _simulating_decorator("baremetal")
benchmark = _simulating_decorator("benchmark")
profile = _simulating_decorator("profile")
trace = _simulating_decorator("trace")
