//===- LinAttnToGPU.cpp - linattn to GPU kernels --------------------------===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//
//
// Generates one `gpu.func` per linattn op of the linear and scan forms and
// replaces the op by a launch of it. Kernels read and write flattened
// row-major buffers (every leading batch dimension folded into one, b);
// sizes the types leave open are kernel arguments, the feature size F is a
// compile-time constant of each kernel.
//
// - scan: the chunked tensor-core kernels (ChunkedScan.cpp) where they take
//   it, else the recurrent kernel (RecurrentScan.cpp, with the decode step).
// - kv_summary and query_readout with f16/bf16 data and an f32 state (f32
//   data with tf32): the chunked tensor-core kernels (ChunkedScan.cpp).
//   Otherwise kv_summary: one thread per value column d and tile of 16
//   features, a loop over tiles of keys staged in shared memory (each
//   V[j, d] loaded once for the 16 features); query_readout: one block per tile
//   of 16 tokens and of value columns, the tokens' query features staged in
//   shared memory, each thread's S[:, d] loaded once for the tile.
// - scores, apply_scores and the feature maps: one thread per output.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilders.h"

#include "linattn/Conversion/Passes.h"
#include "linattn/IR/LinAttnDialect.h"
#include "linattn/Transforms/Utils.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

namespace mlir::linattn {
#define GEN_PASS_DEF_CONVERTLINATTNTOGPUPASS
#include "linattn/Conversion/Passes.h.inc"
} // namespace mlir::linattn

using namespace mlir;
using namespace mlir::linattn;
using namespace mlir::linattn::gpukernels;

gpu::GPUModuleOp Converter::kernels() {
  if (kernelModule)
    return kernelModule;
  kernelModule = module.lookupSymbol<gpu::GPUModuleOp>(kKernelModuleName);
  if (!kernelModule) {
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToEnd(module.getBody());
    kernelModule =
        gpu::GPUModuleOp::create(rewriter, module.getLoc(), kKernelModuleName);
  }
  module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                  rewriter.getUnitAttr());
  return kernelModule;
}

/// Features per block and keys per staged tile of the scalar key-value
/// summary: each element of V it loads serves kSummaryFeatures products.
static constexpr int64_t kSummaryFeatures = 16;
static constexpr int64_t kSummaryKeys = 32;

/// Tokens per block of the scalar query readout: each element of S it
/// loads serves that many products.
static constexpr int64_t kReadoutTokens = 16;
static_assert(kReadoutTokens % 4 == 0, "the staging takes four tokens a warp");

/// Shared memory of the scalar query readout's staged φ(q): the features
/// are staged in panels that fit it (512 features in f32), so that any
/// feature count (poly2's 1 + D + D², favor's projections) fits a block of
/// every chip, within CUDA's static 48 KiB.
static constexpr int64_t kReadoutPanelBytes = 40 * 1024;

/// acc[i] + buffer[base + i] · x for every i < acc.size() (a multiple of 4),
/// the elements of the workgroup buffer read four at a time (`base` 16-byte
/// aligned): the inner products of the scalar linear-form kernels.
static SmallVector<Value> addScaledRow(KernelBuilder &kb, Value buffer,
                                       Value base, Value x, ValueRange acc) {
  SmallVector<Value> next;
  for (int64_t i = 0; i < static_cast<int64_t>(acc.size()); i += 4)
    for (auto [e, element] :
         llvm::enumerate(kb.loadRun(buffer, kb.add(base, kb.idx(i)), 4)))
      next.push_back(kb.fma(element, x, acc[i + e]));
  return next;
}

/// Adds O of the scan `op` to `launch`: like `values` (V, heads-first), or
/// token-major like `rows`' values.
static void addScanOutput(OpBuilder &b, LaunchBuilder &launch, ScanOp op,
                          Value values, const TokenMajorRows &rows) {
  Location loc = op.getLoc();
  if (rows) {
    addTokenMajorOutput(b, launch, rows.result, rows.values,
                        sizeOf(b, loc, rows.values, -1));
    return;
  }
  int64_t batchDims = tensorTypeOf(values).getRank() - 2;
  launch.output(
      tensorTypeOf(op.getResult()),
      leadingThen(b, loc, values, batchDims,
                  {sizeOf(b, loc, values, -2), sizeOf(b, loc, values, -1)}));
}

/// Launches the scan kernel `kernel` for `op`: inputs φ(Q) or Q, φ(K)
/// or K (`queries`, `keys`), V or the input of its elementwise feature map
/// (`values`) and the initial state, outputs O and, when
/// `scanWritesState(op)`, S and z, scalars N and Dv; grid (batch, Dv tiles
/// of `dvTile`, at least one so that z is written when Dv = 0), `threads`
/// threads per block. With token-major `rows` the inputs are theirs, O is
/// token-major and H follows the scalars.
SmallVector<Value> Converter::launchScan(ScanOp op, gpu::GPUFuncOp kernel,
                                         Value queries, Value keys,
                                         Value values, int64_t features,
                                         int64_t dvTile, int64_t threads,
                                         const TokenMajorRows &rows) {
  Location loc = op.getLoc();
  LaunchBuilder launch(rewriter, loc, module);
  int64_t batchDims = tensorTypeOf(values).getRank() - 2;
  launch.input(rows ? rows.queries : queries);
  launch.input(rows ? rows.keys : keys);
  launch.input(rows ? rows.values : values);
  if (op.hasInitialState()) {
    launch.input(op.getInitialState());
    launch.input(op.getInitialNormalizer());
  }
  OpFoldResult seq = sizeOf(rewriter, loc, values, -2);
  OpFoldResult dvSize = sizeOf(rewriter, loc, values, -1);
  OpFoldResult fSize = rewriter.getIndexAttr(features);
  addScanOutput(rewriter, launch, op, values, rows);
  if (scanWritesState(op)) {
    launch.output(
        cast<RankedTensorType>(op.getFinalState().getType()),
        leadingThen(rewriter, loc, values, batchDims, {fSize, dvSize}));
    launch.output(cast<RankedTensorType>(op.getFinalNormalizer().getType()),
                  leadingThen(rewriter, loc, values, batchDims, {fSize}));
  }
  Value nValue = getValueOrCreateConstantIndexOp(rewriter, loc, seq);
  Value dvValue = getValueOrCreateConstantIndexOp(rewriter, loc, dvSize);
  launch.scalar(nValue);
  launch.scalar(dvValue);
  if (rows)
    launch.scalar(rows.heads);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  Value tiles = tileCount(rewriter, loc, dvValue, dvTile);
  return launch.launch(
      kernel, {batchProduct(rewriter, loc, values, batchDims), tiles, one},
      threads);
}

/// Launches the first two kernels of a sequence-parallel scan for `op`:
/// 1. `kernels.states`, over the grid (`batch`, `kernels.statesTiles` or
///    `tiles`, `segments`): each segment's contribution to S and z, from K
///    (or its feature map's input, `keys`) and V (or its elementwise
///    feature map's input, `values`) into flat buffers of the state's type,
///    [batch, segments, F, Dv] and [batch, segments, F]; all but the last
///    segment's when the scan does not write S and z, whose contribution
///    only they would include (grid z one less: `segments` is at least 2
///    here);
/// 2. `kernels.prefix` (`buildSegmentScan`), over (batch, element tiles):
///    the state at each segment's start, from the initial state when there
///    is one, and the final S and z when `scanWritesState(op)`.
/// Returns the starting states and normalizers, then S and z when
/// `scanWritesState(op)`. With token-major `rows`, `values` are still the
/// heads-first V (its sizes) and the states kernel reads `rows`' sources.
SmallVector<Value>
Converter::launchSegmentPrefixes(ScanOp op, const SegmentKernels &kernels,
                                 Value keys, Value values, Value batch,
                                 Value tiles, Value perSegment, Value segments,
                                 int64_t threads, const TokenMajorRows &rows) {
  Location loc = op.getLoc();
  int64_t features = tensorTypeOf(op.getQueryFeatures()).getShape().back();
  Type stateType = tensorTypeOf(op.getFinalState()).getElementType();
  HostIndex h{rewriter, loc};
  int64_t batchDims = tensorTypeOf(values).getRank() - 2;
  OpFoldResult dvSize = sizeOf(rewriter, loc, values, -1);
  Value n = h.size(values, -2);
  Value dv = h.size(values, -1);
  Value slots = h.mul(h.mul(batch, segments), h.constant(features));
  OpFoldResult stateSize = h.mul(slots, dv), normalizerSize = slots;
  auto flat = RankedTensorType::get({ShapedType::kDynamic}, stateType);

  // The segments' contributions to the state.
  LaunchBuilder contributions(rewriter, loc, module);
  contributions.input(rows ? rows.keys : keys);
  contributions.input(rows ? rows.values : values);
  contributions.output(flat, {stateSize});
  contributions.output(flat, {normalizerSize});
  contributions.scalars({n, dv, perSegment, segments});
  if (rows)
    contributions.scalar(rows.heads);
  bool writesState = scanWritesState(op);
  Value contributing =
      writesState
          ? segments
          : rewriter.createOrFold<arith::SubIOp>(loc, segments, h.constant(1));
  SmallVector<Value> sums = contributions.launch(
      kernels.states,
      {batch, kernels.statesTiles ? kernels.statesTiles : tiles, contributing},
      threads);

  // The scan over the segments.
  LaunchBuilder prefix(rewriter, loc, module);
  prefix.input(sums[0]);
  prefix.input(sums[1]);
  if (op.hasInitialState()) {
    prefix.input(op.getInitialState());
    prefix.input(op.getInitialNormalizer());
  }
  OpFoldResult fSize = rewriter.getIndexAttr(features);
  prefix.output(flat, {stateSize});
  prefix.output(flat, {normalizerSize});
  if (writesState) {
    prefix.output(
        cast<RankedTensorType>(op.getFinalState().getType()),
        leadingThen(rewriter, loc, values, batchDims, {fSize, dvSize}));
    prefix.output(cast<RankedTensorType>(op.getFinalNormalizer().getType()),
                  leadingThen(rewriter, loc, values, batchDims, {fSize}));
  }
  prefix.scalars({dv, segments});
  Value elementTiles = h.atLeastOne(h.divideCeil(
      h.mul(h.constant(features), dv), h.constant(kSegmentScanThreads)));
  return prefix.launch(
      kernels.prefix,
      {batch, gridSizeYZ(rewriter, loc, elementTiles), h.constant(1)},
      kSegmentScanThreads);
}

/// Launches the last kernel of a sequence-parallel scan for `op`, `outputs`
/// over the grid (`batch`, `tiles` value tiles, `segments`): each
/// segment's outputs from `queries`, `keys`, V and its starting state and
/// normalizer (the first two of `prefixes`, as `launchSegmentPrefixes`
/// returns them). Returns O. With token-major `rows`, `values` are still
/// the heads-first V (its sizes), the kernel reads `rows`' sources, O is
/// token-major and H follows the scalars.
Value Converter::launchSegmentOutputs(ScanOp op, gpu::GPUFuncOp outputs,
                                      Value queries, Value keys, Value values,
                                      ValueRange prefixes, Value batch,
                                      Value tiles, Value perSegment,
                                      Value segments, int64_t threads,
                                      const TokenMajorRows &rows) {
  Location loc = op.getLoc();
  HostIndex h{rewriter, loc};
  LaunchBuilder launch(rewriter, loc, module);
  launch.input(rows ? rows.queries : queries);
  launch.input(rows ? rows.keys : keys);
  launch.input(rows ? rows.values : values);
  launch.input(prefixes[0]);
  launch.input(prefixes[1]);
  addScanOutput(rewriter, launch, op, values, rows);
  launch.scalars(
      {h.size(values, -2), h.size(values, -1), perSegment, segments});
  if (rows)
    launch.scalar(rows.heads);
  return launch.launch(outputs, {batch, tiles, segments}, threads).front();
}

/// Launches the three kernels of a sequence-parallel scan for `op`
/// (`launchSegmentPrefixes`, then `kernels.outputs` as
/// `launchSegmentOutputs` does). Returns O, then S and z when
/// `scanWritesState(op)`.
SmallVector<Value>
Converter::launchSegments(ScanOp op, const SegmentKernels &kernels,
                          Value queries, Value keys, Value values, Value batch,
                          Value tiles, Value perSegment, Value segments,
                          int64_t threads, const TokenMajorRows &rows) {
  SmallVector<Value> p =
      launchSegmentPrefixes(op, kernels, keys, values, batch, tiles, perSegment,
                            segments, threads, rows);
  Value o =
      launchSegmentOutputs(op, kernels.outputs, queries, keys, values, p, batch,
                           tiles, perSegment, segments, threads, rows);
  return withSegmentState(op, o, p);
}

/// O followed by the final S and z of `prefixes` (as
/// `launchSegmentPrefixes` returns them) when `scanWritesState(op)`.
SmallVector<Value> Converter::withSegmentState(ScanOp op, Value o,
                                               ValueRange prefixes) {
  if (!scanWritesState(op))
    return {o};
  return {o, prefixes[2], prefixes[3]};
}

/// The permutation that swaps the token and head dimensions of a rank
/// `rank` tensor: [..., N, H, W] <-> [..., H, N, W].
static SmallVector<int64_t> tokenHeadSwap(int64_t rank) {
  auto swap = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  std::swap(swap[rank - 3], swap[rank - 2]);
  return swap;
}

Value gpukernels::tokenMajorSource(Value tensor) {
  int64_t rank = tensorTypeOf(tensor).getRank();
  auto transpose = tensor.getDefiningOp<linalg::TransposeOp>();
  if (rank < 3 || !transpose ||
      transpose.getPermutation() != ArrayRef(tokenHeadSwap(rank)))
    return Value();
  return transpose.getInput();
}

linalg::TransposeOp gpukernels::tokenMajorUser(Value result) {
  int64_t rank = tensorTypeOf(result).getRank();
  if (rank < 3)
    return {};
  linalg::TransposeOp found;
  for (Operation *user : result.getUsers()) {
    if (auto dim = dyn_cast<tensor::DimOp>(user)) {
      if (!dim.getConstantIndex())
        return {};
      continue;
    }
    auto transpose = dyn_cast<linalg::TransposeOp>(user);
    if (found || !transpose || transpose.getInput() != result ||
        transpose.getPermutation() != ArrayRef(tokenHeadSwap(rank)))
      return {};
    found = transpose;
  }
  return found;
}

TokenMajorRows gpukernels::tokenMajorRows(ScanOp op, const FeatureSource &q,
                                          const FeatureSource &k,
                                          const FeatureSource &v) {
  TokenMajorRows rows;
  rows.queries = tokenMajorSource(q.tensor);
  rows.keys = tokenMajorSource(k.tensor);
  rows.values = tokenMajorSource(v.tensor);
  if (!rows.queries || !rows.keys || !rows.values)
    return {};
  rows.result = tokenMajorUser(op.getResult());
  return rows;
}

void gpukernels::addTokenMajorOutput(OpBuilder &b, LaunchBuilder &launch,
                                     linalg::TransposeOp transpose,
                                     Value source, OpFoldResult columns) {
  SmallVector<OpFoldResult> sizes =
      tensor::getMixedSizes(b, transpose.getLoc(), source);
  sizes.back() = columns;
  launch.output(tensorTypeOf(transpose->getResult(0)), sizes);
}

void gpukernels::replaceByTokenMajor(RewriterBase &rewriter, Value result,
                                     linalg::TransposeOp transpose,
                                     Value tokenMajor) {
  int64_t rank = tensorTypeOf(result).getRank();
  for (Operation *user : llvm::make_early_inc_range(result.getUsers())) {
    auto dim = dyn_cast<tensor::DimOp>(user);
    if (!dim)
      continue;
    int64_t index = *dim.getConstantIndex();
    if (index == rank - 3 || index == rank - 2)
      index = 2 * rank - 5 - index;
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPoint(dim);
    rewriter.replaceOpWithNewOp<tensor::DimOp>(dim, tokenMajor, index);
  }
  rewriter.replaceOp(transpose, tokenMajor);
}

void Converter::replaceScan(ScanOp op, ValueRange results,
                            const TokenMajorRows &rows) {
  if (rows) {
    replaceByTokenMajor(rewriter, op.getResult(), rows.result, results.front());
  } else {
    rewriter.replaceAllUsesWith(op.getResult(), results.front());
  }
  if (results.size() == 3) {
    rewriter.replaceAllUsesWith(op.getFinalState(), results[1]);
    rewriter.replaceAllUsesWith(op.getFinalNormalizer(), results[2]);
  }
  rewriter.eraseOp(op);
}

std::optional<std::string> Converter::convert(ScanOp op) {
  if (options.chunkedScan && !chunkedScanUnsupported(op, options.tf32) &&
      !convertChunked(op))
    return std::nullopt;
  return convertRecurrent(op);
}

std::optional<std::string> Converter::convert(KvSummaryOp op) {
  if (options.chunkedLinear && !chunkedLinearUnsupported(op, options.tf32) &&
      !convertChunked(op))
    return std::nullopt;
  RankedTensorType kType = tensorTypeOf(op.getKeyFeatures());
  RankedTensorType vType = tensorTypeOf(op.getValues());
  RankedTensorType sType = cast<RankedTensorType>(op.getState().getType());
  int64_t rank = kType.getRank();
  int64_t features = kType.getShape().back();
  if (auto reason = checkFeatureSize(features))
    return reason;
  Type stateType = sType.getElementType();
  FeatureSource k = featureSourceOf(op.getKeyFeatures());
  int64_t block = blockSizeFor(vType.getShape().back(), options.blockSize);
  Location loc = op.getLoc();
  // Token-major keys and values are read where the transposes took them
  // from (`TokenRows`).
  Value rawKeys = tokenMajorSource(k.tensor);
  Value rawValues = tokenMajorSource(op.getValues());
  bool tokenMajor = rawKeys && rawValues;

  Type indexType = rewriter.getIndexType();
  SmallVector<Type> argTypes = {
      flatBufferType(tensorTypeOf(k.tensor).getElementType()),
      flatBufferType(vType.getElementType()),
      flatBufferType(stateType),
      flatBufferType(cast<RankedTensorType>(op.getNormalizer().getType())
                         .getElementType()),
      indexType,
      indexType,
      indexType};
  if (tokenMajor)
    argTypes.push_back(indexType); // H
  // φ(K) of a tile of kSummaryKeys keys and the block's kSummaryFeatures
  // features, key-major (16-byte aligned rows of 16 features).
  std::string name = kernelName((Twine("linattn_kv_summary_") + mapName(k) +
                                 (tokenMajor ? "_token_major" : ""))
                                    .str());
  gpu::GPUFuncOp kernel = createKernel(
      rewriter, loc, kernels(), name, argTypes,
      {workgroupBufferType(stateType, kSummaryKeys * kSummaryFeatures)});
  {
    OpBuilder::InsertionGuard guard(rewriter);
    setInsertionPointToKernelBody(rewriter, kernel);
    KernelBuilder kb(rewriter, loc, stateType);
    ArrayRef<BlockArgument> args = kernel.getArguments();
    Value kBuf = args[0], vBuf = args[1], sOut = args[2], zOut = args[3],
          m = args[4], dv = args[5], batches = args[6];
    Value heads = tokenMajor ? Value(args[7]) : Value();
    Value ks = kernel.getWorkgroupAttributions()[0];
    Value c0 = kb.idx(0), c1 = kb.idx(1), cF = kb.idx(features),
          cBlock = kb.idx(block), cFT = kb.idx(kSummaryFeatures),
          cKT = kb.idx(kSummaryKeys);
    Value tid = kb.threadId();
    Value col = kb.add(kb.mul(kb.blockId(gpu::Dimension::x), cBlock), tid);
    Value f0 = kb.mul(kb.blockId(gpu::Dimension::y), cFT);
    Value active = kb.ult(col, dv);
    // The first column tile's threads also sum the keys' features: thread
    // t features f0 + t + p·block, p < parts (one part unless the block has
    // fewer threads than FT).
    int64_t parts = llvm::divideCeil(kSummaryFeatures, block);
    Value firstTile = kb.eq(kb.blockId(gpu::Dimension::x), c0);
    auto summedFeature = [&](int64_t p) {
      return kb.add(tid, kb.idx(p * block));
    };
    auto sumsKeys = [&](int64_t p) {
      return arith::AndIOp::create(rewriter, loc, firstTile,
                                   kb.ult(summedFeature(p), cFT))
          .getResult();
    };
    kb.gridStrideLoop(gpu::Dimension::z, batches, [&](Value batch) {
      TokenRows rows(kb, batch, m, heads);
      SmallVector<Value> init(kSummaryFeatures + parts, kb.fconst(0.0));
      SmallVector<Value> sums = kb.forLoop(
          c0, m, cKT, init,
          [&](Value key0, ValueRange acc) -> SmallVector<Value> {
            Value keys = kb.minU(cKT, kb.sub(m, key0));
            // The previous tile's readers are done; stage this one (zeros
            // past the features and the keys).
            kb.barrier();
            kb.forLoop(
                tid, kb.idx(kSummaryKeys * kSummaryFeatures), cBlock,
                [&](Value i) {
                  Value j = kb.divU(i, cFT), f = kb.add(f0, kb.remU(i, cFT));
                  Value valid = arith::AndIOp::create(
                      rewriter, loc, kb.ult(j, keys), kb.ult(f, cF));
                  Value x =
                      kb.loadIf(valid, kBuf,
                                kb.add(kb.mul(rows(kb.add(key0, j)), cF), f));
                  memref::StoreOp::create(
                      rewriter, loc,
                      kb.select(valid, kb.featureOf(x, k), kb.fconst(0.0)), ks,
                      ValueRange{i});
                });
            kb.barrier();
            // Each V[j, col] loaded once for FT products, φ(k_j) read four
            // features at a time.
            SmallVector<Value> next = kb.forLoop(
                c0, keys, c1, acc.take_front(kSummaryFeatures),
                [&](Value j, ValueRange s) -> SmallVector<Value> {
                  Value v =
                      kb.loadIf(active, vBuf,
                                kb.add(kb.mul(rows(kb.add(key0, j)), dv), col));
                  return addScaledRow(kb, ks, kb.mul(j, cFT), v, s);
                });
            for (int64_t p = 0; p < parts; ++p) {
              Value z = acc[kSummaryFeatures + p];
              auto branch = scf::IfOp::create(
                  rewriter, loc, sumsKeys(p),
                  [&](OpBuilder &, Location) {
                    Value sum = kb.forLoop(
                        c0, keys, c1, ValueRange{z},
                        [&](Value j, ValueRange t) -> SmallVector<Value> {
                          return {kb.fadd(
                              t[0], kb.load(ks, kb.add(kb.mul(j, cFT),
                                                       summedFeature(p))))};
                        })[0];
                    scf::YieldOp::create(rewriter, loc, sum);
                  },
                  [&](OpBuilder &, Location) {
                    scf::YieldOp::create(rewriter, loc, z);
                  });
              next.push_back(branch.getResult(0));
            }
            return next;
          });
      Value stateBase = kb.mul(batch, cF);
      for (int64_t f = 0; f < kSummaryFeatures; ++f) {
        Value feature = kb.add(f0, kb.idx(f));
        kb.ifThen(
            arith::AndIOp::create(rewriter, loc, active, kb.ult(feature, cF)),
            [&] {
              kb.store(sums[f], sOut,
                       kb.add(kb.mul(kb.add(stateBase, feature), dv), col));
            });
      }
      for (int64_t p = 0; p < parts; ++p) {
        Value feature = kb.add(f0, summedFeature(p));
        kb.ifThen(arith::AndIOp::create(rewriter, loc, sumsKeys(p),
                                        kb.ult(feature, cF)),
                  [&] {
                    kb.store(sums[kSummaryFeatures + p], zOut,
                             kb.add(stateBase, feature));
                  });
      }
    });
  }

  rewriter.setInsertionPoint(op);
  LaunchBuilder launch(rewriter, loc, module);
  Value values = op.getValues();
  int64_t batchDims = rank - 2;
  launch.input(tokenMajor ? rawKeys : k.tensor);
  launch.input(tokenMajor ? rawValues : values);
  OpFoldResult mSize = sizeOf(rewriter, loc, values, -2);
  OpFoldResult dvSize = sizeOf(rewriter, loc, values, -1);
  OpFoldResult fSize = rewriter.getIndexAttr(features);
  launch.output(sType,
                leadingThen(rewriter, loc, values, batchDims, {fSize, dvSize}));
  launch.output(cast<RankedTensorType>(op.getNormalizer().getType()),
                leadingThen(rewriter, loc, values, batchDims, {fSize}));
  Value dvValue = getValueOrCreateConstantIndexOp(rewriter, loc, dvSize);
  Value batches = batchProduct(rewriter, loc, values, batchDims);
  launch.scalar(getValueOrCreateConstantIndexOp(rewriter, loc, mSize));
  launch.scalar(dvValue);
  launch.scalar(batches);
  if (tokenMajor)
    launch.scalar(HostIndex{rewriter, loc}.size(values, batchDims - 1));
  Value tiles = tileCount(rewriter, loc, dvValue, block);
  SmallVector<Value> results = launch.launch(
      kernel,
      {tiles,
       arith::ConstantIndexOp::create(
           rewriter, loc, llvm::divideCeil(features, kSummaryFeatures)),
       gridSizeYZ(rewriter, loc, batches)},
      block);
  rewriter.replaceOp(op, results);
  return std::nullopt;
}

std::optional<std::string> Converter::convert(QueryReadoutOp op) {
  if (options.chunkedLinear && !chunkedLinearUnsupported(op, options.tf32) &&
      !convertChunked(op))
    return std::nullopt;
  RankedTensorType qType = tensorTypeOf(op.getQueryFeatures());
  RankedTensorType sType = tensorTypeOf(op.getState());
  int64_t rank = qType.getRank();
  int64_t features = qType.getShape().back();
  if (auto reason = checkFeatureSize(features))
    return reason;
  Type stateType = sType.getElementType();
  FeatureSource q = featureSourceOf(op.getQueryFeatures());
  bool normalized = op.isNormalized();
  double eps = normalized ? op.getEps()->convertToDouble() : 0.0;
  int64_t block = blockSizeFor(sType.getShape().back(), options.blockSize);
  Location loc = op.getLoc();
  // Token-major queries and result: read where the transpose took the
  // queries from, O written as its transpose would (`TokenRows`).
  Value rawQueries = tokenMajorSource(q.tensor);
  linalg::TransposeOp result;
  if (rawQueries)
    result = tokenMajorUser(op.getResult());
  bool tokenMajor = static_cast<bool>(result);

  Type indexType = rewriter.getIndexType();
  SmallVector<Type> argTypes = {
      flatBufferType(tensorTypeOf(q.tensor).getElementType()),
      flatBufferType(stateType)};
  if (normalized)
    argTypes.push_back(
        flatBufferType(tensorTypeOf(op.getNormalizer()).getElementType()));
  argTypes.push_back(
      flatBufferType(tensorTypeOf(op.getResult()).getElementType()));
  argTypes.push_back(indexType);
  argTypes.push_back(indexType);
  argTypes.push_back(indexType);
  if (tokenMajor)
    argTypes.push_back(indexType); // H
  // φ(q) of the tile's tokens feature-major (row f: the TT tokens and 4
  // elements of padding, so that rows start 16-byte aligned and the
  // transposing stores of the staging avoid bank conflicts), a panel of
  // features at a time, and their denominators.
  int64_t pitch = kReadoutTokens + 4;
  int64_t stateBytes = stateType.getIntOrFloatBitWidth() / 8;
  int64_t panel = std::min(features, kReadoutPanelBytes / (pitch * stateBytes));
  SmallVector<Type> shared = {workgroupBufferType(stateType, panel * pitch),
                              workgroupBufferType(stateType, kReadoutTokens)};
  std::string name = kernelName((Twine("linattn_query_readout_") + mapName(q) +
                                 (normalized ? "_normalized" : "") +
                                 (tokenMajor ? "_token_major" : ""))
                                    .str());
  gpu::GPUFuncOp kernel =
      createKernel(rewriter, loc, kernels(), name, argTypes, shared);
  {
    OpBuilder::InsertionGuard guard(rewriter);
    setInsertionPointToKernelBody(rewriter, kernel);
    KernelBuilder kb(rewriter, loc, stateType);
    ArrayRef<BlockArgument> args = kernel.getArguments();
    unsigned a = 0;
    Value qBuf = args[a++], sBuf = args[a++];
    Value zBuf = normalized ? Value(args[a++]) : Value();
    Value oBuf = args[a++], n = args[a++], dv = args[a++], batches = args[a++];
    Value heads = tokenMajor ? Value(args[a]) : Value();
    Value qs = kernel.getWorkgroupAttributions()[0];
    Value dens = kernel.getWorkgroupAttributions()[1];
    Value c0 = kb.idx(0), c1 = kb.idx(1), cF = kb.idx(features),
          cPanel = kb.idx(panel), cBlock = kb.idx(block),
          cTT = kb.idx(kReadoutTokens), cPitch = kb.idx(pitch);
    Value token0 = kb.mul(kb.blockId(gpu::Dimension::x), cTT);
    Value tid = kb.threadId();
    Value col = kb.add(kb.mul(kb.blockId(gpu::Dimension::y), cBlock), tid);
    Value active = kb.ult(col, dv);
    kb.gridStrideLoop(gpu::Dimension::z, batches, [&](Value batch) {
      TokenRows rows(kb, batch, n, heads);
      Value first = rows(token0);
      Value base = kb.mul(batch, cF);
      // The previous batch element's readers are done with the tile and the
      // denominators.
      kb.barrier();
      if (normalized)
        kb.forLoop(tid, cTT, cBlock, [&](Value t) {
          memref::StoreOp::create(rewriter, loc, kb.fconst(eps), dens,
                                  ValueRange{t});
        });
      // O[t, col] for the TT tokens, summed panel by panel: each S[f, col]
      // loaded once for TT products, φ(q) of the tokens read four at a time.
      SmallVector<Value> init(kReadoutTokens, kb.fconst(0.0));
      SmallVector<Value> sums = kb.forLoop(
          c0, cF, cPanel, init,
          [&](Value f0, ValueRange acc) -> SmallVector<Value> {
            Value width = kb.minU(cPanel, kb.sub(cF, f0));
            // The previous panel's readers are done with the tile (the
            // first panel's: the batch element's barrier above).
            if (features > panel)
              kb.barrier();
            // The panel's rows of q, four tokens by eight features a warp:
            // each token's features are consecutive in global memory (in
            // f32 one sector a token), and with rows of TT + 4 elements the
            // warp's 32 stores land in distinct banks (a warp over the
            // features of one token would put every eighth feature in one
            // bank). Tokens past N and features past the last panel's are
            // zeros (and read the tile's first row and the panel's first
            // feature, which exist).
            Value c4 = kb.idx(4);
            kb.forLoop(
                tid, kb.idx(kReadoutTokens * panel), cBlock, [&](Value i) {
                  Value t = kb.add(kb.remU(i, c4),
                                   kb.mul(kb.divU(i, kb.idx(4 * panel)), c4));
                  Value f = kb.remU(kb.divU(i, c4), cPanel);
                  Value valid = arith::AndIOp::create(
                      rewriter, loc, kb.ult(kb.add(token0, t), n),
                      kb.ult(f, width));
                  Value row = rows.after(first, kb.select(valid, t, c0));
                  Value feature = kb.add(f0, kb.select(valid, f, c0));
                  Value x =
                      kb.loadFeature(qBuf, kb.add(kb.mul(row, cF), feature), q);
                  memref::StoreOp::create(
                      rewriter, loc, kb.select(valid, x, kb.fconst(0.0)), qs,
                      ValueRange{kb.add(kb.mul(f, cPitch), t)});
                });
            if (normalized) {
              kb.barrier();
              Value zBase = kb.add(base, f0);
              kb.forLoop(tid, cTT, cBlock, [&](Value t) {
                Value den = kb.forLoop(
                    c0, width, c1,
                    ValueRange{memref::LoadOp::create(rewriter, loc, dens,
                                                      ValueRange{t})},
                    [&](Value f, ValueRange carried) -> SmallVector<Value> {
                      return {kb.fma(kb.load(qs, kb.add(kb.mul(f, cPitch), t)),
                                     kb.load(zBuf, kb.add(zBase, f)),
                                     carried[0])};
                    })[0];
                memref::StoreOp::create(rewriter, loc, den, dens,
                                        ValueRange{t});
              });
            }
            kb.barrier();
            auto panelSums = scf::IfOp::create(
                rewriter, loc, active,
                [&](OpBuilder &, Location) {
                  Value rows = kb.add(base, f0);
                  scf::YieldOp::create(
                      rewriter, loc,
                      kb.forLoop(c0, width, c1, acc,
                                 [&](Value f,
                                     ValueRange carried) -> SmallVector<Value> {
                                   Value s = kb.load(
                                       sBuf, kb.add(kb.mul(kb.add(rows, f), dv),
                                                    col));
                                   return addScaledRow(
                                       kb, qs, kb.mul(f, cPitch), s, carried);
                                 }));
                },
                [&](OpBuilder &, Location) {
                  scf::YieldOp::create(rewriter, loc, acc);
                });
            return SmallVector<Value>(panelSums.getResults());
          });
      // The last panel's barrier is after every denominator's last update;
      // without features, none is between their initialization and reads.
      if (normalized && features == 0)
        kb.barrier();
      kb.ifThen(active, [&] {
        for (int64_t t = 0; t < kReadoutTokens; ++t) {
          Value token = kb.add(token0, kb.idx(t));
          kb.ifThen(kb.ult(token, n), [&] {
            Value out = sums[t];
            if (normalized)
              out = kb.fdiv(out, memref::LoadOp::create(rewriter, loc, dens,
                                                        ValueRange{kb.idx(t)}));
            kb.store(out, oBuf,
                     kb.add(kb.mul(rows.after(first, kb.idx(t)), dv), col));
          });
        }
      });
    });
  }

  rewriter.setInsertionPoint(op);
  LaunchBuilder launch(rewriter, loc, module);
  Value queries = q.tensor, state = op.getState();
  int64_t batchDims = rank - 2;
  launch.input(tokenMajor ? rawQueries : queries);
  launch.input(state);
  if (normalized)
    launch.input(op.getNormalizer());
  OpFoldResult nSize = sizeOf(rewriter, loc, queries, -2);
  OpFoldResult dvSize = sizeOf(rewriter, loc, state, -1);
  if (tokenMajor) {
    addTokenMajorOutput(rewriter, launch, result, rawQueries, dvSize);
  } else {
    launch.output(
        tensorTypeOf(op.getResult()),
        leadingThen(rewriter, loc, queries, batchDims, {nSize, dvSize}));
  }
  Value nValue = getValueOrCreateConstantIndexOp(rewriter, loc, nSize);
  Value dvValue = getValueOrCreateConstantIndexOp(rewriter, loc, dvSize);
  Value batches = batchProduct(rewriter, loc, queries, batchDims);
  launch.scalar(nValue);
  launch.scalar(dvValue);
  launch.scalar(batches);
  if (tokenMajor)
    launch.scalar(HostIndex{rewriter, loc}.size(queries, batchDims - 1));
  Value o = launch
                .launch(kernel,
                        {ceilDiv(rewriter, loc, nValue, kReadoutTokens),
                         ceilDiv(rewriter, loc, dvValue, block),
                         gridSizeYZ(rewriter, loc, batches)},
                        block)
                .front();
  if (tokenMajor) {
    replaceByTokenMajor(rewriter, op.getResult(), result, o);
    rewriter.eraseOp(op);
  } else {
    rewriter.replaceOp(op, o);
  }
  return std::nullopt;
}

std::optional<std::string> Converter::convert(ScoresOp op) {
  RankedTensorType qType = tensorTypeOf(op.getQueryFeatures());
  auto resultType = cast<RankedTensorType>(op.getResult().getType());
  int64_t rank = qType.getRank();
  int64_t features = qType.getShape().back();
  if (auto reason = checkFeatureSize(features))
    return reason;
  Type computeType = getAccumulatorType(resultType.getElementType());
  FeatureSource q = featureSourceOf(op.getQueryFeatures());
  FeatureSource k = featureSourceOf(op.getKeyFeatures());
  int64_t block = blockSizeFor(resultType.getShape().back(), options.blockSize);
  bool causal = op.getCausal();
  double scale = op.getScaleValue();
  Location loc = op.getLoc();

  // One thread per score: grid (key tiles, queries, batch), the queries and
  // batch elements past the grid's limits by grid-stride loops.
  Type indexType = rewriter.getIndexType();
  SmallVector<Type> argTypes = {
      flatBufferType(tensorTypeOf(q.tensor).getElementType()),
      flatBufferType(tensorTypeOf(k.tensor).getElementType()),
      flatBufferType(resultType.getElementType()),
      indexType,
      indexType,
      indexType};
  std::string name = kernelName(
      (Twine("linattn_scores_") + mapName(q) + (causal ? "_causal" : ""))
          .str());
  gpu::GPUFuncOp kernel =
      createKernel(rewriter, loc, kernels(), name, argTypes, {});
  {
    OpBuilder::InsertionGuard guard(rewriter);
    setInsertionPointToKernelBody(rewriter, kernel);
    KernelBuilder kb(rewriter, loc, computeType);
    ArrayRef<BlockArgument> args = kernel.getArguments();
    Value qBuf = args[0], kBuf = args[1], out = args[2], n = args[3],
          m = args[4], batches = args[5];
    Value c0 = kb.idx(0), c1 = kb.idx(1), cF = kb.idx(features);
    Value j = kb.add(kb.mul(kb.blockId(gpu::Dimension::x), kb.idx(block)),
                     kb.threadId());
    kb.gridStrideLoop(gpu::Dimension::z, batches, [&](Value batch) {
      kb.gridStrideLoop(gpu::Dimension::y, n, [&](Value i) {
        kb.ifThen(kb.ult(j, m), [&] {
          Value qRow = kb.mul(kb.add(kb.mul(batch, n), i), cF);
          Value kRow = kb.mul(kb.add(kb.mul(batch, m), j), cF);
          Value dot =
              kb.forLoop(c0, cF, c1, ValueRange{kb.fconst(0.0)},
                         [&](Value f, ValueRange acc) -> SmallVector<Value> {
                           Value qf = kb.loadFeature(qBuf, kb.add(qRow, f), q);
                           Value kf = kb.loadFeature(kBuf, kb.add(kRow, f), k);
                           return {kb.fma(qf, kf, acc[0])};
                         })[0];
          Value value = scale == 1.0 ? dot : kb.fmul(dot, kb.fconst(scale));
          // The causal mask keeps the keys j <= i.
          if (causal)
            value = kb.select(kb.ult(i, j), kb.fconst(0.0), value);
          kb.store(value, out,
                   kb.add(kb.mul(kb.add(kb.mul(batch, n), i), m), j));
        });
      });
    });
  }

  rewriter.setInsertionPoint(op);
  LaunchBuilder launch(rewriter, loc, module);
  int64_t batchDims = rank - 2;
  launch.input(q.tensor);
  launch.input(k.tensor);
  OpFoldResult nSize = sizeOf(rewriter, loc, q.tensor, -2);
  OpFoldResult mSize = sizeOf(rewriter, loc, k.tensor, -2);
  launch.output(resultType, leadingThen(rewriter, loc, q.tensor, batchDims,
                                        {nSize, mSize}));
  Value nValue = getValueOrCreateConstantIndexOp(rewriter, loc, nSize);
  Value mValue = getValueOrCreateConstantIndexOp(rewriter, loc, mSize);
  Value batches = batchProduct(rewriter, loc, q.tensor, batchDims);
  launch.scalar(nValue);
  launch.scalar(mValue);
  launch.scalar(batches);
  Value tiles = tileCount(rewriter, loc, mValue, block);
  SmallVector<Value> results =
      launch.launch(kernel,
                    {tiles, gridSizeYZ(rewriter, loc, nValue),
                     gridSizeYZ(rewriter, loc, batches)},
                    block);
  rewriter.replaceOp(op, results);
  return std::nullopt;
}

std::optional<std::string> Converter::convert(ApplyScoresOp op) {
  RankedTensorType aType = tensorTypeOf(op.getScores());
  RankedTensorType vType = tensorTypeOf(op.getValues());
  auto resultType = cast<RankedTensorType>(op.getResult().getType());
  int64_t rank = aType.getRank();
  Type computeType = getAccumulatorType(resultType.getElementType());
  int64_t block = blockSizeFor(vType.getShape().back(), options.blockSize);
  std::optional<double> eps;
  if (op.getEps())
    eps = op.getEps()->convertToDouble();
  Location loc = op.getLoc();

  // One thread per output element: grid (value tiles, queries, batch), the
  // queries and batch elements past the grid's limits by grid-stride loops.
  Type indexType = rewriter.getIndexType();
  SmallVector<Type> argTypes = {flatBufferType(aType.getElementType()),
                                flatBufferType(vType.getElementType()),
                                flatBufferType(resultType.getElementType()),
                                indexType,
                                indexType,
                                indexType,
                                indexType};
  std::string name = kernelName(
      (Twine("linattn_apply_scores") + (eps ? "_normalized" : "")).str());
  gpu::GPUFuncOp kernel =
      createKernel(rewriter, loc, kernels(), name, argTypes, {});
  {
    OpBuilder::InsertionGuard guard(rewriter);
    setInsertionPointToKernelBody(rewriter, kernel);
    KernelBuilder kb(rewriter, loc, computeType);
    ArrayRef<BlockArgument> args = kernel.getArguments();
    Value aBuf = args[0], vBuf = args[1], out = args[2], n = args[3],
          m = args[4], dv = args[5], batches = args[6];
    Value c0 = kb.idx(0), c1 = kb.idx(1);
    Value d = kb.add(kb.mul(kb.blockId(gpu::Dimension::x), kb.idx(block)),
                     kb.threadId());
    kb.gridStrideLoop(gpu::Dimension::z, batches, [&](Value batch) {
      kb.gridStrideLoop(gpu::Dimension::y, n, [&](Value i) {
        kb.ifThen(kb.ult(d, dv), [&] {
          Value aRow = kb.mul(kb.add(kb.mul(batch, n), i), m);
          SmallVector<Value> sums = kb.forLoop(
              c0, m, c1, ValueRange{kb.fconst(0.0), kb.fconst(0.0)},
              [&](Value j, ValueRange acc) -> SmallVector<Value> {
                Value a = kb.load(aBuf, kb.add(aRow, j));
                Value v = kb.load(
                    vBuf, kb.add(kb.mul(kb.add(kb.mul(batch, m), j), dv), d));
                return {kb.fma(a, v, acc[0]), kb.fadd(acc[1], a)};
              });
          Value value = sums[0];
          if (eps)
            value = kb.fdiv(value, kb.fadd(sums[1], kb.fconst(*eps)));
          kb.store(value, out,
                   kb.add(kb.mul(kb.add(kb.mul(batch, n), i), dv), d));
        });
      });
    });
  }

  rewriter.setInsertionPoint(op);
  LaunchBuilder launch(rewriter, loc, module);
  Value scores = op.getScores(), values = op.getValues();
  int64_t batchDims = rank - 2;
  launch.input(scores);
  launch.input(values);
  OpFoldResult nSize = sizeOf(rewriter, loc, scores, -2);
  OpFoldResult mSize = sizeOf(rewriter, loc, scores, -1);
  OpFoldResult dvSize = sizeOf(rewriter, loc, values, -1);
  launch.output(resultType,
                leadingThen(rewriter, loc, scores, batchDims, {nSize, dvSize}));
  Value nValue = getValueOrCreateConstantIndexOp(rewriter, loc, nSize);
  Value dvValue = getValueOrCreateConstantIndexOp(rewriter, loc, dvSize);
  Value batches = batchProduct(rewriter, loc, scores, batchDims);
  launch.scalar(nValue);
  launch.scalar(getValueOrCreateConstantIndexOp(rewriter, loc, mSize));
  launch.scalar(dvValue);
  launch.scalar(batches);
  Value tiles = tileCount(rewriter, loc, dvValue, block);
  SmallVector<Value> results =
      launch.launch(kernel,
                    {tiles, gridSizeYZ(rewriter, loc, nValue),
                     gridSizeYZ(rewriter, loc, batches)},
                    block);
  rewriter.replaceOp(op, results);
  return std::nullopt;
}

gpu::GPUFuncOp Converter::buildRowKernel(
    Location loc, StringRef name, ArrayRef<Type> elementTypes, unsigned scalars,
    int64_t block, Type computeType,
    function_ref<void(KernelBuilder &, ArrayRef<BlockArgument>, Value, Value)>
        body) {
  SmallVector<Type> argTypes;
  for (Type element : elementTypes)
    argTypes.push_back(flatBufferType(element));
  argTypes.append(2 + scalars, rewriter.getIndexType());
  gpu::GPUFuncOp kernel =
      createKernel(rewriter, loc, kernels(), kernelName(name), argTypes, {});
  OpBuilder::InsertionGuard guard(rewriter);
  setInsertionPointToKernelBody(rewriter, kernel);
  KernelBuilder kb(rewriter, loc, computeType);
  ArrayRef<BlockArgument> args = kernel.getArguments();
  Value rows = args[elementTypes.size()],
        columns = args[elementTypes.size() + 1];
  Value column = kb.add(kb.mul(kb.blockId(gpu::Dimension::x), kb.idx(block)),
                        kb.threadId());
  kb.gridStrideLoop(gpu::Dimension::y, rows, [&](Value row) {
    kb.ifThen(kb.ult(column, columns), [&] { body(kb, args, row, column); });
  });
  return kernel;
}

SmallVector<Value> Converter::launchRows(LaunchBuilder &launch, Location loc,
                                         gpu::GPUFuncOp kernel, Value rows,
                                         Value columns, ArrayRef<Value> scalars,
                                         int64_t block) {
  launch.scalar(rows);
  launch.scalar(columns);
  launch.scalars(scalars);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  Value tiles = tileCount(rewriter, loc, columns, block);
  return launch.launch(kernel, {tiles, gridSizeYZ(rewriter, loc, rows), one},
                       block);
}

/// Partial sums of the favor feature map's exponent (x·P[:, j] and |x|²).
static constexpr int64_t kFavorParts = 4;

void Converter::convert(FeatureMapOp op) {
  Value input = op.getInput(), projection = op.getProjection();
  RankedTensorType resultType = op.getType();
  int64_t rank = resultType.getRank();
  FeatureMapKind kind = op.getKind();
  Type computeType = getAccumulatorType(resultType.getElementType());
  int64_t block = blockSizeFor(resultType.getShape().back(), options.blockSize);
  Location loc = op.getLoc();

  // One thread per feature of a row. Arguments: x, [P,] φ(x), rows, F, D.
  SmallVector<Type> elementTypes = {tensorTypeOf(input).getElementType()};
  if (projection)
    elementTypes.push_back(tensorTypeOf(projection).getElementType());
  elementTypes.push_back(resultType.getElementType());
  gpu::GPUFuncOp kernel = buildRowKernel(
      loc,
      (Twine("linattn_feature_map_") + stringifyFeatureMapKind(kind)).str(),
      elementTypes, /*scalars=*/1, block, computeType,
      [&](KernelBuilder &kb, ArrayRef<BlockArgument> args, Value row, Value j) {
        Value xBuf = args[0], pBuf = projection ? Value(args[1]) : Value();
        unsigned next = projection ? 2 : 1;
        Value out = args[next], f = args[next + 2], d = args[next + 3];
        Value c0 = kb.idx(0), c1 = kb.idx(1);
        auto asFloat = [&](Value size) {
          Value count = arith::IndexCastOp::create(rewriter, loc,
                                                   rewriter.getI64Type(), size);
          return arith::SIToFPOp::create(rewriter, loc, computeType, count);
        };
        Value xRow = kb.mul(row, d);
        Value at = kb.add(kb.mul(row, f), j);
        switch (kind) {
        case FeatureMapKind::Favor: {
          // exp(x·P[:, j] - |x|²/2) / √m, each sum in kFavorParts partial
          // sums over i mod kFavorParts (the rest of D in the first) added
          // pairwise: dependency chains of D / kFavorParts FMAs instead of D,
          // and rounding errors that grow with D / kFavorParts terms (the
          // exponent's absolute error is exp's relative one).
          auto term = [&](Value i, Value dot, Value norm) {
            Value x = kb.load(xBuf, kb.add(xRow, i));
            Value p = kb.load(pBuf, kb.add(kb.mul(i, f), j));
            return std::pair{kb.fma(x, p, dot), kb.fma(x, x, norm)};
          };
          Value parts = kb.idx(kFavorParts);
          Value whole = kb.sub(d, kb.remU(d, parts));
          SmallVector<Value> zeros(2 * kFavorParts, kb.fconst(0.0));
          SmallVector<Value> acc =
              kb.forLoop(c0, whole, parts, zeros,
                         [&](Value i0, ValueRange sums) -> SmallVector<Value> {
                           SmallVector<Value> next(sums);
                           for (int64_t p = 0; p < kFavorParts; ++p)
                             std::tie(next[p], next[kFavorParts + p]) =
                                 term(kb.add(i0, kb.idx(p)), sums[p],
                                      sums[kFavorParts + p]);
                           return next;
                         });
          acc = kb.forLoop(whole, d, c1, acc,
                           [&](Value i, ValueRange sums) -> SmallVector<Value> {
                             SmallVector<Value> next(sums);
                             std::tie(next[0], next[kFavorParts]) =
                                 term(i, sums[0], sums[kFavorParts]);
                             return next;
                           });
          auto total = [&](ArrayRef<Value> partial) {
            return kb.fadd(kb.fadd(partial[0], partial[1]),
                           kb.fadd(partial[2], partial[3]));
          };
          static_assert(kFavorParts == 4, "total adds four partial sums");
          Value dot = total(ArrayRef(acc).take_front(kFavorParts));
          Value norm = total(ArrayRef(acc).drop_front(kFavorParts));
          Value exponent = arith::SubFOp::create(rewriter, loc, dot,
                                                 kb.fmul(norm, kb.fconst(0.5)));
          Value scale = math::RsqrtOp::create(rewriter, loc, asFloat(f));
          kb.store(kb.fmul(math::ExpOp::create(rewriter, loc, exponent), scale),
                   out, at);
          break;
        }
        case FeatureMapKind::Poly2: {
          // Feature 0 is 1, features 1..D the input, 1 + D + i·D + k is
          // x_i·x_k/√2.
          Value onePlusD = kb.add(d, c1);
          kb.ifElse(
              kb.eq(j, c0), [&] { kb.store(kb.fconst(1.0), out, at); },
              [&] {
                kb.ifElse(
                    kb.ult(j, onePlusD),
                    [&] {
                      kb.store(kb.load(xBuf, kb.add(xRow, kb.sub(j, c1))), out,
                               at);
                    },
                    [&] {
                      Value t = kb.sub(j, onePlusD);
                      Value xi = kb.load(xBuf, kb.add(xRow, kb.divU(t, d)));
                      Value xk = kb.load(xBuf, kb.add(xRow, kb.remU(t, d)));
                      kb.store(kb.fmul(kb.fmul(xi, xk),
                                       kb.fconst(1.0 / std::sqrt(2.0))),
                               out, at);
                    });
              });
          break;
        }
        case FeatureMapKind::Elu:
        case FeatureMapKind::Relu:
        case FeatureMapKind::Identity:
          kb.store(kb.featureOf(
                       kb.load(xBuf, kb.add(xRow, j)),
                       FeatureSource{input, kind, resultType.getElementType()}),
                   out, at);
          break;
        }
      });

  rewriter.setInsertionPoint(op);
  LaunchBuilder launch(rewriter, loc, module);
  launch.input(input);
  if (projection)
    launch.input(projection);
  Value dValue = getValueOrCreateConstantIndexOp(
      rewriter, loc, sizeOf(rewriter, loc, input, -1));
  Value fValue;
  if (!resultType.isDynamicDim(rank - 1)) {
    fValue = arith::ConstantIndexOp::create(rewriter, loc,
                                            resultType.getShape().back());
  } else if (projection) {
    fValue = tensor::DimOp::create(rewriter, loc, projection, 1);
  } else if (kind == FeatureMapKind::Poly2) {
    fValue = createPoly2FeatureCount(rewriter, loc, dValue);
  } else {
    fValue = dValue;
  }
  launch.output(resultType,
                leadingThen(rewriter, loc, input, rank - 1, {fValue}));
  rewriter.replaceOp(op,
                     launchRows(launch, loc, kernel,
                                batchProduct(rewriter, loc, input, rank - 1),
                                fValue, {dValue}, block));
}

void Converter::convert(FeatureMapGradOp op) {
  Value input = op.getInput(), grad = op.getResultGrad();
  RankedTensorType resultType = op.getInputGrad().getType();
  int64_t rank = resultType.getRank();
  FeatureMapKind kind = op.getKind();
  Type computeType = getAccumulatorType(resultType.getElementType());
  int64_t block = blockSizeFor(resultType.getShape().back(), options.blockSize);
  Location loc = op.getLoc();

  // One thread per element of a row (arguments x, dφ, dx, rows, D): dx = dφ
  // where x > 0, else dφ·exp(x) (elu) or 0 (relu: selected, so that an
  // overflowed dφ gives no NaN); the identity's is dφ.
  gpu::GPUFuncOp kernel = buildRowKernel(
      loc,
      (Twine("linattn_feature_map_grad_") + stringifyFeatureMapKind(kind))
          .str(),
      {tensorTypeOf(input).getElementType(),
       tensorTypeOf(grad).getElementType(), resultType.getElementType()},
      /*scalars=*/0, block, computeType,
      [&](KernelBuilder &kb, ArrayRef<BlockArgument> args, Value row, Value j) {
        Value at = kb.add(kb.mul(row, args[4]), j);
        Value g = kb.load(args[1], at);
        Value dx = g;
        if (kind != FeatureMapKind::Identity) {
          Value x = kb.load(args[0], at);
          Value positive = arith::CmpFOp::create(
              rewriter, loc, arith::CmpFPredicate::OGT, x, kb.fconst(0.0));
          Value otherwise = kind == FeatureMapKind::Elu ? kb.fmul(g, kb.exp(x))
                                                        : kb.fconst(0.0);
          dx = kb.select(positive, g, otherwise);
        }
        kb.store(dx, args[2], at);
      });

  rewriter.setInsertionPoint(op);
  LaunchBuilder launch(rewriter, loc, module);
  launch.input(input);
  launch.input(grad);
  Value dValue = getValueOrCreateConstantIndexOp(
      rewriter, loc, sizeOf(rewriter, loc, input, -1));
  launch.output(resultType,
                leadingThen(rewriter, loc, input, rank - 1, {dValue}));
  rewriter.replaceOp(op,
                     launchRows(launch, loc, kernel,
                                batchProduct(rewriter, loc, input, rank - 1),
                                dValue, {}, block));
}

LogicalResult Converter::run() {
  if (failed(checkPlacement(module, "convert-linattn-to-gpu")))
    return failure();
  SmallVector<Operation *> candidates;
  module.walk([&](Operation *op) {
    if (isa<ScanOp, StepOp, KvSummaryOp, QueryReadoutOp, ScoresOp,
            ApplyScoresOp>(op))
      candidates.push_back(op);
  });
  bool failed = false;
  for (Operation *op : candidates) {
    std::optional<std::string> reason =
        TypeSwitch<Operation *, std::optional<std::string>>(op)
            .Case<ScanOp, StepOp, KvSummaryOp, QueryReadoutOp, ScoresOp,
                  ApplyScoresOp>([&](auto typed) { return convert(typed); });
    if (!reason)
      continue;
    // Left to the host lowering, where the op runs on the CPU: a remark, so
    // that a kernel option that rules the kernel out is not a silent
    // slowdown.
    if (options.hostFallback) {
      op->emitRemark() << "has no GPU kernel: " << *reason
                       << "; left to the host lowering (host-fallback)";
      continue;
    }
    op->emitError() << "has no GPU kernel: " << *reason;
    failed = true;
  }
  // Feature maps a kernel applies itself are dead now; the others (favor
  // and poly2, which are not elementwise, and elementwise ones whose
  // features something else reads) get kernels of their own.
  SmallVector<FeatureMapOp> maps;
  module.walk([&](FeatureMapOp op) { maps.push_back(op); });
  for (FeatureMapOp op : llvm::reverse(maps)) {
    if (op->use_empty())
      rewriter.eraseOp(op);
    else
      convert(op);
  }
  // The chain rule through the elementwise maps (the others are decomposed
  // before the conversion).
  SmallVector<FeatureMapGradOp> grads;
  module.walk([&](FeatureMapGradOp op) {
    FeatureMapKind kind = op.getKind();
    if (kind == FeatureMapKind::Elu || kind == FeatureMapKind::Relu ||
        kind == FeatureMapKind::Identity)
      grads.push_back(op);
  });
  for (FeatureMapGradOp op : grads)
    convert(op);
  if (!options.hostFallback) {
    // The ops left for the host: those without a kernel (the ones above
    // have said why), not the buffers the launches read.
    module.walk([&](Operation *op) {
      if (op->getDialect() && isa<LinAttnDialect>(op->getDialect()) &&
          !isa<ScanOp, StepOp, KvSummaryOp, QueryReadoutOp, ScoresOp,
               ApplyScoresOp, ReadBufferOp>(op)) {
        op->emitError() << "has no GPU kernel (only feature_map, scan, "
                           "step, kv_summary, query_readout, scores, "
                           "apply_scores and feature_map_grad of elu, relu "
                           "and identity do)";
        failed = true;
      }
    });
  }
  return failure(failed);
}

LogicalResult mlir::linattn::convertLinAttnToGPUKernels(
    ModuleOp module, const LinAttnToGPUKernelOptions &opts) {
  return Converter(module, opts).run();
}

//===----------------------------------------------------------------------===//
// Passes
//===----------------------------------------------------------------------===//

std::optional<WgmmaChunks>
mlir::linattn::parseWgmmaChunks(llvm::StringRef value) {
  return llvm::StringSwitch<std::optional<WgmmaChunks>>(value)
      .Case("false", WgmmaChunks::Off)
      .Case("auto", WgmmaChunks::Auto)
      .Case("true", WgmmaChunks::On)
      .Default(std::nullopt);
}

std::optional<std::string> mlir::linattn::checkConvertLinAttnToGPUPassOptions(
    const ConvertLinAttnToGPUPassOptions &o) {
  if (!smVersion(o.chip))
    return "chip '" + o.chip + "' is not sm_ followed by a number";
  if (o.scanKernel != "chunked" && o.scanKernel != "recurrent")
    return std::string("scan-kernel must be 'chunked' or 'recurrent'");
  if (o.linearKernel != "chunked" && o.linearKernel != "scalar")
    return std::string("linear-kernel must be 'chunked' or 'scalar'");
  if (!parseWgmmaChunks(o.wgmmaChunks))
    return std::string("wgmma-chunks must be 'true', 'auto' or 'false'");
  if (!llvm::is_contained({16, 32, 64}, o.chunkSize))
    return std::string("chunk-size must be 16, 32 or 64");
  if (!llvm::is_contained({8, 16, 32, 64, 128}, o.valueTile))
    return std::string("value-tile must be 8, 16, 32, 64 or 128");
  if (!llvm::is_contained({0, 8, 16, 32, 64}, o.smallGridValueTile))
    return std::string("small-grid-value-tile must be 0, 8, 16, 32 or 64");
  if (o.rowTileWarps < 0 || o.rowTileWarps > 2)
    return std::string("row-tile-warps must be 0, 1 or 2");
  if (o.minBlocksPerSM < 0 || o.minBlocksPerSM > 32)
    return std::string("min-blocks-per-sm must be between 0 and 32");
  if (o.statesMinBlocksPerSM < -1 || o.statesMinBlocksPerSM > 32)
    return std::string(
        "states-min-blocks-per-sm must be between 0 and 32, or -1 (automatic)");
  if (o.scanTile <= 0 || o.scanTile > 1024 || o.blockSize <= 0 ||
      o.blockSize > 1024)
    return std::string("scan-tile and block-size must be between 1 and 1024");
  if (o.scanFeatureLanes < 1 || o.scanFeatureLanes > 32 ||
      !llvm::isPowerOf2_64(o.scanFeatureLanes))
    return std::string(
        "scan-feature-lanes must be a power of two from 1 to 32");
  if (o.scanThreadColumns < 1 || o.scanThreadColumns > 8 ||
      !llvm::isPowerOf2_64(o.scanThreadColumns))
    return std::string("scan-thread-columns must be 1, 2, 4 or 8");
  if (o.sequenceParallelBlocks < 0 ||
      o.sequenceParallelBlocks > kMaxSequenceParallelBlocks)
    return std::string(
        "sequence-parallel-blocks must be between 0 and 2^31 (2147483648)");
  if (o.minSegmentTokens < 0)
    return std::string("min-segment-tokens must not be negative");
  if (o.narrowOffsetLimit < 0 || o.narrowOffsetLimit > kMaxNarrowOffsetLimit)
    return std::string(
        "narrow-offset-limit must be between 0 and 2^31 (2147483648)");
  if (o.copyStages < 1 || o.copyStages > 4)
    return std::string("copy-stages must be 1, 2, 3 or 4");
  if (o.statesCopyStages < 1 || o.statesCopyStages > 4)
    return std::string("states-copy-stages must be 1, 2, 3 or 4");
  if (o.prefetchChunks < -1 || o.prefetchChunks > 1024)
    return std::string(
        "prefetch-chunks must be between 0 and 1024, or -1 (automatic)");
  return std::nullopt;
}

namespace {
struct ConvertLinAttnToGPUPass
    : public linattn::impl::ConvertLinAttnToGPUPassBase<
          ConvertLinAttnToGPUPass> {
  using Base::Base;

  /// The options the pass runs with.
  ConvertLinAttnToGPUPassOptions given() const {
    ConvertLinAttnToGPUPassOptions o;
    o.chip = chip;
    o.scanTile = scanTile;
    o.scanFeatureLanes = scanFeatureLanes;
    o.scanThreadColumns = scanThreadColumns;
    o.blockSize = blockSize;
    o.maxRegisterState = maxRegisterState;
    o.hostFallback = hostFallback;
    o.scanKernel = scanKernel;
    o.linearKernel = linearKernel;
    o.chunkSize = chunkSize;
    o.valueTile = valueTile;
    o.smallGridValueTile = smallGridValueTile;
    o.rowTileWarps = rowTileWarps;
    o.minBlocksPerSM = minBlocksPerSM;
    o.statesMinBlocksPerSM = statesMinBlocksPerSM;
    o.sequenceParallelBlocks = sequenceParallelBlocks;
    o.minSegmentTokens = minSegmentTokens;
    o.simtChunks = simtChunks;
    o.tf32 = tf32;
    o.tf32x3 = tf32x3;
    o.vectorLoads = vectorLoads;
    o.asyncCopies = asyncCopies;
    o.copyStages = copyStages;
    o.statesCopyStages = statesCopyStages;
    o.statesFeatureSplit = statesFeatureSplit;
    o.bulkCopies = bulkCopies;
    o.wgmma = wgmma;
    o.wgmmaChunks = wgmmaChunks;
    o.scoresInRegisters = scoresInRegisters;
    o.wgmmaOutputs = wgmmaOutputs;
    o.unrollStaging = unrollStaging;
    o.phaseClocks = phaseClocks;
    o.prefetchChunks = prefetchChunks;
    o.narrowOffsetLimit = narrowOffsetLimit;
    return o;
  }

  void runOnOperation() override {
    // An option out of range is the pipeline's error, not the module's: it
    // is reported at the module's location without printing the module.
    if (std::optional<std::string> invalid =
            checkConvertLinAttnToGPUPassOptions(given())) {
      emitError(getOperation().getLoc()) << getArgument() << ": " << *invalid;
      return signalPassFailure();
    }
    LinAttnToGPUKernelOptions opts;
    opts.scanTile = scanTile;
    opts.scanFeatureLanes = scanFeatureLanes;
    opts.scanThreadColumns = scanThreadColumns;
    opts.blockSize = blockSize;
    opts.maxRegisterState = maxRegisterState;
    opts.hostFallback = hostFallback;
    opts.chunkSize = chunkSize;
    opts.valueTile = valueTile;
    opts.smallGridValueTile = smallGridValueTile;
    opts.rowTileWarps = rowTileWarps;
    opts.minBlocksPerSM = minBlocksPerSM;
    opts.statesMinBlocksPerSM = statesMinBlocksPerSM;
    opts.sequenceParallelBlocks = sequenceParallelBlocks;
    opts.minSegmentTokens = minSegmentTokens;
    // tf32x3 takes the tf32 kernels, each product split in three.
    opts.tf32 = tf32 || tf32x3;
    opts.tf32x3 = tf32x3;
    opts.vectorLoads = vectorLoads;
    opts.asyncCopies = asyncCopies;
    opts.copyStages = copyStages;
    opts.statesCopyStages = statesCopyStages;
    opts.statesFeatureSplit = statesFeatureSplit;
    opts.bulkCopies = bulkCopies;
    opts.wgmma = wgmma;
    opts.wgmmaChunks = *parseWgmmaChunks(wgmmaChunks);
    opts.scoresInRegisters = scoresInRegisters;
    opts.wgmmaOutputs = wgmmaOutputs;
    opts.unrollStaging = unrollStaging;
    opts.phaseClocks = phaseClocks;
    opts.prefetchChunks = prefetchChunks;
    opts.narrowOffsetLimit = narrowOffsetLimit;
    opts.simtChunks = simtChunks;
    opts.sharedBytesPerBlock = *portableSharedBytesPerBlock(chip);
    opts.chunkedScan = scanKernel == "chunked";
    opts.chunkedLinear = linearKernel == "chunked";
    unsigned sm = *smVersion(chip);
    // mma.sync on f16, bf16 and tf32 (and ldmatrix, cp.async) need sm_80:
    // older chips take the recurrent and scalar kernels; wgmma is sm_90's.
    if (sm < 80) {
      opts.chunkedScan = false;
      opts.chunkedLinear = false;
      opts.tf32 = false;
      opts.tf32x3 = false;
      opts.asyncCopies = false;
    }
    if (sm != 90)
      opts.wgmma = false;
    // Bulk copies (cp.async.bulk, mbarrier tx counts) are sm_90's.
    if (sm < 90)
      opts.bulkCopies = false;
    if (failed(convertLinAttnToGPUKernels(getOperation(), opts)))
      signalPassFailure();
  }
};

} // namespace
