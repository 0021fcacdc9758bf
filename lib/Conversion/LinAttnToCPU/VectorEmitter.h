//===- VectorEmitter.h - vector code for the CPU kernels --------*- C++ -*-===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//
//
// What the CPU kernels of convert-linattn-to-cpu-kernels share: the register
// tile they are emitted for, a builder of W-wide vector code on buffers
// (loops over vectors with a masked tail, loads and stores that convert
// 16-bit data, exp as a polynomial, parallel loops), and the buffers a kernel
// reads its tensors from and writes its results to. Internal to the
// conversion.
//
//===----------------------------------------------------------------------===//

#ifndef LINATTN_LIB_CONVERSION_LINATTNTOCPU_VECTOREMITTER_H
#define LINATTN_LIB_CONVERSION_LINATTNTOCPU_VECTOREMITTER_H

#include "linattn/IR/LinAttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/PatternMatch.h"

#include <algorithm>
#include <utility>

namespace mlir::linattn::cpukernels {

/// Vector width, register blocking and how many threads the kernels try to
/// keep busy when there are fewer batch elements than threads.
struct KernelShape {
  int64_t width;
  int64_t block;
  int64_t columns;
  int64_t threads;
};

/// The lanes of a vector of `compute` elements (f32 or f64) in the registers
/// that hold `f32Width` f32 lanes: half as many for f64.
inline int64_t lanesOf(Type compute, int64_t f32Width) {
  return compute.isF64() ? std::max<int64_t>(f32Width / 2, 1) : f32Width;
}

/// Builds W-wide vector code in the compute type (f32, or f64) at the
/// builder's insertion point.
class VectorEmitter {
public:
  VectorEmitter(OpBuilder &builder, Location loc, Type compute, int64_t width)
      : b(builder), loc(loc), compute(compute), width(width),
        vecType(VectorType::get({width}, compute)) {}

protected:
  using VectorBody = function_ref<SmallVector<Value>(Value offset, Value mask,
                                                     ValueRange iterArgs)>;

  Value index(int64_t value) {
    return arith::ConstantIndexOp::create(b, loc, value);
  }
  Value dim(Value memref, int64_t d);
  /// A vector of `value` in the compute type.
  Value splat(double value);
  Value zeroVector() { return splat(0.0); }

  /// Calls `body` for every W-wide slice [offset, offset + W) of
  /// [start, n) (start 0 when null): an scf.for over the full slices, then
  /// one masked slice for the rest. The values `body` returns are carried
  /// from slice to slice.
  SmallVector<Value> forEachVector(Value n, ValueRange inits, VectorBody body,
                                   Value start = Value());
  /// An scf.for over [lower, upper) carrying `inits`; `body` returns the
  /// values it yields.
  SmallVector<Value>
  emitFor(Value lower, Value upper, Value step, ValueRange inits,
          function_ref<SmallVector<Value>(Value iv, ValueRange iterArgs)> body);
  /// An scf.parallel over `upper` (all from 0, step 1), or the body inline
  /// when there is no dimension. With `flops` (about the floating-point
  /// operations of the whole loop), a loop of fewer than `kSerialFlops`
  /// runs as nested scf.for on the calling thread instead (the body is
  /// emitted twice).
  void emitParallel(ArrayRef<Value> upper,
                    function_ref<void(ValueRange ivs)> body,
                    Value flops = Value());
  /// Below this many floating-point operations a kernel's loop does not
  /// start OpenMP threads: the fork and join cost microseconds on an idle
  /// machine and a scheduler time slice (milliseconds) when the cores are
  /// busy, while a single core does this work in about 30 µs.
  static constexpr int64_t kSerialFlops = 1 << 19;

  /// Loads W elements at `indices` (the last one the offset) in the compute
  /// type, zero in the lanes `mask` turns off.
  Value loadVector(Value memref, ValueRange indices, Value mask);
  /// Loads one element in the compute type.
  Value loadScalar(Value memref, ValueRange indices);
  /// Stores the compute-type vector `value` in the element type of `memref`;
  /// with `streaming`, past the caches (the vector must be aligned to its
  /// size).
  void storeVector(Value value, Value memref, ValueRange indices, Value mask,
                   bool streaming = false);

  /// exp(x) as a polynomial (no libm call per lane). With `nonPositive`, for
  /// x ≤ 0 (larger x are clamped to 0); else over the whole range, +inf
  /// where 2^round(x / ln 2) is past the largest exponent.
  Value exp(Value x, bool nonPositive);
  /// φ(x) of an elementwise map (elu + 1, relu, identity) on a vector of
  /// the compute type.
  Value elementwiseMap(FeatureMapKind kind, Value x);

  OpBuilder &b;
  Location loc;
  /// The type the kernel computes in: f32, or f64 for f64 data or state.
  Type compute;
  int64_t width;
  VectorType vecType;
};

/// Reads `tensor` as a buffer with an identity layout (bufferization copies
/// when the tensor's buffer has another layout).
Value toBuffer(OpBuilder &b, Location loc, Value tensor);
/// The buffer of a tensor whose rows (its last dimension) a kernel reads by
/// their indices: for the result of a linalg.transpose that keeps the last
/// dimension last (as raising token-major attention creates), a
/// memref.transpose view of its source's buffer instead of a copy; the
/// view's rows are contiguous, its leading dimensions strided.
Value toRowsBuffer(OpBuilder &b, Location loc, Value tensor);

/// The buffer a kernel writes `result` of `op` to: the memref its one use
/// stores it into when the kernel may write that in place (a `restrict
/// writable` destination of its type with an identity layout, available
/// before `op`: no fresh buffer, no copy afterwards), else a fresh 64-byte
/// aligned one whose open sizes come from `sources` ((tensor, dim) pairs, one
/// per dimension).
Value outputBuffer(OpBuilder &b, Location loc, Value result, Operation *op,
                   ArrayRef<std::pair<Value, int64_t>> sources);
/// The same with the result's open sizes given, in order.
Value outputBuffer(OpBuilder &b, Location loc, Value result, Operation *op,
                   ValueRange dynamicSizes);
/// outputBuffer for a result whose rows (its last dimension) the kernel
/// writes by their indices: when the result's only use is a linalg.transpose
/// that keeps the last dimension last, a memref.transpose view, in the
/// result's layout, of the buffer of the transpose's result, so that the
/// kernel writes the transposed tensor directly (replaceWithBuffers then
/// replaces the transpose).
Value outputRowsBuffer(OpBuilder &b, Location loc, Value result, Operation *op,
                       ArrayRef<std::pair<Value, int64_t>> sources);

/// Replaces the results of `op` by `buffers` (one per result) as tensors,
/// dropping the stores of results the kernel wrote in place; a result
/// written through outputRowsBuffer's view replaces its transpose instead.
void replaceWithBuffers(RewriterBase &rewriter, Operation *op,
                        ArrayRef<Value> buffers);

/// Whether the CPU kernels compute the feature map `op`: favor and poly2,
/// and elu and relu where no kernel that reads the features fused them.
bool hasFeatureMapKernel(FeatureMapOp op);

/// Replaces the feature map `op` by its kernel (`hasFeatureMapKernel`).
void rewriteFeatureMap(RewriterBase &rewriter, FeatureMapOp op,
                       KernelShape shape);

} // namespace mlir::linattn::cpukernels

#endif // LINATTN_LIB_CONVERSION_LINATTNTOCPU_VECTOREMITTER_H
