// REQUIRES: cuda-toolkit, cuobjdump
// bulk-copies=true down to PTX and ptxas: bf16 at F = 128 (with
// wgmma-chunks=false chunks of 32, mma.sync, so the portable sm_90 with
// PTX 8.0, which bulk copies and mbarrier transaction counts need, where
// sm_90's minimum is 7.8). Every
// kernel that walks chunks stages whole ones by a bulk copy per row into
// the shared::cluster window, completing on the slot's mbarrier, and waits
// on it by phase parity. ptxas fits every kernel without spilling; SASS
// has the bulk copies (UBLKCP) and the mbarrier operations (SYNCS).

// RUN: linattn-opt %s --linattn-lower-to-nvvm="wgmma-chunks=false format=isa bulk-copies=true" | %linattn_python %S/Inputs/gpu_binary.py --ptx > %t.ptx
// RUN: FileCheck %s < %t.ptx
// RUN: %ptxas -arch=sm_90 -O3 -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS --implicit-check-not="{{[1-9][0-9]*}} bytes spill"
// RUN: %cuobjdump --dump-sass %t.cubin | FileCheck %s --check-prefix=SASS
// An explicit PTX version below 8.0 is an error, not NVPTX's abort.
// RUN: not linattn-opt %s --linattn-lower-to-nvvm="format=isa bulk-copies=true features=+ptx78" 2>&1 | FileCheck %s --check-prefix=OLD-PTX
// OLD-PTX: error: kernels with bulk copies ({{.*}}) need PTX 8.0 or later; the target #nvvm.target<O = 3, chip = "sm_90a", features = "+ptx78"> emits PTX 7.8
// OLD-PTX-NOT: LLVM ERROR

// CHECK: .version 8.0
// CHECK: .target sm_90
// CHECK-LABEL: .visible .entry linattn_scan_segment_states_forward_elu_0(
// CHECK: mbarrier.init.shared.b64
// CHECK: mbarrier.arrive.expect_tx.shared.b64
// CHECK: cvta.to.shared::cluster.u64
// CHECK: cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes
// CHECK: mbarrier.try_wait.parity.shared.b64
// CHECK: mbarrier.inval.shared.b64
// CHECK-LABEL: .visible .entry linattn_scan_segment_outputs_wide_forward_elu_2(
// CHECK: cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes
// CHECK: mbarrier.try_wait.parity.shared.b64
// CHECK-LABEL: .visible .entry linattn_scan_chunked_wide_forward_elu_3(
// CHECK: cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes
// CHECK: mbarrier.try_wait.parity.shared.b64

// PTXAS: Compiling entry function 'linattn_scan_chunked_wide_forward_elu_3'
// PTXAS: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PTXAS: Compiling entry function 'linattn_scan_segment_outputs_wide_forward_elu_2'
// PTXAS: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PTXAS: Compiling entry function 'linattn_scan_segment_states_forward_elu_0'
// PTXAS: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads

// SASS: Function : linattn_scan_chunked_wide_forward_elu_3
// SASS: SYNCS.EXCH.64
// SASS: UBLKCP.S.G
// SASS: SYNCS.PHASECHK.TRANS64
func.func @scan(%q: tensor<2x16x?x128xbf16>, %k: tensor<2x16x?x128xbf16>, %v: tensor<2x16x?x128xbf16>) -> tensor<2x16x?x128xbf16> {
  %fq = linattn.feature_map elu %q : tensor<2x16x?x128xbf16> -> tensor<2x16x?x128xbf16>
  %fk = linattn.feature_map elu %k : tensor<2x16x?x128xbf16> -> tensor<2x16x?x128xbf16>
  %o, %s, %z = linattn.scan forward %fq, %fk, %v : tensor<2x16x?x128xbf16>, tensor<2x16x?x128xbf16>, tensor<2x16x?x128xbf16> -> tensor<2x16x?x128xbf16>, tensor<2x16x128x128xf32>, tensor<2x16x128xf32>
  return %o : tensor<2x16x?x128xbf16>
}
