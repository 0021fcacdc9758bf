// RUN: linattn-opt %s -linattn-reassociate -split-input-file | FileCheck %s --check-prefixes=CHECK,AUTO
// RUN: linattn-opt %s -linattn-reassociate=mode=auto -split-input-file | FileCheck %s --check-prefixes=CHECK,AUTO
// RUN: linattn-opt %s -linattn-reassociate=mode=always -split-input-file | FileCheck %s --check-prefixes=CHECK,ALWAYS
// RUN: linattn-opt %s -linattn-reassociate=mode=never -split-input-file | FileCheck %s --check-prefixes=CHECK,NEVER
// RUN: not linattn-opt %s -linattn-reassociate=mode=sometimes 2>&1 | FileCheck %s --check-prefix=BADMODE

// BADMODE: Cannot find option named 'sometimes'!

// Normalized attention with batch and head dimensions: N = M = 1024 is long
// enough that the linear form pays.
// CHECK-LABEL: func.func @normalized_batch_heads
// CHECK-SAME: (%[[FQ:.*]]: tensor<2x8x1024x64xf32>, %[[FK:.*]]: tensor<2x8x1024x64xf32>, %[[V:.*]]: tensor<2x8x1024x32xf32>)
// AUTO-NEXT: %[[S:.*]], %[[Z:.*]] = linattn.kv_summary %[[FK]], %[[V]] : tensor<2x8x1024x64xf32>, tensor<2x8x1024x32xf32> -> tensor<2x8x64x32xf32>, tensor<2x8x64xf32>
// AUTO-NEXT: %[[O:.*]] = linattn.query_readout %[[FQ]], %[[S]] normalize(%[[Z]], eps = 9.9999999999999995E-7) : tensor<2x8x1024x64xf32>, tensor<2x8x64x32xf32>, tensor<2x8x64xf32> -> tensor<2x8x1024x32xf32>
// AUTO-NEXT: return %[[O]]
// ALWAYS-NEXT: %[[S:.*]], %[[Z:.*]] = linattn.kv_summary %[[FK]], %[[V]]
// ALWAYS-NEXT: %[[O:.*]] = linattn.query_readout %[[FQ]], %[[S]] normalize(%[[Z]], eps = 9.9999999999999995E-7)
// ALWAYS-NEXT: return %[[O]]
// NEVER-NEXT: linattn.scores
// NEVER-NEXT: linattn.apply_scores
// NEVER-NEXT: return
func.func @normalized_batch_heads(%fq: tensor<2x8x1024x64xf32>, %fk: tensor<2x8x1024x64xf32>,
                                  %v: tensor<2x8x1024x32xf32>) -> tensor<2x8x1024x32xf32> {
  %a = linattn.scores %fq, %fk : tensor<2x8x1024x64xf32>, tensor<2x8x1024x64xf32> -> tensor<2x8x1024x1024xf32>
  %o = linattn.apply_scores %a, %v normalize(eps = 1.0e-6)
      : tensor<2x8x1024x1024xf32>, tensor<2x8x1024x32xf32> -> tensor<2x8x1024x32xf32>
  return %o : tensor<2x8x1024x32xf32>
}

// -----

// Cross-attention (N = 100 queries, M = 300 keys), normalized, with a
// positive scale: s·A normalized with eps is A normalized with eps / s.
// CHECK-LABEL: func.func @cross_positive_scale
// CHECK-SAME: (%[[FQ:.*]]: tensor<100x16xf32>, %[[FK:.*]]: tensor<300x16xf32>, %[[V:.*]]: tensor<300x8xf32>)
// AUTO-NEXT: %[[S:.*]], %[[Z:.*]] = linattn.kv_summary %[[FK]], %[[V]] : tensor<300x16xf32>, tensor<300x8xf32> -> tensor<16x8xf32>, tensor<16xf32>
// AUTO-NEXT: %[[O:.*]] = linattn.query_readout %[[FQ]], %[[S]] normalize(%[[Z]], eps = 4.000000e-06) : tensor<100x16xf32>, tensor<16x8xf32>, tensor<16xf32> -> tensor<100x8xf32>
// AUTO-NEXT: return %[[O]]
// ALWAYS: linattn.query_readout %[[FQ]], %{{.*}} normalize(%{{.*}}, eps = 4.000000e-06)
// NEVER: linattn.scores %[[FQ]], %[[FK]] scale(2.500000e-01)
func.func @cross_positive_scale(%fq: tensor<100x16xf32>, %fk: tensor<300x16xf32>,
                                %v: tensor<300x8xf32>) -> tensor<100x8xf32> {
  %a = linattn.scores %fq, %fk scale(0.25) : tensor<100x16xf32>, tensor<300x16xf32> -> tensor<100x300xf32>
  %o = linattn.apply_scores %a, %v normalize(eps = 1.0e-6)
      : tensor<100x300xf32>, tensor<300x8xf32> -> tensor<100x8xf32>
  return %o : tensor<100x8xf32>
}

// -----

// A negative scale with normalization: eps / s would be negative, so both the
// summary and the normalizer are multiplied by s, which is exact:
// φ(q)ᵀ(sS) / (φ(q)ᵀ(sz) + eps) = Σ s·aᵢⱼ vⱼ / (Σ s·aᵢⱼ + eps).
// CHECK-LABEL: func.func @negative_scale_normalized
// CHECK-SAME: (%[[FQ:.*]]: tensor<100x16xf32>, %[[FK:.*]]: tensor<300x16xf32>, %[[V:.*]]: tensor<300x8xf32>)
// AUTO: %[[S:.*]], %[[Z:.*]] = linattn.kv_summary %[[FK]], %[[V]]
// AUTO: %[[C:.*]] = arith.constant -2.000000e+00 : f32
// AUTO: %[[SS:.*]] = linalg.generic {{.*}} outs(%[[S]] : tensor<16x8xf32>)
// AUTO-NEXT: ^bb0(%[[X:.*]]: f32):
// AUTO-NEXT: %[[P:.*]] = arith.mulf %[[X]], %[[C]] : f32
// AUTO-NEXT: linalg.yield %[[P]]
// AUTO: %[[C2:.*]] = arith.constant -2.000000e+00 : f32
// AUTO: %[[SZ:.*]] = linalg.generic {{.*}} outs(%[[Z]] : tensor<16xf32>)
// AUTO-NEXT: ^bb0(%[[Y:.*]]: f32):
// AUTO-NEXT: %[[PZ:.*]] = arith.mulf %[[Y]], %[[C2]] : f32
// AUTO: linattn.query_readout %[[FQ]], %[[SS]] normalize(%[[SZ]], eps = 9.9999999999999995E-7)
// ALWAYS: linattn.query_readout
// NEVER: linattn.apply_scores
func.func @negative_scale_normalized(%fq: tensor<100x16xf32>, %fk: tensor<300x16xf32>,
                                     %v: tensor<300x8xf32>) -> tensor<100x8xf32> {
  %a = linattn.scores %fq, %fk scale(-2.0) : tensor<100x16xf32>, tensor<300x16xf32> -> tensor<100x300xf32>
  %o = linattn.apply_scores %a, %v normalize(eps = 1.0e-6)
      : tensor<100x300xf32>, tensor<300x8xf32> -> tensor<100x8xf32>
  return %o : tensor<100x8xf32>
}

// -----

// Unnormalized with a scale and dynamic sizes: the scale goes into the F×Dv
// summary (in place, so dynamic sizes need no tensor.dim); unknown sequence
// lengths count as long. Static sizes are taken from whichever operand
// knows them.
// CHECK-LABEL: func.func @scaled_unnormalized_dynamic
// CHECK-SAME: (%[[FQ:.*]]: tensor<?x?x16xf32>, %[[FK:.*]]: tensor<4x?x16xf32>, %[[V:.*]]: tensor<?x?x?xf32>)
// AUTO-NEXT: %[[S:.*]], %{{.*}} = linattn.kv_summary %[[FK]], %[[V]] : tensor<4x?x16xf32>, tensor<?x?x?xf32> -> tensor<4x16x?xf32>, tensor<4x16xf32>
// AUTO-NEXT: %[[C:.*]] = arith.constant 2.500000e-01 : f32
// AUTO-NEXT: %[[SS:.*]] = linalg.generic {{.*}} outs(%[[S]] : tensor<4x16x?xf32>)
// AUTO: %[[O:.*]] = linattn.query_readout %[[FQ]], %[[SS]] : tensor<?x?x16xf32>, tensor<4x16x?xf32> -> tensor<4x?x?xf32>
// AUTO-NEXT: return %[[O]]
// ALWAYS: linattn.query_readout %[[FQ]]
// NEVER: linattn.apply_scores
func.func @scaled_unnormalized_dynamic(%fq: tensor<?x?x16xf32>, %fk: tensor<4x?x16xf32>,
                                       %v: tensor<?x?x?xf32>) -> tensor<4x?x?xf32> {
  %a = linattn.scores %fq, %fk scale(0.25) : tensor<?x?x16xf32>, tensor<4x?x16xf32> -> tensor<?x?x?xf32>
  %o = linattn.apply_scores %a, %v : tensor<?x?x?xf32>, tensor<?x?x?xf32> -> tensor<4x?x?xf32>
  return %o : tensor<4x?x?xf32>
}

// -----

// negative_ (auto): 4 tokens with 64 features: the quadratic form is cheaper
// (4·4·(64+64) = 2048 against 8·64·64 = 32768); always still rewrites.
// CHECK-LABEL: func.func @negative_short_sequences
// AUTO-NEXT: linattn.scores
// AUTO-NEXT: linattn.apply_scores
// AUTO-NEXT: return
// ALWAYS-NEXT: linattn.kv_summary
// ALWAYS-NEXT: linattn.query_readout
// ALWAYS-NEXT: return
// NEVER-NEXT: linattn.scores
// NEVER-NEXT: linattn.apply_scores
// NEVER-NEXT: return
func.func @negative_short_sequences(%fq: tensor<4x64xf32>, %fk: tensor<4x64xf32>,
                                    %v: tensor<4x64xf32>) -> tensor<4x64xf32> {
  %a = linattn.scores %fq, %fk : tensor<4x64xf32>, tensor<4x64xf32> -> tensor<4x4xf32>
  %o = linattn.apply_scores %a, %v : tensor<4x4xf32>, tensor<4x64xf32> -> tensor<4x64xf32>
  return %o : tensor<4x64xf32>
}

// -----

// Scores with another use are computed anyway: only the product with V is
// saved (100·100·64 = 640000 < 200·64·64 = 819200), so auto keeps the
// quadratic form; always rewrites and keeps the scores for their other use.
// Unshared, the same sizes rewrite (see the next case).
// CHECK-LABEL: func.func @shared_scores
// AUTO-NEXT: linattn.scores
// AUTO-NEXT: linattn.apply_scores
// AUTO-NEXT: return
// ALWAYS-NEXT: %[[A:.*]] = linattn.scores
// ALWAYS-NEXT: linattn.kv_summary
// ALWAYS-NEXT: %[[O:.*]] = linattn.query_readout
// ALWAYS-NEXT: return %[[O]], %[[A]]
// NEVER-NEXT: linattn.scores
// NEVER-NEXT: linattn.apply_scores
func.func @shared_scores(%fq: tensor<100x64xf32>, %fk: tensor<100x64xf32>, %v: tensor<100x64xf32>)
    -> (tensor<100x64xf32>, tensor<100x100xf32>) {
  %a = linattn.scores %fq, %fk : tensor<100x64xf32>, tensor<100x64xf32> -> tensor<100x100xf32>
  %o = linattn.apply_scores %a, %v : tensor<100x100xf32>, tensor<100x64xf32> -> tensor<100x64xf32>
  return %o, %a : tensor<100x64xf32>, tensor<100x100xf32>
}

// -----

// CHECK-LABEL: func.func @unshared_scores
// AUTO-NEXT: linattn.kv_summary
// AUTO-NEXT: linattn.query_readout
// AUTO-NEXT: return
func.func @unshared_scores(%fq: tensor<100x64xf32>, %fk: tensor<100x64xf32>, %v: tensor<100x64xf32>)
    -> tensor<100x64xf32> {
  %a = linattn.scores %fq, %fk : tensor<100x64xf32>, tensor<100x64xf32> -> tensor<100x100xf32>
  %o = linattn.apply_scores %a, %v : tensor<100x100xf32>, tensor<100x64xf32> -> tensor<100x64xf32>
  return %o : tensor<100x64xf32>
}

// -----

// negative_: a causal mask is never dropped; the scan pass handles it.
// CHECK-LABEL: func.func @negative_causal
// CHECK-NEXT: linattn.scores %{{.*}}, %{{.*}} causal
// CHECK-NEXT: linattn.apply_scores
// CHECK-NEXT: return
// CHECK-NOT: linattn.kv_summary
func.func @negative_causal(%fq: tensor<1x4096x64xf32>, %fk: tensor<1x4096x64xf32>,
                           %v: tensor<1x4096x64xf32>) -> tensor<1x4096x64xf32> {
  %a = linattn.scores %fq, %fk causal : tensor<1x4096x64xf32>, tensor<1x4096x64xf32> -> tensor<1x4096x4096xf32>
  %o = linattn.apply_scores %a, %v normalize(eps = 1.0e-6)
      : tensor<1x4096x4096xf32>, tensor<1x4096x64xf32> -> tensor<1x4096x64xf32>
  return %o : tensor<1x4096x64xf32>
}

// -----

// negative_: something non-linear (here exp) between the scores and their
// application; and scores that come from a function argument.
// CHECK-LABEL: func.func @negative_not_scores
// CHECK-NEXT: linattn.scores
// CHECK-NEXT: math.exp
// CHECK-NEXT: linattn.apply_scores
// CHECK-NEXT: linattn.apply_scores
// CHECK-NEXT: return
// CHECK-NOT: linattn.kv_summary
func.func @negative_not_scores(%fq: tensor<4096x64xf32>, %fk: tensor<4096x64xf32>,
                               %v: tensor<4096x64xf32>, %b: tensor<4096x4096xf32>)
    -> (tensor<4096x64xf32>, tensor<4096x64xf32>) {
  %a = linattn.scores %fq, %fk : tensor<4096x64xf32>, tensor<4096x64xf32> -> tensor<4096x4096xf32>
  %e = math.exp %a : tensor<4096x4096xf32>
  %o = linattn.apply_scores %e, %v normalize(eps = 1.0e-6)
      : tensor<4096x4096xf32>, tensor<4096x64xf32> -> tensor<4096x64xf32>
  %p = linattn.apply_scores %b, %v : tensor<4096x4096xf32>, tensor<4096x64xf32> -> tensor<4096x64xf32>
  return %o, %p : tensor<4096x64xf32>, tensor<4096x64xf32>
}

// -----

// 16-bit data: the summary and the normalizer accumulate in f32, as a scan's
// state does (a bf16 sum over 4096 keys would keep 8 bits of it); the scale
// multiplies the f32 summary, and the readout takes bf16 features with the
// f32 summary and rounds its result to bf16.
// CHECK-LABEL: func.func @bf16_summary_in_f32
// CHECK-SAME: (%[[FQ:.*]]: tensor<4096x64xbf16>, %[[FK:.*]]: tensor<4096x64xbf16>, %[[V:.*]]: tensor<4096x64xbf16>)
// AUTO-NEXT: %[[S:.*]], %[[Z:.*]] = linattn.kv_summary %[[FK]], %[[V]] : tensor<4096x64xbf16>, tensor<4096x64xbf16> -> tensor<64x64xf32>, tensor<64xf32>
// AUTO: arith.constant -5.000000e-01 : f32
// AUTO: outs(%[[S]] : tensor<64x64xf32>)
// AUTO: outs(%[[Z]] : tensor<64xf32>)
// AUTO: linattn.query_readout %[[FQ]], %{{.*}} normalize(%{{.*}}, eps = 9.9999999999999995E-7) : tensor<4096x64xbf16>, tensor<64x64xf32>, tensor<64xf32> -> tensor<4096x64xbf16>
// ALWAYS: linattn.kv_summary {{.*}} -> tensor<64x64xf32>, tensor<64xf32>
// NEVER: linattn.apply_scores
func.func @bf16_summary_in_f32(%fq: tensor<4096x64xbf16>, %fk: tensor<4096x64xbf16>,
                               %v: tensor<4096x64xbf16>) -> tensor<4096x64xbf16> {
  %a = linattn.scores %fq, %fk scale(-0.5) : tensor<4096x64xbf16>, tensor<4096x64xbf16> -> tensor<4096x4096xbf16>
  %o = linattn.apply_scores %a, %v normalize(eps = 1.0e-6)
      : tensor<4096x4096xbf16>, tensor<4096x64xbf16> -> tensor<4096x64xbf16>
  return %o : tensor<4096x64xbf16>
}
