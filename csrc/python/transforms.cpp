// Bindings of the transforms over flat lists of arrays; trees are handled in Python.
#include <nanobind/nanobind.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>

#include "core/primitives/custom.h"
#include "python/callbacks.h"
#include "python/convert.h"
#include "transforms/autodiff.h"

namespace nuvec::python {
namespace {

CustomRule rule(nb::callable f, const char* what) {
  auto cb = std::make_shared<PyCallback>(f);
  return
      [cb, what](const std::vector<Array>& primals, const std::vector<Array>& seeds, const std::vector<Array>& outs) {
        return array_list(cb->get()(primals, seeds, outs), "custom_function", what);
      };
}

CustomVmapRule vmap_rule(nb::callable f) {
  auto cb = std::make_shared<PyCallback>(f);
  return [cb](const std::vector<Array>& primals, const std::vector<int>& axes) {
    nb::object out = cb->get()(primals, axes);
    std::vector<int> out_axes;
    if (!PyTuple_Check(out.ptr()) || nb::len(out) != 2 || !nb::try_cast(out[1], out_axes))
      throw OpError("custom_function", "the vmap rule must return a tuple (outputs, list of output axes)");
    return std::pair{array_list(out[0], "custom_function", "the vmap rule"), out_axes};
  };
}

}  // namespace

void init_transforms(nb::module_& m) {
  m.def(
      "_vjp_flat",
      [](nb::callable fun, const std::vector<Array>& primals, const std::vector<Array>& cotangents) {
        return vjp(array_fn(fun, "vjp"), primals, cotangents);
      },
      nb::arg("fun"), nb::arg("primals"), nb::arg("cotangents"),
      "(fun(primals), cotangents of the primals): fun maps a list of arrays to a list of arrays.");
  m.def(
      "_jvp_flat",
      [](nb::callable fun, const std::vector<Array>& primals, const std::vector<Array>& tangents) {
        return jvp(array_fn(fun, "jvp"), primals, tangents);
      },
      nb::arg("fun"), nb::arg("primals"), nb::arg("tangents"),
      "(fun(primals), tangents of the outputs): fun maps a list of arrays to a list of arrays.");
  m.def("_untraced_alias", &untraced_alias, nb::arg("x"), "An alias of x that transforms do not trace through.");
  m.def(
      "_custom",
      [](const std::vector<Array>& primals, const std::vector<Array>& outputs, nb::callable vjp, nb::callable jvp,
         nb::callable vmap) {
        return apply_custom(primals, outputs, rule(vjp, "the vjp"), rule(jvp, "the jvp"), vmap_rule(vmap));
      },
      nb::arg("primals"), nb::arg("outputs"), nb::arg("vjp"), nb::arg("jvp"), nb::arg("vmap"),
      "Outputs that differentiate through vjp(primals, cotangents, outputs) and jvp(primals, tangents, outputs), "
      "and vectorise through vmap(primals, axes) -> (outputs, axes).");
}

}  // namespace nuvec::python
