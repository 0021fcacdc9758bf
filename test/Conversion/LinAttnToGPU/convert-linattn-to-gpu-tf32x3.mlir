// RUN: linattn-opt %s --convert-linattn-to-gpu="tf32x3=true sequence-parallel-blocks=0" --canonicalize --cse -split-input-file | FileCheck %s
// RUN: linattn-opt %s --convert-linattn-to-gpu="tf32x3=true sequence-parallel-blocks=0" -split-input-file | FileCheck %s --check-prefix=X3-COUNT
// RUN: linattn-opt %s --convert-linattn-to-gpu="tf32=true sequence-parallel-blocks=0" -split-input-file | FileCheck %s --check-prefix=X1-COUNT
// RUN: linattn-opt %s --convert-linattn-to-gpu="tf32x3=true chip=sm_75" -split-input-file | FileCheck %s --check-prefix=SM75
// RUN: linattn-opt %s --convert-linattn-to-gpu="tf32x3=true sequence-parallel-blocks=0" -split-input-file | FileCheck %s --check-prefix=EXP-X3
// RUN: linattn-opt %s --convert-linattn-to-gpu="tf32=true sequence-parallel-blocks=0" -split-input-file | FileCheck %s --check-prefix=EXP-X1

// tf32x3=true: f32 data takes the chunked kernels on tf32 tensor cores (it
// implies tf32), the tiles stay f32 (no cvt.rna as they are staged), and
// each product is three m16n8k8 mma.sync on one accumulator chain: lo_A·hi_B,
// hi_A·lo_B, hi_A·hi_B. Each f32 operand register x is split for the
// product (--cse merges the splits of one fragment): hi = (x + 0x1000) &
// ~0x1fff (x rounded at mantissa bit 13, ties away from zero), lo = x - hi
// in f32.

// CHECK-LABEL: func.func @scan_f32
// CHECK: call @__linattn_launch_linattn_scan_chunked_wide_forward_features_0(
// CHECK-LABEL: gpu.func @linattn_scan_chunked_wide_forward_features_0(
// CHECK-NOT: nvvm.convert.float.to.tf32
// CHECK: %[[ROUND:.*]] = arith.addi %[[X:.*]], %c4096_i32 : i32
// CHECK-NEXT: %[[HI:.*]] = arith.andi %[[ROUND]], %c-8192_i32 : i32
// CHECK-NEXT: %[[XF:.*]] = arith.bitcast %[[X]] : i32 to f32
// CHECK-NEXT: %[[HIF:.*]] = arith.bitcast %[[HI]] : i32 to f32
// CHECK-NEXT: %[[REST:.*]] = arith.subf %[[XF]], %[[HIF]] : f32
// CHECK-NEXT: arith.bitcast %[[REST]] : f32 to i32
// CHECK-NOT: nvvm.convert.float.to.tf32
// CHECK: %[[P1:.*]] = nvvm.mma.sync A[{{.*}}]  B[%[[BHI0:[0-9]+]], %[[BHI1:[0-9]+]]]  C[%cst, %cst, %cst, %cst]  {{.*}}multiplicandAPtxType = #nvvm.mma_type<tf32>, multiplicandBPtxType = #nvvm.mma_type<tf32>, shape = #nvvm.shape<m = 16, n = 8, k = 8>}
// CHECK-NEXT: %[[C0:.*]] = llvm.extractvalue %[[P1]][0]
// CHECK-NEXT: %[[C1:.*]] = llvm.extractvalue %[[P1]][1]
// CHECK-NEXT: %[[C2:.*]] = llvm.extractvalue %[[P1]][2]
// CHECK-NEXT: %[[C3:.*]] = llvm.extractvalue %[[P1]][3]
// CHECK-NEXT: %[[P2:.*]] = nvvm.mma.sync A[%[[AHI:[0-9]+]], {{.*}}]  B[%{{[^,]*}}, %{{[^]]*}}]  C[%[[C0]], %[[C1]], %[[C2]], %[[C3]]]
// CHECK-NEXT: %[[D0:.*]] = llvm.extractvalue %[[P2]][0]
// CHECK-NEXT: %[[D1:.*]] = llvm.extractvalue %[[P2]][1]
// CHECK-NEXT: %[[D2:.*]] = llvm.extractvalue %[[P2]][2]
// CHECK-NEXT: %[[D3:.*]] = llvm.extractvalue %[[P2]][3]
// CHECK-NEXT: nvvm.mma.sync A[%[[AHI]], {{.*}}]  B[%[[BHI0]], %[[BHI1]]]  C[%[[D0]], %[[D1]], %[[D2]], %[[D3]]]
// CHECK-NOT: nvvm.convert.float.to.tf32
// CHECK: gpu.return

// Three times the products of tf32=true (F = 16, C = 64, four warps: 64).
// X3-COUNT-LABEL: gpu.func @linattn_scan_chunked_wide_forward_features_0(
// X3-COUNT-COUNT-192: nvvm.mma.sync
// X3-COUNT-NOT: nvvm.mma.sync
// X3-COUNT: gpu.return
// X1-COUNT-LABEL: gpu.func @linattn_scan_chunked_wide_forward_features_0(
// X1-COUNT-COUNT-64: nvvm.mma.sync
// X1-COUNT-NOT: nvvm.mma.sync
// X1-COUNT: gpu.return

// Chips before sm_80 have no tf32 mma: the strict-f32 recurrent kernel.
// SM75-LABEL: func.func @scan_f32
// SM75: call @__linattn_launch_linattn_scan_forward_features_0(
// SM75-NOT: nvvm.mma.sync

func.func @scan_f32(%fq: tensor<2x7x16xf32>, %fk: tensor<2x7x16xf32>, %v: tensor<2x7x8xf32>) -> tensor<2x7x8xf32> {
  %o, %s, %z = linattn.scan forward %fq, %fk, %v : tensor<2x7x16xf32>, tensor<2x7x16xf32>, tensor<2x7x8xf32> -> tensor<2x7x8xf32>, tensor<2x16x8xf32>, tensor<2x16xf32>
  return %o : tensor<2x7x8xf32>
}

// -----

// The linear form's chunked kernels alike: the key-value summary's φ(K)ᵀV
// and the readout's φ(Q)S (S split too, where tf32=true rounds it as it is
// staged).

// CHECK-LABEL: func.func @linear_f32
// CHECK: call @__linattn_launch_linattn_kv_summary_chunked_features_0(
// CHECK: call @__linattn_launch_linattn_query_readout_chunked_features_1(
// CHECK-LABEL: gpu.func @linattn_kv_summary_chunked_features_0(
// The state carried across the chunk loop's iterations is not the MMAs'
// accumulator (the tensor cores round it toward zero, a drift over many
// chunks): each chunk's products are summed from zero, then added to it in
// f32.
// CHECK: scf.for {{.*}} iter_args(%[[STATE:arg[0-9]+]] = %cst
// CHECK-NOT: nvvm.convert.float.to.tf32
// CHECK: arith.andi %{{.*}}, %c-8192_i32 : i32
// CHECK: %[[S1:.*]] = nvvm.mma.sync A[{{.*}}]  B[%[[SB0:[0-9]+]], %[[SB1:[0-9]+]]]  C[%cst{{[_0-9]*}}, %cst
// CHECK: %[[S1C0:.*]] = llvm.extractvalue %[[S1]][0]
// CHECK: %[[S2:.*]] = nvvm.mma.sync A[%[[SAHI:[0-9]+]], {{.*}}]  B[{{.*}}]  C[%[[S1C0]],
// CHECK: %[[S2C0:.*]] = llvm.extractvalue %[[S2]][0]
// CHECK: nvvm.mma.sync A[%[[SAHI]], {{.*}}]  B[%[[SB0]], %[[SB1]]]  C[%[[S2C0]],
// CHECK-NOT: C[%[[STATE]]
// CHECK: arith.addf %[[STATE]], %{{[0-9]+}} : f32
// CHECK-LABEL: gpu.func @linattn_query_readout_chunked_features_1(
// CHECK-NOT: nvvm.convert.float.to.tf32
// CHECK: arith.andi %{{.*}}, %c-8192_i32 : i32
// CHECK: nvvm.mma.sync {{.*}}multiplicandAPtxType = #nvvm.mma_type<tf32>
// CHECK-NOT: nvvm.convert.float.to.tf32
// CHECK: gpu.return
// SM75-LABEL: func.func @linear_f32
// SM75: call @__linattn_launch_linattn_kv_summary_features_0(
// SM75: call @__linattn_launch_linattn_query_readout_features_1(
// SM75-NOT: nvvm.mma.sync

func.func @linear_f32(%fq: tensor<7x16xf32>, %fk: tensor<9x16xf32>, %v: tensor<9x8xf32>) -> tensor<7x8xf32> {
  %s, %z = linattn.kv_summary %fk, %v : tensor<9x16xf32>, tensor<9x8xf32> -> tensor<16x8xf32>, tensor<16xf32>
  %o = linattn.query_readout %fq, %s : tensor<7x16xf32>, tensor<16x8xf32> -> tensor<7x8xf32>
  return %o : tensor<7x8xf32>
}

// -----

// elu's exp: tf32x3 keeps the features f32 (their low parts are products
// too), and with them libdevice's expf (math.exp); tf32 rounds them to 11
// significant bits, which leave the special-function unit's 2^x visible
// in the last place alone, next to a tie.
// EXP-X3-LABEL: func.func @elu_f32
// EXP-X3-NOT: llvm.nvvm.ex2.approx
// EXP-X3: math.exp
// EXP-X3-NOT: llvm.nvvm.ex2.approx
// EXP-X1-LABEL: func.func @elu_f32
// EXP-X1-NOT: math.exp
// EXP-X1: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// EXP-X1-NOT: math.exp
func.func @elu_f32(%q: tensor<2x7x16xf32>, %k: tensor<2x7x16xf32>, %v: tensor<2x7x8xf32>) -> tensor<2x7x8xf32> {
  %fq = linattn.feature_map elu %q : tensor<2x7x16xf32> -> tensor<2x7x16xf32>
  %fk = linattn.feature_map elu %k : tensor<2x7x16xf32> -> tensor<2x7x16xf32>
  %o, %s, %z = linattn.scan forward %fq, %fk, %v : tensor<2x7x16xf32>, tensor<2x7x16xf32>, tensor<2x7x8xf32> -> tensor<2x7x8xf32>, tensor<2x16x8xf32>, tensor<2x16xf32>
  return %o : tensor<2x7x8xf32>
}
