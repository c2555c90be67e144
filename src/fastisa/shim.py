"""Make the vendors' import names resolve to fastisa's front-ends.

After :func:`install`::

    import nki                      -> fastisa.nki
    import nki.isa as nisa          -> fastisa.nki.isa
    import nki.language as nl       -> fastisa.nki.language
    from tbe import tik             -> fastisa.tik
    from te import tik              -> fastisa.tik
    from te import platform         -> fastisa.tik.platform  (te.platform.cce_conf too)
    from tbe.common import platform -> fastisa.tik.platform
    from te import tvm, te.utils.op_utils, tbe.common.utils.para_check, topi.cce.util,
    te.platform.cce_params / fusion_manager, te.lang.cce ...
                                    -> fastisa.tik.compat.*  (the op scaffolding)

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
    "nki.isa.constants": "fastisa.nki.constants",
    "nki.language.dtypes": "fastisa.nki.dtype",
    "nki.typing": "fastisa.nki.typing",
    "nki.dtype": "fastisa.nki.dtype",
    "nki.compiler": "fastisa.nki.compiler",
    "nki.tensor": "fastisa.nki.tensor",
    "nki.builtin": "fastisa.nki.builtin",
    "nki.collectives": "fastisa.nki.collectives",
    # NKI Beta 1 (the SDK's own tests still import these)
    "neuronxcc.nki": "fastisa.nki.legacy",
    "neuronxcc.nki.isa": "fastisa.nki.legacy_isa",
    "neuronxcc.nki.isa.constants": "fastisa.nki.constants",
    "neuronxcc.nki.language": "fastisa.nki.language",
    "neuronxcc.nki.typing": "fastisa.nki.typing",
    "neuronxcc.nki.compiler": "fastisa.nki.compiler",
    # the package nki-library's simulation harness aliases nki to (test/utils/simulation_setup.py)
    "nki_cpu_simulator.nki": "fastisa.nki",
    "nki_cpu_simulator.nki.builtin": "fastisa.nki.builtin",
    "nki_cpu_simulator.nki.compiler": "fastisa.nki.compiler",
    "nki_cpu_simulator.nki.isa": "fastisa.nki.isa",
    "nki_cpu_simulator.nki.isa.constants": "fastisa.nki.constants",
    "nki_cpu_simulator.nki.language": "fastisa.nki.language",
    "nki_cpu_simulator.nki.language.dtypes": "fastisa.nki.dtype",
    "nki_cpu_simulator.nki.tensor": "fastisa.nki.tensor",
    "nki_cpu_simulator.nki.typing": "fastisa.nki.typing",
    "nki_cpu_simulator.nki.collectives": "fastisa.nki.collectives",
    "tbe.tik": "fastisa.tik",
    "te.tik": "fastisa.tik",
    "te.platform": "fastisa.tik.platform",
    "te.platform.cce_conf": "fastisa.tik.platform",
    "tbe.common.platform": "fastisa.tik.platform",
    "tbe.common.platform.platform_info": "fastisa.tik.platform",
    # the CANN op scaffolding TIK operators import (fastisa.tik.compat, issue 18)
    "te.tvm": "fastisa.tik.compat.tvm",
    "tbe.tvm": "fastisa.tik.compat.tvm",
    "te.platform.cce_params": "fastisa.tik.compat.cce_params",
    "te.platform.fusion_manager": "fastisa.tik.compat.fusion_manager",
    "tbe.common.register": "fastisa.tik.compat.fusion_manager",
    "te.platform.cce_intrin": "fastisa.tik.compat.cce_misc",
    "te.platform.cce_build": "fastisa.tik.compat.cce_misc",
    "te.platform.insn_cmd": "fastisa.tik.compat.cce_misc",
    "te.platform.cce_intrin_md": "fastisa.tik.compat.cce_misc",
    "te.platform.cce_runtime": "fastisa.tik.compat.cce_misc",
    "te.utils.check_para": "fastisa.tik.compat.op_utils",
    "te.lang.cce.rl_bank": "fastisa.tik.compat.te_lang",
    "te.lang.cce.rl_bank.rl_bank": "fastisa.tik.compat.te_lang",
    "te.utils.op_utils": "fastisa.tik.compat.op_utils",
    "tbe.common.utils.para_check": "fastisa.tik.compat.op_utils",
    "te.utils.error_manager": "fastisa.tik.compat.error_manager",
    "te.utils.error_manager.error_manager_vector": "fastisa.tik.compat.error_manager",
    "tbe.common.utils.errormgr": "fastisa.tik.compat.error_manager",
    "topi.cce.util": "fastisa.tik.compat.topi_util",
    "te.lang.cce": "fastisa.tik.compat.te_lang",
    "te.lang.dynamic": "fastisa.tik.compat.te_lang",
    "tbe.dsl": "fastisa.tik.compat.te_lang",
    "topi.generic": "fastisa.tik.compat.te_lang",
}
_PACKAGES = {"tbe", "te", "tbe.common", "neuronxcc", "nki_cpu_simulator", "te.utils", "te.lang",
             "topi", "topi.cce", "tbe.common.utils"}


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, target):
        self.target = target

    def create_module(self, spec):
        if self.target is None:
            mod = types.ModuleType(spec.name, "fastisa.shim namespace package")
            mod.__path__ = []
            mod.__fastisa_alias__ = True
            return mod
        mod = importlib.import_module(self.target)
        if spec.submodule_search_locations is not None and not hasattr(mod, "__path__"):
            mod.__path__ = []     # an aliased module with aliased children (nki.isa.constants)
        return mod

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
