"""``te.platform.cce_params``: the constants TIK operators read.

Values as the 2020 CANN ``te/platform/cce_params.py`` defines them
(caffe-huawei-atlas-convertor ``convertor/huawei/te/platform/cce_params.py``): the vector
unit's 256-byte repeat of 8 blocks, at most 255 repeats, the cube's 16x16 fractal (32 for
int8 reduce), the scope names, the SoC names.
"""
from __future__ import annotations

from .. import _program as _P

scope_gm = _P.scope_gm
scope_ubuf = _P.scope_ubuf
scope_cbuf = _P.scope_cbuf
scope_cbuf_out = _P.scope_cbuf_out
scope_ca = _P.scope_ca
scope_cb = _P.scope_cb
scope_cc = _P.scope_cc
scope_reg = "local.REG"
scope_aicpu = "local_aicpu"
dma_copy = "dma_copy"
dma_copy_global = "global"

VECTOR_INST_BLOCK_WIDTH = 256
VECTOR_INST_BLOCK_NUM = 8
VECTOR_INST_MAX_REPEAT_TIMES = 255
WGT_WIDTH = INP_WIDTH = OUT_WIDTH = 16
BLOCK_IN = BLOCK_OUT = BLOCK_REDUCE = 16
BLOCK_REDUCE_INT8 = 32
BLOCK_VECTOR = 1
INP_ELEM_BYTES = BLOCK_IN * BLOCK_REDUCE * INP_WIDTH // 8
WGT_ELEM_BYTES = BLOCK_OUT * BLOCK_REDUCE * WGT_WIDTH // 8
OUT_ELEM_BYTES = BLOCK_IN * BLOCK_OUT * OUT_WIDTH // 8
GLB_ELEM_BYTES = 16 * OUT_WIDTH // 8
GEMM_MODE, GEVM_MODE, CONV_MODE = 0, 1, 2
C0_SIZE = 16
ELEMENTS_VECTOR_OP_FP16 = 128
DEFAULT_MUL_VALUE = 1
DEFAULT_ADD_VALUE = 0
VECTOR_COPY_NBURST_LIMIT = 4096
VECTOR_SINGLE_BLOCK_WIDTH_FP16 = 16
CUBE_MKN = {"int8": {"mac": [16, 32, 16]}, "uint8": {"mac": [16, 32, 16]},
            "int32": {"mac": [16, 16, 16]}, "float16": {"mac": [16, 16, 16]},
            "float32": {"mac": [16, 16, 16]}}

ASCEND_310 = "Ascend310"
ASCEND_910 = "Ascend910"
ASCEND_610 = "Ascend610"
ASCEND_620 = "Ascend620"
HI3796CV300ES = "Hi3796CV300ES"
HI3796CV300CS = "Hi3796CV300CS"
AIC = ASCEND_610 + "AiCore"
VEC = ASCEND_620 + "VectorCore"
ASCEND_310AIC = ASCEND_310 + "AiCore"
ASCEND_910AIC = ASCEND_910 + "AiCore"
HI3796CV300ESAIC = HI3796CV300ES + "AiCore"
HI3796CV300CSAIC = HI3796CV300CS + "AiCore"


class _WorkspaceList:
    """``TIK_WORKSPACE_SIZE_LIST`` / ``TIK_ATOMIC_ADD_LIST``: thread-local lists BuildCCE
    fills for the compiler; operators only reset them (``.local_list = []``)."""

    def __init__(self):
        self.local_list = []


TIK_WORKSPACE_SIZE_LIST = _WorkspaceList()
TIK_ATOMIC_ADD_LIST = _WorkspaceList()
