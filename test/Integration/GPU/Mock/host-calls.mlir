// REQUIRES: cuda-toolkit
// The host side of linattn-lower-to-nvvm executed against the mock runtime
// (no GPU: device buffers in host memory, kernels not run, every mgpu* call
// logged): launch geometry, kernel parameter counts, and the allocation,
// copy and free sequence on one stream.

// RUN: rm -f %t.causal.log %t.cross.log %t.decode.log
// RUN: env LINATTN_MOCK_GPU_LOG=%t.causal.log linattn-run %s --entry=causal --target=cuda --mock-gpu --pipeline='linattn-lower-to-nvvm{format=isa}' --random-seed=1 | FileCheck %s --check-prefix=OUT
// RUN: FileCheck %s --check-prefix=CAUSAL < %t.causal.log
// RUN: env LINATTN_MOCK_GPU_LOG=%t.cross.log linattn-run %s --entry=cross --target=cuda --mock-gpu --pipeline='linattn-lower-to-nvvm{format=isa}' --random-seed=1
// RUN: FileCheck %s --check-prefix=CROSS < %t.cross.log
// RUN: env LINATTN_MOCK_GPU=1 LINATTN_MOCK_GPU_LOG=%t.decode.log linattn-run %s --entry=decode --target=cuda --pipeline='linattn-lower-to-nvvm{format=isa}' --random-seed=1 --repeat=2 | FileCheck %s --check-prefix=REPEAT
// RUN: FileCheck %s --check-prefix=DECODE < %t.decode.log

// OUT: device: mock GPU (host memory, kernels not run)
// OUT: result #0: 2x4x7x40xf32

// Causal elu attention is one scan kernel: grid (batch x heads, value
// tiles of 32), 32 threads; 4 buffers of 5 descriptor words each, N and Dv.
// The scan's final state, which attention drops, is neither allocated nor
// written nor copied back.
// CAUSAL: mgpu: module-load ptx {{[0-9]+}} bytes O3
// CAUSAL-NEXT: mgpu: stream-create s1
// CAUSAL-NEXT: mgpu: alloc d1 3584 bytes s1
// CAUSAL-NEXT: mgpu: memcpy h2d d1 3584 bytes s1
// CAUSAL-NEXT: mgpu: alloc d2 3584 bytes s1
// CAUSAL-NEXT: mgpu: memcpy h2d d2 3584 bytes s1
// CAUSAL-NEXT: mgpu: alloc d3 8960 bytes s1
// CAUSAL-NEXT: mgpu: memcpy h2d d3 8960 bytes s1
// CAUSAL-NEXT: mgpu: alloc d4 8960 bytes s1
// CAUSAL-NEXT: mgpu: launch linattn_scan_forward_elu_normalized_0 grid 8x2x1 block 128x1x1 smem 0 params 22 s1
// CAUSAL-NEXT: mgpu: memcpy d2h d4 8960 bytes s1
// CAUSAL-NEXT: mgpu: free d1 s1
// CAUSAL-NEXT: mgpu: free d2 s1
// CAUSAL-NEXT: mgpu: free d3 s1
// CAUSAL-NEXT: mgpu: free d4 s1
// CAUSAL-NEXT: mgpu: stream-sync s1
// CAUSAL-NEXT: mgpu: stream-destroy s1
// CAUSAL-NEXT: mgpu: module-unload
// CAUSAL-NOT: leak
func.func @causal(%q: tensor<2x4x7x16xf32>, %k: tensor<2x4x7x16xf32>, %v: tensor<2x4x7x40xf32>) -> tensor<2x4x7x40xf32> {
  %0 = linattn.attention elu %q, %k, %v causal normalize(eps = 1.0e-6) : tensor<2x4x7x16xf32>, tensor<2x4x7x16xf32>, tensor<2x4x7x40xf32> -> tensor<2x4x7x40xf32>
  return %0 : tensor<2x4x7x40xf32>
}

// Cross-attention is reassociated: kv_summary (grid value tiles x tiles of
// 16 features x batch, 64 threads for Dv = 40) then query_readout (grid
// tiles of 16 tokens x value tiles x batch); the summary goes back to the
// host between them, and each kernel gets its own stream.
// CROSS: mgpu: stream-create s1
// CROSS: mgpu: launch linattn_kv_summary_relu_{{[0-9]+}} grid 1x2x2 block 64x1x1 smem 0 params 23 s1
// CROSS-NEXT: mgpu: memcpy d2h {{d[0-9]+}} 10240 bytes s1
// CROSS-NEXT: mgpu: memcpy d2h {{d[0-9]+}} 256 bytes s1
// CROSS: mgpu: stream-destroy s1
// CROSS-NEXT: mgpu: stream-create s2
// CROSS: mgpu: memcpy h2d {{d[0-9]+}} 10240 bytes s2
// CROSS: mgpu: launch linattn_query_readout_relu_normalized_{{[0-9]+}} grid 1x1x2 block 64x1x1 smem 0 params 23 s2
// CROSS-NEXT: mgpu: memcpy d2h {{d[0-9]+}} 2240 bytes s2
// CROSS: mgpu: stream-destroy s2
// CROSS-NOT: leak
func.func @cross(%q: tensor<2x7x32xf32>, %k: tensor<2x13x32xf32>, %v: tensor<2x13x40xf32>) -> tensor<2x7x40xf32> {
  %0 = linattn.attention relu %q, %k, %v normalize(eps = 1.0e-6) : tensor<2x7x32xf32>, tensor<2x13x32xf32>, tensor<2x13x40xf32> -> tensor<2x7x40xf32>
  return %0 : tensor<2x7x40xf32>
}

// One decode step per call (four lanes per value column: 24 × 4 threads);
// two timed calls after a warm-up, each on its own stream.
// REPEAT: median time: {{.*}} ms over 2 calls (CUDA events)
// DECODE: mgpu: launch linattn_step_elu_normalized_{{[0-9]+}} grid 8x1x1 block 96x1x1 smem 0 params 41 s1
// DECODE: mgpu: stream-destroy s1
// DECODE: mgpu: launch linattn_step_elu_normalized_{{[0-9]+}} grid 8x1x1 block 96x1x1 smem 0 params 41 s2
// DECODE: mgpu: launch linattn_step_elu_normalized_{{[0-9]+}} grid 8x1x1 block 96x1x1 smem 0 params 41 s3
// DECODE: mgpu: module-unload
// DECODE-NOT: leak
func.func @decode(%q: tensor<8x16xf32>, %k: tensor<8x16xf32>, %v: tensor<8x24xf32>, %s: tensor<8x16x24xf32>, %z: tensor<8x16xf32>) -> (tensor<8x24xf32>, tensor<8x16x24xf32>, tensor<8x16xf32>) {
  %fq = linattn.feature_map elu %q : tensor<8x16xf32> -> tensor<8x16xf32>
  %fk = linattn.feature_map elu %k : tensor<8x16xf32> -> tensor<8x16xf32>
  %o, %s1, %z1 = linattn.step %fq, %fk, %v, %s, %z normalize(eps = 1.0e-6) : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x24xf32>, tensor<8x16x24xf32>, tensor<8x16xf32> -> tensor<8x24xf32>, tensor<8x16x24xf32>, tensor<8x16xf32>
  return %o, %s1, %z1 : tensor<8x24xf32>, tensor<8x16x24xf32>, tensor<8x16xf32>
}
