// RUN: linattn-opt %s --convert-linattn-to-gpu="scores-in-registers=true tf32=true sequence-parallel-blocks=0 async-copies=false wgmma=false" --canonicalize --cse -split-input-file | FileCheck %s
// RUN: linattn-opt %s --convert-linattn-to-gpu="sequence-parallel-blocks=0 async-copies=false wgmma=false" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=SHARED
// RUN: linattn-opt %s --convert-linattn-to-gpu="scores-in-registers=true sequence-parallel-blocks=0" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=SWIZZLED

// On wgmma (the default) with async copies, F = 64 and bf16, dropping the
// scores' tile leaves the chunk loop φ(Q_c), φ(K_c), V_c in two slots each
// (64 x 64, the 128-byte swizzle) and S: its 64 x 72 padded rows would
// take 58368 bytes, three blocks per H100 SM, so S is unpadded in the
// 128-byte swizzle instead (57344 bytes: four blocks), each row's 16-byte
// units XOR its row, stored a lane's pair at a time and read by
// transposing ldmatrix (that the swizzle leaves them free of bank
// conflicts, Integration/GPU/Emulator/bench-traffic.test counts). Where the
// padding costs no block (the normalized loop below, whose z takes more) S
// keeps it.
// SWIZZLED-LABEL: gpu.func @linattn_scan_chunked_wide_forward_features_0(
//  SWIZZLED-SAME: workgroup(%{{.*}} : memref<8192xbf16, #gpu.address_space<workgroup>> {llvm.align = 1024 : i64}, %{{.*}} : memref<8192xbf16, #gpu.address_space<workgroup>> {llvm.align = 1024 : i64}, %{{.*}} : memref<8192xbf16, #gpu.address_space<workgroup>> {llvm.align = 1024 : i64}, %[[S:.*]] : memref<4096xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}) kernel
//       SWIZZLED: vector.store %{{.*}}, %[[S]][%{{.*}}] {alignment = 4 : i64} : memref<4096xbf16, #gpu.address_space<workgroup>>, vector<2xbf16>
//       SWIZZLED: nvgpu.ldmatrix %[[S]][%{{.*}}] {numTiles = 4 : i32, transpose = true}
// SWIZZLED-LABEL: gpu.func @linattn_scan_chunked_wide_forward_features_normalized_0(
//  SWIZZLED-SAME: memref<4608xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<64xf32, #gpu.address_space<workgroup>>

// scores-in-registers: the chunk loops with one warp per row tile (F = 64:
// four warps, each with all 64 keys of its 16 rows) keep their masked
// scores as the A fragments of P·V. Each pair of masked accumulators is
// rounded to bf16 as one vector and taken as an i32 register; the first key
// step's four registers feed the first P·V product after the barrier that
// publishes the state, and no shared tile holds the scores: the workgroup
// buffers are φ(Q_c), φ(K_c), V_c and S (the default adds the scores'
// 64 x 72 tile after V_c; no z: the scan is unnormalized and its final
// normalizer unused).
// CHECK-LABEL: gpu.func @linattn_scan_chunked_wide_forward_features_0(
//  CHECK-SAME: workgroup(%{{.*}} : memref<4608xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<4608xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<4608xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<4608xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}) kernel
//       CHECK: %[[PAIR:.*]] = vector.from_elements %{{.*}}, %{{.*}} : vector<2xf32>
//       CHECK: %[[ROUNDED:.*]] = arith.truncf %[[PAIR]] : vector<2xf32> to vector<2xbf16>
//       CHECK: %[[WORD:.*]] = vector.bitcast %[[ROUNDED]] : vector<2xbf16> to vector<1xi32>
//       CHECK: %[[P0:.*]] = vector.extract %[[WORD]][0] : i32 from vector<1xi32>
//       CHECK: %[[P1:.*]] = vector.extract %{{.*}}[0] : i32 from vector<1xi32>
//       CHECK: %[[P2:.*]] = vector.extract %{{.*}}[0] : i32 from vector<1xi32>
//       CHECK: %[[P3:.*]] = vector.extract %{{.*}}[0] : i32 from vector<1xi32>
//       CHECK: gpu.barrier
//   CHECK-NOT: nvvm.mma.sync
//       CHECK: nvvm.mma.sync A[%[[P0]], %[[P1]], %[[P2]], %[[P3]]]
// SHARED-LABEL: gpu.func @linattn_scan_chunked_wide_forward_features_0(
//  SHARED-SAME: workgroup(%{{.*}} : memref<4608xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<4608xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<4608xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<4608xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<4608xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}) kernel
func.func @rows(%fq: tensor<2x1000x64xbf16>, %fk: tensor<2x1000x64xbf16>, %v: tensor<2x1000x64xbf16>) -> tensor<2x1000x64xbf16> {
  %o, %s, %z = linattn.scan forward %fq, %fk, %v : tensor<2x1000x64xbf16>, tensor<2x1000x64xbf16>, tensor<2x1000x64xbf16> -> tensor<2x1000x64xbf16>, tensor<2x64x64xf32>, tensor<2x64xf32>
  return %o : tensor<2x1000x64xbf16>
}

// -----

// F = 160 takes chunks of 32 and two warps per row tile, each with half the
// keys of the scores: P·V needs all of them, so the scores stay in shared
// memory (their 32 x 40 tile after V_c), with or without the option: each
// lane's pair of a row rounded together and stored as one.
// CHECK-LABEL: gpu.func @linattn_scan_chunked_wide_forward_features_0(
//  CHECK-SAME: workgroup(%{{.*}} : memref<{{[0-9]+}}xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<{{[0-9]+}}xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<{{[0-9]+}}xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %[[PS:.*]] : memref<1280xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<{{[0-9]+}}xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}) kernel
//       CHECK: %[[SCORES:.*]] = arith.truncf %{{.*}} : vector<2xf32> to vector<2xbf16>
//  CHECK-NEXT: vector.store %[[SCORES]], %[[PS]][%{{.*}}] {alignment = 4 : i64} : memref<1280xbf16, #gpu.address_space<workgroup>>, vector<2xbf16>
//   CHECK-NOT: vector.bitcast %[[SCORES]]
//       CHECK: gpu.return
func.func @groups(%fq: tensor<2x100x160xbf16>, %fk: tensor<2x100x160xbf16>, %v: tensor<2x100x40xbf16>) -> tensor<2x100x40xbf16> {
  %o, %s, %z = linattn.scan forward %fq, %fk, %v : tensor<2x100x160xbf16>, tensor<2x100x160xbf16>, tensor<2x100x40xbf16> -> tensor<2x100x40xbf16>, tensor<2x160x40xf32>, tensor<2x160xf32>
  return %o : tensor<2x100x40xbf16>
}

// -----

// f32 data on tf32 tensor cores: m16n8k8's A fragments take other columns
// than its accumulators, so the scores stay in shared memory.
// CHECK-LABEL: gpu.func @linattn_scan_chunked_wide_forward_features_0(
//  CHECK-SAME: workgroup(%{{.*}} : memref<{{[0-9]+}}xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<{{[0-9]+}}xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<{{[0-9]+}}xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<{{[0-9]+}}xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<{{[0-9]+}}xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}) kernel
func.func @tf32(%fq: tensor<2x100x64xf32>, %fk: tensor<2x100x64xf32>, %v: tensor<2x100x64xf32>) -> tensor<2x100x64xf32> {
  %o, %s, %z = linattn.scan forward %fq, %fk, %v : tensor<2x100x64xf32>, tensor<2x100x64xf32>, tensor<2x100x64xf32> -> tensor<2x100x64xf32>, tensor<2x64x64xf32>, tensor<2x64xf32>
  return %o : tensor<2x100x64xf32>
}

// -----

func.func @normalized(%fq: tensor<2x1000x64xbf16>, %fk: tensor<2x1000x64xbf16>, %v: tensor<2x1000x64xbf16>) -> tensor<2x1000x64xbf16> {
  %o, %s, %z = linattn.scan forward %fq, %fk, %v normalize(eps = 1.0e-6) : tensor<2x1000x64xbf16>, tensor<2x1000x64xbf16>, tensor<2x1000x64xbf16> -> tensor<2x1000x64xbf16>, tensor<2x64x64xf32>, tensor<2x64xf32>
  return %o : tensor<2x1000x64xbf16>
}
