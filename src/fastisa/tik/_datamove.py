"""TIK ``data_move``: one call of the DMA kernel (``csrc/fastisa/walker.h``)."""

from __future__ import annotations

from .. import cost
from .._kernels import walker as _w
from ..errors import AccessError, AlignmentError, ConstraintError
from . import _program as P
from ._base import MTE_ISSUE_CYCLES, _Operand, _check_int, _is_dyn, _timed
from ._program import Expr

class _DataMove:
    _PATHS = {(0, 1), (1, 0), (1, 1), (0, 2), (2, 1)}

    def __init__(self, tik, dst, src, sid, nburst, burst, src_stride, dst_stride):
        name = "data_move"
        for pname, x in (("dst", dst), ("src", src), ("sid", sid), ("nburst", nburst),
                         ("burst", burst), ("src_stride", src_stride),
                         ("dst_stride", dst_stride)):
            P.check_owner(tik, name, pname, x)
        self.d = _Operand(name, "dst", dst)
        self.s = _Operand(name, "src", src)
        # dtypes may differ: the DMA copies 32-byte blocks (TIK's debugger too: issue 18 B4)
        path = (self.s.t.sidx, self.d.t.sidx)
        ok = path in self._PATHS or (path == (2, 0) and tik.target.family == "a2")
        if not ok:
            raise ConstraintError(f"data_move: the path {self.s.t.scope} -> {self.d.t.scope} "
                                  f"is not supported on {tik.target.name}")
        _check_int(name, "sid", sid, 0, 15)
        _check_int(name, "nburst", nburst, 1, 4095)
        _check_int(name, "burst_len", burst, 1, 65535)
        _check_int(name, "src_stride", src_stride, 0, 65535)
        _check_int(name, "dst_stride", dst_stride, 0, 65535)
        self.args = (nburst, burst, src_stride, dst_stride)
        self.names = ("nburst", "burst_len", "src_stride", "dst_stride")
        self._dyn = any(_is_dyn(a) for a in self.args) or self.d.off is None or \
            self.s.off is None
        if not self._dyn:
            self._v = self._resolve(None)
            self.run = self._run_static
        else:
            self.run = self._run_dynamic

    def _resolve(self, env):
        vals = []
        for a, n, lo, hi in zip(self.args, self.names, (1, 1, 0, 0), (4095, 65535, 65535, 65535)):
            v = int(a.fn(env) if isinstance(a, Expr) else a)
            if not lo <= v <= hi:
                raise ConstraintError(f"data_move: {n} should be in the range of [{lo}, {hi}], "
                                      f"input {n}: {v}")
            vals.append(v)
        nburst, burst, sgap, dgap = vals
        span = ((nburst - 1) * (burst + sgap) + burst) * 32, ((nburst - 1) * (burst + dgap) +
                                                               burst) * 32
        addrs = []
        for o, extent in ((self.s, span[0]), (self.d, span[1])):
            s = o.off if o.off is not None else int(o.off_fn(env))
            if s < 0:
                raise AccessError(f"data_move: {o.role} start element of tensor {o.t.name} "
                                  f"must be >= 0, got {s}")
            addr = o.t.byte_off + s * o.es
            if o.t.sidx != 0 and addr % 32:
                raise AlignmentError(f"data_move: Address align error! {o.role} ({o.t.name}"
                                     f"[{s}]) address {addr} is not 32 align")
            space = (o.t.nbytes + 31) // 32 * 32
            if s * o.es + extent > space:
                raise AccessError(f"data_move: AccessViolation: tensor {o.t.name} need "
                                  f"{'read' if o is self.s else 'write'} "
                                  f"{s * o.es + extent} bytes, but only {space} bytes space "
                                  f"(the tensor's {o.t.nbytes} bytes rounded up to 32)")
            addrs.append(addr)
        return (addrs[1], addrs[0], nburst, burst * 32, sgap * 32, dgap * 32,
                MTE_ISSUE_CYCLES + nburst * burst)

    def _run_static(self, st):
        doff, soff, nb, bl, sg, dg, cyc = self._v
        b = st.bufs
        _w.dma(b[self.d.t.sidx], doff, b[self.s.t.sidx], soff, nb, bl, sg, dg)
        if cost._ACTIVE.get():
            _timed(self, self._pipe(), "data_move", cyc, [self.s], [self.d])

    def _run_dynamic(self, st):
        doff, soff, nb, bl, sg, dg, cyc = self._resolve(st.env)
        b = st.bufs
        _w.dma(b[self.d.t.sidx], doff, b[self.s.t.sidx], soff, nb, bl, sg, dg)
        if cost._ACTIVE.get():
            _timed(self, self._pipe(), "data_move", cyc, [self.s], [self.d])

    def _pipe(self):
        """The pipe TIK issues this data_move on (TIK's data_move dma_list, 2020 source
        te/tik/api/tik_data_operation_api.py): GM -> UB/L1 MTE2, UB -> GM/L1 MTE3,
        L1 -> UB MTE1, UB -> UB the vector pipe."""
        return {(0, 1): "MTE2", (0, 2): "MTE2", (1, 0): "MTE3", (1, 2): "MTE3",
                (2, 1): "MTE1", (1, 1): "Vector"}.get((self.s.t.sidx, self.d.t.sidx), "MTE2")
