// fastisa's golden program for tmov (our code): case k TLOADs a validRow x validCol GM array
// (in<k>_0.bin) into a src tile of the given location/layouts, TMOVs it to a dst tile with
// a dynamic valid shape (its storage first set from in<k>_1.bin), TSTOREs dst into a GM
// array; writes dst's storage (out<k>_0.bin) and the GM array (out<k>_1.bin).
#include <cstdint>
#include <vector>
#include <pto/pto-inst.hpp>
#include "fio.h"
using namespace pto;

static std::string in(int k, int i) { return "in" + std::to_string(k) + "_" + std::to_string(i) + ".bin"; }
static std::string out(int k, int i) { return "out" + std::to_string(k) + "_" + std::to_string(i) + ".bin"; }

template <typename T, int R, int C, int VR, int VC, TileType SL, BLayout SB, SLayout SS, TileType DL, BLayout DB,
          SLayout DS>
void mov(int k)
{
    Tile<SL, T, R, C, SB, VR, VC, SS> src;
    Tile<DL, T, R, C, DB, -1, -1, DS> dst(VR, VC);
    TASSIGN(src, 0);
    TASSIGN(dst, R * C * sizeof(T));
    std::fill(src.data(), src.data() + R * C, T(0));
    fio::rd(in(k, 1), dst.data(), R * C);
    std::vector<T> a(VR * VC), b(VR * VC, T(0));
    fio::rd(in(k, 0), a.data(), VR * VC);
    using G = GlobalTensor<T, Shape<1, 1, 1, VR, VC>, pto::Stride<VR * VC, VR * VC, VR, VC, 1>>;
    G ga(a.data()), gb(b.data());
    TLOAD(src, ga);
    TMOV(dst, src);
    TSTORE(gb, dst);
    fio::wr(out(k, 0), dst.data(), R * C);
    fio::wr(out(k, 1), b.data(), VR * VC);
}
