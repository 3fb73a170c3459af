// Python exceptions for nuvec's errors, and the call sites nodes remember.
#pragma once
#include <nanobind/nanobind.h>

namespace nuvec::python {

namespace nb = nanobind;
void init_errors(nb::module_& m);

}  // namespace nuvec::python
