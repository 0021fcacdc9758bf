// The GPU benchmark's plan, shapes and report format without a GPU.
// RUN: %linattn_python %linattn_src_root/bench/gpu/bench.py --dry-run --tools=%linattn_obj_root/bin | FileCheck %s
// RUN: %linattn_python %linattn_src_root/bench/gpu/bench.py --dry-run --tools=%linattn_obj_root/bin --shapes=2x16x16384x128,8x32x128 | FileCheck %s --check-prefix=SHAPES
// RUN: %linattn_python %linattn_src_root/bench/gpu/bench.py --dry-run --tools=%linattn_obj_root/bin --shapes=full-8x16x16384x64 | FileCheck %s --check-prefix=NONCAUSAL
// RUN: %linattn_python %linattn_src_root/bench/gpu/bench.py --dry-run --tools=%linattn_obj_root/bin --only=noncausal --quick | FileCheck %s --check-prefix=NONCAUSAL-QUICK
// RUN: %linattn_python %linattn_src_root/bench/gpu/bench.py --dry-run --tools=%linattn_obj_root/bin --shapes=grad-2x16x16384x128 --impls='grad (bf16|f32)$' | FileCheck %s --check-prefix=BACKWARD
// RUN: not %linattn_python %linattn_src_root/bench/gpu/bench.py --dry-run --shapes=8x16x100x64 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: %linattn_python %linattn_src_root/bench/gpu/bench.py --dry-run --tools=%linattn_obj_root/bin --impls='recurrent f32($|, synchronous)|fast_transformers' | FileCheck %s --check-prefix=IMPLS
// RUN: not %linattn_python %linattn_src_root/bench/gpu/bench.py --dry-run --impls='(' 2>&1 | FileCheck %s --check-prefix=BAD-IMPLS
// RUN: %linattn_python %linattn_src_root/bench/gpu/bench.py --dry-run --tools=%linattn_obj_root/bin --only=prefill --budget-s=420 | FileCheck %s --check-prefix=BUDGET
// A short lease's run (--lease): prefill only, the targets' shapes first,
// the defaults, the undecided options' rows (LEASE_IMPLS) and the peers.
// RUN: %linattn_python %linattn_src_root/bench/gpu/bench.py --dry-run --tools=%linattn_obj_root/bin --lease | FileCheck %s --check-prefix=LEASE --implicit-check-not=decode-bench --implicit-check-not="full-"
// RUN: not %linattn_python %linattn_src_root/bench/gpu/bench.py --dry-run --lease --only=decode 2>&1 | FileCheck %s --check-prefix=LEASE-ONLY
// LEASE: prefill B2 H16 T16384 D128:
// LEASE-NEXT: linattn-compile <2x16x16384x128_bf16.mlir> {{.*}}{device-buffers=true} -o
// LEASE-NEXT: linattn-compile <2x16x16384x128_f32.mlir> {{.*}}{device-buffers=true tf32=true} -o
// LEASE-NEXT: linattn-compile <2x16x16384x128_f32.mlir> {{.*}}{device-buffers=true tf32x3=true} -o
// LEASE-NEXT: linattn-compile <2x16x16384x128_bf16.mlir> {{.*}}{device-buffers=true sequence-parallel-blocks=384} -o
// LEASE-NEXT: linattn-compile <2x16x16384x128_bf16.mlir> {{.*}}{device-buffers=true wgmma-chunks=false} -o
// LEASE-NEXT: linattn-compile <2x16x16384x128_bf16.mlir> {{.*}}{device-buffers=true wgmma-outputs=true} -o
// LEASE-NEXT: linattn-compile <2x16x16384x128_bf16.mlir> {{.*}}{device-buffers=true unroll-staging=true} -o
// LEASE-NEXT: linattn-compile <2x16x16384x128_f32.mlir> {{.*}}{device-buffers=true scan-kernel=recurrent} -o
// LEASE-NEXT: linattn-compile <2x16x16384x128_f32.mlir> {{.*}}{device-buffers=true scan-kernel=recurrent simt-chunks=true} -o
// LEASE-NEXT: linattn-compile <2x16x16384x128_f32.mlir> {{.*}}{device-buffers=true scan-kernel=recurrent sequence-parallel-blocks=528} -o
// LEASE-NEXT: linattn-compile <2x16x16384x128_f32.mlir> {{.*}}{device-buffers=true scan-kernel=recurrent scan-tile=512} -o
// LEASE-NEXT: linattn-compile <2x16x16384x128_normalized_bf16.mlir> {{.*}}{device-buffers=true} -o
// LEASE-NEXT: linattn-compile <2x16x16384x128_normalized_bf16.mlir> {{.*}}{device-buffers=true wgmma-chunks=true} -o
// LEASE-NEXT: linattn-compile <2x16x16384x128_token_major_bf16.mlir> {{.*}}{device-buffers=true} -o
// LEASE-NEXT: prefill B8 H16 T16384 D64:
// LEASE-NEXT: linattn variants: linattn chunked bf16, linattn chunked bf16, scores in registers, linattn chunked bf16, scores in registers, 4 blocks/SM, linattn chunked tf32, linattn chunked tf32x3, linattn chunked bf16, wgmma outputs, linattn chunked bf16, wgmma outputs, scores in registers, linattn chunked bf16, wgmma outputs, scores in registers, sequence-parallel-blocks=512, linattn chunked bf16, unrolled staging, linattn recurrent f32, linattn simt chunks f32, linattn recurrent f32, sequence-parallel-blocks=528, linattn recurrent f32, scan-tile=512, linattn chunked bf16, normalized, linattn chunked bf16, wgmma outputs, normalized, linattn chunked bf16, token-major
// LEASE-NEXT: prefill B8 H16 T16384 D128:
// LEASE-NEXT: linattn variants: {{.*}}linattn recurrent f32, linattn simt chunks f32, linattn recurrent f32, scan-tile=512,
// LEASE-ONLY: --lease times prefill shapes only
// Rows whose kernels differ from the default's at D = 128 only run there.
// RUN: %linattn_python %linattn_src_root/bench/gpu/bench.py --dry-run --tools=%linattn_obj_root/bin --shapes=8x16x4096x64,2x16x16384x128 --impls='fitted|sequence-parallel-blocks=384' | FileCheck %s --check-prefix=ONLY128
// ONLY128: prefill B8 H16 T4096 D64:
// ONLY128-NOT: linattn-compile
// ONLY128: prefill B2 H16 T16384 D128:
// ONLY128-NEXT: linattn variants: linattn chunked bf16, sequence-parallel-blocks=384, linattn recurrent f32, fitted registers
// CHECK: plan (dry run: nothing is measured)
// CHECK: prefill B8 H16 T4096 D64: compulsory bytes bf16 256 MiB, f32 512 MiB
// CHECK: linattn-compile <8x16x4096x64_bf16.mlir> --target=cuda --pipeline=linattn-lower-to-nvvm{device-buffers=true} -o {{.*}} --shared=
// CHECK: linattn-compile <8x16x4096x64_bf16.mlir> --target=cuda --pipeline=linattn-lower-to-nvvm{device-buffers=true async-copies=false}
// CHECK: linattn-compile <8x16x4096x64_bf16.mlir> --target=cuda --pipeline=linattn-lower-to-nvvm{device-buffers=true value-tile=32}
// CHECK: linattn-compile <8x16x4096x64_bf16.mlir> --target=cuda --pipeline=linattn-lower-to-nvvm{device-buffers=true value-tile=128}
// CHECK: linattn-compile <8x16x4096x64_bf16.mlir> --target=cuda --pipeline=linattn-lower-to-nvvm{device-buffers=true wgmma=false}
// CHECK: linattn-compile <8x16x4096x64_bf16.mlir> --target=cuda --pipeline=linattn-lower-to-nvvm{device-buffers=true async-copies=false prefetch-chunks=1}
// CHECK: linattn-compile <8x16x4096x64_f32.mlir> --target=cuda --pipeline=linattn-lower-to-nvvm{device-buffers=true tf32=true}
// CHECK: linattn-compile <8x16x4096x64_f32.mlir> --target=cuda --pipeline=linattn-lower-to-nvvm{device-buffers=true tf32x3=true}
// CHECK: linattn-compile <8x16x4096x64_f32.mlir> --target=cuda --pipeline=linattn-lower-to-nvvm{device-buffers=true tf32=true async-copies=false}
// CHECK: linattn-compile <8x16x4096x64_f32.mlir> --target=cuda --pipeline=linattn-lower-to-nvvm{device-buffers=true tf32x3=true async-copies=false}
// CHECK: linattn-compile <8x16x4096x64_f32.mlir> --target=cuda --pipeline=linattn-lower-to-nvvm{device-buffers=true tf32=true row-tile-warps=2}
// CHECK: linattn-compile <8x16x4096x64_f32.mlir> --target=cuda --pipeline=linattn-lower-to-nvvm{device-buffers=true tf32x3=true row-tile-warps=2}
// CHECK: linattn-compile <8x16x4096x64_bf16.mlir> --target=cuda --pipeline=linattn-lower-to-nvvm{device-buffers=true row-tile-warps=2}
// CHECK: linattn-compile <8x16x4096x64_bf16.mlir> --target=cuda --pipeline=linattn-lower-to-nvvm{device-buffers=true copy-stages=3}
// CHECK: linattn-compile <8x16x4096x64_bf16.mlir> --target=cuda --pipeline=linattn-lower-to-nvvm{device-buffers=true states-copy-stages=4}
// CHECK: linattn-compile <8x16x4096x64_f32.mlir> --target=cuda --pipeline=linattn-lower-to-nvvm{device-buffers=true scan-kernel=recurrent}
// CHECK: linattn-compile <8x16x4096x64_f32.mlir> --target=cuda --pipeline=linattn-lower-to-nvvm{device-buffers=true scan-kernel=recurrent scan-thread-columns=1}
// CHECK: linattn-compile <8x16x4096x64_f32.mlir> --target=cuda --pipeline=linattn-lower-to-nvvm{device-buffers=true scan-kernel=recurrent scan-feature-lanes=1}
// CHECK: linattn-compile <8x16x4096x64_f32.mlir> --target=cuda --pipeline=linattn-lower-to-nvvm{device-buffers=true scan-kernel=recurrent scan-tile=32}
// The normalized scan, a module of its own.
// CHECK: linattn-compile <8x16x4096x64_normalized_bf16.mlir> --target=cuda --pipeline=linattn-lower-to-nvvm{device-buffers=true} -o <lib8x16x4096x64_normalized_linattn_chunked_bf16_normalized.so>.o
// CHECK: linattn-compile <8x16x4096x64_normalized_bf16.mlir> --target=cuda --pipeline=linattn-lower-to-nvvm{device-buffers=true wgmma=false}
// CHECK: prefill B8 H16 T65536 D128: compulsory bytes bf16 8192 MiB
// CHECK: prefill B2 H16 T16384 D128:
// 256 features (FAVOR+'s usual number) at Dv = 64: q, k, v read and o
// written, each kernel's defaults, synchronous staging and normalized.
// CHECK: prefill B8 H16 T16384 D256 Dv64: compulsory bytes bf16 2560 MiB, f32 5120 MiB
// CHECK-NEXT: linattn variants: linattn chunked bf16, linattn chunked bf16, synchronous staging, linattn chunked tf32, linattn chunked tf32x3, linattn recurrent f32, linattn chunked bf16, normalized
// CHECK: noncausal B8 H16 T65536 D64: compulsory bytes bf16 4096 MiB; linattn variants: linattn linear bf16 (defaults), linattn linear bf16, scalar kernels (linear-kernel=scalar), linattn linear tf32 (tf32=true), linattn linear tf32x3 (tf32x3=true)
// CHECK: noncausal B8 H16 T16384 D128:
// The backward pass (training): 7 tensors of compulsory bytes.
// CHECK: backward B8 H16 T4096 D64: compulsory bytes bf16 448 MiB; linattn variants: linattn grad bf16 (defaults), linattn grad bf16, normalized (defaults), linattn grad tf32 (tf32=true), linattn grad tf32x3 (tf32x3=true), linattn grad f32 (scan-kernel=recurrent)
// CHECK: backward B2 H16 T16384 D128:
// CHECK: decode B64 H32 D128:
// CHECK: | kind | shape | implementation | ms | HBM floor ms | of floor | vs linattn |
// CHECK: | prefill | 8x16x4096x64 | fla.chunk_linear_attn | 1.5000 | 0.5000 | 33% | 1.50x |
// CHECK: ## Targets
// CHECK: linattn-compile: found

// SHAPES: prefill B2 H16 T16384 D128:
// SHAPES-NOT: prefill B
// SHAPES: decode B8 H32 D128:
// SHAPES-NOT: decode B
// UNKNOWN: --shapes: no such case: 8x16x100x64

// --impls: only the rows it names (here the strict-fp32 scan, staged both
// ways, for a run against fast-transformers).
// IMPLS: prefill B8 H16 T4096 D64:
// IMPLS-NOT: linattn-compile
// IMPLS: linattn-compile <8x16x4096x64_f32.mlir> --target=cuda --pipeline=linattn-lower-to-nvvm{device-buffers=true scan-kernel=recurrent} -o
// IMPLS-NEXT: linattn-compile <8x16x4096x64_f32.mlir> --target=cuda --pipeline=linattn-lower-to-nvvm{device-buffers=true scan-kernel=recurrent async-copies=false scan-thread-columns=1} -o
// IMPLS-NEXT: prefill B8 H16 T16384 D64:
// IMPLS: noncausal B8 H16 T65536 D64: compulsory bytes bf16 4096 MiB; linattn variants: none
// BAD-IMPLS: --impls: missing ), unterminated subpattern

// Non-causal cases are named full-BxHxTxD (the same shape as a prefill case
// is another case).
// NONCAUSAL-NOT: prefill B
// NONCAUSAL: noncausal B8 H16 T16384 D64:
// NONCAUSAL-NOT: noncausal B
// NONCAUSAL-NOT: decode B
// BACKWARD-NOT: prefill B
// BACKWARD-NOT: noncausal B
// BACKWARD: backward B2 H16 T16384 D128: compulsory bytes bf16 896 MiB; linattn variants: linattn grad bf16 (defaults), linattn grad f32 (scan-kernel=recurrent)
// BACKWARD-NOT: decode B
// NONCAUSAL-QUICK-NOT: prefill B
// NONCAUSAL-QUICK: noncausal B2 H4 T1024 D64:
// NONCAUSAL-QUICK-NOT: decode B

// The tuning script's plan: the grid, the shapes, the compile commands.
// RUN: %linattn_python %linattn_src_root/bench/gpu/tune.py --dry-run --tools=%linattn_obj_root/bin | FileCheck %s --check-prefix=TUNE
// RUN: %linattn_python %linattn_src_root/bench/gpu/tune.py --dry-run --form=noncausal --value-tiles=64 --min-blocks-per-sm=0 | FileCheck %s --check-prefix=TUNE-NONCAUSAL
// TUNE-NONCAUSAL: tuning plan (dry run: nothing is measured), noncausal form
// TUNE-NONCAUSAL: 24 combinations, 4 shapes, 100 compilations (the defaults included)
// TUNE-NONCAUSAL: shape 8x16x4096x64:
// TUNE-NONCAUSAL: shape 8x16x16384x128:
// RUN: %linattn_python %linattn_src_root/bench/gpu/tune.py --dry-run --shapes=1x2x3x64 --chunk-sizes=64 --async-copies=true --sequence-parallel-blocks=0,8 --value-tiles=64 --min-blocks-per-sm=3 | FileCheck %s --check-prefix=TUNE-GRID
// Staging's prefetch only with synchronous staging: async copies take none.
// RUN: %linattn_python %linattn_src_root/bench/gpu/tune.py --dry-run --shapes=1x2x3x64 --chunk-sizes=64 --async-copies=0,1 --sequence-parallel-blocks=0 --value-tiles=64 --min-blocks-per-sm=0 --prefetch-chunks=0,1 | FileCheck %s --check-prefix=TUNE-PREFETCH
// TUNE-PREFETCH: 3 combinations, 1 shapes, 4 compilations
// TUNE-PREFETCH: {device-buffers=true chunk-size=64 async-copies=false sequence-parallel-blocks=0 value-tile=64 min-blocks-per-sm=0 prefetch-chunks=0}
// TUNE-PREFETCH-NEXT: {device-buffers=true chunk-size=64 async-copies=false sequence-parallel-blocks=0 value-tile=64 min-blocks-per-sm=0 prefetch-chunks=1}
// TUNE-PREFETCH-NEXT: {device-buffers=true chunk-size=64 async-copies=true sequence-parallel-blocks=0 value-tile=64 min-blocks-per-sm=0 prefetch-chunks=0}
// TUNE-PREFETCH-NOT: prefetch-chunks=1}
// wgmma doubles the grid when asked for (--wgmma=0,1): each combination
// names it; left out by default.
// RUN: %linattn_python %linattn_src_root/bench/gpu/tune.py --dry-run --shapes=1x2x3x64 --chunk-sizes=64 --async-copies=0 --sequence-parallel-blocks=0 --value-tiles=64 --min-blocks-per-sm=0 --wgmma=0,1 | FileCheck %s --check-prefix=TUNE-WGMMA
// TUNE-WGMMA: 2 combinations, 1 shapes, 3 compilations
// TUNE-WGMMA: {device-buffers=true chunk-size=64 async-copies=false sequence-parallel-blocks=0 value-tile=64 min-blocks-per-sm=0 prefetch-chunks=0 wgmma=false}
// TUNE-WGMMA-NEXT: {device-buffers=true chunk-size=64 async-copies=false sequence-parallel-blocks=0 value-tile=64 min-blocks-per-sm=0 prefetch-chunks=0 wgmma=true}
// RUN: %linattn_python %linattn_src_root/bench/gpu/tune.py --dry-run --shapes=1x2x3x64 --chunk-sizes=64 --async-copies=1 --sequence-parallel-blocks=0 --value-tiles=64 --min-blocks-per-sm=0 --scores-in-registers=0,1 | FileCheck %s --check-prefix=TUNE-SCORES
// TUNE-SCORES: 2 combinations, 1 shapes, 3 compilations
// TUNE-SCORES: {device-buffers=true chunk-size=64 async-copies=true sequence-parallel-blocks=0 value-tile=64 min-blocks-per-sm=0 prefetch-chunks=0 scores-in-registers=false}
// TUNE-SCORES-NEXT: {device-buffers=true chunk-size=64 async-copies=true sequence-parallel-blocks=0 value-tile=64 min-blocks-per-sm=0 prefetch-chunks=0 scores-in-registers=true}
// Two warps a row tile against the fewest, where asked for.
// RUN: %linattn_python %linattn_src_root/bench/gpu/tune.py --dry-run --shapes=1x2x3x64 --chunk-sizes=64 --async-copies=1 --sequence-parallel-blocks=0 --value-tiles=64 --min-blocks-per-sm=0 --row-tile-warps=0,2 | FileCheck %s --check-prefix=TUNE-ROWS
// TUNE-ROWS: 2 combinations, 1 shapes, 3 compilations
// TUNE-ROWS: {device-buffers=true chunk-size=64 async-copies=true sequence-parallel-blocks=0 value-tile=64 min-blocks-per-sm=0 prefetch-chunks=0 row-tile-warps=0}
// TUNE-ROWS-NEXT: {device-buffers=true chunk-size=64 async-copies=true sequence-parallel-blocks=0 value-tile=64 min-blocks-per-sm=0 prefetch-chunks=0 row-tile-warps=2}
// The chunk loops' offsets when asked for (--narrow-offset-limits): the
// option added to each combination; left out by default.
// RUN: %linattn_python %linattn_src_root/bench/gpu/tune.py --dry-run --shapes=1x2x3x64 --chunk-sizes=64 --async-copies=1 --sequence-parallel-blocks=0 --value-tiles=64 --min-blocks-per-sm=0 --narrow-offset-limits=0,32768 | FileCheck %s --check-prefix=TUNE-OFFSETS
// TUNE-OFFSETS: 2 combinations, 1 shapes, 3 compilations
// TUNE-OFFSETS: {device-buffers=true chunk-size=64 async-copies=true sequence-parallel-blocks=0 value-tile=64 min-blocks-per-sm=0 prefetch-chunks=0 narrow-offset-limit=0}
// TUNE-OFFSETS-NEXT: {device-buffers=true chunk-size=64 async-copies=true sequence-parallel-blocks=0 value-tile=64 min-blocks-per-sm=0 prefetch-chunks=0 narrow-offset-limit=32768}
// RUN: not %linattn_python %linattn_src_root/bench/gpu/tune.py --dry-run --shapes=8x16x64 2>&1 | FileCheck %s --check-prefix=TUNE-BAD
// The strict-fp32 recurrent scan's grid (--form=recurrent): its own options
// after scan-kernel=recurrent, f32 bytes; another form's options are an
// error, both ways.
// RUN: %linattn_python %linattn_src_root/bench/gpu/tune.py --dry-run --form=recurrent --tools=%linattn_obj_root/bin | FileCheck %s --check-prefix=TUNE-RECURRENT
// RUN: not %linattn_python %linattn_src_root/bench/gpu/tune.py --dry-run --form=recurrent --chunk-sizes=32 2>&1 | FileCheck %s --check-prefix=TUNE-FOREIGN
// RUN: not %linattn_python %linattn_src_root/bench/gpu/tune.py --dry-run --scan-tiles=512 2>&1 | FileCheck %s --check-prefix=TUNE-FOREIGN-CHUNKED
// TUNE-RECURRENT: tuning plan (dry run: nothing is measured), recurrent form
// TUNE-RECURRENT: 36 combinations, 6 shapes, 222 compilations (the defaults included)
// TUNE-RECURRENT: shape 8x16x16384x64: compulsory bytes 2048 MiB
// TUNE-RECURRENT: {device-buffers=true scan-kernel=recurrent} -o
// TUNE-RECURRENT: {device-buffers=true scan-kernel=recurrent scan-tile=128 scan-feature-lanes=1 scan-thread-columns=2 sequence-parallel-blocks=0} -o
// TUNE-RECURRENT: {device-buffers=true scan-kernel=recurrent scan-tile=512 scan-feature-lanes=4 scan-thread-columns=4 sequence-parallel-blocks=264} -o
// TUNE-RECURRENT-NOT: chunk-size
// TUNE-FOREIGN: the recurrent form has no --chunk-sizes
// TUNE-FOREIGN-CHUNKED: the causal form has no --scan-tiles
// TUNE: tuning plan (dry run: nothing is measured)
// TUNE: 144 combinations, 6 shapes, 870 compilations (the defaults included)
// TUNE: shape 8x16x16384x64: compulsory bytes 1024 MiB
// TUNE: shape 1x96x8192x128: compulsory bytes 768 MiB
// TUNE: linattn-compile <shape>.mlir --target=cuda --pipeline=linattn-lower-to-nvvm{device-buffers=true} -o
// TUNE: linattn-compile <shape>.mlir --target=cuda --pipeline=linattn-lower-to-nvvm{device-buffers=true chunk-size=16 async-copies=false sequence-parallel-blocks=0 value-tile=32 min-blocks-per-sm=0 prefetch-chunks=0}
// TUNE: linattn-compile <shape>.mlir --target=cuda --pipeline=linattn-lower-to-nvvm{device-buffers=true chunk-size=64 async-copies=true sequence-parallel-blocks=528 value-tile=64 min-blocks-per-sm=4 prefetch-chunks=0}
// TUNE-GRID: 2 combinations, 1 shapes, 3 compilations
// TUNE-GRID: {device-buffers=true chunk-size=64 async-copies=true sequence-parallel-blocks=0 value-tile=64 min-blocks-per-sm=3 prefetch-chunks=0}
// TUNE-GRID: {device-buffers=true chunk-size=64 async-copies=true sequence-parallel-blocks=8 value-tile=64 min-blocks-per-sm=3 prefetch-chunks=0}
// TUNE-BAD: not a shape BxHxTxD: 8x16x64

// With a budget the shapes the targets name come first, T = 64K last.
// BUDGET: prefill B2 H16 T16384 D128:
// BUDGET: prefill B8 H16 T16384 D64:
// BUDGET: prefill B8 H16 T16384 D128:
// BUDGET: prefill B8 H16 T4096 D64:
// BUDGET: prefill B8 H16 T65536 D64:
// BUDGET: prefill B8 H16 T65536 D128:
// BUDGET-NOT: {{^}}prefill B

// The tuning script's wgmma-outputs axis, left to the pipeline unless named.
// RUN: %linattn_python %linattn_src_root/bench/gpu/tune.py --dry-run --shapes=8x16x16384x64 --chunk-sizes=64 --async-copies=1 --sequence-parallel-blocks=264 --value-tiles=64 --min-blocks-per-sm=0 --wgmma-outputs=0,1 | FileCheck %s --check-prefix=TUNE-OUTPUTS
// TUNE-OUTPUTS: 2 combinations, 1 shapes, 3 compilations
// TUNE-OUTPUTS: {device-buffers=true chunk-size=64 async-copies=true sequence-parallel-blocks=264 value-tile=64 min-blocks-per-sm=0 prefetch-chunks=0 wgmma-outputs=false}
// TUNE-OUTPUTS-NEXT: {device-buffers=true chunk-size=64 async-copies=true sequence-parallel-blocks=264 value-tile=64 min-blocks-per-sm=0 prefetch-chunks=0 wgmma-outputs=true}
// The same for the staging loops unrolled.
// RUN: %linattn_python %linattn_src_root/bench/gpu/tune.py --dry-run --shapes=8x16x16384x64 --chunk-sizes=64 --async-copies=1 --sequence-parallel-blocks=264 --value-tiles=64 --min-blocks-per-sm=0 --unroll-staging=0,1 | FileCheck %s --check-prefix=TUNE-UNROLL
// TUNE-UNROLL: {device-buffers=true chunk-size=64 async-copies=true sequence-parallel-blocks=264 value-tile=64 min-blocks-per-sm=0 prefetch-chunks=0 unroll-staging=false}
// TUNE-UNROLL-NEXT: {device-buffers=true chunk-size=64 async-copies=true sequence-parallel-blocks=264 value-tile=64 min-blocks-per-sm=0 prefetch-chunks=0 unroll-staging=true}
