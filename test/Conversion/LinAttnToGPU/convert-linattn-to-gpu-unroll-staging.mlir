// RUN: linattn-opt %s --convert-linattn-to-gpu="unroll-staging=true sequence-parallel-blocks=0" --canonicalize --cse | FileCheck %s --check-prefix=ON
// RUN: linattn-opt %s --convert-linattn-to-gpu="sequence-parallel-blocks=0" --canonicalize --cse | FileCheck %s --check-prefix=OFF

// unroll-staging: a thread's 16-byte groups of a chunk (F = 64, chunks of
// 64, 128 threads: 512 groups of each tile, four a thread) go one after the
// other at tid, tid + 128, tid + 256, tid + 384 instead of in a loop over
// them: in the chunk loop the next chunk's copies of φ(Q_c) and φ(K_c)
// (eight), of V_c (four), then elu + 1 applied in place to four groups of
// each feature tile. Only the element-wise path of unaligned rows keeps its
// loop.
//     ON-LABEL: gpu.func @linattn_scan_chunked_wide_forward_elu_0(
//           ON: scf.for %{{.*}} = %c0 to %arg4 step %c64
//       ON-NOT: scf.for %{{.*}} = %thread_id_x to %c512
//  ON-COUNT-8: nvgpu.device_async_copy %arg{{[01]}}
//       ON-NOT: scf.for %{{.*}} = %thread_id_x to %c512
//  ON-COUNT-4: nvgpu.device_async_copy %arg2
//       ON-NOT: scf.for %{{.*}} = %thread_id_x to %c512
//           ON: nvvm.cp.async.wait.group 1
//       ON-NOT: scf.for %{{.*}} = %thread_id_x to %c512
//   ON-COUNT-8: vector.store {{.*}} : memref<8192xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
//       ON-NOT: scf.for %{{.*}} = %thread_id_x to %c512
//           ON: nvvm.wgmma.mma_async
//           ON: gpu.return
// The default: loops over the groups.
//    OFF-LABEL: gpu.func @linattn_scan_chunked_wide_forward_elu_0(
//          OFF: scf.for %{{.*}} = %c0 to %arg4 step %c64
//          OFF: scf.for %{{.*}} = %thread_id_x to %c512 step %c128 {
//     OFF-NEXT: arith.divui
//          OFF: nvgpu.device_async_copy %arg0
//     OFF-NEXT: nvgpu.device_async_copy %arg1
//          OFF: nvvm.cp.async.wait.group 1
//          OFF: scf.for %{{.*}} = %thread_id_x to %c512 step %c128 {
//          OFF: gpu.return
func.func @f64(%fq: tensor<2x1000x64xbf16>, %fk: tensor<2x1000x64xbf16>, %v: tensor<2x1000x64xbf16>) -> tensor<2x1000x64xbf16> {
  %fq1 = linattn.feature_map elu %fq : tensor<2x1000x64xbf16> -> tensor<2x1000x64xbf16>
  %fk1 = linattn.feature_map elu %fk : tensor<2x1000x64xbf16> -> tensor<2x1000x64xbf16>
  %o, %s, %z = linattn.scan forward %fq1, %fk1, %v : tensor<2x1000x64xbf16>, tensor<2x1000x64xbf16>, tensor<2x1000x64xbf16> -> tensor<2x1000x64xbf16>, tensor<2x64x64xf32>, tensor<2x64xf32>
  return %o : tensor<2x1000x64xbf16>
}
