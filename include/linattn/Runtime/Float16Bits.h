//===- Float16Bits.h - f16 and bf16 to and from their bits ------*- C++ -*-===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//
//
// Conversions between float or double and the bits of f16 and bf16, rounded
// to nearest even, for host code that handles 16-bit tensors (linattn-run's
// .npy files, the GPU emulator's registers). Header-only: bf16 by bit
// arithmetic, f16 through the compiler's _Float16, doubles that are not
// floats through APFloat (rounding once).
//
//===----------------------------------------------------------------------===//

#ifndef LINATTN_RUNTIME_FLOAT16BITS_H
#define LINATTN_RUNTIME_FLOAT16BITS_H

#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/bit.h"

#include <cstdint>

namespace linattn {

inline float halfToFloat(uint16_t h) {
  return static_cast<float>(llvm::bit_cast<_Float16>(h));
}
inline uint16_t floatToHalf(float f) {
  return llvm::bit_cast<uint16_t>(static_cast<_Float16>(f));
}
inline uint16_t doubleToHalf(double d) {
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
