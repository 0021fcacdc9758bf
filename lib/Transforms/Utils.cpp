//===- Utils.cpp - helpers shared by the linattn rewrites -----------------===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//

#include "linattn/Transforms/Utils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

using namespace mlir;

int64_t mlir::linattn::getFirstStaticSize(ArrayRef<RankedTensorType> types,
                                          int64_t index) {
  for (RankedTensorType type : types) {
    int64_t dim = type.getDimSize(index < 0 ? type.getRank() + index : index);
    if (!ShapedType::isDynamic(dim))
      return dim;
  }
  return ShapedType::kDynamic;
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

Type mlir::linattn::getAccumulatorType(Type type) {
  if (cast<FloatType>(type).getWidth() < 32)
    return Float32Type::get(type.getContext());
  return type;
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
