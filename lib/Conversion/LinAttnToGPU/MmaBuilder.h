//===- MmaBuilder.h - tensor-core fragments of shared tiles -----*- C++ -*-===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//
//
// The warp-level tensor-core products of the chunked kernels: shared tiles
// as matrices (padded rows, or wgmma's 128-byte swizzle), their fragments
// loaded by ldmatrix or gathered, and mma.sync on them with f32
// accumulators. Internal to the conversion.
//
//===----------------------------------------------------------------------===//

#ifndef LINATTN_LIB_CONVERSION_LINATTNTOGPU_MMABUILDER_H
#define LINATTN_LIB_CONVERSION_LINATTNTOGPU_MMABUILDER_H

#include "KernelBuilders.h"

namespace mlir::linattn::gpukernels {

/// Bytes of a row of the 128-byte swizzle (wgmma's canonical layout).
inline constexpr int64_t kSwizzleBytes = 128;

/// A matrix in a shared tile: element (i, j) at row i, column j of the
/// stored tile (row major) or at row j, column i (column major). A stored
/// (row, column) is at buffer[base + row·ld + column], rows 16-byte
/// aligned (the buffer by its alignment, `base` and `ld` by padding) so
/// that ldmatrix can read them; or, with `swizzleRows` (the rows of the
/// tile), in wgmma's 128-byte swizzled K-major layout (`swizzledIndex`); or,
/// with `unitSwizzle`, unpadded f32 rows (`ld` a multiple of 32) whose
/// 16-byte units are permuted (`unitSwizzledColumn`).
struct SharedMatrix {
  Value buffer;
  int64_t ld;
  bool rowMajor;
  /// The tile's first element: its slot of a double-buffered tile.
  Value base;
  int64_t swizzleRows = 0;
  bool unitSwizzle = false;
};

/// Where (row, col) of a tile of `rows` rows of 16-bit elements lies in
/// the 128-byte swizzled layout: columns in blocks of 64 (128 bytes), the
/// block of each row of the tile together (rows 128 bytes apart, block b
/// at b·rows·64), and in each row the 16-byte chunk c at c XOR (row mod 8).
/// ldmatrix reads 8 rows of one chunk conflict-free, and wgmma reads it as
/// K-major with the 128-byte swizzle (stride byte offset 1024) when the
/// buffer is 1024-byte aligned.
Value swizzledIndex(KernelBuilder &kb, int64_t rows, Value row, Value col);

/// Where column `col` of row `row` of an f32 tile of whole 128-byte rows
/// lies in the unit swizzle: its 16-byte unit u of each 128-byte segment at
/// u XOR h, h = 2·(row mod 4) + (row div 4) mod 2. Without padding every
/// row's segment spans the 32 banks; h gives the four rows a tf32 B
/// fragment gathers (lane 4g + t: row k0 + t, column n0 + g) the units
/// {0, 2, 4, 6} XOR of their pair of units, and the rows a half-warp's
/// 8-byte accumulator stores cover (rows g and g + 8: two columns 2t, 2t +
/// 1 each) likewise, and the eight rows an ldmatrix phase reads at one unit
/// eight distinct ones: each conflict-free. A 16-byte unit stays whole.
Value unitSwizzledColumn(KernelBuilder &kb, Value row, Value col);

/// The element of stored (row, col) of `m`.
Value sharedIndex(KernelBuilder &kb, const SharedMatrix &m, Value row,
                  Value col);

/// Tensor-core products with f32 accumulators on fragments of shared tiles:
/// m16n8k16 of f16/bf16 operands, m16n8k8 of tf32 operands (f32 data already
/// rounded to tf32, passed as i32; with `splitTF32` f32 data as it is, each
/// product taken as three, see `mma`). Fragments are loaded with ldmatrix
/// (the transposing form for 16-bit operands stored the other way round);
/// tf32 operands ldmatrix cannot transpose are gathered element by element.
class MmaBuilder {
public:
  MmaBuilder(KernelBuilder &kb, Type dataType, bool splitTF32, Value lane);

  bool isTF32() const { return dataType.isF32(); }
  /// The k extent of one product: 16, or 8 for tf32.
  int64_t kStep() const { return isTF32() ? 8 : 16; }

  /// The A fragment (4 registers) of the 16 x kStep() tile of `a` at
  /// (r0, k0).
  SmallVector<Value> fragmentA(const SharedMatrix &a, Value r0, Value k0);

  /// The B fragments (2 registers each) of the kStep() x 8 tiles of `bm` at
  /// (k0, n0) and, with `count` 2, (k0, n0 + 8).
  SmallVector<Value> fragmentsB(const SharedMatrix &bm, Value k0, Value n0,
                                int64_t count);

  /// acc + A·B of one A fragment and one B fragment, `acc` and the result in
  /// the accumulator layout (rows g and g+8, columns 2t and 2t+1 of lane
  /// 4g+t).
  ///
  /// With `splitTF32` the f32 operands are split into tf32 high and low
  /// parts, x = hi + lo (`split`), and A·B is taken as lo_A·hi_B +
  /// hi_A·lo_B + hi_A·hi_B, the small products first: the dropped lo_A·lo_B
  /// (below 2^-22 of the product) and the low parts' truncation (2^-21 of
  /// each operand) leave each product within about 2^-20, where one tf32
  /// product errs by up to 2^-10. The three instructions round `acc`
  /// toward zero three times (the tensor cores' rounding): a state carried
  /// through them chunk after chunk drifts, which the chunk kernels avoid
  /// by summing each chunk's products from zero (`accumulateState`). On the
  /// emulator, which models that rounding, the scans err by 2.6e-7 to
  /// 2.6e-6 of max|O| up to 16384 tokens, the strict-f32 recurrent scan by
  /// 3e-7 to 1.1e-6 and one tf32 product a step by 3e-4 to 7e-4
  /// (docs/Rationale.md).
  SmallVector<Value> mma(ArrayRef<Value> aRegs, ArrayRef<Value> bRegs,
                         ValueRange acc);

  /// The elements of A fragment register `i` (0..3) in f32, with their
  /// columns past the tile's k0: register i holds row g + 8·(i % 2) of the
  /// fragment, columns kStep()/2·(i / 2) + 2t and the next (16-bit), or
  /// kStep()/2·(i / 2) + t (tf32).
  SmallVector<std::pair<Value, Value>> elementsA(ArrayRef<Value> aRegs,
                                                 int64_t i);

  /// Row and column of accumulator element `i` (0..3) of the tile at
  /// (r0, n0).
  std::pair<Value, Value> position(Value r0, Value n0, int64_t i);

  /// The 16-bit operand register of two f32 values, each rounded to the
  /// data type (one cvt.rn of the pair): `lo` the element of the lower
  /// column.
  Value registerA(Value lo, Value hi);

  /// This lane's place in the accumulator layout: group lane / 4, quad
  /// lane % 4, and pair 2·quad, its first column.
  Value group, quad, pair;

private:
  /// acc + A·B, one mma.sync.
  SmallVector<Value> product(ArrayRef<Value> aRegs, ArrayRef<Value> bRegs,
                             ValueRange acc);

  /// The tf32 parts of the f32 operand register `bits` (`splitTF32`): hi,
  /// the value rounded at mantissa bit 13 to nearest, ties away from zero
  /// (what cvt.rna.tf32.f32 gives finite values, in two integer
  /// instructions), and lo = x - hi, exact in f32, whose low bits the tensor
  /// cores drop (|lo| is at most half hi's last place, so what they keep of
  /// it is within 2^-21 of x; rounding it too measured no better). Made for
  /// each product: splitting a fragment once, where it is loaded, kept both
  /// parts live across its products and made ptxas spill more (the F = 64
  /// normalized chunk loop: 60 bytes instead of 32) for more instructions.
  std::pair<Value, Value> split(Value bits);

  /// Elements in the 16 bytes of one ldmatrix row.
  int64_t rowElements() const { return isTF32() ? 4 : 8; }

  /// An ldmatrix of `count` 8x8 b16 matrices, this lane addressing row
  /// (r0 + matrixRow + rowOff, k0 + laneCol) of the stored tile
  /// (`sharedTileIndex`); returns the registers as the mma takes them.
  SmallVector<Value> ldmatrix(const SharedMatrix &m, Value r0, Value matrixRow,
                              Value rowOff, Value k0, Value laneCol,
                              bool transpose, int64_t count);

  /// One 32-bit operand register from a vector of its elements: f16 pairs
  /// stay vector<2xf16>, bf16 pairs and tf32 values go as i32.
  Value toRegister(Value elements);

  /// Element (i, j) of a tf32 matrix as an i32 register.
  Value gather(const SharedMatrix &m, Value i, Value j);

  KernelBuilder &kb;
  OpBuilder &b;
  Location loc;
  Type dataType;
  bool splitTF32;
  /// This lane's ldmatrix row address: matrix lane / 8, row lane % 8.
  Value matrix, matrixRow;
};

} // namespace mlir::linattn::gpukernels

#endif // LINATTN_LIB_CONVERSION_LINATTNTOGPU_MMABUILDER_H
