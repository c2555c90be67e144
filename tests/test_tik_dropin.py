"""TIK drop-in behaviour (issue 18): the front-end details real CANN operators rely on.

Each test states the TIK source it follows (caffe-huawei-atlas-convertor
``convertor/huawei/te/tik/``: the 2020 TIK API and its debugger).  The kernels here are our
own, written in the style of the public operators (an entry function, tiling with
for_range, a tail, if_scope/elif_scope/else_scope)."""
from __future__ import annotations

import numpy as np
import pytest

from fastisa import errors, tik
from fastisa.tik import platform


@pytest.fixture(autouse=True)
def _default_target():
    platform.set_target("Ascend910")
    yield
    platform.set_target("Ascend910")


# --------------------------------------------------------------------------------------
# B2: one index on a multi-dimensional tensor is the flattened element
# --------------------------------------------------------------------------------------

def test_single_index_on_2d_tensor_is_flat_element():
    # TIK Tensor.__getitem__: an int index treats the tensor as one dimension
    tk = tik.Tik()
    x = tk.Tensor("float16", (4, 16), name="x", scope=tik.scope_gm)
    y = tk.Tensor("float16", (4, 16), name="y", scope=tik.scope_gm)
    u = tk.Tensor("float16", (4, 16), name="u", scope=tik.scope_ubuf)
    tk.data_move(u, x, 0, 1, 4, 0, 0)
    s = tk.Scalar("float16", "s")
    s.set_as(u[17])              # flat element 17 = row 1, column 1
    u[3].set_as(s)               # flat element 3 = row 0, column 3
    u[2, 5].set_as(s)            # full index: row 2, column 5
    tk.vec_adds(16, u[32], u[32], 1.0, 1, 8, 8)   # flat start 32 = row 2
    tk.data_move(y, u, 0, 1, 4, 0, 0)
    tk.BuildCCE("k", [x], [y])
    xin = np.arange(64, dtype=np.float16).reshape(4, 16)
    (out,) = tk.tikdb.start_debug({"x": xin}, interactive=False)
    want = xin.copy()
    want[0, 3] = xin[1, 1]
    want[2, 5] = xin[1, 1]
    want[2] += np.float16(1)
    assert np.array_equal(out.view(np.uint16), want.view(np.uint16))


def test_index_count_must_match_rank():
    tk = tik.Tik()
    u = tk.Tensor("float16", (2, 4, 16), name="u", scope=tik.scope_ubuf)
    with pytest.raises(errors.ConstraintError, match="index not match shape"):
        u[1, 2]
    assert u[1, 2, 3].offset == 1 * 64 + 2 * 16 + 3
    assert u[5].offset == 5


def test_tensor_call_is_getitem():
    # TIK Tensor.__call__(index) returns __getitem__(index)
    tk = tik.Tik()
    u = tk.Tensor("int32", (3, 8), name="u", scope=tik.scope_ubuf)
    assert u(9).offset == u[9].offset == 9


# --------------------------------------------------------------------------------------
# B3: Scalar.set_as(tensor[i]) of another dtype takes the bits
# --------------------------------------------------------------------------------------

def _bits_program(src_dtype, scalar_dtype, values, index):
    tk = tik.Tik()
    n = len(values)
    x = tk.Tensor(src_dtype, (n,), name="x", scope=tik.scope_gm)
    y = tk.Tensor(scalar_dtype, (32 // np.dtype(scalar_dtype).itemsize,), name="y",
                  scope=tik.scope_gm)
    u = tk.Tensor(src_dtype, (n,), name="u", scope=tik.scope_ubuf)
    v = tk.Tensor(scalar_dtype, y.shape, name="v", scope=tik.scope_ubuf)
    tk.data_move(u, x, 0, 1, n * np.dtype(src_dtype).itemsize // 32, 0, 0)
    s = tk.Scalar(scalar_dtype, "s")
    s.set_as(u[index])
    v[0].set_as(s)
    tk.data_move(y, v, 0, 1, 1, 0, 0)
    tk.BuildCCE("k", [x], [y])
    (out,) = tk.tikdb.start_debug({"x": np.asarray(values, dtype=src_dtype)},
                                  interactive=False)
    return out[0]


@pytest.mark.parametrize("src,dst", [("float16", "uint16"), ("float16", "int16"),
                                     ("float32", "int32"), ("int32", "float32"),
                                     ("float16", "int32"), ("float16", "float32"),
                                     ("int32", "int16"), ("int32", "float16"),
                                     ("uint16", "float16")])
def test_scalar_set_as_reinterprets_bits(src, dst, rng):
    # TIK debugger SetScalar.eval_: wider scalar = tensor[i:i+ratio].view(dst)[0],
    # narrower = [tensor[i]].view(dst)[0] (the low-order bytes), equal width = view
    raw = rng.integers(0, 1 << 16, size=32, dtype=np.uint16)
    if src == "float16":   # finite float16 codes only (a NaN would not survive vec_adds)
        raw &= 0x7BFF
    vals = raw.view(np.uint8).view(src)
    i = 4
    got = _bits_program(src, dst, vals, i)
    sb, db = np.dtype(src).itemsize, np.dtype(dst).itemsize
    want = vals.view(np.uint8)[i * sb:i * sb + db].view(dst)[0]
    assert np.array_equal(np.array([got]).view(np.uint8), np.array([want]).view(np.uint8))


def test_scalar_set_as_wider_read_past_the_end_is_rejected():
    tk = tik.Tik()
    u = tk.Tensor("float16", (16,), name="u", scope=tik.scope_ubuf)
    s = tk.Scalar("int32", "s")
    s.set_as(u[15])     # needs elements 15 and 16
    tk.BuildCCE("k", [], [])
    with pytest.raises(errors.AccessError, match="element 15 as int32"):
        tk.tikdb.start_debug({}, interactive=False)


def argmax_rows(rows, cols, kernel_name="argmax_rows"):
    """An operator in the style of the public ones: per row of a (rows, cols) float16
    input, the column of the maximum (first one on ties), as int32.  cols <= 128; rows
    tiled 8 at a time with a tail; the vcmax index (a uint16 bit pattern in a float16
    tensor) is read with a uint16 Scalar, as arg_max_with_value does."""
    tk = tik.Tik()
    x = tk.Tensor("float16", (rows, cols), name="x", scope=tik.scope_gm)
    y = tk.Tensor("int32", (rows,), name="y", scope=tik.scope_gm)
    per = 8
    row_blocks = cols * 2 // 32
    ub = tk.Tensor("float16", (per, cols), name="ub", scope=tik.scope_ubuf)
    res = tk.Tensor("float16", (per * 2,), name="res", scope=tik.scope_ubuf)
    out = tk.Tensor("int32", (rows + 7) // 8 * 8, name="out", scope=tik.scope_ubuf)
    idx = tk.Scalar("uint16", "idx")
    idx32 = tk.Scalar("int32", "idx32")
    ntiles = (rows + per - 1) // per
    with tk.for_range(0, ntiles) as t:
        n = tk.Scalar("int32", "n")
        with tk.if_scope(t < ntiles - 1):
            n.set_as(per)
        with tk.else_scope():
            n.set_as(rows - (ntiles - 1) * per)
        tk.data_move(ub, x[t * per * cols], 0, 1, n * row_blocks, 0, 0)
        tk.vcmax(cols, res, ub, n, 1, 1, row_blocks)
        with tk.for_range(0, n) as r:
            idx.set_as(res[r * 2 + 1])
            idx32.set_as(idx)
            out[t * per + r].set_as(idx32)
    tk.data_move(y, out, 0, 1, (rows * 4 + 31) // 32, 0, 0)
    tk.BuildCCE(kernel_name, [x], [y])
    return tk


@pytest.mark.parametrize("rows", [1, 8, 13])
def test_argmax_reads_vcmax_index_bits(rows, rng):
    cols = 64
    x = rng.standard_normal((rows, cols)).astype(np.float16)
    x[:, 26] = 10.0    # the case issue 18 saw come back as index 0
    x[0, 3] = 11.0
    tk = argmax_rows(rows, cols)
    (out,) = tk.tikdb.start_debug({"x": x}, interactive=False)
    assert np.array_equal(out, np.argmax(x, axis=1).astype(np.int32))


# --------------------------------------------------------------------------------------
# B4-B10, vcadd alignment, control flow, flatten, disable_debug, GM over-read
# --------------------------------------------------------------------------------------

def test_data_move_copies_blocks_across_dtypes():
    # B4: TIK's data_move copies 32-byte blocks whatever the two dtypes are
    tk = tik.Tik()
    x = tk.Tensor("float32", (16,), name="x", scope=tik.scope_gm)
    y = tk.Tensor("int16", (32,), name="y", scope=tik.scope_gm)
    u = tk.Tensor("uint8", (64,), name="u", scope=tik.scope_ubuf)
    tk.data_move(u, x, 0, 1, 2, 0, 0)
    tk.data_move(y, u, 0, 1, 2, 0, 0)
    tk.BuildCCE("k", [x], [y])
    xin = np.linspace(-3, 3, 16, dtype=np.float32)
    (out,) = tk.tikdb.start_debug({"x": xin}, interactive=False)
    assert np.array_equal(out, xin.view(np.int16))


def test_integral_float_shapes():
    # B6: (24.0,) is a shape of 24; a fractional dim is still an error
    tk = tik.Tik()
    t = tk.Tensor("float16", (24.0, 2), name="t", scope=tik.scope_ubuf)
    assert t.shape == (24, 2)
    with pytest.raises(errors.ConstraintError, match="shape"):
        tk.Tensor("float16", (2.5,), name="b", scope=tik.scope_ubuf)


def test_d_profiling_reports_the_instance_chip():
    # B7: tik_instance.d_profiling.get_aicore_num() etc.
    platform.set_target("Ascend310")
    tk = tik.Tik()
    platform.set_target("Ascend910")
    assert tk.d_profiling.get_aicore_num() == 2
    assert tk.d_profiling.get_unified_buffer_size() == 256 * 1024
    assert tik.Tik().d_profiling.get_aicore_num() == 32


def test_flowtable_input_scalars_are_fed():
    # B8: BuildCCE(flowtable=[InputScalar]) makes them feedable by name
    tk = tik.Tik()
    x = tk.Tensor("float16", (128,), name="x", scope=tik.scope_gm)
    y = tk.Tensor("float16", (128,), name="y", scope=tik.scope_gm)
    n = tk.InputScalar("int32", "n")
    u = tk.Tensor("float16", (128,), name="u", scope=tik.scope_ubuf)
    tk.data_move(u, x, 0, 1, 8, 0, 0)
    with tk.for_range(0, n) as i:
        tk.vec_adds(16, u[i * 16], u[i * 16], 1.0, 1, 8, 8)
    tk.data_move(y, u, 0, 1, 8, 0, 0)
    tk.BuildCCE("k", [x], [y], flowtable=[n])
    xin = np.zeros(128, np.float16)
    (out,) = tk.tikdb.start_debug({"x": xin, "n": 3}, interactive=False)
    assert np.array_equal(out, np.r_[np.ones(48), np.zeros(80)].astype(np.float16))
    with pytest.raises(errors.ConstraintError, match="'n' is missing"):
        tk.tikdb.start_debug({"x": xin}, interactive=False)
    with pytest.raises(errors.ConstraintError, match="flowtable entries"):
        tk.BuildCCE("k", [x], [y], flowtable=[3])


def test_api_check_support_conversion_codes():
    # B9: tik.vconv is asked with conversion codes (src "2" dst round-suffix)
    assert platform.api_check_support("tik.vconv", "f322f16")
    assert platform.api_check_support("tik.vconv", "f162f32")
    assert platform.api_check_support("tik.vconv", "s322f32")
    assert platform.api_check_support("tik.vconv", "f322s32r")
    assert platform.api_check_support("tik.vconv", "f162s32a")
    assert not platform.api_check_support("tik.vconv", "f322s32")   # needs a round mode
    assert not platform.api_check_support("tik.vconv", "u162f32")
    assert platform.api_check_support("tik.vconv", "float16")
    assert not platform.api_check_support("tik.vexp", "int32")
    with pytest.raises(errors.ConstraintError, match="must be str"):
        platform.api_check_support("tik.vconv", 3)


def test_unknown_soc_accepted_with_warning():
    # B10: Ascend/samples' softmax_tik selects "BS9SX1AA"
    from fastisa import shim
    with shim.installed():
        from tbe.common.platform import set_current_compile_soc_info
        with pytest.warns(RuntimeWarning, match="BS9SX1AA"):
            assert set_current_compile_soc_info("BS9SX1AA", "VectorCore") == "success"
    assert platform.get_target().name == "BS9SX1AA"
    assert platform.get_soc_spec("SOC_VERSION") == "BS9SX1AA"


def test_vcadd_dst_needs_element_alignment_only():
    # TIK debugger: vcadd's dst alignment is the dtype size
    tk = tik.Tik()
    x = tk.Tensor("float16", (256,), name="x", scope=tik.scope_gm)
    y = tk.Tensor("float16", (16,), name="y", scope=tik.scope_gm)
    u = tk.Tensor("float16", (256,), name="u", scope=tik.scope_ubuf)
    r = tk.Tensor("float16", (16,), name="r", scope=tik.scope_ubuf)
    tk.data_move(u, x, 0, 1, 16, 0, 0)
    tk.vec_dup(16, r, 0.0, 1, 0)
    tk.vcadd(128, r[3], u, 2, 1, 1, 8)
    tk.data_move(y, r, 0, 1, 1, 0, 0)
    tk.BuildCCE("k", [x], [y])
    xin = (np.arange(256) % 7).astype(np.float16)
    (out,) = tk.tikdb.start_debug({"x": xin}, interactive=False)
    want = np.zeros(16, np.float16)
    want[3], want[4] = xin[:128].sum(), xin[128:].sum()
    assert np.array_equal(out, want)


def clamp_scale(n, lo, hi, kernel_name="clamp_scale"):
    """An operator in the style of the public ones: y = 2x where x < lo, x where
    lo <= x < hi, -x elsewhere, decided per 16-element block by its first element with
    if_scope/elif_scope/else_scope; n elements tiled 128 at a time plus a tail."""
    tk = tik.Tik()
    x = tk.Tensor("float16", (n,), name="x", scope=tik.scope_gm)
    y = tk.Tensor("float16", (n,), name="y", scope=tik.scope_gm)
    tile = 128
    u = tk.Tensor("float16", (tile,), name="u", scope=tik.scope_ubuf)
    first = tk.Scalar("float16", "first")
    ntiles, tail = n // tile, n % tile

    def body(base, count):
        tk.data_move(u, x[base], 0, 1, (count + 15) // 16, 0, 0)
        with tk.for_range(0, (count + 15) // 16) as b:
            first.set_as(u[b * 16])
            with tk.if_scope(first < lo):
                tk.vec_muls(16, u[b * 16], u[b * 16], 2.0, 1, 8, 8)
            with tk.elif_scope(first < hi):
                pass
            with tk.else_scope():
                tk.vec_muls(16, u[b * 16], u[b * 16], -1.0, 1, 8, 8)
        tk.data_move(y[base], u, 0, 1, (count + 15) // 16, 0, 0)

    with tk.for_range(0, ntiles) as t:
        body(t * tile, tile)
    if tail:
        body(ntiles * tile, tail)
    tk.BuildCCE(kernel_name, [x], [y])
    return tk


@pytest.mark.parametrize("n", [128, 384, 416])
def test_if_elif_else_chain(n, rng):
    x = rng.uniform(-4, 4, n).astype(np.float16)
    (out,) = clamp_scale(n, -1.0, 1.0).tikdb.start_debug({"x": x}, interactive=False)
    want = x.copy()
    for b in range(0, n, 16):
        f = x[b]
        blk = slice(b, b + 16)
        want[blk] = x[blk] * np.float16(2) if f < -1 else x[blk] if f < 1 else -x[blk]
    assert np.array_equal(out.view(np.uint16), want.view(np.uint16))


def test_elif_and_else_must_follow_an_if():
    tk = tik.Tik()
    with pytest.raises(errors.ConstraintError, match="elif_scope: must directly follow"):
        with tk.elif_scope(True):
            pass
    with tk.if_scope(True):
        pass
    with tk.else_scope():
        pass
    with pytest.raises(errors.ConstraintError, match="elif_scope: must directly follow"):
        with tk.elif_scope(True):
            pass
    with pytest.raises(errors.ConstraintError, match="else_scope: must directly follow"):
        with tk.else_scope():
            pass


def test_every_scope_is_a_context_manager():
    tk = tik.Tik()
    for cm in (tk.for_range(0, 2), tk.new_stmt_scope(), tk.new_scope()):
        assert hasattr(cm, "__enter__") and hasattr(cm, "__exit__")
        with cm:
            pass
    cm = tk.if_scope(True)
    with cm:
        pass
    for cm in (tk.elif_scope(False), tk.else_scope()):
        assert hasattr(cm, "__enter__") and hasattr(cm, "__exit__")
        with cm:
            pass


def test_flatten():
    tk = tik.Tik()
    t = tk.Tensor("int32", (3, 4, 8), name="t", scope=tik.scope_ubuf)
    f = t.flatten()
    assert f.shape == (96,) and f.byte_off == t.byte_off and f.dtype == "int32"


def test_disable_debug_refuses_to_run():
    # as the TIK debugger: "Debug function is disabled"
    tk = tik.Tik(disable_debug=True)
    g = tk.Tensor("float16", (16,), name="g", scope=tik.scope_gm)
    tk.BuildCCE("k", [], [g])
    with pytest.raises(RuntimeError, match="Debug function is disabled"):
        tk.tikdb.start_debug({}, interactive=False)


def test_read_past_gm_end_is_rejected():
    # keep TIK's rule: a data_move may not read past a GM tensor (its size rounded to 32)
    tk = tik.Tik()
    x = tk.Tensor("float16", (400,), name="x", scope=tik.scope_gm)
    u = tk.Tensor("float16", (416,), name="u", scope=tik.scope_ubuf)
    with pytest.raises(errors.AccessError, match="need read 832 bytes, but only 800"):
        tk.data_move(u, x, 0, 1, 26, 0, 0)   # 832 bytes of an 800-byte tensor
    n = tk.Scalar("int32", "n", init_value=26)
    tk.data_move(u, x, 0, 1, n, 0, 0)        # a runtime burst is checked when run
    tk.BuildCCE("k", [x], [])
    with pytest.raises(errors.AccessError, match="need read 832 bytes, but only 800"):
        tk.tikdb.start_debug({"x": np.zeros(400, np.float16)}, interactive=False)


# --------------------------------------------------------------------------------------
# the op scaffolding (fastisa.tik.compat through the shim)
# --------------------------------------------------------------------------------------

def test_scaffolding_imports_and_checks():
    from fastisa import shim
    with shim.installed():
        from te import tvm
        from te import platform as tbe_platform
        from te.platform.fusion_manager import fusion_manager
        import te.platform.cce_params as cce_params
        from te.utils import op_utils
        from te.utils.op_utils import REQUIRED_INPUT, REQUIRED_OUTPUT, KERNEL_NAME, \
            REQUIRED_ATTR_INT, check_op_params
        from tbe.common.utils import para_check
        from topi.cce import util
        import te.lang.cce
        assert para_check.check_shape is op_utils.check_shape
        assert tvm.const(1.1, "float16") == float(np.float16(1.1))
        assert tvm.const(70000, "int16") == 70000 - 65536
        assert tbe_platform.cce_conf.get_soc_spec("CORE_NUM") == 32
        assert tbe_platform.cce_intrin.get_bit_len("float16") == 16
        assert tbe_platform.scope_ubuf == tik.scope_ubuf
        assert cce_params.BLOCK_REDUCE_INT8 == 32 and cce_params.VECTOR_INST_BLOCK_NUM == 8

        @fusion_manager.register("my_op")
        def my_compute(x):
            return x
        assert my_compute(3) == 3 and fusion_manager.has_op_compute("my_op")

        @check_op_params(REQUIRED_INPUT, REQUIRED_OUTPUT, REQUIRED_ATTR_INT, KERNEL_NAME)
        def op(x, y, k, kernel_name="op"):
            return k
        d = {"shape": (4,), "dtype": "float16"}
        assert op(d, d, 3) == 3
        assert op(d, d, 3, kernel_name="ok_name") == 3
        with pytest.raises(RuntimeError, match="'k' must be int"):
            op(d, d, 3.0)
        with pytest.raises(RuntimeError, match="'x' has no 'dtype'"):
            op({"shape": (4,)}, d, 3)
        with pytest.raises(RuntimeError, match="kernel_name may contain only"):
            op(d, d, 3, "bad-name")
        with pytest.raises(errors.ConstraintError, match="rank"):
            op_utils.check_shape((1,) * 9)
        with pytest.raises(RuntimeError, match="dtype"):
            op_utils.check_dtype("float64", ("float16",))
        with pytest.raises(RuntimeError, match="ndim"):
            util.check_shape_rule(())
        assert util.check_tensor_shape_size([4, 8]) == 32
        assert util.axis_check(3, [-1, 0, 2]) == [0, 2]
        assert util.simplify_axis_shape([2, 3, 4, 5], [1, 2]) == ([2, 12, 5], [1])
        with pytest.raises(NotImplementedError, match="te.lang.cce.vadd is not simulated"):
            te.lang.cce.vadd(1, 2)
        with pytest.raises(NotImplementedError, match="call_extern is not simulated"):
            tvm.call_extern("int32", "x")


def test_tensor_set_as_sets_its_first_element():
    # TIK Tensor.set_as(value): one element (dst_offset, default 0)
    tk = tik.Tik()
    y = tk.Tensor("int32", (8,), name="y", scope=tik.scope_gm)
    u = tk.Tensor("int32", (8,), name="u", scope=tik.scope_ubuf)
    tk.vec_dup(8, u, 0, 1, 0)
    s = tk.Scalar("int32", "s", init_value=7)
    u.set_as(s)
    u.set_as(s + 1, dst_offset=3)
    tk.data_move(y, u, 0, 1, 1, 0, 0)
    tk.BuildCCE("k", [], [y])
    (out,) = tk.tikdb.start_debug({}, interactive=False)
    assert out.tolist() == [7, 0, 0, 8, 0, 0, 0, 0]


def test_check_op_params_with_python_types():
    # the older form some operators use: check_op_params(dict, dict, int, str)
    from fastisa.tik.compat.op_utils import check_op_params

    @check_op_params(dict, dict, int, str)
    def op(x, y, axis=0, kernel_name="op"):
        return axis
    d = {"shape": (4,), "dtype": "float16"}
    assert op(d, d, 1, "k") == 1
    with pytest.raises(RuntimeError, match="'axis' must be"):
        op(d, d, "1", "k")
