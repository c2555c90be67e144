# The whole C API of csrc/fastisa/, declared once.  Every .pyx cimports from here.
# One section per header; keep declarations in the header's order.
from libc.stdint cimport int8_t, uint8_t, int16_t, uint16_t, int32_t, uint32_t, int64_t, uint64_t

# ---- formats.h -------------------------------------------------------------
cdef extern from "formats.h" nogil:
    ctypedef enum fi_format:
        FI_UINT8, FI_INT8, FI_UINT16, FI_INT16, FI_UINT32, FI_INT32,
        FI_FLOAT8_E4M3, FI_FLOAT8_E5M2, FI_FLOAT8_E4M3FN, FI_FLOAT8_E8M0FNU,
        FI_FLOAT16, FI_BFLOAT16, FI_TFLOAT32, FI_FLOAT32,
        FI_FLOAT8_E5M2_X4, FI_FLOAT8_E4M3FN_X4, FI_FLOAT4_E2M1FN_X4,
        FI_BOOL, FI_FLOAT4_E2M1FN, FI_NUM_FORMATS
    uint32_t fi_f32_bits(float f)
    float fi_bits_f32(uint32_t u)
    uint16_t fi_f32_to_bf16(float f)
    float fi_bf16_to_f32(uint16_t h)
    uint16_t fi_f64_to_bf16(double d)
    float fi_f16_to_f32(uint16_t h)
    uint16_t fi_f32_to_f16(float f)
    uint16_t fi_f64_to_f16(double d)
    uint16_t fi_f16_saturate(uint16_t h)
    float fi_f32_saturate(float f)
    int8_t fi_f32_to_i8(float f)
    uint8_t fi_f32_to_u8(float f)
    int16_t fi_f32_to_i16(float f)
    uint16_t fi_f32_to_u16(float f)
    int32_t fi_f32_to_i32(float f)
    uint32_t fi_f32_to_u32(float f)

# ---- convert.h (number formats) --------------------------------------------

# ---- walker.h (TIK repeat/stride/mask walker) ------------------------------

# ---- select.h (NKI top-k and max8 family) ----------------------------------

# ---- nki.h (NKI elementwise / reduce / activation) ---------------------------

# ---- tile.h (PTO tile kernels) ---------------------------------------------
cdef extern from "tile.h" nogil:
    ctypedef enum fi_tile_op:
        FI_TOP_COPY, FI_TOP_ABS, FI_TOP_NEG, FI_TOP_RELU, FI_TOP_RECIP, FI_TOP_EXP,
        FI_TOP_LOG, FI_TOP_SQRT, FI_TOP_RSQRT, FI_TOP_ADD, FI_TOP_SUB, FI_TOP_MUL,
        FI_TOP_DIV, FI_TOP_MAX, FI_TOP_MIN, FI_TOP_EXPDIF, FI_TOP_SUM
    ctypedef enum fi_round_mode:
        FI_RND_NONE, FI_RND_RINT, FI_RND_ROUND, FI_RND_FLOOR, FI_RND_CEIL, FI_RND_TRUNC,
        FI_RND_ODD
    ctypedef struct fi_tile_arg:
        void *p
        int fmt
        Py_ssize_t rs
        Py_ssize_t cs
    int FI_TILE_CHUNK
    void fi_tile_init()
    void fi_tile_set_threads(int n)
    void fi_tile_unary(int op, fi_tile_arg d, fi_tile_arg s, int R, int C)
    void fi_tile_binary(int op, fi_tile_arg d, fi_tile_arg a, int avc, fi_tile_arg b, int bvc,
                        int R, int C)
    void fi_tile_rowreduce(int op, fi_tile_arg d, fi_tile_arg s, int R, int C)
    void fi_tile_colreduce(int op, fi_tile_arg d, fi_tile_arg s, int R, int C)
    void fi_tile_matmul(fi_tile_arg d, fi_tile_arg a, fi_tile_arg b, int M, int K, int N)
    void fi_tile_cvt(int mode, fi_tile_arg d, fi_tile_arg s, int R, int C)

# ---- end ---------------------------------------------------------------------
