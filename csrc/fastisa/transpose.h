/* fastisa TIK transpose kernels: vnchwconv / vec_trans_scatter (16 block addresses per
 * operand) and vtranspose / vec_trans (one contiguous 16x16 block of 16-bit elements).
 *
 * Python-free, header-only, static inline, fi_ prefix.  fastisa.tik (src/fastisa/tik/
 * _transpose.py) validates the addresses, extents and overlap rules first; nothing here
 * checks or raises.
 *
 * vnchwconv, one repeat (CANN Ascend C TransDataTo5HD "conversion rule per repeat", the
 * same instruction as TIK's vnchwconv):
 *   16-bit: dst block j, element i  =  src block i, element j          (i, j < 16)
 *   32-bit: dst block 2c+h, element k  =  src block 8h+k, element c    (c, k < 8, h < 2)
 *   8-bit:  dst block j, byte 16*dh + i  =  src block i, byte 16*sh + j  (i, j < 16);
 *           the other half of each dst block is not written.
 * Repeat r reads src block i at src_off[i] + r*src_rep bytes and writes dst block j at
 * dst_off[j] + r*dst_rep bytes.  Each repeat reads all 16 source blocks before writing,
 * so a dst list equal to the src list (in place) is well defined.
 */
#ifndef FASTISA_TRANSPOSE_H
#define FASTISA_TRANSPOSE_H

#include <stdint.h>
#include <string.h>

static inline void fi_tik_nchwconv(uint8_t *ub, const int64_t *dst_off, const int64_t *src_off,
                                   int64_t es, int64_t nrep, int64_t dst_rep, int64_t src_rep,
                                   int dst_hi, int src_hi) {
    uint8_t in[16][32], out[16][32];
    for (int64_t r = 0; r < nrep; ++r) {
        for (int i = 0; i < 16; ++i) memcpy(in[i], ub + src_off[i] + r * src_rep, 32);
        if (es == 2) {
            uint16_t a[16][16], b[16][16];
            memcpy(a, in, sizeof a);
            for (int j = 0; j < 16; ++j)
                for (int i = 0; i < 16; ++i) b[j][i] = a[i][j];
            memcpy(out, b, sizeof b);
        } else if (es == 4) {
            uint32_t a[16][8], b[16][8];
            memcpy(a, in, sizeof a);
            for (int c = 0; c < 8; ++c)
                for (int h = 0; h < 2; ++h)
                    for (int k = 0; k < 8; ++k) b[2 * c + h][k] = a[8 * h + k][c];
            memcpy(out, b, sizeof b);
        } else {
            for (int j = 0; j < 16; ++j)
                for (int i = 0; i < 16; ++i) out[j][i] = in[i][16 * src_hi + j];
        }
        for (int j = 0; j < 16; ++j) {
            uint8_t *d = ub + dst_off[j] + r * dst_rep;
            if (es == 1) memcpy(d + 16 * dst_hi, out[j], 16);
            else memcpy(d, out[j], 32);
        }
    }
}

/* vtranspose / vec_trans: for every repeat, the 16x16 matrix of 16-bit elements at
 * src + r*src_rep bytes (row-major, 512 bytes) transposed into dst + r*dst_rep bytes:
 * dst[i][j] = src[j][i].  Each repeat reads all 512 bytes before writing (in place ok). */
static inline void fi_tik_transpose16(uint8_t *ub, int64_t dst_off, int64_t src_off,
                                      int64_t nrep, int64_t dst_rep, int64_t src_rep) {
    uint16_t a[16][16], b[16][16];
    for (int64_t r = 0; r < nrep; ++r) {
        memcpy(a, ub + src_off + r * src_rep, sizeof a);
        for (int i = 0; i < 16; ++i)
            for (int j = 0; j < 16; ++j) b[i][j] = a[j][i];
        memcpy(ub + dst_off + r * dst_rep, b, sizeof b);
    }
}

#endif /* FASTISA_TRANSPOSE_H */
