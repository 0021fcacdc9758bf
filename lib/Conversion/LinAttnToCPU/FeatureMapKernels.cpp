//===- FeatureMapKernels.cpp - favor and poly2 feature maps on the CPU ----===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//
//
// The elementwise feature maps (elu, relu, identity) are applied by the
// kernels that read their features. favor and poly2 are not elementwise, and
// their generic lowering, scalar loops with the reduction innermost, ran
// favor at about 3 GFLOP/s: for m = D = 64 the map took 20 times as long as
// the scan it feeds. These kernels compute them on buffers, vectorized over
// the feature dimension and parallel over rows:
//
//   - favor, φ(x) = exp(xP - |x|²/2) / √m: the [rows, D] × [D, m] product in
//     register tiles of B rows by C vectors of features (the scan kernels'
//     tokens-per-block and column-vectors), D broadcast-FMA steps each, then
//     exp (a polynomial) of the tile minus the rows' half squared norms;
//   - poly2, [1, x, vec(x xᵀ)/√2]: per row the input copied, then D scaled
//     copies of it;
//   - elu + 1 and relu where no kernel that reads the features fused them
//     (a gradient's decomposition needs the features as values): per row,
//     vector by vector, with the kernels' polynomial exp. Lowered
//     generically, elu took a libm call per element on one thread.
//
//===----------------------------------------------------------------------===//

#include "VectorEmitter.h"

#include "linattn/Transforms/Utils.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <cmath>

using namespace mlir;
using namespace mlir::linattn;
using namespace mlir::linattn::cpukernels;

namespace {

/// Emits the kernel of one favor or poly2 map from `x` [batch..., N, D] (or
/// [D]) into `out` [batch..., N, F] with the projection `p` [D, m] (favor).
class FeatureMapEmitter : VectorEmitter {
public:
  FeatureMapEmitter(OpBuilder &builder, Location loc, FeatureMapKind kind,
                    Value x, Value p, Value out, KernelShape shape)
      : VectorEmitter(builder, loc, computeType(x),
                      lanesOf(computeType(x), shape.width)),
        kind(kind), x(x), p(p), out(out), shape(shape),
        rank(cast<MemRefType>(x.getType()).getRank()) {}

  void emit();

private:
  /// f64 data computes in f64, the rest in f32.
  static Type computeType(Value x) {
    Type element = cast<MemRefType>(x.getType()).getElementType();
    return element.isF64() ? element : Float32Type::get(element.getContext());
  }

  /// The indices of element `column` of row `row` at `batch`.
  SmallVector<Value> at(ValueRange batch, Value row, Value column) {
    SmallVector<Value> indices(batch);
    if (row)
      indices.push_back(row);
    indices.push_back(column);
    return indices;
  }
  Value add(Value a, Value c) { return arith::AddIOp::create(b, loc, a, c); }
  Value add(Value a, int64_t c) { return c ? add(a, index(c)) : a; }

  /// favor of `rows` rows from `row` on (row null: the one row of a rank-1
  /// input).
  void emitFavorRows(ValueRange batch, Value row, int64_t rows);
  /// favor of the tile of `rows` rows and `columns` vectors of features
  /// from `column` on, the last vector masked by `mask` (when not null).
  void emitFavorTile(ValueRange batch, Value row, int64_t rows, Value column,
                     int64_t columns, Value mask, ArrayRef<Value> halfNorms);
  /// poly2 of one row.
  void emitPoly2Row(ValueRange batch, Value row);
  /// An elementwise map (elu, relu) of one row.
  void emitElementwiseRow(ValueRange batch, Value row);

  FeatureMapKind kind;
  Value x, p, out;
  KernelShape shape;
  int64_t rank;
  // Set by emit(): D, the features m of favor, and 1/√m.
  Value inputSize, features, scale;
};

} // namespace

void FeatureMapEmitter::emit() {
  inputSize = dim(x, rank - 1);
  if (kind == FeatureMapKind::Favor) {
    features = dim(p, 1);
    Value count = arith::IndexCastOp::create(b, loc, b.getI64Type(), features);
    Value m = arith::SIToFPOp::create(b, loc, compute, count);
    Value one = arith::ConstantOp::create(b, loc, b.getFloatAttr(compute, 1.0));
    scale = vector::BroadcastOp::create(
        b, loc, vecType,
        arith::DivFOp::create(b, loc, one, math::SqrtOp::create(b, loc, m)));
  }
  // favor takes rows in blocks of the register tile; poly2 and the
  // elementwise maps (memory-bound) one at a time.
  int64_t block = kind == FeatureMapKind::Favor ? shape.block : 1;
  auto emitRow = [&](ValueRange batch, Value row, int64_t rows) {
    if (kind == FeatureMapKind::Favor)
      emitFavorRows(batch, row, rows);
    else if (kind == FeatureMapKind::Poly2)
      emitPoly2Row(batch, row);
    else
      emitElementwiseRow(batch, row);
  };
  if (rank == 1) {
    emitRow({}, Value(), 1);
    return;
  }
  // Parallel over the batch and the row blocks; the last block of each
  // sequence may be short, and takes its rows one by one.
  SmallVector<Value> upper;
  for (int64_t d = 0; d < rank - 2; ++d)
    upper.push_back(dim(x, d));
  Value length = dim(x, rank - 2);
  upper.push_back(
      block == 1 ? length
                 : arith::CeilDivUIOp::create(b, loc, length, index(block)));
  // About the operations (2·D per favor feature, D + 1 per poly2 input
  // element, about 16 per elu or relu element), for a serial twin of the
  // loop when there are threads.
  Value flops;
  if (shape.threads > 1) {
    flops = arith::MulIOp::create(b, loc, length, inputSize);
    for (Value size : ArrayRef<Value>(upper).drop_back())
      flops = arith::MulIOp::create(b, loc, flops, size);
    Value perElement =
        kind == FeatureMapKind::Favor
            ? arith::MulIOp::create(b, loc, features, index(2)).getResult()
        : kind == FeatureMapKind::Poly2
            ? arith::AddIOp::create(b, loc, inputSize, index(1)).getResult()
            : index(16);
    flops = arith::MulIOp::create(b, loc, flops, perElement);
  }
  emitParallel(
      upper,
      [&](ValueRange ivs) {
        ValueRange batch = ivs.drop_back();
        if (block == 1) {
          emitRow(batch, ivs.back(), 1);
          return;
        }
        Value first = arith::MulIOp::create(b, loc, ivs.back(), index(block));
        Value full = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule,
                                           add(first, block), length);
        auto ifFull = scf::IfOp::create(b, loc, full, /*withElseRegion=*/true);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(ifFull.thenYield());
        emitRow(batch, first, block);
        b.setInsertionPoint(ifFull.elseYield());
        emitFor(first, length, index(1), {}, [&](Value row, ValueRange) {
          emitRow(batch, row, 1);
          return SmallVector<Value>();
        });
      },
      flops);
}

void FeatureMapEmitter::emitFavorRows(ValueRange batch, Value row,
                                      int64_t rows) {
  // |x|²/2 per row, splat.
  SmallVector<Value> halfNorms;
  for (int64_t r = 0; r < rows; ++r) {
    Value rowIndex = row ? add(row, r) : Value();
    Value squares = forEachVector(
        inputSize, {zeroVector()},
        [&](Value offset, Value mask, ValueRange acc) -> SmallVector<Value> {
          Value v = loadVector(x, at(batch, rowIndex, offset), mask);
          return {vector::FMAOp::create(b, loc, v, v, acc.front())};
        })[0];
    Value sum = vector::ReductionOp::create(b, loc, vector::CombiningKind::ADD,
                                            squares);
    Value half = arith::MulFOp::create(
        b, loc, sum,
        arith::ConstantOp::create(b, loc, b.getFloatAttr(compute, 0.5)));
    halfNorms.push_back(vector::BroadcastOp::create(b, loc, vecType, half));
  }
  // Full tiles of C vectors, then the rest one vector at a time, the last
  // one masked.
  int64_t columns = shape.columns;
  Value tileWidth = index(columns * width);
  Value fullTiles = arith::MulIOp::create(
      b, loc, arith::DivUIOp::create(b, loc, features, tileWidth), tileWidth);
  emitFor(index(0), fullTiles, tileWidth, {}, [&](Value column, ValueRange) {
    emitFavorTile(batch, row, rows, column, columns, Value(), halfNorms);
    return SmallVector<Value>();
  });
  forEachVector(
      features, {},
      [&](Value column, Value mask, ValueRange) {
        emitFavorTile(batch, row, rows, column, 1, mask, halfNorms);
        return SmallVector<Value>();
      },
      fullTiles);
}

void FeatureMapEmitter::emitFavorTile(ValueRange batch, Value row, int64_t rows,
                                      Value column, int64_t columns, Value mask,
                                      ArrayRef<Value> halfNorms) {
  SmallVector<Value> columnIndex;
  for (int64_t c = 0; c < columns; ++c)
    columnIndex.push_back(add(column, c * width));
  auto rowIndex = [&](int64_t r) { return row ? add(row, r) : Value(); };
  // acc[r][c] = Σ_d x[r, d] P[d, column + cW ...].
  SmallVector<Value> zeros(rows * columns, zeroVector());
  SmallVector<Value> acc = emitFor(
      index(0), inputSize, index(1), zeros, [&](Value d, ValueRange carried) {
        SmallVector<Value> projection;
        for (int64_t c = 0; c < columns; ++c)
          projection.push_back(loadVector(p, {d, columnIndex[c]}, mask));
        SmallVector<Value> next;
        for (int64_t r = 0; r < rows; ++r) {
          Value xs = loadScalar(x, at(batch, rowIndex(r), d));
          Value broadcast = vector::BroadcastOp::create(b, loc, vecType, xs);
          for (int64_t c = 0; c < columns; ++c)
            next.push_back(vector::FMAOp::create(
                b, loc, broadcast, projection[c], carried[r * columns + c]));
        }
        return next;
      });
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < columns; ++c) {
      Value exponent =
          arith::SubFOp::create(b, loc, acc[r * columns + c], halfNorms[r]);
      Value y = arith::MulFOp::create(
          b, loc, exp(exponent, /*nonPositive=*/false), scale);
      storeVector(y, out, at(batch, rowIndex(r), columnIndex[c]), mask);
    }
}

void FeatureMapEmitter::emitPoly2Row(ValueRange batch, Value row) {
  Type element = cast<MemRefType>(out.getType()).getElementType();
  memref::StoreOp::create(
      b, loc, arith::ConstantOp::create(b, loc, b.getFloatAttr(element, 1.0)),
      out, at(batch, row, index(0)));
  // Features 1 .. D: the input.
  forEachVector(inputSize, {}, [&](Value offset, Value mask, ValueRange) {
    Value v = loadVector(x, at(batch, row, offset), mask);
    storeVector(v, out, at(batch, row, add(offset, 1)), mask);
    return SmallVector<Value>();
  });
  // Features 1 + D + i·D + j: xᵢxⱼ/√2.
  Value invSqrt2 = arith::ConstantOp::create(
      b, loc, b.getFloatAttr(compute, 1.0 / std::sqrt(2.0)));
  Value base = add(inputSize, 1);
  emitFor(index(0), inputSize, index(1), {}, [&](Value i, ValueRange) {
    Value xi = arith::MulFOp::create(b, loc, loadScalar(x, at(batch, row, i)),
                                     invSqrt2);
    Value broadcast = vector::BroadcastOp::create(b, loc, vecType, xi);
    Value start = add(base, arith::MulIOp::create(b, loc, i, inputSize));
    forEachVector(inputSize, {}, [&](Value offset, Value mask, ValueRange) {
      Value v = loadVector(x, at(batch, row, offset), mask);
      storeVector(arith::MulFOp::create(b, loc, broadcast, v), out,
                  at(batch, row, add(start, offset)), mask);
      return SmallVector<Value>();
    });
    return SmallVector<Value>();
  });
}

void FeatureMapEmitter::emitElementwiseRow(ValueRange batch, Value row) {
  forEachVector(inputSize, {}, [&](Value offset, Value mask, ValueRange) {
    Value v = loadVector(x, at(batch, row, offset), mask);
    storeVector(elementwiseMap(kind, v), out, at(batch, row, offset), mask);
    return SmallVector<Value>();
  });
}

bool cpukernels::hasFeatureMapKernel(FeatureMapOp op) {
  return op.getKind() != FeatureMapKind::Identity;
}

void cpukernels::rewriteFeatureMap(RewriterBase &rewriter, FeatureMapOp op,
                                   KernelShape shape) {
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  Value input = op.getInput();
  RankedTensorType resultType = op.getType();
  int64_t rank = resultType.getRank();
  Value x = toRowsBuffer(rewriter, loc, input);
  Value p = op.getProjection() ? toBuffer(rewriter, loc, op.getProjection())
                               : Value();
  // The result's open sizes: the input's leading ones, then the projection's
  // m (favor), 1 + D + D² (poly2) or D (elementwise maps).
  bool poly2 = op.getKind() == FeatureMapKind::Poly2;
  SmallVector<Value> sizes;
  for (int64_t d = 0; d < rank; ++d) {
    if (!resultType.isDynamicDim(d))
      continue;
    if (d < rank - 1 || (!p && !poly2)) {
      sizes.push_back(tensor::DimOp::create(rewriter, loc, input, d));
    } else if (p) {
      sizes.push_back(memref::DimOp::create(rewriter, loc, p, 1));
    } else {
      sizes.push_back(createPoly2FeatureCount(
          rewriter, loc, tensor::DimOp::create(rewriter, loc, input, d)));
    }
  }
  Value out = outputBuffer(rewriter, loc, op.getResult(), op, sizes);
  FeatureMapEmitter(rewriter, loc, op.getKind(), x, p, out, shape).emit();
  replaceWithBuffers(rewriter, op, {out});
}
