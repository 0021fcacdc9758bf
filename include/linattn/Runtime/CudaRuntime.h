/*===- CudaRuntime.h - linattn's CUDA runtime library -------------*- C -*-===*\
|*                                                                            *|
|* Part of the linattn project.                                               *|
|*                                                                            *|
|*===----------------------------------------------------------------------===*|
|*                                                                            *|
|* The functions liblinattn_cuda_runtime.so exports besides the mgpu* entry   *|
|* points that MLIR's gpu-to-llvm emits: error reporting, device queries and  *|
|* event timing. The mock runtime (liblinattn_mock_gpu_runtime.so) exports    *|
|* them too.                                                                  *|
|*                                                                            *|
|* Every mgpu* function reports a failure by recording a message for the      *|
|* calling thread (the first one is kept until the thread clears it: later    *|
|* failures are often consequences) and printing it to stderr; with           *|
|* LINATTN_CUDA_ABORT_ON_ERROR=1 in the environment the process aborts on the *|
|* first failure instead. While a failure is recorded no kernel is launched   *|
|* from that thread: after a buffer that was not allocated or a copy that did *|
|* not happen, a kernel would fault on memory that is not there, which ends   *|
|* the process's CUDA context. Check and clear (linattnCudaGetLastError,      *|
|* linattnCudaClearLastError) on the calling thread after each call. Failures *|
|* of other threads are theirs alone.                                         *|
|*                                                                            *|
|* Calls act in the CUDA context current on the calling thread (a            *|
|* framework's), or, on a thread with none, in the primary context of device  *|
|* 0 (or of the device mgpuSetDefaultDevice names), which they make current.  *|
|* Kernel images are loaded into each context that launches from them.       *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef LINATTN_RUNTIME_CUDARUNTIME_H
#define LINATTN_RUNTIME_CUDARUNTIME_H

#ifdef __cplusplus
extern "C" {
#endif

/// The message of the calling thread's first failure since it last cleared
/// it, or NULL. Valid until the thread records another failure.
const char *linattnCudaGetLastError(void);

/// Forgets the calling thread's recorded failure.
void linattnCudaClearLastError(void);

/// The number of CUDA devices; 0 when the driver cannot be loaded or sees no
/// device (the reason is then the last error).
int linattnCudaGetDeviceCount(void);

/// Writes the name of the device calls act on (see above) into `name` (at
/// most `size` bytes, NUL-terminated); returns 0 on success.
int linattnCudaGetDeviceName(char *name, int size);

/// Writes the compute capability of the device calls act on (9 and 0 for
/// sm_90); returns 0 on success.
int linattnCudaGetComputeCapability(int *major, int *minor);

/// Writes the number of streaming multiprocessors of the device calls act on
/// (132 on an H100 SXM); returns 0 on success.
int linattnCudaGetMultiprocessorCount(int *count);

/// Records a timing event on the default stream; returns 0 on success.
int linattnCudaTimerStart(void);

/// Records a second event, waits for it and returns the milliseconds since
/// the last linattnCudaTimerStart, or a negative value on failure. Work on
/// the streams the generated code creates is ordered with the default
/// stream, so the interval covers it.
double linattnCudaTimerStop(void);

#ifdef __cplusplus
}
#endif

#endif /* LINATTN_RUNTIME_CUDARUNTIME_H */
