"""PTO communication instructions (``pto::comm``): remote copies, signals and collectives
between simulated ranks (pto-isa docs/isa/comm/*.md; where the docs are silent the CPU
simulator, include/pto/cpu/comm/*.hpp, hw-native-sys/pto-isa).

fastisa's ranks share one address space, as on the CPU simulator: a "remote" GlobalTensor
is any GlobalTensor (the caller builds the symmetric buffers, e.g. one numpy array per
rank).  Ranks run with :func:`fastisa.pto.launch` (turn-taking threads, deterministic);
``TWAIT`` lets the other ranks run until its condition holds and raises ConstraintError
("deadlock") when none can make it hold.

* ``TPUT(dst, src, staging[, pong], atomic=)``: ``dst = src`` (``AtomicAdd``: ``dst +=
  src``, in the element type: floats rounded once, integers wrap) over dst's 5-D shape;
  the staging tile(s) must be Vec tiles of the element type and keep their contents (the
  CPU simulator copies GM to GM; on hardware the payload passes through them in chunks).
* ``TGET(dst, src, staging[, pong])``: ``dst = src``.
* ``TPUT_ASYNC`` / ``TGET_ASYNC(dst, src[, session])``: the same copy, complete at once;
  returns an :class:`AsyncEvent` whose ``wait()``/``test()`` give True.
* ``TNOTIFY(signal, value, op)``: ``signal[0] = value`` (``Set``) or ``+= value``
  (``AtomicAdd``, int32 wrap-around).
* ``TWAIT(signal, cmp_value, cmp)``: wait until every element of the signal tensor
  satisfies ``element <cmp> cmp_value``; ``TTEST``: whether they do now.
* ``TBROADCAST(group, src, staging[, pong])``: every member of ``group`` ``= src``.
* ``TREDUCE(group, dst, acc, recv, op)`` / ``(group, dst, acc, ping, pong, op)``: ``dst =
  group[root] (+|max|min) group[r] ...`` for the other ranks in index order, chunked
  through ``acc``/``recv`` exactly as the CPU simulator (TLOAD, TADD/TMAX/TMIN, TSTORE per
  chunk of ``acc``'s valid shape), so the rounding is that of the tile instructions.
* ``TGATHER(group, dst, staging[, pong])``: dst rows ``r*H .. r*H+H-1`` = rank r's ``H``
  rows (concatenation along DIM_3); ``TSCATTER(group, src, staging[, pong])``: the reverse.
"""

from __future__ import annotations

import enum
from typing import Sequence

import numpy as np

from ..errors import ConstraintError
from . import _cores
from ._tile import GlobalTensor, Tile, TileType

__all__ = ["NotifyOp", "WaitCmp", "ReduceOp", "AtomicType", "DmaEngine", "ParallelGroup",
           "AsyncEvent", "AsyncSession", "Signal", "Signal2D", "TPUT", "TGET", "TPUT_ASYNC",
           "TGET_ASYNC", "TNOTIFY", "TWAIT", "TTEST", "TBROADCAST", "TREDUCE", "TGATHER",
           "TSCATTER"]


class NotifyOp(enum.IntEnum):
    """include/pto/comm/comm_types.hpp ``NotifyOp``."""
    AtomicAdd = 0
    Set = 1


class WaitCmp(enum.IntEnum):
    """include/pto/comm/comm_types.hpp ``WaitCmp`` (TTEST's ``CmpMode`` has the same names)."""
    EQ = 0
    NE = 1
    GT = 2
    GE = 3
    LT = 4
    LE = 5


class ReduceOp(enum.IntEnum):
    """include/pto/comm/comm_types.hpp ``ReduceOp``."""
    Sum = 0
    Max = 1
    Min = 2


class AtomicType(enum.IntEnum):
    """pto ``AtomicType`` for TPUT: ``AtomicNone`` stores, ``AtomicAdd`` accumulates."""
    AtomicNone = 0
    AtomicAdd = 1


class DmaEngine(enum.IntEnum):
    """The async copy engine (no effect in fastisa: the copy completes at once)."""
    SDMA = 0
    URMA = 1
    RDMA = 2


_CMP = {WaitCmp.EQ: np.equal, WaitCmp.NE: np.not_equal, WaitCmp.GT: np.greater,
        WaitCmp.GE: np.greater_equal, WaitCmp.LT: np.less, WaitCmp.LE: np.less_equal}


def _enum(instr, param, cls, v):
    try:
        return cls(getattr(v, "value", v) if not isinstance(v, str) else cls[v])
    except (ValueError, KeyError):
        raise ConstraintError(f"{instr}: {param} must be one of "
                              f"{', '.join(m.name for m in cls)}, got {v!r}") from None


def _gt(instr, param, g) -> GlobalTensor:
    if not isinstance(g, GlobalTensor):
        raise ConstraintError(f"{instr}: {param} must be a GlobalTensor, got "
                              f"{type(g).__name__}")
    return g


def Signal(array: np.ndarray, offset: int = 0) -> GlobalTensor:  # noqa: N802
    """``comm::Signal``: the one int32 at ``array.flat[offset]`` as a 1x1x1x1x1 GlobalTensor."""
    if not isinstance(array, np.ndarray) or array.dtype != np.int32:
        raise ConstraintError(f"Signal: array must be an int32 numpy array, got "
                              f"{getattr(array, 'dtype', type(array).__name__)}")
    flat = array.reshape(-1)
    if not 0 <= offset < flat.size:
        raise ConstraintError(f"Signal: offset must be in [0, {flat.size}), got {offset}")
    return GlobalTensor(flat[offset:], (1, 1, 1, 1, 1), (1, 1, 1, 1, 1))


def Signal2D(array: np.ndarray, rows: int, cols: int, stride: int | None = None,  # noqa: N802
             offset: int = 0) -> GlobalTensor:
    """``comm::Signal2D<rows, cols>(ptr[, stride])``: a rows x cols int32 signal matrix at
    ``array.flat[offset]`` with row pitch ``stride`` (default ``cols``) elements."""
    if not isinstance(array, np.ndarray) or array.dtype != np.int32:
        raise ConstraintError(f"Signal2D: array must be an int32 numpy array, got "
                              f"{getattr(array, 'dtype', type(array).__name__)}")
    stride = cols if stride is None else stride
    return GlobalTensor(array.reshape(-1)[offset:], (1, 1, 1, rows, cols),
                        (1, 1, 1, stride, 1))


class ParallelGroup:
    """``comm::ParallelGroup<GlobalTensor>(tensors, size, root_idx)``: rank r's buffer is
    ``tensors[r]``; ``root_idx`` is the calling rank."""

    def __init__(self, tensors: Sequence[GlobalTensor], size: int | None = None,
                 root_idx: int = 0) -> None:
        tensors = list(tensors)
        size = len(tensors) if size is None else int(size)
        if not 1 <= size <= len(tensors):
            raise ConstraintError(f"ParallelGroup: size must be in [1, {len(tensors)}] (the "
                                  f"number of tensors), got {size}")
        for k, t in enumerate(tensors[:size]):
            _gt("ParallelGroup", f"tensors[{k}]", t)
        if any(t.array.dtype != tensors[0].array.dtype for t in tensors[:size]):
            raise ConstraintError("ParallelGroup: every tensor must have one element type")
        if not 0 <= int(root_idx) < size:
            raise ConstraintError(f"ParallelGroup: root_idx must be in [0, {size}), got "
                                  f"{root_idx}")
        self.tensors = tensors[:size]
        self.root_idx = int(root_idx)

    def GetSize(self) -> int:  # noqa: N802
        return len(self.tensors)

    def GetRootIdx(self) -> int:  # noqa: N802
        return self.root_idx

    def __len__(self) -> int:
        return len(self.tensors)

    def __getitem__(self, r: int) -> GlobalTensor:
        return self.tensors[r]


class AsyncSession:
    """An async-copy session (its workspace is not modelled: copies complete at once)."""

    def __init__(self, engine: DmaEngine | int = DmaEngine.SDMA) -> None:
        self.engine = _enum("AsyncSession", "engine", DmaEngine, engine)


class AsyncEvent:
    """The event an async copy returns; the copy has completed."""

    def __init__(self, engine: DmaEngine) -> None:
        self.engine = engine
        self.handle = 1

    def wait(self, session: AsyncSession | None = None) -> bool:
        return True

    def test(self, session: AsyncSession | None = None) -> bool:
        return True


def _staging(instr, tiles, dtype):
    for k, t in enumerate(tiles):
        if not isinstance(t, Tile):
            raise ConstraintError(f"{instr}: staging tile {k} must be a Tile, got "
                                  f"{type(t).__name__}")
        if t.loc != TileType.Vec:
            raise ConstraintError(f"{instr}: staging tiles must be Vec (UB) tiles, got "
                                  f"{t.loc.name}")
        if t.dtype.name != np.dtype(dtype).name:
            raise ConstraintError(f"{instr}: the staging tile's dtype must equal the "
                                  f"GlobalTensor's ({np.dtype(dtype).name}), got "
                                  f"{t.dtype.name}")
    if len(tiles) == 2:
        a, b = tiles
        if (a.rows, a.cols, a.dtype.name) != (b.rows, b.cols, b.dtype.name):
            raise ConstraintError(f"{instr}: ping and pong tiles must have the same type and "
                                  f"dimensions")
        if a is b:
            raise ConstraintError(f"{instr}: ping and pong must be two tiles at "
                                  "non-overlapping UB offsets, got the same tile twice")


def _pair(instr, dst, src):
    _gt(instr, "dst", dst)
    _gt(instr, "src", src)
    if dst.array.dtype != src.array.dtype:
        raise ConstraintError(f"{instr}: src and dst must have one element type, got "
                              f"{src.array.dtype} and {dst.array.dtype}")
    if dst.layout != src.layout:
        raise ConstraintError(f"{instr}: src and dst must have one layout, got "
                              f"{src.layout.name} and {dst.layout.name}")
    _check_reach(instr, "src", src, dst.shape)
    if not dst.array.flags.writeable:
        raise ConstraintError(f"{instr}: dst's array is read-only")


def _check_reach(instr, param, g, shape):
    """``g`` read with ``shape`` (another tensor's) stays inside g's array."""
    if 0 in shape:
        return
    hi = sum((n - 1) * s for n, s in zip(shape, g.strides))
    if hi >= g.array.size:
        from ..errors import AccessError
        raise AccessError(f"{instr}: {param} read with shape {shape} and strides {g.strides} "
                          f"reaches element {hi}, outside its array of {g.array.size}")


def _view(g: GlobalTensor, shape=None) -> np.ndarray:
    flat = g.array.reshape(-1, order="A")
    isz = flat.dtype.itemsize
    return np.lib.stride_tricks.as_strided(
        flat, shape=tuple(shape or g.shape), strides=tuple(s * isz for s in g.strides),
        writeable=g.array.flags.writeable)


def _copy(dst: GlobalTensor, src: GlobalTensor, add: bool = False) -> None:
    d = _view(dst)
    s = np.array(_view(src, dst.shape))      # a copy: an overlapping src reads old values
    if add:
        d[...] = (d + s).astype(d.dtype) if d.dtype.kind == "f" or d.dtype.name == "bfloat16" \
            else (d.astype(np.int64) + s).astype(d.dtype)
    else:
        d[...] = s


def TPUT(dst: GlobalTensor, src: GlobalTensor, staging: Tile, pong: Tile | None = None,  # noqa: N802
         atomic: AtomicType | int = AtomicType.AtomicNone) -> None:
    """``dst(remote) = src(local)`` (``atomic=AtomicAdd``: ``dst += src``) over dst's 5-D
    shape, through the UB staging tile(s) (docs/isa/comm/TPUT.md).  ``staging``/``pong``:
    Vec tiles of the element type, unchanged (CPU simulator).  Raises ConstraintError
    (dtype/layout mismatch, bad tiles or atomic type), AccessError (src too small)."""
    atomic = _enum("TPUT", "atomic", AtomicType, atomic)
    _pair("TPUT", dst, src)
    _staging("TPUT", [staging] + ([] if pong is None else [pong]), dst.array.dtype)
    _copy(dst, src, atomic == AtomicType.AtomicAdd)


def TGET(dst: GlobalTensor, src: GlobalTensor, staging: Tile, pong: Tile | None = None) -> None:  # noqa: N802
    """``dst(local) = src(remote)`` over dst's 5-D shape (docs/isa/comm/TGET.md); tiles as
    TPUT.  Raises ConstraintError / AccessError as TPUT."""
    _pair("TGET", dst, src)
    _staging("TGET", [staging] + ([] if pong is None else [pong]), dst.array.dtype)
    _copy(dst, src)


def _async(instr, dst, src, session, engine):
    _pair(instr, dst, src)
    if session is not None and not isinstance(session, AsyncSession):
        raise ConstraintError(f"{instr}: session must be an AsyncSession, got "
                              f"{type(session).__name__}")
    eng = _enum(instr, "engine", DmaEngine, engine if session is None else session.engine)
    _copy(dst, src)
    return AsyncEvent(eng)


def TPUT_ASYNC(dst: GlobalTensor, src: GlobalTensor, session: AsyncSession | None = None,  # noqa: N802
               engine: DmaEngine | int = DmaEngine.SDMA) -> AsyncEvent:
    """``dst(remote) = src(local)``, complete on return (docs/isa/comm/TPUT_ASYNC.md; the CPU
    simulator copies at once).  Returns an AsyncEvent.  Raises ConstraintError as TPUT."""
    return _async("TPUT_ASYNC", dst, src, session, engine)


def TGET_ASYNC(dst: GlobalTensor, src: GlobalTensor, session: AsyncSession | None = None,  # noqa: N802
               engine: DmaEngine | int = DmaEngine.SDMA) -> AsyncEvent:
    """``dst(local) = src(remote)``, complete on return (docs/isa/comm/TGET_ASYNC.md)."""
    return _async("TGET_ASYNC", dst, src, session, engine)


def _signal(instr, sig) -> np.ndarray:
    _gt(instr, "signal", sig)
    if sig.array.dtype != np.int32:
        raise ConstraintError(f"{instr}: the signal's element type must be int32, got "
                              f"{sig.array.dtype}")
    return _view(sig)


def TNOTIFY(signal: GlobalTensor, value: int, op: NotifyOp | int = NotifyOp.Set) -> None:  # noqa: N802
    """``signal[0] = value`` (``Set``) or ``signal[0] += value`` (``AtomicAdd``, int32
    wrap-around) on the first element of an int32 signal tensor (docs/isa/comm/TNOTIFY.md).
    A rank whose TWAIT is satisfied by the new value runs at once (then this rank goes on),
    so a waiter sees every value, as a rank polling the memory would.  Raises ConstraintError (not
    int32, value outside int32, bad op)."""
    op = _enum("TNOTIFY", "op", NotifyOp, op)
    v = _signal("TNOTIFY", signal)
    value = int(value)
    if not -2**31 <= value < 2**31:
        raise ConstraintError(f"TNOTIFY: value must be an int32, got {value}")
    first = v.reshape(-1)[:1] if v.size else None
    if first is None:
        raise ConstraintError("TNOTIFY: the signal tensor has no element")
    idx = (0,) * 5
    if op == NotifyOp.Set:
        v[idx] = value
    else:
        v[idx] = np.int32((int(v[idx]) + value + 2**31) % 2**32 - 2**31)
    _cores.notify()


def _test(v, cmp_value, cmp) -> bool:
    return bool(_CMP[cmp](v, np.int32(cmp_value)).all())


def TTEST(signal: GlobalTensor, cmp_value: int, cmp: WaitCmp | int) -> bool:  # noqa: N802
    """True when every element of the int32 signal tensor satisfies ``element <cmp>
    cmp_value`` (docs/isa/comm/TTEST.md), without waiting."""
    cmp = _enum("TTEST", "cmp", WaitCmp, cmp)
    v = _signal("TTEST", signal)
    return _test(v, cmp_value, cmp)


def TWAIT(signal: GlobalTensor, cmp_value: int, cmp: WaitCmp | int) -> None:  # noqa: N802
    """Wait until every element of the int32 signal tensor satisfies ``element <cmp>
    cmp_value`` (docs/isa/comm/TWAIT.md); the other ranks of the launch run meanwhile.
    Raises ConstraintError (a zero-sized signal, as the CPU simulator asserts; not int32;
    a deadlock: no rank can change the signal any more)."""
    cmp = _enum("TWAIT", "cmp", WaitCmp, cmp)
    v = _signal("TWAIT", signal)
    if v.size == 0:
        raise ConstraintError(f"TWAIT: every dimension of the signal shape must be > 0, got "
                              f"{signal.shape}")
    _cores.wait_until(lambda: _test(v, cmp_value, cmp),
                      f"signal {cmp.name} {int(cmp_value)}", "TWAIT")


def _group(instr, group) -> ParallelGroup:
    if not isinstance(group, ParallelGroup):
        raise ConstraintError(f"{instr}: group must be a ParallelGroup, got "
                              f"{type(group).__name__}")
    return group


def TBROADCAST(group: ParallelGroup, src: GlobalTensor, staging: Tile,  # noqa: N802
               pong: Tile | None = None) -> None:
    """Every member tensor of ``group`` (the root's included) ``= src``, over src's 5-D
    shape (docs/isa/comm/TBROADCAST.md).  Raises ConstraintError (dtype mismatch, tiles)."""
    g = _group("TBROADCAST", group)
    _gt("TBROADCAST", "src", src)
    for r, t in enumerate(g.tensors):
        if t.array.dtype != src.array.dtype:
            raise ConstraintError(f"TBROADCAST: group[{r}]'s element type must equal src's "
                                  f"({src.array.dtype}), got {t.array.dtype}")
        _check_reach("TBROADCAST", f"group[{r}]", t, src.shape)
    _staging("TBROADCAST", [staging] + ([] if pong is None else [pong]), src.array.dtype)
    for t in g.tensors:
        d = _view(t, src.shape)
        d[...] = np.array(_view(src))


def _chunks(instr, g: GlobalTensor, tile: Tile):
    """(outer index, row offset, rows, col offset, cols) of the CPU simulator's 2-D sliding."""
    s = g.shape
    th, tw = tile.valid_row, tile.valid_col
    if th <= 0 or tw <= 0:
        raise ConstraintError(f"{instr}: the tile's valid shape must be > 0, got {th}x{tw}")
    for i0 in range(s[0]):
        for i1 in range(s[1]):
            for i2 in range(s[2]):
                for r in range(0, s[3], th):
                    for c in range(0, s[4], tw):
                        yield (i0, i1, i2), r, min(th, s[3] - r), c, min(tw, s[4] - c)


def _sub(g: GlobalTensor, outer, r, h, c, w) -> GlobalTensor:
    st = g.strides
    off = outer[0] * st[0] + outer[1] * st[1] + outer[2] * st[2] + r * st[3] + c * st[4]
    return GlobalTensor(g.array.reshape(-1, order="A")[off:], (1, 1, 1, h, w),
                        (1, 1, 1, st[3], st[4]))


def TREDUCE(group: ParallelGroup, dst: GlobalTensor, acc: Tile, recv: Tile,  # noqa: N802
            *rest) -> None:
    """``dst = group[root] ⊕ group[r0] ⊕ ...`` (the other ranks in index order), ⊕ = Sum
    (TADD), Max (TMAX) or Min (TMIN), chunked through ``acc``/``recv`` by their valid shape
    (CPU simulator include/pto/cpu/comm/TReduce.hpp; docs/isa/comm/TREDUCE.md).  Call as
    ``TREDUCE(group, dst, acc, recv, op)`` or ``(group, dst, acc, ping, pong, op)``.
    ``acc``/``recv`` end holding the last chunk.  Raises ConstraintError (dtype/tile rules,
    a partial chunk with a tile whose valid shape was fixed)."""
    from . import _ops, _tile
    if len(rest) == 1:
        pong, op = None, rest[0]
    elif len(rest) == 2:
        pong, op = rest
    else:
        raise ConstraintError(f"TREDUCE: expected (group, dst, acc, recv, op) or (group, dst, "
                              f"acc, ping, pong, op), got {4 + len(rest)} arguments")
    op = _enum("TREDUCE", "op", ReduceOp, op)
    g = _group("TREDUCE", group)
    _gt("TREDUCE", "dst", dst)
    tiles = [acc, recv] + ([] if pong is None else [pong])
    _staging("TREDUCE", tiles, dst.array.dtype)
    for r, t in enumerate(g.tensors):
        if t.array.dtype != dst.array.dtype:
            raise ConstraintError(f"TREDUCE: group[{r}]'s element type must equal dst's "
                                  f"({dst.array.dtype}), got {t.array.dtype}")
        _check_reach("TREDUCE", f"group[{r}]", t, dst.shape)
    fn = {ReduceOp.Sum: _ops.TADD, ReduceOp.Max: _ops.TMAX, ReduceOp.Min: _ops.TMIN}[op]
    root = g.root_idx
    th, tw = acc.valid_row, acc.valid_col
    for k, t in enumerate(tiles):
        if t.rows < th or t.cols < tw:
            raise ConstraintError(f"TREDUCE: tile {k} ({t.rows}x{t.cols}) cannot hold acc's "
                                  f"{th}x{tw} chunk")
    chunks = list(_chunks("TREDUCE", dst, acc))
    for k, t in enumerate(tiles):      # the docs' chunked-mode rule, before any write
        for _o, _r, h, _c, w in chunks:
            if (h != t.valid_row and not t._dyn_row) or (w != t.valid_col and not t._dyn_col):
                raise ConstraintError(
                    f"TREDUCE: tile {k} has a static valid shape {t.valid_row}x{t.valid_col} "
                    f"but a {h}x{w} chunk is needed (dst's DIM_3/DIM_4 {dst.shape[3]}x"
                    f"{dst.shape[4]} must be divisible by acc's valid shape, or declare the "
                    f"tiles' valid shape DYNAMIC)")
    work = tiles
    for outer, r, h, c, w in chunks:
        for t in work:
            if t.valid_row != h:
                t.set_valid_row(h)
            if t.valid_col != w:
                t.set_valid_col(w)
        _tile.TLOAD(acc, _sub(g.tensors[root], outer, r, h, c, w))
        n = 0
        for rk in range(len(g.tensors)):
            if rk == root:
                continue
            recv_t = work[1 + (n % (len(work) - 1))]
            _tile.TLOAD(recv_t, _sub(g.tensors[rk], outer, r, h, c, w))
            fn(acc, acc, recv_t)
            n += 1
        _tile.TSTORE(_sub(dst, outer, r, h, c, w), acc)


def _rows_op(instr, group, big, tiles, scatter):
    g = _group(instr, group)
    _gt(instr, "dst" if not scatter else "src", big)
    _staging(instr, tiles, big.array.dtype)
    n = len(g.tensors)
    h = g.tensors[0].shape[3]
    if big.shape[3] < n * h:
        raise ConstraintError(f"{instr}: {'src' if scatter else 'dst'} must have at least "
                              f"{n} x {h} = {n * h} rows in DIM_3, got {big.shape[3]}")
    for r, t in enumerate(g.tensors):
        if t.array.dtype != big.array.dtype:
            raise ConstraintError(f"{instr}: group[{r}]'s element type must be "
                                  f"{big.array.dtype}, got {t.array.dtype}")
        if t.shape[:3] != big.shape[:3] or t.shape[4] != big.shape[4] or t.shape[3] != h:
            raise ConstraintError(f"{instr}: group[{r}]'s shape {t.shape} must match "
                                  f"(D0, D1, D2, {h}, {big.shape[4]}) of the big tensor")
    bv = _view(big)
    for r, t in enumerate(g.tensors):
        tv = _view(t)
        part = bv[:, :, :, r * h:(r + 1) * h, :]
        if scatter:
            tv[...] = np.array(part)
        else:
            part[...] = np.array(tv)


def TGATHER(group: ParallelGroup, dst: GlobalTensor, staging: Tile,  # noqa: N802
            pong: Tile | None = None) -> None:
    """``dst[..., r*H + i, j] = group[r][..., i, j]``: the ranks' tensors concatenated along
    DIM_3 (docs/isa/comm/TGATHER.md).  Raises ConstraintError (shapes, dtypes, tiles)."""
    _rows_op("TGATHER", group, dst, [staging] + ([] if pong is None else [pong]), False)


def TSCATTER(group: ParallelGroup, src: GlobalTensor, staging: Tile,  # noqa: N802
             pong: Tile | None = None) -> None:
    """``group[r][..., i, j] = src[..., r*H + i, j]`` (docs/isa/comm/TSCATTER.md; rows past
    ``N*H`` are not read)."""
    _rows_op("TSCATTER", group, src, [staging] + ([] if pong is None else [pong]), True)
