// Python callables seen as the core's functions of arrays (transforms and custom rules).
#pragma once
#include <nanobind/nanobind.h>

#include <memory>
#include <vector>

#include "core/array.h"
#include "transforms/autodiff.h"

namespace nuvec::python {

namespace nb = nanobind;

// The arrays of a Python sequence; anything else in it raises an OpError naming `op`.
std::vector<Array> array_list(nb::handle seq, const char* op, const char* what);

// A Python function of a list of arrays returning a list of arrays, as an ArrayFn.
ArrayFn array_fn(nb::callable fun, const char* op);

// A Python callable kept by a primitive: nodes can die on threads without the GIL.
struct PyCallback {
  explicit PyCallback(nb::callable f) : fn(f.release().ptr()) {}
  ~PyCallback();
  PyCallback(const PyCallback&) = delete;
  PyCallback& operator=(const PyCallback&) = delete;
  nb::callable get() const { return nb::borrow<nb::callable>(fn); }
  PyObject* fn;
};

}  // namespace nuvec::python
