//===- LinAttnOps.cpp - linattn operations --------------------------------===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//
//
// Verifiers, folders and canonicalizations of the linattn ops.
//
// Every op relates the shapes of its operands and results in the same way: all
// share the same leading batch dimensions, and their trailing one or two
// dimensions are sequence lengths and feature sizes that must agree. The
// verifiers describe each op by a `ShapeSignature` and let one checker emit the
// diagnostics, so that every op words its errors alike ("key sequence length
// 128 does not match value sequence length 96"). Dynamic sizes agree with
// anything.
//
//===----------------------------------------------------------------------===//

#include "linattn/IR/LinAttnOps.h"
#include "linattn/IR/ShapeSignature.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>

using namespace mlir;
using namespace mlir::linattn;

//===----------------------------------------------------------------------===//
// ReadBufferOp
//===----------------------------------------------------------------------===//

LogicalResult ReadBufferOp::verify() {
  auto tensorType = cast<RankedTensorType>(getTensor().getType());
  auto memrefType = cast<MemRefType>(getBuffer().getType());
  if (tensorType.getShape() != memrefType.getShape() ||
      tensorType.getElementType() != memrefType.getElementType())
    return emitOpError() << "expected a buffer of the tensor's shape and "
                            "element type, got "
                         << memrefType << " for " << tensorType;
  if (!memrefType.getLayout().isIdentity())
    return emitOpError() << "expected a buffer of identity layout, got "
                         << memrefType;
  return success();
}

bool ReadBufferOp::bufferizesToMemoryRead(
    OpOperand &, const bufferization::AnalysisState &) {
  return true;
}

bool ReadBufferOp::bufferizesToMemoryWrite(
    OpOperand &, const bufferization::AnalysisState &) {
  return false;
}

bufferization::AliasingValueList
ReadBufferOp::getAliasingValues(OpOperand &,
                                const bufferization::AnalysisState &) {
  return {};
}

LogicalResult
ReadBufferOp::bufferize(RewriterBase &rewriter,
                        const bufferization::BufferizationOptions &options,
                        bufferization::BufferizationState &state) {
  FailureOr<Value> buffer =
      bufferization::getBuffer(rewriter, getTensor(), options, state);
  if (failed(buffer))
    return failure();
  Value result = *buffer;
  auto type = cast<MemRefType>(getBuffer().getType());
  auto bufferType = cast<MemRefType>(result.getType());
  if (bufferType.getLayout().isIdentity()) {
    // The same memory, its sizes only more or less static.
    if (bufferType != type)
      result = memref::CastOp::create(rewriter, getLoc(), type, result);
  } else {
    // A view (a slice): copied to a buffer of its own. Upstream's
    // castOrReallocMemRefValue would cast a view of dynamic strides to the
    // identity layout, which it need not have at run time: kernels that
    // address their operands as contiguous then read the wrong elements.
    SmallVector<Value> dynamicSizes;
    for (int64_t i = 0, e = type.getRank(); i < e; ++i)
      if (type.isDynamicDim(i))
        dynamicSizes.push_back(
            memref::DimOp::create(rewriter, getLoc(), result, i));
    FailureOr<Value> copy =
        options.createAlloc(rewriter, getLoc(), type, dynamicSizes);
    if (failed(copy) ||
        failed(options.createMemCpy(rewriter, getLoc(), result, *copy)))
      return emitOpError() << "cannot copy " << bufferType << " to " << type;
    result = *copy;
  }
  rewriter.replaceOp(*this, result);
  return success();
}

//===----------------------------------------------------------------------===//
// Shape signatures
//===----------------------------------------------------------------------===//

namespace {

/// The static sizes that a successful check bound to each symbol.
struct ShapeBindings {
  struct Binding {
    int64_t size;
    StringRef name;
    StringRef role;
  };
  llvm::SmallDenseMap<char, Binding> sizes;

  /// The static size of `symbol`, or ShapedType::kDynamic if no tensor gave
  /// it a static size.
  int64_t lookup(char symbol) const {
    auto it = sizes.find(symbol);
    return it == sizes.end() ? ShapedType::kDynamic : it->second.size;
  }
};

} // namespace

/// Checks that the static sizes of the tensor type `type` (the `name` of
/// `op`) span fewer than 2^63 bytes: every lowering indexes tensors with
/// 64-bit offsets, which would wrap around.
static LogicalResult verifyByteSize(Operation *op, Type type, StringRef name) {
  auto tensorType = cast<RankedTensorType>(type);
  int64_t bytes = llvm::divideCeil(tensorType.getElementTypeBitWidth(), 8);
  for (int64_t dim : tensorType.getShape())
    if (!ShapedType::isDynamic(dim) && llvm::MulOverflow(bytes, dim, bytes))
      return op->emitOpError() << "expected " << name << " " << type
                               << " to have fewer than 2^63 bytes";
  return success();
}

/// Checks that the tensors in `specs` have consistent ranks, batch dimensions
/// and trailing dimensions. The first batched spec fixes the batch rank.
static LogicalResult verifySignature(Operation *op, ArrayRef<TensorSpec> specs,
                                     ShapeBindings &bindings) {
  for (const TensorSpec &spec : specs)
    if (spec.value &&
        failed(verifyByteSize(op, spec.value.getType(), spec.name)))
      return failure();

  const TensorSpec *reference = nullptr;
  int64_t batchRank = 0;
  for (const TensorSpec &spec : specs) {
    if (!spec.value)
      continue;
    auto type = cast<RankedTensorType>(spec.value.getType());
    int64_t trailing = spec.dims.size();
    if (!spec.batched) {
      if (type.getRank() != trailing)
        return op->emitOpError() << "expected " << spec.name << " to have rank "
                                 << trailing << ", got rank " << type.getRank();
      continue;
    }
    if (!reference) {
      if (type.getRank() < trailing)
        return op->emitOpError()
               << "expected " << spec.name << " to have rank at least "
               << trailing << ", got rank " << type.getRank();
      reference = &spec;
      batchRank = type.getRank() - trailing;
      continue;
    }
    if (type.getRank() != batchRank + trailing)
      return op->emitOpError()
             << "expected " << spec.name << " to have rank "
             << batchRank + trailing << " (" << batchRank << " batch dimension"
             << (batchRank == 1 ? "" : "s") << " like the " << reference->name
             << ", then " << trailing << "), got rank " << type.getRank();
  }

  // Batch dimensions: compare each against its first static occurrence.
  for (int64_t i = 0; i < batchRank; ++i) {
    const TensorSpec *first = nullptr;
    int64_t size = ShapedType::kDynamic;
    for (const TensorSpec &spec : specs) {
      if (!spec.value || !spec.batched)
        continue;
      int64_t dim = cast<RankedTensorType>(spec.value.getType()).getDimSize(i);
      if (ShapedType::isDynamic(dim))
        continue;
      if (!first) {
        first = &spec;
        size = dim;
      } else if (dim != size) {
        return op->emitOpError()
               << spec.name << " batch dimension " << i << " (" << dim
               << ") does not match " << first->name << " batch dimension " << i
               << " (" << size << ")";
      }
    }
  }

  // Trailing dimensions: every symbol takes one static size.
  for (const TensorSpec &spec : specs) {
    if (!spec.value)
      continue;
    auto type = cast<RankedTensorType>(spec.value.getType());
    int64_t offset = type.getRank() - spec.dims.size();
    for (auto [index, dimSpec] : llvm::enumerate(spec.dims)) {
      int64_t dim = type.getDimSize(offset + index);
      if (ShapedType::isDynamic(dim))
        continue;
      auto [it, inserted] = bindings.sizes.try_emplace(
          dimSpec.symbol, ShapeBindings::Binding{dim, spec.name, dimSpec.role});
      if (!inserted && it->second.size != dim)
        return op->emitOpError()
               << spec.name << " " << dimSpec.role << " " << dim
               << " does not match " << it->second.name << " "
               << it->second.role << " " << it->second.size;
    }
  }
  return success();
}

static Type elementTypeOf(Type type) {
  return cast<RankedTensorType>(type).getElementType();
}

/// Checks that the named values in `values` (pairs of type and name; null
/// types are skipped) share one element type.
static LogicalResult
verifySameElementType(Operation *op,
                      ArrayRef<std::pair<Type, StringRef>> values) {
  Type expected;
  StringRef expectedName;
  for (auto [type, name] : values) {
    if (!type)
      continue;
    Type element = elementTypeOf(type);
    if (!expected) {
      expected = element;
      expectedName = name;
    } else if (element != expected) {
      return op->emitOpError()
             << name << " element type " << element << " does not match "
             << expectedName << " element type " << expected;
    }
  }
  return success();
}

/// Checks that the tensors of `signature` share one element type.
static LogicalResult verifySameElementType(Operation *op,
                                           const ShapeSignature &signature) {
  SmallVector<std::pair<Type, StringRef>> types;
  for (const TensorSpec &spec : signature.tensors)
    types.push_back({spec.value ? spec.value.getType() : Type(), spec.name});
  return verifySameElementType(op, types);
}

/// A [..., rows, columns] tensor of a signature.
static TensorSpec sequenceSpec(Value value, StringRef name, char rows,
                               char columns) {
  return {value, name, {{rows, "sequence length"}, {columns, "feature size"}}};
}

/// The state of the linear and scan forms may accumulate in a wider type than
/// the inputs (f32 state for bf16 inputs), never in a narrower or a different
/// type of the same width.
static LogicalResult verifyAccumulatorType(Operation *op, Type dataType,
                                           Type stateType) {
  auto data = cast<FloatType>(elementTypeOf(dataType));
  auto state = cast<FloatType>(elementTypeOf(stateType));
  if (state == data || state.getWidth() > data.getWidth())
    return success();
  return op->emitOpError() << "state element type " << state
                           << " cannot accumulate " << data << " inputs: use "
                           << data << " or a wider float type";
}

/// Checks the normalization epsilon when present: finite and positive.
static LogicalResult verifyEps(Operation *op, std::optional<APFloat> eps) {
  if (!eps)
    return success();
  double value = eps->convertToDouble();
  if (!std::isfinite(value) || value <= 0.0)
    return op->emitOpError()
           << "normalization eps must be positive and finite, got " << value;
  return success();
}

/// Causal masking pairs query i with key i: both sequences have one length.
/// The lengths are the ones the signature check bound to `N` and `M` from all
/// operands and results, so a length given only by the result counts too.
static LogicalResult verifyCausalLengths(Operation *op,
                                         const ShapeBindings &bindings) {
  int64_t n = bindings.lookup('N'), m = bindings.lookup('M');
  if (ShapedType::isDynamic(n) || ShapedType::isDynamic(m) || n == m)
    return success();
  return op->emitOpError()
         << "causal attention needs as many queries as keys, got query "
            "sequence length "
         << n << " and key sequence length " << m;
}

//===----------------------------------------------------------------------===//
// FeatureMapOp
//===----------------------------------------------------------------------===//

/// The largest D for which 1 + D + D^2 fits in int64_t.
static constexpr int64_t kMaxPoly2InputSize = 3037000498;

int64_t FeatureMapOp::getFeatureSize(FeatureMapKind kind, int64_t inputSize,
                                     int64_t projectionSize) {
  switch (kind) {
  case FeatureMapKind::Elu:
  case FeatureMapKind::Relu:
  case FeatureMapKind::Identity:
    return inputSize;
  case FeatureMapKind::Poly2:
    // Sizes whose square does not fit count as unknown; the verifier rejects
    // them.
    if (ShapedType::isDynamic(inputSize) || inputSize > kMaxPoly2InputSize)
      return ShapedType::kDynamic;
    return 1 + inputSize + inputSize * inputSize;
  case FeatureMapKind::Favor:
    return projectionSize;
  }
  return ShapedType::kDynamic;
}

/// Checks that a projection operand is given exactly for the `favor` kind.
static LogicalResult
verifyProjectionPresence(Operation *op, FeatureMapKind kind, Value projection) {
  bool needsProjection = kind == FeatureMapKind::Favor;
  if (needsProjection && !projection)
    return op->emitOpError()
           << "the favor feature map needs a projection operand "
              "(projection(%p) with P of shape D x m)";
  if (!needsProjection && projection)
    return op->emitOpError() << "the " << stringifyFeatureMapKind(kind)
                             << " feature map takes no projection operand";
  return success();
}

/// Whether φ of `kind` keeps the feature size (and is applied elementwise).
static bool isElementwise(FeatureMapKind kind) {
  return kind == FeatureMapKind::Elu || kind == FeatureMapKind::Relu ||
         kind == FeatureMapKind::Identity;
}

static ShapeSignature signatureOf(FeatureMapOp op) {
  // Elementwise maps keep the feature size; the others produce their own.
  char outSymbol = isElementwise(op.getKind()) ? 'D' : 'F';
  return {{{op.getInput(), "input", {{'D', "feature size"}}},
           {op.getResult(), "result", {{outSymbol, "feature size"}}},
           {op.getProjection(),
            "projection",
            {{'D', "input size"}, {'F', "feature count"}},
            /*batched=*/false}}};
}

/// Checks that a poly2 map of the input size bound to `D` produces as many
/// features as are bound to `F` (and fewer than 2^63).
static LogicalResult verifyPoly2Size(Operation *op,
                                     const ShapeBindings &bindings) {
  int64_t d = bindings.lookup('D');
  int64_t f = bindings.lookup('F');
  if (!ShapedType::isDynamic(d) && d > kMaxPoly2InputSize)
    return op->emitOpError() << "the poly2 feature map of input feature size "
                             << d << " would produce more than 2^63 features";
  int64_t expected = FeatureMapOp::getFeatureSize(FeatureMapKind::Poly2, d, f);
  if (!ShapedType::isDynamic(expected) && !ShapedType::isDynamic(f) &&
      expected != f)
    return op->emitOpError()
           << "the poly2 feature map of input feature size " << d
           << " produces 1 + D + D^2 = " << expected
           << " features, but the result feature size is " << f;
  return success();
}

/// Checks a feature map or its gradient, `op` with map `kind`: the
/// projection, the signature, one element type, and poly2's feature count.
static LogicalResult verifyFeatureMap(Operation *op, FeatureMapKind kind,
                                      const ShapeSignature &signature) {
  if (failed(
          verifyProjectionPresence(op, kind, signature.tensors.back().value)))
    return failure();
  ShapeBindings bindings;
  if (failed(verifySignature(op, signature.tensors, bindings)) ||
      failed(verifySameElementType(op, signature)))
    return failure();
  if (kind == FeatureMapKind::Poly2)
    return verifyPoly2Size(op, bindings);
  return success();
}

LogicalResult FeatureMapOp::verify() {
  return verifyFeatureMap(*this, getKind(), signatureOf(*this));
}

OpFoldResult FeatureMapOp::fold(FoldAdaptor) {
  // φ = identity is a no-op when it does not refine the type.
  if (getKind() == FeatureMapKind::Identity &&
      getInput().getType() == getResult().getType())
    return getInput();
  return {};
}

//===----------------------------------------------------------------------===//
// FeatureMapGradOp
//===----------------------------------------------------------------------===//

static ShapeSignature signatureOf(FeatureMapGradOp op) {
  char featureSymbol = isElementwise(op.getKind()) ? 'D' : 'F';
  return {{{op.getInput(), "input", {{'D', "feature size"}}},
           {op.getResultGrad(),
            "result gradient",
            {{featureSymbol, "feature size"}}},
           {op.getInputGrad(), "input gradient", {{'D', "feature size"}}},
           {op.getProjection(),
            "projection",
            {{'D', "input size"}, {'F', "feature count"}},
            /*batched=*/false}}};
}

LogicalResult FeatureMapGradOp::verify() {
  return verifyFeatureMap(*this, getKind(), signatureOf(*this));
}

//===----------------------------------------------------------------------===//
// ScoresOp
//===----------------------------------------------------------------------===//

static ShapeSignature signatureOf(ScoresOp op) {
  ShapeSignature signature{
      {{op.getQueryFeatures(),
        "query",
        {{'N', "sequence length"}, {'F', "feature size"}}},
       {op.getKeyFeatures(),
        "key",
        {{'M', "sequence length"}, {'F', "feature size"}}},
       {op.getResult(),
        "result",
        {{'N', "query dimension"}, {'M', "key dimension"}}}}};
  if (op.getCausal())
    signature.equalSymbols.push_back({'N', 'M'});
  return signature;
}

LogicalResult ScoresOp::verify() {
  ShapeBindings bindings;
  Type q = getQueryFeatures().getType(), k = getKeyFeatures().getType(),
       a = getResult().getType();
  if (failed(verifySignature(*this, signatureOf(*this).tensors, bindings)) ||
      failed(verifySameElementType(*this,
                                   {{q, "query"}, {k, "key"}, {a, "result"}})))
    return failure();
  if (getCausal() && failed(verifyCausalLengths(*this, bindings)))
    return failure();
  if (std::optional<APFloat> scale = getScale();
      scale && !std::isfinite(scale->convertToDouble()))
    return emitOpError() << "scale must be finite, got "
                         << scale->convertToDouble();
  return success();
}

OpFoldResult ScoresOp::fold(FoldAdaptor) {
  // A scale of 1 is spelled by omitting it.
  if (std::optional<APFloat> scale = getScale();
      scale && scale->convertToDouble() == 1.0) {
    removeScaleAttr();
    return getResult();
  }
  return {};
}

//===----------------------------------------------------------------------===//
// ApplyScoresOp
//===----------------------------------------------------------------------===//

static ShapeSignature signatureOf(ApplyScoresOp op) {
  return {{{op.getScores(),
            "scores",
            {{'N', "query dimension"}, {'M', "key dimension"}}},
           {op.getValues(),
            "value",
            {{'M', "sequence length"}, {'V', "feature size"}}},
           {op.getResult(),
            "result",
            {{'N', "sequence length"}, {'V', "feature size"}}}}};
}

LogicalResult ApplyScoresOp::verify() {
  ShapeBindings bindings;
  Type a = getScores().getType(), v = getValues().getType(),
       o = getResult().getType();
  if (failed(verifySignature(*this, signatureOf(*this).tensors, bindings)) ||
      failed(verifySameElementType(
          *this, {{a, "scores"}, {v, "value"}, {o, "result"}})))
    return failure();
  return verifyEps(*this, getEps());
}

//===----------------------------------------------------------------------===//
// KvSummaryOp
//===----------------------------------------------------------------------===//

static ShapeSignature signatureOf(KvSummaryOp op) {
  return {{{op.getKeyFeatures(),
            "key",
            {{'M', "sequence length"}, {'F', "feature size"}}},
           {op.getValues(),
            "value",
            {{'M', "sequence length"}, {'V', "feature size"}}},
           {op.getState(),
            "state",
            {{'F', "key feature size"}, {'V', "value size"}}},
           {op.getNormalizer(), "normalizer", {{'F', "feature size"}}}}};
}

LogicalResult KvSummaryOp::verify() {
  ShapeBindings bindings;
  Type k = getKeyFeatures().getType(), v = getValues().getType(),
       s = getState().getType(), z = getNormalizer().getType();
  if (failed(verifySignature(*this, signatureOf(*this).tensors, bindings)) ||
      failed(verifySameElementType(*this, {{k, "key"}, {v, "value"}})) ||
      failed(verifySameElementType(*this, {{s, "state"}, {z, "normalizer"}})))
    return failure();
  return verifyAccumulatorType(*this, k, s);
}

//===----------------------------------------------------------------------===//
// QueryReadoutOp
//===----------------------------------------------------------------------===//

static ShapeSignature signatureOf(QueryReadoutOp op) {
  return {{{op.getQueryFeatures(),
            "query",
            {{'N', "sequence length"}, {'F', "feature size"}}},
           {op.getState(),
            "state",
            {{'F', "key feature size"}, {'V', "value size"}}},
           {op.getNormalizer(), "normalizer", {{'F', "feature size"}}},
           {op.getResult(),
            "result",
            {{'N', "sequence length"}, {'V', "feature size"}}}}};
}

LogicalResult QueryReadoutOp::verify() {
  if (getNormalizer() && !getEps())
    return emitOpError() << "a normalizer needs an eps";
  if (!getNormalizer() && getEps())
    return emitOpError() << "eps is given without a normalizer";

  ShapeBindings bindings;
  Type q = getQueryFeatures().getType(), s = getState().getType(),
       z = getNormalizer() ? getNormalizer().getType() : Type(),
       o = getResult().getType();
  if (failed(verifySignature(*this, signatureOf(*this).tensors, bindings)) ||
      failed(verifySameElementType(*this, {{q, "query"}, {o, "result"}})) ||
      failed(verifySameElementType(*this, {{s, "state"}, {z, "normalizer"}})) ||
      failed(verifyAccumulatorType(*this, q, s)))
    return failure();
  return verifyEps(*this, getEps());
}

//===----------------------------------------------------------------------===//
// ScanOp
//===----------------------------------------------------------------------===//

static ShapeSignature signatureOf(ScanOp op) {
  return {
      {sequenceSpec(op.getQueryFeatures(), "query", 'N', 'F'),
       sequenceSpec(op.getKeyFeatures(), "key", 'N', 'F'),
       sequenceSpec(op.getValues(), "value", 'N', 'V'),
       sequenceSpec(op.getResult(), "result", 'N', 'V'),
       {op.getInitialState(),
        "initial state",
        {{'F', "key feature size"}, {'V', "value size"}}},
       {op.getInitialNormalizer(),
        "initial normalizer",
        {{'F', "feature size"}}},
       {op.getFinalState(),
        "final state",
        {{'F', "key feature size"}, {'V', "value size"}}},
       {op.getFinalNormalizer(), "final normalizer", {{'F', "feature size"}}}}};
}

LogicalResult ScanOp::verify() {
  if (static_cast<bool>(getInitialState()) !=
      static_cast<bool>(getInitialNormalizer()))
    return emitOpError() << "init needs both the state and the normalizer";

  Type q = getQueryFeatures().getType(), k = getKeyFeatures().getType(),
       v = getValues().getType(), o = getResult().getType(),
       s = getFinalState().getType(), z = getFinalNormalizer().getType();
  Type s0 = getInitialState() ? getInitialState().getType() : Type();
  Type z0 = getInitialNormalizer() ? getInitialNormalizer().getType() : Type();
  ShapeBindings bindings;
  if (failed(verifySignature(*this, signatureOf(*this).tensors, bindings)) ||
      failed(verifySameElementType(
          *this, {{q, "query"}, {k, "key"}, {v, "value"}, {o, "result"}})) ||
      failed(verifySameElementType(*this, {{s, "final state"},
                                           {z, "final normalizer"},
                                           {s0, "initial state"},
                                           {z0, "initial normalizer"}})) ||
      failed(verifyAccumulatorType(*this, q, s)) ||
      failed(verifyEps(*this, getEps())))
    return failure();
  if (std::optional<int64_t> chunk = getChunkSize(); chunk && *chunk <= 0)
    return emitOpError() << "chunk size must be positive, got " << *chunk;
  return success();
}

std::pair<Value, Value> ScanOp::buildInitialState(OpBuilder &builder) {
  if (hasInitialState())
    return {getInitialState(), getInitialNormalizer()};
  // [batch..., F, Dv] and [batch..., F]: batch sizes and F come from the
  // query features, Dv from the values.
  Location loc = getLoc();
  int64_t rank = cast<RankedTensorType>(getQueryFeatures().getType()).getRank();
  auto zeros = [&](Type resultType) -> Value {
    auto type = cast<RankedTensorType>(resultType);
    SmallVector<Value> dynamicSizes;
    for (int64_t i = 0; i < type.getRank(); ++i) {
      if (!type.isDynamicDim(i))
        continue;
      bool isValueSize = type.getRank() == rank && i == rank - 1;
      Value source = isValueSize ? getValues() : getQueryFeatures();
      int64_t dim = i < rank - 2 ? i : rank - 1;
      dynamicSizes.push_back(tensor::DimOp::create(builder, loc, source, dim));
    }
    Type elementType = type.getElementType();
    Value zero = arith::ConstantOp::create(
        builder, loc, elementType, builder.getFloatAttr(elementType, 0.0));
    return tensor::SplatOp::create(builder, loc, zero, type, dynamicSizes);
  };
  return {zeros(getFinalState().getType()),
          zeros(getFinalNormalizer().getType())};
}

namespace {
/// Drops an initial state that is all zeros: the scan starts from zero anyway.
struct DropZeroInitialState : OpRewritePattern<ScanOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ScanOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasInitialState())
      return rewriter.notifyMatchFailure(op, "no initial state");
    if (!matchPattern(op.getInitialState(), m_AnyZeroFloat()) ||
        !matchPattern(op.getInitialNormalizer(), m_AnyZeroFloat()))
      return rewriter.notifyMatchFailure(op, "initial state is not all zeros");
    rewriter.modifyOpInPlace(op, [&] {
      op.getInitialStateMutable().clear();
      op.getInitialNormalizerMutable().clear();
    });
    return success();
  }
};

/// A scan over one token is one step: the state after the token is the
/// initial state (zero when absent) plus φ(k)vᵀ, and the output reads it.
/// Forward and reverse visit the same single token. The sequence dimension
/// is collapsed away for the step and expanded back for the result.
struct SingleTokenScanToStep : OpRewritePattern<ScanOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ScanOp op,
                                PatternRewriter &rewriter) const override {
    auto queryType = cast<RankedTensorType>(op.getQueryFeatures().getType());
    int64_t rank = queryType.getRank();
    for (Value operand :
         {op.getQueryFeatures(), op.getKeyFeatures(), op.getValues()})
      if (cast<RankedTensorType>(operand.getType()).getDimSize(rank - 2) != 1)
        return rewriter.notifyMatchFailure(
            op, "sequence length is not statically 1");

    // [batch..., 1, X] <-> [batch..., X].
    SmallVector<ReassociationIndices> reassociation;
    for (int64_t i = 0; i < rank - 2; ++i)
      reassociation.push_back({i});
    reassociation.push_back({rank - 2, rank - 1});

    Location loc = op.getLoc();
    auto finalStateType = cast<RankedTensorType>(op.getFinalState().getType());
    auto finalNormalizerType =
        cast<RankedTensorType>(op.getFinalNormalizer().getType());
    auto [state, normalizer] = op.buildInitialState(rewriter);

    auto collapse = [&](Value value) -> Value {
      auto type = cast<RankedTensorType>(value.getType());
      SmallVector<int64_t> shape(type.getShape());
      shape.erase(shape.begin() + rank - 2);
      return tensor::CollapseShapeOp::create(
          rewriter, loc, type.clone(shape), value,
          ArrayRef<ReassociationIndices>(reassociation));
    };
    auto resultType = cast<RankedTensorType>(op.getResult().getType());
    SmallVector<int64_t> tokenShape(resultType.getShape());
    tokenShape.erase(tokenShape.begin() + rank - 2);
    auto step = StepOp::create(
        rewriter, loc,
        TypeRange{resultType.clone(tokenShape), finalStateType,
                  finalNormalizerType},
        collapse(op.getQueryFeatures()), collapse(op.getKeyFeatures()),
        collapse(op.getValues()), state, normalizer, op.getEpsAttr());

    SmallVector<int64_t> expandedShape(resultType.getShape());
    expandedShape[rank - 2] = 1;
    Value result = tensor::ExpandShapeOp::create(
        rewriter, loc, resultType.clone(expandedShape), step.getResult(),
        ArrayRef<ReassociationIndices>(reassociation));
    if (result.getType() != resultType)
      result = tensor::CastOp::create(rewriter, loc, resultType, result);
    rewriter.replaceOp(op,
                       {result, step.getNewState(), step.getNewNormalizer()});
    return success();
  }
};
} // namespace

void ScanOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                         MLIRContext *context) {
  results.add<DropZeroInitialState, SingleTokenScanToStep>(context);
}

//===----------------------------------------------------------------------===//
// StepOp
//===----------------------------------------------------------------------===//

static ShapeSignature signatureOf(StepOp op) {
  return {{{op.getQueryFeatures(), "query", {{'F', "feature size"}}},
           {op.getKeyFeatures(), "key", {{'F', "feature size"}}},
           {op.getValues(), "value", {{'V', "feature size"}}},
           {op.getState(),
            "state",
            {{'F', "key feature size"}, {'V', "value size"}}},
           {op.getNormalizer(), "normalizer", {{'F', "feature size"}}},
           {op.getResult(), "result", {{'V', "feature size"}}},
           {op.getNewState(),
            "new state",
            {{'F', "key feature size"}, {'V', "value size"}}},
           {op.getNewNormalizer(), "new normalizer", {{'F', "feature size"}}}}};
}

LogicalResult StepOp::verify() {
  Type q = getQueryFeatures().getType(), k = getKeyFeatures().getType(),
       v = getValues().getType(), s = getState().getType(),
       z = getNormalizer().getType(), o = getResult().getType(),
       s1 = getNewState().getType(), z1 = getNewNormalizer().getType();
  ShapeBindings bindings;
  if (failed(verifySignature(*this, signatureOf(*this).tensors, bindings)) ||
      failed(verifySameElementType(
          *this, {{q, "query"}, {k, "key"}, {v, "value"}, {o, "result"}})) ||
      failed(verifySameElementType(*this, {{s, "state"},
                                           {z, "normalizer"},
                                           {s1, "new state"},
                                           {z1, "new normalizer"}})) ||
      failed(verifyAccumulatorType(*this, q, s)))
    return failure();
  return verifyEps(*this, getEps());
}

/// Checks the states a gradient decomposes into, F×Dv per batch element
/// (F×(Dv+1) `normalized`) in f32 for 16-bit data and in the data type
/// otherwise, for fewer than 2^63 bytes; `valuesType` gives the batch and Dv.
Type mlir::linattn::getAccumulatorType(Type type) {
  if (cast<FloatType>(type).getWidth() < 32)
    return Float32Type::get(type.getContext());
  return type;
}

static LogicalResult verifyGradientStates(Operation *op, Type valuesType,
                                          int64_t features, bool normalized) {
  auto values = cast<RankedTensorType>(valuesType);
  Type state = getAccumulatorType(values.getElementType());
  SmallVector<int64_t> shape(values.getShape());
  shape[shape.size() - 2] = features;
  if (normalized && !ShapedType::isDynamic(shape.back()) &&
      shape.back() < std::numeric_limits<int64_t>::max())
    ++shape.back();
  return verifyByteSize(op, RankedTensorType::get(shape, state),
                        "the state of its decomposition");
}

//===----------------------------------------------------------------------===//
// ScanGradOp
//===----------------------------------------------------------------------===//

/// The sequences of a scan gradient (data type), then its states and their
/// gradients (state type) when present.
/// The sequences of a scan gradient, in the data type.
static SmallVector<TensorSpec, 8> scanGradSequences(ScanGradOp op) {
  return {sequenceSpec(op.getQueryFeatures(), "query", 'N', 'F'),
          sequenceSpec(op.getKeyFeatures(), "key", 'N', 'F'),
          sequenceSpec(op.getValues(), "value", 'N', 'V'),
          sequenceSpec(op.getResultGrad(), "result gradient", 'N', 'V'),
          sequenceSpec(op.getQueryFeaturesGrad(), "query gradient", 'N', 'F'),
          sequenceSpec(op.getKeyFeaturesGrad(), "key gradient", 'N', 'F'),
          sequenceSpec(op.getValuesGrad(), "value gradient", 'N', 'V')};
}

/// The states of a scan gradient and their gradients, in the state type,
/// when present.
static SmallVector<TensorSpec, 8> scanGradStates(ScanGradOp op) {
  auto state = [](Value value, StringRef name) -> TensorSpec {
    return {value, name, {{'F', "key feature size"}, {'V', "value size"}}};
  };
  auto normalizer = [](Value value, StringRef name) -> TensorSpec {
    return {value, name, {{'F', "feature size"}}};
  };
  return {
      state(op.getInitialState(), "initial state"),
      normalizer(op.getInitialNormalizer(), "initial normalizer"),
      state(op.getFinalStateGrad(), "final state gradient"),
      normalizer(op.getFinalNormalizerGrad(), "final normalizer gradient"),
      state(op.getInitialStateGrad(), "initial state gradient"),
      normalizer(op.getInitialNormalizerGrad(), "initial normalizer gradient")};
}

static ShapeSignature signatureOf(ScanGradOp op) {
  ShapeSignature signature{scanGradSequences(op)};
  signature.tensors.append(scanGradStates(op));
  return signature;
}

LogicalResult ScanGradOp::verify() {
  if (hasInitialState() != static_cast<bool>(getInitialNormalizer()))
    return emitOpError() << "init needs both the state and the normalizer";
  if (hasFinalStateGrad() != static_cast<bool>(getFinalNormalizerGrad()))
    return emitOpError()
           << "final_grad needs both the state and the normalizer gradients";
  if (hasInitialState() != static_cast<bool>(getInitialStateGrad()) ||
      hasInitialState() != static_cast<bool>(getInitialNormalizerGrad()))
    return emitOpError() << "returns the initial state's and normalizer's "
                            "gradients exactly when it has an initial state";

  ShapeBindings bindings;
  if (failed(verifySignature(*this, signatureOf(*this).tensors, bindings)) ||
      failed(verifySameElementType(*this,
                                   ShapeSignature{scanGradSequences(*this)})))
    return failure();
  // The states are those of the decomposition's scans.
  Type dataType = elementTypeOf(getValues().getType());
  Type stateType = getAccumulatorType(dataType);
  for (const TensorSpec &spec : scanGradStates(*this))
    if (spec.value && elementTypeOf(spec.value.getType()) != stateType)
      return emitOpError() << spec.name << " must have element type "
                           << stateType << " (the scans' state type for "
                           << dataType << " data), got "
                           << elementTypeOf(spec.value.getType());
  if (failed(verifyGradientStates(*this, getValues().getType(),
                                  bindings.lookup('F'), isNormalized())))
    return failure();
  return verifyEps(*this, getEps());
}

//===----------------------------------------------------------------------===//
// AttentionOp
//===----------------------------------------------------------------------===//

/// The signature of attention or its gradient: Q [..., N, D], K [..., M, D],
/// V [..., M, Dv], `others`, and the projection [D, F]; N = M `causal`.
static ShapeSignature attentionSignature(Value query, Value key, Value values,
                                         ArrayRef<TensorSpec> others,
                                         Value projection, bool causal) {
  ShapeSignature signature{{sequenceSpec(query, "query", 'N', 'D'),
                            sequenceSpec(key, "key", 'M', 'D'),
                            sequenceSpec(values, "value", 'M', 'V')}};
  signature.tensors.append(others.begin(), others.end());
  signature.tensors.push_back({projection,
                               "projection",
                               {{'D', "input size"}, {'F', "feature count"}},
                               /*batched=*/false});
  if (causal)
    signature.equalSymbols.push_back({'N', 'M'});
  return signature;
}

static ShapeSignature signatureOf(AttentionOp op) {
  return attentionSignature(op.getQuery(), op.getKey(), op.getValues(),
                            {sequenceSpec(op.getResult(), "result", 'N', 'V')},
                            op.getProjection(), op.getCausal());
}

/// Checks attention or its gradient, `op` with feature map `kind`: the
/// projection, the signature, one element type, the lengths of a causal
/// mask, and feature maps of the queries and keys that verify (what its
/// decomposition creates). `bindings` receives the sizes.
static LogicalResult verifyAttention(Operation *op, FeatureMapKind kind,
                                     const ShapeSignature &signature,
                                     ShapeBindings &bindings) {
  const TensorSpec &query = signature.tensors[0], &key = signature.tensors[1];
  if (failed(
          verifyProjectionPresence(op, kind, signature.tensors.back().value)))
    return failure();
  if (failed(verifySignature(op, signature.tensors, bindings)) ||
      failed(verifySameElementType(op, signature)))
    return failure();
  if (!signature.equalSymbols.empty() &&
      failed(verifyCausalLengths(op, bindings)))
    return failure();

  int64_t d = bindings.lookup('D');
  if (kind == FeatureMapKind::Poly2 && !ShapedType::isDynamic(d) &&
      d > kMaxPoly2InputSize)
    return op->emitOpError() << "the poly2 feature map of feature size " << d
                             << " would produce more than 2^63 features";
  int64_t features =
      FeatureMapOp::getFeatureSize(kind, d, bindings.lookup('F'));
  for (auto [value, name] :
       {std::pair<Value, StringRef>{query.value, "query features"},
        std::pair<Value, StringRef>{key.value, "key features"}}) {
    auto tensorType = cast<RankedTensorType>(value.getType());
    SmallVector<int64_t> shape(tensorType.getShape());
    shape.back() = features;
    if (failed(verifyByteSize(op, tensorType.clone(shape), name)))
      return failure();
  }
  return success();
}

LogicalResult AttentionOp::verify() {
  ShapeBindings bindings;
  if (failed(verifyAttention(*this, getFeatureMap(), signatureOf(*this),
                             bindings)))
    return failure();
  return verifyEps(*this, getEps());
}

//===----------------------------------------------------------------------===//
// AttentionGradOp
//===----------------------------------------------------------------------===//

static ShapeSignature signatureOf(AttentionGradOp op) {
  return attentionSignature(
      op.getQuery(), op.getKey(), op.getValues(),
      {sequenceSpec(op.getResultGrad(), "result gradient", 'N', 'V'),
       sequenceSpec(op.getQueryGrad(), "query gradient", 'N', 'D'),
       sequenceSpec(op.getKeyGrad(), "key gradient", 'M', 'D'),
       sequenceSpec(op.getValuesGrad(), "value gradient", 'M', 'V')},
      op.getProjection(), op.getCausal());
}

LogicalResult AttentionGradOp::verify() {
  ShapeBindings bindings;
  if (failed(verifyAttention(*this, getFeatureMap(), signatureOf(*this),
                             bindings)))
    return failure();
  int64_t features = FeatureMapOp::getFeatureSize(
      getFeatureMap(), bindings.lookup('D'), bindings.lookup('F'));
  if (failed(verifyGradientStates(*this, getValues().getType(), features,
                                  isNormalized())))
    return failure();
  return verifyEps(*this, getEps());
}

//===----------------------------------------------------------------------===//
// Shape signatures
//===----------------------------------------------------------------------===//

std::optional<ShapeSignature> mlir::linattn::getShapeSignature(Operation *op) {
  return TypeSwitch<Operation *, std::optional<ShapeSignature>>(op)
      .Case<FeatureMapOp, FeatureMapGradOp, ScoresOp, ApplyScoresOp,
            KvSummaryOp, QueryReadoutOp, ScanOp, StepOp, ScanGradOp,
            AttentionOp, AttentionGradOp>(
          [](auto typed) -> std::optional<ShapeSignature> {
            ShapeSignature signature = signatureOf(typed);
            llvm::erase_if(signature.tensors,
                           [](const TensorSpec &spec) { return !spec.value; });
            return signature;
          })
      .Default([](Operation *) { return std::nullopt; });
}

#define GET_OP_CLASSES
#include "linattn/IR/LinAttnOps.cpp.inc"
