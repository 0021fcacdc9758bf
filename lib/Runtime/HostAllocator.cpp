//===- HostAllocator.cpp - Caching allocator for compiled code ------------===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//
//
// The cache behind include/linattn-c/HostAllocator.h: freed blocks of at
// least kMinCachedBytes, keyed by their usable size (malloc_usable_size), so
// that `free` needs no table of the blocks it handed out and blocks that
// left through a caller's own `free` leave no trace. A request takes the
// smallest cached block that holds it, if that block wastes at most a
// quarter of the request; the blocks cached longest ago are evicted first.
//
//===----------------------------------------------------------------------===//

#include "linattn-c/HostAllocator.h"

#include <malloc.h>

#include <cstddef>
#include <cstdlib>
#include <map>
#include <mutex>
#include <vector>

namespace {

/// Smaller blocks come from glibc's heap, which reuses them cheaply.
constexpr size_t kMinCachedBytes = size_t(128) << 10;
constexpr uint64_t kDefaultLimit = uint64_t(1) << 30;

uint64_t limitFromEnvironment() {
  const char *text = std::getenv("LINATTN_HOST_CACHE_LIMIT");
  if (!text || !*text)
    return kDefaultLimit;
  char *end = nullptr;
  unsigned long long value = std::strtoull(text, &end, 10);
  return *end == '\0' ? value : kDefaultLimit;
}

class HostCache {
public:
  /// Never destroyed: compiled code may free its blocks after static
  /// destructors ran.
  static HostCache &get() {
    static HostCache *cache = new HostCache();
    return *cache;
  }

  /// A cached block of at least `size` bytes at a multiple of `alignment`,
  /// or null (then the caller asks the C library).
  void *take(size_t size, size_t alignment) {
    if (size < kMinCachedBytes)
      return nullptr;
    std::lock_guard<std::mutex> lock(mutex);
    size_t most = size + size / 4;
    for (auto it = blocks.lower_bound(size);
         it != blocks.end() && it->first <= most; ++it) {
      if (reinterpret_cast<uintptr_t>(it->second.pointer) % alignment != 0)
        continue;
      void *pointer = it->second.pointer;
      cachedBytes -= it->first;
      blocks.erase(it);
      ++hits;
      return pointer;
    }
    ++misses;
    return nullptr;
  }

  /// Caches `pointer`'s block, or releases it when it is too small or does
  /// not fit under the limit.
  void give(void *pointer) {
    size_t usable = malloc_usable_size(pointer);
    if (usable < kMinCachedBytes) {
      std::free(pointer);
      return;
    }
    std::vector<void *> evicted;
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (usable > limit) {
        evicted.push_back(pointer);
      } else {
        evictUntil(limit - usable, evicted);
        blocks.emplace(usable, Block{pointer, clock++});
        cachedBytes += usable;
      }
    }
    for (void *block : evicted)
      std::free(block);
  }

  LinattnHostCacheStats stats() {
    std::lock_guard<std::mutex> lock(mutex);
    return {cachedBytes, blocks.size(), limit, hits, misses};
  }

  uint64_t setLimit(uint64_t bytes) {
    uint64_t previous;
    {
      std::lock_guard<std::mutex> lock(mutex);
      previous = limit;
      limit = bytes;
    }
    trim(bytes);
    return previous;
  }

  /// Releases the blocks cached longest ago until at most `bytes` remain
  /// cached; returns the bytes released.
  uint64_t trim(uint64_t bytes) {
    std::vector<void *> evicted;
    uint64_t released;
    {
      std::lock_guard<std::mutex> lock(mutex);
      released = cachedBytes;
      evictUntil(bytes, evicted);
      released -= cachedBytes;
    }
    for (void *block : evicted)
      std::free(block);
    return released;
  }

private:
  struct Block {
    void *pointer;
    uint64_t stamp;
  };

  HostCache() : limit(limitFromEnvironment()) {}

  /// Moves the blocks cached longest ago to `evicted` until at most `bytes`
  /// remain cached. Caller holds the mutex.
  void evictUntil(uint64_t bytes, std::vector<void *> &evicted) {
    while (cachedBytes > bytes) {
      auto oldest = blocks.begin();
      for (auto it = blocks.begin(); it != blocks.end(); ++it)
        if (it->second.stamp < oldest->second.stamp)
          oldest = it;
      evicted.push_back(oldest->second.pointer);
      cachedBytes -= oldest->first;
      blocks.erase(oldest);
    }
  }

  std::mutex mutex;
  /// By usable size.
  std::multimap<size_t, Block> blocks;
  uint64_t cachedBytes = 0;
  uint64_t limit;
  uint64_t hits = 0;
  uint64_t misses = 0;
  uint64_t clock = 0;
};

} // namespace

void *linattnHostMalloc(size_t size) {
  if (void *pointer = HostCache::get().take(size, alignof(std::max_align_t)))
    return pointer;
  return std::malloc(size);
}

void *linattnHostAlignedAlloc(size_t alignment, size_t size) {
  bool valid = alignment != 0 && (alignment & (alignment - 1)) == 0;
  if (valid)
    if (void *pointer = HostCache::get().take(size, alignment))
      return pointer;
  return std::aligned_alloc(alignment, size);
}

void linattnHostFree(void *pointer) {
  if (pointer)
    HostCache::get().give(pointer);
}

LinattnHostCacheStats linattnHostCacheGetStats() {
  return HostCache::get().stats();
}

uint64_t linattnHostCacheRelease() { return HostCache::get().trim(0); }

uint64_t linattnHostCacheSetLimit(uint64_t bytes) {
  return HostCache::get().setLimit(bytes);
}
