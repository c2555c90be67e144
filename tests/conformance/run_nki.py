"""NKI conformance: public NKI kernel collections and their own tests, run on fastisa unchanged.

Usage (from the repository root)::

    FASTISA_NKI_SDK=/path/to/aws-neuron-sdk \\
    FASTISA_NKI_SAMPLES=/path/to/nki-samples \\
    FASTISA_NKI_LIBRARY=/path/to/nki-library \\
    python -m tests.conformance.run_nki [--full] [--only NAME[,NAME]] [--timeout S] [-v]

Each collection whose checkout variable is unset (or not a directory) is skipped.  Nothing of
the collections is copied: the harness reads the checkouts in place and runs

* ``sdk-test``      the SDK's ``nki/test/*.py`` (legacy ``neuronxcc.nki`` API) under pytest;
* ``sdk-examples``  the SDK's ``nki/examples`` scripts whose ``__main__`` checks a numpy
                    reference (run as ``__main__``; matched = the script's own assertions hold);
* ``samples-unit``  nki-samples' ``test/unit`` under pytest with its ``--simulation-only``;
* ``library``       nki-library's ``test/integration`` under its own pytest harness in
                    ``--test-mode=simulation`` (its large shapes skipped unless ``--full``),
                    plus an import census of every ``nkilib`` module;

each in a subprocess whose pytest loads :mod:`tests.conformance._nki_plugin` (it installs
:mod:`fastisa.shim` first, so ``import nki`` / ``neuronxcc.nki`` / ``nki_cpu_simulator``
resolve to fastisa).  The references and tolerances are the collections' own (their test
assertions).  A case fails if it errors, fails its assertions, or cannot be collected.
The table gives kernel (test module), case, ran, matched, the first error line and
seconds; failures whose error names an ``nki.isa`` instruction fastisa lacks are marked
``[isa]`` (the instruction-coverage issue).  The last line is ``N passed, M failed``
(``, K skipped``: cases the collection's own harness skips, e.g. large shapes).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BUDGET = [0]
CASE_TIMEOUT = [0]
MAX_CASES = [0]
JOBS = [1]
DIRS = [""]
TRN3 = [False]
SHARD = [""]

COLLECTIONS = {
    "sdk-test": ("FASTISA_NKI_SDK", "nki/test"),
    "sdk-examples": ("FASTISA_NKI_SDK", "nki/examples"),
    "samples-tutorials": ("FASTISA_NKI_SAMPLES", "src/nki_samples/tutorials"),
    "samples-unit": ("FASTISA_NKI_SAMPLES", "test/unit"),
    "library": ("FASTISA_NKI_LIBRARY", "test/integration"),
}

#: SDK example scripts whose ``__main__`` compares with a numpy reference (the others need
#: torch_xla / jax on a Neuron device).
SDK_EXAMPLE_SCRIPTS = (
    "simulate/nki_simulate_example.py",
    "average_pool2d/average_pool2d_nki_kernels.py",
    "transpose2d/transpose2d_nki_kernels.py",
    "fused_mamba/mamba_nki_kernels.py",
    "getting_started_baremetal.py",
)

#: nki-samples tutorial scripts that check their kernels against numpy or torch (the torch
#: ones run with torch_xla's device as the CPU: tests/conformance/_torch_xla_cpu.py)
SAMPLES_TUTORIAL_SCRIPTS = (
    "tensor_addition/tensor_addition_nki_kernels.py",
    "tensor_addition/spmd_tensor_addition_nki_kernels.py",
    "tensor_addition/spmd_multiple_nc_tensor_addition_nki_kernels.py",
    "tensor_addition/tensor_addition_torch.py",
    "tensor_addition/spmd_tensor_addition_torch.py",
    "tensor_addition/spmd_multiple_nc_tensor_addition_torch.py",
    "average_pool2d/average_pool2d_nki_kernels.py",
    "average_pool2d/average_pool2d_torch.py",
    "transpose2d/transpose2d_nki_kernels.py",
    "transpose2d/transpose2d_torch.py",
    "matrix_multiplication/matrix_multiplication_torch.py",
    "fused_mamba/mamba_nki_kernels.py",
    "fused_mamba/mamba_torch.py",
    "attention_fwd_performance/test_attention.py",
    "mxfp-matmul/mx_toplevel.py",
)

#: the MX tutorial is written for Trainium3 (nc_matmul_mx / quantize_mx are NeuronCore-v4)
SCRIPT_ENV = {"mxfp-matmul/mx_toplevel.py": {"NEURON_PLATFORM_TARGET_OVERRIDE": "trn3"}}

_ISA_MISSING = re.compile(r"module '(?:fastisa\.nki\.isa|nki\.isa)' has no attribute '(\w+)'"
                          r"|nki\.isa\.(\w+) is not implemented")


class Case:
    __slots__ = ("collection", "kernel", "case", "ran", "matched", "skipped", "error", "seconds")

    def __init__(self, collection, kernel, case, ran, matched, error="", seconds=0.0,
                 skipped=False):
        self.collection = collection
        self.kernel = kernel
        self.case = case
        self.ran = ran
        self.matched = matched
        self.skipped = skipped
        self.error = error
        self.seconds = seconds


def _env(extra=None):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in env.get("PYTHONPATH", "")
                                                       .split(os.pathsep) if p])
    env.setdefault("OMP_NUM_THREADS", "1")
    # one core per harness job (--jobs runs several): nc_matmul's kernel would otherwise use
    # every CPU for a [128, 128] x [128, 128] tile, and on a loaded machine waits for them
    # (a moe_block_tkg case: 44.6 s of matmul wall time with 2 threads, 11.7 s with 1)
    env.setdefault("FASTISA_THREADS", "1")
    env["NKI_SIMULATOR"] = "1"
    env["FASTISA_NKI_CASE_TIMEOUT"] = str(CASE_TIMEOUT[0])
    env["FASTISA_NKI_MAX_CASES"] = str(MAX_CASES[0])
    env["FASTISA_NKI_SHARD"] = SHARD[0]
    env["FASTISA_NKI_CLEAN_OUTPUT"] = "1"       # run_pytest's cwd is a temporary directory
    env.update(extra or {})
    return env


def _first_error(text: str) -> str:
    text = text or ""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for ln in lines:                                   # pytest's "E   Xxx: ..." line
        if ln.startswith("E ") and ("Error" in ln or "Exception" in ln or "assert" in ln):
            return _mark_isa(ln[1:].strip())
    for ln in reversed(lines):
        if re.match(r"^[\w.]*(Error|Exception|Warning)\b", ln) or ln.startswith("assert"):
            return _mark_isa(ln)
    return _mark_isa(lines[-1] if lines else "")


def _mark_isa(msg: str) -> str:
    m = _ISA_MISSING.search(msg)
    if m:
        return f"[isa] {msg}"
    return msg


def run_pytest(collection, paths, cwd, args, timeout, extra_env=None):
    with tempfile.TemporaryDirectory() as tmp:
        xml = Path(tmp) / "r.xml"
        cmd = [sys.executable, "-m", "pytest", *map(str, paths), "-p", "tests.conformance._nki_plugin",
               "-p", "tests.conformance._nki_cases",
               f"--junitxml={xml}", "-q", "--no-header", "-p", "no:cacheprovider",
               "-o", "junit_family=xunit1", "--continue-on-collection-errors",
               f"--rootdir={cwd}", *args]
        t0 = time.time()
        work = Path(tmp) / "cwd"       # the collection's artefacts land here, not in the checkout
        work.mkdir()
        try:
            proc = subprocess.run(cmd, cwd=work, env=_env(extra_env), capture_output=True,
                                  text=True, timeout=timeout)
            out = proc.stdout + proc.stderr
        except subprocess.TimeoutExpired as e:
            out = f"TimeoutError: the collection's run exceeded {timeout} s\n{e.stdout or ''}"
        if not xml.exists():
            return [Case(collection, Path(paths[0]).name, "(run)", False, False,
                         _first_error(out), time.time() - t0)]
        return _parse_junit(collection, xml, out)


def _parse_junit(collection, xml, out):
    cases = []
    for tc in ET.parse(xml).getroot().iter("testcase"):
        cls = tc.get("classname", "")
        name = tc.get("name", "")
        kernel = cls.split(".")[-2] if cls.count(".") >= 1 and cls.split(".")[-1][:1].isupper() \
            else cls.split(".")[-1]
        secs = float(tc.get("time", 0) or 0)
        fail = tc.find("failure")
        err = tc.find("error")
        skip = tc.find("skipped")
        if skip is not None:
            cases.append(Case(collection, kernel, name, False, False,
                              (skip.get("message") or "")[:200], secs, skipped=True))
        elif fail is not None or err is not None:
            node = fail if fail is not None else err
            text = (node.text or "") + "\n" + (node.get("message") or "")
            collect_err = err is not None and ("collection failure" in (node.get("message") or "")
                                               or not name)
            cases.append(Case(collection, kernel, name or "(collect)", not collect_err, False,
                              _first_error(text), secs))
        else:
            cases.append(Case(collection, kernel, name, True, True, "", secs))
    if not cases and re.search(r"\b\d+ deselected\b", out) and \
            not re.search(r"\b\d+ errors?\b", out):
        return cases          # every test is for another platform (the trn3 pass runs them)
    if not cases:
        cases.append(Case(collection, "(run)", "(collect)", False, False, _first_error(out), 0.0))
    return cases


#: what a tutorial script prints when its comparison fails (the torch scripts print
#: instead of asserting)
_SCRIPT_MISMATCH = re.compile(r"\bdiffer\b|pass\? False")


def run_scripts(collection, base, scripts, timeout, extra_env=None):
    cases = []
    boot = ("import sys, runpy; from fastisa import shim; shim.install(); "
            "from tests.conformance import _torch_xla_cpu; _torch_xla_cpu.install(); "
            "p = sys.argv[1]; sys.argv = [p]; runpy.run_path(p, run_name='__main__')")
    for rel in scripts:
        path = base / rel
        if not path.exists():
            continue
        t0 = time.time()
        try:
            proc = subprocess.run([sys.executable, "-c", boot, str(path)], cwd=path.parent,
                                  env=_env(dict(extra_env or {}, **SCRIPT_ENV.get(rel, {}))),
                                  capture_output=True, text=True,
                                  timeout=timeout)
            bad = _SCRIPT_MISMATCH.search(proc.stdout or "")
            ok = proc.returncode == 0 and not bad
            err = "" if ok else (_first_error(proc.stderr or proc.stdout) if proc.returncode
                                 else f"the script's comparison failed: "
                                      f"{proc.stdout[max(0, bad.start() - 60):bad.end()]!r}")
        except subprocess.TimeoutExpired:
            ok, err = False, f"TimeoutError: exceeded {timeout} s"
        cases.append(Case(collection, path.stem, "__main__", True, ok, err, time.time() - t0))
    return cases


_IMPORT_CENSUS = r"""
import importlib, json, sys, traceback
from fastisa import shim
shim.install()
sys.path.insert(0, sys.argv[1])
res = {}
for name in sys.argv[2:]:
    try:
        importlib.import_module(name)
        res[name] = ""
    except BaseException as e:
        res[name] = (type(e).__name__ + ": " + str(e)).splitlines()[0][:200]
print("JSON" + json.dumps(res))
"""


def library_import_census(base: Path, timeout):
    src = base / "src"
    mods = []
    for p in sorted((src / "nkilib_src" / "nkilib").rglob("*.py")):
        rel = p.relative_to(src).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        mods.append(".".join(parts))
    proc = subprocess.run([sys.executable, "-c", _IMPORT_CENSUS, str(src), *mods], env=_env(),
                          capture_output=True, text=True, timeout=timeout, cwd=base)
    line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("JSON")), None)
    if line is None:
        return {m: _first_error(proc.stderr) for m in mods}
    return json.loads(line[4:])


def samples_source(base: Path, tmp: Path):
    """nki-samples' ``src`` for its unit tests: the checkout's, or -- the public repository
    removed ``nki_samples/reference`` (the kernels its unit tests import) in a commit of
    January 2026 and kept the tests -- a copy of the checkout's ``src/nki_samples`` with
    ``reference/`` as it was in the checkout's own git history just before its removal
    (read from the checkout with git, in a temporary directory; nothing is kept).
    Returns (path, note)."""
    src = base / "src"
    if (src / "nki_samples" / "reference").is_dir():
        return src, ""
    git = ["git", "-C", str(base)]
    try:
        gone = subprocess.run(git + ["log", "--diff-filter=D", "--format=%H", "-1", "--",
                                     "src/nki_samples/reference"], capture_output=True,
                              text=True, timeout=60).stdout.strip()
        if not gone:
            return src, ("nki_samples.reference is not in the checkout, nor in its git "
                         "history: the unit tests that import it cannot run")
        shutil.copytree(src / "nki_samples", tmp / "nki_samples")
        tar = subprocess.run(git + ["archive", f"{gone}^", "src/nki_samples/reference"],
                             capture_output=True, timeout=60).stdout
        with tarfile.open(fileobj=io.BytesIO(tar)) as tf:
            for m in tf.getmembers():
                if not m.name.startswith("src/nki_samples/reference"):
                    continue
                m.name = m.name[len("src/"):]
                tf.extract(m, tmp, filter="data")
        return tmp, (f"nki_samples.reference is absent from the checkout (removed upstream in "
                     f"{gone[:10]}); its unit tests run against it as of {gone[:10]}^ in the "
                     f"checkout's own git history")
    except (OSError, subprocess.SubprocessError, tarfile.TarError) as e:
        return src, f"nki_samples.reference: reading the checkout's history failed: {e}"


#: a test (class) nki-library runs only on trn3: ``platforms(exclude=[... TRN2 ...])``
_TRN3_ONLY = re.compile(r"platforms\(\s*exclude\s*=\s*\[[^\]]*TRN2")


def run_collection(name, base: Path, full: bool, timeout: int, verbose: bool):
    if name == "sdk-test":
        files = sorted((base / "nki" / "test").glob("test_*.py"))
        return run_pytest(name, files, base / "nki" / "test", [], timeout)
    if name == "sdk-examples":
        return run_scripts(name, base / "nki" / "examples", SDK_EXAMPLE_SCRIPTS, timeout)
    if name == "samples-tutorials":
        return run_scripts(name, base / "src" / "nki_samples" / "tutorials",
                           SAMPLES_TUTORIAL_SCRIPTS, timeout)
    if name == "samples-unit":
        with tempfile.TemporaryDirectory() as tmp:
            src, note = samples_source(base, Path(tmp))
            if note:
                print(f"samples-unit: {note}")
            env = {"PYTHONPATH": os.pathsep.join([str(ROOT), str(src), str(base)])}
            if not full:
                env["FASTISA_NKI_SMALL_ONLY"] = "1"
            cases = run_pytest(name, [base / "test" / "unit"], base, ["--simulation-only"],
                               timeout, extra_env=env)
        if src == base / "src":
            for c in cases:
                if "nki_samples.reference" in c.error:
                    c.error = ("nki_samples.reference is absent from the checkout and from its "
                               "git history: " + c.error)
        return cases
    if name == "library":
        env = {"NKILIB_SIMULATION_RUN_ALL": "1"} if full else {"FASTISA_NKI_SMALL_ONLY": "1"}
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(base / "src"), str(base)])
        # one run per kernel directory, so a slow one cannot hide the others' results
        cases = []
        root = base / "test" / "integration" / "nkilib"
        dirs = sorted({p.parent for p in root.rglob("test_*.py")})
        if DIRS[0]:
            want = [w.strip().strip("/") for w in DIRS[0].split(",") if w.strip()]
            dirs = [d for d in dirs
                    if any(str(d.relative_to(root)).startswith(w) for w in want)]
        t_start = time.time()

        def one(d):
            if BUDGET[0] and time.time() - t_start > BUDGET[0]:
                return [Case(name, str(d.relative_to(root)), "(not run)", False, False,
                             f"--budget of {BUDGET[0]} s used up before this directory")]
            t0 = time.time()
            common = ["--test-mode=simulation", "-p", "tests.conformance._nki_library_stubs",
                      "-p", "no:benchmark"]
            got = run_pytest(name, [d], base, common, timeout, extra_env=env)
            # tests marked @pytest.mark.platforms(exclude=[TRN1, TRN2]) are deselected on the
            # harness's default trn2 target: with --trn3 run them on trn3 (the official simulator's
            # target variable, NEURON_PLATFORM_TARGET_OVERRIDE, selects fastisa's too)
            trn3 = [f for f in sorted(d.glob("test_*.py")) if _TRN3_ONLY.search(f.read_text())] \
                if TRN3[0] else []
            if trn3:
                got += run_pytest(name, trn3, base,
                                  common + ["--platform-target", "trn3", "-m", "not trn2"],
                                  timeout, extra_env={**env,
                                                      "NEURON_PLATFORM_TARGET_OVERRIDE": "trn3"})
            if verbose:
                print(f"library: {d.relative_to(root)}: {sum(c.matched for c in got)} of "
                      f"{sum(not c.skipped for c in got)} matched, "
                      f"{time.time() - t0:.0f} s", flush=True)
            return got

        from concurrent.futures import ThreadPoolExecutor
        with ThreadPoolExecutor(JOBS[0]) as pool:
            for got in pool.map(one, dirs):
                cases += got
        census = library_import_census(base, timeout)
        bad = {m: e for m, e in census.items() if e}
        print(f"library: {len(census) - len(bad)} of {len(census)} nkilib modules import "
              f"unchanged through fastisa.shim")
        if verbose:
            for m, e in sorted(bad.items()):
                print(f"  import {m}: {e}")
        return cases
    raise ValueError(name)


def _fmt_table(cases):
    rows = [("kernel", "case", "ran", "matched", "first error", "seconds")]
    for c in cases:
        rows.append((c.kernel[:36], c.case[:48], "skip" if c.skipped else ("yes" if c.ran else "no"),
                     "yes" if c.matched else "no", c.error[:110], f"{c.seconds:.2f}"))
    w = [max(len(r[i]) for r in rows) for i in range(5)]
    out = []
    for r in rows:
        out.append("  ".join(r[i].ljust(w[i]) for i in range(5)) + "  " + r[5].rjust(7))
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--full", action="store_true",
                    help="every test shape, including the large ones the harnesses skip")
    ap.add_argument("--only", default="", help="comma-separated collection names: "
                    + ", ".join(COLLECTIONS))
    ap.add_argument("--timeout", type=int, default=1800,
                    help="seconds per pytest run (one per collection; one per kernel directory "
                         "for nki-library)")
    ap.add_argument("--case-timeout", type=int, default=120,
                    help="seconds per test case (0: no limit); a case still running then fails "
                         "with a TimeoutError and the run goes on")
    ap.add_argument("--max-cases", type=int, default=0,
                    help="run at most this many of each test module's runnable cases, evenly "
                         "spaced (0: all); the others are reported as skipped (not sampled)")
    ap.add_argument("--jobs", type=int, default=1,
                    help="nki-library kernel directories run at the same time")
    ap.add_argument("--budget", type=int, default=0,
                    help="seconds for the nki-library directories overall (0: no limit); the "
                         "directories left are listed as not run")
    ap.add_argument("--dirs", default="",
                    help="nki-library: only the kernel directories under test/integration/nkilib "
                         "whose path starts with one of these (comma-separated, e.g. "
                         "core/attention,experimental)")
    ap.add_argument("--trn3", action="store_true",
                    help="nki-library: also run the tests it marks trn3-only "
                         "(platforms(exclude=[TRN1, TRN2]); deselected on its default trn2 "
                         "target) on trn3, in a second pass per directory")
    ap.add_argument("--shard", default="",
                    help="K/N: run only every N-th runnable case of each test module, from the "
                         "K-th (0-based); N runs, K = 0 .. N-1, together run each case once. "
                         "The others are reported as skipped (not in this shard)")
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("--json", default="", help="also write the cases to this JSON file")
    a = ap.parse_args(argv)
    BUDGET[0] = a.budget
    CASE_TIMEOUT[0] = a.case_timeout
    MAX_CASES[0] = a.max_cases
    JOBS[0] = max(1, a.jobs)
    DIRS[0] = a.dirs
    TRN3[0] = a.trn3
    from tests.conformance._nki_cases import shard_spec
    try:
        shard_spec(a.shard)
    except ValueError as e:
        ap.error(str(e))
    SHARD[0] = a.shard
    names = [n for n in (a.only.split(",") if a.only else COLLECTIONS) if n]
    all_cases = []
    summary = []
    for name in names:
        var, rel = COLLECTIONS[name]
        base = os.environ.get(var)
        if not base or not (Path(base) / rel).is_dir():
            print(f"{name}: skipped ({var} is not set to a checkout with {rel}/)")
            continue
        t0 = time.time()
        cases = run_collection(name, Path(base), a.full, a.timeout, a.verbose)
        all_cases.extend(cases)
        p = sum(c.matched for c in cases)
        s = sum(c.skipped for c in cases)
        big = sum(c.skipped and c.error.startswith("large shape") for c in cases)
        smp = sum(c.skipped and c.error.startswith(("not sampled", "not in this shard"))
                  for c in cases)
        summary.append(f"{name}: {p} of {len(cases) - s} cases matched ({s - big - smp} "
                       f"skipped by the collection's harness, {big} large shapes and {smp} "
                       f"not sampled skipped by this harness), {time.time() - t0:.0f} s")
    if all_cases:
        print(_fmt_table(all_cases))
        print()
    for ln in summary:
        print(ln)
    if a.json:
        Path(a.json).write_text(json.dumps([{k: getattr(c, k) for k in Case.__slots__}
                                            for c in all_cases], indent=1))
    npass = sum(c.matched for c in all_cases)
    nskip = sum(c.skipped for c in all_cases)
    nfail = len(all_cases) - npass - nskip
    print(f"{npass} passed, {nfail} failed" + (f", {nskip} skipped" if nskip else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
