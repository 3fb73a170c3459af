// Python exceptions for nuvec's errors, and the call sites nodes remember.
#pragma once
#include <nanobind/nanobind.h>

namespace nuvec::python {

namespace nb = nanobind;
void init_errors(nb::module_& m);
// Sets the Python error for a C++ exception as nuvec's bindings raise it (OpError, EvalIndexError, ...);
// for one without a nuvec type, a `fallback` exception with its message. For C slots such as bf_getbuffer.
void set_python_error(const std::exception_ptr& p, PyObject* fallback);

}  // namespace nuvec::python
