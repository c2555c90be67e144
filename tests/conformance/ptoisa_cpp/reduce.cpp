// fastisa's golden program for tcolprod / tpartmul / trowreduceidx / tcolreduceidx /
// thistogram (our code): case k reads in<k>_<i>.bin into the operand tiles' storage (the
// destination tiles' storage too, so untouched elements are compared as well), runs one
// CPU-simulator instruction and writes the destinations' storage to out<k>_<i>.bin.
#include <cstdint>
#include <pto/pto-inst.hpp>
#include "fio.h"
using namespace pto;

static std::string in(int k, int i) { return "in" + std::to_string(k) + "_" + std::to_string(i) + ".bin"; }
static std::string out(int k, int i) { return "out" + std::to_string(k) + "_" + std::to_string(i) + ".bin"; }

template <typename D, typename S>
void colprod(int k)
{
    S s; D d;
    TASSIGN(s, 0); TASSIGN(d, S::GetSizeInBytes());
    fio::load(in(k, 0), s); fio::load(in(k, 1), d);
    TCOLPROD(d, s);
    fio::save(out(k, 0), d);
}

template <typename D, typename S0, typename S1>
void partmul(int k)
{
    D d; S0 a; S1 b;
    TASSIGN(d, 0); TASSIGN(a, D::GetSizeInBytes()); TASSIGN(b, D::GetSizeInBytes() + S0::GetSizeInBytes());
    fio::load(in(k, 0), a); fio::load(in(k, 1), b); fio::load(in(k, 2), d);
    TPARTMUL(d, a, b);
    fio::save(out(k, 0), d);
}

template <int Which, typename D, typename S, typename T>
void argred(int k)      // Which: 0 TROWARGMAX, 1 TROWARGMIN, 2 TCOLARGMAX, 3 TCOLARGMIN
{
    S s; D d; T t;
    TASSIGN(s, 0); TASSIGN(d, S::GetSizeInBytes()); TASSIGN(t, S::GetSizeInBytes() + D::GetSizeInBytes());
    fio::load(in(k, 0), s); fio::load(in(k, 1), d);
    if constexpr (Which == 0) TROWARGMAX(d, s, t);
    if constexpr (Which == 1) TROWARGMIN(d, s, t);
    if constexpr (Which == 2) TCOLARGMAX(d, s, t);
    if constexpr (Which == 3) TCOLARGMIN(d, s, t);
    fio::save(out(k, 0), d);
}

template <HistByte B, typename D, typename S, typename I>
void hist(int k)
{
    S s; D d; I x;
    TASSIGN(s, 0); TASSIGN(d, S::GetSizeInBytes()); TASSIGN(x, S::GetSizeInBytes() + D::GetSizeInBytes());
    fio::load(in(k, 0), s); fio::load(in(k, 1), d); fio::load(in(k, 2), x);
    THISTOGRAM<B>(d, s, x);
    fio::save(out(k, 0), d);
}
