"""The TIK 1.5 high-level ``h_*`` API: whole-tensor / tensor-slice operations.

``tik_instance.h_add(dst, src0, src1)`` and friends take Tensors or numpy-style slices of
them (``t[a:b, :]``, ``t[i, 0:16]``) instead of mask/repeat/stride arguments, and operate
on every element of the region.  The one public operator using them is Ascend/samples
``cplusplus/level1_single_api/4_op_dev/5_custom_op_dev/tbe/impl/softmax_tik.py`` ("softmax
with tik1.5": h_data_move, h_mul, h_sub, h_div, h_exp, h_duplicate, h_reduce_max,
h_reduce_sum); the CANN TIK API reference lists the h_* family with the semantics of the
vector instruction each one stands for.  The 2020 TIK source predates TIK 1.5, so its
lowering is not public: fastisa runs each h_* operation as the matching vector instruction
in counter mode over the region's elements in row-major order, on the same C walker
(``csrc/fastisa/walker.h``), so the arithmetic is bit for bit vec_add/vec_exp/vec_conv's
(float16 rounding, saturation on saturation-mode targets, ...).  numpy only gathers the
regions into contiguous scratch and scatters the result back.

Regions: a Tensor is all of it; ``t[i0, i1, ...]`` (one entry per dimension, each an int,
Scalar/Expr or a slice without step) is the box of those ranges (an int keeps a
dimension of length 1); ``t[a:b]`` / ``t[i]`` with one entry on a tensor of any rank is
elements ``[a, b)`` / ``[i, i+1)`` of the tensor taken as one dimension (TIK's
one-index rule).  Operands must have the same shape once dimensions of length 1 are
dropped; a Scalar / immediate src1 is broadcast.
"""

from __future__ import annotations

import numpy as np

from .. import cost
from .._kernels import walker as _w
from ..errors import AccessError, ConstraintError
from . import _program as P
from ._program import Expr, Tensor, TensorView, as_expr, cast_value, scope_ubuf

import typing as _typing

if _typing.TYPE_CHECKING:
    from collections.abc import Sequence

    from .._types import Int
    from ._annot import Operand, RealArg

__all__ = ["HighLevelMixin", "H_BINARY", "H_UNARY", "H_REDUCE"]

# csrc/fastisa/walker.h op codes (fi_tik_op)
_ABS, _EXP, _LN, _REC, _RELU, _RSQRT, _SQRT = 5, 6, 7, 8, 9, 10, 11
_ADD, _SUB, _MUL, _DIV, _MAX, _MIN = 13, 14, 15, 16, 17, 18
_CONV = 22

#: h_* name -> (walker op, the vector instruction whose dtype table applies)
H_BINARY = {"h_add": (_ADD, "vec_add"), "h_sub": (_SUB, "vec_sub"), "h_mul": (_MUL, "vec_mul"),
            "h_div": (_DIV, "vec_div"), "h_max": (_MAX, "vec_max"), "h_min": (_MIN, "vec_min")}
H_UNARY = {"h_exp": (_EXP, "vec_exp"), "h_ln": (_LN, "vec_ln"), "h_abs": (_ABS, "vec_abs"),
           "h_sqrt": (_SQRT, "vec_sqrt"), "h_rsqrt": (_RSQRT, "vec_rsqrt"),
           "h_rec": (_REC, "vec_rec"), "h_relu": (_RELU, "vec_relu")}
H_REDUCE = {"h_reduce_max": (_MAX, "vec_max"), "h_reduce_min": (_MIN, "vec_min"),
            "h_reduce_sum": (_ADD, "vec_add")}
_ROUND = {"": 0, "none": 0, "round": 1, "floor": 2, "ceil": 3, "ceiling": 3,
          "away-zero": 4, "to-zero": 5, "odd": 6}


def _ival(x, env):
    if isinstance(x, Expr):
        return int(x.const if x.const is not None else x.fn(env))
    return int(x)


class _Region:
    """One operand: a box of a tensor, resolved per run to flat element indices."""

    def __init__(self, name, role, x, ub_only):
        if isinstance(x, Tensor):
            t, idx = x, None
        elif isinstance(x, TensorView):
            t, idx = x.tensor, x.index
            if idx is None:
                raise ConstraintError(f"{name}: {role} must be a Tensor or a slice of one "
                                      f"(t[a:b, ...]), got a view of a view of {t.name}")
        else:
            raise ConstraintError(f"{name}: {role} must be a Tensor or a tensor slice, got "
                                  f"{x!r}")
        if ub_only and t.scope != scope_ubuf:
            raise ConstraintError(f"{name}: {role} scope should be ub, input scope: {t.scope}")
        self.name, self.role, self.t = name, role, t
        if idx is None:
            dims = [(0, s, s) for s in t.shape]
        elif len(idx) == 1:
            dims = [self._dim(idx[0], t.size)]
        elif len(idx) == len(t.shape):
            dims = [self._dim(ix, s) for ix, s in zip(idx, t.shape)]
        else:
            raise ConstraintError(f"{name}: {role} index not match shape: {len(idx)} indices "
                                  f"for shape {t.shape}")
        self.dims = dims
        self.strides = [1] if len(dims) == 1 and len(t.shape) != 1 else t._strides()
        self.static = all(not isinstance(v, Expr) or v.const is not None
                          for d in dims for v in d[:2])
        self._cache = self._resolve(None) if self.static else None

    def _dim(self, ix, size):
        """(start, stop, dim size) of one index entry."""
        if isinstance(ix, slice):
            if ix.step not in (None, 1):
                raise NotImplementedError(f"{self.name}: {self.role}: tensor slices with a "
                                          f"step are not supported")
            a = 0 if ix.start is None else ix.start
            b = size if ix.stop is None else ix.stop
        else:
            a, b = ix, as_expr(ix) + 1 if isinstance(ix, Expr) else ix + 1
        for v in (a, b):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer, Expr)):
                raise ConstraintError(f"{self.name}: {self.role} index entries must be ints, "
                                      f"Scalars/Exprs or slices, got {ix!r}")
        return (a, b, size)

    def _resolve(self, env):
        shape, base = [], 0
        for d, ((a, b, size), st) in enumerate(zip(self.dims, self.strides)):
            a, b = _ival(a, env), _ival(b, env)
            if not 0 <= a < b <= size:
                raise AccessError(f"{self.name}: {self.role} tensor {self.t.name}: index range "
                                  f"[{a}, {b}) of dimension {d} is outside [0, {size}) or "
                                  f"empty")
            shape.append(b - a)
            base += a * st
        rel = np.zeros((), np.int64)
        for n, st in zip(shape, self.strides):
            rel = rel[..., None] + np.arange(n, dtype=np.int64) * st
        n = int(np.prod(shape))
        if n == 1 or (len(shape) == 1 and self.strides[-1] == 1) or all(
                shape[d] == self.dims[d][2] for d in range(1, len(shape))):
            return tuple(shape), slice(base, base + n)     # contiguous: a plain slice
        return tuple(shape), (base + rel).reshape(-1)

    def get(self, env):
        return self._cache if self._cache is not None else self._resolve(env)

    def view(self, st):
        t = self.t
        return st.bufs[t.sidx][t.byte_off:t.byte_off + t.nbytes].view(t.np_dtype)


def _squeeze(shape):
    return tuple(s for s in shape if s != 1)


def _same_shape(name, regions, env):
    got = [r.get(env) for r in regions]
    s0 = _squeeze(got[0][0])
    for r, (shape, _) in zip(regions[1:], got[1:]):
        if _squeeze(shape) != s0:
            raise ConstraintError(f"{name}: {r.role} shape {shape} does not match "
                                  f"{regions[0].role} shape {got[0][0]}")
    return got


def _params(op, codes, sizes, n, sat, rnd=0):
    """A counter-mode walker parameter block over n contiguous elements per operand."""
    par = 256 // max(sizes)
    p = np.zeros(_w.NPARAM, dtype=np.int64)
    p[0] = op
    p[1:4] = -1
    for i, (c, es) in enumerate(zip(codes, sizes)):
        p[1 + i] = c
        p[7 + i] = 1
        p[10 + i] = par * es // 32
    nrep = -(-n // par)
    p[13] = nrep
    p[14] = par
    p[15] = p[16] = -1
    p[17] = 1
    p[18] = n - (nrep - 1) * par
    p[19] = sat
    p[20] = rnd
    return p


def _walk(op, dst_dtype, srcs, sat, scalar=0.0, rnd=0):
    """Run the walker over contiguous numpy arrays srcs (1 or 2, or 0 for dup) -> a new
    dst array of dst_dtype."""
    n = srcs[0].size if srcs else 0
    d = np.empty(n, dst_dtype)
    if n == 0:
        return d
    codes = [P._DTYPES[np.dtype(dst_dtype).name][1]] + [P._DTYPES[s.dtype.name][1]
                                                        for s in srcs]
    sizes = [np.dtype(dst_dtype).itemsize] + [s.dtype.itemsize for s in srcs]
    p = _params(op, codes, sizes, n, sat, rnd)
    bufs = [np.ascontiguousarray(s).view(np.uint8).reshape(-1) for s in srcs]
    s0 = bufs[0]
    s1 = bufs[1] if len(bufs) > 1 else s0
    _w.vector(p, scalar, d.view(np.uint8), s0, s1)
    return d


def _check_dtype(tik, name, instr, dtype):
    if not tik.target.supports(instr, dtype):
        raise ConstraintError(f"{name}: dtype {dtype} is not supported on {tik.target.name} "
                              f"(supported: {list(tik.target.dtypes.get(instr, ()))})")


def _scalar_value(name, dtype, x):
    """-> (const value or None, runtime fn or None) of a Scalar/Expr/immediate operand."""
    if isinstance(x, Expr):
        if x.const is not None:
            return cast_value(dtype, x.const), None
        f = x.fn
        return None, (lambda env: cast_value(dtype, f(env)))
    if isinstance(x, bool) or not isinstance(x, (int, float, np.integer, np.floating)):
        raise ConstraintError(f"{name}: scalar must be an int/float immediate or a Scalar, "
                              f"got {x!r}")
    return cast_value(dtype, x), None


def _cost(op, name, n, es, reads, writes, engine="Vector"):
    """Charge the vector instruction's cycles (8 + one per 256 bytes) with the regions'
    tensors as reads/writes, for the engine schedule (profiling only)."""
    if not cost._ACTIVE.get():
        return

    def spans(rs):
        return [(("tik", id(r.t.tik), r.t.sidx), r.t.byte_off, r.t.byte_off + r.t.nbytes)
                for r in rs]
    cyc = (8 if engine == "Vector" else 32) + -(-n * es // (256 if engine == "Vector" else 32))
    cost.record(engine, name, cyc, reads=spans(reads), writes=spans(writes),
                source=getattr(op, "_fi_src", ""), domain="tik")


class _HElementwise:
    """h_add/... (two sources, src1 may be a scalar), h_exp/... (one source), h_cast."""

    def __init__(self, tik, name, op, instr, dst, srcs, round_mode=None):
        self.name, self.op = name, op
        for r, x in zip(("dst", "src0", "src1"), [dst] + list(srcs)):
            P.check_owner(tik, name, r, x)
        self.d = _Region(name, "dst", dst, True)
        roles = ["src"] if len(srcs) == 1 else ["src0", "src1"]
        self.s, self.scalar = [], None
        for r, x in zip(roles, srcs):
            if r == "src1" and not isinstance(x, (Tensor, TensorView)):
                self.scalar = _scalar_value(name, self.d.t.dtype, x)
            else:
                self.s.append(_Region(name, r, x, True))
        self.rnd = 0
        dd = self.d.t.dtype
        if op == _CONV:
            sd = self.s[0].t.dtype
            from ._vector import _CONV as conv_table   # the vec_conv pairs and round modes
            if (sd, dd) not in conv_table:
                raise ConstraintError(f"{name}: conversion {sd} -> {dd} is not supported "
                                      f"(supported: {sorted(conv_table)})")
            rm = "" if round_mode is None else round_mode
            if rm not in conv_table[(sd, dd)]:
                raise ConstraintError(f"{name}: round_mode should be one of "
                                      f"{list(conv_table[(sd, dd)])} for {sd} -> {dd}, input "
                                      f"round_mode: {round_mode!r}")
            self.rnd = _ROUND[rm]
        else:
            for r in self.s:
                if r.t.dtype != dd:
                    raise ConstraintError(f"{name}: {r.role}'s dtype should be equal to dst's "
                                          f"dtype, input: {r.t.dtype} vs {dd}")
            _check_dtype(tik, name, instr, dd)
        self.sat = 1 if tik.target.saturation else 0
        regions = [self.d] + self.s
        if all(r.static for r in regions):
            _same_shape(name, regions, None)

    def run(self, st):
        env = st.env
        got = _same_shape(self.name, [self.d] + self.s, env)
        srcs = [r.view(st)[g[1]] for r, g in zip(self.s, got[1:])]
        if self.scalar is not None:
            v = self.scalar[0] if self.scalar[1] is None else self.scalar[1](env)
            srcs.append(np.full(srcs[0].size, v, dtype=srcs[0].dtype))
        dv = self.d.view(st)
        dv[got[0][1]] = _walk(self.op, dv.dtype, srcs, self.sat, rnd=self.rnd)
        _cost(self, self.name, srcs[0].size, dv.dtype.itemsize, self.s, [self.d])


class _HDup:
    def __init__(self, tik, dst, scalar):
        self.name = "h_duplicate"
        P.check_owner(tik, self.name, "dst", dst)
        P.check_owner(tik, self.name, "scalar", scalar)
        self.d = _Region(self.name, "dst", dst, True)
        self.v = _scalar_value(self.name, self.d.t.dtype, scalar)

    def run(self, st):
        v = self.v[0] if self.v[1] is None else self.v[1](st.env)
        dv = self.d.view(st)
        dv[self.d.get(st.env)[1]] = v
        _cost(self, self.name, 1, 1, [], [self.d])


class _HMove:
    def __init__(self, tik, dst, src):
        self.name = "h_data_move"
        P.check_owner(tik, self.name, "dst", dst)
        P.check_owner(tik, self.name, "src", src)
        self.d = _Region(self.name, "dst", dst, False)
        self.s = _Region(self.name, "src", src, False)
        if self.d.t.dtype != self.s.t.dtype:
            raise ConstraintError(f"h_data_move: src's dtype should be equal to dst's dtype, "
                                  f"input: {self.s.t.dtype} vs {self.d.t.dtype}")
        if self.d.static and self.s.static:
            _same_shape(self.name, [self.d, self.s], None)

    def run(self, st):
        gd, gs = _same_shape(self.name, [self.d, self.s], st.env)
        self.d.view(st)[gd[1]] = self.s.view(st)[gs[1]]
        _cost(self, self.name, int(np.prod(gs[0])), self.s.t.esize, [self.s], [self.d],
              "MTE2" if self.s.t.sidx == 0 else "MTE3")


class _HReduce:
    def __init__(self, tik, name, op, instr, dst, src, axis, keep_dims):
        self.name, self.op = name, op
        P.check_owner(tik, name, "dst", dst)
        P.check_owner(tik, name, "src", src)
        self.d = _Region(name, "dst", dst, True)
        self.s = _Region(name, "src", src, True)
        if self.d.t.dtype != self.s.t.dtype:
            raise ConstraintError(f"{name}: src's dtype should be equal to dst's dtype, "
                                  f"input: {self.s.t.dtype} vs {self.d.t.dtype}")
        _check_dtype(tik, name, instr, self.d.t.dtype)
        nd = len(self.s.dims)
        ax = tuple(range(nd)) if axis is None else (axis if isinstance(axis, (tuple, list))
                                                    else (axis,))
        norm = []
        for a in ax:
            if isinstance(a, bool) or not isinstance(a, (int, np.integer)) or not -nd <= a < nd:
                raise ConstraintError(f"{name}: axis must be ints in [{-nd}, {nd}), got "
                                      f"{axis!r}")
            norm.append(int(a) % nd)
        if len(set(norm)) != len(norm):
            raise ConstraintError(f"{name}: axis must not repeat, got {axis!r}")
        self.axis = tuple(sorted(norm))
        self.keep = bool(keep_dims)
        self.sat = 1 if tik.target.saturation else 0
        if self.d.static and self.s.static:
            self._shapes(None)

    def _shapes(self, env):
        (ss, si), (ds, di) = self.s.get(env), self.d.get(env)
        out = tuple(1 if i in self.axis else n for i, n in enumerate(ss))
        if _squeeze(ds) != _squeeze(out):
            raise ConstraintError(f"{self.name}: dst shape {ds} does not match the reduced "
                                  f"shape {tuple(n for i, n in enumerate(ss) if i not in self.axis)}"
                                  f" of src {ss} over axis {self.axis}")
        return ss, si, di

    def run(self, st):
        ss, si, di = self._shapes(st.env)
        x = self.s.view(st)[si].reshape(ss)
        keep = [i for i in range(len(ss)) if i not in self.axis]
        # reduced elements first: [R, K] with K the kept elements in row-major order
        x = np.ascontiguousarray(x.transpose(list(self.axis) + keep)).reshape(
            -1, int(np.prod([ss[i] for i in keep], dtype=np.int64)))
        # pairwise halving: row r += row r + h while the count halves (odd: last row waits)
        while x.shape[0] > 1:
            r = x.shape[0]
            h = r // 2
            y = _walk(self.op, x.dtype, [x[:h].reshape(-1), x[h:2 * h].reshape(-1)],
                      self.sat).reshape(h, -1)
            x = np.concatenate([y, x[2 * h:]]) if r % 2 else y
        self.d.view(st)[di] = x.reshape(-1)
        _cost(self, self.name, int(np.prod(ss)), self.s.t.esize, [self.s], [self.d])


class HighLevelMixin:
    """The TIK 1.5 h_* API (mixed into :class:`fastisa.tik.Tik`); see fastisa.tik._high."""

    def h_data_move(self, dst: Operand, src: Operand, *args: object, **kwargs: object) -> None:
        """``dst[region] = src[region]``, element for element in row-major order (any of
        GM, UB, L1 on either side; equal dtypes; equal shapes once length-1 dimensions are
        dropped).  Raises ConstraintError (dtype, shape), AccessError (a range outside its
        tensor).  Source: CANN TIK API reference (TIK 1.5 h_data_move); Ascend/samples
        softmax_tik.py.  See fastisa.tik._high for regions."""
        self._record(_HMove(self, dst, src))

    def h_duplicate(self, dst: Operand, scalar: RealArg, *args: object, **kwargs: object) -> None:
        """``dst[region] = scalar`` converted to dst's dtype (as vec_dup).  dst in UB.
        Source: CANN TIK API reference (TIK 1.5 h_duplicate); Ascend/samples softmax_tik.py."""
        self._record(_HDup(self, dst, scalar))

    def h_cast(self, dst: Operand, src: Operand, round_mode: str | None = "", *args: object,
               **kwargs: object) -> None:
        """``dst[region] = convert(src[region], round_mode)`` with vec_conv's pairs, round
        modes and rounding.  Source: CANN TIK API reference (TIK 1.5 h_cast)."""
        self._record(_HElementwise(self, "h_cast", _CONV, "vec_conv", dst, [src],
                                   round_mode))

    def h_reduce_max(self, dst: Operand, src: Operand, axis: Int | Sequence[Int] | None = None,
                     keep_dims: bool = False, *args: object, **kwargs: object) -> None:
        """``dst = max of src over axis`` (vec_max's comparison; dst in UB with the
        reduced shape, or it with length-1 dimensions).  See h_reduce_sum for the order."""
        self._record(_HReduce(self, "h_reduce_max", *H_REDUCE["h_reduce_max"], dst, src,
                              axis, keep_dims))

    def h_reduce_min(self, dst: Operand, src: Operand, axis: Int | Sequence[Int] | None = None,
                     keep_dims: bool = False, *args: object, **kwargs: object) -> None:
        """``dst = min of src over axis`` (vec_min's comparison).  See h_reduce_sum."""
        self._record(_HReduce(self, "h_reduce_min", *H_REDUCE["h_reduce_min"], dst, src,
                              axis, keep_dims))

    def h_reduce_sum(self, dst: Operand, src: Operand, axis: Int | Sequence[Int] | None = None,
                     keep_dims: bool = False, *args: object, **kwargs: object) -> None:
        """``dst = sum of src over axis`` with vec_add's arithmetic (rounded to the dtype
        after every add, saturating float16 on saturation-mode targets), in pairwise
        halving order: with the R reduced elements of one output as x[0..R), each step
        adds x[r] + x[r + R//2] for r < R//2 (an odd last element is carried) until one is
        left.  The order the TIK 1.5 compiler lowers h_reduce_sum to is not public; this
        is fastisa's documented choice (max/min do not depend on it).
        axis: int or tuple of ints (None: all); dst in UB.  Raises ConstraintError (axis,
        dtype, shape), AccessError."""
        self._record(_HReduce(self, "h_reduce_sum", *H_REDUCE["h_reduce_sum"], dst, src,
                              axis, keep_dims))

    def h_add(self, dst: Operand, src0: Operand, src1: Operand | RealArg, *args: object,
              **kwargs: object) -> None:
        """``dst[i] = src0[i] + src1[i]`` for every element i of the region (TIK 1.5 h_add).

        Elementwise with vec_add's arithmetic and dtypes (see Tik.vec_add); src1 may be a
        Scalar or an immediate, broadcast to every element.

        dst, src0, src1 -- UB Tensors or slices ``t[a:b, ...]`` of them, one dtype, one shape
            once length-1 dimensions are dropped.
        args, kwargs -- TIK 1.5's further options, accepted and ignored.

        Raises ConstraintError (scope, dtype, shape), AccessError (a slice outside its
        tensor). Source: CANN TIK API reference (TIK 1.5), h_add; see fastisa.tik._high.
        """
        self._record(_HElementwise(self, "h_add", *H_BINARY["h_add"], dst, [src0, src1]))

    def h_sub(self, dst: Operand, src0: Operand, src1: Operand | RealArg, *args: object,
              **kwargs: object) -> None:
        """``dst[i] = src0[i] - src1[i]`` for every element i of the region (TIK 1.5 h_sub).

        Elementwise with vec_sub's arithmetic and dtypes (see Tik.vec_sub); src1 may be a
        Scalar or an immediate, broadcast to every element.

        dst, src0, src1 -- UB Tensors or slices ``t[a:b, ...]`` of them, one dtype, one shape
            once length-1 dimensions are dropped.
        args, kwargs -- TIK 1.5's further options, accepted and ignored.

        Raises ConstraintError (scope, dtype, shape), AccessError (a slice outside its
        tensor). Source: CANN TIK API reference (TIK 1.5), h_sub; see fastisa.tik._high.
        """
        self._record(_HElementwise(self, "h_sub", *H_BINARY["h_sub"], dst, [src0, src1]))

    def h_mul(self, dst: Operand, src0: Operand, src1: Operand | RealArg, *args: object,
              **kwargs: object) -> None:
        """``dst[i] = src0[i] * src1[i]`` for every element i of the region (TIK 1.5 h_mul).

        Elementwise with vec_mul's arithmetic and dtypes (see Tik.vec_mul); src1 may be a
        Scalar or an immediate, broadcast to every element.

        dst, src0, src1 -- UB Tensors or slices ``t[a:b, ...]`` of them, one dtype, one shape
            once length-1 dimensions are dropped.
        args, kwargs -- TIK 1.5's further options, accepted and ignored.

        Raises ConstraintError (scope, dtype, shape), AccessError (a slice outside its
        tensor). Source: CANN TIK API reference (TIK 1.5), h_mul; see fastisa.tik._high.
        """
        self._record(_HElementwise(self, "h_mul", *H_BINARY["h_mul"], dst, [src0, src1]))

    def h_div(self, dst: Operand, src0: Operand, src1: Operand | RealArg, *args: object,
              **kwargs: object) -> None:
        """``dst[i] = src0[i] / src1[i]`` for every element i of the region (TIK 1.5 h_div).

        Elementwise with vec_div's arithmetic and dtypes (see Tik.vec_div); src1 may be a
        Scalar or an immediate, broadcast to every element.

        dst, src0, src1 -- UB Tensors or slices ``t[a:b, ...]`` of them, one dtype, one shape
            once length-1 dimensions are dropped.
        args, kwargs -- TIK 1.5's further options, accepted and ignored.

        Raises ConstraintError (scope, dtype, shape), AccessError (a slice outside its
        tensor). Source: CANN TIK API reference (TIK 1.5), h_div; see fastisa.tik._high.
        """
        self._record(_HElementwise(self, "h_div", *H_BINARY["h_div"], dst, [src0, src1]))

    def h_max(self, dst: Operand, src0: Operand, src1: Operand | RealArg, *args: object,
              **kwargs: object) -> None:
        """``dst[i] = max(src0[i], src1[i])`` for every element i of the region (TIK 1.5 h_max).

        Elementwise with vec_max's arithmetic and dtypes (see Tik.vec_max); src1 may be a
        Scalar or an immediate, broadcast to every element.

        dst, src0, src1 -- UB Tensors or slices ``t[a:b, ...]`` of them, one dtype, one shape
            once length-1 dimensions are dropped.
        args, kwargs -- TIK 1.5's further options, accepted and ignored.

        Raises ConstraintError (scope, dtype, shape), AccessError (a slice outside its
        tensor). Source: CANN TIK API reference (TIK 1.5), h_max; see fastisa.tik._high.
        """
        self._record(_HElementwise(self, "h_max", *H_BINARY["h_max"], dst, [src0, src1]))

    def h_min(self, dst: Operand, src0: Operand, src1: Operand | RealArg, *args: object,
              **kwargs: object) -> None:
        """``dst[i] = min(src0[i], src1[i])`` for every element i of the region (TIK 1.5 h_min).

        Elementwise with vec_min's arithmetic and dtypes (see Tik.vec_min); src1 may be a
        Scalar or an immediate, broadcast to every element.

        dst, src0, src1 -- UB Tensors or slices ``t[a:b, ...]`` of them, one dtype, one shape
            once length-1 dimensions are dropped.
        args, kwargs -- TIK 1.5's further options, accepted and ignored.

        Raises ConstraintError (scope, dtype, shape), AccessError (a slice outside its
        tensor). Source: CANN TIK API reference (TIK 1.5), h_min; see fastisa.tik._high.
        """
        self._record(_HElementwise(self, "h_min", *H_BINARY["h_min"], dst, [src0, src1]))

    def h_exp(self, dst: Operand, src: Operand, *args: object, **kwargs: object) -> None:
        """``dst[i] = exp(src[i])`` for every element i of the region (TIK 1.5 h_exp).

        Elementwise with vec_exp's arithmetic and dtypes (see Tik.vec_exp).

        dst, src -- UB Tensors or slices ``t[a:b, ...]`` of them, one dtype, one shape once
            length-1 dimensions are dropped.
        args, kwargs -- TIK 1.5's further options, accepted and ignored.

        Raises ConstraintError (scope, dtype, shape), AccessError (a slice outside its
        tensor). Source: CANN TIK API reference (TIK 1.5), h_exp; see fastisa.tik._high.
        """
        self._record(_HElementwise(self, "h_exp", *H_UNARY["h_exp"], dst, [src]))

    def h_ln(self, dst: Operand, src: Operand, *args: object, **kwargs: object) -> None:
        """``dst[i] = ln(src[i])`` for every element i of the region (TIK 1.5 h_ln).

        Elementwise with vec_ln's arithmetic and dtypes (see Tik.vec_ln).

        dst, src -- UB Tensors or slices ``t[a:b, ...]`` of them, one dtype, one shape once
            length-1 dimensions are dropped.
        args, kwargs -- TIK 1.5's further options, accepted and ignored.

        Raises ConstraintError (scope, dtype, shape), AccessError (a slice outside its
        tensor). Source: CANN TIK API reference (TIK 1.5), h_ln; see fastisa.tik._high.
        """
        self._record(_HElementwise(self, "h_ln", *H_UNARY["h_ln"], dst, [src]))

    def h_abs(self, dst: Operand, src: Operand, *args: object, **kwargs: object) -> None:
        """``dst[i] = abs(src[i])`` for every element i of the region (TIK 1.5 h_abs).

        Elementwise with vec_abs's arithmetic and dtypes (see Tik.vec_abs).

        dst, src -- UB Tensors or slices ``t[a:b, ...]`` of them, one dtype, one shape once
            length-1 dimensions are dropped.
        args, kwargs -- TIK 1.5's further options, accepted and ignored.

        Raises ConstraintError (scope, dtype, shape), AccessError (a slice outside its
        tensor). Source: CANN TIK API reference (TIK 1.5), h_abs; see fastisa.tik._high.
        """
        self._record(_HElementwise(self, "h_abs", *H_UNARY["h_abs"], dst, [src]))

    def h_sqrt(self, dst: Operand, src: Operand, *args: object, **kwargs: object) -> None:
        """``dst[i] = sqrt(src[i])`` for every element i of the region (TIK 1.5 h_sqrt).

        Elementwise with vec_sqrt's arithmetic and dtypes (see Tik.vec_sqrt).

        dst, src -- UB Tensors or slices ``t[a:b, ...]`` of them, one dtype, one shape once
            length-1 dimensions are dropped.
        args, kwargs -- TIK 1.5's further options, accepted and ignored.

        Raises ConstraintError (scope, dtype, shape), AccessError (a slice outside its
        tensor). Source: CANN TIK API reference (TIK 1.5), h_sqrt; see fastisa.tik._high.
        """
        self._record(_HElementwise(self, "h_sqrt", *H_UNARY["h_sqrt"], dst, [src]))

    def h_rsqrt(self, dst: Operand, src: Operand, *args: object, **kwargs: object) -> None:
        """``dst[i] = rsqrt(src[i])`` for every element i of the region (TIK 1.5 h_rsqrt).

        Elementwise with vec_rsqrt's arithmetic and dtypes (see Tik.vec_rsqrt).

        dst, src -- UB Tensors or slices ``t[a:b, ...]`` of them, one dtype, one shape once
            length-1 dimensions are dropped.
        args, kwargs -- TIK 1.5's further options, accepted and ignored.

        Raises ConstraintError (scope, dtype, shape), AccessError (a slice outside its
        tensor). Source: CANN TIK API reference (TIK 1.5), h_rsqrt; see fastisa.tik._high.
        """
        self._record(_HElementwise(self, "h_rsqrt", *H_UNARY["h_rsqrt"], dst, [src]))

    def h_rec(self, dst: Operand, src: Operand, *args: object, **kwargs: object) -> None:
        """``dst[i] = rec(src[i])`` for every element i of the region (TIK 1.5 h_rec).

        Elementwise with vec_rec's arithmetic and dtypes (see Tik.vec_rec).

        dst, src -- UB Tensors or slices ``t[a:b, ...]`` of them, one dtype, one shape once
            length-1 dimensions are dropped.
        args, kwargs -- TIK 1.5's further options, accepted and ignored.

        Raises ConstraintError (scope, dtype, shape), AccessError (a slice outside its
        tensor). Source: CANN TIK API reference (TIK 1.5), h_rec; see fastisa.tik._high.
        """
        self._record(_HElementwise(self, "h_rec", *H_UNARY["h_rec"], dst, [src]))

    def h_relu(self, dst: Operand, src: Operand, *args: object, **kwargs: object) -> None:
        """``dst[i] = relu(src[i])`` for every element i of the region (TIK 1.5 h_relu).

        Elementwise with vec_relu's arithmetic and dtypes (see Tik.vec_relu).

        dst, src -- UB Tensors or slices ``t[a:b, ...]`` of them, one dtype, one shape once
            length-1 dimensions are dropped.
        args, kwargs -- TIK 1.5's further options, accepted and ignored.

        Raises ConstraintError (scope, dtype, shape), AccessError (a slice outside its
        tensor). Source: CANN TIK API reference (TIK 1.5), h_relu; see fastisa.tik._high.
        """
        self._record(_HElementwise(self, "h_relu", *H_UNARY["h_relu"], dst, [src]))
