//===- GpuEmulatorHandlers.h - the GPU emulator's op handlers ---*- C++ -*-===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//
//
// The handlers the compiled instructions call, one per kind of op: the
// templates for arithmetic, conversions, memory accesses and scf.for, which
// the compiler instantiates per type and width, and the declarations of the
// others (GpuEmulatorHandlers.cpp: scalars, memory, async copies, vectors,
// scf.if; GpuEmulatorWarpOps.cpp: barriers, shuffles, the warp and
// warpgroup MMAs). Each takes the worker and its instruction and runs the op
// on the lanes of the current mask.
//
//===----------------------------------------------------------------------===//

#ifndef LINATTN_LIB_RUNTIME_GPUEMULATORHANDLERS_H
#define LINATTN_LIB_RUNTIME_GPUEMULATORHANDLERS_H

#include "GpuEmulatorExec.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <cmath>
#include <limits>

namespace linattn::gpu_emulator {
/// The emulator's internals: hidden in liblinattn_gpu_emulator.so.
namespace LLVM_LIBRARY_VISIBILITY detail {

//===----------------------------------------------------------------------===//
// Arithmetic and conversions
//===----------------------------------------------------------------------===//

template <typename T, typename Op>
void floatBinary(Exec &e, const Inst &in) {
  Word *r = e.reg(in.r);
  const Word *a = e.reg(in.a), *b = e.reg(in.b);
  forActive(e, [&](uint32_t l) {
    r[l] = T::put(Op::apply(T::get(a[l]), T::get(b[l])));
  });
}

struct AddOp {
  template <typename C>
  static C apply(C x, C y) {
    return x + y;
  }
};
struct SubOp {
  template <typename C>
  static C apply(C x, C y) {
    return x - y;
  }
};
struct MulOp {
  template <typename C>
  static C apply(C x, C y) {
    return x * y;
  }
};
struct DivOp {
  template <typename C>
  static C apply(C x, C y) {
    return x / y;
  }
};
struct RemOp {
  template <typename C>
  static C apply(C x, C y) {
    return std::fmod(x, y);
  }
};
/// maximumf/minimumf: NaN if either is, -0 < +0.
struct MaximumOp {
  template <typename C>
  static C apply(C x, C y) {
    if (std::isnan(x) || std::isnan(y))
      return std::numeric_limits<C>::quiet_NaN();
    if (x == y)
      return std::signbit(x) ? y : x;
    return x > y ? x : y;
  }
};
struct MinimumOp {
  template <typename C>
  static C apply(C x, C y) {
    if (std::isnan(x) || std::isnan(y))
      return std::numeric_limits<C>::quiet_NaN();
    if (x == y)
      return std::signbit(x) ? x : y;
    return x < y ? x : y;
  }
};
/// maxnumf/minnumf: the number if one is NaN.
struct MaxNumOp {
  template <typename C>
  static C apply(C x, C y) {
    return std::fmax(x, y);
  }
};
struct MinNumOp {
  template <typename C>
  static C apply(C x, C y) {
    return std::fmin(x, y);
  }
};

template <typename T, typename Op>
void floatUnary(Exec &e, const Inst &in) {
  Word *r = e.reg(in.r);
  const Word *a = e.reg(in.a);
  forActive(e, [&](uint32_t l) { r[l] = T::put(Op::apply(T::get(a[l]))); });
}

struct NegOp {
  template <typename C>
  static C apply(C x) {
    return -x;
  }
};
struct ExpOp {
  template <typename C>
  static C apply(C x) {
    return std::exp(x);
  }
};
struct Exp2Op {
  template <typename C>
  static C apply(C x) {
    return std::exp2(x);
  }
};
struct LogOp {
  template <typename C>
  static C apply(C x) {
    return std::log(x);
  }
};
struct SqrtOp {
  template <typename C>
  static C apply(C x) {
    return std::sqrt(x);
  }
};
struct RsqrtOp {
  template <typename C>
  static C apply(C x) {
    return C(1) / std::sqrt(x);
  }
};
struct AbsOp {
  template <typename C>
  static C apply(C x) {
    return std::fabs(x);
  }
};
struct TanhOp {
  template <typename C>
  static C apply(C x) {
    return std::tanh(x);
  }
};

/// r = a * b + c, rounded once.
template <typename T>
LLVM_ATTRIBUTE_ALWAYS_INLINE void floatFma(Exec &e, const Inst &in) {
  Word *r = e.reg(in.r);
  const Word *a = e.reg(in.a), *b = e.reg(in.b), *c = e.reg(in.c);
  const uint8_t *m = e.mask;
  for (uint32_t l = 0, n = e.threads; l < n; ++l)
    if (m[l])
      r[l] = T::put(std::fma(T::get(a[l]), T::get(b[l]), T::get(c[l])));
}

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
/// floatFma for x86-64 hosts with FMA instructions: std::fma one
/// instruction instead of a call of libm's (which a strict-fp32 scan's
/// emulation spent a fifth of its time in). The same results.
template <typename T>
__attribute__((target("fma"))) void floatFmaInstruction(Exec &e,
                                                        const Inst &in) {
  floatFma<T>(e, in);
}
#endif

/// The handler of a fused multiply-add of `T`s on this host.
template <typename T>
Handler floatFmaHandler() {
#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
  if (__builtin_cpu_supports("fma"))
    return floatFmaInstruction<T>;
#endif
  return floatFma<T>;
}

template <typename T>
void floatCmp(Exec &e, const Inst &in) {
  Word *r = e.reg(in.r);
  const Word *a = e.reg(in.a), *b = e.reg(in.b);
  auto pred = static_cast<arith::CmpFPredicate>(in.imm);
  forActive(e, [&](uint32_t l) {
    typename T::C x = T::get(a[l]), y = T::get(b[l]);
    bool unordered = std::isnan(x) || std::isnan(y);
    bool v = false;
    switch (pred) {
    case arith::CmpFPredicate::AlwaysFalse:
      v = false;
      break;
    case arith::CmpFPredicate::OEQ:
      v = !unordered && x == y;
      break;
    case arith::CmpFPredicate::OGT:
      v = !unordered && x > y;
      break;
    case arith::CmpFPredicate::OGE:
      v = !unordered && x >= y;
      break;
    case arith::CmpFPredicate::OLT:
      v = !unordered && x < y;
      break;
    case arith::CmpFPredicate::OLE:
      v = !unordered && x <= y;
      break;
    case arith::CmpFPredicate::ONE:
      v = !unordered && x != y;
      break;
    case arith::CmpFPredicate::ORD:
      v = !unordered;
      break;
    case arith::CmpFPredicate::UEQ:
      v = unordered || x == y;
      break;
    case arith::CmpFPredicate::UGT:
      v = unordered || x > y;
      break;
    case arith::CmpFPredicate::UGE:
      v = unordered || x >= y;
      break;
    case arith::CmpFPredicate::ULT:
      v = unordered || x < y;
      break;
    case arith::CmpFPredicate::ULE:
      v = unordered || x <= y;
      break;
    case arith::CmpFPredicate::UNE:
      v = unordered || x != y;
      break;
    case arith::CmpFPredicate::UNO:
      v = unordered;
      break;
    case arith::CmpFPredicate::AlwaysTrue:
      v = true;
      break;
    }
    r[l] = v;
  });
}

/// extf / truncf between any two float kinds: exact, or rounded once.
template <typename From, typename To>
void floatConvert(Exec &e, const Inst &in) {
  Word *r = e.reg(in.r);
  const Word *a = e.reg(in.a);
  forActive(e, [&](uint32_t l) {
    r[l] = To::put(static_cast<typename To::C>(From::get(a[l])));
  });
}

/// Conversions that float arithmetic would round twice: through double.
void floatConvertGeneric(Exec &e, const Inst &in);

enum class IntBinaryKind {
  Add,
  Sub,
  Mul,
  DivU,
  DivS,
  RemU,
  RemS,
  CeilDivU,
  CeilDivS,
  FloorDivS,
  MinU,
  MaxU,
  MinS,
  MaxS,
  And,
  Or,
  Xor,
  Shl,
  ShrU,
  ShrS
};

template <unsigned W, IntBinaryKind K>
void intBinary(Exec &e, const Inst &in) {
  using I = Int<W>;
  Word *r = e.reg(in.r);
  const Word *a = e.reg(in.a), *b = e.reg(in.b);
  forActive(e, [&](uint32_t l) {
    Word x = a[l], y = b[l];
    int64_t sx = I::sext(x), sy = I::sext(y);
    Word v = 0;
    if constexpr (K == IntBinaryKind::DivU || K == IntBinaryKind::DivS ||
                  K == IntBinaryKind::RemU || K == IntBinaryKind::RemS ||
                  K == IntBinaryKind::CeilDivU ||
                  K == IntBinaryKind::CeilDivS || K == IntBinaryKind::FloorDivS)
      if (y == 0)
        fail(e, in, l, "integer division by zero");
    switch (K) {
    case IntBinaryKind::Add:
      v = x + y;
      break;
    case IntBinaryKind::Sub:
      v = x - y;
      break;
    case IntBinaryKind::Mul:
      v = x * y;
      break;
    case IntBinaryKind::DivU:
      v = x / y;
      break;
    case IntBinaryKind::DivS:
      v = static_cast<Word>(sy == -1 ? -sx : sx / sy);
      break;
    case IntBinaryKind::RemU:
      v = x % y;
      break;
    case IntBinaryKind::RemS:
      v = static_cast<Word>(sy == -1 ? 0 : sx % sy);
      break;
    case IntBinaryKind::CeilDivU:
      v = x / y + (x % y != 0);
      break;
    case IntBinaryKind::CeilDivS: {
      int64_t q = sy == -1 ? -sx : sx / sy;
      if (sy != -1 && sx % sy != 0 && ((sx < 0) == (sy < 0)))
        ++q;
      v = static_cast<Word>(q);
      break;
    }
    case IntBinaryKind::FloorDivS: {
      int64_t q = sy == -1 ? -sx : sx / sy;
      if (sy != -1 && sx % sy != 0 && ((sx < 0) != (sy < 0)))
        --q;
      v = static_cast<Word>(q);
      break;
    }
    case IntBinaryKind::MinU:
      v = std::min(x, y);
      break;
    case IntBinaryKind::MaxU:
      v = std::max(x, y);
      break;
    case IntBinaryKind::MinS:
      v = static_cast<Word>(std::min(sx, sy));
      break;
    case IntBinaryKind::MaxS:
      v = static_cast<Word>(std::max(sx, sy));
      break;
    case IntBinaryKind::And:
      v = x & y;
      break;
    case IntBinaryKind::Or:
      v = x | y;
      break;
    case IntBinaryKind::Xor:
      v = x ^ y;
      break;
    case IntBinaryKind::Shl:
      v = y >= W ? 0 : x << y;
      break;
    case IntBinaryKind::ShrU:
      v = y >= W ? 0 : x >> y;
      break;
    case IntBinaryKind::ShrS:
      v = static_cast<Word>(y >= W ? (sx < 0 ? -1 : 0) : sx >> y);
      break;
    }
    r[l] = I::wrap(v);
  });
}

template <unsigned W>
void intCmp(Exec &e, const Inst &in) {
  using I = Int<W>;
  Word *r = e.reg(in.r);
  const Word *a = e.reg(in.a), *b = e.reg(in.b);
  auto pred = static_cast<arith::CmpIPredicate>(in.imm);
  forActive(e, [&](uint32_t l) {
    Word x = a[l], y = b[l];
    int64_t sx = I::sext(x), sy = I::sext(y);
    bool v = false;
    switch (pred) {
    case arith::CmpIPredicate::eq:
      v = x == y;
      break;
    case arith::CmpIPredicate::ne:
      v = x != y;
      break;
    case arith::CmpIPredicate::slt:
      v = sx < sy;
      break;
    case arith::CmpIPredicate::sle:
      v = sx <= sy;
      break;
    case arith::CmpIPredicate::sgt:
      v = sx > sy;
      break;
    case arith::CmpIPredicate::sge:
      v = sx >= sy;
      break;
    case arith::CmpIPredicate::ult:
      v = x < y;
      break;
    case arith::CmpIPredicate::ule:
      v = x <= y;
      break;
    case arith::CmpIPredicate::ugt:
      v = x > y;
      break;
    case arith::CmpIPredicate::uge:
      v = x >= y;
      break;
    }
    r[l] = v;
  });
}

/// Integer width changes: imm = source width, imm2 = result width; sign
/// extension when `Signed`.
template <bool Signed>
void intResize(Exec &e, const Inst &in) {
  Word *r = e.reg(in.r);
  const Word *a = e.reg(in.a);
  unsigned from = in.imm, to = in.imm2;
  Word toMask = to >= 64 ? ~Word(0) : (Word(1) << to) - 1;
  forActive(e, [&](uint32_t l) {
    Word x = a[l];
    if (Signed && from < 64)
      x = static_cast<Word>(static_cast<int64_t>(x << (64 - from)) >>
                            (64 - from));
    r[l] = x & toMask;
  });
}

/// sitofp / uitofp: imm = source width, imm2 = FloatKind; `Signed`.
template <bool Signed>
void intToFloat(Exec &e, const Inst &in) {
  Word *r = e.reg(in.r);
  const Word *a = e.reg(in.a);
  unsigned from = in.imm;
  auto to = static_cast<FloatKind>(in.imm2);
  forActive(e, [&](uint32_t l) {
    Word x = a[l];
    double v;
    if (Signed) {
      int64_t s = from < 64
                      ? static_cast<int64_t>(x << (64 - from)) >> (64 - from)
                      : static_cast<int64_t>(x);
      v = static_cast<double>(s);
    } else {
      v = static_cast<double>(x);
    }
    r[l] = doubleToFloat(to, v);
  });
}

/// fptosi / fptoui: imm = FloatKind, imm2 = result width.
template <bool Signed>
void floatToInt(Exec &e, const Inst &in) {
  Word *r = e.reg(in.r);
  const Word *a = e.reg(in.a);
  auto from = static_cast<FloatKind>(in.imm);
  unsigned to = in.imm2;
  Word toMask = to >= 64 ? ~Word(0) : (Word(1) << to) - 1;
  forActive(e, [&](uint32_t l) {
    double v = std::trunc(floatToDouble(from, a[l]));
    Word x = Signed ? static_cast<Word>(static_cast<int64_t>(v))
                    : static_cast<Word>(v);
    r[l] = x & toMask;
  });
}

/// memref.load of a rank-1 buffer: a = index, imm = buffer.
template <unsigned Bytes, bool Shared>
void loadOp(Exec &e, const Inst &in) {
  const RuntimeBuffer &b = e.buffers[in.imm];
  const Word *index = e.reg(in.a);
  Word *r = e.reg(in.r);
  forActive(e, [&](uint32_t l) {
    int64_t i = static_cast<int64_t>(index[l]);
    if (static_cast<uint64_t>(i) >= static_cast<uint64_t>(b.size))
      fail(e, in, l,
           "out-of-bounds load from " + bufferName(e, b) + ": index " +
               std::to_string(i) + ", size " + std::to_string(b.size));
    if constexpr (Shared)
      checkSharedRead(e, in, b, i, l);
    else if (b.globalShadow)
      checkGlobalAccess(e, in, b, i * b.stride, l, /*isStore=*/false);
    noteAccess(e, l, addressOf(b, i * b.stride), Bytes);
    r[l] = readElement<Bytes>(b.base + i * b.stride * Bytes);
  });
  profileAccesses(e, in, Shared ? Access::SharedLoad : Access::GlobalLoad,
                  in.imm);
}

/// memref.store of a rank-1 buffer: a = value, b = index, imm = buffer.
template <unsigned Bytes, bool Shared>
void storeOp(Exec &e, const Inst &in) {
  const RuntimeBuffer &b = e.buffers[in.imm];
  const Word *value = e.reg(in.a);
  const Word *index = e.reg(in.b);
  forActive(e, [&](uint32_t l) {
    int64_t i = static_cast<int64_t>(index[l]);
    if (static_cast<uint64_t>(i) >= static_cast<uint64_t>(b.size))
      fail(e, in, l,
           "out-of-bounds store to " + bufferName(e, b) + ": index " +
               std::to_string(i) + ", size " + std::to_string(b.size));
    if constexpr (Shared)
      checkSharedWrite(e, in, b, i, l);
    else if (b.globalShadow)
      checkGlobalAccess(e, in, b, i * b.stride, l, /*isStore=*/true);
    noteAccess(e, l, addressOf(b, i * b.stride), Bytes);
    writeElement<Bytes>(b.base + i * b.stride * Bytes, value[l]);
  });
  profileAccesses(e, in, Shared ? Access::SharedStore : Access::GlobalStore,
                  in.imm);
}

/// memref.load of any rank: ins = indices.
template <unsigned Bytes>
void loadOpRanked(Exec &e, const Inst &in) {
  const RuntimeBuffer &b = e.buffers[in.imm];
  Word *r = e.reg(in.r);
  forActive(e, [&](uint32_t l) {
    int64_t i = linearIndex(e, in, b, 0, l);
    if (b.shared)
      checkSharedRead(e, in, b, i, l);
    else if (b.globalShadow)
      checkGlobalAccess(e, in, b, i, l, /*isStore=*/false);
    noteAccess(e, l, addressOf(b, i), Bytes);
    r[l] = readElement<Bytes>(b.base + i * Bytes);
  });
  profileAccesses(e, in, b.shared ? Access::SharedLoad : Access::GlobalLoad,
                  in.imm);
}

/// memref.store of any rank: ins = value, indices.
template <unsigned Bytes>
void storeOpRanked(Exec &e, const Inst &in) {
  const RuntimeBuffer &b = e.buffers[in.imm];
  const Word *value = e.reg(in.ins[0].offset);
  forActive(e, [&](uint32_t l) {
    int64_t i = linearIndex(e, in, b, 1, l);
    if (b.shared)
      checkSharedWrite(e, in, b, i, l);
    else if (b.globalShadow)
      checkGlobalAccess(e, in, b, i, l, /*isStore=*/true);
    noteAccess(e, l, addressOf(b, i), Bytes);
    writeElement<Bytes>(b.base + i * Bytes, value[l]);
  });
  profileAccesses(e, in, b.shared ? Access::SharedStore : Access::GlobalStore,
                  in.imm);
}

/// Checks a vector access of `n` elements from element `i` of a rank-1
/// buffer on lane `l`: consecutive elements (a global descriptor's stride
/// is 1), in bounds, and its address a multiple of `alignment` bytes (global
/// buffers: the host address; workgroup buffers: the byte offset, their
/// llvm.align being checked when compiled).
inline void checkVectorAccess(Exec &e, const Inst &in, const RuntimeBuffer &b,
                              int64_t i, int64_t n, int64_t alignment,
                              uint32_t l) {
  const char *what =
      isa<vector::LoadOp>(in.op) ? "vector.load from " : "vector.store to ";
  if (b.stride != 1)
    fail(e, in, l,
         std::string(what) + bufferName(e, b) +
             ", whose descriptor has stride " + std::to_string(b.stride) +
             " (a vector access reads or writes consecutive elements)");
  if (i < 0 || i > b.size - n)
    fail(e, in, l,
         "out-of-bounds " + std::string(what) + bufferName(e, b) +
             ": elements " + std::to_string(i) + ".." +
             std::to_string(i + n - 1) + ", size " + std::to_string(b.size));
  int64_t byte = i * b.elementBytes;
  uint64_t address =
      b.shared ? static_cast<uint64_t>(byte)
               : static_cast<uint64_t>(reinterpret_cast<uintptr_t>(b.base)) +
                     static_cast<uint64_t>(byte);
  if (address % static_cast<uint64_t>(alignment)) {
    char hex[32];
    std::snprintf(hex, sizeof(hex), "0x%llx",
                  static_cast<unsigned long long>(address));
    fail(e, in, l,
         in.op->getName().getStringRef().str() + " at byte " +
             std::to_string(byte) + " of " + bufferName(e, b) +
             (b.shared ? "" : " (address " + std::string(hex) + ")") +
             " is not " + std::to_string(alignment) + "-byte aligned");
  }
}

/// vector.load from / vector.store to a rank-1 buffer: imm = buffer, imm2 =
/// elements | alignment in bytes << 8. Loads: a = index, r = the result;
/// stores: a = the value, b = index (one word per element).
template <unsigned Bytes, bool Shared, bool IsStore>
void vectorAccessOp(Exec &e, const Inst &in) {
  const RuntimeBuffer &b = e.buffers[in.imm];
  int64_t n = in.imm2 & 0xff, alignment = in.imm2 >> 8;
  const Word *index = e.reg(IsStore ? in.b : in.a);
  forActive(e, [&](uint32_t l) {
    int64_t i = static_cast<int64_t>(index[l]);
    checkVectorAccess(e, in, b, i, n, alignment, l);
    noteAccess(e, l, addressOf(b, i), static_cast<uint32_t>(n * Bytes));
    for (int64_t j = 0; j < n; ++j) {
      if constexpr (Shared) {
        if constexpr (IsStore)
          checkSharedWrite(e, in, b, i + j, l);
        else
          checkSharedRead(e, in, b, i + j, l);
      } else if (b.globalShadow) {
        checkGlobalAccess(e, in, b, i + j, l, IsStore);
      }
      char *at = b.base + (i + j) * Bytes;
      if constexpr (IsStore)
        writeElement<Bytes>(at, e.reg(in.a + j)[l]);
      else
        e.reg(in.r + j)[l] = readElement<Bytes>(at);
    }
  });
  profileAccesses(e, in,
                  Shared ? (IsStore ? Access::SharedStore : Access::SharedLoad)
                         : (IsStore ? Access::GlobalStore : Access::GlobalLoad),
                  in.imm);
}

//===--- Structured control flow -----------------------------------------===//

/// After a copy of slot `from` to slot `to` (a loop or branch passing a
/// value on): `to` holds a pending wgmma result where `from` did.
void notePendingCopy(Exec &e, uint32_t to, uint32_t from);

/// scf.for: a, b, c = lower bound, upper bound, step; ins = initial values;
/// outs = results; region[0] = body (args: iv, iteration values); imm: 1 for
/// an unsigned comparison. W: the width of the induction variable (64 for
/// index), whose values, bounds and step are held as integers of W bits.
template <unsigned W>
void forOp(Exec &e, const Inst &in) {
  using I = Int<W>;
  const Program &body = e.kernel->programs[in.region[0]];
  uint8_t *outer = e.mask;
  const Word *lb = e.reg(in.a), *ub = e.reg(in.b), *step = e.reg(in.c);
  Word *iv = e.reg(body.args[0].offset);
  bool isUnsigned = in.imm == 1;
  forActive(e, [&](uint32_t l) {
    if (I::sext(step[l]) <= 0)
      fail(e, in, l,
           "scf.for step " + std::to_string(I::sext(step[l])) +
               " is not positive");
    iv[l] = lb[l];
  });
  for (size_t j = 0; j < in.ins.size(); ++j) {
    copySlot(e, body.args[j + 1].offset, in.ins[j].offset, in.ins[j].words,
             outer);
    notePendingCopy(e, body.args[j + 1].offset, in.ins[j].offset);
  }
  uint8_t *inner = e.pushMask();
  for (;;) {
    bool any = false;
    for (uint32_t l = 0; l < e.threads; ++l) {
      bool on = outer[l] &&
                (isUnsigned ? iv[l] < ub[l] : I::sext(iv[l]) < I::sext(ub[l]));
      inner[l] = on;
      any |= on;
    }
    if (!any)
      break;
    e.mask = inner;
    run(e, body);
    if (body.yieldsAlias) {
      // Through a temporary: a yielded value may be another iteration value.
      size_t words = 0;
      for (const Slot &y : body.yields)
        words += y.words;
      e.scratch.resize(words * e.threads);
      size_t at = 0;
      for (const Slot &y : body.yields)
        for (uint32_t w = 0; w < y.words; ++w, ++at)
          std::memcpy(e.scratch.data() + at * e.threads, e.reg(y.offset + w),
                      e.threads * sizeof(Word));
      at = 0;
      for (size_t j = 0; j < body.yields.size(); ++j)
        for (uint32_t w = 0; w < body.yields[j].words; ++w, ++at) {
          Word *r = e.reg(body.args[j + 1].offset + w);
          const Word *x = e.scratch.data() + at * e.threads;
          for (uint32_t l = 0; l < e.threads; ++l)
            if (inner[l])
              r[l] = x[l];
        }
      if (e.kernel->wgmma)
        failLaunch(*e.kernel, "a loop that yields its iteration values in "
                              "another order, in a kernel with wgmma, is "
                              "not emulated");
    } else {
      for (size_t j = 0; j < body.yields.size(); ++j)
        if (body.yields[j].offset != body.args[j + 1].offset) {
          copySlot(e, body.args[j + 1].offset, body.yields[j].offset,
                   body.yields[j].words, inner);
          notePendingCopy(e, body.args[j + 1].offset, body.yields[j].offset);
        }
    }
    for (uint32_t l = 0; l < e.threads; ++l)
      if (inner[l])
        iv[l] = I::wrap(iv[l] + step[l]);
  }
  e.popMask();
  e.mask = outer;
  for (size_t j = 0; j < in.outs.size(); ++j) {
    copySlot(e, in.outs[j].offset, body.args[j + 1].offset, in.outs[j].words,
             outer);
    notePendingCopy(e, in.outs[j].offset, body.args[j + 1].offset);
  }
}

//===----------------------------------------------------------------------===//
// The other handlers
//===----------------------------------------------------------------------===//

// GpuEmulatorHandlers.cpp
void selectOp(Exec &e, const Inst &in);
void threadIdOp(Exec &e, const Inst &in);
void uniformIdOp(Exec &e, const Inst &in);
void laneIdOp(Exec &e, const Inst &in);
void clockOp(Exec &e, const Inst &in);
void globalTimerOp(Exec &e, const Inst &in);
void printfOp(Exec &e, const Inst &in);

/// The position of the conversion character of the printf conversion whose
/// '%' is at `percent` (not "%%"), past its flags, width, precision and
/// length; npos unless it is one `printfOp` formats (d i o u x X c f F e E
/// g G a A).
inline size_t printfConversionEnd(StringRef format, size_t percent) {
  size_t end = format.find_first_not_of("-+ #0123456789.hljztL", percent + 1);
  if (end == StringRef::npos ||
      !StringRef("diouxXcfFeEgGaA").contains(format[end]))
    return StringRef::npos;
  return end;
}

void alignedPointerOp(Exec &e, const Inst &in);
void prefetchOp(Exec &e, const Inst &in);
void ex2ApproxFtzOp(Exec &e, const Inst &in);
void dimOp(Exec &e, const Inst &in);
void asyncCopyOp(Exec &e, const Inst &in);
void asyncCommitOp(Exec &e, const Inst &in);
void asyncWaitOp(Exec &e, const Inst &in);
void fromElementsOp(Exec &e, const Inst &in);
void extractOp(Exec &e, const Inst &in);
void insertOp(Exec &e, const Inst &in);
void broadcastOp(Exec &e, const Inst &in);
void bitcastOp(Exec &e, const Inst &in);
void ifOp(Exec &e, const Inst &in);

// GpuEmulatorBulkCopies.cpp
void pointerCastOp(Exec &e, const Inst &in);
void mbarrierInitOp(Exec &e, const Inst &in);
void mbarrierInvalOp(Exec &e, const Inst &in);
void mbarrierArriveExpectTxOp(Exec &e, const Inst &in);
void mbarrierTryWaitParityOp(Exec &e, const Inst &in);
void bulkCopyOp(Exec &e, const Inst &in);

// GpuEmulatorWarpOps.cpp
void barrierOp(Exec &e, const Inst &in);
void shuffleOp(Exec &e, const Inst &in);
void mmaOp(Exec &e, const Inst &in);
void mmaTF32Op(Exec &e, const Inst &in);
void convertToTF32Op(Exec &e, const Inst &in);
void ldmatrixOp(Exec &e, const Inst &in);
void proxyFenceOp(Exec &e, const Inst &in);
void wgmmaFenceOp(Exec &e, const Inst &in);
void wgmmaCommitOp(Exec &e, const Inst &in);
void wgmmaWaitOp(Exec &e, const Inst &in);
void extractCheckedOp(Exec &e, const Inst &in);
void wgmmaOp(Exec &e, const Inst &in);

} // namespace detail
} // namespace linattn::gpu_emulator

#endif // LINATTN_LIB_RUNTIME_GPUEMULATORHANDLERS_H
