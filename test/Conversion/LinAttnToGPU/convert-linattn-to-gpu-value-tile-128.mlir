// Value tiles of 128 columns (value-tile=128): at F = 128 a block of eight
// warps (C = 64, two warps per row tile) computes its chunks' scores once
// for 128 value columns, V_c and S in tiles of 128 columns (rows of 136
// elements), more than 48 KiB of workgroup memory, which the dynamic shared
// memory pass moves into gpu.dynamic_shared_memory. Dv = 200 takes two
// tiles (grid y); a static Dv of at most 64 keeps tiles of 64; value-tile=64
// (the default) never takes 128; f16 keeps the state's column scales for
// 128 columns.

// RUN: linattn-opt %s --convert-linattn-to-gpu="value-tile=128 sequence-parallel-blocks=0 async-copies=false wgmma=false narrow-offset-limit=2147483648" --canonicalize --cse -split-input-file | FileCheck %s
// RUN: linattn-opt %s --convert-linattn-to-gpu="value-tile=128 sequence-parallel-blocks=0 async-copies=false wgmma=false narrow-offset-limit=2147483648" --linattn-gpu-dynamic-shared-memory="chip=sm_90" -split-input-file | FileCheck %s --check-prefix=DYNAMIC
// RUN: linattn-opt %s --convert-linattn-to-gpu="sequence-parallel-blocks=0 async-copies=false wgmma=false narrow-offset-limit=2147483648" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=DEFAULT

// CHECK-LABEL: func.func @wide
//       CHECK: call @__linattn_launch_linattn_scan_chunked_forward_elu_normalized_3(%c8, %c2, %c1, %c256, %c1, %c1,
//       CHECK: gpu.func @linattn_scan_chunked_forward_elu_normalized_3(
//  CHECK-SAME: workgroup(%{{.*}} : memref<8704xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<8704xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<8704xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<4608xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<17408xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<128xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<128xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}) kernel
//  CHECK-SAME: attributes {known_block_size = array<i32: 256, 1, 1>}

// DYNAMIC-LABEL: func.func @wide
//       DYNAMIC: gpu.func @linattn_scan_chunked_forward_elu_normalized_3(
//  DYNAMIC-SAME: kernel attributes {known_block_size = array<i32: 256, 1, 1>}
//       DYNAMIC: memref.get_global @linattn_dynamic_shared

// DEFAULT-LABEL: func.func @wide
//       DEFAULT: call @__linattn_launch_linattn_scan_chunked_forward_elu_normalized_3(%c8, %c4, %c1, %c128, %c1, %c1,
func.func @wide(%q: tensor<2x4x?x128xbf16>, %k: tensor<2x4x?x128xbf16>, %v: tensor<2x4x?x200xbf16>) -> tensor<2x4x?x200xbf16> {
  %fq = linattn.feature_map elu %q : tensor<2x4x?x128xbf16> -> tensor<2x4x?x128xbf16>
  %fk = linattn.feature_map elu %k : tensor<2x4x?x128xbf16> -> tensor<2x4x?x128xbf16>
  %o, %s, %z = linattn.scan forward %fq, %fk, %v normalize(eps = 1.0e-6) : tensor<2x4x?x128xbf16>, tensor<2x4x?x128xbf16>, tensor<2x4x?x200xbf16> -> tensor<2x4x?x200xbf16>, tensor<2x4x128x200xf32>, tensor<2x4x128xf32>
  return %o : tensor<2x4x?x200xbf16>
}

// -----

// CHECK-LABEL: func.func @narrow
//       CHECK: call @__linattn_launch_linattn_scan_chunked_forward_elu_normalized_3(%c8, %c1, %c1, %c128, %c1, %c1,
//       CHECK: gpu.func @linattn_scan_chunked_forward_elu_normalized_3(
//  CHECK-SAME: memref<4608xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<4608xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<4608xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<4608xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<4608xbf16
//  CHECK-SAME: attributes {known_block_size = array<i32: 128, 1, 1>}
func.func @narrow(%q: tensor<2x4x?x64xbf16>, %k: tensor<2x4x?x64xbf16>, %v: tensor<2x4x?x64xbf16>) -> tensor<2x4x?x64xbf16> {
  %fq = linattn.feature_map elu %q : tensor<2x4x?x64xbf16> -> tensor<2x4x?x64xbf16>
  %fk = linattn.feature_map elu %k : tensor<2x4x?x64xbf16> -> tensor<2x4x?x64xbf16>
  %o, %s, %z = linattn.scan forward %fq, %fk, %v normalize(eps = 1.0e-6) : tensor<2x4x?x64xbf16>, tensor<2x4x?x64xbf16>, tensor<2x4x?x64xbf16> -> tensor<2x4x?x64xbf16>, tensor<2x4x64x64xf32>, tensor<2x4x64xf32>
  return %o : tensor<2x4x?x64xbf16>
}

// -----

// The state's column scales and their inverses: 2 x 128 f32.
// CHECK-LABEL: func.func @wide_f16
//       CHECK: gpu.func @linattn_scan_chunked_forward_elu_normalized_3(
//  CHECK-SAME: %{{.*}} : memref<256xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}) kernel
//  CHECK-SAME: attributes {known_block_size = array<i32: 256, 1, 1>}
func.func @wide_f16(%q: tensor<2x4x?x128xf16>, %k: tensor<2x4x?x128xf16>, %v: tensor<2x4x?x128xf16>) -> tensor<2x4x?x128xf16> {
  %fq = linattn.feature_map elu %q : tensor<2x4x?x128xf16> -> tensor<2x4x?x128xf16>
  %fk = linattn.feature_map elu %k : tensor<2x4x?x128xf16> -> tensor<2x4x?x128xf16>
  %o, %s, %z = linattn.scan forward %fq, %fk, %v normalize(eps = 1.0e-6) : tensor<2x4x?x128xf16>, tensor<2x4x?x128xf16>, tensor<2x4x?x128xf16> -> tensor<2x4x?x128xf16>, tensor<2x4x128x128xf32>, tensor<2x4x128xf32>
  return %o : tensor<2x4x?x128xf16>
}
