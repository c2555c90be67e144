/* fastisa TIK repeat/stride/mask walker: ONE walk for every TIK vector instruction.
 *
 * Python-free, header-only, static inline, fi_ prefix.  The instruction (op, formats,
 * strides, mask, repeats) is data: an fi_tik_instr record of int64 fields, filled and
 * validated by fastisa.tik (Python) before the call.  Nothing here checks or raises.
 *
 * Model (reference/tik.md sections 0 and 1.9; spec 002):
 *   PAR lanes per repeat; operand X has B_X = 32 / sizeof(X) elements per 32-byte block;
 *   lane i of repeat r of X is at byte
 *       off_X + r*rep_X*32 + (i / B_X)*blk_X*32 + (i % B_X)*sizeof(X).
 *   Normal mode: lane i active iff bit i of the 128-bit mask (mask_hi:mask_lo), the same
 *   lane set in every repeat.  Counter mode: every repeat is full except the last, which
 *   has `tail` lanes active.  Repeats run in order (a later repeat sees an earlier
 *   repeat's writes); masked-off lanes are never written.
 *
 * The walk: the active lanes of a repeat are cut once into runs that are contiguous in
 * every operand (a run never crosses a block boundary unless every block stride is 1);
 * each run is a plain loop over typed pointers.  When all operands are contiguous over
 * repeats too (blk 1, rep = one repeat) and the mask is full, the whole instruction is
 * one run (the fast path: one vectorisable loop).  The op switch is hoisted out of the
 * walk (FI_TIK_WALK is instantiated once per op and format in fi_tik_vector).
 *
 * Arithmetic: float16 operands are computed in float32 and rounded once to float16
 * (RNE; exact for + - * /); transcendentals (exp, ln, rec, rsqrt, sqrt) are computed in
 * float64 and rounded once.  On saturation-mode targets (sat = 1) every float16 result
 * of an arithmetic op goes through fi_f16_saturate (inf -> +-65504, NaN -> 0).
 * Integer results wrap (two's complement).
 */
#ifndef FASTISA_WALKER_H
#define FASTISA_WALKER_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "formats.h"

typedef enum {
    /* vector-scalar: dst = op(src0, scalar) */
    FI_TIK_ADDS = 0, FI_TIK_MULS = 1, FI_TIK_MAXS = 2, FI_TIK_MINS = 3,
    FI_TIK_AXPY = 4,                       /* dst = src0*scalar + dst */
    /* single-source: dst = op(src0) */
    FI_TIK_ABS = 5, FI_TIK_EXP = 6, FI_TIK_LN = 7, FI_TIK_REC = 8, FI_TIK_RELU = 9,
    FI_TIK_RSQRT = 10, FI_TIK_SQRT = 11, FI_TIK_NOT = 12,
    /* two-tensor: dst = op(src0, src1) */
    FI_TIK_ADD = 13, FI_TIK_SUB = 14, FI_TIK_MUL = 15, FI_TIK_DIV = 16, FI_TIK_MAX = 17,
    FI_TIK_MIN = 18, FI_TIK_AND = 19, FI_TIK_OR = 20,
    /* fill: dst = scalar */
    FI_TIK_DUP = 21,
    /* conversion: dst = convert(src0, rnd) */
    FI_TIK_CONV = 22,
    /* two-tensor, reads dst: dst = src0*src1 + dst (vmla) */
    FI_TIK_MLA = 23,
    FI_TIK_NUM_OPS = 24
} fi_tik_op;

/* Round modes of vec_conv (float -> int, and fp32 -> fp16 'odd'). */
typedef enum {
    FI_TIK_RND_NONE = 0,   /* RNE */
    FI_TIK_RND_RINT = 1,   /* 'round': to nearest, ties to even */
    FI_TIK_RND_FLOOR = 2,
    FI_TIK_RND_CEIL = 3,
    FI_TIK_RND_AWAY = 4,   /* 'away-zero': to nearest, ties away from zero */
    FI_TIK_RND_TRUNC = 5,  /* 'to-zero' */
    FI_TIK_RND_ODD = 6     /* 'odd': round to odd (fp32 -> fp16 only) */
} fi_tik_round;

/* One instruction, all int64 so that Python can fill it as an int64 array.
 * Operand index 0 = dst, 1 = src0, 2 = src1; fmt < 0 marks an unused operand. */
typedef struct {
    int64_t op;
    int64_t fmt[3];       /* fi_format codes */
    int64_t off[3];       /* byte offset of the operand's start element in its buffer */
    int64_t blk[3];       /* block strides, 32-byte units */
    int64_t rep[3];       /* repeat strides, 32-byte units */
    int64_t nrep;         /* number of repeats (counter mode: ceil(count / par)) */
    int64_t par;          /* lanes per repeat: 256 / largest element size */
    int64_t mask_lo;      /* lanes 0..63 (uint64 bits) */
    int64_t mask_hi;      /* lanes 64..127 */
    int64_t counter;      /* 1: counter mode (mask ignored, last repeat has `tail` lanes) */
    int64_t tail;         /* counter mode: active lanes of the last repeat, 1..par */
    int64_t sat;          /* 1: float16 results saturate (Ascend saturation mode) */
    int64_t rnd;          /* fi_tik_round for FI_TIK_CONV */
    double scalar;        /* the scalar operand, already converted to the source dtype */
} fi_tik_instr;

#define FI_TIK_NPARAM 21  /* int64 fields before `scalar` */

static inline int64_t fi_tik_esize(int64_t fmt) {
    switch (fmt) {
        case FI_UINT8: case FI_INT8: return 1;
        case FI_UINT16: case FI_INT16: case FI_FLOAT16: return 2;
        case FI_UINT32: case FI_INT32: case FI_FLOAT32: return 4;
        default: return 0;
    }
}

/* ---- extents: the drivers' last line of defence (issue 12) ---------------------
 * The front-end validates every operand against its tensor; these functions check the
 * parameter block once more against the BUFFERS the kernel is about to be given, so that
 * no front-end bug (a tensor of another program, a stale offset) can turn into a write
 * outside a buffer.  They return FI_TIK_OK, FI_TIK_BAD_PARAMS (a field outside anything
 * the front-end can produce) or FI_TIK_OUT_OF_BOUNDS + x (operand x would reach past the
 * end of its buffer); the kernel is then not called.  Fields are bounded first so that no
 * product below can overflow int64. */
enum { FI_TIK_OK = 0, FI_TIK_BAD_PARAMS = 1, FI_TIK_OUT_OF_BOUNDS = 2 };
#define FI_TIK_MAX_FIELD ((int64_t)1 << 40)
#define FI_TIK_MAX_STRIDE ((int64_t)1 << 24)   /* 32-byte units or elements */

/* Byte offset of lane i of one repeat of an operand of element size es, block stride blk. */
static inline int64_t fi_tik_lane_byte(int64_t i, int64_t es, int64_t blk) {
    const int64_t B = 32 / es;
    return (i / B) * blk * 32 + (i % B) * es;
}

/* The highest lane the mask (lo, hi) selects in [0, par), or -1. */
static inline int64_t fi_tik_top_lane(uint64_t lo, uint64_t hi, int64_t par) {
    if (par < 64) { lo &= (1ull << par) - 1; hi = 0; }
    else if (par < 128) hi &= (1ull << (par - 64)) - 1;
    if (hi) return 127 - __builtin_clzll(hi);
    if (lo) return 63 - __builtin_clzll(lo);
    return -1;
}

/* Bytes [0, *ext) from in->off[x] that lane addressing (vector walk, or the reduce
 * kernels' source) can touch for operand x with element size es. */
static inline int fi_tik_lane_extent(const fi_tik_instr *in, int x, int64_t es, int64_t *ext) {
    *ext = 0;
    if (in->nrep <= 0) return FI_TIK_OK;
    if (in->par < 1 || in->par > 128 || in->nrep > FI_TIK_MAX_FIELD ||
        in->blk[x] < 0 || in->blk[x] > FI_TIK_MAX_STRIDE || in->rep[x] < 0 ||
        in->rep[x] > FI_TIK_MAX_STRIDE)
        return FI_TIK_BAD_PARAMS;
    const int64_t rs = in->rep[x] * 32;
    if (in->counter) {
        if (in->tail < 1 || in->tail > in->par) return FI_TIK_BAD_PARAMS;
        int64_t e = (in->nrep - 1) * rs + fi_tik_lane_byte(in->tail - 1, es, in->blk[x]) + es;
        if (in->nrep > 1) {
            const int64_t f = (in->nrep - 2) * rs +
                              fi_tik_lane_byte(in->par - 1, es, in->blk[x]) + es;
            if (f > e) e = f;
        }
        *ext = e;
        return FI_TIK_OK;
    }
    const int64_t top = fi_tik_top_lane((uint64_t)in->mask_lo, (uint64_t)in->mask_hi, in->par);
    if (top >= 0) *ext = (in->nrep - 1) * rs + fi_tik_lane_byte(top, es, in->blk[x]) + es;
    return FI_TIK_OK;
}

static inline int fi_tik_in_buffer(int64_t off, int64_t ext, int64_t len) {
    return off >= 0 && off <= FI_TIK_MAX_FIELD && ext >= 0 && off + ext <= len;
}

/* fi_tik_vector: every used operand (fmt >= 0) inside its buffer of len[x] bytes. */
static inline int fi_tik_check_vector(const fi_tik_instr *in, const int64_t len[3]) {
    if (in->nrep <= 0) return FI_TIK_OK;
    for (int x = 0; x < 3; ++x) {
        if (in->fmt[x] < 0) continue;
        const int64_t es = fi_tik_esize(in->fmt[x]);
        int64_t ext;
        if (!es) return FI_TIK_BAD_PARAMS;
        const int rc = fi_tik_lane_extent(in, x, es, &ext);
        if (rc != FI_TIK_OK) return rc;
        if (ext && !fi_tik_in_buffer(in->off[x], ext, len[x])) return FI_TIK_OUT_OF_BOUNDS + x;
    }
    if (in->fmt[0] < 0) return FI_TIK_BAD_PARAMS;
    return FI_TIK_OK;
}

/* fi_tik_reduce (pair = 0: one element per repeat at dst + r*rep[0] elements) and
 * fi_tik_reduce_arg (pair = 1: two elements at dst + r*rep[0] elements). */
static inline int fi_tik_check_reduce(const fi_tik_instr *in, int64_t dlen, int64_t slen,
                                      int pair) {
    if (in->nrep <= 0) return FI_TIK_OK;
    const int64_t es = fi_tik_esize(in->fmt[1]);
    int64_t ext;
    if (!es) return FI_TIK_BAD_PARAMS;
    int rc = fi_tik_lane_extent(in, 1, es, &ext);
    if (rc != FI_TIK_OK) return rc;
    if (ext && !fi_tik_in_buffer(in->off[1], ext, slen)) return FI_TIK_OUT_OF_BOUNDS + 1;
    if (in->rep[0] < 0 || in->rep[0] > FI_TIK_MAX_STRIDE) return FI_TIK_BAD_PARAMS;
    const int64_t dext = ((in->nrep - 1) * in->rep[0] + (pair ? 2 : 1)) * es;
    if (!fi_tik_in_buffer(in->off[0], dext, dlen)) return FI_TIK_OUT_OF_BOUNDS + 0;
    return FI_TIK_OK;
}

/* fi_tik_dma: nburst bursts of burst bytes, gaps in bytes, from soff / to doff. */
static inline int fi_tik_check_dma(int64_t dlen, int64_t doff, int64_t slen, int64_t soff,
                                   int64_t nburst, int64_t burst, int64_t src_gap,
                                   int64_t dst_gap) {
    if (nburst < 0 || nburst > FI_TIK_MAX_FIELD || burst < 0 || burst > FI_TIK_MAX_FIELD ||
        src_gap < 0 || src_gap > FI_TIK_MAX_FIELD || dst_gap < 0 || dst_gap > FI_TIK_MAX_FIELD)
        return FI_TIK_BAD_PARAMS;
    if (nburst == 0 || burst == 0) return FI_TIK_OK;
    if (nburst > FI_TIK_MAX_FIELD / (burst + (src_gap > dst_gap ? src_gap : dst_gap) + 1))
        return FI_TIK_BAD_PARAMS;
    if (!fi_tik_in_buffer(soff, (nburst - 1) * (burst + src_gap) + burst, slen))
        return FI_TIK_OUT_OF_BOUNDS + 1;
    if (!fi_tik_in_buffer(doff, (nburst - 1) * (burst + dst_gap) + burst, dlen))
        return FI_TIK_OUT_OF_BOUNDS + 0;
    return FI_TIK_OK;
}

/* ---- scalar helpers -------------------------------------------------------- */

static inline uint16_t fi_tik_h(float x, int sat) {
    uint16_t h = fi_f32_to_f16(x);
    return sat ? fi_f16_saturate(h) : h;
}
static inline uint16_t fi_tik_hd(double x, int sat) {
    uint16_t h = fi_f64_to_f16(x);
    return sat ? fi_f16_saturate(h) : h;
}
/* numpy's maximum/minimum: NaN propagates, ties return the first operand. */
static inline float fi_tik_fmaxf(float a, float b) { return (a >= b || a != a) ? a : b; }
static inline float fi_tik_fminf(float a, float b) { return (a <= b || a != a) ? a : b; }
static inline double fi_tik_relu(double a) { return a > 0 ? a : 0.0; }

/* float32 -> float16 rounding to odd (vec_conv round_mode='odd'). */
static inline uint16_t fi_tik_f32_to_f16_odd(float x) {
    uint16_t h = fi_f32_to_f16(x);
    if (x != x || isinf(x)) return h;
    float back = fi_f16_to_f32(h);
    if (back == x) return h;
    uint16_t sign = (uint16_t)(h & 0x8000u), mag = (uint16_t)(h & 0x7fffu);
    if (fabsf(back) > fabsf(x)) mag = (uint16_t)(mag - 1);   /* inf -> 0x7bff too */
    return (uint16_t)(sign | mag | 1u);
}

/* float -> integer with a TIK round mode, saturating, NaN -> 0. */
static inline double fi_tik_round_clamp(double x, int64_t mode, double lo, double hi) {
    if (x != x) return 0.0;
    switch (mode) {
        case FI_TIK_RND_FLOOR: x = floor(x); break;
        case FI_TIK_RND_CEIL: x = ceil(x); break;
        case FI_TIK_RND_AWAY: x = round(x); break;
        case FI_TIK_RND_TRUNC: x = trunc(x); break;
        default: x = nearbyint(x); break;
    }
    if (x <= lo) return lo;
    if (x >= hi) return hi;
    return x;
}

static inline double fi_tik_load(const uint8_t *p, int64_t fmt) {
    switch (fmt) {
        case FI_UINT8: return (double)*p;
        case FI_INT8: return (double)*(const int8_t *)p;
        case FI_FLOAT16: return (double)fi_f16_to_f32(*(const uint16_t *)p);
        case FI_INT32: return (double)*(const int32_t *)p;
        case FI_FLOAT32: return (double)*(const float *)p;
        case FI_INT16: return (double)*(const int16_t *)p;
        case FI_UINT16: return (double)*(const uint16_t *)p;
        case FI_UINT32: return (double)*(const uint32_t *)p;
        default: return 0.0;
    }
}

/* ---- the walk plan ----------------------------------------------------------- */

typedef struct {
    int64_t r0, r1;              /* repeats [r0, r1) */
    int nruns;
    uint32_t bits[128];          /* lanes of the run that are active (~0u: all) */
    uint8_t nidx[128];           /* masked runs: number of active lanes ... */
    uint8_t idx[128][32];        /* ... and their positions in the run */
    int64_t len[128];
    int64_t roff[3][128];        /* byte offset of each run's first lane, per operand */
    /* masked-blend path (fragmented mask, every operand of one element size): repeats
     * [r0, rb) have every run's whole block inside the validated extents, so the op is
     * computed over the whole block into a temporary and the active lanes are blended
     * into dst under the lane mask lm32/lm16 (run q, lane k at q*len + k: -1 on, 0 off). */
    int blend;
    int64_t rb;
    /* repeats [r0, re) may run run by run (every repeat of run 0, then of run 1, ...):
     * set by fi_tik_set_reorder when no two of their writes hit one dst byte and no
     * source byte they read is a dst byte (except a source that IS dst, lane for lane),
     * so the order cannot change a bit.  Per-run offsets, lengths and the blend lane mask
     * then stay in registers across the repeats (re = rb for blend plans). */
    int reorder;
    int64_t re;
    int32_t lm32[128];
    int16_t lm16[128];
} fi_tik_plan;

static inline int fi_tik_lane_on(uint64_t lo, uint64_t hi, int64_t i) {
    return i < 64 ? (int)((lo >> i) & 1u) : (int)((hi >> (i - 64)) & 1u);
}

/* Cut the lanes [0, par) selected by (lo, hi) into runs contiguous in every operand.
 * A run never crosses a chunk of bmin lanes (the smallest block) unless every block
 * stride is 1.  When the mask is fragmented (more runs than chunks), each chunk with an
 * active lane becomes one run over all its lanes with a lane bit mask instead, which
 * saves the per-run loop overhead (only active lanes are read or written). */
/* Lanes [c, c + w) of the 128-lane mask (lo, hi) as bits 0..w-1; w in {8, 16, 32, 64} and
 * c a multiple of w, so the field never straddles lo and hi. */
static inline uint64_t fi_tik_lane_bits(uint64_t lo, uint64_t hi, int64_t c, int64_t w) {
    const uint64_t v = c < 64 ? lo >> c : (c < 128 ? hi >> (c - 64) : 0);
    return w >= 64 ? v : v & ((1ull << w) - 1);
}

/* First lane >= i in [0, par) whose mask bit equals `on`, or par. */
static inline int64_t fi_tik_next_lane(uint64_t lo, uint64_t hi, int64_t i, int64_t par,
                                       int on) {
    while (i < par && i < 128) {
        const uint64_t w = i < 64 ? lo : hi;
        const uint64_t v = (on ? w : ~w) >> (i & 63);
        if (v) {
            const int64_t j = i + __builtin_ctzll(v);
            return j < par ? j : par;
        }
        i = (i | 63) + 1;
    }
    return par;
}

static inline int fi_tik_log2(int64_t v) { return 63 - __builtin_clzll((uint64_t)v); }

static inline void fi_tik_make_plan(fi_tik_plan *pl, const fi_tik_instr *in, uint64_t lo,
                                    uint64_t hi, int64_t r0, int64_t r1) {
    int64_t es[3], bmin = 128;
    int lg[3], lges[3];
    int contig = 1;
    for (int x = 0; x < 3; ++x) {
        es[x] = fi_tik_esize(in->fmt[x]);
        lges[x] = es[x] ? fi_tik_log2(es[x]) : 0;
        lg[x] = 5 - lges[x];                              /* log2(lanes per block) */
        if (es[x]) {
            if ((32 / es[x]) < bmin) bmin = 32 / es[x];
            if (in->blk[x] != 1) contig = 0;
        }
    }
    pl->r0 = r0; pl->r1 = r1; pl->nruns = 0;
    pl->blend = 0; pl->rb = r0; pl->reorder = 0;
    const int64_t par = in->par > 128 ? 128 : in->par;
    if (bmin > par) bmin = par;
    /* keep only lanes [0, par) */
    if (par < 64) { lo &= (1ull << par) - 1; hi = 0; }
    else if (par < 128) hi &= (1ull << (par - 64)) - 1;
    const int64_t nchunks = par / bmin;
    /* count the runs before building them: a run starts at a set lane whose left neighbour
     * is clear, or (block strides other than 1) at a set lane that begins a chunk */
    int64_t starts = 0;
    {
        const uint64_t slo = lo & ~(lo << 1), shi = hi & ~((hi << 1) | (lo >> 63));
        starts = __builtin_popcountll(slo) + __builtin_popcountll(shi);
        if (!contig) {
            uint64_t cm = 0;   /* one bit at each chunk start */
            for (int64_t c = 0; c < 64; c += bmin) cm |= 1ull << c;
            starts += __builtin_popcountll(lo & (lo << 1) & cm) +
                      __builtin_popcountll(hi & ((hi << 1) | (lo >> 63)) & cm);
        }
    }
    if (starts <= nchunks || bmin > 32) {
        int64_t i = fi_tik_next_lane(lo, hi, 0, par, 1);
        while (i < par) {
            int64_t j = fi_tik_next_lane(lo, hi, i + 1, par, 0);
            if (!contig) {
                const int64_t cb = (i | (bmin - 1)) + 1;   /* next chunk boundary */
                if (j > cb) j = cb;
            }
            const int q = pl->nruns++;
            pl->len[q] = j - i;
            pl->bits[q] = ~0u;
            for (int x = 0; x < 3; ++x)
                pl->roff[x][q] = es[x] ? ((i >> lg[x]) * in->blk[x] << 5) +
                                             ((i & ((1 << lg[x]) - 1)) << lges[x]) : 0;
            i = fi_tik_next_lane(lo, hi, j, par, 1);
        }
        return;
    }
    /* fragmented: one masked run per chunk of bmin lanes */
    const uint32_t full = bmin >= 32 ? 0xffffffffu : (uint32_t)((1ull << bmin) - 1);
    for (int64_t c = 0; c < par; c += bmin) {
        const uint32_t b = (uint32_t)fi_tik_lane_bits(lo, hi, c, bmin);
        if (!b) continue;
        const int q = pl->nruns++;
        pl->len[q] = bmin;
        pl->bits[q] = b == full ? ~0u : b;
        int n = 0;
        for (uint32_t v = b; v; v &= v - 1) pl->idx[q][n++] = (uint8_t)__builtin_ctz(v);
        pl->nidx[q] = (uint8_t)n;
        for (int x = 0; x < 3; ++x)
            pl->roff[x][q] = es[x] ? ((c >> lg[x]) * in->blk[x] << 5) +
                                         ((c & ((1 << lg[x]) - 1)) << lges[x]) : 0;
    }
    /* Masked blend: only when every used operand has the dst's element size (a run is
     * then exactly one 32-byte block of every operand; blocks are 32-byte aligned, so a
     * dst block and a source block in one buffer are the same block or disjoint and the
     * whole-block read-compute-blend equals the lane-by-lane walk), and only for the
     * repeats whose every run's whole block lies inside the validated extent of every
     * operand: the bytes up to its last active lane of the instruction (rep strides >= 0,
     * so these are the leading repeats [r0, rb)). */
    if (es[0] != 4) return;   /* float16: the whole-block compute (scalar conversions)
                                 was measured slower than the per-lane walk */
    for (int x = 1; x < 3; ++x)
        if (es[x] && es[x] != es[0]) return;
    int64_t rb = r1;
    for (int x = 0; x < 3; ++x) {
        if (!es[x]) continue;
        int64_t act = 0, ce = 0, rs = in->rep[x] * 32;
        for (int q = 0; q < pl->nruns; ++q) {
            /* a run is one block: its active lanes end after its highest set bit */
            const int64_t top = pl->bits[q] == ~0u ? bmin : 32 - __builtin_clz(pl->bits[q]);
            if (pl->roff[x][q] + top * es[x] > act) act = pl->roff[x][q] + top * es[x];
            if (pl->roff[x][q] + 32 > ce) ce = pl->roff[x][q] + 32;
        }
        act += (r1 - 1) * rs;          /* validated: [0, act) bytes from the start */
        int64_t n;                      /* repeats r in [r0, r1) with r*rs + ce <= act */
        if (ce > act) n = 0;
        else if (rs == 0) n = r1;
        else n = (act - ce) / rs + 1;
        if (n < rb) rb = n;
    }
    if (rb <= r0) return;
    pl->blend = 1; pl->rb = rb;
    for (int q = 0; q < pl->nruns; ++q)
        for (int64_t k = 0; k < bmin; ++k) {
            const int on = (int)((pl->bits[q] >> k) & 1u);
            pl->lm32[q * bmin + k] = on ? -1 : 0;
            pl->lm16[q * bmin + k] = (int16_t)(on ? -1 : 0);
        }
}

/* Decide pl->reorder and pl->re (see fi_tik_plan) once the operand base pointers are
 * known (operands in different buffers never overlap).  Only while the operands' spans
 * over those repeats stay cache-sized: run-major order revisits each repeat's lines
 * once per run. */
#define FI_TIK_REORDER_MAX_BYTES ((int64_t)512 * 1024)
static inline void fi_tik_set_reorder(fi_tik_plan *pl, const fi_tik_instr *in,
                                      const uint8_t *d0, const uint8_t *a0, const uint8_t *b0) {
    pl->reorder = 0;
    pl->re = pl->blend ? pl->rb : pl->r1;
    if (pl->re - pl->r0 < 2 || pl->nruns == 0) return;
    if (pl->nruns > 1 && in->blk[0] < 1) return;        /* runs of a repeat share dst bytes */
    const uint8_t *base[3] = {d0, a0, b0};
    uintptr_t lo[3], hi[3];
    int64_t total = 0;
    for (int x = 0; x < 3; ++x) {
        const int64_t es = fi_tik_esize(in->fmt[x]);
        if (!es) continue;
        int64_t mn = INT64_MAX, mx = 0;
        for (int q = 0; q < pl->nruns; ++q) {
            if (pl->roff[x][q] < mn) mn = pl->roff[x][q];
            if (pl->roff[x][q] + pl->len[q] * es > mx) mx = pl->roff[x][q] + pl->len[q] * es;
        }
        const int64_t rs = in->rep[x] * 32;
        if (x == 0 && rs < mx - mn) return;                /* repeats share dst bytes */
        lo[x] = (uintptr_t)base[x] + (uintptr_t)(pl->r0 * rs + mn);
        hi[x] = (uintptr_t)base[x] + (uintptr_t)((pl->re - 1) * rs + mx);
        total += (int64_t)(hi[x] - lo[x]);
    }
    if (total > FI_TIK_REORDER_MAX_BYTES) return;
    const int64_t es0 = fi_tik_esize(in->fmt[0]);
    for (int x = 1; x < 3; ++x) {
        const int64_t es = fi_tik_esize(in->fmt[x]);
        if (!es) continue;
        if (lo[x] >= hi[0] || hi[x] <= lo[0]) continue;            /* disjoint */
        if (base[x] == d0 && es == es0 && in->rep[x] == in->rep[0] && in->blk[x] == in->blk[0])
            continue;                                                /* reads what it writes */
        return;
    }
    pl->reorder = 1;
}

/* Whole instruction contiguous in every operand with a full mask: one run. */
static inline int fi_tik_fast_plan(fi_tik_plan *pl, const fi_tik_instr *in, uint64_t lo,
                                   uint64_t hi) {
    int64_t par = in->par;
    for (int x = 0; x < 3; ++x) {
        int64_t es = fi_tik_esize(in->fmt[x]);
        if (!es) continue;
        if (in->blk[x] != 1 || in->rep[x] * 32 != par * es) return 0;
    }
    int64_t total;
    if (in->counter) {
        total = (in->nrep - 1) * par + in->tail;
    } else {
        uint64_t wl = par >= 64 ? ~0ull : ((1ull << par) - 1);
        uint64_t wh = par > 64 ? (par >= 128 ? ~0ull : ((1ull << (par - 64)) - 1)) : 0;
        if ((lo & wl) != wl || (hi & wh) != wh) return 0;
        total = in->nrep * par;
    }
    pl->r0 = 0; pl->r1 = total > 0 ? 1 : 0; pl->nruns = 1;
    pl->blend = 0; pl->rb = 0; pl->reorder = 0; pl->re = pl->r1;
    pl->len[0] = total;
    pl->bits[0] = ~0u;
    pl->roff[0][0] = pl->roff[1][0] = pl->roff[2][0] = 0;
    return 1;
}

/* A masked run: only the active lanes are computed and written (a branch per lane was
 * measured faster than computing every lane and blending). */
#define FI_TIK_MASKED_LOOP(TD, EXPR)                                                   \
    for (int j_ = 0; j_ < pl_->nidx[q_]; ++j_) {                                        \
        const int64_t k = pl_->idx[q_][j_];                                            \
        D[k] = (EXPR);                                                                 \
    }

/* Masked blend of one run (one 32-byte block, NB_ lanes): the op over the whole block
 * into a temporary, then dst takes it where the lane mask is on: a bitwise select over
 * the 32 bytes, (t & m) | (d & ~m), as one 32-byte vector where the compiler has vector
 * extensions (a per-lane ternary here was compiled into a branch per lane).  Used only
 * where fi_tik_make_plan set pl_->blend. */
#if defined(__GNUC__) || defined(__clang__)
typedef uint64_t fi_tik_v32 __attribute__((vector_size(32)));
static inline void fi_tik_blend32(void *d, const void *t, const void *m) {
    fi_tik_v32 tv, dv, mv;
    memcpy(&tv, t, 32); memcpy(&dv, d, 32); memcpy(&mv, m, 32);
    dv = (tv & mv) | (dv & ~mv);
    memcpy(d, &dv, 32);
}
#else
static inline void fi_tik_blend32(void *d, const void *t, const void *m) {
    uint64_t tv[4], dv[4], mv[4];
    memcpy(tv, t, 32); memcpy(dv, d, 32); memcpy(mv, m, 32);
    for (int k = 0; k < 4; ++k) dv[k] = (tv[k] & mv[k]) | (dv[k] & ~mv[k]);
    memcpy(d, dv, 32);
}
#endif

/* One whole 32-byte dst block (every lane active): the op into a temporary of fixed
 * length, then one copy -- no aliasing question for the compiler (EXPR reads lane k of
 * A, Bv and D only, and 32-byte-aligned blocks are the same block or disjoint), so it
 * becomes straight vector code without a remainder loop. */
#define FI_TIK_BLOCK(TD, EXPR)                                                         \
    do {                                                                               \
        TD t_[32 / sizeof(TD)];                                                        \
        for (int k = 0; k < (int)(32 / sizeof(TD)); ++k) t_[k] = (EXPR);               \
        memcpy(D, t_, 32);                                                             \
    } while (0)

/* The blend repeats of one run, block by block, with the lane mask held in mv_. */
#if defined(__GNUC__) || defined(__clang__)
#define FI_TIK_BLEND_RUN(TD, EXPR)                                                     \
    do {                                                                               \
        enum { NB_ = 32 / sizeof(TD) };                                                \
        fi_tik_v32 mv_;                                                                \
        memcpy(&mv_, pl_->lm32 + (int64_t)q_ * NB_, 32);                               \
        for (int64_t r_ = pl_->r0; r_ < pl_->rb; ++r_) {                               \
            TD *D = (TD *)(dq_ + r_ * rs0);                                            \
            const TA_ *A = (const TA_ *)(aq_ + r_ * rs1);                              \
            const TB_ *Bv = (const TB_ *)(bq_ + r_ * rs2);                             \
            (void)A; (void)Bv;                                                         \
            TD t_[NB_];                                                                \
            for (int k = 0; k < NB_; ++k) t_[k] = (EXPR);                              \
            fi_tik_v32 tv_, dv_;                                                       \
            memcpy(&tv_, t_, 32); memcpy(&dv_, D, 32);                                 \
            dv_ = (tv_ & mv_) | (dv_ & ~mv_);                                          \
            memcpy(D, &dv_, 32);                                                       \
        }                                                                              \
    } while (0)
#else
#define FI_TIK_BLEND_RUN(TD, EXPR)                                                     \
    do {                                                                               \
        for (int64_t r_ = pl_->r0; r_ < pl_->rb; ++r_) {                               \
            TD *D = (TD *)(dq_ + r_ * rs0);                                            \
            const TA_ *A = (const TA_ *)(aq_ + r_ * rs1);                              \
            const TB_ *Bv = (const TB_ *)(bq_ + r_ * rs2);                             \
            (void)A; (void)Bv;                                                         \
            FI_TIK_BLEND_LOOP(TD, EXPR);                                               \
        }                                                                              \
    } while (0)
#endif

#define FI_TIK_BLEND_LOOP(TD, EXPR)                                                    \
    do {                                                                               \
        enum { NB_ = 32 / sizeof(TD) };                                                \
        TD t_[NB_];                                                                    \
        for (int k = 0; k < NB_; ++k) t_[k] = (EXPR);                                  \
        if (sizeof(TD) == 4)                                                           \
            fi_tik_blend32(D, t_, pl_->lm32 + (int64_t)q_ * NB_);                      \
        else                                                                           \
            fi_tik_blend32(D, t_, pl_->lm16 + (int64_t)q_ * NB_);                      \
    } while (0)

/* FI_TIK_WALK(TD, TA, TB, EXPR): D[k] = EXPR for every active lane, with D (TD*),
 * A (const TA*), Bv (const TB*) pointing at the run and k the lane in the run. */
#define FI_TIK_WALK(TD, TA, TB, EXPR)                                                  \
    do {                                                                               \
        typedef TA TA_;                                                                \
        typedef TB TB_;                                                                \
        for (int p_ = 0; p_ < nplans; ++p_) {                                          \
            const fi_tik_plan *pl_ = &plans[p_];                                       \
            int64_t rstart_ = pl_->r0;                                                 \
            if (pl_->reorder) {                                                        \
                for (int q_ = 0; q_ < pl_->nruns; ++q_) {                              \
                    uint8_t *dq_ = d0 + pl_->roff[0][q_];                              \
                    const uint8_t *aq_ = a0 + pl_->roff[1][q_];                        \
                    const uint8_t *bq_ = b0 + pl_->roff[2][q_];                        \
                    const int64_t n_ = pl_->len[q_];                                   \
                    if (sizeof(TD) == 4 && pl_->blend && pl_->bits[q_] != ~0u) {       \
                        FI_TIK_BLEND_RUN(TD, EXPR);                                    \
                        continue;                                                      \
                    }                                                                  \
                    for (int64_t r_ = pl_->r0; r_ < pl_->re; ++r_) {                   \
                        TD *D = (TD *)(dq_ + r_ * rs0);                                \
                        const TA *A = (const TA *)(aq_ + r_ * rs1);                    \
                        const TB *Bv = (const TB *)(bq_ + r_ * rs2);                   \
                        (void)A; (void)Bv;                                             \
                        if (pl_->bits[q_] != ~0u) {                                    \
                            FI_TIK_MASKED_LOOP(TD, EXPR);                              \
                        } else if (n_ == 32 / (int64_t)sizeof(TD))                       \
                            FI_TIK_BLOCK(TD, EXPR);                                    \
                        else                                                           \
                            for (int64_t k = 0; k < n_; ++k) D[k] = (EXPR);            \
                    }                                                                  \
                }                                                                      \
                rstart_ = pl_->re;                                                     \
            }                                                                          \
            for (int64_t r_ = rstart_; r_ < pl_->r1; ++r_) {                           \
                uint8_t *dr_ = d0 + r_ * rs0;                                          \
                const uint8_t *ar_ = a0 + r_ * rs1;                                    \
                const uint8_t *br_ = b0 + r_ * rs2;                                    \
                const int bl_ = sizeof(TD) == 4 && pl_->blend && r_ < pl_->rb;         \
                for (int q_ = 0; q_ < pl_->nruns; ++q_) {                              \
                    TD *D = (TD *)(dr_ + pl_->roff[0][q_]);                            \
                    const TA *A = (const TA *)(ar_ + pl_->roff[1][q_]);                \
                    const TB *Bv = (const TB *)(br_ + pl_->roff[2][q_]);               \
                    const int64_t n_ = pl_->len[q_];                                   \
                    const uint32_t m_ = pl_->bits[q_];                                 \
                    (void)A; (void)Bv;                                                 \
                    if (m_ == ~0u) {                                                   \
                        if (n_ == 32 / (int64_t)sizeof(TD))                            \
                            FI_TIK_BLOCK(TD, EXPR);                                    \
                        else                                                           \
                            for (int64_t k = 0; k < n_; ++k) D[k] = (EXPR);            \
                    } else if (bl_) {                                                  \
                        FI_TIK_BLEND_LOOP(TD, EXPR);                                   \
                    } else {                                                           \
                        FI_TIK_MASKED_LOOP(TD, EXPR);                                  \
                    }                                                                  \
                }                                                                      \
            }                                                                          \
        }                                                                              \
    } while (0)

#define FI_TIK_CASE(op, fmt) ((op) * 32 + (fmt))

/* Float16 helpers used inside STMT. */
#define FI_H(x) fi_f16_to_f32(x)
#define FI_OH(x) fi_tik_h((x), sat)
#define FI_OHD(x) fi_tik_hd((x), sat)

/* The walk is compiled twice on x86-64 Linux/GCC, for AVX2 and the baseline, and the
 * loader picks one at run time (ifunc): wheels stay portable, the contiguous fast path
 * runs 8 float lanes at a time where the CPU has them.  No FMA is enabled, and
 * -ffp-contract=off applies, so both versions give the same bits. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) && \
    !defined(FASTISA_DEBUG)
#define FI_TIK_CLONES __attribute__((target_clones("avx2", "default"), unused))
#else
#define FI_TIK_CLONES __attribute__((unused))
#endif

/* Execute one vector instruction.  dbuf/s0buf/s1buf are the scope buffers of dst, src0,
 * src1 (any may alias); in->off[] locate the operands inside them.  Reads and writes
 * stay inside the extents Python validated.  The plans are on the stack (about 7 KB). */
static FI_TIK_CLONES void fi_tik_vector(const fi_tik_instr *in, uint8_t *dbuf, const uint8_t *s0buf,
                                 const uint8_t *s1buf) {
    fi_tik_plan plans[2];
    int nplans = 0;
    const uint64_t lo = (uint64_t)in->mask_lo, hi = (uint64_t)in->mask_hi;
    const int64_t par = in->par;
    if (in->nrep <= 0) return;
    if (fi_tik_fast_plan(&plans[0], in, lo, hi)) {
        nplans = 1;
    } else if (in->counter) {
        uint64_t wl = par >= 64 ? ~0ull : ((1ull << par) - 1);
        uint64_t wh = par > 64 ? (par >= 128 ? ~0ull : ((1ull << (par - 64)) - 1)) : 0;
        int64_t t = in->tail;
        uint64_t tl = t >= 64 ? ~0ull : ((1ull << t) - 1);
        uint64_t th = t > 64 ? (t >= 128 ? ~0ull : ((1ull << (t - 64)) - 1)) : 0;
        fi_tik_make_plan(&plans[nplans++], in, wl, wh, 0, in->nrep - 1);
        fi_tik_make_plan(&plans[nplans++], in, tl, th, in->nrep - 1, in->nrep);
    } else {
        fi_tik_make_plan(&plans[nplans++], in, lo, hi, 0, in->nrep);
    }
    uint8_t *d0 = dbuf + in->off[0];
    const uint8_t *a0 = s0buf + (in->fmt[1] >= 0 ? in->off[1] : 0);
    const uint8_t *b0 = s1buf + (in->fmt[2] >= 0 ? in->off[2] : 0);
    const int64_t rs0 = in->rep[0] * 32;
    const int64_t rs1 = in->fmt[1] >= 0 ? in->rep[1] * 32 : 0;
    const int64_t rs2 = in->fmt[2] >= 0 ? in->rep[2] * 32 : 0;
    for (int p = 0; p < nplans; ++p) fi_tik_set_reorder(&plans[p], in, d0, a0, b0);
    const int sat = (int)in->sat;
    const double c = in->scalar;
    const float cf = (float)c;
    const int64_t ci = (int64_t)c;
    const int64_t rnd = in->rnd;

    switch (FI_TIK_CASE(in->op, in->fmt[0])) {
    /* ---- vector-scalar ---- */
    case FI_TIK_CASE(FI_TIK_ADDS, FI_FLOAT16):
        FI_TIK_WALK(uint16_t, uint16_t, uint8_t, FI_OH(FI_H(A[k]) + cf)); break;
    case FI_TIK_CASE(FI_TIK_ADDS, FI_FLOAT32):
        FI_TIK_WALK(float, float, uint8_t, A[k] + cf); break;
    case FI_TIK_CASE(FI_TIK_ADDS, FI_INT16):
        FI_TIK_WALK(int16_t, int16_t, uint8_t, (int16_t)(int32_t)(A[k] + ci)); break;
    case FI_TIK_CASE(FI_TIK_ADDS, FI_INT32):
        FI_TIK_WALK(int32_t, int32_t, uint8_t, (int32_t)(uint32_t)((int64_t)A[k] + ci)); break;
    case FI_TIK_CASE(FI_TIK_MULS, FI_FLOAT16):
        FI_TIK_WALK(uint16_t, uint16_t, uint8_t, FI_OH(FI_H(A[k]) * cf)); break;
    case FI_TIK_CASE(FI_TIK_MULS, FI_FLOAT32):
        FI_TIK_WALK(float, float, uint8_t, A[k] * cf); break;
    case FI_TIK_CASE(FI_TIK_MULS, FI_INT16):
        FI_TIK_WALK(int16_t, int16_t, uint8_t, (int16_t)(int32_t)(A[k] * ci)); break;
    case FI_TIK_CASE(FI_TIK_MULS, FI_INT32):
        FI_TIK_WALK(int32_t, int32_t, uint8_t, (int32_t)(uint32_t)((uint64_t)A[k] * (uint64_t)ci)); break;
    case FI_TIK_CASE(FI_TIK_MAXS, FI_FLOAT16):
        FI_TIK_WALK(uint16_t, uint16_t, uint8_t, FI_OH(fi_tik_fmaxf(FI_H(A[k]), cf))); break;
    case FI_TIK_CASE(FI_TIK_MAXS, FI_FLOAT32):
        FI_TIK_WALK(float, float, uint8_t, fi_tik_fmaxf(A[k], cf)); break;
    case FI_TIK_CASE(FI_TIK_MAXS, FI_INT16):
        FI_TIK_WALK(int16_t, int16_t, uint8_t, A[k] >= ci ? A[k] : (int16_t)ci); break;
    case FI_TIK_CASE(FI_TIK_MAXS, FI_INT32):
        FI_TIK_WALK(int32_t, int32_t, uint8_t, A[k] >= ci ? A[k] : (int32_t)ci); break;
    case FI_TIK_CASE(FI_TIK_MINS, FI_FLOAT16):
        FI_TIK_WALK(uint16_t, uint16_t, uint8_t, FI_OH(fi_tik_fminf(FI_H(A[k]), cf))); break;
    case FI_TIK_CASE(FI_TIK_MINS, FI_FLOAT32):
        FI_TIK_WALK(float, float, uint8_t, fi_tik_fminf(A[k], cf)); break;
    case FI_TIK_CASE(FI_TIK_MINS, FI_INT16):
        FI_TIK_WALK(int16_t, int16_t, uint8_t, A[k] <= ci ? A[k] : (int16_t)ci); break;
    case FI_TIK_CASE(FI_TIK_MINS, FI_INT32):
        FI_TIK_WALK(int32_t, int32_t, uint8_t, A[k] <= ci ? A[k] : (int32_t)ci); break;
    case FI_TIK_CASE(FI_TIK_AXPY, FI_FLOAT16):
        FI_TIK_WALK(uint16_t, uint16_t, uint8_t, FI_OH(FI_H(A[k]) * cf + FI_H(D[k]))); break;
    case FI_TIK_CASE(FI_TIK_AXPY, FI_FLOAT32):
        if (in->fmt[1] == FI_FLOAT16)   /* fmix: fp16 src and scalar, fp32 dst */
            FI_TIK_WALK(float, uint16_t, uint8_t, FI_H(A[k]) * cf + D[k]);
        else
            FI_TIK_WALK(float, float, uint8_t, A[k] * cf + D[k]);
        break;
    /* ---- single-source ---- */
    case FI_TIK_CASE(FI_TIK_ABS, FI_FLOAT16):
        FI_TIK_WALK(uint16_t, uint16_t, uint8_t, FI_OH(fabsf(FI_H(A[k])))); break;
    case FI_TIK_CASE(FI_TIK_ABS, FI_FLOAT32):
        FI_TIK_WALK(float, float, uint8_t, fabsf(A[k])); break;
    case FI_TIK_CASE(FI_TIK_EXP, FI_FLOAT16):
        FI_TIK_WALK(uint16_t, uint16_t, uint8_t, FI_OHD(exp((double)FI_H(A[k])))); break;
    case FI_TIK_CASE(FI_TIK_EXP, FI_FLOAT32):
        FI_TIK_WALK(float, float, uint8_t, (float)exp((double)A[k])); break;
    case FI_TIK_CASE(FI_TIK_LN, FI_FLOAT16):
        FI_TIK_WALK(uint16_t, uint16_t, uint8_t, FI_OHD(log((double)FI_H(A[k])))); break;
    case FI_TIK_CASE(FI_TIK_LN, FI_FLOAT32):
        FI_TIK_WALK(float, float, uint8_t, (float)log((double)A[k])); break;
    case FI_TIK_CASE(FI_TIK_REC, FI_FLOAT16):
        FI_TIK_WALK(uint16_t, uint16_t, uint8_t, FI_OHD(1.0 / (double)FI_H(A[k]))); break;
    case FI_TIK_CASE(FI_TIK_REC, FI_FLOAT32):
        FI_TIK_WALK(float, float, uint8_t, (float)(1.0 / (double)A[k])); break;
    case FI_TIK_CASE(FI_TIK_RSQRT, FI_FLOAT16):
        FI_TIK_WALK(uint16_t, uint16_t, uint8_t, FI_OHD(1.0 / sqrt((double)FI_H(A[k])))); break;
    case FI_TIK_CASE(FI_TIK_RSQRT, FI_FLOAT32):
        FI_TIK_WALK(float, float, uint8_t, (float)(1.0 / sqrt((double)A[k]))); break;
    case FI_TIK_CASE(FI_TIK_SQRT, FI_FLOAT16):
        FI_TIK_WALK(uint16_t, uint16_t, uint8_t, FI_OHD(sqrt((double)FI_H(A[k])))); break;
    case FI_TIK_CASE(FI_TIK_SQRT, FI_FLOAT32):
        FI_TIK_WALK(float, float, uint8_t, (float)sqrt((double)A[k])); break;
    case FI_TIK_CASE(FI_TIK_RELU, FI_FLOAT16):
        FI_TIK_WALK(uint16_t, uint16_t, uint8_t, FI_OH((float)fi_tik_relu(FI_H(A[k])))); break;
    case FI_TIK_CASE(FI_TIK_RELU, FI_FLOAT32):
        FI_TIK_WALK(float, float, uint8_t, (float)fi_tik_relu(A[k])); break;
    case FI_TIK_CASE(FI_TIK_RELU, FI_INT32):
        FI_TIK_WALK(int32_t, int32_t, uint8_t, A[k] > 0 ? A[k] : 0); break;
    case FI_TIK_CASE(FI_TIK_NOT, FI_UINT16):
    case FI_TIK_CASE(FI_TIK_NOT, FI_INT16):
        FI_TIK_WALK(uint16_t, uint16_t, uint8_t, (uint16_t)~A[k]); break;
    /* ---- two-tensor ---- */
    case FI_TIK_CASE(FI_TIK_MLA, FI_FLOAT16):   /* float32 product and sum, rounded once */
        FI_TIK_WALK(uint16_t, uint16_t, uint16_t,
                    FI_OH(FI_H(A[k]) * FI_H(Bv[k]) + FI_H(D[k]))); break;
    case FI_TIK_CASE(FI_TIK_MLA, FI_FLOAT32):   /* product rounded, then the sum (no fma) */
        FI_TIK_WALK(float, float, float, A[k] * Bv[k] + D[k]); break;
    case FI_TIK_CASE(FI_TIK_ADD, FI_FLOAT16):
        FI_TIK_WALK(uint16_t, uint16_t, uint16_t, FI_OH(FI_H(A[k]) + FI_H(Bv[k]))); break;
    case FI_TIK_CASE(FI_TIK_ADD, FI_FLOAT32):
        FI_TIK_WALK(float, float, float, A[k] + Bv[k]); break;
    case FI_TIK_CASE(FI_TIK_ADD, FI_INT16):
        FI_TIK_WALK(int16_t, int16_t, int16_t, (int16_t)(int32_t)(A[k] + Bv[k])); break;
    case FI_TIK_CASE(FI_TIK_ADD, FI_INT32):
        FI_TIK_WALK(int32_t, int32_t, int32_t, (int32_t)(uint32_t)((int64_t)A[k] + Bv[k])); break;
    case FI_TIK_CASE(FI_TIK_SUB, FI_FLOAT16):
        FI_TIK_WALK(uint16_t, uint16_t, uint16_t, FI_OH(FI_H(A[k]) - FI_H(Bv[k]))); break;
    case FI_TIK_CASE(FI_TIK_SUB, FI_FLOAT32):
        FI_TIK_WALK(float, float, float, A[k] - Bv[k]); break;
    case FI_TIK_CASE(FI_TIK_SUB, FI_INT16):
        FI_TIK_WALK(int16_t, int16_t, int16_t, (int16_t)(int32_t)(A[k] - Bv[k])); break;
    case FI_TIK_CASE(FI_TIK_SUB, FI_INT32):
        FI_TIK_WALK(int32_t, int32_t, int32_t, (int32_t)(uint32_t)((int64_t)A[k] - Bv[k])); break;
    case FI_TIK_CASE(FI_TIK_MUL, FI_FLOAT16):
        FI_TIK_WALK(uint16_t, uint16_t, uint16_t, FI_OH(FI_H(A[k]) * FI_H(Bv[k]))); break;
    case FI_TIK_CASE(FI_TIK_MUL, FI_FLOAT32):
        FI_TIK_WALK(float, float, float, A[k] * Bv[k]); break;
    case FI_TIK_CASE(FI_TIK_MUL, FI_INT16):
        FI_TIK_WALK(int16_t, int16_t, int16_t, (int16_t)(int32_t)(A[k] * Bv[k])); break;
    case FI_TIK_CASE(FI_TIK_MUL, FI_INT32):
        FI_TIK_WALK(int32_t, int32_t, int32_t, (int32_t)(uint32_t)((uint64_t)(int64_t)A[k] * (uint64_t)(int64_t)Bv[k])); break;
    case FI_TIK_CASE(FI_TIK_DIV, FI_FLOAT16):
        FI_TIK_WALK(uint16_t, uint16_t, uint16_t, FI_OH(FI_H(A[k]) / FI_H(Bv[k]))); break;
    case FI_TIK_CASE(FI_TIK_DIV, FI_FLOAT32):
        FI_TIK_WALK(float, float, float, A[k] / Bv[k]); break;
    case FI_TIK_CASE(FI_TIK_MAX, FI_FLOAT16):
        FI_TIK_WALK(uint16_t, uint16_t, uint16_t, FI_OH(fi_tik_fmaxf(FI_H(A[k]), FI_H(Bv[k])))); break;
    case FI_TIK_CASE(FI_TIK_MAX, FI_FLOAT32):
        FI_TIK_WALK(float, float, float, fi_tik_fmaxf(A[k], Bv[k])); break;
    case FI_TIK_CASE(FI_TIK_MAX, FI_INT16):
        FI_TIK_WALK(int16_t, int16_t, int16_t, A[k] >= Bv[k] ? A[k] : Bv[k]); break;
    case FI_TIK_CASE(FI_TIK_MAX, FI_INT32):
        FI_TIK_WALK(int32_t, int32_t, int32_t, A[k] >= Bv[k] ? A[k] : Bv[k]); break;
    case FI_TIK_CASE(FI_TIK_MIN, FI_FLOAT16):
        FI_TIK_WALK(uint16_t, uint16_t, uint16_t, FI_OH(fi_tik_fminf(FI_H(A[k]), FI_H(Bv[k])))); break;
    case FI_TIK_CASE(FI_TIK_MIN, FI_FLOAT32):
        FI_TIK_WALK(float, float, float, fi_tik_fminf(A[k], Bv[k])); break;
    case FI_TIK_CASE(FI_TIK_MIN, FI_INT16):
        FI_TIK_WALK(int16_t, int16_t, int16_t, A[k] <= Bv[k] ? A[k] : Bv[k]); break;
    case FI_TIK_CASE(FI_TIK_MIN, FI_INT32):
        FI_TIK_WALK(int32_t, int32_t, int32_t, A[k] <= Bv[k] ? A[k] : Bv[k]); break;
    case FI_TIK_CASE(FI_TIK_AND, FI_UINT16):
    case FI_TIK_CASE(FI_TIK_AND, FI_INT16):
        FI_TIK_WALK(uint16_t, uint16_t, uint16_t, (uint16_t)(A[k] & Bv[k])); break;
    case FI_TIK_CASE(FI_TIK_OR, FI_UINT16):
    case FI_TIK_CASE(FI_TIK_OR, FI_INT16):
        FI_TIK_WALK(uint16_t, uint16_t, uint16_t, (uint16_t)(A[k] | Bv[k])); break;
    /* ---- fill (the scalar's bits, unchanged) ---- */
    case FI_TIK_CASE(FI_TIK_DUP, FI_FLOAT16): {
        const uint16_t hc = fi_f32_to_f16(cf);
        FI_TIK_WALK(uint16_t, uint8_t, uint8_t, hc); break; }
    case FI_TIK_CASE(FI_TIK_DUP, FI_FLOAT32):
        FI_TIK_WALK(float, uint8_t, uint8_t, cf); break;
    case FI_TIK_CASE(FI_TIK_DUP, FI_INT16):
        FI_TIK_WALK(int16_t, uint8_t, uint8_t, (int16_t)ci); break;
    case FI_TIK_CASE(FI_TIK_DUP, FI_UINT16):
        FI_TIK_WALK(uint16_t, uint8_t, uint8_t, (uint16_t)ci); break;
    case FI_TIK_CASE(FI_TIK_DUP, FI_INT32):
        FI_TIK_WALK(int32_t, uint8_t, uint8_t, (int32_t)ci); break;
    case FI_TIK_CASE(FI_TIK_DUP, FI_UINT32):
        FI_TIK_WALK(uint32_t, uint8_t, uint8_t, (uint32_t)ci); break;
    /* ---- conversion ---- */
    case FI_TIK_CASE(FI_TIK_CONV, FI_FLOAT32):
        if (in->fmt[1] == FI_FLOAT16)
            FI_TIK_WALK(float, uint16_t, uint8_t, FI_H(A[k]));
        else  /* int32 -> fp32, RNE */
            FI_TIK_WALK(float, int32_t, uint8_t, (float)A[k]);
        break;
    case FI_TIK_CASE(FI_TIK_CONV, FI_FLOAT16):
        if (in->fmt[1] == FI_FLOAT32) {
            if (rnd == FI_TIK_RND_ODD)
                FI_TIK_WALK(uint16_t, float, uint8_t, (uint16_t)(sat ? fi_f16_saturate(fi_tik_f32_to_f16_odd(A[k])) : fi_tik_f32_to_f16_odd(A[k])));
            else
                FI_TIK_WALK(uint16_t, float, uint8_t, FI_OH(A[k]));
        } else if (in->fmt[1] == FI_INT8) {
            FI_TIK_WALK(uint16_t, int8_t, uint8_t, fi_f32_to_f16((float)A[k]));
        } else if (in->fmt[1] == FI_UINT8) {
            FI_TIK_WALK(uint16_t, uint8_t, uint8_t, fi_f32_to_f16((float)A[k]));
        } else {  /* int32 -> fp16: one rounding from the exact value */
            FI_TIK_WALK(uint16_t, int32_t, uint8_t, FI_OHD((double)A[k]));
        }
        break;
    case FI_TIK_CASE(FI_TIK_CONV, FI_INT32):
        if (in->fmt[1] == FI_FLOAT16)
            FI_TIK_WALK(int32_t, uint16_t, uint8_t, (int32_t)fi_tik_round_clamp(FI_H(A[k]), rnd, -2147483648.0, 2147483647.0));
        else
            FI_TIK_WALK(int32_t, float, uint8_t, (int32_t)fi_tik_round_clamp(A[k], rnd, -2147483648.0, 2147483647.0));
        break;
    case FI_TIK_CASE(FI_TIK_CONV, FI_INT8):
        FI_TIK_WALK(int8_t, uint16_t, uint8_t, (int8_t)fi_tik_round_clamp(FI_H(A[k]), rnd, -128.0, 127.0)); break;
    case FI_TIK_CASE(FI_TIK_CONV, FI_UINT8):
        FI_TIK_WALK(uint8_t, uint16_t, uint8_t, (uint8_t)fi_tik_round_clamp(FI_H(A[k]), rnd, 0.0, 255.0)); break;
    default:
        break;  /* unreachable: Python only records supported (op, dtype) rows */
    }
}

/* Reductions (vcadd/vcmax/vcmin shape): for every repeat r, reduce the active lanes of
 * src (lane order, accumulated in float64 for add, exact for max/min) and write one
 * element to dst + r*dst_rep elements; the result is rounded once to the dst format.
 * op is FI_TIK_ADD, FI_TIK_MAX or FI_TIK_MIN; in->rep[0] counts dst ELEMENTS here. */
static inline void fi_tik_reduce(const fi_tik_instr *in, uint8_t *dbuf, const uint8_t *sbuf) {
    const int64_t fmt = in->fmt[1], es = fi_tik_esize(fmt), bpb = 32 / es;
    const uint64_t lo = (uint64_t)in->mask_lo, hi = (uint64_t)in->mask_hi;
    const int sat = (int)in->sat;
    for (int64_t r = 0; r < in->nrep; ++r) {
        int64_t nl = in->par;
        uint64_t ml = lo, mh = hi;
        if (in->counter) {
            nl = (r == in->nrep - 1) ? in->tail : in->par;
            ml = nl >= 64 ? ~0ull : ((1ull << nl) - 1);
            mh = nl > 64 ? (nl >= 128 ? ~0ull : ((1ull << (nl - 64)) - 1)) : 0;
        }
        double acc = 0.0;
        int any = 0;
        for (int64_t i = 0; i < in->par; ++i) {
            int on = i < 64 ? (int)((ml >> i) & 1u) : (int)((mh >> (i - 64)) & 1u);
            if (!on) continue;
            const uint8_t *p = sbuf + in->off[1] + r * in->rep[1] * 32 +
                               (i / bpb) * in->blk[1] * 32 + (i % bpb) * es;
            double v = fi_tik_load(p, fmt);
            if (!any) { acc = v; any = 1; continue; }
            if (in->op == FI_TIK_ADD) acc += v;
            else if (in->op == FI_TIK_MAX) acc = (acc >= v || acc != acc) ? acc : v;
            else acc = (acc <= v || acc != acc) ? acc : v;
        }
        uint8_t *d = dbuf + in->off[0] + r * in->rep[0] * es;
        if (fmt == FI_FLOAT16) *(uint16_t *)d = fi_tik_hd(acc, sat);
        else if (fmt == FI_FLOAT32) *(float *)d = (float)acc;
        else if (fmt == FI_INT32) *(int32_t *)d = (int32_t)(int64_t)acc;
        else if (fmt == FI_INT16) *(int16_t *)d = (int16_t)(int64_t)acc;
    }
}

/* data_move: nburst bursts of `burst` bytes; burst k is read at src + k*(burst+src_gap)
 * and written at dst + k*(burst+dst_gap) (bytes).  memmove per burst, so UB->UB moves
 * within one buffer are well defined (each burst reads before it writes). */
static inline void fi_tik_dma(uint8_t *dst, const uint8_t *src, int64_t nburst, int64_t burst,
                              int64_t src_gap, int64_t dst_gap) {
    for (int64_t k = 0; k < nburst; ++k)
        memmove(dst + k * (burst + dst_gap), src + k * (burst + src_gap), (size_t)burst);
}

/* ---- vcmax / vcmin: per-repeat [value, index] pairs (appended; see fi_tik_reduce) ----
 * For every repeat r, over the active lanes of src (same addressing and mask as
 * fi_tik_reduce; op FI_TIK_MAX or FI_TIK_MIN, fmt float16 or float32), find the extreme
 * value and the lane number (0..par-1 within the repeat) where it is, and write the pair
 * at dst + r*rep[0] ELEMENTS: element 0 = the winning element's bits unchanged, element 1
 * = the lane number as an unsigned integer of the element's width (uint16 / uint32).
 * Ties (incl. -0 == +0): the lowest lane wins.  NaN: the first NaN lane wins (NaN
 * propagates).  A repeat with no active lane writes nothing.  Reads every lane of a
 * repeat before writing its pair. */
static inline void fi_tik_reduce_arg(const fi_tik_instr *in, uint8_t *dbuf, const uint8_t *sbuf) {
    const int64_t fmt = in->fmt[1], es = fi_tik_esize(fmt), bpb = 32 / es;
    const uint64_t lo = (uint64_t)in->mask_lo, hi = (uint64_t)in->mask_hi;
    const int is_max = in->op == FI_TIK_MAX;
    for (int64_t r = 0; r < in->nrep; ++r) {
        double best = 0.0;
        int64_t bi = -1;
        uint32_t bbits = 0;
        for (int64_t i = 0; i < in->par; ++i) {
            int on = i < 64 ? (int)((lo >> i) & 1u) : (int)((hi >> (i - 64)) & 1u);
            if (!on) continue;
            const uint8_t *p = sbuf + in->off[1] + r * in->rep[1] * 32 +
                               (i / bpb) * in->blk[1] * 32 + (i % bpb) * es;
            const double v = fi_tik_load(p, fmt);
            int take;
            if (bi < 0) take = 1;
            else if (best != best) take = 0;        /* NaN already won */
            else if (v != v) take = 1;              /* first NaN wins */
            else take = is_max ? (v > best) : (v < best);
            if (take) {
                best = v;
                bi = i;
                if (es == 2) { uint16_t b16; memcpy(&b16, p, 2); bbits = b16; }
                else memcpy(&bbits, p, 4);
            }
        }
        if (bi < 0) continue;
        uint8_t *d = dbuf + in->off[0] + r * in->rep[0] * es;
        if (es == 2) {
            const uint16_t pair[2] = {(uint16_t)bbits, (uint16_t)bi};
            memcpy(d, pair, 4);
        } else {
            const uint32_t pair[2] = {bbits, (uint32_t)bi};
            memcpy(d, pair, 8);
        }
    }
}

#endif /* FASTISA_WALKER_H */
