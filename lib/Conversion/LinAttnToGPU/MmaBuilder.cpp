//===- MmaBuilder.cpp - tensor-core fragments of shared tiles -------------===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//

#include "MmaBuilder.h"

using namespace mlir;
using namespace mlir::linattn;
using namespace mlir::linattn::gpukernels;

Value gpukernels::swizzledIndex(KernelBuilder &kb, int64_t rows, Value row,
                                Value col) {
  constexpr int64_t perRow = kSwizzleBytes / 2, perChunk = 8;
  Value block = kb.divU(col, kb.idx(perRow));
  Value within = kb.remU(col, kb.idx(perRow));
  Value chunk = arith::XOrIOp::create(
      kb.b, kb.loc, kb.divU(within, kb.idx(perChunk)), kb.remU(row, kb.idx(8)));
  return kb.add(
      kb.add(kb.mul(block, kb.idx(rows * perRow)), kb.mul(row, kb.idx(perRow))),
      kb.add(kb.mul(chunk, kb.idx(perChunk)),
             kb.remU(within, kb.idx(perChunk))));
}

Value gpukernels::unitSwizzledColumn(KernelBuilder &kb, Value row, Value col) {
  Value h = kb.add(kb.mul(kb.remU(row, kb.idx(4)), kb.idx(2)),
                   kb.remU(kb.divU(row, kb.idx(4)), kb.idx(2)));
  return arith::XOrIOp::create(kb.b, kb.loc, col, kb.mul(h, kb.idx(4)));
}

Value gpukernels::sharedIndex(KernelBuilder &kb, const SharedMatrix &m,
                              Value row, Value col) {
  if (m.unitSwizzle)
    return kb.add(m.base, kb.add(kb.mul(row, kb.idx(m.ld)),
                                 unitSwizzledColumn(kb, row, col)));
  if (m.swizzleRows)
    return kb.add(m.base, swizzledIndex(kb, m.swizzleRows, row, col));
  return kb.add(m.base, kb.add(kb.mul(row, kb.idx(m.ld)), col));
}

/// The element of stored (r0 + laneRow, k0 + laneCol) of `m`, laneRow =
/// matrixRow + rowOff, for a lane's ldmatrix row: r0 and k0 are the tile's
/// origin (multiples of 8; k0's 16-byte chunk even where laneCol is 8),
/// laneRow and laneCol the lane's offsets (laneCol 0 or 8). Swizzled, the
/// chunk is k0's chunk XOR (laneCol's chunk XOR laneRow mod 8): the lane's
/// part is the same for every tile, so each address is one XOR of a
/// per-lane value with a constant (where the general `swizzledIndex` of
/// every address keeps a register each once hoisted out of the chunk loop).
static Value sharedTileIndex(KernelBuilder &kb, const SharedMatrix &m, Value r0,
                             Value matrixRow, Value rowOff, Value k0,
                             Value laneCol) {
  if (!m.swizzleRows)
    return sharedIndex(kb, m, kb.add(kb.add(r0, matrixRow), rowOff),
                       kb.add(k0, laneCol));
  Value laneRow = kb.add(matrixRow, rowOff);
  constexpr int64_t perRow = kSwizzleBytes / 2, perChunk = 8;
  Value lanePart =
      arith::XOrIOp::create(kb.b, kb.loc, kb.divU(laneCol, kb.idx(perChunk)),
                            kb.remU(laneRow, kb.idx(8)));
  Value chunk = arith::XOrIOp::create(
      kb.b, kb.loc, kb.divU(kb.remU(k0, kb.idx(perRow)), kb.idx(perChunk)),
      lanePart);
  Value block = kb.divU(k0, kb.idx(perRow));
  return kb.add(m.base,
                kb.add(kb.add(kb.mul(block, kb.idx(m.swizzleRows * perRow)),
                              kb.mul(kb.add(r0, laneRow), kb.idx(perRow))),
                       kb.add(kb.mul(chunk, kb.idx(perChunk)),
                              kb.remU(laneCol, kb.idx(perChunk)))));
}
MmaBuilder::MmaBuilder(KernelBuilder &kb, Type dataType, bool splitTF32,
                       Value lane)
    : kb(kb), b(kb.b), loc(kb.loc), dataType(dataType), splitTF32(splitTF32) {
  group = kb.divU(lane, kb.idx(4));
  quad = kb.remU(lane, kb.idx(4));
  pair = kb.mul(quad, kb.idx(2));
  matrix = kb.divU(lane, kb.idx(8));
  matrixRow = kb.remU(lane, kb.idx(8));
}

SmallVector<Value> MmaBuilder::fragmentA(const SharedMatrix &a, Value r0,
                                         Value k0) {
  // Matrix i of an x4 ldmatrix: rows +8·(i % 2), columns +16 bytes·(i / 2)
  // of A.
  Value rowOff = kb.mul(kb.remU(matrix, kb.idx(2)), kb.idx(8));
  Value colOff = kb.mul(kb.divU(matrix, kb.idx(2)), kb.idx(rowElements()));
  if (a.rowMajor)
    return ldmatrix(a, r0, matrixRow, rowOff, k0, colOff,
                    /*transpose=*/false, 4);
  if (!isTF32())
    // Stored as Aᵀ: matrix i holds rows k0 + 8·(i / 2) .. of the tile.
    return ldmatrix(a, k0, matrixRow, colOff, r0, rowOff,
                    /*transpose=*/true, 4);
  Value rowLo = kb.add(r0, group), rowHi = kb.add(rowLo, kb.idx(8));
  Value kLo = kb.add(k0, quad), kHi = kb.add(kLo, kb.idx(4));
  return {gather(a, rowLo, kLo), gather(a, rowHi, kLo), gather(a, rowLo, kHi),
          gather(a, rowHi, kHi)};
}

SmallVector<Value> MmaBuilder::fragmentsB(const SharedMatrix &bm, Value k0,
                                          Value n0, int64_t count) {
  // An x4 ldmatrix reads both tiles (matrix i: k +16 bytes·(i % 2), n +8·
  // (i / 2)), an x2 one (lanes 0..15 address it) one tile.
  Value m = count == 2 ? matrix : kb.remU(matrix, kb.idx(2));
  Value kOff = kb.remU(m, kb.idx(2));
  Value nOff = kb.mul(kb.divU(m, kb.idx(2)), kb.idx(8));
  if (!bm.rowMajor)
    // Stored as Bᵀ (n rows of k): what the mma's col layout reads.
    return ldmatrix(bm, n0, matrixRow, nOff, k0,
                    kb.mul(kOff, kb.idx(rowElements())),
                    /*transpose=*/false, 2 * count);
  if (!isTF32())
    return ldmatrix(bm, k0, matrixRow, kb.mul(kOff, kb.idx(8)), n0, nOff,
                    /*transpose=*/true, 2 * count);
  SmallVector<Value> regs;
  for (int64_t j = 0; j < count; ++j) {
    Value col = kb.add(kb.add(n0, kb.idx(8 * j)), group);
    Value kLo = kb.add(k0, quad);
    regs.push_back(gather(bm, kLo, col));
    regs.push_back(gather(bm, kb.add(kLo, kb.idx(4)), col));
  }
  return regs;
}

SmallVector<Value> MmaBuilder::mma(ArrayRef<Value> aRegs, ArrayRef<Value> bRegs,
                                   ValueRange acc) {
  if (!splitTF32)
    return product(aRegs, bRegs, acc);
  SmallVector<Value> aHi, aLo, bHi, bLo;
  for (Value reg : aRegs) {
    auto [hi, lo] = split(reg);
    aHi.push_back(hi);
    aLo.push_back(lo);
  }
  for (Value reg : bRegs) {
    auto [hi, lo] = split(reg);
    bHi.push_back(hi);
    bLo.push_back(lo);
  }
  SmallVector<Value> sum = product(aLo, bHi, acc);
  sum = product(aHi, bLo, sum);
  return product(aHi, bHi, sum);
}

SmallVector<std::pair<Value, Value>>
MmaBuilder::elementsA(ArrayRef<Value> aRegs, int64_t i) {
  Type f32 = b.getF32Type();
  Value column = kb.add(isTF32() ? quad : pair, kb.idx(kStep() / 2 * (i / 2)));
  if (isTF32())
    return {{arith::BitcastOp::create(b, loc, f32, aRegs[i]), column}};
  Value pairValue = aRegs[i];
  if (!dataType.isF16()) {
    Value word = vector::BroadcastOp::create(
        b, loc, VectorType::get({1}, b.getI32Type()), pairValue);
    pairValue =
        vector::BitCastOp::create(b, loc, VectorType::get({2}, dataType), word);
  }
  SmallVector<std::pair<Value, Value>> elements;
  for (int64_t e = 0; e < 2; ++e) {
    Value element =
        vector::ExtractOp::create(b, loc, pairValue, ArrayRef<int64_t>{e});
    elements.push_back({arith::ExtFOp::create(b, loc, f32, element),
                        e ? kb.add(column, kb.idx(1)) : column});
  }
  return elements;
}

std::pair<Value, Value> MmaBuilder::position(Value r0, Value n0, int64_t i) {
  Value row = kb.add(r0, group);
  if (i >= 2)
    row = kb.add(row, kb.idx(8));
  Value col = kb.add(n0, pair);
  if (i % 2)
    col = kb.add(col, kb.idx(1));
  return {row, col};
}

Value MmaBuilder::registerA(Value lo, Value hi) {
  Type f32 = b.getF32Type();
  Value pair = vector::FromElementsOp::create(b, loc, VectorType::get({2}, f32),
                                              ValueRange{lo, hi});
  return toRegister(
      arith::TruncFOp::create(b, loc, VectorType::get({2}, dataType), pair));
}

SmallVector<Value> MmaBuilder::product(ArrayRef<Value> aRegs,
                                       ArrayRef<Value> bRegs, ValueRange acc) {
  NVVM::MMATypes ptxType = isTF32()            ? NVVM::MMATypes::tf32
                           : dataType.isBF16() ? NVVM::MMATypes::bf16
                                               : NVVM::MMATypes::f16;
  Type f32 = b.getF32Type();
  auto resultType = LLVM::LLVMStructType::getLiteral(b.getContext(),
                                                     SmallVector<Type>(4, f32));
  auto op = NVVM::MmaOp::create(
      b, loc, resultType, aRegs, bRegs, acc, {16, 8, kStep()},
      /*b1Op=*/std::nullopt, /*intOverflow=*/std::nullopt,
      std::array<NVVM::MMATypes, 2>{ptxType, ptxType},
      std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                     NVVM::MMALayout::col});
  SmallVector<Value> result;
  for (int64_t i = 0; i < 4; ++i)
    result.push_back(LLVM::ExtractValueOp::create(b, loc, op.getRes(), i));
  return result;
}

std::pair<Value, Value> MmaBuilder::split(Value bits) {
  Type i32 = b.getI32Type(), f32 = b.getF32Type();
  auto constant = [&](uint32_t value) {
    return arith::ConstantIntOp::create(b, loc, i32,
                                        static_cast<int32_t>(value));
  };
  Value hi = arith::AndIOp::create(
      b, loc, arith::AddIOp::create(b, loc, bits, constant(0x1000)),
      constant(0xffffe000));
  Value rest =
      arith::SubFOp::create(b, loc, arith::BitcastOp::create(b, loc, f32, bits),
                            arith::BitcastOp::create(b, loc, f32, hi));
  Value lo = arith::BitcastOp::create(b, loc, i32, rest);
  return {hi, lo};
}

SmallVector<Value> MmaBuilder::ldmatrix(const SharedMatrix &m, Value r0,
                                        Value matrixRow, Value rowOff, Value k0,
                                        Value laneCol, bool transpose,
                                        int64_t count) {
  Value index = sharedTileIndex(kb, m, r0, matrixRow, rowOff, k0, laneCol);
  int64_t perRegister = isTF32() ? 1 : 2;
  auto type = VectorType::get({count, perRegister}, dataType);
  Value tiles =
      nvgpu::LdMatrixOp::create(b, loc, type, m.buffer, ValueRange{index},
                                transpose, static_cast<uint32_t>(count));
  SmallVector<Value> regs;
  for (int64_t i = 0; i < count; ++i) {
    Value reg = vector::ExtractOp::create(b, loc, tiles, ArrayRef<int64_t>{i});
    regs.push_back(toRegister(reg));
  }
  return regs;
}

Value MmaBuilder::toRegister(Value elements) {
  if (dataType.isF16())
    return elements;
  auto i32x1 = VectorType::get({1}, b.getI32Type());
  Value cast = vector::BitCastOp::create(b, loc, i32x1, elements);
  return vector::ExtractOp::create(b, loc, cast, ArrayRef<int64_t>{0});
}

Value MmaBuilder::gather(const SharedMatrix &m, Value i, Value j) {
  Value index =
      m.rowMajor ? sharedIndex(kb, m, i, j) : sharedIndex(kb, m, j, i);
  Value value = memref::LoadOp::create(b, loc, m.buffer, ValueRange{index});
  return arith::BitcastOp::create(b, loc, b.getI32Type(), value);
}
