//===- ChunkedScan.cpp - the chunked causal scan on tensor cores ----------===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//
//
// Causal scans with f16/bf16 data and an f32 state, chunkwise on tensor cores
// (nvvm.mma.sync m16n8k16, f32 accumulators). Within a chunk of C tokens the
// output is tril(φ(Q_c)φ(K_c)ᵀ)V_c + φ(Q_c)S, across chunks the state grows
// by φ(K_c)ᵀV_c.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilders.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::linattn;
using namespace mlir::linattn::gpukernels;

namespace {
/// Tile sizes of the chunked scan kernel.
struct ChunkedScanShape {
  int64_t chunk;  // C tokens per chunk, 16 per warp
  int64_t warps;  // W = C / 16
  int64_t dvTile; // DT value columns per block
};
} // namespace

/// Picks the chunk and value tile of the chunked scan for F features: the
/// largest chunk up to `maxChunk`, then the widest value tile, such that the
/// shared memory (φ(Q_c), φ(K_c), V_c, the masked scores and the state, in
/// the 16-bit data type) fits the 48 KiB of static shared memory and the
/// state fragments each thread accumulates fit 64 registers.
static std::optional<ChunkedScanShape> chunkedScanShape(int64_t features,
                                                        int64_t maxChunk) {
  for (int64_t chunk = 64; chunk >= 16; chunk /= 2) {
    if (chunk > maxChunk)
      continue;
    int64_t warps = chunk / 16;
    for (int64_t dvTile = 64; dvTile >= 8 * warps; dvTile /= 2) {
      int64_t elements = 2 * chunk * features + chunk * dvTile + chunk * chunk +
                         features * dvTile;
      int64_t bytes = 2 * elements + 4 * features;
      int64_t registers = (features / 16) * (dvTile / 8 / warps) * 4;
      if (bytes <= 48 * 1024 && registers <= 64)
        return ChunkedScanShape{chunk, warps, dvTile};
    }
  }
  return std::nullopt;
}

std::optional<std::string>
mlir::linattn::gpukernels::chunkedScanUnsupported(ScanOp op) {
  Type data = tensorTypeOf(op.getValues()).getElementType();
  if (!data.isF16() && !data.isBF16())
    return std::string("the data type is not f16 or bf16");
  for (Value operand : {op.getQueryFeatures(), op.getKeyFeatures()})
    if (tensorTypeOf(operand).getElementType() != data ||
        tensorTypeOf(featureSourceOf(operand).tensor).getElementType() != data)
      return std::string("query, key and value types differ");
  if (!tensorTypeOf(op.getResult()).getElementType().isF32() &&
      tensorTypeOf(op.getResult()).getElementType() != data)
    return std::string("the result type is neither the data type nor f32");
  auto sType = cast<RankedTensorType>(op.getFinalState().getType());
  if (!sType.getElementType().isF32())
    return std::string("the state is not f32");
  int64_t features = tensorTypeOf(op.getQueryFeatures()).getShape().back();
  if (ShapedType::isDynamic(features) || features % 16 != 0)
    return std::string("the feature size is not a multiple of 16");
  return std::nullopt;
}

namespace {
/// m16n8k16 tensor-core products of 16-bit operands with f32 accumulators,
/// on fragments gathered from shared memory.
class MmaBuilder {
public:
  MmaBuilder(KernelBuilder &kb, Type dataType, Value lane)
      : kb(kb), b(kb.b), loc(kb.loc), dataType(dataType) {
    group = kb.divU(lane, kb.idx(4));
    pair = kb.mul(kb.remU(lane, kb.idx(4)), kb.idx(2));
  }

  /// Element (row, col) of a matrix, as a 16-bit value.
  using Element = function_ref<Value(Value row, Value col)>;

  /// acc + A[r0:r0+16, k0:k0+16] · B[k0:k0+16, n0:n0+8], `acc` and the
  /// result in the accumulator layout (rows g and g+8, columns 2t and 2t+1
  /// of lane 4g+t).
  SmallVector<Value> mma(Element a, Element bm, Value r0, Value k0, Value n0,
                         ValueRange acc) {
    Value rowLo = kb.add(r0, group), rowHi = kb.add(rowLo, kb.idx(8));
    Value kLo = kb.add(k0, pair), kHi = kb.add(kLo, kb.idx(8));
    Value col = kb.add(n0, group);
    auto aPair = [&](Value row, Value k) {
      return pack(a(row, k), a(row, kb.add(k, kb.idx(1))));
    };
    auto bPair = [&](Value k) {
      return pack(bm(k, col), bm(kb.add(k, kb.idx(1)), col));
    };
    SmallVector<Value> aRegs = {aPair(rowLo, kLo), aPair(rowHi, kLo),
                                aPair(rowLo, kHi), aPair(rowHi, kHi)};
    SmallVector<Value> bRegs = {bPair(kLo), bPair(kHi)};
    Type f32 = b.getF32Type();
    auto resultType = LLVM::LLVMStructType::getLiteral(
        b.getContext(), SmallVector<Type>(4, f32));
    NVVM::MMATypes ptxType =
        dataType.isBF16() ? NVVM::MMATypes::bf16 : NVVM::MMATypes::f16;
    auto op =
        NVVM::MmaOp::create(b, loc, resultType, aRegs, bRegs, acc, {16, 8, 16},
                            /*b1Op=*/std::nullopt, /*intOverflow=*/std::nullopt,
                            std::array<NVVM::MMATypes, 2>{ptxType, ptxType},
                            std::array<NVVM::MMALayout, 2>{
                                NVVM::MMALayout::row, NVVM::MMALayout::col});
    SmallVector<Value> result;
    for (int64_t i = 0; i < 4; ++i)
      result.push_back(LLVM::ExtractValueOp::create(b, loc, op.getRes(), i));
    return result;
  }

  /// Row and column of accumulator element `i` (0..3) of the tile at
  /// (r0, n0).
  std::pair<Value, Value> position(Value r0, Value n0, int64_t i) {
    Value row = kb.add(r0, group);
    if (i >= 2)
      row = kb.add(row, kb.idx(8));
    Value col = kb.add(n0, pair);
    if (i % 2)
      col = kb.add(col, kb.idx(1));
    return {row, col};
  }

  Value group, pair;

private:
  /// Two 16-bit values in one 32-bit register (bf16 goes as i32).
  Value pack(Value lo, Value hi) {
    auto vectorType = VectorType::get({2}, dataType);
    Value v =
        vector::FromElementsOp::create(b, loc, vectorType, ValueRange{lo, hi});
    if (dataType.isF16())
      return v;
    auto i32x1 = VectorType::get({1}, b.getI32Type());
    Value cast = vector::BitCastOp::create(b, loc, i32x1, v);
    return vector::ExtractOp::create(b, loc, cast, ArrayRef<int64_t>{0});
  }

  KernelBuilder &kb;
  OpBuilder &b;
  Location loc;
  Type dataType;
};
} // namespace

std::optional<std::string> Converter::convertChunked(ScanOp op) {
  RankedTensorType qType = tensorTypeOf(op.getQueryFeatures());
  RankedTensorType vType = tensorTypeOf(op.getValues());
  RankedTensorType sType = cast<RankedTensorType>(op.getFinalState().getType());
  int64_t features = qType.getShape().back();
  int64_t maxChunk = options.chunkSize;
  if (auto hint = op.getChunkSize())
    maxChunk = std::min<int64_t>(maxChunk, *hint);
  std::optional<ChunkedScanShape> shape = chunkedScanShape(features, maxChunk);
  if (!shape)
    return std::string("no chunk shape fits F = ") + std::to_string(features);
  int64_t chunk = shape->chunk, warps = shape->warps, dvTile = shape->dvTile;
  int64_t threads = 32 * warps;
  int64_t fTiles = features / 16;
  int64_t nTilesPerWarp = dvTile / 8 / warps;

  FeatureSource q = featureSourceOf(op.getQueryFeatures());
  FeatureSource k = featureSourceOf(op.getKeyFeatures());
  bool normalized = op.isNormalized();
  bool reverse = op.isReverse();
  bool hasInit = op.hasInitialState();
  double eps = normalized ? op.getEps()->convertToDouble() : 0.0;
  Type stateType = sType.getElementType();
  Type dataType = vType.getElementType();
  Location loc = op.getLoc();

  SmallVector<Type> argTypes = {flatBufferType(dataType),
                                flatBufferType(dataType),
                                flatBufferType(dataType)};
  if (hasInit) {
    argTypes.push_back(flatBufferType(stateType));
    argTypes.push_back(flatBufferType(stateType));
  }
  argTypes.push_back(
      flatBufferType(tensorTypeOf(op.getResult()).getElementType()));
  argTypes.push_back(flatBufferType(stateType));
  argTypes.push_back(flatBufferType(stateType));
  Type indexType = rewriter.getIndexType();
  argTypes.push_back(indexType); // N
  argTypes.push_back(indexType); // Dv
  SmallVector<Type> shared = {
      workgroupBufferType(dataType, chunk * features),  // φ(Q_c)
      workgroupBufferType(dataType, chunk * features),  // φ(K_c)
      workgroupBufferType(dataType, chunk * dvTile),    // V_c
      workgroupBufferType(dataType, chunk * chunk),     // masked scores
      workgroupBufferType(dataType, features * dvTile), // S at the chunk start
      workgroupBufferType(stateType, features)};        // z at the chunk start
  std::string name = kernelName((Twine("linattn_scan_chunked_") +
                                 (reverse ? "reverse" : "forward") + "_" +
                                 mapName(q) + (normalized ? "_normalized" : ""))
                                    .str());
  gpu::GPUFuncOp kernel =
      createKernel(rewriter, loc, kernels(), name, argTypes, shared);
  {
    OpBuilder::InsertionGuard guard(rewriter);
    setInsertionPointToKernelBody(rewriter, kernel);
    KernelBuilder kb(rewriter, loc, stateType);
    ScanKernelArgs bound = scanKernelArgs(kernel, hasInit);
    Value qBuf = bound.q, kBuf = bound.k, vBuf = bound.v, s0Buf = bound.s0,
          z0Buf = bound.z0, oBuf = bound.o, sBuf = bound.s, zBuf = bound.z,
          n = bound.n, dv = bound.dv;
    ArrayRef<BlockArgument> wg = kernel.getWorkgroupAttributions();
    Value qs = wg[0], ks = wg[1], vs = wg[2], ps = wg[3], ss = wg[4],
          zs = wg[5];

    Value c0 = kb.idx(0), c1 = kb.idx(1), cF = kb.idx(features),
          cC = kb.idx(chunk), cDT = kb.idx(dvTile), cT = kb.idx(threads);
    Value batch = kb.blockId(gpu::Dimension::x);
    Value colBase = kb.mul(kb.blockId(gpu::Dimension::y), cDT);
    Value tid = kb.threadId();
    Value warp = kb.divU(tid, kb.idx(32));
    Value lane = kb.remU(tid, kb.idx(32));
    Value stateBase = kb.mul(batch, cF);
    MmaBuilder mb(kb, dataType, lane);

    auto loadShared = [&](Value buffer, Value index) {
      return memref::LoadOp::create(rewriter, loc, buffer, ValueRange{index})
          .getResult();
    };
    auto storeShared = [&](Value value, Value buffer, Value index) {
      memref::StoreOp::create(rewriter, loc,
                              convertFloat(rewriter, loc, value, dataType),
                              buffer, ValueRange{index});
    };
    // Row-major views of the shared tiles.
    auto qAt = [&](Value r, Value c) {
      return loadShared(qs, kb.add(kb.mul(r, cF), c));
    };
    auto kAt = [&](Value r, Value c) {
      return loadShared(ks, kb.add(kb.mul(r, cF), c));
    };
    auto kTransposedAt = [&](Value f, Value t) { return kAt(t, f); };
    auto vAt = [&](Value r, Value c) {
      return loadShared(vs, kb.add(kb.mul(r, cDT), c));
    };
    auto pAt = [&](Value r, Value c) {
      return loadShared(ps, kb.add(kb.mul(r, cC), c));
    };
    auto sAt = [&](Value r, Value c) {
      return loadShared(ss, kb.add(kb.mul(r, cDT), c));
    };
    // The state tiles this warp accumulates: every feature tile, value tiles
    // warp + j·W.
    auto stateTile = [&](int64_t fi, int64_t j) {
      Value n0 = kb.mul(kb.add(warp, kb.idx(j * warps)), kb.idx(8));
      return std::make_pair(kb.idx(16 * fi), n0);
    };
    auto stateIndex = [&](Value f, Value col) {
      return kb.add(kb.mul(kb.add(stateBase, f), dv), col);
    };

    // The state fragments, in registers.
    SmallVector<Value> state;
    for (int64_t fi = 0; fi < fTiles; ++fi)
      for (int64_t j = 0; j < nTilesPerWarp; ++j) {
        auto [r0, n0] = stateTile(fi, j);
        for (int64_t i = 0; i < 4; ++i) {
          if (!hasInit) {
            state.push_back(kb.fconst(0.0));
            continue;
          }
          auto [f, c] = mb.position(r0, n0, i);
          Value col = kb.add(colBase, c);
          state.push_back(
              kb.loadIf(kb.ult(col, dv), s0Buf, stateIndex(f, col)));
        }
      }
    kb.forLoop(tid, cF, cT, [&](Value f) {
      Value init =
          hasInit ? kb.load(z0Buf, kb.add(stateBase, f)) : kb.fconst(0.0);
      memref::StoreOp::create(rewriter, loc, init, zs, ValueRange{f});
    });

    auto tokenAt = [&](Value i) {
      return reverse ? kb.sub(kb.sub(n, c1), i) : i;
    };

    state = kb.forLoop(c0, n, cC, state, [&](Value t0, ValueRange carried) {
      Value count = kb.minU(cC, kb.sub(n, t0));
      // Phase 1: stage φ(Q_c), φ(K_c) and V_c, zeros past the sequence.
      kb.barrier();
      kb.forLoop(tid, kb.idx(chunk * features), cT, [&](Value i) {
        Value t = kb.divU(i, cF), f = kb.remU(i, cF);
        Value valid = kb.ult(t, count);
        Value row = kb.add(kb.mul(batch, n), tokenAt(kb.add(t0, t)));
        Value at = kb.add(kb.mul(row, cF), f);
        auto feature = [&](Value buffer, const FeatureSource &source) {
          auto branch = scf::IfOp::create(
              rewriter, loc, valid,
              [&](OpBuilder &, Location) {
                scf::YieldOp::create(rewriter, loc,
                                     kb.loadFeature(buffer, at, source));
              },
              [&](OpBuilder &, Location) {
                scf::YieldOp::create(rewriter, loc, kb.fconst(0.0));
              });
          return branch.getResult(0);
        };
        storeShared(feature(qBuf, q), qs, i);
        storeShared(feature(kBuf, k), ks, i);
      });
      kb.forLoop(tid, kb.idx(chunk * dvTile), cT, [&](Value i) {
        Value t = kb.divU(i, cDT), d = kb.remU(i, cDT);
        Value col = kb.add(colBase, d);
        Value valid = arith::AndIOp::create(rewriter, loc, kb.ult(t, count),
                                            kb.ult(col, dv));
        Value row = kb.add(kb.mul(batch, n), tokenAt(kb.add(t0, t)));
        storeShared(kb.loadIf(valid, vBuf, kb.add(kb.mul(row, dv), col)), vs,
                    i);
      });
      kb.barrier();

      // Phase 2: this warp's 16 rows of tril(φ(Q_c)φ(K_c)ᵀ), their row sums
      // in f32, the denominators; the carried state to shared memory.
      Value r0 = kb.mul(warp, kb.idx(16));
      Value sumLo = kb.fconst(0.0), sumHi = kb.fconst(0.0);
      for (int64_t j = 0; j < chunk / 8; ++j) {
        Value n0 = kb.idx(8 * j);
        SmallVector<Value> acc(4, kb.fconst(0.0));
        for (int64_t f0 = 0; f0 < features; f0 += 16)
          acc = mb.mma(qAt, kTransposedAt, r0, kb.idx(f0), n0, acc);
        for (int64_t i = 0; i < 4; ++i) {
          auto [row, col] = mb.position(r0, n0, i);
          Value causal = arith::CmpIOp::create(
              rewriter, loc, arith::CmpIPredicate::ule, col, row);
          Value masked = kb.select(causal, acc[i], kb.fconst(0.0));
          storeShared(masked, ps, kb.add(kb.mul(row, cC), col));
          if (i < 2)
            sumLo = kb.fadd(sumLo, masked);
          else
            sumHi = kb.fadd(sumHi, masked);
        }
      }
      Value denLo, denHi;
      if (normalized) {
        // φ(q_t)ᵀ z_prev, four lanes per row, then the sums over the quad.
        Value rowLo = kb.add(r0, mb.group);
        Value rowHi = kb.add(rowLo, kb.idx(8));
        Value quadLane = kb.remU(lane, kb.idx(4));
        for (int64_t f = 0; f < features; f += 4) {
          Value feature = kb.add(kb.idx(f), quadLane);
          Value z = loadShared(zs, feature);
          sumLo = kb.fma(
              convertFloat(rewriter, loc, qAt(rowLo, feature), stateType), z,
              sumLo);
          sumHi = kb.fma(
              convertFloat(rewriter, loc, qAt(rowHi, feature), stateType), z,
              sumHi);
        }
        Value width = arith::ConstantIntOp::create(rewriter, loc, 32, 32);
        for (int64_t offset : {1, 2}) {
          Value o = arith::ConstantIntOp::create(rewriter, loc, offset, 32);
          sumLo = kb.fadd(sumLo,
                          gpu::ShuffleOp::create(rewriter, loc, sumLo, o, width,
                                                 gpu::ShuffleMode::XOR)
                              .getShuffleResult());
          sumHi = kb.fadd(sumHi,
                          gpu::ShuffleOp::create(rewriter, loc, sumHi, o, width,
                                                 gpu::ShuffleMode::XOR)
                              .getShuffleResult());
        }
        denLo = kb.fadd(sumLo, kb.fconst(eps));
        denHi = kb.fadd(sumHi, kb.fconst(eps));
      }
      {
        unsigned s = 0;
        for (int64_t fi = 0; fi < fTiles; ++fi)
          for (int64_t j = 0; j < nTilesPerWarp; ++j) {
            auto [sr0, n0] = stateTile(fi, j);
            for (int64_t i = 0; i < 4; ++i) {
              auto [f, c] = mb.position(sr0, n0, i);
              storeShared(carried[s++], ss, kb.add(kb.mul(f, cDT), c));
            }
          }
      }
      kb.barrier();

      // Phase 3: O_c = tril(φ(Q_c)φ(K_c)ᵀ) V_c + φ(Q_c) S_prev for this
      // warp's rows, divided by the denominators.
      for (int64_t j = 0; j < dvTile / 8; ++j) {
        Value n0 = kb.idx(8 * j);
        SmallVector<Value> acc(4, kb.fconst(0.0));
        for (int64_t t = 0; t < chunk; t += 16)
          acc = mb.mma(pAt, vAt, r0, kb.idx(t), n0, acc);
        for (int64_t f0 = 0; f0 < features; f0 += 16)
          acc = mb.mma(qAt, sAt, r0, kb.idx(f0), n0, acc);
        for (int64_t i = 0; i < 4; ++i) {
          auto [tok, c] = mb.position(r0, n0, i);
          Value t = tok;
          Value value = acc[i];
          if (normalized)
            value = kb.fdiv(value, i < 2 ? denLo : denHi);
          Value col = kb.add(colBase, c);
          Value valid = arith::AndIOp::create(rewriter, loc, kb.ult(t, count),
                                              kb.ult(col, dv));
          kb.ifThen(valid, [&] {
            Value row = kb.add(kb.mul(batch, n), tokenAt(kb.add(t0, t)));
            kb.store(value, oBuf, kb.add(kb.mul(row, dv), col));
          });
        }
      }
      // S += φ(K_c)ᵀ V_c in the fragments; z += Σ φ(k_t).
      SmallVector<Value> next;
      {
        unsigned s = 0;
        for (int64_t fi = 0; fi < fTiles; ++fi)
          for (int64_t j = 0; j < nTilesPerWarp; ++j) {
            auto [sr0, n0] = stateTile(fi, j);
            SmallVector<Value> acc(carried.begin() + s,
                                   carried.begin() + s + 4);
            s += 4;
            for (int64_t t = 0; t < chunk; t += 16)
              acc = mb.mma(kTransposedAt, vAt, sr0, kb.idx(t), n0, acc);
            llvm::append_range(next, acc);
          }
      }
      kb.forLoop(tid, cF, cT, [&](Value f) {
        Value z0 = loadShared(zs, f);
        Value z = kb.forLoop(c0, count, c1, ValueRange{z0},
                             [&](Value t, ValueRange zc) -> SmallVector<Value> {
                               Value kf = convertFloat(rewriter, loc, kAt(t, f),
                                                       stateType);
                               return {kb.fadd(zc[0], kf)};
                             })[0];
        memref::StoreOp::create(rewriter, loc, z, zs, ValueRange{f});
      });
      return next;
    });

    // The final state and normalizer.
    {
      unsigned s = 0;
      for (int64_t fi = 0; fi < fTiles; ++fi)
        for (int64_t j = 0; j < nTilesPerWarp; ++j) {
          auto [r0, n0] = stateTile(fi, j);
          for (int64_t i = 0; i < 4; ++i) {
            auto [feature, c] = mb.position(r0, n0, i);
            Value f = feature;
            Value col = kb.add(colBase, c);
            Value value = state[s++];
            kb.ifThen(kb.ult(col, dv),
                      [&] { kb.store(value, sBuf, stateIndex(f, col)); });
          }
        }
    }
    kb.barrier();
    kb.ifThen(kb.eq(kb.blockId(gpu::Dimension::y), c0), [&] {
      kb.forLoop(tid, cF, cT, [&](Value f) {
        kb.store(loadShared(zs, f), zBuf, kb.add(stateBase, f));
      });
    });
  }

  // The launch: grid (batch, value tiles), four warps or fewer.
  launchScan(op, kernel, q.tensor, k.tensor, features, dvTile, threads);
  return std::nullopt;
}
