// fastisa's golden program for tmatmul_layout (our code): float32 tiles filled in logical
// row-major order from in<k>_<i>.bin (lhs, rhs, accIn, bias), run on the CPU simulator, the
// results written in logical row-major order.  mm<k>: an explicitly RowMajor/RowMajor-encoded
// Left tile through TMATMUL and TMATMUL_ACC (out<k>_0, out<k>_1).  gemv<k>: TGEMV, TGEMV_ACC,
// TGEMV_BIAS on a Left tile of one valid row (out<k>_0 .. out<k>_2).
#include <cstdint>
#include <vector>
#include <pto/pto-inst.hpp>
#include "fio.h"
using namespace pto;

static std::string in(int k, int i) { return "in" + std::to_string(k) + "_" + std::to_string(i) + ".bin"; }
static std::string out(int k, int i) { return "out" + std::to_string(k) + "_" + std::to_string(i) + ".bin"; }

template <typename TT>
static void put(TT& t, const std::string& f)
{
    std::vector<float> v(TT::Rows * TT::Cols);
    fio::rd(f, v.data(), v.size());
    for (int r = 0; r < TT::Rows; ++r)
        for (int c = 0; c < TT::Cols; ++c)
            t.data()[GetTileElementOffset<TT>(r, c)] = v[r * TT::Cols + c];
}

template <typename TT>
static void get(TT& t, const std::string& f)
{
    std::vector<float> v(TT::Rows * TT::Cols);
    for (int r = 0; r < TT::Rows; ++r)
        for (int c = 0; c < TT::Cols; ++c)
            v[r * TT::Cols + c] = t.data()[GetTileElementOffset<TT>(r, c)];
    fio::wr(f, v.data(), v.size());
}

template <int M, int K, int N>
void mm(int k)
{
    using L = Tile<TileType::Left, float, M, K, BLayout::RowMajor, M, K, SLayout::RowMajor, 512>;
    using R = TileRight<float, K, N>;
    using A = TileAcc<float, M, N>;
    L lhs;
    R rhs;
    A dst, accIn, accOut;
    size_t addr = 0;
    TASSIGN(lhs, addr);
    addr += L::GetSizeInBytes();
    TASSIGN(rhs, addr);
    addr += R::GetSizeInBytes();
    TASSIGN(dst, addr);
    addr += A::GetSizeInBytes();
    TASSIGN(accIn, addr);
    addr += A::GetSizeInBytes();
    TASSIGN(accOut, addr);
    put(lhs, in(k, 0));
    put(rhs, in(k, 1));
    put(accIn, in(k, 2));
    put(dst, in(k, 3));
    put(accOut, in(k, 3));
    TMATMUL(dst, lhs, rhs);
    TMATMUL_ACC(accOut, accIn, lhs, rhs);
    get(dst, out(k, 0));
    get(accOut, out(k, 1));
}

template <int K, int N>
void gemv(int k)
{
    using L = TileLeft<float, 16, K, 1, K>;
    using R = TileRight<float, K, N>;
    using A = TileAcc<float, 16, N, 1, N>;
    using B = Tile<TileType::Bias, float, 1, N>;
    L lhs;
    R rhs;
    A accIn, g, gAcc, gBias;
    B bias;
    size_t addr = 0;
    TASSIGN(lhs, addr);
    addr += L::GetSizeInBytes();
    TASSIGN(rhs, addr);
    addr += R::GetSizeInBytes();
    TASSIGN(accIn, addr);
    addr += A::GetSizeInBytes();
    TASSIGN(g, addr);
    addr += A::GetSizeInBytes();
    TASSIGN(gAcc, addr);
    addr += A::GetSizeInBytes();
    TASSIGN(gBias, addr);
    TASSIGN(bias, 0);
    put(lhs, in(k, 0));
    put(rhs, in(k, 1));
    put(accIn, in(k, 2));
    put(g, in(k, 3));
    put(gAcc, in(k, 3));
    put(gBias, in(k, 3));
    put(bias, in(k, 4));
    TGEMV(g, lhs, rhs);
    TGEMV_ACC(gAcc, accIn, lhs, rhs);
    TGEMV_BIAS(gBias, lhs, rhs, bias);
    get(g, out(k, 0));
    get(gAcc, out(k, 1));
    get(gBias, out(k, 2));
}
