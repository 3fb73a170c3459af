// Binding of vmap over flat lists of arrays; trees and in_axes / out_axes are handled in Python.
#include <nanobind/nanobind.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/vector.h>

#include "python/callbacks.h"
#include "transforms/vmap.h"

namespace nuvec::python {

void init_vmap(nb::module_& m) {
  m.def(
      "_vmap_flat",
      [](nb::callable fun, const std::vector<Array>& inputs, const std::vector<int>& axes) {
        return vmap(array_fn(fun, "vmap"), inputs, axes);
      },
      nb::arg("fun"), nb::arg("inputs"), nb::arg("axes"),
      "(outputs, their batch axes) of fun mapped over axes[i] of inputs[i] (-1: not mapped; -1 in the result: "
      "not batched).");
}

}  // namespace nuvec::python
