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
cdef extern from "walker.h" nogil:
    ctypedef struct fi_tik_instr:
        int64_t op
        int64_t fmt[3]
        int64_t off[3]
        int64_t blk[3]
        int64_t rep[3]
        int64_t nrep, par, mask_lo, mask_hi, counter, tail, sat, rnd
        double scalar
    enum: FI_TIK_NPARAM
    void fi_tik_vector(const fi_tik_instr *ins, uint8_t *dbuf, const uint8_t *s0buf,
                       const uint8_t *s1buf)
    void fi_tik_reduce(const fi_tik_instr *ins, uint8_t *dbuf, const uint8_t *sbuf)
    void fi_tik_dma(uint8_t *dst, const uint8_t *src, int64_t nburst, int64_t burst,
                    int64_t src_gap, int64_t dst_gap)

# ---- select.h (NKI top-k and max8 family) ----------------------------------

# ---- nki.h (NKI elementwise / reduce / activation) ---------------------------

# ---- tile.h (PTO tile kernels) ---------------------------------------------

# ---- end ---------------------------------------------------------------------
