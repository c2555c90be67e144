"""Extension table and build modes only; metadata lives in pyproject.toml.

Build modes (environment variables):
  FASTISA_DEBUG=1      -O0 -g with assertions (NDEBUG unset)
  FASTISA_SANITIZE=1   with FASTISA_DEBUG=1: -fsanitize=address,undefined
  FASTISA_ARCH=native  adds -march=<value> (never on by default: wheels stay portable)
  FASTISA_OPENMP=0     build without OpenMP even when the compiler supports it
  FASTISA_BUILD_JOBS=N parallel compile jobs (default: every CPU)
  FASTISA_NO_CACHE=1   ignore the build cache below and compile everything
  FASTISA_LTO=0        no link-time split of the heaviest unit (see below)
Default: -O3 -ffp-contract=off, never -ffast-math (it changes bits).

Every ``src/fastisa/_kernels/*.pyx`` is one extension; nothing else needs listing.

How the build stays fast (README "Build"):
* The Cython memoryview runtime, which is most of every generated C file, is compiled
  once, into ``fastisa._kernels._cyutility`` (Cython's shared utility module, Cython >=
  3.1), instead of once per kernel.
* Units compile in parallel, the heaviest first (``_COST_HINT``, then the times the last
  build recorded), so the longest one is not left for the end.
* The heaviest unit (the TIK walker: one large switch compiled twice, for AVX2 and the
  baseline) is compiled with GCC's link-time optimiser split into partitions
  (``-flto=N -flto-partition=max``), so its two clones are optimised on two cores.  Same
  flags, same code: ``-ffp-contract=off`` and ``-O3`` apply per function.
* A content-addressed cache in ``build/fastisa-cache/``: a unit is recompiled only when its
  C source, a header it includes (recursively), the compiler, the flags or the numpy /
  Python / Cython versions changed.  The README's second ``pip install`` (and every
  ``pip install -e .`` or ``build_ext --inplace``) reuses what the first one compiled,
  whatever the file times say: pip builds each time in a fresh isolated environment,
  whose freshly installed Cython and numpy ``.pxd`` files are newer than everything, so
  time-based checks would rebuild it all.
Progress (one line per unit) goes to stderr, and to the terminal when pip hides stderr.
"""
import glob
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from setuptools import Extension, find_packages, setup
from setuptools.command.build_ext import build_ext as _build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
CSRC = os.path.join("csrc", "fastisa")
KERNELS = os.path.join("src", "fastisa", "_kernels")
SHARED = "fastisa._kernels._cyutility"      # Cython's shared utility module
CACHE = os.path.join(HERE, "build", "fastisa-cache")

# Compile seconds of the heaviest units (user CPU, measured on the 2-core build machine),
# used to start the heaviest first when no build has recorded times yet.  A unit not
# listed counts as small.
_COST_HINT = {"walker": 28.0, "convert": 4.0, "tile": 3.5, "nki": 3.0, "_cyutility": 2.7}

_HEAVY = 10.0   # seconds: units at least this costly get the partitioned LTO build

_DIRECTIVES = {
    "language_level": "3",
    "wraparound": "False",
    "cdivision": "True",
    "embedsignature": "True",
}


def _has_openmp():
    if os.environ.get("FASTISA_OPENMP", "1") == "0" or sys.platform == "win32":
        return False
    cc = os.environ.get("CC", "cc")
    if shutil.which(cc) is None:
        return False
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "t.c")
        with open(src, "w") as f:
            f.write("#include <omp.h>\nint main(void){return omp_get_max_threads() < 1;}\n")
        try:
            r = subprocess.run([cc, "-fopenmp", src, "-o", os.path.join(tmp, "t")],
                               capture_output=True)
        except OSError:
            return False
        return r.returncode == 0


def _flags():
    debug = os.environ.get("FASTISA_DEBUG") == "1"
    cflags = ["-ffp-contract=off", "-fno-strict-aliasing", "-std=gnu11"]
    ldflags = []
    macros = [("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")]
    if debug:
        cflags += ["-O0", "-g", "-UNDEBUG"]
        macros.append(("FASTISA_DEBUG", "1"))
        if os.environ.get("FASTISA_SANITIZE") == "1":
            cflags += ["-fsanitize=address,undefined", "-fno-omit-frame-pointer"]
            ldflags += ["-fsanitize=address,undefined"]
    else:
        cflags += ["-O3", "-DNDEBUG"]
    if sys.platform != "win32":  # topk and tile kernels start POSIX threads
        cflags.append("-pthread")
        ldflags.append("-pthread")
    arch = os.environ.get("FASTISA_ARCH")
    if arch:
        cflags.append("-march=" + arch)
    if _has_openmp():
        cflags.append("-fopenmp")
        ldflags.append("-fopenmp")
        macros.append(("FASTISA_OPENMP", "1"))
    return cflags, ldflags, macros, debug


def _jobs():
    """Parallel build jobs: FASTISA_BUILD_JOBS, else every CPU (kernels compile independently)."""
    return int(os.environ.get("FASTISA_BUILD_JOBS", 0)) or (os.cpu_count() or 1)


def _sha(*parts):
    h = hashlib.sha256()
    for p in parts:
        h.update(p if isinstance(p, bytes) else str(p).encode())
        h.update(b"\0")
    return h.hexdigest()[:24]


def _read(path):
    with open(path, "rb") as f:
        return f.read()


_INCLUDE = re.compile(rb'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"', re.M)


def _local_headers(path, dirs, seen=None):
    """The project headers ``path`` includes, recursively (``#include "x.h"`` found in
    one of ``dirs``); system and Python headers are covered by the compiler key."""
    seen = set() if seen is None else seen
    for name in _INCLUDE.findall(_read(path)):
        name = name.decode()
        for d in [os.path.dirname(path)] + list(dirs):
            cand = os.path.normpath(os.path.join(d, name))
            if os.path.isfile(cand) and os.path.abspath(cand).startswith(HERE + os.sep):
                if cand not in seen:
                    seen.add(cand)
                    _local_headers(cand, dirs, seen)
                break
    return seen


class _Progress:
    """One line per finished unit, to stderr and (when pip captures stderr) the terminal."""

    def __init__(self, total):
        self.total, self.done, self.lock = total, 0, threading.Lock()
        self.t0 = time.monotonic()
        self.tty = None
        if os.environ.get("FASTISA_BUILD_PROGRESS", "1") != "0" and not sys.stderr.isatty():
            try:
                self.tty = open("/dev/tty", "w")
            except OSError:
                self.tty = None

    def say(self, msg, count=False):
        with self.lock:
            if count:
                self.done += 1
            line = "fastisa build [%d/%d, %.0fs] %s" % (self.done, self.total,
                                                      time.monotonic() - self.t0, msg)
            print(line, file=sys.stderr, flush=True)
            if self.tty is not None:
                try:
                    self.tty.write("\r\033[K" + line + "\n")
                    self.tty.flush()
                except OSError:
                    self.tty = None


class build_ext(_build_ext):
    """build_ext with Cython run on demand, a content-addressed cache and
    heaviest-first parallel compilation (see the module docstring)."""

    def run(self):
        self._use_cache = os.environ.get("FASTISA_NO_CACHE") != "1"
        os.makedirs(CACHE, exist_ok=True)
        self._times_path = os.path.join(CACHE, "times.json")
        try:
            self._times = json.loads(_read(self._times_path))
        except (OSError, ValueError):
            self._times = {}
        self._progress = _Progress(len(self.extensions))
        super().run()
        with open(self._times_path, "w") as f:
            json.dump(self._times, f, indent=1, sort_keys=True)

    # -- Cython: .pyx -> .c, skipped when nothing Cython reads changed -------------------
    def _cython_cmd(self):
        cmd = [sys.executable, "-m", "cython", "-I", KERNELS]
        debug = os.environ.get("FASTISA_DEBUG") == "1"
        directives = dict(_DIRECTIVES, boundscheck=str(debug), initializedcheck=str(debug))
        for k, v in sorted(directives.items()):
            cmd += ["-X", "%s=%s" % (k, v)]
        return cmd

    def _cythonize(self, ext):
        """Turn ext's .pyx source into .c (or generate the shared utility module's .c),
        unless a stamp says nothing Cython reads has changed.  Returns a note."""
        import Cython

        base = self._cython_cmd()
        pyx = [s for s in ext.sources if s.endswith(".pyx")]
        if ext.name == SHARED:
            c = os.path.join(KERNELS, "_cyutility.c")
            cmd = [sys.executable, "-m", "cython", "--generate-shared=" + c]
            key = _sha(Cython.__version__, "shared")
        elif pyx:
            pxds = sorted(glob.glob(os.path.join(KERNELS, "*.pxd")) +
                          glob.glob(os.path.join(KERNELS, "*.pxi")))
            c = pyx[0][:-4] + ".c"
            cmd = base + ["--shared=" + SHARED, pyx[0], "-o", c]
            key = _sha(Cython.__version__, " ".join(base), pyx[0], _read(pyx[0]),
                       *[x for p in pxds for x in (p, _read(p))])
        else:
            return ""
        ext.sources = [c if s.endswith(".pyx") else s for s in ext.sources]
        stamp = os.path.join(CACHE, os.path.basename(c) + ".stamp")
        if (self._use_cache and os.path.exists(c) and os.path.exists(stamp)
                and _read(stamp).decode() == key):
            return ""
        t = time.monotonic()
        r = subprocess.run(cmd, cwd=HERE, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError("cython failed for %s:\n%s%s" % (ext.name, r.stdout, r.stderr))
        with open(stamp, "w") as f:
            f.write(key)
        return "cython %.1fs, " % (time.monotonic() - t)

    # -- C: heaviest first, in parallel, through the cache ----------------------------------
    def _cost(self, ext):
        short = ext.name.rsplit(".", 1)[-1]
        return self._times.get(ext.name, _COST_HINT.get(short, 1.0))

    def _is_gcc(self):
        cc = self.compiler.compiler_so[0] if getattr(self.compiler, "compiler_so", None) else ""
        try:
            r = subprocess.run([cc, "--version"], capture_output=True, text=True)
        except OSError:
            return False
        return "Free Software Foundation" in r.stdout and "clang" not in r.stdout

    def build_extensions(self):
        self.check_extensions_list(self.extensions)
        lto = (os.environ.get("FASTISA_LTO", "1") != "0" and os.environ.get("FASTISA_DEBUG") != "1"
               and sys.platform.startswith("linux") and self._is_gcc())
        for ext in self.extensions:
            # decided by the fixed hint, never by recorded times: the flags are part of
            # the cache key, and the same sources must give the same key on every build
            if lto and _COST_HINT.get(ext.name.rsplit(".", 1)[-1], 0.0) >= _HEAVY:
                ext.extra_compile_args = ext.extra_compile_args + ["-flto"]
                ext.extra_link_args = ext.extra_link_args + ext.extra_compile_args + [
                    "-flto=%d" % max(2, _jobs()), "-flto-partition=max"]
        self.force = True          # staleness is decided by content, in _build_one
        exts = sorted(self.extensions, key=self._cost, reverse=True)
        with ThreadPoolExecutor(max_workers=_jobs()) as pool:
            list(pool.map(self._build_one, exts))

    def _key(self, ext):
        import numpy

        parts = [sys.version, sys.platform, numpy.__version__,
                 " ".join(self.compiler.compiler_so), " ".join(self.compiler.linker_so),
                 repr(ext.extra_compile_args), repr(ext.extra_link_args),
                 repr(ext.define_macros), repr(ext.undef_macros), repr(ext.libraries)]
        for src in ext.sources:
            parts += [src, _read(src)]
            for h in sorted(_local_headers(src, ext.include_dirs)):
                parts += [h, _read(h)]
        return _sha(*parts)

    def _build_one(self, ext):
        note = self._cythonize(ext)
        out = self.get_ext_fullpath(ext.name)
        key = self._key(ext)
        short = ext.name.rsplit(".", 1)[-1]
        cached = os.path.join(CACHE, "%s-%s%s" % (ext.name, key, os.path.splitext(out)[1]))
        if self._use_cache and os.path.exists(cached):
            os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
            shutil.copy2(cached, out)
            self._progress.say("%s: %sreused (unchanged)" % (short, note), count=True)
            return
        t = time.monotonic()
        self.build_extension(ext)
        dt = time.monotonic() - t
        self._times[ext.name] = round(dt, 1)
        for old in glob.glob(os.path.join(CACHE, ext.name + "-*")):
            os.remove(old)
        tmp = cached + ".tmp%d" % threading.get_ident()
        shutil.copy2(out, tmp)
        os.replace(tmp, cached)
        self._progress.say("%s: %scompiled in %.1fs" % (short, note, dt), count=True)


def extensions():
    import numpy

    cflags, ldflags, macros, _ = _flags()
    exts = []
    pyxs = sorted(glob.glob(os.path.join(KERNELS, "*.pyx")))
    for name, srcs in [(SHARED, [])] + [
            ("fastisa._kernels." + os.path.splitext(os.path.basename(p))[0], [p]) for p in pyxs]:
        exts.append(Extension(
            name, srcs or [os.path.join(KERNELS, "_cyutility.c")],
            include_dirs=[CSRC, numpy.get_include()],
            extra_compile_args=cflags,
            extra_link_args=ldflags,
            define_macros=macros,
        ))
    return exts


# fastisa's packages, plus the PEP 561 stub-only packages that make `import nki`,
# `import nki.isa`, `from tbe import tik`, `from te import tik` type-check (src/*-stubs/).
STUBS = ["nki-stubs", "nki-stubs.isa", "nki-stubs.language", "tbe-stubs", "te-stubs"]

setup(ext_modules=extensions(), cmdclass={"build_ext": build_ext},
      packages=find_packages("src") + STUBS)
