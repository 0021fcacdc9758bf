// RUN: linattn-opt %s -split-input-file --convert-linattn-to-gpu="tf32=true sequence-parallel-blocks=0" --canonicalize --cse | FileCheck %s
// RUN: linattn-opt %s -split-input-file --convert-linattn-to-gpu="tf32=true sequence-parallel-blocks=0 value-tile=32" --canonicalize --cse | FileCheck %s --check-prefix=VT32
// RUN: linattn-opt %s -split-input-file --linattn-lower-to-nvvm="format=isa tf32=true sequence-parallel-blocks=0" -o /dev/null --mlir-print-ir-after=linattn-gpu-dynamic-shared-memory 2>&1 | FileCheck %s --check-prefix=DYNAMIC

// Value tiles of 64 columns where CUDA's 48 KiB of static shared memory
// would leave them narrower (the largest chunk with such tiles, in dynamic
// shared memory where needed), else tiles of 32 where they would be
// narrower than that: every block of a head computes the scores and stages
// φ(Q), φ(K) of every chunk, so narrower tiles repeat that work and those
// reads.

// The chunked tf32 scan at F = 128. f32 tiles take twice the bytes of
// 16-bit ones, so CUDA's 48 KiB of static shared memory leave blocks of one
// warp, chunks of 16 tokens and 16 value columns: eight blocks of a head,
// each computing the scores and staging φ(Q), φ(K) of every chunk. Value
// tiles of 64 columns take dynamic shared memory instead: chunks of 32,
// four warps (two per row tile), two blocks a head (grid (8, 2)), φ(Q_c)
// and φ(K_c) in rows of 128 + 4 floats. They are copied a chunk at a time
// into one slot (the second slots of async copies would not fit that
// shape), and rounded to tf32 in place after the copies. V_c (32 x 64)
// and S (128 x 64) have no room for the 8 floats of padding that keep
// their tf32 gathers conflict-free without costing an A100 a block per SM:
// their rows stay unpadded, 16-byte units XOR-swizzled by row.
// CHECK-LABEL: func.func @tf32_f128
// CHECK: call @__linattn_launch_linattn_scan_chunked_wide_forward_elu_0(%c8, %c2, %c1, %c128, %c1, %c1,
// CHECK: gpu.func @linattn_scan_chunked_wide_forward_elu_0(
// CHECK-SAME: workgroup(%{{.*}} : memref<4224xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<4224xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<2048xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<1152xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<8192xf32, #gpu.address_space<workgroup>>
// CHECK-SAME: known_block_size = array<i32: 128, 1, 1>
// tf32's features are rounded to tf32 (11 significant bits) as 16-bit
// data's are to theirs: their exp is the special-function unit's 2^x too,
// not libdevice's expf.
// CHECK: nvgpu.device_async_copy
// CHECK: nvvm.cp.async.wait.group 0
// CHECK-NOT: math.exp
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// CHECK-NOT: math.exp
// CHECK: nvvm.mma.sync {{.*}}multiplicandAPtxType = #nvvm.mma_type<tf32>
// The state goes to its swizzled tile two columns at a time.
// CHECK: vector.store {{.*}} : memref<8192xf32, #gpu.address_space<workgroup>>, vector<2xf32>

// A value tile capped at 32 columns takes tiles of 32 in dynamic shared
// memory the same way (chunks of 32, two warps, four blocks a head) rather
// than the static shape's tiles of 16.
// VT32-LABEL: func.func @tf32_f128
// VT32: call @__linattn_launch_linattn_scan_chunked_wide_forward_elu_0(%c8, %c4, %c1, %c64, %c1, %c1,
// VT32: gpu.func @linattn_scan_chunked_wide_forward_elu_0(
// VT32-SAME: workgroup(%{{.*}} : memref<4224xf32, #gpu.address_space<workgroup>>
// With 40 columns of 32 + 8 floats, V_c and S take the wider padding.
// VT32-SAME: memref<1280xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<1152xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<5120xf32, #gpu.address_space<workgroup>>

// The launch passes the tiles' 77.5 KiB as dynamic shared memory (no z:
// the scan is unnormalized and its final normalizer unused).
// DYNAMIC: gpu.launch_func {{.*}} @linattn_kernels::@linattn_scan_chunked_wide_forward_elu_0 blocks in (%{{.*}}, %{{.*}}, %{{.*}}) threads in (%c128, %{{.*}}, %{{.*}}) dynamic_shared_memory_size %c79360_i32
func.func @tf32_f128(%q: tensor<8x?x128xf32>, %k: tensor<8x?x128xf32>, %v: tensor<8x?x128xf32>) -> tensor<8x?x128xf32> {
  %fq = linattn.feature_map elu %q : tensor<8x?x128xf32> -> tensor<8x?x128xf32>
  %fk = linattn.feature_map elu %k : tensor<8x?x128xf32> -> tensor<8x?x128xf32>
  %o, %s, %z = linattn.scan forward %fq, %fk, %v : tensor<8x?x128xf32>, tensor<8x?x128xf32>, tensor<8x?x128xf32> -> tensor<8x?x128xf32>, tensor<8x128x128xf32>, tensor<8x128xf32>
  return %o : tensor<8x?x128xf32>
}

// -----

// 16-bit data at F = 80 (the normalized gradients' [g, h] and [V, 1] at
// Dv = 64, padded to a multiple of 16): the largest chunk left 32 value
// columns, two blocks a head; tiles of 64 columns take the largest chunk
// that has them instead, 32 tokens, as at F = 128: one block a head (grid
// (8, 1)), four warps (two per row tile), φ(Q_c) and φ(K_c) in rows of
// 80 + 8 elements staged twice (async copies), the scores' 32 x 40 tile,
// 44.75 KiB in all, which static shared memory holds.
// CHECK-LABEL: func.func @bf16_f80
// CHECK: call @__linattn_launch_linattn_scan_chunked_wide_forward_features_0(%c8, %c1, %c1, %c128, %c1, %c1,
// CHECK: gpu.func @linattn_scan_chunked_wide_forward_features_0(
// CHECK-SAME: workgroup(%{{.*}} : memref<5632xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<5632xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<4608xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<1280xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<5760xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
// CHECK-SAME: known_block_size = array<i32: 128, 1, 1>

// VT32-LABEL: func.func @bf16_f80
// VT32: call @__linattn_launch_linattn_scan_chunked_wide_forward_features_0(%c8, %c2, %c1, %c128, %c1, %c1,

// DYNAMIC-NOT: dynamic_shared_memory_size
func.func @bf16_f80(%fq: tensor<8x?x80xbf16>, %fk: tensor<8x?x80xbf16>, %v: tensor<8x?x64xbf16>) -> tensor<8x?x64xbf16> {
  %o, %s, %z = linattn.scan forward %fq, %fk, %v : tensor<8x?x80xbf16>, tensor<8x?x80xbf16>, tensor<8x?x64xbf16> -> tensor<8x?x64xbf16>, tensor<8x80x64xf32>, tensor<8x80xf32>
  return %o : tensor<8x?x64xbf16>
}

// -----

// 16-bit data at F = 256 (FAVOR+'s usual number of random features): the
// state's 256 rows leave 48 KiB one-warp blocks of 8 value columns and
// chunks of 16, eight blocks a head at Dv = 64, each computing the scores
// over all 256 features and staging φ(Q), φ(K) of every chunk. Tiles of 64
// columns would not fit the registers of eight warps; tiles of 32 take
// dynamic shared memory instead: chunks of 32, four warps (two per row
// tile), two blocks a head (grid (8, 2)), φ(Q_c) and φ(K_c) in rows of
// 256 + 8 elements staged twice (async copies), 93.5 KiB in all.
// CHECK-LABEL: func.func @bf16_f256
// CHECK: call @__linattn_launch_linattn_scan_chunked_wide_forward_features_0(%c8, %c2, %c1, %c128, %c1, %c1,
// CHECK: gpu.func @linattn_scan_chunked_wide_forward_features_0(
// CHECK-SAME: workgroup(%{{.*}} : memref<16896xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<16896xbf16, #gpu.address_space<workgroup>>
// CHECK-SAME: known_block_size = array<i32: 128, 1, 1>

// A value tile capped at 32 columns takes the same shape.
// VT32-LABEL: func.func @bf16_f256
// VT32: call @__linattn_launch_linattn_scan_chunked_wide_forward_features_0(%c8, %c2, %c1, %c128, %c1, %c1,

// DYNAMIC: gpu.launch_func {{.*}} @linattn_kernels::@linattn_scan_chunked_wide_forward_features_0 blocks in (%{{.*}}, %{{.*}}, %{{.*}}) threads in (%c128, %{{.*}}, %{{.*}}) dynamic_shared_memory_size %c95744_i32
func.func @bf16_f256(%fq: tensor<8x?x256xbf16>, %fk: tensor<8x?x256xbf16>, %v: tensor<8x?x64xbf16>) -> tensor<8x?x64xbf16> {
  %o, %s, %z = linattn.scan forward %fq, %fk, %v : tensor<8x?x256xbf16>, tensor<8x?x256xbf16>, tensor<8x?x64xbf16> -> tensor<8x?x64xbf16>, tensor<8x256x64xf32>, tensor<8x256xf32>
  return %o : tensor<8x?x64xbf16>
}
