"""PTO-AS runner: execute a parsed :class:`Module` with the PTO Python API (see :mod:`fastisa.pto.asm`)."""

from __future__ import annotations

import warnings

import numpy as np

from ..errors import AccessError, AsmSyntaxError, ConstraintError, FastisaError
from ._asm_ast import ELEMENT_TYPES
from ._asm_ast import (
    AllocTileOp,
    ArithOp,
    ConstantOp,
    DpsOp,
    ForOp,
    MakeTensorViewOp,
    Module,
    PartitionViewOp,
    PtrType,
    ReturnOp,
    SetValidShapeOp,
    SsaOp,
    SyncOp,
    TAssignOp,
    GenericOp,
    MemRefType,
    ScalarType,
    TileBufType,
    ViewType,
)
from ._asm_ops import INSTRUCTIONS
from ._sync import apply_sync_text
from ..schedule import SOURCE as _SOURCE
import contextvars as _cv

#: How the engine schedule names this program's lines (``NAME:LINE``); ``fastisa run`` sets
#: it to the ``.pto`` file's name.
PROGRAM_NAME: "_cv.ContextVar[str]" = _cv.ContextVar("fastisa_pto_program", default="pto-as")
from . import _asm_calls
from ._asm_parser import parse
from ._asm_printer import format_type

# --------------------------------------------------------------------------------------
# Execution
# --------------------------------------------------------------------------------------

class _Pointer:
    """A pointer argument: a flat element buffer (grown on demand if it is output-only)."""

    def __init__(self, name, elem, np_dtype, array=None):
        self.name = name
        self.elem = elem
        self.np_dtype = np_dtype
        self.fill = array if isinstance(array, _RandomBuffer) else None
        if self.fill is not None:
            array = None
        self.given = array is not None
        self.shape = None if array is None else array.shape
        self.buf = (np.zeros(0, np_dtype) if array is None
                    else np.ascontiguousarray(array).reshape(-1).copy())
        self.views = []
        self.written = False
        self.warned = False     # a tload before any input or store was reported

    def ensure(self, extent, where):
        if extent <= self.buf.size:
            return
        if self.given:
            raise AccessError(f"{where}: the view needs {extent} elements of %{self.name} but "
                              f"the input array has {self.buf.size}")
        grown = (np.zeros(extent, self.np_dtype) if self.fill is None
                 else self.fill.values(extent))
        grown[:self.buf.size] = self.buf
        self.buf = grown

    def result(self):
        if self.given:
            return self.buf.reshape(self.shape)
        if len(self.views) == 1:
            shape, strides = self.views[0]
            dense = 1
            ok = True
            for s, st in zip(reversed(shape), reversed(strides)):
                if s > 1 and st != dense:
                    ok = False
                dense *= s
            if ok and dense == self.buf.size:
                return self.buf.reshape(shape)
        return self.buf


class _RandomBuffer:
    """Marker for an output-only pointer whose storage starts random (see ``run(random=)``)."""

    def __init__(self, rng, np_dtype):
        self.rng, self.np_dtype = rng, np_dtype

    def values(self, n):
        dt = self.np_dtype
        if dt.kind in "iu":
            lo = 0 if dt.kind == "u" else -8
            return self.rng.integers(lo, 8, n).astype(dt)
        if dt.kind == "b":
            return self.rng.integers(0, 2, n).astype(dt)
        return self.rng.uniform(-1.0, 1.0, n).astype(np.float32).astype(dt)


def _dense_strides(shape):
    st = []
    acc = 1
    for d in reversed(shape):
        st.append(acc)
        acc *= d
    return tuple(reversed(st))


class _TensorView:
    def __init__(self, ptr, shape, strides, layout, base=0):
        self.ptr, self.shape, self.strides, self.layout = ptr, shape, strides, layout
        self.base = base


class _PartView:
    def __init__(self, tv, offsets, sizes):
        self.tv, self.offsets, self.sizes = tv, offsets, sizes

    def global_tensor(self, P):
        """``GlobalTensor`` over the pointer's current buffer, starting at the partition."""
        tv = self.tv
        buf = tv.ptr.buf
        start = tv.base + sum(o * s for o, s in zip(self.offsets, tv.strides))
        fmt = ELEMENT_TYPES.get(tv.ptr.elem)
        # a format held in a plain byte container (hifloat8, fp4 x2) names itself
        kw = {"dtype": fmt} if fmt in _BYTE_CONTAINER_FORMATS else {}
        return P.GlobalTensor(buf[start:], shape=tuple(self.sizes), strides=tuple(tv.strides),
                              layout=P.Layout.DN if tv.layout == "dn" else P.Layout.ND, **kw)


#: element formats whose numpy container is uint8 (fastisa.pto._lowp_formats)
_BYTE_CONTAINER_FORMATS = frozenset({"hifloat8", "float4_e2m1x2", "float4_e1m2x2", "int4"})


class _Runner:
    def __init__(self, module: Module, func, inputs, P, random=None, shared=None):
        self.random = random
        self.returned = []
        #: state shared by every function a run calls: pipes, block/subblock ids
        self.shared = shared if shared is not None else _new_shared(module)
        self.subblock = 0
        self.module = module
        self.func = func
        self.P = P
        self.lines = module.source.split("\n")
        self.env = {}
        self.pointers = {}
        self._bind(inputs)

    # -- errors -------------------------------------------------------------------------
    def _src(self, line):
        return self.lines[line - 1] if 0 < line <= len(self.lines) else ""

    def syntax(self, msg, node):
        return AsmSyntaxError(msg, node.line, node.col, self._src(node.line))

    # -- arguments ----------------------------------------------------------------------
    def _bind(self, inputs):
        inputs = dict(inputs or {})
        names = [n for n, _ in self.func.args]
        extra = [k for k in inputs if k.lstrip("%") not in names]
        if extra:
            raise ConstraintError(f"run: no argument named {', '.join(map(repr, extra))} in "
                                  f"@{self.func.name}; its arguments are "
                                  f"{', '.join('%' + n for n in names) or 'none'}")
        inputs = {k.lstrip("%"): v for k, v in inputs.items()}
        for name, ty in self.func.args:
            if isinstance(ty, PtrType):
                npdt = _np_dtype(ty.elem)
                arr = inputs.get(name)
                if arr is not None:
                    arr = np.asarray(arr)
                    if arr.dtype.kind == "V" and arr.dtype.itemsize == npdt.itemsize \
                            and not arr.dtype.fields:
                        # raw bytes, e.g. an ml_dtypes bfloat16 array saved with np.save and
                        # read back with np.load (dtype |V2): the bits are the values
                        arr = arr.view(npdt)
                    if arr.dtype != npdt:
                        raise ConstraintError(
                            f"run: input %{name} must have dtype {npdt} for "
                            f"{format_type(ty)}, got {arr.dtype}")
                if arr is None and self.random is not None:
                    arr = _RandomBuffer(self.random, npdt)
                self.pointers[name] = self.env[name] = _Pointer(name, ty.elem, npdt, arr)
            elif not isinstance(ty, ScalarType):
                self.env[name] = self._bind_other(name, ty, inputs.get(name))
            else:
                if name not in inputs:
                    raise ConstraintError(f"run: scalar argument %{name} ({ty.name}) needs a "
                                          f"value in inputs")
                self.env[name] = _scalar(inputs[name], ty.name, f"input %{name}")

    def _bind_other(self, name, ty, arr):
        """A tile, tensor-view or memref argument: tiles get the array (or random values)
        in their valid region, views a dense global buffer of their static shape."""
        if isinstance(ty, MemRefType) and ty.space not in (None, "gm"):
            ty = ty.tile_type()
            if ty is None:
                return None
        if isinstance(ty, TileBufType):
            tile = self.make_tile(ty)
            if ty.v_row is None or ty.v_col is None:
                # ptoacc (issue 13): a ``valid=?`` dimension is the caller's run-time value:
                # the input array's extent when one is given, else the declared dimension
                self._dynamic_valid(name, ty, tile, arr)
            if arr is not None:
                np.copyto(tile.valid, np.asarray(arr).reshape(tile.valid.shape),
                          casting="same_kind")
            elif self.random is not None:
                tile.valid[...] = _RandomBuffer(self.random, tile.valid.dtype).values(
                    tile.valid.size).reshape(tile.valid.shape)
            return tile
        if isinstance(ty, (ViewType, MemRefType)):
            shape = ty.shape
            if None in shape:
                raise ConstraintError(f"run: view argument %{name} needs a static shape, got "
                                      f"{format_type(ty)}")
            npdt = _np_dtype(ty.elem)
            if arr is not None:
                arr = np.asarray(arr)
                if arr.dtype.kind == "V" and arr.dtype.itemsize == npdt.itemsize:
                    arr = arr.view(npdt)
                if arr.dtype != npdt:
                    raise ConstraintError(f"run: input %{name} must have dtype {npdt} for "
                                          f"{format_type(ty)}, got {arr.dtype}")
            elif self.random is not None:
                arr = _RandomBuffer(self.random, npdt)
            ptr = _Pointer(name, ty.elem, npdt, arr)
            self.pointers[name] = ptr
            strides = _dense_strides(shape)
            extent = int(np.prod(shape)) if shape else 1
            ptr.ensure(extent, f"argument %{name}")
            ptr.views.append((tuple(shape), strides))
            tv = _TensorView(ptr, list(shape), list(strides), "nd")
            if isinstance(ty, ViewType) and ty.kind == "tensor_view":
                return tv
            return _PartView(tv, [0] * len(shape), list(shape))
        return None

    @staticmethod
    def _dynamic_valid(name, ty, tile, arr):
        if arr is None:
            return
        shape = np.shape(arr)
        if len(shape) != 2:
            raise ConstraintError(f"run: input %{name} for a tile with a dynamic valid shape "
                                  f"must be 2-D (its shape is the valid shape), got shape "
                                  f"{shape}")
        for k, (dyn, n, lim) in enumerate(((ty.v_row is None, shape[0], ty.rows),
                                           (ty.v_col is None, shape[1], ty.cols))):
            what = ("rows", "cols")[k]
            if not dyn:
                continue
            if n > lim:
                raise ConstraintError(f"run: input %{name} has {n} {what}, more than the "
                                      f"tile's {lim} (the valid shape never exceeds the tile)")
            (tile.set_valid_row if k == 0 else tile.set_valid_col)(n)

    # -- values -------------------------------------------------------------------------
    def get(self, v):
        return self.env[v.name]

    def index(self, v, what, minimum=0):
        x = self.env[v.name]
        if isinstance(x, (np.floating, float)):
            raise self.syntax(f"{what} %{v.name} must be an integer", v)
        x = int(x)
        if minimum is not None and x < minimum:
            raise ConstraintError(f"line {v.line}, column {v.col}: {what} %{v.name} must be "
                                  f">= {minimum}, got {x}")
        return x

    # -- ops ----------------------------------------------------------------------------
    def run(self):
        from ._asm_generic import join_cores
        self._source_name = PROGRAM_NAME.get()
        token = _SOURCE.set("")
        try:
            sig = self.exec_ops(self.func.body)
        finally:
            _SOURCE.reset(token)
            if self.shared.get("pending"):
                join_cores(self.shared)
        out = {}
        for name, _ in self.func.args:
            p = self.pointers.get(name)
            if p is not None and p.written:
                out[name] = p.result()
        if sig and sig[0] == "return" and sig[1]:
            self.returned = sig[1]
        return out

    def exec_ops(self, ops):
        """Run ``ops`` in order; None, or the signal that ended them: ``("return", values)``,
        ``("yield", values)`` or ``("condition", flag, values)``."""
        for op in ops:
            if isinstance(op, ReturnOp):
                return ("return", [self.get(v) for v in op.values])
            if getattr(op, "line", None):
                _SOURCE.set(f"{self._source_name}:{op.line}")
            if isinstance(op, SyncOp):
                apply_sync_text(op.name, op.text)
                continue
            if isinstance(op, ForOp):
                sig = self.exec_for(op)
                if sig:
                    return sig
                continue
            try:
                if isinstance(op, GenericOp):
                    sig = self.exec_generic(op)
                    if sig:
                        return sig
                    continue
                self.execute(op)
            except AsmSyntaxError:
                raise
            except (FastisaError, NotImplementedError) as exc:
                if getattr(exc, "_pto_asm_line", None) is not None:
                    raise
                raise _annotate(exc, op, self._src(op.line)) from exc
        return None

    def exec_for(self, op: ForOp):
        try:
            lb = self.index(op.lb, "scf.for lower bound", minimum=None)
            ub = self.index(op.ub, "scf.for upper bound", minimum=None)
            step = self.index(op.step, "scf.for step", minimum=1)
        except FastisaError as exc:
            raise _annotate(exc, op, self._src(op.line)) from exc
        for i in range(lb, ub, step):
            self.env[op.iv] = i
            sig = self.exec_ops(op.body)
            if sig and sig[0] == "return":
                return sig
        return None

    # -- generic operations ---------------------------------------------------------------
    def exec_generic(self, op: GenericOp):
        from . import _asm_generic
        return _asm_generic.execute(self, op)

    def execute(self, op):
        P = self.P
        if isinstance(op, ConstantOp):
            self.env[op.result] = _scalar(op.value, op.type.name, "constant")
        elif isinstance(op, MakeTensorViewOp):
            ptr = self.get(op.ptr)
            base = 0
            if hasattr(ptr, "off") and hasattr(ptr, "ptr"):     # from pto.addptr
                base, ptr = ptr.off, ptr.ptr
            shape = [self.index(v, "shape") for v in op.shape]
            strides = [self.index(v, "stride") for v in op.strides]
            for d, (want, got) in enumerate(zip(op.type.shape, shape)):
                if want is not None and want != got:
                    raise self.syntax(f"pto.make_tensor_view: dimension {d} is {got} but the "
                                      f"type says {want}", op)
            extent = 0 if 0 in shape else 1 + sum((s - 1) * st for s, st in zip(shape, strides))
            ptr.ensure(base + extent, "pto.make_tensor_view")
            ptr.views.append((tuple(shape), tuple(strides)))
            layout = _attr(op.attrs, "layout") or "nd"
            layout = "dn" if "dn" in layout.lower() else "nd"
            self.env[op.result] = _TensorView(ptr, shape, strides, layout, base)
        elif isinstance(op, PartitionViewOp):
            tv = self.get(op.source)
            offsets = [self.index(v, "offset") for v in op.offsets]
            sizes = [self.index(v, "size") for v in op.sizes]
            for d, (o, s, n) in enumerate(zip(offsets, sizes, tv.shape)):
                if o + s > n:
                    raise AccessError(f"pto.partition_view: dimension {d}: offset {o} + size "
                                      f"{s} exceeds the tensor view's extent {n}")
            for d, (want, got) in enumerate(zip(op.type.shape, sizes)):
                if want is not None and want != got:
                    raise self.syntax(f"pto.partition_view: size {d} is {got} but the result "
                                      f"type says {want}", op)
            self.env[op.result] = _PartView(tv, offsets, sizes)
        elif isinstance(op, AllocTileOp):
            if physical_shape(op.type) != (op.type.rows, op.type.cols):
                self.make_tile(op.type, strict=True)    # raises pto-isa's AlignmentError
            tile = self.make_tile(op.type)
            if op.valid_row is not None:
                tile.set_valid_row(self.index(op.valid_row, "valid_row"))
            if op.valid_col is not None:
                tile.set_valid_col(self.index(op.valid_col, "valid_col"))
            if op.addr is not None:
                P.TASSIGN(tile, self.index(op.addr, "addr"))
            self.env[op.result] = tile
        elif isinstance(op, TAssignOp):
            tile = self.get(op.tile)
            P.TASSIGN(tile, self.index(op.addr, "addr"))
            self.env[op.result] = tile
        elif isinstance(op, ArithOp):
            self.env[op.result] = _arith(op, [self.get(v) for v in op.operands])
        elif isinstance(op, SetValidShapeOp):
            tile = self.get(op.tile)
            tile.set_valid_row(self.index(op.valid_row, "valid row"))
            tile.set_valid_col(self.index(op.valid_col, "valid col"))
        elif isinstance(op, DpsOp):
            if "ctrl" in self.shared:
                self._check_ctrl(op)
            ins = [self.get(o.value) for o in op.ins]
            dst = self.get(op.outs[0]) if op.outs else None
            outs = [self.env.get(v.name) for v in op.outs]
            extra = self.call(op.name, dst, ins, op.in_types, op.ins, op.attrs, outs)
            if extra is not None and len(op.outs) > 1:
                self.env[op.outs[1].name] = extra     # tmrgsort's executed counts
        elif isinstance(op, SsaOp):
            if "ctrl" in self.shared:
                self._check_ctrl(op)
            ty = op.out_types[0]
            if not isinstance(ty, TileBufType):
                raise self.syntax(f"pto.{op.name}: the result type must be a tile type", op)
            if ty.v_row is None or ty.v_col is None:
                raise self.syntax(f"pto.{op.name}: an SSA result tile needs a static valid "
                                  f"shape", op)
            dst = self.make_tile(ty)
            ins = [self.get(o.value) for o in op.operands]
            self.call(op.name, dst, ins, op.in_types, op.operands, op.attrs)
            self.env[op.results[0]] = dst
        else:  # pragma: no cover - the parser produces nothing else
            raise TypeError(f"cannot run {op!r}")

    def _check_ctrl(self, op):
        from ._asm_generic import ctrl_changed
        if ctrl_changed(self):
            raise NotImplementedError(
                f"pto.{op.name}: runs after pto.set_ctrl changed the CTRL register, whose "
                f"mode bits fastisa does not model, so this program cannot run")

    def make_tile(self, ty: TileBufType, strict: bool = False):
        """A Tile for ``ty``, of :func:`physical_shape`.  ``strict`` (pto.alloc_tile /
        alloc_multi_tile, which PTOAS verifies against pto-isa's layout rules): a type whose
        declared shape breaks them raises AlignmentError instead."""
        P = self.P
        rows, cols = physical_shape(ty)
        if strict and (rows, cols) != (ty.rows, ty.cols):
            P.Tile(_LOC[ty.loc](P), ELEMENT_TYPES[ty.dtype], ty.rows, ty.cols,
                   blayout=_BLAYOUT[ty.blayout](P), slayout=_SLAYOUT[ty.slayout](P),
                   fractal=ty.fractal)         # raises pto-isa's AlignmentError
        return self._new_tile(ty, rows, cols)

    def _new_tile(self, ty, rows, cols):
        P = self.P
        tile = P.Tile(_LOC[ty.loc](P), ELEMENT_TYPES[ty.dtype], rows, cols,
                      blayout=_BLAYOUT[ty.blayout](P),
                      valid_row=P.DYNAMIC if ty.v_row is None else ty.v_row,
                      valid_col=P.DYNAMIC if ty.v_col is None else ty.v_col,
                      slayout=_SLAYOUT[ty.slayout](P), fractal=ty.fractal,
                      pad=_PAD[ty.pad](P))
        # a padded dynamic valid shape starts at the declared shape, not the padded one
        if ty.v_row is None and rows != ty.rows:
            tile.set_valid_row(ty.rows)
        if ty.v_col is None and cols != ty.cols:
            tile.set_valid_col(ty.cols)
        if (rows, cols) != (ty.rows, ty.cols):
            tile.declared_shape = (ty.rows, ty.cols)    # the PTOAS type's (dense) shape
        return tile

    def global_tensor(self, pv: _PartView):
        return pv.global_tensor(self.P)

    def call(self, name, dst, ins, in_types, operands, attrs, outs=None):
        P = self.P
        if name == "store_dps":       # the older PTOAS's spelling of pto.tstore
            name = "tstore"
        kind = INSTRUCTIONS.get(name, "any")
        merged = _asm_calls.merged_attrs(operands, attrs)
        _asm_calls.check_unsimulated(name, merged)
        if name in _asm_calls.EMPTY_MARKER_OPS and isinstance(dst, P.Tile) \
                and dst.valid_shape == (0, 0):
            return None                 # ptoacc: PTOAS's 0x0 no-op replay marker
        handler = _asm_calls.HANDLERS.get(name)
        if handler is not None:
            got = handler(P, name, outs if outs else [dst], ins, merged)
            if got is not False:
                return got
        if kind == "load":
            ptr = ins[0].tv.ptr
            if not (ptr.given or ptr.fill is not None or ptr.written or ptr.warned):
                ptr.warned = True
                warnings.warn(f"pto.tload reads %{ptr.name}, which has no input array and "
                              f"nothing stored yet: it reads zeros (give it with inputs="
                              f"{{'{ptr.name}': array}}, or --input {ptr.name}=FILE.npy)",
                              RuntimeWarning, stacklevel=2)
            P.TLOAD(dst, self.global_tensor(ins[0]))
            return
        if kind == "store":
            pv = dst
            P.TSTORE(self.global_tensor(pv), ins[0])
            pv.tv.ptr.written = True
            return
        if name == "tsync":
            return                  # a pipe sync: nothing to simulate
        api = name.upper().replace(".", "_")
        if api.endswith("_DPS"):
            api = api[:-4]
        fn = getattr(P, api, None)
        if fn is None:
            raise NotImplementedError(f"pto.{name}: fastisa.pto has no {api} yet, so this "
                                      f"program cannot run")
        if kind == "any":
            # global-memory views go to the API as GlobalTensors (tprefetch, mgather,
            # mscatter, ...); a view written as the destination counts as stored
            args = ([] if dst is None else [dst]) + list(ins)
            args = [a.global_tensor(P) if isinstance(a, _PartView) else a for a in args]
            fn(*args)
            if isinstance(dst, _PartView):
                dst.tv.ptr.written = True
            return
        if kind == "cvt":
            mode = _attr(operands[0].attrs, "rmode") or _attr(attrs, "rmode")
            fn(dst, ins[0], _round_mode(P, mode))
        elif name == "trecip":
            if _high_precision(operands[0].attrs + tuple(attrs)):
                fn(dst, ins[0], precision=P.RecipAlgorithm.HIGH_PRECISION)
            else:
                fn(dst, ins[0])
        else:
            fn(dst, *ins)


def _annotate(exc, op, source_line):
    name = getattr(op, "name", None)
    where = f"line {op.line}, column {op.col}" + (f" (pto.{name})" if name else "")
    msg = f"{where}: {exc}"
    try:
        new = type(exc)(msg)
    except Exception:  # an exception class with an unusual constructor: keep it, add a note
        exc.add_note(msg)
        new = exc
    new.line = op.line
    new.column = op.col
    new.source_line = source_line
    new._pto_asm_line = op.line
    return new


# ---- ptoacc branch (issue 13): PTOAS tile types pto-isa's Tile cannot declare --------------
def _round_up(n, m):
    return -(-n // m) * m


def physical_shape(ty: TileBufType) -> tuple[int, int]:
    """The (rows, cols) fastisa allocates for a ``!pto.tile_buf`` type.

    PTOAS's tile_buf type parser accepts any positive shape (lib/PTO/IR/PTOTypeDefs.cpp:
    "32-byte alignment and boxed layout divisibility checks removed - not general hardware
    requirements"); only ``pto.alloc_tile`` / ``alloc_multi_tile`` / ``materialize_tile``
    check pto-isa's layout rules (PTO.cpp ``verifyTileBufLayoutConstraints``; fastisa
    allocates those with the declared shape, so it raises AlignmentError as PTOAS does).  So
    function-argument tiles, ``pto.declare_tile`` and the VPTO-backend programs use
    shapes such as a 32 x 1 float32 row-major per-row operand or a 16 x 16 fp8 vec tile
    (16-byte rows), which pto-isa's ``Tile`` static_asserts reject
    (include/pto/common/pto_tile.hpp: row-major NoneBox ``Cols * sizeof(T) % 32 == 0``,
    column-major ``Rows * sizeof(T) % 32 == 0``, boxed ``Cols % InnerCols == 0`` and,
    unless Vec / one row / the MX box, ``Rows % InnerRows == 0``).  fastisa's
    :class:`fastisa.pto.Tile` keeps pto-isa's rule; PTO-AS maps such a type to the
    smallest legal physical tile that holds it -- the declared extent rounded up to the
    32-byte row (column) or the fractal box -- with the declared shape as its valid shape
    (a dynamic ``?`` valid shape starts at the declared shape).  This is how pto-isa code
    spells the same operand (e.g. ``Tile<Vec, float, 32, 8, RowMajor, 32, 1>`` for a 32 x 1
    per-row operand): every instruction sees the declared valid region; only the padding
    columns (rows) are extra storage.  A tile the program places at an explicit address
    (``addr =`` / ``pto.tassign``) then spans the padded size."""
    from ._tile import _fmt_of, inner_shape
    rows, cols = ty.rows, ty.cols
    fmt = _fmt_of(ELEMENT_TYPES[ty.dtype], "pto.tile_buf")
    isz = fmt.np_dtype.itemsize
    if ty.slayout == "none_box":
        if ty.blayout == "row_major":
            if fmt.lanes == 2:              # an x2 tile's cols count bytes; 16 bytes a row
                return rows, _round_up(cols, 16)
            return rows, _round_up(cols, max(1, 32 // isz)) if (cols * isz) % 32 else cols
        return (_round_up(rows, max(1, 32 // isz)) if (rows * isz) % 32 else rows), cols
    ir, ic = inner_shape(isz, _SLAYOUT_NAMES[ty.slayout], ty.fractal)
    cols = _round_up(cols, ic)
    if ty.loc != "vec" and rows != 1 and ty.fractal != 32:
        rows = _round_up(rows, ir)
    return rows, cols


_SLAYOUT_NAMES = {"none_box": 0, "row_major": 1, "col_major": 2}
# ---- end ptoacc ---------------------------------------------------------------------------


# enum lookups, resolved against the API module at run time
_LOC = {k: (lambda P, n=n: getattr(P.TileType, n)) for k, n in
        (("vec", "Vec"), ("mat", "Mat"), ("left", "Left"), ("right", "Right"), ("acc", "Acc"),
         ("bias", "Bias"), ("scaling", "Scaling"))}
_BLAYOUT = {"row_major": lambda P: P.BLayout.RowMajor, "col_major": lambda P: P.BLayout.ColMajor}
_SLAYOUT = {"none_box": lambda P: P.SLayout.NoneBox, "row_major": lambda P: P.SLayout.RowMajor,
            "col_major": lambda P: P.SLayout.ColMajor}
_PAD = {0: lambda P: P.PadValue.Null, 1: lambda P: P.PadValue.Zero, 2: lambda P: P.PadValue.Max,
        3: lambda P: P.PadValue.Min}


def _attr(attrs, key):
    for k, v in attrs:
        if k == key:
            return v
    return None


def _high_precision(attrs) -> bool:
    for k, v in attrs:
        if k == "high_precision" and v in ("unit", "true"):
            return True
        if k in ("precision", "recip_precision") and "high" in v.lower():
            return True
    return False


def _round_mode_name(text):
    """``#pto<round_mode FLOOR>`` / ``"FLOOR"`` / ``FLOOR`` -> ``"FLOOR"``."""
    if text is None:
        return "CAST_RINT"
    t = text.strip()
    if t.startswith("#"):
        inner = t[t.index("<") + 1:t.rindex(">")] if "<" in t else t
        t = inner.split()[-1]
    return t.strip('"').upper()


def _round_mode(P, text):
    name = _round_mode_name(text)
    enum = _round_enum(P)
    for cand in (name, "CAST_" + name):
        if hasattr(enum, cand):
            return getattr(enum, cand)
    raise ConstraintError(f"pto.tcvt: rmode must be one of "
                          f"{', '.join(m.name for m in enum)}, got {name!r}")


def _round_enum(P):
    for n in ("RoundMode", "TCvtRoundMode", "RMode", "Round"):
        e = getattr(P, n, None)
        if e is not None:
            return e
    raise NotImplementedError("fastisa.pto has no rounding-mode enum for TCVT")


_INT_BITS = {"ui64": 64, "si64": 64, "u64": 64, "i64": 64, "i32": 32, "i16": 16, "i8": 8, "i1": 1, "si32": 32, "si16": 16,
             "si8": 8, "ui32": 32, "ui16": 16, "ui8": 8, "u32": 32, "u16": 16, "u8": 8}


def _wrap(v: int, tname: str) -> int:
    """``v`` wrapped to the integer type ``tname`` (index: unbounded, like a 64-bit index)."""
    bits = _INT_BITS.get(tname)
    if bits is None:
        return int(v)
    v &= (1 << bits) - 1
    if not tname.startswith("u") and bits > 1 and v >= 1 << (bits - 1):
        v -= 1 << bits
    return v


def _unsigned(v: int, tname: str) -> int:
    bits = _INT_BITS.get(tname, 64)
    return int(v) & ((1 << bits) - 1)


def _arith(op: ArithOp, args):
    """Scalar ``arith`` ops: integers wrap to their width, floats round once to their type."""
    t = op.type.name
    name = op.name
    if name == "select":
        return args[1] if args[0] else args[2]
    if name == "negf":
        dt = _np_dtype(t)
        return dt.type(-dt.type(args[0]))
    if name in ("cmpi", "cmpf"):
        return int(_compare(op.predicate, args[0], args[1], op.src_type.name))
    if name == "bitcast":
        src = op.src_type.name
        a = np.array(args[0], dtype=_np_dtype(src)) if src not in ("index", "i1") else \
            np.array(args[0], dtype=np.int64)
        r = a.view(_np_dtype(t))[()]
        return int(r) if t in _INT_BITS or t == "index" else r
    if op.src_type is not None:                      # casts
        src = op.src_type.name
        x = args[0]
        if name in ("index_cast", "extsi", "trunci"):
            return _wrap(int(x), t)
        if name in ("index_castui", "extui"):
            return _wrap(_unsigned(int(x), src), t)
        if name in ("sitofp", "uitofp"):
            v = int(x) if name == "sitofp" else _unsigned(int(x), src)
            return np.array(v, dtype=np.int64 if name == "sitofp" else np.uint64).astype(
                _np_dtype(t))[()]
        if name in ("fptosi", "fptoui"):
            f = float(x)
            if not np.isfinite(f):
                raise ConstraintError(f"arith.{name}: cannot convert {f} to {t}")
            return _wrap(int(f), t)
        with np.errstate(over="ignore"):            # extf / truncf
            return np.array(x).astype(_np_dtype(t))[()]
    a, b = args
    if name in ("addf", "subf", "mulf", "divf", "maximumf", "minimumf", "maxnumf", "minnumf",
                "remf"):
        dt = _np_dtype(t)
        x, y = dt.type(a), dt.type(b)
        with np.errstate(all="ignore"):
            if name == "addf":
                r = x + y
            elif name == "subf":
                r = x - y
            elif name == "mulf":
                r = x * y
            elif name == "divf":
                r = x / y
            elif name == "maximumf":
                r = np.maximum(x, y)
            elif name == "maxnumf":
                r = np.fmax(x, y)
            elif name == "minnumf":
                r = np.fmin(x, y)
            elif name == "remf":
                r = np.fmod(x, y)
            else:
                r = np.minimum(x, y)
        return dt.type(r)
    a, b = int(a), int(b)
    if name in ("divsi", "divui", "remsi", "remui", "ceildivsi", "floordivsi") and b == 0:
        raise ConstraintError(f"arith.{name}: division by zero")
    if name == "addi":
        r = a + b
    elif name == "subi":
        r = a - b
    elif name == "muli":
        r = a * b
    elif name == "divsi":
        r = abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)
    elif name == "remsi":
        r = a - b * (abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1))
    elif name == "divui":
        r = _unsigned(a, t) // _unsigned(b, t)
    elif name == "remui":
        r = _unsigned(a, t) % _unsigned(b, t)
    elif name == "ceildivsi":
        r = -((-a) // b)
    elif name == "floordivsi":
        r = a // b
    elif name == "maxsi":
        r = max(a, b)
    elif name == "minsi":
        r = min(a, b)
    elif name == "maxui":
        r = max(_unsigned(a, t), _unsigned(b, t))
    elif name == "minui":
        r = min(_unsigned(a, t), _unsigned(b, t))
    elif name == "ceildivui":
        if b == 0:
            raise ConstraintError(f"arith.{name}: division by zero")
        r = -(-_unsigned(a, t) // _unsigned(b, t))
    elif name == "andi":
        r = a & b
    elif name == "ori":
        r = a | b
    elif name == "xori":
        r = a ^ b
    else:                                             # shifts: MLIR gives poison when the
        bits = _INT_BITS.get(t, 64)                   # amount is >= the width: we raise
        if not 0 <= b < bits:
            raise ConstraintError(f"arith.{name}: shift amount {b} is outside [0, {bits})")
        if name == "shli":
            r = a << b
        elif name == "shrui":
            r = _unsigned(a, t) >> b
        else:
            r = a >> b
    return _wrap(r, t)


def _compare(pred, a, b, tname):
    """``arith.cmpi``/``arith.cmpf`` predicate ``pred`` on ``a``, ``b`` of type ``tname``."""
    if pred in ("eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge") and \
            not tname.startswith(("f", "bf")):
        x, y = int(a), int(b)
        if pred.startswith("u"):
            x, y = _unsigned(x, tname), _unsigned(y, tname)
        op = pred[-2:] if pred not in ("eq", "ne") else pred
        return {"eq": x == y, "ne": x != y, "lt": x < y, "le": x <= y, "gt": x > y,
                "ge": x >= y}[op]
    x, y = float(a), float(b)
    unordered = x != x or y != y
    if pred in ("false", "true"):
        return pred == "true"
    if pred == "ord":
        return not unordered
    if pred == "uno":
        return unordered
    rel = {"eq": x == y, "ne": x != y, "lt": x < y, "le": x <= y, "gt": x > y,
           "ge": x >= y}[pred[1:]]
    return (unordered or rel) if pred[0] == "u" else (not unordered and rel)


def _np_dtype(elem):
    from ._asm_ast import _np_dtype as np_dtype
    return np_dtype(elem)


def _scalar(value, tname, what):
    """``value`` (a number, numpy scalar or one-element array) as a scalar of MLIR type
    ``tname``: a numpy scalar of the type for floats (rounded once, RNE), an int otherwise."""
    arr = np.asarray(value)
    if arr.size != 1 or arr.dtype.kind not in "biuf":
        raise ConstraintError(f"run: {what} must be a single number for {tname}, got "
                              f"{'shape ' + str(arr.shape) if arr.size != 1 else repr(value)}")
    arr = arr.reshape(())
    if tname in _INT_BITS or tname == "index":
        if arr.dtype.kind == "f":
            f = float(arr)
            if not (np.isfinite(f) and f.is_integer()):
                raise ConstraintError(f"run: {what} must be an integer for {tname}, got {f!r}")
        v = int(arr)
        if tname == "index":
            return v
        bits = _INT_BITS[tname]
        lo = 0 if tname.startswith("u") or bits == 1 else -(1 << (bits - 1))
        hi = (1 << bits) - 1            # signless types also take the unsigned bit pattern
        if not lo <= v <= hi:
            raise ConstraintError(f"run: {what} {v} does not fit in {tname}")
        return _wrap(v, tname)
    dt = _np_dtype(tname)
    if arr.dtype == dt:
        return arr[()]
    with np.errstate(over="ignore"):
        return arr.astype(np.float64).astype(dt)[()]


def run(text, inputs=None, *, func: str | None = None, random=None,
        arch: str | None = None) -> dict:
    """Run a PTO-AS program and return the pointer arguments that ``pto.tstore`` wrote.

    ``text``: PTO-AS source (str) or a parsed :class:`Module`.  ``inputs``: ``{name: array
    or number}`` keyed by argument name without ``%`` (see the module docstring for the
    dtype rules and output-only pointers).  ``func``: which ``func.func`` to run (default:
    the ``pto.entry`` function, else the first function nothing calls).  ``arch``:
    ``"a3"``/``"a5"`` (PTOAS's ``--pto-arch``) when the module does not say.  ``random``: a ``numpy.random.Generator``; pointer arguments missing from
    ``inputs`` then start as random values of their element type (finite, in [-1, 1) for
    floats, small integers for integer types) instead of zeros -- for fuzzing and the
    conformance harness.  Returns ``{name: ndarray}``.

    Raises AsmSyntaxError for syntax/type errors; ConstraintError, AccessError,
    AlignmentError, OverlapError from instructions and views, prefixed with the line.
    """
    module = parse(text, arch=arch) if isinstance(text, str) else text
    f = module.func(func) if func is not None else _entry(module)
    from .. import pto as P

    arch = arch or module.target_arch
    restore = None
    if arch is not None:
        restore = _current_target(P)
        P.set_target(_target_name(P, arch))
    try:
        return _run_module(module, f, inputs, P, random)[0]
    finally:
        if restore is not None:
            P.set_target(restore)


def _run_module(module, f, inputs, P, random=None):
    """Run ``f`` (and its peer kernels); ``(outputs, {argument name: _Pointer})``."""
    peers = _peer_kernels(module, f)
    if not peers:
        r = _Runner(module, f, inputs, P, random)
        return r.run(), r.pointers
    return _run_cores(module, f, peers, inputs, P, random)


def _new_shared(module):
    split = False
    slot_num = None
    for f in module.funcs:
        for op in _walk_generic(f.body or ()):
            if "tpush" in op.name or "tpop" in op.name or "tfree" in op.name:
                for k in range(len(op.toks) - 2):
                    if op.toks[k].text == "split" and op.toks[k + 2].text not in ("0",):
                        split = True
            if "initialize" in op.name and "pipe" in op.name:
                for k in range(len(op.toks) - 2):
                    if op.toks[k].text == "slot_num" and op.toks[k + 1].text == "=":
                        try:
                            slot_num = max(slot_num or 1, int(op.toks[k + 2].text))
                        except ValueError:
                            pass
    return {"block": 0, "depth": 0, "subblocks": 2 if split else 1, "slot_num": slot_num or 8}


def run_core_group(shared, jobs):
    """Run ``jobs`` [(runner, fn)] as simulated cores taking turns (:mod:`fastisa.pto._cores`):
    the cube runner as the cube core, vector runners as their subblock; returns the results."""
    from . import _cores
    nsub = shared["subblocks"]
    order = sorted(range(len(jobs)), key=lambda k: (_kind(jobs[k][0].func) != "cube", k))
    jobs = [jobs[k] for k in order]
    roles, names = [], []
    for r, _fn in jobs:
        if _kind(r.func) == "vector":
            roles.append((0, r.subblock, nsub))
            names.append(f"AIV{r.subblock} (@{r.func.name})")
        else:
            roles.append((0, 0, nsub))
            names.append(f"AIC (@{r.func.name})")
    return _cores.run_cores([fn for _r, fn in jobs], roles, names)


def _walk_generic(ops):
    for op in ops:
        if isinstance(op, GenericOp):
            yield op
            for r in op.regions:
                yield from _walk_generic(r.ops)
        elif isinstance(op, ForOp):
            yield from _walk_generic(op.body)


def _kind(f):
    for k, v in f.attrs:
        if k in ("pto.kernel_kind", "pto.func_core_type"):
            return "cube" if ("cube" in v or "aic" in v.lower()) else "vector"
    return None


def _peer_kernels(module, entry):
    """Kernel functions of the other core kind that nothing calls: PTOAS compiles them as
    the peer cores of a mixed AIC/AIV kernel, so they run alongside the entry."""
    kind = _kind(entry)
    if kind is None:
        return []
    called = set()
    for f in module.funcs:
        if f.body is not None:
            called |= {t[1:] for t in _called_names(f.body)}
    return [f for f in module.funcs if f is not entry and f.body is not None
            and f.name not in called and _kind(f) not in (None, kind)]


def _run_cores(module, entry, peers, inputs, P, random):
    """Run ``entry`` and its peer kernels as simulated cores taking turns (the pipe is the
    only way they interact).  Vector kernels run once per subblock."""
    inputs = {k.lstrip("%"): v for k, v in dict(inputs or {}).items()}
    shared = _new_shared(module)
    runners = []
    first = None
    for f in [entry] + peers:
        names = {n for n, _ in f.args}
        mine = {k: v for k, v in inputs.items() if k in names}
        reps = shared["subblocks"] if _kind(f) == "vector" else 1
        for sb in range(reps):
            r = _Runner(module, f, mine, P, random, shared)
            r.subblock = sb
            if first is None:
                first = r
            else:
                _share_global_memory(first, r)
            runners.append(r)
    results = run_core_group(shared, [(r, r.run) for r in runners])
    out = {}
    for r in results:
        out.update(r or {})
    return out, first.pointers


def _share_global_memory(first, r):
    """Make runner ``r``'s pointer arguments the same global memory as ``first``'s: every
    core of one kernel launch gets the same kernel arguments, so the k-th pointer argument
    of a peer kernel is the entry's k-th (by position when the two signatures have the
    same pointer types there, else by name).  Without this each core would write its own
    copy and the outputs of all but one core would be lost."""
    fa, ra = first.func.args, r.func.args
    positional = len(fa) == len(ra)
    for k, (name, ty) in enumerate(ra):
        if name not in r.pointers:
            continue
        src = None
        if positional and isinstance(fa[k][1], PtrType) and fa[k][1] == ty:
            src = first.pointers.get(fa[k][0])
        if src is None and isinstance(ty, PtrType):
            got = first.pointers.get(name)
            src = got if got is not None and got.elem == ty.elem else None
        if src is not None:
            r.pointers[name] = r.env[name] = src


def _entry(module):
    """The function a run starts at: the one marked ``pto.entry``, else the first public
    function no other function calls, else the first."""
    funcs = [f for f in module.funcs if f.body is not None]
    for f in funcs:
        if any(k == "pto.entry" for k, _ in f.attrs):
            return f
    called = set()
    for f in funcs:
        called |= {t[1:] for t in _called_names(f.body)}
    for f in funcs:
        if f.name not in called and f.visibility != "private":
            return f
    return funcs[0] if funcs else module.func()


def _called_names(ops):
    for op in ops:
        if isinstance(op, GenericOp):
            if op.name == "func.call":
                yield from (t.text for t in op.toks if t.kind == "at")
            for r in op.regions:
                yield from _called_names(r.ops)
        elif isinstance(op, ForOp):
            yield from _called_names(op.body)


def _target_name(P, arch):
    a = arch.lower()
    return "A5" if a in ("a5", "ascend950", "950") else "A2A3" if a in (
        "a2", "a3", "a2a3", "a2/a3") else arch


def _current_target(P):
    for n in ("get_target", "target"):
        g = getattr(P, n, None)
        if callable(g):
            return g()
    return None

