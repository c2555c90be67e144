"""PTO-AS runner, the operations kept generic by the parser (:class:`GenericOp`).

Control flow (``scf.if``/``scf.for`` with ``iter_args``/``scf.while``, ``func.call``),
the older dialect's ``memref.alloc``/``memref.subview``, scalar access to global memory
(``pto.load_scalar``/``pto.store_scalar``/``pto.addptr``), views (``pto.subview``), the
core-identity queries (``pto.get_block_idx`` ...), buffer reservation, the cross-core pipes
and the synchronisation ops.  Semantics: PTOAS ``include/PTO/IR/PTOOps.td`` (op
descriptions) and ``docs/`` (hw-native-sys/PTOAS); execution is sequential and synchronous,
as on pto-isa's CPU simulator, so events, flags and fences do nothing.

Cross-core pipes (``pto.tpush_to_aiv``/``tpush_to_aic``, ``tpop_from_*``, ``tfree_from_*``)
are FIFO queues between the simulated cube (AIC) and vector (AIV) cores.  Functions run
in the order the entry function calls them (PTOAS's mixed kernels call the cube part
first); a pop with nothing pushed raises ConstraintError ("deadlock").  The FIFO is
:mod:`fastisa.pto._pipes` (the API's TPipe) and the cores take turns (:mod:`fastisa.pto._cores`),
so runs are deterministic.  ``split = 1``
(``2``) hands the upper (left) half of a pushed tile to vector subblock 0 and the other
half to subblock 1; a vector function called while subblock 1 has data waiting runs once
per subblock, with ``pto.get_subblock_idx`` giving 0 and 1.
"""

from __future__ import annotations

import numpy as np

from ..errors import AccessError, ConstraintError
from ._asm_ast import MemRefType, OpaqueType, ScalarType, TileBufType, ViewType


# --------------------------------------------------------------------------------------
# token helpers
# --------------------------------------------------------------------------------------

def _top(op):
    """Tokens of ``op`` with their bracket depth (regions excluded)."""
    depth = 0
    out = []
    for t in op.toks:
        if t.kind == "punct" and t.text in ")]>}":
            depth -= 1
        out.append((t, depth))
        if t.kind == "punct" and t.text in "([<{":
            depth += 1
    return out


def _percents(op, depth=None):
    return [t for t, d in _top(op) if t.kind == "percent" and (depth is None or d == depth)]


def _attr(op, key):
    """The text of ``key = value`` anywhere in ``op``'s tokens, or None."""
    toks = op.toks
    for k in range(len(toks) - 2):
        if toks[k].text == key and toks[k + 1].text == "=":
            parts = []
            depth = 0
            for t in toks[k + 2:]:
                if depth == 0 and t.text in (",", "}", ")") and t.kind == "punct":
                    break
                if t.kind == "punct" and t.text in "([<{":
                    depth += 1
                elif t.kind == "punct" and t.text in ")]>}":
                    depth -= 1
                parts.append(t.text)
            return " ".join(parts)
    return None


def _int_attr(op, key, default=0):
    v = _attr(op, key)
    if v is None:
        return default
    v = v.split(":")[0].strip()
    if v in ("true", "false"):
        return int(v == "true")
    try:
        return int(v, 0)
    except ValueError:
        return default


def _types(op, after=":"):
    """Types written after the last top-level ``after`` token (``:`` or ``->``)."""
    from ._asm_parser import _Parser
    top = _top(op)
    idx = None
    for k, (t, d) in enumerate(top):
        if t.text == after and d == 0 and t.kind == "punct":
            idx = k
    if idx is None:
        return []
    toks = [t for t, _ in top[idx + 1:] if not t.text.startswith("\x00")]
    toks = [t for t in toks]
    p = _Parser.__new__(_Parser)
    p.text = ""
    p.lines = []
    from ._asm_lexer import Token
    end = toks[-1] if toks else op.toks[-1]
    p.toks = list(toks) + [Token("eof", "", end.line, end.col + 1)]
    p.i = 0
    out = []
    paren = p.accept("(")
    while p.tok.kind != "eof":
        if p.at(")") or p.at("->") or p.at("{"):
            break
        try:
            out.append(p.type_())
        except Exception:   # noqa: BLE001 - not a type list
            break
        if not p.accept(","):
            break
    del paren
    return out


def _result_type(op):
    tys = _types(op, "->") or _types(op, ":")
    return tys[-1] if tys else None


def _bind_results(run, op, values):
    names = op.result_names()
    if len(values) < len(names):
        raise ConstraintError(f"{op.name}: produces {len(values)} values, the program names "
                              f"{len(names)}")
    for n, v in zip(names, values):
        run.env[n] = v
    for n, k in op.results:
        if k > 1:
            run.env[n] = tuple(values[:k])


def _value(run, tok):
    name = tok.text[1:]
    if name in run.env:
        return run.env[name]
    base, _, idx = name.partition("#")
    if idx and base in run.env:
        return run.env[base][int(idx)]
    raise ConstraintError(f"use of undefined value %{name}")


def _index_operand(run, tok):
    if tok.kind == "percent":
        return int(_value(run, tok))
    return int(tok.text, 0)


def _bracket_list(op, key):
    """Values of ``key = [a, b]`` / ``key [a, b]`` (SSA values or integer literals)."""
    toks = op.toks
    for k, t in enumerate(toks):
        if t.text == key:
            j = k + 1
            if toks[j].text == "=":
                j += 1
            if toks[j].text != "[":
                return None
            out = []
            j += 1
            while toks[j].text != "]":
                if toks[j].text != ",":
                    out.append(toks[j])
                j += 1
            return out
    return None


def _region(run, region, args=()):
    for (n, _t), v in zip(region.args, args):
        run.env[n] = v
    return run.exec_ops(region.ops)


def _yielded(sig, n, what):
    if n == 0:
        return []
    if not sig or sig[0] != "yield":
        raise ConstraintError(f"{what}: the region must end in scf.yield with {n} values")
    if len(sig[1]) != n:
        raise ConstraintError(f"{what}: scf.yield gives {len(sig[1])} values, {n} expected")
    return sig[1]


# --------------------------------------------------------------------------------------
# operations
# --------------------------------------------------------------------------------------

def execute(run, op):
    fn = _OPS.get(op.name)
    if fn is None:
        short = op.name[4:] if op.name.startswith("pto.") else op.name
        if short in _NOOPS:
            return None
        raise NotImplementedError(f"{op.name}: fastisa does not run this operation yet")
    return fn(run, op)


def _scf_yield(run, op):
    return ("yield", [_value(run, t) for t in _percents(op, 0)])


def _scf_condition(run, op):
    ps = _percents(op)
    return ("condition", bool(_value(run, ps[0])), [_value(run, t) for t in ps[1:]])


def _scf_if(run, op):
    cond = bool(_value(run, _percents(op, 0)[0]))
    n = sum(k for _n, k in op.results)
    if cond:
        sig = _region(run, op.regions[0])
    elif len(op.regions) > 1:
        sig = _region(run, op.regions[1])
    else:
        sig = None
    if sig and sig[0] == "return":
        return sig
    _bind_results(run, op, _yielded(sig, n, "scf.if"))
    return None


def _scf_for(run, op):
    ps = _percents(op)
    iv, lb, ub, step = ps[0], ps[1], ps[2], ps[3]
    pairs = []
    rest = ps[4:]
    for k in range(0, len(rest) - 1, 2):
        pairs.append((rest[k].text[1:], _value(run, rest[k + 1])))
    lo, hi, st = int(_value(run, lb)), int(_value(run, ub)), int(_value(run, step))
    if st <= 0:
        raise ConstraintError(f"scf.for: step must be positive, got {st}")
    vals = [v for _n, v in pairs]
    for i in range(lo, hi, st):
        run.env[iv.text[1:]] = i
        for (n, _), v in zip(pairs, vals):
            run.env[n] = v
        sig = run.exec_ops(op.regions[0].ops)
        if sig and sig[0] == "return":
            return sig
        vals = _yielded(sig, len(pairs), "scf.for")
    _bind_results(run, op, vals)
    return None


def _scf_while(run, op):
    header = [t for t, d in _top(op) if t.kind == "percent" and d == 1]
    names = [header[k].text[1:] for k in range(0, len(header) - 1, 2)]
    vals = [_value(run, header[k]) for k in range(1, len(header), 2)]
    before, after = op.regions[0], op.regions[1]
    for _ in range(10_000_000):
        if before.args:
            sig = _region(run, before, vals)
        else:
            for n, v in zip(names, vals):
                run.env[n] = v
            sig = run.exec_ops(before.ops)
        if not sig or sig[0] != "condition":
            raise ConstraintError("scf.while: the first region must end in scf.condition")
        flag, vals = sig[1], sig[2]
        if not flag:
            _bind_results(run, op, vals)
            return None
        sig = _region(run, after, vals)
        if sig and sig[0] == "return":
            return sig
        vals = _yielded(sig, len(names), "scf.while")
    raise ConstraintError("scf.while: more than 10,000,000 iterations")


def _func_call(run, op):
    from ._asm_runner import _Runner
    callee = next(t.text[1:] for t in op.toks if t.kind == "at")
    try:
        f = run.module.func(callee)
    except KeyError:
        raise ConstraintError(f"func.call: no function @{callee} in the module") from None
    if f.body is None:
        f = _definition(run.module, f)
    args = [_value(run, t) for t in _percents(op, 1)]
    if len(args) != len(f.args):
        raise ConstraintError(f"func.call @{callee}: {len(args)} arguments, the function "
                              f"takes {len(f.args)}")
    shared = run.shared
    if shared["depth"] > 200:
        raise ConstraintError("func.call: calls nested more than 200 deep")
    kind = _kernel_kind(f)
    runs = [run.subblock]
    if kind == "vector" and _kernel_kind(run.func) is None:
        runs = list(range(shared["subblocks"]))
    # (ptoacc) a kernel function that returns values is an ordinary call: a core started
    # by the entry gives nothing back (tools/ptobc/testdata/func_call_v0_roundtrip.pto)
    if kind is not None and _kernel_kind(run.func) is None and not f.results:
        # the entry starts a core: cube and vector kernels run concurrently (their pipes
        # may go both ways); the run joins them when the entry returns
        for sb in runs:
            _start_core(run, f, args, sb)
        return None
    result = []
    for sb in runs:
        inner = _Runner.__new__(_Runner)
        inner.__dict__.update(run.__dict__)
        inner.func = f
        inner.env = {n: v for (n, _t), v in zip(f.args, args)}
        inner.returned = []
        inner.subblock = sb
        shared["depth"] += 1
        try:
            sig = inner.exec_ops(f.body)
        finally:
            shared["depth"] -= 1
        result = sig[1] if sig and sig[0] == "return" else []
    _bind_results(run, op, result)
    return None


def _start_core(run, f, args, sb):
    """The entry calls kernel ``f``: it becomes a simulated core; the cores the entry
    started run together (turn-taking, :mod:`fastisa.pto._cores`) before the entry's next
    other operation (or its end)."""
    from ._asm_runner import _Runner
    inner = _Runner.__new__(_Runner)
    inner.__dict__.update(run.__dict__)
    inner.func = f
    inner.env = {n: v for (n, _t), v in zip(f.args, args)}
    inner.returned = []
    inner.subblock = sb
    inner.in_core_group = True          # ptoacc: pto.syncall needs to know
    run.shared.setdefault("pending", []).append(inner)


def join_cores(shared):
    """Run the cores the entry started (cube first, then the vector subblocks), sharing the
    module's pipe; re-raise the first error of one (a wait none can end: ConstraintError)."""
    pending = shared.pop("pending", None)
    if not pending:
        return
    from ._asm_runner import run_core_group
    run_core_group(shared, [(r, (lambda r=r: r.exec_ops(r.func.body))) for r in pending])


def _kernel_kind(f):
    for k, v in f.attrs:
        if k in ("pto.kernel_kind", "pto.func_core_type"):
            return "cube" if "cube" in v or "aic" in v.lower() else "vector"
    return None


def _memref_alloc(run, op):
    ty = _result_type(op)
    if not isinstance(ty, MemRefType):
        raise ConstraintError("memref.alloc: the result must be a memref type")
    if ty.space in (None, "gm"):
        raise NotImplementedError("memref.alloc in global memory is not supported")
    tt = ty.tile_type()
    if tt is None:
        raise NotImplementedError(f"memref.alloc: only 2-D static on-chip memrefs run, got "
                                  f"{ty.shape}")
    _bind_results(run, op, [run.make_tile(tt)])


def _subview(run, op):
    """``memref.subview`` / ``pto.subview`` of a global view: a partition; ``pto.subview``
    of a tile: :func:`_tile_subview`."""
    from ._asm_runner import _PartView, _TensorView
    src = _value(run, _percents(op)[0])
    if op.name == "pto.subview" and isinstance(src, run.P.Tile):
        return _tile_subview(run, op, src)
    offs = _bracket_list(op, "offsets")
    sizes = _bracket_list(op, "sizes")
    if offs is None:       # memref.subview %m[%a, %b] [sizes] [strides]
        lists = []
        k = 0
        toks = op.toks
        while k < len(toks):
            if toks[k].text == "[":
                j = k + 1
                cur = []
                while toks[j].text != "]":
                    if toks[j].text != ",":
                        cur.append(toks[j])
                    j += 1
                lists.append(cur)
                k = j
            k += 1
        offs, sizes = lists[0], lists[1]
    if isinstance(src, _PartView):
        tv, base = src.tv, src.offsets
    elif isinstance(src, _TensorView):
        tv, base = src, [0] * len(src.shape)
    else:
        raise NotImplementedError(f"{op.name} of an on-chip buffer is not supported")
    o = [b + _index_operand(run, t) for b, t in zip(base, offs)]
    z = [_index_operand(run, t) for t in sizes]
    for d, (a, n, lim) in enumerate(zip(o, z, tv.shape)):
        if a < 0 or a + n > lim:
            raise AccessError(f"{op.name}: dimension {d}: offset {a} + size {n} exceeds the "
                              f"extent {lim}")
    _bind_results(run, op, [_PartView(tv, o, z)])


def _reinterpret_cast(run, op):
    """``memref.reinterpret_cast %m to offset: [o], sizes: [..], strides: [..]`` of a global
    memref: a view of the same buffer at element offset ``o`` (relative to the source's
    base) with the given sizes and strides (MLIR memref dialect)."""
    from ._asm_runner import _PartView, _TensorView
    src = _value(run, _percents(op)[0])
    if isinstance(src, _PartView):
        tv = src.tv
        base = tv.base + sum(o * st for o, st in zip(src.offsets, tv.strides))
    elif isinstance(src, _TensorView):
        tv, base = src, src.base
    else:
        raise NotImplementedError(f"{op.name} of an on-chip buffer is not supported")
    lists = {}
    toks = op.toks
    for k, t in enumerate(toks):
        if t.text in ("offset", "sizes", "strides") and k + 2 < len(toks) \
                and toks[k + 1].text == ":" and toks[k + 2].text == "[":
            j = k + 3
            cur = []
            while toks[j].text != "]":
                if toks[j].text != ",":
                    cur.append(toks[j])
                j += 1
            lists[t.text] = [_index_operand(run, x) for x in cur]
    if set(lists) != {"offset", "sizes", "strides"} or len(lists["offset"]) != 1 \
            or len(lists["sizes"]) != len(lists["strides"]):
        raise ConstraintError(f"{op.name}: expected 'to offset: [o], sizes: [...], "
                              f"strides: [...]'")
    sizes, strides = lists["sizes"], lists["strides"]
    if any(v < 0 for v in sizes + strides + lists["offset"]):
        raise ConstraintError(f"{op.name}: offset, sizes and strides must be >= 0")
    start = base + lists["offset"][0]
    extent = 0 if 0 in sizes else 1 + sum((n - 1) * st for n, st in zip(sizes, strides))
    tv.ptr.ensure(start + extent, op.name)
    layout = "dn" if "dn" in (_attr(op, "layout") or "").lower() else "nd"
    view = _TensorView(tv.ptr, list(sizes), list(strides), layout, start)
    _bind_results(run, op, [_PartView(view, [0] * len(sizes), list(sizes))])


def _moved_shape(ops, name, n):
    """``(rows, cols)`` of the 2-D global memref a ``pto.tload``/``pto.tstore`` moves
    into / out of on-chip value ``%name`` when rows * cols == n, else None."""
    from ._asm_ast import DpsOp, ForOp
    for op in ops:
        if isinstance(op, DpsOp) and op.name in ("tload", "tstore", "store_dps", "load_dps"):
            pairs = list(zip([o.value.name for o in op.ins], op.in_types)) + list(
                zip([v.name for v in op.outs], op.out_types))
            names = [a for a, _t in pairs]
            if name in names:
                for _a, t in pairs:
                    if isinstance(t, MemRefType) and t.space in (None, "gm") \
                            and len(t.shape) == 2 and None not in t.shape \
                            and t.shape[0] * t.shape[1] == n:
                        return tuple(t.shape)
        inner = (op.body if isinstance(op, ForOp) else
                 [o for r in getattr(op, "regions", ()) for o in r.ops])
        got = _moved_shape(inner, name, n) if inner else None
        if got:
            return got
    return None


def _pointer_cast(run, op):
    """``%m = pto.pointer_cast(%addr) : memref<N x T, #pto.address_space<ub>>`` (the older
    PTOAS, PointerCastOp): the on-chip buffer at byte address ``%addr``, as a tile bound
    there with TASSIGN (tiles at overlapping addresses alias).  A 1-D memref of N
    elements is the row-major tile of the 2-D global memref the function's
    ``pto.tload``/``pto.tstore`` move through it (rows x cols = N), else 1 x N."""
    ty = _result_type(op)
    if not isinstance(ty, MemRefType) or ty.space in (None, "gm"):
        raise ConstraintError(f"{op.name}: the result must be an on-chip memref type")
    tt = ty.tile_type()
    if tt is None:
        raise NotImplementedError(f"{op.name}: only static memrefs run, got {ty.shape}")
    names = op.result_names()
    if len(ty.shape) == 1 and names:
        shape = _moved_shape(run.func.body or (), names[0], ty.shape[0])
        if shape:
            tt = TileBufType(tt.loc, tt.dtype, shape[0], shape[1], shape[0], shape[1],
                             form="compact")
    ps = _percents(op, 1)
    if not ps:
        raise ConstraintError(f"{op.name}: expected an address operand")
    tile = run.make_tile(tt)
    run.P.TASSIGN(tile, int(_value(run, ps[0])))
    if len(ps) == 3:
        tile.set_valid_row(int(_value(run, ps[1])))
        tile.set_valid_col(int(_value(run, ps[2])))
    _bind_results(run, op, [tile])


def _root_bytes(arr):
    """``(root, byte offset)``: the 1-D contiguous array ``arr``'s memory belongs to (an
    on-chip pool, another tile's buffer or ``arr`` itself) and where ``arr`` starts in it."""
    root = arr
    while isinstance(root.base, np.ndarray):
        root = root.base
    if not (root.flags.c_contiguous and root.ndim == 1):
        return arr, 0
    off = arr.__array_interface__["data"][0] - root.__array_interface__["data"][0]
    return root, off


def _tile_window(run, name, src, r, c, h, w, vr, vc, dynamic=False):
    """A tile aliasing ``src``'s elements ``[r:r+h, c:c+w]`` with ``src``'s physical pitch
    (PTOAS SubViewOp / SubsetOp: "Lowering keeps parent physical stride/base semantics";
    pto-isa include/pto/cpu/TSubView.hpp rebinds the storage at ``r * RowStride + c *
    ColStride``): an ``h x src.cols`` tile (row-major; ``src.rows x w`` column-major) whose
    valid region is ``vr x vc`` (at most ``h x w``), starting at element ``(r, c)``.  Writes
    through either tile are seen by the other.  The window's last physical row may run past
    ``src``'s own storage (a column offset): it then reads the on-chip buffer after it when
    ``src`` is bound to an address, and otherwise ``src`` is moved, once, into storage with
    one spare row (column) so the window can alias it."""
    P = run.P
    if not isinstance(src, P.Tile):
        raise ConstraintError(f"{name}: the source must be a tile, got {type(src).__name__}")
    if min(r, c) < 0 or h <= 0 or w <= 0 or r + h > src.rows or c + w > src.cols:
        raise AccessError(f"{name}: offsets ({r}, {c}) + sizes ({h}, {w}) leave the "
                          f"{src.rows}x{src.cols} source tile")
    row_major = src.blayout == P.BLayout.RowMajor
    if row_major:
        prow, pcol, n = h, src.cols, h * src.cols
    else:
        prow, pcol, n = src.rows, w, w * src.rows
    start = r * src._rs + c * src._cs
    isz = src.dtype.itemsize
    root, boff = _root_bytes(src._buf)
    if boff + (start + n) * isz > root.nbytes:
        if root is not src._buf or src.addr is not None:
            raise AccessError(f"{name}: the window at ({r}, {c}) of {h}x{w} runs past the "
                              f"memory the source tile is bound to")
        # a free-standing tile: give it one spare row (column) of storage, once
        spare = src.cols if row_major else src.rows
        home = np.zeros(src._buf.size + spare, dtype=src._buf.dtype)
        home[:src._buf.size] = src._buf
        src._buf = home[:src._buf.size]
        root, boff = home, 0
    vr, vc = min(vr, h), min(vc, w)
    sub = P.Tile(src.loc, src.format, prow, pcol, blayout=src.blayout,
                 valid_row=P.DYNAMIC if dynamic else vr, valid_col=P.DYNAMIC if dynamic else vc,
                 slayout=src.slayout, fractal=src.fractal, pad=src.pad)
    if dynamic:
        sub.set_valid_row(vr)
        sub.set_valid_col(vc)
    b0 = boff + start * isz
    sub._buf = root.view(np.uint8)[b0:b0 + n * isz].view(src._buf.dtype)   # alias
    if src.addr is not None and (src.addr + start * isz) % 32 == 0:
        sub.addr = src.addr + start * isz
    return sub


def _first_bracket(op):
    """The operand tokens of ``op``'s first ``[a, b, ...]`` list (commas dropped)."""
    toks = op.toks
    k = next(i for i, t in enumerate(toks) if t.text == "[") + 1
    out = []
    while toks[k].text != "]":
        if toks[k].text != ",":
            out.append(toks[k])
        k += 1
    return out


def _tile_subview(run, op, src):
    """``%s = pto.subview %tile[%r, %c] sizes [h, w] [valid [%vr, %vc]] : T -> T2``
    (PTOAS SubViewOp, include/PTO/IR/PTOOps.td: a view into the source tile, the result's
    type has the logical ``sizes`` while lowering keeps the parent's physical strides; the
    valid shape is the explicit ``valid`` operands clipped to ``sizes``, else the result
    type's static valid shape, else ``sizes``).  See :func:`_tile_window`."""
    offs = _first_bracket(op)
    sizes = [int(t.text) for t in (_bracket_list(op, "sizes") or []) if t.kind == "int"]
    if len(offs) != 2 or len(sizes) != 2:
        raise ConstraintError(f"{op.name}: expected %tile[%row, %col] sizes [h, w]")
    r, c = (_index_operand(run, t) for t in offs)
    h, w = sizes
    valid = _bracket_list(op, "valid")
    ty = _result_type(op)
    if valid:
        vr, vc = (_index_operand(run, t) for t in valid)
        if min(vr, vc) < 0:
            raise ConstraintError(f"{op.name}: valid [{vr}, {vc}] must be >= 0")
    elif isinstance(ty, TileBufType) and ty.v_row is not None and ty.v_col is not None:
        vr, vc = ty.v_row, ty.v_col
    else:
        vr, vc = h, w
    dynamic = isinstance(ty, TileBufType) and (ty.v_row is None or ty.v_col is None)
    _bind_results(run, op, [_tile_window(run, op.name, src, r, c, h, w, vr, vc, dynamic)])


def _subset(run, op):
    """``%s = pto.subset %t[%r, %c] sizes [h, w] : T`` (PTOAS SubsetOp: "a strided view
    into the source tile", strides inherited): an h x w tile whose elements are the
    source's ``[r:r+h, c:c+w]`` -- the same memory, so writes through either are seen by
    the other.  Row-major source tiles; the view is ``h`` rows of the source's row pitch
    starting at element ``(r, c)``, which must lie inside the source buffer."""
    from ._asm_lexer import Token  # noqa: F401 - tokens carry the literal sizes
    ps = _percents(op)
    src = _value(run, ps[0])
    offs = [int(_value(run, t)) for t in ps[1:3]]
    sizes = [int(t.text) for t in (_bracket_list(op, "sizes") or []) if t.kind == "int"]
    if len(offs) != 2 or len(sizes) != 2:
        raise ConstraintError(f"{op.name}: expected %tile[%row, %col] sizes [h, w]")
    (r, c), (h, w) = offs, sizes
    sub = _tile_window(run, op.name, src, r, c, h, w, h, w)
    _bind_results(run, op, [sub])


def _async_copy(run, op):
    """``pto.tput_async(%dst, %src, %session)`` / ``pto.tget_async``: ``dst = src`` over the
    views' elements, complete at once -- pto-isa's CPU simulator
    (include/pto/cpu/comm/TPut.hpp, TGet.hpp: ``Copy_Data(dst, src)`` and an event that is
    already done); fastisa simulates one rank, so the remote view is this memory."""
    from ._asm_runner import _PartView
    ps = _percents(op, 1)
    if len(ps) < 2:
        raise ConstraintError(f"{op.name}: expected (%dst, %src, %session)")
    dst, src = _value(run, ps[0]), _value(run, ps[1])
    if not (isinstance(dst, _PartView) and isinstance(src, _PartView)):
        raise NotImplementedError(f"{op.name}: only global-memory views run")
    d = dst.global_tensor(run.P).view2d()
    v = src.global_tensor(run.P).view2d()
    if d.size != v.size or d.dtype != v.dtype:
        raise ConstraintError(f"{op.name}: dst has {d.size} {d.dtype} elements, src "
                              f"{v.size} {v.dtype}: they must agree")
    d[...] = np.array(v).reshape(d.shape)
    dst.tv.ptr.written = True
    _bind_results(run, op, ["async_event"] * len(op.result_names()))


def _async_done(run, op):
    """``pto.wait_async_event`` / ``pto.test_async_event``: true (the copies completed)."""
    _bind_results(run, op, [1] * len(op.result_names()))


def _tile_from_type(run, op):
    ty = _result_type(op)
    if isinstance(ty, MemRefType):
        ty = ty.tile_type()
    if not isinstance(ty, TileBufType):
        raise NotImplementedError(f"{op.name}: result type {ty} is not a tile type")
    # a ``?`` valid dimension is DYNAMIC, starting at the full shape (pto.tpop sets it to
    # the popped data's shape)
    return run.make_tile(ty), ty


def _declare_tile(run, op):
    tile, _ = _tile_from_type(run, op)
    _bind_results(run, op, [tile])


def _block_idx(run, op):
    _bind_results(run, op, [run.shared["block"]])


def _block_num(run, op):
    _bind_results(run, op, [1])


def _subblock_idx(run, op):
    _bind_results(run, op, [run.subblock])


def _subblock_num(run, op):
    _bind_results(run, op, [run.shared["subblocks"]])


def _reserve_buffer(run, op):
    name = (_attr(op, "name") or '""').strip('"')
    base = _int_attr(op, "base", None)
    addrs = run.shared.setdefault("reserved", {})
    if name not in addrs:
        addrs[name] = 0 if base is None else base
    _bind_results(run, op, [addrs[name]])


def _none_results(run, op):
    _bind_results(run, op, [None] * len(op.result_names()))


def module_pipe(shared):
    """The module's cross-core pipe (one DIR_BOTH :class:`fastisa.pto._pipes.TPipe`: PTOAS
    programs address the FIFO through ``pto.tpush_to_aiv`` & co, not a pipe value)."""
    pipe = shared.get("pipe")
    if pipe is None:
        from ._pipes import Direction, TPipe
        pipe = shared["pipe"] = TPipe(0, Direction.DIR_BOTH, 0, shared.get("slot_num", 8))
    return pipe


def _split_of(op):
    from ._pipes import TileSplitAxis
    v = _int_attr(op, "split", 0)
    try:
        return TileSplitAxis(v)
    except ValueError:
        raise ConstraintError(f"{op.name}: split must be 0 (none), 1 (up/down) or 2 "
                              f"(left/right), got {v}") from None


def _push(direction):
    def push(run, op):
        from . import _pipes
        tile = _value(run, _percents(op)[0])
        _pipes.push(module_pipe(run.shared), tile.valid, direction, _split_of(op), op.name)
        return None
    return push


def _pop(direction):
    def pop(run, op):
        from . import _pipes
        data = _pipes.pop(module_pipe(run.shared), direction, _split_of(op), op.name)
        tile, ty = _tile_from_type(run, op)
        if data is None:               # the inactive lane of a no-split pipe: zeros
            tile.data[...] = 0
            _bind_results(run, op, [tile])
            return None
        vr, vc = data.shape
        if vr > tile.rows or vc > tile.cols:
            raise ConstraintError(f"{op.name}: popped {vr}x{vc} data does not fit the "
                                  f"{tile.rows}x{tile.cols} result tile")
        if ty.v_row is None or ty.v_col is None:
            tile.set_valid_row(vr)
            tile.set_valid_col(vc)
        if (tile.valid_row, tile.valid_col) != (vr, vc):
            raise ConstraintError(f"{op.name}: popped {vr}x{vc} data but the result tile's "
                                  f"valid shape is {tile.valid_row}x{tile.valid_col}")
        tile.valid[...] = data.astype(tile.valid.dtype)
        _bind_results(run, op, [tile])
        return None
    return pop


def _pipe_direction(run):
    """The older ``pto.tpush``/``pto.tpop`` through a ``!pto.pipe`` handle: a cube kernel
    pushes to the vector cores (and pops what they push), a vector kernel the other way."""
    kind = _kernel_kind(run.func)
    if kind is None:
        raise NotImplementedError("pto.tpush/pto.tpop through a !pto.pipe outside a function "
                                  "with pto.kernel_kind = cube / vector")
    return kind


def _pipe_push(run, op):
    return _push("c2v" if _pipe_direction(run) == "cube" else "v2c")(run, op)


def _pipe_pop(run, op):
    """``pto.tpop(%tile, %pipe : T, !pto.pipe) {split}``: the popped data into ``%tile``."""
    from . import _pipes
    direction = "v2c" if _pipe_direction(run) == "cube" else "c2v"
    tile = _value(run, _percents(op)[0])
    data = _pipes.pop(module_pipe(run.shared), direction, _split_of(op), op.name)
    if data is None:
        tile.data[...] = 0
        return
    if data.shape != (tile.valid_row, tile.valid_col):
        raise ConstraintError(f"{op.name}: popped {data.shape[0]}x{data.shape[1]} data but "
                              f"the tile's valid shape is {tile.valid_row}x{tile.valid_col}")
    tile.valid[...] = data.astype(tile.valid.dtype)


def _pipe_handle(run, op):
    """``pto.initialize_l2g2l_pipe ... -> !pto.pipe``: a handle (the queues are shared)."""
    _bind_results(run, op, ["pipe"] * len(op.result_names()))


def _load_scalar(run, op):
    from ._asm_runner import _Pointer
    ps = _percents(op)
    ptr = _value(run, ps[0])
    off = int(_value(run, ps[1])) if len(ps) > 1 else 0
    base, ptr = _ptr_base(ptr)
    if not isinstance(ptr, _Pointer):
        raise NotImplementedError("pto.load_scalar from an on-chip buffer is not supported")
    i = base + off
    ptr.ensure(i + 1, "pto.load_scalar")
    v = ptr.buf[i]
    _bind_results(run, op, [int(v) if ptr.buf.dtype.kind in "iub" else v])


def _store_scalar(run, op):
    from ._asm_runner import _Pointer
    ps = _percents(op)              # pto.store_scalar %value, %ptr[%offset] : types
    val = _value(run, ps[0])
    ptr = _value(run, ps[1])
    off = int(_value(run, ps[2])) if len(ps) > 2 else 0
    base, ptr = _ptr_base(ptr)
    if not isinstance(ptr, _Pointer):
        raise NotImplementedError("pto.store_scalar to an on-chip buffer is not supported")
    i = base + off
    ptr.ensure(i + 1, "pto.store_scalar")
    with np.errstate(over="ignore"):
        ptr.buf[i] = np.array(val).astype(ptr.buf.dtype)
    ptr.written = True


class _OffsetPtr:
    def __init__(self, ptr, off):
        self.ptr, self.off = ptr, off


def _ptr_base(p):
    if isinstance(p, _OffsetPtr):
        return p.off, p.ptr
    return 0, p


def _addptr(run, op):
    ps = _percents(op)
    base, ptr = _ptr_base(_value(run, ps[0]))
    off = int(_value(run, ps[1]))
    _bind_results(run, op, [_OffsetPtr(ptr, base + off)])


def _affine_apply(run, op):
    """``affine.apply affine_map<(d0, ...)[s0, ...] -> (expr)>(%d...)[%s...]``: the
    expression with ``+ - *``, ``floordiv``, ``ceildiv``, ``mod`` on integers."""
    import re
    text = " ".join(t.text for t in op.toks)
    m = re.search(r"affine_map\s*<\s*\(([^)]*)\)\s*(?:\[([^\]]*)\])?\s*->\s*\((.*)\)\s*>",
                  text)
    if m is None:
        raise NotImplementedError("affine.apply: only inline affine_map<...> is supported")
    dims = [d.strip() for d in m.group(1).split(",") if d.strip()]
    syms = [d.strip() for d in (m.group(2) or "").split(",") if d.strip()]
    expr = m.group(3)
    if "," in expr:
        raise NotImplementedError("affine.apply: a map with several results")
    vals = [int(_value(run, t)) for t in _percents(op)]
    env = dict(zip(dims + syms, vals))
    if len(vals) != len(dims) + len(syms):
        raise ConstraintError(f"affine.apply: the map takes {len(dims) + len(syms)} operands, "
                              f"got {len(vals)}")
    py = re.sub(r"\bfloordiv\b", "//", expr)
    py = re.sub(r"\bmod\b", "%", py)
    py = re.sub(r"(\S+)\s+ceildiv\s+(\S+)", r"(-((-(\1)) // (\2)))", py)
    if not re.fullmatch(r"[\sA-Za-z0-9_+\-*/%()]*", py):
        raise NotImplementedError(f"affine.apply: cannot evaluate {expr!r}")
    try:
        r = eval(py, {"__builtins__": {}}, env)  # noqa: S307 - checked to be arithmetic
    except ZeroDivisionError:
        raise ConstraintError("affine.apply: division by zero") from None
    _bind_results(run, op, [int(r)])


def _dense_constant(run, op):
    """``arith.constant dense<[1, 2]> : vector<2xi16>`` (or the splat ``dense<0>``): a
    numpy array of the vector / tensor type's shape and element type."""
    import re
    from ._asm_ast import _np_dtype
    text = " ".join(t.text for t in op.toks)
    m = re.search(r"dense\s*<(.*)>\s*:\s*(?:vector|tensor)\s*<\s*((?:\d+\s*x\s*)*)(\w+)\s*>",
                  text)
    if m is None:
        raise NotImplementedError("arith.constant: only dense<...> : vector<...> / tensor<...> "
                                  "constants are supported")
    shape = tuple(int(d) for d in re.findall(r"\d+", m.group(2)))
    try:
        dtype = np.dtype(_np_dtype(m.group(3)))
    except Exception:   # noqa: BLE001 - an element type fastisa has no numpy type for
        raise NotImplementedError(f"arith.constant: element type {m.group(3)}") from None
    body = m.group(1).replace("[", " ").replace("]", " ").replace(",", " ").split()
    conv = float if dtype.kind == "f" else (lambda x: int(x, 0))
    vals = [conv(x) for x in body]
    n = int(np.prod(shape)) if shape else 1
    if len(vals) == 1:
        vals = vals * n
    if len(vals) != n:
        raise ConstraintError(f"arith.constant: dense<...> has {len(vals)} values, the type "
                              f"holds {n}")
    bits = dtype.itemsize * 8
    if dtype.kind in "iu":     # MLIR integer attributes are signless: wrap to the width
        vals = [((v + (1 << (bits - 1))) % (1 << bits)) - (1 << (bits - 1))
                if dtype.kind == "i" else v % (1 << bits) for v in vals]
    _bind_results(run, op, [np.array(vals, dtype).reshape(shape)])


_NOOPS = frozenset("""
aic_initialize_pipe aiv_initialize_pipe initialize_l2l_pipe initialize_l2g2l_pipe
tfree_from_aic tfree_from_aiv tfree set_flag wait_flag set_flag_dyn wait_flag_dyn barrier
barrier_sync pipe_barrier record_event wait_event sync.set sync.wait get_buf rls_buf set_ffts
eventid_array_set tsync print trap
""".split()) | {"memref.dealloc", "llvm.intr.assume"}

_OPS = {
    "scf.yield": _scf_yield,
    "scf.condition": _scf_condition,
    "scf.if": _scf_if,
    "scf.for": _scf_for,
    "scf.while": _scf_while,
    "func.call": _func_call,
    "memref.alloc": _memref_alloc,
    "memref.alloca": _memref_alloc,
    "memref.subview": _subview,
    "memref.reinterpret_cast": _reinterpret_cast,
    "pto.pointer_cast": _pointer_cast,
    "pto.subview": _subview,
    "pto.declare_tile": _declare_tile,
    "pto.get_block_idx": _block_idx,
    "pto.get_block_num": _block_num,
    "pto.get_subblock_idx": _subblock_idx,
    "pto.get_subblock_num": _subblock_num,
    "pto.reserve_buffer": _reserve_buffer,
    "pto.import_reserved_buffer": _reserve_buffer,
    "pto.declare_eventid_array": _none_results,
    "pto.eventid_array_get": _none_results,
    "pto.build_async_session": _none_results,
    "pto.subset": _subset,
    "pto.tput_async": _async_copy,
    "pto.tget_async": _async_copy,
    "pto.wait_async_event": _async_done,
    "pto.test_async_event": _async_done,
    "pto.tpush_to_aiv": _push("c2v"),
    "pto.tpush_to_aic": _push("v2c"),
    "pto.tpop_from_aic": _pop("c2v"),
    "pto.tpop_from_aiv": _pop("v2c"),
    "pto.tpush": _pipe_push,
    "pto.tpop": _pipe_pop,
    "pto.initialize_l2g2l_pipe": _pipe_handle,
    "pto.initialize_l2l_pipe": _pipe_handle,
    "pto.load_scalar": _load_scalar,
    "pto.store_scalar": _store_scalar,
    "pto.addptr": _addptr,
    "affine.apply": _affine_apply,
    "arith.constant": _dense_constant,
}


def _section(run, op):
    return _region(run, op.regions[0]) if op.regions else None


_OPS["pto.section.cube"] = _section
_OPS["pto.section.vector"] = _section

del OpaqueType, ScalarType, ViewType


def _tfree(run, op):
    """``pto.tfree_from_aic`` / ``tfree_from_aiv`` / ``pto.tfree``: TFREE on the module's
    pipe (releases the slot on A5; a no-op on A2/A3, where the pop released it)."""
    from . import _pipes
    _pipes.TFREE(module_pipe(run.shared), _split_of(op))


for _n in ("pto.tfree_from_aic", "pto.tfree_from_aiv", "pto.tfree"):
    _OPS[_n] = _tfree


def _generic_tmov(run, op):
    """The generic spelling ``"pto.tmov"(%src, %dst[, %fp][, %pre]) <{operandSegmentSizes =
    array<i32: 1, 1, F, Q>, reluPreMode = ..., accToVecMode = ...}>`` (TMovOp, PTOAS
    PTOOps.td: src, dst, optional fp, optional preQuantScalar): the same call as
    ``pto.tmov ins(...) outs(...)``."""
    from . import _asm_calls
    vals = [_value(run, t) for t in _percents(op, 1)]
    segs = _attr(op, "operandSegmentSizes")
    counts = [1, 1, 0, 0]
    if segs and ":" in segs:
        try:
            counts = [int(x) for x in segs.split(":", 1)[1].strip(" >").split(",")]
        except ValueError:
            raise ConstraintError(f"{op.name}: cannot read operandSegmentSizes {segs}") from None
    if len(counts) != 4 or counts[0] != 1 or counts[1] != 1 or sum(counts) != len(vals):
        raise ConstraintError(f"{op.name}: operandSegmentSizes {counts} do not fit its "
                              f"{len(vals)} operands (src, dst, fp?, preQuantScalar?)")
    src, dst = vals[0], vals[1]
    extra = vals[2:]
    attrs = {}
    for key in ("reluPreMode", "accToVecMode"):
        v = _attr(op, key)
        if v is not None:
            attrs[key] = v
    done = _asm_calls._tmov_check(run.P, "tmov", [dst], [src] + extra, attrs)
    if done is False:
        run.P.TMOV(dst, src)


_OPS["pto.tmov"] = _generic_tmov


# ---- ptoseek: multi-buffer tiles (PTOAS include/PTO/IR/PTOOps.td AllocMultiTileOp /
# MultiTileGetOp) ------------------------------------------------------------------------

def _multi_tile_type(op, ty):
    """The slot tile type and count of ``!pto.multi_tile_buf<loc, RxCxT, ..., count=N>``
    (the inner tile in the compact ``!pto.tile_buf`` spelling plus ``count``)."""
    import re
    text = getattr(ty, "text", "")
    m = re.fullmatch(r"!pto\.multi_tile_buf<(.*)>", text.replace("\n", " ").strip())
    if not m:
        raise ConstraintError(f"{op.name}: expected a !pto.multi_tile_buf<...> type, got "
                              f"{text or ty}")
    body = m.group(1)
    cm = re.search(r",\s*count\s*=\s*(\d+)", body)
    if not cm:
        raise ConstraintError(f"{op.name}: {text} has no count = N")
    inner = (body[:cm.start()] + body[cm.end():]).strip()
    from ._asm_lexer import tokenize
    from ._asm_parser import _Parser
    p = _Parser.__new__(_Parser)
    p.text, p.lines, p.i = "", [], 0
    p.toks = tokenize("!pto.tile_buf<" + inner + ">")
    return p.type_(), int(cm.group(1))


def _alloc_multi_tile(run, op):
    """``%m = pto.alloc_multi_tile [addr = %a] [valid_row = %r valid_col = %c] :
    !pto.multi_tile_buf<S, count=N>``: N slot tiles of type S; with ``addr`` slot k is at
    ``addr + k * slotBytes`` (slotBytes = rows * cols * element size), as the op's
    description says for ``--pto-level=level3``; the valid operands set every slot's
    dynamic valid shape."""
    tt, n = _multi_tile_type(op, _result_type(op))
    if n <= 0:
        raise ConstraintError(f"{op.name}: count must be > 0, got {n}")
    addr = _attr(op, "addr")
    vr, vc = _attr(op, "valid_row"), _attr(op, "valid_col")
    tiles = []
    from ._asm_runner import physical_shape
    if physical_shape(tt) != (tt.rows, tt.cols):
        run.make_tile(tt, strict=True)              # raises pto-isa's AlignmentError
    for k in range(n):
        tile = run.make_tile(tt)
        if addr is not None:
            run.P.TASSIGN(tile, int(_value(run, _tok_named(op, "addr"))) + k * tile.nbytes)
        if vr is not None and tt.v_row is None:
            tile.set_valid_row(int(_value(run, _tok_named(op, "valid_row"))))
        if vc is not None and tt.v_col is None:
            tile.set_valid_col(int(_value(run, _tok_named(op, "valid_col"))))
        tiles.append(tile)
    _bind_results(run, op, [_MultiTile(tiles)])


class _MultiTile(list):
    """The slots of a ``pto.alloc_multi_tile`` (a list of tiles)."""


def _tok_named(op, key):
    toks = op.toks
    for k in range(len(toks) - 2):
        if toks[k].text == key and toks[k + 1].text == "=":
            return toks[k + 2]
    raise ConstraintError(f"{op.name}: expected {key} = %value")


def _multi_tile_get(run, op):
    """``%t = pto.multi_tile_get %m[%slot] : !pto.multi_tile_buf<...> -> T``: slot
    ``%slot`` (in ``[0, count)``, AccessError otherwise) -- the same tile every time, so
    data written through one get is read through the next."""
    ps = _percents(op)
    src = _value(run, ps[0])
    if not isinstance(src, _MultiTile):
        raise ConstraintError(f"{op.name}: %{ps[0].text[1:]} is not a pto.alloc_multi_tile")
    k = int(_value(run, ps[1])) if len(ps) > 1 and ps[1].kind == "percent" else None
    if k is None:
        lits = [t for t in op.toks if t.kind == "int"]
        k = int(lits[0].text) if lits else 0
    if not 0 <= k < len(src):
        raise AccessError(f"{op.name}: slot {k} is outside [0, {len(src)})")
    _bind_results(run, op, [src[k]])


_OPS.update({"pto.alloc_multi_tile": _alloc_multi_tile, "pto.multi_tile_get": _multi_tile_get})


# ---- ptoseek: casts, valid-shape queries and local arrays of the 2026-07 PTOAS ----------

def _unrealized_cast(run, op):
    """``%y = builtin.unrealized_conversion_cast %x : T1 to T2`` (MLIR builtin): between
    integer types the bit pattern is kept and read as T2 (``i16 -> ui16`` of -1 is 65535);
    any other value (a tile ...) passes through unchanged."""
    from ._asm_runner import _INT_BITS, _wrap
    ps = _percents(op)
    v = _value(run, ps[0])
    toks = op.toks
    k = next((i for i, t in enumerate(toks) if t.text == "to"), None)
    dst = toks[k + 1].text if k is not None and k + 1 < len(toks) else None
    if dst in _INT_BITS and isinstance(v, (int, np.integer)):
        v = _wrap(int(v), dst)
    _bind_results(run, op, [v])


def _get_validshape(run, op):
    """``%r, %c = pto.get_validshape %tile : T`` (PTOOps.td GetValidShapeOp): the tile's
    current valid rows and columns."""
    tile = _value(run, _percents(op)[0])
    if not isinstance(tile, run.P.Tile):
        raise ConstraintError(f"{op.name}: expected a tile")
    _bind_results(run, op, [tile.valid_row, tile.valid_col])


def _local_array_type(op):
    import re
    from ._asm_ast import _np_dtype
    text = " ".join(t.text for t in op.toks)
    m = re.search(r"!pto\.local_array\s*<\s*((?:\d+\s*x\s*)+)\s*(\w+)\s*>", text)
    if m is None:
        m2 = re.search(r"!pto\.local_array<([0-9x]+)x(\w+)>", text.replace(" ", ""))
        if m2 is None:
            raise ConstraintError(f"{op.name}: expected a !pto.local_array<NxT> type")
        dims, elem = m2.group(1), m2.group(2)
    else:
        dims, elem = m.group(1).replace(" ", "").rstrip("x"), m.group(2)
    return tuple(int(d) for d in dims.split("x") if d), _np_dtype(elem), elem


def _declare_local_array(run, op):
    """``%a = pto.declare_local_array -> !pto.local_array<D1x...xT>`` (PTOTypeDefs.td: a
    statically sized scalar array on the core's stack): zeros."""
    shape, dt, _elem = _local_array_type(op)
    _bind_results(run, op, [np.zeros(shape, dt)])


def _local_index(run, op, arr):
    idx = [_index_operand(run, t) for t in _first_bracket(op)]
    if len(idx) != arr.ndim or any(not 0 <= i < n for i, n in zip(idx, arr.shape)):
        raise AccessError(f"{op.name}: index {idx} is outside the local array of shape "
                          f"{arr.shape}")
    return tuple(idx)


def _local_array_set(run, op):
    """``pto.local_array_set %a[%i...], %v : !pto.local_array<...>, T``."""
    ps = _percents(op)
    arr = _value(run, ps[0])
    idx = _local_index(run, op, arr)
    arr[idx] = _value(run, ps[len(idx) + 1])


def _local_array_get(run, op):
    """``%v = pto.local_array_get %a[%i...] : !pto.local_array<...> -> T``."""
    arr = _value(run, _percents(op)[0])
    v = arr[_local_index(run, op, arr)]
    _bind_results(run, op, [int(v) if arr.dtype.kind in "iub" else v])


_OPS.update({"builtin.unrealized_conversion_cast": _unrealized_cast,
             "pto.get_validshape": _get_validshape,
             "pto.declare_local_array": _declare_local_array,
             "pto.local_array_set": _local_array_set, "pto.local_array_get": _local_array_get})


def _tensor_view_dim(run, op):
    """``%n = pto.get_tensor_view_dim %tv, %k : !pto.tensor_view<...>, index -> index``
    (PTOOps.td GetTensorViewDimOp; ``get_tensor_view_stride`` alike): dimension k's size
    (stride) of the view, as the program made it."""
    from ._asm_runner import _PartView, _TensorView
    ps = _percents(op)
    v = _value(run, ps[0])
    k = int(_value(run, ps[1]))
    if isinstance(v, _PartView):
        shape, strides = v.sizes, v.tv.strides
    elif isinstance(v, _TensorView):
        shape, strides = v.shape, v.strides
    else:
        raise NotImplementedError(f"{op.name} of a {type(v).__name__} is not supported")
    if not 0 <= k < len(shape):
        raise AccessError(f"{op.name}: dimension {k} is outside the view's rank {len(shape)}")
    vals = strides if op.name.endswith("stride") else shape
    _bind_results(run, op, [int(vals[k])])


_OPS.update({"pto.get_tensor_view_dim": _tensor_view_dim,
             "pto.get_tensor_view_stride": _tensor_view_dim})


# ---- ptoseek: the point-to-point pto.comm ops of the 2026-07 PTOAS (PTOOps.td CommTPutOp
# / CommTGetOp / CommTNotifyOp / CommTWaitOp / CommTTestOp), on fastisa.pto.comm (pto-isa
# docs/isa/comm/*.md; ranks share one address space, as on the CPU simulator) ----

def _comm_word(op, key):
    v = _attr(op, key)
    if v is None:
        return None
    w = v.replace(">", " ").replace("<", " ").split()
    return w[-1].lower() if w else None


def _comm_views(run, op, n):
    from ._asm_runner import _PartView
    ps = _percents(op)
    vals = [_value(run, t) for t in ps]
    views = vals[:n]
    if not all(isinstance(v, _PartView) for v in views):
        raise ConstraintError(f"{op.name}: the first {n} operand(s) must be partition views")
    return views, vals[n:]


def _comm_put_get(run, op):
    """``pto.comm.tput(%dst, %src, buf(%ping[, %pong]) : ...) {atomicType}`` /
    ``pto.comm.tget(...)``: TPUT / TGET through the staging tile(s)."""
    from . import comm as C
    (dst, src), bufs = _comm_views(run, op, 2)
    tiles = [b for b in bufs if isinstance(b, run.P.Tile)]
    if not tiles:
        raise ConstraintError(f"{op.name}: expected buf(%ping[, %pong]) staging tile(s)")
    args = (dst.global_tensor(run.P), src.global_tensor(run.P), tiles[0],
            tiles[1] if len(tiles) > 1 else None)
    if op.name.endswith("tput"):
        atomic = _comm_word(op, "atomicType") or "atomic_none"
        table = {"atomic_none": C.AtomicType.AtomicNone, "atomic_add": C.AtomicType.AtomicAdd}
        if atomic not in table:
            raise NotImplementedError(f"{op.name}: atomicType {atomic} is not simulated")
        C.TPUT(*args, atomic=table[atomic])
    else:
        C.TGET(*args)
    dst.tv.ptr.written = True


def _comm_signal(run, op):
    """``pto.comm.tnotify(%sig, %v) {notifyOp}``, ``pto.comm.twait(%sig, %v) {cmp}``, ``%b =
    pto.comm.ttest(%sig, %v) {cmp} -> i1``."""
    from . import comm as C
    (sig,), rest = _comm_views(run, op, 1)
    if not rest:
        raise ConstraintError(f"{op.name}: expected a signal view and a value")
    value = int(rest[0])
    g = sig.global_tensor(run.P)
    if op.name.endswith("tnotify"):
        w = _comm_word(op, "notifyOp") or "set"
        table = {"set": C.NotifyOp.Set, "atomic_add": C.NotifyOp.AtomicAdd}
        if w not in table:
            raise NotImplementedError(f"{op.name}: notifyOp {w} is not simulated")
        C.TNOTIFY(g, value, table[w])
        sig.tv.ptr.written = True
        return
    w = (_comm_word(op, "cmp") or "eq").upper()
    if w not in C.WaitCmp.__members__:
        raise NotImplementedError(f"{op.name}: cmp {w} is not simulated")
    if op.name.endswith("twait"):
        C.TWAIT(g, value, C.WaitCmp[w])
    else:
        _bind_results(run, op, [int(bool(C.TTEST(g, value, C.WaitCmp[w])))])


_OPS.update({"pto.comm.tput": _comm_put_get, "pto.comm.tget": _comm_put_get,
             "pto.comm.tnotify": _comm_signal, "pto.comm.twait": _comm_signal,
             "pto.comm.ttest": _comm_signal})


# ---- ptoacc branch (issue 13): declared helpers, the CTRL register ------------------------
def _definition(module, decl):
    """The body of a function the calling module only declares (``func.func private @h()``):
    the one non-private definition of ``@h`` with the same signature elsewhere in the module
    tree -- a sibling ``module {...}`` (PTOAS links the backend-partitioned modules of one
    file: test/lit/pto/backend_partitioned_*, test/lit/vpto/backend_mixed_*).  None or
    several candidates: NotImplementedError (fastisa does not link across files)."""
    found = [g for g in module.funcs if g.name == decl.name and g.body is not None
             and g.visibility != "private" and [t for _n, t in g.args] == [t for _n, t in
                                                                              decl.args]
             and tuple(g.results) == tuple(decl.results)]
    if len(found) != 1:
        raise NotImplementedError(
            f"func.call: @{decl.name} is only declared (no body)" + (
                f"; {len(found)} definitions in the module match it" if found else ""))
    return found[0]


#: ``pto.get_ctrl`` / ``pto.set_ctrl`` (PTOAS include/PTO/IR/VPTOOps.td GetCtrlOp /
#: SetCtrlOp: read / write the 64-bit CTRL special register, i64) and ``pto.sbitset0`` /
#: ``sbitset1`` (clear / set bit ``n`` of an i64 scalar).  The register's bits select modes
#: of later instructions (e.g. stochastic rounding, SPR.CTRL[50], pto-isa docs/isa/TQUANT.md)
#: that fastisa does not model, so the register is kept per core (starting at
#: CTRL_RESET = 0, fastisa's value: the reset value is not documented) and a tile instruction
#: run while it differs from CTRL_RESET raises NotImplementedError, never a silently wrong
#: result; a program that saves CTRL, changes it and restores it runs.
CTRL_RESET = 0


def _ctrl_key(run):
    return (_kernel_kind(run.func), run.subblock)


def ctrl_changed(run):
    """Whether this core's CTRL register differs from CTRL_RESET."""
    return run.shared.get("ctrl", {}).get(_ctrl_key(run), CTRL_RESET) != CTRL_RESET


def _get_ctrl(run, op):
    v = run.shared.get("ctrl", {}).get(_ctrl_key(run), CTRL_RESET)
    _bind_results(run, op, [v - (1 << 64) if v >> 63 else v])          # an i64 value


def _set_ctrl(run, op):
    ps = _percents(op, 0)
    if len(ps) != 1:
        raise ConstraintError(f"{op.name}: expected one i64 operand, got {len(ps)}")
    v = _value(run, ps[0])
    if isinstance(v, (float, np.floating)) or not isinstance(v, (int, np.integer)):
        raise ConstraintError(f"{op.name}: the operand must be an i64 integer, got {v!r}")
    run.shared.setdefault("ctrl", {})[_ctrl_key(run)] = int(v) & (1 << 64) - 1


def _sbitset(bit):
    def run_(run, op):
        ps = _percents(op, 0)
        if len(ps) != 2:
            raise ConstraintError(f"{op.name}: expected two i64 operands (value, bit), got "
                                  f"{len(ps)}")
        v, n = (int(_value(run, t)) for t in ps)
        if not 0 <= n < 64:
            raise ConstraintError(f"{op.name}: bit must be in [0, 63], got {n}")
        v &= (1 << 64) - 1
        v = v | (1 << n) if bit else v & ~(1 << n)
        _bind_results(run, op, [v - (1 << 64) if v >> 63 else v])      # an i64 value
    return run_


def _syncall(run, op):
    """``pto.syncall(...) mode = hard|soft, core_type = ...`` (PTOAS PTOOps.td SyncAllOp,
    pto-isa docs/isa/SYNCALL.md): a barrier of every participating core.  fastisa's PTO-AS
    runs one block (``pto.get_block_num`` is 1), so outside a mixed AIC/AIV core group the
    only participant has arrived and the barrier returns at once; the CPU simulator's
    SYNCALL is a no-op as well (include/pto/common/cpu_stub.hpp ``SYNCALL_IMPL`` /
    ``SYNCALL_SOFT_IMPL``), and, as there, the soft mode's GM / UB / L1 workspace is not
    written.  Inside a core group started by the entry (cube and vector kernels taking
    turns) the barrier would have to order them: NotImplementedError."""
    _check_syncall(run, op)
    if getattr(run, "in_core_group", False):
        raise NotImplementedError("pto.syncall: a barrier across the simulated AIC/AIV cores "
                                  "of a mixed kernel is not modelled, so this program cannot "
                                  "run")


def _check_syncall(run, op):
    """SyncAllOp's verifier (PTOAS lib/PTO/IR/PTO.cpp ``SyncAllOp::verify``): hard mode takes
    no operands; soft mode a GM workspace plus a UB (vec) tile for aiv_only, an L1 (mat)
    tile for aic_only, both for mix, and an optional i32 used_cores."""
    from ._asm_runner import _PartView, _Pointer, _TensorView
    mode = (_attr(op, "mode") or "").rsplit("<", 1)[-1].rstrip(">").strip()
    core = (_attr(op, "core_type") or "").rsplit("<", 1)[-1].rstrip(">").strip()
    if mode not in ("hard", "soft") or core not in ("aiv_only", "aic_only", "mix"):
        raise ConstraintError(f"{op.name}: expects mode = #pto.sync_all_mode<hard|soft> and "
                              f"core_type = #pto.sync_core_type<aiv_only|aic_only|mix>, got "
                              f"mode {mode or 'missing'}, core_type {core or 'missing'}")
    gm = ub = l1 = used = 0
    for t in _percents(op, 1):
        v = _value(run, t)
        if isinstance(v, (_PartView, _TensorView, _Pointer)):
            gm += 1
        elif isinstance(v, run.P.Tile) and v.loc == run.P.TileType.Vec:
            ub += 1
        elif isinstance(v, run.P.Tile) and v.loc == run.P.TileType.Mat:
            l1 += 1
        elif isinstance(v, (int, np.integer)):
            used += 1
        else:
            raise ConstraintError(f"{op.name}: operand %{t.text[1:]} is not a GM workspace, a "
                                  f"vec / mat tile workspace or an i32 used_cores")
    if mode == "hard":
        if gm or ub or l1 or used:
            raise ConstraintError(f"{op.name}: expects hard syncall to have no workspace "
                                  f"operands or used_cores")
        return
    need = {"aiv_only": (1, 0, "soft AIV-only syncall to use gm_workspace + ub_workspace"),
            "aic_only": (0, 1, "soft AIC-only syncall to use gm_workspace + l1_workspace"),
            "mix": (1, 1, "soft mixed syncall to use gm_workspace + ub_workspace + "
                          "l1_workspace")}[core]
    if gm != 1 or (ub, l1) != need[:2] or used > 1:
        raise ConstraintError(f"{op.name}: expects {need[2]} (and an optional i32 "
                              f"used_cores), got {gm} GM, {ub} vec, {l1} mat workspaces and "
                              f"{used} scalars")


def _prefetch_async(run, op):
    """``pto.tprefetch_async(%src, %ctx)`` (PTOAS PTOOps.td TPrefetchAsyncOp: an L2-cache
    prefetch through SDMA): no data changes; the event is complete at once, as the CPU
    simulator's TPREFETCH_ASYNC_IMPL (include/pto/cpu/TPrefetchAsync.hpp: "The L2 cache
    concept does not exist in CPU simulation", Wait/Test return true).  PTOAS's verifier
    (TPrefetchAsyncOp::verify): src is a flat contiguous 1-D GM view."""
    from ._asm_runner import _PartView, _TensorView
    ps = _percents(op, 1)
    src = _value(run, ps[0]) if ps else None
    shape, strides = (src.sizes, src.tv.strides) if isinstance(src, _PartView) else (
        (src.shape, src.strides) if isinstance(src, _TensorView) else (None, None))
    if shape is None or len(shape) != 1 or strides[-1] != 1:
        raise ConstraintError(f"{op.name}: expects src to be a static flat contiguous logical "
                              f"1D GM memref")
    for t in ps[1:]:
        _value(run, t)
    _bind_results(run, op, ["async_event"])


def _prefetch_context(run, op):
    """``pto.make_prefetch_async_context(%workspace)`` / ``pto.get_prefetch_async_session``:
    handles (the CPU simulator keeps the workspace pointer and never touches it).  The
    workspace is an 8-bit integer GM pointer (MakePrefetchAsyncContextOp::verify)."""
    from ._asm_runner import _Pointer
    for t in _percents(op):
        v = _value(run, t)
        if "make" in op.name and isinstance(v, _Pointer) and v.np_dtype.itemsize != 1:
            raise ConstraintError(f"{op.name}: expects workspace element type to be an 8-bit "
                                  f"integer")
    _bind_results(run, op, ["prefetch_async_context" if "make" in op.name
                            else "async_session"])


def _tgetval(run, op):
    """``%v = pto.tgetval ins(%tile, %offset : type, index) outs : T`` (PTOAS PTOOps.td
    TGetValOp, C++ ``GETVAL``: ``Tile::GetValue(offset)``, element ``offset`` of the tile's
    storage, pto_tile.hpp).  A tile PTO-AS padded (:func:`fastisa.pto._asm_runner.
    physical_shape`) is addressed in the declared dense layout: offset ``r * cols + c`` of
    the PTOAS type (``c * rows + r`` column-major) is element (r, c)."""
    ps = _percents(op, 1)
    if len(ps) != 2:
        raise ConstraintError(f"{op.name}: expected ins(%tile, %offset), got {len(ps)} operands")
    tile, off = _value(run, ps[0]), _value(run, ps[1])
    if not isinstance(tile, run.P.Tile):
        raise NotImplementedError(f"{op.name}: only a tile source runs")
    if isinstance(off, (float, np.floating)) or not isinstance(off, (int, np.integer)):
        raise ConstraintError(f"{op.name}: offset must be an integer, got {off!r}")
    off = int(off)
    declared = getattr(tile, "declared_shape", None)
    if declared is not None:
        dr, dc = declared
        if not 0 <= off < dr * dc:
            raise AccessError(f"{op.name}: offset must be in [0, {dr * dc}) (the tile's "
                              f"{dr} x {dc} storage), got {off}")
        r, c = divmod(off, dc) if tile.blayout == run.P.BLayout.RowMajor else divmod(off, dr)[::-1]
        v = tile.data[r, c].copy()
    else:
        v = tile.GetValue(off)
    _bind_results(run, op, [int(v) if v.dtype.kind in "iub" else v])


_OPS["pto.tgetval"] = _tgetval
_OPS.update({"pto.tprefetch_async": _prefetch_async,
             "pto.make_prefetch_async_context": _prefetch_context,
             "pto.get_prefetch_async_session": _prefetch_context,
             "pto.comm.wait_async_event": _async_done, "pto.comm.test_async_event": _async_done})
_OPS.update({"pto.syncall": _syncall, "pto.get_ctrl": _get_ctrl, "pto.set_ctrl": _set_ctrl,
             "pto.sbitset0": _sbitset(0), "pto.sbitset1": _sbitset(1)})
# ---- end ptoacc ----
