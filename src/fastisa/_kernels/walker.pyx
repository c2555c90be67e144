# cython: language_level=3
"""TIK walker drivers: one nogil call into csrc/fastisa/walker.h per instruction.

``params`` is the int64 image of ``fi_tik_instr`` (FI_TIK_NPARAM fields, see walker.h),
filled and validated by :mod:`fastisa.tik`; these drivers trust it completely.
"""
from libc.stdint cimport int64_t, uint8_t
from libc.string cimport memcpy
from fastisa._kernels.capi cimport (fi_tik_instr, FI_TIK_NPARAM, fi_tik_vector,
                                    fi_tik_reduce, fi_tik_dma,
                                    fi_tik_reduce_arg)

NPARAM = FI_TIK_NPARAM


def vector(const int64_t[::1] params, double scalar, uint8_t[::1] dbuf,
           const uint8_t[::1] s0buf, const uint8_t[::1] s1buf):
    """Run one vector instruction (op, strides, mask as data) over the scope buffers."""
    cdef fi_tik_instr ins
    memcpy(&ins, &params[0], FI_TIK_NPARAM * sizeof(int64_t))
    ins.scalar = scalar
    with nogil:
        fi_tik_vector(&ins, &dbuf[0], &s0buf[0], &s1buf[0])


def reduce(const int64_t[::1] params, uint8_t[::1] dbuf, const uint8_t[::1] sbuf):
    """Per-repeat reduction (vcadd/vcmax/vcmin shape) of src's active lanes."""
    cdef fi_tik_instr ins
    memcpy(&ins, &params[0], FI_TIK_NPARAM * sizeof(int64_t))
    ins.scalar = 0.0
    with nogil:
        fi_tik_reduce(&ins, &dbuf[0], &sbuf[0])


def dma(uint8_t[::1] dbuf, int64_t doff, const uint8_t[::1] sbuf, int64_t soff,
        int64_t nburst, int64_t burst, int64_t src_gap, int64_t dst_gap):
    """data_move: nburst bursts of ``burst`` bytes with tail-to-head gaps (bytes)."""
    with nogil:
        fi_tik_dma(&dbuf[doff], &sbuf[soff], nburst, burst, src_gap, dst_gap)


cdef class Buffers:
    """The three scope buffers (GM, UB, L1) of one run, as raw pointers.

    Holds references to the numpy uint8 arrays so the pointers stay valid; the arrays
    must not be resized while this object lives."""
    cdef uint8_t *ptr[3]
    cdef object keep

    def __init__(self, list bufs):
        cdef uint8_t[::1] mv
        cdef int i
        if len(bufs) != 3:
            raise ValueError("Buffers needs the 3 scope buffers (gm, ub, l1)")
        self.keep = list(bufs)
        for i in range(3):
            mv = bufs[i]
            self.ptr[i] = &mv[0]


cdef class Instr:
    """One fully resolved vector instruction (its fi_tik_instr precomputed at record
    time), run against a Buffers object: dst is in UB, sources in buffers s0/s1."""
    cdef fi_tik_instr ins
    cdef int s0, s1

    def __init__(self, const int64_t[::1] params, int s0, int s1):
        if params.shape[0] != FI_TIK_NPARAM or not (0 <= s0 < 3 and 0 <= s1 < 3):
            raise ValueError("Instr: bad parameter block")
        memcpy(&self.ins, &params[0], FI_TIK_NPARAM * sizeof(int64_t))
        self.s0 = s0
        self.s1 = s1

    def run(self, Buffers b, double scalar):
        self.ins.scalar = scalar
        with nogil:
            fi_tik_vector(&self.ins, b.ptr[1], b.ptr[self.s0], b.ptr[self.s1])

    def run_at(self, Buffers b, double scalar, int64_t off0, int64_t off1, int64_t off2):
        """Run with the operands' byte offsets given now (validated by the caller)."""
        self.ins.scalar = scalar
        self.ins.off[0] = off0
        self.ins.off[1] = off1
        self.ins.off[2] = off2
        with nogil:
            fi_tik_vector(&self.ins, b.ptr[1], b.ptr[self.s0], b.ptr[self.s1])


def reduce_arg(const int64_t[::1] params, uint8_t[::1] dbuf, const uint8_t[::1] sbuf):
    """vcmax/vcmin: per repeat, the [value, lane index] pair of src's active lanes."""
    cdef fi_tik_instr ins
    memcpy(&ins, &params[0], FI_TIK_NPARAM * sizeof(int64_t))
    ins.scalar = 0.0
    with nogil:
        fi_tik_reduce_arg(&ins, &dbuf[0], &sbuf[0])
