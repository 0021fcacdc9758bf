"""The fake CUDA driver's own rules (test/FakeCuda), each broken once and
kept once, through ctypes: what the other Driver tests rely on it to refuse.
Prints one line per case: its name and the CUresult name the call returned.
Run with the fake's folder first on LD_LIBRARY_PATH, two devices of compute
capabilities 9.0 and 8.0, and the paths of PTX's kernel as cubins for sm_80,
sm_86 and sm_90 as arguments."""

import ctypes
import sys

cuda = ctypes.CDLL("libcuda.so.1")
c_void_p, c_int, c_size_t = ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t


def name_of(result):
    text = ctypes.c_char_p()
    cuda.cuGetErrorName(result, ctypes.byref(text))
    return text.value.decode() if text.value else str(result)


def case(what, result):
    print(f"{what}: {name_of(result)}", flush=True)


def handle():
    return c_void_p()


PTX = b""".version 8.0
.target sm_80
.address_size 64
.visible .entry kernel64(
    .param .u64 kernel64_param_0
)
.maxntid 64, 1, 1
{
    ret;
}
"""
NEWER_PTX = PTX.replace(b".target sm_80", b".target sm_100")

case("call before cuInit", cuda.cuDeviceGetCount(ctypes.byref(c_int())))
case("cuInit", cuda.cuInit(0))
ctx0, ctx1 = handle(), handle()
case("module load without a context",
     cuda.cuModuleLoadData(ctypes.byref(handle()), PTX))
cuda.cuDevicePrimaryCtxRetain(ctypes.byref(ctx0), 0)
cuda.cuDevicePrimaryCtxRetain(ctypes.byref(ctx1), 1)
cuda.cuCtxSetCurrent(ctx0)

module, function = handle(), handle()
case("PTX for a newer chip", cuda.cuModuleLoadData(ctypes.byref(handle()), NEWER_PTX))
case("PTX", cuda.cuModuleLoadData(ctypes.byref(module), PTX))
cubins = {arch: open(path, "rb").read()
          for arch, path in zip(("sm_80", "sm_86", "sm_90"), sys.argv[1:4])}
for arch, device, ctx in (("sm_90", 0, ctx0), ("sm_80", 0, ctx0),
                          ("sm_80", 1, ctx1), ("sm_86", 1, ctx1),
                          ("sm_90", 1, ctx1)):
    cuda.cuCtxSetCurrent(ctx)
    loaded = handle()
    case(f"{arch} cubin on device {device}",
         cuda.cuModuleLoadData(ctypes.byref(loaded), cubins[arch]))
    if loaded.value:
        cuda.cuModuleUnload(loaded)
cuda.cuCtxSetCurrent(ctx0)
case("a kernel the module lacks",
     cuda.cuModuleGetFunction(ctypes.byref(handle()), module, b"kernel32"))
case("its kernel", cuda.cuModuleGetFunction(ctypes.byref(function), module, b"kernel64"))

param = c_void_p(0)
params = (c_void_p * 1)(ctypes.cast(ctypes.pointer(param), c_void_p))


def launch(grid=(1, 1, 1), block=(64, 1, 1), smem=0, stream=None):
    return cuda.cuLaunchKernel(function, *grid, *block, smem, stream, params, None)


case("launch", launch())
case("launch past .maxntid", launch(block=(128, 1, 1)))
case("launch below .maxntid", launch(block=(32, 1, 1)))
case("launch of 1025 threads", launch(block=(1025, 1, 1)))
case("grid y of 65536", launch(grid=(1, 65536, 1)))
case("49 KiB of shared memory without the opt-in", launch(smem=49 * 1024))
# CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
case("the opt-in", cuda.cuFuncSetAttribute(function, 8, 49 * 1024))
case("49 KiB of shared memory after it", launch(smem=49 * 1024))
case("an opt-in past 227 KiB", cuda.cuFuncSetAttribute(function, 8, 228 * 1024))

cuda.cuCtxSetCurrent(ctx1)
case("launch in another context", launch())
stream1 = handle()
cuda.cuStreamCreate(ctypes.byref(stream1), 0)
cuda.cuCtxSetCurrent(ctx0)
case("a stream of another context",
     cuda.cuStreamSynchronize(stream1))

pointer, other = ctypes.c_uint64(), ctypes.c_uint64()
cuda.cuMemAlloc_v2(ctypes.byref(pointer), c_size_t(256))
host = ctypes.create_string_buffer(512)
case("copy inside the buffer",
     cuda.cuMemcpyAsync(pointer, ctypes.c_uint64(ctypes.addressof(host)), c_size_t(256), None))
case("copy past its end",
     cuda.cuMemcpyAsync(ctypes.c_uint64(pointer.value + 128),
                        ctypes.c_uint64(ctypes.addressof(host)), c_size_t(256), None))
case("copy to null", cuda.cuMemcpyAsync(ctypes.c_uint64(0),
                                        ctypes.c_uint64(ctypes.addressof(host)),
                                        c_size_t(16), None))
case("free of a pointer inside the buffer",
     cuda.cuMemFree_v2(ctypes.c_uint64(pointer.value + 16)))

stream = handle()
cuda.cuStreamCreate(ctypes.byref(stream), 0)
# CU_STREAM_CAPTURE_MODE_GLOBAL = 0
for unsafe, call in [
        ("cuMemAlloc", lambda: cuda.cuMemAlloc_v2(ctypes.byref(other), c_size_t(64))),
        ("sync of the capturing stream", lambda: cuda.cuStreamSynchronize(stream)),
        ("the legacy stream", lambda: launch(stream=None))]:
    cuda.cuStreamBeginCapture_v2(stream, 0)
    case(f"{unsafe} during a global capture", call())
    graph = handle()
    case("  its capture's end", cuda.cuStreamEndCapture(stream, ctypes.byref(graph)))
cuda.cuStreamBeginCapture_v2(stream, 0)
case("launch during a global capture", launch(stream=stream))
case("stream-ordered allocation during it",
     cuda.cuMemAllocAsync(ctypes.byref(other), c_size_t(64), stream))
case("its free", cuda.cuMemFreeAsync(other, stream))
graph, exec_ = handle(), handle()
case("the capture's end", cuda.cuStreamEndCapture(stream, ctypes.byref(graph)))
case("instantiation", cuda.cuGraphInstantiateWithFlags(ctypes.byref(exec_), graph,
                                                       ctypes.c_ulonglong(0)))
case("replay", cuda.cuGraphLaunch(exec_, stream))
cuda.cuGraphExecDestroy(exec_)
cuda.cuGraphDestroy(graph)
cuda.cuStreamDestroy_v2(stream)
cuda.cuMemFree_v2(pointer)
sys.exit(0)
