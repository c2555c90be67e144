"""Golden values from pto-isa's CPU simulator for the test directories whose C++ test checks
values it computes itself (no golden.bin): our own C++ programs (``ptoisa_cpp/*.cpp``, plus a
``main`` generated here from the case table) include the checkout's CPU-simulator headers
(``include/pto/...``, read in place), run the same instruction on inputs the harness writes,
and write the tiles' storage; the harness compares fastisa's storage with it bit for bit and
under pto-isa's ResultCmp rule.

Needs ``g++`` (C++20).  Binaries are cached by a hash of the program text, the compiler and
the checkout's headers in ``$FASTISA_PTOISA_CACHE`` (default: ``<tmp>/fastisa-ptoisa-cpp``),
never in the repository.  One translation unit is compiled at a time.  The checkout's
``include/pto/cpu/TReduceIdx.hpp`` uses ``static_assert(false, ...)`` in a template that is
never instantiated, which only C++23 compilers accept (P2593, GCC >= 13); for g++ 12 the
harness writes a patched copy of any such header into the cache (``sizeof(T) == 0`` in place
of ``false``: the pre-C++23 spelling of the same rule) and puts it first on the include path.
Nothing of pto-isa is copied into the repository.
"""

from __future__ import annotations

import hashlib
import os
import resource
import shutil
import subprocess
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "ptoisa_cpp")
FLAGS = ["-std=c++20", "-O0", "-D__CPU_SIM", "-w"]   # -O0: a quarter less compile time; the runs are tiny

#: numpy dtype name -> the simulator's C++ element type
CTYPE = {"float32": "float", "float16": "half", "int32": "int32_t", "uint32": "uint32_t",
         "int16": "int16_t", "uint16": "uint16_t", "int8": "int8_t", "uint8": "uint8_t",
         "float4_e2m1x2": "float4_e2m1x2_t", "float4_e1m2x2": "float4_e1m2x2_t"}


class Unavailable(Exception):
    """No C++ compiler, or the checkout's headers do not compile: the directory is skipped."""


def cache_dir() -> str:
    d = os.environ.get("FASTISA_PTOISA_CACHE") or os.path.join(tempfile.gettempdir(),
                                                               "fastisa-ptoisa-cpp")
    os.makedirs(d, exist_ok=True)
    return d


def _compiler():
    cxx = os.environ.get("CXX") or shutil.which("g++") or shutil.which("clang++")
    if not cxx:
        raise Unavailable("no C++ compiler (g++ or clang++) on PATH")
    return cxx


_HDR_HASH: dict = {}


def _headers_hash(root: str) -> str:
    """A hash of the checkout's include tree (paths, sizes, mtimes): a changed checkout
    rebuilds."""
    if root in _HDR_HASH:
        return _HDR_HASH[root]
    h = hashlib.sha256()
    inc = os.path.join(root, "include")
    for dp, _dn, fn in sorted(os.walk(inc)):
        for f in sorted(fn):
            st = os.stat(os.path.join(dp, f))
            h.update(f"{os.path.relpath(os.path.join(dp, f), inc)}:{st.st_size}:{st.st_mtime_ns}"
                     .encode())
    _HDR_HASH[root] = h.hexdigest()[:16]
    return _HDR_HASH[root]


def _overlay(root: str, key: str) -> str:
    """The include overlay for g++ < 13 (module doc)."""
    ov = os.path.join(cache_dir(), f"overlay-{key}")
    if os.path.isdir(ov):
        return ov
    tmp = ov + f".tmp{os.getpid()}"
    inc = os.path.join(root, "include")
    for dp, _dn, fn in os.walk(inc):
        for f in fn:
            if not f.endswith((".hpp", ".h")):
                continue
            p = os.path.join(dp, f)
            text = open(p, encoding="utf-8", errors="surrogateescape").read()
            if "static_assert(false" not in text:
                continue
            out = os.path.join(tmp, os.path.relpath(p, inc))
            os.makedirs(os.path.dirname(out), exist_ok=True)
            with open(out, "w", encoding="utf-8", errors="surrogateescape") as fh:
                fh.write(text.replace("static_assert(false", "static_assert(sizeof(DType) == 0"))
    os.makedirs(tmp, exist_ok=True)
    try:
        os.rename(tmp, ov)
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)
    return ov


#: CPU seconds (user + system) of the last build's compiler process (0.0 when cached)
LAST_CPU = [0.0]


def build(root: str, name: str, main: str) -> tuple[str, float]:
    """Compiles ``ptoisa_cpp/<name>.cpp`` followed by ``main`` against the checkout; returns
    (binary path, wall seconds spent compiling: 0.0 when cached; the CPU seconds are in
    ``LAST_CPU[0]``)."""
    LAST_CPU[0] = 0.0
    cxx = _compiler()
    body = open(os.path.join(SRC, name + ".cpp"), encoding="utf-8").read()
    fio = open(os.path.join(SRC, "fio.h"), encoding="utf-8").read()
    text = body + "\n" + main
    ver = subprocess.run([cxx, "--version"], capture_output=True, text=True).stdout
    hkey = _headers_hash(root)
    key = hashlib.sha256("\0".join([text, fio, ver, " ".join(FLAGS), hkey]).encode()) \
        .hexdigest()[:20]
    exe = os.path.join(cache_dir(), f"{name}-{key}")
    if os.path.exists(exe):
        return exe, 0.0
    src = os.path.join(cache_dir(), f"{name}-{key}.cpp")
    with open(src, "w", encoding="utf-8") as fh:
        fh.write(text)
    cmd = [cxx, *FLAGS, "-I", _overlay(root, hkey), "-I", os.path.join(root, "include"),
           "-I", SRC, src, "-o", exe + ".tmp"]
    t0 = time.time()
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = subprocess.run(cmd, capture_output=True, text=True)
    dt = time.time() - t0
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    LAST_CPU[0] = (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)
    if r.returncode != 0:
        err = [ln for ln in r.stderr.splitlines() if "error" in ln][:3]
        raise Unavailable(f"{name}: the C++ golden program does not compile: {' | '.join(err)}"
                          [:300])
    os.replace(exe + ".tmp", exe)
    return exe, dt


def run(exe: str, inputs: dict[str, np.ndarray], outputs: dict[str, np.dtype]) -> dict:
    """Runs ``exe`` in a fresh directory holding ``inputs`` (name -> array, written raw);
    returns the named output files as flat arrays of the given dtypes."""
    with tempfile.TemporaryDirectory(prefix="ptoisa_cpp_") as d:
        for n, a in inputs.items():
            np.ascontiguousarray(a).tofile(os.path.join(d, n))
        r = subprocess.run([exe], cwd=d, capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            raise RuntimeError(f"{os.path.basename(exe)} exited {r.returncode}: "
                               f"{(r.stderr or r.stdout)[-300:]}")
        return {n: np.fromfile(os.path.join(d, n), dtype=dt) for n, dt in outputs.items()}


def tile_t(dtype, rows, cols, vr=None, vc=None, loc="Vec", bl="RowMajor", sl=None) -> str:
    """The simulator's ``Tile<...>`` type spelling."""
    vr = rows if vr is None else vr
    vc = cols if vc is None else vc
    name = dtype if dtype in CTYPE else np.dtype(dtype).name
    s = (f"Tile<TileType::{loc}, {CTYPE[name]}, {rows}, {cols}, "
         f"BLayout::{bl}, {vr}, {vc}")
    if sl:
        s += f", SLayout::{sl}"
    return s + ">"


def main_of(lines: list[str]) -> str:
    return "int main()\n{\n" + "".join(f"    {ln};\n" for ln in lines) + "    return 0;\n}\n"
