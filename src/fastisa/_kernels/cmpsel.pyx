# cython: language_level=3
"""TIK compare/select drivers: one nogil call into csrc/fastisa/cmpsel.h per instruction.

``params`` is the int64 image of ``fi_cs_instr`` (FI_CS_NPARAM fields, see cmpsel.h),
filled and validated by :mod:`fastisa.tik._cmpsel`; these drivers trust it completely.
"""
from libc.stdint cimport int64_t, uint8_t, uint64_t
from libc.string cimport memcpy
from fastisa._kernels.capi cimport (fi_cs_instr, FI_CS_NPARAM, fi_tik_cmp_bits,
                                    fi_tik_vsel)

NPARAM = FI_CS_NPARAM


def cmp_bits(const int64_t[::1] params, uint8_t[::1] ub):
    """vcmpv / vcmpvs: the compare bits of every repeat written into UB at off[0]."""
    cdef fi_cs_instr ins
    memcpy(&ins, &params[0], FI_CS_NPARAM * sizeof(int64_t))
    with nogil:
        fi_tik_cmp_bits(&ins, &ub[0], &ub[0] + ins.off[0])


def cmp_reg(const int64_t[::1] params, const uint8_t[::1] ub):
    """vcmp: one repeat's compare bits (inactive lanes 0) -> (lo, hi) 64-bit halves."""
    cdef fi_cs_instr ins
    cdef uint8_t out[16]
    cdef uint64_t lo = 0, hi = 0
    memcpy(&ins, &params[0], FI_CS_NPARAM * sizeof(int64_t))
    ins.nrep = 1
    with nogil:
        fi_tik_cmp_bits(&ins, &ub[0], out)
        memcpy(&lo, out, 8)
        if ins.par > 64:
            memcpy(&hi, out + 8, 8)
    return lo, hi


def vsel(const int64_t[::1] params, uint8_t[::1] ub):
    """vsel (modes 0, 1, 2) over UB."""
    cdef fi_cs_instr ins
    memcpy(&ins, &params[0], FI_CS_NPARAM * sizeof(int64_t))
    with nogil:
        fi_tik_vsel(&ins, &ub[0])
