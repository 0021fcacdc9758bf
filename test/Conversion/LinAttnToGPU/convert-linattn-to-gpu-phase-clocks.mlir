// RUN: linattn-opt %s --convert-linattn-to-gpu="phase-clocks=true sequence-parallel-blocks=0" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=ASYNC
// RUN: linattn-opt %s --convert-linattn-to-gpu="phase-clocks=true async-copies=false sequence-parallel-blocks=0" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=SYNC
// RUN: linattn-opt %s --convert-linattn-to-gpu="phase-clocks=true" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=SEG
// RUN: linattn-opt %s --convert-linattn-to-gpu="sequence-parallel-blocks=0" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=OFF

// phase-clocks: a workgroup buffer of 12 i64 after the others (the nine
// phases' totals, the counter at the previous mark, the counter and the
// global timer at the start), thread 0's marks at the phases' ends in the
// order the chunk loop runs them, and at the end its block's record of 18
// i64 in a buffer, the kernel's last argument, which the host allocates
// (18 a block: 2 x 1 x 1 blocks here) and hands to the kernel's printer
// launched after it (one thread a record, blocks of 128). The timed kernel
// calls no printf: a call makes ptxas serialize its wgmmas.
//            ASYNC: %[[RECORDS:.*]] = memref.alloc() : memref<36xi64>
//       ASYNC-NEXT: %[[FLAT:.*]] = memref.cast %[[RECORDS]] : memref<36xi64> to memref<?xi64>
//       ASYNC-NEXT: call @__linattn_launch_linattn_scan_chunked_wide_forward_features_0(%c2, %c1, %c1, %c128, %c1, %c1, {{.*}}, %[[FLAT]])
//            ASYNC: %[[T:.*]] = bufferization.to_tensor %[[FLAT]]
//       ASYNC-NEXT: %[[R:.*]] = linattn.read_buffer %[[T]]
//       ASYNC-NEXT: call @__linattn_launch_linattn_scan_chunked_wide_forward_features_0_phase_clocks(%c1, %c1, %c1, %c128, %c1, %c1, %[[R]], %c2)
//      ASYNC-LABEL: gpu.func @linattn_scan_chunked_wide_forward_features_0(
//       ASYNC-SAME: %[[OUT:arg[0-9]+]]: memref<?xi64>) workgroup(
//       ASYNC-SAME: %[[CLOCKS:arg[0-9]+]] : memref<12xi64, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}) kernel
//            ASYNC: %[[START:.*]] = nvvm.read.ptx.sreg.clock64 : i64
//       ASYNC-NEXT: %[[TIMER:.*]] = nvvm.read.ptx.sreg.globaltimer : i64
//            ASYNC: %[[FIRST:.*]] = arith.cmpi eq, %thread_id_x, %c0 : index
//       ASYNC-NEXT: scf.if %[[FIRST]] {
// ASYNC-COUNT-9: memref.store %c0_i64, %[[CLOCKS]][%c{{[0-8]}}]
//       ASYNC-NEXT: memref.store %[[START]], %[[CLOCKS]][%c9]
//       ASYNC-NEXT: memref.store %[[START]], %[[CLOCKS]][%c10]
//       ASYNC-NEXT: memref.store %[[TIMER]], %[[CLOCKS]][%c11]
// The prologue ends where the loop starts (the first chunk's copies issued).
//            ASYNC: nvvm.cp.async.commit.group
//            ASYNC: %[[NOW:.*]] = nvvm.read.ptx.sreg.clock64
//       ASYNC-NEXT: scf.if %[[FIRST]] {
//       ASYNC-NEXT: %[[LAST:.*]] = memref.load %[[CLOCKS]][%c9]
//       ASYNC-NEXT: %[[SINCE:.*]] = arith.subi %[[NOW]], %[[LAST]] : i64
//       ASYNC-NEXT: %[[TOTAL:.*]] = memref.load %[[CLOCKS]][%c0]
//       ASYNC-NEXT: %[[SUM:.*]] = arith.addi %[[TOTAL]], %[[SINCE]] : i64
//       ASYNC-NEXT: memref.store %[[SUM]], %[[CLOCKS]][%c0]
//       ASYNC-NEXT: memref.store %[[NOW]], %[[CLOCKS]][%c9]
//            ASYNC: scf.for
// Issue: the barrier that frees a slot and the next chunk's copies.
//            ASYNC: gpu.barrier
//            ASYNC: nvvm.cp.async.commit.group
//       ASYNC-NEXT: nvvm.read.ptx.sreg.clock64
//            ASYNC: memref.store %{{.*}}, %[[CLOCKS]][%c1]
// Wait: for the current chunk's copies.
//            ASYNC: nvvm.cp.async.wait.group 1
//       ASYNC-NEXT: nvvm.read.ptx.sreg.clock64
//            ASYNC: memref.store %{{.*}}, %[[CLOCKS]][%c2]
// Map: elu + 1 in place, to the barrier that publishes the tiles.
//            ASYNC: gpu.barrier
//       ASYNC-NEXT: nvvm.read.ptx.sreg.clock64
//            ASYNC: memref.store %{{.*}}, %[[CLOCKS]][%c3]
// Scores (wgmma) and the state stored, to the barrier after them.
//            ASYNC: nvvm.wgmma.mma_async
//            ASYNC: gpu.barrier
//       ASYNC-NEXT: nvvm.read.ptx.sreg.clock64
//            ASYNC: memref.store %{{.*}}, %[[CLOCKS]][%c5]
// Outputs (mma.sync) and O's stores.
//            ASYNC: nvvm.mma.sync
//            ASYNC: memref.store %{{.*}}, %[[CLOCKS]][%c6]
// The state update.
//            ASYNC: nvvm.wgmma.mma_async
//            ASYNC: memref.store %{{.*}}, %[[CLOCKS]][%c7]
//            ASYNC: scf.yield
// The epilogue, then the record: block, grid, chunks, cycles and ns from
// the start, the nine totals.
//            ASYNC: memref.store %{{.*}}, %[[CLOCKS]][%c8]
//            ASYNC: nvvm.read.ptx.sreg.clock64
//       ASYNC-NEXT: nvvm.read.ptx.sreg.globaltimer
//       ASYNC-NEXT: scf.if %[[FIRST]] {
// ASYNC-COUNT-18: memref.store %{{.*}}, %[[OUT]][%{{.*}}] : memref<?xi64>
//        ASYNC-NOT: gpu.printf
//            ASYNC: gpu.return
//            ASYNC: gpu.func @linattn_scan_chunked_wide_forward_features_0_phase_clocks(%arg0: memref<?xi64>, %arg1: index) kernel
//            ASYNC: scf.if
//  ASYNC-COUNT-18: memref.load %arg0
//            ASYNC: gpu.printf "linattn-phase-clocks linattn_scan_chunked_wide_forward_features_0 block=%lld,%lld,%lld grid=%lld,%lld,%lld chunks=%lld cycles=%lld ns=%lld prologue=%lld issue=%lld wait=%lld map=%lld stage=%lld scores=%lld outputs=%lld update=%lld epilogue=%lld\0A"
//       ASYNC-SAME: : i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64
// Synchronous staging: one phase for all of it (slot 4), none of the three
// of async copies.
//   SYNC-LABEL: gpu.func @linattn_scan_chunked_wide_forward_features_0(
//         SYNC: scf.for
//     SYNC-NOT: %{{.*}}[%c{{[123]}}] : memref<12xi64
//         SYNC: gpu.barrier
//     SYNC-NOT: %{{.*}}[%c{{[123]}}] : memref<12xi64
//         SYNC: memref.store %{{.*}}, %{{.*}}[%c4] : memref<12xi64
//         SYNC: memref.store %{{.*}}, %{{.*}}[%c5] : memref<12xi64
//         SYNC: gpu.func @linattn_scan_chunked_wide_forward_features_0_phase_clocks(
//         SYNC: gpu.printf "linattn-phase-clocks linattn_scan_chunked_wide_forward_features_0
// Without the option: no buffers, clock, printer or printf.
//          OFF: call @__linattn_launch_linattn_scan_chunked_wide_forward_features_0(
//      OFF-NOT: phase_clocks
//    OFF-LABEL: gpu.func @linattn_scan_chunked_wide_forward_features_0(
//      OFF-NOT: xi64
//      OFF-NOT: nvvm.read.ptx.sreg.clock64
//      OFF-NOT: gpu.printf
//          OFF: gpu.return
func.func @f64(%fq: tensor<2x1000x64xbf16>, %fk: tensor<2x1000x64xbf16>, %v: tensor<2x1000x64xbf16>) -> tensor<2x1000x64xbf16> {
  %o, %s, %z = linattn.scan forward %fq, %fk, %v : tensor<2x1000x64xbf16>, tensor<2x1000x64xbf16>, tensor<2x1000x64xbf16> -> tensor<2x1000x64xbf16>, tensor<2x64x64xf32>, tensor<2x64xf32>
  return %o : tensor<2x1000x64xbf16>
}

// -----

// Sequence-parallel: the segment states (no scores or outputs: their update
// ends each chunk) and the segments' outputs are timed, each launch followed
// by its printer's; the scan over the segments' states has no chunk loop and
// no clocks.
//         SEG: call @__linattn_launch_linattn_scan_segment_states_forward_features_0(
//    SEG-NEXT: bufferization.to_tensor
//         SEG: call @__linattn_launch_linattn_scan_segment_states_forward_features_0_phase_clocks(
//         SEG: call @__linattn_launch_linattn_scan_segment_prefix_forward_features_1(
//     SEG-NOT: phase_clocks(
//         SEG: call @__linattn_launch_linattn_scan_segment_outputs_wide_forward_features_2(
//         SEG: call @__linattn_launch_linattn_scan_segment_outputs_wide_forward_features_2_phase_clocks(
//   SEG-LABEL: gpu.func @linattn_scan_segment_states_forward_features_0(
//    SEG-SAME: memref<12xi64, #gpu.address_space<workgroup>>
//         SEG: scf.for
//     SEG-NOT: %{{.*}}[%c5] : memref<12xi64
//         SEG: memref.store %{{.*}}, %{{.*}}[%c7] : memref<12xi64
//     SEG-NOT: gpu.printf
//         SEG: gpu.return
//         SEG: gpu.printf "linattn-phase-clocks linattn_scan_segment_states_forward_features_0 block=
//   SEG-LABEL: gpu.func @linattn_scan_segment_prefix_forward_features_1(
//     SEG-NOT: gpu.printf
//   SEG-LABEL: gpu.func @linattn_scan_segment_outputs_wide_forward_features_2(
//    SEG-SAME: memref<12xi64, #gpu.address_space<workgroup>>
//     SEG-NOT: gpu.printf
//         SEG: gpu.return
//         SEG: gpu.printf "linattn-phase-clocks linattn_scan_segment_outputs_wide_forward_features_2 block=
func.func @seg(%fq: tensor<80x4096x64xbf16>, %fk: tensor<80x4096x64xbf16>, %v: tensor<80x4096x64xbf16>) -> tensor<80x4096x64xbf16> {
  %o, %s, %z = linattn.scan forward %fq, %fk, %v : tensor<80x4096x64xbf16>, tensor<80x4096x64xbf16>, tensor<80x4096x64xbf16> -> tensor<80x4096x64xbf16>, tensor<80x64x64xf32>, tensor<80x64xf32>
  return %o : tensor<80x4096x64xbf16>
}
