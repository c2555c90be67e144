// fastisa's golden program for tquant's INT8 forms (our code): a float32 Vec tile src
// (in<k>_0.bin), per-row scale and offset tiles [R, 1] column-major (in<k>_1.bin,
// in<k>_2.bin); TQUANT<INT8_SYM>(dst, src, scale) or TQUANT<INT8_ASYM>(dst, src, scale,
// &offset) on the CPU simulator; dst's storage written to out<k>_0.bin.
#include <cstdint>
#include <pto/pto-inst.hpp>
#include "fio.h"
using namespace pto;

static std::string in(int k, int i) { return "in" + std::to_string(k) + "_" + std::to_string(i) + ".bin"; }
static std::string out(int k, int i) { return "out" + std::to_string(k) + "_" + std::to_string(i) + ".bin"; }

template <int R, int C, bool ASYM>
void quant(int k)
{
    using SrcT = Tile<TileType::Vec, float, R, C>;
    using DstT = Tile<TileType::Vec, std::conditional_t<ASYM, uint8_t, int8_t>, R, C>;
    using ParaT = Tile<TileType::Vec, float, (R + 7) / 8 * 8, 1, BLayout::ColMajor, R, 1>;
    SrcT src;
    DstT dst;
    ParaT scale, offset;
    size_t addr = 0;
    TASSIGN(src, addr);
    addr += SrcT::Numel * sizeof(float);
    TASSIGN(dst, addr);
    addr += (DstT::Numel + 31) / 32 * 32;
    TASSIGN(scale, addr);
    addr += ParaT::Numel * sizeof(float) + 32;
    TASSIGN(offset, addr);
    fio::load(in(k, 0), src);
    fio::load(in(k, 1), scale);
    fio::load(in(k, 2), offset);
    if constexpr (ASYM) {
        TQUANT<QuantType::INT8_ASYM>(dst, src, scale, &offset);
    } else {
        TQUANT<QuantType::INT8_SYM>(dst, src, scale);
    }
    fio::save(out(k, 0), dst);
}
