//===- CallModule.cpp - numpy arrays into a compiled function -------------===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//
//
// _linattn_call: the Python package's fast path for calling a JIT-compiled
// function with numpy arrays (python/linattn/jit.py). It does what the ctypes
// path does -- check each array against the argument's type, build its memref
// descriptor, call the function's C interface -- through the buffer protocol,
// in a few hundred nanoseconds per array instead of several microseconds.
//
// It only ever accepts: an argument that does not fit its plan exactly (a
// wrong dtype, rank or size, a non-contiguous, misaligned or read-only array,
// anything that is not an ndarray, a scalar that is not a float or an int)
// makes `call` return False without calling, and the caller takes the checked
// ctypes path, which raises the precise error. Built against the stable ABI of
// Python 3.11, where the buffer protocol joined it.
//
//===----------------------------------------------------------------------===//

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <cstdint>
#include <cstring>

namespace {

/// How one argument is passed; `call` reads an array of these from a bytes
/// object that jit.py packs with the same layout (`_PLAN_RECORD`).
enum ArgKind : int32_t {
  kMemRef = 0,
  kF32 = 1,
  kF64 = 2,
  kI64 = 3,
  kI32 = 4,
};

constexpr int kMaxRank = 8;
constexpr int kMaxArgs = 32;

struct ArgPlan {
  int32_t kind;
  int32_t rank;
  int32_t itemsize;
  int32_t writable;        // request a writable buffer (memref arguments)
  char format[8];          // the buffer format of the element type, NUL-padded
  int64_t shape[kMaxRank]; // -1 for a dynamic size
};
static_assert(sizeof(ArgPlan) == 88, "jit.py packs 88-byte records");

/// A memref descriptor of rank <= kMaxRank: allocated, aligned, offset, then
/// sizes and strides (in elements), packed as the C interface reads them.
struct Descriptor {
  int64_t words[3 + 2 * kMaxRank];
};

union Scalar {
  float f32;
  double f64;
  int64_t i64;
  int32_t i32;
};

/// The buffers held during a call, released on every exit.
struct HeldBuffers {
  Py_buffer views[kMaxArgs];
  int count = 0;
  ~HeldBuffers() {
    for (int i = 0; i < count; ++i)
      PyBuffer_Release(&views[i]);
  }
};

/// jit.py NUL-terminates every plan's format within its 8 bytes.
bool sameFormat(const char *format, const ArgPlan &plan) {
  return format && std::strncmp(format, plan.format, sizeof(plan.format)) == 0;
}

/// Checks `object` against a memref plan and fills `desc`; false when it
/// does not fit (with no Python error set).
bool describeArray(PyObject *object, PyObject *arrayType, const ArgPlan &plan,
                   Py_buffer &view, int &held, Descriptor &desc) {
  int isArray = PyObject_IsInstance(object, arrayType);
  if (isArray != 1) {
    PyErr_Clear();
    return false;
  }
  int flags = PyBUF_STRIDES | PyBUF_FORMAT;
  if (plan.writable)
    flags |= PyBUF_WRITABLE;
  if (PyObject_GetBuffer(object, &view, flags) != 0) {
    PyErr_Clear();
    return false;
  }
  ++held;
  if (view.ndim != plan.rank || view.itemsize != plan.itemsize ||
      !sameFormat(view.format, plan) || !PyBuffer_IsContiguous(&view, 'C') ||
      reinterpret_cast<uintptr_t>(view.buf) % plan.itemsize != 0)
    return false;
  int64_t *words = desc.words;
  words[0] = reinterpret_cast<int64_t>(view.buf);
  words[1] = words[0];
  words[2] = 0;
  for (int d = 0; d < plan.rank; ++d) {
    int64_t size = view.shape[d];
    if (plan.shape[d] >= 0 && plan.shape[d] != size)
      return false;
    words[3 + d] = size;
    // Floor division, as Python's `stride // itemsize`: only strides of
    // dimensions of size 0 or 1 can be other than a multiple of the size.
    int64_t stride = view.strides[d];
    int64_t quotient = stride / plan.itemsize;
    if (stride % plan.itemsize != 0 && stride < 0)
      --quotient;
    words[3 + plan.rank + d] = quotient;
  }
  return true;
}

/// Converts a Python float or int (exact types only) for a scalar plan.
bool convertScalar(PyObject *object, const ArgPlan &plan, Scalar &value) {
  if (plan.kind == kF32 || plan.kind == kF64) {
    double x;
    if (PyFloat_CheckExact(object)) {
      x = PyFloat_AsDouble(object);
    } else if (PyLong_CheckExact(object)) {
      x = PyLong_AsDouble(object);
      if (x == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        return false;
      }
    } else {
      return false;
    }
    if (plan.kind == kF32)
      value.f32 = static_cast<float>(x);
    else
      value.f64 = x;
    return true;
  }
  if (!PyLong_CheckExact(object))
    return false;
  int overflow = 0;
  long long x = PyLong_AsLongLongAndOverflow(object, &overflow);
  if (overflow || (x == -1 && PyErr_Occurred())) {
    PyErr_Clear();
    return false;
  }
  if (plan.kind == kI64) {
    value.i64 = x;
    return true;
  }
  if (plan.kind == kI32 && x >= INT32_MIN && x <= INT32_MAX) {
    value.i32 = static_cast<int32_t>(x);
    return true;
  }
  return false;
}

using PackedFunction = void (*)(void **);

/// call(address, plan, args, ndarray) -> bool
///
/// Calls the packed interface at `address` (void f(void **args): one pointer
/// per argument of the function's C interface) with `args` as `plan`
/// describes them; True once called, False (nothing called) when an argument
/// does not fit.
PyObject *call(PyObject *, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs != 4) {
    PyErr_SetString(PyExc_TypeError,
                    "call(address, plan, args, ndarray) takes 4 arguments");
    return nullptr;
  }
  void *address = PyLong_AsVoidPtr(args[0]);
  if (!address) {
    if (!PyErr_Occurred())
      PyErr_SetString(PyExc_ValueError, "call: null function address");
    return nullptr;
  }
  char *planBytes;
  Py_ssize_t planSize;
  if (PyBytes_AsStringAndSize(args[1], &planBytes, &planSize) != 0)
    return nullptr;
  if (planSize % static_cast<Py_ssize_t>(sizeof(ArgPlan)) != 0) {
    PyErr_SetString(PyExc_ValueError, "call: malformed argument plan");
    return nullptr;
  }
  Py_ssize_t count = planSize / static_cast<Py_ssize_t>(sizeof(ArgPlan));
  PyObject *values = args[2];
  if (!PyTuple_Check(values)) {
    PyErr_SetString(PyExc_TypeError, "call: args must be a tuple");
    return nullptr;
  }
  if (count > kMaxArgs || PyTuple_Size(values) != count)
    Py_RETURN_FALSE;

  HeldBuffers held;
  Descriptor descriptors[kMaxArgs];
  void *descriptorPointers[kMaxArgs];
  Scalar scalars[kMaxArgs];
  void *packed[kMaxArgs];
  for (Py_ssize_t i = 0; i < count; ++i) {
    ArgPlan plan;
    std::memcpy(&plan, planBytes + i * sizeof(ArgPlan), sizeof(ArgPlan));
    PyObject *value = PyTuple_GetItem(values, i);
    if (plan.kind == kMemRef) {
      if (plan.rank < 0 || plan.rank > kMaxRank || plan.itemsize <= 0) {
        PyErr_SetString(PyExc_ValueError, "call: malformed argument plan");
        return nullptr;
      }
      if (!describeArray(value, args[3], plan, held.views[held.count],
                         held.count, descriptors[i]))
        Py_RETURN_FALSE;
      descriptorPointers[i] = &descriptors[i];
      packed[i] = &descriptorPointers[i];
    } else {
      if (!convertScalar(value, plan, scalars[i]))
        Py_RETURN_FALSE;
      packed[i] = &scalars[i];
    }
  }

  auto function = reinterpret_cast<PackedFunction>(address);
  Py_BEGIN_ALLOW_THREADS;
  function(packed);
  Py_END_ALLOW_THREADS;
  Py_RETURN_TRUE;
}

PyMethodDef methods[] = {
    {"call", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(call)),
     METH_FASTCALL,
     "call(address, plan, args, ndarray) -> bool: calls a compiled function's "
     "packed interface with numpy arrays; False (nothing called) when an "
     "argument does not fit its plan."},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef moduleDef = {
    PyModuleDef_HEAD_INIT,
    "_linattn_call",
    "The linattn package's native calls of compiled functions.",
    0,
    methods,
    nullptr,
    nullptr,
    nullptr,
    nullptr};

} // namespace

PyMODINIT_FUNC PyInit__linattn_call(void) {
  PyObject *module = PyModule_Create(&moduleDef);
  if (module && PyModule_AddIntConstant(module, "PLAN_RECORD_SIZE",
                                        sizeof(ArgPlan)) != 0) {
    Py_DECREF(module);
    return nullptr;
  }
  return module;
}
