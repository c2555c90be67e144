/* fastisa PTO tile kernels (reference/pto.md sections 1-2, specs 003 and 004).
 *
 * Python-free, header-only, static inline, fi_ prefix.  One kernel per operation shape:
 *   fi_tile_unary     dst = op(src)                    (elementwise, expand, move, transpose)
 *   fi_tile_binary    dst = op(a, b)                   (elementwise, tile/scalar, row/col expand)
 *   fi_tile_rowreduce dst[r] = fold_c op(src[r, c])
 *   fi_tile_colreduce dst[c] = fold_r op(src[r, c])
 *   fi_tile_matmul    dst = a @ b [+ init]             (float32 fma accumulation / int32;
 *                                                       a float init is added after the chain)
 *   fi_tile_cvt       dst = round_mode(src)            (any format to any format)
 * The op is data (an enum switched outside the inner loops).  Every operand is a
 * pointer with element strides rs (between rows) and cs (between columns), so row-major,
 * column-major, scalar (rs = cs = 0), per-row (cs = 0) and per-column (rs = 0) operands
 * share one code path; a binary operand's column index is taken modulo its "vc" (the
 * ``c % validCol`` rule of the row-expand ops).
 *
 * Arithmetic: float32/float16/bfloat16 sources are computed in float32 and rounded once to
 * the destination (correctly rounded for + - * / since 24 >= 2p + 2); exp, log, sqrt and
 * rsqrt are computed in double and rounded once (fi_f64_to_f16 / fi_f64_to_bf16 / (float));
 * integers are computed in int64 and wrap to the destination width.  Kernels trust their
 * inputs (Python validated them) and never fail.
 */
#ifndef FASTISA_TILE_H
#define FASTISA_TILE_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <stdlib.h>

#include "formats.h"
#include "par.h"
#include "cpu.h"
#include "mm256.h"

#define FI_TILE_CHUNK 512
/* Row splitting: with fi_tile_threads > 1 (set by the driver), a tile with at least
 * FI_TILE_PAR_MIN elements is split into that many bands of rows, run on plain POSIX
 * threads (blocking join, no spinning) while the caller runs the first band.  Rows are
 * independent, so the result never depends on the thread count; if a thread cannot be
 * started its band runs on the caller. */
#define FI_TILE_PAR_MIN 65536
#define FI_TILE_MAX_THREADS 16
static int fi_tile_threads = 1;

typedef void (*fi_tile_rows_fn)(const void *ctx, int r0, int r1);
typedef struct { fi_tile_rows_fn fn; const void *ctx; int R, nt; } fi_tile_job;

static void fi_tile_rows_task(void *p, int t) {
    const fi_tile_job *j = (const fi_tile_job *)p;
    j->fn(j->ctx, (int)((int64_t)j->R * t / j->nt), (int)((int64_t)j->R * (t + 1) / j->nt));
}

/* fn over rows [0, R): for a tile of >= FI_TILE_PAR_MIN elements, nt contiguous blocks of
 * rows over fastisa's worker pool (par.h; it used to start nt - 1 POSIX threads per call) */
static inline void fi_tile_run_rows(fi_tile_rows_fn fn, const void *ctx, int R, int C) {
    int nt = fi_tile_threads;
    if (nt > FI_TILE_MAX_THREADS) nt = FI_TILE_MAX_THREADS;
    if (nt > R) nt = R;
    if (nt > 1 && (int64_t)R * C >= FI_TILE_PAR_MIN) {
        fi_tile_job job = {fn, ctx, R, nt};
        fi_par_for(nt, nt, fi_tile_rows_task, &job);
        return;
    }
    fn(ctx, 0, R);
}

typedef enum {
    FI_TOP_COPY = 0, FI_TOP_ABS = 1, FI_TOP_NEG = 2, FI_TOP_RELU = 3, FI_TOP_RECIP = 4,
    FI_TOP_EXP = 5, FI_TOP_LOG = 6, FI_TOP_SQRT = 7, FI_TOP_RSQRT = 8,
    FI_TOP_ADD = 10, FI_TOP_SUB = 11, FI_TOP_MUL = 12, FI_TOP_DIV = 13, FI_TOP_MAX = 14,
    FI_TOP_MIN = 15, FI_TOP_EXPDIF = 16, FI_TOP_SUM = 17
} fi_tile_op;

typedef enum {
    FI_RND_NONE = 0, FI_RND_RINT = 1, FI_RND_ROUND = 2, FI_RND_FLOOR = 3, FI_RND_CEIL = 4,
    FI_RND_TRUNC = 5, FI_RND_ODD = 6
} fi_round_mode;

/* One operand: base pointer, format, element strides. */
typedef struct {
    void *p;
    int fmt;
    ptrdiff_t rs, cs;
} fi_tile_arg;

static inline int fi_tile_is_float(int fmt) {
    return fmt == FI_FLOAT32 || fmt == FI_FLOAT16 || fmt == FI_BFLOAT16;
}

/* Bytes per stored element of every format code (explicit for all of them: a format a
 * kernel does not handle must never be read with a guessed width).  Unknown codes give 0, so
 * a stray one addresses only the base element; the Python layer refuses every format outside
 * fastisa.pto._tile.KERNEL_FORMATS before a kernel runs. */
static inline size_t fi_tile_itemsize(int fmt) {
    switch (fmt) {
    case FI_UINT8: case FI_INT8: case FI_BOOL:
    case FI_FLOAT8_E4M3: case FI_FLOAT8_E5M2: case FI_FLOAT8_E4M3FN: case FI_FLOAT8_E8M0FNU:
    case FI_FLOAT4_E2M1FN:
        return 1;
    case FI_UINT16: case FI_INT16: case FI_FLOAT16: case FI_BFLOAT16: case FI_FLOAT4_E2M1FN_X4:
        return 2;
    case FI_UINT32: case FI_INT32: case FI_FLOAT32: case FI_TFLOAT32:
    case FI_FLOAT8_E5M2_X4: case FI_FLOAT8_E4M3FN_X4:
        return 4;
    default: return 0;
    }
}

static inline char *fi_tile_at(const fi_tile_arg *a, ptrdiff_t r, ptrdiff_t c) {
    return (char *)a->p + (r * a->rs + c * a->cs) * (ptrdiff_t)fi_tile_itemsize(a->fmt);
}

/* ---- loaders: n elements at stride cs into a float / double / int64 buffer -------- */
static inline void fi_tile_load_f(int fmt, const char *p, ptrdiff_t cs, float *o, int n) {
    int i;
    switch (fmt) {
    case FI_FLOAT32: {
        const float *q = (const float *)p;
        if (cs == 1) memcpy(o, q, (size_t)n * sizeof(float));
        else for (i = 0; i < n; i++) o[i] = q[i * cs];
        break; }
    case FI_FLOAT16: { const uint16_t *q = (const uint16_t *)p;
        for (i = 0; i < n; i++) o[i] = fi_f16_to_f32(q[i * cs]);
        break; }
    case FI_BFLOAT16: { const uint16_t *q = (const uint16_t *)p;
        for (i = 0; i < n; i++) o[i] = fi_bf16_to_f32(q[i * cs]);
        break; }
    case FI_INT32: { const int32_t *q = (const int32_t *)p;
        for (i = 0; i < n; i++) o[i] = (float)q[i * cs];
        break; }
    case FI_INT16: { const int16_t *q = (const int16_t *)p;
        for (i = 0; i < n; i++) o[i] = (float)q[i * cs];
        break; }
    default: for (i = 0; i < n; i++) o[i] = 0.0f;
        break;
    }
}

static inline void fi_tile_load_d(int fmt, const char *p, ptrdiff_t cs, double *o, int n) {
    int i;
    switch (fmt) {
    case FI_FLOAT32: { const float *q = (const float *)p;
        for (i = 0; i < n; i++) o[i] = (double)q[i * cs];
        break; }
    case FI_FLOAT16: { const uint16_t *q = (const uint16_t *)p;
        for (i = 0; i < n; i++) o[i] = (double)fi_f16_to_f32(q[i * cs]);
        break; }
    case FI_BFLOAT16: { const uint16_t *q = (const uint16_t *)p;
        for (i = 0; i < n; i++) o[i] = (double)fi_bf16_to_f32(q[i * cs]);
        break; }
    case FI_INT32: { const int32_t *q = (const int32_t *)p;
        for (i = 0; i < n; i++) o[i] = (double)q[i * cs];
        break; }
    case FI_UINT32: { const uint32_t *q = (const uint32_t *)p;
        for (i = 0; i < n; i++) o[i] = (double)q[i * cs];
        break; }
    case FI_INT16: { const int16_t *q = (const int16_t *)p;
        for (i = 0; i < n; i++) o[i] = (double)q[i * cs];
        break; }
    case FI_UINT16: { const uint16_t *q = (const uint16_t *)p;
        for (i = 0; i < n; i++) o[i] = (double)q[i * cs];
        break; }
    case FI_INT8: { const int8_t *q = (const int8_t *)p;
        for (i = 0; i < n; i++) o[i] = (double)q[i * cs];
        break; }
    case FI_UINT8: { const uint8_t *q = (const uint8_t *)p;
        for (i = 0; i < n; i++) o[i] = (double)q[i * cs];
        break; }
    default: for (i = 0; i < n; i++) o[i] = 0.0;
        break;
    }
}

static inline void fi_tile_load_i(int fmt, const char *p, ptrdiff_t cs, int64_t *o, int n) {
    int i;
    switch (fmt) {
    case FI_INT32: { const int32_t *q = (const int32_t *)p;
        for (i = 0; i < n; i++) o[i] = q[i * cs];
        break; }
    case FI_UINT32: { const uint32_t *q = (const uint32_t *)p;
        for (i = 0; i < n; i++) o[i] = q[i * cs];
        break; }
    case FI_INT16: { const int16_t *q = (const int16_t *)p;
        for (i = 0; i < n; i++) o[i] = q[i * cs];
        break; }
    case FI_UINT16: { const uint16_t *q = (const uint16_t *)p;
        for (i = 0; i < n; i++) o[i] = q[i * cs];
        break; }
    case FI_INT8: { const int8_t *q = (const int8_t *)p;
        for (i = 0; i < n; i++) o[i] = q[i * cs];
        break; }
    case FI_UINT8: { const uint8_t *q = (const uint8_t *)p;
        for (i = 0; i < n; i++) o[i] = q[i * cs];
        break; }
    default: for (i = 0; i < n; i++) o[i] = 0;
        break;
    }
}

/* ---- stores: round once to the destination format ------------------------------- */
static inline void fi_tile_store_f(int fmt, char *p, ptrdiff_t cs, const float *v, int n) {
    int i;
    switch (fmt) {
    case FI_FLOAT32: { float *q = (float *)p;
        if (cs == 1) memcpy(q, v, (size_t)n * sizeof(float));
        else for (i = 0; i < n; i++) q[i * cs] = v[i];
        break; }
    case FI_FLOAT16: { uint16_t *q = (uint16_t *)p;
        for (i = 0; i < n; i++) q[i * cs] = fi_f32_to_f16(v[i]);
        break; }
    case FI_BFLOAT16: { uint16_t *q = (uint16_t *)p;
        for (i = 0; i < n; i++) q[i * cs] = fi_f32_to_bf16(v[i]);
        break; }
    default: break;
    }
}

static inline void fi_tile_store_d(int fmt, char *p, ptrdiff_t cs, const double *v, int n) {
    int i;
    switch (fmt) {
    case FI_FLOAT32: { float *q = (float *)p;
        for (i = 0; i < n; i++) q[i * cs] = (float)v[i];
        break; }
    case FI_FLOAT16: { uint16_t *q = (uint16_t *)p;
        for (i = 0; i < n; i++) q[i * cs] = fi_f64_to_f16(v[i]);
        break; }
    case FI_BFLOAT16: { uint16_t *q = (uint16_t *)p;
        for (i = 0; i < n; i++) q[i * cs] = fi_f64_to_bf16(v[i]);
        break; }
    default: break;
    }
}

/* A double stored to an integer format as C++'s static_cast on x86-64 would for values in
 * range: truncated toward zero; out-of-range values saturate to the format's range and NaN
 * gives 0 (C++ leaves those undefined; callers that care check first). */
static inline void fi_tile_store_i(int fmt, char *p, ptrdiff_t cs, const int64_t *v, int n);
static inline int64_t fi_tile_trunc_sat(double x, int fmt) {
    double lo, hi;
    switch (fmt) {
    case FI_INT32: lo = -2147483648.0; hi = 2147483647.0; break;
    case FI_UINT32: lo = 0.0; hi = 4294967295.0; break;
    case FI_INT16: lo = -32768.0; hi = 32767.0; break;
    case FI_UINT16: lo = 0.0; hi = 65535.0; break;
    case FI_INT8: lo = -128.0; hi = 127.0; break;
    default: lo = 0.0; hi = 255.0; break;
    }
    if (x != x) return 0;
    if (x <= lo) return (int64_t)lo;
    if (x >= hi) return (int64_t)hi;
    return (int64_t)x;
}
static inline void fi_tile_store_d_int(int fmt, char *p, ptrdiff_t cs, const double *v, int n) {
    int64_t t[FI_TILE_CHUNK];
    int i, k, m;
    for (k = 0; k < n; k += FI_TILE_CHUNK) {
        m = n - k < FI_TILE_CHUNK ? n - k : FI_TILE_CHUNK;
        for (i = 0; i < m; i++) t[i] = fi_tile_trunc_sat(v[k + i], fmt);
        fi_tile_store_i(fmt, p + (ptrdiff_t)k * cs * (ptrdiff_t)fi_tile_itemsize(fmt), cs, t, m);
    }
}

/* Integers wrap to the destination width (two's complement). */
static inline void fi_tile_store_i(int fmt, char *p, ptrdiff_t cs, const int64_t *v, int n) {
    int i;
    switch (fmt) {
    case FI_INT32: { int32_t *q = (int32_t *)p;
        for (i = 0; i < n; i++) q[i * cs] = (int32_t)(uint32_t)(uint64_t)v[i];
        break; }
    case FI_UINT32: { uint32_t *q = (uint32_t *)p;
        for (i = 0; i < n; i++) q[i * cs] = (uint32_t)(uint64_t)v[i];
        break; }
    case FI_INT16: { int16_t *q = (int16_t *)p;
        for (i = 0; i < n; i++) q[i * cs] = (int16_t)(uint16_t)(uint64_t)v[i];
        break; }
    case FI_UINT16: { uint16_t *q = (uint16_t *)p;
        for (i = 0; i < n; i++) q[i * cs] = (uint16_t)(uint64_t)v[i];
        break; }
    case FI_INT8: { int8_t *q = (int8_t *)p;
        for (i = 0; i < n; i++) q[i * cs] = (int8_t)(uint8_t)(uint64_t)v[i];
        break; }
    case FI_UINT8: { uint8_t *q = (uint8_t *)p;
        for (i = 0; i < n; i++) q[i * cs] = (uint8_t)(uint64_t)v[i];
        break; }
    default: break;
    }
}

/* Rounds a float32 value to T and back (the "in T" step of EXPDIF's subtraction). */
static inline void fi_tile_round_in_place(int fmt, float *v, int n) {
    int i;
    if (fmt == FI_FLOAT16) for (i = 0; i < n; i++) v[i] = fi_f16_to_f32(fi_f32_to_f16(v[i]));
    else if (fmt == FI_BFLOAT16) for (i = 0; i < n; i++) v[i] = fi_bf16_to_f32(fi_f32_to_bf16(v[i]));
}

/* ---- exp in double ----------------------------------------------------------------------
 * fi_tile_exp_d: libm's exp, as the reference CPU simulator's std::exp((double)x); the
 * caller rounds the double result once to T.
 *
 * fi_tile_exp_to_f32: (float)exp(x), bit-identical to libm's exp rounded once, about twice
 * as fast.  y = 2^(k/64) * (1 + r + r^2/2 + r^3/6 + r^4/24), k = round(64 x / ln2),
 * r = x - k ln2/64 (|r| <= ln2/128; ln2/64 split so k * hi is exact) has relative error below
 * 2^-44 (table entries correctly rounded, truncation 0.0055^5/120 < 2^-44.5).  When y is more
 * than 2^-39 (relative) away from a float32 rounding midpoint, the exact exp(x) and libm's
 * exp (error below 1 ULP of double) lie on the same side of it, so (float)y is the answer.
 * Otherwise (about one element in 30000), for x outside [-87, 88] (float32 subnormal results,
 * overflow) and for NaN, libm's exp is called. */
static inline void fi_tile_exp_d(double *v, int n) {
    int i;
    for (i = 0; i < n; i++) v[i] = exp(v[i]);
}

static const double fi_tile_exp2_64[64] = {
    0x1.0000000000000p+0, 0x1.02c9a3e778061p+0, 0x1.059b0d3158574p+0, 0x1.0874518759bc8p+0,
    0x1.0b5586cf9890fp+0, 0x1.0e3ec32d3d1a2p+0, 0x1.11301d0125b51p+0, 0x1.1429aaea92de0p+0,
    0x1.172b83c7d517bp+0, 0x1.1a35beb6fcb75p+0, 0x1.1d4873168b9aap+0, 0x1.2063b88628cd6p+0,
    0x1.2387a6e756238p+0, 0x1.26b4565e27cddp+0, 0x1.29e9df51fdee1p+0, 0x1.2d285a6e4030bp+0,
    0x1.306fe0a31b715p+0, 0x1.33c08b26416ffp+0, 0x1.371a7373aa9cbp+0, 0x1.3a7db34e59ff7p+0,
    0x1.3dea64c123422p+0, 0x1.4160a21f72e2ap+0, 0x1.44e086061892dp+0, 0x1.486a2b5c13cd0p+0,
    0x1.4bfdad5362a27p+0, 0x1.4f9b2769d2ca7p+0, 0x1.5342b569d4f82p+0, 0x1.56f4736b527dap+0,
    0x1.5ab07dd485429p+0, 0x1.5e76f15ad2148p+0, 0x1.6247eb03a5585p+0, 0x1.6623882552225p+0,
    0x1.6a09e667f3bcdp+0, 0x1.6dfb23c651a2fp+0, 0x1.71f75e8ec5f74p+0, 0x1.75feb564267c9p+0,
    0x1.7a11473eb0187p+0, 0x1.7e2f336cf4e62p+0, 0x1.82589994cce13p+0, 0x1.868d99b4492edp+0,
    0x1.8ace5422aa0dbp+0, 0x1.8f1ae99157736p+0, 0x1.93737b0cdc5e5p+0, 0x1.97d829fde4e50p+0,
    0x1.9c49182a3f090p+0, 0x1.a0c667b5de565p+0, 0x1.a5503b23e255dp+0, 0x1.a9e6b5579fdbfp+0,
    0x1.ae89f995ad3adp+0, 0x1.b33a2b84f15fbp+0, 0x1.b7f76f2fb5e47p+0, 0x1.bcc1e904bc1d2p+0,
    0x1.c199bdd85529cp+0, 0x1.c67f12e57d14bp+0, 0x1.cb720dcef9069p+0, 0x1.d072d4a07897cp+0,
    0x1.d5818dcfba487p+0, 0x1.da9e603db3285p+0, 0x1.dfc97337b9b5fp+0, 0x1.e502ee78b3ff6p+0,
    0x1.ea4afa2a490dap+0, 0x1.efa1bee615a27p+0, 0x1.f50765b6e4540p+0, 0x1.fa7c1819e90d8p+0
};

static inline float fi_tile_exp_to_f32(double x) {
    double kd, r, t, y;
    uint64_t kb, tb, yb, low;
    int64_t k;
    if (!(x >= -87.0 && x <= 88.0)) return (float)exp(x);
    kd = x * 0x1.71547652b82fep+6 + 0x1.8p52;
    memcpy(&kb, &kd, 8);
    kd -= 0x1.8p52;
    r = (x - kd * 0x1.62e42fef00000p-7) - kd * 0x1.473de6af278edp-40;
    k = (int64_t)(kb - 0x4338000000000000ull);
    t = fi_tile_exp2_64[k & 63];
    memcpy(&tb, &t, 8);
    tb += (uint64_t)(k >> 6) << 52;
    memcpy(&t, &tb, 8);
    y = t + t * (r + r * r * (0.5 + r * (1.0 / 6 + r * (1.0 / 24))));
    memcpy(&yb, &y, 8);
    low = yb & 0x1FFFFFFFull;   /* the 29 bits below float32 precision; midpoint 0x10000000 */
    if (low > 0x10000000ull - 0x2000ull && low < 0x10000000ull + 0x2000ull)
        return (float)exp(x);
    return (float)y;
}

/* fi_tile_exp_f32_row: q[i] = (float)exp((double)(p[i] - m)) for i < n (p, q contiguous
 * float32; m = 0 gives TEXP, since p - 0 is p for every p), the same bits as
 * fi_tile_exp_to_f32 element by element.  It runs fi_tile_exp_f32_row_avx512 (below) on
 * CPUs with AVX-512F and fi_tile_exp_f32_row_c elsewhere.
 * fi_tile_exp_f32_row_c: the same table exp, arranged as three loops over
 * chunks of 256 that the compiler vectorises (argument reduction, table scaling, polynomial
 * and midpoint check); a chunk holding any element the fast formula cannot settle (a value
 * within 2^-39 of a float32 rounding midpoint, x outside [-87, 88], NaN) is redone element by
 * element with fi_tile_exp_to_f32 (from the saved x: q may alias p).  Compiled for AVX-512/AVX2/baseline and picked at load
 * time on x86-64 Linux GCC builds (no FMA contraction: -ffp-contract=off, same bits). */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) && \
    defined(__GLIBC__) && !defined(__AVX2__) && !defined(FASTISA_DEBUG)
#define FI_TILE_CLONES __attribute__((target_clones("avx512f", "avx2", "default"), unused))
#else
#define FI_TILE_CLONES __attribute__((unused))
#endif
FI_TILE_CLONES static void fi_tile_exp_f32_row_c(float *q, const float *p, float m, int n) {
    double rb[256], tv[256], xb[256];
    uint64_t kb[256];
    int c0, i, nn, bad;
    for (c0 = 0; c0 < n; c0 += 256) {
        nn = n - c0 < 256 ? n - c0 : 256;
        bad = 0;
        for (i = 0; i < nn; i++) {
            double x = (double)(p[c0 + i] - m), kd;
            uint64_t b;
            xb[i] = x;
            bad |= (x < -87.0) | (x > 88.0) | (x != x);
            kd = x * 0x1.71547652b82fep+6 + 0x1.8p52;
            memcpy(&b, &kd, 8);
            kb[i] = b;
            kd -= 0x1.8p52;
            rb[i] = (x - kd * 0x1.62e42fef00000p-7) - kd * 0x1.473de6af278edp-40;
        }
        for (i = 0; i < nn; i++) {
            int64_t k = (int64_t)(kb[i] - 0x4338000000000000ull);
            uint64_t tb;
            double t = fi_tile_exp2_64[k & 63];
            memcpy(&tb, &t, 8);
            tb += (uint64_t)(k >> 6) << 52;
            memcpy(&t, &tb, 8);
            tv[i] = t;
        }
        for (i = 0; i < nn; i++) {
            double r = rb[i], t = tv[i], y;
            uint64_t yb;
            uint32_t low;
            y = t + t * (r + r * r * (0.5 + r * (1.0 / 6 + r * (1.0 / 24))));
            memcpy(&yb, &y, 8);
            low = (uint32_t)yb & 0x1FFFFFFFu;
            bad |= (low - 0x0FFFE001u) < 0x3FFFu;
            q[c0 + i] = (float)y;
        }
        if (bad)
            for (i = 0; i < nn; i++) q[c0 + i] = fi_tile_exp_to_f32(xb[i]);   /* q may be p */
    }
}

/* The same q[i] = (float)exp((double)(p[i] - m)) with AVX-512F intrinsics, for CPUs that
 * have it (checked at run time), 16 elements per step.  A different approximation, the same
 * bits: y = 2^(k/16) * (1 + r + r^2/2 + r^3/6 + r^4/24 + r^5/120), k = round(16 x / ln2),
 * r = x - k ln2/16 (ln2/16 split so k * hi is exact; |r| <= ln2/32 + 2^-40), evaluated
 * with fused multiply-adds.  Its relative error is below 2^-42.6: truncation
 * |r|^6/720 * e^|r| < 2^-42.64 (|r| <= 0.021662), plus the table entries (correctly rounded,
 * 2^-53) and about three roundings of the evaluation (2^-53 each), so |y - exp(x)| is under
 * 2^10.4 units of y's last place.  The element is settled from y when y's 29 bits below
 * float32 precision are at least 0x1FFF units from the rounding midpoint 0x10000000
 * (the test ((bits + 0x1FFF) & 0x1FFFC000) != 0x10000000): the exact exp(x) and libm's exp
 * (error below 1 unit) then lie on y's side of that midpoint, so (float)y is (float)libm
 * exp(x), as in fi_tile_exp_to_f32 (the same argument with a tighter bound; the results
 * depend on no approximation).  Otherwise, and for x outside [-87, 88] or NaN (an ordered
 * compare on the float32 x), the element is computed by fi_tile_exp_to_f32 (libm's exp
 * where that one cannot settle it).  The FMAs are explicit intrinsics, unaffected by
 * -ffp-contract=off; they change y's low bits, never a result.  Every float32 input was
 * checked against (float)exp((double)x) when this was written (all 2^32 codes, m = 0);
 * tests/test_pto.py compares this path with fi_tile_exp_f32_row_c on the same inputs. */
#if defined(__GNUC__) && defined(__x86_64__) && !defined(FASTISA_NO_SIMD)
#include <immintrin.h>
#define FI_TILE_EXP_AVX512 1
/* 1: the AVX-512F exp when the CPU has it (the default); 0: always the portable code (the
 * driver's tests switch it to compare both). */
static int fi_tile_exp_simd = 1;

#define FI_TILE_EXP8(x, yf, ok) do { \
        __m512d kd_ = _mm512_fmadd_pd(x, c16, sh); \
        __m512i kb_ = _mm512_castpd_si512(kd_); \
        __m512d r_, t_, pl_, y_; \
        kd_ = _mm512_sub_pd(kd_, sh); \
        r_ = _mm512_fnmadd_pd(kd_, lo, _mm512_fnmadd_pd(kd_, hi, x)); \
        t_ = _mm512_permutex2var_pd(t0, kb_, t1);        /* 2^((k mod 16) / 16) */ \
        /* + (k >> 4) << 52 on the exponent: kb's low 16 bits are k's */ \
        t_ = _mm512_castsi512_pd(_mm512_add_epi64(_mm512_castpd_si512(t_), \
                 _mm512_and_si512(_mm512_slli_epi64(kb_, 48), emask))); \
        pl_ = _mm512_fmadd_pd(r_, c5, c4); \
        pl_ = _mm512_fmadd_pd(r_, pl_, c3); \
        pl_ = _mm512_fmadd_pd(r_, pl_, c2); \
        pl_ = _mm512_fmadd_pd(_mm512_mul_pd(r_, r_), pl_, r_); \
        y_ = _mm512_fmadd_pd(t_, pl_, t_); \
        ok = _mm512_cmpneq_epi64_mask(_mm512_and_si512( \
                 _mm512_add_epi64(_mm512_castpd_si512(y_), wadd), wmask), wmid); \
        yf = _mm512_cvtpd_ps(y_); \
    } while (0)

__attribute__((target("avx512f"), unused)) static void fi_tile_exp_f32_row_avx512(
        float *q, const float *p, float m, int n) {
    const __m512d c16 = _mm512_set1_pd(0x1.71547652b82fep+4), sh = _mm512_set1_pd(0x1.8p52);
    const __m512d hi = _mm512_set1_pd(0x1.62e42fef00000p-5);
    const __m512d lo = _mm512_set1_pd(0x1.473de6af278edp-38);
    const __m512i every4 = _mm512_set_epi64(28, 24, 20, 16, 12, 8, 4, 0);
    const __m512d t0 = _mm512_i64gather_pd(every4, fi_tile_exp2_64, 8);       /* 2^(j/16) */
    const __m512d t1 = _mm512_i64gather_pd(every4, fi_tile_exp2_64 + 32, 8);
    const __m512d c2 = _mm512_set1_pd(0.5), c3 = _mm512_set1_pd(1.0 / 6);
    const __m512d c4 = _mm512_set1_pd(1.0 / 24), c5 = _mm512_set1_pd(1.0 / 120);
    const __m512 lo87 = _mm512_set1_ps(-87.0f), hi88 = _mm512_set1_ps(88.0f);
    const __m512 mv = _mm512_set1_ps(m);
    const __m512i emask = _mm512_set1_epi64((long long)0xFFF0000000000000ull);
    const __m512i wadd = _mm512_set1_epi64(0x1FFF), wmask = _mm512_set1_epi64(0x1FFFC000);
    const __m512i wmid = _mm512_set1_epi64(0x10000000);
    int i, j;
    for (i = 0; i < n; i += 16) {
        __mmask16 lm = n - i >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (n - i)) - 1u);
        __m512 xf = _mm512_sub_ps(_mm512_maskz_loadu_ps(lm, p + i), mv);
        __mmask16 ok = _mm512_cmp_ps_mask(xf, lo87, _CMP_GE_OQ) &
                       _mm512_cmp_ps_mask(xf, hi88, _CMP_LE_OQ);
        __m512d xa = _mm512_cvtps_pd(_mm512_castps512_ps256(xf));
        __m512d xb = _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(xf), 1)));
        __m256 ya, yb;
        __mmask8 oka, okb;
        __m512 yf;
        FI_TILE_EXP8(xa, ya, oka);
        FI_TILE_EXP8(xb, yb, okb);
        yf = _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castps_pd(_mm512_castps256_ps512(ya)),
                                                 _mm256_castps_pd(yb), 1));
        ok &= (__mmask16)((unsigned)oka | ((unsigned)okb << 8));
        if ((__mmask16)(ok & lm) != lm) {       /* about one element in 30000, or a special */
            float xs[16], ys[16];
            _mm512_storeu_ps(xs, xf);
            _mm512_storeu_ps(ys, yf);
            for (j = 0; j < 16; j++)
                if (((lm >> j) & 1) && !((ok >> j) & 1)) ys[j] = fi_tile_exp_to_f32((double)xs[j]);
            yf = _mm512_loadu_ps(ys);
        }
        _mm512_mask_storeu_ps(q + i, lm, yf);  /* after the load: q may be p */
    }
}
#undef FI_TILE_EXP8
#endif

/* Sets whether fi_tile_exp_f32_row may use the AVX-512F code (1, the default) or always runs
 * the portable one (0); returns the previous setting, 0 where there is no AVX-512F code
 * (not GCC/clang on x86-64, FASTISA_NO_SIMD) or the CPU lacks it. */
static inline int fi_tile_set_exp_simd(int on) {
#ifdef FI_TILE_EXP_AVX512
    int old = fi_tile_exp_simd && __builtin_cpu_supports("avx512f");
    fi_tile_exp_simd = on != 0;
    return old;
#else
    (void)on;
    return 0;
#endif
}

__attribute__((unused)) static void fi_tile_exp_f32_row(float *q, const float *p, float m, int n) {
#ifdef FI_TILE_EXP_AVX512
    if (fi_tile_exp_simd && __builtin_cpu_supports("avx512f")) {
        fi_tile_exp_f32_row_avx512(q, p, m, n);
        return;
    }
#endif
    fi_tile_exp_f32_row_c(q, p, m, n);
}

/* exp over every float16 code, rounded once to float16 (fi_f64_to_f16 of fi_tile_exp_d):
 * float16 TEXP and the float16 EXPDIF look results up here.  Filled once by fi_tile_init(),
 * which the driver calls at import, before any kernel runs; read-only afterwards. */
static uint16_t fi_tile_exp_f16_tab[65536];

static inline void fi_tile_set_threads(int n) { fi_tile_threads = n < 1 ? 1 : n; }

static inline void fi_tile_init(void) {
    double d[256];
    int hi, lo;
    for (hi = 0; hi < 256; hi++) {
        for (lo = 0; lo < 256; lo++) d[lo] = (double)fi_f16_to_f32((uint16_t)(hi << 8 | lo));
        fi_tile_exp_d(d, 256);
        for (lo = 0; lo < 256; lo++) fi_tile_exp_f16_tab[hi << 8 | lo] = fi_f64_to_f16(d[lo]);
    }
}

/* ---- elementwise unary ------------------------------------------------------------ */
static inline void fi_tile_copy_row(const fi_tile_arg *d, const fi_tile_arg *s, ptrdiff_t r,
                                    int C) {
    ptrdiff_t c;
    size_t isz = fi_tile_itemsize(d->fmt);
    char *dp = fi_tile_at(d, r, 0);
    const char *sp = fi_tile_at(s, r, 0);
    if (d->cs == 1 && s->cs == 1) { memcpy(dp, sp, (size_t)C * isz); return; }
    switch (isz) {
    case 1: for (c = 0; c < C; c++) ((uint8_t *)dp)[c * d->cs] = ((const uint8_t *)sp)[c * s->cs]; break;
    case 2: for (c = 0; c < C; c++) ((uint16_t *)dp)[c * d->cs] = ((const uint16_t *)sp)[c * s->cs]; break;
    default: for (c = 0; c < C; c++) ((uint32_t *)dp)[c * d->cs] = ((const uint32_t *)sp)[c * s->cs]; break;
    }
}

static inline void fi_tile_unary_f(int op, float *v, int n) {
    int i;
    switch (op) {
    case FI_TOP_ABS: for (i = 0; i < n; i++) v[i] = fabsf(v[i]);
        break;
    case FI_TOP_NEG: for (i = 0; i < n; i++) v[i] = -v[i];
        break;
    case FI_TOP_RELU: for (i = 0; i < n; i++) v[i] = v[i] > 0.0f ? v[i] : 0.0f;
        break;
    case FI_TOP_RECIP: for (i = 0; i < n; i++) v[i] = 1.0f / v[i];
        break;
    default: break;  /* COPY (with conversion) */
    }
}

static inline void fi_tile_unary_d(int op, double *v, int n) {
    int i;
    switch (op) {
    case FI_TOP_EXP: fi_tile_exp_d(v, n); break;
    case FI_TOP_LOG: for (i = 0; i < n; i++) v[i] = log(v[i]);
        break;
    case FI_TOP_SQRT: for (i = 0; i < n; i++) v[i] = sqrt(v[i]);
        break;
    case FI_TOP_RSQRT: for (i = 0; i < n; i++) v[i] = 1.0 / sqrt(v[i]);
        break;
    default: break;
    }
}

static inline void fi_tile_unary_i(int op, int64_t *v, int n) {
    int i;
    switch (op) {
    case FI_TOP_ABS: for (i = 0; i < n; i++) v[i] = v[i] < 0 ? -v[i] : v[i];
        break;
    case FI_TOP_NEG: for (i = 0; i < n; i++) v[i] = -v[i];
        break;
    case FI_TOP_RELU: for (i = 0; i < n; i++) v[i] = v[i] > 0 ? v[i] : 0;
        break;
    case FI_TOP_RECIP: for (i = 0; i < n; i++) v[i] = v[i] != 0 ? 1 / v[i] : 0;
        break;
    default: break;
    }
}

/* dst[r, c] = op(src[r, c]) for r < R, c < C. */
static inline void fi_tile_unary_rows(int op, fi_tile_arg d, fi_tile_arg s, int r0, int r1, int C) {
    float fb[FI_TILE_CHUNK];
    double db[FI_TILE_CHUNK];
    int64_t ib[FI_TILE_CHUNK];
    ptrdiff_t r;
    int c0, n;
    int dbl = op == FI_TOP_EXP || op == FI_TOP_LOG || op == FI_TOP_SQRT || op == FI_TOP_RSQRT;
    if (op == FI_TOP_COPY && d.fmt == s.fmt) {
        for (r = r0; r < r1; r++) fi_tile_copy_row(&d, &s, r, C);
        return;
    }
    if (op == FI_TOP_EXP && s.fmt == FI_FLOAT16 && d.fmt == FI_FLOAT16) {
        for (r = r0; r < r1; r++) {
            const uint16_t *sp = (const uint16_t *)fi_tile_at(&s, r, 0);
            uint16_t *dp = (uint16_t *)fi_tile_at(&d, r, 0);
            for (c0 = 0; c0 < C; c0++) dp[c0 * d.cs] = fi_tile_exp_f16_tab[sp[c0 * s.cs]];
        }
        return;
    }
    if (op == FI_TOP_EXP && s.fmt == FI_FLOAT32 && d.fmt == FI_FLOAT32 && s.cs == 1 && d.cs == 1) {
        if (s.rs == C && d.rs == C) {   /* rows back to back: one run (elementwise: same bits) */
            fi_tile_exp_f32_row((float *)fi_tile_at(&d, r0, 0), (const float *)fi_tile_at(&s, r0, 0),
                                0.0f, (int)((r1 - r0) * (ptrdiff_t)C));
            return;
        }
        for (r = r0; r < r1; r++)
            fi_tile_exp_f32_row((float *)fi_tile_at(&d, r, 0), (const float *)fi_tile_at(&s, r, 0),
                                0.0f, C);
        return;
    }
    for (r = r0; r < r1; r++) {
        for (c0 = 0; c0 < C; c0 += FI_TILE_CHUNK) {
            n = C - c0 < FI_TILE_CHUNK ? C - c0 : FI_TILE_CHUNK;
            const char *sp = fi_tile_at(&s, r, c0);
            char *dp = fi_tile_at(&d, r, c0);
            if (!fi_tile_is_float(s.fmt) && (dbl || fi_tile_is_float(d.fmt))) {
                /* integer source, a double-precision op (TLOG on integers: static_cast of
                 * log((double)x)) or a float destination (exact in double, rounded once) */
                fi_tile_load_d(s.fmt, sp, s.cs, db, n);
                if (dbl) fi_tile_unary_d(op, db, n);
                else if (op != FI_TOP_COPY) {
                    /* ABS/NEG/RELU/RECIP are integer ops: compute in int64 first */
                    int i;
                    fi_tile_load_i(s.fmt, sp, s.cs, ib, n);
                    fi_tile_unary_i(op, ib, n);
                    for (i = 0; i < n; i++) db[i] = (double)ib[i];
                }
                if (fi_tile_is_float(d.fmt)) fi_tile_store_d(d.fmt, dp, d.cs, db, n);
                else fi_tile_store_d_int(d.fmt, dp, d.cs, db, n);
            } else if (!fi_tile_is_float(s.fmt)) {
                fi_tile_load_i(s.fmt, sp, s.cs, ib, n);
                fi_tile_unary_i(op, ib, n);
                fi_tile_store_i(d.fmt, dp, d.cs, ib, n);
            } else if (!fi_tile_is_float(d.fmt)) {
                /* float source, integer destination: the op in double, then truncation
                 * toward zero with saturation (fi_tile_trunc_sat) */
                if (dbl || op == FI_TOP_COPY) {
                    fi_tile_load_d(s.fmt, sp, s.cs, db, n);
                    if (dbl) fi_tile_unary_d(op, db, n);
                } else {
                    int i;
                    fi_tile_load_f(s.fmt, sp, s.cs, fb, n);
                    fi_tile_unary_f(op, fb, n);
                    for (i = 0; i < n; i++) db[i] = (double)fb[i];
                }
                fi_tile_store_d_int(d.fmt, dp, d.cs, db, n);
            } else if (op == FI_TOP_EXP && d.fmt == FI_FLOAT32) {
                float *q = (float *)dp;
                int i;
                fi_tile_load_d(s.fmt, sp, s.cs, db, n);
                for (i = 0; i < n; i++) q[i * d.cs] = fi_tile_exp_to_f32(db[i]);
            } else if (dbl) {
                fi_tile_load_d(s.fmt, sp, s.cs, db, n);
                fi_tile_unary_d(op, db, n);
                fi_tile_store_d(d.fmt, dp, d.cs, db, n);
            } else {
                fi_tile_load_f(s.fmt, sp, s.cs, fb, n);
                fi_tile_unary_f(op, fb, n);
                fi_tile_store_f(d.fmt, dp, d.cs, fb, n);
            }
        }
    }
}

/* dst[r, c] = op(src[r, c]) for r < R, c < C. */
typedef struct { int op; fi_tile_arg d, s; int C; } fi_tile_unary_ctx;
static void fi_tile_unary_job(const void *p, int r0, int r1) {
    const fi_tile_unary_ctx *c = (const fi_tile_unary_ctx *)p;
    fi_tile_unary_rows(c->op, c->d, c->s, r0, r1, c->C);
}
static inline void fi_tile_unary(int op, fi_tile_arg d, fi_tile_arg s, int R, int C) {
    fi_tile_unary_ctx c = {op, d, s, C};
    fi_tile_run_rows(fi_tile_unary_job, &c, R, C);
}

/* ---- elementwise binary ------------------------------------------------------------ */
static inline void fi_tile_binary_f(int op, float *a, const float *b, int n) {
    int i;
    switch (op) {
    case FI_TOP_ADD: for (i = 0; i < n; i++) a[i] = a[i] + b[i];
        break;
    case FI_TOP_SUB: for (i = 0; i < n; i++) a[i] = a[i] - b[i];
        break;
    case FI_TOP_MUL: for (i = 0; i < n; i++) a[i] = a[i] * b[i];
        break;
    case FI_TOP_DIV: for (i = 0; i < n; i++) a[i] = a[i] / b[i];
        break;
    case FI_TOP_MAX: for (i = 0; i < n; i++) a[i] = a[i] < b[i] ? b[i] : a[i];
        break;
    case FI_TOP_MIN: for (i = 0; i < n; i++) a[i] = b[i] < a[i] ? b[i] : a[i];
        break;
    case FI_TOP_EXPDIF: for (i = 0; i < n; i++) a[i] = a[i] - b[i];
        break;
    default: break;
    }
}

static inline void fi_tile_binary_i(int op, int64_t *a, const int64_t *b, int n) {
    int i;
    switch (op) {
    case FI_TOP_ADD: for (i = 0; i < n; i++) a[i] = (int64_t)((uint64_t)a[i] + (uint64_t)b[i]);
        break;
    case FI_TOP_SUB: for (i = 0; i < n; i++) a[i] = (int64_t)((uint64_t)a[i] - (uint64_t)b[i]);
        break;
    case FI_TOP_MUL: for (i = 0; i < n; i++) a[i] = (int64_t)((uint64_t)a[i] * (uint64_t)b[i]);
        break;
    case FI_TOP_DIV: for (i = 0; i < n; i++) a[i] = b[i] != 0 ? a[i] / b[i] : 0;
        break;
    case FI_TOP_MAX: for (i = 0; i < n; i++) a[i] = a[i] < b[i] ? b[i] : a[i];
        break;
    case FI_TOP_MIN: for (i = 0; i < n; i++) a[i] = b[i] < a[i] ? b[i] : a[i];
        break;
    default: break;
    }
}

/* Loads columns c0..c0+n-1 of row r of operand x, whose column index wraps at vc
 * (vc >= C: no wrap).  rowf/rowi hold the operand's first vc elements of the row. */
static inline void fi_tile_fill_wrap_f(const float *row, int vc, int c0, float *o, int n) {
    int i, j = c0 % vc;
    if (vc == 1) { float v = row[0]; for (i = 0; i < n; i++) o[i] = v; return; }
    for (i = 0; i < n; i++) { o[i] = row[j]; if (++j == vc) j = 0; }
}

static inline void fi_tile_fill_wrap_i(const int64_t *row, int vc, int c0, int64_t *o, int n) {
    int i, j = c0 % vc;
    for (i = 0; i < n; i++) { o[i] = row[j]; if (++j == vc) j = 0; }
}

/* float32 fast path of fi_tile_binary_rows: dst, a and b float32, dst contiguous, each
 * source contiguous (vc >= C) or one value per row (vc == 1, any cs).  Same arithmetic as
 * the general path, without the staging buffers.  A source with cs == 0 (a scalar or a
 * per-row value) is read once per row. */
#define FI_TILE_F32_LOOP(EXPR)                                                             \
    for (r = r0; r < r1; r++) {                                                            \
        float *q = (float *)fi_tile_at(&d, r, 0);                                          \
        const float *pa = (const float *)fi_tile_at(&a, r, 0);                             \
        const float *pb = (const float *)fi_tile_at(&b, r, 0);                             \
        if (asc) { const float x = pa[0];                                                  \
            for (c = 0; c < C; c++) { const float y = pb[c]; q[c] = (EXPR); } }            \
        else if (bsc) { const float y = pb[0];                                             \
            for (c = 0; c < C; c++) { const float x = pa[c]; q[c] = (EXPR); } }            \
        else for (c = 0; c < C; c++) { const float x = pa[c], y = pb[c]; q[c] = (EXPR); } \
    }

static inline int fi_tile_binary_f32_fast(int op, fi_tile_arg d, fi_tile_arg a, int avc,
                                          fi_tile_arg b, int bvc, int r0, int r1, int C) {
    ptrdiff_t r;
    int c;
    int asc = (avc == 1 || a.cs == 0) && C > 1, bsc = (bvc == 1 || b.cs == 0) && C > 1;
    if (a.fmt != FI_FLOAT32 || b.fmt != FI_FLOAT32 || d.fmt != FI_FLOAT32 || d.cs != 1) return 0;
    if (!((avc >= C && a.cs == 1) || asc) || !((bvc >= C && b.cs == 1) || bsc)) return 0;
    if (asc && bsc) return 0;
    switch (op) {
    case FI_TOP_ADD: FI_TILE_F32_LOOP(x + y); break;
    case FI_TOP_SUB: FI_TILE_F32_LOOP(x - y); break;
    case FI_TOP_MUL: FI_TILE_F32_LOOP(x * y); break;
    case FI_TOP_DIV: FI_TILE_F32_LOOP(x / y); break;
    case FI_TOP_MAX: FI_TILE_F32_LOOP(x < y ? y : x); break;
    case FI_TOP_MIN: FI_TILE_F32_LOOP(y < x ? y : x); break;
    default: return 0;
    }
    return 1;
}

/* dst[r, c] = op(a[r, c % avc], b[r, c % bvc]) for r < R, c < C.  A wrapping operand
 * (vc < C) must have vc <= FI_TILE_CHUNK. */
static inline void fi_tile_binary_rows(int op, fi_tile_arg d, fi_tile_arg a, int avc,
                                       fi_tile_arg b, int bvc, int r0, int r1, int C) {
    float fa[FI_TILE_CHUNK], fb[FI_TILE_CHUNK], fra[FI_TILE_CHUNK], frb[FI_TILE_CHUNK];
    double db[FI_TILE_CHUNK];
    int64_t ia[FI_TILE_CHUNK], ib[FI_TILE_CHUNK], ira[FI_TILE_CHUNK], irb[FI_TILE_CHUNK];
    ptrdiff_t r;
    int c0, n, i;
    int isf = fi_tile_is_float(a.fmt);
    int awrap = avc < C, bwrap = bvc < C;
    if (fi_tile_binary_f32_fast(op, d, a, avc, b, bvc, r0, r1, C)) return;
    if (op == FI_TOP_EXPDIF && a.fmt == FI_FLOAT32 && b.fmt == FI_FLOAT32 && d.fmt == FI_FLOAT32 &&
        a.cs == 1 && d.cs == 1 && !awrap && (bvc == 1 || b.cs == 0)) {
        for (r = r0; r < r1; r++)
            fi_tile_exp_f32_row((float *)fi_tile_at(&d, r, 0), (const float *)fi_tile_at(&a, r, 0),
                                *(const float *)fi_tile_at(&b, r, 0), C);
        return;
    }
    for (r = r0; r < r1; r++) {
        if (awrap) {
            if (isf) fi_tile_load_f(a.fmt, fi_tile_at(&a, r, 0), a.cs, fra, avc);
            else fi_tile_load_i(a.fmt, fi_tile_at(&a, r, 0), a.cs, ira, avc);
        }
        if (bwrap) {
            if (isf) fi_tile_load_f(b.fmt, fi_tile_at(&b, r, 0), b.cs, frb, bvc);
            else fi_tile_load_i(b.fmt, fi_tile_at(&b, r, 0), b.cs, irb, bvc);
        }
        for (c0 = 0; c0 < C; c0 += FI_TILE_CHUNK) {
            n = C - c0 < FI_TILE_CHUNK ? C - c0 : FI_TILE_CHUNK;
            char *dp = fi_tile_at(&d, r, c0);
            if (isf) {
                if (awrap) fi_tile_fill_wrap_f(fra, avc, c0, fa, n);
                else fi_tile_load_f(a.fmt, fi_tile_at(&a, r, c0), a.cs, fa, n);
                if (bwrap) fi_tile_fill_wrap_f(frb, bvc, c0, fb, n);
                else fi_tile_load_f(b.fmt, fi_tile_at(&b, r, c0), b.cs, fb, n);
                fi_tile_binary_f(op, fa, fb, n);
                if (op == FI_TOP_EXPDIF && a.fmt == FI_FLOAT16 && d.fmt == FI_FLOAT16) {
                    uint16_t *q = (uint16_t *)dp;
                    for (i = 0; i < n; i++) q[i * d.cs] = fi_tile_exp_f16_tab[fi_f32_to_f16(fa[i])];
                } else if (op == FI_TOP_EXPDIF && a.fmt == FI_FLOAT32 && d.fmt == FI_FLOAT32) {
                    float *q = (float *)dp;
                    for (i = 0; i < n; i++) q[i * d.cs] = fi_tile_exp_to_f32((double)fa[i]);
                } else if (op == FI_TOP_EXPDIF) {
                    fi_tile_round_in_place(a.fmt, fa, n);
                    for (i = 0; i < n; i++) db[i] = (double)fa[i];
                    fi_tile_exp_d(db, n);
                    fi_tile_store_d(d.fmt, dp, d.cs, db, n);
                } else {
                    fi_tile_store_f(d.fmt, dp, d.cs, fa, n);
                }
            } else {
                if (awrap) fi_tile_fill_wrap_i(ira, avc, c0, ia, n);
                else fi_tile_load_i(a.fmt, fi_tile_at(&a, r, c0), a.cs, ia, n);
                if (bwrap) fi_tile_fill_wrap_i(irb, bvc, c0, ib, n);
                else fi_tile_load_i(b.fmt, fi_tile_at(&b, r, c0), b.cs, ib, n);
                fi_tile_binary_i(op, ia, ib, n);
                fi_tile_store_i(d.fmt, dp, d.cs, ia, n);
            }
        }
    }
}

typedef struct { int op; fi_tile_arg d, a; int avc; fi_tile_arg b; int bvc; int C; } fi_tile_binary_ctx;
static void fi_tile_binary_job(const void *p, int r0, int r1) {
    const fi_tile_binary_ctx *c = (const fi_tile_binary_ctx *)p;
    fi_tile_binary_rows(c->op, c->d, c->a, c->avc, c->b, c->bvc, r0, r1, c->C);
}

/* dst[r, c] = op(a[r, c % avc], b[r, c % bvc]) for r < R, c < C.  A wrapping operand
 * (vc < C) must have vc <= FI_TILE_CHUNK. */
static inline void fi_tile_binary(int op, fi_tile_arg d, fi_tile_arg a, int avc, fi_tile_arg b,
                                  int bvc, int R, int C) {
    fi_tile_binary_ctx c = {op, d, a, avc, b, bvc, C};
    fi_tile_run_rows(fi_tile_binary_job, &c, R, C);
}

/* ---- reductions ----------------------------------------------------------------- */
/* float32 fast path of fi_tile_rowreduce_rows (contiguous float32 rows): four rows at a
 * time, each still folded left to right, so the result is the same as one row at a time. */
static inline int fi_tile_rowreduce_f32_fast(int op, fi_tile_arg d, fi_tile_arg s, int r0,
                                             int r1, int C) {
    ptrdiff_t r;
    int c, k;
    if (s.fmt != FI_FLOAT32 || s.cs != 1 || C < 1) return 0;
    if (op != FI_TOP_SUM && op != FI_TOP_MAX && op != FI_TOP_MIN) return 0;
    for (r = r0; r < r1; r += 4) {
        int m = r1 - r < 4 ? (int)(r1 - r) : 4;
        const float *p[4];
        float acc[4];
        for (k = 0; k < 4; k++) p[k] = (const float *)fi_tile_at(&s, r + (k < m ? k : 0), 0);
        if (op == FI_TOP_SUM) {
            float a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f;
            for (c = 0; c < C; c++) { a0 = a0 + p[0][c]; a1 = a1 + p[1][c]; a2 = a2 + p[2][c]; a3 = a3 + p[3][c]; }
            acc[0] = a0; acc[1] = a1; acc[2] = a2; acc[3] = a3;
        } else if (op == FI_TOP_MAX) {
            float a0 = p[0][0], a1 = p[1][0], a2 = p[2][0], a3 = p[3][0];
            for (c = 1; c < C; c++) {
                a0 = a0 < p[0][c] ? p[0][c] : a0; a1 = a1 < p[1][c] ? p[1][c] : a1;
                a2 = a2 < p[2][c] ? p[2][c] : a2; a3 = a3 < p[3][c] ? p[3][c] : a3;
            }
            acc[0] = a0; acc[1] = a1; acc[2] = a2; acc[3] = a3;
        } else {
            float a0 = p[0][0], a1 = p[1][0], a2 = p[2][0], a3 = p[3][0];
            for (c = 1; c < C; c++) {
                a0 = p[0][c] < a0 ? p[0][c] : a0; a1 = p[1][c] < a1 ? p[1][c] : a1;
                a2 = p[2][c] < a2 ? p[2][c] : a2; a3 = p[3][c] < a3 ? p[3][c] : a3;
            }
            acc[0] = a0; acc[1] = a1; acc[2] = a2; acc[3] = a3;
        }
        for (k = 0; k < m; k++) {
            char *dp = (char *)d.p + (r + k) * d.rs * (ptrdiff_t)fi_tile_itemsize(d.fmt);
            fi_tile_store_f(d.fmt, dp, 1, &acc[k], 1);
        }
    }
    return 1;
}

/* dst[r * d.rs] = fold over c < C of src[r, c]: SUM from 0 (float32 accumulator for float
 * sources, int64 for integers), MAX/MIN from src[r, 0] with std::max/std::min. */
static inline void fi_tile_rowreduce_rows(int op, fi_tile_arg d, fi_tile_arg s, int r0, int r1, int C) {
    float fb[FI_TILE_CHUNK];
    int64_t ib[FI_TILE_CHUNK];
    ptrdiff_t r;
    int c0, n, i;
    int isf = fi_tile_is_float(s.fmt);
    if (fi_tile_rowreduce_f32_fast(op, d, s, r0, r1, C)) return;
    for (r = r0; r < r1; r++) {
        float fa = 0.0f;
        int64_t ia = 0;
        for (c0 = 0; c0 < C; c0 += FI_TILE_CHUNK) {
            n = C - c0 < FI_TILE_CHUNK ? C - c0 : FI_TILE_CHUNK;
            const char *sp = fi_tile_at(&s, r, c0);
            if (isf) {
                fi_tile_load_f(s.fmt, sp, s.cs, fb, n);
                i = 0;
                if (c0 == 0 && op != FI_TOP_SUM) { fa = fb[0]; i = 1; }
                switch (op) {
                case FI_TOP_SUM: for (; i < n; i++) fa = fa + fb[i]; break;
                case FI_TOP_MAX: for (; i < n; i++) fa = fa < fb[i] ? fb[i] : fa; break;
                case FI_TOP_MIN: for (; i < n; i++) fa = fb[i] < fa ? fb[i] : fa; break;
                default: break;
                }
            } else {
                fi_tile_load_i(s.fmt, sp, s.cs, ib, n);
                i = 0;
                if (c0 == 0 && op != FI_TOP_SUM) { ia = ib[0]; i = 1; }
                switch (op) {
                case FI_TOP_SUM: for (; i < n; i++) ia = (int64_t)((uint64_t)ia + (uint64_t)ib[i]); break;
                case FI_TOP_MAX: for (; i < n; i++) ia = ia < ib[i] ? ib[i] : ia; break;
                case FI_TOP_MIN: for (; i < n; i++) ia = ib[i] < ia ? ib[i] : ia; break;
                default: break;
                }
            }
        }
        char *dp = (char *)d.p + r * d.rs * (ptrdiff_t)fi_tile_itemsize(d.fmt);
        if (isf) fi_tile_store_f(d.fmt, dp, 1, &fa, 1);
        else fi_tile_store_i(d.fmt, dp, 1, &ia, 1);
    }
}

static void fi_tile_rowreduce_job(const void *p, int r0, int r1) {
    const fi_tile_unary_ctx *c = (const fi_tile_unary_ctx *)p;
    fi_tile_rowreduce_rows(c->op, c->d, c->s, r0, r1, c->C);
}
static inline void fi_tile_rowreduce(int op, fi_tile_arg d, fi_tile_arg s, int R, int C) {
    fi_tile_unary_ctx c = {op, d, s, C};
    fi_tile_run_rows(fi_tile_rowreduce_job, &c, R, C);
}

/* dst[c * d.cs] = fold over r < R of src[r, c] (top to bottom, as fi_tile_rowreduce). */
static inline void fi_tile_colreduce(int op, fi_tile_arg d, fi_tile_arg s, int R, int C) {
    float fb[FI_TILE_CHUNK], fa[FI_TILE_CHUNK];
    int64_t ib[FI_TILE_CHUNK], ia[FI_TILE_CHUNK];
    ptrdiff_t r;
    int c0, n, i;
    int isf = fi_tile_is_float(s.fmt);
    for (c0 = 0; c0 < C; c0 += FI_TILE_CHUNK) {
        n = C - c0 < FI_TILE_CHUNK ? C - c0 : FI_TILE_CHUNK;
        for (i = 0; i < n; i++) { fa[i] = 0.0f; ia[i] = 0; }
        for (r = 0; r < R; r++) {
            const char *sp = fi_tile_at(&s, r, c0);
            if (isf) {
                fi_tile_load_f(s.fmt, sp, s.cs, fb, n);
                if (r == 0 && op != FI_TOP_SUM) { for (i = 0; i < n; i++) fa[i] = fb[i];
                    continue; }
                switch (op) {
                case FI_TOP_SUM: for (i = 0; i < n; i++) fa[i] = fa[i] + fb[i];
        break;
                case FI_TOP_MAX: for (i = 0; i < n; i++) fa[i] = fa[i] < fb[i] ? fb[i] : fa[i];
        break;
                case FI_TOP_MIN: for (i = 0; i < n; i++) fa[i] = fb[i] < fa[i] ? fb[i] : fa[i];
        break;
                default: break;
                }
            } else {
                fi_tile_load_i(s.fmt, sp, s.cs, ib, n);
                if (r == 0 && op != FI_TOP_SUM) { for (i = 0; i < n; i++) ia[i] = ib[i];
                    continue; }
                switch (op) {
                case FI_TOP_SUM: for (i = 0; i < n; i++) ia[i] = (int64_t)((uint64_t)ia[i] + (uint64_t)ib[i]);
        break;
                case FI_TOP_MAX: for (i = 0; i < n; i++) ia[i] = ia[i] < ib[i] ? ib[i] : ia[i];
        break;
                case FI_TOP_MIN: for (i = 0; i < n; i++) ia[i] = ib[i] < ia[i] ? ib[i] : ia[i];
        break;
                default: break;
                }
            }
        }
        char *dp = (char *)d.p + (ptrdiff_t)c0 * d.cs * (ptrdiff_t)fi_tile_itemsize(d.fmt);
        if (isf) fi_tile_store_f(d.fmt, dp, d.cs, fa, n);
        else fi_tile_store_i(d.fmt, dp, d.cs, ia, n);
    }
}

/* ---- matmul -------------------------------------------------------------------------- */
/* dst[i, j] = init[i, j] + sum_k a[i, k] * b[k, j]: float sources accumulate in float32 with
 * fmaf, sequentially over k, starting from init (has_init) or +0; integer sources accumulate
 * exactly in int64 (wrapping on store).  init may alias dst (rows are read before written)
 * and may have rs = 0 (a bias row). */
/* Float matmul, fast path: A [M, K] and B [K, N] decoded once to float32, the accumulators
 * [M, N] in a float32 buffer (the init tile's values or +0), register-blocked 4 rows x 64
 * columns with k innermost.  Every element is still the same fmaf chain, k = 0, 1, ..,
 * K-1 from its start value, so the bits are those of the plain loop whatever the blocking,
 * vector width or thread count (rows are split between threads).  Clones: AVX-512 + FMA,
 * AVX2 + FMA (hardware fma == fmaf), and a portable one calling fmaf. */
#define FI_TMM_RM 4
#define FI_TMM_CN 64
typedef struct { const float *A, *B; float *C; int K, N; } fi_tmm_ctx;

#define FI_TMM_ROWS_BODY                                                                    \
    const float *A = c->A, *B = c->B;                                                       \
    float *C = c->C;                                                                        \
    int K = c->K, N = c->N, m0 = r0;                                                        \
    for (; m0 + FI_TMM_RM <= r1; m0 += FI_TMM_RM) {                                         \
        int n0 = 0;                                                                         \
        for (; n0 + FI_TMM_CN <= N; n0 += FI_TMM_CN) {                                      \
            float acc[FI_TMM_RM][FI_TMM_CN];                                                \
            for (int i = 0; i < FI_TMM_RM; i++)                                             \
                for (int j = 0; j < FI_TMM_CN; j++) acc[i][j] = C[(ptrdiff_t)(m0 + i) * N + n0 + j]; \
            for (int k = 0; k < K; k++) {                                                   \
                const float *br = B + (ptrdiff_t)k * N + n0;                                \
                for (int i = 0; i < FI_TMM_RM; i++) {                                       \
                    float av = A[(ptrdiff_t)(m0 + i) * K + k];                              \
                    for (int j = 0; j < FI_TMM_CN; j++) acc[i][j] = __builtin_fmaf(av, br[j], acc[i][j]); \
                }                                                                           \
            }                                                                               \
            for (int i = 0; i < FI_TMM_RM; i++)                                             \
                for (int j = 0; j < FI_TMM_CN; j++) C[(ptrdiff_t)(m0 + i) * N + n0 + j] = acc[i][j]; \
        }                                                                                   \
        if (n0 < N)                                                                         \
            for (int i = m0; i < m0 + FI_TMM_RM; i++) fi__tmm_row(A, B, C, K, N, i, n0);    \
    }                                                                                       \
    for (; m0 < r1; m0++) fi__tmm_row(A, B, C, K, N, m0, 0);

static inline void fi__tmm_row(const float *A, const float *B, float *C, int K, int N, int i,
                               int n0) {
    float *o = C + (ptrdiff_t)i * N;
    for (int k = 0; k < K; k++) {
        float av = A[(ptrdiff_t)i * K + k];
        const float *br = B + (ptrdiff_t)k * N;
        for (int j = n0; j < N; j++) o[j] = fmaf(av, br[j], o[j]);
    }
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(FASTISA_DEBUG)
#define FI__TMM_X86 1
static __attribute__((target("avx512f,fma"), noinline)) void fi__tmm_rows_512(
        const fi_tmm_ctx *c, int r0, int r1) { FI_TMM_ROWS_BODY }
static __attribute__((target("avx2,fma"), noinline)) void fi__tmm_rows_256(
        const fi_tmm_ctx *c, int r0, int r1) { FI_TMM_ROWS_BODY }
#endif
static void fi__tmm_rows_any(const fi_tmm_ctx *c, int r0, int r1) { FI_TMM_ROWS_BODY }

/* matmul15 branch: the instruction set of the float matmul, chosen once at run time (2:
 * AVX-512F + FMA, 1: AVX2 + FMA, 0: the portable build), or forced lower by
 * fi_tile_set_mm_isa (tests; -1 restores the automatic choice).  Every level computes
 * each element as the same fma chain: the same bits. */
/* (cpu.h; every level here is an fma chain: FMA needed) */
static fi_mm_isa_t fi_tile_mm_isa_setting = {FI_MM_ISA_AUTO, 1};
static inline int fi_tile_mm_isa(void) { return fi_mm_isa_get(&fi_tile_mm_isa_setting); }
static inline int fi_tile_set_mm_isa(int level) {
    return fi_mm_isa_set(&fi_tile_mm_isa_setting, level);
}

static void fi__tmm_job(const void *p, int r0, int r1) {
    const fi_tmm_ctx *c = (const fi_tmm_ctx *)p;
#ifdef FI__TMM_X86
    int isa = fi_tile_mm_isa();
    if (isa == 2) { fi__tmm_rows_512(c, r0, r1); return; }
    if (isa == 1) { fi__tmm_rows_256(c, r0, r1); return; }
#endif
    fi__tmm_rows_any(c, r0, r1);
}

#ifdef FI__TMM_X86
#include <immintrin.h>
/* matmul15 branch: the AVX-512 float matmul.  B decoded once into 64-column panels
 * ([N / 64][K][64], 64-byte aligned: no 4 KiB-stride aliasing of B's rows, no split
 * loads), the last N % 64 columns row-major; A read in place when it is contiguous
 * float32 rows (else decoded); C written straight into dst when dst is contiguous,
 * non-overlapping float32 rows, there is no init tile and dst overlaps neither source
 * (else a float32 buffer).  4 rows x 64 columns in 16 zmm accumulators, K in chunks of FI_TMM_KC so a
 * panel chunk stays in L1; the accumulators go to C between chunks (a float32 store and
 * load: exact), so each element is still fma(a[i, k], b[k, j], acc) for k = 0, 1, ..,
 * K-1 from +0: the bits of the plain loop for any blocking or thread split. */
#define FI_TMM_KC 128
typedef struct {
    const float *A; ptrdiff_t lda;
    const float *Bp; const float *Bt; int nt;     /* panels; tail [K][nt] */
    float *C; ptrdiff_t ldc; int K, N;
} fi_tmm512_ctx;

static __attribute__((target("avx512f,fma"), noinline)) void fi__tmm512_rows(
        const void *p, int r0, int r1) {
    const fi_tmm512_ctx *c = (const fi_tmm512_ctx *)p;
    const float *A = c->A;
    ptrdiff_t lda = c->lda, ldc = c->ldc;
    int K = c->K, N = c->N, np = N / 64;
    for (int pn = 0; pn < np; pn++) {
        const float *Bp = c->Bp + (ptrdiff_t)pn * K * 64;
        for (int kb = 0; kb < K; kb += FI_TMM_KC) {
            int ke = kb + FI_TMM_KC < K ? kb + FI_TMM_KC : K;
            int m0 = r0;
            for (; m0 + 4 <= r1; m0 += 4) {
                float *o0 = c->C + (ptrdiff_t)m0 * ldc + pn * 64;
                __m512 acc[4][4];
                for (int i = 0; i < 4; i++)
                    for (int j = 0; j < 4; j++)
                        acc[i][j] = kb == 0 ? _mm512_setzero_ps()
                                            : _mm512_loadu_ps(o0 + i * ldc + 16 * j);
                const float *br = Bp + (ptrdiff_t)kb * 64;
                const float *a0 = A + (ptrdiff_t)m0 * lda;
                for (int k = kb; k < ke; k++, br += 64) {
                    __m512 b0 = _mm512_load_ps(br), b1 = _mm512_load_ps(br + 16);
                    __m512 b2 = _mm512_load_ps(br + 32), b3 = _mm512_load_ps(br + 48);
                    for (int i = 0; i < 4; i++) {
                        __m512 av = _mm512_set1_ps(a0[i * lda + k]);
                        acc[i][0] = _mm512_fmadd_ps(av, b0, acc[i][0]);
                        acc[i][1] = _mm512_fmadd_ps(av, b1, acc[i][1]);
                        acc[i][2] = _mm512_fmadd_ps(av, b2, acc[i][2]);
                        acc[i][3] = _mm512_fmadd_ps(av, b3, acc[i][3]);
                    }
                }
                for (int i = 0; i < 4; i++)
                    for (int j = 0; j < 4; j++) _mm512_storeu_ps(o0 + i * ldc + 16 * j, acc[i][j]);
            }
            for (; m0 < r1; m0++) {          /* the last rows: one at a time */
                float *o = c->C + (ptrdiff_t)m0 * ldc + pn * 64;
                const float *ar = A + (ptrdiff_t)m0 * lda;
                __m512 acc[4];
                for (int j = 0; j < 4; j++)
                    acc[j] = kb == 0 ? _mm512_setzero_ps() : _mm512_loadu_ps(o + 16 * j);
                for (int k = kb; k < ke; k++) {
                    __m512 av = _mm512_set1_ps(ar[k]);
                    const float *b = Bp + (ptrdiff_t)k * 64;
                    for (int j = 0; j < 4; j++)
                        acc[j] = _mm512_fmadd_ps(av, _mm512_load_ps(b + 16 * j), acc[j]);
                }
                for (int j = 0; j < 4; j++) _mm512_storeu_ps(o + 16 * j, acc[j]);
            }
        }
    }
    if (c->nt > 0) {                          /* the last N % 64 columns */
        int n0 = np * 64, nt = c->nt;
        for (int m = r0; m < r1; m++) {
            float *o = c->C + (ptrdiff_t)m * ldc + n0;
            const float *ar = A + (ptrdiff_t)m * lda;
            for (int j = 0; j < nt; j++) o[j] = 0.0f;
            for (int k = 0; k < K; k++) {
                float av = ar[k];
                const float *b = c->Bt + (ptrdiff_t)k * nt;
                for (int j = 0; j < nt; j++) o[j] = __builtin_fmaf(av, b[j], o[j]);
            }
        }
    }
}

/* The same packed layout and K chunks at the AVX2 + FMA level (mm256.h: 6 rows x 16
 * columns in 12 ymm accumulators): each element the same fma chain from +0, the chunks'
 * accumulators through C, so the same bits. */
static __attribute__((noinline)) FI_MM256_TGT void fi__tmm256_rows(const void *p, int r0, int r1) {
    const fi_tmm512_ctx *c = (const fi_tmm512_ctx *)p;
    int K = c->K, N = c->N, np = N / 64;
    for (int pn = 0; pn < np; pn++) {
        const float *Bp = c->Bp + (ptrdiff_t)pn * K * 64;
        for (int kb = 0; kb < K; kb += FI_TMM_KC) {
            int kc = kb + FI_TMM_KC < K ? FI_TMM_KC : K - kb;
            fi_mm256_fma(c->A + kb, c->lda, 1, Bp + (ptrdiff_t)kb * 64, 64, kc,
                         c->C + pn * 64, c->ldc, r0, r1, 64, kb > 0);
        }
    }
    if (c->nt > 0)                            /* the last N % 64 columns, row-major */
        for (int kb = 0; kb < K; kb += FI_TMM_KC) {
            int kc = kb + FI_TMM_KC < K ? FI_TMM_KC : K - kb;
            fi_mm256_fma(c->A + kb, c->lda, 1, c->Bt + (ptrdiff_t)kb * c->nt, c->nt, kc,
                         c->C + np * 64, c->ldc, r0, r1, c->nt, kb > 0);
        }
}

static inline void fi__tmm_span(const fi_tile_arg *t, int R, int C, uintptr_t *lo, uintptr_t *hi) {
    ptrdiff_t isz = (ptrdiff_t)fi_tile_itemsize(t->fmt);
    ptrdiff_t a = (ptrdiff_t)(R - 1) * t->rs, b = (ptrdiff_t)(C - 1) * t->cs;
    ptrdiff_t mn = (a < 0 ? a : 0) + (b < 0 ? b : 0), mx = (a > 0 ? a : 0) + (b > 0 ? b : 0);
    *lo = (uintptr_t)t->p + (uintptr_t)(mn * isz);
    *hi = (uintptr_t)t->p + (uintptr_t)((mx + 1) * isz);
}

static inline int fi__tmm_overlap(const fi_tile_arg *x, int xr, int xc, const fi_tile_arg *y,
                                  int yr, int yc) {
    uintptr_t a0, a1, b0, b1;
    fi__tmm_span(x, xr, xc, &a0, &a1);
    fi__tmm_span(y, yr, yc, &b0, &b1);
    return a0 < b1 && b0 < a1;
}

static inline void *fi__tmm_alloc(size_t nfloat, void **mem) {
    *mem = malloc(nfloat * sizeof(float) + 64);
    return *mem ? (void *)(((uintptr_t)*mem + 63) & ~(uintptr_t)63) : NULL;
}

/* 0 when a buffer cannot be allocated (the caller falls back) */
static inline int fi_tile_matmul_packed(fi_tile_arg d, fi_tile_arg a, fi_tile_arg b, fi_tile_arg c,
                                     int has_init, int M, int K, int N) {
    int np = N / 64, nt = N - np * 64;
    int a_in = a.fmt == FI_FLOAT32 && a.cs == 1;
    int d_in = d.fmt == FI_FLOAT32 && d.cs == 1 && d.rs >= N && !has_init &&
               !fi__tmm_overlap(&d, M, N, &a, M, K) && !fi__tmm_overlap(&d, M, N, &b, K, N);
    void *ma = NULL, *mb = NULL, *mt = NULL, *mc = NULL, *mr = NULL, *m0 = NULL;
    float *A = a_in ? (float *)a.p : (float *)fi__tmm_alloc((size_t)M * K + 1, &ma);
    float *Bp = (float *)fi__tmm_alloc((size_t)np * K * 64 + 16, &mb);
    float *Bt = nt ? (float *)fi__tmm_alloc((size_t)K * nt + 1, &mt) : NULL;
    float *C = d_in ? (float *)d.p : (float *)fi__tmm_alloc((size_t)M * N + 1, &mc);
    float *row = (float *)fi__tmm_alloc((size_t)N + 16, &mr);
    float *C0 = has_init ? (float *)fi__tmm_alloc((size_t)M * N + 1, &m0) : NULL;
    if (!A || !Bp || (nt && !Bt) || !C || !row || (has_init && !C0)) {
        free(ma); free(mb); free(mt); free(mc); free(mr); free(m0);
        return 0;
    }
    if (!a_in)
        for (int i = 0; i < M; i++) fi_tile_load_f(a.fmt, fi_tile_at(&a, i, 0), a.cs, A + (ptrdiff_t)i * K, K);
    for (int k = 0; k < K; k++) {
        fi_tile_load_f(b.fmt, fi_tile_at(&b, k, 0), b.cs, row, N);
        for (int p = 0; p < np; p++) memcpy(Bp + ((ptrdiff_t)p * K + k) * 64, row + p * 64, 256);
        if (nt) memcpy(Bt + (ptrdiff_t)k * nt, row + np * 64, (size_t)nt * sizeof(float));
    }
    if (has_init)   /* the init (C0, a bias row) is read before any store */
        for (int i = 0; i < M; i++) fi_tile_load_f(c.fmt, fi_tile_at(&c, i, 0), c.cs, C0 + (ptrdiff_t)i * N, N);
    fi_tmm512_ctx ctx = {A, a_in ? a.rs : K, Bp, Bt, nt, C, d_in ? d.rs : N, K, N};
    if (K == 0) {
        for (int i = 0; i < M; i++) memset(C + (ptrdiff_t)i * ctx.ldc, 0, (size_t)N * sizeof(float));
    } else
        fi_tile_run_rows(fi_tile_mm_isa() == 2 ? fi__tmm512_rows : fi__tmm256_rows, &ctx, M,
                         (int)((int64_t)K * N < (1 << 30) ? (int64_t)K * N : (1 << 30)));
    if (!d_in) {
        if (has_init)       /* C0 + sum, one float32 addition after the chain */
            for (size_t e = 0; e < (size_t)M * N; e++) C[e] = C0[e] + C[e];
        for (int i = 0; i < M; i++) fi_tile_store_f(d.fmt, fi_tile_at(&d, i, 0), d.cs, C + (ptrdiff_t)i * N, N);
    }
    free(ma); free(mb); free(mt); free(mc); free(mr); free(m0);
    return 1;
}
#endif

/* 0 when the buffers cannot be allocated (the caller then runs the plain loop). */
static inline int fi_tile_matmul_fast(fi_tile_arg d, fi_tile_arg a, fi_tile_arg b,
                                      fi_tile_arg c, int has_init, int M, int K, int N) {
#ifdef FI__TMM_X86
    if (fi_tile_mm_isa() >= 1 && M > 0 && N > 0 && fi_tile_matmul_packed(d, a, b, c, has_init, M, K, N))
        return 1;
#endif
    float *A = (float *)malloc(((size_t)M * K + 1) * sizeof(float));
    float *B = (float *)malloc(((size_t)K * N + 1) * sizeof(float));
    float *C = (float *)malloc(((size_t)M * N + 1) * sizeof(float));
    float *C0 = has_init ? (float *)malloc(((size_t)M * N + 1) * sizeof(float)) : NULL;
    if (!A || !B || !C || (has_init && !C0)) { free(A); free(B); free(C); free(C0); return 0; }
    for (int i = 0; i < M; i++) fi_tile_load_f(a.fmt, fi_tile_at(&a, i, 0), a.cs, A + (ptrdiff_t)i * K, K);
    for (int k = 0; k < K; k++) fi_tile_load_f(b.fmt, fi_tile_at(&b, k, 0), b.cs, B + (ptrdiff_t)k * N, N);
    for (int i = 0; i < M; i++) {
        /* the init (TMATMUL_ACC's C0, TMATMUL_BIAS's bias row) is read before any store */
        if (has_init) fi_tile_load_f(c.fmt, fi_tile_at(&c, i, 0), c.cs, C0 + (ptrdiff_t)i * N, N);
        memset(C + (ptrdiff_t)i * N, 0, (size_t)N * sizeof(float));
    }
    fi_tmm_ctx ctx = {A, B, C, K, N};
    fi_tile_run_rows(fi__tmm_job, &ctx, M, (int)((int64_t)K * N < (1 << 30) ? (int64_t)K * N : (1 << 30)));
    if (has_init)       /* C0 + sum, one float32 addition after the chain (docs, simulator) */
        for (size_t e = 0; e < (size_t)M * N; e++) C[e] = C0[e] + C[e];
    for (int i = 0; i < M; i++) fi_tile_store_f(d.fmt, fi_tile_at(&d, i, 0), d.cs, C + (ptrdiff_t)i * N, N);
    free(A); free(B); free(C); free(C0);
    return 1;
}

static inline void fi_tile_matmul(fi_tile_arg d, fi_tile_arg a, fi_tile_arg b, fi_tile_arg c,
                                  int has_init, int M, int K, int N) {
    float acc[FI_TILE_CHUNK], bb[FI_TILE_CHUNK], ci[FI_TILE_CHUNK], av;
    int64_t iacc[FI_TILE_CHUNK], ibb[FI_TILE_CHUNK], iav;
    int i, k, j, j0, n;
    int isf = fi_tile_is_float(a.fmt);
    if (isf && fi_tile_matmul_fast(d, a, b, c, has_init, M, K, N)) return;
    for (i = 0; i < M; i++) {
        for (j0 = 0; j0 < N; j0 += FI_TILE_CHUNK) {
            n = N - j0 < FI_TILE_CHUNK ? N - j0 : FI_TILE_CHUNK;
            if (isf) {
                /* float: the fma chain from +0, then C0 + chain (one float32 addition) */
                if (has_init) fi_tile_load_f(c.fmt, fi_tile_at(&c, i, j0), c.cs, ci, n);
                for (j = 0; j < n; j++) acc[j] = 0.0f;
                for (k = 0; k < K; k++) {
                    fi_tile_load_f(a.fmt, fi_tile_at(&a, i, k), 1, &av, 1);
                    fi_tile_load_f(b.fmt, fi_tile_at(&b, k, j0), b.cs, bb, n);
                    for (j = 0; j < n; j++) acc[j] = fmaf(av, bb[j], acc[j]);
                }
                if (has_init) for (j = 0; j < n; j++) acc[j] = ci[j] + acc[j];
                fi_tile_store_f(d.fmt, fi_tile_at(&d, i, j0), d.cs, acc, n);
            } else {
                if (has_init) fi_tile_load_i(c.fmt, fi_tile_at(&c, i, j0), c.cs, iacc, n);
                else for (j = 0; j < n; j++) iacc[j] = 0;
                for (k = 0; k < K; k++) {
                    fi_tile_load_i(a.fmt, fi_tile_at(&a, i, k), 1, &iav, 1);
                    fi_tile_load_i(b.fmt, fi_tile_at(&b, k, j0), b.cs, ibb, n);
                    for (j = 0; j < n; j++) iacc[j] = (int64_t)((uint64_t)iacc[j] + (uint64_t)(iav * ibb[j]));
                }
                fi_tile_store_i(d.fmt, fi_tile_at(&d, i, j0), d.cs, iacc, n);
            }
        }
    }
}

/* ---- conversion with a rounding mode ---------------------------------------------- */
/* Rounds y (a double) to an integer-valued double with the given mode. */
static inline double fi_tile_round_int(double y, int mode) {
    double t;
    switch (mode) {
    case FI_RND_ROUND: return round(y);
    case FI_RND_FLOOR: return floor(y);
    case FI_RND_CEIL: return ceil(y);
    case FI_RND_TRUNC: return trunc(y);
    case FI_RND_ODD:
        t = trunc(y);
        if (t != y && fmod(t, 2.0) == 0.0) t += (y > 0 ? 1.0 : -1.0);
        return t;
    default: return nearbyint(y);  /* RINT / NONE: ties to even (default environment) */
    }
}

/* Rounds x to a binary float with man_bits fraction bits, minimum normal exponent emin and
 * largest finite value maxf, with the given mode; returns an exactly representable double
 * (or +-inf on overflow when the mode rounds that way). */
static inline double fi_tile_round_float(double x, int man_bits, int emin, double maxf,
                                         int mode) {
    int e;
    double q, y, ax;
    if (x != x || x == 0.0 || isinf(x)) return x;
    frexp(x, &e);            /* x = m * 2^e, 0.5 <= |m| < 1: leading bit exponent e - 1 */
    e = e - 1;
    if (e < emin) e = emin;
    q = ldexp(1.0, e - man_bits);   /* the quantum at x's binade */
    y = fi_tile_round_int(x / q, mode) * q;
    ax = fabs(y);
    if (ax > maxf) {
        int to_inf;
        switch (mode) {
        case FI_RND_TRUNC: case FI_RND_ODD: to_inf = 0; break;
        case FI_RND_FLOOR: to_inf = x < 0; break;
        case FI_RND_CEIL: to_inf = x > 0; break;
        default: to_inf = 1; break;
        }
        return to_inf ? copysign(INFINITY, x) : copysign(maxf, x);
    }
    return y;
}

static inline void fi_tile_cvt_one(int mode, int dfmt, char *dp, double x) {
    double y, lo, hi;
    switch (dfmt) {
    case FI_FLOAT32:
        *(float *)dp = (float)fi_tile_round_float(x, 23, -126, 3.4028234663852886e38, mode);
        return;
    case FI_FLOAT16:
        *(uint16_t *)dp = fi_f64_to_f16(fi_tile_round_float(x, 10, -14, 65504.0, mode));
        return;
    case FI_BFLOAT16:
        *(uint16_t *)dp = fi_f64_to_bf16(fi_tile_round_float(x, 7, -126, 3.3895313892515355e38, mode));
        return;
    default: break;
    }
    switch (dfmt) {
    case FI_INT32: lo = -2147483648.0; hi = 2147483647.0; break;
    case FI_INT16: lo = -32768.0; hi = 32767.0; break;
    case FI_INT8: lo = -128.0; hi = 127.0; break;
    case FI_UINT8: lo = 0.0; hi = 255.0; break;
    case FI_UINT16: lo = 0.0; hi = 65535.0; break;
    default: lo = 0.0; hi = 4294967295.0; break;
    }
    if (x != x) y = 0.0;
    else {
        y = fi_tile_round_int(x, mode);
        if (y < lo) y = lo;
        if (y > hi) y = hi;
    }
    switch (dfmt) {
    case FI_INT32: *(int32_t *)dp = (int32_t)y; break;
    case FI_INT16: *(int16_t *)dp = (int16_t)y; break;
    case FI_INT8: *(int8_t *)dp = (int8_t)y; break;
    case FI_UINT8: *(uint8_t *)dp = (uint8_t)y; break;
    case FI_UINT16: *(uint16_t *)dp = (uint16_t)y; break;
    default: *(uint32_t *)dp = (uint32_t)y; break;
    }
}

/* dst[r, c] = round_mode(src[r, c]) in dst's format: the source is exact in double, then
 * rounded once. */
static inline void fi_tile_cvt_rows(int mode, fi_tile_arg d, fi_tile_arg s, int r0, int r1, int C) {
    double db[FI_TILE_CHUNK];
    ptrdiff_t r;
    int c0, n, i;
    ptrdiff_t dstep = d.cs * (ptrdiff_t)fi_tile_itemsize(d.fmt);
    for (r = r0; r < r1; r++) {
        for (c0 = 0; c0 < C; c0 += FI_TILE_CHUNK) {
            n = C - c0 < FI_TILE_CHUNK ? C - c0 : FI_TILE_CHUNK;
            fi_tile_load_d(s.fmt, fi_tile_at(&s, r, c0), s.cs, db, n);
            char *dp = fi_tile_at(&d, r, c0);
            for (i = 0; i < n; i++) fi_tile_cvt_one(mode, d.fmt, dp + i * dstep, db[i]);
        }
    }
}

/* dst[r, c] = round_mode(src[r, c]) in dst's format, over r < R, c < C. */
static void fi_tile_cvt_job(const void *p, int r0, int r1) {
    const fi_tile_unary_ctx *c = (const fi_tile_unary_ctx *)p;
    fi_tile_cvt_rows(c->op, c->d, c->s, r0, r1, c->C);
}
static inline void fi_tile_cvt(int mode, fi_tile_arg d, fi_tile_arg s, int R, int C) {
    fi_tile_unary_ctx c = {mode, d, s, C};
    fi_tile_run_rows(fi_tile_cvt_job, &c, R, C);
}

#endif /* FASTISA_TILE_H */
