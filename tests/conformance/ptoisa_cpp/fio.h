// fastisa's own I/O helpers for the golden programs in this folder (not pto-isa code):
// each program reads the inputs the Python harness wrote (in<k>.bin, raw little-endian
// arrays) from its working directory, runs pto-isa CPU-simulator instructions on them and
// writes the tiles' whole storage (out<k>.bin).
#pragma once
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace fio {
template <typename T>
inline void rd(const std::string& f, T* p, size_t n)
{
    FILE* fp = std::fopen(f.c_str(), "rb");
    if (!fp || std::fread(p, sizeof(T), n, fp) != n) {
        std::fprintf(stderr, "cannot read %zu elements from %s\n", n, f.c_str());
        std::exit(2);
    }
    std::fclose(fp);
}
template <typename T>
inline void wr(const std::string& f, const T* p, size_t n)
{
    FILE* fp = std::fopen(f.c_str(), "wb");
    if (!fp || std::fwrite(p, sizeof(T), n, fp) != n) {
        std::fprintf(stderr, "cannot write %s\n", f.c_str());
        std::exit(2);
    }
    std::fclose(fp);
}
// tile storage in / out (the whole Rows x Cols buffer; x2 types hold two elements a unit)
template <typename TileT>
inline void load(const std::string& f, TileT& t) { rd(f, t.data(), TileT::GetSizeInUnits()); }
template <typename TileT>
inline void save(const std::string& f, TileT& t) { wr(f, t.data(), TileT::GetSizeInUnits()); }
inline std::string nm(const char* stem, int k) { return std::string(stem) + std::to_string(k) + ".bin"; }
} // namespace fio
