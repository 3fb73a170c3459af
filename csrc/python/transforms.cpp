// Bindings of the transforms over flat lists of arrays; trees are handled in Python.
#include <nanobind/nanobind.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>

#include "python/convert.h"
#include "core/primitives/custom.h"
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

std::vector<Array> array_list(nb::handle out, const char* what) {
  std::vector<Array> result;
  for (nb::handle h : nb::borrow<nb::sequence>(out)) {
    if (!nb::isinstance<Array>(h)) throw OpError("custom_function", std::string(what) + " must return arrays");
    result.push_back(*nb::inst_ptr<Array>(h));
  }
  return result;
}

// A Python callable kept by a primitive: nodes can die on threads without the GIL.
struct PyCallback {
  explicit PyCallback(nb::callable f) : fn(f.release().ptr()) {}
  ~PyCallback() {
    if (!Py_IsInitialized()) return;
    PyGILState_STATE st = PyGILState_Ensure();
    Py_DECREF(fn);
    PyGILState_Release(st);
  }
  PyObject* fn;
};

CustomRule rule(nb::callable f, const char* what) {
  auto cb = std::make_shared<PyCallback>(f);
  return [cb, what](const std::vector<Array>& primals, const std::vector<Array>& seeds, const std::vector<Array>& outs) {
    nb::object out = nb::borrow<nb::callable>(cb->fn)(primals, seeds, outs);
    return array_list(out, what);
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
  m.def("_untraced_alias", &untraced_alias, nb::arg("x"), "An alias of x that transforms do not trace through.");
  m.def(
      "_custom",
      [](const std::vector<Array>& primals, const std::vector<Array>& outputs, nb::callable vjp, nb::callable jvp) {
        return apply_custom(primals, outputs, rule(vjp, "the vjp"), rule(jvp, "the jvp"));
      },
      nb::arg("primals"), nb::arg("outputs"), nb::arg("vjp"), nb::arg("jvp"),
      "Outputs that differentiate through vjp(primals, cotangents, outputs) and jvp(primals, tangents, outputs).");
}

}  // namespace nuvec::python
