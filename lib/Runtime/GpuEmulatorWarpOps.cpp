//===- GpuEmulatorWarpOps.cpp - the GPU emulator's warp-wide ops ----------===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//
//
// The handlers of the ops that involve more than one lane
// (GpuEmulatorHandlers.h): gpu.barrier, gpu.shuffle, nvvm.mma.sync (16-bit
// and tf32), nvgpu.ldmatrix, and sm_90's warpgroup MMA (nvvm.wgmma.*:
// descriptors, the canonical layouts and swizzles, the fences, groups and
// waits).
//
//===----------------------------------------------------------------------===//

#include "GpuEmulatorHandlers.h"

#include "llvm/ADT/STLExtras.h"

#include <cmath>
#include <cstring>

namespace linattn::gpu_emulator {
/// The emulator's internals: hidden in liblinattn_gpu_emulator.so.
namespace LLVM_LIBRARY_VISIBILITY detail {

//===--- Synchronization and warps ---------------------------------------===//

void barrierOp(Exec &e, const Inst &in) {
  uint32_t active = 0;
  int64_t missing = -1;
  for (uint32_t l = 0; l < e.threads; ++l) {
    if (e.mask[l])
      ++active;
    else if (missing < 0)
      missing = l;
  }
  if (active != e.threads)
    fail(e, in, missing,
         "gpu.barrier reached by " + std::to_string(active) + " of the " +
             std::to_string(e.threads) +
             " threads of the block (a divergent barrier); this thread does "
             "not reach it");
  ++e.epoch;
}

/// gpu.shuffle: ins = value, offset, width; outs = value, valid; imm = mode.
void shuffleOp(Exec &e, const Inst &in) {
  const Word *value = e.reg(in.ins[0].offset);
  const Word *offset = e.reg(in.ins[1].offset);
  const Word *width = e.reg(in.ins[2].offset);
  Word *r = e.reg(in.outs[0].offset);
  Word *valid = e.reg(in.outs[1].offset);
  auto mode = static_cast<gpu::ShuffleMode>(in.imm);
  // Every source is read before any result is written: results have slots
  // of their own.
  forActive(e, [&](uint32_t l) {
    uint32_t warp = l / 32 * 32, lane = l % 32;
    int64_t w = static_cast<int32_t>(width[l]);
    int64_t o = static_cast<int32_t>(offset[l]);
    if (w <= 0 || w > 32)
      fail(e, in, l,
           "gpu.shuffle width " + std::to_string(w) + " is not in 1..32");
    // NVVM lowers the width to a member mask of lanes 0..width-1 of the
    // warp, all of which must execute the shuffle.
    if (lane >= w)
      fail(e, in, l,
           "gpu.shuffle executed by lane " + std::to_string(lane) +
               ", outside its width " + std::to_string(w));
    for (int64_t m = 0; m < w; ++m)
      if (warp + m >= e.threads || !e.mask[warp + m])
        fail(e, in, l,
             "gpu.shuffle with lane " + std::to_string(m) +
                 " of the warp inactive (every lane of the width must "
                 "execute it)");
    int64_t source = lane;
    bool ok = true;
    switch (mode) {
    case gpu::ShuffleMode::XOR:
      source = lane ^ o;
      ok = source < w;
      break;
    case gpu::ShuffleMode::DOWN:
      source = lane + o;
      ok = source < w;
      break;
    case gpu::ShuffleMode::UP:
      source = lane - o;
      ok = source >= 0;
      break;
    case gpu::ShuffleMode::IDX:
      source = o;
      ok = source >= 0 && source < w;
      break;
    }
    if (!ok)
      source = lane;
    r[l] = value[warp + source];
    valid[l] = ok;
  });
}

/// Whether threads [base, base + count) of the block (a warp or a
/// warpgroup, `unit` `index`) execute an op all of them must: none of them
/// (false), all (true), or some, which is an error naming the first one
/// inactive or, past the block's end, missing.
static bool allOrNoneActive(Exec &e, const Inst &in, uint32_t base,
                            uint32_t count, const char *unit, uint32_t index) {
  bool any = false;
  for (uint32_t i = 0; i < count && base + i < e.threads; ++i)
    any |= e.mask[base + i] != 0;
  if (!any)
    return false;
  for (uint32_t i = 0; i < count; ++i)
    if (base + i >= e.threads || !e.mask[base + i])
      fail(e, in, base + i < e.threads ? static_cast<int64_t>(base + i) : -1,
           in.op->getName().getStringRef().str() + " executed without all " +
               std::to_string(count) + " threads of " + unit + " " +
               std::to_string(index) + " (thread " + std::to_string(base + i) +
               (base + i < e.threads
                    ? " inactive)"
                    : " missing: the block has " + std::to_string(e.threads) +
                          " threads)"));
  return true;
}

/// Whether warp `wp` executes a warp-wide op (nvvm.mma.sync, nvgpu.ldmatrix).
static bool warpActive(Exec &e, const Inst &in, uint32_t wp) {
  return allOrNoneActive(e, in, wp * 32, 32, "warp", wp);
}

/// Bits of the window a tensor core sums a dot product's terms in: the
/// accumulator's 24 and one more.
static constexpr int kTensorCoreSumBits = 25;

// Vectors of four (GCC's and Clang's vector extension), for the four sums
// one lane of an MMA holds.
typedef double Double4 __attribute__((vector_size(32)));
typedef int64_t Int64x4 __attribute__((vector_size(32)));
typedef uint64_t UInt64x4 __attribute__((vector_size(32)));
typedef int32_t Int32x4 __attribute__((vector_size(16)));
typedef uint32_t UInt32x4 __attribute__((vector_size(16)));
typedef float Float4 __attribute__((vector_size(16)));

template <typename To, typename From>
static To bitCast(const From &from) {
  static_assert(sizeof(To) == sizeof(From), "sizes differ");
  To to;
  std::memcpy(&to, &from, sizeof(To));
  return to;
}

static Double4 magnitude(Double4 x) {
  return bitCast<Double4>(bitCast<UInt64x4>(x) & 0x7fffffffffffffffull);
}

/// acc + a·b as the tensor cores of sm_80 and sm_90 compute a dot product
/// of K ≤ 16 terms (the emulator's model of them): the products are exact
/// (16-bit and tf32 operands keep at most 11 significant bits), every term
/// is aligned to the largest and truncated to the window of
/// `kTensorCoreSumBits` below its leading bit, the truncated terms are
/// summed exactly, and the sum is rounded to f32 toward zero, once per
/// instruction. An accumulator carried through many instructions (a state
/// summed chunk by chunk) therefore drifts toward zero by up to about K + 1
/// units of its last place per instruction, where f32 fused multiply-adds,
/// rounding to nearest, would wander both ways. Sums with non-finite terms,
/// and tiny ones where the window would not fit in a double (none arise
/// from f32 data), are summed in double and rounded to nearest instead.
///
/// Computed for the four sums one lane of an MMA holds at once (the
/// emulator spends most of an MMA-heavy kernel's time here): rows a0, a1 of
/// A by columns b0, b1 of B, out = {acc[0] + a0·b0, acc[1] + a0·b1,
/// acc[2] + a1·b0, acc[3] + a1·b1}.
template <unsigned K>
static void tensorCoreDots(const float (&acc)[4], const double *a0,
                           const double *a1, const double *b0, const double *b1,
                           float (&out)[4]) {
  Double4 c = {acc[0], acc[1], acc[2], acc[3]};
  Double4 terms[K];
  Double4 largest = magnitude(c);
  // 0·x is 0 for every finite x and NaN for infinities and NaNs.
  Double4 poison = c * 0.0;
  for (unsigned k = 0; k < K; ++k) {
    Double4 a = {a0[k], a0[k], a1[k], a1[k]};
    Double4 b = {b0[k], b1[k], b0[k], b1[k]};
    terms[k] = a * b;
    Double4 m = magnitude(terms[k]);
    largest = m > largest ? m : largest;
    poison += terms[k] * 0.0;
  }
  Int64x4 zero = largest == 0.0;
  Int64x4 ieee = (poison != 0.0) | ((largest < 0x1p-900) & ~zero);
  bool anyIeee = ieee[0] | ieee[1] | ieee[2] | ieee[3];
  Double4 ieeeSum = {0.0, 0.0, 0.0, 0.0};
  if (anyIeee) {
    // Summed in double here; taken out of the window's sums (as zeros,
    // whose conversions are defined).
    ieeeSum += c;
    for (unsigned k = 0; k < K; ++k)
      ieeeSum += terms[k];
    Double4 none = {0.0, 0.0, 0.0, 0.0};
    c = ieee ? none : c;
    for (unsigned k = 0; k < K; ++k)
      terms[k] = ieee ? none : terms[k];
    largest = ieee ? none : largest;
    zero |= ieee;
  }
  // With largest = m·2^exponent, m in [0.5, 1), half = 2^(exponent - 1):
  // largest's exponent bits alone. Terms scaled by 2^bits / 2^exponent and
  // truncated are integers below 2^bits; K + 1 of them sum exactly in 32
  // bits.
  // (For a sum of zeros any power of two: its terms scale to 0, and the
  // sum is +0.)
  UInt64x4 one = bitCast<UInt64x4>(Double4{1.0, 1.0, 1.0, 1.0});
  Double4 half =
      bitCast<Double4>((bitCast<UInt64x4>(largest) & 0x7ff0000000000000ull) |
                       (bitCast<UInt64x4>(zero) & one));
  constexpr double kWindow = double(1ull << (kTensorCoreSumBits - 1));
  static_assert(kTensorCoreSumBits <= 26, "17 terms must sum in 32 bits");
  Double4 scale = kWindow / half;
  Int32x4 units = __builtin_convertvector(c * scale, Int32x4);
  for (unsigned k = 0; k < K; ++k)
    units += __builtin_convertvector(terms[k] * scale, Int32x4);
  Double4 sum = __builtin_convertvector(units, Double4) * (half / kWindow);
  Float4 rounded = __builtin_convertvector(sum, Float4);
  // One step toward zero where rounding to nearest went away from it (the
  // comparison's true is -1): the magnitude's bits less one (from +-inf,
  // the largest finite magnitude). Without a branch, which half of the
  // sums would mispredict.
  Int64x4 away =
      magnitude(__builtin_convertvector(rounded, Double4)) > magnitude(sum);
  UInt32x4 bits =
      bitCast<UInt32x4>(rounded) + __builtin_convertvector(away, UInt32x4);
  std::memcpy(out, &bits, sizeof(out));
  if (anyIeee) {
    Float4 nearest = __builtin_convertvector(ieeeSum, Float4);
    for (unsigned i = 0; i < 4; ++i)
      if (ieee[i])
        out[i] = nearest[i];
  }
}

/// The results of warp `base`'s nvvm.mma.sync m16n8kK (ins[6..9]: C,
/// outs[0]: D), D = A·B + C from A by rows and B by columns (Bt[n][k]).
/// Lane 4g + t holds elements (g, 2t), (g, 2t + 1), (g + 8, 2t) and
/// (g + 8, 2t + 1) of C and D.
template <unsigned K>
static void mmaResults(Exec &e, const Inst &in, uint32_t base,
                       const double (&A)[16][K], const double (&Bt)[8][K]) {
  for (uint32_t i = 0; i < 32; ++i) {
    uint32_t l = base + i, g = i / 4, t = i % 4;
    float c[4], d[4];
    for (unsigned j = 0; j < 4; ++j)
      c[j] = bitsToF32(e.reg(in.ins[6 + j].offset)[l]);
    tensorCoreDots<K>(c, A[g], A[g + 8], Bt[2 * t], Bt[2 * t + 1], d);
    for (unsigned j = 0; j < 4; ++j)
      e.reg(in.outs[0].offset + j)[l] = f32ToBits(d[j]);
  }
}

/// Calls `fn(base)` for every warp (threads base..base + 31) that executes
/// the warp-wide MMA `in`, counting it for the profile.
template <typename F>
static void forEachMmaWarp(Exec &e, const Inst &in, F &&fn) {
  for (uint32_t wp = 0, warps = (e.threads + 31) / 32; wp < warps; ++wp) {
    if (!warpActive(e, in, wp))
      continue;
    profileMma(e, in);
    fn(wp * 32);
  }
}

/// nvvm.mma.sync m16n8k16 with 16-bit A and B (row and col layouts) and f32
/// accumulators. ins: A0..A3, B0..B1, C0..C3; outs: the 4-word struct.
/// imm: 1 for bf16; imm2: 1 when the A/B registers are i32 (packed).
void mmaOp(Exec &e, const Inst &in) {
  bool bf16 = in.imm == 1;
  bool packed = in.imm2 == 1;
  auto element = [&](const Slot &slot, uint32_t l, unsigned half) -> float {
    Word bits;
    if (packed)
      bits = (e.reg(slot.offset)[l] >> (16 * half)) & 0xffff;
    else
      bits = e.reg(slot.offset + half)[l];
    return bf16 ? bf16ToFloat(static_cast<uint16_t>(bits))
                : halfToFloat(static_cast<uint16_t>(bits));
  };
  forEachMmaWarp(e, in, [&](uint32_t base) {
    // A by rows, B by columns (Bt[n][k]).
    // In double, as tensorCoreDots takes them (exactly: 16-bit values).
    double A[16][16], Bt[8][16];
    for (uint32_t i = 0; i < 32; ++i) {
      uint32_t l = base + i, g = i / 4, t = i % 4;
      // A: a0a1 (g, 2t..), a2a3 (g+8, 2t..), a4a5 (g, 2t+8..),
      // a6a7 (g+8, 2t+8..).
      for (unsigned reg = 0; reg < 4; ++reg) {
        unsigned row = g + (reg % 2) * 8, col = 2 * t + (reg / 2) * 8;
        A[row][col] = element(in.ins[reg], l, 0);
        A[row][col + 1] = element(in.ins[reg], l, 1);
      }
      // B: b0b1 (k = 2t.., n = g), b2b3 (k = 2t+8..).
      for (unsigned reg = 0; reg < 2; ++reg) {
        unsigned k = 2 * t + reg * 8;
        Bt[g][k] = element(in.ins[4 + reg], l, 0);
        Bt[g][k + 1] = element(in.ins[4 + reg], l, 1);
      }
    }
    mmaResults(e, in, base, A, Bt);
  });
}

/// tf32 bits of an f32 word: the low 13 mantissa bits dropped (what the
/// tensor cores read of a tf32 operand).
static float tf32Value(Word bits) {
  return bitsToF32(static_cast<uint32_t>(bits) & 0xffffe000u);
}

/// nvvm.mma.sync m16n8k8 with tf32 A and B (i32 registers holding f32 bits,
/// row and col layouts) and f32 accumulators. ins: A0..A3, B0..B1, C0..C3;
/// outs: the 4-word struct.
void mmaTF32Op(Exec &e, const Inst &in) {
  forEachMmaWarp(e, in, [&](uint32_t base) {
    // A by rows, B by columns (Bt[n][k]).
    // In double, as tensorCoreDots takes them (exactly: tf32 values).
    double A[16][8], Bt[8][8];
    for (uint32_t i = 0; i < 32; ++i) {
      uint32_t l = base + i, g = i / 4, t = i % 4;
      // A: a0 (g, t), a1 (g+8, t), a2 (g, t+4), a3 (g+8, t+4).
      for (unsigned reg = 0; reg < 4; ++reg)
        A[g + (reg % 2) * 8][t + (reg / 2) * 4] =
            tf32Value(e.reg(in.ins[reg].offset)[l]);
      // B: b0 (k = t, n = g), b1 (k = t+4).
      for (unsigned reg = 0; reg < 2; ++reg)
        Bt[g][t + reg * 4] = tf32Value(e.reg(in.ins[4 + reg].offset)[l]);
    }
    mmaResults(e, in, base, A, Bt);
  });
}

/// nvvm.convert.float.to.tf32 with rounding to nearest, ties away from zero
/// (cvt.rna.tf32.f32): the f32 bits rounded at mantissa bit 13, as an i32.
void convertToTF32Op(Exec &e, const Inst &in) {
  Word *r = e.reg(in.r);
  const Word *a = e.reg(in.a);
  forActive(e, [&](uint32_t l) {
    uint32_t bits = static_cast<uint32_t>(a[l]);
    bool finite = (bits & 0x7f800000u) != 0x7f800000u;
    if (finite)
      bits = (bits + 0x1000u) & 0xffffe000u;
    r[l] = bits;
  });
}

/// nvgpu.ldmatrix from a rank-1 workgroup buffer: a = the element index of
/// this lane's row, imm = buffer, imm2 = matrices | transpose << 8; r = the
/// result, (matrices x 32 bits) words: two 16-bit elements per matrix, or
/// one 32-bit element. Lanes 8i..8i+7 address the rows of matrix i (only
/// lanes 0..8·matrices-1 are read); lane 4g+t receives row g, b16 columns
/// 2t and 2t+1 of each matrix, or with transpose its column g, rows 2t and
/// 2t+1.
void ldmatrixOp(Exec &e, const Inst &in) {
  const RuntimeBuffer &b = e.buffers[in.imm];
  unsigned matrices = in.imm2 & 0xff;
  bool transpose = (in.imm2 >> 8) & 1;
  unsigned eb = b.elementBytes;
  unsigned perRow = 16 / eb;
  const Word *index = e.reg(in.a);
  uint32_t warps = (e.threads + 31) / 32;
  for (uint32_t wp = 0; wp < warps; ++wp) {
    uint32_t base = wp * 32;
    if (!warpActive(e, in, wp))
      continue;
    uint16_t m[4][8][8];
    for (unsigned i = 0; i < matrices; ++i)
      for (unsigned r = 0; r < 8; ++r) {
        uint32_t l = base + 8 * i + r;
        int64_t at = static_cast<int64_t>(index[l]);
        if (at < 0 || at + perRow > b.size)
          fail(e, in, l,
               "out-of-bounds ldmatrix row in " + bufferName(e, b) +
                   ": elements " + std::to_string(at) + ".." +
                   std::to_string(at + perRow - 1) + ", size " +
                   std::to_string(b.size));
        if ((at * eb) % 16)
          fail(e, in, l,
               "ldmatrix row at byte " + std::to_string(at * eb) + " of " +
                   bufferName(e, b) + " is not 16-byte aligned");
        for (unsigned c = 0; c < perRow; ++c)
          checkSharedRead(e, in, b, at + c, l);
        noteAccess(e, l, addressOf(b, at), 16);
        std::memcpy(m[i][r], b.base + at * eb, 16);
      }
    for (uint32_t lane = 0; lane < 32; ++lane) {
      uint32_t l = base + lane, g = lane / 4, t = lane % 4;
      for (unsigned i = 0; i < matrices; ++i) {
        uint16_t lo = transpose ? m[i][2 * t][g] : m[i][g][2 * t];
        uint16_t hi = transpose ? m[i][2 * t + 1][g] : m[i][g][2 * t + 1];
        if (eb == 2) {
          e.reg(in.r + 2 * i)[l] = lo;
          e.reg(in.r + 2 * i + 1)[l] = hi;
        } else {
          e.reg(in.r + i)[l] = static_cast<Word>(lo) | (Word(hi) << 16);
        }
      }
    }
  }
  profileAccesses(e, in, Access::SharedLoad, static_cast<uint32_t>(in.imm));
}

//===--- Warpgroup MMA (sm_90) -------------------------------------------===//

/// nvvm.fence.proxy of the async proxy: this thread's earlier workgroup
/// writes become visible to wgmma.
void proxyFenceOp(Exec &e, const Inst &) {
  forActive(e, [&](uint32_t l) { ++e.proxyFences[l]; });
}

/// Whether warpgroup `g` (threads 128g..128g+127) executes a
/// warpgroup-aligned op.
static bool warpgroupActive(Exec &e, const Inst &in, uint32_t g) {
  return allOrNoneActive(e, in, g * 128, 128, "warpgroup", g);
}

/// nvvm.wgmma.fence.aligned: the warpgroup's registers and shared memory are
/// ready for its next wgmma.mma_async.
void wgmmaFenceOp(Exec &e, const Inst &in) {
  for (uint32_t g = 0; g < e.warpgroups.size(); ++g)
    if (warpgroupActive(e, in, g))
      e.warpgroups[g].fenced = true;
}

/// nvvm.wgmma.commit.group.sync.aligned: the warpgroup's uncommitted
/// wgmma.mma_async become its next group.
void wgmmaCommitOp(Exec &e, const Inst &in) {
  for (uint32_t g = 0; g < e.warpgroups.size(); ++g) {
    if (!warpgroupActive(e, in, g))
      continue;
    Warpgroup &wg = e.warpgroups[g];
    for (PendingWgmma &p : wg.pending)
      if (p.group == kUncommitted)
        p.group = wg.committed;
    ++wg.committed;
  }
}

/// nvvm.wgmma.wait.group.sync.aligned (imm = the groups left in flight):
/// completes the warpgroup's committed groups but the imm most recent, whose
/// results may then be read and whose shared operands written.
void wgmmaWaitOp(Exec &e, const Inst &in) {
  uint64_t keep = static_cast<uint64_t>(in.imm);
  for (uint32_t g = 0; g < e.warpgroups.size(); ++g) {
    if (!warpgroupActive(e, in, g))
      continue;
    Warpgroup &wg = e.warpgroups[g];
    auto done = [&](const PendingWgmma &p) {
      return p.group != kUncommitted && p.group + keep < wg.committed;
    };
    for (const PendingWgmma &p : wg.pending)
      if (done(p))
        for (auto [buffer, element] : p.reads)
          --e.buffers[buffer].shadow[element].wgmmaReads;
    llvm::erase_if(wg.pending, done);
    wg.fenced = false;
  }
}

/// Fails if lane `l` reads slot `slot` while a wgmma.mma_async that writes
/// it is in flight: its registers hold the result only after a
/// wgmma.wait.group.
static void checkWgmmaResult(Exec &e, const Inst &in, uint32_t slot,
                             uint32_t l) {
  for (const PendingWgmma &p : e.warpgroups[l / 128].pending)
    if (llvm::is_contained(p.slots, slot))
      fail(e, in, l,
           "read of the result of " + describe(p.inst->op) +
               " before a wgmma.wait.group completed it");
}

/// After a copy of slot `from` to slot `to` (a loop or branch passing a
/// value on): `to` holds a pending result where `from` did.
void notePendingCopy(Exec &e, uint32_t to, uint32_t from) {
  if (!e.kernel->wgmma || to == from)
    return;
  for (Warpgroup &wg : e.warpgroups)
    for (PendingWgmma &p : wg.pending) {
      llvm::erase(p.slots, to);
      if (llvm::is_contained(p.slots, from))
        p.slots.push_back(to);
    }
}

/// llvm.extractvalue in a kernel with wgmma: extractOp, after the check
/// that the struct is no result in flight.
void extractCheckedOp(Exec &e, const Inst &in) {
  forActive(e, [&](uint32_t l) { checkWgmmaResult(e, in, in.a, l); });
  extractOp(e, in);
}

/// A wgmma shared-memory matrix descriptor: start address, leading and
/// stride dimension byte offsets, and the swizzle (the bytes of a swizzled
/// row: 128, 64 or 32; 0 for none).
struct WgmmaDescriptor {
  uint64_t start = 0, leading = 0, stride = 0;
  unsigned swizzle = 0;
};

/// Where element (r, k) of a wgmma operand (r: its row of A or column of B;
/// k: the reduction index) lies in shared memory, in the canonical layouts
/// of the PTX ISA. K-major (A `row`, B `col`): core matrices of 8 rows of
/// 16 bytes of k; without swizzle the rows are 16 bytes apart, the core
/// matrices `leading` apart in k and `stride` apart in r; swizzled, rows are
/// the swizzle's width apart and groups of 8 rows `stride` apart. MN-major
/// (16-bit types only): 16 bytes of r hold 8 elements; without swizzle the
/// 8 k rows of a core matrix are 16 bytes apart, core matrices `stride`
/// apart in r and `leading` apart in k; swizzled, a row holds the
/// swizzle's width of r, 8 k rows are that width apart, the next width of
/// r `leading` on and the next 8 k `stride` on. The swizzle XORs address
/// bits 4.. with bits 7.. (the 16-byte chunk with the row within the
/// pattern), on the absolute address.
static uint64_t wgmmaAddress(const WgmmaDescriptor &d, bool kMajor,
                             unsigned bytes, uint64_t r, uint64_t k) {
  uint64_t at;
  if (kMajor) {
    uint64_t kb = k * bytes;
    at = d.swizzle ? d.start + r / 8 * d.stride + r % 8 * d.swizzle + kb
                   : d.start + r / 8 * d.stride + r % 8 * 16 +
                         kb / 16 * d.leading + kb % 16;
  } else if (!d.swizzle) {
    at = d.start + r / 8 * d.stride + r % 8 * bytes + k % 8 * 16 +
         k / 8 * d.leading;
  } else {
    uint64_t perRow = d.swizzle / bytes;
    at = d.start + r / perRow * d.leading + r % perRow * bytes +
         k % 8 * d.swizzle + k / 8 * d.stride;
  }
  if (d.swizzle)
    at ^= ((at >> 7) & (d.swizzle / 16 - 1)) << 4;
  return at;
}

/// nvvm.wgmma.mma_async, D = A·B (+ D): ins = D in, descriptor A,
/// descriptor B; outs = D out (N/2 f32 words); imm = N | type << 16 |
/// A MN-major << 20 | B MN-major << 21 | scale-d << 22 | negate A << 23 |
/// negate B << 24 | A in registers << 25 (type 0: f16, 1: bf16, 2: tf32).
/// With A in registers (`wgmmaRegisterAAsm`, 16-bit types): ins = the four
/// A registers, descriptor B, scale-d (a register: nonzero accumulates)
/// and the N/2 words of D in. Each warpgroup whose threads all execute it
/// computes its 64 x N product now, from the registers of its threads and
/// the operands its (uniform) descriptors address, and marks the result
/// and the shared elements read pending until a wait completes the group.
void wgmmaOp(Exec &e, const Inst &in) {
  uint32_t n = in.imm & 0xffff;
  unsigned type = (in.imm >> 16) & 0xf;
  bool mnA = (in.imm >> 20) & 1, mnB = (in.imm >> 21) & 1;
  bool registerA = (in.imm >> 25) & 1;
  bool negateA = (in.imm >> 23) & 1, negateB = (in.imm >> 24) & 1;
  unsigned bytes = type == 2 ? 4 : 2;
  uint32_t kSteps = type == 2 ? 8 : 16;
  const Word *descA = registerA ? nullptr : e.reg(in.ins[1].offset);
  const Word *descB = e.reg(in.ins[registerA ? 4 : 2].offset);
  const Word *scale = registerA ? e.reg(in.ins[5].offset) : nullptr;
  // Word i of D in, of thread l.
  auto accumulator = [&](uint32_t i, uint32_t l) {
    return registerA ? e.reg(in.ins[6 + i].offset)[l]
                     : e.reg(in.ins[0].offset + i)[l];
  };
  for (uint32_t g = 0; g < e.warpgroups.size(); ++g) {
    if (!warpgroupActive(e, in, g))
      continue;
    uint32_t base = g * 128;
    Warpgroup &wg = e.warpgroups[g];
    if (!wg.fenced)
      fail(e, in, base,
           "wgmma.mma_async without a wgmma.fence since the warpgroup's last "
           "wgmma.wait.group");
    for (uint32_t i = 1; i < 128; ++i) {
      if ((descA && descA[base + i] != descA[base]) ||
          descB[base + i] != descB[base])
        fail(e, in, base + i,
             "wgmma.mma_async descriptors differ across warpgroup " +
                 std::to_string(g) + " (thread " + std::to_string(base) +
                 " and this one)");
      if (scale && (scale[base + i] != 0) != (scale[base] != 0))
        fail(e, in, base + i,
             "wgmma.mma_async scale-d differs across warpgroup " +
                 std::to_string(g) + " (thread " + std::to_string(base) +
                 " and this one)");
    }
    bool scaleD = registerA ? scale[base] != 0 : (in.imm >> 22) & 1;
    profileMma(e, in);
    PendingWgmma pending;
    pending.inst = &in;
    pending.slots.push_back(in.outs[0].offset);
    // Reads one operand (rows x kSteps) into `values`.
    auto readOperand = [&](Word raw, bool mnMajor, uint32_t rows,
                           std::vector<double> &values) {
      WgmmaDescriptor d;
      d.start = (raw & 0x3fff) << 4;
      d.leading = ((raw >> 16) & 0x3fff) << 4;
      d.stride = ((raw >> 32) & 0x3fff) << 4;
      unsigned mode = raw >> 62;
      d.swizzle = mode == 0 ? 0 : 256 >> mode;
      if ((raw >> 49) & 7)
        fail(e, in, base,
             "wgmma descriptor with a matrix base offset (bits 49-51) other "
             "than 0");
      values.assign(size_t(rows) * kSteps, 0.0);
      // The buffer of the last element: an operand's elements are in one
      // buffer but for misuse, so it is looked up again only on leaving it.
      const RuntimeBuffer *b = nullptr;
      uint32_t buffer = 0;
      auto holds = [&](const RuntimeBuffer &c, uint64_t at) {
        return c.shared && at >= static_cast<uint64_t>(c.sharedAddress) &&
               at < static_cast<uint64_t>(c.sharedAddress +
                                          c.size * c.elementBytes);
      };
      for (uint32_t r = 0; r < rows; ++r)
        for (uint32_t k = 0; k < kSteps; ++k) {
          uint64_t at = wgmmaAddress(d, !mnMajor, bytes, r, k);
          if (!b || !holds(*b, at)) {
            b = nullptr;
            for (uint32_t j = 0; j < e.buffers.size() && !b; ++j)
              if (holds(e.buffers[j], at)) {
                b = &e.buffers[j];
                buffer = j;
              }
          }
          if (!b)
            fail(e, in, base,
                 "wgmma operand element (" + std::to_string(r) + ", " +
                     std::to_string(k) + ") at shared address " +
                     std::to_string(at) + " is in no workgroup buffer");
          if (b->elementBytes != bytes)
            fail(e, in, base,
                 "wgmma operand of " + std::to_string(bytes) +
                     "-byte elements in " + bufferName(e, *b) + " of " +
                     std::to_string(b->elementBytes) + "-byte elements");
          uint64_t offset = at - b->sharedAddress;
          if (offset % bytes)
            fail(e, in, base,
                 "wgmma operand element at shared address " +
                     std::to_string(at) + " is not " + std::to_string(bytes) +
                     "-byte aligned");
          int64_t element = static_cast<int64_t>(offset / bytes);
          Shadow &s = b->shadow[element];
          auto where = [&] {
            return "element " + std::to_string(element) + " of " +
                   bufferName(e, *b) + ", operand element (" +
                   std::to_string(r) + ", " + std::to_string(k) + ")";
          };
          checkNoAsyncWrite(e, in, *b, element, base, s);
          if (s.writeEpoch < e.blockEpoch)
            fail(e, in, base,
                 "wgmma reads uninitialized workgroup memory: " + where() +
                     " was not written by any thread of this block");
          if (s.writeEpoch == e.epoch)
            fail(e, in, base,
                 "wgmma reads " + where() + ", which thread " +
                     std::to_string(s.writer) +
                     " wrote with no gpu.barrier in between (at " +
                     describe(s.writeInst->op) + ")");
          // A bulk copy writes through the async proxy itself.
          if (s.writer >= 0 && e.proxyFences[s.writer] == s.writerFences)
            fail(e, in, base,
                 "wgmma reads " + where() + ", which thread " +
                     std::to_string(s.writer) +
                     " wrote without an async-proxy fence (nvvm.fence.proxy "
                     "async.shared) after it (at " +
                     describe(s.writeInst->op) + ")");
          ++s.wgmmaReads;
          pending.reads.push_back({buffer, element});
          const char *p = b->base + element * bytes;
          float v;
          if (type == 2) {
            uint32_t bits;
            std::memcpy(&bits, p, 4);
            v = tf32Value(bits);
          } else {
            uint16_t bits;
            std::memcpy(&bits, p, 2);
            v = type == 1 ? bf16ToFloat(bits) : halfToFloat(bits);
          }
          values[size_t(r) * kSteps + k] = v;
        }
    };
    std::vector<double> A, B;
    if (registerA) {
      // Thread 32w + 4g + q holds in register i the elements of row
      // 16w + g + 8·(i % 2), k = 2q + 8·(i / 2) (low half) and k + 1.
      A.assign(64 * kSteps, 0.0);
      for (uint32_t t = 0; t < 128; ++t)
        for (uint32_t i = 0; i < 4; ++i) {
          Word word = e.reg(in.ins[i].offset)[base + t];
          uint32_t row = 16 * (t / 32) + t % 32 / 4 + 8 * (i % 2);
          uint32_t k = 2 * (t % 4) + 8 * (i / 2);
          for (uint32_t h = 0; h < 2; ++h) {
            auto bits = static_cast<uint16_t>(word >> (16 * h));
            A[row * kSteps + k + h] =
                type == 1 ? bf16ToFloat(bits) : halfToFloat(bits);
          }
        }
    } else {
      readOperand(descA[base], mnA, 64, A);
    }
    readOperand(descB[base], mnB, n, B);
    // Negations are exact: applied to the operands once.
    if (negateA)
      for (double &x : A)
        x = -x;
    if (negateB)
      for (double &x : B)
        x = -x;
    // Thread 32w + 4g + q of the warpgroup holds, in register i, row
    // 16w + g + 8·(i / 2 % 2), column 8·(i / 4) + 2q + i % 2 of D.
    // Registers 4j .. 4j + 3: rows r, r + 8 by columns c, c + 1.
    auto dots = kSteps == 8 ? tensorCoreDots<8> : tensorCoreDots<16>;
    for (uint32_t t = 0; t < 128; ++t) {
      uint32_t l = base + t, lane = t % 32, w = t / 32;
      for (uint32_t i = 0; i < n / 2; i += 4) {
        uint32_t row = 16 * w + lane / 4;
        uint32_t col = 8 * (i / 4) + 2 * (lane % 4);
        float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f}, d[4];
        if (scaleD)
          for (unsigned j = 0; j < 4; ++j)
            acc[j] = bitsToF32(accumulator(i + j, l));
        dots(acc, &A[size_t(row) * kSteps], &A[size_t(row + 8) * kSteps],
             &B[size_t(col) * kSteps], &B[size_t(col + 1) * kSteps], d);
        for (unsigned j = 0; j < 4; ++j)
          e.reg(in.outs[0].offset + i + j)[l] = f32ToBits(d[j]);
      }
    }
    wg.pending.push_back(std::move(pending));
  }
}

} // namespace detail
} // namespace linattn::gpu_emulator
