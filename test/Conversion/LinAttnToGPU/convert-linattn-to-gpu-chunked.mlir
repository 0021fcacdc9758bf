// RUN: linattn-opt %s --convert-linattn-to-gpu="sequence-parallel-blocks=0 async-copies=false wgmma=false narrow-offset-limit=2147483648" --canonicalize --cse -split-input-file | FileCheck %s
// RUN: linattn-opt %s --convert-linattn-to-gpu="async-copies=false wgmma=false narrow-offset-limit=2147483648 small-grid-value-tile=0" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=SEQ
// RUN: linattn-opt %s --convert-linattn-to-gpu="scan-kernel=recurrent wgmma=false narrow-offset-limit=2147483648" -split-input-file | FileCheck %s --check-prefix=RECURRENT
// RUN: linattn-opt %s --convert-linattn-to-gpu="chunk-size=32 sequence-parallel-blocks=0 async-copies=false wgmma=false narrow-offset-limit=2147483648" -split-input-file | FileCheck %s --check-prefix=C32
// RUN: linattn-opt %s --convert-linattn-to-gpu="tf32=true sequence-parallel-blocks=0 async-copies=false wgmma=false narrow-offset-limit=2147483648" -split-input-file | FileCheck %s --check-prefix=TF32
// RUN: linattn-opt %s --convert-linattn-to-gpu="sequence-parallel-blocks=0 wgmma=false narrow-offset-limit=2147483648" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=ASYNC
// RUN: linattn-opt %s --convert-linattn-to-gpu="tf32=true sequence-parallel-blocks=0 wgmma=false narrow-offset-limit=2147483648" -split-input-file | FileCheck %s --check-prefix=ASYNC-TF32
// RUN: linattn-opt %s --convert-linattn-to-gpu="value-tile=32 sequence-parallel-blocks=0 async-copies=false wgmma=false narrow-offset-limit=2147483648" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=VT32
// RUN: linattn-opt %s --convert-linattn-to-gpu="min-blocks-per-sm=4 async-copies=false wgmma=false narrow-offset-limit=2147483648 small-grid-value-tile=0" -split-input-file | FileCheck %s --check-prefix=MINBLOCKS
// RUN: not linattn-opt %s --convert-linattn-to-gpu="min-blocks-per-sm=33" -split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD-MINBLOCKS
// RUN: linattn-opt %s --convert-linattn-to-gpu="states-min-blocks-per-sm=0 async-copies=false wgmma=false narrow-offset-limit=2147483648 small-grid-value-tile=0" -split-input-file | FileCheck %s --check-prefix=STATES0
// RUN: linattn-opt %s --convert-linattn-to-gpu="states-min-blocks-per-sm=5 async-copies=false wgmma=false narrow-offset-limit=2147483648 small-grid-value-tile=0" -split-input-file | FileCheck %s --check-prefix=STATES5
// RUN: not linattn-opt %s --convert-linattn-to-gpu="states-min-blocks-per-sm=-2" -split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD-STATES-MINBLOCKS
// RUN: not linattn-opt %s --convert-linattn-to-gpu="value-tile=48" -split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD-TILE
// RUN: not linattn-opt %s --convert-linattn-to-gpu="scan-kernel=tiled" -split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD-KERNEL
// RUN: not linattn-opt %s --convert-linattn-to-gpu="chunk-size=48" -split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD-CHUNK
// RUN: not linattn-opt %s --convert-linattn-to-gpu="sequence-parallel-blocks=-1" -split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD-BLOCKS
// RUN: not linattn-opt %s --convert-linattn-to-gpu="sequence-parallel-blocks=2147483649" -split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD-BLOCKS
// RUN: linattn-opt %s --convert-linattn-to-gpu="async-copies=false wgmma=false narrow-offset-limit=2147483648 small-grid-value-tile=0 min-segment-tokens=0" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=MIN0
// RUN: not linattn-opt %s --convert-linattn-to-gpu="min-segment-tokens=-1" -split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD-MIN-SEGMENT
// RUN: linattn-opt %s --convert-linattn-to-gpu="sequence-parallel-blocks=0 async-copies=false wgmma=false narrow-offset-limit=2147483648" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=OFFSETS
// RUN: linattn-opt %s --convert-linattn-to-gpu="sequence-parallel-blocks=0 narrow-offset-limit=32768 async-copies=false wgmma=false" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=LIMIT
// RUN: linattn-opt %s --convert-linattn-to-gpu="sequence-parallel-blocks=0 narrow-offset-limit=16384 async-copies=false wgmma=false" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=SMALL
// RUN: linattn-opt %s --convert-linattn-to-gpu="sequence-parallel-blocks=0 narrow-offset-limit=0 async-copies=false wgmma=false" -split-input-file | FileCheck %s --check-prefix=WIDE --implicit-check-not=linattn_scan_chunked_forward --implicit-check-not=linattn_scan_segment
// RUN: not linattn-opt %s --convert-linattn-to-gpu="narrow-offset-limit=2147483649" -split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD-LIMIT
// RUN: not linattn-opt %s --convert-linattn-to-gpu="narrow-offset-limit=-1" -split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD-LIMIT
// RUN: linattn-opt %s --convert-linattn-to-gpu="tf32=true wgmma=false narrow-offset-limit=2147483648 small-grid-value-tile=0" -split-input-file | FileCheck %s --check-prefix=TF32-STATES
// The runs with segments keep the value tiles of 64 on their small grids
// (small-grid-value-tile=0: convert-linattn-to-gpu-small-grid.mlir has the
// narrower ones).

// A bf16 scan with an f32 state takes the chunked tensor-core kernel: four
// warps per (batch element, tile of 64 value columns), chunks of 64 tokens;
// φ(Q_c), φ(K_c), V_c, the masked scores and the state staged in shared
// memory as bf16 (rows of 64 padded to 72, 16-byte aligned), z in f32;
// fragments read with ldmatrix (transposed for V_c, S and φ(K_c) as the A
// of φ(K_c)ᵀV_c); the state fragments carried in registers across chunks.

// With async copies, φ(Q_c), φ(K_c) and V_c have two slots each (9216
// elements); the first chunk is issued before the loop, and each chunk
// issues the next one (cp.async of 8 elements, zero-filled past the
// sequence, bypassing L1) after a barrier, commits, waits for all groups but
// the newest, applies elu to the groups it copied and publishes the tiles
// with a barrier. Values whose rows are not 16-byte aligned are staged
// synchronously. elu + 1 is max(x, 0) + exp(min(x, 0)) on the group of eight
// bf16 (packed bf16x2 instructions in PTX); only the exp leaves bf16: each
// pair widens by a shift and a mask, and the eight results are rounded back
// as one vector. Groups past the sequence were zero-filled by their copies:
// their minimum is taken with -inf instead of 0 (exp gives +0, the feature
// 0), so a select of the bound replaces one of the features.
// ASYNC: gpu.func @linattn_scan_chunked_forward_elu_normalized_3(
// ASYNC-SAME: workgroup(%[[QS:.*]] : memref<9216xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %[[KS:.*]] : memref<9216xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %[[VS:.*]] : memref<9216xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<4608xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<4608xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<64xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}) kernel
// ASYNC: %[[BELOW:.*]] = arith.constant dense<0xFF80> : vector<8xbf16>
// ASYNC: nvgpu.device_async_copy %{{.*}}[%{{.*}}], %[[QS]][%{{.*}}], 8, %{{.*}} {bypassL1} : memref<?xbf16> to memref<9216xbf16, #gpu.address_space<workgroup>>
// ASYNC: nvgpu.device_async_copy %{{.*}}[%{{.*}}], %[[KS]][%{{.*}}], 8, %{{.*}} {bypassL1}
// ASYNC: nvgpu.device_async_copy %{{.*}}[%{{.*}}], %[[VS]][%{{.*}}], 8, %{{.*}} {bypassL1}
// ASYNC: } else {
// ASYNC: memref.load %{{.*}} : memref<?xbf16>
// ASYNC: nvvm.cp.async.commit.group
// ASYNC-NEXT: scf.for {{.*}} step %c64 iter_args(
// ASYNC: gpu.barrier
// ASYNC: nvgpu.device_async_copy %{{.*}}[%{{.*}}], %[[QS]][%{{.*}}], 8, %{{.*}} {bypassL1}
// ASYNC: nvvm.cp.async.commit.group
// ASYNC-NEXT: nvvm.cp.async.wait.group 1
// ASYNC: %[[VALID:.*]] = arith.cmpi ult, %{{.*}}, %{{.*}} : i32
// ASYNC: %[[GROUP:.*]] = vector.load %[[QS]][%[[AT:.*]]] {alignment = 16 : i64} : memref<9216xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// ASYNC-NEXT: %[[POSITIVE:.*]] = arith.maximumf %[[GROUP]], %[[ZEROS:.*]] : vector<8xbf16>
// ASYNC-NEXT: %[[BOUND:.*]] = arith.select %[[VALID]], %[[ZEROS]], %[[BELOW]] : vector<8xbf16>
// ASYNC-NEXT: %[[NEGATIVE:.*]] = arith.minimumf %[[GROUP]], %[[BOUND]] : vector<8xbf16>
// ASYNC-NEXT: %[[PAIRS:.*]] = vector.bitcast %[[NEGATIVE]] : vector<8xbf16> to vector<4xi32>
// ASYNC-NEXT: %[[PAIR:.*]] = vector.extract %[[PAIRS]][0] : i32 from vector<4xi32>
// ASYNC-NEXT: %[[LOW:.*]] = arith.shli %[[PAIR]], %c16_i32 : i32
// ASYNC-NEXT: %[[HIGH:.*]] = arith.andi %[[PAIR]], %c-65536_i32 : i32
// ASYNC-NEXT: arith.bitcast %[[LOW]] : i32 to f32
// ASYNC-NEXT: arith.bitcast %[[HIGH]] : i32 to f32
// ASYNC-NOT: math.exp
// ASYNC-COUNT-8: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// ASYNC-NEXT: %[[EXPS:.*]] = vector.from_elements {{.*}} : vector<8xf32>
// ASYNC-NEXT: %[[EXP:.*]] = arith.truncf %[[EXPS]] : vector<8xf32> to vector<8xbf16>
// ASYNC-NEXT: %[[FEATURES:.*]] = arith.addf %[[EXP]], %[[POSITIVE]] : vector<8xbf16>
// ASYNC-NEXT: vector.store %[[FEATURES]], %[[QS]][%[[AT]]] {alignment = 16 : i64}
// ASYNC: vector.load %[[KS]]
// ASYNC: vector.store %{{.*}}, %[[KS]]
// ASYNC: gpu.barrier
// ASYNC: nvgpu.ldmatrix %[[QS]]
// ASYNC-NOT: nvgpu.device_async_copy
// ASYNC: gpu.return
// CHECK-LABEL: func.func @chunked_bf16
//   CHECK-DAG: %[[C128:.*]] = arith.constant 128 : index
//   CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
//   CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
//       CHECK: call @__linattn_launch_linattn_scan_chunked_forward_elu_normalized_3(%[[C8]], %{{.*}}, %[[C1]], %[[C128]], %[[C1]], %[[C1]],

// The final state has no uses: the kernel takes q, k, v, O, N and Dv.
// CHECK: gpu.func @linattn_scan_chunked_forward_elu_normalized_3(
// CHECK-SAME: %{{.*}}: memref<?xbf16>, %{{.*}}: memref<?xbf16>, %{{.*}}: memref<?xbf16>, %{{.*}}: memref<?xbf16>, %{{.*}}: index, %{{.*}}: index)
// CHECK-SAME: workgroup(%{{.*}} : memref<4608xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<4608xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<4608xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<4608xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<4608xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<64xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}) kernel
// CHECK-SAME: attributes {known_block_size = array<i32: 128, 1, 1>}
// Staging loads 16 bytes at a time where q, k (and v, with Dv a multiple of
// 8) are 16-byte aligned, tested once per block; element by element if not.
// CHECK: %[[KP:.*]] = memref.extract_aligned_pointer_as_index %{{.*}} : memref<?xbf16> -> index
// CHECK: arith.remui %[[KP]], %c16
// CHECK: scf.for {{.*}} iter_args({{.*}}) -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32) {
// CHECK:   gpu.barrier
// CHECK:   scf.if
// CHECK:   vector.load %{{.*}} {alignment = 16 : i64} : memref<?xbf16>, vector<8xbf16>
// The features are rounded to bf16 before any use: exp is 2^(x·log2 e) by
// the special-function unit, not libdevice's expf, and a group's eight
// features are rounded as one vector as they are stored.
// CHECK-NOT: math.exp
// CHECK:   arith.mulf %{{.*}}, %cst{{.*}} : f32
// CHECK-NEXT: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"(%{{.*}}) : (f32) -> f32
// CHECK:   %[[GROUP:.*]] = vector.from_elements {{.*}} : vector<8xf32>
// CHECK-NEXT: %[[ROUNDED:.*]] = arith.truncf %[[GROUP]] : vector<8xf32> to vector<8xbf16>
// CHECK-NEXT: vector.store %[[ROUNDED]], %{{.*}} {alignment = 16 : i64} : memref<4608xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// CHECK:   } else {
// CHECK:   memref.load %{{.*}} : memref<?xbf16>
// CHECK:   llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// CHECK:   gpu.barrier
// CHECK:   nvgpu.ldmatrix %{{.*}} {numTiles = 4 : i32, transpose = false} : memref<4608xbf16, #gpu.address_space<workgroup>> -> vector<4x2xbf16>
// CHECK:   vector.bitcast {{.*}} : vector<2xbf16> to vector<1xi32>
// CHECK:   nvvm.mma.sync A[{{.*}}] {{.*}}{layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// The denominators take φ(Q_c) in the first key tiles' A fragments, each
// lane's z 8 bytes at a time, and are summed over the quad after the scores.
// CHECK:   vector.load %{{.*}} {alignment = 8 : i64} : memref<64xf32, #gpu.address_space<workgroup>>, vector<2xf32>
// CHECK:   arith.cmpi ule
// CHECK:   gpu.shuffle  xor
// CHECK:   gpu.barrier
// CHECK:   %[[INV:.*]] = arith.divf %{{.*}}, %{{.*}} : f32
// CHECK:   nvgpu.ldmatrix %{{.*}} {numTiles = 4 : i32, transpose = true}
// CHECK:   nvvm.mma.sync
// CHECK:   arith.mulf %{{.*}}, %[[INV]] : f32
// A lane's two values of a row are one 4-byte store where the output is
// 4-byte aligned and Dv even (tested once per block); one by one otherwise.
// Where both of the lane's rows are in the sequence and all of its pairs in
// Dv (tested once per chunk), a tile pair's four stores go unguarded.
// CHECK:   scf.if %[[WHOLE:.*]] {
// CHECK-COUNT-4: vector.store %{{.*}} {alignment = 4 : i64} : memref<?xbf16>, vector<2xbf16>
// CHECK-NEXT: } else {
// CHECK-NEXT: scf.if %{{.*}} {
// CHECK-NEXT: arith.cmpi ult
// CHECK-NEXT: arith.andi
// CHECK-NEXT: scf.if
// CHECK:   vector.store %{{.*}} {alignment = 4 : i64} : memref<?xbf16>, vector<2xbf16>
// CHECK:   } else {
// CHECK:   memref.store %{{.*}} : memref<?xbf16>
// The key sums: four lanes per pair of features, one 4-byte load of φ(K_c) a
// row (16 rows each), a butterfly over the four, one 8-byte update of z.
// CHECK-COUNT-16: vector.load %{{.*}} {alignment = 4 : i64} : memref<4608xbf16, #gpu.address_space<workgroup>>, vector<2xbf16>
// CHECK-NOT: vector.load %{{.*}} : memref<4608xbf16
// CHECK:   gpu.shuffle  xor %{{.*}}, %c2_i32
// CHECK:   vector.load %{{.*}} {alignment = 8 : i64} : memref<64xf32, #gpu.address_space<workgroup>>, vector<2xf32>
// CHECK:   vector.store %{{.*}} {alignment = 8 : i64} : memref<64xf32, #gpu.address_space<workgroup>>, vector<2xf32>
// CHECK:   scf.yield
// CHECK: gpu.return

// RECURRENT-LABEL: func.func @chunked_bf16
// RECURRENT: call @__linattn_launch_linattn_scan_forward_elu_normalized_0(
// RECURRENT-NOT: nvvm.mma.sync

// C32: call @__linattn_launch_linattn_scan_chunked_forward_elu_normalized_3(
// C32: workgroup(%{{.*}} : memref<2304xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}

// Value tiles of 32 columns (value-tile=32): twice the blocks in grid y,
// each with V_c and the state in tiles of 32 columns (64 × 40 elements) and
// the whole chunk's scores.
// VT32-LABEL: func.func @chunked_bf16
//       VT32: call @__linattn_launch_linattn_scan_chunked_forward_elu_normalized_3(%c8, %c2, %c1, %c128, %c1, %c1,
//       VT32: gpu.func @linattn_scan_chunked_forward_elu_normalized_3(
//  VT32-SAME: workgroup(%{{.*}} : memref<4608xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<4608xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<2560xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<4608xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<2560xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<64xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}) kernel

// min-blocks-per-sm=4: the chunk loops (batch-parallel and segment outputs)
// ask ptxas for registers that fit 4 blocks per SM; the segment states keep
// the bound of their accumulators (3, as above), the scan over them none.
// MINBLOCKS-LABEL: func.func @chunked_bf16
//       MINBLOCKS: gpu.func @linattn_scan_segment_states_forward_elu_normalized_0(
//  MINBLOCKS-SAME: kernel attributes {known_block_size = array<i32: 128, 1, 1>, nvvm.minctasm = 3 : i32} {
//       MINBLOCKS: gpu.func @linattn_scan_segment_prefix_forward_elu_normalized_1(
//  MINBLOCKS-SAME: kernel attributes {known_block_size = array<i32: 256, 1, 1>} {
//       MINBLOCKS: gpu.func @linattn_scan_segment_outputs_forward_elu_normalized_2(
//  MINBLOCKS-SAME: kernel attributes {known_block_size = array<i32: 128, 1, 1>, nvvm.minctasm = 4 : i32} {
//       MINBLOCKS: gpu.func @linattn_scan_chunked_forward_elu_normalized_3(
//  MINBLOCKS-SAME: kernel attributes {known_block_size = array<i32: 128, 1, 1>, nvvm.minctasm = 4 : i32} {

// BAD-KERNEL: scan-kernel must be 'chunked' or 'recurrent'
// states-min-blocks-per-sm: 0 leaves the segment states' registers to
// ptxas; a number asks for that many blocks, whatever the shape.
// STATES0-LABEL: func.func @chunked_bf16
//       STATES0: gpu.func @linattn_scan_segment_states_forward_elu_normalized_0(
//  STATES0-SAME: kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
// STATES5-LABEL: func.func @chunked_bf16
//       STATES5: gpu.func @linattn_scan_segment_states_forward_elu_normalized_0(
//  STATES5-SAME: kernel attributes {known_block_size = array<i32: 128, 1, 1>, nvvm.minctasm = 5 : i32} {
//       STATES5: gpu.func @linattn_scan_segment_outputs_forward_elu_normalized_2(
//  STATES5-SAME: kernel attributes {known_block_size = array<i32: 128, 1, 1>} {

// BAD-MINBLOCKS: min-blocks-per-sm must be between 0 and 32
// BAD-STATES-MINBLOCKS: states-min-blocks-per-sm must be between 0 and 32, or -1 (automatic)
// BAD-TILE: value-tile must be 8, 16, 32, 64 or 128
// BAD-CHUNK: chunk-size must be 16, 32 or 64
// BAD-BLOCKS: sequence-parallel-blocks must be between 0 and 2^31 (2147483648)
// BAD-MIN-SEGMENT: min-segment-tokens must not be negative
// BAD-LIMIT: narrow-offset-limit must be between 0 and 2^31 (2147483648)

// Offsets. The chunk loops address global memory by i32 offsets from the
// lowest row of their block's scan positions: with the sequence split into
// segments where a whole sequence (N + C + 2 rows of W = max(F, Dv, 128)
// elements) would not fit below 2^31, even with sequence-parallel-blocks=0.
// OFFSETS-LABEL: func.func @chunked_bf16
//       OFFSETS: %[[N:.*]] = tensor.dim %{{.*}}, %c2
//       OFFSETS: %[[ROWS:.*]] = arith.addi %[[N]], %c66 : index
//       OFFSETS: %[[WHOLE:.*]] = arith.cmpi ule, %[[ROWS]], %c16777216 : index
//       OFFSETS: scf.if
//       OFFSETS:   call @__linattn_launch_linattn_scan_segment_states_forward_elu_normalized_0(
//       OFFSETS: } else {
//       OFFSETS:   call @__linattn_launch_linattn_scan_chunked_forward_elu_normalized_3(
// The first element of the block's lowest row in q and k (batch · N + begin,
// times F) is computed once; in the chunk loop a token's offset from there
// is i32 arithmetic (its row times F plus the feature), bounds tests too,
// and a load takes the first element plus the offset's zero extension.
// OFFSETS-LABEL: gpu.func @linattn_scan_chunked_forward_elu_normalized_3(
//       OFFSETS: %[[BATCH:.*]] = gpu.block_id  x
//       OFFSETS: %[[FIRST:.*]] = arith.muli %[[BATCH]], %{{.*}} : index
//       OFFSETS: %[[FBASE:.*]] = arith.muli %[[FIRST]], %c64 : index
//       OFFSETS: scf.for
//       OFFSETS:   arith.cmpi ult, %{{.*}}, %{{.*}} : i32
//       OFFSETS:   %[[ROW:.*]] = arith.muli %{{.*}}, %c64_i32 : i32
//       OFFSETS:   %[[AT:.*]] = arith.addi %[[ROW]], %{{.*}} : i32
//       OFFSETS:   %[[OFF:.*]] = arith.index_castui %[[AT]] : i32 to index
//       OFFSETS:   %[[INDEX:.*]] = arith.addi %[[FBASE]], %[[OFF]] : index
//       OFFSETS:   vector.load %{{.*}}[%[[INDEX]]] {alignment = 16 : i64} : memref<?xbf16>, vector<8xbf16>
//       OFFSETS: gpu.return
// Static sizes that fit: one kernel, no segments.
// OFFSETS-LABEL: func.func @static_small_batch
//   OFFSETS-NOT: scf.if
//       OFFSETS: call @__linattn_launch_linattn_scan_chunked_forward_features_0(%c2, %c1, %c1,
// A dynamic Dv: the launch picks the kernels with 32-bit offsets where
// W ≤ 2^31 / (2C + 2) = 16519104 (segments of one chunk fit), the
// kernel with 64-bit offsets ("wide") beyond.
// OFFSETS-LABEL: func.func @dynamic_dv
//       OFFSETS: %[[W:.*]] = arith.maxui %{{.*}}, %c128 : index
//       OFFSETS: %[[FITS:.*]] = arith.cmpi ule, %[[W]], %c16519104 : index
//       OFFSETS: scf.if %[[FITS]]
//       OFFSETS:   call @__linattn_launch_linattn_scan_chunked_forward_features_3(
//       OFFSETS: } else {
//       OFFSETS:   call @__linattn_launch_linattn_scan_chunked_wide_forward_features_4(
//       OFFSETS: gpu.func @linattn_scan_chunked_wide_forward_features_4(
//   OFFSETS-NOT: arith.index_castui
//       OFFSETS: gpu.return
// A static Dv of 16.7M columns needs more blocks than CUDA's grid y holds
// (262144 of 64 columns; convert-linattn-to-gpu-invalid.mlir has the
// error): the op is left to the host.
// OFFSETS-LABEL: func.func @static_unlaunchable
//   OFFSETS-NOT: call
//       OFFSETS: linattn.scan forward

// narrow-offset-limit=32768: offsets span 32768 / 128 = 256 rows, so N =
// 1000 runs in segments of (256 - 66) / 64 = 2 chunks, 8 of them (7
// contributing: the final S and z are unused).
// LIMIT-LABEL: func.func @static_small_batch
//   LIMIT-NOT: scf.if
//       LIMIT: call @__linattn_launch_linattn_scan_segment_states_forward_features_0(%c2, %c1, %c7, {{.*}}, %c1000, %c64, %c2, %c8)

// narrow-offset-limit=16384: not even segments of one chunk fit (W = 128 >
// 16384 / 130), so a static Dv takes 64-bit offsets at compile time.
// SMALL-LABEL: func.func @static_small_batch
//   SMALL-NOT: scf.if
//       SMALL: call @__linattn_launch_linattn_scan_chunked_wide_forward_features_0(%c2, %c1, %c1,

// narrow-offset-limit=0: 64-bit offsets only, and no segments with
// sequence-parallel-blocks=0 (--implicit-check-not).
// WIDE-LABEL: func.func @chunked_bf16
//   WIDE-NOT: scf.if
//       WIDE: call @__linattn_launch_linattn_scan_chunked_wide_forward_elu_normalized_0(

// With the default target (264 blocks) and a dynamic sequence length, the
// segment count is computed at run time: batch x value tiles is 8 blocks, so
// min(ceil(264 / 8) = 33, chunks / 16) segments (none shorter than 1024
// tokens) of ceil(chunks / that) chunks,
// and the sequence-parallel side runs when there are two segments or more.
// It is three launches: the segments' contributions (grid batch x value
// tiles x segments), the scan over the segments (grid batch x element tiles
// of 256), the segments' outputs (grid as the contributions).
// SEQ-LABEL: func.func @chunked_bf16
//       SEQ: %[[N:.*]] = tensor.dim
//       SEQ: %[[CHUNKS:.*]] = arith.ceildivui %[[N]], %c64
//       SEQ: %[[MOST:.*]] = arith.divui %[[CHUNKS]], %c16
//       SEQ: %[[WANTED:.*]] = arith.minui %[[MOST]], %c33
//       SEQ: %[[SPLIT0:.*]] = arith.minui %[[WANTED]], %c65535
//       SEQ: %[[SPLIT:.*]] = arith.maxui %[[SPLIT0]], %c1
//       SEQ: %[[PER0:.*]] = arith.ceildivui %[[CHUNKS]], %[[SPLIT]]
//       SEQ: %[[PER:.*]] = arith.maxui %[[PER0]], %c1
//       SEQ: %[[SEGS0:.*]] = arith.ceildivui %[[CHUNKS]], %[[PER]]
//       SEQ: %[[SEGS:.*]] = arith.maxui %[[SEGS0]], %c1
// The chunk loops' 32-bit offsets (below) span at most 2^31 / 128 rows
// (W = max(F, Dv, 128) = 128): a block takes the whole sequence while
// N + C + 2 fits in that, segments of at most (2^31 / 128 - 66) / 64 =
// 262142 chunks beyond.
//       SEQ: %[[ROWS:.*]] = arith.addi %[[N]], %c66
//       SEQ: %[[WHOLE:.*]] = arith.cmpi ule, %[[ROWS]], %c16777216
//       SEQ: %[[LONGEST:.*]] = arith.minui %[[PER]], %c262142
//       SEQ: %[[BPER:.*]] = arith.select %[[WHOLE]], %[[PER]], %[[LONGEST]]
//       SEQ: %[[BSEGS0:.*]] = arith.ceildivui %[[CHUNKS]], %[[BPER]]
//       SEQ: %[[BSEGS1:.*]] = arith.maxui %[[BSEGS0]], %c1
//       SEQ: %[[BSEGS:.*]] = arith.select %[[WHOLE]], %[[SEGS]], %[[BSEGS1]]
//       SEQ: %[[SEVERAL:.*]] = arith.cmpi ugt, %[[BSEGS]], %c1
//       SEQ: scf.if %[[SEVERAL]]
// The final S and z are unused: the last segment contributes to nothing.
//       SEQ:   %[[CONTRIBUTING:.*]] = arith.subi %[[BSEGS]], %c1
//       SEQ:   call @__linattn_launch_linattn_scan_segment_states_forward_elu_normalized_0(%c8, %c1, %[[CONTRIBUTING]], %c128, %c1, %c1, {{.*}}, %[[N]], %c64, %[[BPER]], %[[BSEGS]])
//       SEQ:   call @__linattn_launch_linattn_scan_segment_prefix_forward_elu_normalized_1(%c8, %c16, %c1, %c256, %c1, %c1, {{.*}}, %c64, %[[BSEGS]])
//       SEQ:   call @__linattn_launch_linattn_scan_segment_outputs_forward_elu_normalized_2(%c8, %c1, %[[BSEGS]], %c128, %c1, %c1, {{.*}}, %[[N]], %c64, %[[BPER]], %[[BSEGS]])
//       SEQ: } else {
//       SEQ:   call @__linattn_launch_linattn_scan_chunked_forward_elu_normalized_3(%c8, %c1, %c1, %c128, %c1, %c1,
// The contributions: the keys and values of a segment's chunks, the sums in
// registers across chunks.
// SEQ-LABEL: gpu.func @linattn_scan_segment_states_forward_elu_normalized_0(
// SEQ-SAME: memref<?xbf16>, %{{.*}}: memref<?xbf16>, %{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index)
// SEQ-SAME: workgroup(%{{.*}} : memref<4608xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<4608xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}) kernel
// Registers for three blocks per SM: 64 × 64 accumulators over 128 threads
// and 104 registers beside them (mma.sync) fit 65536 / 3 / 128.
// SEQ-SAME: attributes {known_block_size = array<i32: 128, 1, 1>, nvvm.minctasm = 3 : i32}
// SEQ: scf.for {{.*}} iter_args({{.*}}) -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32) {
// SEQ: nvgpu.ldmatrix %{{.*}} {numTiles = 4 : i32, transpose = true}
// SEQ: nvvm.mma.sync
// SEQ: scf.yield
// The scan: f32 prefixes, no tensor cores; no final S and z (unused), so
// it stops at the last segment's prefix.
// SEQ-LABEL: gpu.func @linattn_scan_segment_prefix_forward_elu_normalized_1(
// SEQ-SAME: %{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: index, %{{.*}}: index)
// SEQ-SAME: kernel attributes {known_block_size = array<i32: 256, 1, 1>}
// SEQ-NOT: nvvm.mma.sync
// SEQ: scf.for
// The outputs: the chunk loop of the batch-parallel kernel over a segment,
// from the f32 state at its start.
// SEQ-LABEL: gpu.func @linattn_scan_segment_outputs_forward_elu_normalized_2(
// SEQ-SAME: %{{.*}}: memref<?xbf16>, %{{.*}}: memref<?xbf16>, %{{.*}}: memref<?xbf16>, %{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: memref<?xbf16>, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index)
// SEQ: memref.load %{{.*}} : memref<?xf32>
// SEQ: scf.for {{.*}} iter_args({{.*}}) -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32) {
// SEQ: nvvm.mma.sync
// SEQ: gpu.shuffle  xor
// SEQ: arith.divf
// SEQ: arith.mulf
// SEQ: scf.yield
// SEQ-NOT: memref.store %{{.*}} : memref<?xf32>
// SEQ: gpu.return

// SEQ-LABEL: func.func @chunked_f16_small
// SEQ: scf.if
// Unnormalized, with the final state unused: no kernel accumulates z.
// The segment states kernel sums no keys, and the segment prefix kernel
// writes only the segments' prefixes of S (in the loop over the segments
// but the last, then the last one's). The segment outputs
// kernel and the batch-parallel kernel keep no z in shared memory.
// SEQ-LABEL: gpu.func @linattn_scan_segment_states_reverse_features_0(
// SEQ-NOT: arith.addf
// SEQ: nvvm.mma.sync
// SEQ-NOT: arith.addf
// SEQ: gpu.return
// SEQ-LABEL: gpu.func @linattn_scan_segment_prefix_reverse_features_1(
// SEQ-COUNT-2: memref.store
// SEQ-NOT: memref.store
// SEQ: gpu.return
// SEQ-LABEL: gpu.func @linattn_scan_segment_outputs_reverse_features_2(
// SEQ-NOT: memref.{{load|store}} {{.*}} : memref<16xf32, #gpu.address_space<workgroup>>
// SEQ: gpu.return
// SEQ-LABEL: gpu.func @linattn_scan_chunked_reverse_features_3(
// SEQ-NOT: memref.{{load|store}} {{.*}} : memref<16xf32, #gpu.address_space<workgroup>>
// SEQ: gpu.return

func.func @chunked_bf16(%q: tensor<2x4x?x64xbf16>, %k: tensor<2x4x?x64xbf16>, %v: tensor<2x4x?x64xbf16>) -> tensor<2x4x?x64xbf16> {
  %fq = linattn.feature_map elu %q : tensor<2x4x?x64xbf16> -> tensor<2x4x?x64xbf16>
  %fk = linattn.feature_map elu %k : tensor<2x4x?x64xbf16> -> tensor<2x4x?x64xbf16>
  %o, %s, %z = linattn.scan forward %fq, %fk, %v normalize(eps = 1.0e-6) : tensor<2x4x?x64xbf16>, tensor<2x4x?x64xbf16>, tensor<2x4x?x64xbf16> -> tensor<2x4x?x64xbf16>, tensor<2x4x64x64xf32>, tensor<2x4x64xf32>
  return %o : tensor<2x4x?x64xbf16>
}

// -----

// f16 with F = 16: one warp, chunks of 16 tokens; no normalizer, so no
// shuffles.

// CHECK-LABEL: func.func @chunked_f16_small
// CHECK: call @__linattn_launch_linattn_scan_chunked_reverse_features_3(
// CHECK: gpu.func @linattn_scan_chunked_reverse_features_3(
// CHECK-NOT: gpu.shuffle
// CHECK: nvvm.mma.sync {{.*}} : (vector<2xf16>, vector<2xf16>, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK: gpu.return

// RECURRENT-LABEL: func.func @chunked_f16_small(
// RECURRENT-NOT: nvvm.mma.sync
// Unnormalized with the final state unused, the recurrent kernel keeps no
// normalizer and writes only O (argument 3).
// RECURRENT: gpu.func @linattn_scan_reverse_features_0(%{{.*}}: memref<?xf16>, %{{.*}}: memref<?xf16>, %{{.*}}: memref<?xf16>, %{{.*}}: memref<?xf16>, %{{.*}}: index, %{{.*}}: index)
// RECURRENT-NOT: memref.store {{.*}} : memref<?xf32>
// RECURRENT-NOT: memref.store {{.*}} : memref<16xf32, #gpu.address_space<workgroup>>
// RECURRENT: gpu.return

func.func @chunked_f16_small(%fq: tensor<3x?x16xf16>, %fk: tensor<3x?x16xf16>, %v: tensor<3x?x8xf16>) -> tensor<3x?x8xf16> {
  %o, %s, %z = linattn.scan reverse %fq, %fk, %v : tensor<3x?x16xf16>, tensor<3x?x16xf16>, tensor<3x?x8xf16> -> tensor<3x?x8xf16>, tensor<3x16x8xf32>, tensor<3x16xf32>
  return %o : tensor<3x?x8xf16>
}

// -----

// The same scan returning its final normalizer: the kernels take the final
// state (S is written, and dropped by the caller), the segment prefix kernel
// writes z, the batch-parallel kernel accumulates it in shared memory and
// writes it; the segment outputs kernel still keeps none.

// CHECK-LABEL: func.func @chunked_f16_small_normalizer
// CHECK: gpu.func @linattn_scan_chunked_reverse_features_3(
// CHECK: memref.store {{.*}} : memref<16xf32, #gpu.address_space<workgroup>>
// CHECK: gpu.return

// RECURRENT-LABEL: func.func @chunked_f16_small_normalizer
// RECURRENT: gpu.func @linattn_scan_reverse_features_0(
// RECURRENT: memref.store {{.*}}, %arg5[{{.*}}] : memref<?xf32>
// RECURRENT: gpu.return

// SEQ-LABEL: func.func @chunked_f16_small_normalizer
// SEQ-LABEL: gpu.func @linattn_scan_segment_prefix_reverse_features_1(
// SEQ-COUNT-4: memref.store
// SEQ: gpu.return
// SEQ-LABEL: gpu.func @linattn_scan_segment_outputs_reverse_features_2(
// SEQ-NOT: memref.{{load|store}} {{.*}} : memref<16xf32, #gpu.address_space<workgroup>>
// SEQ: gpu.return
// SEQ-LABEL: gpu.func @linattn_scan_chunked_reverse_features_3(
// SEQ: memref.store {{.*}} : memref<16xf32, #gpu.address_space<workgroup>>
// SEQ: gpu.return

func.func @chunked_f16_small_normalizer(%fq: tensor<3x?x16xf16>, %fk: tensor<3x?x16xf16>, %v: tensor<3x?x8xf16>) -> (tensor<3x?x8xf16>, tensor<3x16xf32>) {
  %o, %s, %z = linattn.scan reverse %fq, %fk, %v : tensor<3x?x16xf16>, tensor<3x?x16xf16>, tensor<3x?x8xf16> -> tensor<3x?x8xf16>, tensor<3x16x8xf32>, tensor<3x16xf32>
  return %o, %z : tensor<3x?x8xf16>, tensor<3x16xf32>
}

// -----

// What the chunked kernel does not take goes to the recurrent kernel: f32
// data, a bf16 state, feature sizes that are not a multiple of 16.

// CHECK-LABEL: func.func @negative_f32
// With tf32=true, f32 data takes the chunked kernel too: m16n8k8 tf32
// products on f32 tiles (F = 16: C = 64, four warps; rows padded by 4), the
// operands rounded to tf32 as they are staged. ldmatrix reads the fragments
// it can without transposing 32-bit elements (φ(Q_c), the scores, φ(K_c) as
// the B of the scores); the others are gathered from shared memory.
// With async copies (the default) f32 data is copied four elements (16
// bytes) at a time into two slots, as 16-bit data is; a copy cannot round,
// so once its copies have arrived each thread rounds its groups to tf32 in
// place before the barrier that publishes them. The second slots make the
// shared memory dynamic, where V_c's rows take the wider padding of the
// element-wise gathers (two slots of 64 rows of 32 + 8 floats).
// ASYNC-TF32: gpu.func @linattn_scan_chunked_forward_features_0(%{{[^:]*}}: memref<?xf32>
// ASYNC-TF32-SAME: workgroup(%{{.*}} : memref<2560xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}
// ASYNC-TF32: nvgpu.device_async_copy %{{.*}}[%{{.*}}], %{{.*}}[%{{.*}}], 4, %{{.*}} {bypassL1} : memref<?xf32> to memref<2560xf32, #gpu.address_space<workgroup>>
// ASYNC-TF32: nvvm.cp.async.commit.group
// ASYNC-TF32: scf.for
// ASYNC-TF32: nvvm.cp.async.wait.group 1
// ASYNC-TF32: %[[GROUP:.*]] = vector.load %{{.*}} {alignment = 16 : i64} : memref<5120xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// ASYNC-TF32: nvvm.convert.float.to.tf32 %{{.*}} {rnd = #nvvm.fp_rnd_mode<rna>}
// ASYNC-TF32: vector.store %{{.*}} {alignment = 16 : i64} : memref<5120xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// ASYNC-TF32: gpu.barrier
// ASYNC-TF32: nvvm.mma.sync
// ASYNC-TF32: gpu.return
// TF32-LABEL: func.func @negative_f32
// TF32: call @__linattn_launch_linattn_scan_chunked_forward_features_0(
// TF32-LABEL: func.func @negative_bf16_state
// TF32: call @__linattn_launch_linattn_scan_forward_features_1(
// TF32: gpu.func @linattn_scan_chunked_forward_features_0(
// TF32-SAME: workgroup(%{{.*}} : memref<1280xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}
// TF32: nvvm.convert.float.to.tf32 %{{.*}} {rnd = #nvvm.fp_rnd_mode<rna>}
// TF32: nvgpu.ldmatrix %{{.*}} {numTiles = 4 : i32, transpose = false} : memref<1280xf32, #gpu.address_space<workgroup>> -> vector<4x1xf32>
// TF32-NOT: transpose = true
// TF32: nvvm.mma.sync {{.*}}multiplicandAPtxType = #nvvm.mma_type<tf32>, multiplicandBPtxType = #nvvm.mma_type<tf32>, shape = #nvvm.shape<m = 16, n = 8, k = 8>} : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK: call @__linattn_launch_linattn_scan_forward_features_0(
// CHECK-LABEL: func.func @negative_bf16_state
// CHECK: call @__linattn_launch_linattn_scan_forward_features_1(
// CHECK-LABEL: func.func @negative_features_24
// CHECK: call @__linattn_launch_linattn_scan_forward_features_2(
// CHECK-NOT: nvvm.mma.sync

func.func @negative_f32(%fq: tensor<7x16xf32>, %fk: tensor<7x16xf32>, %v: tensor<7x8xf32>) -> tensor<7x8xf32> {
  %o, %s, %z = linattn.scan forward %fq, %fk, %v : tensor<7x16xf32>, tensor<7x16xf32>, tensor<7x8xf32> -> tensor<7x8xf32>, tensor<16x8xf32>, tensor<16xf32>
  return %o : tensor<7x8xf32>
}

func.func @negative_bf16_state(%fq: tensor<7x16xbf16>, %fk: tensor<7x16xbf16>, %v: tensor<7x8xbf16>) -> tensor<7x8xbf16> {
  %o, %s, %z = linattn.scan forward %fq, %fk, %v : tensor<7x16xbf16>, tensor<7x16xbf16>, tensor<7x8xbf16> -> tensor<7x8xbf16>, tensor<16x8xbf16>, tensor<16xbf16>
  return %o : tensor<7x8xbf16>
}

func.func @negative_features_24(%fq: tensor<7x24xbf16>, %fk: tensor<7x24xbf16>, %v: tensor<7x8xbf16>) -> tensor<7x8xbf16> {
  %o, %s, %z = linattn.scan forward %fq, %fk, %v : tensor<7x24xbf16>, tensor<7x24xbf16>, tensor<7x8xbf16> -> tensor<7x8xbf16>, tensor<24x8xf32>, tensor<24xf32>
  return %o : tensor<7x8xbf16>
}

// -----

// Static shapes decide at compile time. No segment is shorter than 1024
// tokens (16 chunks): 2 batch elements of 1000 tokens stay batch-parallel,
// and of 4000 tokens (63 chunks) split into 3 segments of 21 chunks,
// not the 132 that 264 / 2 asks for. 64 batch elements and 4096 tokens (64
// chunks) want ceil(264 / 64) = 5 segments and get 4, of 16 chunks. 300
// batch elements fill the GPU and one chunk of 64 tokens has nothing to
// split, so both take the batch-parallel kernel; so do 132, half the target
// (a block per SM), while 131 of 2048 tokens split into 2 segments
// (ceil(264 / 131) = 3, at most 32 / 16).

// With sequence-parallel-blocks=0, always the batch-parallel kernel.
// CHECK-LABEL: func.func @static_small_batch
// CHECK: call @__linattn_launch_linattn_scan_chunked_forward_features_0(%c2, %c1, %c1,

// SEQ-LABEL: func.func @static_small_batch
// SEQ-NOT: scf.if
// SEQ: call @__linattn_launch_linattn_scan_chunked_forward_features_0(%c2, %c1, %c1,
// min-segment-tokens=0: segments of one chunk (264 / 2 > 16 chunks).
// MIN0-LABEL: func.func @static_small_batch
// MIN0-NOT: scf.if
// MIN0: call @__linattn_launch_linattn_scan_segment_states_forward_features_0(%c2, %c1, %c15, {{.*}}, %c1000, %c64, %c1, %c16)
// MIN0: call @__linattn_launch_linattn_scan_segment_prefix_forward_features_1(%c2, %c16, %c1, {{.*}}, %c64, %c16)
// MIN0: call @__linattn_launch_linattn_scan_segment_outputs_forward_features_2(%c2, %c1, %c16, {{.*}}, %c1000, %c64, %c1, %c16)
// SEQ-LABEL: func.func @static_long_segments
// SEQ-NOT: scf.if
// SEQ: call @__linattn_launch_linattn_scan_segment_states_forward_features_1(%c64, %c1, %c3, {{.*}}, %c4096, %c64, %c16, %c4)
// SEQ: call @__linattn_launch_linattn_scan_segment_prefix_forward_features_2(%c64, %c16, %c1, {{.*}}, %c64, %c4)
// SEQ: call @__linattn_launch_linattn_scan_segment_outputs_forward_features_3(%c64, %c1, %c4, {{.*}}, %c4096, %c64, %c16, %c4)
// SEQ-LABEL: func.func @static_large_batch
// SEQ-NOT: scf.if
// SEQ: call @__linattn_launch_linattn_scan_chunked_forward_features_4(%c300, %c1, %c1,
// SEQ-LABEL: func.func @static_one_chunk
// SEQ-NOT: scf.if
// SEQ: call @__linattn_launch_linattn_scan_chunked_forward_features_5(%c2, %c1, %c1,
// SEQ-LABEL: func.func @static_half_target
// SEQ-NOT: scf.if
// SEQ: call @__linattn_launch_linattn_scan_chunked_forward_features_6(%c132, %c1, %c1,
// SEQ-LABEL: func.func @static_below_half
// SEQ-NOT: scf.if
// SEQ: call @__linattn_launch_linattn_scan_segment_states_forward_features_7(%c131, %c1, %c1, {{.*}}, %c2048, %c64, %c16, %c2)
// SEQ-LABEL: func.func @static_small_batch_long
// SEQ-NOT: scf.if
// SEQ: call @__linattn_launch_linattn_scan_segment_states_forward_features_10(%c2, %c1, %c2, {{.*}}, %c4000, %c64, %c21, %c3)
// SEQ: call @__linattn_launch_linattn_scan_segment_prefix_forward_features_11(%c2, %c16, %c1, {{.*}}, %c64, %c3)
// SEQ: call @__linattn_launch_linattn_scan_segment_outputs_forward_features_12(%c2, %c1, %c3, {{.*}}, %c4000, %c64, %c21, %c3)

func.func @static_small_batch(%fq: tensor<2x1000x64xbf16>, %fk: tensor<2x1000x64xbf16>, %v: tensor<2x1000x64xbf16>) -> tensor<2x1000x64xbf16> {
  %o, %s, %z = linattn.scan forward %fq, %fk, %v : tensor<2x1000x64xbf16>, tensor<2x1000x64xbf16>, tensor<2x1000x64xbf16> -> tensor<2x1000x64xbf16>, tensor<2x64x64xf32>, tensor<2x64xf32>
  return %o : tensor<2x1000x64xbf16>
}

func.func @static_long_segments(%fq: tensor<64x4096x64xbf16>, %fk: tensor<64x4096x64xbf16>, %v: tensor<64x4096x64xbf16>) -> tensor<64x4096x64xbf16> {
  %o, %s, %z = linattn.scan forward %fq, %fk, %v : tensor<64x4096x64xbf16>, tensor<64x4096x64xbf16>, tensor<64x4096x64xbf16> -> tensor<64x4096x64xbf16>, tensor<64x64x64xf32>, tensor<64x64xf32>
  return %o : tensor<64x4096x64xbf16>
}

func.func @static_large_batch(%fq: tensor<300x100x64xbf16>, %fk: tensor<300x100x64xbf16>, %v: tensor<300x100x64xbf16>) -> tensor<300x100x64xbf16> {
  %o, %s, %z = linattn.scan forward %fq, %fk, %v : tensor<300x100x64xbf16>, tensor<300x100x64xbf16>, tensor<300x100x64xbf16> -> tensor<300x100x64xbf16>, tensor<300x64x64xf32>, tensor<300x64xf32>
  return %o : tensor<300x100x64xbf16>
}

func.func @static_one_chunk(%fq: tensor<2x64x64xbf16>, %fk: tensor<2x64x64xbf16>, %v: tensor<2x64x64xbf16>) -> tensor<2x64x64xbf16> {
  %o, %s, %z = linattn.scan forward %fq, %fk, %v : tensor<2x64x64xbf16>, tensor<2x64x64xbf16>, tensor<2x64x64xbf16> -> tensor<2x64x64xbf16>, tensor<2x64x64xf32>, tensor<2x64xf32>
  return %o : tensor<2x64x64xbf16>
}

func.func @static_half_target(%fq: tensor<132x1000x64xbf16>, %fk: tensor<132x1000x64xbf16>, %v: tensor<132x1000x64xbf16>) -> tensor<132x1000x64xbf16> {
  %o, %s, %z = linattn.scan forward %fq, %fk, %v : tensor<132x1000x64xbf16>, tensor<132x1000x64xbf16>, tensor<132x1000x64xbf16> -> tensor<132x1000x64xbf16>, tensor<132x64x64xf32>, tensor<132x64xf32>
  return %o : tensor<132x1000x64xbf16>
}

func.func @static_below_half(%fq: tensor<131x2048x64xbf16>, %fk: tensor<131x2048x64xbf16>, %v: tensor<131x2048x64xbf16>) -> tensor<131x2048x64xbf16> {
  %o, %s, %z = linattn.scan forward %fq, %fk, %v : tensor<131x2048x64xbf16>, tensor<131x2048x64xbf16>, tensor<131x2048x64xbf16> -> tensor<131x2048x64xbf16>, tensor<131x64x64xf32>, tensor<131x64xf32>
  return %o : tensor<131x2048x64xbf16>
}

func.func @static_small_batch_long(%fq: tensor<2x4000x64xbf16>, %fk: tensor<2x4000x64xbf16>, %v: tensor<2x4000x64xbf16>) -> tensor<2x4000x64xbf16> {
  %o, %s, %z = linattn.scan forward %fq, %fk, %v : tensor<2x4000x64xbf16>, tensor<2x4000x64xbf16>, tensor<2x4000x64xbf16> -> tensor<2x4000x64xbf16>, tensor<2x64x64xf32>, tensor<2x64xf32>
  return %o : tensor<2x4000x64xbf16>
}

// -----

func.func @dynamic_dv(%fq: tensor<2x?x64xbf16>, %fk: tensor<2x?x64xbf16>, %v: tensor<2x?x?xbf16>) -> tensor<2x?x?xbf16> {
  %o, %s, %z = linattn.scan forward %fq, %fk, %v : tensor<2x?x64xbf16>, tensor<2x?x64xbf16>, tensor<2x?x?xbf16> -> tensor<2x?x?xbf16>, tensor<2x64x?xf32>, tensor<2x64xf32>
  return %o : tensor<2x?x?xbf16>
}

// -----

func.func @static_unlaunchable(%fq: tensor<1x8x64xbf16>, %fk: tensor<1x8x64xbf16>, %v: tensor<1x8x16777216xbf16>) -> tensor<1x8x16777216xbf16> {
  %o, %s, %z = linattn.scan forward %fq, %fk, %v : tensor<1x8x64xbf16>, tensor<1x8x64xbf16>, tensor<1x8x16777216xbf16> -> tensor<1x8x16777216xbf16>, tensor<1x64x16777216xf32>, tensor<1x64xf32>
  return %o : tensor<1x8x16777216xbf16>
}

// -----

// f32 data (tf32) at F = 128 stages the segment states' φ(K_c) and V_c in
// two slots of async copies, 50176 bytes, for which ptxas alone takes 238 to
// 250 registers (2 blocks per SM): the states are bounded to 3 blocks as
// 16-bit data's are (128 × 64 accumulators over 128 threads and 104
// registers beside them). At F = 64 (two warps) tf32 keeps ptxas's choice.
// TF32-STATES-LABEL: func.func @tf32_states_f128
//       TF32-STATES: gpu.func @linattn_scan_segment_states_forward_elu_normalized_0(
//  TF32-STATES-SAME: kernel attributes {known_block_size = array<i32: 128, 1, 1>, nvvm.minctasm = 3 : i32} {
// TF32-STATES-LABEL: func.func @tf32_states_f64
//       TF32-STATES: gpu.func @linattn_scan_segment_states_forward_elu_normalized_0(
//  TF32-STATES-SAME: kernel attributes {known_block_size = array<i32: 64, 1, 1>} {
func.func @tf32_states_f128(%q: tensor<2x4x?x128xf32>, %k: tensor<2x4x?x128xf32>, %v: tensor<2x4x?x64xf32>) -> tensor<2x4x?x64xf32> {
  %fq = linattn.feature_map elu %q : tensor<2x4x?x128xf32> -> tensor<2x4x?x128xf32>
  %fk = linattn.feature_map elu %k : tensor<2x4x?x128xf32> -> tensor<2x4x?x128xf32>
  %o, %s, %z = linattn.scan forward %fq, %fk, %v normalize(eps = 1.0e-6) : tensor<2x4x?x128xf32>, tensor<2x4x?x128xf32>, tensor<2x4x?x64xf32> -> tensor<2x4x?x64xf32>, tensor<2x4x128x64xf32>, tensor<2x4x128xf32>
  return %o : tensor<2x4x?x64xf32>
}

// -----

func.func @tf32_states_f64(%q: tensor<2x4x?x64xf32>, %k: tensor<2x4x?x64xf32>, %v: tensor<2x4x?x64xf32>) -> tensor<2x4x?x64xf32> {
  %fq = linattn.feature_map elu %q : tensor<2x4x?x64xf32> -> tensor<2x4x?x64xf32>
  %fk = linattn.feature_map elu %k : tensor<2x4x?x64xf32> -> tensor<2x4x?x64xf32>
  %o, %s, %z = linattn.scan forward %fq, %fk, %v normalize(eps = 1.0e-6) : tensor<2x4x?x64xf32>, tensor<2x4x?x64xf32>, tensor<2x4x?x64xf32> -> tensor<2x4x?x64xf32>, tensor<2x4x64x64xf32>, tensor<2x4x64xf32>
  return %o : tensor<2x4x?x64xf32>
}
