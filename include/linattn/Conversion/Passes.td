//===- Passes.td - linattn conversion passes --------------*- tablegen -*-===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//

#ifndef LINATTN_CONVERSION_PASSES_TD
#define LINATTN_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertLinAttnToLinalgPass : Pass<"convert-linattn-to-linalg"> {
  let summary = "Lower every linattn op to linalg, tensor, arith, math and scf";
  let description = [{
    Lowers the linattn ops to destination-passing-style tensor code: products
    and reductions become `linalg.generic` ops over all batch dimensions,
    results start from `tensor.empty` (zero-filled with `linalg.fill` when
    they accumulate), dynamic sizes are read with `tensor.dim`. Products
    accumulate in the state element type, or in f32 for f16/bf16 inputs of
    the quadratic form, and are truncated at the end.

    `linattn.attention` is decomposed first (the `linattn-decompose`
    patterns). `linattn.scan` becomes an `scf.for` over the sequence that
    carries the output and the state (S, z) as tensors and applies the
    `linattn.step` lowering to one token per iteration; a reverse scan walks
    the sequence from its end.

    An op that cannot be lowered is reported as an error and the pass fails.

    Before:

    ```mlir
    %s, %z = linattn.kv_summary %fk, %v
        : tensor<2x?x64xf32>, tensor<2x?x32xf32>
        -> tensor<2x64x32xf32>, tensor<2x64xf32>
    ```

    After (the state part):

    ```mlir
    %empty = tensor.empty() : tensor<2x64x32xf32>
    %zero = linalg.fill ins(%cst : f32) outs(%empty : tensor<2x64x32xf32>)
        -> tensor<2x64x32xf32>
    %s = linalg.generic {
        indexing_maps = [affine_map<(b, f, d, m) -> (b, m, f)>,
                         affine_map<(b, f, d, m) -> (b, m, d)>,
                         affine_map<(b, f, d, m) -> (b, f, d)>],
        iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
        ins(%fk, %v : tensor<2x?x64xf32>, tensor<2x?x32xf32>)
        outs(%zero : tensor<2x64x32xf32>) { ... } -> tensor<2x64x32xf32>
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def LinAttnFuseElementwisePass : Pass<"linattn-fuse-elementwise"> {
  let summary = "Fuse elementwise linalg producers into consumers that read "
                "each of their elements once";
  let description = [{
    Linalg's elementwise fusion (`linalg-fuse-elementwise-ops`) restricted
    so that it never repeats work: a single-use elementwise producer is
    fused into a `linalg.generic` consumer only when the consumer's
    indexing map of the operand is a permutation of its loops, so that each
    element the producer computes is still computed once.

    Upstream's default also fuses into contractions and broadcasts, where
    the producer's body then runs once per iteration of the loops its
    operand does not depend on. For a feature map feeding the scores
    φ(Q)φ(K)ᵀ that is an exp per multiply-add, N·M·F of them where the
    feature map needs (N + M)·F: on the CPU the quadratic form ran about
    a hundred times slower (8x16x32x64 f32: 94 ms) than with the feature
    maps computed once.

    Before (`%fk` feeds a contraction over `m`, read once per `f` and `d`
    of the summary; `%fk` stays a separate generic):

    ```mlir
    %fk = linalg.generic {... ["parallel", "parallel"]} ins(%k ...) {
      ... math.exp ...
    }
    %s = linalg.generic {indexing_maps = [(f, d, m) -> (m, f), ...],
                         iterator_types = ["parallel", "parallel",
                                           "reduction"]}
        ins(%fk, %v ...)
    ```

    An elementwise chain (`%x + 1` then `/ %y`, same shape) still fuses
    into one generic.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def LinAttnCheckPlacementPass
    : Pass<"linattn-check-placement", "::mlir::ModuleOp"> {
  let summary = "Fail when a linattn op is outside the module's own functions";
  let description = [{
    Starts the lowering pipelines. They lower the `func.func`s of the module
    they run on, and the code they generate calls kernels, launch stubs and
    runtime functions that they declare in that module. A linattn op in a
    function of a nested `builtin.module` or `gpu.module`, or outside any
    function, is reported as an error instead of failing later in a
    conversion with an unrelated message.
  }];
  let options = [
    Option<"lowering", "lowering", "std::string", "\"the lowering pipeline\"",
           "What the diagnostics name as the lowering that needs the op in "
           "one of the module's functions">,
  ];
}

def LinAttnCheckLoweredPass : Pass<"linattn-check-lowered"> {
  let summary = "Fail when a linattn op is left";
  let description = [{
    Ends the lowering pipelines: reports every linattn op still in the IR as
    an error and fails, so that a pipeline that did not reach the promised
    form says so instead of handing on IR that later tools reject.
  }];
}

def LinAttnStridedCopyToLinalgPass : Pass<"linattn-strided-copy-to-linalg"> {
  let summary = "Turn memref.copy of strided views into linalg.copy";
  let description = [{
    Upstream's lowering of `memref.copy` calls `memcpy` when both memrefs are
    contiguous, and otherwise MLIR's runtime function `memrefCopy`, which
    walks the elements one at a time through their strides: for a view into
    a wider buffer (an `insert_slice` of [B, H, N, D] into [B, H, N, D + 1],
    say) that costs four times a contiguous copy of the whole buffer. This
    pass rewrites each `memref.copy` of ranked memrefs that `memrefCopy`
    would take into `linalg.copy`, whose loops keep the innermost dimension
    contiguous where the layouts do and are vectorized by LLVM. The pipelines
    run it after bufferization.

    ```mlir
    memref.copy %v, %view : memref<8x4096x64xf32>
        to memref<8x4096x64xf32, strided<[266240, 65, 1]>>
    ```

    becomes

    ```mlir
    linalg.copy ins(%v : memref<8x4096x64xf32>)
        outs(%view : memref<8x4096x64xf32, strided<[266240, 65, 1]>>)
    ```
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def LinAttnLowerAssertsPass : Pass<"linattn-lower-asserts", "::mlir::ModuleOp"> {
  let summary = "Lower the host's cf.assert to a message on stderr and abort";
  let description = [{
    Upstream's lowering of `cf.assert` prints the message with `puts`, to
    stdout, whose buffer is lost when `abort` ends a process whose stdout is
    a pipe or a file. This pass lowers every `cf.assert` of the module's own
    functions (not of nested `gpu.module`s) in unstructured control flow
    (after `convert-scf-to-cf`) to a branch that writes the message and a
    newline to file descriptor 2 with `write` and calls `abort`. The
    pipelines run it before `convert-cf-to-llvm`, so that the size checks of
    `linattn-check-sizes` say why a call stopped.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def ConvertLinAttnToCPUKernelsPass
    : Pass<"convert-linattn-to-cpu-kernels", "::mlir::ModuleOp"> {
  let summary = "Lower scans, steps, key-value summaries and query readouts "
                "with an f32 or f64 state to vectorized, register-blocked, "
                "parallel loop nests";
  let description = [{
    Rewrites every `linattn.scan` and `linattn.step` whose state is f32 (with
    f32, f16 or bf16 inputs) or f64 (with any of those or f64 inputs) into a
    hand-scheduled kernel on buffers, wrapped so the surrounding IR stays on
    tensors. The kernel computes in the state's type; an f64 vector holds
    half the lanes of an f32 one, and elu's exp is the f64 counterpart of the
    f32 approximation (both within about an ulp):

    - the inputs are read through `linattn.read_buffer`, the outputs and
      the final state are fresh buffers returned by `bufferization.to_tensor`,
      or the destination a result goes to when that is a `restrict writable`
      memref of `bufferization.materialize_in_destination` (written in place,
      the materialization erased);
    - an `scf.parallel` over the batch dimensions (threads, once
      `convert-scf-to-openmp` runs) holds one sequential walk over the
      tokens per batch element;
    - tokens are taken `tokens-per-block` at a time. For a block, the
      feature map of the producing `linattn.feature_map` (elu, relu or
      identity, fused: the features are never written to memory), the
      normalizer update and the denominators are computed once into a small
      stack buffer. Then, for each `vector-width`-wide column tile of the
      state, every state row is loaded once, takes the rank-1 updates of all
      tokens of the block and their readouts while it sits in a register,
      and is stored once;
    - sizes that are not multiples of the vector width use masked loads and
      stores; a sequence that is not a multiple of the block ends with
      single-token blocks;
    - with fewer batch elements than `threads`, a scan splits its sequences
      into chunks (decided at run time, each chunk at least 8 blocks long):
      the chunks' state contributions in parallel, a scan over them per
      batch element, then the chunks in parallel from their starting
      states.

    `linattn.kv_summary` and `linattn.query_readout` take the same kernel in
    halves: a summary is the state update over the keys
    without readout (its chunks' contributions and their sum when split); a
    readout reads the summary in place, with no token updating it, in
    parallel over the batch and pieces of the queries.

    Other scans, steps, summaries and readouts (an f16 or bf16 state) are
    left for `convert-linattn-to-linalg`.

    A non-causal quadratic form (`linattn.apply_scores` of `linattn.scores`)
    whose linear form these kernels take is first reassociated when the
    linear form's operation count is below `reassociate-speedup` times the
    quadratic form's (`linattn-reassociate`'s cost model with the kernels'
    advantage): the quadratic form has no kernel, and its generic loops run
    an operation many times slower than the kernels do. What the cost model
    still declines (a handful of queries against a few keys) stays
    quadratic.
  }];
  let options = [
    Option<"targetCpu", "target-cpu", "std::string", /*default=*/"\"\"",
           "LLVM CPU the code is for (znver4, x86-64-v3): its features, "
           "with target-features added, decide the default vector width "
           "and register tile; empty: the host's">,
    Option<"targetFeatures", "target-features", "std::string",
           /*default=*/"\"\"",
           "CPU features the code is for, in LLVM's spelling "
           "(\"+avx2,+fma\"), added to or removed from target-cpu's; "
           "empty: target-cpu's, or the host's">,
    Option<"vectorWidth", "vector-width", "int64_t", /*default=*/"0",
           "f32 lanes per vector, half as many f64 ones; 0 picks the "
           "target's (16 with AVX-512, 8 with AVX2, 4 otherwise)">,
    Option<"tokensPerBlock", "tokens-per-block", "int64_t", /*default=*/"0",
           "Tokens whose updates share one pass over the state (1 to 8; 0: "
           "3 with 32 vector registers (AVX-512), 2 otherwise)">,
    Option<"columnVectors", "column-vectors", "int64_t", /*default=*/"0",
           "Vectors of state columns updated together per row (1 to 4, "
           "tokens-per-block × column-vectors at most 16; 0: as many as fit "
           "next to the block's tokens, 4 for the default block with AVX-512)">,
    Option<"threads", "threads", "int64_t", /*default=*/"0",
           "Threads to keep busy: with fewer batch elements than threads, "
           "sequences are split into chunks scanned in parallel (0: the "
           "host's hardware threads, 1: never split)">,
    Option<"fuseFeatureMaps", "fuse-feature-maps", "bool", /*default=*/"true",
           "Apply elu, relu and identity feature maps inside the kernel">,
    Option<"reassociateSpeedup", "reassociate-speedup", "double",
           /*default=*/"64.0",
           "Reassociate a non-causal quadratic form with linear-form kernels "
           "when the linear form needs fewer than this many times the "
           "quadratic form's operations (the kernels' advantage per "
           "operation over generic loops; 0: never)">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect",
  ];
}

def LinAttnSetLLVMTargetPass
    : Pass<"linattn-set-llvm-target", "::mlir::ModuleOp"> {
  let summary = "Give every llvm.func a target CPU and target features";
  let description = [{
    Sets `target_cpu` and `target_features` on every `llvm.func` of the
    module, so that code generation (the JIT, or an object file) uses that
    CPU and those features whatever the machine that compiles. An empty
    option leaves its attribute alone: code generation then uses its target
    machine's (the host's for the JIT). On an x86-64 host, a CPU name LLVM
    does not know for x86-64 is an error (LLVM would only warn and generate
    code for no particular CPU).
  }];
  let options = [
    Option<"cpu", "cpu", "std::string", /*default=*/"\"\"",
           "LLVM CPU name, e.g. znver4 or x86-64-v3">,
    Option<"features", "features", "std::string", /*default=*/"\"\"",
           "LLVM feature list, e.g. +avx2,+fma,-avx512f">,
  ];
}

def LinAttnParallelizeLinalgPass : Pass<"linattn-parallelize-linalg"> {
  let summary = "Spread the host's remaining linalg ops over threads";
  let description = [{
    The CPU kernels are parallel; what the pipeline lowers generically (the
    gradients' scaling and chain rule, copies into wider buffers, the maps
    and reductions of host fallbacks) becomes serial loops. This pass tiles
    every linalg op on buffers that is not already inside a parallel loop by
    1 along its leading parallel dimensions, the last dimension excluded, so
    that they become an `scf.parallel` (OpenMP after
    `convert-scf-to-openmp`) around the op on one row, whose innermost loop
    LLVM still vectorizes. Ops whose static iteration space has fewer than
    `min-iterations` points, or fewer than two rows, stay serial; dynamic
    sizes are parallelized. `linattn-lower-to-cpu` runs it after
    bufferization unless `num-threads=1`.

    ```mlir
    linalg.generic {iterator_types = ["parallel", "parallel", "parallel"]}
        ins(%a : memref<8x4096x64xf32>) outs(%b : memref<8x4096x64xf32>)
    ```

    becomes

    ```mlir
    scf.parallel (%i, %j) = (%c0, %c0) to (%c8, %c4096) step (%c1, %c1) {
      %ra = memref.subview %a[%i, %j, 0] [1, 1, 64] [1, 1, 1] : ...
      %rb = memref.subview %b[%i, %j, 0] [1, 1, 64] [1, 1, 1] : ...
      linalg.generic ... ins(%ra : ...) outs(%rb : ...)
    }
    ```
  }];
  let options = [
    Option<"minIterations", "min-iterations", "int64_t", /*default=*/"32768",
           "Fewest points of a static iteration space worth threads">,
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::memref::MemRefDialect"];
}

def ConvertLinAttnToGPUPass
    : Pass<"convert-linattn-to-gpu", "::mlir::ModuleOp"> {
  let summary = "Generate GPU kernels for the linear and scan forms";
  let description = [{
    Replaces every `linattn.scan`, `linattn.step`, `linattn.kv_summary`,
    `linattn.query_readout`, `linattn.scores` and `linattn.apply_scores` by
    a launch of a `gpu.func` generated for it in
    `gpu.module @linattn_kernels`; elu, relu and identity feature maps that
    produce their query and key features are fused into the kernels (and,
    in the scan kernels, those that produce their values: the gradients'
    scans take φ(Q) and φ(K) as values). The
    feature size must be static; batch, sequence and value sizes may be
    dynamic. Kernels read flattened row-major buffers of the operand tensors
    and compute in the state element type.

    - scan: grid (batch, value-column tiles), `scan-tile` threads per
      block, `scan-feature-lanes` adjacent threads per column of S, each
      keeping its share of the column's features in registers and walking
      the sequence (the readout summed over the lanes with shuffles);
      the features of a block of tokens are staged in shared memory with the
      feature map applied once, the normalizer and denominators are computed
      there cooperatively; with f16/bf16 data and an f32 state (f32 data
      with `tf32` or `tf32x3`) a causal scan takes the chunked tensor-core kernel
      instead (`scan-kernel`); with `simt-chunks` the scans left to the
      recurrent kernel run chunk by chunk on CUDA cores instead (F up to
      128): 256 threads per batch element and value tile, the chunk's
      scores, outputs and state update as register-blocked products, S in
      registers and mirrored in shared memory;
    - step: `scan-feature-lanes` threads per value column, each streaming
      its share of the state's rows, the first 32 loaded before the
      features and the new normalizer are staged in shared memory;
    - kv_summary and query_readout: with f16/bf16 data and an f32 state
      (f32 data with `tf32` or `tf32x3`) the chunked tensor-core kernels
      (`linear-kernel`): the summary as segment sums of φ(K_c)ᵀV_c, the
      readout as φ(Q_c)S per chunk; otherwise kv_summary takes a thread per
      value column and tile of 16 features over staged tiles of keys, and
      query_readout a block per tile of 16 tokens, φ(q) staged;
    - scores and apply_scores (the quadratic form, when nothing rewrote
      it): one thread per score and per output element.

    On the host, the op becomes `linattn.read_buffer` of its operands,
    `memref.alloc` of its results and a call to a private launch stub that
    names the kernel (`linattn.gpu_kernel`) and the arguments it writes
    (`linattn.gpu_outputs`) and takes the grid and block sizes; after
    bufferization `linattn-gpu-stage-buffers` turns the call into device
    buffers, copies and `gpu.launch_func`.

    Ops without a kernel (dynamic feature sizes, a scan state column larger
    than the register budget, value tiles past CUDA's grid) stay for the
    host lowering with `host-fallback` (default), with a remark that gives
    the reason, and are errors without it. Feature maps always get kernels
    (their own where no other kernel applies them).

    The tensor-core kernels need `chip` sm_80 or later (mma.sync on
    f16/bf16/tf32, ldmatrix, cp.async): for earlier chips scans take the
    recurrent kernel and the linear form the scalar kernels, whatever
    `scan-kernel`, `linear-kernel`, `tf32` and `tf32x3` say. `wgmma` applies on sm_90
    alone (the pipeline then lowers for sm_90a, and keeps it for modules
    with wgmma kernels only); elsewhere the chunk loops use
    mma.sync.

    ```mlir
    %o, %s, %z = linattn.scan forward %fq, %fk, %v normalize(eps = 1.0e-6)
        : ... -> tensor<2x8x?x64xf32>, tensor<2x8x64x64xf32>, tensor<2x8x64xf32>
    ```

    becomes, on the host,

    ```mlir
    %q = linattn.read_buffer %fq : ... to memref<2x8x?x64xf32>
    %qf = memref.collapse_shape %q [[0, 1, 2, 3]] : ... into memref<?xf32>
    ...
    call @__linattn_launch_linattn_scan_forward_features_normalized_0(
        %c16, %c2, %c1, %c32, %c1, %c1, %qf, %kf, %vf, %of, %sf, %zf, %n, %c64)
    %o = bufferization.to_tensor %obuf restrict writable : ...
    ```
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_90\"",
           "The target GPU (sm_XY): which kernels it can run">,
    Option<"scanTile", "scan-tile", "int64_t", /*default=*/"128",
           "Threads per block of the scan kernel">,
    Option<"scanFeatureLanes", "scan-feature-lanes", "int64_t",
           /*default=*/"4",
           "Threads sharing a value column in the recurrent scan and step "
           "kernels, each with F / lanes of its features (1, 2, 4, ..., 32)">,
    Option<"scanThreadColumns", "scan-thread-columns", "int64_t",
           /*default=*/"4",
           "Value columns per thread of the recurrent scan (1, 2, 4 or 8), "
           "each of its features shared by scan-feature-lanes times as "
           "many threads">,
    Option<"blockSize", "block-size", "int64_t", /*default=*/"128",
           "Most threads per block of the other kernels">,
    Option<"maxRegisterState", "max-register-state", "int64_t",
           /*default=*/"128",
           "Largest scan state column kept in registers, in 32-bit registers">,
    Option<"hostFallback", "host-fallback", "bool", /*default=*/"true",
           "Leave ops without a kernel to the host lowering instead of "
           "failing">,
    Option<"scanKernel", "scan-kernel", "std::string",
           /*default=*/"\"chunked\"",
           "Kernel of causal scans: 'chunked' (tensor cores for f16/bf16 "
           "data with an f32 state on sm_80 and later, the recurrent kernel "
           "otherwise) or 'recurrent' (always the recurrent kernel)">,
    Option<"linearKernel", "linear-kernel", "std::string",
           /*default=*/"\"chunked\"",
           "Kernels of the linear form (kv_summary, query_readout): "
           "'chunked' (tensor cores for f16/bf16 data with an f32 state on "
           "sm_80 and later, the scalar kernels otherwise) or 'scalar' "
           "(always the scalar kernels)">,
    Option<"chunkSize", "chunk-size", "int64_t", /*default=*/"64",
           "Largest chunk of the chunked scan kernel (16, 32 or 64 tokens)">,
    Option<"valueTile", "value-tile", "int64_t", /*default=*/"64",
           "Widest value tile of the chunked scan kernel (8, 16, 32, 64 or "
           "128 columns per block): narrower tiles give more blocks of the "
           "batch-parallel kernel, each of which computes its chunks' "
           "scores; 128 takes dynamic shared memory (up to 96 KiB) and "
           "computes the scores once for Dv = 128; where 48 KiB would "
           "leave tiles narrower than 64, tiles of 64 take the largest "
           "chunk that has them (tf32 at F = 128, 16-bit data at F = 80 and "
           "96), and where those do not fit either, tiles of 32 in up to 96 "
           "KiB (16-bit data at F = 208 to 256, tf32 at F = 144 to 208)">,
    Option<"smallGridValueTile", "small-grid-value-tile", "int64_t",
           /*default=*/"32",
           "Value tile of the chunked scan's chunk loop (the batch-parallel "
           "kernel, or the segments' outputs where its chunks are theirs; 0, "
           "8, 16, 32 or 64 columns per block) where a grid of such tiles "
           "stays within half of sequence-parallel-blocks (one block per "
           "H100 SM by default), as for a short sequence or segments "
           "capped by min-segment-tokens, where value-tile's would leave "
           "SMs idle; chosen at run time for dynamic sizes. 0: value-tile's "
           "everywhere">,
    Option<"rowTileWarps", "row-tile-warps", "int64_t", /*default=*/"0",
           "Warps per 16-row tile of the chunked kernels' chunks, each with "
           "its share of the keys and the value columns (1 or 2; 0, the "
           "default: the fewest that fit, 2 only where one warp's registers "
           "cannot hold a 64-column tile of the state); 2 doubles the warps "
           "of a block, halving each warp's state and products">,
    Option<"minBlocksPerSM", "min-blocks-per-sm", "int64_t", /*default=*/"0",
           "Blocks per SM the chunked scan's chunk loops ask ptxas to make "
           "room for (.minnctapersm: fewer registers, spilling what does not "
           "fit; 0: ptxas's choice, at most 32)">,
    Option<"statesMinBlocksPerSM", "states-min-blocks-per-sm", "int64_t",
           /*default=*/"-1",
           "min-blocks-per-sm for the chunked kernels that stage keys and "
           "values only (the segment states, the key-value summaries); -1, "
           "the default: the blocks that leave each thread its share of the "
           "state and 96 registers (104 without wgmma's state update), for "
           "16-bit data at F = 64 and 128 and tf32 data at F = 128, where "
           "ptxas alone takes registers that cost blocks">,
    Option<"sequenceParallelBlocks", "sequence-parallel-blocks", "int64_t",
           /*default=*/"264",
           "Blocks the chunked and recurrent scans aim to launch: when the "
           "batch-parallel kernel would launch fewer than half as many (by "
           "default one per H100 SM), the sequence splits into segments of "
           "whole chunks or staged blocks of tokens (segment states, a scan "
           "over them, the segments' outputs) to reach this; the recurrent "
           "scan counts blocks of 128 threads whatever its scan-tile (blocks "
           "of 512 aim at half, one per SM); 0: never">,
    Option<"minSegmentTokens", "min-segment-tokens", "int64_t",
           /*default=*/"1024",
           "Shortest segment the sequence-parallel scans split a sequence "
           "into, in tokens (rounded up to whole chunks or staged blocks; 0: "
           "one)">,
    Option<"simtChunks", "simt-chunks", "bool", /*default=*/"false",
           "Causal scans that take the recurrent kernel (f32 and f64 "
           "states) run chunkwise on CUDA cores instead, in the state's "
           "type: chunks of 32 tokens, the scores and the products with the "
           "state register-blocked (f32 or f64 states, F up to 128, within "
           "the 99 KiB of shared memory every GPU from sm_80 on allows; the "
           "recurrent kernel elsewhere, with a remark)">,
    Option<"tf32", "tf32", "bool", /*default=*/"false",
           "Causal scans and the linear form with f32 data take the chunked "
           "kernels on tf32 tensor cores (products with 10-bit mantissas, "
           "f32 accumulation) on sm_80 and later">,
    Option<"tf32x3", "tf32x3", "bool", /*default=*/"false",
           "As tf32, with each product taken as three tf32 products of the "
           "operands' high and low parts (hi·hi + hi·lo + lo·hi): about "
           "f32's accuracy for three times the tensor-core work">,
    Option<"vectorLoads", "vector-loads", "bool", /*default=*/"true",
           "The chunked kernels stage global memory 16 bytes per load where "
           "the buffers are 16-byte aligned (tested at run time); false: "
           "element by element">,
    Option<"asyncCopies", "async-copies", "bool", /*default=*/"true",
           "The chunked kernels (with vector loads) and the recurrent scan "
           "(f32 data) copy the next chunk or block of tokens with cp.async "
           "while they compute the current one, in two slots per staged tile "
           "(sm_80 and later; f32 chunked kernels copy a chunk at a time into "
           "one where two would shrink the chunks); false: staged "
           "synchronously">,
    Option<"copyStages", "copy-stages", "int64_t", /*default=*/"2",
           "With async copies, the chunked kernels' slots per staged tile "
           "(1 to 4): copies run that many chunks minus one ahead of the "
           "chunk the products read; with 1, a chunk's copies are all issued "
           "before its products, with the next chunk prefetched into L2 "
           "(the chunk shape chosen for one slot; what f32 data takes where "
           "two would shrink its chunks). Taken where the block's shared "
           "memory stays within 96 KiB (113 KiB for wgmma-chunks' shapes), "
           "else as many as fit; the segment states and key-value summaries "
           "take states-copy-stages">,
    Option<"statesCopyStages", "states-copy-stages", "int64_t",
           /*default=*/"2",
           "copy-stages for the chunked kernels that stage keys and values "
           "only (the sequence-parallel scan's segment states, the linear "
           "form's key-value summaries), within 96 KiB of their own shared "
           "memory">,
    Option<"statesFeatureSplit", "states-feature-split", "bool",
           /*default=*/"true",
           "Where the value columns take several tiles (without wgmma, "
           "static Dv), the chunked kernels that stage keys and "
           "values only share out the features between their blocks, each "
           "with all the value columns, so that each φ(K_c) is mapped and "
           "read once">,
    Option<"bulkCopies", "bulk-copies", "bool", /*default=*/"false",
           "With async copies on sm_90 and later, the chunked kernels stage "
           "whole chunks by bulk copies (the TMA unit, one per row of a tile "
           "with padded rows) completing on an mbarrier per slot, instead of "
           "16-byte cp.async; tiles in wgmma's swizzle and chunks cut short "
           "by the sequence or Dv keep cp.async">,
    Option<"wgmma", "wgmma", "bool", /*default=*/"true",
           "The chunk loops (f16/bf16, F a multiple of 64, chunks of 64) "
           "compute their scores, and with bf16 their state update, with "
           "sm_90's wgmma from swizzled tiles where the chip is sm_90 "
           "(modules with such kernels compiled as sm_90a); elsewhere "
           "mma.sync">,
    Option<"wgmmaChunks", "wgmma-chunks", "std::string", /*default=*/"\"auto\"",
           "On sm_90 with wgmma, chunks of 64 where the shared memory the "
           "chunk loops take on every chip leaves them smaller (16-bit data, "
           "F = 128): up to 113 KiB of dynamic shared memory per block, two "
           "blocks per H100 SM, so that the scores take wgmma. 'true': "
           "wherever they fit; 'auto' (the default): the unnormalized bf16 "
           "scan's chunk loops on two warpgroups (the measured case); "
           "'false': never">,
    Option<"scoresInRegisters", "scores-in-registers", "bool",
           /*default=*/"false",
           "The chunk loops with one warp per row tile (f16/bf16) keep their "
           "masked scores in registers as the A fragments of P·V instead of "
           "a shared tile (less shared memory, more registers)">,
    Option<"wgmmaOutputs", "wgmma-outputs", "bool", /*default=*/"false",
           "The chunk loops whose scores and state update take wgmma (bf16 "
           "with chunks of 64: F = 64, and F = 128 with wgmma-chunks) compute "
           "their outputs P V_c + φ(Q_c) S by wgmma too, from the scores and "
           "the state in shared memory in the 128-byte swizzle (with "
           "scores-in-registers, the scores as wgmma's A in registers), "
           "instead of mma.sync">,
    Option<"unrollStaging", "unroll-staging", "bool", /*default=*/"false",
           "The chunked kernels' loops over a thread's 16-byte groups of a "
           "chunk (the async copies issued, the feature map applied in place, "
           "the bulk copies' rows) unrolled instead of loops over tid, "
           "tid + T, ...: more registers live across the chunk loop, no loop "
           "overhead per group">,
    Option<"phaseClocks", "phase-clocks", "bool", /*default=*/"false",
           "Instrumentation: the chunked scan's chunk loops and segment "
           "states and the strict-fp32 scans' kernels (recurrent and "
           "simt-chunks) read the "
           "SM's cycle counter at the boundaries of their phases (prologue, "
           "issue, wait, map, stage, scores, outputs, update, normalizer, "
           "tokens, epilogue), thread 0 of each block adds each phase's "
           "cycles to its total in shared memory and writes the block's "
           "totals to a buffer of the launch at its end, and a printer "
           "kernel launched after it prints a line per block with printf "
           "(bench/gpu/phase_clocks.py reads them); for profiling, not for "
           "production">,
    Option<"prefetchChunks", "prefetch-chunks", "int64_t", /*default=*/"-1",
           "The chunk loops that stage synchronously or copy into one slot "
           "prefetch the rows of the chunk this many chunks ahead into L2 "
           "(prefetch.L2 per 128-byte line) as they stage one; 0: no "
           "prefetch, at most 1024; -1 (the default): 1 with async copies "
           "in one slot (copy-stages=1, and f32 at F = 128, where two do "
           "not fit), 0 elsewhere">,
    Option<"narrowOffsetLimit", "narrow-offset-limit", "int64_t",
           /*default=*/"0",
           "The chunk loops address global memory by 32-bit offsets from "
           "their block's first row, kept below this: a sequence too long "
           "for one block runs in segments (whatever "
           "sequence-parallel-blocks says), and W = max(F, Dv, 128) above "
           "limit / (2C + 2) takes 64-bit offsets (chosen at run time for a "
           "dynamic Dv); at most 2^31; 0 (the default, faster on an H100 "
           "at F = 128): always 64-bit">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::func::FuncDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::NVVM::NVVMDialect",
    "::mlir::nvgpu::NVGPUDialect",
    "::mlir::vector::VectorDialect",
    "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def LinAttnGPUStageBuffersPass
    : Pass<"linattn-gpu-stage-buffers", "::mlir::ModuleOp"> {
  let summary = "Move the buffers of GPU kernel launches to the device";
  let description = [{
    Runs after bufferization on what `convert-linattn-to-gpu` produced:
    every call to a launch stub becomes `gpu.alloc` of a device buffer per
    buffer operand, `gpu.memcpy` of the kernel's inputs from the host
    buffers, `gpu.launch_func` of the kernel the stub names on the device
    buffers, `gpu.memcpy` of its outputs back and `gpu.dealloc`; the stubs
    are erased. The host buffers stay ordinary `memref.alloc`s, so the
    functions keep the host calling convention of `linattn-lower-to-cpu`.
    Synchronous GPU ops are made asynchronous on one stream by
    `gpu-async-region` afterwards.

    With `device-buffers`, every public function takes device buffers
    instead: its memref arguments are device memory, its results become
    out-params (appended, caller-allocated device buffers the kernels write
    directly), and a trailing `!llvm.ptr` argument is the CUDA stream every
    kernel is launched on (`gpu.launch_func async` on a token chain that
    starts at the stream). Buffers between kernels are stream-ordered
    `gpu.alloc`/`gpu.dealloc` on that stream. Nothing goes through the
    host and nothing synchronizes, so a call can be captured in a CUDA
    graph: a result no kernel writes (an argument returned as it is) is a
    device-to-device `gpu.memcpy async` into its out-param on the stream,
    and anything that would run on the host on device memory is an error.

    ```mlir
    func.func @step(%q: memref<8x16xf32>, ..., %o: memref<8x24xf32>,
                    %stream: !llvm.ptr) {
      %t = builtin.unrealized_conversion_cast %stream
             : !llvm.ptr to !gpu.async.token
      %t1 = gpu.launch_func async [%t] @linattn_kernels::@linattn_step_0 ...
      return
    }
    ```
  }];
  let options = [
    Option<"deviceBuffers", "device-buffers", "bool", /*default=*/"false",
           "Functions take device buffers, results as out-params and a "
           "trailing stream argument (no host copies, no synchronization)">,
  ];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::memref::MemRefDialect",
  ];
}

def LinAttnGPULinalgKernelsPass
    : Pass<"linattn-gpu-linalg-kernels", "::mlir::ModuleOp"> {
  let summary = "Run the linalg ops and copies left on the host as GPU "
                "kernels";
  let description = [{
    Runs after bufferization on what `convert-linattn-to-gpu` left to the
    host between its kernels: the linalg ops on buffers (fills, copies,
    transposes, generics: the normalized gradients' [V, 1] and [g, h], the
    non-causal gradients' transposed summaries) and every `memref.copy`.
    Each becomes a GPU kernel with one thread per point of the op's
    parallel loops (the last one varying fastest across threads), which
    runs the op's reduction loops itself, and a launch stub call like the
    other kernels', so that `linattn-gpu-stage-buffers{device-buffers}`
    launches it on the caller's stream. A reduction along its inputs' rows
    (the innermost reduction loop indexes the contiguous dimension of more
    inputs than the innermost parallel loop does) whose outputs are each
    combined by one associative and commutative op (`arith.addf`,
    `arith.maximumf`, `arith.addi`, ...; 32-bit, or f16/bf16 combined in
    f32 across lanes) takes a group of lanes per point instead: as many as
    the reduction has points, a power of two up to a warp, each lane
    reducing every lanes-th point from the combiner's neutral element, the
    partial results combined by shuffles and then with the output (in
    another order than the loop's: floating-point sums round differently).
    Operands of any strided layout
    (slices of wider buffers) are passed as the flat buffer they view, with
    their offset and strides; buffers, constants and scalars the op's body
    reads from above (`memref.load` of a buffer by computed indices) go
    with them.

    Ops it cannot run so are left to the host, and device-buffers then
    reports them: outputs that several points of the parallel loops write
    (an output map that is not a projected permutation of exactly the
    parallel loops), bodies that write memory or read it other than by
    `memref.load` of a buffer defined above, captured values that are
    neither constants, scalars nor buffers.

    `linattn-lower-to-nvvm{device-buffers}` runs it, where nothing else
    could compute the glue (the host may not touch device memory). In the
    host-buffer convention the stage copies every buffer it writes in as
    well as out (it keeps what the kernel does not write).

    ```mlir
    linalg.generic {indexing_maps = [#id, #id], iterator_types = [...]}
        ins(%a : memref<2x?x8xf32>)
        outs(%b : memref<2x?x8xf32, strided<[?, 9, 1]>>) {...}
    // becomes
    call @__linattn_launch_linattn_linalg_generic_0(%blocks, %c1, %c1,
        %c256, %c1, %c1, %a_flat, %a_offset, %a_strides..., %b_flat, ...,
        %sizes...)
    ```
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "Threads per block of the kernels (a multiple of 32)">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::func::FuncDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
  ];
}

def LinAttnGPUDynamicSharedMemoryPass
    : Pass<"linattn-gpu-dynamic-shared-memory", "::mlir::ModuleOp"> {
  let summary = "Give kernels with more than 48 KiB of workgroup memory "
                "dynamic shared memory";
  let description = [{
    CUDA limits a kernel's static shared memory to 48 KiB; more must be
    dynamic shared memory, sized at launch, and opted into per kernel
    (`mgpuLaunchKernel` of linattn's runtime sets
    `CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES` when a launch asks for
    more than 48 KiB). Every kernel whose workgroup attributions take more
    than 48 KiB (each at an offset aligned to its `llvm.align`, at least its
    element size) loses them: each becomes a `memref.view` of
    `gpu.dynamic_shared_memory` at its offset, and every `gpu.launch_func`
    of the kernel gets the total as its dynamic shared memory size. Kernels
    of 48 KiB or less are left as they are. A kernel that needs more than
    `chip` allows per block, or a launch of a converted kernel that already
    has a dynamic size, is an error. Runs before the kernels are lowered to
    NVVM, on modules that hold their launches.

    ```mlir
    gpu.func @k(...) workgroup(%a : memref<24576xbf16, 3>, %b : ...) kernel
    // becomes
    gpu.func @k(...) kernel {
      %base = gpu.dynamic_shared_memory : memref<?xi8, 3>
      %a = memref.view %base[%c0][] : memref<?xi8, 3> to memref<24576xbf16, 3>
      ...
    gpu.launch_func @kernels::@k ... dynamic_shared_memory_size %c73984_i32
    ```
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_90\"",
           "The target GPU (sm_XY), whose per-block limit is checked">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::memref::MemRefDialect",
  ];
}

def LinAttnGPUPortableTargetPass
    : Pass<"linattn-gpu-portable-target", "::mlir::ModuleOp"> {
  let summary = "Target the portable chip (sm_90 for sm_90a) where no kernel "
                "needs the architecture-specific one";
  let description = [{
    PTX for an architecture-specific chip (sm_90a) runs on that architecture
    alone; PTX for sm_90 can also be JIT-compiled by the driver for later
    GPUs. Every `#nvvm.target` of a `gpu.module` whose chip has the `a`
    suffix loses it when every op of the module runs on the chip without
    it: NVVM ops by the chips they declare (`wgmma.*` needs sm_90a), and
    `nvgpu.warpgroup.*`, which becomes wgmma, never. The target's other
    fields stay. Inline assembly is not inspected. Runs after the kernels
    are lowered to NVVM: `linattn-lower-to-nvvm` targets sm_90a when `wgmma`
    is on and the chip is sm_90, then runs it, so that modules without wgmma
    kernels (f32 data, decode steps) stay portable.

    It also checks (with `portable-chips=false` only checks) that every
    module whose kernels use bulk copies or
    mbarrier transaction counts (`bulk-copies`) targets PTX 8.0 or later:
    the `+ptxNN` of the target's features, or the chip's minimum (7.8 for
    sm_90). The NVPTX backend cannot select them below that and aborts;
    this pass reports the module instead. Likewise every `llvm.call_intrinsic`
    of a targeted module must name an LLVM intrinsic, with its operand and
    result types, and an overloaded one the name those types give
    (`llvm.nvvm.ex2.approx.ftz.f32` on f32, not on f64): LLVM takes the
    intrinsic from the name, and the backend aborts on a call it cannot
    select. What passes these checks and still cannot be selected (an
    intrinsic LLVM defines on types or chips NVPTX has no instruction for)
    is reported by `linattn-gpu-module-to-binary`, which compiles the
    modules.

    ```mlir
    gpu.module @k [#nvvm.target<O = 3, chip = "sm_90a">] {
      llvm.func @step(...) attributes {nvvm.kernel} { ... }   // no wgmma
    }
    // becomes
    gpu.module @k [#nvvm.target<O = 3, chip = "sm_90">] { ... }
    ```
  }];
  let options = [
    Option<"portableChips", "portable-chips", "bool", /*default=*/"true",
           "Give back the portable chip where no op needs the "
           "architecture-specific one (false: only check the PTX version "
           "of bulk copies)">,
  ];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect",
    "::mlir::NVVM::NVVMDialect",
  ];
}

def LinAttnGPUModuleToBinaryPass
    : Pass<"linattn-gpu-module-to-binary", "::mlir::ModuleOp"> {
  let summary = "gpu-module-to-binary, with what LLVM cannot compile an "
                "error instead of an abort";
  let description = [{
    Runs upstream's `gpu-module-to-binary` with its `toolkit`, `opts` and
    `format` options. LLVM's backends report what they cannot compile (the
    NVPTX backend an intrinsic call it has no instruction for on the
    target's chip or PTX version, such as `llvm.nvvm.prefetch.global.L2`
    below sm_90 with PTX 8.0 or `llvm.nvvm.ex2.approx.ftz.f64`) by a fatal
    error, which aborts the process: a Python interpreter or any other
    program that compiles kernels in-process. Here the fatal error fails the
    pass instead, with LLVM's reason on the `gpu.module` it was compiling.

    What the failed compilation allocated is leaked (LLVM is built without
    exceptions and its frames are left without unwinding), and LLVM's fatal
    error handler stays installed for the rest of the process, in place of
    any other the program had: fatal errors elsewhere print their reason
    and end the process, as without a handler. `linattn-lower-to-nvvm`
    compiles its kernels with this pass.

    ```
    error: LLVM could not compile the GPU module: Cannot select: intrinsic %llvm.nvvm.prefetch.global.L2
    ```
  }];
  let options = [
    Option<"toolkitPath", "toolkit", "std::string", /*default=*/"\"\"",
           "gpu-module-to-binary's toolkit: the CUDA toolkit's path">,
    Option<"cmdOptions", "opts", "std::string", /*default=*/"\"\"",
           "gpu-module-to-binary's opts: options for the tools it runs">,
    Option<"compilationTarget", "format", "std::string",
           /*default=*/"\"fatbin\"",
           "gpu-module-to-binary's format: offloading, assembly, isa, bin "
           "or fatbin">,
  ];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect",
  ];
}

def LinAttnGPUFitRegistersPass
    : Pass<"linattn-gpu-fit-registers", "::mlir::ModuleOp"> {
  let summary = "Bound kernels' registers where ptxas fits more blocks per "
                "SM without spilling";
  let description = [{
    ptxas gives a kernel the registers it likes unless the PTX bounds them,
    and given a bound (`.minnctapersm`) it takes all of it. Where its own
    choice holds a kernel to fewer blocks per SM than the kernel's shared
    memory and threads allow, a bound buys blocks or costs spills, which
    only ptxas can tell. This pass asks it.

    Each `gpu.module` with one `#nvvm.target` whose chip it knows the SM of
    (sm_80, sm_86, sm_89, sm_90, sm_100, sm_120, with or without the `a`
    suffix) is serialized to PTX as gpu-module-to-binary would and compiled
    with `ptxas -v` (the target's chip, optimization level and
    `ptxas-cmd-options`). For every kernel (`nvvm.kernel`) whose launches
    (`gpu.launch_func` in the enclosing module) all have the same constant
    block size and constant dynamic shared memory, the blocks per SM that
    its registers, its shared memory (static and dynamic, 1 KiB per block
    reserved) and its threads allow are counted as the CUDA occupancy
    calculator counts them. Kernels that registers hold below the others
    are compiled again under `.minnctapersm` one block more at a time
    (in place of their own, if any), all of them in one ptxas run per
    round, until ptxas spills or uses more stack than unbounded, or falls
    short of the blocks asked. The most blocks reached become the kernel's
    `nvvm.minctasm`; kernels with none keep their attributes.

    Runs after the kernels are lowered to NVVM, while the host still
    launches them with `gpu.launch_func` (`linattn-lower-to-nvvm` runs it
    before lowering the host with `fit-registers=true`). Needs ptxas: in
    `cuda-path`'s `bin`, else on PATH; a module without launches of NVVM
    kernels needs nothing. More blocks per SM hide more latency, but the
    bounded code may run more instructions: whether it is faster is for a
    GPU to say.

    ```mlir
    gpu.module @k [#nvvm.target<O = 3, chip = "sm_90a">] {
      // ptxas: 197 registers, 2 blocks of 128 threads per SM (its shared
      // memory allows 3)
      llvm.func @outputs(...) attributes {nvvm.kernel, nvvm.maxntid = ...}
    }
    // becomes, where ptxas fits 3 without spilling (168 registers)
      llvm.func @outputs(...) attributes {nvvm.kernel, nvvm.minctasm = 3 : i32, ...}
    ```
  }];
  let options = [
    Option<"cudaPath", "cuda-path", "std::string", /*default=*/"\"\"",
           "CUDA toolkit whose bin/ptxas (and nvvm/libdevice) are used; "
           "empty: ptxas from PATH">,
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Report every kernel's registers and blocks per SM, before and "
           "after, as remarks">,
  ];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::NVVM::NVVMDialect",
  ];
}

def LinAttnGPUEmbedKernelIRPass
    : Pass<"linattn-gpu-embed-kernel-ir", "::mlir::ModuleOp"> {
  let summary = "Embed the GPU kernels as MLIR text for the GPU emulator";
  let description = [{
    Replaces every `gpu.module` by a `gpu.binary` of the same name whose one
    object (format `bin`, target `#nvvm.target<chip = ...>`) is the module's
    MLIR text, with locations. The host side is then lowered as usual:
    `gpu-to-llvm` and the LLVM translation embed the text and pass it to
    `mgpuModuleLoad(data, size)`, where `liblinattn_gpu_emulator.so` parses
    it and interprets the kernels on the CPU. No CUDA toolkit is needed.
    Run it while the kernels are still structured (before `scf` is lowered
    to `cf`): the emulator interprets `scf.for` and `scf.if`. A kernel whose
    workgroup buffers need more shared memory than `chip` allows a block is
    an error, as in `linattn-gpu-dynamic-shared-memory` on the compiled path.

    ```mlir
    gpu.module @linattn_kernels { gpu.func @k(...) kernel { ... } }
    // becomes
    gpu.binary @linattn_kernels [#gpu.object<#nvvm.target<chip = "sm_90">,
        bin = "gpu.module @linattn_kernels {...}">]
    ```
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_90\"",
           "Chip named by the objects' #nvvm.target, whose shared memory "
           "per block the kernels must fit">,
  ];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect",
    "::mlir::NVVM::NVVMDialect",
  ];
}

#endif // LINATTN_CONVERSION_PASSES_TD
