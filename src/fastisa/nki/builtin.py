"""``nki_cpu_simulator.nki.builtin`` (aliased as ``builtins.builtin`` by nki-library's
simulation harness): the language namespaces kernels reach through ``builtin``."""

from __future__ import annotations

from . import isa, language  # noqa: F401
from .language import *  # noqa: F401,F403
