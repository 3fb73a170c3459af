// Bindings of the transforms over flat lists of arrays; trees are handled in Python.
#include <nanobind/nanobind.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/vector.h>

#include "python/convert.h"
#include "transforms/autodiff.h"

namespace nuvec::python {
namespace {

// A Python function of a list of arrays returning a list of arrays, as an ArrayFn.
ArrayFn wrap(nb::callable fun) {
  return [fun](const std::vector<Array>& xs) {
    nb::list args;
    for (const Array& x : xs) args.append(nb::cast(x));
    nb::object out = fun(args);
    std::vector<Array> result;
    for (nb::handle h : nb::borrow<nb::sequence>(out)) {
      if (!nb::isinstance<Array>(h)) throw OpError("vjp", "the function must return arrays");
      result.push_back(*nb::inst_ptr<Array>(h));
    }
    return result;
  };
}

}  // namespace

void init_transforms(nb::module_& m) {
  m.def(
      "_vjp_flat",
      [](nb::callable fun, const std::vector<Array>& primals, const std::vector<Array>& cotangents) {
        return vjp(wrap(fun), primals, cotangents);
      },
      nb::arg("fun"), nb::arg("primals"), nb::arg("cotangents"),
      "(fun(primals), cotangents of the primals): fun maps a list of arrays to a list of arrays.");
  m.def(
      "_jvp_flat",
      [](nb::callable fun, const std::vector<Array>& primals, const std::vector<Array>& tangents) {
        return jvp(wrap(fun), primals, tangents);
      },
      nb::arg("fun"), nb::arg("primals"), nb::arg("tangents"),
      "(fun(primals), tangents of the outputs): fun maps a list of arrays to a list of arrays.");
}

}  // namespace nuvec::python
