/*===-- linattn-c/HostAllocator.h - Caching host allocator --------*- C -*-===*\
|*                                                                            *|
|* Part of the linattn project.                                               *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
/*
 * Host memory for compiled code. Code lowered by linattn-lower-to-cpu
 * (and the host side of linattn-lower-to-nvvm) calls `malloc`,
 * `aligned_alloc` and `free` for every buffer it allocates. A call of a
 * large kernel allocates and frees its intermediates, each megabytes big,
 * which glibc serves with fresh `mmap`s and unmaps at `free`: every call
 * then faults its pages in again, which costs as much as the arithmetic of
 * a backward pass.
 *
 * Binding those three names to the functions below in a JIT (for MLIR's C
 * API: `mlirExecutionEngineRegisterSymbol` before
 * `mlirExecutionEngineInitialize`), or ahead of time with
 * `linattn-compile --host-allocator=caching` (which links
 * liblinattn_host_allocator.so), keeps freed blocks of at least 128 KiB
 * in a cache, up to a limit, and hands them out again to requests of about
 * their size (at most a quarter larger). Every block is one the C library's
 * `malloc` or `aligned_alloc` returned, so results handed to a caller may
 * still be released with the C library's `free`; blocks the cache does not
 * know (smaller ones, foreign ones) go back to the C library's `free`. The
 * cache is shared by every engine of the process and is thread-safe.
 *
 * The limit is 1 GiB, or the value of the environment variable
 * `LINATTN_HOST_CACHE_LIMIT` (bytes) when the cache is first used; 0
 * disables caching.
 */

#ifndef LINATTN_C_HOSTALLOCATOR_H
#define LINATTN_C_HOSTALLOCATOR_H

#include "mlir-c/Support.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// `malloc` for compiled code: a cached block of about `size` bytes, else
/// the C library's `malloc(size)`.
MLIR_CAPI_EXPORTED void *linattnHostMalloc(size_t size);

/// `aligned_alloc` for compiled code: a cached block of about `size` bytes
/// whose address is a multiple of `alignment`, else the C library's
/// `aligned_alloc(alignment, size)`.
MLIR_CAPI_EXPORTED void *linattnHostAlignedAlloc(size_t alignment, size_t size);

/// `free` for compiled code: keeps `pointer`'s block in the cache when it
/// is large enough and fits under the limit (evicting the blocks cached
/// longest ago), else releases it with the C library's `free`.
MLIR_CAPI_EXPORTED void linattnHostFree(void *pointer);

/// What the cache holds and has done since the process started.
typedef struct {
  uint64_t cachedBytes;  ///< Usable bytes of the blocks held now.
  uint64_t cachedBlocks; ///< Blocks held now.
  uint64_t limitBytes;   ///< Most bytes it holds.
  uint64_t hits;         ///< Requests served from the cache.
  uint64_t misses;       ///< Cacheable requests the C library served.
} LinattnHostCacheStats;

MLIR_CAPI_EXPORTED LinattnHostCacheStats linattnHostCacheGetStats(void);

/// Releases every cached block to the C library; returns their bytes.
MLIR_CAPI_EXPORTED uint64_t linattnHostCacheRelease(void);

/// Sets the most bytes the cache holds (0: none), releasing the blocks cached
/// longest ago until it fits; returns the previous limit.
MLIR_CAPI_EXPORTED uint64_t linattnHostCacheSetLimit(uint64_t bytes);

#ifdef __cplusplus
}
#endif

#endif // LINATTN_C_HOSTALLOCATOR_H
