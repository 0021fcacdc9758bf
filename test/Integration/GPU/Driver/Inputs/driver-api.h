//===- driver-api.h - driver calls of the Driver test programs --*- C++ -*-===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//
//
// For the test programs that call the CUDA driver themselves beside the
// runtime library: the driver functions they name, looked up in the
// libcuda.so.1 the runtime loads too (the fake's, first on
// LD_LIBRARY_PATH), and a check that ends the program on a failed call.
//
//   #define DRIVER_FUNCTIONS(X) X(cuInit) X(cuStreamCreate) ...
//   LINATTN_DRIVER(DRIVER_FUNCTIONS) cu;   // members cu.cuInit, ...
//   cu.load();
//
//===----------------------------------------------------------------------===//

#ifndef LINATTN_TEST_DRIVER_API_H
#define LINATTN_TEST_DRIVER_API_H

#include <cuda.h>

#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>

// After expansion: cuda.h maps cuMemAlloc to cuMemAlloc_v2 and the like.
#define LINATTN_STR(x) #x
#define LINATTN_XSTR(x) LINATTN_STR(x)

/// Sets `fn` to the driver function `name` of `library`; ends the program
/// when there is none.
template <typename F>
void lookupDriverFunction(void *library, F &fn, const char *name) {
  fn = reinterpret_cast<F>(dlsym(library, name));
  if (!fn) {
    std::fprintf(stderr, "no %s in libcuda.so.1\n", name);
    std::exit(1);
  }
}

/// Opens libcuda.so.1; ends the program when it cannot.
inline void *openDriver() {
  void *library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    std::fprintf(stderr, "cannot load libcuda.so.1\n");
    std::exit(1);
  }
  return library;
}

/// Ends the program, naming `what`, unless `result` is CUDA_SUCCESS.
inline void check(CUresult result, const char *what) {
  if (result != CUDA_SUCCESS) {
    std::fprintf(stderr, "%s failed: %d\n", what, static_cast<int>(result));
    std::exit(1);
  }
}

#define LINATTN_DRIVER_MEMBER(name) decltype(&::name) name = nullptr;
#define LINATTN_DRIVER_LOAD(name)                                              \
  lookupDriverFunction(library, name, LINATTN_XSTR(name));

/// A struct of the driver functions `LIST(X)` names, as members of their
/// names, which `load()` looks up.
#define LINATTN_DRIVER(LIST)                                                   \
  struct {                                                                     \
    LIST(LINATTN_DRIVER_MEMBER)                                                \
    void load() {                                                              \
      void *library = openDriver();                                            \
      LIST(LINATTN_DRIVER_LOAD)                                                \
    }                                                                          \
  }

#endif // LINATTN_TEST_DRIVER_API_H
