"""``te.lang.cce`` / ``te.lang.dynamic`` / ``topi.generic``: the TVM DSL, not simulated.

TIK operators import these for a constant or a helper on a path they do not take on a TIK
build; every compute/schedule name (``te.lang.cce.vadd``, ``auto_schedule``,
``cce_build_code``, ``topi.generic.auto_schedule`` ...) raises ``NotImplementedError``
when used.  ``te.lang.cce.util.shape_to_list`` works (it is a plain helper).
"""
from __future__ import annotations

import types

from ._notik import NoTik
from .topi_util import shape_to_list

util = types.SimpleNamespace(shape_to_list=shape_to_list)


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return NoTik(f"te.lang.cce.{name}", "it is the TVM DSL, not TIK")
