// fastisa's golden program for timg2col (our code): case k reads a ConvTile's elements
// (in<k>_0.bin, C order of its shape) and a Left dst tile's initial values (in<k>_1.bin,
// logical row-major Rows x Cols), sets the IMG2COL fields it is given, runs SETFMATRIX,
// SET_IMG2COL_PADDING, SET_IMG2COL_RPT and TIMG2COL on the CPU simulator and writes dst's
// values in logical row-major order (out<k>_0.bin).
#include <cstdint>
#include <vector>
#include <pto/pto-inst.hpp>
#include "fio.h"
using namespace pto;

static std::string in(int k, int i) { return "in" + std::to_string(k) + "_" + std::to_string(i) + ".bin"; }
static std::string out(int k, int i) { return "out" + std::to_string(k) + "_" + std::to_string(i) + ".bin"; }

template <typename T, Layout L, typename CShape, int NUMEL, int R, int C, int VR, int VC>
void img2col(int k, int pl, int pr, int pt, int pb, int fh, int fw, int sh, int sw, int dh, int dw, double pad,
             int posM, int posK)
{
    using SrcT = ConvTile<TileType::Mat, T, NUMEL * sizeof(T), L, CShape>;
    using DstT = Tile<TileType::Left, T, R, C, BLayout::ColMajor, VR, VC, SLayout::RowMajor>;
    std::vector<T> storage(NUMEL);
    fio::rd(in(k, 0), storage.data(), NUMEL);
    SrcT src;
    src.data() = storage.data();
    DstT dst;
    TASSIGN(dst, 0);
    std::vector<T> v(R * C);
    fio::rd(in(k, 1), v.data(), R * C);
    for (int r = 0; r < R; ++r)
        for (int c = 0; c < C; ++c)
            dst.data()[GetTileElementOffset<DstT>(r, c)] = v[r * C + c];
    uint8_t pads[] = {uint8_t(pl), uint8_t(pr), uint8_t(pt), uint8_t(pb)};
    src.SetPadListArray(pads);
    src.SetFmapH(src.GetShape(L == Layout::NC1HWC0 ? 2 : 3));
    src.SetFmapW(src.GetShape(L == Layout::NC1HWC0 ? 3 : 4));
    src.SetFilterH(fh);
    src.SetFilterW(fw);
    src.SetStrideH(sh);
    src.SetStrideW(sw);
    src.SetDilationH(dh);
    src.SetDilationW(dw);
    src.SetPadValue(static_cast<T>(pad));
    SETFMATRIX<SrcT, SetFmatrixMode::FMATRIX_A_MANUAL>(src);
    SET_IMG2COL_PADDING<SrcT, SetFmatrixMode::FMATRIX_A_MANUAL>(src);
    SET_IMG2COL_RPT<SrcT, SetFmatrixMode::FMATRIX_A_MANUAL>(src);
    TIMG2COL<DstT, SrcT, SetFmatrixMode::FMATRIX_A_MANUAL>(dst, src, uint16_t(posM), uint16_t(posK));
    for (int r = 0; r < R; ++r)
        for (int c = 0; c < C; ++c)
            v[r * C + c] = dst.data()[GetTileElementOffset<DstT>(r, c)];
    fio::wr(out(k, 0), v.data(), R * C);
}
