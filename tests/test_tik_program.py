"""TIK program machinery: Scalars and Exprs, for_range/if_scope/else_scope, tensor element
reads and writes, InputScalar, scoped buffer reuse, the uninitialised-memory pattern,
targets and the te.platform / tbe.common.platform calls."""
from __future__ import annotations

import numpy as np
import pytest

from fastisa import cost, errors, shim, tik
from fastisa.tik import platform


@pytest.fixture(autouse=True)
def _default_target():
    platform.set_target("Ascend910")
    yield
    platform.set_target("Ascend910")


def test_scalars_loops_and_conditions():
    tk = tik.Tik()
    x = tk.Tensor("float16", (1024,), name="x", scope=tik.scope_gm)
    n = tk.InputScalar("int32", "n")
    y = tk.Tensor("float16", (1024,), name="y", scope=tik.scope_gm)
    u = tk.Tensor("float16", (1024,), name="u", scope=tik.scope_ubuf)
    tk.data_move(u, x, 0, 1, 64, 0, 0)
    acc = tk.Scalar("int32", "acc", init_value=0)
    with tk.for_range(0, 8) as i:
        with tk.if_scope(i < n):
            tk.vec_adds(128, u[i * 128], u[i * 128], 1.0, 1, 8, 8)
            acc.set_as(acc + i)
        with tk.else_scope():
            tk.vec_muls(128, u[i * 128], u[i * 128], -1.0, 1, 8, 8)
    with tk.if_scope(tik.all(acc == 3, n == 3)):
        tk.vec_dup(16, u, 100.0, 1, 0)
    tk.data_move(y, u, 0, 1, 64, 0, 0)
    tk.BuildCCE("k", [x, n], [y])
    xin = np.arange(1024, dtype=np.float16)
    (out,) = tk.tikdb.start_debug({"x": xin, "n": 3}, interactive=False)
    want = np.concatenate([xin[:384] + 1, -xin[384:]]).astype(np.float16)
    want[:16] = 100.0
    assert np.array_equal(out, want)


def test_scalar_reads_and_writes_tensor_elements():
    tk = tik.Tik()
    x = tk.Tensor("int32", (8,), name="x", scope=tik.scope_gm)
    y = tk.Tensor("int32", (8,), name="y", scope=tik.scope_gm)
    u = tk.Tensor("int32", (8,), name="u", scope=tik.scope_ubuf)
    tk.data_move(u, x, 0, 1, 1, 0, 0)
    s = tk.Scalar("int32", "s")
    t = tk.Scalar("int32", "t")
    with tk.for_range(1, 8) as i:
        s.set_as(u[i - 1])
        t.set_as(u[i])
        u[i].set_as(s + t)  # prefix sum
    tk.data_move(y, u, 0, 1, 1, 0, 0)
    tk.BuildCCE("k", [x], [y])
    (out,) = tk.tikdb.start_debug({"x": np.arange(8, dtype=np.int32)}, interactive=False)
    assert np.array_equal(out, np.cumsum(np.arange(8)))


def test_scalar_dtype_conversion():
    tk = tik.Tik()
    h = tk.Scalar("float16", "h", init_value=0.1)
    i16 = tk.Scalar("int16", "i", init_value=40000)
    t = tk.Scalar("int32", "t", init_value=-2.7)
    u = tk.Tensor("float32", (8,), name="u", scope=tik.scope_ubuf)
    y = tk.Tensor("float32", (8,), name="y", scope=tik.scope_gm)
    u[0].set_as(h)
    u[1].set_as(i16)
    u[2].set_as(t)
    tk.data_move(y, u, 0, 1, 1, 0, 0)
    tk.BuildCCE("k", [], [y])
    (out,) = tk.tikdb.start_debug({}, interactive=False)
    # same width (int32 -> float32): the value converts; narrower scalars (float16, int16)
    # store their bits into the element's low-order bytes, the rest keeps its contents
    # (TIK debugger SetTensor.eval_value_scalar_expr)
    bits = out.view(np.uint32)
    assert bits[0] & 0xFFFF == np.float16(0.1).view(np.uint16)
    assert bits[0] >> 16 == 0xA5A5
    assert bits[1] & 0xFFFF == np.int16(40000 - 65536).view(np.uint16)
    assert out[2] == -2


def test_uninitialised_memory_pattern():
    tk = tik.Tik(uninit_fill=0x3C)
    u = tk.Tensor("float16", (16,), name="u", scope=tik.scope_ubuf)
    y = tk.Tensor("float16", (32,), name="y", scope=tik.scope_gm)
    tk.vec_dup(8, u, 0.0, 1, 0)
    tk.data_move(y, u, 0, 1, 1, 0, 0)
    tk.BuildCCE("k", [], [y])
    (out,) = tk.tikdb.start_debug({}, interactive=False)
    assert (out[:8] == 0).all()
    assert (out[8:].view(np.uint16) == 0x3C3C).all()  # never written: the fill pattern
    assert tik.UNINIT_FILL == 0xA5


def test_scoped_tensors_reuse_ub():
    tk = tik.Tik()
    with tk.for_range(0, 2):
        a = tk.Tensor("float16", (100 * 1024,), name="a", scope=tik.scope_ubuf)
    with tk.new_stmt_scope():
        b = tk.Tensor("float16", (100 * 1024,), name="b", scope=tik.scope_ubuf)
    assert a.byte_off == b.byte_off == 0


def test_expr_arithmetic_static_and_runtime():
    tk = tik.Tik()
    s = tk.Scalar("int32", "s", init_value=7)
    e = (s * 3 + 2) // 4 - (1 << 2)
    assert e.eval_value() is None
    c = tik.Expr("int32", 5) * 2 + 1
    assert c.eval_value() == 11
    assert e.fn([7]) == (7 * 3 + 2) // 4 - 4


def test_cost_profile_records_estimates():
    tk = tik.Tik()
    u = tk.Tensor("float16", (512,), name="u", scope=tik.scope_ubuf)
    g = tk.Tensor("float16", (512,), name="g", scope=tik.scope_gm)
    tk.vec_dup(128, u, 1.0, 4, 8)
    tk.data_move(g, u, 0, 2, 16, 0, 0)
    tk.BuildCCE("k", [], [g])
    with cost.profiling() as p:
        tk.tikdb.start_debug({}, interactive=False)
    assert p.totals() == {"Vector": tik.VECTOR_ISSUE_CYCLES + 4,
                          "MTE3": tik.MTE_ISSUE_CYCLES + 32}


def test_targets_decide_dtypes_counter_and_saturation():
    assert not platform.TARGETS["Ascend910"].counter_mode
    assert platform.TARGETS["Ascend910"].saturation
    assert not platform.TARGETS["Ascend910B"].saturation
    for tg, want in (("Ascend910", 65504.0), ("Ascend910B", np.inf)):
        platform.set_target(tg)
        tk = tik.Tik()
        u = tk.Tensor("float16", (128,), name="u", scope=tik.scope_ubuf)
        g = tk.Tensor("float16", (128,), name="g", scope=tik.scope_gm)
        tk.vec_dup(128, u, 60000.0, 1, 8)
        tk.vec_adds(128, u, u, 60000.0, 1, 8, 8)
        tk.data_move(g, u, 0, 1, 8, 0, 0)
        tk.BuildCCE("k", [], [g])
        (out,) = tk.tikdb.start_debug({}, interactive=False)
        assert (out == want).all()
    with pytest.raises(errors.ConstraintError, match="soc_version must be one of"):
        platform.set_target("Ascend999", allow_unknown=False)
    with pytest.warns(RuntimeWarning, match="Ascend310P"):
        assert platform.set_target("Ascend998").name == "Ascend998"
    with pytest.raises(errors.ConstraintError, match="non-empty str"):
        platform.set_target("")
    # the vendor entry points accept an unknown SoC name as CANN accepts the names its
    # platform files list (issue 18 B10: Ascend/samples selects "BS9SX1AA"), with a warning
    with pytest.warns(RuntimeWarning, match="Ascend310P"):
        assert platform.te_set_version("Ascend999") is True
    assert platform.get_target().name == "Ascend999"


def test_vendor_platform_calls():
    with shim.installed():
        from te import platform as tbe_platform
        from te.platform import cce_conf
        from tbe.common.platform import platform_info
        import tbe.common.platform as tcp
        tbe_platform.te_set_version("Ascend310P3")
        assert tbe_platform.get_soc_spec("SOC_VERSION") == "Ascend310P3"
        assert tbe_platform.get_soc_spec(tbe_platform.UB_SIZE) == 256 * 1024
        assert cce_conf.api_check_support("tik.vec_adds", "int16")
        assert tbe_platform.cce_conf.api_check_support("tik.vdiv", "float32")
        assert not cce_conf.api_check_support("tik.vec_adds", "int8")
        tcp.set_current_compile_soc_info("Ascend910")
        assert platform_info.get_soc_spec("SHORT_SOC_VERSION") == "Ascend910"
        assert not tcp.api_check_support("tik.vec_adds", "int16")
        assert tcp.intrinsic_check_support("Intrinsic_vexp", "float32")
        from tbe import tik as vtik
        tk = vtik.Tik(vtik.Dprofile("v100", "mini"))
        assert tk.target.name == "Ascend310"
        assert vtik.Dprofile("v100", "cloud").get_unified_buffer_size() == 256 * 1024


def test_l1_path_and_vector_scope():
    tk = tik.Tik()
    x = tk.Tensor("float32", (64,), name="x", scope=tik.scope_gm)
    y = tk.Tensor("float32", (64,), name="y", scope=tik.scope_gm)
    l1 = tk.Tensor("float32", (64,), name="l1", scope=tik.scope_cbuf)
    u = tk.Tensor("float32", (64,), name="u", scope=tik.scope_ubuf)
    tk.data_move(l1, x, 0, 1, 8, 0, 0)      # GM -> L1
    tk.data_move(u, l1, 0, 2, 4, 0, 0)      # L1 -> UB in two bursts
    with pytest.raises(errors.ConstraintError, match="src scope should be ub"):
        tk.vec_muls(64, u, l1, 2.0, 1, 8, 8)
    with pytest.raises(errors.ConstraintError, match="path local.L1 -> global"):
        tk.data_move(y, l1, 0, 1, 8, 0, 0)  # L1 -> GM only on A2/A3
    tk.vec_muls(64, u, u, 2.0, 1, 8, 8)
    tk.data_move(y, u, 0, 1, 8, 0, 0)
    tk.BuildCCE("k", [x], [y])
    xin = np.arange(64, dtype=np.float32)
    (out,) = tk.tikdb.start_debug({"x": xin}, interactive=False)
    assert np.array_equal(out, xin * 2)


def test_scope_buffers_start_on_a_cache_line():
    """Every scope's host buffer starts on a 64-byte boundary (a 32-byte-aligned operand
    block then never spans two host cache lines) and has the pattern fill."""
    tk = tik.Tik()
    x = tk.Tensor("float32", (1000,), name="x", scope=tik.scope_gm)
    u = tk.Tensor("float32", (60000,), name="u", scope=tik.scope_ubuf)
    tk.data_move(u, x, 0, 1, 125, 0, 0)
    tk.BuildCCE("k", [x], [])
    for _ in range(5):
        st = tk._make_state({"x": np.zeros(1000, np.float32)})
        for b in st.bufs:
            assert b.ctypes.data % 64 == 0
        assert (st.bufs[1][4000:] == tk.uninit_fill).all()
