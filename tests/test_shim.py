"""The vendor import shim and `fastisa run` on kernel files written for the real toolchains."""

import sys
import textwrap

import numpy as np
import pytest

from fastisa import cli, shim

NKI_KERNEL = textwrap.dedent('''
    import numpy as np
    import nki
    import nki.isa as nisa
    import nki.language as nl

    @nki.jit
    def scale_kernel(a):
        t = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a)
        r = nl.ndarray(a.shape, dtype=nl.bfloat16, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=r, data=t, op0=nl.multiply, operand0=3.0)
        out = nl.ndarray(a.shape, dtype=nl.bfloat16, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=r)
        return out

    if __name__ == "__main__":
        a = np.arange(128 * 4, dtype=np.float32).reshape(128, 4) / 7
        out = nki.simulate(scale_kernel)(a)
        import ml_dtypes
        want = (a * np.float32(3)).astype(ml_dtypes.bfloat16)
        assert out.dtype == ml_dtypes.bfloat16, out.dtype
        assert (out.view(np.uint16) == want.view(np.uint16)).all()
        print("NKI OK", scale_kernel.profile.totals())
''')

TIK_KERNEL = textwrap.dedent('''
    import numpy as np
    from {pkg} import tik

    tik_instance = tik.Tik()
    src_gm = tik_instance.Tensor("float16", (256,), name="src_gm", scope=tik.scope_gm)
    dst_gm = tik_instance.Tensor("float16", (256,), name="dst_gm", scope=tik.scope_gm)
    src_ub = tik_instance.Tensor("float16", (256,), name="src_ub", scope=tik.scope_ubuf)
    dst_ub = tik_instance.Tensor("float16", (256,), name="dst_ub", scope=tik.scope_ubuf)
    tik_instance.data_move(src_ub, src_gm, 0, 1, 16, 0, 0)
    tik_instance.vec_muls(128, dst_ub, src_ub, 0.5, 2, 8, 8)
    tik_instance.data_move(dst_gm, dst_ub, 0, 1, 16, 0, 0)
    tik_instance.BuildCCE(kernel_name="half", inputs=[src_gm], outputs=[dst_gm])

    x = np.arange(256, dtype=np.float16)
    out, = tik_instance.tikdb.start_debug(feed_dict={{"src_gm": x}}, interactive=False)
    assert (out == x * np.float16(0.5)).all()
    print("TIK OK")
''')


@pytest.fixture(autouse=True)
def _no_leftover_shim():
    shim.uninstall()
    yield
    shim.uninstall()


def test_install_uninstall_aliases():
    assert "nki" not in sys.modules
    shim.install()
    import nki
    import nki.isa as nisa
    import nki.language as nl
    from tbe import tik as tik1
    from te import tik as tik2
    import fastisa.nki
    import fastisa.tik
    assert nki is fastisa.nki and nisa is fastisa.nki.isa and nl is fastisa.nki.language
    assert tik1 is fastisa.tik and tik2 is fastisa.tik
    shim.uninstall()
    assert "nki" not in sys.modules and "tbe" not in sys.modules
    with pytest.raises(ImportError):
        import nki  # noqa: F401,F811


def test_installed_context_restores():
    with shim.installed():
        import nki  # noqa: F401
        assert shim.is_installed()
    assert not shim.is_installed()
    assert "nki" not in sys.modules


def test_platform_alias():
    with shim.installed():
        from te import platform as tbe_platform
        import fastisa.tik.platform
        assert tbe_platform is fastisa.tik.platform


def test_fastisa_run_nki_kernel_file_unchanged(tmp_path, capsys):
    f = tmp_path / "my_nki_kernel.py"
    f.write_text(NKI_KERNEL)
    assert cli.main(["run", str(f)]) == 0
    assert "NKI OK" in capsys.readouterr().out


@pytest.mark.parametrize("pkg", ["tbe", "te"])
def test_fastisa_run_tik_kernel_file_unchanged(tmp_path, capsys, pkg):
    f = tmp_path / "my_tik_kernel.py"
    f.write_text(TIK_KERNEL.format(pkg=pkg))
    assert cli.main(["run", "--profile", str(f)]) == 0
    out = capsys.readouterr().out
    assert "TIK OK" in out
    assert "vec_muls" in out  # the --profile table lists the instruction


def test_fastisa_run_failing_kernel_reports_error(tmp_path):
    f = tmp_path / "bad.py"
    f.write_text("import nki\nraise SystemExit('kernel failed')\n")
    assert cli.main(["run", str(f)]) == 1
