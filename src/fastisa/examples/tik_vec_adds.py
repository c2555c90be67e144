"""the TIK docs, Vector-Scalar Instructions: General Definition (Ascend TIK API reference, hiascend.com)'s two ``vec_adds`` examples, as written in the spec (TIK user code).

1. Contiguous: add 2 to a (2, 256) float16 tensor, mask 128, 4 repeats, rep strides 8.
2. Discontiguous: add 2 to 128 elements and place every 32 results 32 elements apart
   (mask 32, 4 repeats, dst_rep_stride 4, src_rep_stride 2) into a zeroed (8, 32) tensor:
   the odd rows stay 0.
"""

from __future__ import annotations

import numpy as np

from tbe import tik

from fastisa import cost
from fastisa.examples import Report

TITLE = "TIK vec_adds docs examples: contiguous and discontiguous data (TIK)"
FRONTEND = "tik"
ORDER = 0

dtype_size = {
    "int8": 1, "uint8": 1, "int16": 2, "uint16": 2, "float16": 2,
    "int32": 4, "uint32": 4, "float32": 4, "int64": 8,
}


def build_contiguous():
    """the TIK docs, Vector-Scalar Instructions: General Definition (Ascend TIK API reference, hiascend.com) 'Example of contiguous data operations', verbatim."""
    tik_instance = tik.Tik()
    shape = (2, 256)
    dtype = "float16"
    elements = 2 * 256
    mask = 128
    repeat_times = 4
    dst_rep_stride = 8
    src_rep_stride = 8
    src_gm = tik_instance.Tensor(dtype, shape, name="src_gm", scope=tik.scope_gm)
    dst_gm = tik_instance.Tensor(dtype, shape, name="dst_gm", scope=tik.scope_gm)
    src_ub = tik_instance.Tensor(dtype, shape, name="src_ub", scope=tik.scope_ubuf)
    dst_ub = tik_instance.Tensor(dtype, shape, name="dst_ub", scope=tik.scope_ubuf)
    scalar = tik_instance.Scalar(dtype=dtype, init_value=2)
    nburst = 1
    burst = elements * dtype_size[dtype] // 32 // nburst
    dst_stride, src_stride = 0, 0
    tik_instance.data_move(src_ub, src_gm, 0, nburst, burst, src_stride, dst_stride)
    tik_instance.vec_adds(mask, dst_ub, src_ub, scalar, repeat_times, dst_rep_stride,
                          src_rep_stride)
    tik_instance.data_move(dst_gm, dst_ub, 0, nburst, burst, src_stride, dst_stride)
    tik_instance.BuildCCE(kernel_name="vec_adds", inputs=[src_gm], outputs=[dst_gm])
    return tik_instance


def build_discontiguous():
    """the TIK docs, Vector-Scalar Instructions: General Definition (Ascend TIK API reference, hiascend.com) 'Example of discontiguous data operations', verbatim."""
    tik_instance = tik.Tik()
    src_shape = (4, 32)
    dst_shape = (8, 32)
    dtype = "float16"
    src_elements = 4 * 32
    dst_elements = 8 * 32
    mask = 32
    repeat_times = 4
    dst_rep_stride = 4
    src_rep_stride = 2
    src_gm = tik_instance.Tensor(dtype, src_shape, name="src_gm", scope=tik.scope_gm)
    dst_gm = tik_instance.Tensor(dtype, dst_shape, name="dst_gm", scope=tik.scope_gm)
    src_ub = tik_instance.Tensor(dtype, src_shape, name="src_ub", scope=tik.scope_ubuf)
    dst_ub = tik_instance.Tensor(dtype, dst_shape, name="dst_ub", scope=tik.scope_ubuf)
    scalar = tik_instance.Scalar(dtype=dtype, init_value=2)
    nburst = 1
    burst = src_elements * dtype_size[dtype] // 32 // nburst
    dst_burst = dst_elements * dtype_size[dtype] // 32 // nburst
    dst_stride, src_stride = 0, 0
    tik_instance.data_move(src_ub, src_gm, 0, nburst, burst, src_stride, dst_stride)
    tik_instance.vec_dup(128, dst_ub, 0, 2, 8)
    tik_instance.vec_adds(mask, dst_ub, src_ub, scalar, repeat_times, dst_rep_stride,
                          src_rep_stride)
    tik_instance.data_move(dst_gm, dst_ub, 0, nburst, dst_burst, src_stride, dst_stride)
    tik_instance.BuildCCE(kernel_name="vec_adds", inputs=[src_gm], outputs=[dst_gm])
    return tik_instance


def expected_contiguous(x):
    """The spec's printed output: every element + 2 (float16)."""
    return (x.astype(np.float32) + 2).astype(np.float16)


def expected_discontiguous(x):
    """The spec's printed output: row 2k = input row k + 2, odd rows 0."""
    out = np.zeros((8, 32), dtype=np.float16)
    out[0::2] = (x.astype(np.float32) + 2).astype(np.float16)
    return out


def demo(seed: int = 0) -> Report:
    """Run both examples on the spec's inputs (0, 1, 2, ...) and check the outputs."""
    rep = Report("tik_vec_adds", TITLE, description=__doc__)
    x1 = np.arange(512, dtype=np.float16).reshape(2, 256)
    x2 = np.arange(128, dtype=np.float16).reshape(4, 32)
    with cost.profiling() as prof:
        (y1,) = build_contiguous().tikdb.start_debug({"src_gm": x1}, interactive=False)
        (y2,) = build_discontiguous().tikdb.start_debug({"src_gm": x2}, interactive=False)
    rep.inputs = [("contiguous src_gm", x1), ("discontiguous src_gm", x2)]
    rep.outputs = [("contiguous dst_gm", y1), ("discontiguous dst_gm", y2)]
    rep.check("contiguous: dst_gm == src_gm + 2 (the TIK docs, Vector-Scalar Instructions: General Definition (Ascend TIK API reference, hiascend.com) printed output), bit-exact",
              np.array_equal(y1.view(np.uint16), expected_contiguous(x1).view(np.uint16)))
    rep.check("discontiguous: rows 0,2,4,6 = src rows + 2 and rows 1,3,5,7 = 0 "
              "(the TIK docs, Vector-Scalar Instructions: General Definition (Ascend TIK API reference, hiascend.com) printed output), bit-exact",
              np.array_equal(y2.view(np.uint16), expected_discontiguous(x2).view(np.uint16)))
    rep.cycles = prof.totals()
    rep.notes.append("engine cycles are fastisa's estimates (Vector: 8 + 1 per repeat; "
                     "MTE: 32 + 1 per 32-byte block), not from the spec")
    return rep
