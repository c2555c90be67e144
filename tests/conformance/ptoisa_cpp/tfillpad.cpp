// fastisa's golden program for tfillpad (our code): case k TLOADs a GR x GC GM array
// (in<k>_0.bin) into a TR x SC src tile with pad LP and valid shape GR x GC, TFILLPADs it
// into a TR x TC dst tile with pad FP (Mode 0 plain, 1 in place: dst at src's address,
// 2 expand), TSTOREs the whole dst into a TR x TC GM array, written to out<k>_0.bin.
#include <cstdint>
#include <vector>
#include <pto/pto-inst.hpp>
#include <pto/common/constants.hpp>
#include "fio.h"
using namespace pto;

static std::string in(int k, int i) { return "in" + std::to_string(k) + "_" + std::to_string(i) + ".bin"; }
static std::string out(int k, int i) { return "out" + std::to_string(k) + "_" + std::to_string(i) + ".bin"; }

template <typename T, int GR, int GC, int TR, int SC, int TC, PadValue LP, PadValue FP, int Mode>
void fillpad(int k)
{
    using S = Tile<TileType::Vec, T, TR, SC, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, LP>;
    using D = Tile<TileType::Vec, T, TR, TC, BLayout::RowMajor, -1, TC, SLayout::NoneBox, 512, FP>;
    S src(GR, GC);
    D dst(TR);
    TASSIGN(src, 0);
    TASSIGN(dst, Mode == 1 ? 0 : 0x18000);
    std::vector<T> a(GR * GC), b(TR * TC);
    fio::rd(in(k, 0), a.data(), GR * GC);
    GlobalTensor<T, Shape<1, 1, 1, GR, GC>, pto::Stride<1, 1, 1, GC, 1>> ga(a.data());
    GlobalTensor<T, Shape<1, 1, 1, TR, TC>, pto::Stride<1, 1, 1, TC, 1>> gb(b.data());
    TLOAD(src, ga);
    if constexpr (Mode == 0) TFILLPAD(dst, src);
    if constexpr (Mode == 1) TFILLPAD<TFillPadMode::InPlace>(dst, src);
    if constexpr (Mode == 2) TFILLPAD<TFillPadMode::Expand>(dst, src);
    TSTORE(gb, dst);
    fio::wr(out(k, 0), b.data(), TR * TC);
}
