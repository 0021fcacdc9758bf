//===- Raise.cpp - attention in upstream dialects into linattn ops --------===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//
//
// Importers (torch-mlir, StableHLO lowered to linalg) spell kernelized
// attention as two chained contractions with elementwise generics around
// them, on heads-first [B, H, N, D] tensors or token-major [B, N, H, D] ones
// (a contraction's operands and result may list their batch dimensions in
// any order: the raised ops get their operands transposed into
// [batch..., N, D] and their results transposed back). These patterns raise
// it, each exact on its own, so that they compose in any order under the
// greedy driver:
//
//  1. RaiseAttentionContractions: contraction(A', V), where A' is
//     contraction(X, Yᵀ) optionally scaled by a constant and causally masked,
//     becomes apply_scores(scores(X, Y [causal] [scale]), V).
//  2. RaiseRowSumNormalization: apply_scores(A, V) / (rowsum(A) + eps)
//     becomes apply_scores(A, V normalize(eps)).
//  3. RaiseLinearContractions: contraction(X, contraction(Yᵀ, V)), the
//     linear form as written, becomes query_readout(X, kv_summary(Y, V)).
//  4. RaiseReadoutNormalization: query_readout(X, S) / (X·Σₘ yₘ + eps), with
//     S from kv_summary(Y, V), becomes query_readout normalized by the
//     summary's z.
//  5. RaiseFeatureMaps: an elementwise elu + 1 or relu generic whose result
//     feeds linattn.scores, kv_summary or query_readout becomes
//     linattn.feature_map.
//  6. SinkFeatureMapsBelowTransposes: a feature map transposed in its
//     leading dimensions (as raising token-major attention does) is
//     applied after the transpose, next to the op that reads it.
//
// Every matcher walks a bounded number of ops; nothing recurses over user IR.
// Whatever is not exactly the raised computation (softmax, exp of the scores,
// a strict or shifted mask, an elu without its + 1) does not match.
//
//===----------------------------------------------------------------------===//

#include "linattn/IR/LinAttnOps.h"
#include "linattn/Transforms/Passes.h"
#include "linattn/Transforms/Utils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

namespace mlir::linattn {
#define GEN_PASS_DEF_LINATTNRAISEPASS
#include "linattn/Transforms/Passes.h.inc"
} // namespace mlir::linattn

using namespace mlir;
using namespace mlir::linattn;

//===----------------------------------------------------------------------===//
// Scalar and body matchers
//===----------------------------------------------------------------------===//

/// The value of a float constant: a scalar, or a splat tensor.
static std::optional<double> getConstantFloat(Value value) {
  if (!value)
    return std::nullopt;
  FloatAttr scalar;
  if (matchPattern(value, m_Constant(&scalar)))
    return scalar.getValueAsDouble();
  DenseFPElementsAttr dense;
  if (matchPattern(value, m_Constant(&dense)) && dense.isSplat())
    return dense.getSplatValue<APFloat>().convertToDouble();
  return std::nullopt;
}

static bool isConstantFloat(Value value, double expected) {
  std::optional<double> constant = getConstantFloat(value);
  return constant && *constant == expected;
}

/// True when `value` holds only zeros: a zero constant, or a linalg.fill of
/// one. Contractions must accumulate onto zeros to be a plain product.
static bool isZeroFilled(Value value) {
  if (matchPattern(value, m_AnyZeroFloat()))
    return true;
  auto fill = value.getDefiningOp<linalg::FillOp>();
  return fill && fill.getInputs().size() == 1 &&
         matchPattern(fill.getInputs()[0], m_AnyZeroFloat());
}

/// Matches a commutative binary op of type OpTy with operands `a` and
/// something else, returning the something else.
template <typename OpTy>
static Value matchCommutativeWith(Value result, Value a) {
  auto op = result ? result.getDefiningOp<OpTy>() : OpTy();
  if (!op)
    return {};
  if (op->getOperand(0) == a)
    return op->getOperand(1);
  if (op->getOperand(1) == a)
    return op->getOperand(0);
  return {};
}

/// The value yielded by a single-result linalg op's body.
static Value getYielded(linalg::LinalgOp op) {
  Block *body = op.getBlock();
  if (!body)
    return {};
  auto yield = dyn_cast<linalg::YieldOp>(body->getTerminator());
  if (!yield || yield->getNumOperands() != 1)
    return {};
  return yield->getOperand(0);
}

/// True when `type` is a ranked tensor of a float type linattn supports.
static bool isLinAttnTensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.getRank() >= 1 &&
         isa<Float16Type, BFloat16Type, Float32Type, Float64Type>(
             tensor.getElementType());
}

//===----------------------------------------------------------------------===//
// Structured op matchers
//===----------------------------------------------------------------------===//

/// An elementwise linalg op on tensors: all loops parallel, one result, the
/// result indexed by the identity, the init never read. `inputs` are its
/// operands and `args` their block arguments.
struct Elementwise {
  linalg::LinalgOp op;
  SmallVector<Value> inputs;
  SmallVector<BlockArgument> args;
};

static std::optional<Elementwise> matchElementwise(Operation *op,
                                                   unsigned numInputs) {
  auto linalgOp = dyn_cast_if_present<linalg::LinalgOp>(op);
  if (!linalgOp || !linalgOp.hasPureTensorSemantics() ||
      linalgOp.getNumDpsInputs() != numInputs ||
      linalgOp.getNumDpsInits() != 1 || op->getNumResults() != 1 ||
      linalgOp.getNumParallelLoops() != linalgOp.getNumLoops() ||
      !linalgOp.getBlock())
    return std::nullopt;
  // The payload must not read the init: the result is a pure function of
  // the inputs.
  if (linalgOp.payloadUsesValueFromOperand(linalgOp.getDpsInitOperand(0)))
    return std::nullopt;
  AffineMap outMap =
      linalgOp.getMatchingIndexingMap(linalgOp.getDpsInitOperand(0));
  if (!outMap.isIdentity())
    return std::nullopt;
  Elementwise result{linalgOp, {}, {}};
  for (OpOperand *input : linalgOp.getDpsInputOperands()) {
    result.inputs.push_back(input->get());
    result.args.push_back(linalgOp.getMatchingBlockArgument(input));
  }
  return result;
}

/// Like matchElementwise, but every input must be indexed by the identity
/// and have the result's type.
static std::optional<Elementwise> matchPlainElementwise(Operation *op,
                                                        unsigned numInputs) {
  std::optional<Elementwise> ew = matchElementwise(op, numInputs);
  if (!ew)
    return std::nullopt;
  Type resultType = op->getResult(0).getType();
  for (OpOperand *input : ew->op.getDpsInputOperands())
    if (!ew->op.getMatchingIndexingMap(input).isIdentity() ||
        input->get().getType() != resultType)
      return std::nullopt;
  return ew;
}

/// A contraction out[b..., i, j] = Σₖ lhs[b..., i, k] · rhs[b..., k, j] with
/// a zero-filled accumulator, where each operand and the output may hold its
/// dimensions in any order: linalg.matmul (any indexing maps), batch_matmul,
/// and einsum-style generics, such as StableHLO's dot_general on
/// [B, N, H, D] tensors ("bnhd,bmhd->bhnm"). The operands may come in either
/// order (`lhs` is the one whose free dimension comes first in the output).
/// The batch dimensions are taken in the order the output lists them.
struct Contraction {
  Value lhs, rhs;
  /// linalg.transpose permutations that bring lhs to [b..., i, k] and rhs to
  /// [b..., k, j].
  SmallVector<int64_t> lhsPerm, rhsPerm;
  /// The permutation that takes the product [b..., i, j] to the output.
  SmallVector<int64_t> outPerm;
};

/// `permutation` followed by a swap of the last two dimensions.
static SmallVector<int64_t> withLastTwoSwapped(ArrayRef<int64_t> permutation) {
  SmallVector<int64_t> result(permutation);
  size_t rank = result.size();
  if (rank >= 2)
    std::swap(result[rank - 1], result[rank - 2]);
  return result;
}

static std::optional<Contraction> matchContraction(Operation *op) {
  auto linalgOp = dyn_cast_if_present<linalg::LinalgOp>(op);
  if (!linalgOp || !linalgOp.hasPureTensorSemantics() ||
      linalgOp.getNumDpsInputs() != 2 || linalgOp.getNumDpsInits() != 1 ||
      op->getNumResults() != 1 || !linalgOp.getBlock())
    return std::nullopt;
  Value lhs = linalgOp.getDpsInputOperand(0)->get();
  Value rhs = linalgOp.getDpsInputOperand(1)->get();
  Value init = linalgOp.getDpsInitOperand(0)->get();
  Type resultType = op->getResult(0).getType();
  if (!isLinAttnTensor(lhs.getType()) || !isLinAttnTensor(rhs.getType()) ||
      !isLinAttnTensor(resultType) ||
      getElementTypeOrSelf(lhs) != getElementTypeOrSelf(resultType) ||
      getElementTypeOrSelf(rhs) != getElementTypeOrSelf(resultType) ||
      !isZeroFilled(init))
    return std::nullopt;

  // Body: yield out + lhs * rhs, and nothing else.
  Block *body = linalgOp.getBlock();
  if (body->getNumArguments() != 3 ||
      !llvm::hasNItems(body->without_terminator(), 2))
    return std::nullopt;
  Value product = matchCommutativeWith<arith::AddFOp>(getYielded(linalgOp),
                                                      body->getArgument(2));
  Value other =
      matchCommutativeWith<arith::MulFOp>(product, body->getArgument(0));
  if (!other || other != body->getArgument(1))
    return std::nullopt;

  // Loops: batch dims in all three maps, i in lhs and out, j in rhs and out,
  // k (the only reduction) in lhs and rhs.
  SmallVector<AffineMap> maps = linalgOp.getIndexingMapsArray();
  if (maps.size() != 3 || !llvm::all_of(maps, [](AffineMap map) {
        return map.isProjectedPermutation() && map.getNumSymbols() == 0;
      }))
    return std::nullopt;
  SmallVector<utils::IteratorType> iterators = linalgOp.getIteratorTypesArray();
  unsigned numLoops = iterators.size();
  auto uses = [&](AffineMap map, unsigned dim) {
    return map.isFunctionOfDim(dim);
  };
  int64_t iDim = -1, jDim = -1, kDim = -1;
  for (unsigned d = 0; d < numLoops; ++d) {
    bool inL = uses(maps[0], d), inR = uses(maps[1], d), inO = uses(maps[2], d);
    bool parallel = iterators[d] == utils::IteratorType::parallel;
    if (parallel && inL && inR && inO)
      continue; // batch
    int64_t *slot = nullptr;
    if (parallel && inL && !inR && inO)
      slot = &iDim;
    else if (parallel && !inL && inR && inO)
      slot = &jDim;
    else if (!parallel && inL && inR && !inO)
      slot = &kDim;
    if (!slot || *slot != -1)
      return std::nullopt;
    *slot = d;
  }
  if (iDim < 0 || jDim < 0 || kDim < 0)
    return std::nullopt;

  auto dimsOf = [](AffineMap map) {
    SmallVector<int64_t> dims;
    for (AffineExpr expr : map.getResults())
      dims.push_back(cast<AffineDimExpr>(expr).getPosition());
    return dims;
  };
  SmallVector<int64_t> out = dimsOf(maps[2]), l = dimsOf(maps[0]),
                       r = dimsOf(maps[1]);
  size_t rank = out.size();
  if (rank < 2 || l.size() != rank || r.size() != rank)
    return std::nullopt;
  // An einsum may list the operands the other way round ("de,nd->ne"): the
  // products commute, so the operand whose free dimension comes first in
  // the output is the left one.
  if (llvm::find(out, jDim) < llvm::find(out, iDim)) {
    std::swap(lhs, rhs);
    std::swap(l, r);
    std::swap(iDim, jDim);
  }
  SmallVector<int64_t> batch;
  for (int64_t d : out)
    if (d != iDim && d != jDim)
      batch.push_back(d);
  // The permutation that reads `layout` (loop dimensions) from `dims`.
  auto permutationTo = [](ArrayRef<int64_t> dims, ArrayRef<int64_t> layout) {
    SmallVector<int64_t> permutation;
    for (int64_t d : layout)
      permutation.push_back(llvm::find(dims, d) - dims.begin());
    return permutation;
  };
  auto withTrailing = [&](int64_t a, int64_t b) {
    SmallVector<int64_t> layout(batch);
    layout.append({a, b});
    return layout;
  };
  return Contraction{lhs, rhs, permutationTo(l, withTrailing(iDim, kDim)),
                     permutationTo(r, withTrailing(kDim, jDim)),
                     permutationTo(withTrailing(iDim, jDim), out)};
}

//===----------------------------------------------------------------------===//
// Undoing transposes
//===----------------------------------------------------------------------===//

/// True when `permutation` swaps the last two dimensions and keeps the rest.
static bool swapsLastTwo(ArrayRef<int64_t> permutation) {
  size_t rank = permutation.size();
  if (rank < 2)
    return false;
  return isIdentityPermutation(permutation.drop_back(2)) &&
         permutation[rank - 2] == static_cast<int64_t>(rank - 1) &&
         permutation[rank - 1] == static_cast<int64_t>(rank - 2);
}

/// A tensor in the layout a linattn op wants: `source` transposed by
/// `permutation` (not at all when it is empty), then collapsed as `collapse`
/// collapses (with its two trailing dimensions swapped).
struct Untransposed {
  Value source;
  tensor::CollapseShapeOp collapse;
  SmallVector<int64_t> permutation;
};

/// How to get `value` transposed by `permutation`, reusing the transpose
/// that produces `value` where there is one: its source, transposed by the
/// two permutations composed unless they cancel (one transpose that also
/// moves the heads, [N, L, H, D] to [N, H, D, L], read with its last two
/// dimensions swapped gives [N, H, L, D]). A swap of the last two may also
/// look through a tensor.collapse_shape that leaves them alone (torch-mlir
/// collapses [B, H] after transposing). Otherwise `value` itself is
/// transposed, but only when its last dimension stays last: the
/// [B, N, H, D] layouts of attention move the heads, while a contraction
/// that reads an operand with its features first, such as the weight
/// [F, M] of X·W₁·W₂, is a chain of products and not attention, unless the
/// IR transposes that operand itself.
static std::optional<Untransposed> findInLayout(Value value,
                                                ArrayRef<int64_t> permutation) {
  if (isIdentityPermutation(permutation))
    return Untransposed{value, {}, {}};
  Value current = value;
  tensor::CollapseShapeOp collapse;
  SmallVector<int64_t> outer(permutation);
  if (auto found = value.getDefiningOp<tensor::CollapseShapeOp>();
      found && swapsLastTwo(permutation)) {
    SmallVector<ReassociationIndices> groups = found.getReassociationIndices();
    int64_t srcRank = found.getSrcType().getRank();
    if (groups.size() >= 2 && groups.back().size() == 1 &&
        groups[groups.size() - 2].size() == 1 &&
        groups.back().front() == srcRank - 1 &&
        groups[groups.size() - 2].front() == srcRank - 2 &&
        found.getSrc().getDefiningOp<linalg::TransposeOp>()) {
      collapse = found;
      current = found.getSrc();
      outer =
          withLastTwoSwapped(llvm::to_vector(llvm::seq<int64_t>(0, srcRank)));
    }
  }
  if (auto transpose = current.getDefiningOp<linalg::TransposeOp>()) {
    ArrayRef<int64_t> inner = transpose.getPermutation();
    SmallVector<int64_t> composed = applyPermutation(inner, outer);
    if (isIdentityPermutation(composed))
      composed.clear();
    return Untransposed{transpose.getInput(), collapse, composed};
  }
  if (!keepsLastDimension(permutation))
    return std::nullopt;
  return Untransposed{value, {}, SmallVector<int64_t>(permutation)};
}

static Value materializeUntransposed(PatternRewriter &rewriter, Location loc,
                                     Untransposed found) {
  Value source = found.source;
  if (!found.permutation.empty())
    source = createTranspose(rewriter, loc, source, found.permutation);
  if (!found.collapse)
    return source;
  RankedTensorType collapsedType = found.collapse.getResultType();
  SmallVector<int64_t> shape(collapsedType.getShape());
  std::swap(shape[shape.size() - 1], shape[shape.size() - 2]);
  return tensor::CollapseShapeOp::create(
      rewriter, loc, collapsedType.clone(shape), source,
      found.collapse.getReassociationIndices());
}

/// The result of a raised op in the layout of the contraction it replaces:
/// `product` transposed by the contraction's output permutation.
static Value inOutputLayout(PatternRewriter &rewriter, Location loc,
                            Value product, const Contraction &contraction) {
  if (isIdentityPermutation(contraction.outPerm))
    return product;
  return createTranspose(rewriter, loc, product, contraction.outPerm);
}

/// The type of the product [b..., i, j] of a contraction whose output, of
/// type `outputType`, is that product transposed by `outPerm`.
static RankedTensorType productType(RankedTensorType outputType,
                                    ArrayRef<int64_t> outPerm) {
  return outputType.clone(applyPermutation(outputType.getShape(),
                                           invertPermutationVector(outPerm)));
}

//===----------------------------------------------------------------------===//
// Scale and causal mask between the contractions
//===----------------------------------------------------------------------===//

/// A constant scale: x * c, c * x or x / c in an elementwise op with one
/// input. Returns the factor.
static std::optional<double> matchScale(Elementwise ew) {
  Value yielded = getYielded(ew.op);
  Value x = ew.args[0];
  if (Value c = matchCommutativeWith<arith::MulFOp>(yielded, x))
    return getConstantFloat(c);
  if (auto div = yielded.getDefiningOp<arith::DivFOp>();
      div && div.getLhs() == x) {
    std::optional<double> c = getConstantFloat(div.getRhs());
    if (c && *c != 0.0 && std::isfinite(1.0 / *c))
      return 1.0 / *c;
  }
  return std::nullopt;
}

/// The dimension that a linalg.index value reads, or -1.
static int64_t indexDim(Value value) {
  auto index = value ? value.getDefiningOp<linalg::IndexOp>() : nullptr;
  return index ? static_cast<int64_t>(index.getDim()) : -1;
}

/// The predicate that holds for (b, a) when `pred` holds for (a, b).
static arith::CmpIPredicate swapOperands(arith::CmpIPredicate pred) {
  using P = arith::CmpIPredicate;
  switch (pred) {
  case P::slt:
    return P::sgt;
  case P::sgt:
    return P::slt;
  case P::sle:
    return P::sge;
  case P::sge:
    return P::sle;
  case P::ult:
    return P::ugt;
  case P::ugt:
    return P::ult;
  case P::ule:
    return P::uge;
  case P::uge:
    return P::ule;
  case P::eq:
  case P::ne:
    return pred;
  }
  return pred;
}

/// True when `cmp` (on linalg.index values) holds exactly when j <= i, with
/// i the query dimension `iDim` and j the key dimension `jDim`; `negated`
/// asks for exactly j > i instead.
static bool isInclusiveLowerCompare(arith::CmpIOp cmp, int64_t iDim,
                                    int64_t jDim, bool negated) {
  if (!cmp)
    return false;
  int64_t a = indexDim(cmp.getLhs()), b = indexDim(cmp.getRhs());
  using P = arith::CmpIPredicate;
  P pred = cmp.getPredicate();
  // Indices are non-negative: signed and unsigned orders agree.
  // Normalize to "j pred i".
  if (a == iDim && b == jDim)
    pred = swapOperands(pred);
  else if (!(a == jDim && b == iDim))
    return false;
  if (!negated)
    return pred == P::sle || pred == P::ule;
  return pred == P::sgt || pred == P::ugt;
}

/// A causal mask that keeps exactly aᵢⱼ with j <= i and zeroes the rest:
/// select(j <= i, a, 0), select(j > i, 0, a), or a * L with L a constant of
/// lower-triangular ones (inclusive).
static bool matchCausalMask(Elementwise ew) {
  auto resultType = cast<RankedTensorType>(ew.op->getResult(0).getType());
  int64_t rank = resultType.getRank();
  if (rank < 2)
    return false;
  Value yielded = getYielded(ew.op);
  if (ew.inputs.size() == 1) {
    auto select = yielded.getDefiningOp<arith::SelectOp>();
    if (!select)
      return false;
    auto cmp = select.getCondition().getDefiningOp<arith::CmpIOp>();
    Value x = ew.args[0];
    if (select.getTrueValue() == x &&
        matchPattern(select.getFalseValue(), m_AnyZeroFloat()))
      return isInclusiveLowerCompare(cmp, rank - 2, rank - 1, false);
    if (select.getFalseValue() == x &&
        matchPattern(select.getTrueValue(), m_AnyZeroFloat()))
      return isInclusiveLowerCompare(cmp, rank - 2, rank - 1, true);
    return false;
  }
  if (ew.inputs.size() != 2 ||
      matchCommutativeWith<arith::MulFOp>(yielded, ew.args[0]) != ew.args[1])
    return false;
  // The mask is the second input, indexed by the identity or by the two
  // trailing dimensions only (broadcast over the batch).
  AffineMap maskMap = ew.op.getMatchingIndexingMap(ew.op.getDpsInputOperand(1));
  AffineMap scoresMap =
      ew.op.getMatchingIndexingMap(ew.op.getDpsInputOperand(0));
  if (!scoresMap.isIdentity() ||
      !(maskMap.isIdentity() || maskMap == AffineMap::getMinorIdentityMap(
                                               rank, 2, ew.op->getContext())))
    return false;
  DenseFPElementsAttr mask;
  if (!matchPattern(ew.inputs[1], m_Constant(&mask)))
    return false;
  auto maskType = cast<ShapedType>(mask.getType());
  if (!maskType.hasStaticShape() || maskType.getRank() < 2)
    return false;
  int64_t rows = maskType.getDimSize(maskType.getRank() - 2);
  int64_t cols = maskType.getDimSize(maskType.getRank() - 1);
  if (rows != cols)
    return false;
  int64_t index = 0;
  for (APFloat value : mask.getValues<APFloat>()) {
    int64_t i = (index / cols) % rows, j = index % cols;
    ++index;
    if (value.convertToDouble() != (j <= i ? 1.0 : 0.0))
      return false;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// RaiseAttentionContractions
//===----------------------------------------------------------------------===//

namespace {
/// contraction(mask(scale(contraction(X, Yᵀ))), V)
///   -> apply_scores(scores(X, Y [causal] [scale(s)]), V)
///
/// The scores replace the last value of the chain (the masked, scaled
/// scores), so that other users of it, such as a row sum, read them too.
struct RaiseAttentionContractions
    : OpInterfaceRewritePattern<linalg::LinalgOp> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;

  LogicalResult matchAndRewrite(linalg::LinalgOp op,
                                PatternRewriter &rewriter) const override {
    std::optional<Contraction> apply = matchContraction(op);
    if (!apply)
      return rewriter.notifyMatchFailure(op, "not a plain contraction");
    if (!isIdentityPermutation(apply->lhsPerm))
      return rewriter.notifyMatchFailure(op, "scores are used transposed");
    std::optional<Untransposed> values =
        findInLayout(apply->rhs, apply->rhsPerm);
    if (!values)
      return rewriter.notifyMatchFailure(op, "values are not [.., M, Dv]");

    // Walk from the applied scores to the score contraction through at most
    // one scale and one causal mask, in either order.
    Value applied = apply->lhs;
    Value current = applied;
    std::optional<double> scale;
    bool causal = false;
    std::optional<Contraction> scores;
    for (int steps = 0; steps < 3 && !scores; ++steps) {
      Operation *producer = current.getDefiningOp();
      if ((scores = matchContraction(producer)))
        break;
      std::optional<Elementwise> ew = matchElementwise(producer, 1);
      if (!ew)
        ew = matchElementwise(producer, 2);
      if (!ew || ew->inputs[0].getType() != current.getType() ||
          !ew->op.getMatchingIndexingMap(ew->op.getDpsInputOperand(0))
               .isIdentity())
        return rewriter.notifyMatchFailure(
            op, "the applied scores are not a product, a scaled product or "
                "a causally masked product");
      if (!scale && ew->inputs.size() == 1 && (scale = matchScale(*ew))) {
        current = ew->inputs[0];
        continue;
      }
      if (!causal && matchCausalMask(*ew)) {
        causal = true;
        current = ew->inputs[0];
        continue;
      }
      return rewriter.notifyMatchFailure(
          op, "an elementwise op between the products is neither a constant "
              "scale nor an inclusive causal mask");
    }
    if (!scores)
      return rewriter.notifyMatchFailure(op, "no score contraction found");
    if (!isIdentityPermutation(scores->outPerm))
      return rewriter.notifyMatchFailure(
          op, "the score product is not laid out as [batch..., N, M]");
    if (!std::isfinite(scale.value_or(1.0)))
      return rewriter.notifyMatchFailure(op, "scale is not finite");
    std::optional<Untransposed> queries =
        findInLayout(scores->lhs, scores->lhsPerm);
    std::optional<Untransposed> keys =
        findInLayout(scores->rhs, withLastTwoSwapped(scores->rhsPerm));
    if (!queries || !keys)
      return rewriter.notifyMatchFailure(
          op, "query or key features are transposed by no op to reuse");

    auto scoresType = cast<RankedTensorType>(applied.getType());
    Location loc = op->getLoc();
    // The scores replace `applied`, whose users may come before `op`:
    // create them right after its producer, which the features dominate.
    Operation *appliedProducer = applied.getDefiningOp();
    if (!appliedProducer)
      return rewriter.notifyMatchFailure(op, "applied scores have no producer");
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointAfter(appliedProducer);
    Value queryFeatures = materializeUntransposed(rewriter, loc, *queries);
    Value keyFeatures = materializeUntransposed(rewriter, loc, *keys);
    FloatAttr scaleAttr =
        scale && *scale != 1.0 ? rewriter.getF64FloatAttr(*scale) : FloatAttr();
    auto newScores = ScoresOp::create(rewriter, loc, scoresType, queryFeatures,
                                      keyFeatures, causal, scaleAttr);
    rewriter.replaceAllUsesWith(applied, newScores.getResult());
    rewriter.setInsertionPoint(op);
    Value valueTensor = materializeUntransposed(rewriter, loc, *values);
    auto output = ApplyScoresOp::create(
        rewriter, loc,
        productType(cast<RankedTensorType>(op->getResult(0).getType()),
                    apply->outPerm),
        newScores.getResult(), valueTensor, FloatAttr());
    rewriter.replaceOp(op, inOutputLayout(rewriter, loc, output, *apply));
    return success();
  }
};
} // namespace

//===----------------------------------------------------------------------===//
// RaiseRowSumNormalization
//===----------------------------------------------------------------------===//

/// A sum of `a` over one of its dimensions (the others kept, in order) into
/// zeros. Returns a and the summed dimension.
static std::optional<std::pair<Value, int64_t>> matchSum(Value value) {
  auto op = dyn_cast_if_present<linalg::LinalgOp>(value.getDefiningOp());
  if (!op || !op.hasPureTensorSemantics() || op.getNumDpsInputs() != 1 ||
      op.getNumDpsInits() != 1 || op->getNumResults() != 1 || !op.getBlock() ||
      op.getNumReductionLoops() != 1 ||
      !isZeroFilled(op.getDpsInitOperand(0)->get()))
    return std::nullopt;
  Value input = op.getDpsInputOperand(0)->get();
  auto inputType = dyn_cast<RankedTensorType>(input.getType());
  if (!inputType || inputType.getRank() < 1)
    return std::nullopt;
  int64_t rank = inputType.getRank();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  if (static_cast<int64_t>(iterators.size()) != rank)
    return std::nullopt;
  int64_t reduced =
      llvm::find(iterators, utils::IteratorType::reduction) - iterators.begin();
  AffineMap inMap = op.getMatchingIndexingMap(op.getDpsInputOperand(0));
  AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  if (!inMap.isIdentity() ||
      outMap != AffineMap::getMultiDimIdentityMap(rank, op->getContext())
                    .dropResult(reduced))
    return std::nullopt;
  Block *body = op.getBlock();
  if (body->getNumArguments() != 2 ||
      matchCommutativeWith<arith::AddFOp>(
          getYielded(op), body->getArgument(0)) != body->getArgument(1))
    return std::nullopt;
  return std::make_pair(input, reduced);
}

/// A sum of `a` over its dimension `rank - 1 - fromEnd`: rowsum(a) with
/// fromEnd = 0, the sum over the tokens of features [..., M, F] with
/// fromEnd = 1. Returns a.
static Value matchSumOver(Value value, int64_t fromEnd) {
  std::optional<std::pair<Value, int64_t>> sum = matchSum(value);
  if (!sum ||
      sum->second !=
          cast<RankedTensorType>(sum->first.getType()).getRank() - 1 - fromEnd)
    return {};
  return sum->first;
}

static Value matchRowSum(Value value) { return matchSumOver(value, 0); }

/// `value` + eps with eps a constant, as an elementwise op with one input;
/// returns the input and eps.
static std::optional<std::pair<Value, double>> matchPlusEps(Value value) {
  std::optional<Elementwise> ew =
      matchPlainElementwise(value.getDefiningOp(), 1);
  if (!ew)
    return std::nullopt;
  Value c =
      matchCommutativeWith<arith::AddFOp>(getYielded(ew->op), ew->args[0]);
  std::optional<double> eps = getConstantFloat(c);
  if (!eps)
    return std::nullopt;
  return std::make_pair(ew->inputs[0], *eps);
}

/// The divisor d and eps of a denominator `den` = d + eps, where the eps is
/// either `bodyEps` (added inside the consumer's body) or added by an
/// elementwise op producing `den`.
static std::optional<std::pair<Value, double>>
matchDenominator(Value den, std::optional<double> bodyEps) {
  if (bodyEps)
    return std::make_pair(den, *bodyEps);
  return matchPlusEps(den);
}

/// In a body, `value` = `arg` + c or `arg`: returns (is arg, c).
static std::optional<std::optional<double>> matchArgPlusConstant(Value value,
                                                                 Value arg) {
  if (value == arg)
    return std::optional<double>();
  if (Value c = matchCommutativeWith<arith::AddFOp>(value, arg))
    if (std::optional<double> eps = getConstantFloat(c))
      return std::optional<double>(*eps);
  return std::nullopt;
}

/// A divisor per row and the eps added to it.
struct RowDivision {
  Value divisor;
  double eps;
  /// The dimension of the rows [b..., N] that each dimension of `divisor`
  /// is.
  SmallVector<int64_t> labels;
};

/// The row division of a normalization: `ew` (two inputs) divides its first
/// input, indexed by the identity, by a divisor per row broadcast along Dv.
/// The first input is the rows [b..., N, Dv] transposed by `outPerm`; the
/// divisor is the second input, which lists the dimensions of [b..., N] in
/// any order (or, when `keptDim`, is [b..., N, 1] and the rows are not
/// transposed), and holds d + eps. It may divide by it, or multiply by its
/// reciprocal computed elementwise; the eps may be added in either body or
/// by an elementwise op of its own. Returns d, eps and d's layout.
static std::optional<RowDivision>
matchRowDivision(Elementwise ew, ArrayRef<int64_t> outPerm, bool keptDim) {
  MLIRContext *ctx = ew.op->getContext();
  int64_t rank = outPerm.size();
  if (!ew.op.getMatchingIndexingMap(ew.op.getDpsInputOperand(0)).isIdentity())
    return std::nullopt;
  AffineMap divisorMap =
      ew.op.getMatchingIndexingMap(ew.op.getDpsInputOperand(1));
  SmallVector<int64_t> labels;
  if (keptDim) {
    AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, ctx);
    auto divisorType = dyn_cast<RankedTensorType>(ew.inputs[1].getType());
    if (!isIdentityPermutation(outPerm) ||
        divisorMap != identity.replace(getAffineDimExpr(rank - 1, ctx),
                                       getAffineConstantExpr(0, ctx), rank,
                                       0) ||
        !divisorType || divisorType.getRank() != rank ||
        divisorType.getDimSize(rank - 1) != 1)
      return std::nullopt;
    labels = llvm::to_vector(llvm::seq<int64_t>(0, rank - 1));
  } else {
    // Every dimension of the rows but Dv, in any order.
    if (!divisorMap.isProjectedPermutation() ||
        divisorMap.getNumResults() != rank - 1)
      return std::nullopt;
    for (unsigned e = 0; e < divisorMap.getNumResults(); ++e) {
      int64_t label = outPerm[divisorMap.getDimPosition(e)];
      if (label == rank - 1)
        return std::nullopt;
      labels.push_back(label);
    }
  }
  auto withLabels = [&](std::optional<std::pair<Value, double>> found)
      -> std::optional<RowDivision> {
    if (!found)
      return std::nullopt;
    return RowDivision{found->first, found->second, labels};
  };
  Value yielded = getYielded(ew.op);
  Value out = ew.args[0], den = ew.args[1];
  if (auto div = yielded.getDefiningOp<arith::DivFOp>();
      div && div.getLhs() == out) {
    // out / den or out / (den + eps)
    if (auto bodyEps = matchArgPlusConstant(div.getRhs(), den))
      return withLabels(matchDenominator(ew.inputs[1], *bodyEps));
    return std::nullopt;
  }
  if (matchCommutativeWith<arith::MulFOp>(yielded, out) != den)
    return std::nullopt;
  // out * r with r = 1 / (den + eps) computed elementwise.
  std::optional<Elementwise> recip =
      matchPlainElementwise(ew.inputs[1].getDefiningOp(), 1);
  if (!recip)
    return std::nullopt;
  auto rdiv = getYielded(recip->op).getDefiningOp<arith::DivFOp>();
  if (!rdiv || !isConstantFloat(rdiv.getLhs(), 1.0))
    return std::nullopt;
  if (auto bodyEps = matchArgPlusConstant(rdiv.getRhs(), recip->args[0]))
    return withLabels(matchDenominator(recip->inputs[0], *bodyEps));
  return std::nullopt;
}

/// `value`, whose dimensions are those of some [b..., N] listed in
/// `labels`' order, in that order: itself, or the source of the
/// linalg.transpose that produced it in that order; null otherwise.
static Value inLabelOrder(Value value, ArrayRef<int64_t> labels) {
  if (isIdentityPermutation(labels))
    return value;
  auto transpose = value.getDefiningOp<linalg::TransposeOp>();
  if (!transpose || transpose.getPermutation() != labels)
    return {};
  return transpose.getInput();
}

/// The op of type OpTy that produces `value`, maybe through one
/// linalg.transpose, and the permutation that reads `value` from its result
/// (the identity when none).
template <typename OpTy>
static std::pair<OpTy, SmallVector<int64_t>> findMaybeTransposed(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type)
    return {};
  int64_t rank = type.getRank();
  if (auto transpose = value.getDefiningOp<linalg::TransposeOp>())
    return {transpose.getInput().getDefiningOp<OpTy>(),
            SmallVector<int64_t>(transpose.getPermutation())};
  return {value.getDefiningOp<OpTy>(),
          llvm::to_vector(llvm::seq<int64_t>(0, rank))};
}

namespace {
/// apply_scores(A, V) / (rowsum(A) + eps)  -> apply_scores(A, V normalize)
///
/// The division is an elementwise op over the output [..., N, Dv] whose
/// second input is indexed by [..., N] (broadcast over Dv). It may divide by
/// the denominator, or multiply by its reciprocal computed elementwise.
struct RaiseRowSumNormalization : OpInterfaceRewritePattern<linalg::LinalgOp> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;

  LogicalResult matchAndRewrite(linalg::LinalgOp op,
                                PatternRewriter &rewriter) const override {
    std::optional<Elementwise> ew = matchElementwise(op, 2);
    if (!ew)
      return rewriter.notifyMatchFailure(op, "not a binary elementwise op");
    auto [apply, outPerm] = findMaybeTransposed<ApplyScoresOp>(ew->inputs[0]);
    if (!apply || apply.isNormalized() ||
        ew->inputs[0].getType() != op->getResult(0).getType())
      return rewriter.notifyMatchFailure(
          op, "does not divide an unnormalized linattn.apply_scores, maybe "
              "transposed");
    std::optional<RowDivision> normalizer =
        matchRowDivision(*ew, outPerm, /*keptDim=*/false);
    Value summed =
        normalizer
            ? matchRowSum(inLabelOrder(normalizer->divisor, normalizer->labels))
            : Value();
    if (!summed)
      return rewriter.notifyMatchFailure(
          op, "not a division by the row sums of the scores plus eps");
    if (summed != apply.getScores())
      return rewriter.notifyMatchFailure(
          op, "the row sums are not those of the applied scores");
    double eps = normalizer->eps;
    if (!std::isfinite(eps) || eps <= 0.0)
      return rewriter.notifyMatchFailure(
          op, "eps must be positive and finite to normalize");
    Location loc = op->getLoc();
    Value result =
        ApplyScoresOp::create(rewriter, loc, apply.getType(), apply.getScores(),
                              apply.getValues(), rewriter.getF64FloatAttr(eps));
    if (!isIdentityPermutation(outPerm))
      result = createTranspose(rewriter, loc, result, outPerm);
    rewriter.replaceOp(op, result);
    return success();
  }
};
} // namespace

//===----------------------------------------------------------------------===//
// RaiseLinearContractions
//===----------------------------------------------------------------------===//

namespace {
/// contraction(X, contraction(Yᵀ, V))  -> query_readout(X, kv_summary(Y, V))
///
/// The linear form as written: the summary S = YᵀV (its left operand Y
/// transposed by an op to reuse, or read transposed by the contraction's
/// indexing maps), then the readout XS. The summary's other users, if any,
/// read the kv_summary's state.
struct RaiseLinearContractions : OpInterfaceRewritePattern<linalg::LinalgOp> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;

  LogicalResult matchAndRewrite(linalg::LinalgOp op,
                                PatternRewriter &rewriter) const override {
    std::optional<Contraction> readout = matchContraction(op);
    if (!readout)
      return rewriter.notifyMatchFailure(op, "not a plain contraction");
    // The summary as computed: torch-mlir expands each batched product back
    // to [B, H, ...] and collapses it again for the next.
    Value summaryValue = readout->rhs;
    if (auto collapse = summaryValue.getDefiningOp<tensor::CollapseShapeOp>())
      if (auto expand =
              collapse.getSrc().getDefiningOp<tensor::ExpandShapeOp>())
        if (expand.getSrc().getType() == collapse.getResultType() &&
            expand.getReassociationIndices() ==
                collapse.getReassociationIndices())
          summaryValue = expand.getSrc();
    Operation *summaryOp = summaryValue.getDefiningOp();
    std::optional<Contraction> summary = matchContraction(summaryOp);
    if (!summary)
      return rewriter.notifyMatchFailure(
          op, "the right operand is not a plain contraction");
    // S[f, dv] = Σₘ Y[m, f] V[m, dv]: the summary's left operand is Y with
    // its two trailing dimensions swapped. A readout that reads its right
    // operand transposed reads Sᵀ = VᵀY (an einsum "...md,...mf->...fd"):
    // its operands swapped, each read transposed, are the summary's. The
    // readout must then be Sᵀ's only user, which the raised summary does
    // not replace.
    if (!isIdentityPermutation(summary->outPerm))
      return rewriter.notifyMatchFailure(
          op, "the summary is not laid out as [batch..., F, Dv] or its "
              "transpose");
    bool transposed = swapsLastTwo(readout->rhsPerm);
    if (!transposed && !isIdentityPermutation(readout->rhsPerm))
      return rewriter.notifyMatchFailure(
          op, "the readout reads the summary's batch dimensions reordered");
    if (transposed) {
      for (Value v = readout->rhs;; v = v.getDefiningOp()->getOperand(0)) {
        if (!v.hasOneUse())
          return rewriter.notifyMatchFailure(
              op, "the transposed summary has other users");
        if (v == summaryValue)
          break;
      }
      *summary = Contraction{
          summary->rhs, summary->lhs, withLastTwoSwapped(summary->rhsPerm),
          withLastTwoSwapped(summary->lhsPerm), summary->outPerm};
    }
    std::optional<Untransposed> keys =
        findInLayout(summary->lhs, withLastTwoSwapped(summary->lhsPerm));
    std::optional<Untransposed> values =
        findInLayout(summary->rhs, summary->rhsPerm);
    std::optional<Untransposed> queries =
        findInLayout(readout->lhs, readout->lhsPerm);
    if (!keys || !values || !queries)
      return rewriter.notifyMatchFailure(
          op, "an operand is transposed by no op to reuse");

    Location loc = op->getLoc();
    auto stateType = cast<RankedTensorType>(summaryValue.getType());
    if (transposed) {
      SmallVector<int64_t> shape(stateType.getShape());
      std::swap(shape[shape.size() - 1], shape[shape.size() - 2]);
      stateType = stateType.clone(shape);
    }
    auto normalizerType = RankedTensorType::get(
        stateType.getShape().drop_back(), stateType.getElementType());
    // The summary replaces the contraction's result for all its users:
    // create it right after the contraction, which its operands dominate.
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointAfter(summaryOp);
    Value keyFeatures = materializeUntransposed(rewriter, loc, *keys);
    Value valueTensor = materializeUntransposed(rewriter, loc, *values);
    auto kv = KvSummaryOp::create(rewriter, loc, stateType, normalizerType,
                                  keyFeatures, valueTensor);
    if (!transposed)
      rewriter.replaceAllUsesWith(summaryValue, kv.getState());
    rewriter.setInsertionPoint(op);
    Value queryFeatures = materializeUntransposed(rewriter, loc, *queries);
    auto output = QueryReadoutOp::create(
        rewriter, loc,
        productType(cast<RankedTensorType>(op->getResult(0).getType()),
                    readout->outPerm),
        queryFeatures, kv.getState(),
        /*normalizer=*/Value(), /*eps=*/FloatAttr());
    rewriter.replaceOp(op, inOutputLayout(rewriter, loc, output, *readout));
    return success();
  }
};
} // namespace

//===----------------------------------------------------------------------===//
// RaiseReadoutNormalization
//===----------------------------------------------------------------------===//

/// True when `a` and `b` are the same tensor: the same value, or the same
/// reshapes or transposes of the same tensor (an importer's copies of one
/// tensor.collapse_shape, before CSE).
static bool isSameTensor(Value a, Value b, int depth = 0) {
  if (a == b)
    return true;
  if (depth > 4 || !a || !b || a.getType() != b.getType())
    return false;
  Operation *x = a.getDefiningOp(), *y = b.getDefiningOp();
  if (!x || !y || x->getName() != y->getName())
    return false;
  if (auto cx = dyn_cast<tensor::CollapseShapeOp>(x))
    return cx.getReassociationIndices() ==
               cast<tensor::CollapseShapeOp>(y).getReassociationIndices() &&
           isSameTensor(cx.getSrc(), cast<tensor::CollapseShapeOp>(y).getSrc(),
                        depth + 1);
  if (auto ex = dyn_cast<tensor::ExpandShapeOp>(x))
    return ex.getReassociationIndices() ==
               cast<tensor::ExpandShapeOp>(y).getReassociationIndices() &&
           isSameTensor(ex.getSrc(), cast<tensor::ExpandShapeOp>(y).getSrc(),
                        depth + 1);
  if (auto tx = dyn_cast<linalg::TransposeOp>(x))
    return tx.getPermutation() ==
               cast<linalg::TransposeOp>(y).getPermutation() &&
           isSameTensor(tx.getInput(), cast<linalg::TransposeOp>(y).getInput(),
                        depth + 1);
  return false;
}

/// `value` without a tensor.collapse_shape of its leading (batch)
/// dimensions that keeps its `trailing` last dimensions apart: the collapse's
/// source and its groups of batch dimensions (none when there is no such
/// collapse).
static std::pair<Value, SmallVector<ReassociationIndices>>
stripBatchCollapse(Value value, size_t trailing) {
  auto collapse = value.getDefiningOp<tensor::CollapseShapeOp>();
  if (!collapse)
    return {value, {}};
  SmallVector<ReassociationIndices> groups = collapse.getReassociationIndices();
  if (groups.size() < trailing)
    return {value, {}};
  for (size_t g = groups.size() - trailing; g < groups.size(); ++g)
    if (groups[g].size() != 1)
      return {value, {}};
  groups.resize(groups.size() - trailing);
  return {collapse.getSrc(), groups};
}

/// True when `vector` [b..., F] (or [b..., F, 1] when `keptDim`) holds
/// Σₘ Y[b..., m, f] for `keys` Y [b..., M, F]: the sum over the tokens of the
/// same features, where both may be behind collapses of the same batch
/// dimensions, and the kept dimension added by a tensor.expand_shape.
static bool isTokenSumOf(Value vector, Value keys, bool keptDim) {
  auto [vectorSource, vectorGroups] =
      stripBatchCollapse(vector, keptDim ? 2 : 1);
  auto [keySource, keyGroups] = stripBatchCollapse(keys, 2);
  if (vectorGroups != keyGroups)
    return false;
  Value sum = vectorSource;
  if (keptDim) {
    auto expand = vectorSource.getDefiningOp<tensor::ExpandShapeOp>();
    if (!expand)
      return false;
    SmallVector<ReassociationIndices> groups = expand.getReassociationIndices();
    int64_t rank = expand.getResultType().getRank();
    if (groups.empty() ||
        groups.back() != ReassociationIndices{rank - 2, rank - 1} ||
        expand.getResultType().getDimSize(rank - 1) != 1)
      return false;
    for (size_t g = 0; g + 1 < groups.size(); ++g)
      if (groups[g].size() != 1)
        return false;
    sum = expand.getSrc();
  }
  Value summed = matchSumOver(sum, /*fromEnd=*/1);
  return summed && isSameTensor(summed, keySource);
}

/// Peels at most four linalg.transpose ops off `value`: returns the tensor
/// they transpose and the permutation that reads `value` from it.
static std::pair<Value, SmallVector<int64_t>> peelTransposes(Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  auto permutation = llvm::to_vector(llvm::seq<int64_t>(0, type.getRank()));
  for (int steps = 0; steps < 4; ++steps) {
    auto transpose = value.getDefiningOp<linalg::TransposeOp>();
    if (!transpose)
      break;
    for (int64_t &d : permutation)
      d = transpose.getPermutation()[d];
    value = transpose.getInput();
  }
  return {value, permutation};
}

/// True when `canonical` holds `value` transposed by `permutation`, where
/// either may be behind transposes of the same tensor.
static bool isTransposeOf(Value canonical, Value value,
                          ArrayRef<int64_t> permutation) {
  auto [root, rootPermutation] = peelTransposes(value);
  SmallVector<int64_t> composed =
      applyPermutation(rootPermutation, permutation);
  auto [canonicalRoot, canonicalPermutation] = peelTransposes(canonical);
  return composed == canonicalPermutation && isSameTensor(root, canonicalRoot);
}

/// True when `vector`, transposed by `permutation`, is [b..., F] and holds
/// Σₘ Y[b..., m, f] for `keys` Y [b..., M, F]: isTokenSumOf, or a sum over
/// one dimension of a tensor that `keys` holds transposed.
static bool isTokenSumIn(Value vector, ArrayRef<int64_t> permutation,
                         Value keys) {
  if (isIdentityPermutation(permutation) &&
      isTokenSumOf(vector, keys, /*keptDim=*/false))
    return true;
  std::optional<std::pair<Value, int64_t>> sum = matchSum(vector);
  if (!sum)
    return false;
  auto [summed, tokens] = *sum;
  // The summed tensor's dimension of each dimension of `vector`.
  auto summedDim = [tokens = tokens](int64_t d) {
    return d < tokens ? d : d + 1;
  };
  SmallVector<int64_t> keyPermutation;
  for (int64_t d : permutation.drop_back())
    keyPermutation.push_back(summedDim(d));
  keyPermutation.push_back(tokens);
  keyPermutation.push_back(summedDim(permutation.back()));
  return isTransposeOf(keys, summed, keyPermutation);
}

/// True when `divisor`, whose dimensions are those of [b..., N] in `labels`'
/// order, holds X·Σₘ yₘ for every row of `queries` X [b..., N, F] and `keys`
/// Y [b..., M, F]: a matrix-vector product (a generic, linalg.matvec or
/// batch_matvec) of X and the token sum, each of them in any layout, or a
/// product [..., N, 1] of X and the token sum as a column (`keptDim`).
static bool isQueryDotTokenSum(Value divisor, ArrayRef<int64_t> labels,
                               Value queries, Value keys, bool keptDim) {
  if (keptDim) {
    std::optional<Contraction> product =
        matchContraction(divisor.getDefiningOp());
    return product && isIdentityPermutation(product->lhsPerm) &&
           isIdentityPermutation(product->rhsPerm) &&
           isIdentityPermutation(product->outPerm) &&
           isSameTensor(product->lhs, queries) &&
           isTokenSumOf(product->rhs, keys, /*keptDim=*/true);
  }
  auto op = dyn_cast_if_present<linalg::LinalgOp>(divisor.getDefiningOp());
  if (!op || !op.hasPureTensorSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || op->getNumResults() != 1 || !op.getBlock() ||
      op.getNumReductionLoops() != 1 ||
      !isZeroFilled(op.getDpsInitOperand(0)->get()))
    return false;
  // Each loop's dimension of the queries [b..., N, F]: the result's from
  // `labels`, F for the reduction.
  int64_t rows = labels.size();
  AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  if (op.getNumLoops() != rows + 1 || !outMap.isProjectedPermutation() ||
      outMap.getNumResults() != rows)
    return false;
  SmallVector<int64_t> loopLabels(rows + 1, rows);
  for (int64_t e = 0; e < rows; ++e)
    loopLabels[outMap.getDimPosition(e)] = labels[e];
  if (op.getIteratorTypesArray()[llvm::find(loopLabels, rows) -
                                 loopLabels.begin()] !=
      utils::IteratorType::reduction)
    return false;
  // The permutation that reads an operand's dimensions as `wanted` labels,
  // if it has exactly those.
  auto readAs =
      [&](OpOperand *operand,
          ArrayRef<int64_t> wanted) -> std::optional<SmallVector<int64_t>> {
    AffineMap map = op.getMatchingIndexingMap(operand);
    if (!map.isProjectedPermutation() || map.getNumResults() != wanted.size())
      return std::nullopt;
    SmallVector<int64_t> permutation;
    for (int64_t label : wanted) {
      int64_t found = -1;
      for (unsigned p = 0; p < map.getNumResults(); ++p)
        if (loopLabels[map.getDimPosition(p)] == label)
          found = p;
      if (found < 0)
        return std::nullopt;
      permutation.push_back(found);
    }
    return permutation;
  };
  auto queryLabels = llvm::to_vector(llvm::seq<int64_t>(0, rows + 1));
  SmallVector<int64_t> sumLabels(queryLabels);
  sumLabels.erase(sumLabels.begin() + rows - 1); // [b..., F]
  OpOperand *matrix = op.getDpsInputOperand(0);
  OpOperand *vector = op.getDpsInputOperand(1);
  if (op.getMatchingIndexingMap(matrix).getNumResults() != rows + 1)
    std::swap(matrix, vector);
  std::optional<SmallVector<int64_t>> matrixPermutation =
      readAs(matrix, queryLabels);
  std::optional<SmallVector<int64_t>> vectorPermutation =
      readAs(vector, sumLabels);
  if (!matrixPermutation || !vectorPermutation)
    return false;
  Block *body = op.getBlock();
  Value product =
      matchCommutativeWith<arith::AddFOp>(getYielded(op), body->getArgument(2));
  if (!llvm::hasNItems(body->without_terminator(), 2) ||
      matchCommutativeWith<arith::MulFOp>(
          product, op.getMatchingBlockArgument(matrix)) !=
          op.getMatchingBlockArgument(vector))
    return false;
  return isTransposeOf(queries, matrix->get(), *matrixPermutation) &&
         isTokenSumIn(vector->get(), *vectorPermutation, keys);
}

namespace {
/// query_readout(X, S) / (X·Σₘ yₘ + eps), S from kv_summary(Y, V)
///   -> query_readout(X, S normalize(z, eps)), z the summary's normalizer
///
/// The division as RaiseRowSumNormalization matches it, its divisor per row
/// [..., N] or [..., N, 1] (a product with the token sum as a column).
struct RaiseReadoutNormalization : OpInterfaceRewritePattern<linalg::LinalgOp> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;

  LogicalResult matchAndRewrite(linalg::LinalgOp op,
                                PatternRewriter &rewriter) const override {
    std::optional<Elementwise> ew = matchElementwise(op, 2);
    if (!ew)
      return rewriter.notifyMatchFailure(op, "not a binary elementwise op");
    // The readout, maybe behind an expansion of its batch dimensions (the
    // importer's batched products run on [B*H, ...] and are expanded back to
    // [B, H, ...] before the division).
    Value divided = ew->inputs[0];
    auto batchExpand = divided.getDefiningOp<tensor::ExpandShapeOp>();
    if (batchExpand) {
      SmallVector<ReassociationIndices> groups =
          batchExpand.getReassociationIndices();
      if (groups.size() < 2 || groups.back().size() != 1 ||
          groups[groups.size() - 2].size() != 1)
        return rewriter.notifyMatchFailure(
            op, "the divided rows are expanded in more than their batch");
      divided = batchExpand.getSrc();
    }
    auto [readout, outPerm] = findMaybeTransposed<QueryReadoutOp>(divided);
    if (!readout || readout.isNormalized() ||
        ew->inputs[0].getType() != op->getResult(0).getType() ||
        (batchExpand && !isIdentityPermutation(outPerm)))
      return rewriter.notifyMatchFailure(
          op, "does not divide an unnormalized linattn.query_readout, maybe "
              "transposed or with its batch expanded");
    auto summary = readout.getState().getDefiningOp<KvSummaryOp>();
    if (!summary)
      return rewriter.notifyMatchFailure(
          op, "the readout's state is no linattn.kv_summary");
    if (batchExpand)
      outPerm = llvm::to_vector(llvm::seq<int64_t>(
          0, cast<RankedTensorType>(op->getResult(0).getType()).getRank()));
    for (bool keptDim : {false, true}) {
      std::optional<RowDivision> normalizer =
          matchRowDivision(*ew, outPerm, keptDim);
      if (!normalizer)
        continue;
      // Expanded as the readout is.
      Value divisor = normalizer->divisor;
      SmallVector<int64_t> labels = normalizer->labels;
      if (batchExpand) {
        auto expand = divisor.getDefiningOp<tensor::ExpandShapeOp>();
        if (!expand || expand.getReassociationIndices() !=
                           batchExpand.getReassociationIndices())
          continue;
        divisor = expand.getSrc();
        labels = llvm::to_vector(
            llvm::seq<int64_t>(0, readout.getType().getRank() - 1));
      }
      if (!isQueryDotTokenSum(divisor, labels, readout.getQueryFeatures(),
                              summary.getKeyFeatures(), keptDim))
        continue;
      double eps = normalizer->eps;
      if (!std::isfinite(eps) || eps <= 0.0)
        return rewriter.notifyMatchFailure(
            op, "eps must be positive and finite to normalize");
      Location loc = op->getLoc();
      Value result = QueryReadoutOp::create(
          rewriter, loc, readout.getType(), readout.getQueryFeatures(),
          readout.getState(), summary.getNormalizer(),
          rewriter.getF64FloatAttr(eps));
      if (!isIdentityPermutation(outPerm))
        result = createTranspose(rewriter, loc, result, outPerm);
      if (batchExpand)
        result = tensor::ExpandShapeOp::create(
            rewriter, loc, batchExpand.getResultType(), result,
            batchExpand.getReassociationIndices(),
            batchExpand.getMixedOutputShape());
      rewriter.replaceOp(op, result);
      return success();
    }
    return rewriter.notifyMatchFailure(
        op, "not a division by the queries' products with the sum of the "
            "summarized keys plus eps");
  }
};
} // namespace

//===----------------------------------------------------------------------===//
// RaiseFeatureMaps
//===----------------------------------------------------------------------===//

/// relu: max(x, 0), or select(x > 0, x, 0) (>= as well, and the mirrored
/// forms).
static bool isRelu(Value yielded, Value x) {
  for (Value c : {matchCommutativeWith<arith::MaximumFOp>(yielded, x),
                  matchCommutativeWith<arith::MaxNumFOp>(yielded, x)})
    if (c && matchPattern(c, m_AnyZeroFloat()))
      return true;
  auto select = yielded.getDefiningOp<arith::SelectOp>();
  if (!select)
    return false;
  auto cmp = select.getCondition().getDefiningOp<arith::CmpFOp>();
  if (!cmp || cmp.getLhs() != x ||
      !matchPattern(cmp.getRhs(), m_AnyZeroFloat()))
    return false;
  using P = arith::CmpFPredicate;
  P pred = cmp.getPredicate();
  bool greater =
      pred == P::OGT || pred == P::OGE || pred == P::UGT || pred == P::UGE;
  bool less =
      pred == P::OLT || pred == P::OLE || pred == P::ULT || pred == P::ULE;
  // At x = 0 both branches give 0, so the strictness does not matter.
  if (greater)
    return select.getTrueValue() == x &&
           matchPattern(select.getFalseValue(), m_AnyZeroFloat());
  if (less)
    return select.getFalseValue() == x &&
           matchPattern(select.getTrueValue(), m_AnyZeroFloat());
  return false;
}

/// exp(x) - 1, spelled as math.expm1 or as a subtraction.
static bool isExpm1(Value value, Value x) {
  if (auto expm1 = value.getDefiningOp<math::ExpM1Op>())
    return expm1.getOperand() == x;
  auto sub = value.getDefiningOp<arith::SubFOp>();
  if (!sub || !isConstantFloat(sub.getRhs(), 1.0))
    return false;
  auto exp = sub.getLhs().getDefiningOp<math::ExpOp>();
  return exp && exp.getOperand() == x;
}

/// elu with alpha = 1: select(x > 0, x, exp(x) - 1) (>= as well, and the
/// mirrored forms).
static bool isElu(Value value, Value x) {
  auto select = value.getDefiningOp<arith::SelectOp>();
  if (!select)
    return false;
  auto cmp = select.getCondition().getDefiningOp<arith::CmpFOp>();
  if (!cmp || cmp.getLhs() != x ||
      !matchPattern(cmp.getRhs(), m_AnyZeroFloat()))
    return false;
  using P = arith::CmpFPredicate;
  P pred = cmp.getPredicate();
  // At x = 0 both branches give 0.
  if (pred == P::OGT || pred == P::OGE || pred == P::UGT || pred == P::UGE)
    return select.getTrueValue() == x && isExpm1(select.getFalseValue(), x);
  if (pred == P::OLT || pred == P::OLE || pred == P::ULT || pred == P::ULE)
    return select.getFalseValue() == x && isExpm1(select.getTrueValue(), x);
  return false;
}

/// The feature map an elementwise op computes, with its input: elu + 1 in
/// one op, elu + 1 as an elu op followed by a + 1 op, or relu.
static std::optional<std::pair<FeatureMapKind, Value>>
matchFeatureMap(Operation *op) {
  std::optional<Elementwise> ew = matchPlainElementwise(op, 1);
  if (!ew)
    return std::nullopt;
  Value yielded = getYielded(ew->op);
  Value x = ew->args[0];
  if (isRelu(yielded, x))
    return std::make_pair(FeatureMapKind::Relu, ew->inputs[0]);
  auto add = yielded.getDefiningOp<arith::AddFOp>();
  if (!add)
    return std::nullopt;
  Value elu = isConstantFloat(add.getRhs(), 1.0)   ? add.getLhs()
              : isConstantFloat(add.getLhs(), 1.0) ? add.getRhs()
                                                   : Value();
  if (!elu)
    return std::nullopt;
  if (isElu(elu, x))
    return std::make_pair(FeatureMapKind::Elu, ew->inputs[0]);
  // x + 1 where x comes from an elementwise elu.
  if (elu != x)
    return std::nullopt;
  std::optional<Elementwise> inner =
      matchPlainElementwise(ew->inputs[0].getDefiningOp(), 1);
  if (inner && isElu(getYielded(inner->op), inner->args[0]))
    return std::make_pair(FeatureMapKind::Elu, inner->inputs[0]);
  return std::nullopt;
}

/// Replaces an elementwise elu + 1 or relu that computes one of `features`
/// (maybe behind a transpose and a collapse or expand of dimensions, which
/// commute with elementwise maps) by linattn.feature_map.
static LogicalResult raiseFeatureMapOf(ValueRange features,
                                       PatternRewriter &rewriter) {
  for (Value operand : features) {
    Value current = operand;
    // At most three shape-only ops between the map and the consumer.
    for (int steps = 0; steps < 4 && current; ++steps) {
      Operation *producer = current.getDefiningOp();
      if (!producer)
        break;
      if (std::optional<std::pair<FeatureMapKind, Value>> map =
              matchFeatureMap(producer)) {
        Value result = producer->getResult(0);
        if (!isLinAttnTensor(map->second.getType()) ||
            map->second.getType() != result.getType())
          break;
        // Replace in place: users between the map and the consumer (a
        // transpose, a collapse) must still be dominated.
        rewriter.setInsertionPoint(producer);
        rewriter.replaceOpWithNewOp<FeatureMapOp>(
            producer, result.getType(), map->first, map->second, Value());
        return success();
      }
      if (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(producer))
        current = producer->getOperand(0);
      else if (auto transpose = dyn_cast<linalg::TransposeOp>(producer))
        current = transpose.getInput();
      else
        break;
    }
  }
  return failure();
}

namespace {
/// An elementwise elu + 1 or relu whose result feeds the features of
/// linattn.scores, kv_summary or query_readout -> linattn.feature_map.
template <typename OpTy>
struct RaiseFeatureMaps : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    SmallVector<Value> features;
    if constexpr (std::is_same_v<OpTy, ScoresOp>)
      features = {op.getQueryFeatures(), op.getKeyFeatures()};
    else if constexpr (std::is_same_v<OpTy, KvSummaryOp>)
      features = {op.getKeyFeatures()};
    else
      features = {op.getQueryFeatures()};
    if (succeeded(raiseFeatureMapOf(features, rewriter)))
      return success();
    return rewriter.notifyMatchFailure(
        op, "no elementwise elu + 1 or relu computes the features");
  }
};

/// transpose(feature_map(x)) -> feature_map(transpose(x)), for a transpose
/// that keeps the last dimension last (φ acts on that dimension alone) of
/// a map with no other user than it and tensor.dim ops of its leading
/// dimensions (which read x's instead): the linattn op the transpose feeds
/// then reads the feature map itself, which the CPU and GPU kernels apply
/// as they load (raising token-major attention transposes the features
/// so).
struct SinkFeatureMapsBelowTransposes : OpRewritePattern<linalg::TransposeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::TransposeOp op,
                                PatternRewriter &rewriter) const override {
    auto map = op.getInput().getDefiningOp<FeatureMapOp>();
    ArrayRef<int64_t> permutation = op.getPermutation();
    int64_t rank = permutation.size();
    if (!map || op->getNumResults() != 1 || !keepsLastDimension(permutation))
      return rewriter.notifyMatchFailure(
          op, "does not move the leading dimensions of a feature map");
    SmallVector<tensor::DimOp> leadingDims;
    for (Operation *user : map->getUsers()) {
      if (user == op)
        continue;
      auto dim = dyn_cast<tensor::DimOp>(user);
      std::optional<int64_t> index =
          dim ? dim.getConstantIndex() : std::nullopt;
      if (!index || *index < 0 || *index >= rank - 1)
        return rewriter.notifyMatchFailure(
            op, "the feature map has users other than the transpose");
      leadingDims.push_back(dim);
    }
    for (tensor::DimOp dim : leadingDims)
      rewriter.modifyOpInPlace(
          dim, [&] { dim.getSourceMutable().assign(map.getInput()); });
    Location loc = op.getLoc();
    Value input = createTranspose(rewriter, loc, map.getInput(), permutation);
    auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
    rewriter.replaceOpWithNewOp<FeatureMapOp>(op, resultType, map.getKind(),
                                              input, map.getProjection());
    return success();
  }
};

struct LinAttnRaisePass
    : linattn::impl::LinAttnRaisePassBase<LinAttnRaisePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateRaisePatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns),
                                     getRewriteOnlyConfig())))
      signalPassFailure();
  }
};
} // namespace

void mlir::linattn::populateRaisePatterns(RewritePatternSet &patterns) {
  patterns
      .add<RaiseAttentionContractions, RaiseRowSumNormalization,
           RaiseLinearContractions, RaiseReadoutNormalization,
           RaiseFeatureMaps<ScoresOp>, RaiseFeatureMaps<KvSummaryOp>,
           RaiseFeatureMaps<QueryReadoutOp>, SinkFeatureMapsBelowTransposes>(
          patterns.getContext());
}
