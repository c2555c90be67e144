"""Placeholders for vendor names that have no TIK meaning."""
from __future__ import annotations


class NoTik:
    """A vendor name fastisa does not simulate: importing it works, using it (calling it,
    or taking an attribute) raises ``NotImplementedError`` naming it."""

    def __init__(self, qualname: str, why: str = "it is TVM/DSL compute, not TIK"):
        self._qualname = qualname
        self._why = why

    def _fail(self):
        raise NotImplementedError(f"{self._qualname} is not simulated by fastisa ({self._why}); "
                                  f"only TIK programs run")

    def __call__(self, *args, **kwargs):
        self._fail()

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return NoTik(f"{self._qualname}.{name}", self._why)

    def __repr__(self):
        return f"<fastisa: {self._qualname} (not simulated)>"


def module_getattr(modname: str, known: set[str]):
    """A module ``__getattr__`` giving :class:`NoTik` for ``known`` names."""
    def __getattr__(name):
        if name in known:
            return NoTik(f"{modname}.{name}")
        raise AttributeError(f"module {modname!r} has no attribute {name!r} in fastisa")
    return __getattr__
