"""``__all__`` / ``__dir__`` helpers for fastisa's public modules, so ``dir(nl)`` and
``dir(fastisa)`` list the API and not the modules it is built from (``np``, ``os``,
``math``)."""

from __future__ import annotations

import types
from collections.abc import Callable, Iterable


def public_names(ns: dict, exclude: Iterable[str] = ()) -> list[str]:
    """Every name in module namespace ``ns`` that is API: no leading underscore, not a
    module, not a ``__future__`` feature, not a function or class imported from outside
    fastisa (``dataclass``, ``field``), not in ``exclude``."""
    skip = set(exclude)
    out = []
    for n, v in ns.items():
        if n.startswith("_") or n in skip or isinstance(v, types.ModuleType):
            continue
        if type(v).__module__ == "__future__":
            continue
        if isinstance(v, (type, types.FunctionType, types.BuiltinFunctionType)) and \
                not str(getattr(v, "__module__", "fastisa")).startswith("fastisa"):
            continue
        out.append(n)
    return sorted(out)


def make_dir(ns: dict, extra: Iterable[str] = ()) -> Callable[[], list[str]]:
    """A module ``__dir__`` (PEP 562): ``__all__`` plus ``extra`` (lazily loaded names)."""
    def __dir__() -> list[str]:
        return sorted(set(ns["__all__"]) | set(extra))
    return __dir__
