"""Extension table and build modes only; metadata lives in pyproject.toml.

Build modes (environment variables):
  FASTISA_DEBUG=1      -O0 -g with assertions (NDEBUG unset)
  FASTISA_SANITIZE=1   with FASTISA_DEBUG=1: -fsanitize=address,undefined
  FASTISA_ARCH=native  adds -march=<value> (never on by default: wheels stay portable)
  FASTISA_OPENMP=0     build without OpenMP even when the compiler supports it
Default: -O3 -ffp-contract=off, never -ffast-math (it changes bits).
"""
import glob
import os
import shutil
import subprocess
import sys
import tempfile

from setuptools import Extension, setup

HERE = os.path.dirname(os.path.abspath(__file__))
CSRC = os.path.join("csrc", "fastisa")
KERNELS = os.path.join("src", "fastisa", "_kernels")


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


def extensions():
    import numpy
    from Cython.Build import cythonize

    cflags, ldflags, macros, debug = _flags()
    headers = sorted(glob.glob(os.path.join(CSRC, "*.h")))
    pxds = sorted(glob.glob(os.path.join(KERNELS, "*.pxd")))
    exts = []
    for pyx in sorted(glob.glob(os.path.join(KERNELS, "*.pyx"))):
        name = "fastisa._kernels." + os.path.splitext(os.path.basename(pyx))[0]
        exts.append(Extension(
            name, [pyx],
            include_dirs=[CSRC, numpy.get_include()],
            depends=headers + pxds,
            extra_compile_args=cflags,
            extra_link_args=ldflags,
            define_macros=macros,
        ))
    directives = {
        "language_level": 3,
        "boundscheck": debug,
        "wraparound": False,
        "initializedcheck": debug,
        "cdivision": True,
        "embedsignature": True,
    }
    return cythonize(exts, compiler_directives=directives, include_path=[KERNELS], quiet=True,
                     nthreads=_jobs())


def _jobs():
    """Parallel build jobs: FASTISA_BUILD_JOBS, else every CPU (kernels compile independently)."""
    return int(os.environ.get("FASTISA_BUILD_JOBS", 0)) or (os.cpu_count() or 1)


setup(ext_modules=extensions(), options={"build_ext": {"parallel": _jobs()}})
