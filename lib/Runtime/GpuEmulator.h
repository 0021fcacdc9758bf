//===- GpuEmulator.h - an interpreter of linattn's GPU kernels --*- C++ -*-===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//
//
// The kernel side of liblinattn_gpu_emulator.so: the library is the mock
// runtime (MockGpuRuntime.cpp: device memory in host memory, every call
// logged) built with LINATTN_GPU_EMULATOR, whose module and launch functions
// call these. A module is the MLIR text linattn-gpu-embed-kernel-ir embeds;
// a launch interprets the gpu.func on the CPU, every block's threads in
// lockstep, and aborts the process with a message naming the kernel, the
// op and the thread on anything a GPU would do wrong or undefined (see
// GpuEmulator.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef LINATTN_LIB_RUNTIME_GPUEMULATOR_H
#define LINATTN_LIB_RUNTIME_GPUEMULATOR_H

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace linattn::gpu_emulator {

/// Parses `size` bytes of MLIR text holding one gpu.module; aborts with the
/// parser's diagnostics when it does not parse.
void *loadModule(const void *data, size_t size);

/// Frees a module of loadModule and its kernels.
void unloadModule(void *module);

/// The kernel `name` of `module`, prepared for interpretation; aborts when
/// there is none or it uses an op the emulator does not know.
void *getFunction(void *module, const char *name);

/// The name of a kernel of getFunction.
const char *functionName(void *function);

/// Whether [pointer, pointer + bytes) lies in one device allocation.
using DeviceRangeCheck =
    std::function<bool(const void *pointer, uint64_t bytes)>;

/// Runs `function` on the grid: `params` as gpu-to-llvm passes them (five
/// words per rank-1 memref: allocated and aligned pointers, offset, size,
/// stride; one per scalar). Buffers that do not lie in device memory, and
/// every error the kernel makes, abort the process.
void launch(void *function, const int64_t grid[3], const int64_t block[3],
            void **params, size_t paramCount,
            const DeviceRangeCheck &isDeviceRange);

/// Prints "linattn GPU emulator: error: <message>" and aborts.
[[noreturn]] void fatalError(const std::string &message);

/// "emulated GPU (...)": what linattnCudaGetDeviceName reports.
std::string deviceName();

} // namespace linattn::gpu_emulator

#endif // LINATTN_LIB_RUNTIME_GPUEMULATOR_H
