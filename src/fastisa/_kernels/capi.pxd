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
cdef extern from "convert.h" nogil:
    enum:
        FI_KIND_INT, FI_KIND_FLOAT, FI_KIND_PACKED, FI_KIND_BOOL
        FI_OVF_INF, FI_OVF_NAN, FI_OVF_SATURATE, FI_OVF_NONE
        FI_SAT_NONE, FI_SAT_MAX, FI_SAT_ASCEND
    ctypedef struct fi_format_traits_t:
        const char *name
        int code
        int kind
        int bits
        int exp_bits
        int man_bits
        int bias
        int is_signed
        double max_finite
        double min_normal
        double min_subnormal
        int has_inf
        int n_nan_codes
        uint32_t nan_codes[14]
        int overflow
        int container_bits
        int lanes
        int element
    const fi_format_traits_t fi_format_traits[19]
    uint32_t fi_encode_f32(int fmt, float x, int saturate)
    float fi_decode_f32(int fmt, uint32_t code)
    void fi_encode_f32_array(int fmt, const float *src, void *dst, Py_ssize_t n, int saturate)
    void fi_decode_f32_array(int fmt, const void *src, float *dst, Py_ssize_t n)
    void fi_convert_array(int sfmt, const void *src, int dfmt, void *dst, Py_ssize_t n, int saturate)
    void fi_pack_x4(int fmt, const uint8_t *src, void *dst, Py_ssize_t n)
    void fi_unpack_x4(int fmt, const void *src, uint8_t *dst, Py_ssize_t n)

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
    void fi_tik_reduce_arg(const fi_tik_instr *ins, uint8_t *dbuf, const uint8_t *sbuf)
    enum: FI_TIK_OK, FI_TIK_BAD_PARAMS, FI_TIK_OUT_OF_BOUNDS
    int fi_tik_check_vector(const fi_tik_instr *ins, const int64_t *length)
    int fi_tik_check_reduce(const fi_tik_instr *ins, int64_t dlen, int64_t slen, int pair)
    int fi_tik_check_dma(int64_t dlen, int64_t doff, int64_t slen, int64_t soff,
                         int64_t nburst, int64_t burst, int64_t src_gap, int64_t dst_gap)

# ---- select.h (NKI top-k and max8 family) ----------------------------------
cdef extern from "select.h" nogil:
    int fi_topk_bf16(const uint16_t *src, Py_ssize_t ps, int groups, int n, int k, int sorted,
                     uint16_t *val, Py_ssize_t vps, Py_ssize_t vfs,
                     uint32_t *idx, Py_ssize_t ips, Py_ssize_t ifs, int threads)
    void fi_max8_f32(const float *src, Py_ssize_t ps, int P, int N, float *out_val,
                     uint32_t *out_idx)
    void fi_find_index8_f32(const float *data, Py_ssize_t ps, int P, int N, const float *vals,
                            uint32_t *out)
    void fi_match_replace8_f32(float *work, Py_ssize_t ps, int P, int N, const float *vals,
                               float imm, uint32_t *out_idx)

# ---- nki.h (NKI elementwise / reduce / activation) ---------------------------
cdef extern from "nki.h" nogil:
    ctypedef struct fi_nki_view:
        const void *ptr
        int fmt
        Py_ssize_t sp, sf
    ctypedef struct fi_nki_stage_desc:
        int op, rev, tensor
        const float *f
        Py_ssize_t fsp
        const uint32_t *u
        Py_ssize_t usp
    ctypedef struct fi_nki_ew:
        int P, F
        void *dst
        int dst_fmt
        Py_ssize_t dst_sp, dst_sf
        fi_nki_view in0, in1
        fi_nki_stage_desc st[2]
        int raw, itemsize, bitvec, intmode, act, scalar_engine
        double alpha
        const double *lut
        const uint64_t *lutp
        float *acc
        Py_ssize_t acc_sp
        int acc_max
        int threads
        const double *alpha_v
    ctypedef struct fi_nki_reduce_args:
        int P, F
        fi_nki_view inp "in"
        void *out
        int out_fmt
        Py_ssize_t out_sp
        int op, bitvec, negate, threads
    void fi_nki_init()
    int64_t fi_nki_elementwise(const fi_nki_ew *a)
    void fi_nki_reduce(const fi_nki_reduce_args *a)
    double fi_nki_act(int act, double x, double alpha)
    double fi_nki_sin_scalar(double x)
    void fi_nki_encode_f64_array(int fmt, void *dst, const double *inp, int n)
    void fi_nki_dma_sum(void *dst, int dfmt, int disz, const void *const *src, const int *fmt,
                        const int *isz, int ns, Py_ssize_t n, int nt)


# ---- nki_matmul.h (nc_matmul) ----------------------------------------------
cdef extern from "par.h" nogil:
    int fi_par_threads(int nt)

cdef extern from "nki_matmul.h" nogil:
    void fi_nki_matmul_f32(float *out, const float *s, const float *v, int K, int M, int N,
                           int nt)
    void fi_nki_matmul(float *out, const void *s, int sfmt, int sisz, Py_ssize_t s_sp,
                       Py_ssize_t s_sf, const void *v, int vfmt, int visz, Py_ssize_t v_sp,
                       Py_ssize_t v_sf, int K, int M, int N, int nt, float *sbuf, int nsb,
                       float *vbuf, int zero)
    int fi_nki_matmul_submit(float *out, const void *s, int sfmt, int sisz, Py_ssize_t s_sp,
                             Py_ssize_t s_sf, const void *v, int vfmt, int visz,
                             Py_ssize_t v_sp, Py_ssize_t v_sf, int K, int M, int N, int nt,
                             float *sbuf, int nsb, float *vbuf, int zero)
    void fi_nki_matmul_join()
    int fi_nki_matmul_attach_ew(const fi_nki_ew *a, const float *fv)
    int fi_nki_matmul_can_submit()
    # the matmul kernels' instruction set (cpu.h FI_MM_ISA_*: -1 auto, 0 scalar, 1 AVX2,
    # 2 AVX-512)
    int fi_nki_set_mm_isa(int level)
    int fi_nki_mm_isa()


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
    void fi_tile_matmul(fi_tile_arg d, fi_tile_arg a, fi_tile_arg b, fi_tile_arg c,
                        int has_init, int M, int K, int N)
    void fi_tile_cvt(int mode, fi_tile_arg d, fi_tile_arg s, int R, int C)

# ---- end ---------------------------------------------------------------------


# ---- nki-isa family (scan.h, move.h, stats.h, mx.h) ---------------------------
cdef extern from "scan.h" nogil:
    ctypedef struct fi_scan_in:
        const void *ptr
        int fmt
        Py_ssize_t sp, sf
    ctypedef struct fi_scan_args:
        int P, F
        void *dst
        int dst_fmt, itemsize
        Py_ssize_t dst_sp, dst_sf
        fi_scan_in in0, in1
        const float *init
        Py_ssize_t init_sp
        int op0, rev0, op1, rev1
        float *acc
        int threads
    void fi_scan_tensor_tensor(const fi_scan_args *a)
    void fi_scan_cumulative(const fi_scan_args *a)
    void fi_scan_reduce(const fi_scan_args *a)

cdef extern from "move.h" nogil:
    void fi_move_strided(char *dst, const Py_ssize_t *ds, const char *src, const Py_ssize_t *ss,
                         const Py_ssize_t *shape, int itemsize)
    void fi_move_copy(char *dst, const Py_ssize_t *ds, const char *src, const Py_ssize_t *ss,
                      const Py_ssize_t *shape, int itemsize, int nt)
    void fi_move_rows(char *dst, Py_ssize_t dsp, Py_ssize_t dsf, const char *src, Py_ssize_t ssp,
                      Py_ssize_t ssf, const int32_t *map, int R, Py_ssize_t F, int itemsize,
                      int nt)
    # speed14b branch (issue 14): nc_stream_shuffle with dst and src one array
    int fi_move_rows_inplace(char *base, Py_ssize_t sp, Py_ssize_t sf, const int32_t *map, int R,
                             Py_ssize_t F, int itemsize, int nt)
    void fi_move_predicated(char *dst, Py_ssize_t dsp, Py_ssize_t dsf, const char *src,
                            Py_ssize_t ssp, Py_ssize_t ssf, const char *pred, Py_ssize_t psp,
                            Py_ssize_t psf, int pwidth, int rev, int P, Py_ssize_t F, int itemsize)
    int fi_move_gather(char *dst, Py_ssize_t dsp, Py_ssize_t dsf, const char *data, Py_ssize_t dtsp,
                       const uint32_t *idx, Py_ssize_t isp, Py_ssize_t isf, int P, Py_ssize_t J,
                       uint32_t n, int itemsize)
    void fi_move_nonzero(int32_t *out, Py_ssize_t osf, const char *src, Py_ssize_t ssf,
                         int is_float, Py_ssize_t n, int32_t offset, int32_t pad)

cdef extern from "stats.h" nogil:
    void fi_stats_bn_stats(const void *src, int fmt, int itemsize, Py_ssize_t sp, Py_ssize_t sf,
                           int P, int F, float *out)
    void fi_stats_bn_aggr(const float *inp, int P, int k, float *out)
    void fi_stats_partition_reduce(const void *src, int fmt, int itemsize, Py_ssize_t sp,
                                   Py_ssize_t sf, int P, int F, int op, float *out,
                                   uint32_t *out_bits)
cdef extern from "mx.h" nogil:
    void fi_mx_quantize(const uint16_t *src, int is_bf16, Py_ssize_t sp, Py_ssize_t sf, int P,
                        int F, int dst_fmt, uint8_t *codes, uint8_t *scales)
    void fi_mx_dequant(const void *x4, int elem_fmt, Py_ssize_t sp, Py_ssize_t sf, int K, int J,
                       const uint8_t *scale, Py_ssize_t ssp, Py_ssize_t ssf, float *out)
cdef extern from "rand.h" nogil:
    void fi_rand_bits(uint32_t *state, int P, int nsub, Py_ssize_t F, uint32_t *out)
    void fi_rand_uniform(uint32_t *state, int P, int nsub, Py_ssize_t F, const float *lo,
                         const float *hi, Py_ssize_t ls, float *out)
    void fi_rand_keep(uint32_t *state, int P, int nsub, Py_ssize_t F, const float *prob,
                      Py_ssize_t ps, uint8_t *keep, uint32_t *scratch)
# ---- end of nki-isa family ---------------------------------------------------
# ---- cmpsel.h (TIK compare/select: vcmp, vcmpv, vcmpvs, vsel; tik-isa) -------------
cdef extern from "cmpsel.h" nogil:
    ctypedef struct fi_cs_instr:
        int64_t fmt
        int64_t off[3]
        int64_t blk[3]
        int64_t rep[3]
        int64_t nrep, par, mask_lo, mask_hi, cmp, src1_scalar, sbits, mode, sel_off
        int64_t cm_lo, cm_hi
    enum: FI_CS_NPARAM
    void fi_tik_cmp_bits(const fi_cs_instr *ins, const uint8_t *ub, uint8_t *out)
    void fi_tik_vsel(const fi_cs_instr *ins, uint8_t *ub)

# ---- transpose.h (TIK vnchwconv / vec_trans_scatter, vtranspose / vec_trans; tik-isa) -
cdef extern from "transpose.h" nogil:
    void fi_tik_nchwconv(uint8_t *ub, const int64_t *dst_off, const int64_t *src_off,
                         int64_t es, int64_t nrep, int64_t dst_rep, int64_t src_rep,
                         int dst_hi, int src_hi)
    void fi_tik_transpose16(uint8_t *ub, int64_t dst_off, int64_t src_off, int64_t nrep,
                            int64_t dst_rep, int64_t src_rep)


# ---- speed15 branch: tile.h's exp code choice ------------------------------------------
cdef extern from "tile.h" nogil:
    int fi_tile_set_exp_simd(int on)

# ---- par.h (the shared worker pool; its implementation is in fastisa._kernels.par) ----
cdef extern from "par.h" nogil:
    void fi_par_install(void *run)
    void fi_par_install_async(void *submit, void *join, void *attach)

from cpython.pycapsule cimport PyCapsule_GetPointer


cdef inline int use_shared_pool() except -1:
    """Point this module's par.h at the process's one pool (fastisa._kernels.par); call it
    once at module import.  Until then the module's kernels run serially."""
    from fastisa._kernels import par
    fi_par_install(PyCapsule_GetPointer(par._run, b"fastisa.par.run"))
    return 0
