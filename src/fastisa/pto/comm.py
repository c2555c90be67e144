"""``pto::comm``: the PTO communication instructions between simulated ranks (see
:mod:`fastisa.pto._comm` for the semantics; pto-isa docs/isa/comm/).  ``comm.TGATHER`` and
``comm.TSCATTER`` are the collectives (the tile instructions of those names are
``fastisa.pto.TGATHER`` / ``TSCATTER``)."""

from __future__ import annotations

from ._comm import *  # noqa: F401,F403
from ._comm import __all__ as _all
from ._cores import get_rank, get_rank_size, launch  # noqa: F401

__all__ = list(_all) + ["launch", "get_rank", "get_rank_size"]
