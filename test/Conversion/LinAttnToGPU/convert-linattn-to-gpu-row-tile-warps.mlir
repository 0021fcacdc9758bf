// RUN: linattn-opt %s --convert-linattn-to-gpu="tf32=true sequence-parallel-blocks=0" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=FEWEST
// RUN: linattn-opt %s --convert-linattn-to-gpu="tf32=true sequence-parallel-blocks=0 row-tile-warps=1" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=FEWEST
// RUN: linattn-opt %s --convert-linattn-to-gpu="tf32=true sequence-parallel-blocks=0 row-tile-warps=2" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=TWO
// RUN: linattn-opt %s --convert-linattn-to-gpu="tf32=true sequence-parallel-blocks=0 row-tile-warps=2 chunk-size=16" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=C16
// RUN: not linattn-opt %s --convert-linattn-to-gpu="row-tile-warps=3" -split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not linattn-opt %s --convert-linattn-to-gpu="row-tile-warps=-1" -split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD

// row-tile-warps: warps per 16-row tile of the chunked kernels' chunks, each
// with its share of the chunk's keys (scores) and of the value tile's
// columns (outputs, state). By default (0) the fewest that fit: tf32 at
// F = 64 takes chunks of 32 on two warps, one per row tile, each holding a
// 64 x 64 state tile's share in 64 registers. Two per row tile double the
// block's warps for the same tiles and shared memory.

// BAD: row-tile-warps must be 0, 1 or 2

// FEWEST-LABEL: func.func @tf32_f64
//       FEWEST: call @__linattn_launch_linattn_scan_chunked_wide_forward_elu_normalized_0(%c2, %c1, %c1, %c64, %c1, %c1,
//       FEWEST: known_block_size = array<i32: 64, 1, 1>
// TWO-LABEL: func.func @tf32_f64
//       TWO: call @__linattn_launch_linattn_scan_chunked_wide_forward_elu_normalized_0(%c2, %c1, %c1, %c128, %c1, %c1,
//       TWO: known_block_size = array<i32: 128, 1, 1>
// Chunks of 16 are one row tile: no room for two warps, so the fewest.
// C16-LABEL: func.func @tf32_f64
//       C16: call @__linattn_launch_linattn_scan_chunked_wide_forward_elu_normalized_0(%c2, %c2, %c1, %c32, %c1, %c1,
//       C16: known_block_size = array<i32: 32, 1, 1>
func.func @tf32_f64(%q: tensor<2x?x64xf32>, %k: tensor<2x?x64xf32>, %v: tensor<2x?x64xf32>) -> tensor<2x?x64xf32> {
  %fq = linattn.feature_map elu %q : tensor<2x?x64xf32> -> tensor<2x?x64xf32>
  %fk = linattn.feature_map elu %k : tensor<2x?x64xf32> -> tensor<2x?x64xf32>
  %o, %s, %z = linattn.scan forward %fq, %fk, %v normalize(eps = 1.0e-6) : tensor<2x?x64xf32>, tensor<2x?x64xf32>, tensor<2x?x64xf32> -> tensor<2x?x64xf32>, tensor<2x64x64xf32>, tensor<2x64xf32>
  return %o : tensor<2x?x64xf32>
}

// -----

// 16-bit data at F = 64: chunks of 64, four warps by default, eight with
// two per row tile.
// FEWEST-LABEL: func.func @bf16_f64
//       FEWEST: call @__linattn_launch_linattn_scan_chunked_wide_forward_features_0(%c2, %c1, %c1, %c128, %c1, %c1,
// TWO-LABEL: func.func @bf16_f64
//       TWO: call @__linattn_launch_linattn_scan_chunked_wide_forward_features_0(%c2, %c1, %c1, %c256, %c1, %c1,
//       TWO: known_block_size = array<i32: 256, 1, 1>
func.func @bf16_f64(%q: tensor<2x?x64xbf16>, %k: tensor<2x?x64xbf16>, %v: tensor<2x?x64xbf16>) -> tensor<2x?x64xbf16> {
  %o, %s, %z = linattn.scan forward %q, %k, %v : tensor<2x?x64xbf16>, tensor<2x?x64xbf16>, tensor<2x?x64xbf16> -> tensor<2x?x64xbf16>, tensor<2x64x64xf32>, tensor<2x64xf32>
  return %o : tensor<2x?x64xbf16>
}
