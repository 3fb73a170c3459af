// include/nuvec/python.h's table: C handles over the arrays Python objects hold, both ways, with
// no copy (a handle and a nuvec.array share one node).
#include <nanobind/nanobind.h>

#include <nuvec/python.h>
#include "c_api/capi.h"

namespace nb = nanobind;

namespace nuvec::python {
namespace {

int from_pyobject(nuvec_array* res, PyObject* obj) {
  try {
    nb::handle h(obj);
    if (!nb::isinstance<Array>(h))
      throw std::invalid_argument(std::string("expected a nuvec.array, got ") + Py_TYPE(obj)->tp_name);
    return capi::set(res, nb::cast<const Array&>(h));
  } catch (...) {
    capi::fail("nuvec_array_from_pyobject");
    PyErr_SetString(PyExc_TypeError, "nuvec_array_from_pyobject: not a nuvec.array (see the error handler)");
    return 1;
  }
}

PyObject* to_pyobject(const nuvec_array a) {
  try {
    return nb::cast(capi::unwrap_array(a, "nuvec_array_to_pyobject")).release().ptr();
  } catch (...) {
    capi::fail("nuvec_array_to_pyobject");
    PyErr_SetString(PyExc_ValueError, "nuvec_array_to_pyobject: an empty handle (see the error handler)");
    return nullptr;
  }
}

const nuvec_python_api table = {NUVEC_PYTHON_API_VERSION, from_pyobject, to_pyobject};

}  // namespace

void init_capi_bridge(nb::module_& m) {
  m.attr("_C_API") = nb::steal(PyCapsule_New(const_cast<nuvec_python_api*>(&table), NUVEC_PYTHON_CAPSULE, nullptr));
}

}  // namespace nuvec::python
