"""Every TIK error case: the right fastisa.errors class and a message naming the
instruction, the parameter, the rule and the value (TIK's wording where known)."""
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


def ub(tk, n=512, dtype="float16", name="x"):
    return tk.Tensor(dtype, (n,), name=name, scope=tik.scope_ubuf)


def run(tk, inputs=(), outputs=None, feed=None):
    if outputs is None:
        outputs = [tk.Tensor("float16", (16,), name="o", scope=tik.scope_gm)]
    tk.BuildCCE("k", list(inputs), outputs)
    return tk.tikdb.start_debug(feed or {}, interactive=False)


# ---- repeat_times ------------------------------------------------------------------------

def test_immediate_repeat_zero_rejected():
    tk = tik.Tik()
    with pytest.raises(errors.ConstraintError, match="repeat_times.*immediate 0.*input "
                       "repeat_times: 0"):
        tk.vec_adds(128, ub(tk), ub(tk), 1.0, 0, 8, 8)


def test_repeat_not_int():
    tk = tik.Tik()
    with pytest.raises(errors.ConstraintError, match="repeat_times"):
        tk.vec_adds(128, ub(tk), ub(tk), 1.0, 1.5, 8, 8)


def test_runtime_repeat_zero_is_noop_and_runtime_300_rejected():
    for val, ok in ((0, True), (300, False)):
        tk = tik.Tik()
        n = tk.InputScalar("int32", "n")
        x = tk.Tensor("float16", (128,), name="x", scope=tik.scope_gm)
        y = tk.Tensor("float16", (128,), name="y", scope=tik.scope_gm)
        u = ub(tk, 128)
        tk.data_move(u, x, 0, 1, 8, 0, 0)
        tk.vec_adds(128, u, u, 1.0, n, 8, 8)
        tk.data_move(y, u, 0, 1, 8, 0, 0)
        tk.BuildCCE("k", [x, n], [y])
        xin = np.arange(128, dtype=np.float16)
        if ok:
            (out,) = tk.tikdb.start_debug({"x": xin, "n": val}, interactive=False)
            assert np.array_equal(out, xin)
        else:
            with pytest.raises(errors.ConstraintError, match=r"vec_adds: repeat_times should "
                               r"be in the range of \[0, 255\], input repeat_times: 300"):
                tk.tikdb.start_debug({"x": xin, "n": val}, interactive=False)


# ---- masks -------------------------------------------------------------------------------

@pytest.mark.parametrize("mask,dtype,msg", [
    (0, "float16", r"mask value should be in the range of \[1, 128\] for b16 tensor, input "
                   r"mask: 0"),
    (65, "float32", r"mask value should be in the range of \[1, 64\] for b32 tensor, input "
                    r"mask: 65"),
    ([0, 0], "float16", r"mask list value can not be \[0, 0\]"),
    ([1, 0], "float32", r"mask_h should be 0 for b32 tensor, input mask_h: 1"),
    ([2**64, 1], "float16", r"mask_h should be in the range of \[0, 2\*\*64-1\]"),
    ([1, 2, 3], "float16", r"mask list should be \[mask_h, mask_l\]"),
    (1.5, "float16", r"mask must be an int"),
])
def test_bad_masks(mask, dtype, msg):
    tk = tik.Tik()
    with pytest.raises(errors.ConstraintError, match="vec_adds: " + msg):
        tk.vec_adds(mask, ub(tk, dtype=dtype), ub(tk, dtype=dtype), 1.0, 1, 8, 8)


def test_counter_mode_range():
    platform.set_target("Ascend310P")
    tk = tik.Tik()
    for bad in (0, 2**32):
        with pytest.raises(errors.ConstraintError, match=r"In counter_mode, mask value should "
                           r"be in the range of \[1, 2\*\*32-1\]"):
            tk.vec_adds(bad, ub(tk), ub(tk), 1.0, 1, 8, 8, mask_mode="counter")


def test_counter_mode_is_normal_mode_on_910():
    tk = tik.Tik()  # Ascend910: counter mode treated as normal mode
    with pytest.raises(errors.ConstraintError, match=r"mask value should be in the range of "
                       r"\[1, 128\]"):
        tk.vec_adds(200, ub(tk), ub(tk), 1.0, 1, 8, 8, mask_mode="counter")


def test_bad_mask_mode():
    tk = tik.Tik()
    with pytest.raises(errors.ConstraintError, match="mask_mode should be 'normal' or "
                       "'counter'"):
        tk.vec_adds(128, ub(tk), ub(tk), 1.0, 1, 8, 8, mask_mode="bitwise")


def test_runtime_mask_checked():
    tk = tik.Tik()
    m = tk.Scalar("int32", "m", init_value=129)
    tk.vec_adds(m, ub(tk), ub(tk, name="y"), 1.0, 1, 8, 8)
    with pytest.raises(errors.ConstraintError, match="input mask: 129"):
        run(tk)


# ---- strides -----------------------------------------------------------------------------

def test_rep_and_blk_stride_ranges():
    tk = tik.Tik()
    with pytest.raises(errors.ConstraintError, match=r"vadds: dst_blk_stride should be in the "
                       r"range of \[0, 65535\], input dst_blk_stride: 65536"):
        tk.vadds(128, ub(tk), ub(tk), 1.0, 1, 65536, 1, 8, 8)
    with pytest.raises(errors.ConstraintError, match=r"vadd: src1_blk_stride should be in the "
                       r"range of \[0, 255\], input src1_blk_stride: 256"):
        tk.vadd(128, ub(tk), ub(tk), ub(tk), 1, 1, 1, 256, 8, 8, 8)
    with pytest.raises(errors.ConstraintError, match=r"vec_add: src0_rep_stride should be in "
                       r"the range of \[0, 255\], input src0_rep_stride: -1"):
        tk.vec_add(128, ub(tk), ub(tk), ub(tk), 1, 8, -1, 8)


def test_stride_unit():
    """TIK forces stride_unit to 0 on Ascend 310/910; elsewhere it is an int in [0, 3], and
    fastisa implements 0 and 1 (2 and 3, element units, raise NotImplementedError)."""
    tk = tik.Tik()
    tk.vadds(128, ub(tk), ub(tk, name="y"), 1.0, 1, 1, 1, 8, 8, stride_unit=2)  # ignored
    tk.vadd(128, ub(tk), ub(tk, name="y"), ub(tk, name="z"), 1, 1, 1, 1, 8, 8, 8,
            stride_unit=9)
    platform.set_target("Ascend310P")
    tk = tik.Tik()
    for su in (2, 3):
        with pytest.raises(NotImplementedError, match=f"vadds: stride_unit={su} .* not "
                           f"implemented"):
            tk.vadds(128, ub(tk), ub(tk, name="y"), 1.0, 1, 1, 1, 8, 8, stride_unit=su)
    with pytest.raises(errors.ConstraintError, match=r"vabs: stride_unit should be in the "
                       r"range of \[0, 3\], input stride_unit: 4"):
        tk.vabs(128, ub(tk), ub(tk, name="y"), 1, 1, 1, 8, 8, stride_unit=4)
    with pytest.raises(errors.ConstraintError, match="vector_dup: input stride_unit should be "
                       "int"):
        tk.vector_dup(128, ub(tk), 1.0, 1, 1, 8, stride_unit="1")
    tk.vadd(128, ub(tk), ub(tk, name="y"), ub(tk, name="z"), 1, 1, 1, 1, 8, 8, 8,
            stride_unit=1)


# ---- operands ----------------------------------------------------------------------------

def test_scope_dtype_and_target_checks():
    tk = tik.Tik()
    g = tk.Tensor("float16", (256,), name="g", scope=tik.scope_gm)
    with pytest.raises(errors.ConstraintError, match="vec_adds: dst scope should be ub, input "
                       "scope: global"):
        tk.vec_adds(128, g, ub(tk), 1.0, 1, 8, 8)
    with pytest.raises(errors.ConstraintError, match="src's dtype should be equal to dst's "
                       "dtype"):
        tk.vec_adds(64, ub(tk, dtype="float32"), ub(tk), 1.0, 1, 8, 8)
    with pytest.raises(errors.ConstraintError, match="vec_adds: dtype int16 is not supported "
                       "on Ascend910"):
        tk.vec_adds(128, ub(tk, dtype="int16"), ub(tk, dtype="int16"), 1, 1, 8, 8)
    with pytest.raises(errors.ConstraintError, match="vmaxs: dtype float16 is not supported"):
        tk.vmaxs(128, ub(tk), ub(tk), 1.0, 1, 1, 1, 8, 8)
    with pytest.raises(errors.ConstraintError, match="scalar must be"):
        tk.vec_adds(128, ub(tk), ub(tk), "2", 1, 8, 8)
    with pytest.raises(errors.ConstraintError, match="vec_conv: conversion float16 -> int16"):
        tk.vec_conv(64, "", ub(tk, dtype="int16"), ub(tk), 1, 8, 8)
    with pytest.raises(errors.ConstraintError, match="round_mode should be one of"):
        tk.vec_conv(64, "", ub(tk, dtype="int32"), ub(tk), 1, 8, 4)


def test_tensor_overflow_static_and_dynamic():
    tk = tik.Tik()
    a, b = ub(tk, 256), ub(tk, 256, name="b")
    with pytest.raises(errors.AccessError, match=r"vec_adds: `x` tensor overflow, instruction "
                       r"need write 384 elements but only 256"):
        tk.vec_adds(128, a, b, 1.0, 3, 8, 8)
    with pytest.raises(errors.AccessError, match="`b` tensor overflow.*read 272"):
        tk.vec_adds(128, a, b[16], 1.0, 2, 0, 8)
    tk2 = tik.Tik()
    a, b = ub(tk2, 256), ub(tk2, 256, name="b")
    with tk2.for_range(0, 3) as i:
        tk2.vec_adds(128, a[i * 128], b, 1.0, 1, 8, 8)
    with pytest.raises(errors.AccessError, match="tensor overflow"):
        run(tk2)


def test_alignment():
    tk = tik.Tik()
    with pytest.raises(errors.AlignmentError, match=r"vec_adds: Address align error! dst "
                       r"\(x\[1\]\) address 2 is not 32 align"):
        tk.vec_adds(16, ub(tk)[1], ub(tk, name="y"), 1.0, 1, 8, 8)


def test_overlap_rules():
    tk = tik.Tik()
    x = ub(tk, 1024)
    # repeat_times = 1: partial overlap
    with pytest.raises(errors.OverlapError, match="when repeat_times=1, only support dst and "
                       "src 100% same"):
        tk.vec_adds(128, x[16], x, 1.0, 1, 8, 8)
    # repeat_times > 1: iteration N's dst is iteration N+1's src
    with pytest.raises(errors.OverlapError, match="iteration N's destination is the source "
                       "of next iteration"):
        tk.vec_adds(128, x[128], x, 1.0, 2, 8, 8)
    with pytest.raises(errors.OverlapError, match="iteration N's destination"):
        tk.vec_adds(128, x, x, 1.0, 2, 0, 0)
    # allowed: in place with the same strides, disjoint
    tk.vec_adds(128, x, x, 1.0, 4, 8, 8)
    tk.vec_adds(128, x[512], x, 1.0, 4, 8, 8)
    # accumulate idiom allowed; src0 overlapping src1 then is not
    acc, y = ub(tk, 128, name="acc"), ub(tk, 1024, name="y")
    tk.vec_add(128, acc, y, acc, 8, 0, 8, 0)
    with pytest.raises(errors.OverlapError, match="src0 must not overlap src1"):
        tk.vec_add(128, acc, acc, acc, 2, 0, 0, 0)
    # not the accumulate exception on src0
    with pytest.raises(errors.OverlapError):
        tk.vec_add(128, acc, acc, y, 2, 0, 0, 8)


def test_axpy_dst_block_stride_zero_not_implemented():
    tk = tik.Tik()
    with pytest.raises(NotImplementedError, match="dst_blk_stride 0"):
        tk.vaxpy(128, ub(tk), ub(tk, name="y"), 2.0, 1, 0, 1, 8, 8)


# ---- data_move ---------------------------------------------------------------------------

def test_data_move_errors():
    tk = tik.Tik()
    g = tk.Tensor("float16", (512,), name="g", scope=tik.scope_gm)
    g2 = tk.Tensor("float16", (512,), name="g2", scope=tik.scope_gm)
    u = ub(tk, 512)
    for args, msg in [((0, 0, 16, 0, 0), r"nburst should be in the range of \[1, 4095\], "
                                         r"input nburst: 0"),
                      ((0, 4096, 1, 0, 0), "nburst.*input nburst: 4096"),
                      ((0, 1, 0, 0, 0), r"burst_len should be in the range of \[1, 65535\]"),
                      ((0, 1, 65536, 0, 0), "burst_len.*input burst_len: 65536"),
                      ((0, 1, 1, 65536, 0), r"src_stride should be in the range of "
                                            r"\[0, 65535\]"),
                      ((0, 1, 1, 0, -1), "dst_stride.*input dst_stride: -1"),
                      ((16, 1, 1, 0, 0), r"sid should be in the range of \[0, 15\]")]:
        with pytest.raises(errors.ConstraintError, match="data_move: " + msg):
            tk.data_move(u, g, *args)
    tk.data_move(ub(tk, dtype="float32"), g, 0, 1, 1, 0, 0)   # blocks: dtypes may differ
    with pytest.raises(errors.ConstraintError, match="path global -> global"):
        tk.data_move(g2, g, 0, 1, 1, 0, 0)
    with pytest.raises(errors.AlignmentError, match="Address align error"):
        tk.data_move(u[3], g, 0, 1, 1, 0, 0)
    with pytest.raises(errors.AccessError, match="tensor x need write 1056 bytes, but only "
                       "1024 bytes space"):
        tk.data_move(u, g, 0, 2, 16, 0, 1)
    tk.data_move(u, g[3], 0, 1, 1, 0, 0)  # GM has no alignment rule


# ---- program / debugger ------------------------------------------------------------------

def test_ub_capacity():
    tk = tik.Tik()
    tk.Tensor("float16", (64 * 1024,), name="a", scope=tik.scope_ubuf)
    with pytest.raises(errors.ConstraintError, match="ub buffer overflow"):
        tk.Tensor("float16", (64 * 1024 + 16,), name="b", scope=tik.scope_ubuf)


def test_unsupported_scope():
    tk = tik.Tik()
    with pytest.raises(errors.ConstraintError, match="scope should be one of"):
        tk.Tensor("float16", (16,), name="c", scope="local.L2")
    # the cube scopes are simulated (tik-cube)
    tk.Tensor("float32", (16,), name="c", scope=tik.scope_cc)


def test_feed_dict_checks():
    def build():
        tk = tik.Tik()
        x = tk.Tensor("float16", (16,), name="x", scope=tik.scope_gm)
        n = tk.InputScalar("int32", "n")
        y = tk.Tensor("float16", (16,), name="y", scope=tik.scope_gm)
        tk.BuildCCE("k", [x, n], [y])
        return tk
    x = np.zeros(16, np.float16)
    for feed, err, msg in [
        ({"x": x}, errors.ConstraintError, "input 'n' is missing"),
        ({"x": x, "n": 1, "z": 1}, errors.ConstraintError, "key 'z' is not an input"),
        ({"x": x.reshape(4, 4), "n": 1}, errors.ConstraintError, "x input shape mismatch"),
        ({"x": x.astype(np.float32), "n": 1}, errors.ConstraintError,
         "x input dtype mismatch"),
        ({"x": x, "n": 1.0}, errors.ConstraintError, "n input dtype mismatch"),
    ]:
        with pytest.raises(err, match=msg):
            build().tikdb.start_debug(feed, interactive=False)


def test_debugger_state_errors():
    tk = tik.Tik(disable_debug=True)
    tk.BuildCCE("k", [], [])
    with pytest.raises(RuntimeError, match="Debug function is disabled"):
        tk.tikdb.start_debug({}, interactive=False)
    tk = tik.Tik()
    with pytest.raises(RuntimeError, match="BuildCCE"):
        tk.tikdb.start_debug({}, interactive=False)


def test_buildcce_errors():
    tk = tik.Tik()
    g = tk.Tensor("float16", (16,), name="g", scope=tik.scope_gm)
    u = ub(tk, 16)
    with pytest.raises(errors.ConstraintError, match="both an input and an output"):
        tk.BuildCCE("k", [g], [g])
    with pytest.raises(errors.ConstraintError, match="scope should be gm"):
        tk.BuildCCE("k", [u], [])
    with pytest.raises(errors.ConstraintError, match="else_scope"):
        with tk.else_scope():
            pass


def test_scalar_read_out_of_range():
    tk = tik.Tik()
    u = ub(tk, 16)
    s = tk.Scalar("float16", "s")
    s.set_as(u[20])
    with pytest.raises(errors.AccessError, match="tensor x need read element 20"):
        run(tk)


def test_not_implemented_instructions():
    tk = tik.Tik()
    with pytest.raises(NotImplementedError):
        tk.vec_reduce_max(128, ub(tk), ub(tk), ub(tk), 1, 8, cal_index=True)
    # tik-isa: deqscale is the int32 -> float16 deq mode; 1.0 is implemented
    # (test_tik_scalar_proposal), other scales are not; other pairs are TIK's error
    with pytest.raises(NotImplementedError):
        tk.vec_conv(64, "", ub(tk), ub(tk, dtype="int32"), 1, 4, 8, deqscale=0.5)
    with pytest.raises(errors.ConstraintError, match="deqscale should be None"):
        tk.vec_conv(64, "", ub(tk, dtype="float32"), ub(tk), 1, 8, 4, deqscale=1.0)


@pytest.mark.parametrize("start,err,msg", [
    (1, errors.AlignmentError, r"Address align error! dst \(x\[1\]\) address 2 is not 32 "
                               r"align"),
    (-16, errors.AccessError, "dst start element of tensor x must be >= 0, got -16"),
    (400, errors.AccessError, "`x` tensor overflow, instruction need write 528 elements"),
])
def test_runtime_start_checks(start, err, msg):
    tk = tik.Tik()
    s = tk.Scalar("int32", "s", init_value=start)
    tk.vec_adds(128, ub(tk)[s], ub(tk, name="y"), 1.0, 1, 8, 8)
    with pytest.raises(err, match="vec_adds: " + msg):
        run(tk)
