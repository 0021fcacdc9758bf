// Every workgroup buffer is 16-byte aligned. The NVPTX backend merges the
// step kernel's scalar loads of φ(q) and φ(k) (F = 7) into 16-byte
// ld.shared.v4: from buffers declared 4-byte aligned, an H100 stopped with
// CUDA_ERROR_MISALIGNED_ADDRESS. The recurrent scan's buffers likewise.

// RUN: linattn-opt %s --linattn-lower-to-nvvm="format=isa block-size=64" | %linattn_python %S/Inputs/gpu_binary.py --ptx | FileCheck %s
// RUN: linattn-opt %s --linattn-lower-to-nvvm="format=isa block-size=64" | %linattn_python %S/Inputs/gpu_binary.py --ptx | FileCheck %s --check-prefix=ALIGN

// CHECK: .shared .align 16 .b8 __wg_linattn_step_features_0_0[28];
// CHECK: .shared .align 16 .b8 __wg_linattn_step_features_0_1[28];
// CHECK: ld.shared.v4.b32 {{.*}}[__wg_linattn_step_features_0_0];
// ALIGN-NOT: .shared .align {{(1|2|4|8) }}
// ALIGN: .shared .align 16
// ALIGN-NOT: .shared .align {{(1|2|4|8) }}

func.func @step(%fq: tensor<7xf32>, %fk: tensor<7xf32>, %v: tensor<100xf32>, %s: tensor<7x100xf32>, %z: tensor<7xf32>) -> (tensor<100xf32>, tensor<7x100xf32>, tensor<7xf32>) {
  %o, %s1, %z1 = linattn.step %fq, %fk, %v, %s, %z : tensor<7xf32>, tensor<7xf32>, tensor<100xf32>, tensor<7x100xf32>, tensor<7xf32> -> tensor<100xf32>, tensor<7x100xf32>, tensor<7xf32>
  return %o, %s1, %z1 : tensor<100xf32>, tensor<7x100xf32>, tensor<7xf32>
}

func.func @scan(%fq: tensor<2x9x7xf32>, %fk: tensor<2x9x7xf32>, %v: tensor<2x9x8xf32>) -> tensor<2x9x8xf32> {
  %o, %s, %z = linattn.scan reverse %fq, %fk, %v : tensor<2x9x7xf32>, tensor<2x9x7xf32>, tensor<2x9x8xf32> -> tensor<2x9x8xf32>, tensor<2x7x8xf32>, tensor<2x7xf32>
  return %o : tensor<2x9x8xf32>
}
