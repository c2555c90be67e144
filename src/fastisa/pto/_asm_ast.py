"""PTO-AS AST: types and operations as frozen dataclasses (see :mod:`fastisa.pto.asm_syntax`)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import AsmSyntaxError

ELEMENT_TYPES = {
    "f32": "float32", "f16": "float16", "bf16": "bfloat16",
    "i32": "int32", "i16": "int16", "i8": "int8",
    "ui32": "uint32", "ui16": "uint16", "ui8": "uint8",
    "si32": "int32", "si16": "int16", "si8": "int8",
    "u32": "uint32", "u16": "uint16", "u8": "uint8",
    "i64": "int64", "si64": "int64", "ui64": "uint64", "u64": "uint64",
    # MLIR's low-precision float types, by their MLIR meaning
    "f8E4M3": "float8_e4m3", "f8E4M3FN": "float8_e4m3fn", "f8E5M2": "float8_e5m2",
    "f8E8M0FNU": "float8_e8m0fnu", "f4E2M1FN": "float4_e2m1fn",
    # ptoseek: the PTO dialect's own A5 element types (PTOAS include/PTO/IR/PTOTypeDefs.td:
    # !pto.hif8 = hifloat8_t, !pto.f8E8M0 = float8_e8m0_t, !pto.f4E2M1x2 / !pto.f4E1M2x2 = two
    # packed fp4 codes per byte), held in fastisa.pto's low-precision formats
    "!pto.hif8": "hifloat8", "!pto.f8E8M0": "float8_e8m0fnu",
    "!pto.f4E2M1x2": "float4_e2m1x2", "!pto.f4E1M2x2": "float4_e1m2x2",
}
#: scalar types allowed for arith.constant and scalar arguments (index and i64 are integers).
SCALAR_TYPES = set(ELEMENT_TYPES) | {"index", "i64", "i1", "ui64", "si64", "u64", "f64"}
LOCS = ("vec", "mat", "left", "right", "acc", "bias", "scaling")
BLAYOUTS = ("row_major", "col_major")
SLAYOUTS = ("none_box", "row_major", "col_major")
PAD_NAMES = ("null", "zero", "max", "min")


def _pos(default=0):
    return field(default=default, compare=False, repr=False)


@dataclass(frozen=True)
class ScalarType:
    """A builtin scalar type: ``f32``, ``f16``, ``bf16``, ``i32``, ``index`` ..."""

    name: str


@dataclass(frozen=True)
class PtrType:
    """``!pto.ptr<elem[, space]>``: a global-memory pointer argument."""

    elem: str
    space: str | None = None


@dataclass(frozen=True)
class ViewType:
    """``!pto.tensor_view<...>`` or ``!pto.partition_tensor_view<...>``; None = ``?``."""

    kind: str            # "tensor_view" or "partition_tensor_view"
    shape: tuple
    elem: str
    #: the type was not written (a pto.partition_view without ``-> type``): the parser
    #: inferred it with dynamic dimensions, and it stands for any written shape
    inferred: bool = field(default=False, compare=False, repr=False)


@dataclass(frozen=True)
class TileBufType:
    """A tile type: ``!pto.tile_buf<...>`` (legacy or compact form) or ``!pto.tile<...>``.

    ``v_row``/``v_col`` are None for a dynamic (``?``) valid extent.  ``form`` only decides
    how the type is printed; :meth:`same` compares the meaning.
    """

    loc: str
    dtype: str
    rows: int
    cols: int
    v_row: int | None
    v_col: int | None
    blayout: str = "row_major"
    slayout: str = "none_box"
    fractal: int = 512
    pad: int = 0
    compact: int = 0
    form: str = "legacy"      # "legacy", "compact" or "tile"

    def key(self):
        return (self.loc, self.dtype, self.rows, self.cols, self.v_row, self.v_col,
                self.blayout, self.slayout, self.fractal, self.pad, self.compact)

    def same(self, other) -> bool:
        return isinstance(other, TileBufType) and self.key() == other.key()


def same_type(a, b) -> bool:
    """Type equality as the checker sees it (tile forms compare by meaning)."""
    if isinstance(a, TileBufType):
        return a.same(b)
    return a == b


@dataclass(frozen=True)
class Value:
    """A use of an SSA value ``%name`` (``name`` without the ``%``)."""

    name: str
    line: int = _pos()
    col: int = _pos()


@dataclass(frozen=True)
class InOperand:
    """An operand in ``ins(...)`` or an SSA operand, with its optional attribute dict."""

    value: Value
    attrs: tuple = ()     # ((key, value_text), ...)


@dataclass(frozen=True)
class ConstantOp:
    """``%r = arith.constant VALUE : TYPE``; ``bits`` is the value's bit pattern in TYPE."""

    result: str
    value: object = field(compare=False)
    type: ScalarType = None
    bits: int = 0
    line: int = _pos()
    col: int = _pos()


@dataclass(frozen=True)
class MakeTensorViewOp:
    result: str
    ptr: Value
    shape: tuple
    strides: tuple
    type: ViewType
    attrs: tuple = ()
    line: int = _pos()
    col: int = _pos()


@dataclass(frozen=True)
class PartitionViewOp:
    result: str
    source: Value
    offsets: tuple
    sizes: tuple
    source_type: ViewType
    type: ViewType
    line: int = _pos()
    col: int = _pos()


@dataclass(frozen=True)
class AllocTileOp:
    result: str
    addr: Value | None
    valid_row: Value | None
    valid_col: Value | None
    type: TileBufType
    line: int = _pos()
    col: int = _pos()


@dataclass(frozen=True)
class SetValidShapeOp:
    tile: Value
    valid_row: Value
    valid_col: Value
    type: TileBufType
    line: int = _pos()
    col: int = _pos()


@dataclass(frozen=True)
class DpsOp:
    """``pto.NAME ins(...) outs(...) [attrs]`` (AS level 2); ``name`` without ``pto.``."""

    name: str
    ins: tuple            # InOperand
    in_types: tuple
    outs: tuple           # Value
    out_types: tuple
    attrs: tuple = ()
    line: int = _pos()
    col: int = _pos()


@dataclass(frozen=True)
class SsaOp:
    """``%d = pto.NAME %a, ... : types -> type`` (AS level 1); ``prefixed`` = had ``pto.``."""

    results: tuple        # names
    name: str
    operands: tuple       # InOperand
    in_types: tuple
    out_types: tuple
    attrs: tuple = ()
    prefixed: bool = True
    paren: bool = False
    arrow: bool = True
    line: int = _pos()
    col: int = _pos()


@dataclass(frozen=True)
class SyncOp:
    """A synchronisation op kept verbatim (``pto.set_flag[...]`` etc.); a no-op when run."""

    name: str
    text: str
    line: int = _pos()
    col: int = _pos()


@dataclass(frozen=True)
class TAssignOp:
    """``%r = pto.tassign %tile, %addr : tile-type -> tile-type``: bind ``%tile`` to byte
    address ``%addr`` of its on-chip buffer (TASSIGN); ``%r`` is the same tile."""

    result: str
    tile: Value
    addr: Value
    tile_type: TileBufType
    type: TileBufType
    line: int = _pos()
    col: int = _pos()


@dataclass(frozen=True)
class ArithOp:
    """Scalar arithmetic: ``%r = arith.OP %a, %b : T`` (addi subi muli divsi divui remsi
    remui ceildivsi floordivsi maxsi minsi addf subf mulf divf maximumf minimumf) and
    ``%r = arith.index_cast %a : T to index`` (also extsi, extui, trunci, sitofp, extf, truncf)."""

    result: str
    name: str
    operands: tuple
    type: ScalarType
    src_type: ScalarType | None = None
    line: int = _pos()
    col: int = _pos()
    predicate: str | None = None     # cmpi / cmpf


@dataclass(frozen=True)
class ForOp:
    """``scf.for %iv = %lb to %ub step %step [: T] { ops }`` (no iter_args)."""

    iv: str
    lb: Value
    ub: Value
    step: Value
    body: tuple
    type: ScalarType | None = None
    line: int = _pos()
    col: int = _pos()


@dataclass(frozen=True)
class ReturnOp:
    values: tuple = ()
    types: tuple = ()
    line: int = _pos()
    col: int = _pos()


@dataclass(frozen=True)
class FuncOp:
    name: str
    args: tuple           # ((name, type), ...)
    body: tuple | None    # None: a declaration without a body
    attrs: tuple = ()
    results: tuple = ()   # result types
    visibility: str | None = None     # "private" / "public" / None
    line: int = _pos()
    col: int = _pos()


@dataclass(frozen=True)
class MemRefType:
    """``memref<RxCxT[, layout][, #pto.address_space<SPACE>]>`` of the older PTOAS dialect:
    a global-memory tensor (space ``gm`` or none) or an on-chip buffer used as a tile."""

    shape: tuple
    elem: str
    space: str | None = None
    rest: str = ""        # the layout text, kept verbatim for printing

    def tile_type(self):
        """The equivalent row-major tile type of an on-chip memref (space not gm)."""
        if len(self.shape) < 1 or None in self.shape:
            return None
        rows = 1
        for d in self.shape[:-1]:
            rows *= d
        cols = self.shape[-1]
        return TileBufType(self.space or "vec", self.elem, rows, cols, rows, cols,
                           form="compact")


@dataclass(frozen=True)
class OpaqueType:
    """A type fastisa carries without looking inside (``!pto.eventid_array<4>``,
    ``!pto.pipe<...>``, ``vector<...>``, ``!pto.tile_view<...>``...): its text."""

    text: str


@dataclass(frozen=True)
class Region:
    """A region's single block: block arguments (``^bb0(%a: T)``) and its operations."""

    ops: tuple
    args: tuple = ()      # ((name, type), ...)
    label: str | None = None


@dataclass(frozen=True)
class GenericOp:
    """Any other operation of the PTOAS dialect (scf.if/while, func.call, pto.get_block_idx,
    pipes, events ...), kept as its token texts with regions parsed as :class:`Region`.

    ``results`` is ``((name, count), ...)`` (``%r:2`` has count 2); ``text`` the token texts
    after the name with ``"\x00N"`` standing for region ``N``.  The runner gives each op
    its meaning by name (:mod:`fastisa.pto._asm_runner`)."""

    name: str
    results: tuple
    text: tuple
    regions: tuple = ()
    toks: tuple = field(default=(), compare=False, repr=False)
    line: int = _pos()
    col: int = _pos()

    def result_names(self):
        out = []
        for n, k in self.results:
            out += [n] if k == 1 else [f"{n}#{i}" for i in range(k)]
        return out


@dataclass(frozen=True)
class ModuleInfo:
    """One ``module`` of a file as MLIR nests it (a file of several top-level modules is
    an implicit, attribute-less module holding them): its attributes, its parent's index
    in :attr:`Module.modules` (None: the outermost), the indices in :attr:`Module.funcs`
    of the functions directly in it, its child modules' indices, its position."""

    attrs: tuple
    parent: int | None
    funcs: tuple
    children: tuple = ()
    line: int = 0
    col: int = 0

    def attr(self, key):
        for k, v in self.attrs:
            if k == key:
                return v
        return None


@dataclass(frozen=True)
class Module:
    """A parsed ``.pto`` file: its functions and module attributes; ``wrapped`` = had ``module``."""

    funcs: tuple
    attrs: tuple = ()
    wrapped: bool = False
    source: str = field(default="", compare=False, repr=False)
    #: the module nesting (:class:`ModuleInfo`); empty for a Module built by hand
    modules: tuple = field(default=(), compare=False, repr=False)

    def func(self, name: str | None = None) -> FuncOp:
        """The function called ``name`` (without ``@``), or the first one."""
        if not self.funcs:
            raise AsmSyntaxError("the program has no func.func", 1, 1, "")
        if name is None:
            return self.funcs[0]
        for f in self.funcs:
            if f.name == name.lstrip("@"):
                return f
        raise KeyError(f"no function @{name.lstrip('@')}; have "
                       + ", ".join("@" + f.name for f in self.funcs))

    @property
    def target_arch(self) -> str | None:
        for k, v in self.attrs:
            if k == "pto.target_arch":
                return v.strip('"')
        return None



# numeric helpers shared by the parser, printer and runner

def _float_bits(value: float, elem: str) -> int:
    dt = _np_dtype(elem)
    with np.errstate(over="ignore"):
        arr = np.array([value], dtype=np.float64).astype(dt)
    return int(arr.view({2: np.uint16, 4: np.uint32, 8: np.uint64}[dt.itemsize])[0])


def _bits_float(bits: int, elem: str) -> float:
    dt = _np_dtype(elem)
    u = {2: np.uint16, 4: np.uint32, 8: np.uint64}[dt.itemsize]
    return float(np.array([bits], dtype=u).view(dt)[0])


def _np_dtype(elem: str):
    if elem == "f64":
        return np.dtype(np.float64)
    if ELEMENT_TYPES.get(elem) in ("int64", "uint64"):
        return np.dtype(ELEMENT_TYPES[elem])
    from . import _lowp_formats
    lp = _lowp_formats.lookup(ELEMENT_TYPES[elem])
    if lp is not None:                  # hifloat8 / fp4 x2: their one-byte containers
        return lp.np_dtype
    from .. import dtypes
    return dtypes.lookup(ELEMENT_TYPES[elem]).np_dtype


def _is_float(elem: str) -> bool:
    return elem in ("f32", "f16", "bf16", "f64")
