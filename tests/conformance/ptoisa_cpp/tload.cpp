// fastisa's golden program for tload (our code): case k builds a 5-D GlobalTensor of shape
// S0..S4 over in<k>_0.bin (packed; ND: row-major, DN: the last two dims column-major), TLOADs
// it into a TR x TC tile of layout B with pad P and valid shape VR x VC (TASSIGNed at 0, its
// storage first set from in<k>_1.bin) and writes the tile's storage to out<k>_0.bin.
#include <cstdint>
#include <vector>
#include <pto/pto-inst.hpp>
#include "fio.h"
using namespace pto;

static std::string in(int k, int i) { return "in" + std::to_string(k) + "_" + std::to_string(i) + ".bin"; }
static std::string out(int k, int i) { return "out" + std::to_string(k) + "_" + std::to_string(i) + ".bin"; }

template <typename T, int S0, int S1, int S2, int S3, int S4, Layout L, int TR, int TC, BLayout B, int VR, int VC,
          PadValue P>
void load(int k)
{
    using TT = Tile<TileType::Vec, T, TR, TC, B, -1, -1, SLayout::NoneBox, 512, P>;
    TT t(VR, VC);
    TASSIGN(t, 0);
    fio::load(in(k, 1), t);
    constexpr int n = S0 * S1 * S2 * S3 * S4 / (IsTwinType<T>() ? 2 : 1);   // storage units
    std::vector<T> a(n);
    fio::rd(in(k, 0), a.data(), n);
    constexpr int st3 = L == Layout::DN ? 1 : S4;
    constexpr int st4 = L == Layout::DN ? S3 : 1;
    using G = GlobalTensor<T, Shape<S0, S1, S2, S3, S4>, pto::Stride<S1 * S2 * S3 * S4, S2 * S3 * S4, S3 * S4, st3, st4>,
                           L>;
    G g(a.data());
    TLOAD(t, g);
    fio::save(out(k, 0), t);
}

// An NZ GlobalTensor (S0, S1, S2, 16, C0; packed) into a boxed NZ tile (ColMajor blocks of
// RowMajor fractals) of S2*16 x S0*S1*C0 valid elements; writes the tile's values in logical
// row-major order (out<k>_0.bin): fastisa keeps boxed tiles in plain storage, so values,
// not storage, are compared.
template <typename T, int S0, int S1, int S2, int S3, int S4>
void loadnz(int k)
{
    constexpr int R = S2 * S3, C = S0 * S1 * S4;
    using TT = Tile<TileType::Vec, T, R, C, BLayout::ColMajor, -1, -1, SLayout::RowMajor, 512>;
    TT t(R, C);
    TASSIGN(t, 0);
    constexpr int n = S0 * S1 * S2 * S3 * S4;
    std::vector<T> a(n), v(R * C);
    fio::rd(in(k, 0), a.data(), n);
    using G = GlobalTensor<T, Shape<S0, S1, S2, S3, S4>, pto::Stride<S1 * S2 * S3 * S4, S2 * S3 * S4, S3 * S4, S4, 1>,
                           Layout::NZ>;
    G g(a.data());
    TLOAD(t, g);
    for (int r = 0; r < R; ++r)
        for (int c = 0; c < C; ++c)
            v[r * C + c] = t.data()[GetTileElementOffset<TT>(r, c)];
    fio::wr(out(k, 0), v.data(), R * C);
}
