// RUN: linattn-opt %s --convert-linattn-to-gpu="phase-clocks=true sequence-parallel-blocks=0" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=ASYNC
// RUN: linattn-opt %s --convert-linattn-to-gpu="phase-clocks=true async-copies=false sequence-parallel-blocks=0" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=SYNC
// RUN: linattn-opt %s --convert-linattn-to-gpu="phase-clocks=true" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=SEG
// RUN: linattn-opt %s --convert-linattn-to-gpu="sequence-parallel-blocks=0" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=OFF
// RUN: linattn-opt %s --convert-linattn-to-gpu="phase-clocks=true scan-kernel=recurrent sequence-parallel-blocks=0" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=RASYNC
// RUN: linattn-opt %s --convert-linattn-to-gpu="phase-clocks=true scan-kernel=recurrent async-copies=false sequence-parallel-blocks=0" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=RSYNC
// RUN: linattn-opt %s --convert-linattn-to-gpu="phase-clocks=true scan-kernel=recurrent sequence-parallel-blocks=100000 min-segment-tokens=0" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=RSEG
// RUN: linattn-opt %s --convert-linattn-to-gpu="scan-kernel=recurrent sequence-parallel-blocks=0" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=ROFF

// phase-clocks: a workgroup buffer of 14 i64 after the others (the eleven
// phases' totals, the counter at the previous mark, the counter and the
// global timer at the start), thread 0's marks at the phases' ends in the
// order the chunk loop runs them, and at the end its block's record of 20
// i64 in a buffer, the kernel's last argument, which the host allocates
// (20 a block: 2 x 1 x 1 blocks here) and hands to the kernel's printer
// launched after it (one thread a record, blocks of 128). The timed kernel
// calls no printf: a call makes ptxas serialize its wgmmas.
//            ASYNC: %[[RECORDS:.*]] = memref.alloc() : memref<40xi64>
//       ASYNC-NEXT: %[[FLAT:.*]] = memref.cast %[[RECORDS]] : memref<40xi64> to memref<?xi64>
//       ASYNC-NEXT: call @__linattn_launch_linattn_scan_chunked_wide_forward_features_0(%c2, %c1, %c1, %c128, %c1, %c1, {{.*}}, %[[FLAT]])
//            ASYNC: %[[T:.*]] = bufferization.to_tensor %[[FLAT]]
//       ASYNC-NEXT: %[[R:.*]] = linattn.read_buffer %[[T]]
//       ASYNC-NEXT: call @__linattn_launch_linattn_scan_chunked_wide_forward_features_0_phase_clocks(%c1, %c1, %c1, %c128, %c1, %c1, %[[R]], %c2)
//      ASYNC-LABEL: gpu.func @linattn_scan_chunked_wide_forward_features_0(
//       ASYNC-SAME: %[[OUT:arg[0-9]+]]: memref<?xi64>) workgroup(
//       ASYNC-SAME: %[[CLOCKS:arg[0-9]+]] : memref<14xi64, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}) kernel
//            ASYNC: %[[START:.*]] = nvvm.read.ptx.sreg.clock64 : i64
//       ASYNC-NEXT: %[[TIMER:.*]] = nvvm.read.ptx.sreg.globaltimer : i64
//            ASYNC: %[[FIRST:.*]] = arith.cmpi eq, %thread_id_x, %c0 : index
//       ASYNC-NEXT: scf.if %[[FIRST]] {
// ASYNC-COUNT-11: memref.store %c0_i64, %[[CLOCKS]][%c{{[0-9]+}}]
//       ASYNC-NEXT: memref.store %[[START]], %[[CLOCKS]][%c11]
//       ASYNC-NEXT: memref.store %[[START]], %[[CLOCKS]][%c12]
//       ASYNC-NEXT: memref.store %[[TIMER]], %[[CLOCKS]][%c13]
// The prologue ends where the loop starts (the first chunk's copies issued).
//            ASYNC: nvvm.cp.async.commit.group
//            ASYNC: %[[NOW:.*]] = nvvm.read.ptx.sreg.clock64
//       ASYNC-NEXT: scf.if %[[FIRST]] {
//       ASYNC-NEXT: %[[LAST:.*]] = memref.load %[[CLOCKS]][%c11]
//       ASYNC-NEXT: %[[SINCE:.*]] = arith.subi %[[NOW]], %[[LAST]] : i64
//       ASYNC-NEXT: %[[TOTAL:.*]] = memref.load %[[CLOCKS]][%c0]
//       ASYNC-NEXT: %[[SUM:.*]] = arith.addi %[[TOTAL]], %[[SINCE]] : i64
//       ASYNC-NEXT: memref.store %[[SUM]], %[[CLOCKS]][%c0]
//       ASYNC-NEXT: memref.store %[[NOW]], %[[CLOCKS]][%c11]
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
// the start, the eleven totals.
//            ASYNC: memref.store %{{.*}}, %[[CLOCKS]][%c10]
//            ASYNC: nvvm.read.ptx.sreg.clock64
//       ASYNC-NEXT: nvvm.read.ptx.sreg.globaltimer
//       ASYNC-NEXT: scf.if %[[FIRST]] {
// ASYNC-COUNT-20: memref.store %{{.*}}, %[[OUT]][%{{.*}}] : memref<?xi64>
//        ASYNC-NOT: gpu.printf
//            ASYNC: gpu.return
//            ASYNC: gpu.func @linattn_scan_chunked_wide_forward_features_0_phase_clocks(%arg0: memref<?xi64>, %arg1: index) kernel
//            ASYNC: scf.if
//  ASYNC-COUNT-20: memref.load %arg0
//            ASYNC: gpu.printf "linattn-phase-clocks linattn_scan_chunked_wide_forward_features_0 block=%lld,%lld,%lld grid=%lld,%lld,%lld chunks=%lld cycles=%lld ns=%lld prologue=%lld issue=%lld wait=%lld map=%lld stage=%lld scores=%lld outputs=%lld update=%lld normalizer=%lld tokens=%lld epilogue=%lld\0A"
//       ASYNC-SAME: : i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64
// Synchronous staging: one phase for all of it (slot 4), none of the three
// of async copies.
//   SYNC-LABEL: gpu.func @linattn_scan_chunked_wide_forward_features_0(
//         SYNC: scf.for
//     SYNC-NOT: %{{.*}}[%c{{[123]}}] : memref<14xi64
//         SYNC: gpu.barrier
//     SYNC-NOT: %{{.*}}[%c{{[123]}}] : memref<14xi64
//         SYNC: memref.store %{{.*}}, %{{.*}}[%c4] : memref<14xi64
//         SYNC: memref.store %{{.*}}, %{{.*}}[%c5] : memref<14xi64
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
//    SEG-SAME: memref<14xi64, #gpu.address_space<workgroup>>
//         SEG: scf.for
//     SEG-NOT: %{{.*}}[%c5] : memref<14xi64
//         SEG: memref.store %{{.*}}, %{{.*}}[%c7] : memref<14xi64
//     SEG-NOT: gpu.printf
//         SEG: gpu.return
//         SEG: gpu.printf "linattn-phase-clocks linattn_scan_segment_states_forward_features_0 block=
//   SEG-LABEL: gpu.func @linattn_scan_segment_prefix_forward_features_1(
//     SEG-NOT: gpu.printf
//   SEG-LABEL: gpu.func @linattn_scan_segment_outputs_wide_forward_features_2(
//    SEG-SAME: memref<14xi64, #gpu.address_space<workgroup>>
//     SEG-NOT: gpu.printf
//         SEG: gpu.return
//         SEG: gpu.printf "linattn-phase-clocks linattn_scan_segment_outputs_wide_forward_features_2 block=
func.func @seg(%fq: tensor<80x4096x64xbf16>, %fk: tensor<80x4096x64xbf16>, %v: tensor<80x4096x64xbf16>) -> tensor<80x4096x64xbf16> {
  %o, %s, %z = linattn.scan forward %fq, %fk, %v : tensor<80x4096x64xbf16>, tensor<80x4096x64xbf16>, tensor<80x4096x64xbf16> -> tensor<80x4096x64xbf16>, tensor<80x64x64xf32>, tensor<80x64xf32>
  return %o : tensor<80x4096x64xbf16>
}

// -----

// The strict-fp32 recurrent scan (f32 data, scan-kernel=recurrent): the
// same buffers, record and printer; a staged block of tokens is its
// "chunk". Issue, wait and map with async copies, stage without; the
// normalizer (z and the denominators, normalized here) to the barrier after
// them, then the token steps; no scores, outputs or update.
//      RASYNC-LABEL: gpu.func @linattn_scan_forward_features_normalized_0(
//       RASYNC-SAME: %[[OUT:arg[0-9]+]]: memref<?xi64>) workgroup(
//       RASYNC-SAME: %[[CLOCKS:arg[0-9]+]] : memref<14xi64, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}) kernel
//            RASYNC: nvvm.read.ptx.sreg.clock64
//            RASYNC: nvvm.cp.async.commit.group
//            RASYNC: memref.store %{{.*}}, %[[CLOCKS]][%c0]
//            RASYNC: scf.for
//            RASYNC: gpu.barrier
//            RASYNC: nvvm.cp.async.commit.group
//       RASYNC-NEXT: nvvm.read.ptx.sreg.clock64
//            RASYNC: memref.store %{{.*}}, %[[CLOCKS]][%c1]
//            RASYNC: nvvm.cp.async.wait.group 1
//       RASYNC-NEXT: nvvm.read.ptx.sreg.clock64
//            RASYNC: memref.store %{{.*}}, %[[CLOCKS]][%c2]
//            RASYNC: gpu.barrier
//       RASYNC-NEXT: nvvm.read.ptx.sreg.clock64
//            RASYNC: memref.store %{{.*}}, %[[CLOCKS]][%c3]
//            RASYNC: gpu.barrier
//            RASYNC: gpu.shuffle
//            RASYNC: gpu.barrier
//       RASYNC-NEXT: nvvm.read.ptx.sreg.clock64
//            RASYNC: memref.store %{{.*}}, %[[CLOCKS]][%c8]
//            RASYNC: scf.for
//            RASYNC: scf.for
//            RASYNC: nvvm.read.ptx.sreg.clock64
//            RASYNC: memref.store %{{.*}}, %[[CLOCKS]][%c9]
//            RASYNC: scf.yield
//            RASYNC: memref.store %{{.*}}, %[[CLOCKS]][%c10]
// RASYNC-COUNT-20: memref.store %{{.*}}, %[[OUT]][%{{.*}}] : memref<?xi64>
//        RASYNC-NOT: gpu.printf
//            RASYNC: gpu.return
//            RASYNC: gpu.func @linattn_scan_forward_features_normalized_0_phase_clocks(
//            RASYNC: gpu.printf "linattn-phase-clocks linattn_scan_forward_features_normalized_0 block=
//      RSYNC-LABEL: gpu.func @linattn_scan_forward_features_normalized_0(
//            RSYNC: scf.for
//        RSYNC-NOT: %{{.*}}[%c{{[123]}}] : memref<14xi64
//            RSYNC: memref.store %{{.*}}, %{{.*}}[%c4] : memref<14xi64
//            RSYNC: memref.store %{{.*}}, %{{.*}}[%c8] : memref<14xi64
//            RSYNC: memref.store %{{.*}}, %{{.*}}[%c9] : memref<14xi64
// Sequence-parallel: the segment states and the segments' outputs timed,
// the scan over the segments not.
//            RSEG: call @__linattn_launch_linattn_scan_segment_states_forward_features_normalized_0(
//            RSEG: call @__linattn_launch_linattn_scan_segment_states_forward_features_normalized_0_phase_clocks(
//            RSEG: call @__linattn_launch_linattn_scan_segment_prefix_forward_features_normalized_1(
//        RSEG-NOT: phase_clocks(
//            RSEG: call @__linattn_launch_linattn_scan_segment_outputs_forward_features_normalized_2(
//            RSEG: call @__linattn_launch_linattn_scan_segment_outputs_forward_features_normalized_2_phase_clocks(
//             ROFF: gpu.func @linattn_scan_forward_features_normalized_0(
//         ROFF-NOT: nvvm.read.ptx.sreg.clock64
//             ROFF: gpu.return
func.func @recurrent(%fq: tensor<2x1000x64xf32>, %fk: tensor<2x1000x64xf32>, %v: tensor<2x1000x64xf32>) -> tensor<2x1000x64xf32> {
  %o, %s, %z = linattn.scan forward %fq, %fk, %v normalize(eps = 1.0e-6) : tensor<2x1000x64xf32>, tensor<2x1000x64xf32>, tensor<2x1000x64xf32> -> tensor<2x1000x64xf32>, tensor<2x64x64xf32>, tensor<2x64xf32>
  return %o : tensor<2x1000x64xf32>
}
