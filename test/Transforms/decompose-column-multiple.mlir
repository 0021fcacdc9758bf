// RUN: linattn-opt %s -linattn-decompose="column-multiple=16" -split-input-file | FileCheck %s
// RUN: linattn-opt %s -linattn-decompose="column-multiple=16 column-multiple-f32=true" -split-input-file | FileCheck %s --check-prefix=F32

// bf16, Dv = 24: [V, 1] and [g, h] are 32 columns wide, their columns 25 to
// 31 zero (filled where they stand), so that the scans that take them as
// queries and keys have 32 features (the tensor-core kernels take multiples
// of 16); the fourth scan's sums are 32 wide, dV's scan keeps 24 columns.
// CHECK-LABEL: func.func @bf16_padded
// CHECK: %[[VE:.*]] = tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, 0] [2, %{{.*}}, 24] [1, 1, 1] : tensor<2x?x24xbf16> into tensor<2x?x32xbf16>
// CHECK: %[[V1:.*]] = tensor.insert_slice %{{.*}} into %[[VE]][0, 0, 24] [2, %{{.*}}, 1] [1, 1, 1] : tensor<2x?x1xbf16> into tensor<2x?x32xbf16>
// CHECK: %[[PAD:.*]] = tensor.extract_slice %[[V1]][0, 0, 25] [2, %{{.*}}, 7] [1, 1, 1]
// CHECK: %[[ZEROS:.*]] = linalg.fill ins(%{{.*}} : bf16) outs(%[[PAD]] : tensor<2x?x7xbf16>)
// CHECK: %[[V1P:.*]] = tensor.insert_slice %[[ZEROS]] into %[[V1]][0, 0, 25] [2, %{{.*}}, 7]
// CHECK: %[[SUMS:.*]], %{{.*}}, %{{.*}} = linattn.scan forward %{{.*}}, %{{.*}}, %[[V1P]] : {{.*}} -> tensor<2x?x32xbf16>, tensor<2x16x32xf32>, tensor<2x16xf32>
// CHECK: %[[GH0:.*]] = tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, 24] [2, %{{.*}}, 1]
// CHECK: %[[GPAD:.*]] = tensor.extract_slice %[[GH0]][0, 0, 25] [2, %{{.*}}, 7]
// CHECK: %[[GZEROS:.*]] = linalg.fill ins(%{{.*}} : bf16) outs(%[[GPAD]] : tensor<2x?x7xbf16>)
// CHECK: %[[GH:.*]] = tensor.insert_slice %[[GZEROS]] into %[[GH0]][0, 0, 25]
// CHECK: linattn.scan forward %[[GH]], %[[V1P]], %{{.*}} : tensor<2x?x32xbf16>, tensor<2x?x32xbf16>, tensor<2x?x16xbf16> -> tensor<2x?x16xbf16>, tensor<2x32x16xf32>, tensor<2x32xf32>
// CHECK: linattn.scan reverse %[[V1P]], %[[GH]], %{{.*}} : tensor<2x?x32xbf16>, tensor<2x?x32xbf16>, tensor<2x?x16xbf16>
// CHECK: linattn.scan reverse {{.*}} -> tensor<2x?x24xbf16>, tensor<2x16x24xf32>, tensor<2x16xf32>
// F32-LABEL: func.func @bf16_padded
// F32: tensor<2x?x32xbf16>
func.func @bf16_padded(%q: tensor<2x?x16xbf16>, %k: tensor<2x?x16xbf16>, %v: tensor<2x?x24xbf16>, %do: tensor<2x?x24xbf16>)
    -> (tensor<2x?x16xbf16>, tensor<2x?x16xbf16>, tensor<2x?x24xbf16>) {
  %dq, %dk, %dv = linattn.scan_grad forward %q, %k, %v, %do normalize(eps = 1.0e-6)
      : tensor<2x?x16xbf16>, tensor<2x?x16xbf16>, tensor<2x?x24xbf16>, tensor<2x?x24xbf16>
      -> tensor<2x?x16xbf16>, tensor<2x?x16xbf16>, tensor<2x?x24xbf16>
  return %dq, %dk, %dv : tensor<2x?x16xbf16>, tensor<2x?x16xbf16>, tensor<2x?x24xbf16>
}

// -----

// f32 keeps Dv + 1 = 25 columns unless column-multiple-f32 (the GPU's tf32
// scans) asks for 32; from an initial state, [S₀, z₀] is padded alike.
// CHECK-LABEL: func.func @f32_from_a_state
// CHECK-NOT: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2x{{.*}}x7xf32>)
// CHECK: linattn.scan forward %{{.*}}, %{{.*}}, %{{.*}} init(%{{.*}}, %{{.*}}) : tensor<2x?x16xf32>, tensor<2x?x16xf32>, tensor<2x?x25xf32>, tensor<2x16x25xf32>, tensor<2x16xf32>
// F32-LABEL: func.func @f32_from_a_state
// F32: linattn.scan forward %{{.*}}, %{{.*}}, %{{.*}} init(%{{.*}}, %{{.*}}) : tensor<2x?x16xf32>, tensor<2x?x16xf32>, tensor<2x?x32xf32>, tensor<2x16x32xf32>, tensor<2x16xf32>
// F32: linattn.scan forward %{{.*}}, %{{.*}}, %{{.*}} init(%{{.*}}, %{{.*}}) : tensor<2x?x32xf32>, tensor<2x?x32xf32>, tensor<2x?x16xf32>, tensor<2x32x16xf32>, tensor<2x32xf32>
// F32: linattn.scan reverse %{{.*}}, %{{.*}}, %{{.*}} init(%{{.*}}, %{{.*}}) : tensor<2x?x32xf32>, tensor<2x?x32xf32>, tensor<2x?x16xf32>, tensor<2x32x16xf32>, tensor<2x32xf32>
func.func @f32_from_a_state(%q: tensor<2x?x16xf32>, %k: tensor<2x?x16xf32>, %v: tensor<2x?x24xf32>, %do: tensor<2x?x24xf32>,
                            %s0: tensor<2x16x24xf32>, %z0: tensor<2x16xf32>, %ds: tensor<2x16x24xf32>, %dz: tensor<2x16xf32>)
    -> (tensor<2x?x16xf32>, tensor<2x?x16xf32>, tensor<2x?x24xf32>, tensor<2x16x24xf32>, tensor<2x16xf32>) {
  %dq, %dk, %dv, %ds0, %dz0 = linattn.scan_grad forward %q, %k, %v, %do
      init(%s0, %z0 : tensor<2x16x24xf32>, tensor<2x16xf32>)
      final_grad(%ds, %dz : tensor<2x16x24xf32>, tensor<2x16xf32>)
      normalize(eps = 1.0e-6)
      : tensor<2x?x16xf32>, tensor<2x?x16xf32>, tensor<2x?x24xf32>, tensor<2x?x24xf32>
      -> tensor<2x?x16xf32>, tensor<2x?x16xf32>, tensor<2x?x24xf32>, tensor<2x16x24xf32>, tensor<2x16xf32>
  return %dq, %dk, %dv, %ds0, %dz0 : tensor<2x?x16xf32>, tensor<2x?x16xf32>, tensor<2x?x24xf32>, tensor<2x16x24xf32>, tensor<2x16xf32>
}

// -----

// A dynamic Dv is left at Dv + 1 (no kernel takes a dynamic feature size).
// CHECK-LABEL: func.func @dynamic_values
// CHECK-NOT: x7xbf16
// CHECK: return
func.func @dynamic_values(%q: tensor<2x?x16xbf16>, %k: tensor<2x?x16xbf16>, %v: tensor<2x?x?xbf16>, %do: tensor<2x?x?xbf16>)
    -> (tensor<2x?x16xbf16>, tensor<2x?x16xbf16>, tensor<2x?x?xbf16>) {
  %dq, %dk, %dv = linattn.scan_grad forward %q, %k, %v, %do normalize(eps = 1.0e-6)
      : tensor<2x?x16xbf16>, tensor<2x?x16xbf16>, tensor<2x?x?xbf16>, tensor<2x?x?xbf16>
      -> tensor<2x?x16xbf16>, tensor<2x?x16xbf16>, tensor<2x?x?xbf16>
  return %dq, %dk, %dv : tensor<2x?x16xbf16>, tensor<2x?x16xbf16>, tensor<2x?x?xbf16>
}
