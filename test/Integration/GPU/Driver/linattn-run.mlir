// REQUIRES: cuda-toolkit
// linattn-run --target=cuda on the real runtime library over the fake CUDA
// driver (test/FakeCuda: no GPU, kernels not run, every driver call logged
// and checked against the driver's rules): the calls the runtime makes for
// a cubin and for PTX, stream-ordered buffers, and the shared-memory opt-in
// of a kernel that needs more than 48 KiB.

// RUN: rm -f %t.causal.log %t.chunked.log
// RUN: env LD_LIBRARY_PATH=%fake_cuda_dir LINATTN_FAKE_CUDA_LOG=%t.causal.log linattn-run %s --entry=causal --target=cuda --random-seed=1 --repeat=2 | FileCheck %s --check-prefix=OUT
// RUN: FileCheck %s --check-prefix=CAUSAL --implicit-check-not=leak --implicit-check-not=CUDA_ERROR < %t.causal.log
// RUN: env LD_LIBRARY_PATH=%fake_cuda_dir LINATTN_FAKE_CUDA_LOG=%t.chunked.log linattn-run %s --entry=chunked --target=cuda --pipeline='linattn-lower-to-nvvm{format=isa sequence-parallel-blocks=0 async-copies=true value-tile=128 wgmma=false narrow-offset-limit=2147483648}' --random-seed=1
// RUN: FileCheck %s --check-prefix=CHUNKED --implicit-check-not=leak --implicit-check-not=CUDA_ERROR < %t.chunked.log

// OUT: device: linattn fake CUDA device 0
// OUT: result #0: 2x4x7x40xf32
// OUT: median time: 1.0{{0*}} ms over 2 calls (CUDA events)

// The first call makes device 0's primary context current (the thread has
// none); the cubin is loaded once, by the module's constructor, and
// unloaded in its context when linattn-run releases the compiled code,
// before the driver shuts down at exit. Each call (a warm-up and two timed ones) copies
// in, launches, copies out and frees on a stream of its own, between two
// events on the legacy stream.
// CAUSAL: cuda: init 1 devices
// CAUSAL-NEXT: cuda: primary-ctx-retain dev0 -> ctx0
// CAUSAL-NEXT: cuda: ctx-set-current ctx0
// CAUSAL: cuda: module-load ctx0 cubin -> m1
// CAUSAL-NEXT: cuda: stream-create ctx0 s1
// CAUSAL-NEXT: cuda: mem-alloc-async ctx0 [[Q:d[0-9]+]] 3584 bytes s1
// CAUSAL-NEXT: cuda: memcpy [[Q]] <- host 3584 bytes s1
// CAUSAL-NEXT: cuda: mem-alloc-async ctx0 [[K:d[0-9]+]] 3584 bytes s1
// CAUSAL-NEXT: cuda: memcpy [[K]] <- host 3584 bytes s1
// CAUSAL-NEXT: cuda: mem-alloc-async ctx0 [[V:d[0-9]+]] 8960 bytes s1
// CAUSAL-NEXT: cuda: memcpy [[V]] <- host 8960 bytes s1
// CAUSAL-NEXT: cuda: mem-alloc-async ctx0 [[O:d[0-9]+]] 8960 bytes s1
// CAUSAL-NEXT: cuda: launch ctx0 linattn_scan_forward_elu_normalized_0 grid 8x2x1 block 128x1x1 smem 0 s1
// CAUSAL-NEXT: cuda: memcpy host <- [[O]] 8960 bytes s1
// CAUSAL-NEXT: cuda: mem-free-async [[Q]] s1
// CAUSAL-NEXT: cuda: mem-free-async [[K]] s1
// CAUSAL-NEXT: cuda: mem-free-async [[V]] s1
// CAUSAL-NEXT: cuda: mem-free-async [[O]] s1
// CAUSAL-NEXT: cuda: stream-sync s1
// CAUSAL-NEXT: cuda: stream-destroy s1
// CAUSAL-NEXT: cuda: event-record [[STOP:e[0-9]+]] s0
// CAUSAL-NEXT: cuda: event-sync [[STOP]]
// CAUSAL-NEXT: cuda: event-record [[START:e[0-9]+]] s0
// CAUSAL-NEXT: cuda: stream-create ctx0 s2
// CAUSAL: cuda: launch ctx0 linattn_scan_forward_elu_normalized_0 grid 8x2x1 block 128x1x1 smem 0 s2
// CAUSAL: cuda: stream-destroy s2
// CAUSAL-NEXT: cuda: event-record [[STOP]] s0
// CAUSAL-NEXT: cuda: event-sync [[STOP]]
// CAUSAL-NEXT: cuda: event-record [[START]] s0
// CAUSAL-NEXT: cuda: stream-create ctx0 s3
// CAUSAL: cuda: launch ctx0 linattn_scan_forward_elu_normalized_0 grid 8x2x1 block 128x1x1 smem 0 s3
// CAUSAL-NOT: cuda: launch
// CAUSAL: cuda: ctx-push ctx0
// CAUSAL-NEXT: cuda: module-unload m1
// CAUSAL-NEXT: cuda: ctx-pop ctx0
// CAUSAL-NEXT: cuda: shut down
func.func @causal(%q: tensor<2x4x7x16xf32>, %k: tensor<2x4x7x16xf32>, %v: tensor<2x4x7x40xf32>) -> tensor<2x4x7x40xf32> {
  %0 = linattn.attention elu %q, %k, %v causal normalize(eps = 1.0e-6) : tensor<2x4x7x16xf32>, tensor<2x4x7x16xf32>, tensor<2x4x7x40xf32> -> tensor<2x4x7x40xf32>
  return %0 : tensor<2x4x7x40xf32>
}

// PTX is compiled by the driver (JIT); the chunked scan with double-buffered
// async copies of 128 value columns at F = 128 needs 65792 bytes of dynamic
// shared memory, which the runtime opts into before launching.
// CHUNKED: cuda: module-load-jit ctx0 ptx -> m1
// CHUNKED: cuda: func-set-attribute [[KERNEL:linattn_scan_chunked_forward_elu_normalized_[0-9]+]] max-dynamic-shared 65792
// CHUNKED-NEXT: cuda: launch ctx0 [[KERNEL]] grid 2x2x1 block 128x1x1 smem 65792 s1
// CHUNKED: cuda: module-unload m1
func.func @chunked(%q: tensor<2x129x128xbf16>, %k: tensor<2x129x128xbf16>, %v: tensor<2x129x128xbf16>) -> tensor<2x129x128xbf16> {
  %fq = linattn.feature_map elu %q : tensor<2x129x128xbf16> -> tensor<2x129x128xbf16>
  %fk = linattn.feature_map elu %k : tensor<2x129x128xbf16> -> tensor<2x129x128xbf16>
  %o, %s, %z = linattn.scan forward %fq, %fk, %v normalize(eps = 1.000000e-06) : tensor<2x129x128xbf16>, tensor<2x129x128xbf16>, tensor<2x129x128xbf16> -> tensor<2x129x128xbf16>, tensor<2x128x128xf32>, tensor<2x128xf32>
  return %o : tensor<2x129x128xbf16>
}
