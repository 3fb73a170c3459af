// x[...] with basic indices (ints, slices, ..., None): views of the array.
#pragma once
#include <nanobind/nanobind.h>

#include "core/array.h"

namespace nuvec::python {
namespace nb = nanobind;
Array get_item(const Array& x, nb::handle index);
}  // namespace nuvec::python
