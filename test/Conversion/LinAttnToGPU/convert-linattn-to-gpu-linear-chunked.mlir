// RUN: linattn-opt %s --convert-linattn-to-gpu="async-copies=false" --canonicalize --cse -split-input-file | FileCheck %s
// RUN: linattn-opt %s --convert-linattn-to-gpu="sequence-parallel-blocks=0 async-copies=false" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=ONE
// RUN: linattn-opt %s --convert-linattn-to-gpu="linear-kernel=scalar" -split-input-file | FileCheck %s --check-prefix=SCALAR --implicit-check-not=nvvm.mma.sync
// RUN: linattn-opt %s --convert-linattn-to-gpu="tf32=true" -split-input-file | FileCheck %s --check-prefix=TF32
// RUN: not linattn-opt %s --convert-linattn-to-gpu="linear-kernel=tiled" -split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD-KERNEL

// BAD-KERNEL: linear-kernel must be 'chunked' or 'scalar'

// The linear form with bf16 data and an f32 state takes the chunked
// tensor-core kernels: the key-value summary as the sequence-parallel scan's
// segment sums (φ(K_c)ᵀV_c on tensor cores, four warps per block of 64
// value columns, chunks of 64 keys), the readout as its chunk loop without
// scores. 8 batch elements of 1000 keys (16 chunks) leave SMs idle: the
// keys split into 16 segments (264 / 8 > 16), whose sums a second kernel
// adds up; the readout splits the queries the same way (its target is four
// times as many blocks).

// CHECK-LABEL: func.func @linear_bf16
// CHECK: call @__linattn_launch_linattn_kv_summary_chunked_features_0(%c8, %c1, %c16, %c128, %c1, %c1, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %c1000, %c64, %c1, %c16) : (index, index, index, index, index, index, memref<?xbf16>, memref<?xbf16>, memref<?xf32>, memref<?xf32>, index, index, index, index) -> ()
// CHECK: call @__linattn_launch_linattn_kv_summary_segments_features_1(%c8, %c16, %c1, %c256, %c1, %c1, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %c64, %c16) : (index, index, index, index, index, index, memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>, index, index) -> ()
// CHECK: call @__linattn_launch_linattn_query_readout_chunked_features_normalized_2(%c8, %c1, %c16, %c128, %c1, %c1, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %c1000, %c64, %c1) : (index, index, index, index, index, index, memref<?xbf16>, memref<?xf32>, memref<?xf32>, memref<?xbf16>, index, index, index) -> ()

// The summary kernel stages φ(K_c) and V_c only, and reads them transposed.
// CHECK: gpu.func @linattn_kv_summary_chunked_features_0(
// CHECK-SAME: workgroup(%[[KS:.*]] : memref<4608xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %[[VS:.*]] : memref<4608xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}) kernel
// CHECK: nvgpu.ldmatrix %[[KS]][%{{.*}}] {numTiles = 4 : i32, transpose = true}
// CHECK: nvgpu.ldmatrix %[[VS]][%{{.*}}] {numTiles = 4 : i32, transpose = true}
// CHECK: nvvm.mma.sync {{.*}}multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>}

// The sums over segments: no prefixes (the scan's pass 2 writes those too).
// CHECK: gpu.func @linattn_kv_summary_segments_features_1(%{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: index, %{{.*}}: index) kernel

// The readout stages φ(Q_c), the block's tile of S rounded to bf16 once
// (before the chunk loop) and z; no keys, values or scores, and (bf16) no
// column scales. Per chunk: the denominators (φ(Q_c) in A fragments, each
// lane's z in 8-byte loads), then φ(Q_c)S on tensor cores.
// CHECK: gpu.func @linattn_query_readout_chunked_features_normalized_2(%{{.*}}: memref<?xbf16>, %{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: memref<?xbf16>, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index)
// CHECK-SAME: workgroup(%[[QS:.*]] : memref<4608xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %[[SS:.*]] : memref<4608xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %[[ZS:.*]] : memref<64xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}) kernel
// CHECK-NOT: arith.maximumf
// CHECK: memref.store %{{.*}}, %[[SS]][%{{.*}}] : memref<4608xbf16, #gpu.address_space<workgroup>>
// CHECK: scf.for
// CHECK: gpu.barrier
// CHECK: vector.store %{{.*}}, %[[QS]]
// CHECK: gpu.barrier
// CHECK: nvgpu.ldmatrix %[[QS]][%{{.*}}] {numTiles = 4 : i32, transpose = false}
// CHECK: vector.load %[[ZS]][%{{.*}}] {alignment = 8 : i64} : memref<64xf32, #gpu.address_space<workgroup>>, vector<2xf32>
// CHECK: arith.mulf %{{.*}} fastmath<contract> : f32
// CHECK: gpu.shuffle xor
// CHECK: nvgpu.ldmatrix %[[QS]][%{{.*}}] {numTiles = 4 : i32, transpose = false}
// CHECK: nvgpu.ldmatrix %[[SS]][%{{.*}}] {numTiles = 4 : i32, transpose = true}
// CHECK: nvvm.mma.sync
// CHECK-NOT: memref.store %{{.*}}, %[[SS]]
// CHECK: gpu.return

// With sequence-parallel-blocks=0, one segment: the summary kernel writes S
// and z itself, and the readout takes all queries per block.
// ONE-LABEL: func.func @linear_bf16
// ONE: call @__linattn_launch_linattn_kv_summary_chunked_features_0(%c8, %c1, %c1, %c128, %c1, %c1, %{{.*}}, %{{.*}}, %[[S:.*]], %[[Z:.*]], %c1000, %c64, %c16, %c1)
// ONE-NOT: linattn_kv_summary_segments
// ONE: call @__linattn_launch_linattn_query_readout_chunked_features_normalized_1(%c8, %c1, %c1, %c128, %c1, %c1, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %c1000, %c64, %c16)

// linear-kernel=scalar: the scalar kernels.
// SCALAR-LABEL: func.func @linear_bf16
// SCALAR: call @__linattn_launch_linattn_kv_summary_features_0(
// SCALAR: call @__linattn_launch_linattn_query_readout_features_normalized_1(

func.func @linear_bf16(%fq: tensor<8x1000x64xbf16>, %fk: tensor<8x1000x64xbf16>, %v: tensor<8x1000x64xbf16>) -> tensor<8x1000x64xbf16> {
  %s, %z = linattn.kv_summary %fk, %v : tensor<8x1000x64xbf16>, tensor<8x1000x64xbf16> -> tensor<8x64x64xf32>, tensor<8x64xf32>
  %o = linattn.query_readout %fq, %s normalize(%z, eps = 1.0e-06) : tensor<8x1000x64xbf16>, tensor<8x64x64xf32>, tensor<8x64xf32> -> tensor<8x1000x64xbf16>
  return %o : tensor<8x1000x64xbf16>
}

// -----

// With f16 data the readout scales each column of S by a power of two
// before rounding it, as the f16 chunk loops scale the state: the column's
// largest magnitude (over the lane's rows, then shuffles xor 4, 8, 16 over
// the lanes that hold the column), its exponent read from the bits,
// s = 2^(140 - e) and 1/s = 2^(e - 140) from e = 141 (2^14) on, 1 below;
// s and 1/s go to shared memory, and each output is multiplied by its
// column's 1/s. Unnormalized: no z. A dynamic N: the segments are computed
// at run time. F = 32 gives chunks of 64 and tiles of 64 columns on four
// warps (Dv = 40: one tile).

// CHECK-LABEL: func.func @readout_f16
// CHECK: %[[N:.*]] = tensor.dim %{{.*}}, %c1 : tensor<2x?x32xf16>
// CHECK: call @__linattn_launch_linattn_query_readout_chunked_features_0(%c2, %c1, %{{.*}}, %c128, %c1, %c1, %{{.*}}, %{{.*}}, %{{.*}}, %[[N]], %c40, %{{.*}})
// CHECK: gpu.func @linattn_query_readout_chunked_features_0(
// CHECK-SAME: workgroup(%{{.*}} : memref<2560xf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %[[SS:.*]] : memref<2304xf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %[[CS:.*]] : memref<128xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}) kernel
// CHECK: math.absf
// CHECK: arith.maximumf
// CHECK: gpu.shuffle  xor %{{.*}}, %c4_i32, %c32_i32 : f32
// CHECK: gpu.shuffle  xor %{{.*}}, %c8_i32, %c32_i32 : f32
// CHECK: gpu.shuffle  xor %{{.*}}, %c16_i32, %c32_i32 : f32
// CHECK: %[[BITS:.*]] = arith.bitcast %{{.*}} : f32 to i32
// CHECK: %[[SHIFTED:.*]] = arith.shrui %[[BITS]], %c23_i32 : i32
// CHECK: %[[E:.*]] = arith.andi %[[SHIFTED]], %c255_i32 : i32
// CHECK: %[[LARGE:.*]] = arith.cmpi uge, %[[E]], %c141_i32 : i32
// CHECK: %[[SE:.*]] = arith.subi %c267_i32, %[[E]] : i32
// CHECK: %[[SBITS:.*]] = arith.shli %[[SE]], %c23_i32 : i32
// CHECK: %[[SCALED:.*]] = arith.bitcast %[[SBITS]] : i32 to f32
// CHECK: %[[IE:.*]] = arith.subi %[[E]], %c13_i32 : i32
// CHECK: %[[IBITS:.*]] = arith.shli %[[IE]], %c23_i32 : i32
// CHECK: %[[INVERSE:.*]] = arith.bitcast %[[IBITS]] : i32 to f32
// CHECK: %[[SCALE:.*]] = arith.select %[[LARGE]], %[[SCALED]], %cst{{.*}} : f32
// CHECK: %[[UNSCALE:.*]] = arith.select %[[LARGE]], %[[INVERSE]], %cst{{.*}} : f32
// CHECK: arith.mulf %{{.*}}, %[[SCALE]] : f32
// CHECK: memref.store %{{.*}}, %[[SS]][
// CHECK: memref.store %[[SCALE]], %[[CS]][
// CHECK: memref.store %[[UNSCALE]], %[[CS]][
// CHECK: scf.for
// CHECK: nvvm.mma.sync {{.*}} : (vector<2xf16>, vector<2xf16>, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK: %[[U:.*]] = memref.load %[[CS]][
// CHECK: arith.mulf %{{.*}}, %[[U]] : f32
// CHECK: gpu.return

// tf32=true does not change f16 data.
// TF32-LABEL: func.func @readout_f16
// TF32: call @__linattn_launch_linattn_query_readout_chunked_features_0(

func.func @readout_f16(%fq: tensor<2x?x32xf16>, %s: tensor<2x32x40xf32>) -> tensor<2x?x40xf16> {
  %o = linattn.query_readout %fq, %s : tensor<2x?x32xf16>, tensor<2x32x40xf32> -> tensor<2x?x40xf16>
  return %o : tensor<2x?x40xf16>
}

// -----

// What the chunked kernels do not take goes to the scalar ones: f32 data
// (without tf32), a bf16 state, feature sizes that are not a multiple of 16.
// With tf32=true, f32 data takes the chunked kernels on tf32 tensor cores.

// CHECK-LABEL: func.func @negative_f32
// CHECK: call @__linattn_launch_linattn_kv_summary_features_0(
// CHECK: call @__linattn_launch_linattn_query_readout_features_1(
// CHECK-LABEL: func.func @negative_bf16_state
// CHECK: call @__linattn_launch_linattn_kv_summary_features_2(
// CHECK: call @__linattn_launch_linattn_query_readout_features_3(
// CHECK-LABEL: func.func @negative_features_24
// CHECK: call @__linattn_launch_linattn_kv_summary_features_4(
// CHECK: call @__linattn_launch_linattn_query_readout_features_5(
// CHECK-NOT: nvvm.mma.sync

// TF32-LABEL: func.func @negative_f32
// TF32: call @__linattn_launch_linattn_kv_summary_chunked_features_0(
// TF32: call @__linattn_launch_linattn_query_readout_chunked_features_1(
// TF32-LABEL: func.func @negative_bf16_state
// TF32: call @__linattn_launch_linattn_kv_summary_features_2(
// TF32: call @__linattn_launch_linattn_query_readout_features_3(
// TF32: gpu.func @linattn_kv_summary_chunked_features_0(
// TF32: nvvm.convert.float.to.tf32 %{{.*}} {rnd = #nvvm.fp_rnd_mode<rna>}
// TF32: nvvm.mma.sync {{.*}}multiplicandAPtxType = #nvvm.mma_type<tf32>, multiplicandBPtxType = #nvvm.mma_type<tf32>, shape = #nvvm.shape<m = 16, n = 8, k = 8>}
// TF32: gpu.func @linattn_query_readout_chunked_features_1(
// TF32: nvvm.mma.sync {{.*}}multiplicandAPtxType = #nvvm.mma_type<tf32>

func.func @negative_f32(%fq: tensor<7x16xf32>, %fk: tensor<9x16xf32>, %v: tensor<9x8xf32>) -> tensor<7x8xf32> {
  %s, %z = linattn.kv_summary %fk, %v : tensor<9x16xf32>, tensor<9x8xf32> -> tensor<16x8xf32>, tensor<16xf32>
  %o = linattn.query_readout %fq, %s : tensor<7x16xf32>, tensor<16x8xf32> -> tensor<7x8xf32>
  return %o : tensor<7x8xf32>
}

func.func @negative_bf16_state(%fq: tensor<7x16xbf16>, %fk: tensor<9x16xbf16>, %v: tensor<9x8xbf16>) -> tensor<7x8xbf16> {
  %s, %z = linattn.kv_summary %fk, %v : tensor<9x16xbf16>, tensor<9x8xbf16> -> tensor<16x8xbf16>, tensor<16xbf16>
  %o = linattn.query_readout %fq, %s : tensor<7x16xbf16>, tensor<16x8xbf16> -> tensor<7x8xbf16>
  return %o : tensor<7x8xbf16>
}

func.func @negative_features_24(%fq: tensor<7x24xbf16>, %fk: tensor<9x24xbf16>, %v: tensor<9x8xbf16>) -> tensor<7x8xbf16> {
  %s, %z = linattn.kv_summary %fk, %v : tensor<9x24xbf16>, tensor<9x8xbf16> -> tensor<24x8xf32>, tensor<24xf32>
  %o = linattn.query_readout %fq, %s : tensor<7x24xbf16>, tensor<24x8xf32> -> tensor<7x8xbf16>
  return %o : tensor<7x8xbf16>
}
