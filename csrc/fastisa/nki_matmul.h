/* fastisa NKI matmul kernels (nc_matmul): the matmul shape, out[M, N] (+)= s[K, M].T @
 * v[K, N] with every element summed in k order onto its start value.
 *
 * Python-free, header-only, fi_nki_ prefix; the decode of the operands' storage formats
 * comes from nki.h, the instruction-set levels from cpu.h, the threads from par.h.
 * Kernels never validate: the Python front-end (fastisa.nki._pe) checks every constraint.
 */
#ifndef FASTISA_NKI_MATMUL_H
#define FASTISA_NKI_MATMUL_H

#include "nki.h"
#include "cpu.h"
#include "par.h"
#include "mm256.h"

/* ---- the matmul shape ----------------------------------------------------------------- */
/* out[m, n] = out[m, n] + s[0, m]*v[0, n] + s[1, m]*v[1, n] + ... (k ascending), every
 * product and sum a float32 operation (no FMA).  s: [K, M], v: [K, N], out: [M, N], all
 * C-contiguous.
 *
 * Register-blocked: 4 output rows x 64 columns stay in vector registers across the whole
 * K loop.  Each element still sees exactly the same operations in the same order (start
 * from out[m, n], then k = 0, 1, ..., K-1: one rounded multiply, one rounded add), so the
 * bits equal the plain triple loop's for any blocking, ISA or thread count.  On x86-64 the
 * compiler builds AVX-512 / AVX2 / baseline clones and picks one at load time. */
#define FI_MM_RM 4
#define FI_MM_CN 64

static inline void fi_nki_matmul_row(float *out, const float *s, const float *v, int K, int M,
                                     int N, int m, int n0) {
    float *o = out + (ptrdiff_t)m * N;
    for (int k = 0; k < K; k++) {
        float a = s[(ptrdiff_t)k * M + m];
        const float *vr = v + (ptrdiff_t)k * N;
        for (int n = n0; n < N; n++) o[n] += a * vr[n];
    }
}

/* matmul15 branch: the instruction set the matmul kernels use, chosen once at run time:
 * FI_MM_ISA_AUTO (the default: the best the CPU has), or forced (tests, the
 * FASTISA_MATMUL_ISA environment variable read by fastisa._matmul_isa) to
 * FI_MM_ISA_SCALAR (the baseline build: no AVX), FI_MM_ISA_AVX2 (AVX2 + FMA: mm256.h's
 * kernels) or FI_MM_ISA_AVX512 (AVX-512F + FMA), each with its FMA kernel for exact
 * products.  A level the CPU lacks is lowered to the best it has.  Every level computes
 * each element with the same operations in the same order: the same bits. */
/* (cpu.h; the AVX2 level includes FMA: the exact-products path fuses at every level, the
 * multiply-then-add kernels never do) */
static fi_mm_isa_t fi_nki_mm_isa_setting = {FI_MM_ISA_AUTO, 1};
static inline int fi_nki_mm_isa(void) { return fi_mm_isa_get(&fi_nki_mm_isa_setting); }
static inline int fi_nki_set_mm_isa(int level) {
    return fi_mm_isa_set(&fi_nki_mm_isa_setting, level);
}

/* Rows [mb, me) of out; s keeps its full row length M.  The body is compiled three times
 * (fi_nki_matmul_f32_rows_{512,avx2,base}) and fi_nki_matmul_f32_rows picks one by
 * fi_nki_mm_isa(); -ffp-contract=off keeps every multiply and add separate in each. */
static inline __attribute__((always_inline)) void fi_nki_matmul_f32_rows_body(
        float *out, const float *s, const float *v, int K, int M, int N, int mb, int me,
        int zero) {
    int m0 = mb;
    for (; m0 + FI_MM_RM <= me; m0 += FI_MM_RM) {
        int n0 = 0;
        for (; n0 + FI_MM_CN <= N; n0 += FI_MM_CN) {
            float acc[FI_MM_RM][FI_MM_CN];
            for (int i = 0; i < FI_MM_RM; i++)
                for (int j = 0; j < FI_MM_CN; j++)
                    acc[i][j] = zero ? 0.0f : out[(ptrdiff_t)(m0 + i) * N + n0 + j];
            for (int k = 0; k < K; k++) {
                const float *vr = v + (ptrdiff_t)k * N + n0;
                const float *sr = s + (ptrdiff_t)k * M + m0;
                for (int i = 0; i < FI_MM_RM; i++) {
                    float a = sr[i];
                    for (int j = 0; j < FI_MM_CN; j++) acc[i][j] += a * vr[j];
                }
            }
            for (int i = 0; i < FI_MM_RM; i++)
                for (int j = 0; j < FI_MM_CN; j++) out[(ptrdiff_t)(m0 + i) * N + n0 + j] = acc[i][j];
        }
        if (n0 < N)
            for (int i = 0; i < FI_MM_RM; i++) {
                if (zero) memset(out + (ptrdiff_t)(m0 + i) * N + n0, 0, (size_t)(N - n0) * 4);
                fi_nki_matmul_row(out, s, v, K, M, N, m0 + i, n0);
            }
    }
    for (; m0 < me; m0++) {
        if (zero) memset(out + (ptrdiff_t)m0 * N, 0, (size_t)N * 4);
        fi_nki_matmul_row(out, s, v, K, M, N, m0, 0);
    }
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(FASTISA_DEBUG)
static __attribute__((target("avx512f"), noinline)) void fi_nki_matmul_f32_rows_512(
        float *out, const float *s, const float *v, int K, int M, int N, int mb, int me,
        int zero) {
    fi_nki_matmul_f32_rows_body(out, s, v, K, M, N, mb, me, zero);
}
/* AVX2: the shared microkernel (mm256.h) in its multiply-then-add form, v read in place */
static __attribute__((noinline)) void fi_nki_matmul_f32_rows_avx2(
        float *out, const float *s, const float *v, int K, int M, int N, int mb, int me,
        int zero) {
    fi_mm256_muladd(s, 1, M, v, N, K, out, N, mb, me, N, !zero);
}
#endif
static __attribute__((noinline)) void fi_nki_matmul_f32_rows_base(
        float *out, const float *s, const float *v, int K, int M, int N, int mb, int me,
        int zero) {
    fi_nki_matmul_f32_rows_body(out, s, v, K, M, N, mb, me, zero);
}

static void fi_nki_matmul_f32_rows(float *out, const float *s, const float *v, int K, int M,
                                   int N, int mb, int me, int zero) {
#if defined(__x86_64__) && defined(__GNUC__) && !defined(FASTISA_DEBUG)
    int isa = fi_nki_mm_isa();
    if (isa == FI_MM_ISA_AVX512) { fi_nki_matmul_f32_rows_512(out, s, v, K, M, N, mb, me, zero); return; }
    if (isa == FI_MM_ISA_AVX2) { fi_nki_matmul_f32_rows_avx2(out, s, v, K, M, N, mb, me, zero); return; }
#endif
    fi_nki_matmul_f32_rows_base(out, s, v, K, M, N, mb, me, zero);
}

/* nt threads (0: every CPU) over blocks of 4 rows; the split never changes a bit.
 * zero: start every element from +0 instead of out's values (out is only written). */
typedef struct {
    float *out;
    const float *s, *v;
    int K, M, N, zero, nblk, T;
} fi_nki_mm_rows_job_t;

static void fi_nki_matmul_f32_task(void *ctx, int t) {
    const fi_nki_mm_rows_job_t *j = (const fi_nki_mm_rows_job_t *)ctx;
    int b0 = (int)((long)j->nblk * t / j->T), b1 = (int)((long)j->nblk * (t + 1) / j->T);
    int mb = b0 * FI_MM_RM, me = b1 * FI_MM_RM < j->M ? b1 * FI_MM_RM : j->M;
    if (mb < me) fi_nki_matmul_f32_rows(j->out, j->s, j->v, j->K, j->M, j->N, mb, me, j->zero);
}

static inline void fi_nki_matmul_f32_z(float *out, const float *s, const float *v, int K, int M,
                                       int N, int nt, int zero) {
    int nblk = (M + FI_MM_RM - 1) / FI_MM_RM;
    if (nt != 1 && nblk > 1 && (double)K * M * N >= (double)(1 << 21)) {
        int T = fi_par_threads(nt);
        if (T > nblk) T = nblk;
        fi_nki_mm_rows_job_t job = {out, s, v, K, M, N, zero, nblk, T};
        fi_par_for(T, T, fi_nki_matmul_f32_task, &job);     /* one block of rows per task */
        return;
    }
    fi_nki_matmul_f32_rows(out, s, v, K, M, N, 0, M, zero);
}

static inline void fi_nki_matmul_f32(float *out, const float *s, const float *v, int K, int M,
                                     int N, int nt) {
    fi_nki_matmul_f32_z(out, s, v, K, M, N, nt, 0);
}

/* ---- exact products: the FMA path -------------------------------------------------------
 * When every product s[k, m] * v[k, n] is exact in float32, fma(s, v, acc) == acc + s * v
 * (one rounding either way), so a fused multiply-add gives the documented bits of the
 * multiply-then-add order.  Sufficient condition, checked on the decoded operands: both
 * formats have at most 11 significant bits (bf16, fp16, fp8), every element is zero or a
 * normal float32 (biased exponent E in 1..254), and with Emin/Emax over the nonzero
 * elements: Es_max + Ev_max <= 380 (|product| < 2^128, below FLT_MAX with <= 22 bits) and
 * Es_min + Ev_min >= 125 (the product's lowest bit >= 2^-149).  NaN/Inf can then come
 * only from the start value, which both forms propagate alike. */
static inline int fi_nki_mm_narrow(int fmt) {
    return fmt == FI_BFLOAT16 || fmt == FI_FLOAT16 || fmt == FI_FLOAT8_E4M3 ||
           fmt == FI_FLOAT8_E5M2 || fmt == FI_FLOAT8_E4M3FN;
}

/* 0 when an element is Inf/NaN or a float32 subnormal; else emin/emax of the nonzero ones
 * (emin = 255, emax = 0 when all are zero).  Branch-free, so it vectorises. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(FASTISA_DEBUG)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
static int fi_nki_exp_range(const float *x, ptrdiff_t n, int *emin, int *emax) {
    const uint32_t *u = (const uint32_t *)(const void *)x;
    uint32_t lo = 255, hi = 0, bad = 0;
    for (ptrdiff_t i = 0; i < n; i++) {
        uint32_t a = u[i] & 0x7fffffffu;
        uint32_t e = a >> 23;
        uint32_t z = (uint32_t)0 - (uint32_t)(a == 0);          /* all ones for a zero */
        bad |= (uint32_t)(e == 255) | (uint32_t)((a != 0) & (e == 0));
        uint32_t el = e | (z & 255u);
        lo = el < lo ? el : lo;
        hi = e > hi ? e : hi;
    }
    *emin = (int)lo;
    *emax = (int)hi;
    return !bad;
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(FASTISA_DEBUG)
#include <immintrin.h>
#define FI_NKI_MM_FMA 1
/* Rows [mb, me) of out += s.T @ v with fma, 4 rows x 64 columns in 16 zmm accumulators,
 * the 64-column panel of v copied contiguous first (no 2 KiB-stride aliasing); k ascending
 * per element.  Tails (rows, columns) use scalar fma: the same per-element chain. */
static __attribute__((target("avx512f,fma"), noinline)) void fi_nki_mm_fma512_cols(
        float *out, const float *s, const float *v, int K, int M, int N, int mb, int me,
        float *pan, int zero, int nb, int ne, const float *vpan) {
    /* columns [nb, ne): whole 64-column panels from nb, the scalar tail when ne == N */
    int n0 = nb;
    for (; n0 + 64 <= ne; n0 += 64) {
        if (vpan != NULL)       /* v already decoded panel-major: no copy */
            pan = (float *)vpan + (ptrdiff_t)(n0 / 64) * K * 64;
        else
            for (int k = 0; k < K; k++) memcpy(pan + (ptrdiff_t)k * 64, v + (ptrdiff_t)k * N + n0, 256);
        int m0 = mb;
        for (; m0 + 4 <= me; m0 += 4) {
            float *o0 = out + (ptrdiff_t)m0 * N + n0;
            __m512 c[4][4];
            for (int i = 0; i < 4; i++)
                for (int j = 0; j < 4; j++)
                    c[i][j] = zero ? _mm512_setzero_ps() : _mm512_loadu_ps(o0 + (ptrdiff_t)i * N + 16 * j);
            const float *vr = pan, *sr = s + m0;
            for (int k = 0; k < K; k++, vr += 64, sr += M) {
                __m512 b0 = _mm512_loadu_ps(vr), b1 = _mm512_loadu_ps(vr + 16);
                __m512 b2 = _mm512_loadu_ps(vr + 32), b3 = _mm512_loadu_ps(vr + 48);
                for (int i = 0; i < 4; i++) {
                    __m512 a = _mm512_set1_ps(sr[i]);
                    c[i][0] = _mm512_fmadd_ps(a, b0, c[i][0]);
                    c[i][1] = _mm512_fmadd_ps(a, b1, c[i][1]);
                    c[i][2] = _mm512_fmadd_ps(a, b2, c[i][2]);
                    c[i][3] = _mm512_fmadd_ps(a, b3, c[i][3]);
                }
            }
            for (int i = 0; i < 4; i++)
                for (int j = 0; j < 4; j++) _mm512_storeu_ps(o0 + (ptrdiff_t)i * N + 16 * j, c[i][j]);
        }
        for (; m0 < me; m0++) {
            float *o = out + (ptrdiff_t)m0 * N + n0;
            if (zero) memset(o, 0, 256);
            for (int k = 0; k < K; k++) {
                float a = s[(ptrdiff_t)k * M + m0];
                for (int j = 0; j < 64; j++) o[j] = __builtin_fmaf(a, pan[(ptrdiff_t)k * 64 + j], o[j]);
            }
        }
    }
    if (n0 < ne)
        for (int m = mb; m < me; m++) {
            float *o = out + (ptrdiff_t)m * N;
            if (zero) memset(o + n0, 0, (size_t)(ne - n0) * 4);
            for (int k = 0; k < K; k++) {
                float a = s[(ptrdiff_t)k * M + m];
                const float *vr = v + (ptrdiff_t)k * N;
                for (int n = n0; n < ne; n++) o[n] = __builtin_fmaf(a, vr[n], o[n]);
            }
        }
}


/* AVX2 + FMA (mm256.h): the same columns, panels and tails, 6 rows x 16 columns in 12 ymm
 * accumulators; each element the same fma chain in k order, so the same bits. */
static __attribute__((noinline)) FI_MM256_TGT void fi_nki_mm_fma256_cols(
        float *out, const float *s, const float *v, int K, int M, int N, int mb, int me,
        float *pan, int zero, int nb, int ne, const float *vpan) {
    int n0 = nb;
    for (; n0 + 64 <= ne; n0 += 64) {
        const float *pp = pan;
        if (vpan != NULL)
            pp = vpan + (ptrdiff_t)(n0 / 64) * K * 64;
        else
            for (int k = 0; k < K; k++) memcpy(pan + (ptrdiff_t)k * 64, v + (ptrdiff_t)k * N + n0, 256);
        fi_mm256_fma(s, 1, M, pp, 64, K, out + n0, N, mb, me, 64, !zero);
    }
    if (n0 < ne) fi_mm256_fma(s, 1, M, v + n0, N, K, out + n0, N, mb, me, ne - n0, !zero);
}

/* 1 when the FMA path runs at the level in use: AVX-512F + FMA, or AVX2 + FMA */
static inline int fi_nki_have_fma(void) {
    return fi_nki_mm_isa() >= FI_MM_ISA_AVX2;
}

/* the FMA kernel of the level in use (the caller checked fi_nki_have_fma) */
static inline void fi_nki_mm_fma_cols(float *out, const float *s, const float *v, int K, int M,
                                      int N, int mb, int me, float *pan, int zero, int nb,
                                      int ne, const float *vpan) {
    if (fi_nki_mm_isa() == FI_MM_ISA_AVX512)
        fi_nki_mm_fma512_cols(out, s, v, K, M, N, mb, me, pan, zero, nb, ne, vpan);
    else
        fi_nki_mm_fma256_cols(out, s, v, K, M, N, mb, me, pan, zero, nb, ne, vpan);
}
#endif

/* out += s.T @ v with the FMA kernel (caller checked exactness and fi_nki_have_fma512),
 * nt threads over 64-column panels (handed out one at a time) or, for fewer panels than
 * twice the threads, over blocks of 4 rows; the split never changes a bit.  vpan: v
 * already decoded panel-major ([N / 64][K][64], N a multiple of 64; v is then unused and
 * may be NULL), else NULL (each panel is copied from v). */
#ifdef FI_NKI_MM_FMA
typedef struct {
    float *out;
    const float *s, *v, *vpan;
    float *pans;
    size_t per;
    int K, M, N, zero, nblk, T;
} fi_nki_mm_fma_job_t;

static void fi_nki_mm_fma_panel_task(void *ctx, int p) {
    /* panel p; the panel copy buffer is the task's own (npan buffers when vpan is NULL) */
    const fi_nki_mm_fma_job_t *j = (const fi_nki_mm_fma_job_t *)ctx;
    int nb = p * 64, ne = nb + 64 <= j->N ? nb + 64 : j->N;
    fi_nki_mm_fma_cols(j->out, j->s, j->v, j->K, j->M, j->N, 0, j->M,
                          j->pans ? j->pans + (size_t)p * j->per : NULL, j->zero, nb, ne,
                          j->vpan);
}

static void fi_nki_mm_fma_rows_task(void *ctx, int t) {
    const fi_nki_mm_fma_job_t *j = (const fi_nki_mm_fma_job_t *)ctx;
    int b0 = (int)((long)j->nblk * t / j->T), b1 = (int)((long)j->nblk * (t + 1) / j->T);
    int mb = b0 * 4, me = b1 * 4 < j->M ? b1 * 4 : j->M;
    if (mb < me) fi_nki_mm_fma_cols(j->out, j->s, j->v, j->K, j->M, j->N, mb, me,
                                       j->pans ? j->pans + (size_t)t * j->per : NULL, j->zero,
                                       0, j->N, j->vpan);
}
#endif

static inline void fi_nki_matmul_fma(float *out, const float *s, const float *v, int K, int M,
                                     int N, int nt, int zero, const float *vpan) {
#ifdef FI_NKI_MM_FMA
    int nblk = (M + 3) / 4;
    int npan = N / 64 + (N % 64 != 0);
    int T = 1;
    if (nt != 1 && nblk > 1 && (double)K * M * N >= (double)(1 << 21)) {
        T = fi_par_threads(nt);
        if (T > nblk) T = nblk;
        if (T > 64) T = 64;
    }
    /* panels over the pool when there are enough, else blocks of 4 rows (one per task);
     * each task has its own 64-byte aligned panel copy buffer (no zmm load splits a cache
     * line) */
    int by_panel = T > 1 && npan >= 2 * T;
    int nbuf = T == 1 ? 1 : by_panel ? npan : T;
    size_t per = (size_t)K * 64 + 16;      /* floats: a multiple of 64 bytes */
    float *pans = NULL;
    void *pmem = NULL;
    if (vpan == NULL) {
        pmem = malloc((size_t)nbuf * per * sizeof(float) + 64);
        if (pmem == NULL) { fi_nki_matmul_f32_z(out, s, v, K, M, N, nt, zero); return; }
        pans = (float *)(void *)(((uintptr_t)pmem + 63) & ~(uintptr_t)63);
    }
    fi_nki_mm_fma_job_t job = {out, s, v, vpan, pans, per, K, M, N, zero, nblk, T};
    if (by_panel)
        fi_par_for(T, npan, fi_nki_mm_fma_panel_task, &job);
    else if (T > 1)
        fi_par_for(T, T, fi_nki_mm_fma_rows_task, &job);
    else
        fi_nki_mm_fma_cols(out, s, v, K, M, N, 0, M, pans, zero, 0, N, vpan);
    free(pmem);
#else
    (void)vpan;
    fi_nki_matmul_f32_z(out, s, v, K, M, N, nt, zero);
#endif
}

#ifdef FI_NKI_MM_FMA
/* speed15 branch: one 64-column panel p of out += s.T @ v, decoded and checked on its own
 * (s already decoded to float32 [K, M], with its exponent range smin/smax, sok = 0 when s
 * holds Inf/NaN/subnormals): v's columns [64p, 64p + 64) are decoded into vbuf's panel p
 * ([N / 64][K][64]), and the panel takes the FMA kernel when every product of s with this
 * panel is exact (the condition above, on this panel's range), else the multiply-then-add
 * loop below.  Both give each element start + p_0 + ... + p_{K-1} in k order, so deciding
 * per panel never changes a bit; it lets each thread decode the panels it computes. */
static __attribute__((unused)) void fi_nki_mm_panel_muladd(float *out, const float *s,
        const float *pan, int K, int M, int N, int n0, int zero) {
    /* the multiply-then-add form of the shared AVX2 microkernel (every CPU on this path
     * has AVX2 + FMA; the unfused form uses no FMA) */
    fi_mm256_muladd(s, 1, M, pan, 64, K, out + n0, N, 0, M, 64, !zero);
}

#define FI_NKI_PF_ROWS 16
/* The bf16 decodes' shared parts: the software prefetch of rows [k0, k1) of a block n
 * elements wide, and the scalar tail of a row (elements [i, n)) with its exponent range
 * into *slo / *shi (the per-element rule of the vector loops below). */
static inline void fi_nki_pf_rows(const uint16_t *src, ptrdiff_t sp, int k0, int k1, int n) {
    for (int k = k0; k < k1; k++)
        for (int b = 0; b < n * 2; b += 64)
            __builtin_prefetch((const char *)(const void *)(src + (ptrdiff_t)k * sp) + b, 0, 3);
}
static inline void fi_nki_bf16_tail_range(const uint16_t *r, float *o, int i, int n,
                                          uint32_t *slo, uint32_t *shi) {
    for (; i < n; i++) {
        uint32_t u = (uint32_t)r[i] << 16, a = u & 0x7fffffffu, e = a >> 23;
        o[i] = fi_bits_f32(u);
        uint32_t el = a == 0 ? 255u : e;
        *slo = el < *slo ? el : *slo;
        *shi = e > *shi ? e : *shi;
    }
}
/* rows x n bfloat16 elements (row stride sp elements, contiguous within a row) to float32
 * (row stride op): each value's bits << 16, as fi_nki_decode, 16 a step (AVX-512F), also
 * returning what fi_nki_exp_range would return for the decoded values (one pass instead
 * of two): per element the biased
 * exponent e (255 for a zero in the minimum), so a subnormal shows as a minimum of 0 and
 * an Inf/NaN as a maximum of 255. */
static __attribute__((target("avx512f"), unused)) int fi_nki_bf16_rows512_range(
        const uint16_t *src, ptrdiff_t sp, int rows, int n, float *out, ptrdiff_t op,
        int *emin, int *emax) {
    __m512i lo = _mm512_set1_epi32(255), hi = _mm512_setzero_si512();
    const __m512i absm = _mm512_set1_epi32(0x7fffffff), c255 = _mm512_set1_epi32(255);
    uint32_t slo = 255, shi = 0;
    /* the rows are far apart (an SBUF block's rows: 16-32 KiB) and cold in the tutorial, so
     * the hardware prefetcher misses them and each row waits for memory: fetch 16 rows
     * ahead (161 -> 139-147 us per tutorial call, single thread, in C) */
    fi_nki_pf_rows(src, sp, 0, rows < FI_NKI_PF_ROWS ? rows : FI_NKI_PF_ROWS, n);
    for (int k = 0; k < rows; k++) {
        const uint16_t *r = src + (ptrdiff_t)k * sp;
        float *o = out + (ptrdiff_t)k * op;
        int i = 0;
        if (k + FI_NKI_PF_ROWS < rows) fi_nki_pf_rows(src, sp, k + FI_NKI_PF_ROWS, k + FI_NKI_PF_ROWS + 1, n);
        for (; i + 16 <= n; i += 16) {
            __m512i x = _mm512_slli_epi32(_mm512_cvtepu16_epi32(
                _mm256_loadu_si256((const __m256i *)(const void *)(r + i))), 16);
            _mm512_storeu_si512((void *)(o + i), x);
            __m512i a = _mm512_and_si512(x, absm);
            __m512i e = _mm512_srli_epi32(a, 23);
            __mmask16 z = _mm512_cmpeq_epi32_mask(a, _mm512_setzero_si512());
            lo = _mm512_min_epu32(lo, _mm512_mask_mov_epi32(e, z, c255));
            hi = _mm512_max_epu32(hi, e);
        }
        fi_nki_bf16_tail_range(r, o, i, n, &slo, &shi);
    }
    uint32_t vlo = (uint32_t)_mm512_reduce_min_epu32(lo), vhi = (uint32_t)_mm512_reduce_max_epu32(hi);
    slo = vlo < slo ? vlo : slo;
    shi = vhi > shi ? vhi : shi;
    *emin = (int)slo;
    *emax = (int)shi;
    return slo != 0 && shi != 255;
}

/* fi_nki_bf16_rows512_range for AVX2: the same values and range, 8 a step, fetching 8 rows
 * ahead (the share of the tutorial's CPU samples on the AVX2 machine: 7.1-7.4% at 8 rows,
 * 8.2-8.7% at 16, 9.2-10.1% at 32) */
#define FI_NKI_PF_ROWS_256 8
static __attribute__((noinline, unused)) FI_MM256_TGT int fi_nki_bf16_rows256_range(
        const uint16_t *src, ptrdiff_t sp, int rows, int n, float *out, ptrdiff_t op,
        int *emin, int *emax) {
    __m256i lo = _mm256_set1_epi32(255), hi = _mm256_setzero_si256();
    const __m256i absm = _mm256_set1_epi32(0x7fffffff), c255 = _mm256_set1_epi32(255);
    uint32_t slo = 255, shi = 0;
    fi_nki_pf_rows(src, sp, 0, rows < FI_NKI_PF_ROWS_256 ? rows : FI_NKI_PF_ROWS_256, n);
    for (int k = 0; k < rows; k++) {
        const uint16_t *r = src + (ptrdiff_t)k * sp;
        float *o = out + (ptrdiff_t)k * op;
        int i = 0;
        if (k + FI_NKI_PF_ROWS_256 < rows) fi_nki_pf_rows(src, sp, k + FI_NKI_PF_ROWS_256, k + FI_NKI_PF_ROWS_256 + 1, n);
        for (; i + 8 <= n; i += 8) {
            __m256i x = _mm256_slli_epi32(_mm256_cvtepu16_epi32(
                _mm_loadu_si128((const __m128i *)(const void *)(r + i))), 16);
            _mm256_storeu_si256((__m256i *)(void *)(o + i), x);
            __m256i a = _mm256_and_si256(x, absm);
            __m256i e = _mm256_srli_epi32(a, 23);
            __m256i z = _mm256_cmpeq_epi32(a, _mm256_setzero_si256());
            lo = _mm256_min_epu32(lo, _mm256_blendv_epi8(e, c255, z));
            hi = _mm256_max_epu32(hi, e);
        }
        fi_nki_bf16_tail_range(r, o, i, n, &slo, &shi);
    }
    uint32_t l8[8], h8[8];
    _mm256_storeu_si256((__m256i *)(void *)l8, lo);
    _mm256_storeu_si256((__m256i *)(void *)h8, hi);
    for (int i = 0; i < 8; i++) {
        slo = l8[i] < slo ? l8[i] : slo;
        shi = h8[i] > shi ? h8[i] : shi;
    }
    *emin = (int)slo;
    *emax = (int)shi;
    return slo != 0 && shi != 255;
}

/* the decode-with-range of the level in use (the caller checked fi_nki_have_fma) */
static inline int fi_nki_bf16_rows_range(const uint16_t *src, ptrdiff_t sp, int rows, int n,
                                         float *out, ptrdiff_t op, int *emin, int *emax) {
    if (fi_nki_mm_isa() == FI_MM_ISA_AVX512)
        return fi_nki_bf16_rows512_range(src, sp, rows, n, out, op, emin, emax);
    return fi_nki_bf16_rows256_range(src, sp, rows, n, out, op, emin, emax);
}

static inline void fi_nki_mm_panel(float *out, const float *s, int sok, int smin, int smax,
                                   const void *v, int vfmt, int visz, ptrdiff_t v_sp,
                                   ptrdiff_t v_sf, int K, int M, int N, int p, int zero,
                                   float *vbuf) {
    int n0 = p * 64, vmin, vmax, vok;
    float *pan = vbuf + (ptrdiff_t)p * K * 64;
    if (vfmt == FI_BFLOAT16 && v_sf == 1)
        vok = fi_nki_bf16_rows_range((const uint16_t *)v + n0, v_sp, K, 64, pan, 64,
                                        &vmin, &vmax);
    else {
        for (int k = 0; k < K; k++)
            fi_nki_decode(vfmt, (const char *)v + ((ptrdiff_t)k * v_sp + (ptrdiff_t)n0 * v_sf) * visz,
                          v_sf, 64, pan + (ptrdiff_t)k * 64);
        vok = fi_nki_exp_range(pan, (ptrdiff_t)K * 64, &vmin, &vmax);
    }
    if (sok && vok &&
        (smax == 0 || vmax == 0 || (smax + vmax <= 380 && smin + vmin >= 125)))
        fi_nki_mm_fma_cols(out, s, NULL, K, M, N, 0, M, NULL, zero, n0, n0 + 64, vbuf);
    else
        fi_nki_mm_panel_muladd(out, s, pan, K, M, N, n0, zero);
}
/* s [K, M] decoded to float32 rows at sbuf, with its exponent range: 1 when it holds no
 * Inf/NaN/subnormal (the FMA kernel's exactness condition, see above) */
static inline int fi_nki_mm_decode_s(const void *s, int sfmt, int sisz, ptrdiff_t s_sp,
                                     ptrdiff_t s_sf, int K, int M, float *sbuf, int *smin,
                                     int *smax) {
    if (sfmt == FI_BFLOAT16 && s_sf == 1)
        return fi_nki_bf16_rows_range((const uint16_t *)s, s_sp, K, M, sbuf, M, smin, smax);
    for (int k = 0; k < K; k++)
        fi_nki_decode(sfmt, (const char *)s + (ptrdiff_t)k * s_sp * sisz, s_sf, M,
                      sbuf + (ptrdiff_t)k * M);
    return fi_nki_exp_range(sbuf, (ptrdiff_t)K * M, smin, smax);
}

/* The threaded panel path: one task per 64-column panel.  Each thread decodes s once per
 * job, into a buffer of its own (a slot of sbufs, nsb of them, claimed on its first task
 * of the job), so each core reads a copy its own cache holds and no thread waits for a
 * serial decode; any thread may run any panel (a late joiner takes what is left).  Every
 * copy holds the same values, so which thread runs which panel never changes a bit. */
typedef struct {
    float *out;
    const void *s;
    int sfmt, sisz;
    ptrdiff_t s_sp, s_sf;
    const void *v;
    int vfmt, visz;
    ptrdiff_t v_sp, v_sf;
    int K, M, N, zero, npan, T, nsb;
    float *sbufs, *vbuf;
    size_t ns;
    uint64_t serial;            /* this job's number (the threads' decoded-s marks) */
    int next_slot;              /* slots claimed so far */
    int s0_ready, s0_ok, s0_min, s0_max;   /* slot 0's copy published, with its range */
} fi_nki_mm_split_job_t;

static uint64_t fi_nki_mm_serial = 0;   /* jobs prepared (atomic: callers may not hold the GIL) */
static __thread uint64_t fi_nki_mm_tl_job = 0;  /* the job this thread decoded s for */
static __thread int fi_nki_mm_tl_slot, fi_nki_mm_tl_sok, fi_nki_mm_tl_smin, fi_nki_mm_tl_smax;

/* Fill j for the threaded panel path when it applies to this call (the FMA kernel's
 * formats and CPU, N a multiple of 64, at least two panels per thread, nsb >= 2 copies of
 * s): its thread count T >= 2, else 0 (j untouched).  sbufs: nsb copies of K*M floats
 * rounded up to 64 bytes; vbuf: K*N floats. */
/* The threads of nc_matmul's FMA path for nt requested (nt 1: one; small products: one). */
static inline int fi_nki_mm_threads(int nt, int K, int M, int N) {
    int T = 1;
    if (nt != 1 && M > 4 && (double)K * M * N >= (double)(1 << 21)) {
        T = fi_par_threads(nt);
        if (T > (M + 3) / 4) T = (M + 3) / 4;
        if (T > 64) T = 64;
    }
    return T;
}

/* Fill j for the threaded panel path when it applies to this call (the FMA kernel's
 * formats and CPU, N a multiple of 64, at least two panels for each of T >= 2 threads):
 * T, else 0 (j untouched).  sbufs: nsb >= 1 copies of K*M floats rounded up to 64 bytes
 * (threads past the nsb-th share the first copy); vbuf: K*N floats. */
static inline int fi_nki_mm_split_prepare(fi_nki_mm_split_job_t *j, float *out, const void *s,
                                          int sfmt, int sisz, ptrdiff_t s_sp, ptrdiff_t s_sf,
                                          const void *v, int vfmt, int visz, ptrdiff_t v_sp,
                                          ptrdiff_t v_sf, int K, int M, int N, int nt,
                                          float *sbufs, int nsb, float *vbuf, int zero) {
    if (!(N % 64 == 0 && fi_nki_mm_narrow(sfmt) && fi_nki_mm_narrow(vfmt) &&
          fi_nki_have_fma()))
        return 0;
    int npan = N / 64, T = fi_nki_mm_threads(nt, K, M, N);
    if (!(T > 1 && npan >= 2 * T && nsb >= 1)) return 0;
    fi_nki_mm_split_job_t job = {out, s, sfmt, sisz, s_sp, s_sf, v, vfmt, visz, v_sp, v_sf,
                                 K, M, N, zero, npan, T, nsb, sbufs, vbuf,
                                 (((size_t)K * M + 15) / 16) * 16,
                                 __atomic_add_fetch(&fi_nki_mm_serial, 1, __ATOMIC_RELAXED), 0,
                                 0, 0, 0, 0};
    *j = job;
    return T;
}

static void fi_nki_mm_split_task(void *ctx, int p) {
    fi_nki_mm_split_job_t *j = (fi_nki_mm_split_job_t *)ctx;
    float *sb;
    int sok, smin, smax;
    if (fi_nki_mm_tl_job == j->serial) {
        sb = j->sbufs + (size_t)fi_nki_mm_tl_slot * j->ns;
        sok = fi_nki_mm_tl_sok;
        smin = fi_nki_mm_tl_smin;
        smax = fi_nki_mm_tl_smax;
    } else {
        /* a thread joining after the first copy is published (the caller of an overlapped
         * job, back from Python) reads that copy, warm in the other core's cache, instead
         * of decoding its own from the cold source; threads that start together each
         * decode a copy of their own */
        int slot = __atomic_load_n(&j->s0_ready, __ATOMIC_ACQUIRE)
                       ? j->nsb : __atomic_fetch_add(&j->next_slot, 1, __ATOMIC_RELAXED);
        if (slot >= j->nsb) {
            /* more threads than slots (not with the pool's T): share slot 0's copy, which
             * is read-only once its thread has published it */
            while (!__atomic_load_n(&j->s0_ready, __ATOMIC_ACQUIRE)) _mm_pause();
            slot = 0;
            sok = j->s0_ok;
            smin = j->s0_min;
            smax = j->s0_max;
            sb = j->sbufs;
        } else {
            sb = j->sbufs + (size_t)slot * j->ns;
            sok = fi_nki_mm_decode_s(j->s, j->sfmt, j->sisz, j->s_sp, j->s_sf, j->K, j->M, sb,
                                     &smin, &smax);
            if (slot == 0) {
                j->s0_ok = sok;
                j->s0_min = smin;
                j->s0_max = smax;
                __atomic_store_n(&j->s0_ready, 1, __ATOMIC_RELEASE);
            }
        }
        fi_nki_mm_tl_job = j->serial;
        fi_nki_mm_tl_slot = slot;
        fi_nki_mm_tl_sok = sok;
        fi_nki_mm_tl_smin = smin;
        fi_nki_mm_tl_smax = smax;
    }
    fi_nki_mm_panel(j->out, sb, sok, smin, smax, j->v, j->vfmt, j->visz, j->v_sp, j->v_sf,
                    j->K, j->M, j->N, p, j->zero, j->vbuf);
}
#endif


/* nc_matmul's entry: out[M, N] (float32, C-contiguous; the starting values) += s.T @ v with
 * s [K, M] and v [K, N] given in their storage formats (any element strides), decoded here
 * to float32 rows (exact: fi_nki_decode) in sbuf [K*M] / vbuf [K*N] -- sbuf holds nsb >= 1
 * copies of K*M floats rounded up to 64 bytes, one per thread of the split panel path --
 * or read in place when
 * already contiguous float32 -- then the FMA kernel when every product is exact (see above)
 * and the CPU has AVX-512 or AVX2, with FMA, else fi_nki_matmul_f32 (a float32 multiply and add per k).
 * Either way each element is start + p_0 + p_1 + ... in k order: the same bits.
 * zero: the start is +0 for every element (out is only written, never read). */
static inline void fi_nki_matmul(float *out, const void *s, int sfmt, int sisz, ptrdiff_t s_sp,
                                 ptrdiff_t s_sf, const void *v, int vfmt, int visz,
                                 ptrdiff_t v_sp, ptrdiff_t v_sf, int K, int M, int N, int nt,
                                 float *sbuf, int nsb, float *vbuf, int zero) {
    const float *s32 = (const float *)s, *v32 = (const float *)v;
#ifdef FI_NKI_MM_FMA
    if (N % 64 == 0 && fi_nki_mm_narrow(sfmt) && fi_nki_mm_narrow(vfmt) && fi_nki_have_fma()) {
        /* v decoded straight into the kernel's 64-column panels ([N / 64][K][64], vbuf
         * holds K * N floats), saving the row-major copy and the per-panel copy; the same
         * values, so the same bits.  Not exact products: decoded row-major again below. */
        int smin, smax, vmin, vmax, sok;
        /* panels decoded, checked and computed one by one by the thread that computes
         * them (fi_nki_mm_panel): split over threads, each with its own copy of s
         * (fi_nki_mm_split_task), or all on one thread; else (a few panels over several
         * threads: row blocks) the whole of v is decoded and checked first */
        fi_nki_mm_split_job_t job;
        int T = fi_nki_mm_split_prepare(&job, out, s, sfmt, sisz, s_sp, s_sf, v, vfmt, visz,
                                        v_sp, v_sf, K, M, N, nt, sbuf, nsb, vbuf, zero);
        if (T > 1) {
            fi_par_for(T, job.npan, fi_nki_mm_split_task, &job);
            return;
        }
        sok = fi_nki_mm_decode_s(s, sfmt, sisz, s_sp, s_sf, K, M, sbuf, &smin, &smax);
        if (fi_nki_mm_threads(nt, K, M, N) == 1) {
            for (int p = 0; p < N / 64; p++)
                fi_nki_mm_panel(out, sbuf, sok, smin, smax, v, vfmt, visz, v_sp, v_sf, K, M,
                                N, p, zero, vbuf);
            return;
        }
        for (int k = 0; k < K; k++)
            for (int n0 = 0; n0 < N; n0 += 64)
                fi_nki_decode(vfmt, (const char *)v + ((ptrdiff_t)k * v_sp + (ptrdiff_t)n0 * v_sf) * visz,
                              v_sf, 64, vbuf + ((ptrdiff_t)(n0 / 64) * K + k) * 64);
        if (sok && fi_nki_exp_range(vbuf, (ptrdiff_t)K * N, &vmin, &vmax) &&
            (smax == 0 || vmax == 0 || (smax + vmax <= 380 && smin + vmin >= 125))) {
            fi_nki_matmul_fma(out, sbuf, NULL, K, M, N, nt, zero, vbuf);
            return;
        }
    }
#endif
    if (!((sfmt == FI_FLOAT32 || sfmt == FI_TFLOAT32) && s_sf == 1 && s_sp == M)) {
        for (int k = 0; k < K; k++)
            fi_nki_decode(sfmt, (const char *)s + (ptrdiff_t)k * s_sp * sisz, s_sf, M,
                          sbuf + (ptrdiff_t)k * M);
        s32 = sbuf;
    }
    if (!((vfmt == FI_FLOAT32 || vfmt == FI_TFLOAT32) && v_sf == 1 && v_sp == N)) {
        for (int k = 0; k < K; k++)
            fi_nki_decode(vfmt, (const char *)v + (ptrdiff_t)k * v_sp * visz, v_sf, N,
                          vbuf + (ptrdiff_t)k * N);
        v32 = vbuf;
    }
#ifdef FI_NKI_MM_FMA
    if (fi_nki_mm_narrow(sfmt) && fi_nki_mm_narrow(vfmt) && fi_nki_have_fma()) {
        int smin, smax, vmin, vmax;
        if (fi_nki_exp_range(s32, (ptrdiff_t)K * M, &smin, &smax) &&
            fi_nki_exp_range(v32, (ptrdiff_t)K * N, &vmin, &vmax) &&
            (smax == 0 || vmax == 0 || (smax + vmax <= 380 && smin + vmin >= 125))) {
            fi_nki_matmul_fma(out, s32, v32, K, M, N, nt, zero, NULL);
            return;
        }
    }
#endif
    fi_nki_matmul_f32_z(out, s32, v32, K, M, N, nt, zero);
}

/* nc_matmul overlapped with the caller's Python (issue 15): the threaded panel path
 * started on the pool's workers (par.h fi_par_submit), returning before it finishes.
 * 0: the path does not apply, nothing was done (the caller runs fi_nki_matmul); 1: started
 * -- out, s, v and the buffers must stay alive, unread and unwritten, until
 * fi_nki_matmul_join; 2: it ran to completion here (the pool was busy).  One job at a
 * time: the caller joins the previous one first (callers hold the GIL). */
#ifdef FI_NKI_MM_FMA
static fi_nki_mm_split_job_t fi_nki_mm_async_job;
#endif
static inline int fi_nki_matmul_submit(float *out, const void *s, int sfmt, int sisz, ptrdiff_t s_sp,
                                ptrdiff_t s_sf, const void *v, int vfmt, int visz,
                                ptrdiff_t v_sp, ptrdiff_t v_sf, int K, int M, int N, int nt,
                                float *sbuf, int nsb, float *vbuf, int zero) {
#ifdef FI_NKI_MM_FMA
    if (fi_par_submit_ptr == NULL) return 0;
    int T = fi_nki_mm_split_prepare(&fi_nki_mm_async_job, out, s, sfmt, sisz, s_sp, s_sf, v,
                                    vfmt, visz, v_sp, v_sf, K, M, N, nt, sbuf, nsb, vbuf,
                                    zero);
    if (T < 2) return 0;
    return fi_par_submit_ptr(T, fi_nki_mm_async_job.npan, fi_nki_mm_split_task,
                             &fi_nki_mm_async_job) ? 1 : 2;
#else
    (void)out; (void)s; (void)sfmt; (void)sisz; (void)s_sp; (void)s_sf; (void)v; (void)vfmt;
    (void)visz; (void)v_sp; (void)v_sf; (void)K; (void)M; (void)N; (void)nt; (void)sbuf;
    (void)nsb; (void)vbuf; (void)zero;
    return 0;
#endif
}

/* 1 when fi_nki_matmul_submit can start a job at all: this build has the FMA panel
 * path (AVX-512 or AVX2) (not the portable / sanitizer build), the CPU runs it at the level in use, and the
 * pool's asynchronous entry points are installed. */
static inline int fi_nki_matmul_can_submit(void) {
#ifdef FI_NKI_MM_FMA
    return fi_par_submit_ptr != NULL && fi_nki_have_fma();
#else
    return 0;
#endif
}

/* An elementwise instruction deferred behind the open overlapped nc_matmul (issue 15): a
 * copy of its arguments runs (on one thread) when the matmul's last panel is done, before
 * fi_nki_matmul_join returns, so the caller's Python goes on meanwhile.  fv: the caller's
 * scalar stage operands, which a->st[s].f may point at (copied here).  1: attached; 0:
 * not (no job open, an epilogue already attached, or the job already done: the caller
 * joins and runs the call itself).  The caller keeps every array a points into alive,
 * unread and unwritten, until the join; one epilogue per job (callers hold the GIL). */
static fi_nki_ew fi_nki_epi_ew;
static float fi_nki_epi_fv[2];
static int fi_nki_epi_set = 0;      /* fi_nki_epi_ew is attached to the open job */
static void fi_nki_epi_task(void *ctx, int t) {
    (void)ctx;
    (void)t;
    (void)fi_nki_elementwise(&fi_nki_epi_ew);
}
static inline int fi_nki_matmul_attach_ew(const fi_nki_ew *a, const float *fv) {
    if (fi_par_attach_ptr == NULL || fi_nki_epi_set) return 0;   /* one per job */
    fi_nki_epi_ew = *a;
    fi_nki_epi_ew.threads = 1;
    for (int s = 0; s < 2; s++)
        if (a->st[s].f == &fv[s]) {
            fi_nki_epi_fv[s] = fv[s];
            fi_nki_epi_ew.st[s].f = &fi_nki_epi_fv[s];
        }
    fi_nki_epi_set = fi_par_attach_ptr(fi_nki_epi_task, NULL);
    return fi_nki_epi_set;
}

/* End the job fi_nki_matmul_submit started (nothing when none is open). */
static inline void fi_nki_matmul_join(void) {
    if (fi_par_join_ptr != NULL) fi_par_join_ptr();
    fi_nki_epi_set = 0;             /* the epilogue, if any, has run */
}

#endif /* FASTISA_NKI_MATMUL_H */
