"""Conformance harness (issue 13, 4(b)): pto-isa's CPU-simulator test cases against fastisa.pto.

For every directory of ``tests/cpu/st/testcase`` in a pto-isa checkout, this script runs the
directory's ``gen_data.py`` in a temporary directory (recording, for each case, the case
directory and the parameter object its golden generator was called with), runs the same
computation with ``fastisa.pto`` through a small driver of our own (``DRIVERS`` in
``ptoisa_drivers.py``: the C++ test bodies are not Python, so each test directory gets a
fastisa-side transliteration), and compares fastisa's output with ``golden.bin``

* under pto-isa's own rule (tests/common/test_common.h ``ResultCmp``: an element fails when
  ``|e - a| > eps`` and ``|e - a| / |e| > eps`` or exactly one is NaN; the case passes when the
  failures are at most ``n * eps`` elements), eps = 0.001 unless the test says otherwise, and
* bit for bit.

A directory passes when every case passes the vendor rule.  Directories without a driver are
reported as "no driver" and count as failed.

Directories that ship no golden.bin (their C++ test checks values it computes itself) are
run from ``ptoisa_selfcheck.py``: the golden is computed by pto-isa's CPU simulator itself,
through small C++ programs of ours (``ptoisa_cpp/``) compiled with g++ against the
checkout's headers and cached by content hash outside the repository (``_ptoisa_cpp.py``;
without a C++ compiler those directories print "skipped"), or, where the simulator lacks the
instruction (TPACK) or the test asserts an identity (TASSIGN aliasing), is the rule the test
asserts.  Cases of a C++ test that fastisa cannot express yet are listed as not run and fail
their directory.  Nothing of pto-isa is copied: the checkout is
read in place, its generators run in a temporary directory.

    PTO_ISA_PATH=/path/to/pto-isa python tests/conformance/run_ptoisa.py [-k NAME] [-v]

Prints a per-category table and ``N passed, M failed`` (directories).  Without
``PTO_ISA_PATH`` (or with a path that has no test cases) it prints a skip line and exits 0.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
import tempfile
import time
import types
import traceback

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import ptoisa_drivers as D  # noqa: E402
import ptoisa_selfcheck as SC  # noqa: E402
import _ptoisa_cpp  # noqa: E402

TESTCASE = os.path.join("tests", "cpu", "st", "testcase")
MAIN_MARK = 'if __name__ == "__main__":'


def run_gen(path: str, workdir: str):
    """Runs gen_data.py in workdir (with its directory and tests/cpu/st, for utils.py, on
    sys.path); returns [(case_dir, function name, args, kwargs)] of every outermost call of
    a function gen_data.py defines, made from its main block (the golden generators)."""
    src = open(path, encoding="utf-8").read()
    calls = []
    ns = {"__name__": "gen_data", "__file__": os.path.join(workdir, "gen_data.py")}
    alt = MAIN_MARK.replace('"', "'")
    mark = MAIN_MARK if MAIN_MARK in src else alt
    body, sep, main = src.partition(mark)
    old = os.getcwd()
    st = os.path.dirname(os.path.dirname(os.path.dirname(path)))      # tests/cpu/st
    extra = [os.path.dirname(path), st,
             os.path.dirname(os.path.dirname(os.path.dirname(st)))]      # the checkout root
    sys.path[:0] = extra
    os.chdir(workdir)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            exec(compile(body, path, "exec"), ns)
            depth = [0]
            for name, fn in list(ns.items()):
                if (isinstance(fn, types.FunctionType) and fn.__module__ == "gen_data"
                        and not name.startswith("_")):
                    ns[name] = _recorder(fn, calls, depth)
            if sep:
                # the main block's body at module level (an ``if`` makes no scope)
                code = "if True:\n" + "\n".join(main.splitlines()[1:]) + "\n    pass\n"
                exec(compile(code, path, "exec"), ns)
    finally:
        os.chdir(old)
        for e in extra:
            sys.path.remove(e)
    return calls, ns


def _recorder(fn, calls, depth):
    """Records the outermost calls (a generator's helpers run inside it)."""
    def wrapped(*a, **k):
        if depth[0] == 0:
            calls.append((os.getcwd(), fn.__name__, a, k))
        depth[0] += 1
        try:
            return fn(*a, **k)
        finally:
            depth[0] -= 1
    wrapped.__name__ = fn.__name__
    return wrapped


def _named_dir(tmp, args, kwargs):
    """The case directory a generator made itself, named by its parameter's name field."""
    for x in list(args) + list(kwargs.values()):
        if isinstance(x, str) and x and os.path.isdir(os.path.join(tmp, x)):
            return os.path.join(tmp, x)         # the case name passed as a string
        for attr in ("name", "testname", "case_name"):
            v = getattr(x, attr, None)
            if isinstance(v, str) and os.path.isdir(os.path.join(tmp, v)):
                return os.path.join(tmp, v)
    return None


def vendor_cmp(golden: np.ndarray, got: np.ndarray, eps: float) -> bool:
    """tests/common/test_common.h ResultCmp, vectorised (same counting of zeros and NaNs)."""
    e = golden.astype(np.float32).reshape(-1).astype(np.float64)
    a = got.astype(np.float32).reshape(-1).astype(np.float64)
    if e.size != a.size:
        return False
    with np.errstate(all="ignore"):
        diff = np.abs(e - a)
        rel = np.abs(diff / e)
        err = ((diff > eps) & (rel > eps)) | (np.isnan(e) != np.isnan(a))
    zeros = int(np.count_nonzero((np.abs(a) <= 1e-6) & (np.abs(e) > 1e-6)))
    threshold = int(e.size * eps)
    return int(err.sum()) <= threshold and zeros <= 1000


def bit_equal(golden: np.ndarray, got: np.ndarray) -> bool:
    g = np.ascontiguousarray(golden).reshape(-1)
    o = np.ascontiguousarray(got).reshape(-1)
    if g.nbytes != o.nbytes:
        return False
    if g.dtype.kind == "f" or g.dtype.itemsize == 2 and g.dtype.kind not in "iu":
        gn = np.isnan(g.astype(np.float32))
        on = np.isnan(o.astype(np.float32))
        same = (g.view(np.uint8).reshape(g.size, -1) == o.view(np.uint8).reshape(o.size, -1)).all(1)
        return bool(((same) | (gn & on)).all())
    return g.tobytes() == o.tobytes()


def run_dir(root: str, name: str, verbose: bool):
    """(status, n_cases, n_vendor_pass, n_bit_exact, note)."""
    if name in SC.SELF:
        return run_self(root, name, verbose)
    if name in getattr(D, "SELF_CHECKS", {}):     # ptocomm: tests that check values themselves
        return run_self_check(name, verbose)
    drv = D.DRIVERS.get(name)
    if drv is None and name not in getattr(D, "MODULE_CASES", {}):
        return "no driver", 0, 0, 0, D.WHY_NOT.get(name, "")
    gen = os.path.join(root, TESTCASE, name, "gen_data.py")
    if not os.path.exists(gen):
        return "no gen_data", 0, 0, 0, ""
    with tempfile.TemporaryDirectory(prefix=f"ptoisa_{name}_") as tmp:
        try:
            calls, ns = run_gen(gen, tmp)
        except Exception as exc:  # the vendor generator itself failed
            return "gen failed", 0, 0, 0, f"{type(exc).__name__}: {exc}"[:120]
        if not calls and name in getattr(D, "MODULE_CASES", {}):   # ptocomm: module-level gen
            return _score(name, lambda: D.MODULE_CASES[name](tmp), verbose, "")
        if not calls:
            return "gen failed", 0, 0, 0, "no golden generator call recorded"
        n = vp = be = 0
        note = ""
        calls = [c for c in calls if c[1] not in D.SKIP_FUNCS]
        calls = D.expand_calls(calls, tmp)   # (branch ptolowp) one call writing every case
        seen = set()
        for case_dir, fname, args, kwargs in calls:
            if os.path.realpath(case_dir) == os.path.realpath(tmp):
                case_dir = _named_dir(tmp, args, kwargs)   # generators that chdir themselves
                if case_dir is None:
                    continue        # a helper called between cases, not a case
            if os.path.realpath(case_dir) in seen:
                continue            # a second call for the same case (e.g. its file writer)
            seen.add(os.path.realpath(case_dir))
            n += 1
            ns["__case_fn__"] = fname
            try:
                got, golden, eps = drv(case_dir, args, kwargs, ns)
            except Exception as exc:
                if verbose:
                    traceback.print_exc()
                note = note or f"{os.path.basename(case_dir)}: {type(exc).__name__}: {exc}"[:160]
                continue
            ok = vendor_cmp(golden, got, eps)
            exact = bit_equal(golden, got)
            vp += ok
            be += exact
            if verbose or not ok:
                if not ok and not note:
                    note = f"{os.path.basename(case_dir)}: mismatch"
                if verbose:
                    print(f"    {name}/{os.path.basename(case_dir)}: vendor={'ok' if ok else 'FAIL'}"
                          f" bits={'ok' if exact else 'diff'}")
        return ("pass" if vp == n else "fail"), n, vp, be, note


def run_self(root: str, name: str, verbose: bool):
    """A directory without golden.bin (ptoisa_selfcheck.py): the golden comes from the CPU
    simulator through our C++ program, or from the rule the C++ test asserts."""
    rng = np.random.default_rng(sum(map(ord, name)))
    try:
        cases, secs = SC.SELF[name](root, rng)
    except _ptoisa_cpp.Unavailable as exc:
        return "skipped", 0, 0, 0, str(exc)[:160]
    except Exception as exc:
        if verbose:
            traceback.print_exc()
        return "fail", 0, 0, 0, f"{type(exc).__name__}: {exc}"[:160]
    n = vp = be = 0
    note = (f"sim golden, compile {secs:.1f} s ({_ptoisa_cpp.LAST_CPU[0]:.1f} s CPU)" if secs
            else "sim golden (cached build)")
    if cases and cases[0][0].startswith("rule:"):
        note = "golden = the rule the C++ test asserts"
    bad = ""
    missing = {}
    for cname, got, golden, eps in cases:
        n += 1
        if got is None:                 # a case of the C++ test fastisa cannot express yet
            missing[golden] = missing.get(golden, 0) + 1
            if verbose:
                print(f"    {name}/{cname}: not run ({golden})")
            continue
        ok = vendor_cmp(golden, got, eps)
        exact = bit_equal(golden, got)
        vp += ok
        be += exact
        if not ok and not bad:
            bad = f"{cname}: mismatch; "
        if verbose:
            print(f"    {name}/{cname}: vendor={'ok' if ok else 'FAIL'}"
                  f" bits={'ok' if exact else 'diff'}")
    if missing:
        bad += "not run: " + ", ".join(f"{v} {k}" for k, v in missing.items()) + "; "
    return ("pass" if vp == n and n else "fail"), n, vp, be, (bad + note)[:160]


def run_self_check(name: str, verbose: bool):
    """A directory without gen_data cases (ptoisa_drivers.SELF_CHECKS): its driver builds the
    C++ test's inputs and returns what the test checks, as (case, got, expected, eps)."""
    return _score(name, D.SELF_CHECKS[name], verbose, "checks of the C++ test")


def _score(name, make_cases, verbose, default_note):
    """Scores [(case, got, golden, eps)] from make_cases() under the vendor rule and bits."""
    try:
        cases = make_cases()
    except Exception as exc:
        if verbose:
            traceback.print_exc()
        return "fail", 0, 0, 0, f"{type(exc).__name__}: {exc}"[:160]
    vp = be = 0
    note = ""
    for case, got, golden, eps in cases:
        ok = vendor_cmp(golden, got, eps)
        exact = bit_equal(golden, got)
        vp += ok
        be += exact
        if not ok and not note:
            note = f"{case}: mismatch"
        if verbose:
            print(f"    {name}/{case}: vendor={'ok' if ok else 'FAIL'} bits={'ok' if exact else 'diff'}")
    n = len(cases)
    return ("pass" if n and vp == n else "fail"), n, vp, be, note or default_note


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-k", default=None, help="only test directories containing this string")
    ap.add_argument("-v", action="store_true", help="per-case lines and tracebacks")
    opts = ap.parse_args(argv)
    root = os.environ.get("PTO_ISA_PATH", "")
    tc = os.path.join(root, TESTCASE)
    if not root or not os.path.isdir(tc):
        print("SKIPPED: set PTO_ISA_PATH to a pto-isa checkout (with tests/cpu/st/testcase)")
        return 0
    names = sorted(d for d in os.listdir(tc) if os.path.isdir(os.path.join(tc, d)))
    if opts.k:
        names = [d for d in names if opts.k in d]
    rows = []
    t0 = time.time()
    for name in names:
        st, n, vp, be, note = run_dir(root, name, opts.v)
        rows.append((D.category(name), name, st, n, vp, be, note))
    print(f"{'category':<14} {'test dir':<22} {'status':<10} {'cases':>5} {'vendor':>6} "
          f"{'bits':>5}  note")
    for cat, name, st, n, vp, be, note in sorted(rows):
        print(f"{cat:<14} {name:<22} {st:<10} {n:>5} {vp:>6} {be:>5}  {note}")
    print()
    print(f"{'category':<14} {'dirs':>5} {'pass':>5} {'cases':>6} {'vendor':>7} {'bit-exact':>9}")
    cats = sorted({r[0] for r in rows})
    for cat in cats:
        sub = [r for r in rows if r[0] == cat]
        print(f"{cat:<14} {len(sub):>5} {sum(r[2] == 'pass' for r in sub):>5} "
              f"{sum(r[3] for r in sub):>6} {sum(r[4] for r in sub):>7} {sum(r[5] for r in sub):>9}")
    npass = sum(r[2] == "pass" for r in rows)
    ncases = sum(r[3] for r in rows)
    print(f"\ncases: {ncases} run, {sum(r[4] for r in rows)} pass the vendor rule, "
          f"{sum(r[5] for r in rows)} bit-exact against the golden (golden.bin or the CPU "
          f"simulator) ({time.time() - t0:.0f} s)")
    print(f"{npass} passed, {len(rows) - npass} failed")
    return 0 if npass == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
