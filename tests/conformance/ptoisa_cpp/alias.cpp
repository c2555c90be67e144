// fastisa's golden program for treshape / tgetscaleaddr (our code): src is TASSIGNed at 0 and
// dst after it (as the directories' tests place them), src's storage is read from
// in<k>_0.bin, dst is rebound by the instruction, then one element is written through src
// and one through dst (indices in<k>_1.bin, values in<k>_2.bin, in<k>_3.bin); both storages are written
// out, so aliasing (or not) shows in the output.
#include <cstdint>
#include <pto/pto-inst.hpp>
#include "fio.h"
using namespace pto;

static std::string in(int k, int i) { return "in" + std::to_string(k) + "_" + std::to_string(i) + ".bin"; }
static std::string out(int k, int i) { return "out" + std::to_string(k) + "_" + std::to_string(i) + ".bin"; }

template <int Op, typename D, typename S>
void alias(int k)       // Op: 0 TRESHAPE, 1 TGET_SCALE_ADDR
{
    S s; D d;
    TASSIGN(s, 0); TASSIGN(d, S::GetSizeInBytes());
    fio::load(in(k, 0), s);
    int32_t ix[2];
    typename S::DType v0;
    typename D::DType v1;
    fio::rd(in(k, 1), ix, 2);
    fio::rd(in(k, 2), &v0, 1);
    fio::rd(in(k, 3), &v1, 1);
    if constexpr (Op == 0) TRESHAPE(d, s);
    if constexpr (Op == 1) TGET_SCALE_ADDR(d, s);
    s.data()[ix[0]] = v0;
    d.data()[ix[1]] = v1;
    fio::wr(out(k, 0), d.data(), D::Numel);
    fio::wr(out(k, 1), s.data(), S::Numel);
}
