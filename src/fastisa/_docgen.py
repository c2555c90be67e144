"""Generate the instruction reference pages ``docs/{nki,tik,pto}.md`` from the docstrings.

    python -m fastisa._docgen            # (re)write docs/nki.md, docs/tik.md, docs/pto.md
                                         # and the nki.isa / nki.language type stubs
    python -m fastisa._docgen --check    # exit 1 if a page or stub is out of date
    python -m fastisa._docgen --fix-refs # rewrite internal references (see below) in the
                                         # README and every docstring/comment under src/

Each page lists every instruction of one front-end with the first line of its docstring
(the instruction as a formula) and a status: ``implemented``, ``partial`` (some forms
raise NotImplementedError) or ``not implemented``.  ``tests/test_docs.py`` checks the
pages against this generator, so after adding or changing an instruction, rerun it.

Internal references.  fastisa's development notes cite a private specification ("spec
000" ... "spec 004") and research notes (``reference/*.md``) that do not ship; a user
needs the public documents they come from.  :data:`PUBLIC_SOURCES` maps each to the
public source (vendor document by title, public repository path), :func:`fix_refs`
rewrites text with it, and the test fails on any internal reference left in the README
or the package sources.
"""

from __future__ import annotations

import argparse
import inspect
import os
import re
import sys
from collections.abc import Callable, Iterator

__all__ = ["PUBLIC_SOURCES", "fix_refs", "internal_refs", "generate", "generate_stub", "main"]

_SEC = r"(?:,? ?(?:§ ?|sections? )?[0-9]+(?:\.[0-9]+)*(?:(?:[–-]|, | and )§?[0-9]+(?:\.[0-9]+)*)*)?"

#: (pattern, public source) -- the order matters (longest forms first)
PUBLIC_SOURCES: list[tuple[str, str]] = [
    (r"\bspecs 003 and 004\b",
     'the PTO ISA docs, pages TRECIP and TROWEXPANDEXPDIF (github.com/hw-native-sys/pto-isa, '
     "docs/isa/)"),
    (r"\bspec 000\b",
     'the NKI docs, page NKI ISA API Common Fields (github.com/aws-neuron/aws-neuron-sdk, '
     "nki/api/nki.api.shared.rst)"),
    (r"\bspec 001\b",
     'the NKI docs, page nki.isa.topk (github.com/aws-neuron/aws-neuron-sdk, nki/api/nki.isa.rst)'),
    (r"\bspec 002\b",
     'the TIK docs, Vector-Scalar Instructions: General Definition (Ascend TIK API '
     "reference, hiascend.com)"),
    (r"\bspec 003\b",
     'the PTO ISA docs, page TRECIP (github.com/hw-native-sys/pto-isa, docs/isa/TRECIP.md)'),
    (r"\bspec 004\b",
     'the PTO ISA docs, page TROWEXPANDEXPDIF (github.com/hw-native-sys/pto-isa, '
     "docs/isa/TROWEXPANDEXPDIF.md)"),
    (r"`?reference/tik\.md`?" + _SEC,
     "the TIK source and its CPU debugger (github.com/jizhuoran/caffe-huawei-atlas-convertor, "
     "convertor/huawei/te/tik/)"),
    (r"`?reference/pto\.md`?" + _SEC,
     "the PTO ISA docs and CPU simulator (github.com/hw-native-sys/pto-isa, docs/isa/ and "
     "include/pto/cpu/)"),
    (r"`?reference/nki\.md`?" + _SEC,
     "the NKI docs and simulator guide (github.com/aws-neuron/aws-neuron-sdk, nki/api/ and "
     "nki/guides/nki_simulator.rst)"),
    (r"`?reference/numerics\.md`?" + _SEC,
     "ml_dtypes (github.com/jax-ml/ml_dtypes) and the NKI docs (github.com/aws-neuron/"
     "aws-neuron-sdk, nki/api/nki.api.shared.rst)"),
]

_INTERNAL = re.compile(r"\bspecs? 00[0-9]\b|reference/[a-z_]+\.md|\bspec/[0-9]{3}|"
                       r"`reference/\*\.md`", re.IGNORECASE)


def fix_refs(text: str) -> str:
    """``text`` with every internal reference replaced by its public source."""
    for pat, public in PUBLIC_SOURCES:
        text = re.sub(pat, public.replace("\\", "\\\\"), text, flags=re.IGNORECASE)
    return text


def internal_refs(text: str) -> list[str]:
    """The internal references left in ``text`` (one entry per occurrence)."""
    return _INTERNAL.findall(text)


# ---- the pages --------------------------------------------------------------------------

def _root(strict: bool = False) -> str:
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(here))      # src/fastisa -> repository
    if strict and not os.path.exists(os.path.join(root, "pyproject.toml")):
        raise SystemExit("fastisa._docgen: fastisa is not imported from a source checkout "
                         f"({here}); run it from an editable install (pip install -e .)")
    return root


def _first_line(obj) -> str:
    doc = inspect.getdoc(obj) or ""
    para = doc.strip().split("\n\n")[0] if doc.strip() else ""
    line = " ".join(para.split())
    return fix_refs(line).replace("|", "\\|") if line else "(no docstring)"


def _status(obj) -> str:
    obj = inspect.unwrap(obj)   # a plan-cache front (fastisa.plans): the full path's source
    try:
        src = inspect.getsource(obj)
    except (OSError, TypeError):
        return "implemented"
    if "NotImplementedError" not in src:
        return "implemented"
    body = src.split('"""')[-1] if src.count('"""') >= 2 else src
    first = next((ln.strip() for ln in body.splitlines()[1:] if ln.strip()), "")
    return "not implemented" if first.startswith("raise NotImplementedError") else "partial"


def _nki() -> Iterator[tuple[str, Callable]]:
    from .nki import isa
    for n in sorted(isa.__all__):
        v = getattr(isa, n)
        if inspect.isfunction(v):
            yield "nki.isa." + n, v


def _tik() -> Iterator[tuple[str, Callable]]:
    from .tik import Tik
    for n, v in inspect.getmembers(Tik, inspect.isfunction):   # inherited (mixins) too
        if not n.startswith("_"):
            yield "Tik." + n, v


def _pto() -> Iterator[tuple[str, Callable]]:
    from . import pto
    for n in sorted(pto.__all__):
        v = getattr(pto, n)
        if inspect.isfunction(v) and n[:1] == "T" and n.isupper():
            yield "pto." + n, v


FRONTENDS = {
    "nki": ("NKI (AWS Trainium): `nki.isa`", _nki,
            "Semantics: the NKI docs (github.com/aws-neuron/aws-neuron-sdk, nki/api/)."),
    "tik": ("TIK (Huawei Ascend): `tik.Tik` methods", _tik,
            "Semantics: the Ascend TIK API reference (hiascend.com) and the TIK source with "
            "its CPU debugger (github.com/jizhuoran/caffe-huawei-atlas-convertor, "
            "convertor/huawei/te/tik/)."),
    "pto": ("PTO tile ISA (Huawei Ascend): `fastisa.pto`", _pto,
            "Semantics: the PTO ISA docs (github.com/hw-native-sys/pto-isa, docs/isa/)."),
}


def generate(frontend: str) -> str:
    """The Markdown reference page of one front-end (``"nki"``, ``"tik"``, ``"pto"``)."""
    title, walk, source = FRONTENDS[frontend]
    rows = list(walk())
    out = [f"# {title}", "",
           "<!-- generated by `python -m fastisa._docgen` from the docstrings; do not edit -->",
           "", source, "",
           f"{len(rows)} entries.  Status `partial`: some forms raise NotImplementedError "
           "(the docstring says which).", "",
           "| instruction | formula / summary | status |", "|---|---|---|"]
    for name, obj in rows:
        out.append(f"| `{name}` | {_first_line(obj)} | {_status(obj)} |")
    return "\n".join(out) + "\n"


#: stub-only package files listing a module's names explicitly (mypy cannot read a
#: computed __all__, so a star import would export nothing)
STUBS = {
    os.path.join("src", "nki-stubs", "isa", "__init__.pyi"): "fastisa.nki.isa",
    os.path.join("src", "nki-stubs", "language", "__init__.pyi"): "fastisa.nki.language",
}


def generate_stub(module: str) -> str:
    """The re-exporting stub of ``module`` (every name in its runtime ``__all__``)."""
    import importlib
    mod = importlib.import_module(module)
    vendor = module.replace("fastisa.", "", 1)
    lines = [f"# `import {vendor}` type-checks as {module} (PEP 561 stub-only package shipped",
             "# by fastisa).  Generated by `python -m fastisa._docgen`; do not edit.",
             f"from {module} import ("]
    lines += [f"    {n} as {n}," for n in sorted(mod.__all__)]
    lines.append(")")
    return "\n".join(lines) + "\n"


def _outputs() -> list[tuple[str, str]]:
    out = [(os.path.join("docs", f"{fe}.md"), generate(fe)) for fe in FRONTENDS]
    out += [(path, generate_stub(mod)) for path, mod in STUBS.items()]
    return out


def _doc_files() -> list[str]:
    root = _root()
    files = [os.path.join(root, "README.md")]
    for top in ("src",):
        for d, _, names in os.walk(os.path.join(root, top)):
            files += [os.path.join(d, n) for n in sorted(names)
                      if n.endswith((".py", ".pyx", ".pyi", ".pxd", ".h"))
                      and n != "_docgen.py"]
    return files


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m fastisa._docgen")
    p.add_argument("--check", action="store_true", help="compare, do not write")
    p.add_argument("--fix-refs", action="store_true",
                   help="rewrite internal references in README.md and src/")
    args = p.parse_args(argv)
    root = _root(strict=True)
    if args.fix_refs:
        changed = 0
        for f in _doc_files():
            with open(f, encoding="utf-8") as fh:
                text = fh.read()
            new = fix_refs(text)
            if new != text:
                with open(f, "w", encoding="utf-8") as fh:
                    fh.write(new)
                changed += 1
                print(f"fixed references in {os.path.relpath(f, root)}")
        print(f"{changed} files changed")
        return 0
    stale = []
    for rel, text in _outputs():
        path = os.path.join(root, rel)
        try:
            with open(path, encoding="utf-8") as fh:
                old = fh.read()
        except OSError:
            old = None
        if old != text:
            stale.append(path)
            if not args.check:
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "w", encoding="utf-8") as fh:
                    fh.write(text)
                print(f"wrote {rel}")
    if args.check and stale:
        print("out of date (run python -m fastisa._docgen): " +
              ", ".join(os.path.relpath(s, root) for s in stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
