# Sanitizer builds: LLVM_USE_SANITIZER set to "Address", "Undefined" or
# "Address;Undefined" (`make check-sanitizers` sets the last), which
# HandleLLVMOptions, included after this file, turns into the compile and
# link flags of every target. It takes UBSan's from LLVM_UBSAN_FLAGS, which
# LLVM's own build defines and its installed CMake modules do not: without
# them "Undefined" would add nothing. They are LLVM's (no vptr checks: LLVM
# and linattn are built without RTTI; the first error ends the process).
#
# LLVM and MLIR themselves are Debian's, uninstrumented. linattn's libraries
# link clang's sanitizer runtime as a shared library (-shared-libsan), so that
# every library and tool of the build shares one runtime and the libraries
# also load into programs that are not instrumented (python3 with the Python
# package, Debian's mlir-opt with the plugin): the tests preload that runtime
# (LINATTN_SANITIZER_RUNTIME) and link the programs they build against
# linattn's libraries with LINATTN_SANITIZER_LINK_FLAGS.

set(LINATTN_SANITIZER_LINK_FLAGS "")
set(LINATTN_SANITIZER_RUNTIME "")
if(NOT LLVM_USE_SANITIZER)
  return()
endif()

if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR "linattn: LLVM_USE_SANITIZER needs clang "
                      "(-shared-libsan), not ${CMAKE_CXX_COMPILER_ID}")
endif()
set(_linattn_sanitizers ${LLVM_USE_SANITIZER})
list(SORT _linattn_sanitizers)
if(_linattn_sanitizers STREQUAL "Address;Undefined")
  set(_linattn_fsanitize "address,undefined")
  set(_linattn_runtime_name "asan")
elseif(_linattn_sanitizers STREQUAL "Address")
  set(_linattn_fsanitize "address")
  set(_linattn_runtime_name "asan")
elseif(_linattn_sanitizers STREQUAL "Undefined")
  set(_linattn_fsanitize "undefined")
  set(_linattn_runtime_name "ubsan_standalone")
else()
  message(FATAL_ERROR "linattn: LLVM_USE_SANITIZER='${LLVM_USE_SANITIZER}': "
                      "only Address, Undefined or Address;Undefined")
endif()

# The runtime's path, as the compiler's driver finds it (Debian: in
# libclang-rt-22-dev, which `LINATTN_SANITIZERS=1 scripts/install-deps.sh`
# installs).
set(_linattn_runtime_file
  "libclang_rt.${_linattn_runtime_name}-${CMAKE_SYSTEM_PROCESSOR}.so")
execute_process(
  COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=${_linattn_runtime_file}
  OUTPUT_VARIABLE LINATTN_SANITIZER_RUNTIME
  OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT IS_ABSOLUTE "${LINATTN_SANITIZER_RUNTIME}" OR
   NOT EXISTS "${LINATTN_SANITIZER_RUNTIME}")
  message(FATAL_ERROR "linattn: ${CMAKE_CXX_COMPILER} has no "
                      "${_linattn_runtime_file} (Debian: install "
                      "libclang-rt-22-dev, as `LINATTN_SANITIZERS=1 "
                      "scripts/install-deps.sh` does)")
endif()

set(LLVM_UBSAN_FLAGS
  "-fsanitize=undefined -fno-sanitize=vptr,function -fno-sanitize-recover=all"
  CACHE STRING "Compile flags of UBSan with LLVM_USE_SANITIZER's Undefined")
add_link_options(-shared-libsan)
set(LINATTN_SANITIZER_LINK_FLAGS "-fsanitize=${_linattn_fsanitize} -shared-libsan")
message(STATUS "linattn: sanitizers ${LLVM_USE_SANITIZER}, runtime "
               "${LINATTN_SANITIZER_RUNTIME}")
