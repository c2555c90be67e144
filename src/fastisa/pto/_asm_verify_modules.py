"""PTO-AS verifier, rules on a file's module structure (the 2026-07 PTOAS,
wang-chonghao/PTOAS): ``pto.backend`` partitioned files, cross-module peer lookups,
uncovered tile sections.

* ``tools/ptoas/driver.cpp`` (parseDriverBackendAttr, resolveSingleBackend,
  buildBackendChildCompileUnit): a ``pto.backend`` is ``"emitc"`` or ``"vpto"``; an outer
  module of several child modules holds nothing else; when the children's backends
  differ (mixed-backend mode, each child compiled alone), each child's cross-child
  ``func.call`` and ``peer_func`` must resolve to exactly one public function of a
  sibling, its exported functions may not share a PTODSL logical name, and an imported
  peer may not call other functions.
* ``lib/PTO/IR/PTO.cpp`` (lookupPeerFuncAcrossContainer, ImportReservedBufferOp::verify):
  ``peer_func`` names a function of the importing function's own module or, failing
  that, exactly one non-private function (by name or ``pto.ptodsl.logical_name``) of the
  enclosing module.
* ``lib/PTO/Transforms/PTONormalizeUncoveredTileSections.cpp``: in a function without a
  kernel kind (``pto.kernel_kind`` on it or its module) that has ``pto.section.*``
  regions, a top-level op may not hold both a nested section and tile ops outside it.

PTOAS's command-line options that change these rules (``--pto-backend``, the debug-IR
output flags) are not modelled: the rules are checked as PTOAS checks them without
those options.  Violations raise :class:`fastisa.errors.AsmSyntaxError` at the module,
function or op PTOAS reports.
"""

from __future__ import annotations

from ._asm_ast import DpsOp, ForOp, GenericOp, SsaOp

LOGICAL_NAME = "pto.ptodsl.logical_name"


def _unq(v):
    return v.strip().strip('"') if isinstance(v, str) else v


def _fattr(f, key):
    for k, v in f.attrs:
        if k == key:
            return v
    return None


def _logical(f):
    v = _fattr(f, LOGICAL_NAME)
    return _unq(v) if v is not None else f.name


def _public(f):
    return f.visibility != "private"


def _walk(ops):
    for op in ops:
        yield op
        if isinstance(op, ForOp):
            yield from _walk(op.body)
        elif isinstance(op, GenericOp):
            for r in op.regions:
                yield from _walk(r.ops)


def _attr_value(op, key):
    toks = op.toks
    for k in range(len(toks) - 2):
        if toks[k].text == key and toks[k + 1].text == "=":
            return toks[k + 2].text
    return None


def _subtree(mods, k):
    """Indices of module ``k`` and every module nested in it."""
    out = [k]
    for c in mods[k].children:
        out += _subtree(mods, c)
    return out


def verify_modules(module, err):
    mods = module.modules
    if not mods:
        return
    funcs = module.funcs
    owner = {}
    for k, m in enumerate(mods):
        for i in m.funcs:
            owner[i] = k
    for m in mods:
        b = m.attr("pto.backend")
        if b is not None and _unq(b) not in ("emitc", "vpto"):
            raise err(f"invalid pto.backend '{_unq(b)}'. Expected 'emitc' or 'vpto'.", m)
    _verify_peer_lookups(mods, funcs, owner, err)
    _verify_backend_partition(mods, funcs, err)
    for k, f in enumerate(funcs):
        if f.body is not None:
            _verify_uncovered_sections(f, mods[owner.get(k, 0)], err)


def _verify_peer_lookups(mods, funcs, owner, err):
    """lookupPeerFuncAcrossContainer, for every ``pto.import_reserved_buffer``."""
    for k, f in enumerate(funcs):
        if f.body is None:
            continue
        for op in _walk(f.body):
            if not (isinstance(op, GenericOp) and op.name == "pto.import_reserved_buffer"):
                continue
            target = (_attr_value(op, "peer_func") or "").lstrip("@")
            if not target:
                continue
            here = mods[owner.get(k, 0)]
            if any(funcs[i].name == target for i in here.funcs):
                continue
            matches = []
            if here.parent is not None:
                for mk in _subtree(mods, here.parent):
                    matches += [funcs[i] for i in mods[mk].funcs
                                if _public(funcs[i]) and (
                                    funcs[i].name == target
                                    or (_fattr(funcs[i], LOGICAL_NAME) is not None
                                        and _logical(funcs[i]) == target))]
            if len(matches) != 1:
                raise err("'pto.import_reserved_buffer' op expects 'peer_func' to reference "
                          "an existing func.func", op)


def _calls(f):
    if f.body is None:
        return []
    out = []
    for op in _walk(f.body):
        if isinstance(op, GenericOp) and op.name == "func.call":
            name = next((t for t in op.text if t.startswith("@")), None)
            if name:
                out.append(name[1:])
    return sorted(set(out))


def _verify_backend_partition(mods, funcs, err):
    """resolveSingleBackend / buildBackendChildCompileUnit of tools/ptoas/driver.cpp."""
    root = mods[0]
    if root.attr("pto.backend") is not None or len(root.children) < 2:
        return
    if root.funcs:
        raise err("mixed pto.backend fatobj mode expects either a single module or an outer "
                  "module containing only child modules; found non-module top-level ops "
                  "alongside child modules.", funcs[root.funcs[0]])
    backends = {_unq(mods[c].attr("pto.backend") or "emitc") for c in root.children}
    if len(backends) < 2:
        return
    for c in root.children:
        child = mods[c]
        mine = [funcs[i] for i in child.funcs]
        names = {f.name for f in mine}
        siblings = [funcs[i] for s in root.children if s != c for i in mods[s].funcs
                    if _public(funcs[i])]
        for callee in sorted({n for f in mine for n in _calls(f)} - names):
            hits = [g for g in siblings if g.name == callee]
            if len(hits) > 1:
                raise err(f"mixed-backend child assembly does not yet support ambiguous "
                          f"cross-child function reference '@{callee}'; found multiple "
                          f"sibling public func.func definitions", child)
            if not hits:
                raise err(f"mixed-backend child assembly does not yet support unresolved "
                          f"cross-child function reference '@{callee}'; each cross-child "
                          f"func.call must resolve to one sibling public func.func", child)
        groups = {}
        for f in mine:
            if _public(f) and f.body is not None and _fattr(f, "pto.kernel_kind") is None:
                groups.setdefault(_logical(f), []).append(f)
        for logical, fs in groups.items():
            if len(fs) > 1:
                raise err(f"mixed-backend child assembly does not yet support ambiguous "
                          f"in-child logical reference '@{logical}'; found multiple "
                          f"ABI-specialized public func.func definitions", child)
        peers = sorted({(_attr_value(op, "peer_func") or "").lstrip("@") for f in mine
                        if f.body is not None for op in _walk(f.body)
                        if isinstance(op, GenericOp)
                        and op.name == "pto.import_reserved_buffer"} - {""})
        for peer in peers:
            exact = [g for g in siblings if g.name == peer]
            logical = [g for g in siblings if g.name != peer and _logical(g) == peer]
            hits = exact or logical
            if len(hits) > 1:
                raise err(f"mixed-backend child assembly does not yet support ambiguous "
                          f"cross-child {'logical ' if not exact else ''}peer_func reference "
                          f"'@{peer}'; found multiple sibling public func.func definitions",
                          child)
            if not hits:
                raise err(f"mixed-backend child assembly does not yet support unresolved "
                          f"cross-child peer_func reference '@{peer}'; each "
                          f"import_reserved_buffer peer_func must resolve to one sibling "
                          f"public func.func", child)
            called = _calls(hits[0])
            if called:
                raise err(f"mixed-backend child assembly does not yet support transitive "
                          f"cross-child function closure for imported peer '{peer}'; cloned "
                          f"peer body @{hits[0].name} directly calls @{called[0]}. Keep "
                          f"peer_func targets leaf-only for now.", hits[0])


def _is_section(op):
    return isinstance(op, GenericOp) and op.name in ("pto.section.vector", "pto.section.cube")


def _inspect(op, acc):
    """PTONormalizeUncoveredTileSections inspectSegmentOperation: tile ops outside
    sections, and whether a section is nested."""
    if isinstance(op, (DpsOp, SsaOp)) or (isinstance(op, GenericOp) and op.name.startswith("pto.t")
                                  and op.name not in ("pto.tassign",)):
        acc["tile"] = True
    inner = op.body if isinstance(op, ForOp) else [
        o for r in op.regions for o in r.ops] if isinstance(op, GenericOp) else []
    for o in inner:
        if _is_section(o):
            acc["section"] = True
            continue
        _inspect(o, acc)


def _verify_uncovered_sections(f, mod, err):
    if _fattr(f, "pto.kernel_kind") is not None or mod.attr("pto.kernel_kind") is not None:
        return
    if not any(_is_section(op) for op in _walk(f.body)):
        return
    for op in f.body:
        if _is_section(op):
            continue
        acc = {"tile": False, "section": False}
        _inspect(op, acc)
        if acc["tile"] and acc["section"]:
            name = "scf.for" if isinstance(op, ForOp) else getattr(op, "name", "op")
            raise err(f"'func.func' op still contains an uncovered top-level TileOp segment "
                      f"after section normalization; a top-level op mixes nested explicit "
                      f"pto.section.* with sibling TileOps outside those sections; first "
                      f"uncovered TileOp segment starts at '{name}'", f)


_FRONTEND_INITS = {"pto.aic_initialize_pipe": ("cube", "pto.section.cube"),
                   "pto.aiv_initialize_pipe": ("vector", "pto.section.vector")}


def verify_frontend_kinds(module, err):
    """verifyFrontendKernelKind (lib/PTO/IR/PTO.cpp): ``pto.aic_initialize_pipe`` sits in a
    ``pto.section.cube`` or a function whose own ``pto.kernel_kind`` is cube (the innermost
    section decides), ``pto.aiv_initialize_pipe`` likewise for vector."""

    def walk(ops, section):
        for op in ops:
            if isinstance(op, GenericOp):
                want = _FRONTEND_INITS.get(op.name)
                if want is not None:
                    kind, sec = want
                    ok = section == sec if section else kind_of_func == kind
                    if not ok:
                        raise err(f"'{op.name}' op must be inside a {kind} kernel function "
                                  f"or section", op)
                inner = op.name if _is_section(op) else section
                for r in op.regions:
                    walk(r.ops, inner)
            elif isinstance(op, ForOp):
                walk(op.body, section)

    for f in module.funcs:
        if f.body is None:
            continue
        kk = _fattr(f, "pto.kernel_kind") or ""
        kind_of_func = "cube" if "cube" in kk else "vector" if "vector" in kk else None
        walk(f.body, None)


_ROLE_PIPES = {"simd": "PIPE_V", "cube": "PIPE_M"}


def _pipe_of(op):
    """The pipe PTOAS's OpPipeInterface gives a tile op (ins/outs and SSA forms); None for
    ops the contract does not look at."""
    if not isinstance(op, (DpsOp, SsaOp)):
        return None
    name = op.name.split(".")[-1] if op.name.startswith("pto.") else op.name
    if name in ("tload", "tprefetch", "mgather"):
        return "PIPE_MTE2"
    if name in ("tstore", "mscatter"):
        return "PIPE_MTE3"
    if name.startswith(("tmatmul", "tgemv")):
        return "PIPE_M"
    src = op.in_types[0] if op.in_types else None
    if name in ("textract", "tmov") and getattr(src, "loc", None) == "mat":
        return "PIPE_MTE1"
    return "PIPE_V"


def verify_subkernel_contracts(module, err):
    """PTOVerifySubkernelPipeContractPass (lib/PTO/Transforms/): a function marked
    ``pto.ptodsl.subkernel_helper = "simd"`` ("cube") and every function it calls (same
    module) issue tile ops on PIPE_V (PIPE_M) only; a helper of another role may not be
    called inside its closure."""
    mods = module.modules
    funcs = module.funcs
    owner = {}
    for k, m in enumerate(mods):
        for i in m.funcs:
            owner[i] = k

    def same_module(k, name):
        pool = mods[owner[k]].funcs if mods and k in owner else range(len(funcs))
        return next((i for i in pool if funcs[i].name == name), None)

    for root_k, root in enumerate(funcs):
        role = _unq(_fattr(root, "pto.ptodsl.subkernel_helper") or "")
        want = _ROLE_PIPES.get(role)
        if want is None or root.body is None:
            continue
        seen = set()
        stack = [root_k]
        while stack:
            k = stack.pop()
            if k in seen or funcs[k].body is None:
                continue
            seen.add(k)
            for op in _walk(funcs[k].body):
                if isinstance(op, GenericOp) and op.name == "func.call":
                    callee = next((t[1:] for t in op.text if t.startswith("@")), "")
                    ck = same_module(k, callee)
                    if ck is None:
                        raise err("'func.call' op requires a resolvable same-module callee "
                                  "inside PTODSL subkernel helper call closure", op)
                    crole = _unq(_fattr(funcs[ck], "pto.ptodsl.subkernel_helper") or "")
                    if crole and _ROLE_PIPES.get(crole) != want:
                        raise err(f"'func.call' op cannot call PTODSL subkernel helper "
                                  f"@{callee} with a different pipe role inside root helper "
                                  f"@{root.name}", op)
                    stack.append(ck)
                    continue
                pipe = _pipe_of(op)
                if pipe is not None and pipe != want:
                    raise err(f"violates PTODSL subkernel pipe contract for root helper "
                              f"@{root.name}: expected PTO ops on {want} only, but found "
                              f"{pipe}", op)


def _has_tile_ops(f):
    return f.body is not None and any(
        isinstance(op, (DpsOp, SsaOp)) or _is_section(op) for op in _walk(f.body))


def verify_vpto_container(module, err):
    """VPTONormalizeContainer.cpp: a file whose child modules all select
    ``pto.backend = "vpto"`` is compiled by the VPTO backend, whose container holds kernel
    submodules carrying ``pto.kernel_kind``.  Checked only for a child PTOAS cannot give a
    kind (PTONormalizeUncoveredTileSections infers one from a module's tile ops): no
    function of it has a kind or any tile op."""
    mods = module.modules
    if not mods:
        return
    root = mods[0]
    if root.attr("pto.backend") is not None or root.attr("pto.kernel_kind") is not None \
            or not root.children or root.funcs:
        return
    kids = [mods[c] for c in root.children]
    if any(_unq(k.attr("pto.backend") or "") != "vpto" for k in kids):
        return
    for k in kids:
        if k.attr("pto.kernel_kind") is not None:
            continue
        fs = [module.funcs[i] for i in k.funcs]
        if any(_fattr(f, "pto.kernel_kind") is not None or _has_tile_ops(f) for f in fs):
            continue
        raise err("expected VPTO kernel submodule to carry 'pto.kernel_kind'", k)
