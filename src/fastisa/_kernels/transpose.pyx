# cython: language_level=3
"""TIK transpose drivers: one nogil call into csrc/fastisa/transpose.h per instruction.

Byte offsets are validated by :mod:`fastisa.tik._transpose`; these drivers trust them.
"""
from libc.stdint cimport int64_t, uint8_t
from fastisa._kernels.capi cimport fi_tik_nchwconv, fi_tik_transpose16


def nchwconv(uint8_t[::1] ub, const int64_t[::1] dst_off, const int64_t[::1] src_off,
             int64_t es, int64_t nrep, int64_t dst_rep, int64_t src_rep, bint dst_hi,
             bint src_hi):
    """vnchwconv: 16 dst / 16 src block byte offsets; rep strides in bytes."""
    if dst_off.shape[0] != 16 or src_off.shape[0] != 16:
        raise ValueError("nchwconv: 16 dst and 16 src offsets are needed")
    with nogil:
        fi_tik_nchwconv(&ub[0], &dst_off[0], &src_off[0], es, nrep, dst_rep, src_rep,
                        dst_hi, src_hi)


def transpose16(uint8_t[::1] ub, int64_t dst_off, int64_t src_off, int64_t nrep,
                int64_t dst_rep, int64_t src_rep):
    """vtranspose / vec_trans: 16x16 16-bit blocks; offsets and rep strides in bytes."""
    with nogil:
        fi_tik_transpose16(&ub[0], dst_off, src_off, nrep, dst_rep, src_rep)
