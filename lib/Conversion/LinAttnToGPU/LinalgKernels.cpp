//===- LinalgKernels.cpp - the host's linalg ops as GPU kernels -----------===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//
//
// What convert-linattn-to-gpu leaves to the host between its kernels (the
// normalized gradients' [V, 1] and [g, h], the non-causal gradients'
// transposed summaries, fills, copies into slices) is linalg on buffers after
// bufferization. Where the buffers are device memory the host cannot compute
// it, so each such op becomes a kernel: one thread per point of its parallel
// loops, the reduction loops in that thread, every operand of any strided
// layout passed as the flat buffer it views with its offset and strides.
// Where a reduction runs along its inputs' rows (dO·N, a row of a row-major
// buffer summed per point), a group of lanes shares each point instead, so
// that a warp's loads read consecutive elements rather than one from each of
// 32 rows; shuffles combine the lanes' partial results.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilders.h"

#include "linattn/Conversion/LinAttnToGPU/LinAttnToGPU.h"
#include "linattn/Conversion/Passes.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir::linattn {
#define GEN_PASS_DEF_LINATTNGPULINALGKERNELSPASS
#include "linattn/Conversion/Passes.h.inc"
} // namespace mlir::linattn

using namespace mlir;
using namespace mlir::linattn;
using namespace mlir::linattn::gpukernels;

namespace {

/// What a kernel of one thread per parallel point needs of a linalg op: the
/// buffers it views (its operands, then the buffers its body loads from) and
/// the values its body takes from above (constants are cloned, other
/// scalars passed).
struct KernelPlan {
  SmallVector<Value> views;
  /// Per view: whether the kernel writes it (an init of the op).
  SmallVector<bool> written;
  SmallVector<Value> constants, scalars;
  SmallVector<int64_t> parallelDims, reductionDims;
  /// Lanes per parallel point: 1, or a power of two up to a warp that split
  /// the point's reduction loops between them (`chooseLanes`).
  int64_t lanes = 1;
  /// With lanes > 1, per output: the op of the body that combines the
  /// output with the reduced value (arith.addf, arith.maximumf, ...).
  SmallVector<Operation *> combiners;
};

} // namespace

static bool isConstant(Value value) {
  Operation *def = value.getDefiningOp();
  return def && def->hasTrait<OpTrait::ConstantLike>() &&
         def->getNumOperands() == 0 && def->getNumRegions() == 0;
}

/// Why `op` cannot be such a kernel, if it cannot; fills `plan` otherwise.
static std::optional<std::string> planKernel(linalg::LinalgOp op,
                                             KernelPlan &plan) {
  if (!op.hasPureBufferSemantics())
    return std::string("its operands are not all buffers");
  for (auto [dim, type] : llvm::enumerate(op.getIteratorTypesArray()))
    (type == utils::IteratorType::parallel ? plan.parallelDims
                                           : plan.reductionDims)
        .push_back(dim);

  // Each thread owns the output elements of its point: every output map
  // takes exactly the parallel loops, each once.
  for (OpOperand &init : op.getDpsInitsMutable()) {
    AffineMap map = op.getMatchingIndexingMap(&init);
    if (!map.isProjectedPermutation(/*allowZeroInResults=*/false) ||
        map.getNumResults() != static_cast<unsigned>(plan.parallelDims.size()))
      return std::string("output #") +
             std::to_string(init.getOperandNumber()) +
             " is not indexed by exactly the parallel loops";
    for (int64_t dim : plan.reductionDims)
      if (map.isFunctionOfDim(dim))
        return std::string("output #") +
               std::to_string(init.getOperandNumber()) +
               " is indexed by a reduction loop";
  }

  auto addView = [&](Value buffer, bool written) -> std::optional<std::string> {
    auto type = dyn_cast<MemRefType>(buffer.getType());
    if (!type)
      return std::string("a buffer is not a ranked memref");
    plan.views.push_back(buffer);
    plan.written.push_back(written);
    return std::nullopt;
  };
  auto addValue = [&](Value value) -> std::optional<std::string> {
    if (isConstant(value)) {
      if (!llvm::is_contained(plan.constants, value))
        plan.constants.push_back(value);
      return std::nullopt;
    }
    if (!value.getType().isIntOrIndexOrFloat())
      return std::string("its body reads a value from above that is not a "
                         "buffer, a constant or a scalar");
    if (!llvm::is_contained(plan.scalars, value))
      plan.scalars.push_back(value);
    return std::nullopt;
  };
  for (OpOperand &operand : op->getOpOperands()) {
    Value value = operand.get();
    bool isInit = op.isDpsInit(&operand);
    std::optional<std::string> reason =
        isa<ShapedType>(value.getType()) ? addView(value, isInit)
                                         : addValue(value);
    if (reason)
      return reason;
  }

  // The body computes; it reads memory only by loads of buffers defined
  // above the op.
  Region &body = op->getRegion(0);
  WalkResult walk = body.walk([&](Operation *nested) {
    if (auto load = dyn_cast<memref::LoadOp>(nested))
      return load.getMemRef().getParentRegion()->isProperAncestor(&body)
                 ? WalkResult::advance()
                 : WalkResult::interrupt();
    if (isa<linalg::IndexOp, linalg::YieldOp>(nested) ||
        nested->hasTrait<OpTrait::HasRecursiveMemoryEffects>() ||
        isMemoryEffectFree(nested))
      return WalkResult::advance();
    return WalkResult::interrupt();
  });
  if (walk.wasInterrupted())
    return std::string("its body has memory effects other than loads of "
                       "buffers defined above it");
  SetVector<Value> above;
  getUsedValuesDefinedAbove(body, above);
  for (Value value : above) {
    if (isa<BaseMemRefType>(value.getType())) {
      bool onlyLoaded = llvm::all_of(value.getUsers(), [&](Operation *user) {
        return !body.isAncestor(user->getParentRegion()) ||
               isa<memref::LoadOp>(user);
      });
      if (!onlyLoaded)
        return std::string("its body uses a buffer from above other than by "
                           "memref.load");
      if (!llvm::is_contained(plan.views, value))
        if (std::optional<std::string> reason = addView(value, false))
          return reason;
      continue;
    }
    if (std::optional<std::string> reason = addValue(value))
      return reason;
  }
  return std::nullopt;
}

/// Whether `op` combines values associatively and commutatively, so that
/// lanes may reduce parts of a reduction and shuffles their results, in any
/// order (floating-point sums round differently, as any reassociation).
static bool isGroupCombiner(Operation *op) {
  return isa<arith::AddFOp, arith::MulFOp, arith::MaximumFOp, arith::MinimumFOp,
             arith::MaxNumFOp, arith::MinNumFOp, arith::AddIOp, arith::MulIOp,
             arith::AndIOp, arith::OrIOp, arith::XOrIOp, arith::MaxSIOp,
             arith::MinSIOp, arith::MaxUIOp, arith::MinUIOp>(op);
}

/// Sets `plan.lanes` above 1 where a group of lanes should share each point
/// of `op`'s parallel loops: its reduction loops' innermost one runs along
/// the contiguous dimension of more of its inputs than the innermost
/// parallel loop does (one thread per point would have a warp's loads touch
/// 32 rows at once), and every output is a reduction by one combiner
/// (`isGroupCombiner`) of a type shuffles move (32-bit, or a 16-bit float
/// combined in f32 across lanes). The group has as many lanes as the
/// reduction has points, rounded up to a power of two, up to 32 (32 when
/// its size is dynamic).
static void chooseLanes(linalg::LinalgOp op, KernelPlan &plan) {
  if (plan.reductionDims.empty())
    return;
  SmallVector<BlockArgument> carried(op.getRegionOutputArgs());
  SmallVector<Operation *> combiners;
  for (unsigned i = 0; i < carried.size(); ++i) {
    SmallVector<Operation *> ops;
    if (!matchReduction(carried, i, ops) || ops.size() != 1 ||
        !isGroupCombiner(ops.front()))
      return;
    Type type = ops.front()->getResult(0).getType();
    if (!(type.isF32() || type.isF16() || type.isBF16() ||
          type.isInteger(32)) ||
        !arith::getNeutralElement(ops.front()))
      return;
    combiners.push_back(ops.front());
  }

  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t points = 1;
  for (int64_t dim : plan.reductionDims)
    points = ShapedType::isDynamic(ranges[dim]) || ShapedType::isDynamic(points)
                 ? ShapedType::kDynamic
                 : points * ranges[dim];
  int64_t lanes = ShapedType::isDynamic(points)
                      ? 32
                      : std::min<int64_t>(32, llvm::PowerOf2Ceil(points));
  if (lanes < 2)
    return;

  MLIRContext *context = op.getContext();
  AffineExpr innerReduction =
      getAffineDimExpr(plan.reductionDims.back(), context);
  AffineExpr innerParallel =
      plan.parallelDims.empty()
          ? AffineExpr()
          : getAffineDimExpr(plan.parallelDims.back(), context);
  int64_t alongReduction = 0, alongParallel = 0;
  for (OpOperand *input : op.getDpsInputOperands()) {
    auto type = dyn_cast<MemRefType>(input->get().getType());
    if (!type || type.getRank() == 0)
      continue;
    SmallVector<int64_t> strides;
    int64_t offset;
    if (failed(type.getStridesAndOffset(strides, offset)) ||
        strides.back() != 1)
      continue;
    AffineExpr contiguous =
        op.getMatchingIndexingMap(input).getResults().back();
    if (contiguous == innerReduction)
      ++alongReduction;
    else if (contiguous == innerParallel)
      ++alongParallel;
  }
  if (alongReduction <= alongParallel)
    return;
  plan.lanes = lanes;
  plan.combiners = std::move(combiners);
}

namespace {

/// Builds the kernel of one linalg op and its launch.
class LinalgKernelBuilder {
public:
  LinalgKernelBuilder(ModuleOp module, gpu::GPUModuleOp kernels,
                      int64_t blockSize)
      : module(module), kernels(kernels), blockSize(blockSize),
        rewriter(module.getContext()) {}

  void build(linalg::LinalgOp op, const KernelPlan &plan);

private:
  gpu::GPUFuncOp buildKernel(linalg::LinalgOp op, const KernelPlan &plan);
  SmallVector<Value> emitBody(linalg::LinalgOp op, const KernelPlan &plan,
                              ArrayRef<BlockArgument> args, ArrayRef<Value> ivs,
                              IRMapping &mapping, ValueRange outputs);

  ModuleOp module;
  gpu::GPUModuleOp kernels;
  int64_t blockSize;
  IRRewriter rewriter;
};

} // namespace

/// Kernel arguments: per view its flat buffer, offset and strides; then the
/// op's loop sizes; then the scalars from above.
static unsigned viewArgBegin(const KernelPlan &plan, unsigned view) {
  unsigned at = 0;
  for (unsigned i = 0; i < view; ++i)
    at += 2 + cast<MemRefType>(plan.views[i].getType()).getRank();
  return at;
}

/// The element of view `view` at `indices`, as an index into its flat buffer
/// (kernel side).
static Value flatIndex(KernelBuilder &kb, const KernelPlan &plan,
                       ArrayRef<BlockArgument> args, unsigned view,
                       ValueRange indices) {
  unsigned at = viewArgBegin(plan, view);
  Value index = args[at + 1];
  for (auto [i, value] : llvm::enumerate(indices))
    index = kb.add(index, kb.mul(value, args[at + 2 + i]));
  return index;
}

/// The views of `op`'s operands, in operand order (scalar operands have
/// none).
static SmallVector<std::optional<unsigned>> operandViews(linalg::LinalgOp op) {
  SmallVector<std::optional<unsigned>> views;
  unsigned view = 0;
  for (OpOperand &operand : op->getOpOperands())
    views.push_back(isa<ShapedType>(operand.get().getType())
                        ? std::optional<unsigned>(view++)
                        : std::nullopt);
  return views;
}

SmallVector<Value> LinalgKernelBuilder::emitBody(linalg::LinalgOp op,
                                                 const KernelPlan &plan,
                                                 ArrayRef<BlockArgument> args,
                                                 ArrayRef<Value> ivs,
                                                 IRMapping &mapping,
                                                 ValueRange outputs) {
  Location loc = op.getLoc();
  KernelBuilder kb(rewriter, loc, Type());
  Block *block = op.getBlock();
  SmallVector<std::optional<unsigned>> views = operandViews(op);
  for (OpOperand &operand : op->getOpOperands()) {
    BlockArgument blockArg = block->getArgument(operand.getOperandNumber());
    if (op.isDpsInit(&operand)) {
      // Not loaded when the body does not read it.
      if (Value output =
              outputs[operand.getOperandNumber() - op.getNumDpsInputs()])
        mapping.map(blockArg, output);
      continue;
    }
    std::optional<unsigned> view = views[operand.getOperandNumber()];
    if (!view) {
      mapping.map(blockArg, mapping.lookup(operand.get()));
      continue;
    }
    if (blockArg.use_empty())
      continue;
    std::optional<SmallVector<Value, 8>> indices = affine::expandAffineMap(
        rewriter, loc, op.getMatchingIndexingMap(&operand), ivs);
    mapping.map(blockArg, memref::LoadOp::create(
                              rewriter, loc, args[viewArgBegin(plan, *view)],
                              flatIndex(kb, plan, args, *view, *indices)));
  }

  // The body, with the loop indices and the loads of buffers from above
  // rewritten to the kernel's.
  SmallVector<Operation *> cloned;
  for (Operation &nested : block->without_terminator())
    cloned.push_back(rewriter.clone(nested, mapping));
  {
    OpBuilder::InsertionGuard guard(rewriter);
    for (Operation *top : cloned) {
      SmallVector<Operation *> inner;
      top->walk([&](Operation *nested) { inner.push_back(nested); });
      for (Operation *nested : inner) {
        if (auto index = dyn_cast<linalg::IndexOp>(nested)) {
          rewriter.replaceOp(index, ivs[index.getDim()]);
          continue;
        }
        auto load = dyn_cast<memref::LoadOp>(nested);
        auto it = load ? llvm::find(plan.views, load.getMemRef())
                       : plan.views.end();
        if (it == plan.views.end())
          continue; // not a load of a buffer from above
        rewriter.setInsertionPoint(load);
        unsigned loaded = it - plan.views.begin();
        Value at = flatIndex(kb, plan, args, loaded, load.getIndices());
        rewriter.replaceOp(load, memref::LoadOp::create(
                                     rewriter, loc,
                                     args[viewArgBegin(plan, loaded)], at));
      }
    }
  }
  SmallVector<Value> yielded;
  for (Value value : cast<linalg::YieldOp>(block->getTerminator()).getValues())
    yielded.push_back(mapping.lookupOrDefault(value));
  return yielded;
}

gpu::GPUFuncOp LinalgKernelBuilder::buildKernel(linalg::LinalgOp op,
                                                const KernelPlan &plan) {
  Location loc = op.getLoc();
  MLIRContext *context = op.getContext();
  Type index = IndexType::get(context);
  SmallVector<Type> argTypes;
  for (Value view : plan.views) {
    auto type = cast<MemRefType>(view.getType());
    argTypes.push_back(flatBufferType(type.getElementType()));
    argTypes.append(1 + type.getRank(), index);
  }
  argTypes.append(op.getNumLoops(), index);
  for (Value scalar : plan.scalars)
    argTypes.push_back(scalar.getType());
  std::string name = ("linattn_linalg_" + op->getName().stripDialect()).str();
  gpu::GPUFuncOp kernel =
      createKernel(rewriter, loc, kernels, name, argTypes, {});
  kernel.setKnownBlockSizeAttr(rewriter.getDenseI32ArrayAttr(
      {static_cast<int32_t>(blockSize), 1, 1}));
  OpBuilder::InsertionGuard guard(rewriter);
  setInsertionPointToKernelBody(rewriter, kernel);
  KernelBuilder kb(rewriter, loc, Type());
  ArrayRef<BlockArgument> args = kernel.getArguments();
  unsigned sizesBegin = viewArgBegin(plan, plan.views.size());
  auto size = [&](int64_t dim) -> Value { return args[sizesBegin + dim]; };

  // What the body takes from above: constants cloned, scalars the kernel's
  // arguments.
  IRMapping mapping;
  for (Value constant : plan.constants)
    mapping.map(constant,
                rewriter.clone(*constant.getDefiningOp())->getResult(0));
  unsigned scalarsBegin = sizesBegin + op.getNumLoops();
  for (auto [i, scalar] : llvm::enumerate(plan.scalars))
    mapping.map(scalar, args[scalarsBegin + i]);

  // The parallel points, the last parallel loop fastest across threads (or
  // groups of lanes), in a grid-stride loop.
  Value points;
  for (int64_t dim : plan.parallelDims)
    points = points ? kb.mul(points, size(dim)) : size(dim);
  if (!points)
    points = kb.idx(1);
  // Sets the indices of loops `dims` in `ivs` from `flat`, their flattened
  // index (the last loop fastest).
  auto unflatten = [&](Value flat, ArrayRef<int64_t> dims,
                       SmallVector<Value> &ivs) {
    Value rest = flat;
    for (auto [i, dim] : llvm::enumerate(llvm::reverse(dims))) {
      bool outermost = i + 1 == dims.size();
      ivs[dim] = outermost ? rest : kb.remU(rest, size(dim));
      if (!outermost)
        rest = kb.divU(rest, size(dim));
    }
  };
  auto parallelIvs = [&](Value point) {
    SmallVector<Value> ivs(op.getNumLoops(), kb.idx(0));
    unflatten(point, plan.parallelDims, ivs);
    return ivs;
  };
  // Where each output of the point at `ivs` is (flat buffer, index).
  SmallVector<std::optional<unsigned>> views = operandViews(op);
  auto outputsAt = [&](ArrayRef<Value> ivs) {
    SmallVector<std::pair<Value, Value>> at;
    for (OpOperand &init : op.getDpsInitsMutable()) {
      unsigned view = *views[init.getOperandNumber()];
      std::optional<SmallVector<Value, 8>> indices = affine::expandAffineMap(
          rewriter, loc, op.getMatchingIndexingMap(&init), ivs);
      at.push_back({args[viewArgBegin(plan, view)],
                    flatIndex(kb, plan, args, view, *indices)});
    }
    return at;
  };
  Value tid = kb.threadId();
  Value stride =
      kb.mul(gpu::GridDimOp::create(rewriter, loc, gpu::Dimension::x),
             kb.idx(blockSize / plan.lanes));

  if (plan.lanes == 1) {
    Value first =
        kb.add(kb.mul(kb.blockId(gpu::Dimension::x), kb.idx(blockSize)), tid);
    kb.forLoop(first, points, stride, [&](Value point) {
      SmallVector<Value> ivs = parallelIvs(point);
      // The point's outputs (no reduction loop indexes them), loaded where
      // the body reads them or reductions carry them, then carried through
      // the reduction loops in registers and stored once.
      SmallVector<std::pair<Value, Value>> stores = outputsAt(ivs);
      SmallVector<Value> outputs;
      for (auto [init, store] : llvm::zip(op.getDpsInitsMutable(), stores)) {
        bool read = !op.getMatchingBlockArgument(&init).use_empty();
        outputs.push_back(read || !plan.reductionDims.empty()
                              ? memref::LoadOp::create(
                                    rewriter, loc, store.first, store.second)
                                    .getResult()
                              : Value());
      }
      std::function<SmallVector<Value>(unsigned, ValueRange)> loops =
          [&](unsigned depth, ValueRange carried) -> SmallVector<Value> {
        if (depth == plan.reductionDims.size())
          return emitBody(op, plan, args, ivs, mapping, carried);
        int64_t dim = plan.reductionDims[depth];
        return kb.forLoop(kb.idx(0), size(dim), kb.idx(1), carried,
                          [&](Value iv, ValueRange values) {
                            ivs[dim] = iv;
                            return loops(depth + 1, values);
                          });
      };
      SmallVector<Value> results = loops(0, outputs);
      for (auto [value, store] : llvm::zip(results, stores))
        memref::StoreOp::create(rewriter, loc, value, store.first,
                                store.second);
    });
    return kernel;
  }

  // Groups of `lanes` lanes share a point: lane l of its group takes the
  // points l, l + lanes, ... of the reduction loops (flattened, the
  // innermost fastest), from the combiners' neutral elements; shuffles
  // combine the lanes' partial results, and the group's first lane combines
  // them with the output and stores it. A warp's groups take consecutive
  // points and all its lanes run the same rounds of the grid-stride loop
  // (a group past the last point reduces nothing), as the shuffles need.
  int64_t lanes = plan.lanes;
  Value inWarp = kb.remU(tid, kb.idx(32));
  Value lane = kb.remU(tid, kb.idx(lanes));
  Value warpFirst =
      kb.divU(kb.add(kb.mul(kb.blockId(gpu::Dimension::x), kb.idx(blockSize)),
                     kb.sub(tid, inWarp)),
              kb.idx(lanes));
  Value reductionPoints = kb.idx(1);
  for (int64_t dim : plan.reductionDims)
    reductionPoints = kb.mul(reductionPoints, size(dim));
  auto combine = [&](Operation *combiner, Value x, Value y) -> Value {
    OperationState state(loc, combiner->getName());
    state.addOperands({x, y});
    state.addTypes(x.getType());
    state.addAttributes(combiner->getAttrs());
    return rewriter.create(state)->getResult(0);
  };
  SmallVector<Value> neutral;
  for (Operation *combiner : plan.combiners)
    neutral.push_back(arith::ConstantOp::create(
        rewriter, loc, *arith::getNeutralElement(combiner)));
  kb.forLoop(warpFirst, points, stride, [&](Value base) {
    Value point = kb.add(base, kb.divU(inWarp, kb.idx(lanes)));
    Value active = kb.ult(point, points);
    // A group past the last point takes the last one's indices (loads
    // nothing, stores nothing).
    SmallVector<Value> pointIvs =
        parallelIvs(kb.minU(point, kb.sub(points, kb.idx(1))));
    SmallVector<Value> ivs = pointIvs;
    SmallVector<Value> partial =
        kb.forLoop(lane, kb.select(active, reductionPoints, kb.idx(0)),
                   kb.idx(lanes), neutral, [&](Value flat, ValueRange carried) {
                     unflatten(flat, plan.reductionDims, ivs);
                     return emitBody(op, plan, args, ivs, mapping, carried);
                   });
    // Combined across the group (16-bit floats in f32).
    for (size_t i = 0; i < partial.size(); ++i)
      partial[i] = kb.reduceOverLanes(partial[i], lanes, [&](Value x, Value y) {
        return combine(plan.combiners[i], x, y);
      });
    kb.ifThen(
        arith::AndIOp::create(rewriter, loc, active, kb.eq(lane, kb.idx(0))),
        [&] {
          for (auto [value, combiner, store] :
               llvm::zip(partial, plan.combiners, outputsAt(pointIvs))) {
            Value init = memref::LoadOp::create(rewriter, loc, store.first,
                                                store.second);
            memref::StoreOp::create(rewriter, loc,
                                    combine(combiner, init, value), store.first,
                                    store.second);
          }
        });
  });
  return kernel;
}

/// Whether `view` is a whole buffer (an allocation or an argument, not a
/// view into one), of which an output of the op writes every element.
static bool isWholeBuffer(Value view) {
  auto type = cast<MemRefType>(view.getType());
  return type.getLayout().isIdentity() &&
         (isa<BlockArgument>(view) ||
          isa_and_present<memref::AllocOp, memref::AllocaOp>(
              view.getDefiningOp()));
}

void LinalgKernelBuilder::build(linalg::LinalgOp op, const KernelPlan &plan) {
  gpu::GPUFuncOp kernel = buildKernel(op, plan);
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  HostIndex host{rewriter, loc};
  LaunchBuilder launch(rewriter, loc, module);

  // Each view as its flat buffer: the base buffer from its offset to its
  // last element (none when it is empty).
  for (auto [view, written] : llvm::zip(plan.views, plan.written)) {
    auto type = cast<MemRefType>(view.getType());
    auto metadata = memref::ExtractStridedMetadataOp::create(rewriter, loc, view);
    Value offset = metadata.getOffset();
    Value extent = rewriter.createOrFold<arith::AddIOp>(loc, offset,
                                                        host.constant(1));
    Value empty;
    for (auto [size, stride] :
         llvm::zip(metadata.getSizes(), metadata.getStrides())) {
      Value last = rewriter.createOrFold<arith::SubIOp>(loc, size,
                                                        host.constant(1));
      extent = rewriter.createOrFold<arith::AddIOp>(
          loc, extent, host.mul(last, stride));
      Value none = rewriter.createOrFold<arith::CmpIOp>(
          loc, arith::CmpIPredicate::eq, size, host.constant(0));
      empty = empty ? rewriter.createOrFold<arith::OrIOp>(loc, empty, none)
                    : none;
    }
    if (empty)
      extent = rewriter.createOrFold<arith::SelectOp>(
          loc, empty, host.constant(0), extent);
    Value flat = memref::ReinterpretCastOp::create(
        rewriter, loc, flatBufferType(type.getElementType()),
        metadata.getBaseBuffer(), rewriter.getIndexAttr(0),
        {getAsOpFoldResult(extent)}, {rewriter.getIndexAttr(1)});
    launch.buffer(flat, written, !isWholeBuffer(view));
    launch.scalar(offset);
    for (Value stride : metadata.getStrides())
      launch.scalar(stride);
  }
  SmallVector<Range> ranges = op.createLoopRanges(rewriter, loc);
  Value points = host.constant(1);
  for (auto [dim, range] : llvm::enumerate(ranges)) {
    Value size = getValueOrCreateConstantIndexOp(rewriter, loc, range.size);
    launch.scalar(size);
    if (llvm::is_contained(plan.parallelDims, static_cast<int64_t>(dim)))
      points = host.mul(points, size);
  }
  launch.scalars(plan.scalars);
  // At most 65535 blocks (as many as fill an H100 several times over): the
  // grid-stride loop covers the rest.
  Value one = host.constant(1);
  Value blocks = gridSizeYZ(
      rewriter, loc, tileCount(rewriter, loc, points, blockSize / plan.lanes));
  launch.launch(kernel, {blocks, one, one}, blockSize);
  rewriter.eraseOp(op);
}

namespace {
struct LinAttnGPULinalgKernelsPass
    : public linattn::impl::LinAttnGPULinalgKernelsPassBase<
          LinAttnGPULinalgKernelsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (blockSize <= 0 || blockSize % 32 != 0 || blockSize > 1024) {
      module.emitError("linattn-gpu-linalg-kernels: block-size ")
          << blockSize.getValue() << " is not a multiple of 32 up to 1024";
      return signalPassFailure();
    }
    // The host functions' copies and linalg ops (not the launch stubs', the
    // kernels', or those inside another linalg op's body).
    SmallVector<func::FuncOp> hosts;
    for (auto func : module.getOps<func::FuncOp>())
      if (!func.isDeclaration() && !func->hasAttr(kKernelAttrName))
        hosts.push_back(func);
    for (func::FuncOp func : hosts) {
      SmallVector<memref::CopyOp> copies;
      func.walk([&](memref::CopyOp copy) { copies.push_back(copy); });
      for (memref::CopyOp copy : copies) {
        OpBuilder b(copy);
        linalg::CopyOp::create(b, copy.getLoc(), copy.getSource(),
                               copy.getTarget());
        copy.erase();
      }
    }
    SmallVector<linalg::LinalgOp> ops;
    for (func::FuncOp func : hosts)
      func.walk([&](linalg::LinalgOp op) {
        if (!op->getParentOfType<linalg::LinalgOp>())
          ops.push_back(op);
      });
    // Left to the host: device-buffers reports it, with the reason.
    OpBuilder b(module.getContext());
    std::vector<std::pair<linalg::LinalgOp, KernelPlan>> plans;
    for (linalg::LinalgOp op : ops) {
      KernelPlan plan;
      if (std::optional<std::string> reason = planKernel(op, plan)) {
        op->setAttr(kNoKernelAttrName, b.getStringAttr(*reason));
        continue;
      }
      chooseLanes(op, plan);
      plans.push_back({op, std::move(plan)});
    }
    if (plans.empty())
      return;

    auto kernels = module.lookupSymbol<gpu::GPUModuleOp>(kKernelModuleName);
    if (!kernels) {
      b.setInsertionPointToEnd(module.getBody());
      kernels = gpu::GPUModuleOp::create(b, module.getLoc(), kKernelModuleName);
    }
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                    b.getUnitAttr());
    LinalgKernelBuilder builder(module, kernels, blockSize);
    for (auto &[op, plan] : plans)
      builder.build(op, plan);
  }
};
} // namespace
