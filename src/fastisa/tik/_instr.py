"""TIK instructions: validation at record time, one walker call at run time.

Every vector instruction is a row of :data:`VECTOR_OPS` (name -> op code and family);
all of them go through :class:`_Vector`, which validates its arguments (immediates when
recorded, Scalars/Exprs when run), then calls the ONE C walker
(``csrc/fastisa/walker.h``) with the instruction as data.  ``data_move`` is one call of
the DMA kernel.  Engine cycles recorded into :mod:`fastisa.cost` are ESTIMATES (the spec
gives no TIK timing): Vector = ``VECTOR_ISSUE_CYCLES + repeats``; MTE =
``MTE_ISSUE_CYCLES + 32-byte blocks moved``.
"""

from __future__ import annotations

import numpy as np

from .. import cost
from .._kernels import walker as _w
from ..errors import AccessError, AlignmentError, ConstraintError, OverlapError
from . import _program as P
from ._program import Expr, Tensor, TensorView, as_expr, cast_value, scope_ubuf

__all__ = ["Tik", "VECTOR_OPS", "VECTOR_ISSUE_CYCLES", "MTE_ISSUE_CYCLES"]

#: Estimated fixed issue cost of one vector instruction, in Vector-engine cycles.
VECTOR_ISSUE_CYCLES = 8
#: Estimated fixed issue cost of one data_move, in MTE cycles (plus 1 per 32-byte block).
MTE_ISSUE_CYCLES = 32

# walker.h op codes
ADDS, MULS, MAXS, MINS, AXPY = 0, 1, 2, 3, 4
ABS, EXP, LN, REC, RELU, RSQRT, SQRT, NOT = 5, 6, 7, 8, 9, 10, 11, 12
ADD, SUB, MUL, DIV, MAX, MIN, AND, OR = 13, 14, 15, 16, 17, 18, 19, 20
DUP, CONV = 21, 22

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

_U64 = 1 << 64


def _s64(v: int) -> int:
    return v - _U64 if v >= 1 << 63 else v


def _tspans(ops):
    """Byte ranges of tensor operands for the engine schedule: a whole tensor of a scope."""
    return [(("tik", id(o.t.tik), o.t.sidx), o.t.byte_off, o.t.byte_off + o.t.nbytes)
            for o in ops]


def _timed(op, engine, name, cyc, ops_r, ops_w):
    """Charge ``cyc`` cycles to ``engine`` with the operands' byte ranges (profiling only)."""
    if not cost._ACTIVE.get():
        return
    cost.record(engine, name, cyc, reads=_tspans(ops_r), writes=_tspans(ops_w),
                source=getattr(op, "_fi_src", ""), domain="tik")


def _is_dyn(x) -> bool:
    return isinstance(x, Expr) and x.const is None


def _static(x):
    return x.const if isinstance(x, Expr) else x


def _check_int(name, param, v, lo, hi, allow_expr=True):
    """Range check of an immediate (ints only); Scalars/Exprs pass (checked at run)."""
    if isinstance(v, Expr):
        if v.const is None:
            if not allow_expr:
                raise ConstraintError(f"{name}: {param} must be an immediate int, got {v!r}")
            if v.dtype not in P._INT_SCALAR_DTYPES + ("bool",) and v.dtype not in (
                    "int8", "uint8"):
                raise ConstraintError(f"{name}: {param} must be a Scalar/Expr of type "
                                      f"int16/int32/int64/uint16/uint32/uint64, got {v.dtype}")
            return
        v = v.const
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise ConstraintError(f"{name}: {param} must be an int, a Scalar or an Expr, "
                              f"got {v!r}")
    if not lo <= int(v) <= hi:
        raise ConstraintError(f"{name}: {param} should be in the range of [{lo}, {hi}], "
                              f"input {param}: {int(v)}")


def _check_repeat(name, v):
    """repeat_times: [0, 255]; an immediate 0 is rejected (a runtime 0 does nothing)."""
    _check_int(name, "repeat_times", v, 0, 255)
    if not _is_dyn(v) and int(_static(v)) == 0:
        raise ConstraintError(f"{name}: repeat_times should be in the range of [0, 255] and an "
                              f"immediate 0 is not supported, input repeat_times: 0")


def _stride_unit(name, target, stride_unit):
    """The legacy forms' ``stride_unit`` -> the unit the instruction uses.

    As TIK's ``_vector_scalar_single_elewise_func``: on Ascend 310/910 (v100) the field
    does not exist and the argument is ignored (forced to 0); elsewhere it must be an int
    in [0, 3] (the TIK source and its CPU debugger (github.com/jizhuoran/caffe-huawei-atlas-convertor, convertor/huawei/te/tik/), TIK ``get_extend_interval``):

    * 0: blk_stride and rep_stride in 32-byte blocks (the ``vec_*`` forms' only mode);
    * 1: blk_stride in blocks, rep_stride is a *gap* in blocks: repeat r+1 starts
      ``(7*blk_stride + 1 + rep_stride)`` blocks after repeat r;
    * 2, 3: block gaps and repeat strides/gaps in elements (blocks no longer 32-byte
      aligned) -- not implemented, NotImplementedError.
    """
    if target.family == "v100":
        return 0
    if isinstance(stride_unit, Expr) and stride_unit.const is not None:
        stride_unit = stride_unit.const
    if isinstance(stride_unit, bool) or not isinstance(stride_unit, (int, np.integer)):
        raise ConstraintError(f"{name}: input stride_unit should be int, input type of "
                              f"stride_unit: {type(stride_unit)}")
    su = int(stride_unit)
    if not 0 <= su <= 3:
        raise ConstraintError(f"{name}: stride_unit should be in the range of [0, 3], "
                              f"input stride_unit: {su}")
    if su >= 2:
        raise NotImplementedError(f"{name}: stride_unit={su} (block gap and repeat "
                                  f"{'stride' if su == 2 else 'gap'} in elements) is not "
                                  f"implemented by fastisa; stride_unit 0 and 1 are")
    return su


def _rep_blocks(su, blks, reps):
    """Repeat strides in 32-byte blocks: with stride_unit 1 ``rep`` is the gap between the
    end of one repeat's last block and the start of the next repeat."""
    if su == 1:
        return [(7 * b + 1) + r for b, r in zip(blks, reps)]
    return reps


def _reduce_stride_unit(name, target, stride_unit):
    """vcadd/vcmax/vcmin: stride_unit is ignored on Ascend 310/910 as for the other legacy
    forms; elsewhere only 0 is implemented."""
    if _stride_unit(name, target, stride_unit) != 0:
        raise NotImplementedError(f"{name}: stride_unit={stride_unit} is not implemented for "
                                  f"the reductions (only stride_unit 0)")


class _Operand:
    """One tensor operand: tensor, start element (int or runtime fn), strides."""

    __slots__ = ("role", "t", "off", "off_fn", "es", "B", "code")

    def __init__(self, name, role, x):
        if isinstance(x, Tensor):
            t, off = x, 0
        elif isinstance(x, TensorView):
            t, off = x.tensor, x.offset
        else:
            raise ConstraintError(f"{name}: {role} must be a Tensor, got {x!r}")
        self.role = role
        self.t = t
        e = as_expr(off)
        self.off = e.const
        self.off_fn = e.fn
        self.es = t.esize
        self.B = 32 // t.esize
        self.code = t.code


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
        alias = self.op == AXPY or any(
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
        if self.op != AXPY and not any(o.t.sidx == dt.sidx and o.t.byte_off < dhi and
                                       dlo < o.t.byte_off + o.t.nbytes for o in self.ops[1:]):
            return  # no source shares memory with dst's tensor
        dblk0 = (d.t.byte_off + starts[0] * d.es) // 32
        dset = geo[0][1]
        # With dst_blk_stride 0 several lanes of one repeat share a dst element; when dst
        # is also read (axpy, in place) the hardware's read-all-then-write order within a
        # repeat would matter, which the walker does not model.
        reads_dst = self.op == AXPY or any(
            self.ops[i].t.sidx == d.t.sidx and
            (self.ops[i].t.byte_off + starts[i] * self.ops[i].es) // 32 == dblk0
            for i in range(1, len(self.ops)))
        if reads_dst and blks[0] == 0 and geo[0][2] > 1:
            raise NotImplementedError(
                f"{self.name}: dst_blk_stride 0 with dst also read in the same repeat "
                f"(axpy or in place) over more than one block is not implemented")
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


class _Reduce:
    """vcadd/vcmax/vcmin (per repeat) and vec_reduce_add/max/min (whole) -- one C
    reduction kernel over the same lane addressing as the walker."""

    def __init__(self, tik, name, op, mask, dst, src, repeat_times, dst_rep, src_blk,
                 src_rep, whole, work=None, pair=False):
        self.name = name
        self.whole = whole
        self.pair = pair  # vcmax/vcmin: [value, index] pairs, dst_rep_stride in pairs
        for pname, x in (("dst", dst), ("src", src), ("work_tensor", work), ("mask", mask),
                         ("repeat_times", repeat_times), ("dst_rep_stride", dst_rep),
                         ("src_blk_stride", src_blk), ("src_rep_stride", src_rep)):
            P.check_owner(tik, name, pname, x)
        # reuse _Vector's validation of mask/repeat/strides with dst treated as 1 lane
        self.v = _Vector.__new__(_Vector)
        v = self.v
        v.tik, v.name, v.op, v.family = tik, name, op, "un"
        v.ops = [_Operand(name, "dst", dst), _Operand(name, "src", src)]
        for o in v.ops:
            if o.t.scope != scope_ubuf:
                raise ConstraintError(f"{name}: {o.role} scope should be ub, input scope: "
                                      f"{o.t.scope}")
        d = v.ops[0].t.dtype
        if v.ops[1].t.dtype != d:
            raise ConstraintError(f"{name}: Intrinsic {name}'s src's dtype should be equal to "
                                  f"dst's dtype, input: {v.ops[1].t.dtype} vs {d}")
        if not tik.target.supports(name, d):
            raise ConstraintError(f"{name}: dtype {d} is not supported on {tik.target.name}")
        v.par = 256 // v.ops[1].es
        v.counter = False
        v.mask = mask
        v._check_mask_static()
        _check_repeat(name, repeat_times)
        _check_int(name, "dst_rep_stride", dst_rep, 0, 255)
        _check_int(name, "src_blk_stride", src_blk, 0, 65535)
        _check_int(name, "src_rep_stride", src_rep, 0, 255)
        v.nrep = repeat_times
        v.sat = 1 if tik.target.saturation else 0
        self.work = _Operand(name, "work_tensor", work) if work is not None else None
        self.args = (dst_rep, src_blk, src_rep)

    def run(self, st):
        v = self.v
        env = st.env
        lo, hi, counter, nrep, tail = v._mask_value(env)
        if nrep == 0:
            return
        dst_rep, src_blk, src_rep = (int(a.fn(env) if isinstance(a, Expr) else a)
                                     for a in self.args)
        for n, x, hi_ in (("dst_rep_stride", dst_rep, 255), ("src_blk_stride", src_blk, 65535),
                          ("src_rep_stride", src_rep, 255)):
            if not 0 <= x <= hi_:
                raise ConstraintError(f"{self.name}: {n} should be in the range of [0, {hi_}], "
                                      f"input {n}: {x}")
        d, s = v.ops
        ds = d.off if d.off is not None else int(d.off_fn(env))
        ss = s.off if s.off is not None else int(s.off_fn(env))
        for o, st_ in ((d, ds), (s, ss)):
            if st_ < 0:
                raise AccessError(f"{self.name}: {o.role} start must be >= 0, got {st_}")
            # vcadd's dst needs element alignment only (TIK debugger simd.py: dst_align =
            # the dtype size), which t[i] always has
            if (o.t.byte_off + st_ * o.es) % (o.es if o is d and self.name == "vcadd" else 32):
                raise AlignmentError(f"{self.name}: Address align error! {o.role} address "
                                     f"{o.t.byte_off + st_ * o.es} is not 32 align")
        v.ops_src = [s]
        B = s.B
        bits = np.array([(lo >> i) & 1 if i < 64 else (hi >> (i - 64)) & 1
                         for i in range(v.par)], dtype=bool)
        lanes = np.arange(v.par)[bits]
        mx = (nrep - 1) * src_rep * B + int(((lanes // B) * src_blk * B + lanes % B).max())
        if ss + mx + 1 > s.t.size:
            raise AccessError(f"{self.name}: `{s.t.name}` tensor overflow, instruction need "
                              f"read {ss + mx + 1} elements but only {s.t.size} elements space")
        if self.pair:
            dlast = ds + (nrep - 1) * dst_rep * 2 + 1
        else:
            dlast = ds + (0 if self.whole else (nrep - 1) * dst_rep)
        if dlast + 1 > d.t.size:
            raise AccessError(f"{self.name}: `{d.t.name}` tensor overflow, instruction need "
                              f"write {dlast + 1} elements but only {d.t.size} elements space")
        p = np.zeros(_w.NPARAM, dtype=np.int64)
        p[0] = v.op
        p[1] = p[2] = s.code
        p[3] = -1
        p[8] = src_blk
        p[11] = src_rep
        p[13] = nrep
        p[14] = v.par
        p[15] = _s64(lo)
        p[16] = _s64(hi)
        p[19] = v.sat
        b = st.bufs
        p[5] = s.t.byte_off + ss * s.es
        if self.pair:
            p[4] = d.t.byte_off + ds * d.es
            p[10] = dst_rep * 2
            _w.reduce_arg(p, b[1], b[1])
            _timed(self, "Vector", self.name, VECTOR_ISSUE_CYCLES + nrep, v.ops[1:], v.ops[:1])
            return
        if not self.whole:
            p[4] = d.t.byte_off + ds * d.es
            p[10] = dst_rep
            _w.reduce(p, b[1], b[1])
            _timed(self, "Vector", self.name, VECTOR_ISSUE_CYCLES + nrep, v.ops[1:], v.ops[:1])
            return
        # whole reduction: per-repeat results (rounded to the dtype) into a scratch row,
        # then reduce those PAR at a time (counter-style) until one value is left; this is
        # how TIK builds vec_reduce_* from vcadd/vcmax/vcmin.
        es = s.es
        scratch = np.zeros(((nrep + v.par - 1) // v.par * v.par) * es + 32, dtype=np.uint8)
        p[4] = 0
        p[10] = 1
        _w.reduce(p, scratch, b[1])
        cyc = VECTOR_ISSUE_CYCLES + nrep
        n = nrep
        while n > 1:
            q = p.copy()
            q[5] = 0
            q[8] = 1
            q[11] = 8
            q[13] = -(-n // v.par)
            q[15] = q[16] = -1
            q[17] = 1
            q[18] = n - (q[13] - 1) * v.par
            tmp = scratch.copy()
            _w.reduce(q, scratch, tmp)
            cyc += VECTOR_ISSUE_CYCLES + int(q[13])
            n = int(q[13])
        b[1][d.t.byte_off + ds * es:d.t.byte_off + ds * es + es] = scratch[:es]
        _timed(self, "Vector", self.name, cyc, v.ops[1:], v.ops[:1])


_COMMON = """

    Parameters (the TIK source and its CPU debugger (github.com/jizhuoran/caffe-huawei-atlas-convertor, convertor/huawei/te/tik/); the TIK docs, Vector-Scalar Instructions: General Definition (Ascend TIK API reference, hiascend.com) for the vector-scalar template):
    mask -- int in [1, lanes] (lanes 0..mask-1), ``[mask_h, mask_l]`` (bit i of mask_l =
        lane i, of mask_h = lane 64+i; mask_h must be 0 for 32-bit types; not [0, 0]), or
        with ``mask_mode="counter"`` (targets with counter mode) the element count in
        [1, 2**32-1].  lanes = 256 bytes / the largest element size.
    dst, src, src0, src1 -- UB Tensors or ``t[i]`` start elements (32-byte aligned).
        Lane i of repeat r of X is element ``start + r*rep_stride*B + (i//B)*blk_stride*B
        + i%B``, B = 32 / element size.
    repeat_times -- [1, 255] immediate, or a Scalar/Expr in [0, 255] (0: nothing).
    *_blk_stride -- legacy forms only, 32-byte blocks ([0, 65535]; two-tensor [0, 255]).
    *_rep_stride -- 32-byte blocks, [0, 255].
    stride_unit -- legacy forms only.  Ignored on Ascend 310/910 (TIK forces it to 0);
        elsewhere an int in [0, 3]: 0 as above; 1 makes rep_stride the gap in blocks
        after a repeat's last block (repeat r starts ``r*(7*blk_stride + 1 +
        rep_stride)`` blocks in); 2 and 3 (element units) raise NotImplementedError.

    Repeats run in order; masked-off lanes keep their contents.  Raises ConstraintError
    (ranges, dtypes, target), AccessError (past a tensor's end), AlignmentError (UB start
    not 32-byte aligned), OverlapError (the TIK docs, Vector-Scalar Instructions: General Definition (Ascend TIK API reference, hiascend.com)'s overlap rules).  Immediates are checked
    when recorded, Scalars/Exprs when run.
"""


class Tik(P.Tik):
    __doc__ = P.Tik.__doc__

    # ---- internal -------------------------------------------------------------------
    def _vec(self, name, mask, dst, srcs, scalar, repeat_times, blks, reps, mask_mode="normal",
             round_mode="", stride_unit=0):
        op, fam = VECTOR_OPS[name]
        self._record(_Vector(self, name, op, fam, mask, dst, srcs, scalar, repeat_times, blks,
                             reps, mask_mode, round_mode, stride_unit))

    # ---- vector-scalar (the TIK docs, Vector-Scalar Instructions: General Definition (Ascend TIK API reference, hiascend.com)) -----------------------------------------------------
    def vec_adds(self, mask, dst, src, scalar, repeat_times, dst_rep_stride, src_rep_stride,
                 mask_mode="normal"):
        """dst[lane] = src[lane] + scalar for every active lane of every repeat (the TIK docs, Vector-Scalar Instructions: General Definition (Ascend TIK API reference, hiascend.com)).

        mask: int (contiguous, [1, lanes]), [mask_h, mask_l] (bitwise) or, with
        ``mask_mode="counter"``, the element count in [1, 2**32-1].  dst/src: UB tensors
        (or ``t[i]`` start elements, 32-byte aligned) of one dtype; lanes per repeat =
        256 bytes / element size.  scalar: immediate or Scalar, converted to src's dtype
        first (RNE for floats, truncation for ints).  repeat_times: [1, 255] immediate
        (a runtime 0 does nothing).  *_rep_stride: [0, 255], 32-byte blocks.  Raises
        ConstraintError, AccessError, AlignmentError, OverlapError.
        """
        self._vec("vec_adds", mask, dst, [src], scalar, repeat_times, [1, 1],
                  [dst_rep_stride, src_rep_stride], mask_mode)

    def vec_muls(self, mask, dst, src, scalar, repeat_times, dst_rep_stride, src_rep_stride,
                 mask_mode="normal"):
        """dst = src * scalar per active lane (the TIK docs, Vector-Scalar Instructions: General Definition (Ascend TIK API reference, hiascend.com) template)."""
        self._vec("vec_muls", mask, dst, [src], scalar, repeat_times, [1, 1],
                  [dst_rep_stride, src_rep_stride], mask_mode)

    def vec_axpy(self, mask, dst, src, scalar, repeat_times, dst_rep_stride, src_rep_stride):
        """dst = src * scalar + dst (float32 product and sum, rounded once to dst; not
        fused).  fp16, fp32, and fmix: fp16 src/scalar with fp32 dst, 64 lanes."""
        self._vec("vec_axpy", mask, dst, [src], scalar, repeat_times, [1, 1],
                  [dst_rep_stride, src_rep_stride])

    def _legacy_vs(name):
        def f(self, mask, dst, src, scalar, repeat_times, dst_blk_stride, src_blk_stride,
              dst_rep_stride, src_rep_stride, stride_unit=0, round_en=False,
              mask_mode="normal"):
            self._vec(name, mask, dst, [src], scalar, repeat_times,
                      [dst_blk_stride, src_blk_stride], [dst_rep_stride, src_rep_stride],
                      mask_mode, stride_unit=stride_unit)
        f.__name__ = name
        f.__doc__ = (f"Legacy ``{name}``: dst = {name[1:-1]}(src, scalar) per active lane, with "
                     f"block strides; the scalar is converted to src's dtype first." + _COMMON)
        return f

    vadds = _legacy_vs("vadds")
    vmuls = _legacy_vs("vmuls")
    vmaxs = _legacy_vs("vmaxs")
    vmins = _legacy_vs("vmins")

    def vaxpy(self, mask, dst, src, scalar, repeat_times, dst_blk_stride, src_blk_stride,
              dst_rep_stride, src_rep_stride, stride_unit=0):
        """Legacy vec_axpy with block strides."""
        self._vec("vaxpy", mask, dst, [src], scalar, repeat_times,
                  [dst_blk_stride, src_blk_stride], [dst_rep_stride, src_rep_stride],
                  stride_unit=stride_unit)

    # ---- single-source ----------------------------------------------------------------
    def _unary(name, formula):
        def f(self, mask, dst, src, repeat_times, dst_rep_stride, src_rep_stride):
            self._vec(name, mask, dst, [src], None, repeat_times, [1, 1],
                      [dst_rep_stride, src_rep_stride])
        f.__name__ = name
        f.__doc__ = (f"dst = {formula} per active lane of every repeat." + _COMMON)
        return f

    vec_abs = _unary("vec_abs", "|src|")
    vec_exp = _unary("vec_exp", "exp(src) (float64, rounded once; hardware approximates)")
    vec_ln = _unary("vec_ln", "ln(src) (float64, rounded once; hardware approximates)")
    vec_rec = _unary("vec_rec", "1/src (float64, rounded once; hardware approximates)")
    vec_relu = _unary("vec_relu", "max(src, 0) (NaN -> 0)")
    vec_rsqrt = _unary("vec_rsqrt", "1/sqrt(src) (float64, rounded once)")
    vec_sqrt = _unary("vec_sqrt", "sqrt(src) (float64, rounded once)")
    vec_not = _unary("vec_not", "~src (bitwise)")

    def _legacy_un(name):
        def f(self, mask, dst, src, repeat_times, dst_blk_stride, src_blk_stride,
              dst_rep_stride, src_rep_stride, stride_unit=0):
            self._vec(name, mask, dst, [src], None, repeat_times,
                      [dst_blk_stride, src_blk_stride], [dst_rep_stride, src_rep_stride],
                      stride_unit=stride_unit)
        f.__name__ = name
        f.__doc__ = f"Legacy ``{name}``: the vec_ form with block strides." + _COMMON
        return f

    vabs = _legacy_un("vabs")
    vexp = _legacy_un("vexp")
    vln = _legacy_un("vln")
    vrec = _legacy_un("vrec")
    vrelu = _legacy_un("vrelu")
    vrsqrt = _legacy_un("vrsqrt")
    vsqrt = _legacy_un("vsqrt")
    vnot = _legacy_un("vnot")

    # ---- two-tensor -------------------------------------------------------------------
    def _binary(name, formula):
        def f(self, mask, dst, src0, src1, repeat_times, dst_rep_stride, src0_rep_stride,
              src1_rep_stride):
            self._vec(name, mask, dst, [src0, src1], None, repeat_times, [1, 1, 1],
                      [dst_rep_stride, src0_rep_stride, src1_rep_stride])
        f.__name__ = name
        f.__doc__ = (f"dst = {formula} per active lane (float16 via float32, rounded once); "
                     f"dst may be src1 with dst/src1 rep strides 0 (accumulate idiom)."
                     + _COMMON)
        return f

    vec_add = _binary("vec_add", "src0 + src1")
    vec_sub = _binary("vec_sub", "src0 - src1")
    vec_mul = _binary("vec_mul", "src0 * src1")
    vec_div = _binary("vec_div", "src0 / src1")
    vec_max = _binary("vec_max", "max(src0, src1)")
    vec_min = _binary("vec_min", "min(src0, src1)")
    vec_and = _binary("vec_and", "src0 & src1")
    vec_or = _binary("vec_or", "src0 | src1")

    def _legacy_bin(name):
        def f(self, mask, dst, src0, src1, repeat_times, dst_blk_stride, src0_blk_stride,
              src1_blk_stride, dst_rep_stride, src0_rep_stride, src1_rep_stride,
              stride_unit=0):
            self._vec(name, mask, dst, [src0, src1], None, repeat_times,
                      [dst_blk_stride, src0_blk_stride, src1_blk_stride],
                      [dst_rep_stride, src0_rep_stride, src1_rep_stride],
                      stride_unit=stride_unit)
        f.__name__ = name
        f.__doc__ = f"Legacy ``{name}``: the vec_ form with block strides." + _COMMON
        return f

    vadd = _legacy_bin("vadd")
    vsub = _legacy_bin("vsub")
    vmul = _legacy_bin("vmul")
    vdiv = _legacy_bin("vdiv")
    vmax = _legacy_bin("vmax")
    vmin = _legacy_bin("vmin")
    vand = _legacy_bin("vand")
    vor = _legacy_bin("vor")

    # ---- fill ------------------------------------------------------------------------
    def vec_dup(self, mask, dst, scalar, repeat_times, dst_rep_stride):
        """dst = scalar (converted to dst's dtype) per active lane."""
        self._vec("vec_dup", mask, dst, [], scalar, repeat_times, [1], [dst_rep_stride])

    def vector_dup(self, mask, dst, scalar, repeat_times, dst_blk_stride, dst_rep_stride,
                   stride_unit=0):
        """Legacy vec_dup with a block stride ([0, 65535])."""
        self._vec("vector_dup", mask, dst, [], scalar, repeat_times, [dst_blk_stride],
                  [dst_rep_stride], stride_unit=stride_unit)

    # ---- conversion --------------------------------------------------------------------
    def vec_conv(self, mask, round_mode, dst, src, repeat_times, dst_rep_stride,
                 src_rep_stride, deqscale=None, ldst_high_half=False):
        """dst = convert(src) with ``round_mode`` ('' / 'none' = RNE, 'round', 'floor',
        'ceil', 'away-zero', 'to-zero', 'odd'); float -> int saturates, NaN -> 0.
        Lanes = 256 / the larger element size."""
        if deqscale is not None or ldst_high_half:
            raise NotImplementedError("vec_conv: deqscale / ldst_high_half conversions are "
                                      "not implemented")
        self._vec("vec_conv", mask, dst, [src], None, repeat_times, [1, 1],
                  [dst_rep_stride, src_rep_stride], round_mode=round_mode)

    def vconv(self, mask, round_mode, dst, src, repeat_times, dst_blk_stride, src_blk_stride,
              dst_rep_stride, src_rep_stride, deqscale=None, ldst_high_half=False,
              stride_unit=0):
        """Legacy vec_conv with block strides."""
        if deqscale is not None or ldst_high_half:
            raise NotImplementedError("vconv: deqscale / ldst_high_half conversions are not "
                                      "implemented")
        self._vec("vconv", mask, dst, [src], None, repeat_times,
                  [dst_blk_stride, src_blk_stride], [dst_rep_stride, src_rep_stride],
                  round_mode=round_mode, stride_unit=stride_unit)

    # ---- reductions ----------------------------------------------------------------
    def vcadd(self, mask, dst, src, repeat_times, dst_rep_stride, src_blk_stride,
              src_rep_stride, stride_unit=0):
        """dst[r*dst_rep_stride] = sum of src's active lanes in repeat r (float64 sum,
        rounded once; exact for float16).  dst_rep_stride counts dst ELEMENTS."""
        _reduce_stride_unit("vcadd", self.target, stride_unit)
        self._record(_Reduce(self, "vcadd", ADD, mask, dst, src, repeat_times, dst_rep_stride,
                             src_blk_stride, src_rep_stride, whole=False))

    def vcmax(self, mask, dst, src, repeat_times, dst_rep_stride, src_blk_stride,
              src_rep_stride, stride_unit=0):
        """Per repeat r: ``dst[2*r*dst_rep_stride] = max`` of src's active lanes in repeat
        r and ``dst[2*r*dst_rep_stride + 1] = i``, the lane number (0..lanes-1 within the
        repeat) of that element, stored as the bit pattern of an unsigned integer of the
        element's width (uint16 for float16, uint32 for float32; read it with
        ``reinterpret_cast_to``/``.view``).  dtypes float16, float32 (dst == src dtype).

        dst_rep_stride counts [value, index] PAIRS (2 elements), as the dst extent
        ``repeat_times*dst_rep_stride*2*sizeof`` of TIK's _vector_whole_reduce_func;
        0 makes every repeat write the same pair (the last repeat's stays).  The value is
        the winning element's bits unchanged (no rounding, no saturation).  Ties (and
        -0 == +0): the lowest lane wins (first occurrence, as vec_reduce_max's
        cal_index documents).  NaN: the first NaN lane wins (NaN propagates, as in
        vec_reduce_max).  TIK's index_low (index before value) and max_cnt_index
        options and counter mode are not supported (as for vcadd).  dst must hold
        ``2*((repeat_times-1)*dst_rep_stride + 1)`` elements from its start."""
        _reduce_stride_unit("vcmax", self.target, stride_unit)
        self._record(_Reduce(self, "vcmax", MAX, mask, dst, src, repeat_times, dst_rep_stride,
                             src_blk_stride, src_rep_stride, whole=False, pair=True))

    def vcmin(self, mask, dst, src, repeat_times, dst_rep_stride, src_blk_stride,
              src_rep_stride, stride_unit=0):
        """As vcmax with the minimum: per repeat r, ``dst[2*r*dst_rep_stride] = min`` of
        src's active lanes and ``dst[2*r*dst_rep_stride + 1]`` = its lane number (uint16 /
        uint32 bit pattern); ties and -0/+0: lowest lane; NaN: first NaN lane wins;
        dst_rep_stride counts pairs."""
        _reduce_stride_unit("vcmin", self.target, stride_unit)
        self._record(_Reduce(self, "vcmin", MIN, mask, dst, src, repeat_times, dst_rep_stride,
                             src_blk_stride, src_rep_stride, whole=False, pair=True))

    def _reduce_whole(self, name, op, mask, dst, src, work_tensor, repeat_times,
                      src_rep_stride, cal_index=False):
        if cal_index:
            raise NotImplementedError(f"{name}: cal_index=True is not implemented")
        self._record(_Reduce(self, name, op, mask, dst, src, repeat_times, 0, 1,
                             src_rep_stride, whole=True, work=work_tensor))

    def vec_reduce_add(self, mask, dst, src, work_tensor, repeat_times, src_rep_stride):
        """dst[0] = sum over every active lane of every repeat: each repeat's sum is
        rounded to the dtype, then those are summed PAR at a time (vcadd rounds)."""
        self._reduce_whole("vec_reduce_add", ADD, mask, dst, src, work_tensor, repeat_times,
                           src_rep_stride)

    def vec_reduce_max(self, mask, dst, src, work_tensor, repeat_times, src_rep_stride,
                       cal_index=False):
        """dst[0] = max over every active lane of every repeat (NaN propagates)."""
        self._reduce_whole("vec_reduce_max", MAX, mask, dst, src, work_tensor, repeat_times,
                           src_rep_stride, cal_index)

    def vec_reduce_min(self, mask, dst, src, work_tensor, repeat_times, src_rep_stride,
                       cal_index=False):
        """dst[0] = min over every active lane of every repeat (NaN propagates)."""
        self._reduce_whole("vec_reduce_min", MIN, mask, dst, src, work_tensor, repeat_times,
                           src_rep_stride, cal_index)

    # ---- data movement --------------------------------------------------------------
    def data_move(self, dst, src, sid, nburst, burst, src_stride, dst_stride, *args, **kwargs):
        """Copy ``nburst`` bursts of ``burst`` 32-byte blocks: burst k from
        ``src + k*(burst+src_stride)*32`` to ``dst + k*(burst+dst_stride)*32`` bytes
        (strides are tail-to-head gaps in 32-byte blocks).  Paths GM->UB, UB->GM, UB->UB,
        GM->L1, L1->UB (L1->GM on A2/A3).  sid [0, 15], nburst [1, 4095], burst
        [1, 65535], strides [0, 65535].  UB/L1 addresses 32-byte aligned; a tensor may be
        accessed up to its size rounded up to 32 bytes.  Raises ConstraintError,
        AccessError, AlignmentError."""
        self._record(_DataMove(self, dst, src, sid, nburst, burst, src_stride, dst_stride))

    for _f in (vec_muls, vec_axpy, vaxpy, vec_dup, vector_dup, vec_conv, vconv, vcadd, vcmax,
               vcmin,
               vec_reduce_add, vec_reduce_max, vec_reduce_min):
        _f.__doc__ = (_f.__doc__ or "") + _COMMON
    del _legacy_vs, _unary, _legacy_un, _binary, _legacy_bin, _f
