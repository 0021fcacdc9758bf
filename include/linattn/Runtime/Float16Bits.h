//===- Float16Bits.h - f16 and bf16 to and from their bits ------*- C++ -*-===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//
//
// Conversions between float or double and the bits of f16 and bf16, rounded
// to nearest even, for host code that handles 16-bit tensors (linattn-run's
// .npy files, the GPU emulator's registers). Header-only, by bit arithmetic
// (the compiler's _Float16 is a library call on hosts without F16C, which
// the emulator would make for every element), doubles that are not floats
// through _Float16 (f16) or APFloat (bf16), rounding once.
//
//===----------------------------------------------------------------------===//

#ifndef LINATTN_RUNTIME_FLOAT16BITS_H
#define LINATTN_RUNTIME_FLOAT16BITS_H

#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/bit.h"

#include <cstdint>

namespace linattn {

/// Exact, by bit arithmetic: a subnormal half is renormalized by one float
/// subtraction (exact); NaNs stay NaNs, quieted, with their payload.
inline float halfToFloat(uint16_t h) {
  constexpr uint32_t expMask = 0x7c00u << 13;
  uint32_t u = static_cast<uint32_t>(h & 0x7fffu) << 13;
  uint32_t exp = u & expMask;
  u += (127 - 15) << 23;
  if (exp == expMask) {
    u += (128 - 16) << 23;
    if (h & 0x3ffu)
      u |= 1u << 22;
  } else if (exp == 0) {
    u += 1u << 23;
    u = llvm::bit_cast<uint32_t>(llvm::bit_cast<float>(u) -
                                 llvm::bit_cast<float>(113u << 23));
  }
  return llvm::bit_cast<float>(u | static_cast<uint32_t>(h & 0x8000u) << 16);
}
/// Rounded to nearest even by bit arithmetic (subnormal results by one float
/// addition, which rounds so); NaNs stay NaNs, quieted, with the top of
/// their payload.
inline uint16_t floatToHalf(float f) {
  uint32_t u = llvm::bit_cast<uint32_t>(f);
  uint32_t sign = (u >> 16) & 0x8000u;
  u &= 0x7fffffffu;
  uint32_t h;
  if (u >= (127u + 16) << 23) {
    // Past the largest half's rounding range: infinity, or a NaN.
    h = u > 0x7f800000u ? 0x7e00u | ((u >> 13) & 0x3ffu) : 0x7c00u;
  } else if (u < 113u << 23) {
    // A subnormal half or zero: the addition aligns its 10 bits at the
    // bottom of the float and rounds them.
    constexpr uint32_t magic = ((127 - 15) + (23 - 10) + 1) << 23;
    h = llvm::bit_cast<uint32_t>(llvm::bit_cast<float>(u) +
                                 llvm::bit_cast<float>(magic)) -
        magic;
  } else {
    // Rebias, add half an ulp less one plus the kept bit's oddness, and
    // drop the 13 bits: a carry into the exponent is the right rounding up,
    // to infinity too.
    u += ((15u - 127u) << 23) + 0xfffu + ((u >> 13) & 1u);
    h = u >> 13;
  }
  return static_cast<uint16_t>(h | sign);
}
/// Rounded once, from the double: through float it could round twice,
/// unless the double is a float.
inline uint16_t doubleToHalf(double d) {
  float f = static_cast<float>(d);
  if (static_cast<double>(f) == d)
    return floatToHalf(f);
  return llvm::bit_cast<uint16_t>(static_cast<_Float16>(d));
}

inline float bf16ToFloat(uint16_t b) {
  return llvm::bit_cast<float>(static_cast<uint32_t>(b) << 16);
}
/// NaNs stay NaNs (quieted): rounding their payload could carry into the
/// exponent.
inline uint16_t floatToBF16(float f) {
  uint32_t u = llvm::bit_cast<uint32_t>(f);
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return static_cast<uint16_t>((u >> 16) | 0x40);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}
/// Rounded once, from the double: through float it could round twice,
/// unless the double is a float (as every f32 truncated to bf16 is).
inline uint16_t doubleToBF16(double d) {
  float f = static_cast<float>(d);
  if (static_cast<double>(f) == d)
    return floatToBF16(f);
  llvm::APFloat value(d);
  bool lost;
  value.convert(llvm::APFloat::BFloat(), llvm::APFloat::rmNearestTiesToEven,
                &lost);
  return static_cast<uint16_t>(value.bitcastToAPInt().getZExtValue());
}

} // namespace linattn

#endif // LINATTN_RUNTIME_FLOAT16BITS_H
