//===- Utils.cpp - helpers shared by the linattn rewrites -----------------===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//

#include "linattn/Transforms/Utils.h"

#include "linattn/IR/LinAttnDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;

Value mlir::linattn::createTranspose(OpBuilder &builder, Location loc,
                                     Value value,
                                     ArrayRef<int64_t> permutation) {
  SmallVector<OpFoldResult> sizes =
      applyPermutation(tensor::getMixedSizes(builder, loc, value), permutation);
  Value init =
      tensor::EmptyOp::create(builder, loc, sizes, getElementTypeOrSelf(value));
  return linalg::TransposeOp::create(builder, loc, value, init, permutation)
      ->getResult(0);
}

bool mlir::linattn::keepsLastDimension(ArrayRef<int64_t> permutation) {
  return !permutation.empty() &&
         permutation.back() == static_cast<int64_t>(permutation.size()) - 1;
}

int64_t mlir::linattn::getFirstStaticSize(ArrayRef<RankedTensorType> types,
                                          int64_t index) {
  for (RankedTensorType type : types) {
    int64_t dim = type.getDimSize(index < 0 ? type.getRank() + index : index);
    if (!ShapedType::isDynamic(dim))
      return dim;
  }
  return ShapedType::kDynamic;
}

/// Whether a slice of `sizes` out of or into a tensor of `type` has a static
/// size of 0.
static bool isStaticallyEmptySlice(RankedTensorType type,
                                   ArrayRef<OpFoldResult> sizes) {
  return llvm::is_contained(type.getShape(), 0) ||
         llvm::any_of(sizes, [](OpFoldResult size) {
           return isConstantIntValue(size, 0);
         });
}

Value mlir::linattn::createExtractSlice(OpBuilder &builder, Location loc,
                                        RankedTensorType type, Value source,
                                        ArrayRef<OpFoldResult> offsets,
                                        ArrayRef<OpFoldResult> sizes,
                                        ArrayRef<OpFoldResult> strides) {
  auto sourceType = cast<RankedTensorType>(source.getType());
  if (!type)
    type = tensor::ExtractSliceOp::inferResultType(sourceType, sizes);
  std::optional<llvm::SmallDenseSet<unsigned>> dropped;
  if (isStaticallyEmptySlice(sourceType, sizes)) {
    dropped = computeRankReductionMask(decomposeMixedValues(sizes).first,
                                       type.getShape(),
                                       /*matchDynamic=*/true);
  }
  if (!dropped)
    return tensor::ExtractSliceOp::create(builder, loc, type, source, offsets,
                                          sizes, strides);
  SmallVector<OpFoldResult> kept;
  for (auto [i, size] : llvm::enumerate(sizes))
    if (!dropped->contains(i))
      kept.push_back(size);
  Value empty =
      tensor::EmptyOp::create(builder, loc, kept, type.getElementType());
  if (empty.getType() != type)
    empty = tensor::CastOp::create(builder, loc, type, empty);
  return empty;
}

Value mlir::linattn::createInsertSlice(OpBuilder &builder, Location loc,
                                       Value source, Value dest,
                                       ArrayRef<OpFoldResult> offsets,
                                       ArrayRef<OpFoldResult> sizes,
                                       ArrayRef<OpFoldResult> strides) {
  if (isStaticallyEmptySlice(cast<RankedTensorType>(dest.getType()), sizes) ||
      llvm::is_contained(cast<RankedTensorType>(source.getType()).getShape(),
                         0))
    return dest;
  return tensor::InsertSliceOp::create(builder, loc, source, dest, offsets,
                                       sizes, strides);
}

/// Groups the dimensions of a [batch..., N, X] tensor of rank `rank` into
/// [batch..., (N, X)].
static SmallVector<ReassociationIndices> tokenReassociation(int64_t rank) {
  SmallVector<ReassociationIndices> groups;
  for (int64_t i = 0; i < rank - 2; ++i)
    groups.push_back({i});
  groups.push_back({rank - 2, rank - 1});
  return groups;
}

Value mlir::linattn::extractToken(OpBuilder &builder, Location loc,
                                  Value sequence, OpFoldResult index) {
  auto type = cast<RankedTensorType>(sequence.getType());
  int64_t rank = type.getRank();
  SmallVector<OpFoldResult> offsets(rank, builder.getIndexAttr(0));
  offsets[rank - 2] = index;
  SmallVector<OpFoldResult> sizes =
      tensor::getMixedSizes(builder, loc, sequence);
  sizes[rank - 2] = builder.getIndexAttr(1);
  SmallVector<OpFoldResult> strides(rank, builder.getIndexAttr(1));
  SmallVector<int64_t> shape(type.getShape());
  shape[rank - 2] = 1;
  Value slice = createExtractSlice(builder, loc, type.clone(shape), sequence,
                                   offsets, sizes, strides);
  return tensor::CollapseShapeOp::create(builder, loc, slice,
                                         tokenReassociation(rank));
}

Value mlir::linattn::expandToken(OpBuilder &builder, Location loc,
                                 Value token) {
  auto type = cast<RankedTensorType>(token.getType());
  SmallVector<int64_t> shape(type.getShape());
  shape.insert(shape.end() - 1, 1);
  return tensor::ExpandShapeOp::create(builder, loc, type.clone(shape), token,
                                       tokenReassociation(type.getRank() + 1));
}

Value mlir::linattn::insertToken(OpBuilder &builder, Location loc, Value token,
                                 Value sequence, OpFoldResult index) {
  Value expanded = expandToken(builder, loc, token);
  int64_t rank = cast<RankedTensorType>(expanded.getType()).getRank();
  SmallVector<OpFoldResult> offsets(rank, builder.getIndexAttr(0));
  offsets[rank - 2] = index;
  SmallVector<OpFoldResult> sizes =
      tensor::getMixedSizes(builder, loc, expanded);
  SmallVector<OpFoldResult> strides(rank, builder.getIndexAttr(1));
  return createInsertSlice(builder, loc, expanded, sequence, offsets, sizes,
                           strides);
}

LogicalResult mlir::linattn::checkPlacement(Operation *module,
                                            StringRef lowering) {
  bool misplaced = false;
  module->walk([&](Operation *op) {
    if (!isa_and_nonnull<LinAttnDialect>(op->getDialect()))
      return;
    auto func = op->getParentOfType<func::FuncOp>();
    if (func && func->getParentOp() == module)
      return;
    InFlightDiagnostic diag = op->emitError()
                              << "'" << op->getName() << "' is ";
    if (!func)
      diag << "not in a function";
    else
      diag << "in a function nested in '" << func->getParentOp()->getName()
           << "'";
    diag << ": " << lowering
         << " lowers only the functions directly in the module it runs on";
    misplaced = true;
  });
  return failure(misplaced);
}

GreedyRewriteConfig mlir::linattn::getRewriteOnlyConfig() {
  GreedyRewriteConfig config;
  config.enableFolding(false)
      .enableConstantCSE(false)
      .setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
  return config;
}

Value mlir::linattn::scaleTensor(OpBuilder &builder, Location loc, Value value,
                                 double factor) {
  auto type = cast<RankedTensorType>(value.getType());
  Type elementType = type.getElementType();
  Value constant = arith::ConstantOp::create(
      builder, loc, elementType, builder.getFloatAttr(elementType, factor));
  SmallVector<AffineMap> maps(1,
                              builder.getMultiDimIdentityMap(type.getRank()));
  SmallVector<utils::IteratorType> iterators(type.getRank(),
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      builder, loc, TypeRange{type}, ValueRange{}, ValueRange{value}, maps,
      iterators, [&](OpBuilder &b, Location nested, ValueRange args) {
        Value product = arith::MulFOp::create(b, nested, args[0], constant);
        linalg::YieldOp::create(b, nested, product);
      });
  return generic.getResult(0);
}

RankedTensorType mlir::linattn::tensorTypeOf(ArrayRef<OpFoldResult> sizes,
                                             Type elementType) {
  SmallVector<int64_t> shape;
  for (OpFoldResult size : sizes)
    shape.push_back(getConstantIntValue(size).value_or(ShapedType::kDynamic));
  return RankedTensorType::get(shape, elementType);
}

Value mlir::linattn::filledTensor(OpBuilder &builder, Location loc,
                                  ArrayRef<OpFoldResult> sizes,
                                  Type elementType, double value) {
  Value empty = tensor::EmptyOp::create(builder, loc, sizes, elementType);
  Value constant = arith::ConstantOp::create(
      builder, loc, elementType, builder.getFloatAttr(elementType, value));
  return linalg::FillOp::create(builder, loc, ValueRange{constant},
                                ValueRange{empty})
      .getResult(0);
}

Value mlir::linattn::convertFloat(OpBuilder &builder, Location loc, Value value,
                                  Type to) {
  Type from = value.getType();
  if (from == to)
    return value;
  unsigned fromWidth = cast<FloatType>(from).getWidth();
  unsigned toWidth = cast<FloatType>(to).getWidth();
  if (fromWidth < toWidth)
    return arith::ExtFOp::create(builder, loc, to, value);
  if (fromWidth > toWidth)
    return arith::TruncFOp::create(builder, loc, to, value);
  Value wide = arith::ExtFOp::create(builder, loc, builder.getF32Type(), value);
  return arith::TruncFOp::create(builder, loc, to, wide);
}

Value mlir::linattn::createPoly2FeatureCount(OpBuilder &builder, Location loc,
                                             Value inputSize) {
  Value one = arith::ConstantIndexOp::create(builder, loc, 1);
  return arith::AddIOp::create(
      builder, loc, arith::AddIOp::create(builder, loc, one, inputSize),
      arith::MulIOp::create(builder, loc, inputSize, inputSize));
}
