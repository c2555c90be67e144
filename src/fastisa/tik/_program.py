"""TIK programs: tensors, scalars, expressions, control flow, BuildCCE and the debugger.

A TIK program is built first and run later.  Every API call records one operation into
the current block (``for_range``/``if_scope`` bodies are nested blocks); immediate
arguments are validated right there.  ``tikdb.start_debug(feed_dict)`` allocates one
byte buffer per scope, copies the inputs in and executes the recorded operations; values
only known at run time (Scalars, Exprs) are validated then, with the same messages.
"""

from __future__ import annotations

import contextlib
import operator
import sys

import numpy as np

from ..errors import AccessError, ConstraintError
from ..schedule import user_source as _user_source
from . import platform as _platform

import typing as _typing

if _typing.TYPE_CHECKING:
    from collections.abc import Iterator, Mapping, Sequence

    from numpy.typing import ArrayLike

    from .._types import Int
    from ._annot import IntArg, RealArg, TikDType, TikInputScalar, TikScalar, TikTensor

__all__ = ["Tik", "Tensor", "TensorView", "Scalar", "InputScalar", "Expr", "scope_gm",
           "scope_ubuf", "scope_cbuf", "scope_cbuf_out", "scope_ca", "scope_cb", "scope_cc",
           "UNINIT_FILL", "all_", "any_"]

scope_gm = "global"
scope_ubuf = "local.UB"
scope_cbuf = "local.L1"
scope_cbuf_out = "local.L0C"   # TIK tik_params.py: "new SCOPE_CBUF_OUT, actual scope_cc"
scope_ca = "local.L0A"
scope_cb = "local.L0B"
scope_cc = "local.L0C"
# ---- tik-cube: the cube scopes L0A/L0B/L0C are buffers 3..5; L1OUT is L0C (the 2020 TIK
# source, te/tik/tik_lib/tik_params.py: scope_cbuf_out = "local.L0C") -------------------
_SCOPE_INDEX = {scope_gm: 0, scope_ubuf: 1, scope_cbuf: 2, scope_ca: 3, scope_cb: 4,
                scope_cc: 5}
_SCOPE_SHORT = {scope_gm: "gm", scope_ubuf: "ub", scope_cbuf: "l1", scope_ca: "l0a",
                scope_cb: "l0b", scope_cc: "l0c"}
_NSCOPES = len(_SCOPE_INDEX)
# ---- end tik-cube ----

#: The byte every uninitialised UB/L1/GM byte (scratch tensors and outputs) is set to
#: before a run: 0xA5, i.e. float16 -0.02213 (0xA5A5), float32 -2.87e-16, int16 -23131.
#: Deterministic and non-zero, so a lane an instruction failed to write is visible.
#: Per instance: ``tik.Tik(uninit_fill=...)``.
UNINIT_FILL = 0xA5

#: dtype name -> (numpy dtype, fi_format code or -1, element bytes)
_DTYPES = {
    "uint8": (np.dtype(np.uint8), 0, 1), "int8": (np.dtype(np.int8), 1, 1),
    "uint16": (np.dtype(np.uint16), 2, 2), "int16": (np.dtype(np.int16), 3, 2),
    "uint32": (np.dtype(np.uint32), 4, 4), "int32": (np.dtype(np.int32), 5, 4),
    "float16": (np.dtype(np.float16), 10, 2), "float32": (np.dtype(np.float32), 13, 4),
    "uint64": (np.dtype(np.uint64), -1, 8), "int64": (np.dtype(np.int64), -1, 8),
}
_INT_SCALAR_DTYPES = ("int16", "int32", "int64", "uint16", "uint32", "uint64")


def _dtype_name(dtype) -> str:
    name = np.dtype(dtype).name if not isinstance(dtype, str) else dtype
    if name not in _DTYPES:
        raise ConstraintError(f"dtype should be one of {sorted(_DTYPES)}, input dtype: {dtype!r}")
    return name


def _is_float(dtype: str) -> bool:
    return dtype.startswith("float")


def cast_value(dtype: str, v):
    """Convert a Python number to ``dtype`` the way TIK does (``numpy.<dtype>(v)``):
    floats round to nearest even, float -> int truncates, ints wrap."""
    if _is_float(dtype):
        with np.errstate(over="ignore"):
            return float(np.array(float(v), dtype=np.float64).astype(_DTYPES[dtype][0]))
    iv = int(v) if not isinstance(v, (int, np.integer)) else int(v)
    info = np.iinfo(_DTYPES[dtype][0])
    span = int(info.max) - int(info.min) + 1
    return (iv - int(info.min)) % span + int(info.min)


# ======================================================================================
# Expressions and scalars
# ======================================================================================

def _const_fn(v):
    return lambda env: v


class Expr:
    """A scalar expression over Scalars (TIK ``Expr``): arithmetic builds a tree, which
    is compiled to a closure; ``const`` is its value when it is static."""

    __slots__ = ("dtype", "const", "fn", "owner")

    def __init__(self, dtype: str, const=None, fn=None, owner=None):
        self.dtype = dtype
        self.const = const
        self.fn = fn if fn is not None else _const_fn(const)
        #: the tik.Tik() whose Scalars the expression reads (None: a constant)
        self.owner = owner

    def eval_value(self):
        """The Python value when static, else None (as TIK's ``Expr.eval_value``)."""
        return self.const

    # arithmetic ---------------------------------------------------------------------
    def _bin(self, other, f, swap=False, dtype=None):
        a, b = (as_expr(other), self) if swap else (self, as_expr(other))
        dt = dtype or (a.dtype if not isinstance(a, _Const) else b.dtype)
        if a.const is not None and b.const is not None:
            return _Const(dt, f(a.const, b.const))
        fa, fb = a.fn, b.fn
        return Expr(dt, fn=lambda env: f(fa(env), fb(env)), owner=_join_owner(a, b))

    def __add__(self, o): return self._bin(o, operator.add)
    def __radd__(self, o): return self._bin(o, operator.add, True)
    def __sub__(self, o): return self._bin(o, operator.sub)
    def __rsub__(self, o): return self._bin(o, operator.sub, True)
    def __mul__(self, o): return self._bin(o, operator.mul)
    def __rmul__(self, o): return self._bin(o, operator.mul, True)
    def __floordiv__(self, o): return self._bin(o, operator.floordiv)
    def __rfloordiv__(self, o): return self._bin(o, operator.floordiv, True)
    def __truediv__(self, o): return self._bin(o, _tdiv)
    def __rtruediv__(self, o): return self._bin(o, _tdiv, True)
    def __mod__(self, o): return self._bin(o, operator.mod)
    def __rmod__(self, o): return self._bin(o, operator.mod, True)
    def __lshift__(self, o): return self._bin(o, operator.lshift)
    def __rshift__(self, o): return self._bin(o, operator.rshift)
    def __and__(self, o): return self._bin(o, operator.and_)
    def __or__(self, o): return self._bin(o, operator.or_)
    def __xor__(self, o): return self._bin(o, operator.xor)
    def __lt__(self, o): return self._bin(o, operator.lt, dtype="bool")
    def __le__(self, o): return self._bin(o, operator.le, dtype="bool")
    def __gt__(self, o): return self._bin(o, operator.gt, dtype="bool")
    def __ge__(self, o): return self._bin(o, operator.ge, dtype="bool")
    def __eq__(self, o): return self._bin(o, operator.eq, dtype="bool")  # type: ignore[override]
    def __ne__(self, o): return self._bin(o, operator.ne, dtype="bool")  # type: ignore[override]
    __hash__ = object.__hash__

    def __neg__(self):
        if self.const is not None:
            return _Const(self.dtype, -self.const)
        f = self.fn
        return Expr(self.dtype, fn=lambda env: -f(env), owner=self.owner)

    def __bool__(self):
        if self.const is None:
            raise TypeError("a runtime TIK Expr has no Python truth value; use if_scope")
        return bool(self.const)

    def __index__(self):
        if self.const is None or not isinstance(self.const, (int, np.integer)):
            raise TypeError("a runtime TIK Expr cannot be used as a Python int")
        return int(self.const)

    def __repr__(self):
        return f"Expr({self.dtype}, {self.const if self.const is not None else '<runtime>'})"


def _join_owner(a: Expr, b: Expr):
    """The instance an expression over ``a`` and ``b`` belongs to; Scalars of two
    ``tik.Tik()`` instances cannot meet (their values live in different runs)."""
    if a.owner is None or b.owner is None or a.owner is b.owner:
        return a.owner if a.owner is not None else b.owner
    raise ConstraintError("Expr: an expression mixes Scalars of two tik.Tik() instances "
                          "(a Scalar belongs to the instance that declared it)")


def check_owner(tik, instruction: str, parameter: str, x) -> None:
    """Raise ConstraintError unless every Tensor, TensorView, Scalar and Expr in ``x`` (a
    value or a list/tuple of them) belongs to ``tik`` (issue 12: a tensor of another
    instance has its offset in that instance's buffers, so running it here would address
    the wrong memory)."""
    if isinstance(x, (list, tuple)):
        for y in x:
            check_owner(tik, instruction, parameter, y)
        return
    if isinstance(x, TensorView):
        check_owner(tik, instruction, parameter, x.tensor)
        check_owner(tik, instruction, parameter, x.offset)
        return
    if isinstance(x, Tensor):
        if x.tik is not tik:
            raise ConstraintError(f"{instruction}: {parameter} must be a Tensor of this "
                                  f"tik.Tik() instance, got tensor {x.name!r} declared by "
                                  f"another instance")
        return
    if isinstance(x, Expr) and x.owner is not None and x.owner is not tik:
        what = f"Scalar {x.name!r}" if isinstance(x, Scalar) else "an Expr over Scalars"
        raise ConstraintError(f"{instruction}: {parameter} must be a Scalar/Expr of this "
                              f"tik.Tik() instance, got {what} declared by another instance")


def _check_recorded_owner(tik, op, depth=0, seen=None) -> None:
    """Every instruction recorded into ``tik`` is scanned once for Tensors, TensorViews,
    Scalars and Exprs of another instance (its attributes, their lists and tuples, and the
    fastisa.tik objects they hold, a few levels deep): the catch-all behind the per-parameter
    checks, so an instruction family that forgets :func:`check_owner` still cannot run a
    foreign tensor in this instance's buffers (issue 12)."""
    if seen is None:
        seen = set()
    if id(op) in seen or depth > 3:
        return
    seen.add(id(op))
    if isinstance(op, (Tensor, TensorView, Expr)):
        check_owner(tik, type(op).__name__, "operand", op)
        return
    if isinstance(op, (list, tuple)):
        for x in op:
            _check_recorded_owner(tik, x, depth + 1, seen)
        return
    mod = getattr(type(op), "__module__", "") or ""
    if depth and not mod.startswith("fastisa.tik"):
        return
    vals = list(getattr(op, "__dict__", {}).values())
    for slot in getattr(type(op), "__slots__", ()):
        if hasattr(op, slot):
            vals.append(getattr(op, slot))
    name = getattr(op, "name", None) or type(op).__name__.strip("_")
    for v in vals:
        if v is tik or callable(v) and not isinstance(v, (Tensor, Expr)):
            continue
        if isinstance(v, (Tensor, TensorView, Expr)):
            check_owner(tik, str(name), "an operand", v)
        elif isinstance(v, (list, tuple)) or (hasattr(v, "__dict__") or hasattr(
                type(v), "__slots__")) and type(v).__module__.startswith("fastisa.tik"):
            _check_recorded_owner(tik, v, depth + 1, seen)


def _tdiv(a, b):
    if isinstance(a, int) and isinstance(b, int):
        q = abs(a) // abs(b)
        return q if (a >= 0) == (b >= 0) else -q
    return a / b


class _Const(Expr):
    __slots__ = ()


def as_expr(x) -> Expr:
    if isinstance(x, Expr):
        return x
    if isinstance(x, (bool, np.bool_)):
        return _Const("bool", bool(x))
    if isinstance(x, (int, np.integer)):
        return _Const("int32", int(x))
    if isinstance(x, (float, np.floating)):
        return _Const("float32", float(x))
    raise ConstraintError(f"expected an int/float immediate, Scalar or Expr, got {x!r}")


def all_(*conds) -> Expr:
    """``tik.all(a, b, ...)``: logical and of conditions."""
    out = as_expr(conds[0])
    for c in conds[1:]:
        out = out._bin(c, lambda x, y: bool(x) and bool(y), dtype="bool")
    return out


def any_(*conds) -> Expr:
    """``tik.any(a, b, ...)``: logical or of conditions."""
    out = as_expr(conds[0])
    for c in conds[1:]:
        out = out._bin(c, lambda x, y: bool(x) or bool(y), dtype="bool")
    return out


class Scalar(Expr):
    """A scalar register (``tik_instance.Scalar(dtype, name, init_value)``); its value
    lives in the run's environment.  ``set_as`` records an assignment."""

    __slots__ = ("tik", "sid", "name")

    def __init__(self, tik: "Tik", dtype="int64", name="reg_buf", init_value=None):
        dtype = _dtype_name(dtype)
        self.tik = tik
        self.sid = tik._new_sid()
        self.name = name
        super().__init__(dtype, None, operator.itemgetter(self.sid), tik)
        if init_value is not None:
            self.set_as(init_value)

    def set_as(self, value: RealArg, src_offset: IntArg | None = None) -> None:
        """Record ``self = value`` (an immediate, Scalar, Expr or a tensor element)."""
        check_owner(self.tik, "set_as", "value", value)
        self.tik._record(_Assign(self, value))

    def __repr__(self):
        return f"Scalar({self.name!r}, {self.dtype})"


class InputScalar(Scalar):
    """A kernel argument scalar, fed by name through ``start_debug(feed_dict)``."""

    __slots__ = ()

    def __init__(self, tik, dtype="int64", name="input_scalar"):
        super().__init__(tik, dtype, name, None)


class _Assign:
    __slots__ = ("sid", "dtype", "fn", "run")

    def __init__(self, scalar: Scalar, value):
        self.sid = scalar.sid
        self.dtype = dtype = scalar.dtype
        if isinstance(value, (Tensor, TensorView)):
            view = value if isinstance(value, TensorView) else TensorView(value, 0)
            self.run = self._run_read
            self.fn = view._reader(dtype)
        else:
            e = as_expr(value)
            if e.const is not None:
                v = cast_value(dtype, e.const)
                self.fn = lambda env: v
            else:
                f = e.fn
                self.fn = lambda env: cast_value(dtype, f(env))

        if not hasattr(self, "run"):
            self.run = self._run_expr

    def _run_expr(self, st):
        st.env[self.sid] = self.fn(st.env)

    def _run_read(self, st):
        st.env[self.sid] = self.fn(st)


# ======================================================================================
# Tensors
# ======================================================================================

class Tensor:
    """A tensor in one scope (``tik_instance.Tensor(dtype, shape, name=, scope=)``).

    It occupies ``nbytes`` rounded up to 32 bytes at a 32-byte-aligned offset of its
    scope's buffer.  ``t[i]`` / ``t[a:b]`` / ``t[i, j]`` give a start element for an
    instruction (the flattened element index; may be an Expr)."""

    def __init__(self, tik, dtype, shape, name, scope, byte_off=None, base=None):
        self.tik = tik
        self.dtype = _dtype_name(dtype)
        self.np_dtype, self.code, self.esize = _DTYPES[self.dtype]
        if isinstance(shape, (int, np.integer, Expr)):
            shape = (shape,)
        shp = []
        for s in shape:
            s = s.const if isinstance(s, Expr) else s
            # TIK takes integral float dims (an operator's (24.0,) from a division)
            if isinstance(s, (float, np.floating)) and float(s).is_integer():
                s = int(s)
            if not isinstance(s, (int, np.integer)) or isinstance(s, bool) or s <= 0:
                raise ConstraintError(f"Tensor {name}: shape must be positive int immediates, "
                                      f"got {tuple(shape)!r}")
            shp.append(int(s))
        self.shape = tuple(shp)
        self.size = int(np.prod(self.shape))
        self.nbytes = self.size * self.esize
        self.name = name
        if scope not in _SCOPE_INDEX:
            raise ConstraintError(
                f"Tensor {name}: scope should be one of scope_gm, scope_ubuf, scope_cbuf, "
                f"scope_ca, scope_cb, scope_cc (= scope_cbuf_out), input scope: {scope!r}")
        self.scope = scope
        self.sidx = _SCOPE_INDEX[scope]
        self.base = base
        self.byte_off = byte_off if byte_off is not None else tik._alloc(self)

    # views -------------------------------------------------------------------------
    def _strides(self):
        st, acc = [], 1
        for s in reversed(self.shape):
            st.append(acc)
            acc *= s
        return st[::-1]

    def __getitem__(self, idx) -> "TensorView":
        """``t[i]`` / ``t[a:b]``: one index (or slice) counts elements of the tensor taken as
        one dimension, whatever its rank; ``t[i, j, ...]``: one index per dimension.

        TIK ``Tensor.__getitem__`` (caffe-huawei-atlas-convertor
        ``convertor/huawei/te/tik/api/tik_tensor.py``): "int ... The multidimensional data
        of the original tensor is considered as one dimension"; a tuple must have one
        entry per dimension (else "index not match shape")."""
        if not isinstance(idx, (tuple, list)):
            idx = (idx,)
        if len(idx) == 1:
            strides = [1]
        elif len(idx) == len(self.shape):
            strides = self._strides()
        else:
            raise ConstraintError(f"Tensor {self.name}: index not match shape: {len(idx)} "
                                  f"indices for shape {self.shape}")
        off = 0
        for d, ix in enumerate(idx):
            if isinstance(ix, slice):
                if ix.step not in (None, 1):
                    raise NotImplementedError("tensor slices with a step are not supported")
                ix = 0 if ix.start is None else ix.start
            if isinstance(ix, (bool, np.bool_)) or not isinstance(ix, (int, np.integer, Expr)):
                raise ConstraintError(f"Tensor {self.name}: an index must be an int, a "
                                      f"Scalar/Expr or a slice, got {ix!r}")
            if isinstance(ix, np.integer):
                ix = int(ix)
            off = off + ix * strides[d]
        # tik-cube: the index as given, for the TIK 1.5 h_* API's regions (tik/_high.py)
        return TensorView(self, off, tuple(idx))

    def __call__(self, index) -> "TensorView":
        """``t(i)`` is ``t[i]`` (TIK ``Tensor.__call__``)."""
        return self[index]

    def __setitem__(self, idx, value):
        self[idx].set_as(value)

    #: A TIK tensor is not a Python sequence: ``t[i]`` names a start element for an
    #: instruction and never runs out, so iterating it would never end (issue 12).
    __iter__ = None

    def reshape(self, new_shape: Sequence[IntArg]) -> "Tensor":
        """A view with another shape over the same elements."""
        t = Tensor(self.tik, self.dtype, new_shape, self.name, self.scope, self.byte_off, self)
        if t.size != self.size:
            raise ConstraintError(f"Tensor {self.name}: reshape must keep the element count "
                                  f"{self.size}, got shape {tuple(new_shape)}")
        return t

    def set_as(self, value: RealArg | Tensor, dst_offset: IntArg = 0,
               src_offset: IntArg | None = None) -> None:
        """``tensor.set_as(value)``: element ``dst_offset`` (default the first) of the
        tensor takes ``value`` (TIK ``Tensor.set_as`` assigns one element: its extent is
        one element of the dtype, tik_data_operation_api_.py ``assign``)."""
        self[dst_offset].set_as(value if src_offset is None or not isinstance(
            value, (Tensor, TensorView)) else value[src_offset])

    def flatten(self) -> "Tensor":
        """A one-dimensional view of all the elements (TIK ``Tensor.flatten``)."""
        return self.reshape((self.size,))

    def reinterpret_cast_to(self, dtype: TikDType) -> "Tensor":
        """A view of the same bytes as another dtype."""
        dt = _dtype_name(dtype)
        es = _DTYPES[dt][2]
        if self.nbytes % es:
            raise ConstraintError(f"Tensor {self.name}: {self.nbytes} bytes are not a whole "
                                  f"number of {dt} elements")
        return Tensor(self.tik, dt, (self.nbytes // es,), self.name, self.scope, self.byte_off,
                      self)

    def __repr__(self):
        return f"Tensor({self.name!r}, {self.dtype}, {self.shape}, {self.scope})"


class TensorView:
    """``tensor[index]``: a start element (an int or Expr) inside a tensor; ``index`` keeps
    the index as given (slices included) for the TIK 1.5 h_* API's regions."""

    __slots__ = ("tensor", "offset", "index")

    def __init__(self, tensor: Tensor, offset, index=None):
        self.tensor = tensor
        self.offset = offset
        self.index = index

    @property
    def dtype(self):
        return self.tensor.dtype

    @property
    def scope(self):
        return self.tensor.scope

    @property
    def name(self):
        return self.tensor.name

    def __getitem__(self, idx):
        return TensorView(self.tensor, as_expr(self.offset) + idx if isinstance(
            self.offset, Expr) or isinstance(idx, Expr) else self.offset + idx)

    def __setitem__(self, idx, value):
        """``t[i][j] = v``: element ``i + j`` set to ``value`` (TIK: ``t[i]`` is a tensor,
        whose ``__setitem__`` is ``self[idx].set_as(value)``)."""
        self[idx].set_as(value)

    def _reader(self, as_dtype=None):
        """A run-time reader of element ``offset`` as a Python number of ``as_dtype``
        (default: the tensor's dtype).

        A scalar of another dtype takes the element's BITS, as TIK's debugger does for
        ``Scalar.set_as(tensor[i])`` (caffe-huawei-atlas-convertor
        ``convertor/huawei/te/tik/debug/statement.py``, ``SetScalar.eval_``): a wider
        scalar reads its own width starting at the element (``tensor[i:i+ratio]`` viewed
        as the scalar's dtype: the vcmax index idiom ``int32 <- float16 pair``), a
        narrower one the element's low-order bytes, an equal width reinterprets."""
        t = self.tensor
        off = as_expr(self.offset)
        f = off.fn
        es = t.esize
        dtype = as_dtype or t.dtype
        npdt, ds = _DTYPES[dtype][0], _DTYPES[dtype][2]
        width = max(ds, es)   # bytes that must lie inside the tensor
        isf = _is_float(dtype)

        def read(st):
            i = f(st.env)
            if not 0 <= i or i * es + width > t.size * es:
                raise AccessError(f"AccessViolation: tensor {t.name} need read element {i}"
                                  f"{'' if width == es else f' as {dtype}'}, but only "
                                  f"{t.size} elements space")
            b = t.byte_off + i * es
            v = st.bufs[t.sidx][b:b + ds].view(npdt)[0]
            return float(v) if isf else int(v)
        return read

    def set_as(self, value: RealArg) -> None:
        """Record ``tensor[offset] = value`` (one element)."""
        tik = self.tensor.tik
        check_owner(tik, "set_as", "index", self.offset)
        check_owner(tik, "set_as", "value", value)
        tik._record(_Store(self, value))


class _Store:
    """``tensor[i].set_as(value)``.  A value of the tensor's width (and every immediate)
    is converted to the tensor's dtype; a Scalar/Expr/tensor element of another width is
    stored as BITS, as TIK's debugger does (caffe-huawei-atlas-convertor
    ``convertor/huawei/te/tik/debug/statement.py``, ``SetTensor``): a wider value fills
    ``ratio`` elements from ``i``, a narrower one the low-order bytes of element ``i``."""

    def __init__(self, view: TensorView, value):
        t = view.tensor
        self.t = t
        self.off = as_expr(view.offset).fn
        if isinstance(value, (Tensor, TensorView)):
            v = value if isinstance(value, TensorView) else TensorView(value, 0)
            self.val = v._reader()
            sdt = v.tensor.dtype
        else:
            e = as_expr(value)
            f = e.fn
            self.val = lambda st: f(st.env)
            sdt = None if isinstance(e, _Const) or e.dtype not in _DTYPES else e.dtype
        self.sdt = sdt if sdt is not None and _DTYPES[sdt][2] != t.esize else None

    def run(self, st):
        t = self.t
        i = self.off(st.env)
        sdt = self.sdt
        nb = t.esize if sdt is None else max(t.esize, _DTYPES[sdt][2])
        if not 0 <= i or i * t.esize + nb > t.size * t.esize:
            raise AccessError(f"AccessViolation: tensor {t.name} need write element {i}"
                              f"{'' if sdt is None else f' as {sdt}'}, but only {t.size} "
                              f"elements space")
        b = t.byte_off + i * t.esize
        if sdt is None:
            v = cast_value(t.dtype, self.val(st))
            st.bufs[t.sidx][b:b + t.esize] = np.array([v], dtype=t.np_dtype).view(np.uint8)
        else:
            npdt, ds = _DTYPES[sdt][0], _DTYPES[sdt][2]
            raw = np.array([cast_value(sdt, self.val(st))], dtype=npdt).view(np.uint8)
            st.bufs[t.sidx][b:b + ds] = raw


# ======================================================================================
# Control flow
# ======================================================================================

def run_block(ops, st):
    for op in ops:
        op.run(st)


class _Loop:
    def __init__(self, var, begin, end):
        self.sid = var.sid
        self.begin = as_expr(begin).fn
        self.end = as_expr(end).fn
        self.body = []

    def run(self, st):
        env = st.env
        sid = self.sid
        body = self.body
        for v in range(int(self.begin(env)), int(self.end(env))):
            env[sid] = v
            for op in body:
                op.run(st)


class _If:
    def __init__(self, cond):
        self.cond = as_expr(cond).fn
        self.then = []
        self.orelse = None
        self.elif_node = None   # the _If an elif_scope put in orelse

    def run(self, st):
        if self.cond(st.env):
            run_block(self.then, st)
        elif self.orelse is not None:
            run_block(self.orelse, st)


#: tik-cube: bytes of the cube buffers on the Ascend 310/910 generation (TIK docs: L0A/L0B
#: 64 KiB, L0C (= L1OUT) 256 KiB).
_CUBE_CAP = {3: 65536, 4: 65536, 5: 262144}
#: tik-cube: tensor start alignment in the cube buffers (one fractal: 512 B; L0C holds
#: float32 fractals of 1024 B -- the TIK debugger's L0C alignment, debug/intrinsic.py)
_CUBE_ALIGN = {3: 512, 4: 512, 5: 1024}


# ======================================================================================
# The run state and the debugger
# ======================================================================================

def _scope_buffer(nbytes: int, fill: int) -> np.ndarray:
    """A scope's memory: ``nbytes`` uint8 filled with ``fill``, starting on a 64-byte host
    boundary.  Operand addresses are 32-byte aligned in the scope (the TIK docs, Vector-Scalar Instructions: General Definition (Ascend TIK API reference, hiascend.com)), so with an
    aligned base every 32-byte block lies inside one host cache line; numpy's own large
    allocations start 16 bytes past a page, which split every other block across two lines
    (measured: masked float32 instructions up to 2.5x slower)."""
    raw = np.full(nbytes + 64, fill, dtype=np.uint8)
    off = -raw.ctypes.data % 64
    return raw[off:off + nbytes]


class _State:
    __slots__ = ("env", "bufs", "cbufs", "tik")

    def __init__(self, tik, nscalars, bufs):
        from .._kernels import walker
        self.env = [0] * nscalars
        self.bufs = bufs
        self.cbufs = walker.Buffers(bufs[:3])  # raw pointers (gm, ub, l1) for the walker
        self.tik = tik


class TikDebugger:
    """``tik_instance.tikdb``: ``start_debug(feed_dict, interactive=True)`` runs the
    program on fastisa's kernels and returns the BuildCCE outputs as numpy arrays, in
    order.  ``interactive`` is accepted and ignored (there is no debugger prompt)."""

    def __init__(self, tik):
        self._tik = tik

    def start_debug(self, feed_dict: Mapping[str, ArrayLike],
                    interactive: bool = True) -> list[np.ndarray]:
        tik = self._tik
        if tik.disable_debug:
            raise RuntimeError("Debug function is disabled, please try to open it when you "
                               "define the tik_instance.")
        if tik._inputs is None:
            raise RuntimeError("start_debug: call BuildCCE before debugging")
        st = tik._make_state(feed_dict)
        run_block(tik._root, st)
        outs = []
        for t in tik._outputs:
            buf = st.bufs[0]
            outs.append(buf[t.byte_off:t.byte_off + t.nbytes].view(t.np_dtype)
                        .reshape(t.shape).copy())
        return outs

    def debug_print(self, expr: object) -> None:
        """Recorded no-op (fastisa has no debug print stream)."""
        return None


class Tik:
    """``tik.Tik()``: a TIK program builder on the current target
    (:func:`fastisa.tik.platform.set_target`).

    Accepts the real constructor's arguments (``profiling`` may be a ``Dprofile``,
    ``disable_debug``, ``err_msg_level``, ``block_size``); ``uninit_fill`` (fastisa
    only) sets the byte uninitialised memory is filled with (default :data:`UNINIT_FILL`).
    """

    def __init__(self, profiling: object = None, disable_debug: bool = False,
                 err_msg_level: Int = 0, block_size: Int = 32, *,
                 uninit_fill: int | None = None, **kwargs: object) -> None:
        if isinstance(profiling, _platform.Dprofile):
            self.target = profiling.target
        else:
            self.target = _platform.get_target()
        if block_size != 32:
            raise ConstraintError(f"Tik: block_size must be 32, got {block_size!r}")
        self.disable_debug = bool(disable_debug)
        self.err_msg_level = err_msg_level
        self.uninit_fill = UNINIT_FILL if uninit_fill is None else int(uninit_fill) & 0xFF
        self._nscalars = 0
        self._root: list = []
        self._stack: list = [self._root]
        self._cursor = [0] * _NSCOPES
        self._peak = [0] * _NSCOPES
        self._tensors: list[Tensor] = []
        self._scalars: list[Scalar] = []
        self._inputs = None
        self._outputs = None
        self.tikdb = TikDebugger(self)
        #: ``tik_instance.d_profiling``: the chip's Dprofile (``get_aicore_num()`` ...)
        self.d_profiling = _platform.Dprofile()
        self.d_profiling.target = self.target

    # recording --------------------------------------------------------------------
    def _new_sid(self) -> int:
        self._nscalars += 1
        return self._nscalars - 1

    def _record(self, op):
        _check_recorded_owner(self, op)
        try:  # the kernel line, for the engine schedule's critical path and trace
            op._fi_src = _user_source(sys._getframe(1))
        except AttributeError:  # ops with __slots__ carry no source line
            pass
        self._stack[-1].append(op)

    def _alloc(self, t: Tensor) -> int:
        i = t.sidx
        off = orig = self._cursor[i]
        al = _CUBE_ALIGN.get(i, 32)     # tik-cube: L0A/L0B tensors on 512 B, L0C on 1024 B
        off = -(-off // al) * al
        self._cursor[i] = off + (t.nbytes + 31) // 32 * 32
        cap = {1: self.target.ub_size, 2: self.target.l1_size}.get(i, _CUBE_CAP.get(i))
        if cap is not None and self._cursor[i] > cap:
            self._cursor[i] = orig
            raise ConstraintError(
                f"Tensor {t.name}: {_SCOPE_SHORT[t.scope]} buffer overflow: the tensors need "
                f"{off + t.nbytes} bytes but {self.target.name} has only {cap}")
        self._peak[i] = max(self._peak[i], self._cursor[i])
        self._tensors.append(t)
        return off

    @contextlib.contextmanager
    def _scope(self, block):
        saved = list(self._cursor)
        self._stack.append(block)
        try:
            yield
        finally:
            self._stack.pop()
            # tensors declared in a scope are freed at its end (their buffer is reused)
            self._cursor[1:] = saved[1:]

    # public API: declarations ----------------------------------------------------
    def Tensor(self, dtype: TikDType, shape: IntArg | Sequence[IntArg], scope: str = scope_ubuf,
               name: str = "tensor", enable_buffer_reuse: bool = False,
               no_reuse_list: object = None, reuse_list: object = None,
               is_workspace: bool = False, is_atomic_add: bool = False,
               **kwargs: object) -> TikTensor:
        """Declare a tensor of ``dtype`` and ``shape`` in ``scope``."""
        return Tensor(self, dtype, shape, name, scope)

    def Scalar(self, dtype: TikDType = "int64", name: str = "reg_buf",
               init_value: RealArg | None = None, **kwargs: object) -> TikScalar:
        """Declare a scalar register, optionally initialised."""
        s = Scalar(self, dtype, name, init_value)
        self._scalars.append(s)
        return s

    def InputScalar(self, dtype: TikDType = "int64",
                    name: str = "input_scalar") -> TikInputScalar:
        """Declare a kernel-argument scalar (fed through ``start_debug``)."""
        s = InputScalar(self, dtype, name)
        self._scalars.append(s)
        return s

    # public API: control flow ---------------------------------------------------
    @contextlib.contextmanager
    def for_range(self, begin: IntArg, end: IntArg, name: str = "i", thread_num: Int = 1,
                  thread_type: str = "whole", block_num: Int = 1, dtype: TikDType = "int32",
                  for_type: str = "serial") -> Iterator[TikScalar]:
        """``with tik_instance.for_range(begin, end) as i:`` (iterations run in order;
        ``block_num`` cores run one after the other)."""
        check_owner(self, "for_range", "begin", begin)
        check_owner(self, "for_range", "end", end)
        var = Scalar(self, dtype, name)
        loop = _Loop(var, begin, end)
        self._record(loop)
        with self._scope(loop.body):
            yield var

    @contextlib.contextmanager
    def if_scope(self, cond: Expr | bool) -> Iterator[None]:
        """``with tik_instance.if_scope(cond):`` (cond: a Scalar comparison)."""
        check_owner(self, "if_scope", "cond", cond)
        node = _If(cond)
        self._record(node)
        with self._scope(node.then):
            yield

    def _open_chain(self, what):
        """The last _If of the if/elif chain the current block ends with, whose else
        branch is still open."""
        cur = self._stack[-1]
        node = cur[-1] if cur and isinstance(cur[-1], _If) else None
        while node is not None and node.orelse is not None and node.elif_node is not None:
            node = node.elif_node
        if node is None or node.orelse is not None:
            raise ConstraintError(f"{what}: must directly follow an if_scope or elif_scope")
        return node

    @contextlib.contextmanager
    def elif_scope(self, cond: Expr | bool) -> Iterator[None]:
        """``with tik_instance.elif_scope(cond):`` right after an ``if_scope`` or
        ``elif_scope`` block: runs when every earlier condition of the chain was false
        and ``cond`` is true."""
        node = self._open_chain("elif_scope")
        new = _If(cond)
        node.orelse = [new]
        node.elif_node = new
        with self._scope(new.then):
            yield

    @contextlib.contextmanager
    def else_scope(self) -> Iterator[None]:
        """``with tik_instance.else_scope():`` right after an ``if_scope`` or
        ``elif_scope`` block."""
        node = self._open_chain("else_scope")
        node.orelse = []
        with self._scope(node.orelse):
            yield

    @contextlib.contextmanager
    def new_stmt_scope(self, disable_sync: bool = False) -> Iterator[None]:
        """A plain scope: tensors declared inside are freed at its end."""
        block: list = []
        self._record(_Seq(block))
        with self._scope(block):
            yield

    def new_scope(self) -> contextlib.AbstractContextManager[None]:
        """``with tik_instance.new_scope():`` -- as :meth:`new_stmt_scope`."""
        return self.new_stmt_scope()

    # public API: build --------------------------------------------------------------
    def BuildCCE(self, kernel_name: str, inputs: Sequence[TikTensor | TikScalar] | TikTensor
                 | TikScalar | None, outputs: Sequence[TikTensor] | TikTensor | None,
                 output_files_path: str | None = None, enable_l2: bool = False,
                 config: object = None, flowtable: object = None, **kwargs: object):
        """Register the kernel's inputs (GM tensors, then InputScalars) and outputs."""
        if not isinstance(kernel_name, str) or not kernel_name:
            raise ConstraintError(f"BuildCCE: kernel_name must be a non-empty str, "
                                  f"got {kernel_name!r}")
        # TIK wraps a single tensor (or InputScalar) given as inputs/outputs in a list
        if isinstance(inputs, (Tensor, Scalar)):
            inputs = [inputs]
        if isinstance(outputs, (Tensor, Scalar)):
            outputs = [outputs]
        for what, lst in (("inputs", inputs), ("outputs", outputs)):
            if lst is not None and not isinstance(lst, (list, tuple)):
                raise ConstraintError(f"BuildCCE: {what} must be a list of tensors"
                                      f"{' and InputScalars' if what == 'inputs' else ''}, "
                                      f"got {type(lst).__name__}")
        inputs = list(inputs or [])
        outputs = list(outputs or [])
        check_owner(self, "BuildCCE", "inputs", [x for x in inputs
                                                  if isinstance(x, (Tensor, Scalar))])
        check_owner(self, "BuildCCE", "outputs", [x for x in outputs if isinstance(x, Tensor)])
        for what, lst in (("inputs", inputs), ("outputs", outputs)):
            if len(lst) > 64:
                raise ConstraintError(f"BuildCCE: {what} must have at most 64 entries, "
                                      f"got {len(lst)}")
        seen_scalar = False
        for x in inputs:
            if isinstance(x, InputScalar):
                seen_scalar = True
            elif isinstance(x, Tensor):
                if seen_scalar:
                    raise ConstraintError("BuildCCE: input tensors must come before "
                                          "InputScalars")
                if x.scope != scope_gm:
                    raise ConstraintError(f"BuildCCE: input {x.name} scope should be gm, "
                                          f"input scope: {x.scope}")
            else:
                raise ConstraintError(f"BuildCCE: inputs must be gm Tensors or InputScalars, "
                                      f"got {x!r}")
        for x in outputs:
            if not isinstance(x, Tensor) or x.scope != scope_gm:
                raise ConstraintError(f"BuildCCE: outputs must be gm Tensors, got {x!r}")
            if any(x is y for y in inputs):
                raise ConstraintError(f"BuildCCE: tensor {x.name} is both an input and an "
                                      f"output")
        # flowtable: InputScalars (and, in later CANN, GM tiling tensors) passed after the
        # inputs; the debugger binds them as feedable names too (TIK tik_build.py
        # BuildCCE / debug decorators.py bind_feed_var): issue 18 B8
        if flowtable is not None:
            flow = list(flowtable) if isinstance(flowtable, (list, tuple)) else [flowtable]
            for x in flow:
                if not isinstance(x, InputScalar) and not (isinstance(x, Tensor) and
                                                           x.scope == scope_gm):
                    raise ConstraintError(f"BuildCCE: flowtable entries must be "
                                          f"InputScalars (or gm Tensors), got {x!r}")
            if len(inputs) + len(flow) > 64:
                raise ConstraintError(f"BuildCCE: inputs and flowtable must have at most 64 "
                                      f"entries together, got {len(inputs) + len(flow)}")
            inputs = inputs + [x for x in flow if not any(x is y for y in inputs)]
        names = [x.name for x in inputs]
        if len(set(names)) != len(names):
            raise ConstraintError(f"BuildCCE: input names must be unique, got {names}")
        if not outputs:
            outputs = [Tensor(self, "float16", (1,), "__fake_tensor", scope_gm)]
        self.kernel_name = kernel_name
        self._inputs = inputs
        self._outputs = outputs

    # running ------------------------------------------------------------------------
    def _make_state(self, feed_dict) -> _State:
        if not isinstance(feed_dict, dict):
            raise ConstraintError(f"start_debug: feed_dict must be a dict, got {feed_dict!r}")
        names = {x.name for x in self._inputs}
        for k in feed_dict:
            if k not in names:
                raise ConstraintError(f"start_debug: feed_dict key {k!r} is not an input of "
                                      f"the kernel (inputs: {sorted(names)})")
        missing = [x.name for x in self._inputs if x.name not in feed_dict]
        if len(missing) == 1:
            raise ConstraintError(f"start_debug: input {missing[0]!r} is missing from feed_dict")
        if missing:   # every one at once
            raise ConstraintError(f"start_debug: inputs {', '.join(map(repr, missing))} are "
                                  f"missing from feed_dict")
        bufs = [_scope_buffer(max(c, 32), self.uninit_fill) for c in self._peak]
        st = _State(self, self._nscalars, bufs)
        for x in self._inputs:
            v = feed_dict[x.name]
            if isinstance(x, InputScalar):
                want = float if _is_float(x.dtype) else int
                if isinstance(v, bool) or not isinstance(v, want):
                    raise ConstraintError(f"{x.name} input dtype mismatch: InputScalar of "
                                          f"{x.dtype} needs a Python {want.__name__}, "
                                          f"got {type(v).__name__}")
                st.env[x.sid] = cast_value(x.dtype, v)
                continue
            a = np.asarray(v)
            if tuple(a.shape) != x.shape:
                raise ConstraintError(f"{x.name} input shape mismatch: expected {x.shape}, "
                                      f"got {tuple(a.shape)}")
            if a.dtype != x.np_dtype:
                raise ConstraintError(f"{x.name} input dtype mismatch: expected {x.dtype}, "
                                      f"got {a.dtype}")
            bufs[0][x.byte_off:x.byte_off + x.nbytes] = np.ascontiguousarray(a).view(
                np.uint8).reshape(-1)
        return st


class _Seq:
    def __init__(self, block):
        self.block = block

    def run(self, st):
        run_block(self.block, st)
