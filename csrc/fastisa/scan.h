/* fastisa scan kernels: a sequential dependence along the free axis of each partition.
 *
 * Python-free, header-only, static inline, fi_scan_ prefix.  Two instructions share the
 * shape (one row at a time, the carried state in float32):
 *
 *   tensor_tensor_scan        r_i = op1(op0(a_i, r_{i-1}), b_i), r_{-1} = initial[p]
 *                             (rev0 swaps op0's operands, rev1 op1's)
 *   tensor_scalar_cumulative  r_i = op1(op0(a_i, imm0[p]), r_{i-1}), r_{-1} = acc[p]
 *                             (acc[p] receives the last r on return)
 *
 * Every element is decoded to float32 (fi_nki_decode: exact for floats, RNE for int32),
 * every operator is fi_nki_alu (float32, one rounding each), the carry stays float32 and
 * each r_i is rounded ONCE to dst's format (fi_nki_encode_f32).  Rows are independent, so
 * they may run in any order; within a row the order is strictly ascending.
 * Strides are in elements.  Kernels never validate (fastisa.nki._scan does).
 */
#ifndef FASTISA_SCAN_H
#define FASTISA_SCAN_H

#include "nki.h"

#define FI_SCAN_CH 512

typedef struct {
    const void *ptr;
    int fmt;
    ptrdiff_t sp, sf;   /* partition / free strides in elements */
} fi_scan_in;

typedef struct {
    int P, F;
    void *dst;
    int dst_fmt, itemsize;
    ptrdiff_t dst_sp, dst_sf;
    fi_scan_in in0, in1;         /* in1 unused by the cumulative form */
    const float *init;           /* [P] or [1] (init_sp 0): initial carry / imm0 */
    ptrdiff_t init_sp;
    int op0, rev0, op1, rev1;
    float *acc;                  /* cumulative: [P] carried accumulator (in / out) */
    int threads;                 /* cumulative: threads of the worker pool (par.h; 0: all) */
} fi_scan_args;

static inline const char *fi_scan_at(const void *p, ptrdiff_t off, int itemsize) {
    return (const char *)p + off * itemsize;
}

static inline int fi_scan_isz(int fmt) {
    switch (fmt) {
    case FI_UINT8: case FI_INT8: case FI_BOOL: case FI_FLOAT8_E4M3: case FI_FLOAT8_E5M2:
    case FI_FLOAT8_E4M3FN: return 1;
    case FI_UINT16: case FI_INT16: case FI_FLOAT16: case FI_BFLOAT16: return 2;
    default: return 4;
    }
}

/* dst[p, i] = r_i of tensor_tensor_scan, every row. */
static inline void fi_scan_tensor_tensor(const fi_scan_args *a) {
    float x0[FI_SCAN_CH], x1[FI_SCAN_CH], r[FI_SCAN_CH];
    int i0 = fi_scan_isz(a->in0.fmt), i1 = fi_scan_isz(a->in1.fmt);
    for (int p = 0; p < a->P; p++) {
        float carry = a->init[(ptrdiff_t)p * a->init_sp];
        for (int c0 = 0; c0 < a->F; c0 += FI_SCAN_CH) {
            int n = a->F - c0 < FI_SCAN_CH ? a->F - c0 : FI_SCAN_CH;
            fi_nki_decode(a->in0.fmt, fi_scan_at(a->in0.ptr, p * a->in0.sp + c0 * a->in0.sf, i0),
                          a->in0.sf, n, x0);
            fi_nki_decode(a->in1.fmt, fi_scan_at(a->in1.ptr, p * a->in1.sp + c0 * a->in1.sf, i1),
                          a->in1.sf, n, x1);
            for (int i = 0; i < n; i++) {
                float t = a->rev0 ? fi_nki_alu(a->op0, carry, x0[i]) : fi_nki_alu(a->op0, x0[i], carry);
                carry = a->rev1 ? fi_nki_alu(a->op1, x1[i], t) : fi_nki_alu(a->op1, t, x1[i]);
                r[i] = carry;
            }
            fi_nki_encode_f32(a->dst_fmt,
                              (void *)fi_scan_at(a->dst, p * a->dst_sp + c0 * a->dst_sf, a->itemsize),
                              a->dst_sf, n, r);
        }
    }
}

/* Eight rows of tensor_scalar_cumulative with op0 add / multiply and op1 add: eight
 * independent chains, each strictly left to right (same bits as the row loop). */
static inline void fi_scan_cumulative8(const fi_scan_args *a, int p0) {
    static __thread float x[8][FI_SCAN_CH];
    float carry[8], imm[8];
    int i0 = fi_scan_isz(a->in0.fmt), mul = a->op0 == FI_ALU_MUL;
    for (int r = 0; r < 8; r++) {
        carry[r] = a->acc[p0 + r];
        imm[r] = a->init[(ptrdiff_t)(p0 + r) * a->init_sp];
    }
    for (int c0 = 0; c0 < a->F; c0 += FI_SCAN_CH) {
        int n = a->F - c0 < FI_SCAN_CH ? a->F - c0 : FI_SCAN_CH;
        for (int r = 0; r < 8; r++)
            fi_nki_decode(a->in0.fmt, fi_scan_at(a->in0.ptr, (p0 + r) * a->in0.sp + c0 * a->in0.sf, i0),
                          a->in0.sf, n, x[r]);
        if (mul) {
            for (int i = 0; i < n; i++)
                for (int r = 0; r < 8; r++) { carry[r] = (x[r][i] * imm[r]) + carry[r]; x[r][i] = carry[r]; }
        } else {
            for (int i = 0; i < n; i++)
                for (int r = 0; r < 8; r++) { carry[r] = (x[r][i] + imm[r]) + carry[r]; x[r][i] = carry[r]; }
        }
        for (int r = 0; r < 8; r++)
            fi_nki_encode_f32(a->dst_fmt,
                              (void *)fi_scan_at(a->dst, (p0 + r) * a->dst_sp + c0 * a->dst_sf, a->itemsize),
                              a->dst_sf, n, x[r]);
    }
    for (int r = 0; r < 8; r++) a->acc[p0 + r] = carry[r];
}

/* Rows [pb, pe) of tensor_scalar_cumulative. */
static inline void fi_scan_cumulative_rows(const fi_scan_args *a, int pb, int pe) {
    float x0[FI_SCAN_CH], r[FI_SCAN_CH];
    int i0 = fi_scan_isz(a->in0.fmt);
    int p = pb;
    if (a->op1 == FI_ALU_ADD && (a->op0 == FI_ALU_ADD || a->op0 == FI_ALU_MUL))
        for (; p + 8 <= pe; p += 8) fi_scan_cumulative8(a, p);
    for (; p < pe; p++) {
        float carry = a->acc[p];
        float imm = a->init[(ptrdiff_t)p * a->init_sp];
        for (int c0 = 0; c0 < a->F; c0 += FI_SCAN_CH) {
            int n = a->F - c0 < FI_SCAN_CH ? a->F - c0 : FI_SCAN_CH;
            fi_nki_decode(a->in0.fmt, fi_scan_at(a->in0.ptr, p * a->in0.sp + c0 * a->in0.sf, i0),
                          a->in0.sf, n, x0);
            if (a->op1 == FI_ALU_ADD && a->op0 == FI_ALU_ADD) {
                for (int i = 0; i < n; i++) { carry = (x0[i] + imm) + carry; r[i] = carry; }
            } else if (a->op1 == FI_ALU_ADD && a->op0 == FI_ALU_MUL) {
                for (int i = 0; i < n; i++) { carry = (x0[i] * imm) + carry; r[i] = carry; }
            } else {
                for (int i = 0; i < n; i++) {
                    float t = a->rev0 ? fi_nki_alu(a->op0, imm, x0[i]) : fi_nki_alu(a->op0, x0[i], imm);
                    carry = fi_nki_alu(a->op1, t, carry);
                    r[i] = carry;
                }
            }
            fi_nki_encode_f32(a->dst_fmt,
                              (void *)fi_scan_at(a->dst, p * a->dst_sp + c0 * a->dst_sf, a->itemsize),
                              a->dst_sf, n, r);
        }
        a->acc[p] = carry;
    }
}

static void fi_scan_cumulative_task(void *ctx, int t) {     /* 8 rows (the last: the rest) */
    const fi_scan_args *a = (const fi_scan_args *)ctx;
    int pb = 8 * t, pe = pb + 8 < a->P ? pb + 8 : a->P;
    fi_scan_cumulative_rows(a, pb, pe);
}

/* dst[p, i] = r_i of tensor_scalar_cumulative; acc[p] = the last r_i.  Rows are
 * independent: groups of 8 over the worker pool for a tile of >= 2^16 elements. */
static inline void fi_scan_cumulative(const fi_scan_args *a) {
    int ntasks = (a->P + 7) / 8;
    if ((int64_t)a->P * a->F >= (1 << 16) && ntasks > 1 && a->threads != 1)
        fi_par_for(fi_par_threads(a->threads), ntasks, fi_scan_cumulative_task, (void *)a);
    else
        fi_scan_cumulative_rows(a, 0, a->P);
}

/* tensor_scalar_reduce: t_i = op0(a_i, imm0[p]) (rev0: op0(imm0, a_i)); dst[p, i] = t_i
 * rounded once; acc[p] = op1(acc[p], t_i) left to right over the float32 t_i. */
static inline void fi_scan_reduce(const fi_scan_args *a) {
    float x0[FI_SCAN_CH];
    int i0 = fi_scan_isz(a->in0.fmt);
    for (int p = 0; p < a->P; p++) {
        float carry = a->acc[p];
        float imm = a->init[(ptrdiff_t)p * a->init_sp];
        for (int c0 = 0; c0 < a->F; c0 += FI_SCAN_CH) {
            int n = a->F - c0 < FI_SCAN_CH ? a->F - c0 : FI_SCAN_CH;
            fi_nki_decode(a->in0.fmt, fi_scan_at(a->in0.ptr, p * a->in0.sp + c0 * a->in0.sf, i0),
                          a->in0.sf, n, x0);
            fi_nki_stage(a->op0, a->rev0, x0, &imm, 0, n);
            switch (a->op1) {
            case FI_ALU_ADD: for (int i = 0; i < n; i++) carry = carry + x0[i]; break;
            case FI_ALU_MUL: for (int i = 0; i < n; i++) carry = carry * x0[i]; break;
            case FI_ALU_MAX: for (int i = 0; i < n; i++) carry = fi_nki_max(carry, x0[i]); break;
            default: for (int i = 0; i < n; i++) carry = fi_nki_alu(a->op1, carry, x0[i]); break;
            }
            fi_nki_encode_f32(a->dst_fmt,
                              (void *)fi_scan_at(a->dst, p * a->dst_sp + c0 * a->dst_sf, a->itemsize),
                              a->dst_sf, n, x0);
        }
        a->acc[p] = carry;
    }
}

#endif /* FASTISA_SCAN_H */
