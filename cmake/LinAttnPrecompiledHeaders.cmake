# One precompiled header of the MLIR and LLVM headers nearly every linattn
# source includes (directly or through linattn/InitAll.h), shared by the
# targets that name it with linattn_use_precompiled_headers. Parsing these
# headers is most of a source's compile time: without them a pass's file
# takes a few seconds instead of twenty. The header holds upstream headers
# only, so it is built once and never rebuilt by a change to linattn.
#
# Every source of a target that uses it sees these headers first; a source
# that forgets an include of its own still compiles. Configure with
# -DLINATTN_ENABLE_PCH=OFF to check the includes.

option(LINATTN_ENABLE_PCH
  "Precompile the MLIR and LLVM headers most linattn sources include" ON)

set(LINATTN_PRECOMPILED_HEADERS
  <mlir/Dialect/Arith/IR/Arith.h>
  <mlir/Dialect/Bufferization/IR/Bufferization.h>
  <mlir/Dialect/ControlFlow/IR/ControlFlowOps.h>
  <mlir/Dialect/Func/IR/FuncOps.h>
  <mlir/Dialect/GPU/IR/GPUDialect.h>
  <mlir/Dialect/LLVMIR/LLVMDialect.h>
  <mlir/Dialect/LLVMIR/NVVMDialect.h>
  <mlir/Dialect/Linalg/IR/Linalg.h>
  <mlir/Dialect/Math/IR/Math.h>
  <mlir/Dialect/MemRef/IR/MemRef.h>
  <mlir/Dialect/NVGPU/IR/NVGPUDialect.h>
  <mlir/Dialect/SCF/IR/SCF.h>
  <mlir/Dialect/Tensor/IR/Tensor.h>
  <mlir/Dialect/Vector/IR/VectorOps.h>
  <mlir/IR/BuiltinOps.h>
  <mlir/IR/PatternMatch.h>
  <mlir/Pass/Pass.h>
  <mlir/Pass/PassManager.h>
  <mlir/Transforms/DialectConversion.h>
  <mlir/Transforms/GreedyPatternRewriteDriver.h>
  )

if(LINATTN_ENABLE_PCH)
  # Compiled with the flags of every C++ source here (those of LLVM's
  # HandleLLVMOptions and llvm_update_compile_flags); a target whose flags
  # differ in what clang checks (optimization level, PIC) cannot reuse it.
  file(CONFIGURE OUTPUT ${CMAKE_BINARY_DIR}/linattn_pch.cpp
       CONTENT "// The source of the precompiled header's target.\n")
  add_library(linattn_pch OBJECT ${CMAKE_BINARY_DIR}/linattn_pch.cpp)
  llvm_update_compile_flags(linattn_pch)
  set_target_properties(linattn_pch PROPERTIES POSITION_INDEPENDENT_CODE ON)
  target_precompile_headers(linattn_pch PRIVATE ${LINATTN_PRECOMPILED_HEADERS})
  # No modification times of the headers in it: a copy of it that ccache
  # restores into a fresh build folder stays valid there.
  target_compile_options(linattn_pch PRIVATE "SHELL:-Xclang -fno-pch-timestamp")
endif()

# linattn_use_precompiled_headers(<target>...)
# The C++ sources of each target (for add_mlir_library's <name>, its object
# library obj.<name>) start from the shared precompiled header.
function(linattn_use_precompiled_headers)
  if(NOT LINATTN_ENABLE_PCH)
    return()
  endif()
  foreach(target ${ARGN})
    if(TARGET obj.${target})
      set(target obj.${target})
    endif()
    target_precompile_headers(${target} REUSE_FROM linattn_pch)
  endforeach()
endfunction()
