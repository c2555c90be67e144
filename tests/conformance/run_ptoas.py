"""PTO-AS conformance: every public tile-level ``.pto`` program, parsed and run by fastisa.

Finds every ``.pto`` (and ``.mlir`` holding ``pto.`` ops) file under the checkouts named by
the environment variables below, classifies each as *accepted* or *rejected* by PTOAS from
its lit lines (``// RUN: not ptoas ...``, a ``// CHECK: error: ...`` line or an
``expected-error`` annotation mean rejected; everything else, including the samples that
``runop.sh`` compiles without lit lines, is accepted), and then

* parses and runs every accepted tile-level program with :func:`fastisa.pto.asm.run` on
  random inputs (every pointer argument filled with random values of its element type;
  integer scalar arguments 0, float scalars 1.0) -- a pass is "ran to the end";
* checks that every rejected program raises a :mod:`fastisa.errors` exception carrying a
  line and column, from :func:`~fastisa.pto.asm.parse` or while running;
* for the pypto model samples that ship a golden builder (``*_golden.py`` next to the
  ``.pto``: Qwen3 decode, DeepSeek), runs the builder's inputs through fastisa and compares
  with the builder's expected outputs under PTOAS's own criterion (the tolerance the
  builder's ``compare`` uses), see :func:`golden_cases`.

Tile level: programs using the VPTO micro-instruction level (``pto.v*`` ops, ``!pto.vreg``,
``pto.vecscope``) are counted and skipped; fastisa does not implement that level.

Environment variables (each optional; the harness is skipped when none is set or exists):

``FASTISA_PTOAS``      checkout of hw-native-sys/PTOAS (current)
``FASTISA_PTOAS_OLD``  checkout of zhangstevenunity/PTOAS (older dialect)
``FASTISA_PTO_DSL``    checkout of huawei-csl/pto-dsl
``FASTISA_PTO_ISA``    checkout of hw-native-sys/pto-isa

Run: ``FASTISA_PTOAS=/path/PTOAS python tests/conformance/run_ptoas.py [-v] [-k SUBSTR]``.
Prints a per-category table, the failure reasons, and closes with ``N passed, M failed``.
No vendor file is copied: programs are read from the checkouts at run time.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import os
import re
import signal
import sys
import time
import warnings

import numpy as np

ENV_VARS = ("FASTISA_PTOAS", "FASTISA_PTOAS_OLD", "FASTISA_PTO_DSL", "FASTISA_PTO_ISA")

_VPTO = re.compile(r"!pto\.vreg|!pto\.mask\b|\bpto\.vecscope\b|\bpto\.v[a-z0-9_]+\s")
_RUN = re.compile(r"//\s*RUN:(.*)")
_REJECT_CHECK = re.compile(r"//\s*CHECK[A-Z-]*:\s*.*\berror\b")
_TIME_LIMIT = 60          # seconds per program


class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout()


def checkouts():
    """``[(label, path)]`` for every environment variable naming an existing directory."""
    out = []
    for var in ENV_VARS:
        p = os.environ.get(var)
        if p and os.path.isdir(p):
            out.append((var[len("FASTISA_"):].lower(), p))
    return out


def find_programs(roots):
    """Every unique PTO program under ``roots``: ``[(label, relpath, fullpath, text)]``."""
    seen = set()
    out = []
    for label, root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            for fn in sorted(filenames):
                if not fn.endswith((".pto", ".mlir")):
                    continue
                full = os.path.join(dirpath, fn)
                try:
                    with open(full, encoding="utf-8", errors="replace") as f:
                        text = f.read()
                except OSError:
                    continue
                if "pto." not in text or "func.func" not in text:
                    continue
                h = hashlib.sha1(text.encode()).hexdigest()
                if h in seen:
                    continue
                seen.add(h)
                out.append((label, os.path.relpath(full, root), full, text))
    return out


def _flag(cmd, name):
    m = re.search(r"--" + name + r"(?:=|\s+)([A-Za-z0-9_]+)", cmd)
    return m.group(1).lower() if m else None


def classify(text):
    """PTOAS's verdicts: ``[(kind, arch, level)]``, one per distinct ``ptoas`` RUN line
    configuration; kind is ``"rejected"`` for ``not ptoas`` (or, for a file whose only
    RUN line pipes to FileCheck with a ``CHECK: error`` line / ``expected-error``), else
    ``"accepted"``.  Samples without lit lines are accepted with the default options."""
    out = []
    runs = [m.group(1) for m in _RUN.finditer(text) if "ptoas" in m.group(1)]
    for cmd in runs:
        head = cmd.split("|")[0]
        kind = "rejected" if re.match(r"\s*not\s", head) else "accepted"
        cfg = (kind, _flag(head, "pto-arch"), _flag(head, "pto-level"))
        if cfg not in out:
            out.append(cfg)
    if not out:
        out = [("accepted", None, None)]
    if len(out) == 1 and out[0][0] == "accepted" and (
            _REJECT_CHECK.search(text) or "expected-error" in text):
        out = [("rejected",) + out[0][1:]]
    return out


def category(label, rel):
    parts = rel.replace(os.sep, "/").split("/")
    if parts[0] == "test" and len(parts) > 2 and parts[1] == "samples":
        return f"{label}:samples/{parts[2]}"
    if parts[0] == "test" and len(parts) > 1:
        return f"{label}:test/{parts[1]}"
    return f"{label}:{'/'.join(parts[:-1]) or '.'}"


def random_inputs(func, rng):
    """Random arrays for pointer arguments, 0 / 1.0 for scalars (see the module docstring)."""
    from fastisa.pto import _asm_ast as ast

    inputs = {}
    for name, ty in func.args:
        if isinstance(ty, ast.ScalarType):
            inputs[name] = 1.0 if ast._is_float(ty.name) else 0
    return inputs


def _reason(exc):
    msg = str(exc)
    msg = re.sub(r"^line \d+, column \d+( \([^)]*\))?: ", "", msg)
    msg = re.sub(r"%[A-Za-z0-9_$.\-#]+", "%v", msg)
    msg = re.sub(r"\b\d+\b", "N", msg)
    return f"{type(exc).__name__}: {msg[:110]}"


def run_program(text, rng, arch=None, level=None):
    """``(ok_for_accepted, ok_for_rejected, reason)`` for one program."""
    from fastisa.errors import FastisaError
    from fastisa.pto import asm

    try:
        module = asm.parse(text, arch=arch, level=level)
    except FastisaError as exc:
        return False, getattr(exc, "line", 0) > 0, "parse: " + _reason(exc)
    except RecursionError as exc:
        return False, False, "crash: " + _reason(exc)
    except Exception as exc:  # noqa: BLE001 - any other exception is a crash
        return False, False, "crash(parse): " + _reason(exc)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from fastisa.pto._asm_runner import _entry
            asm.run(module, random_inputs(_entry(module), rng), random=rng, arch=arch)
    except FastisaError as exc:
        return False, getattr(exc, "line", 0) > 0, "run: " + _reason(exc)
    except NotImplementedError as exc:
        return False, False, "run: " + _reason(exc)
    except _Timeout:
        return False, False, "timeout"
    except Exception as exc:  # noqa: BLE001
        return False, False, "crash(run): " + _reason(exc)
    return True, False, "ran; PTOAS rejects it"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-v", "--verbose", action="store_true", help="one line per program")
    ap.add_argument("-k", default=None, help="only programs whose path contains this")
    ap.add_argument("--reasons", type=int, default=25, help="failure reasons to list")
    args = ap.parse_args(argv)
    roots = checkouts()
    if not roots:
        print("skipped: set " + " / ".join(ENV_VARS) + " to a checkout")
        print("0 passed, 0 failed")
        return 0
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 20000))
    progs = find_programs(roots)
    if args.k:
        progs = [p for p in progs if args.k in p[1]]
    table = collections.OrderedDict()
    reasons = collections.Counter()
    skipped_vpto = 0
    passed = failed = 0
    t0 = time.time()
    use_alarm = hasattr(signal, "SIGALRM")
    if use_alarm:
        signal.signal(signal.SIGALRM, _alarm)
    for label, rel, full, text in progs:
        if _VPTO.search(text):
            skipped_vpto += 1
            continue
        cat = category(label, rel)
        row = table.setdefault(cat, {"accepted": [0, 0], "rejected": [0, 0]})
        for kind, arch, level in classify(text):
            rng = np.random.default_rng(int(hashlib.sha1(rel.encode()).hexdigest()[:8], 16))
            if use_alarm:
                signal.alarm(_TIME_LIMIT)
            try:
                ok_acc, ok_rej, why = run_program(text, rng, arch, level)
            except _Timeout:
                ok_acc, ok_rej, why = False, False, "timeout"
            finally:
                if use_alarm:
                    signal.alarm(0)
            ok = ok_acc if kind == "accepted" else ok_rej
            row[kind][0 if ok else 1] += 1
            if ok:
                passed += 1
            else:
                failed += 1
                reasons[(kind, why)] += 1
            if args.verbose:
                opts = ",".join(x for x in (arch, level) if x)
                print(f"{'PASS' if ok else 'FAIL'} {kind:8s} {label}:{rel}"
                      + (f" [{opts}]" if opts else "") + ("" if ok else f"  -- {why}"))
    # ---- tables ----
    w = max([len(c) for c in table] + [8])
    print(f"\n{'category':{w}s}  accepted-run  rejected-rejected")
    tot = {"accepted": [0, 0], "rejected": [0, 0]}
    for cat, row in table.items():
        cells = []
        for kind in ("accepted", "rejected"):
            p, f = row[kind]
            tot[kind][0] += p
            tot[kind][1] += f
            cells.append(f"{p:>5d}/{p + f:<5d}" if p + f else f"{'-':>11s}")
        print(f"{cat:{w}s}  {cells[0]:>12s}  {cells[1]:>12s}")
    for kind in ("accepted", "rejected"):
        p, f = tot[kind]
        pct = 100.0 * p / (p + f) if p + f else 0.0
        print(f"{kind} programs: {p}/{p + f} ({pct:.1f}%)")
    if skipped_vpto:
        print(f"skipped (VPTO micro-instruction level): {skipped_vpto}")
    if reasons:
        print("\nfailure reasons (count, PTOAS's verdict, reason):")
        for (kind, why), n in reasons.most_common(args.reasons):
            print(f"{n:5d}  {kind:8s}  {why}")
    print(f"\n({time.time() - t0:.1f} s)")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
