/* fastisa NKI compute kernels: one elementwise shape and one reduce shape (nc_matmul's
 * matmul shape is nki_matmul.h; dma_compute's sum is at the end of this file).
 *
 * Python-free, header-only, static inline, every name with the fi_nki_ prefix.
 * The instruction is data: a fi_nki_ew describes one elementwise instruction
 * (tensor_scalar, tensor_tensor, scalar_tensor_tensor, activation, exponential,
 * reciprocal, tensor_copy) as
 *
 *     t   = decode(in0)                         (any format -> float32, exact or RNE for int32)
 *     t   = t  opA  a        (a: per-partition float32 scalar, or in1's element)
 *     t   = t  opB  b        (each stage optionally reversed: a opA t)
 *     y   = act(t)           in float64 (or y = t when there is no activation)
 *     acc[p] = acc[p] + (float)y     sequentially along the free axis (optional)
 *     dst = encode(y)        rounded ONCE to dst's format (RNE; integers saturate)
 *
 * over a [P, F] strided 2-D view.  Rows are processed in groups of FI_NKI_G rows and
 * column chunks of FI_NKI_CH elements; each stage is one loop over a chunk with the op
 * switch hoisted out of it.  Bit-pattern (bitvec) instructions use a uint32 pipeline.
 * The reduce shape (tensor_reduce) folds each row left to right.
 *
 * Kernels never validate: the Python front-end (fastisa.nki._compute) checks every
 * constraint first.  Strides are in elements.  NaN rules: maximum/minimum propagate NaN
 * (canonical quiet NaN) and order -0 < +0 (IEEE 754-2019 maximum/minimum), so the
 * reductions are order-independent.
 *
 * Formats handled: uint8, int8, uint16, int16, uint32, int32, bool_, float8_e4m3,
 * float8_e5m2, float8_e4m3fn, float16, bfloat16, tfloat32, float32.
 */
#ifndef FASTISA_NKI_H
#define FASTISA_NKI_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <stdlib.h>

#include "formats.h"
#include "par.h"

#ifdef FASTISA_OPENMP
#include <omp.h>
#endif

/* The row workers are kept out of line: inlined into the threaded dispatchers under the
 * -fwrapv that Python extensions are built with, GCC stops vectorising their loops. */
#if defined(__GNUC__)
#define FI_NKI_NOINLINE __attribute__((noinline))
#else
#define FI_NKI_NOINLINE
#endif

#define FI_NKI_G 8      /* rows per group (independent accumulation chains) */
#define FI_NKI_CH 512   /* columns per chunk */

/* ---- operators (mirrors fastisa.nki.ops.Op.alu) ------------------------------------ */
enum {
    FI_ALU_NONE = 0,
    FI_ALU_ADD, FI_ALU_SUB, FI_ALU_MUL, FI_ALU_MAX, FI_ALU_MIN,
    FI_ALU_EQ, FI_ALU_NE, FI_ALU_GE, FI_ALU_GT, FI_ALU_LE, FI_ALU_LT,
    FI_ALU_LAND, FI_ALU_LOR, FI_ALU_LXOR, FI_ALU_POW, FI_ALU_ABS_MAX, FI_ALU_ABS_MIN,
    /* arithmetic unary (the operand is ignored) */
    FI_ALU_ABS, FI_ALU_SQUARE, FI_ALU_RELU, FI_ALU_RSQRT, FI_ALU_RECIP,
    /* bitvec (uint32 bit patterns) */
    FI_ALU_INVERT, FI_ALU_AND, FI_ALU_OR, FI_ALU_XOR, FI_ALU_SHL, FI_ALU_SHR,
    /* select: t = (in1 != 0) != rev ? t : the per-partition scalar (select_reduce ...) */
    FI_ALU_SELECT,
    /* nki.language-only (no nki.isa op= in SDK 2.33's Table 8; fastisa.nki.tiles uses them
     * for nl.divide / nl.mod / nl.fmod and the unary nl.floor / nl.ceil / nl.trunc) */
    FI_ALU_DIV, FI_ALU_MOD, FI_ALU_FMOD, FI_ALU_FLOOR, FI_ALU_CEIL, FI_ALU_TRUNC,
    FI_ALU_COUNT
};

/* ---- activation functions (mirrors fastisa.nki.ops.Op.act) ---------------------------- */
enum {
    FI_ACT_NONE = 0,
    FI_ACT_COPY, FI_ACT_SQUARE, FI_ACT_SIGMOID, FI_ACT_RELU, FI_ACT_PRELU, FI_ACT_GELU,
    FI_ACT_GELU_DX, FI_ACT_GELU_TANH, FI_ACT_GELU_SIGMOID, FI_ACT_GELU_SIGMOID_DX,
    FI_ACT_SILU, FI_ACT_SILU_DX, FI_ACT_TANH, FI_ACT_SOFTPLUS, FI_ACT_MISH, FI_ACT_ERF,
    FI_ACT_ERF_DX, FI_ACT_EXP, FI_ACT_LOG, FI_ACT_LOG1P, FI_ACT_SIN, FI_ACT_ARCTAN,
    FI_ACT_SQRT, FI_ACT_RSQRT, FI_ACT_RECIP, FI_ACT_SIGN, FI_ACT_ABS,
    FI_ACT_COUNT
};

/* ---- float8 traits ------------------------------------------------------------------ */
typedef struct {
    int man;            /* mantissa bits */
    int bias;
    double max_finite;
    int overflow_nan;   /* 1: overflow and inf -> NaN (e4m3fn); 0: -> inf */
    uint8_t inf_code;   /* unsigned inf code (when !overflow_nan) */
    uint8_t nan_code;   /* unsigned canonical NaN code (ml_dtypes') */
    int ieee_special;   /* 1: top exponent holds inf/NaN (e4m3, e5m2); 0: only 0x7f is NaN */
} fi_nki_fp8_traits;

static inline const fi_nki_fp8_traits *fi_nki_fp8(int fmt) {
    static const fi_nki_fp8_traits e4m3 = {3, 7, 240.0, 0, 0x78, 0x7c, 1};
    static const fi_nki_fp8_traits e5m2 = {2, 15, 57344.0, 0, 0x7c, 0x7e, 1};
    static const fi_nki_fp8_traits e4m3fn = {3, 7, 448.0, 1, 0x7f, 0x7f, 0};
    return fmt == FI_FLOAT8_E4M3 ? &e4m3 : fmt == FI_FLOAT8_E5M2 ? &e5m2 : &e4m3fn;
}

static float fi_nki_fp8_table[3][256];   /* filled by fi_nki_init() */

static inline float fi_nki_fp8_decode(const fi_nki_fp8_traits *t, uint8_t c) {
    int sign = c >> 7, m = t->man, ebits = 7 - m;
    int e = (c >> m) & ((1 << ebits) - 1), f = c & ((1 << m) - 1);
    float v;
    if (t->ieee_special && e == (1 << ebits) - 1) {
        v = f ? NAN : INFINITY;
    } else if (!t->ieee_special && (c & 0x7f) == 0x7f) {
        v = NAN;
    } else if (e == 0) {
        v = ldexpf((float)f, 1 - t->bias - m);
    } else {
        v = ldexpf((float)(f | (1 << m)), e - t->bias - m);
    }
    return sign ? -v : v;
}

/* Fill the float8 decode tables; call once before the first kernel (idempotent). */
static inline void fi_nki_init(void) {
    for (int f = 0; f < 3; f++)
        for (int c = 0; c < 256; c++)
            fi_nki_fp8_table[f][c] = fi_nki_fp8_decode(fi_nki_fp8(FI_FLOAT8_E4M3 + f), (uint8_t)c);
}

/* Round x to a float with `man` mantissa bits and minimum normal exponent `emin`
 * (subnormals kept), RNE, with an unbounded exponent.  Exact for every double. */
static inline double fi_nki_round_p(double x, int man, int emin) {
    double a = fabs(x);
    int e;
    if (!(a <= 1.79769313486231570815e308) || a == 0.0) return x;
    frexp(a, &e);
    e -= 1;                                   /* a in [2^e, 2^(e+1)) */
    if (e < emin) e = emin;
    double q = ldexp(1.0, e - man);
    double r = nearbyint(a / q) * q;
    return copysign(r, x);
}

static inline uint8_t fi_nki_fp8_encode(const fi_nki_fp8_traits *t, double x) {
    uint8_t sign = signbit(x) ? 0x80 : 0;
    double r;
    int e;
    if (x != x) return (uint8_t)(sign | t->nan_code);
    r = fabs(fi_nki_round_p(x, t->man, 1 - t->bias));
    if (r > t->max_finite) return (uint8_t)(sign | (t->overflow_nan ? t->nan_code : t->inf_code));
    if (r == 0.0) return sign;
    frexp(r, &e);
    e -= 1;
    if (e < 1 - t->bias) {                    /* subnormal */
        return (uint8_t)(sign | (uint8_t)ldexp(r, t->bias - 1 + t->man));
    }
    return (uint8_t)(sign | (uint8_t)((e + t->bias) << t->man) |
                     (uint8_t)(ldexp(r, t->man - e) - (double)(1 << t->man)));
}

/* tfloat32 (1, 8, 10) in a float32 container. */
static inline float fi_nki_tf32(double x) {
    float r;
    if (x != x) return fi_bits_f32((signbit(x) ? 0x80000000u : 0u) | 0x7fc00000u);
    r = (float)fi_nki_round_p(x, 10, -126);     /* exact in float (or +-inf) */
    if (fabsf(r) > 0x1.ffcp127f) r = copysignf(INFINITY, r);
    return r;
}

/* ---- row decode / encode ----------------------------------------------------------- */
#define FI_NKI_LOOP(T, EXPR)                                                        \
    do {                                                                            \
        const T *s_ = (const T *)src;                                               \
        if (sf == 1) { for (int i = 0; i < n; i++) { T v = s_[i]; out[i] = (EXPR); } } \
        else { for (int i = 0; i < n; i++) { T v = s_[(ptrdiff_t)i * sf]; out[i] = (EXPR); } } \
    } while (0)

/* out[i] = float32 value of element i of a row (exact; int32/uint32 RNE). */
static inline void fi_nki_decode(int fmt, const void *src, ptrdiff_t sf, int n, float *out) {
    switch (fmt) {
    case FI_UINT8: case FI_BOOL: FI_NKI_LOOP(uint8_t, (float)v); break;
    case FI_INT8: FI_NKI_LOOP(int8_t, (float)v); break;
    case FI_UINT16: FI_NKI_LOOP(uint16_t, (float)v); break;
    case FI_INT16: FI_NKI_LOOP(int16_t, (float)v); break;
    case FI_UINT32: FI_NKI_LOOP(uint32_t, (float)v); break;
    case FI_INT32: FI_NKI_LOOP(int32_t, (float)v); break;
    case FI_FLOAT16: FI_NKI_LOOP(uint16_t, fi_f16_to_f32(v)); break;
    case FI_BFLOAT16: FI_NKI_LOOP(uint16_t, fi_bits_f32((uint32_t)v << 16)); break;
    case FI_FLOAT8_E4M3: case FI_FLOAT8_E5M2: case FI_FLOAT8_E4M3FN: {
        const float *lut = fi_nki_fp8_table[fmt - FI_FLOAT8_E4M3];
        FI_NKI_LOOP(uint8_t, lut[v]);
        break;
    }
    default: FI_NKI_LOOP(float, v); break;    /* float32, tfloat32 */
    }
}

/* uint32 bit pattern of each element, zero-extended from its own width. */
static inline void fi_nki_decode_bits(int fmt, const void *src, ptrdiff_t sf, int n, uint32_t *out) {
    switch (fmt) {
    case FI_UINT8: case FI_INT8: case FI_BOOL: FI_NKI_LOOP(uint8_t, (uint32_t)v); break;
    case FI_UINT16: case FI_INT16: FI_NKI_LOOP(uint16_t, (uint32_t)v); break;
    default: FI_NKI_LOOP(uint32_t, v); break;
    }
}
#undef FI_NKI_LOOP

#define FI_NKI_STORE(T, EXPR)                                                       \
    do {                                                                            \
        T *d_ = (T *)dst;                                                           \
        if (sf == 1) { for (int i = 0; i < n; i++) { d_[i] = (EXPR); } }            \
        else { for (int i = 0; i < n; i++) { d_[(ptrdiff_t)i * sf] = (EXPR); } }    \
    } while (0)

static inline uint16_t fi_nki_bf16_rne(float f) {   /* branch-light fi_f32_to_bf16 */
    uint32_t u = fi_f32_bits(f);
    uint32_t r = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
    uint32_t q = ((u >> 16) & 0x8000u) | 0x7fc0u;
    return (uint16_t)(((u & 0x7fffffffu) > 0x7f800000u) ? q : r);
}

/* Round float32 values once to fmt and store (integers: RNE, saturate, NaN -> 0;
 * bool_: RNE, saturate to [0, 1]). */
static inline void fi_nki_encode_f32(int fmt, void *dst, ptrdiff_t sf, int n, const float *in) {
    switch (fmt) {
    case FI_UINT8: FI_NKI_STORE(uint8_t, fi_f32_to_u8(in[i])); break;
    case FI_BOOL: FI_NKI_STORE(uint8_t, (uint8_t)fi_rne_clamp(in[i], 0.0, 1.0)); break;
    case FI_INT8: FI_NKI_STORE(int8_t, fi_f32_to_i8(in[i])); break;
    case FI_UINT16: FI_NKI_STORE(uint16_t, fi_f32_to_u16(in[i])); break;
    case FI_INT16: FI_NKI_STORE(int16_t, fi_f32_to_i16(in[i])); break;
    case FI_UINT32: FI_NKI_STORE(uint32_t, fi_f32_to_u32(in[i])); break;
    case FI_INT32: FI_NKI_STORE(int32_t, fi_f32_to_i32(in[i])); break;
    case FI_FLOAT16: FI_NKI_STORE(uint16_t, fi_f32_to_f16(in[i])); break;
    case FI_BFLOAT16: FI_NKI_STORE(uint16_t, fi_nki_bf16_rne(in[i])); break;
    case FI_TFLOAT32: FI_NKI_STORE(float, fi_nki_tf32(in[i])); break;
    case FI_FLOAT8_E4M3: case FI_FLOAT8_E5M2: case FI_FLOAT8_E4M3FN: {
        const fi_nki_fp8_traits *t = fi_nki_fp8(fmt);
        FI_NKI_STORE(uint8_t, fi_nki_fp8_encode(t, in[i]));
        break;
    }
    default: FI_NKI_STORE(float, in[i]); break;
    }
}

/* Round float64 values ONCE to fmt and store (no double rounding through float32). */
static inline void fi_nki_encode_f64(int fmt, void *dst, ptrdiff_t sf, int n, const double *in) {
    switch (fmt) {
    case FI_UINT8: FI_NKI_STORE(uint8_t, (uint8_t)fi_rne_clamp(in[i], 0.0, 255.0)); break;
    case FI_BOOL: FI_NKI_STORE(uint8_t, (uint8_t)fi_rne_clamp(in[i], 0.0, 1.0)); break;
    case FI_INT8: FI_NKI_STORE(int8_t, (int8_t)fi_rne_clamp(in[i], -128.0, 127.0)); break;
    case FI_UINT16: FI_NKI_STORE(uint16_t, (uint16_t)fi_rne_clamp(in[i], 0.0, 65535.0)); break;
    case FI_INT16: FI_NKI_STORE(int16_t, (int16_t)fi_rne_clamp(in[i], -32768.0, 32767.0)); break;
    case FI_UINT32: FI_NKI_STORE(uint32_t, (uint32_t)fi_rne_clamp(in[i], 0.0, 4294967295.0)); break;
    case FI_INT32:
        FI_NKI_STORE(int32_t, (int32_t)fi_rne_clamp(in[i], -2147483648.0, 2147483647.0));
        break;
    case FI_FLOAT16: FI_NKI_STORE(uint16_t, fi_f64_to_f16(in[i])); break;
    case FI_BFLOAT16: FI_NKI_STORE(uint16_t, fi_f64_to_bf16(in[i])); break;
    case FI_TFLOAT32: FI_NKI_STORE(float, fi_nki_tf32(in[i])); break;
    case FI_FLOAT8_E4M3: case FI_FLOAT8_E5M2: case FI_FLOAT8_E4M3FN: {
        const fi_nki_fp8_traits *t = fi_nki_fp8(fmt);
        FI_NKI_STORE(uint8_t, fi_nki_fp8_encode(t, in[i]));
        break;
    }
    default: FI_NKI_STORE(float, (float)in[i]); break;
    }
}

static inline void fi_nki_encode_bits(int fmt, void *dst, ptrdiff_t sf, int n, const uint32_t *in) {
    switch (fmt) {
    case FI_UINT8: case FI_INT8: case FI_BOOL: FI_NKI_STORE(uint8_t, (uint8_t)in[i]); break;
    case FI_UINT16: case FI_INT16: FI_NKI_STORE(uint16_t, (uint16_t)in[i]); break;
    default: FI_NKI_STORE(uint32_t, in[i]); break;
    }
}
#undef FI_NKI_STORE

/* ---- scalar operators ---------------------------------------------------------------- */
static inline float fi_nki_qnan(void) { return fi_bits_f32(0x7fc00000u); }

/* IEEE 754-2019 maximum: NaN-propagating, -0 < +0. */
static inline float fi_nki_max(float a, float b) {
    if (a != a || b != b) return fi_nki_qnan();
    if (a > b) return a;
    if (b > a) return b;
    return fi_bits_f32(fi_f32_bits(a) & fi_f32_bits(b));
}
static inline float fi_nki_min(float a, float b) {
    if (a != a || b != b) return fi_nki_qnan();
    if (a < b) return a;
    if (b < a) return b;
    return fi_bits_f32(fi_f32_bits(a) | fi_f32_bits(b));
}

/* The accumulator folds other than the sum (activate2's reduce_op; the SDK 2.33
 * nki.language docstrings): maximum / minimum as IEEE 754-2019; abs_max(acc, y) = acc if
 * |acc| > |y| else y, abs_min(acc, y) = acc if |acc| < |y| else y (the original signed
 * value; a tie or a NaN comparison gives y, as the docstrings' formula reads). */
static inline float fi_nki_acc_fold(int mode, float s, float y) {
    switch (mode) {
    case 2: return fi_nki_min(s, y);
    case 3: return fabsf(s) > fabsf(y) ? s : y;
    case 4: return fabsf(s) < fabsf(y) ? s : y;
    default: return fi_nki_max(s, y);
    }
}

/* A signed-integer key that orders non-NaN floats as IEEE totalOrder (-0 < +0). */
static inline int32_t fi_nki_key(float f) {
    uint32_t u = fi_f32_bits(f);
    return (int32_t)(u ^ ((uint32_t)((int32_t)u >> 31) >> 1));
}
static inline float fi_nki_unkey(int32_t k) {
    uint32_t u = (uint32_t)k;
    return fi_bits_f32(u ^ ((uint32_t)((int32_t)u >> 31) >> 1));
}

static inline int16_t fi_nki_key16(uint16_t c) {
    return (int16_t)(c ^ ((uint16_t)((int16_t)c >> 15) >> 1));
}

/* numpy's float32 remainder (npy_divmodf): fmod, then moved to the divisor's sign;
 * a zero remainder takes the divisor's sign. */
static inline float fi_nki_mod(float a, float b) {
    float m = fmodf(a, b);
    if (b == 0.0f) return m;
    if (m != 0.0f) {
        if ((b < 0.0f) != (m < 0.0f)) m += b;
    } else {
        m = copysignf(0.0f, b);
    }
    return m;
}

static inline float fi_nki_alu(int op, float a, float b) {
    switch (op) {
    case FI_ALU_ADD: return a + b;
    case FI_ALU_SUB: return a - b;
    case FI_ALU_MUL: return a * b;
    case FI_ALU_MAX: return fi_nki_max(a, b);
    case FI_ALU_MIN: return fi_nki_min(a, b);
    case FI_ALU_EQ: return a == b ? 1.0f : 0.0f;
    case FI_ALU_NE: return a != b ? 1.0f : 0.0f;
    case FI_ALU_GE: return a >= b ? 1.0f : 0.0f;
    case FI_ALU_GT: return a > b ? 1.0f : 0.0f;
    case FI_ALU_LE: return a <= b ? 1.0f : 0.0f;
    case FI_ALU_LT: return a < b ? 1.0f : 0.0f;
    case FI_ALU_LAND: return (a != 0.0f && b != 0.0f) ? 1.0f : 0.0f;
    case FI_ALU_LOR: return (a != 0.0f || b != 0.0f) ? 1.0f : 0.0f;
    case FI_ALU_LXOR: return ((a != 0.0f) != (b != 0.0f)) ? 1.0f : 0.0f;
    case FI_ALU_POW: return (float)pow((double)a, (double)b);
    /* SDK 2.33 nki.language.abs_max / abs_min: the original signed operand of the larger /
     * smaller magnitude, "x if |x| > |y| else y" (a tie or a NaN comparison gives y) */
    case FI_ALU_ABS_MAX: return fabsf(a) > fabsf(b) ? a : b;
    case FI_ALU_ABS_MIN: return fabsf(a) < fabsf(b) ? a : b;
    case FI_ALU_ABS: return fabsf(a);
    case FI_ALU_SQUARE: return a * a;
    case FI_ALU_RELU: return (a != a) ? a : (a > 0.0f ? a : 0.0f);
    case FI_ALU_RSQRT: return (float)(1.0 / sqrt((double)a));
    case FI_ALU_RECIP: return 1.0f / a;
    case FI_ALU_DIV: return a / b;
    case FI_ALU_MOD: return fi_nki_mod(a, b);
    case FI_ALU_FMOD: return fmodf(a, b);
    case FI_ALU_FLOOR: return floorf(a);
    case FI_ALU_CEIL: return ceilf(a);
    case FI_ALU_TRUNC: return truncf(a);
    default: return a;
    }
}

static inline uint32_t fi_nki_alu_bits(int op, uint32_t a, uint32_t b) {
    switch (op) {
    case FI_ALU_INVERT: return ~a;
    case FI_ALU_AND: return a & b;
    case FI_ALU_OR: return a | b;
    case FI_ALU_XOR: return a ^ b;
    case FI_ALU_SHL: return b >= 32u ? 0u : a << b;
    case FI_ALU_SHR: return b >= 32u ? 0u : a >> b;
    default: return a;
    }
}

/* One stage over a chunk: t[i] = t[i] op b[i] (or b[i] op t[i] when rev).  b is either
 * a per-element operand (bstride 1) or a broadcast scalar (bstride 0).  The switch is
 * outside the loops; the common ops get their own loops so they vectorise. */
#define FI_NKI_STAGE_LOOP(EXPR)                                                     \
    do {                                                                            \
        if (bs == 0) {                                                              \
            const float k_ = b[0];                                                  \
            if (rev) { for (int i = 0; i < n; i++) { float a = k_, c = t[i]; t[i] = (EXPR); } } \
            else { for (int i = 0; i < n; i++) { float a = t[i], c = k_; t[i] = (EXPR); } } \
        } else if (rev) { for (int i = 0; i < n; i++) { float a = b[i], c = t[i]; t[i] = (EXPR); } } \
        else { for (int i = 0; i < n; i++) { float a = t[i], c = b[i]; t[i] = (EXPR); } } \
    } while (0)

static inline void fi_nki_stage(int op, int rev, float *t, const float *b, int bs, int n) {
    switch (op) {
    case FI_ALU_NONE: break;
    case FI_ALU_ADD: FI_NKI_STAGE_LOOP(a + c); break;
    case FI_ALU_SUB: FI_NKI_STAGE_LOOP(a - c); break;
    case FI_ALU_MUL: FI_NKI_STAGE_LOOP(a * c); break;
    case FI_ALU_MAX: FI_NKI_STAGE_LOOP(fi_nki_max(a, c)); break;
    case FI_ALU_MIN: FI_NKI_STAGE_LOOP(fi_nki_min(a, c)); break;
    case FI_ALU_DIV: FI_NKI_STAGE_LOOP(a / c); break;
    case FI_ALU_ABS: case FI_ALU_SQUARE: case FI_ALU_RELU: case FI_ALU_RSQRT: case FI_ALU_RECIP:
    case FI_ALU_FLOOR: case FI_ALU_CEIL: case FI_ALU_TRUNC:
        for (int i = 0; i < n; i++) t[i] = fi_nki_alu(op, t[i], 0.0f);
        break;
    default: FI_NKI_STAGE_LOOP(fi_nki_alu(op, a, c)); break;
    }
}
#undef FI_NKI_STAGE_LOOP

static inline void fi_nki_stage_bits(int op, int rev, uint32_t *t, const uint32_t *b, int bs, int n) {
    if (op == FI_ALU_NONE) return;
    if (rev) { for (int i = 0; i < n; i++) t[i] = fi_nki_alu_bits(op, b[i * bs], t[i]); }
    else { for (int i = 0; i < n; i++) t[i] = fi_nki_alu_bits(op, t[i], b[i * bs]); }
}

/* ---- activation functions (float64, accurate) ------------------------------------- */
static inline double fi_nki_sigmoid(double x) {
    return x >= 0.0 ? 1.0 / (1.0 + exp(-x)) : exp(x) / (1.0 + exp(x));
}
static inline double fi_nki_softplus(double x) {
    return x > 0.0 ? x + log1p(exp(-x)) : log1p(exp(x));
}

#define FI_NKI_SQRT1_2 0.70710678118654752440
#define FI_NKI_INV_SQRT_2PI 0.39894228040143267794
#define FI_NKI_2_SQRTPI 1.12837916709551257390
#define FI_NKI_SQRT_2_PI 0.79788456080286535588

static inline double fi_nki_act_raw(int act, double x, double alpha) {
    switch (act) {
    case FI_ACT_COPY: return x;
    case FI_ACT_SQUARE: return x * x;
    case FI_ACT_SIGMOID: return fi_nki_sigmoid(x);
    case FI_ACT_RELU: return (x != x) ? x : (x > 0.0 ? x : 0.0);
    case FI_ACT_PRELU: return (x != x) ? x : (x > 0.0 ? x : (x < 0.0 ? alpha * x : 0.0));
    case FI_ACT_GELU: return 0.5 * x * (1.0 + erf(x * FI_NKI_SQRT1_2));
    case FI_ACT_GELU_DX:
        return 0.5 * (1.0 + erf(x * FI_NKI_SQRT1_2)) + x * FI_NKI_INV_SQRT_2PI * exp(-0.5 * x * x);
    case FI_ACT_GELU_TANH:
        return 0.5 * x * (1.0 + tanh(FI_NKI_SQRT_2_PI * (x + 0.044715 * x * x * x)));
    case FI_ACT_GELU_SIGMOID: return x * fi_nki_sigmoid(1.702 * x);
    case FI_ACT_GELU_SIGMOID_DX: {
        double s = fi_nki_sigmoid(1.702 * x);
        return s + 1.702 * x * s * (1.0 - s);
    }
    case FI_ACT_SILU: return x * fi_nki_sigmoid(x);
    case FI_ACT_SILU_DX: {
        double s = fi_nki_sigmoid(x);
        return s * (1.0 + x * (1.0 - s));
    }
    case FI_ACT_TANH: return tanh(x);
    case FI_ACT_SOFTPLUS: return fi_nki_softplus(x);
    case FI_ACT_MISH: return x * tanh(fi_nki_softplus(x));
    case FI_ACT_ERF: return erf(x);
    case FI_ACT_ERF_DX: return FI_NKI_2_SQRTPI * exp(-x * x);
    case FI_ACT_EXP: return exp(x);
    case FI_ACT_LOG: return log(x);
    case FI_ACT_LOG1P: return log1p(x);
    case FI_ACT_SIN: return sin(x);
    case FI_ACT_ARCTAN: return atan(x);
    case FI_ACT_SQRT: return sqrt(x);
    case FI_ACT_RSQRT: return 1.0 / sqrt(x);
    case FI_ACT_RECIP: return 1.0 / x;
    case FI_ACT_SIGN: return (x != x) ? x : (x > 0.0 ? 1.0 : (x < 0.0 ? -1.0 : 0.0));
    case FI_ACT_ABS: return fabs(x);
    default: return x;
    }
}

/* The accurate value of activation `act` at x.  `alpha` is PReLU's negative slope.
 * A NaN input comes out unchanged; a NaN produced from a non-NaN input (log(-1),
 * sin(inf) ...) is the canonical quiet NaN +0x7ff8000000000000. */
static inline double fi_nki_act(int act, double x, double alpha) {
    double y;
    if (x != x) return x;
    y = fi_nki_act_raw(act, x, alpha);
    return y != y ? fi_bits_f64(0x7ff8000000000000ull) : y;
}

/* ScalarE's sin outside [-pi, pi]: the Taylor cubic about +-pi, evaluated directly
 * (spec 000: no range reduction; sin(9.0) ~ 27.65). */
static inline double fi_nki_sin_scalar(double x) {
    double a = fabs(x), u;
    if (x != x) return x;
    if (!(a > M_PI)) return fi_nki_act(FI_ACT_SIN, x, 0.0);
    u = a - M_PI;
    u = u * (u * u / 6.0 - 1.0);              /* -u + u^3/6, +inf at +inf */
    return x < 0.0 ? -u : u;
}

/* 1 when x is outside ScalarE's valid input range for `act` (spec 000 Table 9). */
static inline int fi_nki_scalar_out_of_range(int act, double x) {
    double a = fabs(x);
    switch (act) {
    case FI_ACT_LOG: return x < 0x1p-64 || x > 0x1p64;
    case FI_ACT_SIN: return a > M_PI;
    case FI_ACT_ARCTAN: return a > M_PI / 2;
    case FI_ACT_SQRT: return x < 0x1p-116 || x > 0x1p118;
    case FI_ACT_RSQRT: return x < 0x1p-87 || x > 0x1p97;
    case FI_ACT_RECIP: return a < 0x1p-42 || a > 0x1p42;
    default: return 0;
    }
}

/* ---- native integer path (GpSimd tensor_tensor on int32/uint32) ---------------------- */
static inline void fi_nki_decode_i64(int fmt, const void *src, ptrdiff_t sf, int n, int64_t *out) {
    if (fmt == FI_INT32) {
        const int32_t *s_ = (const int32_t *)src;
        for (int i = 0; i < n; i++) out[i] = s_[(ptrdiff_t)i * sf];
    } else {
        const uint32_t *s_ = (const uint32_t *)src;
        for (int i = 0; i < n; i++) out[i] = s_[(ptrdiff_t)i * sf];
    }
}

/* Exact integer result of `op` on two int64 values (inputs are 32-bit, so exact). */
static inline int64_t fi_nki_alu_i64(int op, int64_t a, int64_t b) {
    switch (op) {
    case FI_ALU_ADD: return a + b;
    case FI_ALU_SUB: return a - b;
    case FI_ALU_MUL: return a * b;
    case FI_ALU_MAX: return a > b ? a : b;
    case FI_ALU_MIN: return a < b ? a : b;
    case FI_ALU_EQ: return a == b;
    case FI_ALU_NE: return a != b;
    case FI_ALU_GE: return a >= b;
    case FI_ALU_GT: return a > b;
    case FI_ALU_LE: return a <= b;
    case FI_ALU_LT: return a < b;
    case FI_ALU_LAND: return a != 0 && b != 0;
    case FI_ALU_LOR: return a != 0 || b != 0;
    case FI_ALU_LXOR: return (a != 0) != (b != 0);
    default: return a;
    }
}

/* ---- the elementwise shape ---------------------------------------------------------- */
typedef struct {
    const void *ptr; int fmt; ptrdiff_t sp, sf;
} fi_nki_view;

typedef struct {
    int op;                    /* FI_ALU_* (FI_ALU_NONE: stage skipped) */
    int rev;                   /* 1: operand op t */
    int tensor;                /* 1: the operand is in1's element; 0: the per-partition scalar */
    const float *f; ptrdiff_t fsp;       /* float32 scalar per partition (fsp 0: one scalar) */
    const uint32_t *u; ptrdiff_t usp;    /* bit-pattern scalar per partition (bitvec) */
} fi_nki_stage_desc;

typedef struct {
    int P, F;
    void *dst; int dst_fmt; ptrdiff_t dst_sp, dst_sf;
    fi_nki_view in0, in1;
    fi_nki_stage_desc st[2];
    int raw;                   /* 1: same-format bit copy of in0 (itemsize bytes) */
    int itemsize;
    int bitvec;                /* 1: uint32 bit-pattern pipeline */
    int intmode;               /* 1: exact int64 arithmetic of int32/uint32 in0 op in1, the
                                  result wrapped to dst's 32 bits (stage 0 only) */
    int act;                   /* FI_ACT_* (FI_ACT_NONE: y = t in float32) */
    int scalar_engine;         /* 1: ScalarE (sin cubic outside [-pi, pi], range counting) */
    double alpha;              /* PReLU negative slope */
    const double *lut;         /* optional: 2^bits table act(decode(code)) (no stages) */
    const uint64_t *lutp;      /* optional table over in0's codes (no stages): bits 0-31 the
                                  float32 (float)act(decode(code)), 32-63 dst's encoding */
    float *acc; ptrdiff_t acc_sp;        /* optional per-partition float32 accumulator */
    int acc_max;               /* 0: acc += y; else acc = fi_nki_acc_fold(acc_max, acc, y):
                                  1 maximum, 2 minimum (IEEE 754-2019), 3 abs_max, 4 abs_min
                                  (SDK 2.33 nl.abs_max / abs_min: the signed operand) */
    int threads;               /* worker-pool threads (par.h; 0: every CPU) */
    const double *alpha_v;     /* optional: PReLU negative slope per partition (else alpha) */
} fi_nki_ew;

/* The table path: every element's result depends only on its input code.  Per chunk:
 * each row looks up its dst codes and float32 values (one sequential stream per row),
 * then the g rows' float32 values are summed with one independent chain per row. */
#define FI_NKI_LUT_LOOP(TI, TD)                                                                \
    do {                                                                                       \
        const uint64_t *lp = a->lutp;                                                          \
        for (int c0 = 0; c0 < F; c0 += FI_NKI_CH) {                                            \
            int n = F - c0 < FI_NKI_CH ? F - c0 : FI_NKI_CH;                                   \
            for (int r = 0; r < g; r++) {                                                      \
                const TI *S = (const TI *)a->in0.ptr + (ptrdiff_t)(pg + r) * a->in0.sp         \
                              + (ptrdiff_t)c0 * isf;                                           \
                TD *D = (TD *)a->dst + (ptrdiff_t)(pg + r) * a->dst_sp + (ptrdiff_t)c0 * dsf;  \
                float *vr = v[r];                                                              \
                if (isf == 1 && dsf == 1) {                                                    \
                    for (int i = 0; i < n; i++) {                                              \
                        uint64_t e = lp[S[i]];                                                 \
                        D[i] = (TD)(e >> 32);                                                  \
                        vr[i] = fi_bits_f32((uint32_t)e);                                      \
                    }                                                                          \
                } else {                                                                       \
                    for (int i = 0; i < n; i++) {                                              \
                        uint64_t e = lp[S[(ptrdiff_t)i * isf]];                                \
                        D[(ptrdiff_t)i * dsf] = (TD)(e >> 32);                                 \
                        vr[i] = fi_bits_f32((uint32_t)e);                                      \
                    }                                                                          \
                }                                                                              \
            }                                                                                  \
            if (a->acc) {                                                                      \
                if (g == FI_NKI_G) {                                                           \
                    for (int i = 0; i < n; i++)                                                \
                        for (int r = 0; r < FI_NKI_G; r++) s[r] += v[r][i];                    \
                } else {                                                                       \
                    for (int r = 0; r < g; r++)                                                \
                        for (int i = 0; i < n; i++) s[r] += v[r][i];                           \
                }                                                                              \
            }                                                                                  \
        }                                                                                      \
    } while (0)

static FI_NKI_NOINLINE void fi_nki_ew_lut_rows(const fi_nki_ew *a, int p0, int p1, int isz) {
    const ptrdiff_t isf = a->in0.sf, dsf = a->dst_sf;
    const int F = a->F;
    float v[FI_NKI_G][FI_NKI_CH];
    for (int pg = p0; pg < p1; pg += FI_NKI_G) {
        int g = p1 - pg < FI_NKI_G ? p1 - pg : FI_NKI_G;
        float s[FI_NKI_G] = {0.0f};
        if (a->acc) for (int r = 0; r < g; r++) s[r] = a->acc[(ptrdiff_t)(pg + r) * a->acc_sp];
        if (isz == 1) {
            if (a->itemsize == 1) FI_NKI_LUT_LOOP(uint8_t, uint8_t);
            else if (a->itemsize == 2) FI_NKI_LUT_LOOP(uint8_t, uint16_t);
            else FI_NKI_LUT_LOOP(uint8_t, uint32_t);
        } else {
            if (a->itemsize == 1) FI_NKI_LUT_LOOP(uint16_t, uint8_t);
            else if (a->itemsize == 2) FI_NKI_LUT_LOOP(uint16_t, uint16_t);
            else FI_NKI_LUT_LOOP(uint16_t, uint32_t);
        }
        if (a->acc)
            for (int r = 0; r < g; r++)
                a->acc[(ptrdiff_t)(pg + r) * a->acc_sp] = s[r] != s[r] ? fi_nki_qnan() : s[r];
    }
}
#undef FI_NKI_LUT_LOOP

/* Encode float64 values to fmt (the table builder of the table path). */
static inline void fi_nki_encode_f64_array(int fmt, void *dst, const double *in, int n) {
    fi_nki_encode_f64(fmt, dst, 1, n, in);
}

/* Fused path: bf16 -> one add/subtract/multiply with a per-partition scalar -> bf16,
 * contiguous rows (the same arithmetic as the staged path, in one vectorised loop). */
static inline int fi_nki_bf16_fused_ok(const fi_nki_ew *a) {
    const fi_nki_stage_desc *s0 = &a->st[0];
    return !a->raw && !a->bitvec && !a->intmode && a->act == FI_ACT_NONE && !a->lut &&
           !a->lutp && !a->acc && a->in0.fmt == FI_BFLOAT16 && a->dst_fmt == FI_BFLOAT16 &&
           a->in0.sf == 1 && a->dst_sf == 1 && !s0->tensor && s0->f &&
           (s0->op == FI_ALU_ADD || s0->op == FI_ALU_SUB || s0->op == FI_ALU_MUL) &&
           a->st[1].op == FI_ALU_NONE;
}

#define FI_NKI_FUSED(EXPR)                                                          \
    for (int i = 0; i < F; i++) {                                                   \
        float x = fi_bits_f32((uint32_t)s_[i] << 16);                              \
        d_[i] = fi_nki_bf16_rne(EXPR);                                              \
    }

static FI_NKI_NOINLINE void fi_nki_bf16_fused_rows(const fi_nki_ew *a, int p0, int p1) {
    const fi_nki_stage_desc *st = &a->st[0];
    const int F = a->F;
    for (int p = p0; p < p1; p++) {
        const uint16_t *s_ = (const uint16_t *)a->in0.ptr + (ptrdiff_t)p * a->in0.sp;
        uint16_t *d_ = (uint16_t *)a->dst + (ptrdiff_t)p * a->dst_sp;
        const float k = st->f[(ptrdiff_t)p * st->fsp];
        switch (st->op * 2 + (st->rev != 0)) {
        case FI_ALU_ADD * 2: FI_NKI_FUSED(x + k); break;
        case FI_ALU_ADD * 2 + 1: FI_NKI_FUSED(k + x); break;
        case FI_ALU_SUB * 2: FI_NKI_FUSED(x - k); break;
        case FI_ALU_SUB * 2 + 1: FI_NKI_FUSED(k - x); break;
        case FI_ALU_MUL * 2: FI_NKI_FUSED(x * k); break;
        default: FI_NKI_FUSED(k * x); break;
        }
    }
}
#undef FI_NKI_FUSED

/* Fused path (speed2 branch, issue 15): float32 in0 (and float32 in1) -> one or two of
 * add / subtract / multiply / max / min -> float32 dst, contiguous rows: the staged
 * path's arithmetic (decode and encode are the identity for float32; each stage the same
 * expression with the same operand order) in one loop per stage, written straight to dst
 * (dst may be in0 or in1 itself, element for element). */
static inline int fi_nki_f32_op_ok(int op) {
    return op == FI_ALU_ADD || op == FI_ALU_SUB || op == FI_ALU_MUL || op == FI_ALU_MAX ||
           op == FI_ALU_MIN;
}

static inline int fi_nki_f32_fused_ok(const fi_nki_ew *a) {
    const fi_nki_stage_desc *s0 = &a->st[0], *s1 = &a->st[1];
    if (a->raw || a->bitvec || a->intmode || a->act != FI_ACT_NONE || a->lut || a->lutp ||
        a->acc || a->scalar_engine)
        return 0;
    if (a->in0.fmt != FI_FLOAT32 || a->dst_fmt != FI_FLOAT32 || a->in0.sf != 1 ||
        a->dst_sf != 1 || !fi_nki_f32_op_ok(s0->op))
        return 0;
    if (s0->tensor) {
        if (a->in1.fmt != FI_FLOAT32 || a->in1.sf != 1) return 0;
    } else if (!s0->f) {
        return 0;
    }
    if (s1->op != FI_ALU_NONE && (!fi_nki_f32_op_ok(s1->op) || s1->tensor || !s1->f)) return 0;
    return 1;
}

#define FI_NKI_F32_LOOP(EXPR)                                                       \
    do {                                                                            \
        if (bs == 0) {                                                              \
            const float k_ = b[0];                                                  \
            if (rev) { for (int i = 0; i < n; i++) { float a = k_, c = x[i]; d[i] = (EXPR); } } \
            else { for (int i = 0; i < n; i++) { float a = x[i], c = k_; d[i] = (EXPR); } } \
        } else if (rev) { for (int i = 0; i < n; i++) { float a = b[i], c = x[i]; d[i] = (EXPR); } } \
        else { for (int i = 0; i < n; i++) { float a = x[i], c = b[i]; d[i] = (EXPR); } } \
    } while (0)

#if defined(__x86_64__) && defined(__GNUC__) && !defined(FASTISA_DEBUG)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
static void fi_nki_f32_pass(int op, int rev, float *d, const float *x, const float *b, int bs,
                            int n) {
    switch (op) {
    case FI_ALU_ADD: FI_NKI_F32_LOOP(a + c); break;
    case FI_ALU_SUB: FI_NKI_F32_LOOP(a - c); break;
    case FI_ALU_MUL: FI_NKI_F32_LOOP(a * c); break;
    case FI_ALU_MAX: FI_NKI_F32_LOOP(fi_nki_max(a, c)); break;
    default: FI_NKI_F32_LOOP(fi_nki_min(a, c)); break;
    }
}
#undef FI_NKI_F32_LOOP

/* float32 -> bfloat16 conversion (no stage), contiguous rows: the staged path's decode
 * (the identity) and encode (fi_nki_bf16_rne) in one vectorised loop. */
static inline int fi_nki_f32_bf16_ok(const fi_nki_ew *a) {
    return !a->raw && !a->bitvec && !a->intmode && a->act == FI_ACT_NONE && !a->lut &&
           !a->lutp && !a->acc && !a->scalar_engine && a->in0.fmt == FI_FLOAT32 &&
           a->dst_fmt == FI_BFLOAT16 && a->in0.sf == 1 && a->dst_sf == 1 &&
           a->st[0].op == FI_ALU_NONE && a->st[1].op == FI_ALU_NONE;
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(FASTISA_DEBUG)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
static void fi_nki_f32_bf16_row(uint16_t *d, const float *x, int n) {
    for (int i = 0; i < n; i++) d[i] = fi_nki_bf16_rne(x[i]);
}

static FI_NKI_NOINLINE void fi_nki_f32_fused_rows(const fi_nki_ew *a, int p0, int p1) {
    const fi_nki_stage_desc *s0 = &a->st[0], *s1 = &a->st[1];
    for (int p = p0; p < p1; p++) {
        const float *x = (const float *)a->in0.ptr + (ptrdiff_t)p * a->in0.sp;
        float *d = (float *)a->dst + (ptrdiff_t)p * a->dst_sp;
        if (s0->tensor)
            fi_nki_f32_pass(s0->op, s0->rev, d, x,
                            (const float *)a->in1.ptr + (ptrdiff_t)p * a->in1.sp, 1, a->F);
        else
            fi_nki_f32_pass(s0->op, s0->rev, d, x, s0->f + (ptrdiff_t)p * s0->fsp, 0, a->F);
        if (s1->op != FI_ALU_NONE)
            fi_nki_f32_pass(s1->op, s1->rev, d, d, s1->f + (ptrdiff_t)p * s1->fsp, 0, a->F);
    }
}

static FI_NKI_NOINLINE int64_t fi_nki_ew_rows(const fi_nki_ew *a, int p0, int p1) {
    float t[FI_NKI_G][FI_NKI_CH], u[FI_NKI_CH];
    double y[FI_NKI_G][FI_NKI_CH];
    uint32_t tb[FI_NKI_CH], ub[FI_NKI_CH];
    int64_t oor = 0;
    const int dsz = a->itemsize;
    if (fi_nki_bf16_fused_ok(a)) {
        fi_nki_bf16_fused_rows(a, p0, p1);
        return 0;
    }
    if (fi_nki_f32_fused_ok(a)) {
        fi_nki_f32_fused_rows(a, p0, p1);
        return 0;
    }
    if (fi_nki_f32_bf16_ok(a)) {
        for (int p = p0; p < p1; p++)
            fi_nki_f32_bf16_row((uint16_t *)a->dst + (ptrdiff_t)p * a->dst_sp,
                                (const float *)a->in0.ptr + (ptrdiff_t)p * a->in0.sp, a->F);
        return 0;
    }
    if (a->lutp && !a->acc_max) {
        int isz = a->in0.fmt <= FI_INT8 || a->in0.fmt == FI_BOOL ||
                  (a->in0.fmt >= FI_FLOAT8_E4M3 && a->in0.fmt <= FI_FLOAT8_E8M0FNU) ? 1 : 2;
        fi_nki_ew_lut_rows(a, p0, p1, isz);
        return 0;
    }
    for (int pg = p0; pg < p1; pg += FI_NKI_G) {
        int g = p1 - pg < FI_NKI_G ? p1 - pg : FI_NKI_G;
        for (int c0 = 0; c0 < a->F; c0 += FI_NKI_CH) {
            int n = a->F - c0 < FI_NKI_CH ? a->F - c0 : FI_NKI_CH;
            for (int r = 0; r < g; r++) {
                int p = pg + r;
                const char *s0 = (const char *)a->in0.ptr;
                char *d = (char *)a->dst;
                ptrdiff_t src_off = (ptrdiff_t)p * a->in0.sp + (ptrdiff_t)c0 * a->in0.sf;
                ptrdiff_t dst_off = (ptrdiff_t)p * a->dst_sp + (ptrdiff_t)c0 * a->dst_sf;
                if (a->raw) {
                    int isz = dsz;
                    if (a->in0.sf == 1 && a->dst_sf == 1) {
                        memmove(d + dst_off * isz, s0 + src_off * isz, (size_t)n * isz);
                    } else {
                        for (int i = 0; i < n; i++)
                            memcpy(d + (dst_off + (ptrdiff_t)i * a->dst_sf) * isz,
                                   s0 + (src_off + (ptrdiff_t)i * a->in0.sf) * isz, isz);
                    }
                    continue;
                }
                if (a->intmode) {
                    int64_t x0[FI_NKI_CH], x1[FI_NKI_CH];
                    const fi_nki_stage_desc *st = &a->st[0];
                    uint32_t *dd = (uint32_t *)d + dst_off;
                    fi_nki_decode_i64(a->in0.fmt, (const uint32_t *)s0 + src_off, a->in0.sf, n, x0);
                    fi_nki_decode_i64(a->in1.fmt, (const uint32_t *)a->in1.ptr +
                                      ((ptrdiff_t)p * a->in1.sp + (ptrdiff_t)c0 * a->in1.sf),
                                      a->in1.sf, n, x1);
                    for (int i = 0; i < n; i++)
                        dd[(ptrdiff_t)i * a->dst_sf] = (uint32_t)(uint64_t)fi_nki_alu_i64(st->op, x0[i], x1[i]);
                    continue;
                }
                if (a->bitvec) {
                    int isz0 = a->in0.fmt <= FI_INT8 || a->in0.fmt == FI_BOOL ? 1 :
                               a->in0.fmt <= FI_INT16 ? 2 : 4;
                    fi_nki_decode_bits(a->in0.fmt, s0 + src_off * isz0, a->in0.sf, n, tb);
                    for (int s = 0; s < 2; s++) {
                        const fi_nki_stage_desc *st = &a->st[s];
                        if (st->op == FI_ALU_NONE) continue;
                        if (st->tensor) {
                            int isz1 = a->in1.fmt <= FI_INT8 || a->in1.fmt == FI_BOOL ? 1 :
                                       a->in1.fmt <= FI_INT16 ? 2 : 4;
                            fi_nki_decode_bits(a->in1.fmt, (const char *)a->in1.ptr +
                                               ((ptrdiff_t)p * a->in1.sp + (ptrdiff_t)c0 * a->in1.sf) * isz1,
                                               a->in1.sf, n, ub);
                            fi_nki_stage_bits(st->op, st->rev, tb, ub, 1, n);
                        } else {
                            static const uint32_t zu = 0;
                            fi_nki_stage_bits(st->op, st->rev, tb, st->u ? st->u + (ptrdiff_t)p * st->usp : &zu, 0, n);
                        }
                    }
                    fi_nki_encode_bits(a->dst_fmt, d + dst_off * dsz, a->dst_sf, n, tb);
                    continue;
                }
                {
                    static const int isz_of[FI_NUM_FORMATS] = {1, 1, 2, 2, 4, 4, 1, 1, 1, 1, 2, 2, 4, 4, 4, 4, 2, 1, 1};
                    float *tr = t[r];
                    if (a->lut) {
                        double *yr = y[r];
                        if (isz_of[a->in0.fmt] == 1) {
                            const uint8_t *s8 = (const uint8_t *)s0 + src_off;
                            for (int i = 0; i < n; i++) yr[i] = a->lut[s8[(ptrdiff_t)i * a->in0.sf]];
                        } else {
                            const uint16_t *s16 = (const uint16_t *)s0 + src_off;
                            if (a->in0.sf == 1) { for (int i = 0; i < n; i++) yr[i] = a->lut[s16[i]]; }
                            else { for (int i = 0; i < n; i++) yr[i] = a->lut[s16[(ptrdiff_t)i * a->in0.sf]]; }
                        }
                        continue;
                    }
                    fi_nki_decode(a->in0.fmt, s0 + src_off * isz_of[a->in0.fmt], a->in0.sf, n, tr);
                    for (int s = 0; s < 2; s++) {
                        const fi_nki_stage_desc *st = &a->st[s];
                        if (st->op == FI_ALU_NONE) continue;
                        if (st->tensor) {
                            fi_nki_decode(a->in1.fmt, (const char *)a->in1.ptr +
                                          ((ptrdiff_t)p * a->in1.sp + (ptrdiff_t)c0 * a->in1.sf) * isz_of[a->in1.fmt],
                                          a->in1.sf, n, u);
                            if (st->op == FI_ALU_SELECT) {
                                float off = st->f[(ptrdiff_t)p * st->fsp];
                                int rv = st->rev != 0;
                                for (int i = 0; i < n; i++) tr[i] = ((u[i] != 0.0f) != rv) ? tr[i] : off;
                                continue;
                            }
                            fi_nki_stage(st->op, st->rev, tr, u, 1, n);
                        } else {
                            static const float zf = 0.0f;
                            fi_nki_stage(st->op, st->rev, tr, st->f ? st->f + (ptrdiff_t)p * st->fsp : &zf, 0, n);
                        }
                    }
                    if (a->act != FI_ACT_NONE) {
                        double *yr = y[r];
                        int act = a->act;
                        double al = a->alpha_v ? a->alpha_v[p] : a->alpha;
                        if (a->scalar_engine) {
                            for (int i = 0; i < n; i++) oor += fi_nki_scalar_out_of_range(act, tr[i]);
                        }
                        if (act == FI_ACT_SIN && a->scalar_engine) {
                            for (int i = 0; i < n; i++) yr[i] = fi_nki_sin_scalar(tr[i]);
                        } else if (act == FI_ACT_EXP) {
                            for (int i = 0; i < n; i++) yr[i] = tr[i] != tr[i] ? (double)tr[i] : exp((double)tr[i]);
                        } else {
                            for (int i = 0; i < n; i++) yr[i] = fi_nki_act(act, tr[i], al);
                        }
                    }
                }
            }
            if (a->raw || a->bitvec || a->intmode) continue;
            /* accumulate (independent chains across the g rows) and store */
            if (a->act != FI_ACT_NONE || a->lut) {
                if (a->acc) {
                    float s[FI_NKI_G];
                    for (int r = 0; r < g; r++) s[r] = a->acc[(ptrdiff_t)(pg + r) * a->acc_sp];
                    if (a->acc_max == 1) {
                        for (int r = 0; r < g; r++)
                            for (int i = 0; i < n; i++) s[r] = fi_nki_max(s[r], (float)y[r][i]);
                    } else if (a->acc_max) {
                        for (int r = 0; r < g; r++)
                            for (int i = 0; i < n; i++)
                                s[r] = fi_nki_acc_fold(a->acc_max, s[r], (float)y[r][i]);
                    } else if (g == FI_NKI_G) {
                        for (int i = 0; i < n; i++)
                            for (int r = 0; r < FI_NKI_G; r++) s[r] += (float)y[r][i];
                    } else {
                        for (int r = 0; r < g; r++)
                            for (int i = 0; i < n; i++) s[r] += (float)y[r][i];
                    }
                    for (int r = 0; r < g; r++)   /* a NaN sum is the canonical quiet NaN */
                        a->acc[(ptrdiff_t)(pg + r) * a->acc_sp] = s[r] != s[r] ? fi_nki_qnan() : s[r];
                }
                for (int r = 0; r < g; r++)
                    fi_nki_encode_f64(a->dst_fmt, (char *)a->dst +
                                      ((ptrdiff_t)(pg + r) * a->dst_sp + (ptrdiff_t)c0 * a->dst_sf) * dsz,
                                      a->dst_sf, n, y[r]);
            } else {
                if (a->acc) {
                    float s[FI_NKI_G];
                    for (int r = 0; r < g; r++) s[r] = a->acc[(ptrdiff_t)(pg + r) * a->acc_sp];
                    if (a->acc_max == 1) {
                        for (int r = 0; r < g; r++)
                            for (int i = 0; i < n; i++) s[r] = fi_nki_max(s[r], t[r][i]);
                    } else if (a->acc_max) {
                        for (int r = 0; r < g; r++)
                            for (int i = 0; i < n; i++)
                                s[r] = fi_nki_acc_fold(a->acc_max, s[r], t[r][i]);
                    } else if (g == FI_NKI_G) {
                        for (int i = 0; i < n; i++)
                            for (int r = 0; r < FI_NKI_G; r++) s[r] += t[r][i];
                    } else {
                        for (int r = 0; r < g; r++)
                            for (int i = 0; i < n; i++) s[r] += t[r][i];
                    }
                    for (int r = 0; r < g; r++)   /* a NaN sum is the canonical quiet NaN */
                        a->acc[(ptrdiff_t)(pg + r) * a->acc_sp] = s[r] != s[r] ? fi_nki_qnan() : s[r];
                }
                for (int r = 0; r < g; r++)
                    fi_nki_encode_f32(a->dst_fmt, (char *)a->dst +
                                      ((ptrdiff_t)(pg + r) * a->dst_sp + (ptrdiff_t)c0 * a->dst_sf) * dsz,
                                      a->dst_sf, n, t[r]);
            }
        }
    }
    return oor;
}

/* Run one elementwise instruction.  Returns the number of inputs outside ScalarE's
 * valid range (0 unless scalar_engine).  Rows are split over the worker pool's threads when
 * the tile is large; results do not depend on the thread count. */
typedef struct { const fi_nki_ew *a; int64_t oor; } fi_nki_ew_job_t;

static void fi_nki_ew_task(void *ctx, int gi) {
    fi_nki_ew_job_t *j = (fi_nki_ew_job_t *)ctx;
    const fi_nki_ew *a = j->a;
    int p0 = gi * FI_NKI_G, p1 = p0 + FI_NKI_G < a->P ? p0 + FI_NKI_G : a->P;
    int64_t o = fi_nki_ew_rows(a, p0, p1);
    if (o) __atomic_fetch_add(&j->oor, o, __ATOMIC_RELAXED);
}

static inline int64_t fi_nki_elementwise(const fi_nki_ew *a) {
    int ngroups = (a->P + FI_NKI_G - 1) / FI_NKI_G;
    if ((int64_t)a->P * a->F >= (1 << 16) && ngroups > 1 && a->threads != 1) {
        fi_nki_ew_job_t job = {a, 0};       /* groups of rows over the shared pool */
        fi_par_for(fi_par_threads(a->threads), ngroups, fi_nki_ew_task, &job);
        return job.oor;
    }
    return fi_nki_ew_rows(a, 0, a->P);
}

/* ---- the reduce shape ---------------------------------------------------------------- */
/* out[p] = in[p,0] op in[p,1] op ... op in[p,F-1], folded left to right in float32
 * (arithmetic) or on uint32 bit patterns (bitvec); negate multiplies the float32 result
 * by -1; the result is rounded once to out's format.  F >= 1. */
typedef struct {
    int P, F;
    fi_nki_view in;
    void *out; int out_fmt; ptrdiff_t out_sp;
    int op;
    int bitvec;
    int negate;
    int threads;
} fi_nki_reduce_args;

static FI_NKI_NOINLINE void fi_nki_reduce_rows(const fi_nki_reduce_args *a, int p0, int p1) {
    static const int isz_of[FI_NUM_FORMATS] = {1, 1, 2, 2, 4, 4, 1, 1, 1, 1, 2, 2, 4, 4, 4, 4, 2, 1, 1};
    float buf[FI_NKI_CH];
    uint32_t bb[FI_NKI_CH];
    int isz = isz_of[a->in.fmt], osz = isz_of[a->out_fmt];
    for (int p = p0; p < p1; p++) {
        const char *row = (const char *)a->in.ptr + (ptrdiff_t)p * a->in.sp * isz;
        char *o = (char *)a->out + (ptrdiff_t)p * a->out_sp * osz;
        if (a->bitvec) {
            uint32_t acc = 0;
            for (int c0 = 0; c0 < a->F; c0 += FI_NKI_CH) {
                int n = a->F - c0 < FI_NKI_CH ? a->F - c0 : FI_NKI_CH;
                fi_nki_decode_bits(a->in.fmt, row + (ptrdiff_t)c0 * a->in.sf * isz, a->in.sf, n, bb);
                int i = 0;
                if (c0 == 0) { acc = bb[0]; i = 1; }
                for (; i < n; i++) acc = fi_nki_alu_bits(a->op, acc, bb[i]);
            }
            fi_nki_encode_bits(a->out_fmt, o, 1, 1, &acc);
            continue;
        }
        float acc = 0.0f;
        int any_nan = 0;
        if (a->in.fmt == FI_BFLOAT16 && a->in.sf == 1 && (a->op == FI_ALU_MAX || a->op == FI_ALU_MIN)) {
            /* bf16 maximum/minimum straight on the codes: int16 total-order keys */
            const uint16_t *u = (const uint16_t *)row;
            int16_t l0 = fi_nki_key16(u[0]);
            int16_t l[16];
            uint16_t nanm = 0;
            int ismax = a->op == FI_ALU_MAX, F = a->F, i = 0;
            for (int k = 0; k < 16; k++) l[k] = l0;
            {
                const int nb = F / 16;      /* a counted loop: vectorises even under -fwrapv */
                if (ismax) {
                    for (int b = 0; b < nb; b++)
                        for (int k = 0; k < 16; k++) {
                            int16_t kx = fi_nki_key16(u[b * 16 + k]);
                            l[k] = kx > l[k] ? kx : l[k];
                        }
                } else {
                    for (int b = 0; b < nb; b++)
                        for (int k = 0; k < 16; k++) {
                            int16_t kx = fi_nki_key16(u[b * 16 + k]);
                            l[k] = kx < l[k] ? kx : l[k];
                        }
                }
                i = nb * 16;
            }
            for (; i < F; i++) {
                int16_t kx = fi_nki_key16(u[i]);
                l[0] = ismax ? (kx > l[0] ? kx : l[0]) : (kx < l[0] ? kx : l[0]);
            }
            for (int k = 1; k < 16; k++) l[0] = ismax ? (l[k] > l[0] ? l[k] : l[0]) : (l[k] < l[0] ? l[k] : l[0]);
            {   /* NaN: |code| > 0x7f80, i.e. the largest magnitude code exceeds inf's */
                uint16_t mx = 0;
                for (int q = 0; q < F; q++) { uint16_t c = (uint16_t)(u[q] & 0x7fffu); mx = c > mx ? c : mx; }
                nanm = mx > 0x7f80u;
            }
            int nanc = nanm;
            {
                uint16_t c = (uint16_t)l[0];
                c = (uint16_t)(c ^ ((uint16_t)((int16_t)c >> 15) >> 1));
                acc = fi_bits_f32((uint32_t)c << 16);
            }
            if (a->negate) acc = acc * -1.0f;
            if (nanc || acc != acc) acc = fi_nki_qnan();
            fi_nki_encode_f32(a->out_fmt, o, 1, 1, &acc);
            continue;
        }
        for (int c0 = 0; c0 < a->F; c0 += FI_NKI_CH) {
            int n = a->F - c0 < FI_NKI_CH ? a->F - c0 : FI_NKI_CH;
            int i = 0;
            fi_nki_decode(a->in.fmt, row + (ptrdiff_t)c0 * a->in.sf * isz, a->in.sf, n, buf);
            if (c0 == 0) { acc = buf[0]; i = 1; }
            switch (a->op) {
            case FI_ALU_ADD: for (; i < n; i++) acc += buf[i]; break;
            case FI_ALU_SUB: for (; i < n; i++) acc -= buf[i]; break;
            case FI_ALU_MUL: for (; i < n; i++) acc *= buf[i]; break;
            case FI_ALU_MAX: case FI_ALU_MIN: {
                /* order-independent IEEE 754-2019 maximum/minimum: fold int32 keys of a
                 * total order (-0 < +0) over 8 lanes; NaN tracked separately */
                int32_t l[8];
                int32_t k0 = fi_nki_key(acc);
                int nanc = acc != acc;
                int ismax = a->op == FI_ALU_MAX;
                for (int k = 0; k < 8; k++) l[k] = k0;
                for (int nb = (n - i) / 8; nb > 0; nb--, i += 8) {
                    for (int k = 0; k < 8; k++) {
                        float x = buf[i + k];
                        int32_t kx = fi_nki_key(x);
                        nanc |= x != x;
                        l[k] = ismax ? (kx > l[k] ? kx : l[k]) : (kx < l[k] ? kx : l[k]);
                    }
                }
                for (; i < n; i++) {
                    int32_t kx = fi_nki_key(buf[i]);
                    nanc |= buf[i] != buf[i];
                    l[0] = ismax ? (kx > l[0] ? kx : l[0]) : (kx < l[0] ? kx : l[0]);
                }
                for (int k = 1; k < 8; k++) l[0] = ismax ? (l[k] > l[0] ? l[k] : l[0]) : (l[k] < l[0] ? l[k] : l[0]);
                any_nan |= nanc;
                acc = fi_nki_unkey(l[0]);
                break;
            }
            default: for (; i < n; i++) acc = fi_nki_alu(a->op, acc, buf[i]); break;
            }
        }
        if (a->negate) acc = acc * -1.0f;
        if (any_nan || acc != acc) acc = fi_nki_qnan();   /* NaN results: canonical quiet NaN */
        fi_nki_encode_f32(a->out_fmt, o, 1, 1, &acc);
    }
}

static void fi_nki_reduce_task(void *ctx, int p) {
    fi_nki_reduce_rows((const fi_nki_reduce_args *)ctx, p, p + 1);
}

static inline void fi_nki_reduce(const fi_nki_reduce_args *a) {
    if ((int64_t)a->P * a->F >= (1 << 16) && a->P > 1 && a->threads != 1) {
        fi_par_for(fi_par_threads(a->threads), a->P, fi_nki_reduce_task, (void *)a);
        return;
    }
    fi_nki_reduce_rows(a, 0, a->P);
}

/* dma_compute's add: dst[i] = ((s0[i] + s1[i]) + s2[i]) + ... in float32 (each source
 * decoded exactly, one rounding per addition), rounded once to dst's format; n elements,
 * every operand contiguous.  One pass in chunks of 2048 that stay in L1; dst may be one of
 * the sources (each chunk is read completely before it is written).
 * Every operand float32 (the common case): fi_nki_dma_sum_f32, the same additions in the
 * same order on the float32 values directly (no decode / encode copies), compiled for
 * AVX-512 / AVX2 / the baseline (chosen at load time; additions are IEEE either way, so
 * the bits do not depend on the clone). */
#define FI_NKI_SUM_CH 2048
#if defined(__x86_64__) && defined(__GNUC__) && !defined(FASTISA_DEBUG)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
static FI_NKI_NOINLINE void fi_nki_dma_sum_f32(float *dst, const float *const *src, int ns,
                                               ptrdiff_t lo, ptrdiff_t n) {
    int alias = 0;
    for (int k = 0; k < ns; k++) alias |= src[k] == dst;
    if (!alias && ns >= 2 && ns <= 4) {     /* no source is dst: one fused pass, no buffer */
        float *restrict d = dst;
        const float *restrict a = src[0], *restrict b = src[1];
        if (ns == 2) {
            for (ptrdiff_t i = lo; i < n; i++) d[i] = a[i] + b[i];
        } else if (ns == 3) {
            const float *restrict c = src[2];
            for (ptrdiff_t i = lo; i < n; i++) d[i] = (a[i] + b[i]) + c[i];
        } else {
            const float *restrict c = src[2], *restrict e = src[3];
            for (ptrdiff_t i = lo; i < n; i++) d[i] = ((a[i] + b[i]) + c[i]) + e[i];
        }
        return;
    }
    float acc[FI_NKI_SUM_CH];
    for (ptrdiff_t i0 = lo; i0 < n; i0 += FI_NKI_SUM_CH) {
        int c = n - i0 < FI_NKI_SUM_CH ? (int)(n - i0) : FI_NKI_SUM_CH;
        const float *a = src[0] + i0;
        if (ns == 1) {
            memcpy(acc, a, (size_t)c * sizeof(float));
        } else {
            const float *b = src[1] + i0;
            for (int i = 0; i < c; i++) acc[i] = a[i] + b[i];
            for (int k = 2; k < ns; k++) {
                const float *x = src[k] + i0;
                for (int i = 0; i < c; i++) acc[i] = acc[i] + x[i];
            }
        }
        memcpy(dst + i0, acc, (size_t)c * sizeof(float));
    }
}

/* Elements [lo, hi) of a sum with any formats: per chunk, decode each source to float32,
 * add left to right, encode once (lo a multiple of FI_NKI_SUM_CH). */
static inline void fi_nki_dma_sum_any(void *dst, int dfmt, int disz, const void *const *src,
                                      const int *fmt, const int *isz, int ns, ptrdiff_t lo,
                                      ptrdiff_t n) {
    float acc[FI_NKI_SUM_CH], t[FI_NKI_SUM_CH];
    for (ptrdiff_t i0 = lo; i0 < n; i0 += FI_NKI_SUM_CH) {
        int c = n - i0 < FI_NKI_SUM_CH ? (int)(n - i0) : FI_NKI_SUM_CH;
        fi_nki_decode(fmt[0], (const char *)src[0] + i0 * isz[0], 1, c, acc);
        for (int k = 1; k < ns; k++) {
            const float *x = t;
            if (fmt[k] == FI_FLOAT32 || fmt[k] == FI_TFLOAT32)
                x = (const float *)src[k] + i0;
            else
                fi_nki_decode(fmt[k], (const char *)src[k] + i0 * isz[k], 1, c, t);
            for (int i = 0; i < c; i++) acc[i] = acc[i] + x[i];
        }
        fi_nki_encode_f32(dfmt, (char *)dst + i0 * disz, 1, c, acc);
    }
}

typedef struct {
    void *dst;
    int dfmt, disz, ns, all32;
    const void *const *src;
    const int *fmt, *isz;
    ptrdiff_t n, nch;
    int ntasks;
} fi_nki_dma_sum_job_t;

static void fi_nki_dma_sum_task(void *ctx, int t) {
    const fi_nki_dma_sum_job_t *j = (const fi_nki_dma_sum_job_t *)ctx;
    ptrdiff_t lo = j->nch * t / j->ntasks * FI_NKI_SUM_CH;
    ptrdiff_t hi = j->nch * (t + 1) / j->ntasks * FI_NKI_SUM_CH;
    if (hi > j->n) hi = j->n;
    if (lo >= hi) return;
    if (j->all32)
        fi_nki_dma_sum_f32((float *)j->dst, (const float *const *)j->src, j->ns, lo, hi);
    else
        fi_nki_dma_sum_any(j->dst, j->dfmt, j->disz, j->src, j->fmt, j->isz, j->ns, lo, hi);
}

static inline void fi_nki_dma_sum(void *dst, int dfmt, int disz, const void *const *src,
                                  const int *fmt, const int *isz, int ns, ptrdiff_t n,
                                  int nt) {
    int all32 = dfmt == FI_FLOAT32;
    for (int k = 0; k < ns && all32; k++) all32 = fmt[k] == FI_FLOAT32;
    /* a large sum: contiguous pieces of whole chunks over the shared pool, four per thread
     * (each element's additions are the same whoever does them); any formats */
    if (n >= (1 << 16) && nt != 1) {
        int T = fi_par_threads(nt);
        ptrdiff_t nch = (n + FI_NKI_SUM_CH - 1) / FI_NKI_SUM_CH;
        int ntasks = (ptrdiff_t)4 * T < nch ? 4 * T : (int)nch;
        fi_nki_dma_sum_job_t job = {dst, dfmt, disz, ns, all32, src, fmt, isz, n, nch, ntasks};
        fi_par_for(T, ntasks, fi_nki_dma_sum_task, &job);
        return;
    }
    if (all32)
        fi_nki_dma_sum_f32((float *)dst, (const float *const *)src, ns, 0, n);
    else
        fi_nki_dma_sum_any(dst, dfmt, disz, src, fmt, isz, ns, 0, n);
}

#endif /* FASTISA_NKI_H */
