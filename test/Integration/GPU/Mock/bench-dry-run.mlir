// The GPU benchmark's plan, shapes and report format without a GPU.
// RUN: %linattn_python %linattn_src_root/bench/gpu/bench.py --dry-run --tools=%linattn_obj_root/bin | FileCheck %s
// CHECK: plan (dry run: nothing is measured)
// CHECK: prefill B8 H16 T4096 D64: compulsory bytes bf16 256 MiB, f32 512 MiB
// CHECK: prefill B8 H16 T65536 D128: compulsory bytes bf16 8192 MiB
// CHECK: prefill B2 H16 T16384 D128:
// CHECK: decode B64 H32 D128:
// CHECK: | kind | shape | implementation | ms | HBM floor ms | of floor | vs linattn |
// CHECK: | prefill | 8x16x4096x64 | fla.chunk_linear_attn | 1.5000 | 0.5000 | 33% | 1.50x |
// CHECK: linattn-run: found
