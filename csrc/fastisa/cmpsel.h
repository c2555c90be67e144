/* fastisa TIK compare/select kernels: vcmp / vcmpv / vcmpvs (compare -> bits) and vsel
 * (bits -> select), the compare/select pair around the CMPMASK register.
 *
 * Python-free, header-only, static inline, fi_ prefix.  fastisa.tik (src/fastisa/tik/
 * _cmpsel.py) validates everything (mask, strides, extents, alignment, overlap) before
 * the call; nothing here checks or raises.
 *
 * Lane addressing is the walker's (walker.h): lane i of repeat r of operand X is at byte
 *     off_X + r*rep_X*32 + (i / B)*blk_X*32 + (i % B)*es,   B = 32 / es.
 * Bits: lane i of repeat r is bit i of the repeat's PAR-bit field, stored little-endian
 * (bit i%8 of byte i/8); a repeat's field is PAR/8 bytes (16 for float16, 8 for float32)
 * and repeat r's starts PAR/8*r bytes after the first (CANN cceintrinsic vcmpv / vsel:
 * "dst = dst + 16 Bytes" per repeat for f16, 8 for f32).
 *
 * Compare: IEEE 754 (a NaN operand makes every comparison false except ne, which is
 * true; -0 == +0).  float16 is compared through an exact integer key (no conversion).
 * Select: a bit copy of the chosen element (no arithmetic, NaN payloads kept).
 */
#ifndef FASTISA_CMPSEL_H
#define FASTISA_CMPSEL_H

#include <stdint.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "formats.h"

typedef enum { FI_CMP_EQ = 0, FI_CMP_NE = 1, FI_CMP_LT = 2, FI_CMP_GT = 3, FI_CMP_LE = 4,
               FI_CMP_GE = 5 } fi_cmp_op;

/* One compare or select instruction, all int64 so that Python fills it as an array. */
typedef struct {
    int64_t fmt;          /* element format of the sources (FI_FLOAT16/FI_FLOAT32/FI_INT32) */
    int64_t off[3];       /* byte offsets in UB: dst, src0, src1 */
    int64_t blk[3];       /* block strides, 32-byte units (dst unused by compares) */
    int64_t rep[3];       /* repeat strides, 32-byte units */
    int64_t nrep;
    int64_t par;          /* lanes per repeat: 128 (16-bit) or 64 (32-bit) */
    int64_t mask_lo, mask_hi;  /* active lanes (compares: all lanes for vcmpv) */
    int64_t cmp;          /* fi_cmp_op */
    int64_t src1_scalar;  /* 1: src1 is the scalar `sbits` (vcmpvs, vsel mode 1) */
    int64_t sbits;        /* the scalar's bit pattern in the element format */
    int64_t mode;         /* vsel: 0 = CMPMASK bits every repeat, 1/2 = bits from UB */
    int64_t sel_off;      /* vsel modes 1/2: byte offset of the bits in UB */
    int64_t cm_lo, cm_hi; /* vsel mode 0: the CMPMASK register */
} fi_cs_instr;

#define FI_CS_NPARAM 21

/* float16 bits -> an int32 key ordered as the values (-0 and +0 equal); NaN flagged. */
static inline int32_t fi_cs_h_key(uint16_t h) {
    const int32_t v = h & 0x7fff, s = -(int32_t)(h >> 15);
    return (v ^ s) - s;
}

static inline int fi_cs_cmp_f(float a, float b, int64_t op) {
    switch (op) {
        case FI_CMP_EQ: return a == b;
        case FI_CMP_NE: return a != b;
        case FI_CMP_LT: return a < b;
        case FI_CMP_GT: return a > b;
        case FI_CMP_LE: return a <= b;
        default: return a >= b;
    }
}

/* Compare one block of n lanes, lane k at A[k] / Bv[k] (or the scalar), -> bits 0..n-1. */
#define FI_CS_CMP_BLOCK(N, EXPR)                                                       \
    do {                                                                               \
        switch (op) {                                                                  \
            case FI_CMP_EQ:                                                            \
                { for (int k = 0; k < N; ++k) bits |= (uint32_t)(EXPR(==)) << k; } break;\
            case FI_CMP_NE:                                                            \
                { for (int k = 0; k < N; ++k) bits |= (uint32_t)(EXPR(!=)) << k; } break;\
            case FI_CMP_LT:                                                            \
                { for (int k = 0; k < N; ++k) bits |= (uint32_t)(EXPR(<)) << k; } break;\
            case FI_CMP_GT:                                                            \
                { for (int k = 0; k < N; ++k) bits |= (uint32_t)(EXPR(>)) << k; } break;\
            case FI_CMP_LE:                                                            \
                { for (int k = 0; k < N; ++k) bits |= (uint32_t)(EXPR(<=)) << k; } break;\
            default:                                                                   \
                { for (int k = 0; k < N; ++k) bits |= (uint32_t)(EXPR(>=)) << k; } break;\
        }                                                                              \
    } while (0)

/* Bits of lanes [c, c + w) of the 128-lane mask (w in {8, 16}, c a multiple of w). */
static inline uint32_t fi_cs_lane_bits(uint64_t lo, uint64_t hi, int64_t c, int w) {
    const uint64_t v = c < 64 ? lo >> c : hi >> (c - 64);
    return (uint32_t)(v & ((1ull << w) - 1));
}

#if defined(__SSE2__)
/* float32 compares, 64 lanes = 8 blocks of 8: two SSE compares per block -> movemask, the
 * op switch hoisted out of the walk; the repeat's 64 bits assembled in a register. */
#define FI_CS_F32_WALK(CMP)                                                            \
    for (int64_t r = 0; r < in->nrep; ++r) {                                           \
        const uint8_t *a0 = ub + in->off[1] + r * in->rep[1] * 32;                     \
        const uint8_t *b0 = ub + in->off[2] + r * in->rep[2] * 32;                     \
        uint64_t field = 0;                                                            \
        for (int q = 0; q < 8; ++q) {                                                  \
            const uint32_t act = (uint32_t)(lo >> (8 * q)) & 0xffu;                    \
            if (!act) continue;                                                        \
            const float *pa = (const float *)(a0 + q * in->blk[1] * 32);               \
            const float *pb = (const float *)(b0 + q * in->blk[2] * 32);               \
            const __m128 x0 = _mm_loadu_ps(pa), x1 = _mm_loadu_ps(pa + 4);             \
            const __m128 y0 = scal ? sv : _mm_loadu_ps(pb);                            \
            const __m128 y1 = scal ? sv : _mm_loadu_ps(pb + 4);                        \
            const uint32_t bits = (uint32_t)_mm_movemask_ps(CMP(x0, y0)) |             \
                                  ((uint32_t)_mm_movemask_ps(CMP(x1, y1)) << 4);       \
            field |= (uint64_t)(bits & act) << (8 * q);                                \
        }                                                                              \
        memcpy(out + r * 8, &field, 8);                                                \
    }

static inline void fi_cs_cmp_f32(const fi_cs_instr *in, const uint8_t *ub, uint8_t *out) {
    const uint64_t lo = (uint64_t)in->mask_lo;
    const int scal = (int)in->src1_scalar;
    float sf;
    const uint32_t sb = (uint32_t)in->sbits;
    memcpy(&sf, &sb, 4);
    const __m128 sv = _mm_set1_ps(sf);
    switch (in->cmp) {
        case FI_CMP_EQ: FI_CS_F32_WALK(_mm_cmpeq_ps); break;
        case FI_CMP_NE: FI_CS_F32_WALK(_mm_cmpneq_ps); break;
        case FI_CMP_LT: FI_CS_F32_WALK(_mm_cmplt_ps); break;
        case FI_CMP_GT: FI_CS_F32_WALK(_mm_cmpgt_ps); break;
        case FI_CMP_LE: FI_CS_F32_WALK(_mm_cmple_ps); break;
        default: FI_CS_F32_WALK(_mm_cmpge_ps); break;
    }
}
#undef FI_CS_F32_WALK
#endif

/* Compare: for every repeat, the bits of the active lanes (inactive lanes' bits 0) into
 * out + r*PAR/8 (PAR/8 bytes per repeat).  out may be UB (vcmpv; validated disjoint from
 * the sources) or a 16-byte register image (vcmp, one repeat).  Only active lanes are
 * read for the result; a block with an active lane is loaded whole (blocks are 32-byte
 * aligned and UB tensors occupy whole blocks, so the load stays inside the buffer). */
static inline void fi_tik_cmp_bits(const fi_cs_instr *in, const uint8_t *ub, uint8_t *out) {
#if defined(__SSE2__)
    if (in->fmt == FI_FLOAT32) { fi_cs_cmp_f32(in, ub, out); return; }
#endif
    const int64_t op = in->cmp;
    const int es = in->fmt == FI_FLOAT16 ? 2 : 4, n = 32 / es;
    const int64_t par = in->par, nblk = par / n;
    const uint64_t lo = (uint64_t)in->mask_lo, hi = (uint64_t)in->mask_hi;
    const int scal = (int)in->src1_scalar;
    for (int64_t r = 0; r < in->nrep; ++r) {
        uint8_t field[16] = {0};
        const uint8_t *a0 = ub + in->off[1] + r * in->rep[1] * 32;
        const uint8_t *b0 = ub + in->off[2] + r * in->rep[2] * 32;
        for (int64_t q = 0; q < nblk; ++q) {
            const uint32_t act = fi_cs_lane_bits(lo, hi, q * n, n);
            if (!act) continue;
            const uint8_t *pa = a0 + q * in->blk[1] * 32;
            const uint8_t *pb = b0 + q * in->blk[2] * 32;
            uint32_t bits = 0;
            if (in->fmt == FI_FLOAT16) {
                uint16_t A[16], Bv[16];
                memcpy(A, pa, 32);
                if (scal) for (int k = 0; k < 16; ++k) Bv[k] = (uint16_t)in->sbits;
                else memcpy(Bv, pb, 32);
                int32_t ka[16], kb[16], nan[16];
                for (int k = 0; k < 16; ++k) {
                    ka[k] = fi_cs_h_key(A[k]);
                    kb[k] = fi_cs_h_key(Bv[k]);
                    nan[k] = ((A[k] & 0x7fff) > 0x7c00) | ((Bv[k] & 0x7fff) > 0x7c00);
                }
#define FI_CS_H(OP) (nan[k] ? (FI_CMP_NE == op) : (ka[k] OP kb[k]))
                FI_CS_CMP_BLOCK(16, FI_CS_H);
#undef FI_CS_H
            } else if (in->fmt == FI_FLOAT32) {
                float A[8], Bv[8];
                memcpy(A, pa, 32);
                if (scal) { uint32_t s = (uint32_t)in->sbits; for (int k = 0; k < 8; ++k) memcpy(&Bv[k], &s, 4); }
                else memcpy(Bv, pb, 32);
#if defined(__SSE2__)
                {   /* two 4-lane compares -> movemask (IEEE: the unordered rules above) */
                    const __m128 a0 = _mm_loadu_ps(A), a1 = _mm_loadu_ps(A + 4);
                    const __m128 b0 = _mm_loadu_ps(Bv), b1 = _mm_loadu_ps(Bv + 4);
                    __m128 r0, r1;
                    switch (op) {
                        case FI_CMP_EQ: r0 = _mm_cmpeq_ps(a0, b0); r1 = _mm_cmpeq_ps(a1, b1); break;
                        case FI_CMP_NE: r0 = _mm_cmpneq_ps(a0, b0); r1 = _mm_cmpneq_ps(a1, b1); break;
                        case FI_CMP_LT: r0 = _mm_cmplt_ps(a0, b0); r1 = _mm_cmplt_ps(a1, b1); break;
                        case FI_CMP_GT: r0 = _mm_cmpgt_ps(a0, b0); r1 = _mm_cmpgt_ps(a1, b1); break;
                        case FI_CMP_LE: r0 = _mm_cmple_ps(a0, b0); r1 = _mm_cmple_ps(a1, b1); break;
                        default: r0 = _mm_cmpge_ps(a0, b0); r1 = _mm_cmpge_ps(a1, b1); break;
                    }
                    bits = (uint32_t)_mm_movemask_ps(r0) | ((uint32_t)_mm_movemask_ps(r1) << 4);
                }
#else
#define FI_CS_F(OP) (A[k] OP Bv[k])
                FI_CS_CMP_BLOCK(8, FI_CS_F);
#undef FI_CS_F
#endif
            } else {  /* int32 */
                int32_t A[8], Bv[8];
                memcpy(A, pa, 32);
                if (scal) for (int k = 0; k < 8; ++k) Bv[k] = (int32_t)in->sbits;
                else memcpy(Bv, pb, 32);
#define FI_CS_I(OP) (A[k] OP Bv[k])
                FI_CS_CMP_BLOCK(8, FI_CS_I);
#undef FI_CS_I
            }
            bits &= act;
            /* n lanes = n bits at bit position q*n of the field */
            const int64_t bp = q * n;
            if (n == 16) { field[bp / 8] = (uint8_t)bits; field[bp / 8 + 1] = (uint8_t)(bits >> 8); }
            else field[bp / 8] = (uint8_t)bits;
        }
        memcpy(out + r * (par / 8), field, (size_t)(par / 8));
    }
}

/* One block of n lanes: D[k] = sel bit k ? A[k] : Bv[k] for the active lanes (act). */
#define FI_CS_SEL_BLOCK(T, N)                                                          \
    do {                                                                               \
        T A_[N], B_[N], D_[N];                                                         \
        memcpy(A_, pa, sizeof A_);                                                     \
        if (scal) for (int k = 0; k < N; ++k) B_[k] = (T)in->sbits;                    \
        else memcpy(B_, pb, sizeof B_);                                                \
        if (act == full) {                                                             \
            for (int k = 0; k < N; ++k) {                                              \
                const T m_ = (T)0 - (T)((s >> k) & 1u);                                \
                D_[k] = (T)((A_[k] & m_) | (B_[k] & (T)~m_));                          \
            }                                                                          \
            memcpy(pd, D_, sizeof D_);                                                 \
        } else {                                                                       \
            T *D = (T *)pd;                                                            \
            for (int k = 0; k < N; ++k)                                                \
                if ((act >> k) & 1u) {                                                 \
                    T v = ((s >> k) & 1u) ? A_[k] : B_[k];                             \
                    memcpy(&D[k], &v, sizeof v);                                       \
                }                                                                      \
        }                                                                              \
    } while (0)

/* vsel: for every repeat r and active lane i, dst = (sel bit i of repeat r) ? src0 : src1
 * (src1 the scalar in mode 1).  Mode 0: the bits are CMPMASK's, the same every repeat;
 * modes 1/2: PAR bits per repeat read from UB at sel_off + r*PAR/8.  Repeats in order;
 * within a block every active lane is read before any is written (a dst block that is
 * a source block is well defined).  Inactive lanes are never written (a block with an
 * active lane is loaded whole, inside the buffer as for the compares). */
static inline void fi_tik_vsel(const fi_cs_instr *in, uint8_t *ub) {
    const int es = (in->fmt == FI_FLOAT16) ? 2 : 4, n = 32 / es;
    const int64_t par = in->par, nblk = par / n;
    const uint64_t lo = (uint64_t)in->mask_lo, hi = (uint64_t)in->mask_hi;
    const int scal = (int)in->src1_scalar;
    for (int64_t r = 0; r < in->nrep; ++r) {
        uint64_t sl, sh;
        if (in->mode == 0) { sl = (uint64_t)in->cm_lo; sh = (uint64_t)in->cm_hi; }
        else {
            uint8_t f[16] = {0};
            memcpy(f, ub + in->sel_off + r * (par / 8), (size_t)(par / 8));
            memcpy(&sl, f, 8); memcpy(&sh, f + 8, 8);
        }
        uint8_t *d0 = ub + in->off[0] + r * in->rep[0] * 32;
        const uint8_t *a0 = ub + in->off[1] + r * in->rep[1] * 32;
        const uint8_t *b0 = ub + in->off[2] + r * in->rep[2] * 32;
        for (int64_t q = 0; q < nblk; ++q) {
            const uint32_t act = fi_cs_lane_bits(lo, hi, q * n, n);
            if (!act) continue;
            const uint32_t s = fi_cs_lane_bits(sl, sh, q * n, n);
            uint8_t *pd = d0 + q * in->blk[0] * 32;
            const uint8_t *pa = a0 + q * in->blk[1] * 32;
            const uint8_t *pb = b0 + q * in->blk[2] * 32;
            if (n == 16) { const uint32_t full = 0xffffu; FI_CS_SEL_BLOCK(uint16_t, 16); }
            else { const uint32_t full = 0xffu; FI_CS_SEL_BLOCK(uint32_t, 8); }
        }
    }
}

#endif /* FASTISA_CMPSEL_H */
