"""TIK vector instructions on the ONE C walker (``csrc/fastisa/walker.h``).

Every vector instruction is a row of :data:`VECTOR_OPS` (name -> op code and family);
all of them go through :class:`_Vector`, which validates its arguments (immediates when
recorded, Scalars/Exprs when run), then calls the walker with the instruction as data.
The overlap geometry (:func:`_blocks_meet`) lives here too.
"""

from __future__ import annotations

import numpy as np

from .. import cost
from .._kernels import walker as _w
from ..errors import AccessError, AlignmentError, ConstraintError, OverlapError
from . import _program as P
from ._base import (VECTOR_ISSUE_CYCLES, _U64, _Operand, _check_int, _check_repeat, _is_dyn,
                    _rep_blocks, _s64, _static, _stride_unit, _timed)
from ._program import Expr, cast_value, scope_ubuf

__all__ = ["VECTOR_OPS"]

# walker.h op codes
ADDS, MULS, MAXS, MINS, AXPY = 0, 1, 2, 3, 4
ABS, EXP, LN, REC, RELU, RSQRT, SQRT, NOT = 5, 6, 7, 8, 9, 10, 11, 12
ADD, SUB, MUL, DIV, MAX, MIN, AND, OR = 13, 14, 15, 16, 17, 18, 19, 20
DUP, CONV = 21, 22
MLA = 23
#: ops whose walker expression reads dst (the overlap rules treat dst as a source)
_READS_DST = {AXPY, MLA}

#: instruction name -> (walker op, family).  Families: "vs" vector-scalar, "un"
#: single-source, "bin" two-tensor, "dup" fill, "conv" conversion.
VECTOR_OPS = {
    "vec_adds": (ADDS, "vs"), "vec_muls": (MULS, "vs"), "vec_axpy": (AXPY, "vs"),
    "vadds": (ADDS, "vs"), "vmuls": (MULS, "vs"), "vmaxs": (MAXS, "vs"), "vmins": (MINS, "vs"),
    "vaxpy": (AXPY, "vs"),
    "vec_abs": (ABS, "un"), "vec_exp": (EXP, "un"), "vec_ln": (LN, "un"),
    "vec_rec": (REC, "un"), "vec_relu": (RELU, "un"), "vec_rsqrt": (RSQRT, "un"),
    "vec_sqrt": (SQRT, "un"), "vec_not": (NOT, "un"),
    "vabs": (ABS, "un"), "vexp": (EXP, "un"), "vln": (LN, "un"), "vrec": (REC, "un"),
    "vrelu": (RELU, "un"), "vrsqrt": (RSQRT, "un"), "vsqrt": (SQRT, "un"), "vnot": (NOT, "un"),
    "vec_add": (ADD, "bin"), "vec_sub": (SUB, "bin"), "vec_mul": (MUL, "bin"),
    "vec_div": (DIV, "bin"), "vec_max": (MAX, "bin"), "vec_min": (MIN, "bin"),
    "vec_and": (AND, "bin"), "vec_or": (OR, "bin"),
    "vadd": (ADD, "bin"), "vsub": (SUB, "bin"), "vmul": (MUL, "bin"), "vdiv": (DIV, "bin"),
    "vmax": (MAX, "bin"), "vmin": (MIN, "bin"), "vand": (AND, "bin"), "vor": (OR, "bin"),
    "vec_dup": (DUP, "dup"), "vector_dup": (DUP, "dup"),
    "vec_conv": (CONV, "conv"), "vconv": (CONV, "conv"),
    "vmla": (MLA, "bin"),
}

#: binary ops whose dst may be src1 with both rep strides 0 (the accumulate idiom)
_ACCUMULATE_OPS = {ADD, SUB, MUL, MAX, MIN, AND, OR}

_ROUND = {"": 0, "none": 0, "round": 1, "floor": 2, "ceil": 3, "ceiling": 3,
          "away-zero": 4, "to-zero": 5, "odd": 6}
#: vec_conv (src, dst) -> allowed round modes
_CONV = {
    ("float16", "float32"): ("", "none"),
    ("float32", "float16"): ("", "none", "odd"),
    ("float16", "int32"): ("round", "floor", "ceil", "ceiling", "away-zero", "to-zero"),
    ("float32", "int32"): ("round", "floor", "ceil", "ceiling", "away-zero", "to-zero"),
    ("int32", "float32"): ("", "none"),
    ("int32", "float16"): ("", "none"),
    ("float16", "int8"): ("", "none", "round", "floor", "ceil", "ceiling", "away-zero",
                          "to-zero"),
    ("float16", "uint8"): ("", "none", "round", "floor", "ceil", "ceiling", "away-zero",
                           "to-zero"),
    ("int8", "float16"): ("", "none"),
    ("uint8", "float16"): ("", "none"),
}


class _Vector:
    """One recorded vector instruction."""

    def __init__(self, tik, name, op, family, mask, dst, srcs, scalar, repeat_times, blks,
                 reps, mask_mode="normal", round_mode="", stride_unit=0):
        self.tik = tik
        self.name = name
        self.op = op
        self.family = family
        tg = tik.target
        roles = ["dst"] + (["src0", "src1"] if family == "bin" else ["src"] * len(srcs))
        for r, x in zip(roles, [dst] + list(srcs)):
            P.check_owner(tik, name, r, x)
        for pname, x in (("mask", mask), ("scalar", scalar), ("repeat_times", repeat_times),
                         ("blk_stride", blks), ("rep_stride", reps)):
            P.check_owner(tik, name, pname, x)
        self.ops = [_Operand(name, roles[0], dst)] + [
            _Operand(name, r, s) for r, s in zip(roles[1:], srcs)]
        for o in self.ops:
            if o.t.scope != scope_ubuf:
                raise ConstraintError(f"{name}: {o.role} scope should be ub, input scope: "
                                      f"{o.t.scope}")
        d = self.ops[0].t.dtype
        # dtypes
        self.rnd = 0
        if family == "conv":
            s = self.ops[1].t.dtype
            if (s, d) not in _CONV:
                raise ConstraintError(f"{name}: conversion {s} -> {d} is not supported "
                                      f"(supported: {sorted(_CONV)})")
            rm = "" if round_mode is None else round_mode
            if rm not in _CONV[(s, d)]:
                raise ConstraintError(f"{name}: round_mode should be one of "
                                      f"{list(_CONV[(s, d)])} for {s} -> {d}, input "
                                      f"round_mode: {round_mode!r}")
            self.rnd = _ROUND[rm]
        elif op == AXPY and d == "float32" and self.ops[1].t.dtype == "float16":
            pass  # fmix: fp16 src and scalar, fp32 dst, 64 lanes
        else:
            for o in self.ops[1:]:
                if o.t.dtype != d:
                    raise ConstraintError(f"{name}: Intrinsic {name}'s {o.role}'s dtype should "
                                          f"be equal to dst's dtype, input: {o.t.dtype} vs {d}")
            if not tg.supports(name, d):
                raise ConstraintError(f"{name}: dtype {d} is not supported on {tg.name} "
                                      f"(supported: {list(tg.dtypes.get(name, ()))})")
        self.su = _stride_unit(name, tg, stride_unit)
        self.par = 256 // max(o.es for o in self.ops)
        # mask
        if mask_mode not in ("normal", "counter"):
            raise ConstraintError(f"{name}: mask_mode should be 'normal' or 'counter', input "
                                  f"mask_mode: {mask_mode!r}")
        self.counter = mask_mode == "counter" and tg.counter_mode
        self.mask = mask
        self._check_mask_static()
        # repeat_times / strides
        self.nrep = repeat_times
        if not self.counter:
            _check_repeat(name, repeat_times)
        blk_max = 255 if family == "bin" else 65535
        bnames = ["dst_blk_stride"] + [f"{r}_blk_stride" for r in roles[1:]]
        rnames = ["dst_rep_stride"] + [f"{r}_rep_stride" for r in roles[1:]]
        for v, n in zip(blks, bnames):
            _check_int(name, n, v, 0, blk_max)
        for v, n in zip(reps, rnames):
            _check_int(name, n, v, 0, 255)
        self.blks = list(blks)
        self.reps = list(reps)
        self.bnames, self.rnames = bnames, rnames
        # scalar operand, converted to the source dtype (dst dtype for dup)
        self.scalar_dtype = d if family == "dup" else self.ops[1].t.dtype
        self.scalar = scalar
        if family in ("vs", "dup"):
            if isinstance(scalar, Expr):
                if scalar.const is not None:
                    self.scalar = cast_value(self.scalar_dtype, scalar.const)
            elif isinstance(scalar, (int, float, np.integer, np.floating)) and not isinstance(
                    scalar, bool):
                self.scalar = cast_value(self.scalar_dtype, scalar)
            else:
                raise ConstraintError(f"{name}: scalar must be an int/float immediate or a "
                                      f"Scalar, got {scalar!r}")
        else:
            self.scalar = 0.0
        self.sat = 1 if tg.saturation else 0
        self._geom_cache = {}
        self._same_dep = {}
        self._dyn = (any(_is_dyn(x) for x in [mask if not isinstance(mask, (list, tuple))
                                                else mask[0], repeat_times] + list(blks) +
                         list(reps) + ([scalar] if family in ("vs", "dup") else []))
                     or (isinstance(mask, (list, tuple)) and any(_is_dyn(m) for m in mask))
                     or any(o.off is None for o in self.ops))
        self._fixed = None
        geo_dyn = (_is_dyn(mask) or (isinstance(mask, (list, tuple)) and any(
            _is_dyn(m) for m in mask)) or _is_dyn(repeat_times) or
            any(_is_dyn(x) for x in list(blks) + list(reps)))
        if self._dyn and not geo_dyn:
            self._prepare_fixed()
        if not self._dyn:
            self._p, self._cycles = self._resolve(None)
            self._s0 = self.ops[1].t.sidx if len(self.ops) > 1 else 1
            self._s1 = self.ops[2].t.sidx if len(self.ops) > 2 else self._s0
            self._ins = _w.Instr(self._p, self._s0, self._s1)
            self.run = self._run_static
        elif self._fixed is not None:
            self.run = self._run_fixed
        else:
            self.run = self._run_dynamic

    # ---- validation of the mask ------------------------------------------------------
    def _check_mask_static(self):
        name, mask, par = self.name, self.mask, self.par
        if self.counter:
            if isinstance(mask, (list, tuple)):
                raise ConstraintError(f"{name}: In counter_mode, mask should be an int or a "
                                      f"Scalar, input mask: {mask!r}")
            _check_int(name, "mask", mask, -(2**63), 2**63)
            if not _is_dyn(mask) and not 1 <= int(_static(mask)) <= 2**32 - 1:
                raise ConstraintError(f"{name}: In counter_mode, mask value should be in the "
                                      f"range of [1, 2**32-1], input mask: {int(_static(mask))}")
            return
        if isinstance(mask, (list, tuple)):
            if len(mask) != 2:
                raise ConstraintError(f"{name}: mask list should be [mask_h, mask_l], input "
                                      f"mask: {mask!r}")
            h, l = mask
            for v, n in ((h, "mask_h"), (l, "mask_l")):
                if isinstance(v, Expr) and v.const is None:
                    continue
                v = _static(v)
                if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                    raise ConstraintError(f"{name}: {n} must be an int or a Scalar, got {v!r}")
                if not 0 <= int(v) <= _U64 - 1:
                    raise ConstraintError(f"{name}: {n} should be in the range of "
                                          f"[0, 2**64-1], input {n}: {int(v)}")
            if not _is_dyn(h) and not _is_dyn(l):
                self._mask_bits(int(_static(h)), int(_static(l)))
            elif not _is_dyn(h) and par < 128 and int(_static(h)) != 0:
                raise ConstraintError(f"{name}: mask_h should be 0 for b32 tensor, input "
                                      f"mask_h: {int(_static(h))}")
        else:
            if isinstance(mask, Expr) and mask.const is None:
                return
            _check_int(name, "mask", mask, -(2**63), 2**63)
            m = int(_static(mask))
            if not 1 <= m <= par:
                raise ConstraintError(f"{name}: mask value should be in the range of [1, {par}] "
                                      f"for b{2048 // par} tensor, input mask: {m}")

    def _mask_bits(self, h, l):
        name, par = self.name, self.par
        h &= _U64 - 1
        l &= _U64 - 1
        if par < 128 and h != 0:
            raise ConstraintError(f"{name}: mask_h should be 0 for b32 tensor, input mask_h: {h}")
        if h == 0 and l == 0:
            raise ConstraintError(f"{name}: mask list value can not be [0, 0]")
        return l, h

    def _mask_value(self, env):
        """-> (lo, hi, counter, nrep, tail) with the mask validated."""
        name, mask, par = self.name, self.mask, self.par
        if self.counter:
            c = mask.fn(env) if isinstance(mask, Expr) else mask
            c = int(c)
            if not 1 <= c <= 2**32 - 1:
                raise ConstraintError(f"{name}: In counter_mode, mask value should be in the "
                                      f"range of [1, 2**32-1], input mask: {c}")
            nrep = -(-c // par)
            return -1, -1, 1, nrep, c - (nrep - 1) * par
        if isinstance(mask, (list, tuple)):
            h = int(mask[0].fn(env) if isinstance(mask[0], Expr) else mask[0])
            l = int(mask[1].fn(env) if isinstance(mask[1], Expr) else mask[1])
            for x, v, n in ((mask[0], h, "mask_h"), (mask[1], l, "mask_l")):
                # As TIK's debugger (debug/util.py set_vector_mask): an int64 Scalar/Expr
                # holds the 64 mask bits as a two's-complement pattern (-1: every lane),
                # since an int64 cannot reach 2**63; any other value must be in
                # [0, 2**64-1] like an immediate (a negative int32 is an error).
                if isinstance(x, Expr) and x.dtype == "int64" and -(1 << 63) <= v < 0:
                    continue
                if not 0 <= v <= _U64 - 1:
                    raise ConstraintError(f"{name}: {n} should be in the range of "
                                          f"[0, 2**64-1], input {n}: {v}")
            lo, hi = self._mask_bits(h, l)
        else:
            m = int(mask.fn(env) if isinstance(mask, Expr) else mask)
            if not 1 <= m <= par:
                raise ConstraintError(f"{name}: mask value should be in the range of [1, {par}] "
                                      f"for b{2048 // par} tensor, input mask: {m}")
            lo = (1 << min(m, 64)) - 1
            hi = (1 << (m - 64)) - 1 if m > 64 else 0
        nrep = self.nrep
        nrep = int(nrep.fn(env) if isinstance(nrep, Expr) else nrep)
        if not 0 <= nrep <= 255:
            raise ConstraintError(f"{self.name}: repeat_times should be in the range of "
                                  f"[0, 255], input repeat_times: {nrep}")
        return lo, hi, 0, nrep, 0

    # ---- geometry, bounds, alignment, overlap ----------------------------------------
    def _geometry(self, lo, hi, counter, nrep, tail, blks, reps):
        key = (lo, hi, counter, nrep, tail, tuple(blks), tuple(reps))
        g = self._geom_cache.get(key)
        if g is not None:
            return g
        par = self.par
        lanes_all = np.arange(par)
        if counter:
            full = lanes_all
            last = np.arange(tail)
        else:
            bits = np.array([(lo >> i) & 1 if i < 64 else (hi >> (i - 64)) & 1
                             for i in range(par)], dtype=bool)
            full = last = lanes_all[bits]
        g = []
        for o, blk, rep in zip(self.ops, blks, reps):
            B = o.B
            of = (full // B) * blk * B + full % B
            ol = (last // B) * blk * B + last % B
            mx = (nrep - 1) * rep * B + int(ol.max())
            if counter and nrep > 1:
                mx = max(mx, (nrep - 2) * rep * B + int(of.max()))
            # block offsets of the active blocks: full repeats, last repeat
            g.append((mx, (np.unique(full // B) * blk, np.unique(last // B) * blk),
                      len(np.unique(full // B))))
        if len(self._geom_cache) < 256:
            self._geom_cache[key] = g
        return g

    def _prepare_fixed(self):
        """Mask, repeats and strides are immediates, only start elements (or the scalar)
        are runtime values: validate the geometry once and keep the parameter block."""
        lo, hi, counter, nrep, tail = self._mask_value(None)
        blks = [int(_static(v)) for v in self.blks]
        reps = _rep_blocks(self.su, blks, [int(_static(v)) for v in self.reps])
        p = np.zeros(_w.NPARAM, dtype=np.int64)
        p[0] = self.op
        p[1:4] = -1
        p[13] = nrep
        geo = self._geometry(lo, hi, counter, nrep, tail, blks, reps) if nrep else None
        for i, o in enumerate(self.ops):
            p[1 + i] = o.code
            p[7 + i] = blks[i]
            p[10 + i] = reps[i]
        p[14] = self.par
        p[15] = _s64(lo & (_U64 - 1))
        p[16] = _s64(hi & (_U64 - 1))
        p[17] = counter
        p[18] = tail
        p[19] = self.sat
        p[20] = self.rnd
        gkey = (lo, hi, counter, nrep, tail, tuple(blks), tuple(reps))
        s0 = self.ops[1].t.sidx if len(self.ops) > 1 else 1
        s1 = self.ops[2].t.sidx if len(self.ops) > 2 else s0
        dt = self.ops[0].t
        alias = self.op in _READS_DST or any(
            o.t.sidx == dt.sidx and o.t.byte_off < dt.byte_off + dt.nbytes and
            dt.byte_off < o.t.byte_off + o.t.nbytes for o in self.ops[1:])
        # per operand: (const start or None, start fn, tensor byte offset, element size,
        # last element reached + 1 relative to the start, tensor size)
        opers = [(o.off, o.off_fn, o.t.byte_off, o.es, (g[0] + 1) if geo else 0, o.t.size)
                 for o, g in zip(self.ops, geo or [None] * len(self.ops))]
        self._fixed = (_w.Instr(p, s0, s1), VECTOR_ISSUE_CYCLES + nrep, geo, blks, reps, nrep,
                       gkey, alias, opers)

    def _fixed_error(self, i, s):
        o = self.ops[i]
        addr = o.t.byte_off + s * o.es
        if s < 0:
            return AccessError(f"{self.name}: {o.role} start element of tensor {o.t.name} "
                               f"must be >= 0, got {s}")
        if addr % 32:
            return AlignmentError(f"{self.name}: Address align error! {o.role} ({o.t.name}"
                                  f"[{s}]) address {addr} is not 32 align")
        need = s + self._fixed[8][i][4]
        return AccessError(f"{self.name}: `{o.t.name}` tensor overflow, instruction need "
                           f"{'write' if i == 0 else 'read'} {need} elements but only "
                           f"{o.t.size} elements space")

    def _run_fixed(self, st):
        ins, cyc, geo, blks, reps, nrep, gkey, alias, opers = self._fixed
        if nrep == 0:
            return
        env = st.env
        starts = []
        addrs = [0, 0, 0]
        i = 0
        for const, fn, boff, es, ext, size in opers:
            s = const if const is not None else int(fn(env))
            a = boff + s * es
            if s < 0 or a % 32 or s + ext > size:
                raise self._fixed_error(i, s)
            addrs[i] = a
            starts.append(s)
            i += 1
        if alias:
            self._check_overlap(starts, blks, reps, geo, nrep, gkey)
        sc = self.scalar
        if isinstance(sc, Expr):
            sc = cast_value(self.scalar_dtype, sc.fn(env))
        ins.run_at(st.cbufs, sc, addrs[0], addrs[1], addrs[2])
        if cost._ACTIVE.get():
            _timed(self, "Vector", self.name, cyc, self.ops[1:], self.ops[:1])

    def _resolve(self, env):
        """Evaluate and validate everything; -> (param array, estimated cycles)."""
        name = self.name
        lo, hi, counter, nrep, tail = self._mask_value(env)
        blks = []
        reps = []
        for v, n in zip(self.blks, self.bnames):
            v = int(v.fn(env) if isinstance(v, Expr) else v)
            if not 0 <= v <= (255 if self.family == "bin" else 65535):
                raise ConstraintError(f"{name}: {n} should be in the range of "
                                      f"[0, {255 if self.family == 'bin' else 65535}], "
                                      f"input {n}: {v}")
            blks.append(v)
        for v, n in zip(self.reps, self.rnames):
            v = int(v.fn(env) if isinstance(v, Expr) else v)
            if not 0 <= v <= 255:
                raise ConstraintError(f"{name}: {n} should be in the range of [0, 255], "
                                      f"input {n}: {v}")
            reps.append(v)
        while len(blks) < len(self.ops):
            blks.append(1)
        reps = _rep_blocks(self.su, blks, reps)
        starts = []
        for o in self.ops:
            s = o.off if o.off is not None else int(o.off_fn(env))
            if s < 0:
                raise AccessError(f"{name}: {o.role} start element of tensor {o.t.name} must "
                                  f"be >= 0, got {s}")
            addr = o.t.byte_off + s * o.es
            if addr % 32:
                raise AlignmentError(f"{name}: Address align error! {o.role} ({o.t.name}"
                                     f"[{s}]) address {addr} is not 32 align")
            starts.append(s)
        p = np.zeros(_w.NPARAM, dtype=np.int64)
        p[0] = self.op
        p[1:4] = -1
        p[13] = nrep
        if nrep == 0:
            return p, 0
        geo = self._geometry(lo, hi, counter, nrep, tail, blks, reps)
        for i, (o, s, (mx, _, _)) in enumerate(zip(self.ops, starts, geo)):
            need = s + mx + 1
            if need > o.t.size:
                verb = "write" if i == 0 else "read"
                raise AccessError(f"{name}: `{o.t.name}` tensor overflow, instruction need "
                                  f"{verb} {need} elements but only {o.t.size} elements space")
        self._check_overlap(starts, blks, reps, geo, nrep,
                            (lo, hi, counter, nrep, tail, tuple(blks), tuple(reps)))
        for i, (o, s) in enumerate(zip(self.ops, starts)):
            p[1 + i] = o.code
            p[4 + i] = o.t.byte_off + s * o.es
            p[7 + i] = blks[i]
            p[10 + i] = reps[i]
        p[14] = self.par
        p[15] = _s64(lo & (_U64 - 1))
        p[16] = _s64(hi & (_U64 - 1))
        p[17] = counter
        p[18] = tail
        p[19] = self.sat
        p[20] = self.rnd
        return p, VECTOR_ISSUE_CYCLES + nrep

    def _check_overlap(self, starts, blks, reps, geo, nrep, gkey=None):
        d = self.ops[0]
        dt = d.t
        dlo, dhi = dt.byte_off, dt.byte_off + dt.nbytes
        if self.op not in _READS_DST and not any(o.t.sidx == dt.sidx and o.t.byte_off < dhi and
                                       dlo < o.t.byte_off + o.t.nbytes for o in self.ops[1:]):
            return  # no source shares memory with dst's tensor
        dblk0 = (d.t.byte_off + starts[0] * d.es) // 32
        dset = geo[0][1]
        # With dst_blk_stride 0 several lanes of one repeat share a dst element; when dst
        # is also read (axpy, in place) the hardware's read-all-then-write order within a
        # repeat would matter, which the walker does not model.
        reads_dst = self.op in _READS_DST or any(
            self.ops[i].t.sidx == d.t.sidx and
            (self.ops[i].t.byte_off + starts[i] * self.ops[i].es) // 32 == dblk0
            for i in range(1, len(self.ops)))
        if reads_dst and blks[0] == 0 and geo[0][2] > 1:
            raise NotImplementedError(
                f"{self.name}: dst_blk_stride 0 with dst also read in the same repeat "
                f"(axpy, vmla or in place) over more than one block is not implemented")
        srcs = list(range(len(self.ops) - 1, 0, -1))  # src1 first: the accumulate rule
        for i in srcs:
            s = self.ops[i]
            if s.t.sidx != d.t.sidx:
                continue
            sblk0 = (s.t.byte_off + starts[i] * s.es) // 32
            accumulate = (self.family == "bin" and i == 2 and self.op in _ACCUMULATE_OPS
                          and reps[0] == 0 and reps[2] == 0 and sblk0 == dblk0
                          and blks[0] == blks[2])
            if accumulate:
                # src0 must not overlap src1 then
                s0 = self.ops[1]
                if s0.t.sidx == s.t.sidx and _blocks_meet(
                        (s0.t.byte_off + starts[1] * s0.es) // 32, reps[1], geo[1][1],
                        sblk0, 0, geo[2][1], nrep, 0):
                    raise OverlapError(f"{self.name}: src0 and src1 address overlapping error: "
                                       f"with dst == src1 (rep strides 0), src0 must not "
                                       f"overlap src1")
                continue
            # same start, same strides and same block size: the same blocks every repeat
            same = (sblk0 == dblk0 and blks[i] == blks[0] and s.B == d.B
                    and (nrep == 1 or reps[i] == reps[0]))
            if same and nrep > 1 and gkey is not None:
                # translation invariant: the answer depends on the geometry only
                key = (i,) + gkey
                dep = self._same_dep.get(key)
                if dep is None:
                    dep = _blocks_meet(0, reps[0], dset, 0, reps[i], geo[i][1], nrep, 1)
                    if len(self._same_dep) < 256:
                        self._same_dep[key] = dep
                if dep:
                    raise OverlapError(
                        f"{self.name}: dst and {s.role} address overlapping error. When "
                        f"repeat_times>1, It is not support iteration N's destination is the "
                        f"source of next iteration")
                continue
            if nrep == 1:
                if not same and _blocks_meet(dblk0, 0, dset, sblk0, 0, geo[i][1], 1, 0):
                    raise OverlapError(
                        f"{self.name}: dst and {s.role} address overlapping error. when "
                        f"repeat_times=1, only support dst and src 100% same, and stride "
                        f"must be same too.")
                continue
            if not same and _blocks_meet(dblk0, reps[0], dset, sblk0, reps[i], geo[i][1],
                                         nrep, 0):
                raise OverlapError(
                    f"{self.name}: dst and {s.role} address overlapping error. When "
                    f"repeat_times>1, dst and {s.role} must overlap 100% (same address and "
                    f"strides) or not at all within an iteration")
            if _blocks_meet(dblk0, reps[0], dset, sblk0, reps[i], geo[i][1], nrep, 1):
                raise OverlapError(
                    f"{self.name}: dst and {s.role} address overlapping error. When "
                    f"repeat_times>1, It is not support iteration N's destination is the "
                    f"source of next iteration")

    # ---- run ------------------------------------------------------------------------
    def _run_static(self, st):
        self._ins.run(st.cbufs, self.scalar)
        if cost._ACTIVE.get():
            _timed(self, "Vector", self.name, self._cycles, self.ops[1:], self.ops[:1])

    def _run_dynamic(self, st):
        env = st.env
        p, cyc = self._resolve(env)
        if p[13] == 0:
            return
        sc = self.scalar
        if isinstance(sc, Expr):
            sc = cast_value(self.scalar_dtype, sc.fn(env))
        b = st.bufs
        s0 = self.ops[1].t.sidx if len(self.ops) > 1 else 1
        s1 = self.ops[2].t.sidx if len(self.ops) > 2 else s0
        _w.vector(p, float(sc), b[1], b[s0], b[s1])
        if cost._ACTIVE.get():
            _timed(self, "Vector", self.name, cyc, self.ops[1:], self.ops[:1])


def _blocks_meet(a0, arep, aset, b0, brep, bset, nrep, lag):
    """Do the blocks of operand A in iteration r meet operand B's in iteration r+lag,
    for some r in [0, nrep - lag)?  Blocks of X in iteration r: x0 + r*xrep + xset,
    where xset = (full-repeat set, last-repeat set)."""
    n = nrep - lag
    if n <= 0:
        return False
    # r in [0, n-1): both operands in full repeats; r = n-1: B in its last repeat, A in
    # its last repeat only when lag == 0.
    if n - 1 > 0 and _meet_range(a0, arep, aset[0], b0, brep, bset[0], lag, 0, n - 1):
        return True
    return _meet_range(a0, arep, aset[0] if lag else aset[1], b0, brep, bset[1], lag, n - 1, n)


def _meet_range(a0, arep, aset, b0, brep, bset, lag, r0, r1):
    a_lo = a0 + r0 * arep + int(aset.min())
    a_hi = a0 + (r1 - 1) * arep + int(aset.max())
    b_lo = b0 + (r0 + lag) * brep + int(bset.min())
    b_hi = b0 + (r1 - 1 + lag) * brep + int(bset.max())
    if a_hi < b_lo or b_hi < a_lo:
        return False
    # blocks meet when (a0 - b0 - lag*brep) + r*(arep - brep) == b_off - a_off
    diff = (bset[None, :] - aset[:, None]).ravel()
    base = a0 - b0 - lag * brep
    step = arep - brep
    for chunk in range(r0, r1, 1 << 16):
        r = np.arange(chunk, min(r1, chunk + (1 << 16)), dtype=np.int64)
        if np.isin(base + r * step, diff).any():
            return True
    return False
