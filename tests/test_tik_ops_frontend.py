"""Front-end details the public CANN operators rely on, found by the conformance breadth
(issue 18): sub-tensor element assignment and the inert ``tvm.placeholder``.  The kernels
are our own, in the style of the public operators."""
from __future__ import annotations

import numpy as np
import pytest

from fastisa import shim, tik
from fastisa.tik import platform


@pytest.fixture(autouse=True)
def _default_target():
    platform.set_target("Ascend910")
    yield
    platform.set_target("Ascend910")


def gather_rows_scalar(rows, cols, kernel_name="gather_rows_scalar"):
    """out[r, :] = x[r, :] moved element by element through a sub-tensor view, as the
    public concat kernels do (``output_tensor[offset]`` handed down, then
    ``output_tensor[i] = ub[j]``), with a for_range over rows and one over columns."""
    tk = tik.Tik()
    x = tk.Tensor("float16", (rows, cols), name="x", scope=tik.scope_gm)
    y = tk.Tensor("float16", (rows, cols), name="y", scope=tik.scope_gm)
    ub_in = tk.Tensor("float16", (rows * cols,), name="ub_in", scope=tik.scope_ubuf)
    ub_out = tk.Tensor("float16", (rows * cols,), name="ub_out", scope=tik.scope_ubuf)
    tk.data_move(ub_in, x, 0, 1, rows * cols // 16, 0, 0)

    def copy_row(dst_view, src_view, n):
        with tk.for_range(0, n) as i:
            dst_view[i] = src_view[i]          # TensorView.__setitem__

    with tk.for_range(0, rows) as r:
        copy_row(ub_out[r * cols], ub_in[r * cols], cols)
    tk.data_move(y, ub_out, 0, 1, rows * cols // 16, 0, 0)
    tk.BuildCCE(kernel_name, [x], [y])
    return tk


@pytest.mark.parametrize("rows,cols", [(2, 16), (4, 24)])
def test_subtensor_element_assignment(rows, cols):
    x = np.arange(rows * cols, dtype=np.float16).reshape(rows, cols)
    (y,) = gather_rows_scalar(rows, cols).tikdb.start_debug({"x": x}, interactive=False)
    assert np.array_equal(y.view(np.uint16), x.view(np.uint16))


def test_subtensor_assignment_past_the_end_is_an_access_error():
    tk = tik.Tik()
    u = tk.Tensor("float16", (16,), name="u", scope=tik.scope_ubuf)
    y = tk.Tensor("float16", (16,), name="y", scope=tik.scope_gm)
    tk.vec_dup(16, u, 0.0, 1, 8)
    n = tk.Scalar("int32", "n", init_value=4)
    u[12][n] = 1.0                       # element 16 of a 16-element tensor
    tk.data_move(y, u, 0, 1, 1, 0, 0)
    tk.BuildCCE("k", [], [y])
    from fastisa.errors import AccessError
    with pytest.raises(AccessError, match="need write element 16"):
        tk.tikdb.start_debug({}, interactive=False)


def test_tvm_placeholder_is_a_description_only():
    shim.install()
    from te import tvm
    p = tvm.placeholder((2, 3, 16), dtype="float16", name="image_data")
    assert p.shape == (2, 3, 16) and p.dtype == "float16" and p.name == "image_data"
    assert p.op is p
    with pytest.raises(NotImplementedError, match="placeholder 'image_data'"):
        p + 1
    with pytest.raises(NotImplementedError, match="placeholder 'image_data'"):
        p[0]
    with pytest.raises(NotImplementedError, match="te.tvm.extern is not simulated"):
        tvm.extern([(2, 3, 16)], [p], lambda ins, outs: None)


def test_check_op_params_alternative_kinds():
    # ascend-opp declares attrs as (OPTION_ATTR_FLOAT, OPTION_ATTR_INT): either holds
    shim.install()
    from te.utils import op_utils as ou
    from fastisa.tik.compat.op_utils import OpParamError

    @ou.check_op_params(ou.REQUIRED_INPUT, (ou.OPTION_ATTR_FLOAT, ou.OPTION_ATTR_INT),
                        ou.KERNEL_NAME)
    def op(x, lr, kernel_name="op"):
        return lr

    x = {"shape": (4,), "dtype": "float32"}
    assert op(x, 0.5) == 0.5 and op(x, 3) == 3
    with pytest.raises(OpParamError, match="matches none of"):
        op(x, "fast")


def test_topi_check_input_type_checks_the_keys_a_dict_has():
    # CANN's check_input_type_dict: a dict's "shape"/"dtype" are type-checked when
    # present; strided_slice_grad_d hands pad_d an empty output dict
    shim.install()
    from topi.cce import util
    from fastisa.tik.compat.op_utils import OpParamError

    @util.check_input_type(dict, dict, str)
    def op(x, y, kernel_name="op"):
        return y

    assert op({"shape": (2,), "dtype": "float16"}, {}) == {}
    with pytest.raises(OpParamError, match="shape must be a list or tuple"):
        op({"shape": 2, "dtype": "float16"}, {})
    with pytest.raises(OpParamError, match="dtype must be a str"):
        op({"shape": (2,), "dtype": 16}, {})
    with pytest.raises(OpParamError, match="type error"):
        op([2], {})


# --------------------------------------------------------------------------------------
# vmla: dst = src0 * src1 + dst on the walker, against reference.tik_vector, with the
# walker tests' hypothesis geometry (masks, block/repeat strides, repeats, Scalars)
# --------------------------------------------------------------------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import reference as ref  # noqa: E402
from test_tik_walker import _check, geometry  # noqa: E402


@settings(max_examples=25, deadline=None)
@pytest.mark.parametrize("dtype,targets", [("float16", ["Ascend910", "Ascend910B",
                                                        "Ascend310P"]),
                                           ("float32", ["Ascend910", "Ascend910B"])])
@given(data=st.data())
def test_vmla(dtype, targets, data):
    target = data.draw(st.sampled_from(targets))
    geo = data.draw(geometry(ref.tik_lanes_per_repeat(dtype), 3, "legacy", False))
    if geo[3][0] == 0:
        geo[3][0] = 1  # dst blk stride 0 with dst read: NotImplementedError (below)
    _check("vmla", "bin", dtype, [dtype, dtype], target, geo, data)


def test_vmla_dst_block_stride_0_is_not_implemented():
    # dst read and written by lanes of one repeat that share a block: the hardware's
    # read-all-then-write order is not modelled (as for vaxpy)
    tk = tik.Tik()
    d = tk.Tensor("float16", (256,), name="d", scope=tik.scope_ubuf)
    a = tk.Tensor("float16", (256,), name="a", scope=tik.scope_ubuf)
    with pytest.raises(NotImplementedError, match="vmla or in place"):
        tk.vmla(128, d, a, a, 1, 0, 1, 1, 8, 8, 8)


@pytest.mark.parametrize("dst,src,match", [("int32", "int32", "not supported"),
                                           ("float32", "float16", "dtype")])
def test_vmla_dtype_errors(dst, src, match):
    from fastisa.errors import ConstraintError
    tk = tik.Tik()
    d = tk.Tensor(dst, (128,), name="d", scope=tik.scope_ubuf)
    a = tk.Tensor(src, (128,), name="a", scope=tik.scope_ubuf)
    with pytest.raises(ConstraintError, match=match):
        tk.vmla(64, d, a, a, 1, 1, 1, 1, 8, 8, 8)


def test_vmla_stride_range_error():
    from fastisa.errors import ConstraintError
    tk = tik.Tik()
    d = tk.Tensor("float16", (4096,), name="d", scope=tik.scope_ubuf)
    with pytest.raises(ConstraintError, match="dst_blk_stride"):
        tk.vmla(128, d, d, d, 1, 256, 1, 1, 8, 8, 8)
