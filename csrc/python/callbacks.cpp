#include "python/callbacks.h"

#include <string>

#include "core/errors.h"

namespace nuvec::python {

std::vector<Array> array_list(nb::handle seq, const char* op, const char* what) {
  std::vector<Array> result;
  for (nb::handle h : nb::borrow<nb::sequence>(seq)) {
    if (!nb::isinstance<Array>(h)) throw OpError(op, std::string(what) + " must return arrays");
    result.push_back(*nb::inst_ptr<Array>(h));
  }
  return result;
}

ArrayFn array_fn(nb::callable fun, const char* op) {
  return [fun, op](const std::vector<Array>& xs) {
    nb::list args;
    for (const Array& x : xs) args.append(nb::cast(x));
    return array_list(fun(args), op, "the function");
  };
}

PyCallback::~PyCallback() {
  if (!Py_IsInitialized()) return;
  PyGILState_STATE st = PyGILState_Ensure();
  Py_DECREF(fn);
  PyGILState_Release(st);
}

}  // namespace nuvec::python
