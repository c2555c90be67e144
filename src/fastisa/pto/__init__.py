"""fastisa.pto: the Huawei Ascend PTO tile ISA in Python (the PTO ISA docs, pages TRECIP and TROWEXPANDEXPDIF (github.com/hw-native-sys/pto-isa, docs/isa/)).

Mirrors the PTO C++ API: ``Tile`` (``Tile<TileType, T, Rows, Cols, BLayout, ValidRow,
ValidCol, SLayout, SFractalSize, PadVal>``), ``GlobalTensor``, ``TLOAD``/``TSTORE``/
``TASSIGN``, and the tile instructions as upper-case functions with dst first and the C++
template parameters as keyword arguments::

    from fastisa import pto
    x = pto.Tile(pto.TileType.Vec, "float32", 16, 16)
    out = pto.Tile(pto.TileType.Vec, "float32", 16, 16)
    x.data[:] = ...
    pto.TRECIP(out, x)
    pto.TRECIP(out, x, precision=pto.RecipAlgorithm.HIGH_PRECISION)

Every instruction iterates over dst's valid region and leaves the rest of dst untouched;
Python validates every rule (the PTO ISA docs and CPU simulator (github.com/hw-native-sys/pto-isa, docs/isa/ and include/pto/cpu/)) before the C kernel runs.
PTO-AS text programs: :mod:`fastisa.pto.asm`.
"""

from __future__ import annotations

from . import (_arith, _bitwise, _convert, _cube_ext, _gather, _layout, _memory_ext, _ops, _quant,
               _reduce_ext, _select, _sort, _sync, _tile)
from ._ops import *  # noqa: F401,F403
from ._ops import RecipAlgorithm, RoundMode, expdif_tmp_bytes
from ._tile import *  # noqa: F401,F403
from ._sync import pipe_barrier, set_flag, wait_flag  # noqa: F401
# ---- issue 13 families (pto-isa helper) ----
from ._arith import *  # noqa: F401,F403
from ._bitwise import *  # noqa: F401,F403
from ._convert import *  # noqa: F401,F403
from ._cube_ext import *  # noqa: F401,F403
from ._gather import *  # noqa: F401,F403
from ._layout import *  # noqa: F401,F403
from ._memory_ext import *  # noqa: F401,F403
from ._quant import *  # noqa: F401,F403
from ._reduce_ext import *  # noqa: F401,F403
from ._select import *  # noqa: F401,F403
from ._sort import *  # noqa: F401,F403
from ._tile import (BUFFER_BYTES, DYNAMIC, BLayout, GlobalTensor, Layout, PadValue, SLayout, Tile,
                    TileType)

# ---- PTO-AS helper (ptoas): TPRINT ----
from . import _print  # noqa: E402
from ._print import *  # noqa: F401,F403,E402

from ._target import target  # noqa: E402

# ---- branch ptolowp: fixpipe (TSTORE quantising / ReLU forms) ----
from . import _conv, _cube_mx, _fixpipe, _tquant  # noqa: E402
from ._conv import *  # noqa: F401,F403,E402
from ._cube_mx import *  # noqa: F401,F403,E402
from ._tquant import *  # noqa: F401,F403,E402
from ._fixpipe import *  # noqa: F401,F403,E402
# ---- ptocomm helper: ranks/cores, communication, pipes, TRANDOM ----
from . import _comm, _cores, _pipes, _random  # noqa: E402
from ._cores import *  # noqa: F401,F403,E402
from ._pipes import *  # noqa: F401,F403,E402
from ._random import *  # noqa: F401,F403,E402
from ._comm import (AsyncEvent, AsyncSession, NotifyOp, ParallelGroup, ReduceOp,  # noqa: E402,F401
                    Signal, Signal2D, TBROADCAST, TGET, TGET_ASYNC, TNOTIFY, TPUT, TPUT_ASYNC,
                    TREDUCE, TTEST, TWAIT, WaitCmp)
from . import comm  # noqa: E402,F401
# ---- branch ptoisa2: TIMG2COL and its configuration, TEXTRACT from a ConvTile ----
from . import _img2col  # noqa: E402
from ._img2col import *  # noqa: F401,F403,E402

#: The C++ name of the TCVT rounding-mode enum is RoundMode; CastMode is an alias.
CastMode = RoundMode

__all__ = list(_tile.__all__) + list(_ops.__all__) + ["expdif_tmp_bytes", "CastMode",
                                                    "set_flag", "wait_flag", "pipe_barrier",
                                                    "target"]
__all__ += (list(_arith.__all__) + list(_bitwise.__all__) + list(_convert.__all__)
            + list(_cube_ext.__all__)
            + list(_gather.__all__) + list(_layout.__all__) + list(_memory_ext.__all__)
            + list(_quant.__all__)
            + list(_reduce_ext.__all__)
            + list(_select.__all__) + list(_sort.__all__))
__all__ += list(_print.__all__)  # PTO-AS helper (ptoas)
__all__ += list(_fixpipe.__all__) + list(_cube_mx.__all__) + list(_tquant.__all__)  # ptolowp
__all__ += list(_conv.__all__)  # branch ptolowp
__all__ += (list(_cores.__all__) + list(_pipes.__all__) + list(_random.__all__)  # ptocomm
            + [n for n in _comm.__all__ if n not in ("TGATHER", "TSCATTER", "AtomicType",
                                                     "DmaEngine")])
__all__ += list(_img2col.__all__)  # branch ptoisa2


from .._public import make_dir as _make_dir  # noqa: E402

__dir__ = _make_dir(globals())
