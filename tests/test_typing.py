"""mypy over a user kernel: the vendor import names type-check (stub-only packages
nki-stubs, tbe-stubs, te-stubs) and wrong or missing arguments are reported."""

import os
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("mypy")

KERNEL = textwrap.dedent("""\
    import numpy as np
    import nki
    import nki.isa as nisa
    import nki.language as nl
    from tbe import tik
    from te import tik as te_tik


    @nki.jit
    def double(a: nki.NkiTensor) -> nki.NkiTensor:
        t = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a)
        nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=2.0)
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=t)
        return out


    y = nki.simulate(double)(np.ones((128, 512), np.float32))
    t = tik.Tik()
    x_gm = t.Tensor("float16", (128,), name="x", scope=tik.scope_gm)
    te_tik.set_target("Ascend910B")
    {errors}
""")

ERRORS = textwrap.dedent("""\
    nisa.dma_copy(dst=y)
    nl.program_id("0")
    te_tik.set_target(910)
    t.data_move(x_gm, x_gm)
""")


@pytest.fixture(scope="module")
def mypy_cache(tmp_path_factory):
    return tmp_path_factory.mktemp("mypy_cache")   # shared: the second run is warm


def _mypy(tmp_path, source, cache):
    f = tmp_path / "kernel.py"
    f.write_text(source)
    env = dict(os.environ, MYPY_FORCE_COLOR="0")
    r = subprocess.run([sys.executable, "-m", "mypy", "--no-error-summary", "--cache-dir",
                        str(cache), "--python-version",
                        "%d.%d" % sys.version_info[:2], str(f)],
                       capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)
    return r.returncode, [ln.split(":", 2)[-1].strip() for ln in r.stdout.splitlines()
                          if ": error:" in ln]


def test_vendor_imports_type_check_and_errors_are_reported(tmp_path, mypy_cache):
    src = KERNEL.format(errors="\n".join(ERRORS.splitlines()))
    rc, errors = _mypy(tmp_path, src, mypy_cache)
    assert rc == 1, errors
    text = "\n".join(errors)
    assert 'Missing positional argument "src" in call to "dma_copy"' in text
    assert 'Argument 1 to "program_id" has incompatible type "str"; expected "int"' in text
    assert 'Argument 1 to "set_target" has incompatible type "int"; expected "str' in text
    assert 'Missing positional arguments "sid", "nburst"' in text
    assert "import-not-found" not in text and "attr-defined" not in text, text
    assert len(errors) == 4, text


def test_correct_kernel_has_no_errors(tmp_path, mypy_cache):
    rc, errors = _mypy(tmp_path, KERNEL.format(errors=""), mypy_cache)
    assert (rc, errors) == (0, [])
