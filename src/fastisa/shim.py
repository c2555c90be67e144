"""Make the vendors' import names resolve to fastisa's front-ends.

After :func:`install`::

    import nki                      -> fastisa.nki
    import nki.isa as nisa          -> fastisa.nki.isa
    import nki.language as nl       -> fastisa.nki.language
    from tbe import tik             -> fastisa.tik
    from te import tik              -> fastisa.tik
    from te import platform         -> fastisa.tik.platform  (te.platform.cce_conf too)
    from tbe.common import platform -> fastisa.tik.platform

so kernel files written for the real toolchains run unchanged.  :func:`uninstall`
removes the aliases again (and every module imported through them).  ``with installed():``
does both.  Nothing is installed on ``import fastisa``.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.abc
import importlib.machinery
import sys
import types

__all__ = ["install", "uninstall", "installed", "is_installed", "ALIASES"]

#: vendor module name -> fastisa module name.  Parents of these names that have no
#: entry of their own ("tbe", "te", "tbe.common") become empty namespace modules.
ALIASES = {
    "nki": "fastisa.nki",
    "nki.isa": "fastisa.nki.isa",
    "nki.language": "fastisa.nki.language",
    "tbe.tik": "fastisa.tik",
    "te.tik": "fastisa.tik",
    "te.platform": "fastisa.tik.platform",
    "te.platform.cce_conf": "fastisa.tik.platform",
    "tbe.common.platform": "fastisa.tik.platform",
    "tbe.common.platform.platform_info": "fastisa.tik.platform",
}
_PACKAGES = {"tbe", "te", "tbe.common"}


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, target):
        self.target = target

    def create_module(self, spec):
        if self.target is None:
            mod = types.ModuleType(spec.name, "fastisa.shim namespace package")
            mod.__path__ = []
            mod.__fastisa_alias__ = True
            return mod
        return importlib.import_module(self.target)

    def exec_module(self, module):
        pass


class _AliasFinder(importlib.abc.MetaPathFinder):
    def __init__(self):
        self.created: set[str] = set()

    def find_spec(self, fullname, path=None, target=None):
        if fullname in ALIASES:
            tgt = ALIASES[fullname]
        elif fullname in _PACKAGES:
            tgt = None
        else:
            return None
        self.created.add(fullname)
        is_pkg = tgt is None or any(k.startswith(fullname + ".") for k in ALIASES)
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(tgt), is_package=is_pkg)


_finder: _AliasFinder | None = None


def is_installed() -> bool:
    return _finder is not None


def install() -> None:
    """Install the import aliases (idempotent)."""
    global _finder
    if _finder is not None:
        return
    for name in list(ALIASES) + sorted(_PACKAGES):
        top = name.split(".")[0]
        mod = sys.modules.get(top)
        if mod is not None and not getattr(mod, "__fastisa_alias__", False) and \
                not (getattr(mod, "__name__", "").startswith("fastisa")):
            # A real vendor package is already imported; leave it alone.
            raise ImportError(f"fastisa.shim: a real '{top}' module is already imported "
                              f"({getattr(mod, '__file__', mod)!r}); cannot alias it")
    _finder = _AliasFinder()
    sys.meta_path.insert(0, _finder)


def uninstall() -> None:
    """Remove the aliases and forget every module imported through them."""
    global _finder
    if _finder is None:
        return
    try:
        sys.meta_path.remove(_finder)
    except ValueError:
        pass
    for name in list(sys.modules):
        if name in ALIASES or name in _PACKAGES:
            del sys.modules[name]
    _finder = None


@contextlib.contextmanager
def installed():
    """``with installed(): import nki`` -- install for the block, then restore."""
    was = is_installed()
    install()
    try:
        yield
    finally:
        if not was:
            uninstall()


from ._public import make_dir as _make_dir  # noqa: E402

__dir__ = _make_dir(globals())
