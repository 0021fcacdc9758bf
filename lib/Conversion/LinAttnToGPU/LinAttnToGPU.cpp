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
// - scan (causal, recurrent, fp32 or wider state): one block per batch element
//   and tile of value columns, `scan-feature-lanes` threads per value column
//   d holding the column S[:, d] in registers (each a share of the rows);
//   the features and values of a block of tokens are staged in shared memory
//   (with the fused feature map applied once; with f32 data on sm_80 and
//   later the next block is copied by cp.async while the current one runs),
//   the normalizer z and the denominators are computed there cooperatively.
// - step (decoding): `scan-feature-lanes` threads per value column of each
//   batch element, each streaming its share of the state's rows from global
//   memory: the first 32 loaded before φ(q), φ(k) and the new normalizer
//   are staged in shared memory, the rest 8 rows at a time.
// - kv_summary and query_readout with f16/bf16 data and an f32 state (f32
//   data with tf32): the chunked tensor-core kernels (ChunkedScan.cpp).
//   Otherwise kv_summary: one thread per value column d and tile of 16
//   features, a loop over tiles of keys staged in shared memory (each
//   V[j, d] loaded once for the 16 features); query_readout: one block per tile
//   of 16 tokens and of value columns, the tokens' query features staged in
//   shared memory, each thread's S[:, d] loaded once for the tile.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilders.h"

#include "linattn/Conversion/Passes.h"
#include "linattn/IR/LinAttnDialect.h"
#include "linattn/Transforms/Utils.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

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

/// Partial sums of the recurrent scan's readout φ(q)ᵀS[:, d] per token.
static constexpr int64_t kReadoutChains = 4;

/// Tokens per iteration of the recurrent scan's token loop.
static constexpr int64_t kTokensPerIteration = 2;

/// Partial sums of the recurrent scan's denominators eps + φ(q)ᵀz per token.
static constexpr int64_t kDenominatorChains = 8;

/// Most lanes that add up one token's denominator in the recurrent scan; the
/// rows of its partial products are padded by as many elements.
static constexpr int64_t kDenominatorLanes = 8;

/// Features per block and keys per staged tile of the scalar key-value
/// summary: each element of V it loads serves kSummaryFeatures products.
static constexpr int64_t kSummaryFeatures = 16;
static constexpr int64_t kSummaryKeys = 32;

/// Tokens per block of the scalar query readout: each element of S it
/// loads serves that many products.
static constexpr int64_t kReadoutTokens = 16;
static_assert(kReadoutTokens % 4 == 0, "the staging takes four tokens a warp");

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

/// State rows whose loads a lane of the step kernel issues together: the
/// first kStepEarlyLoads before the features are staged, the rest in groups
/// of kStepLoads.
static constexpr int64_t kStepEarlyLoads = 32;
static constexpr int64_t kStepLoads = 8;

/// Shared memory the scan kernel stays within where it can: CUDA's static
/// limit per block.
static constexpr int64_t kScanSharedBytes = 48 * 1024;

/// Size of the token block the scan stages in shared memory: the query and
/// key features (and, `normalized`, the normalizer's partial products) of
/// TT tokens, about 8 KiB each, fewer tokens where `slots` blocks of φ(q),
/// φ(k) and V (`columns` wide) with the normalizer's buffers would pass
/// kScanSharedBytes. With two slots, 0 where not even one token fits (the
/// kernel then stages synchronously); with one, at least one token.
static int64_t scanTokensPerBlock(int64_t features, int64_t columns,
                                  int64_t slots, bool normalized,
                                  Type stateType) {
  int64_t element = stateType.getIntOrFloatBitWidth() / 8;
  int64_t tokens = std::clamp<int64_t>(
      8192 / std::max<int64_t>(features * element, 1), 1, 64);
  // Per token: φ(q), φ(k) and V in each slot, normalized a padded row of
  // partial products and a denominator; once: the running normalizer.
  int64_t perToken =
      element * (slots * (2 * features + columns) +
                 (normalized ? features + kDenominatorLanes + 1 : 0));
  int64_t fit = (kScanSharedBytes - element * features) / perToken;
  return std::clamp<int64_t>(fit, slots > 1 ? 0 : 1, tokens);
}

/// Launches the scan kernel `kernel` for `op`: inputs φ(Q) or Q, φ(K)
/// or K (`queries`, `keys`), V and the initial state, outputs O and, when
/// `scanWritesState(op)`, S and z, scalars N and Dv; grid (batch, Dv tiles
/// of `dvTile`, at least one so that z is written when Dv = 0), `threads`
/// threads per block.
SmallVector<Value> Converter::launchScan(ScanOp op, gpu::GPUFuncOp kernel,
                                         Value queries, Value keys,
                                         int64_t features, int64_t dvTile,
                                         int64_t threads) {
  Location loc = op.getLoc();
  LaunchBuilder launch(rewriter, loc, module);
  Value values = op.getValues();
  int64_t batchDims = tensorTypeOf(values).getRank() - 2;
  launch.input(queries);
  launch.input(keys);
  launch.input(values);
  if (op.hasInitialState()) {
    launch.input(op.getInitialState());
    launch.input(op.getInitialNormalizer());
  }
  OpFoldResult seq = sizeOf(rewriter, loc, values, -2);
  OpFoldResult dvSize = sizeOf(rewriter, loc, values, -1);
  OpFoldResult fSize = rewriter.getIndexAttr(features);
  launch.output(tensorTypeOf(op.getResult()),
                leadingThen(rewriter, loc, values, batchDims, {seq, dvSize}));
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
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  Value tiles = arith::MaxUIOp::create(
      rewriter, loc, ceilDiv(rewriter, loc, dvValue, dvTile), one);
  return launch.launch(
      kernel, {batchProduct(rewriter, loc, values, batchDims), tiles, one},
      threads);
}

void Converter::replaceScan(ScanOp op, ValueRange results) {
  rewriter.replaceAllUsesWith(op.getResult(), results.front());
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
  RankedTensorType qType = tensorTypeOf(op.getQueryFeatures());
  RankedTensorType vType = tensorTypeOf(op.getValues());
  RankedTensorType sType = cast<RankedTensorType>(op.getFinalState().getType());
  int64_t features = qType.getShape().back();
  if (auto reason = checkFeatureSize(features))
    return reason;
  Type stateType = sType.getElementType();
  int64_t tile = options.scanTile;
  // Each thread keeps `threadColumns` adjacent value columns, each feature
  // it loads serving all of them; `lanes` threads share a group of columns,
  // each with F / lanes of its features, so that a warp covers
  // 32 / scan-feature-lanes columns whatever the columns per thread. The
  // lanes add their readouts with shuffles, so they must be in one full
  // warp. Fewer columns per thread where the state would not fit the
  // register budget (when F has few factors of two).
  int64_t registerWidth =
      std::max<int64_t>(1, stateType.getIntOrFloatBitWidth() / 32);
  int64_t threadColumns = options.scanThreadColumns * 2, lanes, laneFeatures,
          registers;
  do {
    threadColumns /= 2;
    lanes = options.scanFeatureLanes * threadColumns;
    while (lanes > 1 && (lanes > 32 || features % lanes || tile % 32))
      lanes /= 2;
    laneFeatures = features / lanes;
    registers = laneFeatures * threadColumns * registerWidth;
  } while (threadColumns > 1 && registers > options.maxRegisterState);
  int64_t columns = tile / lanes * threadColumns; // value columns per block
  if (auto reason = valueTilesUnsupported(vType.getShape().back(), columns))
    return reason;
  if (registers > options.maxRegisterState)
    return "the state column (F = " + std::to_string(features) + ", " +
           std::to_string(laneFeatures) +
           " per thread) does not fit the "
           "scan's register budget of " +
           std::to_string(options.maxRegisterState) + " registers";

  FeatureSource q = featureSourceOf(op.getQueryFeatures());
  FeatureSource k = featureSourceOf(op.getKeyFeatures());
  bool normalized = op.isNormalized();
  bool reverse = op.isReverse();
  bool hasInit = op.hasInitialState();
  bool writesState = scanWritesState(op);
  bool needZ = normalized || !op.getFinalNormalizer().use_empty();
  double eps = normalized ? op.getEps()->convertToDouble() : 0.0;
  Location loc = op.getLoc();
  Type dataType = vType.getElementType();
  // With async copies (sm_80 and later) each block of tokens is copied into
  // one of two slots while the block before it runs, which needs the data
  // in the state's type (a copy converts nothing): f32 data, f32 state; and
  // room for two slots of a token at least.
  bool async =
      options.asyncCopies && stateType.getIntOrFloatBitWidth() == 32 &&
      llvm::all_of(ArrayRef<Value>{q.tensor, k.tensor, op.getValues()},
                   [&](Value x) {
                     return tensorTypeOf(x).getElementType() == stateType;
                   });
  int64_t tokens =
      async ? scanTokensPerBlock(features, columns, 2, normalized, stateType)
            : 0;
  if (tokens == 0) {
    async = false;
    tokens = scanTokensPerBlock(features, columns, 1, normalized, stateType);
  }
  int64_t slots = async ? 2 : 1;
  // Lanes adding up each token's denominator (adjacent lanes of a warp, all
  // of the block's tokens in one pass), and the pitch of the partial
  // products' rows: padded by the lanes, so that the lanes of a warp, which
  // read 32 / lanes rows, read distinct banks.
  int64_t denominatorLanes = 1;
  if (normalized && tile % 32 == 0)
    while (denominatorLanes < kDenominatorLanes &&
           features >= 2 * denominatorLanes &&
           features % (2 * denominatorLanes) == 0 &&
           tokens * 2 * denominatorLanes <= tile)
      denominatorLanes *= 2;
  int64_t partialPitch =
      features + (denominatorLanes > 1 ? denominatorLanes : 0);

  // The kernel.
  SmallVector<Type> argTypes = {
      flatBufferType(tensorTypeOf(q.tensor).getElementType()),
      flatBufferType(tensorTypeOf(k.tensor).getElementType()),
      flatBufferType(dataType)};
  if (hasInit) {
    argTypes.push_back(flatBufferType(stateType));
    argTypes.push_back(flatBufferType(stateType));
  }
  argTypes.push_back(
      flatBufferType(tensorTypeOf(op.getResult()).getElementType()));
  if (writesState) {
    argTypes.push_back(flatBufferType(stateType));
    argTypes.push_back(flatBufferType(stateType));
  }
  Type indexType = rewriter.getIndexType();
  argTypes.push_back(indexType); // N
  argTypes.push_back(indexType); // Dv
  SmallVector<Type> shared = {
      // φ(q) and φ(k) of the block (of the current and next block with
      // async copies).
      workgroupBufferType(stateType, slots * tokens * features),
      workgroupBufferType(stateType, slots * tokens * features),
      // φ(q)ᵢ zᵢ partials and denominators, when normalized.
      workgroupBufferType(stateType, normalized ? tokens * partialPitch : 1),
      workgroupBufferType(stateType, normalized ? tokens : 1),
      workgroupBufferType(stateType, features), // running z
      // V of the block's tokens and columns (of two blocks, likewise).
      workgroupBufferType(stateType, slots * tokens * columns)};
  std::string name =
      kernelName((Twine("linattn_scan_") + (reverse ? "reverse" : "forward") +
                  "_" + mapName(q) + (normalized ? "_normalized" : ""))
                     .str());
  gpu::GPUFuncOp kernel =
      createKernel(rewriter, loc, kernels(), name, argTypes, shared);
  {
    OpBuilder::InsertionGuard guard(rewriter);
    setInsertionPointToKernelBody(rewriter, kernel);
    KernelBuilder kb(rewriter, loc, stateType);
    ScanKernelArgs bound = scanKernelArgs(kernel, hasInit, writesState);
    Value qBuf = bound.q, kBuf = bound.k, vBuf = bound.v, s0Buf = bound.s0,
          z0Buf = bound.z0, oBuf = bound.o, sBuf = bound.s, zBuf = bound.z,
          n = bound.n, dv = bound.dv;
    ArrayRef<BlockArgument> wg = kernel.getWorkgroupAttributions();
    Value qs = wg[0], ks = wg[1], pz = wg[2], den = wg[3], zs = wg[4],
          vs = wg[5];

    Value c0 = kb.idx(0), c1 = kb.idx(1), cF = kb.idx(features),
          cTT = kb.idx(tokens), cTile = kb.idx(tile);
    Value batch = kb.blockId(gpu::Dimension::x);
    Value tid = kb.threadId();
    // Thread tid keeps F / lanes features of `threadColumns` adjacent value
    // columns from col. Lane l of a warp is part p = l / (32 / lanes) of
    // column group g = l mod (32 / lanes): the lanes of a part, adjacent,
    // read the same features (pairs of lanes with one address, which an SM
    // returns at twice the rate of distinct ones), the `lanes` parts of a
    // group are 32 / lanes lanes apart. A part holds groups of 4 consecutive
    // features, the parts' groups side by side (part p: features 4p..4p+3,
    // 4(p + lanes).., ...; one feature at a time when F / lanes is not a
    // multiple of 4), so that it reads a group of φ(q) or φ(k) as one
    // 16-byte load and the parts read consecutive bytes, where blocks of
    // F / lanes features would put them in the same banks.
    int64_t groupLanes = 32 / lanes;
    Value lane = kb.remU(tid, kb.idx(32));
    Value part = kb.divU(lane, kb.idx(groupLanes));
    Value columnGroup =
        kb.add(kb.mul(kb.divU(tid, kb.idx(32)), kb.idx(groupLanes)),
               kb.remU(lane, kb.idx(groupLanes)));
    Value blockColumn = kb.mul(columnGroup, kb.idx(threadColumns));
    Value col = kb.add(kb.mul(kb.blockId(gpu::Dimension::y), kb.idx(columns)),
                       blockColumn);
    int64_t group = laneFeatures % 4 == 0 ? 4 : 1;
    Value groupBase = kb.mul(part, kb.idx(group));
    auto featureAt = [&](int64_t j) {
      return kb.add(kb.idx((j / group) * lanes * group + j % group), groupBase);
    };
    auto columnAt = [&](int64_t c) { return kb.add(col, kb.idx(c)); };
    // Columns past Dv are computed on zeros and not stored: every thread
    // takes part in the barriers and shuffles.
    auto activeAt = [&](int64_t c) { return kb.ult(columnAt(c), dv); };
    Value stateBase = kb.mul(batch, cF); // row b*F of S and z

    // The state columns in registers (feature j of column c at
    // j·threadColumns + c), the normalizer in shared memory.
    SmallVector<Value> column;
    for (int64_t j = 0; j < laneFeatures; ++j) {
      for (int64_t c = 0; c < threadColumns; ++c) {
        if (hasInit)
          column.push_back(
              kb.loadIf(activeAt(c), s0Buf,
                        kb.add(kb.mul(kb.add(stateBase, featureAt(j)), dv),
                               columnAt(c))));
        else
          column.push_back(kb.fconst(0.0));
      }
    }
    if (needZ)
      kb.forLoop(tid, cF, cTile, [&](Value f) {
        Value init =
            hasInit ? kb.load(z0Buf, kb.add(stateBase, f)) : kb.fconst(0.0);
        memref::StoreOp::create(rewriter, loc, init, zs, ValueRange{f});
      });

    // Position of token t of the block starting at t0 in the sequence.
    auto tokenAt = [&](Value t0, Value t) {
      Value i = kb.add(t0, t);
      return reverse ? kb.sub(kb.sub(n, c1), i) : i;
    };

    Value cColumns = kb.idx(columns);
    Value firstColumn = kb.mul(kb.blockId(gpu::Dimension::y), cColumns);
    // The offsets of slot `slot` in the feature and value buffers.
    auto slotBases = [&](Value slot) {
      return std::make_pair(kb.mul(slot, kb.idx(tokens * features)),
                            kb.mul(slot, kb.idx(tokens * columns)));
    };
    // Stages the `count` tokens at t0 into the slot at (fBase, vBase): φ(q)
    // and φ(k), and V of the block's columns (zeros past Dv). Synchronously,
    // each element loaded, mapped and stored; with async copies each is
    // copied by cp.async (4 bytes, whatever the alignment) and the feature
    // maps wait for `mapStaged`. The recurrence reads a token's value from
    // shared memory, where a load from global memory would put its latency
    // on every token's critical path.
    //
    // Async copies take 16 bytes (4 elements) at a time where the rows
    // allow it, tested once per block: φ(q), φ(k) with F a multiple of 4
    // and both buffers 16-byte aligned; V with Dv a multiple of 4 (a group
    // is wholly in Dv or past it, and copies zeros there) and its buffer
    // aligned. Elsewhere 4 bytes each, whatever the alignment.
    Value wideFeatures, wideValues; // null: never
    if (async && features % 4 == 0)
      wideFeatures = arith::AndIOp::create(
          rewriter, loc, kb.alignedTo(qBuf, 16), kb.alignedTo(kBuf, 16));
    if (async && columns % 4 == 0)
      wideValues = arith::AndIOp::create(rewriter, loc, kb.alignedTo(vBuf, 16),
                                         kb.eq(kb.remU(dv, kb.idx(4)), c0));
    // Runs `body(width)` with the width wide copies take where `wide` holds
    // and with 1 elsewhere.
    auto byWidth = [&](Value wide, function_ref<void(int64_t)> body) {
      if (!wide)
        return body(1);
      kb.ifElse(
          wide, [&] { body(4); }, [&] { body(1); });
    };
    auto stage = [&](Value t0, Value count, Value fBase, Value vBase) {
      auto stageFeatures = [&](int64_t width) {
        Value groups = kb.idx(features / width);
        kb.forLoop(tid, kb.mul(count, groups), cTile, [&](Value i) {
          Value t = kb.divU(i, groups);
          Value f = kb.mul(kb.remU(i, groups), kb.idx(width));
          Value row = kb.add(kb.mul(batch, n), tokenAt(t0, t));
          Value at = kb.add(kb.mul(row, cF), f);
          Value to = kb.add(fBase, kb.mul(i, kb.idx(width)));
          if (async) {
            kb.asyncCopy(qBuf, at, qs, to, width, Value(), width == 4);
            kb.asyncCopy(kBuf, at, ks, to, width, Value(), width == 4);
            return;
          }
          kb.store(kb.loadFeature(qBuf, at, q), qs, to);
          kb.store(kb.loadFeature(kBuf, at, k), ks, to);
        });
      };
      auto stageValues = [&](int64_t width) {
        Value groups = kb.idx(columns / width);
        kb.forLoop(tid, kb.mul(count, groups), cTile, [&](Value i) {
          Value t = kb.divU(i, groups);
          Value c =
              kb.add(firstColumn, kb.mul(kb.remU(i, groups), kb.idx(width)));
          Value row = kb.add(kb.mul(batch, n), tokenAt(t0, t));
          Value exists = kb.ult(c, dv);
          Value at = kb.add(kb.mul(row, dv), c);
          Value to = kb.add(vBase, kb.mul(i, kb.idx(width)));
          if (width > 1)
            kb.asyncCopy(vBuf, kb.select(exists, at, c0), vs, to, width,
                         kb.select(exists, kb.idx(width), c0),
                         /*bypassL1=*/true);
          else if (async)
            kb.ifElse(
                exists, [&] { kb.asyncCopy(vBuf, at, vs, to); },
                [&] { kb.store(kb.fconst(0.0), vs, to); });
          else
            kb.store(kb.loadIf(exists, vBuf, at), vs, to);
        });
      };
      byWidth(wideFeatures, stageFeatures);
      byWidth(wideValues, stageValues);
    };
    // With async copies: applies the feature maps to the elements of the
    // `count` tokens at fBase this thread copied, in its copies' groups (its
    // own copies are complete once it has waited for their group; the
    // barrier after this publishes them).
    auto mapStaged = [&](Value count, Value fBase) {
      if (!mapsOnCopy(q) && !mapsOnCopy(k))
        return;
      byWidth(wideFeatures, [&](int64_t width) {
        kb.forLoop(tid, kb.mul(count, kb.idx(features / width)), cTile,
                   [&](Value i) {
                     Value at = kb.add(fBase, kb.mul(i, kb.idx(width)));
                     for (auto [buffer, source] :
                          {std::make_pair(qs, &q), std::make_pair(ks, &k)}) {
                       if (!mapsOnCopy(*source))
                         continue;
                       SmallVector<Value> run = kb.loadRun(buffer, at, width);
                       for (Value &x : run)
                         x = kb.featureOf(x, *source);
                       kb.storeRun(buffer, at, run);
                     }
                   });
      });
    };

    // With async copies the first block is in flight before the loop, and
    // each iteration starts the next block's copies into the other slot
    // (after the barrier that ends every thread's reads of it), then waits
    // for its own block's: all but the group it just committed.
    if (async) {
      stage(c0, kb.minU(cTT, n), c0, c0);
      kb.commitAsyncCopies();
    }
    column = kb.forLoop(c0, n, cTT, column, [&](Value t0, ValueRange carried) {
      Value count = kb.minU(cTT, kb.sub(n, t0));
      Value slot = async ? kb.remU(kb.divU(t0, cTT), kb.idx(2)) : c0;
      Value fBase, vBase;
      std::tie(fBase, vBase) = slotBases(slot);
      kb.barrier();
      if (async) {
        Value next = kb.add(t0, cTT);
        kb.ifThen(kb.ult(next, n), [&] {
          auto [nextF, nextV] = slotBases(kb.sub(c1, slot));
          stage(next, kb.minU(cTT, kb.sub(n, next)), nextF, nextV);
        });
        kb.commitAsyncCopies();
        kb.waitAsyncCopies(/*pending=*/1);
        mapStaged(count, fBase);
      } else {
        stage(t0, count, fBase, vBase);
      }
      kb.barrier();
      // The running normalizer, one feature per thread, and the partial
      // products of the denominators φ(qᵢ)ᵀzᵢ; none when unnormalized and
      // the final normalizer is unused.
      if (needZ)
        kb.forLoop(tid, cF, cTile, [&](Value f) {
          Value z0 = memref::LoadOp::create(rewriter, loc, zs, ValueRange{f});
          Value z = kb.forLoop(
              c0, count, c1, ValueRange{z0},
              [&](Value t, ValueRange zc) -> SmallVector<Value> {
                Value i = kb.add(kb.mul(t, cF), f);
                Value staged = kb.add(fBase, i);
                Value kf = memref::LoadOp::create(rewriter, loc, ks,
                                                  ValueRange{staged});
                Value next = kb.fadd(zc[0], kf);
                if (normalized) {
                  Value qf = memref::LoadOp::create(rewriter, loc, qs,
                                                    ValueRange{staged});
                  memref::StoreOp::create(
                      rewriter, loc, kb.fmul(qf, next), pz,
                      ValueRange{kb.add(kb.mul(t, kb.idx(partialPitch)), f)});
                }
                return {next};
              })[0];
          memref::StoreOp::create(rewriter, loc, z, zs, ValueRange{f});
        });
      // The denominators: eps plus the token's F partial products. Each of
      // the token's lanes adds F / lanes of them (every lanes-th one: a
      // warp's loads take consecutive words of each row) in up to
      // kDenominatorChains interleaved sums added pairwise (one chain of
      // dependent adds would hold the block's other threads at the barrier
      // for as many add latencies), and the lanes add their sums with
      // shuffles; the block's threads take part alike, each pass covering
      // the block's tokens (all of them with several lanes a token).
      if (normalized) {
        kb.barrier();
        Value lanes = kb.idx(denominatorLanes);
        Value denominatorPart = kb.remU(tid, lanes);
        int64_t perLane = features / denominatorLanes;
        int64_t chains = std::clamp<int64_t>(perLane, 1, kDenominatorChains);
        int64_t whole = perLane / chains * chains;
        kb.forLoop(
            c0, count, kb.idx(tile / denominatorLanes), [&](Value first) {
              Value t = kb.add(first, kb.divU(tid, lanes));
              Value valid = kb.ult(t, count);
              // Tokens past the block read its last token's row (their sums
              // are dropped): the words its own lanes read, in their warp or
              // alone in theirs, where another row would share their banks.
              Value rowBase = kb.add(
                  kb.mul(kb.minU(t, kb.sub(count, c1)), kb.idx(partialPitch)),
                  denominatorPart);
              auto partial = [&](Value j) {
                return memref::LoadOp::create(
                           rewriter, loc, pz,
                           ValueRange{kb.add(rowBase, kb.mul(j, lanes))})
                    .getResult();
              };
              // The chains start at the first products (at zero for F = 0).
              SmallVector<Value> sums(chains, kb.fconst(0.0));
              if (whole)
                for (int64_t i = 0; i < chains; ++i)
                  sums[i] = partial(kb.idx(i));
              sums = kb.forLoop(
                  kb.idx(std::min(whole, chains)), kb.idx(whole),
                  kb.idx(chains), sums,
                  [&](Value j0, ValueRange acc) -> SmallVector<Value> {
                    SmallVector<Value> next;
                    for (int64_t i = 0; i < chains; ++i)
                      next.push_back(
                          kb.fadd(acc[i], partial(kb.add(j0, kb.idx(i)))));
                    return next;
                  });
              for (int64_t j = whole; j < perLane; ++j)
                sums[j - whole] = kb.fadd(sums[j - whole], partial(kb.idx(j)));
              Value sum =
                  kb.sumOverLanes(kb.pairwiseSum(sums), denominatorLanes);
              Value writes = arith::AndIOp::create(rewriter, loc, valid,
                                                   kb.eq(denominatorPart, c0));
              kb.ifThen(writes, [&] {
                memref::StoreOp::create(rewriter, loc,
                                        kb.fadd(kb.fconst(eps), sum), den,
                                        ValueRange{t});
              });
            });
        kb.barrier();
      }
      // The recurrence over the block's tokens, the state columns in
      // registers: token t of the block.
      auto token = [&](Value t, ValueRange s) -> SmallVector<Value> {
        Value row = kb.add(kb.mul(batch, n), tokenAt(t0, t));
        Value vRow = kb.add(vBase, kb.add(kb.mul(t, cColumns), blockColumn));
        SmallVector<Value> vt = kb.loadRun(vs, vRow, threadColumns);
        Value rowBase = kb.add(fBase, kb.mul(t, cF));
        SmallVector<Value> next;
        // The readouts φ(q)ᵀS[:, d], each in interleaved partial sums
        // (kReadoutChains in all): one chain of F dependent fused
        // multiply-adds would bound each token by F FMA latencies. With
        // no features (F = 0) a readout is one zero chain.
        int64_t chains = std::clamp<int64_t>(
            laneFeatures, 1,
            std::max<int64_t>(1, kReadoutChains / threadColumns));
        SmallVector<SmallVector<Value>> partial(
            threadColumns, SmallVector<Value>(chains, kb.fconst(0.0)));
        SmallVector<Value> kt, qt;
        for (int64_t f = 0; f < laneFeatures; f += group) {
          Value i = kb.add(rowBase, featureAt(f));
          llvm::append_range(kt, kb.loadRun(ks, i, group));
          llvm::append_range(qt, kb.loadRun(qs, i, group));
        }
        for (int64_t f = 0; f < laneFeatures; ++f) {
          Value kf = kt[f], qf = qt[f];
          for (int64_t c = 0; c < threadColumns; ++c) {
            next.push_back(kb.fma(kf, vt[c], s[f * threadColumns + c]));
            Value &sum = partial[c][f % chains];
            sum = kb.fma(qf, next.back(), sum);
          }
        }
        // The parts of a column add their readouts (every lane takes
        // part), each lane left with the sums of some of its columns.
        SmallVector<Value> sums;
        for (int64_t c = 0; c < threadColumns; ++c)
          sums.push_back(kb.pairwiseSum(partial[c]));
        sums = kb.transposedSumOverLanes(sums, lanes, groupLanes, part);
        Value first = kb.transposedSumFirst(part, threadColumns, lanes);
        int64_t spread = std::min(threadColumns, lanes);
        Value writer = kb.ult(part, kb.idx(spread));
        Value denominator;
        if (normalized)
          denominator =
              memref::LoadOp::create(rewriter, loc, den, ValueRange{t});
        for (auto [m, acc] : llvm::enumerate(sums)) {
          Value out = normalized ? kb.fdiv(acc, denominator) : acc;
          Value at = kb.add(col, kb.add(first, kb.idx(m)));
          Value writes =
              arith::AndIOp::create(rewriter, loc, kb.ult(at, dv), writer);
          kb.ifThen(writes,
                    [&] { kb.store(out, oBuf, kb.add(kb.mul(row, dv), at)); });
        }
        return next;
      };
      // kTokensPerIteration tokens an iteration, then the rest one at a
      // time: the loads and products of a token need not wait for the
      // shuffles of the one before, whose latency a lone warp per
      // scheduler (small batches) would otherwise wait out every token.
      Value cUnroll = kb.idx(kTokensPerIteration);
      Value whole = kb.mul(kb.divU(count, cUnroll), cUnroll);
      SmallVector<Value> state =
          kb.forLoop(c0, whole, cUnroll, carried,
                     [&](Value t, ValueRange s) -> SmallVector<Value> {
                       SmallVector<Value> next(s.begin(), s.end());
                       for (int64_t u = 0; u < kTokensPerIteration; ++u)
                         next = token(kb.add(t, kb.idx(u)), next);
                       return next;
                     });
      return kb.forLoop(whole, count, c1, state, token);
    });

    // The final state.
    if (writesState)
      for (int64_t c = 0; c < threadColumns; ++c)
        kb.ifThen(activeAt(c), [&] {
          for (int64_t j = 0; j < laneFeatures; ++j)
            kb.store(column[j * threadColumns + c], sBuf,
                     kb.add(kb.mul(kb.add(stateBase, featureAt(j)), dv),
                            columnAt(c)));
        });
    if (writesState && needZ)
      kb.ifThen(kb.eq(kb.blockId(gpu::Dimension::y), c0), [&] {
        kb.forLoop(tid, cF, cTile, [&](Value f) {
          Value z = memref::LoadOp::create(rewriter, loc, zs, ValueRange{f});
          kb.store(z, zBuf, kb.add(stateBase, f));
        });
      });
  }

  // The launch: grid (batch, value tiles of `columns` columns), `lanes`
  // threads per value column.
  rewriter.setInsertionPoint(op);
  replaceScan(
      op, launchScan(op, kernel, q.tensor, k.tensor, features, columns, tile));
  return std::nullopt;
}

std::optional<std::string> Converter::convert(StepOp op) {
  RankedTensorType qType = tensorTypeOf(op.getQueryFeatures());
  RankedTensorType vType = tensorTypeOf(op.getValues());
  RankedTensorType sType = tensorTypeOf(op.getState());
  int64_t rank = qType.getRank();
  int64_t features = qType.getShape().back();
  if (auto reason = checkFeatureSize(features))
    return reason;
  Type stateType = sType.getElementType();
  FeatureSource q = featureSourceOf(op.getQueryFeatures());
  FeatureSource k = featureSourceOf(op.getKeyFeatures());
  bool normalized = op.isNormalized();
  double eps = normalized ? op.getEps()->convertToDouble() : 0.0;
  // Lanes per value column, as in the recurrent scan: each streams F / lanes
  // rows of the column's state, and the lanes add their readouts with
  // shuffles. More threads keep more of the state's loads in flight, which
  // is what a step of a small batch waits for.
  int64_t lanes = options.scanFeatureLanes;
  while (lanes > 1 && features % lanes)
    lanes /= 2;
  int64_t dvStatic = vType.getShape().back();
  auto blockFor = [&](int64_t lanes) {
    return blockSizeFor(ShapedType::isDynamic(dvStatic) ? dvStatic
                                                        : dvStatic * lanes,
                        options.blockSize);
  };
  int64_t block = blockFor(lanes);
  // The shuffles need whole warps: a `block-size` that is not a multiple of
  // 32 gets one lane per column, as the recurrent scan does.
  if (block % 32 != 0) {
    lanes = 1;
    block = blockFor(1);
  }
  int64_t laneFeatures = features / lanes;
  int64_t columns = block / lanes; // value columns per block
  if (auto reason = valueTilesUnsupported(dvStatic, columns))
    return reason;
  Location loc = op.getLoc();

  Type indexType = rewriter.getIndexType();
  SmallVector<Type> argTypes = {
      flatBufferType(tensorTypeOf(q.tensor).getElementType()),
      flatBufferType(tensorTypeOf(k.tensor).getElementType()),
      flatBufferType(vType.getElementType()),
      flatBufferType(stateType),
      flatBufferType(tensorTypeOf(op.getNormalizer()).getElementType()),
      flatBufferType(tensorTypeOf(op.getResult()).getElementType()),
      flatBufferType(stateType),
      flatBufferType(cast<RankedTensorType>(op.getNewNormalizer().getType())
                         .getElementType()),
      indexType};
  SmallVector<Type> shared(3, workgroupBufferType(stateType, features));
  std::string name = kernelName(
      (Twine("linattn_step_") + mapName(q) + (normalized ? "_normalized" : ""))
          .str());
  gpu::GPUFuncOp kernel =
      createKernel(rewriter, loc, kernels(), name, argTypes, shared);
  {
    OpBuilder::InsertionGuard guard(rewriter);
    setInsertionPointToKernelBody(rewriter, kernel);
    KernelBuilder kb(rewriter, loc, stateType);
    ArrayRef<BlockArgument> args = kernel.getArguments();
    Value qBuf = args[0], kBuf = args[1], vBuf = args[2], sIn = args[3],
          zIn = args[4], oBuf = args[5], sOut = args[6], zOut = args[7],
          dv = args[8];
    ArrayRef<BlockArgument> wg = kernel.getWorkgroupAttributions();
    Value qs = wg[0], ks = wg[1], zs = wg[2];
    Value c0 = kb.idx(0), cF = kb.idx(features), cBlock = kb.idx(block),
          cLanes = kb.idx(lanes);
    Value batch = kb.blockId(gpu::Dimension::x);
    Value tid = kb.threadId();
    Value col = kb.add(kb.mul(kb.blockId(gpu::Dimension::y), kb.idx(columns)),
                       kb.divU(tid, cLanes));
    Value part = kb.remU(tid, cLanes);
    // Row r of the lane is feature r * lanes + part: the lanes of a column
    // read consecutive features of φ(q), φ(k) (distinct banks) and z (one
    // sector), where blocks of F / lanes rows would put them in one bank.
    auto featureOf = [&](Value row) {
      return kb.add(kb.mul(row, cLanes), part);
    };
    // The lanes of a column past Dv compute nothing and store nothing, but
    // take part in the shuffles.
    Value active = kb.ult(col, dv);
    Value base = kb.mul(batch, cF);
    Value zero = kb.fconst(0.0);
    // Row `row` of the lane: its feature and the offset of S[f, col].
    auto rowAt = [&](Value row) {
      Value f = featureOf(row);
      return std::make_pair(f, kb.add(kb.mul(kb.add(base, f), dv), col));
    };
    // v and the lane's first `early` state rows are loaded before the
    // features are staged, so that their latency overlaps the staging's and
    // the barrier's: a step of a small batch waits on little else.
    int64_t early = std::min(laneFeatures, kStepEarlyLoads);
    auto earlyLoads = scf::IfOp::create(
        rewriter, loc, active,
        [&](OpBuilder &, Location) {
          SmallVector<Value> loaded = {
              kb.load(vBuf, kb.add(kb.mul(batch, dv), col))};
          for (int64_t j = 0; j < early; ++j)
            loaded.push_back(kb.load(sIn, rowAt(kb.idx(j)).second));
          scf::YieldOp::create(rewriter, loc, loaded);
        },
        [&](OpBuilder &, Location) {
          scf::YieldOp::create(rewriter, loc,
                               SmallVector<Value>(early + 1, zero));
        });
    // φ(q), φ(k) and the new normalizer z + φ(k), which every column's
    // denominator reads.
    kb.forLoop(tid, cF, cBlock, [&](Value f) {
      Value at = kb.add(base, f);
      Value kf = kb.loadFeature(kBuf, at, k);
      memref::StoreOp::create(rewriter, loc, kb.loadFeature(qBuf, at, q), qs,
                              ValueRange{f});
      memref::StoreOp::create(rewriter, loc, kf, ks, ValueRange{f});
      memref::StoreOp::create(rewriter, loc, kb.fadd(kb.load(zIn, at), kf), zs,
                              ValueRange{f});
    });
    kb.barrier();
    // Σ φ(q)ᵀS[:, col] and Σ φ(q)ᵀz over the lane's features: the early
    // rows, then the rest in groups of kStepLoads rows whose loads are
    // issued together, then used. A step is bound by the latency of these
    // loads, not by their arithmetic.
    auto partial = scf::IfOp::create(
        rewriter, loc, active,
        [&](OpBuilder &, Location) {
          Value vt = earlyLoads.getResult(0);
          auto update = [&](Value first, ValueRange s, ValueRange acc) {
            SmallVector<Value> next(acc);
            for (auto [j, sOld] : llvm::enumerate(s)) {
              auto [f, at] = rowAt(kb.add(first, kb.idx(j)));
              Value qf =
                  memref::LoadOp::create(rewriter, loc, qs, ValueRange{f});
              Value kf =
                  memref::LoadOp::create(rewriter, loc, ks, ValueRange{f});
              Value sNew = kb.fma(kf, vt, sOld);
              kb.store(sNew, sOut, at);
              next[0] = kb.fma(qf, sNew, next[0]);
              if (normalized)
                next[1] = kb.fma(
                    qf,
                    memref::LoadOp::create(rewriter, loc, zs, ValueRange{f}),
                    next[1]);
            }
            return next;
          };
          auto rows = [&](Value first, int64_t count, ValueRange acc) {
            SmallVector<Value> s;
            for (int64_t j = 0; j < count; ++j)
              s.push_back(kb.load(sIn, rowAt(kb.add(first, kb.idx(j))).second));
            return update(first, s, acc);
          };
          SmallVector<Value> acc = update(
              c0, earlyLoads.getResults().drop_front(), ValueRange{zero, zero});
          int64_t groups = (laneFeatures - early) / kStepLoads;
          int64_t rest = (laneFeatures - early) % kStepLoads;
          if (groups > 0)
            acc = kb.forLoop(
                kb.idx(early), kb.idx(early + groups * kStepLoads),
                kb.idx(kStepLoads), acc,
                [&](Value g, ValueRange carried) -> SmallVector<Value> {
                  return rows(g, kStepLoads, carried);
                });
          if (rest > 0)
            acc = rows(kb.idx(early + groups * kStepLoads), rest, acc);
          scf::YieldOp::create(rewriter, loc, acc);
        },
        [&](OpBuilder &, Location) {
          scf::YieldOp::create(rewriter, loc, ValueRange{zero, zero});
        });
    // The column's lanes add their sums.
    SmallVector<Value> sums;
    for (Value sum : partial.getResults())
      sums.push_back(kb.sumOverLanes(sum, lanes));
    Value out = normalized ? kb.fdiv(sums[0], kb.fadd(sums[1], kb.fconst(eps)))
                           : sums[0];
    Value writes =
        arith::AndIOp::create(rewriter, loc, active, kb.eq(part, c0));
    kb.ifThen(writes,
              [&] { kb.store(out, oBuf, kb.add(kb.mul(batch, dv), col)); });
    kb.ifThen(kb.eq(kb.blockId(gpu::Dimension::y), c0), [&] {
      kb.forLoop(tid, cF, cBlock, [&](Value f) {
        kb.store(memref::LoadOp::create(rewriter, loc, zs, ValueRange{f}), zOut,
                 kb.add(base, f));
      });
    });
  }

  rewriter.setInsertionPoint(op);
  LaunchBuilder launch(rewriter, loc, module);
  Value values = op.getValues();
  int64_t batchDims = rank - 1;
  launch.input(q.tensor);
  launch.input(k.tensor);
  launch.input(values);
  launch.input(op.getState());
  launch.input(op.getNormalizer());
  OpFoldResult dvSize = sizeOf(rewriter, loc, values, -1);
  OpFoldResult fSize = rewriter.getIndexAttr(features);
  launch.output(tensorTypeOf(op.getResult()),
                leadingThen(rewriter, loc, values, batchDims, {dvSize}));
  launch.output(cast<RankedTensorType>(op.getNewState().getType()),
                leadingThen(rewriter, loc, values, batchDims, {fSize, dvSize}));
  launch.output(cast<RankedTensorType>(op.getNewNormalizer().getType()),
                leadingThen(rewriter, loc, values, batchDims, {fSize}));
  Value dvValue = getValueOrCreateConstantIndexOp(rewriter, loc, dvSize);
  launch.scalar(dvValue);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  Value tiles = arith::MaxUIOp::create(
      rewriter, loc, ceilDiv(rewriter, loc, dvValue, columns), one);
  SmallVector<Value> results = launch.launch(
      kernel, {batchProduct(rewriter, loc, values, batchDims), tiles, one},
      block);
  rewriter.replaceOp(op, results);
  return std::nullopt;
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
  // φ(K) of a tile of kSummaryKeys keys and the block's kSummaryFeatures
  // features, key-major (16-byte aligned rows of 16 features).
  std::string name =
      kernelName((Twine("linattn_kv_summary_") + mapName(k)).str());
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
      Value first = kb.mul(batch, m);
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
                  Value x = kb.loadIf(
                      valid, kBuf,
                      kb.add(kb.mul(kb.add(first, kb.add(key0, j)), cF), f));
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
                  Value v = kb.loadIf(
                      active, vBuf,
                      kb.add(kb.mul(kb.add(first, kb.add(key0, j)), dv), col));
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
  launch.input(k.tensor);
  launch.input(values);
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
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  Value tiles = arith::MaxUIOp::create(
      rewriter, loc, ceilDiv(rewriter, loc, dvValue, block), one);
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
  // φ(q) of the tile's tokens feature-major (row f: the TT tokens and 4
  // elements of padding, so that rows start 16-byte aligned and the
  // transposing stores of the staging avoid bank conflicts), and their
  // denominators.
  int64_t pitch = kReadoutTokens + 4;
  SmallVector<Type> shared = {workgroupBufferType(stateType, features * pitch),
                              workgroupBufferType(stateType, kReadoutTokens)};
  std::string name = kernelName((Twine("linattn_query_readout_") + mapName(q) +
                                 (normalized ? "_normalized" : ""))
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
    Value qs = kernel.getWorkgroupAttributions()[0];
    Value dens = kernel.getWorkgroupAttributions()[1];
    Value c0 = kb.idx(0), c1 = kb.idx(1), cF = kb.idx(features),
          cBlock = kb.idx(block), cTT = kb.idx(kReadoutTokens),
          cPitch = kb.idx(pitch);
    Value token0 = kb.mul(kb.blockId(gpu::Dimension::x), cTT);
    Value tid = kb.threadId();
    Value col = kb.add(kb.mul(kb.blockId(gpu::Dimension::y), cBlock), tid);
    Value active = kb.ult(col, dv);
    kb.gridStrideLoop(gpu::Dimension::z, batches, [&](Value batch) {
      Value first = kb.add(kb.mul(batch, n), token0);
      // The previous batch element's readers are done with the tile.
      kb.barrier();
      // The tile's rows of q, four tokens by eight features a warp: each
      // token's features are consecutive in global memory (in f32 one
      // sector a token), and with rows of TT + 4 elements the warp's 32
      // stores land in distinct banks (a warp over the features of one
      // token would put every eighth feature in one bank). Tokens past N
      // are zeros (and read token0's row, which exists).
      Value c4 = kb.idx(4);
      kb.forLoop(tid, kb.idx(kReadoutTokens * features), cBlock, [&](Value i) {
        Value t = kb.add(kb.remU(i, c4),
                         kb.mul(kb.divU(i, kb.idx(4 * features)), c4));
        Value f = kb.remU(kb.divU(i, c4), cF);
        Value valid = kb.ult(kb.add(token0, t), n);
        Value row = kb.add(first, kb.select(valid, t, c0));
        Value x = kb.loadFeature(qBuf, kb.add(kb.mul(row, cF), f), q);
        memref::StoreOp::create(rewriter, loc,
                                kb.select(valid, x, kb.fconst(0.0)), qs,
                                ValueRange{kb.add(kb.mul(f, cPitch), t)});
      });
      if (normalized) {
        kb.barrier();
        Value zBase = kb.mul(batch, cF);
        kb.forLoop(tid, cTT, cBlock, [&](Value t) {
          Value den = kb.forLoop(
              c0, cF, c1, ValueRange{kb.fconst(eps)},
              [&](Value f, ValueRange acc) -> SmallVector<Value> {
                return {kb.fma(kb.load(qs, kb.add(kb.mul(f, cPitch), t)),
                               kb.load(zBuf, kb.add(zBase, f)), acc[0])};
              })[0];
          memref::StoreOp::create(rewriter, loc, den, dens, ValueRange{t});
        });
      }
      kb.barrier();
      kb.ifThen(active, [&] {
        // O[t, col] for the TT tokens: each S[f, col] loaded once for TT
        // products, φ(q) of the tokens read four at a time.
        Value base = kb.mul(batch, cF);
        SmallVector<Value> init(kReadoutTokens, kb.fconst(0.0));
        SmallVector<Value> sums = kb.forLoop(
            c0, cF, c1, init,
            [&](Value f, ValueRange acc) -> SmallVector<Value> {
              Value s = kb.load(sBuf, kb.add(kb.mul(kb.add(base, f), dv), col));
              return addScaledRow(kb, qs, kb.mul(f, cPitch), s, acc);
            });
        for (int64_t t = 0; t < kReadoutTokens; ++t) {
          Value token = kb.add(token0, kb.idx(t));
          kb.ifThen(kb.ult(token, n), [&] {
            Value out = sums[t];
            if (normalized)
              out = kb.fdiv(out, memref::LoadOp::create(rewriter, loc, dens,
                                                        ValueRange{kb.idx(t)}));
            kb.store(out, oBuf,
                     kb.add(kb.mul(kb.add(first, kb.idx(t)), dv), col));
          });
        }
      });
    });
  }

  rewriter.setInsertionPoint(op);
  LaunchBuilder launch(rewriter, loc, module);
  Value queries = q.tensor, state = op.getState();
  int64_t batchDims = rank - 2;
  launch.input(queries);
  launch.input(state);
  if (normalized)
    launch.input(op.getNormalizer());
  OpFoldResult nSize = sizeOf(rewriter, loc, queries, -2);
  OpFoldResult dvSize = sizeOf(rewriter, loc, state, -1);
  launch.output(
      tensorTypeOf(op.getResult()),
      leadingThen(rewriter, loc, queries, batchDims, {nSize, dvSize}));
  Value nValue = getValueOrCreateConstantIndexOp(rewriter, loc, nSize);
  Value dvValue = getValueOrCreateConstantIndexOp(rewriter, loc, dvSize);
  Value batches = batchProduct(rewriter, loc, queries, batchDims);
  launch.scalar(nValue);
  launch.scalar(dvValue);
  launch.scalar(batches);
  SmallVector<Value> results =
      launch.launch(kernel,
                    {ceilDiv(rewriter, loc, nValue, kReadoutTokens),
                     ceilDiv(rewriter, loc, dvValue, block),
                     gridSizeYZ(rewriter, loc, batches)},
                    block);
  rewriter.replaceOp(op, results);
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
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  Value tiles = arith::MaxUIOp::create(
      rewriter, loc, ceilDiv(rewriter, loc, mValue, block), one);
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
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  Value tiles = arith::MaxUIOp::create(
      rewriter, loc, ceilDiv(rewriter, loc, dvValue, block), one);
  SmallVector<Value> results =
      launch.launch(kernel,
                    {tiles, gridSizeYZ(rewriter, loc, nValue),
                     gridSizeYZ(rewriter, loc, batches)},
                    block);
  rewriter.replaceOp(op, results);
  return std::nullopt;
}

void Converter::convert(FeatureMapOp op) {
  Value input = op.getInput(), projection = op.getProjection();
  RankedTensorType resultType = op.getType();
  int64_t rank = resultType.getRank();
  FeatureMapKind kind = op.getKind();
  Type computeType = getAccumulatorType(resultType.getElementType());
  int64_t block = blockSizeFor(resultType.getShape().back(), options.blockSize);
  Location loc = op.getLoc();

  // One thread per feature of a row: grid (feature tiles, rows), the rows
  // past the grid's limit by a grid-stride loop.
  Type indexType = rewriter.getIndexType();
  SmallVector<Type> argTypes = {
      flatBufferType(tensorTypeOf(input).getElementType())};
  if (projection)
    argTypes.push_back(
        flatBufferType(tensorTypeOf(projection).getElementType()));
  argTypes.append({flatBufferType(resultType.getElementType()), indexType,
                   indexType, indexType});
  std::string name = kernelName(
      (Twine("linattn_feature_map_") + stringifyFeatureMapKind(kind)).str());
  gpu::GPUFuncOp kernel =
      createKernel(rewriter, loc, kernels(), name, argTypes, {});
  {
    OpBuilder::InsertionGuard guard(rewriter);
    setInsertionPointToKernelBody(rewriter, kernel);
    KernelBuilder kb(rewriter, loc, computeType);
    ArrayRef<BlockArgument> args = kernel.getArguments();
    Value xBuf = args[0], pBuf = projection ? Value(args[1]) : Value();
    unsigned next = projection ? 2 : 1;
    Value out = args[next], rows = args[next + 1], d = args[next + 2],
          f = args[next + 3];
    Value c0 = kb.idx(0), c1 = kb.idx(1);
    Value j = kb.add(kb.mul(kb.blockId(gpu::Dimension::x), kb.idx(block)),
                     kb.threadId());
    auto asFloat = [&](Value size) {
      Value count = arith::IndexCastOp::create(rewriter, loc,
                                               rewriter.getI64Type(), size);
      return arith::SIToFPOp::create(rewriter, loc, computeType, count);
    };
    kb.gridStrideLoop(gpu::Dimension::y, rows, [&](Value row) {
      kb.ifThen(kb.ult(j, f), [&] {
        Value xRow = kb.mul(row, d);
        Value at = kb.add(kb.mul(row, f), j);
        switch (kind) {
        case FeatureMapKind::Favor: {
          // exp(x·P[:, j] - |x|²/2) / √m.
          SmallVector<Value> sums =
              kb.forLoop(c0, d, c1, ValueRange{kb.fconst(0.0), kb.fconst(0.0)},
                         [&](Value i, ValueRange acc) -> SmallVector<Value> {
                           Value x = kb.load(xBuf, kb.add(xRow, i));
                           Value p = kb.load(pBuf, kb.add(kb.mul(i, f), j));
                           return {kb.fma(x, p, acc[0]), kb.fma(x, x, acc[1])};
                         });
          Value exponent = arith::SubFOp::create(
              rewriter, loc, sums[0], kb.fmul(sums[1], kb.fconst(0.5)));
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
    });
  }

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
  Value rows = batchProduct(rewriter, loc, input, rank - 1);
  launch.scalar(rows);
  launch.scalar(dValue);
  launch.scalar(fValue);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  Value tiles = arith::MaxUIOp::create(
      rewriter, loc, ceilDiv(rewriter, loc, fValue, block), one);
  SmallVector<Value> results = launch.launch(
      kernel, {tiles, gridSizeYZ(rewriter, loc, rows), one}, block);
  rewriter.replaceOp(op, results);
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
    if (reason && !options.hostFallback) {
      op->emitError() << "has no GPU kernel: " << *reason;
      failed = true;
    }
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
  if (!options.hostFallback) {
    module.walk([&](Operation *op) {
      if (op->getDialect() && isa<LinAttnDialect>(op->getDialect()) &&
          !isa<ScanOp, StepOp, KvSummaryOp, QueryReadoutOp, ScoresOp,
               ApplyScoresOp>(op)) {
        op->emitError() << "has no GPU kernel (only feature_map, scan, "
                           "step, kv_summary, query_readout, scores and "
                           "apply_scores do)";
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

namespace {
struct ConvertLinAttnToGPUPass
    : public linattn::impl::ConvertLinAttnToGPUPassBase<
          ConvertLinAttnToGPUPass> {
  using Base::Base;
  void runOnOperation() override {
    LinAttnToGPUKernelOptions opts;
    opts.scanTile = scanTile;
    opts.scanFeatureLanes = scanFeatureLanes;
    opts.scanThreadColumns = scanThreadColumns;
    opts.blockSize = blockSize;
    opts.maxRegisterState = maxRegisterState;
    opts.hostFallback = hostFallback;
    opts.chunkSize = chunkSize;
    opts.valueTile = valueTile;
    opts.minBlocksPerSM = minBlocksPerSM;
    opts.sequenceParallelBlocks = sequenceParallelBlocks;
    opts.minSegmentTokens = minSegmentTokens;
    opts.tf32 = tf32;
    opts.vectorLoads = vectorLoads;
    opts.asyncCopies = asyncCopies;
    opts.wgmma = wgmma;
    opts.prefetchChunks = prefetchChunks;
    opts.narrowOffsetLimit = narrowOffsetLimit;
    if (scanKernel != "chunked" && scanKernel != "recurrent") {
      getOperation().emitError("scan-kernel must be 'chunked' or 'recurrent'");
      return signalPassFailure();
    }
    opts.chunkedScan = scanKernel == "chunked";
    if (linearKernel != "chunked" && linearKernel != "scalar") {
      getOperation().emitError("linear-kernel must be 'chunked' or 'scalar'");
      return signalPassFailure();
    }
    opts.chunkedLinear = linearKernel == "chunked";
    if (opts.chunkSize != 16 && opts.chunkSize != 32 && opts.chunkSize != 64) {
      getOperation().emitError("chunk-size must be 16, 32 or 64");
      return signalPassFailure();
    }
    if (opts.valueTile != 8 && opts.valueTile != 16 && opts.valueTile != 32 &&
        opts.valueTile != 64 && opts.valueTile != 128) {
      getOperation().emitError("value-tile must be 8, 16, 32, 64 or 128");
      return signalPassFailure();
    }
    if (opts.minBlocksPerSM < 0 || opts.minBlocksPerSM > 32) {
      getOperation().emitError("min-blocks-per-sm must be between 0 and 32");
      return signalPassFailure();
    }
    if (opts.scanTile <= 0 || opts.scanTile > 1024 || opts.blockSize <= 0 ||
        opts.blockSize > 1024) {
      getOperation().emitError(
          "scan-tile and block-size must be between 1 and 1024");
      return signalPassFailure();
    }
    if (opts.scanFeatureLanes < 1 || opts.scanFeatureLanes > 32 ||
        !llvm::isPowerOf2_64(opts.scanFeatureLanes)) {
      getOperation().emitError(
          "scan-feature-lanes must be a power of two from 1 to 32");
      return signalPassFailure();
    }
    if (opts.scanThreadColumns < 1 || opts.scanThreadColumns > 8 ||
        !llvm::isPowerOf2_64(opts.scanThreadColumns)) {
      getOperation().emitError("scan-thread-columns must be 1, 2, 4 or 8");
      return signalPassFailure();
    }
    if (opts.sequenceParallelBlocks < 0) {
      getOperation().emitError("sequence-parallel-blocks must not be negative");
      return signalPassFailure();
    }
    if (opts.minSegmentTokens < 0) {
      getOperation().emitError("min-segment-tokens must not be negative");
      return signalPassFailure();
    }
    if (opts.narrowOffsetLimit < 0 ||
        opts.narrowOffsetLimit > kMaxNarrowOffsetLimit) {
      getOperation().emitError(
          "narrow-offset-limit must be between 0 and 2^31 (2147483648)");
      return signalPassFailure();
    }
    if (opts.prefetchChunks < 0 || opts.prefetchChunks > 1024) {
      getOperation().emitError("prefetch-chunks must be between 0 and 1024");
      return signalPassFailure();
    }
    std::optional<unsigned> sm = smVersion(chip);
    if (!sm) {
      getOperation().emitError("chip '")
          << chip << "' is not sm_ followed by a number";
      return signalPassFailure();
    }
    // mma.sync on f16, bf16 and tf32 (and ldmatrix, cp.async) need sm_80:
    // older chips take the recurrent and scalar kernels; wgmma is sm_90's.
    if (*sm < 80) {
      opts.chunkedScan = false;
      opts.chunkedLinear = false;
      opts.tf32 = false;
      opts.asyncCopies = false;
    }
    if (*sm != 90)
      opts.wgmma = false;
    if (failed(convertLinAttnToGPUKernels(getOperation(), opts)))
      signalPassFailure();
  }
};

} // namespace
