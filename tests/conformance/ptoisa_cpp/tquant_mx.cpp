// fastisa's golden program for TQUANT's MX forms (our code): case k reads a row-major src
// tile (in<k>_0.bin) and the initial storage of the exponent, max and scaling tiles
// (in<k>_1.bin, in<k>_2.bin, in<k>_3.bin), runs TQUANT<GRP, ALG> on the CPU simulator and
// writes the exponent, max and scaling tiles' storage (out<k>_0.bin .. out<k>_2.bin) and the
// data tile's (out<k>_3.bin).
#include <cstdint>
#include <pto/pto-inst.hpp>
#include "fio.h"
using namespace pto;

static std::string in(int k, int i) { return "in" + std::to_string(k) + "_" + std::to_string(i) + ".bin"; }
static std::string out(int k, int i) { return "out" + std::to_string(k) + "_" + std::to_string(i) + ".bin"; }

template <typename SrcT, int R, int C, int GRP, MxQuantAlg ALG>
void quantmx(int k)
{
    constexpr bool fp4 = ALG == MxQuantAlg::OcpMxFp4E2M1 || ALG == MxQuantAlg::NvMxFp4E2M1;
    constexpr int A = GRP == 1 ? R : R / 32;
    constexpr int B = GRP == 1 ? C / 32 : C;
    constexpr int EC = (B + 31) / 32 * 32;
    constexpr int MC = (A * B + 7) / 8 * 8;
    using SrcTile = Tile<TileType::Vec, SrcT, R, C>;
    using DstTile = Tile<TileType::Vec, std::conditional_t<fp4, float4_e2m1x2_t, int8_t>, R, C>;
    using ExpTile = Tile<TileType::Vec, uint8_t, A, EC, BLayout::RowMajor, A, B>;
    using MaxTile = Tile<TileType::Vec, float, 1, MC>;
    SrcTile src;
    DstTile dst;
    ExpTile exp;
    MaxTile max, scaling;
    size_t addr = 0;
    TASSIGN(src, addr);
    addr += (SrcTile::Numel * sizeof(SrcT) + 31) / 32 * 32;
    TASSIGN(dst, addr);
    addr += (DstTile::GetSizeInBytes() + 31) / 32 * 32 + R * C;   // the sim zero-fills R*C bytes
    TASSIGN(exp, addr);
    addr += (ExpTile::Numel + 31) / 32 * 32;
    TASSIGN(max, addr);
    addr += MaxTile::Numel * sizeof(float);
    TASSIGN(scaling, addr);
    fio::load(in(k, 0), src);
    fio::load(in(k, 1), exp);
    fio::load(in(k, 2), max);
    fio::load(in(k, 3), scaling);
    TQUANT<GRP, ALG, DstTile, SrcTile, ExpTile, MaxTile, MaxTile>(dst, src, &exp, &max, &scaling);
    fio::save(out(k, 0), exp);
    fio::save(out(k, 1), max);
    fio::save(out(k, 2), scaling);
    fio::save(out(k, 3), dst);
}
