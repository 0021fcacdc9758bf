//===- float16-bits.cpp - Float16Bits.h against the compiler's _Float16 ---===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//
//
// RUN: linattn-float16-bits-test | FileCheck %s
// CHECK: float16 bits ok: 65536 halves, {{[0-9]+}} floats, {{[0-9]+}} doubles
//
// The bit-arithmetic conversions of include/linattn/Runtime/Float16Bits.h
// (which linattn-run and the GPU emulator use) give the bits the compiler's
// _Float16 conversions give: every half to float; to half, the floats at
// and next to every rounding boundary (the midpoints between adjacent
// halves, where ties go to even, and the overflow threshold), the specials
// and 2^24 random bit patterns; doubles that are not floats (rounded once,
// not through float) near the midpoints and at random.
//
//===----------------------------------------------------------------------===//

#include "linattn/Runtime/Float16Bits.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>

using namespace linattn;

namespace {

int failures = 0;

template <typename T, typename U>
void expectBits(const char *what, T input, U got, U want) {
  if (got == want)
    return;
  if (++failures <= 10)
    std::printf("FAIL %s(%a): got 0x%llx, want 0x%llx\n", what,
                static_cast<double>(input),
                static_cast<unsigned long long>(got),
                static_cast<unsigned long long>(want));
}

uint16_t referenceHalf(float f) {
  return llvm::bit_cast<uint16_t>(static_cast<_Float16>(f));
}
uint16_t referenceHalf(double d) {
  return llvm::bit_cast<uint16_t>(static_cast<_Float16>(d));
}

/// xorshift64: the same patterns on every run.
uint64_t next(uint64_t &state) {
  state ^= state << 13;
  state ^= state >> 7;
  state ^= state << 17;
  return state;
}

} // namespace

int main() {
  // Every half to float, and back where it is not a NaN.
  for (uint32_t h = 0; h < 0x10000; ++h) {
    float got = halfToFloat(static_cast<uint16_t>(h));
    float want =
        static_cast<float>(llvm::bit_cast<_Float16>(static_cast<uint16_t>(h)));
    expectBits("halfToFloat", h, llvm::bit_cast<uint32_t>(got),
               llvm::bit_cast<uint32_t>(want));
    if (!std::isnan(got))
      expectBits("floatToHalf(halfToFloat)", h, floatToHalf(got),
                 static_cast<uint16_t>(h));
  }

  int64_t floats = 0, doubles = 0;
  auto checkFloat = [&](float f) {
    expectBits("floatToHalf", f, floatToHalf(f), referenceHalf(f));
    expectBits("floatToHalf", -f, floatToHalf(-f), referenceHalf(-f));
    floats += 2;
  };
  auto checkDouble = [&](double d) {
    expectBits("doubleToHalf", d, doubleToHalf(d), referenceHalf(d));
    expectBits("doubleToHalf", -d, doubleToHalf(-d), referenceHalf(-d));
    doubles += 2;
  };
  constexpr float inf = std::numeric_limits<float>::infinity();
  // The midpoint between each pair of adjacent finite halves (exact in
  // float), its neighbours, and the same in doubles a hair off the
  // midpoint, which rounding through float would take to the tie.
  for (uint16_t h = 0; h < 0x7bff; ++h) {
    double lo = halfToFloat(h), hi = halfToFloat(h + 1);
    double mid = (lo + hi) / 2;
    auto f = static_cast<float>(mid);
    checkFloat(f);
    checkFloat(std::nextafter(f, 0.0f));
    checkFloat(std::nextafter(f, inf));
    double off = (hi - lo) * 0x1p-40;
    checkDouble(mid);
    checkDouble(mid + off);
    checkDouble(mid - off);
  }
  // Overflow: the largest half, the threshold past which floats round to
  // infinity, and the floats around it; the specials.
  for (float f :
       {65504.0f, 65519.0f, 65520.0f, 65536.0f, 1e10f,
        std::numeric_limits<float>::max(), std::numeric_limits<float>::min(),
        std::numeric_limits<float>::denorm_min(), 0x1p-24f, 0x1p-25f,
        0x1.8p-25f, 0x1p-26f, 0x1p-14f, 0.0f, inf,
        std::numeric_limits<float>::quiet_NaN(),
        std::numeric_limits<float>::signaling_NaN()}) {
    checkFloat(f);
    checkFloat(std::nextafter(f, 0.0f));
    checkFloat(std::nextafter(f, inf));
  }
  // Random bit patterns: every exponent, NaNs among them.
  uint64_t state = 0x9e3779b97f4a7c15ull;
  for (int i = 0; i < (1 << 24); ++i)
    checkFloat(llvm::bit_cast<float>(static_cast<uint32_t>(next(state))));
  // Random doubles in and around the halves' range.
  for (int i = 0; i < (1 << 20); ++i) {
    uint64_t bits = next(state);
    int exponent = static_cast<int>(bits % 48) - 30;
    double mantissa = 1.0 + static_cast<double>(bits >> 12) * 0x1p-52;
    checkDouble(std::ldexp(mantissa, exponent));
  }

  if (failures) {
    std::printf("float16 bits: %d mismatches\n", failures);
    return 1;
  }
  std::printf("float16 bits ok: 65536 halves, %lld floats, %lld doubles\n",
              static_cast<long long>(floats), static_cast<long long>(doubles));
  return 0;
}
