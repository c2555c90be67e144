"""The bundled example kernels that ``fastisa demo`` runs.

Each example is a module in this package, written as user code in its vendor's own API
style (``import nki``, ``from tbe import tik``, PTO tiles), so it imports with
:mod:`fastisa.shim` installed.  A module defines:

* ``TITLE`` (one line) and ``__doc__`` (what it is),
* ``FRONTEND``: ``"nki"``, ``"tik"`` or ``"pto"``, and optionally ``ORDER`` (int),
* ``demo(seed=0) -> Report``: runs the kernel, checks it against its reference.

``fastisa run NAME`` runs one; ``fastisa run --list`` lists them.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, field

import numpy as np

from .. import cost, shim

__all__ = ["Report", "names", "load", "run"]

_FRONTEND_ORDER = {"nki": 0, "tik": 1, "pto": 2}


@dataclass
class Report:
    """What one example did: inputs, outputs, checks against the reference, engine cycles."""

    name: str
    title: str
    description: str = ""
    inputs: list = field(default_factory=list)    # [(name, ndarray)]
    outputs: list = field(default_factory=list)   # [(name, ndarray)]
    checks: list = field(default_factory=list)    # [(what was checked, bool)]
    cycles: dict = field(default_factory=dict)    # engine -> estimated cycles
    notes: list = field(default_factory=list)     # extra lines to print
    latency_ns: float = 0.0                       # the engine schedule's estimate
    verdict: str = ""                             # its one-line bottleneck verdict

    @property
    def matches(self) -> bool:
        return bool(self.checks) and all(ok for _, ok in self.checks)

    def check(self, what: str, ok) -> bool:
        self.checks.append((what, bool(ok)))
        return bool(ok)

    def format(self, *, full: bool = False) -> str:
        opts = dict(threshold=10**9) if full else dict(threshold=200, edgeitems=4)
        lines = [f"== {self.name}: {self.title}"]
        if self.description:
            lines += ["   " + ln for ln in self.description.strip().splitlines()]
        lines.append("inputs:")
        for n, a in self.inputs:
            lines.append(f"  {n}: shape {tuple(a.shape)}, dtype {a.dtype}")
        lines.append("outputs:")
        for n, a in self.outputs:
            body = np.array2string(np.asarray(a), max_line_width=100, **opts)
            lines.append(f"  {n}: shape {tuple(a.shape)}, dtype {a.dtype}")
            lines += ["    " + ln for ln in body.splitlines()]
        lines += ["  " + n for n in self.notes]
        lines.append("checks against the reference:")
        for what, ok in self.checks:
            lines.append(f"  [{'ok' if ok else 'MISMATCH'}] {what}")
        if self.cycles:
            lines.append("estimated engine cycles: " +
                         ", ".join(f"{e} {c}" for e, c in sorted(self.cycles.items())))
        if self.verdict:
            lines.append(f"estimated latency (model): {self.latency_ns:,.0f} ns; {self.verdict}")
        lines.append(f"result: {'MATCH' if self.matches else 'MISMATCH'}")
        return "\n".join(lines)


def _module_names() -> list[str]:
    return [m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_")]


def load(name: str):
    """Import the example module ``name`` (with the vendor import shim installed)."""
    if name not in _module_names():
        raise KeyError(f"no bundled example named {name!r}; available: {', '.join(names())}")
    with shim.installed():
        return importlib.import_module(f"{__name__}.{name}")


def names() -> list[str]:
    """Example names in demo order (NKI, TIK, PTO; then ORDER; then name)."""
    mods = [load(n) for n in _module_names()]
    mods.sort(key=lambda m: (_FRONTEND_ORDER.get(getattr(m, "FRONTEND", ""), 9),
                             getattr(m, "ORDER", 100), m.__name__))
    return [m.__name__.rsplit(".", 1)[1] for m in mods]


def run(name: str, seed: int = 0) -> Report:
    """Run one example's ``demo`` and return its report."""
    mod = load(name)
    with shim.installed(), cost.profiling() as prof:
        report = mod.demo(seed=seed)
    report.name = name
    if not report.verdict:
        report.latency_ns = prof.latency().ns
        report.verdict = prof.verdict()
    return report
