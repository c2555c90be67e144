"""fastisa's TIK front-end: ``from tbe import tik`` / ``from te import tik`` programs run
unchanged (with :mod:`fastisa.shim` installed) on one C repeat/stride/mask walker.

Build a program with ``tik.Tik()``, ``Tensor``/``Scalar``, the vector instructions and
``data_move``, register it with ``BuildCCE`` and run it with
``tik_instance.tikdb.start_debug(feed_dict={name: ndarray}, interactive=False)``, which
returns the outputs as numpy arrays.  The semantics are the TIK source and its CPU debugger (github.com/jizhuoran/caffe-huawei-atlas-convertor, convertor/huawei/te/tik/)
and the TIK docs, Vector-Scalar Instructions: General Definition (Ascend TIK API reference, hiascend.com); see the README's TIK section for what is and is not implemented.
"""

from __future__ import annotations

import typing as _typing

from . import platform
from ._instr import MTE_ISSUE_CYCLES, VECTOR_ISSUE_CYCLES, VECTOR_OPS
from ._instr import Tik as _TikCore
# ---- tik-isa: instruction families mixed into Tik (one module per family) ----
from ._cmpsel import CmpSelMixin as _CmpSel
from ._convdeq import DeqConvMixin as _DeqConv
from ._groupreduce import GroupReduceMixin as _GroupReduce
from ._proposal import ProposalMixin as _Proposal
from ._scalar import ScalarMixin as _Scalar
from ._transpose import TransposeMixin as _Transpose
# ---- tik-cube: the cube path and the TIK 1.5 h_* API ----
from ._cube import CubeMixin as _Cube
from ._high import HighLevelMixin as _High
# ---- end tik-cube ----


class Tik(_Cube, _High, _CmpSel, _Transpose, _Proposal, _GroupReduce, _Scalar, _DeqConv, _TikCore):
    __doc__ = _TikCore.__doc__
# ---- end tik-isa ----
from ._program import (UNINIT_FILL, Expr, InputScalar, Scalar, Tensor, TensorView, all_,
                       any_, scope_ca, scope_cb, scope_cbuf, scope_cbuf_out, scope_cc,
                       scope_gm, scope_ubuf)
from .platform import Dprofile, get_target, set_target
from ._target import target

#: ``tik.all(...)`` / ``tik.any(...)`` conditions for if_scope
globals()["all"] = all_
globals()["any"] = any_
if _typing.TYPE_CHECKING:     # what the globals() lines bind, for type checkers
    from ._program import all_ as all, any_ as any  # noqa: A004

__all__ = ["Tik", "Tensor", "TensorView", "Scalar", "InputScalar", "Expr", "scope_gm",
           "scope_ubuf", "scope_cbuf", "scope_cbuf_out", "scope_ca", "scope_cb", "scope_cc",
           "set_target", "get_target", "target", "Dprofile", "platform", "UNINIT_FILL", "VECTOR_OPS",
           "VECTOR_ISSUE_CYCLES", "MTE_ISSUE_CYCLES"]


from .._public import make_dir as _make_dir  # noqa: E402

__dir__ = _make_dir(globals(), ("all", "any"))   # tik.all / tik.any: not in __all__ (builtins)
