"""mypy over user kernels: the vendor import names type-check (stub-only packages
nki-stubs, tbe-stubs, te-stubs), a correct kernel of each front-end is clean, and every
deliberate wrong argument type or missing argument is reported on its own line.

Each line of ERRORS that must be reported ends with ``# E: <mypy error code>``; the test
checks that mypy reports exactly those lines with those codes, nothing else.  The kernels
are unannotated functions, as users write them, so mypy runs with --check-untyped-defs
(the README's recommended setting)."""

import os
import re
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("mypy")

HEADER = """\
import numpy as np
import nki
import nki.isa as nisa
import nki.language as nl
from tbe import tik
from te import tik as te_tik
from fastisa import pto
"""

CLEAN = HEADER + textwrap.dedent("""\


    @nki.jit
    def nki_double(a):
        t = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a)
        nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=2.0)
        col = nl.ndarray((a.shape[0], 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.memset(dst=col, value=0.0)
        nisa.tensor_reduce(dst=col, op=nl.add, data=t, axis=1, keepdims=True)
        nisa.activation(dst=t, op=nl.exp, data=t, bias=col, scale=0.5)
        for i in nl.affine_range(2):
            nisa.tensor_tensor(dst=t, data1=t, data2=t, op=np.add)
        u = nl.load(a[:, nl.ds(0, 4)])
        nl.store(a[:, nl.ds(0, 4)], nl.exp(u))
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=t)
        return out


    def tik_kernel():
        t = tik.Tik()
        x_gm = t.Tensor("float16", (128,), name="x", scope=tik.scope_gm)
        y_gm = t.Tensor("float16", (128,), name="y", scope=tik.scope_gm)
        x = t.Tensor("float16", (128,), name="xu", scope=tik.scope_ubuf)
        n = t.Scalar("int32", init_value=1)
        t.data_move(x, x_gm, 0, 1, 8, 0, 0)
        t.vec_adds(128, x, x, 1.5, n, 8, 8)
        t.vec_add([0, 2**64 - 1], x, x, x, 1, 8, 8, 8)
        t.vec_exp(128, x, x, 1, 8, 8)
        t.vadds(64, x[64], x[64], n, 1, 1, 1, 8, 8)
        t.vec_dup(128, x, 0.0, 1, 8)
        with t.for_range(0, 2) as i:
            t.vec_muls(128, x, x, 2.0, 1, 8, 8)
        cm = t.vcmp_eq(128, x, x, 1, 1)                     # generated families are visible
        t.vsel(128, 0, x, cm, x, x, 1, 1, 1, 1)
        bits = t.Tensor("uint16", (16,), name="bits", scope=tik.scope_ubuf)
        t.vec_cmpv_lt(bits, x, x, 1, 8, 8)
        t.h_add(x, x, x)
        with t.if_scope(tik.all(n > 0, n < 4)):
            t.vec_relu(128, x, x, 1, 8, 8)
        t.data_move(y_gm, x, 0, 1, 8, 0, 0)
        t.BuildCCE("k", [x_gm], [y_gm])
        return t.tikdb.start_debug({"x": np.ones(128, np.float16)}, interactive=False)


    def pto_kernel():
        a = pto.Tile(pto.TileType.Vec, "float32", 16, 16)
        s = pto.Tile(pto.TileType.Vec, "float32", 16, 1, valid_col=1)
        gm = pto.GlobalTensor(np.ones((16, 16), np.float32))
        pto.TLOAD(a, gm)
        pto.TADD(a, a, a)
        pto.TADDS(a, a, 3)
        pto.TMULS(a, a, np.float32(0.5))
        pto.TROWSUM(s, a)
        pto.TROWEXPANDSUB(a, a, s)
        pto.TRECIP(a, a, precision=pto.RecipAlgorithm.HIGH_PRECISION)
        pto.TCVT(a, a, pto.RoundMode.CAST_RINT)
        pto.TSTORE(gm, a)


    y = nki.simulate(nki_double)(np.ones((128, 512), np.float32))
    te_tik.set_target("Ascend910B")
    with pto.target("A5"):
        pto_kernel()
""")

ERRORS = HEADER + textwrap.dedent("""\


    def nki_errors(a, t):
        nisa.dma_copy(dst=t)                                    # E: call-arg
        nisa.tensor_scalar(t, t, nl.add)                        # E: call-arg
        nisa.tensor_scalar(t, t, nl.add, "2.0")                 # E: arg-type
        nisa.tensor_tensor(dst=t, data1=t, data2=np.ones(4), op=nl.add)  # E: arg-type
        nisa.activation(dst=t, op="exp", data=t)                # E: arg-type
        nisa.memset(dst=t, value="0")                           # E: arg-type
        nisa.tensor_reduce(dst=t, op=nl.add, data=t, axis="1")  # E: arg-type
        nisa.iota(t, [[1, 8]], offset=0.5)                      # E: arg-type
        nl.ndarray((128, 2.5), dtype=nl.float32)                # E: arg-type
        nl.program_id("0")                                      # E: arg-type
        nl.ds(0, 1.5)                                           # E: arg-type
        nl.load(np.ones(4))                                     # E: arg-type


    def tik_errors():
        t = tik.Tik()
        x = t.Tensor("float16", (128,), name="x", scope=tik.scope_ubuf)
        t.vec_add(128, x, x, x, 1, 8, 8)                        # E: call-arg
        t.vec_add(128, x, x, 3.0, 1, 8, 8, 8)                   # E: arg-type
        t.vec_adds(128, x, x, "1", 1, 8, 8)                     # E: arg-type
        t.vec_adds(128, x, x, 1.0)                              # E: call-arg
        t.vec_exp(128, x, x, 1.5, 8, 8)                         # E: arg-type
        t.vec_dup("all", x, 0.0, 1, 8)                          # E: arg-type
        t.data_move(x, x)                                       # E: call-arg
        t.data_move(x, np.ones(4), 0, 1, 8, 0, 0)               # E: arg-type
        t.Tensor("float16", "128", name="y")                    # E: arg-type
        t.for_range(0, "8")                                     # E: arg-type
        te_tik.set_target(910)                                  # E: arg-type


    def pto_errors():
        a = pto.Tile(pto.TileType.Vec, "float32", 16, 16)
        pto.TADD(a, a)                                          # E: call-arg
        pto.TADD(a, a, 3)                                       # E: arg-type
        pto.TADDS(a, a, "3")                                    # E: arg-type
        pto.TEXP(a, np.ones((16, 16)))                          # E: arg-type
        pto.TROWSUM(a, a, tmp=1)                                # E: arg-type
        pto.TLOAD(a, np.ones((16, 16)))                         # E: arg-type
        pto.Tile(pto.TileType.Vec, "float32", 16.0, 16)         # E: arg-type
        pto.TCVT(a, a, mode=1.5)                                # E: arg-type
""")


def _mypy(tmp_path, name, source, cache):
    f = tmp_path / name
    f.write_text(source)
    env = dict(os.environ, MYPY_FORCE_COLOR="0")
    r = subprocess.run([sys.executable, "-m", "mypy", "--no-error-summary", "--cache-dir",
                        str(cache), "--check-untyped-defs", "--show-error-codes",
                        "--python-version", "%d.%d" % sys.version_info[:2], str(f)],
                       capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)
    errors = []
    for ln in r.stdout.splitlines():
        m = re.match(r".*?:(\d+): error: (.*)  \[([a-z-]+)\]$", ln)
        if m:
            errors.append((int(m.group(1)), m.group(3), m.group(2)))
    return r.returncode, errors, r.stdout


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    cache = tmp_path_factory.mktemp("mypy_cache")
    tmp = tmp_path_factory.mktemp("kernels")
    return {"errors": _mypy(tmp, "errors.py", ERRORS, cache),
            "clean": _mypy(tmp, "clean.py", CLEAN, cache)}


def _expected(function):
    """{line number: code} of the '# E:' lines in ERRORS' function ``function``."""
    out, inside = {}, False
    for i, ln in enumerate(ERRORS.splitlines(), 1):
        if ln.startswith("def "):
            inside = ln.startswith(f"def {function}(")
        m = re.search(r"# E: ([a-z-]+)$", ln)
        if inside and m:
            out[i] = m.group(1)
    return out


def _reported(results, function):
    exp = _expected(function)
    lo, hi = min(exp), max(exp)
    return exp, {ln: code for ln, code, _ in results["errors"][1] if lo <= ln <= hi}


@pytest.mark.parametrize("function", ["nki_errors", "tik_errors", "pto_errors"])
def test_wrong_types_and_missing_arguments_are_reported(results, function):
    exp, got = _reported(results, function)
    assert len(exp) >= 8
    missing = {ln: ERRORS.splitlines()[ln - 1].strip() for ln in exp if ln not in got}
    assert not missing, f"mypy did not report:\n{missing}\n{results['errors'][2]}"
    assert got == exp, results["errors"][2]


def test_no_error_outside_the_marked_lines(results):
    rc, errors, out = results["errors"]
    marked = {**_expected("nki_errors"), **_expected("tik_errors"), **_expected("pto_errors")}
    assert rc == 1
    assert [e for e in errors if e[0] not in marked] == [], out
    assert len(errors) == len(marked), out


def test_error_messages_name_the_parameter(results):
    text = results["errors"][2]
    assert 'Missing positional argument "src" in call to "dma_copy"' in text
    assert 'Argument 1 to "program_id" has incompatible type "str"; expected "int"' in text
    assert 'Argument 1 to "set_target" has incompatible type "int"; expected "str"' in text
    assert 'Missing positional arguments "sid", "nburst"' in text
    assert 'Argument 3 to "TADD" has incompatible type "int"; expected "Tile"' in text
    assert 'Argument 4 to "vec_adds" of' in text


def test_vendor_imports_resolve_and_correct_kernels_are_clean(results):
    rc, errors, out = results["clean"]
    assert "import-not-found" not in out and "attr-defined" not in out, out
    assert (rc, errors) == (0, []), out
