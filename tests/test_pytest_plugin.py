"""fastisa's pytest plugin, used the way a kernel project's test suite uses it.

The plugin is active wherever fastisa is installed (entry point ``pytest11``; see
``fastisa.pytest_plugin``).  A test asks for a fixture to get a target (or the vendor
import names) for that test only; a marker runs a test once per target.
"""

import numpy as np
import pytest

from fastisa import nki, pto, tik
from fastisa.testing import assert_bits_equal

pytest_plugins = ["pytester"]


def _vec_adds_program(scalar, dtype="float16"):
    t = tik.Tik()
    x = t.Tensor(dtype, (128,), name="x", scope=tik.scope_gm)
    y = t.Tensor(dtype, (128,), name="y", scope=tik.scope_gm)
    ub = t.Tensor(dtype, (128,), name="ub", scope=tik.scope_ubuf)
    t.data_move(ub, x, 0, 1, 128 * np.dtype(dtype).itemsize // 32, 0, 0)
    t.vec_adds(128 if dtype == "float16" else 64, ub, ub, scalar,
               1 if dtype == "float16" else 2, 8, 8)
    t.data_move(y, ub, 0, 1, 128 * np.dtype(dtype).itemsize // 32, 0, 0)
    t.BuildCCE(kernel_name="inc", inputs=[x], outputs=[y])
    return t


# --- the example: what a user writes -----------------------------------------------------

@pytest.mark.tik_targets("Ascend910", "Ascend910B")
def test_example_float16_overflow_per_target(tik_target):
    """float16 overflow saturates on Ascend910 (inf -> 65504) and is IEEE on 910B."""
    (y,) = _vec_adds_program(60000.0).tikdb.start_debug(
        feed_dict={"x": np.full(128, 65504, np.float16)}, interactive=False)
    expected = np.float16(65504) if tik_target.name == "Ascend910" else np.float16(np.inf)
    assert_bits_equal(y, np.full(128, expected, np.float16))


@pytest.mark.nki_targets("trn2", "trn3")
def test_example_nki_target_applies_to_simulate(nki_target):
    from fastisa.nki import language as nl

    @nki.jit
    def which(a):
        return a
    nki.simulate(which)(np.zeros((1, 1), np.float32))
    assert nl.target() == nki_target          # direct nl calls in the test see it too


def test_example_vendor_imports(fastisa_shim):
    import nki as vendor_nki
    from tbe import tik as vendor_tik
    assert vendor_nki.simulate is nki.simulate and vendor_tik.Tik is tik.Tik


# --- what the plugin guarantees -----------------------------------------------------------

def test_fixtures_restore_the_previous_target():
    before = tik.get_target().name, pto.get_target()
    with tik.target("Ascend310P"), pto.target("A5"):
        assert tik.get_target().name == "Ascend310P" and pto.get_target() == "A5"
    assert (tik.get_target().name, pto.get_target()) == before
    with pytest.raises(ValueError):
        with tik.target("Ascend910B"):
            assert tik.get_target().name == "Ascend910B"
            raise ValueError("a failing test body")
    assert tik.get_target().name == before[0]


def test_bad_target_name_changes_nothing():
    before = tik.get_target()
    # an unknown SoC name is accepted as TIK does (with a warning); a non-string is not
    with pytest.raises(ValueError, match="soc_version must be a non-empty str"):
        with tik.target(42):
            pass
    assert tik.get_target() is before
    with pytest.warns(RuntimeWarning, match="not known to fastisa"):
        with tik.target("Ascend999"):      # an unknown SoC is simulated as a known one
            assert tik.get_target() is not before
    assert tik.get_target() is before
    with pytest.raises(ValueError, match="must be 'A2A3' or 'A5'"):
        with pto.target("B7"):
            pass
    assert pto.get_target() == "A2A3"


def test_nki_target_context_and_explicit_target_wins():
    from fastisa.nki import language as nl
    seen = []

    @nki.jit
    def k(a):
        seen.append(nl.target())
        return a
    x = np.zeros((1, 1), np.float32)
    with nki.target("trn3"):
        nki.simulate(k)(x)
        nki.simulate(k, target="trn1")(x)
    nki.simulate(k)(x)
    assert seen == ["trn3", "trn1", "trn2"]


@pytest.mark.pto_targets("A2A3", "A5")
def test_pto_marker_without_naming_the_fixture(request):
    assert pto.get_target() == request.node.callspec.params["pto_target"]


def test_te_set_version_inside_a_target_block_is_undone():
    from fastisa.tik import platform
    with tik.target("Ascend910"):
        platform.te_set_version("Ascend910B2")
        assert tik.get_target().name == "Ascend910B2"
    assert tik.get_target().name == "Ascend910"


def test_shim_fixture_is_undone(pytester):
    pytester.makepyfile("""
        import sys
        def test_a(fastisa_shim):
            import nki
            assert "nki" in sys.modules
        def test_b():
            assert "nki" not in sys.modules
            from fastisa import shim
            assert not shim.is_installed()
    """)
    res = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-q")
    res.assert_outcomes(passed=2)


def test_markers_are_registered_and_parametrise(pytester):
    pytester.makepyfile("""
        import pytest
        from fastisa import tik
        @pytest.mark.tik_targets("Ascend310", "Ascend910B")
        def test_t(tik_target):
            assert tik.get_target().name == tik_target.name
        def test_after():
            assert tik.get_target().name == "Ascend910"
    """)
    res = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-v", "--strict-markers")
    res.assert_outcomes(passed=3)
    res.stdout.fnmatch_lines(["*test_t?Ascend310?*PASSED*", "*test_t?Ascend910B?*PASSED*"])
