//===- VectorEmitter.cpp - vector code on buffers for the CPU kernels -----===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//

#include "VectorEmitter.h"

#include "linattn/Transforms/Utils.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Dominance.h"

using namespace mlir;
using namespace mlir::linattn;
using namespace mlir::linattn::cpukernels;

//===----------------------------------------------------------------------===//
// VectorEmitter
//===----------------------------------------------------------------------===//

Value VectorEmitter::dim(Value memref, int64_t d) {
  return memref::DimOp::create(b, loc, memref, d);
}

Value VectorEmitter::splat(double value) {
  return arith::ConstantOp::create(
      b, loc, vecType,
      DenseElementsAttr::get(vecType, b.getFloatAttr(compute, value)));
}

SmallVector<Value> VectorEmitter::forEachVector(Value n, ValueRange inits,
                                                VectorBody body, Value start) {
  Value step = index(width);
  if (!start)
    start = index(0);
  Value rest = arith::RemUIOp::create(
      b, loc, arith::SubIOp::create(b, loc, n, start), step);
  Value full = arith::SubIOp::create(b, loc, n, rest);
  SmallVector<Value> carried =
      emitFor(start, full, step, inits, [&](Value offset, ValueRange iterArgs) {
        return body(offset, Value(), iterArgs);
      });
  Value hasRest =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, rest, index(0));
  auto tail = scf::IfOp::create(b, loc, TypeRange(ValueRange(inits)), hasRest,
                                /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&tail.getThenRegion().front());
    Value mask = vector::CreateMaskOp::create(
        b, loc, VectorType::get({width}, b.getI1Type()), ValueRange{rest});
    SmallVector<Value> results = body(full, mask, carried);
    if (!inits.empty())
      scf::YieldOp::create(b, loc, results);
    b.setInsertionPointToStart(&tail.getElseRegion().front());
    if (!inits.empty())
      scf::YieldOp::create(b, loc, carried);
  }
  return SmallVector<Value>(tail.getResults());
}

SmallVector<Value> VectorEmitter::emitFor(
    Value lower, Value upper, Value step, ValueRange inits,
    function_ref<SmallVector<Value>(Value iv, ValueRange iterArgs)> body) {
  auto loop = scf::ForOp::create(
      b, loc, lower, upper, step, inits,
      [&](OpBuilder &nb, Location, Value iv, ValueRange iterArgs) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
        scf::YieldOp::create(b, loc, body(iv, iterArgs));
      });
  return SmallVector<Value>(loop.getResults());
}

void VectorEmitter::emitParallel(ArrayRef<Value> upper,
                                 function_ref<void(ValueRange ivs)> body,
                                 Value flops) {
  if (upper.empty()) {
    body({});
    return;
  }
  SmallVector<Value> lower(upper.size(), index(0)),
      steps(upper.size(), index(1));
  // The body where the loops' builder `nb` stands.
  auto bodyAt = [&](OpBuilder &nb, Location, ValueRange ivs) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
    body(ivs);
  };
  auto parallel = [&] {
    scf::ParallelOp::create(b, loc, lower, upper, steps, bodyAt);
  };
  if (!flops) {
    parallel();
    return;
  }
  Value small = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, flops,
                                      index(kSerialFlops));
  auto choice = scf::IfOp::create(b, loc, TypeRange(), small,
                                  /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&choice.getThenRegion().front());
  scf::buildLoopNest(b, loc, lower, upper, steps, bodyAt);
  b.setInsertionPointToStart(&choice.getElseRegion().front());
  parallel();
}

Value VectorEmitter::loadVector(Value memref, ValueRange indices, Value mask) {
  Type type = cast<MemRefType>(memref.getType()).getElementType();
  auto loadType = VectorType::get({width}, type);
  Value loaded;
  if (mask) {
    Value zero = arith::ConstantOp::create(
        b, loc, loadType,
        DenseElementsAttr::get(loadType, b.getFloatAttr(type, 0.0)));
    loaded = vector::MaskedLoadOp::create(b, loc, loadType, memref, indices,
                                          mask, zero);
  } else {
    loaded = vector::LoadOp::create(b, loc, loadType, memref, indices);
  }
  if (type != compute)
    loaded = arith::ExtFOp::create(b, loc, vecType, loaded);
  return loaded;
}

Value VectorEmitter::loadScalar(Value memref, ValueRange indices) {
  Value value = memref::LoadOp::create(b, loc, memref, indices);
  if (value.getType() != compute)
    value = arith::ExtFOp::create(b, loc, compute, value);
  return value;
}

void VectorEmitter::storeVector(Value value, Value memref, ValueRange indices,
                                Value mask, bool streaming) {
  Type type = cast<MemRefType>(memref.getType()).getElementType();
  if (type != compute)
    value =
        arith::TruncFOp::create(b, loc, VectorType::get({width}, type), value);
  if (mask)
    vector::MaskedStoreOp::create(b, loc, memref, indices, mask, value);
  else if (streaming)
    vector::StoreOp::create(
        b, loc, value, memref, indices, /*nontemporal=*/true,
        llvm::Align(width * type.getIntOrFloatBitWidth() / 8));
  else
    vector::StoreOp::create(b, loc, value, memref, indices);
}

Value VectorEmitter::elementwiseMap(FeatureMapKind kind, Value x) {
  Value zero = zeroVector();
  switch (kind) {
  case FeatureMapKind::Elu: {
    // elu(x) + 1 is x + 1 for x > 0 and exp(x) otherwise.
    Value positive =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x, zero);
    Value shifted = arith::AddFOp::create(b, loc, x, splat(1.0));
    return arith::SelectOp::create(b, loc, positive, shifted,
                                   exp(x, /*nonPositive=*/true));
  }
  case FeatureMapKind::Relu:
    return arith::MaximumFOp::create(b, loc, x, zero);
  default:
    return x;
  }
}

Value VectorEmitter::exp(Value x, bool nonPositive) {
  // exp(x) = 2^n · exp(r), n = round(x / ln 2), r = x - n ln 2 in
  // [-ln2/2, ln2/2] (ln 2 split in two for an exact product), exp(r) from
  // Cephes' approximations within about an ulp, 2^n built in the exponent
  // bits. f32: the degree-7 polynomial 1 + r + r²·p(r), x clamped to
  // [-87.3, 88.4] (to 0 from above with `nonPositive`), where 2^n is a
  // normal float (exp(-87.3) is below f32's smallest normal anyway). f64:
  // the rational form 1 + 2r·P(r²) / (Q(r²) - r·P(r²)), x clamped to
  // [-708.4, 709.4] likewise.
  bool f32 = compute.isF32();
  Value upper =
      nonPositive ? zeroVector() : splat(f32 ? 88.37626f : 709.4361393031039);
  Value clamped = arith::MinimumFOp::create(b, loc, x, upper);
  clamped = arith::MaximumFOp::create(
      b, loc, clamped, splat(f32 ? -87.33654f : -708.3964185322641));
  Value n = math::RoundEvenOp::create(
      b, loc,
      arith::MulFOp::create(b, loc, clamped, splat(1.4426950408889634)));
  Value r = vector::FMAOp::create(
      b, loc, n, splat(f32 ? -0.693359375 : -6.93145751953125e-1), clamped);
  r = vector::FMAOp::create(
      b, loc, n, splat(f32 ? 2.12194440e-4f : -1.42860682030941723212e-6), r);
  auto polynomial = [&](Value t, ArrayRef<double> coefficients) {
    Value p = splat(coefficients.front());
    for (double c : coefficients.drop_front())
      p = vector::FMAOp::create(b, loc, p, t, splat(c));
    return p;
  };
  Value r2 = arith::MulFOp::create(b, loc, r, r);
  Value y;
  if (f32) {
    Value p =
        polynomial(r, {1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f,
                       4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f});
    y = arith::AddFOp::create(b, loc, vector::FMAOp::create(b, loc, p, r2, r),
                              splat(1.0));
  } else {
    Value rp = arith::MulFOp::create(
        b, loc, r,
        polynomial(r2, {1.26177193074810590878e-4, 3.02994407707441961300e-2,
                        9.99999999999999999910e-1}));
    Value q =
        polynomial(r2, {3.00198505138664455042e-6, 2.52448340349684104192e-3,
                        2.27265548208155028766e-1, 2.00000000000000000009e0});
    Value ratio =
        arith::DivFOp::create(b, loc, rp, arith::SubFOp::create(b, loc, q, rp));
    y = vector::FMAOp::create(b, loc, ratio, splat(2.0), splat(1.0));
  }
  Type intElement = f32 ? b.getI32Type() : b.getI64Type();
  auto intType = VectorType::get({width}, intElement);
  auto intSplat = [&](int64_t value) -> Value {
    return arith::ConstantOp::create(
        b, loc, intType,
        DenseElementsAttr::get(intType, b.getIntegerAttr(intElement, value)));
  };
  Value bits = arith::FPToSIOp::create(b, loc, intType, n);
  bits = arith::AddIOp::create(b, loc, bits, intSplat(f32 ? 127 : 1023));
  bits = arith::ShLIOp::create(b, loc, bits, intSplat(f32 ? 23 : 52));
  Value scale = arith::BitcastOp::create(b, loc, vecType, bits);
  Value result = arith::MulFOp::create(b, loc, y, scale);
  if (nonPositive)
    return result;
  // Past the clamp the result overflows (NaN stays NaN: the comparison is
  // false, and the clamps propagate it).
  Value overflows =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x, upper);
  return arith::SelectOp::create(b, loc, overflows,
                                 splat(std::numeric_limits<double>::infinity()),
                                 result);
}

//===----------------------------------------------------------------------===//
// Buffers
//===----------------------------------------------------------------------===//

Value cpukernels::toBuffer(OpBuilder &b, Location loc, Value tensor) {
  return ReadBufferOp::create(b, loc, tensor);
}

Value cpukernels::toRowsBuffer(OpBuilder &b, Location loc, Value tensor) {
  auto transpose = tensor.getDefiningOp<linalg::TransposeOp>();
  if (!transpose || !transpose.hasPureTensorSemantics())
    return toBuffer(b, loc, tensor);
  ArrayRef<int64_t> permutation = transpose.getPermutation();
  if (!keepsLastDimension(permutation))
    return toBuffer(b, loc, tensor);
  // The source's buffer, seen through the permutation: rows stay
  // contiguous, the leading dimensions take the source's strides.
  Value source = toBuffer(b, loc, transpose.getInput());
  return memref::TransposeOp::create(
      b, loc, source,
      AffineMapAttr::get(
          AffineMap::getPermutationMap(permutation, b.getContext())));
}

/// The destination buffer that `result` of `op` is materialized in when the
/// kernel may write it there directly: the result's one use stores it into a
/// `restrict writable` memref (no other tensor reaches that memory, the
/// premise of bufferization's empty tensor elimination) of the result's
/// type with an identity layout, available before `op`. Else null.
static Value inPlaceDestination(Value result, Operation *op) {
  if (!result.hasOneUse())
    return {};
  auto store = dyn_cast<bufferization::MaterializeInDestinationOp>(
      *result.getUsers().begin());
  if (!store || store.getSource() != result || !store.getRestrict() ||
      !store.getWritable())
    return {};
  Value dest = store.getDest();
  auto memref = dyn_cast<MemRefType>(dest.getType());
  auto type = cast<RankedTensorType>(result.getType());
  if (!memref || !memref.getLayout().isIdentity() || memref.getMemorySpace() ||
      memref.getShape() != type.getShape() ||
      memref.getElementType() != type.getElementType())
    return {};
  if (!DominanceInfo(op).properlyDominates(dest, op))
    return {};
  return dest;
}

Value cpukernels::outputBuffer(OpBuilder &b, Location loc, Value result,
                               Operation *op,
                               ArrayRef<std::pair<Value, int64_t>> sources) {
  if (Value dest = inPlaceDestination(result, op))
    return dest;
  auto type = cast<RankedTensorType>(result.getType());
  SmallVector<Value> sizes;
  for (auto [d, size] : llvm::enumerate(type.getShape()))
    if (ShapedType::isDynamic(size))
      sizes.push_back(
          tensor::DimOp::create(b, loc, sources[d].first, sources[d].second));
  return outputBuffer(b, loc, result, op, sizes);
}

Value cpukernels::outputBuffer(OpBuilder &b, Location loc, Value result,
                               Operation *op, ValueRange dynamicSizes) {
  if (Value dest = inPlaceDestination(result, op))
    return dest;
  auto type = cast<RankedTensorType>(result.getType());
  return memref::AllocOp::create(
      b, loc, MemRefType::get(type.getShape(), type.getElementType()),
      dynamicSizes, b.getI64IntegerAttr(64));
}

/// The linalg.transpose that is the only user of `result` besides
/// tensor.dim ops and keeps its last dimension last, if there is one.
static linalg::TransposeOp rowsTransposeOf(Value result) {
  linalg::TransposeOp transpose;
  for (Operation *user : result.getUsers()) {
    if (isa<tensor::DimOp>(user))
      continue;
    if (transpose)
      return {};
    transpose = dyn_cast<linalg::TransposeOp>(user);
    if (!transpose)
      return {};
  }
  if (!transpose || !transpose.hasPureTensorSemantics() ||
      transpose.getInput() != result ||
      !keepsLastDimension(transpose.getPermutation()))
    return {};
  return transpose;
}

Value cpukernels::outputRowsBuffer(
    OpBuilder &b, Location loc, Value result, Operation *op,
    ArrayRef<std::pair<Value, int64_t>> sources) {
  linalg::TransposeOp transpose = rowsTransposeOf(result);
  if (!transpose)
    return outputBuffer(b, loc, result, op, sources);
  ArrayRef<int64_t> permutation = transpose.getPermutation();
  Value transposed = outputBuffer(b, loc, transpose->getResult(0), op,
                                  applyPermutation(sources, permutation));
  return memref::TransposeOp::create(
      b, loc, transposed,
      AffineMapAttr::get(AffineMap::getPermutationMap(
          invertPermutationVector(permutation), b.getContext())));
}

void cpukernels::replaceWithBuffers(RewriterBase &rewriter, Operation *op,
                                    ArrayRef<Value> buffers) {
  Location loc = op->getLoc();
  SmallVector<Value> results, unused;
  for (auto [buffer, result] : llvm::zip_equal(buffers, op->getResults())) {
    // A result written through outputRowsBuffer's view: the transpose of it
    // is the buffer under the view, which the kernel wrote.
    auto view = buffer.getDefiningOp<memref::TransposeOp>();
    if (linalg::TransposeOp transpose = rowsTransposeOf(result);
        view && transpose &&
        view.getPermutation() ==
            AffineMap::getPermutationMap(
                invertPermutationVector(transpose.getPermutation()),
                rewriter.getContext())) {
      Value transposed = view.getIn();
      Value transposeResult = transpose->getResult(0);
      for (Operation *user :
           llvm::make_early_inc_range(transposeResult.getUsers()))
        if (auto store =
                dyn_cast<bufferization::MaterializeInDestinationOp>(user))
          if (store.getDest() == transposed)
            rewriter.eraseOp(store);
      rewriter.setInsertionPoint(transpose);
      rewriter.replaceOp(
          transpose, bufferization::ToTensorOp::create(
                         rewriter, loc, transposeResult.getType(), transposed,
                         rewriter.getUnitAttr(), rewriter.getUnitAttr()));
      // Its sizes are the view's.
      for (Operation *user : llvm::make_early_inc_range(result.getUsers())) {
        auto dim = cast<tensor::DimOp>(user);
        rewriter.setInsertionPoint(dim);
        rewriter.replaceOpWithNewOp<memref::DimOp>(dim, buffer, dim.getIndex());
      }
      rewriter.setInsertionPoint(op);
      // The kernel's own result has no user left.
      Value none = bufferization::ToTensorOp::create(rewriter, loc,
                                                     result.getType(), buffer);
      results.push_back(none);
      unused.push_back(none);
      continue;
    }
    // A result written in place needs no copy to its destination.
    for (Operation *user : llvm::make_early_inc_range(result.getUsers()))
      if (auto store =
              dyn_cast<bufferization::MaterializeInDestinationOp>(user))
        if (store.getDest() == buffer)
          rewriter.eraseOp(store);
    results.push_back(bufferization::ToTensorOp::create(
        rewriter, loc, result.getType(), buffer, rewriter.getUnitAttr(),
        rewriter.getUnitAttr()));
  }
  rewriter.replaceOp(op, results);
  for (Value value : unused)
    rewriter.eraseOp(value.getDefiningOp());
}
