// x[index], x[index] = v and x.at[index].<op>(v) with NumPy's rules: ints, slices, ..., None,
// integer arrays (advanced indexing) and boolean masks (evaluated first: data-dependent).
#pragma once
#include <nanobind/nanobind.h>

#include "core/array.h"
#include "core/primitives/indexing.h"

namespace nuvec::python {
namespace nb = nanobind;
Array get_item(const Array& x, nb::handle index);
// x with the indexed elements combined with `value` (set, add, ...): a new array.
Array update_item(const Array& x, nb::handle index, nb::handle value, ScatterOp op);
void init_indexing(nb::module_& m);  // the `.at` property
}  // namespace nuvec::python
