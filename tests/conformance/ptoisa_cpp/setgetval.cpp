// fastisa's golden program for setgetval (our code): a dynamic-valid Vec tile TASSIGNed at 0
// with storage from in<k>_0.bin; SetValue(off0, v) with v a double (in<k>_2.bin) converted
// by C++, GetValue(off0) stored again at off1 (offsets in<k>_1.bin); TSTORE into a GM array
// that starts as in<k>_3.bin; the GM array is written out.
#include <cstdint>
#include <vector>
#include <pto/pto-inst.hpp>
#include "fio.h"
using namespace pto;

static std::string in(int k, int i) { return "in" + std::to_string(k) + "_" + std::to_string(i) + ".bin"; }
static std::string out(int k, int i) { return "out" + std::to_string(k) + "_" + std::to_string(i) + ".bin"; }

template <typename T, int R, int C>
void setget(int k)
{
    using TT = Tile<TileType::Vec, T, R, C, BLayout::RowMajor, -1, -1>;
    TT t(R, C);
    TASSIGN(t, 0);
    fio::load(in(k, 0), t);
    int32_t off[2];
    double v;
    fio::rd(in(k, 1), off, 2);
    fio::rd(in(k, 2), &v, 1);
    t.SetValue(off[0], static_cast<T>(v));
    T val = t.GetValue(off[0]);
    t.SetValue(off[1], val);
    std::vector<T> gm(R * C);
    fio::rd(in(k, 3), gm.data(), R * C);
    GlobalTensor<T, Shape<1, 1, 1, R, C>, pto::Stride<1, 1, 1, C, 1>> g(gm.data());
    TSTORE(g, t);
    fio::wr(out(k, 0), gm.data(), R * C);
}
