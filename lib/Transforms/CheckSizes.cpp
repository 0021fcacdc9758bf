//===- CheckSizes.cpp - run-time checks of the dynamic sizes --------------===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//
//
// The verifiers compare the sizes an op's shape signature relates when both
// are static. A dynamic size agrees with anything there, and the lowerings
// take the sizes they loop over from one operand each: a causal attention
// whose keys are longer than its queries would read queries past their
// buffer. This pass checks before each op, at run time, every pair the IR
// does not fix.
//
//===----------------------------------------------------------------------===//

#include "linattn/IR/LinAttnOps.h"
#include "linattn/IR/ShapeSignature.h"
#include "linattn/Transforms/Passes.h"
#include "linattn/Transforms/Utils.h"

#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::linattn {
#define GEN_PASS_DEF_LINATTNCHECKSIZESPASS
#include "linattn/Transforms/Passes.h.inc"
} // namespace mlir::linattn

using namespace mlir;
using namespace mlir::linattn;

namespace {

/// One dimension of a tensor in an op's signature, and how diagnostics name
/// it ("key sequence length").
struct Dim {
  Value tensor;
  int64_t index;
  std::string description;
  /// Whether the tensor is an operand: its size is known before the op.
  bool operand;

  int64_t staticSize() const {
    return cast<RankedTensorType>(tensor.getType()).getDimSize(index);
  }
};

/// The first dim of `dims` whose tensor is an operand, null if none is.
static const Dim *firstOperandDim(ArrayRef<Dim> dims) {
  const Dim *it =
      llvm::find_if(dims, [](const Dim &dim) { return dim.operand; });
  return it == dims.end() ? nullptr : it;
}

/// Emits the checks of one op before it.
class SizeChecker {
public:
  explicit SizeChecker(Operation *op) : op(op), b(op) {
    llvm::raw_string_ostream os(prefix);
    os << op->getName().getStringRef();
    // The source position, also inside a name or fused location.
    if (auto file = op->getLoc()->findInstanceOf<FileLineColLoc>())
      os << " at " << file.getFilename().getValue() << ":" << file.getLine()
         << ":" << file.getColumn();
    os << ": ";
  }

  /// Every dim of `dims` equals the first operand dim among them.
  void checkAllEqual(ArrayRef<Dim> dims) {
    const Dim *reference = firstOperandDim(dims);
    if (!reference)
      return;
    // Static sizes agree with each other (the verifier checked): a dynamic
    // reference is compared with the first one only.
    bool comparedWithStatic = false;
    for (const Dim &dim : dims) {
      if (&dim == reference)
        continue;
      bool isStatic = !ShapedType::isDynamic(dim.staticSize());
      if (isStatic && comparedWithStatic)
        continue;
      if (checkEqual(dim, *reference,
                     dim.description + " does not match " +
                         reference->description))
        comparedWithStatic |= isStatic;
    }
  }

  /// `dim` equals `reference` (an operand dim), unless both are static (the
  /// verifier compared them) or `dim` is a dynamic result size (which the
  /// lowering takes from the operands). Returns whether it emitted a check.
  bool checkEqual(const Dim &dim, const Dim &reference,
                  const std::string &message) {
    bool dimStatic = !ShapedType::isDynamic(dim.staticSize());
    bool referenceStatic = !ShapedType::isDynamic(reference.staticSize());
    if ((dimStatic && referenceStatic) || (!dim.operand && !dimStatic))
      return false;
    emitAssert(arith::CmpIOp::create(b, op->getLoc(), arith::CmpIPredicate::eq,
                                     size(dim), size(reference)),
               message);
    return true;
  }

  /// poly2's result of F features for an input of D: F = 1 + D + D².
  void checkPoly2(const Dim &input, const Dim &result) {
    if (!ShapedType::isDynamic(input.staticSize()) ||
        ShapedType::isDynamic(result.staticSize()))
      return;
    Location loc = op->getLoc();
    Value features = createPoly2FeatureCount(b, loc, size(input));
    emitAssert(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, features,
                                     size(result)),
               result.description + " is not 1 + D + D^2 for the " +
                   input.description + " D");
  }

private:
  Value size(const Dim &dim) {
    int64_t known = dim.staticSize();
    if (!ShapedType::isDynamic(known))
      return arith::ConstantIndexOp::create(b, op->getLoc(), known);
    // A feature map keeps its input's sizes (all of them when elementwise):
    // read those, so that the check leaves the map's result to the kernels
    // that apply the map as they load (a use of it would keep it alive).
    Value tensor = dim.tensor;
    while (auto map = tensor.getDefiningOp<FeatureMapOp>()) {
      int64_t rank = cast<RankedTensorType>(tensor.getType()).getRank();
      bool elementwise = map.getKind() == FeatureMapKind::Elu ||
                         map.getKind() == FeatureMapKind::Relu ||
                         map.getKind() == FeatureMapKind::Identity;
      if (dim.index == rank - 1 && !elementwise)
        break;
      tensor = map.getInput();
    }
    return tensor::DimOp::create(b, op->getLoc(), tensor, dim.index);
  }

  void emitAssert(Value condition, const std::string &message) {
    cf::AssertOp::create(b, op->getLoc(), condition, prefix + message);
  }

  Operation *op;
  OpBuilder b;
  std::string prefix;
};

/// Emits the checks of `op`, whose signature is `signature`, before it.
void checkSizes(Operation *op, const ShapeSignature &signature) {
  SizeChecker checker(op);
  auto isOperand = [&](Value value) { return value.getDefiningOp() != op; };

  // The batch rank is what the first batched tensor has beyond its trailing
  // dims (the verifier made every batched tensor agree).
  int64_t batchRank = 0;
  for (const TensorSpec &spec : signature.tensors)
    if (spec.batched) {
      batchRank = cast<RankedTensorType>(spec.value.getType()).getRank() -
                  static_cast<int64_t>(spec.dims.size());
      break;
    }
  for (int64_t i = 0; i < batchRank; ++i) {
    SmallVector<Dim> dims;
    for (const TensorSpec &spec : signature.tensors)
      if (spec.batched)
        dims.push_back({spec.value, i,
                        (spec.name + " batch dimension " + Twine(i)).str(),
                        isOperand(spec.value)});
    checker.checkAllEqual(dims);
  }

  // The trailing dims of each symbol, in the order the signature lists them.
  llvm::MapVector<char, SmallVector<Dim>> bySymbol;
  for (const TensorSpec &spec : signature.tensors) {
    int64_t offset = cast<RankedTensorType>(spec.value.getType()).getRank() -
                     static_cast<int64_t>(spec.dims.size());
    for (auto [i, dim] : llvm::enumerate(spec.dims))
      bySymbol[dim.symbol].push_back(
          {spec.value, offset + static_cast<int64_t>(i),
           (spec.name + " " + dim.role).str(), isOperand(spec.value)});
  }
  for (auto &[symbol, dims] : bySymbol)
    checker.checkAllEqual(dims);

  auto operandDimOf = [&](char symbol) -> const Dim * {
    auto it = bySymbol.find(symbol);
    return it == bySymbol.end() ? nullptr : firstOperandDim(it->second);
  };
  for (auto [first, second] : signature.equalSymbols) {
    const Dim *a = operandDimOf(first), *b = operandDimOf(second);
    if (a && b)
      checker.checkEqual(
          *b, *a,
          "a causal mask needs as many keys as queries: " + b->description +
              " does not match " + a->description);
  }

  if (auto map = dyn_cast<FeatureMapOp>(op);
      map && map.getKind() == FeatureMapKind::Poly2) {
    const Dim *input = operandDimOf('D');
    auto result = bySymbol.find('F');
    if (input && result != bySymbol.end())
      checker.checkPoly2(*input, result->second.front());
  }
}

struct LinAttnCheckSizesPass
    : linattn::impl::LinAttnCheckSizesPassBase<LinAttnCheckSizesPass> {
  void runOnOperation() override {
    std::vector<std::pair<Operation *, ShapeSignature>> ops;
    getOperation()->walk([&](Operation *op) {
      if (std::optional<ShapeSignature> signature = getShapeSignature(op))
        ops.push_back({op, std::move(*signature)});
    });
    for (auto &[op, signature] : ops)
      checkSizes(op, signature);
  }
};

} // namespace
